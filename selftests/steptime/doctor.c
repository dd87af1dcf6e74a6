// SPDX-License-Identifier: GPL-2.0
/*
 * `steptime doctor` on npusim, driven as CANN's runtime drives the driver
 * (trs_raw.h), in an attach mode with the kernel-function hooks (fentry)
 * and one without (tracepoint), for each SQ mode: its verdicts follow what
 * steptime can see.
 *
 *   kio: every SQE passes SEND: task counts exact; tasks without a report
 *        of their own complete at a bound; stream marks with reports give
 *        the device time exactly.
 *   uio_t: the SQE trace hook sees each SQE (fentry): task counts exact;
 *        without it (tracepoint) absent, and doctor names the missing hook.
 *   uio_d: no kernel hook sees the SQEs: task counts absent, doctor names
 *        the uio_d SQ and the HAL.
 *
 * The SQs are raw ioctls (no libascend_hal.so, so no HAL probes), each mode
 * named: kio by an ALLOC that asks for no mapping (sq_que_addr 0), uio_t and
 * uio_d by npusim's config (sq_mode CONFIG), whatever the chip would pick.
 *
 * Each test runs in its own process (the harness forks): a process's uio
 * taint never reaches another test.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <steptime/steptime.h>
#include <steptime/loader.h>

#include "kselftest_harness.h"
#include "st_run.h"
#include "ksft_filter.h"
#include "trs_raw.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	300

#define PIN_DIR		"/sys/fs/bpf/steptime_doctor"
#define CLI		"${STEPTIME_CLI:-${O:-build}/steptime}"
#define TASK_NS		20000
#define SYNC_MS		20000
#define TASKS		6

/* Loaded once per attach mode: attaching costs seconds under TCG. */
static int ensure_loaded(int mode)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o),
		.attach_mode = mode,
		.pin_dir = PIN_DIR,
		.map_gid = -1,
	};
	struct steptime_info inf;

	if (steptime__read_info(PIN_DIR, &inf) == 0 &&
	    (int)inf.attach_mode == mode)
		return 0;
	steptime__unload(PIN_DIR);
	return steptime__load(&o);
}

__attribute__((constructor)) static void pin_dir_env(void)
{
	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
}

__attribute__((destructor)) static void unload_at_exit(void)
{
	steptime__unload(PIN_DIR);
}

FIXTURE(doc) {
	struct raw_dev d;
	char out[65536];
};

FIXTURE_VARIANT(doc) {
	int mode;
};

FIXTURE_VARIANT_ADD(doc, fentry) { .mode = STEPTIME_ATTACH_FENTRY };
FIXTURE_VARIANT_ADD(doc, tracepoint) { .mode = STEPTIME_ATTACH_TRACEPOINT };

FIXTURE_SETUP(doc)
{
	int err = ensure_loaded(variant->mode);

	if (err == -EOPNOTSUPP && variant->mode == STEPTIME_ATTACH_FENTRY)
		SKIP(longjmp(_metadata->env, 1),
		     "fentry: this kernel attaches no BPF trampoline to npusim");
	ASSERT_EQ(0, err) TH_LOG("steptime load (%s): %s",
				 steptime__attach_mode_str(variant->mode),
				 strerror(-err));
	self->d.fd = -1;
}

FIXTURE_TEARDOWN(doc)
{
	raw_dev_close(&self->d);
}

/*
 * doctor -p (this process) -o json into @out, checked valid JSON by
 * python3 where the guest has it; the text output fits 80 columns.
 */
