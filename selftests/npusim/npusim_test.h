/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the npusim VM tests: the TRS and npusim ioctls through the
 * header's structs, in the helper-triple style:
 *   _do_x(...)          returns 0 or -errno, asserts nothing;
 *   do_x(...)           ASSERTs success (in a TEST/TEST_F body);
 *   do_x_err(E, ...)    EXPECTs failure with errno E.
 * The tests check the module against the semantics documented in
 * include/uapi/ascend_trs.h, not against its source.
 */
#ifndef _NPUSIM_TEST_H
#define _NPUSIM_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <ascend_trs.h>
#include "kselftest_harness.h"

#define NPUSIM_DEV	"/dev/" NPUSIM_DEV_NAME

static inline __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* ---------------------------------------------------------------------- */
/* fds                                                                    */

static inline int _do_manager(int fd, unsigned long cmd, const char *name,
			      int device_id)
{
	struct ascend_manager_arg a = { .device_id = device_id };

	strncpy(a.module_name, name, sizeof(a.module_name) - 1);
	return xioctl(fd, cmd, &a);
}

#define _do_bind(fd)	_do_manager(fd, ASCEND_MANAGER_OPEN, ASCEND_MODULE_TSDRV, 0)
#define do_bind(fd)	ASSERT_EQ(0, _do_bind(fd))

/* Open the device; bound to TSDRV when @bind. Return: fd or -errno. */
static inline int _do_open(bool bind)
{
	int fd = open(NPUSIM_DEV, O_RDWR | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	if (bind) {
		err = _do_bind(fd);
		if (err) {
			close(fd);
			return err;
		}
	}
	return fd;
}

#define do_open(fdp, bind) do {					\
	*(fdp) = _do_open(bind);					\
	ASSERT_LE(0, *(fdp)) TH_LOG("open %s: %s", NPUSIM_DEV,	\
				    strerror(-*(fdp)));		\
} while (0)

/* ---------------------------------------------------------------------- */
/* SQ/CQ                                                                  */

static inline void alloc_info_init(struct trs_sqcq_alloc_info *ai,
				   __u32 depth, __u32 flag)
{
	memset(ai, 0, sizeof(*ai));
	ai->type = TRS_SQCQ_TYPE_NORMAL;
	ai->sqeSize = TRS_SQE_SIZE;
	ai->cqeSize = TRS_CQE_SIZE;
	ai->sqeDepth = depth;
	ai->cqeDepth = depth;
	ai->flag = flag;
}

static inline int _do_alloc_info(int fd, struct trs_sqcq_alloc_info *ai)
{
	return xioctl(fd, TRS_IOC_SQCQ_ALLOC, ai);
}

static inline int _do_alloc(int fd, __u32 depth, __u32 flag, __u32 *sq,
			    __u32 *cq)
{
	struct trs_sqcq_alloc_info ai;
	int err;

	alloc_info_init(&ai, depth, flag);
	err = _do_alloc_info(fd, &ai);
	if (!err) {
		*sq = ai.sqId;
		*cq = ai.cqId;
	}
	return err;
}

#define do_alloc(fd, depth, flag, sq, cq) \
	ASSERT_EQ(0, _do_alloc(fd, depth, flag, sq, cq))
#define do_alloc_info_err(e, fd, ai) EXPECT_EQ(-(e), _do_alloc_info(fd, ai))

static inline int _do_free(int fd, __u32 sq, __u32 cq)
{
	struct trs_sqcq_free_info fi = {
		.type = TRS_SQCQ_TYPE_NORMAL, .sqId = sq, .cqId = cq,
	};

	return xioctl(fd, TRS_IOC_SQCQ_FREE, &fi);
}

#define do_free(fd, sq, cq)		ASSERT_EQ(0, _do_free(fd, sq, cq))
#define do_free_err(e, fd, sq, cq)	EXPECT_EQ(-(e), _do_free(fd, sq, cq))

/* ---------------------------------------------------------------------- */
/* SEND / RECV                                                            */

static inline void send_info_init(struct trs_task_send_info *si, __u32 sq,
				  const void *sqes, __u32 n, int timeout)
{
	memset(si, 0, sizeof(*si));
	si->type = TRS_TASK_TYPE_NORMAL;
	si->sqId = sq;
	si->timeout = timeout;
	si->sqe_addr = (__u64)(uintptr_t)sqes;
	si->sqe_num = n;
	si->pos = 0xdeadbeef;
}

static inline int _do_send_info(int fd, struct trs_task_send_info *si)
{
	return xioctl(fd, TRS_IOC_SQCQ_SEND, si);
}

