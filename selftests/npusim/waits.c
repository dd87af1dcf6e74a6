// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: blocking SEND and RECV. How waits end: room or a report, the
 * timeout, a signal (EINTR, or a restart with SA_RESTART and no timeout),
 * and FREE of the queue waited on.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include "npusim_test.h"

FIXTURE(wait) {
	int fd;
	__u32 sq, cq;
};

FIXTURE_SETUP(wait)
{
	do_open(&self->fd, true);
	do_alloc(self->fd, 4, 0, &self->sq, &self->cq);
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

/* SEND with a timeout waits for room and then succeeds. */
TEST_F(wait, send_waits_for_room)
{
	struct npusim_task_truth t[5];
	struct trs_logic_cqe c[5];
	struct trs_sqe s[5];
	__u32 pos;
	int i;

	for (i = 0; i < 5; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 1, i, true, 20000000, 0);
	do_send(self->fd, self->sq, s, 4, NULL);
	ASSERT_EQ(0, _do_send(self->fd, self->sq, &s[4], 1, 5000, &pos));
	EXPECT_EQ(0, pos);
	do_recv_n(self->fd, self->cq, c, 5);
	do_truth(self->fd, self->sq, 0, t, 5);
	/* It got in when the first task left. */
	EXPECT_LE(t[0].end_ns, t[4].submit_ns);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(i, c[i].task_id);
}

/* Not enough room for the whole batch: nothing of it is queued. */
TEST_F(wait, batch_needs_room_for_all)
{
	struct trs_sqe s[4];
	__u64 next;
	int i;

	for (i = 0; i < 4; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 1, i, false, 1000000000, 0);
	do_send(self->fd, self->sq, s, 2, NULL);
	EXPECT_EQ(-EAGAIN, _do_send(self->fd, self->sq, s, 3, 0, NULL));
	EXPECT_EQ(-ETIMEDOUT, _do_send(self->fd, self->sq, s, 3, 20, NULL));
	ASSERT_EQ(0, _do_truth(self->fd, self->sq, 2, NULL, 0, &next));
	EXPECT_EQ(2, next);
	do_send(self->fd, self->sq, s, 2, NULL);
}

TEST_F(wait, recv_eintr)
{
	struct trs_logic_cqe c;
	__u64 t0 = now_ns();

	alarm_every(50, false);
	EXPECT_EQ(-EINTR, _do_recv(self->fd, self->cq, &c, 1, 5000));
	alarm_off();
	EXPECT_LE(1, alarms);
	EXPECT_GT(4000000000ull, now_ns() - t0);
	do_roundtrip(self->fd, self->sq, self->cq, 1);
}

TEST_F(wait, send_eintr)
{
	struct trs_sqe s[4];
	int i;

	for (i = 0; i < 4; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 1, i, false, 1000000000, 0);
	do_send(self->fd, self->sq, s, 4, NULL);
	alarm_every(50, false);
	EXPECT_EQ(-EINTR, _do_send(self->fd, self->sq, s, 1, 5000, NULL));
	alarm_off();
	EXPECT_LE(1, alarms);
	/* SA_RESTART does not restart a wait with a timeout. */
	alarm_every(50, true);
	EXPECT_EQ(-EINTR, _do_send(self->fd, self->sq, s, 1, 5000, NULL));
	alarm_off();
}

/* With SA_RESTART, a wait without timeout survives the signal. */
TEST_F(wait, recv_restarts)
{
	struct trs_logic_cqe c;
	struct trs_sqe s;

	sqe_task(&s, TRS_SQE_FFTS, 1, 77, true, 500000000, 0);
	do_send(self->fd, self->sq, &s, 1, NULL);
	alarm_every(30, true);
	ASSERT_EQ(1, _do_recv(self->fd, self->cq, &c, 1, -1));
	alarm_off();
	EXPECT_LE(1, alarms);
	EXPECT_EQ(77, c.task_id);
}

struct waiter {
	int fd;
	__u32 sq, cq;
	bool send;
	int ret;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;
	struct trs_logic_cqe c;
	struct trs_sqe s;

	sqe_task(&s, TRS_SQE_FFTS, 1, 1, false, 100, 0);
	if (w->send)
		w->ret = _do_send(w->fd, w->sq, &s, 1, -1, NULL);
	else
		w->ret = _do_recv(w->fd, w->cq, &c, 1, -1);
	return NULL;
}

/* FREE wakes whoever waits on the queue, with EINVAL. */
TEST_F(wait, free_wakes_waiters)
{
	struct waiter w[2] = {
		{ .fd = self->fd, .sq = self->sq, .cq = self->cq, .send = true },
		{ .fd = self->fd, .sq = self->sq, .cq = self->cq },
	};
	struct npusim_stats st0, st1;
	struct trs_sqe s[4];
	pthread_t tid[2];
	int i;

	do_stats(self->fd, &st0);
	for (i = 0; i < 4; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 1, i, false, 1000000000, 0);
	do_send(self->fd, self->sq, s, 4, NULL);
	for (i = 0; i < 2; i++) {
		w[i].ret = 1;
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, waiter_fn, &w[i]));
	}
	usleep(50000);
	EXPECT_EQ(1, w[0].ret);
	EXPECT_EQ(1, w[1].ret);
	do_free(self->fd, self->sq, self->cq);
	for (i = 0; i < 2; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(-EINVAL, w[i].ret) TH_LOG("%s", i ? "RECV" : "SEND");
	}
	do_stats(self->fd, &st1);
	EXPECT_EQ(st0.cancelled + 4, st1.cancelled);
	EXPECT_EQ(st0.sqs - 1, st1.sqs);
	EXPECT_EQ(st0.tasks_queued, st1.tasks_queued);
}

TEST_HARNESS_MAIN
