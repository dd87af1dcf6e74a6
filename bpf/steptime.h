/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by bpf/steptime.bpf.c and its loader (loader/loader.c), and read by
 * the tests that must know its sizes: what user space reads from the maps
 * is in include/steptime/abi.h.
 */
#ifndef _STEPTIME_BPF_H
#define _STEPTIME_BPF_H

/* Default sizes; the loader may resize before load (documented limits). */
#define STEPTIME_MAX_SQS	128	/* SQs tracked at once */
#define STEPTIME_MAX_CQS	1024	/* CQs (normal and logic) tracked */
#define STEPTIME_MAX_FILES	1024	/* bound manager files tracked */
#define STEPTIME_MAX_PROCS	1024	/* processes tracked at once */
/* Slots a process may sit past its home slot (tgid modulo the above). */
#define ST_PROC_PROBE		8
/*
 * Steps map: room for every tracked process's STEPTIME_PROC_STEPS records,
 * so that no process can crowd out another's; records of exited processes
 * fill the rest until they are needed.
 */
#define STEPTIME_MAX_STEPS	(STEPTIME_MAX_PROCS * STEPTIME_PROC_STEPS)
#define STEPTIME_MAX_INFLIGHT	4096	/* threads inside a matched ioctl */
/* Per-thread slots, by thread id modulo this (a power of two). */
#define ST_THREAD_SLOTS		4096
#define STEPTIME_EVENTS_BYTES	(256 * 1024)

/* SQ depth tracked per SQ: the driver's maximum. */
#define ST_SQ_DEPTH		4096
/* Tasks kept for their reports past their slot's reuse, per SQ (2^n). */
#define ST_SQ_KEPT		8

/* Loop bounds: bpf_loop (5.17+) walks a whole SQ; the fallback walks less. */
#define STEPTIME_LOOP_MAX	ST_SQ_DEPTH
#define STEPTIME_LOOP_FALLBACK	4	/* SQEs per SEND, tasks per report */
#define STEPTIME_RECV_FALLBACK	1	/* reports per RECV */
#define STEPTIME_RECV_MAX	ST_SQ_DEPTH

/* A device the program has not seen an OPEN for (file bound before load). */
#define ST_DEV_UNKNOWN		0xffffffffu

/*
 * Who owns a queue: the manager file an OPEN bound to one device. Ids are
 * per (device, TS), and a file is bound to one device, so (owner, TS, id)
 * names one queue whatever the other processes and devices do. @owner is
 * a number the program hands out at OPEN (a reused struct file * gets a
 * new one), never the pointer itself.
 */
struct st_file {
	__u64	owner;
	__u32	dev;		/* OPEN's device_id, or ST_DEV_UNKNOWN */
	__u32	tgid;		/* the process that bound it */
	__u32	flags;		/* ST_FILE_* */
	__u32	pad;
};

#define ST_FILE_PREEXISTING	(1u << 0)	/* bound before load */

/* Key of an SQ. */
struct st_qkey {
	__u64	owner;
	__u32	ts;
	__u32	id;
};

/* Key of a CQ: normal (type 0) and logic (type 2) ids are separate. */
struct st_ckey {
	__u64	owner;
	__u32	ts;
	__u32	type;
	__u32	id;
	__u32	pad;
};

struct st_cq {
	__u32	cqe_size;	/* report size given at ALLOC */
	__u32	stream_id;	/* logic CQ: the stream bound to it */
	__u64	created_ns;
	__u32	tgid;		/* owner process */
	__u32	dev;		/* the owner's device */
};

/* One submitted task, at its SQ position. 24 bytes. */
struct st_task {
	__u64	submit_ns;	/* kernel time at the SEND ioctl's entry */
	__u64	index_id;	/* step it belongs to (0: none) */
	__u32	task_id;
	union {
		struct {
			__u16	stream_id;
			__u8	sqe_type;
			__u8	flags;	/* ST_TASK_* */
		};
		__u32	word;	/* flags claimed atomically (BPF atomics are 32/64-bit) */
	};
};

/* A task a head completed, kept for its report (walk.bpf.h). 32 bytes. */
struct st_kept {
	struct st_task t;
	__u32	slot;		/* its record's slot in the SQ */
	__u32	pad;
};

/* flags as a bit of the 32-bit word that holds it */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ST_TASK_WORD(f)		((__u32)(f) << 24)
#else
#define ST_TASK_WORD(f)		((__u32)(f))
#endif

