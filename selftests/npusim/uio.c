// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: mapped ("UIO") SQs, both flavours. ALLOC with a non-zero
 * trs_uio_info.sq_que_addr asks for one; the device grants uio_t (soft
 * queue: the kernel still moves each SQE, through npusim_chan_trace_sqe())
 * or uio_d (direct: the kernel sees nothing of the submission), per its
 * uio_mode. The SQEs are written into the mapped ring and the tail moved,
 * with no SEND; completions come through RECV and the mapped head.
 */
#include <sys/mman.h>
#include "npusim_test.h"

#define DEPTH 16

FIXTURE(uio) {
	int fd;
	struct npq q;
	struct trs_uio_info uio;
	struct npusim_sq_ctrl *ctrl;
	struct trs_sqe *ring;
	struct npusim_config cfg;
};

FIXTURE_VARIANT(uio) {
	__u32 mode;
};

FIXTURE_VARIANT_ADD(uio, uio_t) { .mode = NPUSIM_UIO_T };
FIXTURE_VARIANT_ADD(uio, uio_d) { .mode = NPUSIM_UIO_D };

FIXTURE_SETUP(uio)
{
	/* npusim's config names the mode, whatever the chip would pick */
	struct npusim_config c = {
		.mask = NPUSIM_CFG_UIO_MODE | NPUSIM_CFG_SQ_MODE,
		.uio_mode = variant->mode, .sq_mode = NPUSIM_SQ_MODE_CONFIG,
	};

	do_open(&self->fd, true);
	do_get_config(self->fd, &self->cfg);
	do_set_config(self->fd, &c);
	self->q.fd = self->fd;
	self->q.ts = 0;
	self->q.cq = 0;
	do_stream_alloc(self->fd, 0, &self->q.stream);
	self->uio.sq_que_addr = 1;	/* asks for a mapped SQ */
	ASSERT_EQ(0, _do_sq_alloc(self->fd, 0, self->q.stream, DEPTH, 0,
				  &self->q.sq, &self->q.cq, &self->uio));
	do_lcq_alloc(self->fd, 0, self->q.stream, DEPTH, &self->q.lcq);
	ASSERT_EQ(1, self->uio.uio_flag);
	self->ring = (void *)(uintptr_t)self->uio.sq_que_addr;
	self->ctrl = (void *)((char *)self->ring - NPUSIM_SQ_MMAP_SQE_OFF);
}

FIXTURE_TEARDOWN(uio)
{
	munmap(self->ctrl, NPUSIM_SQ_MMAP_SIZE(DEPTH));
	close(self->fd);
	EXPECT_EQ(0, _config_restore(self->fd = _do_open(false), &self->cfg));
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

/* What ALLOC wrote back: the mapping, its flavour, the control words. */
TEST_F(uio, alloc_maps)
{
	EXPECT_EQ(variant->mode == NPUSIM_UIO_T ? TRS_SOFT_QUE_SOFT :
						  TRS_SOFT_QUE_NONE,
		  self->uio.soft_que_flag);
	EXPECT_EQ((uintptr_t)&self->ctrl->head,
		  self->uio.sq_ctrl_addr[TRS_UIO_HEAD]);
	EXPECT_EQ((uintptr_t)&self->ctrl->tail,
		  self->uio.sq_ctrl_addr[TRS_UIO_TAIL]);
	EXPECT_EQ((uintptr_t)&self->ctrl->tail,
		  self->uio.sq_ctrl_addr[TRS_UIO_DB]);
	EXPECT_EQ(DEPTH, self->ctrl->depth);
	EXPECT_EQ(0, self->ctrl->head);
	EXPECT_EQ(0, self->ctrl->tail);
	/* The shared page the user library counts its sends in: zeroed. */
	EXPECT_EQ((uintptr_t)self->ctrl + NPUSIM_SQ_MMAP_SHR_OFF,
		  self->uio.sq_ctrl_addr[TRS_UIO_SHR_INFO]);
	EXPECT_EQ(0, ((struct trs_sq_shr_info *)(uintptr_t)
		      self->uio.sq_ctrl_addr[TRS_UIO_SHR_INFO])->send_ok);
}

/* Submission without SEND; traced by the kernel on uio_t only. */
TEST_F(uio, submit_without_send)
{
	struct npusim_task_truth t[5];
	struct npusim_stats st0, st1;
	struct trs_logic_cqe c[2];
	struct trs_sqe s[5];
	int i;

	do_stats(self->fd, &st0);
	for (i = 0; i < 5; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, self->q.stream, i, i == 4, 1000, 0);
	ring_push(self->ctrl, self->ring, s, 5);

	ASSERT_EQ(1, _recv_n(self->fd, self->q.lcq, c, 1, WAIT_MS));
	EXPECT_EQ(4, c[0].task_id);
	EXPECT_EQ(5, c[0].sq_head);
	EXPECT_EQ(self->q.sq, c[0].sq_id);
	/* head is published as tasks complete, QUERY agrees */
	EXPECT_EQ(5, ring_head(self->ctrl));
	wait_head(self->fd, 0, self->q.sq, 5);
	do_truth(self->fd, self->q.sq, 0, t, 5);
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(NPUSIM_TASK_DONE, t[i].state);
		EXPECT_EQ(i, t[i].pos);
		EXPECT_EQ(i, t[i].task_id);
		EXPECT_EQ(variant->mode == NPUSIM_UIO_T, t[i].traced);
	}
	do_stats(self->fd, &st1);
	EXPECT_EQ(st0.submitted + 5, st1.submitted);
	EXPECT_EQ(st0.completed + 5, st1.completed);
	EXPECT_EQ(st0.traced_sqes + (variant->mode == NPUSIM_UIO_T ? 5 : 0),
		  st1.traced_sqes);
	/* a mapped SQ's SQEs are not SENT */
	EXPECT_EQ(st0.sent_sqes, st1.sent_sqes);
	EXPECT_EQ(0, _do_recv(self->fd, self->q.lcq, c, 2, 0));
}

