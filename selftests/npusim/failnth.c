// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: fail-nth, in iommufd's style. Debian's kernels have no
 * CONFIG_FAULT_INJECTION, so npusim has its own knob: NPUSIM_IOC_FAIL_NTH
 * fails the Nth allocation it makes for the fd. For every command that
 * allocates, N walks 1, 2, 3... until the command succeeds: each failure
 * must be a clean ENOMEM that leaves every live counter (objects, tasks,
 * reports, kernel memory) as it was, and the walk must have hit every
 * allocation site on the way (the hit counter grows by one per step).
 */
#include <sys/mman.h>
#include "npusim_test.h"

#define MAX_SITES	64

/* One command on a prepared state: 0, or -errno. */
typedef int (*op_fn)(struct npq *q, void *ctx);
/* Undo a successful op (free what it made), so the walk can repeat it. */
typedef int (*undo_fn)(struct npq *q, void *ctx);

struct op_ctx {
	__u32 id, sq, cq;
	struct trs_uio_info uio;
};

/*
 * Walk @op: fail its 1st, 2nd, ... allocation until it succeeds. Return
 * the number of allocation sites it went through, or -1 after the first
 * failure that was not clean (logged).
 */
static int fail_nth_walk(struct __test_metadata *_metadata, struct npq *q,
			 op_fn op, undo_fn undo, void *ctx)
{
	struct npusim_stats base, st;
	int n, r;

	for (n = 1; n < MAX_SITES; n++) {
		if (_do_stats(q->fd, &base) || _do_fail_nth(q->fd, n))
			return -1;
		r = op(q, ctx);
		if (_do_fail_nth(q->fd, 0) || _do_stats(q->fd, &st))
			return -1;
		if (!r) {
			/* nothing left to fail: the armed count did not fire */
			EXPECT_EQ(base.fail_nth_hits, st.fail_nth_hits);
			EXPECT_EQ(0, undo(q, ctx));
			return n - 1;
		}
		EXPECT_EQ(-ENOMEM, r) TH_LOG("site %d", n);
		EXPECT_EQ(base.fail_nth_hits + 1, st.fail_nth_hits)
			TH_LOG("site %d", n);
		EXPECT_TRUE(live_eq(&base, &st)) TH_LOG("site %d", n);
		if (r != -ENOMEM || !live_eq(&base, &st))
			return -1;
	}
	return -1;
}

static int op_stream(struct npq *q, void *c)
{
	return _do_stream_alloc(q->fd, q->ts, &((struct op_ctx *)c)->id);
}

static int undo_stream(struct npq *q, void *c)
{
	return _do_stream_free(q->fd, q->ts, ((struct op_ctx *)c)->id);
}

static int op_sq(struct npq *q, void *c)
{
	struct op_ctx *o = c;

	o->cq = 0;
	return _do_sq_alloc(q->fd, q->ts, q->stream, 64, 0, &o->sq, &o->cq,
			    &o->uio);
}

static int undo_sq(struct npq *q, void *c)
{
	struct op_ctx *o = c;

	if (o->uio.uio_flag)
		munmap((void *)(uintptr_t)(o->uio.sq_que_addr -
					   NPUSIM_SQ_MMAP_SQE_OFF),
		       NPUSIM_SQ_MMAP_SIZE(64));
	return _do_sq_free(q->fd, q->ts, o->sq, o->cq);
}

static int op_lcq(struct npq *q, void *c)
{
	return _do_lcq_alloc(q->fd, q->ts, ((struct op_ctx *)c)->id, 64,
			     &((struct op_ctx *)c)->cq);
}

static int undo_lcq(struct npq *q, void *c)
{
	return _do_lcq_free(q->fd, q->ts, ((struct op_ctx *)c)->cq);
}

/* SEND on a fresh SQ: the SQEs' copy and the first truth page. */
static int op_send(struct npq *q, void *c)
{
	struct op_ctx *o = c;
	struct trs_sqe s[4];
	int i;

	for (i = 0; i < 4; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, q->stream, i, i == 3, 100, 0);
	return _do_send_ts(q->fd, q->ts, o->sq, s, 4, -1, NULL);
}

static int undo_send(struct npq *q, void *c)
{
	struct trs_logic_cqe e;

	/* the SQ stays (its truth page with it): the walk is over */
	return _recv_n_type(q->fd, TRS_SQCQ_TYPE_LOGIC, q->ts, q->lcq, &e, 1,
			    WAIT_MS) == 1 ? 0 : -ETIMEDOUT;
}

static int op_recv(struct npq *q, void *c)
{
	struct trs_logic_cqe e[2];
	int r = _do_recv_type(q->fd, TRS_SQCQ_TYPE_LOGIC, q->ts, q->lcq, e, 2,
			      0);

	return r < 0 ? r : r == 1 ? 0 : -EPROTO;
}

static int undo_nothing(struct npq *q, void *c)
{
	return 0;
}

static int op_truth(struct npq *q, void *c)
{
	struct npusim_task_truth t[2];
	int r = _do_truth_ts(q->fd, q->ts, q->sq, 0, t, 2, NULL);

	return r < 0 ? r : 0;
}

FIXTURE(fail) {
	int ctl, fd;
	struct npq q;
	struct npusim_stats st0;	/* before the fixture's objects */
};

