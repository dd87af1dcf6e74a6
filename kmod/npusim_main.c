// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: a simulated Ascend NPU, for testing steptime without the
 * hardware.
 *
 * /dev/npusim_manager stands in for /dev/davinci_manager: ASCEND_MANAGER_OPEN
 * binds a fd to a sub-driver and a device: "TSDRV", the task scheduler
 * (TRS), whose ioctls allocate stream ids, SQs, CQs and logic CQs, submit
 * SQEs, query SQ heads and receive completion reports with the real
 * driver's ABI; or "URD", device management, which tells the device's
 * counter frequency. The call path mirrors the real driver's, by name, so
 * that the same BPF program hooks both:
 *
 *   npusim_manager_ioctl()   drv_ascend_intf_ioctl()  every ioctl
 *   npusim_trs_ioctl()       trs_ioctl()              magic 'X'
 *   npusim_logic_cq_enque()  trs_logic_cq_enque()     every logic CQE
 *   npusim_chan_trace_sqe()  trs_chan_trace_sqe()     every SQE the kernel
 *                                                     moves to the device
 *   npusim_chan_proc_fs_add_chan()  chan_proc_fs_add_chan()  an SQ's channel
 *   npusim_chan_proc_fs_del_chan()  chan_proc_fs_del_chan()  made, and gone
 *   npusim:logic_cqe         trs_core:logic_cqe       tracepoint
 *
 * The full contract is include/uapi/ascend_trs.h, section 4. Module
 * parameters set the number of devices and TS, the chip family and the
 * defaults of each device's configuration; the debugfs directory npusim/
 * shows the configurations and the statistics.
 */
#include <linux/module.h>
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/version.h>
#include <linux/cred.h>

#include "npusim.h"

unsigned int npusim_devices = NPUSIM_DEFAULT_DEVICES;
module_param_named(devices, npusim_devices, uint, 0444);
MODULE_PARM_DESC(devices, "simulated devices (1..64)");

unsigned int npusim_ts_per_device = NPUSIM_DEFAULT_TS;
module_param_named(ts_per_device, npusim_ts_per_device, uint, 0444);
MODULE_PARM_DESC(ts_per_device, "task schedulers per device (1..4)");


unsigned int npusim_max_proc_kbytes = NPUSIM_DEFAULT_MAX_PROC_KBYTES;
module_param_named(max_proc_kbytes, npusim_max_proc_kbytes, uint, 0644);
MODULE_PARM_DESC(max_proc_kbytes, "kernel memory a process may hold (KiB)");

static unsigned int dev_uid;
module_param(dev_uid, uint, 0444);
MODULE_PARM_DESC(dev_uid, "owner of /dev/npusim_manager");

static unsigned int dev_gid;
module_param(dev_gid, uint, 0444);
MODULE_PARM_DESC(dev_gid, "group of /dev/npusim_manager (HwHiAiUser's)");

static unsigned int dev_mode = 0660;
module_param(dev_mode, uint, 0444);
MODULE_PARM_DESC(dev_mode, "mode of /dev/npusim_manager (0660)");

/* Defaults of every device's configuration. */
static unsigned int units = NPUSIM_DEFAULT_UNITS;
module_param(units, uint, 0444);
MODULE_PARM_DESC(units, "parallel execution units per TS (1..64)");

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

static unsigned int stars = 1;
module_param(stars, uint, 0444);
MODULE_PARM_DESC(stars, "SQE header: 1 STARS v1 (910B), 2 STARS v2 (950)");

static unsigned int sqcq_pair = 1;
module_param(sqcq_pair, uint, 0444);
MODULE_PARM_DESC(sqcq_pair,
		 "1: an SQ-CQ pair per ALLOC (STARS); 0: REUSE_CQ (pre-STARS)");

static char *chip_name;
module_param(chip_name, charp, 0444);
MODULE_PARM_DESC(chip_name,
		 "chip info name of every device (default by stars: 910B3, 950PR_9599)");

static unsigned int uio_mode = NPUSIM_UIO_KIO;
module_param(uio_mode, uint, 0444);
MODULE_PARM_DESC(uio_mode, "mapped SQs granted: 0 none, 1 uio_t, 2 uio_d");

