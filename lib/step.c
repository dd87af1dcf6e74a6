// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The mark: one CLOCK_MONOTONIC read and a few stores into this process's
 * slot of the pinned, mmapped "marks" map (protocol in steptime/abi.h).
 * Everything that costs a syscall (opening the map, claiming a slot) runs
 * once, on the slow path, and is retried at most once a second after a
 * failure.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <steptime/steptime.h>
#include "st_internal.h"
#include "tx.h"

#define NSEC_PER_SEC	1000000000ull
#define RETRY_NS	NSEC_PER_SEC

struct steptime_step {
	__u64 index_id;
	unsigned int marked;	/* 1 << 0: START, 1 << 1: END */
};

/*
 * Process-wide mark state. @slot is the only field the fast path reads
 * besides @retry_ns/@err (when there is no slot); everything else changes
 * under @lock. Mappings are never unmapped: another thread may be storing
 * through a slot pointer it loaded a moment ago.
 */
static struct {
	pthread_mutex_t lock;
	struct steptime_slot *slot;	/* claimed slot, NULL: none */
	struct steptime_marks_hdr *hdr;	/* entry 0 of the current mapping */
	__u64 key;			/* steptime_owner_key() of this process */
	__u64 retry_ns;			/* no slow path before this time */
	int err;			/* why there is no slot */
	int warned;			/* errors already printed (bit per kind) */
	pthread_once_t atfork_once;
} g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.atfork_once = PTHREAD_ONCE_INIT,
};

static __u64 next_index_id = 1;

__u64 st_next_index_id(void)
{
	return __atomic_fetch_add(&next_index_id, 1, __ATOMIC_RELAXED);
}

const char *st_pin_dir(void)
{
	const char *dir = getenv("STEPTIME_PIN_DIR");

	return dir && *dir ? dir : STEPTIME_PIN_DIR;
}

void st_warn(const char *fmt, ...)
{
	const char *quiet = getenv("STEPTIME_QUIET");
	va_list ap;

	if (quiet && !strcmp(quiet, "1"))
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

__u32 st_pidns_ino(void)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st))
		return 0;
	return (__u32)st.st_ino;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* fork: the child is another process and claims its own slot. */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&g.lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&g.lock);
}

static void atfork_child(void)
{
	__atomic_store_n(&g.slot, NULL, __ATOMIC_RELAXED);
	g.key = 0;
	g.retry_ns = 0;
	g.err = 0;
	pthread_mutex_unlock(&g.lock);
}

static void register_atfork(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Print each kind of failure once per process: marks are hot. */
static void warn_once(int err, const char *path)
{
	int bit = err == -EACCES ? 1 : err == -EPROTO ? 2 : 4;

	if (g.warned & bit)
		return;
	switch (err) {
	case -EACCES:
		st_warn("steptime: no permission to open %s: marks are dropped "
			"(`steptime load --mode/--group` lets other users mark)\n",
			path);
		break;
	case -EPROTO:
		st_warn("steptime: %s is not a steptime ABI v%d marks map: "
			"marks are dropped\n", path, STEPTIME_ABI_VERSION);
		break;
	case -ENOSPC:
		st_warn("steptime: no free slot in %s: marks are dropped\n",
			path);
		break;
	default:
		return;
	}
	g.warned |= bit;
}

static int map_is_marks(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_ARRAY ||
	    info.value_size != sizeof(struct steptime_slot) ||
	    info.max_entries != STEPTIME_SLOTS ||
	    !(info.map_flags & BPF_F_MMAPABLE))
		return -EPROTO;
	return 0;
}

static size_t marks_map_size(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t sz = (size_t)STEPTIME_SLOTS * sizeof(struct steptime_slot);

	return (sz + page - 1) & ~(page - 1);
}

static bool hdr_valid(const struct steptime_marks_hdr *hdr)
{
	return __atomic_load_n(&hdr->magic, __ATOMIC_RELAXED) == STEPTIME_MAGIC &&
	       hdr->version == STEPTIME_ABI_VERSION;
}

