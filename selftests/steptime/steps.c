// SPDX-License-Identifier: GPL-2.0
/*
 * steptime.bpf on npusim, in every attach mode: workloads of known shape,
 * every per-step figure checked against the simulator's ground truth.
 *
 * Exact: task counts, completions, errors, device ticks of the step marks
 * and the device step time. Bounded: kernel times, which must lie inside
 * the window the ground truth implies (a task cannot be submitted after the
 * driver queued it, nor complete before the device finished it).
 */
#include <errno.h>
#include <setjmp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <steptime/loader.h>
#include <steptime/steptime.h>
#include <npusim/hal.h>

#include "kselftest_harness.h"
#include "npusim/npusim_test.h"
#include "st_step.h"
#include "ksft_filter.h"
#include "../../bpf/steptime.h"	/* ST_THREAD_SLOTS */

/* Each load verifies and attaches for seconds under TCG. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	300

#define PIN_DIR		"/sys/fs/bpf/steptime_selftest"
#define TASK_NS		20000	/* simulated task time */
#define MAX_TRUTH	2048

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */
/* ---------------------------------------------------------------------- */

/* The same exact conversion the BPF program must use. */
static __u64 ticks_to_ns(__u64 ticks, __u64 freq)
{
	return ticks / freq * 1000000000ull + ticks % freq * 1000000000ull / freq;
}

static int _load(int mode, unsigned int map_mode)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o),
		.attach_mode = mode,
		.pin_dir = PIN_DIR,
		.map_mode = map_mode,
		.map_gid = -1,
	};

	steptime__unload(PIN_DIR);
	return steptime__load(&o);
}

/*
 * Loaded once per attach mode, not per test: each attach and detach
 * patches the kernel's text (static keys), which costs seconds under TCG.
 */
static int ensure_loaded(int mode)
{
	struct steptime_info inf;
	struct stat st;

	if (steptime__read_info(PIN_DIR, &inf) == 0 &&
	    (int)inf.attach_mode == mode &&
	    stat(PIN_DIR "/marks", &st) == 0 && (st.st_mode & 0777) == 0644)
		return 0;
	return _load(mode, 0666);
}

/*
 * A map of the program's own, not pinned: found from the pinned link of
 * its process-exit program, which every attach mode loads. Return: its fd,
 * or -1.
 */
static int internal_map_fd(const char *name)
{
	__u32 ids[64], len, i;
	struct bpf_link_info li;
	struct bpf_prog_info pi;
	struct bpf_map_info mi;
	int lfd, pfd = -1, fd = -1;

	lfd = bpf_obj_get(PIN_DIR "/links/tp_sched_process_exit");
	memset(&li, 0, sizeof(li));
	len = sizeof(li);
	if (lfd < 0 || bpf_obj_get_info_by_fd(lfd, &li, &len))
		goto out;
	pfd = bpf_prog_get_fd_by_id(li.prog_id);
	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	pi.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(pi);
	if (pfd < 0 || bpf_obj_get_info_by_fd(pfd, &pi, &len))
		goto out;
	for (i = 0; i < pi.nr_map_ids && fd < 0; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		memset(&mi, 0, sizeof(mi));
		len = sizeof(mi);
		if (fd >= 0 && (bpf_obj_get_info_by_fd(fd, &mi, &len) ||
				strcmp(mi.name, name))) {
			close(fd);
			fd = -1;
		}
	}
out:
	if (pfd >= 0)
		close(pfd);
	if (lfd >= 0)
		close(lfd);
	return fd;
}

/* The harness's parent process, at exit: leave nothing loaded. */
__attribute__((destructor)) static void unload_at_exit(void)
{
	steptime__unload(PIN_DIR);
}

static void counters(struct steptime_counters *c)
{
	memset(c, 0, sizeof(*c));
	steptime__read_counters(PIN_DIR, c);
}

/* Nothing was lost or misread anywhere. */
static void expect_no_loss(struct __test_metadata *_metadata,
			   const struct steptime_counters *c)
{
	EXPECT_EQ(0, c->marks_lost);
	EXPECT_EQ(0, c->step_map_full);
	EXPECT_EQ(0, c->events_dropped);
	EXPECT_EQ(0, c->reports_unmatched);
	EXPECT_EQ(0, c->hook_errors);
}

static __u64 hist_sum(const struct steptime_step_stats *s)
{
	__u64 n = 0;
	int i;

	for (i = 0; i < STEPTIME_LAT_BUCKETS; i++)
		n += s->lat_hist[i];
	return n;
}

static void fill_tasks(struct trs_sqe *sqe, int n, __u32 dur, __u32 err_every)
{
	int i;

	for (i = 0; i < n; i++) {
		struct npu_task_desc d = {
			.type = TRS_SQE_FFTS,
			.duration_ns = dur,
			.wr_cqe = i == n - 1,
			.sim_error = err_every && (i + 1) % err_every == 0 ?
				     0x77 : 0,
		};

		npu_sqe_task(&sqe[i], &d);
	}
}

/* One step: START, @n tasks, END, wait for the device. */
static int run_step(struct npu_stream *s, int n, bool stream_mark,
		    __u32 err_every, __u64 *index_id)
{
	struct steptime_mark_opts mo = { .sz = sizeof(mo) };
	struct steptime_step *step = steptime_step__new();
	struct trs_sqe sqe[1024];
	int err;

	if (!step)
		return -errno;
	mo.stream = stream_mark ? s : NULL;
	*index_id = steptime_step__index_id(step);
	fill_tasks(sqe, n, TASK_NS, err_every);
	err = steptime_step__mark(step, STEPTIME_TAG_START, &mo);
	if (!err && n)
		err = npu_stream_submit(s, sqe, n) < 0 ? -EIO : 0;
	if (!err)
		err = steptime_step__mark(step, STEPTIME_TAG_END, &mo);
	if (!err)
		err = npu_stream_sync(s, 10000);
	steptime_step__free(step);
	return err;
}

