// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: the TRS ioctls (magic 'X'), the analog of the real driver's
 * trs_ioctl(). Semantics: include/uapi/ascend_trs.h, section 4.
 */
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/nospec.h>
#include <linux/ktime.h>
#include <linux/pagemap.h>

#include "npusim.h"

union npusim_trs_arg {
	struct trs_sqcq_alloc_info	alloc;
	struct trs_sqcq_free_info	free;
	struct trs_task_send_info	send;
	struct trs_report_recv_info	recv;
};

/*
 * The one place where ioctl arguments cross the user boundary: the handler
 * works on a kernel copy, written back when the command has output (even
 * for ETIMEDOUT, which reports report_cqe_num = 0).
 */
long npusim_ioctl_dispatch(const struct npusim_ioctl *c, void *buf,
			   struct npusim_ctx *ctx, unsigned int cmd,
			   unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	size_t size = _IOC_SIZE(cmd);
	long ret;

	if (!c->handler)
		return -EOPNOTSUPP;
	if (cmd != c->cmd)
		return -ENOTTY;
	if (copy_from_user(buf, uarg, size))
		return -EFAULT;
	ret = c->handler(ctx, buf);
	if (c->out && (!ret || ret == -ETIMEDOUT) && copy_to_user(uarg, buf, size))
		return -EFAULT;
	return ret;
}

/*
 * Wait on @wq until @cond(@q, @arg), for @timeout ms from @deadline's
 * start (< 0: forever). 0, -ETIMEDOUT, or -EINTR/-ERESTARTSYS.
 */
static int npusim_wait(struct npusim_queue *q, wait_queue_head_t *wq,
		       bool (*cond)(struct npusim_queue *q, u64 arg), u64 arg,
		       s32 timeout, ktime_t deadline)
{
	ktime_t left;
	int ret;

	if (timeout < 0)
		return wait_event_interruptible(*wq, cond(q, arg));
	left = ktime_sub(deadline, ktime_get());
	if (left <= 0)
		return -ETIMEDOUT;
	ret = wait_event_interruptible_hrtimeout(*wq, cond(q, arg), left);
	if (ret == -ETIME)
		return -ETIMEDOUT;
	if (ret == -ERESTARTSYS)
		return -EINTR;
	return ret;
}

static int npusim_trs_alloc(struct npusim_ctx *ctx, void *arg)
{
	struct trs_sqcq_alloc_info *a = arg;
	struct npusim_queue *q;
	int ret;

	if (a->type != TRS_SQCQ_TYPE_NORMAL || a->tsId ||
	    a->sqeSize != TRS_SQE_SIZE || a->cqeSize != TRS_CQE_SIZE ||
	    !a->sqeDepth || a->sqeDepth > TRS_SQ_MAX_DEPTH ||
	    !a->cqeDepth || a->cqeDepth > TRS_SQ_MAX_DEPTH ||
	    a->flag ||
	    (!a->ext_info && a->ext_info_len) ||
	    memchr_inv(a->res, 0, sizeof(a->res)))
		return -EINVAL;

	mutex_lock(&ctx->lock);
	if (!ctx->bound)
		ret = -EBADFD;
	else
		ret = npusim_queue_alloc(ctx, false,
					 a->sqeDepth, a->cqeDepth, &q);
	if (!ret) {
		a->sqId = q->sq_id;
		a->cqId = q->cq_id;
	}
	mutex_unlock(&ctx->lock);
	return ret;
}

static int npusim_trs_free(struct npusim_ctx *ctx, void *arg)
{
	struct trs_sqcq_free_info *f = arg;
	struct npusim_queue *q;
	int ret = -EINVAL;

	if (f->type != TRS_SQCQ_TYPE_NORMAL || f->tsId ||
	    memchr_inv(f->res, 0, sizeof(f->res)))
		return -EINVAL;

	mutex_lock(&ctx->lock);
	list_for_each_entry(q, &ctx->queues, ctx_node) {
		if (q->sq_id != f->sqId)
			continue;
		if (q->cq_id == f->cqId) {
			npusim_queue_destroy(q);
			ret = 0;
		}
		break;
	}
	mutex_unlock(&ctx->lock);
	return ret;
}

