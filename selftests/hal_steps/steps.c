// SPDX-License-Identifier: GPL-2.0
/*
 * Steps of processes that submit as CANN's runtime does on a real host:
 * through libascend_hal.so's entry points, to mapped SQs in the chip's
 * default mode (910B3: uio_t soft queues copied by a kernel worker; 950:
 * uio_d, which the kernel never sees), one process per npusim device with
 * stream and SQ ids colliding across the devices.
 *
 * With the HAL probed (load --hal), every step's tasks and completions are
 * exact in every attach mode: the figures are checked against what each
 * process itself had accepted by halSqTaskSend() (its own record, not
 * npusim's or steptime's), and npusim's truth says every task completed.
 * Each halSqTaskSend() is one task, as the runtime sends them, of 1 to 4
 * SQEs laid out as CANN's: on STARS v1 every SQE carries the task's stream
 * and task id, and each of a reporting task's SQEs asks for a report (a
 * multiple task's, one CQE each); on v2 the first SQE's sqeLength says how
 * many follow, and those carry no task id of their own. A task counts once,
 * completes once, and is reported once.
 * With another libascend_hal.so probed than the one the processes use, a
 * step is flagged STEPTIME_F_UIO or exact, never silently short; on uio_t
 * with the driver's channel hooks attached (fentry, kprobe), every
 * stream-marked step is exact even when the worker copies its SQEs late
 * (poll only, no doorbell): each SQE's channel was bound to its SQ at the
 * ALLOC, so colliding stream and SQ ids do not matter. Host-marked steps
 * there are flagged STEPTIME_F_UIO: the worker copies a task after its
 * send, and which host-marked step it was sent in cannot be known (each
 * task is still counted once, in the process's own steps). Without the
 * channel hooks (STEPTIME_NO_CHAN_HOOK=1) the stream ids decide: flagged,
 * never silently short.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <npusim_abi.h>
#include <steptime/loader.h>
#include <steptime/steptime.h>
#include "../../sim/ascend_hal/ascend_hal.h"
#include "kselftest_harness.h"
#include "st_run.h"
#include "st_step.h"
#include "st_engines.h"
#include "ksft_filter.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	600

#define PIN_DIR		"/sys/fs/bpf/steptime_hal_steps"
#define MAX_PROCS	8
#define STEPS		6
#define DEPTH		64
#define TS		0
#define WAIT_MS		30000
#define INDEX0		100	/* index id of step 0 */

/* What one process did, written by it, read by the test after. */
struct proc_truth {
	pid_t pid;
	int failed;		/* line of its first failure, 0: none */
	__u32 tasks[STEPS];	/* tasks halSqTaskSend() accepted, marks apart */
	__u32 reporting[STEPS];	/* of them, those that asked for a report */
	__u32 sq, stream;
	__u32 retries;		/* calls repeating one that found no room */
	__u32 given_up;		/* tasks given up after no room, sent anew */
	bool dlsym;		/* a task of each step sent around the journal */
	__u64 got_patched;	/* its library's GOT entries of HAL calls */
};

FIXTURE(hs) {
	int ctl;
	int ndev;
	char hal[PATH_MAX];	/* the library the processes use */
	char other[PATH_MAX];	/* a copy of it (unprobed variants) */
	struct proc_truth *t;	/* shared with the processes */
};

FIXTURE_VARIANT(hs) {
	int mode;
	__u32 stars;		/* 1: 910B3, uio_t; 2: 950, uio_d */
	bool probed;		/* the processes' library has the probes */
	bool kio;		/* a 950 in HIGH_SECURITY send mode */
	__u32 lcqe;		/* logic CQE size: 32, or a control stream's 16 */
	__u32 sqes;		/* SQEs per task; 0: 1 to 3 in turn */
	bool late;		/* uio_t worker polls only: copies come late */
	bool no_chan;		/* STEPTIME_NO_CHAN_HOOK=1: no channel binding */
	bool requeue;		/* mid-run, each process frees its SQ, takes another */
	bool non_pair;		/* SQs and CQs apart, as pre-STARS chips pair them */
	bool full;		/* more tasks per step than the SQ holds */
	bool report_first;	/* a step's first task reports too */
	bool head_first;	/* a sync reads the head before the reports */
	bool cann_marks;	/* stream marks also on the host, first */
	bool end_report;	/* the END place-holder reports (cann_marks) */
	bool one_rank;		/* one process, on device 0 */
	bool journal;		/* load --journal: no send or query uprobe */
	bool dlsym;		/* a task per step sent around the journal */
};

#define HS_VARIANT(name, m, s, p)					\
	FIXTURE_VARIANT_ADD(hs, name) {					\
		.mode = STEPTIME_ATTACH_##m, .stars = s, .probed = p,	\
		.lcqe = 32,						\
	}

/* kio: the library's SENDs are ioctls, seen there and counted once. */
FIXTURE_VARIANT_ADD(hs, kio_950_high_security_tp_btf) {
	.mode = STEPTIME_ATTACH_TP_BTF, .stars = 2, .probed = true, .kio = true,
	.lcqe = 32,
};
/*
 * Reports in 16-byte logic CQEs, as a control stream's (ctrl_stream.cc):
 * each read as a logic CQE's first half, not as a hardware CQE.
 */
FIXTURE_VARIANT_ADD(hs, uio_t_ctrl_cqe_kprobe) {
	.mode = STEPTIME_ATTACH_KPROBE, .stars = 1, .probed = true, .lcqe = 16,
};
HS_VARIANT(uio_t_fentry, FENTRY, 1, true);
HS_VARIANT(uio_t_kprobe, KPROBE, 1, true);
HS_VARIANT(uio_t_tp_btf, TP_BTF, 1, true);
HS_VARIANT(uio_t_tracepoint, TRACEPOINT, 1, true);
HS_VARIANT(uio_d_fentry, FENTRY, 2, true);
HS_VARIANT(uio_d_kprobe, KPROBE, 2, true);
HS_VARIANT(uio_d_tp_btf, TP_BTF, 2, true);
HS_VARIANT(uio_d_tracepoint, TRACEPOINT, 2, true);
/* Tasks of 4 SQEs, the most a STARS v1 task takes (stars_base.hpp:24). */
FIXTURE_VARIANT_ADD(hs, uio_t_4sqe_tp_btf) {
	.mode = STEPTIME_ATTACH_TP_BTF, .stars = 1, .probed = true, .lcqe = 32,
	.sqes = 4,
};
FIXTURE_VARIANT_ADD(hs, uio_d_4sqe_tp_btf) {
	.mode = STEPTIME_ATTACH_TP_BTF, .stars = 2, .probed = true, .lcqe = 32,
	.sqes = 4,
};
/*
 * Every report read after a head has completed its task, and its head
 * (after the task's first SQE) inside a task steptime records at its last.
 */
FIXTURE_VARIANT_ADD(hs, uio_t_4sqe_head_first_kprobe) {
	.mode = STEPTIME_ATTACH_KPROBE, .stars = 1, .probed = true, .lcqe = 32,
	.sqes = 4, .head_first = true,
};
FIXTURE_VARIANT_ADD(hs, uio_d_4sqe_head_first_tp_btf) {
	.mode = STEPTIME_ATTACH_TP_BTF, .stars = 2, .probed = true, .lcqe = 32,
	.sqes = 4, .head_first = true,
};
/*
 * Each stream mark as aclprofGetStepTimestamp() makes it: a host mark,
 * then the place-holder. The probe leaves the ring unread at a send
 * inside a stream's step, so a host END waits for the sync's head query,
 * which here completes the step before any RECV: the END must still be
 * in the step's record when the step finishes.
 */
