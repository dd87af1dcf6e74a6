// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: several devices, TS, streams, threads and processes at once,
 * with the same ids; closing and killing with tasks in flight; 100,000
 * tasks with sparse reports and nothing lost.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include "npusim_test.h"

#define REPORT_EVERY	16	/* a recycle-style report every 16 tasks */

/*
 * One stream's share of a run: @n tasks in batches, a report every
 * REPORT_EVERY, each checked against the task it belongs to; SEND blocks
 * while the SQ is full; the SQ head says when everything is done. Return:
 * 0, or the line of the first mismatch.
 */
static int run_stream(struct npq *q, __u32 n, __u32 batch, __u32 depth,
		      __u32 dur_ns)
{
	struct trs_logic_cqe c[256];
	struct trs_sqe s[256];
	__u32 sent = 0, got = 0, want = n / REPORT_EVERY, i, k;
	int r;

	while (sent < n || got < want) {
		if (sent < n) {
			k = n - sent < batch ? n - sent : batch;
			for (i = 0; i < k; i++)
				sqe_task(&s[i], TRS_SQE_FFTS, q->stream,
					 (__u16)(sent + i),
					 (sent + i + 1) % REPORT_EVERY == 0,
					 dur_ns, 0);
			if (_do_send_ts(q->fd, q->ts, q->sq, s, k, -1, NULL))
				return __LINE__;
			sent += k;
		}
		r = _do_recv_type(q->fd, TRS_SQCQ_TYPE_LOGIC, q->ts, q->lcq, c,
				  256, sent < n ? 0 : WAIT_MS);
		if (r < 0)
			return __LINE__;
		for (i = 0; i < (__u32)r; i++, got++)
			if (c[i].task_id != (__u16)(got * REPORT_EVERY +
						    REPORT_EVERY - 1) ||
			    c[i].stream_id != q->stream || c[i].sq_id != q->sq ||
			    c[i].error_code ||
			    c[i].sq_head != (got + 1) * REPORT_EVERY % depth)
				return __LINE__;
	}
	if (_wait_head(q->fd, q->ts, q->sq, n % depth))
		return __LINE__;
	return 0;
}

struct stream_thread {
	struct npq q;
	__u32 n, depth, dur_ns;
	int line;
};

static void *stream_thread_fn(void *arg)
{
	struct stream_thread *th = arg;

	th->line = run_stream(&th->q, th->n, 64, th->depth, th->dur_ns);
	return NULL;
}

/*
 * Tasks 0..@n-1 of @sq whose truth is not DONE, error-free and reported
 * exactly when due, or -errno; *@next is the SQ's task count.
 */
static int truth_all_done(int fd, __u32 ts, __u32 sq, __u64 n, __u64 *next)
{
	static struct npusim_task_truth t[4096];
	__u64 seq;
	int r, k, bad = 0;

	*next = 0;
	for (seq = 0; seq < n; seq += r) {
		r = _do_truth_ts(fd, ts, sq, seq, t, 4096, next);
		if (r <= 0)
			return r ? r : -ENODATA;
		for (k = 0; k < r; k++)
			bad += t[k].seq != seq + k ||
			       t[k].state != NPUSIM_TASK_DONE ||
			       t[k].report != ((seq + k + 1) % REPORT_EVERY ?
					       NPUSIM_REPORT_NONE :
					       NPUSIM_REPORT_LOGIC_CQ) ||
			       t[k].error_code;
	}
	return bad;
}

FIXTURE(dev) {
	int fd;
	struct npusim_stats st0;
};

FIXTURE_SETUP(dev)
{
	do_open(&self->fd, false);
	do_stats(self->fd, &self->st0);
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

/*
 * 2 devices x 2 TS in one process: the four streams get the same ids (a
 * stream, an SQ, a CQ, a logic CQ, each 0), run at once, and each sees
 * only its own tasks; the truth of each (device, TS, SQ) is its own.
 */
TEST_F(dev, devices_and_ts_collide_one_process)
{
	struct stream_thread th[4];
	pthread_t tid[4];
	int fd[2], d, t, i;
	__u64 next;

	for (d = 0; d < 2; d++)
		do_open_dev(&fd[d], d);
	for (i = 0; i < 4; i++) {
		d = i / 2;
		t = i % 2;
		th[i] = (struct stream_thread){
			.n = 2048 + 256 * i, .depth = 256, .dur_ns = 500,
		};
		npq_create(&th[i].q, fd[d], t, 256);
		EXPECT_EQ(0, th[i].q.stream);
		EXPECT_EQ(0, th[i].q.sq);
		EXPECT_EQ(0, th[i].q.cq);
		EXPECT_EQ(0, th[i].q.lcq);
	}
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, stream_thread_fn,
					    &th[i]));
	for (i = 0; i < 4; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(0, th[i].line) TH_LOG("stream %d", i);
	}
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, truth_all_done(th[i].q.fd, th[i].q.ts, th[i].q.sq,
					    th[i].n, &next));
		EXPECT_EQ(th[i].n, next) TH_LOG("stream %d", i);
	}
	for (d = 0; d < 2; d++)
		close(fd[d]);
}

