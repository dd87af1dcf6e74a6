/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The Ascend driver's ioctl ABI as steptime sees it, and the controls of the
 * npusim simulator that stands in for the device.
 *
 * Sections 1-3 are the real driver's ABI (davinci_manager, its TRS and URD
 * sub-drivers), written from the layout tables in ascend-abi.md sections 2-3
 * and checked against hicann/driver: command values and struct layouts are
 * byte for byte those of the real driver (LP64: x86_64, aarch64). Section 4
 * exists only in npusim (magic 'N'); the real driver has no such commands
 * and steptime never depends on them outside tests.
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
#define TRS_HW_CQE_SIZE		16	/* RECV type NORMAL */
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
 * The 16-byte STARS hardware CQE (rt_stars_cqe_t, v1 and v2 alike), what
 * RECV of type NORMAL returns. Word 0 bit-fields are TRS_HW_CQE_*.
 * On success of an event record or place-holder SQE, @8 is the device
 * counter when the task ran; on a failure, the error layout applies.
 */
#define TRS_HW_CQE_PHASE	0x0001u
#define TRS_HW_CQE_WARN		0x0002u
#define TRS_HW_CQE_EVT		0x0004u	/* event record */
#define TRS_HW_CQE_PLACE_HOLD	0x0008u	/* place-holder */
#define TRS_HW_CQE_SQ_ID_SHIFT	4
#define TRS_HW_CQE_SQ_ID_MASK	0x7ff0u	/* 11 bits */
#define TRS_HW_CQE_ERROR	0x8000u
/* error byte @9: drop bit 0, acc error bit 1, sqe type bits 2-7 */
#define TRS_HW_CQE_ERR_DROP	0x01u
#define TRS_HW_CQE_ERR_ACC	0x02u
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

/* ---------------------------------------------------------------------- */
/* 4. npusim only (magic 'N'); works on any fd of /dev/npusim_manager      */
/* ---------------------------------------------------------------------- */

#define NPUSIM_IOC_MAGIC		'N'
#define NPUSIM_DEV_NAME			"npusim_manager"

