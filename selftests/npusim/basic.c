// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: submit/receive round trips, reports, order, device time, RECV
 * timeouts and matching, and the simulator's knobs.
 */
#include "npusim_test.h"

#define DEPTH 256

FIXTURE(sq) {
	int fd;
	__u32 sq, cq;
	struct npusim_config cfg;	/* restored at teardown */
};

FIXTURE_SETUP(sq)
{
	do_open(&self->fd, true);
	do_get_config(self->fd, &self->cfg);
	do_alloc(self->fd, DEPTH, 0, &self->sq, &self->cq);
}

FIXTURE_TEARDOWN(sq)
{
	struct npusim_config c = self->cfg;

	/* Free first: the counter settings need an idle device. */
	_do_free(self->fd, self->sq, self->cq);
	c.mask = NPUSIM_CFG_ALL;
	memset(c.res, 0, sizeof(c.res));
	EXPECT_EQ(0, _wait_idle(self->fd, 5000));
	EXPECT_EQ(0, _do_set_config(self->fd, &c));
	close(self->fd);
}

TEST_F(sq, roundtrip)
{
	struct npusim_clock c0, c1;
	struct trs_logic_cqe c[2];
	struct trs_sqe s;
	__u32 pos;

	sqe_task(&s, TRS_SQE_FFTS, 5, 100, true, 1000, 0);
	do_clock(self->fd, &c0);
	do_send(self->fd, self->sq, &s, 1, &pos);
	do_clock(self->fd, &c1);
	EXPECT_EQ(0, pos);
	do_recv_n(self->fd, self->cq, c, 1);
	EXPECT_EQ(5, c[0].stream_id);
	EXPECT_EQ(100, c[0].task_id);
	EXPECT_EQ(0, c[0].error_code);
	EXPECT_EQ(TRS_SQE_FFTS, c[0].sqe_type);
	EXPECT_EQ(self->sq, c[0].sq_id);
	EXPECT_EQ(1, c[0].sq_head);
	EXPECT_EQ(0, c[0].flags & TRS_CQE_F_ERROR);
	/* Only place-holder and event-record reports carry a timestamp. */
	EXPECT_EQ(0, c[0].timestamp);
	EXPECT_LE(c0.ticks, c[0].enque_timestamp);
	EXPECT_GE(c1.ticks, c[0].enque_timestamp);
	/* One report, received once. */
	do_recv_err(ETIMEDOUT, self->fd, self->cq, c, 2, 0);
}

TEST_F(sq, positions_wrap)
{
	struct trs_sqe s[100];
	struct trs_logic_cqe c;
	__u32 pos, expect = 0;
	int b, i;

	for (b = 0; b < 5; b++) {
		for (i = 0; i < 100; i++)
			sqe_task(&s[i], TRS_SQE_AICPU, 1, b * 100 + i, i == 99,
				 100, 0);
		do_send(self->fd, self->sq, s, 100, &pos);
		EXPECT_EQ(expect, pos);
		do_recv_n(self->fd, self->cq, &c, 1);
		expect = (expect + 100) % DEPTH;
		EXPECT_EQ(expect, c.sq_head);
		EXPECT_EQ(b * 100 + 99, c.task_id);
	}
}

