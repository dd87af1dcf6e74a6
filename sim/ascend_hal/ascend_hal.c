// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libascend_hal.so stand-in: the driver's TRS entry points over npusim's
 * ioctls, as ascend_hal/trs/core does them (see ascend_hal.h). Each entry
 * point is a real, exported function (uprobes find them by name) and none
 * calls another.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <npusim_abi.h>
#include "ascend_hal.h"

#define AH_ENTRY	__attribute__((noinline))

/* The hal structs are the ioctls' own arguments. */
_Static_assert(sizeof(struct halSqCqInputInfo) ==
	       sizeof(struct trs_sqcq_alloc_info), "alloc");
_Static_assert(offsetof(struct halSqCqInputInfo, res) ==
	       offsetof(struct trs_sqcq_alloc_info, uio_info), "alloc res");
_Static_assert(sizeof(struct halSqCqOutputInfo) ==
	       sizeof(struct trs_sqcq_alloc_out), "alloc out");
_Static_assert(sizeof(struct halSqCqFreeInfo) ==
	       sizeof(struct trs_sqcq_free_info), "free");
_Static_assert(sizeof(struct halSqCqQueryInfo) ==
	       sizeof(struct trs_sqcq_query_info), "query");
_Static_assert(sizeof(struct halSqCqConfigInfo) ==
	       sizeof(struct trs_sqcq_config_info), "config");
_Static_assert(sizeof(struct halTaskSendInfo) ==
	       sizeof(struct trs_task_send_info), "send");
_Static_assert(offsetof(struct halTaskSendInfo, pos) ==
	       offsetof(struct trs_task_send_info, pos), "send pos");
_Static_assert(sizeof(struct halReportRecvInfo) ==
	       sizeof(struct trs_report_recv_info), "recv");
_Static_assert(offsetof(struct halReportRecvInfo, res) ==
	       offsetof(struct trs_report_recv_info, res), "recv res");

enum ah_mode { AH_KIO, AH_UIO_T, AH_UIO_D };

/* Device ids halDeviceOpen() takes (a 910B host's ASCEND_DEV_MAX_NUM). */
#define AH_DEV_MAX_NUM	1124

/* What the library keeps of one NORMAL SQ (the driver's sqcq_usr_info). */
struct ah_sq {
	pthread_mutex_t lock;		/* one sender at a time */
	enum ah_mode mode;
	uint32_t id;
	uint32_t depth;
	uint32_t tail;			/* the library's tail (position) */
	uint8_t *que;			/* SQE slots */
	uint32_t *head;			/* uio_t: soft head; uio_d: SQ head */
	uint32_t *tail_w;		/* the queue's tail word; NULL on a 950 */
	uint32_t *db;			/* uio_t: trigger; uio_d: tail doorbell */
	uint32_t *head_reg;		/* uio_t: hardware SQ head */
	uint32_t *tail_reg;		/* uio_t: hardware SQ tail */
	struct trs_sq_shr_info *shr;
	void *map;
	size_t map_len;
	struct trs_uio_info uio;	/* what ALLOC said */
};

/*
 * What the library keeps of one logic CQ (sqcq_usr_info of a CQ): the
 * buffer halCqReportIrqWait() receives into and halCqReportGet() hands
 * out, of TRS_SQCQ_BUFF_LEN bytes (trs_sqcq.h:18, trs_sqcq.c:790-800).
 */
#define AH_CQ_BUFF_LEN	256

struct ah_cq {
	uint32_t max_num;		/* reports the buffer holds */
	uint32_t cur_num;		/* in it, not yet released */
	uint8_t buf[AH_CQ_BUFF_LEN];
};

struct ah_dev {
	int fd;				/* -1: not open */
	bool inherited;			/* opened by the parent of a fork */
	pthread_rwlock_t lock;		/* sqs, lcqs: read to use, write to change */
	struct ah_sq **sqs;		/* [ts * NPUSIM_MAX_SQS + sq] */
	struct ah_cq **lcqs;		/* [ts * NPUSIM_MAX_LOGIC_CQS + cq] */
};

static pthread_mutex_t ah_open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ah_dev ah_devs[NPUSIM_MAX_DEVICES] = {
	[0 ... NPUSIM_MAX_DEVICES - 1] = {
		.fd = -1, .lock = PTHREAD_RWLOCK_INITIALIZER,
	},
};

/*
 * A forked child inherits the parent's open devices: it may go on using
 * them (the fd and mappings are shared), but its own halDeviceOpen() opens
 * the device afresh, as a new process of the driver's does.
 */
static void ah_atfork_child(void)
{
	unsigned int i;

	pthread_mutex_init(&ah_open_lock, NULL);
	for (i = 0; i < NPUSIM_MAX_DEVICES; i++) {
		pthread_rwlock_init(&ah_devs[i].lock, NULL);
		if (ah_devs[i].fd >= 0)
			ah_devs[i].inherited = true;
	}
}