/*
 * How npusim implements sections 1-3. It follows hicann/driver (trs_fops.c,
 * trs_hw_sqcq.c, trs_logic_cq.c, trs_sqcq_map.c, davinci_intf_init.c) where
 * the driver's behaviour is visible to user space; "npusim:" marks its own
 * choices where the driver's depend on firmware or hardware.
 *
 * Devices. /dev/npusim_manager stands for /dev/davinci_manager and serves
 * module parameter `devices` devices (default 2) of `ts_per_device` task
 * schedulers each (default 2); OPEN's device_id picks the device. SQ, CQ,
 * logic CQ and resource ids are per (device, TS), handed out lowest free
 * from 0, so two devices (or two TS) hand out the same ids. The node is
 * created with module parameters dev_uid, dev_gid, dev_mode (default
 * root:root 0660, like davinci_manager's HwHiAiUser:HwHiAiUser 0660).
 * Each device's config.stars picks its SQE header: 1 (STARS v1, struct
 * trs_sqe) or 2 (STARS v2, struct trs_sqe_v2); config.sqcq_pair its chip
 * family: 1 (STARS): every NORMAL ALLOC makes an SQ-CQ pair, REUSE_CQ is
 * EINVAL; 0 (pre-STARS): an ALLOC with TSDRV_FLAG_REUSE_CQ adds an SQ to
 * the CQ in cqId, which must be this fd's. The module parameters `stars`
 * (default 1) and `sqcq_pair` (default 1) set both for every device.
 * URD_IOC_GET_CHIP_INFO names each device by its stars, as a real host's
 * driver names the chip: type "Ascend", version "V1", name
 * NPUSIM_CHIP_NAME_V1 ("910B3") for STARS v1, NPUSIM_CHIP_NAME_V2
 * ("950PR_9599") for v2, dev_id the device id; the module parameter
 * chip_name, when set, names every device instead (a chip a real driver
 * may name that steptime does not know: "310P3", "910_9691", cut at 31
 * bytes), its SQEs unchanged. sqcq_pair 0 does not change
 * the name: pre-STARS is a runtime mode here, and npusim's pre-STARS SQEs
 * keep the v1 header (a real pre-STARS 910 is no STARS chip at all).
 *
 * TRS dispatch (trs_ioctl): by _IOC_NR only, as the driver does; nr >= 33
 * or a command npusim does not implement: EOPNOTSUPP; a NULL argument:
 * EINVAL; an unreadable one: EFAULT; npusim: one that a command with Out
 * fields (RES_ID_ALLOC, SQCQ_ALLOC) cannot write back: EFAULT before
 * anything is created (the driver would create it and then fail the copy,
 * leaving it to the release). Then, for SQCQ commands: type < 0 or
 * >= TRS_SQCQ_TYPE_MAX: EINVAL; a type npusim has no handler for
 * (CALLBACK, SHM, CTRL, GDB; QUERY and SEND: anything but NORMAL): EINVAL
 * as the driver's empty handler slots; tsId >= ts_per_device: EINVAL. An id
 * that this fd does not own (never allocated, freed, another fd's or
 * another device's): EINVAL.
 *
 * RES_ID_ALLOC/FREE: res_type < 0 or >= TRS_RES_HW_SQ: EINVAL. ALLOC
 * writes the lowest free id of that type (per device, TS; 0..
 * NPUSIM_MAX_RES_IDS - 1) to id, ENOSPC when none is free; the id belongs
 * to this fd until FREE or release. FREE of an id this fd does not own:
 * EINVAL; of a stream still named by an SQ or logic CQ: EBUSY.
 *
 * SQCQ_ALLOC reads struct trs_uio_info through res[0..1] first (EFAULT),
 * and on success writes back the whole argument and the trs_uio_info.
 * - NORMAL: sqeSize 64, cqeSize 16 (the hardware CQE; npusim also accepts
 *   32 and treats it as 16), sqeDepth 1..TRS_SQ_MAX_DEPTH, cqeDepth
 *   1..TRS_SQ_MAX_DEPTH (else EINVAL). info[0] is a stream id this fd
 *   allocated with RES_ID_ALLOC, or TRS_STREAM_ID_NONE (else EINVAL).
 *   Flags other than REUSE_CQ: EINVAL (npusim). ext_info_len > 256, or
 *   non-zero ext_info with ext_info_len 0: EINVAL; ext_info is read
 *   (EFAULT) and ignored. sqId (and cqId, unless REUSE_CQ) are written.
 *   trs_uio_info: with sq_que_addr 0, or the device's uio_mode 0, the SQ is
 *   kernel mode ("kio": uio_flag 0, soft_que_flag 0; SEND submits). With a
 *   non-zero sq_que_addr and uio_mode 1 or 2, npusim maps the queue into
 *   the caller (npusim: it picks the address itself, as mmap() of
 *   NPUSIM_SQ_MMAP_OFFSET would) and writes: sq_que_addr = the first SQE
 *   slot, sq_ctrl_addr[TRS_UIO_HEAD] / [TRS_UIO_TAIL] / [TRS_UIO_DB] = the
 *   head, tail and tail (doorbell) words of its struct npusim_sq_ctrl,
 *   sq_ctrl_addr[TRS_UIO_SHR_INFO] = its struct trs_sq_shr_info (in the
 *   control page, at NPUSIM_SQ_MMAP_SHR_OFF; npusim never sets
 *   cqe_status), uio_flag = 1 and soft_que_flag = 1 for uio_mode 1 ("uio_t") or 0 for
 *   uio_mode 2 ("uio_d"). The mapping is the caller's: FREE stops the
 *   device reading it, munmap(sq_que_addr - NPUSIM_SQ_MMAP_SQE_OFF,
 *   NPUSIM_SQ_MMAP_SIZE(depth)) removes it.
 *   That is config.sq_mode NPUSIM_SQ_MODE_CONFIG (module parameter
 *   mode_by_chip=0, for now the default). With NPUSIM_SQ_MODE_CHIP the
 *   chip picks, as the driver's trs_sq_remap() and send mode do: STARS v1
 *   (910B3) a soft queue ("uio_t", below); STARS v2 (950) the hardware
 *   queue ("uio_d", as uio_mode 2), or kernel mode when config.send_mode is
 *   NPUSIM_SEND_HIGH_SECURITY (module parameter send_mode); kernel mode
 *   for sq_que_addr 0 either way. The mode is fixed at ALLOC.
 *   A chip-picked uio_t SQ is the driver's soft queue: sq_que_addr is the
 *   soft queue; sq_ctrl_addr[TRS_UIO_HEAD] its head (npusim_sq_ctrl.head:
 *   copied to the hardware SQ up to here), [TRS_UIO_TAIL] its tail (the
 *   runtime's), [TRS_UIO_DB] the trigger doorbell (npusim_sq_ctrl.db),
 *   [TRS_UIO_HEAD_REG] / [TRS_UIO_TAIL_REG] the hardware SQ's head
 *   (completed up to here) and tail (copied up to here). The runtime
 *   writes SQEs and the tail, and writes the SQ id into db when the queue
 *   was empty before them. npusim's worker (the TS's engine) copies the
 *   soft queue into the hardware SQ, every SQE through
 *   npusim_chan_trace_sqe(), when a doorbell was rung (seen within
 *   NPUSIM_UIO_POLL_US; it then copies every soft queue of the TS, and
 *   sets db back to NPUSIM_SQ_DB_IDLE) and every config.soft_poll_ms
 *   (1..4 ms, module parameter soft_poll_ms) on its own; config.soft_trigger
 *   0 (module parameter soft_trigger) ignores doorbells, leaving only the
 *   poll. A task's truth submit_ns is when it was copied. The two queues
 *   have the same depth and positions; the hardware SQ holds depth - 1.
 * - LOGIC: cqeSize 32, cqeDepth 2..NPUSIM_LOGIC_CQ_MAX_DEPTH, info[0] a
 *   stream of this fd that has no logic CQ yet (EINVAL; EBUSY when it has
 *   one), info[1] the thread id (kept, not used), flag 0. cqId is written,
 *   sqId is left as given. The stream's reports go to this logic CQ from
 *   now on. Like the driver's, a logic CQ of depth D holds D - 1 reports.
 *
 * SQCQ_FREE: NORMAL frees sqId and, unless flag has REUSE_CQ (pre-STARS
 * only; other flags, or REUSE_CQ on STARS: EINVAL), its CQ cqId (EINVAL
 * if that is not the SQ's CQ; EBUSY while another SQ still uses it).
 * LOGIC frees the logic CQ cqId and unbinds its stream.
 * Queued and running tasks are cancelled (truth NPUSIM_TASK_CANCELLED),
 * unreceived reports dropped, and waiters in SEND/RECV on them fail with
 * EINVAL. Releasing the fd frees all of its queues and ids the same way.
 *
 * SQCQ_SEND: type NORMAL, sqe_num 1..depth (else EINVAL); a mapped SQ:
 * EINVAL; a bad sqe_addr: EFAULT. A batch is accepted whole or not at all;
 * pos = SQ position of its first SQE. SQ full: timeout 0 fails at once
 * with EAGAIN; timeout > 0 waits up to that many ms for room, then
 * ETIMEDOUT; timeout < 0 waits forever. A signal ends a wait with EINTR.
 * Every SQE SEND accepts passes npusim_chan_trace_sqe() (C2 below). SQE
 * contents are not checked at submission: an SQE the device cannot run (a
 * type outside NPUSIM_SQE_VALID_TYPES) fails when it runs, with error
 * NPUSIM_ERR_BAD_SQE, like any failed task.
 *
 * SQCQ_QUERY: type NORMAL, an SQ of this fd. prop SQ_HEAD: value[0] = the
 * SQ position of the next task to complete (head); SQ_TAIL: the next free
 * position; SQ_DEPTH: the depth; SQ_STATUS: 1 (enabled); SQ_CQE_STATUS: 1
 * if the SQ wrote a report since the last such query (read clears); other
 * props: EINVAL. Only value[0] is written back.
 * SQCQ_CONFIG: NORMAL: SQ_PAUSE stops the SQ after its running task,
 * SQ_RESUME restarts it, SQ_DISABLE_TO_ENABLE is accepted and does nothing;
 * SQ_HEAD and SQ_TAIL, of an SQ whose mode the chip picked (the runtime's
 * stream cleanup sets both to 0): value[0] >= depth is EINVAL; an SQ with
 * tasks queued or running, or SQEs written to its mapping and not yet
 * taken, is EBUSY; otherwise npusim moves the empty SQ (and its mapping's
 * head, tail and registers) to position value[0], either prop alike; the
 * truth's seq goes on. Of other SQs: EOPNOTSUPP, as other props;
 * LOGIC: SQCQ_RESET empties the logic CQ (its reports are dropped and
 * counted in report_drops); other props: EOPNOTSUPP.
 *
 * SQCQ_RECV: cqe_num >= 1, cqe_addr non-NULL, timeout >= -1, res[0] 0 or 1
 * (else EINVAL); type NORMAL reads 16-byte struct trs_hw_cqe from a CQ of
 * this fd, type LOGIC 32-byte struct trs_logic_cqe from a logic CQ of this
 * fd. It waits up to timeout ms (-1: forever) for a report; timeout 0 with
 * no report returns 0 with report_cqe_num 0 at once; a timeout that runs
 * out: ETIMEDOUT. Reports are copied while still queued and removed only
 * once the copy worked: an unwritable cqe_addr is EFAULT and loses none.
 * Only report_cqe_num is written back, and only on success.
 * In order (res[0] 0), RECV takes the first min(cqe_num, queued) reports.
 * Match mode (res[0] 1, logic CQs; the runtime's "version 1"): reports
 * with TRS_CQE_F_MATCH are held for the RECV that names their stream_id and
 * task_id. Scanning from the oldest report, RECV takes one contiguous run:
 * plain reports, ended by the match report it names (included), by a match
 * report it does not name (excluded; one met before the run starts is
 * skipped and stays queued), or by cqe_num. So a later report can come back
 * before an earlier one, deterministically: a held match report is
 * overtaken by every plain report behind it until its RECV comes.
 *
 * Reports. A task writes a report when its SQE has wr_cqe set (STARS v1:
 * TRS_SQE_F_WR_CQE, v2: TRS_SQE_V2_F_WR_CQE) or when it fails; other
 * tasks complete silently, visible through QUERY SQ_HEAD and the truth.
 * Its stream is the SQE's rt_stream_id (v1; bit 15 makes it a match report)
 * or the SQ's stream (v2, from ALLOC info[0]). If that stream is one of
 * the SQ's fd (npusim: another fd's stream never gets the report) and has
 * a logic CQ, the report is translated into a struct trs_logic_cqe and
 * offered to
 * it through npusim_logic_cq_enque(): a full logic CQ refuses it (-EAGAIN)
 * and the report is dropped, as the driver's full_drop (counted in
 * npusim_stats.report_drops and in the task's truth). Otherwise it stays in
 * the SQ's CQ as a struct trs_hw_cqe for RECV NORMAL; a full CQ stalls its
 * SQs until RECV makes room (nothing is lost there).
 * Logic CQE: stream_id, task_id (low 16 bits), sqe_type, sq_id, sq_head =
 * the SQ position after the task; success: timestamp = device counter when
 * the task started (event record and place-holder SQEs only, else 0);
 * failure: error_code = the task's error, flags TRS_CQE_F_ERROR, timestamp =
 * the SQE's position; match reports: enque_timestamp = host seconds
 * (CLOCK_MONOTONIC) when enqueued, flags TRS_CQE_F_MATCH. The hardware CQE
 * carries the same through its own fields (TRS_HW_CQE_*).
 *
 * Execution: the tasks of one SQ run one at a time in order; different SQs
 * of a TS run concurrently on config.units units. A task runs for
 * sim_duration_ns (0: config.default_duration_ns; 0 for place-holder and
 * event-record SQEs means instantaneous), times config.duration_pct / 100.
 * Time is simulated exactly: a task starts at max(its submission, the end
 * of the previous task of its SQ, a unit becoming free) and ends duration
 * later, whatever the latency of the simulator itself; reports and the SQ
 * head move at or after the task's end (CLOCK_MONOTONIC).
 * A task fails when its sim_error is non-zero (error_code = sim_error), when
 * config.inject_error_every = N > 0 and it is the Nth, 2Nth, ... task of its
 * SQ (seq + 1 divisible by N; error_code = inject_error_code), or when its
 * SQE type is not one npusim runs (NPUSIM_ERR_BAD_SQE; it takes no time).
 * A failure does not stop the SQ.
 * Device counter: ticks = counter_epoch + host_ns * counter_freq_hz / 1e9
 * (host_ns: CLOCK_MONOTONIC, exact integer arithmetic, modulo 2^64), per
 * device. Its frequency is read as on a real host: URD_IOC_GET_DEV_OSC_FREQ
 * on a fd OPENed with "URD" (section 2), input the device id (EINVAL if
 * there is no such device). NPUSIM_IOC_CLOCK gives the same and more.
 *
 * Kernel hooks (contract C2), global and noinline, with module BTF:
 *   long npusim_manager_ioctl(struct file *, unsigned int, unsigned long)
 *	as drv_ascend_intf_ioctl (asdrv_pbl): every ioctl of the node;
 *   int npusim_logic_cq_enque(void *ts_inst, u32 logic_cq_id, u32 stream_id,
 *	u32 task_id, void *cqe) as trs_logic_cq_enque (asdrv_trs): every
 *	offer of a logic CQE (struct trs_logic_cqe *) to a logic CQ; 0 only
 *	when it was enqueued, -EAGAIN when the CQ was full;
 *   void npusim_chan_trace_sqe(const char *str, void *chan, void *sq,
 *	void *sqe) as trs_chan_trace_sqe: every SQE the kernel moves to the
 *	device: SEND (in the caller's context) and uio_t soft queues (in the
 *	engine thread); never uio_d. sqe is a kernel pointer to the 64 bytes.
 * Tracepoint npusim:logic_cqe (u32 cq_id, the CQE) fires per enqueued one.
 *
 * Permissions and limits. Opening the node needs its mode/group. GET
 * commands, TRUTH of one's own SQs, STATS and CLOCK work for anyone who can
 * open it; SET_CONFIG, FAIL_NTH (global controls, error injection) and
 * TRUTH with NPUSIM_TRUTH_ANY_OWNER need CAP_SYS_ADMIN: EPERM otherwise. Kernel memory is allocated with
 * GFP_KERNEL_ACCOUNT (charged to the caller's memory cgroup) and capped per
 * process (the tgid that opened the fd): module parameter max_proc_kbytes
 * (default NPUSIM_DEFAULT_MAX_PROC_KBYTES, writable by root at run time);
 * an allocation beyond it fails with ENOMEM: queues, their rings and truth
 * pages, and the transient copies of SEND, RECV and TRUTH all count, and
 * stats.kmem_bytes is the total held. Id spaces are capped per
 * (device, TS): NPUSIM_MAX_SQS SQs and CQs, NPUSIM_MAX_LOGIC_CQS logic
 * CQs, NPUSIM_MAX_RES_IDS ids per resource type (ENOSPC).
 */
