// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What steptime's hooks add to a system call, per attach mode, against the
 * same calls with no BPF program loaded, timed in the same rounds: each
 * round times every call with nothing loaded, then loads steptime in each
 * mode in turn, times them again and unloads.
 *
 * Host (tp_btf, tracepoint; the host has no kprobes and refuses fentry):
 * steptime is loaded on /dev/null, so an ioctl on /dev/null with a command
 * steptime tracks runs the whole filter path (fd -> inode -> rdev match,
 * argument copy, exit handling of the ENOTTY it gets); an untracked command
 * and getppid() show what the filter costs everything else.
 * --npusim (VM, every mode): SQCQ_SEND of one SQE and SQCQ_RECV of its
 * report on npusim, on one queue and on four in turn (a runtime thread's
 * streams), an npusim ioctl steptime does not track, an ioctl on another
 * device and getppid().
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>

#include <bpf/libbpf.h>
#include <steptime/steptime.h>
#include <npusim/hal.h>
#include <steptime/loader.h>
#include "bench.h"
#include "bench.skel.h"

#define CHUNK		256	/* SENDs before their reports are received */
/* Queues used in turn: a runtime thread's streams, more than one. */
#define NQUEUES		4
#define MAX_OUT		2
#define MAX_MODES	9
/* Not steptime: bench.bpf.c's tp_btf pair that only counts ioctls. */
#define MODE_FLOOR	100
/* Not steptime either: empty fentry/fexit and kprobe/kretprobe pairs. */
#define MODE_FLOOR_FENTRY	101
#define MODE_FLOOR_KPROBE	102
/* The same pairs, and an empty program of their kind on the SQE hook. */
#define MODE_FLOOR_FENTRY_SQE	103
#define MODE_FLOOR_KPROBE_SQE	104
/* npusim's ioctl handler, where steptime's fentry and kprobe modes hook. */
#define NPUSIM_IOCTL_FN		"npusim_manager_ioctl"
/* npusim's SQE trace function, their third hook. */
#define NPUSIM_SQE_FN		"npusim_chan_trace_sqe"

struct op {
	const char *name[MAX_OUT];
	int nout;
	long iters;
	void (*run)(long n, double *out);	/* ns per call, per output */
};

static struct {
	int null_fd;
	struct npu_dev *dev;
	struct npu_sqcq *q[NQUEUES];
	__u16 task_id;
	__u64 index;
} b = { .null_fd = -1 };

static volatile long sink;
/*
 * bench/vm.sh --icount: the guest clock counts instructions, and its one
 * vCPU runs npusim's engine too; tasks then outlast a chunk of SENDs, so
 * that no completion lands in the timed SENDs (their engine work would
 * move in and out of the window with the timing, not with the hooks).
 */
static bool insns;
#define INSNS_TASK_NS	(20 * 1000 * 1000)

static void run_getppid(long n, double *out)
{
	__u64 t0 = bench_now_ns();
	long i;

	for (i = 0; i < n; i++)
		sink += syscall(SYS_getppid);
	out[0] = (double)(bench_now_ns() - t0) / n;
}

static void ioctl_loop(int fd, unsigned long cmd, void *arg, long n,
		       double *out)
{
	__u64 t0 = bench_now_ns();
	long i;

	for (i = 0; i < n; i++)
		sink += ioctl(fd, cmd, arg);
	out[0] = (double)(bench_now_ns() - t0) / n;
}

static void run_null_tracked(long n, double *out)
{
	struct trs_report_recv_info ri = { .cqe_num = 1 };

	ioctl_loop(b.null_fd, TRS_IOC_SQCQ_RECV, &ri, n, out);
}

static void run_null_untracked(long n, double *out)
{
	struct termios t;

	ioctl_loop(b.null_fd, TCGETS, &t, n, out);
}

static void run_npu_untracked(long n, double *out)
{
	struct npusim_clock clk;

	ioctl_loop(npu_dev_fd(b.dev), NPUSIM_IOC_CLOCK, &clk, n, out);
}

/* Until every report of the chunk is queued: RECV must not wait. */
static int reports_ready(unsigned int want)
{
	struct npusim_stats st;
	int spins;

	for (spins = 0; spins < 100000; spins++) {
		if (npu_sim_stats(b.dev, &st))
			return -1;
		if (st.reports_pending >= want)
			return 0;
		if (insns)
			usleep(1000);	/* idle: -icount skips to the timer */
		else
			sched_yield();
	}
	return -1;
}

