// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Marks and the reader against maps of steptime's layout, created here in
 * a private pin directory (no BPF program needed; root only). Checks the
 * ring protocol of steptime/abi.h byte for byte.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>
#include <acl/acl_prof.h>
#include "st_internal.h"
#include "st_test.h"
#include "kselftest_harness.h"
#include "st_run.h"

FIXTURE(pins) {
	struct st_pins p;
	char skip[128];
};

FIXTURE_SETUP(pins)
{
	int err = st_pins_with_steps(&self->p, self->skip, sizeof(self->skip));

	if (err != 1)
		ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(pins)
{
	st_pins_fini(&self->p);
}

static void expect_mark(struct __test_metadata *_metadata,
			const struct steptime_ring *r, __u64 pos, __u64 index,
			__u32 tag, __u32 stream, __u64 t0, __u64 t1)
{
	const struct steptime_mark *m = &r->ring[pos % STEPTIME_MARK_RING];

	EXPECT_EQ(pos + 1, m->seq);
	EXPECT_EQ(index, m->index_id);
	EXPECT_EQ(tag, m->tag);
	EXPECT_EQ(stream, m->stream);
	EXPECT_LE(t0, m->time_ns);
	EXPECT_GE(t1, m->time_ns);
}

/* Open fds of this process (the library opens one only when it must). */
static int fd_count(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n - 1;	/* the directory's own */
}

/*
 * The ring is in this process's memory, its header naming this process as
 * the BPF program will check it.
 */
TEST_F(pins, ring_protocol)
{
	struct steptime_mark_opts o = { .sz = sizeof(o) };
	const struct steptime_ring *r = st_marks_ring();
	struct steptime_step *st;
	__u64 t0, t1, t2, base;

	NEED_PINS();
	st = steptime_step__new();
	ASSERT_NE(NULL, st);
	base = r->head;
	t0 = st_now();
	ASSERT_EQ(0, steptime_step__mark(st, STEPTIME_TAG_START, NULL));
	t1 = st_now();
	ASSERT_EQ(0, steptime_step__mark(st, STEPTIME_TAG_END, NULL));
	t2 = st_now();
	EXPECT_EQ(STEPTIME_RING_MAGIC, r->magic);
	EXPECT_EQ(STEPTIME_ABI_VERSION, r->version);
	EXPECT_EQ(st_test_pidns_ino(), r->pidns_ino);
	EXPECT_EQ((__u32)getpid(), r->ns_tgid);
	EXPECT_EQ(0, (uintptr_t)r % 64);
	/* Registered before the first mark: read from there on. */
	EXPECT_EQ(base, r->base);
	EXPECT_EQ(base + 2, r->head);
	expect_mark(_metadata, r, base, steptime_step__index_id(st),
		    STEPTIME_TAG_START, STEPTIME_STREAM_NONE, t0, t1);
	expect_mark(_metadata, r, base + 1, steptime_step__index_id(st),
		    STEPTIME_TAG_END, STEPTIME_STREAM_NONE, t1, t2);
	/*
	 * A stream the library does not know: host mark only. A tag other
	 * than START is stored as END, never as one of the ring's own kinds.
	 */
	o.stream = &t0;
	EXPECT_EQ(0, steptime__mark(42, 60000, &o));
	expect_mark(_metadata, r, base + 2, 42, STEPTIME_TAG_END,
		    STEPTIME_STREAM_NONE, t2, st_now());
	EXPECT_EQ(0, steptime__mark(43, STEPTIME_TAG_DEV_START, NULL));
	expect_mark(_metadata, r, base + 3, 43, STEPTIME_TAG_END,
		    STEPTIME_STREAM_NONE, t2, st_now());
	steptime_step__free(st);
}

/*
 * The mark path takes no lock: this program's pthread_mutex_lock and
 * pthread_once (libsteptime.a is linked in, so its calls bind here) count
 * the calls made while marking.
 */
static int locks_counting, locks_taken;

int pthread_mutex_lock(pthread_mutex_t *m)
{
	static int (*next)(pthread_mutex_t *);

	if (!next)
		next = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT,
							 "pthread_mutex_lock");
	if (__atomic_load_n(&locks_counting, __ATOMIC_RELAXED))
		__atomic_fetch_add(&locks_taken, 1, __ATOMIC_RELAXED);
	return next(m);
}

int pthread_once(pthread_once_t *o, void (*fn)(void))
{
	static int (*next)(pthread_once_t *, void (*)(void));

	if (!next)
		next = (int (*)(pthread_once_t *, void (*)(void)))
			dlsym(RTLD_NEXT, "pthread_once");
	if (__atomic_load_n(&locks_counting, __ATOMIC_RELAXED))
		__atomic_fetch_add(&locks_taken, 1, __ATOMIC_RELAXED);
	return next(o, fn);
}

#define LOCK_MARKS	1000

