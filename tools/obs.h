/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the steptime commands share: a snapshot of the steps map grouped by
 * process, what the kernel tells about a process (its start time, name and
 * the job/rank variables of its environment), the pin directory, and the
 * parsing of option values and its errors.
 */
#ifndef _STEPTIME_TOOLS_OBS_H
#define _STEPTIME_TOOLS_OBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include <steptime/steptime.h>
#include <steptime/loader.h>

/* Label values are cut to this many bytes: a label never grows unbounded. */
#define OBS_LABEL_MAX	64

/*
 * Where a process runs in its job, from the variables launchers set
 * (torchrun, MindSpore's msrun, Slurm, Volcano/Kubeflow operators). Empty
 * strings when unknown (or when the environment is not readable: another
 * user's process, without root).
 */
struct obs_labels {
	char job[OBS_LABEL_MAX];	/* STEPTIME_JOB_ID, JOB_ID, SLURM_JOB_ID, ... */
	char rank[16];			/* RANK, RANK_ID, SLURM_PROCID */
	char local_rank[16];		/* LOCAL_RANK, SLURM_LOCALID */
	char world_size[16];		/* WORLD_SIZE, RANK_SIZE, SLURM_NTASKS */
	char device[16];		/* STEPTIME_DEVICE, ASCEND_DEVICE_ID, DEVICE_ID */
	char comm[16];			/* /proc/PID/comm */
};

/* Fill @l for kernel tgid @tgid from /proc. Return: 0, or -errno (gone). */
int obs_labels_read(__u32 tgid, struct obs_labels *l);

/*
 * The process's start time (/proc/PID/stat field 22, clock ticks after
 * boot): with the tgid, an identity that survives pid reuse.
 * Return: the start time, 0 when the process is gone.
 */
__u64 obs_proc_start(__u32 tgid);

/*
 * Whether process @tgid has exited: gone, or a zombie its parent has not
 * reaped yet (whose step records the BPF program has flagged
 * STEPTIME_F_EXITED already).
 */
bool obs_proc_exited(__u32 tgid);

/* CLOCK_MONOTONIC now, the clock of every host time in a step record. */
__u64 obs_now_ns(void);

/*
 * A snapshot of the steps map, sorted by (tgid, index id): the steps of one
 * process are contiguous and in index order.
 */
struct obs_snap {
	struct steptime_step_stats *steps;
	size_t n;
};

/* Read every step under @pin (NULL: default). Return: 0 or -errno. */
int obs_snap_read(const char *pin, struct obs_snap *snap);
void obs_snap_free(struct obs_snap *snap);

/* The end of the group of steps of @snap->steps[i]'s process. */
size_t obs_snap_group_end(const struct obs_snap *snap, size_t i);

/* A finished step: done, ended (F_UIO), or cut short by its process's exit. */
static inline bool obs_finished(const struct steptime_step_stats *s)
{
	return s->state == STEPTIME_STEP_DONE ||
	       s->state == STEPTIME_STEP_ENDED ||
	       s->state == STEPTIME_STEP_INCOMPLETE;
}

/* The "not loaded" / "permission denied" messages of every command. */
int obs_open_error(const char *cmd, const char *pin, int err);

/*
 * Flush @f: 0 when everything written to it got there, else -errno of the
 * failure (ENOSPC, EPIPE...), -EIO when nothing says more.
 */
int obs_out_error(FILE *f);

/*
 * A bad command line: "steptime CMD: MSG" (getopt printed its own: @fmt
 * NULL), then "Try 'steptime CMD --help'.". Return: 2, the exit status.
 */
__attribute__((format(printf, 2, 3)))
int obs_usage_error(const char *cmd, const char *fmt, ...);

/*
 * An unsigned number in @base (10 or 8), in [@min, @max]: its digits only,
 * no sign, space, prefix or trailing text. Return: 0 or -EINVAL.
 */
int obs_parse_ull(const char *s, int base, unsigned long long min,
		  unsigned long long max, unsigned long long *v);

/*
 * Option @opt's decimal value @s, in [@min, @max]. Return: 0, or 2 after
 * the usage error naming the option.
 */
int obs_opt_ull(const char *cmd, const char *opt, const char *s,
		unsigned long long min, unsigned long long max,
		unsigned long long *v);

/* Option @opt's seconds @s (digits and one '.'), in [@min, @max]: as above. */
int obs_opt_secs(const char *cmd, const char *opt, const char *s, double min,
		 double max, double *v);

/* The loss counters of struct steptime_counters, by name. */
extern const char *const obs_loss_names[];
extern const size_t obs_loss_count;
__u64 obs_counter(const struct steptime_counters *c, const char *name);

#endif /* _STEPTIME_TOOLS_OBS_H */
