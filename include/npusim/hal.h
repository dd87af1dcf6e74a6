/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu HAL: a small user-space HAL for the TRS ioctl ABI (ascend_trs.h), with
 * the call shapes of Ascend's libascend_hal (halSqCqAllocate, halSqCqFree,
 * halSqTaskSend, halReportRecv on a device opened through the manager node)
 * and steptime's API rules: opaque objects, negative errno returns, NULL plus
 * errno for constructors. It drives npusim (the default device node) and,
 * except for the npu_sim_*() calls, anything speaking the same ABI.
 *
 * Three objects:
 *   struct npu_dev     a manager fd bound to TSDRV;
 *   struct npu_sqcq    one SQ and the CQ receiving its reports, sent to by
 *                      SQCQ_SEND or, when mapped ("UIO" mode), by writing
 *                      the user-mapped ring and moving its tail;
 *   struct npu_stream  an sqcq plus a stream id and a task id counter: what
 *                      a runtime calls a stream (submit, synchronize).
 *
 * Thread safety: the objects may be shared between threads. Sends to a
 * mapped pair, and each stream's submit and sync, are serialised by the
 * HAL; the ioctls by the driver. Destroying an object while another thread
 * uses it is the caller's bug. After fork() the child shares the fd, and
 * so the queues, but not the HAL's bookkeeping (task ids, stream counts):
 * only one of the two processes should use a given stream.
 */
#ifndef _NPUSIM_HAL_H
#define _NPUSIM_HAL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <ascend_trs.h>
#include <steptime/export.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NPU_DEFAULT_DEVICE	"/dev/" NPUSIM_DEV_NAME

struct npu_dev;
struct npu_sqcq;
struct npu_stream;

/* ---------------------------------------------------------------------- */
/* Device                                                                 */
/* ---------------------------------------------------------------------- */

/**
 * struct npu_dev_opts - how to open a device
 * @sz: sizeof(struct npu_dev_opts)
 * @path: manager node; NULL: $NPU_HAL_DEVICE, else NPU_DEFAULT_DEVICE
 * @device_id: device index passed to the manager's OPEN
 * @no_bind: open the node without OPEN("TSDRV"): only npu_sim_*() and
 *	npu_dev_fd() work on such a device (tests of unbound fds)
 */
struct npu_dev_opts {
	size_t sz;
	const char *path;
	int device_id;
	bool no_bind;
	size_t :0;
};

/**
 * npu_dev_open() - open the manager node and bind it to the task scheduler
 * @opts: NULL for the defaults
 *
 * Return: the device, or NULL with errno set (that of open(2) or of the
 * manager's OPEN; EINVAL for bad @opts; ENOMEM).
 */
STEPTIME_API struct npu_dev *npu_dev_open(const struct npu_dev_opts *opts);

/**
 * npu_dev_close() - close a device; NULL is a no-op
 *
 * Queues still allocated on it are freed by the driver (their tasks are
 * cancelled); their HAL objects must not be used afterwards, only freed.
 */
STEPTIME_API void npu_dev_close(struct npu_dev *dev);

/** npu_dev_fd() - the device's file descriptor (-EINVAL for NULL) */
STEPTIME_API int npu_dev_fd(const struct npu_dev *dev);

/* ---------------------------------------------------------------------- */
/* SQ/CQ pairs                                                            */
/* ---------------------------------------------------------------------- */

/**
 * struct npu_sqcq_opts - shape of a new SQ/CQ pair
 * @sz: sizeof(struct npu_sqcq_opts)
 * @sq_depth: SQ entries, 0: TRS_SQ_MAX_DEPTH
 * @cq_depth: CQ entries, 0: TRS_SQ_MAX_DEPTH
 * @mapped: map the SQ into this process (TRS_SQCQ_FLAG_SQ_MAPPED): sends
 *	write the ring and move its tail, with no ioctl
 */
struct npu_sqcq_opts {
	size_t sz;
	__u32 sq_depth;
	__u32 cq_depth;
	bool mapped;
	size_t :0;
};

/**
 * npu_sqcq_alloc() - allocate an SQ and its CQ (halSqCqAllocate)
 * @dev: an open device
 * @opts: NULL for the defaults
 *
 * Return: the pair, or NULL with errno (that of SQCQ_ALLOC or mmap(2);
 * EINVAL for bad arguments; ENOMEM).
 */
STEPTIME_API struct npu_sqcq *npu_sqcq_alloc(struct npu_dev *dev,
					     const struct npu_sqcq_opts *opts);

/**
 * npu_sqcq_free() - free the pair (halSqCqFree); NULL is a no-op
 *
 * Tasks still queued are cancelled by the driver; the object is released
 * even when SQCQ_FREE fails.
 *
 * Return: 0, or the negative errno of SQCQ_FREE.
 */
STEPTIME_API int npu_sqcq_free(struct npu_sqcq *q);

