/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the npusim VM tests: the TRS and npusim ioctls through the
 * header's structs, in the helper-triple style:
 *   _do_x(...)          returns 0 or -errno, asserts nothing;
 *   do_x(...)           ASSERTs success (in a TEST/TEST_F body);
 *   do_x_err(E, ...)    EXPECTs failure with errno E.
 * The tests check the module against the semantics documented in
 * include/uapi/ascend_trs.h, not against its source.
 *
 * Waits are on state (SQ head, truth, statistics), polled; never a fixed
 * sleep that assumes how fast the simulator is.
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
#include <stdio.h>
#include <sys/syscall.h>
#include <npusim_abi.h>
#include "kselftest_harness.h"

#define NPUSIM_DEV	"/dev/" NPUSIM_DEV_NAME
#define WAIT_MS		20000	/* how long a wait on state may take (TCG) */

static inline __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline void pause_us(unsigned int us)
{
	struct timespec t = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&t, NULL);
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

#define _do_bind_dev(fd, dev) \
	_do_manager(fd, ASCEND_MANAGER_OPEN, ASCEND_MODULE_TSDRV, dev)
#define _do_bind(fd)	_do_bind_dev(fd, 0)
#define do_bind(fd)	ASSERT_EQ(0, _do_bind(fd))

/* Open the node; bound to sub-driver @module of device @dev unless @dev < 0. */
static inline int _do_open_module(const char *module, int dev)
{
	int fd = open(NPUSIM_DEV, O_RDWR | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	if (dev >= 0) {
		err = _do_manager(fd, ASCEND_MANAGER_OPEN, module, dev);
		if (err) {
			close(fd);
			return err;
		}
	}
	return fd;
}

#define _do_open_dev(dev)	_do_open_module(ASCEND_MODULE_TSDRV, dev)
#define _do_open(bind)	_do_open_dev((bind) ? 0 : -1)

#define do_open_module(fdp, module, dev) do {				\
	*(fdp) = _do_open_module(module, dev);				\
	ASSERT_LE(0, *(fdp)) TH_LOG("open %s: %s", NPUSIM_DEV,		\
				    strerror(-*(fdp)));			\
} while (0)
#define do_open_dev(fdp, dev)	do_open_module(fdp, ASCEND_MODULE_TSDRV, dev)
/* Bound to URD, the device management sub-driver (DMS queries). */
#define do_open_urd(fdp)	do_open_module(fdp, ASCEND_MODULE_URD, 0)
#define do_open(fdp, bind)	do_open_dev(fdp, (bind) ? 0 : -1)

/* ---------------------------------------------------------------------- */
/* resource ids                                                           */

static inline int _do_res_id(int fd, unsigned long cmd, __u32 ts, int type,
			     __u32 *id)
{
	struct trs_res_id_para p = { .tsid = ts, .res_type = type, .id = *id };
	int err = xioctl(fd, cmd, &p);

	if (!err)
		*id = p.id;
	return err;
}

static inline int _do_stream_alloc(int fd, __u32 ts, __u32 *id)
{
	*id = 0;
	return _do_res_id(fd, TRS_IOC_RES_ID_ALLOC, ts, TRS_RES_STREAM, id);
}

static inline int _do_stream_free(int fd, __u32 ts, __u32 id)
{
	return _do_res_id(fd, TRS_IOC_RES_ID_FREE, ts, TRS_RES_STREAM, &id);
}

#define do_stream_alloc(fd, ts, id)	ASSERT_EQ(0, _do_stream_alloc(fd, ts, id))
#define do_stream_free(fd, ts, id)	ASSERT_EQ(0, _do_stream_free(fd, ts, id))

/* ---------------------------------------------------------------------- */
/* ALLOC / FREE                                                           */

/*
 * An SQ-CQ pair (type NORMAL) for @stream on TS @ts. @uio may be NULL
 * (kernel mode); with REUSE_CQ in @flag, @cq names the CQ to share.
 */
static inline void alloc_info_init(struct trs_sqcq_alloc_info *ai, __u32 ts,
				   __u32 stream, __u32 depth, __u32 flag,
				   struct trs_uio_info *uio)
{
	memset(ai, 0, sizeof(*ai));
	ai->type = TRS_SQCQ_TYPE_NORMAL;
	ai->tsId = ts;
	ai->sqeSize = TRS_SQE_SIZE;
	ai->cqeSize = TRS_HW_CQE_SIZE;
	ai->sqeDepth = depth;
	ai->cqeDepth = depth;
	ai->flag = flag;
	ai->info[0] = stream;
	ai->uio_info = (__u64)(uintptr_t)uio;
}

