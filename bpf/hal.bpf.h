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

/* Entry of HAL call @fn(@dev, @arg): kept for its return and its ioctls. */
static __always_inline int hal_enter(__u32 fn, __u64 dev, __u64 arg)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_hal_call c = {
		.arg = arg,
		.enter_ns = bpf_ktime_get_ns(),
		.fn = fn,
		.dev = (__u32)dev,
	};

	if (bpf_map_update_elem(&hal_calls, &id, &c, BPF_ANY))
		CNT_INC(hook_errors);
	return 0;
}

/* The HAL call @fn thread @id is inside, or NULL. */
static __always_inline struct st_hal_call *hal_call(__u64 id, __u32 fn)
{
	struct st_hal_call *c = bpf_map_lookup_elem(&hal_calls, &id);

	return c && c->fn == fn ? c : NULL;
}

/* The HAL call @fn the current thread returns from, into @c. */
static __always_inline bool hal_take(__u32 fn, struct st_hal_call *c)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_hal_call *cp = hal_call(id, fn);

	if (!cp)
		return false;
	*c = *cp;
	bpf_map_delete_elem(&hal_calls, &id);
	return true;
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

/*
 * The mapped SQ (devId @dev, @ts, @id) of the current process, allocated
 * through the HAL: NULL for a kio SQ (its ioctls account for it), for one
 * the HAL did not allocate while probed (blind, its steps flagged), and
 * for one gone since. @slot: its slot in sqs.
 */
static __always_inline struct st_sq *hal_sq(__u32 tgid, __u32 dev, __u32 ts,
					    __u32 id, __u32 *slot)
{
	struct st_hkey hk = { .tgid = tgid, .dev = dev, .ts = ts, .id = id };
	struct st_qkey *key = bpf_map_lookup_elem(&hal_sqs, &hk);
	struct st_sq *sq;

	if (!key)
		return NULL;
	*slot = sq_slot(key);
	sq = *slot < STEPTIME_MAX_SQS ? bpf_map_lookup_elem(&sqs, slot) : NULL;
	if (!sq || !sq->live || !qkey_eq(&sq->key, key) || sq->tgid != tgid ||
	    (sq->flags & (ST_SQ_HAL | ST_SQ_UIO)) != (ST_SQ_HAL | ST_SQ_UIO))
		return NULL;
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
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct st_send_ctx x = {};
	struct trs_task_send_info *si;
	struct st_hal_call c;
	struct st_proc *p;
	struct st_sq *sq;
	__u32 k, slot, n;
	int synced = 0;

	if (!hal_take(ST_HAL_SEND, &c) || (int)ret)
		return 0;
	if (bpf_probe_read_user(x.send_args, sizeof(x.send_args),
				(void *)c.arg)) {
		CNT_INC(hook_errors);
		return 0;
	}
	si = (struct trs_task_send_info *)x.send_args;
	sq = hal_sq(tgid, c.dev, si->tsId, si->sqId, &slot);
	if (!sq)
		return 0;
	n = si->sqe_num;
	CNT_INC(hal_sends);
	if (sq->created_ns > c.enter_ns || n > sq->depth) {
		CNT_ADD(tasks_raced, n);
		return 0;
	}
	k = proc_get(tgid);
	p = proc_at(k);
	if (p)
		synced = proc_sync(k, tgid);
	x.base = sq_base(sq, si->pos);
	x.sqe_addr = si->sqe_addr;
	x.host_index = p ? proc_open_step(p, tgid, synced) : 0;
	x.rec_index = opaque_zero;
	x.rec_tasks = opaque_zero;
	x.ioctl_index = opaque_zero;
	x.tgid = tgid;
	x.depth = sq->depth;
	x.enter_ns = c.enter_ns;
	sqes_account(&x, sq, n, bpf_ktime_get_ns(), NULL);
	return 0;
}

/*
 * halSqCqQuery() returned @ret: for SQ_HEAD of a mapped SQ, the head the
 * library read from the mapping; every task before it is complete.
 */
static __always_inline int hal_query_exit(long ret)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct trs_sqcq_query_info q;
	struct st_recv_ctx x = {};
	struct st_hal_call c;
	struct st_sq *sq;
	__u32 slot;

	if (!hal_take(ST_HAL_QUERY, &c) || (int)ret)
		return 0;
	if (bpf_probe_read_user(&q, sizeof(q), (void *)c.arg)) {
		CNT_INC(hook_errors);
		return 0;
	}
	if (q.type != TRS_SQCQ_TYPE_NORMAL || q.prop != TRS_SQCQ_PROP_SQ_HEAD)
		return 0;
	sq = hal_sq(tgid, c.dev, q.tsId, q.sqId, &slot);
	if (!sq)
		return 0;
	CNT_INC(hal_head_queries);
	x.now = bpf_ktime_get_ns();
	x.rep.sq_head = q.value[0] & 0xffff;
	walk_begin(&x, sq, slot);
	head_apply(&x, sq);
	CNT_ADD(completions, x.completions);
	CNT_ADD(head_completions, x.completions);
	return 0;
}

#endif /* __HAL_BPF_H */
