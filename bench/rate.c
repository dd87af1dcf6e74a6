// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Throughput through npusim (VM): tasks per second and CPU time per 100,000
 * tasks, without steptime and with it attached and `steptime record`
 * draining its events, in the same rounds; and every loss counter, which
 * must stay zero.
 *
 * The workload: one process per CPU, each on its own SQ, submits steps of
 * STEP_TASKS tasks in SENDs of B SQEs (one report per SEND), host-marked
 * START/END, keeping up to INFLIGHT tasks queued while it receives the
 * reports. npusim runs with short tasks on many units so the submission
 * path, not the simulated device, sets the pace.
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <bpf/libbpf.h>
#include <steptime/steptime.h>
#include <npusim/hal.h>
#include <steptime/loader.h>
#include "bench.h"

#define STEP_TASKS	256
#define INFLIGHT	512
#define TASK_NS		100	/* simulated task time */
#define MAX_THREADS	8

extern char **environ;

static const unsigned int batches[] = { 1, 16, 256 };
#define NB	(sizeof(batches) / sizeof(batches[0]))

/* One per worker process, in memory shared with the parent. */
struct worker {
	struct npu_sqcq *q;
	unsigned int batch;
	__u64 deadline;
	__u64 tasks;
	int err;
};

static struct npu_dev *dev;
static int nthreads = 2;
static struct worker *workers;

static int recv_some(struct worker *w, __u64 *inflight)
{
	struct trs_logic_cqe cqe[64];
	int r = npu_sqcq_recv(w->q, cqe, 64, 10000, NULL);

	if (r < 0)
		return r;
	*inflight -= (__u64)r * w->batch;
	return 0;
}

static void work(struct worker *w)
{
	struct trs_sqe sqe[256];
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .duration_ns = TASK_NS };
	__u64 inflight = 0, index;
	unsigned int i, k;
	int err = 0;

	d.stream_id = (__u16)npu_sqcq_sq_id(w->q);
	/* One task per SQE: its own task id, as the runtime numbers them. */
	for (i = 0; i < w->batch; i++) {
		d.wr_cqe = i == w->batch - 1;
		d.task_id = (__u16)i;
		npu_sqe_task(&sqe[i], &d);
	}
	while (!err && bench_now_ns() < w->deadline) {
		index = w->tasks / STEP_TASKS + 1;
		steptime__mark(index, STEPTIME_TAG_START, NULL);
		for (k = 0; !err && k < STEP_TASKS; k += w->batch) {
			while (!err && inflight + w->batch > INFLIGHT)
				err = recv_some(w, &inflight);
			if (err)
				break;
			err = npu_sqcq_send(w->q, sqe, w->batch, -1);
			if (err >= 0) {
				err = 0;
				inflight += w->batch;
				w->tasks += w->batch;
			}
		}
		steptime__mark(index, STEPTIME_TAG_END, NULL);
	}
	while (!err && inflight)
		err = recv_some(w, &inflight);
	w->err = err;
}

/* A process of its own: steps are per process, as in training. */
static int worker_main(struct worker *w)
{
	struct npu_sqcq_opts qo = { .sz = sizeof(qo), .sq_depth = 1024,
				    .cq_depth = 1024 };
	struct npu_dev *d = npu_dev_open(NULL);

	w->q = d ? npu_sqcq_alloc(d, &qo) : NULL;
	if (!w->q) {
		w->err = -errno;
		return 1;
	}
	work(w);
	npu_sqcq_free(w->q);
	npu_dev_close(d);
	return 0;
}

struct run {
	double rate;		/* tasks/s */
	double cpu;		/* process CPU ns per 100k tasks */
	double sys;		/* system busy ns per 100k tasks */
	__u64 tasks;
	int err;
};

