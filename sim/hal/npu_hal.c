// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * npu HAL: streams and events driven the way CANN's runtime drives a 910B,
 * over the driver's user-space library (libascend_hal.so; npusim's stand-in
 * in sim/ascend_hal/): a device opened through it submits, receives and
 * queries through its hal* entry points, as CANN's runtime does. See
 * include/npusim/hal.h for the contracts.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <npusim/hal.h>
#include "../ascend_hal/ascend_hal.h"

/* CANN's 910B depths: normal CQ and logic CQ entries. */
#define HAL_CQ_DEPTH		1024
#define HAL_LOGIC_CQ_DEPTH	1024
#define HAL_MAX_SQ_DEPTH	TRS_SQ_MAX_DEPTH

struct npu_dev {
	int fd;
	bool hal;			/* opened by halDeviceOpen() */
	int device_id;
	__u32 ts_id;
	int chip;			/* NPU_CHIP_STARS or _PRE_STARS */
	int stars;			/* SQE header version, 1 or 2 */
	pthread_mutex_t lock;		/* the fields below */
	__u32 normal_cq;		/* pre-STARS: the CQ streams share */
	unsigned int normal_cq_users;
	__u64 freq_hz;			/* 0 until read */
	struct npu_task_ops task;	/* a runtime's, when .send is set */
};

struct npu_sqcq {
	struct npu_dev *dev;
	__u32 sq_id;
	__u32 cq_id;
	__u32 depth;
	__u32 cq_depth;
	__u32 cqe_size;			/* a hardware CQ slot */
	bool reuse_cq;
	pthread_mutex_t lock;		/* one sender at a time on the ring */
	struct trs_uio_info uio;
	volatile __u32 *head;		/* mapped SQ, else NULL */
	volatile __u32 *tail;
	struct trs_sq_shr_info *shr;	/* send statistics, or NULL */
	struct trs_sqe *ring;
	void *map;
	size_t map_len;
	bool hal_mapped;		/* the library's mapped SQ */
};

struct npu_logic_cq {
	struct npu_dev *dev;
	__u32 id;
	__u32 depth;
};

struct npu_event {
	struct npu_dev *dev;
	__u32 flags;
	__u32 event_id;			/* TRS_RES_EVENT of the device */
	bool has_id;
	/* Under ev_lock: */
	int state;			/* EV_* */
	struct npu_stream *stream;	/* while EV_PENDING */
	struct npu_event *next;		/* the stream's pending list */
	__u64 seq;			/* stream sequence of the record */
	__u32 task_id;
	bool wr_cqe;
	bool has_ts;
	__u64 ticks;
};

enum { EV_NEVER, EV_PENDING, EV_DONE, EV_FAILED, EV_CANCELED };

struct npu_stream {
	struct npu_stream *next;	/* registry chain */
	struct npu_dev *dev;
	struct npu_sqcq *q;
	struct npu_logic_cq *lcq;
	__u32 stream_id;
	bool own_id;
	bool dvpp;
	unsigned int recycle_every;
	pthread_mutex_t lock;
	__u32 next_task;
	__u32 tail;			/* SQ position after the last SQE */
	__u64 submitted;		/* SQEs sent: the stream's sequence */
	__u64 done;			/* SQEs known complete */
	unsigned int silent;		/* tasks since the last wr_cqe one */
	__u64 wr_cqe_sent;		/* SQEs that asked for a report */
	__u64 reports;
	__u64 errors;
	struct npu_event *events;	/* pending records (ev_lock) */
	void (*on_report)(const struct trs_logic_cqe *cqe, void *ctx);
	void *ctx;
};

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;

/* Same rule as libbpf's OPTS_VALID: unknown trailing bytes must be zero. */
static bool opts_valid(const void *opts, size_t user_sz, size_t our_sz)
{
	const char *p = opts;
	size_t i;

	if (!opts)
		return true;
	if (user_sz < sizeof(size_t))
		return false;
	for (i = our_sz; i < user_sz; i++)
		if (p[i])
			return false;
	return true;
}

#define OPTS_GET(opts, field, def)					\
	((opts) && (opts)->sz >= offsetof(typeof(*(opts)), field) +	\
		   sizeof((opts)->field) ? (opts)->field : (def))

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/*
 * A hal* return as a negative errno. An ioctl failure keeps the ioctl's
 * errno (the library returns right after it), as trs_dev_ioctl() logs it.
 */
static int hal_err(drvError_t ret, int ioctl_errno)
{
	switch (ret) {
	case DRV_ERROR_NONE:
		return 0;
	case DRV_ERROR_WAIT_TIMEOUT:
		return -ETIMEDOUT;
	case DRV_ERROR_BUS_DOWN:
		return -EBUSY;
	case DRV_ERROR_NO_RESOURCES:
		return -ENOSPC;
	case DRV_ERROR_NOT_SUPPORT:
		return -EOPNOTSUPP;
	case DRV_ERROR_STATUS_FAIL:
		return -ESHUTDOWN;
	case DRV_ERROR_OUT_OF_MEMORY:
		return -ENOMEM;
	case DRV_ERROR_OPEN_FAILED:
	case DRV_ERROR_UNINIT:
		return -ENODEV;
	case DRV_ERROR_IOCRL_FAIL:
		return ioctl_errno ? -ioctl_errno : -EIO;
	case DRV_ERROR_INNER_ERR:
		return -EPROTO;
	default:
		return -EINVAL;
	}
}

