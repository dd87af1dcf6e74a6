/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The driver's ioctls: ALLOC/FREE/OPEN, entry and exit common to every attach mode.
 */
#ifndef __IOCTL_BPF_H
#define __IOCTL_BPF_H

#include "common.bpf.h"
#include "types.bpf.h"
#include "maps.bpf.h"
#include "thread.bpf.h"
#include "proc.bpf.h"
#include "marks.bpf.h"
#include "queues.bpf.h"
#include "send.bpf.h"
#include "walk.bpf.h"
#include "recv.bpf.h"
#include "hal.bpf.h"
#include "journal.bpf.h"

/*
 * ALLOC's trs_uio_info: how the driver set the SQ up, and for a mapped SQ
 * where its tail is mapped (@tail, 0: not mapped). A 950's uio_d SQ has no
 * tail word: the library writes its tail into the doorbell, the tail
 * register, and reads it back there (trs_sqcq.c:1381,1638-1640), as here.
 */
static __always_inline __u32 alloc_uio_flags(struct trs_sqcq_alloc_info *ai,
					     __u64 *tail, __u64 *shr)
{
	struct trs_uio_info u;
	__u64 ptr = ai->uio_info;

	*tail = 0;
	*shr = 0;
	if (!ptr)
		return 0;
	if (bpf_probe_read_user(&u, sizeof(u), (void *)ptr)) {
		CNT_INC(hook_errors);
		return 0;
	}
	if (!u.uio_flag)
		return 0;
	*tail = u.sq_ctrl_addr[TRS_UIO_TAIL];
	*shr = u.sq_ctrl_addr[TRS_UIO_SHR_INFO];
	if (!*tail && !u.soft_que_flag)
		*tail = u.sq_ctrl_addr[TRS_UIO_DB];
	return ST_SQ_UIO | (u.soft_que_flag ? ST_SQ_SOFT : 0);
}

static __always_inline void cq_create(__u64 owner, __u32 dev, __u32 ts,
				      __u32 type, __u32 id, __u32 size,
				      __u32 stream)
{
	struct st_ckey k = { .owner = owner, .ts = ts, .type = type, .id = id };
	struct st_cq cq = {
		.cqe_size = size,
		.stream_id = stream,
		.created_ns = bpf_ktime_get_ns(),
		.tgid = bpf_get_current_pid_tgid() >> 32,
		.dev = dev,
	};

	if (bpf_map_update_elem(&cqs, &k, &cq, BPF_ANY))
		CNT_INC(cq_map_full);
	__sync_fetch_and_add(&cqs_gen, 1);
}

/*
 * Exits run in any order. When another ALLOC of the same id exited while
 * this one ran, a FREE of the id came between their allocations, and
 * which of the two SQs is still live cannot be told: neither is tracked
 * (its SENDs count as tasks_unowned), rather than one of them wrongly.
 */
static __always_inline bool sq_raced(struct st_qkey *key, __u64 enter_ns)
{
	struct st_sq *old = sq_find(key);

	if (!old || old->created_ns < enter_ns ||
	    (old->flags & ST_SQ_PREEXISTING))
		return false;
	CNT_INC(sqs_raced);
	sq_delete(key);
	return true;
}

/*
 * ALLOC names an SQ only when its type is NORMAL; the runtime's logic CQs
 * (type LOGIC, sqId 0) are CQs alone. REUSE_CQ shares an existing CQ.
 */
