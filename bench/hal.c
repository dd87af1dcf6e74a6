// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime's HAL probes on a real host's submission path: a process that
 * submits as CANN's runtime does, through libascend_hal.so's entry points
 * (the stand-in of sim/ascend_hal), to an npusim device in the chip's
 * default mode: 910B3 uio_t (a soft queue a kernel worker copies) and 950
 * uio_d (the hardware queue, which the kernel never sees).
 *
 * 8. The cost of one halSqTaskSend() of 1 SQE: with nothing attached, with
 *    an empty uprobe on it (bench.bpf.c), and with steptime loaded with
 *    --hal on the same library (its entry probe), timed in the same
 *    rounds. Goal: steptime's added ns within 1.2x of the empty uprobe's.
 * 9. The training loop of table 7 (bench/train.c: 1500 tasks of 1, 2 or 4
 *    SQEs per step, each its own halSqTaskSend(), stream START/END marks,
 *    a synchronize per step) through the library, with steptime loaded
 *    with --hal against not loaded. Goal: at most 1.005 device-bound:
 *    each SQE takes the device 3x what the host needs per task with
 *    steptime loaded. npusim's engine threads run at SCHED_FIFO meanwhile,
 *    as a device beside the host's CPUs (engines_fifo()).
 *
 * A round, per chip (every npusim device that chip meanwhile: one steptime
 * load parses one SQE layout): nothing attached, the empty uprobe, and one
 * steptime load serving both tables, in an order reversed on odd rounds.
 * Queues are allocated after each load or unload, as by an app started
 * then. Verdicts: met, NOT MET, or NO DATA when a figure is missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <npusim_abi.h>
#include <steptime/loader.h>
#include <steptime/steptime.h>
#include "../sim/ascend_hal/ascend_hal.h"
#include "../selftests/st_engines.h"
#include "bench.h"
#include "bench.skel.h"

#define DEV		0
#define TS		0
#define WAIT_MS		60000
#define CALL_DEPTH	1024
#define CHUNK		256	/* timed sends between two syncs */
#define CALLS		8192	/* per subject and round, before -s */
#define TRAIN_DEPTH	4096	/* a whole step's SQEs fit */
#define TASKS_PER_STEP	1500
#define STEPS		24
#define WARMUP		2
#define POLL_NS		10000

/*
 * S_STEPTIME: a plain load (the HAL's uprobes: a trap per task); S_BARE,
 * per call only: nothing loaded and the HAL's own function called
 * (dlsym), not the entry libsteptime (linked in) patched; S_JOURNAL: load
 * --journal (the sends journaled: no trap per task).
 */
enum { S_NONE, S_FLOOR, S_STEPTIME, S_BARE, S_JOURNAL, NSUBJ };
enum { R_HOST, R_DEVICE, NREG };

struct chip {
	const char *name;
	__u32 stars;
	__u32 dev_ns;			/* device-bound task time */
	struct series call[NSUBJ];	/* ns per call */
	struct series added[2];		/* floor, steptime: ns over none */
	struct series vs_floor;		/* steptime / floor, per call */
	struct series vs_added;		/* steptime / floor, ns added */
	struct series vs_bare;		/* --journal / bare, per call */
	struct series base[NREG], with[NREG], slow[NREG];
	struct series floor[NREG], floor_slow[NREG];	/* the empty uprobe */
	struct series jwith[NREG], jslow[NREG];		/* the journal */
};

static struct chip chips[] = {
	{ .name = "uio_t (910B3)", .stars = 1 },
	{ .name = "uio_d (950)", .stars = 2 },
};
#define NCHIPS	(sizeof(chips) / sizeof(chips[0]))

/* One stream, its SQ and logic CQ, on device DEV through the library. */
struct q {
	__u32 stars, depth, stream, sq, lcq, task, sent;
	__u64 index;
};

static int ctl = -1;
/* S_BARE: halSqTaskSend() as dlsym() finds it, the HAL's own. */
static drvError_t (*send_fn)(uint32_t, struct halTaskSendInfo *);
static char hal_path[PATH_MAX];
/* bench/vm.sh --icount: the guest clock counts instructions. */
static bool insns;
static __u64 step_index = 1;

static __u64 now_ms(void)
{
	return bench_now_ns() / 1000000;
}

static int devices(void)
{
	FILE *f = fopen("/sys/module/npusim/parameters/devices", "re");
	int n = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &n) != 1)
		n = 0;
	fclose(f);
	return n;
}

