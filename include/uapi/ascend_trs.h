/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The Ascend driver's ioctl ABI as steptime sees it. npusim's own controls,
 * which the real driver does not have, are in npusim_abi.h beside it.
 *
 * Sections 1-3 are the real driver's ABI (davinci_manager, its TRS and URD
 * sub-drivers), written from the layout tables in ascend-abi.md sections 2-3
 * and checked against hicann/driver: command values and struct layouts are
 * byte for byte those of the real driver (LP64: x86_64, aarch64).
 *
 * Conventions: integers are little-endian fixed width; user pointers are
 * __aligned_u64. "In" fields are read by the driver, "Out" fields written
 * back; npusim's reserved fields must be zero unless stated otherwise.
 *
 * This header is shared by the kernel module, the BPF program (which includes
 * it after vmlinux.h, with ASCEND_TRS_NO_LINUX_TYPES defined) and user space.
 */
#ifndef _UAPI_ASCEND_TRS_H
#define _UAPI_ASCEND_TRS_H

#ifndef ASCEND_TRS_NO_LINUX_TYPES
#include <linux/types.h>
#include <linux/ioctl.h>
#endif

/* ---------------------------------------------------------------------- */
/* 1. davinci_manager: bind a fd to a sub-driver (magic 'Z')              */
/* ---------------------------------------------------------------------- */

#define ASCEND_MANAGER_MAGIC		'Z'
#define ASCEND_MODULE_NAME_LEN		256
#define ASCEND_MODULE_TSDRV		"TSDRV"	/* task scheduler: TRS */
#define ASCEND_MODULE_URD		"URD"	/* device management: DMS */

/* Argument of OPEN and CLOSE: 260 bytes. */
struct ascend_manager_arg {
	char	module_name[ASCEND_MODULE_NAME_LEN];	/* In */
	__s32	device_id;				/* In: device index */
};

/* Argument of GET_MODULE_STATUS: 260 bytes. */
struct ascend_module_status {
	char	name[ASCEND_MODULE_NAME_LEN];	/* In: module name */
	__u32	status;				/* Out: 1 no fd of it is open */
};

/* _IO: the size field is 0 although an argument pointer is passed. */
#define ASCEND_MANAGER_OPEN		0x00005a00	/* _IO('Z', 0) */
#define ASCEND_MANAGER_CLOSE		0x00005a01	/* _IO('Z', 1) */
#define ASCEND_MANAGER_GET_MODULE_STATUS 0x00005a02	/* _IO('Z', 2) */

/*
 * What the manager does (davinci_intf_init.c), npusim alike:
 * OPEN binds the fd to the named sub-driver and device. The name is cut at
 * 255 bytes; an empty name, an unknown module or a NULL argument: EINVAL; a
 * device_id with no device: ENODEV; an fd that was OPENed before (even if
 * CLOSEd since): ENOSYS. Every other magic goes to the bound sub-driver; on
 * an fd that is not bound: ENODEV.
 * CLOSE ignores its argument. Called by the process that OPENed the fd, it
 * marks the fd as closed on purpose, so that its release frees only this
 * fd's resources; from another process it does nothing. Either way it
 * returns 0, and the fd keeps working until it is released.
 * GET_MODULE_STATUS works on any fd: status is 1 when no open fd of any
 * process is bound to the named module, else 0 (an empty name: EINVAL).
 * 'Z' numbers other than 0-2: EINVAL.
 */

/* ---------------------------------------------------------------------- */
/* 2. TRS (task scheduler) commands (magic 'X'), on a fd bound to TSDRV   */
/* ---------------------------------------------------------------------- */

#define TRS_IOC_MAGIC			'X'
#define TRS_MAX_CMD			33	/* nr 0..32 exist */

