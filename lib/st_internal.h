/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* libsteptime internals shared by lib/step.c, lib/acl_prof.c, lib/reader.c. */
#ifndef _STEPTIME_ST_INTERNAL_H
#define _STEPTIME_ST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <steptime/abi.h>
#include <steptime/steptime.h>
#include "base.h"

#ifndef offsetofend
#define offsetofend(TYPE, FIELD) \
	(offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
#endif

/* The next step index id: process-wide, from 1. */
ST_HIDDEN __u64 st_next_index_id(void);

/*
 * The object behind aclprofStepInfo: CANN's layout, which frameworks
 * (MindSpore) rely on when they overwrite indexId.
 */
struct aclprofStepInfo {
	bool startFlag;
	bool endFlag;
	__u64 indexId;
};
_Static_assert(sizeof(struct aclprofStepInfo) == 16, "aclprofStepInfo size");
_Static_assert(offsetof(struct aclprofStepInfo, indexId) == 8,
	       "aclprofStepInfo.indexId offset");

/*
 * Learn now that steptime is loaded (the marks map) and register this
 * process's mark ring with it. Return: 0 or as a mark.
 */
ST_HIDDEN int st_marks_ready(void);

/*
 * Ahead of a step (creation): register the ring (unless done, or retried
 * later) and look the runtime up. Errors are the marks' to return.
 */
ST_HIDDEN void st_marks_prepare(void);

/*
 * Make the BPF program consume every mark written so far, before this
 * returns (collecting the device times of finished stream-marked steps
 * first). Return: 0, or the error marks get.
 */
ST_HIDDEN int st_marks_sync(void);

/* This process's mark ring (tests). */
ST_HIDDEN const struct steptime_ring *st_marks_ring(void);

/* A host mark, and a stream mark when @stream is a known stream. */
ST_HIDDEN int st_mark(__u64 index_id, unsigned int tag, void *stream);

/* st_mark_stream() flags. */
enum {
	/*
	 * NULL @stream is the ACL runtime's default stream (CANN's
	 * aclrtStream convention), where a runtime is loaded (CANN's, or
	 * steptime's on npusim); without one, a host mark only.
	 */
	ST_MARK_NULL_DEFAULT	= 1u << 0,
	/*
	 * The place-holder task is already on the stream (CANN's own
	 * library submitted it): only record the timeline event after it.
	 */
	ST_MARK_NO_TASK		= 1u << 1,
	/*
	 * A host mark that cannot be recorded (steptime not loaded, not
	 * permitted, ...) is dropped: counted, said once, no stream mark,
	 * and not an error (the CANN API answers as CANN does).
	 */
	ST_MARK_DROP_OK		= 1u << 2,
};

/* Say once per kind why marks are dropped (@err: what a mark returned). */
ST_HIDDEN void st_marks_warn(int err);

/* st_mark() with ST_MARK_* @flags. */
ST_HIDDEN int st_mark_stream(__u64 index_id, unsigned int tag, void *stream,
			     unsigned int flags);

/* A mark with its time given, on no stream. Return: 0 or as a mark. */
/* One entry of the mark ring, as st_ring_put() writes it. */
struct st_ring_ent {
	__u64 index_id;
	__u64 time;
	__u32 tag;
	__u32 stream;
};

ST_HIDDEN int st_ring_put(const struct st_ring_ent *e, unsigned int n);
ST_HIDDEN void st_ring_flush(void);
ST_HIDDEN void st_ring_check(void);
ST_HIDDEN bool st_ring_unjournaled(void);

/*
 * The journal of this process's sends (lib/sends.c): st_sends_scan()
 * patches the HAL calls of objects loaded since its last call;
 * st_sends_snap() writes, before a mark, a snapshot of each SQ sent to
 * since its last one.
 */
ST_HIDDEN void st_sends_scan(void);
ST_HIDDEN void st_sends_snap_slow(void);
ST_HIDDEN extern unsigned long st_sends_dirty;

static inline __attribute__((always_inline)) void st_sends_snap(void)
{
	if (__builtin_expect(__atomic_load_n(&st_sends_dirty,
					     __ATOMIC_RELAXED) != 0, 0))
		st_sends_snap_slow();
}

ST_HIDDEN int st_mark_raw(__u64 index_id, unsigned int tag, __u32 stream,
			  __u64 time);

/* What a stream pointer is: decides how a stream mark is submitted. */
enum st_stream_kind {
	ST_STREAM_UNKNOWN = 0,	/* not a stream we know: host mark only */
	ST_STREAM_NPUSIM,	/* an npusim HAL stream */
	ST_STREAM_CANN,		/* CANN runtime present: rtProfilerTraceEx */
};

/*
 * Classify @stream; *id gets its id or STEPTIME_STREAM_NONE. NULL is never
 * an npusim HAL stream; with an ACL runtime it is its default stream
 * (ST_STREAM_CANN, the id rtGetStreamId() gives it).
 */
ST_HIDDEN enum st_stream_kind st_stream_resolve(void *stream, __u32 *id);

/* Stream-marked steps whose events are read back at once, at most. */
#define ST_STREAM_PENDING	64

/*
 * Device times read back from completed START/END event pairs: the
 * STEPTIME_TAG_DEV_* marks the caller hands to the BPF program, in order.
 */
struct st_dev_times {
	unsigned int n;
	struct st_ring_ent e[2 * ST_STREAM_PENDING];
};

/*
 * Submit the place-holder mark task on @stream (unless @task is false: it
 * is there already), and where the runtime has timeline events, record
 * one after it; @out gets the device times of steps whose END event is
 * done (@out->n set). Return: 1 when timeline events were recorded, 0
 * when not, or -errno.
 */
ST_HIDDEN int st_stream_submit(enum st_stream_kind kind, void *stream,
			       __u64 index_id, unsigned int tag, bool task,
			       struct st_dev_times *out);

/*
 * The device times of completed START/END event pairs into @out (@out->n
 * set); with @wait, wait for the pending ones first (bounded).
 */
ST_HIDDEN void st_stream_collect(bool wait, struct st_dev_times *out);

/*
 * In a Python process: have the interpreter call @flush from its atexit
 * handlers, ahead of a framework's shutdown that destroys the streams
 * (pyexit.c). Once per process; anywhere else, nothing.
 */
ST_HIDDEN void st_py_exit_flush(int (*flush)(void));

#endif /* _STEPTIME_ST_INTERNAL_H */