/*
 * Every device as chip @stars picks its SQ modes, or back to the module's
 * defaults (@chip false): one steptime load parses one SQE layout, so all
 * devices are the same chip. Retried while a device still frees the queues
 * of a closed process (EBUSY).
 */
static int set_chip(__u32 stars, bool chip)
{
	struct npusim_config c = {
		.mask = NPUSIM_CFG_STARS | NPUSIM_CFG_SQ_MODE,
		.stars = stars, .sq_mode = chip ? NPUSIM_SQ_MODE_CHIP : 0,
	};
	__u64 end = now_ms() + WAIT_MS;
	int n = devices() ?: 1, err;

	for (c.device = 0; (int)c.device < n; c.device++)
		while (ioctl(ctl, NPUSIM_IOC_SET_CONFIG, &c)) {
			err = -errno;
			if (errno != EBUSY || now_ms() > end)
				return err;
			usleep(10000);
		}
	return 0;
}

static int q_open(struct q *q, __u32 stars, __u32 depth)
{
	struct halResourceIdInputInfo rin = { .type = DRV_STREAM_ID };
	struct halResourceIdOutputInfo rout;
	struct halSqCqInputInfo in = {
		.type = DRV_NORMAL_TYPE, .sqeSize = TRS_SQE_SIZE,
		.cqeSize = 16, .sqeDepth = depth, .cqeDepth = depth,
	};
	struct halSqCqOutputInfo out;
	halDevOpenIn oin = { { 0 } };
	halDevOpenOut oout;

	memset(q, 0, sizeof(*q));
	q->stars = stars;
	q->depth = depth;
	if (halDeviceOpen(DEV, &oin, &oout))
		return -1;
	if (halResourceIdAlloc(DEV, &rin, &rout))
		return -1;
	q->stream = rout.resourceId;
	in.info[0] = q->stream;
	if (halSqCqAllocate(DEV, &in, &out))
		return -1;
	q->sq = out.sqId;
	memset(&in, 0, sizeof(in));
	in.type = DRV_LOGIC_TYPE;
	in.cqeSize = 32;
	in.cqeDepth = 1024;
	in.info[0] = q->stream;
	in.info[1] = gettid();
	if (halSqCqAllocate(DEV, &in, &out))
		return -1;
	q->lcq = out.cqId;
	return 0;
}

/* The close frees the process's queues, as the driver's does. */
static void q_close(void)
{
	halDevCloseIn in = { 0 };

	halDeviceClose(DEV, &in);
}

static void sqe_task(struct q *q, __u8 *p, __u32 dur_ns, bool report)
{
	memset(p, 0, TRS_SQE_SIZE);
	if (q->stars == 2) {
		struct trs_sqe_v2 *s = (void *)p;

		s->type = TRS_SQE_AICPU;
		s->flags = report ? TRS_SQE_V2_F_WR_CQE : 0;
		s->task_id = q->task++;
		s->task.sim_duration_ns = dur_ns;
	} else {
		struct trs_sqe *s = (void *)p;

		s->type = TRS_SQE_AICPU;
		s->flags = report ? TRS_SQE_F_WR_CQE : 0;
		s->rt_stream_id = q->stream;
		s->task_id = q->task++;
		s->task.sim_duration_ns = dur_ns;
	}
}

/* The place-holder rtProfilerTraceEx() submits for a stream mark. */
static void sqe_mark(struct q *q, __u8 *p, __u64 index_id, __u16 tag)
{
	memset(p, 0, TRS_SQE_SIZE);
	if (q->stars == 2) {
		struct trs_sqe_v2 *s = (void *)p;

		s->type = TRS_SQE_PLACE_HOLDER;
		s->task_id = q->task++;
		s->place_holder.task_type = TRS_TASK_PROFILER_TRACE_EX;
		s->place_holder.profiler_trace_id = index_id;
		s->place_holder.model_id = TRS_MODEL_ID_NONE;
		s->place_holder.tag_id = tag;
	} else {
		struct trs_sqe *s = (void *)p;

		s->type = TRS_SQE_PLACE_HOLDER;
		s->block_dim = TRS_TASK_PROFILER_TRACE_EX;
		s->rt_stream_id = q->stream;
		s->task_id = q->task++;
		s->place_holder.profiler_trace_id = index_id;
		s->place_holder.model_id = TRS_MODEL_ID_NONE;
		s->place_holder.tag_id = tag;
	}
}

