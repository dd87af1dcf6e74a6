// SPDX-License-Identifier: GPL-2.0
/*
 * steptime's loader on the host kernel: what it attaches and why, every
 * error a user can hit, and the device filter and mark consumption of the
 * BPF program in the modes this kernel allows (a real char device,
 * /dev/full, stands in for the driver: the TRS commands fail on it, which
 * the program sees and counts).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <steptime/loader.h>
#include <steptime/steptime.h>
#include <npusim_abi.h>

#include "kselftest_harness.h"
#include "ksft_filter.h"
#include "st_run.h"

/* Loads verify and attach for up to a minute under TCG (VM runs). */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	300

/* -DPIN_DIR=... -DMNT_PIN=...: a run that others' runs do not unload. */
#ifndef PIN_DIR
#define PIN_DIR	"/sys/fs/bpf/steptime_loadertest"
#endif
/* Not /dev/null: make bench drives that one, and counters are global. */
#define TEST_DEV	"/dev/full"

/* The libascend_hal.so the loads below probe (NULL: the loader's search). */
static const char *load_hal;
/* Whether they journal: no per-task HAL program. */
static int load_journal;


static int _load_opts(const char *device, int mode, const char *profile,
		      const char *pin_dir, const char *btf, bool no_loop)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o),
		.device = device,
		.attach_mode = mode,
		.profile = profile,
		.pin_dir = pin_dir,
		.map_gid = -1,
		.btf_path = btf,
		.no_bpf_loop = no_loop,
		.hal = load_hal,
		.journal = load_journal,
	};

	/* Only npusim says its counter's frequency and its chip. */
	if (device && !strstr(device, NPUSIM_DEV_NAME)) {
		o.counter_freq_hz = 100000000;
		o.stars_version = 1;
	}

	return steptime__load(&o);
}

static int _load_btf(const char *device, int mode, const char *profile,
		     const char *pin_dir, const char *btf)
{
	return _load_opts(device, mode, profile, pin_dir, btf, false);
}

static int _load(const char *device, int mode, const char *profile,
		 const char *pin_dir)
{
	return _load_btf(device, mode, profile, pin_dir, NULL);
}

static void load(struct __test_metadata *_metadata, int mode)
{
	int err = _load(TEST_DEV, mode, NULL, PIN_DIR);

	ASSERT_EQ(0, err) TH_LOG("load (%s): %s", steptime__attach_mode_str(mode),
				 strerror(-err));
}

static void load_err(struct __test_metadata *_metadata, int expect,
		     const char *device, int mode, const char *profile,
		     const char *pin_dir)
{
	EXPECT_EQ(expect, _load(device, mode, profile, pin_dir));
	EXPECT_EQ(-ENOENT, steptime__unload(pin_dir)) TH_LOG("a failed load left pins");
}

/* A TRS command on a fd: ENOTTY from /dev/null, seen by steptime. */
static void trs_ioctl(int fd, unsigned long cmd)
{
	char arg[128] = {};

	ioctl(fd, cmd, arg);
}

static bool can_bpf(void)
{
	return geteuid() == 0;
}

/*
 * SKIP from FIXTURE_SETUP. The 6.1 harness runs the test body after a
 * SKIP in the setup (6.9's reworked harness does not): leave through the
 * harness's own setjmp landing, which skips the body and the teardown.
 */
#define SETUP_SKIP(fmt, ...) \
	SKIP(longjmp(_metadata->env, 1), fmt, ##__VA_ARGS__)

/* Each test loads: seconds under TCG, more on an arm64 guest. */
FIXTURE(host) {
	int dummy;
};

FIXTURE_VARIANT(host) {
	int mode;
};

/* The modes this kernel offers without the driver (machine-notes). */
FIXTURE_VARIANT_ADD(host, auto) { .mode = STEPTIME_ATTACH_AUTO };
FIXTURE_VARIANT_ADD(host, tp_btf) { .mode = STEPTIME_ATTACH_TP_BTF };
FIXTURE_VARIANT_ADD(host, tracepoint) { .mode = STEPTIME_ATTACH_TRACEPOINT };

FIXTURE_SETUP(host)
{
	if (!can_bpf())
		SETUP_SKIP("loading BPF needs root");
	steptime__unload(PIN_DIR);
	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	load(_metadata, variant->mode);
}

FIXTURE_TEARDOWN(host)
{
	steptime__unload(PIN_DIR);
}

/* status's data: the chosen mode, why, and zeroed counters. */
TEST_F_TIMEOUT(host, info, 300)
{
	struct steptime_counters c;
	struct steptime_info inf;

	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &inf));
	EXPECT_EQ(STEPTIME_MAGIC, inf.magic);
	EXPECT_STREQ(TEST_DEV, inf.device);
	EXPECT_STREQ("generic", inf.profile);
	EXPECT_NE(0, inf.reason[0]);
	if (variant->mode == STEPTIME_ATTACH_AUTO) {
		/* No driver function to hook: a syscall mode, and why. */
		EXPECT_TRUE(inf.attach_mode == STEPTIME_ATTACH_TP_BTF ||
			    inf.attach_mode == STEPTIME_ATTACH_TRACEPOINT);
		EXPECT_NE(NULL, strstr(inf.reason, "fentry"));
	} else {
		EXPECT_EQ(variant->mode, inf.attach_mode);
	}
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &c));
	EXPECT_EQ(0, c.ioctls);
	EXPECT_EQ(0, c.hook_errors);
}

/*
 * Every program fits STEPTIME_MAX_PROGS; one fewer than attached is an
 * error, not a list quietly cut short.
 */
TEST_F_TIMEOUT(host, progs_room, 300)
{
	struct steptime_prog p[STEPTIME_MAX_PROGS];
	int n = steptime__read_progs(PIN_DIR, p, STEPTIME_MAX_PROGS);

	ASSERT_LT(1, n);
	EXPECT_EQ(n, steptime__read_progs(PIN_DIR, p, n));
	EXPECT_EQ(-E2BIG, steptime__read_progs(PIN_DIR, p, n - 1));
	EXPECT_EQ(-E2BIG, steptime__read_progs(PIN_DIR, p, 0));
}

/* Matched: TRS commands on the device. Filtered out: everything else. */
TEST_F_TIMEOUT(host, device_filter, 300)
{
	struct steptime_counters c;
	int dev = open(TEST_DEV, O_RDWR), zero = open("/dev/zero", O_RDWR);
	int i;

	ASSERT_LE(0, dev);
	ASSERT_LE(0, zero);
	for (i = 0; i < 10; i++) {
		trs_ioctl(dev, TRS_IOC_SQCQ_SEND);	/* counted */
		trs_ioctl(dev, TRS_IOC_SQCQ_RECV);	/* counted */
		trs_ioctl(dev, 0x5401);		/* TCGETS: not TRS */
		trs_ioctl(zero, TRS_IOC_SQCQ_SEND);	/* other device */
		getppid();				/* not ioctl */
	}
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &c));
	EXPECT_EQ(20, c.ioctls);
	EXPECT_EQ(10, c.send_errors);
	EXPECT_EQ(0, c.sends);
	EXPECT_EQ(0, c.hook_errors);
	close(dev);
	close(zero);
}

/* Marks are consumed at the process's next matched ioctl, in order. */
TEST_F_TIMEOUT(host, marks_consumed, 300)
{
	struct steptime_reader_opts ro = { .sz = sizeof(ro), .pin_dir = PIN_DIR,
					   .pid = getpid() };
	struct steptime_step_stats s;
	struct steptime_reader *r;
	struct steptime_counters c;
	int fd = open(TEST_DEV, O_RDWR), n = 0;
	__u64 i;

	ASSERT_LE(0, fd);
	for (i = 1; i <= 3; i++) {
		ASSERT_EQ(0, steptime__mark(i, STEPTIME_TAG_START, NULL));
		ASSERT_EQ(0, steptime__mark(i, STEPTIME_TAG_END, NULL));
	}
	trs_ioctl(fd, TRS_IOC_SQCQ_RECV);
	r = steptime_reader__open(&ro);
	ASSERT_NE(NULL, r);
	while (steptime_reader__next(r, &s) == 0) {
		n++;
		EXPECT_EQ((__u64)n, s.index_id);
		EXPECT_EQ(STEPTIME_STEP_DONE, s.state);	/* ended, no tasks */
		EXPECT_LE(s.host_start_ns, s.host_end_ns);
		EXPECT_EQ(0, s.tasks);
		EXPECT_EQ((__u32)getpid(), s.tgid);
		if (n > 1)
			EXPECT_TRUE(s.flags & STEPTIME_F_GAP);
	}
	steptime_reader__free(r);
	EXPECT_EQ(3, n);
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &c));
	EXPECT_EQ(6, c.marks);
	EXPECT_EQ(0, c.marks_lost);
	close(fd);
}

/* The step API's raw mark (lib/step.c), to write device counter ticks. */
int st_mark_raw(__u64 index_id, unsigned int tag, __u32 stream, __u64 time);