FIXTURE_VARIANT_ADD(hs, uio_t_cann_marks_tp_btf) {
	.mode = STEPTIME_ATTACH_TP_BTF, .stars = 1, .probed = true, .lcqe = 32,
	.head_first = true, .cann_marks = true,
};
FIXTURE_VARIANT_ADD(hs, uio_d_cann_marks_kprobe) {
	.mode = STEPTIME_ATTACH_KPROBE, .stars = 2, .probed = true, .lcqe = 32,
	.head_first = true, .cann_marks = true,
};
/*
 * The END place-holder asks for a report, as a v1 stream's may
 * (GetStarsWrCqeFlag()), and the process waits for its step to finish
 * before it calls the library again: the report finishes the step in the
 * kernel's CQ hook (fentry and kprobe modes), where no ring can be read.
 * The host END, marked before the place-holder's send, must be in it.
 * One process: with the same logic CQ and stream ids on every device the
 * hook could not tell whose a report is, and would leave it to the RECV.
 */
FIXTURE_VARIANT_ADD(hs, uio_t_end_report_fentry) {
	.mode = STEPTIME_ATTACH_FENTRY, .stars = 1, .probed = true, .lcqe = 32,
	.cann_marks = true, .end_report = true, .one_rank = true,
};
FIXTURE_VARIANT_ADD(hs, uio_d_end_report_kprobe) {
	.mode = STEPTIME_ATTACH_KPROBE, .stars = 2, .probed = true, .lcqe = 32,
	.cann_marks = true, .end_report = true, .one_rank = true,
};
FIXTURE_VARIANT_ADD(hs, kio_950_4sqe_kprobe) {
	.mode = STEPTIME_ATTACH_KPROBE, .stars = 2, .probed = true, .kio = true,
	.lcqe = 32, .sqes = 4,
};
/* The HAL unprobed: uio_t tasks seen one SQE at a time by the trace hook. */
FIXTURE_VARIANT_ADD(hs, uio_t_4sqe_unprobed_kprobe) {
	.mode = STEPTIME_ATTACH_KPROBE, .stars = 1, .probed = false,
	.lcqe = 32, .sqes = 4,
};
HS_VARIANT(uio_t_unprobed_kprobe, KPROBE, 1, false);
HS_VARIANT(uio_d_unprobed_tp_btf, TP_BTF, 2, false);
/*
 * The HAL unprobed, uio_t SQEs copied by the worker's poll alone, up to
 * 4 ms after the send: the channel binding pins each to its SQ; without
 * it, the same stream id on every device leaves them flagged.
 */
FIXTURE_VARIANT_ADD(hs, uio_t_chan_late_kprobe) {
	.mode = STEPTIME_ATTACH_KPROBE, .stars = 1, .probed = false,
	.lcqe = 32, .late = true,
};
FIXTURE_VARIANT_ADD(hs, uio_t_chan_late_fentry) {
	.mode = STEPTIME_ATTACH_FENTRY, .stars = 1, .probed = false,
	.lcqe = 32, .late = true,
};
FIXTURE_VARIANT_ADD(hs, uio_t_4sqe_chan_late_kprobe) {
	.mode = STEPTIME_ATTACH_KPROBE, .stars = 1, .probed = false,
	.lcqe = 32, .sqes = 4, .late = true,
};
FIXTURE_VARIANT_ADD(hs, uio_t_no_chan_late_kprobe) {
	.mode = STEPTIME_ATTACH_KPROBE, .stars = 1, .probed = false,
	.lcqe = 32, .late = true, .no_chan = true,
};
/*
 * SQs and CQs paired as on pre-STARS chips: each ALLOC makes the SQ's
 * channel, then the CQ's own (and the first LOGIC ALLOC of a TS its
 * physical CQ's). The channel bound is still the SQ's: SQEs copied late
 * stay in their stream-marked steps, colliding stream ids or not.
 */
FIXTURE_VARIANT_ADD(hs, uio_t_non_pair_late_kprobe) {
	.mode = STEPTIME_ATTACH_KPROBE, .stars = 1, .probed = false,
	.lcqe = 32, .late = true, .non_pair = true,
};
/*
 * Each process frees its SQ halfway and allocates another (the same ids,
 * or not): the HAL probe finds the SQ a thread's last call used without a
 * lookup while it is still that SQ, and never the one freed.
 */
FIXTURE_VARIANT_ADD(hs, uio_t_requeue_fentry) {
	.mode = STEPTIME_ATTACH_FENTRY, .stars = 1, .probed = true,
	.lcqe = 32, .requeue = true,
};
FIXTURE_VARIANT_ADD(hs, uio_d_requeue_tp_btf) {
	.mode = STEPTIME_ATTACH_TP_BTF, .stars = 2, .probed = true,
	.lcqe = 32, .requeue = true,
};

/*
 * Steps of more tasks than the SQ holds, each long: the runtime waits for
 * room reading the SQ head, and the head is read with a whole SQ of tasks
 * sent since the last read. On uio_d, halSqTaskSend() is also tried one
 * task past that room: the library refuses it unless the device has moved
 * on, and the runtime calls it again with the same SQEs until they land
 * (task_submit.cc); once a step, the process gives the task up and sends
 * it anew from other memory. Each counts once, at its first try. A
 * step's first task reports too: its report is read at the step's end,
 * when a whole SQ of tasks has taken its position since.
 */
FIXTURE_VARIANT_ADD(hs, uio_t_full_fentry) {
	.mode = STEPTIME_ATTACH_FENTRY, .stars = 1, .probed = true,
	.lcqe = 32, .full = true, .report_first = true,
};
FIXTURE_VARIANT_ADD(hs, uio_d_full_kprobe) {
	.mode = STEPTIME_ATTACH_KPROBE, .stars = 2, .probed = true,
	.lcqe = 32, .full = true, .report_first = true,
};
/*
 * Tasks of 5 SQEs, the most a 950's takes (task_david.cc:597-604,
 * stars_base.hpp:25): one given up is taken back whole.
 */
FIXTURE_VARIANT_ADD(hs, uio_d_5sqe_full_kprobe) {
	.mode = STEPTIME_ATTACH_KPROBE, .stars = 2, .probed = true,
	.lcqe = 32, .sqes = 5, .full = true, .report_first = true,
};

/*
 * load --journal: only halSqCqAllocate() is probed. Each process's
 * libsteptime journals its sends and the heads it reads in its mark ring
 * (lib/sends.c), and the BPF program counts and completes its steps from
 * that, exactly, with no trap per task. Its reports are the kernel's
 * alone: not counted per step.
 */
#define HS_JOURNAL(name, m, s, ...)					\
	FIXTURE_VARIANT_ADD(hs, name) {					\
		.mode = STEPTIME_ATTACH_##m, .stars = s, .probed = true,	\
		.lcqe = 32, .journal = true, __VA_ARGS__		\
	}
HS_JOURNAL(uio_t_journal_tp_btf, TP_BTF, 1);
HS_JOURNAL(uio_d_journal_kprobe, KPROBE, 2);
HS_JOURNAL(uio_t_journal_4sqe_fentry, FENTRY, 1, .sqes = 4);
HS_JOURNAL(uio_d_journal_4sqe_tracepoint, TRACEPOINT, 2, .sqes = 4);
HS_JOURNAL(uio_d_journal_cann_marks_tp_btf, TP_BTF, 2, .cann_marks = true,
	   .head_first = true);
HS_JOURNAL(uio_t_journal_requeue_kprobe, KPROBE, 1, .requeue = true);
HS_JOURNAL(uio_d_journal_full_fentry, FENTRY, 2, .full = true,
	   .report_first = true);
/* 950 uio_d (no tail word): its 5-SQE tasks, a full SQ's given up. */
HS_JOURNAL(uio_d_journal_5sqe_full_kprobe, KPROBE, 2, .sqes = 5,
	   .full = true, .report_first = true);