#define NPUSIM_MAX_DEVICES		8
#define NPUSIM_MAX_TS			4
#define NPUSIM_DEFAULT_DEVICES		2
#define NPUSIM_DEFAULT_TS		2
#define NPUSIM_MAX_SQS			2048
#define NPUSIM_MAX_LOGIC_CQS		2048
#define NPUSIM_MAX_RES_IDS		2048
#define NPUSIM_LOGIC_CQ_MAX_DEPTH	65536
#define NPUSIM_MAX_UNITS		64
#define NPUSIM_DEFAULT_UNITS		4
#define NPUSIM_DEFAULT_FREQ_HZ		50000000ull	/* 50 MHz */
#define NPUSIM_CHIP_NAME_V1		"910B3"
#define NPUSIM_CHIP_NAME_V2		"950PR_9599"
#define NPUSIM_DEFAULT_EPOCH		0x1000000000000ull
#define NPUSIM_DEFAULT_DURATION_NS	2000
#define NPUSIM_DEFAULT_MAX_PROC_KBYTES	(512u * 1024)	/* 512 MiB */

/* SQE types npusim executes: FFTS, AICPU, 3..8 and SDMA. */
#define NPUSIM_SQE_VALID_TYPES		0x9fbu
/* error_code of an SQE npusim cannot run */
#define NPUSIM_ERR_BAD_SQE		0x0bad5e