/*
 * SEND one SQE CHUNK times, then RECV its CHUNK reports one by one, on the
 * first @nq queues in turn (a call on each, then again).
 */
static void send_recv(long n, double *out, int nq)
{
	int fd = npu_dev_fd(b.dev);
	struct trs_sqe sqe;
	struct trs_logic_cqe cqe;
	struct npu_task_desc d = {
		.type = TRS_SQE_FFTS,
		.wr_cqe = true,
		.duration_ns = insns ? INSNS_TASK_NS : 1,
	};
	struct trs_task_send_info si = {
		.type = TRS_TASK_TYPE_NORMAL,
		.sqe_num = 1,
		.sqe_addr = (__u64)(unsigned long)&sqe,
	};
	struct trs_report_recv_info ri = {
		.cqe_num = 1,
		.cqe_addr = (__u64)(unsigned long)&cqe,
		.task_id = TRS_REPORT_TASK_ANY,
		.res = { 1 },
	};
	__u64 send_ns = 0, recv_ns = 0, t0;
	__u32 sq_id[NQUEUES], cq_id[NQUEUES];
	long i, k, bad = 0;

	/* Not in the timed loops: the HAL's getters are not the call timed. */
	for (k = 0; k < nq; k++) {
		sq_id[k] = npu_sqcq_sq_id(b.q[k]);
		cq_id[k] = npu_sqcq_cq_id(b.q[k]);
	}
	for (i = 0; i < n; i += CHUNK) {
		t0 = bench_now_ns();
		for (k = 0; k < CHUNK; k++) {
			d.task_id = b.task_id++;
			d.stream_id = (__u16)sq_id[k % nq];
			npu_sqe_task(&sqe, &d);
			si.sqId = sq_id[k % nq];
			bad += ioctl(fd, TRS_IOC_SQCQ_SEND, &si) != 0;
		}
		send_ns += bench_now_ns() - t0;
		if (reports_ready(CHUNK))
			bad++;
		t0 = bench_now_ns();
		for (k = 0; k < CHUNK; k++) {
			ri.cqId = cq_id[k % nq];
			bad += ioctl(fd, TRS_IOC_SQCQ_RECV, &ri) != 0 ||
			       ri.report_cqe_num != 1;
		}
		recv_ns += bench_now_ns() - t0;
	}
	out[0] = bad ? -1 : (double)send_ns / i;
	out[1] = bad ? -1 : (double)recv_ns / i;
}

static void run_send_recv(long n, double *out)
{
	send_recv(n, out, 1);
}

static void run_send_recv_queues(long n, double *out)
{
	send_recv(n, out, NQUEUES);
}

static const struct op host_ops[] = {
	{ { "ioctl(/dev/null, TRS_IOC_SQCQ_RECV): tracked cmd, matching device" },
	  1, 200000, run_null_tracked },
	{ { "ioctl(/dev/null, TCGETS): untracked cmd" }, 1, 200000,
	  run_null_untracked },
	{ { "getppid(): unrelated syscall" }, 1, 200000, run_getppid },
};

static const struct op vm_ops[] = {
	{ { "npusim SQCQ_SEND of 1 SQE (a task, in a step)",
	    "npusim SQCQ_RECV of 1 report" }, 2, 8192, run_send_recv },
	{ { "npusim SQCQ_SEND of 1 SQE, four SQs in turn",
	    "npusim SQCQ_RECV of 1 report, four CQs in turn" }, 2, 8192,
	  run_send_recv_queues },
	{ { "npusim ioctl NPUSIM_IOC_CLOCK: untracked cmd" }, 1, 16384,
	  run_npu_untracked },
	{ { "ioctl(/dev/null, TCGETS): another device" }, 1, 16384,
	  run_null_untracked },
	{ { "getppid(): unrelated syscall" }, 1, 16384, run_getppid },
};

struct mode {
	int id;
	const char *skip;
	char why[160];
	struct steptime_counters cnt;	/* summed over rounds */
	struct series v[8], ratio[8];	/* per output */
};