/* drvSqCqType_t: the first field of every SQCQ argument picks the handler. */
#define TRS_SQCQ_TYPE_NORMAL		0	/* hardware SQ + CQ */
#define TRS_SQCQ_TYPE_CALLBACK		1
#define TRS_SQCQ_TYPE_LOGIC		2	/* logic CQ (per stream) */
#define TRS_SQCQ_TYPE_SHM		3
#define TRS_SQCQ_TYPE_CTRL		4
#define TRS_SQCQ_TYPE_GDB		5
#define TRS_SQCQ_TYPE_MAX		6	/* DRV_INVALID_TYPE */

/* TSDRV_FLAG_*: halSqCqInputInfo.flag and halSqCqFreeInfo.flag. */
#define TSDRV_FLAG_REUSE_CQ		(1u << 0)  /* share the CQ in cqId */
#define TSDRV_FLAG_REUSE_SQ		(1u << 1)
#define TSDRV_FLAG_THREAD_BIND_IRQ	(1u << 2)
#define TSDRV_FLAG_ONLY_SQCQ_ID		(1u << 4)
#define TSDRV_FLAG_REMOTE_ID		(1u << 5)
#define TSDRV_FLAG_SHR_ID_SHADOW	(1u << 6)
#define TSDRV_FLAG_SPECIFIED_SQ_ID	(1u << 7)
#define TSDRV_FLAG_SPECIFIED_CQ_ID	(1u << 8)
#define TSDRV_FLAG_NO_CQ_MEM		(1u << 9)
#define TSDRV_FLAG_RSV_SQ_ID		(1u << 10)
#define TSDRV_FLAG_RSV_CQ_ID		(1u << 11)
#define TSDRV_FLAG_AGENT_ID		(1u << 12)
#define TSDRV_FLAG_RANGE_ID		(1u << 13)
#define TSDRV_FLAG_TASK_SINK_SQ		(1u << 14)
#define TSDRV_FLAG_RTS_RSV_SQCQ_ID	(1u << 15)
#define TSDRV_FLAG_NO_SQ_MEM		(1u << 16)
#define TSDRV_FLAG_PRE_ASYNC_SQ		(1u << 17)
#define TSDRV_FLAG_SPECIFIED_SQ_MEM	(1u << 31)

/* info[0] of an ALLOC that binds no stream. */
#define TRS_STREAM_ID_NONE		0xffffffffu

/*
 * struct trs_uio_info: user memory named by ALLOC res[0..1]. Every ALLOC
 * (any type) copies it in first (EFAULT if the pointer is bad) and, on
 * success, copies it back together with the whole halSqCqInputInfo.
 */
#define TRS_UIO_SHR_INFO		0	/* sq_ctrl_addr[] indexes */
#define TRS_UIO_HEAD			1
#define TRS_UIO_TAIL			2
#define TRS_UIO_DB			3
#define TRS_UIO_HEAD_REG		4
#define TRS_UIO_TAIL_REG		5
#define TRS_UIO_ADDR_MAX		6

#define TRS_SOFT_QUE_NONE		0	/* soft_que_flag: not a soft queue */
#define TRS_SOFT_QUE_SOFT		1	/* "uio_t": SQEs pass the kernel */
#define TRS_SOFT_QUE_HW			2	/* hardware queue */

struct trs_uio_info {
	__u64	sq_que_addr;	/* In: non-zero asks for a mapped SQ; Out */
	__u64	sq_ctrl_addr[TRS_UIO_ADDR_MAX]; /* In/Out: TRS_UIO_* mappings */
	__u8	sq_mem_local_flag; /* Out */
	__u8	soft_que_flag;	/* Out: TRS_SOFT_QUE_*; 1 = "uio_t" */
	__u8	uio_flag;	/* Out: 1 the SQ is mapped (uio_t or uio_d) */
	__u8	pad[5];
};

