/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Ascend driver's own per-SQ counts: /proc/trs_core/ts_inst/
 * dev<d>-ts<t>/hw_sq (trs_proc_fs.c), root-readable, on a real host as
 * under npusim. For a mapped SQ, "uio send ok" is the library's send_ok of
 * the SQ's shared-info page: every SQE its halSqTaskSend() sent.
 */
#ifndef STEPTIME_TOOLS_HW_SQ_H
#define STEPTIME_TOOLS_HW_SQ_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define HW_SQ_ROOT	"/proc/trs_core/ts_inst"

struct hw_sq {
	__u32 dev, ts, id;
	int pid;
	char mode[8];		/* "kio", "uio_t", "uio_d" */
	bool counted;		/* the uio line: send_ok and the rest read */
	__u64 send_ok, send_full, send_fail;
};

/**
 * hw_sq_read() - every SQ of every dev<d>-ts<t>/hw_sq under @root
 * @root: HW_SQ_ROOT, or another tree of the same shape (tests)
 * @out: filled with up to @max SQs, by device, TS and id
 * @max: room in @out
 *
 * Return: the number of SQs found (more than @max: only @max filled), or
 * -ENOENT where there is no such tree (no driver), -EACCES where its files
 * need root, another -errno for a file that could not be read.
 */
int hw_sq_read(const char *root, struct hw_sq *out, size_t max);

#endif