TEST_F(uio, send_is_einval)
{
	struct trs_sqe s;
	__u64 next;

	sqe_task(&s, TRS_SQE_FFTS, self->q.stream, 1, true, 100, 0);
	do_send_err(EINVAL, self->fd, self->q.sq, &s, 1);
	ASSERT_EQ(0, _do_truth(self->fd, self->q.sq, 0, NULL, 0, &next));
	EXPECT_EQ(0, next);
}

/* Many times around the ring, waiting for room through head. */
TEST_F(uio, wraps_around)
{
	struct trs_logic_cqe c;
	struct trs_sqe s[DEPTH];
	__u32 i, k, n = 0;

	for (k = 0; k < 10; k++) {
		__u32 batch = DEPTH - 1;

		/* the ring is empty when head caught up with tail */
		while (ring_head(self->ctrl) != self->ctrl->tail)
			pause_us(100);
		for (i = 0; i < batch; i++)
			sqe_task(&s[i], TRS_SQE_FFTS, self->q.stream, n + i,
				 i == batch - 1, 100, 0);
		ring_push(self->ctrl, self->ring, s, batch);
		ASSERT_EQ(1, _recv_n(self->fd, self->q.lcq, &c, 1, WAIT_MS));
		n += batch;
		EXPECT_EQ(n - 1, c.task_id);
		EXPECT_EQ(n % DEPTH, c.sq_head);
	}
}

TEST_F(uio, bad_sqe_fails_task)
{
	struct trs_logic_cqe c;
	struct trs_sqe s;

	sqe_task(&s, TRS_SQE_FFTS, self->q.stream, 3, false, 100, 0);
	s.type = 9;	/* not an SQE type npusim runs */
	ring_push(self->ctrl, self->ring, &s, 1);
	ASSERT_EQ(1, _recv_n(self->fd, self->q.lcq, &c, 1, WAIT_MS));
	EXPECT_EQ(3, c.task_id);
	EXPECT_EQ(NPUSIM_ERR_BAD_SQE, c.error_code);
	EXPECT_TRUE(c.flags & TRS_CQE_F_ERROR);
}

/*
 * A tail outside the ring is ignored until it is fixed. The engine polls
 * mapped SQs in the order they were allocated, one pass after the other:
 * once a later SQ's second witness SQE was taken, a whole pass has looked
 * at this SQ after the bad tail was stored.
 */