TEST_F(pins, mark_path_takes_no_lock)
{
	struct steptime_step *st[LOCK_MARKS];
	aclprofStepInfo *acl[LOCK_MARKS];
	char dir[] = "/tmp/steptime-nolock-XXXXXX", cmd[64];
	aclprofConfig *cfg;
	uint32_t dev = 0;
	__u64 t0, secs;
	int i;

	NEED_PINS();
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(ACL_SUCCESS, aclprofInit(dir, strlen(dir)));
	cfg = aclprofCreateConfig(&dev, 1, ACL_AICORE_NONE, NULL,
				  ACL_PROF_TASK_TIME);
	ASSERT_NE(NULL, cfg);
	ASSERT_EQ(ACL_SUCCESS, aclprofStart(cfg));
	for (i = 0; i < LOCK_MARKS; i++) {
		ASSERT_NE(NULL, st[i] = steptime_step__new());
		ASSERT_NE(NULL, acl[i] = aclprofCreateStepInfo());
	}
	locks_taken = 0;
	t0 = st_now();
	__atomic_store_n(&locks_counting, 1, __ATOMIC_RELAXED);
	for (i = 0; i < LOCK_MARKS; i++) {
		EXPECT_EQ(0, steptime_step__mark(st[i], STEPTIME_TAG_START, NULL));
		EXPECT_EQ(0, steptime_step__mark(st[i], STEPTIME_TAG_END, NULL));
		EXPECT_EQ(0, steptime__mark(5000 + i, STEPTIME_TAG_START, NULL));
		EXPECT_EQ(ACL_SUCCESS,
			  aclprofGetStepTimestamp(acl[i], ACL_STEP_START, NULL));
		EXPECT_EQ(ACL_SUCCESS,
			  aclprofGetStepTimestamp(acl[i], ACL_STEP_END, NULL));
	}
	__atomic_store_n(&locks_counting, 0, __ATOMIC_RELAXED);
	/* The once-a-second check of the load may take the lock. */
	secs = (st_now() - t0) / 1000000000ull;
	EXPECT_GE(secs + 1, locks_taken) TH_LOG("%d locks in %llu s",
		  locks_taken, (unsigned long long)secs);
	for (i = 0; i < LOCK_MARKS; i++) {
		steptime_step__free(st[i]);
		aclprofDestroyStepInfo(acl[i]);
	}
	setenv("STEPTIME_QUIET", "1", 1);
	EXPECT_EQ(ACL_SUCCESS, aclprofStop(cfg));
	EXPECT_EQ(ACL_SUCCESS, aclprofDestroyConfig(cfg));
	EXPECT_EQ(ACL_SUCCESS, aclprofFinalize());
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	EXPECT_EQ(0, system(cmd));
}

/*
 * The first step costs what the others cost: steptime's set-up (opening
 * the pin, registering the ring, looking the runtime up) happens at step
 * creation, before the first START, never inside a mark. The ring's own
 * record of the steps' host times is logged for the eye; the assertion is
 * on state (a timing threshold would flake).
 */
TEST_F(pins, first_step_set_up_at_creation)
{
	const struct steptime_ring *r = st_marks_ring();
	struct steptime_lib_counters c0, c1;
	struct steptime_step *st;
	__u64 dur[8], t;
	int i;

	NEED_PINS();
	ASSERT_EQ(0, steptime__lib_counters(&c0, sizeof(c0)));
	EXPECT_EQ(0, r->magic);			/* nothing registered yet */
	for (i = 0; i < 8; i++) {
		ASSERT_NE(NULL, st = steptime_step__new());
		/* Registered by the creation, before any mark. */
		EXPECT_EQ(STEPTIME_RING_MAGIC, r->magic);
		ASSERT_EQ(0, steptime_step__mark(st, STEPTIME_TAG_START, NULL));
		t = r->ring[(r->head - 1) % STEPTIME_MARK_RING].time_ns;
		ASSERT_EQ(0, steptime_step__mark(st, STEPTIME_TAG_END, NULL));
		dur[i] = r->ring[(r->head - 1) % STEPTIME_MARK_RING].time_ns - t;
		steptime_step__free(st);
	}
	ASSERT_EQ(0, steptime__lib_counters(&c1, sizeof(c1)));
	EXPECT_EQ(c0.mark_setups, c1.mark_setups);
	EXPECT_EQ(c0.marks_dropped, c1.marks_dropped);
	TH_LOG("empty steps (ns): first %llu, then %llu %llu %llu",
	       (unsigned long long)dur[0], (unsigned long long)dur[1],
	       (unsigned long long)dur[2], (unsigned long long)dur[7]);
}

/* A process that marks by id without creating a step: counted. */
TEST_F(pins, set_up_in_a_mark_is_counted)
{
	struct steptime_lib_counters c0, c1;

	NEED_PINS();
	ASSERT_EQ(0, steptime__lib_counters(&c0, sizeof(c0)));
	ASSERT_EQ(0, steptime__mark(31, STEPTIME_TAG_START, NULL));
	ASSERT_EQ(0, steptime__mark(31, STEPTIME_TAG_END, NULL));
	ASSERT_EQ(0, steptime__lib_counters(&c1, sizeof(c1)));
	EXPECT_EQ(c0.mark_setups + 1, c1.mark_setups);
}