/* The floors: what each attaches, and what it is called. */
static const struct floor {
	int id;
	const char *sel;	/* its BENCH_HOOK_MODES name */
	const char *name;	/* its rows' */
	const char *kind;	/* tp_btf, fentry or kprobe */
	bool sqe;		/* also on the SQE hook */
} floors[] = {
	{ MODE_FLOOR, "floor_tp_btf", "floor: empty tp_btf pair (not steptime)",
	  "tp_btf", false },
	{ MODE_FLOOR_FENTRY, "floor_fentry",
	  "floor: empty fentry pair (not steptime)", "fentry", false },
	{ MODE_FLOOR_KPROBE, "floor_kprobe",
	  "floor: empty kprobe pair (not steptime)", "kprobe", false },
	{ MODE_FLOOR_FENTRY_SQE, "floor_fentry_sqe",
	  "floor: empty fentry pair and SQE hook (not steptime)", "fentry",
	  true },
	{ MODE_FLOOR_KPROBE_SQE, "floor_kprobe_sqe",
	  "floor: empty kprobe pair and SQE hook (not steptime)", "kprobe",
	  true },
};

static struct bench_bpf *floor_skel;
static struct bpf_link *floor_links[3];

static void floor_unload(void)
{
	size_t i;

	for (i = 0; i < sizeof(floor_links) / sizeof(floor_links[0]); i++) {
		bpf_link__destroy(floor_links[i]);
		floor_links[i] = NULL;
	}
	bench_bpf__destroy(floor_skel);
	floor_skel = NULL;
}

static const struct floor *floor_of(int id)
{
	size_t i;

	for (i = 0; i < sizeof(floors) / sizeof(floors[0]); i++)
		if (floors[i].id == id)
			return &floors[i];
	return NULL;
}

static bool is_floor(int id)
{
	return floor_of(id) != NULL;
}

static int floor_load(struct mode *m)
{
	const struct floor *fl = floor_of(m->id);
	bool tp = !strcmp(fl->kind, "tp_btf");
	bool fentry = !strcmp(fl->kind, "fentry");
	bool kprobe = !strcmp(fl->kind, "kprobe");
	struct bench_bpf *sk;
	int err = -ENOMEM;

	floor_skel = sk = bench_bpf__open();
	if (!sk)
		goto fail;
	bpf_program__set_autoload(sk->progs.bench_uprobe_mark, false);
	bpf_program__set_autoload(sk->progs.floor_sys_enter, tp);
	bpf_program__set_autoload(sk->progs.floor_sys_exit, tp);
	bpf_program__set_autoload(sk->progs.floor_fentry, fentry);
	bpf_program__set_autoload(sk->progs.floor_fexit, fentry);
	bpf_program__set_autoload(sk->progs.floor_kprobe, kprobe);
	bpf_program__set_autoload(sk->progs.floor_kretprobe, kprobe);
	bpf_program__set_autoload(sk->progs.floor_fentry_sqe,
				  fentry && fl->sqe);
	bpf_program__set_autoload(sk->progs.floor_kprobe_sqe,
				  kprobe && fl->sqe);
	if (fentry) {
		bpf_program__set_attach_target(sk->progs.floor_fentry, 0,
					       NPUSIM_IOCTL_FN);
		bpf_program__set_attach_target(sk->progs.floor_fexit, 0,
					       NPUSIM_IOCTL_FN);
		bpf_program__set_attach_target(sk->progs.floor_fentry_sqe, 0,
					       NPUSIM_SQE_FN);
	}
	err = bench_bpf__load(sk);
	if (err)
		goto fail;
	if (tp) {
		floor_links[0] = bpf_program__attach(sk->progs.floor_sys_enter);
		floor_links[1] = bpf_program__attach(sk->progs.floor_sys_exit);
	} else if (fentry) {
		floor_links[0] = bpf_program__attach(sk->progs.floor_fentry);
		floor_links[1] = bpf_program__attach(sk->progs.floor_fexit);
		if (fl->sqe)
			floor_links[2] =
				bpf_program__attach(sk->progs.floor_fentry_sqe);
	} else {
		floor_links[0] = bpf_program__attach_kprobe(sk->progs.floor_kprobe,
							    false, NPUSIM_IOCTL_FN);
		floor_links[1] = bpf_program__attach_kprobe(sk->progs.floor_kretprobe,
							    true, NPUSIM_IOCTL_FN);
		if (fl->sqe)
			floor_links[2] =
				bpf_program__attach_kprobe(sk->progs.floor_kprobe_sqe,
							   false, NPUSIM_SQE_FN);
	}
	if (floor_links[0] && floor_links[1] && (!fl->sqe || floor_links[2]))
		return 0;
	err = -errno;
fail:
	floor_unload();
	snprintf(m->why, sizeof(m->why), "bench.bpf.o %s %s: %s", fl->kind,
		 fl->sqe ? "pair and SQE hook" : "pair", strerror(-err));
	m->skip = m->why;
	return err;
}

