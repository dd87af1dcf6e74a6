// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Accuracy (VM), on the real driver's protocol as CANN's runtime drives it
 * (selftests/steptime/trs_raw.h: a logic CQ per stream, SQ head queries):
 *
 * 1. 1000 stream-marked steps of 1-64 tasks of 0.5-3.2 us. Per step, the
 *    device time and task count steptime reports, against npusim's truth
 *    (the marks' start ticks: must be exact) and against the bench's own
 *    record, independent of anything npusim copies into a report: the
 *    device time must be at least the tasks' summed durations (chosen here;
 *    they run one after another) and at most the host time around submit
 *    and sync (CLOCK_MONOTONIC, read here).
 * 2. How late steptime learns that a step's last task completed, against
 *    the truth's end of that task: dense (every task reports; the runtime
 *    waits in RECV) and sparse (1 task in 64 reports, CANN's marks report
 *    nothing; the runtime polls the SQ head with QUERY), p50 and p99.
 *
 *   bench_accuracy [opts] [MODE...]   MODE: auto (default), fentry, ...
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <steptime/steptime.h>
#include <steptime/loader.h>
#include "bench.h"
#include "../selftests/steptime/trs_raw.h"

#define STEPS		1000
#define MAX_TASKS	64
#define SYNC_EVERY	8
#define LATE_STEPS	200

#ifndef MAX
#define MAX(a, b)	((a) > (b) ? (a) : (b))
#endif

struct step_ref {
	__u64 index_id;
	__u64 seq;		/* truth seq of its START mark */
	__u64 t0, t1;		/* host time before submit, after its sync */
	__u64 busy_ns;		/* its tasks' summed durations */
	unsigned int tasks;
};

struct result {
	unsigned int found;
	unsigned int missing;	/* claimed steps not checked: failures */
	__u64 dev_err, task_err, compl_err, quant_err;
	unsigned int below_busy, above_host;	/* independent bound misses */
	double dev_ns_sum;
	double late_dense[LATE_STEPS], late_sparse[LATE_STEPS];
	int n_dense, n_sparse;
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

static __u64 next_seq(struct raw_stream *s)
{
	struct npusim_task_truth t;
	__u64 next = 0;

	raw_truth(s, 0, &t, 0, &next);
	return next;
}

static int find_step(__u64 index_id, struct steptime_step_stats *out)
{
	struct steptime_reader_opts ro = { .sz = sizeof(ro), .pid = getpid() };
	struct steptime_reader *r = steptime_reader__open(&ro);
	int err = -ENOENT;

	if (!r)
		return -errno;
	while (steptime_reader__next(r, out) == 0)
		if (out->index_id == index_id) {
			err = 0;
			break;
		}
	steptime_reader__free(r);
	return err;
}

static __u8 sqe[MAX_TASKS * 2 + 2][TRS_SQE_SIZE];

static void check(struct raw_stream *s, const struct step_ref *ref,
		  unsigned int from, unsigned int to, __u64 freq,
		  struct result *res);

/*
 * Part 1: stream-marked steps, device time against two references; each
 * group checked once synced (steptime keeps STEPTIME_PROC_STEPS records
 * per process).
 */
static int run_steps(struct raw_stream *s, struct step_ref *ref, __u64 freq,
		     struct result *res)
{
	int i, k, n, err = 0, first = 0;

	for (i = 0; !err && i < STEPS; i++) {
		ref[i].tasks = 1 + (unsigned int)(i * 37) % MAX_TASKS;
		ref[i].index_id = 10000 + i;
		ref[i].seq = next_seq(s);
		n = 0;
		raw_sqe(s, sqe[n++], &(struct raw_task){ .mark = true,
			.index_id = ref[i].index_id, .tag = 0, .wr_cqe = true });
		for (k = 0; k < (int)ref[i].tasks; k++) {
			__u32 d = 500 + (unsigned int)((i + k) * 13 % 10) * 300;

			raw_sqe(s, sqe[n++], &(struct raw_task){
				.duration_ns = d, .wr_cqe = k == (int)ref[i].tasks - 1 });
			ref[i].busy_ns += d;
		}
		raw_sqe(s, sqe[n++], &(struct raw_task){ .mark = true,
			.index_id = ref[i].index_id, .tag = 1, .wr_cqe = true });
		ref[i].t0 = raw_now();
		err = raw_submit(s, sqe, n);
		if (!err && (i % SYNC_EVERY == SYNC_EVERY - 1 || i == STEPS - 1)) {
			err = raw_sync(s, 20000);
			for (k = first; k <= i; k++)
				ref[k].t1 = raw_now();
			if (!err)
				check(s, ref, first, i, freq, res);
			first = i + 1;
		}
	}
	return err;
}

static void check(struct raw_stream *s, const struct step_ref *ref,
		  unsigned int from, unsigned int to, __u64 freq,
		  struct result *res)
{
	struct npusim_task_truth t[MAX_TASKS + 2];
	struct steptime_step_stats rec;
	__u64 want, tick = 1000000000ull / freq + 1;
	unsigned int i, m;