/*
 * struct trs_sq_shr_info: the page sq_ctrl_addr[TRS_UIO_SHR_INFO] maps for
 * a mapped SQ (zeroed at ALLOC), shared by the kernel and the user library.
 * The kernel sets cqe_status to 1 when the SQ's CQ gets a report (the
 * library clears it); the library counts send_full (a send that found no
 * room) and send_ok (SQEs sent, added after the doorbell, never wrapping).
 * The rsv gap keeps the kernel's and the library's words in different
 * cache lines.
 */
struct trs_sq_shr_info {
	__u32	cqe_status;
	__u8	rsv[1020];
	__u64	send_full;
	__u64	send_ok;
};

/*
 * halSqCqInputInfo, 96 bytes. ALLOC of type NORMAL allocates an SQ and,
 * unless flag has TSDRV_FLAG_REUSE_CQ, a CQ; type LOGIC a logic CQ.
 */
struct trs_sqcq_alloc_info {
	__u32	type;		/* In: TRS_SQCQ_TYPE_* */
	__u32	tsId;		/* In: task scheduler of the fd's device */
	__u32	sqeSize;	/* In: 64 (NORMAL) */
	__u32	cqeSize;	/* In: 16 (NORMAL), 32 (LOGIC) */
	__u32	sqeDepth;	/* In: SQ entries, <= TRS_SQ_MAX_DEPTH */
	__u32	cqeDepth;	/* In: CQ entries */
	__u32	grpId;		/* In */
	__u32	flag;		/* In: TSDRV_FLAG_* */
	__u32	cqId;		/* In (REUSE_CQ) / Out: the CQ */
	__u32	sqId;		/* Out: the SQ (NORMAL); 0 for LOGIC */
	__u32	info[5];	/* In: [0] stream id; LOGIC: [1] thread id */
	__u32	ext_info_len;	/* In */
	__aligned_u64 ext_info;	/* In: user pointer, optional */
	__aligned_u64 uio_info;	/* In: res[0..1], struct trs_uio_info * */
	__u32	res[3];		/* res[2..4] */
	__u32	pad;		/* implicit padding in the real struct */
};

/* halSqCqOutputInfo, 40 bytes: the user library's output, not an ioctl's. */
struct trs_sqcq_alloc_out {
	__u32	sqId;
	__u32	cqId;
	__aligned_u64 queueVAddr;
	__u32	flag;
	__u32	res[5];
};

/* halSqCqFreeInfo, 52 bytes. */
struct trs_sqcq_free_info {
	__u32	type;		/* In: TRS_SQCQ_TYPE_* */
	__u32	tsId;		/* In */
	__u32	sqId;		/* In: NORMAL only */
	__u32	cqId;		/* In */
	__u32	flag;		/* In: REUSE_CQ: keep the CQ (pre-STARS) */
	__u32	res[8];
};

/* drvSqCqPropType_t: QUERY and CONFIG props. */
#define TRS_SQCQ_PROP_SQ_STATUS		0
#define TRS_SQCQ_PROP_SQ_HEAD		1	/* value[0]: SQ position */
#define TRS_SQCQ_PROP_SQ_TAIL		2
#define TRS_SQCQ_PROP_SQ_DISABLE_TO_ENABLE 3
#define TRS_SQCQ_PROP_SQ_CQE_STATUS	4	/* read clears */
#define TRS_SQCQ_PROP_SQ_REG_BASE	5
#define TRS_SQCQ_PROP_SQ_BASE		6
#define TRS_SQCQ_PROP_SQ_DEPTH		7
#define TRS_SQCQ_PROP_SQ_PAUSE		8
#define TRS_SQCQ_PROP_SQ_MEM_ATTR	9
#define TRS_SQCQ_PROP_SQ_RESUME		10
#define TRS_SQCQ_PROP_SQCQ_RESET	11
#define TRS_SQCQ_PROP_CQ_DEPTH		12
#define TRS_SQCQ_PROP_SQE_SIZE		13
#define TRS_SQCQ_PROP_CQE_SIZE		14

