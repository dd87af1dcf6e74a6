/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libsteptime: mark training steps, read per-step statistics.
 *
 * Marks are a clock read and a few stores into a ring in this process's own
 * memory: no syscall per mark. The process registers the ring once with
 * the BPF program loaded by `steptime load` (or steptime__load()), by the
 * STEPTIME_IOC_RING ioctl on the traced device (steptime/abi.h); the
 * program reads the marks at the process's own ioctls there and builds one
 * record per step, which the reader API returns. The pinned "marks" map
 * only tells that steptime is loaded, and on which device.
 *
 * Environment:
 *   STEPTIME_PIN_DIR  where steptime's maps are pinned (default
 *                     STEPTIME_PIN_DIR, /sys/fs/bpf/steptime); read when
 *                     the marks map is opened (first mark, retries) and by
 *                     steptime_reader__open() without a pin_dir.
 *   STEPTIME_QUIET    set to 1: no diagnostics on stderr.
 *
 * Diagnostics: a mark never prints per call; each kind of failure
 * (no permission, wrong map, no free slot) is printed once per process.
 */
#ifndef _STEPTIME_STEPTIME_H
#define _STEPTIME_STEPTIME_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include <steptime/export.h>
#include <steptime/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of these headers (the library's is `steptime --version`). */
#define STEPTIME_VERSION_MAJOR	0
#define STEPTIME_VERSION_MINOR	1
#define STEPTIME_VERSION_PATCH	0
#define STEPTIME_VERSION	"0.1.0"

struct steptime_step;
struct steptime_reader;

/**
 * steptime_step__new() - a new step with a fresh index id
 *
 * Index ids come from the process-wide counter aclprofCreateStepInfo()
 * uses (from 1, unique, thread-safe).
 *
 * Return: the step, or NULL with errno set (ENOMEM).
 */
STEPTIME_API struct steptime_step *steptime_step__new(void);

/**
 * struct steptime_mark_opts - how to mark
 * @sz: sizeof(struct steptime_mark_opts)
 * @stream: a device stream to order the mark on, or NULL for a host mark.
 *	An npusim HAL stream gets a place-holder task (the device stamps it
 *	when the stream reaches it); on a CANN host the runtime's
 *	rtProfilerTraceEx() does the same. Any other pointer: host mark only.
 */
struct steptime_mark_opts {
	size_t sz;
	void *stream;
	size_t :0;
};
#define steptime_mark_opts__last_field stream

/**
 * steptime_step__mark() - mark the start or the end of @step
 * @step: from steptime_step__new()
 * @tag: STEPTIME_TAG_START, or END (any other value)
 * @opts: NULL for a host mark
 *
 * A host mark is one CLOCK_MONOTONIC read and a few stores. The first mark
 * of a process opens the pinned map (a few syscalls); when that fails,
 * later marks retry at most once a second, so a process started before
 * `steptime load` begins to mark once it is loaded.
 *
 * Return: 0 on success; -EINVAL for a NULL @step or bad @opts; -EALREADY
 * when @tag was already marked on @step; -ENODEV when steptime is not
 * loaded (no pinned map); -EACCES when the map's mode does not allow this
 * user (`steptime load --mode/--group`); -EPROTO when the map is not
 * steptime's or of another ABI version; -ENOSPC when no free slot was
 * found for this process; another negative errno when a stream mark failed
 * (the host mark is written).
 */
STEPTIME_API int steptime_step__mark(struct steptime_step *step,
				     unsigned int tag,
				     const struct steptime_mark_opts *opts);

/** steptime_step__index_id() - the step's index id (0 for NULL) */
STEPTIME_API __u64 steptime_step__index_id(const struct steptime_step *step);

/** steptime_step__free() - free @step; NULL is a no-op */
STEPTIME_API void steptime_step__free(struct steptime_step *step);

/**
 * steptime__mark() - mark by index id, without a step object
 * @index_id: the step's id (any nonzero value)
 * @tag: STEPTIME_TAG_START or END
 * @opts: as for steptime_step__mark()
 *
 * No duplicate check: for bindings that keep their own state.
 *
 * Return: as steptime_step__mark(), without -EALREADY.
 */
STEPTIME_API int steptime__mark(__u64 index_id, unsigned int tag,
				const struct steptime_mark_opts *opts);

