/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libascend_hal.so, the driver's user-space library, through which CANN's
 * runtime submits (ascend-abi.md section 5). On a real host the library
 * asks for a mapped SQ and the chip picks its mode: 910B's uio_t soft
 * queues pass the kernel only in a worker, milliseconds later, and 950's
 * uio_d queues never. Uprobes on its entry points see every submission in
 * the submitting thread, when it is made, in any mode:
 *
 *   halSqCqAllocate	its ALLOC ioctl (ioctl.bpf.h) marks the SQ ST_SQ_HAL
 *			and names it by (process, devId, TS, id)
 *   halSqTaskSend	a mapped SQ's SQEs, counted as a SEND's at the call's
 *			entry (no return probe: it would double the probe's
 *			cost); a kio SQ's are counted by the SEND ioctl inside
 *   halSqCqQuery	SQ_HEAD of a mapped SQ, read by the library from
 *			the mapping: a head, as the QUERY ioctl's for kio
 *
 * Reports need nothing here: halCqReportRecv() always issues the RECV.
 * The arguments are the ioctls' own structs (the library copies them).
 */
#ifndef __HAL_BPF_H
#define __HAL_BPF_H

#include "common.bpf.h"
#include "types.bpf.h"
#include "maps.bpf.h"
#include "thread.bpf.h"
#include "proc.bpf.h"
#include "marks.bpf.h"
#include "queues.bpf.h"
#include "send.bpf.h"
#include "walk.bpf.h"
#include "recv.bpf.h"

static __always_inline struct st_hal_call *hal_slot(__u64 id)
{
	__u32 k = thread_key(id);

	return bpf_map_lookup_elem(&hal_threads, &k);
}

/*
 * Entry of HAL call @fn(@dev, @arg): kept for its return and its ioctls,
 * in the thread's slot unless another thread inside a call holds it. A
 * slot this thread holds still (a return missed) is its own.
 */
static __always_inline int hal_enter(__u32 fn, __u64 dev, __u64 arg)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_hal_call *h = hal_slot(id);
	struct st_hal_call c = {
		.arg = arg,
		.fn = fn,
		.dev = (__u32)dev,
	};
	__u64 holder;

	c.enter_ns = bpf_ktime_get_ns();
	if (h) {
		holder = __sync_val_compare_and_swap(&h->busy, 0, id);
		if (!holder || holder == id) {
			h->arg = arg;
			h->enter_ns = c.enter_ns;
			h->fn = fn;
			h->dev = (__u32)dev;
			return 0;
		}
	}
	c.busy = id;
	if (!bpf_map_update_elem(&hal_calls, &id, &c, BPF_NOEXIST))
		__sync_fetch_and_add(&hal_calls_hashed, 1);
	else if (bpf_map_update_elem(&hal_calls, &id, &c, BPF_EXIST))
		CNT_INC(hook_errors);
	return 0;
}

/*
 * The HAL call thread @id is inside, or NULL: in its slot while it holds
 * it, else in hal_calls (@hashed set).
 */
static __always_inline struct st_hal_call *hal_find(__u64 id, bool *hashed)
{
	struct st_hal_call *c = hal_slot(id);

	*hashed = false;
	if (c && READ_ONCE(c->busy) == id)
		return c;
	if (!READ_ONCE(hal_calls_hashed))
		return NULL;
	*hashed = true;
	return bpf_map_lookup_elem(&hal_calls, &id);
}

/* The HAL call @fn thread @id is inside, or NULL. */
static __always_inline struct st_hal_call *hal_call(__u64 id, __u32 fn)
{
	bool hashed;
	struct st_hal_call *c = hal_find(id, &hashed);

	return c && c->fn == fn ? c : NULL;
}

/*
 * The HAL call @fn the current thread returns from, into @c; its slot or
 * hash entry is released.
 */
static __always_inline bool hal_take(__u32 fn, struct st_hal_call *c)
{
	__u64 id = bpf_get_current_pid_tgid();
	bool hashed;
	struct st_hal_call *cp = hal_find(id, &hashed);

	if (!cp || cp->fn != fn)
		return false;
	*c = *cp;
	if (!hashed) {
		/* Fully ordered: the next holder sees our stores. */
		__sync_val_compare_and_swap(&cp->busy, id, 0);
	} else if (!bpf_map_delete_elem(&hal_calls, &id)) {
		__sync_fetch_and_sub(&hal_calls_hashed, 1);
	}
	return true;
}

