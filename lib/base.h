/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libsteptime's bottom layer (lib/base.c): warnings, the pid namespace,
 * the library's counters; with steptime__pin_dir() (steptime.h) and the
 * clock (st_mono_ns(), steptime/util.h). It calls nothing of the library:
 * every other file may call it, and it none of them.
 */
#ifndef _STEPTIME_BASE_H
#define _STEPTIME_BASE_H

#include <linux/types.h>
#include <steptime/steptime.h>
#include <steptime/util.h>

#define ST_HIDDEN __attribute__((visibility("hidden")))

/* A diagnostic on stderr, unless STEPTIME_QUIET=1. */
ST_HIDDEN void st_warn(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Inode of this process's PID namespace (0 when unknown). */
ST_HIDDEN __u32 st_pidns_ino(void);

/* This process's library counters (steptime__lib_counters()). */
ST_HIDDEN extern struct steptime_lib_counters st_lib_cnt;
#define ST_COUNT(name) \
	__atomic_fetch_add(&st_lib_cnt.name, 1, __ATOMIC_RELAXED)

#endif /* _STEPTIME_BASE_H */