static int send(struct q *q, __u8 *sqes, __u32 n)
{
	struct halTaskSendInfo s = {
		.type = DRV_NORMAL_TYPE, .tsId = TS, .sqId = q->sq,
		.sqe_addr = sqes, .sqe_num = n, .timeout = WAIT_MS,
	};

	if ((send_fn ? send_fn : halSqTaskSend)(DEV, &s))
		return -1;
	q->sent += n;
	return 0;
}

/* Not loaded (the baselines) is no error: the host mark says -ENODEV. */
static int host_mark(__u64 index, unsigned int tag)
{
	int err = steptime__mark(index, tag, NULL);

	return err && err != -ENODEV ? err : 0;
}

/*
 * A stream's synchronize as the runtime's: its @reports reports, then the
 * SQ head (read from the mapping) until it reaches the tail, polled every
 * POLL_NS (the end of a step seen late would count as slowdown).
 */
static int q_sync(struct q *q, __u32 reports)
{
	struct timespec ts = { .tv_nsec = POLL_NS };
	struct trs_logic_cqe cqe[16];
	__u64 end = now_ms() + WAIT_MS;
	__u32 got = 0;

	while (got < reports) {
		struct halReportRecvInfo r = {
			.type = DRV_LOGIC_TYPE, .tsId = TS, .cqId = q->lcq,
			.timeout = WAIT_MS, .cqe_addr = (__u8 *)cqe,
			.cqe_num = 16, .stream_id = q->stream,
			.task_id = 0xffffffff,
		};

		if (halCqReportRecv(DEV, &r))
			return -1;
		got += r.report_cqe_num;
	}
	for (;;) {
		struct halSqCqQueryInfo qi = {
			.type = DRV_NORMAL_TYPE, .tsId = TS, .sqId = q->sq,
			.prop = DRV_SQCQ_PROP_SQ_HEAD,
		};

		if (halSqCqQuery(DEV, &qi))
			return -1;
		if (qi.value[0] == q->sent % q->depth)
			return 0;
		if (now_ms() > end)
			return -1;
		nanosleep(&ts, NULL);
	}
}

/* ---------------------------------------------------------------------- */
/* 8. ns per halSqTaskSend()                                              */
/* ---------------------------------------------------------------------- */

/*
 * @n sends of one 1 ns SQE in chunks of CHUNK, each chunk a step (host
 * marks, untimed) followed by a synchronize (untimed); the quickest of
 * BENCH_BEST_OF slices, in ns per call; 0 on error.
 */
static double per_call(struct q *q, long n)
{
	long slice = n / BENCH_BEST_OF, i, k;
	double best = 0, v;
	__u8 sqe[TRS_SQE_SIZE];
	__u64 ns, t0;
	int b;

	for (b = 0; b < BENCH_BEST_OF; b++) {
		ns = 0;
		for (i = 0; i < slice; i += CHUNK) {
			if (host_mark(++step_index, STEPTIME_TAG_START))
				return 0;
			sqe_task(q, sqe, 1, false);
			t0 = bench_now_ns();
			for (k = 0; k < CHUNK; k++)
				if (send(q, sqe, 1))
					return 0;
			ns += bench_now_ns() - t0;
			if (host_mark(step_index, STEPTIME_TAG_END) ||
			    q_sync(q, 0))
				return 0;
		}
		v = (double)ns / i;
		if (!best || v < best)
			best = v;
	}
	return best;
}

static double chip_per_call(struct chip *c, const struct bench_opts *o)
{
	struct q q;
	double v = 0;

	if (!q_open(&q, c->stars, CALL_DEPTH))
		v = per_call(&q, bench_iters(o, CALLS));
	q_close();
	return v;
}

/* ---------------------------------------------------------------------- */
/* 9. the training loop                                                   */
/* ---------------------------------------------------------------------- */

struct policy_ctx {
	int policy, err;
	struct sched_param sp;
};

static void engine_policy(pid_t pid, void *arg)
{
	struct policy_ctx *p = arg;

	if (sched_setscheduler(pid, p->policy, &p->sp))
		p->err = -errno;
}

