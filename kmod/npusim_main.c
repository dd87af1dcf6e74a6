// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: a simulated Ascend NPU task scheduler, for testing steptime
 * without the hardware.
 *
 * /dev/npusim_manager stands in for /dev/davinci_manager: ASCEND_MANAGER_OPEN
 * with "TSDRV" binds a fd to the task scheduler (TRS), whose ioctls then
 * allocate SQ/CQ pairs, submit SQEs and receive completion reports with the
 * real driver's ABI. The call path mirrors the real driver's, by name, so
 * that the same BPF program hooks both:
 *
 *   npusim_manager_ioctl()  drv_ascend_intf_ioctl()  magic 'Z', 'N'
 *   npusim_trs_ioctl()      trs_ioctl()              magic 'X'
 *   npusim_logic_cq_enque() trs_logic_cq_enque()     every report
 *   npusim:logic_cqe        trs_core:logic_cqe       tracepoint, the same
 *
 * Simulator conventions (the full contract is include/uapi/ascend_trs.h,
 * section 4):
 * - The last 8 bytes of an SQE are sim_error (0: succeed) and
 *   sim_duration_ns (0: config.default_duration_ns; for place-holder and
 *   event-record SQEs 0 means instantaneous).
 * - Tasks of an SQ run in order, one at a time; SQs run concurrently on
 *   config.units units. Times are simulated exactly (see npusim_engine.c):
 *   the ground truth (NPUSIM_IOC_TRUTH) does not depend on host latency.
 * - The device counter is counter_epoch + CLOCK_MONOTONIC ns * freq / 1e9,
 *   50 MHz from 2^48 by default, so it is never mistaken for host time.
 * - A report is written for SQEs with wr_cqe set, for failed SQEs, and for
 *   every SQE with config.report_every_task; place-holders (step marks,
 *   task type 26) and event records carry the counter at which their SQ
 *   reached them. A full CQ stalls its SQ; reports are never dropped.
 * - SEND waits for SQ room, RECV for reports, up to the ms timeout in their
 *   argument (< 0: forever): EAGAIN (SEND, timeout 0) or ETIMEDOUT.
 * - Mapped ("UIO") SQs are polled every NPUSIM_UIO_POLL_US while any exists.
 * Module parameters set the defaults of the configuration; the debugfs
 * directory npusim/ shows the configuration and the statistics.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "npusim.h"

static unsigned int units = NPUSIM_DEFAULT_UNITS;
module_param(units, uint, 0444);
MODULE_PARM_DESC(units, "parallel execution units (1..64)");

static unsigned long counter_freq_hz = NPUSIM_DEFAULT_FREQ_HZ;
module_param(counter_freq_hz, ulong, 0444);
MODULE_PARM_DESC(counter_freq_hz, "device counter frequency");

static unsigned long long counter_epoch = NPUSIM_DEFAULT_EPOCH;
module_param(counter_epoch, ullong, 0444);
MODULE_PARM_DESC(counter_epoch, "device counter at host time 0");

static unsigned int default_duration_ns = NPUSIM_DEFAULT_DURATION_NS;
module_param(default_duration_ns, uint, 0444);
MODULE_PARM_DESC(default_duration_ns, "task time when the SQE says 0");


static unsigned int inject_error_every;
module_param(inject_error_every, uint, 0444);
MODULE_PARM_DESC(inject_error_every, "fail every Nth task of an SQ (0: never)");

static unsigned int inject_error_code;
module_param(inject_error_code, uint, 0444);
MODULE_PARM_DESC(inject_error_code, "error_code of injected failures");

static struct npusim_ts *npusim_ts_inst;
static struct dentry *npusim_debugfs;

static int npusim_open(struct inode *inode, struct file *file)
{
	struct npusim_ts *ts = npusim_ts_inst;
	struct npusim_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->ts = ts;
	mutex_init(&ctx->lock);
	INIT_LIST_HEAD(&ctx->queues);
	file->private_data = ctx;

	mutex_lock(&ts->lock);
	ts->stats.fds++;
	mutex_unlock(&ts->lock);
	return 0;
}

