// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What a user feels: the step time of a training loop shaped like
 * torch_npu's, with steptime loaded against without, per attach mode.
 *
 * The loop (npusim, the HAL's CANN-runtime model): one stream (SQ-CQ pair
 * and logic CQ, kernel mode), a step = START mark, TASKS_PER_STEP tasks,
 * END mark, then a synchronize (SQ head queries) as the optimizer step's
 * .item() does. CANN's runtime sends each task with its own SQCQ_SEND
 * (task_submit.cc: sqe_num = the task's SQE count), so the "batches" are
 * 1 SQE for most kernels and 2 or 4 for long SQEs; recycle tasks with
 * wr_cqe are the only reports (sparse), as on a real host.
 *
 * Two regimes, both reported:
 *   host-bound: tasks of 1 ns; the step is all submission: the worst case,
 *	every ns steptime adds to an ioctl shows in full;
 *   device-bound: tasks long enough that the device takes 3x what the host
 *	needs to submit them (measured in the same run), as in real
 *	training, where submission overlaps execution.
 * Each round measures the baseline (not loaded) and the mode back to back;
 * the ratio of their median step times is the slowdown. TCG inflates every
 * instruction, ioctl entry and BPF program alike, but not npusim's
 * simulated device time: host-bound ratios are those of emulated CPU work;
 * device-bound ones show how much of it the device's time hides.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <npusim/hal.h>
#include <steptime/loader.h>
#include <steptime/steptime.h>
#include "bench.h"

#define TASKS_PER_STEP	1500
#define STEPS		12	/* measured per round and side */
#define WARMUP		2

/* Task i's SQE count: 1, except every 10th (2) and every 20th (4). */
static unsigned int sqes_of(unsigned int i)
{
	return i % 20 == 19 ? 4 : i % 10 == 9 ? 2 : 1;
}

/* Not loaded (the baseline) is no error: the host mark fails, -ENODEV. */
static int mark(struct npu_stream *s, __u64 index, unsigned int tag)
{
	int err = steptime__mark(index, tag, NULL);

	if (err && err != -ENODEV)
		return err;
	err = npu_stream_mark_step(s, index, (__u16)tag);
	return err < 0 ? err : 0;
}

static int one_step(struct npu_stream *s, __u64 index, __u32 dur_ns)
{
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .duration_ns = dur_ns };
	struct trs_sqe sqe[4];
	unsigned int i, k, n;
	int err;

	for (k = 0; k < 4; k++)
		npu_sqe_task(&sqe[k], &d);
	/* What aclprofGetStepTimestamp() does: a host mark + a place-holder */
	err = mark(s, index, STEPTIME_TAG_START);
	if (err)
		return err;
	for (i = 0; i < TASKS_PER_STEP; i++) {
		n = sqes_of(i);
		err = npu_stream_submit(s, sqe, n);
		if (err < 0)
			return err;
	}
	err = mark(s, index, STEPTIME_TAG_END);
	if (err)
		return err;
	return npu_stream_sync(s, 60000);
}

/* Median step time of STEPS steps, in ns; 0 on error. */
static double run_steps(struct npu_stream *s, __u64 *index, __u32 dur_ns)
{
	struct series st = { .n = 0 };
	__u64 t;
	int i;

	for (i = 0; i < WARMUP + STEPS; i++) {
		t = bench_now_ns();
		if (one_step(s, ++*index, dur_ns))
			return 0;
		if (i >= WARMUP)
			series_add(&st, (double)(bench_now_ns() - t));
	}
	return series_med(&st);
}

static int load(int mode, char *name, size_t len)
{
	struct steptime_load_opts lo = {
		.sz = sizeof(lo), .attach_mode = mode,
		.device = NPU_DEFAULT_DEVICE, .pin_dir = BENCH_PIN_DIR,
	};
	struct steptime_info inf;
	int err;

	steptime__unload(BENCH_PIN_DIR);
	err = steptime__load(&lo);
	if (!err && !steptime__read_info(BENCH_PIN_DIR, &inf))
		snprintf(name, len, "%s", steptime__attach_mode_str(inf.attach_mode));
	return err;
}

struct regime {
	const char *name;
	__u32 dur_ns;
	struct series base, with, ratio;
};

