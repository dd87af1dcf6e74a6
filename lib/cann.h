/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CANN's runtime calls (and npusim's HAL's, which stand in for them), found
 * at run time wherever they were loaded (lib/cann.c): libsteptime has no
 * build or load dependency on CANN. One table, one lookup policy, for the
 * stream marks (lib/stream.c) and the ranges (lib/phase_write.c).
 */
#ifndef _STEPTIME_CANN_H
#define _STEPTIME_CANN_H

#include <stdbool.h>
#include <linux/types.h>
#include "base.h"

/*
 * npusim's HAL (sim/hal/): not part of the app library, found as the CANN
 * runtime is, in a program that has it (the npusim tests, benchmarks and
 * demo: libnpuhal.so, or libnpuhal.a with its npu_* names exported).
 */
struct st_npu_hal {
	int (*stream_is_valid)(const void *p);	/* set last: the rest is */
	int (*stream_id)(const void *stream);
	int (*stream_mark_step)(void *s, __u64 index_id, __u16 tag);
	void *(*stream_dev)(const void *s);
	void *(*event_create)(void *dev, __u32 flags);
	int (*event_record)(void *ev, void *s);
	int (*event_query)(void *ev);
	int (*event_timestamp)(const void *ev, __u64 *ticks);
	void (*event_destroy)(void *ev);
};

/* The calls found; NULL: missing. Final once @found is set. */
struct st_cann {
	int found;		/* rtProfilerTraceEx found (acquire) */
	int (*trace_ex)(__u64 index_id, __u64 model_id, __u16 tag_id,
			void *stream);
	int (*stream_id)(void *stream, int *id);
	int (*ev_create)(void **event, __u32 flag);
	int (*ev_record)(void *event, void *stream);
	int (*ev_query)(void *event, int *status);
	int (*ev_sync)(void *event);
	int (*ev_elapsed)(float *ms, void *start, void *end);
	int (*ev_ts)(void *event, __u64 *us);
	int (*ev_destroy)(void *event);
	bool mark_events;	/* what a stream mark's events need: found */
	bool range_events;	/* what a range's events need: found */
	struct st_npu_hal npu;
	bool npu_events;	/* every npu_event call found */
};

ST_HIDDEN extern struct st_cann st_cann;

/*
 * Look the calls up, unless rtProfilerTraceEx was found already (then an
 * acquire load) or nothing was loaded since the last try (a walk of the
 * loaded objects' count): a runtime loaded before or after libsteptime,
 * RTLD_LOCAL too, is found at the first lookup after its load. Never on
 * the mark path of a NULL stream, which only reads @st_cann.found.
 */
ST_HIDDEN void st_cann_lookup(void);

#endif /* _STEPTIME_CANN_H */