/* Tasks of one SQ run one at a time, in order, for exactly their time. */
TEST_F(sq, order_in_stream)
{
	static const __u8 types[] = { TRS_SQE_FFTS, TRS_SQE_AICPU,
				      TRS_SQE_SDMA, TRS_SQE_WRITE_VALUE };
	static struct npusim_task_truth t[300];
	static struct trs_logic_cqe c[300];
	struct trs_sqe s[50];
	struct npusim_clock clk;
	int b, i, n = 300;

	do_clock(self->fd, &clk);
	for (b = 0; b < n / 50; b++) {
		for (i = 0; i < 50; i++) {
			int k = b * 50 + i;

			sqe_task(&s[i], types[k % 4], 3, k, true,
				 1000 + (k * 7919) % 5000, 0);
		}
		do_send(self->fd, self->sq, s, 50, NULL);
	}
	do_recv_n(self->fd, self->cq, c, n);
	do_truth(self->fd, self->sq, 0, t, n);
	for (i = 0; i < n; i++) {
		__u32 dur = 1000 + (i * 7919) % 5000;

		ASSERT_EQ(i, c[i].task_id);
		EXPECT_EQ((i + 1) % DEPTH, c[i].sq_head);
		EXPECT_EQ(types[i % 4], c[i].sqe_type);
		EXPECT_EQ(i, t[i].seq);
		EXPECT_EQ(i % DEPTH, t[i].pos);
		EXPECT_EQ(NPUSIM_TASK_DONE, t[i].state);
		EXPECT_EQ(1, t[i].report);
		EXPECT_EQ(dur, t[i].end_ns - t[i].start_ns);
		EXPECT_LE(t[i].submit_ns, t[i].start_ns);
		EXPECT_EQ(ns_to_ticks(&clk, t[i].start_ns), t[i].start_ticks);
		EXPECT_EQ(ns_to_ticks(&clk, t[i].end_ns), t[i].end_ticks);
		if (i)
			EXPECT_LE(t[i - 1].end_ns, t[i].start_ns);
	}
}

/* Only wr_cqe SQEs report; sq_head says how far the SQ got. */
TEST_F(sq, silent_tasks)
{
	struct npusim_task_truth t[11];
	struct trs_logic_cqe c[4];
	struct trs_sqe s[11];
	int i;

	for (i = 0; i < 11; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 2, i, i == 10, 2000, 0);
	do_send(self->fd, self->sq, s, 11, NULL);
	do_recv_n(self->fd, self->cq, c, 1);
	EXPECT_EQ(10, c[0].task_id);
	EXPECT_EQ(11, c[0].sq_head);
	do_truth(self->fd, self->sq, 0, t, 11);
	for (i = 0; i < 11; i++) {
		EXPECT_EQ(NPUSIM_TASK_DONE, t[i].state);
		EXPECT_EQ(i == 10, t[i].report);
		/* Everything before sq_head ended before the report. */
		EXPECT_LE(t[i].end_ns, t[10].end_ns);
	}
	do_recv_err(ETIMEDOUT, self->fd, self->cq, c, 4, 20);
}

/* A failed SQE reports even without wr_cqe, and the SQ goes on. */
TEST_F(sq, failed_task_reports)
{
	struct npusim_stats st0, st1;
	struct npusim_task_truth t[2];
	struct trs_logic_cqe c[2];
	struct trs_sqe s[2];

	do_stats(self->fd, &st0);
	sqe_task(&s[0], TRS_SQE_FFTS, 4, 1, false, 1000, 0x1234);
	sqe_task(&s[1], TRS_SQE_FFTS, 4, 2, true, 1000, 0);
	do_send(self->fd, self->sq, s, 2, NULL);
	do_recv_n(self->fd, self->cq, c, 2);
	EXPECT_EQ(1, c[0].task_id);
	EXPECT_EQ(0x1234, c[0].error_code);
	EXPECT_TRUE(c[0].flags & TRS_CQE_F_ERROR);
	EXPECT_EQ(1, c[0].sq_head);
	EXPECT_EQ(2, c[1].task_id);
	EXPECT_EQ(0, c[1].error_code);
	EXPECT_FALSE(c[1].flags & TRS_CQE_F_ERROR);
	do_truth(self->fd, self->sq, 0, t, 2);
	EXPECT_EQ(0x1234, t[0].error_code);
	EXPECT_EQ(NPUSIM_TASK_DONE, t[0].state);
	EXPECT_EQ(1, t[0].report);
	do_stats(self->fd, &st1);
	EXPECT_EQ(st0.errors + 1, st1.errors);
	EXPECT_EQ(st0.submitted + 2, st1.submitted);
	EXPECT_EQ(st0.reports + 2, st1.reports);
}