/* Ground truth of a stream's SQ, from task @seq on. */
static int truth(struct npu_dev *dev, struct npu_stream *s, __u64 seq,
		 struct npusim_task_truth *t, unsigned int n)
{
	return npu_sim_truth(dev, npu_sqcq_sq_id(npu_stream_sqcq(s)), seq, t, n,
			     NULL);
}

static __u64 next_seq(struct npu_dev *dev, struct npu_stream *s)
{
	struct npusim_task_truth t;
	__u64 next = 0;

	npu_sim_truth(dev, npu_sqcq_sq_id(npu_stream_sqcq(s)), 0, &t, 0, &next);
	return next;
}

static bool is_mark(const struct npusim_task_truth *t)
{
	return t->sqe_type == TRS_SQE_PLACE_HOLDER;
}

FIXTURE(st) {
	struct npu_dev *dev;
	struct npu_stream *s;
	__u64 freq;
	int mode;
};

FIXTURE_VARIANT(st) {
	int mode;
};

FIXTURE_VARIANT_ADD(st, fentry) { .mode = STEPTIME_ATTACH_FENTRY };
FIXTURE_VARIANT_ADD(st, kprobe) { .mode = STEPTIME_ATTACH_KPROBE };
FIXTURE_VARIANT_ADD(st, tp_btf) { .mode = STEPTIME_ATTACH_TP_BTF };
FIXTURE_VARIANT_ADD(st, tracepoint) { .mode = STEPTIME_ATTACH_TRACEPOINT };

FIXTURE_SETUP(st)
{
	struct npusim_clock clk;
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
	self->dev = npu_dev_open(NULL);
	ASSERT_NE(NULL, self->dev);
	self->s = npu_stream_create(self->dev, NULL);
	ASSERT_NE(NULL, self->s);
	ASSERT_EQ(0, npu_sim_clock(self->dev, &clk));
	self->freq = clk.counter_freq_hz;
}

FIXTURE_TEARDOWN(st)
{
	npu_stream_destroy(self->s);
	npu_dev_close(self->dev);
}

/*
 * Every figure of a stream-marked step against the truth of its tasks:
 * START place-holder, its timeline event, the n tasks, END place-holder,
 * its event (the step API's device times come from the events: CANN's
 * place-holders make no report). @mapped: its SQ is mapped (the chip's
 * default), whose tasks go in through the HAL without a SEND ioctl.
 */
static void check_stream_step(struct __test_metadata *_metadata,
			      const struct steptime_step_stats *r, int n,
			      const struct npusim_task_truth *t, __u64 freq,
			      __u64 host_ns, bool mapped)
{
	const struct npusim_task_truth *start = &t[1], *end = &t[n + 3];
	__u32 want = STEPTIME_F_HOST_START | STEPTIME_F_HOST_END |
		     STEPTIME_F_DEV_START | STEPTIME_F_DEV_END |
		     STEPTIME_F_STREAM | STEPTIME_F_DEV_EVENT;
	int i;

	ASSERT_TRUE(is_mark(&t[0]));
	ASSERT_TRUE(is_mark(&t[n + 2]));
	EXPECT_EQ(STEPTIME_STEP_DONE, r->state);
	EXPECT_EQ((__u64)n, r->tasks);
	EXPECT_EQ((__u64)n, r->completions);
	EXPECT_EQ(0, r->errors);
	EXPECT_EQ((__u64)n, hist_sum(r));
	EXPECT_EQ(want, r->flags & (want | STEPTIME_F_UIO |
				    STEPTIME_F_PREEXISTING));
	/* Device time: exactly the counter difference of the two events. */
	EXPECT_EQ(start->start_ticks, r->dev_start_ticks);
	EXPECT_EQ(end->start_ticks, r->dev_end_ticks);
	EXPECT_EQ(ticks_to_ns(end->start_ticks - start->start_ticks, freq),
		  r->device_time_ns);
	/* ... and consistent with the host: the tasks ran in it, serially. */
	EXPECT_GE(r->device_time_ns, (__u64)n * TASK_NS);
	EXPECT_LE(r->device_time_ns, host_ns);
	/* Kernel times inside the truth's window. */
	EXPECT_LE(r->host_start_ns, r->first_submit_ns);
	for (i = 2; i <= n + 1; i++) {
		EXPECT_LE(r->first_submit_ns, t[i].submit_ns);
		EXPECT_GE(r->last_complete_ns, t[i].end_ns);
	}
	EXPECT_LE(r->last_submit_ns, t[n + 1].submit_ns);
	EXPECT_LE(r->host_start_ns, r->host_end_ns);
	if (mapped) {
		EXPECT_EQ(0, r->submit_ioctls);
		EXPECT_EQ(0, r->submit_ioctl_ns);
	} else {
		EXPECT_GT(r->submit_ioctls, 0);
		EXPECT_GT(r->submit_ioctl_ns, 0);
	}
	EXPECT_EQ((__u32)getpid(), r->ns_tgid);
}

