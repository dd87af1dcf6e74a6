// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What a step mark costs, against a bare clock_gettime(CLOCK_MONOTONIC)
 * timed in the same rounds.
 *
 * Host: steptime's host mark (steptime loaded on /dev/null in tp_btf mode,
 * at a private pin directory), the CANN drop-in aclprofGetStepTimestamp(),
 * and the two obvious alternatives a mark could have been built on: a
 * bpf() map update per mark, and a uprobe on a marking function.
 * --npusim (VM): the host mark again, the stream mark (host mark plus a
 * place-holder task on an npusim stream) and the device place-holder a
 * CANN runtime submits for a mark (one SQCQ_SEND of a step-mark SQE).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <steptime/steptime.h>
#include <acl/acl_prof.h>
#include <npusim/hal.h>
#include <steptime/loader.h>
#include "bench.h"
#include "bench.skel.h"

#define CHUNK		256	/* device marks between two syncs */

struct subject {
	const char *name;
	const char *note;
	double (*run)(long n);	/* ns per op */
	long iters;		/* per round, before -s */
	const char *skip;	/* why it cannot run, or NULL */
	struct series v, ratio;
};

static struct {
	int map_fd;
	struct bench_bpf *skel;
	struct bpf_link *uprobe;
	aclprofConfig *cfg;
	struct npu_dev *dev;
	struct npu_stream *stream;
	struct npu_sqcq *q;
	__u16 task_id;
	__u64 index;
} b = { .map_fd = -1 };

/* Defeats dead-code elimination of the timed calls. */
static volatile __u64 sink;

#define SUBJ(n, t, fn, it) { .name = n, .note = t, .run = fn, .iters = it }

static double per_op(__u64 t0, long n)
{
	return (double)(bench_now_ns() - t0) / n;
}

