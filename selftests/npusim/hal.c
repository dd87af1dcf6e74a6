// SPDX-License-Identifier: GPL-2.0
/*
 * The npu HAL (include/npusim/hal.h) on npusim: streams built and driven as
 * CANN's runtime does it (stream id, SQ-CQ pair, logic CQ, silent kernels
 * and marks, recycle tasks, SQ head synchronize), events, mapped SQs, two
 * devices, and the raw calls. Each behaviour is checked against npusim's
 * ground truth (NPUSIM_IOC_TRUTH: what ran, whether it wrote a report,
 * when), not against the HAL's own bookkeeping.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <npusim/hal.h>
#include "kselftest_harness.h"
#include "ksft_filter.h"

#define MS	1000000u

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

/* The truth of every task of @s so far (at most @n). */
static int stream_truth(struct npu_stream *s, struct npusim_task_truth *t,
			unsigned int n)
{
	return npu_sim_truth(npu_stream_dev(s),
			     npu_sqcq_sq_id(npu_stream_sqcq(s)), 0, t, n, NULL);
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
	o = (struct npu_dev_opts){ .sz = sizeof(o), .device_id = 99 };
	EXPECT_EQ(NULL, npu_dev_open(&o));
	EXPECT_NE(0, errno);
	o = (struct npu_dev_opts){ .sz = sizeof(o), .chip = 7 };
	EXPECT_EQ(NULL, npu_dev_open(&o));
	EXPECT_EQ(EINVAL, errno);
	/* Unknown trailing option bytes must be zero. */
	((char *)big)[sizeof(o) + 3] = 1;
	EXPECT_EQ(NULL, npu_dev_open(big));
	EXPECT_EQ(EINVAL, errno);
	/* An unbound device does the simulator's commands only. */
	o = (struct npu_dev_opts){ .sz = sizeof(o), .no_bind = true };
	d = npu_dev_open(&o);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(0, npu_sim_stats(d, &st));
	EXPECT_EQ(NULL, npu_stream_create(d, NULL));
	npu_dev_close(d);
	npu_dev_close(NULL);
	EXPECT_EQ(-EINVAL, npu_dev_fd(NULL));
	EXPECT_LE(0, npu_dev_fd(self->dev));
	EXPECT_EQ(0, npu_dev_id(self->dev));
	EXPECT_EQ(0, npu_dev_ts_id(self->dev));
	EXPECT_LE(1, npu_dev_stars_version(self->dev));
}

/* The counter frequency, read as a real host reads it (URD), is npusim's. */
TEST_F(hal, counter_freq)
{
	struct npusim_clock k;
	__u64 hz = 0;

	ASSERT_EQ(0, npu_dev_counter_freq(self->dev, &hz));
	ASSERT_EQ(0, npu_sim_clock(self->dev, &k));
	EXPECT_EQ(k.counter_freq_hz, hz);
	EXPECT_EQ(-EINVAL, npu_dev_counter_freq(NULL, &hz));
}

/*
 * A stream as CANN builds it: its own stream id, an SQ bound to it and a
 * logic CQ; kernels and step marks write no report; a recycle task with
 * wr_cqe every NPU_RECYCLE_EVERY silent tasks; sync by SQ head.
 */
