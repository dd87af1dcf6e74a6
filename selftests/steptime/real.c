// SPDX-License-Identifier: GPL-2.0
/*
 * steptime.bpf on the real driver's protocol (ascend-abi.md sections 2-3),
 * driven as CANN's runtime drives it (trs_raw.h: no HAL), in every attach
 * mode: several devices and TS with colliding ids, logic CQs, sparse
 * reports and SQ head queries, CANN's step marks without wr_cqe, mapped
 * SQs, match mode, REUSE_CQ, STARS v2, queues older than the load, and the
 * counter frequency.
 *
 * Exact: task counts, completions, reports, errors and a mark's device
 * ticks, against npusim's truth. Bounds, checked against records of the
 * test's own (CLOCK_MONOTONIC around each call, task durations it chose),
 * never against what npusim copied into a report: a task is submitted
 * inside its SEND, completes no earlier than the truth says and no later
 * than the call that taught steptime; a device step time is at least the
 * tasks' summed durations and at most the host time around them.
 */
#include <errno.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <steptime/steptime.h>
#include <steptime/loader.h>

#include "kselftest_harness.h"
#include "st_step.h"
#include "st_run.h"
#include "ksft_filter.h"
#include "trs_raw.h"

/* Each load verifies and attaches for seconds under TCG. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	300

#define PIN_DIR		"/sys/fs/bpf/steptime_real"
#define TASK_NS		20000	/* simulated task time */
#define SYNC_MS		20000

/* ---------------------------------------------------------------------- */
/* steptime                                                                */
/* ---------------------------------------------------------------------- */

/* @stars 0: the loader reads the SQE layout from the device. */
static int _load_stars(int mode, __u64 freq, const char *profile, int stars)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o),
		.attach_mode = mode,
		.pin_dir = PIN_DIR,
		.map_mode = 0666,
		.map_gid = -1,
		.counter_freq_hz = freq,
		.profile = profile,
		.stars_version = stars,
	};

	steptime__unload(PIN_DIR);
	return steptime__load(&o);
}

static int _load_opts(int mode, __u64 freq, const char *profile)
{
	return _load_stars(mode, freq, profile, 0);
}

/* Loaded once per attach mode: attaching costs seconds under TCG. */
static int ensure_loaded(int mode)
{
	struct steptime_info inf;

	if (steptime__read_info(PIN_DIR, &inf) == 0 &&
	    (int)inf.attach_mode == mode)
		return 0;
	return _load_opts(mode, 0, NULL);
}

/* The step API finds this load, in every test. */
__attribute__((constructor)) static void pin_dir_env(void)
{
	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
}

__attribute__((destructor)) static void unload_at_exit(void)
{
	steptime__unload(PIN_DIR);
}

static struct steptime_counters counters(void)
{
	struct steptime_counters c = {};

	steptime__read_counters(PIN_DIR, &c);
	return c;
}

#define CDIFF(a, b, f)	((b).f - (a).f)

static void expect_no_loss(struct __test_metadata *_metadata,
			   const struct steptime_counters *c)
{
	EXPECT_EQ(0, c->step_map_full);
	EXPECT_EQ(0, c->events_dropped);
	EXPECT_EQ(0, c->reports_unmatched);
	EXPECT_EQ(0, c->hook_errors);
	EXPECT_EQ(0, c->sq_map_full);
	EXPECT_EQ(0, c->cq_map_full);
	EXPECT_EQ(0, c->file_map_full);
	EXPECT_EQ(0, c->task_overwritten);
}

static int host_mark(__u64 idx, unsigned int tag)
{
	struct steptime_mark_opts mo = { .sz = sizeof(mo) };

	return steptime__mark(idx, tag, &mo);
}

/* ---------------------------------------------------------------------- */
/* Workloads                                                               */
/* ---------------------------------------------------------------------- */

struct step_shape {
	int tasks;
	int wr_every;		/* a report every N tasks (0: last only) */
	bool stream_marks;	/* place-holder marks on the stream */
	bool mark_wr;		/* ...with wr_cqe (CANN's have none) */
	bool host_marks;
	bool no_sync;		/* submit only */
	__u32 flags;		/* of F_UIO, F_PREEXISTING: the step has these */
};

/* What the test itself saw, for the bounds. */
struct step_rec {
	__u64 index_id;
	__u64 seq;		/* truth seq of the first SQE */
	__u64 t_submit0;	/* before the first SEND */
	__u64 t_submit1;	/* after the last SEND returned */
	__u64 t_synced;		/* after the sync returned */
	int sqes;
};

static int run_step(struct raw_stream *s, __u64 idx,
		    const struct step_shape *sh, struct step_rec *rec)
{
	static __u8 sqe[4200][TRS_SQE_SIZE];
	int n = 0, i, err;

	memset(rec, 0, sizeof(*rec));
	rec->index_id = idx;
	raw_truth(s, 0, &(struct npusim_task_truth){}, 0, &rec->seq);
	if (sh->stream_marks)
		raw_sqe(s, sqe[n++], &(struct raw_task){ .mark = true,
			.index_id = idx, .tag = 0, .wr_cqe = sh->mark_wr });
	for (i = 0; i < sh->tasks; i++) {
		bool wr = sh->wr_every ? (i + 1) % sh->wr_every == 0 :
					 i == sh->tasks - 1;

		raw_sqe(s, sqe[n++], &(struct raw_task){ .wr_cqe = wr,
			.duration_ns = TASK_NS });
	}
	if (sh->stream_marks)
		raw_sqe(s, sqe[n++], &(struct raw_task){ .mark = true,
			.index_id = idx, .tag = 1, .wr_cqe = sh->mark_wr });
	rec->sqes = n;
	if (sh->host_marks) {
		err = host_mark(idx, STEPTIME_TAG_START);
		if (err)
			return err;
	}
	rec->t_submit0 = raw_now();
	err = raw_submit(s, sqe, n);
	rec->t_submit1 = raw_now();
	if (!err && sh->host_marks)
		err = host_mark(idx, STEPTIME_TAG_END);
	if (!err && !sh->no_sync)
		err = raw_sync(s, SYNC_MS);
	rec->t_synced = raw_now();
	return err;
}

