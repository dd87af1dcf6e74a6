// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: the execution engine, one kernel thread per TS.
 *
 * The simulated device runs in virtual time: a task starts at the latest of
 * its submission, the end of the previous task of its SQ and the moment a
 * unit became free, and ends its duration later. The thread only has to
 * catch up: each wakeup completes, in end order, every task whose end has
 * passed and starts the next ones, then sleeps until the earliest end still
 * ahead (or, with mapped SQs, at most NPUSIM_UIO_POLL_US). Its own latency
 * delays the reports, never the simulated times, so the ground truth does
 * not depend on how fast the host (or TCG) is.
 *
 * Reports follow the driver's path: the device writes a hardware CQE; if
 * the task's stream has a logic CQ, the CQE is translated into a logic CQE
 * and offered to it through npusim_logic_cq_enque() (refused when full:
 * dropped and counted, as the driver's full_drop); otherwise the hardware
 * CQE stays in the SQ's CQ for RECV of type NORMAL, and an SQ whose CQ is
 * full stalls until RECV makes room.
 */
#include <linux/kthread.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/sched.h>

#include "npusim.h"

/* Completions per hold of ts->lock, so that ioctls are never starved. */
#define NPUSIM_ENGINE_BUDGET	1024
#define NPUSIM_ENGINE_SLACK_NS	(20 * NSEC_PER_USEC)

/* SQE fields, STARS v1 or v2 (module parameter stars). */
static u8 npusim_sqe_type(const void *sqe)
{
	return *(const u8 *)sqe & TRS_SQE_TYPE_MASK;
}

static bool npusim_sqe_wr_cqe(u32 stars, const void *sqe)
{
	u8 flags = ((const u8 *)sqe)[1];

	return flags & (stars == 2 ? TRS_SQE_V2_F_WR_CQE : TRS_SQE_F_WR_CQE);
}

/* STARS v2: how many SQEs of the same task follow @sqe (sqeLength). */
u32 npusim_sqe_v2_len(const void *sqe)
{
	const u8 *b = sqe;
	u16 w = b[14] | b[15] << 8;

	return (w >> TRS_SQE_V2_LEN_SHIFT) & TRS_SQE_V2_LEN_MASK;
}

u32 npusim_sqe_task_id(u32 stars, const void *sqe)
{
	if (stars == 2)
		return ((const struct trs_sqe_v2 *)sqe)->task_id;
	return ((const struct trs_sqe *)sqe)->task_id;
}

/*
 * The stream id a report carries: v1, the SQE's rt_stream_id (bit 15: a
 * match task); v2, the SQ's stream (0xffff when it has none).
 */
u32 npusim_sqe_stream_raw(const struct npusim_sq *sq, const void *sqe)
{
	if (sq->ts->cfg.stars == 2)
		return sq->stream ? sq->stream->id : 0xffff;
	return ((const struct trs_sqe *)sqe)->rt_stream_id;
}

bool npusim_sqe_valid(const void *sqe)
{
	return NPUSIM_SQE_VALID_TYPES & BIT(npusim_sqe_type(sqe));
}

/* NPUSIM_SYNC_* of a record or wait SQE type, or -1. */
static int npusim_sync_kind(u8 type)
{
	switch (type) {
	case TRS_SQE_EVENT_RECORD:
	case TRS_SQE_EVENT_WAIT:
		return NPUSIM_SYNC_EVENT;
	case TRS_SQE_NOTIFY_RECORD:
	case TRS_SQE_NOTIFY_WAIT:
		return NPUSIM_SYNC_NOTIFY;
	}
	return -1;
}

static bool npusim_sync_is_wait(u8 type)
{
	return type == TRS_SQE_EVENT_WAIT || type == TRS_SQE_NOTIFY_WAIT;
}

/* The notify id (low 13 bits of u32 @8) or event id (u16 @8) of @sqe. */
static u32 npusim_sync_id(const void *sqe)
{
	const u8 *b = sqe;

	if (npusim_sync_kind(npusim_sqe_type(sqe)) == NPUSIM_SYNC_EVENT)
		return b[8] | b[9] << 8;
	return (b[8] | b[9] << 8) & TRS_SQE_NOTIFY_ID_MASK;
}

/*
 * The TS whose notify or event @sqe of @ts names: its own, or for a
 * NOTIFY_RECORD whose u16 @12 is D + 1, the same TS of device D (npusim's
 * stand-in for the runtime's WRITE_VALUE to a remote notify). NULL: none.
 */
static struct npusim_ts *npusim_sync_ts(struct npusim_ts *ts, const void *sqe)
{
	const u8 *b = sqe;
	u32 dev = b[12] | b[13] << 8;

	if (npusim_sqe_type(sqe) != TRS_SQE_NOTIFY_RECORD || !dev)
		return ts;
	if (dev > npusim_devices)
		return NULL;
	return &npusim_devs[dev - 1].ts[ts->ts_id];
}

/* RES_ID_ALLOC (@on) or FREE of @res_type @id: ts->lock held. */
void npusim_sync_alloc(struct npusim_ts *ts, u32 res_type, u32 id, bool on)
{
	struct npusim_syncs *y;

	if (res_type == TRS_RES_EVENT)
		y = ts->sync[NPUSIM_SYNC_EVENT];
	else if (res_type == TRS_RES_NOTIFY)
		y = ts->sync[NPUSIM_SYNC_NOTIFY];
	else
		return;
	/* a new id starts unset, whatever its last owner recorded */
	clear_bit(id, y->set);
	if (on)
		set_bit(id, y->alloc);
	else
		clear_bit(id, y->alloc);
}

/* Whether the record or wait @sqe of @ts names an allocated id. */
static bool npusim_sync_valid(struct npusim_ts *ts, const void *sqe)
{
	int kind = npusim_sync_kind(npusim_sqe_type(sqe));
	struct npusim_ts *to = npusim_sync_ts(ts, sqe);
	u32 id = npusim_sync_id(sqe);

	return to && id < NPUSIM_MAX_RES_IDS &&
	       test_bit(id, to->sync[kind]->alloc);
}

/* A record that ended at @end_ns sets its notify or event. */
static void npusim_sync_record(struct npusim_ts *ts, const void *sqe,
			       u64 end_ns)
{
	int kind = npusim_sync_kind(npusim_sqe_type(sqe));
	struct npusim_ts *to = npusim_sync_ts(ts, sqe);
	u32 id = npusim_sync_id(sqe);
	struct npusim_syncs *y;

	if (!to || id >= NPUSIM_MAX_RES_IDS)
		return;
	y = to->sync[kind];
	if (!test_bit(id, y->alloc))
		return;
	WRITE_ONCE(y->rec_ns[id], end_ns);
	smp_mb__before_atomic(); /* the time before the bit: see sync_take */
	set_bit(id, y->set);
	if (to != ts)
		npusim_engine_kick(to);
}

/* A waiting @u whose sync is set takes it and ends. ts->lock held. */
static void npusim_sync_take(struct npusim_ts *ts, struct npusim_unit *u,
			     u64 start)
{
	struct npusim_syncs *y = ts->sync[u->wait_kind];

	if (!test_and_clear_bit(u->wait_id, y->set))
		return;
	u->end_ns = max(start, READ_ONCE(y->rec_ns[u->wait_id]));
	u->waiting = false;
	ts->waiting--;
}

/* Let the waiting units whose notify or event came end. */
static void npusim_sync_poll(struct npusim_ts *ts)
{
	u32 i;

	for (i = 0; ts->waiting && i < NPUSIM_MAX_UNITS; i++) {
		struct npusim_unit *u = &ts->units[i];

		if (u->sq && u->waiting)
			npusim_sync_take(ts, u,
					 npusim_truth(u->sq, u->sq->head)->start_ns);
	}
}

static u32 npusim_sqe_sim_error(const void *sqe)
{
	return ((const struct trs_sqe *)sqe)->task.sim_error;
}

static u32 npusim_sqe_sim_duration(const void *sqe)
{
	return ((const struct trs_sqe *)sqe)->task.sim_duration_ns;
}

void npusim_engine_kick(struct npusim_ts *ts)
{
	WRITE_ONCE(ts->kick, true);
	wake_up_process(ts->engine);
}

/* Caller holds ts->lock. */
void npusim_engine_make_ready(struct npusim_sq *sq)
{
	if (sq->dead || sq->running || sq->on_ready || sq->stalled ||
	    sq->paused || sq->head == sq->tail)
		return;
	list_add_tail(&sq->ready_node, &sq->ts->ready);
	sq->on_ready = true;
}

/* RECV took reports from @cq: its stalled SQs may run. ts->lock held. */
void npusim_engine_cq_room(struct npusim_cq *cq)
{
	struct npusim_sq *sq;
	u64 now = ktime_get_ns();

	list_for_each_entry(sq, &cq->sqs, cq_node) {
		if (!sq->stalled)
			continue;
		/* it could not run while its CQ was full */
		sq->last_end_ns = max(sq->last_end_ns, now);
		sq->stalled = false;
		npusim_engine_make_ready(sq);
	}
}

static u64 npusim_task_duration(const struct npusim_config *cfg,
				const void *sqe)
{
	u8 type = npusim_sqe_type(sqe);
	u64 ns = npusim_sqe_sim_duration(sqe);

	/* Marks and syncs are instantaneous unless the SQE asks otherwise. */
	if (!ns && type != TRS_SQE_PLACE_HOLDER && npusim_sync_kind(type) < 0)
		ns = cfg->default_duration_ns;
	return div_u64(ns * cfg->duration_pct, 100);
}

static u32 npusim_task_error(struct npusim_ts *ts,
			     const struct npusim_slot *slot, u64 seq)
{
	const struct npusim_config *cfg = &ts->cfg;
	u8 type = npusim_sqe_type(slot->sqe);

	if (slot->bad)
		return slot->bad;
	if (npusim_sqe_sim_error(slot->sqe))
		return npusim_sqe_sim_error(slot->sqe);
	/* an event record of no id is npusim's older runtime: not an error */
	if (npusim_sync_kind(type) >= 0 && type != TRS_SQE_EVENT_RECORD &&
	    !npusim_sync_valid(ts, slot->sqe))
		return NPUSIM_ERR_BAD_SYNC_ID;
	if (cfg->inject_error_every && (seq + 1) % cfg->inject_error_every == 0)
		return cfg->inject_error_code;
	return 0;
}

/* A wait task on @u from @start: it holds the unit until its sync is set. */
static void npusim_wait_start(struct npusim_ts *ts, struct npusim_unit *u,
			      const void *sqe, u64 start)
{
	u->waiting = true;
	u->wait_kind = npusim_sync_kind(npusim_sqe_type(sqe));
	u->wait_id = npusim_sync_id(sqe);
	u->end_ns = U64_MAX;
	ts->waiting++;
}

/* The logic CQ a report of @sq's task goes to, or NULL. */
static struct npusim_cq *npusim_report_logic_cq(struct npusim_sq *sq,
						const void *sqe)
{
	u32 raw = npusim_sqe_stream_raw(sq, sqe);
	struct npusim_res *st;

	if (sq->ts->cfg.stars != 2)
		raw &= TRS_CQE_STREAM_ID_MASK;
	st = idr_find(&sq->ts->res_idr[TRS_RES_STREAM], raw);
	/* npusim: only a stream of the SQ's own fd takes its reports */
	if (!st || st->owner != sq->owner)
		return NULL;
	return st->logic_cq;
}

/*
 * Start the head task of @sq on @u. Fails (and stalls @sq until RECV makes
 * room) when the task will write a hardware CQE and its CQ could not take
 * it.
 */
static bool npusim_task_start(struct npusim_ts *ts, struct npusim_unit *u,
			      struct npusim_sq *sq)
{
	struct npusim_slot *slot = &sq->slots[sq->head % sq->depth];
	struct npusim_task_truth *t = npusim_truth(sq, sq->head);
	/* A task's continuation runs with it: no time, error or report. */
	u32 error = slot->cont ? 0 : npusim_task_error(ts, slot, sq->head);
	bool report = !slot->cont &&
		      (error || npusim_sqe_wr_cqe(ts->cfg.stars, slot->sqe));
	bool hw_slot = report && !npusim_report_logic_cq(sq, slot->sqe);
	struct npusim_cq *cq = sq->cq;
	u64 start;

	if (hw_slot && cq->count + cq->reserved >= cq->depth) {
		sq->stalled = true;
		return false;
	}
	start = max3(u->free_ns, t->submit_ns, sq->last_end_ns);
	u->sq = sq;
	u->error = error;
	u->report = report;
	u->hw_slot = hw_slot;
	u->end_ns = start + (slot->bad || slot->cont ? 0 :
			     npusim_task_duration(&ts->cfg, slot->sqe));
	sq->running = true;
	cq->reserved += hw_slot;
	t->state = NPUSIM_TASK_RUNNING;
	t->start_ns = start;
	t->start_ticks = npusim_ticks(&ts->cfg, start);
	if (!error && !slot->cont && npusim_sync_is_wait(npusim_sqe_type(slot->sqe)))
		npusim_wait_start(ts, u, slot->sqe, start);
	return true;
}

/* What the device writes: the STARS hardware CQE of a finished task. */
static void npusim_hw_cqe(struct npusim_sq *sq, struct npusim_unit *u,
			  const struct npusim_task_truth *t,
			  struct trs_hw_cqe *c)
{
	const u8 *sqe = sq->slots[t->seq % sq->depth].sqe;
	u8 type = npusim_sqe_type(sqe);

	memset(c, 0, sizeof(*c));
	c->bits = TRS_HW_CQE_PHASE |
		  ((sq->id << TRS_HW_CQE_SQ_ID_SHIFT) & TRS_HW_CQE_SQ_ID_MASK);
	c->sq_head = (t->pos + 1) % sq->depth;
	c->stream_id = npusim_sqe_stream_raw(sq, sqe);
	c->task_id = t->task_id;
	if (u->error) {
		c->bits |= TRS_HW_CQE_ERROR;
		c->error.error_type = u->error == NPUSIM_ERR_BAD_SQE ?
				      TRS_CQE_ERR_TYPE_SQE_ERROR :
				      TRS_CQE_ERR_TYPE_EXCEPTION;
		c->error.error_flags = type << TRS_HW_CQE_ERR_SQE_TYPE_SHIFT;
		c->error.sqe_index = t->pos;
		c->error.error_code = u->error;
	} else if (type == TRS_SQE_EVENT_RECORD) {
		c->bits |= TRS_HW_CQE_EVT;
		c->timestamp = t->start_ticks;
	} else if (type == TRS_SQE_PLACE_HOLDER) {
		c->bits |= TRS_HW_CQE_PLACE_HOLD;
		c->timestamp = t->start_ticks;
	}
}

/* The driver's translation of a hardware CQE into a logic CQE. */
static void npusim_logic_cqe(u32 stars, const struct trs_hw_cqe *c,
			     u8 sqe_type, struct trs_logic_cqe *l)
{
	bool match = stars != 2 && (c->stream_id & TRS_SQE_STREAM_MATCH);

	memset(l, 0, sizeof(*l));
	/* v2's CQE has no match bit: its stream id is all 16 bits. */
	l->stream_id = stars == 2 ? c->stream_id :
				    c->stream_id & TRS_CQE_STREAM_ID_MASK;
	l->task_id = c->task_id;
	l->sq_id = (c->bits & TRS_HW_CQE_SQ_ID_MASK) >> TRS_HW_CQE_SQ_ID_SHIFT;
	l->sq_head = c->sq_head;
	l->sqe_type = sqe_type;
	if (c->bits & TRS_HW_CQE_ERROR) {
		l->error_code = c->error.error_code;
		l->error_type = c->error.error_type & TRS_CQE_ERR_TYPE_MASK;
		l->flags |= TRS_CQE_F_ERROR;
		l->timestamp = c->error.sqe_index;
	} else {
		l->timestamp = c->timestamp;
	}
	if (match) {
		l->flags |= TRS_CQE_F_MATCH;
		l->enque_timestamp = div_u64(ktime_get_ns(), NSEC_PER_SEC);
	}
}

static void npusim_task_report(struct npusim_ts *ts, struct npusim_unit *u,
			       struct npusim_sq *sq,
			       struct npusim_task_truth *t)
{
	const u8 *sqe = sq->slots[t->seq % sq->depth].sqe;
	struct npusim_cq *lcq = npusim_report_logic_cq(sq, sqe);
	struct npusim_cq *cq = sq->cq;
	struct trs_logic_cqe l;
	struct trs_hw_cqe c;

	npusim_hw_cqe(sq, u, t, &c);
	cq->reserved -= u->hw_slot;
	sq->cqe_status = true;
	if (lcq) {
		npusim_logic_cqe(ts->cfg.stars, &c, npusim_sqe_type(sqe), &l);
		if (npusim_logic_cq_enque(ts, lcq->id, l.stream_id, l.task_id,
					  &l)) {
			t->report = NPUSIM_REPORT_DROPPED;
			ts->stats.report_drops++;
			return;
		}
		t->report = NPUSIM_REPORT_LOGIC_CQ;
		return;
	}
	/* Its logic CQ went away while it ran, and the CQ has no room. */
	if (cq->count >= cq->depth) {
		t->report = NPUSIM_REPORT_DROPPED;
		ts->stats.report_drops++;
		return;
	}
	memcpy(npusim_cq_at(cq, cq->count), &c, sizeof(c));
	cq->count++;
	WRITE_ONCE(cq->gen, cq->gen + 1);
	ts->stats.reports++;
	ts->stats.reports_pending++;
	t->report = NPUSIM_REPORT_HW_CQ;
	wake_up(&cq->wait);
}

static void npusim_task_complete(struct npusim_ts *ts, struct npusim_unit *u)
{
	struct npusim_sq *sq = u->sq;
	struct npusim_task_truth *t = npusim_truth(sq, sq->head);

	t->state = NPUSIM_TASK_DONE;
	t->end_ns = u->end_ns;
	t->end_ticks = npusim_ticks(&ts->cfg, u->end_ns);
	t->error_code = u->error;
	ts->stats.tasks_queued--;
	ts->stats.completed++;
	if (u->error)
		ts->stats.errors++;

	if (!u->error) {
		const u8 *sqe = sq->slots[t->seq % sq->depth].sqe;
		u8 type = npusim_sqe_type(sqe);

		if (type == TRS_SQE_EVENT_RECORD || type == TRS_SQE_NOTIFY_RECORD)
			npusim_sync_record(ts, sqe, u->end_ns);
	}
	WRITE_ONCE(sq->head, sq->head + 1);
	sq->last_end_ns = u->end_ns;
	sq->running = false;
	u->sq = NULL;
	u->free_ns = u->end_ns;
	if (sq->ring) {
		struct npusim_sq_ctrl *ctrl = sq->ring;
		u32 *head = sq->soft ? &ctrl->head_reg : &ctrl->head;

		/*
		 * Pairs with the runtime's acquire: it may reuse the slot. A
		 * soft queue's head says what was copied; its hardware head
		 * register says what completed.
		 */
		smp_store_release(head, npusim_sq_pos(sq, sq->head));
	}
	if (u->report)
		npusim_task_report(ts, u, sq, t);
	/* Wake a blocked SEND once, not at every completion. */
	if (sq->sq_want && sq->depth - (sq->tail - sq->head) >= sq->sq_want) {
		sq->sq_want = 0;
		WRITE_ONCE(sq->sq_gen, sq->sq_gen + 1);
		wake_up(&sq->sq_wait);
	}
	npusim_engine_make_ready(sq);
}

static struct npusim_unit *npusim_unit_free(struct npusim_ts *ts)
{
	u32 i;

	for (i = 0; i < ts->cfg.units; i++)
		if (!ts->units[i].sq)
			return &ts->units[i];
	return NULL;
}

static struct npusim_unit *npusim_unit_next(struct npusim_ts *ts)
{
	struct npusim_unit *best = NULL;
	u32 i;

	for (i = 0; i < NPUSIM_MAX_UNITS; i++) {
		struct npusim_unit *u = &ts->units[i];

		if (u->sq && (!best || u->end_ns < best->end_ns))
			best = u;
	}
	return best;
}

static void npusim_units_fill(struct npusim_ts *ts)
{
	struct npusim_sq *sq;
	struct npusim_unit *u;

	while (!list_empty(&ts->ready)) {
		u = npusim_unit_free(ts);
		if (!u)
			return;
		sq = list_first_entry(&ts->ready, struct npusim_sq, ready_node);
		list_del_init(&sq->ready_node);
		sq->on_ready = false;
		npusim_task_start(ts, u, sq);
	}
}

/*
 * Run the TS up to @now. Returns when the next event is due (U64_MAX:
 * none), or 0 when the budget ran out and the caller should come back.
 */
static u64 npusim_engine_run(struct npusim_ts *ts, u64 now)
{
	unsigned int budget = NPUSIM_ENGINE_BUDGET;
	struct npusim_unit *u;

	for (;;) {
		npusim_units_fill(ts);
		npusim_sync_poll(ts);
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
static void npusim_engine_poll_sq(struct npusim_sq *sq, u64 now)
{
	struct npusim_sq_ctrl *ctrl = sq->ring;
	/* pairs with the runtime's release: the SQEs before tail are there */
	u32 tail = smp_load_acquire(&ctrl->tail);
	u32 cur = npusim_sq_pos(sq, sq->tail);
	u32 room = sq->depth - 1 - (u32)(sq->tail - sq->head);
	u32 n, i;

	if (tail >= sq->depth)
		return;
	n = min((tail + sq->depth - cur) % sq->depth, room);
	if (!n || npusim_truth_prepare(sq->owner, sq, sq->tail, n))
		return;
	for (i = 0; i < n; i++) {
		u8 sqe[TRS_SQE_SIZE];

		memcpy(sqe, sq->ring + NPUSIM_SQ_MMAP_SQE_OFF +
		       (size_t)((cur + i) % sq->depth) * TRS_SQE_SIZE,
		       sizeof(sqe));
		npusim_sq_push(sq, sqe, now, sq->uio == NPUSIM_UIO_T);
	}
	npusim_engine_make_ready(sq);
}

/*
 * The driver's uio_t worker (trs_hw_sq_send_task): move what user space
 * wrote into the soft queue to the hardware SQ, each SQE through the trace
 * hook. The soft head (copied up to here) is the hardware SQ's tail, so the
 * two queues keep the same positions.
 */
static void npusim_engine_soft_copy(struct npusim_sq *sq, u64 now)
{
	struct npusim_sq_ctrl *ctrl = sq->ring;
	/* pairs with the runtime's release: the SQEs before tail are there */
	u32 tail = smp_load_acquire(&ctrl->tail);
	u32 cur = npusim_sq_pos(sq, sq->tail);
	u32 room = sq->depth - 1 - (u32)(sq->tail - sq->head);
	u32 n, i;

	if (tail >= sq->depth)
		return;
	/* a CONFIG moved the queue, not the word: no send wrote it since */
	if (sq->tail_stale && tail == sq->stale_tail)
		return;
	sq->tail_stale = false;
	n = min((tail + sq->depth - cur) % sq->depth, room);
	if (!n)
		return;
	if (npusim_truth_prepare(sq->owner, sq, sq->tail, n)) {
		sq->send_fail++;	/* the driver's, when its channel refuses */
		return;
	}
	for (i = 0; i < n; i++) {
		u8 sqe[TRS_SQE_SIZE];

		memcpy(sqe, sq->ring + NPUSIM_SQ_MMAP_SQE_OFF +
		       (size_t)((cur + i) % sq->depth) * TRS_SQE_SIZE,
		       sizeof(sqe));
		npusim_sq_push(sq, sqe, now, true);
	}
	cur = npusim_sq_pos(sq, sq->tail);
	/* pairs with the runtime's acquire of the hardware tail register */
	smp_store_release(&ctrl->tail_reg, cur);
	/* pairs with the runtime's acquire: the copied slots are its again */
	smp_store_release(&ctrl->head, cur);
	npusim_engine_make_ready(sq);
}

/*
 * Whether the soft queues of @ts are copied now: on a trigger doorbell
 * (the driver's trigger interrupt; any soft queue's, as the driver's worker
 * then scans them all) or when the worker's own poll is due.
 */
static bool npusim_engine_soft_due(struct npusim_ts *ts, u64 now)
{
	bool rang = false, due = now >= ts->soft_next_ns;
	struct npusim_sq *sq;

	list_for_each_entry(sq, &ts->mapped, mapped_node) {
		struct npusim_sq_ctrl *ctrl = sq->ring;

		if (sq->soft && READ_ONCE(ctrl->db) != NPUSIM_SQ_DB_IDLE &&
		    xchg(&ctrl->db, NPUSIM_SQ_DB_IDLE) != NPUSIM_SQ_DB_IDLE) {
			rang = true;
			/* rung after a send: its tail word is fresh */
			sq->tail_stale = false;
		}
	}
	if (due)
		ts->soft_next_ns = now + ts->cfg.soft_poll_ms * NSEC_PER_MSEC;
	return due || (rang && ts->cfg.soft_trigger);
}

static void npusim_engine_poll(struct npusim_ts *ts, u64 now)
{
	bool soft = npusim_engine_soft_due(ts, now);
	struct npusim_sq *sq;

	list_for_each_entry(sq, &ts->mapped, mapped_node) {
		/* a disabled hardware SQ fetches nothing (npusim_sq_take_head) */
		if (!sq->soft && !(sq->chip && sq->paused))
			npusim_engine_poll_sq(sq, now);
		else if (soft)
			npusim_engine_soft_copy(sq, now);
	}
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
	bool poll;
	u64 now, next;

	while (!kthread_should_stop()) {
		WRITE_ONCE(ts->kick, false);
		smp_mb(); /* clear the kick before looking at the work */
		mutex_lock(&ts->lock);
		now = ktime_get_ns();
		poll = !list_empty(&ts->mapped);
		npusim_engine_poll(ts, now);
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
 * FREE or release: take @sq off the device. Its tasks are cancelled, the
 * unit running one is free from now on. Caller holds ts->lock.
 */
void npusim_engine_cancel(struct npusim_sq *sq)
{
	struct npusim_ts *ts = sq->ts;
	struct npusim_task_truth *t;
	u64 seq;
	u32 i;

	if (sq->on_ready) {
		list_del_init(&sq->ready_node);
		sq->on_ready = false;
	}
	for (i = 0; sq->running && i < NPUSIM_MAX_UNITS; i++) {
		struct npusim_unit *u = &ts->units[i];

		if (u->sq != sq)
			continue;
		u->sq = NULL;
		u->free_ns = ktime_get_ns();
		ts->waiting -= u->waiting;
		u->waiting = false;
		sq->cq->reserved -= u->hw_slot;
		sq->running = false;
	}
	list_del_init(&sq->mapped_node);
	for (seq = sq->head; seq != sq->tail; seq++) {
		t = npusim_truth(sq, seq);
		t->state = NPUSIM_TASK_CANCELLED;
	}
	ts->stats.tasks_queued -= sq->tail - sq->head;
	ts->stats.cancelled += sq->tail - sq->head;
	WRITE_ONCE(sq->head, sq->tail);
	sq->stalled = false;
}

int npusim_engine_start(struct npusim_ts *ts)
{
	struct task_struct *t;

	t = kthread_run(npusim_engine_fn, ts, "npusim/%u.%u", ts->dev->id,
			ts->ts_id);
	if (IS_ERR(t))
		return PTR_ERR(t);
	ts->engine = t;
	return 0;
}

void npusim_engine_stop(struct npusim_ts *ts)
{
	kthread_stop(ts->engine);
}