#define NPUSIM_UIO_KIO			0	/* uio_mode: never map */
#define NPUSIM_UIO_T			1	/* soft queue, SQEs traced */
#define NPUSIM_UIO_D			2	/* direct, nothing traced */

/*
 * Configuration of one device. GET fills every field of device @device;
 * SET (CAP_SYS_ADMIN) applies the fields whose NPUSIM_CFG_* bit is in @mask
 * to that device. Changing the counter frequency or epoch, or the unit
 * count, needs an idle device (no task queued or running on any of its
 * SQs): EBUSY otherwise; changing stars or sqcq_pair needs a device with
 * no SQ at all (EBUSY). SET checks: device < devices, units
 * 1..NPUSIM_MAX_UNITS, counter_freq_hz 1..0xffffffff, inject_error_code !=
 * 0 when inject_error_every != 0, uio_mode 0..2, duration_pct 1..100000,
 * stars 1 or 2, sqcq_pair 0 or 1, sq_mode 0 or 1, send_mode 0 or 1,
 * soft_poll_ms 1..NPUSIM_SOFT_POLL_MS_MAX, soft_trigger 0 or 1,
 * unknown mask bits, pad and res[] zero; else EINVAL and nothing is
 * applied. Defaults: the module parameters of the same names. A SET lasts
 * until the module is unloaded. GET fills mask with NPUSIM_CFG_ALL.
 */