TEST_F(hal, stream_is_cann_shaped)
{
	static struct npusim_task_truth t[400];
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .duration_ns = 2000 };
	struct npu_stream *a, *b;
	__u64 submitted, reports, errors;
	struct trs_sqe s[10];
	int i, n, recycles = 0, marks = 0, id;

	a = npu_stream_create(self->dev, NULL);
	ASSERT_NE(NULL, a) TH_LOG("%s", strerror(errno));
	b = npu_stream_create(self->dev, NULL);
	ASSERT_NE(NULL, b);
	id = npu_stream_id(a);
	EXPECT_LE(0, id);
	EXPECT_NE(id, npu_stream_id(b));
	EXPECT_NE(npu_stream_logic_cq_id(a), npu_stream_logic_cq_id(b));
	if (npu_dev_chip(self->dev) == NPU_CHIP_STARS) {
		EXPECT_NE(npu_sqcq_cq_id(npu_stream_sqcq(a)),
			  npu_sqcq_cq_id(npu_stream_sqcq(b)));
	} else {
		EXPECT_EQ(npu_sqcq_cq_id(npu_stream_sqcq(a)),
			  npu_sqcq_cq_id(npu_stream_sqcq(b)));
	}

	for (i = 0; i < 10; i++)
		npu_sqe_task(&s[i], &d);
	ASSERT_LE(0, npu_stream_mark_step(a, 1, 0));
	for (i = 0; i < 30; i++)
		ASSERT_LE(0, npu_stream_submit(a, s, 10));
	ASSERT_LE(0, npu_stream_mark_step(a, 1, 1));
	ASSERT_EQ(0, npu_stream_sync(a, 10000));
	EXPECT_EQ(1, npu_stream_query(a));

	n = stream_truth(a, t, 400);
	ASSERT_EQ(302 + 300 / NPU_RECYCLE_EVERY, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(NPUSIM_TASK_DONE, t[i].state) TH_LOG("task %d", i);
		EXPECT_EQ(id, t[i].stream_id);
		EXPECT_EQ(i & 0xffff, t[i].task_id);
		if (t[i].sqe_type == TRS_SQE_PLACE_HOLDER &&
		    t[i].report == NPUSIM_REPORT_LOGIC_CQ) {
			recycles++;
			/* After NPU_RECYCLE_EVERY silent tasks each. */
			EXPECT_EQ(recycles * (NPU_RECYCLE_EVERY + 1) - 1, i);
		} else {
			EXPECT_EQ(NPUSIM_REPORT_NONE, t[i].report)
				TH_LOG("task %d", i);
			marks += t[i].sqe_type == TRS_SQE_PLACE_HOLDER;
		}
	}
	EXPECT_EQ(300 / NPU_RECYCLE_EVERY, recycles);
	EXPECT_EQ(2, marks);
	ASSERT_EQ(0, npu_stream_stats(a, &submitted, &reports, &errors));
	EXPECT_EQ(n, submitted);
	EXPECT_EQ(recycles, reports);
	EXPECT_EQ(0, errors);
	/* Nothing was submitted to b. */
	EXPECT_EQ(0, stream_truth(b, t, 1));
	EXPECT_EQ(1, npu_stream_query(b));
	EXPECT_EQ(0, npu_stream_sync(b, 0));
	npu_stream_destroy(a);
	npu_stream_destroy(b);
}

/* A DVPP stream asks for a report on every SQE, step marks included. */
TEST_F(hal, dvpp_stream_reports_all)
{
	struct npu_stream_opts so = { .sz = sizeof(so), .dvpp = true };
	static struct npusim_task_truth t[64];
	struct npu_task_desc d = { .type = TRS_SQE_AICPU };
	struct trs_sqe s[5];
	struct npu_stream *st;
	__u64 reports;
	int i, n;

	st = npu_stream_create(self->dev, &so);
	ASSERT_NE(NULL, st);
	for (i = 0; i < 5; i++)
		npu_sqe_task(&s[i], &d);
	ASSERT_LE(0, npu_stream_mark_step(st, 3, 0));
	ASSERT_LE(0, npu_stream_submit(st, s, 5));
	ASSERT_LE(0, npu_stream_mark_step(st, 3, 1));
	ASSERT_EQ(0, npu_stream_sync(st, 10000));
	n = stream_truth(st, t, 64);
	ASSERT_EQ(7, n);
	for (i = 0; i < n; i++)
		EXPECT_EQ(NPUSIM_REPORT_LOGIC_CQ, t[i].report);
	ASSERT_EQ(0, npu_stream_stats(st, NULL, &reports, NULL));
	EXPECT_EQ(7, reports);
	npu_stream_destroy(st);
}

/* A failed task reports even without wr_cqe; sync still completes. */
TEST_F(hal, failed_task_reports)
{
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .sim_error = 0x77 };
	struct npu_stream *st;
	struct trs_sqe s;
	__u64 errors;

	st = npu_stream_create(self->dev, NULL);
	ASSERT_NE(NULL, st);
	npu_sqe_task(&s, &d);
	ASSERT_EQ(0, npu_stream_submit(st, &s, 1));
	ASSERT_EQ(0, npu_stream_sync(st, 10000));
	ASSERT_EQ(0, npu_stream_stats(st, NULL, NULL, &errors));
	EXPECT_EQ(1, errors);
	npu_stream_destroy(st);
}

