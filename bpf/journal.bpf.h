/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The journal of a process's own sends (lib/sends.c), read from its mark
 * ring in program order with its marks: per SQ, cumulative tasks and SQEs
 * (SQ_SNAP) and its stream marks' place-holders (SQ_START, SQ_END), so
 * that mapped SQs are counted and completed per step, with no uprobe on a
 * per-task call. The SQ is the process's own, found by the names its HAL
 * calls use (hal_sqs, bound at ALLOC by the halSqCqAllocate uprobe): a
 * process can only distort its own steps, by deltas bounded by the SQEs it
 * says it sent. Each snapshot's tasks go to the step open on the SQ's
 * stream, else to the process's open host step, as send_one() decides;
 * a snapshot of a head (HEAD) completes the steps' tasks sent before it;
 * one taken with the head at the tail (DRAINED) completes all, and is
 * checked against the driver's own count of SQEs sent (send_ok in the
 * SQ's shared-info page): a send the journal did not see flags the
 * process's steps (journal_mismatch).
 */
#ifndef __JOURNAL_BPF_H
#define __JOURNAL_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "proc.bpf.h"
#include "step.bpf.h"
#include "marks.bpf.h"
#include "queues.bpf.h"
#include "recv.bpf.h"
#include "hal.bpf.h"

/*
 * A new HAL SQ, mapped, of a process: counted from its journal. Until the
 * process binds a ring that says it journals, its steps are flagged (and
 * a ring that says it does not flags them from then on: marks.bpf.h).
 */
static __always_inline void journal_alloc(struct st_sq *sq, __u64 shr)
{
	struct st_proc *p;

	if (!journal_on ||
	    (sq->flags & (ST_SQ_HAL | ST_SQ_UIO)) != (ST_SQ_HAL | ST_SQ_UIO))
		return;
	sq->j_shr = shr;
	p = proc_find(sq->tgid);
	if (!p || (p->journal & ST_PJ_JOURNAL))
		return;
	if (p->ring)
		proc_taint(p, sq->tgid, STEPTIME_F_UIO);
	else
		p->journal |= ST_PJ_PENDING;
}

/*
 * The slot in sqs of process @tgid's mapped HAL SQ @key (STEPTIME_SQ_KEY),
 * or STEPTIME_MAX_SQS.
 */
static __always_inline __u32 journal_sq(__u32 tgid, __u64 key)
{
	struct st_hkey hk = {
		.tgid = tgid,
		.dev = STEPTIME_SQ_KEY_DEV(key),
		.ts = STEPTIME_SQ_KEY_TS(key),
		.id = STEPTIME_SQ_KEY_SQ(key),
	};
	struct st_qkey *qk = bpf_map_lookup_elem(&hal_sqs, &hk);
	struct st_sq *sq;
	__u32 slot;

	if (!qk)
		return STEPTIME_MAX_SQS;
	slot = sq_slot(qk);
	sq = slot < STEPTIME_MAX_SQS ? bpf_map_lookup_elem(&sqs, &slot) : NULL;
	if (!sq || !qkey_eq(&sq->key, qk) ||
	    !hal_sq_is(sq, tgid, hk.dev, hk.ts, hk.id))
		return STEPTIME_MAX_SQS;
	return slot;
}

/*
 * The journal is applied in the mark consumer's call chain, in one global
 * function that calls no other, beside proc_sync_batch() (proc_sync()):
 * the chain's stack (the deepest program's, proc_sync(), the deeper of the
 * two) leaves it little, each frame rounded up to 32 bytes on older
 * kernels. So one step key on its stack, reused by every lookup (jrec()),
 * and no record made here: marks made them (run_apply() makes a stream
 * mark's).
 */
struct jctx {
	struct steptime_step_key k;	/* .tgid set once */
	struct steptime_counters *c;
};

static __always_inline struct steptime_step_stats *jrec(struct jctx *j,
							__u64 index_id)
{
	struct steptime_step_stats *rec;

	if (!index_id)
		return NULL;
	j->k.index_id = index_id;
	rec = bpf_map_lookup_elem(&steps, &j->k);
	return rec && !(rec->flags & STEPTIME_F_EXITED) ? rec : NULL;
}

/*
 * Segment @s is complete (its SQ drained past it): its tasks complete in
 * its step, a stream END's place-holder passed. Return: its tasks.
 */
static __always_inline __u32 jseg_done(struct jctx *j, struct st_jseg *s,
				       __u32 flag)
{
	struct steptime_step_stats *rec = jrec(j, s->index_id);

	if (!rec)
		return s->tasks;
	rec->flags |= flag;
	if (s->tasks) {
		__sync_fetch_and_add(&rec->completions, s->tasks);
		step_completed_at(rec, bpf_ktime_get_ns());
	}
	if (s->flags & ST_JSEG_END)
		rec->flags |= STEPTIME_F_STREAM_END;
	step_try_finish(rec);
	return s->tasks;
}