/* The case: 3 steps of 2, 4 and 6 tasks, marked on the stream. */
TEST_F(st, steps_2_4_6)
{
	static const int shape[] = { 2, 4, 6 };
	struct npusim_task_truth t[16];
	struct steptime_step_stats r, prev = {};
	struct steptime_counters c0, c;
	__u64 idx, seq;
	int i, n;

	counters(&c0);
	for (i = 0; i < 3; i++) {
		struct timespec a, b;

		seq = next_seq(self->dev, self->s);
		clock_gettime(CLOCK_MONOTONIC, &a);
		ASSERT_EQ(0, run_step(self->s, shape[i], true, 0, &idx));
		clock_gettime(CLOCK_MONOTONIC, &b);
		/* The device times of the step's events, now. */
		ASSERT_EQ(0, steptime__flush());
		n = truth(self->dev, self->s, seq, t, 16);
		ASSERT_GE(n, shape[i] + 4);
		ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), idx, false, &r));
		check_stream_step(_metadata, &r, shape[i], t, self->freq,
				  (b.tv_sec - a.tv_sec) * 1000000000ull +
				  b.tv_nsec - a.tv_nsec,
				  npu_sqcq_is_mapped(npu_stream_sqcq(self->s)));
		if (i) {
			ASSERT_TRUE(r.flags & STEPTIME_F_GAP);
			EXPECT_EQ(r.host_start_ns - prev.host_end_ns, r.gap_ns);
		}
		prev = r;
	}
	counters(&c);
	EXPECT_EQ(12, c.tasks_in_step - c0.tasks_in_step);
	EXPECT_EQ(6, c.stream_marks - c0.stream_marks);
	expect_no_loss(_metadata, &c);
}

/* Host marks only: tasks go to the step open when they are submitted. */
TEST_F(st, host_marks)
{
	struct steptime_step_stats r;
	__u64 idx;
	int n;

	for (n = 1; n <= 7; n += 3) {
		ASSERT_EQ(0, run_step(self->s, n, false, 0, &idx));
		ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), idx, false, &r));
		EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
		EXPECT_EQ((__u64)n, r.tasks);
		EXPECT_EQ((__u64)n, r.completions);
		EXPECT_EQ(1, r.reported);	/* only the last asked */
		EXPECT_EQ(STEPTIME_STREAM_NONE, r.stream);
		EXPECT_FALSE(r.flags & (STEPTIME_F_DEV_START | STEPTIME_F_DEV_END));
		EXPECT_EQ(0, r.device_time_ns);
		EXPECT_LE(r.host_start_ns, r.first_submit_ns);
		EXPECT_LE(r.first_submit_ns, r.last_complete_ns);
	}
}

/*
 * One report completes the silent tasks of one step and the tasks of the
 * next: both steps are counted exactly and both reach DONE (the state the
 * BPF program carries from task to task across a bpf_loop).
 */
TEST_F(st, one_report_two_steps)
{
	struct steptime_mark_opts host = { .sz = sizeof(host) };
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .duration_ns = TASK_NS };
	struct steptime_step_stats ra, rb;
	struct trs_sqe a[3], b[2];
	__u64 ia = 501, ib = 502;
	int i;

	for (i = 0; i < 3; i++)
		npu_sqe_task(&a[i], &d);	/* no report of their own */
	fill_tasks(b, 2, TASK_NS, 0);		/* the last one reports */
	ASSERT_EQ(0, steptime__mark(ia, STEPTIME_TAG_START, &host));
	ASSERT_LE(0, npu_stream_submit(self->s, a, 3));
	ASSERT_EQ(0, steptime__mark(ia, STEPTIME_TAG_END, &host));
	ASSERT_EQ(0, steptime__mark(ib, STEPTIME_TAG_START, &host));
	ASSERT_LE(0, npu_stream_submit(self->s, b, 2));
	ASSERT_EQ(0, steptime__mark(ib, STEPTIME_TAG_END, &host));
	ASSERT_EQ(0, npu_stream_sync(self->s, 10000));
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), ia, false, &ra));
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), ib, false, &rb));
	EXPECT_EQ(3, ra.tasks);
	EXPECT_EQ(3, ra.completions);
	EXPECT_EQ(0, ra.reported);
	EXPECT_EQ(STEPTIME_STEP_DONE, ra.state);
	EXPECT_EQ(2, rb.tasks);
	EXPECT_EQ(2, rb.completions);
	EXPECT_EQ(1, rb.reported);
	EXPECT_EQ(STEPTIME_STEP_DONE, rb.state);
	/*
	 * The silent tasks complete at an SQ head (a query of the sync, or
	 * the later report's): no later than the report that ends b.
	 */
	EXPECT_LE(ra.last_complete_ns, rb.last_complete_ns);
}

/* Injected failures are counted as errors of their step, nothing lost. */
TEST_F(st, errors)
{
	struct steptime_step_stats r;
	__u64 idx;

	/* npu_stream_sync() reports failures of its tasks as -EIO. */
	run_step(self->s, 9, true, 3, &idx);
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), idx, false, &r));
	EXPECT_EQ(9, r.tasks);
	EXPECT_EQ(9, r.completions);
	EXPECT_EQ(3, r.errors);
	EXPECT_GE(r.reported, 3);
}

/* A batch of 1000 SQEs in one SEND: every one tracked and completed. */
TEST_F(st, big_batch)
{
	struct steptime_step_stats r;
	struct steptime_counters c;
	__u64 idx;

	ASSERT_EQ(0, run_step(self->s, 1000, true, 0, &idx));
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), idx, false, &r));
	EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
	EXPECT_EQ(1000, r.tasks);
	EXPECT_EQ(1000, r.completions);
	EXPECT_EQ(1000, hist_sum(&r));
	counters(&c);	/* never non-zero with bpf_loop */
	EXPECT_EQ(0, c.tasks_untracked);
	EXPECT_EQ(0, c.task_overwritten);
}

/* Many steps in a row: exact counts for each, no drop anywhere. */
TEST_F(st, many_steps)
{
	struct steptime_step_stats r;
	struct steptime_counters c0, c;
	__u64 idx[100];
	int i;

	counters(&c0);
	/* A process keeps its last STEPTIME_PROC_STEPS records: read each now. */
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, run_step(self->s, 1 + i % 7, i % 2, 0, &idx[i]));
		ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), idx[i], false, &r));
		EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
		EXPECT_EQ((__u64)(1 + i % 7), r.tasks);
		EXPECT_EQ(r.tasks, r.completions);
	}
	counters(&c);
	expect_no_loss(_metadata, &c);
	EXPECT_EQ(100, c.steps_done - c0.steps_done);
}

