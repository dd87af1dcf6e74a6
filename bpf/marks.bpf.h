/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Host marks: the step API ring in the process's own memory.
 */
#ifndef __MARKS_BPF_H
#define __MARKS_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "proc.bpf.h"
#include "step.bpf.h"

/* ---------------------------------------------------------------------- */
/* Host marks: the step API's ring, in the process's own memory           */
/* ---------------------------------------------------------------------- */

/*
 * Device times read back from timeline events (steptime/abi.h): exact (to
 * 1 us from a CANN runtime, to the tick from the npusim HAL), and
 * preferred over place-holder reports, which a CANN host never produces.
 * Both ends must come the same way; dev_*_ticks are counter values (from
 * microseconds only when the frequency is a whole number of MHz, else
 * absent), device_time_ns in any case.
 */
static __always_inline void mark_dev_time(struct steptime_step_stats *rec,
					  struct steptime_mark *m)
{
	__u64 per_us = counter_freq_hz / 1000000, d;
	bool ticks = m->tag >= STEPTIME_TAG_DEV_START_TICKS;
	bool start = m->tag == STEPTIME_TAG_DEV_START ||
		     m->tag == STEPTIME_TAG_DEV_START_TICKS;

	if (!(rec->flags & STEPTIME_F_DEV_EVENT))
		rec->flags &= ~(STEPTIME_F_DEV_START | STEPTIME_F_DEV_END);
	rec->flags |= STEPTIME_F_DEV_EVENT | STEPTIME_F_STREAM |
		      (start ? STEPTIME_F_DEV_START : STEPTIME_F_DEV_END);
	if (start)
		rec->dev_start_ticks = m->time_ns;
	else
		rec->dev_end_ticks = m->time_ns;
	if (m->stream != STEPTIME_STREAM_NONE)
		rec->stream = m->stream;
	if (start || !(rec->flags & STEPTIME_F_DEV_START))
		return;
	if (rec->dev_end_ticks < rec->dev_start_ticks) {
		rec->flags &= ~(STEPTIME_F_DEV_START | STEPTIME_F_DEV_END);
		return;
	}
	d = rec->dev_end_ticks - rec->dev_start_ticks;
	if (ticks) {
		rec->device_time_ns = ticks_to_ns(d);
	} else {
		rec->device_time_ns = d * 1000;
		if (per_us && per_us * 1000000 == counter_freq_hz) {
			rec->dev_start_ticks *= per_us;
			rec->dev_end_ticks *= per_us;
		} else {
			/* Microseconds would read as ticks: absent. */
			rec->dev_start_ticks = 0;
			rec->dev_end_ticks = 0;
		}
	}
	step_try_finish(rec);
}

/* An entry of the journal of sends (bpf/journal.bpf.h), no step's mark. */
static __always_inline bool mark_is_journal(struct steptime_mark *m)
{
	return m->tag >= STEPTIME_TAG_SQ_SNAP && m->tag <= STEPTIME_TAG_SQ_END;
}

static __always_inline void mark_apply(struct st_proc *p, __u32 tgid,
				       struct steptime_mark *m)
{
	struct steptime_step_stats *rec;

	if (m->tag >= STEPTIME_TAG_DEV_START &&
	    m->tag <= STEPTIME_TAG_DEV_END_TICKS) {
		/* Only for a step this process has. */
		rec = step_get(tgid, m->index_id, false);
		if (rec)
			mark_dev_time(rec, m);
		return;
	}
	/* The journal of sends: no step's mark (run_apply()). */
	if (mark_is_journal(m))
		return;
	if (m->tag != STEPTIME_TAG_START)
		m->tag = STEPTIME_TAG_END;
	rec = step_get(tgid, m->index_id, true);
	if (m->tag == STEPTIME_TAG_START) {
		if (p->cur_open && p->cur_index != m->index_id)
			p->prev_index = p->cur_index;
		p->cur_index = m->index_id;
		p->cur_open = 1;
		if (!rec)
			return;
		rec->host_start_ns = m->time_ns;
		rec->flags |= STEPTIME_F_HOST_START;
		if (m->stream != STEPTIME_STREAM_NONE)
			rec->stream = m->stream;
		else
			rec->flags |= p->host_taint;
		if (p->last_end_ns && m->time_ns >= p->last_end_ns) {
			rec->gap_ns = m->time_ns - p->last_end_ns;
			rec->flags |= STEPTIME_F_GAP;
		}
		return;
	}
	p->last_end_ns = m->time_ns;
	if (p->cur_index == m->index_id && p->cur_open) {
		p->cur_open = 0;
		p->prev_index = p->cur_index;
	}
	if (!rec)
		return;
	rec->host_end_ns = m->time_ns;
	rec->flags |= STEPTIME_F_HOST_END;
	if (m->stream != STEPTIME_STREAM_NONE)
		rec->stream = m->stream;
	step_try_finish(rec);
}

