/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * steptime's kernel/user contract: the layout of the pinned BPF maps that
 * bpf/steptime.bpf.c writes and libsteptime reads or writes. Compiled into
 * the BPF object (after vmlinux.h, with STEPTIME_ABI_NO_LINUX_TYPES) and into
 * the library; a change of any layout here bumps STEPTIME_ABI_VERSION.
 *
 * Pinned under STEPTIME_PIN_DIR (steptime load --pin DIR overrides):
 *
 *   marks     BPF_MAP_TYPE_ARRAY, BPF_F_MMAPABLE, one struct
 *             steptime_marks_hdr, written by the loader and read-only for
 *             everyone else: the step API maps it read-only to learn that
 *             steptime is loaded, and which device to register on.
 *   steps     BPF_MAP_TYPE_HASH, struct steptime_step_key ->
 *             struct steptime_step_stats: per-step statistics (bpftool prints them
 *             with field names). Each process holds at most
 *             STEPTIME_PROC_STEPS records; records of exited processes
 *             are evicted, oldest first, when the map is full.
 *   events    BPF_MAP_TYPE_RINGBUF of struct steptime_step_stats: a step's final
 *             record, once it is done or incomplete.
 *   counters  BPF_MAP_TYPE_PERCPU_ARRAY, one struct steptime_counters.
 *   links/    the pinned BPF links (collection outlives the loader).
 *   info      BPF_MAP_TYPE_ARRAY, one struct steptime_info: what the loader
 *             attached and why (bpffs holds no plain files).
 */
#ifndef _STEPTIME_ABI_H
#define _STEPTIME_ABI_H

#ifndef STEPTIME_ABI_NO_LINUX_TYPES
#include <linux/types.h>
#endif

#define STEPTIME_ABI_VERSION	8
#define STEPTIME_MAGIC		0x5354504d	/* "STPM" */
#define STEPTIME_RING_MAGIC	0x53545052	/* "STPR" */
#define STEPTIME_PIN_DIR	"/sys/fs/bpf/steptime"

/*
 * Marks in flight per process: 8 KiB of the process's memory (touched as
 * it marks). A process whose library is probed kicks every half ring
 * (steptime__ring_kick()): the larger the ring, the rarer the kick.
 */
#define STEPTIME_MARK_RING	256
#define STEPTIME_KICK_LIBS	4	/* libsteptime files probed at once */
#define STEPTIME_HAL_LIBS	4	/* libascend_hal.so files probed at once */
#define STEPTIME_PROC_STEPS	16	/* step records kept per process */
#define STEPTIME_LAT_BUCKETS	32	/* log2(ns) latency histogram */

#define STEPTIME_TAG_START	0	/* == ACL_STEP_START */
#define STEPTIME_TAG_END	1	/* any other value acts as END... */
#define STEPTIME_TAG_MS_START	60000	/* ...but MindSpore's step start, which
					   CANN passes into the SQE as is */
#define STEPTIME_STREAM_NONE	0xffffffffu	/* process-wide (host) mark */
/*
 * Marks the step API writes itself, past the 16-bit tags CANN carries:
 * the device time of a stream-marked step's START or END, read back from
 * a timeline event recorded on the stream right after the place-holder,
 * in steptime_mark.time_ns: microseconds of the device's clock from a CANN
 * runtime (aclrtEventGetTimestamp), or device counter ticks from the
 * npusim HAL (npu_event_timestamp).
 */
#define STEPTIME_TAG_DEV_START		0x10000u	/* microseconds */
#define STEPTIME_TAG_DEV_END		0x10001u
#define STEPTIME_TAG_DEV_START_TICKS	0x10002u	/* counter ticks */
#define STEPTIME_TAG_DEV_END_TICKS	0x10003u

