// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime: stamp every task submission (TRS SQCQ_SEND) and completion report
 * (SQCQ_RECV) of the Ascend driver with kernel time, and attribute each task
 * to the training step open in its process.
 *
 * The same core runs behind four attach modes, of which the loader enables
 * one (bpf_program__set_autoload): fentry/fexit or kprobe/kretprobe on the
 * driver's ioctl handler, tp_btf/raw_tp on sys_enter/sys_exit, or the
 * syscalls:sys_{enter,exit}_ioctl tracepoints. The syscall modes match the
 * device by fd -> file -> inode -> rdev.
 *
 * Times: every *_ns is bpf_ktime_get_ns() (CLOCK_MONOTONIC). A task's submit
 * time is the SEND ioctl's entry (exact: it cannot start earlier). Its
 * completion time is the exit of the RECV that returned its report (exact
 * to the syscall) or, for a task without a report of its own, of the RECV
 * whose report's sq_head passed it: an upper bound.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define ASCEND_TRS_NO_LINUX_TYPES
#define STEPTIME_ABI_NO_LINUX_TYPES
#ifndef __aligned_u64
#define __aligned_u64 __u64 __attribute__((aligned(8)))
#endif
#include "ascend_trs.h"
#include "steptime/abi.h"
#include "steptime.h"

/*
 * The syscall's number and arguments in its saved user registers. SC_*
 * load them directly from the BTF-typed pointer tp_btf gets; raw_tp's is
 * untyped, so SC_CORE_* read them through the CO-RE helpers.
 */
#if defined(__TARGET_ARCH_x86)
#define NR_IOCTL	16
#define SC_NR(regs)	((regs)->orig_ax)
#define SC_ARG0(regs)	((regs)->di)
#define SC_ARG1(regs)	((regs)->si)
#define SC_ARG2(regs)	((regs)->dx)
#define SC_CORE_NR(regs) BPF_CORE_READ(regs, orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define NR_IOCTL	29
#define SC_NR(regs)	((regs)->syscallno)
#define SC_ARG0(regs)	((regs)->orig_x0)
#define SC_ARG1(regs)	((regs)->regs[1])
#define SC_ARG2(regs)	((regs)->regs[2])
#define SC_CORE_NR(regs) BPF_CORE_READ(regs, syscallno)
#else
#error "steptime supports x86_64 and arm64"
#endif

#define READ_ONCE(x)	(*(const volatile typeof(x) *)&(x))

/*
 * Kernels before 6.8 verify a bpf_loop() callback once, in the state of its
 * first iteration, and prune as dead the branches that state cannot take
 * (fixed by "bpf: verify callbacks as if they are called unknown number of
 * times", v6.8). Whatever a callback carries from one iteration to the
 * next therefore starts from opaque_zero, a .bss value the verifier cannot
 * know, and no pointer is carried from one iteration to the next.
 */
__u64 opaque_zero;

/* Set by the loader before load. */
const volatile __u32 target_rdev;		/* kernel dev_t of the device */
const volatile __u64 counter_freq_hz = 100000000;
const volatile bool has_bpf_loop = true;	/* bpf_loop(): 5.17+ */
const volatile bool cq_hook;			/* completion hook attached */
const volatile bool use_task_storage;		/* else the calls hash */

/* Written by the loader, read by the step API: never read here. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct steptime_marks_hdr);
} marks SEC(".maps");

/*
 * Not an LRU: an LRU evicts by recency, anyone's record, and BPF_NOEXIST
 * evicts rather than fails. Eviction here is explicit and counted: a
 * process's own oldest record (per-process cap), or an exited process's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_STEPS);
	__type(key, struct steptime_step_key);
	__type(value, struct steptime_step_stats);
} steps SEC(".maps");

/* Records of exited processes, oldest first: evicted when steps is full. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, STEPTIME_MAX_STEPS);
	__type(value, struct steptime_step_key);
} retired SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, STEPTIME_EVENTS_BYTES);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct steptime_counters);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct steptime_info);
} info SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_SQS);
	__type(key, __u32);
	__type(value, struct st_sq);
} sqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct st_proc);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct st_call);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct st_proc);
} proc_scratch SEC(".maps");

/* The same, where task-local storage is allowed (probed by the loader). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct st_call);
} call_store SEC(".maps");

/* Never written: the zeroed images new entries are created from. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct steptime_step_stats);
} zero_step SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct st_sq);
} zero_sq SEC(".maps");

/*
 * The ioctl arguments, copied here rather than to the stack: with the
 * bpf_loop callbacks below, 6.1's verifier counts every frame of the chain
 * against the 512-byte stack.
 */
union st_args {
	struct trs_task_send_info send;
	struct trs_report_recv_info recv;
	struct trs_sqcq_alloc_info alloc;
	struct trs_sqcq_free_info free;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, union st_args);
} scratch SEC(".maps");

/* Copy an ioctl argument of @size bytes from user space. */
static __always_inline union st_args *args_read(__u64 uptr, __u32 size)
{
	__u32 zero = 0;
	union st_args *a = bpf_map_lookup_elem(&scratch, &zero);

	if (!a)
		return NULL;
	if (bpf_probe_read_user(a, size & 127, (void *)uptr))
		return NULL;
	return a;
}

#define CNT_ADD(field, v)						\
	do {								\
		__u32 __z = 0;						\
		struct steptime_counters *__c;				\
		__c = bpf_map_lookup_elem(&counters, &__z);		\
		if (__c)						\
			__c->field += (v);				\
	} while (0)
#define CNT_INC(field) CNT_ADD(field, 1)

/* ---------------------------------------------------------------------- */
/* Process identity (design-notes: containers)                            */
/* ---------------------------------------------------------------------- */

/*
 * The (PID-namespace inode, tgid in that namespace) pair that user space
 * gets from stat("/proc/self/ns/pid") and getpid().
 */