/*
 * STEPTIME_IOC_RING from the process itself: bind the ring at @addr in its
 * own memory, if its header names this process as the kernel sees it.
 * Nothing but the process can make this call for itself, so nothing but
 * the process can say where its marks are.
 */
__noinline int proc_ring_bind(__u32 pslot, __u64 addr)
{
	struct st_proc *p = proc_at(pslot);
	/* The header of struct steptime_ring, up to res[]. */
	struct {
		__u32 magic, version, pidns_ino, ns_tgid;
		__u64 head, base, res0;
	} h;

	_Static_assert(sizeof(h) == 40, "struct steptime_ring header");
	if (!p)
		return 0;
	if (addr == p->ring)
		return 0;		/* a flush: proc_sync() follows */
	if (bpf_probe_read_user(&h, sizeof(h), (void *)addr) ||
	    h.magic != STEPTIME_RING_MAGIC ||
	    h.version != STEPTIME_ABI_VERSION ||
	    h.pidns_ino != p->pidns_ino || h.ns_tgid != p->ns_tgid ||
	    h.head < h.base) {
		CNT_INC(ring_rejected);
		return 0;
	}
	if (__sync_lock_test_and_set(&p->busy, 1))
		return 0;
	p->ring = addr;
	p->seen = h.base;
	/* Its HAL SQs are counted from its journal, or flagged (journal.bpf.h). */
	if (h.res0 & STEPTIME_RING_F_JOURNAL)
		p->journal |= ST_PJ_JOURNAL;
	else if (p->journal & ST_PJ_PENDING)
		p->taint |= STEPTIME_F_UIO;
	/*
	 * The user of the step API, who writes the phase file: not always
	 * who opened the device (a process may drop privileges in between).
	 */
	p->uid = current_fsuid();
	CNT_INC(rings);
	asm volatile("" ::: "memory");
	p->busy = 0;
	return 0;
}

/* The ring's head, read from the process's memory (it is current). */
static __always_inline int ring_head(struct st_proc *p, __u64 *head)
{
	return bpf_probe_read_user(head, sizeof(*head), (void *)(p->ring +
				   offsetof(struct steptime_ring, head)));
}

static __always_inline struct steptime_mark *ring_entry(struct st_proc *p,
							 __u64 pos)
{
	return (struct steptime_mark *)(p->ring +
		offsetof(struct steptime_ring, ring) +
		(pos % STEPTIME_MARK_RING) * sizeof(struct steptime_mark));
}

/*
 * Marks consumed per call of proc_sync_batch(): the ring (STEPTIME_MARK_RING)
 * is consumed in batches, so that the verifier walks one batch's loop, once,
 * however large the ring.
 */
#define MARK_BATCH	32

#define SYNC_STOP	0	/* busy, a fault, or a mark not yet written */
#define SYNC_DONE	1	/* every mark written is consumed */
#define SYNC_MORE	2	/* a batch consumed, more written */
#define SYNC_RUN	3	/* a run consumed: on to the next one */
#define SYNC_JOURNAL	4	/* a journal entry for journal_apply(), busy */

/* proc_sync_batch() calls per proc_sync() (proc_sync()). */
#define SYNC_CALLS	64

/*
 * Copy the marks from position @seen to the end of its run of ST_MARK_RUN
 * (runs are aligned: never across the ring's end), or to @head, into @run,
 * twice. Return: how many (1 to ST_MARK_RUN), or 0 on a fault.
 */