/* Positions wrap around the ring; seq tells them apart. */
TEST_F(pins, ring_wraps)
{
	const struct steptime_ring *r = st_marks_ring();
	__u64 i, n = 3 * STEPTIME_MARK_RING + 5, base = r->head;

	NEED_PINS();
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, steptime__mark(100 + i, i & 1, NULL));
	EXPECT_EQ(base + n, r->head);
	for (i = n - STEPTIME_MARK_RING; i < n; i++)
		expect_mark(_metadata, r, base + i, 100 + i, i & 1,
			    STEPTIME_STREAM_NONE, 0, st_now());
}

#define NTHREADS	4
#define PER_THREAD	5000

static void *mark_loop(void *arg)
{
	__u64 t = (__u64)(uintptr_t)arg, i;

	for (i = 0; i < PER_THREAD; i++)
		if (steptime__mark((t << 32) | (i + 1), STEPTIME_TAG_START, NULL))
			return (void *)1;
	return NULL;
}

/* Threads share the ring; every position is written exactly once. */
TEST_F(pins, many_threads)
{
	const struct steptime_ring *r = st_marks_ring();
	pthread_t th[NTHREADS];
	__u64 base = r->head;
	void *ret;
	int i, j;

	NEED_PINS();
	for (i = 0; i < NTHREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, mark_loop,
					    (void *)(uintptr_t)(i + 1)));
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], &ret);
		EXPECT_EQ(NULL, ret);
	}
	EXPECT_EQ(base + NTHREADS * PER_THREAD, r->head);
	/* The last lap: complete entries of distinct positions. */
	for (i = 0; i < STEPTIME_MARK_RING; i++) {
		const struct steptime_mark *m = &r->ring[i];
		__u64 t = m->index_id >> 32;

		EXPECT_EQ((__u64)i, (m->seq - 1) % STEPTIME_MARK_RING);
		EXPECT_GT(m->seq, r->head - STEPTIME_MARK_RING);
		EXPECT_TRUE(t >= 1 && t <= NTHREADS);
		for (j = 0; j < i; j++)
			EXPECT_NE(r->ring[j].seq, m->seq);
	}
}

#define HANDOVER_MARKS	200000

static void *mark_when_told(void *arg)
{
	int *go = arg;
	__u64 i;

	while (!__atomic_load_n(go, __ATOMIC_ACQUIRE))
		;
	for (i = 0; i < HANDOVER_MARKS; i++)
		if (steptime__mark((2ull << 32) | (i + 1), STEPTIME_TAG_START,
				   NULL))
			return (void *)1;
	return NULL;
}

/*
 * The one thread that marks owns the ring (plain stores, no locked
 * instruction); a second thread that starts marking while the owner marks
 * takes the ring over: no position reserved twice or lost, no mark
 * dropped.
 */
TEST_F(pins, owner_hands_over)
{
	const struct steptime_ring *r = st_marks_ring();
	struct steptime_lib_counters c0, c1;
	pthread_t th;
	__u64 base, i;
	void *ret;
	int go = 0, j, k;

	NEED_PINS();
	ASSERT_EQ(0, steptime__mark(1, STEPTIME_TAG_START, NULL));
	base = r->head;
	ASSERT_EQ(0, steptime__lib_counters(&c0, sizeof(c0)));
	ASSERT_EQ(0, pthread_create(&th, NULL, mark_when_told, &go));
	for (i = 0; i < HANDOVER_MARKS; i++) {
		if (i == HANDOVER_MARKS / 4)
			__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
		ASSERT_EQ(0, steptime__mark((1ull << 32) | (i + 1),
					    STEPTIME_TAG_START, NULL));
	}
	pthread_join(th, &ret);
	EXPECT_EQ(NULL, ret);
	ASSERT_EQ(0, steptime__lib_counters(&c1, sizeof(c1)));
	EXPECT_EQ(c0.marks_dropped, c1.marks_dropped);
	EXPECT_EQ(c0.ring_handovers + 1, c1.ring_handovers);
	EXPECT_EQ(base + 2 * HANDOVER_MARKS, r->head);
	for (j = 0; j < STEPTIME_MARK_RING; j++) {
		const struct steptime_mark *m = &r->ring[j];

		EXPECT_EQ((__u64)j, (m->seq - 1) % STEPTIME_MARK_RING);
		EXPECT_GT(m->seq, r->head - STEPTIME_MARK_RING);
		for (k = 0; k < j; k++)
			EXPECT_NE(r->ring[k].seq, m->seq);
	}
}

/*
 * A forked child is another process: it registers its copy of the ring
 * under its own identity, from where the copy's head stood.
 */