static __always_inline void task_ns_ident(struct task_struct *task,
					  __u32 *ino, __u32 *nr)
{
	struct pid *pid = BPF_CORE_READ(task, group_leader, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid up = {};

	/* numbers[] is a flexible array: index it by hand. */
	bpf_probe_read_kernel(&up, sizeof(up), (void *)pid +
			      bpf_core_field_offset(struct pid, numbers) +
			      (__u64)(level & 31) * sizeof(struct upid));
	*nr = up.nr;
	*ino = BPF_CORE_READ(up.ns, ns.inum);
}

static __always_inline struct st_proc *proc_get(__u32 tgid)
{
	struct task_struct *task;
	struct st_proc *p, *np;
	__u32 zero = 0;

	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p)
		return p;
	/* Too big for the stack: built in a per-CPU scratch entry. */
	np = bpf_map_lookup_elem(&proc_scratch, &zero);
	if (!np)
		return NULL;
	__builtin_memset(np, 0, sizeof(*np));
	task = (struct task_struct *)bpf_get_current_task();
	task_ns_ident(task, &np->pidns_ino, &np->ns_tgid);
	if (bpf_map_update_elem(&procs, &tgid, np, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&procs, &tgid)) {
		CNT_INC(proc_map_full);
		return NULL;
	}
	return bpf_map_lookup_elem(&procs, &tgid);
}

/* ---------------------------------------------------------------------- */
/* Steps                                                                   */
/* ---------------------------------------------------------------------- */

static __always_inline void step_emit(struct steptime_step_stats *rec)
{
	if (bpf_ringbuf_output(&events, rec, sizeof(*rec), 0))
		CNT_INC(events_dropped);
}

/*
 * Make room for a new record of @p: past its cap, its own oldest record
 * goes (emitted first as incomplete if it was still open).
 */
static __always_inline void step_recycle(struct st_proc *p, __u32 tgid,
					 __u32 n)
{
	struct steptime_step_key key = { .tgid = tgid };
	struct steptime_step_stats *old;

	if (n < STEPTIME_PROC_STEPS)
		return;
	key.index_id = p->recs[n % STEPTIME_PROC_STEPS];
	old = bpf_map_lookup_elem(&steps, &key);
	if (!old)
		return;
	if (old->state == STEPTIME_STEP_OPEN) {
		old->state = STEPTIME_STEP_INCOMPLETE;
		CNT_INC(steps_recycled_open);
		step_emit(old);
	}
	CNT_INC(steps_recycled);
	bpf_map_delete_elem(&steps, &key);
}

/* Insert a zeroed record; when the map is full, evict an exited one. */
static __always_inline int step_insert(struct steptime_step_key *key,
				       void *img)
{
	struct steptime_step_key old;
	int i;

	for (i = 0; i < 4; i++) {
		if (!bpf_map_update_elem(&steps, key, img, BPF_NOEXIST))
			return 0;
		if (bpf_map_lookup_elem(&steps, key))
			return 1;
		if (bpf_map_pop_elem(&retired, &old))
			break;
		/* Gone already when its process's pid came back. */
		if (!bpf_map_delete_elem(&steps, &old))
			CNT_INC(steps_evicted_exited);
	}
	return 2;
}

/*
 * A step record of process @tgid. Records are created only for a tracked
 * process (@p, else looked up), at most STEPTIME_PROC_STEPS of them
 * each: whatever a process marks or submits, it can only evict its own.
 */
static __always_inline struct steptime_step_stats *
step_get(__u32 tgid, __u64 index_id, struct st_proc *p, bool create)
{
	struct steptime_step_key key = { .tgid = tgid, .index_id = index_id };
	struct steptime_step_stats *rec;
	__u32 zero = 0, n;
	void *img;
	int err;

	rec = bpf_map_lookup_elem(&steps, &key);
	if (rec || !create)
		return rec;
	if (!p)
		p = bpf_map_lookup_elem(&procs, &tgid);
	img = bpf_map_lookup_elem(&zero_step, &zero);
	if (!p || !img)
		return NULL;
	n = __sync_fetch_and_add(&p->nrecs, 1);
	step_recycle(p, tgid, n);
	err = step_insert(&key, img);
	if (err == 1)
		return bpf_map_lookup_elem(&steps, &key);
	if (err) {
		CNT_INC(step_map_full);
		return NULL;
	}
	p->recs[n % STEPTIME_PROC_STEPS] = index_id;
	rec = bpf_map_lookup_elem(&steps, &key);
	if (rec) {
		rec->tgid = tgid;
		rec->index_id = index_id;
		rec->stream = STEPTIME_STREAM_NONE;
		rec->ns_tgid = p->ns_tgid;
		rec->pidns_ino = p->pidns_ino;
		CNT_INC(steps);
	}
	return rec;
}

/* Ended (a host or device END), and every task of it complete. */
static __always_inline void step_try_finish(struct steptime_step_stats *rec)
{
	__u32 f = rec->flags;

	if (rec->state != STEPTIME_STEP_OPEN)
		return;
	if (!(f & (STEPTIME_F_HOST_END | STEPTIME_F_DEV_END)))
		return;
	if ((f & STEPTIME_F_STREAM) && !(f & STEPTIME_F_DEV_END))
		return;
	if (rec->completions < rec->tasks)
		return;
	rec->state = STEPTIME_STEP_DONE;
	CNT_INC(steps_done);
	step_emit(rec);
}

static __always_inline __u64 ticks_to_ns(__u64 ticks)
{
	__u64 f = counter_freq_hz;

	if (!f)
		return 0;
	return ticks / f * 1000000000ull + ticks % f * 1000000000ull / f;
}

static __always_inline void step_set_device_time(struct steptime_step_stats *rec)
{
	if ((rec->flags & STEPTIME_F_DEV_START) &&
	    (rec->flags & STEPTIME_F_DEV_END) &&
	    rec->dev_end_ticks >= rec->dev_start_ticks)
		rec->device_time_ns = ticks_to_ns(rec->dev_end_ticks -
						  rec->dev_start_ticks);
}

/* ---------------------------------------------------------------------- */
/* Host marks: the step API's ring in the mmapped marks map                */
/* ---------------------------------------------------------------------- */

/*
 * Device times read back from timeline events (steptime/abi.h): exact to
 * their 1 us resolution, and preferred over place-holder reports, which a
 * CANN host never produces. Stored as counter values when the counter
 * frequency is a whole number of MHz; device_time_ns in any case.
 */
static __always_inline void mark_dev_time(struct steptime_step_stats *rec,
					  struct steptime_mark *m)
{
	__u64 per_us = counter_freq_hz / 1000000;
	bool start = m->tag == STEPTIME_TAG_DEV_START;