/*
 * The process's journal of its own sends (libsteptime interposes
 * halSqTaskSend() and halSqCqQuery() in its own GOTs, lib/sends.c), in
 * program order with its marks, so that no per-task call needs a uprobe.
 * An SQ is named by the HAL's devId, TS and SQ id:
 * STEPTIME_SQ_KEY(dev, ts, sq) = dev << 48 | ts << 32 | sq.
 *
 * STEPTIME_TAG_SQ_SNAP: the SQ's cumulative counts since its ALLOC.
 *	index_id = STEPTIME_SQ_KEY; time_ns = (u64)tasks << 32 | sqes, both
 *	mod 2^32, added as one 64-bit word: the SQE count's wrap carries one
 *	into the tasks (the reader takes it back); stream = STEPTIME_SNAP_*.
 *	Written before every host mark for each SQ sent to since its last
 *	SNAP, and at a SQ_HEAD query that found the head moved: at the tail
 *	(DRAINED), or short of it (HEAD, how far in the upper 16 bits).
 * STEPTIME_TAG_SQ_START / _END: a stream step mark's place-holder sent on
 *	the SQ, right after a SNAP of it: index_id = the step's index id,
 *	time_ns = STEPTIME_SQ_KEY, stream = SQEs sent on the SQ before it.
 *	Place-holders count as SQEs, never as tasks.
 */
#define STEPTIME_TAG_SQ_SNAP		0x10010u
#define STEPTIME_TAG_SQ_START		0x10011u
#define STEPTIME_TAG_SQ_END		0x10012u
#define STEPTIME_SNAP_DRAINED	(1u << 0)	/* the head was at the tail:
						   every SQE counted is complete */
#define STEPTIME_SNAP_GAP	(1u << 1)	/* a send found the SQ's tail past
						   the last one journaled: SQEs
						   sent around the journal (a
						   dlsym() caller), counted as
						   SQEs, in no task */
#define STEPTIME_SNAP_BEGIN	(1u << 2)	/* the journal began at this
						   SQ's first send it took, not
						   at its ALLOC (a library
						   patched after it): consumed
						   at once, the driver's count
						   then says what came before */
#define STEPTIME_SNAP_HEAD	(1u << 3)	/* the head was short of the tail
						   by STEPTIME_SNAP_BEHIND(stream)
						   SQEs: all counted but those
						   last ones are complete */
#define STEPTIME_SNAP_BEHIND(stream)	((stream) >> 16)
#define STEPTIME_SNAP_BEHIND_MAX	0xffffu
#define STEPTIME_SQ_KEY(dev, ts, sq)	((__u64)(dev) << 48 | \
					 (__u64)((ts) & 0xffff) << 32 | (__u32)(sq))
/* Its parts back. */
#define STEPTIME_SQ_KEY_DEV(key)	((__u32)((key) >> 48))
#define STEPTIME_SQ_KEY_TS(key)		((__u32)((key) >> 32) & 0xffff)
#define STEPTIME_SQ_KEY_SQ(key)		((__u32)(key))
/* steptime_ring.res[0]: what the process's library does. */
#define STEPTIME_RING_F_JOURNAL	(1u << 0)	/* journals its sends */

/*
 * Marks live in the marking process's own memory, where no other process
 * can write (design-notes: tenants). The process registers its ring once,
 * with STEPTIME_IOC_RING on a file of the traced device (one it has open,
 * else a new open of steptime_marks_hdr.device): the BPF program sees the
 * ioctl, checks the ring's header against the process's kernel-observed
 * identity and binds the ring to it. Afterwards, at each of that
 * process's traced ioctls and only there (where its memory is the
 * current one), the program reads the marks written since, with
 * bpf_probe_read_user(). Whatever a process writes there can only describe
 * its own steps. The same ioctl, issued again, makes the program consume
 * the marks written so far before it returns (a flush). The driver
 * rejects the command (npusim: -ENOTTY, the Ascend driver: -EINVAL); the
 * return value means nothing.
 *
 * _IOW('Z', 0xff, __u64): the manager's magic, so the driver never
 * forwards it to a sub-driver; a number past every manager command.
 */