/*
 * At the highest frequency a load takes, ticks convert to ns exactly: f - 1
 * ticks (the largest remainder, (f - 1) * 10^9 just under 10^19) are
 * floor((f - 1) * 10^9 / f) ns. Past about 1.8e10 Hz that product would
 * wrap: such frequencies are refused (TEST(errors)).
 */
TEST_F_TIMEOUT(host, device_time_at_max_freq, 300)
{
	const __u64 f = STEPTIME_FREQ_MAX_HZ, idx = 7;
	struct steptime_load_opts o = { .sz = sizeof(o), .device = TEST_DEV,
		.attach_mode = variant->mode, .pin_dir = PIN_DIR, .map_gid = -1,
		.counter_freq_hz = f, .stars_version = 1 };
	struct steptime_reader_opts ro = { .sz = sizeof(ro), .pin_dir = PIN_DIR,
					   .pid = getpid() };
	const __u32 both = STEPTIME_F_DEV_START | STEPTIME_F_DEV_END;
	struct steptime_step_stats s;
	struct steptime_reader *r;
	int fd, n = 0;

	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, steptime__load(&o));
	fd = open(TEST_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, steptime__mark(idx, STEPTIME_TAG_START, NULL));
	ASSERT_EQ(0, st_mark_raw(idx, STEPTIME_TAG_DEV_START_TICKS, 3, 1));
	ASSERT_EQ(0, st_mark_raw(idx, STEPTIME_TAG_DEV_END_TICKS, 3, f));
	ASSERT_EQ(0, steptime__mark(idx, STEPTIME_TAG_END, NULL));
	trs_ioctl(fd, TRS_IOC_SQCQ_RECV);
	r = steptime_reader__open(&ro);
	ASSERT_NE(NULL, r);
	while (steptime_reader__next(r, &s) == 0) {
		if (s.index_id != idx)
			continue;
		n++;
		EXPECT_EQ(both, s.flags & both);
		EXPECT_EQ(f - 1, s.dev_end_ticks - s.dev_start_ticks);
		EXPECT_EQ(999999999ull, s.device_time_ns);
	}
	steptime_reader__free(r);
	EXPECT_EQ(1, n);
	close(fd);
}

/* More marks than the ring holds between two ioctls: counted as lost. */
TEST_F_TIMEOUT(host, marks_lost_counted, 300)
{
	struct steptime_counters c;
	int fd = open(TEST_DEV, O_RDWR);
	__u64 i;

	ASSERT_LE(0, fd);
	trs_ioctl(fd, TRS_IOC_SQCQ_RECV);	/* bind the process first */
	for (i = 1; i <= STEPTIME_MARK_RING + 4; i++)
		ASSERT_EQ(0, steptime__mark(i, STEPTIME_TAG_START, NULL));
	trs_ioctl(fd, TRS_IOC_SQCQ_RECV);
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &c));
	EXPECT_EQ(4, c.marks_lost);
	EXPECT_EQ(STEPTIME_MARK_RING, c.marks);
	close(fd);
}

/* A process that exits gives its slot back and leaves its step incomplete. */
TEST_F_TIMEOUT(host, exit_frees, 300)
{
	struct steptime_counters c;
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = open(TEST_DEV, O_RDWR);

		steptime__mark(1, STEPTIME_TAG_START, NULL);
		trs_ioctl(fd, TRS_IOC_SQCQ_RECV);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &c));
	EXPECT_EQ(1, c.proc_exits);
	EXPECT_EQ(1, c.steps_incomplete);
}

TEST_F_TIMEOUT(host, load_twice, 300)
{
	EXPECT_EQ(-EEXIST, _load(TEST_DEV, variant->mode, NULL, PIN_DIR));
	/* ... and the first load is intact. */
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
	EXPECT_EQ(-ENOENT, steptime__unload(PIN_DIR));
}

/*
 * Unload returns once the kernel has freed the load's programs: the last
 * reference of an unpinned link is dropped from a workqueue, and a driver
 * a program is attached to cannot be removed before (`steptime unload &&
 * rmmod`). None is found by its id right after. One that someone else
 * holds (an fd, here) is waited for a bounded time only, and stays.
 */
TEST_F_TIMEOUT(host, unload_frees_programs, 300)
{
	struct steptime_prog p[64];
	int n, i, fd, held;

	n = steptime__read_progs(PIN_DIR, p, 64);
	ASSERT_LT(0, n);
	ASSERT_EQ(0, steptime__unload(PIN_DIR));
	for (i = 0; i < n; i++) {
		fd = bpf_prog_get_fd_by_id(p[i].id);
		EXPECT_EQ(-ENOENT, fd) TH_LOG("program %u (%s) outlived the unload",
					      p[i].id, p[i].name);
		if (fd >= 0)
			close(fd);
	}
	load(_metadata, variant->mode);
	n = steptime__read_progs(PIN_DIR, p, 64);
	ASSERT_LT(0, n);
	held = bpf_prog_get_fd_by_id(p[0].id);
	ASSERT_LE(0, held);
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
	fd = bpf_prog_get_fd_by_id(p[0].id);
	EXPECT_LE(0, fd) TH_LOG("a program held by fd was freed");
	if (fd >= 0)
		close(fd);
	close(held);
}

/* Errors a user can hit, each clear and leaving nothing behind. */
TEST(errors)
{
	struct steptime_load_opts small = { .sz = 4 };
	struct steptime_load_opts fast = { .sz = sizeof(fast),
		.device = TEST_DEV, .pin_dir = PIN_DIR, .map_gid = -1,
		.stars_version = 1 };
	char longpath[PATH_MAX + 1] = "";
	struct steptime_info inf;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	steptime__unload(PIN_DIR);
	EXPECT_EQ(-ENOENT, steptime__unload(PIN_DIR));
	EXPECT_EQ(-ENOENT, steptime__read_info(PIN_DIR, &inf));
	load_err(_metadata, -ENODEV, "/dev/no_such_npu", 0, NULL, PIN_DIR);
	load_err(_metadata, -ENODEV, "/etc/hostname", 0, NULL, PIN_DIR);
	load_err(_metadata, -EINVAL, TEST_DEV, 99, NULL, PIN_DIR);
	load_err(_metadata, -EINVAL, TEST_DEV, 0, "no_such_profile", PIN_DIR);
	load_err(_metadata, -EINVAL, TEST_DEV, 0, NULL, "/tmp/steptime_not_bpffs");
	/* A directory that is not a load is not wiped by unload. */
	ASSERT_EQ(0, mkdir(PIN_DIR, 0700));
	ASSERT_EQ(0, mkdir(PIN_DIR "/other_tool", 0700));
	EXPECT_EQ(-ENOTEMPTY, steptime__unload(PIN_DIR));
	EXPECT_EQ(0, access(PIN_DIR "/other_tool", F_OK));
	rmdir(PIN_DIR "/other_tool");
	EXPECT_EQ(-ENOENT, steptime__unload(PIN_DIR));	/* empty: removed */
	EXPECT_EQ(-1, access(PIN_DIR, F_OK));
	EXPECT_EQ(-EINVAL, steptime__load(&small));
	/* A frequency whose tick conversion would overflow: refused. */
	fast.counter_freq_hz = STEPTIME_FREQ_MAX_HZ + 1;
	EXPECT_EQ(-EINVAL, steptime__load(&fast));
	EXPECT_EQ(-ENOENT, steptime__unload(PIN_DIR));
	fast.counter_freq_hz = STEPTIME_FREQ_MAX_HZ;
	/* A bad libsteptime list: refused whole, nothing loaded. */
	fast.libs = "/a:/b::/c:/d:/e";
	EXPECT_EQ(-E2BIG, steptime__load(&fast));
	EXPECT_EQ(-ENOENT, steptime__unload(PIN_DIR));
	memset(longpath, 'x', sizeof(longpath) - 1);
	longpath[0] = '/';
	fast.libs = longpath;
	EXPECT_EQ(-ENAMETOOLONG, steptime__load(&fast));
	EXPECT_EQ(-ENOENT, steptime__unload(PIN_DIR));
	fast.libs = NULL;
	ASSERT_EQ(0, steptime__load(&fast));
	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &inf));
	EXPECT_EQ(STEPTIME_FREQ_MAX_HZ, inf.counter_freq_hz);
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
	/*
	 * The driver's functions are not in this kernel: said, not hidden
	 * (not npusim's: the VM runs this test with npusim loaded).
	 */
	load_err(_metadata, -EOPNOTSUPP, TEST_DEV, STEPTIME_ATTACH_FENTRY,
		 "ascend", PIN_DIR);
	load_err(_metadata, -EOPNOTSUPP, TEST_DEV, STEPTIME_ATTACH_KPROBE,
		 "ascend", PIN_DIR);
}

/*
 * A child process that runs @fn and exits with its value, or dies with
 * the test: a failed ASSERT returns before telling a looping child to
 * stop (mark_loop), which would run on, orphaned, under later tests.
 */
static pid_t spawn(int (*fn)(void *), void *arg)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(4);
		_exit(fn(arg));
	}
	return pid;
}

