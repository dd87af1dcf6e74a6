// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device a load times: its manager node, its driver's profile (the
 * hooks' names), and what the driver says of it through its URD
 * sub-driver: the counter's frequency and the chip's STARS SQE layout.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "loader_int.h"

/* Where npusim's hook objects keep (devid, tsid): its UAPI header says. */
#ifndef NPUSIM_TS_INST_ID_OFF
#define NPUSIM_TS_INST_ID_OFF	(~0u)
#endif
#ifndef NPUSIM_CHAN_ID_OFF
#define NPUSIM_CHAN_ID_OFF	(~0u)
#endif

/*
 * The real driver's names (hicann/driver: asdrv_pbl, asdrv_trs,
 * asdrv_trsbase) and npusim's mirror of them. Offsets are ~0 (unknown):
 * the program learns which device and queue a hook's object is instead
 * (on a kernel without lockdep the driver's would be 64 and 144, but a
 * guessed layout could misattribute).
 */
static const struct profile profiles[] = {
	{ "ascend", { "asdrv_pbl", "drv_ascend_intf_ioctl" },
	  { "asdrv_trs", "trs_logic_cq_enque" },
	  { "asdrv_trsbase", "trs_chan_trace_sqe" },
	  { "asdrv_trsbase", "chan_proc_fs_add_chan" },
	  { "asdrv_trsbase", "chan_proc_fs_del_chan" }, ~0u, ~0u },
	{ "npusim", { "npusim", "npusim_manager_ioctl" },
	  { "npusim", "npusim_logic_cq_enque" },
	  { "npusim", "npusim_chan_trace_sqe" },
	  { "npusim", "npusim_chan_proc_fs_add_chan" },
	  { "npusim", "npusim_chan_proc_fs_del_chan" },
	  NPUSIM_TS_INST_ID_OFF, NPUSIM_CHAN_ID_OFF },
	{ "generic", { NULL, NULL }, { NULL, NULL }, { NULL, NULL },
	  { NULL, NULL }, { NULL, NULL }, ~0u, ~0u },
};

const struct profile *profile_find(const char *name, const char *device)
{
	const char *base = strrchr(device, '/');
	size_t i;

	base = base ? base + 1 : device;
	if (!name) {
		if (strncmp(base, "davinci_manager", 15) == 0)
			name = "ascend";
		else if (strncmp(base, NPUSIM_DEV_NAME, strlen(NPUSIM_DEV_NAME)) == 0)
			name = "npusim";
		else
			name = "generic";
	}
	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (strcmp(profiles[i].name, name) == 0)
			return &profiles[i];
	return NULL;
}

/*
 * A fd of @c's device bound to its URD (device management) sub-driver, as
 * the driver's own library opens it for halGetDeviceInfo() and
 * halGetChipInfo(): -ENOTTY where the profile names no Ascend driver,
 * another -errno where the node or its URD cannot be opened.
 */