TEST_F(pins, fork_registers_own_ring)
{
	const struct steptime_ring *r = st_marks_ring();
	int status, pfd[2];
	__u64 head, child[4];
	pid_t pid;

	NEED_PINS();
	ASSERT_EQ(0, steptime__mark(1, STEPTIME_TAG_START, NULL));
	head = r->head;
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int rc = steptime__mark(2, STEPTIME_TAG_START, NULL);
		__u64 v[4] = { r->ns_tgid, r->base, r->head,
			       r->ring[head % STEPTIME_MARK_RING].index_id };

		_exit(rc || write(pfd[1], v, sizeof(v)) != sizeof(v));
	}
	close(pfd[1]);
	ASSERT_EQ(sizeof(child), read(pfd[0], child, sizeof(child)));
	close(pfd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ((__u64)pid, child[0]);
	EXPECT_EQ(head, child[1]);
	EXPECT_EQ(head + 1, child[2]);
	EXPECT_EQ(2, child[3]);
	/* The parent's ring is its own. */
	EXPECT_EQ((__u32)getpid(), r->ns_tgid);
	ASSERT_EQ(0, steptime__mark(3, STEPTIME_TAG_END, NULL));
	EXPECT_EQ(head + 1, r->head);
	EXPECT_EQ(3, r->ring[head % STEPTIME_MARK_RING].index_id);
}

/*
 * Registration uses a fd of the device this process already has open (the
 * runtime's); only without one does the library open its own, once.
 */
TEST_F(pins, registers_on_open_device)
{
	int fd, n0, pfd[2], status;
	pid_t pid;

	NEED_PINS();
	/* A device nothing here has open (stdin may well be /dev/null). */
	self->p.hdr->dev_rdev = 1 << 20 | 7;
	snprintf(self->p.hdr->device, sizeof(self->p.hdr->device), "/dev/full");
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int v[3];

		fd = open("/dev/full", O_RDONLY);
		n0 = fd_count();
		v[0] = steptime__mark(1, STEPTIME_TAG_START, NULL);
		v[1] = fd_count() - n0;		/* 1: marks; ours was used */
		close(fd);
		_exit(write(pfd[1], v, sizeof(v)) != sizeof(v));
	}
	close(pfd[1]);
	{
		int v[3];

		ASSERT_EQ(sizeof(v), read(pfd[0], v, sizeof(v)));
		EXPECT_EQ(0, v[0]);
		EXPECT_EQ(1, v[1]);
	}
	close(pfd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/*
	 * This process has no /dev/full open: its own, kept for later
	 * flushes, beside the marks map's.
	 */
	n0 = fd_count();
	ASSERT_EQ(0, steptime__mark(2, STEPTIME_TAG_START, NULL));
	EXPECT_EQ(2, fd_count() - n0);
	ASSERT_EQ(0, steptime__mark(3, STEPTIME_TAG_START, NULL));
	EXPECT_EQ(2, fd_count() - n0);
}

/* No way to reach the device: marks fail, said once; nothing is written. */
TEST_F(pins, no_device)
{
	const struct steptime_ring *r = st_marks_ring();
	__u64 head = r->head;
	char *err;
	int fd;

	NEED_PINS();
	self->p.hdr->dev_rdev = 0;
	snprintf(self->p.hdr->device, sizeof(self->p.hdr->device),
		 "/nonexistent/dev");
	fd = st_stderr_begin();
	EXPECT_EQ(-ENXIO, steptime__mark(1, STEPTIME_TAG_START, NULL));
	EXPECT_EQ(-ENXIO, steptime__mark(2, STEPTIME_TAG_START, NULL));
	EXPECT_EQ(head, r->head);
	err = st_stderr_end(fd);
	ASSERT_NE(NULL, strstr(err, "cannot open the traced device"));
	EXPECT_EQ(NULL, strstr(strstr(err, "cannot open") + 1,
			       "cannot open the traced device"));
}

/* Mark until it succeeds or @ms pass. Return: the last result. */
static int mark_until_ok(__u64 index_id, int ms, __u64 *took_ns)
{
	__u64 t0 = st_now();
	struct timespec tick = { 0, 5 * 1000 * 1000 };
	int err;

	for (;;) {
		err = steptime__mark(index_id, STEPTIME_TAG_START, NULL);
		if (!err || st_now() - t0 > (__u64)ms * 1000000)
			break;
		nanosleep(&tick, NULL);
	}
	if (took_ns)
		*took_ns = st_now() - t0;
	return err;
}

