// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: RECV's match mode (res[0] = 1, the runtime's "version 1"), as the
 * driver's match copy. Reports of match tasks (STARS v1: SQE stream id bit
 * 15) are held for the RECV that names their stream and task; plain
 * reports behind them overtake them, so reports come back out of order and
 * sq_head steps back. Deterministic: the order follows from what is queued
 * and what each RECV names.
 */
#include "npusim_test.h"

#define M(stream)	((stream) | TRS_SQE_STREAM_MATCH)

FIXTURE(match) {
	int fd;
	struct npq q;
};

FIXTURE_SETUP(match)
{
	do_open(&self->fd, true);
	npq_create(&self->q, self->fd, 0, 64);
}

FIXTURE_TEARDOWN(match)
{
	close(self->fd);
}

/* RECV of @n at most, match mode, naming (@stream, @task). */
static int recv_match(struct npq *q, struct trs_logic_cqe *c, __u32 n,
		      __u32 stream, __u32 task, int timeout)
{
	struct trs_report_recv_info ri;
	int err;

	recv_info_init(&ri, TRS_SQCQ_TYPE_LOGIC, q->ts, q->lcq, c, n, timeout);
	ri.res[0] = TRS_RECV_MATCH;
	ri.stream_id = stream;
	ri.task_id = task;
	err = _do_recv_info(q->fd, &ri);
	return err ? err : (int)ri.report_cqe_num;
}

/*
 * Queued: p0 M1 p2 p3 M4 (p: plain, M: match). RECVs naming nothing, then
 * M4, then M1, get: [p0], [p2 p3], [M4], [M1]: p2, p3 and M4 overtake M1,
 * and sq_head goes 1, 3, 4, 5, then back to 2.
 */
TEST_F(match, out_of_order)
{
	const __u32 st = self->q.stream;
	struct trs_logic_cqe c[8];
	struct trs_sqe s[5];
	int i;

	for (i = 0; i < 5; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, i == 1 || i == 4 ? M(st) : st, i,
			 true, 1000, 0);
	do_send(self->fd, self->q.sq, s, 5, NULL);
	wait_head(self->fd, 0, self->q.sq, 5);

	ASSERT_EQ(1, recv_match(&self->q, c, 8, st, 99, 0));
	EXPECT_EQ(0, c[0].task_id);
	EXPECT_EQ(1, c[0].sq_head);
	EXPECT_EQ(0, c[0].flags & TRS_CQE_F_MATCH);
	ASSERT_EQ(2, recv_match(&self->q, c, 8, st, 99, 0));
	EXPECT_EQ(2, c[0].task_id);
	EXPECT_EQ(3, c[0].sq_head);
	EXPECT_EQ(3, c[1].task_id);
	EXPECT_EQ(4, c[1].sq_head);
	/* only match reports left, none named: nothing, at once */
	EXPECT_EQ(0, recv_match(&self->q, c, 8, st, 99, 0));
	ASSERT_EQ(1, recv_match(&self->q, c, 8, st, 4, 0));
	EXPECT_EQ(4, c[0].task_id);
	EXPECT_EQ(5, c[0].sq_head);
	ASSERT_EQ(1, recv_match(&self->q, c, 8, st, 1, 0));
	EXPECT_EQ(1, c[0].task_id);
	EXPECT_EQ(2, c[0].sq_head);	/* behind the previous report's */
	/* a match report: flag, stream id without bit 15, host seconds */
	EXPECT_EQ(st, c[0].stream_id);
	EXPECT_EQ(TRS_CQE_F_MATCH, c[0].flags & TRS_CQE_F_MATCH);
	EXPECT_NE(0, c[0].enque_timestamp);
	EXPECT_GE(now_ns() / 1000000000ull, c[0].enque_timestamp);
	EXPECT_EQ(0, recv_match(&self->q, c, 8, st, 1, 0));
}

/* The named match report ends the run, included: p0 p1 M2 p3 -> [p0 p1 M2]. */
TEST_F(match, named_report_ends_run)
{
	const __u32 st = self->q.stream;
	struct trs_logic_cqe c[8];
	struct trs_sqe s[4];
	int i;

	for (i = 0; i < 4; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, i == 2 ? M(st) : st, i, true,
			 1000, 0);
	do_send(self->fd, self->q.sq, s, 4, NULL);
	wait_head(self->fd, 0, self->q.sq, 4);
	ASSERT_EQ(3, recv_match(&self->q, c, 8, st, 2, 0));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(i, c[i].task_id);
	/* cqe_num ends it too */
	ASSERT_EQ(1, recv_match(&self->q, c, 1, st, 2, 0));
	EXPECT_EQ(3, c[0].task_id);
}

/* Without match mode, RECV takes everything in order, match or not. */
TEST_F(match, in_order_without_match_mode)
{
	const __u32 st = self->q.stream;
	struct trs_logic_cqe c[8];
	struct trs_sqe s[4];
	int i;

	for (i = 0; i < 4; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, i % 2 ? M(st) : st, i, true,
			 1000, 0);
	do_send(self->fd, self->q.sq, s, 4, NULL);
	do_recv_n(self->fd, self->q.lcq, c, 4);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(i, c[i].task_id);
		EXPECT_EQ(i % 2 ? TRS_CQE_F_MATCH : 0,
			  c[i].flags & TRS_CQE_F_MATCH);
		EXPECT_EQ(st, c[i].stream_id);
	}
}

/*
 * A match RECV never takes a report it does not name: it waits for its
 * own, and the others stay for their RECVs.
 */
TEST_F(match, waits_for_named)
{
	const __u32 st = self->q.stream;
	struct trs_logic_cqe c[8];
	struct trs_sqe s[3];

	sqe_task(&s[0], TRS_SQE_FFTS, M(st), 10, true, 1000, 0);
	do_send(self->fd, self->q.sq, s, 1, NULL);
	wait_head(self->fd, 0, self->q.sq, 1);
	EXPECT_EQ(-ETIMEDOUT, recv_match(&self->q, c, 8, st, 11, 50));
	/* the report it waits for comes while it waits */
	sqe_task(&s[1], TRS_SQE_FFTS, M(st), 11, true, 30000000, 0);
	do_send(self->fd, self->q.sq, &s[1], 1, NULL);
	ASSERT_EQ(1, recv_match(&self->q, c, 8, st, 11, WAIT_MS));
	EXPECT_EQ(11, c[0].task_id);
	ASSERT_EQ(1, recv_match(&self->q, c, 8, st, 10, 0));
	EXPECT_EQ(10, c[0].task_id);
}

TEST_HARNESS_MAIN
