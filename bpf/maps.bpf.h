/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every map of the program: the pinned ABI maps first, then the private state.
 */
#ifndef __MAPS_BPF_H
#define __MAPS_BPF_H

#include "types.bpf.h"

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

/* Each process slot's copy of the ring run it is consuming. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STEPTIME_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct st_mark_run);
} mark_runs SEC(".maps");

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
 * found by an inlined lookup, not at a variable offset into the thread's
 * slot, which the verifier would have to track through every path.
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

/*
 * The ioctl exit's call and accounting state (st_cmd_ctx), here rather than
 * on its stack: the combined stack of a call chain (the exit, a bpf_loop()
 * callback, a global function) is at most 512 bytes. Only the ioctl exit
 * program uses it, and the kernel never runs a program nested in itself
 * on one CPU (fentry, tp_btf and raw_tp count a miss instead; kprobes and
 * tracepoints run with bpf_prog_active held).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct st_cmd_ctx);
} cmd_ctx SEC(".maps");

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

/* Driver objects whose (device, TS) or queue was learned, below. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, struct st_skey);
} ts_insts SEC(".maps");

/*
 * The SQE trace hook's channels: bound to their SQ in its ALLOC where the
 * channel hooks are attached (by the driver's struct trs_chan), else the
 * driver's SQ objects learned from their SQEs (hooks.bpf.h: chan_sq()).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_SQS);
	__type(key, __u64);
	__type(value, struct st_chan);
} chans SEC(".maps");

/*
 * The last channel each CPU's SQE trace hook found bound to one of the HAL's
 * uio_t SQs, whose SQEs it skips (their sends counted them): the worker
 * copies a queue's SQEs in a run, so the rest of the run costs it no hash
 * lookup. Valid while chans_gen is what it was then: every change of a
 * binding, and every SQ that goes, moves it on (chans_changed()).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct st_chan_last);
} chan_last SEC(".maps");

__u64 chans_gen;

/* A binding of chans made, changed or dropped, or an SQ gone. */
static __always_inline void chans_changed(void)
{
	__sync_fetch_and_add(&chans_gen, 1);
}

/*
 * Threads inside a probed libascend_hal.so entry point (hal.bpf.h), each in
 * its slot of hal_threads (by its id, as threads): an inlined lookup and a
 * compare-and-swap each way, where a hash update costs as much as the
 * uprobe's trap. Of two threads inside at once whose ids share a slot, the
 * second keeps its call in hal_calls, which holds hal_calls_hashed
 * entries. LRU: a thread killed inside one leaves an entry nobody deletes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ST_THREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct st_hal_call);
} hal_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, STEPTIME_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct st_hal_call);
} hal_calls SEC(".maps");

__u64 hal_calls_hashed;

/* The SQs allocated through the HAL, as its calls name them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEPTIME_MAX_SQS);
	__type(key, struct st_hkey);
	__type(value, struct st_qkey);
} hal_sqs SEC(".maps");

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

#endif /* __MAPS_BPF_H */