__attribute__((constructor)) static void ah_init(void)
{
	pthread_atfork(NULL, NULL, ah_atfork_child);
}

/* As trs_dev_ioctl(): EINTR retried, errnos mapped. */
static drvError_t ah_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	if (ret >= 0)
		return DRV_ERROR_NONE;
	switch (errno) {
	case ETIMEDOUT:
		return DRV_ERROR_WAIT_TIMEOUT;
	case EBUSY:
		return DRV_ERROR_BUS_DOWN;
	case ENOSPC:
		return DRV_ERROR_NO_RESOURCES;
	case EOPNOTSUPP:
		return DRV_ERROR_NOT_SUPPORT;
	case ESHUTDOWN:
		return DRV_ERROR_STATUS_FAIL;
	}
	return DRV_ERROR_IOCRL_FAIL;
}

/* The open device @devid, or NULL. */
static struct ah_dev *ah_dev(uint32_t devid)
{
	if (devid >= NPUSIM_MAX_DEVICES ||
	    __atomic_load_n(&ah_devs[devid].fd, __ATOMIC_ACQUIRE) < 0)
		return NULL;
	return &ah_devs[devid];
}

static int ah_dev_fd(uint32_t devid)
{
	struct ah_dev *d = ah_dev(devid);

	return d ? d->fd : -1;
}

