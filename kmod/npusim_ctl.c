// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: the simulator-only controls (magic 'N'): configuration, ground
 * truth, statistics and the device clock. Semantics: ascend_trs.h, 4.
 */
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/nospec.h>
#include <linux/ktime.h>

#include "npusim.h"

union npusim_ctl_arg {
	struct npusim_config		cfg;
	struct npusim_truth_query	truth;
	struct npusim_stats		stats;
	struct npusim_clock		clock;
};

int npusim_config_check(const struct npusim_config *cfg, u32 mask)
{
	if ((mask & ~NPUSIM_CFG_ALL) || memchr_inv(cfg->res, 0, sizeof(cfg->res)))
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
	return 0;
}

static int npusim_ctl_get_config(struct npusim_ctx *ctx, void *arg)
{
	struct npusim_ts *ts = ctx->ts;

	mutex_lock(&ts->lock);
	memcpy(arg, &ts->cfg, sizeof(ts->cfg));
	mutex_unlock(&ts->lock);
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

static int npusim_ctl_set_config(struct npusim_ctx *ctx, void *arg)
{
	struct npusim_config *c = arg;
	struct npusim_ts *ts = ctx->ts;
	struct npusim_config *cur = &ts->cfg;
	int ret;

	ret = npusim_config_check(c, c->mask);
	if (ret)
		return ret;
	mutex_lock(&ts->lock);
	if (ts->stats.tasks_queued && npusim_config_needs_idle(cur, c, c->mask)) {
		ret = -EBUSY;
		goto out;
	}
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
out:
	mutex_unlock(&ts->lock);
	return ret;
}

/* Copy truth records seq .. seq + n - 1 to @buf. Caller holds ts->lock. */
static int npusim_truth_copy(struct npusim_queue *q, u64 seq, u32 n,
			     struct npusim_task_truth *buf)
{
	u32 i;

	if (q->tail > NPUSIM_TRUTH_DEPTH && seq < q->tail - NPUSIM_TRUTH_DEPTH)
		return -ENOENT;
	for (i = 0; i < n; i++)
		buf[i] = *npusim_truth(q, seq + i);
	return 0;
}

static int npusim_ctl_truth(struct npusim_ctx *ctx, void *arg)
{
	struct npusim_truth_query *tq = arg;
	struct npusim_task_truth *buf = NULL;
	struct npusim_ts *ts = ctx->ts;
	struct npusim_queue *q;
	u64 next;
	u32 n = 0;
	int ret;

	if (memchr_inv(tq->res, 0, sizeof(tq->res)))
		return -EINVAL;
	q = npusim_sq_get(ctx, tq->sq_id);
	if (!q)
		return -EINVAL;
	next = READ_ONCE(q->tail);
	if (tq->seq < next)
		n = min_t(u64, tq->count, next - tq->seq);
	n = min_t(u32, n, NPUSIM_TRUTH_DEPTH);
	if (n) {
		buf = kvmalloc_array(n, sizeof(*buf), GFP_KERNEL);
		if (!buf) {
			ret = -ENOMEM;
			goto out_put;
		}
	}
	mutex_lock(&ts->lock);
	next = q->tail;
	ret = npusim_truth_copy(q, tq->seq, n, buf);
	mutex_unlock(&ts->lock);
	if (ret)
		goto out_free;
	if (n && copy_to_user(u64_to_user_ptr(tq->addr), buf,
			      (size_t)n * sizeof(*buf))) {
		ret = -EFAULT;
		goto out_free;
	}
	tq->count = n;
	tq->next_seq = next;
out_free:
	kvfree(buf);
out_put:
	npusim_queue_put(q);
	return ret;
}

static int npusim_ctl_stats(struct npusim_ctx *ctx, void *arg)
{
	struct npusim_ts *ts = ctx->ts;

	mutex_lock(&ts->lock);
	memcpy(arg, &ts->stats, sizeof(ts->stats));
	mutex_unlock(&ts->lock);
	return 0;
}

static int npusim_ctl_clock(struct npusim_ctx *ctx, void *arg)
{
	struct npusim_ts *ts = ctx->ts;
	struct npusim_clock *c = arg;

	mutex_lock(&ts->lock);
	c->host_ns = ktime_get_ns();
	c->ticks = npusim_ticks(&ts->cfg, c->host_ns);
	c->counter_freq_hz = ts->cfg.counter_freq_hz;
	c->counter_epoch = ts->cfg.counter_epoch;
	mutex_unlock(&ts->lock);
	return 0;
}

static const struct npusim_ioctl npusim_ctl_cmds[] = {
	[_IOC_NR(NPUSIM_IOC_GET_CONFIG)] = { npusim_ctl_get_config,
					     NPUSIM_IOC_GET_CONFIG, true },
	[_IOC_NR(NPUSIM_IOC_SET_CONFIG)] = { npusim_ctl_set_config,
					     NPUSIM_IOC_SET_CONFIG, false },
	[_IOC_NR(NPUSIM_IOC_TRUTH)]	 = { npusim_ctl_truth,
					     NPUSIM_IOC_TRUTH, true },
	[_IOC_NR(NPUSIM_IOC_STATS)]	 = { npusim_ctl_stats,
					     NPUSIM_IOC_STATS, true },
	[_IOC_NR(NPUSIM_IOC_CLOCK)]	 = { npusim_ctl_clock,
					     NPUSIM_IOC_CLOCK, true },
};

static_assert(sizeof(struct npusim_stats) <= sizeof(union npusim_ctl_arg));

long npusim_ctl_ioctl(struct npusim_ctx *ctx, unsigned int cmd,
		      unsigned long arg)
{
	union npusim_ctl_arg buf;
	unsigned int nr = _IOC_NR(cmd);

	if (nr >= ARRAY_SIZE(npusim_ctl_cmds) || !npusim_ctl_cmds[nr].handler)
		return -ENOTTY;
	nr = array_index_nospec(nr, ARRAY_SIZE(npusim_ctl_cmds));
	return npusim_ioctl_dispatch(&npusim_ctl_cmds[nr], &buf, ctx, cmd, arg);
}
