// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: the execution engine, one kernel thread.
 *
 * The simulated device runs in virtual time: a task starts at the latest of
 * its submission, the end of the previous task of its SQ and the moment a
 * unit became free, and ends its duration later. The thread only has to
 * catch up: each wakeup completes, in end order, every task whose end has
 * passed and starts the next ones, then sleeps until the earliest end still
 * ahead (or, with mapped SQs, at most NPUSIM_UIO_POLL_US). Its own latency
 * delays the reports, never the simulated times, so the ground truth does
 * not depend on how fast the host (or TCG) is.
 */
#include <linux/kthread.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/sched.h>

#include "npusim.h"

/* Completions per hold of ts->lock, so that ioctls are never starved. */
#define NPUSIM_ENGINE_BUDGET	1024
#define NPUSIM_ENGINE_SLACK_NS	(20 * NSEC_PER_USEC)

bool npusim_sqe_valid(const struct trs_sqe *sqe)
{
	u32 type = sqe->type & TRS_SQE_TYPE_MASK;

	return type < 32 && (NPUSIM_SQE_VALID_TYPES & BIT(type));
}

void npusim_engine_kick(struct npusim_ts *ts)
{
	WRITE_ONCE(ts->kick, true);
	wake_up_process(ts->engine);
}

/* Caller holds ts->lock. */
void npusim_engine_make_ready(struct npusim_queue *q)
{
	if (q->dead || q->running || q->on_ready || q->stalled ||
	    q->head == q->tail)
		return;
	list_add_tail(&q->ready_node, &q->ts->ready);
	q->on_ready = true;
}

static u64 npusim_task_duration(const struct npusim_config *cfg,
				const struct trs_sqe *sqe)
{
	u32 type = sqe->type & TRS_SQE_TYPE_MASK;
	u32 ns = sqe->task.sim_duration_ns;

	/* Marks are instantaneous unless the SQE asks otherwise. */
	if (ns || type == TRS_SQE_PLACE_HOLDER || type == TRS_SQE_EVENT_RECORD)
		return ns;
	return cfg->default_duration_ns;
}

static u32 npusim_task_error(const struct npusim_config *cfg,
			     const struct npusim_slot *slot, u64 seq)
{
	if (slot->bad)
		return slot->bad;
	if (slot->sqe.task.sim_error)
		return slot->sqe.task.sim_error;
	if (cfg->inject_error_every && (seq + 1) % cfg->inject_error_every == 0)
		return cfg->inject_error_code;
	return 0;
}

static bool npusim_has_timestamp(u8 type)
{
	type &= TRS_SQE_TYPE_MASK;
	return type == TRS_SQE_PLACE_HOLDER || type == TRS_SQE_EVENT_RECORD;
}

/*
 * Start the head task of @q on @u. Fails (and stalls @q until RECV makes
 * room) when the task will write a report and its CQ could not take it.
 */
static bool npusim_task_start(struct npusim_ts *ts, struct npusim_unit *u,
			      struct npusim_queue *q)
{
	struct npusim_slot *slot = &q->slots[q->head % q->depth];
	struct npusim_task_truth *t = npusim_truth(q, q->head);
	u32 error = npusim_task_error(&ts->cfg, slot, q->head);
	bool report = error ||
		      (slot->sqe.flags & TRS_SQE_F_WR_CQE);
	u64 start;

	if (report && q->cq_count + q->cq_reserved >= q->cq_depth) {
		q->stalled = true;
		return false;
	}
	start = max3(u->free_ns, t->submit_ns, q->last_end_ns);
	u->q = q;
	u->error = error;
	u->report = report;
	u->end_ns = start + (slot->bad ? 0 :
			     npusim_task_duration(&ts->cfg, &slot->sqe));
	q->running = true;
	q->cq_reserved += report;
	t->state = NPUSIM_TASK_RUNNING;
	t->start_ns = start;
	t->start_ticks = npusim_ticks(&ts->cfg, start);
	return true;
}

