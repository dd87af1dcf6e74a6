// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * msproftx, mstx, MindSpore's step tags and per-step phases, without the
 * BPF program: CANN's codes for every misuse, the pool, the stack, range
 * ids, message limits, the msprof_tx CSV, and the phases each step gets
 * (read back through steptime_phases__get(), an independent record of the
 * step ids the marks carried).
 *
 * This program also plays CANN's runtime for the timeline events that
 * time stream-ordered ranges (exported with -rdynamic; lib/phase_write.c finds
 * them with dlsym(RTLD_DEFAULT)): a fake device clock the test advances.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <acl/acl_prof.h>
#include <mstx/ms_tools_ext.h>
#include <steptime/steptime.h>
#include "st_test.h"
#include "kselftest_harness.h"

/* ---- a fake runtime's timeline events --------------------------------- */

struct fake_ev {
	__u64 ts;
	int complete;
};

static __u64 dev_clock_ns = 1000000;	/* the fake device counter */
static int hold_events;			/* new records stay incomplete */
static int events_live;

int aclrtCreateEventWithFlag(void **ev, uint32_t flag);
int aclrtRecordEvent(void *ev, void *stream);
int aclrtQueryEventStatus(void *ev, int *status);
int aclrtSynchronizeEvent(void *ev);
int aclrtEventElapsedTime(float *ms, void *a, void *b);
int aclrtEventGetTimestamp(void *ev, uint64_t *ts);
int aclrtDestroyEvent(void *ev);

int aclrtCreateEventWithFlag(void **ev, uint32_t flag)
{
	if (flag != 0x8)
		return ACL_ERROR_INVALID_PARAM;
	*ev = calloc(1, sizeof(struct fake_ev));
	events_live++;
	return *ev ? 0 : ACL_ERROR_BAD_ALLOC;
}

int aclrtRecordEvent(void *ev, void *stream)
{
	struct fake_ev *e = ev;

	e->ts = dev_clock_ns;
	e->complete = !hold_events;
	return 0;
}

int aclrtQueryEventStatus(void *ev, int *status)
{
	*status = ((struct fake_ev *)ev)->complete;
	return 0;
}

int aclrtSynchronizeEvent(void *ev)
{
	((struct fake_ev *)ev)->complete = 1;
	return 0;
}

int aclrtEventElapsedTime(float *ms, void *a, void *b)
{
	*ms = (float)(((struct fake_ev *)b)->ts - ((struct fake_ev *)a)->ts) / 1e6f;
	return 0;
}

int aclrtEventGetTimestamp(void *ev, uint64_t *ts)
{
	*ts = ((struct fake_ev *)ev)->ts / 1000;
	return 0;
}

int aclrtDestroyEvent(void *ev)
{
	events_live--;
	free(ev);
	return 0;
}

/* ---- helpers ----------------------------------------------------------- */

#define STREAM	((void *)0x5100)

FIXTURE(tx) {
	char dir[64];
	char phases[96];
	uint32_t dev;
	aclprofConfig *cfg;
};

FIXTURE_SETUP(tx)
{
	setenv("STEPTIME_PIN_DIR", "/nonexistent/steptime-test", 1);
	setenv("STEPTIME_QUIET", "1", 1);
	snprintf(self->dir, sizeof(self->dir), "/tmp/steptime-tx-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->phases, sizeof(self->phases), "%s/phases", self->dir);
	setenv("STEPTIME_PHASE_DIR", self->phases, 1);
	self->dev = 3;
	self->cfg = aclprofCreateConfig(&self->dev, 1,
					ACL_AICORE_ARITHMETIC_UTILIZATION,
					NULL, ACL_PROF_ACL_API |
					ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX);
	ASSERT_NE(NULL, self->cfg);
	ASSERT_EQ(ACL_SUCCESS, aclprofInit(self->dir, strlen(self->dir)));
}

FIXTURE_TEARDOWN(tx)
{
	char cmd[128];

	aclprofFinalize();
	aclprofDestroyConfig(self->cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("cannot remove %s", self->dir);
}

static void *stamp_with(const char *msg)
{
	void *s = aclprofCreateStamp();

	if (s && aclprofSetStampTraceMessage(s, msg, strlen(msg)))
		return NULL;
	return s;
}

/* A step record as the reader returns it, for steptime_phases__get(). */
static struct steptime_step_stats step_of(__u64 index_id)
{
	struct steptime_step_stats s;
	struct stat st;

	memset(&s, 0, sizeof(s));
	stat("/proc/self/ns/pid", &st);
	s.pidns_ino = (__u32)st.st_ino;
	s.ns_tgid = s.tgid = (__u32)getpid();
	s.index_id = index_id;
	s.uid = (__u32)geteuid();
	return s;
}

static const struct steptime_phase *phase_named(const struct steptime_phase *ph,
						int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(ph[i].name, name))
			return &ph[i];
	return NULL;
}

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

/* ---- msproftx: codes before aclprofStart -------------------------------- */

TEST_F(tx, msproftx_before_start)
{
	uint32_t id = 77;
	int x;

	EXPECT_EQ(NULL, aclprofCreateStamp());
	EXPECT_EQ(-1, aclprofMark(&x));
	EXPECT_EQ(-1, aclprofMark(NULL));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclprofPush(NULL));
	EXPECT_EQ(-1, aclprofPush(&x));
	EXPECT_EQ(-1, aclprofPop());
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclprofRangeStart(NULL, &id));
	EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclprofRangeStart(&x, NULL));
	EXPECT_EQ(-1, aclprofRangeStart(&x, &id));
	EXPECT_EQ(77, id);
	EXPECT_EQ(-1, aclprofRangeStop(0));
	EXPECT_EQ(-1, aclprofMarkEx("m", 1, STREAM));
	EXPECT_EQ(-1, aclprofSetStampTraceMessage(&x, "m", 1));
	aclprofDestroyStamp(NULL);	/* logged, no crash */
}