static inline int _do_alloc_info(int fd, struct trs_sqcq_alloc_info *ai)
{
	return xioctl(fd, TRS_IOC_SQCQ_ALLOC, ai);
}

static inline int _do_sq_alloc(int fd, __u32 ts, __u32 stream, __u32 depth,
			       __u32 flag, __u32 *sq, __u32 *cq,
			       struct trs_uio_info *uio)
{
	struct trs_uio_info local = {};
	struct trs_sqcq_alloc_info ai;
	int err;

	alloc_info_init(&ai, ts, stream, depth, flag, uio ? uio : &local);
	ai.cqId = *cq;
	err = _do_alloc_info(fd, &ai);
	if (!err) {
		*sq = ai.sqId;
		*cq = ai.cqId;
	}
	return err;
}

#define do_sq_alloc(fd, ts, stream, depth, sq, cq) do {			\
	*(cq) = 0;							\
	ASSERT_EQ(0, _do_sq_alloc(fd, ts, stream, depth, 0, sq, cq, NULL)); \
} while (0)
#define do_alloc_info_err(e, fd, ai) EXPECT_EQ(-(e), _do_alloc_info(fd, ai))

/* A logic CQ (type LOGIC, sqId 0, cqeSize 32) for @stream. */
static inline void logic_alloc_info_init(struct trs_sqcq_alloc_info *ai,
					 __u32 ts, __u32 stream, __u32 depth,
					 struct trs_uio_info *uio)
{
	memset(ai, 0, sizeof(*ai));
	ai->type = TRS_SQCQ_TYPE_LOGIC;
	ai->tsId = ts;
	ai->cqeSize = TRS_CQE_SIZE;
	ai->cqeDepth = depth;
	ai->info[0] = stream;
	ai->info[1] = (__u32)syscall(SYS_gettid);
	ai->uio_info = (__u64)(uintptr_t)uio;
}

static inline int _do_lcq_alloc(int fd, __u32 ts, __u32 stream, __u32 depth,
				__u32 *lcq)
{
	struct trs_uio_info uio = {};
	struct trs_sqcq_alloc_info ai;
	int err;

	logic_alloc_info_init(&ai, ts, stream, depth, &uio);
	err = _do_alloc_info(fd, &ai);
	if (!err)
		*lcq = ai.cqId;
	return err;
}

#define do_lcq_alloc(fd, ts, stream, depth, lcq) \
	ASSERT_EQ(0, _do_lcq_alloc(fd, ts, stream, depth, lcq))

static inline int _do_free_type(int fd, __u32 type, __u32 ts, __u32 sq,
				__u32 cq, __u32 flag)
{
	struct trs_sqcq_free_info fi = {
		.type = type, .tsId = ts, .sqId = sq, .cqId = cq, .flag = flag,
	};

	return xioctl(fd, TRS_IOC_SQCQ_FREE, &fi);
}

#define _do_sq_free(fd, ts, sq, cq) \
	_do_free_type(fd, TRS_SQCQ_TYPE_NORMAL, ts, sq, cq, 0)
#define _do_lcq_free(fd, ts, lcq) \
	_do_free_type(fd, TRS_SQCQ_TYPE_LOGIC, ts, 0, lcq, 0)
#define do_sq_free(fd, ts, sq, cq)	ASSERT_EQ(0, _do_sq_free(fd, ts, sq, cq))
#define do_lcq_free(fd, ts, lcq)	ASSERT_EQ(0, _do_lcq_free(fd, ts, lcq))

/* ---------------------------------------------------------------------- */
/* SEND / RECV / QUERY / CONFIG                                           */

