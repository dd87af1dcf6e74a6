/* SPDX-License-Identifier: GPL-2.0 */
/*
 * npusim: internal interfaces between the device node (npusim_main.c), the
 * TRS ioctls (npusim_trs.c), the queue objects (npusim_queue.c), the
 * execution engine (npusim_engine.c), the simulator controls
 * (npusim_ctl.c) and the hooks tracers attach to (npusim_hooks.c).
 *
 * Model: npusim_devices devices of npusim_ts_per_device task schedulers
 * (struct npusim_ts). Every id (SQ, CQ, logic CQ, resource ids) lives in
 * one TS, as in the real driver, so ids collide across TS and devices.
 *
 * Locking: one mutex per TS, ts->lock, protects every object of that TS
 * (queues, CQs, streams, idrs), its engine's units and lists, its copy of
 * the device configuration and its statistics. Everything runs in process
 * context (ioctls and the TS's engine thread). Nesting order: ctx->lock,
 * then sq->submit_lock or cq->recv_lock, then ts->lock (the TS locks of
 * one device in TS order, for SET_CONFIG). Nothing touches user memory
 * with ts->lock held, and no lock is held while waiting for SQ room or
 * reports, or while mapping a queue into the caller (mmap takes ts->lock).
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

#include "npusim_abi.h"

#define NPUSIM_TRUTH_PER_PAGE	(PAGE_SIZE / sizeof(struct npusim_task_truth))
#define NPUSIM_TRUTH_PAGES	DIV_ROUND_UP(NPUSIM_TRUTH_DEPTH, NPUSIM_TRUTH_PER_PAGE)

/* Kernel memory charged to one process (the tgid that opened the fd). */
struct npusim_acct {
	struct kref		ref;
	struct list_head	node;		/* npusim_accts */
	pid_t			tgid;
	size_t			bytes;		/* npusim_acct_lock */
};

/* What an object charged, to give back when it goes. */
struct npusim_charge {
	struct npusim_acct	*acct;
	size_t			bytes;
};

/* One SQ slot: the SQE as submitted, frozen for the engine. */
struct npusim_slot {
	u8		sqe[TRS_SQE_SIZE];
	u32		bad;		/* NPUSIM_ERR_BAD_SQE when not runnable */
	u32		cont;		/* STARS v2: continues the task before */
};

/* A stream (or any resource id) allocated with TRS_RES_ID_ALLOC. */
struct npusim_res {
	struct npusim_ctx	*owner;
	u32			type;
	u32			id;
	u32			users;		/* SQs and logic CQs naming it */
	struct npusim_cq	*logic_cq;	/* streams: their logic CQ */
	struct npusim_charge	charge;
};

/*
 * A channel, as the driver's struct trs_chan: an SQ's is the object its
 * SQE trace hook names (sq_id U32_MAX: a CQ's, which no SQE passes).
 * Tracers bind it to its SQ when it is created (in the ALLOC's thread) and
 * drop the binding when it goes; they use the pointer only, never the
 * fields (the real driver ships no module BTF).
 */
struct npusim_chan {
	struct npusim_ts	*ts;
	u32			sq_id;
};

/*
 * A hardware CQ (16-byte CQEs) or a logic CQ (32-byte logic CQEs): a ring
 * of unreceived reports, oldest first.
 */
struct npusim_cq {
	struct kref		ref;
	struct npusim_ts	*ts;
	struct npusim_ctx	*owner;
	struct list_head	sqs;		/* hardware CQ: its SQs */
	struct npusim_res	*stream;	/* logic CQ: its stream */
	u32			id;
	u32			depth;
	u32			esize;		/* 16 or 32 */
	u32			uesize;		/* a report as RECV copies it */
	bool			logic;
	bool			dead;		/* freed: no longer in the idr */
	u32			first;
	u32			count;
	u32			reserved;	/* slots of running tasks */
	u64			gen;		/* reports ever written */
	/* pre-STARS (no SQ-CQ pairs): the hardware CQ's own channel */
	struct npusim_chan	chan;
	u8			*ring;
	struct mutex		recv_lock;	/* one taker of reports */
	wait_queue_head_t	wait;		/* new report, or dead */
	struct npusim_charge	charge;
};

