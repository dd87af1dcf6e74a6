// SPDX-License-Identifier: GPL-2.0
/*
 * The npu HAL (include/npusim/hal.h) on npusim: its return contracts, the
 * ioctl and mapped send paths, streams (submit, sync, registry) and the
 * simulator wrappers.
 */
#include <npusim/hal.h>
#include "npusim_test.h"

FIXTURE(hal) {
	struct npu_dev *dev;
};

FIXTURE_SETUP(hal)
{
	self->dev = npu_dev_open(NULL);
	ASSERT_NE(NULL, self->dev) TH_LOG("npu_dev_open: %s", strerror(errno));
}

FIXTURE_TEARDOWN(hal)
{
	npu_dev_close(self->dev);
}

TEST_F(hal, dev_open_errors)
{
	struct npu_dev_opts o = { .sz = sizeof(o), .path = "/nonexistent" };
	struct npu_dev_opts big[2] = { { .sz = 2 * sizeof(o) } };
	struct npusim_stats st;
	struct npu_dev *d;

	errno = 0;
	EXPECT_EQ(NULL, npu_dev_open(&o));
	EXPECT_EQ(ENOENT, errno);
	o = (struct npu_dev_opts){ .sz = sizeof(o), .device_id = 3 };
	EXPECT_EQ(NULL, npu_dev_open(&o));
	EXPECT_EQ(ENODEV, errno);
	/* Unknown trailing option bytes must be zero. */
	((char *)big)[sizeof(o) + 3] = 1;
	EXPECT_EQ(NULL, npu_dev_open(big));
	EXPECT_EQ(EINVAL, errno);
	/* An unbound device does the simulator's commands only. */
	o = (struct npu_dev_opts){ .sz = sizeof(o), .no_bind = true };
	d = npu_dev_open(&o);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(0, npu_sim_stats(d, &st));
	EXPECT_EQ(NULL, npu_sqcq_alloc(d, NULL));
	EXPECT_EQ(EBADFD, errno);
	npu_dev_close(d);
	npu_dev_close(NULL);
	EXPECT_EQ(-EINVAL, npu_dev_fd(NULL));
	EXPECT_LE(0, npu_dev_fd(self->dev));
}

TEST_F(hal, sqcq_send_recv)
{
	struct npu_sqcq_opts qo = { .sz = sizeof(qo), .sq_depth = 64 };
	struct npu_recv_opts ro = { .sz = sizeof(ro), .match = true,
				    .stream_id = 5, .task_id = 2 };
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .stream_id = 5,
				   .wr_cqe = true, .duration_ns = 1000 };
	struct trs_logic_cqe c[4];
	struct trs_sqe s[3];
	struct npu_sqcq *q;
	int i;

	q = npu_sqcq_alloc(self->dev, &qo);
	ASSERT_NE(NULL, q);
	EXPECT_EQ(64, npu_sqcq_depth(q));
	EXPECT_LE(0, npu_sqcq_sq_id(q));
	EXPECT_LE(0, npu_sqcq_cq_id(q));
	EXPECT_FALSE(npu_sqcq_is_mapped(q));
	EXPECT_EQ(-EINVAL, npu_sqcq_sq_head(q));
	for (i = 0; i < 3; i++) {
		d.task_id = i;
		npu_sqe_task(&s[i], &d);
	}
	EXPECT_EQ(0, npu_sqcq_send(q, s, 3, -1));
	EXPECT_EQ(3, npu_sqcq_send(q, s, 1, -1));
	EXPECT_EQ(-EINVAL, npu_sqcq_send(q, s, 0, 0));
	EXPECT_EQ(-EINVAL, npu_sqcq_send(q, NULL, 1, 0));

	ASSERT_EQ(1, npu_sqcq_recv(q, c, 4, 5000, &ro));
	EXPECT_EQ(2, c[0].task_id);
	ASSERT_EQ(3, _recv_n(npu_dev_fd(self->dev), npu_sqcq_cq_id(q), c, 3,
			     5000));
	EXPECT_EQ(0, c[0].task_id);
	EXPECT_EQ(1, c[1].task_id);
	EXPECT_EQ(0, c[2].task_id);
	EXPECT_EQ(4, c[2].sq_head);
	EXPECT_EQ(-ETIMEDOUT, npu_sqcq_recv(q, c, 4, 0, NULL));
	EXPECT_EQ(-EINVAL, npu_sqcq_recv(q, c, 0, 0, NULL));
	EXPECT_EQ(0, npu_sqcq_free(q));
	EXPECT_EQ(0, npu_sqcq_free(NULL));
}