static bool npusim_sq_changed(struct npusim_queue *q, u64 gen)
{
	return READ_ONCE(q->dead) || READ_ONCE(q->sq_gen) != gen;
}

/*
 * Queue the whole batch if the SQ has room for it: 0, or -EAGAIN (then a
 * SEND that may wait has told the engine how much room it waits for, and
 * @gen is the generation of the engine's wakeups to wait for a change of).
 * submit_lock keeps a batch contiguous and covers the truth pages; it is
 * never held while waiting, so that a SEND's timeout is its own.
 */
static int npusim_send_try(struct npusim_queue *q,
			   struct trs_task_send_info *s,
			   const struct trs_sqe *sqes, u64 *gen)
{
	struct npusim_ts *ts = q->ts;
	u32 i, n = s->sqe_num;
	u64 now;
	int ret;

	mutex_lock(&q->submit_lock);
	ret = npusim_truth_prepare(q, q->tail, n, GFP_KERNEL);
	if (ret)
		goto out;
	mutex_lock(&ts->lock);
	if (q->dead) {
		ret = -EINVAL;
	} else if (q->depth - (q->tail - q->head) < n) {
		ret = -EAGAIN;
		if (s->timeout && (!q->sq_want || n < q->sq_want))
			q->sq_want = n;
		*gen = q->sq_gen;
	} else {
		now = ktime_get_ns();
		s->pos = q->tail % q->depth;
		for (i = 0; i < n; i++)
			npusim_queue_push(q, &sqes[i], now, 0);
		npusim_engine_make_ready(q);
	}
	mutex_unlock(&ts->lock);
	if (!ret)
		npusim_engine_kick(ts);
out:
	mutex_unlock(&q->submit_lock);
	return ret;
}

static int npusim_send_wait(struct npusim_queue *q,
			    struct trs_task_send_info *s,
			    const struct trs_sqe *sqes)
{
	ktime_t deadline = ktime_add_ms(ktime_get(), s->timeout);
	u64 gen;
	int ret;

	for (;;) {
		ret = npusim_send_try(q, s, sqes, &gen);
		if (ret != -EAGAIN || !s->timeout)
			return ret;
		ret = npusim_wait(q, &q->sq_wait, npusim_sq_changed, gen,
				  s->timeout, deadline);
		if (ret)
			return ret;
	}
}

static int npusim_trs_send(struct npusim_ctx *ctx, void *arg)
{
	struct trs_task_send_info *s = arg;
	struct npusim_queue *q;
	struct trs_sqe *sqes;
	u32 i;
	int ret;

	if (s->type != TRS_TASK_TYPE_NORMAL || s->tsId || !s->sqe_num ||
	    memchr_inv(s->res, 0, sizeof(s->res)))
		return -EINVAL;
	q = npusim_sq_get(ctx, s->sqId);
	if (!q)
		return -EINVAL;
	if (q->mapped || s->sqe_num > q->depth) {
		ret = -EINVAL;
		goto out_put;
	}
	sqes = kvmalloc_array(s->sqe_num, sizeof(*sqes), GFP_KERNEL);
	if (!sqes) {
		ret = -ENOMEM;
		goto out_put;
	}
	if (copy_from_user(sqes, u64_to_user_ptr(s->sqe_addr),
			   (size_t)s->sqe_num * sizeof(*sqes))) {
		ret = -EFAULT;
		goto out_free;
	}
	ret = 0;
	for (i = 0; i < s->sqe_num && !ret; i++)
		if (!npusim_sqe_valid(&sqes[i]))
			ret = -EINVAL;
	if (ret)
		goto out_free;

	ret = npusim_send_wait(q, s, sqes);
out_free:
	kvfree(sqes);
out_put:
	npusim_queue_put(q);
	return ret;
}

