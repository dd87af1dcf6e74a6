// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The reader: a sorted, filtered snapshot of the pinned "steps" map, read
 * with BPF_MAP_LOOKUP_BATCH where the kernel has it (5.6), else one
 * lookup per key.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <steptime/steptime.h>
#include "st_internal.h"
#include "st_stat.h"
#include "phase_write.h"

/* A step's place in the order, sorted instead of the 288-byte records. */
struct step_pos {
	__u64 start, index_id;
	__u32 tgid, at;		/* @at: index in steptime_reader.steps */
};

struct steptime_reader {
	struct steptime_step_stats *steps;	/* in @snap */
	struct step_pos *order, *spare;		/* in @snap, after @steps */
	size_t n, first, next;	/* order [first, n) is returned */
	size_t cap;		/* records room in @steps */
	void *snap;		/* the mapping behind @steps */
	size_t snap_len;
};

#define HUGE_PAGE	(2ul << 20)

/* Below this, a snapshot gets ordinary pages. */
#define HUGE_SNAPSHOT	(16ul << 20)

/*
 * Anonymous memory for a snapshot. A large one (a map of 100,000 records
 * is 29 MB: 7,000 faults of 4 KiB pages, a third of the batch lookup's
 * time here, then a TLB miss for each record read back in time order) is
 * 2 MiB-aligned and advised for huge pages. A small one is not: with THP
 * defrag at "madvise" (Debian's default) every advised fault may compact
 * memory first, and readers that poll (`steptime export`, `top`) open a
 * snapshot of steptime's own map (at most 5.5 MB) several times a second.
 * Return: the start (*@map, *@map_len: what to unmap), or NULL.
 */
static void *snap_alloc(size_t size, void **map, size_t *map_len)
{
	bool huge = size >= HUGE_SNAPSHOT;
	size_t len = size + (huge ? HUGE_PAGE : 0);
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *start = m;

	if (m == MAP_FAILED)
		return NULL;
	if (huge) {
		start = (char *)(((unsigned long)m + HUGE_PAGE - 1) &
				 ~(HUGE_PAGE - 1));
		madvise(start, size, MADV_HUGEPAGE);
	}
	*map = m;
	*map_len = len;
	return start;
}

/*
 * The last ordinary snapshot's mapping, kept for the next one: readers
 * that poll (`steptime export` each second per node, `top`) would else
 * fault in every page of a new mapping at each poll, and unmap it after
 * (in a TCG guest, and in a PVM guest here, the faults and the kernel's
 * copy into fresh pages were most of a poll's time). One mapping, its
 * pages given back to the kernel lazily (MADV_FREE: reclaimed under
 * memory pressure, else reused without a fault).
 */
static struct {
	pthread_mutex_t lock;
	void *map;
	size_t len, cap;
} spare = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The spare mapping if it holds @want records; NULL otherwise. */
static void *spare_take(size_t want, void **map, size_t *map_len, size_t *cap)
{
	void *got = NULL;

	pthread_mutex_lock(&spare.lock);
	if (spare.map && spare.cap >= want) {
		got = *map = spare.map;
		*map_len = spare.len;
		*cap = spare.cap;
		spare.map = NULL;
	}
	pthread_mutex_unlock(&spare.lock);
	return got;
}

/* Keep @map (an ordinary snapshot of @cap records) for the next reader. */
static void spare_put(void *map, size_t len, size_t cap)
{
	pthread_mutex_lock(&spare.lock);
	if (!spare.map || spare.cap < cap) {
		if (spare.map)
			munmap(spare.map, spare.len);
		madvise(map, len, MADV_FREE);
		spare.map = map;
		spare.len = len;
		spare.cap = cap;
		map = NULL;
	}
	pthread_mutex_unlock(&spare.lock);
	if (map)
		munmap(map, len);
}

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

/* Byte @k of a step's sort key (start, tgid, index_id), least significant first. */
static unsigned int pos_byte(const struct step_pos *p, unsigned int k)
{
	if (k < 8)
		return (unsigned int)(p->index_id >> (8 * k)) & 0xff;
	if (k < 12)
		return (p->tgid >> (8 * (k - 8))) & 0xff;
	return (unsigned int)(p->start >> (8 * (k - 12))) & 0xff;
}

#define KEY_BYTES	20