/* Every figure of a step against the truth and the test's own record. */
static void check_step(struct __test_metadata *_metadata,
		       struct raw_stream *s, const struct step_shape *sh,
		       const struct step_rec *rec, __u64 freq)
{
	struct npusim_task_truth t[4200];
	struct steptime_step_stats r;
	int n, i, first, last, reports = 0;
	__u64 tick_ns = 1000000000ull / freq + 1, dev_ns;

	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), rec->index_id, false, &r))
		TH_LOG("step %llu not found", (unsigned long long)rec->index_id);
	n = raw_truth(s, rec->seq, t, rec->sqes, NULL);
	ASSERT_EQ(rec->sqes, n);
	first = sh->stream_marks ? 1 : 0;
	last = first + sh->tasks - 1;
	for (i = first; i <= last; i++) {
		ASSERT_EQ(NPUSIM_TASK_DONE, t[i].state);
		reports += t[i].report != NPUSIM_REPORT_NONE;
	}
	EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
	EXPECT_EQ((__u64)sh->tasks, r.tasks);
	EXPECT_EQ((__u64)sh->tasks, r.completions);
	EXPECT_EQ((__u64)reports, r.reported);
	EXPECT_EQ(0, r.errors);
	EXPECT_EQ(sh->flags, r.flags & (STEPTIME_F_UIO | STEPTIME_F_PREEXISTING));
	/* Kernel times: inside the test's own window around the calls. */
	EXPECT_LE(rec->t_submit0, r.first_submit_ns);
	EXPECT_GE(rec->t_submit1, r.last_submit_ns);
	EXPECT_GE(r.last_complete_ns, t[last].end_ns);
	EXPECT_LE(r.last_complete_ns, rec->t_synced);
	if (!sh->stream_marks)
		return;
	EXPECT_TRUE(r.flags & STEPTIME_F_STREAM);
	if (!sh->mark_wr) {
		/* CANN's marks make no report: no device time, never a wrong one. */
		EXPECT_EQ(0, r.flags & (STEPTIME_F_DEV_START | STEPTIME_F_DEV_END));
		EXPECT_EQ(0, r.device_time_ns);
		EXPECT_TRUE(r.flags & STEPTIME_F_STREAM_END);
		return;
	}
	ASSERT_TRUE(r.flags & STEPTIME_F_DEV_START);
	ASSERT_TRUE(r.flags & STEPTIME_F_DEV_END);
	/* Exact: the counter where the device ran each mark. */
	EXPECT_EQ(t[0].start_ticks, r.dev_start_ticks);
	EXPECT_EQ(t[last + 1].start_ticks, r.dev_end_ticks);
	/*
	 * Independent: the tasks run one after another for the durations
	 * the test chose, all inside the host time around submit and sync.
	 */
	dev_ns = r.device_time_ns;
	EXPECT_GE(dev_ns + tick_ns, (__u64)sh->tasks * TASK_NS);
	EXPECT_LE(dev_ns, rec->t_synced - rec->t_submit0 + tick_ns);
}

/* ---------------------------------------------------------------------- */
/* Fixture: one attach mode, device 0 TS 0 open                            */
/* ---------------------------------------------------------------------- */

FIXTURE(rt) {
	struct raw_dev d;
	__u64 freq;
};

FIXTURE_VARIANT(rt) {
	int mode;
};

FIXTURE_VARIANT_ADD(rt, fentry) { .mode = STEPTIME_ATTACH_FENTRY };
FIXTURE_VARIANT_ADD(rt, kprobe) { .mode = STEPTIME_ATTACH_KPROBE };
FIXTURE_VARIANT_ADD(rt, tp_btf) { .mode = STEPTIME_ATTACH_TP_BTF };
FIXTURE_VARIANT_ADD(rt, tracepoint) { .mode = STEPTIME_ATTACH_TRACEPOINT };

FIXTURE_SETUP(rt)
{
	struct steptime_info inf;
	int err;

	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	err = ensure_loaded(variant->mode);
	/*
	 * The loader's probe says the kernel cannot attach this mode (fentry
	 * on 6.1 arm64); loader_loader's npusim_auto_mode checks where it
	 * must work. The 6.1 harness would run the body after a plain SKIP.
	 */
	if (err == -EOPNOTSUPP && variant->mode == STEPTIME_ATTACH_FENTRY)
		SKIP(longjmp(_metadata->env, 1),
		     "fentry: this kernel attaches no BPF trampoline to npusim (the loader said why above)");
	ASSERT_EQ(0, err) TH_LOG("steptime load (%s): %s",
				 steptime__attach_mode_str(variant->mode),
				 strerror(-err));
	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &inf));
	self->freq = inf.counter_freq_hz;
	ASSERT_EQ(0, raw_dev_open(&self->d, 0));
}

FIXTURE_TEARDOWN(rt)
{
	raw_dev_close(&self->d);
}

static bool hooks_on(int mode)
{
	return mode == STEPTIME_ATTACH_FENTRY || mode == STEPTIME_ATTACH_KPROBE;
}

/* Round 1's case on the real protocol: 3 steps of 2, 4 and 6 tasks. */
TEST_F(rt, steps_2_4_6)
{
	static const int shape[] = { 2, 4, 6 };
	struct steptime_counters c0 = counters(), c1;
	struct raw_stream s;
	struct step_rec rec;
	int i;

	ASSERT_EQ(0, raw_stream_create(&self->d, &s, &(struct raw_stream_opts){}));
	for (i = 0; i < 3; i++) {
		struct step_shape sh = { .tasks = shape[i], .stream_marks = true,
					 .mark_wr = true, .host_marks = true };

		ASSERT_EQ(0, run_step(&s, 100 + i, &sh, &rec));
		check_step(_metadata, &s, &sh, &rec, self->freq);
	}
	c1 = counters();
	EXPECT_EQ(12, CDIFF(c0, c1, tasks_in_step));
	EXPECT_EQ(6, CDIFF(c0, c1, stream_marks));
	expect_no_loss(_metadata, &c1);
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
}

/* Host marks only, a report for the last task only. */
TEST_F(rt, host_marks)
{
	struct raw_stream s;
	struct step_rec rec;
	int n;

	ASSERT_EQ(0, raw_stream_create(&self->d, &s, &(struct raw_stream_opts){}));
	for (n = 1; n <= 10; n += 3) {
		struct step_shape sh = { .tasks = n, .host_marks = true };

		ASSERT_EQ(0, run_step(&s, 200 + n, &sh, &rec));
		check_step(_metadata, &s, &sh, &rec, self->freq);
	}
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
}

/*
 * Sparse reports (1 task in 64) and CANN's marks without wr_cqe: the SQ
 * head queries of the sync complete the silent tasks, and the step is done
 * once the head passes its END mark, with no device time (absent, not
 * wrong).
 */
TEST_F(rt, sparse_query)
{
	struct steptime_counters c0 = counters(), c1;
	struct step_shape sh = { .tasks = 640, .wr_every = 64,
				 .stream_marks = true };
	struct raw_stream s;
	struct step_rec rec;

	ASSERT_EQ(0, raw_stream_create(&self->d, &s,
				       &(struct raw_stream_opts){ .depth = 2048 }));
	ASSERT_EQ(0, run_step(&s, 300, &sh, &rec));
	check_step(_metadata, &s, &sh, &rec, self->freq);
	c1 = counters();
	EXPECT_GT(CDIFF(c0, c1, head_queries), 0);
	EXPECT_GT(CDIFF(c0, c1, head_completions), 0);
	expect_no_loss(_metadata, &c1);
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
}

