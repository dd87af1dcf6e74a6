/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The exporter's page (GET /): the node's processes, their last steps as
 * a plot of device against host time, what the exporter sees going wrong,
 * links to /metrics and /trace. Self-contained HTML: inline SVG and CSS,
 * no script, nothing fetched from elsewhere.
 */
#ifndef _STEPTIME_TOOLS_PAGE_H
#define _STEPTIME_TOOLS_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "snapshot.h"

/* One exported process, as the exporter counted it. */
struct page_proc {
	__u32 pid;			/* kernel tgid: the pid label */
	const struct proc_labels *lab;	/* raw: the page escapes them */
	__u64 last_id;			/* steptime_last_step_id */
	__u64 last_host, last_dev;	/* steptime_last_step_*_seconds, ns */
	bool have_host, have_dev;
	__u64 last_errors;		/* task errors of the last step */
	__u64 incomplete;		/* steps cut short by an exit */
	__u64 open_outstanding;		/* tasks of the open step pending */
	__u64 stall_ns;			/* since the open step's progress */
	/* The flight recorder's steps, in any order (NULL: --keep 0). */
	const struct steptime_step_stats *steps;
	size_t n;
};

/* The node: what /metrics says outside the processes. */
struct page_node {
	bool loaded;
	const struct steptime_counters *cnt;	/* NULL: not loaded */
	__u64 missed, dropped;
	size_t keep;				/* --keep: 0, no /trace */
};

/* Write the page to @f. Return: 0, or -EIO when @f failed. */
int page_write(FILE *f, const struct page_node *node,
	       const struct page_proc *procs, size_t n);

#endif /* _STEPTIME_TOOLS_PAGE_H */
