// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Observability tools (host), on maps pinned by the fake_steps fixture
 * (selftests/observe) with known records:
 *   - `steptime export`: 64 live processes that each finished 8192 steps,
 *     the last 16 of each in the map (what steptime keeps: 1024 entries).
 *     The exporter's own CPU time (/proc/PID/schedstat) per poll (it polls
 *     alone at --interval 50ms for a while) and per scrape (render only:
 *     --interval 1h), against a bare walk of the map (get_next_key +
 *     lookup, what any reader of it pays) in the same rounds; the size of a
 *     scrape in both formats;
 *   - `steptime trace` over 100,000 steps (4 processes x 25,000) from a
 *     `steptime record` file (-i) and from a map of 100,000 entries,
 *     against `steptime stat -o json` of that map, in the same rounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <steptime/steptime.h>
#include "bench.h"

#define EXP_PROCS	64
#define EXP_STEPS	8192
#define EXP_KEEP	16	/* STEPTIME_PROC_STEPS */
#define EXP_DIR		BENCH_PIN_DIR "_export"
#define TRACE_PROCS	4
#define TRACE_STEPS	25000
#define TRACE_DIR	BENCH_PIN_DIR "_trace"
#define TRACE_REC	"/tmp/steptime_bench_trace.jsonl"
#define SCRAPES		3

extern char **environ;

static char cli[4096], fake[4096];

