// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The mark: one CLOCK_MONOTONIC read and a few stores into this process's
 * own mark ring (protocol in steptime/abi.h). The ring is in this
 * process's memory, so no other process can forge, take or block its
 * marks; the BPF program reads it at this process's own ioctls.
 * Everything that costs a syscall (reading the marks header, registering
 * the ring) runs on the slow path: once, then once a second to notice an
 * unload or a new load (the header is readable, not writable, by the
 * processes that mark, and BPF array maps are mmapped only through a
 * writable fd), and at most once a second after a failure.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <linux/membarrier.h>
#include <bpf/bpf.h>
#include <steptime/steptime.h>
#include <steptime/util.h>
#include "st_internal.h"
#include "cann.h"
#include "phase_write.h"

#define NSEC_PER_SEC	1000000000ull
#define RETRY_NS	NSEC_PER_SEC

struct steptime_step {
	__u64 index_id;
	/*
	 * [0]: START marked, [1]: END marked. A byte per tag, each tested and
	 * set with a plain load and store: no locked instruction on the mark
	 * path, and marks of the two tags on two threads never lose each
	 * other's flag (one tag marked at once on two threads, a misuse, may
	 * record both).
	 */
	unsigned char marked[2];
};

/* This process's marks: written here, read by the BPF program. */
static struct steptime_ring ring __attribute__((aligned(64)));

/*
 * Who reserves positions in @ring, and how. A locked add (ring.head) costs
 * about a quarter of a clock_gettime here, most of what a mark adds to it;
 * so while one thread alone marks, it owns the ring and reserves with a
 * plain load and store. The first mark of a second thread makes the ring
 * shared for good (RING_SHARED: every thread adds atomically): that thread
 * takes the ownership away, then waits until the owner is out of its
 * critical section. The owner's side has no fence (its store of @in_cs
 * may pass its load of @owner): membarrier(PRIVATE_EXPEDITED), issued by
 * the taker between its store of @owner and its load of @in_cs, is the
 * fence for both (an asymmetric Dekker, as Folly's asymmetric barriers).
 * No lock: the handover happens once per process, with a wait on state.
 * Where membarrier() is refused the ring is shared from the start.
 */
#define RING_UNOWNED	0ul	/* no thread has marked yet */
#define RING_SHARED	1ul	/* never a thread pointer */

/*
 * The calling thread, as the ring's owner: its thread pointer, unique
 * among live threads as pthread_self() is, and read without a call.
 */
static inline __attribute__((always_inline)) unsigned long ring_self(void)
{
	return (unsigned long)__builtin_thread_pointer();
}

static struct {
	unsigned long owner;	/* ring_self() of the owner, or RING_* */
	int in_cs;		/* the owner is reserving and writing */
	int ready;		/* RING_SHARED, and the owner is out */
	int fenced;		/* membarrier() registered, this process */
} own __attribute__((aligned(64)));

/*
 * Process-wide mark state. The fast path reads @check_ns (the ring is
 * registered with a live load until then) and @retry_ns/@err when it is
 * not; everything else changes under @lock.
 */
static struct {
	pthread_mutex_t lock;
	__u64 check_ns;			/* registered: look again after this */
	int marks_fd;			/* read-only fd of marks, or -1 */
	struct steptime_marks_hdr hdr;	/* its header, as last read */
	int ready;			/* ring registered with @marks_fd's load */
	int kick;			/* this library is probed: kick, no ioctl */
	int dev_fd;			/* our own fd of the device, or -1 */
	__u64 retry_ns;			/* no slow path before this time */
	int err;			/* why marks are not written */
	int warned;			/* errors already printed (bit per kind) */
} g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.marks_fd = -1,
	.dev_fd = -1,
};

static __u64 next_index_id = 1;

__u64 st_next_index_id(void)
{
	return __atomic_fetch_add(&next_index_id, 1, __ATOMIC_RELAXED);
}