static __always_inline __u32 run_read(struct st_proc *p, struct st_mark_run *run,
				      __u64 seen, __u64 head)
{
	__u32 n = ST_MARK_RUN - seen % ST_MARK_RUN;
	void *e = ring_entry(p, seen);
	__u32 len;

	if (head - seen < n)
		n = head - seen;
	/* 1 to ST_MARK_RUN marks, in a form every verifier bounds. */
	n = ((n - 1) & (ST_MARK_RUN - 1)) + 1;
	len = n * sizeof(struct steptime_mark);
	if (bpf_probe_read_user(run->m, len, e) ||
	    bpf_probe_read_user(run->again, len, e))
		return 0;
	return n;
}

/*
 * Apply the @n marks of @run, the ring's positions from *@seen on, in
 * order, advancing *@seen past those consumed or lost. Return: SYNC_RUN,
 * SYNC_STOP at a mark reserved but not yet written, or SYNC_JOURNAL past
 * a journal entry, kept in @run->j for journal_apply() (when the load
 * reads journals: else it is passed over).
 */
static __always_inline int run_apply(struct st_proc *p, __u32 tgid,
				     struct st_mark_run *run, __u32 n,
				     __u64 *seen)
{
	struct steptime_mark *m;
	__u64 seq;
	__u32 j;

	/*
	 * Unknown to the compiler, so that it keeps the constant bound the
	 * verifier needs, not a count down from @n.
	 */
	barrier_var(n);
	for (j = 0; j < ST_MARK_RUN && j < n; j++) {
		m = &run->m[j];
		seq = run->again[j].seq;
		if (m->seq != *seen + 1 || seq != m->seq) {
			if (m->seq < *seen + 1 && seq == m->seq)
				return SYNC_STOP;	/* reserved, not written */
			CNT_INC(marks_lost);	/* overwritten, or torn */
			(*seen)++;
			continue;
		}
		mark_apply(p, tgid, m);
		CNT_INC(marks);
		(*seen)++;
		if (journal_on && mark_is_journal(m)) {
			/* A stream mark's record is made here, as a host's. */
			if (m->tag != STEPTIME_TAG_SQ_SNAP)
				step_get(tgid, m->index_id, true);
			run->j = *m;
			return SYNC_JOURNAL;
		}
	}
	return SYNC_RUN;
}

/*
 * Consume up to MARK_BATCH of the marks process @tgid (in slot @pslot)
 * wrote since the last event, in order, a run of the ring at a time. Only
 * while it is the current process (@tgid is the caller's own): its ring is
 * an address in its memory. Return: SYNC_*; at SYNC_JOURNAL the process's
 * marks stay busy (its run's entry j is the next one to apply), until
 * journal_apply() has applied it.
 */
__noinline int proc_sync_batch(__u32 pslot, __u32 tgid)
{
	struct st_proc *p = proc_at(pslot);
	struct st_mark_run *run;
	int r = SYNC_RUN, i;
	__u64 head, seen;
	__u32 n;

	if (!p || !p->ring)
		return SYNC_DONE;
	if (ring_head(p, &head)) {
		CNT_INC(hook_errors);
		return SYNC_STOP;
	}
	if (head == p->seen)
		return SYNC_DONE;
	run = bpf_map_lookup_elem(&mark_runs, &pslot);
	/* One CPU at a time consumes a process's marks (and uses its run). */
	if (!run || __sync_lock_test_and_set(&p->busy, 1))
		return SYNC_STOP;
	seen = p->seen;
	if (head < seen) {
		/* The process rewound its own ring: it loses its own marks. */
		CNT_INC(marks_lost);
		seen = head;
	}
	if (head - seen > STEPTIME_MARK_RING) {
		CNT_ADD(marks_lost, head - seen - STEPTIME_MARK_RING);
		seen = head - STEPTIME_MARK_RING;
	}
	for (i = 0; i < MARK_BATCH / ST_MARK_RUN && seen < head; i++) {
		n = run_read(p, run, seen, head);
		if (!n) {
			CNT_INC(hook_errors);
			r = SYNC_STOP;
			break;
		}
		r = run_apply(p, tgid, run, n, &seen);
		if (r == SYNC_STOP || r == SYNC_JOURNAL)
			break;
	}
	p->seen = seen;
	if (r == SYNC_JOURNAL)
		return SYNC_JOURNAL;
	/* No store-release in BPF (clang 14): a compiler barrier, then a store. */
	asm volatile("" ::: "memory");
	p->busy = 0;
	if (seen == head)
		return SYNC_DONE;
	return r == SYNC_STOP ? SYNC_STOP : SYNC_MORE;
}

