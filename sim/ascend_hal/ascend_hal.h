/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A stand-in for the Ascend driver's user-space library, libascend_hal.so:
 * the TRS entry points CANN's runtime calls (ascend-abi.md section 5), with
 * the driver's names, argument structs and drvError_t returns, over the
 * TRS ioctls of npusim (include/uapi/ascend_trs.h).
 *
 * What it does as the driver's ascend_hal/trs/core does:
 *   - halDeviceOpen() opens the device once per process (again:
 *     DRV_ERROR_REPEATED_INIT) and binds a fd of the manager node to TSDRV;
 *     every other call on a device not open: DRV_ERROR_OPEN_FAILED. Its
 *     codes are drv_comm_intf.c:86-160's: no @out, or a devid of 1124 or
 *     more, DRV_ERROR_PARA_ERROR (@in is not read); a device that is not
 *     there DRV_ERROR_INVALID_DEVICE; a node that does not open
 *     DRV_ERROR_NO_DEVICE. halDeviceClose(): @in may be NULL; close_type
 *     DEV_CLOSE_ONLY_HOST DRV_ERROR_NOT_SUPPORT (nothing closed); a devid
 *     of 1124 or more DRV_ERROR_PARA_ERROR; not open DRV_ERROR_UNINIT;
 *   - halSqCqAllocate() asks for a mapped SQ for every NORMAL SQ without
 *     TSDRV_FLAG_REUSE_SQ / _ONLY_SQCQ_ID; the kernel picks the mode:
 *     kio (not mapped), uio_t (a soft queue) or uio_d (the hardware queue);
 *   - halSqTaskSend(): kio, the SEND ioctl; uio_t, the SQEs go into the
 *     soft queue, its tail moves, and the trigger doorbell is rung (with
 *     the SQ id) only when the queue was empty before them; uio_d, the SQEs
 *     go into the hardware SQ and the new tail into its doorbell (a 950's
 *     SQ has no tail word: ALLOC's sq_ctrl_addr[TRS_UIO_TAIL] is 0 and the
 *     doorbell is the tail register, trs_sqcq.c:1381,1638-1640). A mapped
 *     SQ without room: DRV_ERROR_NO_RESOURCES at once (send_full counted);
 *     another type's send goes to the library's SQ of that type (GDB: a
 *     maintenance SQ, its own ids: trs_sqcq.c:138-140, trs_interface.c:
 *     1034-1062), which npusim never gives: DRV_ERROR_INVALID_VALUE, as
 *     the driver's library answers a process without one;
 *   - halSqCqQuery() SQ_HEAD / SQ_TAIL / SQ_DEPTH of a mapped SQ read the
 *     mapping (uio_t: the head and tail registers of the hardware SQ; uio_d:
 *     its head and its tail word, or the doorbell without one), with no
 *     ioctl; everything else, and
 *     every kio SQ, is the QUERY ioctl;
 *   - halSqCqConfig() SQ_HEAD / SQ_TAIL of a mapped SQ: uio_d writes the
 *     head, or the tail (the doorbell without a tail word), and issues no
 *     ioctl; uio_t moves only the library's own tail (the mapped tail word
 *     stays as it was until the next send) and issues the CONFIG ioctl,
 *     as kio does (trs_sqcq.c:1148-1193,1302-1321); the ioctl's
 *     EOPNOTSUPP counts as success, as in the driver's library;
 *   - halCqReportRecv() of a logic CQ always asks for match mode;
 *     halCqReportIrqWait() of one (grpId its id) receives in order, not in
 *     match mode, into the library's buffer of the CQ (256 bytes), which
 *     halCqReportGet() hands out and halReportRelease() (all of them)
 *     empties, as trs_sqcq.c:1939-2108;
 *   - ioctl errors map as trs_dev_ioctl() maps them: ETIMEDOUT
 *     DRV_ERROR_WAIT_TIMEOUT, EBUSY DRV_ERROR_BUS_DOWN, ENOSPC
 *     DRV_ERROR_NO_RESOURCES, EOPNOTSUPP DRV_ERROR_NOT_SUPPORT, anything
 *     else DRV_ERROR_IOCRL_FAIL (EINTR is retried).
 *   - halDeviceOpen() in a forked child opens the device afresh (the
 *     parent's, inherited, stays usable until then); a failed open leaves
 *     errno as open(2) or the manager's OPEN set it;
 * Argument checks of its own (NULL pointers, device and TS ranges, an SQ
 * this process did not allocate through it): DRV_ERROR_INVALID_VALUE or
 * DRV_ERROR_INVALID_DEVICE, before anything is changed.
 *
 * The device node is /dev/npusim_manager, or $NPU_HAL_DEVICE.
 */
#ifndef _SIM_ASCEND_HAL_H
#define _SIM_ASCEND_HAL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ASCEND_HAL_API	__attribute__((visibility("default")))

/* drvError_t (ascend_hal_error.h): the values the stand-in returns. */
typedef enum tagDrvError {
	DRV_ERROR_NONE = 0,
	DRV_ERROR_NO_DEVICE = 1,
	DRV_ERROR_INVALID_DEVICE = 2,
	DRV_ERROR_INVALID_VALUE = 3,
	DRV_ERROR_OUT_OF_MEMORY = 6,
	DRV_ERROR_INNER_ERR = 7,
	DRV_ERROR_PARA_ERROR = 8,
	DRV_ERROR_UNINIT = 9,
	DRV_ERROR_REPEATED_INIT = 10,
	DRV_ERROR_BUSY = 13,
	DRV_ERROR_NO_RESOURCES = 14,
	DRV_ERROR_WAIT_TIMEOUT = 16,
	DRV_ERROR_IOCRL_FAIL = 17,
	DRV_ERROR_STATUS_FAIL = 30,
	DRV_ERROR_BUS_DOWN = 33,
	DRV_ERROR_OPEN_FAILED = 53,
	DRV_ERROR_NOT_SUPPORT = 0xfffe,
} drvError_t;

typedef enum tagDrvSqCqType {
	DRV_NORMAL_TYPE = 0,
	DRV_CALLBACK_TYPE,
	DRV_LOGIC_TYPE,
	DRV_SHM_TYPE,
	DRV_CTRL_TYPE,
	DRV_GDB_TYPE,
	DRV_INVALID_TYPE
} drvSqCqType_t;

typedef enum tagDrvSqCqPropType {
	DRV_SQCQ_PROP_SQ_STATUS = 0x0,
	DRV_SQCQ_PROP_SQ_HEAD,
	DRV_SQCQ_PROP_SQ_TAIL,
	DRV_SQCQ_PROP_SQ_DISABLE_TO_ENABLE,
	DRV_SQCQ_PROP_SQ_CQE_STATUS,
	DRV_SQCQ_PROP_SQ_REG_BASE,
	DRV_SQCQ_PROP_SQ_BASE,
	DRV_SQCQ_PROP_SQ_DEPTH,
	DRV_SQCQ_PROP_SQ_PAUSE,
	DRV_SQCQ_PROP_SQ_MEM_ATTR,
	DRV_SQCQ_PROP_SQ_RESUME,
	DRV_SQCQ_PROP_SQCQ_RESET,
	DRV_SQCQ_PROP_CQ_DEPTH,
	DRV_SQCQ_PROP_SQE_SIZE,
	DRV_SQCQ_PROP_CQE_SIZE,
	DRV_SQCQ_PROP_MAX
} drvSqCqPropType_t;

typedef enum tagDrvIdType {
	DRV_STREAM_ID = 0,
	DRV_EVENT_ID,
	DRV_MODEL_ID,
	DRV_NOTIFY_ID,
	DRV_CMO_ID,
	DRV_CNT_NOTIFY_ID,
	DRV_SQ_ID,
	DRV_CQ_ID,
	DRV_INVALID_ID,
} drvIdType_t;

#define SQCQ_RTS_INFO_LENGTH	5
#define SQCQ_RESV_LENGTH	8
#define SQCQ_UMAX		0xFFFFFFFFu
#define RESOURCEID_RESV_LENGTH	8

/* 96 bytes: the SQCQ_ALLOC argument (res[0..1] carry the uio pointer). */
struct halSqCqInputInfo {
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqeSize;
	uint32_t cqeSize;
	uint32_t sqeDepth;
	uint32_t cqeDepth;
	uint32_t grpId;
	uint32_t flag;		/* TSDRV_FLAG_* */
	uint32_t cqId;
	uint32_t sqId;
	uint32_t info[SQCQ_RTS_INFO_LENGTH];
	uint32_t ext_info_len;
	void *ext_info;
	uint32_t res[SQCQ_RESV_LENGTH - 3];
};

struct halSqCqOutputInfo {
	uint32_t sqId;		/* SQCQ_UMAX when there is no SQ */
	uint32_t cqId;
	unsigned long long queueVAddr;
	uint32_t flag;
	uint32_t res[SQCQ_RESV_LENGTH - 3];
};

struct halSqCqFreeInfo {
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqId;
	uint32_t cqId;
	uint32_t flag;
	uint32_t res[SQCQ_RESV_LENGTH];
};

struct halSqCqConfigInfo {
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqId;
	uint32_t cqId;
	drvSqCqPropType_t prop;
	uint32_t value[8];
};

struct halSqCqQueryInfo {
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqId;
	uint32_t cqId;
	drvSqCqPropType_t prop;
	uint32_t value[8];
};

struct halTaskSendInfo {
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqId;
	int32_t timeout;
	uint8_t *sqe_addr;
	uint32_t sqe_num;
	uint32_t pos;		/* out: the first SQE's position */
	uint32_t res[SQCQ_RESV_LENGTH];
};

struct halReportRecvInfo {
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t cqId;
	int32_t timeout;
	uint8_t *cqe_addr;
	uint32_t cqe_num;
	uint32_t report_cqe_num;	/* out */
	uint32_t stream_id;
	uint32_t task_id;
	uint32_t res[SQCQ_RESV_LENGTH];
};

struct halReportInfoInput {
	drvSqCqType_t type;
	uint32_t grpId;		/* the runtime's: a logic CQ's id */
	uint32_t tsId;
	int32_t timeout;	/* ms */
	uint32_t res[SQCQ_RESV_LENGTH];
};

struct halReportInfoOutput {
	uint64_t *cqIdBitmap;	/* callback CQs */
	uint32_t cqIdBitmapSize;
	uint32_t res[SQCQ_RESV_LENGTH];
};

struct halReportGetInput {
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t cqId;
	uint32_t res[SQCQ_RESV_LENGTH];
};

struct halReportGetOutput {
	uint32_t count;		/* reports in the buffer */
	void *reportPtr;	/* the first */
	uint32_t res[SQCQ_RESV_LENGTH];
};

struct halReportReleaseInfo {
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t cqId;
	uint32_t count;		/* all of them */
	uint32_t res[SQCQ_RESV_LENGTH];
};

struct halResourceIdInputInfo {
	drvIdType_t type;
	uint32_t tsId;
	uint32_t resourceId;	/* Free: the id */
	uint32_t res[RESOURCEID_RESV_LENGTH];	/* 0: stream priority, 1: flag */
};

struct halResourceIdOutputInfo {
	uint32_t resourceId;
	uint32_t res[RESOURCEID_RESV_LENGTH];
};

typedef struct hal_dev_open_in {
	uint64_t reserve[8];
} halDevOpenIn;

typedef struct hal_dev_open_out {
	uint64_t reserve[8];
} halDevOpenOut;

typedef struct hal_dev_close_in {
	uint32_t close_type;	/* DEV_CLOSE_TYPE */
	uint32_t reserve0;
	uint64_t reserve[7];
} halDevCloseIn;

typedef enum {
	DEV_CLOSE_HOST_DEVICE = 0,
	DEV_CLOSE_ONLY_HOST,	/* a backup device's switch: not supported */
	DEV_CLOSE_HOST_USER,	/* a process snapshot's restore */
	DEV_CLOSE_TYPE_MAX,
} DEV_CLOSE_TYPE;

#define MAX_CHIP_NAME	32

/* halGetChipInfo(): NUL-terminated, "Ascend", "910B3" or "950PR_9599", "V1" */
typedef struct tagHalChipInfo {
	unsigned char type[MAX_CHIP_NAME];
	unsigned char name[MAX_CHIP_NAME];
	unsigned char version[MAX_CHIP_NAME];
} halChipInfo;

ASCEND_HAL_API drvError_t halDeviceOpen(uint32_t devid, halDevOpenIn *in,
					halDevOpenOut *out);
ASCEND_HAL_API drvError_t halDeviceClose(uint32_t devid, halDevCloseIn *in);
/*
 * The chip of @devId as DMS names it (URD's DMS_GET_CHIP_INFO on a fd of
 * its own, the device need not be open): DRV_ERROR_INVALID_DEVICE when
 * there is no such device or node.
 */
ASCEND_HAL_API drvError_t halGetChipInfo(uint32_t devId, halChipInfo *chipInfo);
ASCEND_HAL_API drvError_t halSqCqAllocate(uint32_t devId,
					  struct halSqCqInputInfo *in,
					  struct halSqCqOutputInfo *out);
ASCEND_HAL_API drvError_t halSqCqFree(uint32_t devId,
				      struct halSqCqFreeInfo *info);
ASCEND_HAL_API drvError_t halSqTaskSend(uint32_t devId,
					struct halTaskSendInfo *info);
ASCEND_HAL_API drvError_t halCqReportRecv(uint32_t devId,
					  struct halReportRecvInfo *info);
ASCEND_HAL_API drvError_t halCqReportIrqWait(uint32_t devId,
					     struct halReportInfoInput *in,
					     struct halReportInfoOutput *out);
ASCEND_HAL_API drvError_t halCqReportGet(uint32_t devId,
					 struct halReportGetInput *in,
					 struct halReportGetOutput *out);
ASCEND_HAL_API drvError_t halReportRelease(uint32_t devId,
					   struct halReportReleaseInfo *info);
ASCEND_HAL_API drvError_t halSqCqQuery(uint32_t devId,
				       struct halSqCqQueryInfo *info);
ASCEND_HAL_API drvError_t halSqCqConfig(uint32_t devId,
					struct halSqCqConfigInfo *info);
ASCEND_HAL_API drvError_t halResourceIdAlloc(uint32_t devId,
					     struct halResourceIdInputInfo *in,
					     struct halResourceIdOutputInfo *out);
ASCEND_HAL_API drvError_t halResourceIdFree(uint32_t devId,
					    struct halResourceIdInputInfo *in);

/*
 * npusim's extension (not the driver's): the fd halDeviceOpen() opened for
 * @devid in this process, or -1 (not open, or opened by the parent of a
 * fork). npusim's own controls (config, truth) are ioctls on it.
 */
ASCEND_HAL_API int npusim_hal_dev_fd(uint32_t devid);

struct trs_uio_info;
/* npusim's extension: the trs_uio_info ALLOC gave an SQ of this process. */
ASCEND_HAL_API drvError_t npusim_hal_sq_uio(uint32_t devId, uint32_t tsId,
					    uint32_t sqId,
					    struct trs_uio_info *uio);

#ifdef __cplusplus
}
#endif

#endif /* _SIM_ASCEND_HAL_H */
