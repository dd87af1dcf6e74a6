// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where libascend_hal.so is: the driver's user-space library, through which
 * CANN's runtime submits to mapped queues the kernel never sees (910B's
 * uio_t, 950's uio_d; ascend-abi.md section 5). The BPF program's uprobes
 * on its entry points (bpf/hal.bpf.h) see those submissions; a process
 * whose library carries none has its steps flagged (STEPTIME_F_UIO).
 *
 * Candidates, each file once (by device and inode): the paths given; else
 * those mapped by running processes, in $LD_LIBRARY_PATH, under
 * $ASCEND_HOME_PATH's Ascend root and the driver's install directory.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "hal.h"

#define HAL_NAME	"libascend_hal.so"

/* Ascend roots' driver directories, as the driver's installer lays them. */
static const char *const hal_dirs[] = {
	"/usr/local/Ascend/driver/lib64/driver",
	"/usr/local/Ascend/driver/lib64",
};

static bool hal_seen(const struct hal_libs *h, const struct stat *st)
{
	int i;

	for (i = 0; i < h->n; i++)
		if (h->st[i].st_dev == st->st_dev &&
		    h->st[i].st_ino == st->st_ino)
			return true;
	return false;
}

/* Add @path if it is a regular file not yet listed. 0, or a negative errno. */
static int hal_add(struct hal_libs *h, const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (hal_seen(h, &st))
		return 0;
	if (h->n >= STEPTIME_HAL_LIBS)
		return -ENOSPC;
	if (!realpath(path, h->path[h->n]))
		return -errno;
	h->st[h->n++] = st;
	return 0;
}

/* The library in @dir, if there. */
static void hal_add_dir(struct hal_libs *h, const char *dir)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/" HAL_NAME, dir) <
	    (int)sizeof(path))
		hal_add(h, path);
}

/* Is @path's file name libascend_hal.so (or a versioned libascend_hal.so.N)? */
static bool hal_named(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, HAL_NAME, strlen(HAL_NAME)) &&
	       (!base[strlen(HAL_NAME)] || base[strlen(HAL_NAME)] == '.');
}

/* The libascend_hal.so files process @pid maps. */
static void hal_add_maps(struct hal_libs *h, const char *pid)
{
	char path[300], line[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/'), *nl;

		if (!p)
			continue;
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		/* " (deleted)": replaced since; the new file is found below. */
		if (hal_named(p))
			hal_add(h, p);
	}
	fclose(f);
}

static void hal_add_procs(struct hal_libs *h)
{
	struct dirent *d;
	DIR *dir = opendir("/proc");

	if (!dir)
		return;
	while ((d = readdir(dir)))
		if (isdigit((unsigned char)d->d_name[0]))
			hal_add_maps(h, d->d_name);
	closedir(dir);
}

int path_list_next(const char **p, char *buf, size_t len)
{
	const char *s = *p, *e;

	while (s && *s == ':')
		s++;
	if (!s || !*s)
		return 0;
	e = strchrnul(s, ':');
	*p = e;
	if (e - s >= (long)len)
		return -ENAMETOOLONG;
	snprintf(buf, len, "%.*s", (int)(e - s), s);
	return 1;
}

/*
 * The directories of $LD_LIBRARY_PATH, where CANN's set_env.sh puts the
 * driver's: searched, never dlopen()ed (the library's constructors would
 * run in the loader).
 */
static void hal_add_ld_path(struct hal_libs *h)
{
	const char *p = getenv("LD_LIBRARY_PATH");
	char dir[PATH_MAX];
	int r;

	while ((r = path_list_next(&p, dir, sizeof(dir))))
		if (r > 0)
			hal_add_dir(h, dir);
}

/* $ASCEND_HOME_PATH is the toolkit's (<root>/ascend-toolkit/latest). */
static void hal_add_home(struct hal_libs *h)
{
	const char *home = getenv("ASCEND_HOME_PATH");
	char path[PATH_MAX], *p;

	if (!home || !*home || strlen(home) >= sizeof(path))
		return;
	strcpy(path, home);
	p = strstr(path, "/ascend-toolkit");
	if (p)
		*p = '\0';
	strncat(path, "/driver/lib64/driver",
		sizeof(path) - strlen(path) - 1);
	hal_add_dir(h, path);
}

int hal_libs_find(struct hal_libs *h, const char *given)
{
	const char *p = given;
	char path[PATH_MAX];
	unsigned int i;
	int err;

	memset(h, 0, sizeof(*h));
	if (given) {
		while ((err = path_list_next(&p, path, sizeof(path)))) {
			if (err < 0)
				return err;
			err = hal_add(h, path);
			if (err) {
				snprintf(h->bad, sizeof(h->bad), "%s", path);
				return err;
			}
		}
		return 0;
	}
	hal_add_procs(h);
	hal_add_ld_path(h);
	hal_add_home(h);
	for (i = 0; i < sizeof(hal_dirs) / sizeof(hal_dirs[0]); i++)
		hal_add_dir(h, hal_dirs[i]);
	return 0;
}