/*
 * A timeline event's timestamp is the device counter when the stream
 * reached it: npusim's truth says when its task started.
 */
TEST_F(hal, timeline_event_matches_truth)
{
	/* Long enough that the checks of "not yet" run before it ends. */
	struct npu_task_desc d = { .type = TRS_SQE_FFTS,
				   .duration_ns = 100 * MS };
	static struct npusim_task_truth t[16];
	struct npu_event *ev, *sync_ev;
	struct npu_stream *st;
	struct trs_sqe s[3];
	__u64 ticks;
	int i, n;

	st = npu_stream_create(self->dev, NULL);
	ASSERT_NE(NULL, st);
	ev = npu_event_create(self->dev, NPU_EVENT_TIME_LINE);
	ASSERT_NE(NULL, ev);
	sync_ev = npu_event_create(self->dev, NPU_EVENT_SYNC);
	ASSERT_NE(NULL, sync_ev);
	EXPECT_EQ(-ENODATA, npu_event_query(ev));
	EXPECT_EQ(-ENODATA, npu_event_timestamp(ev, &ticks));
	EXPECT_EQ(0, npu_event_sync(ev, 0));

	for (i = 0; i < 3; i++)
		npu_sqe_task(&s[i], &d);
	ASSERT_LE(0, npu_stream_submit(st, s, 3));
	ASSERT_EQ(0, npu_event_record(ev, st));
	ASSERT_EQ(0, npu_event_record(sync_ev, st));
	EXPECT_EQ(0, npu_event_query(ev));
	EXPECT_EQ(-ETIMEDOUT, npu_event_sync(ev, 1));
	ASSERT_EQ(0, npu_event_sync(ev, 10000));
	EXPECT_EQ(1, npu_event_query(ev));
	ASSERT_EQ(0, npu_event_timestamp(ev, &ticks));
	ASSERT_EQ(0, npu_event_sync(sync_ev, 10000));
	EXPECT_EQ(1, npu_event_query(sync_ev));
	EXPECT_EQ(-ENODATA, npu_event_timestamp(sync_ev, &ticks + 0));

	n = stream_truth(st, t, 16);
	ASSERT_EQ(5, n);
	EXPECT_EQ(TRS_SQE_PLACE_HOLDER, t[3].sqe_type);
	EXPECT_EQ(NPUSIM_REPORT_LOGIC_CQ, t[3].report);
	EXPECT_EQ(t[3].start_ticks, ticks);
	EXPECT_EQ(t[2].end_ticks, ticks);
	/* A SYNC event is an EVENT_RECORD SQE and asks for no report. */
	EXPECT_EQ(TRS_SQE_EVENT_RECORD, t[4].sqe_type);
	EXPECT_EQ(NPUSIM_REPORT_NONE, t[4].report);

	/* Re-recorded: pending again, then the new time. */
	ASSERT_LE(0, npu_stream_submit(st, s, 1));
	ASSERT_EQ(0, npu_event_record(ev, st));
	EXPECT_EQ(-ENODATA, npu_event_timestamp(ev, &ticks));
	ASSERT_EQ(0, npu_event_sync(ev, 10000));
	ASSERT_EQ(0, npu_event_timestamp(ev, &ticks));
	n = stream_truth(st, t, 16);
	ASSERT_EQ(7, n);
	EXPECT_EQ(t[6].start_ticks, ticks);

	/*
	 * Destroying a busy stream waits for its tasks, as CANN's TearDown
	 * (a recycle task, then SQ head queries): the record completes.
	 */
	ASSERT_LE(0, npu_stream_submit(st, s, 3));
	ASSERT_EQ(0, npu_event_record(ev, st));
	npu_stream_destroy(st);
	EXPECT_EQ(1, npu_event_query(ev));
	EXPECT_EQ(0, npu_event_sync(ev, -1));
	EXPECT_EQ(0, npu_event_timestamp(ev, &ticks));
	npu_event_destroy(ev);
	npu_event_destroy(sync_ev);
	npu_event_destroy(NULL);
	EXPECT_EQ(-EINVAL, npu_event_record(NULL, NULL));
	EXPECT_EQ(-EINVAL, npu_event_query(NULL));
}

