/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the steptime commands read: a snapshot of the steps map grouped by
 * process, what the kernel tells about a process (its start time, name and
 * the job/rank variables of its environment), counters by name.
 */
#ifndef _STEPTIME_TOOLS_SNAPSHOT_H
#define _STEPTIME_TOOLS_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include <steptime/steptime.h>
#include <steptime/loader.h>

/* Label values are cut to this many bytes: a label never grows unbounded. */
#define LABEL_MAX	64

/*
 * Where a process runs in its job, from the variables launchers set
 * (torchrun, MindSpore's msrun, Slurm, Volcano/Kubeflow operators). Empty
 * strings when unknown (or when the environment is not readable: another
 * user's process, without root).
 */
struct proc_labels {
	char job[LABEL_MAX];	/* STEPTIME_JOB_ID, JOB_ID, SLURM_JOB_ID, ..., not "none" */
	char rank[16];			/* RANK, RANK_ID, SLURM_PROCID */
	char local_rank[16];		/* LOCAL_RANK, SLURM_LOCALID */
	char world_size[16];		/* WORLD_SIZE, RANK_SIZE, SLURM_NTASKS */
	char device[16];		/* STEPTIME_DEVICE, ASCEND_DEVICE_ID, DEVICE_ID */
	char comm[16];			/* /proc/PID/comm */
};

/* Fill @l for kernel tgid @tgid from /proc. Return: 0, or -errno (gone). */
int proc_labels_read(__u32 tgid, struct proc_labels *l);

/*
 * The processes a command shows (--pid, --rank, --job, --device): 0 or
 * NULL is any. The labels are struct proc_labels', as the exporter's.
 */
struct proc_filter {
	__u32 pid;		/* kernel tgid, or pid inside its container */
	const char *rank, *job, *device;
};

/* The filter's getopt_long() entries, whose values proc_filter_opt() takes. */
#define PROC_FILTER_LONGOPTS					\
	{ "pid", required_argument, NULL, 'p' },		\
	{ "rank", required_argument, NULL, 'R' },		\
	{ "job", required_argument, NULL, 'J' },		\
	{ "device", required_argument, NULL, 'D' }

/*
 * Option @c's value @arg into @f: 'p' --pid, 'R' --rank, 'J' --job, 'D'
 * --device. Return: 0, or 2 after the usage error (also when @c is none
 * of them). A command calls it from its getopt loop's default case.
 */
int proc_filter_opt(const char *cmd, int c, const char *arg,
		    struct proc_filter *f);

/*
 * Whether process @tgid (@ns_tgid inside its container) passes @f; @l its
 * labels, or NULL to read them (only when a label is asked for). A process
 * whose labels cannot be read (gone, another user's) has none.
 */
bool proc_filter_match(const struct proc_filter *f, __u32 tgid,
		       __u32 ns_tgid, const struct proc_labels *l);

/* Whether @f asks for labels (then matching reads /proc/PID/environ). */
static inline bool proc_filter_labels(const struct proc_filter *f)
{
	return f->rank || f->job || f->device;
}

/* The help lines of the filter options, for a usage text. */
#define PROC_FILTER_USAGE \
	"  -p|--pid PID, --rank N, --job ID, --device ID: only the processes with\n" \
	"  that kernel pid (or pid inside their container), rank, job id or device\n" \
	"  id (the labels steptime export gives them, from their environment).\n"

/*
 * The process's start time (/proc/PID/stat field 22, clock ticks after
 * boot): with the tgid, an identity that survives pid reuse.
 * Return: the start time, 0 when the process is gone.
 */
__u64 proc_start(__u32 tgid);

/*
 * Whether process @tgid has exited: gone, or a zombie its parent has not
 * reaped yet (whose step records the BPF program has flagged
 * STEPTIME_F_EXITED already).
 */
bool proc_exited(__u32 tgid);

/*
 * A snapshot of the steps map, sorted by (tgid, index id): the steps of one
 * process are contiguous and in index order.
 */
struct snap {
	struct steptime_step_stats *steps;
	size_t n;
};

/* Read every step under @pin (NULL: default). Return: 0 or -errno. */
int snap_read(const char *pin, struct snap *snap);
/*
 * Only the steps of processes in PID namespace @pidns_ino (0: any): a
 * scoped reader sorts and keeps only its own records, not the host's.
 */
int snap_read_ns(const char *pin, __u32 pidns_ino, struct snap *snap);
void snap_free(struct snap *snap);

/* The end of the group of steps of @snap->steps[i]'s process. */
size_t snap_group_end(const struct snap *snap, size_t i);

/* A finished step: done, ended (F_UIO), or cut short by its process's exit. */
static inline bool step_finished(const struct steptime_step_stats *s)
{
	return s->state == STEPTIME_STEP_DONE ||
	       s->state == STEPTIME_STEP_ENDED ||
	       s->state == STEPTIME_STEP_INCOMPLETE;
}

/* The loss counters of struct steptime_counters, by name. */
extern const char *const loss_names[];
extern const size_t loss_count;
__u64 counter_get(const struct steptime_counters *c, const char *name);

#endif /* _STEPTIME_TOOLS_SNAPSHOT_H */