TEST_F(uio, tail_out_of_range)
{
	struct trs_uio_info uio = { .sq_que_addr = 1 };
	struct npusim_task_truth t;
	struct trs_logic_cqe c;
	struct trs_sqe s, *ring2;
	__u32 sq2, cq2 = 0, k;
	__u64 next;

	ASSERT_EQ(0, _do_sq_alloc(self->fd, 0, TRS_STREAM_ID_NONE, DEPTH, 0,
				  &sq2, &cq2, &uio));
	ASSERT_EQ(1, uio.uio_flag);
	ring2 = (void *)(uintptr_t)uio.sq_que_addr;
	sqe_task(&s, TRS_SQE_FFTS, self->q.stream, 5, true, 100, 0);
	self->ring[0] = s;
	__atomic_store_n(&self->ctrl->tail, DEPTH + 3, __ATOMIC_RELEASE);
	for (k = 0; k < 2; k++) {
		sqe_task(&s, TRS_SQE_FFTS, 0x7fff, k, false, 0, 0);
		ring_push((void *)((char *)ring2 - NPUSIM_SQ_MMAP_SQE_OFF),
			  ring2, &s, 1);
		wait_task_state(self->fd, 0, sq2, k, NPUSIM_TASK_DONE);
	}
	ASSERT_EQ(0, _do_truth(self->fd, self->q.sq, 0, &t, 0, &next));
	EXPECT_EQ(0, next);
	__atomic_store_n(&self->ctrl->tail, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(1, _recv_n(self->fd, self->q.lcq, &c, 1, WAIT_MS));
	EXPECT_EQ(5, c.task_id);
}

TEST_F(uio, mmap_einval)
{
	size_t len = NPUSIM_SQ_MMAP_SIZE(DEPTH);
	__u32 sq2, cq2 = 0;
	void *p;

	/* private, too long, an offset inside, no such SQ, a kernel-mode SQ */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd,
		 NPUSIM_SQ_MMAP_OFFSET(0, self->q.sq));
	EXPECT_EQ(MAP_FAILED, p);
	p = mmap(NULL, len + 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, NPUSIM_SQ_MMAP_OFFSET(0, self->q.sq));
	EXPECT_EQ(MAP_FAILED, p);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 NPUSIM_SQ_MMAP_OFFSET(0, self->q.sq) + 4096);
	EXPECT_EQ(MAP_FAILED, p);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 NPUSIM_SQ_MMAP_OFFSET(0, self->q.sq + 100));
	EXPECT_EQ(MAP_FAILED, p);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 NPUSIM_SQ_MMAP_OFFSET(1, self->q.sq));
	EXPECT_EQ(MAP_FAILED, p);
	ASSERT_EQ(0, _do_sq_alloc(self->fd, 0, TRS_STREAM_ID_NONE, DEPTH, 0,
				  &sq2, &cq2, NULL));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 NPUSIM_SQ_MMAP_OFFSET(0, sq2));
	EXPECT_EQ(MAP_FAILED, p);
	/* the right offset maps the same ring again */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 NPUSIM_SQ_MMAP_OFFSET(0, self->q.sq));
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(DEPTH, ((struct npusim_sq_ctrl *)p)->depth);
	munmap(p, len);
	do_sq_free(self->fd, 0, sq2, cq2);
}

/* FREE stops the device reading the ring; the mapping stays usable. */
TEST_F(uio, free_while_mapped)
{
	struct npusim_stats st0, st1;
	struct trs_sqe s;

	do_stats(self->fd, &st0);
	do_lcq_free(self->fd, 0, self->q.lcq);
	do_sq_free(self->fd, 0, self->q.sq, self->q.cq);
	sqe_task(&s, TRS_SQE_FFTS, self->q.stream, 1, true, 100, 0);
	ring_push(self->ctrl, self->ring, &s, 1);
	do_stats(self->fd, &st1);
	EXPECT_EQ(st0.sqs - 1, st1.sqs);
	EXPECT_EQ(st0.submitted, st1.submitted);
	/* the mapping's memory is still charged: it goes with munmap */
	EXPECT_EQ(st0.kmem_bytes > st1.kmem_bytes, 1);
}

/* A device that grants no mapping: kernel mode, SEND works. */
TEST(uio_refused)
{
	struct npusim_config c = {
		.mask = NPUSIM_CFG_UIO_MODE | NPUSIM_CFG_SQ_MODE,
		.uio_mode = NPUSIM_UIO_KIO, .sq_mode = NPUSIM_SQ_MODE_CONFIG,
	};
	struct npusim_config saved;
	struct trs_uio_info uio = { .sq_que_addr = 1 };
	struct npq q;
	int fd;

	do_open(&fd, true);
	do_get_config(fd, &saved);
	do_set_config(fd, &c);
	q.fd = fd;
	q.ts = 0;
	q.cq = 0;
	do_stream_alloc(fd, 0, &q.stream);
	ASSERT_EQ(0, _do_sq_alloc(fd, 0, q.stream, DEPTH, 0, &q.sq, &q.cq,
				  &uio));
	EXPECT_EQ(0, uio.uio_flag);
	EXPECT_EQ(0, uio.soft_que_flag);
	EXPECT_EQ(1, uio.sq_que_addr);	/* untouched */
	do_lcq_alloc(fd, 0, q.stream, DEPTH, &q.lcq);
	do_roundtrip(&q, 1);
	close(fd);
	fd = _do_open(false);
	EXPECT_EQ(0, _config_restore(fd, &saved));
	close(fd);
}

TEST_HARNESS_MAIN