struct thr {
	struct npu_dev *dev;
	int n;
	int err;
};

static void *thr_run(void *arg)
{
	struct thr *t = arg;
	struct npu_stream *s = npu_stream_create(t->dev, NULL);
	struct trs_sqe sqe[64];

	if (!s) {
		t->err = -errno;
		return NULL;
	}
	fill_tasks(sqe, t->n, TASK_NS, 0);
	t->err = npu_stream_submit(s, sqe, t->n) < 0 ? -EIO :
		 npu_stream_sync(s, 10000);
	npu_stream_destroy(s);
	return NULL;
}

/*
 * Four threads on four streams submit into one process-wide step, right
 * after the START: their SENDs race to consume the mark. Several rounds.
 */
TEST_F(st, threads)
{
	struct steptime_mark_opts mo = { .sz = sizeof(mo) };
	struct steptime_step_stats r;
	struct trs_logic_cqe cqe;
	struct thr th[4];
	pthread_t tid[4];
	int round, i;

	for (round = 0; round < 8; round++) {
		struct steptime_step *step = steptime_step__new();

		ASSERT_NE(NULL, step);
		ASSERT_EQ(0, steptime_step__mark(step, STEPTIME_TAG_START, &mo));
		for (i = 0; i < 4; i++) {
			th[i] = (struct thr){ .dev = self->dev, .n = 3 + 5 * i };
			ASSERT_EQ(0, pthread_create(&tid[i], NULL, thr_run, &th[i]));
		}
		for (i = 0; i < 4; i++) {
			pthread_join(tid[i], NULL);
			ASSERT_EQ(0, th[i].err);
		}
		ASSERT_EQ(0, steptime_step__mark(step, STEPTIME_TAG_END, &mo));
		/* Any tracked ioctl makes the END mark take effect. */
		npu_sqcq_recv(npu_stream_sqcq(self->s), &cqe, 1, 0, NULL);
		ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(),
					 steptime_step__index_id(step),
					 false, &r));
		EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
		EXPECT_EQ(3 + 8 + 13 + 18, r.tasks) TH_LOG("round %d", round);
		EXPECT_EQ(r.tasks, r.completions);
		steptime_step__free(step);
	}
}

#define NSTREAMS	6	/* more than the thread's ST_CACHE_WAYS */
#define ROUNDS		4

/*
 * A runtime's thread submits to several streams in turn (compute,
 * communication, events): each stream's SQ and logic CQ are cached by their
 * id modulo ST_CACHE_WAYS, and with more streams than ways, some evict
 * each other at every call. One thread interleaves SENDs (one task each)
 * and synchronizes (RECV, QUERY) over six streams, each in its own
 * stream-marked step: a task given another stream's queue would land in
 * that stream's step.
 */
TEST_F(st, streams_interleaved)
{
	struct steptime_mark_opts mo = { .sz = sizeof(mo) };
	struct steptime_step *step[NSTREAMS] = {};
	struct npu_stream *s[NSTREAMS] = {};
	struct steptime_counters c0, c;
	struct steptime_step_stats r;
	struct trs_sqe sqe;
	int i, k, round, ways[ST_CACHE_WAYS] = {};

	counters(&c0);
	for (i = 0; i < NSTREAMS; i++) {
		s[i] = npu_stream_create(self->dev, NULL);
		ASSERT_NE(NULL, s[i]);
		ways[npu_sqcq_sq_id(npu_stream_sqcq(s[i])) % ST_CACHE_WAYS]++;
		step[i] = steptime_step__new();
		ASSERT_NE(NULL, step[i]);
		mo.stream = s[i];
		ASSERT_EQ(0, steptime_step__mark(step[i], STEPTIME_TAG_START,
						 &mo));
	}
	/* Six queues in four ways: two ways at least are shared. */
	for (i = k = 0; i < ST_CACHE_WAYS; i++)
		k += ways[i] > 1;
	EXPECT_GE(k, 1);
	for (round = 0; round < ROUNDS; round++) {
		/* Stream i gets i + 1 tasks a round, one SEND each, in turn. */
		for (k = 0; k < NSTREAMS; k++)
			for (i = k; i < NSTREAMS; i++) {
				fill_tasks(&sqe, 1, TASK_NS, 0);
				ASSERT_LE(0, npu_stream_submit(s[i], &sqe, 1));
			}
		for (i = 0; i < NSTREAMS; i++)
			ASSERT_EQ(0, npu_stream_sync(s[i], 10000));
	}
	for (i = 0; i < NSTREAMS; i++) {
		mo.stream = s[i];
		ASSERT_EQ(0, steptime_step__mark(step[i], STEPTIME_TAG_END,
						 &mo));
		ASSERT_EQ(0, npu_stream_sync(s[i], 10000));
	}
	for (i = 0; i < NSTREAMS; i++) {
		ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(),
					 steptime_step__index_id(step[i]),
					 false, &r));
		EXPECT_EQ(STEPTIME_STEP_DONE, r.state) TH_LOG("stream %d", i);
		EXPECT_EQ((__u64)ROUNDS * (i + 1), r.tasks) TH_LOG("stream %d", i);
		EXPECT_EQ(r.tasks, r.completions) TH_LOG("stream %d", i);
		EXPECT_EQ(0, r.errors);
		EXPECT_EQ((__u32)npu_stream_id(s[i]), r.stream);
		steptime_step__free(step[i]);
		npu_stream_destroy(s[i]);
	}
	counters(&c);
	EXPECT_EQ(ROUNDS * NSTREAMS * (NSTREAMS + 1) / 2,
		  c.tasks_in_step - c0.tasks_in_step);
	EXPECT_EQ(2 * NSTREAMS, c.stream_marks - c0.stream_marks);
	expect_no_loss(_metadata, &c);
}