/* A session without ACL_PROF_MSPROFTX does not enable msproftx. */
TEST_F(tx, msproftx_needs_the_flag)
{
	aclprofConfig *cfg = aclprofCreateConfig(&self->dev, 1,
			ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME);

	ASSERT_NE(NULL, cfg);
	ASSERT_EQ(ACL_SUCCESS, aclprofStart(cfg));
	EXPECT_EQ(NULL, aclprofCreateStamp());
	ASSERT_EQ(ACL_SUCCESS, aclprofStop(cfg));
	EXPECT_EQ(ACL_SUCCESS, aclprofDestroyConfig(cfg));
}

TEST_F(tx, pool_of_100_and_range_ids)
{
	void *s[101];
	uint32_t id;
	int i;

	ASSERT_EQ(ACL_SUCCESS, aclprofStart(self->cfg));
	for (i = 0; i < 100; i++)
		ASSERT_NE(NULL, s[i] = aclprofCreateStamp());
	EXPECT_EQ(NULL, aclprofCreateStamp());
	/* A range id is the stamp's pool slot: the first is 0. */
	ASSERT_EQ(ACL_SUCCESS, aclprofRangeStart(s[0], &id));
	EXPECT_EQ(0, id);
	ASSERT_EQ(ACL_SUCCESS, aclprofRangeStart(s[99], &id));
	EXPECT_EQ(99, id);
	EXPECT_EQ(ACL_SUCCESS, aclprofRangeStop(0));
	EXPECT_EQ(-1, aclprofRangeStop(0));	/* already stopped */
	EXPECT_EQ(-1, aclprofRangeStop(50));	/* never started */
	EXPECT_EQ(-1, aclprofRangeStop(100));	/* outside the pool */
	aclprofDestroyStamp(s[42]);
	EXPECT_EQ(-1, aclprofMark(s[42]));	/* destroyed: not live */
	ASSERT_NE(NULL, s[100] = aclprofCreateStamp());
	EXPECT_EQ(NULL, aclprofCreateStamp());
	EXPECT_EQ(-1, aclprofMark((char *)s[1] + 1));	/* not a stamp */
	EXPECT_EQ(ACL_SUCCESS, aclprofRangeStop(99));
	ASSERT_EQ(ACL_SUCCESS, aclprofStop(self->cfg));
	/* Valid until aclprofFinalize, as in CANN. */
	EXPECT_EQ(ACL_SUCCESS, aclprofMark(s[3]));
	ASSERT_EQ(ACL_SUCCESS, aclprofFinalize());
	EXPECT_EQ(-1, aclprofMark(s[3]));
	EXPECT_EQ(NULL, aclprofCreateStamp());
}

TEST_F(tx, message_limits)
{
	char msg[200];
	void *s;

	memset(msg, 'a', sizeof(msg));
	msg[199] = '\0';
	ASSERT_EQ(ACL_SUCCESS, aclprofStart(self->cfg));
	ASSERT_NE(NULL, s = aclprofCreateStamp());
	EXPECT_EQ(ACL_SUCCESS, aclprofSetStampTraceMessage(s, msg, 127));
	EXPECT_EQ(-1, aclprofSetStampTraceMessage(s, msg, 128));
	EXPECT_EQ(-1, aclprofSetStampTraceMessage(s, NULL, 1));
	EXPECT_EQ(-1, aclprofSetStampTraceMessage(NULL, "x", 1));
	/* MarkEx: 1 .. 155 bytes, == strlen, a stream. */
	msg[155] = '\0';
	EXPECT_EQ(ACL_SUCCESS, aclprofMarkEx(msg, 155, STREAM));
	msg[155] = 'a';
	msg[156] = '\0';
	EXPECT_EQ(-1, aclprofMarkEx(msg, 156, STREAM));
	EXPECT_EQ(-1, aclprofMarkEx("abc", 2, STREAM));
	EXPECT_EQ(-1, aclprofMarkEx("", 0, STREAM));
	/* NULL is no default stream here: CANN's MarkEx refuses it. */
	EXPECT_EQ(-1, aclprofMarkEx("abc", 3, NULL));
	EXPECT_EQ(-1, aclprofMarkEx(NULL, 3, STREAM));
	ASSERT_EQ(ACL_SUCCESS, aclprofStop(self->cfg));
}

static void *pop_thread(void *arg)
{
	return (void *)(long)aclprofPop();
}

/* One stack for the process: a push in one thread, a pop in another. */
TEST_F(tx, push_pop_one_stack)
{
	pthread_t t;
	void *ret;
	void *s;

	ASSERT_EQ(ACL_SUCCESS, aclprofStart(self->cfg));
	ASSERT_NE(NULL, s = stamp_with("outer"));
	EXPECT_EQ(ACL_SUCCESS, aclprofPush(s));
	EXPECT_EQ(ACL_SUCCESS, aclprofPush(s));	/* twice: two ranges */
	ASSERT_EQ(0, pthread_create(&t, NULL, pop_thread, NULL));
	pthread_join(t, &ret);
	EXPECT_EQ(ACL_SUCCESS, (long)ret);
	EXPECT_EQ(ACL_SUCCESS, aclprofPop());
	EXPECT_EQ(-1, aclprofPop());
	ASSERT_EQ(ACL_SUCCESS, aclprofStop(self->cfg));
}