	if (!(rec->flags & STEPTIME_F_DEV_EVENT))
		rec->flags &= ~(STEPTIME_F_DEV_START | STEPTIME_F_DEV_END);
	rec->flags |= STEPTIME_F_DEV_EVENT | STEPTIME_F_STREAM |
		      (start ? STEPTIME_F_DEV_START : STEPTIME_F_DEV_END);
	if (start)
		rec->dev_start_ticks = m->time_ns;
	else
		rec->dev_end_ticks = m->time_ns;
	if (m->stream != STEPTIME_STREAM_NONE)
		rec->stream = m->stream;
	if (!(rec->flags & STEPTIME_F_DEV_START) ||
	    !(rec->flags & STEPTIME_F_DEV_END))
		return;
	if (rec->dev_end_ticks >= rec->dev_start_ticks)
		rec->device_time_ns = (rec->dev_end_ticks -
				       rec->dev_start_ticks) * 1000;
	if (per_us && per_us * 1000000 == counter_freq_hz) {
		rec->dev_start_ticks *= per_us;
		rec->dev_end_ticks *= per_us;
	} else {
		/* In microseconds they would be read as ticks: absent. */
		rec->dev_start_ticks = 0;
		rec->dev_end_ticks = 0;
	}
	step_try_finish(rec);
}

static __always_inline void mark_apply(struct st_proc *p, __u32 tgid,
				       struct steptime_mark *m)
{
	struct steptime_step_stats *rec;

	if (m->tag == STEPTIME_TAG_DEV_START || m->tag == STEPTIME_TAG_DEV_END) {
		/* Only for a step this process has. */
		rec = step_get(tgid, m->index_id, p, false);
		if (rec)
			mark_dev_time(rec, m);
		return;
	}
	if (m->tag != STEPTIME_TAG_START)
		m->tag = STEPTIME_TAG_END;
	rec = step_get(tgid, m->index_id, p, true);
	if (m->tag == STEPTIME_TAG_START) {
		if (p->cur_open && p->cur_index != m->index_id)
			p->prev_index = p->cur_index;
		p->cur_index = m->index_id;
		p->cur_open = 1;
		if (!rec)
			return;
		rec->host_start_ns = m->time_ns;
		rec->flags |= STEPTIME_F_HOST_START;
		if (m->stream != STEPTIME_STREAM_NONE)
			rec->stream = m->stream;
		if (p->last_end_ns && m->time_ns >= p->last_end_ns) {
			rec->gap_ns = m->time_ns - p->last_end_ns;
			rec->flags |= STEPTIME_F_GAP;
		}
		return;
	}
	p->last_end_ns = m->time_ns;
	if (p->cur_index == m->index_id && p->cur_open) {
		p->cur_open = 0;
		p->prev_index = p->cur_index;
	}
	if (!rec)
		return;
	rec->host_end_ns = m->time_ns;
	rec->flags |= STEPTIME_F_HOST_END;
	if (m->stream != STEPTIME_STREAM_NONE)
		rec->stream = m->stream;
	step_try_finish(rec);
}

/*
 * STEPTIME_IOC_RING from the process itself: bind the ring at @addr in its
 * own memory, if its header names this process as the kernel sees it.
 * Nothing but the process can make this call for itself, so nothing but
 * the process can say where its marks are.
 */
static __noinline void proc_ring_bind(struct st_proc *p, __u64 addr)
{
	/* The header of struct steptime_ring, up to res[]. */
	struct {
		__u32 magic, version, pidns_ino, ns_tgid;
		__u64 head, base;
	} h;

	_Static_assert(sizeof(h) == 32, "struct steptime_ring header");
	if (addr == p->ring)
		return;		/* a flush: proc_sync() follows */
	if (bpf_probe_read_user(&h, sizeof(h), (void *)addr) ||
	    h.magic != STEPTIME_RING_MAGIC ||
	    h.version != STEPTIME_ABI_VERSION ||
	    h.pidns_ino != p->pidns_ino || h.ns_tgid != p->ns_tgid ||
	    h.head < h.base) {
		CNT_INC(ring_rejected);
		return;
	}
	if (__sync_lock_test_and_set(&p->busy, 1))
		return;
	p->ring = addr;
	p->seen = h.base;
	CNT_INC(rings);
	asm volatile("" ::: "memory");
	p->busy = 0;
}

/* The ring's head, read from the process's memory (it is current). */
static __always_inline int ring_head(struct st_proc *p, __u64 *head)
{
	return bpf_probe_read_user(head, sizeof(*head), (void *)(p->ring +
				   offsetof(struct steptime_ring, head)));
}

static __always_inline struct steptime_mark *ring_entry(struct st_proc *p,
							 __u64 pos)
{
	return (struct steptime_mark *)(p->ring +
		offsetof(struct steptime_ring, ring) +
		(pos % STEPTIME_MARK_RING) * sizeof(struct steptime_mark));
}

/*
 * Consume the marks a process wrote since the last event, in order. Only
 * while it is the current process: its ring is an address in its memory.
 */
static __noinline void proc_sync(struct st_proc *p, __u32 tgid)
{
	struct steptime_mark m;
	__u64 head, seen, seq;
	int i;

	if (!p->ring || (bpf_get_current_pid_tgid() >> 32) != tgid)
		return;
	if (ring_head(p, &head)) {
		CNT_INC(hook_errors);
		return;
	}
	if (head == p->seen)
		return;
	/* One CPU at a time consumes a process's marks. */
	if (__sync_lock_test_and_set(&p->busy, 1))
		return;
	seen = p->seen;
	if (head < seen) {
		/* The process rewound its own ring: it loses its own marks. */
		CNT_INC(marks_lost);
		seen = head;
	}
	if (head - seen > STEPTIME_MARK_RING) {
		CNT_ADD(marks_lost, head - seen - STEPTIME_MARK_RING);
		seen = head - STEPTIME_MARK_RING;
	}
	for (i = 0; i < STEPTIME_MARK_RING; i++) {
		struct steptime_mark *e;

		if (seen >= head)
			break;
		e = ring_entry(p, seen);
		if (bpf_probe_read_user(&m, sizeof(m), e) ||
		    bpf_probe_read_user(&seq, sizeof(seq), &e->seq)) {
			CNT_INC(hook_errors);
			break;
		}
		if (m.seq != seen + 1 || seq != m.seq) {
			if (m.seq < seen + 1 && seq == m.seq)
				break;	/* reserved, not yet written */
			CNT_INC(marks_lost);	/* overwritten, or torn */
			seen++;
			continue;
		}
		mark_apply(p, tgid, &m);
		CNT_INC(marks);
		seen++;
	}
	p->seen = seen;
	/* No store-release in BPF (clang 14): a compiler barrier, then a store. */
	asm volatile("" ::: "memory");
	p->busy = 0;
}

/*
 * The step open in a process now, for attributing its tasks. Normally the
 * consumed state; but while another CPU is still consuming this process's
 * marks (proc_sync() found it busy), that state may lag the marks its
 * threads already wrote, so the pending ones are read, not consumed: only
 * while the process is current, as in proc_sync().
 */