struct slot_thr {
	struct npu_sqcq *q;
	struct trs_sqe sqe;
	pid_t want;		/* a thread id of this slot... */
	pid_t tid;		/* ...this thread's */
	int ret;
};

/* A thread in @t->want's slot blocks in a SEND on its full, paused SQ. */
static void *slot_run(void *arg)
{
	struct slot_thr *t = arg;
	pid_t tid = syscall(SYS_gettid);

	if ((tid ^ t->want) & (ST_THREAD_SLOTS - 1)) {
		__atomic_store_n(&t->tid, tid, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&t->tid, tid, __ATOMIC_RELEASE);
	t->ret = npu_sqcq_send(t->q, &t->sqe, 1, -1);
	return NULL;
}

/*
 * A thread's ioctl entry is kept in a slot chosen by its thread id; a
 * thread whose slot another thread's ioctl holds keeps its entry in a
 * hash instead. Thread H, in the main thread's slot, blocks in a SEND
 * while the main thread runs a step: the step is exact, H's SEND is
 * accounted when it returns, and nothing was lost.
 * kio, named (config sq_mode CONFIG, uio_mode 0): the test is about SEND
 * ioctls, one blocking on a full SQ, which mapped SQs (the chip's default)
 * never make.
 */
TEST_F(st, thread_slot_shared)
{
	struct npu_sqcq_opts qo = { .sz = sizeof(qo), .sq_depth = 4 };
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .duration_ns = TASK_NS };
	struct steptime_counters c0, c1, c2;
	struct slot_thr t = { .want = syscall(SYS_gettid) };
	int fd = npu_dev_fd(self->dev), i;
	struct npusim_config cfg, old;
	struct steptime_step_stats r;
	struct trs_sqe full[4];
	struct npu_stream *s;
	pthread_t th;
	__u64 idx;

	ASSERT_EQ(0, npu_sim_get_config(self->dev, &old));
	cfg = old;
	cfg.mask = old.mask = NPUSIM_CFG_UIO_MODE | NPUSIM_CFG_SQ_MODE;
	cfg.uio_mode = NPUSIM_UIO_KIO;
	cfg.sq_mode = NPUSIM_SQ_MODE_CONFIG;
	ASSERT_EQ(0, npu_sim_set_config(self->dev, &cfg));
	t.q = npu_sqcq_alloc(self->dev, &qo);
	s = npu_stream_create(self->dev, NULL);
	ASSERT_EQ(0, npu_sim_set_config(self->dev, &old));
	ASSERT_NE(NULL, t.q);
	ASSERT_NE(NULL, s);
	ASSERT_FALSE(npu_sqcq_is_mapped(t.q));
	ASSERT_FALSE(npu_sqcq_is_mapped(npu_stream_sqcq(s)));
	npu_sqe_task(&t.sqe, &d);
	/* Four tasks, not one of four SQEs: ids of their own. */
	for (i = 0; i < 4; i++) {
		d.task_id = i + 1;
		npu_sqe_task(&full[i], &d);
	}
	do_sq_pause(fd, npu_dev_ts_id(self->dev), npu_sqcq_sq_id(t.q));
	ASSERT_EQ(0, npu_sqcq_send(t.q, full, 4, 0));
	/* Thread ids are handed out in turn: one in 4096 shares the slot. */
	for (i = 0; i < 4 * ST_THREAD_SLOTS; i++) {
		t.tid = 0;
		ASSERT_EQ(0, pthread_create(&th, NULL, slot_run, &t));
		while (!__atomic_load_n(&t.tid, __ATOMIC_ACQUIRE))
			sched_yield();
		if (!((t.tid ^ t.want) & (ST_THREAD_SLOTS - 1)))
			break;
		pthread_join(th, NULL);
	}
	ASSERT_LT(i, 4 * ST_THREAD_SLOTS) TH_LOG("no thread id shares a slot");
	wait_blocked_in_ioctl(t.tid);

	counters(&c0);
	ASSERT_EQ(0, run_step(s, 5, false, 0, &idx));
	counters(&c1);
	do_sq_resume(fd, npu_dev_ts_id(self->dev), npu_sqcq_sq_id(t.q));
	pthread_join(th, NULL);
	EXPECT_EQ(0, t.ret);	/* after the 4 queued: 4 modulo the depth */
	ASSERT_EQ(0, npu_stream_sync(s, 10000));
	counters(&c2);

	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), idx, false, &r));
	EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
	EXPECT_EQ(5, r.tasks);
	EXPECT_EQ(5, r.completions);
	EXPECT_GT(r.submit_ioctls, 0);
	/* The main thread's SEND went to the hash, and paired there. */
	EXPECT_GE(c1.calls_slot_shared - c0.calls_slot_shared, 1);
	EXPECT_EQ(c0.calls_unpaired, c2.calls_unpaired);
	/* Its 5 tasks, then H's: outside any step, accounted at its exit. */
	EXPECT_EQ(5, c1.tasks - c0.tasks);
	EXPECT_EQ(6, c2.tasks - c0.tasks);
	EXPECT_EQ(1, c2.tasks_outside_step - c1.tasks_outside_step);
	expect_no_loss(_metadata, &c2);
	npu_stream_destroy(s);
	npu_sqcq_free(t.q);
}

static void *thr_cycle(void *arg)
{
	struct thr *t = arg;
	int i;

	for (i = 0; i < 10 && !t->err; i++)
		thr_run(t);
	return NULL;
}

