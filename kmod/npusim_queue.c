// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: kernel memory accounting, SQ and CQ objects, their ground truth
 * and the mapped SQ ring.
 *
 * Memory: every allocation made for a fd goes through npusim_zalloc() (or
 * npusim_charge_pages()): GFP_KERNEL_ACCOUNT, so the memory cgroup of the
 * caller pays; charged to the process that opened the fd, capped by
 * npusim_max_proc_kbytes; and counted down by the fd's FAIL_NTH. An object
 * keeps what it charged in its struct npusim_charge and gives it back when
 * it is freed, which can be after its fd is gone (a mapping holds it).
 *
 * Objects are reference counted: their TS's idr holds one reference until
 * FREE or release, every ioctl working on one takes one, and so does every
 * mapping of an SQ's ring, so that a waiter or a mapping never sees freed
 * memory. The engine refers to them only while they are alive (not dead),
 * under ts->lock, so it needs no reference.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/math64.h>
#include <linux/compiler.h>
#include <linux/version.h>
#include <linux/spinlock.h>

#include "npusim.h"

#define CREATE_TRACE_POINTS
#include "npusim_trace.h"

static LIST_HEAD(npusim_accts);
static DEFINE_SPINLOCK(npusim_acct_lock);	/* npusim_accts, ->bytes */
static atomic64_t npusim_kmem = ATOMIC64_INIT(0);
static atomic64_t npusim_fail_hits = ATOMIC64_INIT(0);

u64 npusim_kmem_bytes(void)
{
	return atomic64_read(&npusim_kmem);
}

u64 npusim_fail_nth_hits(void)
{
	return atomic64_read(&npusim_fail_hits);
}

/* The account of process @tgid, shared by all the fds it opens. */
struct npusim_acct *npusim_acct_get(pid_t tgid)
{
	struct npusim_acct *a, *fresh;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	spin_lock(&npusim_acct_lock);
	list_for_each_entry(a, &npusim_accts, node) {
		if (a->tgid == tgid) {
			kref_get(&a->ref);
			spin_unlock(&npusim_acct_lock);
			kfree(fresh);
			return a;
		}
	}
	a = fresh;
	if (a) {
		kref_init(&a->ref);
		a->tgid = tgid;
		list_add(&a->node, &npusim_accts);
	}
	spin_unlock(&npusim_acct_lock);
	return a;
}

static void npusim_acct_release(struct kref *ref)
	__releases(&npusim_acct_lock)
{
	struct npusim_acct *a = container_of(ref, struct npusim_acct, ref);

	list_del(&a->node);
	spin_unlock(&npusim_acct_lock);
	kfree(a);
}

void npusim_acct_put(struct npusim_acct *acct)
{
	if (acct)
		kref_put_lock(&acct->ref, npusim_acct_release,
			      &npusim_acct_lock);
}

/* FAIL_NTH: true for the allocation the countdown reaches. */
static bool npusim_should_fail(struct npusim_ctx *ctx)
{
	int old = atomic_read(&ctx->fail_nth);

	while (old > 0) {
		if (atomic_try_cmpxchg(&ctx->fail_nth, &old, old - 1)) {
			if (old != 1)
				return false;
			atomic64_inc(&npusim_fail_hits);
			return true;
		}
	}
	return false;
}

/* Charge @bytes to the process of @ctx into @ch: 0 or -ENOMEM. */
static int npusim_charge(struct npusim_ctx *ctx, size_t bytes,
			 struct npusim_charge *ch)
{
	struct npusim_acct *a = ctx->acct;
	size_t cap = (size_t)READ_ONCE(npusim_max_proc_kbytes) << 10;

	if (npusim_should_fail(ctx))
		return -ENOMEM;
	spin_lock(&npusim_acct_lock);
	if (a->bytes + bytes > cap || (ch->acct && ch->acct != a)) {
		spin_unlock(&npusim_acct_lock);
		return -ENOMEM;
	}
	a->bytes += bytes;
	if (!ch->acct) {
		kref_get(&a->ref);
		ch->acct = a;
	}
	ch->bytes += bytes;
	spin_unlock(&npusim_acct_lock);
	atomic64_add(bytes, &npusim_kmem);
	return 0;
}