#define MSPROF_TX_HDR "Device_id,pid,tid,category,event_type,"		\
	"payload_type,payload_value,Start_time(us),End_time(us),"	\
	"message_type,message,domain,Device Start_time(us),"		\
	"Device End_time(us)\n"

static int count_lines(const char *s)
{
	int n = 0;

	for (; (s = strchr(s, '\n')); s++)
		n++;
	return n;
}

/* aclprofStop writes msprof's msprof_tx columns, one row per record. */
TEST_F(tx, msprof_tx_csv)
{
	char path[160];
	uint32_t id;
	void *a, *b;
	char *csv;

	ASSERT_EQ(ACL_SUCCESS, aclprofStart(self->cfg));
	ASSERT_NE(NULL, a = stamp_with("mark \"one\""));
	ASSERT_NE(NULL, b = stamp_with("range,two"));
	EXPECT_EQ(ACL_SUCCESS, aclprofMark(a));
	EXPECT_EQ(ACL_SUCCESS, aclprofPush(a));
	EXPECT_EQ(ACL_SUCCESS, aclprofPop());
	EXPECT_EQ(ACL_SUCCESS, aclprofRangeStart(b, &id));
	EXPECT_EQ(ACL_SUCCESS, aclprofRangeStop(id));
	EXPECT_EQ(ACL_SUCCESS, aclprofMarkEx("ex", 2, STREAM));
	mstxMarkA("mstx mark", NULL);
	ASSERT_EQ(ACL_SUCCESS, aclprofStop(self->cfg));
	snprintf(path, sizeof(path), "%s/steptime_msprof_tx_%d_1.csv",
		 self->dir, (int)getpid());
	ASSERT_NE(NULL, csv = slurp(path));
	EXPECT_EQ(0, strncmp(csv, MSPROF_TX_HDR, strlen(MSPROF_TX_HDR)));
	EXPECT_NE(NULL, strstr(csv, ",marker,0,0,"));
	EXPECT_NE(NULL, strstr(csv, ",push/pop,0,0,"));
	EXPECT_NE(NULL, strstr(csv, ",start/end,0,0,"));
	EXPECT_NE(NULL, strstr(csv, ",marker_ex,0,0,"));
	EXPECT_NE(NULL, strstr(csv, "\"mark \"\"one\"\"\",\"msproftx\""));
	EXPECT_NE(NULL, strstr(csv, "\"range,two\""));
	EXPECT_NE(NULL, strstr(csv, "\"mstx mark\",\"default\""));
	/* Device_id of the session's first device; 5 rows + header. */
	EXPECT_EQ(6, count_lines(csv));
	EXPECT_NE(NULL, strstr(csv, "\n3,"));
}

/* ---- phases ------------------------------------------------------------- */

TEST_F(tx, ranges_are_phases_of_the_open_step)
{
	struct steptime_phase ph[8];
	const struct steptime_phase *p;
	struct steptime_step *st;
	struct timespec ms5 = { 0, 5000000 };
	struct steptime_step_stats rec;
	__u64 r;
	void *s;
	int n;

	ASSERT_EQ(ACL_SUCCESS, aclprofStart(self->cfg));
	ASSERT_NE(NULL, s = stamp_with("forward"));
	ASSERT_NE(NULL, st = steptime_step__new());
	steptime_step__mark(st, STEPTIME_TAG_START, NULL);
	EXPECT_EQ(ACL_SUCCESS, aclprofPush(s));
	nanosleep(&ms5, NULL);
	EXPECT_EQ(ACL_SUCCESS, aclprofPop());
	EXPECT_EQ(ACL_SUCCESS, aclprofPush(s));
	EXPECT_EQ(ACL_SUCCESS, aclprofPop());
	/* A stream-ordered range: 3 ms on the (fake) device. */
	r = steptime_range__start("allreduce", STREAM);
	ASSERT_NE(0, r);
	dev_clock_ns += 3000000;
	EXPECT_EQ(0, steptime_range__end(r));
	EXPECT_EQ(-ENOENT, steptime_range__end(r));
	EXPECT_EQ(0, steptime__mark_msg("checkpoint", NULL));
	EXPECT_EQ(-EINVAL, steptime__mark_msg("", NULL));
	rec = step_of(steptime_step__index_id(st));
	EXPECT_EQ(0, steptime_phases__get(&rec, ph, 8));	/* still open */
	steptime_step__mark(st, STEPTIME_TAG_END, NULL);

	n = steptime_phases__get(&rec, ph, 8);
	ASSERT_EQ(3, n);
	ASSERT_NE(NULL, p = phase_named(ph, n, "forward"));
	EXPECT_EQ(2, p->count);
	EXPECT_GE(p->host_ns, 5000000);
	EXPECT_EQ(0, p->device_count);
	ASSERT_NE(NULL, p = phase_named(ph, n, "allreduce"));
	EXPECT_EQ(1, p->count);
	EXPECT_EQ(1, p->device_count);
	EXPECT_EQ(3000000, p->device_ns);
	ASSERT_NE(NULL, p = phase_named(ph, n, "checkpoint"));
	EXPECT_EQ(1, p->count);
	EXPECT_EQ(0, p->host_ns);
	EXPECT_EQ(0, events_live);
	/* Fewer slots than phases: the count is still the total. */
	EXPECT_EQ(3, steptime_phases__get(&rec, ph, 1));
	EXPECT_EQ(-EINVAL, steptime_phases__get(NULL, ph, 1));
	steptime_step__free(st);
	ASSERT_EQ(ACL_SUCCESS, aclprofStop(self->cfg));
}

