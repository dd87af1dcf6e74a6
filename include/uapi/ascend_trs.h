/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The Ascend driver's ioctl ABI as steptime sees it, and the controls of the
 * npusim simulator that stands in for the device.
 *
 * Sections 1-3 are the real driver's ABI (davinci_manager + TRS sub-driver),
 * written from the layout tables in ascend-abi.md: command values and struct
 * layouts are byte-for-byte those of the real driver (LP64: x86_64, aarch64).
 * Section 4 exists only in npusim (magic 'N'); the real driver has no such
 * commands and steptime never depends on them outside tests.
 *
 * Conventions: all integers are little-endian fixed width; user pointers are
 * __aligned_u64. "In" fields are read by the driver, "Out" fields written
 * back; reserved fields (res[]) must be zero unless stated otherwise.
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
#define ASCEND_MODULE_TSDRV		"TSDRV"

/* Argument of OPEN, CLOSE and GET_MODULE_STATUS: 260 bytes. */
struct ascend_manager_arg {
	char	module_name[ASCEND_MODULE_NAME_LEN];	/* In: NUL-terminated */
	__s32	device_id;				/* In: device index */
};

/* _IO: the size field is 0 although an argument pointer is passed. */
#define ASCEND_MANAGER_OPEN		0x00005a00	/* _IO('Z', 0) */
#define ASCEND_MANAGER_CLOSE		0x00005a01	/* _IO('Z', 1) */
#define ASCEND_MANAGER_GET_MODULE_STATUS 0x00005a02	/* _IO('Z', 2) */

/* ---------------------------------------------------------------------- */
/* 2. TRS (task scheduler) commands (magic 'X'), on a fd bound to TSDRV   */
/* ---------------------------------------------------------------------- */

#define TRS_IOC_MAGIC			'X'
#define TRS_MAX_CMD			33	/* nr 0..32 exist */

#define TRS_SQCQ_TYPE_NORMAL		0
#define TRS_SQCQ_TYPE_CALLBACK		1
#define TRS_SQCQ_TYPE_LOGIC		2

/* halSqCqInputInfo, 96 bytes. */
struct trs_sqcq_alloc_info {
	__u32	type;		/* In: TRS_SQCQ_TYPE_* */
	__u32	tsId;		/* In: task scheduler id */
	__u32	sqeSize;	/* In: 64 */
	__u32	cqeSize;	/* In: 32 (logic CQE) */
	__u32	sqeDepth;	/* In: SQ entries (<= 1024) */
	__u32	cqeDepth;	/* In: CQ entries (<= 1024) */
	__u32	grpId;		/* In */
	__u32	flag;		/* In: TRS_SQCQ_FLAG_* */
	__u32	cqId;		/* In/Out: CQ receiving this SQ's reports */
	__u32	sqId;		/* In/Out: the new SQ */
	__u32	info[5];	/* In: type-specific */
	__u32	ext_info_len;	/* In: must be 0 unless ext_info is set */
	__aligned_u64 ext_info;	/* In: user pointer, optional */
	__u32	res[5];		/* must be zero */
	__u32	pad;		/* implicit padding in the real struct */
};

/* npusim honours this flag bit for the user-mapped ("UIO") SQ mode. */
#define TRS_SQCQ_FLAG_SQ_MAPPED		(1u << 0)

/* halSqCqOutputInfo, 40 bytes (what a mapped-SQ allocation reports). */
struct trs_sqcq_alloc_out {
	__u32	sqId;
	__u32	cqId;
	__aligned_u64 queueVAddr;
	__u32	flag;
	__u32	res[5];
};

/* halSqCqFreeInfo, 52 bytes. */
struct trs_sqcq_free_info {
	__u32	type;		/* In */
	__u32	tsId;		/* In */
	__u32	sqId;		/* In */
	__u32	cqId;		/* In */
	__u32	flag;		/* In */
	__u32	res[8];		/* must be zero */
};

#define TRS_TASK_TYPE_NORMAL		0
#define TRS_TASK_TYPE_CALLBACK		1
#define TRS_TASK_TYPE_LOGIC		2

