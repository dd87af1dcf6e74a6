// SPDX-License-Identifier: GPL-2.0
/*
 * steptime's loader on the host kernel: what it attaches and why, every
 * error a user can hit, and the device filter and mark consumption of the
 * BPF program in the modes this kernel allows (a real char device,
 * /dev/full, stands in for the driver: the TRS commands fail on it, which
 * the program sees and counts).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <steptime/steptime.h>
#include <ascend_trs.h>

#include "kselftest_harness.h"

#define PIN_DIR	"/sys/fs/bpf/steptime_loadertest"
/* Not /dev/null: make bench drives that one, and counters are global. */
#define TEST_DEV	"/dev/full"

static int _load(const char *device, int mode, const char *profile,
		 const char *pin_dir)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o),
		.device = device,
		.attach_mode = mode,
		.profile = profile,
		.pin_dir = pin_dir,
		.map_gid = -1,
	};

	return steptime__load(&o);
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
TEST_F(host, info)
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

/* Matched: TRS commands on the device. Filtered out: everything else. */
TEST_F(host, device_filter)
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
TEST_F(host, marks_consumed)
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

/* More marks than the ring holds between two ioctls: counted as lost. */
TEST_F(host, marks_lost_counted)
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
TEST_F(host, exit_frees)
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

TEST_F(host, load_twice)
{
	EXPECT_EQ(-EEXIST, _load(TEST_DEV, variant->mode, NULL, PIN_DIR));
	/* ... and the first load is intact. */
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
	EXPECT_EQ(-ENOENT, steptime__unload(PIN_DIR));
}

/* Errors a user can hit, each clear and leaving nothing behind. */
TEST(errors)
{
	struct steptime_load_opts small = { .sz = 4 };
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
	EXPECT_EQ(-EINVAL, steptime__load(&small));
	/*
	 * The driver's functions are not in this kernel: said, not hidden
	 * (not npusim's: the VM runs this test with npusim loaded).
	 */
	load_err(_metadata, -EOPNOTSUPP, TEST_DEV, STEPTIME_ATTACH_FENTRY,
		 "ascend", PIN_DIR);
	load_err(_metadata, -EOPNOTSUPP, TEST_DEV, STEPTIME_ATTACH_KPROBE,
		 "ascend", PIN_DIR);
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
	*rc = _load(TEST_DEV, 0, NULL, "/sys/fs/bpf/steptime_mnt") ? 1 :
	      steptime__unload("/sys/fs/bpf/steptime_mnt") ? 2 : 0;
}

static void no_tracefs(int *rc)
{
	umount2("/sys/kernel/tracing", MNT_DETACH);
	*rc = _load(TEST_DEV, STEPTIME_ATTACH_TRACEPOINT, NULL,
		    "/sys/fs/bpf/steptime_mnt") ? 1 :
	      steptime__unload("/sys/fs/bpf/steptime_mnt") ? 2 : 0;
}

static void no_btf(int *rc)
{
	/* A kernel without BTF: hide /sys/kernel/btf. */
	if (mount("tmpfs", "/sys/kernel/btf", "tmpfs", 0, NULL)) {
		*rc = 4;
		return;
	}
	*rc = _load(TEST_DEV, 0, NULL, "/sys/fs/bpf/steptime_mnt") ==
	      -EOPNOTSUPP ? 0 : 1;
}

TEST(missing_mounts)
{
	if (!can_bpf())
		SKIP(return, "mount namespaces and BPF need root");
	EXPECT_EQ(0, in_mount_ns(no_bpffs)) TH_LOG("bpffs not mounted");
	EXPECT_EQ(0, in_mount_ns(no_tracefs)) TH_LOG("tracefs not mounted");
	EXPECT_EQ(0, in_mount_ns(no_btf)) TH_LOG("no BTF");
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
	atexit(fail_if_nothing_tested);
	return test_harness_run(argc, argv);
}
