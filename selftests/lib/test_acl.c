// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CANN step API and the native step API without steptime loaded:
 * check order, flags, ids, destroy misuse, session misuse codes.
 * STEPTIME_PIN_DIR points at a directory that does not exist.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <acl/acl_prof.h>
#include "st_internal.h"
#include "st_test.h"
#include "kselftest_harness.h"

/* What MindSpore assumes about the object (CANN's layout). */
struct ms_step_info {
	bool startFlag;
	bool endFlag;
	uint64_t indexId;
};
_Static_assert(sizeof(struct ms_step_info) == 16, "layout");
_Static_assert(offsetof(struct ms_step_info, indexId) == 8, "layout");
_Static_assert(sizeof(struct aclprofStepInfo) == sizeof(struct ms_step_info),
	       "library object is CANN's layout");
_Static_assert(offsetof(struct aclprofStepInfo, indexId) ==
	       offsetof(struct ms_step_info, indexId), "indexId offset");
_Static_assert(ACL_STEP_START == 0 && ACL_STEP_END == 1, "tags");
_Static_assert(ACL_PROF_ACL_API == 0x1 && ACL_PROF_TASK_TIME == 0x2 &&
	       ACL_PROF_AICORE_METRICS == 0x4 &&
	       ACL_PROF_TRAINING_TRACE == 0x40 && ACL_PROF_MSPROFTX == 0x80 &&
	       ACL_PROF_RUNTIME_API == 0x100, "data type flags");
/*
 * The error codes are CANN's `static const int` objects, not constant
 * expressions in C: checked at run time (TEST error_codes), and their type
 * at compile time.
 */
_Static_assert(_Generic(ACL_SUCCESS, int: 1, default: 0) &&
	       _Generic(ACL_ERROR_GE_FAILURE, int: 1, default: 0) &&
	       _Generic((aclError)0, int: 1, default: 0), "int codes");

#define MS(p)	((struct ms_step_info *)(p))

FIXTURE(acl) {
	char dir[64];
	uint32_t dev;
	aclprofConfig *cfg;
};

FIXTURE_SETUP(acl)
{
	setenv("STEPTIME_PIN_DIR", "/nonexistent/steptime-test", 1);
	snprintf(self->dir, sizeof(self->dir), "/tmp/steptime-acl-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	self->dev = 0;
	self->cfg = aclprofCreateConfig(&self->dev, 1,
					ACL_AICORE_ARITHMETIC_UTILIZATION,
					NULL, ACL_PROF_ACL_API |
					ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX);
	ASSERT_NE(NULL, self->cfg);
}

FIXTURE_TEARDOWN(acl)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("cannot remove %s", self->dir);
}

static aclError init(const char *dir)
{
	return aclprofInit(dir, strlen(dir));
}

/* CANN's values (acl_base_rt.h: static const int). */
TEST(error_codes)
{
	int got[] = {
		ACL_SUCCESS, ACL_ERROR_INVALID_PARAM, ACL_ERROR_UNINITIALIZE,
		ACL_ERROR_REPEAT_INITIALIZE,
		ACL_ERROR_INVALID_PROFILING_CONFIG,
		ACL_ERROR_PROF_ALREADY_RUN, ACL_ERROR_PROF_NOT_RUN,
		ACL_ERROR_BAD_ALLOC, ACL_ERROR_API_NOT_SUPPORT,
		ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_INTERNAL_ERROR,
		ACL_ERROR_FAILURE, ACL_ERROR_GE_FAILURE, ACL_ERROR_RT_FAILURE,
		ACL_ERROR_DRV_FAILURE, ACL_ERROR_PROFILING_FAILURE,
	};
	static const int want[] = {
		0, 100000, 100001, 100002, 100010, 100042, 100043,
		200000, 200001, 200006,
		500000, 500001, 500002, 500003, 500004, 500005,
	};
	size_t i;

	ASSERT_EQ(sizeof(got) / sizeof(got[0]), sizeof(want) / sizeof(want[0]));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		EXPECT_EQ(want[i], got[i]) TH_LOG("code %zu", i);
	}
}