/*
 * Step marks: the report's timestamp is the device counter when the stream
 * reached the mark (= truth start_ticks), increases along the stream by at
 * least the work in between, and is in device ticks, not host ns.
 */
TEST_F(sq, step_marks_device_time)
{
	const __u32 work_ns = 20000;
	struct npusim_config cfg = {
		.mask = NPUSIM_CFG_COUNTER_FREQ | NPUSIM_CFG_COUNTER_EPOCH,
		.counter_freq_hz = 25000000,
		.counter_epoch = 1ull << 50,
	};
	struct npusim_task_truth t[17];
	struct trs_logic_cqe c[9];
	struct npusim_clock clk;
	struct trs_sqe s[17];
	int i;

	do_set_config(self->fd, &cfg);
	do_clock(self->fd, &clk);
	ASSERT_EQ(25000000, clk.counter_freq_hz);
	ASSERT_EQ(1ull << 50, clk.counter_epoch);
	EXPECT_EQ(ns_to_ticks(&clk, clk.host_ns), clk.ticks);

	for (i = 0; i < 17; i++) {
		if (i % 2 == 0)
			sqe_mark(&s[i], 9, i, 1000 + i / 2, i % 4 ? 1 : 0);
		else
			sqe_task(&s[i], TRS_SQE_FFTS, 9, i, false, work_ns, 0);
	}
	do_send(self->fd, self->sq, s, 17, NULL);
	do_recv_n(self->fd, self->cq, c, 9);
	do_truth(self->fd, self->sq, 0, t, 17);
	for (i = 0; i < 9; i++) {
		const struct npusim_task_truth *m = &t[2 * i];

		EXPECT_EQ(2 * i, c[i].task_id);
		EXPECT_EQ(TRS_SQE_PLACE_HOLDER, c[i].sqe_type);
		EXPECT_EQ(0, c[i].error_code);
		EXPECT_EQ(m->start_ticks, c[i].timestamp);
		EXPECT_EQ(ns_to_ticks(&clk, m->start_ns), c[i].timestamp);
		/* A place-holder takes no time. */
		EXPECT_EQ(m->start_ns, m->end_ns);
		/*
		 * Device ticks: epoch + ns / 40, nowhere near host ns (the
		 * epoch is 13 days of ns; the guest has not been up that long).
		 */
		EXPECT_GT(c[i].timestamp, m->start_ns + 1000000000000ull);
		EXPECT_LT(c[i].timestamp, clk.counter_epoch + m->start_ns);
		if (i) {
			EXPECT_LT(c[i - 1].timestamp, c[i].timestamp);
			EXPECT_LE(work_ns / 40 - 1,
				  c[i].timestamp - c[i - 1].timestamp);
		}
	}
}

TEST_F(sq, recv_timeout)
{
	struct trs_report_recv_info ri;
	struct trs_logic_cqe c[4];
	__u64 t0, dt;

	recv_info_init(&ri, self->cq, c, 4, 0);
	do_recv_info_err(ETIMEDOUT, self->fd, &ri);
	EXPECT_EQ(0, ri.report_cqe_num);

	recv_info_init(&ri, self->cq, c, 4, 100);
	t0 = now_ns();
	do_recv_info_err(ETIMEDOUT, self->fd, &ri);
	dt = now_ns() - t0;
	EXPECT_EQ(0, ri.report_cqe_num);
	EXPECT_LE(95000000ull, dt);
	EXPECT_GT(3000000000ull, dt);
	do_roundtrip(self->fd, self->sq, self->cq, 1);
}

/* A waiting RECV wakes for the report, which comes after the task's end. */
TEST_F(sq, recv_waits_for_task_end)
{
	struct npusim_task_truth t;
	struct trs_logic_cqe c;
	struct trs_sqe s;
	__u64 got;

	sqe_task(&s, TRS_SQE_FFTS, 1, 1, true, 50000000, 0);
	do_send(self->fd, self->sq, &s, 1, NULL);
	ASSERT_EQ(1, _do_recv(self->fd, self->cq, &c, 1, -1));
	got = now_ns();
	do_truth(self->fd, self->sq, 0, &t, 1);
	EXPECT_EQ(NPUSIM_TASK_DONE, t.state);
	EXPECT_EQ(50000000, t.end_ns - t.start_ns);
	EXPECT_LE(t.end_ns, got);
}