static inline int _do_send(int fd, __u32 sq, const void *sqes, __u32 n,
			   int timeout, __u32 *pos)
{
	struct trs_task_send_info si;
	int err;

	send_info_init(&si, sq, sqes, n, timeout);
	err = _do_send_info(fd, &si);
	if (!err && pos)
		*pos = si.pos;
	return err;
}

#define do_send(fd, sq, sqes, n, pos) \
	ASSERT_EQ(0, _do_send(fd, sq, sqes, n, -1, pos))
#define do_send_err(e, fd, sq, sqes, n) \
	EXPECT_EQ(-(e), _do_send(fd, sq, sqes, n, 0, NULL))
#define do_send_info_err(e, fd, si) EXPECT_EQ(-(e), _do_send_info(fd, si))

static inline void recv_info_init(struct trs_report_recv_info *ri, __u32 cq,
				  void *cqes, __u32 n, int timeout)
{
	memset(ri, 0, sizeof(*ri));
	ri->type = TRS_SQCQ_TYPE_NORMAL;
	ri->cqId = cq;
	ri->timeout = timeout;
	ri->cqe_addr = (__u64)(uintptr_t)cqes;
	ri->cqe_num = n;
	ri->report_cqe_num = 0xdeadbeef;
	ri->task_id = TRS_REPORT_TASK_ANY;
}

static inline int _do_recv_info(int fd, struct trs_report_recv_info *ri)
{
	return xioctl(fd, TRS_IOC_SQCQ_RECV, ri);
}

/* Return: reports received (>= 1), or -errno. */
static inline int _do_recv(int fd, __u32 cq, struct trs_logic_cqe *cqes,
			   __u32 n, int timeout)
{
	struct trs_report_recv_info ri;
	int err;

	recv_info_init(&ri, cq, cqes, n, timeout);
	err = _do_recv_info(fd, &ri);
	return err ? err : (int)ri.report_cqe_num;
}

#define do_recv_err(e, fd, cq, cqes, n, timeout) \
	EXPECT_EQ(-(e), _do_recv(fd, cq, cqes, n, timeout))
#define do_recv_info_err(e, fd, ri) EXPECT_EQ(-(e), _do_recv_info(fd, ri))

/*
 * Receive exactly @n reports (in as many RECVs as it takes), waiting at
 * most @timeout_ms in all. Return: @n, or what came before the first error
 * or timeout (a short count is the caller's failure).
 */
static inline int _recv_n(int fd, __u32 cq, struct trs_logic_cqe *cqes,
			  __u32 n, int timeout_ms)
{
	__u64 end = now_ns() + (__u64)timeout_ms * 1000000;
	__u32 got = 0;
	int r;

	while (got < n) {
		__u64 now = now_ns();
		int left = now >= end ? 0 : (int)((end - now) / 1000000) + 1;

		r = _do_recv(fd, cq, cqes + got, n - got, left);
		if (r == -EINTR)
			continue;
		if (r <= 0)
			break;
		got += r;
	}
	return (int)got;
}

#define do_recv_n(fd, cq, cqes, n) \
	ASSERT_EQ((int)(n), _recv_n(fd, cq, cqes, n, 10000))

/* ---------------------------------------------------------------------- */
/* SQEs                                                                   */

static inline void sqe_task(struct trs_sqe *s, __u8 type, __u16 stream,
			    __u16 task, bool wr_cqe, __u32 dur_ns, __u32 error)
{
	memset(s, 0, sizeof(*s));
	s->type = type;
	s->flags = wr_cqe ? TRS_SQE_F_WR_CQE : 0;
	s->rt_stream_id = stream;
	s->task_id = task;
	s->task.sim_duration_ns = dur_ns;
	s->task.sim_error = error;
}

static inline void sqe_mark(struct trs_sqe *s, __u16 stream, __u16 task,
			    __u64 index_id, __u16 tag)
{
	memset(s, 0, sizeof(*s));
	s->type = TRS_SQE_PLACE_HOLDER;
	s->flags = TRS_SQE_F_WR_CQE;
	s->block_dim = TRS_TASK_PROFILER_TRACE_EX;
	s->rt_stream_id = stream;
	s->task_id = task;
	s->place_holder.profiler_trace_id = index_id;
	s->place_holder.model_id = TRS_MODEL_ID_NONE;
	s->place_holder.tag_id = tag;
}

/* ---------------------------------------------------------------------- */
/* npusim controls                                                        */

static inline int _do_stats(int fd, struct npusim_stats *st)
{
	return xioctl(fd, NPUSIM_IOC_STATS, st);
}

#define do_stats(fd, st)	ASSERT_EQ(0, _do_stats(fd, st))