static double run_clock(long n)
{
	struct timespec ts;
	__u64 t0 = bench_now_ns();
	long i;

	for (i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
	return per_op(t0, n);
}

static double run_host_mark(long n)
{
	__u64 t0 = bench_now_ns();
	long i;

	for (i = 0; i < n; i++)
		sink += steptime__mark(++b.index, i & 1, NULL);
	return per_op(t0, n);
}

static double run_step_mark(long n)
{
	long i, steps = n / 2;
	struct steptime_step **s = calloc(steps, sizeof(*s));
	double ns = 0;
	__u64 t0;

	if (!s)
		return 0;
	for (i = 0; i < steps; i++)
		s[i] = steptime_step__new();
	t0 = bench_now_ns();
	for (i = 0; i < steps; i++) {
		sink += steptime_step__mark(s[i], STEPTIME_TAG_START, NULL);
		sink += steptime_step__mark(s[i], STEPTIME_TAG_END, NULL);
	}
	ns = per_op(t0, steps * 2);
	for (i = 0; i < steps; i++)
		steptime_step__free(s[i]);
	free(s);
	return ns;
}

/* Objects made in advance: each can be marked once per tag. */
static double run_acl_mark(long n)
{
	long i, steps = n / 2;
	aclprofStepInfo **s = calloc(steps, sizeof(*s));
	double ns;
	__u64 t0;

	if (!s)
		return 0;
	for (i = 0; i < steps; i++)
		s[i] = aclprofCreateStepInfo();
	t0 = bench_now_ns();
	for (i = 0; i < steps; i++) {
		sink += aclprofGetStepTimestamp(s[i], ACL_STEP_START, NULL);
		sink += aclprofGetStepTimestamp(s[i], ACL_STEP_END, NULL);
	}
	ns = per_op(t0, steps * 2);
	for (i = 0; i < steps; i++)
		aclprofDestroyStepInfo(s[i]);
	free(s);
	return ns;
}

/* A whole step the CANN way: create, START, END, destroy. */
static double run_acl_step(long n)
{
	__u64 t0 = bench_now_ns();
	aclprofStepInfo *s;
	long i;

	for (i = 0; i < n; i++) {
		s = aclprofCreateStepInfo();
		sink += aclprofGetStepTimestamp(s, ACL_STEP_START, NULL);
		sink += aclprofGetStepTimestamp(s, ACL_STEP_END, NULL);
		aclprofDestroyStepInfo(s);
	}
	return per_op(t0, n);
}

struct map_mark {
	__u64 time_ns;
	__u32 tag;
	__u32 pad;
};

static double run_map_update(long n)
{
	struct map_mark v = {};
	__u64 t0 = bench_now_ns();
	__u64 key;
	long i;

	for (i = 0; i < n; i++) {
		key = i & 15;
		v.time_ns = bench_now_ns();
		v.tag = i & 1;
		sink += bpf_map_update_elem(b.map_fd, &key, &v, BPF_ANY);
	}
	return per_op(t0, n);
}

/* The function a uprobe-based library would export as its mark. */
__attribute__((noinline, used)) int bench_uprobe_target(__u64 index_id,
							__u32 tag);
__attribute__((noinline, used)) int bench_uprobe_target(__u64 index_id,
							__u32 tag)
{
	__asm__ __volatile__("" : : "r"(index_id), "r"(tag) : "memory");
	return 0;
}

static double run_uprobe(long n)
{
	__u64 t0 = bench_now_ns();
	long i;

	for (i = 0; i < n; i++)
		sink += bench_uprobe_target(++b.index, i & 1);
	return per_op(t0, n);
}

/* Stream marks: host mark + place-holder SEND; the device drains them. */
static double run_stream_mark(long n)
{
	struct steptime_mark_opts mo = { .sz = sizeof(mo), .stream = b.stream };
	__u64 ns = 0, t0;
	long i, k;

	for (i = 0; i < n; i += CHUNK) {
		t0 = bench_now_ns();
		for (k = 0; k < CHUNK; k++)
			sink += steptime__mark(++b.index, k & 1, &mo);
		ns += bench_now_ns() - t0;
		if (npu_stream_sync(b.stream, 10000))
			return 0;
	}
	return (double)ns / i;
}

static int drain(struct npu_sqcq *q, int want)
{
	struct trs_logic_cqe cqe[CHUNK];
	int got = 0, r;

	while (got < want) {
		r = npu_sqcq_recv(q, cqe, CHUNK, 10000, NULL);
		if (r < 0)
			return r;
		got += r;
	}
	return 0;
}

/*
 * What CANN submits for a mark: one step-mark SQE, through the driver's
 * library as its runtime sends every task (halSqTaskSend(): the chip's
 * default mode, a mapped SQ on 910B and 950).
 */
static double run_placeholder(long n)
{
	__u32 sq = npu_sqcq_sq_id(b.q);
	struct trs_sqe sqe;
	__u64 ns = 0, t0;
	long i, k;

	for (i = 0; i < n; i += CHUNK) {
		t0 = bench_now_ns();
		for (k = 0; k < CHUNK; k++) {
			npu_sqe_step_mark(&sqe, sq, b.task_id++, ++b.index,
					  k & 1);
			/* CANN's place-holders report nothing: drained here. */
			sqe.flags |= TRS_SQE_F_WR_CQE;
			if (npu_sqcq_send(b.q, &sqe, 1, -1) < 0)
				return 0;
		}
		ns += bench_now_ns() - t0;
		if (drain(b.q, CHUNK))
			return 0;
	}
	return (double)ns / i;
}

/* The holdout beside this binary, and the library it is linked with. */
static const char *holdout_path(void)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX], *slash;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (len <= 0)
		return NULL;
	exe[len] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	if (snprintf(path, sizeof(path), "%.4000s/holdout", exe) >= (int)sizeof(path))
		return NULL;
	return access(path, X_OK) ? NULL : path;
}

static const char *holdout_lib(void)
{
	static char lib[PATH_MAX];
	char dir[PATH_MAX];
	const char *h = holdout_path();

	if (!h)
		return NULL;
	snprintf(dir, sizeof(dir), "%.*s/../libsteptime.so.1",
		 (int)(strlen(h) - strlen("/holdout")), h);
	return realpath(dir, lib) ? lib : NULL;
}

/*
 * The holdout's rounds (see holdout.c): its clock read and its mark, each
 * timed in the same process. Return: NULL, or why it did not run.
 */
static const char *run_holdout(const struct bench_opts *o, long marks,
			       struct series *clk, struct series *mark,
			       struct series *ratio)
{
	static char why[160];
	const char *h = holdout_path();
	char cmd[PATH_MAX + 64];	/* @h is under PATH_MAX */
	double c, m;
	FILE *f;
	int st;

