// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: SQ/CQ objects, their ground truth and the mapped SQ ring.
 *
 * A queue is reference counted: its owner's list holds one reference until
 * FREE or close, every ioctl working on it takes one, and so does every
 * mapping of its ring, so that a waiter or a mapping never sees freed
 * memory. The engine refers to it only while it is alive (not dead), under
 * ts->lock, so it needs no reference.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/math64.h>
#include <linux/compiler.h>

#include "npusim.h"

#define CREATE_TRACE_POINTS
#include "npusim_trace.h"

u64 npusim_ticks(const struct npusim_config *cfg, u64 ns)
{
	/* 128-bit intermediate: exact for any ns and a 32-bit frequency. */
	return cfg->counter_epoch +
	       mul_u64_u32_div(ns, (u32)cfg->counter_freq_hz, NSEC_PER_SEC);
}

static void npusim_queue_release(struct kref *ref)
{
	struct npusim_queue *q = container_of(ref, struct npusim_queue, ref);
	unsigned int i;

	for (i = 0; i < NPUSIM_TRUTH_PAGES; i++)
		free_page((unsigned long)q->truth[i]);
	kvfree(q->truth);
	vfree(q->ring);
	kvfree(q->cqes);
	kvfree(q->slots);
	kfree(q);
}

void npusim_queue_put(struct npusim_queue *q)
{
	kref_put(&q->ref, npusim_queue_release);
}

static struct npusim_queue *npusim_queue_new(struct npusim_ts *ts, bool mapped,
					     u32 depth, u32 cq_depth)
{
	struct npusim_sq_ctrl *ctrl;
	struct npusim_queue *q;

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return NULL;
	kref_init(&q->ref);
	q->ts = ts;
	q->depth = depth;
	q->cq_depth = cq_depth;
	q->mapped = mapped;
	INIT_LIST_HEAD(&q->ctx_node);
	INIT_LIST_HEAD(&q->ready_node);
	INIT_LIST_HEAD(&q->mapped_node);
	mutex_init(&q->submit_lock);
	mutex_init(&q->recv_lock);
	init_waitqueue_head(&q->sq_wait);
	init_waitqueue_head(&q->cq_wait);

	q->slots = kvcalloc(depth, sizeof(*q->slots), GFP_KERNEL);
	if (!q->slots)
		goto err_slots;
	q->cqes = kvcalloc(cq_depth, sizeof(*q->cqes), GFP_KERNEL);
	if (!q->cqes)
		goto err_cqes;
	q->truth = kvcalloc(NPUSIM_TRUTH_PAGES, sizeof(*q->truth), GFP_KERNEL);
	if (!q->truth)
		goto err_truth;
	if (mapped) {
		q->ring_size = PAGE_ALIGN(NPUSIM_SQ_MMAP_SQE_OFF +
					  (size_t)depth * TRS_SQE_SIZE);
		q->ring = vmalloc_user(q->ring_size);
		if (!q->ring)
			goto err_ring;
		ctrl = q->ring;
		ctrl->depth = depth;
	}
	return q;

err_ring:
	kvfree(q->truth);
err_truth:
	kvfree(q->cqes);
err_cqes:
	kvfree(q->slots);
err_slots:
	kfree(q);
	return NULL;
}

/* Caller holds ctx->lock and has checked that ctx is bound. */
int npusim_queue_alloc(struct npusim_ctx *ctx, bool mapped, u32 depth,
		       u32 cq_depth, struct npusim_queue **out)
{
	struct npusim_ts *ts = ctx->ts;
	struct npusim_queue *q;
	int sq, cq, ret;

	q = npusim_queue_new(ts, mapped, depth, cq_depth);
	if (!q)
		return -ENOMEM;
	q->owner = ctx;

	mutex_lock(&ts->lock);
	sq = idr_alloc(&ts->sq_idr, q, 0, NPUSIM_MAX_SQS, GFP_KERNEL);
	if (sq < 0) {
		ret = sq;
		goto err_sq;
	}
	cq = idr_alloc(&ts->cq_idr, q, 0, NPUSIM_MAX_SQS, GFP_KERNEL);
	if (cq < 0) {
		ret = cq;
		goto err_cq;
	}
	q->sq_id = sq;
	q->cq_id = cq;
	ts->stats.sqs++;
	ts->stats.cqs++;
	if (mapped)
		list_add_tail(&q->mapped_node, &ts->mapped);
	mutex_unlock(&ts->lock);

	list_add_tail(&q->ctx_node, &ctx->queues);
	if (mapped)
		npusim_engine_kick(ts);	/* start polling */
	*out = q;
	return 0;

err_cq:
	idr_remove(&ts->sq_idr, sq);
err_sq:
	mutex_unlock(&ts->lock);
	npusim_queue_put(q);
	return ret;
}

/*
 * FREE, or close of the owner: cancel everything, make the ids reusable,
 * wake the waiters (they see dead) and drop the owner's reference. Caller
 * holds ctx->lock.
 */
void npusim_queue_destroy(struct npusim_queue *q)
{
	struct npusim_ts *ts = q->ts;

	list_del_init(&q->ctx_node);
	mutex_lock(&ts->lock);
	npusim_engine_cancel(q);
	ts->stats.reports_pending -= q->cq_count;
	q->cq_count = 0;
	idr_remove(&ts->sq_idr, q->sq_id);
	idr_remove(&ts->cq_idr, q->cq_id);
	ts->stats.sqs--;
	ts->stats.cqs--;
	WRITE_ONCE(q->dead, true);
	mutex_unlock(&ts->lock);

	wake_up_all(&q->sq_wait);
	wake_up_all(&q->cq_wait);
	npusim_queue_put(q);
}