/*
 * fork: the child is another process with a copy of the ring; it
 * registers that copy as its own (the BPF program binds rings per process
 * and checks the identity written in them).
 */
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
	/*
	 * The child's one thread: it owns the ring again once it has
	 * registered membarrier() for its own memory (marks_attach()).
	 */
	own.owner = RING_UNOWNED;
	own.in_cs = 0;
	own.ready = 0;
	own.fenced = 0;
	__atomic_store_n(&g.check_ns, 0, __ATOMIC_RELAXED);
	g.ready = 0;
	g.retry_ns = 0;
	g.err = 0;
	pthread_mutex_unlock(&g.lock);
}

/*
 * At load: what would otherwise be resolved inside a mark (pthread_once,
 * the runtime's dlsym()s). The ring is registered at the first step
 * creation or session start, not here: a process that loads the library
 * and never marks opens no map and makes no ioctl.
 */
__attribute__((constructor)) static void st_lib_init(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	st_cann_lookup();
	st_sends_scan();
}

/* Print each kind of failure once per process: marks are hot. */
static void warn_once(int err, const char *path)
{
	int bit = err == -EACCES ? 1 : err == -EPROTO ? 2 : 4;

	if (__atomic_load_n(&g.warned, __ATOMIC_RELAXED) & bit)
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
	case -ENXIO:
		st_warn("steptime: cannot open the traced device %s: marks "
			"are dropped\n", path);
		break;
	default:
		return;
	}
	__atomic_fetch_or(&g.warned, bit, __ATOMIC_RELAXED);
}

/* What warn_once() does not say (it says what it knows the path of). */
void st_marks_warn(int err)
{
	int bit = err == -ENODEV ? 16 : 32;

	if (err == -EACCES || err == -EPROTO || err == -ENXIO ||
	    (__atomic_fetch_or(&g.warned, bit, __ATOMIC_RELAXED) & bit))
		return;
	if (err == -ENODEV)
		st_warn("steptime: steptime is not loaded (`steptime load`): "
			"marks are dropped\n");
	else
		st_warn("steptime: cannot record marks (%s): marks are "
			"dropped\n", strerror(-err));
}

static int map_is_marks(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_ARRAY ||
	    info.value_size != sizeof(struct steptime_marks_hdr) ||
	    info.max_entries != 1 || !(info.map_flags & BPF_F_MMAPABLE))
		return -EPROTO;
	return 0;
}

static bool hdr_valid(const struct steptime_marks_hdr *hdr)
{
	return hdr->magic == STEPTIME_MAGIC &&
	       hdr->version == STEPTIME_ABI_VERSION;
}

static int hdr_read(int fd, struct steptime_marks_hdr *hdr)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, hdr))
		return -errno;
	return hdr_valid(hdr) ? 0 : -EPROTO;
}

/* Open <pin>/marks read-only and read its header. Return: fd or -errno. */
static int marks_open(const char *path, struct steptime_marks_hdr *hdr)
{
	LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = BPF_F_RDONLY);
	int fd, err;

	fd = bpf_obj_get_opts(path, &opts);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOENT || err == -ENOTDIR)
			return -ENODEV;
		return err == -EPERM ? -EACCES : err;
	}
	err = map_is_marks(fd);
	if (!err)
		err = hdr_read(fd, hdr);
	if (err) {
		close(fd);
		return err == -EPERM ? -EACCES : err;
	}
	return fd;
}

/*
 * A fd of the traced device: one this process already has open (the
 * runtime's), else our own. Return: the fd (*owned tells which), or
 * -errno.
 */