/* Two devices behind one node: ids collide, streams do not mix. */
TEST_F(hal, two_devices)
{
	struct npu_dev_opts o = { .sz = sizeof(o), .device_id = 1 };
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .duration_ns = 1000 };
	static struct npusim_task_truth t[8];
	struct npu_stream *s0, *s1;
	struct npu_event *e1;
	struct npu_dev *d1;
	struct trs_sqe s[4];
	__u64 ticks;
	int i;

	d1 = npu_dev_open(&o);
	ASSERT_NE(NULL, d1) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(1, npu_dev_id(d1));
	s0 = npu_stream_create(self->dev, NULL);
	s1 = npu_stream_create(d1, NULL);
	ASSERT_NE(NULL, s0);
	ASSERT_NE(NULL, s1);
	/* Lowest free per (device, TS): the same numbers on both. */
	EXPECT_EQ(npu_stream_id(s0), npu_stream_id(s1));
	EXPECT_EQ(npu_sqcq_sq_id(npu_stream_sqcq(s0)),
		  npu_sqcq_sq_id(npu_stream_sqcq(s1)));
	e1 = npu_event_create(d1, NPU_EVENT_TIME_LINE);
	ASSERT_NE(NULL, e1);
	EXPECT_EQ(-EINVAL, npu_event_record(e1, s0));
	for (i = 0; i < 4; i++)
		npu_sqe_task(&s[i], &d);
	ASSERT_LE(0, npu_stream_submit(s0, s, 4));
	ASSERT_LE(0, npu_stream_submit(s1, s, 2));
	ASSERT_EQ(0, npu_event_record(e1, s1));
	ASSERT_EQ(0, npu_stream_sync(s0, 10000));
	ASSERT_EQ(0, npu_stream_sync(s1, 10000));
	ASSERT_EQ(0, npu_event_sync(e1, 10000));
	ASSERT_EQ(0, npu_event_timestamp(e1, &ticks));
	EXPECT_EQ(4, stream_truth(s0, t, 8));
	ASSERT_EQ(3, stream_truth(s1, t, 8));
	EXPECT_EQ(t[2].start_ticks, ticks);
	npu_event_destroy(e1);
	npu_stream_destroy(s0);
	npu_stream_destroy(s1);
	npu_dev_close(d1);
}

/* Pre-STARS mode on a STARS device: REUSE_CQ is refused, as STARS does. */
TEST_F(hal, pre_stars_reuse_cq)
{
	struct npu_dev_opts o = { .sz = sizeof(o), .chip = NPU_CHIP_PRE_STARS };
	struct npu_stream *a, *b, *c;
	struct npu_dev *d;

	d = npu_dev_open(&o);
	ASSERT_NE(NULL, d);
	a = npu_stream_create(d, NULL);
	ASSERT_NE(NULL, a);
	b = npu_stream_create(d, NULL);
	if (npu_dev_chip(self->dev) == NPU_CHIP_STARS) {
		/*
		 * npusim sqcq_pair=1 (the default): REUSE_CQ is EINVAL, as on
		 * STARS; that is what this checks. A pre-STARS device's
		 * sharing is npusim_devices' reuse_cq_pre_stars.
		 */
		EXPECT_EQ(NULL, b);
		EXPECT_EQ(EINVAL, errno);
		npu_stream_destroy(a);
		npu_dev_close(d);
		return;
	}
	ASSERT_NE(NULL, b);
	c = npu_stream_create(d, NULL);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(npu_sqcq_cq_id(npu_stream_sqcq(a)),
		  npu_sqcq_cq_id(npu_stream_sqcq(b)));
	EXPECT_EQ(npu_sqcq_cq_id(npu_stream_sqcq(a)),
		  npu_sqcq_cq_id(npu_stream_sqcq(c)));
	/* The first stream goes first: the CQ stays for the others. */
	npu_stream_destroy(a);
	ASSERT_LE(0, npu_stream_mark_step(b, 1, 0));
	ASSERT_EQ(0, npu_stream_sync(b, 10000));
	npu_stream_destroy(b);
	npu_stream_destroy(c);
	npu_dev_close(d);
}

/*
 * Name the mode npusim grants a mapping request: config.uio_mode, with
 * sq_mode CONFIG (the chip would decide otherwise); @old (may be NULL)
 * gets both as they were, for restore_mode().
 */