static unsigned int mode_by_chip = 1;
module_param(mode_by_chip, uint, 0444);
MODULE_PARM_DESC(mode_by_chip,
		 "mapped SQs: 1 the chip (910B uio_t, 950 uio_d; default), 0 uio_mode decides");

static unsigned int send_mode;
module_param(send_mode, uint, 0444);
MODULE_PARM_DESC(send_mode, "a 950's send mode: 0 HIGH_PERFORMANCE, 1 HIGH_SECURITY (kio)");

static unsigned int soft_poll_ms = NPUSIM_SOFT_POLL_MS_MAX;
module_param(soft_poll_ms, uint, 0444);
MODULE_PARM_DESC(soft_poll_ms, "uio_t soft queue worker's poll period (1..4 ms)");

static unsigned int soft_trigger = 1;
module_param(soft_trigger, uint, 0444);
MODULE_PARM_DESC(soft_trigger, "1: a soft queue's trigger doorbell wakes its worker; 0: poll only");

struct npusim_dev *npusim_devs;
static struct dentry *npusim_debugfs;
static dev_t npusim_devt;
static struct cdev npusim_cdev;
static struct device npusim_device;
static atomic_t npusim_fds = ATOMIC_INIT(0);
static atomic_t npusim_bound[NPUSIM_MOD_COUNT];

static const char * const npusim_module_names[NPUSIM_MOD_COUNT] = {
	[NPUSIM_MOD_TSDRV]	= ASCEND_MODULE_TSDRV,
	[NPUSIM_MOD_URD]	= ASCEND_MODULE_URD,
};

static int npusim_open(struct inode *inode, struct file *file)
{
	struct npusim_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	ctx->owner_tgid = task_tgid_nr(current);
	ctx->acct = npusim_acct_get(ctx->owner_tgid);
	if (!ctx->acct) {
		kfree(ctx);
		return -ENOMEM;
	}
	mutex_init(&ctx->lock);
	ctx->file = file;
	file->private_data = ctx;
	atomic_inc(&npusim_fds);
	return 0;
}

static int npusim_release(struct inode *inode, struct file *file)
{
	struct npusim_ctx *ctx = file->private_data;

	npusim_trs_release(ctx);
	if (ctx->module != NPUSIM_MOD_NONE)
		atomic_dec(&npusim_bound[ctx->module]);
	atomic_dec(&npusim_fds);
	npusim_acct_put(ctx->acct);
	mutex_destroy(&ctx->lock);
	kfree(ctx);
	return 0;
}

static int npusim_mmap(struct file *file, struct vm_area_struct *vma)
{
	return npusim_queue_mmap(file->private_data, vma);
}

/*
 * The one place where ioctl arguments cross the user boundary: the handler
 * works on a kernel copy, written back when the command has output and
 * succeeded. An argument that cannot be written back fails before the
 * handler runs (the same bytes are written), so that a command never
 * creates something its caller cannot learn about.
 */
long npusim_ioctl_dispatch(const struct npusim_ioctl *c, void *buf,
			   struct npusim_ctx *ctx, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	long ret;

	if (copy_from_user(buf, uarg, c->size))
		return -EFAULT;
	if (c->out && copy_to_user(uarg, buf, c->size))
		return -EFAULT;
	ret = c->handler(ctx, buf, uarg);
	if (c->out && !ret && copy_to_user(uarg, buf, c->size))
		return -EFAULT;
	return ret;
}

/* Sum of every TS's statistics, and the node's own counts. */
void npusim_stats_sum(struct npusim_stats *s)
{
	u64 *sum = (u64 *)s;
	u32 d, t, i;

	memset(s, 0, sizeof(*s));
	for (d = 0; d < npusim_devices; d++) {
		for (t = 0; t < npusim_ts_per_device; t++) {
			struct npusim_ts *ts = &npusim_devs[d].ts[t];
			u64 *part = (u64 *)&ts->stats;

			mutex_lock(&ts->lock);
			for (i = 0; i < sizeof(*s) / sizeof(u64); i++)
				sum[i] += part[i];
			mutex_unlock(&ts->lock);
		}
	}
	s->fds = atomic_read(&npusim_fds);
	s->kmem_bytes = npusim_kmem_bytes();
	s->fail_nth_hits = npusim_fail_nth_hits();
}