#define STEPTIME_IOC_RING	0x40085affu

/*
 * One mark: written by the step API, consumed by the BPF program. The
 * writer reserves a position with an atomic add on ring.head, fills the
 * entry, and stores seq = position + 1 last (release). A reader takes an
 * entry only when its seq matches; an entry overwritten before it was read
 * is counted (marks_lost), never misread.
 */
struct steptime_mark {
	__u64	seq;		/* position + 1 once the entry is complete */
	__u64	index_id;	/* step index id (aclprofStepInfo.indexId) */
	__u64	time_ns;	/* CLOCK_MONOTONIC at the mark */
	__u32	tag;		/* STEPTIME_TAG_* */
	__u32	stream;		/* device stream id or STEPTIME_STREAM_NONE */
};

/*
 * A process's mark ring, in its own memory (64-byte aligned, 8256 bytes).
 * @pidns_ino and @ns_tgid are the process as it sees itself
 * (stat("/proc/self/ns/pid").st_ino, getpid()); the BPF program binds the
 * ring only when they match what the kernel knows of the registering
 * process (task->thread_pid->numbers[level]), so a ring inherited across
 * fork() is never taken for the child's.
 */
struct steptime_ring {
	__u32	magic;		/* STEPTIME_RING_MAGIC */
	__u32	version;	/* STEPTIME_ABI_VERSION */
	__u32	pidns_ino;
	__u32	ns_tgid;
	__u64	head;		/* marks reserved so far (atomic add) */
	__u64	base;		/* head at registration: read from there */
	__u64	res[4];		/* [0]: STEPTIME_RING_F_* */
	struct steptime_mark ring[STEPTIME_MARK_RING];
};

/* The one entry of the marks map. */
struct steptime_marks_hdr {
	__u32	magic;		/* STEPTIME_MAGIC; 0 once unloaded */
	__u32	version;	/* STEPTIME_ABI_VERSION */
	__u32	dev_rdev;	/* kernel dev_t of the traced device */
	__u32	flags;		/* STEPTIME_MARKS_F_* */
	__u64	res[3];
	char	device[64];	/* its path, for STEPTIME_IOC_RING */
	/*
	 * The libsteptime files (stat(2)'s st_dev, st_ino) whose
	 * steptime__ring_kick() has the BPF program's uprobe: a process whose
	 * library is one of them binds its ring and has its marks consumed
	 * by calling it, with no ioctl; any other uses STEPTIME_IOC_RING.
	 */
	struct {
		__u64	dev;
		__u64	ino;
	} kick[STEPTIME_KICK_LIBS];
};

/*
 * steptime_marks_hdr.flags: the program counts mapped SQs from the
 * processes' journals (load --journal): libsteptime writes its journal
 * entries only then.
 */
#define STEPTIME_MARKS_F_JOURNAL	(1u << 0)

/* Per-step statistics: key and value of the "steps" map. */
struct steptime_step_key {
	__u32	tgid;		/* kernel (initial-namespace) tgid */
	__u32	pad;
	__u64	index_id;
};

#define STEPTIME_STEP_OPEN		0	/* running, or tasks in flight */
#define STEPTIME_STEP_DONE		1	/* ended, every task complete */
#define STEPTIME_STEP_INCOMPLETE	2	/* process exited mid-step */
#define STEPTIME_STEP_ENDED		3	/* ended; whether every task
						   completed cannot be known
						   (STEPTIME_F_UIO) */

