/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by bpf/steptime.bpf.c and its loader (lib/loader.c), and nothing
 * else: what user space reads from the maps is in include/steptime/abi.h.
 */
#ifndef _STEPTIME_BPF_H
#define _STEPTIME_BPF_H

/* Default sizes; the loader may resize before load (documented limits). */
#define STEPTIME_MAX_SQS	128	/* SQs tracked at once */
#define STEPTIME_MAX_PROCS	1024	/* processes tracked at once */
/*
 * Steps map: room for every tracked process's STEPTIME_PROC_STEPS records,
 * so that no process can crowd out another's; records of exited processes
 * fill the rest until they are needed.
 */
#define STEPTIME_MAX_STEPS	(STEPTIME_MAX_PROCS * STEPTIME_PROC_STEPS)
#define STEPTIME_MAX_INFLIGHT	4096	/* threads inside a matched ioctl */
#define STEPTIME_EVENTS_BYTES	(256 * 1024)

/* Loop bounds: bpf_loop (5.17+) walks a whole SQ; the fallback walks less. */
#define STEPTIME_LOOP_MAX	TRS_SQ_MAX_DEPTH
#define STEPTIME_LOOP_FALLBACK	4	/* SQEs per SEND, tasks per report */
#define STEPTIME_RECV_FALLBACK	1	/* reports per RECV */
#define STEPTIME_RECV_MAX	TRS_SQ_MAX_DEPTH

/* One submitted task, at its SQ position. 32 bytes. */
struct st_task {
	__u64	submit_ns;	/* kernel time at the SEND ioctl's entry */
	__u64	index_id;	/* step it belongs to (0: none) */
	__u32	tgid;
	__u16	stream_id;
	__u16	task_id;
	__u8	sqe_type;
	__u8	flags;		/* ST_TASK_* */
	__u16	pad;
	__u32	pad2;
};

#define ST_TASK_VALID		(1u << 0)
#define ST_TASK_IN_STEP		(1u << 1)
#define ST_TASK_MARK_START	(1u << 2)	/* place-holder step marks */
#define ST_TASK_MARK_END	(1u << 3)

/* One SQ: its owner, its depth and a task entry per position. */
struct st_sq {
	__u32	sq_id;
	__u32	tgid;		/* owner (ALLOC or first SEND) */
	__u32	depth;
	__u32	done_head;	/* next position to complete */
	__u32	tail;		/* next position to submit */
	__u32	flags;		/* ST_SQ_* */
	__u64	stream_index;	/* step opened by a stream START mark */
	__u32	stream_open;
	__u32	pad;
	__u64	created_ns;	/* when this entry was made (ALLOC or SEND) */
	struct st_task t[TRS_SQ_MAX_DEPTH];
};

#define ST_SQ_UIO		(1u << 0)	/* user-mapped: no SEND */

/* One process, keyed by kernel tgid. */
struct st_proc {
	__u64	ring;		/* its mark ring (user address), 0: none */
	__u32	ns_tgid;
	__u32	pidns_ino;
	__u32	cur_open;	/* a host-marked step is open */
	__u32	nrecs;		/* step records created (recs[nrecs % N]) */
	__u64	seen;		/* marks consumed */
	__u64	recs[STEPTIME_PROC_STEPS];	/* its step records, by age */
	__u64	cur_index;	/* current (or last) host-marked step */
	__u64	prev_index;	/* the one before: may still have tasks */
	__u64	last_end_ns;	/* last END mark, for the gap */
	__u32	busy;		/* a CPU is consuming marks */
	__u32	pad;
};

/* A thread inside a matched ioctl, between entry and exit. */
struct st_call {
	__u64	arg;		/* user pointer argument */
	__u64	enter_ns;
	__u32	cmd;
	__u32	pad;
};

#endif /* _STEPTIME_BPF_H */