TEST_F(acl, create_fresh_object)
{
	aclprofStepInfo *a = aclprofCreateStepInfo(), *b;

	ASSERT_NE(NULL, a);
	EXPECT_FALSE(MS(a)->startFlag);
	EXPECT_FALSE(MS(a)->endFlag);
	/* A fresh process: ids start at 1, one per object. */
	EXPECT_EQ(1, MS(a)->indexId);
	b = aclprofCreateStepInfo();
	ASSERT_NE(NULL, b);
	EXPECT_EQ(2, MS(b)->indexId);
	aclprofDestroyStepInfo(a);
	aclprofDestroyStepInfo(b);
}

TEST_F(acl, null_step_is_invalid_param)
{
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofGetStepTimestamp(NULL, ACL_STEP_START, NULL));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofGetStepTimestamp(NULL, ACL_STEP_END, NULL));
}

/* Without a session a report fails, but only after the flag is set. */
TEST_F(acl, check_order_without_session)
{
	aclprofStepInfo *s = aclprofCreateStepInfo();

	ASSERT_NE(NULL, s);
	EXPECT_EQ(ACL_ERROR_GE_FAILURE,
		  aclprofGetStepTimestamp(s, ACL_STEP_START, NULL));
	EXPECT_TRUE(MS(s)->startFlag);
	EXPECT_FALSE(MS(s)->endFlag);
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofGetStepTimestamp(s, ACL_STEP_START, NULL));
	EXPECT_EQ(ACL_ERROR_GE_FAILURE,
		  aclprofGetStepTimestamp(s, ACL_STEP_END, NULL));
	EXPECT_TRUE(MS(s)->endFlag);
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofGetStepTimestamp(s, ACL_STEP_END, NULL));
	aclprofDestroyStepInfo(s);
}

/* MindSpore's tags: anything but START is END. */
TEST_F(acl, other_tags_act_as_end)
{
	aclprofStepInfo *s = aclprofCreateStepInfo();

	ASSERT_NE(NULL, s);
	EXPECT_EQ(ACL_ERROR_GE_FAILURE,
		  aclprofGetStepTimestamp(s, (aclprofStepTag)60000, NULL));
	EXPECT_TRUE(MS(s)->endFlag);
	EXPECT_FALSE(MS(s)->startFlag);
	/* Only tag 1 is checked against endFlag (MindSpore's 60001 passes). */
	EXPECT_EQ(ACL_ERROR_GE_FAILURE,
		  aclprofGetStepTimestamp(s, (aclprofStepTag)60001, NULL));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofGetStepTimestamp(s, ACL_STEP_END, NULL));
	EXPECT_EQ(ACL_ERROR_GE_FAILURE,
		  aclprofGetStepTimestamp(s, ACL_STEP_START, NULL));
	aclprofDestroyStepInfo(s);
}

static int count_str(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

static struct steptime_lib_counters lib_counters(void)
{
	struct steptime_lib_counters c;

	memset(&c, 0xff, sizeof(c));
	if (steptime__lib_counters(&c, sizeof(c)))
		memset(&c, 0xff, sizeof(c));
	return c;
}

/*
 * In a session, steptime not loaded: CANN's answers where profiling works
 * (CANN's samples exit on any other), the marks dropped and counted, said
 * once; Stop writes its files.
 */
TEST_F(acl, success_when_not_loaded)
{
	aclprofStepInfo *s = aclprofCreateStepInfo();
	struct steptime_lib_counters c0, c1;
	char path[256];
	int saved;
	char *err;

	ASSERT_NE(NULL, s);
	ASSERT_EQ(ACL_SUCCESS, init(self->dir));
	c0 = lib_counters();
	saved = st_stderr_begin();
	ASSERT_EQ(ACL_SUCCESS, aclprofStart(self->cfg));
	EXPECT_EQ(ACL_SUCCESS,
		  aclprofGetStepTimestamp(s, ACL_STEP_START, NULL));
	EXPECT_EQ(ACL_SUCCESS,
		  aclprofGetStepTimestamp(s, ACL_STEP_END, NULL));
	EXPECT_EQ(ACL_SUCCESS, aclprofStop(self->cfg));
	err = st_stderr_end(saved);
	/* Said once (at Start), not per mark. */
	EXPECT_EQ(1, count_str(err, "not loaded"));
	EXPECT_EQ(1, count_str(err, "steptime:")) TH_LOG("%s", err);
	c1 = lib_counters();
	EXPECT_EQ(c0.marks_dropped + 2, c1.marks_dropped);
	EXPECT_EQ(c0.stops_incomplete, c1.stops_incomplete);
	EXPECT_TRUE(MS(s)->startFlag && MS(s)->endFlag);
	/* The flags still checked, as CANN does. */
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofGetStepTimestamp(s, ACL_STEP_END, NULL));
	snprintf(path, sizeof(path), "%s/steptime_steps_%d_1.json",
		 self->dir, (int)getpid());
	EXPECT_EQ(0, access(path, R_OK));
	aclprofDestroyStepInfo(s);
	EXPECT_EQ(ACL_SUCCESS, aclprofDestroyConfig(self->cfg));
	EXPECT_EQ(ACL_SUCCESS, aclprofFinalize());
}

