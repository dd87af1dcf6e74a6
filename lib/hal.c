// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * npu HAL: the TRS ioctl ABI behind libascend_hal-shaped calls. See
 * include/npusim/hal.h for the contracts.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <npusim/hal.h>

struct npu_dev {
	int fd;
};

struct npu_sqcq {
	struct npu_dev *dev;
	__u32 sq_id;
	__u32 cq_id;
	__u32 depth;
	__u32 cq_depth;
	pthread_mutex_t lock;		/* one sender at a time on the ring */
	struct npusim_sq_ctrl *ctrl;	/* mapped SQ, else NULL */
	struct trs_sqe *ring;
	size_t map_len;
};

struct npu_stream {
	struct npu_stream *next;	/* registry chain */
	struct npu_sqcq *q;
	__u16 stream_id;
	pthread_mutex_t lock;
	__u16 next_task;
	bool last_reports;		/* the last SQE sent asked for a report */
	bool idle;			/* the last SQE's report was received */
	__u16 last_task;
	__u32 tail;			/* SQ position after the last SQE */
	__u64 submitted;
	__u64 wr_cqe_sent;		/* SQEs that asked for a report */
	__u64 reports;
	__u64 errors;
	void (*on_report)(const struct trs_logic_cqe *cqe, void *ctx);
	void *ctx;
};

/* Same rule as libbpf's OPTS_VALID: unknown trailing bytes must be zero. */
static bool opts_valid(const void *opts, size_t user_sz, size_t our_sz)
{
	const char *p = opts;
	size_t i;

	if (!opts)
		return true;
	if (user_sz < sizeof(size_t))
		return false;
	for (i = our_sz; i < user_sz; i++)
		if (p[i])
			return false;
	return true;
}

#define OPTS_GET(opts, field, def)					\
	((opts) && (opts)->sz >= offsetof(typeof(*(opts)), field) +	\
		   sizeof((opts)->field) ? (opts)->field : (def))

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* ---------------------------------------------------------------------- */

struct npu_dev *npu_dev_open(const struct npu_dev_opts *opts)
{
	struct ascend_manager_arg arg = { .module_name = ASCEND_MODULE_TSDRV };
	const char *path;
	struct npu_dev *dev;
	int err;