/**
 * steptime__flush() - hand steptime everything this process marked so far
 *
 * The BPF program reads a process's marks when half its ring is written
 * (steptime__ring_kick()) or, where this library is not probed, at its
 * ioctls on the device; the device times of stream-marked steps (timeline
 * events read back once they completed) are handed on at the next stream
 * END mark. This does both now: the device times of every stream-marked
 * step whose END has completed (waiting up to 2 s for those still in
 * flight), then one kick or ioctl. Called at exit() and by aclprofStop();
 * call it where a reader must see the last step at once.
 *
 * Return: 0, or the error a mark would return (-ENODEV: not loaded ...).
 */
STEPTIME_API int steptime__flush(void);

/**
 * steptime__ring_kick() - where the BPF program's uprobe sits
 * @ring: this process's mark ring
 *
 * Not for applications: the library calls it to have its ring bound and
 * its marks consumed without a syscall the driver sees, where `steptime
 * load` probed this library file (steptime/abi.h). Does nothing itself.
 */
STEPTIME_API void steptime__ring_kick(const struct steptime_ring *ring);

/*
 * The library's own counters, per process: what it could not do for the
 * app without failing the app's call (a mark never fails a CANN call for a
 * reason of steptime's own). The X-macro keeps the fields and their names
 * in one place.
 */
#define STEPTIME_LIB_COUNTERS(C)					\
	C(marks_dropped)	/* marks not recorded: steptime not	\
				   loaded, not permitted, not its map */\
	C(stops_incomplete)	/* aclprofStop()s that could not read	\
				   the steps or write a result file */	\
	C(stream_steps_stale)	/* stream-marked steps whose END never	\
				   came: their slot and events freed */	\
	C(stream_steps_untimed)	/* stream-marked steps given no device	\
				   time: 64 ended steps' events in	\
				   flight */				\
	C(mark_setups)		/* ring registrations a mark had to do	\
				   itself (not done at load or at step	\
				   creation) */				\
	C(ring_handovers)	/* the ring shared, once a second	\
				   thread marked (once per process):	\
				   from then on every mark reserves its	\
				   place with a locked add */		\
	C(got_patched)		/* GOT entries of HAL calls taken into	\
				   the journal of sends */		\
	C(got_foreign)		/* GOT entries of HAL calls bound	\
				   elsewhere than the HAL found: left	\
				   alone (their sends are flagged) */	\
	C(journal_full)		/* sends or ALLOCs of an SQ past the	\
				   journal's table: not journaled	\
				   (flagged against the driver's count) */

#define __STEPTIME_LIB_COUNTER_FIELD(name) __u64 name;
struct steptime_lib_counters {
	STEPTIME_LIB_COUNTERS(__STEPTIME_LIB_COUNTER_FIELD)
};
#undef __STEPTIME_LIB_COUNTER_FIELD

/**
 * steptime__lib_counters() - this process's library counters
 * @cnt: filled with the first @sz bytes of the counters (a caller built
 *	against older headers passes its smaller size; bytes past what this
 *	library knows are zeroed)
 * @sz: sizeof(*cnt)
 *
 * Return: 0, or -EINVAL for a NULL @cnt.
 */
STEPTIME_API int steptime__lib_counters(struct steptime_lib_counters *cnt,
					size_t sz);

/**
 * struct steptime_reader_opts - which steps to read
 * @sz: sizeof(struct steptime_reader_opts)
 * @pin_dir: NULL: STEPTIME_PIN_DIR env, else STEPTIME_PIN_DIR
 * @pid: 0: every process; else steps of the process whose kernel tgid or
 *	PID-namespace tgid is @pid
 * @last: 0: all; else only the @last most recent steps
 * @pidns_ino: 0: any; else only steps of processes in that PID namespace
 *	(with @pid, an exact process identity across containers)
 */
struct steptime_reader_opts {
	size_t sz;
	const char *pin_dir;
	int pid;
	size_t last;
	__u32 pidns_ino;
	size_t :0;
};
#define steptime_reader_opts__last_field pidns_ino

/**
 * steptime_reader__open() - snapshot the steps map
 * @opts: NULL for every step of every process
 *
 * Return: a reader, or NULL with errno: ENOENT when steptime is not loaded,
 * EACCES without permission, EINVAL for bad @opts, ENOMEM.
 */
STEPTIME_API struct steptime_reader *
steptime_reader__open(const struct steptime_reader_opts *opts);

/**
 * steptime_reader__next() - the next step, in step order
 * @out: filled on success
 *
 * Step order: by start time (host START mark, else first submit, else
 * END mark), then process, then index id.
 *
 * Return: 0 on success, -ENOENT after the last step, -EINVAL for NULL args.
 */
