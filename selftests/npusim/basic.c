// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: streams as CANN's runtime builds them (stream id, SQ-CQ pair,
 * logic CQ), sparse reports and SQ-head progress, order and exact device
 * time, RECV timeouts, hardware CQEs, full CQs, the device's knobs.
 */
#include "npusim_test.h"

#define DEPTH 256

FIXTURE(sq) {
	int fd;
	struct npq q;
	struct npusim_config cfg;	/* device 0's, restored at teardown */
};

FIXTURE_SETUP(sq)
{
	do_open(&self->fd, true);
	do_get_config(self->fd, &self->cfg);
	npq_create(&self->q, self->fd, 0, DEPTH);
}

FIXTURE_TEARDOWN(sq)
{
	int fd = _do_open(false);

	/* Release first: the counter settings need an idle device. */
	close(self->fd);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, _wait_idle(fd, WAIT_MS));
	EXPECT_EQ(0, _config_restore(fd, &self->cfg));
	close(fd);
}

TEST_F(sq, roundtrip)
{
	struct trs_logic_cqe c[2];
	struct npusim_task_truth t;
	struct trs_sqe s;
	__u32 pos;

	sqe_task(&s, TRS_SQE_FFTS, self->q.stream, 100, true, 1000, 0);
	do_send(self->fd, self->q.sq, &s, 1, &pos);
	EXPECT_EQ(0, pos);
	do_recv_n(self->fd, self->q.lcq, c, 1);
	EXPECT_EQ(self->q.stream, c[0].stream_id);
	EXPECT_EQ(100, c[0].task_id);
	EXPECT_EQ(0, c[0].error_code);
	EXPECT_EQ(TRS_SQE_FFTS, c[0].sqe_type);
	EXPECT_EQ(self->q.sq, c[0].sq_id);
	EXPECT_EQ(1, c[0].sq_head);
	EXPECT_EQ(0, c[0].flags);
	/* Only place-holder and event-record reports carry a timestamp. */
	EXPECT_EQ(0, c[0].timestamp);
	/* enque_timestamp: match reports only */
	EXPECT_EQ(0, c[0].enque_timestamp);
	do_truth(self->fd, self->q.sq, 0, &t, 1);
	EXPECT_EQ(NPUSIM_REPORT_LOGIC_CQ, t.report);
	EXPECT_EQ(1, t.traced);
	EXPECT_EQ(self->q.stream, t.stream_id);
	/* One report, received once: timeout 0 returns none at once. */
	EXPECT_EQ(0, _do_recv(self->fd, self->q.lcq, c, 2, 0));
}

/*
 * A control stream's logic CQ (the runtime's ctrl_stream: cqeSize 16, as
 * trs_logic_cq.c allows 1..32): RECV hands out 16-byte reports, packed,
 * the first 16 bytes of the logic CQE; nothing written past them.
 */
TEST_F(sq, control_stream_16_byte_reports)
{
	struct trs_uio_info uio = {};
	struct trs_sqcq_alloc_info ai;
	struct trs_logic_cqe c[2];
	__u32 stream, sq, cq, lcq, pos;
	unsigned char buf[3 * 16];
	struct trs_sqe s[2];
	int i, got = 0, r;

	do_stream_alloc(self->fd, 0, &stream);
	do_sq_alloc(self->fd, 0, stream, DEPTH, &sq, &cq);
	logic_alloc_info_init(&ai, 0, stream, 16, &uio);
	ai.cqeSize = 16;
	ASSERT_EQ(0, _do_alloc_info(self->fd, &ai));
	lcq = ai.cqId;
	for (i = 0; i < 2; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, stream, 40 + i, true, 1000, 0);
	do_send(self->fd, sq, s, 2, &pos);
	memset(buf, 0xa5, sizeof(buf));
	while (got < 2) {
		r = _do_recv(self->fd, lcq, buf + got * 16, 2 - got, WAIT_MS);
		ASSERT_LT(0, r);
		got += r;
	}
	memset(c, 0, sizeof(c));
	for (i = 0; i < 2; i++) {
		memcpy(&c[i], buf + i * 16, 16);
		EXPECT_EQ(stream, c[i].stream_id);
		EXPECT_EQ(40 + i, c[i].task_id);
		EXPECT_EQ(sq, c[i].sq_id);
		EXPECT_EQ(pos + i + 1, c[i].sq_head);
	}
	for (i = 32; i < 48; i++) {
		EXPECT_EQ(0xa5, buf[i]) TH_LOG("byte %d written", i);
	}
	do_lcq_free(self->fd, 0, lcq);
	do_sq_free(self->fd, 0, sq, cq);
	do_stream_free(self->fd, 0, stream);
}

