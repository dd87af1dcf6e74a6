/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Process exit: close its open steps as incomplete, free its slot.
 */
#ifndef __EXIT_BPF_H
#define __EXIT_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "step.bpf.h"
#include "marks.bpf.h"
#include "queues.bpf.h"
#include "ioctl.bpf.h"

/* ---------------------------------------------------------------------- */
/* Process exit: close its open steps as incomplete, free its slot         */
/* ---------------------------------------------------------------------- */

static long drop_sq(struct bpf_map *map, __u32 *slot, struct st_sq *sq,
		    __u32 *tgid)
{
	if (sq->live && sq->tgid == *tgid)
		sq_delete(&sq->key);
	return 0;
}

static long drop_cq(struct bpf_map *map, struct st_ckey *key,
		    struct st_cq *cq, __u32 *tgid)
{
	if (cq->tgid == *tgid)
		bpf_map_delete_elem(map, key);
	return 0;
}

static long drop_file(struct bpf_map *map, __u64 *key, struct st_file *f,
		      __u32 *tgid)
{
	if (f->tgid == *tgid)
		bpf_map_delete_elem(map, key);
	return 0;
}

static __always_inline void step_abandon(__u32 tgid, __u64 index_id)
{
	struct steptime_step_stats *rec;

	if (!index_id)
		return;
	rec = step_get(tgid, index_id, false);
	if (!rec || !step_close(rec, STEPTIME_STEP_INCOMPLETE))
		return;
	CNT_INC(steps_incomplete);
	step_emit(rec);
}

/*
 * Its records stay readable, and are the first to go when room is needed:
 * queued oldest first, behind those of processes that exited before.
 */
static __always_inline void steps_retire(struct st_proc *p, __u32 tgid)
{
	struct steptime_step_key key = { .tgid = tgid };
	struct steptime_step_stats *rec;
	__u32 n = p->nrecs, held, i;

	held = n < STEPTIME_PROC_STEPS ? n : STEPTIME_PROC_STEPS;
	for (i = 0; i < STEPTIME_PROC_STEPS; i++) {
		if (i >= held)
			break;
		key.index_id = p->recs[(n - held + i) % STEPTIME_PROC_STEPS];
		rec = bpf_map_lookup_elem(&steps, &key);
		if (!rec)
			continue;
		__sync_fetch_and_or(&rec->flags, STEPTIME_F_EXITED);
		bpf_map_push_elem(&retired, &key, BPF_EXIST);
	}
}


/*
 * The last chance to read a process's marks while its memory still exists
 * (sched_process_exit runs after exit_mm()): at each thread's exit.
 */
static __always_inline int exit_sync(void)
{
	proc_sync_known(bpf_get_current_pid_tgid() >> 32);
	thread_exit();
	return 0;
}

#endif /* __EXIT_BPF_H */