static __u64 children_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru))
		return 0;
	return ((__u64)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       ((__u64)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

static void run_once(unsigned int batch, double secs, struct run *out)
{
	__u64 t0, c0, s0, dt;
	pid_t pid[MAX_THREADS];
	int i, st;

	memset(out, 0, sizeof(*out));
	fflush(NULL);
	t0 = bench_now_ns();
	c0 = children_cpu_ns();
	s0 = bench_sys_busy_ns();
	for (i = 0; i < nthreads; i++) {
		workers[i].batch = batch;
		workers[i].deadline = t0 + (__u64)(secs * 1e9);
		workers[i].tasks = 0;
		workers[i].err = 0;
		pid[i] = fork();
		if (pid[i] == 0)
			_exit(worker_main(&workers[i]));
		if (pid[i] < 0)
			workers[i].err = -errno;
	}
	for (i = 0; i < nthreads; i++) {
		if (pid[i] > 0)
			waitpid(pid[i], &st, 0);
		out->tasks += workers[i].tasks;
		if (workers[i].err)
			out->err = workers[i].err;
	}
	dt = bench_now_ns() - t0;
	if (!out->tasks)
		return;
	out->rate = out->tasks * 1e9 / dt;
	out->cpu = (double)(children_cpu_ns() - c0) * 1e5 / out->tasks;
	out->sys = (double)(bench_sys_busy_ns() - s0) * 1e5 / out->tasks;
}

static pid_t record_start(void)
{
	const char *cli = getenv("STEPTIME_CLI");
	char *argv[] = { (char *)(cli ? cli : "build/steptime"), "record",
			 "--pin", BENCH_PIN_DIR, "-o", "/dev/null", NULL };
	pid_t pid;

	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ))
		return -1;
	usleep(300000);	/* its ring buffer is open before the first event */
	return pid;
}

static void record_stop(pid_t pid)
{
	int st;

	if (pid <= 0)
		return;
	/* Let it drain what the last steps emitted. */
	usleep(200000);
	kill(pid, SIGINT);
	waitpid(pid, &st, 0);
}

/* Counters that mean something was lost or not tracked: the ABI's list. */
#define LOSS_NAME(f) #f,
static const char *const loss_names[] = { STEPTIME_LOSSES(LOSS_NAME) };
#undef LOSS_NAME

#define CNT_NAME(f) (#f),
static const char *const cnt_names[] = { STEPTIME_COUNTERS(CNT_NAME) };
#undef CNT_NAME

static bool is_loss(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(loss_names) / sizeof(loss_names[0]); i++)
		if (!strcmp(name, loss_names[i]))
			return true;
	return false;
}

#define NCNT	(sizeof(cnt_names) / sizeof(cnt_names[0]))

/*
 * The loss counters that moved from @a to @b, added to @by (per counter)
 * and said in @buf. Return: their sum.
 */
static __u64 losses(const struct steptime_counters *a,
		    const struct steptime_counters *b, __u64 *by, char *buf,
		    size_t len)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;
	size_t i, n = 0;
	__u64 sum = 0;

	buf[0] = '\0';
	for (i = 0; i < NCNT; i++) {
		if (!is_loss(cnt_names[i]) || y[i] == x[i])
			continue;
		sum += y[i] - x[i];
		by[i] += y[i] - x[i];
		if (n < len)
			n += snprintf(buf + n, len - n, "%s %llu ", cnt_names[i],
				      (unsigned long long)(y[i] - x[i]));
	}
	return sum;
}

