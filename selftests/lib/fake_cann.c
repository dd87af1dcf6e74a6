// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A stand-in for CANN's profiling libraries (libmsprofiler.so,
 * libms_tools_ext.so) that records every call reaching it, with its
 * arguments, in $FAKE_CANN_LOG, and answers with values of its own that a
 * test recognises (objects, range ids, aclprofPop's code): what the app
 * sees must be the real library's answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <acl/acl_prof.h>
#include <mstx/ms_tools_ext.h>

#define FAKE_POP_CODE	4242
#define FAKE_RANGE_BASE	9000
/*
 * FAKE_CANN_FAIL=1: CANN with no msprof session reporting. The session
 * and msproftx calls fail with codes a test recognises, and the step mark
 * with CANN's ACL_ERROR_GE_FAILURE (prof_cann_plugin.cpp).
 */
#define FAKE_START_CODE	100043		/* ACL_ERROR_PROF_NOT_RUN */
#define FAKE_STEP_CODE	500002		/* ACL_ERROR_GE_FAILURE */
#define FAKE_TX_CODE	(-1)		/* PROFILING_FAILED */

static int failing(void)
{
	const char *f = getenv("FAKE_CANN_FAIL");

	return f && *f == '1';
}

/*
 * FAKE_CANN_OK=1: CANN with profiling working, every call answering 0, as
 * CANN's samples expect (selftests/runtime/cann_sample.sh); otherwise
 * aclprofPop answers a code of its own that a test recognises.
 */
static int working(void)
{
	const char *f = getenv("FAKE_CANN_OK");

	return f && *f == '1';
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#include <stdarg.h>
static void logf_(const char *fmt, ...)
{
	const char *path = getenv("FAKE_CANN_LOG");
	va_list ap;
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

struct fake_step { bool s, e; uint64_t id; };
static struct fake_step steps[16];
static int nsteps;
static char cfg_obj[64], stamps[8][8];
static int nstamps;
static uint64_t next_range = FAKE_RANGE_BASE;

aclError aclprofInit(const char *p, size_t n) { logf_("Init %.*s", (int)n, p); return 0; }
aclError aclprofFinalize(void) { logf_("Finalize"); return 0; }
aclprofConfig *aclprofCreateConfig(uint32_t *d, uint32_t n, aclprofAicoreMetrics m,
				   const aclprofAicoreEvents *e, uint64_t t)
{
	logf_("CreateConfig %u 0x%llx", n, (unsigned long long)t);
	return (aclprofConfig *)cfg_obj;
}
aclError aclprofDestroyConfig(const aclprofConfig *c)
{
	logf_("DestroyConfig %s", (const char *)c == cfg_obj ? "fake" : "other");
	return 0;
}
aclError aclprofStart(const aclprofConfig *c)
{
	logf_("Start %s", (const char *)c == cfg_obj ? "fake" : "other");
	return failing() ? FAKE_START_CODE : 0;
}
aclError aclprofStop(const aclprofConfig *c)
{
	logf_("Stop %s", (const char *)c == cfg_obj ? "fake" : "other");
	return failing() ? FAKE_START_CODE : 0;
}
aclprofStepInfo *aclprofCreateStepInfo(void)
{
	struct fake_step *s = &steps[nsteps++ % 16];

	s->s = s->e = false;
	s->id = 500 + nsteps;
	logf_("CreateStepInfo");
	return (aclprofStepInfo *)s;
}
void aclprofDestroyStepInfo(aclprofStepInfo *i) { logf_("DestroyStepInfo"); }
aclError aclprofGetStepTimestamp(aclprofStepInfo *i, aclprofStepTag tag, aclrtStream st)
{
	logf_("GetStepTimestamp %llu %u %p", (unsigned long long)((struct fake_step *)i)->id,
	      (unsigned int)tag, st);
	return failing() ? FAKE_STEP_CODE : 0;
}
void *aclprofCreateStamp(void) { logf_("CreateStamp"); return stamps[nstamps++ % 8]; }
void aclprofDestroyStamp(void *s) { logf_("DestroyStamp %ld", (char (*)[8])s - stamps); }
aclError aclprofSetStampTraceMessage(void *s, const char *m, uint32_t n)
{
	logf_("SetStampTraceMessage %ld %.*s", (char (*)[8])s - stamps, (int)n, m);
	return 0;
}
aclError aclprofMark(void *s)
{
	logf_("Mark %ld", (char (*)[8])s - stamps);
	return failing() ? FAKE_TX_CODE : 0;
}
aclError aclprofMarkEx(const char *m, size_t n, aclrtStream st) { logf_("MarkEx %s", m); return 0; }
aclError aclprofPush(void *s)
{
	logf_("Push %ld", (char (*)[8])s - stamps);
	return failing() ? FAKE_TX_CODE : 0;
}
aclError aclprofPop(void) { logf_("Pop"); return working() ? 0 : FAKE_POP_CODE; }
aclError aclprofRangeStart(void *s, uint32_t *id)
{
	if (failing()) {
		logf_("RangeStart %ld failed", (char (*)[8])s - stamps);
		return FAKE_TX_CODE;
	}
	*id = 70 + (uint32_t)((char (*)[8])s - stamps);
	logf_("RangeStart %ld -> %u", (char (*)[8])s - stamps, *id);
	return 0;
}
aclError aclprofRangeStop(uint32_t id) { logf_("RangeStop %u", id); return 0; }

void mstxMarkA(const char *m, aclrtStream st) { logf_("mstxMarkA %s", m); }
mstxRangeId mstxRangeStartA(const char *m, aclrtStream st)
{
	logf_("mstxRangeStartA %s -> %llu", m, (unsigned long long)next_range);
	return next_range++;
}
void mstxRangeEnd(mstxRangeId id) { logf_("mstxRangeEnd %llu", (unsigned long long)id); }
