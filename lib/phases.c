// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reading a step's phases back from its process's phase file (format in
 * lib/tx.c). The last file read is kept, parsed and sorted by step, so a
 * reader walking every step of a process reads its file once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <steptime/steptime.h>
#include "tx.h"

struct phase_rec {
	__u64 index_id;
	__u32 order;		/* line number: first-seen order */
	struct steptime_phase ph;
};

static struct {
	pthread_mutex_t lock;
	char path[4096];
	struct stat st;
	struct phase_rec *recs;
	size_t n;
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int rec_cmp(const void *a, const void *b)
{
	const struct phase_rec *x = a, *y = b;

	if (x->index_id != y->index_id)
		return x->index_id < y->index_id ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static void name_unescape(char *out, size_t len, const char *in)
{
	size_t o = 0;

	for (; *in && o + 1 < len; in++) {
		if (in[0] == '%' && hexval(in[1]) >= 0 && hexval(in[2]) >= 0) {
			out[o++] = (char)(hexval(in[1]) << 4 | hexval(in[2]));
			in += 2;
		} else {
			out[o++] = *in;
		}
	}
	out[o] = '\0';
}

/* Under cache.lock: load @path unless the cached copy is current. */
static int cache_load(const char *path)
{
	struct phase_rec *recs = NULL, *p;
	size_t n = 0, cap = 0;
	char line[512], name[3 * STEPTIME_PHASE_NAME + 1];
	struct stat st;
	FILE *f;

	if (stat(path, &st))
		return -errno;
	if (!strcmp(cache.path, path) && st.st_size == cache.st.st_size &&
	    st.st_mtim.tv_sec == cache.st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == cache.st.st_mtim.tv_nsec)
		return 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long id, cnt, host, dev, devn;

		if (sscanf(line, "%llu %llu %llu %llu %llu %192s", &id, &cnt,
			   &host, &dev, &devn, name) != 6)
			continue;	/* a torn last line: skipped */
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			p = realloc(recs, cap * sizeof(*recs));
			if (!p) {
				free(recs);
				fclose(f);
				return -ENOMEM;
			}
			recs = p;
		}
		p = &recs[n];
		memset(p, 0, sizeof(*p));
		p->index_id = id;
		p->order = (__u32)n++;
		p->ph.count = cnt;
		p->ph.host_ns = host;
		p->ph.device_ns = dev;
		p->ph.device_count = devn;
		name_unescape(p->ph.name, sizeof(p->ph.name), name);
	}
	fclose(f);
	if (n)
		qsort(recs, n, sizeof(*recs), rec_cmp);
	free(cache.recs);
	cache.recs = recs;
	cache.n = n;
	cache.st = st;
	snprintf(cache.path, sizeof(cache.path), "%s", path);
	return 0;
}

int steptime_phases__get(const struct steptime_step_stats *s,
			 struct steptime_phase *out, size_t n)
{
	char path[4096];
	size_t lo = 0, hi, i;
	int found = 0;

	if (!s || (!out && n))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%u.%u.phases", st_phase_dir(),
		 s->pidns_ino, s->ns_tgid);
	pthread_mutex_lock(&cache.lock);
	if (cache_load(path))
		goto out;
	hi = cache.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cache.recs[mid].index_id < s->index_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < cache.n && cache.recs[i].index_id == s->index_id; i++) {
		if ((size_t)found < n)
			out[found] = cache.recs[i].ph;
		found++;
	}
out:
	pthread_mutex_unlock(&cache.lock);
	return found;
}