HS_JOURNAL(kio_950_journal_tp_btf, TP_BTF, 2, .kio = true);
/*
 * A task of each step sent through halSqTaskSend() found with dlsym(), as
 * a few third-party callers do: around the journal. The journal's next
 * send finds the tail past its own, and the driver's send_ok says more
 * than the journal: the steps are flagged, never silently short.
 */
HS_JOURNAL(uio_d_journal_dlsym_tp_btf, TP_BTF, 2, .dlsym = true);
HS_JOURNAL(uio_t_journal_dlsym_kprobe, KPROBE, 1, .dlsym = true);

/* The trace hook pins uio_t SQEs by the channel bound at their ALLOC. */
static bool chan_bound(const FIXTURE_VARIANT(hs) *v)
{
	return v->stars == 1 && !v->probed && !v->kio && !v->no_chan &&
	       (v->mode == STEPTIME_ATTACH_KPROBE ||
		v->mode == STEPTIME_ATTACH_FENTRY);
}

static __u64 now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (__u64)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			n = -1;
	close(in);
	close(out);
	return n < 0 ? -1 : 0;
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
 * Device @dev as variant @v's chip picks its SQ modes, or (@v NULL) back
 * to the module's defaults. A device still holding queues refuses (EBUSY):
 * the processes of a test that failed early are still exiting.
 */
static int set_chip(int ctl, __u32 dev, const FIXTURE_VARIANT(hs) *v)
{
	struct npusim_config c = {
		.mask = NPUSIM_CFG_STARS | NPUSIM_CFG_SQ_MODE |
			NPUSIM_CFG_SOFT_POLL | NPUSIM_CFG_SEND_MODE |
			NPUSIM_CFG_SQCQ_PAIR,
		.device = dev, .stars = v ? v->stars : 1,
		.sq_mode = v ? NPUSIM_SQ_MODE_CHIP : 0,
		.send_mode = v && v->kio ? NPUSIM_SEND_HIGH_SECURITY : 0,
		.soft_poll_ms = 4, .soft_trigger = !(v && v->late),
		.sqcq_pair = !(v && v->non_pair),
	};
	__u64 end = now_ms() + WAIT_MS;

	while (ioctl(ctl, NPUSIM_IOC_SET_CONFIG, &c)) {
		if (errno != EBUSY || now_ms() > end)
			return -errno;
		usleep(10000);
	}
	return 0;
}

FIXTURE_SETUP(hs)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o), .attach_mode = variant->mode,
		.pin_dir = PIN_DIR, .map_mode = 0644, .map_gid = -1,
	};
	struct steptime_info inf;
	int d, err;

	self->ctl = -1;
	self->t = NULL;
	if (geteuid())
		SKIP(return, "loading BPF needs root");
	self->ctl = open("/dev/" NPUSIM_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (self->ctl < 0)
		SKIP(return, "no npusim here (a VM test)");
	/* run_vm.sh loads npusim with devices=8 for this program (settings). */
	self->ndev = devices();
	/* 8 ranks on 8 devices, as on a server: never fewer unnoticed */
	ASSERT_EQ(MAX_PROCS, self->ndev)
		TH_LOG("npusim has %d devices: run_vm.sh gives this program %d (settings)",
		       self->ndev, MAX_PROCS);
	for (d = 0; d < self->ndev; d++)
		ASSERT_EQ(0, set_chip(self->ctl, d, variant));
	ASSERT_EQ(0, st_beside_self(self->hal, sizeof(self->hal), 2,
				 "libascend_hal.so"));
	snprintf(self->other, sizeof(self->other),
		 "/tmp/hal_steps_%d/libascend_hal.so", getpid());
	o.hal = self->hal;
	o.journal = variant->journal;
	if (!variant->probed) {
		*strrchr(self->other, '/') = 0;
		ASSERT_EQ(0, mkdir(self->other, 0755));
		strcat(self->other, "/libascend_hal.so");
		ASSERT_EQ(0, copy_file(self->hal, self->other));
		o.hal = self->other;
	}
	/* The step API of the processes finds this load. */
	ASSERT_EQ(0, setenv("STEPTIME_PIN_DIR", PIN_DIR, 1));
	steptime__unload(PIN_DIR);
	if (variant->no_chan)
		ASSERT_EQ(0, setenv("STEPTIME_NO_CHAN_HOOK", "1", 1));
	err = steptime__load(&o);
	unsetenv("STEPTIME_NO_CHAN_HOOK");
	if (err == -EOPNOTSUPP)
		SKIP(return, "%s: not on this kernel",
		     steptime__attach_mode_str(variant->mode));
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &inf));
	ASSERT_EQ(1, inf.nhal) TH_LOG("%s", inf.reason);
	self->t = mmap(NULL, sizeof(*self->t) * MAX_PROCS,
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->t);
	memset(self->t, 0, sizeof(*self->t) * MAX_PROCS);
}

FIXTURE_TEARDOWN(hs)
{
	int d;

	if (self->ctl < 0)
		return;
	steptime__unload(PIN_DIR);
	for (d = 0; d < self->ndev; d++)
		set_chip(self->ctl, d, NULL);
	close(self->ctl);
	if (!variant->probed) {
		unlink(self->other);
		*strrchr(self->other, '/') = 0;
		rmdir(self->other);
	}
	if (self->t)
		munmap(self->t, sizeof(*self->t) * MAX_PROCS);
}

/* ---------------------------------------------------------------------- */
/* One process: a device, a stream, its SQ, STEPS steps                   */
/* ---------------------------------------------------------------------- */

struct rank {
	__u32 dev, stars, lcqe, sqes, stream, sq, cq, lcq, task, sent, reports;
	__u32 task_ns;		/* how long each task runs on the device */
	__u64 seen;		/* the SQ head last read, as a position */
	bool full, report_first, head_first, cann_marks, end_report;
	bool dlsym;		/* the next send around the journal */
	struct proc_truth *t;
};

#define CHECK(cond)							\
	do {								\
		if (!(cond) && !r->t->failed) {				\
			r->t->failed = __LINE__;			\
			return -1;					\
		}							\
	} while (0)

/*
 * SQE @j of a task of @n (its id r->task), as CANN lays them out; on
 * @report, the SQEs that ask for a report. Return: the reports asked.
 */
static __u32 sqe_fill(struct rank *r, __u8 *p, __u32 j, __u32 n, bool report)
{
	memset(p, 0, TRS_SQE_SIZE);
	if (r->stars == 2) {
		struct trs_sqe_v2 *s = (void *)p;
		__u16 len = (n - 1) << TRS_SQE_V2_LEN_SHIFT;

		/*
		 * Only the first SQE has a header (a CCU task's second is raw
		 * arguments, ccu_sqe.cc): the others are bytes no header
		 * reading could take for a task.
		 */
		if (j) {
			memset(p, 0xa5, TRS_SQE_SIZE);
			return 0;
		}
		s->type = TRS_SQE_AICPU;
		s->flags = report ? TRS_SQE_V2_F_WR_CQE : 0;
		s->task_id = r->task;
		memcpy(p + 14, &len, sizeof(len));
		s->task.sim_duration_ns = r->task_ns;
		return report;
	} else {
		struct trs_sqe *s = (void *)p;

		s->type = TRS_SQE_AICPU;
		s->flags = report ? TRS_SQE_F_WR_CQE : 0;
		s->rt_stream_id = r->stream;
		s->task_id = r->task;
		s->task.sim_duration_ns = r->task_ns;
		return report;
	}
}

/*
 * A stream step mark, the place-holder rtProfilerTraceEx() submits; on
 * @report, it asks for a report. Return: the reports asked.
 */
