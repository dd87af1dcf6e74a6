// SPDX-License-Identifier: GPL-2.0
/*
 * libascendcl.so on npusim: CANN's ACL runtime calls with CANN's return
 * codes, and timeline events whose timestamps are the device counter.
 *
 * Exactness is checked against npusim's documented execution model, not a
 * copy of its formulas: tasks of a stream run one after another, each for
 * exactly its simulated duration, and a place-holder takes no time. So an
 * event recorded behind a kernel of D ns that was queued behind the
 * previous event is stamped exactly D ns (D * f / 1e9 ticks) after it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include "acl/acl.h"
#include "acl/acl_npusim.h"
#include "kselftest_harness.h"
#include "ksft_filter.h"

#define MS	1000000u	/* ns */

FIXTURE(acl) {
	aclrtStream stream;
};

FIXTURE_SETUP(acl)
{
	aclError ret = aclInit(NULL);

	ASSERT_TRUE(ret == ACL_SUCCESS || ret == ACL_ERROR_REPEAT_INITIALIZE);
	ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
	ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&self->stream));
}

FIXTURE_TEARDOWN(acl)
{
	EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(self->stream));
	EXPECT_EQ(ACL_SUCCESS, aclrtResetDeviceForce(0));
	EXPECT_EQ(ACL_SUCCESS, aclFinalize());
}

TEST_F(acl, init_and_devices)
{
	int32_t dev = -1;
	uint32_t n = 0;

	EXPECT_EQ(ACL_ERROR_REPEAT_INITIALIZE, aclInit(NULL));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclInit("/nonexistent/acl.json"));
	EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&dev));
	EXPECT_EQ(0, dev);
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetDevice(NULL));
	EXPECT_EQ(ACL_SUCCESS, aclrtGetDeviceCount(&n));
	EXPECT_LE(2, n);	/* npusim's default */
	EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtSetDevice(n));
	EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtSetDevice(-1));
	EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtResetDevice(n - 1));
	/* A second device: ids collide with device 0's, streams do not. */
	ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(1));
	EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&dev));
	EXPECT_EQ(1, dev);
	EXPECT_EQ(ACL_SUCCESS, aclrtResetDevice(1));
	EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtGetDevice(&dev));
	EXPECT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
}

static void *other_thread(void *arg)
{
	int32_t dev = 5;

	*(aclError *)arg = aclrtGetDevice(&dev);
	return NULL;
}

/* The current device is per thread, as CANN's context is. */
TEST_F(acl, device_per_thread)
{
	aclError ret = ACL_SUCCESS;
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, other_thread, &ret));
	pthread_join(t, NULL);
	EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, ret);
}

TEST_F(acl, streams)
{
	aclrtStream a = NULL, b = NULL;
	aclrtEventRecordedStatus st;
	int32_t ida = -1, idb = -1, id0 = -1;
	char junk[64];

	ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a));
	ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&b));
	EXPECT_EQ(ACL_SUCCESS, aclrtStreamGetId(a, &ida));
	EXPECT_EQ(ACL_SUCCESS, rtGetStreamId(b, &idb));
	EXPECT_EQ(ACL_SUCCESS, aclrtStreamGetId(NULL, &id0));
	EXPECT_NE(ida, idb);
	EXPECT_NE(ida, id0);
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCreateStream(NULL));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDestroyStream(NULL));
	/* Foreign pointers are rejected, never dereferenced. */
	EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDestroyStream(junk));
	EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSynchronizeStream(junk));
	EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtStreamGetId((void *)8, &ida));
	EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
		  rtProfilerTraceEx(1, 0xffffffffull, 0, junk));

	EXPECT_EQ(ACL_SUCCESS, aclnpusimLaunchKernel(a, ACL_NPUSIM_KERNEL_AICORE,
						     100, 20000));
	EXPECT_EQ(ACL_SUCCESS, rtProfilerTraceEx(7, 0xffffffffull, 0, a));
	EXPECT_EQ(ACL_SUCCESS, aclnpusimLaunchKernel(a, ACL_NPUSIM_KERNEL_AICPU,
						     1, 300 * MS));
	EXPECT_EQ(ACL_SUCCESS, aclrtStreamQuery(a, &st));
	EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_NOT_READY, st);
	EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
		  aclrtSynchronizeStreamWithTimeout(a, 1));
	EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a, 10000));
	EXPECT_EQ(ACL_SUCCESS, aclrtStreamQuery(a, &st));
	EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, st);
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclnpusimLaunchKernel(a, 99, 1, 0));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclnpusimLaunchKernel(a, ACL_NPUSIM_KERNEL_AICORE, 0, 0));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclnpusimLaunchKernel(a, ACL_NPUSIM_KERNEL_AICORE, 1025, 0));
	EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(a));
	EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDestroyStream(a));
	EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(b));
	/* The default stream synchronizes like any other. */
	EXPECT_EQ(ACL_SUCCESS, aclnpusimLaunchKernel(NULL, ACL_NPUSIM_KERNEL_SDMA,
						     3, 0));
	EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(NULL));
}

