/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Submissions: SQEs counted into the step open in their stream or process.
 */
#ifndef __SEND_BPF_H
#define __SEND_BPF_H

#include "common.bpf.h"
#include "types.bpf.h"
#include "maps.bpf.h"
#include "marks.bpf.h"
#include "queues.bpf.h"
#include "sqe.bpf.h"

/* State shared by the per-SQE loop of a SEND (or of one traced SQE). */
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
	rec = step_get(x->tgid, x->rec_index, true);
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
	c->tasks += n - x->conts - x->marks - x->internal;
	c->sqes_continued += x->conts;
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
static __always_inline void send_mark(struct st_send_ctx *x, struct st_sq *sq,
				      struct st_task *t, __u64 addr)
{
	struct steptime_step_stats *rec;
	struct st_sqe_mark m = {};

	if (sqe_read(x, &m, sizeof(m), addr + 16)) {
		x->fault = 1;
		return;
	}
	t->index_id = m.profiler_trace_id;
	x->marks++;
	x->ioctl_index = m.profiler_trace_id;
	rec = step_get(x->tgid, m.profiler_trace_id, true);
	if (rec) {
		rec->flags |= STEPTIME_F_STREAM;
		rec->stream = t->stream_id;
	}
	if (m.tag_id == STEPTIME_TAG_START ||
	    m.tag_id == STEPTIME_TAG_MS_START) {
		t->flags |= ST_TASK_MARK_START;
		sq->stream_open = 1;
		sq->stream_index = m.profiler_trace_id;
	} else {
		t->flags |= ST_TASK_MARK_END;
		if (sq->stream_index == m.profiler_trace_id)
			sq->stream_open = 0;
	}
}

/* @t's position is taken by a new task while its own is not complete. */
static __always_inline void task_overwrite(const struct st_task *t)
{
	if (t->flags & ST_TASK_VALID)
		CNT_INC(task_overwritten);
}

/*
 * A task of several SQEs is one task (hicann/runtime 681ef76). The runtime
 * sends one task per halSqTaskSend(), its sqe_num the task's SQEs
 * (v100/task_submit.cc:561, v200/task_david.cc:600): 1 to 4 on STARS v1
 * (stars_base.hpp:24, checked at stars_engine.cc:854), up to 5 on v2
 * (stars_base.hpp:25, task_res_da.cc:123). Other senders (npusim's own
 * HAL) put several tasks in one SEND, so the SQEs themselves decide:
 * - v2: the first SQE's sqeLength (byte 15 bits 5-7, stars_david.hpp:165,
 *   ccu_sqe.h:52, aicpu_sqe.h:87) is how many SQEs follow
 *   (device_error_proc_c.cc:828 reads sqeLength + 1 SQEs); they may have
 *   no header (a CCU task's second SQE is raw arguments, ccu_sqe.cc:44-52)
 *   and are never parsed. The header (starsv2_base.hpp:21) has wrCqe and
 *   the task id (taskSn, stars_david.cc:149-150).
 * - v1 headers have no length, but every SQE of a task carries the task's
 *   stream and task id (davinci_multiple_task_v100.cc:73-74,
 *   memory_task_v100.cc:518-519,622-623; ffts_task.cc:505), and ids grow
 *   per task: an SQE with its predecessor's ids continues its task.
 *   Which SQEs ask for a report varies: a multiple task's each sub-SQE
 *   may (one CQE each, stars_engine.cc:1049-1070), a memory wait's second
 *   (memory_task_v100.cc:517), a PH continuation never (:619).
 * The task's record moves to its last SQE: an SQ head completes it once
 * past the whole task, and any of its reports finds it by its ids.
 */
/*
 * @t continues the task at @prev. A global function: verified once, not
 * in every SQE of a SEND's walk. Return: 1 (the SQEs that continued).
 */