STEPTIME_API int steptime_reader__next(struct steptime_reader *reader,
				       struct steptime_step_stats *out);

/** steptime_reader__count() - number of steps the reader holds */
STEPTIME_API size_t steptime_reader__count(const struct steptime_reader *reader);

/** steptime_reader__free() - free @reader; NULL is a no-op */
STEPTIME_API void steptime_reader__free(struct steptime_reader *reader);

/*
 * Ranges and marks inside steps: a step's phases.
 *
 * A range (steptime_range__start/end; CANN's aclprofPush/Pop and
 * aclprofRangeStart/Stop; mstx ranges) or a mark adds to the phase named
 * by its message, in the step open in this process when it ends: count,
 * host time and, for a range on a stream (when CANN's runtime, or
 * steptime's ACL stand-in, is loaded), device time from two timeline
 * events. Each finished step's phases go to a per-process file,
 * <dir>/<euid>/<pidns>.<pid>.phases, <dir> STEPTIME_PHASE_DIR (environment;
 * default below, /tmp/steptime where /dev/shm is missing), with one
 * write(2); steps without ranges cost nothing. The file keeps the last 16
 * to 32 steps; readers trust it only when it is a regular file with one
 * name, owned by the step's uid (README, "Isolation between processes").
 */
#define STEPTIME_PHASE_DIR	"/dev/shm/steptime"
#define STEPTIME_PHASE_NAME	64	/* longer names are cut */
#define STEPTIME_PHASES_MAX	32	/* names per step; more share "(other)" */
/* Phases a step has at most: STEPTIME_PHASES_MAX names, then "(other)". */
#define STEPTIME_PHASES_PER_STEP	(STEPTIME_PHASES_MAX + 1)

struct steptime_phase {
	char name[STEPTIME_PHASE_NAME];
	__u64 count;		/* ranges and marks */
	__u64 host_ns;		/* sum of range durations, CLOCK_MONOTONIC */
	__u64 device_ns;	/* sum of device durations */
	__u64 device_count;	/* ranges with a device duration */
};

/**
 * steptime_range__start() - start a range named @name
 * @name: its phase name (non-empty)
 * @stream: a device stream to time it on as well, or NULL
 *
 * A name torch_npu gives steps ("ProfilerStep#N", "step N") starts step
 * N + 1 (index ids start at 1) instead: steptime_range__end() ends it.
 *
 * Return: a range id (never 0), or 0 with errno: EINVAL for a NULL or
 * empty @name, ENOSPC when STEPTIME_RANGES_MAX ranges are open.
 */
#define STEPTIME_RANGES_MAX	1024
STEPTIME_API __u64 steptime_range__start(const char *name, void *stream);

/**
 * steptime_range__end() - end a range
 *
 * Return: 0, or -ENOENT for an id that is not an open range.
 */
STEPTIME_API int steptime_range__end(__u64 range_id);

/**
 * steptime__mark_msg() - an instant named @name in the open step's phases
 *
 * Return: 0, or -EINVAL for a NULL or empty @name.
 */
STEPTIME_API int steptime__mark_msg(const char *name, void *stream);

/**
 * steptime_phases__get() - the phases of step @s
 * @s: a record from steptime_reader__next()
 * @out: filled with up to @n phases, in first-seen order
 *
 * The phases are read from the step's process's phase file, once per
 * steptime_reader__open(): a reader's snapshot sees the phases on file
 * when its first step of that process was asked for (a step's phases are
 * written when it ends, or at most one step later when their device times
 * were not ready: a later snapshot shows them).
 *
 * Return: the number of phases the step has (may exceed @n; 0 for none),
 * or -EINVAL for NULL @s (or NULL @out with @n > 0).
 */
STEPTIME_API int steptime_phases__get(const struct steptime_step_stats *s,
				      struct steptime_phase *out, size_t n);

/*
 * Formatting, pure functions shared by `steptime stat`, `steptime record`,
 * aclprofStop() and the Python binding.
 */
enum steptime_fmt {
	STEPTIME_FMT_TABLE = 0,
	STEPTIME_FMT_CSV = 1,
	STEPTIME_FMT_JSON = 2,
};

/**
 * steptime_fmt__parse() - "table", "csv" or "json"
 *
 * Return: a STEPTIME_FMT_*, or -EINVAL.
 */
STEPTIME_API int steptime_fmt__parse(const char *name);