TEST_F(sq, positions_wrap)
{
	struct trs_sqe s[100];
	struct trs_logic_cqe c;
	__u32 pos, expect = 0, head;
	int b, i;

	for (b = 0; b < 5; b++) {
		for (i = 0; i < 100; i++)
			sqe_task(&s[i], TRS_SQE_AICPU, self->q.stream,
				 b * 100 + i, i == 99, 100, 0);
		do_send(self->fd, self->q.sq, s, 100, &pos);
		EXPECT_EQ(expect, pos);
		do_recv_n(self->fd, self->q.lcq, &c, 1);
		expect = (expect + 100) % DEPTH;
		EXPECT_EQ(expect, c.sq_head);
		EXPECT_EQ(b * 100 + 99, c.task_id);
		ASSERT_EQ(0, _do_query(self->fd, 0, self->q.sq,
				       TRS_SQCQ_PROP_SQ_HEAD, &head));
		EXPECT_EQ(expect, head);
		ASSERT_EQ(0, _do_query(self->fd, 0, self->q.sq,
				       TRS_SQCQ_PROP_SQ_TAIL, &head));
		EXPECT_EQ(expect, head);
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

			sqe_task(&s[i], types[k % 4], self->q.stream, k, true,
				 1000 + (k * 7919) % 5000, 0);
		}
		do_send(self->fd, self->q.sq, s, 50, NULL);
	}
	do_recv_n(self->fd, self->q.lcq, c, n);
	do_truth(self->fd, self->q.sq, 0, t, n);
	for (i = 0; i < n; i++) {
		__u32 dur = 1000 + (i * 7919) % 5000;

		ASSERT_EQ(i, c[i].task_id);
		EXPECT_EQ((i + 1) % DEPTH, c[i].sq_head);
		EXPECT_EQ(types[i % 4], c[i].sqe_type);
		EXPECT_EQ(i, t[i].seq);
		EXPECT_EQ(i % DEPTH, t[i].pos);
		EXPECT_EQ(NPUSIM_TASK_DONE, t[i].state);
		EXPECT_EQ(NPUSIM_REPORT_LOGIC_CQ, t[i].report);
		EXPECT_EQ(dur, t[i].end_ns - t[i].start_ns);
		EXPECT_LE(t[i].submit_ns, t[i].start_ns);
		EXPECT_EQ(ns_to_ticks(&clk, t[i].start_ns), t[i].start_ticks);
		EXPECT_EQ(ns_to_ticks(&clk, t[i].end_ns), t[i].end_ticks);
		if (i)
			EXPECT_LE(t[i - 1].end_ns, t[i].start_ns);
	}
}

/*
 * Sparse reports, as on a real host: only the recycle task every 64 (and
 * nothing else) reports; CANN's marks (no wr_cqe) are silent; QUERY
 * SQ_HEAD tells the progress, and every task before the head is done.
 */
TEST_F(sq, sparse_reports_query_progress)
{
	static struct npusim_task_truth t[512];
	static struct trs_sqe s[128];
	struct trs_logic_cqe c[16];
	struct npusim_stats st0, st1;
	__u32 head = 0, b, i, seen = 0;

	do_stats(self->fd, &st0);
	for (b = 0; b < 4; b++) {
		for (i = 0; i < 128; i++) {
			__u32 k = b * 128 + i;

			if (i % 32 == 5)
				sqe_mark(&s[i], self->q.stream, k, k, 0, false);
			else
				sqe_task(&s[i], TRS_SQE_FFTS, self->q.stream,
					 k, (k + 1) % 64 == 0, 1500, 0);
		}
		do_send(self->fd, self->q.sq, s, 128, NULL);
		/* progress from the SQ head, whatever the reports say */
		do {
			__u32 done, j;

			ASSERT_EQ(0, _do_query(self->fd, 0, self->q.sq,
					       TRS_SQCQ_PROP_SQ_HEAD, &head));
			done = (head + DEPTH - (b * 128) % DEPTH) % DEPTH;
			if (b * 128 + done > seen) {
				do_truth(self->fd, self->q.sq, seen, t,
					 b * 128 + done - seen);
				for (j = 0; j < b * 128 + done - seen; j++)
					ASSERT_EQ(NPUSIM_TASK_DONE, t[j].state);
				seen = b * 128 + done;
			}
			if (seen < (b + 1) * 128)
				pause_us(100);
		} while (seen < (b + 1) * 128);
	}
	do_recv_n(self->fd, self->q.lcq, c, 8);
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(64 * i + 63, c[i].task_id);
		EXPECT_EQ((64 * i + 64) % DEPTH, c[i].sq_head);
	}
	EXPECT_EQ(0, _do_recv(self->fd, self->q.lcq, c, 16, 0));
	do_truth(self->fd, self->q.sq, 0, t, 512);
	for (i = 0; i < 512; i++)
		EXPECT_EQ((i + 1) % 64 == 0 ? NPUSIM_REPORT_LOGIC_CQ :
					      NPUSIM_REPORT_NONE, t[i].report);
	do_stats(self->fd, &st1);
	EXPECT_EQ(st0.reports + 8, st1.reports);
	EXPECT_EQ(st0.submitted + 512, st1.submitted);
	EXPECT_EQ(st0.traced_sqes + 512, st1.traced_sqes);
	EXPECT_EQ(st0.sent_sqes + 512, st1.sent_sqes);
}

/* A failed SQE reports even without wr_cqe, and the SQ goes on. */
TEST_F(sq, failed_task_reports)
{
	struct npusim_stats st0, st1;
	struct npusim_task_truth t[2];
	struct trs_logic_cqe c[2];
	struct trs_sqe s[2];

	do_stats(self->fd, &st0);
	sqe_task(&s[0], TRS_SQE_FFTS, self->q.stream, 1, false, 1000, 0x1234);
	sqe_task(&s[1], TRS_SQE_FFTS, self->q.stream, 2, true, 1000, 0);
	do_send(self->fd, self->q.sq, s, 2, NULL);
	do_recv_n(self->fd, self->q.lcq, c, 2);
	EXPECT_EQ(1, c[0].task_id);
	EXPECT_EQ(0x1234, c[0].error_code);
	/* the hardware CQE's error byte @8, which the runtime tests */
	EXPECT_EQ(TRS_CQE_ERR_TYPE_EXCEPTION, c[0].error_type);
	EXPECT_TRUE(c[0].flags & TRS_CQE_F_ERROR);
	EXPECT_EQ(1, c[0].sq_head);
	EXPECT_EQ(0, c[0].timestamp);	/* the failed SQE's index */
	EXPECT_EQ(2, c[1].task_id);
	EXPECT_EQ(0, c[1].error_code);
	EXPECT_EQ(0, c[1].error_type);
	EXPECT_FALSE(c[1].flags & TRS_CQE_F_ERROR);
	do_truth(self->fd, self->q.sq, 0, t, 2);
	EXPECT_EQ(0x1234, t[0].error_code);
	EXPECT_EQ(NPUSIM_TASK_DONE, t[0].state);
	EXPECT_EQ(NPUSIM_REPORT_LOGIC_CQ, t[0].report);
	do_stats(self->fd, &st1);
	EXPECT_EQ(st0.errors + 1, st1.errors);
	EXPECT_EQ(st0.submitted + 2, st1.submitted);
	EXPECT_EQ(st0.reports + 2, st1.reports);
}

