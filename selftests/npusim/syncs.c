// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: notifies and events, the device-side sync of collectives. A wait
 * holds its SQ until its notify is recorded (on this device or another)
 * and consumes it; the truth tells the wait's start (it reached the unit)
 * from its end (the notify came). Each check waits on state (a task's
 * truth), never on time.
 */
#include <signal.h>
#include <sys/wait.h>
#include "npusim_test.h"

#define MS	1000000u

/* A record or wait SQE of notify or event @id; @dev1: device + 1, or 0. */
static void sqe_sync(struct trs_sqe *s, __u8 type, __u16 stream, __u16 task,
		     __u32 id, __u16 dev1)
{
	sqe_task(s, type, stream, task, false, 0, 0);
	memcpy(s->raw, &id, sizeof(id));		/* @8 */
	memcpy(s->raw + 4, &dev1, sizeof(dev1));	/* @12 */
}

static int _do_sync_alloc(int fd, int type, __u32 *id)
{
	*id = 0;
	return _do_res_id(fd, TRS_IOC_RES_ID_ALLOC, 0, type, id);
}

#define do_sync_alloc(fd, type, id) ASSERT_EQ(0, _do_sync_alloc(fd, type, id))

static void truth1(struct __test_metadata *_metadata, struct npq *q,
		   __u64 seq, struct npusim_task_truth *t)
{
	ASSERT_EQ(1, _do_truth_ts(q->fd, q->ts, q->sq, seq, t, 1, NULL));
}

FIXTURE(sync) {
	int fd;
	struct npq a, b;
	__u32 notify;
};

FIXTURE_SETUP(sync)
{
	do_open(&self->fd, true);
	npq_create(&self->a, self->fd, 0, 64);
	npq_create(&self->b, self->fd, 0, 64);
	do_sync_alloc(self->fd, TRS_RES_NOTIFY, &self->notify);
}

FIXTURE_TEARDOWN(sync)
{
	close(self->fd);
}

/*
 * A wait sent first holds its SQ (the task behind it stays queued) until
 * the record, which comes after 2 ms of compute on another SQ; the wait
 * ends no earlier than the record and the task behind starts after it.
 */
TEST_F(sync, wait_ends_at_later_record)
{
	struct npusim_task_truth w, next, rec, comp;
	struct trs_sqe s[2];

	sqe_sync(&s[0], TRS_SQE_NOTIFY_WAIT, self->a.stream, 0, self->notify, 0);
	sqe_task(&s[1], TRS_SQE_FFTS, self->a.stream, 1, false, 1000, 0);
	npq_send(&self->a, s, 2, NULL);
	wait_task_state(self->fd, 0, self->a.sq, 0, NPUSIM_TASK_RUNNING);
	truth1(_metadata, &self->a, 1, &next);
	EXPECT_EQ(NPUSIM_TASK_QUEUED, next.state) TH_LOG("the SQ advanced");

	sqe_task(&s[0], TRS_SQE_FFTS, self->b.stream, 0, false, 2 * MS, 0);
	sqe_sync(&s[1], TRS_SQE_NOTIFY_RECORD, self->b.stream, 1,
		 self->notify, 0);
	npq_send(&self->b, s, 2, NULL);
	wait_idle(self->fd);
	truth1(_metadata, &self->a, 0, &w);
	truth1(_metadata, &self->a, 1, &next);
	truth1(_metadata, &self->b, 0, &comp);
	truth1(_metadata, &self->b, 1, &rec);
	EXPECT_EQ(NPUSIM_TASK_DONE, w.state);
	EXPECT_EQ(0, w.error_code);
	EXPECT_EQ(TRS_SQE_NOTIFY_WAIT, w.sqe_type);
	EXPECT_LT(w.start_ns, comp.start_ns) TH_LOG("wait started late");
	EXPECT_GE(w.end_ns, rec.end_ns) TH_LOG("wait ended before the record");
	EXPECT_GE(w.end_ns - w.start_ns, 2 * MS) TH_LOG("wait shorter than compute");
	EXPECT_GE(next.start_ns, w.end_ns);
}

/*
 * A record before the wait lets it pass at once, and the wait consumes
 * it: a second wait holds until a second record.
 */
