/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The program's own records: SQEs and reports as it reads them, and the
 * state of a command's accounting (in cmd_ctx for the ioctl exit, on the
 * stack for the driver hooks). What the loader also reads is in
 * steptime.h; what user space reads, in steptime/abi.h.
 */
#ifndef __TYPES_BPF_H
#define __TYPES_BPF_H

#include "common.bpf.h"

/* The first 16 bytes of an SQE, STARS v1 or v2. */
struct st_sqe_raw {
	__u8	type;
	__u8	flags;
	__u16	w2;		/* v1: block dim, or a place-holder's task type */
	__u32	w4;		/* v1: stream id, task id; v2: task id */
	__u32	w8;
	__u16	w12;		/* v2: a place-holder's task type */
	__u16	w14;
};

/* What steptime uses of an SQE header. */
struct st_sqe_head {
	__u32	task_id;
	__u16	stream_id;
	__u16	task_type;	/* place-holder's task type, else 0 */
	__u8	sqe_type;
	__u8	wr_cqe;
	__u8	sqes_after;	/* v2: SQEs of the same task after this one */
};

struct st_sqe_mark {
	__u64	profiler_trace_id;
	__u64	model_id;
	__u16	tag_id;
};

/*
 * A SEND's state, or a traced SQE's: no pointers, so that the ioctl exit
 * can keep it in a per-CPU map (cmd_ctx) instead of its stack. The SQ
 * travels beside it (struct st_send_walk).
 */
/* A channel's binding (chans): its SQ, and the SQ's slot in sqs. */
struct st_chan {
	struct st_qkey key;
	__u32 slot;		/* checked against the key at each use */
	__u32 pad;
};

struct st_chan_last {
	__u64 chan;		/* the driver's channel; 0: none */
	__u64 gen;		/* chans_gen when it was found */
};

struct st_send_ctx {
	union {
		struct {
			__u64 rec_index;	/* step of the tasks counted... */
			__u64 rec_tasks;	/* ...not yet added to it */
			__u64 ioctl_index;	/* step the SEND's time goes to */
			__u64 host_index;	/* host-marked step open, or 0 */
		};
		/* before: a SEND's argument, read here */
		__u8 send_args[offsetofend(struct trs_task_send_info, pos)];
	};
	__u64 sqe_addr;
	__u64 enter_ns;
	__u64 base;				/* position of the first SQE */
	__u32 depth;
	__u32 tgid;
	__u32 in_step;
	__u32 outside;
	__u32 marks;
	__u32 internal;
	__u32 kernel;				/* sqe_addr is a kernel pointer */
	int fault;
	__u32 conts;				/* SQEs that continued a task */
	__u32 spans;		/* a task may have begun before this call */
};

/* What send_one() gets: on the stack, as bpf_loop() wants it. */
struct st_send_walk {
	struct st_send_ctx *x;
	struct st_sq *sq;
};

/* One report, whatever its size on the wire. */
struct st_report {
	__u32	task_id;
	__u32	error_code;
	__u64	timestamp;	/* device counter: marks' reports */
	__u16	stream_id;
	__u16	sq_id;
	__u16	sq_head;
	__u16	error;		/* the report says the task failed */
};

/*
 * What completing a task needs of the walk that reached it: scalars only,
 * for task_finish().
 */
struct st_done {
	__u64	now;
	__u64	timestamp;	/* the report's: a mark's device ticks */
	__u32	slot;		/* the SQ's, in sqs */
	__u32	tgid;		/* the SQ's process */
	__u32	error;		/* the report says its task failed */
	__u32	cancel;		/* FREE: complete as cancelled */
};

/* How task_finish() takes a task. */
#define ST_FINISH_HEAD	0	/* complete: the SQ head passed it */
#define ST_FINISH_OWN	1	/* complete, with its own report */
#define ST_FINISH_LATE	2	/* its report, for a task already complete */
#define ST_FINISH_KEPT	3	/* its report, for a task in st_sq.kept[] */

/*
 * A RECV's, a QUERY's, a FREE's or the completion hook's state: no
 * pointers, so that the ioctl exit can keep it in a per-CPU map (cmd_ctx)
 * instead of its stack. The SQ walked travels beside it (struct st_walk).
 */
struct st_recv_ctx {
	__u64 now;
	__u64 cqe_addr;
	__u64 owner;
	union {
		struct st_report rep;	/* the report being applied */
		/* before: a RECV's argument, read here, not in scratch */
		__u8 recv_args[offsetofend(struct trs_report_recv_info,
					   report_cqe_num)];
	};
	__u64 cur;			/* next SQ position to complete */
	__u64 target;			/* complete up to here */
	__u32 ts;
	__u32 cqe_size;
	__u32 found;			/* the report's own task was found */
	__u32 has_report;		/* rep is a report (not a head) */
	__u32 cancel;			/* FREE: complete as cancelled */
	__u32 kernel;			/* cqe_addr is a kernel pointer */
	__u32 completions;
	__u32 hw;			/* hardware CQEs (RECV type NORMAL) */
	__u64 tid;			/* the RECV's thread, for its cache */
	struct st_done d;		/* for the walks: set by walk_begin() */
};

/* What a walk's callbacks get: on the stack, as bpf_loop() wants it. */
struct st_walk {
	struct st_recv_ctx *x;
	struct st_sq *sq;
};

/* A control stream's logic CQE: trs_logic_cqe's first 16 bytes. */
#define ST_CTRL_CQE_SIZE	16

/* libascend_hal.so's entry points steptime probes (struct st_hal_call). */
#define ST_HAL_ALLOC	1	/* halSqCqAllocate */
#define ST_HAL_SEND	2	/* halSqTaskSend */
#define ST_HAL_QUERY	3	/* halSqCqQuery */

/*
 * A thread inside one of them, from its entry to its return: in its slot
 * of hal_threads while @busy is its id, else in hal_calls.
 */
struct st_hal_call {
	__u64	busy;		/* pid_tgid of the holder, 0: free */
	__u64	arg;		/* its argument struct (user pointer) */
	__u64	enter_ns;
	__u32	fn;		/* ST_HAL_* */
	__u32	dev;		/* its devId */
	/*
	 * In a hal_threads slot, kept from call to call: the sqs slot + 1
	 * of the SQ the last call found (hal_sq()), 0: none.
	 */
	__u32	sq_hint;
	__u32	pad;
};

/* The ioctl exit's state: its call, and one command's accounting. */
struct st_cmd_ctx {
	struct st_call c;
	union {
		struct st_send_ctx send;
		struct st_recv_ctx recv;
	};
};

#endif /* __TYPES_BPF_H */