FIXTURE_SETUP(fail)
{
	do_open(&self->ctl, false);
	do_stats(self->ctl, &self->st0);
	do_open(&self->fd, true);
	npq_create(&self->q, self->fd, 1, 64);
	do_roundtrip(&self->q, 1);
}

FIXTURE_TEARDOWN(fail)
{
	struct npusim_stats st;

	/* everything the walk made or failed to make is gone with the fd */
	close(self->fd);
	EXPECT_EQ(0, _wait_live(self->ctl, &self->st0, &st));
	close(self->ctl);
}

TEST_F(fail, res_id_alloc)
{
	struct op_ctx o = {};

	EXPECT_EQ(1, fail_nth_walk(_metadata, &self->q, op_stream, undo_stream,
				   &o));
}

TEST_F(fail, sqcq_alloc_kernel_mode)
{
	struct op_ctx o = {};

	/* SQ, slots, truth table, CQ, CQ ring */
	EXPECT_EQ(5, fail_nth_walk(_metadata, &self->q, op_sq, undo_sq, &o));
}

TEST_F(fail, sqcq_alloc_mapped)
{
	struct npusim_config c = {
		.mask = NPUSIM_CFG_UIO_MODE | NPUSIM_CFG_SQ_MODE,
		.uio_mode = NPUSIM_UIO_T, .sq_mode = NPUSIM_SQ_MODE_CONFIG,
	}, saved;
	struct op_ctx o = { .uio.sq_que_addr = 1 };
	int n;

	/* A mapping granted (the module's default grants kio): named here. */
	do_get_config(self->fd, &saved);
	do_set_config(self->fd, &c);
	/* and the ring's page table and pages */
	n = fail_nth_walk(_metadata, &self->q, op_sq, undo_sq, &o);
	saved.mask = c.mask;
	do_set_config(self->fd, &saved);
	EXPECT_EQ(7, n);
}

TEST_F(fail, logic_cq_alloc)
{
	struct op_ctx o = {};

	ASSERT_EQ(0, _do_stream_alloc(self->fd, 1, &o.id));
	/* CQ, ring */
	EXPECT_EQ(2, fail_nth_walk(_metadata, &self->q, op_lcq, undo_lcq, &o));
	EXPECT_EQ(0, _do_stream_free(self->fd, 1, o.id));
}

TEST_F(fail, send)
{
	struct op_ctx o = {};
	__u64 next;

	o.cq = 0;
	ASSERT_EQ(0, _do_sq_alloc(self->fd, 1, self->q.stream, 64, 0, &o.sq,
				  &o.cq, NULL));
	/* the SQEs' copy, the first truth page */
	EXPECT_EQ(2, fail_nth_walk(_metadata, &self->q, op_send, undo_send,
				   &o));
	/* the failed SENDs queued nothing */
	ASSERT_EQ(0, _do_truth_ts(self->fd, 1, o.sq, 0, NULL, 0, &next));
	EXPECT_EQ(4, next);
}

TEST_F(fail, recv)
{
	struct trs_sqe s;

	sqe_task(&s, TRS_SQE_FFTS, self->q.stream, 2, true, 100, 0);
	ASSERT_EQ(0, _do_send_ts(self->fd, 1, self->q.sq, &s, 1, -1, NULL));
	wait_head(self->fd, 1, self->q.sq, 2);
	/* the bounce buffer; a failed RECV leaves the report queued */
	EXPECT_EQ(1, fail_nth_walk(_metadata, &self->q, op_recv, undo_nothing,
				   NULL));
}

TEST_F(fail, truth)
{
	EXPECT_EQ(1, fail_nth_walk(_metadata, &self->q, op_truth, undo_nothing,
				   NULL));
}

/* Disarmed: nothing fails; armed past the last site: nothing fires. */
TEST_F(fail, disarm)
{
	struct npusim_stats a, b;
	__u32 id;

	do_stats(self->fd, &a);
	ASSERT_EQ(0, _do_fail_nth(self->fd, 1));
	ASSERT_EQ(0, _do_fail_nth(self->fd, 0));
	do_stream_alloc(self->fd, 1, &id);
	ASSERT_EQ(0, _do_fail_nth(self->fd, 1000));
	do_roundtrip(&self->q, 3);
	ASSERT_EQ(0, _do_fail_nth(self->fd, 0));
	do_stats(self->fd, &b);
	EXPECT_EQ(a.fail_nth_hits, b.fail_nth_hits);
	do_stream_free(self->fd, 1, id);
	EXPECT_EQ(-EINVAL, ioctl(self->fd, NPUSIM_IOC_FAIL_NTH,
				 &(struct npusim_fail_nth){ .nth = 1, .res = 1 })
			   ? -errno : 0);
}

/* The count is per fd: another fd's allocations do not count. */
TEST_F(fail, per_fd)
{
	__u32 id, id2;
	int fd2;

	do_open(&fd2, true);
	ASSERT_EQ(0, _do_fail_nth(self->fd, 1));
	do_stream_alloc(fd2, 1, &id2);
	EXPECT_EQ(-ENOMEM, _do_stream_alloc(self->fd, 1, &id));
	close(fd2);
}

TEST_HARNESS_MAIN
