/* SPDX-License-Identifier: GPL-2.0 */
/*
 * npusim: internal interfaces between the device (npusim_main.c), the TRS
 * ioctls (npusim_trs.c), the queue objects (npusim_queue.c) and the
 * execution engine (npusim_engine.c).
 *
 * Locking: one mutex, ts->lock, protects every queue's state, the engine's
 * units and lists, the configuration and the statistics. It is a mutex, not
 * a spinlock, because everything runs in process context (ioctls and the
 * engine thread) and the engine allocates truth pages while holding it.
 * Nesting order: ctx->lock, then q->submit_lock or q->recv_lock, then
 * ts->lock. Nothing touches user memory with ts->lock or submit_lock held,
 * and no lock is held while waiting for SQ room or reports.
 */
#ifndef _NPUSIM_H
#define _NPUSIM_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/idr.h>
#include <linux/wait.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/fs.h>
#include <linux/mm.h>

#include "ascend_trs.h"

#define NPUSIM_TRUTH_PER_PAGE	(PAGE_SIZE / sizeof(struct npusim_task_truth))
#define NPUSIM_TRUTH_PAGES	DIV_ROUND_UP(NPUSIM_TRUTH_DEPTH, NPUSIM_TRUTH_PER_PAGE)

/* One SQ slot: the SQE as submitted, frozen for the engine. */
struct npusim_slot {
	struct trs_sqe	sqe;
	u64		enque_ticks;
	u32		bad;		/* NPUSIM_ERR_BAD_SQE when invalid */
};

/* An SQ and the CQ ALLOC created with it. */
struct npusim_queue {
	struct kref		ref;
	struct npusim_ts	*ts;
	struct npusim_ctx	*owner;
	struct list_head	ctx_node;	/* owner->queues, ctx->lock */
	struct list_head	ready_node;	/* ts->ready */
	struct list_head	mapped_node;	/* ts->mapped */
	u32			sq_id;
	u32			cq_id;
	u32			depth;
	u32			cq_depth;
	bool			mapped;
	bool			dead;		/* freed: no longer in the idrs */
	bool			on_ready;
	bool			running;	/* its head task is on a unit */
	bool			stalled;	/* waiting for CQ room */

	/* SQ: free-running counts; position = count % depth. */
	u64			head;		/* tasks completed */
	u64			tail;		/* tasks submitted (= next seq) */
	u64			last_end_ns;	/* its next task starts later */
	struct npusim_slot	*slots;
	u32			sq_want;	/* least room a SEND waits for */
	u64			sq_gen;		/* wakeups of sq_wait */
	struct mutex		submit_lock;	/* one batch at a time */
	wait_queue_head_t	sq_wait;	/* room in the SQ, or dead */

	/* Mapped SQ: the ring user space writes. */
	void			*ring;		/* vmalloc_user() */
	size_t			ring_size;

	/* CQ: a ring of unreceived reports. */
	struct trs_logic_cqe	*cqes;
	u32			cq_first;
	u32			cq_count;
	u32			cq_reserved;	/* reports of running tasks */
	u64			cq_gen;		/* reports ever written */
	struct mutex		recv_lock;	/* one taker of reports */
	wait_queue_head_t	cq_wait;	/* new report, or dead */

	/* Ground truth of the last NPUSIM_TRUTH_DEPTH tasks, page by page. */
	struct npusim_task_truth **truth;
};

/* An execution unit: runs the head task of one SQ. */
struct npusim_unit {
	struct npusim_queue	*q;		/* NULL: free */
	u64			free_ns;	/* when it last became free */
	u64			end_ns;		/* end of the running task */
	u32			error;		/* error of the running task */
	bool			report;		/* it writes a report */
};

/* The task scheduler instance: the whole simulated device. */
struct npusim_ts {
	struct mutex		lock;
	struct npusim_config	cfg;
	struct npusim_stats	stats;
	struct idr		sq_idr;
	struct idr		cq_idr;
	struct list_head	ready;		/* SQs waiting for a unit */
	struct list_head	mapped;		/* mapped SQs, polled */
	struct npusim_unit	units[NPUSIM_MAX_UNITS];
	struct task_struct	*engine;
	bool			kick;
};

/* Per open file. */
struct npusim_ctx {
	struct npusim_ts	*ts;
	struct mutex		lock;		/* bound, queues */
	bool			bound;
	struct list_head	queues;
};

/* One command of an ioctl table. */
struct npusim_ioctl {
	int		(*handler)(struct npusim_ctx *ctx, void *arg);
	unsigned int	cmd;		/* the exact value accepted */
	bool		out;		/* copy the argument back */
};

/* npusim_main.c */
long npusim_manager_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg);

/* npusim_ctl.c */
long npusim_ctl_ioctl(struct npusim_ctx *ctx, unsigned int cmd,
		      unsigned long arg);
int npusim_config_check(const struct npusim_config *cfg, u32 mask);

/* npusim_trs.c */
long npusim_trs_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
long npusim_ioctl_dispatch(const struct npusim_ioctl *c, void *buf,
			   struct npusim_ctx *ctx, unsigned int cmd,
			   unsigned long arg);

/* npusim_queue.c */
u64 npusim_ticks(const struct npusim_config *cfg, u64 ns);
int npusim_queue_alloc(struct npusim_ctx *ctx, bool mapped, u32 depth,
		       u32 cq_depth, struct npusim_queue **out);
void npusim_queue_destroy(struct npusim_queue *q);
void npusim_queue_put(struct npusim_queue *q);
struct npusim_queue *npusim_sq_get(struct npusim_ctx *ctx, u32 sq_id);
struct npusim_queue *npusim_cq_get(struct npusim_ctx *ctx, u32 cq_id);
struct npusim_task_truth *npusim_truth(struct npusim_queue *q, u64 seq);
int npusim_truth_prepare(struct npusim_queue *q, u64 seq, u32 n, gfp_t gfp);
void npusim_queue_push(struct npusim_queue *q, const struct trs_sqe *sqe,
		       u64 now, u32 bad);
int npusim_queue_mmap(struct npusim_ctx *ctx, struct vm_area_struct *vma);
noinline void npusim_logic_cq_enque(struct npusim_ts *ts, u32 logic_cq_id,
				    u32 stream_id, u32 task_id,
				    struct trs_logic_cqe *cqe);

/* npusim_engine.c */
int npusim_engine_start(struct npusim_ts *ts);
void npusim_engine_stop(struct npusim_ts *ts);
void npusim_engine_kick(struct npusim_ts *ts);
void npusim_engine_make_ready(struct npusim_queue *q);
void npusim_engine_cancel(struct npusim_queue *q);
bool npusim_sqe_valid(const struct trs_sqe *sqe);

#endif /* _NPUSIM_H */