static void doctor(struct __test_metadata *_metadata, char *out, size_t len)
{
	char cmd[256];
	int st, w = 0, max = 0;
	const char *p;

	snprintf(cmd, sizeof(cmd), CLI " doctor --pin %s -p %d", PIN_DIR, getpid());
	ASSERT_EQ(0, st_run(cmd, out, len)) TH_LOG("%s", out);
	for (p = out; *p; p++) {
		w = *p == '\n' ? 0 : w + 1;
		max = w > max ? w : max;
	}
	EXPECT_LE(max, 80) TH_LOG("%s", out);
	TH_LOG("%s", out);	/* shown when a check fails */
	if (!system("command -v python3 >/dev/null")) {
		snprintf(cmd, sizeof(cmd), CLI " doctor --pin %s -o json | python3 -m json.tool >/dev/null",
			 PIN_DIR);
		st = system(cmd);
		EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	}
	snprintf(cmd, sizeof(cmd), CLI " doctor --pin %s -p %d -o json", PIN_DIR,
		 getpid());
	ASSERT_EQ(0, st_run(cmd, out, len)) TH_LOG("%s", out);
}

static bool verdict_is(const char *json, const char *fig, const char *v)
{
	char want[128];

	snprintf(want, sizeof(want), "\"%s\": {\"verdict\": \"%s\"", fig, v);
	return strstr(json, want) != NULL;
}

/*
 * One step of TASKS tasks, host-marked, on mapped SQ of @uio_mode (device
 * 1, its config before in @old).
 */
static void uio_step(struct __test_metadata *_metadata, struct raw_dev *d,
		     struct raw_stream *s, __u32 uio_mode,
		     struct npusim_config *old)
{
	__u8 sqe[TASKS][TRS_SQE_SIZE];
	int i;

	ASSERT_EQ(0, raw_mode_set(1, uio_mode, old));
	ASSERT_EQ(0, raw_dev_open(d, 1));
	ASSERT_EQ(0, raw_stream_create(d, s,
				       &(struct raw_stream_opts){ .mapped = true }));
	ASSERT_EQ(uio_mode == NPUSIM_UIO_T, s->uio.soft_que_flag);
	for (i = 0; i < TASKS; i++)
		raw_sqe(s, sqe[i], &(struct raw_task){ .wr_cqe = true,
			.duration_ns = TASK_NS });
	ASSERT_EQ(0, steptime__mark(1, STEPTIME_TAG_START, NULL));
	ASSERT_LE(0, raw_recv(s, sqe, 1, 0, false, 0));	/* marks read */
	ASSERT_EQ(0, raw_submit(s, sqe, TASKS));
	ASSERT_EQ(0, raw_sync(s, SYNC_MS));
	ASSERT_EQ(0, steptime__mark(1, STEPTIME_TAG_END, NULL));
	ASSERT_LE(0, raw_recv(s, sqe, 1, 0, false, 0));
}

/*
 * kio (named: the ALLOC asks for no mapping): a stream-marked step
 * (place-holders with reports) of TASKS tasks, only the last with a report
 * of its own.
 */
TEST_F(doc, kio)
{
	__u8 sqe[TASKS + 2][TRS_SQE_SIZE];
	struct raw_stream s;
	int i;

	ASSERT_EQ(0, raw_dev_open(&self->d, 0));
	ASSERT_EQ(0, raw_stream_create(&self->d, &s, &(struct raw_stream_opts){}));
	raw_sqe(&s, sqe[0], &(struct raw_task){ .mark = true, .index_id = 7,
		.tag = STEPTIME_TAG_START, .wr_cqe = true });
	for (i = 1; i <= TASKS; i++)
		raw_sqe(&s, sqe[i], &(struct raw_task){ .wr_cqe = i == TASKS,
			.duration_ns = TASK_NS });
	raw_sqe(&s, sqe[TASKS + 1], &(struct raw_task){ .mark = true,
		.index_id = 7, .tag = STEPTIME_TAG_END, .wr_cqe = true });
	ASSERT_EQ(0, raw_submit(&s, sqe, TASKS + 2));
	ASSERT_EQ(0, raw_sync(&s, SYNC_MS));
	doctor(_metadata, self->out, sizeof(self->out));
	EXPECT_NE(NULL, strstr(self->out, "\"0\": {\"kio\": 1, \"uio_t\": 0, \"uio_d\": 0"));
	EXPECT_NE(NULL, strstr(self->out, "\"taints\": []"));
	EXPECT_TRUE(verdict_is(self->out, "steps", "exact"));
	EXPECT_TRUE(verdict_is(self->out, "device_time", "exact"));
	EXPECT_NE(NULL, strstr(self->out, "place-holder reports"));
	EXPECT_TRUE(verdict_is(self->out, "task_counts", "exact"));
	EXPECT_TRUE(verdict_is(self->out, "completion_times", "bound"));
	EXPECT_NE(NULL, strstr(self->out, "5 of 6 completions had no report"));
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
}