TEST_F(sync, record_first_passes_once)
{
	struct npusim_task_truth w, w2, c;
	struct trs_sqe s[2];

	sqe_sync(&s[0], TRS_SQE_NOTIFY_RECORD, self->b.stream, 0,
		 self->notify, 0);
	npq_send(&self->b, s, 1, NULL);
	wait_idle(self->fd);

	sqe_sync(&s[0], TRS_SQE_NOTIFY_WAIT, self->a.stream, 0, self->notify, 0);
	sqe_sync(&s[1], TRS_SQE_NOTIFY_WAIT, self->a.stream, 1, self->notify, 0);
	npq_send(&self->a, s, 2, NULL);
	wait_task_state(self->fd, 0, self->a.sq, 1, NPUSIM_TASK_RUNNING);
	truth1(_metadata, &self->a, 0, &w);
	EXPECT_EQ(NPUSIM_TASK_DONE, w.state);
	EXPECT_EQ(0, w.error_code);
	EXPECT_EQ(w.start_ns, w.end_ns) TH_LOG("a recorded notify held the wait");

	/* a task that started after the second wait ends: it still holds */
	sqe_task(&s[0], TRS_SQE_FFTS, self->b.stream, 1, false, 1000, 0);
	npq_send(&self->b, s, 1, NULL);
	wait_task_state(self->fd, 0, self->b.sq, 1, NPUSIM_TASK_DONE);
	truth1(_metadata, &self->b, 1, &c);
	truth1(_metadata, &self->a, 1, &w2);
	EXPECT_LT(w2.start_ns, c.end_ns);
	EXPECT_EQ(NPUSIM_TASK_RUNNING, w2.state) TH_LOG("one record passed two waits");

	sqe_sync(&s[0], TRS_SQE_NOTIFY_RECORD, self->b.stream, 2,
		 self->notify, 0);
	npq_send(&self->b, s, 1, NULL);
	wait_idle(self->fd);
	truth1(_metadata, &self->a, 1, &w2);
	EXPECT_EQ(NPUSIM_TASK_DONE, w2.state);
}

/* Events: the same within a device. */
TEST_F(sync, event_wait_and_record)
{
	struct npusim_task_truth w, rec;
	struct trs_sqe s[2];
	__u32 ev;

	do_sync_alloc(self->fd, TRS_RES_EVENT, &ev);
	sqe_sync(&s[0], TRS_SQE_EVENT_WAIT, self->a.stream, 0, ev, 0);
	npq_send(&self->a, s, 1, NULL);
	wait_task_state(self->fd, 0, self->a.sq, 0, NPUSIM_TASK_RUNNING);
	sqe_task(&s[0], TRS_SQE_FFTS, self->b.stream, 0, false, MS, 0);
	sqe_sync(&s[1], TRS_SQE_EVENT_RECORD, self->b.stream, 1, ev, 0);
	npq_send(&self->b, s, 2, NULL);
	wait_idle(self->fd);
	truth1(_metadata, &self->a, 0, &w);
	truth1(_metadata, &self->b, 1, &rec);
	EXPECT_EQ(0, w.error_code);
	EXPECT_GE(w.end_ns, rec.end_ns);
	EXPECT_GE(w.end_ns - w.start_ns, MS);
}

/*
 * Two devices: a record on device 0 naming device 1's notify releases a
 * wait there, and not device 0's notify of the same id.
 */
TEST_F(sync, two_devices)
{
	struct npusim_task_truth w1, w0, rec;
	struct trs_sqe s[2];
	struct npq q1;
	__u32 n1;
	int fd1;

	do_open_dev(&fd1, 1);
	npq_create(&q1, fd1, 0, 16);
	do_sync_alloc(fd1, TRS_RES_NOTIFY, &n1);
	ASSERT_EQ(self->notify, n1) TH_LOG("ids are per device: the same first id");

	sqe_sync(&s[0], TRS_SQE_NOTIFY_WAIT, q1.stream, 0, n1, 0);
	npq_send(&q1, s, 1, NULL);
	sqe_sync(&s[0], TRS_SQE_NOTIFY_WAIT, self->a.stream, 0, self->notify, 0);
	npq_send(&self->a, s, 1, NULL);
	wait_task_state(fd1, 0, q1.sq, 0, NPUSIM_TASK_RUNNING);
	wait_task_state(self->fd, 0, self->a.sq, 0, NPUSIM_TASK_RUNNING);

	sqe_task(&s[0], TRS_SQE_FFTS, self->b.stream, 0, false, MS, 0);
	sqe_sync(&s[1], TRS_SQE_NOTIFY_RECORD, self->b.stream, 1, n1, 1 + 1);
	npq_send(&self->b, s, 2, NULL);
	wait_task_state(fd1, 0, q1.sq, 0, NPUSIM_TASK_DONE);
	truth1(_metadata, &q1, 0, &w1);
	truth1(_metadata, &self->b, 1, &rec);
	truth1(_metadata, &self->a, 0, &w0);
	EXPECT_EQ(0, w1.error_code);
	EXPECT_EQ(NPUSIM_TASK_DONE, rec.state);
	EXPECT_EQ(0, rec.error_code);
	EXPECT_GE(w1.end_ns, rec.end_ns);
	EXPECT_EQ(NPUSIM_TASK_RUNNING, w0.state) TH_LOG("device 0's notify was set");

	sqe_sync(&s[0], TRS_SQE_NOTIFY_RECORD, self->b.stream, 2,
		 self->notify, 0);
	npq_send(&self->b, s, 1, NULL);
	wait_task_state(self->fd, 0, self->a.sq, 0, NPUSIM_TASK_DONE);
	close(fd1);
}

