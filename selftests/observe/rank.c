// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One rank of a data-parallel job on npusim, for the slow-rank test: every
 * step marks START and END on its stream (device step time), submits
 * --tasks tasks of --task-ns each, and waits for the device (like
 * loss.item()). It runs for --seconds, then prints its step count.
 *
 *   rank --device N [--seconds S] [--tasks N] [--task-ns NS] [--linger 1]
 *   rank --device N --set-duration-pct PCT
 *
 * --linger 1: after the last step, print the count and stay alive (and
 * exported) until SIGTERM. --set-duration-pct: scale the task times of
 * device N through npusim's per-device config (root), then exit.
 *
 * Which rank and job it is comes from the environment (RANK, JOB_ID, ...),
 * as under torchrun; the exporter reads it from /proc.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <npusim/hal.h>
#include <steptime/steptime.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int step(struct npu_stream *s, unsigned int tasks, unsigned int task_ns)
{
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .duration_ns = task_ns };
	struct steptime_mark_opts mo = { .sz = sizeof(mo), .stream = s };
	struct trs_sqe sqes[64];
	struct steptime_step *st = steptime_step__new();
	unsigned int i;
	int err;

	if (!st)
		return -ENOMEM;
	for (i = 0; i < tasks; i++)
		npu_sqe_task(&sqes[i], &d);
	err = steptime_step__mark(st, STEPTIME_TAG_START, &mo);
	if (!err)
		err = npu_stream_submit(s, sqes, tasks);
	if (err >= 0)
		err = steptime_step__mark(st, STEPTIME_TAG_END, &mo);
	if (!err)
		err = npu_stream_sync(s, 30000);
	steptime_step__free(st);
	return err < 0 ? err : 0;
}

static int set_duration_pct(struct npu_dev *dev, unsigned int device,
			    unsigned int pct)
{
#ifdef NPUSIM_CFG_DURATION_PCT
	struct npusim_config cfg = {
		.mask = NPUSIM_CFG_DURATION_PCT,
		.device = device,
		.duration_pct = pct,
	};

	return npu_sim_set_config(dev, &cfg);
#else
	return -EOPNOTSUPP;	/* an npusim without per-device config */
#endif
}

int main(int argc, char **argv)
{
	struct npu_dev_opts dopts = { .sz = sizeof(dopts) };
	unsigned int tasks = 8, task_ns = 200000;
	double seconds = 10, end;
	struct npu_stream *s;
	struct npu_dev *dev;
	unsigned long steps = 0;
	int i, err, linger = 0, pct = 0;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--device"))
			dopts.device_id = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--tasks"))
			tasks = (unsigned int)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--task-ns"))
			task_ns = (unsigned int)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--linger"))
			linger = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--set-duration-pct"))
			pct = atoi(argv[i + 1]);
		else
			break;
	}
	if (i != argc || !tasks || tasks > 64) {
		fprintf(stderr, "usage: rank --device N [--seconds S] [--tasks 1..64] "
			"[--task-ns NS]\n");
		return 2;
	}
	dev = npu_dev_open(&dopts);
	if (dev && pct) {
		err = set_duration_pct(dev, (unsigned int)dopts.device_id,
				       (unsigned int)pct);
		if (err)
			fprintf(stderr, "rank: device %d: duration_pct %d: %s\n",
				dopts.device_id, pct, strerror(-err));
		npu_dev_close(dev);
		return err ? 1 : 0;
	}
	s = dev ? npu_stream_create(dev, NULL) : NULL;
	if (!s) {
		fprintf(stderr, "rank: device %d: %s\n", dopts.device_id, strerror(errno));
		return 1;
	}
	end = now_s() + seconds;
	do {
		err = step(s, tasks, task_ns);
		if (err) {
			fprintf(stderr, "rank: step %lu: %s\n", steps + 1, strerror(-err));
			break;
		}
		steps++;
	} while (now_s() < end);
	npu_stream_destroy(s);
	npu_dev_close(dev);
	printf("rank: device %d: %lu steps\n", dopts.device_id, steps);
	fflush(stdout);
	if (linger && !err) {
		sigset_t set;
		int sig;

		/* Until SIGTERM: a live process whose steps stay exported. */
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigprocmask(SIG_BLOCK, &set, NULL);
		sigwait(&set, &sig);
	}
	return err ? 1 : 0;
}
