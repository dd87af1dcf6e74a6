// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: mapped ("UIO") SQs. The SQEs are written into the mapped ring and
 * the tail moved, with no SEND ioctl; completions still come through RECV.
 */
#include <sys/mman.h>
#include "npusim_test.h"

#define DEPTH 16

FIXTURE(uio) {
	int fd;
	__u32 sq, cq;
	size_t len;
	struct npusim_sq_ctrl *ctrl;
	struct trs_sqe *ring;
};

static size_t map_len(__u32 depth)
{
	long page = sysconf(_SC_PAGESIZE);

	return (NPUSIM_SQ_MMAP_SQE_OFF + depth * TRS_SQE_SIZE + page - 1) &
	       ~(size_t)(page - 1);
}

FIXTURE_SETUP(uio)
{
	void *p;

	do_open(&self->fd, true);
	do_alloc(self->fd, DEPTH, TSDRV_FLAG_REUSE_CQ, &self->sq, &self->cq);
	self->len = map_len(DEPTH);
	p = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 NPUSIM_SQ_MMAP_OFFSET(0, self->sq));
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
	self->ctrl = p;
	self->ring = (void *)((char *)p + NPUSIM_SQ_MMAP_SQE_OFF);
}

FIXTURE_TEARDOWN(uio)
{
	if (self->ctrl)
		munmap(self->ctrl, self->len);
	close(self->fd);
}

static __u32 ring_head(const struct npusim_sq_ctrl *c)
{
	return __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
}

/* Queue @n SQEs at the tail; the caller has made sure there is room. */
static void ring_push(struct npusim_sq_ctrl *c, struct trs_sqe *ring,
		      const struct trs_sqe *s, __u32 n)
{
	__u32 tail = c->tail, i;

	for (i = 0; i < n; i++)
		ring[(tail + i) % c->depth] = s[i];
	__atomic_store_n(&c->tail, (tail + n) % c->depth, __ATOMIC_RELEASE);
}

TEST_F(uio, submit_without_send)
{
	struct npusim_task_truth t[5];
	struct npusim_stats st0, st1;
	struct trs_logic_cqe c[2];
	struct trs_sqe s[5];
	int i;

	EXPECT_EQ(DEPTH, self->ctrl->depth);
	EXPECT_EQ(0, self->ctrl->head);
	EXPECT_EQ(0, self->ctrl->tail);
	do_stats(self->fd, &st0);
	for (i = 0; i < 5; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 3, i, i == 4, 1000, 0);
	ring_push(self->ctrl, self->ring, s, 5);

	ASSERT_EQ(1, _recv_n(self->fd, self->cq, c, 1, 5000));
	EXPECT_EQ(4, c[0].task_id);
	EXPECT_EQ(5, c[0].sq_head);
	EXPECT_EQ(self->sq, c[0].sq_id);
	EXPECT_NE(0, c[0].enque_timestamp);
	/* head is published as tasks complete. */
	EXPECT_EQ(5, ring_head(self->ctrl));
	do_truth(self->fd, self->sq, 0, t, 5);
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(NPUSIM_TASK_DONE, t[i].state);
		EXPECT_EQ(i, t[i].pos);
		EXPECT_EQ(i, t[i].task_id);
	}
	do_stats(self->fd, &st1);
	EXPECT_EQ(st0.submitted + 5, st1.submitted);
	EXPECT_EQ(st0.completed + 5, st1.completed);
	do_recv_err(ETIMEDOUT, self->fd, self->cq, c, 2, 0);
}

TEST_F(uio, send_is_einval)
{
	struct trs_sqe s;
	__u64 next;

	sqe_task(&s, TRS_SQE_FFTS, 1, 1, true, 100, 0);
	do_send_err(EINVAL, self->fd, self->sq, &s, 1);
	ASSERT_EQ(0, _do_truth(self->fd, self->sq, 0, NULL, 0, &next));
	EXPECT_EQ(0, next);
}