struct npusim_config {
	__u32	mask;			/* In (SET): fields to apply */
	__u32	units;			/* parallel execution units per TS */
	__u64	counter_freq_hz;	/* device counter frequency */
	__u64	counter_epoch;		/* counter value at host time 0 */
	__u32	default_duration_ns;	/* task time when SQE says 0 */
	__u32	pad;
	__u32	inject_error_every;	/* fail every Nth task (0: never) */
	__u32	inject_error_code;	/* error_code of injected failures */
	__u32	device;			/* In: which device */
	__u32	uio_mode;		/* NPUSIM_UIO_*: mapped SQs granted */
	__u32	duration_pct;		/* task time scale, 100 = as given */
	__u32	stars;			/* SQE header: 1 STARS v1, 2 v2 */
	__u32	sqcq_pair;		/* 1 STARS pairs, 0 pre-STARS */
	__u32	res[5];
	__u32	sq_mode;		/* NPUSIM_SQ_MODE_*: who picks */
	__u32	send_mode;		/* NPUSIM_SEND_*: a 950's mode */
	__u32	soft_poll_ms;		/* uio_t worker's poll, 1..4 ms */
	__u32	soft_trigger;		/* 1 the trigger doorbell wakes it */
};

#define NPUSIM_CFG_UNITS		(1u << 0)
#define NPUSIM_CFG_COUNTER_FREQ		(1u << 1)
#define NPUSIM_CFG_COUNTER_EPOCH	(1u << 2)
#define NPUSIM_CFG_DEFAULT_DURATION	(1u << 3)
/* bit 4 unused (round 1's report_every_task: real devices have none) */
#define NPUSIM_CFG_INJECT_ERROR		(1u << 5)	/* both inject_* */
#define NPUSIM_CFG_UIO_MODE		(1u << 6)
#define NPUSIM_CFG_DURATION_PCT		(1u << 7)
#define NPUSIM_CFG_STARS		(1u << 8)	/* no SQ on the device */
#define NPUSIM_CFG_SQCQ_PAIR		(1u << 9)	/* no SQ on the device */
#define NPUSIM_CFG_SQ_MODE		(1u << 10)	/* new SQs only */
#define NPUSIM_CFG_SEND_MODE		(1u << 11)	/* new SQs only */
#define NPUSIM_CFG_SOFT_POLL		(1u << 12)	/* both soft_* */
#define NPUSIM_CFG_ALL			0x1fef

/* config.sq_mode: what a NORMAL ALLOC asking for a mapped SQ gets. */
#define NPUSIM_SQ_MODE_CONFIG		0	/* config.uio_mode decides */
#define NPUSIM_SQ_MODE_CHIP		1	/* the chip decides (driver) */
/* config.send_mode: the driver's TRS_MODE_TYPE_SQ_SEND_* of a 950. */
#define NPUSIM_SEND_HIGH_PERFORMANCE	0	/* uio_d */
#define NPUSIM_SEND_HIGH_SECURITY	1	/* kio */
#define NPUSIM_SOFT_POLL_MS_MAX		4

/* Ground truth of one task. Device ticks and host ns describe one instant. */
struct npusim_task_truth {
	__u64	seq;		/* per-SQ submission index, from 0 */
	__u32	sq_id;
	__u32	pos;		/* SQ position */
	__u32	stream_id;	/* the task's stream (v1: SQE & 0x7fff) */
	__u32	task_id;	/* from the SQE (v2: 32 bits) */
	__u8	sqe_type;
	__u8	report;		/* NPUSIM_REPORT_* */
	__u8	traced;		/* passed npusim_chan_trace_sqe() */
	__u8	pad;
	__u32	error_code;	/* 0, or the task's error */
	__u32	state;		/* NPUSIM_TASK_* */
	__u32	pad2;
	__u64	submit_ns;	/* CLOCK_MONOTONIC when queued by SEND/tail */
	__u64	start_ns;	/* CLOCK_MONOTONIC when execution started */
	__u64	end_ns;		/* CLOCK_MONOTONIC when it completed */
	__u64	start_ticks;	/* device counter at start */
	__u64	end_ticks;	/* device counter at end */
};