static int urd_open(const struct load_ctx *c)
{
	struct ascend_manager_arg urd = { .module_name = ASCEND_MODULE_URD };
	int fd, err;

	if (!c->prof->ioctl.fn)
		return -ENOTTY;
	fd = open(c->device, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, ASCEND_MANAGER_OPEN, &urd)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* URD command @cmd (sub-command @sub) about device @dev: 0 or -errno. */
static int urd_query(int fd, unsigned int cmd, __u32 sub, __u32 dev,
		     void *out, __u32 out_len)
{
	struct urd_ioctl_arg a = {
		.main_cmd = URD_MAIN_CMD_BASIC,
		.sub_cmd = sub,
		.input = (__u64)(uintptr_t)&dev,
		.input_len = sizeof(dev),
		.output = (__u64)(uintptr_t)out,
		.output_len = out_len,
	};

	return ioctl(fd, cmd, &a) ? -errno : 0;
}

/* Logical device ids the driver answers for (ASCEND_DEV_MAX_NUM). */
#define URD_MAX_DEVICES	64

/*
 * The device counter's frequency: given (--freq), or read where the driver
 * exposes it, as halGetDeviceInfo(INFO_TYPE_DEV_OSC_FREQUE) does: the URD
 * sub-driver of the manager node. Never assumed: 0 when it cannot be read
 * (the load then fails), and devices that disagree are refused, since
 * steptime converts every device's ticks at one frequency.
 */
__u64 counter_freq(const struct load_ctx *c)
{
	__u64 hz = 0, d_hz;
	__u32 dev;
	int fd;

	if (c->opts && c->opts->counter_freq_hz)
		return c->opts->counter_freq_hz;
	fd = urd_open(c);
	if (fd < 0)
		return 0;
	for (dev = 0; dev < URD_MAX_DEVICES; dev++) {
		d_hz = 0;
		if (urd_query(fd, URD_IOC_GET_DEV_OSC_FREQ,
			      URD_SUBCMD_GET_DEV_OSC_FREQ, dev, &d_hz,
			      sizeof(d_hz)) || !d_hz)
			break;
		if (hz && d_hz != hz) {
			fprintf(stderr, "steptime: devices 0 and %u count at %llu and %llu Hz: one frequency for all is needed (--freq)\n",
				dev, (unsigned long long)hz,
				(unsigned long long)d_hz);
			hz = 0;
			break;
		}
		hz = d_hz;
	}
	close(fd);
	return hz;
}

/*
 * The STARS SQE layout of a chip the driver names @name, 0 when steptime
 * does not know it. hicann/runtime picks it by chip type (dev_info_reg.cc):
 * 910B and 910_93 are CHIP_910_B_93 (isStarsV2 false), 950 is CHIP_DAVID
 * (isStarsV2 true); the driver names them "910B..", "910_93..", "950..".
 */
static int chip_stars(const char *name)
{
	if (strncmp(name, "910B", 4) == 0 || strncmp(name, "910_93", 6) == 0)
		return 1;
	if (strncmp(name, "950", 3) == 0)
		return 2;
	return 0;
}

#define STARS_HINT	"--stars 1 (910B, 910_93) or --stars 2 (950)"

/*
 * The chip of every device behind the node, as halGetChipInfo() reads it
 * (URD DMS_GET_CHIP_INFO): its STARS version into c->stars, device 0's name
 * into c->chip. 0 when it was read; -ENODATA when it cannot be (no URD, no
 * chip info: why in @why; or a chip steptime does not know); -EINVAL when
 * devices differ: one program parses one SQE layout.
 */
static int stars_read(struct load_ctx *c, char *why, size_t why_len)
{
	struct urd_chip_info ci;
	int fd, v, err = 0;
	__u32 dev;

	fd = urd_open(c);
	if (fd == -ENOTTY)
		snprintf(why, why_len, "profile %s: no Ascend driver to ask",
			 c->prof->name);
	else if (fd < 0)
		snprintf(why, why_len, "its URD sub-driver: %s",
			 strerror(-fd));
	if (fd < 0)
		return -ENODATA;
	for (dev = 0; dev < URD_MAX_DEVICES; dev++) {
		memset(&ci, 0, sizeof(ci));
		err = urd_query(fd, URD_IOC_GET_CHIP_INFO,
				URD_SUBCMD_GET_CHIP_INFO, dev, &ci, sizeof(ci));
		if (err && dev == 0)
			snprintf(why, why_len, "DMS_GET_CHIP_INFO: %s",
				 strerror(-err));
		if (err) {
			err = 0;
			break;
		}
		ci.name[sizeof(ci.name) - 1] = '\0';
		v = chip_stars(ci.name);
		if (dev == 0) {
			snprintf(c->chip, sizeof(c->chip), "%s", ci.name);
			c->stars = v;
			if (!v)
				break;
		} else if (v != c->stars) {
			fprintf(stderr, "steptime: device 0 (%s, STARS v%d) and device %u (%s) differ: one load parses one SQE layout\n",
				c->chip, c->stars, dev, ci.name);
			err = -EINVAL;
			break;
		}
	}
	close(fd);
	if (!err && !c->stars)
		err = -ENODATA;
	return err;
}

/*
 * The STARS SQE layout, read from the device, never assumed: --stars is
 * needed only where the driver cannot say, and one that contradicts what
 * the driver says is refused (parsed in the wrong layout, every task would
 * be miscounted without a sign).
 */
int stars_version(struct load_ctx *c)
{
	int want = OPT(c->opts, stars_version), err;
	char why[96] = "";

	if (want && want != 1 && want != 2) {
		fprintf(stderr, "steptime: STARS version %d: only 1 (910B, 910_93) and 2 (950) exist\n",
			want);
		return -EINVAL;
	}
	err = stars_read(c, why, sizeof(why));
	if (err == -EINVAL)
		return err;
	if (!err && want && want != c->stars) {
		fprintf(stderr, "steptime: --stars %d contradicts the device: %s (device 0) is an Ascend %s, STARS v%d (drop --stars)\n",
			want, c->device, c->chip, c->stars);
		return -EINVAL;
	}
	if (!err) {
		c->stars_from = want ? STEPTIME_STARS_FROM_BOTH :
				       STEPTIME_STARS_FROM_DEVICE;
		return 0;
	}
	if (want) {
		c->stars = want;
		c->stars_from = STEPTIME_STARS_FROM_OPTION;
		return 0;
	}
	if (c->chip[0])
		fprintf(stderr, "steptime: device 0 of %s is an Ascend %s, whose STARS SQE layout steptime does not know: give it with " STARS_HINT "\n",
			c->device, c->chip);
	else
		fprintf(stderr, "steptime: the chip behind %s cannot be read (%s): give its STARS SQE layout with " STARS_HINT "\n",
			c->device, why);
	return -EINVAL;
}

#define ASCEND_MANAGER	"/dev/davinci_manager"
#define NPUSIM_MANAGER	"/dev/" NPUSIM_DEV_NAME

int resolve_device(struct load_ctx *c)
{
	const char *dev = c->opts ? c->opts->device : NULL;
	struct stat st;

	if (!dev && access(ASCEND_MANAGER, F_OK) && access(NPUSIM_MANAGER, F_OK)) {
		fprintf(stderr, "steptime: no NPU manager device: neither %s (Ascend driver) nor %s (npusim) exists; name the device with --device PATH\n",
			ASCEND_MANAGER, NPUSIM_MANAGER);
		return -ENODEV;
	}
	if (!dev)
		dev = access(ASCEND_MANAGER, F_OK) == 0 ? ASCEND_MANAGER :
		      NPUSIM_MANAGER;
	c->device = dev;
	if (stat(dev, &st)) {
		fprintf(stderr, "steptime: device %s: %s\n", dev, strerror(errno));
		return -ENODEV;
	}
	if (!S_ISCHR(st.st_mode)) {
		fprintf(stderr, "steptime: %s is not a character device\n", dev);
		return -ENODEV;
	}
	/* The kernel's dev_t, not glibc's st_rdev encoding. */
	c->rdev = major(st.st_rdev) << 20 | minor(st.st_rdev);
	return 0;
}