#define STEPTIME_F_HOST_START	(1u << 0)	/* host_start_ns valid */
#define STEPTIME_F_HOST_END	(1u << 1)	/* host_end_ns valid */
#define STEPTIME_F_DEV_START	(1u << 2)	/* dev_start_ticks valid */
#define STEPTIME_F_DEV_END	(1u << 3)	/* dev_end_ticks valid */
#define STEPTIME_F_STREAM	(1u << 4)	/* stream-ordered marks seen */
/*
 * STEPTIME_F_UIO: the process has had an SQ whose SQEs the kernel never
 * sees (uio_d; uio_t without the SQE trace hook) since before this step
 * ended. Which step such a task was submitted in cannot be known, so the
 * step's task figures are absent: tasks, completions, reported, errors,
 * first/last_submit_ns, last_complete_ns and lat_hist hold only the tasks
 * the kernel saw (stat prints them as null), and the step ends ENDED,
 * never DONE. Those SQs' completions are counted process-wide only
 * (counters completions, uio_completions). Also a host-marked step (no
 * stream) of a process with a uio_t SQ the HAL's probes do not count: the
 * kernel sees those SQEs at the driver's copy, not at the send, so which
 * host-marked step they were sent in cannot be known either (its
 * stream-marked steps stay exact). README, "On a real host".
 */
#define STEPTIME_F_UIO		(1u << 5)
#define STEPTIME_F_GAP		(1u << 6)	/* gap_ns valid */
#define STEPTIME_F_DEV_EVENT	(1u << 7)	/* dev_* from timeline events
						   (1 us resolution) */
#define STEPTIME_F_STREAM_END	(1u << 8)	/* the device passed the END mark */
#define STEPTIME_F_PREEXISTING	(1u << 9)	/* a file or queue from before
						   the load: its tasks are not
						   counted (README) */
#define STEPTIME_F_EXITED	(1u << 10)	/* its process has exited: the
						   record is final */
/*
 * STEPTIME_F_JOURNAL: tasks of the step were counted from its process's
 * journal of its own sends (load --journal), per step, not per task: tasks
 * and completions are exact, but the per-task figures (reported, errors,
 * first/last_submit_ns, lat_hist) were not measured for them, and stat
 * prints them as null, never as 0.
 */
#define STEPTIME_F_JOURNAL	(1u << 11)

/*
 * Times: *_ns without "dev" are kernel/host CLOCK_MONOTONIC ns (exact at the
 * instant they name: a mark, an ioctl entry or exit). Completion times of
 * tasks without a report of their own are upper bounds (the RECV that
 * reported a later task of the same SQ). dev_* are device counter values;
 * device_time_ns is their difference converted at the counter frequency.
 */
struct steptime_step_stats {
	__u32	tgid;			/* kernel tgid */
	__u32	ns_tgid;		/* tgid in the process's PID namespace */
	__u64	index_id;
	__u32	stream;			/* stream of the marks, or NONE */
	__u32	state;			/* STEPTIME_STEP_* */
	__u32	flags;			/* STEPTIME_F_* */
	__u32	pidns_ino;
	__u64	host_start_ns;		/* START mark */
	__u64	host_end_ns;		/* END mark */
	__u64	gap_ns;			/* START - previous step's END mark */
	__u64	dev_start_ticks;	/* START place-holder report */
	__u64	dev_end_ticks;		/* END place-holder report */
	__u64	device_time_ns;		/* (end - start) at counter_freq_hz */
	__u64	tasks;			/* tasks submitted in the step */
	__u64	completions;		/* of those, completed */
	__u64	reported;		/* completions with their own report */
	__u64	errors;			/* reports with an error */
	__u64	submit_ioctls;		/* SEND ioctls */
	__u64	submit_ioctl_ns;	/* time inside them */
	__u64	first_submit_ns;	/* first SEND entry */
	__u64	last_submit_ns;		/* last SEND entry */
	__u64	last_complete_ns;	/* last completion (RECV exit) */
	__u64	lat_sum_ns;		/* sum of submit -> completion */
	__u32	lat_hist[STEPTIME_LAT_BUCKETS];	/* [i]: 2^i <= ns < 2^(i+1) */
	/*
	 * The process's file-system uid (kernel-wide, as stat(2) reports a
	 * file's owner) when steptime first met it: readers trust its phase
	 * file (lib/phase_write.c) only when this user owns it.
	 */
	__u32	uid;
	__u32	pad;
};

