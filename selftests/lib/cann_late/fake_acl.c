// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The timeline-event calls of a CANN runtime, in a library that
 * test_cann_late dlopen()s (RTLD_LOCAL) after libsteptime has looked for
 * them once: as torch_npu's extension module loads libascendcl.so after
 * `import steptime`.
 */
#include <stdint.h>

#define API __attribute__((visibility("default")))

static int ev_obj;

API int fake_events_live;

API int aclrtCreateEventWithFlag(void **event, uint32_t flag)
{
	*event = &ev_obj;
	fake_events_live++;
	return 0;
}

API int aclrtRecordEvent(void *event, void *stream)
{
	return 0;
}

API int aclrtQueryEventStatus(void *event, int *status)
{
	*status = 1;
	return 0;
}

API int aclrtSynchronizeEvent(void *event)
{
	return 0;
}

API int aclrtEventElapsedTime(float *ms, void *start, void *end)
{
	*ms = 1.0f;
	return 0;
}

API int aclrtEventGetTimestamp(void *event, uint64_t *us)
{
	*us = 1;
	return 0;
}

API int aclrtDestroyEvent(void *event)
{
	fake_events_live--;
	return 0;
}
