// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Accuracy (VM): 1000 stream-marked steps of varying task counts and task
 * times on npusim; every step's device time and task count as steptime
 * reports them, against npusim's ground truth (the START and END
 * place-holders' start_ticks, converted at the counter frequency, and the
 * number of tasks submitted). Both errors must be 0.
 *
 *   bench_accuracy [opts] [MODE...]   MODE: auto (default), fentry, ...
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <steptime/steptime.h>
#include <npusim/hal.h>
#include <steptime/loader.h>
#include "bench.h"

#define STEPS		1000
#define MAX_TASKS	64
#define SYNC_EVERY	8

#ifndef MAX
#define MAX(a, b)	((a) > (b) ? (a) : (b))
#endif

struct step_ref {
	__u64 index_id;
	__u64 seq;	/* truth seq of its START place-holder */
	unsigned int tasks;
};

struct result {
	unsigned int found;
	__u64 dev_err, task_err, compl_err, quant_err;
	double dev_ns_sum;
	int err;
};

static __u64 ticks_to_ns(__u64 ticks, __u64 freq)
{
	return ticks / freq * 1000000000ull + ticks % freq * 1000000000ull / freq;
}

static __u64 absdiff(__u64 a, __u64 b)
{
	return a > b ? a - b : b - a;
}

static __u64 next_seq(struct npu_dev *dev, struct npu_stream *s)
{
	struct npusim_task_truth t;
	__u64 next = 0;

	npu_sim_truth(dev, npu_sqcq_sq_id(npu_stream_sqcq(s)), 0, &t, 0, &next);
	return next;
}

static int run_steps(struct npu_dev *dev, struct npu_stream *s,
		     struct step_ref *ref)
{
	struct steptime_mark_opts mo = { .sz = sizeof(mo), .stream = s };
	struct trs_sqe sqe[MAX_TASKS];
	struct steptime_step *step;
	int i, k, err = 0;

	for (i = 0; !err && i < STEPS; i++) {
		ref[i].tasks = 1 + (unsigned int)(i * 37) % MAX_TASKS;
		for (k = 0; k < (int)ref[i].tasks; k++) {
			struct npu_task_desc d = {
				.type = k % 3 ? TRS_SQE_FFTS : TRS_SQE_AICPU,
				.duration_ns = 500 + (unsigned int)((i + k) * 13 % 10) * 300,
			};

			npu_sqe_task(&sqe[k], &d);
		}
		step = steptime_step__new();
		if (!step)
			return -ENOMEM;
		ref[i].index_id = steptime_step__index_id(step);
		ref[i].seq = next_seq(dev, s);
		err = steptime_step__mark(step, STEPTIME_TAG_START, &mo);
		if (!err && npu_stream_submit(s, sqe, ref[i].tasks) < 0)
			err = -EIO;
		if (!err)
			err = steptime_step__mark(step, STEPTIME_TAG_END, &mo);
		if (!err && (i % SYNC_EVERY == SYNC_EVERY - 1 || i == STEPS - 1))
			err = npu_stream_sync(s, 20000);
		steptime_step__free(step);
	}
	return err;
}

static int cmp_index(const void *a, const void *b)
{
	const struct steptime_step_stats *x = a, *y = b;

	return x->index_id < y->index_id ? -1 : x->index_id > y->index_id;
}

static void check(struct npu_dev *dev, struct npu_stream *s,
		  const struct step_ref *ref, __u64 freq, struct result *res)
{
	struct steptime_reader_opts ro = { .sz = sizeof(ro), .pid = getpid() };
	struct steptime_step_stats *st, key;
	struct npusim_task_truth t[MAX_TASKS + 2];
	struct steptime_reader *r;
	size_t n, i;
	__u64 want;
	int got;

	r = steptime_reader__open(&ro);
	if (!r) {
		res->err = -errno;
		return;
	}
	n = steptime_reader__count(r);
	st = calloc(n + 1, sizeof(*st));
	for (i = 0; st && i < n; i++)
		steptime_reader__next(r, &st[i]);
	steptime_reader__free(r);
	if (!st) {
		res->err = -ENOMEM;
		return;
	}
	qsort(st, n, sizeof(*st), cmp_index);
	for (i = 0; i < STEPS; i++) {
		struct steptime_step_stats *rec;

		key.index_id = ref[i].index_id;
		rec = bsearch(&key, st, n, sizeof(*st), cmp_index);
		got = npu_sim_truth(dev, npu_sqcq_sq_id(npu_stream_sqcq(s)),
				    ref[i].seq, t, ref[i].tasks + 2, NULL);
		if (!rec || got != (int)ref[i].tasks + 2 ||
		    t[0].sqe_type != TRS_SQE_PLACE_HOLDER ||
		    t[ref[i].tasks + 1].sqe_type != TRS_SQE_PLACE_HOLDER)
			continue;
		res->found++;
		want = ticks_to_ns(t[ref[i].tasks + 1].start_ticks - t[0].start_ticks,
				   freq);
		res->dev_err = MAX(res->dev_err, absdiff(rec->device_time_ns, want));
		res->task_err = MAX(res->task_err, absdiff(rec->tasks, ref[i].tasks));
		res->compl_err = MAX(res->compl_err,
				     absdiff(rec->completions, ref[i].tasks));
		/* The counter's resolution, against host-ns truth: context. */
		res->quant_err = MAX(res->quant_err,
				     absdiff(want, t[ref[i].tasks + 1].start_ns -
						   t[0].start_ns));
		res->dev_ns_sum += rec->device_time_ns;
	}
	free(st);
}