static __always_inline __u64 proc_open_step(struct st_proc *p, __u32 tgid)
{
	__u64 index_id = p->cur_open ? p->cur_index : 0;
	struct steptime_mark m;
	__u64 seen, head;
	int i;

	if (!p->ring || (bpf_get_current_pid_tgid() >> 32) != tgid)
		return index_id;
	seen = READ_ONCE(p->seen);
	if (ring_head(p, &head))
		return index_id;
	for (i = 0; i < STEPTIME_MARK_RING && seen + i < head; i++) {
		if (bpf_probe_read_user(&m, sizeof(m), ring_entry(p, seen + i)) ||
		    m.seq != seen + i + 1)
			break;
		if (m.tag == STEPTIME_TAG_START)
			index_id = m.index_id;
		else if (m.tag < STEPTIME_TAG_DEV_START && m.index_id == index_id)
			index_id = 0;
	}
	return index_id;
}

/* ---------------------------------------------------------------------- */
/* SQs and tasks                                                           */
/* ---------------------------------------------------------------------- */

static __always_inline struct st_sq *sq_create(__u32 sq_id, __u32 tgid,
					       __u32 depth, __u32 flags)
{
	struct st_sq *sq;
	__u32 zero = 0;
	void *img;

	img = bpf_map_lookup_elem(&zero_sq, &zero);
	if (!img)
		return NULL;
	/* A new ALLOC of the id replaces whatever a lost FREE left behind. */
	if (bpf_map_update_elem(&sqs, &sq_id, img, BPF_ANY)) {
		CNT_INC(sq_map_full);
		return NULL;
	}
	sq = bpf_map_lookup_elem(&sqs, &sq_id);
	if (!sq)
		return NULL;
	sq->sq_id = sq_id;
	sq->tgid = tgid;
	sq->depth = depth && depth <= TRS_SQ_MAX_DEPTH ? depth :
		    TRS_SQ_MAX_DEPTH;
	sq->flags = flags;
	sq->created_ns = bpf_ktime_get_ns();
	return sq;
}

static __always_inline __u32 lat_bucket(__u64 ns)
{
	__u32 b = 0, shift;

	/* log2 by halving: six steps, unrolled by the compiler */
	for (shift = 32; shift; shift >>= 1) {
		if (ns >> shift) {
			b += shift;
			ns >>= shift;
		}
	}
	return b < STEPTIME_LAT_BUCKETS ? b : STEPTIME_LAT_BUCKETS - 1;
}

/* State shared by the per-SQE loop of a SEND. */
struct st_send_ctx {
	struct st_sq *sq;
	struct st_proc *p;
	__u64 rec_index;			/* step of the tasks counted... */
	__u64 rec_tasks;			/* ...not yet added to it */
	__u64 ioctl_index;			/* step the SEND's time goes to */
	__u64 host_index;			/* host-marked step open, or 0 */
	__u64 sqe_addr;
	__u64 enter_ns;
	__u32 pos;
	__u32 depth;
	__u32 tgid;
	__u32 in_step;
	__u32 outside;
	__u32 marks;
	__u32 internal;
	int fault;
};

struct st_sqe_head {
	__u8	type;
	__u8	flags;
	__u16	block_dim;
	__u16	stream_id;
	__u16	task_id;
};

struct st_sqe_mark {
	__u64	profiler_trace_id;
	__u64	model_id;
	__u16	tag_id;
};

/*
 * Tasks are counted per step in the SEND's context and added to the step's
 * record once per step and SEND: one hash lookup and one atomic add, not
 * one per SQE.
 */
static __always_inline void send_flush(struct st_send_ctx *x)
{
	struct steptime_step_stats *rec;

	if (!x->rec_tasks)
		return;
	rec = step_get(x->tgid, x->rec_index, x->p, true);
	if (rec) {
		__sync_fetch_and_add(&rec->tasks, x->rec_tasks);
		if (!rec->first_submit_ns)
			rec->first_submit_ns = x->enter_ns;
		rec->last_submit_ns = x->enter_ns;
	}
	x->rec_tasks = 0;
}

static __always_inline void send_count(struct st_send_ctx *x, __u64 index_id)
{
	if (index_id != x->rec_index) {
		send_flush(x);
		x->rec_index = index_id;
	}
	x->rec_tasks++;
	x->ioctl_index = index_id;
}

/* A place-holder SQE of task type 26 is a stream-ordered step mark. */
static __always_inline void send_mark(struct st_send_ctx *x, struct st_task *t,
				      struct st_sqe_head *h, __u64 addr)
{
	struct steptime_step_stats *rec;
	struct st_sq *sq = x->sq;
	struct st_sqe_mark m = {};

	if (bpf_probe_read_user(&m, sizeof(m), (void *)(addr + 16))) {
		x->fault = 1;
		return;
	}
	t->index_id = m.profiler_trace_id;
	x->marks++;
	x->ioctl_index = m.profiler_trace_id;
	rec = step_get(x->tgid, m.profiler_trace_id, x->p, true);
	if (rec) {
		rec->flags |= STEPTIME_F_STREAM;
		rec->stream = h->stream_id;
	}
	if (m.tag_id == STEPTIME_TAG_START) {
		t->flags |= ST_TASK_MARK_START;
		sq->stream_open = 1;
		sq->stream_index = m.profiler_trace_id;
	} else {
		t->flags |= ST_TASK_MARK_END;
		if (sq->stream_index == m.profiler_trace_id)
			sq->stream_open = 0;
	}
}

static long send_one(__u32 i, void *arg)
{
	struct st_send_ctx *x = arg;
	struct st_sq *sq = x->sq;
	struct st_sqe_head h;
	struct st_task *t;
	__u64 addr, index_id = 0;
	__u32 pos;

	if (!sq)
		return 1;
	addr = x->sqe_addr + (__u64)i * TRS_SQE_SIZE;
	if (bpf_probe_read_user(&h, sizeof(h), (void *)addr)) {
		x->fault = 1;
		return 1;
	}
	pos = x->pos + i;
	if (pos >= x->depth)
		pos -= x->depth;
	t = &sq->t[pos & (TRS_SQ_MAX_DEPTH - 1)];
	if (t->flags & ST_TASK_VALID)
		CNT_INC(task_overwritten);
	t->submit_ns = x->enter_ns;
	t->tgid = x->tgid;
	t->stream_id = h.stream_id;
	t->task_id = h.task_id;
	t->sqe_type = h.type & TRS_SQE_TYPE_MASK;
	t->flags = ST_TASK_VALID;
	t->index_id = 0;

	/*
	 * Place-holders are the runtime's own (step marks, stream syncs),
	 * not the application's tasks: tracked for their reports, not
	 * counted in any step.
	 */
	if (t->sqe_type == TRS_SQE_PLACE_HOLDER) {
		if (h.block_dim == TRS_TASK_PROFILER_TRACE_EX)
			send_mark(x, t, &h, addr);
		else
			x->internal++;
		return 0;
	}
	if (sq->stream_open)
		index_id = sq->stream_index;
	else
		index_id = x->host_index;
	if (!index_id) {
		x->outside++;
		return 0;
	}
	t->index_id = index_id;
	t->flags |= ST_TASK_IN_STEP;
	x->in_step++;
	send_count(x, index_id);
	return 0;
}