static int npusim_release(struct inode *inode, struct file *file)
{
	struct npusim_ctx *ctx = file->private_data;
	struct npusim_ts *ts = ctx->ts;
	struct npusim_queue *q, *tmp;

	mutex_lock(&ctx->lock);
	list_for_each_entry_safe(q, tmp, &ctx->queues, ctx_node)
		npusim_queue_destroy(q);
	mutex_unlock(&ctx->lock);

	mutex_lock(&ts->lock);
	ts->stats.fds--;
	mutex_unlock(&ts->lock);
	mutex_destroy(&ctx->lock);
	kfree(ctx);
	return 0;
}

static int npusim_mmap(struct file *file, struct vm_area_struct *vma)
{
	return npusim_queue_mmap(file->private_data, vma);
}

/* OPEN, CLOSE and GET_MODULE_STATUS, for the one module npusim has. */
static long npusim_manager_cmd(struct npusim_ctx *ctx, unsigned int cmd,
			       unsigned long arg)
{
	struct ascend_manager_arg *m;
	bool tsdrv;
	long ret;

	if (cmd != ASCEND_MANAGER_OPEN && cmd != ASCEND_MANAGER_CLOSE &&
	    cmd != ASCEND_MANAGER_GET_MODULE_STATUS)
		return -ENOTTY;
	m = memdup_user((void __user *)arg, sizeof(*m));
	if (IS_ERR(m))
		return PTR_ERR(m);
	ret = -EINVAL;
	if (!memchr(m->module_name, 0, sizeof(m->module_name)))
		goto out;
	tsdrv = !strcmp(m->module_name, ASCEND_MODULE_TSDRV);
	/* STATUS asks about any module: only TSDRV can be bound. */
	if (!tsdrv && cmd != ASCEND_MANAGER_GET_MODULE_STATUS)
		goto out;
	ret = -ENODEV;
	if (m->device_id)
		goto out;

	mutex_lock(&ctx->lock);
	if (cmd == ASCEND_MANAGER_OPEN) {
		ret = ctx->bound ? -EBUSY : 0;
		WRITE_ONCE(ctx->bound, true);
	} else if (!ctx->bound || !tsdrv) {
		ret = -EBADFD;
	} else if (cmd == ASCEND_MANAGER_CLOSE) {
		ret = list_empty(&ctx->queues) ? 0 : -EBUSY;
		if (!ret)
			WRITE_ONCE(ctx->bound, false);
	} else {
		ret = 0;
	}
	mutex_unlock(&ctx->lock);
out:
	kfree(m);
	return ret;
}

/*
 * The analog of drv_ascend_intf_ioctl(), hooked by name: the manager's own
 * commands, the simulator's, and everything else forwarded to the bound
 * sub-driver.
 */
noinline long npusim_manager_ioctl(struct file *file, unsigned int cmd,
				   unsigned long arg)
{
	struct npusim_ctx *ctx = file->private_data;

	switch (_IOC_TYPE(cmd)) {
	case ASCEND_MANAGER_MAGIC:
		return npusim_manager_cmd(ctx, cmd, arg);
	case NPUSIM_IOC_MAGIC:
		return npusim_ctl_ioctl(ctx, cmd, arg);
	}
	if (!READ_ONCE(ctx->bound))
		return -EBADFD;
	return npusim_trs_ioctl(file, cmd, arg);
}

static const struct file_operations npusim_fops = {
	.owner		= THIS_MODULE,
	.open		= npusim_open,
	.release	= npusim_release,
	.unlocked_ioctl	= npusim_manager_ioctl,
	.mmap		= npusim_mmap,
	.llseek		= noop_llseek,
};

static struct miscdevice npusim_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= NPUSIM_DEV_NAME,
	.fops	= &npusim_fops,
	.mode	= 0666,
};