static const char *mode_name(int id)
{
	const struct floor *fl = floor_of(id);

	return fl ? fl->name : steptime__attach_mode_str(id);
}

/*
 * BENCH_HOOK_MODES="fentry,floor_fentry": only these modes (names as
 * --attach takes them, floors as floors[].sel), to iterate on one hook
 * without a 30-55 s TCG load per other mode.
 */
static bool mode_selected(int id)
{
	const char *sel = getenv("BENCH_HOOK_MODES");
	const struct floor *fl = floor_of(id);
	const char *name = fl ? fl->sel : steptime__attach_mode_str(id);
	size_t len = strlen(name);
	const char *p;

	if (!sel || !*sel)
		return true;
	for (p = sel; (p = strstr(p, name)); p += len)
		if ((p == sel || p[-1] == ',') && (!p[len] || p[len] == ','))
			return true;
	return false;
}

static int load(struct mode *m, bool npusim)
{
	struct steptime_load_opts lo = {
		.sz = sizeof(lo),
		.device = npusim ? NULL : "/dev/null",
		.counter_freq_hz = npusim ? 0 : BENCH_NULL_FREQ_HZ,
		.stars_version = npusim ? 0 : 1,
		.attach_mode = m->id,
		.pin_dir = BENCH_PIN_DIR,
		.map_gid = -1,
	};
	int err;

	if (is_floor(m->id))
		return floor_load(m);
	steptime__unload(BENCH_PIN_DIR);
	err = steptime__load(&lo);
	if (err) {
		snprintf(m->why, sizeof(m->why), "steptime load --attach %s: %s",
			 steptime__attach_mode_str(m->id), strerror(-err));
		m->skip = m->why;
		return err;
	}
	/* Tasks go to an open step, as in training. */
	steptime__mark(++b.index, STEPTIME_TAG_START, NULL);
	return 0;
}

static void counters_add(struct steptime_counters *sum)
{
	struct steptime_counters c;
	__u64 *s = (__u64 *)sum, *v = (__u64 *)&c;
	size_t i;

	if (steptime__read_counters(BENCH_PIN_DIR, &c))
		return;
	for (i = 0; i < sizeof(c) / sizeof(__u64); i++)
		s[i] += v[i];
}

/* Every output of every op, in order, into @res. */
static int failed_slices;

static void run_ops(const struct op *ops, int nops,
		    const struct bench_opts *o, double *res)
{
	double v[MAX_OUT];
	long n;
	int i, j, sl, k = 0;

	for (i = 0; i < nops; i++) {
		n = bench_iters(o, ops[i].iters) / BENCH_BEST_OF;
		for (j = 0; j < ops[i].nout; j++)
			res[k + j] = -1;
		for (sl = 0; sl < BENCH_BEST_OF; sl++) {
			ops[i].run(n > 0 ? n : 1, v);
			for (j = 0; j < ops[i].nout; j++) {
				if (v[j] <= 0) {
					failed_slices++;
					continue;
				}
				if (res[k + j] <= 0 || v[j] < res[k + j])
					res[k + j] = v[j];
			}
		}
		k += ops[i].nout;
	}
}

/*
 * kio SQs, named: table 2 times the SEND and RECV ioctls' hooks, and the
 * chip's default (a mapped SQ, submitted through the HAL) makes no SEND.
 * The device's settings are put back once the queues are allocated.
 */