static uint32_t ah_load(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void ah_store(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static void ah_sq_unmap(struct ah_sq *sq)
{
	if (sq->map)
		munmap(sq->map, sq->map_len);
	pthread_mutex_destroy(&sq->lock);
	free(sq);
}

/* Caller holds d->lock for reading; the SQ's lock is taken. */
static struct ah_sq *ah_sq_lock(struct ah_dev *d, uint32_t ts, uint32_t id)
{
	struct ah_sq *sq;

	if (ts >= NPUSIM_MAX_TS || id >= NPUSIM_MAX_SQS || !d->sqs)
		return NULL;
	sq = d->sqs[ts * NPUSIM_MAX_SQS + id];
	if (sq)
		pthread_mutex_lock(&sq->lock);
	return sq;
}

/* The mode and mapping ALLOC gave (trs_sq_remap's trs_uio_info). */
static struct ah_sq *ah_sq_new(const struct trs_uio_info *u, uint32_t id,
			       uint32_t depth)
{
	struct ah_sq *sq = calloc(1, sizeof(*sq));

	if (!sq)
		return NULL;
	pthread_mutex_init(&sq->lock, NULL);
	sq->id = id;
	sq->depth = depth;
	sq->uio = *u;
	if (!u->uio_flag || !u->sq_que_addr)
		return sq;
	sq->map = (void *)(uintptr_t)(u->sq_que_addr - NPUSIM_SQ_MMAP_SQE_OFF);
	sq->map_len = NPUSIM_SQ_MMAP_SIZE(depth);
	sq->que = (uint8_t *)(uintptr_t)u->sq_que_addr;
	sq->head = (uint32_t *)(uintptr_t)u->sq_ctrl_addr[TRS_UIO_HEAD];
	sq->tail_w = (uint32_t *)(uintptr_t)u->sq_ctrl_addr[TRS_UIO_TAIL];
	sq->db = (uint32_t *)(uintptr_t)u->sq_ctrl_addr[TRS_UIO_DB];
	sq->head_reg = (uint32_t *)(uintptr_t)u->sq_ctrl_addr[TRS_UIO_HEAD_REG];
	sq->tail_reg = (uint32_t *)(uintptr_t)u->sq_ctrl_addr[TRS_UIO_TAIL_REG];
	sq->shr = (void *)(uintptr_t)u->sq_ctrl_addr[TRS_UIO_SHR_INFO];
	/* a soft queue without registers is npusim's older uio_t: as uio_d */
	sq->mode = u->soft_que_flag == TRS_SOFT_QUE_SOFT && sq->head_reg ?
		   AH_UIO_T : AH_UIO_D;
	/* uio_d without a tail word: the doorbell is the tail register */
	sq->tail = ah_load(sq->tail_w ? sq->tail_w : sq->db);
	return sq;
}

static bool ah_is_mmap_sq(const struct halSqCqInputInfo *in)
{
	return in->type == DRV_NORMAL_TYPE &&
	       !(in->flag & (TSDRV_FLAG_REUSE_SQ | TSDRV_FLAG_ONLY_SQCQ_ID));
}

/* The SQ slots a send may fill: a ring keeps one empty. */
static uint32_t ah_sq_credit(const struct ah_sq *sq)
{
	uint32_t head = ah_load(sq->head);

	return sq->depth - 1 - (sq->tail + sq->depth - head) % sq->depth;
}

static drvError_t ah_send_uio(struct ah_sq *sq, struct halTaskSendInfo *info)
{
	uint32_t n = info->sqe_num, i;

	if (!n || n >= sq->depth || !info->sqe_addr)
		return DRV_ERROR_INVALID_VALUE;
	if (ah_sq_credit(sq) < n) {
		if (sq->shr)
			__atomic_add_fetch(&sq->shr->send_full, 1,
					   __ATOMIC_RELAXED);
		return DRV_ERROR_NO_RESOURCES;
	}
	for (i = 0; i < n; i++)
		memcpy(sq->que + (size_t)((sq->tail + i) % sq->depth) *
		       TRS_SQE_SIZE, info->sqe_addr + (size_t)i * TRS_SQE_SIZE,
		       TRS_SQE_SIZE);
	info->pos = sq->tail;
	sq->tail = (sq->tail + n) % sq->depth;
	if (sq->tail_w)
		ah_store(sq->tail_w, sq->tail);
	if (sq->mode == AH_UIO_T) {
		/* trs_sq_task_send_set_db: only the SQEs just written queued */
		if ((ah_load(sq->head) + n) % sq->depth == sq->tail)
			ah_store(sq->db, sq->id);
	} else {
		ah_store(sq->db, sq->tail);
	}
	if (sq->shr)
		__atomic_add_fetch(&sq->shr->send_ok, n, __ATOMIC_RELAXED);
	return DRV_ERROR_NONE;
}

/* SQ_HEAD, SQ_TAIL, SQ_DEPTH of a mapped SQ, from the mapping. */
static drvError_t ah_query_uio(struct ah_sq *sq, struct halSqCqQueryInfo *info)
{
	switch (info->prop) {
	case DRV_SQCQ_PROP_SQ_HEAD:
		info->value[0] = ah_load(sq->mode == AH_UIO_T ? sq->head_reg :
							       sq->head);
		return DRV_ERROR_NONE;
	case DRV_SQCQ_PROP_SQ_TAIL:
		/* uio_d without a tail word reads the doorbell back */
		info->value[0] = ah_load(sq->mode == AH_UIO_T ? sq->tail_reg :
					 sq->tail_w ? sq->tail_w : sq->db);
		return DRV_ERROR_NONE;
	case DRV_SQCQ_PROP_SQ_DEPTH:
		info->value[0] = sq->depth;
		return DRV_ERROR_NONE;
	default:
		return DRV_ERROR_NOT_SUPPORT;
	}
}

/* Drop a device's state; the caller closes or keeps its fd. */
static void ah_dev_drop(struct ah_dev *d)
{
	size_t i;

	for (i = 0; i < (size_t)NPUSIM_MAX_TS * NPUSIM_MAX_SQS; i++)
		if (d->sqs[i])
			ah_sq_unmap(d->sqs[i]);
	for (i = 0; i < (size_t)NPUSIM_MAX_TS * NPUSIM_MAX_LOGIC_CQS; i++)
		free(d->lcqs[i]);
	free(d->sqs);
	free(d->lcqs);
	d->sqs = NULL;
	d->lcqs = NULL;
}

/*
 * The driver's open error for a failed open(2) or OPEN of the node: no
 * such device is uda_get_udevid_by_devid()'s DRV_ERROR_INVALID_DEVICE,
 * the rest trs_char_dev_open()'s DRV_ERROR_NO_DEVICE (trs_dev_drv.c:359-372).
 */
static drvError_t ah_open_error(int err)
{
	return err == ENODEV ? DRV_ERROR_INVALID_DEVICE : DRV_ERROR_NO_DEVICE;
}

/* The manager node: /dev/npusim_manager or $NPU_HAL_DEVICE. */
static int ah_node_open(void)
{
	const char *path = getenv("NPU_HAL_DEVICE");

	return open(path && *path ? path : "/dev/" NPUSIM_DEV_NAME,
		    O_RDWR | O_CLOEXEC);
}

/* As drv_comm_intf.c:86-126: @in is not read, @out must be there. */
AH_ENTRY drvError_t halDeviceOpen(uint32_t devid, halDevOpenIn *in,
				  halDevOpenOut *out)
{
	struct ascend_manager_arg arg = { .module_name = ASCEND_MODULE_TSDRV };
	struct ah_dev *d;
	drvError_t ret;
	int fd, err;

	(void)in;
	if (!out || devid >= AH_DEV_MAX_NUM)
		return DRV_ERROR_PARA_ERROR;
	if (devid >= NPUSIM_MAX_DEVICES)
		return DRV_ERROR_INVALID_DEVICE;
	d = &ah_devs[devid];
	pthread_mutex_lock(&ah_open_lock);
	ret = DRV_ERROR_REPEATED_INIT;
	if (d->fd >= 0 && !d->inherited)
		goto out;
	if (d->fd >= 0) {
		/* the parent's: this process opens its own */
		pthread_rwlock_wrlock(&d->lock);
		close(d->fd);
		__atomic_store_n(&d->fd, -1, __ATOMIC_RELEASE);
		ah_dev_drop(d);
		d->inherited = false;
		pthread_rwlock_unlock(&d->lock);
	}
	fd = ah_node_open();
	if (fd < 0) {
		ret = ah_open_error(errno);
		goto out;
	}
	arg.device_id = (int)devid;
	if (ioctl(fd, ASCEND_MANAGER_OPEN, &arg)) {
		err = errno;
		close(fd);
		errno = err;	/* the caller may tell ENODEV from ENOENT */
		ret = ah_open_error(err);
		goto out;
	}
	ret = DRV_ERROR_OUT_OF_MEMORY;
	d->sqs = calloc((size_t)NPUSIM_MAX_TS * NPUSIM_MAX_SQS, sizeof(*d->sqs));
	d->lcqs = calloc((size_t)NPUSIM_MAX_TS * NPUSIM_MAX_LOGIC_CQS,
			 sizeof(*d->lcqs));
	if (!d->sqs || !d->lcqs) {
		free(d->sqs);
		free(d->lcqs);
		d->sqs = NULL;
		d->lcqs = NULL;
		close(fd);
		errno = ENOMEM;
		goto out;
	}
	memset(out, 0, sizeof(*out));
	__atomic_store_n(&d->fd, fd, __ATOMIC_RELEASE);
	ret = DRV_ERROR_NONE;
out:
	pthread_mutex_unlock(&ah_open_lock);
	return ret;
}

/*
 * As drv_comm_intf.c:128-160: @in may be NULL; DEV_CLOSE_ONLY_HOST (a
 * backup device's switch) is not supported, and nothing is closed.
 */
AH_ENTRY drvError_t halDeviceClose(uint32_t devid, halDevCloseIn *in)
{
	struct ah_dev *d;
	int fd;

	if (in && in->close_type == DEV_CLOSE_ONLY_HOST)
		return DRV_ERROR_NOT_SUPPORT;
	if (devid >= AH_DEV_MAX_NUM)
		return DRV_ERROR_PARA_ERROR;
	pthread_mutex_lock(&ah_open_lock);
	d = ah_dev(devid);
	if (!d) {
		pthread_mutex_unlock(&ah_open_lock);
		return DRV_ERROR_UNINIT;
	}
	pthread_rwlock_wrlock(&d->lock);
	fd = d->fd;
	__atomic_store_n(&d->fd, -1, __ATOMIC_RELEASE);
	d->inherited = false;
	ah_dev_drop(d);
	pthread_rwlock_unlock(&d->lock);
	/* the release frees the process's queues, as the driver's does */
	ioctl(fd, ASCEND_MANAGER_CLOSE, NULL);
	close(fd);
	pthread_mutex_unlock(&ah_open_lock);
	return DRV_ERROR_NONE;
}

/*
 * The library's record of logic CQ @a, just allocated (trs_cq_info_init):
 * without one, the CQ is freed again. Caller holds d->lock for writing.
 */
static drvError_t ah_lcq_new(struct ah_dev *d,
			     const struct trs_sqcq_alloc_info *a)
{
	struct trs_sqcq_free_info f = {
		.type = a->type, .tsId = a->tsId, .cqId = a->cqId,
	};
	struct ah_cq *cq = NULL;

	if (a->cqId < NPUSIM_MAX_LOGIC_CQS && a->cqeSize &&
	    !d->lcqs[a->tsId * NPUSIM_MAX_LOGIC_CQS + a->cqId])
		cq = calloc(1, sizeof(*cq));
	if (!cq) {
		ah_ioctl(d->fd, TRS_IOC_SQCQ_FREE, &f);
		return DRV_ERROR_OUT_OF_MEMORY;
	}
	cq->max_num = AH_CQ_BUFF_LEN / a->cqeSize;
	d->lcqs[a->tsId * NPUSIM_MAX_LOGIC_CQS + a->cqId] = cq;
	return DRV_ERROR_NONE;
}

/* The library's logic CQ @cq of @ts, or NULL. */
static struct ah_cq *ah_lcq(struct ah_dev *d, uint32_t ts, uint32_t cq)
{
	struct ah_cq *c = NULL;

	pthread_rwlock_rdlock(&d->lock);
	if (d->lcqs && ts < NPUSIM_MAX_TS && cq < NPUSIM_MAX_LOGIC_CQS)
		c = d->lcqs[ts * NPUSIM_MAX_LOGIC_CQS + cq];
	pthread_rwlock_unlock(&d->lock);
	return c;
}

AH_ENTRY drvError_t halGetChipInfo(uint32_t devId, halChipInfo *chipInfo)
{
	struct ascend_manager_arg arg = { .module_name = ASCEND_MODULE_URD,
					  .device_id = (int)devId };
	struct urd_chip_info ci;
	struct urd_ioctl_arg ua = {
		.devid = devId, .main_cmd = URD_MAIN_CMD_BASIC,
		.sub_cmd = URD_SUBCMD_GET_CHIP_INFO,
		.input = (uintptr_t)&devId, .input_len = sizeof(devId),
		.output = (uintptr_t)&ci, .output_len = sizeof(ci),
	};
	drvError_t ret = DRV_ERROR_INVALID_DEVICE;
	int fd;

	if (!chipInfo)
		return DRV_ERROR_INVALID_VALUE;
	fd = ah_node_open();
	if (fd < 0)
		return ret;
	if (!ioctl(fd, ASCEND_MANAGER_OPEN, &arg) &&
	    !ioctl(fd, URD_IOC_GET_CHIP_INFO, &ua)) {
		memset(chipInfo, 0, sizeof(*chipInfo));
		memcpy(chipInfo->type, ci.type, MAX_CHIP_NAME - 1);
		memcpy(chipInfo->name, ci.name, MAX_CHIP_NAME - 1);
		memcpy(chipInfo->version, ci.version, MAX_CHIP_NAME - 1);
		ret = DRV_ERROR_NONE;
	}
	close(fd);
	return ret;
}

AH_ENTRY drvError_t halSqCqAllocate(uint32_t devId, struct halSqCqInputInfo *in,
				    struct halSqCqOutputInfo *out)
{
	struct trs_uio_info uio = { 0 };
	struct trs_sqcq_alloc_info a;
	struct ah_dev *d = ah_dev(devId);
	struct ah_sq *sq = NULL;
	drvError_t ret;

	if (!in || !out)
		return DRV_ERROR_INVALID_VALUE;
	if (!d)
		return DRV_ERROR_OPEN_FAILED;
	if (in->tsId >= NPUSIM_MAX_TS)
		return DRV_ERROR_INVALID_VALUE;
	memcpy(&a, in, sizeof(a));
	a.uio_info = (uintptr_t)&uio;
	/* any non-zero address asks npusim for a mapping of its choice */
	if (ah_is_mmap_sq(in))
		uio.sq_que_addr = 1;
	pthread_rwlock_wrlock(&d->lock);
	ret = DRV_ERROR_OPEN_FAILED;
	if (!d->sqs)		/* closed meanwhile */
		goto out;
	ret = ah_ioctl(d->fd, TRS_IOC_SQCQ_ALLOC, &a);
	if (ret)
		goto out;
	if (in->type == DRV_NORMAL_TYPE) {
		sq = ah_sq_new(&uio, a.sqId, a.sqeDepth);
		if (!sq || a.sqId >= NPUSIM_MAX_SQS ||
		    d->sqs[a.tsId * NPUSIM_MAX_SQS + a.sqId]) {
			struct trs_sqcq_free_info f = {
				.type = a.type, .tsId = a.tsId,
				.sqId = a.sqId, .cqId = a.cqId,
				.flag = a.flag & TSDRV_FLAG_REUSE_CQ,
			};

			if (uio.uio_flag)
				munmap((void *)(uintptr_t)(uio.sq_que_addr -
					NPUSIM_SQ_MMAP_SQE_OFF),
				       NPUSIM_SQ_MMAP_SIZE(a.sqeDepth));
			free(sq);
			ah_ioctl(d->fd, TRS_IOC_SQCQ_FREE, &f);
			ret = sq ? DRV_ERROR_INNER_ERR : DRV_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		d->sqs[a.tsId * NPUSIM_MAX_SQS + a.sqId] = sq;
	}
	if (in->type == DRV_LOGIC_TYPE) {
		ret = ah_lcq_new(d, &a);
		if (ret)
			goto out;
	}
	in->sqId = a.sqId;
	in->cqId = a.cqId;
	memset(out, 0, sizeof(*out));
	out->sqId = in->type == DRV_NORMAL_TYPE ? a.sqId : SQCQ_UMAX;
	out->cqId = a.cqId;
	out->flag = a.flag;
	/* queueVAddr: an SHM SQ's alone (trs_sqcq.c:1030-1032), none here */
out:
	pthread_rwlock_unlock(&d->lock);
	return ret;
}

AH_ENTRY drvError_t halSqCqFree(uint32_t devId, struct halSqCqFreeInfo *info)
{
	struct trs_sqcq_free_info f;
	struct ah_dev *d = ah_dev(devId);
	struct ah_sq **slot = NULL;
	drvError_t ret;

	if (!info)
		return DRV_ERROR_INVALID_VALUE;
	if (!d)
		return DRV_ERROR_OPEN_FAILED;
	memcpy(&f, info, sizeof(f));
	pthread_rwlock_wrlock(&d->lock);
	if (f.type == DRV_NORMAL_TYPE && f.tsId < NPUSIM_MAX_TS &&
	    f.sqId < NPUSIM_MAX_SQS)
		slot = &d->sqs[f.tsId * NPUSIM_MAX_SQS + f.sqId];
	ret = ah_ioctl(d->fd, TRS_IOC_SQCQ_FREE, &f);
	if (!ret && slot && *slot) {
		ah_sq_unmap(*slot);
		*slot = NULL;
	}
	if (!ret && f.type == DRV_LOGIC_TYPE && f.tsId < NPUSIM_MAX_TS &&
	    f.cqId < NPUSIM_MAX_LOGIC_CQS) {
		free(d->lcqs[f.tsId * NPUSIM_MAX_LOGIC_CQS + f.cqId]);
		d->lcqs[f.tsId * NPUSIM_MAX_LOGIC_CQS + f.cqId] = NULL;
	}
	pthread_rwlock_unlock(&d->lock);
	return ret;
}

AH_ENTRY drvError_t halSqTaskSend(uint32_t devId, struct halTaskSendInfo *info)
{
	struct ah_dev *d = ah_dev(devId);
	struct trs_task_send_info s;
	struct ah_sq *sq;
	drvError_t ret;

	if (!info)
		return DRV_ERROR_INVALID_VALUE;
	if (!d)
		return DRV_ERROR_OPEN_FAILED;
	if (info->type != DRV_NORMAL_TYPE)
		return DRV_ERROR_INVALID_VALUE;
	pthread_rwlock_rdlock(&d->lock);
	sq = ah_sq_lock(d, info->tsId, info->sqId);
	if (!sq) {
		ret = DRV_ERROR_INVALID_VALUE;
	} else if (sq->mode != AH_KIO) {
		ret = ah_send_uio(sq, info);
	} else {
		memcpy(&s, info, sizeof(s));
		ret = ah_ioctl(d->fd, TRS_IOC_SQCQ_SEND, &s);
		if (!ret)
			info->pos = s.pos;
	}
	if (sq)
		pthread_mutex_unlock(&sq->lock);
	pthread_rwlock_unlock(&d->lock);
	return ret;
}

AH_ENTRY drvError_t halCqReportRecv(uint32_t devId,
				    struct halReportRecvInfo *info)
{
	struct trs_report_recv_info r;
	int fd = ah_dev_fd(devId);
	drvError_t ret;

	if (!info)
		return DRV_ERROR_INVALID_VALUE;
	if (fd < 0)
		return DRV_ERROR_OPEN_FAILED;
	memcpy(&r, info, sizeof(r));
	/* the runtime's logic CQs are always read in match mode */
	if (r.type == DRV_LOGIC_TYPE)
		r.res[0] = TRS_RECV_MATCH;
	ret = ah_ioctl(fd, TRS_IOC_SQCQ_RECV, &r);
	if (!ret)
		info->report_cqe_num = r.report_cqe_num;
	return ret;
}

/*
 * The runtime's wait for a logic CQ's reports (npu_driver_res.cc:2262):
 * @in->grpId names the CQ; as trs_cq_recv() (trs_sqcq.c:1939-1973) the
 * RECV fills the CQ's buffer in order, not in match mode ("version 0"),
 * and halCqReportGet() / halReportRelease() hand them out. npusim has no
 * callback CQs and the library no NORMAL CQ of a TS: those are refused.
 */
AH_ENTRY drvError_t halCqReportIrqWait(uint32_t devId,
				       struct halReportInfoInput *in,
				       struct halReportInfoOutput *out)
{
	struct trs_report_recv_info r = { .type = DRV_LOGIC_TYPE };
	struct ah_dev *d = ah_dev(devId);
	struct ah_cq *cq;
	drvError_t ret;

	if (!in || !out || in->tsId >= NPUSIM_MAX_TS)
		return DRV_ERROR_INVALID_VALUE;
	if (!d)
		return DRV_ERROR_OPEN_FAILED;
	cq = in->type == DRV_LOGIC_TYPE ? ah_lcq(d, in->tsId, in->grpId) :
					  NULL;
	if (!cq)
		return DRV_ERROR_INVALID_VALUE;
	r.tsId = in->tsId;
	r.cqId = in->grpId;
	r.timeout = in->timeout;
	r.cqe_addr = (uintptr_t)cq->buf;
	r.cqe_num = cq->max_num;
	r.stream_id = UINT32_MAX;
	r.task_id = UINT32_MAX;
	r.res[0] = 0;
	ret = ah_ioctl(d->fd, TRS_IOC_SQCQ_RECV, &r);
	if (!ret)
		cq->cur_num = r.report_cqe_num;
	return ret;
}

/* The reports the last halCqReportIrqWait() put in the CQ's buffer. */
AH_ENTRY drvError_t halCqReportGet(uint32_t devId, struct halReportGetInput *in,
				   struct halReportGetOutput *out)
{
	struct ah_dev *d = ah_dev(devId);
	struct ah_cq *cq;

	if (!in || !out || in->tsId >= NPUSIM_MAX_TS)
		return DRV_ERROR_INVALID_VALUE;
	if (!d)
		return DRV_ERROR_OPEN_FAILED;
	cq = in->type == DRV_LOGIC_TYPE ? ah_lcq(d, in->tsId, in->cqId) : NULL;
	if (!cq)
		return DRV_ERROR_INVALID_VALUE;
	out->reportPtr = cq->buf;
	out->count = cq->cur_num;
	return DRV_ERROR_NONE;
}

/* Done with them: @info->count must be all of them (trs_sqcq.c:2077-2108). */
AH_ENTRY drvError_t halReportRelease(uint32_t devId,
				     struct halReportReleaseInfo *info)
{
	struct ah_dev *d = ah_dev(devId);
	struct ah_cq *cq;

	if (!info || info->tsId >= NPUSIM_MAX_TS)
		return DRV_ERROR_INVALID_VALUE;
	if (!d)
		return DRV_ERROR_OPEN_FAILED;
	cq = info->type == DRV_LOGIC_TYPE ?
	     ah_lcq(d, info->tsId, info->cqId) : NULL;
	if (!cq || !info->count || info->count != cq->cur_num)
		return DRV_ERROR_INVALID_VALUE;
	cq->cur_num = 0;
	return DRV_ERROR_NONE;
}

AH_ENTRY drvError_t halSqCqQuery(uint32_t devId, struct halSqCqQueryInfo *info)
{
	struct trs_sqcq_query_info q;
	struct ah_dev *d = ah_dev(devId);
	struct ah_sq *sq = NULL;
	drvError_t ret = DRV_ERROR_NOT_SUPPORT;

	if (!info)
		return DRV_ERROR_INVALID_VALUE;
	if (!d)
		return DRV_ERROR_OPEN_FAILED;
	pthread_rwlock_rdlock(&d->lock);
	if (info->type == DRV_NORMAL_TYPE)
		sq = ah_sq_lock(d, info->tsId, info->sqId);
	if (sq && sq->mode != AH_KIO)
		ret = ah_query_uio(sq, info);
	if (sq)
		pthread_mutex_unlock(&sq->lock);
	if (ret == DRV_ERROR_NOT_SUPPORT) {
		memcpy(&q, info, sizeof(q));
		ret = ah_ioctl(d->fd, TRS_IOC_SQCQ_QUERY, &q);
		if (!ret)
			info->value[0] = q.value[0];
	}
	pthread_rwlock_unlock(&d->lock);
	return ret;
}

/*
 * SQ_HEAD / SQ_TAIL of a mapped SQ, as trs_sq_cq_config_uio(): uio_d
 * writes the head or the tail (the doorbell without a tail word) and is
 * done; uio_t moves only the library's own tail, the mapped word staying
 * as it was until the next send. Either moves the library's copy
 * (trs_sqcq.c:1148-1193). Return: whether the ioctl is still to go.
 */
static bool ah_config_uio(struct ah_sq *sq,
			  const struct halSqCqConfigInfo *info)
{
	uint32_t v = info->value[0];

	if (info->prop == DRV_SQCQ_PROP_SQ_TAIL)
		sq->tail = v;
	if (sq->mode != AH_UIO_D)
		return true;
	if (info->prop == DRV_SQCQ_PROP_SQ_HEAD)
		ah_store(sq->head, v);
	else
		ah_store(sq->tail_w ? sq->tail_w : sq->db, v);
	return false;
}

AH_ENTRY drvError_t halSqCqConfig(uint32_t devId, struct halSqCqConfigInfo *info)
{
	struct trs_sqcq_config_info c;
	struct ah_dev *d = ah_dev(devId);
	struct ah_sq *sq = NULL;
	drvError_t ret = DRV_ERROR_NONE;

	if (!info)
		return DRV_ERROR_INVALID_VALUE;
	if (!d)
		return DRV_ERROR_OPEN_FAILED;
	pthread_rwlock_rdlock(&d->lock);
	if (info->type == DRV_NORMAL_TYPE &&
	    (info->prop == DRV_SQCQ_PROP_SQ_HEAD ||
	     info->prop == DRV_SQCQ_PROP_SQ_TAIL)) {
		sq = ah_sq_lock(d, info->tsId, info->sqId);
		if (!sq) {
			pthread_rwlock_unlock(&d->lock);
			return DRV_ERROR_INVALID_VALUE;
		}
		if (info->value[0] >= sq->depth) {
			ret = DRV_ERROR_INVALID_VALUE;
			goto out;
		}
		if (sq->mode != AH_KIO && !ah_config_uio(sq, info))
			goto out;
	}
	memcpy(&c, info, sizeof(c));
	ret = ah_ioctl(d->fd, TRS_IOC_SQCQ_CONFIG, &c);
	if (ret == DRV_ERROR_NOT_SUPPORT)
		ret = DRV_ERROR_NONE;
out:
	if (sq)
		pthread_mutex_unlock(&sq->lock);
	pthread_rwlock_unlock(&d->lock);
	return ret;
}

/* drvIdType_t to npusim's TRS_RES_* (trs_res_type_trans). */
static int ah_res_type(drvIdType_t t)
{
	static const int map[DRV_INVALID_ID] = {
		[DRV_STREAM_ID] = TRS_RES_STREAM, [DRV_EVENT_ID] = TRS_RES_EVENT,
		[DRV_MODEL_ID] = TRS_RES_MODEL, [DRV_NOTIFY_ID] = TRS_RES_NOTIFY,
		[DRV_CMO_ID] = TRS_RES_CMO,
		[DRV_CNT_NOTIFY_ID] = TRS_RES_CNT_NOTIFY,
		[DRV_SQ_ID] = TRS_RES_HW_SQ, [DRV_CQ_ID] = TRS_RES_HW_CQ,
	};

	return (unsigned int)t < DRV_INVALID_ID ? map[t] : -1;
}

AH_ENTRY drvError_t halResourceIdAlloc(uint32_t devId,
				       struct halResourceIdInputInfo *in,
				       struct halResourceIdOutputInfo *out)
{
	struct trs_res_id_para p = { 0 };
	int fd = ah_dev_fd(devId);
	drvError_t ret;

	if (!in || !out || ah_res_type(in->type) < 0)
		return DRV_ERROR_INVALID_VALUE;
	if (fd < 0)
		return DRV_ERROR_OPEN_FAILED;
	p.tsid = in->tsId;
	p.res_type = ah_res_type(in->type);
	ret = ah_ioctl(fd, TRS_IOC_RES_ID_ALLOC, &p);
	if (ret)
		return ret;
	memset(out, 0, sizeof(*out));
	out->resourceId = p.id;
	return DRV_ERROR_NONE;
}

AH_ENTRY drvError_t halResourceIdFree(uint32_t devId,
				      struct halResourceIdInputInfo *in)
{
	struct trs_res_id_para p = { 0 };
	int fd = ah_dev_fd(devId);

	if (!in || ah_res_type(in->type) < 0)
		return DRV_ERROR_INVALID_VALUE;
	if (fd < 0)
		return DRV_ERROR_OPEN_FAILED;
	p.tsid = in->tsId;
	p.res_type = ah_res_type(in->type);
	p.id = in->resourceId;
	return ah_ioctl(fd, TRS_IOC_RES_ID_FREE, &p);
}

/*
 * npusim's extension, not the driver's: the fd halDeviceOpen() opened for
 * @devid in this process (tests and the npu HAL read npusim's truth and
 * config on it), or -1.
 */
ASCEND_HAL_API int npusim_hal_dev_fd(uint32_t devid)
{
	struct ah_dev *d = ah_dev(devid);

	return d && !d->inherited ? d->fd : -1;
}

/*
 * npusim's extension: the trs_uio_info ALLOC gave SQ @sqId of @tsId (the
 * mode npusim picked). DRV_ERROR_INVALID_VALUE for an SQ this process did
 * not allocate through the library.
 */
ASCEND_HAL_API drvError_t npusim_hal_sq_uio(uint32_t devId, uint32_t tsId,
					    uint32_t sqId,
					    struct trs_uio_info *uio)
{
	struct ah_dev *d = ah_dev(devId);
	struct ah_sq *sq;

	if (!d || !uio)
		return DRV_ERROR_INVALID_VALUE;
	pthread_rwlock_rdlock(&d->lock);
	sq = ah_sq_lock(d, tsId, sqId);
	if (sq) {
		*uio = sq->uio;
		pthread_mutex_unlock(&sq->lock);
	}
	pthread_rwlock_unlock(&d->lock);
	return sq ? DRV_ERROR_NONE : DRV_ERROR_INVALID_VALUE;
}