/*
 * @tasks of step @index_id (0: none) sent on @sq up to SQE @end, or a
 * stream END's place-holder (@flags ST_JSEG_END): one more segment, or the
 * last one grown. Past ST_J_SEGS pending, the oldest is given up: its
 * step flagged, its tasks taken as complete so that it can end (ENDED).
 */
static __always_inline void jseg_push(struct jctx *j, struct st_sq *sq,
				      __u64 index_id, __u32 end, __u32 tasks,
				      __u32 flags)
{
	__u32 h = sq->j_head, t = sq->j_tail;
	struct st_jseg *s;

	if (t != h && !flags) {
		s = &sq->jsegs[(t - 1) & (ST_J_SEGS - 1)];
		if (s->index_id == index_id && !s->flags) {
			s->end = end;
			s->tasks += tasks;
			return;
		}
	}
	if (t - h >= ST_J_SEGS) {
		j->c->journal_segs_full++;
		j->c->completions += jseg_done(j, &sq->jsegs[h &
					       (ST_J_SEGS - 1)],
					       STEPTIME_F_UIO);
		sq->j_head = h + 1;
	}
	s = &sq->jsegs[t & (ST_J_SEGS - 1)];
	s->index_id = index_id;
	s->end = end;
	s->tasks = tasks;
	s->flags = flags;
	sq->j_tail = t + 1;
}

/* The step @sq's tasks go to now: its stream's, else the process's. */
static __always_inline __u64 journal_step(struct st_proc *p, struct st_sq *sq)
{
	return sq->stream_open ? sq->stream_index :
	       p->cur_open ? p->cur_index : 0;
}

static __always_inline void jrec_taint(struct jctx *j, __u64 index_id)
{
	struct steptime_step_stats *rec = jrec(j, index_id);

	if (rec)
		rec->flags |= STEPTIME_F_UIO;
}

/*
 * Sends the journal did not see (or says it missed): the steps still
 * pending on @sq, the ones open there and in the process, and every step
 * of the process from now on are flagged, never counted short. (The marks
 * consumed so far are the process's state: proc_taint() is not needed.)
 */
static __always_inline void journal_flag(struct jctx *j, struct st_proc *p,
					 struct st_sq *sq)
{
	__u32 i;

	j->c->journal_mismatch++;
	p->taint |= STEPTIME_F_UIO;
	jrec_taint(j, journal_step(p, sq));
	if (p->cur_open)
		jrec_taint(j, p->cur_index);
	for (i = 0; i < ST_J_SEGS; i++) {
		if (sq->j_head + i == sq->j_tail)
			break;
		jrec_taint(j, sq->jsegs[(sq->j_head + i) &
					(ST_J_SEGS - 1)].index_id);
	}
}

/*
 * Whether the driver counted another number of SQEs sent on @sq than the
 * journal's @sqes: read while the process is current, right after it
 * wrote the drained snapshot (it has it consumed at once). Only once the
 * driver's library is seen counting (npusim's stand-in before it kept
 * send_ok, a driver without it: never checked).
 */
/* The driver's count of SQEs sent on @sq (its shared-info page): 0, or -1. */
static __always_inline int journal_send_ok(const struct st_sq *sq, __u64 *ok)
{
	if (!sq->j_shr)
		return -1;
	return bpf_probe_read_user(ok, sizeof(*ok), (void *)(sq->j_shr +
				   offsetof(struct trs_sq_shr_info, send_ok)));
}

static __always_inline bool journal_send_ok_differs(struct st_sq *sq,
						   __u32 sqes)
{
	__u64 ok;

	if (journal_send_ok(sq, &ok))
		return false;
	if (ok)
		sq->j_okseen = 1;
	return sq->j_okseen && (__u32)ok - sq->j_okoff != sqes;
}

/*
 * The journal of @sq began at its first send it took, @sqes counted (the
 * process's library patched after the ALLOC), read while the process is
 * current: what the driver counted before is the journal's offset. The
 * host step open then may hold sends it never saw: flagged. A stream step
 * open on @sq cannot: its START came through this journal, at this send.
 */
static __always_inline void journal_begin(struct jctx *j, struct st_proc *p,
					  struct st_sq *sq, __u32 sqes)
{
	__u64 ok;

	if (journal_send_ok(sq, &ok) || !ok)
		return;
	sq->j_okoff = (__u32)ok - sqes;
	if (!sq->j_okoff)
		return;
	j->c->journal_late++;
	if (p->cur_open)
		jrec_taint(j, p->cur_index);
}

/* @sq's head past SQE @sqes: every segment up to it completes. */
static __always_inline void journal_complete(struct jctx *j, struct st_sq *sq,
					     __u32 sqes)
{
	struct st_jseg *s;
	__u32 i, h;

	for (i = 0; i < ST_J_SEGS; i++) {
		h = sq->j_head;
		if (h == sq->j_tail)
			break;
		s = &sq->jsegs[h & (ST_J_SEGS - 1)];
		if ((__s32)(s->end - sqes) > 0)
			break;
		j->c->completions += jseg_done(j, s, 0);
		sq->j_head = h + 1;
	}
}

