/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A runtime in miniature, written from ascend-abi.md sections 2-3: what
 * CANN's runtime does on the ioctl path, with nothing of the HAL. One
 * TSDRV fd per device; a stream is a RES_ID stream id, an SQ (ALLOC type
 * NORMAL, info[0] = stream) and a logic CQ (ALLOC type LOGIC, sqId 0,
 * info[0] = stream) that receives the stream's reports; completions are
 * learnt from sparse reports (wr_cqe) and from SQ_HEAD queries.
 */
#ifndef _STEPTIME_TRS_RAW_H
#define _STEPTIME_TRS_RAW_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "npusim_abi.h"

#define RAW_NODE	"/dev/" NPUSIM_DEV_NAME

struct raw_dev {
	int fd;
	int dev;
	unsigned int stars;	/* 1 or 2: the device's SQE header */
};

struct raw_stream {
	struct raw_dev *d;
	__u32 ts, stream, sq, cq, lcq;
	__u32 depth;
	bool logic;		/* reports go to a logic CQ */
	bool mapped;		/* a mapped SQ (uio_t or uio_d) */
	struct trs_uio_info uio;
	__u32 task_id;		/* next task id */
	__u64 submitted;	/* SQEs submitted */
	__u32 tail;		/* next SQ position */
};

static inline __u64 raw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline unsigned int raw_param(const char *name, unsigned int def)
{
	char path[128], buf[32] = "";
	int fd, n;

	snprintf(path, sizeof(path), "/sys/module/npusim/parameters/%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return def;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? (unsigned int)strtoul(buf, NULL, 0) : def;
}

static inline int raw_dev_open(struct raw_dev *d, int dev)
{
	struct ascend_manager_arg a = { .module_name = ASCEND_MODULE_TSDRV,
					.device_id = dev };

	d->dev = dev;
	d->stars = raw_param("stars", 1);
	d->fd = open(RAW_NODE, O_RDWR | O_CLOEXEC);
	if (d->fd < 0)
		return -errno;
	if (ioctl(d->fd, ASCEND_MANAGER_OPEN, &a)) {
		int err = -errno;

		close(d->fd);
		d->fd = -1;
		return err;
	}
	return 0;
}

static inline void raw_dev_close(struct raw_dev *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

struct raw_stream_opts {
	__u32 ts;
	__u32 depth;		/* default 1024 */
	bool no_logic;		/* reports stay in the SQ's CQ (RECV NORMAL) */
	bool mapped;		/* ask for a mapped SQ */
	struct raw_stream *reuse_cq;	/* pre-STARS: share this stream's CQ */
};

static inline int raw_stream_create(struct raw_dev *d, struct raw_stream *s,
				    const struct raw_stream_opts *o)
{
	struct trs_res_id_para r = { .tsid = o->ts, .res_type = TRS_RES_STREAM };
	struct trs_sqcq_alloc_info a = {};

	memset(s, 0, sizeof(*s));
	s->d = d;
	s->ts = o->ts;
	s->depth = o->depth ?: 1024;
	if (ioctl(d->fd, TRS_IOC_RES_ID_ALLOC, &r))
		return -errno;
	s->stream = r.id;
	a.type = TRS_SQCQ_TYPE_NORMAL;
	a.tsId = o->ts;
	a.sqeSize = TRS_SQE_SIZE;
	/* The runtime's: v2's 20-byte CQE takes a 32-byte slot. */
	a.cqeSize = d->stars == 2 ? TRS_HW_CQE_SLOT_V2 : TRS_HW_CQE_SIZE;
	a.sqeDepth = s->depth;
	a.cqeDepth = s->depth;
	a.info[0] = s->stream;
	a.uio_info = (__u64)(uintptr_t)&s->uio;
	if (o->mapped)
		s->uio.sq_que_addr = 1;	/* non-zero: asks for a mapped SQ */
	if (o->reuse_cq) {
		a.flag = TSDRV_FLAG_REUSE_CQ;
		a.cqId = o->reuse_cq->cq;
	}
	if (ioctl(d->fd, TRS_IOC_SQCQ_ALLOC, &a))
		return -errno;
	s->sq = a.sqId;
	s->cq = a.cqId;
	s->mapped = s->uio.uio_flag;
	if (o->no_logic)
		return 0;
	memset(&a, 0, sizeof(a));
	a.type = TRS_SQCQ_TYPE_LOGIC;
	a.tsId = o->ts;
	a.cqeSize = TRS_CQE_SIZE;
	a.cqeDepth = 4096;
	a.info[0] = s->stream;
	a.info[1] = (__u32)syscall(SYS_gettid);
	a.uio_info = (__u64)(uintptr_t)&(struct trs_uio_info){};
	if (ioctl(d->fd, TRS_IOC_SQCQ_ALLOC, &a))
		return -errno;
	s->lcq = a.cqId;
	s->logic = true;
	return 0;
}

static inline int raw_logic_free(struct raw_stream *s)
{
	struct trs_sqcq_free_info f = { .type = TRS_SQCQ_TYPE_LOGIC,
					.tsId = s->ts, .cqId = s->lcq };

	if (!s->logic)
		return 0;
	s->logic = false;
	return ioctl(s->d->fd, TRS_IOC_SQCQ_FREE, &f) ? -errno : 0;
}

static inline int raw_stream_destroy(struct raw_stream *s, bool shared_cq)
{
	struct trs_sqcq_free_info f = { .type = TRS_SQCQ_TYPE_NORMAL,
					.tsId = s->ts, .sqId = s->sq,
					.cqId = s->cq };
	struct trs_res_id_para r = { .tsid = s->ts, .res_type = TRS_RES_STREAM,
				     .id = s->stream };
	int err = raw_logic_free(s);

	if (shared_cq)
		f.flag = TSDRV_FLAG_REUSE_CQ;
	if (ioctl(s->d->fd, TRS_IOC_SQCQ_FREE, &f))
		err = err ?: -errno;
	if (ioctl(s->d->fd, TRS_IOC_RES_ID_FREE, &r))
		err = err ?: -errno;
	return err;
}

/* One SQE: an FFTS task, or a step mark (place-holder, task type 26). */
struct raw_task {
	bool wr_cqe;
	bool match;		/* v1: a match (synchronous) task */
	__u32 duration_ns;
	__u32 error;
	bool mark;
	__u64 index_id;		/* mark */
	__u16 tag;		/* mark: 0 START, 1 END */
};

static inline void raw_sqe(struct raw_stream *s, void *buf,
			   const struct raw_task *t)
{
	__u8 *b = buf;
	__u32 tid = s->task_id++;
	__u16 tt = TRS_TASK_PROFILER_TRACE_EX;

	memset(b, 0, TRS_SQE_SIZE);
	b[0] = t->mark ? TRS_SQE_PLACE_HOLDER : TRS_SQE_FFTS;
	if (s->d->stars >= 2) {
		b[1] = t->wr_cqe ? TRS_SQE_V2_F_WR_CQE : 0;
		memcpy(b + 4, &tid, 4);
		if (t->mark)
			memcpy(b + 12, &tt, 2);
	} else {
		__u16 sid = (__u16)s->stream | (t->match ? TRS_SQE_STREAM_MATCH : 0);
		__u16 tid16 = (__u16)tid;

		b[1] = t->wr_cqe ? TRS_SQE_F_WR_CQE : 0;
		if (t->mark)
			memcpy(b + 2, &tt, 2);
		memcpy(b + 4, &sid, 2);
		memcpy(b + 6, &tid16, 2);
	}
	if (t->mark) {
		__u64 model = TRS_MODEL_ID_NONE;

		memcpy(b + 16, &t->index_id, 8);
		memcpy(b + 24, &model, 8);
		memcpy(b + 32, &t->tag, 2);
	}
	memcpy(b + 56, &t->error, 4);
	memcpy(b + 60, &t->duration_ns, 4);
}

/* Submit @n SQEs: SEND for a kernel-mode SQ, ring and doorbell if mapped. */
static inline int raw_submit(struct raw_stream *s, const void *sqes, __u32 n)
{
	struct trs_task_send_info si = {
		.type = TRS_SQCQ_TYPE_NORMAL, .tsId = s->ts, .sqId = s->sq,
		.timeout = -1, .sqe_addr = (__u64)(uintptr_t)sqes,
		.sqe_num = n,
	};
	volatile __u32 *tail;
	__u8 *ring;
	__u32 i;

	if (!s->mapped) {
		if (ioctl(s->d->fd, TRS_IOC_SQCQ_SEND, &si))
			return -errno;
		s->submitted += n;
		s->tail = (si.pos + n) % s->depth;
		return 0;
	}
	ring = (__u8 *)(uintptr_t)s->uio.sq_que_addr;
	/* a 950's uio_d SQ has no tail word: the doorbell is its tail */
	tail = (volatile __u32 *)(uintptr_t)(s->uio.sq_ctrl_addr[TRS_UIO_TAIL] ?:
					     s->uio.sq_ctrl_addr[TRS_UIO_DB]);
	for (i = 0; i < n; i++) {
		memcpy(ring + (size_t)s->tail * TRS_SQE_SIZE,
		       (const __u8 *)sqes + (size_t)i * TRS_SQE_SIZE,
		       TRS_SQE_SIZE);
		s->tail = (s->tail + 1) % s->depth;
	}
	__atomic_store_n(tail, s->tail, __ATOMIC_RELEASE);	/* doorbell */
	/* then the user library's count in the shared page, if mapped */
	if (s->uio.sq_ctrl_addr[TRS_UIO_SHR_INFO])
		((struct trs_sq_shr_info *)(uintptr_t)
		 s->uio.sq_ctrl_addr[TRS_UIO_SHR_INFO])->send_ok += n;
	s->submitted += n;
	return 0;
}

/* Receive reports of the stream (logic CQ) or its SQ's CQ. */
static inline int raw_recv(struct raw_stream *s, void *cqes, __u32 max,
			   int timeout_ms, bool match, __u32 match_task)
{
	struct trs_report_recv_info ri = {
		.type = s->logic ? TRS_SQCQ_TYPE_LOGIC : TRS_SQCQ_TYPE_NORMAL,
		.tsId = s->ts, .cqId = s->logic ? s->lcq : s->cq,
		.timeout = timeout_ms, .cqe_addr = (__u64)(uintptr_t)cqes,
		.cqe_num = max,
	};

	if (match) {
		ri.res[0] = TRS_RECV_MATCH;
		ri.stream_id = s->stream;
		ri.task_id = match_task;
	}
	if (ioctl(s->d->fd, TRS_IOC_SQCQ_RECV, &ri))
		return -errno;
	return (int)ri.report_cqe_num;
}

static inline int raw_query(struct raw_stream *s, __u32 prop, __u32 *val)
{
	struct trs_sqcq_query_info q = { .type = TRS_SQCQ_TYPE_NORMAL,
					 .tsId = s->ts, .sqId = s->sq,
					 .cqId = s->cq, .prop = prop };

	if (ioctl(s->d->fd, TRS_IOC_SQCQ_QUERY, &q))
		return -errno;
	*val = q.value[0];
	return 0;
}

/*
 * The runtime's synchronize: drain reports (RECV, no wait) and query the
 * SQ head until it reaches the tail. A mapped SQ's head is a register the
 * runtime reads itself (the kernel sees no query).
 */
static inline int raw_sync(struct raw_stream *s, int timeout_ms)
{
	__u64 end = raw_now() + (__u64)timeout_ms * 1000000ull;
	__u8 cqe[64 * TRS_CQE_SIZE];
	__u32 head = 0;
	int n, err;

	for (;;) {
		do {
			n = raw_recv(s, cqe, 64, 0, false, 0);
		} while (n > 0);
		if (n < 0 && n != -ETIMEDOUT)
			return n;
		if (s->mapped) {
			volatile __u32 *h = (volatile __u32 *)(uintptr_t)
				s->uio.sq_ctrl_addr[TRS_UIO_HEAD];

			head = __atomic_load_n(h, __ATOMIC_ACQUIRE);
		} else {
			err = raw_query(s, TRS_SQCQ_PROP_SQ_HEAD, &head);
			if (err)
				return err;
		}
		if (head == s->tail)
			break;
		if (raw_now() > end)
			return -ETIMEDOUT;
		usleep(50);
	}
	/* Reports written by the last tasks. */
	do {
		n = raw_recv(s, cqe, 64, 0, false, 0);
	} while (n > 0);
	return 0;
}

static inline int raw_truth(struct raw_stream *s, __u64 seq,
			    struct npusim_task_truth *t, __u32 n,
			    __u64 *next_seq)
{
	struct npusim_truth_query q = {
		.sq_id = s->sq, .ts_id = s->ts, .count = n, .seq = seq,
		.addr = (__u64)(uintptr_t)t,
	};

	if (ioctl(s->d->fd, NPUSIM_IOC_TRUTH, &q))
		return -errno;
	if (next_seq)
		*next_seq = q.next_seq;
	return (int)q.count;
}

static inline int raw_config(int dev, __u32 mask, struct npusim_config *c)
{
	int fd = open(RAW_NODE, O_RDWR | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	c->device = dev;
	c->mask = mask;
	if (ioctl(fd, mask ? NPUSIM_IOC_SET_CONFIG : NPUSIM_IOC_GET_CONFIG, c))
		err = -errno;
	close(fd);
	return err;
}

/*
 * Name a mapped SQ mode on device @dev for the SQs created next: npusim's
 * config.uio_mode (NPUSIM_UIO_*), whatever the chip would pick (its
 * default, config.sq_mode CHIP). The config before goes in @old, for
 * raw_mode_restore().
 */
static inline int raw_mode_set(int dev, __u32 uio_mode,
			       struct npusim_config *old)
{
	struct npusim_config c = { .uio_mode = uio_mode,
				   .sq_mode = NPUSIM_SQ_MODE_CONFIG };
	int err = raw_config(dev, 0, old);

	return err ?: raw_config(dev, NPUSIM_CFG_UIO_MODE | NPUSIM_CFG_SQ_MODE,
				 &c);
}

static inline int raw_mode_restore(int dev, struct npusim_config *old)
{
	return raw_config(dev, NPUSIM_CFG_UIO_MODE | NPUSIM_CFG_SQ_MODE, old);
}

static inline int raw_stats(struct npusim_stats *st)
{
	int fd = open(RAW_NODE, O_RDWR | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, NPUSIM_IOC_STATS, st))
		err = -errno;
	close(fd);
	return err;
}

#endif /* _STEPTIME_TRS_RAW_H */