TEST_F(hal, sqe_builders)
{
	struct npu_task_desc d = { .type = TRS_SQE_SDMA, .stream_id = 0x102,
				   .task_id = 0x304, .wr_cqe = true,
				   .duration_ns = 0x05060708,
				   .sim_error = 0x01020304 };
	struct trs_sqe s;
	const __u8 *b = (const __u8 *)&s;

	memset(&s, 0xff, sizeof(s));
	npu_sqe_task(&s, &d);
	EXPECT_EQ(TRS_SQE_SDMA, b[0]);
	EXPECT_EQ(0x40, b[1]);
	EXPECT_EQ(0x02, b[4]);
	EXPECT_EQ(0x01, b[5]);
	EXPECT_EQ(0x04, b[6]);
	EXPECT_EQ(0x03, b[7]);
	EXPECT_EQ(0x04, b[56]);
	EXPECT_EQ(0x08, b[60]);
	EXPECT_EQ(0, b[8]);

	npu_sqe_step_mark(&s, 7, 8, 0x1122334455667788ull, 1);
	EXPECT_EQ(TRS_SQE_PLACE_HOLDER, b[0]);
	EXPECT_EQ(0x40, b[1]);
	EXPECT_EQ(26, b[2]);
	EXPECT_EQ(0x88, b[16]);
	EXPECT_EQ(0x11, b[23]);
	EXPECT_EQ(0xff, b[24]);
	EXPECT_EQ(0xff, b[27]);
	EXPECT_EQ(0, b[28]);
	EXPECT_EQ(1, b[32]);
	EXPECT_EQ(0, b[60]);
}

/* Mapped send: no SEND ioctl, and a full ring says so. */
TEST_F(hal, mapped_sqcq)
{
	struct npu_sqcq_opts qo = { .sz = sizeof(qo), .sq_depth = 8,
				    .mapped = true };
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .stream_id = 1,
				   .duration_ns = 1000000000 };
	struct trs_logic_cqe c;
	struct trs_sqe s[8];
	struct npu_sqcq *q;
	int i;

	q = npu_sqcq_alloc(self->dev, &qo);
	ASSERT_NE(NULL, q) TH_LOG("%s", strerror(errno));
	EXPECT_TRUE(npu_sqcq_is_mapped(q));
	for (i = 0; i < 8; i++) {
		d.task_id = i;
		d.wr_cqe = i == 0;
		npu_sqe_task(&s[i], &d);
	}
	EXPECT_EQ(-EINVAL, npu_sqcq_send(q, s, 8, 0));	/* > depth - 1 */
	EXPECT_EQ(0, npu_sqcq_send(q, s, 7, 0));
	EXPECT_EQ(-EAGAIN, npu_sqcq_send(q, s, 1, 0));
	EXPECT_EQ(-ETIMEDOUT, npu_sqcq_send(q, s, 1, 10));
	ASSERT_EQ(1, npu_sqcq_recv(q, &c, 1, 5000, NULL));
	EXPECT_EQ(0, c.task_id);
	EXPECT_EQ(1, npu_sqcq_sq_head(q));
	EXPECT_EQ(7, npu_sqcq_send(q, s, 1, 0));
	EXPECT_EQ(0, npu_sqcq_free(q));
}

static void count_report(const struct trs_logic_cqe *c, void *ctx)
{
	int *n = ctx;

	(*n)++;
}

static void stream_sync_case(struct __test_metadata *_metadata,
			     struct npu_dev *dev, bool mapped)
{
	int reports = 0;
	struct npu_stream_opts so = { .sz = sizeof(so), .sq_depth = 64,
				      .mapped = mapped, .stream_id = -1,
				      .on_report = count_report,
				      .ctx = &reports };
	static struct npusim_task_truth t[300];
	struct npu_task_desc d = { .type = TRS_SQE_AICPU,
				   .duration_ns = 3000 };
	__u64 submitted, nrep, errs, next;
	struct npu_stream *st;
	struct trs_sqe s[10];
	int i, n, id;

