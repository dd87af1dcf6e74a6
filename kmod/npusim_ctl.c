// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: the simulator-only controls (magic 'N'): configuration, ground
 * truth, statistics, the device clock and FAIL_NTH. Semantics:
 * ascend_trs.h, section 4.
 */
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/nospec.h>
#include <linux/ktime.h>
#include <linux/capability.h>

#include "npusim.h"

union npusim_ctl_arg {
	struct npusim_config		cfg;
	struct npusim_truth_query	truth;
	struct npusim_stats		stats;
	struct npusim_clock		clock;
	struct npusim_fail_nth		fail;
};

int npusim_config_check(const struct npusim_config *cfg, u32 mask)
{
	if ((mask & ~NPUSIM_CFG_ALL) || cfg->pad ||
	    memchr_inv(cfg->res, 0, sizeof(cfg->res)))
		return -EINVAL;
	if ((mask & NPUSIM_CFG_UNITS) &&
	    (!cfg->units || cfg->units > NPUSIM_MAX_UNITS))
		return -EINVAL;
	if ((mask & NPUSIM_CFG_COUNTER_FREQ) &&
	    (!cfg->counter_freq_hz || cfg->counter_freq_hz > U32_MAX))
		return -EINVAL;
	if ((mask & NPUSIM_CFG_INJECT_ERROR) && cfg->inject_error_every &&
	    !cfg->inject_error_code)
		return -EINVAL;
	if ((mask & NPUSIM_CFG_UIO_MODE) && cfg->uio_mode > NPUSIM_UIO_D)
		return -EINVAL;
	if ((mask & NPUSIM_CFG_STARS) && cfg->stars != 1 && cfg->stars != 2)
		return -EINVAL;
	if ((mask & NPUSIM_CFG_SQCQ_PAIR) && cfg->sqcq_pair > 1)
		return -EINVAL;
	if ((mask & NPUSIM_CFG_SQ_MODE) && cfg->sq_mode > NPUSIM_SQ_MODE_CHIP)
		return -EINVAL;
	if ((mask & NPUSIM_CFG_SEND_MODE) &&
	    cfg->send_mode > NPUSIM_SEND_HIGH_SECURITY)
		return -EINVAL;
	if ((mask & NPUSIM_CFG_SOFT_POLL) &&
	    (!cfg->soft_poll_ms || cfg->soft_poll_ms > NPUSIM_SOFT_POLL_MS_MAX ||
	     cfg->soft_trigger > 1))
		return -EINVAL;
	if ((mask & NPUSIM_CFG_DURATION_PCT) &&
	    (!cfg->duration_pct || cfg->duration_pct > 100000))
		return -EINVAL;
	return 0;
}

static struct npusim_dev *npusim_dev_of(u32 device)
{
	if (device >= npusim_devices)
		return NULL;
	return &npusim_devs[array_index_nospec(device, npusim_devices)];
}

static struct npusim_ts *npusim_dev_ts(u32 device, u32 ts_id)
{
	struct npusim_dev *dev = npusim_dev_of(device);

	if (!dev || ts_id >= npusim_ts_per_device)
		return NULL;
	return &dev->ts[array_index_nospec(ts_id, npusim_ts_per_device)];
}

static int npusim_ctl_get_config(struct npusim_ctx *ctx, void *arg,
				 void __user *uarg)
{
	struct npusim_config *c = arg;
	struct npusim_dev *dev = npusim_dev_of(c->device);
	struct npusim_ts *ts;

	if (!dev)
		return -EINVAL;
	ts = &dev->ts[0];
	mutex_lock(&ts->lock);
	*c = ts->cfg;
	mutex_unlock(&ts->lock);
	c->mask = NPUSIM_CFG_ALL;
	c->device = dev->id;
	return 0;
}

/* Whether SET would change a field that needs an idle device. */
static bool npusim_config_needs_idle(const struct npusim_config *old,
				     const struct npusim_config *new, u32 mask)
{
	return ((mask & NPUSIM_CFG_UNITS) && new->units != old->units) ||
	       ((mask & NPUSIM_CFG_COUNTER_FREQ) &&
		new->counter_freq_hz != old->counter_freq_hz) ||
	       ((mask & NPUSIM_CFG_COUNTER_EPOCH) &&
		new->counter_epoch != old->counter_epoch);
}