static __always_inline void on_alloc(struct st_call *c, struct st_file *f,
				     __u32 tgid)
{
	struct trs_sqcq_alloc_info *ai;
	struct st_hal_call *hc;
	struct st_skey sk = {};
	struct st_qkey key = {};
	struct st_chan ch = {};
	union st_args *a;
	struct st_sq *sq;
	__u64 tail, shr;
	__u32 flags;

	a = args_read(c->arg, sizeof(a->alloc));
	if (!a) {
		CNT_INC(hook_errors);
		return;
	}
	ai = &a->alloc;
	if (ai->type == TRS_SQCQ_TYPE_LOGIC) {
		cq_create(f->owner, f->dev, ai->tsId, TRS_SQCQ_TYPE_LOGIC,
			  ai->cqId, ai->cqeSize, ai->info[0]);
		return;
	}
	if (ai->type != TRS_SQCQ_TYPE_NORMAL)
		return;
	flags = alloc_uio_flags(ai, &tail, &shr);
	hc = hal_call(bpf_get_current_pid_tgid(), ST_HAL_ALLOC);
	/*
	 * A mapped SQ's sends are followed by its tail word (hal.bpf.h), or
	 * by its process's journal, which needs none.
	 */
	if (hc && (!(flags & ST_SQ_UIO) || tail || journal_on))
		flags |= ST_SQ_HAL;
	/* The driver has the SQ whether or not it gets an entry here. */
	if (sq_blind(flags)) {
		CNT_INC(sqs_blind);
		uio_blind_alloc(tgid);
	} else if ((flags & ST_SQ_SOFT) && !(flags & ST_SQ_HAL)) {
		uio_host_taint(tgid);
	}
	key.owner = f->owner;
	key.ts = ai->tsId;
	key.id = ai->sqId;
	if (!(ai->flag & TSDRV_FLAG_REUSE_CQ))
		cq_create(f->owner, f->dev, ai->tsId, TRS_SQCQ_TYPE_NORMAL,
			  ai->cqId, ai->cqeSize, ai->info[0]);
	if (sq_raced(&key, c->enter_ns))
		return;
	sq = sq_create(&key, f, tgid, ai->sqeDepth, flags);
	if (!sq)
		return;
	sq->stream_id = ai->info[0];
	/*
	 * The channel the driver made for this SQ in this ALLOC: the SQE
	 * trace hook's @chan, bound until the SQ or the channel goes.
	 */
	ch.key = key;
	ch.slot = sq->slot;
	if (chan_hook && c->chan &&
	    !bpf_map_update_elem(&chans, &c->chan, &ch, BPF_ANY))
		sq->chan = c->chan;
	if (flags & ST_SQ_HAL) {
		hal_alloc_bind(sq, hc, tail);
		journal_alloc(sq, shr);
	}
	/* After the bind: its flags are final (hal_alloc_bind() may clear). */
	if (sq->chan)
		chans_changed();
	if ((flags & ST_SQ_SOFT) && f->dev != ST_DEV_UNKNOWN) {
		sk.dev = f->dev;
		sk.ts = ai->tsId;
		sk.id = ai->info[0];
		bpf_map_update_elem(&soft_sqs, &sk, &key, BPF_ANY);
	}
}

/* Tasks still queued on a freed SQ were cancelled: they count as errors. */
static __always_inline void sq_cancel_all(struct st_sq *sq, __u32 slot,
					  __u64 now, struct st_recv_ctx *x)
{
	__builtin_memset(x, 0, sizeof(*x));
	x->now = now;
	x->cancel = 1;
	walk_begin(x, sq, slot);
	x->cur = sq->done;
	x->target = sq->tail;
	sq_walk(x, sq);
	sq->done = x->cur;
}