static void npusim_task_report(struct npusim_ts *ts, struct npusim_unit *u,
			       struct npusim_queue *q,
			       struct npusim_task_truth *t)
{
	struct npusim_slot *slot = &q->slots[t->pos];
	struct trs_logic_cqe cqe = {
		.stream_id	= slot->sqe.rt_stream_id,
		.task_id	= slot->sqe.task_id,
		.error_code	= u->error,
		.sqe_type	= slot->sqe.type & TRS_SQE_TYPE_MASK,
		.sq_id		= q->sq_id,
		.sq_head	= q->head % q->depth,
		.flags		= u->error ? TRS_CQE_F_ERROR : 0,
		.enque_timestamp = slot->enque_ticks,
	};

	if (!u->error && npusim_has_timestamp(slot->sqe.type))
		cqe.timestamp = t->start_ticks;
	q->cq_reserved--;
	t->report = 1;
	npusim_logic_cq_enque(ts, q->cq_id, cqe.stream_id, cqe.task_id, &cqe);
}

static void npusim_task_complete(struct npusim_ts *ts, struct npusim_unit *u)
{
	struct npusim_queue *q = u->q;
	struct npusim_task_truth *t = npusim_truth(q, q->head);

	t->state = NPUSIM_TASK_DONE;
	t->end_ns = u->end_ns;
	t->end_ticks = npusim_ticks(&ts->cfg, u->end_ns);
	t->error_code = u->error;
	ts->stats.tasks_queued--;
	ts->stats.completed++;
	if (u->error)
		ts->stats.errors++;

	WRITE_ONCE(q->head, q->head + 1);
	q->last_end_ns = u->end_ns;
	q->running = false;
	u->q = NULL;
	u->free_ns = u->end_ns;
	if (q->mapped) {
		struct npusim_sq_ctrl *ctrl = q->ring;

		/* pairs with the runtime's acquire: it may reuse the slot */
		smp_store_release(&ctrl->head, (u32)(q->head % q->depth));
	}
	if (u->report)
		npusim_task_report(ts, u, q, t);
	/* Wake a blocked SEND once, not at every completion. */
	if (q->sq_want && q->depth - (q->tail - q->head) >= q->sq_want) {
		q->sq_want = 0;
		WRITE_ONCE(q->sq_gen, q->sq_gen + 1);
		wake_up(&q->sq_wait);
	}
	npusim_engine_make_ready(q);
}

static struct npusim_unit *npusim_unit_free(struct npusim_ts *ts)
{
	u32 i;

	for (i = 0; i < ts->cfg.units; i++)
		if (!ts->units[i].q)
			return &ts->units[i];
	return NULL;
}

static struct npusim_unit *npusim_unit_next(struct npusim_ts *ts)
{
	struct npusim_unit *best = NULL;
	u32 i;

	for (i = 0; i < ts->cfg.units; i++) {
		struct npusim_unit *u = &ts->units[i];

		if (u->q && (!best || u->end_ns < best->end_ns))
			best = u;
	}
	return best;
}

static void npusim_units_fill(struct npusim_ts *ts)
{
	struct npusim_queue *q;
	struct npusim_unit *u;

	while (!list_empty(&ts->ready)) {
		u = npusim_unit_free(ts);
		if (!u)
			return;
		q = list_first_entry(&ts->ready, struct npusim_queue,
				     ready_node);
		list_del_init(&q->ready_node);
		q->on_ready = false;
		npusim_task_start(ts, u, q);
	}
}

/*
 * Run the device up to @now. Returns when the next event is due (U64_MAX:
 * none), or 0 when the budget ran out and the caller should come back.
 */
static u64 npusim_engine_run(struct npusim_ts *ts, u64 now)
{
	unsigned int budget = NPUSIM_ENGINE_BUDGET;
	struct npusim_unit *u;

	for (;;) {
		npusim_units_fill(ts);
		u = npusim_unit_next(ts);
		if (!u)
			return U64_MAX;
		if (u->end_ns > now)
			return u->end_ns;
		if (!budget--)
			return 0;
		npusim_task_complete(ts, u);
	}
}