static int vm_queues_alloc_kio(void)
{
	struct npu_sqcq_opts qo = { .sz = sizeof(qo), .sq_depth = 1024,
				    .cq_depth = 1024 };
	struct npusim_config cfg, old;
	int i, err;

	err = npu_sim_get_config(b.dev, &old);
	if (err)
		return err;
	cfg = old;
	cfg.mask = old.mask = NPUSIM_CFG_UIO_MODE | NPUSIM_CFG_SQ_MODE;
	cfg.uio_mode = NPUSIM_UIO_KIO;
	cfg.sq_mode = NPUSIM_SQ_MODE_CONFIG;
	err = npu_sim_set_config(b.dev, &cfg);
	if (err)
		return err;
	for (i = 0; i < NQUEUES && !err; i++) {
		b.q[i] = npu_sqcq_alloc(b.dev, &qo);
		if (!b.q[i])
			err = -errno;
		else if (npu_sqcq_is_mapped(b.q[i]))
			err = -EPROTO;
	}
	i = npu_sim_set_config(b.dev, &old);
	return err ? err : i;
}

/*
 * The npusim device and queue, opened again after each load or unload, as
 * by an app started then: steptime counts the tasks of a queue allocated
 * before its load as pre-existing, outside any step (not the path timed).
 */