/*
 * Global counters, per CPU: the reader sums them. Every loss has one. The
 * X-macro keeps the field list, the BPF increments and the names printed by
 * `steptime status` in one place.
 */
#define STEPTIME_COUNTERS(C)						\
	C(ioctls)		/* matched ioctls on the device */	\
	C(sends)		/* successful SQCQ_SEND */		\
	C(recvs)		/* successful SQCQ_RECV */		\
	C(send_errors)		/* SQCQ_SEND that failed */		\
	C(tasks)		/* SQEs submitted */			\
	C(tasks_in_step)	/* of those, attributed to a step */	\
	C(tasks_outside_step)	/* submitted with no step open */	\
	C(tasks_untracked)	/* past the per-SEND SQE bound */	\
	C(reports)		/* completion reports read */		\
	C(reports_unread)	/* past the per-RECV report bound */	\
	C(reports_unmatched)	/* report for no known task */		\
	C(completions)		/* tasks completed (report or sq_head) */\
	C(uio_completions)	/* of SQs whose SQEs the kernel never	\
				   sees (uio_d): in no step */		\
	C(task_overwritten)	/* task slot reused before completion */\
	C(marks)		/* marks consumed */			\
	C(marks_lost)		/* ring overrun before consumption */	\
	C(stream_marks)		/* place-holder step marks submitted */	\
	C(steps)		/* step records created */		\
	C(steps_done)		/* steps that reached DONE */		\
	C(steps_incomplete)	/* steps of processes that exited */	\
	C(step_map_full)	/* step record could not be created */	\
	C(sq_map_full)		/* SQ could not be tracked */		\
	C(proc_map_full)	/* process could not be tracked */	\
	C(events_dropped)	/* ring buffer full */			\
	C(proc_exits)		/* tracked processes that exited */	\
	C(hook_errors)		/* user memory read failures */	\
	C(rings)		/* mark rings registered */		\
	C(ring_rejected)	/* registrations that failed the checks */\
	C(steps_recycled)	/* a process's oldest step record dropped	\
				   for its newest (per-process cap) */	\
	C(steps_recycled_open)	/* of those, still open: emitted as	\
				   incomplete */			\
	C(steps_evicted_exited)	/* an exited process's step record	\
				   dropped: map full */	\
	C(files_preexisting)	/* manager files bound before load */	\
	C(file_map_full)	/* bound file could not be tracked */	\
	C(sqs_preexisting)	/* SQs allocated before load */		\
	C(tasks_preexisting)	/* tasks on them: in no step */		\
	C(cq_map_full)		/* CQ could not be tracked */		\
	C(sq_resyncs)		/* SEND position not at the known tail */\
	C(heads_behind)		/* SQ heads behind completed work */	\
	C(head_queries)		/* SQCQ_QUERY SQ_HEAD results */	\
	C(head_completions)	/* tasks completed by those */		\
	C(hook_reports)		/* reports taken at the CQ hook */	\
	C(hook_unattributed)	/* hook events of no known queue */	\
	C(sqes_traced)		/* uio_t SQEs seen by the trace hook */	\
	C(hook_early)		/* hook reports before their SEND's exit	\
				   (applied by their RECV) */		\
	C(tasks_internal)	/* the runtime's own place-holders */	\
	C(tasks_unowned)	/* SQEs of an SQ not tracked (maps full,	\
				   sqs_raced, or freed while their	\
				   SEND ran) */				\
	C(sqes_send_failed)	/* SQEs queued by a SEND that then failed	\
				   (seen by the SQE hook only), or of a	\
				   halSqTaskSend() given up whose marks	\
				   or own tasks cannot be taken back */	\
	C(calls_unpaired)	/* exits whose entry state was gone:	\
				   accounted from the exit's arguments */\
	C(tasks_raced)		/* SQEs of an SQ id freed and allocated	\
				   again around their SEND (exits seen	\
				   out of order): in no step */		\
	C(sqs_raced)		/* ALLOCs of an id another ALLOC got	\
				   while they ran: SQ not tracked */	\
	C(steps_pid_reused)	/* an exited process's step record	\
				   replaced by a new process that got	\
				   its process id and step id back */	\
	C(steps_ended)		/* steps that reached ENDED (F_UIO) */	\
	C(calls_slot_shared)	/* ioctl entries kept in the calls hash:	\
				   the thread's slot (thread id modulo	\
				   4096) was held by another thread */	\
	C(ring_kicks)		/* the step API's kicks (uprobe): rings	\
				   bound and consumed with no ioctl */	\
	C(sqs_hal)		/* SQs allocated through a probed	\
				   libascend_hal.so */			\
	C(sqs_blind)		/* mapped SQs whose SQEs no hook sees	\
				   (HAL not probed): steps F_UIO */	\
	C(hal_sends)		/* halSqTaskSend() calls accounted (mapped	\
				   SQs; a kio SQ's are its SENDs') */	\
	C(hal_head_queries)	/* halSqCqQuery(SQ_HEAD) of mapped SQs */	\
	C(hook_deferred)	/* hook reports of ambiguous (device, TS):	\
				   left to the RECV that reads them */	\
	C(sqes_unowned)		/* SQEs the trace hook saw of no known	\
				   uio_t SQ (freed, not tracked, or not	\
				   one SQ's for sure): in no step */	\
	C(sqes_continued)	/* SQEs after a task's first (a task of	\
				   several SQEs): counted in its task */\
	C(hal_send_retries)	/* halSqTaskSend() calls repeating one that	\
				   found no room: counted once */	\
	C(hal_sends_retracted)	/* halSqTaskSend() calls that failed and	\
				   were given up: their tasks taken back */\
	C(hal_sends_overlapped)	/* halSqTaskSend() calls on an SQ another	\
				   thread's send may not have reached:	\
				   their positions assumed */		\
	C(finishes_raced)	/* finishers that found every condition	\
				   of a step's finish held and lost	\
				   step_close() to another: no loss,	\
				   the step emitted once */	\
	C(journal_snaps)	/* SQ snapshots of a process's journal	\
				   applied */				\
	C(journal_drains)	/* of those, with the SQ drained */	\
	C(journal_stale)	/* snapshots older than the last applied,\
				   or bogus: ignored */			\
	C(journal_unowned)	/* snapshots of no mapped HAL SQ of the	\
				   process (kio: its ioctls count) */	\
	C(journal_mismatch)	/* drained SQs whose send_ok differs from	\
				   the journal: sends it did not see (a	\
				   dlsym caller, another HAL copy); the	\
				   process's steps flagged */		\
	C(journal_segs_full)	/* an SQ's pending steps past what is	\
				   kept: those steps flagged */		\
	C(journal_late)		/* SQs whose journal began after their	\
				   ALLOC, SQEs sent before it (a	\
				   library patched late): the driver's	\
				   count taken as its start, a step	\
				   open then flagged */

