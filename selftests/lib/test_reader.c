// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The reader: batched lookups (BPF_MAP_LOOKUP_BATCH) and the per-key walk
 * of kernels without them give the same snapshot, in step order, across
 * several batches.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <sys/wait.h>
#include "st_test.h"
#include "kselftest_harness.h"

#define NSTEPS	5000	/* more than one batch */
#define NPIDS	3

FIXTURE(reader) {
	struct st_pins p;
};

FIXTURE_SETUP(reader)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	struct steptime_step_stats s = {};
	char path[320];
	int i;

	/* The 6.1 harness would run the body after a plain SKIP here. */
	if (geteuid())
		SKIP(longjmp(_metadata->env, 1), "needs root (bpffs, maps)");
	ASSERT_EQ(0, st_pins_init(&self->p));
	self->p.steps_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "st_steps",
					  sizeof(struct steptime_step_key),
					  sizeof(s), NSTEPS + 100, &o);
	ASSERT_LE(0, self->p.steps_fd);
	st_pin_path(&self->p, "steps", path, sizeof(path));
	ASSERT_EQ(0, bpf_obj_pin(self->p.steps_fd, path));
	for (i = 0; i < NSTEPS; i++) {
		s.tgid = s.ns_tgid = 100 + i % NPIDS;
		s.index_id = i / NPIDS + 1;
		s.flags = STEPTIME_F_HOST_START | STEPTIME_F_HOST_END;
		/* Start times not in key order: the reader sorts. */
		s.host_start_ns = 1000000000ull + (__u64)((i * 7919) % NSTEPS) * 1000;
		s.host_end_ns = s.host_start_ns + 500;
		s.state = STEPTIME_STEP_DONE;
		ASSERT_EQ(0, st_steps_add(&self->p, &s));
	}
}

FIXTURE_TEARDOWN(reader)
{
	st_pins_fini(&self->p);
}

/* Read everything of @pid (0: all) into @out; return the count. */
static int read_all(struct steptime_step_stats *out, int pid, size_t last)
{
	struct steptime_reader_opts ro = { .sz = sizeof(ro), .pid = pid,
					   .last = last };
	struct steptime_reader *r = steptime_reader__open(&ro);
	int n = 0;

	if (!r)
		return -errno;
	while (n < NSTEPS && steptime_reader__next(r, &out[n]) == 0)
		n++;
	steptime_reader__free(r);
	return n;
}

static struct steptime_step_stats batch[NSTEPS], walk[NSTEPS];

/* 5,000 map updates and four reads: long under TCG. */
TEST_F_TIMEOUT(reader, batch_and_walk_agree, 300)
{
	int i, n;

	unsetenv("STEPTIME_READER_WALK");
	ASSERT_EQ(NSTEPS, read_all(batch, 0, 0));
	setenv("STEPTIME_READER_WALK", "1", 1);
	ASSERT_EQ(NSTEPS, read_all(walk, 0, 0));
	unsetenv("STEPTIME_READER_WALK");
	EXPECT_EQ(0, memcmp(batch, walk, sizeof(batch)));
	for (i = 1; i < NSTEPS; i++)
		ASSERT_LT(batch[i - 1].host_start_ns, batch[i].host_start_ns);
	/* Filters apply to every batch. */
	n = read_all(batch, 101, 0);
	EXPECT_EQ((NSTEPS - 1 - 1) / NPIDS + 1, n);
	for (i = 0; i < n; i++)
		ASSERT_EQ(101, batch[i].tgid);
	setenv("STEPTIME_READER_WALK", "1", 1);
	EXPECT_EQ(n, read_all(walk, 101, 0));
	unsetenv("STEPTIME_READER_WALK");
	EXPECT_EQ(0, memcmp(batch, walk, n * sizeof(batch[0])));
	EXPECT_EQ(7, read_all(batch, 0, 7));
}

static int reader_count_pid(struct steptime_reader *r, __u32 pid)
{
	struct steptime_step_stats s;
	int n = 0;

	while (steptime_reader__next(r, &s) == 0) {
		if (pid && s.tgid != pid)
			return -1;
		n++;
	}
	return n;
}

/*
 * A freed snapshot's memory is kept for the next one (readers that poll):
 * readers open at once never share it, and a smaller snapshot after a
 * larger one holds its own records only.
 */
