// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: several SQs and processes at once, closing with tasks in flight,
 * and 100,000 tasks without loss.
 */
#include <pthread.h>
#include <sys/wait.h>
#include "npusim_test.h"

/* Every live object counter of @st equals @base's. */
static int live_eq(const struct npusim_stats *a, const struct npusim_stats *b)
{
	return a->fds == b->fds && a->sqs == b->sqs && a->cqs == b->cqs &&
	       a->tasks_queued == b->tasks_queued &&
	       a->reports_pending == b->reports_pending;
}

/* Poll @st until its live counters are @base's again, for up to 5 s. */
static void wait_live(struct __test_metadata *_metadata, int fd,
		      const struct npusim_stats *base, struct npusim_stats *st)
{
	__u64 end = now_ns() + 5000000000ull;

	do {
		do_stats(fd, st);
		if (live_eq(base, st))
			return;
		usleep(1000);
	} while (now_ns() < end);
}

/*
 * One SQ's share of a run: @n reporting tasks in batches, every report
 * checked against the task it belongs to, at most @depth (the SQ's and
 * CQ's) outstanding: a full CQ stalls the SQ. Return: 0, or a line number.
 */
static int run_sq(int fd, __u32 sq, __u32 cq, __u16 stream, __u32 n,
		  __u32 batch, __u32 depth, __u32 dur_ns)
{
	struct trs_logic_cqe c[256];
	struct trs_sqe s[256];
	__u32 sent = 0, got = 0, i, k;
	int r;

	while (got < n) {
		if (sent < n && sent - got + batch <= depth) {
			k = n - sent < batch ? n - sent : batch;
			for (i = 0; i < k; i++)
				sqe_task(&s[i], TRS_SQE_FFTS, stream,
					 (__u16)(sent + i), true, dur_ns, 0);
			if (_do_send(fd, sq, s, k, -1, NULL))
				return __LINE__;
			sent += k;
			continue;
		}
		r = _do_recv(fd, cq, c, 256, 5000);
		if (r <= 0)
			return __LINE__;
		for (i = 0; i < (__u32)r; i++, got++)
			if (c[i].task_id != (__u16)got ||
			    c[i].stream_id != stream || c[i].sq_id != sq ||
			    c[i].error_code)
				return __LINE__;
	}
	return 0;
}

FIXTURE(dev) {
	int fd;
	struct npusim_stats st0;
};

FIXTURE_SETUP(dev)
{
	do_open(&self->fd, true);
	do_stats(self->fd, &self->st0);
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

/* Eight SQs of one fd, interleaved: each CQ sees its SQ's tasks in order. */
TEST_F(dev, many_sqs_one_fd)
{
	struct trs_logic_cqe c[8][100];
	__u32 sq[8], cq[8];
	struct trs_sqe s;
	int i, q;

	for (q = 0; q < 8; q++)
		do_alloc(self->fd, 128, 0, &sq[q], &cq[q]);
	for (i = 0; i < 100; i++)
		for (q = 0; q < 8; q++) {
			sqe_task(&s, TRS_SQE_FFTS, q, i, true, 1000 * (q + 1), 0);
			do_send(self->fd, sq[q], &s, 1, NULL);
		}
	for (q = 0; q < 8; q++) {
		do_recv_n(self->fd, cq[q], c[q], 100);
		for (i = 0; i < 100; i++) {
			EXPECT_EQ(q, c[q][i].stream_id);
			EXPECT_EQ(i, c[q][i].task_id);
			EXPECT_EQ(sq[q], c[q][i].sq_id);
		}
	}
	for (q = 0; q < 8; q++)
		do_free(self->fd, sq[q], cq[q]);
}

/*
 * SQs run concurrently on the units: 4 SQs' tasks overlap (long enough for
 * the four SENDs to happen within the first one, even on a loaded host).
 */
TEST_F(dev, sqs_run_in_parallel)
{
	struct npusim_task_truth t[4];
	struct trs_logic_cqe c;
	__u32 sq[4], cq[4];
	struct trs_sqe s;
	__u64 first_end = ~0ull, last_start = 0;
	struct npusim_config cfg;
	int q;

	do_get_config(self->fd, &cfg);
	if (cfg.units < 4)
		SKIP(return, "device configured with %u units", cfg.units);
	for (q = 0; q < 4; q++)
		do_alloc(self->fd, 16, 0, &sq[q], &cq[q]);
	for (q = 0; q < 4; q++) {
		sqe_task(&s, TRS_SQE_FFTS, q, 0, true, 300000000, 0);
		do_send(self->fd, sq[q], &s, 1, NULL);
	}
	for (q = 0; q < 4; q++) {
		do_recv_n(self->fd, cq[q], &c, 1);
		do_truth(self->fd, sq[q], 0, &t[q], 1);
		if (t[q].end_ns < first_end)
			first_end = t[q].end_ns;
		if (t[q].start_ns > last_start)
			last_start = t[q].start_ns;
	}
	EXPECT_LT(last_start, first_end);
}

/* Processes with their own fds and SQs at once. */
TEST_F(dev, processes)
{
	struct npusim_stats st;
	pid_t pid[4];
	int i, status;

	for (i = 0; i < 4; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			__u32 sq, cq;
			int fd = _do_open(true), line;

			if (fd < 0 || _do_alloc(fd, 256, 0, &sq, &cq))
				_exit(1);
			line = run_sq(fd, sq, cq, 100 + i, 2000, 128, 256, 200);
			if (line)
				fprintf(stderr, "child %d: failed at line %d\n",
					i, line);
			_exit(line ? 2 : 0);
		}
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("child %d: status %#x", i, status);
	}
	/* Their fds closed with them: nothing of theirs is left. */
	do_stats(self->fd, &st);
	EXPECT_TRUE(live_eq(&self->st0, &st));
	EXPECT_EQ(self->st0.submitted + 8000, st.submitted);
	EXPECT_EQ(self->st0.reports + 8000, st.reports);
}

