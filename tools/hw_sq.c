// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The driver's per-SQ /proc files (hw_sq.h). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_sq.h"

/*
 * One file: a block per SQ, "id N ref R status S pid P" then indented
 * lines, of which "mode M type ..." and, for a mapped SQ, "uio send ok N
 * send full N send invalid in kernel N". Lines we do not know are skipped:
 * the driver also prints its id allocator's and channel's state there.
 */
static int hw_sq_file(FILE *f, __u32 dev, __u32 ts, struct hw_sq *out,
		      size_t max, size_t n)
{
	unsigned long long ok, full, fail;
	struct hw_sq *sq = NULL, dummy;
	char line[512], mode[8];
	unsigned int id;
	int ref, st, pid;

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "id %u ref %d status %d pid %d", &id, &ref,
			   &st, &pid) == 4) {
			sq = n < max ? &out[n] : &dummy;
			n++;
			memset(sq, 0, sizeof(*sq));
			sq->dev = dev;
			sq->ts = ts;
			sq->id = id;
			sq->pid = pid;
		} else if (sq && sscanf(line, " mode %7s type", mode) == 1) {
			snprintf(sq->mode, sizeof(sq->mode), "%s", mode);
		} else if (sq && sscanf(line, " uio send ok %llu send full %llu send invalid in kernel %llu",
					&ok, &full, &fail) == 3) {
			sq->counted = true;
			sq->send_ok = ok;
			sq->send_full = full;
			sq->send_fail = fail;
		}
	}
	return ferror(f) ? -EIO : (int)n;
}

static int hw_sq_cmp(const void *a, const void *b)
{
	const struct hw_sq *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int hw_sq_read(const char *root, struct hw_sq *out, size_t max)
{
	struct dirent *e;
	char path[4096];
	unsigned int dev, ts;
	int n = 0, err = 0;
	DIR *dir;
	FILE *f;
	char c;

	dir = opendir(root);
	if (!dir)
		return -errno;
	while (n >= 0 && (e = readdir(dir))) {
		if (sscanf(e->d_name, "dev%u-ts%u%c", &dev, &ts, &c) != 2)
			continue;
		snprintf(path, sizeof(path), "%s/%s/hw_sq", root, e->d_name);
		f = fopen(path, "re");
		if (!f) {
			if (errno != ENOENT && !err)
				err = -errno;
			continue;
		}
		n = hw_sq_file(f, dev, ts, out, max, n);
		fclose(f);
	}
	closedir(dir);
	if (n < 0)
		return n;
	if (!n && err)
		return err;
	qsort(out, (size_t)n < max ? (size_t)n : max, sizeof(*out), hw_sq_cmp);
	return n;
}
