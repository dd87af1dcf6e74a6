// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: the functions tracers hook, shaped like the real driver's so that
 * one BPF program serves both (contract C2):
 *
 *   npusim_logic_cq_enque()  trs_logic_cq_enque()  asdrv_trs
 *   npusim_chan_trace_sqe()  trs_chan_trace_sqe()  asdrv_trs
 *   npusim_chan_proc_fs_add_chan()  chan_proc_fs_add_chan()  asdrv_trsbase
 *   npusim_chan_proc_fs_del_chan()  chan_proc_fs_del_chan()  asdrv_trsbase
 *
 * They must stay real, global, out-of-line calls with these prototypes:
 * they live in a file that never calls them, so they are neither inlined
 * nor cloned, and module BTF describes them. All are called with the TS's
 * lock held.
 */
#include "npusim.h"

/*
 * Every offer of a logic CQE to a logic CQ, as trs_logic_cq_enque(): 0
 * only when it was enqueued; -EINVAL when the logic CQ is gone; -EAGAIN
 * when it is full (the caller drops the report and counts it, as the
 * driver's full_drop). @cqe is a struct trs_logic_cqe in kernel memory.
 */
noinline int npusim_logic_cq_enque(void *ts_inst, u32 logic_cq_id,
				   u32 stream_id, u32 task_id, void *cqe)
{
	struct npusim_ts *ts = ts_inst;
	struct npusim_cq *cq = idr_find(&ts->logic_cq_idr, logic_cq_id);

	if (!cq || cq->dead)
		return -EINVAL;
	return npusim_cq_push_logic(ts, cq, cqe);
}

/*
 * Every SQE the kernel moves to the device, as trs_chan_trace_sqe(): SEND,
 * in the caller's context, and the soft queues of uio_t SQs, in the
 * engine's; never uio_d SQs. @chan is the SQ's struct npusim_chan, @sq
 * the struct npusim_sq, @sqe the 64 bytes in kernel memory.
 */
noinline void npusim_chan_trace_sqe(const char *str, void *chan, void *sq,
				    void *sqe)
{
	struct npusim_chan *c = chan;

	c->ts->stats.traced_sqes++;
}

/*
 * A channel was made, as chan_proc_fs_add_chan() (called from
 * hal_kernel_trs_chan_create()): in the ALLOC's thread, before it returns.
 * An SQ's (once it has its id) is the struct npusim_chan later passed to
 * npusim_chan_trace_sqe(); pre-STARS, a NORMAL ALLOC then makes its CQ's,
 * and a TS's first LOGIC ALLOC its physical CQ's, which no SQE passes.
 */
noinline void npusim_chan_proc_fs_add_chan(void *chan)
{
}

/*
 * The channel goes, as chan_proc_fs_del_chan(): at the SQ's FREE, or when
 * its owner's file is released. No SQE passes it afterwards.
 */
noinline void npusim_chan_proc_fs_del_chan(void *chan)
{
}