static __u32 sqe_mark(struct rank *r, __u8 *p, __u64 index_id, __u16 tag,
		      bool report)
{
	memset(p, 0, TRS_SQE_SIZE);
	if (r->stars == 2) {
		struct trs_sqe_v2 *s = (void *)p;

		s->type = TRS_SQE_PLACE_HOLDER;
		s->flags = report ? TRS_SQE_V2_F_WR_CQE : 0;
		s->task_id = r->task;
		s->place_holder.task_type = TRS_TASK_PROFILER_TRACE_EX;
		s->place_holder.profiler_trace_id = index_id;
		s->place_holder.model_id = TRS_MODEL_ID_NONE;
		s->place_holder.tag_id = tag;
	} else {
		struct trs_sqe *s = (void *)p;

		s->type = TRS_SQE_PLACE_HOLDER;
		s->flags = report ? TRS_SQE_F_WR_CQE : 0;
		s->block_dim = TRS_TASK_PROFILER_TRACE_EX;
		s->rt_stream_id = r->stream;
		s->task_id = r->task;
		s->place_holder.profiler_trace_id = index_id;
		s->place_holder.model_id = TRS_MODEL_ID_NONE;
		s->place_holder.tag_id = tag;
	}
	return report;
}

/* One task of @n SQEs (one halSqTaskSend(), as the runtime's). */
static drvError_t send(struct rank *r, __u8 *sqes, __u32 n)
{
	struct halTaskSendInfo s = {
		.type = DRV_NORMAL_TYPE, .tsId = TS, .sqId = r->sq,
		.sqe_addr = sqes, .sqe_num = n, .timeout = WAIT_MS,
	};
	drvError_t (*fn)(uint32_t, struct halTaskSendInfo *) = halSqTaskSend;
	drvError_t ret;

	/* The HAL's own function, not the entry libsteptime patched. */
	if (r->dlsym)
		fn = (drvError_t (*)(uint32_t, struct halTaskSendInfo *))
			dlsym(RTLD_DEFAULT, "halSqTaskSend");
	ret = fn ? fn(r->dev, &s) : DRV_ERROR_INVALID_VALUE;
	if (!ret) {
		r->sent += n;
		r->task++;
	}
	return ret;
}

/* The SQ head as the runtime reads it (the mapping, for a mapped SQ). */
static int head(struct rank *r, __u32 *h)
{
	struct halSqCqQueryInfo q = {
		.type = DRV_NORMAL_TYPE, .tsId = TS, .sqId = r->sq,
		.prop = DRV_SQCQ_PROP_SQ_HEAD,
	};

	if (halSqCqQuery(r->dev, &q))
		return -1;
	*h = q.value[0];
	return 0;
}

/* The reports the stream's tasks asked for since the last. */
static int reports_read(struct rank *r)
{
	struct trs_logic_cqe cqe[64];
	__u32 got = 0;

	while (got < r->reports) {
		struct halReportRecvInfo q = {
			.type = DRV_LOGIC_TYPE, .tsId = TS, .cqId = r->lcq,
			.timeout = WAIT_MS, .cqe_addr = (__u8 *)cqe,
			.cqe_num = 64, .stream_id = r->stream,
			.task_id = 0xffffffff,
		};

		if (halCqReportRecv(r->dev, &q) != DRV_ERROR_NONE)
			return -1;
		got += q.report_cqe_num;
	}
	r->reports = 0;
	return 0;
}

/* The SQ head read until every task sent is complete. */
static int head_wait(struct rank *r)
{
	__u64 end = now_ms() + WAIT_MS;
	__u32 h;

	for (;;) {
		if (head(r, &h))
			return -1;
		if (h == r->sent % DEPTH) {
			r->seen = r->sent;
			return 0;
		}
		if (now_ms() > end)
			return -1;
		usleep(500);
	}
}

/*
 * Wait as a runtime's stream sync does: reports, then the head; or the
 * other way round, as another thread's head query can be first.
 */
static int sync_stream(struct rank *r)
{
	if (r->head_first)
		return head_wait(r) || reports_read(r) ? -1 : 0;
	return reports_read(r) || head_wait(r) ? -1 : 0;
}

/* The stream's SQ and its CQ, as the runtime allocates them. */
static int rank_sq_alloc(struct rank *r)
{
	struct halSqCqInputInfo in = {
		.type = DRV_NORMAL_TYPE, .sqeSize = 64, .cqeSize = 16,
		.sqeDepth = DEPTH, .cqeDepth = DEPTH,
	};
	struct halSqCqOutputInfo out;

	if (r->stars == 2)
		in.cqeSize = 32;	/* as the runtime on a 950 */
	in.info[0] = r->stream;
	CHECK(halSqCqAllocate(r->dev, &in, &out) == DRV_ERROR_NONE);
	r->sq = out.sqId;
	r->cq = out.cqId;
	r->sent = 0;
	r->seen = 0;
	return 0;
}

/* The stream's SQ freed (its tasks all done) and another allocated. */
static int rank_requeue(struct rank *r)
{
	struct halSqCqFreeInfo f = {
		.type = DRV_NORMAL_TYPE, .tsId = TS, .sqId = r->sq,
		.cqId = r->cq,
	};

	CHECK(halSqCqFree(r->dev, &f) == DRV_ERROR_NONE);
	return rank_sq_alloc(r);
}

static int rank_open(struct rank *r)
{
	struct halResourceIdInputInfo rin = { .type = DRV_STREAM_ID };
	struct halResourceIdOutputInfo rout;
	struct halSqCqInputInfo in = {};
	struct halSqCqOutputInfo out;
	halDevOpenIn oin = { 0 };
	halDevOpenOut oout;

	CHECK(halDeviceOpen(r->dev, &oin, &oout) == DRV_ERROR_NONE);
	CHECK(halResourceIdAlloc(r->dev, &rin, &rout) == DRV_ERROR_NONE);
	r->stream = rout.resourceId;
	if (rank_sq_alloc(r))
		return -1;
	in.type = DRV_LOGIC_TYPE;
	in.cqeSize = r->lcqe;
	in.cqeDepth = 1024;
	in.info[0] = r->stream;
	in.info[1] = gettid();
	CHECK(halSqCqAllocate(r->dev, &in, &out) == DRV_ERROR_NONE);
	r->lcq = out.cqId;
	r->t->sq = r->sq;
	r->t->stream = r->stream;
	return 0;
}

/* A task of @n SQEs at @sqes; @report: it asks for one. Return: reports. */
static __u32 task_fill(struct rank *r, __u8 *sqes, __u32 n, bool report)
{
	__u32 j, reports = 0;

	for (j = 0; j < n; j++)
		reports += sqe_fill(r, sqes + j * TRS_SQE_SIZE, j, n, report);
	return reports;
}

/*
 * Room for @n more SQEs by the head the process last read (r->seen): as
 * CANN's runtime, which sends only into room its own SQ_HEAD queries
 * showed (ProcessTaskWait), so that every position a send takes is of a
 * task known complete. Waits, reading the head, until there is.
 */
static int room_wait(struct rank *r, __u32 n)
{
	__u64 end = now_ms() + WAIT_MS;
	__u32 h = 0;

	while (r->sent - r->seen + n > DEPTH - 1) {
		CHECK(now_ms() < end);
		CHECK(!head(r, &h));
		r->seen = r->sent - (r->sent % DEPTH + DEPTH - h) % DEPTH;
		sched_yield();
	}
	return 0;
}

/*
 * A task of @n SQEs at @sqes. On a full variant, when it would just not
 * fit by the last head read, it is tried before the wait, as a runtime
 * sending ahead of its reclaim would: the library refuses it (no room)
 * unless the device has moved on, and the runtime calls again with the
 * same SQEs (task_submit.cc), counted once. On *@give_up, the first
 * refusal gives the task up instead: it goes anew from @alt (a mark
 * never). Its positions' last tasks are then still known complete. Only
 * on uio_d, whose library counts room from the head the runtime reads: a
 * uio_t library counts it from the soft queue's, ahead of the device's,
 * and a send it takes past the runtime's room would leave the runtime a
 * whole SQ of tasks no head read can tell from none.
 */
