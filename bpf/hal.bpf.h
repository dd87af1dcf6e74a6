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
 *   halSqTaskSend	a mapped SQ's SQEs, counted as a SEND's; a kio SQ's
 *			are counted by the SEND ioctl inside, not here
 *   halSqCqQuery	SQ_HEAD of a mapped SQ, read by the library from
 *			the mapping: a head, as the QUERY ioctl's for kio
 *
 * Reports need nothing here: halCqReportRecv() always issues the RECV.
 * The arguments are the ioctls' own structs (the library copies them).
 */
#ifndef STEPTIME_BPF_MAIN
#error "hal.bpf.h is part of steptime.bpf.c: include it from there"
#endif
#ifndef __HAL_BPF_H
#define __HAL_BPF_H

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
					   struct st_hal_call *hc)
{
	struct st_hkey hk = {
		.tgid = sq->tgid,
		.dev = hc->dev,
		.ts = sq->key.ts,
		.id = sq->key.id,
	};

	sq->hal_dev = hc->dev;
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
 * halSqTaskSend() returned @ret: its SQEs are on a mapped SQ (written to
 * the soft queue or the hardware SQ), at the position it returned, and
 * count as a SEND's would, timed from the call's entry. The process's
 * marks are consumed first, as at its ioctls: it may make none.
 */
static __always_inline int hal_send_exit(long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct st_send_ctx x = {};
	struct trs_task_send_info *si;
	struct st_hal_call c;
	struct st_proc *p;
	struct st_sq *sq;
	__u32 k, slot, n, pos;
	__u64 sqe_addr;
	int synced = 0;

	if (!hal_take(ST_HAL_SEND, &c) || (int)ret)
		return 0;
	if (bpf_probe_read_user(x.send_args, sizeof(x.send_args),
				(void *)c.arg)) {
		CNT_INC(hook_errors);
		return 0;
	}
	si = (struct trs_task_send_info *)x.send_args;
	sq = hal_sq(pid_tgid, c.dev, si->tsId, si->sqId, c.sq_hint, &slot);
	if (!sq)
		return 0;
	n = si->sqe_num;
	pos = si->pos;
	sqe_addr = si->sqe_addr;
	CNT_INC(hal_sends);
	if (sq->created_ns > c.enter_ns || n > sq->depth) {
		CNT_ADD(tasks_raced, n);
		return 0;
	}
	k = proc_get(tgid);
	p = proc_at(k);
	if (p)
		synced = proc_sync(k, tgid);
	send_ctx_init(&x, sq, tgid, p ? proc_open_step(p, tgid, synced) : 0,
		      sq_base(sq, pos), sqe_addr, c.enter_ns, 0);
	sqes_account(&x, sq, n, NULL);
	return 0;
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
	__u32 slot, n;

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
	n = head_query_apply(&x, sq, slot, q.value[0], bpf_ktime_get_ns());
	CNT_ADD(completions, n);
	CNT_ADD(head_completions, n);
	return 0;
}

#endif /* __HAL_BPF_H */