/*
 * Several processes: on one device and TS they get distinct ids (lowest
 * free, never shared); on the other device the same ones again. Each runs
 * its stream and checks every report.
 */
TEST_F(dev, processes_ids_per_device)
{
	struct { __u32 stream, sq, cq, lcq; int line; } res[4];
	struct npusim_stats st;
	int p[2], g[2], i, status;
	pid_t pid[4];

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(g));
	for (i = 0; i < 4; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			struct npq q = {};
			int fd = _do_open_dev(i % 2);
			char go;

			close(p[0]);
			close(g[1]);
			res[i].line = fd < 0 ? __LINE__ :
				      _npq_create(&q, fd, 0, 128) ? __LINE__ : 0;
			res[i].stream = q.stream;
			res[i].sq = q.sq;
			res[i].cq = q.cq;
			res[i].lcq = q.lcq;
			if (write(p[1], &res[i], sizeof(res[i])) !=
			    sizeof(res[i]))
				_exit(1);
			/* all created before anyone runs or frees */
			if (read(g[0], &go, 1) != 0)
				_exit(1);
			if (!res[i].line)
				res[i].line = run_stream(&q, 1024, 64, 128, 300);
			_exit(res[i].line ? 1 : 0);
		}
		ASSERT_EQ(sizeof(res[i]), read(p[0], &res[i], sizeof(res[i])));
		ASSERT_EQ(0, res[i].line);
	}
	close(p[1]);
	close(g[1]);	/* go */
	close(g[0]);
	/* processes 0 and 2 on device 0, 1 and 3 on device 1 */
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(res[i].stream, res[i + 1 - 2 * (i % 2)].stream);
		EXPECT_NE(res[i].stream, res[i + 2].stream);
		EXPECT_NE(res[i].sq, res[i + 2].sq);
		EXPECT_NE(res[i].cq, res[i + 2].cq);
		EXPECT_NE(res[i].lcq, res[i + 2].lcq);
	}
	EXPECT_EQ(res[0].sq, res[1].sq);
	EXPECT_EQ(res[2].sq, res[3].sq);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("process %d", i);
	}
	close(p[0]);
	wait_live(self->fd, &self->st0, &st);
}

/* Eight streams on one fd, from eight threads. */
TEST_F(dev, threads_one_fd)
{
	struct stream_thread th[8];
	pthread_t tid[8];
	int fd, i;

	do_open(&fd, true);
	for (i = 0; i < 8; i++) {
		th[i] = (struct stream_thread){
			.n = 1024, .depth = 128, .dur_ns = 200,
		};
		npq_create(&th[i].q, fd, i % 2, 128);
	}
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, stream_thread_fn,
					    &th[i]));
	for (i = 0; i < 8; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(0, th[i].line) TH_LOG("stream %d", i);
	}
	close(fd);
}

/* Closing with tasks queued and reports pending frees and counts it all. */
TEST_F(dev, close_in_flight)
{
	struct trs_uio_info uio = { .sq_que_addr = 1 };
	struct npusim_stats st;
	struct trs_sqe s[100];
	struct npq q[2];
	__u32 sq, cq = 0;
	int fd, k, i;

	do_open(&fd, true);
	for (k = 0; k < 2; k++) {
		npq_create(&q[k], fd, k, 128);
		for (i = 0; i < 100; i++)
			sqe_task(&s[i], TRS_SQE_FFTS, q[k].stream, i, i < 5,
				 i < 5 ? 100 : 50000000, 0);
		npq_send(&q[k], s, 100, NULL);
	}
	/* a mapped SQ too, nothing sent, still to be freed */
	ASSERT_EQ(0, _do_sq_alloc(fd, 0, TRS_STREAM_ID_NONE, 16, 0, &sq, &cq,
				  &uio));
	/* until the first five of each stream have reported */
	for (k = 0; k < 2; k++)
		wait_task_state(fd, k, q[k].sq, 4, NPUSIM_TASK_DONE);
	do_stats(self->fd, &st);
	EXPECT_EQ(self->st0.reports_pending + 10, st.reports_pending);
	EXPECT_EQ(self->st0.sqs + 3, st.sqs);
	EXPECT_EQ(self->st0.logic_cqs + 2, st.logic_cqs);
	EXPECT_EQ(self->st0.res_ids + 2, st.res_ids);
	close(fd);
	munmap((void *)(uintptr_t)(uio.sq_que_addr - NPUSIM_SQ_MMAP_SQE_OFF),
	       NPUSIM_SQ_MMAP_SIZE(16));

	wait_live(self->fd, &self->st0, &st);
	EXPECT_EQ(self->st0.submitted + 200, st.submitted);
	EXPECT_LE(self->st0.cancelled + 150, st.cancelled);
	EXPECT_EQ(200, st.completed - self->st0.completed +
		       st.cancelled - self->st0.cancelled);
}

