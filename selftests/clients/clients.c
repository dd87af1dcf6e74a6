// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Real clients on npusim with the BPF program loaded: a program making
 * exactly MindSpore's AscendProfiler::StepStart/StepStop calls, and one
 * making exactly torch_npu's profiler.step() mstx calls, each submitting
 * work on an npusim stream between its marks. Their steps must be in the
 * steps map with the ids the framework gave them, done, with their tasks
 * and a device time, and carry the ranges made inside them as phases.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <acl/acl_prof.h>
#include <mstx/ms_tools_ext.h>
#include <steptime/loader.h>
#include <steptime/steptime.h>
#include <npusim/hal.h>

#include "kselftest_harness.h"
#include "ksft_filter.h"
#include "st_step.h"

#define PIN_DIR		"/sys/fs/bpf/steptime_clients"
#define TASK_NS		50000

__attribute__((destructor)) static void unload_at_exit(void)
{
	steptime__unload(PIN_DIR);
}

static int ensure_loaded(void)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o), .pin_dir = PIN_DIR, .map_mode = 0666,
		.map_gid = -1,
	};
	struct steptime_info inf;

	if (steptime__read_info(PIN_DIR, &inf) == 0)
		return 0;
	return steptime__load(&o);
}

static int submit(struct npu_stream *s, int n)
{
	struct trs_sqe sqe[16];
	int i;

	for (i = 0; i < n; i++) {
		struct npu_task_desc d = {
			.type = TRS_SQE_FFTS, .duration_ns = TASK_NS,
			.wr_cqe = i == n - 1,
		};

		npu_sqe_task(&sqe[i], &d);
	}
	return npu_stream_submit(s, sqe, n) < 0 ? -EIO : 0;
}

FIXTURE(cl) {
	struct npu_dev *dev;
	struct npu_stream *s;
	char dir[64];
	uint32_t devid;
	aclprofConfig *cfg;
};