struct racer {
	int go[2];	/* the parent closes the write end: everyone starts */
};

static int race_load(void *arg)
{
	struct racer *r = arg;
	char c;
	int err;

	close(r->go[1]);
	if (read(r->go[0], &c, 1) != 0)
		return 3;
	err = _load(TEST_DEV, STEPTIME_ATTACH_AUTO, NULL, PIN_DIR);
	return err == 0 ? 0 : err == -EEXIST ? 1 : 2;
}

/*
 * Tests that load many times: each load takes seconds under TCG, more
 * than the harness's default 30 s per test.
 */
FIXTURE(slow) {
	int dummy;
};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

/* Racing loaders: exactly one wins, the others get -EEXIST. */
TEST_F_TIMEOUT(slow, load_race, 600)
{
	enum { RACERS = 3, ROUNDS = 2 };
	int round, i, status, won, lost;
	struct steptime_info inf;
	struct racer r;
	pid_t pids[RACERS];

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	steptime__unload(PIN_DIR);
	for (round = 0; round < ROUNDS; round++) {
		ASSERT_EQ(0, pipe(r.go));
		for (i = 0; i < RACERS; i++)
			ASSERT_LT(0, pids[i] = spawn(race_load, &r));
		close(r.go[0]);
		close(r.go[1]);		/* go */
		won = lost = 0;
		for (i = 0; i < RACERS; i++) {
			ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
			ASSERT_TRUE(WIFEXITED(status));
			won += WEXITSTATUS(status) == 0;
			lost += WEXITSTATUS(status) == 1;
		}
		EXPECT_EQ(1, won);
		EXPECT_EQ(RACERS - 1, lost);
		EXPECT_EQ(0, steptime__read_info(PIN_DIR, &inf));
		EXPECT_EQ(0, steptime__load_leftovers(PIN_DIR));
		EXPECT_EQ(0, steptime__unload(PIN_DIR));
	}
}

/*
 * --mode/--group makes the bpffs root walkable (o+x, g+x) for the users it
 * lets in; unload puts the mode back exactly, and leaves it alone when
 * someone changed it in between.
 */
FIXTURE(bpffs) {
	mode_t was;
};

/* The bpffs root's mode is put back whatever the test did to it. */
FIXTURE_SETUP(bpffs)
{
	struct stat st;

	self->was = 0;
	if (!stat("/sys/fs/bpf", &st))
		self->was = st.st_mode & 07777;
}

FIXTURE_TEARDOWN(bpffs)
{
	if (self->was)
		chmod("/sys/fs/bpf", self->was);
	steptime__unload(PIN_DIR);
}

TEST_F_TIMEOUT(bpffs, mode_reverted, 300)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o), .device = TEST_DEV, .pin_dir = PIN_DIR,
		.map_mode = 0644, .map_gid = -1,
		.counter_freq_hz = 100000000, .stars_version = 1,
	};
	struct steptime_info inf;
	struct stat st;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	ASSERT_NE(0, self->was);
	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, chmod("/sys/fs/bpf", 0700));

	ASSERT_EQ(0, steptime__load(&o));
	ASSERT_EQ(0, stat("/sys/fs/bpf", &st));
	EXPECT_EQ(0711, st.st_mode & 07777);
	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &inf));
	EXPECT_EQ(0700, inf.bpffs_mode_before);
	EXPECT_EQ(0711, inf.bpffs_mode_after);
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
	ASSERT_EQ(0, stat("/sys/fs/bpf", &st));
	EXPECT_EQ(0700, st.st_mode & 07777);

	/* Changed by someone else meanwhile: theirs stays. */
	ASSERT_EQ(0, steptime__load(&o));
	ASSERT_EQ(0, chmod("/sys/fs/bpf", 0755));
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
	ASSERT_EQ(0, stat("/sys/fs/bpf", &st));
	EXPECT_EQ(0755, st.st_mode & 07777);

	/* Root-only maps need nothing there: nothing changes. */
	ASSERT_EQ(0, chmod("/sys/fs/bpf", 0700));
	o.map_mode = 0;
	ASSERT_EQ(0, steptime__load(&o));
	ASSERT_EQ(0, stat("/sys/fs/bpf", &st));
	EXPECT_EQ(0700, st.st_mode & 07777);
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
}

static int killed_load(void *arg)
{
	char n[16];

	snprintf(n, sizeof(n), "%d", *(int *)arg);
	setenv("STEPTIME_LOAD_KILL_AT", n, 1);
	/* Quiet: libbpf and the loader have nothing to say here. */
	if (!freopen("/dev/null", "w", stderr))
		return 4;
	return _load(TEST_DEV, STEPTIME_ATTACH_AUTO, NULL, PIN_DIR) ? 2 : 0;
}

/* Everything a complete load pins, there. */
static void expect_complete(struct __test_metadata *_metadata)
{
	static const char *const pins[] = {
		"marks", "steps", "events", "counters", "info",
		"links/tp_sched_process_exit",
	};
	char path[256];
	size_t i;

	for (i = 0; i < sizeof(pins) / sizeof(pins[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", PIN_DIR, pins[i]);
		EXPECT_EQ(0, access(path, F_OK)) TH_LOG("%s missing", path);
	}
}

/* `steptime status` (STEPTIME_CLI) says what a killed load left. */
static void expect_status_says(struct __test_metadata *_metadata,
			       const char *what)
{
	const char *cli = getenv("STEPTIME_CLI");
	char cmd[512], out[4096] = "";
	size_t n;
	FILE *f;

	if (!cli)
		return;
	snprintf(cmd, sizeof(cmd), "%s status --pin %s 2>&1", cli, PIN_DIR);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	pclose(f);
	EXPECT_NE(NULL, strstr(out, what)) TH_LOG("status said: %s", out);
}

/*
 * A loader killed at each of its steps in turn leaves a complete load or
 * only a leftover that status reports and unload removes; never a
 * partial pin directory.
 */
TEST_F_TIMEOUT(slow, load_killed_anywhere, 900)
{
	struct steptime_info inf;
	int k, status, complete = 0, partial = 0, nothing = 0, left, err;
	pid_t pid;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	steptime__unload(PIN_DIR);
	for (k = 1; k < 64; k++) {
		pid = spawn(killed_load, &k);
		ASSERT_LT(0, pid);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (WIFEXITED(status)) {
			/* Past the last step: a plain, complete load. */
			EXPECT_EQ(0, WEXITSTATUS(status));
			EXPECT_EQ(0, steptime__read_info(PIN_DIR, &inf));
			EXPECT_EQ(0, steptime__unload(PIN_DIR));
			break;
		}
		ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		err = steptime__read_info(PIN_DIR, &inf);
		left = steptime__load_leftovers(PIN_DIR);
		if (err == 0) {
			complete++;
			expect_complete(_metadata);
			EXPECT_EQ(0, left);
			expect_status_says(_metadata, "attach mode:");
		} else {
			EXPECT_EQ(-ENOENT, err) TH_LOG("step %d", k);
			EXPECT_EQ(-1, access(PIN_DIR, F_OK)) TH_LOG("step %d: a partial pin dir", k);
			if (left) {
				partial++;
				EXPECT_EQ(1, left);
				expect_status_says(_metadata, "killed");
			} else {
				nothing++;
			}
		}
		EXPECT_EQ(err == 0 || left ? 0 : -ENOENT, steptime__unload(PIN_DIR));
		EXPECT_EQ(0, steptime__load_leftovers(PIN_DIR));
		EXPECT_EQ(-ENOENT, steptime__read_info(PIN_DIR, &inf));
	}
	TH_LOG("%d steps: %d nothing, %d leftover, %d complete", k - 1,
	       nothing, partial, complete);
	EXPECT_LT(5, k);	/* the hook works at all */
	EXPECT_LT(0, nothing);
	EXPECT_LT(0, partial);
	EXPECT_LT(0, complete);
}

struct marker {
	volatile int ok, enodev, other, last_err, stop;
	volatile __u64 last_ok;	/* index id of the last mark that worked */
};

/* Marks steps until told to stop, counting what the marks return. */
static int mark_loop(void *arg)
{
	struct marker *m = arg;
	int fd = open(TEST_DEV, O_RDWR), err;
	__u64 id;

	for (id = 1; !m->stop; id++) {
		err = steptime__mark(id, STEPTIME_TAG_START, NULL);
		if (!err)
			err = steptime__mark(id, STEPTIME_TAG_END, NULL);
		if (!err) {
			m->ok++;
			m->last_ok = id;
		} else if (err == -ENODEV) {
			m->enodev++;
		} else {
			m->other++;
			m->last_err = err;
		}
		trs_ioctl(fd, TRS_IOC_SQCQ_RECV);	/* marks consumed here */
	}
	return 0;
}

#define WAIT_FOR(cond) ({						\
	struct timespec _t0, _t;					\
	clock_gettime(CLOCK_MONOTONIC, &_t0);				\
	do {								\
		sched_yield();						\
		clock_gettime(CLOCK_MONOTONIC, &_t);			\
	} while (!(cond) && _t.tv_sec - _t0.tv_sec < 30);		\
	(cond);								\
})