#define NPUSIM_TASK_QUEUED	0
#define NPUSIM_TASK_RUNNING	1
#define NPUSIM_TASK_DONE	2
#define NPUSIM_TASK_CANCELLED	3

#define NPUSIM_REPORT_NONE	0	/* the task wrote no report */
#define NPUSIM_REPORT_HW_CQ	1	/* a hardware CQE in its SQ's CQ */
#define NPUSIM_REPORT_LOGIC_CQ	2	/* a logic CQE in its stream's logic CQ */
#define NPUSIM_REPORT_DROPPED	3	/* its logic CQ was full: dropped */

/*
 * Read the ground truth of tasks seq .. seq + count - 1 of SQ @sq_id of TS
 * @ts_id: of this fd's device, and the SQ must be this fd's (EINVAL; the
 * fd must be OPENed with TSDRV: ENODEV); or, with NPUSIM_TRUTH_ANY_OWNER
 * in @flags (CAP_SYS_ADMIN: EPERM), of device @device whoever owns it, on
 * any fd. npusim keeps the last NPUSIM_TRUTH_DEPTH tasks of each SQ: ENOENT
 * when @seq is older than that. @seq >= next_seq: count 0 (not an error);
 * otherwise the records seq .. min(seq + count, next_seq) - 1 are written
 * and count set. A record is written at submission (QUEUED) and updated as
 * the task runs.
 */
struct npusim_truth_query {
	__u32	sq_id;		/* In */
	__u32	count;		/* In: capacity of @addr; Out: records written */
	__u64	seq;		/* In: first task wanted */
	__aligned_u64 addr;	/* In: user array of struct npusim_task_truth */
	__u64	next_seq;	/* Out: tasks submitted so far on this SQ */
	__u32	ts_id;		/* In */
	__u32	device;		/* In: with NPUSIM_TRUTH_ANY_OWNER */
	__u32	flags;		/* In: NPUSIM_TRUTH_* */
	__u32	res;
};

#define NPUSIM_TRUTH_ANY_OWNER	(1u << 0)	/* by (device, TS, SQ) */

#define NPUSIM_TRUTH_DEPTH	65536

/*
 * Live object counts of all devices (for leak checks: all zero but fds
 * when nothing is open) and totals since load.
 */
struct npusim_stats {
	__u64	fds;		/* open fds of the node */
	__u64	sqs;		/* allocated SQs */
	__u64	cqs;		/* allocated hardware CQs */
	__u64	tasks_queued;	/* submitted, not yet complete */
	__u64	reports_pending; /* in CQs and logic CQs, not yet received */
	__u64	submitted;	/* total since load */
	__u64	completed;
	__u64	reports;	/* total reports written */
	__u64	cancelled;
	__u64	errors;		/* failed tasks */
	__u64	logic_cqs;	/* allocated logic CQs */
	__u64	res_ids;	/* allocated resource ids (streams...) */
	__u64	report_drops;	/* reports a full logic CQ refused, resets */
	__u64	kmem_bytes;	/* kernel memory held for all processes */
	__u64	traced_sqes;	/* npusim_chan_trace_sqe() calls */
	__u64	fail_nth_hits;	/* allocations failed by FAIL_NTH */
};

/* A device's counter now, with the host time it corresponds to. */
struct npusim_clock {
	__u32	device;		/* In */
	__u32	res;
	__u64	host_ns;	/* Out: CLOCK_MONOTONIC now */
	__u64	ticks;		/* Out: device counter at host_ns */
	__u64	counter_freq_hz; /* Out */
	__u64	counter_epoch;	/* Out */
};

/*
 * Fail the @nth allocation (1: the next) that npusim makes for this fd,
 * in any command, with ENOMEM (iommufd's fail_nth, for kernels without
 * CONFIG_FAULT_INJECTION). It fires once; 0 disarms. CAP_SYS_ADMIN.
 */
struct npusim_fail_nth {
	__u32	nth;		/* In */
	__u32	res;
};

#define NPUSIM_IOC_GET_CONFIG	_IOWR(NPUSIM_IOC_MAGIC, 0, struct npusim_config)
#define NPUSIM_IOC_SET_CONFIG	_IOW(NPUSIM_IOC_MAGIC, 1, struct npusim_config)
#define NPUSIM_IOC_TRUTH	_IOWR(NPUSIM_IOC_MAGIC, 2, struct npusim_truth_query)
#define NPUSIM_IOC_STATS	_IOR(NPUSIM_IOC_MAGIC, 3, struct npusim_stats)
#define NPUSIM_IOC_CLOCK	_IOWR(NPUSIM_IOC_MAGIC, 4, struct npusim_clock)
#define NPUSIM_IOC_FAIL_NTH	_IOW(NPUSIM_IOC_MAGIC, 5, struct npusim_fail_nth)
/* 'N' commands are checked whole (value, size): anything else is ENOTTY. */