/*
 * npusim's engine threads ("npusim/DEV.TS") at SCHED_FIFO (@fifo) or back
 * to SCHED_OTHER. A device runs beside the host's CPUs, not on them; at a
 * fair share on the guest's one vCPU, a submitting thread that never
 * sleeps holds off the poll of its mapped SQ for as long as the scheduler
 * lets it, and the device idles that long: step times then jump by half
 * a millisecond with the interleaving, not with the cost measured.
 * Return: the threads changed; -errno when one could not be
 * (st_engines.h finds them).
 */
static int engines_fifo(bool fifo)
{
	struct policy_ctx p = {
		.policy = fifo ? SCHED_FIFO : SCHED_OTHER,
		.sp.sched_priority = fifo ? 1 : 0,
	};
	int n = st_engines_each(engine_policy, &p);

	return n < 0 ? n : p.err ?: n;
}

/* Task i's SQE count, as bench/train.c: 1, every 10th 2, every 20th 4. */
static unsigned int sqes_of(unsigned int i)
{
	return i % 20 == 19 ? 4 : i % 10 == 9 ? 2 : 1;
}

/* aclprofGetStepTimestamp(): a host mark and a place-holder. */
static int mark(struct q *q, __u64 index, __u16 tag)
{
	__u8 sqe[TRS_SQE_SIZE];

	if (host_mark(index, tag))
		return -1;
	sqe_mark(q, sqe, index, tag);
	return send(q, sqe, 1);
}

/* One step; its last task's report is the step's one (sparse). */
static int one_step(struct q *q, __u64 index, __u32 dur_ns)
{
	__u8 sqe[4 * TRS_SQE_SIZE];
	unsigned int i, k, n;

	if (mark(q, index, STEPTIME_TAG_START))
		return -1;
	for (i = 0; i < TASKS_PER_STEP; i++) {
		n = sqes_of(i);
		for (k = 0; k < n; k++)
			sqe_task(q, sqe + k * TRS_SQE_SIZE, dur_ns,
				 i == TASKS_PER_STEP - 1 && k == n - 1);
		if (send(q, sqe, n))
			return -1;
	}
	if (mark(q, index, STEPTIME_TAG_END))
		return -1;
	return q_sync(q, 1);
}

/* The quickest of STEPS steps on a fresh queue, in ns; 0 on error. */
static double run_steps(struct chip *c, __u32 dur_ns)
{
	struct series st = { .n = 0 };
	double best = 0;
	struct q q;
	__u64 t;
	int i;

	if (engines_fifo(true) <= 0) {
		engines_fifo(false);	/* those changed before one failed */
		return 0;
	}
	if (q_open(&q, c->stars, TRAIN_DEPTH))
		goto out;
	for (i = 0; i < WARMUP + STEPS; i++) {
		t = bench_now_ns();
		if (one_step(&q, ++step_index, dur_ns))
			goto out;
		if (i >= WARMUP)
			series_add(&st, (double)(bench_now_ns() - t));
	}
	best = series_min(&st);
out:
	q_close();
	engines_fifo(false);
	return best;
}

/* ---------------------------------------------------------------------- */

static struct bench_bpf *floor_up(void)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "halSqTaskSend");
	struct bench_bpf *sk = bench_bpf__open();
	struct bpf_program *p;

	if (!sk)
		return NULL;
	bpf_object__for_each_program(p, sk->obj)
		bpf_program__set_autoload(p, p == sk->progs.floor_uprobe_hal);
	if (bench_bpf__load(sk))
		goto fail;
	/* As steptime's: every process mapping the library. */
	sk->links.floor_uprobe_hal =
		bpf_program__attach_uprobe_opts(sk->progs.floor_uprobe_hal, -1,
						hal_path, 0, &uo);
	if (sk->links.floor_uprobe_hal)
		return sk;
fail:
	bench_bpf__destroy(sk);
	return NULL;
}

static int steptime_up(char *mode, size_t len, bool journal)
{
	struct steptime_load_opts lo = {
		.sz = sizeof(lo), .pin_dir = BENCH_PIN_DIR, .map_gid = -1,
		.hal = hal_path, .journal = journal,
	};
	struct steptime_info inf;
	int err;

	steptime__unload(BENCH_PIN_DIR);
	err = steptime__load(&lo);
	if (err)
		return err;
	if (steptime__read_info(BENCH_PIN_DIR, &inf) || inf.nhal != 1) {
		steptime__unload(BENCH_PIN_DIR);
		return -ENOENT;
	}
	snprintf(mode, len, "%s", steptime__attach_mode_str(inf.attach_mode));
	return 0;
}