#define ST_TASK_VALID		(1u << 0)	/* submitted, not complete */
#define ST_TASK_IN_STEP		(1u << 1)
#define ST_TASK_MARK_START	(1u << 2)	/* place-holder step marks */
#define ST_TASK_MARK_END	(1u << 3)
#define ST_TASK_DONE		(1u << 4)	/* completed */
#define ST_TASK_REPORTED	(1u << 5)	/* its own report applied */
#define ST_TASK_WR_CQE		(1u << 6)	/* the device will report it */
/*
 * A task's SQE other than its last (send.bpf.h: sqe_continue()): its
 * record moved on to the task's next SQE; nothing completes here.
 */
#define ST_TASK_CONT		(1u << 7)
/* SQEs of one task at most: v2's sqeLength is 3 bits (send.bpf.h). */
#define ST_TASK_SQES_MAX	8

/*
 * Steps a journaled SQ's tasks went to, oldest first, until a snapshot of
 * the SQ's head past them completes them (bpf/journal.bpf.h). 24 bytes.
 */
#define ST_J_SEGS		32	/* per SQ (2^n) */

struct st_jseg {
	__u64	index_id;	/* the step, 0: none */
	__u32	end;		/* SQEs sent on the SQ by its end (mod 2^32) */
	__u32	tasks;		/* its tasks there */
	__u32	flags;		/* ST_JSEG_* */
	__u32	pad;
};

#define ST_JSEG_END		(1u << 0)	/* a stream END's place-holder */

/*
 * One SQ: its owner, depth, and a task entry per position. Positions are
 * virtual (they never wrap): done and tail count from the first SEND seen;
 * the SQ slot of position v is v % depth.
 */
struct st_sq {
	struct st_qkey key;
	__u32	tgid;		/* owner process */
	__u32	depth;
	__u32	dev;
	__u32	flags;		/* ST_SQ_* */
	__u64	done;		/* next position to complete */
	__u64	tail;		/* next position to submit */
	__u64	stream_index;	/* step opened by a stream START mark */
	__u32	stream_open;
	__u32	stream_id;	/* the runtime's stream (ALLOC info[0]) */
	__u64	created_ns;	/* when this entry was made */
	__u32	live;		/* the slot holds an SQ (sq_index maps it) */
	__u32	hal_dev;	/* ST_SQ_HAL: the devId its HAL calls pass */
	__u32	sqes_left;	/* v2: SQEs still to come of the last task */
	__u32	slot;		/* its own slot in sqs, as its bindings say */
	__u64	chan;		/* the driver's channel bound to it, 0: none */
	/*
	 * ST_SQ_HAL and mapped: where the library's tail word (or a 950's
	 * doorbell) is mapped, and
	 * the last halSqTaskSend() accounted, until its SQEs are seen to land
	 * (hal.bpf.h): its position, SQEs, argument and thread, and, when
	 * its SQEs were all the application's tasks (last_plain), the step
	 * its tasks in a step went to, how many, and the SQEs that continued
	 * a task.
	 */
	__u64	hal_tail;
	__u64	last_base;
	__u64	last_addr;
	__u64	last_index;
	__u32	last_n;
	__u32	last_tid;
	__u32	last_in_step;
	__u32	last_conts;
	__u32	last_plain;
	/*
	 * The last ST_SQ_KEPT tasks a head completed whose reports are to
	 * come, kept[kept_next % ST_SQ_KEPT] the next to go.
	 */
	__u32	kept_next;
	/*
	 * Journaled by its process (journal_on): where its shared-info page
	 * is (send_ok), its tasks and SQEs at the last snapshot applied, and
	 * the steps still to complete, jsegs[j_head % ST_J_SEGS] the oldest;
	 * j_okseen once send_ok was seen counting; j_okoff the SQEs the
	 * driver counted before a journal that began after the ALLOC
	 * (STEPTIME_SNAP_BEGIN).
	 */
	__u32	j_tasks;
	__u32	j_sqes;
	__u32	j_head;
	__u32	j_tail;
	__u32	j_okseen;
	__u32	j_okoff;
	__u64	j_shr;
	struct st_jseg jsegs[ST_J_SEGS];
	struct st_kept kept[ST_SQ_KEPT];
	struct st_task t[ST_SQ_DEPTH];
};

#define ST_SQ_UIO		(1u << 0)	/* user-mapped: no SEND */
#define ST_SQ_SOFT		(1u << 1)	/* uio_t: SQEs pass the trace hook */
#define ST_SQ_PREEXISTING	(1u << 2)	/* allocated before load */
#define ST_SQ_KNOWN_DEPTH	(1u << 3)	/* depth from ALLOC */
/*
 * Allocated inside libascend_hal.so's halSqCqAllocate(), whose uprobes are
 * attached: its submissions and mapped heads are seen in the submitting
 * thread, at halSqTaskSend() and halSqCqQuery(), whatever the SQ's mode.
 */