/** npu_sqcq_sq_id() - the SQ id (-EINVAL for NULL) */
STEPTIME_API int npu_sqcq_sq_id(const struct npu_sqcq *q);
/** npu_sqcq_cq_id() - the CQ id (-EINVAL for NULL) */
STEPTIME_API int npu_sqcq_cq_id(const struct npu_sqcq *q);
/** npu_sqcq_depth() - the SQ depth (-EINVAL for NULL) */
STEPTIME_API int npu_sqcq_depth(const struct npu_sqcq *q);
/** npu_sqcq_is_mapped() - whether sends go through the mapped ring */
STEPTIME_API bool npu_sqcq_is_mapped(const struct npu_sqcq *q);

/**
 * npu_sqcq_send() - submit @n SQEs in one batch (halSqTaskSend)
 * @q: the pair
 * @sqes: @n SQEs, sent as they are
 * @n: 1..SQ depth (mapped: 1..depth - 1)
 * @timeout_ms: wait for SQ room: 0 not at all, < 0 forever
 *
 * Return: the SQ position of the first SQE (>= 0); -EAGAIN (no room and
 * @timeout_ms 0), -ETIMEDOUT, or another negative errno of SQCQ_SEND.
 */
STEPTIME_API int npu_sqcq_send(struct npu_sqcq *q, const struct trs_sqe *sqes,
			       unsigned int n, int timeout_ms);

/**
 * struct npu_recv_opts - which reports to receive
 * @sz: sizeof(struct npu_recv_opts)
 * @match: only reports of @stream_id and @task_id (strict matching)
 * @stream_id: with @match
 * @task_id: with @match
 */
struct npu_recv_opts {
	size_t sz;
	bool match;
	__u16 stream_id;
	__u16 task_id;
	size_t :0;
};

/**
 * npu_sqcq_recv() - receive completion reports (halReportRecv)
 * @q: the pair
 * @cqes: room for @n reports
 * @n: >= 1
 * @timeout_ms: wait for the first report: 0 not at all, < 0 forever
 * @opts: NULL: any report
 *
 * Return: the number of reports written (>= 1); -ETIMEDOUT when none came
 * in time, or another negative errno of SQCQ_RECV.
 */
STEPTIME_API int npu_sqcq_recv(struct npu_sqcq *q, struct trs_logic_cqe *cqes,
			       unsigned int n, int timeout_ms,
			       const struct npu_recv_opts *opts);

/**
 * npu_sqcq_sq_head() - a mapped SQ's head as the device last published it
 *
 * Return: the head position (>= 0), or -EINVAL for an unmapped pair.
 */
STEPTIME_API int npu_sqcq_sq_head(const struct npu_sqcq *q);

/* ---------------------------------------------------------------------- */
/* SQE builders                                                           */
/* ---------------------------------------------------------------------- */

/**
 * struct npu_task_desc - a task SQE (npusim's conventions for time/errors)
 * @type: TRS_SQE_* (FFTS, AICPU, SDMA, ...)
 * @stream_id: rt_stream_id
 * @task_id: task_id
 * @wr_cqe: ask for a completion report
 * @duration_ns: simulated execution time, 0: the device default
 * @sim_error: make the task fail with this error code, 0: succeed
 */
struct npu_task_desc {
	__u8 type;
	__u16 stream_id;
	__u16 task_id;
	bool wr_cqe;
	__u32 duration_ns;
	__u32 sim_error;
};

/** npu_sqe_task() - fill @sqe (all 64 bytes) as @d says */
STEPTIME_API void npu_sqe_task(struct trs_sqe *sqe,
			       const struct npu_task_desc *d);

/**
 * npu_sqe_step_mark() - fill @sqe as CANN's step mark (rtProfilerTraceEx)
 *
 * A place-holder SQE of task type TRS_TASK_PROFILER_TRACE_EX carrying
 * {@index_id, TRS_MODEL_ID_NONE, @tag}, with a report requested: the
 * report's timestamp is the device counter when the stream reached it.
 */
STEPTIME_API void npu_sqe_step_mark(struct trs_sqe *sqe, __u16 stream_id,
				    __u16 task_id, __u64 index_id, __u16 tag);

/* ---------------------------------------------------------------------- */
/* Streams                                                                */
/* ---------------------------------------------------------------------- */

/**
 * struct npu_stream_opts - a new stream
 * @sz: sizeof(struct npu_stream_opts)
 * @sq_depth: as for npu_sqcq_opts
 * @cq_depth: as for npu_sqcq_opts
 * @mapped: as for npu_sqcq_opts
 * @stream_id: < 0: the SQ id (unique on the device); else this id
 * @on_report: called for every report the stream receives, by
 *	npu_stream_sync() or by a submit that makes room in the CQ (reports
 *	are the stream's: they come from its own CQ); called with the
 *	stream's lock held, so it must not call the stream's functions
 * @ctx: passed to @on_report
 */
struct npu_stream_opts {
	size_t sz;
	__u32 sq_depth;
	__u32 cq_depth;
	bool mapped;
	int stream_id;
	void (*on_report)(const struct trs_logic_cqe *cqe, void *ctx);
	void *ctx;
	size_t :0;
};