static void npusim_config_apply(struct npusim_config *cur,
				const struct npusim_config *c)
{
	if (c->mask & NPUSIM_CFG_UNITS)
		cur->units = c->units;
	if (c->mask & NPUSIM_CFG_COUNTER_FREQ)
		cur->counter_freq_hz = c->counter_freq_hz;
	if (c->mask & NPUSIM_CFG_COUNTER_EPOCH)
		cur->counter_epoch = c->counter_epoch;
	if (c->mask & NPUSIM_CFG_DEFAULT_DURATION)
		cur->default_duration_ns = c->default_duration_ns;
	if (c->mask & NPUSIM_CFG_INJECT_ERROR) {
		cur->inject_error_every = c->inject_error_every;
		cur->inject_error_code = c->inject_error_code;
	}
	if (c->mask & NPUSIM_CFG_UIO_MODE)
		cur->uio_mode = c->uio_mode;
	if (c->mask & NPUSIM_CFG_DURATION_PCT)
		cur->duration_pct = c->duration_pct;
	if (c->mask & NPUSIM_CFG_STARS)
		cur->stars = c->stars;
	if (c->mask & NPUSIM_CFG_SQCQ_PAIR)
		cur->sqcq_pair = c->sqcq_pair;
	if (c->mask & NPUSIM_CFG_SQ_MODE)
		cur->sq_mode = c->sq_mode;
	if (c->mask & NPUSIM_CFG_SEND_MODE)
		cur->send_mode = c->send_mode;
	if (c->mask & NPUSIM_CFG_SOFT_POLL) {
		cur->soft_poll_ms = c->soft_poll_ms;
		cur->soft_trigger = c->soft_trigger;
	}
}

/* Every TS of the device holds a copy: all are locked, checked, updated. */
static int npusim_ctl_set_config(struct npusim_ctx *ctx, void *arg,
				 void __user *uarg)
{
	struct npusim_config *c = arg;
	struct npusim_dev *dev;
	u32 i;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = npusim_config_check(c, c->mask);
	if (ret)
		return ret;
	dev = npusim_dev_of(c->device);
	if (!dev)
		return -EINVAL;
	for (i = 0; i < npusim_ts_per_device; i++)
		mutex_lock_nested(&dev->ts[i].lock, i);
	for (i = 0; i < npusim_ts_per_device; i++)
		if ((dev->ts[i].stats.tasks_queued &&
		     npusim_config_needs_idle(&dev->ts[i].cfg, c, c->mask)) ||
		    (dev->ts[i].stats.sqs &&
		     (((c->mask & NPUSIM_CFG_STARS) &&
		       c->stars != dev->ts[i].cfg.stars) ||
		      ((c->mask & NPUSIM_CFG_SQCQ_PAIR) &&
		       c->sqcq_pair != dev->ts[i].cfg.sqcq_pair))))
			ret = -EBUSY;
	for (i = 0; !ret && i < npusim_ts_per_device; i++)
		npusim_config_apply(&dev->ts[i].cfg, c);
	for (i = npusim_ts_per_device; i-- > 0;)
		mutex_unlock(&dev->ts[i].lock);
	for (i = 0; !ret && i < npusim_ts_per_device; i++)
		npusim_engine_kick(&dev->ts[i]);
	return ret;
}

/* Copy truth records seq .. seq + n - 1 to @buf. Caller holds ts->lock. */
static int npusim_truth_copy(struct npusim_sq *sq, u64 seq, u32 n,
			     struct npusim_task_truth *buf)
{
	u32 i;

	if (sq->tail > NPUSIM_TRUTH_DEPTH && seq < sq->tail - NPUSIM_TRUTH_DEPTH)
		return -ENOENT;
	for (i = 0; i < n; i++)
		buf[i] = *npusim_truth(sq, seq + i);
	return 0;
}

