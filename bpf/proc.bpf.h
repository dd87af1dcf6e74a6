/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Processes: identity across PID namespaces, slots, exit.
 */
#ifndef __PROC_BPF_H
#define __PROC_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"

/* ---------------------------------------------------------------------- */
/* Process identity (design-notes: containers)                            */
/* ---------------------------------------------------------------------- */

/*
 * The (PID-namespace inode, tgid in that namespace) pair that user space
 * gets from stat("/proc/self/ns/pid") and getpid().
 */
static __always_inline void task_ns_ident(struct task_struct *task,
					  __u32 *ino, __u32 *nr)
{
	struct pid *pid = BPF_CORE_READ(task, group_leader, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid up = {};

	/* numbers[] is a flexible array: index it by hand. */
	bpf_probe_read_kernel(&up, sizeof(up), (void *)pid +
			      bpf_core_field_offset(struct pid, numbers) +
			      (__u64)(level & 31) * sizeof(struct upid));
	*nr = up.nr;
	*ino = BPF_CORE_READ(up.ns, ns.inum);
}

/*
 * The owner of the files the current task creates (kernel-wide, as
 * stat(2) reports it): its phase file among them (lib/phase_write.c).
 */
static __always_inline __u32 current_fsuid(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, cred, fsuid.val);
}

/*
 * The slot of process @tgid: its home slot (tgid modulo the size) or one
 * of the ST_PROC_PROBE - 1 after it; STEPTIME_MAX_PROCS when it has none.
 */
static __always_inline __u32 proc_slot_find(__u32 tgid)
{
	struct st_proc *p;
	__u32 i, k;

	if (!tgid)
		return STEPTIME_MAX_PROCS;	/* 0 marks a free slot */
	for (i = 0; i < ST_PROC_PROBE; i++) {
		k = (tgid + i) & (STEPTIME_MAX_PROCS - 1);
		p = bpf_map_lookup_elem(&procs, &k);
		if (p && READ_ONCE(p->tgid) == tgid)
			return k;
	}
	return STEPTIME_MAX_PROCS;
}

/*
 * proc_slot_find() as a global function, as proc_make(): verified once,
 * not at each call site, and its callers see one result, as from a hash
 * lookup. (step_make(), itself global, searches inline: one call frame
 * less under a SEND's callbacks.)
 */
__noinline __u32 proc_index(__u32 tgid)
{
	return proc_slot_find(tgid);
}

/*
 * Make process @tgid's entry, in the first free slot from its home on.
 * A free slot is zero (proc_free()) but for what its maker writes, which
 * every thread of the process writes alike: so two threads making it at
 * once both write it and publish it, and neither waits for the other.
 * Return: its slot; STEPTIME_MAX_PROCS when every slot it may take is
 * another process's (proc_map_full).
 */
__noinline __u32 proc_make(__u32 tgid)
{
	struct task_struct *task;
	__u32 holder, i, k, ino, nr, uid;
	struct st_proc *p;

	if (!tgid)
		return STEPTIME_MAX_PROCS;
	task = (struct task_struct *)bpf_get_current_task();
	task_ns_ident(task, &ino, &nr);
	uid = current_fsuid();
	for (i = 0; i < ST_PROC_PROBE; i++) {
		k = (tgid + i) & (STEPTIME_MAX_PROCS - 1);
		p = bpf_map_lookup_elem(&procs, &k);
		if (!p)
			break;
		holder = __sync_val_compare_and_swap(&p->claim, 0, tgid);
		if (holder && holder != tgid)
			continue;
		p->pidns_ino = ino;
		p->ns_tgid = nr;
		p->uid = uid;
		/* Fully ordered after the stores above; first one wins. */
		__sync_val_compare_and_swap(&p->tgid, 0, tgid);
		return k;
	}
	CNT_INC(proc_map_full);
	return STEPTIME_MAX_PROCS;
}

static __always_inline struct st_proc *proc_find(__u32 tgid)
{
	__u32 k = proc_index(tgid);

	return k < STEPTIME_MAX_PROCS ? bpf_map_lookup_elem(&procs, &k) : NULL;
}

/* The process in slot @k, which proc_index() or proc_make() gave. */
static __always_inline struct st_proc *proc_at(__u32 k)
{
	return k < STEPTIME_MAX_PROCS ? bpf_map_lookup_elem(&procs, &k) : NULL;
}

/* Process @tgid's slot, made at its first tracked ioctl. */
static __always_inline __u32 proc_get(__u32 tgid)
{
	__u32 k = proc_index(tgid);

	return k < STEPTIME_MAX_PROCS ? k : proc_make(tgid);
}

/*
 * The process has exited (its last thread): its slot is free for another,
 * zeroed first, as proc_make() needs it. Unpublished before it is
 * released, so that no one finds it half zeroed.
 */
static __always_inline void proc_free(struct st_proc *p)
{
	__sync_lock_test_and_set(&p->tgid, 0);
	__builtin_memset(p, 0, offsetof(struct st_proc, tgid));
	__sync_lock_test_and_set(&p->claim, 0);
}

#endif /* __PROC_BPF_H */