static __always_inline void send_fallback(struct st_send_ctx *x, __u32 i,
					  __u32 n)
{
	if (i < n && !x->fault)
		send_one(i, x);
}

static __always_inline void on_send(struct st_call *c, struct st_proc *p,
				    __u32 tgid, __u64 now)
{
	struct steptime_step_stats *rec;
	struct trs_task_send_info *si;
	struct st_send_ctx x = {};
	union st_args *a;
	__u32 n, bound, sq_id;

	a = args_read(c->arg, sizeof(a->send));
	if (!a) {
		CNT_INC(hook_errors);
		return;
	}
	si = &a->send;
	CNT_INC(sends);
	x.p = p;
	x.host_index = p ? proc_open_step(p, tgid) : 0;
	x.rec_index = opaque_zero;
	x.rec_tasks = opaque_zero;
	x.ioctl_index = opaque_zero;
	sq_id = si->sqId;
	x.sq = bpf_map_lookup_elem(&sqs, &sq_id);
	if (!x.sq)
		x.sq = sq_create(sq_id, tgid, 0, 0);
	if (!x.sq)
		return;
	x.tgid = tgid;
	x.depth = x.sq->depth;
	x.pos = si->pos < x.depth ? si->pos : 0;
	x.sqe_addr = si->sqe_addr;
	x.enter_ns = c->enter_ns;
	n = si->sqe_num;
	bound = has_bpf_loop ? STEPTIME_LOOP_MAX : STEPTIME_LOOP_FALLBACK;
	if (n > x.depth)
		n = x.depth;
	if (has_bpf_loop) {
		bpf_loop(n < bound ? n : bound, send_one, &x, 0);
	} else {
		/*
		 * Written out: a counted loop around this call spills its
		 * counter where the verifier loses it ("infinite loop").
		 */
		_Static_assert(STEPTIME_LOOP_FALLBACK == 4, "one line each");
		send_fallback(&x, 0, n);
		send_fallback(&x, 1, n);
		send_fallback(&x, 2, n);
		send_fallback(&x, 3, n);
	}
	send_flush(&x);
	if (x.fault)
		CNT_INC(hook_errors);
	if (n > bound) {
		/* Counted in the step, but neither matched nor timed. */
		CNT_ADD(tasks_untracked, n - bound);
		rec = x.rec_index ? step_get(tgid, x.rec_index, p, false) :
				    NULL;
		if (rec) {
			__sync_fetch_and_add(&rec->tasks, n - bound);
			__sync_fetch_and_add(&rec->completions, n - bound);
		}
	}
	x.sq->tail = (x.pos + n) % (x.depth ? x.depth : 1);
	CNT_ADD(tasks, n - x.marks - x.internal);
	CNT_ADD(tasks_in_step, x.in_step);
	CNT_ADD(tasks_outside_step, x.outside);
	CNT_ADD(stream_marks, x.marks);

	/* The ioctl's own cost belongs to the step its tasks went to. */
	rec = x.ioctl_index ? step_get(tgid, x.ioctl_index, p, false) : NULL;
	if (rec) {
		__sync_fetch_and_add(&rec->submit_ioctls, 1);
		__sync_fetch_and_add(&rec->submit_ioctl_ns, now - c->enter_ns);
	}
}

/* ---------------------------------------------------------------------- */
/* Completions                                                             */
/* ---------------------------------------------------------------------- */

struct st_recv_ctx {
	struct st_sq *sq;
	__u64 now;
	__u64 cqe_addr;
	struct trs_logic_cqe cqe;	/* the report being applied */
	__u32 cur;			/* next SQ position to complete */
	__u32 target;			/* the report's sq_head */
	__u32 found;			/* the report's own task was found */
	__u32 cancel;			/* FREE: complete as cancelled */
	__u32 completions;
};

static __always_inline void task_complete(struct st_recv_ctx *x,
					  struct st_task *t, bool own)
{
	struct steptime_step_stats *rec;
	__u32 err = own ? x->cqe.error_code : 0;
	__u64 lat;

	x->completions++;
	if (t->flags & (ST_TASK_MARK_START | ST_TASK_MARK_END)) {
		if (!own || err || x->cancel)
			return;
		rec = step_get(t->tgid, t->index_id, NULL, true);
		/* Timeline events, where the step API has them, win. */
		if (!rec || (rec->flags & STEPTIME_F_DEV_EVENT))
			return;
		if (t->flags & ST_TASK_MARK_START) {
			rec->dev_start_ticks = x->cqe.timestamp;
			rec->flags |= STEPTIME_F_DEV_START;
		} else {
			rec->dev_end_ticks = x->cqe.timestamp;
			rec->flags |= STEPTIME_F_DEV_END;
		}
		step_set_device_time(rec);
		step_try_finish(rec);
		return;
	}
	if (!(t->flags & ST_TASK_IN_STEP))
		return;
	rec = step_get(t->tgid, t->index_id, NULL, false);
	if (!rec)
		return;
	__sync_fetch_and_add(&rec->completions, 1);
	if (own)
		__sync_fetch_and_add(&rec->reported, 1);
	if (err || x->cancel)
		__sync_fetch_and_add(&rec->errors, 1);
	if (x->cancel) {
		step_try_finish(rec);
		return;
	}
	if (x->now > rec->last_complete_ns)
		rec->last_complete_ns = x->now;
	lat = x->now - t->submit_ns;
	__sync_fetch_and_add(&rec->lat_sum_ns, lat);
	__sync_fetch_and_add(&rec->lat_hist[lat_bucket(lat)], 1);
	step_try_finish(rec);
}