/*
 * Stable LSD radix sort of the order by (start, tgid, index_id): a pass
 * only for the key bytes that differ between steps (about 8 of 20 in
 * practice, found first by OR-ing every key's difference to the first),
 * a few ms for 100,000 steps where qsort() took tens.
 */
static int order_sort(struct steptime_reader *r)
{
	size_t (*cnt)[256] = calloc(KEY_BYTES, sizeof(*cnt));
	struct step_pos *src = r->order, *dst = r->spare, *t, diff = {};
	unsigned int k, b, j, nk = 0, keys[KEY_BYTES];
	size_t i, sum, c;

	if (!cnt)
		return -ENOMEM;
	for (i = 1; i < r->n; i++) {
		diff.start |= src[i].start ^ src[0].start;
		diff.index_id |= src[i].index_id ^ src[0].index_id;
		diff.tgid |= src[i].tgid ^ src[0].tgid;
	}
	for (k = 0; k < KEY_BYTES; k++)
		if (pos_byte(&diff, k))
			keys[nk++] = k;
	for (i = 0; i < r->n; i++)
		for (j = 0; j < nk; j++)
			cnt[j][pos_byte(&src[i], keys[j])]++;
	for (j = 0; j < nk; j++) {
		for (b = 0, sum = 0; b < 256; b++) {
			c = cnt[j][b];
			cnt[j][b] = sum;
			sum += c;
		}
		k = keys[j];
		for (i = 0; i < r->n; i++)
			dst[cnt[j][pos_byte(&src[i], k)]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	r->order = src;
	r->spare = dst;
	free(cnt);
	return 0;
}

static int steps_open(const char *pin_dir)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = BPF_F_RDONLY);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[4096];
	int fd, err;

	snprintf(path, sizeof(path), "%s/steps", pin_dir ? pin_dir : steptime__pin_dir(NULL));
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

/*
 * Room for @more records after the first r->n, and for their places in
 * the order twice (the radix sort's two buffers): in one mapping, which
 * leaves nothing behind in the heap of a process that polls (a malloc()
 * of that size would raise glibc's mmap threshold and stay in the heap).
 */
static int steps_reserve(struct steptime_reader *r, size_t more)
{
	struct steptime_step_stats *grown;
	size_t want = r->cap ? r->cap : 256, len;
	struct step_pos *order;
	void *map;

	while (want < r->n + more)
		want *= 2;
	if (want <= r->cap)
		return 0;
	grown = r->n ? NULL : spare_take(want, &map, &len, &want);
	if (!grown)
		grown = snap_alloc(want * (sizeof(*grown) + 2 * sizeof(*order)),
				   &map, &len);
	if (!grown)
		return -ENOMEM;
	order = (struct step_pos *)(grown + want);
	if (r->n) {
		memcpy(grown, r->steps, r->n * sizeof(*grown));
		memcpy(order, r->order, r->n * sizeof(*order));
	}
	r->order = order;
	r->spare = order + want;
	if (r->snap)
		munmap(r->snap, r->snap_len);
	r->steps = grown;
	r->snap = map;
	r->snap_len = len;
	r->cap = want;
	return 0;
}

/*
 * Keep the records [r->n, r->n + count) that match, packed after r->n,
 * and their places in the order, read while the batch is in the cache.
 */
static void steps_keep(struct steptime_reader *r, size_t count, int pid,
		       __u32 pidns_ino)
{
	size_t i, end = r->n + count;
	struct step_pos *p;

	for (i = r->n; i < end; i++) {
		if (!step_matches(&r->steps[i], pid, pidns_ino))
			continue;
		if (i != r->n)
			r->steps[r->n] = r->steps[i];
		p = &r->order[r->n];
		p->start = step_start(&r->steps[r->n]);
		p->index_id = r->steps[r->n].index_id;
		p->tgid = r->steps[r->n].tgid;
		p->at = (__u32)r->n;
		r->n++;
	}
}

/* One lookup per entry: kernels before 5.6, maps without batch ops. */
static int steps_load_walk(struct steptime_reader *r, int fd, int pid,
			   __u32 pidns_ino)
{
	struct steptime_step_key key, next;
	void *prev = NULL;
	int err;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		err = steps_reserve(r, 1);
		if (err)
			return err;
		/* An entry can go between next_key and lookup. */
		if (bpf_map_lookup_elem(fd, &key, &r->steps[r->n]))
			continue;
		steps_keep(r, 1, pid, pidns_ino);
	}
	return errno == ENOENT ? 0 : -errno;
}