static void npusim_discharge(struct npusim_charge *ch, size_t bytes)
{
	spin_lock(&npusim_acct_lock);
	ch->acct->bytes -= bytes;
	ch->bytes -= bytes;
	spin_unlock(&npusim_acct_lock);
	atomic64_sub(bytes, &npusim_kmem);
}

/* Give back everything @ch still holds. */
void npusim_uncharge(struct npusim_charge *ch)
{
	if (!ch->acct)
		return;
	npusim_discharge(ch, ch->bytes);
	npusim_acct_put(ch->acct);
	ch->acct = NULL;
}

void *npusim_zalloc(struct npusim_ctx *ctx, size_t size,
		    struct npusim_charge *ch)
{
	void *p;

	if (npusim_charge(ctx, size, ch))
		return NULL;
	p = kvzalloc(size, GFP_KERNEL_ACCOUNT);
	if (!p)
		npusim_discharge(ch, size);
	return p;
}

void npusim_free(void *p, size_t size, struct npusim_charge *ch)
{
	if (!p)
		return;
	kvfree(p);
	npusim_discharge(ch, size);
}

u64 npusim_ticks(const struct npusim_config *cfg, u64 ns)
{
	/* 128-bit intermediate: exact for any ns and a 32-bit frequency. */
	return cfg->counter_epoch +
	       mul_u64_u32_div(ns, (u32)cfg->counter_freq_hz, NSEC_PER_SEC);
}

static void npusim_ring_free(struct npusim_sq *sq)
{
	u32 i;

	if (sq->ring)
		vunmap(sq->ring);
	for (i = 0; sq->ring_pages && i < sq->ring_npages; i++)
		if (sq->ring_pages[i])
			__free_page(sq->ring_pages[i]);
}

static void npusim_sq_release(struct kref *ref)
{
	struct npusim_sq *sq = container_of(ref, struct npusim_sq, ref);
	unsigned int i;

	for (i = 0; sq->truth && i < NPUSIM_TRUTH_PAGES; i++)
		kvfree(sq->truth[i]);
	kvfree(sq->truth);
	npusim_ring_free(sq);
	kvfree(sq->ring_pages);
	kvfree(sq->slots);
	npusim_uncharge(&sq->charge);
	kvfree(sq);
}

void npusim_sq_put(struct npusim_sq *sq)
{
	kref_put(&sq->ref, npusim_sq_release);
}

static void npusim_cq_release(struct kref *ref)
{
	struct npusim_cq *cq = container_of(ref, struct npusim_cq, ref);

	kvfree(cq->ring);
	npusim_uncharge(&cq->charge);
	kvfree(cq);
}

void npusim_cq_put(struct npusim_cq *cq)
{
	kref_put(&cq->ref, npusim_cq_release);
}

/* The control page and SQE ring of a mapped SQ, in accounted pages. */
static int npusim_ring_alloc(struct npusim_ctx *ctx, struct npusim_sq *sq)
{
	struct npusim_sq_ctrl *ctrl;
	u32 i, n = NPUSIM_SQ_MMAP_SIZE(sq->depth) >> PAGE_SHIFT;

	sq->ring_pages = npusim_zalloc(ctx, n * sizeof(*sq->ring_pages),
				       &sq->charge);
	if (!sq->ring_pages)
		return -ENOMEM;
	sq->ring_npages = n;
	if (npusim_charge(ctx, (size_t)n << PAGE_SHIFT, &sq->charge))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		sq->ring_pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!sq->ring_pages[i])
			return -ENOMEM;
	}
	sq->ring = vmap(sq->ring_pages, n, VM_MAP, PAGE_KERNEL);
	if (!sq->ring)
		return -ENOMEM;
	ctrl = sq->ring;
	ctrl->depth = sq->depth;
	ctrl->db = NPUSIM_SQ_DB_IDLE;
	return 0;
}