/* Device time not ready when the step ends: written at the next END. */
TEST_F(tx, device_time_read_one_step_late)
{
	struct steptime_phase ph[4];
	struct steptime_step_stats r1, r2;
	struct steptime_step *a, *b;
	__u64 r;

	ASSERT_NE(NULL, a = steptime_step__new());
	ASSERT_NE(NULL, b = steptime_step__new());
	r1 = step_of(steptime_step__index_id(a));
	r2 = step_of(steptime_step__index_id(b));
	steptime_step__mark(a, STEPTIME_TAG_START, NULL);
	r = steptime_range__start("matmul", STREAM);
	dev_clock_ns += 2000000;
	hold_events = 1;
	steptime_range__end(r);
	hold_events = 0;
	steptime_step__mark(a, STEPTIME_TAG_END, NULL);
	EXPECT_EQ(0, steptime_phases__get(&r1, ph, 4));
	steptime_step__mark(b, STEPTIME_TAG_START, NULL);
	steptime__mark_msg("m", NULL);
	steptime_step__mark(b, STEPTIME_TAG_END, NULL);
	ASSERT_EQ(1, steptime_phases__get(&r1, ph, 4));
	EXPECT_EQ(2000000, ph[0].device_ns);
	EXPECT_EQ(1, steptime_phases__get(&r2, ph, 4));
	EXPECT_EQ(0, events_live);
	steptime_step__free(a);
	steptime_step__free(b);
}