static int spawn(char **argv, bool quiet, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	int err;

	posix_spawn_file_actions_init(&fa);
	if (quiet) {
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	}
	err = posix_spawn(pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return -err;
}

/* Run @argv to completion. Return: wall ms, or -1 when it failed. */
static double run_ms(char **argv)
{
	__u64 t0 = bench_now_ns();
	int status;
	pid_t pid;

	if (spawn(argv, true, &pid))
		return -1;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	return (bench_now_ns() - t0) / 1e6;
}

/* fake_steps DIR --entries N --keep K TGID:STEPS... */
static int fixture(const char *dir, unsigned int entries, const pid_t *tgids,
		   int n, int steps, int keep)
{
	char **argv = calloc((size_t)n + 8, sizeof(*argv));
	char ent[16], kp[16], (*spec)[32] = calloc((size_t)n, sizeof(*spec));
	int i, a = 0, err;
	char cmd[4200];

	if (!argv || !spec)
		return -ENOMEM;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return -EIO;
	snprintf(ent, sizeof(ent), "%u", entries);
	argv[a++] = fake;
	argv[a++] = (char *)dir;
	argv[a++] = "--entries";
	argv[a++] = ent;
	snprintf(kp, sizeof(kp), "%d", keep);
	argv[a++] = "--keep";
	argv[a++] = kp;
	for (i = 0; i < n; i++) {
		snprintf(spec[i], sizeof(spec[i]), "%d:%d", tgids[i], steps);
		argv[a++] = spec[i];
	}
	err = run_ms(argv) < 0 ? -EIO : 0;
	free(argv);
	free(spec);
	return err;
}

static double walk_ms(const char *dir)
{
	struct steptime_step_key key, next;
	struct steptime_step_stats v;
	char path[4200];
	void *prev = NULL;
	__u64 t0;
	int fd;

	snprintf(path, sizeof(path), "%s/steps", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	t0 = bench_now_ns();
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		bpf_map_lookup_elem(fd, &key, &v);
	}
	close(fd);
	return (bench_now_ns() - t0) / 1e6;
}

static __u64 cpu_ns(pid_t pid)
{
	char path[64];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* GET /metrics; return the body's size, or -1. */
static long scrape(int port, bool om)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((__u16)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static char buf[1 << 16];
	char req[256];
	long total = 0, hdr = -1;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		 "Accept: %s\r\n\r\n", om ? "application/openmetrics-text; version=1.0.0" :
		 "text/plain; version=0.0.4");
	if (write(fd, req, strlen(req)) < 0) {
		close(fd);
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (hdr < 0) {
			char *e = memmem(buf, (size_t)n, "\r\n\r\n", 4);

			if (e)
				hdr = total + (e - buf) + 4;
		}
		total += n;
	}
	close(fd);
	return hdr < 0 ? -1 : total - hdr;
}

static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    !getsockname(fd, (struct sockaddr *)&sa, &len))
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* The exporter's counter @name from a scrape, or -1. */
static double scrape_value(int port, const char *name)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((__u16)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static char buf[1 << 20];
	const char *req = "GET /metrics HTTP/1.0\r\n\r\n";
	char pat[128], *p;
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(fd, req, strlen(req)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = '\0';
	snprintf(pat, sizeof(pat), "\n%s ", name);
	p = strstr(buf, pat);
	return p ? strtod(p + strlen(pat), NULL) : -1;
}

static pid_t exporter_start(const char *interval, int port)
{
	char listen[64];
	char *argv[] = { cli, "export", "--pin", EXP_DIR, "--listen", listen,
			 "--interval", (char *)interval, NULL };
	pid_t pid;
	int tries;

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	if (spawn(argv, true, &pid))
		return -1;
	for (tries = 0; tries < 600 && scrape(port, false) < 0; tries++)
		usleep(50000);
	return pid;
}

static void exporter_stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

static void export_rows(const struct bench_opts *o)
{
	struct series poll = {}, scr = {}, walk = {}, rpoll = {}, rscr = {};
	pid_t kids[EXP_PROCS], exp;
	char val[64], note[256];
	long text = -1, om = -1;
	double w, polls0, polls1;
	int i, r, port;
	__u64 c0;

	bench_section(o, "steptime export: CPU per poll and per scrape, scrape size",
		      "64 live processes that finished 8192 steps each; the map holds "
		      "the last 16 of each (1024 entries), as steptime keeps them. "
		      "Baseline: a bare get_next_key + lookup walk of the same map.",
		      "vs map walk");
	for (i = 0; i < EXP_PROCS; i++) {
		kids[i] = fork();
		if (!kids[i]) {
			pause();
			_exit(0);
		}
	}
	if (fixture(EXP_DIR, EXP_PROCS * EXP_KEEP, kids, EXP_PROCS, EXP_STEPS,
		    EXP_KEEP)) {
		bench_row_text("exporter", "not run", "fake_steps failed");
		goto out;
	}
	for (r = 0; r < o->rounds; r++) {
		w = walk_ms(EXP_DIR);
		/* Polls alone: --interval 50ms for 1 s, no scrape in between. */
		port = free_port();
		exp = exporter_start("50ms", port);
		polls0 = scrape_value(port, "steptime_exporter_polls_total");
		c0 = cpu_ns(exp);
		usleep(1000000);
		polls1 = scrape_value(port, "steptime_exporter_polls_total");
		if (polls1 > polls0 + 1)
			series_add(&poll, (cpu_ns(exp) - c0) / 1e6 / (polls1 - polls0));
		exporter_stop(exp);
		/* Scrapes alone: --interval 1h, state already polled. */
		port = free_port();
		exp = exporter_start("1h", port);
		c0 = cpu_ns(exp);
		for (i = 0; i < SCRAPES; i++)
			text = scrape(port, false);
		series_add(&scr, (cpu_ns(exp) - c0) / 1e6 / SCRAPES);
		om = scrape(port, true);
		exporter_stop(exp);
		series_add(&walk, w);
		if (poll.n)
			series_add(&rpoll, poll.v[poll.n - 1] / w);
		series_add(&rscr, scr.v[scr.n - 1] / w);
	}
	bench_row("exporter CPU per poll (64 processes, 1024 records)", &poll, "ms",
		  &rpoll, "map read, sort, count, /proc checks");
	bench_row("exporter CPU per scrape (render)", &scr, "ms", &rscr,
		  "text format, state fresh");
	bench_row("bare walk of the map (baseline)", &walk, "ms", NULL, NULL);
	snprintf(val, sizeof(val), "%ld bytes", text);
	snprintf(note, sizeof(note), "%.0f bytes per process; OpenMetrics %ld bytes",
		 (double)text / EXP_PROCS, om);
	bench_row_text("scrape size, text format, 64 processes x 8192 steps", val, note);
	bench_note("Per 15 s scrape interval at the default --interval 250ms: 60 polls "
		   "and one scrape: %.1f ms of CPU (%.2f%% of one CPU).",
		   series_med(&poll) * 60 + series_med(&scr),
		   (series_med(&poll) * 60 + series_med(&scr)) / 150);
out:
	bench_end();
	for (i = 0; i < EXP_PROCS; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	if (system("rm -rf " EXP_DIR))
		return;
}

/* `steptime stat -o json` of TRACE_DIR as `steptime record` lines in @path. */
static int record_file(const char *path)
{
	char cmd[4400];

	snprintf(cmd, sizeof(cmd), "%s stat --pin %s -o json | sed -n 's/^  \\({.*}\\),\\?$/\\1/p' > %s",
		 cli, TRACE_DIR, path);
	return system(cmd) ? -EIO : 0;
}

static void trace_rows(const struct bench_opts *o)
{
	struct series tr = {}, ti = {}, st = {}, ratio = {}, iratio = {};
	pid_t tgids[TRACE_PROCS] = { 4000001, 4000002, 4000003, 4000004 };
	char *targv[] = { cli, "trace", "--pin", TRACE_DIR, "--output", "/dev/null", NULL };
	char *iargv[] = { cli, "trace", "-i", TRACE_REC, "--output", "/dev/null", NULL };
	char *sargv[] = { cli, "stat", "--pin", TRACE_DIR, "-o", "json", NULL };
	double t, i, s;
	int r;

	bench_section(o, "steptime trace over 100,000 steps",
		      "4 processes x 25,000 finished steps, from a map of 100,000 "
		      "entries and from the same steps as a `steptime record` file "
		      "(-i); baseline: `steptime stat -o json` of the map in the same "
		      "round. Whole processes, output to /dev/null.", "vs stat -o json");
	if (fixture(TRACE_DIR, TRACE_PROCS * TRACE_STEPS, tgids, TRACE_PROCS,
		    TRACE_STEPS, 0) || record_file(TRACE_REC)) {
		bench_row_text("trace", "not run", "fake_steps or the record file failed");
		goto out;
	}
	for (r = 0; r < o->rounds; r++) {
		t = run_ms(targv);
		i = run_ms(iargv);
		s = run_ms(sargv);
		if (t < 0 || i < 0 || s < 0) {
			bench_row_text("trace", "not run", "steptime trace or stat failed");
			goto out;
		}
		series_add(&tr, t);
		series_add(&ti, i);
		series_add(&st, s);
		series_add(&ratio, t / s);
		series_add(&iratio, i / s);
	}
	bench_row("`steptime trace` 100k steps (map)", &tr, "ms", &ratio, NULL);
	bench_row("`steptime trace -i` 100k steps (record file)", &ti, "ms", &iratio, NULL);
	bench_row("`steptime stat -o json` 100k steps (baseline)", &st, "ms", NULL, NULL);
out:
	bench_end();
	unlink(TRACE_REC);
	if (system("rm -rf " TRACE_DIR))
		return;
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	const char *c = getenv("STEPTIME_CLI");
	char *slash;

	bench_parse(argc, argv, &o, "bench_observe [-r ROUNDS] [-o FILE] [-e ENV]");
	snprintf(cli, sizeof(cli), "%s", c ? c : "build/steptime");
	snprintf(fake, sizeof(fake), "%s", cli);
	slash = strrchr(fake, '/');
	snprintf(slash ? slash + 1 : fake, sizeof(fake) - (size_t)(slash ? slash + 1 - fake : 0),
		 "selftests/observe/fake_steps");
	if (geteuid()) {
		fprintf(stderr, "bench_observe: needs root (BPF maps)\n");
		return 1;
	}
	export_rows(&o);
	trace_rows(&o);
	return 0;
}