static int device_fd(const struct steptime_marks_hdr *hdr, bool *owned)
{
	unsigned int maj = hdr->dev_rdev >> 20, min = hdr->dev_rdev & 0xfffff;
	char dev[sizeof(hdr->device) + 1];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd;

	*owned = false;
	if (g.dev_fd >= 0 && !fstat(g.dev_fd, &st) && S_ISCHR(st.st_mode) &&
	    major(st.st_rdev) == maj && minor(st.st_rdev) == min)
		return g.dev_fd;
	d = opendir("/proc/self/fd");
	while (d && (de = readdir(d))) {
		fd = atoi(de->d_name);
		if (de->d_name[0] < '0' || de->d_name[0] > '9' ||
		    fd == dirfd(d) || fstat(fd, &st) || !S_ISCHR(st.st_mode))
			continue;
		if (major(st.st_rdev) == maj && minor(st.st_rdev) == min) {
			closedir(d);
			return fd;
		}
	}
	if (d)
		closedir(d);
	memcpy(dev, hdr->device, sizeof(hdr->device));
	dev[sizeof(hdr->device)] = '\0';
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENXIO;
	*owned = true;
	return fd;
}

/*
 * Where the BPF program's uprobe sits (steptime/abi.h, marks header
 * kick[]): a call binds the calling process's ring at @r and has its
 * marks consumed. It does nothing itself; exported, so that the loader
 * finds it in a stripped library too. On x86-64 its first instruction is
 * a 5-byte nop: a kernel that optimizes uprobes (6.18 on) replaces it
 * with a call into its uprobe trampoline (a syscall) after the first hit,
 * in place of an int3 trap per kick (on a paravirtualized host the trap
 * is most of the kick's cost); older kernels single-step the nop as
 * they did the ret.
 */
STEPTIME_API __attribute__((noinline)) void
steptime__ring_kick(const struct steptime_ring *r)
{
#ifdef __x86_64__
	__asm__ __volatile__(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00"
			     : : "r"(r) : "memory");
#else
	__asm__ __volatile__("" : : "r"(r) : "memory");
#endif
}

/* Whether the load of @hdr probes this very library file (kick[]). */
static int kick_probed(const struct steptime_marks_hdr *hdr)
{
	Dl_info di;
	struct stat st;
	int i;

	if (!dladdr((void *)steptime__ring_kick, &di) || !di.dli_fname ||
	    stat(di.dli_fname, &st))
		return 0;
	for (i = 0; i < STEPTIME_KICK_LIBS; i++)
		if (hdr->kick[i].ino == st.st_ino &&
		    hdr->kick[i].dev == st.st_dev)
			return 1;
	return 0;
}

/*
 * Tell the BPF program where this process's ring is, or (registered
 * already) make it consume the marks written so far: by the kick where
 * this library is probed, else by an ioctl on the traced device, which
 * the driver rejects. Return: 0 or -errno.
 */
static int ring_ioctl(const struct steptime_marks_hdr *hdr)
{
	bool owned;
	int fd;

	if (__atomic_load_n(&g.kick, __ATOMIC_RELAXED)) {
		steptime__ring_kick(&ring);
		return 0;
	}
	fd = device_fd(hdr, &owned);

	if (fd < 0)
		return fd;
	if (owned) {
		if (g.dev_fd >= 0)
			close(g.dev_fd);
		g.dev_fd = fd;
	}
	/* The driver rejects the command: only the BPF program acts on it. */
	ioctl(fd, STEPTIME_IOC_RING, &ring);
	return 0;
}

/* Hand the device times read back to the BPF program, as marks. */
static void dev_times_put(const struct st_dev_times *dt)
{
	unsigned int i;

	for (i = 0; i < dt->n; i++)
		st_mark_raw(dt->e[i].index_id, dt->e[i].tag, dt->e[i].stream,
			    dt->e[i].time);
}

static int marks_flush(bool wait_events)
{
	struct st_dev_times dt;
	int err;

	st_stream_collect(wait_events, &dt);
	dev_times_put(&dt);
	pthread_mutex_lock(&g.lock);
	if (g.ready && !hdr_read(g.marks_fd, &g.hdr))
		err = ring_ioctl(&g.hdr);
	else
		err = g.err ? g.err : -ENODEV;
	pthread_mutex_unlock(&g.lock);
	return err;
}

