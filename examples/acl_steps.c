// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CANN sample flow with steptime as the profiler:
 *   aclprofInit -> aclprofCreateConfig -> aclprofStart
 *   -> steps (aclprofCreateStepInfo, START, work, END, Destroy)
 *   -> aclprofStop -> aclprofDestroyConfig -> aclprofFinalize
 *
 * Only the step API is CANN's; the work is submitted through the npusim HAL
 * when /dev/npusim_manager exists (steps of 2, 4 and 6 tasks, marks ordered
 * on the stream), else the steps are host-only.
 *
 * usage: acl_steps [--strict] [OUTPUT_DIR]
 *   --strict: a mark that is not reported (steptime not loaded) is fatal,
 *   as CHECK_ERROR makes it in CANN's sample.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl_prof.h"
#include <npusim/hal.h>

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

static void submit_tasks(struct npu_stream *s, unsigned int n)
{
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .duration_ns = TASK_NS };
	struct trs_sqe sqes[8];
	unsigned int i;
	int err;

	for (i = 0; i < n; i++)
		npu_sqe_task(&sqes[i], &d);
	err = npu_stream_submit(s, sqes, n);
	if (err < 0) {
		fprintf(stderr, "npu_stream_submit: %s\n", strerror(-err));
		exit(1);
	}
}

static void run_step(struct npu_stream *s, unsigned int tasks)
{
	aclprofStepInfo *info = aclprofCreateStepInfo();
	int err;

	if (!info) {
		fprintf(stderr, "aclprofCreateStepInfo failed\n");
		exit(1);
	}
	check_mark(aclprofGetStepTimestamp(info, ACL_STEP_START, s), "START");
	if (s)
		submit_tasks(s, tasks);
	else
		usleep(tasks * TASK_NS / 1000);
	check_mark(aclprofGetStepTimestamp(info, ACL_STEP_END, s), "END");
	if (s) {
		err = npu_stream_sync(s, 10000);
		if (err) {
			fprintf(stderr, "npu_stream_sync: %s\n", strerror(-err));
			exit(1);
		}
	}
	aclprofDestroyStepInfo(info);
}

int main(int argc, char **argv)
{
	static const unsigned int steps[] = { 2, 4, 6 };
	const char *out = "./steptime_output";
	uint32_t devs[1] = { 0 };
	struct npu_stream *stream = NULL;
	struct npu_dev *dev = NULL;
	aclprofConfig *cfg;
	size_t i;

	if (argc > 1 && !strcmp(argv[1], "--strict")) {
		strict = 1;
		argc--;
		argv++;
	}
	if (argc > 1)
		out = argv[1];
	if (!access(NPU_DEFAULT_DEVICE, F_OK)) {
		dev = npu_dev_open(NULL);
		stream = dev ? npu_stream_create(dev, NULL) : NULL;
		if (!stream) {
			perror("acl_steps: npusim stream");
			return 1;
		}
	}

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

	npu_stream_destroy(stream);
	npu_dev_close(dev);
	printf("acl_steps: %zu steps%s; results in %s/steptime_*_%d_1.*\n",
	       sizeof(steps) / sizeof(steps[0]),
	       stream ? " on npusim" : " (host only: no npusim)", out,
	       (int)getpid());
	return 0;
}