/* halSqCqQueryInfo and halSqCqConfigInfo, 52 bytes each. */
struct trs_sqcq_query_info {
	__u32	type;		/* In: NORMAL only */
	__u32	tsId;		/* In */
	__u32	sqId;		/* In */
	__u32	cqId;		/* In */
	__u32	prop;		/* In: TRS_SQCQ_PROP_* */
	__u32	value[8];	/* Out: value[0] (REG_BASE: [0..2]) */
};

struct trs_sqcq_config_info {
	__u32	type;		/* In: NORMAL or LOGIC */
	__u32	tsId;		/* In */
	__u32	sqId;		/* In */
	__u32	cqId;		/* In */
	__u32	prop;		/* In: TRS_SQCQ_PROP_* */
	__u32	value[8];	/* In */
};

#define TRS_TASK_TYPE_NORMAL		TRS_SQCQ_TYPE_NORMAL
#define TRS_TASK_TYPE_CALLBACK		TRS_SQCQ_TYPE_CALLBACK
#define TRS_TASK_TYPE_LOGIC		TRS_SQCQ_TYPE_LOGIC

/* halTaskSendInfo, 64 bytes: submit sqe_num SQEs to an SQ. */
struct trs_task_send_info {
	__u32	type;		/* In: TRS_SQCQ_TYPE_NORMAL */
	__u32	tsId;		/* In */
	__u32	sqId;		/* In */
	__s32	timeout;	/* In: ms to wait for SQ space; 0 none, <0 forever */
	__aligned_u64 sqe_addr;	/* In: user pointer to sqe_num * 64 bytes */
	__u32	sqe_num;	/* In: 1..SQ depth */
	__u32	pos;		/* Out: SQ position of the first SQE */
	__u32	res[8];
};

#define TRS_REPORT_TASK_ANY		0xffffffffu
#define TRS_RECV_MATCH			1	/* res[0]: match mode */

/* halReportRecvInfo, 72 bytes: wait for and fetch completion reports. */
struct trs_report_recv_info {
	__u32	type;		/* In: NORMAL (16-byte CQEs) or LOGIC (32) */
	__u32	tsId;		/* In */
	__u32	cqId;		/* In */
	__s32	timeout;	/* In: ms to wait for a report; -1 forever */
	__aligned_u64 cqe_addr;	/* In: user buffer of cqe_num CQEs */
	__u32	cqe_num;	/* In: capacity, >= 1 */
	__u32	report_cqe_num;	/* Out: reports written */
	__u32	stream_id;	/* In: match mode: the report wanted */
	__u32	task_id;	/* In: match mode */
	__u32	res[8];		/* res[0] = TRS_RECV_MATCH: match mode */
};

/* TRS_RES_ID_*: device resource ids (streams, events, ...). 44 bytes. */
#define TRS_RES_STREAM			0
#define TRS_RES_EVENT			1
#define TRS_RES_NOTIFY			2
#define TRS_RES_MODEL			3
#define TRS_RES_CMO			4
#define TRS_RES_CNT_NOTIFY		5
#define TRS_RES_HW_SQ			6	/* first type RES_ID refuses */
#define TRS_RES_HW_CQ			7
#define TRS_RES_LOGIC_CQ		12
#define TRS_RES_MAX_TYPE		16

struct trs_res_id_para {
	__u32	tsid;		/* In */
	__s32	res_type;	/* In: TRS_RES_* below TRS_RES_HW_SQ */
	__u32	id;		/* Out (ALLOC) / In (FREE) */
	__u32	usr_para[3];	/* In: stream priority, flag, vfid */
	__u32	para;		/* In */
	__u32	flag;		/* In */
	__s32	prop;		/* In */
	__u32	value[2];	/* Out: id address (unused by npusim) */
};

