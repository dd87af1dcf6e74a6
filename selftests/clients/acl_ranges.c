// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device time of stream-ordered ranges, through the ACL runtime on npusim
 * (sim/runtime/, libascendcl.so): a torch_npu-shaped step (mstx ProfilerStep#0
 * on an aclrtStream) with an mstx range around simulated kernels on the
 * same stream. The range's device time comes from the runtime's timeline
 * events; the kernels' durations are set here, so it must be at least
 * their sum (the runtime's own event and recycle tasks inside the range
 * add to it: at most twice the sum here). Steps come from the BPF program.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_npusim.h"
#include <mstx/ms_tools_ext.h>
#include <steptime/loader.h>
#include <steptime/steptime.h>

#include "kselftest_harness.h"
#include "ksft_filter.h"
#include "st_step.h"

#define PIN_DIR		"/sys/fs/bpf/steptime_clients_acl"
#define KERNELS		4
#define KERNEL_NS	250000

__attribute__((destructor)) static void unload_at_exit(void)
{
	steptime__unload(PIN_DIR);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

TEST(range_device_time_on_acl_stream)
{
	char dir[] = "/tmp/steptime-acl-XXXXXX";
	struct steptime_step_stats rec;
	struct steptime_phase ph[4];
	aclrtStream s = NULL;
	mstxRangeId step, r;
	__u64 t0, t1;
	int n;

	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	ASSERT_NE(NULL, mkdtemp(dir));
	setenv("STEPTIME_PHASE_DIR", dir, 1);
	ASSERT_EQ(ACL_SUCCESS, aclInit(NULL));
	ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
	ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));

	step = mstxRangeStartA("ProfilerStep#0", s);
	ASSERT_NE(MSTX_INVALID_ID, step);
	t0 = now_ns();
	r = mstxRangeStartA("kernels", s);
	ASSERT_EQ(ACL_SUCCESS, aclnpusimLaunchKernel(s, ACL_NPUSIM_KERNEL_AICORE,
						     KERNELS, KERNEL_NS));
	mstxRangeEnd(r);
	t1 = now_ns();
	mstxRangeEnd(step);
	ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(s));
	/* The next step's END collects the device times (or exit does). */
	step = mstxRangeStartA("ProfilerStep#1", s);
	mstxMarkA("tick", NULL);
	mstxRangeEnd(step);
	ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(s));

	ASSERT_EQ(0, st_step_wait_done(PIN_DIR, getpid(), 1, 300, &rec));
	n = steptime_phases__get(&rec, ph, 4);
	ASSERT_EQ(1, n);
	EXPECT_STREQ("kernels", ph[0].name);
	EXPECT_EQ(1, ph[0].device_count);
	EXPECT_GE(ph[0].device_ns, KERNELS * KERNEL_NS - 1000);
	/*
	 * The START event ran no earlier than t0, the END event no later
	 * than the kernels' end, itself at most their time after t1 (the
	 * test's own clock; 1 us: the timestamps' resolution).
	 */
	EXPECT_LE(ph[0].device_ns, t1 - t0 + KERNELS * KERNEL_NS + 1000);
	TH_LOG("range: device %llu ns for %d x %d ns kernels, host %llu ns",
	       (unsigned long long)ph[0].device_ns, KERNELS, KERNEL_NS,
	       (unsigned long long)ph[0].host_ns);
	/* The step's own device time is the BPF program's (selftests/steptime). */

	aclrtDestroyStream(s);
	aclrtResetDevice(0);
	aclFinalize();
}

/* Loaded before the test and its timeout (seconds under TCG). */
int main(int argc, char **argv)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o), .pin_dir = PIN_DIR, .map_mode = 0666,
		.map_gid = -1,
	};
	int err;

	if (ksft_filter(argc, argv))
		return KSFT_FAIL;
	steptime__unload(PIN_DIR);
	err = steptime__load(&o);
	if (err) {
		fprintf(stderr, "steptime load: %s\n", strerror(-err));
		return KSFT_FAIL;
	}
	return test_harness_run(argc, argv);
}