static int vm_queue_reopen(void)
{
	int i;

	for (i = 0; i < NQUEUES; i++) {
		if (b.q[i])
			npu_sqcq_free(b.q[i]);
		b.q[i] = NULL;
	}
	if (b.dev)
		npu_dev_close(b.dev);
	b.dev = npu_dev_open(NULL);
	if (!b.dev)
		return -1;
	i = vm_queues_alloc_kio();
	if (i)
		errno = -i;
	return i ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	const struct op *ops;
	struct mode modes[MAX_MODES] = {};
	struct series base[8] = {};
	double res[MAX_MODES + 1][8];
	const char *names[8];
	int nops, nmodes, nout = 0, r, i, j, k, idx;
	const char *why;
	char note[256], what[256];

	bench_parse(argc, argv, &o, "[--npusim]");
	/* bench/vm.sh --icount: the guest clock counts instructions. */
	insns = o.npusim && getenv("BENCH_HOOK_INSNS");
	setenv("STEPTIME_QUIET", "1", 1);
	setenv("STEPTIME_PIN_DIR", BENCH_PIN_DIR, 1);
	libbpf_set_print(NULL);
	b.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (o.npusim) {
		static const int m[] = { STEPTIME_ATTACH_FENTRY, STEPTIME_ATTACH_KPROBE,
					 STEPTIME_ATTACH_TP_BTF,
					 STEPTIME_ATTACH_TRACEPOINT, MODE_FLOOR,
					 MODE_FLOOR_FENTRY, MODE_FLOOR_KPROBE,
					 MODE_FLOOR_FENTRY_SQE,
					 MODE_FLOOR_KPROBE_SQE };
		ops = vm_ops;
		nops = sizeof(vm_ops) / sizeof(vm_ops[0]);
		nmodes = sizeof(m) / sizeof(m[0]);
		for (i = 0; i < nmodes; i++)
			modes[i].id = m[i];
		if (vm_queue_reopen()) {
			fprintf(stderr, "bench_hook: npusim not usable: %s\n",
				strerror(errno));
			return 1;
		}
	} else {
		ops = host_ops;
		nops = sizeof(host_ops) / sizeof(host_ops[0]);
		nmodes = 3;
		modes[0].id = STEPTIME_ATTACH_TP_BTF;
		modes[1].id = STEPTIME_ATTACH_TRACEPOINT;
		modes[2].id = MODE_FLOOR;
	}
	for (i = 0; i < nops; i++)
		for (j = 0; j < ops[i].nout; j++)
			names[nout++] = ops[i].name[j];
	why = bench_cannot_load();
	for (i = 0; why && i < nmodes; i++)
		modes[i].skip = why;
	for (i = 0; i < nmodes; i++)
		if (!modes[i].skip && !mode_selected(modes[i].id))
			modes[i].skip = "not selected (BENCH_HOOK_MODES)";

	for (r = 0; r < o.rounds; r++) {
		/* Nothing loaded first on even rounds, last on odd ones. */
		for (k = 0; k <= nmodes; k++) {
			idx = r % 2 ? nmodes - k : k;
			if (idx == 0) {
				steptime__unload(BENCH_PIN_DIR);
				if (o.npusim && vm_queue_reopen())
					break;
				run_ops(ops, nops, &o, res[0]);
				continue;
			}
			if (modes[idx - 1].skip || load(&modes[idx - 1], o.npusim))
				continue;
			if (o.npusim && vm_queue_reopen())
				break;
			run_ops(ops, nops, &o, res[idx]);
			if (is_floor(modes[idx - 1].id)) {
				floor_unload();
				continue;
			}
			counters_add(&modes[idx - 1].cnt);
			steptime__unload(BENCH_PIN_DIR);
		}
		for (j = 0; j < nout; j++)
			if (res[0][j] > 0)
				series_add(&base[j], res[0][j]);
		for (i = 0; i < nmodes; i++) {
			if (modes[i].skip)
				continue;
			for (j = 0; j < nout; j++) {
				/* A failed SEND/RECV cycle says -1. */
				if (res[i + 1][j] <= 0 || res[0][j] <= 0)
					continue;
				series_add(&modes[i].v[j], res[i + 1][j] - res[0][j]);
				series_add(&modes[i].ratio[j], res[i + 1][j] / res[0][j]);
			}
		}
	}

	if (insns)
		bench_section(&o, "2b. Hook cost per call, in guest instructions",
			      "The VM runs under QEMU -icount shift=0: its clock "
			      "advances 1 ns per guest instruction executed, so "
			      "every figure here is a count of instructions, the "
			      "same from run to run whatever the host's load. "
			      "Instructions added to a call by steptime's hooks "
			      "(with steptime loaded minus with nothing loaded), "
			      "and the ratio of the two.",
			      "ratio to no BPF: median [min, max]");
	else
		bench_section(&o, "2. Hook overhead per call",
			      "ns added to a call by steptime's hooks (per round: "
			      "with steptime loaded minus with nothing loaded), "
			      "and the ratio of the two.",
			      "ratio to no BPF: median [min, max]");
	for (j = 0; j < nout; j++) {
		snprintf(what, sizeof(what), "no BPF: %s", names[j]);
		bench_row(what, &base[j], insns ? "insns/call" : "ns/call",
			  NULL, "baseline");
	}
	for (i = 0; i < nmodes; i++) {
		const char *mn = mode_name(modes[i].id);

		if (modes[i].skip) {
			snprintf(what, sizeof(what), "%s: every call", mn);
			snprintf(note, sizeof(note), "not run: %s", modes[i].skip);
			bench_row_text(what, "-", note);
			continue;
		}
		for (j = 0; j < nout; j++) {
			snprintf(what, sizeof(what), "%s: %s", mn, names[j]);
			bench_row(what, &modes[i].v[j],
				  insns ? "insns added" : "ns added",
				  &modes[i].ratio[j], NULL);
		}
	}
	for (i = 0; i < nmodes; i++) {
		struct steptime_counters *c = &modes[i].cnt;

		if (modes[i].skip || is_floor(modes[i].id))
			continue;
		bench_note("%s, over all rounds: %llu ioctls matched, %llu "
			   "sends, %llu recvs, %llu tasks (%llu in a step), "
			   "%llu completions, %llu reports unmatched, %llu "
			   "tasks overwritten, %llu hook errors.",
			   steptime__attach_mode_str(modes[i].id),
			   (unsigned long long)c->ioctls,
			   (unsigned long long)c->sends,
			   (unsigned long long)c->recvs,
			   (unsigned long long)c->tasks,
			   (unsigned long long)c->tasks_in_step,
			   (unsigned long long)c->completions,
			   (unsigned long long)c->reports_unmatched,
			   (unsigned long long)c->task_overwritten,
			   (unsigned long long)c->hook_errors);
	}
	if (failed_slices)
		bench_note("%d timed slices failed (a SEND or RECV returned an "
			   "error, or reports did not arrive) and were left out.",
			   failed_slices);
	if (insns)
		bench_note("Instruction counts weigh every guest instruction "
			   "alike: they leave out what a real CPU pays more for "
			   "(cache misses, atomics, the trampoline's indirect "
			   "calls), and what TCG pays more for (its software "
			   "TLB, helpers for rdtsc and SMAP toggles), which "
			   "table 2 shows.");
	else if (o.npusim)
		bench_note("VM figures run under QEMU/TCG (10-50x slower than "
			   "native): compare ratios within this table only.");
	else
		bench_note("The host kernel has no kprobes and refuses fentry "
			   "(machine notes): those modes run in the VM table.");
	bench_end();
	for (i = 0; i < NQUEUES; i++)
		npu_sqcq_free(b.q[i]);
	npu_dev_close(b.dev);
	close(b.null_fd);
	return 0;
}
