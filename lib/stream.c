// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stream-ordered marks: a place-holder task (PROFILER_TRACE_EX) on the
 * stream, which the device time-stamps when the stream reaches it.
 *
 * npusim HAL streams (include/npusim/hal.h) get it through the HAL. On a
 * CANN host the runtime's rtProfilerTraceEx() submits the same task; it is
 * looked up at run time: libsteptime has no build or load dependency on
 * CANN.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <steptime/steptime.h>
#include <ascend_trs.h>
#include <npusim/hal.h>
#include "forward.h"
#include "st_internal.h"

/*
 * Bridge until stream marks resolve CANN's runtime names at run time
 * (contract C5): the HAL is not part of the app library. Its calls are
 * weak references, bound in a program that links libnpuhal.a, else looked
 * up in the global scope (libnpuhal.so loaded with RTLD_GLOBAL, as the
 * Python binding does); the app library itself links libc alone.
 */
#pragma weak npu_stream_is_valid
#pragma weak npu_stream_id
#pragma weak npu_stream_mark_step

static struct st_next hal_is_valid = { "npu_stream_is_valid", NULL, 0 };
static struct st_next hal_id = { "npu_stream_id", NULL, 0 };
static struct st_next hal_mark = { "npu_stream_mark_step", NULL, 0 };

static struct {
	int (*is_valid)(const void *p);
	int (*id)(const void *stream);
	int (*mark)(struct npu_stream *s, __u64 index_id, __u16 tag);
} hal;

static bool hal_bound(void)
{
	if (hal.mark)
		return true;
	if (npu_stream_is_valid && npu_stream_id && npu_stream_mark_step) {
		hal.is_valid = npu_stream_is_valid;
		hal.id = npu_stream_id;
	} else {
		hal.is_valid = st_global_get(&hal_is_valid);
		hal.id = st_global_get(&hal_id);
	}
	if (!hal.is_valid || !hal.id)
		return false;
	__atomic_store_n(&hal.mark, npu_stream_mark_step ? npu_stream_mark_step :
			 (typeof(hal.mark))st_global_get(&hal_mark),
			 __ATOMIC_RELEASE);
	return hal.mark != NULL;
}

typedef int (*rt_trace_ex_fn)(__u64 index_id, __u64 model_id, __u16 tag_id,
			      void *stream);
typedef int (*rt_stream_id_fn)(void *stream, int *id);

static struct {
	pthread_once_t once;
	rt_trace_ex_fn trace_ex;
	rt_stream_id_fn stream_id;
} cann = { .once = PTHREAD_ONCE_INIT };

static void cann_lookup(void)
{
	cann.trace_ex = (rt_trace_ex_fn)dlsym(RTLD_DEFAULT, "rtProfilerTraceEx");
	cann.stream_id = (rt_stream_id_fn)dlsym(RTLD_DEFAULT, "rtGetStreamId");
}

enum st_stream_kind st_stream_resolve(void *stream, __u32 *id)
{
	int sid;

	*id = STEPTIME_STREAM_NONE;
	if (hal_bound() && hal.is_valid(stream)) {
		sid = hal.id(stream);
		if (sid >= 0)
			*id = (__u32)sid;
		return ST_STREAM_NPUSIM;
	}
	pthread_once(&cann.once, cann_lookup);
	if (!cann.trace_ex)
		return ST_STREAM_UNKNOWN;
	if (cann.stream_id && !cann.stream_id(stream, &sid) && sid >= 0)
		*id = (__u32)sid;
	return ST_STREAM_CANN;
}

int st_stream_submit(enum st_stream_kind kind, void *stream, __u64 index_id,
		     unsigned int tag)
{
	int err;

	switch (kind) {
	case ST_STREAM_NPUSIM:
		/* The same place-holder task rtProfilerTraceEx() submits. */
		err = hal.mark(stream, index_id, (__u16)tag);
		return err < 0 ? err : 0;
	case ST_STREAM_CANN:
		err = cann.trace_ex(index_id, TRS_MODEL_ID_NONE, (__u16)tag,
				    stream);
		return err ? -EIO : 0;
	default:
		return 0;
	}
}
