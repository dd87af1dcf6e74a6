/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by the benchmarks: timing, per-round series and the result table.
 *
 * Every figure is measured in rounds that interleave the subject with its
 * baseline (the machine is shared and noisy), and printed as the median
 * over the rounds with min and max, next to the median of the per-round
 * ratios to the baseline. A program prints its section as Markdown on
 * stdout and appends it to the file given with -o.
 */
#ifndef _STEPTIME_BENCH_H
#define _STEPTIME_BENCH_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#define BENCH_MAX_ROUNDS	64
/*
 * A round's figure for a short loop is the best of this many slices of it:
 * on a shared machine a slice that was preempted or migrated is noise, not
 * cost. The median over the rounds is taken of these.
 */
#define BENCH_BEST_OF		5
#define BENCH_PIN_DIR		"/sys/fs/bpf/steptime_bench"
/*
 * Host benches load steptime on /dev/null, which has no device counter:
 * its frequency is given (the loader never assumes one), 50 MHz as npusim.
 */
#define BENCH_NULL_FREQ_HZ	50000000ull

struct series {
	double v[BENCH_MAX_ROUNDS];
	int n;
};

/* Options every benchmark takes. */
struct bench_opts {
	int rounds;		/* -r: rounds (default 7) */
	double scale;		/* -s: iteration count factor (VM: < 1) */
	const char *out;	/* -o: append the section to this file */
	const char *env;	/* -e: "host" or "VM (TCG)" in the headings */
	bool npusim;		/* --npusim: the VM's rows */
};

__u64 bench_now_ns(void);
/* CPU time (user + system) of this process, all threads, in ns. */
__u64 bench_cpu_ns(void);
/* Busy time of the whole system from /proc/stat, in ns. */
__u64 bench_sys_busy_ns(void);

void series_add(struct series *s, double v);
double series_med(const struct series *s);
double series_min(const struct series *s);
double series_max(const struct series *s);

/*
 * Parse the common options; returns the index of the first other
 * argument, exits on a bad option.
 */
int bench_parse(int argc, char **argv, struct bench_opts *o,
		const char *usage);
/* Iterations to run: @n scaled by -s, at least 16. */
long bench_iters(const struct bench_opts *o, long n);

/*
 * The section: bench_section() starts it (a heading, a line of text and
 * the table header), bench_row() adds a row, bench_note() a line after
 * the table, bench_end() closes it. A row is @v (median [min, max] @unit)
 * and, when @ratio is not NULL, the ratio series (median [min, max]).
 */
void bench_section(const struct bench_opts *o, const char *title,
		   const char *intro, const char *ratio_col);
void bench_row(const char *what, const struct series *v, const char *unit,
	       const struct series *ratio, const char *note);
/* A row with a plain text value (counts, bytes, a reason it did not run). */
void bench_row_text(const char *what, const char *value, const char *note);
void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bench_end(void);

/* Root, BTF: what loading steptime needs. Return: NULL or the reason. */
const char *bench_cannot_load(void);

#define BENCH_MAX_PROGS		48

struct steptime_prog;

/*
 * The BPF run-time statistics of the programs steptime loaded at
 * BENCH_PIN_DIR over @run(@arg): turned on around it; into @d (up to
 * BENCH_MAX_PROGS, in the loader's order) each program's runs and ns
 * during it. Return: the programs in @d, or a negative errno (statistics
 * not available, the programs not read, or changed meanwhile).
 */
int bench_prog_delta(void (*run)(void *), void *arg, struct steptime_prog *d);

#endif /* _STEPTIME_BENCH_H */
