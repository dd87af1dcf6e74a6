/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Completions: reports and SQ heads complete tasks.
 */
#ifndef __RECV_BPF_H
#define __RECV_BPF_H

#include "common.bpf.h"
#include "types.bpf.h"
#include "maps.bpf.h"
#include "thread.bpf.h"
#include "proc.bpf.h"
#include "marks.bpf.h"
#include "queues.bpf.h"
#include "walk.bpf.h"

/* ---------------------------------------------------------------------- */
/* Completions: reports (RECV, the completion hook) and heads (QUERY)      */
/* ---------------------------------------------------------------------- */

/*
 * A mapped SQ whose submissions steptime never sees: not allocated through
 * a probed libascend_hal.so, and uio_d, or uio_t when the SQE trace hook
 * is not attached.
 */
static __always_inline bool sq_blind(__u32 flags)
{
	return (flags & ST_SQ_UIO) && !(flags & ST_SQ_HAL) &&
	       !((flags & ST_SQ_SOFT) && sqe_hook);
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
	rec = step_get(tgid, index_id, false);
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
 * A uio_t SQ whose SQEs the trace hook counts (the HAL's probes do not):
 * the kernel sees each at the worker's copy, up to milliseconds after the
 * send, and the process's marks reach steptime at its next ioctl or ring
 * kick. A stream-marked step stays exact (its marks travel in the SQ, in
 * order with its SQEs); a host-marked one cannot know which of its tasks
 * were sent while it was open: from this ALLOC on, the process's
 * host-marked steps are flagged STEPTIME_F_UIO, the open one now.
 */
static __always_inline void uio_host_taint(__u32 tgid)
{
	struct st_proc *p = proc_find(tgid);
	struct steptime_step_stats *rec;
	__u64 index_id;

	if (!p || (p->host_taint & STEPTIME_F_UIO))
		return;
	p->host_taint |= STEPTIME_F_UIO;
	index_id = proc_open_step(p, tgid, false);
	if (!index_id)
		return;
	rec = step_get(tgid, index_id, false);
	if (rec && rec->stream == STEPTIME_STREAM_NONE)
		rec->flags |= STEPTIME_F_UIO;
}

/*
 * A blind SQ's head moved: that many of its tasks completed. They are
 * counted process-wide (counters completions, uio_completions), exactly
 * while a report or head query comes at least every depth / 2 tasks, and
 * in no step.
 */
static __always_inline void uio_advance(struct st_recv_ctx *x, struct st_sq *sq)
{
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

/*
 * Whether a report's head may be of the SQ's current lap: a CQE's sq_head
 * is the position after its task (npusim_engine.c, as the hardware's), so
 * the slot before it holds that task, unless the SQ has since come round
 * and reused it for another. A stale head from a lap before, read against
 * the tasks completed since, would look almost a whole SQ ahead: on a full
 * SQ nothing else tells the two apart. A slot that holds no task (past a
 * SEND's loop bound) tells nothing either way.
 */
static __always_inline bool report_head_current(struct st_recv_ctx *x,
						struct st_sq *sq)
{
	__u32 d = sq->depth, h = x->rep.sq_head;
	struct st_task *t;

	if (!d || h >= d)
		return true;	/* sq_advance() takes none */
	t = &sq->t[((h + d - 1) % d) & (ST_SQ_DEPTH - 1)];
	return !(t->flags & (ST_TASK_VALID | ST_TASK_DONE | ST_TASK_CONT)) ||
	       task_is(x, t);
}

/* A head for @sq: from a report or a QUERY. */
static __always_inline void head_apply(struct st_recv_ctx *x, struct st_sq *sq)
{

	if (sq->flags & ST_SQ_PREEXISTING)
		return;
	/* Its tasks are completed by its process's journal, not by heads. */
	if (journal_on && (sq->flags & (ST_SQ_HAL | ST_SQ_UIO)) ==
			  (ST_SQ_HAL | ST_SQ_UIO))
		return;
	if (sq_blind(sq->flags)) {
		uio_advance(x, sq);
		return;
	}
	x->found = opaque_zero;
	if (!x->has_report || report_head_current(x, sq))
		sq_advance(x, sq, x->rep.sq_head);
	else
		CNT_INC(heads_behind);
	if (x->has_report && !x->found) {
		report_find(x, sq);
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
	struct st_sq *sq;
	__u32 slot;

	CNT_INC(reports);
	slot = sq_slot_cached(&key, x->tid);
	sq = slot < STEPTIME_MAX_SQS ? bpf_map_lookup_elem(&sqs, &slot) : NULL;
	if (!sq) {
		CNT_INC(reports_unmatched);
		return;
	}
	x->has_report = 1;
	walk_begin(x, sq, slot);
	head_apply(x, sq);
}

/*
 * Read report @i at x->cqe_addr: a hardware CQE for a RECV of type NORMAL,
 * else a logic CQE, each x->cqe_size apart (the size given at ALLOC). A
 * control stream's 16-byte logic CQE is the struct's first half: no
 * timestamp.
 */
static __always_inline int report_read(struct st_recv_ctx *x, __u32 i)
{
	__u64 addr = x->cqe_addr + (__u64)i * x->cqe_size;

	if (x->hw) {
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
	struct trs_logic_cqe c = {};
	__u32 len = x->cqe_size < sizeof(c) ? ST_CTRL_CQE_SIZE : sizeof(c);
	int err;

	err = x->kernel ? bpf_probe_read_kernel(&c, len, (void *)addr) :
			  bpf_probe_read_user(&c, len, (void *)addr);
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

/* Report @i of a RECV: @arg is a struct st_walk (its SQ not yet known). */
static long recv_one(__u32 i, void *arg)
{
	struct st_walk *w = arg;
	struct st_recv_ctx *x = w->x;

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
	if (cq && cq->cqe_size >= ST_CTRL_CQE_SIZE &&
	    cq->cqe_size <= TRS_CQE_SIZE)
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
				    struct steptime_counters *cnt,
				    struct st_recv_ctx *x)
{
	struct trs_report_recv_info *ri;
	struct st_walk w = { .x = x };
	__u32 n, i;

	__builtin_memset(x, 0, sizeof(*x));
	/* A per-CPU scratch lookup is a helper call on 6.1: on the stack. */
	if (bpf_probe_read_user(x->recv_args, sizeof(x->recv_args),
				(void *)c->arg)) {
		CNT_INC(hook_errors);
		return;
	}
	ri = (struct trs_report_recv_info *)x->recv_args;
	CNT_ADD_AT(cnt, recvs, 1);
	if (ri->type != TRS_SQCQ_TYPE_NORMAL && ri->type != TRS_SQCQ_TYPE_LOGIC)
		return;
	x->now = now;
	x->cqe_addr = ri->cqe_addr;
	x->tid = id;
	x->owner = f->owner;
	x->ts = ri->tsId;
	x->cqe_size = cq_report_size(f->owner, ri->tsId, ri->type, ri->cqId,
				    id);
	x->hw = ri->type == TRS_SQCQ_TYPE_NORMAL;
	n = ri->report_cqe_num < ri->cqe_num ? ri->report_cqe_num :
					       ri->cqe_num;
	if (n > STEPTIME_RECV_MAX) {
		CNT_ADD(reports_unread, n - STEPTIME_RECV_MAX);
		n = STEPTIME_RECV_MAX;
	}
	if (has_bpf_loop) {
		bpf_loop(n, recv_one, &w, 0);
	} else {
		/* Unrolled: nothing for the verifier to prove about a counter. */
#pragma clang loop unroll(full)
		for (i = 0; i < STEPTIME_RECV_FALLBACK; i++)
			if (i >= n || recv_one(i, &w))
				break;
		if (n > STEPTIME_RECV_FALLBACK)
			CNT_ADD(reports_unread, n - STEPTIME_RECV_FALLBACK);
	}
	CNT_ADD_AT(cnt, completions, x->completions);
}

/*
 * Every task of @sq (in slot @slot) before @head, the SQ_HEAD a query
 * read, complete at @now. Return: the tasks it completed.
 */
static __always_inline __u32 head_query_apply(struct st_recv_ctx *x,
					      struct st_sq *sq, __u32 slot,
					      __u32 head, __u64 now)
{
	x->now = now;
	x->rep.sq_head = head & 0xffff;
	walk_begin(x, sq, slot);
	head_apply(x, sq);
	return x->completions;
}

/* QUERY SQ_HEAD: the runtime's view of progress, and a completion bound. */
static __always_inline void on_query(struct st_call *c, struct st_file *f,
				     __u64 now, __u64 id,
				     struct steptime_counters *cnt,
				     struct st_recv_ctx *x)
{
	struct trs_sqcq_query_info *qi;
	struct st_qkey key = {};
	union st_args *a;
	struct st_sq *sq;
	__u32 slot, n;

	a = args_read(c->arg, sizeof(a->query));
	if (!a) {
		CNT_INC(hook_errors);
		return;
	}
	qi = &a->query;
	if (qi->type != TRS_SQCQ_TYPE_NORMAL || qi->prop != TRS_SQCQ_PROP_SQ_HEAD)
		return;
	__builtin_memset(x, 0, sizeof(*x));
	CNT_ADD_AT(cnt, head_queries, 1);
	key.owner = f->owner;
	key.ts = qi->tsId;
	key.id = qi->sqId;
	slot = sq_slot_cached(&key, id);
	sq = slot < STEPTIME_MAX_SQS ? bpf_map_lookup_elem(&sqs, &slot) : NULL;
	if (!sq)
		return;
	n = head_query_apply(x, sq, slot, qi->value[0], now);
	CNT_ADD_AT(cnt, completions, n);
	CNT_ADD_AT(cnt, head_completions, n);
}

#endif /* __RECV_BPF_H */