/*
 * SQ ids are reused as soon as the driver frees them: a thread's FREE may
 * be seen after another thread's ALLOC of the same id, and must not take
 * that SQ's tasks with it. Four threads create, use and free streams over
 * and over inside one step.
 */
TEST_F(st, sq_id_reuse)
{
	struct steptime_mark_opts mo = { .sz = sizeof(mo) };
	struct steptime_step_stats r;
	struct trs_logic_cqe cqe;
	struct thr th[4];
	pthread_t tid[4];
	int i;

	ASSERT_EQ(0, steptime__mark(900, STEPTIME_TAG_START, &mo));
	for (i = 0; i < 4; i++) {
		th[i] = (struct thr){ .dev = self->dev, .n = 2 + i };
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, thr_cycle, &th[i]));
	}
	for (i = 0; i < 4; i++) {
		pthread_join(tid[i], NULL);
		ASSERT_EQ(0, th[i].err);
	}
	ASSERT_EQ(0, steptime__mark(900, STEPTIME_TAG_END, &mo));
	npu_sqcq_recv(npu_stream_sqcq(self->s), &cqe, 1, 0, NULL);
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), 900, false, &r));
	EXPECT_EQ(10 * (2 + 3 + 4 + 5), r.tasks);
	EXPECT_EQ(r.tasks, r.completions);
	EXPECT_EQ(0, r.errors);
	EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
}

/*
 * Two threads of a new process make its entry at once: one claims the
 * slot, and before it publishes the entry, the other's ioctl finds the
 * slot claimed by its process. That moment is held here for good: the
 * child's home slot is claimed in its name before it starts. Its ioctls
 * must complete the entry themselves, and its step be exact; were they to
 * wait for the claimer, or give up, its marks would never be bound.
 */
TEST_F(st, proc_claimed_unpublished)
{
	struct steptime_counters c0, c1;
	struct steptime_step_stats r;
	struct st_proc slot;
	int go[2], status, fd;
	__u32 k;
	pid_t pid;
	char b;

	fd = internal_map_fd("procs");
	ASSERT_GE(fd, 0) TH_LOG("the program's procs map: %s", strerror(errno));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct npu_dev *d;
		struct npu_stream *s;
		__u64 idx;

		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(2);
		d = npu_dev_open(NULL);
		s = d ? npu_stream_create(d, NULL) : NULL;
		_exit(s && !run_step(s, 3, false, 0, &idx) ? 0 : 1);
	}
	close(go[0]);
	k = (__u32)pid & (STEPTIME_MAX_PROCS - 1);
	ASSERT_EQ(0, bpf_map_lookup_elem(fd, &k, &slot));
	ASSERT_EQ(0, slot.claim) TH_LOG("slot %u is pid %u's", k, slot.claim);
	memset(&slot, 0, sizeof(slot));
	slot.claim = pid;
	ASSERT_EQ(0, bpf_map_update_elem(fd, &k, &slot, BPF_ANY));
	counters(&c0);
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	counters(&c1);
	close(fd);

	ASSERT_EQ(0, st_step_get(PIN_DIR, pid, 1, false, &r));
	EXPECT_EQ(3, r.tasks);
	EXPECT_EQ(3, r.completions);
	EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
	EXPECT_EQ(c0.hook_errors, c1.hook_errors);
	EXPECT_EQ(c0.proc_map_full, c1.proc_map_full);
}

/* Children run their own steps; each is attributed to its own pid. */
TEST_F(st, processes)
{
	struct steptime_step_stats r;
	pid_t pid[3];
	int i, status;

	for (i = 0; i < 3; i++) {
		pid[i] = fork();
		ASSERT_GE(pid[i], 0);
		if (pid[i] == 0) {
			struct npu_dev *d = npu_dev_open(NULL);
			struct npu_stream *s = d ? npu_stream_create(d, NULL) : NULL;
			__u64 idx;
			int k, rc = 0;

			for (k = 0; s && k < 2; k++)
				rc |= run_step(s, 2 + i + k, k, 0, &idx);
			_exit(s && !rc ? 0 : 1);
		}
	}
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		ASSERT_EQ(0, WEXITSTATUS(status));
	}
	/* Index ids restart at 1 in each child (a fresh library). */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, st_step_get(PIN_DIR, pid[i], 1, false, &r));
		EXPECT_EQ((__u64)(2 + i), r.tasks);
		EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
		ASSERT_EQ(0, st_step_get(PIN_DIR, pid[i], 2, false, &r));
		EXPECT_EQ((__u64)(3 + i), r.tasks);
		EXPECT_EQ((__u32)pid[i], r.tgid);
	}
}

/* In a new PID namespace the process is pid 1, and still found. */
TEST_F(st, pid_namespace)
{
	struct steptime_step_stats r;
	struct stat st;
	pid_t pid;
	int status;

	ASSERT_EQ(0, unshare(CLONE_NEWPID)) TH_LOG("unshare: %s", strerror(errno));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct npu_dev *d = npu_dev_open(NULL);
		struct npu_stream *s = d ? npu_stream_create(d, NULL) : NULL;
		__u64 idx;

		if (getpid() != 1 || !s)
			_exit(2);
		_exit(run_step(s, 5, true, 0, &idx) ? 1 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, st_step_get(PIN_DIR, pid, 1, false, &r));
	EXPECT_EQ((__u32)pid, r.tgid);
	EXPECT_EQ(1, r.ns_tgid);
	EXPECT_EQ(5, r.tasks);
	EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
	/* Not our namespace: the child's. */
	ASSERT_EQ(0, stat("/proc/self/ns/pid", &st));
	EXPECT_NE((__u32)st.st_ino, r.pidns_ino);
}

/*
 * torch_npu's task queue submits a step's tasks after the host marked END.
 * Stream marks keep them in their step; host marks alone cannot (the
 * documented limit): those tasks are counted outside any step.
 */