static int one_mode(int mode, struct result *res, char *mname, size_t len)
{
	struct steptime_load_opts lo = {
		.sz = sizeof(lo), .attach_mode = mode,
		.pin_dir = BENCH_PIN_DIR, .map_gid = -1,
	};
	struct step_ref *ref = calloc(STEPS, sizeof(*ref));
	struct steptime_info inf;
	struct npusim_clock clk;
	struct npu_dev *dev;
	struct npu_stream *s = NULL;
	int err;

	memset(res, 0, sizeof(*res));
	snprintf(mname, len, "%s", steptime__attach_mode_str(mode));
	steptime__unload(BENCH_PIN_DIR);
	err = steptime__load(&lo);
	if (err)
		goto out;
	if (!steptime__read_info(BENCH_PIN_DIR, &inf))
		snprintf(mname, len, "%s", steptime__attach_mode_str(inf.attach_mode));
	dev = npu_dev_open(NULL);
	if (dev)
		s = npu_stream_create(dev, NULL);
	if (!s || !ref || npu_sim_clock(dev, &clk)) {
		err = -ENODEV;
		goto close;
	}
	err = run_steps(dev, s, ref);
	if (!err)
		check(dev, s, ref, clk.counter_freq_hz, res);
close:
	npu_stream_destroy(s);
	npu_dev_close(dev);
	steptime__unload(BENCH_PIN_DIR);
out:
	free(ref);
	return res->err = err ?: res->err;
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct result res;
	char mname[32], what[128], val[64], note[256];
	const char *why;
	int first, i, mode, n;

	first = bench_parse(argc, argv, &o, "[MODE...]");
	setenv("STEPTIME_QUIET", "1", 1);
	setenv("STEPTIME_PIN_DIR", BENCH_PIN_DIR, 1);
	libbpf_set_print(NULL);
	why = bench_cannot_load();
	bench_section(&o, "4. Accuracy",
		      "1000 stream-marked steps, 1-64 tasks each of 0.5-3.2 us, "
		      "against npusim's ground truth. Expected: 0 for both "
		      "errors.", "-");
	n = first < argc ? argc - first : 1;
	for (i = 0; i < n; i++) {
		const char *m = first < argc ? argv[first + i] : "auto";

		for (mode = STEPTIME_ATTACH_AUTO; mode <= STEPTIME_ATTACH_TRACEPOINT; mode++)
			if (!strcmp(m, steptime__attach_mode_str(mode)))
				break;
		if (why || mode > STEPTIME_ATTACH_TRACEPOINT) {
			snprintf(note, sizeof(note), "not run: %s",
				 why ?: "unknown attach mode");
			snprintf(what, sizeof(what), "%s: accuracy", m);
			bench_row_text(what, "-", note);
			continue;
		}
		if (one_mode(mode, &res, mname, sizeof(mname))) {
			snprintf(note, sizeof(note), "not run: %s",
				 strerror(-res.err));
			snprintf(what, sizeof(what), "%s: accuracy", mname);
			bench_row_text(what, "-", note);
			continue;
		}
		snprintf(what, sizeof(what), "%s: steps found with both truth marks", mname);
		snprintf(val, sizeof(val), "%u / %d", res.found, STEPS);
		bench_row_text(what, val, NULL);
		snprintf(what, sizeof(what), "%s: max abs error of per-step device time", mname);
		snprintf(val, sizeof(val), "%llu ns", (unsigned long long)res.dev_err);
		snprintf(note, sizeof(note), "mean device step time %.0f ns",
			 res.found ? res.dev_ns_sum / res.found : 0);
		bench_row_text(what, val, note);
		snprintf(what, sizeof(what), "%s: max abs error of per-step task count", mname);
		snprintf(val, sizeof(val), "%llu", (unsigned long long)res.task_err);
		snprintf(note, sizeof(note), "completions: max abs error %llu",
			 (unsigned long long)res.compl_err);
		bench_row_text(what, val, note);
		snprintf(what, sizeof(what), "%s: counter resolution (device ticks vs host-ns truth)",
			 mname);
		snprintf(val, sizeof(val), "%llu ns", (unsigned long long)res.quant_err);
		bench_row_text(what, val, "context: one tick at the counter frequency");
	}
	bench_end();
	return 0;
}
