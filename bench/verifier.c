// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Verifier headroom: the instructions the kernel's verifier processed to
 * accept each program steptime attaches, in every attach mode this kernel
 * offers (fentry and kprobe on npusim's handler, in the VM), with bpf_loop()
 * and without, against STEPTIME_VERIFIER_BUDGET (a quarter of the limit).
 * Counts, not times: one load each, no rounds.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

#include <bpf/libbpf.h>
#include <npusim_abi.h>
#include <steptime/loader.h>
#include "bench.h"

#define PIN	BENCH_PIN_DIR "_verifier"

static const char *mode_label(int mode, const struct steptime_info *inf)
{
	if (mode == STEPTIME_ATTACH_TP_BTF && strstr(inf->profile, "raw_tp"))
		return "raw_tp";
	return steptime__attach_mode_str(mode);
}

/* One load in @mode: a row per program, the largest in *@max. */
static void one(const char *dev, int mode, bool no_loop, __u32 *max)
{
	struct steptime_load_opts lo = {
		.sz = sizeof(lo),
		.device = dev,
		.attach_mode = mode,
		.pin_dir = PIN,
		.map_gid = -1,
		.no_bpf_loop = no_loop,
	};
	struct steptime_prog progs[STEPTIME_MAX_PROGS];
	struct steptime_info inf;
	char what[256], val[32];
	int n, i, err;

	if (strcmp(dev, "/dev/" NPUSIM_DEV_NAME)) {
		lo.counter_freq_hz = BENCH_NULL_FREQ_HZ;
		lo.stars_version = 1;
	}
	steptime__unload(PIN);
	err = steptime__load(&lo);
	if (!err)
		err = steptime__read_info(PIN, &inf);
	n = err ? err : steptime__read_progs(PIN, progs, STEPTIME_MAX_PROGS);
	if (n <= 0) {
		snprintf(what, sizeof(what), "%s%s", steptime__attach_mode_str(mode),
			 no_loop ? ", no bpf_loop" : "");
		bench_row_text(what, "not loaded", strerror(n ? -n : ENOENT));
		steptime__unload(PIN);
		return;
	}
	for (i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "%s%s: %.64s", mode_label(mode, &inf),
			 no_loop ? ", no bpf_loop" : "", progs[i].name);
		snprintf(val, sizeof(val), "%u", progs[i].verified_insns);
		bench_row_text(what, val, progs[i].verified_insns >
			       STEPTIME_VERIFIER_BUDGET ? "OVER BUDGET" : "");
		if (progs[i].verified_insns > *max)
			*max = progs[i].verified_insns;
	}
	steptime__unload(PIN);
}

int main(int argc, char **argv)
{
	static const int modes[] = {
		STEPTIME_ATTACH_FENTRY, STEPTIME_ATTACH_KPROBE,
		STEPTIME_ATTACH_TP_BTF, STEPTIME_ATTACH_TRACEPOINT,
	};
	const char *why = bench_cannot_load(), *dev;
	struct bench_opts o;
	char intro[512], val[32];
	struct utsname u;
	__u32 max = 0;
	unsigned int i;
	int loop;

	bench_parse(argc, argv, &o, "");
	libbpf_set_print(NULL);
	uname(&u);
	dev = o.npusim ? "/dev/" NPUSIM_DEV_NAME : "/dev/null";
	snprintf(intro, sizeof(intro),
		 "Instructions the verifier processed per program (kernel %s %s, %s), against the budget of %u (a quarter of the 1,000,000 limit).",
		 u.release, u.machine, dev, STEPTIME_VERIFIER_BUDGET);
	bench_section(&o, "Verifier headroom", intro, NULL);
	if (why) {
		bench_row_text("every program within the verifier budget", "not run", why);
		bench_end();
		return 1;
	}
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if ((modes[i] == STEPTIME_ATTACH_FENTRY ||
		     modes[i] == STEPTIME_ATTACH_KPROBE) && !o.npusim)
			continue;
		for (loop = 0; loop < 2; loop++)
			one(dev, modes[i], loop, &max);
	}
	snprintf(val, sizeof(val), "%u", max);
	bench_row_text("largest program, any mode", val, max ? "" : "no program loaded");
	bench_end();
	return max ? 0 : 1;
}
