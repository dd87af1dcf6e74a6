// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Zero-change deployment: a CANN program (linked against a stand-in for
 * CANN's profiling libraries, selftests/lib/fake_cann.c, never against
 * libsteptime) runs with LD_PRELOAD=libsteptime.so. Every aclprof and mstx
 * call must reach the stand-in with the app's arguments (its own objects
 * and ids: msprof keeps working), the app must get the stand-in's answers,
 * and steptime must have recorded the steps' phases and the session.
 *
 * The program re-executes itself with LD_PRELOAD set ($STEPTIME_LIB, else
 * build/libsteptime.so.1).
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <acl/acl_prof.h>
#include <mstx/ms_tools_ext.h>
#include <steptime/steptime.h>
#include "kselftest_harness.h"

struct ms_step_info { bool s, e; uint64_t indexId; };

static char *slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

TEST(preloaded_calls_reach_the_real_library)
{
	char dir[] = "/tmp/steptime-fwd-XXXXXX", log[128], phases[128];
	char path[256], *text, expect[256];
	struct steptime_phase ph[4];
	struct steptime_step_stats rec;
	aclprofStepInfo *info;
	aclprofConfig *cfg;
	uint32_t dev = 0, rid;
	mstxRangeId r;
	struct stat st;
	void *stamp;
	int (*is_ours)(const struct steptime_step_stats *, struct steptime_phase *, size_t);

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(log, sizeof(log), "%s/fake.log", dir);
	snprintf(phases, sizeof(phases), "%s/phases", dir);
	setenv("FAKE_CANN_LOG", log, 1);
	setenv("STEPTIME_PHASE_DIR", phases, 1);
	/* steptime is in the process only through LD_PRELOAD. */
	is_ours = dlsym(RTLD_DEFAULT, "steptime_phases__get");
	ASSERT_NE(NULL, is_ours);

	/* The CANN sample flow, MindSpore's step tags, msproftx, mstx. */
	ASSERT_EQ(0, aclprofInit(dir, strlen(dir)));
	ASSERT_NE(NULL, cfg = aclprofCreateConfig(&dev, 1, ACL_AICORE_NONE,
					NULL, ACL_PROF_MSPROFTX | ACL_PROF_TASK_TIME));
	ASSERT_EQ(0, aclprofStart(cfg));
	ASSERT_NE(NULL, info = aclprofCreateStepInfo());
	((struct ms_step_info *)info)->indexId = 77;
	EXPECT_EQ(0, aclprofGetStepTimestamp(info, (aclprofStepTag)60000, NULL));
	ASSERT_NE(NULL, stamp = aclprofCreateStamp());
	EXPECT_EQ(0, aclprofSetStampTraceMessage(stamp, "fwd", 3));
	EXPECT_EQ(0, aclprofMark(stamp));
	EXPECT_EQ(0, aclprofPush(stamp));
	EXPECT_EQ(4242, aclprofPop());		/* the real library's code */
	EXPECT_EQ(0, aclprofRangeStart(stamp, &rid));
	EXPECT_EQ(70, rid);			/* the real library's id */
	EXPECT_EQ(0, aclprofRangeStop(rid));
	r = mstxRangeStartA("mstx phase", NULL);
	EXPECT_NE(0, r);
	mstxRangeEnd(r);
	mstxMarkA("mstx mark", NULL);
	EXPECT_EQ(0, aclprofGetStepTimestamp(info, (aclprofStepTag)60001, NULL));
	aclprofDestroyStepInfo(info);
	aclprofDestroyStamp(stamp);
	EXPECT_EQ(0, aclprofStop(cfg));
	EXPECT_EQ(0, aclprofDestroyConfig(cfg));
	EXPECT_EQ(0, aclprofFinalize());

	/* Everything reached the real library, in order, as the app sent it. */
	ASSERT_NE(NULL, text = slurp(log));
	snprintf(expect, sizeof(expect), "Init %s\nCreateConfig 1 0x82\n"
		 "Start fake\nCreateStepInfo\nGetStepTimestamp 77 60000 (nil)\n"
		 "CreateStamp\nSetStampTraceMessage 0 fwd\nMark 0\nPush 0\nPop\n"
		 "RangeStart 0 -> 70\nRangeStop 70\n", dir);
	EXPECT_EQ(0, strncmp(text, expect, strlen(expect)));
	EXPECT_NE(NULL, strstr(text, "\nmstxRangeStartA mstx phase -> 9000\n"
			       "mstxRangeEnd 9000\nmstxMarkA mstx mark\n"
			       "GetStepTimestamp 77 60001 (nil)\nDestroyStepInfo\n"
			       "DestroyStamp 0\nStop fake\nDestroyConfig fake\n"
			       "Finalize\n"));
	if (!_metadata->passed)
		TH_LOG("reached the stand-in:\n%s", text);

	/* And steptime recorded them: step 77's phases, the session. */
	memset(&rec, 0, sizeof(rec));
	ASSERT_EQ(0, stat("/proc/self/ns/pid", &st));
	rec.pidns_ino = (uint32_t)st.st_ino;
	rec.ns_tgid = (uint32_t)getpid();
	rec.index_id = 77;
	ASSERT_EQ(3, is_ours(&rec, ph, 4));
	EXPECT_STREQ("fwd", ph[0].name);
	EXPECT_EQ(3, ph[0].count);	/* mark, push/pop, range */
	EXPECT_STREQ("mstx phase", ph[1].name);
	EXPECT_STREQ("mstx mark", ph[2].name);
	snprintf(path, sizeof(path), "%s/steptime_msprof_tx_%d_1.csv", dir,
		 (int)getpid());
	ASSERT_NE(NULL, text = slurp(path));
	EXPECT_NE(NULL, strstr(text, ",push/pop,"));
	EXPECT_NE(NULL, strstr(text, "\"mstx phase\""));
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	EXPECT_EQ(0, system(path));
}