/* Depth 4096 and one SEND of 4000 SQEs: every one tracked. */
TEST_F(rt, depth_4096)
{
	struct step_shape sh = { .tasks = 4000, .wr_every = 64,
				 .host_marks = true };
	struct steptime_counters c;
	struct raw_stream s;
	struct step_rec rec;

	ASSERT_EQ(0, raw_stream_create(&self->d, &s,
				       &(struct raw_stream_opts){ .depth = 4096 }));
	ASSERT_EQ(0, run_step(&s, 400, &sh, &rec));
	check_step(_metadata, &s, &sh, &rec, self->freq);
	c = counters();
	EXPECT_EQ(0, c.tasks_untracked);
	EXPECT_EQ(0, c.task_overwritten);
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
}

/*
 * Two devices x two TS in one process: every queue has the same ids
 * (stream 0, SQ 0, CQ 0, logic CQ 0). Their steps must not mix.
 */
TEST_F(rt, devices_colliding_ids)
{
	struct raw_dev d1;
	struct raw_dev *dev[2] = { &self->d, &d1 };
	struct raw_stream s[4];
	struct step_rec rec[4];
	struct step_shape sh[4];
	int i;

	ASSERT_EQ(0, raw_dev_open(&d1, 1));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, raw_stream_create(dev[i / 2], &s[i],
				&(struct raw_stream_opts){ .ts = i % 2 }));
		EXPECT_EQ(s[0].sq, s[i].sq);
		EXPECT_EQ(s[0].stream, s[i].stream);
		EXPECT_EQ(s[0].lcq, s[i].lcq);
	}
	/* All four in flight at once, then synchronized. */
	for (i = 0; i < 4; i++) {
		sh[i] = (struct step_shape){ .tasks = 3 + 2 * i,
					     .stream_marks = true,
					     .mark_wr = true, .no_sync = true };
		ASSERT_EQ(0, run_step(&s[i], 500 + i, &sh[i], &rec[i]));
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, raw_sync(&s[i], SYNC_MS));
		rec[i].t_synced = raw_now();
	}
	for (i = 0; i < 4; i++)
		check_step(_metadata, &s[i], &sh[i], &rec[i], self->freq);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, raw_stream_destroy(&s[i], false));
	raw_dev_close(&d1);
}

/* The same, one process per (device, TS): four ranks behind one node. */
TEST_F(rt, devices_processes)
{
	struct steptime_step_stats r;
	pid_t pid[4];
	int i, k, status;

	for (i = 0; i < 4; i++) {
		pid[i] = fork();
		ASSERT_GE(pid[i], 0);
		if (pid[i] == 0) {
			struct raw_dev d;
			struct raw_stream s;
			struct step_rec rec;
			int rc = 0;

			if (raw_dev_open(&d, i / 2) ||
			    raw_stream_create(&d, &s, &(struct raw_stream_opts){
					      .ts = i % 2 }))
				_exit(2);
			for (k = 0; k < 3; k++) {
				struct step_shape sh = {
					.tasks = 2 * (k + 1) + i,
					.stream_marks = true,
					.mark_wr = k != 1,
					.host_marks = true };

				rc |= run_step(&s, 1 + k, &sh, &rec);
			}
			_exit(rc ? 1 : 0);
		}
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		ASSERT_EQ(0, WEXITSTATUS(status));
	}
	for (i = 0; i < 4; i++) {
		for (k = 0; k < 3; k++) {
			ASSERT_EQ(0, st_step_get(PIN_DIR, pid[i], 1 + k, false,
						 &r));
			EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
			EXPECT_EQ((__u64)(2 * (k + 1) + i), r.tasks);
			EXPECT_EQ(r.tasks, r.completions);
			EXPECT_EQ(0, r.errors);
			EXPECT_EQ((__u32)pid[i], r.tgid);
		}
	}
}

/*
 * The runtime allocates and frees logic CQs with type LOGIC and sqId 0
 * while SQ 0 of another stream has tasks in flight: SQ 0 is untouched.
 */
TEST_F(rt, logic_cq_churn)
{
	struct step_shape sh = { .tasks = 8, .stream_marks = true,
				 .mark_wr = true, .host_marks = true,
				 .no_sync = true };
	struct trs_res_id_para r = { .res_type = TRS_RES_STREAM };
	struct steptime_counters c0 = counters(), c1;
	struct raw_stream s;
	struct step_rec rec;
	int i;

	ASSERT_EQ(0, raw_stream_create(&self->d, &s, &(struct raw_stream_opts){}));
	ASSERT_EQ(0, s.sq);
	ASSERT_EQ(0, ioctl(self->d.fd, TRS_IOC_RES_ID_ALLOC, &r));
	ASSERT_EQ(0, run_step(&s, 600, &sh, &rec));
	for (i = 0; i < 10; i++) {
		struct trs_sqcq_alloc_info a = {
			.type = TRS_SQCQ_TYPE_LOGIC, .cqeSize = TRS_CQE_SIZE,
			.cqeDepth = 64, .info = { r.id, 1 },
			.uio_info = (__u64)(uintptr_t)&(struct trs_uio_info){},
		};
		struct trs_sqcq_free_info f = { .type = TRS_SQCQ_TYPE_LOGIC };

		ASSERT_EQ(0, ioctl(self->d.fd, TRS_IOC_SQCQ_ALLOC, &a));
		EXPECT_EQ(0, a.sqId);
		f.cqId = a.cqId;
		ASSERT_EQ(0, ioctl(self->d.fd, TRS_IOC_SQCQ_FREE, &f));
	}
	ASSERT_EQ(0, raw_sync(&s, SYNC_MS));
	rec.t_synced = raw_now();
	check_step(_metadata, &s, &sh, &rec, self->freq);
	c1 = counters();
	EXPECT_EQ(0, CDIFF(c0, c1, sqs_preexisting));
	EXPECT_EQ(0, ioctl(self->d.fd, TRS_IOC_RES_ID_FREE, &r));
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
}

/*
 * Match mode: a synchronous (match) task's report waits for the RECV
 * naming it, so the plain reports behind it come back first, and the
 * sq_head of its own report is behind what is already complete. Nothing
 * is counted twice, nothing un-completed.
 */
