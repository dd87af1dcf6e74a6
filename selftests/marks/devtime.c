// SPDX-License-Identifier: GPL-2.0
/*
 * Device step time where the step marks make no report (issue 8 §4): the
 * step API on a CANN runtime (npusim's ACL stand-in, libascendcl.so)
 * records a timeline event after each place-holder and reads it back with
 * aclrtEventGetTimestamp(). The step's device time must be exactly the
 * difference of those two readings as npusim's truth gives them (the
 * counter ticks of the two event tasks, converted to microseconds as CANN
 * does), and consistent with the host time the test itself measured.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <steptime/loader.h>
#include <steptime/steptime.h>
#include <npusim/hal.h>
#include "acl/acl.h"
#include "acl/acl_npusim.h"

#include "kselftest_harness.h"
#include "ksft_filter.h"

#define PIN_DIR		"/sys/fs/bpf/steptime_devtime"
#define TASK_NS		50000
#define MAX_TRUTH	256

int32_t rtGetStreamId(void *stm, int32_t *streamId);

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* What aclrtEventGetTimestamp() reports for a counter value. */
static __u64 ticks_to_us(__u64 ticks, __u64 hz)
{
	return (__u64)((unsigned __int128)ticks * 1000000u / hz);
}

static __u64 ticks_to_ns(__u64 ticks, __u64 hz)
{
	return ticks / hz * 1000000000ull + ticks % hz * 1000000000ull / hz;
}

/*
 * The event tasks of stream @sid, in order: the step API records each
 * right after its place-holder mark, so the stream's place-holders come in
 * (mark, event) pairs.
 */
static int event_truth(struct npu_dev *dev, int sid,
		       struct npusim_task_truth *ev, int max)
{
	static struct npusim_task_truth t[MAX_TRUTH];
	int sq, n, i, k = 0;
	bool after_mark;

	for (sq = 0; sq < 64; sq++) {
		/* The ACL runtime's SQ, not this fd's: by (device, TS, id). */
		struct npusim_truth_query q = {
			.sq_id = sq,
			.count = MAX_TRUTH,
			.addr = (__u64)(uintptr_t)t,
			.ts_id = npu_dev_ts_id(dev),
			.device = npu_dev_id(dev),
			.flags = NPUSIM_TRUTH_ANY_OWNER,
		};

		if (ioctl(npu_dev_fd(dev), NPUSIM_IOC_TRUTH, &q))
			continue;
		n = q.count;
		if (n <= 0 || (int)t[0].stream_id != sid)
			continue;
		after_mark = false;
		for (i = 0; i < n && k < max; i++) {
			if (t[i].sqe_type != TRS_SQE_PLACE_HOLDER)
				continue;
			if (after_mark)
				ev[k++] = t[i];
			after_mark = !after_mark;
		}
		return k;
	}
	return -ENOENT;
}

FIXTURE(dt) {
	aclrtStream stream;
	struct npu_dev *dev;
	__u64 hz;
};

FIXTURE_SETUP(dt)
{
	struct steptime_load_opts lo = {
		.sz = sizeof(lo),
		.pin_dir = PIN_DIR,
		.attach_mode = STEPTIME_ATTACH_TP_BTF,
	};
	struct npusim_clock clk;

	if (geteuid())
		SKIP(return, "needs root");
	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, steptime__load(&lo));
	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	ASSERT_EQ(ACL_SUCCESS, aclInit(NULL));
	ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
	ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&self->stream));
	self->dev = npu_dev_open(NULL);
	ASSERT_NE(NULL, self->dev);
	ASSERT_EQ(0, npu_sim_clock(self->dev, &clk));
	self->hz = clk.counter_freq_hz;
}

FIXTURE_TEARDOWN(dt)
{
	npu_dev_close(self->dev);
	aclrtDestroyStream(self->stream);
	aclrtResetDevice(0);
	aclFinalize();
	steptime__unload(PIN_DIR);
}