TEST_F(sq, recv_strict_match)
{
	struct trs_report_recv_info ri;
	struct trs_logic_cqe c[4];
	struct trs_sqe s[3];
	int i;

	for (i = 0; i < 3; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 7, i + 1, true, 1000, 0);
	do_send(self->fd, self->sq, s, 3, NULL);
	ASSERT_EQ(0, _wait_idle(self->fd, 5000));

	recv_info_init(&ri, self->cq, c, 4, 1000);
	ri.stream_id = 7;
	ri.task_id = 3;
	ASSERT_EQ(0, _do_recv_info(self->fd, &ri));
	ASSERT_EQ(1, ri.report_cqe_num);
	EXPECT_EQ(3, c[0].task_id);

	/* No match: the others stay queued, in order. */
	recv_info_init(&ri, self->cq, c, 4, 30);
	ri.stream_id = 8;
	ri.task_id = 1;
	do_recv_info_err(ETIMEDOUT, self->fd, &ri);
	EXPECT_EQ(0, ri.report_cqe_num);

	ASSERT_EQ(2, _recv_n(self->fd, self->cq, c, 2, 1000));
	EXPECT_EQ(1, c[0].task_id);
	EXPECT_EQ(2, c[1].task_id);
	do_recv_err(ETIMEDOUT, self->fd, self->cq, c, 4, 0);
}

TEST_F(sq, recv_in_small_batches)
{
	struct trs_logic_cqe c[4];
	struct trs_sqe s[10];
	int i, n, got = 0;

	for (i = 0; i < 10; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 7, i, true, 1000, 0);
	do_send(self->fd, self->sq, s, 10, NULL);
	ASSERT_EQ(0, _wait_idle(self->fd, 5000));
	while (got < 10) {
		n = _do_recv(self->fd, self->cq, c, 3, 1000);
		ASSERT_LT(0, n);
		ASSERT_GE(3, n);
		for (i = 0; i < n; i++)
			EXPECT_EQ(got + i, c[i].task_id);
		got += n;
	}
	EXPECT_EQ(10, got);
}

TEST_F(sq, inject_error_every)
{
	struct npusim_config cfg = {
		.mask = NPUSIM_CFG_INJECT_ERROR,
		.inject_error_every = 3, .inject_error_code = 0x77,
	};
	struct trs_logic_cqe c[3];
	struct trs_sqe s[6];
	int i;

	do_set_config(self->fd, &cfg);
	for (i = 0; i < 6; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 1, i, false, 500, 0);
	do_send(self->fd, self->sq, s, 6, NULL);
	do_recv_n(self->fd, self->cq, c, 2);
	EXPECT_EQ(2, c[0].task_id);
	EXPECT_EQ(5, c[1].task_id);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0x77, c[i].error_code);
		EXPECT_TRUE(c[i].flags & TRS_CQE_F_ERROR);
	}
	do_recv_err(ETIMEDOUT, self->fd, self->cq, c, 3, 20);
}

/* A full CQ stalls its SQ: nothing is dropped. */
TEST_F(sq, cq_full_stalls)
{
	struct trs_sqcq_alloc_info ai;
	struct trs_logic_cqe c[20];
	struct npusim_stats st;
	struct trs_sqe s[20];
	int i;

	alloc_info_init(&ai, 32, 0);
	ai.cqeDepth = 4;
	ASSERT_EQ(0, _do_alloc_info(self->fd, &ai));
	for (i = 0; i < 20; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 1, i, true, 1000, 0);
	do_send(self->fd, ai.sqId, s, 20, NULL);
	usleep(20000);
	do_stats(self->fd, &st);
	EXPECT_LE(st.reports_pending, 4);
	EXPECT_LE(16, st.tasks_queued);
	do_recv_n(self->fd, ai.cqId, c, 20);
	for (i = 0; i < 20; i++)
		EXPECT_EQ(i, c[i].task_id);
	do_free(self->fd, ai.sqId, ai.cqId);
}