#define TRS_IOC_RES_ID_ALLOC	0xc02c5800	/* _IOWR('X', 0, 44) */
#define TRS_IOC_RES_ID_FREE	0x402c5801	/* _IOW('X', 1, 44) */
#define TRS_IOC_SQCQ_ALLOC	0xc060580f	/* _IOWR('X', 15, 96) */
#define TRS_IOC_SQCQ_FREE	0x40345810	/* _IOW('X', 16, 52) */
#define TRS_IOC_SQCQ_CONFIG	0x40345811	/* _IOW('X', 17, 52) */
#define TRS_IOC_SQCQ_QUERY	0xc0345812	/* _IOWR('X', 18, 52) */
#define TRS_IOC_SQCQ_SEND	0x40405813	/* _IOW('X', 19, 64) */
#define TRS_IOC_SQCQ_RECV	0xc0485814	/* _IOWR('X', 20, 72) */

#define TRS_IOC_NR_RES_ID_ALLOC	0
#define TRS_IOC_NR_RES_ID_FREE	1
#define TRS_IOC_NR_SQCQ_ALLOC	15
#define TRS_IOC_NR_SQCQ_FREE	16
#define TRS_IOC_NR_SQCQ_CONFIG	17
#define TRS_IOC_NR_SQCQ_QUERY	18
#define TRS_IOC_NR_SQCQ_SEND	19
#define TRS_IOC_NR_SQCQ_RECV	20

/*
 * URD (device management, DMS) on a fd OPENed with "URD": commands are
 * _IO(main_cmd, sub_cmd) with a struct urd_ioctl_arg. The device counter
 * ("osc") frequency is main 'E' (DMS_MAIN_CMD_BASIC), sub 24: input a u32
 * logical device id, output a u64 in Hz (EBUSY while the device has not
 * measured it yet). This is what halGetDeviceInfo(INFO_TYPE_DEV_OSC_FREQUE)
 * uses on a real host, and what steptime's loader reads.
 */
#define URD_MAIN_CMD_BASIC		0x45	/* 'E' */
#define URD_SUBCMD_GET_HOST_OSC_FREQ	23
#define URD_SUBCMD_GET_DEV_OSC_FREQ	24
#define URD_SUBCMD_GET_CHIP_INFO	29
#define URD_IOC_GET_DEV_OSC_FREQ	0x00004518	/* _IO('E', 24) */
#define URD_IOC_GET_CHIP_INFO		0x0000451d	/* _IO('E', 29) */

struct urd_ioctl_arg {
	__u32	devid;		/* In: ignored by this command */
	__u32	pad0;
	__u32	main_cmd;	/* In: URD_MAIN_CMD_BASIC */
	__u32	sub_cmd;	/* In: URD_SUBCMD_* */
	__aligned_u64 filter;	/* In: NULL */
	__u32	filter_len;	/* In: 0 */
	__u32	pad1;
	__aligned_u64 input;	/* In: user pointer */
	__u32	input_len;	/* In */
	__u32	pad2;
	__aligned_u64 output;	/* In: user pointer */
	__u32	output_len;	/* In */
	__u32	pad3;
};

/*
 * The chip: main 'E', sub 29 (DMS_GET_CHIP_INFO), input a u32 logical
 * device id (EINVAL if there is no such device), output this struct,
 * input_len 4 and output_len 112 exactly (EINVAL otherwise). What
 * halGetChipInfo() and dsmi_get_chip_info() return (devdrv_query_chip_info
 * in the driver, dms_chip_info_adapt.c). The strings are NUL-terminated;
 * on 910B, 910_93 and 950 hosts (built with the driver's CFG_FEATURE_PG)
 * @name is the chip's SoC version without "Ascend": "910B1".."910B4",
 * "910B2C", "910_9391", "910_9362", ..., "950PR_9599", "950DT_95A1", ...;
 * without it "910B" or "950" from the chip-name register. The chip family
 * fixes the STARS SQE layout (hicann/runtime: 910B and 910_93 are
 * CHIP_910_B_93, isStarsV2 false; 950 is CHIP_DAVID, isStarsV2 true).
 * Under the driver's virtual-machine flavour (asdrv_vdms) the same struct
 * comes from the DEVMNG sub-driver instead (DEVDRV_MANAGER_GET_CHIP_INFO,
 * _IO('M', 103)); steptime does not read that one.
 */