/* The steps of @pid at or after index @from in the steps map. */
static int steps_from(pid_t pid, __u64 from)
{
	struct steptime_reader_opts ro = { .sz = sizeof(ro), .pin_dir = PIN_DIR,
					   .pid = pid };
	struct steptime_step_stats s;
	struct steptime_reader *r = steptime_reader__open(&ro);
	int n = 0;

	if (!r)
		return -errno;
	while (steptime_reader__next(r, &s) == 0)
		n += s.index_id >= from;
	steptime_reader__free(r);
	return n;
}

/*
 * Unloading under a process that marks: its marks fail with -ENODEV (the
 * documented "not loaded") and it keeps running; after a reload its marks
 * work again and land in the new load's steps.
 */
TEST_F_TIMEOUT(slow, unload_while_marking, 300)
{
	struct marker *m;
	__u64 from;
	int ok, status;
	pid_t pid;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	steptime__unload(PIN_DIR);
	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	setenv("STEPTIME_QUIET", "1", 1);
	ASSERT_EQ(0, _load(TEST_DEV, STEPTIME_ATTACH_AUTO, NULL, PIN_DIR));
	pid = spawn(mark_loop, m);
	ASSERT_LT(0, pid);
	ASSERT_TRUE(WAIT_FOR(m->ok > 10)) TH_LOG("%d marks failed, the last with %d",
						 m->other, m->last_err);
	EXPECT_LT(0, steps_from(pid, 1));

	ASSERT_EQ(0, steptime__unload(PIN_DIR));
	ASSERT_TRUE(WAIT_FOR(m->enodev > 10)) TH_LOG("marks after unload: %d ok, %d other",
						     m->ok, m->other);
	EXPECT_EQ(0, m->other) TH_LOG("the last with %d", m->last_err);
	EXPECT_EQ(0, waitpid(pid, &status, WNOHANG));	/* still running */

	ASSERT_EQ(0, _load(TEST_DEV, STEPTIME_ATTACH_AUTO, NULL, PIN_DIR));
	ok = m->ok;
	ASSERT_TRUE(WAIT_FOR(m->ok > ok + 10)) TH_LOG("no mark works after reload");
	from = m->last_ok;
	ASSERT_TRUE(WAIT_FOR(steps_from(pid, from) > 0))
		TH_LOG("the reloaded program records none of its steps");
	m->stop = 1;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0, m->other);
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
	munmap(m, sizeof(*m));
}

#ifndef MNT_PIN
#define MNT_PIN	"/sys/fs/bpf/steptime_mnt"
#endif

/*
 * On npusim (the VM): auto picks fentry where the kernel has BPF
 * trampolines for it, and says why not and takes kprobe where it has not:
 * Debian's 6.1 arm64 kernel has no ftrace direct calls (machine-notes).
 */
TEST_F_TIMEOUT(slow, npusim_auto_mode, 300)
{
	struct steptime_info inf;
	struct utsname u;
	bool no_fentry;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	if (access("/dev/" NPUSIM_DEV_NAME, F_OK))
		SKIP(return, "no npusim here (a VM test)");
	ASSERT_EQ(0, uname(&u));
	no_fentry = !strcmp(u.machine, "aarch64") && !strncmp(u.release, "6.1.", 4);
	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, _load("/dev/" NPUSIM_DEV_NAME, STEPTIME_ATTACH_AUTO, NULL, PIN_DIR));
	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &inf));
	TH_LOG("%s %s: %s (%s)", u.machine, u.release,
	       steptime__attach_mode_str(inf.attach_mode), inf.reason);
	if (no_fentry) {
		EXPECT_EQ(STEPTIME_ATTACH_KPROBE, inf.attach_mode);
		EXPECT_NE(NULL, strstr(inf.reason, "fentry"));
	} else {
		EXPECT_EQ(STEPTIME_ATTACH_FENTRY, inf.attach_mode);
	}
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
}

