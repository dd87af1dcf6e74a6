// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One rank of a data-parallel job, for the slow-rank test: a CANN program
 * on npusim (linked with steptime's libascendcl stand-in, as a training
 * job links CANN's). Every step marks START and END on its stream
 * (steptime's stream marks: device step time), launches --tasks kernels of
 * --task-ns each, and waits for the stream (like loss.item()). It runs for
 * --seconds or --max-steps, hands the last step's device time on
 * (steptime__flush()), then prints its step count.
 *
 *   rank --device N [--seconds S] [--max-steps N] [--tasks N] [--task-ns NS]
 *        [--linger 1]
 *   rank --device N --set-duration-pct PCT
 *
 * --linger 1: after the last step, print the count and stay alive (and
 * exported) until SIGTERM. --set-duration-pct: scale the task times of
 * device N through npusim's per-device config (NPUSIM_IOC_SET_CONFIG, root),
 * then exit. Which rank and job it is comes from the environment (RANK,
 * JOB_ID, ...), as under torchrun; the exporter reads it from /proc.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <npusim_abi.h>
#include <steptime/steptime.h>
#include "acl/acl.h"
#include "acl/acl_npusim.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int step(aclrtStream s, unsigned int tasks, unsigned int task_ns)
{
	struct steptime_mark_opts mo = { .sz = sizeof(mo), .stream = s };
	struct steptime_step *st = steptime_step__new();
	aclError ret;
	int err;

	if (!st)
		return -ENOMEM;
	err = steptime_step__mark(st, STEPTIME_TAG_START, &mo);
	if (!err) {
		ret = aclnpusimLaunchKernel(s, ACL_NPUSIM_KERNEL_AICORE, tasks, task_ns);
		err = ret == ACL_SUCCESS ? 0 : -EIO;
	}
	if (!err)
		err = steptime_step__mark(st, STEPTIME_TAG_END, &mo);
	if (!err && aclrtSynchronizeStream(s) != ACL_SUCCESS)
		err = -EIO;
	steptime_step__free(st);
	return err;
}

static int set_duration_pct(unsigned int device, unsigned int pct)
{
	struct npusim_config cfg = {
		.mask = NPUSIM_CFG_DURATION_PCT,
		.device = device,
		.duration_pct = pct,
	};
	int fd = open("/dev/" NPUSIM_DEV_NAME, O_RDWR | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, NPUSIM_IOC_SET_CONFIG, &cfg))
		err = -errno;
	close(fd);
	return err;
}

/* Until SIGTERM: a live process whose steps stay exported. */
static void linger(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sigwait(&set, &sig);
}

int main(int argc, char **argv)
{
	unsigned int tasks = 8, task_ns = 200000;
	unsigned long steps = 0, max_steps = 0;
	int i, err = 0, device = 0, lingers = 0, pct = 0;
	double seconds = 10, end;
	aclrtStream s = NULL;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--device"))
			device = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--max-steps"))
			max_steps = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--tasks"))
			tasks = (unsigned int)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--task-ns"))
			task_ns = (unsigned int)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--linger"))
			lingers = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--set-duration-pct"))
			pct = atoi(argv[i + 1]);
		else
			break;
	}
	if (i != argc || !tasks || tasks > 1024 || device < 0) {
		fprintf(stderr, "usage: rank --device N [--seconds S] [--max-steps N] "
			"[--tasks 1..1024] [--task-ns NS] [--linger 1]\n"
			"       rank --device N --set-duration-pct PCT\n");
		return 2;
	}
	if (pct) {
		err = set_duration_pct((unsigned int)device, (unsigned int)pct);
		if (err)
			fprintf(stderr, "rank: device %d: duration_pct %d: %s\n",
				device, pct, strerror(-err));
		return err ? 1 : 0;
	}
	if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(device) != ACL_SUCCESS ||
	    aclrtCreateStream(&s) != ACL_SUCCESS) {
		fprintf(stderr, "rank: device %d: the ACL runtime failed\n", device);
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
	} while (now_s() < end && (!max_steps || steps < max_steps));
	/*
	 * The last step's device time is handed on now, not at exit: the
	 * exporter waits a second for it once the process stops stepping, and
	 * the teardown below can take longer under emulation.
	 */
	if (!err)
		steptime__flush();
	aclrtDestroyStream(s);
	aclrtResetDevice(device);
	aclFinalize();
	printf("rank: device %d: %lu steps\n", device, steps);
	fflush(stdout);
	if (lingers && !err)
		linger();
	return err ? 1 : 0;
}