/* An SQE npusim cannot run fails when it runs: SEND does not check. */
TEST_F(sq, bad_sqe_fails_at_run)
{
	struct trs_logic_cqe c;
	struct trs_sqe s;

	sqe_task(&s, 2, self->q.stream, 9, false, 1000, 0);
	do_send(self->fd, self->q.sq, &s, 1, NULL);
	do_recv_n(self->fd, self->q.lcq, &c, 1);
	EXPECT_EQ(9, c.task_id);
	EXPECT_EQ(NPUSIM_ERR_BAD_SQE, c.error_code);
	EXPECT_EQ(TRS_CQE_ERR_TYPE_SQE_ERROR, c.error_type);
	EXPECT_TRUE(c.flags & TRS_CQE_F_ERROR);
	do_roundtrip(&self->q, 10);
}

/*
 * Step marks with wr_cqe: the report's timestamp is the device counter when
 * the stream reached the mark (= truth start_ticks), grows along the
 * stream by at least the work in between, and is in device ticks. CANN's
 * own marks (no wr_cqe) report nothing.
 */
TEST_F(sq, step_marks_device_time)
{
	const __u32 work_ns = 20000;
	struct npusim_config cfg = {
		.mask = NPUSIM_CFG_COUNTER_FREQ | NPUSIM_CFG_COUNTER_EPOCH,
		.counter_freq_hz = 25000000,
		.counter_epoch = 1ull << 50,
	};
	struct npusim_task_truth t[19];
	struct trs_logic_cqe c[10];
	struct npusim_clock clk;
	struct trs_sqe s[19];
	int i;

	do_set_config(self->fd, &cfg);
	do_clock(self->fd, &clk);
	ASSERT_EQ(25000000, clk.counter_freq_hz);
	ASSERT_EQ(1ull << 50, clk.counter_epoch);
	EXPECT_EQ(ns_to_ticks(&clk, clk.host_ns), clk.ticks);

	for (i = 0; i < 17; i++) {
		if (i % 2 == 0)
			sqe_mark(&s[i], self->q.stream, i, 1000 + i / 2,
				 i % 4 ? 1 : 0, true);
		else
			sqe_task(&s[i], TRS_SQE_FFTS, self->q.stream, i, false,
				 work_ns, 0);
	}
	sqe_mark(&s[17], self->q.stream, 17, 2000, 0, false);
	sqe_task(&s[18], TRS_SQE_FFTS, self->q.stream, 18, true, 0, 0);
	do_send(self->fd, self->q.sq, s, 19, NULL);
	do_recv_n(self->fd, self->q.lcq, c, 10);
	do_truth(self->fd, self->q.sq, 0, t, 19);
	for (i = 0; i < 9; i++) {
		const struct npusim_task_truth *m = &t[2 * i];

		EXPECT_EQ(2 * i, c[i].task_id);
		EXPECT_EQ(TRS_SQE_PLACE_HOLDER, c[i].sqe_type);
		EXPECT_EQ(0, c[i].error_code);
		EXPECT_EQ(m->start_ticks, c[i].timestamp);
		EXPECT_EQ(ns_to_ticks(&clk, m->start_ns), c[i].timestamp);
		/* A place-holder takes no time. */
		EXPECT_EQ(m->start_ns, m->end_ns);
		/* Device ticks: epoch + ns / 40, nowhere near host ns. */
		EXPECT_GT(c[i].timestamp, m->start_ns + 1000000000000ull);
		EXPECT_LT(c[i].timestamp, clk.counter_epoch + m->start_ns);
		if (i) {
			EXPECT_LT(c[i - 1].timestamp, c[i].timestamp);
			EXPECT_LE(work_ns / 40 - 1,
				  c[i].timestamp - c[i - 1].timestamp);
		}
	}
	/* the CANN mark: done, no report; the next report is task 18 */
	EXPECT_EQ(NPUSIM_TASK_DONE, t[17].state);
	EXPECT_EQ(NPUSIM_REPORT_NONE, t[17].report);
	EXPECT_EQ(18, c[9].task_id);
}

TEST_F(sq, recv_timeout)
{
	struct trs_report_recv_info ri;
	struct trs_logic_cqe c[4];
	__u64 t0, dt;

	/* timeout 0 and nothing queued: success, no report */
	recv_info_init(&ri, TRS_SQCQ_TYPE_LOGIC, 0, self->q.lcq, c, 4, 0);
	ASSERT_EQ(0, _do_recv_info(self->fd, &ri));
	EXPECT_EQ(0, ri.report_cqe_num);

	/* a timeout that runs out: ETIMEDOUT, report_cqe_num not written */
	recv_info_init(&ri, TRS_SQCQ_TYPE_LOGIC, 0, self->q.lcq, c, 4, 100);
	t0 = now_ns();
	do_recv_info_err(ETIMEDOUT, self->fd, &ri);
	dt = now_ns() - t0;
	EXPECT_EQ(0xdeadbeef, ri.report_cqe_num);
	EXPECT_LE(95000000ull, dt);
	EXPECT_GT(5000000000ull, dt);
	do_roundtrip(&self->q, 1);
}