/* In a private mount namespace: what load does about missing mounts. */
static int in_mount_ns(void (*fn)(int *rc))
{
	int status, rc = 0;
	pid_t pid = fork();

	if (pid == 0) {
		if (unshare(CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			_exit(3);
		fn(&rc);
		_exit(rc);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void no_bpffs(int *rc)
{
	umount2("/sys/fs/bpf", MNT_DETACH);
	/* load mounts bpffs itself, pins, and unload cleans up. */
	*rc = _load(TEST_DEV, 0, NULL, MNT_PIN) ? 1 :
	      steptime__unload(MNT_PIN) ? 2 : 0;
}

static void no_tracefs(int *rc)
{
	umount2("/sys/kernel/tracing", MNT_DETACH);
	*rc = _load(TEST_DEV, STEPTIME_ATTACH_TRACEPOINT, NULL, MNT_PIN) ? 1 :
	      steptime__unload(MNT_PIN) ? 2 : 0;
}

#define NPUSIM_DEV	"/dev/" NPUSIM_DEV_NAME

static char btf_copy[64];

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out, err = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (out < 0) {
		close(in);
		return -errno;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			err = -EIO;
			break;
		}
	if (n < 0)
		err = -errno;
	close(in);
	close(out);
	return err;
}

/* Loaded from @btf on @dev: a mode that needs no kernel BTF, and working. */
static int load_from_file(const char *dev, const char *btf)
{
	struct steptime_counters c;
	struct steptime_info inf;
	int fd, i;

	if (_load_btf(dev, 0, NULL, MNT_PIN, btf))
		return 10;
	if (steptime__read_info(MNT_PIN, &inf))
		return 11;
	/* fentry and tp_btf attach by the kernel's own BTF ids. */
	if (inf.attach_mode == STEPTIME_ATTACH_FENTRY ||
	    (inf.attach_mode == STEPTIME_ATTACH_TP_BTF &&
	     !strstr(inf.profile, "raw_tp")))
		return 12;
	if (!strstr(inf.reason, "fentry: the kernel has no BTF"))
		return 13;
	/* npusim: its own handler, by kprobe. */
	if (!strcmp(dev, NPUSIM_DEV) &&
	    inf.attach_mode != STEPTIME_ATTACH_KPROBE)
		return 14;
	fd = open(dev, O_RDWR);
	if (fd < 0)
		return 15;
	for (i = 0; i < 3; i++)
		trs_ioctl(fd, TRS_IOC_SQCQ_SEND);
	close(fd);
	if (steptime__read_counters(MNT_PIN, &c) || c.ioctls != 3)
		return 16;
	return steptime__unload(MNT_PIN) ? 17 : 0;
}

/*
 * A kernel without BTF: /sys/kernel/btf hidden. Without --btf: a clear
 * error; with this kernel's BTF copied to a file (what BTFHub ships): a
 * load in a mode that needs no kernel BTF, which works.
 */
static void no_btf(int *rc)
{
	if (mount("tmpfs", "/sys/kernel/btf", "tmpfs", 0, NULL)) {
		*rc = 4;
		return;
	}
	if (_load(TEST_DEV, 0, NULL, MNT_PIN) != -EOPNOTSUPP) {
		*rc = 1;
		return;
	}
	if (_load_btf(TEST_DEV, STEPTIME_ATTACH_FENTRY, "ascend", MNT_PIN,
		      btf_copy) != -EOPNOTSUPP) {
		*rc = 2;
		return;
	}
	*rc = load_from_file(TEST_DEV, btf_copy);
	if (!*rc && access(NPUSIM_DEV, F_OK) == 0)
		*rc = load_from_file(NPUSIM_DEV, btf_copy);
}

TEST_F_TIMEOUT(slow, missing_mounts, 300)
{
	if (!can_bpf())
		SKIP(return, "mount namespaces and BPF need root");
	snprintf(btf_copy, sizeof(btf_copy), "/tmp/steptime_btf_%d", getpid());
	ASSERT_EQ(0, copy_file("/sys/kernel/btf/vmlinux", btf_copy));
	steptime__unload(MNT_PIN);	/* what a killed run left */
	EXPECT_EQ(0, in_mount_ns(no_bpffs)) TH_LOG("bpffs not mounted");
	EXPECT_EQ(0, in_mount_ns(no_tracefs)) TH_LOG("tracefs not mounted");
	EXPECT_EQ(0, in_mount_ns(no_btf)) TH_LOG("no BTF (rc: see no_btf())");
	unlink(btf_copy);
}

/*
 * --btf of another kernel (foreign.btf: a task_struct and nothing that
 * steptime reads): the verifier refuses what libbpf could not relocate.
 * The load fails saying so, the refused program named, and leaves nothing.
 */
TEST_F_TIMEOUT(slow, foreign_btf, 300)
{
	char btf[PATH_MAX], path[64], msg[4096];
	int fd, saved, err;
	ssize_t n;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	ASSERT_EQ(0, st_beside_self(btf, sizeof(btf), 0, "foreign.btf"));
	if (access(btf, R_OK))
		SKIP(return, "foreign.btf not built: pahole (dwarves) was missing");
	steptime__unload(PIN_DIR);
	snprintf(path, sizeof(path), "/tmp/steptime_loadertest_%d", getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd);
	unlink(path);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	ASSERT_LE(0, saved);
	ASSERT_LE(0, dup2(fd, STDERR_FILENO));
	err = _load_btf(TEST_DEV, STEPTIME_ATTACH_TRACEPOINT, NULL, PIN_DIR,
			btf);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, msg, sizeof(msg) - 1, 0);
	close(fd);
	ASSERT_LT(0, n);
	msg[n] = 0;
	/* The mode asked for: its verifier's error. */
	EXPECT_EQ(-EINVAL, err) TH_LOG("%s", msg);
	EXPECT_NE(NULL, strstr(msg, "tracepoint: tp_sys_"))
		TH_LOG("no tracepoint program named: %s", msg);
	EXPECT_NE(NULL, strstr(msg, " refused: a CO-RE relocation found no "
			       "match: the BTF does not describe this "
			       "kernel's types")) TH_LOG("%s", msg);
	EXPECT_NE(0, access(PIN_DIR, F_OK)) TH_LOG("%s left behind", PIN_DIR);
}

/*
 * The programs of the load at @pin: each within the verifier budget.
 * Return: how many are over it, or -1 when none could be read.
 */
static int progs_over_budget(const char *pin, const char *what)
{
	struct steptime_prog progs[STEPTIME_MAX_PROGS];
	int n = steptime__read_progs(pin, progs, STEPTIME_MAX_PROGS), i, over = 0;

	if (n <= 0) {
		fprintf(stderr, "#   %s: no programs read: %s\n", what,
			strerror(n ? -n : ENOENT));
		return -1;
	}
	for (i = 0; i < n; i++) {
		over += progs[i].verified_insns > STEPTIME_VERIFIER_BUDGET;
		fprintf(stderr, "#   %-26s %-26s %8u insns%s\n", what,
			progs[i].name, progs[i].verified_insns,
			progs[i].verified_insns > STEPTIME_VERIFIER_BUDGET ?
			" OVER BUDGET" : "");
	}
	return over;
}

/*
 * Load in @mode (with bpf_loop() unless @no_loop) and check each program
 * against the budget. The loader retries a refused mode without
 * bpf_loop(): a load asked with it must not have needed that.
 * Return: 0, or a code saying what failed.
 */
static int budget_load(const char *dev, int mode, bool no_loop,
		       const char *btf, const char *pin)
{
	struct steptime_info inf;
	char what[64];
	int err, over;

	err = _load_opts(dev, mode, NULL, pin, btf, no_loop);
	if (err) {
		fprintf(stderr, "#   %s: load failed: %s\n",
			steptime__attach_mode_str(mode), strerror(-err));
		return 20;
	}
	if (steptime__read_info(pin, &inf))
		return 21;
	/* The HAL's uprobes are verified too. */
	if (load_hal && inf.nhal != 1) {
		fprintf(stderr, "#   %s: HAL not probed: %s\n",
			steptime__attach_mode_str(mode), inf.reason);
		steptime__unload(pin);
		return 24;
	}
	snprintf(what, sizeof(what), "%s%s%s", steptime__attach_mode_str(mode),
		 strstr(inf.profile, "raw_tp") ? "(raw_tp)" : "",
		 no_loop ? " no bpf_loop" : "");
	over = progs_over_budget(pin, what);
	if (strstr(inf.reason, "refused")) {
		fprintf(stderr, "#   %s: %s\n", what, inf.reason);
		over = over < 0 ? over : over + 1;
	}
	steptime__unload(pin);
	return over < 0 ? 22 : over ? 23 : 0;
}

/* tp_btf as raw_tp: the kernel's BTF hidden, given as a file. */
static void budget_raw_tp(int *rc)
{
	if (mount("tmpfs", "/sys/kernel/btf", "tmpfs", 0, NULL)) {
		*rc = 4;
		return;
	}
	*rc = budget_load(TEST_DEV, STEPTIME_ATTACH_TP_BTF, false, btf_copy,
			  MNT_PIN);
	if (!*rc)
		*rc = budget_load(TEST_DEV, STEPTIME_ATTACH_TP_BTF, true,
				  btf_copy, MNT_PIN);
}

/*
 * Every program of every attach mode this kernel offers, with bpf_loop()
 * and without, verifies in at most STEPTIME_VERIFIER_BUDGET instructions:
 * a quarter of the verifier's limit, so that builds of the same kernel
 * that walk more states (one 6.18 build walked twice what another did)
 * still load it. The figures are printed.
 */
TEST_F_TIMEOUT(slow, verifier_budget, 900)
{
	static const int modes[] = {
		STEPTIME_ATTACH_FENTRY, STEPTIME_ATTACH_KPROBE,
		STEPTIME_ATTACH_TP_BTF, STEPTIME_ATTACH_TRACEPOINT,
	};
	bool npusim = access(NPUSIM_DEV, F_OK) == 0, no_fentry;
	static char hal[PATH_MAX];
	struct utsname u;
	unsigned int i, loop;
	const char *dev;
	int mode;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	ASSERT_EQ(0, uname(&u));
	/* machine-notes: arm64 6.1 has no ftrace direct calls. */
	no_fentry = !strcmp(u.machine, "aarch64") && !strncmp(u.release, "6.1.", 4);
	/* Its own libascend_hal.so stand-in: the HAL's programs load too. */
	ASSERT_EQ(0, st_beside_self(hal, sizeof(hal), 2, "libascend_hal.so"));
	ASSERT_EQ(0, access(hal, R_OK)) TH_LOG("%s: %s", hal, strerror(errno));
	load_hal = hal;
	dev = npusim ? NPUSIM_DEV : TEST_DEV;
	steptime__unload(PIN_DIR);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		mode = modes[i];
		/* The driver's handler: npusim's, in the VM; none here. */
		if ((mode == STEPTIME_ATTACH_FENTRY ||
		     mode == STEPTIME_ATTACH_KPROBE) && !npusim) {
			TH_LOG("%s: no driver here (a VM test)",
			       steptime__attach_mode_str(mode));
			continue;
		}
		if (mode == STEPTIME_ATTACH_FENTRY && no_fentry) {
			TH_LOG("fentry: %s %s has no ftrace direct calls",
			       u.machine, u.release);
			continue;
		}
		/* The journal's programs without bpf_loop(): --journal. */
		for (loop = 0; loop < 2; loop++) {
			load_journal = loop;
			EXPECT_EQ(0, budget_load(dev, mode, loop, NULL, PIN_DIR))
				TH_LOG("%s%s", steptime__attach_mode_str(mode),
				       loop ? " without bpf_loop(), --journal" :
				       "");
		}
		load_journal = 0;
	}
	snprintf(btf_copy, sizeof(btf_copy), "/tmp/steptime_btf_%d", getpid());
	ASSERT_EQ(0, copy_file("/sys/kernel/btf/vmlinux", btf_copy));
	steptime__unload(MNT_PIN);
	EXPECT_EQ(0, in_mount_ns(budget_raw_tp)) TH_LOG("raw_tp (rc: see budget_load())");
	unlink(btf_copy);
	load_hal = NULL;
}

/*
 * A process that makes no ioctl loses no mark: with its libsteptime.so
 * probed (--lib), it binds its ring and has every half ring consumed
 * through the kick's uprobe. 100,000 steps in a STEPTIME_MARK_RING-mark ring, and not one
 * ioctl on the device.
 */
TEST_F_TIMEOUT(slow, ring_kick_no_ioctl, 600)
{
	enum { STEPS = 100000 };
	char lib[PATH_MAX], marker[PATH_MAX], n[16];
	struct steptime_counters c0, c1;
	struct steptime_load_opts o = {
		.sz = sizeof(o), .device = TEST_DEV,
		.attach_mode = STEPTIME_ATTACH_AUTO, .pin_dir = PIN_DIR,
		.map_gid = -1, .counter_freq_hz = 100000000,
		.stars_version = 1, .libs = lib,
	};
	int status;
	pid_t pid;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	ASSERT_EQ(0, st_beside_self(lib, sizeof(lib), 2, "libsteptime.so.1"));
	ASSERT_EQ(0, st_beside_self(marker, sizeof(marker), 0, "kick_marker"));
	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, steptime__load(&o));
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &c0));
	snprintf(n, sizeof(n), "%d", STEPS);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
		execl(marker, marker, n, (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &c1));
	TH_LOG("marks %llu, lost %llu, kicks %llu, steps %llu, ioctls %llu",
	       (unsigned long long)(c1.marks - c0.marks),
	       (unsigned long long)(c1.marks_lost - c0.marks_lost),
	       (unsigned long long)(c1.ring_kicks - c0.ring_kicks),
	       (unsigned long long)(c1.steps - c0.steps),
	       (unsigned long long)(c1.ioctls - c0.ioctls));
	EXPECT_EQ(2 * STEPS, c1.marks - c0.marks);
	EXPECT_EQ(0, c1.marks_lost - c0.marks_lost);
	EXPECT_EQ(STEPS, c1.steps - c0.steps);
	EXPECT_EQ(STEPS, c1.steps_done - c0.steps_done);
	/* One kick per half ring, and the registration's. */
	EXPECT_LE(2 * STEPS / (STEPTIME_MARK_RING / 2), c1.ring_kicks - c0.ring_kicks);
	EXPECT_GE(2 * STEPS / (STEPTIME_MARK_RING / 2) + 2,
		  c1.ring_kicks - c0.ring_kicks);
	EXPECT_EQ(0, c1.ioctls - c0.ioctls);
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
}