static int task_send(struct rank *r, __u8 *sqes, __u8 *alt, __u32 n,
		     bool report, bool *give_up)
{
	drvError_t ret = DRV_ERROR_NO_RESOURCES;
	int tries = r->full && r->stars == 2 &&
		    r->sent - r->seen + n == DEPTH ? 2 : 0;

	while (tries-- > 0) {
		ret = send(r, sqes, n);
		if (ret != DRV_ERROR_NO_RESOURCES)
			break;
		if (*give_up) {
			*give_up = false;
			r->t->given_up++;
			task_fill(r, alt, n, report);
			sqes = alt;
		} else {
			r->t->retries++;
		}
	}
	if (ret == DRV_ERROR_NO_RESOURCES) {
		if (room_wait(r, n))
			return -1;
		ret = send(r, sqes, n);
	}
	CHECK(ret == DRV_ERROR_NONE);
	return 0;
}

/*
 * The runtime's DebugSqTaskSend() (npu_driver_res.cc:2225-2236): a send
 * of type DRV_GDB_TYPE, which goes to a GDB SQ of that id, never to the
 * stream's SQ; this process has none, so the library refuses it
 * (trs_get_sq_info(): DRV_ERROR_INVALID_VALUE) and it is no task.
 */
static int debug_send(struct rank *r, __u8 *sqe)
{
	struct halTaskSendInfo s = {
		.type = DRV_GDB_TYPE, .tsId = TS, .sqId = r->sq,
		.sqe_addr = sqe, .sqe_num = 1,
	};

	memset(sqe, 0, TRS_SQE_SIZE);
	CHECK(halSqTaskSend(r->dev, &s) == DRV_ERROR_INVALID_VALUE);
	return 0;
}

/*
 * Step @s: its marks (on the stream for even devices, on the host for odd
 * ones), a debug send, then tasks of r->sqes SQEs (0: 1-3 in turn), one
 * per send; the last asks for a report.
 */
static int rank_step(struct rank *r, int s)
{
	__u64 index_id = INDEX0 + s;
	bool stream = !(r->dev & 1), give_up = r->full, no = false, report;
	__u32 sends = 1 + (r->dev + s) % 4, i, n, reports = 0;
	bool dlsym_step = r->t->dlsym;
	__u8 sqes[5 * TRS_SQE_SIZE], alt[5 * TRS_SQE_SIZE];
	struct steptime_step_stats rec;

	if (stream && r->cann_marks)
		CHECK(steptime__mark(index_id, STEPTIME_TAG_START, NULL) == 0);
	if (stream) {
		sqe_mark(r, sqes, index_id, STEPTIME_TAG_START, false);
		CHECK(!task_send(r, sqes, NULL, 1, false, &no));
	} else {
		CHECK(steptime__mark(index_id, STEPTIME_TAG_START, NULL) == 0);
	}
	if (r->full)
		sends += DEPTH;
	if (debug_send(r, sqes))
		return -1;
	if (dlsym_step && sends < 2)
		sends = 2;
	for (i = 0; i < sends; i++) {
		n = r->sqes ? r->sqes : 1 + (s + i) % 3;
		/* 5-SQE tasks after one that lets a 5th just not fit */
		if (r->sqes == 5 && !i)
			n = stream ? 3 : 4;
		report = i == sends - 1 || (r->report_first && !i);
		reports += task_fill(r, sqes, n, report);
		/* Not the last: the journal's next send finds it. */
		r->dlsym = dlsym_step && !i;
		if (task_send(r, sqes, alt, n, report, &give_up))
			return -1;
		r->dlsym = false;
		r->t->tasks[s]++;
		r->t->reporting[s] += report;
	}
	r->reports += reports;
	if (stream && r->cann_marks)
		CHECK(steptime__mark(index_id, STEPTIME_TAG_END, NULL) == 0);
	if (stream) {
		r->reports += sqe_mark(r, sqes, index_id, STEPTIME_TAG_END,
				       r->end_report);
		CHECK(!task_send(r, sqes, NULL, 1, false, &no));
	}
	/* Finished by its END's report alone, as the kernel saw it. */
	if (stream && r->end_report)
		CHECK(!st_step_wait_done(PIN_DIR, getpid(), index_id,
					 WAIT_MS / 10, &rec));
	CHECK(sync_stream(r) == 0);
	if (!stream)
		CHECK(steptime__mark(index_id, STEPTIME_TAG_END, NULL) == 0);
	return 0;
}

/*
 * The process of device @dev: opens its queues, says so on @ready, waits
 * for @start to close (every process holds its queues: no SQE can be told
 * from the others' by its stream id, as in a job whose ranks all start
 * before they train), runs, flushes, then waits for @go.
 */
static void rank_main(struct proc_truth *t, __u32 dev,
		      const FIXTURE_VARIANT(hs) *v, int ready, int start,
		      int go)
{
	struct rank r = {
		.dev = dev, .stars = v->stars, .lcqe = v->lcqe,
		.sqes = v->sqes, .t = t, .full = v->full,
		.report_first = v->report_first, .head_first = v->head_first,
		.cann_marks = v->cann_marks, .end_report = v->end_report,
		.task_ns = v->full ? 200000 : 20000,
	};
	struct steptime_lib_counters lc;
	int s, opened;
	char c = 0;

	t->pid = getpid();
	t->dlsym = v->dlsym;
	opened = !rank_open(&r);
	if (!steptime__lib_counters(&lc, sizeof(lc)))
		t->got_patched = lc.got_patched;
	if (write(ready, &c, 1) != 1 || read(start, &c, 1) < 0)
		_exit(2);
	for (s = 0; opened && s < STEPS; s++) {
		if (v->requeue && s == STEPS / 2 && rank_requeue(&r))
			break;
		if (rank_step(&r, s))
			break;
	}
	/* Host marks: the last END is handed over now, not at exit. */
	if (!t->failed && (dev & 1) && steptime__flush())
		t->failed = __LINE__;
	/* Stays alive (queues held) until the test has read its steps. */
	__atomic_store_n(&t->pid, -getpid(), __ATOMIC_RELEASE);
	if (read(go, &c, 1) < 0)
		_exit(2);
	_exit(0);
}

/* ---------------------------------------------------------------------- */

/* The events ring's finished steps, as `steptime trace` reads them. */
struct emitted {
	const struct proc_truth *t;
	int ndev;
	__u32 flags[MAX_PROCS][STEPS];	/* of the record emitted */
	__u32 count[MAX_PROCS][STEPS];
};

static int on_emitted(void *ctx, void *data, size_t len)
{
	const struct steptime_step_stats *r = data;
	struct emitted *e = ctx;
	__u64 s = r->index_id - INDEX0;
	int d;

	if (len < sizeof(*r) || r->index_id < INDEX0 || s >= STEPS)
		return 0;
	for (d = 0; d < e->ndev; d++) {
		if (r->tgid != (__u32)-e->t[d].pid)
			continue;
		e->flags[d][s] = r->flags;
		e->count[d][s]++;
	}
	return 0;
}

/*
 * Each stream step of the @ndev processes @t (even devices) was emitted
 * once, finished, with both its host marks: none came after its finish.
 */