/*
 * BENCH_HAL_PROFILE: where a call's BPF time goes (run-time statistics on,
 * so not timed with the rounds): each program's runs and ns per call of
 * an extra per-call run, printed to stderr.
 */
struct calls {
	struct chip *c;
	const struct bench_opts *o;
};

static void calls_run(void *arg)
{
	struct calls *k = arg;

	chip_per_call(k->c, k->o);
}

static void profile_calls(struct chip *c, const struct bench_opts *o)
{
	struct steptime_prog d[BENCH_MAX_PROGS];
	long calls = bench_iters(o, CALLS) / BENCH_BEST_OF * BENCH_BEST_OF;
	struct calls k = { c, o };
	int n = bench_prog_delta(calls_run, &k, d), i;

	if (n <= 0)
		fprintf(stderr, "hal: profile: no statistics: %s\n",
			n ? strerror(-n) : "no programs");
	for (i = 0; i < n; i++)
		if (d[i].run_cnt)
			fprintf(stderr, "hal: profile %s: %s: %.2f runs per call, "
				"%.0f ns per run\n", c->name, d[i].name,
				(double)d[i].run_cnt / calls,
				(double)d[i].run_time_ns / d[i].run_cnt);
}

/* One side of a round on chip @c: subject @s's per-call figure, the loop's. */
static int side(int s, struct chip *c, const struct bench_opts *o,
		double *call, double loop[][NREG], char *mode, size_t len)
{
	struct bench_bpf *sk = NULL;
	int k;

	if (s == S_FLOOR && !(sk = floor_up()))
		return -1;
	if (s == S_STEPTIME && steptime_up(mode, len, false))
		return -1;
	/* This process journals its sends: libsteptime is linked in. */
	if (s == S_JOURNAL && steptime_up(mode, len, true))
		return -1;
	if (s == S_STEPTIME && getenv("BENCH_HAL_PROFILE"))
		profile_calls(c, o);
	if (s == S_BARE)
		send_fn = (drvError_t (*)(uint32_t, struct halTaskSendInfo *))
			  dlsym(RTLD_DEFAULT, "halSqTaskSend");
	call[s] = s == S_BARE && !send_fn ? 0 : chip_per_call(c, o);
	send_fn = NULL;
	for (k = 0; k < NREG && s != S_BARE; k++)
		loop[s][k] = run_steps(c, k == R_HOST ? 1 : c->dev_ns);
	bench_bpf__destroy(sk);
	if (s == S_STEPTIME || s == S_JOURNAL)
		steptime__unload(BENCH_PIN_DIR);
	return 0;
}

static void round_add(double call[][NSUBJ], double loop[][NSUBJ][NREG])
{
	size_t c;
	int s, k;

	for (c = 0; c < NCHIPS; c++) {
		struct chip *h = &chips[c];
		double *v = call[c];

		for (s = 0; s < NSUBJ; s++)
			if (v[s])
				series_add(&h->call[s], v[s]);
		if (v[S_BARE] && v[S_JOURNAL])
			series_add(&h->vs_bare, v[S_JOURNAL] / v[S_BARE]);
		if (v[S_NONE] && v[S_FLOOR] && v[S_STEPTIME]) {
			series_add(&h->added[0], v[S_FLOOR] - v[S_NONE]);
			series_add(&h->added[1], v[S_STEPTIME] - v[S_NONE]);
			series_add(&h->vs_floor, v[S_STEPTIME] / v[S_FLOOR]);
			if (v[S_FLOOR] > v[S_NONE])
				series_add(&h->vs_added, (v[S_STEPTIME] - v[S_NONE]) /
					   (v[S_FLOOR] - v[S_NONE]));
		}
		for (k = 0; k < NREG; k++) {
			double *l0 = &loop[c][S_NONE][k];

			if (!*l0)
				continue;
			series_add(&h->base[k], *l0 / 1e6);
			if (loop[c][S_STEPTIME][k]) {
				series_add(&h->with[k],
					   loop[c][S_STEPTIME][k] / 1e6);
				series_add(&h->slow[k],
					   loop[c][S_STEPTIME][k] / *l0);
			}
			if (loop[c][S_JOURNAL][k]) {
				series_add(&h->jwith[k],
					   loop[c][S_JOURNAL][k] / 1e6);
				series_add(&h->jslow[k],
					   loop[c][S_JOURNAL][k] / *l0);
			}
			if (loop[c][S_FLOOR][k]) {
				series_add(&h->floor[k],
					   loop[c][S_FLOOR][k] / 1e6);
				series_add(&h->floor_slow[k],
					   loop[c][S_FLOOR][k] / *l0);
			}
		}
	}
}