TEST_F_TIMEOUT(reader, snapshots_apart, 300)
{
	struct steptime_reader_opts all = { .sz = sizeof(all) };
	struct steptime_reader_opts one = { .sz = sizeof(one), .pid = 101 };
	struct steptime_reader_opts few = { .sz = sizeof(few), .pid = 102, .last = 5 };
	struct steptime_reader *r1, *r2, *r3;
	int i;

	for (i = 0; i < 3; i++) {
		r1 = steptime_reader__open(&all);
		ASSERT_NE(NULL, r1);
		r2 = steptime_reader__open(&one);
		ASSERT_NE(NULL, r2);
		steptime_reader__free(r1);
		/* r1's memory may go to r3: r2's records stay r2's. */
		r3 = steptime_reader__open(&few);
		ASSERT_NE(NULL, r3);
		EXPECT_EQ(5, reader_count_pid(r3, 102));
		EXPECT_EQ((NSTEPS - 1 - 1) / NPIDS + 1, reader_count_pid(r2, 101));
		steptime_reader__free(r3);
		steptime_reader__free(r2);
		EXPECT_EQ(NSTEPS, read_all(batch, 0, 0));
		EXPECT_EQ(7, read_all(batch, 102, 7));
		EXPECT_EQ(102, batch[6].tgid);
	}
}

/* No map, not a steps map: errors, never a partial snapshot. */
TEST_F(reader, errors)
{
	struct steptime_reader_opts ro = { .sz = sizeof(ro),
					   .pin_dir = "/sys/fs/bpf/steptime_no_such" };

	EXPECT_EQ(NULL, steptime_reader__open(&ro));
	EXPECT_EQ(ENOENT, errno);
	ro.pid = -1;
	ro.pin_dir = NULL;
	EXPECT_EQ(NULL, steptime_reader__open(&ro));
	EXPECT_EQ(EINVAL, errno);
}

static void phase_file(const char *dir, __u32 ino, int pid, const char *suffix,
		       time_t age)
{
	struct timespec t[2] = {};
	char path[400];
	int fd;

	snprintf(path, sizeof(path), "%s/%u.%d.phases%s", dir, ino, pid, suffix);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age;
	t[1] = t[0];
	futimens(fd, t);
	close(fd);
}

static bool phase_exists(const char *dir, __u32 ino, int pid, const char *suffix)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/%u.%d.phases%s", dir, ino, pid, suffix);
	return access(path, F_OK) == 0;
}

static int dead_pid(void)
{
	int status;
	pid_t pid = fork();

	if (!pid)
		_exit(0);
	waitpid(pid, &status, 0);
	return pid;
}

/*
 * A reader of every record removes the phase files nothing will read: of a
 * process gone, with no record left in the map, unwritten for a minute.
 * A live process's file, one whose process still has records (pidns 0,
 * tgid 100 of the fixture), and one written lately stay; so does every
 * file when the reader reads one process's records only.
 */
TEST_F(reader, phase_files_no_record_needs_go)
{
	char base[] = "/tmp/st_reader_phXXXXXX", dir[320];
	int gone = dead_pid(), gone_late = dead_pid();
	struct stat st;
	__u32 ino;

	ASSERT_EQ(0, stat("/proc/self/ns/pid", &st));
	ino = (__u32)st.st_ino;
	ASSERT_NE(NULL, mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/%u", base, (unsigned int)geteuid());
	ASSERT_EQ(0, mkdir(dir, 0700));
	setenv("STEPTIME_PHASE_DIR", base, 1);
	phase_file(dir, ino, gone, "", 120);
	phase_file(dir, ino, gone, ".new", 120);
	phase_file(dir, ino, gone_late, "", 5);
	phase_file(dir, ino, getpid(), "", 120);
	phase_file(dir, 0, 100, "", 120);

	EXPECT_LT(0, read_all(batch, 100 + NPIDS - 1, 0));
	EXPECT_TRUE(phase_exists(dir, ino, gone, ""));
	EXPECT_LT(0, read_all(batch, 0, 0));
	EXPECT_FALSE(phase_exists(dir, ino, gone, ""));
	EXPECT_FALSE(phase_exists(dir, ino, gone, ".new"));
	EXPECT_TRUE(phase_exists(dir, ino, gone_late, ""));
	EXPECT_TRUE(phase_exists(dir, ino, getpid(), ""));
	EXPECT_TRUE(phase_exists(dir, 0, 100, ""));
	unsetenv("STEPTIME_PHASE_DIR");
	snprintf(dir, sizeof(dir), "rm -rf %s", base);
	EXPECT_EQ(0, system(dir));
}

TEST_HARNESS_MAIN