static void emitted_check(struct __test_metadata *_metadata,
			  const struct proc_truth *t, int ndev)
{
	__u32 want = STEPTIME_F_HOST_START | STEPTIME_F_HOST_END |
		     STEPTIME_F_STREAM;
	struct emitted e = { .t = t, .ndev = ndev };
	struct ring_buffer *rb;
	int fd, d, s;

	fd = bpf_obj_get(PIN_DIR "/events");
	ASSERT_LE(0, fd) TH_LOG("events: %s", strerror(errno));
	rb = ring_buffer__new(fd, on_emitted, &e, NULL);
	ASSERT_NE(NULL, rb);
	EXPECT_LE(0, ring_buffer__consume(rb));
	ring_buffer__free(rb);
	close(fd);
	for (d = 0; d < ndev; d += 2)
		for (s = 0; s < STEPS; s++) {
			EXPECT_EQ(1, e.count[d][s])
				TH_LOG("dev %d step %d: emitted %u times",
				       d, s, e.count[d][s]);
			EXPECT_EQ(want, e.flags[d][s] & want)
				TH_LOG("dev %d step %d: flags %#x", d, s,
				       e.flags[d][s]);
		}
}

/* What a step that failed a check has, and what went astray: the why. */
static void unfinished_log(struct __test_metadata *_metadata,
			   const struct proc_truth *t, int d, int s)
{
	struct steptime_step_stats rec;
	struct steptime_counters c;

	if (!st_step_get(PIN_DIR, -t->pid, INDEX0 + s, false, &rec))
		TH_LOG("dev %d step %d: %llu tasks of %u, %llu complete, state %u",
		       d, s, (unsigned long long)rec.tasks, t->tasks[s],
		       (unsigned long long)rec.completions, rec.state);
	if (steptime__read_counters(PIN_DIR, &c))
		return;
	TH_LOG("task_overwritten %llu heads_behind %llu sq_resyncs %llu hal_send_retries %llu hal_sends_retracted %llu reports_unmatched %llu hook_reports %llu hook_early %llu",
	       (unsigned long long)c.task_overwritten,
	       (unsigned long long)c.heads_behind,
	       (unsigned long long)c.sq_resyncs,
	       (unsigned long long)c.hal_send_retries,
	       (unsigned long long)c.hal_sends_retracted,
	       (unsigned long long)c.reports_unmatched,
	       (unsigned long long)c.hook_reports,
	       (unsigned long long)c.hook_early);
	TH_LOG("hook_deferred %llu hook_unattributed %llu hook_errors %llu completions %llu",
	       (unsigned long long)c.hook_deferred,
	       (unsigned long long)c.hook_unattributed,
	       (unsigned long long)c.hook_errors,
	       (unsigned long long)c.completions);
}

