// SPDX-License-Identifier: GPL-2.0
/*
 * The README's limits table, line by line: each limit driven past its end,
 * and what happens there checked against the counter that says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <steptime/loader.h>
#include <steptime/steptime.h>
#include <npusim/hal.h>

#include "kselftest_harness.h"
#include "ksft_filter.h"
#include "../st_step.h"

#define PIN_DIR		"/sys/fs/bpf/steptime_limits"
#define MAX_PROCS	1024	/* bpf/steptime.h STEPTIME_MAX_PROCS */
#define MAX_SQS		128	/* STEPTIME_MAX_SQS */
#define MAX_CQS		1024	/* STEPTIME_MAX_CQS */
#define MAX_FILES	1024	/* STEPTIME_MAX_FILES */
#define EVENTS_BYTES	(256 * 1024)

FIXTURE(lim) {
	struct npu_dev *dev;
	int fd;
	struct steptime_counters c0;
};

/*
 * Loaded once for the program (tp_btf: attaching patches no kernel text,
 * which costs seconds under TCG), or again when @fresh asks for empty maps.
 */
static int ensure_loaded(bool fresh)
{
	struct steptime_load_opts lo = {
		.sz = sizeof(lo),
		.pin_dir = PIN_DIR,
		.attach_mode = STEPTIME_ATTACH_TP_BTF,
	};
	struct steptime_info inf;

	if (!fresh && !steptime__read_info(PIN_DIR, &inf))
		return 0;
	steptime__unload(PIN_DIR);
	return steptime__load(&lo);
}

/* The harness's parent process, at exit: leave nothing loaded. */
__attribute__((destructor)) static void unload_at_exit(void)
{
	if (!geteuid())
		steptime__unload(PIN_DIR);
}

FIXTURE_SETUP(lim)
{
	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, ensure_loaded(false));
	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	self->dev = npu_dev_open(NULL);
	ASSERT_NE(NULL, self->dev);
	self->fd = npu_dev_fd(self->dev);
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &self->c0));
}

FIXTURE_TEARDOWN(lim)
{
	npu_dev_close(self->dev);
}

/* Counter @f now, less its value at setup. */
#define DELTA(f) ({							\
	struct steptime_counters __c = {};				\
	steptime__read_counters(PIN_DIR, &__c);				\
	__c.f - self->c0.f;						\
})

/* Make the BPF program consume this process's marks now. */
static void flush(int fd)
{
	ioctl(fd, STEPTIME_IOC_RING, 0);
}

/* Records of process @pid in the steps map, their index ids in @ids. */
static int records(pid_t pid, __u64 *ids, int max)
{
	struct steptime_reader_opts ro = { .sz = sizeof(ro), .pin_dir = PIN_DIR,
					   .pid = pid };
	struct steptime_reader *r = steptime_reader__open(&ro);
	struct steptime_step_stats s;
	int n = 0;

	if (!r)
		return -errno;
	while (steptime_reader__next(r, &s) == 0) {
		if (n < max)
			ids[n] = s.index_id;
		n++;
	}
	steptime_reader__free(r);
	return n;
}

/* Host-marked empty steps @from .. @from + @n - 1, consumed as they go. */
static int steps(int fd, __u64 from, int n)
{
	int i, err = 0;

	for (i = 0; i < n && !err; i++) {
		err = steptime__mark(from + i, STEPTIME_TAG_START, NULL);
		err = err ?: steptime__mark(from + i, STEPTIME_TAG_END, NULL);
		if (i % 4 == 3)
			flush(fd);
	}
	flush(fd);
	return err;
}

/*
 * fork(), so that the child gets process id @want back: the kernel hands
 * out ns_last_pid + 1 next when it is free (CONFIG_CHECKPOINT_RESTORE).
 * Return: 0 in the child; in the parent @want, -EAGAIN when other
 * processes took it each time, or -errno of ns_last_pid.
 */
static pid_t fork_reusing(pid_t want)
{
	char buf[16];
	int i, fd, len;
	pid_t pid;

	for (i = 0; i < 20; i++) {
		fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
		if (fd < 0)
			return -errno;
		len = snprintf(buf, sizeof(buf), "%d", want - 1);
		if (write(fd, buf, len) != len) {
			len = -errno;
			close(fd);
			return len;
		}
		close(fd);
		pid = fork();
		if (pid < 0)
			return -errno;
		if (!pid) {
			if (getpid() != want)
				_exit(0);
			return 0;
		}
		if (pid == want)
			return pid;
		waitpid(pid, NULL, 0);
	}
	return -EAGAIN;
}