/*
 * Mapped ("UIO") SQ (npusim's own uio_t and uio_d; a chip-picked soft
 * queue differs as section 4 says): ALLOC maps it (above); it can also be mapped again
 * with mmap() of the TSDRV fd at NPUSIM_SQ_MMAP_OFFSET(tsId, sqId),
 * MAP_SHARED, at most NPUSIM_SQ_MMAP_SIZE(depth) bytes (EINVAL otherwise).
 * The first page is the control block below, SQEs follow from
 * NPUSIM_SQ_MMAP_SQE_OFF. The runtime writes SQEs, then stores the new
 * tail (release): that store is the doorbell; the engine picks them up
 * within NPUSIM_UIO_POLL_US. head and tail are SQ positions (0..depth-1);
 * tail == head means empty, so at most depth - 1 SQEs are outstanding; a
 * tail >= depth is ignored. head is published (release) as tasks complete.
 * The mapping stays valid after FREE until munmap; the engine stops reading
 * it at FREE.
 */
struct npusim_sq_ctrl {
	__u32	tail;		/* written by user space: the doorbell */
	__u32	head;		/* written by npusim: consumed up to here */
	__u32	depth;
	__u32	db;		/* soft queue: trigger doorbell (an SQ id) */
	__u32	head_reg;	/* soft queue: hardware SQ head (completed) */
	__u32	tail_reg;	/* soft queue: hardware SQ tail (copied) */
	__u32	res[10];
};

/* npusim_sq_ctrl.db when no doorbell is pending. */
#define NPUSIM_SQ_DB_IDLE		0xffffffffu

#define NPUSIM_SQ_MMAP_OFFSET(ts, sq) \
	((__u64)((ts) * NPUSIM_MAX_SQS + (sq) + 1) << 24)
#define NPUSIM_SQ_MMAP_SQE_OFF		4096
#define NPUSIM_SQ_MMAP_SHR_OFF		2048	/* struct trs_sq_shr_info */
#define NPUSIM_SQ_MMAP_SIZE(depth) \
	((NPUSIM_SQ_MMAP_SQE_OFF + (depth) * TRS_SQE_SIZE + 4095) & ~4095ull)
#define NPUSIM_UIO_POLL_US		50

/*
 * The layouts above are the ABI: every size and every documented offset is
 * checked wherever this header is compiled (kernel, BPF and user space).
 */