/**
 * npu_stream_create() - a stream on its own SQ/CQ pair
 * @dev: an open device
 * @opts: NULL for the defaults
 *
 * The stream is registered: npu_stream_is_valid() recognises it until
 * npu_stream_destroy().
 *
 * Return: the stream, or NULL with errno (as npu_sqcq_alloc()).
 */
STEPTIME_API struct npu_stream *
npu_stream_create(struct npu_dev *dev, const struct npu_stream_opts *opts);

/** npu_stream_destroy() - unregister and free; NULL is a no-op */
STEPTIME_API void npu_stream_destroy(struct npu_stream *s);

/**
 * npu_stream_is_valid() - whether @p is a live stream of this process
 *
 * Only compares @p with the registered streams: @p is never dereferenced,
 * so any pointer (another runtime's stream, garbage) may be passed.
 *
 * Return: 1 for a stream created by npu_stream_create() and not destroyed,
 * else 0.
 */
STEPTIME_API int npu_stream_is_valid(const void *p);

/** npu_stream_id() - the stream id (-EINVAL when not a valid stream) */
STEPTIME_API int npu_stream_id(const void *stream);

/** npu_stream_sqcq() - the stream's SQ/CQ pair (NULL with EINVAL) */
STEPTIME_API struct npu_sqcq *npu_stream_sqcq(const struct npu_stream *s);

/**
 * npu_stream_submit() - submit @n SQEs in order on @stream
 * @stream: a valid stream
 * @sqes: sent with rt_stream_id and task_id replaced by the stream's id
 *	and its next task ids (a u16 counter that wraps); @sqes is not
 *	modified
 * @n: 1..SQ depth
 *
 * Waits for SQ room as long as needed.
 *
 * Return: the task id of the first SQE (>= 0), or a negative errno
 * (-EINVAL for an invalid stream, else as npu_sqcq_send()).
 */
STEPTIME_API int npu_stream_submit(void *stream, const struct trs_sqe *sqes,
				   unsigned int n);

/**
 * npu_stream_mark_step() - submit a step mark (npu_sqe_step_mark())
 *
 * Return: as npu_stream_submit().
 */
STEPTIME_API int npu_stream_mark_step(struct npu_stream *s, __u64 index_id,
				      __u16 tag);

/**
 * npu_stream_sync() - wait until every task submitted so far completed
 * @s: the stream
 * @timeout_ms: < 0: forever
 *
 * When the last task submitted asked for no report, a report-writing
 * place-holder SQE (no step mark) is submitted after it; the wait ends at
 * the report of the last task, which (tasks of a stream run in order)
 * completes after every earlier one. Every report received on the way
 * goes to opts->on_report.
 *
 * Return: 0; -ETIMEDOUT; or another negative errno.
 */
STEPTIME_API int npu_stream_sync(struct npu_stream *s, int timeout_ms);

/**
 * npu_stream_stats() - counts of the stream's life
 * @submitted: tasks submitted (SQEs, including sync place-holders)
 * @reports: reports received (by npu_stream_sync() or a submit)
 * @errors: those reports with TRS_CQE_F_ERROR
 *
 * Any output pointer may be NULL.
 *
 * Return: 0, or -EINVAL for NULL @s.
 */
STEPTIME_API int npu_stream_stats(const struct npu_stream *s, __u64 *submitted,
				  __u64 *reports, __u64 *errors);

/* ---------------------------------------------------------------------- */
/* npusim only (magic 'N'); any device, bound or not                      */
/* ---------------------------------------------------------------------- */

/** npu_sim_get_config() - NPUSIM_IOC_GET_CONFIG; 0 or a negative errno */
STEPTIME_API int npu_sim_get_config(struct npu_dev *dev,
				    struct npusim_config *cfg);

/**
 * npu_sim_set_config() - NPUSIM_IOC_SET_CONFIG of the fields in cfg->mask
 *
 * Return: 0 or a negative errno (-EBUSY: the change needs an idle device).
 */
STEPTIME_API int npu_sim_set_config(struct npu_dev *dev,
				    const struct npusim_config *cfg);

/**
 * npu_sim_truth() - ground truth of tasks @seq.. of an SQ of @dev
 * @out: room for @n records
 * @next_seq: if not NULL, set to the number of tasks submitted to the SQ
 *
 * Return: the number of records written (0 when @seq >= *next_seq), or a
 * negative errno (-ENOENT: @seq no longer kept).
 */
STEPTIME_API int npu_sim_truth(struct npu_dev *dev, __u32 sq_id, __u64 seq,
			       struct npusim_task_truth *out, unsigned int n,
			       __u64 *next_seq);

/** npu_sim_stats() - NPUSIM_IOC_STATS; 0 or a negative errno */
STEPTIME_API int npu_sim_stats(struct npu_dev *dev, struct npusim_stats *st);

/** npu_sim_clock() - NPUSIM_IOC_CLOCK; 0 or a negative errno */
STEPTIME_API int npu_sim_clock(struct npu_dev *dev, struct npusim_clock *clk);

#ifdef __cplusplus
}
#endif

#endif /* _NPUSIM_HAL_H */