TEST_F_TIMEOUT(dt, steps_2_4_6, 200)
{
	static const int shape[] = { 2, 4, 6 };
	struct steptime_mark_opts mo = { .sz = sizeof(mo),
					 .stream = self->stream };
	struct steptime_reader_opts ro = { .sz = sizeof(ro), .pin_dir = PIN_DIR,
					   .pid = getpid() };
	struct npusim_task_truth ev[6];
	struct steptime_step_stats r;
	struct steptime_reader *rd;
	__u64 idx[3], host[3], t0, us0, us1, per_us = self->hz / 1000000;
	int32_t sid = -1;
	int i;

	ASSERT_EQ(0, rtGetStreamId(self->stream, &sid));
	for (i = 0; i < 3; i++) {
		struct steptime_step *st = steptime_step__new();

		ASSERT_NE(NULL, st);
		idx[i] = steptime_step__index_id(st);
		t0 = now_ns();
		ASSERT_EQ(0, steptime_step__mark(st, STEPTIME_TAG_START, &mo));
		ASSERT_EQ(ACL_SUCCESS, aclnpusimLaunchKernel(self->stream,
				ACL_NPUSIM_KERNEL_AICORE, shape[i], TASK_NS));
		ASSERT_EQ(0, steptime_step__mark(st, STEPTIME_TAG_END, &mo));
		ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(self->stream));
		host[i] = now_ns() - t0;
		steptime_step__free(st);
	}
	ASSERT_EQ(0, steptime__flush());
	i = event_truth(self->dev, sid, ev, 6);
	ASSERT_EQ(6, i);

	rd = steptime_reader__open(&ro);
	ASSERT_NE(NULL, rd);
	for (i = 0; steptime_reader__next(rd, &r) == 0; i++) {
		ASSERT_LT(i, 3);
		EXPECT_EQ(idx[i], r.index_id);
		/*
		 * Not r.tasks: the stand-in's SQs are mapped (uio_d) here,
		 * whose tasks the kernel learns of only when they complete,
		 * after this step's END mark was consumed (bpf's side).
		 */
		EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
		EXPECT_EQ((__u32)sid, r.stream);
		ASSERT_TRUE(r.flags & STEPTIME_F_DEV_EVENT);
		ASSERT_TRUE(r.flags & STEPTIME_F_DEV_START);
		ASSERT_TRUE(r.flags & STEPTIME_F_DEV_END);
		/* Exact: the two readings CANN's API gives for the truth. */
		us0 = ticks_to_us(ev[2 * i].start_ticks, self->hz);
		us1 = ticks_to_us(ev[2 * i + 1].start_ticks, self->hz);
		EXPECT_EQ((us1 - us0) * 1000, r.device_time_ns);
		if (per_us * 1000000 == self->hz) {
			EXPECT_EQ(us0 * per_us, r.dev_start_ticks);
			EXPECT_EQ(us1 * per_us, r.dev_end_ticks);
		}
		/* Within the API's 1 us of the counter's own difference. */
		EXPECT_GE(ticks_to_ns(ev[2 * i + 1].start_ticks -
				      ev[2 * i].start_ticks, self->hz) + 1000,
			  r.device_time_ns);
		EXPECT_LE(ticks_to_ns(ev[2 * i + 1].start_ticks -
				      ev[2 * i].start_ticks, self->hz),
			  r.device_time_ns + 1000);
		/* Consistent with the host: the kernels ran in it, serially. */
		EXPECT_GE(r.device_time_ns + 1000, (__u64)shape[i] * TASK_NS);
		EXPECT_LE(r.device_time_ns, host[i]);
		TH_LOG("step %d: %d tasks, device %llu ns, host %llu ns", i,
		       shape[i], (unsigned long long)r.device_time_ns,
		       (unsigned long long)host[i]);
	}
	steptime_reader__free(rd);
	EXPECT_EQ(3, i);
}

TEST_HARNESS_MAIN