/*
 * A new SQ, not yet in its TS. On failure everything charged so far is
 * freed by the release (kvfree of NULL is a no-op).
 */
struct npusim_sq *npusim_sq_new(struct npusim_ctx *ctx, struct npusim_ts *ts,
				u32 depth, u32 uio)
{
	struct npusim_charge ch = {};
	struct npusim_sq *sq;

	sq = npusim_zalloc(ctx, sizeof(*sq), &ch);
	if (!sq)
		return NULL;
	sq->charge = ch;
	kref_init(&sq->ref);
	sq->ts = ts;
	sq->chan.ts = ts;
	sq->owner = ctx;
	sq->depth = depth;
	sq->uio = uio;
	INIT_LIST_HEAD(&sq->cq_node);
	INIT_LIST_HEAD(&sq->ready_node);
	INIT_LIST_HEAD(&sq->mapped_node);
	mutex_init(&sq->submit_lock);
	init_waitqueue_head(&sq->sq_wait);

	sq->slots = npusim_zalloc(ctx, depth * sizeof(*sq->slots), &sq->charge);
	if (!sq->slots)
		goto err;
	sq->truth = npusim_zalloc(ctx, NPUSIM_TRUTH_PAGES * sizeof(*sq->truth),
				  &sq->charge);
	if (!sq->truth)
		goto err;
	if (uio && npusim_ring_alloc(ctx, sq))
		goto err;
	return sq;

err:
	npusim_sq_put(sq);
	return NULL;
}

struct npusim_cq *npusim_cq_new(struct npusim_ctx *ctx, struct npusim_ts *ts,
				u32 depth, bool logic, u32 esize)
{
	struct npusim_charge ch = {};
	struct npusim_cq *cq;

	cq = npusim_zalloc(ctx, sizeof(*cq), &ch);
	if (!cq)
		return NULL;
	cq->charge = ch;
	kref_init(&cq->ref);
	cq->ts = ts;
	cq->owner = ctx;
	cq->depth = depth;
	cq->logic = logic;
	cq->esize = esize;
	cq->uesize = cq->esize;
	INIT_LIST_HEAD(&cq->sqs);
	mutex_init(&cq->recv_lock);
	init_waitqueue_head(&cq->wait);
	cq->ring = npusim_zalloc(ctx, (size_t)depth * cq->esize, &cq->charge);
	if (!cq->ring) {
		npusim_cq_put(cq);
		return NULL;
	}
	return cq;
}

/*
 * FREE, or release of the owner: cancel everything, make the id reusable,
 * wake the waiters (they see dead) and drop the TS's reference. Caller
 * holds ts->lock.
 */
void npusim_sq_destroy(struct npusim_sq *sq)
{
	struct npusim_ts *ts = sq->ts;

	npusim_engine_cancel(sq);
	npusim_chan_proc_fs_del_chan(&sq->chan);
	idr_remove(&ts->sq_idr, sq->id);
	list_del_init(&sq->cq_node);
	if (sq->stream)
		sq->stream->users--;
	ts->stats.sqs--;
	WRITE_ONCE(sq->dead, true);
	wake_up_all(&sq->sq_wait);
	npusim_sq_put(sq);
}

void npusim_cq_destroy(struct npusim_cq *cq)
{
	struct npusim_ts *ts = cq->ts;

	ts->stats.reports_pending -= cq->count;
	cq->count = 0;
	if (cq->logic) {
		idr_remove(&ts->logic_cq_idr, cq->id);
		cq->stream->logic_cq = NULL;
		cq->stream->users--;
		ts->stats.logic_cqs--;
	} else {
		if (cq->chan.ts)
			npusim_chan_proc_fs_del_chan(&cq->chan);
		idr_remove(&ts->cq_idr, cq->id);
		ts->stats.cqs--;
	}
	WRITE_ONCE(cq->dead, true);
	wake_up_all(&cq->wait);
	npusim_cq_put(cq);
}