TEST_F(st, tasks_after_host_end)
{
	struct steptime_mark_opts host = { .sz = sizeof(host) };
	struct steptime_counters c0, c1;
	struct steptime_step_stats r;
	struct trs_sqe sqe[4];
	__u64 idx = 1000;

	fill_tasks(sqe, 4, TASK_NS, 0);
	/* Stream-ordered: place-holders bracket the late tasks. */
	ASSERT_LE(0, npu_stream_mark_step(self->s, idx, STEPTIME_TAG_START));
	ASSERT_EQ(0, steptime__mark(idx, STEPTIME_TAG_START, &host));
	ASSERT_EQ(0, steptime__mark(idx, STEPTIME_TAG_END, &host));
	ASSERT_LE(0, npu_stream_submit(self->s, sqe, 4));
	ASSERT_LE(0, npu_stream_mark_step(self->s, idx, STEPTIME_TAG_END));
	ASSERT_EQ(0, npu_stream_sync(self->s, 10000));
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), idx, false, &r));
	EXPECT_EQ(4, r.tasks);
	EXPECT_EQ(4, r.completions);
	EXPECT_EQ(STEPTIME_STEP_DONE, r.state);

	/* Host marks only: the late tasks belong to no step. */
	counters(&c0);
	ASSERT_EQ(0, steptime__mark(idx + 1, STEPTIME_TAG_START, &host));
	ASSERT_EQ(0, steptime__mark(idx + 1, STEPTIME_TAG_END, &host));
	ASSERT_LE(0, npu_stream_submit(self->s, sqe, 4));
	ASSERT_EQ(0, npu_stream_sync(self->s, 10000));
	counters(&c1);
	EXPECT_EQ(4, c1.tasks_outside_step - c0.tasks_outside_step);
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), idx + 1, false, &r));
	EXPECT_EQ(0, r.tasks);
}

/*
 * Mapped SQ (npusim's config uio_mode 1, uio_t, named here whatever the
 * chip; the suite's other SQs are the chip's default): no SEND. The
 * npu HAL submits through libascend_hal.so, which this process maps, so
 * the load found it and probed it: each task reaches its step in every
 * mode. Without the HAL's probes only the SQE trace hook (fentry, kprobe)
 * sees them, and elsewhere the step's task figures are absent (F_UIO,
 * ENDED): selftests/hal_steps' unprobed variants.
 */
TEST_F(st, uio)
{
	struct npu_stream_opts so = { .sz = sizeof(so), .mapped = true };
	struct steptime_mark_opts host = { .sz = sizeof(host) };
	struct npusim_config cfg = { .mask = NPUSIM_CFG_UIO_MODE };
	struct steptime_info inf;
	struct npu_stream *s;
	__u32 old_mode, old_sq_mode;
	struct steptime_step_stats r;
	struct trs_sqe sqe[6];
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .wr_cqe = true,
				   .duration_ns = TASK_NS };
	struct trs_logic_cqe cqe;
	__u64 idx = 77;
	int i;

	ASSERT_EQ(0, npu_sim_get_config(self->dev, &cfg));
	old_mode = cfg.uio_mode;
	old_sq_mode = cfg.sq_mode;
	cfg.mask = NPUSIM_CFG_UIO_MODE | NPUSIM_CFG_SQ_MODE;
	cfg.uio_mode = NPUSIM_UIO_T;
	cfg.sq_mode = NPUSIM_SQ_MODE_CONFIG;
	ASSERT_EQ(0, npu_sim_set_config(self->dev, &cfg));
	s = npu_stream_create(self->dev, &so);
	cfg.uio_mode = old_mode;
	cfg.sq_mode = old_sq_mode;
	ASSERT_EQ(0, npu_sim_set_config(self->dev, &cfg));
	ASSERT_NE(NULL, s);
	for (i = 0; i < 6; i++)
		npu_sqe_task(&sqe[i], &d);
	ASSERT_EQ(0, steptime__mark(idx, STEPTIME_TAG_START, &host));
	/* Any tracked ioctl makes the START mark take effect. */
	npu_sqcq_recv(npu_stream_sqcq(self->s), &cqe, 1, 0, NULL);
	ASSERT_LE(0, npu_stream_submit(s, sqe, 6));
	ASSERT_EQ(0, npu_stream_sync(s, 10000));
	ASSERT_EQ(0, steptime__mark(idx, STEPTIME_TAG_END, &host));
	npu_sqcq_recv(npu_stream_sqcq(self->s), &cqe, 1, 0, NULL);
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), idx, false, &r));
	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &inf));
	if (inf.nhal || variant->mode == STEPTIME_ATTACH_FENTRY ||
	    variant->mode == STEPTIME_ATTACH_KPROBE) {
		EXPECT_EQ(0, r.flags & STEPTIME_F_UIO);
		EXPECT_EQ(6, r.tasks);
		EXPECT_EQ(6, r.completions);
		EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
	} else {
		EXPECT_TRUE(r.flags & STEPTIME_F_UIO);
		EXPECT_EQ(0, r.tasks);
		EXPECT_EQ(STEPTIME_STEP_ENDED, r.state);
	}
	/* This process maps libascend_hal.so: the load probed it. */
	EXPECT_LE(1, inf.nhal);
	npu_stream_destroy(s);
}

/*
 * In a forked child: open the device, start step 1 and submit 3 tasks of
 * @task_ns each on a new stream, which is returned. Exits 2 on a failure.
 */
static struct npu_stream *child_step_start(__u32 task_ns)
{
	struct steptime_mark_opts mo = { .sz = sizeof(mo) };
	struct npu_dev *d = npu_dev_open(NULL);
	struct npu_stream *s = d ? npu_stream_create(d, NULL) : NULL;
	struct trs_sqe sqe[3];

