// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A CANN runtime loaded after libsteptime has looked for it (lib/cann.c):
 * LD_PRELOAD, or `import steptime` ahead of torch_npu, whose extension
 * module dlopen()s libascendcl.so RTLD_LOCAL later. A range on a stream
 * before the load has no timeline event; one after it must have one: the
 * lookup runs again once objects were loaded since its last try.
 */
#include <dlfcn.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "phase_write.h"
#include "kselftest_harness.h"

static int stream_obj;

/* A range on a stream, begun and dropped: whether it recorded an event. */
static bool range_has_event(void)
{
	struct st_tx_range r = { .msg = "late", .domain = "test" };
	bool ev;

	st_tx_begin(&r, &stream_obj);
	ev = r.ev_start != NULL;
	st_tx_cancel(&r);
	return ev;
}

TEST(runtime_loaded_after_the_first_lookup)
{
	char exe[PATH_MAX], so[PATH_MAX + 32];
	ssize_t n;
	void *h;
	int *live;

	setenv("STEPTIME_PHASE_DIR", "/nonexistent/steptime-test", 1);
	setenv("STEPTIME_QUIET", "1", 1);
	ASSERT_EQ(NULL, dlsym(RTLD_DEFAULT, "aclrtCreateEventWithFlag"));
	/* Looked up (the constructor's try and this one): nothing. */
	EXPECT_FALSE(range_has_event());
	EXPECT_FALSE(range_has_event());

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = '\0';
	snprintf(so, sizeof(so), "%s/cann_late/libfake_acl.so", dirname(exe));
	h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NE(NULL, h) TH_LOG("%s", dlerror());
	live = dlsym(h, "fake_events_live");
	ASSERT_NE(NULL, live);

	EXPECT_TRUE(range_has_event());
	EXPECT_EQ(0, *live);	/* its event destroyed with the range */
}

TEST_HARNESS_MAIN