/*
 * Ids not allocated where they point fail the task with
 * NPUSIM_ERR_BAD_SYNC_ID, and nothing is lost: the SQ goes on and a
 * pending record still lets a wait pass.
 */
TEST_F(sync, bad_ids_fail_the_task)
{
	struct npusim_config cfg;
	struct trs_logic_cqe c[5];
	struct npusim_task_truth w;
	struct trs_sqe s[5];
	int i;

	do_get_config(self->fd, &cfg);
	sqe_sync(&s[0], TRS_SQE_NOTIFY_RECORD, self->b.stream, 9,
		 self->notify, 0);
	npq_send(&self->b, s, 1, NULL);

	sqe_sync(&s[0], TRS_SQE_NOTIFY_WAIT, self->a.stream, 0,
		 self->notify + 1, 0);
	sqe_sync(&s[1], TRS_SQE_NOTIFY_WAIT, self->a.stream, 1,
		 TRS_SQE_NOTIFY_ID_MASK, 0);
	sqe_sync(&s[2], TRS_SQE_NOTIFY_RECORD, self->a.stream, 2,
		 self->notify, NPUSIM_MAX_DEVICES);
	sqe_sync(&s[3], TRS_SQE_EVENT_WAIT, self->a.stream, 3, 5, 0);
	sqe_sync(&s[4], TRS_SQE_NOTIFY_RECORD, self->a.stream, 4,
		 self->notify + 1, 1 + 1);
	npq_send(&self->a, s, 5, NULL);
	npq_recv_n(&self->a, c, 5);
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(i, c[i].task_id);
		EXPECT_TRUE(c[i].flags & TRS_CQE_F_ERROR) TH_LOG("task %d", i);
		EXPECT_EQ(NPUSIM_ERR_BAD_SYNC_ID, c[i].error_code)
			TH_LOG("task %d", i);
	}
	do_roundtrip(&self->a, 7);
	sqe_sync(&s[0], TRS_SQE_NOTIFY_WAIT, self->a.stream, 8, self->notify, 0);
	npq_send(&self->a, s, 1, NULL);
	wait_task_state(self->fd, 0, self->a.sq, 6, NPUSIM_TASK_DONE);
	truth1(_metadata, &self->a, 6, &w);
	EXPECT_EQ(0, w.error_code);
}

/*
 * A process that exits with a wait pending does not hang the device: with
 * one unit, held by its wait, another process's task runs once it exits.
 */
TEST_F(sync, exit_with_wait_pending)
{
	struct npusim_config cfg, one = { .mask = NPUSIM_CFG_UNITS, .units = 1 };
	struct npusim_stats st0, st;
	int p[2], status;
	pid_t pid;
	char ok;

	wait_idle(self->fd);
	do_get_config(self->fd, &cfg);
	do_set_config(self->fd, &one);
	do_stats(self->fd, &st0);
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct trs_sqe s;
		struct npq q;
		__u32 n;
		int fd = _do_open_dev(0);

		if (fd < 0 || _npq_create(&q, fd, 0, 16) ||
		    _do_sync_alloc(fd, TRS_RES_NOTIFY, &n))
			_exit(1);
		sqe_sync(&s, TRS_SQE_NOTIFY_WAIT, q.stream, 0, n, 0);
		if (_do_send_ts(fd, 0, q.sq, &s, 1, -1, NULL) ||
		    _wait_task_state(fd, 0, q.sq, 0, NPUSIM_TASK_RUNNING))
			_exit(2);
		ok = 1;
		if (write(p[1], &ok, 1) != 1)
			_exit(3);
		pause();
		_exit(4);
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &ok, 1));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	do_roundtrip(&self->a, 1);
	do_stats(self->fd, &st);
	EXPECT_EQ(st0.cancelled + 1, st.cancelled);
	wait_idle(self->fd);
	ASSERT_EQ(0, _config_restore(self->fd, &cfg));
}

TEST_HARNESS_MAIN