/* Load on TEST_DEV with @hal (NULL: the loader's search); its info in @inf. */
static int hal_load(const char *hal, struct steptime_info *inf)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o), .device = TEST_DEV,
		.attach_mode = STEPTIME_ATTACH_AUTO, .pin_dir = PIN_DIR,
		.map_gid = -1, .counter_freq_hz = 100000000,
		.stars_version = 1, .hal = hal,
	};
	int err;

	steptime__unload(PIN_DIR);
	err = steptime__load(&o);
	if (!err)
		err = steptime__read_info(PIN_DIR, inf);
	return err;
}

/*
 * libascend_hal.so: given, found where a running process maps it, found
 * in $LD_LIBRARY_PATH; a given path that is not a file is an error, a
 * file without the entry points is not probed and said so.
 */
TEST_F_TIMEOUT(slow, hal_libs, 600)
{
	char hal[PATH_MAX], real[PATH_MAX], dir[2 * PATH_MAX + 16], lib[PATH_MAX];
	struct steptime_info inf;
	const char *old = getenv("LD_LIBRARY_PATH");
	int go[2], status;
	pid_t pid;
	char c;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	ASSERT_EQ(0, st_beside_self(hal, sizeof(hal), 2, "libascend_hal.so"));
	ASSERT_NE(NULL, realpath(hal, real));
	ASSERT_EQ(0, st_beside_self(lib, sizeof(lib), 2, "libsteptime.so.1"));
	unsetenv("LD_LIBRARY_PATH");

	/* Given. */
	ASSERT_EQ(0, hal_load(hal, &inf));
	ASSERT_EQ(1, inf.nhal);
	EXPECT_STREQ(real, inf.hal[0].path);
	/* Given twice (by two names): probed once. */
	snprintf(dir, sizeof(dir), "%s:%s", hal, real);
	ASSERT_EQ(0, hal_load(dir, &inf));
	EXPECT_EQ(1, inf.nhal);
	/* Not there, not a file: an error, nothing loaded. */
	EXPECT_EQ(-ENOENT, hal_load("/nonexistent/libascend_hal.so", &inf));
	EXPECT_EQ(-ENOENT, steptime__read_info(PIN_DIR, &inf));
	EXPECT_EQ(-EINVAL, hal_load("/tmp", &inf));
	/* Not a HAL: loaded, not probed, the reason says which. */
	ASSERT_EQ(0, hal_load(lib, &inf));
	EXPECT_EQ(0, inf.nhal);
	EXPECT_NE(NULL, strstr(inf.reason, "HAL: ")) TH_LOG("%s", inf.reason);

	/* Mapped by a running process. */
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(go[1]);
		if (!dlopen(hal, RTLD_NOW | RTLD_LOCAL))
			_exit(3);
		/* Mapped (the test reads our maps); holds it until EOF. */
		if (read(go[0], &c, 1) < 0)
			_exit(5);
		_exit(0);
	}
	close(go[0]);
	/* Synchronise on the mapping itself. */
	for (status = 0; status < 2000; status++) {
		char maps[64], line[PATH_MAX + 128];
		bool mapped = false;
		FILE *f;

		snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
		f = fopen(maps, "re");
		ASSERT_NE(NULL, f);
		while (!mapped && fgets(line, sizeof(line), f))
			mapped = strstr(line, "/libascend_hal.so") != NULL;
		fclose(f);
		if (mapped)
			break;
		usleep(5000);
	}
	ASSERT_EQ(0, hal_load(NULL, &inf));
	EXPECT_LE(1, inf.nhal);
	EXPECT_STREQ(real, inf.hal[0].path);
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));

	/* In $LD_LIBRARY_PATH. */
	snprintf(dir, sizeof(dir), "/nonexistent:%s", real);
	*strrchr(dir, '/') = 0;
	setenv("LD_LIBRARY_PATH", dir, 1);
	ASSERT_EQ(0, hal_load(NULL, &inf));
	EXPECT_LE(1, inf.nhal);
	EXPECT_STREQ(real, inf.hal[0].path);
	if (old)
		setenv("LD_LIBRARY_PATH", old, 1);
	else
		unsetenv("LD_LIBRARY_PATH");
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
}

/* --btf FILE that is not there, or not a kernel's BTF. */
TEST(btf_file_errors)
{
	/* A valid BTF with one type, int: not a kernel's. */
	static const unsigned char int_only[] = {
		0x9f, 0xeb, 1, 0, 24, 0, 0, 0,	/* magic, version, flags, hdr_len */
		0, 0, 0, 0, 16, 0, 0, 0,	/* type_off, type_len */
		16, 0, 0, 0, 5, 0, 0, 0,	/* str_off, str_len */
		1, 0, 0, 0, 0, 0, 0, 1,		/* "int", BTF_KIND_INT */
		4, 0, 0, 0, 32, 0, 0, 0,	/* size 4, 32 bits */
		0, 'i', 'n', 't', 0,
	};
	char path[64];
	int fd;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	snprintf(path, sizeof(path), "/tmp/steptime_btf_int_%d", getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(sizeof(int_only), write(fd, int_only, sizeof(int_only)));
	close(fd);
	EXPECT_EQ(-ENOENT, _load_btf(TEST_DEV, 0, NULL, PIN_DIR, "/nonexistent/btf"));
	EXPECT_EQ(-EINVAL, _load_btf(TEST_DEV, 0, NULL, PIN_DIR, "/proc/version"));
	EXPECT_EQ(-EINVAL, _load_btf(TEST_DEV, 0, NULL, PIN_DIR, path));
	EXPECT_EQ(-ENOENT, steptime__unload(PIN_DIR)) TH_LOG("a failed load left pins");
	/* The kernel's own BTF, as a file: same as without --btf. */
	EXPECT_EQ(0, _load_btf(TEST_DEV, 0, NULL, PIN_DIR, "/sys/kernel/btf/vmlinux"));
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
	unlink(path);
}

/* ---------------------------------------------------------------------- */
/* The steptime command (STEPTIME_CLI, else the build tree's)             */
/* ---------------------------------------------------------------------- */

#define CLI	"${STEPTIME_CLI:-${O:-build}/steptime}"
/* What the CLI needs to load on TEST_DEV, which says neither. */
#define CLI_DEV	"--device " TEST_DEV " --freq 100000000 --stars 1"

/*
 * Run the shell command line @fmt (stderr with stdout, into @out).
 * Return: its exit status, -1 when it did not exit.
 */
__attribute__((format(printf, 3, 4)))
static int cli(char *out, size_t len, const char *fmt, ...)
{
	char cmd[1024], rest[4096];
	size_t n = 0, got;
	va_list ap;
	FILE *f;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd) - 8, fmt, ap);
	va_end(ap);
	strcat(cmd, " 2>&1");
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while ((got = fread(n < len - 1 ? out + n : rest, 1,
			    n < len - 1 ? len - 1 - n : sizeof(rest), f)) > 0)
		n += n < len - 1 ? got : 0;	/* the rest read, not kept */
	out[n] = '\0';
	st = pclose(f);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Lines of @s. */
static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/*
 * $STEPTIME_PIN_DIR is where every command looks, load and unload
 * included, and --pin overrides it.
 */