static int set_uio_mode(struct npu_dev *dev, __u32 mode,
			struct npusim_config *old)
{
	struct npusim_config c;
	int err = npu_sim_get_config(dev, &c);

	if (err)
		return err;
	if (old)
		*old = c;
	c.mask = NPUSIM_CFG_UIO_MODE | NPUSIM_CFG_SQ_MODE;
	c.uio_mode = mode;
	c.sq_mode = NPUSIM_SQ_MODE_CONFIG;
	return npu_sim_set_config(dev, &c);
}

static int restore_mode(struct npu_dev *dev, struct npusim_config *old)
{
	old->mask = NPUSIM_CFG_UIO_MODE | NPUSIM_CFG_SQ_MODE;
	return npu_sim_set_config(dev, old);
}

/* Mapped SQs where the device grants them: uio_t traced, uio_d not. */
TEST_F(hal, mapped_streams)
{
	struct npu_stream_opts so = { .sz = sizeof(so), .mapped = true };
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .duration_ns = 1000 };
	static struct npusim_task_truth t[200];
	struct trs_uio_info u;
	struct npu_stream *st;
	struct npu_event *ev;
	struct trs_sqe s[10];
	struct npusim_config old;
	__u32 mode;
	__u64 ticks;
	int i, n;

	ASSERT_EQ(0, set_uio_mode(self->dev, NPUSIM_UIO_KIO, &old));
	st = npu_stream_create(self->dev, &so);
	ASSERT_NE(NULL, st);
	EXPECT_FALSE(npu_sqcq_is_mapped(npu_stream_sqcq(st)));
	npu_stream_destroy(st);

	for (i = 0; i < 10; i++)
		npu_sqe_task(&s[i], &d);
	for (mode = NPUSIM_UIO_T; mode <= NPUSIM_UIO_D; mode++) {
		ASSERT_EQ(0, set_uio_mode(self->dev, mode, NULL));
		st = npu_stream_create(self->dev, &so);
		ASSERT_NE(NULL, st);
		ASSERT_TRUE(npu_sqcq_is_mapped(npu_stream_sqcq(st)));
		ASSERT_EQ(0, npu_sqcq_uio_info(npu_stream_sqcq(st), &u));
		EXPECT_EQ(1, u.uio_flag);
		EXPECT_EQ(mode == NPUSIM_UIO_T, u.soft_que_flag);
		ev = npu_event_create(self->dev, NPU_EVENT_TIME_LINE);
		ASSERT_NE(NULL, ev);
		for (i = 0; i < 10; i++)
			ASSERT_LE(0, npu_stream_submit(st, s, 10));
		ASSERT_EQ(0, npu_event_record(ev, st));
		ASSERT_EQ(0, npu_stream_sync(st, 10000));
		ASSERT_EQ(0, npu_event_sync(ev, 10000));
		ASSERT_EQ(0, npu_event_timestamp(ev, &ticks));
		n = stream_truth(st, t, 200);
		ASSERT_EQ(102, n);
		for (i = 0; i < n; i++) {
			EXPECT_EQ(NPUSIM_TASK_DONE, t[i].state);
			EXPECT_EQ(mode == NPUSIM_UIO_T, t[i].traced);
		}
		/* The user library's count in the shared page: every SQE the device ran. */
		ASSERT_NE(0, u.sq_ctrl_addr[TRS_UIO_SHR_INFO]);
		EXPECT_EQ((__u64)n, ((struct trs_sq_shr_info *)(uintptr_t)
				     u.sq_ctrl_addr[TRS_UIO_SHR_INFO])->send_ok);
		EXPECT_EQ(t[n - 1].start_ticks, ticks);
		npu_event_destroy(ev);
		npu_stream_destroy(st);
	}
	EXPECT_EQ(0, restore_mode(self->dev, &old));
}

/*
 * The raw pair: hardware CQEs on RECV NORMAL, translated or not. A kio
 * pair (SEND, QUERY), named: the library asks for a mapping and the chip
 * would give one.
 */