/* Loaded after the first mark: retried, at most once a second. */
TEST_F(pins, retry_after_load)
{
	const struct steptime_ring *r = st_marks_ring();
	char path[320];
	__u64 took;

	NEED_PINS();
	st_pin_path(&self->p, "marks", path, sizeof(path));
	ASSERT_EQ(0, unlink(path));
	EXPECT_EQ(-ENODEV, steptime__mark(1, STEPTIME_TAG_START, NULL));
	ASSERT_EQ(0, bpf_obj_pin(self->p.marks_fd, path));
	/* The pin is back, but the next try waits for the retry time. */
	EXPECT_EQ(-ENODEV, steptime__mark(2, STEPTIME_TAG_START, NULL));
	ASSERT_EQ(0, mark_until_ok(3, 30000, &took));
	EXPECT_GT(took, 500ull * 1000 * 1000);
	EXPECT_EQ(3, r->ring[(r->head - 1) % STEPTIME_MARK_RING].index_id);
}

/* Unloaded (magic cleared) and loaded again: the new map is used. */
TEST_F(pins, reload)
{
	const struct steptime_ring *r = st_marks_ring();
	struct steptime_marks_hdr *old;
	char path[320];
	__u64 base, t0;
	int old_fd;

	NEED_PINS();
	ASSERT_EQ(0, steptime__mark(1, STEPTIME_TAG_START, NULL));
	old = self->p.hdr;
	old_fd = self->p.marks_fd;
	old->magic = 0;
	st_pin_path(&self->p, "marks", path, sizeof(path));
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, st_marks_create(&self->p, sizeof(struct steptime_marks_hdr),
				     STEPTIME_MAGIC));
	/* Noticed within a second: registered again, read from there on. */
	base = r->base;
	t0 = st_now();
	do {
		ASSERT_EQ(0, steptime__mark(2, STEPTIME_TAG_END, NULL));
	} while (r->base == base && st_now() - t0 < 3000000000ull);
	EXPECT_NE(base, r->base);
	EXPECT_EQ(r->head - 1, r->base);
	EXPECT_EQ(2, r->ring[r->base % STEPTIME_MARK_RING].index_id);
	munmap(old, self->p.map_sz);
	close(old_fd);
}

TEST_F(pins, wrong_layout_is_eproto)
{
	char path[320];

	NEED_PINS();
	st_pin_path(&self->p, "marks", path, sizeof(path));
	self->p.hdr->magic = 0x1234;
	setenv("STEPTIME_QUIET", "1", 1);
	EXPECT_EQ(-EPROTO, steptime__mark(1, STEPTIME_TAG_START, NULL));
	/* A map of another value size (round 1's layout). */
	ASSERT_EQ(0, unlink(path));
	munmap(self->p.hdr, self->p.map_sz);
	close(self->p.marks_fd);
	self->p.hdr = NULL;
	ASSERT_EQ(0, st_marks_create(&self->p, 576, STEPTIME_MAGIC));
	EXPECT_EQ(-EPROTO, mark_until_ok(2, 1500, NULL));
}

/*
 * Non-root: the pinned file's mode decides; -EACCES said once. The marks
 * map is opened read-only: a mode without write bits is enough.
 */