#define STEPS_BATCH	4096

/*
 * BPF_MAP_LOOKUP_BATCH (5.6+): the values land in the snapshot directly,
 * a few thousand per syscall. Return: 0; -EOPNOTSUPP when this kernel or
 * map has no batch lookup (before any record was read); another -errno.
 */
static int steps_load_batch(struct steptime_reader *r, int fd, int pid,
			    __u32 pidns_ino)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	struct steptime_step_key *keys;
	/* The hash map's cursor is a bucket number; keys are larger. */
	struct steptime_step_key in, out;
	__u32 n, chunk = STEPS_BATCH;
	bool first = true;
	int err;

	keys = malloc(chunk * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (;;) {
		err = steps_reserve(r, chunk);
		if (err)
			break;
		n = chunk;
		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys,
					   r->steps + r->n, &n, &o) ? -errno : 0;
		if (err == -ENOSPC && chunk < (1u << 20)) {
			/* One bucket holds more than @chunk entries. */
			struct steptime_step_key *grown;

			chunk *= 2;
			grown = realloc(keys, chunk * sizeof(*keys));
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			keys = grown;
			continue;
		}
		if (err && err != -ENOENT) {
			if (first && (err == -EINVAL || err == -ENOTSUP ||
				      err == -EOPNOTSUPP || err == -524 /* ENOTSUPP */))
				err = -EOPNOTSUPP;
			break;
		}
		steps_keep(r, n, pid, pidns_ino);
		if (err) {		/* -ENOENT: the last batch */
			err = 0;
			break;
		}
		in = out;
		first = false;
	}
	free(keys);
	return err;
}

static int steps_load(struct steptime_reader *r, int fd, int pid,
		      __u32 pidns_ino)
{
	/* STEPTIME_READER_WALK=1: the fallback, for its tests. */
	const char *walk = getenv("STEPTIME_READER_WALK");
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int err;

	/* Room for a full map and a batch at once: no copy as it grows. */
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.max_entries)
		steps_reserve(r, info.max_entries + STEPS_BATCH);
	err = walk && *walk == '1' ? -EOPNOTSUPP :
	      steps_load_batch(r, fd, pid, pidns_ino);

	if (err != -EOPNOTSUPP)
		return err;
	r->n = 0;
	return steps_load_walk(r, fd, pid, pidns_ino);
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
	if (!err)
		err = order_sort(r);
	if (err) {
		steptime_reader__free(r);
		errno = -err;
		return NULL;
	}
	/* Every record read: phase files no record needs can go. */
	if (!pid && !ino)
		st_phases_reap(r->steps, r->n);
	if (last && last < r->n)
		r->first = r->next = r->n - last;
	st_phases_snapshot();
	return r;
}

#define PREFETCH_AHEAD	8

int steptime_reader__next(struct steptime_reader *r,
			  struct steptime_step_stats *out)
{
	if (!r || !out)
		return -EINVAL;
	if (r->next >= r->n)
		return -ENOENT;
	/* The records are read in time order, scattered: fetch ahead. */
	if (r->next + PREFETCH_AHEAD < r->n) {
		const char *p = (const char *)&r->steps[r->order[r->next +
						PREFETCH_AHEAD].at];
		size_t off;

		for (off = 0; off < sizeof(*out); off += 64)
			__builtin_prefetch(p + off);
	}
	*out = r->steps[r->order[r->next++].at];
	return 0;
}

const struct steptime_step_stats *
st_reader_step(const struct steptime_reader *r, size_t i)
{
	return &r->steps[r->order[r->first + i].at];
}

size_t steptime_reader__count(const struct steptime_reader *r)
{
	return r ? r->n - r->first : 0;
}

void steptime_reader__free(struct steptime_reader *r)
{
	if (!r)
		return;
	if (r->snap && r->cap * (sizeof(*r->steps) + 2 * sizeof(*r->order)) <
		       HUGE_SNAPSHOT)
		spare_put(r->snap, r->snap_len, r->cap);
	else if (r->snap)
		munmap(r->snap, r->snap_len);
	free(r);
}