static enum npusim_module npusim_module_find(const char *name)
{
	enum npusim_module m;

	for (m = NPUSIM_MOD_TSDRV; m < NPUSIM_MOD_COUNT; m++)
		if (!strcmp(name, npusim_module_names[m]))
			return m;
	return NPUSIM_MOD_NONE;
}

/* OPEN, as drv_ascend_intf_ioctl_open_cmd(). */
static long npusim_manager_open(struct npusim_ctx *ctx, void __user *uarg)
{
	struct ascend_manager_arg m;
	enum npusim_module mod;
	long ret;

	if (!uarg)
		return -EINVAL;
	if (copy_from_user(&m, uarg, sizeof(m)))
		return -EFAULT;
	m.module_name[sizeof(m.module_name) - 1] = 0;
	mod = npusim_module_find(m.module_name);
	if (!m.module_name[0])
		return -EINVAL;
	mutex_lock(&ctx->lock);
	if (ctx->opened)
		ret = -ENOSYS;	/* the driver's value for a second OPEN */
	else if (mod == NPUSIM_MOD_NONE)
		ret = -EINVAL;
	else if (m.device_id < 0 || m.device_id >= npusim_devices)
		ret = -ENODEV;
	else
		ret = 0;
	if (!ret) {
		WRITE_ONCE(ctx->dev, &npusim_devs[m.device_id]);
		ctx->opened = true;
		atomic_inc(&npusim_bound[mod]);
		/* publishes dev: npusim_ctx_ts() reads module, then dev */
		smp_store_release(&ctx->module, mod);
	}
	mutex_unlock(&ctx->lock);
	return ret;
}

/*
 * CLOSE, as drv_ascend_intf_ioctl_close_cmd(): the owner marks the fd as
 * closed on purpose; anybody else changes nothing. The argument is unused.
 */
static long npusim_manager_close(struct npusim_ctx *ctx)
{
	if (ctx->owner_tgid == task_tgid_nr(current))
		WRITE_ONCE(ctx->closed, true);
	return 0;
}

/* GET_MODULE_STATUS: 1 when no fd is bound to the named module. */
static long npusim_manager_status(void __user *uarg)
{
	struct ascend_module_status st;
	enum npusim_module mod;

	if (!uarg)
		return -EINVAL;
	if (copy_from_user(&st, uarg, sizeof(st)))
		return -EFAULT;
	if (!strnlen(st.name, sizeof(st.name)) ||
	    strnlen(st.name, sizeof(st.name)) == sizeof(st.name))
		return -EINVAL;
	mod = npusim_module_find(st.name);
	st.status = mod == NPUSIM_MOD_NONE || !atomic_read(&npusim_bound[mod]);
	if (copy_to_user(uarg, &st, sizeof(st)))
		return -EFAULT;
	return 0;
}

/* URD: the device counter frequency, as DMS_GET_OSC_FREQ_INFO_DEVICE. */
static int npusim_urd_osc_freq(struct npusim_dev *dev, void *out)
{
	struct npusim_ts *ts = &dev->ts[0];
	u64 *freq = out;

	mutex_lock(&ts->lock);
	*freq = ts->cfg.counter_freq_hz;
	mutex_unlock(&ts->lock);
	return 0;
}

/*
 * URD: the chip, as DMS_GET_CHIP_INFO (dms_chip_info_adapt.c), named by the
 * SQE layout the device speaks.
 */
static int npusim_urd_chip_info(struct npusim_dev *dev, void *out)
{
	struct npusim_ts *ts = &dev->ts[0];
	struct urd_chip_info *ci = out;
	u32 stars;

	mutex_lock(&ts->lock);
	stars = ts->cfg.stars;
	mutex_unlock(&ts->lock);
	ci->dev_id = dev->id;
	strscpy(ci->type, "Ascend", sizeof(ci->type));
	if (chip_name && *chip_name)
		strscpy(ci->name, chip_name, sizeof(ci->name));
	else
		strscpy(ci->name, stars == 2 ? NPUSIM_CHIP_NAME_V2 :
			NPUSIM_CHIP_NAME_V1, sizeof(ci->name));
	strscpy(ci->version, "V1", sizeof(ci->version));
	return 0;
}

