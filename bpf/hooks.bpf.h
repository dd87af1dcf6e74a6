/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Driver hooks: completions as they are queued, SQEs of uio_t queues.
 */
#ifndef __HOOKS_BPF_H
#define __HOOKS_BPF_H

#include "common.bpf.h"
#include "types.bpf.h"
#include "maps.bpf.h"
#include "thread.bpf.h"
#include "proc.bpf.h"
#include "marks.bpf.h"
#include "queues.bpf.h"
#include "send.bpf.h"
#include "sqe.bpf.h"
#include "walk.bpf.h"
#include "recv.bpf.h"

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

struct st_learn {
	__u32	id;		/* logic CQ id */
	__u32	stream_id;
	__u32	n;		/* candidates found */
	__u32	blind;		/* of which SQs the HAL's probes do not count */
	struct st_skey inst;
	struct st_chan ch;
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
 * ambiguous one teaches nothing: its report is left to the RECV (-EAGAIN);
 * -ENOENT: no known logic CQ could have it.
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
		return l.n ? -EAGAIN : -ENOENT;
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
	struct st_sq *sq;
	__u32 slot;
	int err;

	if (ret)
		return 0;
	err = ts_inst_find(ts_inst, logic_cq_id, stream_id, &ik);
	if (err == -EAGAIN) {
		CNT_INC(hook_deferred);
		return 0;
	}
	if (err) {
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
	slot = sq_slot(key);
	sq = slot < STEPTIME_MAX_SQS ? bpf_map_lookup_elem(&sqs, &slot) : NULL;
	if (!sq) {
		CNT_INC(hook_unattributed);
		return 0;
	}
	CNT_INC(hook_reports);
	x.has_report = 1;
	walk_begin(&x, sq, slot);
	head_apply(&x, sq);
	CNT_ADD(completions, x.completions);
	return 0;
}


/* The ioctl @cmd steptime accounts for that the current thread is inside. */
static __always_inline struct st_call *cur_call(__u32 cmd)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_thread *th = thread_slot(id);
	struct st_call *cp = NULL;

	if (th && READ_ONCE(th->busy) == id)
		cp = &th->call;
	else if (READ_ONCE(calls_hashed))
		cp = bpf_map_lookup_elem(&calls, &id);
	return cp && cp->cmd == cmd ? cp : NULL;
}

static __always_inline struct st_call *send_call(void)
{
	return cur_call(TRS_IOC_SQCQ_SEND);
}

/*
 * chan_proc_fs_add_chan (npusim_chan_proc_fs_add_chan): the driver made a
 * channel (hal_kernel_trs_chan_create(), in the ALLOC's thread). The first
 * one of a NORMAL ALLOC is its SQ's: STARS chips make one channel per SQ-CQ
 * pair; pre-STARS ones the SQ's, then the CQ's own. Its exit binds it to
 * the SQ (on_alloc()). Only the pointer is used: real hosts have no module
 * BTF for its fields.
 */
static __always_inline int chan_add(void *chan)
{
	struct st_call *cp = cur_call(TRS_IOC_SQCQ_ALLOC);

	if (cp && !cp->chan)
		cp->chan = (__u64)chan;
	return 0;
}

/* chan_proc_fs_del_chan: the channel goes; its memory may be reused. */
static __always_inline int chan_del(void *chan)
{
	__u64 ptr = (__u64)chan;

	if (ptr && !bpf_map_delete_elem(&chans, &ptr))
		chans_changed();
	return 0;
}

static long learn_sq(struct bpf_map *map, __u32 *slot, struct st_sq *sq,
		     struct st_learn *l)
{
	if (sq->live && (sq->flags & ST_SQ_SOFT) &&
	    sq->dev != ST_DEV_UNKNOWN &&
	    (stars_version >= 2 ||
	     (sq->stream_id & TRS_CQE_STREAM_ID_MASK) == l->stream_id)) {
		l->n++;
		l->blind += !(sq->flags & ST_SQ_HAL);
		l->ch.key = sq->key;
		l->ch.slot = *slot;
	}
	return 0;
}

/*
 * An SQE no single uio_t SQ can be said to have sent: every process whose
 * uio_t SQ could have, and which the HAL's probes do not count, may now
 * miss a task. Their steps are flagged, never silently short.
 */
static long taint_sq(struct bpf_map *map, __u32 *slot, struct st_sq *sq,
		     struct st_learn *l)
{
	struct st_proc *p;

	/* A bound SQ's SQEs pass its own channel (chan_sq()). */
	if (!sq->live || !(sq->flags & ST_SQ_SOFT) || (sq->flags & ST_SQ_HAL) ||
	    sq->chan || (stars_version < 2 &&
	     (sq->stream_id & TRS_CQE_STREAM_ID_MASK) != l->stream_id))
		return 0;
	p = proc_find(sq->tgid);
	if (p)
		proc_taint(p, sq->tgid, STEPTIME_F_UIO);
	return 0;
}

/*
 * The uio_t SQ an SQE comes from. Where the channel hooks are attached: the
 * SQ its channel was bound to at its ALLOC, exact whenever the worker
 * copies it (trace_sqe() looks the binding up before it reads the SQE);
 * an SQE of a channel bound to none (made before load, or its binding
 * lost) is never guessed: the processes that could have sent it are
 * flagged. Else by (device, TS, stream) where the profile says where
 * the channel keeps its ids, else by the driver's SQ object (&chan->sq in
 * the driver, struct npusim_sq in npusim: one per SQ), learned from its
 * first SQE that only one known uio_t SQ can have sent (same stream; STARS
 * v2 SQEs carry none: the only uio_t SQ). NULL with *@lost 0: the SQE is
 * one the HAL's probes count wherever it came from.
 */