/* A waiting RECV wakes for the report, which comes after the task's end. */
TEST_F(sq, recv_waits_for_task_end)
{
	struct npusim_task_truth t;
	struct trs_logic_cqe c;
	struct trs_sqe s;
	__u64 got;

	sqe_task(&s, TRS_SQE_FFTS, self->q.stream, 1, true, 50000000, 0);
	do_send(self->fd, self->q.sq, &s, 1, NULL);
	ASSERT_EQ(1, _do_recv(self->fd, self->q.lcq, &c, 1, -1));
	got = now_ns();
	do_truth(self->fd, self->q.sq, 0, &t, 1);
	EXPECT_EQ(NPUSIM_TASK_DONE, t.state);
	EXPECT_EQ(50000000, t.end_ns - t.start_ns);
	EXPECT_LE(t.end_ns, got);
}

TEST_F(sq, recv_in_small_batches)
{
	struct trs_logic_cqe c[4];
	struct trs_sqe s[10];
	int i, n, got = 0;

	for (i = 0; i < 10; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, self->q.stream, i, true, 1000, 0);
	do_send(self->fd, self->q.sq, s, 10, NULL);
	wait_head(self->fd, 0, self->q.sq, 10);
	while (got < 10) {
		n = _do_recv(self->fd, self->q.lcq, c, 3, 1000);
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
		sqe_task(&s[i], TRS_SQE_FFTS, self->q.stream, i, false, 500, 0);
	do_send(self->fd, self->q.sq, s, 6, NULL);
	wait_head(self->fd, 0, self->q.sq, 6);
	ASSERT_EQ(2, _do_recv(self->fd, self->q.lcq, c, 3, 0));
	EXPECT_EQ(2, c[0].task_id);
	EXPECT_EQ(5, c[1].task_id);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0x77, c[i].error_code);
		EXPECT_TRUE(c[i].flags & TRS_CQE_F_ERROR);
	}
}

/*
 * Without a logic CQ the reports stay in the SQ's CQ as 16-byte hardware
 * CQEs (RECV type 0). A full CQ stalls the SQ: with 4 slots, the head stops
 * at the 4th reporting task, RECV gets exactly 4, nothing is dropped, and
 * each RECV lets the SQ go exactly as far as the room it made.
 */
TEST_F(sq, hw_cq_full_stalls)
{
	struct trs_hw_cqe c[16];
	struct npusim_stats st0, st1;
	struct trs_sqe s[20];
	__u32 stream, sq, cq = 0;
	struct trs_sqcq_alloc_info ai;
	struct trs_uio_info uio = {};
	int i, b;

	do_stats(self->fd, &st0);
	do_stream_alloc(self->fd, 0, &stream);
	alloc_info_init(&ai, 0, stream, 32, 0, &uio);
	ai.cqeDepth = 4;
	ASSERT_EQ(0, _do_alloc_info(self->fd, &ai));
	sq = ai.sqId;
	cq = ai.cqId;
	for (i = 0; i < 20; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, stream, i, true, 1000, 0);
	do_send(self->fd, sq, s, 20, NULL);
	for (b = 0; b < 5; b++) {
		/* the 4 reports of this round are in, the SQ stops there */
		wait_task_state(self->fd, 0, sq, 4 * b + 3, NPUSIM_TASK_DONE);
		wait_head(self->fd, 0, sq, 4 * b + 4);
		ASSERT_EQ(4, _do_recv_type(self->fd, TRS_SQCQ_TYPE_NORMAL, 0,
					   cq, c, 16, 0));
		for (i = 0; i < 4; i++) {
			EXPECT_EQ(4 * b + i, c[i].task_id);
			EXPECT_EQ(stream, c[i].stream_id);
			EXPECT_EQ(4 * b + i + 1, c[i].sq_head);
			EXPECT_EQ(sq, (c[i].bits & TRS_HW_CQE_SQ_ID_MASK) >>
				      TRS_HW_CQE_SQ_ID_SHIFT);
			EXPECT_EQ(0, c[i].bits & TRS_HW_CQE_ERROR);
		}
	}
	do_stats(self->fd, &st1);
	EXPECT_EQ(st0.report_drops, st1.report_drops);
	EXPECT_EQ(st0.reports + 20, st1.reports);
	do_sq_free(self->fd, 0, sq, cq);
	do_stream_free(self->fd, 0, stream);
}

/*
 * A hardware CQ's slot is the cqeSize of its ALLOC: the runtime asks 32 on
 * STARS v2, whose 20-byte CQE (trs_stars_v2_cq.h) sits in a 32-byte slot;
 * RECV type 0 hands out whole slots, the CQE at the start of each. A failed
 * task's CQE has its error type at @8, the byte the runtime tests.
 */