	st = npu_stream_create(dev, &so);
	ASSERT_NE(NULL, st) TH_LOG("%s", strerror(errno));
	id = npu_stream_id(st);
	EXPECT_EQ(npu_sqcq_sq_id(npu_stream_sqcq(st)), id);
	for (i = 0; i < 10; i++)
		npu_sqe_task(&s[i], &d);
	/* 200 silent tasks, more than the SQ holds, then a sync. */
	for (i = 0; i < 20; i++)
		ASSERT_EQ(i * 10, npu_stream_submit(st, s, 10));
	ASSERT_EQ(0, npu_stream_sync(st, 10000));
	n = npu_sim_truth(dev, npu_sqcq_sq_id(npu_stream_sqcq(st)), 0, t, 300,
			  &next);
	ASSERT_LE(200, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(NPUSIM_TASK_DONE, t[i].state) TH_LOG("task %d", i);
		EXPECT_EQ(id, t[i].stream_id);
	}
	EXPECT_EQ(i, t[i - 1].task_id + 1);
	/* A sync with nothing new returns at once. */
	ASSERT_EQ(0, npu_stream_sync(st, 0));
	/* Marks ask for reports: sync waits for the last one. */
	ASSERT_LE(0, npu_stream_mark_step(st, 42, 0));
	ASSERT_LE(0, npu_stream_submit(st, s, 10));
	ASSERT_LE(0, npu_stream_mark_step(st, 42, 1));
	ASSERT_EQ(0, npu_stream_sync(st, 10000));
	ASSERT_EQ(0, npu_stream_stats(st, &submitted, &nrep, &errs));
	EXPECT_EQ(reports, nrep);
	EXPECT_EQ(0, errs);
	EXPECT_EQ(n + 12, submitted);
	ASSERT_EQ(0, npu_sim_truth(dev, npu_sqcq_sq_id(npu_stream_sqcq(st)),
				   submitted, t, 1, &next));
	EXPECT_EQ(submitted, next);
	npu_stream_destroy(st);
}

TEST_F(hal, stream_sync)
{
	stream_sync_case(_metadata, self->dev, false);
}

TEST_F(hal, stream_sync_mapped)
{
	stream_sync_case(_metadata, self->dev, true);
}

/* Many marks and no sync: the stream drains its CQ instead of stalling. */
TEST_F(hal, stream_marks_without_sync)
{
	struct npu_stream_opts so = { .sz = sizeof(so), .sq_depth = 32,
				      .cq_depth = 16, .stream_id = 900 };
	struct npu_stream *st;
	__u64 nrep;
	int i;

	st = npu_stream_create(self->dev, &so);
	ASSERT_NE(NULL, st);
	EXPECT_EQ(900, npu_stream_id(st));
	for (i = 0; i < 200; i++)
		ASSERT_LE(0, npu_stream_mark_step(st, i, i & 1));
	ASSERT_EQ(0, npu_stream_sync(st, 10000));
	ASSERT_EQ(0, npu_stream_stats(st, NULL, &nrep, NULL));
	EXPECT_EQ(200, nrep);
	npu_stream_destroy(st);
}

TEST_F(hal, stream_registry)
{
	struct npu_stream *a, *b;
	int local;
	void *heap = malloc(64);

	a = npu_stream_create(self->dev, NULL);
	b = npu_stream_create(self->dev, NULL);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(1, npu_stream_is_valid(a));
	EXPECT_EQ(1, npu_stream_is_valid(b));
	EXPECT_EQ(0, npu_stream_is_valid(NULL));
	EXPECT_EQ(0, npu_stream_is_valid(&local));
	EXPECT_EQ(0, npu_stream_is_valid(heap));
	EXPECT_EQ(0, npu_stream_is_valid((char *)a + 1));
	/* Never dereferenced: an unmapped address is fine. */
	EXPECT_EQ(0, npu_stream_is_valid((void *)8));
	EXPECT_EQ(-EINVAL, npu_stream_id(heap));
	EXPECT_EQ(-EINVAL, npu_stream_submit(heap, NULL, 1));
	EXPECT_NE(npu_stream_id(a), npu_stream_id(b));
	npu_stream_destroy(a);
	EXPECT_EQ(0, npu_stream_is_valid(a));
	EXPECT_EQ(1, npu_stream_is_valid(b));
	npu_stream_destroy(b);
	EXPECT_EQ(0, npu_stream_is_valid(b));
	npu_stream_destroy(NULL);
	free(heap);
}

TEST_F(hal, sim_wrappers)
{
	struct npusim_config c, c2;
	struct npusim_clock k;
	struct npusim_stats st;

	ASSERT_EQ(0, npu_sim_get_config(self->dev, &c));
	c2 = c;
	c2.mask = 1u << 30;
	EXPECT_EQ(-EINVAL, npu_sim_set_config(self->dev, &c2));
	c2.mask = NPUSIM_CFG_DEFAULT_DURATION;
	EXPECT_EQ(0, npu_sim_set_config(self->dev, &c2));
	ASSERT_EQ(0, npu_sim_clock(self->dev, &k));
	EXPECT_EQ(c.counter_freq_hz, k.counter_freq_hz);
	EXPECT_EQ(ns_to_ticks(&k, k.host_ns), k.ticks);
	ASSERT_EQ(0, npu_sim_stats(self->dev, &st));
	EXPECT_LE(1, st.fds);
	EXPECT_EQ(-EINVAL, npu_sim_stats(NULL, &st));
	EXPECT_EQ(-EINVAL, npu_sim_truth(self->dev, 999, 0, NULL, 0, NULL));
}

TEST_HARNESS_MAIN
