// SPDX-License-Identifier: GPL-2.0
/*
 * `steptime doctor` on the host: bad command lines (exit 2, what is wrong
 * and where help is), not loaded and not permitted (a clear message, the
 * host's part still printed, valid JSON), and a process that marks host
 * steps on a device file (/dev/full stands in: its ioctls are where the
 * program reads the marks): its ring, its figures' verdicts, 80 columns.
 * Root refused bpf() by a seccomp filter (a container's profile) is told
 * so by every command. Loading needs root: those tests SKIP without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <steptime/loader.h>
#include <steptime/steptime.h>

#include "kselftest_harness.h"
#include "ksft_filter.h"

#define PIN_DIR	"/sys/fs/bpf/steptime_doctortest"
#define CLI	"${STEPTIME_CLI:-${O:-build}/steptime}"
#define LOAD	CLI " load --pin " PIN_DIR " --device /dev/full --freq 100000000 --stars 1"

/*
 * Read @f to its end, its first @len - 1 bytes into @out (NUL-terminated):
 * the writer is never left blocked on a full pipe.
 */
static void slurp(FILE *f, char *out, size_t len)
{
	size_t n = fread(out, 1, len - 1, f);

	out[n] = '\0';
	while (fgetc(f) != EOF)
		;
}

/*
 * Run the shell command line @fmt, its stdout (and stderr where it
 * redirects it) into @out. Return: its exit status, -1 when it did not exit.
 */
__attribute__((format(printf, 3, 4)))
static int sh(char *out, size_t len, const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	FILE *f;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	slurp(f, out, len);
	st = pclose(f);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The longest line of @s, in bytes (the output is ASCII). */
static int widest(const char *s)
{
	int w = 0, max = 0;

	for (; *s; s++) {
		w = *s == '\n' ? 0 : w + 1;
		max = w > max ? w : max;
	}
	return max;
}

static bool can_bpf(void)
{
	return geteuid() == 0;
}

static bool have_setpriv(void)
{
	return !system("command -v setpriv >/dev/null");
}

/* A command line that is wrong: exit 2, one line saying what, one for help. */
TEST(bad_usage)
{
	static const struct { const char *args, *says; } bad[] = {
		{ "-p 0", "--pid: '0' is not a whole number" },
		{ "-p 12x", "--pid: '12x'" },
		{ "--pid -4", "--pid" },
		{ "-o xml", "--format: 'xml' is not text or json" },
		{ "-o", "requires an argument" },
		{ "--bogus", "unrecognized option '--bogus'" },
		{ "extra", "unexpected argument 'extra'" },
	};
	static const char tail[] = "\nTry 'steptime doctor --help'.\n";
	char out[4096];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(2, sh(out, sizeof(out), CLI " doctor --pin %s %s 2>&1",
				PIN_DIR, bad[i].args)) TH_LOG("%s: %s", bad[i].args, out);
		EXPECT_EQ(0, strncmp(out, "steptime doctor: ", 17))
			TH_LOG("%s: %s", bad[i].args, out);
		EXPECT_NE(NULL, strstr(out, bad[i].says)) TH_LOG("%s: %s", bad[i].args, out);
		EXPECT_EQ(2, lines(out)) TH_LOG("%s: %s", bad[i].args, out);
		EXPECT_TRUE(strlen(out) > strlen(tail) &&
			    !strcmp(out + strlen(out) - strlen(tail), tail))
			TH_LOG("%s: %s", bad[i].args, out);
	}
}

/* --help names every option; it and the usage lines fit 80 columns. */
TEST(help)
{
	static const char *const opts[] = { "--pid", "--format", "--pin" };
	char out[4096];
	size_t i;

	ASSERT_EQ(0, sh(out, sizeof(out), CLI " doctor --help 2>&1"));
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		EXPECT_NE(NULL, strstr(out, opts[i])) TH_LOG("%s", out);
	EXPECT_LE(widest(out), 80) TH_LOG("%s", out);
	ASSERT_EQ(0, sh(out, sizeof(out), CLI " --help"));
	EXPECT_NE(NULL, strstr(out, "doctor")) TH_LOG("%s", out);
}