struct sq_thread {
	int fd;
	__u32 sq, cq;
	__u16 stream;
	__u32 n;
	__u32 depth;
	int line;
};

static void *sq_thread_fn(void *arg)
{
	struct sq_thread *t = arg;

	t->line = run_sq(t->fd, t->sq, t->cq, t->stream, t->n, 256, t->depth,
			 100);
	return NULL;
}

/* Threads of one process on one fd, each on its own SQ. */
TEST_F(dev, threads_one_fd)
{
	struct sq_thread t[4];
	pthread_t tid[4];
	int i;

	for (i = 0; i < 4; i++) {
		t[i] = (struct sq_thread){
			.fd = self->fd, .stream = i, .n = 2000, .depth = 512,
		};
		do_alloc(self->fd, 512, 0, &t[i].sq, &t[i].cq);
	}
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, sq_thread_fn, &t[i]));
	for (i = 0; i < 4; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(0, t[i].line) TH_LOG("thread %d", i);
	}
	for (i = 0; i < 4; i++)
		do_free(self->fd, t[i].sq, t[i].cq);
}

/*
 * Closing an fd with tasks queued and running and reports unreceived
 * cancels the rest; another fd sees every live counter back where it was.
 */
TEST_F(dev, close_in_flight)
{
	struct trs_sqe s[100];
	struct npusim_stats st;
	__u32 sq, cq;
	__u64 end;
	int fd, q, i;

	do_open(&fd, true);
	for (q = 0; q < 3; q++) {
		do_alloc(fd, 128, q == 2 ? TSDRV_FLAG_REUSE_CQ : 0, &sq, &cq);
		if (q == 2)
			break;	/* mapped: nothing sent, still to be freed */
		for (i = 0; i < 100; i++)
			sqe_task(&s[i], TRS_SQE_FFTS, q, i, i < 5,
				 i < 5 ? 100 : 50000000, 0);
		do_send(fd, sq, s, 100, NULL);
	}
	/* Until the first five of each SQ have reported. */
	end = now_ns() + 5000000000ull;
	do {
		do_stats(self->fd, &st);
		if (st.reports_pending >= self->st0.reports_pending + 10)
			break;
		usleep(1000);
	} while (now_ns() < end);
	EXPECT_LT(self->st0.tasks_queued, st.tasks_queued);
	EXPECT_LT(self->st0.reports_pending, st.reports_pending);
	EXPECT_EQ(self->st0.sqs + 3, st.sqs);
	close(fd);

	wait_live(_metadata, self->fd, &self->st0, &st);
	EXPECT_EQ(self->st0.fds, st.fds);
	EXPECT_EQ(self->st0.sqs, st.sqs);
	EXPECT_EQ(self->st0.cqs, st.cqs);
	EXPECT_EQ(self->st0.tasks_queued, st.tasks_queued);
	EXPECT_EQ(self->st0.reports_pending, st.reports_pending);
	EXPECT_EQ(self->st0.submitted + 200, st.submitted);
	EXPECT_LT(self->st0.cancelled + 150, st.cancelled);
	EXPECT_EQ(200, st.completed - self->st0.completed +
		       st.cancelled - self->st0.cancelled);
}