/*
 * uio_t through raw ioctls, the HAL not probed: a host-marked step. With
 * the SQE trace hook (fentry) every SQE is the process's, but seen at the
 * driver's copy, not at the send: which host-marked step it was sent in
 * cannot be known, so its task figures are absent, and said why; without
 * the hook the SQ is blind (a process-wide taint).
 */
TEST_F(doc, uio_t)
{
	bool hook = variant->mode == STEPTIME_ATTACH_FENTRY;
	struct npusim_config old;
	struct raw_stream s;

	uio_step(_metadata, &self->d, &s, NPUSIM_UIO_T, &old);
	doctor(_metadata, self->out, sizeof(self->out));
	EXPECT_NE(NULL, strstr(self->out, "\"1\": {\"kio\": 0, \"uio_t\": 1, \"uio_d\": 0"));
	EXPECT_NE(NULL, strstr(self->out, hook ? "\"sqe_trace_hook\": 1" :
					  "\"sqe_trace_hook\": 0"));
	EXPECT_TRUE(verdict_is(self->out, "steps", "exact"));
	EXPECT_TRUE(verdict_is(self->out, "host_times", "exact"));
	EXPECT_TRUE(verdict_is(self->out, "device_time", "absent"));
	if (hook) {
		EXPECT_NE(NULL, strstr(self->out, "\"taints\": [\"uio_host\"]"));
		EXPECT_TRUE(verdict_is(self->out, "task_counts", "absent"));
		EXPECT_TRUE(verdict_is(self->out, "completion_times", "absent"));
		EXPECT_NE(NULL, strstr(self->out,
			"in host-marked steps: a uio_t SQ the HAL's probes do not count"));
	} else {
		EXPECT_NE(NULL, strstr(self->out, "\"taints\": [\"uio\"]"));
		EXPECT_TRUE(verdict_is(self->out, "task_counts", "absent"));
		EXPECT_TRUE(verdict_is(self->out, "completion_times", "absent"));
		EXPECT_NE(NULL, strstr(self->out,
			"uio_t SQ (1) and no SQE trace hook (attach mode tracepoint"));
	}
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
	EXPECT_EQ(0, raw_mode_restore(1, &old));
}

/* uio_d: absent in every mode: doctor names the SQ and the HAL. */
TEST_F(doc, uio_d)
{
	struct npusim_config old;
	struct raw_stream s;

	uio_step(_metadata, &self->d, &s, NPUSIM_UIO_D, &old);
	doctor(_metadata, self->out, sizeof(self->out));
	EXPECT_NE(NULL, strstr(self->out, "\"1\": {\"kio\": 0, \"uio_t\": 0, \"uio_d\": 1"));
	EXPECT_NE(NULL, strstr(self->out, "\"taints\": [\"uio\"]"));
	EXPECT_TRUE(verdict_is(self->out, "steps", "exact"));
	EXPECT_TRUE(verdict_is(self->out, "task_counts", "absent"));
	EXPECT_TRUE(verdict_is(self->out, "completion_times", "absent"));
	EXPECT_NE(NULL, strstr(self->out, "uio_d SQ (1) whose SQEs only the device"));
	EXPECT_NE(NULL, strstr(self->out, "HAL"));
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
	EXPECT_EQ(0, raw_mode_restore(1, &old));
}

TEST_HARNESS_MAIN