/* A range outside any step is no phase; a step without ranges no record. */
TEST_F(tx, no_step_no_phase)
{
	struct steptime_phase ph[4];
	struct steptime_step *a;
	struct steptime_step_stats rec;
	__u64 r;

	r = steptime_range__start("loose", NULL);
	ASSERT_NE(0, r);
	ASSERT_NE(NULL, a = steptime_step__new());
	rec = step_of(steptime_step__index_id(a));
	steptime_step__mark(a, STEPTIME_TAG_START, NULL);
	steptime_step__mark(a, STEPTIME_TAG_END, NULL);
	EXPECT_EQ(0, steptime_range__end(r));
	EXPECT_EQ(0, steptime_phases__get(&rec, ph, 4));
	EXPECT_EQ(0, steptime_range__start(NULL, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, steptime_range__start("", NULL));
	steptime_step__free(a);
}

/*
 * STEPTIME_PHASES_MAX names keep their own phase, the 32nd too; the names
 * after them share "(other)", and a name already kept still goes to its
 * own phase once the table is full.
 */
TEST_F(tx, phases_up_to_the_limit_keep_their_names)
{
	struct steptime_phase ph[STEPTIME_PHASES_PER_STEP + 1];
	const struct steptime_phase *p;
	struct steptime_step_stats rec;
	struct steptime_step *a;
	char name[16];
	int i, n;

	ASSERT_NE(NULL, a = steptime_step__new());
	rec = step_of(steptime_step__index_id(a));
	steptime_step__mark(a, STEPTIME_TAG_START, NULL);
	for (i = 0; i < STEPTIME_PHASES_MAX + 3; i++) {
		snprintf(name, sizeof(name), "phase%02d", i);
		ASSERT_EQ(0, steptime__mark_msg(name, NULL));
	}
	ASSERT_EQ(0, steptime__mark_msg("phase05", NULL));
	ASSERT_EQ(0, steptime__mark_msg("phase31", NULL));
	ASSERT_EQ(0, steptime__mark_msg("phase33", NULL));
	steptime_step__mark(a, STEPTIME_TAG_END, NULL);
	n = steptime_phases__get(&rec, ph, STEPTIME_PHASES_PER_STEP + 1);
	ASSERT_EQ(STEPTIME_PHASES_PER_STEP, n);
	for (i = 0; i < STEPTIME_PHASES_MAX; i++) {
		snprintf(name, sizeof(name), "phase%02d", i);
		p = phase_named(ph, n, name);
		ASSERT_NE(NULL, p) TH_LOG("%s", name);
		EXPECT_EQ(i == 5 || i == 31 ? 2 : 1, p->count) TH_LOG("%s", name);
	}
	ASSERT_NE(NULL, p = phase_named(ph, n, "(other)"));
	EXPECT_EQ(4, p->count);		/* phase32, phase33, phase34, phase33 */
	EXPECT_EQ(NULL, phase_named(ph, n, "phase32"));
	steptime_step__free(a);
}

/* ---- phase files: another user's links and files ------------------------ */

#define NOBODY	65534

/* One step with one phase, ended: its record for the reader. */
static struct steptime_step_stats step_with_phase(void)
{
	struct steptime_step *st = steptime_step__new();
	struct steptime_step_stats rec;

	rec = step_of(st ? steptime_step__index_id(st) : 0);
	steptime_step__mark(st, STEPTIME_TAG_START, NULL);
	steptime__mark_msg("p", NULL);
	steptime_step__mark(st, STEPTIME_TAG_END, NULL);
	steptime_step__free(st);
	return rec;
}

/* This process's phase file under @phases, as lib/phase_write.c names it. */
static void phase_path(char *buf, size_t len, const char *phases)
{
	struct stat st;

	stat("/proc/self/ns/pid", &st);
	snprintf(buf, len, "%s/%u/%u.%d.phases", phases, (unsigned int)geteuid(),
		 (unsigned int)st.st_ino, (int)getpid());
}

/* Entries in @dir but . and .., or -1 when it cannot be read. */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static char *file_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/*
 * A user's phase directory made a symbolic link by another user (to a
 * directory the victim can write, say): nothing is written through it.
 */
TEST_F(tx, phase_dir_link_not_followed)
{
	struct steptime_phase ph[2];
	struct steptime_step_stats rec;
	char link[160], victim[96];

	snprintf(victim, sizeof(victim), "%s/victim", self->dir);
	ASSERT_EQ(0, mkdir(victim, 0755));
	ASSERT_EQ(0, mkdir(self->phases, 01777));
	snprintf(link, sizeof(link), "%s/%u", self->phases,
		 (unsigned int)geteuid());
	ASSERT_EQ(0, symlink(victim, link));
	rec = step_with_phase();
	EXPECT_EQ(0, dir_entries(victim));
	EXPECT_EQ(0, steptime_phases__get(&rec, ph, 2));
}

/* The phase file's name a link to another file: that file is untouched. */
TEST_F(tx, phase_file_link_not_followed)
{
	struct steptime_phase ph[2];
	struct steptime_step_stats rec;
	char path[192], victim[96], text[64];
	FILE *f;

	snprintf(victim, sizeof(victim), "%s/victim", self->dir);
	ASSERT_NE(NULL, f = fopen(victim, "w"));
	fputs("IMPORTANT ROOT DATA\n", f);
	fclose(f);
	ASSERT_EQ(0, mkdir(self->phases, 01777));
	phase_path(path, sizeof(path), self->phases);
	*strrchr(path, '/') = '\0';
	ASSERT_EQ(0, mkdir(path, 0755));
	phase_path(path, sizeof(path), self->phases);
	ASSERT_EQ(0, symlink(victim, path));
	rec = step_with_phase();
	EXPECT_STREQ("IMPORTANT ROOT DATA\n", file_text(victim, text, sizeof(text)));
	EXPECT_EQ(0, steptime_phases__get(&rec, ph, 2));
}

/* Directories that others could write or own are not used. */
TEST_F(tx, phase_dirs_others_can_write_refused)
{
	struct steptime_phase ph[2];
	struct steptime_step_stats rec;

	if (geteuid())
		SKIP(return, "needs root (chown to another user)");
	/* The shared directory writable by all, and not sticky. */
	ASSERT_EQ(0, mkdir(self->phases, 0777));
	ASSERT_EQ(0, chmod(self->phases, 0777));
	rec = step_with_phase();
	EXPECT_EQ(0, dir_entries(self->phases));
	EXPECT_EQ(0, steptime_phases__get(&rec, ph, 2));
}

TEST_F(tx, phase_dir_of_another_user_refused)
{
	struct steptime_phase ph[2];
	struct steptime_step_stats rec;
	char own[160];

	if (geteuid())
		SKIP(return, "needs root (chown to another user)");
	ASSERT_EQ(0, mkdir(self->phases, 01777));
	snprintf(own, sizeof(own), "%s/%u", self->phases,
		 (unsigned int)geteuid());
	ASSERT_EQ(0, mkdir(own, 0777));
	ASSERT_EQ(0, chown(own, NOBODY, NOBODY));
	rec = step_with_phase();
	EXPECT_EQ(0, dir_entries(own));
	EXPECT_EQ(0, steptime_phases__get(&rec, ph, 2));
}

/*
 * The reader takes a step's phases only from a regular file of one name,
 * owned by the step's process's user: never another user's file planted
 * at that name, a link, or a FIFO (which would stall it).
 */
TEST_F(tx, reader_trusts_only_the_owners_file)
{
	struct steptime_phase ph[2];
	struct steptime_step_stats rec;
	char path[192], other[200];
	FILE *f;

	if (geteuid())
		SKIP(return, "needs root (chown to another user)");
	rec = step_of(77);
	phase_path(path, sizeof(path), self->phases);
	ASSERT_EQ(0, mkdir(self->phases, 01777));
	*strrchr(path, '/') = '\0';
	ASSERT_EQ(0, mkdir(path, 0755));
	phase_path(path, sizeof(path), self->phases);
	ASSERT_NE(NULL, f = fopen(path, "w"));
	fputs("77 1 5000 0 0 forged\n", f);
	fclose(f);
	ASSERT_EQ(1, steptime_phases__get(&rec, ph, 2));
	EXPECT_STREQ("forged", ph[0].name);
	/* Another user's file. */
	ASSERT_EQ(0, chown(path, NOBODY, NOBODY));
	EXPECT_EQ(0, steptime_phases__get(&rec, ph, 2));
	/* The step's user is another: its file is sought in its directory. */
	rec.uid = NOBODY;
	EXPECT_EQ(0, steptime_phases__get(&rec, ph, 2));
	rec.uid = (__u32)geteuid();
	ASSERT_EQ(0, chown(path, geteuid(), getegid()));
	ASSERT_EQ(1, steptime_phases__get(&rec, ph, 2));
	/* A second name: a hard link to some file of this user's. */
	snprintf(other, sizeof(other), "%s.other", path);
	ASSERT_EQ(0, link(path, other));
	EXPECT_EQ(0, steptime_phases__get(&rec, ph, 2));
	ASSERT_EQ(0, unlink(path));
	/* A symbolic link to it. */
	ASSERT_EQ(0, symlink(other, path));
	EXPECT_EQ(0, steptime_phases__get(&rec, ph, 2));
	ASSERT_EQ(0, unlink(path));
	/* A FIFO nobody writes: refused at once. */
	ASSERT_EQ(0, mkfifo(path, 0644));
	EXPECT_EQ(0, steptime_phases__get(&rec, ph, 2));
}

/*
 * A long run: the file keeps the last STEPTIME_PROC_STEPS steps (what the
 * BPF side keeps records of) to twice that, not every step ever.
 */
TEST_F(tx, phase_file_keeps_the_last_steps)
{
	struct steptime_phase ph[2];
	struct steptime_step_stats rec[40];
	char path[192], line[256];
	__u64 first = 0, last = 0, id;
	int i, lines = 0;
	FILE *f;

	for (i = 0; i < 40; i++)
		rec[i] = step_with_phase();
	/* Past twice the steps kept: the oldest are gone, the last kept. */
	EXPECT_EQ(0, steptime_phases__get(&rec[0], ph, 2));
	for (i = 40 - STEPTIME_PROC_STEPS; i < 40; i++)
		EXPECT_EQ(1, steptime_phases__get(&rec[i], ph, 2)) {
			TH_LOG("step %d of 40", i + 1);
		}
	phase_path(path, sizeof(path), self->phases);
	ASSERT_NE(NULL, f = fopen(path, "r"));
	while (fgets(line, sizeof(line), f)) {
		ASSERT_EQ(1, sscanf(line, "%llu", (unsigned long long *)&id));
		if (!lines++)
			first = id;
		last = id;
	}
	fclose(f);
	EXPECT_LE(lines, 2 * STEPTIME_PROC_STEPS);
	EXPECT_GE(lines, STEPTIME_PROC_STEPS);
	EXPECT_EQ(rec[39].index_id, last);
	EXPECT_LE(first, rec[40 - STEPTIME_PROC_STEPS].index_id);
	*strrchr(path, '/') = '\0';
	EXPECT_EQ(1, dir_entries(path));	/* no temporary file left */
}

/*
 * Phases are read as the steps are: unloaded, by their user alone (file
 * 0600 in a 0700 directory); under maps of mode 0640 group G, by G too
 * (0640 and 0750, group G), past a directory an earlier process made 0755
 * and a rotation (the file replaced by a new one).
 */
TEST_F(tx, phase_file_mode_follows_the_maps)
{
	struct steptime_step_stats rec;
	struct st_pins pins;
	char path[192], dir[192], map[320];
	struct stat st;
	gid_t g = 44;
	pid_t pid;
	int i, err;

	rec = step_with_phase();
	(void)rec;
	phase_path(path, sizeof(path), self->phases);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0600, st.st_mode & 07777);
	ASSERT_EQ(0, stat(dir, &st));
	EXPECT_EQ(0700, st.st_mode & 07777);

	err = st_pins_init(&pins);
	if (geteuid() || err)
		SKIP(return, "needs root (bpffs, maps) for the maps' mode");
	ASSERT_EQ(0, st_steps_create(&pins));
	ASSERT_EQ(0, st_pin_path(&pins, "steps", map, sizeof(map)));
	ASSERT_EQ(0, chmod(map, 0640));
	ASSERT_EQ(0, chown(map, 0, g));
	setenv("STEPTIME_PIN_DIR", pins.dir, 1);
	ASSERT_EQ(0, chmod(dir, 0755));
	/* A new process: its phase file is opened anew. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		for (i = 0; i < 2 * STEPTIME_PROC_STEPS + 2; i++)
			step_with_phase();
		phase_path(path, sizeof(path), self->phases);
		_exit(stat(path, &st) || (st.st_mode & 07777) != 0640 ||
		      st.st_gid != g || stat(dir, &st) ||
		      (st.st_mode & 07777) != 0750 || st.st_gid != g);
	}
	ASSERT_EQ(pid, waitpid(pid, &i, 0));
	EXPECT_TRUE(WIFEXITED(i) && WEXITSTATUS(i) == 0);
	st_pins_fini(&pins);
}

int st_phases_sweep(void);	/* lib/phase_write.h: hidden, linked statically */

static bool exists(const char *dir, const char *name)
{
	char path[320];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void touch(const char *dir, const char *name)
{
	char path[320];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
}

/*
 * `steptime unload`'s sweep: the phase files (and a rotation's leftover)
 * of a process gone are removed; this process's, other files, and (outside
 * the initial PID namespace) those of a namespace none of whose processes
 * is seen stay.
 */
TEST_F(tx, sweep_removes_the_files_of_processes_gone)
{
	char dir[192], name[64], dead[64], dead_new[80];
	bool init_ns;
	struct stat st;
	pid_t pid;
	int status;

	ASSERT_EQ(0, stat("/proc/self/ns/pid", &st));
	init_ns = st.st_ino == 0xeffffffcu;
	ASSERT_EQ(0, mkdir(self->phases, 01777));
	snprintf(dir, sizeof(dir), "%s/%u", self->phases, (unsigned int)geteuid());
	ASSERT_EQ(0, mkdir(dir, 0700));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	snprintf(name, sizeof(name), "%u.%d.phases", (unsigned int)st.st_ino, (int)getpid());
	snprintf(dead, sizeof(dead), "%u.%d.phases", (unsigned int)st.st_ino, (int)pid);
	snprintf(dead_new, sizeof(dead_new), "%s.new", dead);
	touch(dir, name);
	touch(dir, dead);
	touch(dir, dead_new);
	touch(dir, "12345.1.phases");
	touch(dir, "1.2.phases.old");
	touch(dir, "notes");
	EXPECT_EQ(init_ns ? 3 : 2, st_phases_sweep());
	EXPECT_TRUE(exists(dir, name));
	EXPECT_FALSE(exists(dir, dead));
	EXPECT_FALSE(exists(dir, dead_new));
	EXPECT_EQ(!init_ns, exists(dir, "12345.1.phases"));
	EXPECT_TRUE(exists(dir, "1.2.phases.old"));
	EXPECT_TRUE(exists(dir, "notes"));
}

/* ---- MindSpore: AscendProfiler::StepStart / StepStop, exactly ----------- */

struct ms_step_info {
	bool startFlag;
	bool endFlag;
	uint64_t indexId;
};

TEST_F(tx, mindspore_steps_carry_its_numbers)
{
	struct steptime_phase ph[4];
	struct steptime_step_stats rec;
	uint64_t step;

	ASSERT_EQ(ACL_SUCCESS, aclprofStart(self->cfg));
	for (step = 7; step <= 9; step++) {
		/* StepStart */
		aclprofStepInfo *info = aclprofCreateStepInfo();

		ASSERT_NE(NULL, info);
		((struct ms_step_info *)info)->indexId = step;
		/* Not loaded: dropped, answered as CANN does (success). */
		EXPECT_EQ(ACL_SUCCESS,
			  aclprofGetStepTimestamp(info, (aclprofStepTag)60000,
						  STREAM));
		mstxMarkA("ms op", NULL);
		/* StepStop */
		EXPECT_EQ(ACL_SUCCESS,
			  aclprofGetStepTimestamp(info, (aclprofStepTag)60001,
						  STREAM));
		aclprofDestroyStepInfo(info);
	}
	ASSERT_EQ(ACL_SUCCESS, aclprofStop(self->cfg));
	for (step = 7; step <= 9; step++) {
		rec = step_of(step);
		ASSERT_EQ(1, steptime_phases__get(&rec, ph, 4));
		EXPECT_STREQ("ms op", ph[0].name);
	}
}

/* ---- torch_npu: profiler.step() through mstx ---------------------------- */

TEST_F(tx, torch_npu_step_ranges_are_steps)
{
	struct steptime_phase ph[4];
	struct steptime_step_stats rec;
	mstxDomainHandle_t d;
	mstxRangeId step, op;
	char name[32];
	int i;

	/* profile.start(): ProfilerStep#0; step(): end it, start the next. */
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "ProfilerStep#%d", i);
		step = mstxRangeStartA(name, STREAM);
		ASSERT_NE(MSTX_INVALID_ID, step);
		op = mstxRangeStartA("aten::mm", STREAM);
		dev_clock_ns += 1000000;
		mstxRangeEnd(op);
		mstxMarkA("loss", NULL);
		mstxRangeEnd(step);
	}
	/* The dynamic profiler: "step N". */
	step = mstxRangeStartA("step 41", NULL);
	mstxMarkA("dyn", NULL);
	mstxRangeEnd(step);
	for (i = 0; i < 3; i++) {
		rec = step_of(i + 1);	/* ProfilerStep#N is step N + 1 */
		ASSERT_EQ(2, steptime_phases__get(&rec, ph, 4));
		EXPECT_STREQ("aten::mm", ph[0].name);
		EXPECT_EQ(1000000, ph[0].device_ns);
		EXPECT_STREQ("loss", ph[1].name);
	}
	rec = step_of(42);
	EXPECT_EQ(1, steptime_phases__get(&rec, ph, 4));
	/* Names that only look like steps are ranges. */
	rec = step_of(6);
	step = mstxRangeStartA("ProfilerStep#5x", NULL);
	mstxRangeEnd(step);
	EXPECT_EQ(0, steptime_phases__get(&rec, ph, 4));
	/* Bad input: ignored as CANN ignores it. */
	EXPECT_EQ(MSTX_INVALID_ID, mstxRangeStartA(NULL, NULL));
	EXPECT_EQ(MSTX_INVALID_ID, mstxRangeStartA("", NULL));
	mstxRangeEnd(MSTX_INVALID_ID);
	mstxRangeEnd(123456789);
	mstxMarkA(NULL, NULL);
	EXPECT_EQ(NULL, mstxDomainCreateA(NULL));
	ASSERT_NE(NULL, d = mstxDomainCreateA("comm"));
	op = mstxDomainRangeStartA(d, "hcom", NULL);
	EXPECT_NE(MSTX_INVALID_ID, op);
	mstxDomainRangeEnd(d, op);
	mstxDomainMarkA(d, "x", NULL);
	mstxDomainDestroy(d);
	EXPECT_EQ(MSTX_INVALID_ID, mstxDomainRangeStartA(NULL, "x", NULL));
	EXPECT_EQ(0, events_live);
}