/*
 * The URD commands npusim answers: input a u32 logical device id, output
 * out_len bytes, both lengths exact, as the driver's handlers check them.
 */
static const struct npusim_urd_cmd {
	unsigned int cmd;
	u32 sub_cmd;
	u32 out_len;
	int (*fn)(struct npusim_dev *dev, void *out);
} npusim_urd_cmds[] = {
	{ URD_IOC_GET_DEV_OSC_FREQ, URD_SUBCMD_GET_DEV_OSC_FREQ,
	  sizeof(u64), npusim_urd_osc_freq },
	{ URD_IOC_GET_CHIP_INFO, URD_SUBCMD_GET_CHIP_INFO,
	  sizeof(struct urd_chip_info), npusim_urd_chip_info },
};

/* Large enough for every output in npusim_urd_cmds[]. */
union npusim_urd_out {
	u64 freq;
	struct urd_chip_info chip;
};

static long npusim_urd_ioctl(struct npusim_ctx *ctx, unsigned int cmd,
			     unsigned long arg)
{
	const struct npusim_urd_cmd *c = NULL;
	union npusim_urd_out out = {};
	struct urd_ioctl_arg a;
	size_t i;
	u32 devid;
	int err;

	for (i = 0; i < ARRAY_SIZE(npusim_urd_cmds); i++)
		if (npusim_urd_cmds[i].cmd == cmd)
			c = &npusim_urd_cmds[i];
	if (!c)
		return -EOPNOTSUPP;
	if (!arg)
		return -EINVAL;
	if (copy_from_user(&a, (void __user *)arg, sizeof(a)))
		return -EFAULT;
	if (a.main_cmd != URD_MAIN_CMD_BASIC || a.sub_cmd != c->sub_cmd ||
	    a.input_len != sizeof(devid) || a.output_len != c->out_len ||
	    !a.input || !a.output)
		return -EINVAL;
	if (copy_from_user(&devid, u64_to_user_ptr(a.input), sizeof(devid)))
		return -EFAULT;
	if (devid >= npusim_devices)
		return -EINVAL;
	err = c->fn(&npusim_devs[devid], &out);
	if (err)
		return err;
	if (copy_to_user(u64_to_user_ptr(a.output), &out, c->out_len))
		return -EFAULT;
	return 0;
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
	enum npusim_module mod;

	switch (_IOC_TYPE(cmd)) {
	case ASCEND_MANAGER_MAGIC:
		switch (cmd) {
		case ASCEND_MANAGER_OPEN:
			return npusim_manager_open(ctx, (void __user *)arg);
		case ASCEND_MANAGER_CLOSE:
			return npusim_manager_close(ctx);
		case ASCEND_MANAGER_GET_MODULE_STATUS:
			return npusim_manager_status((void __user *)arg);
		}
		return -EINVAL;
	case NPUSIM_IOC_MAGIC:
		return npusim_ctl_ioctl(ctx, cmd, arg);
	}
	/* pairs with OPEN's release: a bound fd's dev is set */
	mod = smp_load_acquire(&ctx->module);
	if (mod == NPUSIM_MOD_TSDRV)
		return npusim_trs_ioctl(file, cmd, arg);
	if (mod == NPUSIM_MOD_URD)
		return npusim_urd_ioctl(ctx, cmd, arg);
	return -ENODEV;
}

static const struct file_operations npusim_fops = {
	.owner		= THIS_MODULE,
	.open		= npusim_open,
	.release	= npusim_release,
	.unlocked_ioctl	= npusim_manager_ioctl,
	.mmap		= npusim_mmap,
	.llseek		= noop_llseek,
};

