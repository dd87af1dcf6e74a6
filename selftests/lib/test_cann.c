// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stream marks on a CANN host: this program plays the CANN runtime by
 * exporting rtProfilerTraceEx() and rtGetStreamId() (linked -rdynamic), the
 * symbols libsteptime looks up with dlsym(RTLD_DEFAULT). Root only (maps).
 * As CANN's runtime does, the fake takes a NULL stream for the current
 * context's default stream (ApiImpl::ProfilerTraceEx, ApiImpl::GetStreamId)
 * and fails without a context (rt.no_ctx).
 */
#include <stdint.h>
#include <acl/acl_prof.h>
#include "st_internal.h"
#include "st_test.h"
#include "kselftest_harness.h"

#define FAKE_STREAM_ID	23
#define DEFAULT_STREAM_ID	5
#define RT_ERROR_CONTEXT_NULL	107002

static struct {
	int calls, fail, no_ctx;
	uint64_t index_id, model_id;
	uint16_t tag;
	void *stream;
} rt;

int rtProfilerTraceEx(uint64_t index_id, uint64_t model_id, uint16_t tag,
		      void *stream);
int rtGetStreamId(void *stream, int32_t *id);

int rtProfilerTraceEx(uint64_t index_id, uint64_t model_id, uint16_t tag,
		      void *stream)
{
	if (!stream && rt.no_ctx)
		return RT_ERROR_CONTEXT_NULL;
	rt.calls++;
	rt.index_id = index_id;
	rt.model_id = model_id;
	rt.tag = tag;
	rt.stream = stream;
	return rt.fail;
}

int rtGetStreamId(void *stream, int32_t *id)
{
	if (!stream && rt.no_ctx)
		return RT_ERROR_CONTEXT_NULL;
	*id = stream ? FAKE_STREAM_ID : DEFAULT_STREAM_ID;
	return 0;
}

/*
 * The runtime's timeline events (aclrtCreateEventWithFlag ...), off until
 * a test sets ev.on: an event completes at once, its time is its number.
 */
static struct {
	int on, live;
	unsigned long next;
} ev;

int aclrtCreateEventWithFlag(void **event, uint32_t flag);
int aclrtRecordEvent(void *event, void *stream);
int aclrtQueryEventStatus(void *event, int *status);
int aclrtEventGetTimestamp(void *event, uint64_t *us);
int aclrtDestroyEvent(void *event);

int aclrtCreateEventWithFlag(void **event, uint32_t flag)
{
	if (!ev.on || flag != 0x8)
		return 107000;
	ev.live++;
	*event = (void *)++ev.next;
	return 0;
}

int aclrtRecordEvent(void *event, void *stream)
{
	return 0;
}

int aclrtQueryEventStatus(void *event, int *status)
{
	*status = 1;	/* ACL_EVENT_RECORDED_STATUS_COMPLETE */
	return 0;
}

int aclrtEventGetTimestamp(void *event, uint64_t *us)
{
	*us = 1000000 + (uintptr_t)event;
	return 0;
}

int aclrtDestroyEvent(void *event)
{
	ev.live--;
	return 0;
}

FIXTURE(cann) {
	struct st_pins p;
	char skip[128];
};