/* A thread leaves: a HAL call it never returned from goes with it. */
static __always_inline void hal_thread_exit(__u64 id)
{
	struct st_hal_call *h = hal_slot(id);

	if (h)
		__sync_val_compare_and_swap(&h->busy, id, 0);
	if (READ_ONCE(hal_calls_hashed) && !bpf_map_delete_elem(&hal_calls, &id))
		__sync_fetch_and_sub(&hal_calls_hashed, 1);
}

/*
 * The ALLOC ioctl exiting inside halSqCqAllocate(): the SQ is the HAL's,
 * named by its devId from now on. Called by on_alloc() with the SQ made.
 */
static __always_inline void hal_alloc_bind(struct st_sq *sq,
					   struct st_hal_call *hc, __u64 tail)
{
	struct st_hkey hk = {
		.tgid = sq->tgid,
		.dev = hc->dev,
		.ts = sq->key.ts,
		.id = sq->key.id,
	};

	sq->hal_dev = hc->dev;
	sq->hal_tail = tail;
	if (bpf_map_update_elem(&hal_sqs, &hk, &sq->key, BPF_ANY)) {
		/* Not found at its sends: a blind SQ instead, and flagged so. */
		sq->flags &= ~ST_SQ_HAL;
		CNT_INC(sq_map_full);
		if (sq_blind(sq->flags)) {
			CNT_INC(sqs_blind);
			uio_blind_alloc(sq->tgid);
		}
		return;
	}
	CNT_INC(sqs_hal);
}

/* Whether @sq is process @tgid's live SQ (devId @dev, @ts, @id), HAL-mapped. */
static __always_inline bool hal_sq_is(struct st_sq *sq, __u32 tgid, __u32 dev,
				      __u32 ts, __u32 id)
{
	return READ_ONCE(sq->live) && sq->tgid == tgid && sq->hal_dev == dev &&
	       sq->key.ts == ts && sq->key.id == id &&
	       (sq->flags & (ST_SQ_HAL | ST_SQ_UIO)) == (ST_SQ_HAL | ST_SQ_UIO);
}

/*
 * The mapped SQ (devId @dev, @ts, @id) of the calling thread's process
 * (@pid_tgid), allocated through the HAL: NULL for a kio SQ (its ioctls
 * account for it), for one the HAL did not allocate while probed (blind,
 * its steps flagged), and for one gone since. @slot: its slot in sqs.
 * First the slot the thread's last call found (@hint, st_hal_call), if the
 * SQ there is still that one: the driver gives no two live SQs of a device
 * the same ids, so the SQ's own fields tell, without the two hash lookups.
 */
static __always_inline struct st_sq *hal_sq(__u64 pid_tgid, __u32 dev,
					    __u32 ts, __u32 id, __u32 hint,
					    __u32 *slot)
{
	__u32 tgid = pid_tgid >> 32;
	struct st_hkey hk = { .tgid = tgid, .dev = dev, .ts = ts, .id = id };
	struct st_hal_call *h;
	struct st_qkey *key;
	struct st_sq *sq;

	if (hint) {
		*slot = hint - 1;
		sq = bpf_map_lookup_elem(&sqs, slot);
		if (sq && hal_sq_is(sq, tgid, dev, ts, id))
			return sq;
	}
	key = bpf_map_lookup_elem(&hal_sqs, &hk);
	if (!key)
		return NULL;
	*slot = sq_slot(key);
	sq = *slot < STEPTIME_MAX_SQS ? bpf_map_lookup_elem(&sqs, slot) : NULL;
	if (!sq || !qkey_eq(&sq->key, key) || !hal_sq_is(sq, tgid, dev, ts, id))
		return NULL;
	h = hal_slot(pid_tgid);
	if (h)
		h->sq_hint = *slot + 1;
	return sq;
}

/*
 * A mapped SQ's send is accounted at halSqTaskSend()'s entry, at the
 * position the library's tail word holds (a 950's uio_d SQ has none: its
 * doorbell, the tail register, which the library writes and reads back
 * instead, ioctl.bpf.h): the library writes its tail
 * there after every send that lands (trs_sq_task_send_set_db) and returns
 * it as the send's pos. A send that finds no room (DRV_ERROR_NO_RESOURCES)
 * or fails another way leaves the word alone, so the next entry on the SQ
 * sees the last send's position still there:
 * - the same thread again, with the same SQEs: the runtime retrying it
 *   until it lands (task_submit.cc): counted once, at the first try;
 * - the same thread, other SQEs: that send was given up; its tasks are
 *   taken back and the new ones take its positions;
 * - another thread: its send may still be on its way (the runtime sends
 *   one stream from one thread at a time): positions assumed, and counted
 *   (hal_sends_overlapped, a loss).
 */

#define ST_HAL_RETRACT_MAX	5	/* SQEs a given-up send can take back */