static __always_inline void on_free(struct st_call *c, struct st_file *f,
				    __u64 now, struct st_recv_ctx *x)
{
	struct st_ckey ck = { .owner = f->owner };
	struct trs_sqcq_free_info *fi;
	struct st_qkey key = {};
	__u32 slot;
	union st_args *a;
	struct st_sq *sq;
	struct st_cq *cq;

	a = args_read(c->arg, sizeof(a->free));
	if (!a) {
		CNT_INC(hook_errors);
		return;
	}
	fi = &a->free;
	ck.ts = fi->tsId;
	ck.type = fi->type;
	ck.id = fi->cqId;
	/*
	 * The driver released the ids before this exit ran: another thread's
	 * ALLOC may already hold them, with entries made after this FREE
	 * began. Those are not ours to drop.
	 */
	cq = bpf_map_lookup_elem(&cqs, &ck);
	if (cq && cq->created_ns < c->enter_ns &&
	    !(fi->type == TRS_SQCQ_TYPE_NORMAL &&
	      (fi->flag & TSDRV_FLAG_REUSE_CQ))) {
		bpf_map_delete_elem(&cqs, &ck);
		__sync_fetch_and_add(&cqs_gen, 1);
	}
	if (fi->type != TRS_SQCQ_TYPE_NORMAL)
		return;
	key.owner = f->owner;
	key.ts = fi->tsId;
	key.id = fi->sqId;
	slot = sq_slot(&key);
	sq = slot < STEPTIME_MAX_SQS ? bpf_map_lookup_elem(&sqs, &slot) : NULL;
	if (!sq || sq->created_ns > c->enter_ns)
		return;
	sq_cancel_all(sq, slot, now, x);
	sq_delete(&key);
}

static __always_inline void on_open(struct st_call *c, __u32 tgid)
{
	union st_args *a;

	a = args_read(c->arg, sizeof(a->open));
	if (!a) {
		CNT_INC(hook_errors);
		return;
	}
	file_bind(c->file, (__u32)a->open.device_id, tgid);
}

/* ---------------------------------------------------------------------- */
/* ioctl entry and exit, common to every attach mode                       */
/* ---------------------------------------------------------------------- */

static __always_inline bool cmd_tracked(__u32 cmd)
{
	return cmd == TRS_IOC_SQCQ_SEND || cmd == TRS_IOC_SQCQ_RECV ||
	       cmd == TRS_IOC_SQCQ_QUERY || cmd == TRS_IOC_SQCQ_ALLOC ||
	       cmd == TRS_IOC_SQCQ_FREE || cmd == ASCEND_MANAGER_OPEN ||
	       cmd == STEPTIME_IOC_RING;
}

/*
 * Hold the slot of thread @id until thread_put(); NULL while another
 * thread's ioctl holds it. A slot this thread still holds (an entry whose
 * exit never ran: a kretprobe missed, the exit attached later) is its own.
 */
static __always_inline struct st_thread *thread_get(__u64 id)
{
	struct st_thread *th = thread_slot(id);
	__u64 holder;

	if (!th)
		return NULL;
	holder = __sync_val_compare_and_swap(&th->busy, 0, id);
	return !holder || holder == id ? th : NULL;
}

/*
 * Release the slot thread @id holds, if it does: by id, not by the pointer
 * thread_get() gave, and without a branch, so that every path of an exit
 * ends the same way for the verifier (a pointer or NULL kept live across
 * the exit's work, or a branch after it, doubles the states it walks).
 * A compare-and-swap is fully ordered: the next holder sees our stores.
 */
static __always_inline void thread_put(__u64 id)
{
	struct st_thread *th = thread_slot(id);

	if (th)
		__sync_val_compare_and_swap(&th->busy, id, 0);
}

/* A matched ioctl's entry, kept for its exit: in the thread's slot. */
static __always_inline int ioctl_enter(__u64 file, __u32 cmd, __u64 arg)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_thread *th;
	struct st_call c = {
		.arg = arg,
		.file = file,
		.cmd = cmd,
	};

	/* A RECV is timed from its exit (kprobe and tracepoint modes). */
	if (cmd != TRS_IOC_SQCQ_RECV)
		c.enter_ns = bpf_ktime_get_ns();
	th = thread_get(id);
	if (th) {
		/* Field by field: not built on the stack and copied. */
		th->call.arg = arg;
		th->call.file = file;
		th->call.enter_ns = c.enter_ns;
		th->call.sqes_sent = 0;
		th->call.chan = 0;
		th->call.cmd = cmd;
		return 0;
	}
	CNT_INC(calls_slot_shared);
	if (!bpf_map_update_elem(&calls, &id, &c, BPF_NOEXIST))
		__sync_fetch_and_add(&calls_hashed, 1);
	else if (bpf_map_update_elem(&calls, &id, &c, BPF_EXIST))
		CNT_INC(hook_errors);
	return 0;
}