static inline void send_info_init(struct trs_task_send_info *si, __u32 ts,
				  __u32 sq, const void *sqes, __u32 n,
				  int timeout)
{
	memset(si, 0, sizeof(*si));
	si->type = TRS_SQCQ_TYPE_NORMAL;
	si->tsId = ts;
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

static inline int _do_send_ts(int fd, __u32 ts, __u32 sq, const void *sqes,
			      __u32 n, int timeout, __u32 *pos)
{
	struct trs_task_send_info si;
	int err;

	send_info_init(&si, ts, sq, sqes, n, timeout);
	err = _do_send_info(fd, &si);
	if (!err && pos)
		*pos = si.pos;
	return err;
}

#define _do_send(fd, sq, sqes, n, timeout, pos) \
	_do_send_ts(fd, 0, sq, sqes, n, timeout, pos)
#define do_send(fd, sq, sqes, n, pos) \
	ASSERT_EQ(0, _do_send(fd, sq, sqes, n, -1, pos))
#define do_send_err(e, fd, sq, sqes, n) \
	EXPECT_EQ(-(e), _do_send(fd, sq, sqes, n, 0, NULL))
#define do_send_info_err(e, fd, si) EXPECT_EQ(-(e), _do_send_info(fd, si))

static inline void recv_info_init(struct trs_report_recv_info *ri, __u32 type,
				  __u32 ts, __u32 cq, void *cqes, __u32 n,
				  int timeout)
{
	memset(ri, 0, sizeof(*ri));
	ri->type = type;
	ri->tsId = ts;
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

/* Return: reports received (>= 0), or -errno. */
static inline int _do_recv_type(int fd, __u32 type, __u32 ts, __u32 cq,
				void *cqes, __u32 n, int timeout)
{
	struct trs_report_recv_info ri;
	int err;

	recv_info_init(&ri, type, ts, cq, cqes, n, timeout);
	err = _do_recv_info(fd, &ri);
	return err ? err : (int)ri.report_cqe_num;
}

/* RECV of logic CQEs on logic CQ @lcq of TS 0. */
#define _do_recv(fd, lcq, cqes, n, timeout) \
	_do_recv_type(fd, TRS_SQCQ_TYPE_LOGIC, 0, lcq, cqes, n, timeout)
#define do_recv_err(e, fd, lcq, cqes, n, timeout) \
	EXPECT_EQ(-(e), _do_recv(fd, lcq, cqes, n, timeout))
#define do_recv_info_err(e, fd, ri) EXPECT_EQ(-(e), _do_recv_info(fd, ri))

/*
 * Receive exactly @n reports of @type (in as many RECVs as it takes),
 * waiting at most @timeout_ms in all. Return: @n, or what came before the
 * first error or timeout (a short count is the caller's failure).
 */
static inline int _recv_n_type(int fd, __u32 type, __u32 ts, __u32 cq,
			       void *cqes, __u32 n, int timeout_ms)
{
	__u64 end = now_ns() + (__u64)timeout_ms * 1000000;
	size_t esize = type == TRS_SQCQ_TYPE_LOGIC ? TRS_CQE_SIZE :
						     TRS_HW_CQE_SIZE;
	__u32 got = 0;
	int r;

	while (got < n) {
		__u64 now = now_ns();
		int left = now >= end ? 0 : (int)((end - now) / 1000000) + 1;

		r = _do_recv_type(fd, type, ts, cq, (char *)cqes + got * esize,
				  n - got, left);
		if (r == -EINTR)
			continue;
		if (r <= 0)
			break;
		got += r;
	}
	return (int)got;
}

#define _recv_n(fd, lcq, cqes, n, ms) \
	_recv_n_type(fd, TRS_SQCQ_TYPE_LOGIC, 0, lcq, cqes, n, ms)
#define do_recv_n(fd, lcq, cqes, n) \
	ASSERT_EQ((int)(n), _recv_n(fd, lcq, cqes, n, WAIT_MS))

static inline int _do_query(int fd, __u32 ts, __u32 sq, __u32 prop, __u32 *v)
{
	struct trs_sqcq_query_info q = {
		.type = TRS_SQCQ_TYPE_NORMAL, .tsId = ts, .sqId = sq,
		.prop = prop,
	};
	int err = xioctl(fd, TRS_IOC_SQCQ_QUERY, &q);

	if (!err)
		*v = q.value[0];
	return err;
}

static inline int _do_sq_config(int fd, __u32 ts, __u32 sq, __u32 prop)
{
	struct trs_sqcq_config_info c = {
		.type = TRS_SQCQ_TYPE_NORMAL, .tsId = ts, .sqId = sq,
		.prop = prop,
	};

	return xioctl(fd, TRS_IOC_SQCQ_CONFIG, &c);
}

#define do_sq_pause(fd, ts, sq) \
	ASSERT_EQ(0, _do_sq_config(fd, ts, sq, TRS_SQCQ_PROP_SQ_PAUSE))
#define do_sq_resume(fd, ts, sq) \
	ASSERT_EQ(0, _do_sq_config(fd, ts, sq, TRS_SQCQ_PROP_SQ_RESUME))

/* Wait until QUERY SQ_HEAD says @pos. Return: 0, or -errno/-ETIMEDOUT. */
static inline int _wait_head(int fd, __u32 ts, __u32 sq, __u32 pos)
{
	__u64 end = now_ns() + (__u64)WAIT_MS * 1000000;
	__u32 head;
	int err;

	do {
		err = _do_query(fd, ts, sq, TRS_SQCQ_PROP_SQ_HEAD, &head);
		if (err)
			return err;
		if (head == pos)
			return 0;
		pause_us(100);
	} while (now_ns() < end);
	return -ETIMEDOUT;
}

#define wait_head(fd, ts, sq, pos) ASSERT_EQ(0, _wait_head(fd, ts, sq, pos))

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

/* A step mark; CANN's have no wr_cqe, @wr_cqe asks for a report anyway. */
static inline void sqe_mark(struct trs_sqe *s, __u16 stream, __u16 task,
			    __u64 index_id, __u16 tag, bool wr_cqe)
{
	memset(s, 0, sizeof(*s));
	s->type = TRS_SQE_PLACE_HOLDER;
	s->flags = wr_cqe ? TRS_SQE_F_WR_CQE : 0;
	s->block_dim = TRS_TASK_PROFILER_TRACE_EX;
	s->rt_stream_id = stream;
	s->task_id = task;
	s->place_holder.profiler_trace_id = index_id;
	s->place_holder.model_id = TRS_MODEL_ID_NONE;
	s->place_holder.tag_id = tag;
}

static inline void sqe_task_v2(struct trs_sqe_v2 *s, __u8 type, __u32 task,
			       bool wr_cqe, __u32 dur_ns, __u32 error)
{
	memset(s, 0, sizeof(*s));
	s->type = type;
	s->flags = wr_cqe ? TRS_SQE_V2_F_WR_CQE : 0;
	s->task_id = task;
	s->task.sim_duration_ns = dur_ns;
	s->task.sim_error = error;
}

/* ---------------------------------------------------------------------- */
/* npusim controls                                                        */

static inline int _do_stats(int fd, struct npusim_stats *st)
{
	return xioctl(fd, NPUSIM_IOC_STATS, st);
}

#define do_stats(fd, st)	ASSERT_EQ(0, _do_stats(fd, st))

static inline int _do_get_config_dev(int fd, __u32 dev, struct npusim_config *c)
{
	memset(c, 0, sizeof(*c));
	c->device = dev;
	return xioctl(fd, NPUSIM_IOC_GET_CONFIG, c);
}

static inline int _do_set_config(int fd, struct npusim_config *c)
{
	return xioctl(fd, NPUSIM_IOC_SET_CONFIG, c);
}

#define do_get_config_dev(fd, dev, c) \
	ASSERT_EQ(0, _do_get_config_dev(fd, dev, c))
#define do_get_config(fd, c)		do_get_config_dev(fd, 0, c)
#define do_set_config(fd, c)		ASSERT_EQ(0, _do_set_config(fd, c))
#define do_set_config_err(e, fd, c)	EXPECT_EQ(-(e), _do_set_config(fd, c))

/* Restore device @dev's whole configuration to @c (from a GET). */
static inline int _config_restore(int fd, const struct npusim_config *c)
{
	struct npusim_config r = *c;

	r.mask = NPUSIM_CFG_ALL;
	return _do_set_config(fd, &r);
}

static inline int _do_clock_dev(int fd, __u32 dev, struct npusim_clock *c)
{
	memset(c, 0, sizeof(*c));
	c->device = dev;
	return xioctl(fd, NPUSIM_IOC_CLOCK, c);
}

#define do_clock_dev(fd, dev, c)	ASSERT_EQ(0, _do_clock_dev(fd, dev, c))
#define do_clock(fd, c)			do_clock_dev(fd, 0, c)

static inline int _do_fail_nth(int fd, __u32 nth)
{
	struct npusim_fail_nth f = { .nth = nth };

	return xioctl(fd, NPUSIM_IOC_FAIL_NTH, &f);
}

/* Return: records written (>= 0) or -errno. */
static inline int _do_truth_ts(int fd, __u32 ts, __u32 sq, __u64 seq,
			       struct npusim_task_truth *out, __u32 n,
			       __u64 *next_seq)
{
	struct npusim_truth_query q = {
		.sq_id = sq, .count = n, .seq = seq, .ts_id = ts,
		.addr = (__u64)(uintptr_t)out,
	};
	int err = xioctl(fd, NPUSIM_IOC_TRUTH, &q);

	if (err)
		return err;
	if (next_seq)
		*next_seq = q.next_seq;
	return (int)q.count;
}

#define _do_truth(fd, sq, seq, out, n, next) \
	_do_truth_ts(fd, 0, sq, seq, out, n, next)
#define do_truth(fd, sq, seq, out, n) \
	ASSERT_EQ((int)(n), _do_truth(fd, sq, seq, out, n, NULL))
#define do_truth_err(e, fd, sq, seq, out, n) \
	EXPECT_EQ(-(e), _do_truth(fd, sq, seq, out, n, NULL))

/* Wait until task @seq of SQ @sq has state @state. Return: 0 or -errno. */
static inline int _wait_task_state(int fd, __u32 ts, __u32 sq, __u64 seq,
				   __u32 state)
{
	__u64 end = now_ns() + (__u64)WAIT_MS * 1000000;
	struct npusim_task_truth t;
	int r;

	do {
		r = _do_truth_ts(fd, ts, sq, seq, &t, 1, NULL);
		if (r < 0)
			return r;
		if (r == 1 && t.state == state)
			return 0;
		pause_us(100);
	} while (now_ns() < end);
	return -ETIMEDOUT;
}

#define wait_task_state(fd, ts, sq, seq, state) \
	ASSERT_EQ(0, _wait_task_state(fd, ts, sq, seq, state))

/* Wait until no task is queued or running anywhere. */
static inline int _wait_idle(int fd, int timeout_ms)
{
	__u64 end = now_ns() + (__u64)timeout_ms * 1000000;
	struct npusim_stats st;

	do {
		if (_do_stats(fd, &st))
			return -errno;
		if (!st.tasks_queued)
			return 0;
		pause_us(500);
	} while (now_ns() < end);
	return -ETIMEDOUT;
}

#define wait_idle(fd)	ASSERT_EQ(0, _wait_idle(fd, WAIT_MS))

/*
 * Wait until thread @tid of this process sleeps in an ioctl: the state to
 * wait for before acting on a blocked SEND or RECV. Return: 0 or
 * -ETIMEDOUT.
 */
static inline int _wait_blocked_in_ioctl_of(pid_t pid, pid_t tid)
{
	__u64 end = now_ns() + (__u64)WAIT_MS * 1000000;
	char path[64], buf[256], *p;
	long nr;
	int fd, n;

	do {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid,
			 tid);
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		nr = n > 0 ? (buf[n] = 0, strtol(buf, NULL, 10)) : -1;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		p = n > 0 ? (buf[n] = 0, strrchr(buf, ')')) : NULL;
		if (nr == SYS_ioctl && p && p[1] == ' ' && p[2] == 'S')
			return 0;
		pause_us(200);
	} while (now_ns() < end);
	return -ETIMEDOUT;
}

#define _wait_blocked_in_ioctl(tid) _wait_blocked_in_ioctl_of(getpid(), tid)
#define wait_blocked_in_ioctl(tid) ASSERT_EQ(0, _wait_blocked_in_ioctl(tid))

/* The live objects of a stats snapshot: all must come back. */
#define EXPECT_LIVE_EQ(a, b) do {					\
	EXPECT_EQ((a).fds, (b).fds);					\
	EXPECT_EQ((a).sqs, (b).sqs);					\
	EXPECT_EQ((a).cqs, (b).cqs);					\
	EXPECT_EQ((a).logic_cqs, (b).logic_cqs);			\
	EXPECT_EQ((a).res_ids, (b).res_ids);				\
	EXPECT_EQ((a).tasks_queued, (b).tasks_queued);			\
	EXPECT_EQ((a).reports_pending, (b).reports_pending);		\
	EXPECT_EQ((a).kmem_bytes, (b).kmem_bytes);			\
} while (0)