	if (!h)
		return "no holdout binary beside bench_mark";
	snprintf(cmd, sizeof(cmd), "%s %ld %d", h, marks, o->rounds);
	fflush(NULL);
	f = popen(cmd, "r");
	if (!f)
		return "popen failed";
	while (fscanf(f, "%lf %lf", &c, &m) == 2 && c > 0 && m > 0) {
		series_add(clk, c);
		series_add(mark, m);
		series_add(ratio, m / c);
	}
	st = pclose(f);
	if (st || mark->n != o->rounds) {
		snprintf(why, sizeof(why), "holdout failed (status %d, %d of %d "
			 "rounds)", st, mark->n, o->rounds);
		return why;
	}
	return NULL;
}

/*
 * Run time of the ring kick's BPF program of this load (its link pinned
 * under BENCH_PIN_DIR/links), while BPF stats are on. Return: 0 or -1.
 */
static int kick_run_time(__u64 *ns)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(BENCH_PIN_DIR "/links");
	int found = 0;

	*ns = 0;
	while (d && (e = readdir(d))) {
		struct bpf_link_info li = {};
		struct bpf_prog_info pi = {};
		__u32 ll = sizeof(li), pl = sizeof(pi);
		int lfd, pfd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/links/%s", BENCH_PIN_DIR,
			 e->d_name);
		lfd = bpf_obj_get(path);
		if (lfd < 0)
			continue;
		pfd = bpf_obj_get_info_by_fd(lfd, &li, &ll) ? -1 :
		      bpf_prog_get_fd_by_id(li.prog_id);
		close(lfd);
		if (pfd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(pfd, &pi, &pl) &&
		    !strncmp(pi.name, "uprobe_ring_kick", sizeof(pi.name) - 1)) {
			*ns += pi.run_time_ns;
			found = 1;
		}
		close(pfd);
	}
	if (d)
		closedir(d);
	return found ? 0 : -1;
}

/*
 * Where the holdout's time goes: one more pass of the holdout with BPF
 * stats on (they slow every program down a little: not in the timed
 * rounds), its ring kick program's run time per mark it consumed.
 * Return: ns per mark, or a negative value when it could not be told.
 */
static double holdout_bpf_ns(long marks)
{
	struct steptime_counters c0, c1;
	const char *h = holdout_path();
	char cmd[PATH_MAX + 64];
	__u64 t0, t1;
	int sfd, st;

	if (!h)
		return -1;
	sfd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (sfd < 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "%s %ld 1 >/dev/null", h, marks);
	if (kick_run_time(&t0) ||
	    steptime__read_counters(BENCH_PIN_DIR, &c0)) {
		close(sfd);
		return -1;
	}
	fflush(NULL);
	st = system(cmd);
	if (st || kick_run_time(&t1) ||
	    steptime__read_counters(BENCH_PIN_DIR, &c1) ||
	    c1.marks == c0.marks) {
		close(sfd);
		return -1;
	}
	close(sfd);
	return (double)(t1 - t0) / (double)(c1.marks - c0.marks);
}

/*
 * Load steptime for this bench: on npusim's device, or on /dev/null; with
 * the holdout's library probed for the ring kick (@kick), as an installed
 * one, or no library probed at all.
 */
static const char *steptime_up(bool npusim, bool kick)
{
	static char why[160];
	struct steptime_load_opts lo = {
		.sz = sizeof(lo),
		.device = npusim ? NULL : "/dev/null",
		.counter_freq_hz = npusim ? 0 : BENCH_NULL_FREQ_HZ,
		.stars_version = npusim ? 0 : 1,
		.attach_mode = npusim ? STEPTIME_ATTACH_AUTO : STEPTIME_ATTACH_TP_BTF,
		.pin_dir = BENCH_PIN_DIR,
		.map_gid = -1,
	};
	const char *r = bench_cannot_load();
	int err;

	if (!npusim)
		lo.libs = kick && holdout_lib() ? holdout_lib() : "";

	if (r)
		return r;
	steptime__unload(BENCH_PIN_DIR);
	err = steptime__load(&lo);
	/*
	 * A host whose verifier refuses the tp_btf program (over its
	 * instruction limit on some 6.18 builds: E2BIG): a mark makes no
	 * syscall, so any attach mode serves; the table says which.
	 */
	if (err && !npusim) {
		lo.attach_mode = STEPTIME_ATTACH_TRACEPOINT;
		steptime__unload(BENCH_PIN_DIR);
		err = steptime__load(&lo);
	}
	if (err) {
		snprintf(why, sizeof(why), "steptime load failed: %s",
			 strerror(-err));
		return why;
	}
	setenv("STEPTIME_PIN_DIR", BENCH_PIN_DIR, 1);
	/* The first mark opens the map: keep that out of the timing. */
	err = steptime__mark(++b.index, STEPTIME_TAG_START, NULL);
	if (err) {
		snprintf(why, sizeof(why), "first mark failed: %s",
			 strerror(-err));
		return why;
	}
	return NULL;
}

