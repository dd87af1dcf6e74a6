// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: what differs between chips and what binds reports to streams:
 * STARS v2's SQE header, pre-STARS REUSE_CQ, logic CQs allocated and freed
 * while the stream runs, and streams that are not the SQ's fd's.
 */
#include "npusim_test.h"

FIXTURE(chip) {
	int ctl;			/* unbound: config of device 1 */
	struct npusim_config cfg;	/* device 1's, restored */
};

FIXTURE_SETUP(chip)
{
	do_open(&self->ctl, false);
	do_get_config_dev(self->ctl, 1, &self->cfg);
}

FIXTURE_TEARDOWN(chip)
{
	EXPECT_EQ(0, _wait_idle(self->ctl, WAIT_MS));
	EXPECT_EQ(0, _config_restore(self->ctl, &self->cfg));
	close(self->ctl);
}

static void set_dev1(struct __test_metadata *_metadata, int ctl, __u32 mask,
		     __u32 stars, __u32 pair)
{
	struct npusim_config c = {
		.mask = mask, .device = 1, .stars = stars, .sqcq_pair = pair,
	};

	do_set_config(ctl, &c);
}

/*
 * STARS v2: wr_cqe is 0x08 (0x40 means nothing), the task id is 32 bits
 * at @4, the stream is the SQ's (there is none in the SQE), a
 * place-holder's task type is at @12.
 */
TEST_F(chip, stars_v2)
{
	struct npusim_task_truth t[4];
	struct trs_logic_cqe c[4];
	struct trs_sqe_v2 s[4];
	struct npq q;
	int fd;

	set_dev1(_metadata, self->ctl, NPUSIM_CFG_STARS, 2, 0);
	do_open_dev(&fd, 1);
	npq_create(&q, fd, 0, 64);
	sqe_task_v2(&s[0], TRS_SQE_FFTS, 0x12345, true, 1000, 0);
	sqe_task_v2(&s[1], TRS_SQE_FFTS, 0x12346, false, 1000, 0);
	s[1].flags = TRS_SQE_F_WR_CQE;	/* v1's bit: no report on v2 */
	sqe_task_v2(&s[2], TRS_SQE_PLACE_HOLDER, 7, true, 0, 0);
	s[2].place_holder.task_type = TRS_TASK_PROFILER_TRACE_EX;
	s[2].place_holder.profiler_trace_id = 42;
	sqe_task_v2(&s[3], TRS_SQE_AICPU, 8, false, 1000, 0x31);
	npq_send(&q, s, 4, NULL);
	npq_recv_n(&q, c, 3);
	EXPECT_EQ(0x2345, c[0].task_id);
	EXPECT_EQ(q.stream, c[0].stream_id);
	EXPECT_EQ(1, c[0].sq_head);
	EXPECT_EQ(7, c[1].task_id);
	EXPECT_EQ(TRS_SQE_PLACE_HOLDER, c[1].sqe_type);
	EXPECT_NE(0, c[1].timestamp);
	EXPECT_EQ(8, c[2].task_id);
	EXPECT_EQ(0x31, c[2].error_code);
	ASSERT_EQ(4, _do_truth_ts(fd, 0, q.sq, 0, t, 4, NULL));
	EXPECT_EQ(0x12345, t[0].task_id);
	EXPECT_EQ(q.stream, t[0].stream_id);
	EXPECT_EQ(NPUSIM_REPORT_NONE, t[1].report);
	EXPECT_EQ(t[2].start_ticks, c[1].timestamp);
	/* no match reports on v2: bit 15 of nothing */
	EXPECT_EQ(0, c[0].flags & TRS_CQE_F_MATCH);
	close(fd);
}

/*
 * Pre-STARS (sqcq_pair 0): the runtime's streams after the first share
 * the first one's CQ with REUSE_CQ. Reports of streams without a logic CQ
 * land there as hardware CQEs, told apart by sq_id; a stream with a logic
 * CQ gets its own there. The shared CQ goes last.
 */
TEST_F(chip, reuse_cq_pre_stars)
{
	__u32 st[3], sq[3], cq[3] = { 0 }, lcq, k;
	struct trs_hw_cqe h[4];
	struct trs_logic_cqe c;
	struct trs_sqe s;
	int fd, other;

	set_dev1(_metadata, self->ctl, NPUSIM_CFG_SQCQ_PAIR, 0, 0);
	do_open_dev(&fd, 1);
	for (k = 0; k < 3; k++) {
		do_stream_alloc(fd, 0, &st[k]);
		cq[k] = cq[0];
		ASSERT_EQ(0, _do_sq_alloc(fd, 0, st[k], 32,
					  k ? TSDRV_FLAG_REUSE_CQ : 0, &sq[k],
					  &cq[k], NULL));
		EXPECT_EQ(cq[0], cq[k]);
	}
	EXPECT_NE(sq[0], sq[1]);
	EXPECT_NE(sq[1], sq[2]);
	do_lcq_alloc(fd, 0, st[2], 16, &lcq);
	for (k = 0; k < 3; k++) {
		sqe_task(&s, TRS_SQE_FFTS, st[k], 100 + k, true, 1000, 0);
		ASSERT_EQ(0, _do_send_ts(fd, 0, sq[k], &s, 1, -1, NULL));
		wait_head(fd, 0, sq[k], 1);
	}
	ASSERT_EQ(2, _do_recv_type(fd, TRS_SQCQ_TYPE_NORMAL, 0, cq[0], h, 4, 0));
	for (k = 0; k < 2; k++) {
		EXPECT_EQ(100 + k, h[k].task_id);
		EXPECT_EQ(sq[k], (h[k].bits & TRS_HW_CQE_SQ_ID_MASK) >>
				 TRS_HW_CQE_SQ_ID_SHIFT);
	}
	ASSERT_EQ(1, _do_recv_type(fd, TRS_SQCQ_TYPE_LOGIC, 0, lcq, &c, 1, 0));
	EXPECT_EQ(102, c.task_id);
	EXPECT_EQ(sq[2], c.sq_id);

	/* another fd's CQ cannot be shared */
	do_open_dev(&other, 1);
	cq[1] = cq[0];
	EXPECT_EQ(-EINVAL, _do_sq_alloc(other, 0, TRS_STREAM_ID_NONE, 32,
					TSDRV_FLAG_REUSE_CQ, &sq[1], &cq[1],
					NULL));
	close(other);
	/* the shared CQ goes with the last SQ using it */
	EXPECT_EQ(-EBUSY, _do_sq_free(fd, 0, sq[0], cq[0]));
	ASSERT_EQ(0, _do_free_type(fd, 0, 0, sq[1], cq[0],
				   TSDRV_FLAG_REUSE_CQ));
	ASSERT_EQ(0, _do_free_type(fd, 0, 0, sq[2], cq[0],
				   TSDRV_FLAG_REUSE_CQ));
	ASSERT_EQ(0, _do_sq_free(fd, 0, sq[0], cq[0]));
	EXPECT_EQ(-EINVAL, _do_recv_type(fd, TRS_SQCQ_TYPE_NORMAL, 0, cq[0], h,
					 1, 0));
	close(fd);
}