/*
 * At exit the last marks are consumed while this process's memory exists
 * (the BPF program cannot read it once the process is gone). Events are
 * not waited for: the runtime may be finalized.
 */
static void marks_atexit(void)
{
	marks_flush(false);
}

/*
 * Once per process, before its first mark: the taker's fence of the ring's
 * handover (see @own). Without it, the ring is shared from the start.
 */
static void ring_fence_register(void)
{
	if (own.fenced || own.owner != RING_UNOWNED)
		return;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
		    0, 0)) {
		__atomic_store_n(&own.ready, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&own.owner, RING_SHARED, __ATOMIC_RELEASE);
		return;
	}
	own.fenced = 1;
}

static int marks_attach(void)
{
	char path[4096];
	struct steptime_marks_hdr hdr;
	static bool atexit_done;
	__u32 ino;
	int err, fd;

	snprintf(path, sizeof(path), "%s/marks", steptime__pin_dir(NULL));
	ino = st_pidns_ino();
	if (!ino) {
		if (!(__atomic_fetch_or(&g.warned, 8, __ATOMIC_RELAXED) & 8))
			st_warn("steptime: cannot stat /proc/self/ns/pid: "
				"marks are dropped\n");
		return -ENODEV;
	}
	/* Unloaded (the loader clears the magic), or never opened. */
	if (g.marks_fd < 0 || hdr_read(g.marks_fd, &g.hdr)) {
		fd = marks_open(path, &hdr);
		if (fd < 0) {
			warn_once(fd, path);
			return fd;
		}
		if (g.marks_fd >= 0)
			close(g.marks_fd);
		g.marks_fd = fd;
		g.hdr = hdr;
	}
	ring.magic = STEPTIME_RING_MAGIC;
	ring.version = STEPTIME_ABI_VERSION;
	ring.pidns_ino = ino;
	ring.ns_tgid = (__u32)getpid();
	ring.base = __atomic_load_n(&ring.head, __ATOMIC_ACQUIRE);
	ring.res[0] = STEPTIME_RING_F_JOURNAL;
	__atomic_store_n(&g.kick, kick_probed(&g.hdr), __ATOMIC_RELAXED);
	ring_fence_register();
	err = ring_ioctl(&g.hdr);
	if (err) {
		warn_once(err, g.hdr.device);
		return err;
	}
	if (!atexit_done) {
		atexit_done = true;
		atexit(marks_atexit);
	}
	__atomic_store_n(&g.ready, 1, __ATOMIC_RELEASE);
	return 0;
}

/* @in_mark: called by a mark (counted when it had to register the ring). */
static int marks_slow(__u64 now, bool in_mark)
{
	int err = 0;

	pthread_mutex_lock(&g.lock);
	if (now < g.check_ns)
		goto out;
	/* Objects loaded since: their HAL calls journaled too. */
	st_sends_scan();
	/* Still the load the ring is registered with: nothing to do. */
	if (g.ready && !hdr_read(g.marks_fd, &g.hdr))
		goto ok;
	g.ready = 0;
	if (now < g.retry_ns) {
		err = g.err;
		goto out;
	}
	err = marks_attach();
	if (err) {
		__atomic_store_n(&g.err, err, __ATOMIC_RELAXED);
		__atomic_store_n(&g.retry_ns, now + RETRY_NS, __ATOMIC_RELEASE);
		goto out;
	}
	g.retry_ns = 0;
	if (in_mark)
		ST_COUNT(mark_setups);
ok:
	__atomic_store_n(&g.check_ns, now + RETRY_NS, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&g.lock);
	return err;
}

/* marks_check() once @check_ns has passed: retried later, or the slow path. */
static __attribute__((noinline)) int marks_check_slow(__u64 now, bool in_mark)
{
	if (now < __atomic_load_n(&g.retry_ns, __ATOMIC_ACQUIRE))
		return __atomic_load_n(&g.err, __ATOMIC_RELAXED);
	return marks_slow(now, in_mark);
}