TEST_F(sq, hw_cqe_32_byte_slots)
{
	struct trs_uio_info uio = {};
	struct trs_sqcq_alloc_info ai;
	__u8 c[3 * 32], zero[16] = {};
	struct trs_hw_cqe h[2];
	struct trs_sqe s[2];
	__u32 stream;

	do_stream_alloc(self->fd, 0, &stream);
	alloc_info_init(&ai, 0, stream, 8, 0, &uio);
	ai.cqeSize = 32;
	ASSERT_EQ(0, _do_alloc_info(self->fd, &ai));
	sqe_task(&s[0], TRS_SQE_FFTS, stream, 0, true, 500, 0);
	sqe_task(&s[1], TRS_SQE_FFTS, stream, 1, false, 500, 0x4321);
	do_send(self->fd, ai.sqId, s, 2, NULL);
	wait_head(self->fd, 0, ai.sqId, 2);
	memset(c, 0xa5, sizeof(c));
	ASSERT_EQ(2, _do_recv_type(self->fd, TRS_SQCQ_TYPE_NORMAL, 0, ai.cqId,
				   c, 3, 0));
	memcpy(&h[0], c, sizeof(h[0]));
	memcpy(&h[1], c + 32, sizeof(h[1]));
	EXPECT_EQ(0, h[0].task_id);
	EXPECT_EQ(0, h[0].bits & TRS_HW_CQE_ERROR);
	EXPECT_EQ(0, memcmp(c + 16, zero, 16));
	EXPECT_EQ(1, h[1].task_id);
	EXPECT_EQ(stream, h[1].stream_id & TRS_CQE_STREAM_ID_MASK);
	EXPECT_TRUE(h[1].bits & TRS_HW_CQE_ERROR);
	EXPECT_EQ(TRS_CQE_ERR_TYPE_EXCEPTION, c[32 + 8]);
	EXPECT_EQ(TRS_SQE_FFTS, h[1].error.error_flags >>
				TRS_HW_CQE_ERR_SQE_TYPE_SHIFT);
	EXPECT_EQ(1, h[1].error.sqe_index);
	EXPECT_EQ(0x4321, h[1].error.error_code);
	EXPECT_EQ(0, memcmp(c + 48, zero, 16));
	EXPECT_EQ(0xa5, c[64]);		/* the third slot untouched */
	do_sq_free(self->fd, 0, ai.sqId, ai.cqId);
	do_stream_free(self->fd, 0, stream);
}

/*
 * A full logic CQ refuses a report, which is dropped and counted, as the
 * driver's full_drop: a logic CQ of depth 4 holds 3.
 */
TEST_F(sq, logic_cq_full_drops)
{
	struct npusim_task_truth t[6];
	struct npusim_stats st0, st1;
	struct trs_logic_cqe c[8];
	struct trs_sqe s[6];
	struct npq q;
	int i;

	do_stats(self->fd, &st0);
	q.fd = self->fd;
	q.ts = 0;
	q.cq = 0;
	do_stream_alloc(self->fd, 0, &q.stream);
	ASSERT_EQ(0, _do_sq_alloc(self->fd, 0, q.stream, 16, 0, &q.sq, &q.cq,
				  NULL));
	do_lcq_alloc(self->fd, 0, q.stream, 4, &q.lcq);
	for (i = 0; i < 6; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, q.stream, i, true, 1000, 0);
	do_send(self->fd, q.sq, s, 6, NULL);
	wait_head(self->fd, 0, q.sq, 6);
	ASSERT_EQ(3, _recv_n_type(self->fd, TRS_SQCQ_TYPE_LOGIC, 0, q.lcq, c,
				  3, WAIT_MS));
	EXPECT_EQ(0, _do_recv(self->fd, q.lcq, c + 3, 5, 0));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(i, c[i].task_id);
	do_truth(self->fd, q.sq, 0, t, 6);
	for (i = 0; i < 6; i++)
		EXPECT_EQ(i < 3 ? NPUSIM_REPORT_LOGIC_CQ : NPUSIM_REPORT_DROPPED,
			  t[i].report);
	do_stats(self->fd, &st1);
	EXPECT_EQ(st0.report_drops + 3, st1.report_drops);
	EXPECT_EQ(st0.reports + 3, st1.reports);
	/* room again: the next report goes in */
	do_roundtrip(&q, 77);
	ASSERT_EQ(0, _npq_destroy(&q));
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
	do_sq_alloc(self->fd, 0, self->q.stream, 8, &sq, &cq);
	do_sq_pause(self->fd, 0, sq);
	for (i = 0; i < 8; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, self->q.stream, i, true, 1000, 0);
	do_send(self->fd, sq, s, 8, NULL);
	EXPECT_EQ(-EAGAIN, _do_send(self->fd, sq, s, 1, 0, NULL));
	t0 = now_ns();
	EXPECT_EQ(-ETIMEDOUT, _do_send(self->fd, sq, s, 1, 30, NULL));
	dt = now_ns() - t0;
	EXPECT_LE(29000000ull, dt);
	do_sq_free(self->fd, 0, sq, cq);
	do_stats(self->fd, &st1);
	EXPECT_EQ(st0.submitted + 8, st1.submitted);
	EXPECT_EQ(st0.cancelled + 8, st1.cancelled);
	EXPECT_EQ(st0.tasks_queued, st1.tasks_queued);
	EXPECT_EQ(st0.sqs, st1.sqs);
	EXPECT_EQ(st0.cqs, st1.cqs);
}

/* Paused, an SQ keeps its tasks queued; resumed, it runs them. */
TEST_F(sq, pause_resume_truth_states)
{
	struct npusim_task_truth t[2];
	struct trs_logic_cqe c;
	struct trs_sqe s[2];
	__u64 t0 = now_ns();
	__u32 head;

	do_sq_pause(self->fd, 0, self->q.sq);
	sqe_task(&s[0], TRS_SQE_FFTS, self->q.stream, 1, false, 3000, 0);
	sqe_task(&s[1], TRS_SQE_SDMA, self->q.stream, 2, true, 1000, 0);
	do_send(self->fd, self->q.sq, s, 2, NULL);
	do_truth(self->fd, self->q.sq, 0, t, 2);
	EXPECT_EQ(NPUSIM_TASK_QUEUED, t[0].state);
	EXPECT_EQ(NPUSIM_TASK_QUEUED, t[1].state);
	EXPECT_EQ(NPUSIM_REPORT_NONE, t[1].report);
	EXPECT_LE(t0, t[1].submit_ns);
	EXPECT_EQ(1, t[1].seq);
	EXPECT_EQ(1, t[1].pos);
	EXPECT_EQ(2, t[1].task_id);
	EXPECT_EQ(self->q.stream, t[1].stream_id);
	EXPECT_EQ(TRS_SQE_SDMA, t[1].sqe_type);
	EXPECT_EQ(self->q.sq, t[1].sq_id);
	ASSERT_EQ(0, _do_query(self->fd, 0, self->q.sq, TRS_SQCQ_PROP_SQ_HEAD,
			       &head));
	EXPECT_EQ(0, head);
	do_sq_resume(self->fd, 0, self->q.sq);
	do_recv_n(self->fd, self->q.lcq, &c, 1);
	do_truth(self->fd, self->q.sq, 0, t, 2);
	EXPECT_EQ(NPUSIM_TASK_DONE, t[0].state);
	EXPECT_EQ(NPUSIM_TASK_DONE, t[1].state);
	EXPECT_EQ(NPUSIM_REPORT_LOGIC_CQ, t[1].report);
	EXPECT_EQ(3000, t[0].end_ns - t[0].start_ns);
	EXPECT_LE(t[0].end_ns, t[1].start_ns);
}