/* A task holds its SQ slot until it completes; FREE cancels. */
TEST_F(sq, send_full_sq)
{
	struct npusim_stats st0, st1;
	struct trs_sqe s[8];
	__u32 sq, cq;
	__u64 t0, dt;
	int i;

	do_stats(self->fd, &st0);
	do_alloc(self->fd, 8, 0, &sq, &cq);
	for (i = 0; i < 8; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 1, i, true, 2000000000u, 0);
	do_send(self->fd, sq, s, 8, NULL);
	EXPECT_EQ(-EAGAIN, _do_send(self->fd, sq, s, 1, 0, NULL));
	t0 = now_ns();
	EXPECT_EQ(-ETIMEDOUT, _do_send(self->fd, sq, s, 1, 30, NULL));
	dt = now_ns() - t0;
	EXPECT_LE(29000000ull, dt);
	do_free(self->fd, sq, cq);
	do_stats(self->fd, &st1);
	EXPECT_EQ(st0.submitted + 8, st1.submitted);
	EXPECT_EQ(st0.cancelled + 8, st1.cancelled);
	EXPECT_EQ(st0.tasks_queued, st1.tasks_queued);
	EXPECT_EQ(st0.sqs, st1.sqs);
}

TEST_F(sq, config_roundtrip)
{
	struct npusim_config c0, c1, set = {
		.mask = NPUSIM_CFG_DEFAULT_DURATION | NPUSIM_CFG_UNITS,
		.default_duration_ns = 12345, .units = 3,
	};
	struct npusim_task_truth t;
	struct trs_logic_cqe c;
	struct trs_sqe s;

	do_get_config(self->fd, &c0);
	EXPECT_LE(1, c0.units);
	EXPECT_NE(0, c0.counter_freq_hz);
	do_set_config(self->fd, &set);
	do_get_config(self->fd, &c1);
	EXPECT_EQ(12345, c1.default_duration_ns);
	EXPECT_EQ(3, c1.units);
	EXPECT_EQ(c0.counter_freq_hz, c1.counter_freq_hz);
	

	/* Duration 0 in the SQE: the device default. */
	sqe_task(&s, TRS_SQE_FFTS, 1, 1, true, 0, 0);
	do_send(self->fd, self->sq, &s, 1, NULL);
	do_recv_n(self->fd, self->cq, &c, 1);
	do_truth(self->fd, self->sq, 0, &t, 1);
	EXPECT_EQ(12345, t.end_ns - t.start_ns);
}

/* Event records are time-stamped like place-holders; a failed one not. */
TEST_F(sq, event_record_timestamps)
{
	struct npusim_task_truth t[3];
	struct trs_logic_cqe c[3];
	struct trs_sqe s[3];

	sqe_task(&s[0], TRS_SQE_EVENT_RECORD, 1, 1, true, 0, 0);
	sqe_task(&s[1], TRS_SQE_FFTS, 1, 2, false, 30000, 0);
	sqe_task(&s[2], TRS_SQE_PLACE_HOLDER, 1, 3, true, 0, 0x99);
	do_send(self->fd, self->sq, s, 3, NULL);
	do_recv_n(self->fd, self->cq, c, 2);
	do_truth(self->fd, self->sq, 0, t, 3);
	EXPECT_EQ(TRS_SQE_EVENT_RECORD, c[0].sqe_type);
	EXPECT_EQ(t[0].start_ticks, c[0].timestamp);
	EXPECT_NE(0, c[0].timestamp);
	EXPECT_EQ(t[0].start_ns, t[0].end_ns);
	EXPECT_EQ(3, c[1].task_id);
	EXPECT_EQ(0x99, c[1].error_code);
	EXPECT_EQ(0, c[1].timestamp);
}