/* Drop thread @id's entry from the calls hash, if it has one there. */
static __always_inline void call_unhash(__u64 id)
{
	if (!bpf_map_delete_elem(&calls, &id))
		__sync_fetch_and_sub(&calls_hashed, 1);
}

/*
 * The entry of the ioctl thread @id is leaving; false when none. An entry
 * in the thread's slot stays held there until thread_put().
 */
static __always_inline bool call_take(__u64 id, struct st_call *c)
{
	struct st_thread *th = thread_slot(id);
	struct st_call *cp;

	if (th && READ_ONCE(th->busy) == id && th->call.cmd) {
		*c = th->call;
		th->call.cmd = 0;
		return true;
	}
	if (!READ_ONCE(calls_hashed))
		return false;
	cp = bpf_map_lookup_elem(&calls, &id);
	if (!cp)
		return false;
	*c = *cp;
	call_unhash(id);
	return true;
}

/* A thread leaves: an entry it left (an exit missed) goes with it. */
static __always_inline void thread_exit(void)
{
	__u64 id = bpf_get_current_pid_tgid();

	thread_put(id);
	if (READ_ONCE(calls_hashed))
		call_unhash(id);
	hal_thread_exit(id);
}

/*
 * A matched ioctl of thread @id returned @ret: account for it. Inlined
 * once per exit program (ioctl_exit()): the handlers' walks, step records
 * and mark consumption are global functions, verified once apart.
 */
static __always_inline void ioctl_done(struct st_cmd_ctx *x, long ret,
				       __u64 id)
{
	struct st_call *cp = &x->c;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct steptime_counters *cnt;
	struct st_proc *p;
	struct st_file *f;
	__u32 zero = 0, k;
	int synced = 0;
	__u64 now;

	now = bpf_ktime_get_ns();
	/* Index 0 of an array: never NULL, and then known not to be below. */
	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!cnt)
		return;
	cnt->ioctls++;
	if (ret && cp->cmd == TRS_IOC_SQCQ_SEND) {
		cnt->send_errors++;
		/*
		 * The driver queued the SQEs, then failed to write the
		 * SEND's result back (a fault with a fatal signal pending):
		 * on the device, but of unknown position.
		 */
		cnt->sqes_send_failed += cp->sqes_sent;
	}
	/* Marks written since this process's last ioctl take effect first. */
	k = proc_get(tgid);
	p = proc_at(k);
	if (p && cp->cmd == STEPTIME_IOC_RING)
		proc_ring_bind(k, cp->arg);
	if (p)
		synced = proc_sync(k, tgid);
	if (ret || cp->cmd == STEPTIME_IOC_RING)
		return;
	if (cp->cmd == ASCEND_MANAGER_OPEN) {
		on_open(cp, tgid);
		return;
	}
	f = file_get(cp->file, tgid, id);
	if (!f && cp->cmd != TRS_IOC_SQCQ_SEND)
		return;
	/*
	 * A file from before load may hold queues steptime never meets at a
	 * SEND (a uio_d SQ): the steps of a process using it may miss tasks.
	 */
	if (f && p && (f->flags & ST_FILE_PREEXISTING) &&
	    !(p->taint & STEPTIME_F_PREEXISTING))
		proc_taint(p, tgid, STEPTIME_F_PREEXISTING);
	switch (cp->cmd) {
	case TRS_IOC_SQCQ_SEND:
		on_send(cp, f, p, tgid, now, synced, cnt, id, &x->send);
		break;
	case TRS_IOC_SQCQ_RECV:
		on_recv(cp, f, now, id, cnt, &x->recv);
		break;
	case TRS_IOC_SQCQ_QUERY:
		on_query(cp, f, now, id, cnt, &x->recv);
		break;
	case TRS_IOC_SQCQ_ALLOC:
		on_alloc(cp, f, tgid);
		break;
	case TRS_IOC_SQCQ_FREE:
		on_free(cp, f, now, &x->recv);
		break;
	}
}