/* Configuration is per device: device 1 keeps its own. */
TEST_F(sq, config_per_device)
{
	struct npusim_config c0, c1, d1, set = {
		.mask = NPUSIM_CFG_DEFAULT_DURATION | NPUSIM_CFG_UNITS,
		.default_duration_ns = 12345, .units = 3, .device = 0,
	};
	struct npusim_task_truth t;
	struct trs_logic_cqe c;
	struct trs_sqe s;

	do_get_config(self->fd, &c0);
	EXPECT_LE(1, c0.units);
	EXPECT_NE(0, c0.counter_freq_hz);
	EXPECT_EQ(NPUSIM_CFG_ALL, c0.mask);
	do_get_config_dev(self->fd, 1, &d1);
	do_set_config(self->fd, &set);
	do_get_config(self->fd, &c1);
	EXPECT_EQ(12345, c1.default_duration_ns);
	EXPECT_EQ(3, c1.units);
	EXPECT_EQ(c0.counter_freq_hz, c1.counter_freq_hz);
	do_get_config_dev(self->fd, 1, &c1);
	EXPECT_EQ(d1.default_duration_ns, c1.default_duration_ns);
	EXPECT_EQ(d1.units, c1.units);
	EXPECT_EQ(1, c1.device);

	/* Duration 0 in the SQE: the device default. */
	sqe_task(&s, TRS_SQE_FFTS, self->q.stream, 1, true, 0, 0);
	do_send(self->fd, self->q.sq, &s, 1, NULL);
	do_recv_n(self->fd, self->q.lcq, &c, 1);
	do_truth(self->fd, self->q.sq, 0, &t, 1);
	EXPECT_EQ(12345, t.end_ns - t.start_ns);
}

/* A slow device: duration_pct scales every task of device 1 only. */
TEST_F(sq, slow_device)
{
	struct npusim_config d1, set = {
		.mask = NPUSIM_CFG_DURATION_PCT, .duration_pct = 300,
		.device = 1,
	};
	struct npusim_task_truth t0[4], t1[4];
	struct trs_logic_cqe c;
	struct trs_sqe s[4];
	struct npq q1;
	int fd1, i;

	do_get_config_dev(self->fd, 1, &d1);
	do_set_config(self->fd, &set);
	do_open_dev(&fd1, 1);
	npq_create(&q1, fd1, 0, 16);
	for (i = 0; i < 4; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, self->q.stream, i, i == 3,
			 10000 + i, 0);
	do_send(self->fd, self->q.sq, s, 4, NULL);
	for (i = 0; i < 4; i++)
		s[i].rt_stream_id = q1.stream;
	npq_send(&q1, s, 4, NULL);
	do_recv_n(self->fd, self->q.lcq, &c, 1);
	npq_recv_n(&q1, &c, 1);
	do_truth(self->fd, self->q.sq, 0, t0, 4);
	do_truth(fd1, q1.sq, 0, t1, 4);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(10000 + i, t0[i].end_ns - t0[i].start_ns);
		EXPECT_EQ(3 * (10000 + i), t1[i].end_ns - t1[i].start_ns);
	}
	close(fd1);
	EXPECT_EQ(0, _wait_idle(self->fd, WAIT_MS));
	EXPECT_EQ(0, _config_restore(self->fd, &d1));
}

/* Event records are time-stamped like place-holders; a failed one not. */
TEST_F(sq, event_record_timestamps)
{
	struct npusim_task_truth t[3];
	struct trs_logic_cqe c[3];
	struct trs_sqe s[3];

	sqe_task(&s[0], TRS_SQE_EVENT_RECORD, self->q.stream, 1, true, 0, 0);
	sqe_task(&s[1], TRS_SQE_FFTS, self->q.stream, 2, false, 30000, 0);
	sqe_task(&s[2], TRS_SQE_PLACE_HOLDER, self->q.stream, 3, true, 0, 0x99);
	do_send(self->fd, self->q.sq, s, 3, NULL);
	do_recv_n(self->fd, self->q.lcq, c, 2);
	do_truth(self->fd, self->q.sq, 0, t, 3);
	EXPECT_EQ(TRS_SQE_EVENT_RECORD, c[0].sqe_type);
	EXPECT_EQ(t[0].start_ticks, c[0].timestamp);
	EXPECT_NE(0, c[0].timestamp);
	EXPECT_EQ(t[0].start_ns, t[0].end_ns);
	EXPECT_EQ(3, c[1].task_id);
	EXPECT_EQ(0x99, c[1].error_code);
	EXPECT_EQ(2, c[1].timestamp);	/* the failed SQE's position */
}

