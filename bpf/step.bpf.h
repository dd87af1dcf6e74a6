/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Step records: creation, recycling, eviction, finishing.
 */
#ifndef __STEP_BPF_H
#define __STEP_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "proc.bpf.h"

/* ---------------------------------------------------------------------- */
/* Steps                                                                   */
/* ---------------------------------------------------------------------- */

static __always_inline void step_emit(struct steptime_step_stats *rec)
{
	if (bpf_ringbuf_output(&events, rec, sizeof(*rec), 0))
		CNT_INC(events_dropped);
}

/*
 * Take @rec from OPEN to @state: true for the one caller that did, of any
 * that race (the completion hook, a RECV, an exit, a recycle).
 */
static __always_inline bool step_close(struct steptime_step_stats *rec,
				       __u32 state)
{
	return __sync_val_compare_and_swap(&rec->state, STEPTIME_STEP_OPEN,
					   state) == STEPTIME_STEP_OPEN;
}

/*
 * Make room for a new record of @p: past its cap, its own oldest record
 * goes (emitted first as incomplete if it was still open).
 */
static __always_inline void step_recycle(struct st_proc *p, __u32 tgid,
					 __u32 n)
{
	struct steptime_step_key key = { .tgid = tgid };
	struct steptime_step_stats *old;

	if (n < STEPTIME_PROC_STEPS)
		return;
	key.index_id = p->recs[n % STEPTIME_PROC_STEPS];
	old = bpf_map_lookup_elem(&steps, &key);
	if (!old)
		return;
	if (step_close(old, STEPTIME_STEP_INCOMPLETE)) {
		CNT_INC(steps_recycled_open);
		step_emit(old);
	}
	CNT_INC(steps_recycled);
	bpf_map_delete_elem(&steps, &key);
}

/*
 * When the steps map is full: delete the oldest record of an exited
 * process. A queued key can name a record gone already, or one a new
 * process made again under the same key after it got the process id back
 * (step_make()): those are passed over, up to two processes' worth at a
 * time; past that, this step goes uncreated (step_map_full).
 * Return: 0 when a record was deleted, else -1.
 */
#define STEP_EVICT_TRIES	(2 * STEPTIME_PROC_STEPS)

static __always_inline int step_evict_exited(void)
{
	struct steptime_step_stats *rec;
	struct steptime_step_key old;
	int i;

	for (i = 0; i < STEP_EVICT_TRIES; i++) {
		if (bpf_map_pop_elem(&retired, &old))
			return -1;
		rec = bpf_map_lookup_elem(&steps, &old);
		if (!rec || !(rec->flags & STEPTIME_F_EXITED))
			continue;
		if (!bpf_map_delete_elem(&steps, &old)) {
			CNT_INC(steps_evicted_exited);
			return 0;
		}
	}
	return -1;
}

/* Insert a zeroed record; when the map is full, evict an exited one. */
static __always_inline int step_insert(struct steptime_step_key *key,
				       void *img)
{
	if (!bpf_map_update_elem(&steps, key, img, BPF_NOEXIST))
		return 0;
	if (bpf_map_lookup_elem(&steps, key))
		return 1;
	if (step_evict_exited())
		return 2;
	return bpf_map_update_elem(&steps, key, img, BPF_NOEXIST) ? 2 : 0;
}

/*
 * Make step @index_id's record for process @tgid: the first mark or task
 * of a step, once per step, so a global function, verified once, kept out
 * of the hot paths that find the record made. Records are created only
 * for a tracked process, at most STEPTIME_PROC_STEPS of them each:
 * whatever a process marks or submits, it can only evict its own. An
 * exited process's records are final: a new process that got its process
 * id back and numbers its steps the same way gets new records, never the
 * old ones. The caller looked the key up already: @exited when it found
 * such a record (deleted here), else it found none.
 * Return: 0 when the record exists now, else -1.
 */
