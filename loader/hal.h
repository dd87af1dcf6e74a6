/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The loader's search for libascend_hal.so (loader/hal.c). */
#ifndef _LOADER_HAL_H
#define _LOADER_HAL_H

#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <steptime/abi.h>

struct hal_libs {
	int n;
	char path[STEPTIME_HAL_LIBS][PATH_MAX];
	struct stat st[STEPTIME_HAL_LIBS];
	char bad[PATH_MAX];	/* the given path that failed */
};

/*
 * path_list_next() - the next element of a ':'-separated list
 * @p: the list's rest; moved past the element (NULL: an empty list)
 * @buf: the element, NUL-terminated
 * @len: @buf's size
 *
 * Empty elements are skipped.
 * Return: 1, 0 at the list's end, -ENAMETOOLONG for an element that does
 * not fit in @buf (*@p is past it: the caller may skip it or give up).
 */
int path_list_next(const char **p, char *buf, size_t len);

/*
 * hal_libs_find() - the libascend_hal.so files to probe
 * @h: filled with up to STEPTIME_HAL_LIBS files, each once
 * @given: ':'-separated paths (`load --hal`), or NULL for those running
 *	processes map, in $LD_LIBRARY_PATH, $ASCEND_HOME_PATH's and the
 *	driver's install directory's
 *
 * Return: 0, also when none is found; for a given path that is not a
 * regular file, a negative errno with the path in @h->bad.
 */
int hal_libs_find(struct hal_libs *h, const char *given);

#endif /* _LOADER_HAL_H */