#define __TRS_ASSERT_SIZE(t, n) \
	_Static_assert(sizeof(struct t) == (n), #t " size")
#define __TRS_ASSERT_OFF(t, f, n) \
	_Static_assert(__builtin_offsetof(struct t, f) == (n), #t "." #f)

__TRS_ASSERT_SIZE(ascend_manager_arg, 260);
__TRS_ASSERT_SIZE(ascend_module_status, 260);
__TRS_ASSERT_OFF(ascend_module_status, status, 256);
__TRS_ASSERT_SIZE(trs_uio_info, 64);
__TRS_ASSERT_OFF(trs_uio_info, sq_ctrl_addr, 8);
__TRS_ASSERT_OFF(trs_uio_info, sq_mem_local_flag, 56);
__TRS_ASSERT_OFF(trs_uio_info, soft_que_flag, 57);
__TRS_ASSERT_OFF(trs_uio_info, uio_flag, 58);
__TRS_ASSERT_SIZE(trs_sq_shr_info, 1040);
__TRS_ASSERT_OFF(trs_sq_shr_info, send_full, 1024);
__TRS_ASSERT_OFF(trs_sq_shr_info, send_ok, 1032);
_Static_assert(NPUSIM_SQ_MMAP_SHR_OFF >= sizeof(struct npusim_sq_ctrl) &&
	       NPUSIM_SQ_MMAP_SHR_OFF + sizeof(struct trs_sq_shr_info) <=
	       NPUSIM_SQ_MMAP_SQE_OFF, "shr_info inside the control page");
__TRS_ASSERT_SIZE(trs_sqcq_alloc_info, 96);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, flag, 28);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, cqId, 32);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, sqId, 36);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, info, 40);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, ext_info_len, 60);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, ext_info, 64);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, uio_info, 72);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, res, 80);
__TRS_ASSERT_SIZE(trs_sqcq_alloc_out, 40);
__TRS_ASSERT_OFF(trs_sqcq_alloc_out, flag, 16);
__TRS_ASSERT_SIZE(trs_sqcq_free_info, 52);
__TRS_ASSERT_OFF(trs_sqcq_free_info, flag, 16);
__TRS_ASSERT_SIZE(trs_sqcq_query_info, 52);
__TRS_ASSERT_OFF(trs_sqcq_query_info, prop, 16);
__TRS_ASSERT_OFF(trs_sqcq_query_info, value, 20);
__TRS_ASSERT_SIZE(trs_sqcq_config_info, 52);
__TRS_ASSERT_SIZE(trs_task_send_info, 64);
__TRS_ASSERT_OFF(trs_task_send_info, timeout, 12);
__TRS_ASSERT_OFF(trs_task_send_info, sqe_addr, 16);
__TRS_ASSERT_OFF(trs_task_send_info, sqe_num, 24);
__TRS_ASSERT_OFF(trs_task_send_info, pos, 28);
__TRS_ASSERT_OFF(trs_task_send_info, res, 32);
__TRS_ASSERT_SIZE(trs_report_recv_info, 72);
__TRS_ASSERT_OFF(trs_report_recv_info, cqe_addr, 16);
__TRS_ASSERT_OFF(trs_report_recv_info, cqe_num, 24);
__TRS_ASSERT_OFF(trs_report_recv_info, report_cqe_num, 28);
__TRS_ASSERT_OFF(trs_report_recv_info, stream_id, 32);
__TRS_ASSERT_OFF(trs_report_recv_info, task_id, 36);
__TRS_ASSERT_OFF(trs_report_recv_info, res, 40);
__TRS_ASSERT_SIZE(trs_res_id_para, 44);
__TRS_ASSERT_OFF(trs_res_id_para, id, 8);
__TRS_ASSERT_OFF(trs_res_id_para, prop, 32);
__TRS_ASSERT_OFF(trs_res_id_para, value, 36);
__TRS_ASSERT_SIZE(urd_ioctl_arg, 64);
__TRS_ASSERT_OFF(urd_ioctl_arg, main_cmd, 8);
__TRS_ASSERT_OFF(urd_ioctl_arg, input, 32);
__TRS_ASSERT_OFF(urd_ioctl_arg, output, 48);
__TRS_ASSERT_SIZE(urd_chip_info, 112);
__TRS_ASSERT_OFF(urd_chip_info, type, 8);
__TRS_ASSERT_OFF(urd_chip_info, name, 40);
__TRS_ASSERT_OFF(urd_chip_info, version, 72);
__TRS_ASSERT_OFF(urd_chip_info, resv, 104);
__TRS_ASSERT_SIZE(trs_sqe, 64);
__TRS_ASSERT_OFF(trs_sqe, rt_stream_id, 4);
__TRS_ASSERT_OFF(trs_sqe, task_id, 6);
__TRS_ASSERT_OFF(trs_sqe, place_holder.profiler_trace_id, 16);
__TRS_ASSERT_OFF(trs_sqe, place_holder.model_id, 24);
__TRS_ASSERT_OFF(trs_sqe, place_holder.tag_id, 32);
__TRS_ASSERT_OFF(trs_sqe, place_holder.sim_error, 56);
__TRS_ASSERT_OFF(trs_sqe, task.sim_duration_ns, 60);
__TRS_ASSERT_SIZE(trs_sqe_v2, 64);
__TRS_ASSERT_OFF(trs_sqe_v2, task_id, 4);
__TRS_ASSERT_OFF(trs_sqe_v2, place_holder.task_type, 12);
__TRS_ASSERT_OFF(trs_sqe_v2, place_holder.profiler_trace_id, 16);
__TRS_ASSERT_OFF(trs_sqe_v2, place_holder.tag_id, 32);
__TRS_ASSERT_OFF(trs_sqe_v2, task.sim_error, 56);
__TRS_ASSERT_OFF(trs_sqe_v2, task.sim_duration_ns, 60);
__TRS_ASSERT_SIZE(trs_hw_cqe, 16);
__TRS_ASSERT_OFF(trs_hw_cqe, sq_head, 2);
__TRS_ASSERT_OFF(trs_hw_cqe, stream_id, 4);
__TRS_ASSERT_OFF(trs_hw_cqe, task_id, 6);
__TRS_ASSERT_OFF(trs_hw_cqe, timestamp, 8);
__TRS_ASSERT_OFF(trs_hw_cqe, error.sqe_index, 10);
__TRS_ASSERT_OFF(trs_hw_cqe, error.error_code, 12);
__TRS_ASSERT_SIZE(trs_logic_cqe, 32);
__TRS_ASSERT_OFF(trs_logic_cqe, error_type, 8);
__TRS_ASSERT_OFF(trs_logic_cqe, sqe_type, 9);
__TRS_ASSERT_OFF(trs_logic_cqe, sq_id, 10);
__TRS_ASSERT_OFF(trs_logic_cqe, sq_head, 12);
__TRS_ASSERT_OFF(trs_logic_cqe, flags, 14);
__TRS_ASSERT_OFF(trs_logic_cqe, timestamp, 16);
__TRS_ASSERT_OFF(trs_logic_cqe, enque_timestamp, 24);
__TRS_ASSERT_SIZE(npusim_config, 96);
__TRS_ASSERT_OFF(npusim_config, sq_mode, 80);
__TRS_ASSERT_SIZE(npusim_task_truth, 80);
__TRS_ASSERT_SIZE(npusim_truth_query, 48);
__TRS_ASSERT_SIZE(npusim_stats, 128);
__TRS_ASSERT_SIZE(npusim_clock, 40);
__TRS_ASSERT_SIZE(npusim_sq_ctrl, 64);
__TRS_ASSERT_OFF(npusim_sq_ctrl, db, 12);
__TRS_ASSERT_OFF(npusim_sq_ctrl, head_reg, 16);
__TRS_ASSERT_OFF(npusim_sq_ctrl, tail_reg, 20);

#endif /* _UAPI_ASCEND_TRS_H */