/* One unit: the tasks of two SQs take turns instead of overlapping. */
TEST_F(sq, one_unit_serialises)
{
	struct npusim_config cfg = { .mask = NPUSIM_CFG_UNITS, .units = 1 };
	struct npusim_task_truth a[3], b[3];
	struct trs_logic_cqe c[3];
	struct trs_sqe s[3];
	__u32 sq2, cq2;
	int i, j;

	ASSERT_EQ(0, _wait_idle(self->fd, 5000));
	do_set_config(self->fd, &cfg);
	do_alloc(self->fd, 16, 0, &sq2, &cq2);
	for (i = 0; i < 3; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 1, i, i == 2, 3000000, 0);
	do_send(self->fd, self->sq, s, 3, NULL);
	do_send(self->fd, sq2, s, 3, NULL);
	do_recv_n(self->fd, self->cq, c, 1);
	do_recv_n(self->fd, cq2, c, 1);
	do_truth(self->fd, self->sq, 0, a, 3);
	do_truth(self->fd, sq2, 0, b, 3);
	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++)
			EXPECT_TRUE(a[i].end_ns <= b[j].start_ns ||
				    b[j].end_ns <= a[i].start_ns)
				TH_LOG("task %d of SQ 1 and %d of SQ 2 overlap",
				       i, j);
	do_free(self->fd, sq2, cq2);
}

/* The truth keeps the last NPUSIM_TRUTH_DEPTH tasks of an SQ. */
TEST_F(sq, truth_depth)
{
	static struct trs_sqe s[DEPTH];
	struct npusim_task_truth t[2];
	struct trs_logic_cqe c;
	__u32 n = NPUSIM_TRUTH_DEPTH + 2 * DEPTH, sent, i;
	static __u64 next;	/* not in a register across the harness' setjmp */

	for (i = 0; i < DEPTH; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 1, i, i == DEPTH - 1, 10, 0);
	for (sent = 0; sent < n; sent += DEPTH) {
		do_send(self->fd, self->sq, s, DEPTH, NULL);
		do_recv_n(self->fd, self->cq, &c, 1);
	}
	EXPECT_EQ(-ENOENT, _do_truth(self->fd, self->sq, 0, t, 1, &next));
	EXPECT_EQ(-ENOENT, _do_truth(self->fd, self->sq,
				     n - NPUSIM_TRUTH_DEPTH - 1, t, 1, &next));
	ASSERT_EQ(2, _do_truth(self->fd, self->sq, n - NPUSIM_TRUTH_DEPTH, t,
			       2, &next));
	EXPECT_EQ(n, next);
	EXPECT_EQ(n - NPUSIM_TRUTH_DEPTH, t[0].seq);
	EXPECT_EQ(NPUSIM_TASK_DONE, t[1].state);
}

/* RECV returns at most the CQ depth, whatever cqe_num says. */
TEST_F(sq, recv_at_most_cq_depth)
{
	struct trs_sqcq_alloc_info ai;
	struct trs_logic_cqe c[16];
	struct trs_sqe s[8];
	int i;

	alloc_info_init(&ai, 8, 0);
	ai.cqeDepth = 4;
	ASSERT_EQ(0, _do_alloc_info(self->fd, &ai));
	for (i = 0; i < 8; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 1, i, true, 100, 0);
	do_send(self->fd, ai.sqId, s, 8, NULL);
	usleep(10000);
	i = _do_recv(self->fd, ai.cqId, c, 16, 1000);
	EXPECT_LT(0, i);
	EXPECT_GE(4, i);
	do_recv_n(self->fd, ai.cqId, c + i, 8 - i);
	for (i = 0; i < 8; i++)
		EXPECT_EQ(i, c[i].task_id);
	do_free(self->fd, ai.sqId, ai.cqId);
}

