// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: blocking SEND and RECV. How waits end: room or a report, the
 * timeout, a signal (EINTR, or a restart with SA_RESTART and no timeout),
 * and FREE of the queue waited on. A full SQ is made with SQ_PAUSE, and a
 * waiter is acted on once /proc shows it asleep in the ioctl: no test
 * depends on how fast the simulator or the host is.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include "npusim_test.h"

FIXTURE(wait) {
	int fd;
	struct npq q;
	struct trs_sqe s[5];
};

FIXTURE_SETUP(wait)
{
	int i;

	do_open(&self->fd, true);
	npq_create(&self->q, self->fd, 0, 4);
	for (i = 0; i < 5; i++)
		sqe_task(&self->s[i], TRS_SQE_FFTS, self->q.stream, i, true,
			 1000, 0);
}

FIXTURE_TEARDOWN(wait)
{
	close(self->fd);
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	alarms++;
}

/*
 * SIGALRM every @ms, with or without SA_RESTART: repeated, so that one
 * lands in the wait even when a loaded host is slow to get there.
 */
static void alarm_every(int ms, bool restart)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = {
		.it_value.tv_usec = ms * 1000, .it_interval.tv_usec = ms * 1000,
	};

	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGALRM, &sa, NULL);
	alarms = 0;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void alarm_off(void)
{
	struct itimerval it = { 0 };

	setitimer(ITIMER_REAL, &it, NULL);
}

/* A thread that SENDs (one SQE) or RECVs once, without timeout. */
struct waiter {
	struct npq *q;
	const struct trs_sqe *sqe;
	bool send;
	volatile pid_t tid;
	int ret;
	__u32 pos;
	struct trs_logic_cqe c;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	w->tid = syscall(SYS_gettid);
	if (w->send)
		w->ret = _do_send_ts(w->q->fd, 0, w->q->sq, w->sqe, 1, -1,
				     &w->pos);
	else
		w->ret = _do_recv(w->q->fd, w->q->lcq, &w->c, 1, -1);
	return NULL;
}

static int waiter_start(struct waiter *w, pthread_t *tid)
{
	w->tid = 0;
	w->ret = 1;
	if (pthread_create(tid, NULL, waiter_fn, w))
		return -1;
	while (!w->tid)
		pause_us(100);
	return _wait_blocked_in_ioctl(w->tid);
}

/* SEND without timeout waits for room and then succeeds. */
TEST_F(wait, send_waits_for_room)
{
	struct waiter w = { .q = &self->q, .sqe = &self->s[4], .send = true };
	struct npusim_task_truth t[5];
	struct trs_logic_cqe c[5];
	pthread_t tid;
	__u64 next;
	int i;

	do_sq_pause(self->fd, 0, self->q.sq);
	do_send(self->fd, self->q.sq, self->s, 4, NULL);
	ASSERT_EQ(0, waiter_start(&w, &tid));
	/* blocked: the fifth SQE is not queued */
	EXPECT_EQ(1, w.ret);
	ASSERT_EQ(0, _do_truth(self->fd, self->q.sq, 0, NULL, 0, &next));
	EXPECT_EQ(4, next);
	do_sq_resume(self->fd, 0, self->q.sq);
	pthread_join(tid, NULL);
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(0, w.pos);
	do_recv_n(self->fd, self->q.lcq, c, 5);
	do_truth(self->fd, self->q.sq, 0, t, 5);
	/* It got in when the first task left. */
	EXPECT_LE(t[0].end_ns, t[4].submit_ns);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(i, c[i].task_id);
}

/* Not enough room for the whole batch: nothing of it is queued. */
TEST_F(wait, batch_needs_room_for_all)
{
	__u64 next;

	do_sq_pause(self->fd, 0, self->q.sq);
	do_send(self->fd, self->q.sq, self->s, 2, NULL);
	EXPECT_EQ(-EAGAIN, _do_send(self->fd, self->q.sq, self->s, 3, 0, NULL));
	EXPECT_EQ(-ETIMEDOUT, _do_send(self->fd, self->q.sq, self->s, 3, 20,
				       NULL));
	ASSERT_EQ(0, _do_truth(self->fd, self->q.sq, 2, NULL, 0, &next));
	EXPECT_EQ(2, next);
	do_send(self->fd, self->q.sq, self->s, 2, NULL);
}