static struct npusim_queue *npusim_queue_get(struct npusim_ctx *ctx,
					     struct idr *idr, u32 id)
{
	struct npusim_ts *ts = ctx->ts;
	struct npusim_queue *q;

	mutex_lock(&ts->lock);
	q = idr_find(idr, id);
	if (q && q->owner == ctx)
		kref_get(&q->ref);
	else
		q = NULL;
	mutex_unlock(&ts->lock);
	return q;
}

struct npusim_queue *npusim_sq_get(struct npusim_ctx *ctx, u32 sq_id)
{
	return npusim_queue_get(ctx, &ctx->ts->sq_idr, sq_id);
}

struct npusim_queue *npusim_cq_get(struct npusim_ctx *ctx, u32 cq_id)
{
	return npusim_queue_get(ctx, &ctx->ts->cq_idr, cq_id);
}

struct npusim_task_truth *npusim_truth(struct npusim_queue *q, u64 seq)
{
	u32 i = seq % NPUSIM_TRUTH_DEPTH;
	struct npusim_task_truth *page = q->truth[i / NPUSIM_TRUTH_PER_PAGE];

	return page ? &page[i % NPUSIM_TRUTH_PER_PAGE] : NULL;
}

/*
 * Make sure the truth pages of tasks seq .. seq + n - 1 exist. Only the
 * single submitter of an SQ (SEND under submit_lock, or the engine for a
 * mapped SQ) installs pages, and readers only look at submitted tasks,
 * whose pages are installed, so the store needs no lock.
 */
int npusim_truth_prepare(struct npusim_queue *q, u64 seq, u32 n, gfp_t gfp)
{
	unsigned long page;
	u64 s;
	u32 i;

	for (s = seq; s < seq + n; s++) {
		i = (s % NPUSIM_TRUTH_DEPTH) / NPUSIM_TRUTH_PER_PAGE;
		if (q->truth[i])
			continue;
		page = get_zeroed_page(gfp);
		if (!page)
			return -ENOMEM;
		WRITE_ONCE(q->truth[i], (struct npusim_task_truth *)page);
	}
	return 0;
}

/* Queue one SQE at the tail. Caller holds ts->lock, has room and truth. */
void npusim_queue_push(struct npusim_queue *q, const struct trs_sqe *sqe,
		       u64 now, u32 bad)
{
	struct npusim_ts *ts = q->ts;
	struct npusim_slot *slot = &q->slots[q->tail % q->depth];
	struct npusim_task_truth *t = npusim_truth(q, q->tail);

	slot->sqe = *sqe;
	slot->enque_ticks = npusim_ticks(&ts->cfg, now);
	slot->bad = bad;

	memset(t, 0, sizeof(*t));
	t->seq = q->tail;
	t->sq_id = q->sq_id;
	t->pos = q->tail % q->depth;
	t->stream_id = sqe->rt_stream_id;
	t->task_id = sqe->task_id;
	t->sqe_type = sqe->type & TRS_SQE_TYPE_MASK;
	t->state = NPUSIM_TASK_QUEUED;
	t->submit_ns = now;

	WRITE_ONCE(q->tail, q->tail + 1);
	ts->stats.tasks_queued++;
	ts->stats.submitted++;
}

/*
 * The analog of the real driver's trs_logic_cq_enque(): every completion
 * report passes through here as it is written to its CQ, which makes this
 * the function a BPF program hooks (fentry or kprobe) to see completions.
 * It must stay a real, global, out-of-line call with this prototype: it
 * lives in a file that never calls it, so it is not inlined or cloned.
 * Called with ts->lock held; the engine reserved the CQ slot beforehand.
 */
noinline __used void npusim_logic_cq_enque(struct npusim_ts *ts,
					   u32 logic_cq_id, u32 stream_id,
					   u32 task_id, struct trs_logic_cqe *cqe)
{
	struct npusim_queue *q = idr_find(&ts->cq_idr, logic_cq_id);

	barrier();
	if (!q || q->cq_count >= q->cq_depth)
		return;
	q->cqes[(q->cq_first + q->cq_count) % q->cq_depth] = *cqe;
	q->cq_count++;
	WRITE_ONCE(q->cq_gen, q->cq_gen + 1);
	ts->stats.reports++;
	ts->stats.reports_pending++;
	trace_logic_cqe(logic_cq_id, cqe);
	wake_up(&q->cq_wait);
}

static void npusim_vm_open(struct vm_area_struct *vma)
{
	struct npusim_queue *q = vma->vm_private_data;

	kref_get(&q->ref);
}

static void npusim_vm_close(struct vm_area_struct *vma)
{
	npusim_queue_put(vma->vm_private_data);
}

static const struct vm_operations_struct npusim_vm_ops = {
	.open	= npusim_vm_open,
	.close	= npusim_vm_close,
};

int npusim_queue_mmap(struct npusim_ctx *ctx, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	unsigned long size = vma->vm_end - vma->vm_start;
	struct npusim_queue *q;
	int ret;

	if (!(vma->vm_flags & VM_SHARED) || (off & (BIT_ULL(24) - 1)) ||
	    !(off >> 24) || (off >> 24) > NPUSIM_MAX_SQS)
		return -EINVAL;
	q = npusim_sq_get(ctx, (off >> 24) - 1);
	if (!q)
		return -EINVAL;
	if (!q->mapped || size > q->ring_size) {
		ret = -EINVAL;
		goto err_put;
	}
	ret = remap_vmalloc_range(vma, q->ring, 0);
	if (ret)
		goto err_put;
	/* The mapping keeps the reference taken by the lookup. */
	vma->vm_private_data = q;
	vma->vm_ops = &npusim_vm_ops;
	return 0;

err_put:
	npusim_queue_put(q);
	return ret;
}