static bool npusim_cqe_match(const struct trs_logic_cqe *e, u32 stream,
			     u32 task)
{
	return task == TRS_REPORT_TASK_ANY ||
	       (e->stream_id == stream && e->task_id == task);
}

static struct trs_logic_cqe *npusim_cqe_at(struct npusim_queue *q, u32 i)
{
	return &q->cqes[(q->cq_first + i) % q->cq_depth];
}

/* Copy the first @cap matching reports to @buf. Caller holds ts->lock. */
static u32 npusim_cq_peek(struct npusim_queue *q, struct trs_logic_cqe *buf,
			  u32 cap, u32 stream, u32 task)
{
	u32 i, n = 0;

	for (i = 0; i < q->cq_count && n < cap; i++)
		if (npusim_cqe_match(npusim_cqe_at(q, i), stream, task))
			buf[n++] = *npusim_cqe_at(q, i);
	return n;
}

/*
 * Remove the first @n matching reports, the ones npusim_cq_peek() copied:
 * recv_lock kept other receivers out and the engine only appends. Caller
 * holds ts->lock.
 */
static void npusim_cq_pop(struct npusim_queue *q, u32 n, u32 stream, u32 task)
{
	u32 i, kept = 0, gone = 0;

	for (i = 0; i < q->cq_count; i++) {
		struct trs_logic_cqe *e = npusim_cqe_at(q, i);

		if (gone < n && npusim_cqe_match(e, stream, task)) {
			gone++;
			continue;
		}
		if (kept != i)
			*npusim_cqe_at(q, kept) = *e;
		kept++;
	}
	q->cq_count = kept;
	q->ts->stats.reports_pending -= gone;
}

static bool npusim_cq_changed(struct npusim_queue *q, u64 gen)
{
	return READ_ONCE(q->dead) || READ_ONCE(q->cq_gen) != gen;
}

/*
 * Hand the first matching reports to user space: copied while still queued
 * and removed only once the copy worked, so that none is lost or
 * duplicated. Returns their number, 0 when there is none (@gen: the CQ's
 * generation then), or a negative errno.
 */
static int npusim_recv_take(struct npusim_queue *q,
			    struct trs_report_recv_info *r,
			    struct trs_logic_cqe *buf, u32 cap, u64 *gen)
{
	void __user *ubuf = u64_to_user_ptr(r->cqe_addr);
	struct npusim_ts *ts = q->ts;
	bool kick = false;
	u32 n;

	mutex_lock(&ts->lock);
	if (q->dead) {
		mutex_unlock(&ts->lock);
		return -EINVAL;
	}
	n = npusim_cq_peek(q, buf, cap, r->stream_id, r->task_id);
	*gen = q->cq_gen;
	mutex_unlock(&ts->lock);
	if (!n)
		return 0;
	if (copy_to_user(ubuf, buf, n * sizeof(*buf)))
		return -EFAULT;

	mutex_lock(&ts->lock);
	if (!q->dead) {
		npusim_cq_pop(q, n, r->stream_id, r->task_id);
		if (q->stalled) {
			/* it could not run while its CQ was full */
			q->last_end_ns = max(q->last_end_ns, ktime_get_ns());
			q->stalled = false;
			npusim_engine_make_ready(q);
			kick = true;
		}
	}
	mutex_unlock(&ts->lock);
	if (kick)
		npusim_engine_kick(ts);
	return n;
}

/*
 * recv_lock is held only while taking reports, never while waiting, so
 * that a receiver's timeout is not extended by another one's.
 */
static int npusim_recv_wait(struct npusim_queue *q,
			    struct trs_report_recv_info *r,
			    struct trs_logic_cqe *buf, u32 cap)
{
	ktime_t deadline = ktime_add_ms(ktime_get(), r->timeout);
	u64 gen;
	int ret;