TEST_F(hal, raw_sqcq)
{
	struct npusim_config old;
	struct npu_sqcq_opts qo = { .sz = sizeof(qo), .sq_depth = 64 };
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .stream_id = 5,
				   .wr_cqe = true, .duration_ns = 1000 };
	bool v2 = npu_dev_stars_version(self->dev) == 2;
	struct trs_logic_cqe c[4];
	struct trs_hw_cqe h[4];
	struct trs_sqe s[3], v1;
	struct npu_sqcq *q;
	int i;

	ASSERT_EQ(0, set_uio_mode(self->dev, NPUSIM_UIO_KIO, &old));
	q = npu_sqcq_alloc(self->dev, &qo);
	ASSERT_EQ(0, restore_mode(self->dev, &old));
	ASSERT_NE(NULL, q) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(64, npu_sqcq_depth(q));
	EXPECT_FALSE(npu_sqcq_is_mapped(q));
	EXPECT_EQ(-EINVAL, npu_sqcq_sq_head(q));
	EXPECT_EQ(64, npu_sqcq_query(q, TRS_SQCQ_PROP_SQ_DEPTH));
	/* The raw pair sends bytes as given: v2 devices need v2 SQEs. */
	for (i = 0; i < 3; i++) {
		d.task_id = i;
		npu_sqe_task(&s[i], &d);
		if (v2) {
			v1 = s[i];
			npu_sqe_to_v2((struct trs_sqe_v2 *)&s[i], &v1, i);
		}
	}
	EXPECT_EQ(0, npu_sqcq_send(q, s, 3, -1));
	EXPECT_EQ(-EINVAL, npu_sqcq_send(q, s, 0, 0));
	EXPECT_EQ(-EINVAL, npu_sqcq_send(q, NULL, 1, 0));
	ASSERT_EQ(1, npu_sqcq_recv_hw(q, h, 1, 5000));
	if (!v2)	/* v2: the SQ's stream, none here */
		EXPECT_EQ(5, h[0].stream_id);
	EXPECT_EQ(0, h[0].task_id);
	ASSERT_LE(1, npu_sqcq_recv(q, c, 2, 5000, NULL));
	if (!v2)
		EXPECT_EQ(5, c[0].stream_id);
	EXPECT_EQ(1, c[0].task_id);
	EXPECT_EQ(npu_sqcq_sq_id(q), c[0].sq_id);
	EXPECT_EQ(2, c[0].sq_head);
	EXPECT_EQ(-EINVAL, npu_sqcq_recv(q, c, 0, 0, NULL));
	EXPECT_EQ(0, npu_sqcq_free(q));
	EXPECT_EQ(0, npu_sqcq_free(NULL));
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
	EXPECT_EQ(0, npu_stream_is_valid(NULL));
	EXPECT_EQ(0, npu_stream_is_valid(&local));
	EXPECT_EQ(0, npu_stream_is_valid(heap));
	EXPECT_EQ(0, npu_stream_is_valid((char *)a + 1));
	EXPECT_EQ(0, npu_stream_is_valid((void *)8));
	EXPECT_EQ(-EINVAL, npu_stream_id(heap));
	EXPECT_EQ(-EINVAL, npu_stream_submit(heap, NULL, 1));
	EXPECT_EQ(-EINVAL, npu_stream_sync(heap, 0));
	npu_stream_destroy(a);
	EXPECT_EQ(0, npu_stream_is_valid(a));
	EXPECT_EQ(1, npu_stream_is_valid(b));
	npu_stream_destroy(b);
	npu_stream_destroy(NULL);
	free(heap);
}

/* Everything the HAL allocated goes back: npusim's live counters. */
TEST_F(hal, no_leaks)
{
	struct npusim_stats before, after;
	struct npu_stream *st;
	struct npu_event *ev;

	ASSERT_EQ(0, npu_sim_stats(self->dev, &before));
	st = npu_stream_create(self->dev, NULL);
	ASSERT_NE(NULL, st);
	ev = npu_event_create(self->dev, NPU_EVENT_TIME_LINE);
	ASSERT_NE(NULL, ev);
	ASSERT_EQ(0, npu_event_record(ev, st));
	ASSERT_EQ(0, npu_event_sync(ev, 10000));
	npu_event_destroy(ev);
	npu_stream_destroy(st);
	ASSERT_EQ(0, npu_sim_stats(self->dev, &after));
	EXPECT_EQ(before.sqs, after.sqs);
	EXPECT_EQ(before.cqs, after.cqs);
	EXPECT_EQ(before.logic_cqs, after.logic_cqs);
	EXPECT_EQ(before.res_ids, after.res_ids);
}

TEST_HARNESS_MAIN