TEST_F(tx, range_table_full)
{
	static __u64 ids[STEPTIME_RANGES_MAX];
	int i;

	for (i = 0; i < STEPTIME_RANGES_MAX; i++)
		ASSERT_NE(0, ids[i] = steptime_range__start("r", NULL));
	EXPECT_EQ(0, steptime_range__start("r", NULL));
	EXPECT_EQ(ENOSPC, errno);
	for (i = 0; i < STEPTIME_RANGES_MAX; i++)
		ASSERT_EQ(0, steptime_range__end(ids[i]));
}

/* `steptime stat` shows a step's phases (JSON and table). */
TEST_F(tx, cli_stat_shows_phases)
{
	const char *cli = getenv("STEPTIME_CLI");
	struct steptime_step_stats rec;
	struct steptime_step *st;
	struct st_pins pins;
	char skip[64], cmd[2048], *out;
	__u64 r;
	int err;

	if (!cli)
		SKIP(return, "STEPTIME_CLI not set");
	err = st_pins_init(&pins);
	if (geteuid() || err)
		SKIP(return, "needs root (bpffs, maps)");
	(void)skip;
	ASSERT_EQ(0, st_steps_create(&pins));
	ASSERT_NE(NULL, st = steptime_step__new());
	steptime_step__mark(st, STEPTIME_TAG_START, NULL);
	r = steptime_range__start("data \"load\"", STREAM);
	dev_clock_ns += 4000000;
	steptime_range__end(r);
	steptime_step__mark(st, STEPTIME_TAG_END, NULL);
	rec = step_of(steptime_step__index_id(st));
	rec.state = STEPTIME_STEP_DONE;
	rec.flags = STEPTIME_F_HOST_START | STEPTIME_F_HOST_END;
	rec.host_start_ns = 1000;
	rec.host_end_ns = 9000;
	ASSERT_EQ(0, st_steps_add(&pins, &rec));
	snprintf(cmd, sizeof(cmd), "%s stat --pin %s -o json > %s/stat.json && "
		 "%s stat --pin %s > %s/stat.txt", cli, pins.dir, self->dir,
		 cli, pins.dir, self->dir);
	EXPECT_EQ(0, system(cmd));
	snprintf(cmd, sizeof(cmd), "%s/stat.json", self->dir);
	ASSERT_NE(NULL, out = slurp(cmd));
	EXPECT_NE(NULL, strstr(out, "\"phases\": [{\"name\": \"data \\\"load\\\"\", "
			       "\"count\": 1, \"host_ns\": "));
	EXPECT_NE(NULL, strstr(out, "\"device_ns\": 4000000, \"device_count\": 1}]}"));
	if (!_metadata->passed)
		TH_LOG("%s", out);
	snprintf(cmd, sizeof(cmd), "%s/stat.txt", self->dir);
	ASSERT_NE(NULL, out = slurp(cmd));
	EXPECT_NE(NULL, strstr(out, "    phase data \"load\""));
	EXPECT_NE(NULL, strstr(out, "4000.000 us device (1)"));
	if (!_metadata->passed)
		TH_LOG("%s", out);
	steptime_step__free(st);
	st_pins_fini(&pins);
}

