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
#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))

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
const volatile __u64 counter_freq_hz;		/* 0: unknown, no device time */
const volatile bool has_bpf_loop = true;	/* bpf_loop(): 5.17+ */
const volatile bool cq_hook;			/* completion hook attached */
const volatile bool sqe_hook;			/* SQE trace hook attached */
const volatile __u32 stars_version = 1;		/* SQE header layout: 1, 2 */
/* Where the hooks' driver objects keep (devid, tsid); ~0: unknown. */
const volatile __u32 ts_inst_id_off = ~0u;	/* CQ hook's ts_inst */
const volatile __u32 chan_id_off = ~0u;		/* SQE trace hook's chan */

/* Owner numbers handed out at OPEN (and to files bound before load). */
__u64 owner_seq;
/*
 * Bumped after every replacement or deletion in files, cqs: what a thread
 * cached (st_cache, st_cache_way) is valid under the generation it read.
 */
__u64 files_gen;
__u64 cqs_gen;

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

/*
 * SQs, in the slots of an array; sq_index maps a key to its slot. A thread
 * caches its SQs' slots (queue_cache), so that its SENDs and RECVs find
 * their queue with inlined array lookups instead of a hash lookup (190
 * instructions), checked against the slot's key. A slot is taken in
 * sq_claims: an SQ's value is overwritten whole when a new SQ takes it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STEPTIME_MAX_SQS);
	__type(key, __u32);
	__type(value, struct st_sq);
} sqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_SQS);
	__type(key, struct st_qkey);
	__type(value, __u32);
} sq_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STEPTIME_MAX_SQS);
	__type(key, __u32);
	__type(value, __u32);
} sq_claims SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_CQS);
	__type(key, struct st_ckey);
	__type(value, struct st_cq);
} cqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_FILES);
	__type(key, __u64);
	__type(value, struct st_file);
} files SEC(".maps");

/* uio_t SQs, for the SQE trace hook; and SQs by id, for the CQ hook. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_SQS);
	__type(key, struct st_skey);
	__type(value, struct st_qkey);
} soft_sqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_SQS);
	__type(key, struct st_skey);
	__type(value, struct st_qkey);
} sq_ids SEC(".maps");

/*
 * Processes: each at its home slot (tgid modulo the size) or one of the
 * ST_PROC_PROBE - 1 after it. Every tracked ioctl looks its process up:
 * an inlined array lookup costs a few instructions, a hash lookup 150.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STEPTIME_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct st_proc);
} procs SEC(".maps");

/*
 * Each thread's slot, by its id: an inlined array lookup, where task
 * storage costs a helper call each way (and, before 6.2, a per-CPU trylock
 * that can fail: bpf_task_storage_trylock()). Of two threads inside
 * matched ioctls at once whose ids share a slot, the second keeps its entry
 * in the calls hash, which holds calls_hashed entries.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ST_THREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct st_thread);
} threads SEC(".maps");

/*
 * Each thread slot's queue cache: an array of its own, so that a way is
 * found by an inlined lookup, not a variable offset into the thread's
 * slot (which the verifier must track precisely: 6.18 walked 846,000
 * instructions of tp_btf's exit, not 470,000).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ST_THREAD_SLOTS * ST_CACHE_WAYS);
	__type(key, __u32);
	__type(value, struct st_cache_way);
} queue_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct st_call);
} calls SEC(".maps");

__u64 calls_hashed;

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
	struct trs_sqcq_query_info query;
	struct ascend_manager_arg open;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, union st_args);
} scratch SEC(".maps");

#define offsetofend(T, m)	(__builtin_offsetof(T, m) + sizeof(((T *)0)->m))

/*
 * Copy the first @size bytes of an ioctl argument from user space. A copy
 * costs per byte: the hot commands read up to their last field used.
 */
static __always_inline union st_args *args_read(__u64 uptr, __u32 size)
{
	__u32 zero = 0;
	union st_args *a = bpf_map_lookup_elem(&scratch, &zero);

	if (!a)
		return NULL;
	if (bpf_probe_read_user(a, size & 511, (void *)uptr))
		return NULL;
	return a;
}

static __always_inline struct st_thread *thread_slot(__u64 id)
{
	__u32 k = (__u32)id & (ST_THREAD_SLOTS - 1);

	return bpf_map_lookup_elem(&threads, &k);
}

/*
 * The cache of thread @id while it holds its slot (thread_get()), else
 * NULL. Looked up where it is used: a pointer or NULL kept live across an
 * exit's work would double the states the verifier walks.
 */
static __always_inline struct st_cache *thread_cache(__u64 id)
{
	struct st_thread *th = thread_slot(id);

	return th && READ_ONCE(th->busy) == id ? &th->cache : NULL;
}

/*
 * Way @way of thread @id's queue cache while it holds its slot, else NULL.
 * thread_cache()'s test, written out: one key on the stack for both
 * lookups (with thread_cache(), the deepest stack grew from 288 to 312
 * bytes, near 6.1's combined 512).
 */
static __always_inline struct st_cache_way *thread_way(__u64 id, __u32 way)
{
	__u32 k = (__u32)id & (ST_THREAD_SLOTS - 1);
	struct st_thread *th = bpf_map_lookup_elem(&threads, &k);

	if (!th || READ_ONCE(th->busy) != id)
		return NULL;
	k = k * ST_CACHE_WAYS + (way & (ST_CACHE_WAYS - 1));
	return bpf_map_lookup_elem(&queue_cache, &k);
}

/*
 * Add to a counter of this CPU's, through @cnt where the caller has it
 * (on 6.1, each lookup of a per-CPU array is a helper call), else looked up.
 */
#define CNT_ADD_AT(cnt, field, v)					\
	do {								\
		struct steptime_counters *__c = (cnt);			\
		__u32 __z = 0;						\
		if (!__c)						\
			__c = bpf_map_lookup_elem(&counters, &__z);	\
		if (__c)						\
			__c->field += (v);				\
	} while (0)
#define CNT_ADD(field, v) CNT_ADD_AT(NULL, field, v)
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

/*
 * The owner of the files the current task creates (kernel-wide, as
 * stat(2) reports it): its phase file among them (lib/tx.c).
 */
static __always_inline __u32 current_fsuid(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, cred, fsuid.val);
}

/*
 * The slot of process @tgid: its home slot (tgid modulo the size) or one
 * of the ST_PROC_PROBE - 1 after it; STEPTIME_MAX_PROCS when it has none.
 * Global functions, as proc_make(): verified once, not at each call site,
 * and their callers see one result, as from a hash lookup.
 */
__noinline __u32 proc_index(__u32 tgid)
{
	struct st_proc *p;
	__u32 i, k;

	if (!tgid)
		return STEPTIME_MAX_PROCS;	/* 0 marks a free slot */
	for (i = 0; i < ST_PROC_PROBE; i++) {
		k = (tgid + i) & (STEPTIME_MAX_PROCS - 1);
		p = bpf_map_lookup_elem(&procs, &k);
		if (p && READ_ONCE(p->tgid) == tgid)
			return k;
	}
	return STEPTIME_MAX_PROCS;
}

/*
 * Make process @tgid's entry, in the first free slot from its home on.
 * A free slot is zero (proc_free()) but for what its maker writes, which
 * every thread of the process writes alike: so two threads making it at
 * once both write it and publish it, and neither waits for the other.
 * Return: its slot; STEPTIME_MAX_PROCS when every slot it may take is
 * another process's (proc_map_full).
 */
__noinline __u32 proc_make(__u32 tgid)
{
	struct task_struct *task;
	__u32 holder, i, k, ino, nr, uid;
	struct st_proc *p;

	if (!tgid)
		return STEPTIME_MAX_PROCS;
	task = (struct task_struct *)bpf_get_current_task();
	task_ns_ident(task, &ino, &nr);
	uid = current_fsuid();
	for (i = 0; i < ST_PROC_PROBE; i++) {
		k = (tgid + i) & (STEPTIME_MAX_PROCS - 1);
		p = bpf_map_lookup_elem(&procs, &k);
		if (!p)
			break;
		holder = __sync_val_compare_and_swap(&p->claim, 0, tgid);
		if (holder && holder != tgid)
			continue;
		p->pidns_ino = ino;
		p->ns_tgid = nr;
		p->uid = uid;
		/* Fully ordered after the stores above; first one wins. */
		__sync_val_compare_and_swap(&p->tgid, 0, tgid);
		return k;
	}
	CNT_INC(proc_map_full);
	return STEPTIME_MAX_PROCS;
}

static __always_inline struct st_proc *proc_find(__u32 tgid)
{
	__u32 k = proc_index(tgid);

	return k < STEPTIME_MAX_PROCS ? bpf_map_lookup_elem(&procs, &k) : NULL;
}

/* Process @tgid's entry, made at its first tracked ioctl. */
static __always_inline struct st_proc *proc_get(__u32 tgid)
{
	__u32 k = proc_index(tgid);

	if (k >= STEPTIME_MAX_PROCS)
		k = proc_make(tgid);
	return k < STEPTIME_MAX_PROCS ? bpf_map_lookup_elem(&procs, &k) : NULL;
}

/*
 * The process has exited (its last thread): its slot is free for another,
 * zeroed first, as proc_make() needs it. Unpublished before it is
 * released, so that no one finds it half zeroed.
 */
