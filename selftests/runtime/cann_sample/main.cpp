// SPDX-License-Identifier: GPL-2.0
/*
 * The calls of CANN's profiling samples 1_msproftx (WITH_STAMPS) and
 * 0_create_config, in our own program: aclInit, aclrtSetDevice,
 * aclrtCreateStream, the aclprof session with aclprofSetConfig, a step
 * marked on the stream with msproftx marks, pushes and a range inside,
 * then the teardown. Every call must return ACL_SUCCESS; the last line is
 * the samples' "-------- End --------".
 */
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include "acl/acl.h"
#include "acl/acl_prof.h"

#define SAY(...) do { std::printf(__VA_ARGS__); std::printf("\n"); std::fflush(stdout); } while (0)
#define MUST(call) do {							\
	aclError e_ = (call);						\
	if (e_ != ACL_SUCCESS) {					\
		SAY("[ERROR] %s returned %d", #call, (int)e_);		\
		return 1;						\
	}								\
} while (0)

#ifdef WITH_STAMPS
static void *stamp(const char *msg)
{
	void *s = aclprofCreateStamp();

	if (s && aclprofSetStampTraceMessage(s, msg, (uint32_t)std::strlen(msg))) {
		aclprofDestroyStamp(s);
		s = nullptr;
	}
	return s;
}

static int one_step(aclrtStream stream)
{
	aclprofStepInfo *step = aclprofCreateStepInfo();
	void *load, *outer, *inner, *range, *exec;
	uint32_t range_id = 0;

	if (!step)
		return 1;
	MUST(aclprofGetStepTimestamp(step, ACL_STEP_START, stream));
	load = stamp("load_mark");
	outer = stamp("outer_push");
	inner = stamp("inner_push");
	range = stamp("prepare_range");
	exec = stamp("exec_mark");
	if (!load || !outer || !inner || !range || !exec) {
		SAY("[ERROR] aclprofCreateStamp failed");
		return 1;
	}
	MUST(aclprofMark(load));
	MUST(aclprofPush(outer));
	MUST(aclprofRangeStart(range, &range_id));
	usleep(100000);
	MUST(aclprofRangeStop(range_id));
	MUST(aclprofPush(inner));
	usleep(100000);
	MUST(aclprofPop());
	usleep(200000);
	MUST(aclprofMark(exec));
	MUST(aclprofPop());
	MUST(aclprofGetStepTimestamp(step, ACL_STEP_END, stream));
	aclprofDestroyStepInfo(step);
	aclprofDestroyStamp(load);
	aclprofDestroyStamp(outer);
	aclprofDestroyStamp(inner);
	aclprofDestroyStamp(range);
	aclprofDestroyStamp(exec);
	return 0;
}
#endif

int main(int argc, char **argv)
{
	const char *out = argc > 1 ? argv[1] : "./output";
	uint32_t devs[1] = { 0 };
	aclrtStream stream = nullptr;
	aclprofConfig *cfg;

	SAY("-------- Start --------");
	MUST(aclInit(nullptr));
	MUST(aclrtSetDevice((int32_t)devs[0]));
	MUST(aclrtCreateStream(&stream));
	MUST(aclprofInit(out, std::strlen(out)));
#ifdef WITH_STAMPS
	cfg = aclprofCreateConfig(devs, 1, ACL_AICORE_ARITHMETIC_UTILIZATION,
				  nullptr, ACL_PROF_ACL_API | ACL_PROF_TASK_TIME |
				  ACL_PROF_MSPROFTX);
#else
	cfg = aclprofCreateConfig(devs, 1, ACL_AICORE_ARITHMETIC_UTILIZATION,
				  nullptr, ACL_PROF_ACL_API | ACL_PROF_TASK_TIME |
				  ACL_PROF_AICORE_METRICS | ACL_PROF_AICPU |
				  ACL_PROF_L2CACHE | ACL_PROF_HCCL_TRACE |
				  ACL_PROF_MSPROFTX | ACL_PROF_RUNTIME_API);
#endif
	if (!cfg) {
		SAY("[ERROR] aclprofCreateConfig failed");
		return 1;
	}
	MUST(aclprofSetConfig(ACL_PROF_SYS_HARDWARE_MEM_FREQ, "15", 2));
	MUST(aclprofStart(cfg));
#ifdef WITH_STAMPS
	if (one_step(stream))
		return 1;
#endif
	MUST(aclprofStop(cfg));
	MUST(aclprofDestroyConfig(cfg));
	MUST(aclprofFinalize());
	MUST(aclrtDestroyStream(stream));
	MUST(aclrtResetDeviceForce((int32_t)devs[0]));
	MUST(aclFinalize());
	SAY("pid %d", (int)getpid());
	SAY("-------- End --------");
	return 0;
}