#define URD_CHIP_NAME_LEN		32

struct urd_chip_info {
	__u32	dev_id;				/* Out: physical device id */
	__u32	reg_val;			/* Out: 0 (not filled) */
	char	type[URD_CHIP_NAME_LEN];	/* Out: "Ascend" */
	char	name[URD_CHIP_NAME_LEN];	/* Out: "910B3", "950PR_9599" */
	char	version[URD_CHIP_NAME_LEN];	/* Out: "V1" */
	__u8	resv[8];			/* Out: 0 */
};

/* ---------------------------------------------------------------------- */
/* 3. Queue entries                                                       */
/* ---------------------------------------------------------------------- */

#define TRS_SQE_SIZE		64
#define TRS_HW_CQE_SIZE		16	/* RECV type NORMAL, STARS v1 */
#define TRS_HW_CQE_SLOT_V2	32	/* RECV type NORMAL, STARS v2: the slot */
#define TRS_CQE_SIZE		32	/* RECV type LOGIC: struct trs_logic_cqe */
#define TRS_SQ_MAX_DEPTH	4096

/* SQE type: low 6 bits of byte 0 (bits 6, 7 are lock flags). */
#define TRS_SQE_TYPE_MASK	0x3f
#define TRS_SQE_FFTS		0
#define TRS_SQE_AICPU		1
#define TRS_SQE_PLACE_HOLDER	3
#define TRS_SQE_EVENT_RECORD	4
#define TRS_SQE_EVENT_WAIT	5
#define TRS_SQE_NOTIFY_RECORD	6
#define TRS_SQE_NOTIFY_WAIT	7
#define TRS_SQE_WRITE_VALUE	8
#define TRS_SQE_SDMA		11
/* notify id of NOTIFY_RECORD/WAIT: the low 13 bits of the u32 @8 */
#define TRS_SQE_NOTIFY_ID_MASK	0x1fffu

/* STARS v1 (910B, 910_93): byte 1 bit-fields. */
#define TRS_SQE_F_IE_MASK	0x03
#define TRS_SQE_F_PRE_P_MASK	0x0c
#define TRS_SQE_F_POST_P_MASK	0x30
#define TRS_SQE_F_WR_CQE	0x40	/* write a report for this SQE */
/* STARS v2 (950): byte 1 bit-fields. */
#define TRS_SQE_V2_F_IE		0x01
#define TRS_SQE_V2_F_PRE_P	0x02
#define TRS_SQE_V2_F_POST_P	0x04
#define TRS_SQE_V2_F_WR_CQE	0x08	/* write a report for this SQE */
#define TRS_SQE_V2_F_HEAD_UPDATE 0x40
/*
 * STARS v2: byte 15 bits 5-7 of a task's first SQE, sqeLength: how many
 * SQEs of the same task follow it (0-4; hicann/runtime stars_david.hpp:165,
 * set in ccu_sqe.cc:35,103 and fusion_task.cc:118). They may carry no
 * header at all (a CCU task's second SQE is raw arguments).
 */
#define TRS_SQE_V2_LEN_SHIFT	13	/* in the u16 at @14 */
#define TRS_SQE_V2_LEN_MASK	0x7

/*
 * v1 rt_stream_id bit 15: a "match" task (a synchronous one). Its report
 * carries TRS_CQE_F_MATCH and stream_id & TRS_CQE_STREAM_ID_MASK, and a
 * match-mode RECV hands it out only to the RECV that names it (section 4).
 */
#define TRS_SQE_STREAM_MATCH	0x8000u
#define TRS_CQE_STREAM_ID_MASK	0x7fffu