/* The SQ @id of @ts if @ctx owns it (NULL: anyone), with a reference. */
struct npusim_sq *npusim_sq_get(struct npusim_ctx *ctx, struct npusim_ts *ts,
				u32 id)
{
	struct npusim_sq *sq;

	mutex_lock(&ts->lock);
	sq = idr_find(&ts->sq_idr, id);
	if (sq && (!ctx || sq->owner == ctx))
		kref_get(&sq->ref);
	else
		sq = NULL;
	mutex_unlock(&ts->lock);
	return sq;
}

struct npusim_cq *npusim_cq_get(struct npusim_ctx *ctx, struct npusim_ts *ts,
				u32 id, bool logic)
{
	struct npusim_cq *cq;

	mutex_lock(&ts->lock);
	cq = idr_find(logic ? &ts->logic_cq_idr : &ts->cq_idr, id);
	if (cq && cq->owner == ctx)
		kref_get(&cq->ref);
	else
		cq = NULL;
	mutex_unlock(&ts->lock);
	return cq;
}

/* The @i-th oldest report of @cq. */
void *npusim_cq_at(struct npusim_cq *cq, u32 i)
{
	return cq->ring + (size_t)((cq->first + i) % cq->depth) * cq->esize;
}

/*
 * Append a logic CQE, as the driver does: a logic CQ of depth D holds
 * D - 1 reports. Caller holds ts->lock.
 */
int npusim_cq_push_logic(struct npusim_ts *ts, struct npusim_cq *cq,
			 const struct trs_logic_cqe *cqe)
{
	if (cq->count >= cq->depth - 1)
		return -EAGAIN;
	memcpy(npusim_cq_at(cq, cq->count), cqe, sizeof(*cqe));
	cq->count++;
	WRITE_ONCE(cq->gen, cq->gen + 1);
	ts->stats.reports++;
	ts->stats.reports_pending++;
	trace_logic_cqe(cq->id, cqe);
	wake_up(&cq->wait);
	return 0;
}

/*
 * The SQ position of the @count-th task: CONFIG SQ_HEAD/SQ_TAIL moves an
 * idle SQ's positions without touching its task counts (the truth's seq).
 */
u32 npusim_sq_pos(const struct npusim_sq *sq, u64 count)
{
	return (do_div(count, sq->depth) + sq->pos_off) % sq->depth;
}

struct npusim_task_truth *npusim_truth(struct npusim_sq *sq, u64 seq)
{
	u32 i = seq % NPUSIM_TRUTH_DEPTH;
	struct npusim_task_truth *page = sq->truth[i / NPUSIM_TRUTH_PER_PAGE];

	return page ? &page[i % NPUSIM_TRUTH_PER_PAGE] : NULL;
}

/*
 * Make sure the truth pages of tasks seq .. seq + n - 1 exist. Only the
 * single submitter of an SQ (SEND under submit_lock, or the engine for a
 * mapped SQ) installs pages, and readers only look at submitted tasks,
 * whose pages are installed, so the store needs no lock.
 */
int npusim_truth_prepare(struct npusim_ctx *ctx, struct npusim_sq *sq,
			 u64 seq, u32 n)
{
	struct npusim_task_truth *page;
	u64 s;
	u32 i;

	for (s = seq; s < seq + n; s++) {
		i = (s % NPUSIM_TRUTH_DEPTH) / NPUSIM_TRUTH_PER_PAGE;
		if (sq->truth[i])
			continue;
		page = npusim_zalloc(ctx, PAGE_SIZE, &sq->charge);
		if (!page)
			return -ENOMEM;
		WRITE_ONCE(sq->truth[i], page);
	}
	return 0;
}