static __always_inline void call_make(struct st_call *c, __u64 file, __u32 cmd,
				      __u64 arg, __u64 enter_ns)
{
	c->arg = arg;
	c->file = file;
	c->enter_ns = enter_ns;
	c->cmd = cmd;
	c->sqes_sent = 0;
	c->chan = 0;
}

/*
 * A matched ioctl returned @ret. Its call was kept at entry; or, where the
 * exit sees its arguments (@file not 0: fexit, tp_btf, raw_tp), it is made
 * here: always for RECV, which needs nothing from its entry (its reports
 * are read at exit, at exit time) and is not kept at all, the cheapest
 * path for the ioctl a runtime calls most; and, counted (calls_unpaired),
 * for one whose entry state is gone (made before the exit was attached,
 * or lost to a full calls hash), timed from the exit.
 */
static __always_inline int ioctl_exit(__u64 file, __u32 cmd, __u64 arg,
				      long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_cmd_ctx *x;
	__u32 zero = 0;

	x = bpf_map_lookup_elem(&cmd_ctx, &zero);
	if (!x)
		return 0;
	if (file && cmd == TRS_IOC_SQCQ_RECV) {
		call_make(&x->c, file, cmd, arg, 0);
		/* Only for its cache: held while the cache is used. */
		thread_get(id);
	} else if (!call_take(id, &x->c)) {
		if (!file)
			return 0;
		CNT_INC(calls_unpaired);
		call_make(&x->c, file, cmd, arg, bpf_ktime_get_ns());
		/* For its cache. */
		thread_get(id);
	}
	ioctl_done(x, ret, id);
	thread_put(id);
	return 0;
}

/*
 * The file behind a fd of the current task. With @btf (tp_btf programs)
 * the task's pointers are followed by direct loads; elsewhere every step is
 * a CO-RE read.
 */
static __always_inline struct file *fd_file(unsigned int fd, bool btf)
{
	struct file **fds, *file = NULL;
	struct fdtable *fdt;
	struct task_struct *task;

	if (btf) {
		task = bpf_get_current_task_btf();
		fdt = task->files->fdt;
		if (fd >= fdt->max_fds)
			return NULL;
		fds = fdt->fd;
	} else {
		task = (struct task_struct *)bpf_get_current_task();
		fdt = BPF_CORE_READ(task, files, fdt);
		if (fd >= BPF_CORE_READ(fdt, max_fds))
			return NULL;
		fds = BPF_CORE_READ(fdt, fd);
	}
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	return file;
}

/* The file of @fd when it is the target device's, else NULL. */
static __always_inline struct file *fd_target(unsigned int fd, bool btf)
{
	struct file *file = fd_file(fd, btf);

	if (!file || BPF_CORE_READ(file, f_inode, i_rdev) != target_rdev)
		return NULL;
	return file;
}

static __always_inline int sys_ioctl_enter(__u64 fd, __u64 cmd, __u64 arg,
					   bool btf)
{
	struct file *file;

	/* Cheapest test first: most ioctls are not the driver's. */
	if (!cmd_tracked(cmd))
		return 0;
	file = fd_target(fd, btf);
	if (!file)
		return 0;
	return ioctl_enter((__u64)file, cmd, arg);
}

/* At exit, with the arguments (tp_btf, raw_tp): RECV is matched here. */
static __always_inline int sys_ioctl_exit(__u64 fd, __u64 cmd, __u64 arg,
					  long ret, bool btf)
{
	struct file *file;

	/* Only RECV's exit needs its file: the others' was matched at entry. */
	if (cmd != TRS_IOC_SQCQ_RECV)
		return cmd_tracked(cmd) ? ioctl_exit(0, cmd, arg, ret) : 0;
	file = fd_target(fd, btf);
	if (!file)
		return 0;
	return ioctl_exit((__u64)file, cmd, arg, ret);
}

#endif /* __IOCTL_BPF_H */