/**
 * steptime_stats__host_ns() - a step's host time, END minus START
 * @s: step record
 * @ns: set to the time when there is one
 *
 * Return: 0; -ENODATA when the step lacks a host START or END (or they are
 * out of order).
 */
STEPTIME_API int steptime_stats__host_ns(const struct steptime_step_stats *s,
					 __u64 *ns);

/**
 * steptime_stats__device_ns() - a step's device time
 * @s: step record
 * @ns: set to the time when there is one
 *
 * Return: 0; -ENODATA when the step lacks a device START or END.
 */
STEPTIME_API int steptime_stats__device_ns(const struct steptime_step_stats *s,
					   __u64 *ns);

/**
 * steptime__pin_dir() - where steptime's maps are pinned
 * @given: a directory given on a command line or in options, or NULL
 *
 * The one rule every part of steptime follows (the step API, the reader,
 * the loader, the commands): @given, else $STEPTIME_PIN_DIR when set and
 * not empty, else STEPTIME_PIN_DIR.
 *
 * Return: the directory (never NULL).
 */
STEPTIME_API const char *steptime__pin_dir(const char *given);

/**
 * steptime_stats__lat_pct() - a task latency percentile from lat_hist
 * @s: step record
 * @pct: 0 < pct <= 100
 *
 * Interpolated linearly inside the log2 bucket that holds the percentile.
 *
 * Return: nanoseconds, or 0 when the step has no latency sample.
 */
STEPTIME_API __u64 steptime_stats__lat_pct(const struct steptime_step_stats *s,
					   double pct);

/**
 * steptime_stats__snprintf_header() - the header line of a format
 *
 * Table and CSV have one (ending in '\n'); JSON has none (writes "").
 *
 * Return: the length the full header needs (like snprintf), or -EINVAL.
 */
STEPTIME_API int steptime_stats__snprintf_header(char *buf, size_t len,
						 enum steptime_fmt fmt);

/**
 * steptime_stats__snprintf() - one step as a line of a format
 *
 * Table and CSV lines end in '\n'; JSON is one object without a newline
 * (a caller joins objects into an array or writes JSON lines). JSON keys:
 * pid, ns_pid, pidns_ino, index_id, stream (null without a stream),
 * state ("open", "done", "incomplete", "ended"), flags, host_start_ns,
 * host_end_ns, host_time_ns, gap_ns, dev_start_ticks, dev_end_ticks,
 * device_time_ns, tasks, completions, reported, errors, submit_ioctls,
 * submit_ioctl_ns, first_submit_ns, last_submit_ns, last_complete_ns,
 * lat_p50_ns, lat_p99_ns; a value the record does not have is null.
 *
 * CSV columns: msprof's step_trace (Device_id, Iteration ID, FP Start(us),
 * BP End(us), Iteration End(us), Iteration Time(us), FP to BP Time(us),
 * Iteration Refresh(us), Data Aug Bound(us), Model ID) with msprof's
 * relations, every time on one clock, the host's CLOCK_MONOTONIC (us):
 * FP Start = the START mark, Iteration End = the END mark, Iteration Time
 * = Iteration End - FP Start (the host time, with or without device time),
 * Data Aug Bound = FP Start - the previous step's END (the gap). A step
 * has no forward/backward points, so BP End, FP to BP Time and Iteration
 * Refresh are 0, as msprof writes them for iterations known from step
 * marks only. Model ID is 4294967295 (CANN's step marks). Then steptime's
 * own columns: PID, NS PID, Stream, State, Host Time(us), Device Time(us)
 * (the device's time between the step's stream-ordered marks, its own
 * clock: the only column that is not host time), Tasks, Completions,
 * Errors, Submit Overhead(us), Task p50(us), Task p99(us). Unknown values
 * (a mark missing, no device time) are empty cells.
 *
 * Return: the length the full line needs (like snprintf), or -EINVAL.
 */
STEPTIME_API int steptime_stats__snprintf(char *buf, size_t len,
					  enum steptime_fmt fmt,
					  const struct steptime_step_stats *s);

/**
 * steptime_stats__fprint() - steptime_stats__snprintf() to a stream
 *
 * Return: 0, or a negative errno.
 */
STEPTIME_API int steptime_stats__fprint(FILE *f, enum steptime_fmt fmt,
					const struct steptime_step_stats *s);

/** steptime_state_str() - "open", "done", "incomplete", "ended" or "unknown" */
STEPTIME_API const char *steptime_state_str(unsigned int state);

#ifdef __cplusplus
}
#endif

#endif /* _STEPTIME_STEPTIME_H */