static char acl_dir[] = "/tmp/steptime_bench_acl.XXXXXX";

static const char *acl_up(const char *why)
{
	char *dir = acl_dir;
	uint32_t dev = 0;

	if (why)
		return why;
	if (!mkdtemp(dir))
		return "mkdtemp failed";
	if (aclprofInit(dir, strlen(dir)) != ACL_SUCCESS)
		return "aclprofInit failed";
	b.cfg = aclprofCreateConfig(&dev, 1, ACL_AICORE_NONE, NULL,
				       ACL_PROF_TRAINING_TRACE);
	if (!b.cfg || aclprofStart(b.cfg) != ACL_SUCCESS)
		return "aclprofCreateConfig/aclprofStart failed";
	return NULL;
}

static void acl_down(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if (!b.cfg)
		return;
	aclprofStop(b.cfg);
	aclprofDestroyConfig(b.cfg);
	aclprofFinalize();
	/* aclprofStop() wrote the session's CSV: not ours to keep. */
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static const char *map_up(void)
{
	char path[PATH_MAX];
	int fd;

	if (geteuid())
		return "not root";
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "bench_marks", sizeof(__u64),
			       sizeof(struct map_mark), 64, NULL);
	if (fd < 0)
		return "bpf_map_create failed";
	mkdir(BENCH_PIN_DIR "_maps", 0700);
	snprintf(path, sizeof(path), "%s_maps/marks_hash", BENCH_PIN_DIR);
	unlink(path);
	if (bpf_obj_pin(fd, path)) {
		close(fd);
		return "bpf_obj_pin failed";
	}
	close(fd);
	/* Through the pin, as a process other than the loader would. */
	b.map_fd = bpf_obj_get(path);
	return b.map_fd < 0 ? "bpf_obj_get failed" : NULL;
}

static void map_down(void)
{
	char path[PATH_MAX];

	if (b.map_fd >= 0)
		close(b.map_fd);
	snprintf(path, sizeof(path), "%s_maps/marks_hash", BENCH_PIN_DIR);
	unlink(path);
	rmdir(BENCH_PIN_DIR "_maps");
}

static const char *uprobe_up(void)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "bench_uprobe_target");
	struct bpf_program *p;
	static char exe[PATH_MAX];
	ssize_t len;

	if (geteuid())
		return "not root";
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return "readlink /proc/self/exe failed";
	exe[len] = '\0';
	b.skel = bench_bpf__open();
	if (!b.skel)
		return "bench.bpf.o failed to open";
	/* The uprobe only: the floors are other tables' (fentry, kprobes). */
	bpf_object__for_each_program(p, b.skel->obj)
		bpf_program__set_autoload(p, p == b.skel->progs.bench_uprobe_mark);
	if (bench_bpf__load(b.skel))
		return "bench.bpf.o failed to load";
	b.uprobe = bpf_program__attach_uprobe_opts(b.skel->progs.bench_uprobe_mark,
						      getpid(), exe, 0, &uo);
	if (!b.uprobe)
		return "uprobe attach failed";
	return NULL;
}

static __u64 uprobe_hits(void)
{
	struct { __u64 hits, index_id, tag, time_ns; } h = {};
	__u32 zero = 0;

	if (!b.skel || bpf_map__lookup_elem(b.skel->maps.hits, &zero,
					       sizeof(zero), &h, sizeof(h), 0))
		return 0;
	return h.hits;
}

static const char *npu_up(const char *why)
{
	struct npu_sqcq_opts qo = { .sz = sizeof(qo), .sq_depth = 1024,
				       .cq_depth = 1024 };

	if (why)
		return why;
	b.dev = npu_dev_open(NULL);
	if (!b.dev)
		return "npusim not loaded (no /dev/npusim_manager)";
	b.stream = npu_stream_create(b.dev, NULL);
	b.q = npu_sqcq_alloc(b.dev, &qo);
	return b.stream && b.q ? NULL : "npusim stream/SQ allocation failed";
}