/* The counters API: a smaller (older) struct, NULL. */
TEST(lib_counters_args)
{
	struct {
		struct steptime_lib_counters c;
		__u64 tail;
	} big;
	__u64 small[1] = { ~0ull };

	EXPECT_EQ(-EINVAL, steptime__lib_counters(NULL, sizeof(big.c)));
	memset(&big, 0xff, sizeof(big));
	EXPECT_EQ(0, steptime__lib_counters(&big.c, sizeof(big)));
	EXPECT_EQ(0, big.tail);
	EXPECT_NE(~0ull, big.c.mark_setups);
	EXPECT_EQ(0, steptime__lib_counters((void *)small, sizeof(small)));
	EXPECT_EQ(big.c.marks_dropped, small[0]);
}

TEST_F(acl, destroy_null_and_twice)
{
	aclprofStepInfo *s = aclprofCreateStepInfo();
	int saved;
	char *err;

	ASSERT_NE(NULL, s);
	saved = st_stderr_begin();
	aclprofDestroyStepInfo(NULL);
	aclprofDestroyStepInfo(s);
	aclprofDestroyStepInfo(s);
	err = st_stderr_end(saved);
	EXPECT_NE(NULL, strstr(err, "NULL"));
	EXPECT_NE(NULL, strstr(err, "already destroyed"));
	/* A destroyed object is not a step any more. */
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofGetStepTimestamp(s, ACL_STEP_START, NULL));
}

TEST_F(acl, destroy_bogus_pointers)
{
	struct ms_step_info on_stack = { .indexId = 5 };
	void *heap = malloc(16);
	aclprofStepInfo *s = aclprofCreateStepInfo();
	int saved;
	char *err;

	ASSERT_NE(NULL, heap);
	ASSERT_NE(NULL, s);
	memset(heap, 0, 16);
	saved = st_stderr_begin();
	aclprofDestroyStepInfo((aclprofStepInfo *)&on_stack);
	aclprofDestroyStepInfo((aclprofStepInfo *)heap);
	aclprofDestroyStepInfo((aclprofStepInfo *)((char *)s + 1));
	aclprofDestroyStepInfo((aclprofStepInfo *)((char *)s + 16 * 5000));
	err = st_stderr_end(saved);
	EXPECT_NE(NULL, strstr(err, "not a step object"));
	EXPECT_EQ(5, on_stack.indexId);
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofGetStepTimestamp((aclprofStepInfo *)heap,
					  ACL_STEP_START, NULL));
	/* The real object survived the misaligned destroy. */
	EXPECT_EQ(ACL_ERROR_GE_FAILURE,
		  aclprofGetStepTimestamp(s, ACL_STEP_START, NULL));
	free(heap);
	aclprofDestroyStepInfo(s);
}