/* Kernel, record E1, kernel of D2, record E2: E2 - E1 is D2 exactly. */
TEST_F(acl, timeline_event_is_exact)
{
	const uint32_t d2 = 30 * MS;
	aclrtEvent e1, e2, plain;
	aclrtEventRecordedStatus st;
	uint64_t t1, t2, us1, us2, hz, want;
	aclrtEventStatus qs;
	float ms = 0;

	ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&e1, ACL_EVENT_TIME_LINE));
	ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&e2, ACL_EVENT_TIME_LINE));
	ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&plain));

	/* Never recorded. */
	EXPECT_EQ(ACL_SUCCESS, aclrtQueryEventStatus(e1, &st));
	EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_NOT_READY, st);
	EXPECT_EQ(ACL_SUCCESS, aclrtQueryEvent(e1, &qs));
	EXPECT_EQ(ACL_EVENT_STATUS_COMPLETE, qs);
	EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtEventGetTimestamp(e1, &t1));
	EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeEvent(e1));

	/*
	 * The first kernel keeps the stream busy while the rest is queued
	 * and the "not yet" checks run (long: TCG guests are slow).
	 */
	ASSERT_EQ(ACL_SUCCESS, aclnpusimLaunchKernel(self->stream,
				ACL_NPUSIM_KERNEL_AICORE, 1, 300 * MS));
	ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(e1, self->stream));
	ASSERT_EQ(ACL_SUCCESS, aclnpusimLaunchKernel(self->stream,
				ACL_NPUSIM_KERNEL_AICORE, 1, d2));
	ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(e2, self->stream));
	ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(plain, self->stream));

	EXPECT_EQ(ACL_SUCCESS, aclrtQueryEventStatus(e2, &st));
	EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_NOT_READY, st);
	EXPECT_EQ(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
		  aclrtEventGetTimestamp(e2, &t2));
	EXPECT_EQ(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
		  aclrtSynchronizeEventWithTimeout(e2, 1));
	ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeEvent(e2));
	EXPECT_EQ(ACL_SUCCESS, aclrtQueryEventStatus(e2, &st));
	EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, st);
	EXPECT_EQ(ACL_SUCCESS, aclrtQueryEventStatus(e1, &st));
	EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, st);

	ASSERT_EQ(ACL_SUCCESS, aclnpusimEventGetCounter(e1, &t1, &hz));
	ASSERT_EQ(ACL_SUCCESS, aclnpusimEventGetCounter(e2, &t2, NULL));
	want = (uint64_t)d2 * hz / 1000000000u;
	EXPECT_EQ(want, t2 - t1) TH_LOG("hz %llu", (unsigned long long)hz);
	ASSERT_EQ(ACL_SUCCESS, aclrtEventGetTimestamp(e1, &us1));
	ASSERT_EQ(ACL_SUCCESS, aclrtEventGetTimestamp(e2, &us2));
	EXPECT_EQ((uint64_t)((unsigned __int128)t1 * 1000000 / hz), us1);
	EXPECT_EQ(d2 / 1000, us2 - us1);
	ASSERT_EQ(ACL_SUCCESS, aclrtEventElapsedTime(&ms, e1, e2));
	EXPECT_TRUE(ms > 29.999f && ms < 30.001f) TH_LOG("ms %f", ms);
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtEventElapsedTime(NULL, e1, e2));

	/* CANN's default event is a timeline one too. */
	ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeEvent(plain));
	EXPECT_EQ(ACL_SUCCESS, aclrtEventGetTimestamp(plain, &t1));
	EXPECT_EQ(us2, t1);

	/*
	 * Re-recording forgets the old timestamp until the new one lands,
	 * behind a kernel that started after E2 (the stream was idle).
	 */
	ASSERT_EQ(ACL_SUCCESS, aclnpusimLaunchKernel(self->stream,
				ACL_NPUSIM_KERNEL_AICORE, 1, 300 * MS));
	ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(e1, self->stream));
	EXPECT_EQ(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
		  aclrtEventGetTimestamp(e1, &t1));
	ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(self->stream));
	EXPECT_EQ(ACL_SUCCESS, aclrtQueryEventStatus(e1, &st));
	EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, st);
	EXPECT_EQ(ACL_SUCCESS, aclnpusimEventGetCounter(e1, &t1, NULL));
	EXPECT_LE(t2 + 300ull * MS * hz / 1000000000u, t1);

	EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(e1));
	EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDestroyEvent(e1));
	EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRecordEvent(e1, NULL));
	EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(e2));
	EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(plain));
}

