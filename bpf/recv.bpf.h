/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Completions: reports and SQ heads complete tasks.
 */
#ifndef STEPTIME_BPF_MAIN
#error "recv.bpf.h is part of steptime.bpf.c: include it from there"
#endif
#ifndef __RECV_BPF_H
#define __RECV_BPF_H

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

/*
 * What completing a task needs of the walk that reached it: scalars only,
 * for task_finish().
 */
struct st_done {
	__u64	now;
	__u64	timestamp;	/* the report's: a mark's device ticks */
	__u32	slot;		/* the SQ's, in sqs */
	__u32	tgid;		/* the SQ's process */
	__u32	error;		/* the report says its task failed */
	__u32	cancel;		/* FREE: complete as cancelled */
};

/* How task_finish() takes a task. */
#define ST_FINISH_HEAD	0	/* complete: the SQ head passed it */
#define ST_FINISH_OWN	1	/* complete, with its own report */
#define ST_FINISH_LATE	2	/* its report, for a task already complete */

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
	struct st_done d;		/* for the walks: set by walk_begin() */
};

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

/*
 * Complete @t once, with its own report when @own.
 * Return: 1 when this call completed it, else 0.
 */
static __always_inline int task_complete(struct st_done *d, struct st_task *t,
					 bool own)
{
	struct steptime_step_stats *rec;
	__u32 err = own && d->error;
	__u64 lat;

	if (!task_claim(t))
		return 0;
	t->flags |= ST_TASK_DONE | (own ? ST_TASK_REPORTED : 0);
	if (t->flags & (ST_TASK_MARK_START | ST_TASK_MARK_END)) {
		mark_reached(d, t, own);
		return 1;
	}
	if (!(t->flags & ST_TASK_IN_STEP))
		return 1;
	rec = step_get(d->tgid, t->index_id, false);
	if (!rec)
		return 1;
	__sync_fetch_and_add(&rec->completions, 1);
	if (own)
		__sync_fetch_and_add(&rec->reported, 1);
	if (err || d->cancel)
		__sync_fetch_and_add(&rec->errors, 1);
	if (d->cancel) {
		step_try_finish(rec);
		return 1;
	}
	step_completed_at(rec, d->now);
	lat = d->now - t->submit_ns;
	__sync_fetch_and_add(&rec->lat_sum_ns, lat);
	__sync_fetch_and_add(&rec->lat_hist[lat_bucket(lat)], 1);
	step_try_finish(rec);
	return 1;
}

/*
 * A report for a task already complete (an SQ head passed it first): only
 * what the report adds, its error and a mark's ticks.
 */
static __always_inline void report_late(struct st_done *d, struct st_task *t)
{
	struct steptime_step_stats *rec;

	t->flags |= ST_TASK_REPORTED;
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
	t = &sq->t[pos & (ST_SQ_DEPTH - 1)];
	if (how == ST_FINISH_LATE) {
		report_late(d, t);
		return 0;
	}
	return task_complete(d, t, how == ST_FINISH_OWN);
}

/* Set up x->d for walks of the SQ in @slot (x->sq, x->rep, x->cancel set). */
static __always_inline void walk_begin(struct st_recv_ctx *x, __u32 slot)
{
	x->d.now = x->now;
	x->d.timestamp = x->rep.timestamp;
	x->d.slot = slot;
	x->d.tgid = x->sq->tgid;
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
	struct st_recv_ctx *x = arg;
	struct st_sq *sq = x->sq;
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
 * The report's own task, when the head did not bring it: either already
 * complete (its slot is head - 1; or the CQ hook applied this report
 * first), or still ahead of the head (match mode reports out of order):
 * complete that one alone. A report is applied to its task once.
 */
static __always_inline void report_find(struct st_recv_ctx *x)
{
	struct st_sq *sq = x->sq;
	__u32 d = sq->depth, pos;
	struct st_task *t;

	if (!d)
		return;
	pos = (x->rep.sq_head + d - 1) % d;
	t = &sq->t[pos & (ST_SQ_DEPTH - 1)];
	if ((t->flags & ST_TASK_DONE) && task_is(x, t)) {
		x->found = 1;
		if (!(t->flags & ST_TASK_REPORTED))
			task_finish(&x->d, pos, ST_FINISH_LATE);
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

/*
 * A head, with or without a report, for the SQ in a slot of sqs: what
 * sq_head_apply() gets, and gives back.
 */
struct st_head {
	struct st_report rep;
	__u64	now;
	__u32	slot;
	__u32	has_report;
	__u32	kernel;		/* the report is in kernel memory */
	__u32	completions;	/* out: tasks completed */
};

/*
 * Apply @h to its SQ: a global function, so that the walks it makes are
 * verified once, not once for each place a head comes from (RECV, QUERY,
 * the completion hook).
 */
__noinline int sq_head_apply(struct st_head *h)
{
	struct st_recv_ctx x = {};
	__u32 slot;

	if (!h)
		return 0;
	slot = h->slot;
	x.sq = bpf_map_lookup_elem(&sqs, &slot);
	if (!x.sq)
		return 0;
	x.now = h->now;
	x.rep = h->rep;
	x.has_report = h->has_report;
	x.kernel = h->kernel;
	walk_begin(&x, slot);
	head_apply(&x);
	h->completions = x.completions;
	return 0;
}

static __always_inline void report_apply(struct st_recv_ctx *x)
{
	struct st_qkey key = {
		.owner = x->owner,
		.ts = x->ts,
		.id = x->rep.sq_id,
	};
	struct st_head h = { .rep = x->rep, .now = x->now, .has_report = 1 };

	CNT_ADD_AT(x->cnt, reports, 1);
	h.slot = sq_slot_cached(&key, x->tid);
	if (h.slot >= STEPTIME_MAX_SQS) {
		CNT_INC(reports_unmatched);
		return;
	}
	sq_head_apply(&h);
	x->completions += h.completions;
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

static __always_inline void recv_account(struct st_call *c, struct st_file *f,
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
static __always_inline void query_account(struct st_call *c, struct st_file *f,
				     __u64 now, __u64 id,
				     struct steptime_counters *cnt)
{
	struct trs_sqcq_query_info *qi;
	struct st_qkey key = {};
	struct st_head h = {};
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
	h.slot = sq_slot_cached(&key, id);
	if (h.slot >= STEPTIME_MAX_SQS)
		return;
	h.now = now;
	h.rep.sq_head = qi->value[0] & 0xffff;
	sq_head_apply(&h);
	CNT_ADD_AT(cnt, completions, h.completions);
	CNT_ADD_AT(cnt, head_completions, h.completions);
}

/* RECV's exit, a global function (struct st_ioctl). */
__noinline int on_recv(struct st_ioctl *io)
{
	__u32 zero = 0;

	if (io && io->has_file)
		recv_account(&io->c, &io->f, io->now, io->id,
			     bpf_map_lookup_elem(&counters, &zero));
	return 0;
}

/* QUERY's exit, a global function (struct st_ioctl). */
__noinline int on_query(struct st_ioctl *io)
{
	__u32 zero = 0;

	if (io && io->has_file)
		query_account(&io->c, &io->f, io->now, io->id,
			      bpf_map_lookup_elem(&counters, &zero));
	return 0;
}

#endif /* __RECV_BPF_H */
