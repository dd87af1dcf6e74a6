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
 *        [--linger 1] [--barrier FILE --world N] [--host-ns NS] [--wait-ns NS]
 *        [--lead-ns NS]
 *   rank --device N --set-duration-pct PCT
 *   rank --barrier FILE --world N --pause-ms MS | --hang-rank R
 *
 * --barrier FILE --world N: after each step (END marked, the stream
 * synchronised) the rank waits for all N ranks sharing FILE (a futex in
 * the mapped file), as a collective would make it: the ranks stay in step,
 * and a rank that stops holds its peers up, outside their steps. A
 * controller (the same options, no device): --pause-ms MS has the next
 * barrier release every rank into a pause of MS milliseconds after the
 * same step (a checkpoint: the whole job idle, nothing outstanding);
 * --hang-rank R makes the rank whose RANK is R stop after its next
 * barrier, before its next step's START (a host hang: it submits nothing
 * more, its peers do one more step and wait). Through the shared file, not
 * a signal: a signal would interrupt the rank's ioctls.
 *
 * --host-ns NS: the host's own work of each step, NS nanoseconds after its
 * launch and before it waits for the stream (a sleep: the next batch, the
 * optimizer's host side), overlapping the device's. The wait then polls
 * only the device time left over: 64 ranks that poll their whole device
 * step (the runtime's backoff, 1 ms) take the 2 vCPUs of a TCG guest from
 * the exporters and Prometheus that watch them.
 *
 * --wait-ns NS: before the stream's synchronisation, the rank asks the
 * stream every NS nanoseconds (aclrtStreamQuery, a sleep between) whether
 * its tasks are done, as a loop that overlaps host work with the device
 * does; the runtime's own wait polls every millisecond, and a rank whose
 * device hangs would poll (and be traced) 1,000 times a second for as long
 * as it waits. Each query reads the SQ head, as the runtime's wait does:
 * the device's progress is seen as often as the rank asks.
 *
 * --lead-ns NS: a task of NS nanoseconds launched before each step's START
 * mark: the device is still busy with it when START, the step's tasks and
 * END are submitted, as a host that runs ahead of its device keeps it; the
 * step's device time is then its tasks' own. Without it, a rank that its
 * (TCG) guest descheduled between START and its launch leaves the device
 * idle inside the step, which looks like a slower device (a 10 ms gap in
 * each of 3 steps of 100 ms: a slow rank).
 *
 * --linger 1: after the last step, print the count and stay alive (and
 * exported) until SIGTERM. --set-duration-pct: scale the task times of
 * device N through npusim's per-device config (NPUSIM_IOC_SET_CONFIG, root),
 * then exit. A controller's change (--pause-ms, --hang-rank,
 * --set-duration-pct) prints "in effect at SECS" (CLOCK_REALTIME, as
 * Prometheus' times) once made: when a fault began, for its detection
 * latency, without this program's start-up. Which rank and job it is
 * comes from the environment (RANK, JOB_ID, ...), as under torchrun; the
 * exporter reads it from /proc.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/futex.h>
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

static void host_work(long ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000l, .tv_nsec = ns % 1000000000l };

	while (ns && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Until the stream's tasks are done, or it fails: its query every @ns. */
static void stream_wait(aclrtStream s, long ns)
{
	aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;

	while (ns && aclrtStreamQuery(s, &st) == ACL_SUCCESS &&
	       st == ACL_EVENT_RECORDED_STATUS_NOT_READY)
		host_work(ns);
}

static int step(aclrtStream s, unsigned int tasks, unsigned int task_ns,
		long host_ns, long wait_ns, long lead_ns)
{
	struct steptime_mark_opts mo = { .sz = sizeof(mo), .stream = s };
	struct steptime_step *st = steptime_step__new();
	aclError ret;
	int err = 0;

	if (!st)
		return -ENOMEM;
	if (lead_ns && aclnpusimLaunchKernel(s, ACL_NPUSIM_KERNEL_AICORE, 1,
					     (unsigned int)lead_ns) != ACL_SUCCESS)
		err = -EIO;
	if (!err)
		err = steptime_step__mark(st, STEPTIME_TAG_START, &mo);
	if (!err) {
		ret = aclnpusimLaunchKernel(s, ACL_NPUSIM_KERNEL_AICORE, tasks, task_ns);
		err = ret == ACL_SUCCESS ? 0 : -EIO;
	}
	if (!err)
		err = steptime_step__mark(st, STEPTIME_TAG_END, &mo);
	if (!err)
		host_work(host_ns);
	if (!err)
		stream_wait(s, wait_ns);
	if (!err && aclrtSynchronizeStream(s) != ACL_SUCCESS)
		err = -EIO;
	steptime_step__free(st);
	return err;
}

static void print_in_effect(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	printf("in effect at %lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
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

/* The barrier's shared state, in the file every rank maps. */
struct barrier {
	_Atomic uint32_t arrived;
	_Atomic uint32_t gen;		/* the futex: bumped at each release */
	_Atomic uint32_t pause_req_ms;	/* a controller's request */
	_Atomic uint32_t pause_ms;	/* the released generation's pause */
	_Atomic uint32_t hang_rank;	/* RANK + 1 of the rank to stop, or 0 */
};

static struct barrier *bar;
static unsigned int world;

static struct barrier *barrier_map(const char *path)
{
	struct barrier *b;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0 || ftruncate(fd, sizeof(*b))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return b == MAP_FAILED ? NULL : b;
}

/* Wait for every rank; then the pause the last one to arrive handed out. */
static void barrier_wait(void)
{
	uint32_t gen = atomic_load(&bar->gen);

	if (atomic_fetch_add(&bar->arrived, 1) + 1 == world) {
		atomic_store(&bar->arrived, 0);
		atomic_store(&bar->pause_ms, atomic_exchange(&bar->pause_req_ms, 0));
		atomic_fetch_add(&bar->gen, 1);
		syscall(SYS_futex, &bar->gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	} else {
		while (atomic_load(&bar->gen) == gen)
			syscall(SYS_futex, &bar->gen, FUTEX_WAIT, gen, NULL, NULL, 0);
	}
	if (atomic_load(&bar->pause_ms)) {
		struct timespec ts = {
			.tv_sec = atomic_load(&bar->pause_ms) / 1000,
			.tv_nsec = atomic_load(&bar->pause_ms) % 1000 * 1000000l,
		};

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
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
	long host_ns = 0, wait_ns = 0, lead_ns = 0;
	int i, err = 0, device = 0, lingers = 0, pct = 0, pause_ms = 0, hang_rank = -1;
	const char *me = getenv("RANK");
	const char *barrier = NULL;
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
		else if (!strcmp(argv[i], "--barrier"))
			barrier = argv[i + 1];
		else if (!strcmp(argv[i], "--world"))
			world = (unsigned int)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--pause-ms"))
			pause_ms = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--host-ns"))
			host_ns = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--lead-ns"))
			lead_ns = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--wait-ns"))
			wait_ns = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--hang-rank"))
			hang_rank = atoi(argv[i + 1]);
		else
			break;
	}
	if (i != argc || !tasks || tasks > 1024 || device < 0 ||
	    host_ns < 0 || wait_ns < 0 || lead_ns < 0 || lead_ns > UINT_MAX ||
	    !barrier != !world || pause_ms < 0 || (pause_ms && !barrier) ||
	    (hang_rank >= 0 && !barrier)) {
		fprintf(stderr, "usage: rank --device N [--seconds S] [--max-steps N] "
			"[--tasks 1..1024] [--task-ns NS] [--linger 1]\n"
			"            [--barrier FILE --world N] [--host-ns NS] [--wait-ns NS]\n"
			"            [--lead-ns NS]\n"
			"       rank --device N --set-duration-pct PCT\n"
			"       rank --barrier FILE --world N --pause-ms MS | --hang-rank R\n");
		return 2;
	}
	if (barrier) {
		bar = barrier_map(barrier);
		if (!bar) {
			fprintf(stderr, "rank: %s: %s\n", barrier, strerror(errno));
			return 1;
		}
	}
	if (pause_ms || hang_rank >= 0) {
		if (pause_ms)
			atomic_store(&bar->pause_req_ms, (uint32_t)pause_ms);
		if (hang_rank >= 0)
			atomic_store(&bar->hang_rank, (uint32_t)hang_rank + 1);
		print_in_effect();
		return 0;
	}
	if (pct) {
		err = set_duration_pct((unsigned int)device, (unsigned int)pct);
		if (err) {
			fprintf(stderr, "rank: device %d: duration_pct %d: %s\n",
				device, pct, strerror(-err));
			return 1;
		}
		print_in_effect();
		return 0;
	}
	if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(device) != ACL_SUCCESS ||
	    aclrtCreateStream(&s) != ACL_SUCCESS) {
		fprintf(stderr, "rank: device %d: the ACL runtime failed\n", device);
		return 1;
	}
	end = now_s() + seconds;
	do {
		if (bar && me && atomic_load(&bar->hang_rank) == (uint32_t)atoi(me) + 1)
			for (;;)
				pause();	/* a host hang: until killed */
		err = step(s, tasks, task_ns, host_ns, wait_ns, lead_ns);
		if (err) {
			fprintf(stderr, "rank: step %lu: %s\n", steps + 1, strerror(-err));
			break;
		}
		steps++;
		if (bar)
			barrier_wait();
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