TEST(cli_pin_env)
{
	static const char *const readers[] = {
		"status", "stat", "export --once", "trace --output /dev/null",
		"top -n 1", "record --duration 1s --output /dev/null",
	};
	char out[8192];
	struct stat st;
	size_t i;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, cli(out, sizeof(out), "STEPTIME_PIN_DIR=%s " CLI " load "
			 CLI_DEV " --mode 0640", PIN_DIR)) TH_LOG("%s", out);
	ASSERT_EQ(0, stat(PIN_DIR "/steps", &st));
	EXPECT_EQ(0640, st.st_mode & 0777);	/* --mode, parsed as octal */
	for (i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
		const char *r = readers[i];

		EXPECT_EQ(0, cli(out, sizeof(out), "STEPTIME_PIN_DIR=%s " CLI
				 " %s", PIN_DIR, r)) TH_LOG("%s: %s", r, out);
	}
	EXPECT_EQ(0, cli(out, sizeof(out), "STEPTIME_PIN_DIR=%s " CLI
			 " export --once", PIN_DIR));
	EXPECT_NE(NULL, strstr(out, "steptime_loaded 1")) TH_LOG("%s", out);
	/* --pin wins over the environment. */
	EXPECT_EQ(0, cli(out, sizeof(out), "STEPTIME_PIN_DIR=/sys/fs/bpf/steptime_none "
			 CLI " status --pin %s", PIN_DIR)) TH_LOG("%s", out);
	/* Not loaded where the environment says: that place is named. */
	EXPECT_EQ(1, cli(out, sizeof(out), "STEPTIME_PIN_DIR=/sys/fs/bpf/steptime_none "
			 CLI " status"));
	EXPECT_NE(NULL, strstr(out, "/sys/fs/bpf/steptime_none")) TH_LOG("%s", out);
	EXPECT_EQ(1, lines(out)) TH_LOG("%s", out);
	EXPECT_EQ(1, cli(out, sizeof(out), "STEPTIME_PIN_DIR=/sys/fs/bpf/steptime_none "
			 CLI " export --once"));
	EXPECT_NE(NULL, strstr(out, "steptime_loaded 0")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "/sys/fs/bpf/steptime_none")) TH_LOG("%s", out);
	EXPECT_EQ(0, cli(out, sizeof(out), "STEPTIME_PIN_DIR=%s " CLI " unload",
			 PIN_DIR)) TH_LOG("%s", out);
	EXPECT_EQ(-1, access(PIN_DIR, F_OK));
}

/*
 * Bad command lines, one per option that takes a value and per kind of
 * mistake: one line saying what is wrong (getopt's own included, named
 * "steptime CMD"), one pointing at --help, exit 2, nothing loaded. None
 * needs root: they fail before anything is touched.
 */
TEST(cli_bad_usage)
{
	static const struct { const char *cmd, *args, *says; } bad[] = {
		{ "load", "--mode 999", "--mode: '999' is not an octal mode up to 0777" },
		{ "load", "--mode abc", "not an octal mode" },
		{ "load", "--mode 0o660", "not an octal mode" },
		{ "load", "--mode 1000000", "not an octal mode" },
		{ "load", "--mode -1", "not an octal mode" },
		{ "load", "--mode ''", "not an octal mode" },
		{ "load", "--mode ' 644'", "not an octal mode" },
		{ "load", "--freq 0", "--freq: '0'" },
		{ "load", "--freq 1e6", "--freq: '1e6'" },
		{ "load", "--freq -5", "--freq" },
		{ "load", "--freq 99999999999999999999", "--freq" },
		{ "load", "--freq 10000000001",
		  "--freq: '10000000001' is not a whole number from 1 to 10000000000" },
		{ "load", "--freq 18446744073709551615", "--freq" },
		{ "load", "--stars 3", "--stars: '3'" },
		{ "load", "--stars 1x", "--stars" },
		{ "load", "--attach nope", "--attach: 'nope'" },
		{ "load", "--profile bogus", "--profile: 'bogus'" },
		{ "load", "--hal a:b", "--hal: 'a:b' has a ':'" },
		{ "load", "--lib a:b", "--lib: 'a:b' has a ':'" },
		{ "load", "--hal", "'--hal' requires an argument" },
		{ "load", "--group no_such_group_x", "--group" },
		{ "load", "--group -1", "--group" },
		{ "load", "--bogus", "unrecognized option '--bogus'" },
		{ "load", "--pin", "'--pin' requires an argument" },
		{ "load", "extra", "unexpected argument 'extra'" },
		{ "unload", "extra", "unexpected argument 'extra'" },
		{ "unload", "--bogus", "unrecognized option" },
		{ "status", "extra", "unexpected argument 'extra'" },
		{ "stat", "-p 0", "--pid: '0'" },
		{ "stat", "-p 12abc", "--pid" },
		{ "stat", "--last -1", "--last" },
		{ "stat", "-o xml", "--format: 'xml'" },
		{ "record", "--count 0", "--count: '0'" },
		{ "record", "--duration 1.5x", "--duration" },
		{ "record", "--pid -3", "--pid" },
		{ "trace", "-p x1", "--pid" },
		{ "trace", "--align sideways", "--align" },
		{ "top", "--interval 0s", "--interval: '0s'" },
		{ "top", "--interval 1e3", "--interval" },
		{ "top", "--interval nan", "--interval" },
		{ "top", "-n 0", "--count" },
		{ "export", "--interval inf", "--interval" },
		{ "export", "--max-procs 0", "--max-procs" },
		{ "export", "--listen 127.0.0.1:99999", "--listen" },
		{ "export", "--listen nonsense", "malformed" },
	};
	char out[4096], head[64], tail[64];
	size_t i;

	steptime__unload(PIN_DIR);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *cmd = bad[i].cmd, *args = bad[i].args;

		EXPECT_EQ(2, cli(out, sizeof(out), CLI " %s --pin %s %s", cmd,
				 PIN_DIR, args)) TH_LOG("%s %s: %s", cmd, args, out);
		snprintf(head, sizeof(head), "steptime %s: ", cmd);
		snprintf(tail, sizeof(tail), "\nTry 'steptime %s --help'.\n", cmd);
		EXPECT_EQ(0, strncmp(out, head, strlen(head)))
			TH_LOG("%s %s: %s", cmd, args, out);
		EXPECT_NE(NULL, strstr(out, bad[i].says))
			TH_LOG("%s %s: %s", cmd, args, out);
		EXPECT_EQ(2, lines(out)) TH_LOG("%s %s: %s", cmd, args, out);
		EXPECT_TRUE(strlen(out) > strlen(tail) &&
			    !strcmp(out + strlen(out) - strlen(tail), tail))
			TH_LOG("%s %s: %s", cmd, args, out);
		EXPECT_EQ(-1, access(PIN_DIR, F_OK)) TH_LOG("%s %s left %s",
							   cmd, args, PIN_DIR);
	}
}

/* The line @out (one line) says @what, and @pin is not there. */
static void one_line_error(struct __test_metadata *_metadata, const char *out,
			   const char *what, const char *pin)
{
	EXPECT_EQ(1, lines(out)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, what)) TH_LOG("%s", out);
	EXPECT_EQ(-1, access(pin, F_OK)) TH_LOG("a failed load left %s", pin);
}

/*
 * A load that fails says why in one line, with no second errno that can
 * contradict it, exits 1 and leaves nothing.
 */