/* A process killed while blocked in SEND is cleaned up the same way. */
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
		struct npq q;
		int fd = _do_open(true), i;

		if (fd < 0 || _npq_create(&q, fd, 0, 64) ||
		    _do_sq_config(fd, 0, q.sq, TRS_SQCQ_PROP_SQ_PAUSE))
			_exit(1);
		for (i = 0; i < 64; i++)
			sqe_task(&s[i], TRS_SQE_FFTS, q.stream, i, true, 100, 0);
		if (_do_send(fd, q.sq, s, 64, -1, NULL))
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		/* Blocked in SEND (the SQ is full) when killed. */
		_do_send(fd, q.sq, s, 64, -1, NULL);
		_exit(0);
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &c, 1));
	ASSERT_EQ(0, _wait_blocked_in_ioctl_of(pid, pid));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	wait_live(self->fd, &self->st0, &st);
	EXPECT_EQ(self->st0.cancelled + 64, st.cancelled);
}

/*
 * 100,000 tasks on 4 streams (2 devices x 2 TS) from 4 threads: every due
 * report received exactly once, in order per stream, the truth of every
 * task DONE and reported exactly when due, the totals exact.
 */
#define STRESS_STREAMS	4
#define STRESS_TASKS	25000

TEST_F_TIMEOUT(dev, hundred_thousand_tasks, 240)
{
	struct stream_thread th[STRESS_STREAMS];
	pthread_t tid[STRESS_STREAMS];
	struct npusim_stats st;
	int fd[2], i, bad;
	__u64 next;

	for (i = 0; i < 2; i++)
		do_open_dev(&fd[i], i);
	for (i = 0; i < STRESS_STREAMS; i++) {
		th[i] = (struct stream_thread){
			.n = STRESS_TASKS, .depth = 1024, .dur_ns = 100,
		};
		npq_create(&th[i].q, fd[i / 2], i % 2, 1024);
	}
	for (i = 0; i < STRESS_STREAMS; i++)
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, stream_thread_fn,
					    &th[i]));
	for (i = 0; i < STRESS_STREAMS; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(0, th[i].line) TH_LOG("stream %d", i);
	}
	/* Nothing more: each report came exactly once. */
	for (i = 0; i < STRESS_STREAMS; i++) {
		struct trs_logic_cqe c;

		EXPECT_EQ(0, _do_recv_type(th[i].q.fd, TRS_SQCQ_TYPE_LOGIC,
					   th[i].q.ts, th[i].q.lcq, &c, 1, 0));
		bad = truth_all_done(th[i].q.fd, th[i].q.ts, th[i].q.sq,
				     STRESS_TASKS, &next);
		EXPECT_EQ(STRESS_TASKS, next) TH_LOG("stream %d", i);
		EXPECT_EQ(0, bad) TH_LOG("stream %d", i);
	}
	do_stats(self->fd, &st);
	EXPECT_EQ(self->st0.submitted + STRESS_STREAMS * STRESS_TASKS,
		  st.submitted);
	EXPECT_EQ(self->st0.completed + STRESS_STREAMS * STRESS_TASKS,
		  st.completed);
	EXPECT_EQ(self->st0.reports +
		  STRESS_STREAMS * (STRESS_TASKS / REPORT_EVERY), st.reports);
	EXPECT_EQ(self->st0.report_drops, st.report_drops);
	EXPECT_EQ(self->st0.errors, st.errors);
	EXPECT_EQ(self->st0.tasks_queued, st.tasks_queued);
	EXPECT_EQ(self->st0.reports_pending, st.reports_pending);
	for (i = 0; i < 2; i++)
		close(fd[i]);
	wait_live(self->fd, &self->st0, &st);
}

TEST_HARNESS_MAIN