/* Position @i of a given-up send: no task there to complete. */
static __always_inline void hal_slot_clear(struct st_sq *sq, __u32 i)
{
	__u32 d = sq->depth;

	if (i < sq->last_n && d)
		task_claim(&sq->t[((sq->last_base + i) % d) &
				  (ST_SQ_DEPTH - 1)]);
}

/* The last send accounted on @sq is given up: take its tasks back. */
static __always_inline void hal_send_retract(struct st_sq *sq)
{
	__u32 zero = 0, n = sq->last_n, in = sq->last_in_step;
	__u32 tasks = n - sq->last_conts;
	struct steptime_step_stats *rec;
	struct steptime_counters *c;

	CNT_INC(hal_sends_retracted);
	_Static_assert(ST_HAL_RETRACT_MAX == 5, "one line each");
	hal_slot_clear(sq, 0);
	hal_slot_clear(sq, 1);
	hal_slot_clear(sq, 2);
	hal_slot_clear(sq, 3);
	hal_slot_clear(sq, 4);
	sq->tail = sq->last_base;
	sq->last_n = 0;
	if (!sq->last_plain) {
		/* Marks, the runtime's own, or too many SQEs: not undone. */
		CNT_ADD(sqes_send_failed, n);
		return;
	}
	c = bpf_map_lookup_elem(&counters, &zero);
	if (c) {
		c->tasks -= tasks;
		c->sqes_continued -= sq->last_conts;
		c->tasks_in_step -= in;
		c->tasks_outside_step -= tasks - in;
	}
	rec = in ? step_get(sq->tgid, sq->last_index, false) : NULL;
	if (rec)
		__sync_fetch_and_sub(&rec->tasks, in);
}

/*
 * The position of a send of @n SQEs at @addr by thread @tid on @sq, whose
 * tail word reads @tail; -1: a retry of the last one, already counted.
 */
static __always_inline __s64 hal_send_base(struct st_sq *sq, __u32 tail,
					   __u32 tid, __u64 addr, __u32 n)
{
	__u32 d = sq->depth;

	if (d && sq->last_n && tail == sq->last_base % d &&
	    sq->tail == sq->last_base + sq->last_n) {
		if (sq->last_tid != tid) {
			CNT_INC(hal_sends_overlapped);
			return sq->tail;
		}
		if (sq->last_addr == addr && sq->last_n == n) {
			CNT_INC(hal_send_retries);
			return -1;
		}
		hal_send_retract(sq);
	}
	return sq_base(sq, tail);
}

/* Send @x of @n SQEs accounted on @sq: the one to check at the next. */
static __always_inline void hal_send_keep(struct st_sq *sq,
					  const struct st_send_ctx *x,
					  __u32 tid, __u32 n)
{
	sq->last_base = x->base;
	sq->last_addr = x->sqe_addr;
	sq->last_index = x->rec_index;
	sq->last_n = n;
	sq->last_tid = tid;
	sq->last_in_step = x->in_step;
	sq->last_conts = x->conts;
	/* A runtime's task: 1 to 4 SQEs on 910B, 1 to 5 on 950 (send.bpf.h). */
	sq->last_plain = !x->marks && !x->internal && !x->fault &&
			 n <= ST_HAL_RETRACT_MAX;
}

/*
 * halSqTaskSend(@dev, @arg) entered: on a mapped SQ its SQEs count as a
 * SEND's would, timed from now, unless the library refuses the call
 * outright (no SQEs, too many, no address). The process's marks are
 * consumed first, as at its ioctls: it may make none.
 */
