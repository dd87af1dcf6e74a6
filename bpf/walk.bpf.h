/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Walks of an SQ: from its done position to a head, each task completed
 * once (whoever walks it: a RECV, a QUERY, the completion hook, a FREE),
 * with its own report where one names it.
 */
#ifndef __WALK_BPF_H
#define __WALK_BPF_H

#include "common.bpf.h"
#include "types.bpf.h"
#include "maps.bpf.h"
#include "step.bpf.h"
#include "queues.bpf.h"

/* A stream END mark the device passed; its ticks only with a report. */
static __always_inline void mark_reached(struct st_done *d, struct st_task *t,
					 bool own)
{
	struct steptime_step_stats *rec;

	if (d->cancel)
		return;
	/*
	 * Its SEND made the record: one gone since (recycled, evicted) is not
	 * made again with only device ticks.
	 */
	rec = step_get(d->tgid, t->index_id, false);
	if (!rec)
		return;
	/* Timeline events, where the step API has them, win. */
	if (own && !d->error && !(rec->flags & STEPTIME_F_DEV_EVENT)) {
		if (t->flags & ST_TASK_MARK_START) {
			rec->dev_start_ticks = d->timestamp;
			rec->flags |= STEPTIME_F_DEV_START;
		} else {
			rec->dev_end_ticks = d->timestamp;
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

/* @t's report applied: once per task, whichever walk comes first. */
static __always_inline bool report_take(struct st_task *t)
{
	__u32 r = ST_TASK_WORD(ST_TASK_REPORTED);

	return !(__sync_fetch_and_or(&t->word, r) & r);
}

/*
 * A report for a task already complete (an SQ head passed it first): only
 * what the report adds, its error and a mark's ticks.
 */
static __always_inline void report_late(struct st_done *d, struct st_task *t)
{
	struct steptime_step_stats *rec;

	if (!report_take(t))
		return;
	if (t->flags & (ST_TASK_MARK_START | ST_TASK_MARK_END)) {
		mark_reached(d, t, true);
		return;
	}
	if (!(t->flags & ST_TASK_IN_STEP))
		return;
	rec = step_get(d->tgid, t->index_id, false);
	if (!rec)
		return;
	__sync_fetch_and_add(&rec->reported, 1);
	if (d->error)
		__sync_fetch_and_add(&rec->errors, 1);
}

/*
 * Take @t from VALID to DONE in one step, as task_claim() takes VALID: a
 * walk looking between the two (report_find(), find_one()) would see it
 * neither running nor complete, and lose its report.
 */
static __always_inline bool task_take(struct st_task *t)
{
	__u32 v = ST_TASK_WORD(ST_TASK_VALID), done = ST_TASK_WORD(ST_TASK_DONE);
	__u32 old = READ_ONCE(t->word), cur;
	int i;

#pragma clang loop unroll(full)
	for (i = 0; i < 3; i++) {
		if (!(old & v))
			return false;
		cur = __sync_val_compare_and_swap(&t->word, old,
						  (old & ~v) | done);
		if (cur == old)
			return true;
		old = cur;
	}
	/* Still contended (a report's flag): in two steps after all. */
	if (!task_claim(t))
		return false;
	__sync_fetch_and_or(&t->word, done);
	return true;
}

/*
 * Complete @t once, with its own report when @own.
 * Return: 1 when this call completed it, else 0.
 */
static __always_inline int task_complete(struct st_done *d, struct st_task *t,
					 bool own)
{
	struct steptime_step_stats *rec;
	__u32 err;
	__u64 lat;

	if (!task_take(t)) {
		/*
		 * Another walk (a head, the CQ hook's) took it between the
		 * caller's look and this claim: the report is still its own.
		 */
		if (own)
			report_late(d, t);
		return 0;
	}
	/* Atomic: a late report may be setting REPORTED meanwhile. */
	own = own && report_take(t);
	err = own && d->error;
	if (t->flags & (ST_TASK_MARK_START | ST_TASK_MARK_END)) {
		mark_reached(d, t, own);
		return 1;
	}
	if (!(t->flags & ST_TASK_IN_STEP))
		return 1;
	rec = step_get(d->tgid, t->index_id, false);
	if (!rec)
		return 1;
	if (own)
		__sync_fetch_and_add(&rec->reported, 1);
	if (err || d->cancel)
		__sync_fetch_and_add(&rec->errors, 1);
	if (!d->cancel) {
		step_completed_at(rec, d->now);
		lat = d->now - t->submit_ns;
		__sync_fetch_and_add(&rec->lat_sum_ns, lat);
		__sync_fetch_and_add(&rec->lat_hist[lat_bucket(lat)], 1);
	}
	/*
	 * Counted last: another CPU that sees every task complete may
	 * finish and emit the step at once (its host END consumed there),
	 * and the record must already have this task's time.
	 */
	__sync_fetch_and_add(&rec->completions, 1);
	step_try_finish(rec);
	return 1;
}

/*
 * @t, at slot @pos of @sq, completed by a head, its report still to come:
 * kept for it. A runtime that fills its SQ may read the report after a
 * whole SQ of later tasks has taken the slot (hal_steps' full variants).
 * From now on its report is applied here (report_find()), not in the
 * slot: one record of whether it came.
 */
static __always_inline void task_keep(struct st_sq *sq, struct st_task *t,
				      __u32 pos)
{
	/* Atomic: a RECV and the CQ hook may walk heads on two CPUs. */
	__u32 n = __sync_fetch_and_add(&sq->kept_next, 1);
	struct st_kept *k = &sq->kept[n & (ST_SQ_KEPT - 1)];

	k->t = *t;
	k->slot = pos;
	/* A report that came meanwhile was applied to the slot. */
	if (READ_ONCE(t->flags) & ST_TASK_REPORTED)
		k->t.flags |= ST_TASK_REPORTED;
}

/*
 * Take the task at position @pos of the SQ in slot d->slot as @how says
 * (ST_FINISH_*). A global function: the walks reach a task from several
 * places, and the verifier walks this once.
 * Return: 1 when this call completed the task, else 0.
 */
__noinline int task_finish(struct st_done *d, __u32 pos, __u32 how)
{
	struct st_task *t;
	struct st_sq *sq;
	__u32 slot;

	if (!d)
		return 0;
	slot = d->slot;
	sq = bpf_map_lookup_elem(&sqs, &slot);
	if (!sq)
		return 0;
	if (how == ST_FINISH_KEPT) {
		report_late(d, &sq->kept[pos & (ST_SQ_KEPT - 1)].t);
		return 0;
	}
	t = &sq->t[pos & (ST_SQ_DEPTH - 1)];
	if (how == ST_FINISH_LATE) {
		report_late(d, t);
		return 0;
	}
	if (!task_complete(d, t, how == ST_FINISH_OWN))
		return 0;
	if (how == ST_FINISH_HEAD && (t->flags & ST_TASK_WR_CQE))
		task_keep(sq, t, pos);
	return 1;
}

/* Set up x->d for walks of @sq, in @slot (x->rep and x->cancel set). */
static __always_inline void walk_begin(struct st_recv_ctx *x, struct st_sq *sq,
				       __u32 slot)
{
	x->d.now = x->now;
	x->d.timestamp = x->rep.timestamp;
	x->d.slot = slot;
	x->d.tgid = sq->tgid;
	x->d.error = x->rep.error;
	x->d.cancel = x->cancel;
}

static __always_inline bool task_is(struct st_recv_ctx *x, struct st_task *t)
{
	return (__u16)t->task_id == (__u16)x->rep.task_id &&
	       t->stream_id == x->rep.stream_id;
}

/* Complete the task at x->cur; stop at the target. */
static long complete_one(__u32 i, void *arg)
{
	struct st_walk *w = arg;
	struct st_recv_ctx *x = w->x;
	struct st_sq *sq = w->sq;
	struct st_task *t;
	__u32 pos;
	bool own;

	if (!sq || x->cur >= x->target || !sq->depth)
		return 1;
	pos = x->cur % sq->depth;
	t = &sq->t[pos & (ST_SQ_DEPTH - 1)];
	if (t->flags & ST_TASK_VALID) {
		own = x->has_report && !x->found && !x->cancel &&
		      task_is(x, t);
		if (own)
			x->found = 1;
		x->completions += task_finish(&x->d, pos, own ? ST_FINISH_OWN :
							      ST_FINISH_HEAD);
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

static __always_inline void sq_walk(struct st_recv_ctx *x, struct st_sq *sq)
{
	struct st_walk w = { .x = x, .sq = sq };
	__u32 i;

	if (has_bpf_loop) {
		bpf_loop(walk_len(x), complete_one, &w, 0);
	} else {
		/* Unrolled: nothing for the verifier to prove about a counter. */
#pragma clang loop unroll(full)
		for (i = 0; i < STEPTIME_LOOP_FALLBACK; i++)
			if (complete_one(i, &w))
				break;
	}
}

/* Every task of @sq before position @pos complete. */
static __always_inline void sq_complete_to(struct st_recv_ctx *x,
					   struct st_sq *sq, __u64 pos)
{
	x->cur = sq->done;
	x->target = pos;
	sq_walk(x, sq);
	sq->done = x->cur;
}

/*
 * The SQ has been consumed up to slot @head (exclusive): every task before
 * it is complete. Match mode's heads can step back: a head behind what is
 * already complete (further from done than the tail) completes nothing.
 */
static __always_inline void sq_advance(struct st_recv_ctx *x, struct st_sq *sq,
				       __u32 head)
{
	__u32 d = sq->depth, ahead;

	if (!d || head >= d)
		return;
	ahead = (head + d - sq->done % d) % d;
	if (ahead > sq->tail - sq->done) {
		CNT_INC(heads_behind);
		return;
	}
	sq_complete_to(x, sq, sq->done + ahead);
}

/* Find the report's task among those still running (match mode). */
static long find_one(__u32 i, void *arg)
{
	struct st_walk *w = arg;
	struct st_recv_ctx *x = w->x;
	struct st_sq *sq = w->sq;
	struct st_task *t;
	__u32 pos;

	if (!sq || x->cur >= x->target || !sq->depth)
		return 1;
	pos = x->cur % sq->depth;
	t = &sq->t[pos & (ST_SQ_DEPTH - 1)];
	if ((t->flags & (ST_TASK_VALID | ST_TASK_DONE)) && task_is(x, t)) {
		x->found = 1;
		if (t->flags & ST_TASK_VALID)
			x->completions += task_finish(&x->d, pos,
						      ST_FINISH_OWN);
		else if (!(t->flags & ST_TASK_REPORTED))
			task_finish(&x->d, pos, ST_FINISH_LATE);
		return 1;
	}
	x->cur++;
	return 0;
}

/*
 * Where the task a report with head @h names is recorded: in the slot
 * before the head, or, for a task of several SQEs, at its last SQE
 * (sqe_continue()) while the head falls inside the task (npusim's is
 * after its first SQE, whose report it is; the ABI says only how far the
 * SQ has been consumed).
 */
static __always_inline __u32 report_pos(struct st_sq *sq, __u32 h)
{
	__u32 d = sq->depth, pos = (h + d - 1) % d, i;

#pragma clang loop unroll(full)
	for (i = 0; i < ST_TASK_SQES_MAX - 1; i++) {
		if (!(sq->t[pos & (ST_SQ_DEPTH - 1)].flags & ST_TASK_CONT))
			break;
		pos = (pos + 1) % d;
	}
	return pos;
}

/*
 * The report's task among those kept (task_keep()): its ids, and its
 * record at the report's head or up to a task's SQEs after it.
 */
static __always_inline void report_find_kept(struct st_recv_ctx *x,
					     struct st_sq *sq)
{
	__u32 d = sq->depth, first = (x->rep.sq_head + d - 1) % d, i;
	struct st_kept *k;

#pragma clang loop unroll(full)
	for (i = 0; i < ST_SQ_KEPT; i++) {
		k = &sq->kept[i];
		if (!(k->t.flags & ST_TASK_DONE) || !task_is(x, &k->t) ||
		    (k->slot + d - first) % d >= ST_TASK_SQES_MAX)
			continue;
		/* A v1 task's further SQEs report it again. */
		x->found = 1;
		if (!(k->t.flags & ST_TASK_REPORTED))
			task_finish(&x->d, i, ST_FINISH_KEPT);
		return;
	}
}

/*
 * The report's own task, when the head did not bring it: either already
 * complete (kept, when a head completed it; else in its slot, head - 1 or
 * a few after for a task of several SQEs, when the CQ hook applied this
 * report first), or still ahead of the head (match mode reports out of
 * order): complete that one alone. A report is applied to its task once.
 */
static __always_inline void report_find(struct st_recv_ctx *x, struct st_sq *sq)
{
	struct st_walk w = { .x = x, .sq = sq };
	__u32 d = sq->depth, pos;
	struct st_task *t;

	if (!d)
		return;
	report_find_kept(x, sq);
	if (x->found)
		return;
	pos = report_pos(sq, x->rep.sq_head);
	t = &sq->t[pos & (ST_SQ_DEPTH - 1)];
	if ((t->flags & ST_TASK_DONE) && task_is(x, t)) {
		x->found = 1;
		if (!(t->flags & ST_TASK_REPORTED))
			task_finish(&x->d, pos, ST_FINISH_LATE);
		return;
	}
	if (has_bpf_loop) {
		x->cur = sq->done;
		x->target = sq->tail;
		bpf_loop(walk_len(x), find_one, &w, 0);
	}
}

#endif /* __WALK_BPF_H */
