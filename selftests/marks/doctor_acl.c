// SPDX-License-Identifier: GPL-2.0
/*
 * `steptime doctor` on a process that marks its steps on a stream of a
 * CANN runtime (npusim's ACL stand-in, libascendcl.so), as a PyTorch or
 * MindSpore process on a real host does: doctor finds the runtime mapped
 * and says the device time is exact, from the timeline events read back
 * through it. The stand-in's SQs are the chip's default, uio_t on npusim's
 * 910B3: user space submits them through libascend_hal.so, which this
 * process maps, so the load probed it and the HAL saw every one: task
 * counts exact with no SQE trace hook (tp_btf). Its tasks ask for no
 * report of their own, so their completion times are bounds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <steptime/loader.h>
#include <steptime/steptime.h>
#include "acl/acl.h"
#include "acl/acl_npusim.h"

#include "kselftest_harness.h"
#include "ksft_filter.h"
#include "st_run.h"

#define PIN_DIR		"/sys/fs/bpf/steptime_doctor_acl"
#define CLI		"${STEPTIME_CLI:-${O:-build}/steptime}"
#define TASK_NS		50000

FIXTURE(acl) {
	aclrtStream stream;
	char out[65536];
};

FIXTURE_SETUP(acl)
{
	struct steptime_load_opts lo = {
		.sz = sizeof(lo),
		.pin_dir = PIN_DIR,
		.attach_mode = STEPTIME_ATTACH_TP_BTF,
	};

	if (geteuid())
		SKIP(return, "needs root");
	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, steptime__load(&lo));
	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	ASSERT_EQ(ACL_SUCCESS, aclInit(NULL));
	ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
	ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&self->stream));
}

FIXTURE_TEARDOWN(acl)
{
	aclrtDestroyStream(self->stream);
	aclrtResetDevice(0);
	aclFinalize();
	steptime__unload(PIN_DIR);
}

static bool verdict_is(const char *json, const char *fig, const char *v)
{
	char want[128];

	snprintf(want, sizeof(want), "\"%s\": {\"verdict\": \"%s\"", fig, v);
	return strstr(json, want) != NULL;
}

TEST_F_TIMEOUT(acl, stream_steps, 200)
{
	struct steptime_mark_opts mo = { .sz = sizeof(mo),
					 .stream = self->stream };
	char cmd[256];
	int i;

	for (i = 0; i < 2; i++) {
		struct steptime_step *st = steptime_step__new();

		ASSERT_NE(NULL, st);
		ASSERT_EQ(0, steptime_step__mark(st, STEPTIME_TAG_START, &mo));
		ASSERT_EQ(ACL_SUCCESS, aclnpusimLaunchKernel(self->stream,
				ACL_NPUSIM_KERNEL_AICORE, 3, TASK_NS));
		ASSERT_EQ(0, steptime_step__mark(st, STEPTIME_TAG_END, &mo));
		ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(self->stream));
		steptime_step__free(st);
	}
	ASSERT_EQ(0, steptime__flush());
	snprintf(cmd, sizeof(cmd), CLI " doctor --pin %s -p %d", PIN_DIR, getpid());
	ASSERT_EQ(0, st_run(cmd, self->out, sizeof(self->out)));
	TH_LOG("%s", self->out);
	snprintf(cmd, sizeof(cmd), CLI " doctor --pin %s -p %d -o json", PIN_DIR,
		 getpid());
	ASSERT_EQ(0, st_run(cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "\"cann_runtime\": true")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "\"registered\": true")) TH_LOG("%s", self->out);
	EXPECT_TRUE(verdict_is(self->out, "steps", "exact")) TH_LOG("%s", self->out);
	EXPECT_TRUE(verdict_is(self->out, "host_times", "exact")) TH_LOG("%s", self->out);
	EXPECT_TRUE(verdict_is(self->out, "device_time", "exact")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "timeline events")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "2 of 2 steps")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "\"taints\": []")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "\"sqs\": {\"kio\": 0, \"uio_t\": 2, \"uio_d\": 0, \"hal_seen\": 2")) TH_LOG("%s", self->out);
	EXPECT_TRUE(verdict_is(self->out, "task_counts", "exact")) TH_LOG("%s", self->out);
	EXPECT_TRUE(verdict_is(self->out, "completion_times", "bound")) TH_LOG("%s", self->out);
}

TEST_HARNESS_MAIN