/* Task type of a place-holder SQE (v1 u16 @2, v2 u16 @12). */
#define TRS_TASK_PROFILER_TRACE_EX	26	/* a step mark */
#define TRS_MODEL_ID_NONE		0xffffffffull

/*
 * The 64-byte STARS v1 SQE. The header is packed (#pragma pack(1) in the
 * driver); bytes 8..63 are type-specific.
 */
struct trs_sqe {
	__u8	type;		/* @0: TRS_SQE_* | lock bits */
	__u8	flags;		/* @1: TRS_SQE_F_* */
	__u16	block_dim;	/* @2: block dim, or task type (place-holder) */
	__u16	rt_stream_id;	/* @4 */
	__u16	task_id;	/* @6 */
	union {
		__u8	raw[56];		/* @8 */
		struct {			/* TRS_SQE_PLACE_HOLDER */
			__u32	res0[2];		/* @8 */
			__u64	profiler_trace_id;	/* @16: step index id */
			__u64	model_id;		/* @24 */
			__u16	tag_id;			/* @32: step tag */
			__u8	res1[22];		/* @34 */
			__u32	sim_error;		/* @56 (npusim) */
			__u32	sim_duration_ns;	/* @60 (npusim) */
		} __attribute__((packed)) place_holder;
		struct {			/* every other type */
			__u8	payload[48];		/* @8 */
			__u32	sim_error;		/* @56 (npusim) */
			__u32	sim_duration_ns;	/* @60 (npusim) */
		} __attribute__((packed)) task;
	};
} __attribute__((packed));

/*
 * The 64-byte STARS v2 SQE: no stream id in the header (the SQ's stream,
 * from ALLOC info[0], is the task's stream), a 32-bit task id, and a
 * place-holder's task type at @12. The payload from @16 is laid out as v1's.
 */
struct trs_sqe_v2 {
	__u8	type;		/* @0: TRS_SQE_* | lock bits */
	__u8	flags;		/* @1: TRS_SQE_V2_F_* */
	__u16	block_dim;	/* @2 */
	__u32	task_id;	/* @4 */
	union {
		__u8	raw[56];		/* @8 */
		struct {			/* TRS_SQE_PLACE_HOLDER */
			__u32	res0;			/* @8 */
			__u16	task_type;		/* @12 */
			__u8	kernel_credit;		/* @14 */
			__u8	timeout_type;		/* @15 */
			__u64	profiler_trace_id;	/* @16 */
			__u64	model_id;		/* @24 */
			__u16	tag_id;			/* @32 */
			__u8	res1[22];		/* @34 */
			__u32	sim_error;		/* @56 (npusim) */
			__u32	sim_duration_ns;	/* @60 (npusim) */
		} __attribute__((packed)) place_holder;
		struct {
			__u8	payload[48];		/* @8 */
			__u32	sim_error;		/* @56 (npusim) */
			__u32	sim_duration_ns;	/* @60 (npusim) */
		} __attribute__((packed)) task;
	};
} __attribute__((packed));

/*
 * npusim convention (ignored by real devices, whose payload differs): the
 * last 8 bytes of any SQE set the simulated execution time in ns (0: the
 * device default) and an injected error code (0: succeed). A failed SQE
 * always produces a report, with error_code = sim_error and error_bit set.
 */

/*
 * The STARS hardware CQE (rt_stars_cqe_t), what RECV of type NORMAL returns,
 * one per slot of the cqeSize its CQ's ALLOC gave: the runtime asks 16 on
 * v1 and 32 on v2 (RT_DAVID_VIRTUAL_CQE_SIZE). Word 0 bit-fields are
 * TRS_HW_CQE_*. On success of an event record or place-holder SQE, @8 is
 * the device counter when the task ran; on a failure, the error layout
 * applies. v2's CQE is 20 bytes: these 16, then a u32 @16 (a DVPP task's
 * error, UB DMA status; 0 for npusim's tasks); its stream_id has all 16
 * bits (no match bit), and its error byte @9 has notify_attached (bit 0)
 * and next_task_vld (bit 1) where v1 has drop and acc error.
 */