static inline bool live_eq(const struct npusim_stats *a,
			   const struct npusim_stats *b)
{
	return a->fds == b->fds && a->sqs == b->sqs && a->cqs == b->cqs &&
	       a->logic_cqs == b->logic_cqs && a->res_ids == b->res_ids &&
	       a->tasks_queued == b->tasks_queued &&
	       a->reports_pending == b->reports_pending &&
	       a->kmem_bytes == b->kmem_bytes;
}

/*
 * Wait until the live counters are @base's again (a release can finish
 * after close() returns, when a mapping or an ioctl in flight held on).
 * Return: 0 or -ETIMEDOUT; @st is the last snapshot.
 */
static inline int _wait_live(int fd, const struct npusim_stats *base,
			     struct npusim_stats *st)
{
	__u64 end = now_ns() + (__u64)WAIT_MS * 1000000;

	do {
		if (_do_stats(fd, st))
			return -errno;
		if (live_eq(base, st))
			return 0;
		pause_us(500);
	} while (now_ns() < end);
	return -ETIMEDOUT;
}

#define wait_live(fd, base, st) ASSERT_EQ(0, _wait_live(fd, base, st))

/* The totals that a failed call must leave alone, and the live counts. */
#define EXPECT_STATS_EQ(a, b) do {					\
	EXPECT_LIVE_EQ(a, b);						\
	EXPECT_EQ((a).submitted, (b).submitted);			\
	EXPECT_EQ((a).completed, (b).completed);			\
	EXPECT_EQ((a).reports, (b).reports);				\
	EXPECT_EQ((a).cancelled, (b).cancelled);			\
	EXPECT_EQ((a).errors, (b).errors);				\
	EXPECT_EQ((a).report_drops, (b).report_drops);			\
} while (0)

