// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: the TRS ioctls (magic 'X'), the analog of the real driver's
 * trs_ioctl() and its handlers (trs_fops.c, trs_hw_sqcq.c, trs_logic_cq.c,
 * trs_sqcq_map.c). Semantics: include/uapi/ascend_trs.h, section 4.
 */
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/nospec.h>
#include <linux/ktime.h>
#include <linux/mman.h>
#include <linux/pagemap.h>

#include "npusim.h"

#define NPUSIM_EXT_INFO_MAX	256

union npusim_trs_arg {
	struct trs_res_id_para		res;
	struct trs_sqcq_alloc_info	alloc;
	struct trs_sqcq_free_info	free;
	struct trs_sqcq_query_info	query;
	struct trs_sqcq_config_info	config;
	struct trs_task_send_info	send;
	struct trs_report_recv_info	recv;
};

/* The TS @ts_id of the fd's device, or NULL. */
struct npusim_ts *npusim_ctx_ts(struct npusim_ctx *ctx, u32 ts_id)
{
	struct npusim_dev *dev = READ_ONCE(ctx->dev);

	if (!dev || READ_ONCE(ctx->module) != NPUSIM_MOD_TSDRV ||
	    ts_id >= npusim_ts_per_device)
		return NULL;
	return &dev->ts[array_index_nospec(ts_id, npusim_ts_per_device)];
}

/* Checks every SQCQ command starts with: type, then tsId. */
static struct npusim_ts *npusim_sqcq_ts(struct npusim_ctx *ctx, u32 type,
					u32 ts_id)
{
	if (type >= TRS_SQCQ_TYPE_MAX)
		return NULL;
	return npusim_ctx_ts(ctx, ts_id);
}

/*
 * Wait on @wq until @cond(@obj, @arg), for @timeout ms from @deadline's
 * start (< 0: forever). 0, -ETIMEDOUT, or -EINTR/-ERESTARTSYS.
 */