/*
 * Not loaded: stderr says so in one line naming the place and the fix;
 * stdout still has the host's part (what a bug report needs), as valid
 * JSON with -o json; exit 1.
 */
TEST(not_loaded)
{
	char out[8192];

	steptime__unload(PIN_DIR);
	EXPECT_EQ(1, sh(out, sizeof(out), CLI " doctor --pin %s 2>&1 >/dev/null",
			PIN_DIR));
	EXPECT_EQ(1, lines(out)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "steptime doctor: steptime is not loaded (nothing pinned under "
			       PIN_DIR "): run `steptime load` first")) TH_LOG("%s", out);
	EXPECT_EQ(1, sh(out, sizeof(out), CLI " doctor --pin %s 2>/dev/null", PIN_DIR));
	EXPECT_NE(NULL, strstr(out, "kernel:")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "loaded:       no")) TH_LOG("%s", out);
	EXPECT_EQ(0, sh(out, sizeof(out), CLI " doctor --pin %s -o json 2>/dev/null | "
			"python3 -c 'import json,sys; d=json.load(sys.stdin); "
			"assert d[\"loaded\"] is False and d[\"kernel\"]' 2>&1", PIN_DIR))
		TH_LOG("%s", out);
}

/*
 * Without root: maps of mode 0600 are a clear permission error; maps a
 * user may read (--mode 0644) give what they can, and the sections that
 * need root say so (the program's SQ map, the programs).
 */
TEST(permission)
{
	char out[16384];

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	if (!have_setpriv())
		SKIP(return, "no setpriv to drop root");
	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, sh(out, sizeof(out), LOAD " 2>&1")) TH_LOG("%s", out);
	EXPECT_EQ(1, sh(out, sizeof(out), "setpriv --reuid 65534 --regid 65534 --clear-groups "
			CLI " doctor --pin %s 2>&1 >/dev/null", PIN_DIR));
	EXPECT_EQ(1, lines(out)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "steptime doctor: permission denied reading the maps under "
			       PIN_DIR)) TH_LOG("%s", out);
	ASSERT_EQ(0, steptime__unload(PIN_DIR));
	ASSERT_EQ(0, sh(out, sizeof(out), LOAD " --mode 0644 2>&1")) TH_LOG("%s", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "setpriv --reuid 65534 --regid 65534 --clear-groups "
			CLI " doctor --pin %s 2>&1", PIN_DIR)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "attach mode:")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "(needs root)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "(the program's SQ map needs root)")) TH_LOG("%s", out);
	EXPECT_LE(widest(out), 80) TH_LOG("%s", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "setpriv --reuid 65534 --regid 65534 --clear-groups "
			CLI " doctor --pin %s -o json | python3 -m json.tool >/dev/null && echo valid",
			PIN_DIR)) TH_LOG("%s", out);
	EXPECT_STREQ("valid\n", out);
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
}

/* In the JSON of @pid's doctor, figure @fig has verdict @v. */
static bool verdict_is(const char *json, const char *fig, const char *v)
{
	char want[128];

	snprintf(want, sizeof(want), "\"%s\": {\"verdict\": \"%s\"", fig, v);
	return strstr(json, want) != NULL;
}

/*
 * This process marks host steps: doctor -p finds its ring registered and
 * read at its ioctls, its step count and host times exact, its device
 * time absent (no stream), its tasks exact (none on any SQ).
 */