/* A stale pointer must not be confused with a later object. */
TEST_F(acl, destroyed_address_not_reused_soon)
{
	aclprofStepInfo *old = aclprofCreateStepInfo(), *s;
	int i, saved;
	char *err;

	ASSERT_NE(NULL, old);
	aclprofDestroyStepInfo(old);
	for (i = 0; i < 3000; i++) {
		s = aclprofCreateStepInfo();
		ASSERT_NE(NULL, s);
		ASSERT_NE(old, s);
		aclprofDestroyStepInfo(s);
	}
	saved = st_stderr_begin();
	aclprofDestroyStepInfo(old);
	err = st_stderr_end(saved);
	EXPECT_NE(NULL, strstr(err, "already destroyed"));
}

/*
 * The arena's first chunk holds a million objects (lib/acl_prof.c): past
 * it, objects come from the next, and each is still known as a step
 * object, whichever chunk holds it, and a misaligned pointer into either
 * is not one. Two million calls: time for an emulated arm64 guest.
 */
#define FIRST_CHUNK	(1u << 20)

TEST_F_TIMEOUT(acl, objects_past_the_first_chunk, 300)
{
	size_t n = FIRST_CHUNK + 2, i;
	aclprofStepInfo **s = calloc(n, sizeof(*s));
	int saved;
	char *err;

	ASSERT_NE(NULL, s);
	for (i = 0; i < n; i++) {
		s[i] = aclprofCreateStepInfo();
		ASSERT_NE(NULL, s[i]) TH_LOG("object %zu", i);
	}
	/* No session: a live object's mark fails as CANN's does, no more. */
	EXPECT_EQ(ACL_ERROR_GE_FAILURE,
		  aclprofGetStepTimestamp(s[0], ACL_STEP_START, NULL));
	EXPECT_EQ(ACL_ERROR_GE_FAILURE,
		  aclprofGetStepTimestamp(s[n - 1], ACL_STEP_START, NULL));
	saved = st_stderr_begin();
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofGetStepTimestamp((aclprofStepInfo *)
					  ((char *)s[n - 1] + 8),
					  ACL_STEP_START, NULL));
	for (i = 0; i < n; i++)
		aclprofDestroyStepInfo(s[i]);
	aclprofDestroyStepInfo(s[n - 1]);
	err = st_stderr_end(saved);
	EXPECT_NE(NULL, strstr(err, "not a live step object"));
	EXPECT_NE(NULL, strstr(err, "already destroyed"));
	EXPECT_EQ(NULL, strstr(err, "not a step object"));
	free(s);
}

#define NTHREADS	8
#define PER_THREAD	2000

struct ids {
	uint64_t id[PER_THREAD];
	int bad;
};

static void *create_and_mark(void *arg)
{
	struct ids *ids = arg;
	int i;

	for (i = 0; i < PER_THREAD; i++) {
		aclprofStepInfo *s = aclprofCreateStepInfo();

		if (!s) {
			ids->bad++;
			continue;
		}
		ids->id[i] = MS(s)->indexId;
		if (aclprofGetStepTimestamp(s, ACL_STEP_START, NULL) !=
		    ACL_ERROR_GE_FAILURE ||
		    aclprofGetStepTimestamp(s, ACL_STEP_END, NULL) !=
		    ACL_ERROR_GE_FAILURE)
			ids->bad++;
		aclprofDestroyStepInfo(s);
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

TEST_F(acl, ids_unique_under_threads)
{
	static struct ids ids[NTHREADS];
	static uint64_t all[NTHREADS * PER_THREAD];
	pthread_t th[NTHREADS];
	int i;

	setenv("STEPTIME_QUIET", "1", 1);
	for (i = 0; i < NTHREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, create_and_mark,
					    &ids[i]));
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < NTHREADS; i++) {
		EXPECT_EQ(0, ids[i].bad);
		memcpy(&all[i * PER_THREAD], ids[i].id, sizeof(ids[i].id));
	}
	qsort(all, NTHREADS * PER_THREAD, sizeof(all[0]), cmp_u64);
	/* Exactly 1 .. N: unique and from 1. */
	for (i = 0; i < NTHREADS * PER_THREAD; i++)
		ASSERT_EQ((uint64_t)i + 1, all[i]);
}