/* "met", "NOT MET", or "NO DATA" when the figure is missing. */
static const char *verdict(const struct series *s, double limit)
{
	if (!s->n)
		return "NO DATA";
	return series_med(s) <= limit ? "met" : "NOT MET";
}

static void goal_row(const char *what, const struct series *s, double limit,
		     int decimals, const char *unit)
{
	char v[64] = "n/a", note[96];

	if (s->n)
		snprintf(v, sizeof(v), "%.*f%s", decimals, series_med(s), unit);
	snprintf(note, sizeof(note), "%s (goal: <= %g; median of %d rounds)",
		 verdict(s, limit), limit, s->n);
	bench_row_text(what, v, note);
}

static void report_calls(const struct bench_opts *o, const char *mode)
{
	static const char *const sname[NSUBJ] = {
		"no probe", "empty uprobe (not steptime)",
		"steptime --hal", "bare (the HAL's own function, dlsym)",
		"steptime --journal",
	};
	const char *unit = insns ? "insns/call" : "ns/call";
	const char *cost = insns ? "insns" : "ns";
	char what[192];
	size_t c;
	int s;

	bench_section(o, "8. HAL probe cost per halSqTaskSend()",
		      "ns per halSqTaskSend() of 1 SQE through libascend_hal.so "
		      "(sim/ascend_hal) in the chip's default mode, the quickest "
		      "of 5 slices per round; nothing attached, an empty uprobe "
		      "on it, steptime loaded with --hal on the library (an "
		      "entry probe there), in the same rounds. Ratio column: to "
		      "the empty uprobe per call; on the added rows, steptime's "
		      "ns added to the empty uprobe's. Goal: steptime's added "
		      "cost within 1.2x of the empty uprobe's. In a QEMU -icount "
		      "guest every ns is a guest instruction executed: the "
		      "counts repeat from round to round. The process links "
		      "libsteptime, which patches its halSqTaskSend() entry: "
		      "bare calls the HAL's own function (dlsym), nothing "
		      "loaded; steptime --journal: only halSqCqAllocate() "
		      "probed, the sends journaled (ratio: to bare); goal: "
		      "at most 1.2x bare.",
		      "ratio to the empty uprobe: median [min, max]");
	for (c = 0; c < NCHIPS; c++) {
		struct chip *h = &chips[c];

		for (s = 0; s < NSUBJ; s++) {
			snprintf(what, sizeof(what), "%s: %s: halSqTaskSend()",
				 h->name, sname[s]);
			if (!h->call[s].n) {
				bench_row_text(what, "-", "not run: attach, load or a send failed");
				continue;
			}
			bench_row(what, &h->call[s], unit,
				  s == S_STEPTIME ? &h->vs_floor :
				  s == S_JOURNAL ? &h->vs_bare : NULL,
				  s == S_STEPTIME ? mode :
				  s == S_JOURNAL ? "ratio: to bare" : "");
		}
		snprintf(what, sizeof(what), "%s: %s added by the empty uprobe",
			 h->name, cost);
		if (h->added[0].n)
			bench_row(what, &h->added[0], unit, NULL, "");
		snprintf(what, sizeof(what), "%s: %s added by steptime --hal",
			 h->name, cost);
		if (h->added[1].n)
			bench_row(what, &h->added[1], unit, &h->vs_added,
				  insns ? "ratio: to the uprobe's insns added" :
					  "ratio: to the uprobe's ns added");
		snprintf(what, sizeof(what), "goal: %s: steptime's added %s "
			 "per halSqTaskSend() within 1.2x of the empty uprobe's",
			 h->name, cost);
		goal_row(what, &h->vs_added, 1.2, 2, "x");
		snprintf(what, sizeof(what), "%s: halSqTaskSend() with steptime "
			 "per call within 1.2x of it with the empty uprobe",
			 h->name);
		goal_row(what, &h->vs_floor, 1.2, 2, "x");
		snprintf(what, sizeof(what), "goal: %s: halSqTaskSend() with "
			 "steptime --journal per call within 1.2x of the bare "
			 "call", h->name);
		goal_row(what, &h->vs_bare, 1.2, 2, "x");
	}
	bench_end();
}