FIXTURE_SETUP(cann)
{
	int err = st_pins_with_marks(&self->p, self->skip, sizeof(self->skip));

	if (err == 1)
		return;
	ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(cann)
{
	st_pins_fini(&self->p);
}

TEST_F(cann, stream_mark_through_runtime)
{
	struct steptime_mark_opts o = { .sz = sizeof(o) };
	const struct steptime_ring *s = st_marks_ring();
	__u64 h = s->head;
	int stream_obj;

	NEED_PINS();
	o.stream = &stream_obj;
	ASSERT_EQ(0, steptime__mark(77, STEPTIME_TAG_START, &o));
	EXPECT_EQ(1, rt.calls);
	EXPECT_EQ(77, rt.index_id);
	EXPECT_EQ(0xffffffffull, rt.model_id);
	EXPECT_EQ(0, rt.tag);
	EXPECT_EQ(&stream_obj, rt.stream);
	EXPECT_EQ(FAKE_STREAM_ID, s->ring[h % STEPTIME_MARK_RING].stream);
	EXPECT_EQ(77, s->ring[h % STEPTIME_MARK_RING].index_id);
	/* No stream: host mark only, the runtime is not called. */
	ASSERT_EQ(0, steptime__mark(77, STEPTIME_TAG_END, NULL));
	EXPECT_EQ(1, rt.calls);
	EXPECT_EQ(STEPTIME_STREAM_NONE, s->ring[(h + 1) % STEPTIME_MARK_RING].stream);
	/* A failing runtime: the host mark stands, the error is returned. */
	rt.fail = 507000;
	EXPECT_EQ(-EIO, steptime__mark(78, 60000, &o));
	EXPECT_EQ(60000, rt.tag);
	EXPECT_EQ(h + 3, s->head);
	EXPECT_EQ(78, s->ring[(h + 2) % STEPTIME_MARK_RING].index_id);
}

/* The ACL API in a session: the mark reaches the runtime with its tag. */
TEST_F(cann, acl_mark_through_runtime)
{
	char dir[] = "/tmp/steptime-cann-XXXXXX", cmd[64];
	aclprofStepInfo *info;
	aclprofConfig *cfg;
	int stream_obj;

	NEED_PINS();
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(ACL_SUCCESS, aclprofInit(dir, strlen(dir)));
	cfg = aclprofCreateConfig(NULL, 0, ACL_AICORE_NONE, NULL,
				  ACL_PROF_MSPROFTX);
	ASSERT_NE(NULL, cfg);
	ASSERT_EQ(ACL_SUCCESS, aclprofStart(cfg));
	info = aclprofCreateStepInfo();
	ASSERT_NE(NULL, info);
	EXPECT_EQ(ACL_SUCCESS,
		  aclprofGetStepTimestamp(info, ACL_STEP_START, &stream_obj));
	EXPECT_EQ(1, rt.calls);
	EXPECT_EQ(1, rt.index_id);
	rt.fail = 1;
	EXPECT_EQ(ACL_ERROR_GE_FAILURE,
		  aclprofGetStepTimestamp(info, ACL_STEP_END, &stream_obj));
	EXPECT_EQ(2, rt.calls);
	aclprofDestroyStepInfo(info);
	setenv("STEPTIME_QUIET", "1", 1);
	EXPECT_EQ(ACL_SUCCESS, aclprofStop(cfg));
	EXPECT_EQ(ACL_SUCCESS, aclprofDestroyConfig(cfg));
	EXPECT_EQ(ACL_SUCCESS, aclprofFinalize());
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	EXPECT_EQ(0, system(cmd));
}

/*
 * aclprofGetStepTimestamp with a NULL stream: CANN marks the default
 * stream, so the mark goes to the runtime with NULL and carries the
 * default stream's id; without a context CANN's runtime fails it, and so
 * does the call (ACL_ERROR_GE_FAILURE), the host mark standing.
 */
TEST_F(cann, acl_null_stream_is_the_default_stream)
{
	char dir[] = "/tmp/steptime-cann-XXXXXX", cmd[64];
	const struct steptime_ring *s = st_marks_ring();
	aclprofStepInfo *info;
	aclprofConfig *cfg;
	int stream_obj;
	__u64 h;

	NEED_PINS();
	setenv("STEPTIME_QUIET", "1", 1);
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(ACL_SUCCESS, aclprofInit(dir, strlen(dir)));
	cfg = aclprofCreateConfig(NULL, 0, ACL_AICORE_NONE, NULL,
				  ACL_PROF_MSPROFTX);
	ASSERT_NE(NULL, cfg);
	ASSERT_EQ(ACL_SUCCESS, aclprofStart(cfg));
	info = aclprofCreateStepInfo();
	ASSERT_NE(NULL, info);
	h = s->head;
	rt.stream = &stream_obj;
	EXPECT_EQ(ACL_SUCCESS,
		  aclprofGetStepTimestamp(info, ACL_STEP_START, NULL));
	EXPECT_EQ(1, rt.calls);
	EXPECT_EQ(NULL, rt.stream);
	EXPECT_EQ(0, rt.tag);
	EXPECT_EQ(h + 1, s->head);
	EXPECT_EQ(DEFAULT_STREAM_ID, s->ring[h % STEPTIME_MARK_RING].stream);
	/* No current context (no aclrtSetDevice): CANN fails the mark. */
	rt.no_ctx = 1;
	EXPECT_EQ(ACL_ERROR_GE_FAILURE,
		  aclprofGetStepTimestamp(info, ACL_STEP_END, NULL));
	EXPECT_EQ(1, rt.calls);
	EXPECT_EQ(h + 2, s->head);
	EXPECT_EQ(STEPTIME_STREAM_NONE,
		  s->ring[(h + 1) % STEPTIME_MARK_RING].stream);
	rt.no_ctx = 0;
	aclprofDestroyStepInfo(info);
	EXPECT_EQ(ACL_SUCCESS, aclprofStop(cfg));
	EXPECT_EQ(ACL_SUCCESS, aclprofDestroyConfig(cfg));
	EXPECT_EQ(ACL_SUCCESS, aclprofFinalize());
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	EXPECT_EQ(0, system(cmd));
}

/*
 * Under LD_PRELOAD CANN's own aclprofGetStepTimestamp has put the
 * place-holder on the stream (NULL: the default one): steptime's mark
 * names the stream and adds no second task.
 */
TEST_F(cann, forwarded_mark_names_the_stream_without_a_task)
{
	const struct steptime_ring *s = st_marks_ring();
	int stream_obj;
	__u64 h = s->head;

	NEED_PINS();
	ASSERT_EQ(0, st_mark_stream(91, STEPTIME_TAG_START, NULL,
				    ST_MARK_NULL_DEFAULT | ST_MARK_NO_TASK));
	ASSERT_EQ(0, st_mark_stream(91, STEPTIME_TAG_END, &stream_obj,
				    ST_MARK_NULL_DEFAULT | ST_MARK_NO_TASK));
	EXPECT_EQ(0, rt.calls);
	EXPECT_EQ(h + 2, s->head);
	EXPECT_EQ(DEFAULT_STREAM_ID, s->ring[h % STEPTIME_MARK_RING].stream);
	EXPECT_EQ(FAKE_STREAM_ID, s->ring[(h + 1) % STEPTIME_MARK_RING].stream);
	/* Without ST_MARK_NULL_DEFAULT (native API, mstx): host only. */
	ASSERT_EQ(0, st_mark_stream(92, STEPTIME_TAG_START, NULL, 0));
	EXPECT_EQ(0, rt.calls);
	EXPECT_EQ(STEPTIME_STREAM_NONE,
		  s->ring[(h + 2) % STEPTIME_MARK_RING].stream);
}

/*
 * Stream steps whose END never comes: the oldest is freed (slot and
 * event) when the table is full, counted, and a normal step still gets
 * its device times.
 */
TEST_F(cann, stale_stream_steps_are_freed)
{
	struct steptime_mark_opts o = { .sz = sizeof(o) };
	const struct steptime_ring *s = st_marks_ring();
	struct steptime_lib_counters c0, c1;
	const struct steptime_mark *m;
	int stream_obj, i;
	__u64 h;

	NEED_PINS();
	o.stream = &stream_obj;
	ev.on = 1;
	ASSERT_EQ(0, steptime__lib_counters(&c0, sizeof(c0)));
	for (i = 0; i < 100; i++)
		ASSERT_EQ(0, steptime__mark(1000 + i, STEPTIME_TAG_START, &o));
	EXPECT_EQ(64, ev.live);
	ASSERT_EQ(0, steptime__mark(2000, STEPTIME_TAG_START, &o));
	h = s->head;
	ASSERT_EQ(0, steptime__mark(2000, STEPTIME_TAG_END, &o));
	/* END's host mark, then the step's two device times. */
	ASSERT_EQ(h + 3, s->head);
	m = &s->ring[(h + 1) % STEPTIME_MARK_RING];
	EXPECT_EQ(2000, m->index_id);
	EXPECT_EQ(STEPTIME_TAG_DEV_START, m->tag);
	EXPECT_EQ(FAKE_STREAM_ID, m->stream);
	m = &s->ring[(h + 2) % STEPTIME_MARK_RING];
	EXPECT_EQ(2000, m->index_id);
	EXPECT_EQ(STEPTIME_TAG_DEV_END, m->tag);
	EXPECT_EQ(1000000 + ev.next, m->time_ns);
	ASSERT_EQ(0, steptime__lib_counters(&c1, sizeof(c1)));
	EXPECT_EQ(c0.stream_steps_stale + 37, c1.stream_steps_stale);
	EXPECT_EQ(c0.stream_steps_untimed, c1.stream_steps_untimed);
	EXPECT_EQ(63, ev.live);		/* 63 STARTs still waiting */
}

TEST_HARNESS_MAIN
