/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* libsteptime internals shared by lib/step.c, lib/acl_prof.c, lib/reader.c. */
#ifndef _STEPTIME_ST_INTERNAL_H
#define _STEPTIME_ST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <steptime/abi.h>

#define ST_HIDDEN __attribute__((visibility("hidden")))

#ifndef offsetofend
#define offsetofend(TYPE, FIELD) \
	(offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
#endif

/* STEPTIME_PIN_DIR from the environment, else the default. */
ST_HIDDEN const char *st_pin_dir(void);

/* A diagnostic on stderr, unless STEPTIME_QUIET=1. */
ST_HIDDEN void st_warn(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* The next step index id: process-wide, from 1. */
ST_HIDDEN __u64 st_next_index_id(void);

/* Inode of this process's PID namespace (0 when unknown). */
ST_HIDDEN __u32 st_pidns_ino(void);

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

/* Open the marks map and claim a slot now. Return: 0 or as a mark. */
ST_HIDDEN int st_marks_ready(void);

/* This process's slot, for waiting until the BPF program consumed it. */
ST_HIDDEN const struct steptime_slot *st_marks_slot(void);

/* A host mark, and a stream mark when @stream is a known stream. */
ST_HIDDEN int st_mark(__u64 index_id, unsigned int tag, void *stream);

/* What a stream pointer is: decides how a stream mark is submitted. */
enum st_stream_kind {
	ST_STREAM_UNKNOWN = 0,	/* not a stream we know: host mark only */
	ST_STREAM_NPUSIM,	/* an npusim HAL stream */
	ST_STREAM_CANN,		/* CANN runtime present: rtProfilerTraceEx */
};

/* Classify @stream (non-NULL); *id gets its id or STEPTIME_STREAM_NONE. */
ST_HIDDEN enum st_stream_kind st_stream_resolve(void *stream, __u32 *id);

/* Submit the place-holder mark task on @stream. Return: 0 or -errno. */
ST_HIDDEN int st_stream_submit(enum st_stream_kind kind, void *stream,
			       __u64 index_id, unsigned int tag);

#endif /* _STEPTIME_ST_INTERNAL_H */
