// SPDX-License-Identifier: GPL-2.0
/*
 * Tenant isolation of marks (issue 9, "Done when"): a group member that
 * may mark tries every attack round 1's shared marks map allowed against a
 * victim of another user running 3 steps of 2, 4 and 6 tasks, and the
 * victim's steps come out exactly right in `steptime stat -o json`.
 *
 * The attacks, and why each now fails or stays the attacker's own:
 *   - map `marks` read-write, or write its header (break everyone): the
 *     pin is read-only for the group, the map is only a header;
 *   - write the victim's marks (forge, hijack): they are in the victim's
 *     memory (/proc/PID/mem and process_vm_writev are refused);
 *   - register a ring that claims the victim's identity: rejected by the
 *     BPF program, which checks it against the caller as the kernel sees it;
 *   - registrations pointing at garbage: rejected, counted;
 *   - marks carrying the victim's index ids: steps are keyed by the
 *     marking process (kernel tgid), so they are the attacker's steps;
 *   - mint index ids (evict): a process can hold STEPTIME_PROC_STEPS
 *     records, and recycles only its own;
 *   - many processes, each registering (block): each has its own ring;
 *   - ring overrun: the attacker's marks_lost, nobody else's;
 *   - write the steps map: read-only for the group.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <bpf/bpf.h>

#include <steptime/loader.h>
#include <steptime/steptime.h>
#include <npusim/hal.h>

#include "kselftest_harness.h"
#include "ksft_filter.h"
#include "st_run.h"

#define PIN_DIR		"/sys/fs/bpf/steptime_attack"
#define GROUP		100		/* "users": the marking group */
#define VICTIM_UID	2001
#define ATTACKER_UID	2002
#define TASK_NS		20000
#define MINIONS		32		/* attacker's processes */

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int become(uid_t uid)
{
	gid_t g = GROUP;

	if (setgroups(1, &g) || setresgid(GROUP, GROUP, GROUP) ||
	    setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

static void fill_tasks(struct trs_sqe *sqe, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct npu_task_desc d = {
			.type = TRS_SQE_FFTS,
			.duration_ns = TASK_NS,
			.wr_cqe = i == n - 1,
		};

		npu_sqe_task(&sqe[i], &d);
	}
}

/* What the victim saw of its own marks: the windows around each. */
struct victim_log {
	__u64 index[3];
	__u64 start[3][2], end[3][2];
	int err;
};

/*
 * The victim: 3 steps of 2, 4 and 6 tasks, host marks, as another user
 * than the attacker. Waits for @go before starting.
 */
static void victim(int go, int out)
{
	static const int n[3] = { 2, 4, 6 };
	struct victim_log log = {};
	struct npu_dev *d = npu_dev_open(NULL);
	struct npu_stream *s = d ? npu_stream_create(d, NULL) : NULL;
	struct trs_sqe sqe[8];
	char c;
	int i;

	if (!s || become(VICTIM_UID) || read(go, &c, 1) != 1)
		_exit(2);
	for (i = 0; i < 3 && !log.err; i++) {
		struct steptime_step *st = steptime_step__new();

		log.index[i] = steptime_step__index_id(st);
		fill_tasks(sqe, n[i]);
		log.start[i][0] = now_ns();
		log.err = steptime_step__mark(st, STEPTIME_TAG_START, NULL);
		log.start[i][1] = now_ns();
		if (!log.err)
			log.err = npu_stream_submit(s, sqe, n[i]) < 0 ? -EIO : 0;
		log.end[i][0] = now_ns();
		if (!log.err)
			log.err = steptime_step__mark(st, STEPTIME_TAG_END, NULL);
		log.end[i][1] = now_ns();
		if (!log.err)
			log.err = npu_stream_sync(s, 10000);
		steptime_step__free(st);
	}
	if (write(out, &log, sizeof(log)) != sizeof(log))
		_exit(3);
	_exit(log.err ? 1 : 0);
}

/* Bit per attack that failed to fail. */
enum {
	A_MARKS_RW	= 1 << 0,
	A_MARKS_MMAP_W	= 1 << 1,
	A_MARKS_UPDATE	= 1 << 2,
	A_STEPS_RW	= 1 << 3,
	A_PROC_MEM	= 1 << 4,
	A_VM_WRITEV	= 1 << 5,
	A_SETUP		= 1 << 6,
};

/* A ring claiming to be @pid's, registered by this process. */
static struct steptime_ring fake __attribute__((aligned(64)));

static void attacker_minion(int fd, int stop, int stop_w)
{
	char c;

	close(stop_w);	/* EOF on @stop once the test closes its end */
	steptime__mark(1, STEPTIME_TAG_START, NULL);
	ioctl(fd, STEPTIME_IOC_RING, 0);
	/* Stay registered while the victim runs. */
	if (read(stop, &c, 1) < 0)
		_exit(1);
	_exit(0);
}

/*
 * The attacker: a group member with the device open. Every attack, then
 * (after @ready) minting index ids until @stop is readable.
 */
static void attacker(pid_t vpid, int ready, int stop, int minion_stop,
		     int minion_stop_w)
{
	LIBBPF_OPTS(bpf_obj_get_opts, rw, .file_flags = 0);
	LIBBPF_OPTS(bpf_obj_get_opts, ro, .file_flags = BPF_F_RDONLY);
	struct npu_dev *d = npu_dev_open(NULL);
	struct steptime_step_key k = { .tgid = vpid, .index_id = 1 };
	struct steptime_marks_hdr h = {};
	unsigned int failed = 0;
	char path[256], c, buf[64] = { 0 };
	struct iovec local = { buf, sizeof(buf) }, remote;
	struct stat st;
	__u32 zero = 0;
	__u64 i;
	void *m;
	int fd, dev, err;

	if (!d || become(ATTACKER_UID))
		_exit(100);
	dev = npu_dev_fd(d);
	/* Header: no writable open, no writable mapping, no update. */
	snprintf(path, sizeof(path), "%s/marks", PIN_DIR);
	if (bpf_obj_get_opts(path, &rw) >= 0)
		failed |= A_MARKS_RW;
	fd = bpf_obj_get_opts(path, &ro);
	if (fd < 0)
		failed |= A_SETUP;	/* a group member must read it */
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m != MAP_FAILED)
		failed |= A_MARKS_MMAP_W;
	if (!bpf_map_update_elem(fd, &zero, &h, BPF_ANY))
		failed |= A_MARKS_UPDATE;
	close(fd);
	/*
	 * Steps: read-only. The writable open itself is refused (a delete
	 * through it could fail for want of the key alone: ENOENT says
	 * nothing about the pin's mode).
	 */
	snprintf(path, sizeof(path), "%s/steps", PIN_DIR);
	fd = bpf_obj_get_opts(path, &rw);
	if (fd >= 0) {
		failed |= A_STEPS_RW;
		bpf_map_delete_elem(fd, &k);
		close(fd);
	}
	/* The victim's memory. */
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)vpid);
	fd = open(path, O_RDWR);
	if (fd >= 0) {
		failed |= A_PROC_MEM;
		close(fd);
	}
	remote.iov_base = (void *)&fake;	/* same binary: a likely spot */
	remote.iov_len = sizeof(buf);
	if (process_vm_writev(vpid, &local, 1, &remote, 1, 0) >= 0)
		failed |= A_VM_WRITEV;
	/* Registrations: the victim's identity, garbage, a kernel address. */
	stat("/proc/self/ns/pid", &st);
	fake.magic = STEPTIME_RING_MAGIC;
	fake.version = STEPTIME_ABI_VERSION;
	fake.pidns_ino = (__u32)st.st_ino;
	fake.ns_tgid = (__u32)vpid;
	for (i = 0; i < STEPTIME_MARK_RING; i++) {
		fake.ring[i].seq = i + 1;
		fake.ring[i].index_id = 1 + i % 3;
		fake.ring[i].tag = i & 1;
		fake.ring[i].stream = STEPTIME_STREAM_NONE;
	}
	fake.head = STEPTIME_MARK_RING;
	ioctl(dev, STEPTIME_IOC_RING, &fake);
	ioctl(dev, STEPTIME_IOC_RING, 1);
	ioctl(dev, STEPTIME_IOC_RING, 0xffffffff81000000ull);
	/* Its own ring, with the victim's index ids. */
	for (i = 1; i <= 3; i++) {
		err = steptime__mark(i, STEPTIME_TAG_START, NULL);
		err |= steptime__mark(i, STEPTIME_TAG_END, NULL);
		if (err)
			failed |= A_SETUP;
	}
	/* Overrun its own ring. */
	for (i = 0; i < 4 * STEPTIME_MARK_RING; i++)
		steptime__mark(1000 + i, i & 1, NULL);
	ioctl(dev, STEPTIME_IOC_RING, 0);
	/*
	 * Mint past its own record cap before the victim starts, so that
	 * recycling happens whatever the scheduler lets run alongside it.
	 */
	for (i = 0; i <= STEPTIME_PROC_STEPS; i++) {
		steptime__mark(2000 + i, STEPTIME_TAG_START, NULL);
		steptime__mark(2000 + i, STEPTIME_TAG_END, NULL);
		if (i % 4 == 3)
			ioctl(dev, STEPTIME_IOC_RING, 0);
	}
	ioctl(dev, STEPTIME_IOC_RING, 0);
	/* Many processes, each with a ring. */
	for (i = 0; i < MINIONS; i++)
		if (fork() == 0)
			attacker_minion(dev, minion_stop, minion_stop_w);
	if (write(ready, &failed, sizeof(failed)) != sizeof(failed))
		_exit(101);
	/* Mint index ids until the victim is done. */
	fcntl(stop, F_SETFL, O_NONBLOCK);
	for (i = 0; read(stop, &c, 1) != 1; i++) {
		steptime__mark(1000000 + i, STEPTIME_TAG_START, NULL);
		steptime__mark(1000000 + i, STEPTIME_TAG_END, NULL);
		if (i % 4 == 3)
			ioctl(dev, STEPTIME_IOC_RING, 0);
	}
	_exit(0);
}