/* One unit: the tasks of two SQs take turns instead of overlapping. */
TEST_F(sq, one_unit_serialises)
{
	struct npusim_config cfg = { .mask = NPUSIM_CFG_UNITS, .units = 1 };
	struct npusim_task_truth a[3], b[3];
	struct trs_logic_cqe c[3];
	struct trs_sqe s[3];
	struct npq q2;
	int i, j;

	wait_idle(self->fd);
	do_set_config(self->fd, &cfg);
	npq_create(&q2, self->fd, 0, 16);
	for (i = 0; i < 3; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, self->q.stream, i, i == 2,
			 3000000, 0);
	do_send(self->fd, self->q.sq, s, 3, NULL);
	for (i = 0; i < 3; i++)
		s[i].rt_stream_id = q2.stream;
	npq_send(&q2, s, 3, NULL);
	do_recv_n(self->fd, self->q.lcq, c, 1);
	npq_recv_n(&q2, c, 1);
	do_truth(self->fd, self->q.sq, 0, a, 3);
	do_truth(self->fd, q2.sq, 0, b, 3);
	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++)
			EXPECT_TRUE(a[i].end_ns <= b[j].start_ns ||
				    b[j].end_ns <= a[i].start_ns)
				TH_LOG("task %d of SQ 1 and %d of SQ 2 overlap",
				       i, j);
	ASSERT_EQ(0, _npq_destroy(&q2));
}

/* The truth keeps the last NPUSIM_TRUTH_DEPTH tasks of an SQ. */
TEST_F_TIMEOUT(sq, truth_depth, 120)
{
	static struct trs_sqe s[DEPTH];
	struct npusim_task_truth t[2];
	struct trs_logic_cqe c;
	__u32 n = NPUSIM_TRUTH_DEPTH + 2 * DEPTH, sent, i;
	static __u64 next;	/* not in a register across the harness' setjmp */

	for (i = 0; i < DEPTH; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, self->q.stream, i,
			 i == DEPTH - 1, 10, 0);
	for (sent = 0; sent < n; sent += DEPTH) {
		do_send(self->fd, self->q.sq, s, DEPTH, NULL);
		do_recv_n(self->fd, self->q.lcq, &c, 1);
	}
	EXPECT_EQ(-ENOENT, _do_truth(self->fd, self->q.sq, 0, t, 1, &next));
	EXPECT_EQ(-ENOENT, _do_truth(self->fd, self->q.sq,
				     n - NPUSIM_TRUTH_DEPTH - 1, t, 1, &next));
	ASSERT_EQ(2, _do_truth(self->fd, self->q.sq, n - NPUSIM_TRUTH_DEPTH, t,
			       2, &next));
	EXPECT_EQ(n, next);
	EXPECT_EQ(n - NPUSIM_TRUTH_DEPTH, t[0].seq);
	EXPECT_EQ(NPUSIM_TASK_DONE, t[1].state);
}

/* QUERY's props; an SQ of depth 4096 (the largest). */
TEST_F(sq, query_props_depth_4096)
{
	struct trs_sqe s[2];
	__u32 sq, cq, v;

	do_sq_alloc(self->fd, 0, self->q.stream, TRS_SQ_MAX_DEPTH, &sq, &cq);
	ASSERT_EQ(0, _do_query(self->fd, 0, sq, TRS_SQCQ_PROP_SQ_DEPTH, &v));
	EXPECT_EQ(TRS_SQ_MAX_DEPTH, v);
	ASSERT_EQ(0, _do_query(self->fd, 0, sq, TRS_SQCQ_PROP_SQ_STATUS, &v));
	EXPECT_EQ(1, v);
	ASSERT_EQ(0, _do_query(self->fd, 0, sq, TRS_SQCQ_PROP_SQ_CQE_STATUS,
			       &v));
	EXPECT_EQ(0, v);
	sqe_task(&s[0], TRS_SQE_FFTS, self->q.stream, 1, false, 100, 0);
	sqe_task(&s[1], TRS_SQE_FFTS, self->q.stream, 2, true, 100, 0);
	do_send(self->fd, sq, s, 2, NULL);
	wait_head(self->fd, 0, sq, 2);
	ASSERT_EQ(0, _do_query(self->fd, 0, sq, TRS_SQCQ_PROP_SQ_TAIL, &v));
	EXPECT_EQ(2, v);
	/* a report was written since the last query; reading clears */
	ASSERT_EQ(0, _do_query(self->fd, 0, sq, TRS_SQCQ_PROP_SQ_CQE_STATUS,
			       &v));
	EXPECT_EQ(1, v);
	ASSERT_EQ(0, _do_query(self->fd, 0, sq, TRS_SQCQ_PROP_SQ_CQE_STATUS,
			       &v));
	EXPECT_EQ(0, v);
	EXPECT_EQ(-EINVAL, _do_query(self->fd, 0, sq, TRS_SQCQ_PROP_CQ_DEPTH,
				     &v));
	do_sq_free(self->fd, 0, sq, cq);
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
	sqe_mark(&s, self->q.stream, 1, 1, 0, true);
	do_send(self->fd, self->q.sq, &s, 1, NULL);
	do_recv_n(self->fd, self->q.lcq, &c, 1);
	do_truth(self->fd, self->q.sq, 0, &t, 1);
	EXPECT_EQ(t.start_ns - 5, c.timestamp);
	EXPECT_EQ(t.start_ticks, c.timestamp);
}

/*
 * The counter frequency where a real host has it: URD's
 * DMS_GET_OSC_FREQ_INFO_DEVICE on a fd OPENed with "URD", per device.
 */