/* Pick up what user space queued in one mapped SQ. */
static void npusim_engine_poll_sq(struct npusim_queue *q, u64 now)
{
	struct npusim_sq_ctrl *ctrl = q->ring;
	/* pairs with the runtime's release: the SQEs before tail are there */
	u32 tail = smp_load_acquire(&ctrl->tail);
	u32 cur = q->tail % q->depth;
	u32 room = q->depth - 1 - (u32)(q->tail - q->head);
	u32 n, i;

	if (tail >= q->depth)
		return;
	n = min((tail + q->depth - cur) % q->depth, room);
	if (!n || npusim_truth_prepare(q, q->tail, n, GFP_KERNEL))
		return;
	for (i = 0; i < n; i++) {
		struct trs_sqe sqe;

		memcpy(&sqe, q->ring + NPUSIM_SQ_MMAP_SQE_OFF +
		       (size_t)((cur + i) % q->depth) * TRS_SQE_SIZE,
		       sizeof(sqe));
		npusim_queue_push(q, &sqe, now,
				  npusim_sqe_valid(&sqe) ? 0 : NPUSIM_ERR_BAD_SQE);
	}
	npusim_engine_make_ready(q);
}

static void npusim_engine_sleep(struct npusim_ts *ts, u64 until)
{
	ktime_t exp = ns_to_ktime(until);

	set_current_state(TASK_INTERRUPTIBLE);
	if (READ_ONCE(ts->kick) || kthread_should_stop()) {
		__set_current_state(TASK_RUNNING);
		return;
	}
	if (until == U64_MAX)
		schedule();
	else
		schedule_hrtimeout_range(&exp, NPUSIM_ENGINE_SLACK_NS,
					 HRTIMER_MODE_ABS);
	__set_current_state(TASK_RUNNING);
}

static int npusim_engine_fn(void *data)
{
	struct npusim_ts *ts = data;
	struct npusim_queue *q;
	bool poll;
	u64 now, next;

	while (!kthread_should_stop()) {
		WRITE_ONCE(ts->kick, false);
		smp_mb(); /* clear the kick before looking at the work */
		mutex_lock(&ts->lock);
		now = ktime_get_ns();
		poll = !list_empty(&ts->mapped);
		list_for_each_entry(q, &ts->mapped, mapped_node)
			npusim_engine_poll_sq(q, now);
		next = npusim_engine_run(ts, now);
		mutex_unlock(&ts->lock);

		if (!next) {
			cond_resched();
			continue;
		}
		if (poll)
			next = min(next, now + NPUSIM_UIO_POLL_US * NSEC_PER_USEC);
		npusim_engine_sleep(ts, next);
	}
	return 0;
}

/*
 * FREE or close: take @q off the device. Its tasks are cancelled, the unit
 * running one is free from now on. Caller holds ts->lock.
 */
void npusim_engine_cancel(struct npusim_queue *q)
{
	struct npusim_ts *ts = q->ts;
	struct npusim_task_truth *t;
	u64 seq;
	u32 i;

	if (q->on_ready) {
		list_del_init(&q->ready_node);
		q->on_ready = false;
	}
	for (i = 0; q->running && i < NPUSIM_MAX_UNITS; i++) {
		struct npusim_unit *u = &ts->units[i];

		if (u->q != q)
			continue;
		u->q = NULL;
		u->free_ns = ktime_get_ns();
		q->cq_reserved -= u->report;
		q->running = false;
	}
	if (q->mapped)
		list_del_init(&q->mapped_node);
	for (seq = q->head; seq != q->tail; seq++) {
		t = npusim_truth(q, seq);
		t->state = NPUSIM_TASK_CANCELLED;
	}
	ts->stats.tasks_queued -= q->tail - q->head;
	ts->stats.cancelled += q->tail - q->head;
	WRITE_ONCE(q->head, q->tail);
	q->stalled = false;
}

int npusim_engine_start(struct npusim_ts *ts)
{
	struct task_struct *t;

	t = kthread_run(npusim_engine_fn, ts, "npusim-engine");
	if (IS_ERR(t))
		return PTR_ERR(t);
	ts->engine = t;
	return 0;
}

void npusim_engine_stop(struct npusim_ts *ts)
{
	kthread_stop(ts->engine);
}