static __always_inline void proc_free(struct st_proc *p)
{
	__sync_lock_test_and_set(&p->tgid, 0);
	__builtin_memset(p, 0, offsetof(struct st_proc, tgid));
	__sync_lock_test_and_set(&p->claim, 0);
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

/*
 * When the steps map is full: delete the oldest record of an exited
 * process. A queued key can name a record gone already, or one a new
 * process made again under the same key after it got the process id back
 * (step_get()): those are passed over, up to two processes' worth at a
 * time; past that, this step goes uncreated (step_map_full). A global
 * function: verified once, not at each of step_get()'s call sites.
 * Return: 0 when a record was deleted, else -1.
 */
#define STEP_EVICT_TRIES	(2 * STEPTIME_PROC_STEPS)

__noinline int step_evict_exited(void)
{
	struct steptime_step_stats *rec;
	struct steptime_step_key old;
	int i;

	for (i = 0; i < STEP_EVICT_TRIES; i++) {
		if (bpf_map_pop_elem(&retired, &old))
			return -1;
		rec = bpf_map_lookup_elem(&steps, &old);
		if (!rec || !(rec->flags & STEPTIME_F_EXITED))
			continue;
		if (!bpf_map_delete_elem(&steps, &old)) {
			CNT_INC(steps_evicted_exited);
			return 0;
		}
	}
	return -1;
}

/* Insert a zeroed record; when the map is full, evict an exited one. */
static __always_inline int step_insert(struct steptime_step_key *key,
				       void *img)
{
	if (!bpf_map_update_elem(&steps, key, img, BPF_NOEXIST))
		return 0;
	if (bpf_map_lookup_elem(&steps, key))
		return 1;
	if (step_evict_exited())
		return 2;
	return bpf_map_update_elem(&steps, key, img, BPF_NOEXIST) ? 2 : 0;
}

/*
 * A step record of process @tgid. Records are created only for a tracked
 * process (@p, else looked up), at most STEPTIME_PROC_STEPS of them
 * each: whatever a process marks or submits, it can only evict its own.
 * An exited process's records are final: a new process that got its
 * process id back and numbers its steps the same way gets new records,
 * never the old ones.
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
	if (rec && (rec->flags & STEPTIME_F_EXITED)) {
		if (!create)
			return NULL;
		if (!bpf_map_delete_elem(&steps, &key))
			CNT_INC(steps_pid_reused);
		rec = NULL;
	}
	if (rec || !create)
		return rec;
	if (!p)
		p = proc_find(tgid);
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
		rec->uid = p->uid;
		rec->flags |= p->taint;
		CNT_INC(steps);
	}
	return rec;
}

/*
 * Ended (a host or device END), and every task of it complete: DONE; or,
 * when it may have tasks the kernel never saw (F_UIO), ENDED.
 */
static __always_inline void step_try_finish(struct steptime_step_stats *rec)
{
	__u32 f = rec->flags;

	if (rec->state != STEPTIME_STEP_OPEN)
		return;
	if (!(f & (STEPTIME_F_HOST_END | STEPTIME_F_DEV_END |
		   STEPTIME_F_STREAM_END)))
		return;
	if ((f & STEPTIME_F_STREAM) &&
	    !(f & (STEPTIME_F_DEV_END | STEPTIME_F_STREAM_END)))
		return;
	if (rec->completions < rec->tasks)
		return;
	if (f & STEPTIME_F_UIO) {
		/* tasks the kernel never saw may still run: not DONE */
		rec->state = STEPTIME_STEP_ENDED;
		CNT_INC(steps_ended);
	} else {
		rec->state = STEPTIME_STEP_DONE;
		CNT_INC(steps_done);
	}
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
/* Host marks: the step API's ring, in the process's own memory           */
/* ---------------------------------------------------------------------- */

/*
 * Device times read back from timeline events (steptime/abi.h): exact (to
 * 1 us from a CANN runtime, to the tick from the npusim HAL), and
 * preferred over place-holder reports, which a CANN host never produces.
 * Both ends must come the same way; dev_*_ticks are counter values (from
 * microseconds only when the frequency is a whole number of MHz, else
 * absent), device_time_ns in any case.
 */
static __always_inline void mark_dev_time(struct steptime_step_stats *rec,
					  struct steptime_mark *m)
{
	__u64 per_us = counter_freq_hz / 1000000, d;
	bool ticks = m->tag >= STEPTIME_TAG_DEV_START_TICKS;
	bool start = m->tag == STEPTIME_TAG_DEV_START ||
		     m->tag == STEPTIME_TAG_DEV_START_TICKS;

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
	if (start || !(rec->flags & STEPTIME_F_DEV_START))
		return;
	if (rec->dev_end_ticks < rec->dev_start_ticks) {
		rec->flags &= ~(STEPTIME_F_DEV_START | STEPTIME_F_DEV_END);
		return;
	}
	d = rec->dev_end_ticks - rec->dev_start_ticks;
	if (ticks) {
		rec->device_time_ns = ticks_to_ns(d);
	} else {
		rec->device_time_ns = d * 1000;
		if (per_us && per_us * 1000000 == counter_freq_hz) {
			rec->dev_start_ticks *= per_us;
			rec->dev_end_ticks *= per_us;
		} else {
			/* Microseconds would read as ticks: absent. */
			rec->dev_start_ticks = 0;
			rec->dev_end_ticks = 0;
		}
	}
	step_try_finish(rec);
}

static __always_inline void mark_apply(struct st_proc *p, __u32 tgid,
				       struct steptime_mark *m)
{
	struct steptime_step_stats *rec;

	if (m->tag >= STEPTIME_TAG_DEV_START &&
	    m->tag <= STEPTIME_TAG_DEV_END_TICKS) {
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
	/*
	 * The user of the step API, who writes the phase file: not always
	 * who opened the device (a process may drop privileges in between).
	 */
	p->uid = current_fsuid();
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
 * while it is the current process (@tgid is the caller's own: both callers
 * look @p up by it): its ring is an address in its memory.
 * Return: 1 when every mark written was consumed (the consumed state is
 * the open step: proc_open_step() need not read the ring again), else 0.
 */
static __noinline int proc_sync(struct st_proc *p, __u32 tgid)
{
	struct steptime_mark m;
	__u64 head, seen, seq;
	int i;

	if (!p->ring)
		return 1;
	if (ring_head(p, &head)) {
		CNT_INC(hook_errors);
		return 0;
	}
	if (head == p->seen)
		return 1;
	/* One CPU at a time consumes a process's marks. */
	if (__sync_lock_test_and_set(&p->busy, 1))
		return 0;
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
	return seen == head;
}

/*
 * The step open in a process now, for attributing its tasks. Normally the
 * consumed state, which is current when @synced (proc_sync() consumed every
 * mark written); but while another CPU is still consuming this process's
 * marks (proc_sync() found it busy), that state may lag the marks its
 * threads already wrote, so the pending ones are read, not consumed: only
 * while the process is current, as in proc_sync().
 */
static __always_inline __u64 proc_open_step(struct st_proc *p, __u32 tgid,
					    bool synced)
{
	__u64 index_id = p->cur_open ? p->cur_index : 0;
	struct steptime_mark m;
	__u64 seen, head;
	int i;

	if (synced || !p->ring || (bpf_get_current_pid_tgid() >> 32) != tgid)
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
/* SQ slots                                                                */
/* ---------------------------------------------------------------------- */

static __always_inline bool qkey_eq(const struct st_qkey *a,
				    const struct st_qkey *b)
{
	return a->owner == b->owner && a->ts == b->ts && a->id == b->id;
}

/* The SQ of @key, or NULL. */
static __always_inline struct st_sq *sq_find(const struct st_qkey *key)
{
	__u32 *slot = bpf_map_lookup_elem(&sq_index, key);

	return slot ? bpf_map_lookup_elem(&sqs, slot) : NULL;
}

/*
 * The SQ of @key, for an ioctl of thread @id: by the slot in the thread's
 * cache while that slot holds the same SQ.
 */
static __always_inline struct st_sq *sq_find_cached(const struct st_qkey *key,
						    __u64 id)
{
	struct st_cache_way *w = thread_way(id, key->id);
	struct st_sq *sq;
	__u32 *slot;

	if (w && qkey_eq(&w->sq, key)) {
		sq = bpf_map_lookup_elem(&sqs, &w->sq_slot);
		if (sq && READ_ONCE(sq->live) && qkey_eq(&sq->key, key))
			return sq;
	}
	slot = bpf_map_lookup_elem(&sq_index, key);
	if (!slot)
		return NULL;
	if (w) {
		w->sq = *key;
		w->sq_slot = *slot;
	}
	return bpf_map_lookup_elem(&sqs, slot);
}

static long slot_take(struct bpf_map *map, __u32 *idx, __u32 *claim,
		      __u32 *slot)
{
	if (__sync_val_compare_and_swap(claim, 0, 1))
		return 0;
	*slot = *idx;
	return 1;
}

/* Take a free slot of sqs: its index, or STEPTIME_MAX_SQS when none. */
static __always_inline __u32 sq_slot_take(void)
{
	/* Unknown to the verifier: 6.8+ verifiers converge on it. */
	__u32 slot = STEPTIME_MAX_SQS + (__u32)opaque_zero;

	bpf_for_each_map_elem(&sq_claims, slot_take, &slot, 0);
	return slot;
}

static __always_inline void sq_slot_put(__u32 slot)
{
	struct st_sq *sq = bpf_map_lookup_elem(&sqs, &slot);
	__u32 *c = bpf_map_lookup_elem(&sq_claims, &slot);

	if (sq)
		WRITE_ONCE(sq->live, 0);
	if (c)
		__sync_lock_test_and_set(c, 0);
}

/* The SQ of @key is gone: its index entry, then its slot. */
static __always_inline void sq_delete(const struct st_qkey *key)
{
	__u32 *sp = bpf_map_lookup_elem(&sq_index, key), slot;

	if (!sp)
		return;
	slot = *sp;
	/* Of two CPUs deleting it, one frees the slot. */
	if (!bpf_map_delete_elem(&sq_index, key))
		sq_slot_put(slot);
}

/* ---------------------------------------------------------------------- */
/* Owners: the bound manager file each queue belongs to                    */
/* ---------------------------------------------------------------------- */

static long drop_owner_sq(struct bpf_map *map, __u32 *slot, struct st_sq *sq,
			  __u64 *owner)
{
	if (sq->live && sq->key.owner == *owner)
		sq_delete(&sq->key);
	return 0;
}

static long drop_owner_cq(struct bpf_map *map, struct st_ckey *key,
			  struct st_cq *cq, __u64 *owner)
{
	if (key->owner == *owner)
		bpf_map_delete_elem(map, key);
	return 0;
}

/*
 * OPEN bound @file to device @dev. A struct file is reused once closed: the
 * queues of whatever file held the pointer before are gone with it.
 */
static __always_inline void file_bind(__u64 file, __u32 dev, __u32 tgid)
{
	struct st_file *old, f = { .dev = dev, .tgid = tgid };
	__u64 prev;

	old = bpf_map_lookup_elem(&files, &file);
	if (old) {
		prev = old->owner;
		bpf_for_each_map_elem(&sqs, drop_owner_sq, &prev, 0);
		bpf_for_each_map_elem(&cqs, drop_owner_cq, &prev, 0);
	}
	f.owner = __sync_add_and_fetch(&owner_seq, 1);
	if (bpf_map_update_elem(&files, &file, &f, BPF_ANY))
		CNT_INC(file_map_full);
	if (old) {
		__sync_fetch_and_add(&files_gen, 1);
		__sync_fetch_and_add(&cqs_gen, 1);
	}
}

/*
 * The owner of a TRS command's file. A file with no OPEN seen was bound
 * before load: its device is unknown, and counted. @id: the thread, for
 * its cache.
 */
static __always_inline struct st_file *file_get(__u64 file, __u32 tgid,
						__u64 id)
{
	struct st_cache *tc = thread_cache(id);
	struct st_file *f, nf = {
		.dev = ST_DEV_UNKNOWN,
		.tgid = tgid,
		.flags = ST_FILE_PREEXISTING,
	};
	/* Read before the lookup: a change after it invalidates the copy. */
	__u64 gen = READ_ONCE(files_gen);

	if (tc && tc->file == file && tc->files_gen == gen)
		return &tc->f;
	f = bpf_map_lookup_elem(&files, &file);
	if (f) {
		if (tc) {
			tc->f = *f;
			tc->files_gen = gen;
			tc->file = file;
		}
		return f;
	}
	nf.owner = __sync_add_and_fetch(&owner_seq, 1);
	if (bpf_map_update_elem(&files, &file, &nf, BPF_NOEXIST) == 0)
		CNT_INC(files_preexisting);
	f = bpf_map_lookup_elem(&files, &file);
	if (!f)
		CNT_INC(file_map_full);
	return f;
}

/* ---------------------------------------------------------------------- */
/* SQs and tasks                                                           */
/* ---------------------------------------------------------------------- */

static __always_inline struct st_sq *sq_create(struct st_qkey *key,
					       struct st_file *f, __u32 tgid,
					       __u32 depth, __u32 flags)
{
	struct st_skey ik = {};
	__u32 zero = 0, slot, *sp;
	struct st_sq *sq;
	void *img;

	img = bpf_map_lookup_elem(&zero_sq, &zero);
	if (!img)
		return NULL;
	/* A new ALLOC of the id replaces whatever a lost FREE left behind. */
	sp = bpf_map_lookup_elem(&sq_index, key);
	slot = sp ? *sp : sq_slot_take();
	if (slot >= STEPTIME_MAX_SQS) {
		CNT_INC(sq_map_full);
		return NULL;
	}
	bpf_map_update_elem(&sqs, &slot, img, BPF_ANY);
	sq = bpf_map_lookup_elem(&sqs, &slot);
	if (!sq)
		return NULL;
	sq->key = *key;
	sq->tgid = tgid;
	sq->dev = f->dev;
	if (depth && depth <= ST_SQ_DEPTH) {
		sq->depth = depth;
		flags |= ST_SQ_KNOWN_DEPTH;
	} else {
		sq->depth = ST_SQ_DEPTH;
	}
	sq->flags = flags;
	sq->created_ns = bpf_ktime_get_ns();
	WRITE_ONCE(sq->live, 1);
	/* Another exit's ALLOC of the id got there first (as sq_raced()). */
	if (!sp && bpf_map_update_elem(&sq_index, key, &slot, BPF_NOEXIST)) {
		sq_slot_put(slot);
		CNT_INC(sqs_raced);
		return NULL;
	}
	if (f->dev != ST_DEV_UNKNOWN) {
		ik.dev = f->dev;
		ik.ts = key->ts;
		ik.id = key->id;
		bpf_map_update_elem(&sq_ids, &ik, key, BPF_ANY);
	}
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

/* The first 16 bytes of an SQE, STARS v1 or v2. */
struct st_sqe_raw {
	__u8	type;
	__u8	flags;
	__u16	w2;		/* v1: block dim, or a place-holder's task type */
	__u32	w4;		/* v1: stream id, task id; v2: task id */
	__u32	w8;
	__u16	w12;		/* v2: a place-holder's task type */
	__u16	w14;
};

/* What steptime uses of an SQE header. */
struct st_sqe_head {
	__u32	task_id;
	__u16	stream_id;
	__u16	task_type;	/* place-holder's task type, else 0 */
	__u8	sqe_type;
	__u8	wr_cqe;
};

/*
 * STARS v1 (910B, 910_93): wr_cqe is bit 6 of byte 1, u16 stream and task
 * ids at 4 and 6, a place-holder's task type at 2. STARS v2 (950): wr_cqe
 * is bit 3, a u32 task id at 4 and no stream id (one stream per SQ), the
 * place-holder's task type at 12.
 */
static __always_inline void sqe_parse(const struct st_sqe_raw *r,
				      __u16 sq_stream, struct st_sqe_head *h)
{
	h->sqe_type = r->type & TRS_SQE_TYPE_MASK;
	if (stars_version >= 2) {
		h->wr_cqe = !!(r->flags & TRS_SQE_V2_F_WR_CQE);
		h->task_id = r->w4;
		h->stream_id = sq_stream;
		h->task_type = h->sqe_type == TRS_SQE_PLACE_HOLDER ? r->w12 : 0;
	} else {
		h->wr_cqe = !!(r->flags & TRS_SQE_F_WR_CQE);
		h->stream_id = r->w4 & TRS_CQE_STREAM_ID_MASK;
		h->task_id = r->w4 >> 16;
		h->task_type = h->sqe_type == TRS_SQE_PLACE_HOLDER ? r->w2 : 0;
	}
}

struct st_sqe_mark {
	__u64	profiler_trace_id;
	__u64	model_id;
	__u16	tag_id;
};

/* State shared by the per-SQE loop of a SEND (or of one traced SQE). */
struct st_send_ctx {
	struct st_sq *sq;
	struct st_proc *p;
	union {
		struct {
			__u64 rec_index;	/* step of the tasks counted... */
			__u64 rec_tasks;	/* ...not yet added to it */
			__u64 ioctl_index;	/* step the SEND's time goes to */
			__u64 host_index;	/* host-marked step open, or 0 */
		};
		/*
		 * before: a SEND's argument, read here (a per-CPU scratch
		 * lookup is a helper call on 6.1; the stack has no room for
		 * a copy of its own)
		 */
		__u8 send_args[offsetofend(struct trs_task_send_info, pos)];
	};
	__u64 sqe_addr;
	__u64 enter_ns;
	__u64 base;				/* position of the first SQE */
	__u32 depth;
	__u32 tgid;
	__u32 in_step;
	__u32 outside;
	__u32 marks;
	__u32 internal;
	__u32 kernel;				/* sqe_addr is a kernel pointer */
	int fault;
};

/*
 * Tasks are counted per step in the SEND's context and added to the step's
 * record once per step and SEND: one hash lookup and one atomic add, not
 * one per SQE.
 */
static __always_inline struct steptime_step_stats *
send_flush(struct st_send_ctx *x)
{
	struct steptime_step_stats *rec;

	if (!x->rec_tasks)
		return NULL;
	rec = step_get(x->tgid, x->rec_index, x->p, true);
	if (rec) {
		__sync_fetch_and_add(&rec->tasks, x->rec_tasks);
		if (!rec->first_submit_ns)
			rec->first_submit_ns = x->enter_ns;
		rec->last_submit_ns = x->enter_ns;
	}
	x->rec_tasks = 0;
	return rec;
}

/* A SEND's task counters, in @c (NULL: looked up). */
static __always_inline void send_counters(struct st_send_ctx *x, __u32 n,
					  struct steptime_counters *c)
{
	__u32 zero = 0;

	if (!c)
		c = bpf_map_lookup_elem(&counters, &zero);
	if (!c)
		return;
	c->tasks += n - x->marks - x->internal;
	c->tasks_in_step += x->in_step;
	c->tasks_outside_step += x->outside;
	c->stream_marks += x->marks;
	c->tasks_internal += x->internal;
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

static __always_inline int sqe_read(struct st_send_ctx *x, void *dst,
				    __u32 size, __u64 addr)
{
	if (x->kernel)
		return bpf_probe_read_kernel(dst, size, (void *)addr);
	return bpf_probe_read_user(dst, size, (void *)addr);
}

/* A place-holder SQE of task type 26 is a stream-ordered step mark. */
static __always_inline void send_mark(struct st_send_ctx *x, struct st_task *t,
				      __u64 addr)
{
	struct steptime_step_stats *rec;
	struct st_sq *sq = x->sq;
	struct st_sqe_mark m = {};

	if (sqe_read(x, &m, sizeof(m), addr + 16)) {
		x->fault = 1;
		return;
	}
	t->index_id = m.profiler_trace_id;
	x->marks++;
	x->ioctl_index = m.profiler_trace_id;
	rec = step_get(x->tgid, m.profiler_trace_id, x->p, true);
	if (rec) {
		rec->flags |= STEPTIME_F_STREAM;
		rec->stream = t->stream_id;
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
	struct st_sqe_raw r;
	struct st_task *t;
	__u64 addr, index_id = 0;
	__u32 pos;

	if (!sq || !x->depth)
		return 1;
	addr = x->sqe_addr + (__u64)i * TRS_SQE_SIZE;
	if (sqe_read(x, &r, sizeof(r), addr)) {
		x->fault = 1;
		return 1;
	}
	sqe_parse(&r, sq->stream_id, &h);
	pos = (x->base + i) % x->depth;
	t = &sq->t[pos & (ST_SQ_DEPTH - 1)];
	if (t->flags & ST_TASK_VALID)
		CNT_INC(task_overwritten);
	t->submit_ns = x->enter_ns;
	t->stream_id = h.stream_id;
	t->task_id = h.task_id;
	t->sqe_type = h.sqe_type;
	t->flags = ST_TASK_VALID | (h.wr_cqe ? ST_TASK_WR_CQE : 0);
	t->index_id = 0;

	/*
	 * Place-holders are the runtime's own (step marks, stream syncs),
	 * not the application's tasks: tracked for their reports, not
	 * counted in any step.
	 */
	if (h.sqe_type == TRS_SQE_PLACE_HOLDER) {
		if (h.task_type == TRS_TASK_PROFILER_TRACE_EX)
			send_mark(x, t, addr);
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

/*
 * The position of a SEND's first SQE, from the driver's pos (0..depth-1):
 * normally the tail; after a SEND steptime missed (or on an SQ it met
 * late) the next position with that slot.
 */
static __always_inline __u64 sq_base(struct st_sq *sq, __u32 pos)
{
	__u32 d = sq->depth, cur;

	if (!d)
		return sq->tail;
	cur = sq->tail % d;
	if (pos >= d || pos == cur)
		return sq->tail;
	CNT_INC(sq_resyncs);
	return sq->tail + (pos + d - cur) % d;
}

/*
 * Count @n SQEs at @x->sqe_addr into @x->sq and its steps. Return: the
 * record of step @x->rec_index if this found it (the SEND's last), or NULL.
 */
static __always_inline struct steptime_step_stats *
sqes_account(struct st_send_ctx *x, __u32 n, __u64 now,
	     struct steptime_counters *cnt)
{
	struct steptime_step_stats *rec, *last;
	__u32 bound;

	bound = has_bpf_loop ? STEPTIME_LOOP_MAX : STEPTIME_LOOP_FALLBACK;
	if (n == 1) {
		/* A runtime's commonest SEND: no loop to set up. */
		send_one(0, x);
	} else if (has_bpf_loop) {
		bpf_loop(n < bound ? n : bound, send_one, x, 0);
	} else {
		/*
		 * Written out: a counted loop around this call spills its
		 * counter where the verifier loses it ("infinite loop").
		 */
		_Static_assert(STEPTIME_LOOP_FALLBACK == 4, "one line each");
		send_fallback(x, 0, n);
		send_fallback(x, 1, n);
		send_fallback(x, 2, n);
		send_fallback(x, 3, n);
	}
	last = send_flush(x);
	if (x->fault)
		CNT_INC(hook_errors);
	if (n > bound) {
		/* Counted in the step, but neither matched nor timed. */
		CNT_ADD(tasks_untracked, n - bound);
		rec = x->rec_index ? step_get(x->tgid, x->rec_index, x->p,
					      false) : NULL;
		if (rec) {
			__sync_fetch_and_add(&rec->tasks, n - bound);
			__sync_fetch_and_add(&rec->completions, n - bound);
		}
	}
	x->sq->tail = x->base + n;
	send_counters(x, n, cnt);
	return last;
}

/*
 * A queue steptime met only at a SEND was allocated before load: its depth
 * and what is in flight are unknown, so its tasks go to no step. They are
 * counted (tasks_preexisting), and their steps flagged.
 */
static __always_inline void send_preexisting(struct st_sq *sq,
					     struct st_proc *p, __u32 tgid,
					     __u32 n)
{
	struct steptime_step_stats *rec;
	__u64 index_id = p ? proc_open_step(p, tgid, false) : 0;

	CNT_ADD(tasks_preexisting, n);
	rec = index_id ? step_get(tgid, index_id, p, true) : NULL;
	if (rec)
		rec->flags |= STEPTIME_F_PREEXISTING;
}

static __always_inline void on_send(struct st_call *c, struct st_file *f,
				    struct st_proc *p, __u32 tgid, __u64 now,
				    int synced, struct steptime_counters *cnt,
				    __u64 id)
{
	struct steptime_step_stats *rec;
	struct trs_task_send_info *si;
	/* Its fields are set where they are first needed: no zeroing. */
	struct st_send_ctx x;
	struct st_qkey key = {};
	__u64 sqe_addr;
	__u32 n, pos;

	if (bpf_probe_read_user(x.send_args, sizeof(x.send_args),
				(void *)c->arg)) {
		CNT_INC(hook_errors);
		return;
	}
	si = (struct trs_task_send_info *)x.send_args;
	n = si->sqe_num;
	pos = si->pos;
	sqe_addr = si->sqe_addr;
	key.ts = si->tsId;
	key.id = si->sqId;
	if (cnt)
		cnt->sends++;
	if (!f) {
		CNT_ADD(tasks_unowned, n);
		return;
	}
	key.owner = f->owner;
	x.sq = sq_find_cached(&key, id);
	/*
	 * Every SQ of a file whose OPEN was seen was allocated since load:
	 * one without an entry is not tracked (map full, or freed while
	 * this SEND ran), never one from before load.
	 */
	if (!x.sq && (f->flags & ST_FILE_PREEXISTING)) {
		x.sq = sq_create(&key, f, tgid, 0, ST_SQ_PREEXISTING);
		if (x.sq)
			CNT_INC(sqs_preexisting);
	}
	if (!x.sq) {
		CNT_ADD(tasks_unowned, n);
		return;
	}
	if (x.sq->flags & ST_SQ_PREEXISTING) {
		send_preexisting(x.sq, p, tgid, n);
		return;
	}
	/*
	 * Exits run in any order: an entry made while this SEND ran (an
	 * ALLOC's exit) may be of the id's next SQ, this one freed in
	 * between, and one shallower than the batch is not this SQ's
	 * (the driver takes at most its depth). Not this SEND's queue.
	 */
	if (x.sq->created_ns > c->enter_ns || n > x.sq->depth) {
		CNT_ADD(tasks_raced, n);
		return;
	}
	x.p = p;
	x.in_step = x.outside = x.marks = x.internal = x.kernel = 0;
	x.fault = 0;
	x.host_index = p ? proc_open_step(p, tgid, synced) : 0;
	x.rec_index = opaque_zero;
	x.rec_tasks = opaque_zero;
	x.ioctl_index = opaque_zero;
	x.tgid = tgid;
	x.depth = x.sq->depth;
	x.base = sq_base(x.sq, pos);
	x.sqe_addr = sqe_addr;
	x.enter_ns = c->enter_ns;
	rec = sqes_account(&x, n, now, cnt);

	/*
	 * The ioctl's own cost belongs to the step its tasks went to: mostly
	 * the record the last flush found.
	 */
	if (!rec || x.ioctl_index != x.rec_index)
		rec = x.ioctl_index ? step_get(tgid, x.ioctl_index, p, false) :
		      NULL;
	if (rec) {
		__sync_fetch_and_add(&rec->submit_ioctls, 1);
		__sync_fetch_and_add(&rec->submit_ioctl_ns, now - c->enter_ns);
	}
}

/* ---------------------------------------------------------------------- */
/* Completions                                                             */
/* ---------------------------------------------------------------------- */

/* One report, whatever its size on the wire. */
struct st_report {
	__u32	task_id;
	__u32	error_code;
	__u64	timestamp;	/* device counter: marks' reports */
	__u16	stream_id;
	__u16	sq_id;
	__u16	sq_head;
	__u16	error;		/* the report says the task failed */
};

struct st_recv_ctx {
	struct st_sq *sq;
	struct steptime_counters *cnt;	/* NULL: looked up at each count */
	__u64 now;
	__u64 cqe_addr;
	__u64 owner;
	union {
		struct st_report rep;	/* the report being applied */
		/* before: a RECV's argument, read here, not in scratch */
		__u8 recv_args[offsetofend(struct trs_report_recv_info,
					   report_cqe_num)];
	};
	__u64 cur;			/* next SQ position to complete */
	__u64 target;			/* complete up to here */
	__u32 ts;
	__u32 cqe_size;
	__u32 found;			/* the report's own task was found */
	__u32 has_report;		/* rep is a report (not a head) */
	__u32 cancel;			/* FREE: complete as cancelled */
	__u32 kernel;			/* cqe_addr is a kernel pointer */
	__u32 completions;
	__u32 pad;
	__u64 tid;			/* the RECV's thread, for its cache */
};

/* A stream END mark the device passed; its ticks only with a report. */
static __always_inline void mark_reached(struct st_recv_ctx *x,
					 struct st_task *t, bool own)
{
	struct steptime_step_stats *rec;

	if (x->cancel)
		return;
	/*
	 * Its SEND made the record: one gone since (recycled, evicted) is not
	 * made again with only device ticks. Nor could it be from here: a
	 * new record may need step_evict_exited(), one call frame more than
	 * 6.1's 512 bytes of combined stack allow below a RECV's walk.
	 */
	rec = step_get(x->sq->tgid, t->index_id, NULL, false);
	if (!rec)
		return;
	/* Timeline events, where the step API has them, win. */
	if (own && !x->rep.error && !(rec->flags & STEPTIME_F_DEV_EVENT)) {
		if (t->flags & ST_TASK_MARK_START) {
			rec->dev_start_ticks = x->rep.timestamp;
			rec->flags |= STEPTIME_F_DEV_START;
		} else {
			rec->dev_end_ticks = x->rep.timestamp;
			rec->flags |= STEPTIME_F_DEV_END;
		}
		step_set_device_time(rec);
	}
	/*
	 * A mark with wr_cqe closes its step at its report, which carries
	 * the END's ticks; one without (CANN's) when the SQ head passes it.
	 */
	if ((t->flags & ST_TASK_MARK_END) &&
	    (own || !(t->flags & ST_TASK_WR_CQE)))
		rec->flags |= STEPTIME_F_STREAM_END;
	step_try_finish(rec);
}

/*
 * Take @t from VALID to complete. Two contexts can walk one SQ at once
 * (the driver's CQ hook and the owner's RECV or QUERY): only the one that
 * clears VALID completes the task.
 */
static __always_inline bool task_claim(struct st_task *t)
{
	__u32 valid = ST_TASK_WORD(ST_TASK_VALID);

	return __sync_fetch_and_and(&t->word, ~valid) & valid;
}

/* Complete @t once, with its own report when @own. */
static __always_inline void task_complete(struct st_recv_ctx *x,
					  struct st_task *t, bool own)
{
	struct steptime_step_stats *rec;
	__u32 err = own && x->rep.error;
	__u64 lat;

	if (!task_claim(t))
		return;
	t->flags |= ST_TASK_DONE | (own ? ST_TASK_REPORTED : 0);
	x->completions++;
	if (t->flags & (ST_TASK_MARK_START | ST_TASK_MARK_END)) {
		mark_reached(x, t, own);
		return;
	}
	if (!(t->flags & ST_TASK_IN_STEP))
		return;
	rec = step_get(x->sq->tgid, t->index_id, NULL, false);
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

/*
 * A report for a task already complete (an SQ head passed it first): only
 * what the report adds, its error and a mark's ticks.
 */
static __always_inline void report_late(struct st_recv_ctx *x,
					struct st_task *t)
{
	struct steptime_step_stats *rec;

	t->flags |= ST_TASK_REPORTED;
	if (t->flags & (ST_TASK_MARK_START | ST_TASK_MARK_END)) {
		mark_reached(x, t, true);
		return;
	}
	if (!(t->flags & ST_TASK_IN_STEP))
		return;
	rec = step_get(x->sq->tgid, t->index_id, NULL, false);
	if (!rec)
		return;
	__sync_fetch_and_add(&rec->reported, 1);
	if (x->rep.error)
		__sync_fetch_and_add(&rec->errors, 1);
}

static __always_inline bool task_is(struct st_recv_ctx *x, struct st_task *t)
{
	return (__u16)t->task_id == (__u16)x->rep.task_id &&
	       t->stream_id == x->rep.stream_id;
}

/* Complete the task at x->cur; stop at the target. */
static long complete_one(__u32 i, void *arg)
{
	struct st_recv_ctx *x = arg;
	struct st_sq *sq = x->sq;
	struct st_task *t;
	bool own;

	if (!sq || x->cur >= x->target || !sq->depth)
		return 1;
	t = &sq->t[(x->cur % sq->depth) & (ST_SQ_DEPTH - 1)];
	if (t->flags & ST_TASK_VALID) {
		own = x->has_report && !x->found && !x->cancel &&
		      task_is(x, t);
		if (own)
			x->found = 1;
		task_complete(x, t, own);
	}
	x->cur++;
	return 0;
}

/* The calls a walk from x->cur to x->target needs: not one more, each costs. */
static __always_inline __u32 walk_len(struct st_recv_ctx *x)
{
	__u64 n = x->target - x->cur;

	return n < STEPTIME_LOOP_MAX ? n : STEPTIME_LOOP_MAX;
}

static __always_inline void sq_walk(struct st_recv_ctx *x)
{
	__u32 i;

	if (has_bpf_loop) {
		bpf_loop(walk_len(x), complete_one, x, 0);
	} else {
		/* Unrolled: nothing for the verifier to prove about a counter. */
#pragma clang loop unroll(full)
		for (i = 0; i < STEPTIME_LOOP_FALLBACK; i++)
			if (complete_one(i, x))
				break;
	}
}

/*
 * The SQ has been consumed up to slot @head (exclusive): every task before
 * it is complete. Match mode's heads can step back: a head behind what is
 * already complete (further from done than the tail) completes nothing.
 */
static __always_inline void sq_advance(struct st_recv_ctx *x, __u32 head)
{
	struct st_sq *sq = x->sq;
	__u32 d = sq->depth, ahead;

	if (!d || head >= d)
		return;
	ahead = (head + d - sq->done % d) % d;
	if (ahead > sq->tail - sq->done) {
		CNT_INC(heads_behind);
		return;
	}
	x->cur = sq->done;
	x->target = sq->done + ahead;
	sq_walk(x);
	sq->done = x->cur;
}

/* Find the report's task among those still running (match mode). */
static long find_one(__u32 i, void *arg)
{
	struct st_recv_ctx *x = arg;
	struct st_sq *sq = x->sq;
	struct st_task *t;

	if (!sq || x->cur >= x->target || !sq->depth)
		return 1;
	t = &sq->t[(x->cur % sq->depth) & (ST_SQ_DEPTH - 1)];
	if ((t->flags & (ST_TASK_VALID | ST_TASK_DONE)) && task_is(x, t)) {
		x->found = 1;
		if (t->flags & ST_TASK_VALID)
			task_complete(x, t, true);
		else if (!(t->flags & ST_TASK_REPORTED))
			report_late(x, t);
		return 1;
	}
	x->cur++;
	return 0;
}

/*
 * The report's own task, when the head did not bring it: either already
 * complete (its slot is head - 1; or the CQ hook applied this report
 * first), or still ahead of the head (match mode reports out of order):
 * complete that one alone. A report is applied to its task once.
 */
static __always_inline void report_find(struct st_recv_ctx *x)
{
	struct st_sq *sq = x->sq;
	struct st_task *t;
	__u32 d = sq->depth;

	if (!d)
		return;
	t = &sq->t[((x->rep.sq_head + d - 1) % d) & (ST_SQ_DEPTH - 1)];
	if ((t->flags & ST_TASK_DONE) && task_is(x, t)) {
		x->found = 1;
		if (!(t->flags & ST_TASK_REPORTED))
			report_late(x, t);
		return;
	}
	if (!has_bpf_loop)
		return;
	x->cur = sq->done;
	x->target = sq->tail;
	bpf_loop(walk_len(x), find_one, x, 0);
}

/*
 * An SQ whose submissions the kernel never sees: uio_d, or uio_t when the
 * SQE trace hook is not attached.
 */
static __always_inline bool sq_blind(__u32 flags)
{
	return (flags & ST_SQ_UIO) && !((flags & ST_SQ_SOFT) && sqe_hook);
}

/*
 * Flag every step of process @p with @flag from now on (step_get()), the
 * open one now: what its steps count misses tasks the kernel cannot see.
 */
static __always_inline void proc_taint(struct st_proc *p, __u32 tgid,
				       __u32 flag)
{
	struct steptime_step_stats *rec;
	__u64 index_id;

	p->taint |= flag;
	index_id = proc_open_step(p, tgid, false);
	if (!index_id)
		return;
	rec = step_get(tgid, index_id, p, false);
	if (rec)
		rec->flags |= flag;
}

/*
 * The user library writes a blind SQ's SQEs and rings its doorbell from
 * user space; the kernel learns of them only as the SQ head moves, at a
 * report or a query of the process, and the step marks it reads then may
 * be later than the SQEs. Which step a task was submitted in, so a step's
 * task count and whether all its tasks completed, cannot be known: the
 * process's steps from this SQ's ALLOC on are flagged STEPTIME_F_UIO and
 * count none of its tasks (step_get()).
 */
static __always_inline void uio_blind_alloc(__u32 tgid)
{
	struct st_proc *p = proc_find(tgid);

	if (p)
		proc_taint(p, tgid, STEPTIME_F_UIO);
}

/*
 * A blind SQ's head moved: that many of its tasks completed. They are
 * counted process-wide (counters completions, uio_completions), exactly
 * while a report or head query comes at least every depth / 2 tasks, and
 * in no step.
 */
static __always_inline void uio_advance(struct st_recv_ctx *x)
{
	struct st_sq *sq = x->sq;
	__u32 d = sq->depth, n;

	if (!d || x->rep.sq_head >= d)
		return;
	n = (x->rep.sq_head + d - sq->done % d) % d;
	if (!n || n > d / 2) {
		if (n)
			CNT_INC(heads_behind);
		return;
	}
	sq->done += n;
	CNT_ADD(uio_completions, n);
	CNT_ADD(completions, n);
}

/* A head for the SQ in x->sq: from a report or a QUERY. */
static __always_inline void head_apply(struct st_recv_ctx *x)
{
	struct st_sq *sq = x->sq;

	if (sq->flags & ST_SQ_PREEXISTING)
		return;
	if (sq_blind(sq->flags)) {
		uio_advance(x);
		return;
	}
	x->found = opaque_zero;
	sq_advance(x, x->rep.sq_head);
	if (x->has_report && !x->found) {
		report_find(x);
		/*
		 * The CQ hook can run before the SEND's exit recorded the
		 * task: the RECV that reads this report applies it then.
		 */
		if (!x->found && x->kernel)
			CNT_INC(hook_early);
		else if (!x->found)
			CNT_INC(reports_unmatched);
	}
}

static __always_inline void report_apply(struct st_recv_ctx *x)
{
	struct st_qkey key = {
		.owner = x->owner,
		.ts = x->ts,
		.id = x->rep.sq_id,
	};

	CNT_ADD_AT(x->cnt, reports, 1);
	x->sq = sq_find_cached(&key, x->tid);
	if (!x->sq) {
		CNT_INC(reports_unmatched);
		return;
	}
	x->has_report = 1;
	head_apply(x);
}

/* Read report @i at x->cqe_addr in the CQ's format. */
static __always_inline int report_read(struct st_recv_ctx *x, __u32 i)
{
	__u64 addr = x->cqe_addr + (__u64)i * x->cqe_size;

	if (x->cqe_size == TRS_HW_CQE_SIZE) {
		struct trs_hw_cqe c;

		if (bpf_probe_read_user(&c, sizeof(c), (void *)addr))
			return -1;
		x->rep.stream_id = c.stream_id & TRS_CQE_STREAM_ID_MASK;
		x->rep.task_id = c.task_id;
		x->rep.sq_id = (c.bits & TRS_HW_CQE_SQ_ID_MASK) >>
			       TRS_HW_CQE_SQ_ID_SHIFT;
		x->rep.sq_head = c.sq_head;
		x->rep.error = !!(c.bits & TRS_HW_CQE_ERROR);
		x->rep.error_code = x->rep.error ? c.error.error_code : 0;
		x->rep.timestamp = x->rep.error ? 0 : c.timestamp;
		return 0;
	}
	struct trs_logic_cqe c;
	int err;

	err = x->kernel ? bpf_probe_read_kernel(&c, sizeof(c), (void *)addr) :
			  bpf_probe_read_user(&c, sizeof(c), (void *)addr);
	if (err)
		return -1;
	x->rep.stream_id = c.stream_id & TRS_CQE_STREAM_ID_MASK;
	x->rep.task_id = c.task_id;
	x->rep.sq_id = c.sq_id;
	x->rep.sq_head = c.sq_head;
	x->rep.error_code = c.error_code;
	x->rep.error = c.error_code || (c.flags & TRS_CQE_F_ERROR);
	x->rep.timestamp = c.timestamp;
	return 0;
}

static long recv_one(__u32 i, void *arg)
{
	struct st_recv_ctx *x = arg;

	if (report_read(x, i)) {
		CNT_INC(hook_errors);
		return 1;
	}
	report_apply(x);
	return 0;
}

static __always_inline bool ckey_eq(struct st_ckey *a, struct st_ckey *b)
{
	return a->owner == b->owner && a->ts == b->ts && a->type == b->type &&
	       a->id == b->id;
}

/*
 * The report size of the CQ a RECV names: the one given at its ALLOC.
 * @id: the thread, for its cache.
 */
static __always_inline __u32 cq_report_size(__u64 owner, __u32 ts,
					    __u32 type, __u32 cq_id,
					    __u64 id)
{
	struct st_ckey k = { .owner = owner, .ts = ts, .type = type,
			     .id = cq_id };
	struct st_cache_way *w = thread_way(id, cq_id);
	/* Read before the lookup: a change after it invalidates the copy. */
	__u64 gen = READ_ONCE(cqs_gen);
	struct st_cq *cq;
	__u32 size;

	if (w && w->cqe_size && w->cq_gen == gen && ckey_eq(&w->cq, &k))
		return w->cqe_size;
	cq = bpf_map_lookup_elem(&cqs, &k);
	if (cq && (cq->cqe_size == TRS_HW_CQE_SIZE ||
		   cq->cqe_size == TRS_CQE_SIZE))
		size = cq->cqe_size;
	else
		size = type == TRS_SQCQ_TYPE_NORMAL ? TRS_HW_CQE_SIZE :
						      TRS_CQE_SIZE;
	if (w) {
		w->cq = k;
		w->cq_gen = gen;
		w->cqe_size = size;
	}
	return size;
}

static __always_inline void on_recv(struct st_call *c, struct st_file *f,
				    __u64 now, __u64 id,
				    struct steptime_counters *cnt)
{
	struct trs_report_recv_info *ri;
	struct st_recv_ctx x = {};
	__u32 n, i;

	/* A per-CPU scratch lookup is a helper call on 6.1: on the stack. */
	if (bpf_probe_read_user(x.recv_args, sizeof(x.recv_args),
				(void *)c->arg)) {
		CNT_INC(hook_errors);
		return;
	}
	ri = (struct trs_report_recv_info *)x.recv_args;
	CNT_ADD_AT(cnt, recvs, 1);
	if (ri->type != TRS_SQCQ_TYPE_NORMAL && ri->type != TRS_SQCQ_TYPE_LOGIC)
		return;
	x.cnt = cnt;
	x.now = now;
	x.cqe_addr = ri->cqe_addr;
	x.tid = id;
	x.owner = f->owner;
	x.ts = ri->tsId;
	x.cqe_size = cq_report_size(f->owner, ri->tsId, ri->type, ri->cqId,
				    id);
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
	CNT_ADD_AT(cnt, completions, x.completions);
}

/* QUERY SQ_HEAD: the runtime's view of progress, and a completion bound. */
static __always_inline void on_query(struct st_call *c, struct st_file *f,
				     __u64 now, __u64 id,
				     struct steptime_counters *cnt)
{
	struct trs_sqcq_query_info *qi;
	struct st_recv_ctx x = {};
	struct st_qkey key = {};
	union st_args *a;

	a = args_read(c->arg, sizeof(a->query));
	if (!a) {
		CNT_INC(hook_errors);
		return;
	}
	qi = &a->query;
	if (qi->type != TRS_SQCQ_TYPE_NORMAL || qi->prop != TRS_SQCQ_PROP_SQ_HEAD)
		return;
	CNT_ADD_AT(cnt, head_queries, 1);
	key.owner = f->owner;
	key.ts = qi->tsId;
	key.id = qi->sqId;
	x.sq = sq_find_cached(&key, id);
	if (!x.sq)
		return;
	x.cnt = cnt;
	x.now = now;
	x.rep.sq_head = qi->value[0] & 0xffff;
	head_apply(&x);
	CNT_ADD_AT(cnt, completions, x.completions);
	CNT_ADD_AT(cnt, head_completions, x.completions);
}

/* ALLOC's trs_uio_info: how the driver set the SQ up. */
static __always_inline __u32 alloc_uio_flags(struct trs_sqcq_alloc_info *ai)
{
	struct trs_uio_info u;
	__u64 ptr = ai->uio_info;

	if (!ptr)
		return 0;
	if (bpf_probe_read_user(&u, sizeof(u), (void *)ptr)) {
		CNT_INC(hook_errors);
		return 0;
	}
	if (!u.uio_flag)
		return 0;
	return ST_SQ_UIO | (u.soft_que_flag ? ST_SQ_SOFT : 0);
}

static __always_inline void cq_create(__u64 owner, __u32 dev, __u32 ts,
				      __u32 type, __u32 id, __u32 size,
				      __u32 stream)
{
	struct st_ckey k = { .owner = owner, .ts = ts, .type = type, .id = id };
	struct st_cq cq = {
		.cqe_size = size,
		.stream_id = stream,
		.created_ns = bpf_ktime_get_ns(),
		.tgid = bpf_get_current_pid_tgid() >> 32,
		.dev = dev,
	};

	if (bpf_map_update_elem(&cqs, &k, &cq, BPF_ANY))
		CNT_INC(cq_map_full);
	__sync_fetch_and_add(&cqs_gen, 1);
}

/*
 * Exits run in any order. When another ALLOC of the same id exited while
 * this one ran, a FREE of the id came between their allocations, and
 * which of the two SQs is still live cannot be told: neither is tracked
 * (its SENDs count as tasks_unowned), rather than one of them wrongly.
 */
static __always_inline bool sq_raced(struct st_qkey *key, __u64 enter_ns)
{
	struct st_sq *old = sq_find(key);

	if (!old || old->created_ns < enter_ns ||
	    (old->flags & ST_SQ_PREEXISTING))
		return false;
	CNT_INC(sqs_raced);
	sq_delete(key);
	return true;
}

/*
 * ALLOC names an SQ only when its type is NORMAL; the runtime's logic CQs
 * (type LOGIC, sqId 0) are CQs alone. REUSE_CQ shares an existing CQ.
 */
static __always_inline void on_alloc(struct st_call *c, struct st_file *f,
				     __u32 tgid)
{
	struct trs_sqcq_alloc_info *ai;
	struct st_skey sk = {};
	struct st_qkey key = {};
	union st_args *a;
	struct st_sq *sq;
	__u32 flags;

	a = args_read(c->arg, sizeof(a->alloc));
	if (!a) {
		CNT_INC(hook_errors);
		return;
	}
	ai = &a->alloc;
	if (ai->type == TRS_SQCQ_TYPE_LOGIC) {
		cq_create(f->owner, f->dev, ai->tsId, TRS_SQCQ_TYPE_LOGIC,
			  ai->cqId, ai->cqeSize, ai->info[0]);
		return;
	}
	if (ai->type != TRS_SQCQ_TYPE_NORMAL)
		return;
	flags = alloc_uio_flags(ai);
	/* The driver has the SQ whether or not it gets an entry here. */
	if (sq_blind(flags))
		uio_blind_alloc(tgid);
	key.owner = f->owner;
	key.ts = ai->tsId;
	key.id = ai->sqId;
	if (!(ai->flag & TSDRV_FLAG_REUSE_CQ))
		cq_create(f->owner, f->dev, ai->tsId, TRS_SQCQ_TYPE_NORMAL,
			  ai->cqId, ai->cqeSize, ai->info[0]);
	if (sq_raced(&key, c->enter_ns))
		return;
	sq = sq_create(&key, f, tgid, ai->sqeDepth, flags);
	if (!sq)
		return;
	sq->stream_id = ai->info[0];
	if ((flags & ST_SQ_SOFT) && f->dev != ST_DEV_UNKNOWN) {
		sk.dev = f->dev;
		sk.ts = ai->tsId;
		sk.id = ai->info[0];
		bpf_map_update_elem(&soft_sqs, &sk, &key, BPF_ANY);
	}
}

/* Tasks still queued on a freed SQ were cancelled: they count as errors. */
static __always_inline void sq_cancel_all(struct st_sq *sq, __u64 now)
{
	struct st_recv_ctx x = {};

	x.sq = sq;
	x.now = now;
	x.cancel = 1;
	x.cur = sq->done;
	x.target = sq->tail;
	sq_walk(&x);
	sq->done = x.cur;
}

static __always_inline void on_free(struct st_call *c, struct st_file *f,
				    __u64 now)
{
	struct st_ckey ck = { .owner = f->owner };
	struct trs_sqcq_free_info *fi;
	struct st_qkey key = {};
	union st_args *a;
	struct st_sq *sq;
	struct st_cq *cq;

	a = args_read(c->arg, sizeof(a->free));
	if (!a) {
		CNT_INC(hook_errors);
		return;
	}
	fi = &a->free;
	ck.ts = fi->tsId;
	ck.type = fi->type;
	ck.id = fi->cqId;
	/*
	 * The driver released the ids before this exit ran: another thread's
	 * ALLOC may already hold them, with entries made after this FREE
	 * began. Those are not ours to drop.
	 */
	cq = bpf_map_lookup_elem(&cqs, &ck);
	if (cq && cq->created_ns < c->enter_ns &&
	    !(fi->type == TRS_SQCQ_TYPE_NORMAL &&
	      (fi->flag & TSDRV_FLAG_REUSE_CQ))) {
		bpf_map_delete_elem(&cqs, &ck);
		__sync_fetch_and_add(&cqs_gen, 1);
	}
	if (fi->type != TRS_SQCQ_TYPE_NORMAL)
		return;
	key.owner = f->owner;
	key.ts = fi->tsId;
	key.id = fi->sqId;
	sq = sq_find(&key);
	if (!sq || sq->created_ns > c->enter_ns)
		return;
	sq_cancel_all(sq, now);
	sq_delete(&key);
}

static __always_inline void on_open(struct st_call *c, __u32 tgid)
{
	union st_args *a;

	a = args_read(c->arg, sizeof(a->open));
	if (!a) {
		CNT_INC(hook_errors);
		return;
	}
	file_bind(c->file, (__u32)a->open.device_id, tgid);
}

/* ---------------------------------------------------------------------- */
/* ioctl entry and exit, common to every attach mode                       */
/* ---------------------------------------------------------------------- */

static __always_inline bool cmd_tracked(__u32 cmd)
{
	return cmd == TRS_IOC_SQCQ_SEND || cmd == TRS_IOC_SQCQ_RECV ||
	       cmd == TRS_IOC_SQCQ_QUERY || cmd == TRS_IOC_SQCQ_ALLOC ||
	       cmd == TRS_IOC_SQCQ_FREE || cmd == ASCEND_MANAGER_OPEN ||
	       cmd == STEPTIME_IOC_RING;
}

/*
 * Hold the slot of thread @id until thread_put(); NULL while another
 * thread's ioctl holds it. A slot this thread still holds (an entry whose
 * exit never ran: a kretprobe missed, the exit attached later) is its own.
 */
static __always_inline struct st_thread *thread_get(__u64 id)
{
	struct st_thread *th = thread_slot(id);
	__u64 holder;

	if (!th)
		return NULL;
	holder = __sync_val_compare_and_swap(&th->busy, 0, id);
	return !holder || holder == id ? th : NULL;
}

/*
 * Release the slot thread @id holds, if it does: by id, not by the pointer
 * thread_get() gave, and without a branch, so that every path of an exit
 * ends the same way for the verifier (a pointer or NULL kept live across
 * the exit's work, or a branch after it, doubles the states it walks).
 * A compare-and-swap is fully ordered: the next holder sees our stores.
 */
static __always_inline void thread_put(__u64 id)
{
	struct st_thread *th = thread_slot(id);

	if (th)
		__sync_val_compare_and_swap(&th->busy, id, 0);
}

/* A matched ioctl's entry, kept for its exit: in the thread's slot. */
static __always_inline int ioctl_enter(__u64 file, __u32 cmd, __u64 arg)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_thread *th;
	struct st_call c = {
		.arg = arg,
		.file = file,
		.cmd = cmd,
	};

	/* A RECV is timed from its exit (kprobe and tracepoint modes). */
	if (cmd != TRS_IOC_SQCQ_RECV)
		c.enter_ns = bpf_ktime_get_ns();
	th = thread_get(id);
	if (th) {
		/* Field by field: not built on the stack and copied. */
		th->call.arg = arg;
		th->call.file = file;
		th->call.enter_ns = c.enter_ns;
		th->call.sqes_sent = 0;
		th->call.cmd = cmd;
		return 0;
	}
	CNT_INC(calls_slot_shared);
	if (!bpf_map_update_elem(&calls, &id, &c, BPF_NOEXIST))
		__sync_fetch_and_add(&calls_hashed, 1);
	else if (bpf_map_update_elem(&calls, &id, &c, BPF_EXIST))
		CNT_INC(hook_errors);
	return 0;
}

/* Drop thread @id's entry from the calls hash, if it has one there. */
static __always_inline void call_unhash(__u64 id)
{
	if (!bpf_map_delete_elem(&calls, &id))
		__sync_fetch_and_sub(&calls_hashed, 1);
}

/*
 * The entry of the ioctl thread @id is leaving; false when none. An entry
 * in the thread's slot stays held there until thread_put().
 */
static __always_inline bool call_take(__u64 id, struct st_call *c)
{
	struct st_thread *th = thread_slot(id);
	struct st_call *cp;

	if (th && READ_ONCE(th->busy) == id && th->call.cmd) {
		*c = th->call;
		th->call.cmd = 0;
		return true;
	}
	if (!READ_ONCE(calls_hashed))
		return false;
	cp = bpf_map_lookup_elem(&calls, &id);
	if (!cp)
		return false;
	*c = *cp;
	call_unhash(id);
	return true;
}

/* A thread leaves: an entry it left (an exit missed) goes with it. */
static __always_inline void thread_exit(void)
{
	__u64 id = bpf_get_current_pid_tgid();

	thread_put(id);
	if (READ_ONCE(calls_hashed))
		call_unhash(id);
}

/* A matched ioctl of thread @id returned @ret: account for it. */
static __always_inline int ioctl_done(struct st_call *cp, long ret,
				      __u64 id)
{
	/*
	 * Not id >> 32: derived from @id, tgid lets the verifier tell more
	 * states apart (6.18: 700,000 instructions on tp_btf's exit, not
	 * 467,000); the helper call costs a few instructions.
	 */
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct steptime_counters *cnt;
	struct st_proc *p;
	struct st_file *f;
	__u32 zero = 0;
	int synced = 0;
	__u64 now;

	now = bpf_ktime_get_ns();
	/* Index 0 of an array: never NULL, and then known not to be below. */
	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!cnt)
		return 0;
	cnt->ioctls++;
	if (ret && cp->cmd == TRS_IOC_SQCQ_SEND) {
		cnt->send_errors++;
		/*
		 * The driver queued the SQEs, then failed to write the
		 * SEND's result back (a fault with a fatal signal pending):
		 * on the device, but of unknown position.
		 */
		cnt->sqes_send_failed += cp->sqes_sent;
	}
	/* Marks written since this process's last ioctl take effect first. */
	p = proc_get(tgid);
	if (p && cp->cmd == STEPTIME_IOC_RING)
		proc_ring_bind(p, cp->arg);
	if (p)
		synced = proc_sync(p, tgid);
	if (ret || cp->cmd == STEPTIME_IOC_RING)
		return 0;
	if (cp->cmd == ASCEND_MANAGER_OPEN) {
		on_open(cp, tgid);
		return 0;
	}
	f = file_get(cp->file, tgid, id);
	if (!f && cp->cmd != TRS_IOC_SQCQ_SEND)
		return 0;
	/*
	 * A file from before load may hold queues steptime never meets at a
	 * SEND (a uio_d SQ): the steps of a process using it may miss tasks.
	 */
	if (f && p && (f->flags & ST_FILE_PREEXISTING) &&
	    !(p->taint & STEPTIME_F_PREEXISTING))
		proc_taint(p, tgid, STEPTIME_F_PREEXISTING);
	switch (cp->cmd) {
	case TRS_IOC_SQCQ_SEND:
		on_send(cp, f, p, tgid, now, synced, cnt, id);
		break;
	case TRS_IOC_SQCQ_RECV:
		on_recv(cp, f, now, id, cnt);
		break;
	case TRS_IOC_SQCQ_QUERY:
		on_query(cp, f, now, id, cnt);
		break;
	case TRS_IOC_SQCQ_ALLOC:
		on_alloc(cp, f, tgid);
		break;
	case TRS_IOC_SQCQ_FREE:
		on_free(cp, f, now);
		break;
	}
	return 0;
}

static __always_inline int ioctl_exit(long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_call c;

	if (!call_take(id, &c))
		return 0;
	ioctl_done(&c, ret, id);
	thread_put(id);
	return 0;
}

/*
 * An exit that still sees its arguments (fexit, tp_btf, raw_tp) does not
 * depend on the state its entry left: where that is gone, the ioctl is
 * accounted with the exit's own arguments, timed from the exit, and counted
 * (calls_unpaired): an entry made before the exit was attached, or lost
 * to a full calls hash.
 */
static __always_inline int ioctl_exit_args(__u64 file, __u32 cmd, __u64 arg,
					   long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_call c;

	if (!call_take(id, &c)) {
		if (!file)
			return 0;
		CNT_INC(calls_unpaired);
		c = (struct st_call){ .arg = arg, .file = file, .cmd = cmd,
				      .enter_ns = bpf_ktime_get_ns() };
		/* For its cache. */
		thread_get(id);
	}
	/* one ioctl_done() inlined here: the verifier walks each copy */
	ioctl_done(&c, ret, id);
	thread_put(id);
	return 0;
}

/*
 * RECV needs nothing from its entry (its reports are read at exit, at exit
 * time), so where the exit still sees the arguments (fexit, and the saved
 * registers of tp_btf and raw_tp), its entry is not kept at all: the
 * cheapest path for the ioctl a runtime calls most.
 */
static __always_inline int recv_exit(__u64 file, __u64 arg, long ret)
{
	struct st_call c = { .arg = arg, .file = file,
			     .cmd = TRS_IOC_SQCQ_RECV };
	__u64 id = bpf_get_current_pid_tgid();

	/* Only for its cache: held while the cache is used. */
	thread_get(id);
	ioctl_done(&c, ret, id);
	thread_put(id);
	return 0;
}

/*
 * The file behind a fd of the current task. With @btf (tp_btf programs)
 * the task's pointers are followed by direct loads; elsewhere every step is
 * a CO-RE read.
 */
static __always_inline struct file *fd_file(unsigned int fd, bool btf)
{
	struct file **fds, *file = NULL;
	struct fdtable *fdt;
	struct task_struct *task;

	if (btf) {
		task = bpf_get_current_task_btf();
		fdt = task->files->fdt;
		if (fd >= fdt->max_fds)
			return NULL;
		fds = fdt->fd;
	} else {
		task = (struct task_struct *)bpf_get_current_task();
		fdt = BPF_CORE_READ(task, files, fdt);
		if (fd >= BPF_CORE_READ(fdt, max_fds))
			return NULL;
		fds = BPF_CORE_READ(fdt, fd);
	}
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	return file;
}

/* The file of @fd when it is the target device's, else NULL. */
static __always_inline struct file *fd_target(unsigned int fd, bool btf)
{
	struct file *file = fd_file(fd, btf);

	if (!file || BPF_CORE_READ(file, f_inode, i_rdev) != target_rdev)
		return NULL;
	return file;
}

static __always_inline int sys_ioctl_enter(__u64 fd, __u64 cmd, __u64 arg,
					   bool btf)
{
	struct file *file;

	/* Cheapest test first: most ioctls are not the driver's. */
	if (!cmd_tracked(cmd))
		return 0;
	file = fd_target(fd, btf);
	if (!file)
		return 0;
	return ioctl_enter((__u64)file, cmd, arg);
}

/* At exit, with the arguments (tp_btf, raw_tp): RECV is matched here. */
static __always_inline int sys_ioctl_exit(__u64 fd, __u64 cmd, __u64 arg,
					  long ret, bool btf)
{
	struct file *file;

	if (cmd != TRS_IOC_SQCQ_RECV)
		return cmd_tracked(cmd) ? ioctl_exit(ret) : 0;
	file = fd_target(fd, btf);
	if (!file)
		return 0;
	return recv_exit((__u64)file, arg, ret);
}

/* Mode 1: fentry/fexit on the driver's ioctl handler (target set at load). */
SEC("fentry")
int BPF_PROG(fentry_ioctl, struct file *file, unsigned int cmd,
	     unsigned long arg)
{
	if (!cmd_tracked(cmd) || cmd == TRS_IOC_SQCQ_RECV)
		return 0;
	return ioctl_enter((__u64)file, cmd, arg);
}

SEC("fexit")
int BPF_PROG(fexit_ioctl, struct file *file, unsigned int cmd,
	     unsigned long arg, long ret)
{
	if (cmd == TRS_IOC_SQCQ_RECV)
		return recv_exit((__u64)file, arg, ret);
	return cmd_tracked(cmd) ? ioctl_exit_args((__u64)file, cmd, arg, ret) : 0;
}

/* Mode 2: kprobe/kretprobe on the same handler. */
SEC("kprobe")
int BPF_KPROBE(kprobe_ioctl, struct file *file, unsigned int cmd,
	       unsigned long arg)
{
	return cmd_tracked(cmd) ? ioctl_enter((__u64)file, cmd, arg) : 0;
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

/* ---------------------------------------------------------------------- */
/* Driver hooks: completions as they are queued, SQEs of uio_t queues      */
/* ---------------------------------------------------------------------- */

/* (devid, tsid) of a driver object, at the profile's offset. */
static __always_inline int drv_inst(void *obj, __u32 off, struct st_skey *k)
{
	__u32 id[2];

	if (off == ~0u || !obj)
		return -1;
	if (bpf_probe_read_kernel(id, sizeof(id), obj + (off & 0xffff)))
		return -1;
	k->dev = id[0];
	k->ts = id[1];
	return 0;
}

/* Driver objects whose (device, TS) or queue was learned, below. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, struct st_skey);
} ts_insts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_SQS);
	__type(key, __u64);
	__type(value, struct st_qkey);
} chans SEC(".maps");

struct st_learn {
	__u32	id;		/* logic CQ id */
	__u32	stream_id;
	__u32	n;		/* candidates found */
	__u32	pad;
	struct st_skey inst;
	struct st_qkey q;
};

static long learn_cq(struct bpf_map *map, struct st_ckey *key,
		     struct st_cq *cq, struct st_learn *l)
{
	if (key->type == TRS_SQCQ_TYPE_LOGIC && key->id == l->id &&
	    (cq->stream_id & TRS_CQE_STREAM_ID_MASK) == l->stream_id &&
	    cq->dev != ST_DEV_UNKNOWN) {
		l->n++;
		l->inst.dev = cq->dev;
		l->inst.ts = key->ts;
	}
	return 0;
}

/*
 * Which (device, TS) a ts_inst is, where the profile cannot say where it
 * keeps its ids: learned from the first of its reports whose (logic CQ,
 * stream) only one known logic CQ has. Ids collide across devices, so an
 * ambiguous one teaches nothing: its report is left to the RECV.
 */
static __always_inline int ts_inst_find(void *ts_inst, __u32 logic_cq_id,
					__u32 stream_id, struct st_skey *k)
{
	__u64 ptr = (__u64)ts_inst;
	struct st_learn l = {};
	struct st_skey *known;

	if (!drv_inst(ts_inst, ts_inst_id_off, k))
		return 0;
	known = bpf_map_lookup_elem(&ts_insts, &ptr);
	if (known) {
		*k = *known;
		return 0;
	}
	l.id = logic_cq_id;
	l.stream_id = stream_id & TRS_CQE_STREAM_ID_MASK;
	l.n = opaque_zero;	/* unknown: 6.8+ verifiers converge on it */
	bpf_for_each_map_elem(&cqs, learn_cq, &l, 0);
	if (l.n != 1)
		return -1;
	*k = l.inst;
	bpf_map_update_elem(&ts_insts, &ptr, k, BPF_ANY);
	return 0;
}

/*
 * trs_logic_cq_enque (npusim_logic_cq_enque) returned 0: the report is
 * queued. Applied now, not at the RECV that reads it (closer to the
 * device's completion); that RECV then finds it applied.
 */
static __always_inline int cq_enque_done(void *ts_inst, __u32 logic_cq_id,
					 __u32 stream_id, void *kcqe, long ret)
{
	struct st_recv_ctx x = {};
	struct st_skey ik = {};
	struct st_qkey *key;

	if (ret)
		return 0;
	if (ts_inst_find(ts_inst, logic_cq_id, stream_id, &ik)) {
		CNT_INC(hook_unattributed);
		return 0;
	}
	x.cqe_addr = (__u64)kcqe;
	x.kernel = 1;
	x.cqe_size = TRS_CQE_SIZE;
	x.now = bpf_ktime_get_ns();
	if (report_read(&x, 0)) {
		CNT_INC(hook_errors);
		return 0;
	}
	ik.id = x.rep.sq_id;
	key = bpf_map_lookup_elem(&sq_ids, &ik);
	if (!key) {
		CNT_INC(hook_unattributed);
		return 0;
	}
	x.owner = key->owner;
	x.ts = key->ts;
	x.sq = sq_find(key);
	if (!x.sq) {
		CNT_INC(hook_unattributed);
		return 0;
	}
	CNT_INC(hook_reports);
	x.has_report = 1;
	head_apply(&x);
	CNT_ADD(completions, x.completions);
	return 0;
}

SEC("fexit")
int BPF_PROG(fexit_cq_enque, void *ts, __u32 logic_cq_id, __u32 stream_id,
	     __u32 task_id, void *cqe, int ret)
{
	return cq_enque_done(ts, logic_cq_id, stream_id, cqe, ret);
}

/* kprobe mode: the arguments kept from entry for the return probe. */
struct st_enque {
	__u64	ts_inst;
	__u64	cqe;
	__u32	logic_cq_id;
	__u32	stream_id;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct st_enque);
} enques SEC(".maps");

SEC("kprobe")
int BPF_KPROBE(kprobe_cq_enque, void *ts, __u32 logic_cq_id, __u32 stream_id,
	       __u32 task_id, void *cqe)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_enque e = {
		.ts_inst = (__u64)ts,
		.cqe = (__u64)cqe,
		.logic_cq_id = logic_cq_id,
		.stream_id = stream_id,
	};

	bpf_map_update_elem(&enques, &id, &e, BPF_ANY);
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(kretprobe_cq_enque, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_enque *e = bpf_map_lookup_elem(&enques, &id), c;

	if (!e)
		return 0;
	c = *e;
	bpf_map_delete_elem(&enques, &id);
	return cq_enque_done((void *)c.ts_inst, c.logic_cq_id, c.stream_id,
			     (void *)c.cqe, (int)ret);
}

/* The SEND steptime accounts for that the current thread is inside. */
static __always_inline struct st_call *send_call(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_thread *th = thread_slot(id);
	struct st_call *cp = NULL;

	if (th && READ_ONCE(th->busy) == id)
		cp = &th->call;
	else if (READ_ONCE(calls_hashed))
		cp = bpf_map_lookup_elem(&calls, &id);
	return cp && cp->cmd == TRS_IOC_SQCQ_SEND ? cp : NULL;
}

static long learn_sq(struct bpf_map *map, __u32 *slot, struct st_sq *sq,
		     struct st_learn *l)
{
	if (sq->live && (sq->flags & ST_SQ_SOFT) &&
	    sq->dev != ST_DEV_UNKNOWN &&
	    (stars_version >= 2 ||
	     (sq->stream_id & TRS_CQE_STREAM_ID_MASK) == l->stream_id)) {
		l->n++;
		l->q = sq->key;
	}
	return 0;
}

/*
 * The uio_t SQ an SQE comes from: by (device, TS, stream) where the profile
 * says where the channel keeps its ids, else by the driver's SQ object
 * (&chan->sq in the driver, struct npusim_sq in npusim: one per SQ),
 * learned from its first SQE that only one known uio_t SQ can have sent
 * (same stream; STARS v2 SQEs carry none: the only uio_t SQ).
 */
static __always_inline struct st_qkey *chan_sq(void *chan, void *drv_sq,
					       __u16 stream_id,
					       struct st_qkey *buf)
{
	struct st_skey sk = { .id = stream_id };
	__u64 ptr = (__u64)drv_sq;
	struct st_learn l = {};
	struct st_qkey *q;

	if (!drv_inst(chan, chan_id_off, &sk))
		return bpf_map_lookup_elem(&soft_sqs, &sk);
	q = bpf_map_lookup_elem(&chans, &ptr);
	if (q)
		return q;
	l.stream_id = stream_id;
	l.n = opaque_zero;	/* unknown: 6.8+ verifiers converge on it */
	bpf_for_each_map_elem(&sqs, learn_sq, &l, 0);
	if (l.n != 1)
		return NULL;
	*buf = l.q;
	bpf_map_update_elem(&chans, &ptr, buf, BPF_ANY);
	return buf;
}

/*
 * trs_chan_trace_sqe (npusim_chan_trace_sqe): an SQE on its way to the
 * device. SEND's SQEs are accounted at its exit; the others come from
 * uio_t queues, in whatever context moves them (npusim: its engine).
 */
static __always_inline int trace_sqe(void *chan, void *drv_sq, void *ksqe)
{
	struct st_send_ctx x = {};
	struct st_qkey *key, kb;
	struct st_sqe_raw r;
	struct st_sqe_head h;
	struct st_call *cp;

	/* Accounted at the SEND's exit; kept in case that exit fails. */
	cp = send_call();
	if (cp) {
		cp->sqes_sent++;
		return 0;
	}
	if (bpf_probe_read_kernel(&r, sizeof(r), ksqe))
		return 0;
	sqe_parse(&r, 0, &h);
	key = chan_sq(chan, drv_sq, h.stream_id, &kb);
	if (!key) {
		CNT_INC(hook_unattributed);
		return 0;
	}
	x.sq = sq_find(key);
	if (!x.sq || !(x.sq->flags & ST_SQ_SOFT))
		return 0;
	CNT_INC(sqes_traced);
	x.tgid = x.sq->tgid;
	x.p = proc_find(x.tgid);
	x.host_index = x.p ? proc_open_step(x.p, x.tgid, false) : 0;
	x.rec_index = opaque_zero;
	x.rec_tasks = opaque_zero;
	x.ioctl_index = opaque_zero;
	x.depth = x.sq->depth;
	x.base = x.sq->tail;
	x.sqe_addr = (__u64)ksqe;
	x.kernel = 1;
	x.enter_ns = bpf_ktime_get_ns();
	/* One SQE: no loop (6.8+ verifiers walk bpf_loop's iterations). */
	if (!x.depth)
		return 0;
	send_one(0, &x);
	send_flush(&x);
	if (x.fault) {
		CNT_INC(hook_errors);
		return 0;
	}
	x.sq->tail = x.base + 1;
	send_counters(&x, 1, NULL);
	return 0;
}

SEC("fentry")
int BPF_PROG(fentry_trace_sqe, const char *str, void *chan, void *sq,
	     void *sqe)
{
	return trace_sqe(chan, sq, sqe);
}

SEC("kprobe")
int BPF_KPROBE(kprobe_trace_sqe, const char *str, void *chan, void *sq,
	       void *sqe)
{
	return trace_sqe(chan, sq, sqe);
}

/* ---------------------------------------------------------------------- */
/* Process exit: close its open steps as incomplete, free its slot         */
/* ---------------------------------------------------------------------- */

static long drop_sq(struct bpf_map *map, __u32 *slot, struct st_sq *sq,
		    __u32 *tgid)
{
	if (sq->live && sq->tgid == *tgid)
		sq_delete(&sq->key);
	return 0;
}

static long drop_cq(struct bpf_map *map, struct st_ckey *key,
		    struct st_cq *cq, __u32 *tgid)
{
	if (cq->tgid == *tgid)
		bpf_map_delete_elem(map, key);
	return 0;
}

static long drop_file(struct bpf_map *map, __u64 *key, struct st_file *f,
		      __u32 *tgid)
{
	if (f->tgid == *tgid)
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

/*
 * Its records stay readable, and are the first to go when room is needed:
 * queued oldest first, behind those of processes that exited before.
 */
static __always_inline void steps_retire(struct st_proc *p, __u32 tgid)
{
	struct steptime_step_key key = { .tgid = tgid };
	struct steptime_step_stats *rec;
	__u32 n = p->nrecs, held, i;

	held = n < STEPTIME_PROC_STEPS ? n : STEPTIME_PROC_STEPS;
	for (i = 0; i < STEPTIME_PROC_STEPS; i++) {
		if (i >= held)
			break;
		key.index_id = p->recs[(n - held + i) % STEPTIME_PROC_STEPS];
		rec = bpf_map_lookup_elem(&steps, &key);
		if (!rec)
			continue;
		__sync_fetch_and_or(&rec->flags, STEPTIME_F_EXITED);
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
	p = proc_find(tgid);
	if (!p)
		return 0;
	/* Its memory is gone: marks since exit_sync() are lost. */
	step_abandon(tgid, p->cur_index);
	if (p->prev_index != p->cur_index)
		step_abandon(tgid, p->prev_index);
	steps_retire(p, tgid);
	proc_free(p);
	bpf_for_each_map_elem(&sqs, drop_sq, &tgid, 0);
	bpf_for_each_map_elem(&cqs, drop_cq, &tgid, 0);
	bpf_for_each_map_elem(&files, drop_file, &tgid, 0);
	__sync_fetch_and_add(&cqs_gen, 1);
	__sync_fetch_and_add(&files_gen, 1);
	CNT_INC(proc_exits);
	return 0;
}

/*
 * The last chance to read a process's marks while its memory still exists
 * (sched_process_exit runs after exit_mm()): at each thread's exit.
 */
static __always_inline int exit_sync(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct st_proc *p = proc_find(tgid);

	if (p)
		proc_sync(p, tgid);
	thread_exit();
	return 0;
}

/*
 * fentry and kprobe modes: do_exit(), which every exit passes (exit(),
 * exit_group(), a fatal signal). A syscall tracepoint instead would send
 * every syscall of every process down the traced path (syscall_regfunc()
 * sets SYSCALL_WORK_SYSCALL_TRACEPOINT on all tasks).
 */
SEC("fentry/do_exit")
int BPF_PROG(fentry_do_exit, long code)
{
	return exit_sync();
}

SEC("kprobe/do_exit")
int BPF_KPROBE(kprobe_do_exit)
{
	return exit_sync();
}

/*
 * The syscall modes, where every syscall takes the traced path already:
 * exit() and exit_group() (a fatal signal's exit is missed).
 */
SEC("tracepoint/syscalls/sys_enter_exit_group")
int tp_sys_enter_exit_group(void *ctx)
{
	return exit_sync();
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