TEST_F(sq, urd_osc_freq)
{
	struct npusim_config set = {
		.mask = NPUSIM_CFG_COUNTER_FREQ, .counter_freq_hz = 24000000,
		.device = 1,
	};
	struct npusim_config d1;
	struct urd_ioctl_arg a = {
		.main_cmd = URD_MAIN_CMD_BASIC,
		.sub_cmd = URD_SUBCMD_GET_DEV_OSC_FREQ,
		.input_len = 4, .output_len = 8,
	};
	__u64 freq = 0;
	__u32 devid;
	int fd;

	do_open_urd(&fd);
	a.input = (__u64)(uintptr_t)&devid;
	a.output = (__u64)(uintptr_t)&freq;
	devid = 0;
	ASSERT_EQ(0, xioctl(fd, URD_IOC_GET_DEV_OSC_FREQ, &a));
	EXPECT_EQ(self->cfg.counter_freq_hz, freq);
	do_get_config_dev(self->fd, 1, &d1);
	do_set_config(self->fd, &set);
	devid = 1;
	ASSERT_EQ(0, xioctl(fd, URD_IOC_GET_DEV_OSC_FREQ, &a));
	EXPECT_EQ(24000000, freq);
	EXPECT_EQ(0, _config_restore(self->fd, &d1));
	/* bad input: no such device, wrong lengths, other commands */
	devid = 99;
	EXPECT_EQ(-EINVAL, xioctl(fd, URD_IOC_GET_DEV_OSC_FREQ, &a));
	devid = 0;
	a.output_len = 4;
	EXPECT_EQ(-EINVAL, xioctl(fd, URD_IOC_GET_DEV_OSC_FREQ, &a));
	a.output_len = 8;
	a.output = 8;
	EXPECT_EQ(-EFAULT, xioctl(fd, URD_IOC_GET_DEV_OSC_FREQ, &a));
	EXPECT_EQ(-EOPNOTSUPP, xioctl(fd, _IO('E', 23), &a));
	/* a URD fd is no TSDRV fd */
	EXPECT_EQ(-EOPNOTSUPP, _do_stream_alloc(fd, 0, &devid));
	close(fd);
}

/*
 * The chip, where a real host names it: URD's DMS_GET_CHIP_INFO
 * (halGetChipInfo), per device, named by the SQE layout it speaks.
 */
TEST_F(sq, urd_chip_info)
{
	struct npusim_config set = {
		.mask = NPUSIM_CFG_STARS, .stars = 2, .device = 1,
	};
	struct urd_ioctl_arg a = {
		.main_cmd = URD_MAIN_CMD_BASIC,
		.sub_cmd = URD_SUBCMD_GET_CHIP_INFO,
		.input_len = 4, .output_len = sizeof(struct urd_chip_info),
	};
	struct urd_chip_info ci, zero = {};
	struct npusim_config d1;
	__u32 devid;
	int fd;

	do_open_urd(&fd);
	a.input = (__u64)(uintptr_t)&devid;
	a.output = (__u64)(uintptr_t)&ci;
	devid = 0;
	memset(&ci, 0xa5, sizeof(ci));
	ASSERT_EQ(0, xioctl(fd, URD_IOC_GET_CHIP_INFO, &a));
	EXPECT_EQ(0, ci.dev_id);
	EXPECT_EQ(0, ci.reg_val);
	EXPECT_STREQ("Ascend", ci.type);
	EXPECT_STREQ(self->cfg.stars == 2 ? NPUSIM_CHIP_NAME_V2 :
		     NPUSIM_CHIP_NAME_V1, ci.name);
	EXPECT_STREQ("V1", ci.version);
	EXPECT_EQ(0, memcmp(ci.resv, zero.resv, sizeof(ci.resv)));
	/* zero after each string's NUL: the driver zeroes the struct first */
	for (size_t i = strlen(ci.name); i < sizeof(ci.name); i++)
		EXPECT_EQ(0, ci.name[i]);
	for (size_t i = strlen(ci.type); i < sizeof(ci.type); i++)
		EXPECT_EQ(0, ci.type[i]);
	/* device 1 set to STARS v2: a 950 */
	do_get_config_dev(self->fd, 1, &d1);
	do_set_config(self->fd, &set);
	devid = 1;
	ASSERT_EQ(0, xioctl(fd, URD_IOC_GET_CHIP_INFO, &a));
	EXPECT_EQ(1, ci.dev_id);
	EXPECT_STREQ(NPUSIM_CHIP_NAME_V2, ci.name);
	EXPECT_EQ(0, _config_restore(self->fd, &d1));
	ASSERT_EQ(0, xioctl(fd, URD_IOC_GET_CHIP_INFO, &a));
	EXPECT_STREQ(d1.stars == 2 ? NPUSIM_CHIP_NAME_V2 :
		     NPUSIM_CHIP_NAME_V1, ci.name);
	/* bad input: no such device, wrong lengths or sub-command, bad pointers */
	devid = 99;
	EXPECT_EQ(-EINVAL, xioctl(fd, URD_IOC_GET_CHIP_INFO, &a));
	devid = 0;
	a.output_len = sizeof(ci) - 8;
	EXPECT_EQ(-EINVAL, xioctl(fd, URD_IOC_GET_CHIP_INFO, &a));
	a.output_len = sizeof(ci);
	a.input_len = 8;
	EXPECT_EQ(-EINVAL, xioctl(fd, URD_IOC_GET_CHIP_INFO, &a));
	a.input_len = 4;
	a.sub_cmd = URD_SUBCMD_GET_DEV_OSC_FREQ;
	EXPECT_EQ(-EINVAL, xioctl(fd, URD_IOC_GET_CHIP_INFO, &a));
	a.sub_cmd = URD_SUBCMD_GET_CHIP_INFO;
	a.output = 8;
	EXPECT_EQ(-EFAULT, xioctl(fd, URD_IOC_GET_CHIP_INFO, &a));
	a.output = (__u64)(uintptr_t)&ci;
	a.input = 8;
	EXPECT_EQ(-EFAULT, xioctl(fd, URD_IOC_GET_CHIP_INFO, &a));
	EXPECT_EQ(-EINVAL, ioctl(fd, URD_IOC_GET_CHIP_INFO, NULL) ? -errno : 0);
	close(fd);
}

TEST_HARNESS_MAIN