TEST_F(rt, match_mode)
{
	__u8 sqe[5][TRS_SQE_SIZE], cqe[16][TRS_CQE_SIZE];
	struct steptime_counters c0 = counters(), c1;
	struct steptime_step_stats r;
	struct raw_stream s;
	__u32 match_tid;
	int i, n, got = 0;

	if (self->d.stars >= 2)
		SKIP(return, "match tasks are a STARS v1 stream-id bit");
	ASSERT_EQ(0, raw_stream_create(&self->d, &s, &(struct raw_stream_opts){}));
	match_tid = s.task_id;
	raw_sqe(&s, sqe[0], &(struct raw_task){ .wr_cqe = true, .match = true,
						.duration_ns = TASK_NS });
	for (i = 1; i < 5; i++)
		raw_sqe(&s, sqe[i], &(struct raw_task){ .wr_cqe = true,
							.duration_ns = TASK_NS });
	ASSERT_EQ(0, host_mark(700, STEPTIME_TAG_START));
	ASSERT_EQ(0, raw_submit(&s, sqe, 5));
	ASSERT_EQ(0, host_mark(700, STEPTIME_TAG_END));
	/* The four plain reports first (match mode, not naming the held one). */
	while (got < 4) {
		n = raw_recv(&s, cqe, 16, 5000, true, 0xfffe);
		ASSERT_GT(n, 0);
		for (i = 0; i < n; i++)
			EXPECT_NE(match_tid, ((struct trs_logic_cqe *)cqe[i])->task_id);
		got += n;
	}
	ASSERT_EQ(4, got);
	/* Then the held one, by name: its sq_head is behind. */
	n = raw_recv(&s, cqe, 16, 5000, true, match_tid);
	ASSERT_EQ(1, n);
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), 700, false, &r));
	EXPECT_EQ(5, r.tasks);
	EXPECT_EQ(5, r.completions);
	EXPECT_EQ(5, r.reported);
	EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
	c1 = counters();
	EXPECT_EQ(0, CDIFF(c0, c1, reports_unmatched));
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
}

/*
 * A queue allocated before `steptime load`: flagged and counted, its tasks
 * in no step; a queue the same (pre-existing) fd allocates afterwards is
 * counted exactly, and its steps keep F_PREEXISTING: the fd may hold
 * queues steptime never meets (late_load_uio_d).
 */
TEST_F(rt, late_load)
{
	struct step_shape sh = { .tasks = 5, .host_marks = true };
	struct steptime_counters c0, c1;
	struct steptime_step_stats r;
	struct raw_stream old, s;
	struct raw_dev d;
	struct step_rec rec;

	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, raw_dev_open(&d, 1));
	ASSERT_EQ(0, raw_stream_create(&d, &old, &(struct raw_stream_opts){}));
	/* Before load: no marks (the step API needs steptime loaded). */
	ASSERT_EQ(0, run_step(&old, 800, &(struct step_shape){ .tasks = 5 },
			      &rec));
	ASSERT_EQ(0, ensure_loaded(variant->mode));
	c0 = counters();
	ASSERT_EQ(0, run_step(&old, 801, &sh, &rec));
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), 801, false, &r));
	EXPECT_EQ(0, r.tasks);
	EXPECT_TRUE(r.flags & STEPTIME_F_PREEXISTING);
	c1 = counters();
	EXPECT_EQ(1, CDIFF(c0, c1, sqs_preexisting));
	EXPECT_EQ(1, CDIFF(c0, c1, files_preexisting));
	EXPECT_EQ(5, CDIFF(c0, c1, tasks_preexisting));
	EXPECT_EQ(0, CDIFF(c0, c1, tasks_in_step));
	/* A new queue on the old fd: known from its ALLOC. */
	ASSERT_EQ(0, raw_stream_create(&d, &s, &(struct raw_stream_opts){}));
	sh.stream_marks = sh.mark_wr = true;
	sh.flags = STEPTIME_F_PREEXISTING;
	ASSERT_EQ(0, run_step(&s, 802, &sh, &rec));
	check_step(_metadata, &s, &sh, &rec, self->freq);
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
	EXPECT_EQ(0, raw_stream_destroy(&old, false));
	raw_dev_close(&d);
}

/*
 * A uio_d SQ allocated before `steptime load`: the kernel sees neither its
 * ALLOC nor its SQEs, so nothing says it exists. Its process's steps carry
 * F_PREEXISTING from the first ioctl on the fd it came from, never a task
 * count that looks whole.
 */
TEST_F(rt, late_load_uio_d)
{
	struct npusim_config old;
	struct steptime_counters c0, c1;
	struct steptime_step_stats r;
	__u8 sqe[8][TRS_SQE_SIZE];
	struct raw_stream s;
	struct raw_dev d;
	int i;

	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, raw_mode_set(1, NPUSIM_UIO_D, &old));
	ASSERT_EQ(0, raw_dev_open(&d, 1));
	ASSERT_EQ(0, raw_stream_create(&d, &s,
				       &(struct raw_stream_opts){ .mapped = true }));
	ASSERT_TRUE(s.mapped);
	ASSERT_EQ(0, raw_mode_restore(1, &old));
	ASSERT_EQ(0, ensure_loaded(variant->mode));
	c0 = counters();
	for (i = 0; i < 8; i++)
		raw_sqe(&s, sqe[i], &(struct raw_task){ .wr_cqe = i == 7,
			.duration_ns = TASK_NS });
	ASSERT_EQ(0, host_mark(803, STEPTIME_TAG_START));
	/* The runtime's next ioctl (any) makes the START mark take effect. */
	ASSERT_EQ(0, raw_recv(&s, sqe[0], 1, 0, false, 0) < 0 ? -1 : 0);
	ASSERT_EQ(0, raw_submit(&s, sqe, 8));
	ASSERT_EQ(0, raw_sync(&s, SYNC_MS));
	ASSERT_EQ(0, host_mark(803, STEPTIME_TAG_END));
	ASSERT_EQ(0, raw_recv(&s, sqe[0], 1, 0, false, 0) < 0 ? -1 : 0);
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), 803, false, &r));
	EXPECT_TRUE(r.flags & STEPTIME_F_PREEXISTING);
	EXPECT_EQ(0, r.tasks);
	c1 = counters();
	EXPECT_EQ(1, CDIFF(c0, c1, files_preexisting));
	EXPECT_EQ(0, CDIFF(c0, c1, tasks_in_step));
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
	raw_dev_close(&d);
}

/*
 * Mapped SQs through raw ioctls (the HAL not probed), a host-marked step.
 * uio_t: the SQE trace hook sees each SQE (fentry, kprobe), at the
 * driver's copy, not at the send; uio_d, or uio_t without the hook: the
 * tasks are seen only as the SQ head of their reports moves. Either way
 * which host-marked step submitted them cannot be known: the step is
 * flagged F_UIO and ends ENDED, never DONE. It holds the tasks the trace
 * hook saw; without it none, and the completions are counted process-wide
 * (uio_completions).
 */
