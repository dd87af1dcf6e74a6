/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Ranges and marks (msproftx, mstx, the Python binding) inside steps:
 * lib/phase_write.c keeps, per process, the phases of the step that is open (host
 * time per range name, device time where a range is stream-ordered),
 * writes each finished step's phases to a per-process file that
 * steptime_phases__get() reads, and logs a profiling session's ranges for
 * msprof's msprof_tx CSV.
 */
#ifndef _STEPTIME_PHASE_WRITE_H
#define _STEPTIME_PHASE_WRITE_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "st_internal.h"

struct steptime_step_stats;

/* Longest message kept: msprof's MAX_MESSAGE_LEN (156) with its NUL. */
#define ST_TX_MSG	156

/* msprof_tx's event_type column. */
enum st_tx_event {
	ST_TX_MARKER = 0,	/* aclprofMark, mstxMarkA */
	ST_TX_PUSH_POP,		/* aclprofPush/Pop */
	ST_TX_START_END,	/* aclprofRangeStart/Stop, mstxRange* */
	ST_TX_MARKER_EX,	/* aclprofMarkEx */
};

/* A range in flight; owned by its API (a stamp, an mstx range slot). */
struct st_tx_range {
	char msg[ST_TX_MSG];
	char domain[32];
	__u64 start_ns;
	void *stream;		/* NULL: host only */
	void *ev_start;		/* timeline event recorded at start */
	bool no_phase;		/* a step's own range: logged, not a phase */
};

/* Start @r now (@r->msg and @r->domain set by the caller). */
ST_HIDDEN void st_tx_begin(struct st_tx_range *r, void *stream);

/* End @r now: a phase of the open step, a record of the session. */
ST_HIDDEN void st_tx_end(struct st_tx_range *r, enum st_tx_event type);

/* Drop @r without recording it (its events are destroyed). */
ST_HIDDEN void st_tx_cancel(struct st_tx_range *r);

/* An instant: counted in the open step's phase @msg, logged. */
ST_HIDDEN void st_tx_mark(const char *msg, const char *domain, void *stream,
			  enum st_tx_event type);

/* Called by every step mark (lib/step.c), before it is stored. */
ST_HIDDEN void st_tx_step(__u64 index_id, unsigned int tag);

/* STEPTIME_PHASE_DIR from the environment, else the default. */
ST_HIDDEN const char *st_phase_dir(void);

/* A reader took a snapshot: phase files are checked once until the next. */
ST_HIDDEN void st_phases_snapshot(void);

/*
 * Remove the phase files of processes that no longer run: every user's as
 * root, else the caller's. `steptime unload` calls it: the steps they
 * belong to went with the maps. Return: files removed, or -errno.
 */
ST_HIDDEN int st_phases_sweep(void);

/*
 * A reader's snapshot of every record (@s, @n): remove the phase files of
 * processes gone, with no record left, unwritten for a minute; at most once
 * a minute (0 then). Return: files removed, or -errno.
 */
ST_HIDDEN int st_phases_reap(const struct steptime_step_stats *s, size_t n);

/* Session log: on from aclprofStart (with ACL_PROF_MSPROFTX) to Stop. */
ST_HIDDEN void st_tx_session_start(__u32 device_id);
/* Stop logging; write msprof_tx columns to @f (NULL: discard). */
ST_HIDDEN int st_tx_session_write(FILE *f);

#endif /* _STEPTIME_PHASE_WRITE_H */