/* Complete the task at x->cur; stop at the report's sq_head. */
static long complete_one(__u32 i, void *arg)
{
	struct st_recv_ctx *x = arg;
	struct st_sq *sq = x->sq;
	struct st_task *t;
	bool own;

	if (!sq || x->cur == x->target)
		return 1;
	t = &sq->t[x->cur & (TRS_SQ_MAX_DEPTH - 1)];
	if (t->flags & ST_TASK_VALID) {
		own = !x->found && !x->cancel &&
		      t->stream_id == x->cqe.stream_id &&
		      t->task_id == x->cqe.task_id;
		if (own)
			x->found = 1;
		task_complete(x, t, own);
		t->flags = 0;
	}
	/*
	 * A modulo, not "cur + 1 < depth ? cur + 1 : 0": kernels since 6.8
	 * verify bpf_loop callbacks iteratively, and a known 0 would make
	 * every iteration's state distinct.
	 */
	x->cur = (x->cur + 1) % sq->depth;
	return 0;
}

static __always_inline void sq_advance(struct st_recv_ctx *x)
{
	__u32 i;

	x->cur = x->sq->done_head;
	if (has_bpf_loop) {
		bpf_loop(STEPTIME_LOOP_MAX, complete_one, x, 0);
	} else {
		/* Unrolled: nothing for the verifier to prove about a counter. */
#pragma clang loop unroll(full)
		for (i = 0; i < STEPTIME_LOOP_FALLBACK; i++)
			if (complete_one(i, x))
				break;
	}
	x->sq->done_head = x->cur;
}

/*
 * A mapped (UIO) SQ is never seen at SEND: each report is one task, which
 * goes to the step open in the SQ owner's process when it completes.
 */
static __always_inline void uio_complete(struct st_sq *sq,
					 struct trs_logic_cqe *cqe, __u64 now)
{
	struct steptime_step_stats *rec;
	struct st_proc *p;
	__u64 index_id;

	CNT_INC(uio_completions);
	CNT_INC(completions);
	p = bpf_map_lookup_elem(&procs, &sq->tgid);
	if (!p)
		return;
	proc_sync(p, sq->tgid);
	index_id = proc_open_step(p, sq->tgid);
	if (!index_id)
		return;
	rec = step_get(sq->tgid, index_id, p, true);
	if (!rec)
		return;
	rec->flags |= STEPTIME_F_UIO;
	__sync_fetch_and_add(&rec->tasks, 1);
	__sync_fetch_and_add(&rec->completions, 1);
	__sync_fetch_and_add(&rec->reported, 1);
	if (cqe->error_code)
		__sync_fetch_and_add(&rec->errors, 1);
	if (!rec->first_submit_ns)
		rec->first_submit_ns = now;
	if (now > rec->last_complete_ns)
		rec->last_complete_ns = now;
}

static __always_inline void report_apply(struct st_recv_ctx *x)
{
	struct st_sq *sq;

	CNT_INC(reports);
	sq = bpf_map_lookup_elem(&sqs, &(__u32){ x->cqe.sq_id });
	if (!sq) {
		CNT_INC(reports_unmatched);
		return;
	}
	if (sq->flags & ST_SQ_UIO) {
		if (!cq_hook)
			uio_complete(sq, &x->cqe, x->now);
		return;
	}
	if (x->cqe.sq_head >= sq->depth) {
		CNT_INC(reports_unmatched);
		return;
	}
	x->sq = sq;
	x->target = x->cqe.sq_head;
	x->found = opaque_zero;
	sq_advance(x);
	if (!x->found)
		CNT_INC(reports_unmatched);
}

static long recv_one(__u32 i, void *arg)
{
	struct st_recv_ctx *x = arg;

	if (bpf_probe_read_user(&x->cqe, sizeof(x->cqe),
				(void *)(x->cqe_addr + (__u64)i * TRS_CQE_SIZE))) {
		CNT_INC(hook_errors);
		return 1;
	}
	report_apply(x);
	return 0;
}

static __always_inline void on_recv(struct st_call *c, __u64 now)
{
	struct trs_report_recv_info *ri;
	struct st_recv_ctx x = {};
	union st_args *a;
	__u32 n, i;

	a = args_read(c->arg, sizeof(a->recv));
	if (!a) {
		CNT_INC(hook_errors);
		return;
	}
	ri = &a->recv;
	CNT_INC(recvs);
	x.now = now;
	x.cqe_addr = ri->cqe_addr;
	n = ri->report_cqe_num < ri->cqe_num ? ri->report_cqe_num :
					       ri->cqe_num;
	if (n > STEPTIME_RECV_MAX) {
		CNT_ADD(reports_unread, n - STEPTIME_RECV_MAX);
		n = STEPTIME_RECV_MAX;
	}
	if (has_bpf_loop) {
		bpf_loop(n, recv_one, &x, 0);
	} else {
		/* Unrolled: nothing for the verifier to prove about a counter. */
#pragma clang loop unroll(full)
		for (i = 0; i < STEPTIME_RECV_FALLBACK; i++)
			if (i >= n || recv_one(i, &x))
				break;
		if (n > STEPTIME_RECV_FALLBACK)
			CNT_ADD(reports_unread, n - STEPTIME_RECV_FALLBACK);
	}
	CNT_ADD(completions, x.completions);
}

static __always_inline void on_alloc(struct st_call *c, __u32 tgid)
{
	struct trs_sqcq_alloc_info *ai;
	union st_args *a;

	a = args_read(c->arg, sizeof(a->alloc));
	if (!a) {
		CNT_INC(hook_errors);
		return;
	}
	ai = &a->alloc;
	sq_create(ai->sqId, tgid, ai->sqeDepth,
		  ai->flag & TRS_SQCQ_FLAG_SQ_MAPPED ? ST_SQ_UIO : 0);
}

/* Tasks still queued on a freed SQ were cancelled: they count as errors. */
static __always_inline void sq_cancel_all(struct st_sq *sq, __u64 now)
{
	struct st_recv_ctx x = {};

	x.sq = sq;
	x.now = now;
	x.cancel = 1;
	x.target = sq->tail;
	sq_advance(&x);
}

static __always_inline void on_free(struct st_call *c, __u64 now)
{
	union st_args *a;
	struct st_sq *sq;
	__u32 sq_id;

	a = args_read(c->arg, sizeof(a->free));
	if (!a) {
		CNT_INC(hook_errors);
		return;
	}
	sq_id = a->free.sqId;
	sq = bpf_map_lookup_elem(&sqs, &sq_id);
	/*
	 * The driver released the id before this exit ran: another thread's
	 * ALLOC may already hold it, with an entry made after this FREE
	 * began. That one is not ours to cancel.
	 */
	if (!sq || sq->created_ns > c->enter_ns)
		return;
	sq_cancel_all(sq, now);
	bpf_map_delete_elem(&sqs, &sq_id);
}