static void uio_case(struct __test_metadata *_metadata, int mode,
		     __u32 uio_mode, __u64 idx)
{
	struct npusim_config old;
	struct steptime_counters c0 = counters(), c1;
	struct steptime_step_stats r;
	struct raw_stream s;
	struct raw_dev d;
	__u8 sqe[12][TRS_SQE_SIZE];
	bool traced = uio_mode == NPUSIM_UIO_T && hooks_on(mode);
	int i;

	ASSERT_EQ(0, raw_mode_set(1, uio_mode, &old));
	ASSERT_EQ(0, raw_dev_open(&d, 1));
	ASSERT_EQ(0, raw_stream_create(&d, &s,
				       &(struct raw_stream_opts){ .mapped = true }));
	ASSERT_TRUE(s.mapped);
	EXPECT_EQ(uio_mode == NPUSIM_UIO_T, s.uio.soft_que_flag);
	for (i = 0; i < 12; i++)
		raw_sqe(&s, sqe[i], &(struct raw_task){
			.wr_cqe = i % 4 == 3, .duration_ns = TASK_NS });
	ASSERT_EQ(0, host_mark(idx, STEPTIME_TAG_START));
	/* The runtime's next ioctl (any) makes the START mark take effect. */
	ASSERT_EQ(0, raw_recv(&s, sqe, 1, 0, false, 0) < 0 ? -1 : 0);
	ASSERT_EQ(0, raw_submit(&s, sqe, 12));
	ASSERT_EQ(0, raw_sync(&s, SYNC_MS));
	ASSERT_EQ(0, host_mark(idx, STEPTIME_TAG_END));
	ASSERT_EQ(0, raw_recv(&s, sqe, 1, 0, false, 0) < 0 ? -1 : 0);
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), idx, false, &r));
	EXPECT_EQ(traced ? 12 : 0, r.tasks);
	EXPECT_EQ(traced ? 12 : 0, r.completions);
	EXPECT_EQ(STEPTIME_STEP_ENDED, r.state);
	EXPECT_EQ(STEPTIME_F_UIO, r.flags & STEPTIME_F_UIO);
	c1 = counters();
	EXPECT_EQ(traced ? 12 : 0, CDIFF(c0, c1, sqes_traced));
	EXPECT_EQ(traced ? 0 : 12, CDIFF(c0, c1, uio_completions));
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
	raw_dev_close(&d);
	EXPECT_EQ(0, raw_mode_restore(1, &old));
}

TEST_F(rt, uio_t)
{
	uio_case(_metadata, variant->mode, NPUSIM_UIO_T, 900);
}

TEST_F(rt, uio_d)
{
	uio_case(_metadata, variant->mode, NPUSIM_UIO_D, 901);
}

/* A step as `steptime stat -o json` prints it has @what. */
static bool json_has(const struct steptime_step_stats *r, const char *what)
{
	char line[2048];

	return steptime_stats__snprintf(line, sizeof(line), STEPTIME_FMT_JSON,
					r) > 0 && strstr(line, what);
}

/*
 * uio_d tasks of a step that complete after the next step opened (npusim's
 * truth says which): the kernel cannot tell which step submitted them, so
 * neither step claims a task count, completions or DONE (absent: null in
 * the JSON, state "ended"), and the process-wide count of their
 * completions is exact against the truth.
 */
TEST_F(rt, uio_d_late)
{
	struct npusim_config old;
	struct steptime_counters c0 = counters(), c1;
	struct npusim_task_truth t[16];
	struct steptime_step_stats r;
	__u8 sqe[16][TRS_SQE_SIZE];
	__u64 seq = 0, b_open, idx;
	struct raw_stream s;
	struct raw_dev d;
	int i, late = 0, done = 0;

	ASSERT_EQ(0, raw_mode_set(1, NPUSIM_UIO_D, &old));
	ASSERT_EQ(0, raw_dev_open(&d, 1));
	ASSERT_EQ(0, raw_stream_create(&d, &s,
				       &(struct raw_stream_opts){ .mapped = true }));
	ASSERT_TRUE(s.mapped);
	ASSERT_EQ(0, s.uio.soft_que_flag);
	raw_truth(&s, 0, &(struct npusim_task_truth){}, 0, &seq);
	/* Step 910: 8 tasks of 2 ms; step 911: 8 short ones. */
	for (i = 0; i < 16; i++)
		raw_sqe(&s, sqe[i], &(struct raw_task){
			.wr_cqe = i == 7 || i == 15,
			.duration_ns = i < 8 ? 2000000 : TASK_NS });
	ASSERT_EQ(0, host_mark(910, STEPTIME_TAG_START));
	ASSERT_EQ(0, raw_recv(&s, sqe[0], 1, 0, false, 0) < 0 ? -1 : 0);
	ASSERT_EQ(0, raw_submit(&s, sqe[0], 8));
	ASSERT_EQ(0, host_mark(910, STEPTIME_TAG_END));
	ASSERT_EQ(0, host_mark(911, STEPTIME_TAG_START));
	b_open = raw_now();
	ASSERT_EQ(0, raw_recv(&s, sqe[0], 1, 0, false, 0) < 0 ? -1 : 0);
	ASSERT_EQ(0, raw_submit(&s, sqe[8], 8));
	ASSERT_EQ(0, raw_sync(&s, SYNC_MS));
	ASSERT_EQ(0, host_mark(911, STEPTIME_TAG_END));
	ASSERT_EQ(0, raw_recv(&s, sqe[0], 1, 0, false, 0) < 0 ? -1 : 0);
	c1 = counters();

	ASSERT_EQ(16, raw_truth(&s, seq, t, 16, NULL));
	for (i = 0; i < 16; i++) {
		done += t[i].state == NPUSIM_TASK_DONE;
		late += i < 8 && t[i].end_ns > b_open;
	}
	EXPECT_EQ(16, done);
	/* The case this test is about: step 910's tasks ran on in 911. */
	ASSERT_LT(0, late);
	for (idx = 910; idx <= 911; idx++) {
		ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), idx, false, &r));
		EXPECT_TRUE(r.flags & STEPTIME_F_UIO);
		EXPECT_EQ(STEPTIME_STEP_ENDED, r.state);
		EXPECT_EQ(0, r.tasks);
		EXPECT_EQ(0, r.completions);
		EXPECT_TRUE(json_has(&r, "\"tasks\": null, \"completions\": null"));
		EXPECT_TRUE(json_has(&r, "\"state\": \"ended\""));
		EXPECT_TRUE(json_has(&r, "\"last_complete_ns\": null"));
	}
	/* Every completion the reports' heads taught, in no step. */
	EXPECT_EQ((__u64)done, CDIFF(c0, c1, uio_completions));
	EXPECT_EQ(0, CDIFF(c0, c1, tasks));
	EXPECT_EQ(0, CDIFF(c0, c1, steps_done));
	EXPECT_EQ(2, CDIFF(c0, c1, steps_ended));
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
	raw_dev_close(&d);
	EXPECT_EQ(0, raw_mode_restore(1, &old));
}