/* `steptime stat` prints every phase up to the limit, and "(other)". */
TEST_F(tx, cli_stat_prints_every_phase)
{
	const char *cli = getenv("STEPTIME_CLI");
	struct steptime_step_stats rec;
	struct steptime_step *st;
	struct st_pins pins;
	char cmd[2048], name[64], *out;
	int i, err;

	if (!cli)
		SKIP(return, "STEPTIME_CLI not set");
	err = st_pins_init(&pins);
	if (geteuid() || err)
		SKIP(return, "needs root (bpffs, maps)");
	ASSERT_EQ(0, st_steps_create(&pins));
	ASSERT_NE(NULL, st = steptime_step__new());
	steptime_step__mark(st, STEPTIME_TAG_START, NULL);
	for (i = 0; i < STEPTIME_PHASES_MAX + 2; i++) {
		snprintf(name, sizeof(name), "phase%02d", i);
		ASSERT_EQ(0, steptime__mark_msg(name, NULL));
	}
	steptime_step__mark(st, STEPTIME_TAG_END, NULL);
	rec = step_of(steptime_step__index_id(st));
	rec.state = STEPTIME_STEP_DONE;
	rec.flags = STEPTIME_F_HOST_START | STEPTIME_F_HOST_END;
	rec.host_start_ns = 1000;
	rec.host_end_ns = 9000;
	ASSERT_EQ(0, st_steps_add(&pins, &rec));
	snprintf(cmd, sizeof(cmd), "%s stat --pin %s > %s/stat.txt", cli,
		 pins.dir, self->dir);
	EXPECT_EQ(0, system(cmd));
	snprintf(cmd, sizeof(cmd), "%s/stat.txt", self->dir);
	ASSERT_NE(NULL, out = slurp(cmd));
	for (i = 0; i < STEPTIME_PHASES_MAX; i++) {
		snprintf(name, sizeof(name), "    phase phase%02d", i);
		EXPECT_NE(NULL, strstr(out, name)) TH_LOG("%s", name);
	}
	EXPECT_NE(NULL, strstr(out, "    phase (other)"));
	snprintf(name, sizeof(name), "phase%02d", STEPTIME_PHASES_MAX);
	EXPECT_EQ(NULL, strstr(out, name));
	if (!_metadata->passed)
		TH_LOG("%s", out);
	steptime_step__free(st);
	st_pins_fini(&pins);
}

TEST_HARNESS_MAIN