/* halTaskSendInfo, 64 bytes: submit sqe_num SQEs to an SQ. */
struct trs_task_send_info {
	__u32	type;		/* In: TRS_TASK_TYPE_* */
	__u32	tsId;		/* In */
	__u32	sqId;		/* In */
	__s32	timeout;	/* In: ms to wait for SQ space; 0 none, <0 forever */
	__aligned_u64 sqe_addr;	/* In: user pointer to sqe_num * 64 bytes */
	__u32	sqe_num;	/* In: 1..SQ depth */
	__u32	pos;		/* Out: SQ position of the first SQE */
	__u32	res[8];		/* must be zero */
};

#define TRS_REPORT_TASK_ANY		0xffffffffu

/* halReportRecvInfo, 72 bytes: wait for and fetch completion reports. */
struct trs_report_recv_info {
	__u32	type;		/* In: TRS_SQCQ_TYPE_* of the CQ */
	__u32	tsId;		/* In */
	__u32	cqId;		/* In */
	__s32	timeout;	/* In: ms to wait for a report; <0 forever */
	__aligned_u64 cqe_addr;	/* In: user buffer of cqe_num * 32 bytes */
	__u32	cqe_num;	/* In: capacity, >= 1 */
	__u32	report_cqe_num;	/* Out: reports written */
	__u32	stream_id;	/* In: for strict matching */
	__u32	task_id;	/* In: TRS_REPORT_TASK_ANY: no strict matching */
	__u32	res[8];		/* res[0] = 1 marks version 1; rest zero */
};

#define TRS_IOC_SQCQ_ALLOC	0xc060580f	/* _IOWR('X', 15, 96) */
#define TRS_IOC_SQCQ_FREE	0x40345810	/* _IOW('X', 16, 52) */
#define TRS_IOC_SQCQ_SEND	0x40405813	/* _IOW('X', 19, 64) */
#define TRS_IOC_SQCQ_RECV	0xc0485814	/* _IOWR('X', 20, 72) */

#define TRS_IOC_NR_SQCQ_ALLOC	15
#define TRS_IOC_NR_SQCQ_FREE	16
#define TRS_IOC_NR_SQCQ_SEND	19
#define TRS_IOC_NR_SQCQ_RECV	20

/* ---------------------------------------------------------------------- */
/* 3. Queue entries                                                       */
/* ---------------------------------------------------------------------- */

#define TRS_SQE_SIZE		64
#define TRS_CQE_SIZE		32
#define TRS_SQ_MAX_DEPTH	1024

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

/* Byte 1 bit-fields. */
#define TRS_SQE_F_IE_MASK	0x03
#define TRS_SQE_F_PRE_P_MASK	0x0c
#define TRS_SQE_F_POST_P_MASK	0x30
#define TRS_SQE_F_WR_CQE	0x40	/* write a report for this SQE */

/* Task type carried at @2 by a place-holder SQE. */
#define TRS_TASK_PROFILER_TRACE_EX	26	/* a step mark */
#define TRS_MODEL_ID_NONE		0xffffffffull

/*
 * The 64-byte STARS SQE. The header is packed (#pragma pack(1) in the
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
 * npusim convention (ignored by real devices, whose payload differs): the
 * last 8 bytes of any SQE set the simulated execution time in ns (0: the
 * device default) and an injected error code (0: succeed). A failed SQE
 * always produces a report, with error_code = sim_error and error_bit set.
 */

/* Logic CQE flags (u16 @14). */
#define TRS_CQE_F_MATCH		(1u << 0)
#define TRS_CQE_F_DROP		(1u << 1)
#define TRS_CQE_F_ERROR		(1u << 2)
#define TRS_CQE_F_ACC_ERROR	(1u << 3)
#define TRS_CQE_F_NEXT_TASK_VLD	(1u << 4)
#define TRS_CQE_F_NOTIFY_ATTACHED (1u << 5)