/* RECV without timeout sleeps until the report comes. */
TEST_F(wait, recv_wakes_on_report)
{
	struct waiter w = { .q = &self->q };
	pthread_t tid;

	ASSERT_EQ(0, waiter_start(&w, &tid));
	EXPECT_EQ(1, w.ret);
	do_send(self->fd, self->q.sq, &self->s[3], 1, NULL);
	pthread_join(tid, NULL);
	EXPECT_EQ(1, w.ret);
	EXPECT_EQ(3, w.c.task_id);
}

TEST_F(wait, recv_eintr)
{
	struct trs_logic_cqe c;
	__u64 t0 = now_ns();

	alarm_every(50, false);
	EXPECT_EQ(-EINTR, _do_recv(self->fd, self->q.lcq, &c, 1, 5000));
	alarm_off();
	EXPECT_LE(1, alarms);
	EXPECT_GT(4000000000ull, now_ns() - t0);
	do_roundtrip(&self->q, 1);
}

TEST_F(wait, send_eintr)
{
	do_sq_pause(self->fd, 0, self->q.sq);
	do_send(self->fd, self->q.sq, self->s, 4, NULL);
	alarm_every(50, false);
	EXPECT_EQ(-EINTR, _do_send(self->fd, self->q.sq, self->s, 1, 5000,
				   NULL));
	alarm_off();
	EXPECT_LE(1, alarms);
	/* SA_RESTART does not restart a wait with a timeout. */
	alarm_every(50, true);
	EXPECT_EQ(-EINTR, _do_send(self->fd, self->q.sq, self->s, 1, 5000,
				   NULL));
	alarm_off();
}

/* With SA_RESTART, a wait without timeout survives the signal. */
TEST_F(wait, recv_restarts)
{
	struct trs_logic_cqe c;
	struct trs_sqe s;

	sqe_task(&s, TRS_SQE_FFTS, self->q.stream, 77, true, 500000000, 0);
	do_send(self->fd, self->q.sq, &s, 1, NULL);
	alarm_every(30, true);
	ASSERT_EQ(1, _do_recv(self->fd, self->q.lcq, &c, 1, -1));
	alarm_off();
	EXPECT_LE(1, alarms);
	EXPECT_EQ(77, c.task_id);
}

/* FREE wakes whoever waits on the queue, with EINVAL. */
TEST_F(wait, free_wakes_waiters)
{
	struct waiter w[2] = {
		{ .q = &self->q, .sqe = &self->s[4], .send = true },
		{ .q = &self->q },
	};
	struct npusim_stats st0, st1;
	pthread_t tid[2];
	int i;

	do_stats(self->fd, &st0);
	do_sq_pause(self->fd, 0, self->q.sq);
	do_send(self->fd, self->q.sq, self->s, 4, NULL);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, waiter_start(&w[i], &tid[i]));
	EXPECT_EQ(1, w[0].ret);
	EXPECT_EQ(1, w[1].ret);
	do_lcq_free(self->fd, 0, self->q.lcq);
	pthread_join(tid[1], NULL);
	EXPECT_EQ(-EINVAL, w[1].ret);
	EXPECT_EQ(1, w[0].ret);
	do_sq_free(self->fd, 0, self->q.sq, self->q.cq);
	pthread_join(tid[0], NULL);
	EXPECT_EQ(-EINVAL, w[0].ret);
	do_stats(self->fd, &st1);
	EXPECT_EQ(st0.cancelled + 4, st1.cancelled);
	EXPECT_EQ(st0.sqs - 1, st1.sqs);
	EXPECT_EQ(st0.logic_cqs - 1, st1.logic_cqs);
	EXPECT_EQ(st0.tasks_queued, st1.tasks_queued);
}

TEST_HARNESS_MAIN
