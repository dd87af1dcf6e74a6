/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu HAL: a small user-space HAL for the TRS ioctl ABI (ascend_trs.h), with
 * the call shapes of Ascend's libascend_hal (halSqCqAllocate, halSqCqFree,
 * halSqTaskSend, halReportRecv on a device opened through the manager node)
 * and steptime's API rules: opaque objects, negative errno returns, NULL plus
 * errno for constructors. It drives npusim (the default device node) and,
 * except for the npu_sim_*() calls, anything speaking the same ABI.
 *
 * It sits on the driver's user-space library, libascend_hal.so (npusim's
 * stand-in, sim/ascend_hal/, linked dynamically): a device opened without
 * @path or @no_bind is opened with halDeviceOpen() (once per process, as
 * CANN's runtime does), and its queues, ids, sends, reports and SQ queries
 * go through the library's hal* entry points, which always ask for a
 * mapped SQ (npusim picks the mode: by the chip, or config.uio_mode while
 * config.sq_mode is NPUSIM_SQ_MODE_CONFIG). A device opened with @path or
 * @no_bind, or a second one of the same id in one process (tests: fd
 * limits, isolation), has a fd of its own and issues the ioctls itself.
 *
 * Objects:
 *   struct npu_dev     a manager fd bound to TSDRV for one device (and one
 *                      TS of it): one per device, as CANN's runtime opens;
 *   struct npu_sqcq    one SQ and its hardware CQ, sent to by SQCQ_SEND or,
 *                      when the device mapped the SQ (trs_uio_info.uio_flag),
 *                      by writing the user-mapped ring and moving its tail;
 *   struct npu_stream  what CANN's runtime calls a stream, built as it
 *                      builds one (below);
 *   struct npu_event   an event recorded on a stream (aclrtRecordEvent).
 *
 * A stream, as CANN's runtime (hicann/runtime, StreamSqCqManage) makes it:
 *   1. a stream id from the device (TRS_RES_ID_ALLOC, res_type stream);
 *   2. an SQ-CQ pair (ALLOC type NORMAL, info[0] = stream id). On STARS
 *      chips (910B, the default) every stream has its own pair; in the
 *      pre-STARS mode (NPU_CHIP_PRE_STARS) every stream after the first of
 *      a device shares the first one's CQ (flag REUSE_CQ, cqId named);
 *   3. a logic CQ (ALLOC type LOGIC, sqId 0, cqeSize 32, info[0] = stream
 *      id, info[1] = thread id) that receives the stream's reports.
 * Submission follows the runtime's rules: ordinary tasks and step marks
 * (rtProfilerTraceEx's place-holder) carry no wr_cqe, so they make no
 * report; every NPU_RECYCLE_EVERY tasks the HAL inserts a recycle task
 * that asks for one and queries the SQ head (TryRecycleTask); timeline
 * events ask for one and get the device counter from it; synchronize
 * polls the SQ head (SQCQ_QUERY SQ_HEAD, or the mapped register of a
 * mapped SQ) until it reaches the stream's tail. A stream in a DVPP group
 * (opts->dvpp) asks for a report on every SQE, as CANN does for those:
 * that is the dense-report mode tests may choose, by name.
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
#include <npusim_abi.h>
#include <steptime/export.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NPU_DEFAULT_DEVICE	"/dev/" NPUSIM_DEV_NAME

/* CANN's TASK_QUERY_INTERVAL_NUM: the runtime's recycle interval. */
#define NPU_RECYCLE_EVERY	64
/* SQ depth CANN's runtime asks for on 910B. */
#define NPU_STREAM_SQ_DEPTH	2048
/* Task type of the recycle place-holder (CANN's TS_TASK_TYPE_MAINTENANCE). */
#define NPU_TASK_MAINTENANCE	6

struct npu_dev;
struct npu_sqcq;
struct npu_stream;
struct npu_event;

/**
 * enum npu_chip - how streams get their queues
 * @NPU_CHIP_AUTO: as the device says (npusim: its sqcq_pair parameter;
 *	another device: STARS)
 * @NPU_CHIP_STARS: one SQ-CQ pair per stream (910B, 910_93, 950)
 * @NPU_CHIP_PRE_STARS: streams after the first share its CQ (REUSE_CQ)
 */
enum npu_chip {
	NPU_CHIP_AUTO = 0,
	NPU_CHIP_STARS = 1,
	NPU_CHIP_PRE_STARS = 2,
};

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
 * @ts_id: the TS whose queues this device's objects use (tsId)
 * @chip: enum npu_chip, how streams get their queues
 */
struct npu_dev_opts {
	size_t sz;
	const char *path;
	int device_id;
	bool no_bind;
	__u32 ts_id;
	int chip;
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

/** npu_dev_id() - the device id given to OPEN (-EINVAL for NULL) */
STEPTIME_API int npu_dev_id(const struct npu_dev *dev);

/** npu_dev_ts_id() - the TS the device's queues use (-EINVAL for NULL) */
STEPTIME_API int npu_dev_ts_id(const struct npu_dev *dev);

/** npu_dev_chip() - NPU_CHIP_STARS or _PRE_STARS (-EINVAL for NULL) */
STEPTIME_API int npu_dev_chip(const struct npu_dev *dev);

/**
 * npu_dev_stars_version() - the SQE header the device reads: 1 (STARS v1,
 * struct trs_sqe) or 2 (v2, struct trs_sqe_v2; npusim's stars parameter)
 *
 * Streams convert the v1 SQEs they are given; npu_sqcq_send() sends the
 * bytes it is given (npu_sqe_to_v2() converts).
 */
STEPTIME_API int npu_dev_stars_version(const struct npu_dev *dev);

/**
 * npu_res_id_alloc() - a device resource id (TRS_RES_ID_ALLOC)
 * @res_type: TRS_RES_STREAM, TRS_RES_EVENT, ...
 *
 * Return: the id (>= 0) or a negative errno.
 */
STEPTIME_API int npu_res_id_alloc(struct npu_dev *dev, int res_type);

/**
 * struct npu_task_ops - a runtime's task path for a device
 * @max_sqes: the most SQEs one @send carries (one task)
 * @send: send one task of @n SQEs (halSqTaskSend's arguments), retrying as
 *	the runtime does for up to @timeout_ms; @pos out: its first position
 * @sq_head: the SQ's head, as halSqCqQuery(SQ_HEAD)
 * @sq_wait: read the SQ head until it is @pos, for up to @timeout_ms
 *
 * Each returns a drvError_t (sim/ascend_hal/ascend_hal.h). npusim's runtime,
 * sim/runtime's libruntime.so, is one (rt_sim.h).
 */
struct npu_task_ops {
	size_t sz;
	__u32 max_sqes;
	__s32 (*send)(__u32 dev, __u32 ts, __u32 sq, const void *sqes, __u32 n,
		      __s32 timeout_ms, __u32 *pos);
	__s32 (*sq_head)(__u32 dev, __u32 ts, __u32 sq, __u32 *head);
	__s32 (*sq_wait)(__u32 dev, __u32 ts, __u32 sq, __u32 pos,
			 __s32 timeout_ms);
	size_t :0;
};

/**
 * npu_dev_set_task_ops() - send through @ops from now on
 *
 * For a device opened through the driver's library: its streams send each
 * submit as tasks of at most @ops->max_sqes SQEs, one @ops->send each, read
 * their SQ head with @ops->sq_head, and a synchronize waits in
 * @ops->sq_wait. npu_sqcq_send() on such a device sends one task.
 *
 * Return: 0; -EINVAL for bad @ops; -EOPNOTSUPP for a device not opened
 * through the library.
 */
STEPTIME_API int npu_dev_set_task_ops(struct npu_dev *dev,
				      const struct npu_task_ops *ops);

/** npu_res_id_free() - TRS_RES_ID_FREE; 0 or a negative errno */
STEPTIME_API int npu_res_id_free(struct npu_dev *dev, int res_type, __u32 id);

/**
 * npu_dev_counter_freq() - the device counter's frequency
 * @hz: out
 *
 * Read from the device once and cached.
 *
 * Return: 0, or a negative errno (-ENOTTY: the device does not say).
 */
STEPTIME_API int npu_dev_counter_freq(struct npu_dev *dev, __u64 *hz);

/* ---------------------------------------------------------------------- */
/* SQ/CQ pairs                                                            */
/* ---------------------------------------------------------------------- */

/**
 * struct npu_sqcq_opts - shape of a new SQ/CQ pair
 * @sz: sizeof(struct npu_sqcq_opts)
 * @sq_depth: SQ entries, 0: TRS_SQ_MAX_DEPTH
 * @cq_depth: CQ entries, 0: TRS_SQ_MAX_DEPTH
 * @mapped: ask for a mapped SQ (a non-zero trs_uio_info.sq_que_addr):
 *	when the device grants it (uio_flag), sends write the ring and move
 *	its tail, with no ioctl. Ignored on a device opened through the
 *	driver's library: it always asks
 * @stream_id: ALLOC info[0]: a stream id from npu_res_id_alloc(); 0 is
 *	TRS_STREAM_ID_NONE unless @bind_stream
 * @bind_stream: use @stream_id even when it is 0
 * @reuse_cq: pre-STARS: share the CQ @cq_id (TSDRV_FLAG_REUSE_CQ)
 * @cq_id: with @reuse_cq
 */
struct npu_sqcq_opts {
	size_t sz;
	__u32 sq_depth;
	__u32 cq_depth;
	bool mapped;
	__u32 stream_id;
	bool bind_stream;
	bool reuse_cq;
	__u32 cq_id;
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
 * even when SQCQ_FREE fails. A pair allocated with @reuse_cq keeps the
 * shared CQ (FREE with TSDRV_FLAG_REUSE_CQ).
 *
 * Return: 0, or the negative errno of SQCQ_FREE.
 */
STEPTIME_API int npu_sqcq_free(struct npu_sqcq *q);

/**
 * npu_sqcq_free_flags() - npu_sqcq_free() with FREE's @flag given
 * (TSDRV_FLAG_REUSE_CQ: keep the CQ for other SQs)
 */
STEPTIME_API int npu_sqcq_free_flags(struct npu_sqcq *q, __u32 flag);

/** npu_sqcq_sq_id() - the SQ id (-EINVAL for NULL) */
STEPTIME_API int npu_sqcq_sq_id(const struct npu_sqcq *q);
/** npu_sqcq_cq_id() - the CQ id (-EINVAL for NULL) */
STEPTIME_API int npu_sqcq_cq_id(const struct npu_sqcq *q);
/** npu_sqcq_depth() - the SQ depth (-EINVAL for NULL) */
STEPTIME_API int npu_sqcq_depth(const struct npu_sqcq *q);
/** npu_sqcq_is_mapped() - whether sends go through the mapped ring */
STEPTIME_API bool npu_sqcq_is_mapped(const struct npu_sqcq *q);

/**
 * npu_sqcq_uio_info() - the struct trs_uio_info ALLOC returned (what the
 * device said about mapping: uio_flag, soft_que_flag)
 *
 * Return: 0, or -EINVAL for NULL arguments.
 */
STEPTIME_API int npu_sqcq_uio_info(const struct npu_sqcq *q,
				   struct trs_uio_info *info);

/**
 * npu_sqcq_query() - SQCQ_QUERY of the SQ
 * @prop: TRS_SQCQ_PROP_* (SQ_HEAD, SQ_TAIL, SQ_DEPTH, ...)
 *
 * Return: value[0] (>= 0), or a negative errno.
 */
STEPTIME_API long npu_sqcq_query(struct npu_sqcq *q, __u32 prop);

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
 * npu_sqcq_recv_hw() - receive hardware CQEs from the pair's CQ (RECV type
 * NORMAL): the reports of streams without a logic CQ. The pair's CQ has
 * the runtime's slot size (16 bytes; 32 on STARS v2, whose CQE is 20):
 * each CQE's first 16 bytes land in @cqes.
 * @q: the pair
 * @cqes: room for @n reports
 * @n: >= 1; at most 64 are received at once from 32-byte slots
 * @timeout_ms: wait for the first report: 0 not at all, < 0 forever
 *
 * Return: the number of reports written (>= 1); -ETIMEDOUT when none came
 * in time, or another negative errno of SQCQ_RECV.
 */
STEPTIME_API int npu_sqcq_recv_hw(struct npu_sqcq *q, struct trs_hw_cqe *cqes,
				  unsigned int n, int timeout_ms);

/**
 * npu_sqcq_recv() - npu_sqcq_recv_hw(), each report translated into the
 * logic CQE layout (stream_id, task_id, sq_id, sq_head, flags with
 * TRS_CQE_F_ERROR, timestamp or error_code)
 * @opts: must be NULL or without @match (match mode is a logic CQ's)
 */
STEPTIME_API int npu_sqcq_recv(struct npu_sqcq *q, struct trs_logic_cqe *cqes,
			       unsigned int n, int timeout_ms,
			       const struct npu_recv_opts *opts);

/* ---------------------------------------------------------------------- */
/* Logic CQs                                                              */
/* ---------------------------------------------------------------------- */

struct npu_logic_cq;

/**
 * npu_logic_cq_alloc() - a logic CQ bound to @stream_id (ALLOC type LOGIC,
 * sqId 0, cqeSize 32, info[0] = @stream_id, info[1] = the thread id)
 * @depth: reports it holds; 0: 1024
 *
 * Return: the CQ, or NULL with errno (that of SQCQ_ALLOC; ENOMEM).
 */
STEPTIME_API struct npu_logic_cq *npu_logic_cq_alloc(struct npu_dev *dev,
						     __u32 stream_id,
						     __u32 depth);

/** npu_logic_cq_free() - FREE type LOGIC; NULL is a no-op; 0 or -errno */
STEPTIME_API int npu_logic_cq_free(struct npu_logic_cq *cq);

/** npu_logic_cq_id() - its id (-EINVAL for NULL) */
STEPTIME_API int npu_logic_cq_id(const struct npu_logic_cq *cq);

/**
 * npu_logic_cq_recv() - RECV type LOGIC: 32-byte reports
 * @opts: NULL: in order; @match: match mode (res[0] = 1) for @stream_id
 *	and @task_id
 *
 * Return: as npu_sqcq_recv_hw().
 */
STEPTIME_API int npu_logic_cq_recv(struct npu_logic_cq *cq,
				   struct trs_logic_cqe *cqes, unsigned int n,
				   int timeout_ms,
				   const struct npu_recv_opts *opts);

/**
 * npu_sqcq_sq_head() - a mapped SQ's head register, as the device last
 * published it (what the runtime reads instead of SQCQ_QUERY)
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
 * npu_sqe_to_v2() - the STARS v2 form of a v1 SQE: wr_cqe/ie/pre_p/post_p
 * at their v2 bits, a 32-bit task id (@task_id), a place-holder's task
 * type at @12, no stream id (the SQ's), the payload from @16 as it is
 */
STEPTIME_API void npu_sqe_to_v2(struct trs_sqe_v2 *out,
				const struct trs_sqe *in, __u32 task_id);

/**
 * npu_sqe_step_mark() - fill @sqe as CANN's step mark (rtProfilerTraceEx)
 *
 * A place-holder SQE of task type TRS_TASK_PROFILER_TRACE_EX carrying
 * {@index_id, TRS_MODEL_ID_NONE, @tag}, pre_p set and wr_cqe clear, as
 * CANN's runtime builds it on an ordinary stream: the device makes no
 * report for it (a stream in a DVPP group sets wr_cqe on every SQE).
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
 * @stream_id: ignored (kept for source compatibility): the id always
 *	comes from the device (TRS_RES_ID_ALLOC), as the runtime's does;
 *	npusim refuses an SQ bound to a stream id the fd did not allocate
 * @on_report: called for every report the stream receives from its logic
 *	CQ, by npu_stream_sync(), an event query or a submit that makes
 *	room; called with the stream's lock held, so it must not call the
 *	stream's functions
 * @ctx: passed to @on_report
 * @recycle_every: insert a recycle task (wr_cqe) after this many tasks
 *	without a report; 0: NPU_RECYCLE_EVERY; UINT_MAX: never
 * @dvpp: a stream of a DVPP group: every SQE asks for a report
 *
 * @sq_depth 0 is NPU_STREAM_SQ_DEPTH (clamped to what the device allows),
 * @cq_depth 0 the device's default. @mapped asks for a mapped SQ, as the
 * user library does on PCIe-attached devices; the device decides
 * (npu_sqcq_is_mapped() says what it did).
 */
struct npu_stream_opts {
	size_t sz;
	__u32 sq_depth;
	__u32 cq_depth;
	bool mapped;
	int stream_id;
	void (*on_report)(const struct trs_logic_cqe *cqe, void *ctx);
	void *ctx;
	unsigned int recycle_every;
	bool dvpp;
	size_t :0;
};

/**
 * npu_stream_create() - a stream: stream id, SQ-CQ pair, logic CQ
 * @dev: an open device
 * @opts: NULL for the defaults
 *
 * The stream is registered: npu_stream_is_valid() recognises it until
 * npu_stream_destroy().
 *
 * Return: the stream, or NULL with errno (that of RES_ID_ALLOC, ALLOC or
 * mmap(2); EINVAL for bad @opts; ENOMEM).
 */
STEPTIME_API struct npu_stream *
npu_stream_create(struct npu_dev *dev, const struct npu_stream_opts *opts);

/**
 * npu_stream_destroy() - unregister and free; NULL is a no-op
 *
 * As CANN's Stream::TearDown: when tasks are still pending, submits a
 * recycle task and polls the SQ head until it reaches the tail (at most
 * 30 s; what is left then is cancelled by the driver). Then frees the
 * logic CQ, the SQ-CQ pair (in the pre-STARS mode the shared CQ goes with
 * the last stream) and the stream id. Events recorded on the stream and
 * not complete by then fail with -ECANCELED.
 */
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

/** npu_stream_logic_cq_id() - the stream's logic CQ id (-EINVAL for NULL) */
STEPTIME_API int npu_stream_logic_cq_id(const struct npu_stream *s);

/** npu_stream_dev() - the device of the stream (NULL with EINVAL) */
STEPTIME_API struct npu_dev *npu_stream_dev(const struct npu_stream *s);

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
 * wr_cqe is set only on a DVPP stream, as CANN's runtime sets it.
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
 * As CANN's runtime: polls the SQ head (SQCQ_QUERY prop SQ_HEAD; a mapped
 * SQ's head register) until it reaches the stream's tail, taking the
 * reports that arrive on the way (opts->on_report). Submits nothing.
 *
 * Return: 0; -ETIMEDOUT; or another negative errno.
 */
STEPTIME_API int npu_stream_sync(struct npu_stream *s, int timeout_ms);

/**
 * npu_stream_query() - whether every task submitted so far completed
 *
 * One SQ head query, no wait (CANN's Stream::Query on STARS).
 *
 * Return: 1 done, 0 not yet, or a negative errno.
 */
STEPTIME_API int npu_stream_query(struct npu_stream *s);

/**
 * npu_stream_sq_head() - the stream's SQ head, as the device says now
 *
 * SQCQ_QUERY SQ_HEAD for a kernel-mode SQ, the mapped head register for a
 * mapped one.
 *
 * Return: the head position (>= 0) or a negative errno.
 */
STEPTIME_API int npu_stream_sq_head(struct npu_stream *s);

/**
 * npu_stream_stats() - counts of the stream's life
 * @submitted: tasks submitted (SQEs, including recycle tasks)
 * @reports: reports received (from the stream's logic CQ)
 * @errors: those reports with TRS_CQE_F_ERROR
 *
 * Any output pointer may be NULL.
 *
 * Return: 0, or -EINVAL for NULL @s.
 */
STEPTIME_API int npu_stream_stats(const struct npu_stream *s, __u64 *submitted,
				  __u64 *reports, __u64 *errors);

/* ---------------------------------------------------------------------- */
/* Events                                                                 */
/* ---------------------------------------------------------------------- */

/* Event flags: CANN's RT_EVENT_* (and ACL_EVENT_*) bit values. */
#define NPU_EVENT_SYNC		0x01u	/* DDSYNC_NS: host may wait on it */
#define NPU_EVENT_STREAM_MARK	0x02u
#define NPU_EVENT_DDSYNC	0x04u
#define NPU_EVENT_TIME_LINE	0x08u	/* record the device counter */
#define NPU_EVENT_EXTERNAL	0x20u
#define NPU_EVENT_IPC		0x40u
/* aclrtCreateEvent()'s flags (RT_EVENT_DEFAULT). */
#define NPU_EVENT_DEFAULT	(NPU_EVENT_DDSYNC | NPU_EVENT_TIME_LINE | \
				 NPU_EVENT_STREAM_MARK)

/**
 * npu_event_create() - an event of @dev
 * @flags: NPU_EVENT_*
 *
 * Recording it submits what CANN's runtime submits for an event record on
 * STARS: a place-holder SQE for an event no task waits on (no SYNC,
 * DDSYNC, EXTERNAL or IPC flag), else an EVENT_RECORD SQE; wr_cqe set
 * when NPU_EVENT_TIME_LINE is: its report carries the device counter.
 *
 * Return: the event, or NULL with errno (EINVAL, ENOMEM).
 */
STEPTIME_API struct npu_event *npu_event_create(struct npu_dev *dev,
						__u32 flags);

/**
 * npu_event_destroy() - free an event; NULL is a no-op
 *
 * A record still pending is forgotten (its task still runs).
 */
STEPTIME_API void npu_event_destroy(struct npu_event *ev);

/**
 * npu_event_record() - record @ev on @s: it completes when @s reaches it
 *
 * A new record replaces the previous one (its timestamp is forgotten).
 *
 * Return: 0, or a negative errno (-EINVAL: NULL, not a stream, or a
 * stream of another device; else as npu_stream_submit()).
 */
STEPTIME_API int npu_event_record(struct npu_event *ev, struct npu_stream *s);

/**
 * npu_event_query() - whether the last record completed
 *
 * Takes the reports of the event's stream (and its SQ head, for an event
 * without a report); does not wait.
 *
 * Return: 1 complete, 0 not yet, -ENODATA never recorded, -ECANCELED its
 * stream was destroyed first, -EIO the record failed on the device, or
 * another negative errno.
 */
STEPTIME_API int npu_event_query(struct npu_event *ev);

/**
 * npu_event_sync() - wait for the last record to complete
 * @timeout_ms: < 0: forever
 *
 * Return: 0 (also for an event never recorded), -ETIMEDOUT, or as
 * npu_event_query().
 */
STEPTIME_API int npu_event_sync(struct npu_event *ev, int timeout_ms);

/**
 * npu_event_timestamp() - the device counter when the stream reached the
 * last record, from its report
 * @ticks: out, in device counter ticks (npu_dev_counter_freq())
 *
 * Return: 0; -ENODATA: never recorded, not complete yet, or no timestamp
 * (an event without NPU_EVENT_TIME_LINE); -EINVAL for NULL arguments.
 */
STEPTIME_API int npu_event_timestamp(const struct npu_event *ev,
				     __u64 *ticks);

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
/* The truth and config calls use the device's TS and device id. */

/** npu_sim_stats() - NPUSIM_IOC_STATS; 0 or a negative errno */
STEPTIME_API int npu_sim_stats(struct npu_dev *dev, struct npusim_stats *st);

/** npu_sim_clock() - NPUSIM_IOC_CLOCK; 0 or a negative errno */
STEPTIME_API int npu_sim_clock(struct npu_dev *dev, struct npusim_clock *clk);

#ifdef __cplusplus
}
#endif

#endif /* _NPUSIM_HAL_H */
