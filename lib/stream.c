// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stream-ordered marks: a place-holder task (PROFILER_TRACE_EX) on the
 * stream, which the device reaches in stream order.
 *
 * npusim HAL streams get it through the HAL (sim/hal/). On a CANN host (or npusim's ACL stand-in) the runtime's rtProfilerTraceEx()
 * submits it. CANN's place-holder carries no wr_cqe there, so no report
 * and no device timestamp reaches the kernel: like CUDA tools with
 * cudaEvents, a timeline event (ACL_EVENT_TIME_LINE) is recorded on the
 * stream right after each place-holder, read back once it has completed
 * (aclrtQueryEventStatus, aclrtEventGetTimestamp) and handed back to the
 * caller (lib/step.c), which gives them to the BPF program as
 * STEPTIME_TAG_DEV_* marks: the step's device times. Every name
 * is looked up at run time, wherever the runtime was loaded (RTLD_LOCAL
 * too: lib/cann.c): libsteptime has no build or load dependency on
 * CANN. Where an event call is missing or fails, the step has no device
 * time (its flags say so), never a wrong one.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <steptime/steptime.h>
#include <steptime/util.h>
#include <ascend_trs.h>
#include "cann.h"
#include "st_internal.h"

#define ACL_EVENT_TIME_LINE			0x8u
#define ACL_EVENT_RECORDED_STATUS_COMPLETE	1
#define PENDING_MAX	ST_STREAM_PENDING /* steps awaiting their events */
#define COLLECT_WAIT_NS	(2ull * 1000 * 1000 * 1000)

#define NPU_EVENT_TIME_LINE			0x08u	/* npusim's HAL */

/* A stream-marked step whose events are not read back yet. */
struct pending {
	__u64 index_id;
	void *ev[2];		/* START, END events */
	enum st_stream_kind kind;
	__u32 stream;
	bool used;
	__u64 seq;		/* creation order: the oldest is evicted */
};

static struct {
	pthread_mutex_t lock;
	struct pending p[PENDING_MAX];
	__u64 seq;
} pend = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Whether @stream is an npusim HAL stream; its id in *@id if so. */
static bool npu_stream(void *stream, __u32 *id)
{
	int (*valid)(const void *) =
		__atomic_load_n(&st_cann.npu.stream_is_valid, __ATOMIC_ACQUIRE);
	int sid;

	if (!valid || !valid(stream))
		return false;
	sid = st_cann.npu.stream_id ? st_cann.npu.stream_id(stream) : -1;
	if (sid >= 0)
		*id = (__u32)sid;
	return true;
}

enum st_stream_kind st_stream_resolve(void *stream, __u32 *id)
{
	int sid;

	*id = STEPTIME_STREAM_NONE;
	/* NULL is never an npusim stream: the mark path of the CANN API. */
	if (stream && npu_stream(stream, id))
		return ST_STREAM_NPUSIM;
	if (stream) {
		/* The HAL or the runtime may have been loaded since. */
		st_cann_lookup();
		if (npu_stream(stream, id))
			return ST_STREAM_NPUSIM;
	}
	if (!__atomic_load_n(&st_cann.found, __ATOMIC_ACQUIRE))
		return ST_STREAM_UNKNOWN;
	if (st_cann.stream_id && !st_cann.stream_id(stream, &sid) && sid >= 0)
		*id = (__u32)sid;
	return ST_STREAM_CANN;
}

/* Whether @kind's runtime has timeline events. */
static bool has_events(enum st_stream_kind kind)
{
	if (kind == ST_STREAM_NPUSIM)
		return st_cann.npu_events;
	return kind == ST_STREAM_CANN && st_cann.mark_events;
}

static void event_destroy(enum st_stream_kind kind, void *ev)
{
	if (kind == ST_STREAM_NPUSIM)
		st_cann.npu.event_destroy(ev);
	else
		st_cann.ev_destroy(ev);
}

/* A timeline event recorded on @stream now, or NULL. */
static void *event_record(enum st_stream_kind kind, void *stream)
{
	void *ev = NULL;

	if (kind == ST_STREAM_NPUSIM) {
		ev = st_cann.npu.event_create(st_cann.npu.stream_dev(stream),
					   NPU_EVENT_TIME_LINE);
		if (ev && st_cann.npu.event_record(ev, stream)) {
			st_cann.npu.event_destroy(ev);
			ev = NULL;
		}
		return ev;
	}
	if (st_cann.ev_create(&ev, ACL_EVENT_TIME_LINE) || !ev)
		return NULL;
	if (st_cann.ev_record(ev, stream)) {
		st_cann.ev_destroy(ev);
		return NULL;
	}
	return ev;
}

/* 1: complete; 0: not yet; < 0: never will be (no time to read). */
static int event_state(enum st_stream_kind kind, void *ev)
{
	int status = 0, r;

	if (kind == ST_STREAM_NPUSIM) {
		r = st_cann.npu.event_query(ev);
		return r == 1 ? 1 : r == 0 ? 0 : -1;
	}
	if (st_cann.ev_query(ev, &status))
		return -1;
	return status == ACL_EVENT_RECORDED_STATUS_COMPLETE;
}

/* The event's device time, and the mark tag that carries its unit. */
static int event_time(enum st_stream_kind kind, void *ev, bool start,
		      __u64 *t, unsigned int *tag)
{
	if (kind == ST_STREAM_NPUSIM) {
		*tag = start ? STEPTIME_TAG_DEV_START_TICKS :
			       STEPTIME_TAG_DEV_END_TICKS;
		return st_cann.npu.event_timestamp(ev, t);
	}
	*tag = start ? STEPTIME_TAG_DEV_START : STEPTIME_TAG_DEV_END;
	return st_cann.ev_ts(ev, t) ? -EIO : 0;
}

static void pending_drop(struct pending *p)
{
	int i;

	for (i = 0; i < 2; i++)
		if (p->ev[i])
			event_destroy(p->kind, p->ev[i]);
	memset(p, 0, sizeof(*p));
}

static void collect_locked(bool wait, struct st_dev_times *out);

/*
 * Under pend.lock, the table full: free the oldest step whose END never
 * came (its START event only; counted), else make room by reading the
 * finished ones. NULL: every slot holds a step whose END is in flight.
 */
static struct pending *pending_evict(struct st_dev_times *out)
{
	struct pending *old = NULL;
	int i;

	for (i = 0; i < PENDING_MAX; i++)
		if (!pend.p[i].ev[1] && (!old || pend.p[i].seq < old->seq))
			old = &pend.p[i];
	if (old) {
		pending_drop(old);
		ST_COUNT(stream_steps_stale);
		return old;
	}
	collect_locked(false, out);
	for (i = 0; i < PENDING_MAX; i++)
		if (!pend.p[i].used)
			return &pend.p[i];
	return NULL;
}

/*
 * Under pend.lock: the entry of @index_id, or (@create) a new one. A full
 * table never stops device time: its stalest entry makes room.
 */
static struct pending *pending_get(__u64 index_id, bool create,
				   struct st_dev_times *out)
{
	struct pending *free_p = NULL;
	int i;

	for (i = 0; i < PENDING_MAX; i++) {
		if (pend.p[i].used && pend.p[i].index_id == index_id)
			return &pend.p[i];
		if (!pend.p[i].used && !free_p)
			free_p = &pend.p[i];
	}
	if (!create)
		return NULL;
	if (!free_p)
		free_p = pending_evict(out);
	if (!free_p) {
		ST_COUNT(stream_steps_untimed);
		return NULL;
	}
	free_p->used = true;
	free_p->index_id = index_id;
	free_p->seq = ++pend.seq;
	return free_p;
}

/* Record the START or END event of @index_id after its place-holder. */
static void event_mark(enum st_stream_kind kind, void *stream,
		       __u64 index_id, unsigned int tag,
		       struct st_dev_times *out)
{
	__u32 sid = STEPTIME_STREAM_NONE;
	struct pending *p;
	int end = tag != STEPTIME_TAG_START;

	st_stream_resolve(stream, &sid);
	pthread_mutex_lock(&pend.lock);
	p = pending_get(index_id, !end, out);
	if (p && !p->ev[0]) {
		/* New: START's entry. */
		p->kind = kind;
		p->stream = sid;
	} else if (p && (p->ev[end] || p->kind != kind || p->stream != sid)) {
		/* A second START or END, or another stream: unknown times. */
		pending_drop(p);
		p = NULL;
	}
	if (p) {
		p->ev[end] = event_record(kind, stream);
		if (!p->ev[end])
			pending_drop(p);
	}
	pthread_mutex_unlock(&pend.lock);
}

static void dev_time(struct st_dev_times *out, const struct pending *p,
		     unsigned int tag, __u64 t)
{
	struct st_ring_ent *e = &out->e[out->n++];

	e->index_id = p->index_id;
	e->time = t;
	e->tag = tag;
	e->stream = p->stream;
}

/*
 * Under pend.lock: the times of the steps whose events are done, appended
 * to @out (a full @out leaves the rest pending).
 */
static void collect_locked(bool wait, struct st_dev_times *out)
{
	struct timespec ms = { 0, 1000000 };
	__u64 t[2], deadline = st_mono_ns() + COLLECT_WAIT_NS;
	unsigned int tag[2];
	int i, s0, s1;
	bool left;

	do {
		left = false;
		for (i = 0; i < PENDING_MAX; i++) {
			struct pending *p = &pend.p[i];

			if (!p->used || !p->ev[1])
				continue;
			if (out->n + 2 > sizeof(out->e) / sizeof(out->e[0]))
				return;
			s0 = event_state(p->kind, p->ev[0]);
			s1 = event_state(p->kind, p->ev[1]);
			if (s0 >= 0 && s1 >= 0 && !(s0 && s1)) {
				left = true;
				continue;
			}
			/* Both read, or neither: the step's times come whole. */
			if (s0 > 0 && s1 > 0 &&
			    !event_time(p->kind, p->ev[0], true, &t[0], &tag[0]) &&
			    !event_time(p->kind, p->ev[1], false, &t[1], &tag[1])) {
				dev_time(out, p, tag[0], t[0]);
				dev_time(out, p, tag[1], t[1]);
			}
			pending_drop(p);
		}
		if (!left || !wait || st_mono_ns() > deadline)
			break;
		nanosleep(&ms, NULL);
	} while (1);
}

void st_stream_collect(bool wait, struct st_dev_times *out)
{
	out->n = 0;
	pthread_mutex_lock(&pend.lock);
	collect_locked(wait, out);
	pthread_mutex_unlock(&pend.lock);
}

int st_stream_submit(enum st_stream_kind kind, void *stream, __u64 index_id,
		     unsigned int tag, bool task, struct st_dev_times *out)
{
	int err;

	out->n = 0;
	switch (kind) {
	case ST_STREAM_NPUSIM:
		/* The same place-holder task rtProfilerTraceEx() submits. */
		err = task && st_cann.npu.stream_mark_step ?
		      st_cann.npu.stream_mark_step(stream, index_id, (__u16)tag) :
		      0;
		if (err < 0)
			return err;
		break;
	case ST_STREAM_CANN:
		/* NULL: the runtime's default stream, as CANN resolves it. */
		err = task ? st_cann.trace_ex(index_id, TRS_MODEL_ID_NONE,
					   (__u16)tag, stream) : 0;
		if (err)
			return -EIO;
		break;
	default:
		return 0;
	}
	if (!has_events(kind))
		return 0;
	event_mark(kind, stream, index_id, tag, out);
	/* Steps whose END event is done: their times go back too. */
	if (tag != STEPTIME_TAG_START) {
		pthread_mutex_lock(&pend.lock);
		collect_locked(false, out);
		pthread_mutex_unlock(&pend.lock);
	}
	return 1;
}
