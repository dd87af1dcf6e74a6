/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * steptime export's parts: the state it keeps of each process, the scope
 * it serves, and what one part (tools/export*.c) calls of another.
 */
#ifndef _STEPTIME_TOOLS_EXPORT_H
#define _STEPTIME_TOOLS_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <steptime/steptime.h>

#include "http.h"
#include "snapshot.h"

/* Step time buckets (export_poll.c): their count is the histograms' size. */
extern const char *const bucket_le[16];
#define NBUCKETS	(sizeof(bucket_le) / sizeof(bucket_le[0]))
extern __u64 bucket_ns[NBUCKETS];

/*
 * Steps in the slow-rank window: 5, not 3, because one noisy scrape on a
 * loaded node could make 3 healthy steps each look 10% slow (a false
 * SteptimeSlowRank seen in a 64-rank run); 5 costs 2 steps of latency.
 */
#define RECENT		5
#define STR_(x)		#x
#define STR(x)		STR_(x)		/* a macro's value, as a string */
#define EXPORT_MAX_PROCS 1024	/* processes exported (--max-procs) */
#define LABELS_MAX	384

struct hist {
	__u64 bucket[NBUCKETS + 1];	/* not cumulative; [NBUCKETS] is +Inf */
	__u64 count, sum_ns;
};

struct xproc {
	__u32 tgid;
	__u64 start;			/* /proc start time: pid reuse */
	char labels[LABELS_MAX];	/* pid="..",job_id="..",... */
	char info[LABELS_MAX];		/* comm, world_size */
	struct proc_labels lab;		/* unescaped, for the page */
	/*
	 * Finished steps counted so far: bit i of @window is index hw - i;
	 * of @nodev, one counted before its device time came (a step whose
	 * events were read back later than DEVICE_TIME_STEPS steps).
	 */
	__u64 hw, window, nodev;
	struct hist host, dev;
	__u64 done, incomplete, ended, tasks, completions, errors;
	__u64 submit_ioctls, submit_ns;
	/* Scoped: index ids from @first to @hw not counted (see scope_missed). */
	__u64 first, counted, missed;
	/* From the latest snapshot of the process's steps: */
	__u64 last_id;
	bool have_last;
	struct steptime_step_stats last;	/* the last finished step */
	__u64 last_host, last_dev;	/* of the last finished step having one */
	bool have_host, have_dev;
	__u64 recent_dev_min;		/* min device ns of the last RECENT */
	bool have_recent;
	__u64 open_start;		/* host START of an open step, or 0 */
	__u64 last_end;			/* END of the last step, or first seen */
	/* The open step: tasks not completed yet, its last completion. */
	__u64 open_outstanding, open_progress;
	/*
	 * Flight recorder: the last --keep finished steps counted, as they
	 * were counted (a late device time joins its record), oldest at
	 * @rec_head once full. NULL: --keep 0, or no memory for it.
	 */
	struct steptime_step_stats *rec;
	size_t rec_n, rec_head;
};

/*
 * Which processes this exporter exports (--pidns, --cgroup, --devices): a
 * node's exporter, or a pod's sidecar, sees its own only. The map holds
 * every traced process of the host.
 */
#define SCOPE_DEVICES	1024		/* --devices ids 0..1023 */
#define SCOPE_SKIP	256		/* out-of-scope processes remembered */

struct scope {
	__u32 pidns_ino;		/* 0: any */
	char cgroup[1024];		/* "": any; else a cgroup v2 path */
	bool have_devices;
	__u64 devices[SCOPE_DEVICES / 64];
	struct proc_filter filter;	/* --pid, --rank, --job, --device */
	/* Processes found out of scope, by tgid % SCOPE_SKIP: not read again. */
	struct { __u32 tgid; __u64 start; } skip[SCOPE_SKIP];
};

struct exporter {
	const char *pin;
	struct scope scope;
	struct xproc *procs;		/* sorted by tgid */
	size_t n, max;
	struct steptime_counters cnt;
	bool loaded, have_base;
	int open_err;			/* the last poll's, -errno */
	__u64 base_finished, counted;	/* for steps_missed */
	__u64 pending;			/* finished, awaiting device time */
	__u64 missed, dropped, polls, poll_errors, scrapes;
	__u64 last_poll_ns, interval_ns;
	size_t keep;			/* --keep: steps kept per process */
	__u64 freq_hz;			/* the device counter's, for traces */
	bool serving;			/* over HTTP: its figures too */
	bool scoped;	/* --pidns, --cgroup, --devices or a proc_filter */
	struct http_stats http;
};

/* Output: a growing buffer; on ENOMEM the scrape fails (500). */
struct out {
	char *p;
	size_t len, cap;
	bool oom, om;
};

/* export_poll.c */
struct xproc *proc_find(struct exporter *x, __u32 tgid, size_t *pos);
void exporter_poll(struct exporter *x);

/* export_render.c */
int render(struct out *o, const struct exporter *x);

/* export_scope.c */
bool proc_in_scope(struct scope *sc, __u32 tgid, __u32 ns_tgid,
		   __u64 start);
int scope_pidns(struct scope *sc, const char *arg);
int scope_cgroup(struct scope *sc, const char *arg);
int scope_devices(struct scope *sc, const char *arg);

#endif /* _STEPTIME_TOOLS_EXPORT_H */