static __always_inline int hal_send_enter(__u32 dev, __u64 arg)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct steptime_counters *cnt;
	struct st_send_ctx x = {};
	struct trs_task_send_info *si;
	struct st_hal_call *h;
	__u32 k, slot, n, zero = 0;
	__u64 sqe_addr, host_index = 0;
	struct st_proc *p;
	struct st_sq *sq;
	bool ring_read;
	__u16 tail;
	__s64 base;

	if (bpf_probe_read_user(x.send_args, sizeof(x.send_args),
				(void *)arg)) {
		CNT_INC(hook_errors);
		return 0;
	}
	si = (struct trs_task_send_info *)x.send_args;
	/*
	 * Another type's send goes to an SQ of that type, whatever its id
	 * (trs_sqcq.c:138-140, trs_interface.c:1034-1062): the runtime's
	 * DRV_GDB_TYPE sends (npu_driver_res.cc:2225-2236) are no task here.
	 */
	if (si->type != TRS_SQCQ_TYPE_NORMAL)
		return 0;
	h = hal_slot(pid_tgid);
	sq = hal_sq(pid_tgid, dev, si->tsId, si->sqId, h ? h->sq_hint : 0,
		    &slot);
	if (!sq)
		return 0;
	n = si->sqe_num;
	sqe_addr = si->sqe_addr;
	if (!n || n >= sq->depth || !sqe_addr)
		return 0;
	/* Little-endian: the low half of the simulator's 32-bit word. */
	if (bpf_probe_read_user(&tail, sizeof(tail), (void *)sq->hal_tail)) {
		CNT_INC(hook_errors);
		return 0;
	}
	base = hal_send_base(sq, tail, tid, sqe_addr, n);
	if (base < 0)
		return 0;
	/* Never NULL (index 0): one lookup for the whole send. */
	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!cnt)
		return 0;
	cnt->hal_sends++;
	/*
	 * One SQE on a stream with its step open goes to that step, or is
	 * the runtime's own: no host mark can change where, so the ring is
	 * not read (a user read, as costly as the SQE's). Its marks wait for
	 * the next send outside a stream's step or the next head query,
	 * which consumes them before it completes a task (hal_query_exit()).
	 */
	ring_read = n > 1 || !sq->stream_open;
	if (ring_read) {
		k = proc_get(tgid);
		p = proc_at(k);
		if (p)
			host_index = proc_open_step(p, tgid,
						    proc_sync(k, tgid));
	}
	send_ctx_init(&x, sq, tgid, host_index, base, sqe_addr,
		      bpf_ktime_get_ns(), 0);
	sqes_account(&x, sq, n, cnt);
	hal_send_keep(sq, &x, tid, n);
	/*
	 * But a stream mark (the step's END) waits for nothing: its report
	 * may finish the step in the kernel's CQ hook, where no ring can be
	 * read, before this process calls again. aclprofGetStepTimestamp()
	 * marked the host first: that mark goes into the step now.
	 */
	if (!ring_read && x.marks)
		proc_sync_known(tgid);
	return 0;
}

/*
 * The position of mapped SQ @sq's head @h, read by the library: counted
 * back from where its sends have landed (the tail word, behind the tail
 * accounted by a last send that has not landed), which no head trails by
 * a whole SQ. Counted from the tasks completed before, a head could not be
 * told from one a whole SQ further on: a runtime may send up to the
 * library's room, and nothing completes in between (hal_steps' full
 * variants).
 */
static __always_inline bool hal_head_pos(struct st_sq *sq, __u32 h,
					 __u64 *pos)
{
	__u32 d = sq->depth, lag, back;
	__u64 tail = sq->tail;
	__u16 word;

	if (!d || h >= d)
		return false;
	if (bpf_probe_read_user(&word, sizeof(word), (void *)sq->hal_tail)) {
		CNT_INC(hook_errors);
		return false;
	}
	lag = (tail % d + d - word % d) % d;
	/* Further behind: sends not seen here (sq_base() resyncs). */
	if (lag <= sq->last_n)
		tail -= lag;
	back = (tail % d + d - h) % d;
	*pos = back < tail ? tail - back : 0;
	return true;
}

/*
 * halSqCqQuery() returned @ret: for SQ_HEAD of a mapped SQ, the head the
 * library read from the mapping; every task before it is complete.
 */
static __always_inline int hal_query_exit(long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct trs_sqcq_query_info q;
	struct st_recv_ctx x = {};
	struct st_hal_call c;
	struct st_sq *sq;
	__u32 slot;
	__u64 pos;

	if (!hal_take(ST_HAL_QUERY, &c) || (int)ret)
		return 0;
	if (bpf_probe_read_user(&q, sizeof(q), (void *)c.arg)) {
		CNT_INC(hook_errors);
		return 0;
	}
	if (q.type != TRS_SQCQ_TYPE_NORMAL || q.prop != TRS_SQCQ_PROP_SQ_HEAD)
		return 0;
	sq = hal_sq(pid_tgid, c.dev, q.tsId, q.sqId, c.sq_hint, &slot);
	if (!sq)
		return 0;
	CNT_INC(hal_head_queries);
	if (!hal_head_pos(sq, q.value[0], &pos))
		return 0;
	if (pos < sq->done) {
		CNT_INC(heads_behind);
		return 0;
	}
	/* The marks a stream's sends left (hal_send_enter()), first. */
	proc_sync_known(pid_tgid >> 32);
	x.now = bpf_ktime_get_ns();
	walk_begin(&x, sq, slot);
	sq_complete_to(&x, sq, pos);
	CNT_ADD(completions, x.completions);
	CNT_ADD(head_completions, x.completions);
	return 0;
}

#endif /* __HAL_BPF_H */