/* Failed tasks report whatever their wr_cqe: counted as errors, exactly. */
TEST_F(rt, errors)
{
	__u8 sqe[9][TRS_SQE_SIZE];
	struct steptime_step_stats r;
	struct raw_stream s;
	int i;

	ASSERT_EQ(0, raw_stream_create(&self->d, &s, &(struct raw_stream_opts){}));
	for (i = 0; i < 9; i++)
		raw_sqe(&s, sqe[i], &(struct raw_task){
			.duration_ns = TASK_NS, .error = i % 3 == 2 ? 0x77 : 0 });
	ASSERT_EQ(0, host_mark(1000, STEPTIME_TAG_START));
	ASSERT_EQ(0, raw_submit(&s, sqe, 9));
	ASSERT_EQ(0, host_mark(1000, STEPTIME_TAG_END));
	ASSERT_EQ(0, raw_sync(&s, SYNC_MS));
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), 1000, false, &r));
	EXPECT_EQ(9, r.tasks);
	EXPECT_EQ(9, r.completions);
	EXPECT_EQ(3, r.errors);
	EXPECT_EQ(3, r.reported);
	EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
}

/* ---------------------------------------------------------------------- */
/* The counter frequency: read, never assumed                              */
/* ---------------------------------------------------------------------- */

FIXTURE(freq) {
	struct npusim_config c0;
};

FIXTURE_SETUP(freq)
{
	ASSERT_EQ(0, raw_config(0, 0, &self->c0));
}

/* Whatever happened, both devices count at the default again. */
FIXTURE_TEARDOWN(freq)
{
	struct npusim_config c = { .counter_freq_hz = self->c0.counter_freq_hz };

	steptime__unload(PIN_DIR);
	raw_config(1, NPUSIM_CFG_COUNTER_FREQ, &c);
}

TEST_F(freq, read_or_required)
{
	struct npusim_config c1 = {};
	struct steptime_info inf;

	/* Read from the device (URD), as a real host exposes it. */
	ASSERT_EQ(0, _load_opts(STEPTIME_ATTACH_TRACEPOINT, 0, NULL));
	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &inf));
	EXPECT_EQ(self->c0.counter_freq_hz, inf.counter_freq_hz);
	steptime__unload(PIN_DIR);
	/* Devices that disagree: refused, --freq needed. */
	c1.counter_freq_hz = self->c0.counter_freq_hz / 2;
	ASSERT_EQ(0, raw_config(1, NPUSIM_CFG_COUNTER_FREQ, &c1));
	EXPECT_EQ(-EINVAL, _load_opts(STEPTIME_ATTACH_TRACEPOINT, 0, NULL));
	EXPECT_NE(0, access(PIN_DIR "/info", F_OK));
	EXPECT_EQ(0, _load_opts(STEPTIME_ATTACH_TRACEPOINT, 12345678, NULL));
	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &inf));
	EXPECT_EQ(12345678, inf.counter_freq_hz);
	steptime__unload(PIN_DIR);
	/* A device that cannot say (no driver profile): --freq required. */
	EXPECT_EQ(-EINVAL, _load_opts(STEPTIME_ATTACH_TRACEPOINT, 0, "generic"));
	EXPECT_NE(0, access(PIN_DIR "/info", F_OK));
}

/* ---------------------------------------------------------------------- */
/* The STARS SQE layout: read from the chip, never assumed                 */
/* ---------------------------------------------------------------------- */

FIXTURE(stars) {
	struct npusim_config c1;
};

FIXTURE_SETUP(stars)
{
	ASSERT_EQ(0, raw_config(1, 0, &self->c1));
	ASSERT_EQ(1, self->c1.stars) TH_LOG("npusim loaded with stars=%u",
					     self->c1.stars);
}

FIXTURE_TEARDOWN(stars)
{
	struct npusim_config c = { .stars = self->c1.stars };

	steptime__unload(PIN_DIR);
	raw_config(1, NPUSIM_CFG_STARS, &c);
}

static void expect_stars(struct __test_metadata *_metadata, __u32 version,
			 __u32 from, const char *chip)
{
	struct steptime_info inf;

	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &inf));
	EXPECT_EQ(version, inf.stars_version);
	EXPECT_EQ(from, inf.stars_from);
	EXPECT_STREQ(chip, inf.chip);
}

static void expect_nothing_loaded(struct __test_metadata *_metadata)
{
	EXPECT_NE(0, access(PIN_DIR "/info", F_OK));
	EXPECT_EQ(-ENOENT, steptime__unload(PIN_DIR));
}

TEST_F(stars, read_or_required)
{
	struct npusim_config c = { .stars = 2 };

	/* Read from the chip: npusim's STARS v1 devices are 910B3s. */
	ASSERT_EQ(0, _load_stars(STEPTIME_ATTACH_TRACEPOINT, 0, NULL, 0));
	expect_stars(_metadata, 1, STEPTIME_STARS_FROM_DEVICE,
		     NPUSIM_CHIP_NAME_V1);
	/* --stars that agrees: loaded, both said so. */
	ASSERT_EQ(0, _load_stars(STEPTIME_ATTACH_TRACEPOINT, 0, NULL, 1));
	expect_stars(_metadata, 1, STEPTIME_STARS_FROM_BOTH,
		     NPUSIM_CHIP_NAME_V1);
	/* --stars that contradicts the chip: refused, nothing loaded. */
	EXPECT_EQ(-EINVAL, _load_stars(STEPTIME_ATTACH_TRACEPOINT, 0, NULL, 2));
	expect_nothing_loaded(_metadata);
	EXPECT_EQ(-EINVAL, _load_stars(STEPTIME_ATTACH_TRACEPOINT, 0, NULL, 3));
	expect_nothing_loaded(_metadata);
	/* Devices of both layouts: one load parses one, refused either way. */
	ASSERT_EQ(0, raw_config(1, NPUSIM_CFG_STARS, &c));
	EXPECT_EQ(-EINVAL, _load_stars(STEPTIME_ATTACH_TRACEPOINT, 0, NULL, 0));
	expect_nothing_loaded(_metadata);
	EXPECT_EQ(-EINVAL, _load_stars(STEPTIME_ATTACH_TRACEPOINT, 0, NULL, 1));
	expect_nothing_loaded(_metadata);
	EXPECT_EQ(-EINVAL, _load_stars(STEPTIME_ATTACH_TRACEPOINT, 0, NULL, 2));
	expect_nothing_loaded(_metadata);
	/* A driver that cannot say the chip (no profile): --stars needed. */
	EXPECT_EQ(-EINVAL, _load_stars(STEPTIME_ATTACH_TRACEPOINT, 50000000,
				       "generic", 0));
	expect_nothing_loaded(_metadata);
	ASSERT_EQ(0, _load_stars(STEPTIME_ATTACH_TRACEPOINT, 50000000,
				 "generic", 2));
	expect_stars(_metadata, 2, STEPTIME_STARS_FROM_OPTION, "");
}