TEST_F(acl, init_args)
{
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclprofInit(NULL, 4));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclprofInit(self->dir, 0));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofInit(self->dir, strlen(self->dir) + 1));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofInit(self->dir, strlen(self->dir) - 1));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, init("/proc/steptime-no/x"));
	EXPECT_EQ(ACL_SUCCESS, init(self->dir));
	EXPECT_EQ(ACL_ERROR_REPEAT_INITIALIZE, init(self->dir));
	EXPECT_EQ(ACL_SUCCESS, aclprofFinalize());
	EXPECT_EQ(ACL_ERROR_UNINITIALIZE, aclprofFinalize());
	/* Init again after Finalize. */
	EXPECT_EQ(ACL_SUCCESS, init(self->dir));
	EXPECT_EQ(ACL_SUCCESS, aclprofFinalize());
}

TEST_F(acl, create_config_args)
{
	uint32_t devs[65] = { 0 };

	errno = 0;
	EXPECT_EQ(NULL, aclprofCreateConfig(NULL, 1, ACL_AICORE_NONE, NULL,
					    ACL_PROF_ACL_API));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, aclprofCreateConfig(devs, 1, ACL_AICORE_NONE,
					    (const aclprofAicoreEvents *)devs,
					    ACL_PROF_ACL_API));
	EXPECT_EQ(NULL, aclprofCreateConfig(devs, 65, ACL_AICORE_NONE, NULL,
					    ACL_PROF_ACL_API));
	EXPECT_EQ(NULL, aclprofCreateConfig(NULL, 0, ACL_AICORE_NONE, NULL,
					    ACL_PROF_ACL_API));
	/* No device is fine for msproftx-only collection. */
	EXPECT_NE(NULL, aclprofCreateConfig(NULL, 0, ACL_AICORE_NONE, NULL,
					    ACL_PROF_MSPROFTX));
}

TEST_F(acl, session_misuse)
{
	aclprofConfig *other = aclprofCreateConfig(&self->dev, 1,
						   ACL_AICORE_NONE, NULL,
						   ACL_PROF_TASK_TIME);
	ASSERT_NE(NULL, other);
	setenv("STEPTIME_QUIET", "1", 1);
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclprofStart(NULL));
	EXPECT_EQ(ACL_ERROR_UNINITIALIZE, aclprofStart(self->cfg));
	EXPECT_EQ(ACL_ERROR_UNINITIALIZE, aclprofStop(self->cfg));
	ASSERT_EQ(ACL_SUCCESS, init(self->dir));
	EXPECT_EQ(ACL_ERROR_PROF_NOT_RUN, aclprofStop(self->cfg));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclprofStop(NULL));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
		  aclprofStart((aclprofConfig *)&self->dev));
	ASSERT_EQ(ACL_SUCCESS, aclprofStart(self->cfg));
	EXPECT_EQ(ACL_ERROR_PROF_ALREADY_RUN, aclprofStart(self->cfg));
	EXPECT_EQ(ACL_ERROR_PROF_ALREADY_RUN, aclprofStart(other));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclprofStop(other));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclprofDestroyConfig(self->cfg));
	EXPECT_EQ(ACL_SUCCESS, aclprofStop(self->cfg));
	EXPECT_EQ(ACL_ERROR_PROF_NOT_RUN, aclprofStop(self->cfg));
	EXPECT_EQ(ACL_SUCCESS, aclprofDestroyConfig(self->cfg));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclprofDestroyConfig(self->cfg));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclprofDestroyConfig(NULL));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclprofStart(self->cfg));
	EXPECT_EQ(ACL_SUCCESS, aclprofDestroyConfig(other));
	EXPECT_EQ(ACL_SUCCESS, aclprofFinalize());
}