/*
 * The counters above that mean something was lost or not attributed: a
 * mark, a task, a report, a step or a queue steptime could not account
 * for, or a figure it could not make exact. `status`, `export`, the
 * benchmarks and the fuzzer all check this one list.
 */
#define STEPTIME_LOSSES(C)						\
	C(marks_lost) C(ring_rejected) C(hook_errors)			\
	C(tasks_untracked) C(tasks_unowned) C(tasks_raced)		\
	C(tasks_preexisting) C(sqes_send_failed) C(task_overwritten)	\
	C(reports_unread) C(reports_unmatched) C(hook_unattributed)	\
	C(step_map_full) C(steps_recycled_open) C(events_dropped)	\
	C(sq_map_full) C(sqs_raced) C(cq_map_full) C(file_map_full)	\
	C(proc_map_full) C(sqes_unowned) C(hal_sends_overlapped)	\
	C(journal_mismatch) C(journal_segs_full)

/*
 * Every SQE is counted once (unless hook_errors: an argument or SQE that
 * could not be read):
 *   SQEs SEND accepted + SQEs the trace hook saw outside a SEND
 *	(sqes_traced + sqes_unowned) == tasks
 *	+ stream_marks + tasks_internal + tasks_preexisting + tasks_unowned
 *	+ sqes_send_failed + tasks_raced + sqes_unowned + sqes_continued
 * (without libascend_hal.so's probes: with them, mapped SQs' SQEs are
 * counted at halSqTaskSend, and the trace hook leaves them alone)
 *   tasks == tasks_in_step + tasks_outside_step + tasks_untracked
 */