/* The node's owner, group and mode, as the driver's install scripts set. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
static char *npusim_devnode(const struct device *dev, umode_t *mode,
			    kuid_t *uid, kgid_t *gid)
#else
static char *npusim_devnode(struct device *dev, umode_t *mode,
			    kuid_t *uid, kgid_t *gid)
#endif
{
	if (mode)
		*mode = dev_mode & 0777;
	if (uid)
		*uid = make_kuid(&init_user_ns, dev_uid);
	if (gid)
		*gid = make_kgid(&init_user_ns, dev_gid);
	return NULL;
}

static void npusim_device_release(struct device *dev)
{
}

static const struct device_type npusim_device_type = {
	.name		= "npusim",
	.devnode	= npusim_devnode,
};

static int npusim_node_add(void)
{
	int ret;

	ret = alloc_chrdev_region(&npusim_devt, 0, 1, NPUSIM_DEV_NAME);
	if (ret)
		return ret;
	cdev_init(&npusim_cdev, &npusim_fops);
	npusim_cdev.owner = THIS_MODULE;
	device_initialize(&npusim_device);
	npusim_device.devt = npusim_devt;
	npusim_device.type = &npusim_device_type;
	npusim_device.release = npusim_device_release;
	ret = dev_set_name(&npusim_device, NPUSIM_DEV_NAME);
	if (ret)
		goto err;
	ret = cdev_device_add(&npusim_cdev, &npusim_device);
	if (ret)
		goto err;
	return 0;

err:
	put_device(&npusim_device);
	unregister_chrdev_region(npusim_devt, 1);
	return ret;
}

static void npusim_node_del(void)
{
	cdev_device_del(&npusim_cdev, &npusim_device);
	put_device(&npusim_device);
	unregister_chrdev_region(npusim_devt, 1);
}

static int npusim_config_show(struct seq_file *m, void *v)
{
	struct npusim_config c;
	u32 d;

	for (d = 0; d < npusim_devices; d++) {
		struct npusim_ts *ts = &npusim_devs[d].ts[0];

		mutex_lock(&ts->lock);
		c = ts->cfg;
		mutex_unlock(&ts->lock);
		seq_printf(m, "device %u: units %u counter_freq_hz %llu counter_epoch %#llx default_duration_ns %u inject_error_every %u inject_error_code %u uio_mode %u duration_pct %u stars %u sqcq_pair %u sq_mode %u send_mode %u soft_poll_ms %u soft_trigger %u\n",
			   d, c.units, c.counter_freq_hz, c.counter_epoch,
			   c.default_duration_ns, c.inject_error_every,
			   c.inject_error_code, c.uio_mode, c.duration_pct,
			   c.stars, c.sqcq_pair, c.sq_mode, c.send_mode,
			   c.soft_poll_ms, c.soft_trigger);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(npusim_config);

static int npusim_stats_show(struct seq_file *m, void *v)
{
	struct npusim_stats s;

	npusim_stats_sum(&s);
	seq_printf(m, "fds %llu\nsqs %llu\ncqs %llu\nlogic_cqs %llu\nres_ids %llu\n",
		   s.fds, s.sqs, s.cqs, s.logic_cqs, s.res_ids);
	seq_printf(m, "tasks_queued %llu\nreports_pending %llu\nsubmitted %llu\n",
		   s.tasks_queued, s.reports_pending, s.submitted);
	seq_printf(m, "completed %llu\nreports %llu\ncancelled %llu\nerrors %llu\n",
		   s.completed, s.reports, s.cancelled, s.errors);
	seq_printf(m, "report_drops %llu\nkmem_bytes %llu\ntraced_sqes %llu\nfail_nth_hits %llu\n",
		   s.report_drops, s.kmem_bytes, s.traced_sqes,
		   s.fail_nth_hits);
	seq_printf(m, "sent_sqes %llu\n", s.sent_sqes);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(npusim_stats);

static void npusim_debugfs_init(void)
{
	npusim_debugfs = debugfs_create_dir("npusim", NULL);
	debugfs_create_file("config", 0444, npusim_debugfs, NULL,
			    &npusim_config_fops);
	debugfs_create_file("stats", 0444, npusim_debugfs, NULL,
			    &npusim_stats_fops);
}

static int npusim_config_init(struct npusim_config *c)
{
	memset(c, 0, sizeof(*c));
	c->units = units;
	c->counter_freq_hz = counter_freq_hz;
	c->counter_epoch = counter_epoch;
	c->default_duration_ns = default_duration_ns;
	c->inject_error_every = inject_error_every;
	c->inject_error_code = inject_error_code;
	c->uio_mode = uio_mode;
	c->duration_pct = 100;
	c->stars = stars;
	c->sqcq_pair = sqcq_pair;
	c->sq_mode = mode_by_chip;
	c->send_mode = send_mode;
	c->soft_poll_ms = soft_poll_ms;
	c->soft_trigger = soft_trigger;
	return npusim_config_check(c, NPUSIM_CFG_ALL);
}

static void npusim_ts_fini(struct npusim_ts *ts)
{
	u32 i;

	if (ts->engine)
		npusim_engine_stop(ts);
	if (ts->logic_phy_chan.ts)
		npusim_chan_proc_fs_del_chan(&ts->logic_phy_chan);
	idr_destroy(&ts->sq_idr);
	idr_destroy(&ts->cq_idr);
	idr_destroy(&ts->logic_cq_idr);
	for (i = 0; i < TRS_RES_HW_SQ; i++)
		idr_destroy(&ts->res_idr[i]);
	for (i = 0; i < NPUSIM_SYNC_KINDS; i++)
		kvfree(ts->sync[i]);
	mutex_destroy(&ts->lock);
}

static int npusim_ts_init(struct npusim_dev *dev, u32 t,
			  const struct npusim_config *cfg)
{
	struct npusim_ts *ts = &dev->ts[t];
	u32 i;

	ts->dev = dev;
	ts->ts_id = t;
	ts->cfg = *cfg;
	mutex_init(&ts->lock);
	idr_init(&ts->sq_idr);
	idr_init(&ts->cq_idr);
	idr_init(&ts->logic_cq_idr);
	for (i = 0; i < TRS_RES_HW_SQ; i++)
		idr_init(&ts->res_idr[i]);
	INIT_LIST_HEAD(&ts->ready);
	INIT_LIST_HEAD(&ts->mapped);
	for (i = 0; i < NPUSIM_SYNC_KINDS; i++) {
		ts->sync[i] = kvzalloc(sizeof(*ts->sync[i]), GFP_KERNEL);
		if (!ts->sync[i])
			return -ENOMEM;
	}
	return npusim_engine_start(ts);
}

static void npusim_devs_fini(void)
{
	u32 d, t;

	for (d = 0; d < npusim_devices; d++)
		for (t = 0; t < npusim_ts_per_device; t++)
			if (npusim_devs[d].ts[t].dev)
				npusim_ts_fini(&npusim_devs[d].ts[t]);
	kfree(npusim_devs);
}

static int npusim_devs_init(void)
{
	struct npusim_config cfg;
	u32 d, t;
	int ret;

	ret = npusim_config_init(&cfg);
	if (ret || !npusim_devices || npusim_devices > NPUSIM_MAX_DEVICES ||
	    !npusim_ts_per_device || npusim_ts_per_device > NPUSIM_MAX_TS) {
		pr_err("npusim: invalid module parameters\n");
		return -EINVAL;
	}
	npusim_devs = kcalloc(npusim_devices, sizeof(*npusim_devs), GFP_KERNEL);
	if (!npusim_devs)
		return -ENOMEM;
	for (d = 0; d < npusim_devices; d++) {
		npusim_devs[d].id = d;
		for (t = 0; t < npusim_ts_per_device; t++) {
			ret = npusim_ts_init(&npusim_devs[d], t, &cfg);
			if (ret) {
				npusim_devs_fini();
				return ret;
			}
		}
	}
	return 0;
}

static int __init npusim_init(void)
{
	int ret;

	ret = npusim_devs_init();
	if (ret)
		return ret;
	npusim_debugfs_init();
	npusim_proc_init();
	ret = npusim_node_add();
	if (ret) {
		npusim_proc_fini();
		debugfs_remove_recursive(npusim_debugfs);
		npusim_devs_fini();
	}
	return ret;
}

/* No fd is open (each holds a module reference), so no queue is left. */
static void __exit npusim_exit(void)
{
	npusim_node_del();
	npusim_proc_fini();
	debugfs_remove_recursive(npusim_debugfs);
	npusim_devs_fini();
}

module_init(npusim_init);
module_exit(npusim_exit);

MODULE_DESCRIPTION("Simulated Ascend NPU (davinci_manager, TRS) for steptime tests");
MODULE_LICENSE("GPL");
