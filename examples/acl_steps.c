// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CANN sample flow with steptime as the profiler:
 *   aclprofInit -> aclprofCreateConfig -> aclprofStart
 *   -> steps (aclprofCreateStepInfo, START, work, END, Destroy)
 *   -> aclprofStop -> aclprofDestroyConfig -> aclprofFinalize
 *
 * around the ACL runtime calls a CANN host makes (aclInit, aclrtSetDevice,
 * aclrtCreateStream, aclrtSynchronizeStream, ...). Built against
 * steptime's libascendcl.so (sim/runtime/), which drives npusim as CANN's
 * runtime drives a 910B: a stream id, an SQ-CQ pair and a logic CQ per
 * stream, kernels and step marks without reports, synchronize by SQ head
 * queries. The kernels are simulated ones (aclnpusimLaunchKernel): steps of
 * 2, 4 and 6 tasks, marks ordered on the stream. Without a device
 * (aclrtSetDevice fails) the steps are host-only.
 *
 * usage: acl_steps [--strict] [OUTPUT_DIR]
 *   --strict: a mark that is not reported (steptime not loaded) is fatal,
 *   as CHECK_ERROR makes it in CANN's sample.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "acl/acl_npusim.h"

#define TASK_NS		200000	/* simulated task time */

static int strict;

#define CHECK_ERROR(call) do {						\
	aclError _ret = (call);						\
	if (_ret != ACL_SUCCESS) {					\
		fprintf(stderr, "%s failed: %d\n", #call, _ret);	\
		exit(1);						\
	}								\
} while (0)

/* A mark that was not reported is only fatal with --strict. */
static void check_mark(aclError ret, const char *what)
{
	static int warned;

	if (ret == ACL_SUCCESS)
		return;
	if (ret != ACL_ERROR_GE_FAILURE || strict) {
		fprintf(stderr, "aclprofGetStepTimestamp(%s) failed: %d\n",
			what, ret);
		exit(1);
	}
	if (!warned++)
		fprintf(stderr, "acl_steps: marks are not reported (%d); "
			"is steptime loaded?\n", ret);
}

static void run_step(aclrtStream s, unsigned int tasks)
{
	aclprofStepInfo *info = aclprofCreateStepInfo();

	if (!info) {
		fprintf(stderr, "aclprofCreateStepInfo failed\n");
		exit(1);
	}
	check_mark(aclprofGetStepTimestamp(info, ACL_STEP_START, s), "START");
	if (s)
		CHECK_ERROR(aclnpusimLaunchKernel(s, ACL_NPUSIM_KERNEL_AICORE,
						  tasks, TASK_NS));
	else
		usleep(tasks * TASK_NS / 1000);
	check_mark(aclprofGetStepTimestamp(info, ACL_STEP_END, s), "END");
	if (s)
		CHECK_ERROR(aclrtSynchronizeStream(s));
	aclprofDestroyStepInfo(info);
}

int main(int argc, char **argv)
{
	static const unsigned int steps[] = { 2, 4, 6 };
	const char *out = "./steptime_output";
	uint32_t devs[1] = { 0 };
	aclrtStream stream = NULL;
	aclprofConfig *cfg;
	aclError ret;
	size_t i;

	if (argc > 1 && !strcmp(argv[1], "--strict")) {
		strict = 1;
		argc--;
		argv++;
	}
	if (argc > 1)
		out = argv[1];
	CHECK_ERROR(aclInit(NULL));
	ret = aclrtSetDevice(0);
	if (ret == ACL_SUCCESS)
		CHECK_ERROR(aclrtCreateStream(&stream));
	else if (ret != ACL_ERROR_RT_NO_DEVICE)
		CHECK_ERROR(ret);

	CHECK_ERROR(aclprofInit(out, strlen(out)));
	cfg = aclprofCreateConfig(devs, 1, ACL_AICORE_ARITHMETIC_UTILIZATION,
				  NULL, ACL_PROF_ACL_API | ACL_PROF_TASK_TIME |
				  ACL_PROF_MSPROFTX);
	if (!cfg) {
		fprintf(stderr, "aclprofCreateConfig failed\n");
		return 1;
	}
	CHECK_ERROR(aclprofStart(cfg));
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		run_step(stream, steps[i]);
	CHECK_ERROR(aclprofStop(cfg));
	CHECK_ERROR(aclprofDestroyConfig(cfg));
	CHECK_ERROR(aclprofFinalize());

	if (stream) {
		CHECK_ERROR(aclrtDestroyStream(stream));
		CHECK_ERROR(aclrtResetDeviceForce(0));
	}
	CHECK_ERROR(aclFinalize());
	printf("acl_steps: %zu steps%s; results in %s/steptime_*_%d_1.*\n",
	       sizeof(steps) / sizeof(steps[0]),
	       stream ? " on npusim" : " (host only: no npusim)", out,
	       (int)getpid());
	return 0;
}