TEST(cli_load_errors)
{
	char out[4096];

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	steptime__unload(PIN_DIR);
	EXPECT_EQ(1, cli(out, sizeof(out), CLI " load --pin %s --device /dev/no_such_npu "
			 "--freq 1000000 --stars 1", PIN_DIR));
	one_line_error(_metadata, out, "/dev/no_such_npu: No such file", PIN_DIR);
	/* Not "not on a bpffs mount": the parent is missing. */
	EXPECT_EQ(1, cli(out, sizeof(out), CLI " load --pin %s/a/b " CLI_DEV, PIN_DIR));
	one_line_error(_metadata, out, "its parent directory " PIN_DIR "/a: No such file",
		       PIN_DIR);
	EXPECT_EQ(1, cli(out, sizeof(out), CLI " load --pin /tmp/steptime_not_bpffs "
			 CLI_DEV));
	one_line_error(_metadata, out, "not on a bpffs mount", "/tmp/steptime_not_bpffs");
	/* No device named, and neither default there: both named. */
	if (access("/dev/davinci_manager", F_OK) &&
	    access("/dev/" NPUSIM_DEV_NAME, F_OK)) {
		EXPECT_EQ(1, cli(out, sizeof(out), CLI " load --pin %s --freq 1000000 "
				 "--stars 1", PIN_DIR));
		one_line_error(_metadata, out, "neither /dev/davinci_manager (Ascend driver) nor /dev/"
			       NPUSIM_DEV_NAME " (npusim) exists; name the device with --device",
			       PIN_DIR);
	}
	/* Not root: said first, not as a missing tracefs or a cut reason. */
	if (!system("command -v setpriv >/dev/null")) {
		EXPECT_EQ(1, cli(out, sizeof(out), "setpriv --reuid 65534 --regid 65534 "
				 "--clear-groups " CLI " load --pin %s " CLI_DEV, PIN_DIR));
		one_line_error(_metadata, out, "steptime: must be run as root (", PIN_DIR);
	}
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/*
 * `load` again is idempotent: with the settings loaded it exits 0 saying
 * so, with others it exits 3 naming each difference in one line, and
 * leaves the load as it was either way.
 */
TEST(cli_load_again)
{
	static const struct {
		const char *opts;	/* besides --pin */
		const char *diff;	/* what the message names */
	} other[] = {
		{ "--device /dev/zero --freq 100000000 --stars 1",
		  "--device: loaded on " TEST_DEV ", not /dev/zero" },
		{ CLI_DEV " --freq 50000000",
		  "--freq: counter at 100000000 Hz, not 50000000" },
		{ CLI_DEV " --stars 2", "--stars: STARS v1, not v2" },
		{ CLI_DEV " --mode 0644",
		  "--mode: the maps' mode is 0640, not 0644" },
		{ CLI_DEV " --group 1", "--group: the maps' group is 0, not 1" },
		{ CLI_DEV " --attach tracepoint",
		  "--attach: attach mode tp_btf, not tracepoint" },
		{ CLI_DEV " --profile npusim",
		  "--profile: profile generic, not npusim" },
		{ CLI_DEV " --hal /bin/true",
		  "--hal /bin/true: not the libascend_hal.so files probed" },
		{ CLI_DEV " --lib /bin/true",
		  "--lib /bin/true: not the libsteptime files probed" },
		{ CLI_DEV " --journal", "--journal: the HAL's sends " },
	};
	struct steptime_info before, after;
	char out[4096], *p;
	size_t i;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, cli(out, sizeof(out), CLI " load --pin %s " CLI_DEV
			 " --attach tp_btf --mode 0640", PIN_DIR))
		TH_LOG("%s", out);
	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &before));
	/* The same, as given, and with every setting left to the load. */
	EXPECT_EQ(0, cli(out, sizeof(out), CLI " load --pin %s " CLI_DEV
			 " --attach tp_btf --mode 0640", PIN_DIR));
	EXPECT_TRUE(starts(out, "steptime: already loaded at " PIN_DIR
			   " with these settings\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "loaded on " TEST_DEV ", attach mode tp_btf"))
		TH_LOG("%s", out);
	EXPECT_EQ(0, cli(out, sizeof(out), CLI " load --pin %s", PIN_DIR));
	EXPECT_TRUE(starts(out, "steptime: already loaded at " PIN_DIR
			   " with these settings\n")) TH_LOG("%s", out);
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		EXPECT_EQ(3, cli(out, sizeof(out), CLI " load --pin %s %s",
				 PIN_DIR, other[i].opts)) TH_LOG("%s", out);
		EXPECT_EQ(1, lines(out)) TH_LOG("%s", out);
		EXPECT_TRUE(starts(out, "steptime: already loaded at " PIN_DIR
				   " with other settings: ")) TH_LOG("%s", out);
		p = strstr(out, other[i].diff);
		EXPECT_NE(NULL, p) TH_LOG("%s: %s", other[i].diff, out);
		/* That difference alone. */
		EXPECT_EQ(NULL, strchr(out, ';')) TH_LOG("%s", out);
	}
	/* Several at once: each named. */
	EXPECT_EQ(3, cli(out, sizeof(out), CLI " load --pin %s " CLI_DEV
			 " --freq 5 --stars 2", PIN_DIR));
	EXPECT_NE(NULL, strstr(out, "not 5; --stars: STARS v1, not v2 (steptime unload first)"))
		TH_LOG("%s", out);
	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &after));
	EXPECT_EQ(before.loaded_ns, after.loaded_ns);
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
	/* A load that journals: --journal again is its setting. */
	ASSERT_EQ(0, cli(out, sizeof(out), CLI " load --pin %s " CLI_DEV
			 " --journal", PIN_DIR)) TH_LOG("%s", out);
	EXPECT_EQ(0, cli(out, sizeof(out), CLI " load --pin %s " CLI_DEV
			 " --journal", PIN_DIR)) TH_LOG("%s", out);
	EXPECT_TRUE(starts(out, "steptime: already loaded at " PIN_DIR
			   " with these settings\n")) TH_LOG("%s", out);
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
}

/* Occurrences of @what in @s. */
static int count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s += strlen(what))
		n++;
	return n;
}

/*
 * Loads started together with the same settings (a node's unit and an init
 * container at boot): one loads, the others, past the check for a load
 * before theirs, lose the race to publish it and find it has their
 * settings: each exits 0.
 */
TEST(cli_load_race)
{
	char out[8192];

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	steptime__unload(PIN_DIR);
	EXPECT_EQ(0, cli(out, sizeof(out), "{ for i in 1 2 3; do (" CLI " load --pin %s "
			 CLI_DEV "; echo rc=$?) & done; wait; }", PIN_DIR));
	EXPECT_EQ(3, count(out, "rc=0\n")) TH_LOG("%s", out);
	EXPECT_EQ(2, count(out, "steptime: already loaded at " PIN_DIR
			   " with these settings\n")) TH_LOG("%s", out);
	EXPECT_EQ(3, count(out, "steptime: loaded on " TEST_DEV)) TH_LOG("%s", out);
	EXPECT_EQ(0, count(out, "unload first")) TH_LOG("%s", out);
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
}

/* Finish steps @from to @to - 1 of this process (consumed at the ioctl). */
static void finish_steps(int fd, __u64 from, __u64 to)
{
	for (; from < to; from++) {
		steptime__mark(from, STEPTIME_TAG_START, NULL);
		steptime__mark(from, STEPTIME_TAG_END, NULL);
		trs_ioctl(fd, TRS_IOC_SQCQ_RECV);
	}
}

/* JSON lines of @path with "index_id": at least @min (-1: a line below). */
static int record_lines(const char *path, __u64 min)
{
	char line[8192], *p;
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "\"index_id\": ");
		if (!p || strtoull(p + 12, NULL, 10) < min) {
			n = -1;
			break;
		}
		n++;
	}
	fclose(f);
	return n;
}

/*
 * `record` streams the steps that finish after it starts: those queued
 * in the ring buffer before are consumed unprinted and counted, or
 * printed first with --backlog. Without write access to the ring buffer
 * (--mode grants read access only) it says that root is needed, not a
 * --mode that the maps already have.
 */
TEST(cli_record)
{
	char out[4096], file[64], cmd[256];
	pid_t pid, waited = 0;
	int fd, status;
	__u64 id;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	snprintf(file, sizeof(file), "/tmp/steptime_record_%d", getpid());
	steptime__unload(PIN_DIR);
	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	ASSERT_EQ(0, cli(out, sizeof(out), CLI " load " CLI_DEV " --mode 0644"))
		TH_LOG("%s", out);
	fd = open(TEST_DEV, O_RDWR);
	ASSERT_LE(0, fd);

	/* A backlog of 3: skipped and counted. */
	finish_steps(fd, 1, 4);
	EXPECT_EQ(0, cli(out, sizeof(out), CLI " record --duration 1s --output %s", file))
		TH_LOG("%s", out);
	EXPECT_EQ(0, record_lines(file, 0));
	EXPECT_NE(NULL, strstr(out, "0 steps (and 3 queued before the start, skipped"))
		TH_LOG("%s", out);
	/* --backlog: printed, in order, --count respected. */
	finish_steps(fd, 10, 13);
	EXPECT_EQ(0, cli(out, sizeof(out), CLI " record --backlog --count 2 "
			 "--duration 10s --output %s", file)) TH_LOG("%s", out);
	EXPECT_EQ(2, record_lines(file, 10));
	/* The next record skips what is left: the third. */
	EXPECT_EQ(0, cli(out, sizeof(out), CLI " record --duration 1s --output %s", file));
	EXPECT_NE(NULL, strstr(out, "and 1 queued")) TH_LOG("%s", out);

	/* Live: steps finishing while it runs are printed, the old ones not. */
	finish_steps(fd, 20, 23);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		snprintf(cmd, sizeof(cmd), CLI " record --count 3 --duration 60s "
			 "--output %s 2>/dev/null", file);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	/* A step every 20 ms until it has its 3 (at most 60 s). */
	for (id = 100; !waited; id++) {
		finish_steps(fd, id, id + 1);
		usleep(20000);
		waited = waitpid(pid, &status, WNOHANG);
	}
	ASSERT_EQ(pid, waited);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(3, record_lines(file, 100));

	/* Not root, maps 0644: stat reads, record says why it cannot. */
	if (!system("command -v setpriv >/dev/null")) {
		EXPECT_EQ(0, cli(out, sizeof(out), "setpriv --reuid 65534 --regid 65534 "
				 "--clear-groups " CLI " stat -o csv >/dev/null"))
			TH_LOG("%s", out);
		EXPECT_EQ(1, cli(out, sizeof(out), "setpriv --reuid 65534 --regid 65534 "
				 "--clear-groups " CLI " record --duration 1s"));
		EXPECT_EQ(1, lines(out)) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "run as root")) TH_LOG("%s", out);
		EXPECT_EQ(NULL, strstr(out, "--mode 0644")) TH_LOG("%s", out);
	}
	close(fd);
	unlink(file);
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
}

/*
 * Every test here needs root. As anyone else they all SKIP, and a run that
 * tested nothing must not pass: the harness exits through exit(), and this
 * runs last (its children leave with _exit()).
 */
static void fail_if_nothing_tested(void)
{
	if (ksft_cnt.ksft_pass + ksft_cnt.ksft_fail + ksft_cnt.ksft_xfail == 0) {
		printf("# nothing was tested (loading BPF needs root): failing the run\n");
		fflush(stdout);
		_exit(KSFT_FAIL);
	}
}

int main(int argc, char **argv)
{
	if (ksft_filter(argc, argv))
		return KSFT_FAIL;
	atexit(fail_if_nothing_tested);
	return test_harness_run(argc, argv);
}