/* ---------------------------------------------------------------------- */
/* ioctl entry and exit, common to every attach mode                       */
/* ---------------------------------------------------------------------- */

static __always_inline bool cmd_tracked(__u32 cmd)
{
	return cmd == TRS_IOC_SQCQ_SEND || cmd == TRS_IOC_SQCQ_RECV ||
	       cmd == TRS_IOC_SQCQ_ALLOC || cmd == TRS_IOC_SQCQ_FREE ||
	       cmd == STEPTIME_IOC_RING;
}

/*
 * A matched ioctl's entry, kept for its exit: in task-local storage (a
 * pointer away from the task) where the kernel allows it, else in a hash.
 */
static __always_inline int ioctl_enter(__u32 cmd, __u64 arg)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_call *cp, c = {
		.arg = arg,
		.cmd = cmd,
		.enter_ns = bpf_ktime_get_ns(),
	};

	if (use_task_storage) {
		cp = bpf_task_storage_get(&call_store, bpf_get_current_task_btf(),
					  0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!cp) {
			CNT_INC(hook_errors);
			return 0;
		}
		*cp = c;
		return 0;
	}
	if (bpf_map_update_elem(&calls, &id, &c, BPF_ANY))
		CNT_INC(hook_errors);
	return 0;
}

/* The entry of the ioctl now exiting, consumed; false when none. */
static __always_inline bool call_take(struct st_call *c)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_call *cp;

	if (use_task_storage) {
		cp = bpf_task_storage_get(&call_store, bpf_get_current_task_btf(),
					  0, 0);
		if (!cp || !cp->cmd)
			return false;
		*c = *cp;
		cp->cmd = 0;
		return true;
	}
	cp = bpf_map_lookup_elem(&calls, &id);
	if (!cp)
		return false;
	*c = *cp;
	bpf_map_delete_elem(&calls, &id);
	return true;
}

/* A matched ioctl returned @ret: account for it. */
static __always_inline int ioctl_done(struct st_call *cp, long ret)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct steptime_counters *cnt;
	struct st_call c = *cp;
	struct st_proc *p;
	__u32 zero = 0;
	__u64 now;

	now = bpf_ktime_get_ns();
	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (cnt) {
		cnt->ioctls++;
		if (ret && c.cmd == TRS_IOC_SQCQ_SEND)
			cnt->send_errors++;
	}
	/* Marks written since this process's last ioctl take effect first. */
	p = proc_get(tgid);
	if (p && c.cmd == STEPTIME_IOC_RING)
		proc_ring_bind(p, c.arg);
	if (p)
		proc_sync(p, tgid);
	if (ret)
		return 0;
	switch (c.cmd) {
	case TRS_IOC_SQCQ_SEND:
		on_send(&c, p, tgid, now);
		break;
	case TRS_IOC_SQCQ_RECV:
		on_recv(&c, now);
		break;
	case TRS_IOC_SQCQ_ALLOC:
		on_alloc(&c, tgid);
		break;
	case TRS_IOC_SQCQ_FREE:
		on_free(&c, now);
		break;
	}
	return 0;
}

static __always_inline int ioctl_exit(long ret)
{
	struct st_call c;

	return call_take(&c) ? ioctl_done(&c, ret) : 0;
}

/*
 * RECV needs nothing from its entry (its reports are read at exit, at exit
 * time), so where the exit still sees the arguments (fexit, and the saved
 * registers of tp_btf and raw_tp), its entry is not kept at all: the
 * cheapest path for the ioctl a runtime calls most.
 */
static __always_inline int recv_exit(__u64 arg, long ret)
{
	struct st_call c = { .arg = arg, .cmd = TRS_IOC_SQCQ_RECV };

	return ioctl_done(&c, ret);
}

/*
 * The kernel's dev_t of the file behind a fd of the current task. With
 * @btf (tp_btf programs) the task's pointers are followed by direct loads;
 * elsewhere every step is a CO-RE read.
 */
static __always_inline __u32 fd_rdev(unsigned int fd, bool btf)
{
	struct file **fds, *file = NULL;
	struct fdtable *fdt;
	struct task_struct *task;

	if (btf) {
		task = bpf_get_current_task_btf();
		fdt = task->files->fdt;
		if (fd >= fdt->max_fds)
			return 0;
		fds = fdt->fd;
	} else {
		task = (struct task_struct *)bpf_get_current_task();
		fdt = BPF_CORE_READ(task, files, fdt);
		if (fd >= BPF_CORE_READ(fdt, max_fds))
			return 0;
		fds = BPF_CORE_READ(fdt, fd);
	}
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	if (!file)
		return 0;
	return BPF_CORE_READ(file, f_inode, i_rdev);
}

static __always_inline int sys_ioctl_enter(__u64 fd, __u64 cmd, __u64 arg,
					   bool btf)
{
	/* Cheapest test first: most ioctls are not the driver's. */
	if (!cmd_tracked(cmd))
		return 0;
	if (fd_rdev(fd, btf) != target_rdev)
		return 0;
	return ioctl_enter(cmd, arg);
}

/* At exit, with the arguments (tp_btf, raw_tp): RECV is matched here. */
static __always_inline int sys_ioctl_exit(__u64 fd, __u64 cmd, __u64 arg,
					  long ret, bool btf)
{
	if (cmd != TRS_IOC_SQCQ_RECV)
		return cmd_tracked(cmd) ? ioctl_exit(ret) : 0;
	if (fd_rdev(fd, btf) != target_rdev)
		return 0;
	return recv_exit(arg, ret);
}

/* Mode 1: fentry/fexit on the driver's ioctl handler (target set at load). */
SEC("fentry")
int BPF_PROG(fentry_ioctl, struct file *file, unsigned int cmd,
	     unsigned long arg)
{
	if (!cmd_tracked(cmd) || cmd == TRS_IOC_SQCQ_RECV)
		return 0;
	return ioctl_enter(cmd, arg);
}

SEC("fexit")
int BPF_PROG(fexit_ioctl, struct file *file, unsigned int cmd,
	     unsigned long arg, long ret)
{
	if (cmd == TRS_IOC_SQCQ_RECV)
		return recv_exit(arg, ret);
	return cmd_tracked(cmd) ? ioctl_exit(ret) : 0;
}