/*
 * The slow path, unless the ring is registered with a live load (checked
 * within the last second) or a failure is retried later. Return: 0 or
 * the error marks get.
 */
static inline int marks_check(__u64 now, bool in_mark)
{
	if (__builtin_expect(now < __atomic_load_n(&g.check_ns,
						   __ATOMIC_ACQUIRE), 1))
		return 0;
	return marks_check_slow(now, in_mark);
}

/*
 * Ahead of a step (its creation, a session's start): register the ring
 * and look the runtime up now, so that the first START costs what the
 * others cost.
 */
void st_marks_prepare(void)
{
	marks_check(st_mono_ns(), false);
	st_cann_lookup();
	st_sends_scan();
}

/* Fill entry @pos of the ring, reserved by the caller. */
static inline __attribute__((always_inline)) void
mark_fill(__u64 pos, __u64 index_id, unsigned int tag, __u32 stream, __u64 time)
{
	struct steptime_mark *m = &ring.ring[pos % STEPTIME_MARK_RING];

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

/*
 * A mark that is not the owner's (see @own): claim the unowned ring, or
 * take it from its owner and share it. Return: 1 when @self owns the ring
 * now, 0 when it is shared (reserve atomically), -1 when the mark is
 * dropped: the owner's, made inside one of its own (a signal handler's),
 * or one that waited TAKE_WAIT yields for a handover to end.
 */
#define TAKE_WAIT	10000	/* sched_yield()s */

static __attribute__((noinline)) int ring_take(unsigned long self)
{
	unsigned long o;
	int i;

	for (;;) {
		o = __atomic_load_n(&own.owner, __ATOMIC_ACQUIRE);
		if (o == RING_SHARED) {
			/*
			 * The taker is between its fence and @ready; a
			 * bounded wait: this may be its signal handler.
			 */
			for (i = 0; i < TAKE_WAIT; i++) {
				if (__atomic_load_n(&own.ready, __ATOMIC_ACQUIRE))
					return 0;
				sched_yield();
			}
			return -1;
		}
		if (o == self)
			return -1;
		if (o == RING_UNOWNED) {
			if (__atomic_compare_exchange_n(&own.owner, &o, self,
							false, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
				return 1;
			continue;
		}
		if (!__atomic_compare_exchange_n(&own.owner, &o, RING_SHARED,
						 false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		/* Registered before any mark (ring_fence_register()). */
		syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
		while (__atomic_load_n(&own.in_cs, __ATOMIC_ACQUIRE))
			sched_yield();
		ST_COUNT(ring_handovers);
		__atomic_store_n(&own.ready, 1, __ATOMIC_RELEASE);
		return 0;
	}
}

/* Fill @n entries of the ring from @pos, reserved by the caller. */
static inline __attribute__((always_inline)) void
marks_fill(__u64 pos, const struct st_ring_ent *e, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		mark_fill(pos + i, e[i].index_id, e[i].tag, e[i].stream,
			  e[i].time);
}

/*
 * Reserve @n (1 or 2) consecutive positions of the ring and fill them with
 * @e. Return: 0, or -EDEADLK.
 */
static inline __attribute__((always_inline)) int
marks_store(const struct st_ring_ent *e, unsigned int n)
{
	unsigned long self = ring_self();
	__u64 pos;
	int r;

again:
	/* The owner, not inside its own mark: a plain load and store. */
	if (__atomic_load_n(&own.owner, __ATOMIC_RELAXED) == self &&
	    !own.in_cs) {
		__atomic_store_n(&own.in_cs, 1, __ATOMIC_RELAXED);
		/* The light side of the fence: membarrier() in ring_take(). */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (__builtin_expect(__atomic_load_n(&own.owner,
						     __ATOMIC_RELAXED) == self, 1)) {
			pos = __atomic_load_n(&ring.head, __ATOMIC_RELAXED);
			__atomic_store_n(&ring.head, pos + n, __ATOMIC_RELAXED);
			marks_fill(pos, e, n);
			__atomic_store_n(&own.in_cs, 0, __ATOMIC_RELEASE);
			goto kick;
		}
		__atomic_store_n(&own.in_cs, 0, __ATOMIC_RELEASE);
	}
	r = __atomic_load_n(&own.ready, __ATOMIC_ACQUIRE) ? 0 : ring_take(self);
	if (r < 0)
		return -EDEADLK;
	if (r > 0)
		goto again;
	pos = __atomic_fetch_add(&ring.head, n, __ATOMIC_RELAXED);
	marks_fill(pos, e, n);
kick:
	/*
	 * Half the ring written since the last kick: have it consumed before
	 * it can wrap, however few ioctls this process makes.
	 */
	if ((pos + n) / (STEPTIME_MARK_RING / 2) !=
	    pos / (STEPTIME_MARK_RING / 2) &&
	    __atomic_load_n(&g.kick, __ATOMIC_RELAXED))
		steptime__ring_kick(&ring);
	return 0;
}

/* Reserve a position of the ring and fill it. Return: 0, or -EDEADLK. */
static inline __attribute__((always_inline)) int
mark_store(__u64 index_id, unsigned int tag, __u32 stream, __u64 time)
{
	struct st_ring_ent e = {
		.index_id = index_id, .time = time, .tag = tag,
		.stream = stream,
	};

	return marks_store(&e, 1);
}

/*
 * The journal's entries (lib/sends.c): written only while the ring is
 * registered with a live load that reads them (load --journal; checked at
 * most once a second by the marks: a journal entry never reads the
 * clock). Return: 0, or -errno.
 */
int st_ring_put(const struct st_ring_ent *e, unsigned int n)
{
	if (!__atomic_load_n(&g.ready, __ATOMIC_ACQUIRE) ||
	    !(__atomic_load_n(&g.hdr.flags, __ATOMIC_RELAXED) &
	      STEPTIME_MARKS_F_JOURNAL))
		return -ENODEV;
	return marks_store(e, n);
}

/*
 * The journal's chance to register the ring in a process that marks
 * nothing on the host (stream marks only): at an ALLOC, a stream mark's
 * place-holder, a drained head. A clock read, and the slow path at most
 * once a second.
 */
void st_ring_check(void)
{
	marks_check(st_mono_ns(), false);
}

/*
 * Whether the ring is registered with a load that does not read the
 * journal: st_ring_put() would refuse, and a journal entry is not worth
 * even st_ring_check()'s clock read (a runtime polling its SQ head).
 */
bool st_ring_unjournaled(void)
{
	return __atomic_load_n(&g.ready, __ATOMIC_ACQUIRE) &&
	       !(__atomic_load_n(&g.hdr.flags, __ATOMIC_RELAXED) &
		 STEPTIME_MARKS_F_JOURNAL);
}

/*
 * Have the marks written so far consumed now (the journal's drained SQ,
 * at the process's own sync point): by the kick where this library is
 * probed, else by the ioctl.
 */
void st_ring_flush(void)
{
	if (!__atomic_load_n(&g.ready, __ATOMIC_ACQUIRE))
		return;
	if (__atomic_load_n(&g.kick, __ATOMIC_RELAXED)) {
		steptime__ring_kick(&ring);
		return;
	}
	pthread_mutex_lock(&g.lock);
	if (g.ready)
		ring_ioctl(&g.hdr);
	pthread_mutex_unlock(&g.lock);
}

/*
 * The fast path: two acquire loads (@check_ns and, only when it has
 * passed, @retry_ns), the ring's position, the stores. No lock.
 */
int st_mark_raw(__u64 index_id, unsigned int tag, __u32 stream, __u64 time)
{
	int err = marks_check(time, true);

	if (__builtin_expect(err, 0)) {
		ST_COUNT(marks_dropped);
		return err;
	}
	err = mark_store(index_id, tag, stream, time);
	if (__builtin_expect(err, 0))
		ST_COUNT(marks_dropped);
	return err;
}

/*
 * A mark's stream side: its task and events (lib/stream.c), then the
 * device times of the steps done since. Off the host mark's frame.
 */
static __attribute__((noinline)) int
stream_mark(enum st_stream_kind kind, void *stream, __u64 index_id,
	    unsigned int tag, bool task)
{
	struct st_dev_times dt;
	int r;

	r = st_stream_submit(kind, stream, index_id, tag, task, &dt);
	/* Events that a Python framework's shutdown would destroy. */
	if (r > 0)
		st_py_exit_flush(steptime__flush);
	dev_times_put(&dt);
	return r < 0 ? r : 0;
}

int st_mark_stream(__u64 index_id, unsigned int tag, void *stream,
		   unsigned int flags)
{
	enum st_stream_kind kind = ST_STREAM_UNKNOWN;
	__u32 stream_id = STEPTIME_STREAM_NONE;
	__u64 now;
	int err;

	st_tx_step(index_id, tag);	/* phases: which step is open */
	if (stream || (flags & ST_MARK_NULL_DEFAULT))
		kind = st_stream_resolve(stream, &stream_id);
	/*
	 * The ring says START or END and nothing else: any other tag ends a
	 * step (as CANN treats it) and must not read as one of the ring's own
	 * kinds (STEPTIME_TAG_DEV_*). The stream mark keeps the tag as given,
	 * as CANN passes it to the device.
	 */
	now = st_mono_ns();
	/*
	 * Past @check_ns: the slow path (the first mark of a process that
	 * created no step, or the once-a-second check). A START reads the
	 * clock again after it: the step does not carry steptime's own work.
	 */
	if (__builtin_expect(now >= __atomic_load_n(&g.check_ns,
						    __ATOMIC_ACQUIRE), 0)) {
		err = marks_check_slow(now, true);
		if (err) {
			ST_COUNT(marks_dropped);
			if (flags & ST_MARK_DROP_OK) {
				st_marks_warn(err);
				return 0;
			}
			return err;
		}
		if (tag == STEPTIME_TAG_START)
			now = st_mono_ns();
	}
	/* What this process sent before the mark: in the ring before it. */
	st_sends_snap();
	err = mark_store(index_id, tag == STEPTIME_TAG_START ?
			 STEPTIME_TAG_START : STEPTIME_TAG_END, stream_id, now);
	if (__builtin_expect(err, 0)) {
		ST_COUNT(marks_dropped);
		return flags & ST_MARK_DROP_OK ? 0 : err;
	}
	if (kind == ST_STREAM_UNKNOWN)
		return 0;
	return stream_mark(kind, stream, index_id, tag,
			   !(flags & ST_MARK_NO_TASK));
}

int st_mark(__u64 index_id, unsigned int tag, void *stream)
{
	return st_mark_stream(index_id, tag, stream, 0);
}

int st_marks_ready(void)
{
	st_cann_lookup();
	return marks_check(st_mono_ns(), false);
}

int st_marks_sync(void)
{
	return marks_flush(true);
}

int steptime__flush(void)
{
	return marks_flush(true);
}

const struct steptime_ring *st_marks_ring(void)
{
	return &ring;
}

struct steptime_step *steptime_step__new(void)
{
	struct steptime_step *step = calloc(1, sizeof(*step));

	if (!step) {
		errno = ENOMEM;
		return NULL;
	}
	step->index_id = st_next_index_id();
	st_marks_prepare();
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
	unsigned char *marked;
	void *stream;
	int err;

	if (!step)
		return -EINVAL;
	err = mark_opts_stream(opts, &stream);
	if (err)
		return err;
	marked = &step->marked[tag != STEPTIME_TAG_START];
	if (__atomic_load_n(marked, __ATOMIC_RELAXED))
		return -EALREADY;
	__atomic_store_n(marked, 1, __ATOMIC_RELAXED);
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