/* A child kept alive, with what it made, until released. */
struct holder {
	pid_t pid;
	int stop;	/* closing it lets the child exit */
};

/*
 * Fork a child (with process id @reuse back, if not 0) that runs @fn(@fd),
 * says it is ready and holds until release(). A child that dies before
 * that fails the read at once (EOF), never hangs the test. Return: 0, or
 * -errno (the child is reaped).
 */
static int hold(struct holder *h, pid_t reuse, int (*fn)(int fd), int fd)
{
	int ready[2], stop[2], err = 0;
	char c;

	if (pipe(ready))
		return -errno;
	if (pipe(stop)) {
		err = -errno;
		goto close_ready;
	}
	h->pid = reuse ? fork_reusing(reuse) : fork();
	if (h->pid == -1 && !reuse)
		h->pid = -errno;
	if (!h->pid) {
		close(stop[1]);
		close(ready[0]);
		_exit(fn(fd) || write(ready[1], "r", 1) != 1 ||
		      read(stop[0], &c, 1) < 0);
	}
	close(stop[0]);
	if (h->pid < 0) {
		err = h->pid;
		close(stop[1]);
		goto close_ready;
	}
	h->stop = stop[1];
	close(ready[1]);
	ready[1] = -1;
	if (read(ready[0], &c, 1) != 1) {
		err = -ECHILD;
		close(h->stop);
		waitpid(h->pid, NULL, 0);
	}
close_ready:
	close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	return err;
}