/* @dt tasks sent on @sq up to SQE @sqes: into the step open there. */
static __always_inline void journal_count(struct jctx *j, struct st_proc *p,
					  struct st_sq *sq, __u32 dt,
					  __u32 sqes)
{
	__u64 index_id = journal_step(p, sq);
	struct steptime_step_stats *rec = jrec(j, index_id);

	if (rec) {
		__sync_fetch_and_add(&rec->tasks, dt);
		rec->flags |= STEPTIME_F_JOURNAL;
	}
	j->c->tasks += dt;
	if (index_id)
		j->c->tasks_in_step += dt;
	else
		j->c->tasks_outside_step += dt;
	jseg_push(j, sq, index_id, sqes, dt, 0);
}

/*
 * SQ_SNAP: @cnt is (tasks << 32 | SQEs) since the SQ's ALLOC; deltas from
 * the last one applied, an older or impossible one ignored.
 */
static __always_inline void journal_snap(struct jctx *j, struct st_proc *p,
					 struct st_sq *sq, __u64 cnt,
					 __u32 flags)
{
	__u32 tasks = cnt >> 32, sqes = (__u32)cnt;
	__u32 ds = sqes - sq->j_sqes, dt = tasks - sq->j_tasks;

	/* The SQE count wrapped: its carry is no task. */
	if (sqes < sq->j_sqes)
		dt--;
	if (ds > 0x7fffffffu || dt > ds) {
		j->c->journal_stale++;
		return;
	}
	j->c->journal_snaps++;
	sq->j_tasks = tasks;
	sq->j_sqes = sqes;
	if (flags & STEPTIME_SNAP_BEGIN)
		journal_begin(j, p, sq, sqes);
	if (flags & STEPTIME_SNAP_GAP)
		journal_flag(j, p, sq);
	if (dt)
		journal_count(j, p, sq, dt, sqes);
	if (flags & STEPTIME_SNAP_DRAINED) {
		/* Drained: checked against the driver's count. */
		j->c->journal_drains++;
		if (journal_send_ok_differs(sq, sqes))
			journal_flag(j, p, sq);
	} else if (flags & STEPTIME_SNAP_HEAD) {
		sqes -= STEPTIME_SNAP_BEHIND(flags);
	} else {
		return;
	}
	journal_complete(j, sq, sqes);
}

/* SQ_START, SQ_END: a stream mark's place-holder at SQE @pos of @sq. */
static __always_inline void journal_place(struct jctx *j, struct st_sq *sq,
					  __u64 index_id, __u32 tag, __u32 pos)
{
	struct steptime_step_stats *rec = jrec(j, index_id);

	j->c->stream_marks++;
	if (rec) {
		rec->flags |= STEPTIME_F_STREAM;
		rec->stream = sq->stream_id;
	}
	if (tag == STEPTIME_TAG_SQ_START) {
		sq->stream_open = 1;
		sq->stream_index = index_id;
		return;
	}
	if (sq->stream_index == index_id)
		sq->stream_open = 0;
	jseg_push(j, sq, index_id, pos + 1, 0, ST_JSEG_END);
}

/* Journal entry @m of process @p (@tgid). */
static __always_inline void journal_entry(struct st_proc *p, __u32 tgid,
					  struct steptime_mark *m)
{
	struct jctx j = { .k.tgid = tgid };
	struct st_sq *sq;
	__u32 slot, zero = 0;

	j.c = bpf_map_lookup_elem(&counters, &zero);
	if (!j.c)
		return;
	slot = journal_sq(tgid, m->tag == STEPTIME_TAG_SQ_SNAP ? m->index_id :
							    m->time_ns);
	sq = slot < STEPTIME_MAX_SQS ? bpf_map_lookup_elem(&sqs, &slot) : NULL;
	if (!sq) {
		j.c->journal_unowned++;
		return;
	}
	if (m->tag == STEPTIME_TAG_SQ_SNAP)
		journal_snap(&j, p, sq, m->time_ns, m->stream);
	else
		journal_place(&j, sq, m->index_id, m->tag, m->stream);
}

/*
 * The journal entry proc_sync_batch() left in process @tgid's (slot
 * @pslot) run, its marks still busy: applied, in order with the marks,
 * then the marks let go. A global function, verified once.
 */
__noinline int journal_apply(__u32 pslot, __u32 tgid)
{
	struct st_proc *p = proc_at(pslot);
	struct st_mark_run *run;

	if (!p)
		return 0;
	run = bpf_map_lookup_elem(&mark_runs, &pslot);
	if (run && journal_on)
		journal_entry(p, tgid, &run->j);
	/* No store-release in BPF (clang 14): a compiler barrier, a store. */
	asm volatile("" ::: "memory");
	p->busy = 0;
	return 0;
}

#endif /* __JOURNAL_BPF_H */