static void report_loop(const struct bench_opts *o, const char *mode)
{
	static const char *const rname[NREG] = {
		"host-bound (1 ns tasks)", "device-bound",
	};
	char what[192], note[192];
	size_t c;
	int k;

	bench_section(o, "9. Training-loop slowdown through libascend_hal.so",
		      "Table 7's loop (1500 tasks per step, one halSqTaskSend() "
		      "each of 1, 2 or 4 SQEs, stream START/END marks, one "
		      "report per step, a synchronize on the mapped SQ head) "
		      "through libascend_hal.so in the chip's default mode; the "
		      "quickest of 24 steps per side and round, with steptime "
		      "loaded with --hal, and with --journal, "
		      "against not loaded in the same round (the process "
		      "links libsteptime, whose journal counts whether "
		      "loaded or not). "
		      "The floor: the same loop with only an empty uprobe on "
		      "halSqTaskSend(), which any probe there costs. "
		      "Device-bound: each SQE takes the device 3x the host's "
		      "time per task with steptime loaded, so that every side "
		      "waits for the device; npusim's engine threads run at "
		      "SCHED_FIFO for the loop, as a device beside the host's "
		      "CPUs. Goals: the journal at most 1.05x host-bound; "
		      "at most 1.005 device-bound.",
		      "with / without");
	for (c = 0; c < NCHIPS; c++) {
		struct chip *h = &chips[c];

		snprintf(note, sizeof(note), "%u ns per SQE (3x the host's "
			 "per task with steptime)",
			 h->dev_ns);
		snprintf(what, sizeof(what), "%s: device-bound task time",
			 h->name);
		bench_row_text(what, h->dev_ns ? note : "-",
			       h->dev_ns ? NULL : "not run: a step failed");
		for (k = 0; k < NREG; k++) {
			snprintf(what, sizeof(what), "%s, %s: step time with "
				 "steptime --hal", h->name, rname[k]);
			if (!h->slow[k].n) {
				bench_row_text(what, "-", "not run: load or a step failed");
				continue;
			}
			snprintf(note, sizeof(note), "baseline %.2f ms; ratio "
				 "%.4f (goal: <= 1.005); %s", series_med(&h->base[k]),
				 series_med(&h->slow[k]), mode);
			bench_row(what, &h->with[k], "ms", &h->slow[k], note);
			snprintf(what, sizeof(what), "%s, %s: step time with "
				 "the empty uprobe (the floor, not steptime)",
				 h->name, rname[k]);
			if (!h->floor_slow[k].n) {
				bench_row_text(what, "-", "not run: attach or a step failed");
				continue;
			}
			bench_row(what, &h->floor[k], "ms", &h->floor_slow[k],
				  "ratio: to not loaded");
		}
		for (k = 0; k < NREG; k++) {
			snprintf(what, sizeof(what), "%s, %s: step time with "
				 "steptime --journal", h->name,
				 rname[k]);
			if (!h->jslow[k].n) {
				bench_row_text(what, "-", "not run: load or a step failed");
				continue;
			}
			bench_row(what, &h->jwith[k], "ms", &h->jslow[k],
				  "ratio: to not loaded");
		}
		snprintf(what, sizeof(what), "goal: %s: device-bound: training "
			 "step with steptime --hal at most 1.005x", h->name);
		goal_row(what, &h->slow[R_DEVICE], 1.005, 4, "");
		snprintf(what, sizeof(what), "goal: %s: host-bound: training "
			 "step with steptime --journal at most 1.05x", h->name);
		goal_row(what, &h->jslow[R_HOST], 1.05, 4, "");
		snprintf(what, sizeof(what), "goal: %s: device-bound: training "
			 "step with steptime --journal at most 1.005x", h->name);
		goal_row(what, &h->jslow[R_DEVICE], 1.005, 4, "");
	}
	bench_end();
}

/* libascend_hal.so beside the bench's build directory ($O). */
static int find_hal(void)
{
	ssize_t n = readlink("/proc/self/exe", hal_path, sizeof(hal_path) - 1);
	char *slash;
	int i;

	if (n <= 0)
		return -1;
	hal_path[n] = 0;
	for (i = 0; i < 2; i++) {
		slash = strrchr(hal_path, '/');
		if (!slash)
			return -1;
		*slash = 0;
	}
	if (strlen(hal_path) + sizeof("/libascend_hal.so") > sizeof(hal_path))
		return -1;
	strcat(hal_path, "/libascend_hal.so");
	return access(hal_path, R_OK);
}