#define __STEPTIME_COUNTER_FIELD(name) __u64 name;
struct steptime_counters {
	STEPTIME_COUNTERS(__STEPTIME_COUNTER_FIELD)
};
#undef __STEPTIME_COUNTER_FIELD

/* Attach modes, best first. */
#define STEPTIME_ATTACH_AUTO		0
#define STEPTIME_ATTACH_FENTRY		1
#define STEPTIME_ATTACH_KPROBE		2
#define STEPTIME_ATTACH_TP_BTF		3
#define STEPTIME_ATTACH_TRACEPOINT	4

/* What the loader attached, in the pinned "info" array (one entry). */
struct steptime_info {
	__u32	magic;			/* STEPTIME_MAGIC */
	__u32	version;		/* STEPTIME_ABI_VERSION */
	__u32	attach_mode;		/* STEPTIME_ATTACH_* */
	__u32	dev_rdev;		/* kernel dev_t (major << 20 | minor) */
	__u64	counter_freq_hz;	/* device counter frequency */
	__u64	loaded_ns;		/* CLOCK_MONOTONIC at load */
	char	device[64];		/* device path */
	char	profile[32];		/* driver profile name */
	char	reason[512];		/* why this attach mode */
	/*
	 * The bpffs root's mode before and after the load added o+x, g+x to
	 * it so that --mode/--group users can reach the pins (0: untouched).
	 * Unload puts @bpffs_mode_before back if the mode is still
	 * @bpffs_mode_after: steptime changes nothing outside its pin
	 * directory that it does not revert.
	 */
	__u32	bpffs_mode_before;
	__u32	bpffs_mode_after;
	/*
	 * The STARS SQE layout the program parses (1: 910B, 910_93; 2: 950),
	 * where it came from (STEPTIME_STARS_FROM_*), and the chip name the
	 * driver gave for device 0 ("" where it gave none).
	 */
	__u32	stars_version;
	__u32	stars_from;
	char	chip[32];
	/*
	 * The libascend_hal.so files whose entry points carry the program's
	 * uprobes (bpf/hal.bpf.h): a process using another one (or none)
	 * has its mapped SQs' steps flagged STEPTIME_F_UIO.
	 */
	__u32	nhal;
	__u32	hal_flags;		/* STEPTIME_HAL_* */
	struct {
		__u64	dev;		/* stat(2)'s st_dev, st_ino */
		__u64	ino;
		char	path[112];
	} hal[STEPTIME_HAL_LIBS];
};

/*
 * steptime_info.hal_flags: the load asked for the journal (--journal):
 * with a HAL library probed, only its halSqCqAllocate() is, and mapped SQs
 * are counted from the processes' journals.
 */
#define STEPTIME_HAL_JOURNAL		(1u << 0)

#define STEPTIME_STARS_FROM_DEVICE	1	/* read from the driver */
#define STEPTIME_STARS_FROM_OPTION	2	/* --stars; the driver cannot say */
#define STEPTIME_STARS_FROM_BOTH	3	/* --stars, and the driver agrees */

#endif /* _STEPTIME_ABI_H */