static int npusim_ctl_truth(struct npusim_ctx *ctx, void *arg,
			    void __user *uarg)
{
	struct npusim_truth_query *tq = arg;
	struct npusim_task_truth *buf = NULL;
	struct npusim_charge ch = {};
	struct npusim_ts *ts;
	struct npusim_sq *sq;
	size_t len = 0;
	u64 next;
	u32 n = 0;
	int ret;

	if (tq->res || (tq->flags & ~NPUSIM_TRUTH_ANY_OWNER))
		return -EINVAL;
	if (tq->flags & NPUSIM_TRUTH_ANY_OWNER) {
		if (!capable(CAP_SYS_ADMIN))
			return -EPERM;
		ts = npusim_dev_ts(tq->device, tq->ts_id);
	} else {
		if (READ_ONCE(ctx->module) != NPUSIM_MOD_TSDRV)
			return -ENODEV;
		ts = npusim_ctx_ts(ctx, tq->ts_id);
	}
	if (!ts)
		return -EINVAL;
	sq = npusim_sq_get(tq->flags ? NULL : ctx, ts, tq->sq_id);
	if (!sq)
		return -EINVAL;
	next = READ_ONCE(sq->tail);
	if (tq->seq < next)
		n = min_t(u64, tq->count, next - tq->seq);
	n = min_t(u32, n, NPUSIM_TRUTH_DEPTH);
	if (n) {
		len = (size_t)n * sizeof(*buf);
		buf = npusim_zalloc(ctx, len, &ch);
		if (!buf) {
			ret = -ENOMEM;
			goto out_put;
		}
	}
	mutex_lock(&ts->lock);
	next = sq->tail;
	ret = npusim_truth_copy(sq, tq->seq, n, buf);
	mutex_unlock(&ts->lock);
	if (ret)
		goto out_free;
	if (n && copy_to_user(u64_to_user_ptr(tq->addr), buf, len)) {
		ret = -EFAULT;
		goto out_free;
	}
	tq->count = n;
	tq->next_seq = next;
out_free:
	npusim_free(buf, len, &ch);
	npusim_uncharge(&ch);
out_put:
	npusim_sq_put(sq);
	return ret;
}

static int npusim_ctl_stats(struct npusim_ctx *ctx, void *arg,
			    void __user *uarg)
{
	npusim_stats_sum(arg);
	return 0;
}

static int npusim_ctl_clock(struct npusim_ctx *ctx, void *arg,
			    void __user *uarg)
{
	struct npusim_clock *c = arg;
	struct npusim_dev *dev = npusim_dev_of(c->device);
	struct npusim_ts *ts;

	if (!dev || c->res)
		return -EINVAL;
	ts = &dev->ts[0];
	mutex_lock(&ts->lock);
	c->host_ns = ktime_get_ns();
	c->ticks = npusim_ticks(&ts->cfg, c->host_ns);
	c->counter_freq_hz = ts->cfg.counter_freq_hz;
	c->counter_epoch = ts->cfg.counter_epoch;
	mutex_unlock(&ts->lock);
	return 0;
}

static int npusim_ctl_fail_nth(struct npusim_ctx *ctx, void *arg,
			       void __user *uarg)
{
	struct npusim_fail_nth *f = arg;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (f->res || f->nth > INT_MAX)
		return -EINVAL;
	atomic_set(&ctx->fail_nth, f->nth);
	return 0;
}

struct npusim_ctl_cmd {
	struct npusim_ioctl	ioc;
	unsigned int		cmd;	/* the exact value accepted */
};

static const struct npusim_ctl_cmd npusim_ctl_cmds[] = {
	[_IOC_NR(NPUSIM_IOC_GET_CONFIG)] = {
		{ npusim_ctl_get_config, sizeof(struct npusim_config), true },
		NPUSIM_IOC_GET_CONFIG },
	[_IOC_NR(NPUSIM_IOC_SET_CONFIG)] = {
		{ npusim_ctl_set_config, sizeof(struct npusim_config), false },
		NPUSIM_IOC_SET_CONFIG },
	[_IOC_NR(NPUSIM_IOC_TRUTH)] = {
		{ npusim_ctl_truth, sizeof(struct npusim_truth_query), true },
		NPUSIM_IOC_TRUTH },
	[_IOC_NR(NPUSIM_IOC_STATS)] = {
		{ npusim_ctl_stats, sizeof(struct npusim_stats), true },
		NPUSIM_IOC_STATS },
	[_IOC_NR(NPUSIM_IOC_CLOCK)] = {
		{ npusim_ctl_clock, sizeof(struct npusim_clock), true },
		NPUSIM_IOC_CLOCK },
	[_IOC_NR(NPUSIM_IOC_FAIL_NTH)] = {
		{ npusim_ctl_fail_nth, sizeof(struct npusim_fail_nth), false },
		NPUSIM_IOC_FAIL_NTH },
};

/* 'N' commands are checked whole: value, direction and size. */
long npusim_ctl_ioctl(struct npusim_ctx *ctx, unsigned int cmd,
		      unsigned long arg)
{
	union npusim_ctl_arg buf;
	unsigned int nr = _IOC_NR(cmd);
	const struct npusim_ctl_cmd *c;

	if (nr >= ARRAY_SIZE(npusim_ctl_cmds))
		return -ENOTTY;
	c = &npusim_ctl_cmds[array_index_nospec(nr, ARRAY_SIZE(npusim_ctl_cmds))];
	if (!c->ioc.handler || c->cmd != cmd)
		return -ENOTTY;
	return npusim_ioctl_dispatch(&c->ioc, &buf, ctx, arg);
}