/*
 * Device-bound: the device takes 3x what the host needs to submit with
 * steptime loaded, the slowest side, so that the regime holds on every
 * side. In the guest, npusim's engine shares the vCPU with the host: at
 * 3x the host's time without steptime, steptime's side would be short of
 * CPU, not waiting for the device.
 */
static void device_times(void)
{
	char mode[64];
	double t, host;
	size_t c;
	int i;

	for (c = 0; c < NCHIPS; c++) {
		host = 0;
		if (set_chip(chips[c].stars, true) ||
		    steptime_up(mode, sizeof(mode), false))
			continue;
		for (i = 0; i < 3; i++) {
			t = run_steps(&chips[c], 1);
			if (t && (!host || t < host))
				host = t;
		}
		steptime__unload(BENCH_PIN_DIR);
		chips[c].dev_ns = (__u32)(3 * host / TASKS_PER_STEP);
	}
}

int main(int argc, char **argv)
{
	double call[NCHIPS][NSUBJ], loop[NCHIPS][NSUBJ][NREG];
	static const int order[2][NSUBJ] = {
		{ S_NONE, S_FLOOR, S_STEPTIME, S_BARE, S_JOURNAL },
		{ S_JOURNAL, S_BARE, S_STEPTIME, S_FLOOR, S_NONE },
	};
	char mode[64] = "steptime not loaded";
	struct bench_opts o;
	const char *why;
	size_t c;
	int r, i;

	bench_parse(argc, argv, &o, "");
	insns = getenv("BENCH_HAL_INSNS");
	setenv("STEPTIME_QUIET", "1", 1);
	setenv("STEPTIME_PIN_DIR", BENCH_PIN_DIR, 1);
	libbpf_set_print(NULL);
	why = bench_cannot_load();
	ctl = open("/dev/" NPUSIM_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (!why && ctl < 0)
		why = "npusim not loaded";
	if (!why && find_hal())
		why = "no libascend_hal.so beside the bench's directory";
	if (why) {
		bench_section(&o, "8. HAL probe cost per halSqTaskSend()", NULL, NULL);
		bench_row_text("halSqTaskSend()", "-", why);
		bench_end();
		return 1;
	}
	steptime__unload(BENCH_PIN_DIR);
	device_times();
	for (r = 0; r < o.rounds; r++) {
		memset(call, 0, sizeof(call));
		memset(loop, 0, sizeof(loop));
		/* A load per chip: every device is that chip meanwhile. */
		for (c = 0; c < NCHIPS; c++) {
			if (set_chip(chips[c].stars, true)) {
				fprintf(stderr, "hal: %s: SET_CONFIG failed\n",
					chips[c].name);
				continue;
			}
			for (i = 0; i < NSUBJ; i++)
				if (side(order[r & 1][i], &chips[c], &o, call[c],
					 loop[c], mode, sizeof(mode)))
					fprintf(stderr, "hal: round %d %s: subject "
						"%d could not attach\n", r,
						chips[c].name, order[r & 1][i]);
		}
		for (i = 0; i < (int)NCHIPS; i++)
			fprintf(stderr, "hal: round %d %s: %.0f / %.0f / %.0f "
				"/ %.0f / %.0f ns per call; loop %.2f / %.2f / %.2f ms "
				"host-bound, %.2f / %.2f / %.2f ms device-bound "
				"(none / uprobe / steptime / bare / --journal)\n", r, chips[i].name,
				call[i][0], call[i][1], call[i][2], call[i][3],
				call[i][4],
				loop[i][S_NONE][0] / 1e6, loop[i][S_FLOOR][0] / 1e6,
				loop[i][S_STEPTIME][0] / 1e6,
				loop[i][S_NONE][1] / 1e6, loop[i][S_FLOOR][1] / 1e6,
				loop[i][S_STEPTIME][1] / 1e6);
		round_add(call, loop);
	}
	snprintf(mode + strlen(mode), sizeof(mode) - strlen(mode), "%s",
		 strcmp(mode, "steptime not loaded") ? " attach mode" : "");
	report_calls(&o, mode);
	report_loop(&o, mode);
	set_chip(1, false);
	close(ctl);
	return 0;
}