static inline int _do_get_config(int fd, struct npusim_config *c)
{
	return xioctl(fd, NPUSIM_IOC_GET_CONFIG, c);
}

static inline int _do_set_config(int fd, struct npusim_config *c)
{
	return xioctl(fd, NPUSIM_IOC_SET_CONFIG, c);
}

#define do_get_config(fd, c)		ASSERT_EQ(0, _do_get_config(fd, c))
#define do_set_config(fd, c)		ASSERT_EQ(0, _do_set_config(fd, c))
#define do_set_config_err(e, fd, c)	EXPECT_EQ(-(e), _do_set_config(fd, c))

static inline int _do_clock(int fd, struct npusim_clock *c)
{
	return xioctl(fd, NPUSIM_IOC_CLOCK, c);
}

#define do_clock(fd, c)		ASSERT_EQ(0, _do_clock(fd, c))

/* Return: records written (>= 0) or -errno. */
static inline int _do_truth(int fd, __u32 sq, __u64 seq,
			    struct npusim_task_truth *out, __u32 n,
			    __u64 *next_seq)
{
	struct npusim_truth_query q = {
		.sq_id = sq, .count = n, .seq = seq,
		.addr = (__u64)(uintptr_t)out,
	};
	int err = xioctl(fd, NPUSIM_IOC_TRUTH, &q);

	if (err)
		return err;
	if (next_seq)
		*next_seq = q.next_seq;
	return (int)q.count;
}

#define do_truth(fd, sq, seq, out, n) \
	ASSERT_EQ((int)(n), _do_truth(fd, sq, seq, out, n, NULL))
#define do_truth_err(e, fd, sq, seq, out, n) \
	EXPECT_EQ(-(e), _do_truth(fd, sq, seq, out, n, NULL))

/* Wait until no task is queued or running. Return: 0 or -ETIMEDOUT. */
static inline int _wait_idle(int fd, int timeout_ms)
{
	__u64 end = now_ns() + (__u64)timeout_ms * 1000000;
	struct npusim_stats st;

	do {
		if (_do_stats(fd, &st))
			return -errno;
		if (!st.tasks_queued)
			return 0;
		usleep(1000);
	} while (now_ns() < end);
	return -ETIMEDOUT;
}

#define wait_idle(fd)	ASSERT_EQ(0, _wait_idle(fd, 10000))

/*
 * The totals that a failed call must leave alone (the live counts too,
 * when nothing runs meanwhile).
 */
#define EXPECT_STATS_EQ(a, b) do {					\
	EXPECT_EQ((a).fds, (b).fds);					\
	EXPECT_EQ((a).sqs, (b).sqs);					\
	EXPECT_EQ((a).cqs, (b).cqs);					\
	EXPECT_EQ((a).tasks_queued, (b).tasks_queued);			\
	EXPECT_EQ((a).reports_pending, (b).reports_pending);		\
	EXPECT_EQ((a).submitted, (b).submitted);			\
	EXPECT_EQ((a).completed, (b).completed);			\
	EXPECT_EQ((a).reports, (b).reports);				\
	EXPECT_EQ((a).cancelled, (b).cancelled);			\
	EXPECT_EQ((a).errors, (b).errors);				\
} while (0)

/*
 * One task with a report, and that report: proves an SQ/CQ pair still
 * works (after an error, say). Return: 0, or -errno / -EPROTO.
 */
static inline int _roundtrip(int fd, __u32 sq, __u32 cq, __u16 task)
{
	struct trs_logic_cqe c;
	struct trs_sqe s;
	__u32 pos;
	int r;

	sqe_task(&s, TRS_SQE_FFTS, 7, task, true, 1000, 0);
	r = _do_send(fd, sq, &s, 1, -1, &pos);
	if (r)
		return r;
	r = _recv_n(fd, cq, &c, 1, 5000);
	if (r != 1)
		return -ETIMEDOUT;
	if (c.task_id != task || c.stream_id != 7 || c.sq_id != sq ||
	    c.error_code || c.flags & TRS_CQE_F_ERROR)
		return -EPROTO;
	return 0;
}

#define do_roundtrip(fd, sq, cq, task) \
	ASSERT_EQ(0, _roundtrip(fd, sq, cq, task))

/* Ticks of the device counter at host time @ns, as the header defines. */
static inline __u64 ns_to_ticks(const struct npusim_clock *c, __u64 ns)
{
	return c->counter_epoch +
	       (__u64)((unsigned __int128)ns * c->counter_freq_hz / 1000000000u);
}

#endif /* _NPUSIM_TEST_H */
