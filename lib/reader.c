// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The reader: a sorted, filtered snapshot of the pinned "steps" map. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <steptime/steptime.h>
#include "st_internal.h"

struct steptime_reader {
	struct steptime_step_stats *steps;
	size_t n, first, next;	/* steps [first, n) are returned */
};

static bool opts_valid(const void *opts, size_t known)
{
	size_t sz = *(const size_t *)opts;
	const char *p = (const char *)opts + known;

	if (sz < sizeof(size_t))
		return false;
	for (; p < (const char *)opts + sz; p++)
		if (*p)
			return false;
	return true;
}

static bool step_matches(const struct steptime_step_stats *s, int pid,
			 __u32 pidns_ino)
{
	if (pidns_ino && s->pidns_ino != pidns_ino)
		return false;
	if (!pid)
		return true;
	if (pidns_ino)
		return s->ns_tgid == (__u32)pid;
	return s->tgid == (__u32)pid || s->ns_tgid == (__u32)pid;
}

static __u64 step_start(const struct steptime_step_stats *s)
{
	if (s->flags & STEPTIME_F_HOST_START)
		return s->host_start_ns;
	if (s->tasks && s->first_submit_ns)
		return s->first_submit_ns;
	if (s->flags & STEPTIME_F_HOST_END)
		return s->host_end_ns;
	return 0;
}

static int step_cmp(const void *a, const void *b)
{
	const struct steptime_step_stats *x = a, *y = b;
	__u64 sx = step_start(x), sy = step_start(y);

	if (sx != sy)
		return sx < sy ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->index_id != y->index_id)
		return x->index_id < y->index_id ? -1 : 1;
	return 0;
}

static int steps_open(const char *pin_dir)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = BPF_F_RDONLY);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[4096];
	int fd, err;

	snprintf(path, sizeof(path), "%s/steps", pin_dir ? pin_dir : st_pin_dir());
	fd = bpf_obj_get_opts(path, &o);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOTDIR)
			err = -ENOENT;
		return err == -EPERM ? -EACCES : err;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    info.key_size != sizeof(struct steptime_step_key) ||
	    info.value_size != sizeof(struct steptime_step_stats)) {
		close(fd);
		return -EPROTO;
	}
	return fd;
}

static int steps_load(struct steptime_reader *r, int fd, int pid,
		      __u32 pidns_ino)
{
	struct steptime_step_key key, next;
	struct steptime_step_stats *grown;
	size_t cap = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (r->n == cap) {
			cap = cap ? cap * 2 : 256;
			grown = realloc(r->steps, cap * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			r->steps = grown;
		}
		/* An LRU entry can go between next_key and lookup. */
		if (bpf_map_lookup_elem(fd, &key, &r->steps[r->n]))
			continue;
		if (step_matches(&r->steps[r->n], pid, pidns_ino))
			r->n++;
	}
	return errno == ENOENT ? 0 : -errno;
}

struct steptime_reader *
steptime_reader__open(const struct steptime_reader_opts *opts)
{
	struct steptime_reader *r;
	size_t last = 0;
	int fd, err, pid = 0;
	const char *dir = NULL;
	__u32 ino = 0;

	if (opts) {
		if (!opts_valid(opts, offsetofend(struct steptime_reader_opts,
						  pidns_ino))) {
			errno = EINVAL;
			return NULL;
		}
		dir = opts->pin_dir;
		pid = opts->pid;
		last = opts->last;
		ino = opts->pidns_ino;
	}
	if (pid < 0) {
		errno = EINVAL;
		return NULL;
	}
	fd = steps_open(dir);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	err = steps_load(r, fd, pid, ino);
	close(fd);
	if (err) {
		steptime_reader__free(r);
		errno = -err;
		return NULL;
	}
	qsort(r->steps, r->n, sizeof(*r->steps), step_cmp);
	if (last && last < r->n)
		r->first = r->next = r->n - last;
	return r;
}

int steptime_reader__next(struct steptime_reader *r,
			  struct steptime_step_stats *out)
{
	if (!r || !out)
		return -EINVAL;
	if (r->next >= r->n)
		return -ENOENT;
	*out = r->steps[r->next++];
	return 0;
}

size_t steptime_reader__count(const struct steptime_reader *r)
{
	return r ? r->n - r->first : 0;
}

void steptime_reader__free(struct steptime_reader *r)
{
	if (!r)
		return;
	free(r->steps);
	free(r);
}