FIXTURE_SETUP(cl)
{
	int err;

	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	err = ensure_loaded();
	ASSERT_EQ(0, err) TH_LOG("steptime load: %s", strerror(-err));
	ASSERT_NE(NULL, self->dev = npu_dev_open(NULL));
	ASSERT_NE(NULL, self->s = npu_stream_create(self->dev, NULL));
	snprintf(self->dir, sizeof(self->dir), "/tmp/steptime-cl-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	setenv("STEPTIME_PHASE_DIR", self->dir, 1);
	self->devid = 0;
	ASSERT_EQ(ACL_SUCCESS, aclprofInit(self->dir, strlen(self->dir)));
	ASSERT_NE(NULL, self->cfg = aclprofCreateConfig(&self->devid, 1,
			ACL_AICORE_NONE, NULL,
			ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX));
	ASSERT_EQ(ACL_SUCCESS, aclprofStart(self->cfg));
}

FIXTURE_TEARDOWN(cl)
{
	char cmd[128];

	aclprofStop(self->cfg);
	aclprofDestroyConfig(self->cfg);
	aclprofFinalize();
	npu_stream_destroy(self->s);
	npu_dev_close(self->dev);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("cannot remove %s", self->dir);
}

static void check_step(struct __test_metadata *_metadata, __u64 id, int tasks,
		       const char *phase)
{
	const __u32 dev = STEPTIME_F_DEV_START | STEPTIME_F_DEV_END;
	struct steptime_step_stats r;
	struct steptime_phase ph[4];

	/* The last step's device time is handed on at the flush. */
	ASSERT_EQ(0, steptime__flush());
	ASSERT_EQ(0, st_step_wait_done(PIN_DIR, getpid(), id, 200, &r))
		TH_LOG("step %llu not done", (unsigned long long)id);
	EXPECT_EQ((__u64)tasks, r.tasks);
	EXPECT_EQ((__u64)tasks, r.completions);
	/* The marks were ordered on the stream (its id is the step's). */
	EXPECT_TRUE(r.flags & STEPTIME_F_STREAM);
	EXPECT_NE(STEPTIME_STREAM_NONE, r.stream);
	/* Device time, from npusim's timeline events, on every step. */
	EXPECT_EQ(dev, r.flags & dev) TH_LOG("flags %#x", r.flags);
	EXPECT_GE(r.device_time_ns, (__u64)tasks * TASK_NS);
	ASSERT_EQ(1, steptime_phases__get(&r, ph, 4));
	EXPECT_STREQ(phase, ph[0].name);
	EXPECT_EQ(1, ph[0].count);
	EXPECT_GT(ph[0].host_ns, 0);
}

struct ms_step_info { bool startFlag, endFlag; uint64_t indexId; };

/* MindSpore: tags 60000/60001 on its stream, its own step numbers. */
TEST_F(cl, mindspore_steps)
{
	uint64_t n;

	for (n = 100; n < 103; n++) {
		aclprofStepInfo *info = aclprofCreateStepInfo();	/* StepStart */
		mstxRangeId r;

		ASSERT_NE(NULL, info);
		((struct ms_step_info *)info)->indexId = n;
		ASSERT_EQ(ACL_SUCCESS, aclprofGetStepTimestamp(info,
				(aclprofStepTag)60000, self->s));
		r = mstxRangeStartA("GraphRun", NULL);
		ASSERT_EQ(0, submit(self->s, 3));
		mstxRangeEnd(r);
		ASSERT_EQ(ACL_SUCCESS, aclprofGetStepTimestamp(info,	/* StepStop */
				(aclprofStepTag)60001, self->s));
		aclprofDestroyStepInfo(info);
		ASSERT_EQ(0, npu_stream_sync(self->s, 10000));
	}
	for (n = 100; n < 103; n++)
		check_step(_metadata, n, 3, "GraphRun");
}

/* torch_npu: profiler.start()/step() open "ProfilerStep#N" mstx ranges. */
TEST_F(cl, torch_npu_profiler_steps)
{
	mstxRangeId step = 0, op;
	char name[32];
	int i;

	for (i = 0; i < 3; i++) {
		if (step)
			mstxRangeEnd(step);			/* step() */
		snprintf(name, sizeof(name), "ProfilerStep#%d", i);
		step = mstxRangeStartA(name, self->s);
		ASSERT_NE(MSTX_INVALID_ID, step);
		op = mstxRangeStartA("aten::matmul", NULL);
		ASSERT_EQ(0, submit(self->s, 2 + i));
		mstxRangeEnd(op);
		ASSERT_EQ(0, npu_stream_sync(self->s, 10000));
	}
	mstxRangeEnd(step);					/* stop() */
	ASSERT_EQ(0, npu_stream_sync(self->s, 10000));
	for (i = 0; i < 3; i++)
		check_step(_metadata, i + 1, 2 + i, "aten::matmul");
}

/* CANN's msproftx sample flow: stamps, push/pop, a range, inside a step. */
TEST_F(cl, msproftx_in_a_step)
{
	struct steptime_phase ph[4];
	struct steptime_step_stats r;
	aclprofStepInfo *info;
	uint32_t rid;
	void *st;
	char path[160];
	struct stat sb;

	ASSERT_NE(NULL, info = aclprofCreateStepInfo());
	ASSERT_EQ(ACL_SUCCESS, aclprofGetStepTimestamp(info, ACL_STEP_START,
						       self->s));
	ASSERT_NE(NULL, st = aclprofCreateStamp());
	ASSERT_EQ(ACL_SUCCESS, aclprofSetStampTraceMessage(st, "aclnnAdd", 8));
	ASSERT_EQ(ACL_SUCCESS, aclprofMark(st));
	ASSERT_EQ(ACL_SUCCESS, aclprofPush(st));
	ASSERT_EQ(0, submit(self->s, 4));
	ASSERT_EQ(ACL_SUCCESS, aclprofPop());
	ASSERT_EQ(ACL_SUCCESS, aclprofRangeStart(st, &rid));
	ASSERT_EQ(ACL_SUCCESS, aclprofRangeStop(rid));
	ASSERT_EQ(ACL_SUCCESS, aclprofGetStepTimestamp(info, ACL_STEP_END,
						       self->s));
	ASSERT_EQ(0, npu_stream_sync(self->s, 10000));
	ASSERT_EQ(0, st_step_wait_done(PIN_DIR, getpid(),
				       ((struct ms_step_info *)info)->indexId,
				       200, &r));
	EXPECT_EQ(4, r.tasks);
	ASSERT_EQ(1, steptime_phases__get(&r, ph, 4));
	EXPECT_STREQ("aclnnAdd", ph[0].name);
	EXPECT_EQ(3, ph[0].count);
	aclprofDestroyStamp(st);
	aclprofDestroyStepInfo(info);
	ASSERT_EQ(ACL_SUCCESS, aclprofStop(self->cfg));
	snprintf(path, sizeof(path), "%s/steptime_msprof_tx_%d_1.csv",
		 self->dir, (int)getpid());
	ASSERT_EQ(0, stat(path, &sb));
	EXPECT_GT(sb.st_size, 200);
}

/* Loaded once, before the tests and their timeouts (a load takes seconds
 * under TCG); unloaded when the harness's parent exits. */
int main(int argc, char **argv)
{
	int err;

	if (ksft_filter(argc, argv))
		return KSFT_FAIL;
	err = ensure_loaded();
	if (err) {
		fprintf(stderr, "steptime load: %s\n", strerror(-err));
		return KSFT_FAIL;
	}
	return test_harness_run(argc, argv);
}