/* The 32-byte logic CQE: one completion report. */
struct trs_logic_cqe {
	__u16	stream_id;	/* @0 */
	__u16	task_id;	/* @2 */
	__u32	error_code;	/* @4: 0 on success */
	__u8	error_type;	/* @8 */
	__u8	sqe_type;	/* @9: TRS_SQE_* of the reported SQE */
	__u16	sq_id;		/* @10 */
	__u16	sq_head;	/* @12: SQ consumed up to here (exclusive) */
	__u16	flags;		/* @14: TRS_CQE_F_* */
	__u64	timestamp;	/* @16: device counter (event/place-holder) */
	__u64	enque_timestamp; /* @24: device counter when enqueued */
};

/* ---------------------------------------------------------------------- */
/* 4. npusim only (magic 'N'); works on any fd of /dev/npusim_manager      */
/* ---------------------------------------------------------------------- */

#define NPUSIM_IOC_MAGIC		'N'
#define NPUSIM_DEV_NAME			"npusim_manager"

/*
 * How npusim implements sections 1-3 (the real driver's choices where known,
 * otherwise npusim's; user space must not rely on the errno values below with
 * a real device). Every ioctl returns 0 or -1 with errno:
 *
 * Manager ('Z'; the argument points to a struct ascend_manager_arg):
 *   OPEN: binds the fd to TRS. module_name must be "TSDRV" (NUL within 256
 *   bytes), else EINVAL; device_id must be 0, else ENODEV; a bound fd: EBUSY.
 *   CLOSE: unbinds (same name checks). Not bound: EBADFD; while the fd still
 *   owns SQs: EBUSY (FREE them first). A closed fd can OPEN again.
 *   GET_MODULE_STATUS: 0 when bound to the named module, EBADFD when not
 *   (any other name: EBADFD; a name without NUL: EINVAL; device_id: ENODEV).
 *   Other 'Z' numbers: ENOTTY. Bad argument pointer: EFAULT.
 * Any other magic ('N' aside) goes to TRS: on an unbound fd EBADFD; then a
 * magic other than 'X', nr >= TRS_MAX_CMD, or a cmd whose size/direction
 * differs from the table above: ENOTTY; nr 0..32 that npusim does not
 * implement: EOPNOTSUPP.
 * Common TRS checks: tsId must be 0 and res[] zero, else EINVAL; an id that
 * does not exist, was freed, or belongs to another fd: EINVAL.
 *
 * SQCQ_ALLOC: type TRS_SQCQ_TYPE_NORMAL only; sqeSize 64, cqeSize 32,
 *   sqeDepth and cqeDepth 1..TRS_SQ_MAX_DEPTH; flag bits other than
 *   TRS_SQCQ_FLAG_SQ_MAPPED, or ext_info_len != 0 with ext_info == 0: EINVAL
 *   (ext_info itself is ignored; so are grpId, info[] and the input ids).
 *   Always creates a new SQ and a new CQ; sqId and cqId are written back:
 *   the lowest free ids (0..NPUSIM_MAX_SQS-1), reused only after FREE;
 *   ENOSPC when all are in use.
 * SQCQ_FREE: type 0, the SQ owned by this fd and cqId its CQ (else EINVAL);
 *   flag is ignored. Queued and running tasks are cancelled (truth state
 *   NPUSIM_TASK_CANCELLED, counted in npusim_stats.cancelled), unreceived
 *   reports are dropped, and waiters in SEND/RECV on it fail with EINVAL.
 *   Closing the fd frees all its queues the same way.
 * SQCQ_SEND: type TRS_TASK_TYPE_NORMAL, sqe_num 1..depth, SQ not mapped,
 *   every SQE type in NPUSIM_SQE_VALID_TYPES (else EINVAL; bad sqe_addr
 *   EFAULT). A batch is accepted whole or not at all; pos = SQ position
 *   (0..depth-1) of its first SQE. A task holds its SQ slot until it
 *   completes. SQ full: timeout 0 fails at once with EAGAIN; timeout > 0
 *   waits up to that many ms for room, then ETIMEDOUT; timeout < 0 waits
 *   forever. A signal ends a wait with EINTR (restarted instead, for
 *   SA_RESTART handlers, when timeout < 0).
 * SQCQ_RECV: type 0, cqe_num >= 1, res[0] 0 or 1 and res[1..7] zero (else
 *   EINVAL); an unwritable cqe_addr: EFAULT (the reports stay queued: never
 *   lost, never duplicated). Waits up to timeout ms (< 0: forever, 0: no
 *   wait) for at least one report, then copies up to cqe_num of them (at
 *   most the CQ depth) in completion order and sets report_cqe_num. Nothing
 *   in time: ETIMEDOUT with report_cqe_num 0 written back. Signals: as for
 *   SEND. task_id TRS_REPORT_TASK_ANY takes any report; otherwise only the
 *   reports whose stream_id and task_id both match are returned (and
 *   waited for); the others stay queued in order.
 *   The CQ holds at most cqeDepth unreceived reports: when it is full, an
 *   SQ whose next task would write a report stalls before starting it
 *   (nothing is dropped) and resumes once RECV makes room.
 * npusim ioctls ('N', below) work on any fd, bound or not; unknown: ENOTTY.
 * mmap: see the mapped SQ below.
 *
 * Execution: the tasks of one SQ run one at a time in order; different SQs
 * run concurrently on config.units units. A task runs for
 * sqe.task.sim_duration_ns, 0 meaning config.default_duration_ns, except
 * PLACE_HOLDER and EVENT_RECORD SQEs, for which 0 means instantaneous.
 * Time is simulated exactly: a task starts at max(its submission, the end
 * of the previous task on its SQ, a unit becoming free) and ends duration
 * later, whatever the latency of the simulator itself; reports appear in
 * the CQ at or after the task's end (CLOCK_MONOTONIC).
 * A task fails when its sim_error is non-zero (error_code = sim_error), or
 * when config.inject_error_every = N > 0 and it is the Nth, 2Nth, ... task
 * of its SQ (seq + 1 divisible by N; error_code = inject_error_code). An
 * SQE the engine finds invalid in a mapped SQ fails with NPUSIM_ERR_BAD_SQE
 * (it takes no time). A failure does not stop the SQ.
 * Reports: one per SQE with TRS_SQE_F_WR_CQE, per failed SQE, and per SQE
 * when config.report_every_task. stream_id/task_id/sqe_type/sq_id from the
 * SQE and its SQ; sq_head = SQ position after the task; error_code and
 * flags TRS_CQE_F_ERROR when failed (error_type 0); timestamp = device
 * counter when the task started (= its truth start_ticks) for successful
 * PLACE_HOLDER and EVENT_RECORD SQEs, 0 otherwise; enque_timestamp = device
 * counter when the SQE was queued (SEND, or picked up from a mapped SQ).
 * The kernel function npusim_logic_cq_enque() is called for every report,
 * and the tracepoint npusim:logic_cqe (args: u32 cq_id, the CQE) fires.
 * Device counter: ticks = counter_epoch + host_ns * counter_freq_hz / 1e9
 * (host_ns: CLOCK_MONOTONIC, exact integer arithmetic, modulo 2^64).
 */