static int npusim_config_show(struct seq_file *m, void *v)
{
	struct npusim_ts *ts = m->private;
	struct npusim_config c;

	mutex_lock(&ts->lock);
	c = ts->cfg;
	mutex_unlock(&ts->lock);
	seq_printf(m, "units %u\ncounter_freq_hz %llu\ncounter_epoch %#llx\n",
		   c.units, c.counter_freq_hz, c.counter_epoch);
	seq_printf(m, "default_duration_ns %u\n", c.default_duration_ns);
	seq_printf(m, "inject_error_every %u\ninject_error_code %u\n",
		   c.inject_error_every, c.inject_error_code);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(npusim_config);

static int npusim_stats_show(struct seq_file *m, void *v)
{
	struct npusim_ts *ts = m->private;
	struct npusim_stats s;

	mutex_lock(&ts->lock);
	s = ts->stats;
	mutex_unlock(&ts->lock);
	seq_printf(m, "fds %llu\nsqs %llu\ncqs %llu\ntasks_queued %llu\n",
		   s.fds, s.sqs, s.cqs, s.tasks_queued);
	seq_printf(m, "reports_pending %llu\nsubmitted %llu\ncompleted %llu\n",
		   s.reports_pending, s.submitted, s.completed);
	seq_printf(m, "reports %llu\ncancelled %llu\nerrors %llu\n",
		   s.reports, s.cancelled, s.errors);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(npusim_stats);

static void npusim_debugfs_init(struct npusim_ts *ts)
{
	npusim_debugfs = debugfs_create_dir("npusim", NULL);
	debugfs_create_file("config", 0444, npusim_debugfs, ts,
			    &npusim_config_fops);
	debugfs_create_file("stats", 0444, npusim_debugfs, ts,
			    &npusim_stats_fops);
}

static int npusim_config_init(struct npusim_config *c)
{
	c->mask = NPUSIM_CFG_ALL;
	c->units = units;
	c->counter_freq_hz = counter_freq_hz;
	c->counter_epoch = counter_epoch;
	c->default_duration_ns = default_duration_ns;
	c->inject_error_every = inject_error_every;
	c->inject_error_code = inject_error_code;
	return npusim_config_check(c, NPUSIM_CFG_ALL);
}

static int __init npusim_init(void)
{
	struct npusim_ts *ts;
	int ret;

	ts = kzalloc(sizeof(*ts), GFP_KERNEL);
	if (!ts)
		return -ENOMEM;
	ret = npusim_config_init(&ts->cfg);
	if (ret) {
		pr_err("npusim: invalid module parameters\n");
		goto err_config;
	}
	mutex_init(&ts->lock);
	idr_init(&ts->sq_idr);
	idr_init(&ts->cq_idr);
	INIT_LIST_HEAD(&ts->ready);
	INIT_LIST_HEAD(&ts->mapped);
	npusim_ts_inst = ts;

	ret = npusim_engine_start(ts);
	if (ret)
		goto err_engine;
	npusim_debugfs_init(ts);
	ret = misc_register(&npusim_misc);
	if (ret)
		goto err_misc;
	return 0;

err_misc:
	debugfs_remove_recursive(npusim_debugfs);
	npusim_engine_stop(ts);
err_engine:
	idr_destroy(&ts->cq_idr);
	idr_destroy(&ts->sq_idr);
err_config:
	kfree(ts);
	return ret;
}

/* No fd is open (each holds a module reference), so no queue is left. */
static void __exit npusim_exit(void)
{
	struct npusim_ts *ts = npusim_ts_inst;

	misc_deregister(&npusim_misc);
	debugfs_remove_recursive(npusim_debugfs);
	npusim_engine_stop(ts);
	idr_destroy(&ts->cq_idr);
	idr_destroy(&ts->sq_idr);
	mutex_destroy(&ts->lock);
	kfree(ts);
}

module_init(npusim_init);
module_exit(npusim_exit);

MODULE_DESCRIPTION("Simulated Ascend NPU task scheduler for steptime tests");
MODULE_LICENSE("GPL");