/*
 * A logic CQ allocated and freed while its stream runs: before it, and
 * after it is freed, the reports stay in the SQ's CQ; while it exists they
 * go to it. Every report lands in exactly one place, as the truth says.
 */
TEST(logic_cq_alloc_free_interleaved)
{
	struct npusim_task_truth t[40];
	struct npusim_stats st0, st1;
	struct trs_logic_cqe c[10];
	struct trs_hw_cqe h[20];
	struct trs_sqe s[10];
	struct npq q;
	int fd, b, i, hw = 0, lg = 0;

	do_open(&fd, true);
	do_stats(fd, &st0);
	q.fd = fd;
	q.ts = 0;
	q.cq = 0;
	q.lcq = ~0u;
	do_stream_alloc(fd, 0, &q.stream);
	ASSERT_EQ(0, _do_sq_alloc(fd, 0, q.stream, 64, 0, &q.sq, &q.cq, NULL));
	for (b = 0; b < 4; b++) {
		if (b == 1 || b == 3)
			do_lcq_alloc(fd, 0, q.stream, 16, &q.lcq);
		for (i = 0; i < 10; i++)
			sqe_task(&s[i], TRS_SQE_FFTS, q.stream, 10 * b + i,
				 i % 2, 1000, 0);
		do_send(fd, q.sq, s, 10, NULL);
		wait_head(fd, 0, q.sq, 10 * (b + 1));
		if (b == 1 || b == 3) {
			ASSERT_EQ(5, _recv_n_type(fd, TRS_SQCQ_TYPE_LOGIC, 0,
						  q.lcq, c, 5, WAIT_MS));
			for (i = 0; i < 5; i++)
				EXPECT_EQ(10 * b + 2 * i + 1, c[i].task_id);
			lg += 5;
			do_lcq_free(fd, 0, q.lcq);
		}
	}
	ASSERT_EQ(10, _do_recv_type(fd, TRS_SQCQ_TYPE_NORMAL, 0, q.cq, h, 20,
				    0));
	for (i = 0; i < 10; i++)
		EXPECT_EQ((i / 5 ? 20 : 0) + 2 * (i % 5) + 1, h[i].task_id);
	hw = 10;
	do_truth(fd, q.sq, 0, t, 40);
	for (i = 0; i < 40; i++)
		EXPECT_EQ(i % 2 == 0 ? NPUSIM_REPORT_NONE :
			  (i / 10) % 2 ? NPUSIM_REPORT_LOGIC_CQ :
					 NPUSIM_REPORT_HW_CQ, t[i].report)
			TH_LOG("task %d", i);
	do_stats(fd, &st1);
	EXPECT_EQ(st0.reports + hw + lg, st1.reports);
	EXPECT_EQ(st0.report_drops, st1.report_drops);
	/* the same logic CQ id came back: lowest free */
	EXPECT_EQ(0, q.lcq);
	close(fd);
}

/*
 * An SQE naming a stream of another fd reports to its own SQ's CQ: a
 * process cannot push reports into another's logic CQ, even with the
 * same ids on the same device.
 */
TEST(foreign_stream_in_sqe)
{
	struct trs_logic_cqe c;
	struct trs_hw_cqe h;
	struct npq a, b;
	struct trs_sqe s;
	int fa, fb;

	do_open(&fa, true);
	do_open(&fb, true);
	npq_create(&b, fb, 0, 16);
	a.fd = fa;
	a.ts = 0;
	a.cq = 0;
	ASSERT_EQ(0, _do_sq_alloc(fa, 0, TRS_STREAM_ID_NONE, 16, 0, &a.sq,
				  &a.cq, NULL));
	sqe_task(&s, TRS_SQE_FFTS, b.stream, 5, true, 1000, 0);
	ASSERT_EQ(0, _do_send(fa, a.sq, &s, 1, -1, NULL));
	ASSERT_EQ(1, _recv_n_type(fa, TRS_SQCQ_TYPE_NORMAL, 0, a.cq, &h, 1,
				  WAIT_MS));
	EXPECT_EQ(5, h.task_id);
	EXPECT_EQ(0, _do_recv(fb, b.lcq, &c, 1, 0));
	close(fa);
	close(fb);
}

TEST_HARNESS_MAIN
