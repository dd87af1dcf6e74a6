/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npusim's engine threads, one per device and TS ("npusim/DEV.TS",
 * kmod/npusim_engine.c), found by their names in /proc: for the tests and
 * benches that set their CPUs or their scheduling policy.
 */
#ifndef ST_ENGINES_H
#define ST_ENGINES_H

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/*
 * @fn(pid, @arg) for each engine thread; @fn keeps its own results in @arg.
 * Return: the engine threads found, or -errno when /proc cannot be read.
 */
static inline int st_engines_each(void (*fn)(pid_t pid, void *arg), void *arg)
{
	char path[300], comm[32];
	struct dirent *e;
	bool engine;
	int n = 0;
	FILE *f;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		engine = fgets(comm, sizeof(comm), f) &&
			 !strncmp(comm, "npusim/", 7);
		fclose(f);
		if (!engine)
			continue;
		fn(atoi(e->d_name), arg);
		n++;
	}
	closedir(d);
	return n;
}

#endif /* ST_ENGINES_H */