TEST(host_marks)
{
	char out[32768];
	__u64 i;
	int fd;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, sh(out, sizeof(out), LOAD " 2>&1")) TH_LOG("%s", out);
	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	fd = open("/dev/full", O_RDWR);
	ASSERT_LE(0, fd);
	for (i = 1; i <= 3; i++) {
		ASSERT_EQ(0, steptime__mark(i, STEPTIME_TAG_START, NULL));
		ASSERT_EQ(0, steptime__mark(i, STEPTIME_TAG_END, NULL));
	}
	/* Read now, at one ioctl on the device (no kick probed here). */
	ASSERT_EQ(0, steptime__flush());
	ASSERT_EQ(0, sh(out, sizeof(out), CLI " doctor --pin %s -p %d -o json",
			PIN_DIR, getpid())) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"registered\": true")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"marks_read\": 6")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"marks_written\": 6")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"kept\": 3")) TH_LOG("%s", out);
	EXPECT_TRUE(verdict_is(out, "steps", "exact")) TH_LOG("%s", out);
	EXPECT_TRUE(verdict_is(out, "host_times", "exact")) TH_LOG("%s", out);
	EXPECT_TRUE(verdict_is(out, "device_time", "absent")) TH_LOG("%s", out);
	EXPECT_TRUE(verdict_is(out, "task_counts", "exact")) TH_LOG("%s", out);
	EXPECT_TRUE(verdict_is(out, "completion_times", "absent")) TH_LOG("%s", out);
	EXPECT_EQ(0, sh(out, sizeof(out), CLI " doctor --pin %s -p %d -o json | "
			"python3 -m json.tool >/dev/null && echo valid", PIN_DIR,
			getpid()));
	EXPECT_STREQ("valid\n", out);
	/* Text: the same verdicts, in 80 columns. */
	ASSERT_EQ(0, sh(out, sizeof(out), CLI " doctor --pin %s -p %d", PIN_DIR,
			getpid())) TH_LOG("%s", out);
	EXPECT_LE(widest(out), 80) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "device time       absent  host marks only"))
		TH_LOG("%s", out);
	/* Every process: this one among them. */
	ASSERT_EQ(0, sh(out, sizeof(out), CLI " doctor --pin %s", PIN_DIR));
	EXPECT_NE(NULL, strstr(out, "\nprocess ")) TH_LOG("%s", out);
	close(fd);
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
}

/* A pid steptime never met: its section says so, nothing else fails. */
TEST(unknown_pid)
{
	char out[16384];

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, sh(out, sizeof(out), LOAD " 2>&1")) TH_LOG("%s", out);
	ASSERT_EQ(0, sh(out, sizeof(out), CLI " doctor --pin %s -p 1 -o json",
			PIN_DIR)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"pid\": 1,")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"registered\": false")) TH_LOG("%s", out);
	EXPECT_TRUE(verdict_is(out, "steps", "absent")) TH_LOG("%s", out);
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
}

__attribute__((destructor)) static void unload_at_exit(void)
{
	if (can_bpf())
		steptime__unload(PIN_DIR);
}

/*
 * Run @cmd as sh(), its bpf() calls refused with @err by a seccomp filter:
 * a container's profile, as root. Return: its exit status, -1 when it did
 * not exit.
 */
static int sh_bpf_refused(char *out, size_t len, int err, const char *cmd)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 1),
		BPF_STMT(BPF_RET | BPF_K,
			 SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(insns), .filter = insns };
	int fd[2], st;
	pid_t pid;
	FILE *f;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	if (f) {
		slurp(f, out, len);
		fclose(f);
	} else {
		close(fd[0]);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !f)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * Root whose bpf() a seccomp profile refuses (a container without
 * CAP_BPF): every command says so, not "run as root"; the exporter ends
 * at once rather than serve "not loaded" for ever.
 */
TEST(bpf_refused)
{
	static const int errs[] = { EPERM, ENOSYS };
	char out[4096], want[256];
	size_t i;

	if (!can_bpf())
		SKIP(return, "loading BPF needs root");
	steptime__unload(PIN_DIR);
	ASSERT_EQ(0, sh(out, sizeof(out), LOAD " 2>&1")) TH_LOG("%s", out);
	for (i = 0; i < ARRAY_SIZE(errs); i++) {
		/* EPERM may come back as EACCES (the library's open). */
		snprintf(want, sizeof(want), "reading the maps under %s: bpf() "
			 "is refused to this process (%s", PIN_DIR,
			 errs[i] == ENOSYS ? strerror(ENOSYS) : "");
		EXPECT_EQ(1, sh_bpf_refused(out, sizeof(out), errs[i],
					    CLI " stat --pin " PIN_DIR));
		EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
		EXPECT_EQ(1, lines(out)) TH_LOG("%s", out);
		EXPECT_EQ(1, sh_bpf_refused(out, sizeof(out), errs[i],
					    "timeout 20 " CLI " export --pin "
					    PIN_DIR " --listen 127.0.0.1:0"));
		EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	}
	EXPECT_EQ(0, steptime__unload(PIN_DIR));
}

TEST_HARNESS_MAIN