TEST_F(pins, permission)
{
	char path[320], buf[1024], *first;
	int status, go[2], done[2], res[2];
	struct stat root;
	ssize_t n;
	pid_t pid;

	NEED_PINS();
	st_pin_path(&self->p, "marks", path, sizeof(path));
	ASSERT_EQ(0, chmod(path, 0600));
	/*
	 * The map's own mode is what is tested: others must be able to walk
	 * the bpffs root, as `load --mode` lets them (systemd mounts it 0700).
	 */
	ASSERT_EQ(0, stat(ST_BPFFS, &root));
	if (!(root.st_mode & 0001))
		ASSERT_EQ(0, chmod(ST_BPFFS, (root.st_mode & 07777) | 0011));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	ASSERT_EQ(0, pipe(res));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char c;
		int a, b;

		dup2(res[1], STDERR_FILENO);
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		a = steptime__mark(1, STEPTIME_TAG_START, NULL);
		b = steptime__mark(2, STEPTIME_TAG_START, NULL);
		if (a != -EACCES || b != -EACCES)
			_exit(11);
		/* Root opens the mode; the process starts marking. */
		if (write(done[1], "x", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(12);
		_exit(mark_until_ok(3, 30000, NULL) ? 13 : 0);
	}
	/* A child that fails early closes these: the reads below see it. */
	close(res[1]);
	close(done[1]);
	close(go[0]);
	{
		char c;

		EXPECT_EQ(1, read(done[0], &c, 1));
	}
	ASSERT_EQ(0, chmod(path, 0644));
	EXPECT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (!(root.st_mode & 0001))
		chmod(ST_BPFFS, root.st_mode & 07777);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	n = read(res[0], buf, sizeof(buf) - 1);
	ASSERT_LT(0, n);
	buf[n] = '\0';
	first = strstr(buf, "no permission");
	ASSERT_NE(NULL, first);
	EXPECT_EQ(NULL, strstr(first + 1, "no permission"));
	close(res[0]);
	close(go[1]);
	close(done[0]);
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* The CANN sample's session as a non-root user: 0 or the failing step. */
static int acl_session_child(const char *dir)
{
	struct steptime_lib_counters c;
	aclprofStepInfo *info;
	aclprofConfig *cfg;
	uint32_t dev = 0;
	char path[256];

	if (aclprofInit(dir, strlen(dir)))
		return 20;
	cfg = aclprofCreateConfig(&dev, 1, ACL_AICORE_NONE, NULL,
				  ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX);
	if (!cfg || aclprofStart(cfg))
		return 21;
	info = aclprofCreateStepInfo();
	if (!info || aclprofGetStepTimestamp(info, ACL_STEP_START, NULL) ||
	    aclprofGetStepTimestamp(info, ACL_STEP_END, NULL))
		return 22;
	if (aclprofStop(cfg))
		return 23;
	snprintf(path, sizeof(path), "%s/steptime_step_trace_%d_1.csv", dir,
		 (int)getpid());
	if (access(path, R_OK))
		return 24;
	if (steptime__lib_counters(&c, sizeof(c)) || c.marks_dropped != 2 ||
	    c.stops_incomplete != 1)
		return 25;
	aclprofDestroyStepInfo(info);
	if (aclprofDestroyConfig(cfg) || aclprofFinalize())
		return 26;
	return 0;
}

/*
 * Non-root with 0600 maps: the CANN calls answer as CANN does (success),
 * Stop writes its files without steps; each failure said once, counted.
 */
TEST_F(pins, acl_not_permitted)
{
	char dir[] = "/tmp/steptime-acl-np-XXXXXX", path[320], buf[2048];
	int status, res[2];
	struct stat root;
	ssize_t n;
	pid_t pid;

	NEED_PINS();
	st_pin_path(&self->p, "marks", path, sizeof(path));
	ASSERT_EQ(0, chmod(path, 0600));
	st_pin_path(&self->p, "steps", path, sizeof(path));
	ASSERT_EQ(0, chmod(path, 0600));
	ASSERT_EQ(0, stat(ST_BPFFS, &root));
	if (!(root.st_mode & 0001))
		ASSERT_EQ(0, chmod(ST_BPFFS, (root.st_mode & 07777) | 0011));
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, chmod(dir, 0777));
	ASSERT_EQ(0, pipe(res));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(res[1], STDERR_FILENO);
		unsetenv("STEPTIME_QUIET");
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		_exit(acl_session_child(dir));
	}
	close(res[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (!(root.st_mode & 0001))
		chmod(ST_BPFFS, root.st_mode & 07777);
	n = read(res[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(res[0]);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("stderr: %s", buf);
	/* Each failure said once: the marks, and the steps Stop cannot read. */
	EXPECT_EQ(1, count_of(buf, "no permission to open"));
	EXPECT_EQ(1, count_of(buf, "cannot read steps"));
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	EXPECT_EQ(0, system(path));
}

/* @path's text into @buf, NUL-terminated. Return: its length, or -errno. */
static int slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return (int)n;
}

static void stats_of(struct steptime_step_stats *s, __u32 tgid, __u32 ns_tgid,
		     __u64 index, __u64 start)
{
	memset(s, 0, sizeof(*s));
	s->tgid = tgid;
	s->ns_tgid = ns_tgid;
	s->pidns_ino = 77;
	s->index_id = index;
	s->stream = STEPTIME_STREAM_NONE;
	s->state = STEPTIME_STEP_DONE;
	s->flags = STEPTIME_F_HOST_START | STEPTIME_F_HOST_END;
	s->host_start_ns = start;
	s->host_end_ns = start + 10;
}

static int read_all(struct steptime_reader_opts *o, __u64 *index, int max)
{
	struct steptime_step_stats s;
	struct steptime_reader *r = steptime_reader__open(o);
	int n = 0;

	if (!r)
		return -errno;
	while (!steptime_reader__next(r, &s) && n < max)
		index[n++] = s.index_id;
	steptime_reader__free(r);
	return n;
}

TEST_F(pins, reader_order_and_filters)
{
	struct steptime_reader_opts o = { .sz = sizeof(o) };
	struct steptime_step_stats s;
	__u64 idx[16];

	NEED_PINS();
	stats_of(&s, 1000, 5, 1, 300);
	ASSERT_EQ(0, st_steps_add(&self->p, &s));
	stats_of(&s, 1000, 5, 2, 100);
	ASSERT_EQ(0, st_steps_add(&self->p, &s));
	stats_of(&s, 2000, 2000, 7, 200);
	s.pidns_ino = 88;
	ASSERT_EQ(0, st_steps_add(&self->p, &s));
	stats_of(&s, 1000, 5, 3, 0);	/* no START: first submit orders it */
	s.flags = STEPTIME_F_HOST_END;
	s.tasks = 1;
	s.first_submit_ns = 250;
	ASSERT_EQ(0, st_steps_add(&self->p, &s));

	ASSERT_EQ(4, read_all(&o, idx, 16));
	EXPECT_EQ(2, idx[0]);
	EXPECT_EQ(7, idx[1]);
	EXPECT_EQ(3, idx[2]);
	EXPECT_EQ(1, idx[3]);
	o.pid = 1000;			/* kernel tgid */
	ASSERT_EQ(3, read_all(&o, idx, 16));
	o.pid = 5;			/* namespace tgid */
	ASSERT_EQ(3, read_all(&o, idx, 16));
	o.last = 2;
	ASSERT_EQ(2, read_all(&o, idx, 16));
	EXPECT_EQ(3, idx[0]);
	EXPECT_EQ(1, idx[1]);
	o.last = 0;
	o.pid = 0;
	o.pidns_ino = 88;
	ASSERT_EQ(1, read_all(&o, idx, 16));
	EXPECT_EQ(7, idx[0]);
	o.pid = 5;			/* identity: namespace + ns tgid */
	o.pidns_ino = 77;
	ASSERT_EQ(3, read_all(&o, idx, 16));
	o.pid = 1000;
	ASSERT_EQ(0, read_all(&o, idx, 16));
	o.pid = 0;
	o.pidns_ino = 0;
	o.pin_dir = "/nonexistent";
	EXPECT_EQ(-ENOENT, read_all(&o, idx, 16));
}

/* The whole CANN flow: marks in the ring, results of this process only. */
TEST_F(pins, acl_session)
{
	struct ms_step_info { bool s, e; __u64 indexId; } *ms;
	char dir[] = "/tmp/steptime-accl-XXXXXX", path[256], buf[4096];
	struct steptime_step_stats st;
	aclprofStepInfo *a, *b;
	aclprofConfig *cfg;
	const struct steptime_ring *s = st_marks_ring();
	__u64 t0, h;
	uint32_t dev = 0;

	NEED_PINS();
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(ACL_SUCCESS, aclprofInit(dir, strlen(dir)));
	cfg = aclprofCreateConfig(&dev, 1, ACL_AICORE_NONE, NULL,
				  ACL_PROF_ACL_API | ACL_PROF_TASK_TIME);
	ASSERT_NE(NULL, cfg);
	t0 = st_now();
	h = s->head;
	ASSERT_EQ(ACL_SUCCESS, aclprofStart(cfg));
	a = aclprofCreateStepInfo();
	b = aclprofCreateStepInfo();
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	/*
	 * NULL is the default stream, but this program has no ACL runtime
	 * (host-only use): host marks, no stream, and the calls succeed.
	 */
	ASSERT_EQ(ACL_SUCCESS, aclprofGetStepTimestamp(a, ACL_STEP_START, NULL));
	ASSERT_EQ(ACL_SUCCESS, aclprofGetStepTimestamp(a, ACL_STEP_END, NULL));
	/* MindSpore: its own step number, its own END tag. */
	ms = (void *)b;
	ms->indexId = 777;
	ASSERT_EQ(ACL_SUCCESS, aclprofGetStepTimestamp(b, ACL_STEP_START, NULL));
	ASSERT_EQ(ACL_SUCCESS,
		  aclprofGetStepTimestamp(b, (aclprofStepTag)60001, NULL));
	ASSERT_EQ(h + 4, s->head);
	expect_mark(_metadata, s, h, 1, 0, STEPTIME_STREAM_NONE, t0, st_now());
	expect_mark(_metadata, s, h + 1, 1, 1, STEPTIME_STREAM_NONE, t0, st_now());
	expect_mark(_metadata, s, h + 2, 777, 0, STEPTIME_STREAM_NONE, t0,
		    st_now());
	expect_mark(_metadata, s, h + 3, 777, STEPTIME_TAG_END, STEPTIME_STREAM_NONE, t0,
		    st_now());
	/* What the BPF program would have recorded, plus noise. */
	stats_of(&st, 99999, (__u32)getpid(), 1, s->ring[h % STEPTIME_MARK_RING].time_ns);
	st.pidns_ino = st_test_pidns_ino();
	ASSERT_EQ(0, st_steps_add(&self->p, &st));
	stats_of(&st, 99999, (__u32)getpid(), 777, s->ring[(h + 2) % STEPTIME_MARK_RING].time_ns);
	st.pidns_ino = st_test_pidns_ino();
	ASSERT_EQ(0, st_steps_add(&self->p, &st));
	stats_of(&st, 88888, (__u32)getpid(), 5, s->ring[(h + 1) % STEPTIME_MARK_RING].time_ns);
	st.pidns_ino = st_test_pidns_ino() + 1;			/* other pidns */
	ASSERT_EQ(0, st_steps_add(&self->p, &st));
	stats_of(&st, 99999, (__u32)getpid(), 4, t0 - 1000);	/* before */
	st.pidns_ino = st_test_pidns_ino();
	ASSERT_EQ(0, st_steps_add(&self->p, &st));
	ASSERT_EQ(ACL_SUCCESS, aclprofStop(cfg));
	/* After Stop, marks are not reported. */
	ASSERT_EQ(ACL_ERROR_GE_FAILURE,
		  aclprofGetStepTimestamp(aclprofCreateStepInfo(),
					  ACL_STEP_START, NULL));
	EXPECT_EQ(h + 4, s->head);

	snprintf(path, sizeof(path), "%s/steptime_step_trace_%d_1.csv", dir,
		 (int)getpid());
	ASSERT_LE(0, slurp(path, buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "\n0,1,"));
	EXPECT_NE(NULL, strstr(buf, "\n0,777,"));
	EXPECT_EQ(NULL, strstr(buf, "\n0,5,"));
	EXPECT_EQ(NULL, strstr(buf, "\n0,4,"));
	snprintf(path, sizeof(path), "%s/steptime_steps_%d_1.json", dir,
		 (int)getpid());
	ASSERT_LE(0, slurp(path, buf, sizeof(buf)));
	EXPECT_EQ('[', buf[0]);
	EXPECT_NE(NULL, strstr(buf, "\"index_id\": 1,"));
	EXPECT_NE(NULL, strstr(buf, "\"index_id\": 777,"));
	EXPECT_EQ(NULL, strstr(buf, "\"index_id\": 5,"));
	EXPECT_EQ(ACL_SUCCESS, aclprofDestroyConfig(cfg));
	EXPECT_EQ(ACL_SUCCESS, aclprofFinalize());
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	EXPECT_EQ(0, system(path));
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The CLI on the same maps (STEPTIME_CLI is set by `make check-host`). */
TEST_F(pins, cli_stat_and_record)
{
	const char *cli = getenv("STEPTIME_CLI");
	struct steptime_step_stats s;
	char cmd[512], out[8192];
	int fd;

	NEED_PINS();
	if (!cli)
		SKIP(return, "STEPTIME_CLI not set");
	stats_of(&s, 4242, 12, 1, 100);
	ASSERT_EQ(0, st_steps_add(&self->p, &s));
	stats_of(&s, 4242, 12, 2, 200);
	s.stream = 3;
	s.state = STEPTIME_STEP_OPEN;
	ASSERT_EQ(0, st_steps_add(&self->p, &s));
	stats_of(&s, 5353, 5353, 9, 150);
	ASSERT_EQ(0, st_steps_add(&self->p, &s));

	snprintf(cmd, sizeof(cmd), "%s stat --pin %s -o json -p 12 --last 1",
		 cli, self->p.dir);
	ASSERT_EQ(0, st_run(cmd, out, sizeof(out)));
	EXPECT_TRUE(starts_with(out, "[\n  {\"pid\": 4242, \"ns_pid\": 12, "
				"\"pidns_ino\": 77, \"index_id\": 2, "
				"\"stream\": 3, \"state\": \"open\""));
	EXPECT_EQ(NULL, strstr(out, "\"index_id\": 1,"));
	EXPECT_STREQ("}\n]\n", out + strlen(out) - 4);

	snprintf(cmd, sizeof(cmd), "%s stat --pin %s -o csv", cli, self->p.dir);
	ASSERT_EQ(0, st_run(cmd, out, sizeof(out)));
	EXPECT_TRUE(starts_with(out, "Device_id,Iteration ID,"));
	EXPECT_NE(NULL, strstr(out, "\n0,1,0.100,0.000,0.110,0.010,0.000,0.000,"));
	EXPECT_NE(NULL, strstr(out, "\n0,9,"));

	snprintf(cmd, sizeof(cmd), "%s stat --pin %s", cli, self->p.dir);
	ASSERT_EQ(0, st_run(cmd, out, sizeof(out)));
	EXPECT_TRUE(starts_with(out, "PID      INDEX"));
	EXPECT_NE(NULL, strstr(out, "\n5353     9        -      done"));

	snprintf(cmd, sizeof(cmd), "%s stat --pin %s/none 2>&1", cli,
		 self->p.dir);
	EXPECT_NE(0, st_run(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "not loaded"));
	snprintf(cmd, sizeof(cmd), "%s stat --pin %s -o xml 2>&1", cli,
		 self->p.dir);
	EXPECT_NE(0, st_run(cmd, out, sizeof(out)));

	/* record: a ring buffer nobody writes to; --duration ends it. */
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "st_events", 0, 0, 4096,
			    NULL);
	ASSERT_LE(0, fd);
	snprintf(cmd, sizeof(cmd), "%s/events", self->p.dir);
	ASSERT_EQ(0, bpf_obj_pin(fd, cmd));
	snprintf(cmd, sizeof(cmd), "%s record --pin %s --duration 1s --output %s/rec "
		 "2>&1", cli, self->p.dir, "/tmp");
	EXPECT_EQ(0, st_run(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "0 steps"));
	snprintf(cmd, sizeof(cmd), "%s/events", self->p.dir);
	unlink(cmd);
	unlink("/tmp/rec");
	close(fd);
}

/* What a mark costs is measured by bench/mark.c (`make bench`), not here. */

TEST_HARNESS_MAIN