/* Output of a shell command line (stdout and stderr), and its exit status. */
static int run_out(const char *cmd, char *out, size_t len)
{
	return WEXITSTATUS(st_run(cmd, out, len));
}

#define CLI	"${STEPTIME_CLI:-${O:-build}/steptime}"

/* What load and status say, and the errors that name the fix. */
TEST_F(stars, cli)
{
	char cmd[256], out[4096];

	steptime__unload(PIN_DIR);
	snprintf(cmd, sizeof(cmd), CLI " load --pin %s --attach tracepoint 2>&1",
		 PIN_DIR);
	ASSERT_EQ(0, run_out(cmd, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "STARS v1, read from the device (" NPUSIM_CHIP_NAME_V1 ")"))
		TH_LOG("%s", out);
	snprintf(cmd, sizeof(cmd), CLI " status --pin %s 2>&1", PIN_DIR);
	ASSERT_EQ(0, run_out(cmd, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "sqe layout:  STARS v1, read from the device (" NPUSIM_CHIP_NAME_V1 ")"))
		TH_LOG("%s", out);
	steptime__unload(PIN_DIR);
	/* contradicting the chip: exit 1, says what the device is */
	snprintf(cmd, sizeof(cmd), CLI " load --pin %s --attach tracepoint --stars 2 2>&1",
		 PIN_DIR);
	EXPECT_EQ(1, run_out(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--stars 2 contradicts")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, NPUSIM_CHIP_NAME_V1)) TH_LOG("%s", out);
	expect_nothing_loaded(_metadata);
	/* cannot be read: the error names --stars */
	snprintf(cmd, sizeof(cmd), CLI " load --pin %s --attach tracepoint --profile generic --freq 50000000 2>&1",
		 PIN_DIR);
	EXPECT_EQ(1, run_out(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "cannot be read")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "--stars 1")) TH_LOG("%s", out);
	expect_nothing_loaded(_metadata);
}

/*
 * The command line: a clear error, nothing loaded. The CLI is the one
 * run_vm.sh names (the build tree's: $O/steptime, build/arm64 in the
 * arm64 guests).
 */
TEST(frequency_cli)
{
	static const char *const bad[] = { "0", "abc", "-5", "" };
	char cmd[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(cmd, sizeof(cmd),
			 CLI " load --pin %s --freq '%s' 2>/dev/null",
			 PIN_DIR, bad[i]);
		EXPECT_EQ(2, WEXITSTATUS(system(cmd))) TH_LOG("--freq '%s'", bad[i]);
	}
	snprintf(cmd, sizeof(cmd), CLI " load --pin %s --stars 3 2>/dev/null",
		 PIN_DIR);
	EXPECT_EQ(2, WEXITSTATUS(system(cmd)));
	EXPECT_NE(0, access(PIN_DIR "/info", F_OK));
}

/* ---------------------------------------------------------------------- */
/* Chip families: npusim reloaded with module parameters                   */
/* ---------------------------------------------------------------------- */

static int npusim_reload(const char *params)
{
	char cmd[512];

	steptime__unload(PIN_DIR);
	snprintf(cmd, sizeof(cmd),
		 "rmmod npusim && insmod ${O:-build}/kmod/$(uname -r)/npusim.ko %s",
		 params);
	return system(cmd) == 0 ? 0 : -EIO;
}

FIXTURE(fam) {
	__u64 freq;
};

FIXTURE_VARIANT(fam) {
	int mode;
};

FIXTURE_VARIANT_ADD(fam, kprobe) { .mode = STEPTIME_ATTACH_KPROBE };
FIXTURE_VARIANT_ADD(fam, tp_btf) { .mode = STEPTIME_ATTACH_TP_BTF };

FIXTURE_SETUP(fam)
{
}

FIXTURE_TEARDOWN(fam)
{
	npusim_reload("");
}

/*
 * npusim reloaded with @params, steptime loaded in @mode (@inf: what it
 * says of itself) and npusim device @dev opened raw. Return: 0, or the
 * first step's negative errno.
 */
static int fam_open(const char *params, int mode, struct steptime_info *inf,
		    struct raw_dev *d, int dev)
{
	int err;

	err = npusim_reload(params);
	if (!err)
		err = _load_opts(mode, 0, NULL);
	if (!err)
		err = steptime__read_info(PIN_DIR, inf);
	if (!err)
		err = raw_dev_open(d, dev);
	return err;
}

/*
 * Pre-STARS: every stream after the first shares the first one's CQ
 * (REUSE_CQ), reports arrive as 16-byte CQEs on RECV type NORMAL.
 */
TEST_F(fam, reuse_cq)
{
	struct step_shape sh = { .tasks = 6, .stream_marks = true,
				 .mark_wr = true, .host_marks = true,
				 .no_sync = true };
	struct steptime_info inf;
	struct raw_stream s[3];
	struct step_rec rec[3];
	struct raw_dev d;
	int i;

	ASSERT_EQ(0, fam_open("sqcq_pair=0", variant->mode, &inf, &d, 0));
	for (i = 0; i < 3; i++) {
		struct raw_stream_opts o = { .no_logic = true,
					     .reuse_cq = i ? &s[0] : NULL };

		ASSERT_EQ(0, raw_stream_create(&d, &s[i], &o));
		EXPECT_EQ(s[0].cq, s[i].cq);
	}
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, run_step(&s[i], 1100 + i, &sh, &rec[i]));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, raw_sync(&s[i], SYNC_MS));
		rec[i].t_synced = raw_now();
	}
	for (i = 0; i < 3; i++)
		check_step(_metadata, &s[i], &sh, &rec[i], inf.counter_freq_hz);
	for (i = 2; i >= 0; i--)
		EXPECT_EQ(0, raw_stream_destroy(&s[i], i != 0));
	raw_dev_close(&d);
	steptime__unload(PIN_DIR);
}

/*
 * STARS v2 (950): another SQE header, read from the chip (the loader is
 * told nothing), and parsed right.
 */