/* Let a held child exit. Return: its exit status, or -1. */
static int release(struct holder *h)
{
	int status;

	close(h->stop);
	if (waitpid(h->pid, &status, 0) != h->pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Held children's work: 0 when done. */
static int steps_1_2(int fd)
{
	return steps(fd, 1, 2);
}

static int start_1(int fd)
{
	if (steptime__mark(1, STEPTIME_TAG_START, NULL))
		return 1;
	flush(fd);
	return 0;
}

/* "marks between two ioctls of a process: 256": the rest are lost, counted. */
TEST_F_TIMEOUT(lim, mark_ring, 120)
{
	int i;

	flush(self->fd);
	ASSERT_EQ(0, steptime__mark(1, STEPTIME_TAG_START, NULL));
	flush(self->fd);
	for (i = 0; i < STEPTIME_MARK_RING + 5; i++)
		ASSERT_EQ(0, steptime__mark(100 + i, STEPTIME_TAG_START, NULL));
	flush(self->fd);
	EXPECT_EQ(5, DELTA(marks_lost));
	EXPECT_EQ(1 + STEPTIME_MARK_RING, DELTA(marks));
	EXPECT_EQ(1, DELTA(rings));
}

/*
 * "step records per process: 16": the process's own oldest go, counted;
 * an open one is emitted as incomplete first.
 */
TEST_F_TIMEOUT(lim, per_process_steps, 120)
{
	__u64 ids[64];
	int i, n;

	ASSERT_EQ(0, steps(self->fd, 1, STEPTIME_PROC_STEPS + 4));
	n = records(getpid(), ids, 64);
	ASSERT_EQ(STEPTIME_PROC_STEPS, n);
	for (i = 0; i < n; i++)
		EXPECT_LT(4, ids[i]);	/* 1..4 are gone */
	EXPECT_EQ(4, DELTA(steps_recycled));
	EXPECT_EQ(0, DELTA(steps_recycled_open));
	EXPECT_EQ(STEPTIME_PROC_STEPS + 4, DELTA(steps_done));
	/* An open step pushed out: incomplete, said so. */
	ASSERT_EQ(0, steptime__mark(500, STEPTIME_TAG_START, NULL));
	flush(self->fd);
	ASSERT_EQ(0, steps(self->fd, 1000, STEPTIME_PROC_STEPS));
	EXPECT_EQ(1, DELTA(steps_recycled_open));
	EXPECT_EQ(STEPTIME_PROC_STEPS, records(getpid(), ids, 64));
}

/*
 * "steps map: processes x 16": full of exited processes' records, a new
 * step evicts the oldest of those, counted; a live process loses nothing,
 * even one that got an exited process's id back and replaced some of its
 * records (their keys are still queued for eviction).
 */
TEST_F_TIMEOUT(lim, steps_map_full, 240)
{
	int batch = 8, i, k, status, err;
	__u64 ids[STEPTIME_PROC_STEPS];
	struct holder again;
	pid_t first = 0, pid;

	/* Empty maps: the counts below are exact. */
	ASSERT_EQ(0, ensure_loaded(true));
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &self->c0));
	/* A live process's records first: these must survive. */
	ASSERT_EQ(0, steps(self->fd, 1, STEPTIME_PROC_STEPS));
	/*
	 * The first exits alone: siblings running beside it may exit before
	 * it (2 CPUs), and their records would queue ahead of or among its.
	 */
	first = fork();
	ASSERT_LE(0, first);
	if (!first)
		_exit(steps(self->fd, 1, STEPTIME_PROC_STEPS) ? 1 : 0);
	ASSERT_EQ(first, waitpid(first, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* Its id back, live: steps 1 and 2 are its own now. */
	err = hold(&again, first, steps_1_2, self->fd);
	if (err == -ECHILD)
		ASSERT_EQ(0, err);
	if (err)
		SKIP(return, "no process id reuse: ns_last_pid: %s",
		     strerror(-err));
	EXPECT_EQ(2, DELTA(steps_pid_reused));
	for (i = 1; i < MAX_PROCS; i += k) {
		for (k = 0; k < batch && i + k < MAX_PROCS; k++) {
			pid = fork();
			ASSERT_LE(0, pid);
			if (!pid)
				_exit(steps(self->fd, 1, STEPTIME_PROC_STEPS) ? 1 : 0);
		}
		for (k = 0; k < batch && i + k < MAX_PROCS; k++) {
			ASSERT_LT(0, wait(&status));
			ASSERT_EQ(0, WEXITSTATUS(status));
		}
	}
	/*
	 * 1 + 1024 processes x 16 > the map: evictions, oldest first, its
	 * first 2 keys passed over (live), then its 14 others and 2 more.
	 */
	EXPECT_EQ(STEPTIME_PROC_STEPS, DELTA(steps_evicted_exited));
	EXPECT_EQ(0, DELTA(step_map_full));
	EXPECT_EQ(2, records(first, ids, STEPTIME_PROC_STEPS));
	EXPECT_EQ(STEPTIME_PROC_STEPS, records(getpid(), ids,
					       STEPTIME_PROC_STEPS));
	/* A new process's steps each evict an exited record. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(steps(self->fd, 1, 2) ? 1 : 0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(STEPTIME_PROC_STEPS + 2, DELTA(steps_evicted_exited));
	EXPECT_EQ(2, records(pid, ids, STEPTIME_PROC_STEPS));
	/* Ours: past our cap, our own oldest go, no one else's. */
	ASSERT_EQ(0, steps(self->fd, 100, 2));
	EXPECT_EQ(STEPTIME_PROC_STEPS + 2, DELTA(steps_evicted_exited));
	EXPECT_EQ(2, DELTA(steps_recycled));
	EXPECT_EQ(2, records(first, ids, STEPTIME_PROC_STEPS));
	EXPECT_EQ(0, release(&again));
	EXPECT_EQ(0, DELTA(step_map_full));
}

/*
 * A process id that comes back: the new process's steps get new records,
 * even under the same step ids; the exited process's records stay as they
 * were, flagged exited.
 */
TEST_F_TIMEOUT(lim, pid_reused, 120)
{
	struct steptime_step_stats old1, old3, s;
	struct holder b;
	int status, err;
	pid_t a;

	a = fork();
	ASSERT_LE(0, a);
	if (!a)
		_exit(steps(self->fd, 1, 3) ? 1 : 0);
	ASSERT_EQ(a, waitpid(a, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, st_step_get(PIN_DIR, a, 1, true, &old1));
	ASSERT_EQ(0, st_step_get(PIN_DIR, a, 3, true, &old3));
	EXPECT_EQ(STEPTIME_F_EXITED, old1.flags & STEPTIME_F_EXITED);
	/* Step 1 again, in a process with the same id: open, its own. */
	err = hold(&b, a, start_1, self->fd);
	if (err == -ECHILD)
		ASSERT_EQ(0, err);
	if (err)
		SKIP(return, "no process id reuse: ns_last_pid: %s",
		     strerror(-err));
	EXPECT_EQ(1, DELTA(steps_pid_reused));
	ASSERT_EQ(0, st_step_get(PIN_DIR, b.pid, 1, false, &s));
	EXPECT_EQ(STEPTIME_STEP_OPEN, s.state);
	EXPECT_EQ(STEPTIME_F_HOST_START, s.flags);
	EXPECT_LT(old1.host_end_ns, s.host_start_ns);
	/* The exited process's other records: untouched. */
	EXPECT_EQ(3, records(a, (__u64[3]){}, 3));
	ASSERT_EQ(0, st_step_get(PIN_DIR, a, 3, false, &s));
	EXPECT_EQ(0, memcmp(&old3, &s, sizeof(s)));
	/* Its exit closes its step, and leaves the old ones alone. */
	EXPECT_EQ(0, release(&b));
	ASSERT_EQ(0, st_step_get(PIN_DIR, b.pid, 1, false, &s));
	EXPECT_EQ(STEPTIME_STEP_INCOMPLETE, s.state);
	EXPECT_EQ(STEPTIME_F_HOST_START | STEPTIME_F_EXITED, s.flags);
	EXPECT_EQ(1, DELTA(steps_pid_reused));
	EXPECT_EQ(0, DELTA(step_map_full));
}

/*
 * "processes tracked: 1024": past that, a process is not tracked (its
 * steps are not recorded), counted; the others are untouched.
 */
TEST_F_TIMEOUT(lim, processes, 240)
{
	int stop[2], ready[2], i, n = MAX_PROCS + 8, status;
	__u64 ids[4];
	char c;

	ASSERT_EQ(0, steps(self->fd, 1, 1));
	/* From here: the children's ioctls alone. */
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &self->c0));
	ASSERT_EQ(0, pipe(stop));
	ASSERT_EQ(0, pipe(ready));
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (!pid) {
			close(stop[1]);
			flush(self->fd);
			if (write(ready[1], "r", 1) != 1 || read(stop[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
	}
	for (i = 0; i < n; i++)
		ASSERT_EQ(1, read(ready[0], &c, 1));
	/*
	 * Us, and up to 1023 of them: the rest were refused, each counted
	 * once (one ioctl each). Their pids are consecutive, so their home
	 * slots are too: all but a few slots fill (a process that finds its
	 * ST_PROC_PROBE slots taken is refused though others are free).
	 */
	EXPECT_EQ(n, DELTA(ioctls));
	EXPECT_LE(n + 1 - MAX_PROCS, DELTA(proc_map_full));
	EXPECT_GE(n + 1 - MAX_PROCS + 32, DELTA(proc_map_full))
		TH_LOG("only %llu of %d processes tracked",
		       (unsigned long long)(n - DELTA(proc_map_full)), n);
	close(stop[1]);
	for (i = 0; i < n; i++) {
		ASSERT_LT(0, wait(&status));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}
	EXPECT_EQ(1, records(getpid(), ids, 4));
	ASSERT_EQ(0, steps(self->fd, 2, 1));
	EXPECT_EQ(2, records(getpid(), ids, 4));
}

/* A kernel-mode SQ-CQ pair (no mapping: close releases the file), small. */
static struct npu_sqcq *small_pair(struct npu_dev *dev)
{
	struct npu_sqcq_opts o = { .sz = sizeof(o), .sq_depth = 16,
				   .cq_depth = 16 };

	return npu_sqcq_alloc(dev, &o);
}

/* @n pairs on a device of its own, closed without FREE. */
static int pairs_closed(int n)
{
	struct npu_dev *dev = npu_dev_open(NULL);
	int i;

	for (i = 0; dev && i < n; i++)
		if (!small_pair(dev))
			return 1;
	npu_dev_close(dev);
	return !dev;
}

/*
 * "SQs tracked: 128": past that, an SQ is not tracked (sq_map_full) and
 * its SQEs count as tasks_unowned. FREE gives the room back; a close
 * without FREE only at the exit of the process that allocated (or when a
 * new OPEN gets the closed file's memory: not done here).
 */
TEST_F_TIMEOUT(lim, sqs, 240)
{
	struct npu_task_desc d = { .duration_ns = 1000 };
	struct npu_sqcq *q[MAX_SQS + 4], *extra;
	struct holder child;
	struct npu_dev *dev;
	struct trs_sqe sqe;
	int i;

	/* Empty maps: no one else's queues; a device opened since. */
	ASSERT_EQ(0, ensure_loaded(true));
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &self->c0));
	dev = npu_dev_open(NULL);
	ASSERT_NE(NULL, dev);
	for (i = 0; i < MAX_SQS + 4; i++) {
		q[i] = small_pair(dev);
		ASSERT_NE(NULL, q[i]);
	}
	EXPECT_EQ(4, DELTA(sq_map_full));
	npu_sqe_task(&sqe, &d);
	ASSERT_LE(0, npu_sqcq_send(q[MAX_SQS + 3], &sqe, 1, -1));
	ASSERT_LE(0, npu_sqcq_send(q[0], &sqe, 1, -1));
	EXPECT_EQ(1, DELTA(tasks_unowned));
	EXPECT_EQ(1, DELTA(tasks));
	/* 8 tracked and the 4 untracked freed: room for 8. */
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, npu_sqcq_free(q[i]));
	for (i = MAX_SQS; i < MAX_SQS + 4; i++)
		ASSERT_EQ(0, npu_sqcq_free(q[i]));
	/* Another process takes the 8 and closes its device without FREE. */
	ASSERT_EQ(0, hold(&child, 0, pairs_closed, 8));
	extra = small_pair(dev);
	ASSERT_NE(NULL, extra);
	EXPECT_EQ(5, DELTA(sq_map_full));
	EXPECT_EQ(0, npu_sqcq_free(extra));
	ASSERT_EQ(0, release(&child));
	/* Gone with it: tracked again. */
	for (i = 0; i < 8; i++) {
		q[i] = small_pair(dev);
		ASSERT_NE(NULL, q[i]);
	}
	EXPECT_EQ(5, DELTA(sq_map_full));
	for (i = 0; i < MAX_SQS; i++)
		EXPECT_EQ(0, npu_sqcq_free(q[i]));
	npu_dev_close(dev);
}

/* "CQs tracked: 1024": past that, a CQ is not tracked, counted. */
TEST_F_TIMEOUT(lim, cqs, 240)
{
	static struct npu_sqcq *q[MAX_CQS + 4];
	struct npu_dev *dev;
	int i;

	ASSERT_EQ(0, ensure_loaded(true));
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &self->c0));
	dev = npu_dev_open(NULL);
	ASSERT_NE(NULL, dev);
	/* A pair per CQ (STARS: no REUSE_CQ). */
	for (i = 0; i < MAX_CQS + 4; i++) {
		q[i] = small_pair(dev);
		ASSERT_NE(NULL, q[i]);
	}
	EXPECT_EQ(4, DELTA(cq_map_full));
	EXPECT_EQ(MAX_CQS + 4 - MAX_SQS, DELTA(sq_map_full));
	for (i = 0; i < MAX_CQS + 4; i++)
		EXPECT_EQ(0, npu_sqcq_free(q[i]));
	/* Room again. */
	q[0] = small_pair(dev);
	ASSERT_NE(NULL, q[0]);
	EXPECT_EQ(4, DELTA(cq_map_full));
	EXPECT_EQ(0, npu_sqcq_free(q[0]));
	npu_dev_close(dev);
}