/* Open and map <pin>/marks. */
static int marks_map(const char *path, struct steptime_marks_hdr **hdrp)
{
	LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = 0);
	void *map;
	int fd, err;

	fd = bpf_obj_get_opts(path, &opts);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOENT || err == -ENOTDIR)
			return -ENODEV;
		return err == -EPERM ? -EACCES : err;
	}
	err = map_is_marks(fd);
	if (err) {
		close(fd);
		return err;
	}
	map = mmap(NULL, marks_map_size(), PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 0);
	err = -errno;
	/* The mapping holds the map; the fd is not needed any more. */
	close(fd);
	if (map == MAP_FAILED)
		return err == -EPERM ? -EACCES : err;
	if (!hdr_valid(map)) {
		munmap(map, marks_map_size());
		return -EPROTO;
	}
	*hdrp = map;
	return 0;
}

static struct steptime_slot *slot_at(struct steptime_marks_hdr *hdr, __u32 i)
{
	return (struct steptime_slot *)hdr + i;
}

/*
 * Claim a slot for @key: one this key already owns (pid reuse in the same
 * namespace, or a slot the BPF program has not freed yet), else a free one,
 * probing from steptime_slot_hash(). Every claim bumps hdr->claims so the
 * BPF program looks again.
 */
static struct steptime_slot *slot_claim(struct steptime_marks_hdr *hdr,
					__u64 key)
{
	__u32 first = steptime_slot_hash(key), i;
	struct steptime_slot *s;

	for (i = 0; i < STEPTIME_SLOT_PROBES; i++) {
		s = slot_at(hdr, 1 + (first - 1 + i) % (STEPTIME_SLOTS - 1));
		if (__atomic_load_n(&s->owner, __ATOMIC_ACQUIRE) == key)
			goto claimed;
	}
	for (i = 0; i < STEPTIME_SLOT_PROBES; i++) {
		__u64 free_key = 0;

		s = slot_at(hdr, 1 + (first - 1 + i) % (STEPTIME_SLOTS - 1));
		if (__atomic_compare_exchange_n(&s->owner, &free_key, key, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			goto claimed;
	}
	return NULL;
claimed:
	__atomic_fetch_add(&hdr->claims, 1, __ATOMIC_ACQ_REL);
	return s;
}

static int marks_attach(void)
{
	char path[4096];
	struct steptime_marks_hdr *hdr = g.hdr;
	struct steptime_slot *slot;
	__u32 ino;
	int err;

	snprintf(path, sizeof(path), "%s/marks", st_pin_dir());
	if (!g.key) {
		ino = st_pidns_ino();
		if (!ino) {
			if (!(g.warned & 8))
				st_warn("steptime: cannot stat /proc/self/ns/pid: "
					"marks are dropped\n");
			g.warned |= 8;
			return -ENODEV;
		}
		g.key = steptime_owner_key(ino, (__u32)getpid());
	}
	/*
	 * A map that was unloaded (the loader clears its magic) stays mapped:
	 * other threads may still hold a pointer into it.
	 */
	if (!hdr || !hdr_valid(hdr)) {
		err = marks_map(path, &hdr);
		if (err) {
			warn_once(err, path);
			return err;
		}
		__atomic_store_n(&g.hdr, hdr, __ATOMIC_RELEASE);
	}
	slot = slot_claim(hdr, g.key);
	if (!slot) {
		warn_once(-ENOSPC, path);
		return -ENOSPC;
	}
	__atomic_store_n(&g.slot, slot, __ATOMIC_RELEASE);
	return 0;
}

static int marks_slow(__u64 now, struct steptime_slot **slotp)
{
	struct steptime_slot *slot;
	int err = 0;

	pthread_once(&g.atfork_once, register_atfork);
	pthread_mutex_lock(&g.lock);
	slot = g.slot;
	if (slot && g.hdr && hdr_valid(g.hdr) &&
	    __atomic_load_n(&slot->owner, __ATOMIC_RELAXED) == g.key)
		goto out;
	__atomic_store_n(&g.slot, NULL, __ATOMIC_RELAXED);
	if (now < g.retry_ns) {
		err = g.err;
		goto out;
	}
	err = marks_attach();
	if (err) {
		__atomic_store_n(&g.err, err, __ATOMIC_RELAXED);
		__atomic_store_n(&g.retry_ns, now + RETRY_NS, __ATOMIC_RELEASE);
	} else {
		g.retry_ns = 0;
	}
	slot = g.slot;
out:
	pthread_mutex_unlock(&g.lock);
	*slotp = slot;
	return err;
}

static void mark_store(struct steptime_slot *slot, __u64 index_id,
		       unsigned int tag, __u32 stream, __u64 time)
{
	__u64 pos = __atomic_fetch_add(&slot->head, 1, __ATOMIC_RELAXED);
	struct steptime_mark *m = &slot->ring[pos % STEPTIME_MARK_RING];

	/*
	 * Invalidate first, so a reader that raced with the previous lap of
	 * this entry and re-checks seq after copying sees the change.
	 */
	__atomic_store_n(&m->seq, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	m->index_id = index_id;
	m->time_ns = time;
	m->tag = tag;
	m->stream = stream;
	__atomic_store_n(&m->seq, pos + 1, __ATOMIC_RELEASE);
}

int st_mark(__u64 index_id, unsigned int tag, void *stream)
{
	enum st_stream_kind kind = ST_STREAM_UNKNOWN;
	__u32 stream_id = STEPTIME_STREAM_NONE;
	struct steptime_slot *slot;
	__u64 now;
	int err;

	st_tx_step(index_id, tag);	/* phases: which step is open */
	if (stream)
		kind = st_stream_resolve(stream, &stream_id);
	now = now_ns();
	slot = __atomic_load_n(&g.slot, __ATOMIC_ACQUIRE);
	if (__builtin_expect(!slot ||
			     __atomic_load_n(&slot->owner, __ATOMIC_RELAXED) != g.key ||
			     !hdr_valid(__atomic_load_n(&g.hdr, __ATOMIC_ACQUIRE)), 0)) {
		if (!slot && now < __atomic_load_n(&g.retry_ns, __ATOMIC_ACQUIRE))
			return __atomic_load_n(&g.err, __ATOMIC_RELAXED);
		err = marks_slow(now, &slot);
		if (err)
			return err;
	}
	mark_store(slot, index_id, tag, stream_id, now);
	if (kind == ST_STREAM_UNKNOWN)
		return 0;
	return st_stream_submit(kind, stream, index_id, tag);
}

int st_marks_ready(void)
{
	struct steptime_slot *slot;

	return marks_slow(now_ns(), &slot);
}

const struct steptime_slot *st_marks_slot(void)
{
	return __atomic_load_n(&g.slot, __ATOMIC_ACQUIRE);
}

struct steptime_step *steptime_step__new(void)
{
	struct steptime_step *step = calloc(1, sizeof(*step));

	if (!step) {
		errno = ENOMEM;
		return NULL;
	}
	step->index_id = st_next_index_id();
	return step;
}

static int mark_opts_stream(const struct steptime_mark_opts *opts,
			    void **stream)
{
	*stream = NULL;
	if (!opts)
		return 0;
	if (opts->sz < offsetof(struct steptime_mark_opts, stream) +
		       sizeof(opts->stream))
		return -EINVAL;
	/* Fields past what this library knows must be zero. */
	if (opts->sz > sizeof(*opts)) {
		const char *p = (const char *)opts + sizeof(*opts);
		const char *end = (const char *)opts + opts->sz;

		for (; p < end; p++)
			if (*p)
				return -EINVAL;
	}
	*stream = opts->stream;
	return 0;
}

int steptime_step__mark(struct steptime_step *step, unsigned int tag,
			const struct steptime_mark_opts *opts)
{
	unsigned int bit = tag == STEPTIME_TAG_START ? 1 : 2;
	void *stream;
	int err;

	if (!step)
		return -EINVAL;
	err = mark_opts_stream(opts, &stream);
	if (err)
		return err;
	if (__atomic_fetch_or(&step->marked, bit, __ATOMIC_RELAXED) & bit)
		return -EALREADY;
	return st_mark(step->index_id, tag, stream);
}

int steptime__mark(__u64 index_id, unsigned int tag,
		   const struct steptime_mark_opts *opts)
{
	void *stream;
	int err;

	err = mark_opts_stream(opts, &stream);
	if (err)
		return err;
	if (!index_id)
		return -EINVAL;
	return st_mark(index_id, tag, stream);
}

__u64 steptime_step__index_id(const struct steptime_step *step)
{
	return step ? step->index_id : 0;
}

void steptime_step__free(struct steptime_step *step)
{
	free(step);
}