	if (!opts_valid(opts, opts ? opts->sz : 0, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	path = OPTS_GET(opts, path, NULL);
	if (!path)
		path = getenv("NPU_HAL_DEVICE");
	if (!path || !*path)
		path = NPU_DEFAULT_DEVICE;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->fd = open(path, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0)
		goto err_free;
	if (!OPTS_GET(opts, no_bind, false)) {
		arg.device_id = OPTS_GET(opts, device_id, 0);
		err = xioctl(dev->fd, ASCEND_MANAGER_OPEN, &arg);
		if (err) {
			close(dev->fd);
			errno = -err;
			goto err_free;
		}
	}
	return dev;

err_free:
	err = errno;
	free(dev);
	errno = err;
	return NULL;
}

void npu_dev_close(struct npu_dev *dev)
{
	if (!dev)
		return;
	close(dev->fd);
	free(dev);
}

int npu_dev_fd(const struct npu_dev *dev)
{
	return dev ? dev->fd : -EINVAL;
}

/* ---------------------------------------------------------------------- */

/* ALLOC mapped the queue: sq_que_addr is its first SQE slot. */
static int sqcq_map(struct npu_sqcq *q, const struct trs_uio_info *uio)
{
	if (!uio->uio_flag)
		return -EOPNOTSUPP;
	q->map_len = NPUSIM_SQ_MMAP_SIZE(q->depth);
	q->ctrl = (void *)(uintptr_t)(uio->sq_que_addr - NPUSIM_SQ_MMAP_SQE_OFF);
	q->ring = (struct trs_sqe *)(uintptr_t)uio->sq_que_addr;
	return 0;
}

static int sqcq_ioctl_free(struct npu_sqcq *q)
{
	struct trs_sqcq_free_info fi = {
		.type = TRS_SQCQ_TYPE_NORMAL,
		.sqId = q->sq_id,
		.cqId = q->cq_id,
	};

	return xioctl(q->dev->fd, TRS_IOC_SQCQ_FREE, &fi);
}

struct npu_sqcq *npu_sqcq_alloc(struct npu_dev *dev,
				const struct npu_sqcq_opts *opts)
{
	struct trs_uio_info uio = {};
	struct trs_sqcq_alloc_info ai = {
		.type = TRS_SQCQ_TYPE_NORMAL,
		.sqeSize = TRS_SQE_SIZE,
		.cqeSize = TRS_CQE_SIZE,
		.info = { TRS_STREAM_ID_NONE },
		.uio_info = (uintptr_t)&uio,
	};
	struct npu_sqcq *q;
	int err;

	if (!dev || !opts_valid(opts, opts ? opts->sz : 0, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	ai.sqeDepth = OPTS_GET(opts, sq_depth, 0) ?: 1024;
	ai.cqeDepth = OPTS_GET(opts, cq_depth, 0) ?: 1024;
	if (OPTS_GET(opts, mapped, false))
		uio.sq_que_addr = 1;	/* asks for a mapped SQ */

	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	err = xioctl(dev->fd, TRS_IOC_SQCQ_ALLOC, &ai);
	if (err)
		goto err_free;
	q->dev = dev;
	q->sq_id = ai.sqId;
	q->cq_id = ai.cqId;
	q->depth = ai.sqeDepth;
	q->cq_depth = ai.cqeDepth;
	pthread_mutex_init(&q->lock, NULL);
	if (uio.sq_que_addr) {
		err = sqcq_map(q, &uio);
		if (err) {
			sqcq_ioctl_free(q);
			pthread_mutex_destroy(&q->lock);
			goto err_free;
		}
	}
	return q;

err_free:
	free(q);
	errno = -err;
	return NULL;
}

int npu_sqcq_free(struct npu_sqcq *q)
{
	int err;

	if (!q)
		return 0;
	err = sqcq_ioctl_free(q);
	if (q->ctrl)
		munmap(q->ctrl, q->map_len);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return err;
}

int npu_sqcq_sq_id(const struct npu_sqcq *q)
{
	return q ? (int)q->sq_id : -EINVAL;
}

int npu_sqcq_cq_id(const struct npu_sqcq *q)
{
	return q ? (int)q->cq_id : -EINVAL;
}

int npu_sqcq_depth(const struct npu_sqcq *q)
{
	return q ? (int)q->depth : -EINVAL;
}

bool npu_sqcq_is_mapped(const struct npu_sqcq *q)
{
	return q && q->ctrl;
}

int npu_sqcq_sq_head(const struct npu_sqcq *q)
{
	if (!q || !q->ctrl)
		return -EINVAL;
	return (int)__atomic_load_n(&q->ctrl->head, __ATOMIC_ACQUIRE);
}

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Free slots of a mapped ring: tail == head is empty, so one stays unused. */
static __u32 ring_room(const struct npu_sqcq *q, __u32 tail)
{
	__u32 head = __atomic_load_n(&q->ctrl->head, __ATOMIC_ACQUIRE);

	return (head + q->depth - tail - 1) % q->depth;
}

static int mapped_send(struct npu_sqcq *q, const struct trs_sqe *sqes,
		       unsigned int n, int timeout_ms)
{
	/* The engine polls every NPUSIM_UIO_POLL_US: no point in less. */
	const struct timespec nap = { .tv_nsec = NPUSIM_UIO_POLL_US * 1000 };
	__u64 deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	__u32 tail, i;

	if (n < 1 || n >= q->depth)
		return -EINVAL;
	tail = q->ctrl->tail;
	while (ring_room(q, tail) < n) {
		if (!timeout_ms)
			return -EAGAIN;
		if (timeout_ms > 0 && now_ms() >= deadline)
			return -ETIMEDOUT;
		nanosleep(&nap, NULL);
	}
	for (i = 0; i < n; i++)
		q->ring[(tail + i) % q->depth] = sqes[i];
	__atomic_store_n(&q->ctrl->tail, (tail + n) % q->depth, __ATOMIC_RELEASE);
	return (int)tail;
}

int npu_sqcq_send(struct npu_sqcq *q, const struct trs_sqe *sqes,
		  unsigned int n, int timeout_ms)
{
	struct trs_task_send_info si = {
		.type = TRS_TASK_TYPE_NORMAL,
		.timeout = timeout_ms,
		.sqe_addr = (__u64)(uintptr_t)sqes,
		.sqe_num = n,
	};
	int err;

	if (!q || !sqes)
		return -EINVAL;
	if (q->ctrl) {
		pthread_mutex_lock(&q->lock);
		err = mapped_send(q, sqes, n, timeout_ms);
		pthread_mutex_unlock(&q->lock);
		return err;
	}
	si.sqId = q->sq_id;
	err = xioctl(q->dev->fd, TRS_IOC_SQCQ_SEND, &si);
	return err ? err : (int)si.pos;
}

int npu_sqcq_recv(struct npu_sqcq *q, struct trs_logic_cqe *cqes,
		  unsigned int n, int timeout_ms,
		  const struct npu_recv_opts *opts)
{
	struct trs_report_recv_info ri = {
		.type = TRS_SQCQ_TYPE_NORMAL,
		.timeout = timeout_ms,
		.cqe_addr = (__u64)(uintptr_t)cqes,
		.cqe_num = n,
		.task_id = TRS_REPORT_TASK_ANY,
	};
	int err;

	if (!q || !cqes || !n ||
	    !opts_valid(opts, opts ? opts->sz : 0, sizeof(*opts)))
		return -EINVAL;
	ri.cqId = q->cq_id;
	if (OPTS_GET(opts, match, false)) {
		ri.stream_id = OPTS_GET(opts, stream_id, 0);
		ri.task_id = OPTS_GET(opts, task_id, 0);
	}
	err = xioctl(q->dev->fd, TRS_IOC_SQCQ_RECV, &ri);
	if (err)
		return err;
	/* A driver that says "success" but wrote nothing timed out. */
	return ri.report_cqe_num ? (int)ri.report_cqe_num : -ETIMEDOUT;
}

/* ---------------------------------------------------------------------- */

void npu_sqe_task(struct trs_sqe *sqe, const struct npu_task_desc *d)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->type = d->type & TRS_SQE_TYPE_MASK;
	sqe->flags = d->wr_cqe ? TRS_SQE_F_WR_CQE : 0;
	sqe->rt_stream_id = d->stream_id;
	sqe->task_id = d->task_id;
	sqe->task.sim_duration_ns = d->duration_ns;
	sqe->task.sim_error = d->sim_error;
}

void npu_sqe_step_mark(struct trs_sqe *sqe, __u16 stream_id, __u16 task_id,
		       __u64 index_id, __u16 tag)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->type = TRS_SQE_PLACE_HOLDER;
	sqe->flags = TRS_SQE_F_WR_CQE;
	sqe->block_dim = TRS_TASK_PROFILER_TRACE_EX;
	sqe->rt_stream_id = stream_id;
	sqe->task_id = task_id;
	sqe->place_holder.profiler_trace_id = index_id;
	sqe->place_holder.model_id = TRS_MODEL_ID_NONE;
	sqe->place_holder.tag_id = tag;
}

/* ---------------------------------------------------------------------- */
/* Stream registry: pointers only, so foreign pointers are never touched. */

#define REG_BUCKETS 64

static struct {
	pthread_mutex_t lock;
	struct npu_stream *bucket[REG_BUCKETS];
} reg = { .lock = PTHREAD_MUTEX_INITIALIZER };

static unsigned int reg_hash(const void *p)
{
	uintptr_t v = (uintptr_t)p;

	return (unsigned int)((v >> 4) ^ (v >> 12)) % REG_BUCKETS;
}

static void reg_add(struct npu_stream *s)
{
	unsigned int h = reg_hash(s);

	pthread_mutex_lock(&reg.lock);
	s->next = reg.bucket[h];
	reg.bucket[h] = s;
	pthread_mutex_unlock(&reg.lock);
}

static void reg_del(struct npu_stream *s)
{
	struct npu_stream **pp;

	pthread_mutex_lock(&reg.lock);
	for (pp = &reg.bucket[reg_hash(s)]; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&reg.lock);
}

int npu_stream_is_valid(const void *p)
{
	const struct npu_stream *s;
	int found = 0;

	if (!p)
		return 0;
	pthread_mutex_lock(&reg.lock);
	for (s = reg.bucket[reg_hash(p)]; s && !found; s = s->next)
		found = (const void *)s == p;
	pthread_mutex_unlock(&reg.lock);
	return found;
}

struct npu_stream *npu_stream_create(struct npu_dev *dev,
				     const struct npu_stream_opts *opts)
{
	struct npu_sqcq_opts qo = { .sz = sizeof(qo) };
	struct npu_stream *s;
	int id, err;

	if (!opts_valid(opts, opts ? opts->sz : 0, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	id = OPTS_GET(opts, stream_id, -1);
	if (id > 0xffff) {
		errno = EINVAL;
		return NULL;
	}
	qo.sq_depth = OPTS_GET(opts, sq_depth, 0);
	qo.cq_depth = OPTS_GET(opts, cq_depth, 0);
	qo.mapped = OPTS_GET(opts, mapped, false);

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->q = npu_sqcq_alloc(dev, &qo);
	if (!s->q) {
		err = errno;
		free(s);
		errno = err;
		return NULL;
	}
	s->stream_id = id < 0 ? (__u16)s->q->sq_id : (__u16)id;
	s->on_report = OPTS_GET(opts, on_report, NULL);
	s->ctx = OPTS_GET(opts, ctx, NULL);
	pthread_mutex_init(&s->lock, NULL);
	reg_add(s);
	return s;
}

void npu_stream_destroy(struct npu_stream *s)
{
	if (!s)
		return;
	reg_del(s);
	npu_sqcq_free(s->q);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int npu_stream_id(const void *stream)
{
	if (!npu_stream_is_valid(stream))
		return -EINVAL;
	return ((const struct npu_stream *)stream)->stream_id;
}

struct npu_sqcq *npu_stream_sqcq(const struct npu_stream *s)
{
	if (!s) {
		errno = EINVAL;
		return NULL;
	}
	return s->q;
}

static bool is_last(const struct npu_stream *s, const struct trs_logic_cqe *c)
{
	return c->stream_id == s->stream_id && c->task_id == s->last_task &&
	       c->sq_id == s->q->sq_id && c->sq_head == s->tail;
}

static void stream_account(struct npu_stream *s,
			   const struct trs_logic_cqe *c, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (s->submitted && is_last(s, &c[i]))
			s->idle = true;
		s->reports++;
		if (c[i].flags & TRS_CQE_F_ERROR)
			s->errors++;
		if (s->on_report)
			s->on_report(&c[i], s->ctx);
	}
}

/* Take what reports are there without waiting; caller holds s->lock. */
static void stream_drain(struct npu_stream *s)
{
	struct trs_logic_cqe c[64];
	int n;

	while ((n = npu_sqcq_recv(s->q, c, 64, 0, NULL)) > 0)
		stream_account(s, c, n);
}

/*
 * Whether the reports asked for and not yet received could fill the CQ,
 * which would stall the SQ (failed tasks report too: hence half).
 */
static bool stream_backlogged(const struct npu_stream *s)
{
	__u64 backlog = s->wr_cqe_sent > s->reports ?
			s->wr_cqe_sent - s->reports : 0;

	return backlog >= s->q->cq_depth / 2;
}

static int stream_send(struct npu_stream *s, const struct trs_sqe *sqes,
		       unsigned int n)
{
	struct trs_sqe stack[16], *buf = stack;
	unsigned int i;
	int first, pos;

	if (n > 16) {
		buf = malloc(n * sizeof(*buf));
		if (!buf)
			return -ENOMEM;
	}
	first = s->next_task;
	for (i = 0; i < n; i++) {
		buf[i] = sqes[i];
		buf[i].rt_stream_id = s->stream_id;
		buf[i].task_id = s->next_task++;
		if (buf[i].flags & TRS_SQE_F_WR_CQE)
			s->wr_cqe_sent++;
	}
	/*
	 * A full CQ stalls the SQ, so a sender waiting for SQ room forever
	 * could wait for itself: wait in slices and make room in between.
	 */
	for (;;) {
		if (stream_backlogged(s))
			stream_drain(s);
		pos = npu_sqcq_send(s->q, buf, n, 100);
		if (pos != -ETIMEDOUT && pos != -EAGAIN && pos != -EINTR)
			break;
	}
	if (pos >= 0) {
		s->submitted += n;
		s->tail = (pos + n) % s->q->depth;
		s->last_task = buf[n - 1].task_id;
		s->last_reports = buf[n - 1].flags & TRS_SQE_F_WR_CQE;
		s->idle = false;
	} else {
		s->next_task = first;
		for (i = 0; i < n; i++)
			if (buf[i].flags & TRS_SQE_F_WR_CQE)
				s->wr_cqe_sent--;
	}
	if (buf != stack)
		free(buf);
	return pos < 0 ? pos : first;
}

int npu_stream_submit(void *stream, const struct trs_sqe *sqes, unsigned int n)
{
	struct npu_stream *s = stream;
	int ret;

	if (!npu_stream_is_valid(stream) || !sqes || !n)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	ret = stream_send(s, sqes, n);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int npu_stream_mark_step(struct npu_stream *s, __u64 index_id, __u16 tag)
{
	struct trs_sqe sqe;

	npu_sqe_step_mark(&sqe, 0, 0, index_id, tag);
	return npu_stream_submit(s, &sqe, 1);
}

int npu_stream_sync(struct npu_stream *s, int timeout_ms)
{
	__u64 deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	struct trs_logic_cqe c[64];
	struct trs_sqe ph;
	int n, wait, err = 0;

	if (!npu_stream_is_valid(s))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	if (!s->submitted || s->idle)
		goto out;
	if (!s->last_reports) {
		memset(&ph, 0, sizeof(ph));
		ph.type = TRS_SQE_PLACE_HOLDER;
		ph.flags = TRS_SQE_F_WR_CQE;
		err = stream_send(s, &ph, 1);
		if (err < 0)
			goto out;
		err = 0;
	}
	while (!s->idle) {
		wait = -1;
		if (timeout_ms >= 0) {
			__u64 now = now_ms();

			wait = now >= deadline ? 0 : (int)(deadline - now);
		}
		n = npu_sqcq_recv(s->q, c, 64, wait, NULL);
		if (n == -EINTR)
			continue;
		if (n < 0) {
			err = n;
			break;
		}
		stream_account(s, c, n);
	}
out:
	pthread_mutex_unlock(&s->lock);
	return err;
}

int npu_stream_stats(const struct npu_stream *s, __u64 *submitted,
		     __u64 *reports, __u64 *errors)
{
	if (!s)
		return -EINVAL;
	if (submitted)
		*submitted = s->submitted;
	if (reports)
		*reports = s->reports;
	if (errors)
		*errors = s->errors;
	return 0;
}

/* ---------------------------------------------------------------------- */

int npu_sim_get_config(struct npu_dev *dev, struct npusim_config *cfg)
{
	if (!dev || !cfg)
		return -EINVAL;
	return xioctl(dev->fd, NPUSIM_IOC_GET_CONFIG, cfg);
}

int npu_sim_set_config(struct npu_dev *dev, const struct npusim_config *cfg)
{
	if (!dev || !cfg)
		return -EINVAL;
	return xioctl(dev->fd, NPUSIM_IOC_SET_CONFIG, (void *)cfg);
}

int npu_sim_truth(struct npu_dev *dev, __u32 sq_id, __u64 seq,
		  struct npusim_task_truth *out, unsigned int n, __u64 *next_seq)
{
	struct npusim_truth_query tq = {
		.sq_id = sq_id,
		.count = n,
		.seq = seq,
		.addr = (__u64)(uintptr_t)out,
	};
	int err;

	if (!dev || (!out && n))
		return -EINVAL;
	err = xioctl(dev->fd, NPUSIM_IOC_TRUTH, &tq);
	if (err)
		return err;
	if (next_seq)
		*next_seq = tq.next_seq;
	return (int)tq.count;
}

int npu_sim_stats(struct npu_dev *dev, struct npusim_stats *st)
{
	if (!dev || !st)
		return -EINVAL;
	return xioctl(dev->fd, NPUSIM_IOC_STATS, st);
}

int npu_sim_clock(struct npu_dev *dev, struct npusim_clock *clk)
{
	if (!dev || !clk)
		return -EINVAL;
	return xioctl(dev->fd, NPUSIM_IOC_CLOCK, clk);
}