	for (;;) {
		ret = mutex_lock_interruptible(&q->recv_lock);
		if (ret)
			return ret;
		ret = npusim_recv_take(q, r, buf, cap, &gen);
		mutex_unlock(&q->recv_lock);
		if (ret)
			return ret;
		if (!r->timeout)
			return -ETIMEDOUT;
		ret = npusim_wait(q, &q->cq_wait, npusim_cq_changed, gen,
				  r->timeout, deadline);
		if (ret)
			return ret;
	}
}

static int npusim_trs_recv(struct npusim_ctx *ctx, void *arg)
{
	struct trs_report_recv_info *r = arg;
	struct trs_logic_cqe *buf;
	struct npusim_queue *q;
	u32 cap;
	int ret;

	if (r->type != TRS_SQCQ_TYPE_NORMAL || r->tsId || !r->cqe_num ||
	    r->res[0] > 1 || memchr_inv(&r->res[1], 0, sizeof(r->res) - 4))
		return -EINVAL;
	r->report_cqe_num = 0;
	q = npusim_cq_get(ctx, r->cqId);
	if (!q)
		return -EINVAL;
	cap = min(r->cqe_num, q->cq_depth);
	/* Fail early rather than after a wait for nothing. */
	if (fault_in_writeable(u64_to_user_ptr(r->cqe_addr),
			       (size_t)cap * sizeof(*buf))) {
		ret = -EFAULT;
		goto out_put;
	}
	buf = kvmalloc_array(cap, sizeof(*buf), GFP_KERNEL);
	if (!buf) {
		ret = -ENOMEM;
		goto out_put;
	}
	ret = npusim_recv_wait(q, r, buf, cap);
	if (ret > 0) {
		r->report_cqe_num = ret;
		ret = 0;
	}
	kvfree(buf);
out_put:
	npusim_queue_put(q);
	return ret;
}

static const struct npusim_ioctl npusim_trs_cmds[TRS_MAX_CMD] = {
	[TRS_IOC_NR_SQCQ_ALLOC]	= { npusim_trs_alloc, TRS_IOC_SQCQ_ALLOC, true },
	[TRS_IOC_NR_SQCQ_FREE]	= { npusim_trs_free, TRS_IOC_SQCQ_FREE, false },
	/* _IOW, but pos is written back, as the real driver does */
	[TRS_IOC_NR_SQCQ_SEND]	= { npusim_trs_send, TRS_IOC_SQCQ_SEND, true },
	[TRS_IOC_NR_SQCQ_RECV]	= { npusim_trs_recv, TRS_IOC_SQCQ_RECV, true },
};

static_assert(_IOC_SIZE(TRS_IOC_SQCQ_ALLOC) <= sizeof(union npusim_trs_arg));
static_assert(_IOC_SIZE(TRS_IOC_SQCQ_FREE) <= sizeof(union npusim_trs_arg));
static_assert(_IOC_SIZE(TRS_IOC_SQCQ_SEND) <= sizeof(union npusim_trs_arg));
static_assert(_IOC_SIZE(TRS_IOC_SQCQ_RECV) <= sizeof(union npusim_trs_arg));

/*
 * The analog of trs_ioctl(), which BPF programs hook by name: dispatch by
 * _IOC_NR through a table holding each command's exact value. Reached
 * only through npusim_manager_ioctl() on a fd bound to TSDRV.
 */
noinline long npusim_trs_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	struct npusim_ctx *ctx = file->private_data;
	union npusim_trs_arg buf;
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != TRS_IOC_MAGIC || nr >= TRS_MAX_CMD)
		return -ENOTTY;
	nr = array_index_nospec(nr, TRS_MAX_CMD);
	return npusim_ioctl_dispatch(&npusim_trs_cmds[nr], &buf, ctx, cmd, arg);
}