/* ---------------------------------------------------------------------- */
/* A CANN-style stream: stream id, SQ-CQ pair, logic CQ                   */

/* Room for every report a test's SQ can make before it RECVs them. */
#define NPQ_LCQ_DEPTH	4096

struct npq {
	int fd;
	__u32 ts, stream, sq, cq, lcq;
};

static inline int _npq_create(struct npq *q, int fd, __u32 ts, __u32 depth)
{
	int err;

	q->fd = fd;
	q->ts = ts;
	q->cq = 0;
	err = _do_stream_alloc(fd, ts, &q->stream);
	if (!err)
		err = _do_sq_alloc(fd, ts, q->stream, depth, 0, &q->sq, &q->cq,
				   NULL);
	if (!err)
		err = _do_lcq_alloc(fd, ts, q->stream, NPQ_LCQ_DEPTH, &q->lcq);
	return err;
}

#define npq_create(q, fd, ts, depth) \
	ASSERT_EQ(0, _npq_create(q, fd, ts, depth))

static inline int _npq_destroy(struct npq *q)
{
	int err = _do_lcq_free(q->fd, q->ts, q->lcq);

	if (!err)
		err = _do_sq_free(q->fd, q->ts, q->sq, q->cq);
	if (!err)
		err = _do_stream_free(q->fd, q->ts, q->stream);
	return err;
}