/* An SQ. */
struct npusim_sq {
	struct kref		ref;
	struct npusim_ts	*ts;
	struct npusim_ctx	*owner;
	struct npusim_cq	*cq;		/* its hardware CQ */
	struct npusim_res	*stream;	/* ALLOC info[0], or NULL */
	struct npusim_chan	chan;		/* the trace hook's @chan */
	struct list_head	cq_node;	/* cq->sqs */
	struct list_head	ready_node;	/* ts->ready */
	struct list_head	mapped_node;	/* ts->mapped */
	u32			id;
	u32			depth;
	u32			uio;		/* NPUSIM_UIO_*: 0 kernel mode */
	u32			pos_off;	/* position = (count + pos_off) % depth */
	u32			stale_tail;	/* soft: the tail word a CONFIG left */
	u32			flag;		/* ALLOC's flag (TRS_SQCQ_*) */
	u64			send_fail;	/* soft: copies the device refused */
	bool			chip;		/* mode picked by the chip */
	bool			soft;		/* uio_t soft queue, as the driver's */
	bool			dead;		/* freed: no longer in the idr */
	bool			on_ready;
	bool			running;	/* its head task is on a unit */
	bool			stalled;	/* waiting for CQ room */
	bool			paused;		/* CONFIG SQ_PAUSE */
	bool			cqe_status;	/* QUERY SQ_CQE_STATUS */
	bool			tail_stale;	/* soft: stale_tail is no send's */

	/* Free-running counts; position = count % depth. */
	u64			head;		/* tasks completed */
	u64			tail;		/* tasks submitted (= next seq) */
	u32			cont_left;	/* v2: SQEs still to come of a task */
	u64			last_end_ns;	/* its next task starts later */
	struct npusim_slot	*slots;
	u32			sq_want;	/* least room a SEND waits for */
	u64			sq_gen;		/* wakeups of sq_wait */
	struct mutex		submit_lock;	/* one batch at a time */
	wait_queue_head_t	sq_wait;	/* room in the SQ, or dead */

	/* Mapped SQ: the control page and SQE ring user space writes. */
	struct page		**ring_pages;
	u32			ring_npages;
	void			*ring;		/* vmap() of ring_pages */

	/* Ground truth of the last NPUSIM_TRUTH_DEPTH tasks, page by page. */
	struct npusim_task_truth **truth;
	struct npusim_charge	charge;
};

/*
 * The notifies (or events) of one TS: records set them from any TS's engine
 * without this TS's lock, so the state is atomic bits; alloc changes under
 * ts->lock (RES_ID_ALLOC/FREE).
 */
struct npusim_syncs {
	DECLARE_BITMAP(alloc, NPUSIM_MAX_RES_IDS);	/* allocated ids */
	DECLARE_BITMAP(set, NPUSIM_MAX_RES_IDS);	/* recorded, not consumed */
	u64		rec_ns[NPUSIM_MAX_RES_IDS];	/* end of the last record */
};

#define NPUSIM_SYNC_EVENT	0
#define NPUSIM_SYNC_NOTIFY	1
#define NPUSIM_SYNC_KINDS	2

/* An execution unit: runs the head task of one SQ. */
struct npusim_unit {
	struct npusim_sq	*sq;		/* NULL: free */
	u64			free_ns;	/* when it last became free */
	u64			end_ns;		/* end of the running task */
	u32			error;		/* error of the running task */
	bool			report;		/* it writes a report */
	bool			hw_slot;	/* it reserved a hardware CQ slot */
	bool			waiting;	/* a wait whose sync is not set */
	u32			wait_kind;	/* NPUSIM_SYNC_* it waits for */
	u32			wait_id;
};

struct npusim_dev;

/* One task scheduler of one device. */
struct npusim_ts {
	struct npusim_dev	*dev;
	u32			ts_id;
	struct mutex		lock;
	struct npusim_config	cfg;		/* the device's, copied */
	struct npusim_stats	stats;		/* this TS's share */
	struct idr		sq_idr;
	struct idr		cq_idr;
	struct idr		logic_cq_idr;
	struct idr		res_idr[TRS_RES_HW_SQ];
	struct list_head	ready;		/* SQs waiting for a unit */
	struct list_head	mapped;		/* mapped SQs, polled */
	struct npusim_unit	units[NPUSIM_MAX_UNITS];
	struct task_struct	*engine;
	/* pre-STARS: the channel of its logic CQs' physical CQ, made once */
	struct npusim_chan	logic_phy_chan;
	bool			kick;
	u64			soft_next_ns;	/* next poll of soft queues */
	struct npusim_syncs	*sync[NPUSIM_SYNC_KINDS];
	u32			waiting;	/* units in a wait */
};

struct npusim_dev {
	u32			id;
	struct npusim_ts	ts[NPUSIM_MAX_TS];
};

/* The sub-driver a fd is bound to by OPEN. */
enum npusim_module {
	NPUSIM_MOD_NONE,
	NPUSIM_MOD_TSDRV,
	NPUSIM_MOD_URD,
	NPUSIM_MOD_COUNT,
};

/* Per open file. */
struct npusim_ctx {
	struct mutex		lock;		/* module, dev; ALLOC/FREE */
	enum npusim_module	module;
	bool			opened;		/* OPEN succeeded once */
	bool			closed;		/* CLOSE by its owner */
	pid_t			owner_tgid;
	struct file		*file;		/* not counted: ours while open */
	struct npusim_dev	*dev;		/* set by OPEN */
	struct npusim_acct	*acct;
	atomic_t		fail_nth;	/* FAIL_NTH countdown */
};