static const char *loaded_mode(void)
{
	struct steptime_info inf;

	if (steptime__read_info(BENCH_PIN_DIR, &inf))
		return "(not loaded)";
	return steptime__attach_mode_str(inf.attach_mode);
}

static double best_of(const struct subject *s, long n)
{
	double best = 0, v;
	int k;

	for (k = 0; k < BENCH_BEST_OF; k++) {
		v = s->run(n / BENCH_BEST_OF > 0 ? n / BENCH_BEST_OF : 1);
		if (v > 0 && (best == 0 || v < best))
			best = v;
	}
	return best;
}

static void measure(struct subject *s, int ns, const struct bench_opts *o)
{
	int r, k, i;

	for (r = 0; r < o->rounds; r++) {
		double base = 0, v;

		/* Alternate the order: drift hits every subject alike. */
		for (k = 0; k < ns; k++) {
			i = r % 2 ? ns - 1 - k : k;
			if (s[i].skip)
				continue;
			v = best_of(&s[i], bench_iters(o, s[i].iters));
			/* A loop that failed has no figure: its row says so. */
			if (v <= 0)
				s[i].skip = "the timed loop failed (a send, sync "
					    "or receive failed)";
			else
				series_add(&s[i].v, v);
		}
		base = s[0].skip ? 0 : s[0].v.v[r];
		for (i = 0; i < ns; i++)
			if (!s[i].skip && base > 0)
				series_add(&s[i].ratio, s[i].v.v[r] / base);
	}
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct subject host[] = {
		SUBJ("clock_gettime(CLOCK_MONOTONIC) (baseline)", "vDSO", run_clock, 1000000),
		SUBJ("steptime host mark: steptime__mark(id, tag, NULL)",
		     "loaded on /dev/null", run_host_mark, 1000000),
		SUBJ("steptime_step__mark() (steps made in advance)", "",
		     run_step_mark, 1000000),
		SUBJ("aclprofGetStepTimestamp() (objects made in advance)",
		     "inside aclprofStart/Stop", run_acl_mark, 400000),
		SUBJ("CANN step: aclprofCreateStepInfo + START + END + Destroy",
		     "per step (2 marks)", run_acl_step, 200000),
		SUBJ("bpf_map_update_elem() on a pinned hash (per mark)",
		     "the syscall a naive mark costs", run_map_update, 100000),
		SUBJ("uprobe mark (BPF uprobe on a noinline function)",
		     "libbpf attach_uprobe_opts", run_uprobe, 20000),
	};
	struct subject vm[] = {
		SUBJ("clock_gettime(CLOCK_MONOTONIC) (baseline)", "vDSO", run_clock, 1000000),
		SUBJ("steptime host mark: steptime__mark(id, tag, NULL)",
		     "", run_host_mark, 1000000),
		SUBJ("steptime stream mark (host mark + place-holder on an npusim stream)",
		     "includes the place-holder's send and its probe",
		     run_stream_mark, 32768),
		SUBJ("CANN-style mark: one halSqTaskSend() of a step-mark SQE",
		     "the chip's default mode", run_placeholder, 32768),
	};
	struct subject *s = host;
	int ns = sizeof(host) / sizeof(host[0]), i;
	struct series hold_clk = {}, hold_mark = {}, hold_ratio = {};
	struct series lib_clk = {}, lib_mark = {}, lib_ratio = {};
	const char *why, *hold_why = NULL, *lib_why = NULL;
	double hold_bpf = -1;
	__u64 calls0, calls;
	char note[256];

	bench_parse(argc, argv, &o, "[--npusim]");
	setenv("STEPTIME_QUIET", "1", 1);
	libbpf_set_print(NULL);
	why = steptime_up(o.npusim, true);
	if (o.npusim) {
		s = vm;
		ns = sizeof(vm) / sizeof(vm[0]);
		s[1].skip = why;
		s[2].skip = s[3].skip = npu_up(why);
	} else {
		s[1].skip = s[2].skip = why;
		s[3].skip = s[4].skip = acl_up(why);
		s[5].skip = map_up();
		s[6].skip = uprobe_up();
	}

	calls0 = uprobe_hits();
	measure(s, ns, &o);
	calls = uprobe_hits() - calls0;
	if (!o.npusim)
		hold_why = why ?: run_holdout(&o, bench_iters(&o, 1000000),
					      &hold_clk, &hold_mark, &hold_ratio);
	if (!o.npusim && !hold_why)
		hold_bpf = holdout_bpf_ns(bench_iters(&o, 1000000));
	/* The step API alone: loaded again, no library probed. */
	if (!o.npusim)
		lib_why = why ?: steptime_up(false, false) ?:
			  run_holdout(&o, bench_iters(&o, 1000000), &lib_clk,
				      &lib_mark, &lib_ratio);

	bench_section(&o, "1. Mark cost",
		      "ns per mark (per step for the CANN step row); ratio to a "
		      "bare clock_gettime timed in the same rounds.",
		      "ratio to clock_gettime: median [min, max]");
	for (i = 0; i < ns; i++) {
		if (s[i].skip) {
			snprintf(note, sizeof(note), "not run: %s", s[i].skip);
			bench_row_text(s[i].name, "-", note);
			continue;
		}
		if (!o.npusim && s[i].run == run_uprobe) {
			snprintf(note, sizeof(note), "%s; BPF program ran %llu "
				 "times for %ld calls", s[i].note,
				 (unsigned long long)calls,
				 o.rounds * bench_iters(&o, s[i].iters));
			bench_row(s[i].name, &s[i].v, "ns/op", &s[i].ratio, note);
			continue;
		}
		bench_row(s[i].name, &s[i].v, "ns/op", &s[i].ratio, s[i].note);
	}
	/*
	 * The goal's check (bench/run.sh reads this row's ratio): the mark
	 * an app makes, against the clock read of that same process.
	 */
	if (!o.npusim && hold_why) {
		snprintf(note, sizeof(note), "not run: %s", hold_why);
		bench_row_text("holdout: aclprofGetStepTimestamp() in an app linked "
			       "with libsteptime.so", "-", note);
	} else if (!o.npusim) {
		bench_row("holdout baseline: clock_gettime(CLOCK_MONOTONIC) in that app",
			  &hold_clk, "ns/op", NULL, "its own baseline");
		snprintf(note, sizeof(note), "a process of its own "
			 "(bench/holdout.c); ratio to its own clock_gettime; "
			 "its library has the ring kick's uprobe (one every %d "
			 "marks), as an installed one", STEPTIME_MARK_RING / 2);
		bench_row("holdout: aclprofGetStepTimestamp() in an app linked "
			  "with libsteptime.so", &hold_mark, "ns/op", &hold_ratio,
			  note);
		if (hold_bpf >= 0) {
			char v[32];

			snprintf(v, sizeof(v), "%.1f ns/mark", hold_bpf);
			bench_row_text("holdout, of which: the ring kick's BPF "
				       "program per mark it consumed", v,
				       "one more pass of the holdout with BPF "
				       "stats on: consuming a mark (its step's "
				       "record made, finished, emitted) runs on "
				       "the marking thread, at the kick");
		} else {
			bench_row_text("holdout, of which: the ring kick's BPF "
				       "program per mark it consumed", "-",
				       "not run: no BPF stats or no kick program");
		}
	}
	/* The library's own cost: the issue 26 goal's other check. */
	if (!o.npusim && lib_why) {
		snprintf(note, sizeof(note), "not run: %s", lib_why);
		bench_row_text("holdout, the step API alone: "
			       "aclprofGetStepTimestamp() with no kick probe",
			       "-", note);
	} else if (!o.npusim) {
		bench_row("holdout, the step API alone: baseline clock_gettime",
			  &lib_clk, "ns/op", NULL, "its own baseline");
		bench_row("holdout, the step API alone: "
			  "aclprofGetStepTimestamp() with no kick probe",
			  &lib_mark, "ns/op", &lib_ratio,
			  "the same holdout, steptime loaded again with no "
			  "library probed: the library's work per mark, its "
			  "marks consumed by no one (no ioctl, no kick)");
	}
	if (o.npusim)
		bench_note("VM figures run under QEMU/TCG (10-50x slower than "
			      "native): compare ratios within this table only. "
			      "steptime attached in mode %s.", loaded_mode());
	else
		bench_note("steptime attached in mode %s.", loaded_mode());
	bench_end();

	acl_down(acl_dir);
	map_down();
	bpf_link__destroy(b.uprobe);
	bench_bpf__destroy(b.skel);
	npu_sqcq_free(b.q);
	npu_stream_destroy(b.stream);
	npu_dev_close(b.dev);
	steptime__unload(BENCH_PIN_DIR);
	return 0;
}