	for (i = from; i <= to; i++) {
		m = ref[i].tasks;
		/*
		 * A step steptime lost or whose truth is gone is a failure of
		 * the row that claims it, never skipped.
		 */
		if (find_step(ref[i].index_id, &rec) ||
		    raw_truth(s, ref[i].seq, t, m + 2, NULL) != (int)m + 2 ||
		    t[0].sqe_type != TRS_SQE_PLACE_HOLDER ||
		    t[m + 1].sqe_type != TRS_SQE_PLACE_HOLDER) {
			res->missing++;
			continue;
		}
		res->found++;
		want = ticks_to_ns(t[m + 1].start_ticks - t[0].start_ticks, freq);
		res->dev_err = MAX(res->dev_err, absdiff(rec.device_time_ns, want));
		res->task_err = MAX(res->task_err, absdiff(rec.tasks, m));
		res->compl_err = MAX(res->compl_err, absdiff(rec.completions, m));
		res->quant_err = MAX(res->quant_err,
				     absdiff(want, t[m + 1].start_ns - t[0].start_ns));
		/* The bench's own record, not npusim's. */
		if (rec.device_time_ns + tick < ref[i].busy_ns)
			res->below_busy++;
		if (rec.device_time_ns > ref[i].t1 - ref[i].t0 + tick)
			res->above_host++;
		res->dev_ns_sum += rec.device_time_ns;
	}
}

/*
 * Part 2: a step of @tasks tasks; how late steptime's last completion is
 * after the truth's end of the last task. Dense: every task reports and
 * the runtime blocks in RECV; sparse: 1 in 64 reports, the runtime polls
 * the SQ head.
 */
static int lateness(struct raw_stream *s, bool sparse, __u64 idx, double *out)
{
	struct npusim_task_truth t;
	struct steptime_step_stats rec;
	__u8 cqe[MAX_TASKS][TRS_CQE_SIZE];
	int tasks = sparse ? 64 : 8, k, got = 0, n, err;
	__u64 seq = next_seq(s);

	for (k = 0; k < tasks; k++)
		raw_sqe(s, sqe[k], &(struct raw_task){ .duration_ns = 2000,
			.wr_cqe = sparse ? k == 31 : true });
	err = steptime__mark(idx, STEPTIME_TAG_START, NULL);
	if (!err)
		err = raw_submit(s, sqe, tasks);
	if (!err)
		err = steptime__mark(idx, STEPTIME_TAG_END, NULL);
	if (err)
		return err;
	if (sparse) {
		err = raw_sync(s, 20000);
	} else {
		while (!err && got < tasks) {
			n = raw_recv(s, cqe, MAX_TASKS, 20000, false, 0);
			if (n < 0)
				err = n;
			else
				got += n;
		}
	}
	if (err)
		return err;
	if (raw_truth(s, seq + tasks - 1, &t, 1, NULL) != 1 ||
	    find_step(idx, &rec) || rec.completions != (__u64)tasks)
		return -ENOENT;
	*out = (double)((__s64)(rec.last_complete_ns - t.end_ns)) / 1000.0;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(int)((n - 1) * p + 0.5)];
}