#define NPUSIM_MAX_SQS			2048
#define NPUSIM_MAX_UNITS		64
#define NPUSIM_DEFAULT_UNITS		4
#define NPUSIM_DEFAULT_FREQ_HZ		50000000ull	/* 50 MHz */
#define NPUSIM_DEFAULT_EPOCH		0x1000000000000ull
#define NPUSIM_DEFAULT_DURATION_NS	2000

/* SQE types npusim executes: FFTS, AICPU, 3..8 and SDMA. */
#define NPUSIM_SQE_VALID_TYPES		0x9fbu
/* error_code of an invalid SQE picked up from a mapped SQ */
#define NPUSIM_ERR_BAD_SQE		0x0bad5e


/*
 * Simulator configuration. GET fills every field; SET applies the fields
 * whose NPUSIM_CFG_* bit is in @mask (other bits: -EINVAL). Changing the
 * counter frequency or epoch, or the unit count, needs an idle device
 * (-EBUSY otherwise).
 * npusim: idle means no task queued or running on any SQ. SET checks:
 * units 1..NPUSIM_MAX_UNITS, counter_freq_hz 1..0xffffffff,
 * report_every_task 0 or 1, inject_error_code != 0 when
 * inject_error_every != 0, res[] zero; else EINVAL, nothing applied. The
 * defaults (NPUSIM_DEFAULT_*, no reports or errors added) are the module
 * parameters of the same names; a SET lasts until the module is unloaded.
 */