/*
 * CANN with no msprof session: its calls fail. The app gets CANN's codes
 * unchanged, and steptime records the steps, their phases and the session
 * all the same (steptime is not loaded here: each step mark reaches the
 * mark path and is counted as dropped there).
 */
TEST(cann_failing_steps_still_recorded)
{
	char dir[] = "/tmp/steptime-fwd-XXXXXX", log[128], phases[128];
	char path[256], *text;
	struct steptime_lib_counters c0, c1;
	struct steptime_phase ph[4];
	struct steptime_step_stats rec;
	aclprofStepInfo *info;
	aclprofConfig *cfg;
	uint32_t dev = 0, rid = 12345;
	struct stat st;
	void *stamp;
	int (*phases_get)(const struct steptime_step_stats *, struct steptime_phase *, size_t);
	int (*lib_counters)(struct steptime_lib_counters *, size_t);

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(log, sizeof(log), "%s/fake.log", dir);
	snprintf(phases, sizeof(phases), "%s/phases", dir);
	setenv("FAKE_CANN_LOG", log, 1);
	setenv("FAKE_CANN_FAIL", "1", 1);
	setenv("STEPTIME_PHASE_DIR", phases, 1);
	setenv("STEPTIME_PIN_DIR", "/nonexistent/steptime-fwd", 1);
	setenv("STEPTIME_QUIET", "1", 1);
	phases_get = dlsym(RTLD_DEFAULT, "steptime_phases__get");
	lib_counters = dlsym(RTLD_DEFAULT, "steptime__lib_counters");
	ASSERT_NE(NULL, phases_get);
	ASSERT_NE(NULL, lib_counters);
	ASSERT_EQ(0, lib_counters(&c0, sizeof(c0)));

	ASSERT_EQ(0, aclprofInit(dir, strlen(dir)));
	ASSERT_NE(NULL, cfg = aclprofCreateConfig(&dev, 1, ACL_AICORE_NONE,
					NULL, ACL_PROF_MSPROFTX | ACL_PROF_TASK_TIME));
	EXPECT_EQ(100043, aclprofStart(cfg));	/* CANN's codes, unchanged */
	ASSERT_NE(NULL, info = aclprofCreateStepInfo());
	((struct ms_step_info *)info)->indexId = 78;
	EXPECT_EQ(500002, aclprofGetStepTimestamp(info, ACL_STEP_START, NULL));
	ASSERT_NE(NULL, stamp = aclprofCreateStamp());
	EXPECT_EQ(0, aclprofSetStampTraceMessage(stamp, "nomsprof", 8));
	EXPECT_EQ(-1, aclprofMark(stamp));
	EXPECT_EQ(-1, aclprofPush(stamp));
	EXPECT_EQ(4242, aclprofPop());
	EXPECT_EQ(-1, aclprofRangeStart(stamp, &rid));
	EXPECT_EQ(12345, rid);			/* not written by CANN: as is */
	EXPECT_EQ(500002, aclprofGetStepTimestamp(info, ACL_STEP_END, NULL));
	aclprofDestroyStepInfo(info);
	aclprofDestroyStamp(stamp);
	EXPECT_EQ(100043, aclprofStop(cfg));
	EXPECT_EQ(0, aclprofDestroyConfig(cfg));
	EXPECT_EQ(0, aclprofFinalize());
	unsetenv("FAKE_CANN_FAIL");

	/* Every call reached CANN. */
	ASSERT_NE(NULL, text = slurp(log));
	EXPECT_NE(NULL, strstr(text, "GetStepTimestamp 78 0 (nil)\n"));
	EXPECT_NE(NULL, strstr(text, "RangeStart 0 failed\n"));
	EXPECT_NE(NULL, strstr(text, "GetStepTimestamp 78 1 (nil)\n"));
	/* Both step marks took steptime's mark path. */
	ASSERT_EQ(0, lib_counters(&c1, sizeof(c1)));
	EXPECT_EQ(c0.marks_dropped + 2, c1.marks_dropped);
	/* Step 78 has its phases: mark and push/pop (the range never ended). */
	memset(&rec, 0, sizeof(rec));
	ASSERT_EQ(0, stat("/proc/self/ns/pid", &st));
	rec.pidns_ino = (uint32_t)st.st_ino;
	rec.ns_tgid = (uint32_t)getpid();
	rec.index_id = 78;
	ASSERT_EQ(1, phases_get(&rec, ph, 4));
	EXPECT_STREQ("nomsprof", ph[0].name);
	EXPECT_EQ(2, ph[0].count);
	/* The session's msproftx records, though CANN refused the session. */
	snprintf(path, sizeof(path), "%s/steptime_msprof_tx_%d_1.csv", dir,
		 (int)getpid());
	ASSERT_NE(NULL, text = slurp(path));
	EXPECT_NE(NULL, strstr(text, ",push/pop,"));
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	EXPECT_EQ(0, system(path));
}

int main(int argc, char **argv)
{
	const char *lib = getenv("STEPTIME_LIB");
	char abs[4096];

	if (!getenv("ST_TEST_PRELOADED")) {
		if (!realpath(lib ? lib : "build/libsteptime.so.1", abs)) {
			perror("steptime: test_forward: libsteptime");
			return 1;
		}
		setenv("LD_PRELOAD", abs, 1);
		setenv("ST_TEST_PRELOADED", "1", 1);
		execv("/proc/self/exe", argv);
		perror("execv");
		return 1;
	}
	unsetenv("LD_PRELOAD");		/* not for system() */
	return test_harness_run(argc, argv);
}