static int npusim_wait(void *obj, wait_queue_head_t *wq,
		       bool (*cond)(void *obj, u64 arg), u64 arg,
		       s32 timeout, ktime_t deadline)
{
	ktime_t left;
	int ret;

	if (timeout < 0)
		return wait_event_interruptible(*wq, cond(obj, arg));
	left = ktime_sub(deadline, ktime_get());
	if (left <= 0)
		return -ETIMEDOUT;
	ret = wait_event_interruptible_hrtimeout(*wq, cond(obj, arg), left);
	if (ret == -ETIME)
		return -ETIMEDOUT;
	if (ret == -ERESTARTSYS)
		return -EINTR;
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Resource ids                                                           */
/* ---------------------------------------------------------------------- */

static int npusim_res_id_alloc(struct npusim_ctx *ctx, void *arg,
			void __user *uarg)
{
	struct trs_res_id_para *p = arg;
	struct npusim_charge ch = {};
	struct npusim_res *res;
	struct npusim_ts *ts;
	int id;

	if (p->res_type < 0 || p->res_type >= TRS_RES_HW_SQ)
		return -EINVAL;
	ts = npusim_ctx_ts(ctx, p->tsid);
	if (!ts)
		return -EINVAL;
	res = npusim_zalloc(ctx, sizeof(*res), &ch);
	if (!res)
		return -ENOMEM;
	res->charge = ch;
	res->owner = ctx;
	res->type = p->res_type;
	mutex_lock(&ts->lock);
	id = idr_alloc(&ts->res_idr[res->type], res, 0, NPUSIM_MAX_RES_IDS,
		       GFP_KERNEL_ACCOUNT);
	if (id >= 0) {
		res->id = id;
		ts->stats.res_ids++;
		npusim_sync_alloc(ts, res->type, id, true);
	}
	mutex_unlock(&ts->lock);
	if (id < 0) {
		npusim_free(res, sizeof(*res), &ch);
		npusim_uncharge(&ch);
		return id;
	}
	p->id = id;
	return 0;
}

/* Caller holds ts->lock; @res is not used by any queue. */
static void npusim_res_destroy(struct npusim_ts *ts, struct npusim_res *res)
{
	struct npusim_charge ch = res->charge;

	idr_remove(&ts->res_idr[res->type], res->id);
	npusim_sync_alloc(ts, res->type, res->id, false);
	ts->stats.res_ids--;
	npusim_free(res, sizeof(*res), &ch);
	npusim_uncharge(&ch);
}

/* The resource @type @id of @ts if @ctx owns it. Caller holds ts->lock. */
static struct npusim_res *npusim_res_find(struct npusim_ctx *ctx,
					  struct npusim_ts *ts, u32 type,
					  u32 id)
{
	struct npusim_res *res = idr_find(&ts->res_idr[type], id);

	return res && res->owner == ctx ? res : NULL;
}

static int npusim_res_id_free(struct npusim_ctx *ctx, void *arg,
			void __user *uarg)
{
	struct trs_res_id_para *p = arg;
	struct npusim_res *res;
	struct npusim_ts *ts;
	int ret = 0;

	if (p->res_type < 0 || p->res_type >= TRS_RES_HW_SQ)
		return -EINVAL;
	ts = npusim_ctx_ts(ctx, p->tsid);
	if (!ts)
		return -EINVAL;
	mutex_lock(&ts->lock);
	res = npusim_res_find(ctx, ts, p->res_type, p->id);
	if (!res)
		ret = -EINVAL;
	else if (res->users)
		ret = -EBUSY;
	else
		npusim_res_destroy(ts, res);
	mutex_unlock(&ts->lock);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* ALLOC and FREE                                                         */
/* ---------------------------------------------------------------------- */

/*
 * Map a uio SQ into the caller, as trs_sq_remap() fills trs_uio_info. A
 * failed mapping leaves the SQ in kernel mode, as the driver does.
 */
static void npusim_sq_map(struct npusim_ctx *ctx, struct npusim_sq *sq,
			  struct trs_uio_info *uio)
{
	struct npusim_ts *ts = sq->ts;
	unsigned long addr;

	addr = vm_mmap(ctx->file, 0, NPUSIM_SQ_MMAP_SIZE(sq->depth),
		       PROT_READ | PROT_WRITE, MAP_SHARED,
		       NPUSIM_SQ_MMAP_OFFSET(ts->ts_id, sq->id));
	if (IS_ERR_VALUE(addr)) {
		mutex_lock(&ts->lock);
		list_del_init(&sq->mapped_node);
		sq->uio = NPUSIM_UIO_KIO;
		sq->soft = false;
		mutex_unlock(&ts->lock);
		return;
	}
	uio->sq_que_addr = addr + NPUSIM_SQ_MMAP_SQE_OFF;
	uio->sq_ctrl_addr[TRS_UIO_HEAD] =
		addr + offsetof(struct npusim_sq_ctrl, head);
	uio->sq_ctrl_addr[TRS_UIO_TAIL] =
		addr + offsetof(struct npusim_sq_ctrl, tail);
	uio->sq_ctrl_addr[TRS_UIO_DB] = uio->sq_ctrl_addr[TRS_UIO_TAIL];
	uio->sq_ctrl_addr[TRS_UIO_SHR_INFO] = addr + NPUSIM_SQ_MMAP_SHR_OFF;
	/*
	 * A 950 answers no tail address (trs_chan_stars_v2_ops_query_sqcq),
	 * so trs_sq_remap() leaves the tail at 0: the library writes and reads
	 * the tail through the doorbell, the tail register.
	 */
	if (sq->chip && sq->uio == NPUSIM_UIO_D)
		uio->sq_ctrl_addr[TRS_UIO_TAIL] = 0;
	if (sq->soft) {
		/* trs_sq_reg_remap(): a trigger doorbell and the registers */
		uio->sq_ctrl_addr[TRS_UIO_DB] =
			addr + offsetof(struct npusim_sq_ctrl, db);
		uio->sq_ctrl_addr[TRS_UIO_HEAD_REG] =
			addr + offsetof(struct npusim_sq_ctrl, head_reg);
		uio->sq_ctrl_addr[TRS_UIO_TAIL_REG] =
			addr + offsetof(struct npusim_sq_ctrl, tail_reg);
	}
	uio->sq_mem_local_flag = 1;
	uio->uio_flag = 1;
	uio->soft_que_flag = sq->uio == NPUSIM_UIO_T ? TRS_SOFT_QUE_SOFT :
						       TRS_SOFT_QUE_NONE;
}

/*
 * The mode of a NORMAL SQ (trs_sq_remap() and the chip's send mode): kernel
 * mode unless the ALLOC asked for a mapping; then, by the chip, a soft
 * queue (uio_t) on STARS v1, the hardware queue (uio_d) on STARS v2 unless
 * its send mode is HIGH_SECURITY; or what config.uio_mode says.
 */
static u32 npusim_pick_mode(const struct npusim_config *cfg, u64 sq_que_addr)
{
	if (!sq_que_addr)
		return NPUSIM_UIO_KIO;
	if (cfg->sq_mode != NPUSIM_SQ_MODE_CHIP)
		return cfg->uio_mode;
	if (cfg->stars != 2)
		return NPUSIM_UIO_T;
	if (cfg->send_mode == NPUSIM_SEND_HIGH_SECURITY)
		return NPUSIM_UIO_KIO;
	return NPUSIM_UIO_D;
}

/* ext_info is read, as the driver does, and otherwise ignored. */
static int npusim_ext_info_check(struct trs_sqcq_alloc_info *a)
{
	u8 buf[NPUSIM_EXT_INFO_MAX];

	if (!a->ext_info)
		return 0;
	if (!a->ext_info_len || a->ext_info_len > sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, u64_to_user_ptr(a->ext_info), a->ext_info_len))
		return -EFAULT;
	return 0;
}

/*
 * ALLOC flags of a NORMAL SQ, as trs_hw_sqcq.c treats those the runtime
 * passes. Honoured: REUSE_CQ, SPECIFIED_SQ_ID and SPECIFIED_CQ_ID (that
 * id or -ENOSPC), NO_SQ_MEM (no queue memory: nothing to map, kernel mode).
 * Accepted and ignored: what chooses an id pool, memory or an IRQ npusim
 * has not (RANGE_ID: a VF's ids; RTS_RSV_SQCQ_ID, TASK_SINK_SQ,
 * PRE_ASYNC_SQ, REMOTE_ID of a device-side process, NO_CQ_MEM). The other
 * bits (REUSE_SQ, ONLY_SQCQ_ID, AGENT_ID, SPECIFIED_SQ_MEM, ...) are
 * never passed by the runtime on a NORMAL ALLOC and npusim refuses them
 * with -EINVAL, as the driver does REUSE_SQ without REUSE_CQ.
 */
#define NPUSIM_NORMAL_FLAGS_IGNORED					\
	(TSDRV_FLAG_RANGE_ID | TSDRV_FLAG_RTS_RSV_SQCQ_ID |		\
	 TSDRV_FLAG_TASK_SINK_SQ | TSDRV_FLAG_PRE_ASYNC_SQ |		\
	 TSDRV_FLAG_REMOTE_ID | TSDRV_FLAG_NO_CQ_MEM)
#define NPUSIM_NORMAL_FLAGS						\
	(NPUSIM_NORMAL_FLAGS_IGNORED | TSDRV_FLAG_REUSE_CQ |		\
	 TSDRV_FLAG_SPECIFIED_SQ_ID | TSDRV_FLAG_SPECIFIED_CQ_ID |	\
	 TSDRV_FLAG_NO_SQ_MEM)

/* A queue id: the next free one, or exactly @id (trs_id_alloc_ex()). */
static int npusim_id_alloc(struct idr *idr, void *p, bool specified, u32 id,
			   u32 max)
{
	if (!specified)
		return idr_alloc(idr, p, 0, max, GFP_KERNEL_ACCOUNT);
	if (id >= max)
		return -ENOSPC;
	return idr_alloc(idr, p, id, id + 1, GFP_KERNEL_ACCOUNT);
}

/*
 * A channel of @ts that is no SQ's, made as the driver makes it (in the
 * ALLOC's thread): no SQE ever passes it. Caller holds ts->lock.
 */
static void npusim_chan_add_other(struct npusim_ts *ts, struct npusim_chan *c)
{
	c->ts = ts;
	c->sq_id = U32_MAX;
	npusim_chan_proc_fs_add_chan(c);
}

static int npusim_alloc_normal(struct npusim_ctx *ctx, struct npusim_ts *ts,
			       struct trs_sqcq_alloc_info *a,
			       struct trs_uio_info *uio)
{
	bool reuse_cq = a->flag & TSDRV_FLAG_REUSE_CQ;
	bool spec_sq = a->flag & TSDRV_FLAG_SPECIFIED_SQ_ID;
	bool spec_cq = a->flag & TSDRV_FLAG_SPECIFIED_CQ_ID;
	struct npusim_cq *cq = NULL, *new_cq = NULL;
	struct npusim_res *stream = NULL;
	struct npusim_sq *sq;
	u32 uio_mode;
	bool chip;
	int ret, id;

	if (a->sqeSize != TRS_SQE_SIZE ||
	    (a->cqeSize != TRS_HW_CQE_SIZE && a->cqeSize != TRS_CQE_SIZE) ||
	    !a->sqeDepth || a->sqeDepth > TRS_SQ_MAX_DEPTH ||
	    !a->cqeDepth || a->cqeDepth > TRS_SQ_MAX_DEPTH ||
	    (a->flag & ~NPUSIM_NORMAL_FLAGS) ||
	    (reuse_cq && (spec_cq || ts->cfg.sqcq_pair)))
		return -EINVAL;
	ret = npusim_ext_info_check(a);
	if (ret)
		return ret;

	/* kernel mode unless npusim_sq_map() says otherwise */
	uio->sq_mem_local_flag = 0;
	uio->soft_que_flag = TRS_SOFT_QUE_NONE;
	uio->uio_flag = 0;
	mutex_lock(&ts->lock);
	uio_mode = npusim_pick_mode(&ts->cfg, a->flag & TSDRV_FLAG_NO_SQ_MEM ?
					      0 : uio->sq_que_addr);
	chip = ts->cfg.sq_mode == NPUSIM_SQ_MODE_CHIP;
	mutex_unlock(&ts->lock);
	sq = npusim_sq_new(ctx, ts, a->sqeDepth, uio_mode);
	if (!sq)
		return -ENOMEM;
	sq->chip = chip;
	sq->soft = chip && uio_mode == NPUSIM_UIO_T;
	if (!reuse_cq) {
		/*
		 * A slot of cqeSize: the runtime asks 16 on STARS v1 and 32
		 * on v2, whose CQE is 20 bytes (trs_stars_v2_cq.h; the last
		 * 4 are UB DMA status, zero for npusim's tasks).
		 */
		new_cq = npusim_cq_new(ctx, ts, a->cqeDepth, false,
				       a->cqeSize);
		if (!new_cq) {
			ret = -ENOMEM;
			goto err_sq;
		}
	}

	mutex_lock(&ts->lock);
	ret = -EINVAL;
	if (a->info[0] != TRS_STREAM_ID_NONE) {
		stream = npusim_res_find(ctx, ts, TRS_RES_STREAM, a->info[0]);
		if (!stream)
			goto err_unlock;
	}
	cq = new_cq;
	if (reuse_cq) {
		cq = idr_find(&ts->cq_idr, a->cqId);
		if (!cq || cq->owner != ctx)
			goto err_unlock;
	}
	id = npusim_id_alloc(&ts->sq_idr, sq, spec_sq, a->sqId, NPUSIM_MAX_SQS);
	if (id < 0) {
		ret = id;
		goto err_unlock;
	}
	sq->id = id;
	if (new_cq) {
		id = npusim_id_alloc(&ts->cq_idr, new_cq, spec_cq, a->cqId,
				     NPUSIM_MAX_SQS);
		if (id < 0) {
			ret = id;
			idr_remove(&ts->sq_idr, sq->id);
			goto err_unlock;
		}
		new_cq->id = id;
		ts->stats.cqs++;
	}
	sq->cq = cq;
	list_add_tail(&sq->cq_node, &cq->sqs);
	sq->stream = stream;
	if (stream)
		stream->users++;
	if (sq->uio)
		list_add_tail(&sq->mapped_node, &ts->mapped);
	/* As the driver's channel: made in the ALLOC's thread, with its id. */
	sq->chan.sq_id = sq->id;
	sq->flag = a->flag;
	npusim_chan_proc_fs_add_chan(&sq->chan);
	/*
	 * Pre-STARS, an SQ and its CQ are channels of their own, the SQ's
	 * made first (trs_hw_sqcq_alloc_non_pair()).
	 */
	if (new_cq && !ts->cfg.sqcq_pair)
		npusim_chan_add_other(ts, &new_cq->chan);
	ts->stats.sqs++;
	a->sqId = sq->id;
	a->cqId = cq->id;
	mutex_unlock(&ts->lock);

	if (sq->uio) {
		npusim_sq_map(ctx, sq, uio);
		npusim_engine_kick(ts);	/* start polling */
	}
	return 0;

err_unlock:
	mutex_unlock(&ts->lock);
	if (new_cq)
		npusim_cq_put(new_cq);
err_sq:
	npusim_sq_put(sq);
	return ret;
}

static int npusim_alloc_logic(struct npusim_ctx *ctx, struct npusim_ts *ts,
			      struct trs_sqcq_alloc_info *a)
{
	struct npusim_res *stream;
	struct npusim_cq *cq;
	int ret, id;

	/*
	 * trs_logic_cq.c checks only 0 < cqeSize <= 32 and 0 < cqeDepth <=
	 * max: control streams ask for 16-byte reports. A report is kept
	 * whole and RECV copies its first cqeSize bytes.
	 */
	if (!a->cqeSize || a->cqeSize > TRS_CQE_SIZE || !a->cqeDepth ||
	    a->cqeDepth > NPUSIM_LOGIC_CQ_MAX_DEPTH)
		return -EINVAL;
	/*
	 * Of the flags, trs_logic_cq_alloc() looks only at SPECIFIED_CQ_ID
	 * (that id or -ENOSPC) and THREAD_BIND_IRQ, which it clears in the
	 * copy back when it binds no IRQ, as npusim never does.
	 */
	a->flag &= ~TSDRV_FLAG_THREAD_BIND_IRQ;
	cq = npusim_cq_new(ctx, ts, a->cqeDepth, true, TRS_CQE_SIZE);
	if (!cq)
		return -ENOMEM;
	cq->uesize = a->cqeSize;
	mutex_lock(&ts->lock);
	ret = -EINVAL;
	stream = npusim_res_find(ctx, ts, TRS_RES_STREAM, a->info[0]);
	if (!stream)
		goto err_unlock;
	ret = -EBUSY;
	if (stream->logic_cq)
		goto err_unlock;
	id = npusim_id_alloc(&ts->logic_cq_idr, cq,
			     a->flag & TSDRV_FLAG_SPECIFIED_CQ_ID, a->cqId,
			     NPUSIM_MAX_LOGIC_CQS);
	if (id < 0) {
		ret = id;
		goto err_unlock;
	}
	cq->id = id;
	cq->stream = stream;
	stream->logic_cq = cq;
	stream->users++;
	ts->stats.logic_cqs++;
	/*
	 * Pre-STARS, the first logic CQ of a TS makes the channel of the
	 * physical CQ all its logic CQs' reports arrive on, for the TS's life
	 * (trs_logic_cq_alloc()): a channel made in a LOGIC ALLOC.
	 */
	if (!ts->cfg.sqcq_pair && !ts->logic_phy_chan.ts)
		npusim_chan_add_other(ts, &ts->logic_phy_chan);
	a->cqId = id;
	mutex_unlock(&ts->lock);
	return 0;

err_unlock:
	mutex_unlock(&ts->lock);
	npusim_cq_put(cq);
	return ret;
}

/*
 * trs_uio_info is read before anything else and written back with the
 * argument, as ioctl_trs_sqcq_alloc() does.
 */
static int npusim_trs_alloc(struct npusim_ctx *ctx, void *arg,
			void __user *uarg)
{
	struct trs_sqcq_alloc_info *a = arg;
	void __user *uuio = u64_to_user_ptr(a->uio_info);
	struct trs_uio_info uio;
	struct npusim_ts *ts;
	int ret;

	/* written back as read: the copy back after ALLOC cannot fail */
	if (copy_from_user(&uio, uuio, sizeof(uio)) ||
	    copy_to_user(uuio, &uio, sizeof(uio)))
		return -EFAULT;
	ts = npusim_sqcq_ts(ctx, a->type, a->tsId);
	if (!ts)
		return -EINVAL;
	mutex_lock(&ctx->lock);
	switch (a->type) {
	case TRS_SQCQ_TYPE_NORMAL:
		ret = npusim_alloc_normal(ctx, ts, a, &uio);
		break;
	case TRS_SQCQ_TYPE_LOGIC:
		ret = npusim_alloc_logic(ctx, ts, a);
		break;
	default:
		ret = -EINVAL;
	}
	mutex_unlock(&ctx->lock);
	if (!ret && copy_to_user(uuio, &uio, sizeof(uio)))
		ret = -EFAULT;
	return ret;
}

static int npusim_free_normal(struct npusim_ctx *ctx, struct npusim_ts *ts,
			      struct trs_sqcq_free_info *f)
{
	bool keep_cq = f->flag & TSDRV_FLAG_REUSE_CQ;
	struct npusim_sq *sq;
	struct npusim_cq *cq;

	/* RSV_SQ_ID, RSV_CQ_ID: the ids go back to a reserved pool, not ours */
	if ((f->flag & ~(TSDRV_FLAG_REUSE_CQ | TSDRV_FLAG_RSV_SQ_ID |
			 TSDRV_FLAG_RSV_CQ_ID)) ||
	    (keep_cq && ts->cfg.sqcq_pair))
		return -EINVAL;
	sq = idr_find(&ts->sq_idr, f->sqId);
	if (!sq || sq->owner != ctx)
		return -EINVAL;
	cq = sq->cq;
	if (!keep_cq) {
		if (cq->id != f->cqId)
			return -EINVAL;
		if (!list_is_singular(&cq->sqs))
			return -EBUSY;
	}
	npusim_sq_destroy(sq);
	if (!keep_cq)
		npusim_cq_destroy(cq);
	return 0;
}

static int npusim_trs_free(struct npusim_ctx *ctx, void *arg,
			void __user *uarg)
{
	struct trs_sqcq_free_info *f = arg;
	struct npusim_ts *ts;
	struct npusim_cq *cq;
	int ret = -EINVAL;

	ts = npusim_sqcq_ts(ctx, f->type, f->tsId);
	if (!ts)
		return -EINVAL;
	mutex_lock(&ctx->lock);
	mutex_lock(&ts->lock);
	switch (f->type) {
	case TRS_SQCQ_TYPE_NORMAL:
		ret = npusim_free_normal(ctx, ts, f);
		break;
	case TRS_SQCQ_TYPE_LOGIC:
		cq = idr_find(&ts->logic_cq_idr, f->cqId);
		if (cq && cq->owner == ctx) {
			npusim_cq_destroy(cq);
			ret = 0;
		}
		break;
	}
	mutex_unlock(&ts->lock);
	mutex_unlock(&ctx->lock);
	return ret;
}

/* Release of the fd: everything it still owns, in every TS. */
void npusim_trs_release(struct npusim_ctx *ctx)
{
	struct npusim_res *res;
	struct npusim_sq *sq;
	struct npusim_cq *cq;
	struct npusim_ts *ts;
	u32 t, type;
	int id;

	for (t = 0; ctx->dev && t < npusim_ts_per_device; t++) {
		ts = &ctx->dev->ts[t];
		mutex_lock(&ts->lock);
		idr_for_each_entry(&ts->sq_idr, sq, id)
			if (sq->owner == ctx)
				npusim_sq_destroy(sq);
		idr_for_each_entry(&ts->logic_cq_idr, cq, id)
			if (cq->owner == ctx)
				npusim_cq_destroy(cq);
		idr_for_each_entry(&ts->cq_idr, cq, id)
			if (cq->owner == ctx)
				npusim_cq_destroy(cq);
		for (type = 0; type < TRS_RES_HW_SQ; type++)
			idr_for_each_entry(&ts->res_idr[type], res, id)
				if (res->owner == ctx)
					npusim_res_destroy(ts, res);
		mutex_unlock(&ts->lock);
	}
}

/* ---------------------------------------------------------------------- */
/* QUERY and CONFIG                                                       */
/* ---------------------------------------------------------------------- */

static int npusim_trs_query(struct npusim_ctx *ctx, void *arg,
			void __user *uarg)
{
	struct trs_sqcq_query_info *q = arg;
	struct trs_sqcq_query_info __user *uq = uarg;
	struct npusim_ts *ts;
	struct npusim_sq *sq;
	int ret = 0;
	u32 v = 0;

	if (q->type != TRS_SQCQ_TYPE_NORMAL)
		return -EINVAL;
	ts = npusim_ctx_ts(ctx, q->tsId);
	if (!ts)
		return -EINVAL;
	mutex_lock(&ts->lock);
	sq = idr_find(&ts->sq_idr, q->sqId);
	if (!sq || sq->owner != ctx) {
		ret = -EINVAL;
		goto out;
	}
	switch (q->prop) {
	case TRS_SQCQ_PROP_SQ_STATUS:
		v = 1;
		break;
	case TRS_SQCQ_PROP_SQ_HEAD:
		v = npusim_sq_pos(sq, sq->head);
		break;
	case TRS_SQCQ_PROP_SQ_TAIL:
		v = npusim_sq_pos(sq, sq->tail);
		break;
	case TRS_SQCQ_PROP_SQ_DEPTH:
		v = sq->depth;
		break;
	case TRS_SQCQ_PROP_SQ_CQE_STATUS:
		v = sq->cqe_status;
		sq->cqe_status = false;
		break;
	default:
		ret = -EINVAL;
	}
out:
	mutex_unlock(&ts->lock);
	if (!ret && put_user(v, &uq->value[0]))
		ret = -EFAULT;
	return ret;
}

/*
 * CONFIG SQ_HEAD or SQ_TAIL (an SQ whose mode the chip picked): the
 * runtime's stream cleanup sets both to 0 on an idle SQ. npusim: either one
 * moves the idle SQ's (empty) window to value[0]; an SQ with tasks queued,
 * running, or written to its mapping and not yet taken: EBUSY.
 * A soft queue's tail word is the library's, which moves only its own
 * copy (trs_sqcq.c:1185-1190): the word stays as it was until the next
 * send writes it, and the worker takes nothing from it until then.
 */
static int npusim_config_sq_pos(struct npusim_sq *sq, u32 v)
{
	struct npusim_sq_ctrl *ctrl = sq->ring;
	u32 cur = npusim_sq_pos(sq, sq->tail);
	u32 word = ctrl ? READ_ONCE(ctrl->tail) : cur;

	if (v >= sq->depth)
		return -EINVAL;
	if (sq->tail != sq->head ||
	    (word != cur && !(sq->tail_stale && word == sq->stale_tail)))
		return -EBUSY;
	sq->cont_left = 0;
	sq->pos_off = (sq->pos_off + v + sq->depth - cur) % sq->depth;
	if (!ctrl)
		return 0;
	if (sq->soft) {
		sq->tail_stale = word != v;
		sq->stale_tail = word;
	} else {
		WRITE_ONCE(ctrl->tail, v);
	}
	WRITE_ONCE(ctrl->tail_reg, v);
	WRITE_ONCE(ctrl->head_reg, v);
	/* the runtime reads the head with acquire */
	smp_store_release(&ctrl->head, v);
	return 0;
}

/*
 * A 950's library moves a uio_d SQ's head and tail as the registers they
 * are, with no ioctl (trs_sqcq.c:1148-1163), and the runtime does so on a
 * disabled SQ (stream.cc:5310-5324). npusim: a paused chip-picked uio_d SQ
 * takes nothing from its mapping; at RESUME, idle, it goes on from the
 * head found there, and its tail is read as every poll reads it.
 */
static void npusim_sq_take_head(struct npusim_sq *sq)
{
	struct npusim_sq_ctrl *ctrl = sq->ring;
	u32 h, cur = npusim_sq_pos(sq, sq->tail);

	if (!ctrl || !sq->chip || sq->soft || sq->tail != sq->head)
		return;
	h = READ_ONCE(ctrl->head);
	if (h >= sq->depth || h == cur)
		return;
	sq->cont_left = 0;
	sq->pos_off = (sq->pos_off + h + sq->depth - cur) % sq->depth;
}

static int npusim_config_sq(struct npusim_ctx *ctx, struct npusim_ts *ts,
			    struct trs_sqcq_config_info *c)
{
	struct npusim_sq *sq = idr_find(&ts->sq_idr, c->sqId);

	if (!sq || sq->owner != ctx)
		return -EINVAL;
	if (sq->chip && (c->prop == TRS_SQCQ_PROP_SQ_HEAD ||
			 c->prop == TRS_SQCQ_PROP_SQ_TAIL))
		return npusim_config_sq_pos(sq, c->value[0]);
	switch (c->prop) {
	case TRS_SQCQ_PROP_SQ_PAUSE:
		sq->paused = true;
		return 0;
	case TRS_SQCQ_PROP_SQ_RESUME:
		sq->paused = false;
		npusim_sq_take_head(sq);
		npusim_engine_make_ready(sq);
		return 0;
	case TRS_SQCQ_PROP_SQ_DISABLE_TO_ENABLE:
		return 0;
	}
	return -EOPNOTSUPP;
}

static int npusim_config_logic(struct npusim_ctx *ctx, struct npusim_ts *ts,
			       struct trs_sqcq_config_info *c)
{
	struct npusim_cq *cq = idr_find(&ts->logic_cq_idr, c->cqId);

	if (c->prop != TRS_SQCQ_PROP_SQCQ_RESET)
		return -EOPNOTSUPP;
	if (!cq || cq->owner != ctx)
		return -EINVAL;
	ts->stats.report_drops += cq->count;
	ts->stats.reports_pending -= cq->count;
	cq->first = 0;
	cq->count = 0;
	return 0;
}

static int npusim_trs_config(struct npusim_ctx *ctx, void *arg,
			void __user *uarg)
{
	struct trs_sqcq_config_info *c = arg;
	struct npusim_ts *ts;
	int ret = -EINVAL;

	ts = npusim_sqcq_ts(ctx, c->type, c->tsId);
	if (!ts)
		return -EINVAL;
	mutex_lock(&ts->lock);
	if (c->type == TRS_SQCQ_TYPE_NORMAL)
		ret = npusim_config_sq(ctx, ts, c);
	else if (c->type == TRS_SQCQ_TYPE_LOGIC)
		ret = npusim_config_logic(ctx, ts, c);
	mutex_unlock(&ts->lock);
	if (!ret)
		npusim_engine_kick(ts);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* SEND                                                                   */
/* ---------------------------------------------------------------------- */

static bool npusim_sq_changed(void *obj, u64 gen)
{
	struct npusim_sq *sq = obj;

	return READ_ONCE(sq->dead) || READ_ONCE(sq->sq_gen) != gen;
}

/*
 * Queue the whole batch if the SQ has room for it: 0, or -EAGAIN (then a
 * SEND that may wait has told the engine how much room it waits for, and
 * @gen is the generation of the engine's wakeups to wait for a change of).
 * submit_lock keeps a batch contiguous and covers the truth pages; it is
 * never held while waiting, so that a SEND's timeout is its own.
 */
static int npusim_send_try(struct npusim_ctx *ctx, struct npusim_sq *sq,
			   struct trs_task_send_info *s, const u8 *sqes,
			   u64 *gen)
{
	struct npusim_ts *ts = sq->ts;
	u32 i, n = s->sqe_num;
	u64 now;
	int ret;

	mutex_lock(&sq->submit_lock);
	ret = npusim_truth_prepare(ctx, sq, sq->tail, n);
	if (ret)
		goto out;
	mutex_lock(&ts->lock);
	if (sq->dead) {
		ret = -EINVAL;
	} else if (sq->depth - (sq->tail - sq->head) < n) {
		ret = -EAGAIN;
		if (s->timeout && (!sq->sq_want || n < sq->sq_want))
			sq->sq_want = n;
		*gen = sq->sq_gen;
	} else {
		now = ktime_get_ns();
		s->pos = npusim_sq_pos(sq, sq->tail);
		for (i = 0; i < n; i++)
			npusim_sq_push(sq, sqes + (size_t)i * TRS_SQE_SIZE, now,
				       true);
		ts->stats.sent_sqes += n;
		npusim_engine_make_ready(sq);
	}
	mutex_unlock(&ts->lock);
	if (!ret)
		npusim_engine_kick(ts);
out:
	mutex_unlock(&sq->submit_lock);
	return ret;
}

static int npusim_send_wait(struct npusim_ctx *ctx, struct npusim_sq *sq,
			    struct trs_task_send_info *s, const u8 *sqes)
{
	ktime_t deadline = ktime_add_ms(ktime_get(), s->timeout);
	u64 gen;
	int ret;

	for (;;) {
		ret = npusim_send_try(ctx, sq, s, sqes, &gen);
		if (ret != -EAGAIN || !s->timeout)
			return ret;
		ret = npusim_wait(sq, &sq->sq_wait, npusim_sq_changed, gen,
				  s->timeout, deadline);
		if (ret)
			return ret;
	}
}

static int npusim_trs_send(struct npusim_ctx *ctx, void *arg,
			void __user *uarg)
{
	struct trs_task_send_info *s = arg;
	struct trs_task_send_info __user *us = uarg;
	struct npusim_charge ch = {};
	size_t len = (size_t)s->sqe_num * TRS_SQE_SIZE;
	struct npusim_ts *ts;
	struct npusim_sq *sq;
	u8 *sqes;
	int ret;

	if (s->type != TRS_SQCQ_TYPE_NORMAL || !s->sqe_num || !s->sqe_addr)
		return -EINVAL;
	ts = npusim_ctx_ts(ctx, s->tsId);
	if (!ts)
		return -EINVAL;
	sq = npusim_sq_get(ctx, ts, s->sqId);
	if (!sq)
		return -EINVAL;
	if (sq->uio || s->sqe_num > sq->depth) {
		ret = -EINVAL;
		goto out_put;
	}
	sqes = npusim_zalloc(ctx, len, &ch);
	if (!sqes) {
		ret = -ENOMEM;
		goto out_put;
	}
	if (copy_from_user(sqes, u64_to_user_ptr(s->sqe_addr), len)) {
		ret = -EFAULT;
		goto out_free;
	}
	ret = npusim_send_wait(ctx, sq, s, sqes);
	if (!ret && put_user(s->pos, &us->pos))
		ret = -EFAULT;
out_free:
	npusim_free(sqes, len, &ch);
	npusim_uncharge(&ch);
out_put:
	npusim_sq_put(sq);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* RECV                                                                   */
/* ---------------------------------------------------------------------- */

/*
 * The run of reports a RECV takes, as the driver's match copy: @start and
 * the count returned. In order: the oldest ones. Match mode (logic CQs):
 * plain reports, ended by the match report the RECV names (included), by
 * one it does not name (excluded; one met before the run is skipped), or by
 * @cap. Caller holds ts->lock.
 */
static u32 npusim_cq_run(struct npusim_cq *cq, struct trs_report_recv_info *r,
			 u32 cap, u32 *start)
{
	u32 i, n = 0;

	*start = 0;
	if (!cq->logic || r->res[0] != TRS_RECV_MATCH)
		return min(cap, cq->count);
	for (i = 0; i < cq->count && n < cap; i++) {
		struct trs_logic_cqe *e = npusim_cq_at(cq, i);

		if (!(e->flags & TRS_CQE_F_MATCH)) {
			if (!n)
				*start = i;
			n++;
			continue;
		}
		if (e->stream_id == r->stream_id && e->task_id == r->task_id) {
			if (!n)
				*start = i;
			n++;
			break;
		}
		if (n)
			break;
	}
	return n;
}

/* Remove reports start .. start + n - 1, keeping the others in order. */
static void npusim_cq_pop(struct npusim_cq *cq, u32 start, u32 n)
{
	u32 i;

	if (!start) {
		cq->first = (cq->first + n) % cq->depth;
	} else {
		for (i = start + n; i < cq->count; i++)
			memcpy(npusim_cq_at(cq, i - n), npusim_cq_at(cq, i),
			       cq->esize);
	}
	cq->count -= n;
	cq->ts->stats.reports_pending -= n;
}

static bool npusim_cq_changed(void *obj, u64 gen)
{
	struct npusim_cq *cq = obj;

	return READ_ONCE(cq->dead) || READ_ONCE(cq->gen) != gen;
}

/*
 * Hand reports to user space: copied while still queued and removed only
 * once the copy worked, so that none is lost or duplicated (recv_lock
 * keeps other takers out, the engine only appends). Returns their number,
 * 0 when there is none (@gen: the CQ's generation then), or an errno.
 */
static int npusim_recv_take(struct npusim_cq *cq, struct trs_report_recv_info *r,
			    u8 *buf, u32 cap, u64 *gen)
{
	struct npusim_ts *ts = cq->ts;
	u32 i, n, start;

	mutex_lock(&ts->lock);
	if (cq->dead) {
		mutex_unlock(&ts->lock);
		return -EINVAL;
	}
	n = npusim_cq_run(cq, r, cap, &start);
	for (i = 0; i < n; i++)
		memcpy(buf + (size_t)i * cq->uesize, npusim_cq_at(cq, start + i),
		       cq->uesize);
	*gen = cq->gen;
	mutex_unlock(&ts->lock);
	if (!n)
		return 0;
	if (copy_to_user(u64_to_user_ptr(r->cqe_addr), buf,
			 (size_t)n * cq->uesize))
		return -EFAULT;

	mutex_lock(&ts->lock);
	if (!cq->dead) {
		npusim_cq_pop(cq, start, n);
		if (!cq->logic)
			npusim_engine_cq_room(cq);
	}
	mutex_unlock(&ts->lock);
	npusim_engine_kick(ts);
	return n;
}

/*
 * recv_lock is held only while taking reports, never while waiting, so
 * that a receiver's timeout is not extended by another one's.
 */
static int npusim_recv_wait(struct npusim_cq *cq, struct trs_report_recv_info *r,
			    u8 *buf, u32 cap)
{
	ktime_t deadline = ktime_add_ms(ktime_get(), r->timeout);
	u64 gen;
	int ret;

	for (;;) {
		ret = mutex_lock_interruptible(&cq->recv_lock);
		if (ret)
			return ret;
		ret = npusim_recv_take(cq, r, buf, cap, &gen);
		mutex_unlock(&cq->recv_lock);
		if (ret || !r->timeout)
			return ret;
		ret = npusim_wait(cq, &cq->wait, npusim_cq_changed, gen,
				  r->timeout, deadline);
		if (ret)
			return ret;
	}
}

static int npusim_trs_recv(struct npusim_ctx *ctx, void *arg,
			void __user *uarg)
{
	struct trs_report_recv_info *r = arg;
	struct trs_report_recv_info __user *ur = uarg;
	struct npusim_charge ch = {};
	struct npusim_ts *ts;
	struct npusim_cq *cq;
	size_t len;
	u8 *buf;
	u32 cap;
	int ret;

	if ((r->type != TRS_SQCQ_TYPE_NORMAL && r->type != TRS_SQCQ_TYPE_LOGIC) ||
	    !r->cqe_num || !r->cqe_addr || r->timeout < -1 || r->res[0] > 1)
		return -EINVAL;
	ts = npusim_ctx_ts(ctx, r->tsId);
	if (!ts)
		return -EINVAL;
	cq = npusim_cq_get(ctx, ts, r->cqId, r->type == TRS_SQCQ_TYPE_LOGIC);
	if (!cq)
		return -EINVAL;
	cap = min(r->cqe_num, cq->depth);
	len = (size_t)cap * cq->uesize;
	/*
	 * The buffer is written by the copy of the reports alone, as the
	 * driver's, and not probed first: fault_in_writeable() would store a
	 * zero at each page it starts, past the reports returned. A bad one
	 * fails that copy, and its reports stay queued.
	 */
	if (!access_ok(u64_to_user_ptr(r->cqe_addr), len)) {
		ret = -EFAULT;
		goto out_put;
	}
	buf = npusim_zalloc(ctx, len, &ch);
	if (!buf) {
		ret = -ENOMEM;
		goto out_put;
	}
	ret = npusim_recv_wait(cq, r, buf, cap);
	if (ret >= 0)
		ret = put_user(ret, &ur->report_cqe_num) ? -EFAULT : 0;
	npusim_free(buf, len, &ch);
	npusim_uncharge(&ch);
out_put:
	npusim_cq_put(cq);
	return ret;
}

/*
 * The driver's table: by _IOC_NR only. Each handler gets a kernel copy of
 * the argument (its size from the table) and writes back only its Out
 * fields.
 */
static const struct npusim_ioctl npusim_trs_cmds[TRS_MAX_CMD] = {
	[TRS_IOC_NR_RES_ID_ALLOC] = { npusim_res_id_alloc,
				      sizeof(struct trs_res_id_para), true },
	[TRS_IOC_NR_RES_ID_FREE] = { npusim_res_id_free,
				     sizeof(struct trs_res_id_para), false },
	[TRS_IOC_NR_SQCQ_ALLOC]	= { npusim_trs_alloc,
				    sizeof(struct trs_sqcq_alloc_info), true },
	[TRS_IOC_NR_SQCQ_FREE]	= { npusim_trs_free,
				    sizeof(struct trs_sqcq_free_info), false },
	[TRS_IOC_NR_SQCQ_CONFIG] = { npusim_trs_config,
				     sizeof(struct trs_sqcq_config_info), false },
	[TRS_IOC_NR_SQCQ_QUERY]	= { npusim_trs_query,
				    sizeof(struct trs_sqcq_query_info), false },
	[TRS_IOC_NR_SQCQ_SEND]	= { npusim_trs_send,
				    sizeof(struct trs_task_send_info), false },
	[TRS_IOC_NR_SQCQ_RECV]	= { npusim_trs_recv,
				    sizeof(struct trs_report_recv_info), false },
};

/*
 * The analog of trs_ioctl(), which BPF programs hook by name: dispatch by
 * _IOC_NR through a table, as the driver does (it checks neither the magic
 * nor the size). Reached only through npusim_manager_ioctl() on a fd bound
 * to TSDRV.
 */
noinline long npusim_trs_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	struct npusim_ctx *ctx = file->private_data;
	union npusim_trs_arg buf;
	unsigned int nr = _IOC_NR(cmd);

	if (nr >= TRS_MAX_CMD)
		return -EOPNOTSUPP;
	nr = array_index_nospec(nr, TRS_MAX_CMD);
	if (!npusim_trs_cmds[nr].handler)
		return -EOPNOTSUPP;
	if (!arg)
		return -EINVAL;
	return npusim_ioctl_dispatch(&npusim_trs_cmds[nr], &buf, ctx, arg);
}