struct npusim_config {
	__u32	mask;			/* In (SET): fields to apply */
	__u32	units;			/* parallel execution units, 1..64 */
	__u64	counter_freq_hz;	/* device counter frequency */
	__u64	counter_epoch;		/* counter value at host time 0 */
	__u32	default_duration_ns;	/* task time when SQE says 0 */
	__u32	report_every_task;	/* 1: a report for every SQE */
	__u32	inject_error_every;	/* fail every Nth task (0: never) */
	__u32	inject_error_code;	/* error_code of injected failures */
	__u32	res[8];			/* must be zero */
};

#define NPUSIM_CFG_UNITS		(1u << 0)
#define NPUSIM_CFG_COUNTER_FREQ		(1u << 1)
#define NPUSIM_CFG_COUNTER_EPOCH	(1u << 2)
#define NPUSIM_CFG_DEFAULT_DURATION	(1u << 3)
#define NPUSIM_CFG_REPORT_EVERY_TASK	(1u << 4)
#define NPUSIM_CFG_INJECT_ERROR		(1u << 5)	/* both inject_* */
#define NPUSIM_CFG_ALL			0x3f

/* Ground truth of one task. Device ticks and host ns describe one instant. */
struct npusim_task_truth {
	__u64	seq;		/* per-SQ submission index, from 0 */
	__u32	sq_id;
	__u32	pos;		/* SQ position */
	__u16	stream_id;
	__u16	task_id;
	__u8	sqe_type;
	__u8	reported;	/* a report was written */
	__u16	pad;
	__u32	error_code;	/* 0, or the error reported */
	__u32	state;		/* NPUSIM_TASK_* */
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

/*
 * Read the ground truth of tasks seq .. seq + count - 1 of one SQ owned by
 * this fd. npusim keeps the last NPUSIM_TRUTH_DEPTH tasks of each SQ;
 * older ones are gone (-ENOENT when @seq is older than that).
 */
struct npusim_truth_query {
	__u32	sq_id;		/* In */
	__u32	count;		/* In: capacity of @addr; Out: records written */
	__u64	seq;		/* In: first task wanted */
	__aligned_u64 addr;	/* In: user array of struct npusim_task_truth */
	__u64	next_seq;	/* Out: tasks submitted so far on this SQ */
	__u32	res[4];		/* must be zero */
};

#define NPUSIM_TRUTH_DEPTH	65536
/*
 * npusim: an SQ not owned by this fd (or freed): EINVAL; res[] non-zero:
 * EINVAL; @seq >= next_seq: count 0 (not an error); otherwise the records
 * seq .. min(seq + count, next_seq) - 1 are written and count set. A
 * record is written at submission (QUEUED) and updated as the task runs.
 */

/* Live object counts (for leak checks) and totals. */
struct npusim_stats {
	__u64	fds;		/* open fds of the device */
	__u64	sqs;		/* allocated SQs */
	__u64	cqs;		/* allocated CQs */
	__u64	tasks_queued;	/* submitted, not yet complete */
	__u64	reports_pending; /* written to CQs, not yet received */
	__u64	submitted;	/* total since load */
	__u64	completed;
	__u64	reports;	/* total reports written */
	__u64	cancelled;
	__u64	errors;
	__u64	res[6];
};

/* Convert a host CLOCK_MONOTONIC time to the device counter. */
struct npusim_clock {
	__u64	host_ns;	/* Out: CLOCK_MONOTONIC now */
	__u64	ticks;		/* Out: device counter at host_ns */
	__u64	counter_freq_hz; /* Out */
	__u64	counter_epoch;	/* Out */
};

#define NPUSIM_IOC_GET_CONFIG	_IOR(NPUSIM_IOC_MAGIC, 0, struct npusim_config)
#define NPUSIM_IOC_SET_CONFIG	_IOW(NPUSIM_IOC_MAGIC, 1, struct npusim_config)
#define NPUSIM_IOC_TRUTH	_IOWR(NPUSIM_IOC_MAGIC, 2, struct npusim_truth_query)
#define NPUSIM_IOC_STATS	_IOR(NPUSIM_IOC_MAGIC, 3, struct npusim_stats)
#define NPUSIM_IOC_CLOCK	_IOR(NPUSIM_IOC_MAGIC, 4, struct npusim_clock)

/*
 * Mapped ("UIO") SQ: after ALLOC with TRS_SQCQ_FLAG_SQ_MAPPED, mmap() the
 * fd at offset NPUSIM_SQ_MMAP_OFFSET(sqId): the first page is the control
 * block below, SQEs follow from NPUSIM_SQ_MMAP_SQE_OFF. The runtime writes
 * SQEs, then stores the new tail (release); the engine picks them up within
 * NPUSIM_UIO_POLL_US without any syscall. SEND on such an SQ is -EINVAL.
 * npusim: head and tail are SQ positions (0..depth-1); tail == head means
 * empty, so at most depth - 1 SQEs are outstanding; a tail >= depth is
 * ignored. head is published (release) as tasks complete. The mapping may
 * cover at most 4096 + depth * 64 bytes rounded up to a page, must be
 * MAP_SHARED and start at exactly NPUSIM_SQ_MMAP_OFFSET(sqId) of a mapped SQ
 * of this fd (EINVAL otherwise) and stays valid after FREE until munmap (the engine stops
 * reading it at FREE).
 */
struct npusim_sq_ctrl {
	__u32	tail;		/* written by user space */
	__u32	head;		/* written by npusim: consumed up to here */
	__u32	depth;
	__u32	res[13];
};

#define NPUSIM_SQ_MMAP_OFFSET(sq)	((__u64)((sq) + 1) << 24)
#define NPUSIM_SQ_MMAP_SQE_OFF		4096
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
__TRS_ASSERT_SIZE(trs_sqcq_alloc_info, 96);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, sqId, 36);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, info, 40);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, ext_info_len, 60);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, ext_info, 64);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, res, 72);
__TRS_ASSERT_SIZE(trs_sqcq_alloc_out, 40);
__TRS_ASSERT_OFF(trs_sqcq_alloc_out, flag, 16);
__TRS_ASSERT_SIZE(trs_sqcq_free_info, 52);
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
__TRS_ASSERT_SIZE(trs_sqe, 64);
__TRS_ASSERT_OFF(trs_sqe, rt_stream_id, 4);
__TRS_ASSERT_OFF(trs_sqe, task_id, 6);
__TRS_ASSERT_OFF(trs_sqe, place_holder.profiler_trace_id, 16);
__TRS_ASSERT_OFF(trs_sqe, place_holder.model_id, 24);
__TRS_ASSERT_OFF(trs_sqe, place_holder.tag_id, 32);
__TRS_ASSERT_OFF(trs_sqe, place_holder.sim_error, 56);
__TRS_ASSERT_OFF(trs_sqe, task.sim_duration_ns, 60);
__TRS_ASSERT_SIZE(trs_logic_cqe, 32);
__TRS_ASSERT_OFF(trs_logic_cqe, error_type, 8);
__TRS_ASSERT_OFF(trs_logic_cqe, sqe_type, 9);
__TRS_ASSERT_OFF(trs_logic_cqe, sq_id, 10);
__TRS_ASSERT_OFF(trs_logic_cqe, sq_head, 12);
__TRS_ASSERT_OFF(trs_logic_cqe, flags, 14);
__TRS_ASSERT_OFF(trs_logic_cqe, timestamp, 16);
__TRS_ASSERT_OFF(trs_logic_cqe, enque_timestamp, 24);
__TRS_ASSERT_SIZE(npusim_task_truth, 72);
__TRS_ASSERT_SIZE(npusim_sq_ctrl, 64);

#endif /* _UAPI_ASCEND_TRS_H */