static char *slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Stop writes the result files even when there is nothing to report. */
TEST_F(acl, stop_writes_results)
{
	char path[256], *text;

	setenv("STEPTIME_QUIET", "1", 1);
	ASSERT_EQ(ACL_SUCCESS, init(self->dir));
	ASSERT_EQ(ACL_SUCCESS, aclprofStart(self->cfg));
	ASSERT_EQ(ACL_SUCCESS, aclprofStop(self->cfg));
	snprintf(path, sizeof(path), "%s/steptime_step_trace_%d_1.csv",
		 self->dir, (int)getpid());
	text = slurp(path);
	ASSERT_NE(NULL, text);
	EXPECT_EQ(0, strncmp(text, "Device_id,Iteration ID,FP Start(us),"
			     "BP End(us),Iteration End(us),Iteration Time(us),"
			     "FP to BP Time(us),Iteration Refresh(us),"
			     "Data Aug Bound(us),Model ID,", 148));
	snprintf(path, sizeof(path), "%s/steptime_steps_%d_1.json",
		 self->dir, (int)getpid());
	text = slurp(path);
	ASSERT_NE(NULL, text);
	EXPECT_STREQ("[]\n", text);
	/* Finalize stops a running session: second session's files. */
	ASSERT_EQ(ACL_SUCCESS, aclprofStart(self->cfg));
	ASSERT_EQ(ACL_SUCCESS, aclprofFinalize());
	snprintf(path, sizeof(path), "%s/steptime_steps_%d_2.json",
		 self->dir, (int)getpid());
	EXPECT_NE(NULL, slurp(path));
	EXPECT_EQ(ACL_ERROR_UNINITIALIZE, aclprofStop(self->cfg));
}

/* The native API: errors without steptime loaded. */
TEST_F(acl, native_not_loaded)
{
	struct steptime_step *st = steptime_step__new();
	struct steptime_mark_opts opts = { .sz = sizeof(opts) };
	__u64 t0;

	ASSERT_NE(NULL, st);
	EXPECT_EQ(1, steptime_step__index_id(st));
	EXPECT_EQ(0, steptime_step__index_id(NULL));
	EXPECT_EQ(-ENODEV, steptime_step__mark(st, STEPTIME_TAG_START, &opts));
	EXPECT_EQ(-EALREADY, steptime_step__mark(st, STEPTIME_TAG_START, NULL));
	/* Retries are rate-limited: a failed mark is cheap. */
	t0 = st_now();
	EXPECT_EQ(-ENODEV, steptime_step__mark(st, STEPTIME_TAG_END, NULL));
	EXPECT_LT(st_now() - t0, 1000000);
	EXPECT_EQ(-EINVAL, steptime_step__mark(NULL, STEPTIME_TAG_END, NULL));
	EXPECT_EQ(-EINVAL, steptime__mark(0, STEPTIME_TAG_END, NULL));
	EXPECT_EQ(-ENODEV, steptime__mark(7, STEPTIME_TAG_END, NULL));
	steptime_step__free(st);
	steptime_step__free(NULL);
}

TEST_F(acl, native_opts)
{
	struct {
		struct steptime_mark_opts o;
		long tail;
	} big = { .o = { .sz = sizeof(big) }, .tail = 1 };
	struct steptime_mark_opts small = { .sz = sizeof(size_t) };
	struct steptime_step *st = steptime_step__new();

	ASSERT_NE(NULL, st);
	EXPECT_EQ(-EINVAL, steptime_step__mark(st, 0, &big.o));
	EXPECT_EQ(-EINVAL, steptime_step__mark(st, 0, &small));
	/* Rejected opts do not use up the tag. */
	big.tail = 0;
	EXPECT_EQ(-ENODEV, steptime_step__mark(st, 0, &big.o));
	steptime_step__free(st);
}

TEST_F(acl, reader_not_loaded)
{
	struct steptime_reader_opts ro = { .sz = sizeof(ro) };
	struct steptime_reader_opts bad = { .sz = sizeof(ro), .pid = -1 };

	errno = 0;
	EXPECT_EQ(NULL, steptime_reader__open(&ro));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(NULL, steptime_reader__open(&bad));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, steptime_reader__next(NULL, NULL));
	steptime_reader__free(NULL);
}

TEST_HARNESS_MAIN
