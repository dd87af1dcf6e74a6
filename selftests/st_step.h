/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process's step record as the reader sees it, for the VM suites that
 * check steps against npusim's truth (steptime, clients).
 */
#ifndef _STEPTIME_ST_STEP_H
#define _STEPTIME_ST_STEP_H

#include <errno.h>
#include <stdbool.h>
#include <unistd.h>
#include <steptime/steptime.h>

/*
 * Step @index_id of process @pid (kernel or namespace tgid) in @pin_dir,
 * into @out; with @done, only once it is finished.
 * Return: 0, -ENOENT when there is no such record, or the reader's -errno.
 */
static inline int st_step_get(const char *pin_dir, int pid, __u64 index_id,
			      bool done, struct steptime_step_stats *out)
{
	struct steptime_reader_opts ro = {
		.sz = sizeof(ro),
		.pin_dir = pin_dir,
		.pid = pid,
	};
	struct steptime_reader *r = steptime_reader__open(&ro);
	int err = -ENOENT;

	if (!r)
		return -errno;
	while (steptime_reader__next(r, out) == 0) {
		if (out->index_id == index_id &&
		    (!done || out->state == STEPTIME_STEP_DONE)) {
			err = 0;
			break;
		}
	}
	steptime_reader__free(r);
	return err;
}

/*
 * The finished step @index_id of process @pid: the BPF program finishes it
 * when the last completion is seen, after the app's own wait returned.
 * Polls the record's state @tries times, 10 ms apart.
 * Return: as st_step_get().
 */
static inline int st_step_wait_done(const char *pin_dir, int pid,
				    __u64 index_id, int tries,
				    struct steptime_step_stats *out)
{
	int err = -ENOENT;

	while (tries-- > 0) {
		err = st_step_get(pin_dir, pid, index_id, true, out);
		if (err != -ENOENT)
			break;
		usleep(10000);
	}
	return err;
}

#endif /* _STEPTIME_ST_STEP_H */