#define TRS_HW_CQE_PHASE	0x0001u
#define TRS_HW_CQE_WARN		0x0002u
#define TRS_HW_CQE_EVT		0x0004u	/* event record */
#define TRS_HW_CQE_PLACE_HOLD	0x0008u	/* place-holder */
#define TRS_HW_CQE_SQ_ID_SHIFT	4
#define TRS_HW_CQE_SQ_ID_MASK	0x7ff0u	/* 11 bits */
#define TRS_HW_CQE_ERROR	0x8000u
/*
 * Error type @8, low 6 bits, set on a failure (the runtime tests them,
 * RT_STARS_EXIST_ERROR); the driver passes them on as the logic CQE's
 * error_type and the u32 @12 (software status) as its error_code.
 */
#define TRS_CQE_ERR_TYPE_EXCEPTION	0x01u
#define TRS_CQE_ERR_TYPE_TRAP		0x02u
#define TRS_CQE_ERR_TYPE_TASK_TIMEOUT	0x04u
#define TRS_CQE_ERR_TYPE_SQE_ERROR	0x08u
#define TRS_CQE_ERR_TYPE_RES_CONFLICT	0x10u
#define TRS_CQE_ERR_TYPE_SW_STATUS	0x20u
#define TRS_CQE_ERR_TYPE_MASK		0x3fu
/* error byte @9: drop bit 0, acc error bit 1, sqe type bits 2-7 */
#define TRS_HW_CQE_ERR_DROP	0x01u
#define TRS_HW_CQE_ERR_ACC	0x02u
/* v2's error byte @9, bits 0-1 */
#define TRS_HW_CQE_V2_NOTIFY_ATTACHED	0x01u
#define TRS_HW_CQE_V2_NEXT_TASK_VLD	0x02u
#define TRS_HW_CQE_ERR_SQE_TYPE_SHIFT 2

struct trs_hw_cqe {
	__u16	bits;		/* @0: TRS_HW_CQE_* and sq_id */
	__u16	sq_head;	/* @2 */
	__u16	stream_id;	/* @4: bit 15: match task (v1) */
	__u16	task_id;	/* @6 */
	union {
		__u64	timestamp;		/* @8: device counter */
		struct {
			__u8	error_type;	/* @8: low 6 bits */
			__u8	error_flags;	/* @9: TRS_HW_CQE_ERR_* */
			__u16	sqe_index;	/* @10 */
			__u32	error_code;	/* @12 */
		} error;
	};
};

/* Logic CQE flags (u16 @14). */
#define TRS_CQE_F_MATCH		(1u << 0)
#define TRS_CQE_F_DROP		(1u << 1)
#define TRS_CQE_F_ERROR		(1u << 2)
#define TRS_CQE_F_ACC_ERROR	(1u << 3)
#define TRS_CQE_F_NEXT_TASK_VLD	(1u << 4)
#define TRS_CQE_F_NOTIFY_ATTACHED (1u << 5)

/* The 32-byte logic CQE: one completion report, what RECV LOGIC returns. */
struct trs_logic_cqe {
	__u16	stream_id;	/* @0 */
	__u16	task_id;	/* @2 */
	__u32	error_code;	/* @4: 0 on success */
	__u8	error_type;	/* @8 */
	__u8	sqe_type;	/* @9: TRS_SQE_* of the reported SQE */
	__u16	sq_id;		/* @10 */
	__u16	sq_head;	/* @12: SQ consumed up to here (exclusive) */
	__u16	flags;		/* @14: TRS_CQE_F_* */
	__u64	timestamp;	/* @16: counter, or SQE index (error) */
	__u64	enque_timestamp; /* @24: host seconds, match reports only */
};

#endif /* _UAPI_ASCEND_TRS_H */