static void run_ranks(struct __test_metadata *_metadata,
		      FIXTURE_DATA(hs) *self, const FIXTURE_VARIANT(hs) *variant)
{
	/* One process alone: its CQ hook knows whose each report is. */
	int nr = variant->one_rank ? 1 : self->ndev;
	bool bound = chan_bound(variant);
	struct steptime_step_stats rec;
	struct steptime_counters cnt;
	struct steptime_info inf;
	int go[2], ready[2], start[2], d, s, status, err;
	unsigned int blind_steps = 0;	/* stream steps absent or flagged */
	__u64 end;
	pid_t pid;
	char c;

	/* Said either way; the steps below tell whether it worked. */
	ASSERT_EQ(0, steptime__read_info(PIN_DIR, &inf));
	if (bound) {
		EXPECT_NE(NULL, strstr(inf.reason, "channel binding on"))
			TH_LOG("%s", inf.reason);
	} else if (variant->no_chan) {
		EXPECT_NE(NULL, strstr(inf.reason, "channel binding off"))
			TH_LOG("%s", inf.reason);
	}
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(start));
	for (d = 0; d < nr; d++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close(go[1]);
			close(ready[0]);
			close(start[1]);
			rank_main(&self->t[d], d, variant, ready[1], start[0],
				  go[0]);
		}
	}
	close(go[0]);
	close(ready[1]);
	close(start[0]);
	/* Every process has its queues (or has died): all start at once. */
	for (d = 0; d < nr; d++)
		if (read(ready[0], &c, 1) != 1)
			break;
	close(ready[0]);
	close(start[1]);
	end = now_ms() + 4 * WAIT_MS;
	for (d = 0; d < nr; d++)
		while (__atomic_load_n(&self->t[d].pid, __ATOMIC_ACQUIRE) >= 0 &&
		       now_ms() < end)
			usleep(10000);
	for (d = 0; d < nr; d++) {
		struct proc_truth *t = &self->t[d];
		__u64 sent = 0, counted = 0;
		bool host_marked = false;

		ASSERT_GT(0, t->pid) TH_LOG("device %d's process hangs", d);
		EXPECT_EQ(0, t->failed) TH_LOG("device %d: line %d", d, t->failed);
		/* The ids the simulator gave collide across devices. */
		if (d) {
			EXPECT_EQ(self->t[0].sq, t->sq);
			EXPECT_EQ(self->t[0].stream, t->stream);
		}
		for (s = 0; s < STEPS; s++) {
			err = st_step_wait_done(PIN_DIR, -t->pid, INDEX0 + s,
						variant->probed ||
						(bound && !(d & 1)) ? 500 : 1,
						&rec);
			if (bound && !(d & 1)) {
				/*
				 * Stream marks, each SQE pinned by its
				 * channel: exact, whenever it was copied. The
				 * last END, which no report follows, may still
				 * leave its step open: only the last.
				 */
				if (err && s == STEPS - 1)
					err = st_step_get(PIN_DIR, -t->pid,
							  INDEX0 + s, false,
							  &rec);
				ASSERT_EQ(0, err) TH_LOG("dev %d step %d", d, s);
				EXPECT_EQ(t->tasks[s], rec.tasks)
					TH_LOG("dev %d step %d", d, s);
				EXPECT_EQ(t->tasks[s], rec.completions)
					TH_LOG("dev %d step %d", d, s);
				EXPECT_EQ(0, rec.flags & STEPTIME_F_UIO)
					TH_LOG("dev %d step %d: flagged", d, s);
				EXPECT_NE(0, rec.flags & STEPTIME_F_STREAM)
					TH_LOG("dev %d step %d", d, s);
				continue;
			}
			if (bound) {
				/*
				 * Host marks: the worker copies a task's
				 * SQEs after the send, and this process makes
				 * no ioctl between a mark and its sends, so
				 * which step a task was sent in cannot be
				 * known: flagged (its figures absent), never
				 * silently wrong. Its SQEs are its own,
				 * counted once: never more than it sent.
				 */
				if (err)
					err = st_step_get(PIN_DIR, -t->pid,
							  INDEX0 + s, false,
							  &rec);
				ASSERT_EQ(0, err) TH_LOG("dev %d step %d", d, s);
				EXPECT_NE(0, rec.flags & STEPTIME_F_UIO)
					TH_LOG("dev %d step %d: %llu tasks of %u, unflagged",
					       d, s, (unsigned long long)rec.tasks,
					       t->tasks[s]);
				counted += rec.tasks;
				sent += t->tasks[s];
				host_marked = true;
				continue;
			}
			if (!variant->probed) {
				/* Flagged, or exact: never silently short. */
				if (err)
					err = st_step_get(PIN_DIR, -t->pid,
							  INDEX0 + s, false,
							  &rec);
				/*
				 * A stream mark nobody can pin to this process
				 * (uio_d: never seen; uio_t: the same stream
				 * on other devices) makes no record at all,
				 * rather than one short.
				 */
				if (err == -ENOENT && !(d & 1)) {
					blind_steps++;
					continue;
				}
				ASSERT_EQ(0, err) TH_LOG("dev %d step %d", d, s);
				/*
				 * Flagged or not, never more tasks than were
				 * sent: the trace hook sees a task's SQEs one
				 * by one and counts the task once.
				 */
				EXPECT_GE(t->tasks[s], rec.tasks)
					TH_LOG("dev %d step %d", d, s);
				EXPECT_GE(t->tasks[s], rec.completions)
					TH_LOG("dev %d step %d", d, s);
				EXPECT_TRUE((rec.flags & STEPTIME_F_UIO) ||
					    (rec.tasks == t->tasks[s] &&
					     rec.completions == t->tasks[s]))
					TH_LOG("dev %d step %d: %llu tasks of %u, unflagged",
					       d, s, (unsigned long long)rec.tasks,
					       t->tasks[s]);
				blind_steps += !(d & 1) &&
					       (rec.flags & STEPTIME_F_UIO);
				continue;
			}
			if (variant->dlsym) {
				/*
				 * A task sent around the journal: flagged
				 * (ENDED once its tasks complete, or still
				 * open), never counted short unflagged.
				 */
				if (err)
					err = st_step_get(PIN_DIR, -t->pid,
							  INDEX0 + s, false,
							  &rec);
				ASSERT_EQ(0, err) TH_LOG("dev %d step %d", d, s);
				EXPECT_NE(0, rec.flags & STEPTIME_F_UIO)
					TH_LOG("dev %d step %d: %llu tasks of %u, unflagged",
					       d, s, (unsigned long long)rec.tasks,
					       t->tasks[s]);
				EXPECT_GE(t->tasks[s], rec.tasks)
					TH_LOG("dev %d step %d", d, s);
				continue;
			}
			if (err)
				unfinished_log(_metadata, t, d, s);
			ASSERT_EQ(0, err) TH_LOG("dev %d step %d not done", d, s);
			if (variant->journal && !variant->kio) {
				EXPECT_LT(0, t->got_patched) TH_LOG("dev %d", d);
			}
			EXPECT_EQ(t->tasks[s], rec.tasks)
				TH_LOG("dev %d step %d", d, s);
			EXPECT_EQ(t->tasks[s], rec.completions)
				TH_LOG("dev %d step %d", d, s);
			/*
			 * The journal's steps count no report of their own,
			 * and say so (F_JOURNAL: per-task figures unmeasured).
			 */
			EXPECT_EQ(variant->journal && !variant->kio,
				  !!(rec.flags & STEPTIME_F_JOURNAL))
				TH_LOG("dev %d step %d", d, s);
			if (variant->journal && !variant->kio)
				goto flags;
			EXPECT_EQ(t->reporting[s], rec.reported)
				TH_LOG("dev %d step %d", d, s);
			if (rec.reported != t->reporting[s])
				unfinished_log(_metadata, t, d, s);
flags:
			EXPECT_EQ(0, rec.flags & STEPTIME_F_UIO)
				TH_LOG("dev %d step %d", d, s);
			EXPECT_EQ(!(d & 1), !!(rec.flags & STEPTIME_F_STREAM))
				TH_LOG("dev %d step %d", d, s);
		}
		/*
		 * A host-marked process's tasks, each counted once in its own
		 * steps, which step unknown: never more than it sent, and
		 * some (none at all would be a count lost, not a flag).
		 */
		EXPECT_GE(sent, counted) TH_LOG("dev %d", d);
		if (host_marked)
			EXPECT_LT(0, counted) TH_LOG("dev %d", d);
	}
	/*
	 * Without the channel binding, the stream ids every device shares
	 * leave some stream-marked step absent or flagged: were none, the
	 * control would show nothing the binding does.
	 */
	if (variant->no_chan)
		EXPECT_LT(0, blind_steps);
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &cnt));
	if (variant->journal && !variant->kio) {
		/* No per-task uprobe; every step's figures from the journals. */
		EXPECT_EQ(0, cnt.hal_sends);
		EXPECT_EQ(0, cnt.hal_head_queries);
		EXPECT_EQ(nr * (variant->requeue ? 2 : 1), cnt.sqs_hal);
		EXPECT_EQ(0, cnt.sqs_blind);
		EXPECT_LT(0, cnt.journal_snaps);
		EXPECT_LT(0, cnt.journal_drains);
		EXPECT_EQ(0, cnt.journal_stale);
		EXPECT_EQ(0, cnt.journal_segs_full);
		EXPECT_EQ(0, cnt.tasks_unowned);
		EXPECT_EQ(0, cnt.task_overwritten);
		/* Reports of journaled SQs are left alone, not lost. */
		EXPECT_EQ(0, cnt.reports_unmatched);
		if (variant->dlsym) {
			EXPECT_LT(0, cnt.journal_mismatch);
		} else {
			EXPECT_EQ(0, cnt.journal_mismatch);
		}
	} else if (variant->kio) {
		/* The SEND and QUERY ioctls count, the HAL's calls not again. */
		EXPECT_EQ(nr, cnt.sqs_hal);
		EXPECT_EQ(0, cnt.hal_sends);
		EXPECT_EQ(0, cnt.hal_head_queries);
		EXPECT_LT(0, cnt.head_queries);
	} else if (variant->probed) {
		__u64 retries = 0, given_up = 0;

		for (d = 0; d < nr; d++) {
			retries += self->t[d].retries;
			given_up += self->t[d].given_up;
		}
		/* Every call seen: each repeat and each give-up, counted. */
		EXPECT_EQ(retries, cnt.hal_send_retries);
		EXPECT_EQ(given_up, cnt.hal_sends_retracted);
		if (variant->full && variant->stars == 2)
			EXPECT_LT(0, given_up) TH_LOG("no SQ was ever full");
		EXPECT_EQ(0, cnt.hal_sends_overlapped);
		EXPECT_EQ(0, cnt.sqes_send_failed);
		EXPECT_EQ(0, cnt.task_overwritten);
		EXPECT_EQ(nr * (variant->requeue ? 2 : 1), cnt.sqs_hal);
		EXPECT_EQ(0, cnt.sqs_blind);
		EXPECT_LT(0, cnt.hal_sends);
		EXPECT_LT(0, cnt.hal_head_queries);
		EXPECT_EQ(0, cnt.hook_unattributed);
		EXPECT_EQ(0, cnt.tasks_unowned);
		/* Each report found its task, however late it was read. */
		EXPECT_EQ(0, cnt.reports_unmatched);
	} else {
		EXPECT_EQ(0, cnt.sqs_hal);
		EXPECT_EQ(0, cnt.hal_sends);
	}
	/* The steps were finished by the CQ hook, not by the RECVs after. */
	if (variant->end_report) {
		EXPECT_LT(0, cnt.hook_reports);
		EXPECT_EQ(0, cnt.hook_deferred);
	}
	if (variant->cann_marks)
		emitted_check(_metadata, self->t, nr);
	/* Every uio_t SQE pinned to its SQ by its channel, none guessed. */
	if (bound) {
		EXPECT_LT(0, cnt.sqes_traced);
		EXPECT_EQ(0, cnt.sqes_unowned);
	}
	close(go[1]);
	for (d = 0; d < nr; d++) {
		ASSERT_EQ(-self->t[d].pid, waitpid(-self->t[d].pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
}

TEST_F(hs, steps_exact)
{
	/* Skipped in its set-up (the harness runs the test anyway). */
	if (!self->t)
		return;
	run_ranks(_metadata, self, variant);
}

/* ---------------------------------------------------------------------- */
/* One load, processes probed and not in turn on one 910B3                 */
/* ---------------------------------------------------------------------- */

#define REUSE_ROUNDS	6
#define REUSE_STEPS	2
#define REUSE_TASKS	6

/*
 * The SQE trace hook skips the SQEs of the HAL's uio_t SQs (their sends
 * counted them) and remembers, per CPU, the last channel it skipped. A
 * process that frees its SQ frees the channel, and the next process's
 * ALLOC on that device may get the same memory for its own: if that
 * process's HAL is not probed, every SQE of its channel must count again.
 * Each round runs hal_steps (the ACL runtime over libascend_hal.so, steps
 * marked with aclprofGetStepTimestamp()) once, alternately on the probed
 * library and on an unprobed copy, with steptime loaded once for all.
 */
FIXTURE(reuse) {
	int ctl;
	char hal_dir[PATH_MAX];	/* the probed library's folder */
	char other[PATH_MAX];	/* an unprobed copy's folder */
	char prog[PATH_MAX];	/* hal_steps */
};

FIXTURE_VARIANT(reuse) {
	int mode;
};

/* The modes with the channel hooks: a uio_t SQE is pinned by its channel. */
FIXTURE_VARIANT_ADD(reuse, fentry) { .mode = STEPTIME_ATTACH_FENTRY };
FIXTURE_VARIANT_ADD(reuse, kprobe) { .mode = STEPTIME_ATTACH_KPROBE };

static const FIXTURE_VARIANT(hs) reuse_chip = { .stars = 1, .lcqe = 32 };

/*
 * This process (and so each hal_steps it starts) and npusim's engine
 * threads, which copy the soft queues' SQEs, on CPU 0 when @one, else on
 * every CPU: a freed SQ's memory then goes to the next ALLOC, and the
 * worker copies on the CPU whose trace hook remembered the channel.
 */
struct pin_ctx {
	cpu_set_t set;
	int pinned;
};

static void engine_pin(pid_t pid, void *arg)
{
	struct pin_ctx *p = arg;

	if (!sched_setaffinity(pid, sizeof(p->set), &p->set))
		p->pinned++;
}

static int reuse_pin(bool one)
{
	struct pin_ctx p = { .pinned = 0 };
	int n, err;

	CPU_ZERO(&p.set);
	if (one)
		CPU_SET(0, &p.set);
	else
		for (n = 0; n < CPU_SETSIZE; n++)
			CPU_SET(n, &p.set);
	if (sched_setaffinity(0, sizeof(p.set), &p.set))
		return -errno;
	err = st_engines_each(engine_pin, &p);
	return err < 0 ? err : p.pinned;
}

FIXTURE_SETUP(reuse)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o), .attach_mode = variant->mode,
		.pin_dir = PIN_DIR, .map_mode = 0644, .map_gid = -1,
	};
	char hal[PATH_MAX], copy[PATH_MAX + 32];
	int err;

	/*
	 * Skipped as steptime's fixtures do: 6.1's harness would run the
	 * test after a plain SKIP, and the teardown after neither, so
	 * nothing it undoes is done before the last SKIP.
	 */
	if (geteuid())
		SKIP(longjmp(_metadata->env, 1), "loading BPF needs root");
	self->ctl = open("/dev/" NPUSIM_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (self->ctl < 0)
		SKIP(longjmp(_metadata->env, 1), "no npusim here (a VM test)");
	ASSERT_EQ(0, st_beside_self(hal, sizeof(hal), 2, "libascend_hal.so"));
	ASSERT_EQ(0, st_beside_self(self->prog, sizeof(self->prog), 1,
				    "hal_steps"));
	o.hal = hal;
	ASSERT_EQ(0, setenv("STEPTIME_PIN_DIR", PIN_DIR, 1));
	steptime__unload(PIN_DIR);
	err = steptime__load(&o);
	if (err == -EOPNOTSUPP)
		SKIP(longjmp(_metadata->env, 1), "%s: not on this kernel",
		     steptime__attach_mode_str(variant->mode));
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, set_chip(self->ctl, 0, &reuse_chip));
	snprintf(self->hal_dir, sizeof(self->hal_dir), "%s", hal);
	*strrchr(self->hal_dir, '/') = 0;
	snprintf(self->other, sizeof(self->other), "/tmp/hal_reuse_%d",
		 getpid());
	ASSERT_EQ(0, mkdir(self->other, 0755));
	snprintf(copy, sizeof(copy), "%s/libascend_hal.so", self->other);
	ASSERT_EQ(0, copy_file(hal, copy));
}