static __always_inline struct st_qkey *chan_sq(void *chan, void *drv_sq,
					       __u16 stream_id,
					       struct st_chan *buf, bool *lost)
{
	struct st_skey sk = { .id = stream_id };
	__u64 ptr = (__u64)drv_sq;
	struct st_learn l = {};
	struct st_chan *ch;

	if (chan_hook) {
		/* Its binding was looked up first (trace_sqe()): none. */
		l.stream_id = stream_id;
		bpf_for_each_map_elem(&sqs, taint_sq, &l, 0);
		return NULL;
	}
	if (!drv_inst(chan, chan_id_off, &sk))
		return bpf_map_lookup_elem(&soft_sqs, &sk);
	ch = bpf_map_lookup_elem(&chans, &ptr);
	if (ch)
		return &ch->key;
	l.stream_id = stream_id;
	l.n = opaque_zero;	/* unknown: 6.8+ verifiers converge on it */
	l.blind = opaque_zero;
	bpf_for_each_map_elem(&sqs, learn_sq, &l, 0);
	if (l.n > 1 && l.blind)
		bpf_for_each_map_elem(&sqs, taint_sq, &l, 0);
	*lost = !l.n || l.blind;
	if (l.n != 1)
		return NULL;
	*buf = l.ch;
	if (!bpf_map_update_elem(&chans, &ptr, buf, BPF_ANY))
		chans_changed();
	return &buf->key;
}

/* The SQ channel binding @ch names: in its slot, unless gone from there. */
static __always_inline struct st_sq *chan_bound_sq(struct st_chan *ch)
{
	__u32 slot = ch->slot;
	struct st_sq *sq;

	sq = slot < STEPTIME_MAX_SQS ? bpf_map_lookup_elem(&sqs, &slot) : NULL;
	if (sq && READ_ONCE(sq->live) && qkey_eq(&sq->key, &ch->key))
		return sq;
	return sq_find(&ch->key);
}

/*
 * trs_chan_trace_sqe (npusim_chan_trace_sqe): an SQE on its way to the
 * device. SEND's SQEs are accounted at its exit; the others come from
 * uio_t queues, in whatever context moves them (npusim: its engine).
 */
static __always_inline int trace_sqe(void *chan, void *drv_sq, void *ksqe)
{
	struct st_send_ctx x = {};
	struct st_send_walk w = { .x = &x };
	__u64 chan_ptr = (__u64)chan, gen;
	struct st_chan_last *last = NULL;
	struct st_qkey *key = NULL;
	struct st_chan *ch = NULL, kb;
	struct st_proc *p;
	bool lost = true;
	struct st_sqe_raw r;
	struct st_sqe_head h;
	struct st_call *cp;
	__u32 zero = 0;

	/*
	 * A bound channel names its SQ and the SQ's slot before the SQE is
	 * read: the HAL's uio_t SQs, whose SQEs were counted at their sends
	 * in the submitting thread, cost this worker one hash lookup, and
	 * none for the rest of its run on the channel (chan_last).
	 */
	if (chan_hook) {
		gen = READ_ONCE(chans_gen);
		last = bpf_map_lookup_elem(&chan_last, &zero);
		if (last && last->chan == chan_ptr && last->gen == gen)
			return 0;
		ch = bpf_map_lookup_elem(&chans, &chan_ptr);
	}
	if (ch) {
		key = &ch->key;
		w.sq = chan_bound_sq(ch);
		if (w.sq && (w.sq->flags & (ST_SQ_SOFT | ST_SQ_HAL)) ==
			    (ST_SQ_SOFT | ST_SQ_HAL)) {
			if (last) {
				last->chan = chan_ptr;
				last->gen = gen;
			}
			return 0;
		}
	}
	/* Accounted at the SEND's exit; kept in case that exit fails. */
	cp = send_call();
	if (cp) {
		cp->sqes_sent++;
		return 0;
	}
	if (bpf_probe_read_kernel(&r, sizeof(r), ksqe))
		return 0;
	sqe_parse(&r, 0, &h);
	if (!key) {
		key = chan_sq(chan, drv_sq, h.stream_id, &kb, &lost);
		if (!key) {
			if (lost) {
				CNT_INC(hook_unattributed);
				CNT_INC(sqes_unowned);
			}
			return 0;
		}
		w.sq = sq_find(key);
	}
	/* Freed since, or not a soft queue: in no step, counted. */
	if (!w.sq || !(w.sq->flags & ST_SQ_SOFT)) {
		CNT_INC(sqes_unowned);
		return 0;
	}
	/* The HAL's SQs: counted in the submitting thread, at the send. */
	if (w.sq->flags & ST_SQ_HAL)
		return 0;
	CNT_INC(sqes_traced);
	p = proc_find(w.sq->tgid);
	send_ctx_init(&x, w.sq, w.sq->tgid,
		      p ? proc_open_step(p, w.sq->tgid, false) : 0,
		      w.sq->tail, (__u64)ksqe, bpf_ktime_get_ns(), 1);
	/* One SQE: no loop (6.8+ verifiers walk bpf_loop's iterations). */
	if (!x.depth)
		return 0;
	/* The worker copies a task's SQEs one by one: it spans calls. */
	x.spans = 1;
	send_one(0, &w);
	send_flush(&x);
	if (x.fault) {
		CNT_INC(hook_errors);
		return 0;
	}
	w.sq->tail = x.base + 1;
	send_counters(&x, 1, NULL);
	return 0;
}

#endif /* __HOOKS_BPF_H */