/* The loss counters that moved (@by), or that none of the ABI's did. */
static void loss_list(const __u64 *by, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < NCNT && n < len; i++)
		if (by[i])
			n += snprintf(buf + n, len - n, "%s%s %llu",
				      n ? ", " : "NOT ZERO: ", cnt_names[i],
				      (unsigned long long)by[i]);
	if (!n)
		snprintf(buf, len, "all 0 (%zu loss counters)",
			 sizeof(loss_names) / sizeof(loss_names[0]));
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	/*
	 * kio SQs, named: the table is SEND's throughput; the chip's default
	 * (a mapped SQ) makes no SEND (table 9 measures the HAL's path).
	 */
	struct npusim_config saved, cfg = {
		.mask = NPUSIM_CFG_UNITS | NPUSIM_CFG_DEFAULT_DURATION |
			NPUSIM_CFG_UIO_MODE | NPUSIM_CFG_SQ_MODE,
		.units = NPUSIM_MAX_UNITS,
		.default_duration_ns = TASK_NS,
		.uio_mode = NPUSIM_UIO_KIO,
		.sq_mode = NPUSIM_SQ_MODE_CONFIG,
	};
	struct steptime_load_opts lo = {
		.sz = sizeof(lo), .pin_dir = BENCH_PIN_DIR, .map_gid = -1,
	};
	struct series rate[NB][2] = {}, cpu[NB][2] = {}, sys[NB][2] = {};
	struct series rr[NB] = {}, cr[NB] = {}, sr[NB] = {};
	struct steptime_counters c0, c1;
	struct run base[NB], sub[NB];
	__u64 lost[NB] = {}, counted[NB] = {}, submitted[NB] = {};
	__u64 in_step[NB] = {}, sim[NB] = {}, lost_by[NB][NCNT] = {};
	struct npusim_stats s0, s1;
	bool sim_ok = true;
	char why[512] = "", buf[512], what[160], mode[32] = "?", names[256];
	const char *skip;
	double secs;
	unsigned int i;
	int r, err;
	pid_t rec;

	bench_parse(argc, argv, &o, "");
	secs = 1.0 * o.scale;
	setenv("STEPTIME_QUIET", "1", 1);
	setenv("STEPTIME_PIN_DIR", BENCH_PIN_DIR, 1);
	libbpf_set_print(NULL);
	nthreads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (nthreads < 1 || nthreads > MAX_THREADS)
		nthreads = nthreads < 1 ? 1 : MAX_THREADS;
	dev = npu_dev_open(NULL);
	if (!dev) {
		fprintf(stderr, "bench_rate: npusim: %s\n", strerror(errno));
		return 1;
	}
	if (npu_sim_get_config(dev, &saved) || npu_sim_set_config(dev, &cfg)) {
		fprintf(stderr, "bench_rate: npusim config failed\n");
		return 1;
	}
	workers = mmap(NULL, sizeof(*workers) * MAX_THREADS, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (workers == MAP_FAILED)
		return 1;
	skip = bench_cannot_load();

	for (r = 0; !skip && r < o.rounds; r++) {
		for (i = 0; i < NB; i++)
			run_once(batches[i], secs, &base[i]);
		steptime__unload(BENCH_PIN_DIR);
		err = steptime__load(&lo);
		if (err) {
			snprintf(why, sizeof(why), "steptime load: %s",
				 strerror(-err));
			skip = why;
			break;
		}
		if (r == 0) {
			struct steptime_info inf;

			if (!steptime__read_info(BENCH_PIN_DIR, &inf))
				snprintf(mode, sizeof(mode), "%s",
					 steptime__attach_mode_str(inf.attach_mode));
		}
		rec = record_start();
		for (i = 0; i < NB; i++) {
			/* What npusim received is the truth tasks are counted against. */
			if (npu_sim_stats(dev, &s0))
				sim_ok = false;
			steptime__read_counters(BENCH_PIN_DIR, &c0);
			run_once(batches[i], secs, &sub[i]);
			steptime__read_counters(BENCH_PIN_DIR, &c1);
			if (npu_sim_stats(dev, &s1))
				sim_ok = false;
			sim[i] += s1.submitted - s0.submitted;
			lost[i] += losses(&c0, &c1, lost_by[i], buf,
					  sizeof(buf));
			counted[i] += c1.tasks - c0.tasks;
			in_step[i] += c1.tasks_in_step - c0.tasks_in_step;
			submitted[i] += sub[i].tasks;
			if (buf[0])
				fprintf(stderr, "bench_rate: B=%u round %d: %s\n",
					batches[i], r, buf);
		}
		record_stop(rec);
		/* Events of the last steps may still be in flight: count them. */
		steptime__read_counters(BENCH_PIN_DIR, &c0);
		lost[NB - 1] += c0.events_dropped - c1.events_dropped;
		lost_by[NB - 1][offsetof(struct steptime_counters,
					 events_dropped) / sizeof(__u64)] +=
			c0.events_dropped - c1.events_dropped;
		steptime__unload(BENCH_PIN_DIR);
		for (i = 0; i < NB; i++) {
			if (base[i].err || sub[i].err || !base[i].tasks ||
			    !sub[i].tasks) {
				snprintf(why, sizeof(why), "workload failed: %s",
					 strerror(-(base[i].err ?: sub[i].err ?: EIO)));
				skip = why;
				break;
			}
			series_add(&rate[i][0], base[i].rate);
			series_add(&rate[i][1], sub[i].rate);
			series_add(&rr[i], sub[i].rate / base[i].rate);
			series_add(&cpu[i][0], base[i].cpu / 1e6);
			series_add(&cpu[i][1], sub[i].cpu / 1e6);
			series_add(&cr[i], sub[i].cpu / base[i].cpu);
			series_add(&sys[i][0], base[i].sys / 1e6);
			series_add(&sys[i][1], sub[i].sys / 1e6);
			series_add(&sr[i], sub[i].sys / base[i].sys);
		}
	}
	saved.mask = cfg.mask;
	npu_sim_set_config(dev, &saved);

	snprintf(buf, sizeof(buf),
		 "%d processes, one SQ each, steps of %d tasks (host-marked), "
		 "SENDs of B SQEs with one report each, %.1f s per run; npusim: "
		 "%d units, %d ns tasks. With steptime: attach mode %s, "
		 "`steptime record` draining the events. CPU: the worker "
		 "processes (getrusage) and the whole system (/proc/stat busy).",
		 nthreads, STEP_TASKS, secs, NPUSIM_MAX_UNITS, TASK_NS, mode);
	bench_section(&o, "3. Throughput", buf,
		      "ratio to no steptime: median [min, max]");
	if (skip && !rate[0][0].n) {
		snprintf(buf, sizeof(buf), "not run: %s", skip);
		bench_row_text("throughput", "-", buf);
	}
	for (i = 0; i < NB && rate[i][0].n; i++) {
		snprintf(what, sizeof(what), "B=%u: task rate, no steptime", batches[i]);
		bench_row(what, &rate[i][0], "tasks/s", NULL, "baseline");
		snprintf(what, sizeof(what), "B=%u: task rate, steptime", batches[i]);
		bench_row(what, &rate[i][1], "tasks/s", &rr[i], NULL);
		snprintf(what, sizeof(what), "B=%u: process CPU per 100k tasks, no steptime",
			 batches[i]);
		bench_row(what, &cpu[i][0], "ms", NULL, "baseline");
		snprintf(what, sizeof(what), "B=%u: process CPU per 100k tasks, steptime",
			 batches[i]);
		bench_row(what, &cpu[i][1], "ms", &cr[i], NULL);
		snprintf(what, sizeof(what), "B=%u: system CPU per 100k tasks, no steptime",
			 batches[i]);
		bench_row(what, &sys[i][0], "ms", NULL, "baseline");
		snprintf(what, sizeof(what), "B=%u: system CPU per 100k tasks, steptime",
			 batches[i]);
		bench_row(what, &sys[i][1], "ms", &sr[i], "includes `steptime record`");
		/*
		 * Counted against submitted, as the verdict reads them: a
		 * figure, not a note ("n/a": npusim's count could not be read).
		 */
		snprintf(what, sizeof(what), "B=%u: tasks counted by steptime (all rounds)",
			 batches[i]);
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)counted[i]);
		bench_row_text(what, buf, NULL);
		snprintf(what, sizeof(what), "B=%u: tasks npusim received (all rounds)",
			 batches[i]);
		snprintf(buf, sizeof(buf), sim_ok ? "%llu" : "n/a",
			 (unsigned long long)sim[i]);
		bench_row_text(what, buf, "NPUSIM_IOC_STATS submitted, read around each run");
		snprintf(what, sizeof(what), "B=%u: losses (all rounds)", batches[i]);
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)lost[i]);
		loss_list(lost_by[i], names, sizeof(names));
		snprintf(why, sizeof(why), "%s; tasks counted by steptime %llu of "
			 "%llu submitted, %llu in a step", names,
			 (unsigned long long)counted[i],
			 (unsigned long long)submitted[i],
			 (unsigned long long)in_step[i]);
		bench_row_text(what, buf, why);
	}
	if (skip && rate[0][0].n)
		bench_note("Stopped early: %s", skip);
	bench_note("VM figures run under QEMU/TCG (10-50x slower than native): "
		   "compare ratios within this table only.");
	bench_end();
	npu_dev_close(dev);
	return 0;
}