static int one_mode(int mode, struct result *res, char *mname, size_t len)
{
	struct steptime_load_opts lo = {
		.sz = sizeof(lo), .attach_mode = mode,
		.pin_dir = BENCH_PIN_DIR, .map_gid = -1,
	};
	struct step_ref *ref = calloc(STEPS, sizeof(*ref));
	struct steptime_info inf;
	struct raw_stream s;
	struct raw_dev d = { .fd = -1 };
	bool have_s = false;
	int err, i;

	memset(res, 0, sizeof(*res));
	snprintf(mname, len, "%s", steptime__attach_mode_str(mode));
	steptime__unload(BENCH_PIN_DIR);
	err = ref ? steptime__load(&lo) : -ENOMEM;
	if (err)
		goto out;
	if (steptime__read_info(BENCH_PIN_DIR, &inf) == 0)
		snprintf(mname, len, "%s", steptime__attach_mode_str(inf.attach_mode));
	err = raw_dev_open(&d, 0);
	if (!err)
		err = raw_stream_create(&d, &s,
					&(struct raw_stream_opts){ .depth = 2048 });
	have_s = !err;
	if (!err)
		err = run_steps(&s, ref, inf.counter_freq_hz, res);
	for (i = 0; !err && i < LATE_STEPS; i++)
		if (!lateness(&s, false, 50000 + i, &res->late_dense[res->n_dense]))
			res->n_dense++;
	for (i = 0; !err && i < LATE_STEPS; i++)
		if (!lateness(&s, true, 60000 + i, &res->late_sparse[res->n_sparse]))
			res->n_sparse++;
	if (have_s)
		raw_stream_destroy(&s, false);
	raw_dev_close(&d);
	steptime__unload(BENCH_PIN_DIR);
out:
	free(ref);
	return res->err = err ?: res->err;
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	static struct result res;
	char mname[32], what[160], val[64], note[256];
	const char *why;
	int first, i, mode, n;

	first = bench_parse(argc, argv, &o, "[MODE...]");
	setenv("STEPTIME_QUIET", "1", 1);
	setenv("STEPTIME_PIN_DIR", BENCH_PIN_DIR, 1);
	libbpf_set_print(NULL);
	why = bench_cannot_load();
	bench_section(&o, "4. Accuracy",
		      "The real protocol (logic CQs, SQ head queries). 1000 "
		      "stream-marked steps, 1-64 tasks each of 0.5-3.2 us, against "
		      "npusim's truth (expected: 0 errors) and against the bench's "
		      "own record (task durations, host clock; expected: 0 misses). "
		      "Then how late steptime learns of a step's last completion "
		      "after the truth's end of that task, dense (every task "
		      "reports, RECV) and sparse (1 in 64, SQ head queries).", "-");
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
		snprintf(what, sizeof(what), "%s: steps checked", mname);
		snprintf(val, sizeof(val), "%u", res.found);
		snprintf(note, sizeof(note), "of %d submitted", STEPS);
		bench_row_text(what, val, note);
		/* Every submitted step is claimed: one not checked fails. */
		snprintf(what, sizeof(what), "%s: steps missing", mname);
		snprintf(val, sizeof(val), "%u", STEPS - res.found);
		snprintf(note, sizeof(note), "%u not found by steptime or without "
			 "their truth marks, %u never checked (run stopped)",
			 res.missing, STEPS - res.found - res.missing);
		bench_row_text(what, val, note);
		snprintf(what, sizeof(what), "%s: max abs error of per-step device time", mname);
		snprintf(val, sizeof(val), "%llu ns", (unsigned long long)res.dev_err);
		snprintf(note, sizeof(note), "mean device step time %.0f ns",
			 res.found ? res.dev_ns_sum / res.found : 0);
		bench_row_text(what, val, note);
		snprintf(what, sizeof(what), "%s: device time outside the bench's own bounds", mname);
		snprintf(val, sizeof(val), "%u", res.below_busy + res.above_host);
		snprintf(note, sizeof(note), "%u below the summed task durations, %u above the host time around it",
			 res.below_busy, res.above_host);
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
		snprintf(what, sizeof(what), "%s: completion learnt after the truth, dense (p50 / p99)",
			 mname);
		snprintf(val, sizeof(val), "%.1f / %.1f us",
			 pct(res.late_dense, res.n_dense, 0.5),
			 pct(res.late_dense, res.n_dense, 0.99));
		snprintf(note, sizeof(note), "%d of %d steps of 8 tasks, all with wr_cqe; the runtime waits in RECV",
			 res.n_dense, LATE_STEPS);
		bench_row_text(what, val, note);
		snprintf(what, sizeof(what), "%s: completion learnt after the truth, sparse (p50 / p99)",
			 mname);
		snprintf(val, sizeof(val), "%.1f / %.1f us",
			 pct(res.late_sparse, res.n_sparse, 0.5),
			 pct(res.late_sparse, res.n_sparse, 0.99));
		snprintf(note, sizeof(note), "%d of %d steps of 64 tasks, 1 with wr_cqe; the runtime polls SQ_HEAD every 50 us",
			 res.n_sparse, LATE_STEPS);
		bench_row_text(what, val, note);
	}
	bench_end();
	return 0;
}