/*
 * journal.bpf.h's, which includes this file: a program that includes this
 * header (or one that includes it) includes journal.bpf.h too, since
 * proc_sync() is global and always emitted, and libbpf links no extern.
 */
int journal_apply(__u32 pslot, __u32 tgid);

/*
 * Consume every mark process @tgid (in slot @pslot) wrote since the last
 * event, a batch at a time (proc_sync_batch()), and each journal entry
 * between them in order (journal_apply(): a sibling of the batch, not
 * called inside it, so that the chain's stack is the deeper of the two,
 * not their sum; 6.1 counts each frame rounded up to 32 bytes).
 * Return: 1 when every mark written was consumed (the consumed state is
 * the open step: proc_open_step() need not read the ring again), else 0.
 */
__noinline int proc_sync(__u32 pslot, __u32 tgid)
{
	int i, r = SYNC_STOP;

	/*
	 * A batch, or the marks up to a journal entry, per call: the whole
	 * ring with no journal (the first run may start mid-run, run_read()),
	 * at least SYNC_CALLS of its entries with one; the rest at the next
	 * event (a kick at each half ring). At 192 calls and more, 6.12 and
	 * 6.18 refused the program at BPF_LOG_STATS (-ENOSPC, the log full).
	 */
	for (i = 0; i < SYNC_CALLS; i++) {
		r = proc_sync_batch(pslot, tgid);
		if (r == SYNC_JOURNAL) {
			journal_apply(pslot, tgid);
			continue;
		}
		if (r != SYNC_MORE)
			break;
	}
	return r == SYNC_DONE;
}

/*
 * proc_sync() for process @tgid if it has a slot: one with none has bound
 * no ring, so none is made for it.
 */
static __always_inline void proc_sync_known(__u32 tgid)
{
	__u32 k = proc_index(tgid);

	if (k < STEPTIME_MAX_PROCS)
		proc_sync(k, tgid);
}

/*
 * The step open in a process now, for attributing its tasks. Normally the
 * consumed state, which is current when @synced (proc_sync() consumed every
 * mark written); but while another CPU is still consuming this process's
 * marks (proc_sync() found it busy), that state may lag the marks its
 * threads already wrote, so the pending ones are read, not consumed: only
 * while the process is current, as in proc_sync().
 */
__noinline __u64 proc_pending_step(__u32 tgid)
{
	struct st_proc *p = proc_find(tgid);
	struct steptime_mark m;
	__u64 seen, head, index_id;
	int i;

	if (!p)
		return 0;
	index_id = p->cur_open ? p->cur_index : 0;
	seen = READ_ONCE(p->seen);
	if (ring_head(p, &head))
		return index_id;
	for (i = 0; i < STEPTIME_MARK_RING && seen + i < head; i++) {
		if (bpf_probe_read_user(&m, sizeof(m), ring_entry(p, seen + i)) ||
		    m.seq != seen + i + 1)
			break;
		if (m.tag == STEPTIME_TAG_START)
			index_id = m.index_id;
		else if (m.tag < STEPTIME_TAG_DEV_START && m.index_id == index_id)
			index_id = 0;
	}
	return index_id;
}

static __always_inline __u64 proc_open_step(struct st_proc *p, __u32 tgid,
					    bool synced)
{
	if (synced || !p->ring || (bpf_get_current_pid_tgid() >> 32) != tgid)
		return p->cur_open ? p->cur_index : 0;
	return proc_pending_step(tgid);
}

/*
 * The step API's kick (st_ring_kick(ring) in libsteptime, a uprobe): the
 * process binds its ring at @ring, or has the marks it wrote consumed, in
 * its own context and with no syscall the driver sees. The library kicks
 * every half ring it writes, so a process that makes few ioctls (a real
 * host's, whose queues are mapped) loses no mark.
 */
static __always_inline int ring_kick(__u64 ring)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 k = proc_get(tgid);

	if (k >= STEPTIME_MAX_PROCS)
		return 0;
	CNT_INC(ring_kicks);
	proc_ring_bind(k, ring);
	proc_sync(k, tgid);
	return 0;
}

#endif /* __MARKS_BPF_H */
