// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Timing, series, the Markdown table and the BPF run statistics shared by
 * the benchmarks.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include <bpf/bpf.h>
#include <steptime/loader.h>
#include "bench.h"

static FILE *out;

__u64 bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

__u64 bench_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ((__u64)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       ((__u64)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

__u64 bench_sys_busy_ns(void)
{
	unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user,
		   &nice, &sys, &idle, &iowait, &irq, &softirq, &steal);
	fclose(f);
	if (n != 8 || hz <= 0)
		return 0;
	return (user + nice + sys + irq + softirq + steal) * (1000000000ull / hz);
}

void series_add(struct series *s, double v)
{
	if (s->n < BENCH_MAX_ROUNDS)
		s->v[s->n++] = v;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double series_med(const struct series *s)
{
	double v[BENCH_MAX_ROUNDS];

	if (!s->n)
		return 0;
	memcpy(v, s->v, s->n * sizeof(v[0]));
	qsort(v, s->n, sizeof(v[0]), dbl_cmp);
	return s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
}

double series_min(const struct series *s)
{
	double m = s->n ? s->v[0] : 0;
	int i;

	for (i = 1; i < s->n; i++)
		if (s->v[i] < m)
			m = s->v[i];
	return m;
}

double series_max(const struct series *s)
{
	double m = s->n ? s->v[0] : 0;
	int i;

	for (i = 1; i < s->n; i++)
		if (s->v[i] > m)
			m = s->v[i];
	return m;
}

int bench_parse(int argc, char **argv, struct bench_opts *o, const char *usage)
{
	static const struct option lo[] = {
		{ "npusim", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->rounds = 7;
	o->scale = 1;
	o->env = "host";
	while ((c = getopt_long(argc, argv, "r:s:o:e:h", lo, NULL)) != -1) {
		switch (c) {
		case 'r':
			o->rounds = atoi(optarg);
			break;
		case 's':
			o->scale = atof(optarg);
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'e':
			o->env = optarg;
			break;
		case 'n':
			o->npusim = true;
			break;
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"usage: %s [-r ROUNDS] [-s SCALE] [-o FILE] [-e ENV] %s\n",
				argv[0], usage);
			exit(c == 'h' ? 0 : 2);
		}
	}
	if (o->rounds < 1 || o->rounds > BENCH_MAX_ROUNDS || o->scale <= 0) {
		fprintf(stderr, "%s: bad -r or -s\n", argv[0]);
		exit(2);
	}
	return optind;
}

long bench_iters(const struct bench_opts *o, long n)
{
	long v = (long)(n * o->scale);

	return v < 16 ? 16 : v;
}

static void emit(const char *fmt, va_list ap)
{
	va_list ap2;

	va_copy(ap2, ap);
	vprintf(fmt, ap);
	if (out)
		vfprintf(out, fmt, ap2);
	va_end(ap2);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(fmt, ap);
	va_end(ap);
}

void bench_section(const struct bench_opts *o, const char *title,
		   const char *intro, const char *ratio_col)
{
	if (o->out && !out) {
		out = fopen(o->out, "a");
		if (!out)
			fprintf(stderr, "bench: %s: %s\n", o->out, strerror(errno));
	}
	say("\n### %s (%s)\n\n", title, o->env);
	if (intro && *intro)
		say("%s\n\n", intro);
	say("| what | median | min | max | unit | %s | note |\n",
	    ratio_col ? ratio_col : "ratio to baseline: median [min, max]");
	say("| --- | ---: | ---: | ---: | --- | --- | --- |\n");
}

/* Enough digits for ns figures around 1 and around 100000. */
static const char *fmt_num(char *buf, size_t len, double v)
{
	if (v != 0 && v < 10 && v > -10)
		snprintf(buf, len, "%.2f", v);
	else if (v < 1000 && v > -1000)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.0f", v);
	return buf;
}

void bench_row(const char *what, const struct series *v, const char *unit,
	       const struct series *ratio, const char *note)
{
	char a[32], b[32], c[32], r[96] = "";

	/* A figure nothing measured is said so, never printed as 0. */
	if (!v->n) {
		bench_row_text(what, "n/a", "no data");
		return;
	}
	if (ratio && ratio->n)
		snprintf(r, sizeof(r), "%.2fx [%.2f, %.2f]", series_med(ratio),
			 series_min(ratio), series_max(ratio));
	say("| %s | %s | %s | %s | %s | %s | %s |\n", what,
	    fmt_num(a, sizeof(a), series_med(v)),
	    fmt_num(b, sizeof(b), series_min(v)),
	    fmt_num(c, sizeof(c), series_max(v)), unit, r, note ? note : "");
	fflush(stdout);
}

void bench_row_text(const char *what, const char *value, const char *note)
{
	say("| %s | %s | | | | | %s |\n", what, value, note ? note : "");
	fflush(stdout);
}

void bench_note(const char *fmt, ...)
{
	va_list ap;

	say("\n");
	va_start(ap, fmt);
	emit(fmt, ap);
	va_end(ap);
	say("\n");
}

void bench_end(void)
{
	fflush(stdout);
	if (out)
		fflush(out);
}

const char *bench_cannot_load(void)
{
	if (geteuid())
		return "not root: loading steptime needs root";
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return "kernel without BTF";
	return NULL;
}

int bench_prog_delta(void (*run)(void *), void *arg, struct steptime_prog *d)
{
	struct steptime_prog a[BENCH_MAX_PROGS];
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME), n, i;

	if (fd < 0)
		return -errno;
	n = steptime__read_progs(BENCH_PIN_DIR, a, BENCH_MAX_PROGS);
	run(arg);
	if (n >= 0 && steptime__read_progs(BENCH_PIN_DIR, d,
					   BENCH_MAX_PROGS) != n)
		n = -ESTALE;
	close(fd);
	for (i = 0; i < n; i++) {
		d[i].run_cnt -= a[i].run_cnt;
		d[i].run_time_ns -= a[i].run_time_ns;
	}
	return n;
}
