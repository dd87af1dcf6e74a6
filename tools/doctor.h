/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * steptime doctor's parts, internal to tools/: what it gathers
 * (doctor_gather.c), its verdicts (doctor_judge.c) and what it prints
 * (doctor_out.c), over one struct doctor; doctor.c is the command.
 */
#ifndef STEPTIME_TOOLS_DOCTOR_H
#define STEPTIME_TOOLS_DOCTOR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <steptime/steptime.h>
#include <steptime/loader.h>
#include "hw_sq.h"
#include "../bpf/steptime.h"

#ifndef ST_SQ_HAL
#define ST_SQ_HAL	(1u << 4)	/* submissions seen by the HAL probes */
#endif

#define PROGS_MAX	64
#define REASON		320
#define WIDTH		80

enum verdict { V_EXACT, V_BOUND, V_ABSENT };

/* The figures of a step, as `stat` prints them. */
enum figure { F_STEPS, F_HOST, F_DEVICE, F_TASKS, F_COMPLETION, F_NUM };

struct judgement {
	enum verdict v;
	char why[REASON];
};

/* SQs of one device (or of one process) by mode. */
struct sq_modes {
	__u32 dev;
	unsigned int kio, uio_t, uio_d, hal, preexisting;
};

#define DEVS_MAX	64
#define SQS_MAX		4096

/* A live SQ as steptime holds it: the SQEs it counted since its first. */
struct sq_count {
	__u32 dev, ts, id, tgid, flags;
	__u64 sqes;
};

/* A mapped SQ of the driver's /proc files, and steptime's count of it. */
struct sq_check {
	struct hw_sq drv;
	const struct sq_count *st;	/* NULL: steptime holds no such SQ */
};

/* A library the process has mapped, by file name prefix. */
enum lib { L_STEPTIME, L_ACL, L_RUNTIME, L_NPUHAL, L_HAL, L_NUM };

struct proc {
	__u32 tgid, ns_tgid;
	char comm[16];
	bool exited;
	bool tracked;		/* in the program's procs map */
	__u64 ring, seen;
	__u32 taint;
	__u32 host_taint;	/* what its host-marked steps are flagged */
	__u32 journal;		/* ST_PJ_*: its ring journals its sends */
	int ring_read;		/* 0: @head read from its memory, else -errno */
	__u64 head;
	struct sq_modes sq;
	char lib[L_NUM][PATH_MAX];
	int maps_err;		/* reading /proc/PID/maps */
	bool kicked;		/* its libsteptime is a probed file */
	/* Its step records. */
	unsigned int recs, done, ended, open, incomplete;
	__u32 rec_flags;	/* OR of their flags */
	unsigned int dev_steps, dev_event_steps, stream_steps;
	__u64 completions, reported;
	struct judgement j[F_NUM];
};

struct doctor {
	const char *pin;
	int pid;			/* -p, 0: every process */
	struct steptime_info inf;
	struct steptime_counters cnt;
	struct steptime_marks_hdr hdr;
	bool hdr_ok;
	struct steptime_prog progs[PROGS_MAX];
	int nprogs;			/* -errno when unreadable */
	int priv_err;			/* the private maps: 0 or -errno */
	struct sq_modes devs[DEVS_MAX];
	int ndevs;
	struct sq_count *sqs;
	size_t nsqs;
	struct sq_check *checks;	/* the driver's mapped SQs */
	int nchecks;			/* -errno: its files unreadable */
	unsigned int kick_files;
	struct proc *procs;
	size_t nprocs;
	int steps_err;
};

enum hook { H_IOCTL, H_CQ, H_SQE, H_KICK, H_EXIT, H_CHAN, H_HAL, H_NUM };

/* How its mapped SQs' sends are counted, for each process. */
enum sends_path { S_UNKNOWN, S_KERNEL, S_JOURNAL, S_PROBES, S_NONE };

/*
 * What its steps are flagged for: STEPTIME_F_UIO process-wide (a blind SQ)
 * or ST_TAINT_UIO_HOST (only its host-marked steps: a uio_t SQ the trace
 * hook counts at the driver's copy), STEPTIME_F_PREEXISTING.
 */
#define ST_TAINT_UIO_HOST	(1u << 31)

/* doctor_gather.c */
int hook_count(const struct doctor *d, enum hook h);
int gather(struct doctor *d);

/* doctor_judge.c */
void judge_marks(const struct doctor *d, struct proc *p);
void judge_device(struct proc *p);
void judge_tasks(const struct doctor *d, struct proc *p);
__u64 marks_overrun(const struct proc *p);
enum sends_path sends_path(const struct doctor *d, const struct proc *p);
__u32 proc_taints(const struct proc *p);
const char *check_verdict(const struct sq_check *c, bool brief);

/* doctor_out.c */
void host_text(void);
void doctor_text(const struct doctor *d);
void json_kv(const char *indent, const char *key, const char *s,
	     bool last);
void host_json(void);
void doctor_json(const struct doctor *d);

#endif /* STEPTIME_TOOLS_DOCTOR_H */