TEST_F(fam, stars_v2)
{
	struct step_shape sh = { .tasks = 7, .wr_every = 3,
				 .stream_marks = true, .mark_wr = true,
				 .host_marks = true };
	struct steptime_info inf;
	struct raw_stream s;
	struct step_rec rec;
	struct raw_dev d;
	int k;

	ASSERT_EQ(0, fam_open("stars=2", variant->mode, &inf, &d, 1));
	EXPECT_EQ(2, inf.stars_version);
	EXPECT_EQ(STEPTIME_STARS_FROM_DEVICE, inf.stars_from);
	EXPECT_STREQ(NPUSIM_CHIP_NAME_V2, inf.chip);
	ASSERT_EQ(2, d.stars);
	ASSERT_EQ(0, raw_stream_create(&d, &s, &(struct raw_stream_opts){}));
	for (k = 0; k < 3; k++) {
		ASSERT_EQ(0, run_step(&s, 1200 + k, &sh, &rec));
		check_step(_metadata, &s, &sh, &rec, inf.counter_freq_hz);
	}
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
	raw_dev_close(&d);
	steptime__unload(PIN_DIR);
}

/*
 * STARS v2 (950) without logic CQs: reports stay in the SQ's CQ, 20-byte
 * CQEs in the 32-byte slots the runtime asks for, read with RECV type
 * NORMAL. Three steps' reports come back in one RECV: each is read in its
 * own slot (a 16-byte stride would read half of them from the padding).
 */
TEST_F(fam, stars_v2_hw_cq)
{
	struct step_shape sh = { .tasks = 9, .wr_every = 2,
				 .stream_marks = true, .mark_wr = true,
				 .host_marks = true, .no_sync = true };
	struct steptime_counters c0, c1;
	struct steptime_info inf;
	struct raw_stream s;
	struct step_rec rec[3];
	struct raw_dev d;
	int k;

	ASSERT_EQ(0, fam_open("stars=2", variant->mode, &inf, &d, 1));
	ASSERT_EQ(2, d.stars);
	ASSERT_EQ(0, raw_stream_create(&d, &s, &(struct raw_stream_opts){
					       .no_logic = true }));
	c0 = counters();
	for (k = 0; k < 3; k++)
		ASSERT_EQ(0, run_step(&s, 1300 + k, &sh, &rec[k]));
	ASSERT_EQ(0, raw_sync(&s, SYNC_MS));
	for (k = 0; k < 3; k++) {
		rec[k].t_synced = raw_now();
		check_step(_metadata, &s, &sh, &rec[k], inf.counter_freq_hz);
	}
	c1 = counters();
	/* Per step: 4 tasks' reports and both marks'. */
	EXPECT_EQ(3 * 6, CDIFF(c0, c1, reports));
	EXPECT_EQ(0, CDIFF(c0, c1, reports_unmatched));
	expect_no_loss(_metadata, &c1);
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
	raw_dev_close(&d);
	steptime__unload(PIN_DIR);
}

/*
 * Chip names as real drivers give them (halGetChipInfo: the SoC version
 * without "Ascend"), and chips steptime does not know: --stars needed.
 */
FIXTURE(chip) {
};

FIXTURE_SETUP(chip)
{
}

FIXTURE_TEARDOWN(chip)
{
	npusim_reload("");
}

TEST_F(chip, names)
{
	static const struct {
		const char *params;
		int stars;	/* 0: unknown to steptime */
	} chips[] = {
		{ "chip_name=910B1", 1 },
		{ "chip_name=910B2C", 1 },
		{ "chip_name=910_9391", 1 },
		{ "chip_name=910B", 1 },	/* no CFG_FEATURE_PG */
		{ "stars=2 chip_name=950DT_95A1", 2 },
		{ "stars=2 chip_name=950", 2 },
		{ "chip_name=310P3", 0 },
		{ "chip_name=910ProA", 0 },	/* pre-STARS 910 */
		{ "stars=2 chip_name=910_9691", 0 },	/* 910_96: CLOUD_V5 */
	};
	char name[32];
	size_t i;

	for (i = 0; i < sizeof(chips) / sizeof(chips[0]); i++) {
		ASSERT_EQ(0, npusim_reload(chips[i].params));
		snprintf(name, sizeof(name), "%s", strrchr(chips[i].params, '=') + 1);
		if (!chips[i].stars) {
			EXPECT_EQ(-EINVAL, _load_stars(STEPTIME_ATTACH_TRACEPOINT,
						       0, NULL, 0))
				TH_LOG("%s", chips[i].params);
			expect_nothing_loaded(_metadata);
			continue;
		}
		ASSERT_EQ(0, _load_stars(STEPTIME_ATTACH_TRACEPOINT, 0, NULL, 0))
			TH_LOG("%s", chips[i].params);
		expect_stars(_metadata, chips[i].stars,
			     STEPTIME_STARS_FROM_DEVICE, name);
	}
}

/*
 * A chip steptime does not know: the error says which and names --stars;
 * with --stars the SQEs are parsed in that layout, counted exactly.
 */
TEST_F(chip, unknown_needs_option)
{
	struct step_shape sh = { .tasks = 5, .wr_every = 2,
				 .stream_marks = true, .mark_wr = true,
				 .host_marks = true };
	char cmd[256], out[4096];
	struct steptime_info inf;
	struct raw_stream s;
	struct step_rec rec;
	struct raw_dev d;

	ASSERT_EQ(0, npusim_reload("stars=2 chip_name=910_9691"));
	snprintf(cmd, sizeof(cmd), CLI " load --pin %s --attach tracepoint 2>&1",
		 PIN_DIR);
	EXPECT_EQ(1, run_out(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "is an Ascend 910_9691, whose STARS SQE layout steptime does not know"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "--stars 2 (950)")) TH_LOG("%s", out);
	expect_nothing_loaded(_metadata);
	ASSERT_EQ(0, _load_stars(STEPTIME_ATTACH_TRACEPOINT, 0, NULL, 2));
	expect_stars(_metadata, 2, STEPTIME_STARS_FROM_OPTION, "910_9691");
	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &inf));
	ASSERT_EQ(0, raw_dev_open(&d, 0));
	ASSERT_EQ(2, d.stars);
	ASSERT_EQ(0, raw_stream_create(&d, &s, &(struct raw_stream_opts){}));
	ASSERT_EQ(0, run_step(&s, 1300, &sh, &rec));
	check_step(_metadata, &s, &sh, &rec, inf.counter_freq_hz);
	EXPECT_EQ(0, raw_stream_destroy(&s, false));
	raw_dev_close(&d);
	snprintf(cmd, sizeof(cmd), CLI " status --pin %s 2>&1", PIN_DIR);
	ASSERT_EQ(0, run_out(cmd, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "sqe layout:  STARS v2, given (--stars): the driver names an unknown chip, 910_9691"))
		TH_LOG("%s", out);
	steptime__unload(PIN_DIR);
}

TEST_HARNESS_MAIN