	if (!s)
		_exit(2);
	fill_tasks(sqe, 3, task_ns, 0);
	if (steptime__mark(1, STEPTIME_TAG_START, &mo) ||
	    npu_stream_submit(s, sqe, 3) < 0)
		_exit(2);
	return s;
}

/* A process that dies mid-step leaves it incomplete, and its slot free. */
TEST_F(st, exit_mid_step)
{
	struct steptime_counters c0, c1;
	struct steptime_step_stats r;
	pid_t pid;
	int status;

	counters(&c0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		child_step_start(50 * 1000 * 1000);
		_exit(0);	/* no END: killed mid-step */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, st_step_get(PIN_DIR, pid, 1, false, &r));
	EXPECT_EQ(STEPTIME_STEP_INCOMPLETE, r.state);
	EXPECT_EQ(3, r.tasks);
	counters(&c1);
	EXPECT_EQ(1, c1.steps_incomplete - c0.steps_incomplete);
	EXPECT_EQ(1, c1.proc_exits - c0.proc_exits);
}

/*
 * Marks written after a process's last ioctl are read at its exit, while
 * its memory still exists: at exit() in every mode, and when a fatal signal
 * ends it too in the modes that hook do_exit() (fentry, kprobe). The
 * syscall modes read them at exit_group() only: a killed process's last
 * marks are lost there (README).
 */
static void exit_after_end(struct __test_metadata *_metadata, int mode,
			   bool killed)
{
	struct steptime_step_stats r;
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct steptime_mark_opts mo = { .sz = sizeof(mo) };

		if (npu_stream_sync(child_step_start(1000), 10000))
			_exit(3);
		/* No ioctl after this END: only the exit can read it. */
		steptime__mark(1, STEPTIME_TAG_END, &mo);
		if (killed)
			raise(SIGKILL);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (killed) {
		ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	} else {
		ASSERT_EQ(0, WEXITSTATUS(status));
	}
	ASSERT_EQ(0, st_step_get(PIN_DIR, pid, 1, false, &r));
	EXPECT_EQ(3, r.tasks);
	EXPECT_EQ(3, r.completions);
	if (killed && mode != STEPTIME_ATTACH_FENTRY &&
	    mode != STEPTIME_ATTACH_KPROBE) {
		EXPECT_EQ(STEPTIME_STEP_INCOMPLETE, r.state);
		EXPECT_EQ(0, r.host_end_ns);
	} else {
		EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
		EXPECT_NE(0, r.host_end_ns);
	}
}

TEST_F(st, end_read_at_exit)
{
	exit_after_end(_metadata, variant->mode, false);
}

TEST_F(st, end_read_at_fatal_signal)
{
	exit_after_end(_metadata, variant->mode, true);
}

/* Marks from a process that is not root: allowed by the maps' mode. */
TEST_F(st, non_root)
{
	struct steptime_step_stats r;
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct npu_dev *d = npu_dev_open(NULL);
		struct npu_stream *s = d ? npu_stream_create(d, NULL) : NULL;
		__u64 idx;

		if (!s || setgid(65534) || setuid(65534))
			_exit(2);
		_exit(run_step(s, 3, false, 0, &idx) ? 1 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, st_step_get(PIN_DIR, pid, 1, false, &r));
	EXPECT_EQ(3, r.tasks);
	EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
	/* The user that marked it (it opened the device as root). */
	EXPECT_EQ(65534, r.uid);
}

/* Root-only maps: a non-root mark gets -EACCES, and nothing breaks. */
TEST_F(st, non_root_denied)
{
	pid_t pid;
	int status;

	ASSERT_EQ(0, _load(variant->mode, 0600));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct steptime_mark_opts mo = { .sz = sizeof(mo) };

		if (setgid(65534) || setuid(65534))
			_exit(2);
		_exit(steptime__mark(1, STEPTIME_TAG_START, &mo) == -EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * Kernels without bpf_loop() (before 5.17) get bounded loops: a SEND of
 * more SQEs than the bound still counts every task in its step; the ones
 * past the bound are counted as untracked, not timed. The device opened
 * on its node, not through libascend_hal.so: one SEND ioctl of 10 SQEs
 * (through the HAL each task is a call of its own, as CANN's).
 */
TEST(fallback_loop_bound)
{
	struct npu_dev_opts d = { .sz = sizeof(d), .path = NPU_DEFAULT_DEVICE };
	struct steptime_load_opts o = {
		.sz = sizeof(o),
		.attach_mode = STEPTIME_ATTACH_TRACEPOINT,
		.pin_dir = PIN_DIR,
		.map_mode = 0666,
		.map_gid = -1,
		.no_bpf_loop = 1,
	};
	struct steptime_step_stats r;
	struct steptime_counters c;
	struct npu_stream *s;
	struct npu_dev *dev;
	__u64 idx;
	int err;

	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	steptime__unload(PIN_DIR);
	err = steptime__load(&o);
	ASSERT_EQ(0, err) TH_LOG("load without bpf_loop: %s", strerror(-err));
	dev = npu_dev_open(&d);
	ASSERT_NE(NULL, dev);
	s = npu_stream_create(dev, NULL);
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, run_step(s, 10, false, 0, &idx));
	ASSERT_EQ(0, st_step_get(PIN_DIR, getpid(), idx, false, &r));
	EXPECT_EQ(10, r.tasks);
	EXPECT_EQ(10, r.completions);
	EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
	counters(&c);
	EXPECT_EQ(10 - 4, c.tasks_untracked);	/* STEPTIME_LOOP_FALLBACK */
	npu_stream_destroy(s);
	npu_dev_close(dev);
	steptime__unload(PIN_DIR);
}

TEST_HARNESS_MAIN