/* Queue one SQE at the tail. Caller holds ts->lock, has room and truth. */
void npusim_sq_push(struct npusim_sq *sq, const void *sqe, u64 now, bool traced)
{
	struct npusim_ts *ts = sq->ts;
	struct npusim_slot *slot = &sq->slots[sq->tail % sq->depth];
	struct npusim_task_truth *t = npusim_truth(sq, sq->tail);
	u32 stream = npusim_sqe_stream_raw(sq, sqe);

	memcpy(slot->sqe, sqe, TRS_SQE_SIZE);
	/*
	 * STARS v2: the SQEs a task's first one counts in its sqeLength are
	 * its own (a CCU task's second is raw arguments): part of it, never
	 * read as a header. v1 tasks' SQEs all have headers.
	 */
	slot->cont = ts->cfg.stars == 2 && sq->cont_left;
	if (slot->cont) {
		sq->cont_left--;
		slot->bad = 0;
	} else {
		slot->bad = npusim_sqe_valid(sqe) ? 0 : NPUSIM_ERR_BAD_SQE;
		if (ts->cfg.stars == 2)
			sq->cont_left = npusim_sqe_v2_len(sqe);
	}

	memset(t, 0, sizeof(*t));
	t->seq = sq->tail;
	t->sq_id = sq->id;
	t->pos = npusim_sq_pos(sq, sq->tail);
	t->stream_id = ts->cfg.stars == 2 ? stream :
					    stream & TRS_CQE_STREAM_ID_MASK;
	t->task_id = npusim_sqe_task_id(ts->cfg.stars, sqe);
	t->sqe_type = slot->sqe[0] & TRS_SQE_TYPE_MASK;
	t->state = NPUSIM_TASK_QUEUED;
	t->submit_ns = now;
	if (traced) {
		t->traced = 1;
		npusim_chan_trace_sqe(sq->uio ? "uio_t" : "send", &sq->chan,
				      sq, slot->sqe);
	}

	WRITE_ONCE(sq->tail, sq->tail + 1);
	ts->stats.tasks_queued++;
	ts->stats.submitted++;
}

static void npusim_vm_open(struct vm_area_struct *vma)
{
	struct npusim_sq *sq = vma->vm_private_data;

	kref_get(&sq->ref);
}

static void npusim_vm_close(struct vm_area_struct *vma)
{
	npusim_sq_put(vma->vm_private_data);
}

static const struct vm_operations_struct npusim_vm_ops = {
	.open	= npusim_vm_open,
	.close	= npusim_vm_close,
};

/* mmap() at NPUSIM_SQ_MMAP_OFFSET(ts, sq) of a mapped SQ of this fd. */
int npusim_queue_mmap(struct npusim_ctx *ctx, struct vm_area_struct *vma)
{
	u64 idx = ((u64)vma->vm_pgoff << PAGE_SHIFT) >> 24;
	unsigned long size = vma->vm_end - vma->vm_start;
	struct npusim_ts *ts;
	struct npusim_sq *sq;
	u32 i;
	int ret;

	if (!(vma->vm_flags & VM_SHARED) ||
	    (((u64)vma->vm_pgoff << PAGE_SHIFT) & (BIT_ULL(24) - 1)) || !idx ||
	    idx > (u64)npusim_ts_per_device * NPUSIM_MAX_SQS)
		return -EINVAL;
	idx--;
	ts = npusim_ctx_ts(ctx, idx / NPUSIM_MAX_SQS);
	if (!ts)
		return -EINVAL;
	sq = npusim_sq_get(ctx, ts, idx % NPUSIM_MAX_SQS);
	if (!sq)
		return -EINVAL;
	ret = -EINVAL;
	if (!sq->ring || size > ((size_t)sq->ring_npages << PAGE_SHIFT))
		goto err_put;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_MIXEDMAP);
#else
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP | VM_MIXEDMAP;
#endif
	for (i = 0; i < size >> PAGE_SHIFT; i++) {
		ret = vm_insert_page(vma, vma->vm_start + ((unsigned long)i << PAGE_SHIFT),
				     sq->ring_pages[i]);
		if (ret)
			goto err_put;
	}
	/* The mapping keeps the reference taken by the lookup. */
	vma->vm_private_data = sq;
	vma->vm_ops = &npusim_vm_ops;
	return 0;

err_put:
	npusim_sq_put(sq);
	return ret;
}
