// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime top: a live view, one line per process marking steps.
 *
 * Every column comes from the steps the map holds now (the last 16 of each
 * process), so it needs no state between refreshes. A row fits 80 columns:
 *   STEP      the highest step index id of the process
 *   RATE      finished steps per second over the last (up to 20) END marks:
 *             none under 2 of them, or when they span under RATE_MIN_NS
 *             (marks back to back are no training rhythm)
 *   LAST      the last finished step's time, in ms
 *   P50/P99   of step time over the steps in the map, in ms
 *             (LAST, P50, P99: device time; host time, marked with '*',
 *             for a process without device times)
 *   TREND     the last 8 step times (the P50 column's kind), low to high
 *             as "_.:-=+*#"
 *   IDLE      host time since the last END mark
 *   LOST      incomplete steps among those in the map; the header shows the BPF
 *             program's loss counters that are not zero
 * Keys: q quits. Without a terminal (or with -n) frames are printed one
 * after the other.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <steptime/util.h>

#include "cmds.h"
#include "cli.h"
#include "snapshot.h"

#define TREND_LEN	8
#define RATE_STEPS	20
#define RATE_MIN_NS	10000000ull

struct prow {
	__u32 tgid;
	struct proc_labels l;
	size_t finished, incomplete;
	__u64 last_id;			/* highest step index id seen */
	double rate;			/* steps/s, < 0: unknown */
	bool have_host, have_dev, dev_kind;
	__u64 last_host, last_dev, p50, p99, idle;
	char trend[TREND_LEN + 1];
};

static int u64_cmp(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted @v[n]. */
static __u64 pct(const __u64 *v, size_t n, double p)
{
	size_t k = (size_t)(p / 100.0 * (double)n + 0.999999);

	return v[k ? k - 1 : 0];
}

static void trend_fill(struct prow *r, const __u64 *t, size_t n)
{
	static const char levels[] = "_.:-=+*#";
	size_t i, from = n > TREND_LEN ? n - TREND_LEN : 0;
	__u64 lo = (__u64)-1, hi = 0;

	for (i = from; i < n; i++) {
		lo = t[i] < lo ? t[i] : lo;
		hi = t[i] > hi ? t[i] : hi;
	}
	for (i = from; i < n; i++)
		r->trend[i - from] = hi > lo ?
			levels[(t[i] - lo) * 7 / (hi - lo)] : '-';
	r->trend[n - from] = '\0';
}

/* One process's row from its steps @s[n] (index order). */
static int row_fill(struct prow *r, const struct steptime_step_stats *s,
		    size_t n, __u64 now)
{
	__u64 *host, *dev, *times, ns, last_end = 0, first_end = 0;
	size_t i, nh = 0, nd = 0, nt, nend = 0, from;

	memset(r, 0, sizeof(*r));
	r->tgid = s[0].tgid;
	if (proc_labels_read(r->tgid, &r->l))
		snprintf(r->l.comm, sizeof(r->l.comm), "(exited)");
	host = calloc(n, sizeof(*host));
	dev = calloc(n, sizeof(*dev));
	if (!host || !dev) {
		free(host);
		free(dev);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (s[i].index_id > r->last_id)
			r->last_id = s[i].index_id;
		if (!step_finished(&s[i]))
			continue;
		r->finished++;
		r->incomplete += s[i].state == STEPTIME_STEP_INCOMPLETE;
		if ((r->have_host = !steptime_stats__host_ns(&s[i], &ns)))
			host[nh++] = r->last_host = ns;
		if ((r->have_dev = !steptime_stats__device_ns(&s[i], &ns)))
			dev[nd++] = r->last_dev = ns;
		if (s[i].flags & STEPTIME_F_HOST_END && s[i].host_end_ns > last_end)
			last_end = s[i].host_end_ns;
	}
	/* RATE: over the last RATE_STEPS END marks. */
	from = 0;
	for (i = n; i-- > 0 && nend < RATE_STEPS;) {
		if (!step_finished(&s[i]) || !(s[i].flags & STEPTIME_F_HOST_END))
			continue;
		if (!nend++)
			from = i;
		first_end = s[i].host_end_ns;
	}
	r->rate = nend >= 2 && s[from].host_end_ns >= first_end + RATE_MIN_NS ?
		  (double)(nend - 1) * 1e9 / (double)(s[from].host_end_ns - first_end) :
		  -1;
	r->idle = last_end && now > last_end ? now - last_end : 0;
	r->dev_kind = nd > 0;
	times = nd ? dev : host;
	nt = nd ? nd : nh;
	trend_fill(r, times, nt);
	if (nt) {
		qsort(times, nt, sizeof(*times), u64_cmp);
		r->p50 = pct(times, nt, 50);
		r->p99 = pct(times, nt, 99);
	}
	free(host);
	free(dev);
	return 0;
}

/*
 * A duration cell: ms in 5 characters (3 decimals under 10 ms, fewer above),
 * then @mark ("*": host time), or "-".
 */
static void cell_ms(char *buf, size_t len, bool have, __u64 ns,
		    const char *mark)
{
	double ms = (double)ns / 1e6;
	int prec = ms < 9.9995 ? 3 : ms < 99.995 ? 2 : ms < 999.95 ? 1 : 0;

	if (!have)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f%s", prec, ms, mark);
}

/* Seconds in 4 characters: "12s", "15m", "3h", "40d". */
static void cell_idle(char *buf, size_t len, __u64 ns)
{
	double s = (double)ns / 1e9;

	if (s < 999.5)
		snprintf(buf, len, "%.0fs", s);
	else if (s < 999.5 * 60)
		snprintf(buf, len, "%.0fm", s / 60);
	else if (s < 999.5 * 3600)
		snprintf(buf, len, "%.0fh", s / 3600);
	else
		snprintf(buf, len, "%.0fd", s / 86400);
}

static void header(FILE *f, const char *pin, size_t nproc, size_t nsteps)
{
	struct steptime_counters cnt;
	size_t i, shown = 0;
	__u64 v;

	fprintf(f, "steptime top - %zu process%s, %zu step%s in the map (%s)\n",
		nproc, nproc == 1 ? "" : "es", nsteps, nsteps == 1 ? "" : "s",
		pin);
	fprintf(f, "losses:");
	if (steptime__read_counters(pin, &cnt)) {
		fprintf(f, " (counters unreadable)\n");
	} else {
		for (i = 0; i < loss_count; i++) {
			v = counter_get(&cnt, loss_names[i]);
			if (v)
				fprintf(f, " %s=%llu", loss_names[i],
					(unsigned long long)v), shown++;
		}
		fprintf(f, "%s\n", shown ? "" : " none");
	}
	fprintf(f, "%-7s %-4s %-12s %6s %6s %6s %6s %6s %-8s %4s %4s\n",
		"PID", "RANK", "COMM", "STEP", "RATE/s", "LAST", "P50", "P99",
		"TREND", "IDLE", "LOST");
}

static void row_print(FILE *f, const struct prow *r)
{
	char last[24], p50[24], p99[24], rate[24], idle[24];
	const char *mark = r->dev_kind ? "" : "*";
	bool have = r->finished && (r->p50 || r->p99);

	if (r->dev_kind)
		cell_ms(last, sizeof(last), r->have_dev, r->last_dev, mark);
	else
		cell_ms(last, sizeof(last), r->have_host, r->last_host, mark);
	cell_ms(p50, sizeof(p50), have, r->p50, mark);
	cell_ms(p99, sizeof(p99), have, r->p99, mark);
	if (r->rate < 0)
		snprintf(rate, sizeof(rate), "-");
	else
		snprintf(rate, sizeof(rate), "%.*f", r->rate < 999.995 ? 2 : 0,
			 r->rate);
	cell_idle(idle, sizeof(idle), r->idle);
	fprintf(f, "%-7u %-4s %-12.12s %6llu %6s %6s %6s %6s %-8s %4s %4zu\n",
		r->tgid, r->l.rank[0] ? r->l.rank : "-", r->l.comm,
		(unsigned long long)r->last_id, rate, last, p50, p99,
		r->trend, idle, r->incomplete);
}

/* One frame. Return: 0 or -errno, *@werr when it is the output's. */
static int frame(FILE *f, const char *pin, const struct proc_filter *pf,
		 bool clear, bool *werr)
{
	struct snap snap;
	struct prow r;
	size_t i, end, nproc = 0, nsteps = 0;
	__u64 now;
	int err;

	err = snap_read(pin, &snap);
	if (err)
		return err;
	now = st_mono_ns();
	for (i = 0; i < snap.n; i = end) {
		end = snap_group_end(&snap, i);
		if (proc_filter_match(pf, snap.steps[i].tgid,
				      snap.steps[i].ns_tgid, NULL)) {
			nproc++;
			nsteps += end - i;
		}
	}
	if (clear)
		fputs("\033[H\033[2J", f);
	header(f, pin, nproc, nsteps);
	for (i = 0; i < snap.n; i = end) {
		end = snap_group_end(&snap, i);
		err = row_fill(&r, &snap.steps[i], end - i, now);
		if (err)
			break;
		if (proc_filter_match(pf, r.tgid, snap.steps[i].ns_tgid, &r.l))
			row_print(f, &r);
	}
	snap_free(&snap);
	if (err)
		return err;
	err = cli_out_error(f);
	*werr = err;
	return err;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* Wait up to @ms for 'q' on a terminal. Return: true to quit. */
static bool wait_key(bool tty, int ms)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	char c;

	if (!tty) {
		poll(NULL, 0, ms);
		return false;
	}
	if (poll(&p, 1, ms) == 1 && read(STDIN_FILENO, &c, 1) == 1)
		return c == 'q' || c == 'Q';
	return false;
}

static void top_usage(FILE *f)
{
	fprintf(f,
		"usage: steptime top [--interval DURATION] [-n|--count N] [-p|--pid PID]\n"
		"                    [--rank N] [--job ID] [--device ID] [--pin DIR]\n"
		"  A live view of the processes marking steps, refreshed every --interval\n"
		"  (a number and its unit: 500ms, 2s; default 1s). q quits. -n: print N\n"
		"  frames and exit (no screen control).\n"
		PROC_FILTER_USAGE
		"  Old spellings (they warn; gone in the next release): -d|--delay SEC\n"
		"  (--interval), --frames N (-n|--count), --interval with no unit (seconds).\n");
}

int cmd_top(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		PROC_FILTER_LONGOPTS,
		{ "delay", required_argument, NULL, 'd' },	/* old --interval */
		{ "frames", required_argument, NULL, 'F' },	/* old --count */
		{ "pin", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct sigaction sa = { .sa_handler = on_signal };
	struct termios saved, raw;
	struct proc_filter pf = {};
	const char *pin = NULL;
	unsigned long long frames = 0, n = 0, delay = CLI_S;
	bool tty, werr = false;
	int c, err = 0;

	while ((c = getopt_long(argc, argv, "d:n:p:h", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
		case 'i':
			err = cli_opt_duration("top", "--interval",
					       c == 'd' ? "-d|--delay" : NULL,
					       optarg, CLI_S, 50 * CLI_MS,
					       3600 * CLI_S, &delay);
			if (err)
				return err;
			break;
		case 'F':
			cli_deprecated("top", "--frames", "-n|--count");
			/* fall through */
		case 'n':
			err = cli_opt_ull("top", "--count", optarg, 1, INT_MAX, &frames);
			if (err)
				return err;
			break;
		case 'P':
			pin = optarg;
			break;
		case 'h':
			top_usage(stdout);
			return 0;
		default:	/* --pid, --rank, --job, --device; else usage */
			err = proc_filter_opt("top", c, optarg, &pf);
			if (err)
				return err;
			break;
		}
	}
	if (optind != argc)
		return cli_usage_error("top", "unexpected argument '%s'", argv[optind]);
	pin = steptime__pin_dir(pin);
	tty = !frames && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (tty && !tcgetattr(STDIN_FILENO, &saved)) {
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop) {
		err = frame(stdout, pin, &pf, tty, &werr);
		if (err)
			break;
		if (frames && ++n >= frames)
			break;
		if (!tty)
			putchar('\n');
		if (wait_key(tty, (int)(delay / CLI_MS)))
			break;
	}
	if (tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	if (werr) {
		fprintf(stderr, "steptime top: write error: %s\n", strerror(-err));
		return 1;
	}
	if (err == -ENOMEM) {
		fprintf(stderr, "steptime top: %s\n", strerror(-err));
		return 1;
	}
	if (err)
		return cli_open_error("top", pin, -err);
	return 0;
}