TEST_F(sq, module_status)
{
	EXPECT_EQ(0, _do_manager(self->fd, ASCEND_MANAGER_GET_MODULE_STATUS,
				 ASCEND_MODULE_TSDRV, 0));
	EXPECT_EQ(-EBADFD, _do_manager(self->fd,
				       ASCEND_MANAGER_GET_MODULE_STATUS,
				       "DEVMM", 0));
	/* CLOSE checks the name like OPEN. */
	EXPECT_EQ(-EINVAL, _do_manager(self->fd, ASCEND_MANAGER_CLOSE,
				       "DEVMM", 0));
	do_roundtrip(self->fd, self->sq, self->cq, 1);
}

/* A strict RECV waits for its report while others arrive and stay queued. */
TEST_F(sq, recv_strict_waits)
{
	struct trs_report_recv_info ri;
	struct trs_logic_cqe c[8];
	struct trs_sqe s[5];
	int i;

	for (i = 0; i < 5; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 6, i, true, 20000000, 0);
	do_send(self->fd, self->sq, s, 5, NULL);
	recv_info_init(&ri, self->cq, c, 8, -1);
	ri.stream_id = 6;
	ri.task_id = 4;
	ASSERT_EQ(0, _do_recv_info(self->fd, &ri));
	ASSERT_EQ(1, ri.report_cqe_num);
	EXPECT_EQ(4, c[0].task_id);
	ASSERT_EQ(4, _do_recv(self->fd, self->cq, c, 8, 0));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(i, c[i].task_id);
}

/* The truth is written at submission and follows the task. */
TEST_F(sq, truth_states)
{
	struct npusim_task_truth t[2];
	struct trs_logic_cqe c;
	struct trs_sqe s[2];
	__u64 t0 = now_ns();

	sqe_task(&s[0], TRS_SQE_FFTS, 1, 1, false, 300000000, 0);
	sqe_task(&s[1], TRS_SQE_SDMA, 1, 2, true, 1000, 0);
	do_send(self->fd, self->sq, s, 2, NULL);
	do_truth(self->fd, self->sq, 0, t, 2);
	EXPECT_TRUE(t[0].state == NPUSIM_TASK_QUEUED ||
		    t[0].state == NPUSIM_TASK_RUNNING);
	EXPECT_EQ(NPUSIM_TASK_QUEUED, t[1].state);
	EXPECT_EQ(0, t[1].report);
	EXPECT_LE(t0, t[1].submit_ns);
	EXPECT_EQ(1, t[1].seq);
	EXPECT_EQ(1, t[1].pos);
	EXPECT_EQ(2, t[1].task_id);
	EXPECT_EQ(1, t[1].stream_id);
	EXPECT_EQ(TRS_SQE_SDMA, t[1].sqe_type);
	EXPECT_EQ(self->sq, t[1].sq_id);
	do_recv_n(self->fd, self->cq, &c, 1);
	do_truth(self->fd, self->sq, 0, t, 2);
	EXPECT_EQ(NPUSIM_TASK_DONE, t[0].state);
	EXPECT_EQ(NPUSIM_TASK_DONE, t[1].state);
	EXPECT_EQ(1, t[1].report);
	EXPECT_EQ(300000000, t[0].end_ns - t[0].start_ns);
}

/* The device counter is modulo 2^64. */
TEST_F(sq, counter_wraps)
{
	struct npusim_config cfg = {
		.mask = NPUSIM_CFG_COUNTER_EPOCH | NPUSIM_CFG_COUNTER_FREQ,
		.counter_freq_hz = 1000000000, .counter_epoch = -5ull,
	};
	struct npusim_task_truth t;
	struct trs_logic_cqe c;
	struct npusim_clock clk;
	struct trs_sqe s;

	do_set_config(self->fd, &cfg);
	do_clock(self->fd, &clk);
	EXPECT_EQ(clk.host_ns - 5, clk.ticks);
	sqe_mark(&s, 1, 1, 1, 0);
	do_send(self->fd, self->sq, &s, 1, NULL);
	do_recv_n(self->fd, self->cq, &c, 1);
	do_truth(self->fd, self->sq, 0, &t, 1);
	EXPECT_EQ(t.start_ns - 5, c.timestamp);
	EXPECT_EQ(t.start_ticks, c.timestamp);
}

TEST_HARNESS_MAIN