/* A process killed in the middle is cleaned up the same way. */
TEST_F(dev, killed_process)
{
	struct npusim_stats st;
	int p[2], status;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct trs_sqe s[64];
		__u32 sq, cq;
		int fd = _do_open(true), i;

		if (fd < 0 || _do_alloc(fd, 64, 0, &sq, &cq))
			_exit(1);
		for (i = 0; i < 64; i++)
			sqe_task(&s[i], TRS_SQE_FFTS, 1, i, true, 100000000, 0);
		if (_do_send(fd, sq, s, 64, -1, NULL))
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		/* Blocked in SEND (the SQ is full) when killed. */
		_do_send(fd, sq, s, 64, -1, NULL);
		_exit(0);
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &c, 1));
	usleep(10000);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	wait_live(_metadata, self->fd, &self->st0, &st);
	EXPECT_TRUE(live_eq(&self->st0, &st));
}

/*
 * 100,000 tasks on 4 SQs from 4 threads: every report received exactly
 * once, in order per SQ, and the truth of every task DONE and reported.
 */
/*
 * Tasks 0..@n-1 of @sq whose truth is not "DONE, reported, no error", or
 * -errno; *@next is the SQ's task count.
 */
static int truth_all_done(int fd, __u32 sq, __u64 n, __u64 *next)
{
	static struct npusim_task_truth t[4096];
	__u64 seq;
	int r, k, bad = 0;

	*next = 0;
	for (seq = 0; seq < n; seq += r) {
		r = _do_truth(fd, sq, seq, t, 4096, next);
		if (r <= 0)
			return r ? r : -ENODATA;
		for (k = 0; k < r; k++)
			bad += t[k].seq != seq + k ||
			       t[k].state != NPUSIM_TASK_DONE ||
			       !t[k].report || t[k].error_code;
	}
	return bad;
}

#define STRESS_SQS	4
#define STRESS_TASKS	25000

TEST_F_TIMEOUT(dev, hundred_thousand_tasks, 120)
{
	struct sq_thread th[STRESS_SQS];
	pthread_t tid[STRESS_SQS];
	struct npusim_stats st;
	__u64 next;
	int i, bad;

	for (i = 0; i < STRESS_SQS; i++) {
		th[i] = (struct sq_thread){
			.fd = self->fd, .stream = 10 + i, .n = STRESS_TASKS,
			.depth = 1024,
		};
		do_alloc(self->fd, 1024, 0, &th[i].sq, &th[i].cq);
	}
	for (i = 0; i < STRESS_SQS; i++)
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, sq_thread_fn, &th[i]));
	for (i = 0; i < STRESS_SQS; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(0, th[i].line) TH_LOG("SQ %d", i);
	}
	/* Nothing more: each report came exactly once. */
	for (i = 0; i < STRESS_SQS; i++) {
		struct trs_logic_cqe c;

		do_recv_err(ETIMEDOUT, self->fd, th[i].cq, &c, 1, 0);
	}
	for (i = 0; i < STRESS_SQS; i++) {
		bad = truth_all_done(self->fd, th[i].sq, STRESS_TASKS, &next);
		EXPECT_EQ(STRESS_TASKS, next) TH_LOG("SQ %d", i);
		EXPECT_EQ(0, bad) TH_LOG("SQ %d", i);
	}
	do_stats(self->fd, &st);
	EXPECT_EQ(self->st0.submitted + STRESS_SQS * STRESS_TASKS, st.submitted);
	EXPECT_EQ(self->st0.completed + STRESS_SQS * STRESS_TASKS, st.completed);
	EXPECT_EQ(self->st0.reports + STRESS_SQS * STRESS_TASKS, st.reports);
	EXPECT_EQ(self->st0.errors, st.errors);
	EXPECT_EQ(self->st0.tasks_queued, st.tasks_queued);
	EXPECT_EQ(self->st0.reports_pending, st.reports_pending);
	for (i = 0; i < STRESS_SQS; i++)
		do_free(self->fd, th[i].sq, th[i].cq);
}

TEST_HARNESS_MAIN