FIXTURE_TEARDOWN(reuse)
{
	char copy[PATH_MAX + 32];

	reuse_pin(false);
	steptime__unload(PIN_DIR);
	set_chip(self->ctl, 0, NULL);
	close(self->ctl);
	snprintf(copy, sizeof(copy), "%s/libascend_hal.so", self->other);
	unlink(copy);
	rmdir(self->other);
}

/*
 * One hal_steps process on device 0 with the library in @dir first in its
 * search path; each step it prints checked against steptime's record.
 * Return: the steps checked.
 */
static int reuse_round(struct __test_metadata *_metadata, const char *prog,
		       const char *dir, bool probed)
{
	char cmd[3 * PATH_MAX], line[512];
	struct steptime_counters c0, c1;
	struct steptime_step_stats rec;
	const char *path = getenv("LD_LIBRARY_PATH");
	long submitted = -1;
	int steps = 0, err;
	FILE *f;

	if (steptime__read_counters(PIN_DIR, &c0))
		return -1;

	snprintf(cmd, sizeof(cmd), "LD_LIBRARY_PATH=%s%s%s %s -n 1 -d 1 -m %d -t %d",
		 dir, path ? ":" : "", path ? path : "", prog, REUSE_STEPS,
		 REUSE_TASKS);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		long pid = st_field(line, "pid");
		long index = st_field(line, "index");

		TH_LOG("%s: %.*s", probed ? "probed" : "unprobed",
		       (int)strcspn(line, "\n"), line);
		if (!strncmp(line, "proc ", 5))
			submitted = st_field(line, "submitted");
		if (strncmp(line, "step ", 5))
			continue;
		err = st_step_wait_done(PIN_DIR, pid, index, 500, &rec);
		if (err)
			err = st_step_get(PIN_DIR, pid, index, false, &rec);
		EXPECT_EQ(0, err) TH_LOG("pid %ld step %ld", pid, index);
		if (err)
			continue;
		EXPECT_EQ(st_field(line, "tasks"), (long)rec.tasks)
			TH_LOG("pid %ld step %ld", pid, index);
		EXPECT_EQ(st_field(line, "tasks"), (long)rec.completions)
			TH_LOG("pid %ld step %ld", pid, index);
		EXPECT_EQ(0, rec.flags & STEPTIME_F_UIO);
		steps++;
	}
	EXPECT_EQ(0, pclose(f));
	/*
	 * Which library it ran on, by what saw its SQEs: the HAL's sends
	 * (the worker's copies skipped), or the trace hook alone.
	 */
	EXPECT_LT(0, submitted);
	if (steptime__read_counters(PIN_DIR, &c1))
		return -1;
	if (probed) {
		EXPECT_LT(0, c1.hal_sends - c0.hal_sends);
		EXPECT_EQ(0, c1.sqes_traced - c0.sqes_traced);
	} else {
		EXPECT_EQ(0, c1.hal_sends - c0.hal_sends);
		EXPECT_EQ(submitted, (long)(c1.sqes_traced - c0.sqes_traced));
	}
	return steps;
}

TEST_F(reuse, channels_probed_then_not)
{
	struct steptime_counters c;
	int r, steps = 0;

	ASSERT_LT(0, reuse_pin(true)) TH_LOG("no npusim engine thread pinned");
	for (r = 0; r < REUSE_ROUNDS; r++)
		steps += reuse_round(_metadata, self->prog,
				     r & 1 ? self->other : self->hal_dir,
				     !(r & 1));
	EXPECT_EQ(REUSE_ROUNDS * REUSE_STEPS, steps);
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &c));
	/* Both kinds ran: the HAL's sends, and SQEs only the hook saw. */
	EXPECT_LT(0, c.hal_sends);
	EXPECT_LT(0, c.sqes_traced);
	EXPECT_EQ(0, c.sqes_unowned);
}

TEST_HARNESS_MAIN
