// SPDX-License-Identifier: GPL-2.0
/*
 * libascendcl.so without a device (host, no npusim): every call fails with
 * CANN's code for the case, nothing crashes.
 */
#include <stdlib.h>
#include <string.h>
#include "acl/acl.h"
#include "acl/acl_npusim.h"
#include "kselftest_harness.h"

TEST(no_device)
{
	aclrtEventRecordedStatus st;
	aclrtStream s = NULL;
	aclrtEvent ev = NULL;
	int32_t dev = 0;
	uint32_t n;
	uint64_t t;
	float ms;

	setenv("NPU_HAL_DEVICE", "/nonexistent/npusim_manager", 1);
	EXPECT_EQ(ACL_ERROR_UNINITIALIZE, aclFinalize());
	ASSERT_EQ(ACL_SUCCESS, aclInit(NULL));
	EXPECT_EQ(ACL_ERROR_REPEAT_INITIALIZE, aclInit(NULL));
	EXPECT_EQ(ACL_ERROR_RT_NO_DEVICE, aclrtSetDevice(0));
	EXPECT_EQ(ACL_ERROR_RT_NO_DEVICE, aclrtGetDeviceCount(&n));
	EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtSetDevice(1 << 20));
	EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtGetDevice(&dev));
	EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtCreateStream(&s));
	EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtSynchronizeStream(NULL));
	EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL,
		  rtProfilerTraceEx(1, 0xffffffffull, 0, NULL));
	EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL,
		  aclnpusimLaunchKernel(NULL, ACL_NPUSIM_KERNEL_AICORE, 1, 0));
	EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL,
		  aclrtCreateEventWithFlag(&ev, ACL_EVENT_TIME_LINE));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtRecordEvent(NULL, NULL));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtQueryEventStatus(NULL, &st));
	EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
		  aclrtQueryEventStatus((void *)&st, &st));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtEventGetTimestamp(NULL, &t));
	EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
		  aclrtEventGetTimestamp((void *)&st, &t));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtEventElapsedTime(&ms, NULL, NULL));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDestroyEvent(NULL));
	EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtResetDevice(0));
	EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtResetDeviceForce(0));
	EXPECT_EQ(ACL_SUCCESS, aclFinalize());
}

TEST_HARNESS_MAIN