static void row(const char *mode, struct regime *r)
{
	char what[128], note[160];

	snprintf(what, sizeof(what), "%s, %s: step time with steptime", mode,
		 r->name);
	snprintf(note, sizeof(note), "baseline %.2f ms; goal: ratio <= 1.005",
		 series_med(&r->base) / 1e6);
	bench_row(what, &r->with, "ms", &r->ratio, note);
}

int main(int argc, char **argv)
{
	struct regime rg[2] = {
		{ .name = "host-bound (1 ns tasks)", .dur_ns = 1 },
		{ .name = "device-bound", .dur_ns = 0 },
	};
	char mname[32], what[128], note[160];
	struct npu_stream *s;
	struct npu_dev *dev;
	struct bench_opts o;
	const char *why;
	__u64 index = 0;
	double b, w, host_ns;
	int first, i, m, mode, r, k, n;

	first = bench_parse(argc, argv, &o, "[MODE...]");
	setenv("STEPTIME_QUIET", "1", 1);
	setenv("STEPTIME_PIN_DIR", BENCH_PIN_DIR, 1);
	libbpf_set_print(NULL);
	bench_section(&o, "6. Training-loop slowdown",
		      "A torch_npu-shaped loop on npusim: 1500 tasks per step, "
		      "one SEND each (1, 2 or 4 SQEs), sparse recycle reports, "
		      "stream START/END marks, a synchronize per step. Median "
		      "step time over 12 steps, ratio to the same loop without "
		      "steptime in the same round. Goal: at most 1.005.",
		      "with / without");
	why = bench_cannot_load();
	dev = npu_dev_open(NULL);
	s = dev ? npu_stream_create(dev, NULL) : NULL;
	if (!s || why) {
		bench_row_text("training loop", "-", why ?: "npusim stream: failed");
		bench_end();
		return 1;
	}
	steptime__unload(BENCH_PIN_DIR);
	/* Device-bound: the device takes 3x the host's submission time. */
	host_ns = run_steps(s, &index, 1);
	if (!host_ns) {
		bench_row_text("training loop", "-", "a step failed");
		bench_end();
		return 1;
	}
	rg[1].dur_ns = (__u32)(3 * host_ns / TASKS_PER_STEP);
	snprintf(note, sizeof(note), "%u ns per task (3x the host's %.0f ns)",
		 rg[1].dur_ns, host_ns / TASKS_PER_STEP);
	rg[1].name = "device-bound";
	bench_row_text("device-bound task time", note, NULL);

	n = first < argc ? argc - first : 1;
	for (m = 0; m < n; m++) {
		const char *arg = first < argc ? argv[first + m] : "auto";

		for (mode = STEPTIME_ATTACH_AUTO; mode <= STEPTIME_ATTACH_TRACEPOINT; mode++)
			if (!strcmp(arg, steptime__attach_mode_str(mode)))
				break;
		snprintf(mname, sizeof(mname), "%s", arg);
		for (k = 0; k < 2; k++)
			rg[k].base.n = rg[k].with.n = rg[k].ratio.n = 0;
		for (r = 0; r < o.rounds && mode <= STEPTIME_ATTACH_TRACEPOINT; r++) {
			for (k = 0; k < 2; k++) {
				steptime__unload(BENCH_PIN_DIR);
				b = run_steps(s, &index, rg[k].dur_ns);
				i = load(mode, mname, sizeof(mname));
				w = i ? 0 : run_steps(s, &index, rg[k].dur_ns);
				if (!b || !w)
					break;
				series_add(&rg[k].base, b);
				series_add(&rg[k].with, w);
				series_add(&rg[k].ratio, w / b);
			}
		}
		steptime__unload(BENCH_PIN_DIR);
		for (k = 0; k < 2; k++) {
			if (!rg[k].ratio.n) {
				snprintf(what, sizeof(what), "%s, %s", mname, rg[k].name);
				bench_row_text(what, "-", "not run: load or a step failed");
				continue;
			}
			/* rows in ms */
			for (i = 0; i < rg[k].with.n; i++) {
				rg[k].with.v[i] /= 1e6;
			}
			row(mname, &rg[k]);
		}
	}
	npu_stream_destroy(s);
	npu_dev_close(dev);
	bench_end();
	return 0;
}