/* Without TIME_LINE a record completes (SQ head) but has no timestamp. */
TEST_F(acl, sync_event_without_timestamp)
{
	aclrtEventRecordedStatus st;
	aclrtEvent ev;
	uint64_t t;

	ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&ev, ACL_EVENT_SYNC));
	ASSERT_EQ(ACL_SUCCESS, aclnpusimLaunchKernel(self->stream,
				ACL_NPUSIM_KERNEL_AICORE, 10, 1000));
	ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(ev, self->stream));
	ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeEvent(ev));
	EXPECT_EQ(ACL_SUCCESS, aclrtQueryEventStatus(ev, &st));
	EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, st);
	EXPECT_EQ(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
		  aclrtEventGetTimestamp(ev, &t));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCreateEventWithFlag(&ev, 0));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCreateEventWithFlag(NULL, 8));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclrtCreateEventWithFlag(&ev, 0x10000));
	EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(ev));
}

/* An event of one device cannot be recorded on another's stream. */
TEST_F(acl, event_device_mismatch)
{
	aclrtStream s1;
	aclrtEvent ev;

	ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&ev, ACL_EVENT_TIME_LINE));
	ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(1));
	ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s1));
	EXPECT_EQ(ACL_ERROR_RT_STREAM_CONTEXT, aclrtRecordEvent(ev, s1));
	EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s1));
	EXPECT_EQ(ACL_SUCCESS, aclrtResetDevice(1));
	ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
	EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(ev));
}

TEST_F(acl, memory)
{
	char src[100], dst[100];
	void *p = NULL;

	memset(src, 'x', sizeof(src));
	ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST));
	EXPECT_EQ(0, (uintptr_t)p % 32);
	EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(p, 100, src, 100,
					   ACL_MEMCPY_HOST_TO_DEVICE));
	EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(dst, 100, p, 100,
					   ACL_MEMCPY_DEVICE_TO_HOST));
	EXPECT_EQ(0, memcmp(src, dst, 100));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpy(dst, 99, p, 100,
						       ACL_MEMCPY_DEVICE_TO_HOST));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpy(dst, 100, NULL, 1,
						       ACL_MEMCPY_DEVICE_TO_HOST));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpy(dst, 100, p, 1,
						       (aclrtMemcpyKind)77));
	EXPECT_EQ(ACL_SUCCESS, aclrtMemset(p, 100, 0, 100));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemset(p, 10, 0, 100));
	EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtFree(NULL));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclrtMalloc(NULL, 1, ACL_MEM_MALLOC_HUGE_FIRST));
	EXPECT_EQ(ACL_ERROR_BAD_ALLOC,
		  aclrtMalloc(&p, SIZE_MAX - 8, ACL_MEM_MALLOC_HUGE_FIRST));
	ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&p, 1));
	EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(p));
}

TEST_F(acl, prof_set_config)
{
	EXPECT_EQ(ACL_SUCCESS,
		  aclprofSetConfig(ACL_PROF_SYS_HARDWARE_MEM_FREQ, "15", 2));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofSetConfig(ACL_PROF_ARGS_MAX, "15", 2));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofSetConfig((aclprofConfigType)2, "15", 2));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofSetConfig(ACL_PROF_SYS_HARDWARE_MEM_FREQ, NULL, 2));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofSetConfig(ACL_PROF_SYS_HARDWARE_MEM_FREQ, "15", 0));
}

TEST_HARNESS_MAIN