/* One command of an ioctl table. */
struct npusim_ioctl {
	int		(*handler)(struct npusim_ctx *ctx, void *arg,
				   void __user *uarg);
	unsigned int	size;		/* bytes copied in (and out) */
	bool		out;		/* copy the argument back on success */
};

extern unsigned int npusim_devices;
extern unsigned int npusim_ts_per_device;
extern unsigned int npusim_max_proc_kbytes;
extern struct npusim_dev *npusim_devs;

void npusim_proc_init(void);
void npusim_proc_fini(void);

/* npusim_main.c */
long npusim_manager_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg);
long npusim_ioctl_dispatch(const struct npusim_ioctl *c, void *buf,
			   struct npusim_ctx *ctx, unsigned long arg);
void npusim_stats_sum(struct npusim_stats *s);

/* npusim_ctl.c */
long npusim_ctl_ioctl(struct npusim_ctx *ctx, unsigned int cmd,
		      unsigned long arg);
int npusim_config_check(const struct npusim_config *cfg, u32 mask);

/* npusim_trs.c */
long npusim_trs_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
struct npusim_ts *npusim_ctx_ts(struct npusim_ctx *ctx, u32 ts_id);
void npusim_trs_release(struct npusim_ctx *ctx);

/* npusim_queue.c: memory */
struct npusim_acct *npusim_acct_get(pid_t tgid);
void npusim_acct_put(struct npusim_acct *acct);
void *npusim_zalloc(struct npusim_ctx *ctx, size_t size,
		    struct npusim_charge *ch);
void npusim_free(void *p, size_t size, struct npusim_charge *ch);
void npusim_uncharge(struct npusim_charge *ch);
u64 npusim_kmem_bytes(void);
u64 npusim_fail_nth_hits(void);

/* npusim_queue.c: objects */
u64 npusim_ticks(const struct npusim_config *cfg, u64 ns);
struct npusim_sq *npusim_sq_new(struct npusim_ctx *ctx, struct npusim_ts *ts,
				u32 depth, u32 uio);
struct npusim_cq *npusim_cq_new(struct npusim_ctx *ctx, struct npusim_ts *ts,
				u32 depth, bool logic, u32 esize);
void npusim_sq_put(struct npusim_sq *sq);
void npusim_cq_put(struct npusim_cq *cq);
void npusim_sq_destroy(struct npusim_sq *sq);
void npusim_cq_destroy(struct npusim_cq *cq);
struct npusim_sq *npusim_sq_get(struct npusim_ctx *ctx, struct npusim_ts *ts,
				u32 id);
struct npusim_cq *npusim_cq_get(struct npusim_ctx *ctx, struct npusim_ts *ts,
				u32 id, bool logic);
void *npusim_cq_at(struct npusim_cq *cq, u32 i);
struct npusim_task_truth *npusim_truth(struct npusim_sq *sq, u64 seq);
u32 npusim_sq_pos(const struct npusim_sq *sq, u64 count);
int npusim_truth_prepare(struct npusim_ctx *ctx, struct npusim_sq *sq,
			 u64 seq, u32 n);
void npusim_sq_push(struct npusim_sq *sq, const void *sqe, u64 now, bool traced);
int npusim_queue_mmap(struct npusim_ctx *ctx, struct vm_area_struct *vma);
int npusim_cq_push_logic(struct npusim_ts *ts, struct npusim_cq *cq,
			 const struct trs_logic_cqe *cqe);

/* npusim_hooks.c: what tracers attach to (contract C2) */
noinline int npusim_logic_cq_enque(void *ts_inst, u32 logic_cq_id,
				   u32 stream_id, u32 task_id, void *cqe);
noinline void npusim_chan_trace_sqe(const char *str, void *chan, void *sq,
				    void *sqe);
noinline void npusim_chan_proc_fs_add_chan(void *chan);
noinline void npusim_chan_proc_fs_del_chan(void *chan);

/* npusim_engine.c */
int npusim_engine_start(struct npusim_ts *ts);
void npusim_engine_stop(struct npusim_ts *ts);
void npusim_engine_kick(struct npusim_ts *ts);
void npusim_engine_make_ready(struct npusim_sq *sq);
void npusim_engine_cancel(struct npusim_sq *sq);
void npusim_engine_cq_room(struct npusim_cq *cq);
bool npusim_sqe_valid(const void *sqe);
u32 npusim_sqe_task_id(u32 stars, const void *sqe);
u32 npusim_sqe_v2_len(const void *sqe);
u32 npusim_sqe_stream_raw(const struct npusim_sq *sq, const void *sqe);
void npusim_sync_alloc(struct npusim_ts *ts, u32 res_type, u32 id, bool on);

#endif /* _NPUSIM_H */