/* Many times around the ring, waiting for room through head. */
TEST_F(uio, wraps_around)
{
	struct trs_logic_cqe c[64];
	struct trs_sqe s[DEPTH];
	__u32 sent = 0, got = 0, n, i;
	__u64 end = now_ns() + 10000000000ull;
	int r;

	while (got < 200 && now_ns() < end) {
		__u32 room = (ring_head(self->ctrl) + DEPTH - self->ctrl->tail - 1)
			     % DEPTH;

		n = sent < 200 ? (200 - sent < room ? 200 - sent : room) : 0;
		for (i = 0; i < n; i++)
			sqe_task(&s[i], TRS_SQE_AICPU, 1, sent + i, true, 500, 0);
		if (n)
			ring_push(self->ctrl, self->ring, s, n);
		sent += n;
		r = _do_recv(self->fd, self->cq, c, 64, 100);
		if (r == -ETIMEDOUT)
			continue;
		ASSERT_LT(0, r);
		for (i = 0; i < (__u32)r; i++) {
			ASSERT_EQ(got, c[i].task_id);
			EXPECT_EQ((got + 1) % DEPTH, c[i].sq_head);
			got++;
		}
	}
	EXPECT_EQ(200, got);
	EXPECT_EQ(self->ctrl->tail, ring_head(self->ctrl));
}

/* The engine cannot refuse a bad SQE from a ring: the task fails. */
TEST_F(uio, bad_sqe_fails_task)
{
	struct trs_logic_cqe c[2];
	struct trs_sqe s[2];

	sqe_task(&s[0], 9, 1, 1, false, 100, 0);
	sqe_task(&s[1], TRS_SQE_FFTS, 1, 2, true, 100, 0);
	ring_push(self->ctrl, self->ring, s, 2);
	ASSERT_EQ(2, _recv_n(self->fd, self->cq, c, 2, 5000));
	EXPECT_EQ(1, c[0].task_id);
	EXPECT_EQ(NPUSIM_ERR_BAD_SQE, c[0].error_code);
	EXPECT_TRUE(c[0].flags & TRS_CQE_F_ERROR);
	EXPECT_EQ(2, c[1].task_id);
	EXPECT_EQ(0, c[1].error_code);
}

/* A tail past the ring is ignored; a good one later works. */
TEST_F(uio, tail_out_of_range)
{
	struct trs_logic_cqe c;
	struct trs_sqe s;
	__u64 next;

	sqe_task(&s, TRS_SQE_FFTS, 1, 1, true, 100, 0);
	self->ring[0] = s;
	__atomic_store_n(&self->ctrl->tail, DEPTH + 3, __ATOMIC_RELEASE);
	usleep(20 * NPUSIM_UIO_POLL_US + 10000);
	ASSERT_EQ(0, _do_truth(self->fd, self->sq, 0, NULL, 0, &next));
	EXPECT_EQ(0, next);
	EXPECT_EQ(0, ring_head(self->ctrl));
	__atomic_store_n(&self->ctrl->tail, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(1, _recv_n(self->fd, self->cq, &c, 1, 5000));
	EXPECT_EQ(1, c.task_id);
}

TEST_F(uio, mmap_einval)
{
	__u32 sq2, cq2;
	void *p;

	/* Not at the start of a mapped SQ of this fd. */
	p = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 NPUSIM_SQ_MMAP_OFFSET(0, self->sq) + 4096);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 NPUSIM_SQ_MMAP_OFFSET(0, self->sq + 100));
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* Longer than the ring. */
	p = mmap(NULL, self->len + 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, NPUSIM_SQ_MMAP_OFFSET(0, self->sq));
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* An SQ that is not mapped. */
	do_alloc(self->fd, DEPTH, 0, &sq2, &cq2);
	p = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 NPUSIM_SQ_MMAP_OFFSET(0, sq2));
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	do_roundtrip(self->fd, sq2, cq2, 1);
}

/* The mapping outlives FREE (until munmap); the engine stops reading it. */
TEST_F(uio, free_while_mapped)
{
	struct npusim_stats st;
	struct trs_sqe s;

	do_free(self->fd, self->sq, self->cq);
	sqe_task(&s, TRS_SQE_FFTS, 1, 1, true, 100, 0);
	ring_push(self->ctrl, self->ring, &s, 1);
	usleep(20000);
	do_stats(self->fd, &st);
	EXPECT_EQ(0, st.tasks_queued);
	EXPECT_EQ(1, self->ctrl->tail);
}

TEST_HARNESS_MAIN