#define ST_SQ_HAL		(1u << 4)

/*
 * A queue as the driver's hooks name it, by device and TS: an SQ id (for
 * the CQ hook) or a stream id (uio_t SQs, for the SQE trace hook).
 */
struct st_skey {
	__u32	dev;
	__u32	ts;
	__u32	id;
	__u32	pad;
};

/*
 * An SQ as libascend_hal.so's entry points name it: the calling process,
 * the devId they pass first, TS and SQ id. The devId is the HAL's, which
 * a container may number differently from the device's OPEN.
 */
struct st_hkey {
	__u32	tgid;
	__u32	dev;
	__u32	ts;
	__u32	id;
};

/*
 * One process, in a slot of the procs array. @tgid (kernel tgid) is set
 * once the entry is built, so a lookup never sees one half made; @claim
 * while it is being built, by the CPU that won the slot.
 */
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
	/*
	 * STEPTIME_F_* every step from now on gets: F_UIO (an SQ whose SQEs
	 * the kernel never sees), F_PREEXISTING (a file from before load,
	 * whose queues are unknown).
	 */
	__u32	taint;
	/*
	 * STEPTIME_F_* its host-marked steps (no stream) get from now on:
	 * F_UIO once it has a uio_t SQ the trace hook counts at the worker's
	 * copy, not at the send (uio_host_taint()).
	 */
	__u32	host_taint;
	__u32	uid;		/* its file-system uid, for its step records */
	__u32	journal;	/* ST_PJ_* */
	__u32	tgid;		/* 0: free; proc_free() zeroes what is above */
	__u32	claim;		/* tgid of its builder, 0: free */
};

#define ST_PJ_JOURNAL	(1u << 0)	/* its ring says it journals its sends */
#define ST_PJ_PENDING	(1u << 1)	/* a HAL SQ before its ring was bound */

/*
 * A run of a process's mark ring, copied by proc_sync_batch() under the
 * process's busy flag: twice, one read each, so that a mark rewritten
 * while the first copy was taken shows a different seq in the second.
 * (A copy per mark took two user-memory reads a mark: a quarter of the
 * kick's time in the mark holdout.)
 */
#define ST_MARK_RUN	8

struct st_mark_run {
	struct steptime_mark m[ST_MARK_RUN];
	struct steptime_mark again[ST_MARK_RUN];
	struct steptime_mark j;		/* a journal entry: journal_apply() */
};

/* A thread inside a matched ioctl, between entry and exit. */
struct st_call {
	__u64	arg;		/* user pointer argument */
	__u64	file;		/* the VFS file of the manager node */
	__u64	enter_ns;
	__u32	cmd;
	__u32	sqes_sent;	/* SQEs the SQE hook saw this SEND move */
	__u64	chan;		/* ALLOC: the channel the driver made for it */
};

/*
 * A thread's last file lookup, kept beside its call entry in its slot:
 * valid while the generation of the files map (files_gen, bumped after
 * every replacement or deletion) is the one it was read under. A thread
 * keeps using the same file; a hit saves a hash lookup per ioctl.
 */
struct st_cache {
	__u64	file;		/* 0: none */
	__u64	files_gen;
	struct st_file f;
};

/*
 * Ways of a thread's queue cache: a runtime's thread submits to several
 * streams (compute, communication, events), whose queues it allocated in a
 * row, so their ids differ in the low bits. Queues are cached by id modulo
 * ST_CACHE_WAYS.
 */
#define ST_CACHE_WAYS		4

/*
 * One way of a thread's queue cache (queue_cache[slot * ST_CACHE_WAYS +
 * way]): a CQ's report size, valid while cqs_gen is @cq_gen; an SQ's slot
 * in the sqs array, valid while that slot holds @sq. Each hit saves a hash
 * lookup.
 */
struct st_cache_way {
	struct st_ckey cq;
	__u64	cq_gen;
	__u32	cqe_size;	/* 0: none */
	__u32	sq_slot;
	struct st_qkey sq;	/* owner 0: none */
};

/*
 * A slot of the threads array. @busy is taken (a compare-and-swap from 0)
 * by a thread inside a matched ioctl, from its entry to the end of its
 * exit: while it holds the slot, @call, @cache and the slot's ways of the
 * queue cache are its alone. The caches are of global facts (a file's
 * owner, a CQ's report size, an SQ's slot), each checked before use
 * (st_cache, st_cache_way), so they are valid whichever thread filled them.
 */
struct st_thread {
	__u64		busy;	/* pid_tgid of the holder, 0: free */
	struct st_call	call;
	struct st_cache	cache;
};

#endif /* _STEPTIME_BPF_H */