/* Mode 2: kprobe/kretprobe on the same handler. */
SEC("kprobe")
int BPF_KPROBE(kprobe_ioctl, struct file *file, unsigned int cmd,
	       unsigned long arg)
{
	return cmd_tracked(cmd) ? ioctl_enter(cmd, arg) : 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(kretprobe_ioctl, long ret)
{
	return ioctl_exit(ret);
}

/* Mode 3: tp_btf on sys_enter/sys_exit, and raw_tp where BTF is missing. */
SEC("tp_btf/sys_enter")
int BPF_PROG(tpbtf_sys_enter, struct pt_regs *regs, long id)
{
	if (id != NR_IOCTL || SC_ARG1(regs) == TRS_IOC_SQCQ_RECV)
		return 0;
	return sys_ioctl_enter(SC_ARG0(regs), SC_ARG1(regs), SC_ARG2(regs),
			       true);
}

/* The saved registers still hold the arguments: untracked cmds stop here. */
SEC("tp_btf/sys_exit")
int BPF_PROG(tpbtf_sys_exit, struct pt_regs *regs, long ret)
{
	if (SC_NR(regs) != NR_IOCTL)
		return 0;
	return sys_ioctl_exit(SC_ARG0(regs), SC_ARG1(regs), SC_ARG2(regs),
			      ret, true);
}

SEC("raw_tp/sys_enter")
int BPF_PROG(rawtp_sys_enter, struct pt_regs *regs, long id)
{
	__u64 cmd;

	if (id != NR_IOCTL)
		return 0;
	cmd = PT_REGS_PARM2_CORE_SYSCALL(regs);
	if (cmd == TRS_IOC_SQCQ_RECV)
		return 0;
	return sys_ioctl_enter(PT_REGS_PARM1_CORE_SYSCALL(regs), cmd,
			       PT_REGS_PARM3_CORE_SYSCALL(regs), false);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(rawtp_sys_exit, struct pt_regs *regs, long ret)
{
	if (SC_CORE_NR(regs) != NR_IOCTL)
		return 0;
	return sys_ioctl_exit(PT_REGS_PARM1_CORE_SYSCALL(regs),
			      PT_REGS_PARM2_CORE_SYSCALL(regs),
			      PT_REGS_PARM3_CORE_SYSCALL(regs), ret, false);
}

/* Mode 4: the syscalls:sys_{enter,exit}_ioctl tracepoints. */
SEC("tracepoint/syscalls/sys_enter_ioctl")
int tp_sys_enter_ioctl(struct trace_event_raw_sys_enter *ctx)
{
	return sys_ioctl_enter(ctx->args[0], ctx->args[1], ctx->args[2],
			       false);
}

SEC("tracepoint/syscalls/sys_exit_ioctl")
int tp_sys_exit_ioctl(struct trace_event_raw_sys_exit *ctx)
{
	return ioctl_exit(ctx->ret);
}

/*
 * Completion hook (driver's trs_logic_cq_enque, npusim_logic_cq_enque):
 * called for every report as it is queued, also for SQs that user space
 * feeds without SEND (UIO). Only those are taken from here: the others are
 * read at RECV, where the process is known.
 */
static __always_inline int cq_enque(struct trs_logic_cqe *kcqe)
{
	struct trs_logic_cqe cqe;
	struct st_sq *sq;

	if (bpf_probe_read_kernel(&cqe, sizeof(cqe), kcqe))
		return 0;
	sq = bpf_map_lookup_elem(&sqs, &(__u32){ cqe.sq_id });
	if (sq && (sq->flags & ST_SQ_UIO))
		uio_complete(sq, &cqe, bpf_ktime_get_ns());
	return 0;
}

SEC("fentry")
int BPF_PROG(fentry_cq_enque, void *ts, __u32 logic_cq_id, __u32 stream_id,
	     __u32 task_id, struct trs_logic_cqe *cqe)
{
	return cq_enque(cqe);
}

SEC("kprobe")
int BPF_KPROBE(kprobe_cq_enque, void *ts, __u32 logic_cq_id, __u32 stream_id,
	       __u32 task_id, struct trs_logic_cqe *cqe)
{
	return cq_enque(cqe);
}

/* ---------------------------------------------------------------------- */
/* Process exit: close its open steps as incomplete, free its slot         */
/* ---------------------------------------------------------------------- */

static long drop_sq(struct bpf_map *map, __u32 *key, struct st_sq *sq,
		    __u32 *tgid)
{
	if (sq->tgid == *tgid)
		bpf_map_delete_elem(map, key);
	return 0;
}

static __always_inline void step_abandon(__u32 tgid, __u64 index_id)
{
	struct steptime_step_stats *rec;

	if (!index_id)
		return;
	rec = step_get(tgid, index_id, NULL, false);
	if (!rec || rec->state != STEPTIME_STEP_OPEN)
		return;
	rec->state = STEPTIME_STEP_INCOMPLETE;
	CNT_INC(steps_incomplete);
	step_emit(rec);
}

/* Its records stay readable, and are the first to go when room is needed. */
static __always_inline void steps_retire(struct st_proc *p, __u32 tgid)
{
	struct steptime_step_key key = { .tgid = tgid };
	__u32 n = p->nrecs, i;

	for (i = 0; i < STEPTIME_PROC_STEPS; i++) {
		if (i >= n)
			break;
		key.index_id = p->recs[(n - 1 - i) % STEPTIME_PROC_STEPS];
		if (bpf_map_lookup_elem(&steps, &key))
			bpf_map_push_elem(&retired, &key, BPF_EXIST);
	}
}

SEC("tracepoint/sched/sched_process_exit")
int tp_sched_process_exit(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct st_proc *p;

	/* Only the last thread of the process. */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 0;
	/* Its memory is gone: marks since exit_group() are lost. */
	step_abandon(tgid, p->cur_index);
	if (p->prev_index != p->cur_index)
		step_abandon(tgid, p->prev_index);
	steps_retire(p, tgid);
	bpf_map_delete_elem(&procs, &tgid);
	bpf_for_each_map_elem(&sqs, drop_sq, &tgid, 0);
	CNT_INC(proc_exits);
	return 0;
}

/*
 * exit() and _exit(): the last chance to read the process's marks, while
 * its memory still exists (sched_process_exit runs after exit_mm()).
 */
SEC("tracepoint/syscalls/sys_enter_exit_group")
int tp_sys_enter_exit_group(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct st_proc *p = bpf_map_lookup_elem(&procs, &tgid);

	if (p)
		proc_sync(p, tgid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