/* Call a hal* entry point; the negative errno of its result. */
#define HAL_CALL(call)	({ errno = 0; drvError_t __r = (call);		\
			   hal_err(__r, errno); })

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Poll backoff of the waits that have nothing to block on (SQ head
 * queries, as the runtime's own busy-wait): 20 us doubling to 1 ms.
 */
static void backoff(unsigned int *us)
{
	struct timespec ts = { .tv_nsec = (long)*us * 1000 };

	nanosleep(&ts, NULL);
	if (*us < 1000)
		*us *= 2;
}

/* Milliseconds left before @deadline (timeout < 0: forever, -1). */
static int ms_left(int timeout_ms, __u64 deadline)
{
	__u64 now;

	if (timeout_ms < 0)
		return -1;
	now = now_ms();
	return now >= deadline ? 0 : (int)(deadline - now);
}

/* ---------------------------------------------------------------------- */

/* npusim's module parameter @name, or @def on any other device. */
static int sim_param(const char *name, int def)
{
	char path[128], buf[16];
	int fd, n;

	snprintf(path, sizeof(path), "/sys/module/npusim/parameters/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return def;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return def;
	buf[n] = 0;
	return atoi(buf);
}

/*
 * The SQE header and queue sharing of the device: npusim's config of it
 * (tests change it per device), else its module parameters; another
 * device: STARS v1 pairs.
 */
static void dev_sim_shape(const struct npu_dev *dev, int *stars, int *pair)
{
	struct npusim_config c = { .device = (__u32)dev->device_id };

	if (!ioctl(dev->fd, NPUSIM_IOC_GET_CONFIG, &c)) {
		*stars = c.stars == 2 ? 2 : 1;
		*pair = !!c.sqcq_pair;
		return;
	}
	*stars = sim_param("stars", 1) == 2 ? 2 : 1;
	*pair = sim_param("sqcq_pair", 1);
}

/*
 * Open @dev->device_id through the driver's library, once per process as
 * the runtime does: -EALREADY when this process has it open already.
 */
static int hal_dev_open(struct npu_dev *dev)
{
	halDevOpenIn in = { 0 };
	halDevOpenOut out;
	drvError_t ret;

	if (dev->device_id < 0)
		return -ENODEV;
	errno = 0;
	ret = halDeviceOpen((uint32_t)dev->device_id, &in, &out);
	if (ret == DRV_ERROR_REPEATED_INIT)
		return -EALREADY;
	if (ret)
		return errno ? -errno : -ENODEV;
	dev->fd = npusim_hal_dev_fd((uint32_t)dev->device_id);
	dev->hal = true;
	return 0;
}

struct npu_dev *npu_dev_open(const struct npu_dev_opts *opts)
{
	struct ascend_manager_arg arg = { .module_name = ASCEND_MODULE_TSDRV };
	const char *path;
	struct npu_dev *dev;
	int err, chip, stars, pair;

	if (!opts_valid(opts, opts ? opts->sz : 0, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	chip = OPTS_GET(opts, chip, NPU_CHIP_AUTO);
	if (chip < NPU_CHIP_AUTO || chip > NPU_CHIP_PRE_STARS) {
		errno = EINVAL;
		return NULL;
	}
	path = OPTS_GET(opts, path, NULL);
	if (!path)
		path = getenv("NPU_HAL_DEVICE");
	if (!path || !*path)
		path = NPU_DEFAULT_DEVICE;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->device_id = OPTS_GET(opts, device_id, 0);
	dev->ts_id = OPTS_GET(opts, ts_id, 0);
	if (!OPTS_GET(opts, path, NULL) && !OPTS_GET(opts, no_bind, false)) {
		err = hal_dev_open(dev);
		if (!err)
			goto bound;
		if (err != -EALREADY) {
			free(dev);
			errno = -err;
			return NULL;
		}
		/* a second context of the device: a fd of its own (tests) */
	}
	dev->fd = open(path, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0)
		goto err_free;
	if (!OPTS_GET(opts, no_bind, false)) {
		arg.device_id = dev->device_id;
		err = xioctl(dev->fd, ASCEND_MANAGER_OPEN, &arg);
		if (err) {
			close(dev->fd);
			errno = -err;
			goto err_free;
		}
	}
bound:
	dev_sim_shape(dev, &stars, &pair);
	if (chip == NPU_CHIP_AUTO)
		chip = pair ? NPU_CHIP_STARS : NPU_CHIP_PRE_STARS;
	dev->chip = chip;
	dev->stars = stars;
	pthread_mutex_init(&dev->lock, NULL);
	return dev;

err_free:
	err = errno;
	free(dev);
	errno = err;
	return NULL;
}

void npu_dev_close(struct npu_dev *dev)
{
	if (!dev)
		return;
	if (dev->hal) {
		halDevCloseIn in = { 0 };

		halDeviceClose((uint32_t)dev->device_id, &in);
	} else {
		close(dev->fd);
	}
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

int npu_dev_fd(const struct npu_dev *dev)
{
	return dev ? dev->fd : -EINVAL;
}

int npu_dev_id(const struct npu_dev *dev)
{
	return dev ? dev->device_id : -EINVAL;
}

int npu_dev_ts_id(const struct npu_dev *dev)
{
	return dev ? (int)dev->ts_id : -EINVAL;
}

int npu_dev_chip(const struct npu_dev *dev)
{
	return dev ? dev->chip : -EINVAL;
}

int npu_dev_stars_version(const struct npu_dev *dev)
{
	return dev ? dev->stars : -EINVAL;
}

int npu_dev_set_task_ops(struct npu_dev *dev, const struct npu_task_ops *ops)
{
	if (!dev || !ops || !opts_valid(ops, ops->sz, sizeof(*ops)) ||
	    ops->sz < offsetof(struct npu_task_ops, sq_wait) +
		      sizeof(ops->sq_wait) ||
	    !ops->max_sqes || !ops->send || !ops->sq_head || !ops->sq_wait)
		return -EINVAL;
	if (!dev->hal)
		return -EOPNOTSUPP;
	dev->task = *ops;
	dev->task.sz = sizeof(dev->task);
	return 0;
}

/*
 * The counter frequency as a real host reads it (halGetDeviceInfo's
 * DEV_OSC_FREQ): a second fd of the manager node OPENed with "URD".
 */
static int urd_osc_freq(const struct npu_dev *dev, __u64 *hz)
{
	struct ascend_manager_arg arg = { .module_name = ASCEND_MODULE_URD,
					  .device_id = dev->device_id };
	__u32 devid = (__u32)dev->device_id;
	struct urd_ioctl_arg ua = {
		.devid = devid,
		.main_cmd = URD_MAIN_CMD_BASIC,
		.sub_cmd = URD_SUBCMD_GET_DEV_OSC_FREQ,
		.input = (__u64)(uintptr_t)&devid,
		.input_len = sizeof(devid),
		.output = (__u64)(uintptr_t)hz,
		.output_len = sizeof(*hz),
	};
	char path[64];
	int fd, err;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", dev->fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = xioctl(fd, ASCEND_MANAGER_OPEN, &arg);
	if (!err)
		err = xioctl(fd, URD_IOC_GET_DEV_OSC_FREQ, &ua);
	close(fd);
	return err;
}

int npu_dev_counter_freq(struct npu_dev *dev, __u64 *hz)
{
	__u64 f = 0;
	int err;

	if (!dev || !hz)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	f = dev->freq_hz;
	pthread_mutex_unlock(&dev->lock);
	if (!f) {
		err = urd_osc_freq(dev, &f);
		if (err)
			return err;
		if (!f)
			return -ENOTTY;
		pthread_mutex_lock(&dev->lock);
		dev->freq_hz = f;
		pthread_mutex_unlock(&dev->lock);
	}
	*hz = f;
	return 0;
}

/* TRS_RES_* as the library's drvIdType_t (its trs_res_type_trans). */
static drvIdType_t hal_id_type(int res_type)
{
	switch (res_type) {
	case TRS_RES_STREAM:
		return DRV_STREAM_ID;
	case TRS_RES_EVENT:
		return DRV_EVENT_ID;
	case TRS_RES_MODEL:
		return DRV_MODEL_ID;
	case TRS_RES_NOTIFY:
		return DRV_NOTIFY_ID;
	case TRS_RES_CMO:
		return DRV_CMO_ID;
	case TRS_RES_CNT_NOTIFY:
		return DRV_CNT_NOTIFY_ID;
	default:
		return DRV_INVALID_ID;
	}
}

int npu_res_id_alloc(struct npu_dev *dev, int res_type)
{
	struct trs_res_id_para p = { .res_type = res_type };
	int err;

	if (!dev)
		return -EINVAL;
	if (dev->hal) {
		struct halResourceIdInputInfo in = { .tsId = dev->ts_id };
		struct halResourceIdOutputInfo out;

		in.type = hal_id_type(res_type);
		if (in.type == DRV_INVALID_ID)
			return -EINVAL;
		err = HAL_CALL(halResourceIdAlloc(dev->device_id, &in, &out));
		return err ? err : (int)out.resourceId;
	}
	p.tsid = dev->ts_id;
	err = xioctl(dev->fd, TRS_IOC_RES_ID_ALLOC, &p);
	return err ? err : (int)p.id;
}

int npu_res_id_free(struct npu_dev *dev, int res_type, __u32 id)
{
	struct trs_res_id_para p = { .res_type = res_type, .id = id };

	if (!dev)
		return -EINVAL;
	if (dev->hal) {
		struct halResourceIdInputInfo in = {
			.type = hal_id_type(res_type), .tsId = dev->ts_id,
			.resourceId = id,
		};

		if (in.type == DRV_INVALID_ID)
			return -EINVAL;
		return HAL_CALL(halResourceIdFree(dev->device_id, &in));
	}
	p.tsid = dev->ts_id;
	return xioctl(dev->fd, TRS_IOC_RES_ID_FREE, &p);
}

/* ---------------------------------------------------------------------- */

static void sqcq_unmap(struct npu_sqcq *q)
{
	if (q->map)
		munmap(q->map, q->map_len);
	q->map = NULL;
}

/* The queue npusim mapped for us at ALLOC (trs_uio_info, uio_flag 1). */
static int sqcq_take_map(struct npu_sqcq *q)
{
	const struct trs_uio_info *u = &q->uio;
	__u64 tail;

	if (!u->uio_flag)
		return 0;
	/* A 950's uio_d SQ has no tail word: its doorbell is the tail. */
	tail = u->sq_ctrl_addr[TRS_UIO_TAIL];
	if (!tail && u->soft_que_flag == TRS_SOFT_QUE_NONE)
		tail = u->sq_ctrl_addr[TRS_UIO_DB];
	if (!u->sq_que_addr || !u->sq_ctrl_addr[TRS_UIO_HEAD] || !tail)
		return -EPROTO;
	q->ring = (struct trs_sqe *)(uintptr_t)u->sq_que_addr;
	q->head = (volatile __u32 *)(uintptr_t)u->sq_ctrl_addr[TRS_UIO_HEAD];
	q->tail = (volatile __u32 *)(uintptr_t)tail;
	q->shr = (struct trs_sq_shr_info *)(uintptr_t)
		 u->sq_ctrl_addr[TRS_UIO_SHR_INFO];
	q->map = (char *)q->ring - NPUSIM_SQ_MMAP_SQE_OFF;
	q->map_len = NPUSIM_SQ_MMAP_SIZE(q->depth);
	return 0;
}

static int sqcq_ioctl_free(struct npu_sqcq *q, __u32 flag)
{
	struct trs_sqcq_free_info fi = {
		.type = TRS_SQCQ_TYPE_NORMAL,
		.tsId = q->dev->ts_id,
		.sqId = q->sq_id,
		.cqId = q->cq_id,
		.flag = flag,
	};

	if (q->dev->hal)
		return HAL_CALL(halSqCqFree(q->dev->device_id,
					    (struct halSqCqFreeInfo *)&fi));
	return xioctl(q->dev->fd, TRS_IOC_SQCQ_FREE, &fi);
}

/*
 * halSqCqAllocate(): the library asks for a mapped SQ itself, whatever
 * @mapped said, and keeps the mapping; what npusim chose is in q->uio.
 */
static int hal_sqcq_alloc(struct npu_dev *dev, struct npu_sqcq *q,
			  struct trs_sqcq_alloc_info *ai)
{
	struct halSqCqInputInfo in;
	struct halSqCqOutputInfo out;
	int err;

	memcpy(&in, ai, sizeof(in));
	memset(in.res, 0, sizeof(in.res));
	err = HAL_CALL(halSqCqAllocate(dev->device_id, &in, &out));
	if (err)
		return err;
	ai->sqId = out.sqId;
	ai->cqId = out.cqId;
	memset(&q->uio, 0, sizeof(q->uio));
	npusim_hal_sq_uio(dev->device_id, dev->ts_id, out.sqId, &q->uio);
	/* queueVAddr is an SHM SQ's alone: the mode is in trs_uio_info */
	q->hal_mapped = q->uio.uio_flag != 0;
	return 0;
}

struct npu_sqcq *npu_sqcq_alloc(struct npu_dev *dev,
				const struct npu_sqcq_opts *opts)
{
	struct trs_sqcq_alloc_info ai = {
		.type = TRS_SQCQ_TYPE_NORMAL,
		.sqeSize = TRS_SQE_SIZE,
		.cqeSize = TRS_HW_CQE_SIZE,
		.info = { TRS_STREAM_ID_NONE },
	};
	struct npu_sqcq *q;
	__u32 sid;
	int err;

	if (!dev || !opts_valid(opts, opts ? opts->sz : 0, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	ai.tsId = dev->ts_id;
	/* As the runtime: v2's 20-byte CQE takes a 32-byte slot. */
	if (dev->stars == 2)
		ai.cqeSize = TRS_HW_CQE_SLOT_V2;
	q->cqe_size = ai.cqeSize;
	ai.sqeDepth = OPTS_GET(opts, sq_depth, 0) ?: 1024;
	ai.cqeDepth = OPTS_GET(opts, cq_depth, 0) ?: HAL_CQ_DEPTH;
	sid = OPTS_GET(opts, stream_id, 0);
	if (sid || OPTS_GET(opts, bind_stream, false))
		ai.info[0] = sid;
	if (OPTS_GET(opts, reuse_cq, false)) {
		ai.flag |= TSDRV_FLAG_REUSE_CQ;
		ai.cqId = OPTS_GET(opts, cq_id, 0);
		q->reuse_cq = true;
	}
	/* Any non-zero address asks; npusim picks where it maps. */
	if (OPTS_GET(opts, mapped, false))
		q->uio.sq_que_addr = 1;
	ai.uio_info = (__u64)(uintptr_t)&q->uio;

	if (dev->hal) {
		err = hal_sqcq_alloc(dev, q, &ai);
		if (err)
			goto err_free;
		q->dev = dev;
		q->sq_id = ai.sqId;
		q->cq_id = ai.cqId;
		q->depth = ai.sqeDepth;
		q->cq_depth = ai.cqeDepth;
		pthread_mutex_init(&q->lock, NULL);
		return q;
	}
	err = xioctl(dev->fd, TRS_IOC_SQCQ_ALLOC, &ai);
	if (err)
		goto err_free;
	q->dev = dev;
	q->sq_id = ai.sqId;
	q->cq_id = ai.cqId;
	q->depth = ai.sqeDepth;
	q->cq_depth = ai.cqeDepth;
	pthread_mutex_init(&q->lock, NULL);
	if (!q->uio.uio_flag)
		q->uio.sq_que_addr = 0;
	err = sqcq_take_map(q);
	if (err) {
		sqcq_ioctl_free(q, q->reuse_cq ? TSDRV_FLAG_REUSE_CQ : 0);
		pthread_mutex_destroy(&q->lock);
		goto err_free;
	}
	return q;

err_free:
	free(q);
	errno = -err;
	return NULL;
}

int npu_sqcq_free_flags(struct npu_sqcq *q, __u32 flag)
{
	int err;

	if (!q)
		return 0;
	err = sqcq_ioctl_free(q, flag);
	sqcq_unmap(q);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return err;
}

int npu_sqcq_free(struct npu_sqcq *q)
{
	return npu_sqcq_free_flags(q, q && q->reuse_cq ? TSDRV_FLAG_REUSE_CQ : 0);
}

int npu_sqcq_sq_id(const struct npu_sqcq *q)
{
	return q ? (int)q->sq_id : -EINVAL;
}

int npu_sqcq_cq_id(const struct npu_sqcq *q)
{
	return q ? (int)q->cq_id : -EINVAL;
}

int npu_sqcq_depth(const struct npu_sqcq *q)
{
	return q ? (int)q->depth : -EINVAL;
}

bool npu_sqcq_is_mapped(const struct npu_sqcq *q)
{
	return q && (q->head || q->hal_mapped);
}

int npu_sqcq_uio_info(const struct npu_sqcq *q, struct trs_uio_info *info)
{
	if (!q || !info)
		return -EINVAL;
	*info = q->uio;
	return 0;
}

int npu_sqcq_sq_head(const struct npu_sqcq *q)
{
	if (!q || !npu_sqcq_is_mapped(q))
		return -EINVAL;
	if (q->hal_mapped) {
		long head = npu_sqcq_query((struct npu_sqcq *)q,
					   TRS_SQCQ_PROP_SQ_HEAD);

		return head < 0 ? (int)head : (int)head;
	}
	return (int)__atomic_load_n(q->head, __ATOMIC_ACQUIRE);
}

long npu_sqcq_query(struct npu_sqcq *q, __u32 prop)
{
	struct trs_sqcq_query_info qi = {
		.type = TRS_SQCQ_TYPE_NORMAL,
		.prop = prop,
	};
	int err;

	if (!q)
		return -EINVAL;
	qi.tsId = q->dev->ts_id;
	qi.sqId = q->sq_id;
	qi.cqId = q->cq_id;
	if (q->dev->task.sq_head && prop == TRS_SQCQ_PROP_SQ_HEAD)
		err = hal_err(q->dev->task.sq_head(q->dev->device_id, qi.tsId,
						   qi.sqId, &qi.value[0]), 0);
	else if (q->dev->hal)
		err = HAL_CALL(halSqCqQuery(q->dev->device_id,
					    (struct halSqCqQueryInfo *)&qi));
	else
		err = xioctl(q->dev->fd, TRS_IOC_SQCQ_QUERY, &qi);
	return err ? err : (long)qi.value[0];
}

/* Free slots of a mapped ring: tail == head is empty, so one stays unused. */
static __u32 ring_room(const struct npu_sqcq *q, __u32 tail)
{
	__u32 head = __atomic_load_n(q->head, __ATOMIC_ACQUIRE);

	return (head + q->depth - tail - 1) % q->depth;
}

static int mapped_send(struct npu_sqcq *q, const void *sqes, unsigned int n,
		       int timeout_ms)
{
	__u64 deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	unsigned int us = 20;
	__u32 tail, i;

	if (n < 1 || n >= q->depth)
		return -EINVAL;
	tail = *q->tail;
	if (ring_room(q, tail) < n && q->shr)
		q->shr->send_full++;
	while (ring_room(q, tail) < n) {
		if (!timeout_ms)
			return -EAGAIN;
		if (timeout_ms > 0 && now_ms() >= deadline)
			return -ETIMEDOUT;
		backoff(&us);
	}
	for (i = 0; i < n; i++)
		memcpy(&q->ring[(tail + i) % q->depth],
		       (const char *)sqes + (size_t)i * TRS_SQE_SIZE,
		       TRS_SQE_SIZE);
	/* The tail store is the doorbell. */
	__atomic_store_n(q->tail, (tail + n) % q->depth, __ATOMIC_RELEASE);
	/*
	 * Then the count, as the driver's user library does (one sender at
	 * a time: q->lock): what a mapped SQ was sent, for whoever reads the
	 * shared page, never behind the doorbell.
	 */
	if (q->shr)
		__atomic_store_n(&q->shr->send_ok, q->shr->send_ok + n,
				 __ATOMIC_RELEASE);
	return (int)tail;
}

/*
 * halSqTaskSend(). A mapped SQ without room fails at once in the library
 * (DRV_ERROR_NO_RESOURCES): the caller retries, as the runtime does, until
 * @timeout_ms; a kio SQ's SEND waits in the kernel.
 */
static int hal_send(struct npu_sqcq *q, const void *sqes, unsigned int n,
		    int timeout_ms)
{
	__u64 deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	struct halTaskSendInfo si = {
		.type = DRV_NORMAL_TYPE,
		.tsId = q->dev->ts_id,
		.sqId = q->sq_id,
		.timeout = timeout_ms,
		.sqe_addr = (uint8_t *)sqes,
		.sqe_num = n,
	};
	unsigned int us = 20;
	int err;

	for (;;) {
		err = HAL_CALL(halSqTaskSend(q->dev->device_id, &si));
		if (err != -ENOSPC || !q->hal_mapped)
			break;
		if (!timeout_ms)
			return -EAGAIN;
		if (timeout_ms > 0 && now_ms() >= deadline)
			return -ETIMEDOUT;
		backoff(&us);
	}
	return err ? err : (int)si.pos;
}

/*
 * One task through the runtime's send, which retries by the chip's rules;
 * a queue still full when it gave up is a timeout, as hal_send's.
 */
static int task_send(struct npu_sqcq *q, const void *sqes, unsigned int n,
		     int timeout_ms)
{
	__u32 pos;
	__s32 ret;

	if (n > q->dev->task.max_sqes)
		return -EINVAL;
	ret = q->dev->task.send(q->dev->device_id, q->dev->ts_id, q->sq_id,
				sqes, n, timeout_ms, &pos);
	if (ret == DRV_ERROR_NO_RESOURCES)
		return timeout_ms ? -ETIMEDOUT : -EAGAIN;
	return ret ? hal_err(ret, 0) : (int)pos;
}

/* Send @n 64-byte SQEs of either header version. */
static int sqcq_send_raw(struct npu_sqcq *q, const void *sqes, unsigned int n,
			 int timeout_ms)
{
	struct trs_task_send_info si = {
		.type = TRS_SQCQ_TYPE_NORMAL,
		.timeout = timeout_ms,
		.sqe_addr = (__u64)(uintptr_t)sqes,
		.sqe_num = n,
	};
	int err;

	if (!q || !sqes)
		return -EINVAL;
	if (q->dev->task.send)
		return task_send(q, sqes, n, timeout_ms);
	if (q->dev->hal)
		return hal_send(q, sqes, n, timeout_ms);
	if (q->head) {
		pthread_mutex_lock(&q->lock);
		err = mapped_send(q, sqes, n, timeout_ms);
		pthread_mutex_unlock(&q->lock);
		return err;
	}
	si.tsId = q->dev->ts_id;
	si.sqId = q->sq_id;
	err = xioctl(q->dev->fd, TRS_IOC_SQCQ_SEND, &si);
	return err ? err : (int)si.pos;
}

int npu_sqcq_send(struct npu_sqcq *q, const struct trs_sqe *sqes,
		  unsigned int n, int timeout_ms)
{
	return sqcq_send_raw(q, sqes, n, timeout_ms);
}

static int recv_ioctl(struct npu_dev *dev, __u32 type, __u32 cq_id,
		      void *cqes, unsigned int n, int timeout_ms,
		      const struct npu_recv_opts *opts)
{
	struct trs_report_recv_info ri = {
		.type = type,
		.cqId = cq_id,
		.timeout = timeout_ms < 0 ? -1 : timeout_ms,
		.cqe_addr = (__u64)(uintptr_t)cqes,
		.cqe_num = n,
		.task_id = TRS_REPORT_TASK_ANY,
	};
	int err;

	if (!cqes || !n || !opts_valid(opts, opts ? opts->sz : 0, sizeof(*opts)))
		return -EINVAL;
	ri.tsId = dev->ts_id;
	if (OPTS_GET(opts, match, false)) {
		ri.res[0] = TRS_RECV_MATCH;
		ri.stream_id = OPTS_GET(opts, stream_id, 0);
		ri.task_id = OPTS_GET(opts, task_id, 0);
	}
	if (dev->hal) {
		struct halReportRecvInfo hi;

		memcpy(&hi, &ri, sizeof(hi));
		err = HAL_CALL(halCqReportRecv(dev->device_id, &hi));
		ri.report_cqe_num = hi.report_cqe_num;
	} else {
		err = xioctl(dev->fd, TRS_IOC_SQCQ_RECV, &ri);
	}
	if (err)
		return err;
	/* timeout 0 with nothing queued: success with no report. */
	return ri.report_cqe_num ? (int)ri.report_cqe_num : -ETIMEDOUT;
}

/* Reports in slots of q->cqe_size bytes: their CQEs packed into @cqes. */
static int recv_hw_slots(struct npu_sqcq *q, struct trs_hw_cqe *cqes,
			 unsigned int n, int timeout_ms)
{
	__u8 slots[64 * TRS_HW_CQE_SLOT_V2];
	__u32 size = q->cqe_size;
	int got, i;

	if (size > TRS_HW_CQE_SLOT_V2)
		return -EINVAL;
	if (n > sizeof(slots) / size)
		n = sizeof(slots) / size;
	got = recv_ioctl(q->dev, TRS_SQCQ_TYPE_NORMAL, q->cq_id, slots, n,
			 timeout_ms, NULL);
	for (i = 0; i < got; i++)
		memcpy(&cqes[i], slots + (size_t)i * size, sizeof(*cqes));
	return got;
}

int npu_sqcq_recv_hw(struct npu_sqcq *q, struct trs_hw_cqe *cqes,
		     unsigned int n, int timeout_ms)
{
	if (!q)
		return -EINVAL;
	if (q->cqe_size != sizeof(*cqes))
		return recv_hw_slots(q, cqes, n, timeout_ms);
	return recv_ioctl(q->dev, TRS_SQCQ_TYPE_NORMAL, q->cq_id, cqes, n,
			  timeout_ms, NULL);
}

/* The driver's translation of a STARS @stars hardware CQE. */
static void hw_to_logic(struct trs_logic_cqe *l, const struct trs_hw_cqe *h,
			int stars)
{
	__u8 eflags = h->error.error_flags;

	memset(l, 0, sizeof(*l));
	l->stream_id = h->stream_id & TRS_CQE_STREAM_ID_MASK;
	if (stars == 2)
		l->stream_id = h->stream_id;	/* no match bit */
	else if (h->stream_id & TRS_SQE_STREAM_MATCH)
		l->flags |= TRS_CQE_F_MATCH;
	l->task_id = h->task_id;
	l->sq_id = (h->bits & TRS_HW_CQE_SQ_ID_MASK) >> TRS_HW_CQE_SQ_ID_SHIFT;
	l->sq_head = h->sq_head;
	if (h->bits & TRS_HW_CQE_ERROR) {
		l->flags |= TRS_CQE_F_ERROR;
		l->error_code = h->error.error_code;
		l->error_type = h->error.error_type & TRS_CQE_ERR_TYPE_MASK;
		l->sqe_type = eflags >> TRS_HW_CQE_ERR_SQE_TYPE_SHIFT;
		l->timestamp = h->error.sqe_index;
		if (stars == 2 && (eflags & TRS_HW_CQE_V2_NOTIFY_ATTACHED))
			l->flags |= TRS_CQE_F_NOTIFY_ATTACHED;
		if (stars == 2 && (eflags & TRS_HW_CQE_V2_NEXT_TASK_VLD))
			l->flags |= TRS_CQE_F_NEXT_TASK_VLD;
		if (stars != 2 && (eflags & TRS_HW_CQE_ERR_DROP))
			l->flags |= TRS_CQE_F_DROP;
		if (stars != 2 && (eflags & TRS_HW_CQE_ERR_ACC))
			l->flags |= TRS_CQE_F_ACC_ERROR;
	} else {
		l->timestamp = h->timestamp;
		l->sqe_type = h->bits & TRS_HW_CQE_EVT ? TRS_SQE_EVENT_RECORD :
			      h->bits & TRS_HW_CQE_PLACE_HOLD ?
			      TRS_SQE_PLACE_HOLDER : 0;
	}
}

int npu_sqcq_recv(struct npu_sqcq *q, struct trs_logic_cqe *cqes,
		  unsigned int n, int timeout_ms,
		  const struct npu_recv_opts *opts)
{
	struct trs_hw_cqe hw[64];
	int got, i;

	if (!q || !cqes || !n || OPTS_GET(opts, match, false) ||
	    !opts_valid(opts, opts ? opts->sz : 0, sizeof(*opts)))
		return -EINVAL;
	got = npu_sqcq_recv_hw(q, hw, n < 64 ? n : 64, timeout_ms);
	for (i = 0; i < got; i++)
		hw_to_logic(&cqes[i], &hw[i], q->dev->stars);
	return got;
}

/* ---------------------------------------------------------------------- */

static pid_t hal_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

struct npu_logic_cq *npu_logic_cq_alloc(struct npu_dev *dev, __u32 stream_id,
					__u32 depth)
{
	struct trs_uio_info uio = { 0 };
	struct trs_sqcq_alloc_info ai = {
		.type = TRS_SQCQ_TYPE_LOGIC,
		.cqeSize = TRS_CQE_SIZE,
		.info = { stream_id },
	};
	struct npu_logic_cq *cq;
	int err;

	if (!dev) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	ai.tsId = dev->ts_id;
	ai.cqeDepth = depth ?: HAL_LOGIC_CQ_DEPTH;
	ai.info[1] = (__u32)hal_gettid();
	ai.uio_info = (__u64)(uintptr_t)&uio;
	if (dev->hal) {
		struct halSqCqInputInfo in;
		struct halSqCqOutputInfo out;

		memcpy(&in, &ai, sizeof(in));
		memset(in.res, 0, sizeof(in.res));
		err = HAL_CALL(halSqCqAllocate(dev->device_id, &in, &out));
		ai.cqId = out.cqId;
	} else {
		err = xioctl(dev->fd, TRS_IOC_SQCQ_ALLOC, &ai);
	}
	if (err) {
		free(cq);
		errno = -err;
		return NULL;
	}
	cq->dev = dev;
	cq->id = ai.cqId;
	cq->depth = ai.cqeDepth;
	return cq;
}

int npu_logic_cq_free(struct npu_logic_cq *cq)
{
	struct trs_sqcq_free_info fi = { .type = TRS_SQCQ_TYPE_LOGIC };
	int err;

	if (!cq)
		return 0;
	fi.tsId = cq->dev->ts_id;
	fi.cqId = cq->id;
	if (cq->dev->hal)
		err = HAL_CALL(halSqCqFree(cq->dev->device_id,
					   (struct halSqCqFreeInfo *)&fi));
	else
		err = xioctl(cq->dev->fd, TRS_IOC_SQCQ_FREE, &fi);
	free(cq);
	return err;
}

int npu_logic_cq_id(const struct npu_logic_cq *cq)
{
	return cq ? (int)cq->id : -EINVAL;
}

int npu_logic_cq_recv(struct npu_logic_cq *cq, struct trs_logic_cqe *cqes,
		      unsigned int n, int timeout_ms,
		      const struct npu_recv_opts *opts)
{
	if (!cq)
		return -EINVAL;
	return recv_ioctl(cq->dev, TRS_SQCQ_TYPE_LOGIC, cq->id, cqes, n,
			  timeout_ms, opts);
}

/* ---------------------------------------------------------------------- */

void npu_sqe_task(struct trs_sqe *sqe, const struct npu_task_desc *d)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->type = d->type & TRS_SQE_TYPE_MASK;
	sqe->flags = d->wr_cqe ? TRS_SQE_F_WR_CQE : 0;
	sqe->rt_stream_id = d->stream_id;
	sqe->task_id = d->task_id;
	sqe->task.sim_duration_ns = d->duration_ns;
	sqe->task.sim_error = d->sim_error;
}

/* pre_p = 1, as rtProfilerTraceEx's place-holder has it. */
#define SQE_PRE_P_1	0x04

void npu_sqe_step_mark(struct trs_sqe *sqe, __u16 stream_id, __u16 task_id,
		       __u64 index_id, __u16 tag)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->type = TRS_SQE_PLACE_HOLDER;
	sqe->flags = SQE_PRE_P_1;
	sqe->block_dim = TRS_TASK_PROFILER_TRACE_EX;
	sqe->rt_stream_id = stream_id;
	sqe->task_id = task_id;
	sqe->place_holder.profiler_trace_id = index_id;
	sqe->place_holder.model_id = TRS_MODEL_ID_NONE;
	sqe->place_holder.tag_id = tag;
}

void npu_sqe_to_v2(struct trs_sqe_v2 *out, const struct trs_sqe *in,
		   __u32 task_id)
{
	__u8 f = in->flags;

	memset(out, 0, sizeof(*out));	/* @out and @in must not overlap */
	out->type = in->type;
	out->flags = (f & TRS_SQE_F_IE_MASK ? TRS_SQE_V2_F_IE : 0) |
		     (f & TRS_SQE_F_PRE_P_MASK ? TRS_SQE_V2_F_PRE_P : 0) |
		     (f & TRS_SQE_F_POST_P_MASK ? TRS_SQE_V2_F_POST_P : 0) |
		     (f & TRS_SQE_F_WR_CQE ? TRS_SQE_V2_F_WR_CQE : 0);
	out->task_id = task_id;
	memcpy(out->raw, in->raw, sizeof(out->raw));
	if ((in->type & TRS_SQE_TYPE_MASK) == TRS_SQE_PLACE_HOLDER) {
		out->place_holder.res0 = 0;
		out->place_holder.task_type = in->block_dim;
		out->place_holder.kernel_credit = 0;
		out->place_holder.timeout_type = 0;
	} else {
		out->block_dim = in->block_dim;
	}
}

/* ---------------------------------------------------------------------- */
/* Stream registry: pointers only, so foreign pointers are never touched. */

#define REG_BUCKETS 64

static struct {
	pthread_mutex_t lock;
	struct npu_stream *bucket[REG_BUCKETS];
} reg = { .lock = PTHREAD_MUTEX_INITIALIZER };

static unsigned int reg_hash(const void *p)
{
	uintptr_t v = (uintptr_t)p;

	return (unsigned int)((v >> 4) ^ (v >> 12)) % REG_BUCKETS;
}

static void reg_add(struct npu_stream *s)
{
	unsigned int h = reg_hash(s);

	pthread_mutex_lock(&reg.lock);
	s->next = reg.bucket[h];
	reg.bucket[h] = s;
	pthread_mutex_unlock(&reg.lock);
}

static void reg_del(struct npu_stream *s)
{
	struct npu_stream **pp;

	pthread_mutex_lock(&reg.lock);
	for (pp = &reg.bucket[reg_hash(s)]; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&reg.lock);
}

int npu_stream_is_valid(const void *p)
{
	const struct npu_stream *s;
	int found = 0;

	if (!p)
		return 0;
	pthread_mutex_lock(&reg.lock);
	for (s = reg.bucket[reg_hash(p)]; s && !found; s = s->next)
		found = (const void *)s == p;
	pthread_mutex_unlock(&reg.lock);
	return found;
}

/*
 * The SQ-CQ pair of a new stream, as StreamSqCqManage::AllocStreamSqCq:
 * pre-STARS, every stream after the first shares the first one's CQ.
 */
static struct npu_sqcq *stream_alloc_sqcq(struct npu_stream *s,
					  const struct npu_stream_opts *opts)
{
	struct npu_sqcq_opts qo = { .sz = sizeof(qo), .bind_stream = true };
	struct npu_dev *dev = s->dev;
	struct npu_sqcq *q;
	__u32 depth;

	depth = OPTS_GET(opts, sq_depth, 0) ?: NPU_STREAM_SQ_DEPTH;
	qo.sq_depth = depth > HAL_MAX_SQ_DEPTH ? HAL_MAX_SQ_DEPTH : depth;
	qo.cq_depth = OPTS_GET(opts, cq_depth, 0) ?: HAL_CQ_DEPTH;
	qo.mapped = OPTS_GET(opts, mapped, false);
	qo.stream_id = s->stream_id;
	pthread_mutex_lock(&dev->lock);
	if (dev->chip == NPU_CHIP_PRE_STARS && dev->normal_cq_users) {
		qo.reuse_cq = true;
		qo.cq_id = dev->normal_cq;
	}
	q = npu_sqcq_alloc(dev, &qo);
	if (q && dev->chip == NPU_CHIP_PRE_STARS) {
		if (!dev->normal_cq_users)
			dev->normal_cq = q->cq_id;
		dev->normal_cq_users++;
	}
	pthread_mutex_unlock(&dev->lock);
	return q;
}

/* As DeAllocStreamSqCq: the shared CQ goes with its last stream. */
static void stream_free_sqcq(struct npu_stream *s)
{
	struct npu_dev *dev = s->dev;
	__u32 flag = 0;

	pthread_mutex_lock(&dev->lock);
	if (dev->chip == NPU_CHIP_PRE_STARS) {
		if (--dev->normal_cq_users)
			flag = TSDRV_FLAG_REUSE_CQ;
		s->q->cq_id = dev->normal_cq;
	}
	npu_sqcq_free_flags(s->q, flag);
	pthread_mutex_unlock(&dev->lock);
	s->q = NULL;
}

struct npu_stream *npu_stream_create(struct npu_dev *dev,
				     const struct npu_stream_opts *opts)
{
	struct npu_stream *s;
	int id, err;

	if (!dev || !opts_valid(opts, opts ? opts->sz : 0, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->dev = dev;
	id = npu_res_id_alloc(dev, TRS_RES_STREAM);
	if (id < 0) {
		err = id;
		goto err_free;
	}
	s->stream_id = (__u32)id;
	s->own_id = true;
	s->q = stream_alloc_sqcq(s, opts);
	if (!s->q) {
		err = -errno;
		goto err_id;
	}
	s->lcq = npu_logic_cq_alloc(dev, s->stream_id, 0);
	if (!s->lcq) {
		err = -errno;
		goto err_sqcq;
	}
	s->dvpp = OPTS_GET(opts, dvpp, false);
	s->recycle_every = OPTS_GET(opts, recycle_every, 0) ?: NPU_RECYCLE_EVERY;
	s->on_report = OPTS_GET(opts, on_report, NULL);
	s->ctx = OPTS_GET(opts, ctx, NULL);
	pthread_mutex_init(&s->lock, NULL);
	reg_add(s);
	return s;

err_sqcq:
	stream_free_sqcq(s);
err_id:
	npu_res_id_free(dev, TRS_RES_STREAM, s->stream_id);
err_free:
	free(s);
	errno = -err;
	return NULL;
}

static void stream_detach_events(struct npu_stream *s);

int npu_stream_id(const void *stream)
{
	if (!npu_stream_is_valid(stream))
		return -EINVAL;
	return (int)((const struct npu_stream *)stream)->stream_id;
}

struct npu_sqcq *npu_stream_sqcq(const struct npu_stream *s)
{
	if (!s) {
		errno = EINVAL;
		return NULL;
	}
	return s->q;
}

int npu_stream_logic_cq_id(const struct npu_stream *s)
{
	return s ? (int)s->lcq->id : -EINVAL;
}

struct npu_dev *npu_stream_dev(const struct npu_stream *s)
{
	if (!s) {
		errno = EINVAL;
		return NULL;
	}
	return s->dev;
}

/*
 * Everything before SQ position @head has completed: with at most depth - 1
 * SQEs outstanding (stream_send's flow control), (tail - head) mod depth is
 * how many are still queued. A stale head (an old report's, or match mode
 * stepping back) only ever gives less: the maximum is kept.
 */
static void stream_head_seen(struct npu_stream *s, __u32 head)
{
	__u32 depth = s->q->depth;
	__u64 queued = (s->tail + depth - head % depth) % depth, done;

	if (queued > s->submitted)
		return;
	done = s->submitted - queued;
	if (done > s->done)
		s->done = done;
}

/* Events whose record the head passed and that expect no report. */
static void stream_complete_silent_events(struct npu_stream *s)
{
	struct npu_event **pp, *ev;

	pthread_mutex_lock(&ev_lock);
	for (pp = &s->events; (ev = *pp);) {
		if (!ev->wr_cqe && ev->seq < s->done) {
			ev->state = EV_DONE;
			ev->stream = NULL;
			*pp = ev->next;
			continue;
		}
		pp = &ev->next;
	}
	pthread_mutex_unlock(&ev_lock);
}

static void stream_event_report(struct npu_stream *s,
				 const struct trs_logic_cqe *c)
{
	struct npu_event **pp, *ev;

	pthread_mutex_lock(&ev_lock);
	for (pp = &s->events; (ev = *pp); pp = &ev->next) {
		if (ev->wr_cqe && (__u16)ev->task_id == c->task_id) {
			if (c->flags & TRS_CQE_F_ERROR) {
				ev->state = EV_FAILED;
			} else {
				ev->state = EV_DONE;
				ev->ticks = c->timestamp;
				ev->has_ts = ev->flags & NPU_EVENT_TIME_LINE;
			}
			ev->stream = NULL;
			*pp = ev->next;
			break;
		}
	}
	pthread_mutex_unlock(&ev_lock);
}

static void stream_account(struct npu_stream *s,
			   const struct trs_logic_cqe *c, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		s->reports++;
		if (c[i].flags & TRS_CQE_F_ERROR)
			s->errors++;
		if (c[i].sq_id == s->q->sq_id)
			stream_head_seen(s, c[i].sq_head);
		if (s->events)
			stream_event_report(s, &c[i]);
		if (s->on_report)
			s->on_report(&c[i], s->ctx);
	}
}

/* Take what reports are there without waiting; caller holds s->lock. */
static void stream_drain(struct npu_stream *s)
{
	struct trs_logic_cqe c[64];
	int n;

	while ((n = npu_logic_cq_recv(s->lcq, c, 64, 0, NULL)) > 0) {
		stream_account(s, c, n);
		if (n < 64)
			break;
	}
}

/* One SQ head query (or mapped head read); caller holds s->lock. */
static int stream_query_head(struct npu_stream *s)
{
	long head;

	head = s->q->head ? npu_sqcq_sq_head(s->q) :
			    npu_sqcq_query(s->q, TRS_SQCQ_PROP_SQ_HEAD);
	if (head < 0)
		return (int)head;
	stream_head_seen(s, (__u32)head);
	stream_complete_silent_events(s);
	return 0;
}

/* Reports asked for and not yet received could fill the logic CQ. */
static bool stream_backlogged(const struct npu_stream *s)
{
	__u64 backlog = s->wr_cqe_sent > s->reports ?
			s->wr_cqe_sent - s->reports : 0;

	return backlog >= s->lcq->depth / 2;
}

static void sqe_recycle(struct trs_sqe *sqe)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->type = TRS_SQE_PLACE_HOLDER;
	sqe->flags = TRS_SQE_F_WR_CQE;
	sqe->block_dim = NPU_TASK_MAINTENANCE;
}

/* Whether a converted SQE of @s asks for a report. */
static bool sqe_wr_cqe(const struct npu_stream *s, const struct trs_sqe *sqe)
{
	if (s->dev->stars == 2)
		return ((const struct trs_sqe_v2 *)sqe)->flags &
		       TRS_SQE_V2_F_WR_CQE;
	return sqe->flags & TRS_SQE_F_WR_CQE;
}

/*
 * Send @k SQEs, taking reports while the queue is full; s->tail moves past
 * what was sent. Through libascend_hal.so (a runtime's task path or the
 * HAL's own entry), one task per halSqTaskSend(), as CANN's runtime sends
 * (task_submit.cc:524,583): each SQE here is a task of its own (its own
 * task id), and a library journaling the sends counts a send as a task.
 * The driver's SEND ioctl takes them in one go. Return: how many were
 * sent (all, unless a send failed: then *@err is its error).
 */
static unsigned int stream_send_tasks(struct npu_stream *s,
				      const struct trs_sqe *buf,
				      unsigned int k, int *err)
{
	unsigned int max = s->dev->task.send || s->dev->hal ? 1 : k;
	unsigned int done = 0, n;
	int pos;

	*err = 0;
	while (done < k) {
		n = k - done < max ? k - done : max;
		pos = sqcq_send_raw(s->q, buf + done, n, 100);
		if (pos == -ETIMEDOUT || pos == -EAGAIN || pos == -EINTR) {
			stream_drain(s);
			continue;
		}
		if (pos < 0) {
			*err = pos;
			break;
		}
		done += n;
		s->tail = (pos + n) % s->q->depth;
	}
	return done;
}

/*
 * Send @n SQEs (v1 layout) with the stream's id and task ids, a recycle
 * task after every recycle_every silent ones, converted to the device's
 * header. Caller holds s->lock. @first_seq: the sequence of sqes[0].
 * Return: task id of sqes[0] or a negative errno.
 */
static int stream_send(struct npu_stream *s, const struct trs_sqe *sqes,
		       unsigned int n, __u64 *first_seq)
{
	unsigned int max = n + n / s->recycle_every + 1, i, k = 0, silent;
	__u32 next_task = s->next_task, first = next_task;
	unsigned int us = 20, sent;
	bool recycled = false;
	struct trs_sqe *buf;
	int pos = 0;

	if (max >= s->q->depth)
		return -EINVAL;
	buf = malloc(max * sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	silent = s->silent;
	for (i = 0; i < n; i++) {
		buf[k] = sqes[i];
		if (s->dvpp)
			buf[k].flags |= TRS_SQE_F_WR_CQE;
		if (buf[k].flags & TRS_SQE_F_WR_CQE) {
			silent = 0;
		} else if (++silent >= s->recycle_every) {
			sqe_recycle(&buf[++k]);
			silent = 0;
			recycled = true;
		}
		k++;
	}
	for (i = 0; i < k; i++, next_task++) {
		buf[i].rt_stream_id = (__u16)s->stream_id;
		buf[i].task_id = (__u16)next_task;
		if (s->dev->stars == 2) {
			struct trs_sqe v1 = buf[i];

			npu_sqe_to_v2((struct trs_sqe_v2 *)&buf[i], &v1,
				      next_task);
		}
	}
	/*
	 * As TryRecycleTask: every recycle_every tasks, take the reports and
	 * query the SQ head. Flow control: at most depth - 1 SQEs
	 * outstanding, so that a head position is never ambiguous.
	 */
	if (recycled || stream_backlogged(s))
		stream_drain(s);
	if (recycled)
		pos = stream_query_head(s);
	while (!pos && s->submitted - s->done + k > s->q->depth - 1) {
		pos = stream_query_head(s);
		if (pos || s->submitted - s->done + k <= s->q->depth - 1)
			break;
		backoff(&us);
	}
	if (pos)
		goto out;
	sent = stream_send_tasks(s, buf, k, &pos);
	if (!sent)
		goto out;
	if (first_seq)
		*first_seq = s->submitted;
	s->submitted += sent;
	s->next_task = first + sent;
	s->silent = silent;
	for (i = 0; i < sent; i++)
		s->wr_cqe_sent += sqe_wr_cqe(s, &buf[i]);
out:
	free(buf);
	return pos < 0 ? pos : (int)(first & 0xffff);
}

int npu_stream_submit(void *stream, const struct trs_sqe *sqes, unsigned int n)
{
	struct npu_stream *s = stream;
	int ret;

	if (!npu_stream_is_valid(stream) || !sqes || !n)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	ret = stream_send(s, sqes, n, NULL);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int npu_stream_mark_step(struct npu_stream *s, __u64 index_id, __u16 tag)
{
	struct trs_sqe sqe;

	npu_sqe_step_mark(&sqe, 0, 0, index_id, tag);
	return npu_stream_submit(s, &sqe, 1);
}

static bool stream_idle(const struct npu_stream *s)
{
	return s->done >= s->submitted;
}

int npu_stream_query(struct npu_stream *s)
{
	int err;

	if (!npu_stream_is_valid(s))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	stream_drain(s);
	err = stream_idle(s) ? 0 : stream_query_head(s);
	pthread_mutex_unlock(&s->lock);
	return err < 0 ? err : stream_idle(s);
}

int npu_stream_sq_head(struct npu_stream *s)
{
	long head;

	if (!npu_stream_is_valid(s))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	head = s->q->head ? npu_sqcq_sq_head(s->q) :
			    npu_sqcq_query(s->q, TRS_SQCQ_PROP_SQ_HEAD);
	pthread_mutex_unlock(&s->lock);
	return (int)head;
}

/*
 * A runtime's synchronize: its own wait for the head to reach the tail,
 * with s->lock held (no send can move the tail meanwhile).
 */
static int stream_task_wait(struct npu_stream *s, int timeout_ms)
{
	const struct npu_task_ops *t = &s->dev->task;
	__s32 ret;

	if (!t->sq_wait || stream_idle(s))
		return 0;
	ret = t->sq_wait(s->dev->device_id, s->dev->ts_id, s->q->sq_id,
			 s->tail, timeout_ms);
	return hal_err(ret, 0);
}

/* Caller holds s->lock (released while waiting, but in a runtime's). */
static int stream_sync_locked(struct npu_stream *s, int timeout_ms)
{
	__u64 deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	unsigned int us = 20;
	int err = stream_task_wait(s, timeout_ms);

	if (err)
		return err;
	for (;;) {
		stream_drain(s);
		if (stream_idle(s))
			break;
		err = stream_query_head(s);
		if (err || stream_idle(s))
			break;
		if (!ms_left(timeout_ms, deadline)) {
			err = -ETIMEDOUT;
			break;
		}
		pthread_mutex_unlock(&s->lock);
		backoff(&us);
		pthread_mutex_lock(&s->lock);
	}
	/* Reports of the last tasks may trail the head: take them. */
	if (!err)
		stream_drain(s);
	/*
	 * Idle by its reports, a mapped SQ's head is still read once, as
	 * CANN's runtime recycles a synchronized stream's tasks by the SQ's
	 * head (GetSqHead(): halSqCqQuery, task_recycle_common_base.cc:316,
	 * stream.cc:2130): what a journal learns the SQ drained from.
	 */
	if (!err && s->q->hal_mapped)
		err = stream_query_head(s);
	return err;
}

int npu_stream_sync(struct npu_stream *s, int timeout_ms)
{
	int err;

	if (!npu_stream_is_valid(s))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	err = stream_sync_locked(s, timeout_ms);
	pthread_mutex_unlock(&s->lock);
	return err;
}

/*
 * The runtime's stream cleanup (Stream::StreamTaskClean, stream.cc:5305):
 * on a disabled SQ (here paused), SQ tail and head set to 0 with
 * halSqCqConfig(), its errors ignored. Caller holds s->lock.
 */
static void stream_reset_sq(struct npu_stream *s)
{
	static const drvSqCqPropType_t props[] = {
		DRV_SQCQ_PROP_SQ_PAUSE, DRV_SQCQ_PROP_SQ_TAIL,
		DRV_SQCQ_PROP_SQ_HEAD, DRV_SQCQ_PROP_SQ_RESUME,
	};
	struct halSqCqConfigInfo c = {
		.type = DRV_NORMAL_TYPE, .tsId = s->dev->ts_id,
		.sqId = s->q->sq_id, .cqId = s->q->cq_id,
	};
	size_t i;

	if (!s->dev->hal)
		return;
	for (i = 0; i < sizeof(props) / sizeof(props[0]); i++) {
		c.prop = props[i];
		halSqCqConfig(s->dev->device_id, &c);
	}
}

/* How long a dying stream waits for its tasks (Stream::TearDown: 30 s). */
#define HAL_TEARDOWN_MS		30000

void npu_stream_destroy(struct npu_stream *s)
{
	struct trs_sqe rc;

	if (!s)
		return;
	reg_del(s);
	pthread_mutex_lock(&s->lock);
	/*
	 * As Stream::TearDown: tasks still pending get a recycle task and
	 * the SQ head is polled until it reaches the tail.
	 */
	stream_drain(s);
	if (!stream_query_head(s) && s->done < s->submitted) {
		sqe_recycle(&rc);
		if (stream_send(s, &rc, 1, NULL) >= 0)
			stream_sync_locked(s, HAL_TEARDOWN_MS);
	}
	stream_detach_events(s);
	stream_reset_sq(s);
	pthread_mutex_unlock(&s->lock);
	/* CANN's order: logic CQ, SQ-CQ pair, stream id. */
	npu_logic_cq_free(s->lcq);
	stream_free_sqcq(s);
	if (s->own_id)
		npu_res_id_free(s->dev, TRS_RES_STREAM, s->stream_id);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int npu_stream_stats(const struct npu_stream *s, __u64 *submitted,
		     __u64 *reports, __u64 *errors)
{
	if (!s)
		return -EINVAL;
	if (submitted)
		*submitted = s->submitted;
	if (reports)
		*reports = s->reports;
	if (errors)
		*errors = s->errors;
	return 0;
}

/* ---------------------------------------------------------------------- */

#define EV_WAITED_ON	(NPU_EVENT_SYNC | NPU_EVENT_DDSYNC | \
			 NPU_EVENT_EXTERNAL | NPU_EVENT_IPC)

struct npu_event *npu_event_create(struct npu_dev *dev, __u32 flags)
{
	struct npu_event *ev;
	int id;

	if (!dev) {
		errno = EINVAL;
		return NULL;
	}
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return NULL;
	ev->dev = dev;
	ev->flags = flags;
	/* CANN takes event ids from the device (halResourceIdAlloc). */
	id = npu_res_id_alloc(dev, TRS_RES_EVENT);
	if (id >= 0) {
		ev->event_id = (__u32)id;
		ev->has_id = true;
	}
	return ev;
}

/* Unlink @ev from its stream's pending list; caller holds ev_lock. */
static void event_unlink(struct npu_event *ev)
{
	struct npu_event **pp;

	if (!ev->stream)
		return;
	for (pp = &ev->stream->events; *pp; pp = &(*pp)->next) {
		if (*pp == ev) {
			*pp = ev->next;
			break;
		}
	}
	ev->stream = NULL;
}

void npu_event_destroy(struct npu_event *ev)
{
	if (!ev)
		return;
	pthread_mutex_lock(&ev_lock);
	event_unlink(ev);
	pthread_mutex_unlock(&ev_lock);
	if (ev->has_id)
		npu_res_id_free(ev->dev, TRS_RES_EVENT, ev->event_id);
	free(ev);
}

/* Pending records of a dying stream; caller holds s->lock. */
static void stream_detach_events(struct npu_stream *s)
{
	struct npu_event *ev;

	stream_drain(s);
	if (s->events)
		stream_query_head(s);
	pthread_mutex_lock(&ev_lock);
	while ((ev = s->events)) {
		s->events = ev->next;
		ev->state = EV_CANCELED;
		ev->stream = NULL;
	}
	pthread_mutex_unlock(&ev_lock);
}

int npu_event_record(struct npu_event *ev, struct npu_stream *s)
{
	struct trs_sqe sqe;
	__u64 seq = 0;
	int task;

	if (!ev || !npu_stream_is_valid(s) || s->dev != ev->dev)
		return -EINVAL;
	memset(&sqe, 0, sizeof(sqe));
	/* An event no task waits on is a place-holder (Event::IsEventWithoutWaitTask). */
	sqe.type = ev->flags & EV_WAITED_ON ? TRS_SQE_EVENT_RECORD :
					      TRS_SQE_PLACE_HOLDER;
	if (ev->flags & NPU_EVENT_TIME_LINE)
		sqe.flags = TRS_SQE_F_WR_CQE;
	memcpy(sqe.raw, &(__u16){ (__u16)ev->event_id }, sizeof(__u16));

	pthread_mutex_lock(&s->lock);
	pthread_mutex_lock(&ev_lock);
	event_unlink(ev);
	ev->state = EV_NEVER;
	pthread_mutex_unlock(&ev_lock);
	task = stream_send(s, &sqe, 1, &seq);
	if (task >= 0) {
		pthread_mutex_lock(&ev_lock);
		ev->state = EV_PENDING;
		ev->stream = s;
		ev->seq = seq;
		ev->task_id = (__u32)task;
		ev->wr_cqe = (sqe.flags & TRS_SQE_F_WR_CQE) || s->dvpp;
		ev->has_ts = false;
		ev->next = s->events;
		s->events = ev;
		pthread_mutex_unlock(&ev_lock);
	}
	pthread_mutex_unlock(&s->lock);
	return task < 0 ? task : 0;
}

static int event_state_ret(int state)
{
	switch (state) {
	case EV_NEVER:
		return -ENODATA;
	case EV_PENDING:
		return 0;
	case EV_DONE:
		return 1;
	case EV_FAILED:
		return -EIO;
	default:
		return -ECANCELED;
	}
}

int npu_event_query(struct npu_event *ev)
{
	struct npu_stream *s;
	int state, err = 0;

	if (!ev)
		return -EINVAL;
	pthread_mutex_lock(&ev_lock);
	state = ev->state;
	s = ev->stream;
	pthread_mutex_unlock(&ev_lock);
	if (state != EV_PENDING || !s)
		return event_state_ret(state);
	/* Using an event while its stream is destroyed is the caller's bug. */
	pthread_mutex_lock(&s->lock);
	stream_drain(s);
	pthread_mutex_lock(&ev_lock);
	state = ev->state;
	pthread_mutex_unlock(&ev_lock);
	if (state == EV_PENDING)
		err = stream_query_head(s);
	pthread_mutex_unlock(&s->lock);
	if (err)
		return err;
	pthread_mutex_lock(&ev_lock);
	state = ev->state;
	pthread_mutex_unlock(&ev_lock);
	return event_state_ret(state);
}

int npu_event_sync(struct npu_event *ev, int timeout_ms)
{
	__u64 deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	unsigned int us = 20;
	int r;

	for (;;) {
		r = npu_event_query(ev);
		if (r == -ENODATA || r == 1)
			return 0;
		if (r)
			return r;
		if (!ms_left(timeout_ms, deadline))
			return -ETIMEDOUT;
		backoff(&us);
	}
}

int npu_event_timestamp(const struct npu_event *ev, __u64 *ticks)
{
	int ret = -ENODATA;

	if (!ev || !ticks)
		return -EINVAL;
	pthread_mutex_lock(&ev_lock);
	if (ev->state == EV_DONE && ev->has_ts) {
		*ticks = ev->ticks;
		ret = 0;
	}
	pthread_mutex_unlock(&ev_lock);
	return ret;
}

/* ---------------------------------------------------------------------- */

int npu_sim_get_config(struct npu_dev *dev, struct npusim_config *cfg)
{
	if (!dev || !cfg)
		return -EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	cfg->device = (__u32)dev->device_id;
	return xioctl(dev->fd, NPUSIM_IOC_GET_CONFIG, cfg);
}

int npu_sim_set_config(struct npu_dev *dev, const struct npusim_config *cfg)
{
	struct npusim_config c;

	if (!dev || !cfg)
		return -EINVAL;
	c = *cfg;
	c.device = (__u32)dev->device_id;
	return xioctl(dev->fd, NPUSIM_IOC_SET_CONFIG, &c);
}

int npu_sim_truth(struct npu_dev *dev, __u32 sq_id, __u64 seq,
		  struct npusim_task_truth *out, unsigned int n, __u64 *next_seq)
{
	struct npusim_truth_query tq = {
		.sq_id = sq_id,
		.count = n,
		.seq = seq,
		.addr = (__u64)(uintptr_t)out,
	};
	int err;

	if (!dev || (!out && n))
		return -EINVAL;
	tq.ts_id = dev->ts_id;
	err = xioctl(dev->fd, NPUSIM_IOC_TRUTH, &tq);
	if (err)
		return err;
	if (next_seq)
		*next_seq = tq.next_seq;
	return (int)tq.count;
}

int npu_sim_stats(struct npu_dev *dev, struct npusim_stats *st)
{
	if (!dev || !st)
		return -EINVAL;
	return xioctl(dev->fd, NPUSIM_IOC_STATS, st);
}

int npu_sim_clock(struct npu_dev *dev, struct npusim_clock *clk)
{
	if (!dev || !clk)
		return -EINVAL;
	memset(clk, 0, sizeof(*clk));
	clk->device = (__u32)dev->device_id;
	return xioctl(dev->fd, NPUSIM_IOC_CLOCK, clk);
}