#define npq_send(q, sqes, n, pos) \
	ASSERT_EQ(0, _do_send_ts((q)->fd, (q)->ts, (q)->sq, sqes, n, -1, pos))
#define npq_recv_n(q, cqes, n) \
	ASSERT_EQ((int)(n), _recv_n_type((q)->fd, TRS_SQCQ_TYPE_LOGIC, \
					 (q)->ts, (q)->lcq, cqes, n, WAIT_MS))

/*
 * One task with a report, and that report: proves a stream still works
 * (after an error, say). Return: 0, or -errno / -EPROTO.
 */
static inline int _roundtrip(struct npq *q, __u16 task)
{
	struct trs_logic_cqe c;
	struct trs_sqe s;
	__u32 pos;
	int r;

	sqe_task(&s, TRS_SQE_FFTS, q->stream, task, true, 1000, 0);
	r = _do_send_ts(q->fd, q->ts, q->sq, &s, 1, -1, &pos);
	if (r)
		return r;
	r = _recv_n_type(q->fd, TRS_SQCQ_TYPE_LOGIC, q->ts, q->lcq, &c, 1,
			 WAIT_MS);
	if (r != 1)
		return -ETIMEDOUT;
	if (c.task_id != task || c.stream_id != q->stream || c.sq_id != q->sq ||
	    c.error_code || c.flags & TRS_CQE_F_ERROR)
		return -EPROTO;
	return 0;
}

#define do_roundtrip(q, task)	ASSERT_EQ(0, _roundtrip(q, task))

/* Ticks of the device counter at host time @ns, as the header defines. */
static inline __u64 ns_to_ticks(const struct npusim_clock *c, __u64 ns)
{
	return c->counter_epoch +
	       (__u64)((unsigned __int128)ns * c->counter_freq_hz / 1000000000u);
}

#endif /* _NPUSIM_TEST_H */