__noinline int step_make(__u32 tgid, __u64 index_id, bool exited)
{
	struct steptime_step_key key = { .tgid = tgid, .index_id = index_id };
	struct steptime_step_stats *rec;
	struct st_proc *p;
	__u32 zero = 0, n, k;
	void *img;
	int err;

	if (exited && !bpf_map_delete_elem(&steps, &key))
		CNT_INC(steps_pid_reused);
	k = proc_slot_find(tgid);
	p = proc_at(k);
	img = bpf_map_lookup_elem(&zero_step, &zero);
	if (!p || !img)
		return -1;
	n = __sync_fetch_and_add(&p->nrecs, 1);
	step_recycle(p, tgid, n);
	err = step_insert(&key, img);
	if (err == 1)
		return 0;
	if (err) {
		CNT_INC(step_map_full);
		return -1;
	}
	p->recs[n % STEPTIME_PROC_STEPS] = index_id;
	rec = bpf_map_lookup_elem(&steps, &key);
	if (!rec)
		return -1;
	rec->tgid = tgid;
	rec->index_id = index_id;
	rec->stream = STEPTIME_STREAM_NONE;
	rec->ns_tgid = p->ns_tgid;
	rec->pidns_ino = p->pidns_ino;
	/*
	 * Who marks the step, when it is the process making it: it may have
	 * registered its ring before dropping privileges (an ALLOC does).
	 */
	rec->uid = (__u32)(bpf_get_current_pid_tgid() >> 32) == tgid ?
		   current_fsuid() : p->uid;
	rec->flags |= p->taint;
	CNT_INC(steps);
	return 0;
}

/*
 * Step @index_id's record of process @tgid, made when @create
 * (step_make()); an exited process's record is never returned.
 */
static __always_inline struct steptime_step_stats *
step_get(__u32 tgid, __u64 index_id, bool create)
{
	struct steptime_step_key key = { .tgid = tgid, .index_id = index_id };
	struct steptime_step_stats *rec;

	rec = bpf_map_lookup_elem(&steps, &key);
	if (rec && !(rec->flags & STEPTIME_F_EXITED))
		return rec;
	if (!create || step_make(tgid, index_id, rec))
		return NULL;
	return bpf_map_lookup_elem(&steps, &key);
}

/*
 * Ended (a host or device END), and every task of it complete: DONE; or,
 * when it may have tasks the kernel never saw (F_UIO), ENDED.
 */
static __always_inline void step_try_finish(struct steptime_step_stats *rec)
{
	__u32 f = rec->flags, state;

	if (rec->state != STEPTIME_STEP_OPEN)
		return;
	if (!(f & (STEPTIME_F_HOST_END | STEPTIME_F_DEV_END |
		   STEPTIME_F_STREAM_END)))
		return;
	if ((f & STEPTIME_F_STREAM) &&
	    !(f & (STEPTIME_F_DEV_END | STEPTIME_F_STREAM_END)))
		return;
	if (rec->completions < rec->tasks)
		return;
	/* tasks the kernel never saw may still run: ENDED, not DONE */
	state = f & STEPTIME_F_UIO ? STEPTIME_STEP_ENDED : STEPTIME_STEP_DONE;
	if (!step_close(rec, state)) {
		CNT_INC(finishes_raced);
		return;
	}
	if (state == STEPTIME_STEP_ENDED)
		CNT_INC(steps_ended);
	else
		CNT_INC(steps_done);
	step_emit(rec);
}

/*
 * A task of @rec completed at @now: the step's last completion, raised
 * atomically (a completion hook and a RECV may race), within a few tries.
 */
static __always_inline void step_completed_at(struct steptime_step_stats *rec,
					      __u64 now)
{
	__u64 old = READ_ONCE(rec->last_complete_ns), seen;
	int i;

	for (i = 0; i < 4 && now > old; i++) {
		seen = __sync_val_compare_and_swap(&rec->last_complete_ns,
						   old, now);
		if (seen == old)
			break;
		old = seen;
	}
}

static __always_inline __u64 ticks_to_ns(__u64 ticks)
{
	__u64 f = counter_freq_hz;

	if (!f)
		return 0;
	return ticks / f * 1000000000ull + ticks % f * 1000000000ull / f;
}

static __always_inline void step_set_device_time(struct steptime_step_stats *rec)
{
	if ((rec->flags & STEPTIME_F_DEV_START) &&
	    (rec->flags & STEPTIME_F_DEV_END) &&
	    rec->dev_end_ticks >= rec->dev_start_ticks)
		rec->device_time_ns = ticks_to_ns(rec->dev_end_ticks -
						  rec->dev_start_ticks);
}

#endif /* __STEP_BPF_H */