/*
 * "bound manager files tracked: 1024": past that, an OPEN's file is not
 * tracked, counted; closed, the room comes back at the next OPEN that
 * gets a closed file's memory or when the opener exits.
 */
TEST_F_TIMEOUT(lim, files, 240)
{
	static struct npu_dev *dev[MAX_FILES + 4];
	struct rlimit rl = { MAX_FILES + 64, MAX_FILES + 64 };
	int i, status;
	pid_t pid;

	ASSERT_EQ(0, ensure_loaded(true));
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &self->c0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(2);
		for (i = 0; i < MAX_FILES + 4; i++)
			if (!(dev[i] = npu_dev_open(NULL)))
				_exit(3);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(4, DELTA(file_map_full));
	/* Its files went with it. */
	dev[0] = npu_dev_open(NULL);
	ASSERT_NE(NULL, dev[0]);
	EXPECT_EQ(4, DELTA(file_map_full));
	npu_dev_close(dev[0]);
}

/* "finished-step ring buffer: 256 KiB": with no reader, the rest dropped. */
TEST_F_TIMEOUT(lim, events_ring, 120)
{
	/* A ring buffer record: 8-byte header, rounded up to 8. */
	int rec = (sizeof(struct steptime_step_stats) + 8 + 7) & ~7;
	int fit = EVENTS_BYTES / rec, n = fit + 50;

	/* An empty ring buffer: the tests before filled this one. */
	ASSERT_EQ(0, ensure_loaded(true));
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &self->c0));
	ASSERT_EQ(0, steps(self->fd, 1, n));
	EXPECT_EQ(n, DELTA(steps_done));
	EXPECT_EQ(50, DELTA(events_dropped));
}

TEST_HARNESS_MAIN