__noinline int sqe_continue(struct st_task *prev, struct st_task *t)
{
	struct st_task rec;

	if (!prev || !t)
		return 0;
	rec = *prev;
	task_overwrite(t);
	/*
	 * A walk may have completed it (uio_t: a head past its first SQEs):
	 * complete, it still moves on, for its further SQEs and its reports.
	 */
	if (!task_claim(prev))
		rec.flags = (rec.flags & ~ST_TASK_VALID) | ST_TASK_DONE;
	prev->flags = ST_TASK_CONT;
	*t = rec;
	return 1;
}

/* v1: @h continues the task whose record is at @prev. */
static __always_inline bool sqe_same_task(const struct st_task *prev,
					  const struct st_sqe_head *h)
{
	return (prev->flags & (ST_TASK_VALID | ST_TASK_DONE)) &&
	       !(prev->flags & ST_TASK_CONT) &&
	       (__u16)prev->task_id == (__u16)h->task_id &&
	       prev->stream_id == h->stream_id;
}

static long send_one(__u32 i, void *arg)
{
	struct st_send_walk *w = arg;
	struct st_send_ctx *x = w->x;
	struct st_sq *sq = w->sq;
	struct st_sqe_head h;
	struct st_sqe_raw r;
	struct st_task *t, *prev;
	__u64 addr, index_id = 0;
	__u32 pos;

	if (!sq || !x->depth)
		return 1;
	addr = x->sqe_addr + (__u64)i * TRS_SQE_SIZE;
	pos = (x->base + i) % x->depth;
	t = &sq->t[pos & (ST_SQ_DEPTH - 1)];
	prev = &sq->t[((pos + x->depth - 1) % x->depth) & (ST_SQ_DEPTH - 1)];
	/* In the SQ, not x: a value the verifier need not follow. */
	if (sq->sqes_left) {
		sq->sqes_left--;
		x->conts += sqe_continue(prev, t);
		return 0;
	}
	if (sqe_read(x, &r, sizeof(r), addr)) {
		x->fault = 1;
		return 1;
	}
	sqe_parse(&r, sq->stream_id, &h);
	if (stars_version < 2 && (i || x->spans) && sqe_same_task(prev, &h)) {
		x->conts += sqe_continue(prev, t);
		return 0;
	}
	sq->sqes_left = h.sqes_after;
	task_overwrite(t);
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
			send_mark(x, sq, t, addr);
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

static __always_inline void send_fallback(struct st_send_walk *w, __u32 i,
					  __u32 n)
{
	if (i < n && !w->x->fault)
		send_one(i, w);
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
 * @x set to account SQEs at @sqe_addr (a kernel address if @kernel) into
 * @sq of process @tgid from position @base, sent at @enter_ns while its
 * host-marked step @host_index was open. Every field the walk changes
 * starts unknown to the verifier (opaque_zero), so that 6.8+ verifiers
 * converge on bpf_loop()'s iterations: in a context on the caller's stack
 * (the HAL's), counts known to be 0 would be walked one iteration at a
 * time (a 6.18 build went past a million instructions).
 */
static __always_inline void send_ctx_init(struct st_send_ctx *x,
					  const struct st_sq *sq, __u32 tgid,
					  __u64 host_index, __u64 base,
					  __u64 sqe_addr, __u64 enter_ns,
					  __u32 kernel)
{
	x->in_step = x->outside = x->marks = x->internal = opaque_zero;
	x->conts = opaque_zero;
	x->spans = 0;
	x->kernel = kernel;
	x->fault = opaque_zero;
	x->host_index = host_index;
	x->rec_index = opaque_zero;
	x->rec_tasks = opaque_zero;
	x->ioctl_index = opaque_zero;
	x->tgid = tgid;
	x->depth = sq->depth;
	x->base = base;
	x->sqe_addr = sqe_addr;
	x->enter_ns = enter_ns;
}

/*
 * Count @n SQEs at @x->sqe_addr into @sq and its steps. Return: the
 * record of step @x->rec_index if this found it (the SEND's last), or NULL.
 */
static __always_inline struct steptime_step_stats *
sqes_account(struct st_send_ctx *x, struct st_sq *sq, __u32 n,
	     struct steptime_counters *cnt)
{
	struct st_send_walk w = { .x = x, .sq = sq };
	struct steptime_step_stats *rec, *last;
	__u32 bound;

	bound = has_bpf_loop ? STEPTIME_LOOP_MAX : STEPTIME_LOOP_FALLBACK;
	/* A task never spans SENDs: what one announced is not coming. */
	sq->sqes_left = 0;
	if (n == 1) {
		/* A runtime's commonest SEND: no loop to set up. */
		send_one(0, &w);
	} else if (has_bpf_loop) {
		bpf_loop(n < bound ? n : bound, send_one, &w, 0);
	} else {
		/*
		 * Written out: a counted loop around this call spills its
		 * counter where the verifier loses it ("infinite loop").
		 */
		_Static_assert(STEPTIME_LOOP_FALLBACK == 4, "one line each");
		send_fallback(&w, 0, n);
		send_fallback(&w, 1, n);
		send_fallback(&w, 2, n);
		send_fallback(&w, 3, n);
	}
	last = send_flush(x);
	if (x->fault)
		CNT_INC(hook_errors);
	if (n > bound) {
		/* Counted in the step, but neither matched nor timed. */
		CNT_ADD(tasks_untracked, n - bound);
		rec = x->rec_index ? step_get(x->tgid, x->rec_index, false) : NULL;
		if (rec) {
			__sync_fetch_and_add(&rec->tasks, n - bound);
			__sync_fetch_and_add(&rec->completions, n - bound);
		}
	}
	sq->tail = x->base + n;
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
	rec = index_id ? step_get(tgid, index_id, true) : NULL;
	if (rec)
		rec->flags |= STEPTIME_F_PREEXISTING;
}

static __always_inline void on_send(struct st_call *c, struct st_file *f,
				    struct st_proc *p, __u32 tgid, __u64 now,
				    int synced, struct steptime_counters *cnt,
				    __u64 id, struct st_send_ctx *x)
{
	struct steptime_step_stats *rec;
	struct trs_task_send_info *si;
	struct st_qkey key = {};
	struct st_sq *sq;
	__u64 sqe_addr;
	__u32 n, pos;

	if (bpf_probe_read_user(x->send_args, sizeof(x->send_args),
				(void *)c->arg)) {
		CNT_INC(hook_errors);
		return;
	}
	si = (struct trs_task_send_info *)x->send_args;
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
	sq = sq_find_cached(&key, id);
	/*
	 * Every SQ of a file whose OPEN was seen was allocated since load:
	 * one without an entry is not tracked (map full, or freed while
	 * this SEND ran), never one from before load.
	 */
	if (!sq && (f->flags & ST_FILE_PREEXISTING)) {
		sq = sq_create(&key, f, tgid, 0, ST_SQ_PREEXISTING);
		if (sq)
			CNT_INC(sqs_preexisting);
	}
	if (!sq) {
		CNT_ADD(tasks_unowned, n);
		return;
	}
	if (sq->flags & ST_SQ_PREEXISTING) {
		send_preexisting(sq, p, tgid, n);
		return;
	}
	/*
	 * Exits run in any order: an entry made while this SEND ran (an
	 * ALLOC's exit) may be of the id's next SQ, this one freed in
	 * between, and one shallower than the batch is not this SQ's
	 * (the driver takes at most its depth). Not this SEND's queue.
	 */
	if (sq->created_ns > c->enter_ns || n > sq->depth) {
		CNT_ADD(tasks_raced, n);
		return;
	}
	send_ctx_init(x, sq, tgid, p ? proc_open_step(p, tgid, synced) : 0,
		      sq_base(sq, pos), sqe_addr, c->enter_ns, 0);
	rec = sqes_account(x, sq, n, cnt);

	/*
	 * The ioctl's own cost belongs to the step its tasks went to: mostly
	 * the record the last flush found.
	 */
	if (!rec || x->ioctl_index != x->rec_index)
		rec = x->ioctl_index ? step_get(tgid, x->ioctl_index, false) :
		      NULL;
	if (rec) {
		__sync_fetch_and_add(&rec->submit_ioctls, 1);
		__sync_fetch_and_add(&rec->submit_ioctl_ns, now - c->enter_ns);
	}
}


#endif /* __SEND_BPF_H */