/* The steptime command next to this test: build/selftests/vm/.. /.. */
static void cli_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *p;

	exe[n > 0 ? n : 0] = '\0';
	p = strstr(exe, "/selftests/vm/");
	if (p)
		*p = '\0';
	snprintf(buf, len, "%s/steptime", exe);
}

static struct steptime_counters counters(void)
{
	struct steptime_counters c = {};

	steptime__read_counters(PIN_DIR, &c);
	return c;
}

FIXTURE(atk) {
	int unused;
};

FIXTURE_SETUP(atk)
{
}

FIXTURE_TEARDOWN(atk)
{
	steptime__unload(PIN_DIR);
}

/* Under TCG: loading, 34 processes, a few thousand marks. */
TEST_F_TIMEOUT(atk, attack, 240)
{
	struct steptime_load_opts lo = {
		.sz = sizeof(lo),
		.pin_dir = PIN_DIR,
		.map_mode = 0660,
		.map_gid = GROUP,
		.attach_mode = STEPTIME_ATTACH_TP_BTF,
	};
	int go[2], vout[2], ready[2], stop[2], mstop[2], status, i;
	struct steptime_counters c0, c1;
	struct steptime_step_stats r;
	struct steptime_reader_opts ro = { .sz = sizeof(ro), .pin_dir = PIN_DIR };
	struct steptime_reader *rd;
	struct victim_log log;
	unsigned int failed = ~0u;
	char cli[PATH_MAX + 16], cmd[PATH_MAX + 512], out[8192];
	pid_t vpid, apid;
	static const char expect[] = "1:2:done:2:0 2:4:done:4:0 3:6:done:6:0";

	if (geteuid())
		SKIP(return, "needs root (load, users)");
	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, steptime__load(&lo));
	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	setenv("STEPTIME_QUIET", "1", 1);
	c0 = counters();
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(vout));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(stop));
	ASSERT_EQ(0, pipe(mstop));
	vpid = fork();
	ASSERT_LE(0, vpid);
	if (!vpid) {
		close(mstop[1]);
		victim(go[0], vout[1]);
	}
	apid = fork();
	ASSERT_LE(0, apid);
	if (!apid)
		attacker(vpid, ready[1], stop[0], mstop[0], mstop[1]);
	close(mstop[0]);
	ASSERT_EQ(sizeof(failed), read(ready[0], &failed, sizeof(failed)));
	EXPECT_EQ(0, failed) TH_LOG("attacks that did not fail: %#x", failed);
	/* The attacker keeps minting while the victim runs. */
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(sizeof(log), read(vout[0], &log, sizeof(log)));
	ASSERT_EQ(vpid, waitpid(vpid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("victim: %d", log.err);
	ASSERT_EQ(1, write(stop[1], "s", 1));
	ASSERT_EQ(apid, waitpid(apid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	c1 = counters();
	close(mstop[1]);	/* the minions exit (the attacker's children) */

	/* The victim's steps, as `steptime stat -o json` shows them. */
	cli_path(cli, sizeof(cli));
	snprintf(cmd, sizeof(cmd), "%s stat --pin %s -p %d -o json | python3 -c "
		 "'import json, sys; print(\" \".join(\"%%d:%%d:%%s:%%d:%%d\" %% "
		 "(s[\"index_id\"], s[\"tasks\"], s[\"state\"], s[\"completions\"], "
		 "s[\"errors\"]) for s in json.load(sys.stdin)))'",
		 cli, PIN_DIR, (int)vpid);
	ASSERT_EQ(0, st_run(cmd, out, sizeof(out))) TH_LOG("%s", out);
	out[strcspn(out, "\n")] = '\0';
	EXPECT_STREQ(expect, out);

	/* Each field against the victim's own record of its marks. */
	ro.pid = vpid;
	rd = steptime_reader__open(&ro);
	ASSERT_NE(NULL, rd);
	for (i = 0; steptime_reader__next(rd, &r) == 0; i++) {
		ASSERT_LT(i, 3);
		EXPECT_EQ(log.index[i], r.index_id);
		EXPECT_EQ((__u32)vpid, r.tgid);
		EXPECT_EQ((__u32)vpid, r.ns_tgid);
		EXPECT_LE(log.start[i][0], r.host_start_ns);
		EXPECT_GE(log.start[i][1], r.host_start_ns);
		EXPECT_LE(log.end[i][0], r.host_end_ns);
		EXPECT_GE(log.end[i][1], r.host_end_ns);
		EXPECT_EQ(STEPTIME_STEP_DONE, r.state);
	}
	steptime_reader__free(rd);
	EXPECT_EQ(3, i);
	/* Every attack left a trace in the counters, none a loss of the victim's. */
	EXPECT_LE(3, c1.ring_rejected - c0.ring_rejected);
	EXPECT_LE(1, c1.marks_lost - c0.marks_lost);
	EXPECT_LE(1, c1.steps_recycled - c0.steps_recycled);
	EXPECT_EQ(0, c1.step_map_full - c0.step_map_full);
	EXPECT_EQ(0, c1.proc_map_full - c0.proc_map_full);
	/* The attacker's forged ids are its own steps. */
	memset(&ro, 0, sizeof(ro));
	ro.sz = sizeof(ro);
	ro.pin_dir = PIN_DIR;
	ro.pid = apid;
	rd = steptime_reader__open(&ro);
	ASSERT_NE(NULL, rd);
	i = 0;
	while (steptime_reader__next(rd, &r) == 0) {
		EXPECT_EQ((__u32)apid, r.tgid);
		i++;
	}
	steptime_reader__free(rd);
	EXPECT_GE(STEPTIME_PROC_STEPS, i);
	steptime__unload(PIN_DIR);
}

TEST_HARNESS_MAIN
