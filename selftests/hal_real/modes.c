// SPDX-License-Identifier: GPL-2.0
/*
 * npusim driven through libascend_hal.so's entry points as CANN's runtime
 * drives the driver's library (ascend-abi.md section 5), with npusim
 * picking the SQ mode by the chip (config sq_mode NPUSIM_SQ_MODE_CHIP):
 * a 910B3 (STARS v1) gets uio_t soft queues, a 950 (STARS v2) uio_d, a 950
 * in HIGH_SECURITY send mode kio. The library always asks for a mapped SQ.
 *
 * What is checked against npusim's own truth (TRUTH of any owner, STATS):
 * every task submitted is there in order, completes, and passed the SQE
 * trace hook exactly when the mode makes the kernel see it (uio_t, kio);
 * the library issued SEND ioctls only for kio and read the SQ head from
 * the mapping (no QUERY ioctl) for mapped SQs: this program's ioctl()
 * stands in front of libc's and counts them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <npusim_abi.h>
#include "../../sim/ascend_hal/ascend_hal.h"
/* steptime doctor's reader of the driver's /proc hw_sq files */
#include "../../tools/hw_sq.c"
#include "kselftest_harness.h"
#include "ksft_filter.h"

#define WAIT_MS		20000	/* a wait on state (TCG is slow) */
#define DEPTH		16
#define TS		0

static unsigned int n_send, n_query, n_config;

/* In front of libc's: counts the library's SEND, QUERY, CONFIG ioctls. */
int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == TRS_IOC_SQCQ_SEND)
		__atomic_add_fetch(&n_send, 1, __ATOMIC_RELAXED);
	if (req == TRS_IOC_SQCQ_QUERY)
		__atomic_add_fetch(&n_query, 1, __ATOMIC_RELAXED);
	if (req == TRS_IOC_SQCQ_CONFIG)
		__atomic_add_fetch(&n_config, 1, __ATOMIC_RELAXED);
	return syscall(SYS_ioctl, fd, req, arg);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void pause_ms(unsigned int ms)
{
	struct timespec t = { 0, ms * 1000000L };

	nanosleep(&t, NULL);
}

FIXTURE(hal) {
	int ctl;			/* npusim controls, not bound */
	uint32_t dev;
	uint32_t stream, sq, cq, lcq;
	uint32_t task;			/* next task id */
	uint32_t sent;			/* SQEs accepted */
	uint32_t full;			/* sends that found no room */
	uint32_t reports;		/* SQEs that asked for one */
	unsigned long long qva;		/* ALLOC's queueVAddr of our SQ */
	struct npusim_stats st0;
	struct npusim_config saved;	/* the device's, restored after */
};

FIXTURE_VARIANT(hal) {
	uint32_t dev;
	uint32_t stars;
	uint32_t send_mode;
	bool mapped;		/* uio_t or uio_d */
	bool traced;		/* SQEs pass npusim_chan_trace_sqe */
};

FIXTURE_VARIANT_ADD(hal, uio_t_910b3) {
	.dev = 0, .stars = 1, .mapped = true, .traced = true,
};

FIXTURE_VARIANT_ADD(hal, uio_d_950) {
	.dev = 1, .stars = 2, .mapped = true, .traced = false,
};

FIXTURE_VARIANT_ADD(hal, kio_950_high_security) {
	.dev = 1, .stars = 2, .send_mode = NPUSIM_SEND_HIGH_SECURITY,
	.mapped = false, .traced = true,
};

static int set_config(int ctl, uint32_t dev, uint32_t mask,
		      const struct npusim_config *v)
{
	struct npusim_config c = *v;

	c.mask = mask;
	c.device = dev;
	return ioctl(ctl, NPUSIM_IOC_SET_CONFIG, &c) ? -errno : 0;
}

/* The module's device count (its devices= parameter), 0: unreadable. */
static int module_devices(void)
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

static int stats(int ctl, struct npusim_stats *s)
{
	return ioctl(ctl, NPUSIM_IOC_STATS, s) ? -errno : 0;
}

FIXTURE_SETUP(hal)
{
	struct npusim_config c = {
		.stars = variant->stars, .sq_mode = NPUSIM_SQ_MODE_CHIP,
		.send_mode = variant->send_mode, .soft_poll_ms = 4,
		.soft_trigger = 1,
	};
	struct halResourceIdInputInfo rin = { .type = DRV_STREAM_ID };
	struct halResourceIdOutputInfo rout;
	struct halSqCqInputInfo in = {
		.type = DRV_NORMAL_TYPE, .sqeSize = 64, .cqeSize = 16,
		.sqeDepth = DEPTH, .cqeDepth = DEPTH,
	};
	struct halSqCqOutputInfo out;
	halDevOpenIn oin = { 0 };
	halDevOpenOut oout;

	self->dev = variant->dev;
	self->ctl = open("/dev/" NPUSIM_DEV_NAME, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->ctl);
	self->saved.device = self->dev;
	ASSERT_EQ(0, ioctl(self->ctl, NPUSIM_IOC_GET_CONFIG, &self->saved));
	ASSERT_EQ(0, set_config(self->ctl, self->dev, NPUSIM_CFG_STARS |
				NPUSIM_CFG_SQ_MODE | NPUSIM_CFG_SEND_MODE |
				NPUSIM_CFG_SOFT_POLL, &c));
	ASSERT_EQ(0, stats(self->ctl, &self->st0));
	ASSERT_EQ(DRV_ERROR_NONE, halDeviceOpen(self->dev, &oin, &oout));
	ASSERT_EQ(DRV_ERROR_NONE, halResourceIdAlloc(self->dev, &rin, &rout));
	self->stream = rout.resourceId;
	in.info[0] = self->stream;
	if (variant->stars == 2)
		in.cqeSize = 32;	/* as the runtime on a 950 */
	ASSERT_EQ(DRV_ERROR_NONE, halSqCqAllocate(self->dev, &in, &out));
	self->sq = out.sqId;
	self->cq = out.cqId;
	self->qva = out.queueVAddr;
	/* the stream's logic CQ, as the runtime makes it */
	memset(&in, 0, sizeof(in));
	in.type = DRV_LOGIC_TYPE;
	in.cqeSize = 32;
	in.cqeDepth = 1024;
	in.info[0] = self->stream;
	in.info[1] = gettid();
	ASSERT_EQ(DRV_ERROR_NONE, halSqCqAllocate(self->dev, &in, &out));
	self->lcq = out.cqId;
	n_send = n_query = n_config = 0;
}

FIXTURE_TEARDOWN(hal)
{
	halDevCloseIn cin = { 0 };

	halDeviceClose(self->dev, &cin);
	/* back to what the device had for whatever runs next */
	set_config(self->ctl, self->dev, NPUSIM_CFG_STARS | NPUSIM_CFG_SQ_MODE |
		   NPUSIM_CFG_SEND_MODE | NPUSIM_CFG_SOFT_POLL, &self->saved);
	close(self->ctl);
}

/*
 * One SQE of the chip's layout: task @task of our stream; on STARS v2,
 * @more SQEs of the task follow it (its sqeLength).
 */
static void sqe_fill(uint8_t *p, uint32_t stars, uint32_t stream,
		     uint32_t task, bool report, uint32_t dur_ns, uint32_t more)
{
	memset(p, 0, TRS_SQE_SIZE);
	if (stars == 2) {
		struct trs_sqe_v2 *s = (void *)p;
		uint16_t len = more << TRS_SQE_V2_LEN_SHIFT;

		s->type = TRS_SQE_AICPU;
		s->flags = report ? TRS_SQE_V2_F_WR_CQE : 0;
		s->task_id = task;
		memcpy(p + 14, &len, sizeof(len));
		s->task.sim_duration_ns = dur_ns;
	} else {
		struct trs_sqe *s = (void *)p;

		s->type = TRS_SQE_AICPU;
		s->flags = report ? TRS_SQE_F_WR_CQE : 0;
		s->rt_stream_id = stream;
		s->task_id = task;
		s->task.sim_duration_ns = dur_ns;
	}
}

/*
 * Submit one task of @n SQEs (1..4 on STARS v1, 1..5 on v2, as CANN's
 * tasks), asking for a report when @report: v1's last SQE, v2's first
 * (whose sqeLength makes the others part of it). Returns halSqTaskSend's
 * result.
 */
static drvError_t send_task(struct __test_metadata *_metadata,
			    FIXTURE_DATA(hal) *self, uint32_t stars,
			    uint32_t n, bool report, uint32_t dur_ns,
			    uint32_t *pos)
{
	uint8_t sqes[5 * TRS_SQE_SIZE];
	struct halTaskSendInfo s = {
		.type = DRV_NORMAL_TYPE, .tsId = TS, .sqId = self->sq,
		.sqe_addr = sqes, .sqe_num = n,
	};
	drvError_t ret;
	uint32_t i;

	for (i = 0; i < n; i++)
		sqe_fill(sqes + i * TRS_SQE_SIZE, stars, self->stream,
			 self->task + i,
			 report && i == (stars == 2 ? 0 : n - 1), dur_ns,
			 stars == 2 && !i ? n - 1 : 0);
	ret = halSqTaskSend(self->dev, &s);
	self->full += ret == DRV_ERROR_NO_RESOURCES;
	if (ret == DRV_ERROR_NONE) {
		self->task += n;
		self->sent += n;
		self->reports += report;
		if (pos)
			*pos = s.pos;
	}
	return ret;
}

static uint32_t query(FIXTURE_DATA(hal) *self, uint32_t prop, drvError_t *err)
{
	struct halSqCqQueryInfo q = {
		.type = DRV_NORMAL_TYPE, .tsId = TS, .sqId = self->sq,
		.prop = prop,
	};

	*err = halSqCqQuery(self->dev, &q);
	return q.value[0];
}

/* Wait until the SQ head (read as the runtime reads it) is @pos. */
static int wait_head(FIXTURE_DATA(hal) *self, uint32_t pos)
{
	uint64_t end = now_ms() + WAIT_MS;
	drvError_t err;

	for (;;) {
		if (query(self, DRV_SQCQ_PROP_SQ_HEAD, &err) == pos && !err)
			return 0;
		if (err || now_ms() > end)
			return -1;
		pause_ms(1);
	}
}

/* Truth of tasks 0 .. n - 1 of our SQ, whoever owns it (we are root). */
static int truth(FIXTURE_DATA(hal) *self, struct npusim_task_truth *t,
		 uint32_t n, uint64_t *next)
{
	struct npusim_truth_query q = {
		.sq_id = self->sq, .count = n, .addr = (uintptr_t)t,
		.ts_id = TS, .device = self->dev,
		.flags = NPUSIM_TRUTH_ANY_OWNER,
	};

	if (ioctl(self->ctl, NPUSIM_IOC_TRUTH, &q))
		return -errno;
	*next = q.next_seq;
	return q.count;
}

/* Wait until the truth says the last task submitted is done. */
static int wait_done(FIXTURE_DATA(hal) *self)
{
	uint64_t end = now_ms() + WAIT_MS;
	struct npusim_truth_query q = {
		.sq_id = self->sq, .count = 1, .seq = self->sent - 1,
		.ts_id = TS, .device = self->dev,
		.flags = NPUSIM_TRUTH_ANY_OWNER,
	};
	struct npusim_task_truth t;

	q.addr = (uintptr_t)&t;
	for (;;) {
		q.count = 1;
		if (ioctl(self->ctl, NPUSIM_IOC_TRUTH, &q))
			return -1;
		if (q.count == 1 && t.state == NPUSIM_TASK_DONE)
			return 0;
		if (now_ms() > end)
			return -1;
		pause_ms(1);
	}
}

/* Receive every report still due; returns how many came. */
static uint32_t recv_all(FIXTURE_DATA(hal) *self, uint32_t want)
{
	struct trs_logic_cqe cqe[64];
	uint32_t got = 0;

	while (got < want) {
		struct halReportRecvInfo r = {
			.type = DRV_LOGIC_TYPE, .tsId = TS, .cqId = self->lcq,
			.timeout = WAIT_MS, .cqe_addr = (uint8_t *)cqe,
			.cqe_num = 64, .stream_id = self->stream,
			.task_id = 0xffffffff,
		};

		if (halCqReportRecv(self->dev, &r) != DRV_ERROR_NONE)
			break;
		got += r.report_cqe_num;
	}
	return got;
}

/*
 * The driver's /proc/trs_core/ts_inst/dev<d>-ts<t>/hw_sq (trs_proc_fs.c:
 * res_detail_show, trs_hw_sq_to_string) names this SQ, its owner and mode
 * and, mapped, prints the library's send_ok and send_full: every SQE
 * npusim took (its truth's @next), every send that found no room.
 */
static void check_proc_hw_sq(struct __test_metadata *_metadata,
			     FIXTURE_DATA(hal) *self,
			     const FIXTURE_VARIANT(hal) *variant, uint64_t next)
{
	static struct hw_sq drv[256];
	const struct hw_sq *mine = NULL;
	int i, n;

	n = hw_sq_read(HW_SQ_ROOT, drv, 256);
	ASSERT_LT(0, n) TH_LOG("%s: %s", HW_SQ_ROOT, strerror(-n));
	for (i = 0; i < n && i < 256; i++)
		if (drv[i].dev == self->dev && drv[i].ts == TS &&
		    drv[i].id == self->sq && drv[i].pid == getpid())
			mine = &drv[i];
	ASSERT_NE(NULL, mine) TH_LOG("SQ %u of device %u not in %s",
				     self->sq, self->dev, HW_SQ_ROOT);
	EXPECT_STREQ(!variant->mapped ? "kio" : variant->stars == 1 ?
		     "uio_t" : "uio_d", mine->mode);
	EXPECT_EQ(variant->mapped, mine->counted);
	if (variant->mapped) {
		EXPECT_EQ(next, mine->send_ok);
		EXPECT_EQ(self->full, mine->send_full);
	}
}

/*
 * The driver's count of a mapped SQ's sends, in the page ALLOC mapped at
 * sq_ctrl_addr[TRS_UIO_SHR_INFO] (trs_ioctl.h:45-50), kept by the library
 * (trs_sqcq.c:1541-1545,1642): send_ok, every SQE npusim took (its truth's
 * @next), and send_full, every send that found no room. kio maps none.
 */
static void check_shr(struct __test_metadata *_metadata,
		      FIXTURE_DATA(hal) *self,
		      const FIXTURE_VARIANT(hal) *variant, uint64_t next)
{
	const struct trs_sq_shr_info *shr;
	struct trs_uio_info u;

	ASSERT_EQ(DRV_ERROR_NONE, npusim_hal_sq_uio(self->dev, TS, self->sq,
						    &u));
	shr = (const void *)(uintptr_t)u.sq_ctrl_addr[TRS_UIO_SHR_INFO];
	check_proc_hw_sq(_metadata, self, variant, next);
	if (!variant->mapped) {
		EXPECT_EQ(NULL, shr);
		return;
	}
	ASSERT_NE(NULL, shr);
	EXPECT_EQ(next, shr->send_ok);
	EXPECT_EQ(self->full, shr->send_full);
}

/* Every task is in the truth, in order, done, traced as the mode says. */
static void check_truth(struct __test_metadata *_metadata,
			FIXTURE_DATA(hal) *self,
			const FIXTURE_VARIANT(hal) *variant, uint32_t first_pos)
{
	static struct npusim_task_truth t[512];
	struct npusim_stats st;
	uint64_t next;
	uint32_t i;

	ASSERT_GE(512, self->sent);
	ASSERT_EQ((int)self->sent, truth(self, t, self->sent, &next));
	ASSERT_EQ(self->sent, next);
	check_shr(_metadata, self, variant, next);
	for (i = 0; i < self->sent; i++) {
		EXPECT_EQ(i, t[i].seq);
		EXPECT_EQ(i, t[i].task_id);
		EXPECT_EQ((first_pos + i) % DEPTH, t[i].pos);
		EXPECT_EQ(self->stream, t[i].stream_id);
		EXPECT_EQ(NPUSIM_TASK_DONE, t[i].state);
		EXPECT_EQ(variant->traced, t[i].traced);
		EXPECT_EQ(0, t[i].error_code);
	}
	ASSERT_EQ(0, stats(self->ctl, &st));
	EXPECT_EQ(self->sent, st.submitted - self->st0.submitted);
	EXPECT_EQ(self->sent, st.completed - self->st0.completed);
	EXPECT_EQ(variant->traced ? self->sent : 0,
		  st.traced_sqes - self->st0.traced_sqes);
	EXPECT_EQ(0, st.tasks_queued);
}

/* What the library issued: SEND only for kio, no QUERY for a mapped SQ. */
static void check_ioctls(struct __test_metadata *_metadata,
			 const FIXTURE_VARIANT(hal) *variant, uint32_t sends)
{
	EXPECT_EQ(variant->mapped ? 0 : sends, n_send);
	if (variant->mapped) {
		EXPECT_EQ(0, n_query);
	} else {
		EXPECT_LT(0, n_query);
	}
}

/*
 * Tasks of 1-4 SQEs (a 950's, 1-5), some reporting, all complete as the
 * truth says.
 */
TEST_F(hal, tasks_complete)
{
	uint32_t i, pos, first = 0, sends = 0;
	uint32_t most = variant->stars == 2 ? 5 : 4;

	for (i = 0; i < 40; i++) {
		ASSERT_EQ(DRV_ERROR_NONE,
			  send_task(_metadata, self, variant->stars,
				    1 + i % most, i % 5 == 4, 1000, &pos));
		if (!i)
			first = pos;
		sends++;
		/* the SQ holds 15: let the device catch up now and then */
		if (i % 4 == 3)
			ASSERT_EQ(0, wait_head(self, (first + self->sent) %
						     DEPTH));
	}
	ASSERT_EQ(0, wait_head(self, (first + self->sent) % DEPTH));
	EXPECT_EQ(self->reports, recv_all(self, self->reports));
	check_truth(_metadata, self, variant, first);
	check_ioctls(_metadata, variant, sends);
}

/*
 * ALLOC's queueVAddr is an SHM SQ's alone (trs_sqcq.c:1030-1032): 0 for
 * a NORMAL SQ, mapped by npusim or not.
 */
TEST_F(hal, queue_vaddr_shm_only)
{
	struct trs_uio_info u;

	ASSERT_EQ(DRV_ERROR_NONE, npusim_hal_sq_uio(self->dev, TS, self->sq,
						    &u));
	EXPECT_EQ(variant->mapped, u.uio_flag);
	if (variant->mapped)
		EXPECT_NE(0, u.sq_que_addr);
	EXPECT_EQ(0, self->qva);
}

/*
 * halCqReportIrqWait() of the stream's logic CQ (grpId), as the runtime's
 * report wait calls it, receives in order, not in match mode
 * (trs_sqcq.c:1962): a STARS v1 match report (its stream's bit 15),
 * which match mode holds for the RECV naming it, comes first, as the
 * truth has it. halCqReportGet() hands the buffer out, halReportRelease()
 * of all of them empties it.
 */
TEST_F(hal, irq_wait_in_order)
{
	struct halReportInfoInput in = {
		.type = DRV_LOGIC_TYPE, .grpId = self->lcq, .tsId = TS,
		.timeout = WAIT_MS,
	};
	struct halReportGetInput gin = {
		.type = DRV_LOGIC_TYPE, .tsId = TS, .cqId = self->lcq,
	};
	struct halReportReleaseInfo rel = {
		.type = DRV_LOGIC_TYPE, .tsId = TS, .cqId = self->lcq,
	};
	static struct npusim_task_truth t[4];
	struct halReportInfoOutput out = { 0 };
	struct halReportGetOutput gout;
	const struct trs_logic_cqe *cqe;
	uint32_t i, got = 0, pos;
	uint64_t next;

	self->stream |= variant->stars == 1 ? TRS_SQE_STREAM_MATCH : 0;
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(DRV_ERROR_NONE, send_task(_metadata, self,
						    variant->stars, 1, true,
						    0, &pos));
		self->stream &= ~TRS_SQE_STREAM_MATCH;
	}
	ASSERT_EQ(0, wait_done(self));
	ASSERT_EQ(3, truth(self, t, 4, &next));
	while (got < 3) {
		ASSERT_EQ(DRV_ERROR_NONE,
			  halCqReportIrqWait(self->dev, &in, &out));
		ASSERT_EQ(DRV_ERROR_NONE,
			  halCqReportGet(self->dev, &gin, &gout));
		ASSERT_LT(0, gout.count);
		ASSERT_GE(3 - got, gout.count);
		cqe = gout.reportPtr;
		for (i = 0; i < gout.count; i++, got++)
			EXPECT_EQ(t[got].task_id, cqe[i].task_id)
				TH_LOG("report %u", got);
		rel.count = gout.count + 1;	/* not all of them: refused */
		EXPECT_EQ(DRV_ERROR_INVALID_VALUE,
			  halReportRelease(self->dev, &rel));
		rel.count = gout.count;
		ASSERT_EQ(DRV_ERROR_NONE, halReportRelease(self->dev, &rel));
	}
	/* released: nothing to release again */
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE, halReportRelease(self->dev, &rel));
	in.grpId = self->lcq + 1;	/* no such logic CQ */
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE,
		  halCqReportIrqWait(self->dev, &in, &out));
}

/*
 * uio_t with the trigger doorbell ignored: the worker's own poll (every
 * soft_poll_ms) still copies every task, late, and they complete.
 */
TEST_F(hal, soft_queue_poll_only)
{
	struct npusim_config c = { .soft_poll_ms = 4, .soft_trigger = 0 };
	uint32_t i, pos, first = 0;

	if (variant->stars != 1)
		SKIP(return, "soft queues are STARS v1's (910B)");
	ASSERT_EQ(0, set_config(self->ctl, self->dev, NPUSIM_CFG_SOFT_POLL,
				&c));
	for (i = 0; i < 12; i++) {
		ASSERT_EQ(DRV_ERROR_NONE,
			  send_task(_metadata, self, 1, 1, i == 11, 0, &pos));
		if (!i)
			first = pos;
	}
	ASSERT_EQ(0, wait_head(self, (first + self->sent) % DEPTH));
	EXPECT_EQ(1, recv_all(self, 1));
	check_truth(_metadata, self, variant, first);
	check_ioctls(_metadata, variant, 12);
}

/*
 * Where the tail lives, as ALLOC said: a 950's uio_d SQ has no tail word
 * (trs_sqcq_map.c:355-362), and the library writes the tail into the
 * doorbell, where it reads back the position after the last task npusim
 * took; a 910B3's soft queue keeps its tail word; kio maps nothing.
 */
TEST_F(hal, tail_word)
{
	static struct npusim_task_truth t[16];
	const volatile uint32_t *word;
	struct trs_uio_info u;
	uint32_t i, pos, first = 0, end;
	uint64_t next;
	drvError_t err;

	ASSERT_EQ(DRV_ERROR_NONE, npusim_hal_sq_uio(self->dev, TS, self->sq,
						    &u));
	EXPECT_EQ(variant->mapped, u.uio_flag);
	if (!variant->mapped) {
		EXPECT_EQ(0, u.sq_ctrl_addr[TRS_UIO_TAIL]);
		EXPECT_EQ(0, u.sq_ctrl_addr[TRS_UIO_SHR_INFO]);
		return;
	}
	ASSERT_NE(0, u.sq_ctrl_addr[TRS_UIO_DB]);
	if (variant->stars == 2) {
		EXPECT_EQ(0, u.sq_ctrl_addr[TRS_UIO_TAIL]);
		word = (void *)(uintptr_t)u.sq_ctrl_addr[TRS_UIO_DB];
	} else {
		ASSERT_NE(0, u.sq_ctrl_addr[TRS_UIO_TAIL]);
		word = (void *)(uintptr_t)u.sq_ctrl_addr[TRS_UIO_TAIL];
	}
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(DRV_ERROR_NONE,
			  send_task(_metadata, self, variant->stars, 1 + i % 2,
				    false, 0, &pos));
		if (!i)
			first = pos;
	}
	ASSERT_EQ(0, wait_head(self, (first + self->sent) % DEPTH));
	ASSERT_EQ((int)self->sent, truth(self, t, 16, &next));
	end = (t[self->sent - 1].pos + 1) % DEPTH;
	EXPECT_EQ(end, *word);
	EXPECT_EQ(end, query(self, DRV_SQCQ_PROP_SQ_TAIL, &err));
	EXPECT_EQ(DRV_ERROR_NONE, err);
	check_ioctls(_metadata, variant, 5);
}

/* halSqCqConfig(@prop, @v) of our SQ. */
static drvError_t config(FIXTURE_DATA(hal) *self, uint32_t prop, uint32_t v)
{
	struct halSqCqConfigInfo c = {
		.type = DRV_NORMAL_TYPE, .tsId = TS, .sqId = self->sq,
		.cqId = self->cq, .prop = prop, .value = { v },
	};

	return halSqCqConfig(self->dev, &c);
}

/*
 * The stream cleanup's halSqCqConfig() SQ_TAIL and SQ_HEAD to 0, on a
 * disabled SQ (stream.cc:5305-5324; here paused): the next task goes to
 * position 0, the truth's sequence goes on. uio_d: the library writes the
 * head and the doorbell and asks the kernel nothing; uio_t: it moves its
 * own tail, the mapped tail word stays stale until the next send, and the
 * CONFIG ioctl moves the rest; kio: the ioctl. Where the kernel is asked,
 * a busy SQ refuses it and loses nothing.
 */
TEST_F(hal, config_head_tail_reset)
{
	static struct npusim_task_truth t[16];
	const volatile uint32_t *head_w = NULL, *tail_w = NULL;
	uint32_t i, pos, first = 0, before, n;
	bool uio_d = variant->mapped && variant->stars == 2;
	struct trs_uio_info u;
	uint64_t next;
	drvError_t err;

	ASSERT_EQ(DRV_ERROR_NONE, npusim_hal_sq_uio(self->dev, TS, self->sq,
						    &u));
	if (variant->mapped) {
		head_w = (void *)(uintptr_t)u.sq_ctrl_addr[TRS_UIO_HEAD];
		tail_w = (void *)(uintptr_t)u.sq_ctrl_addr[uio_d ? TRS_UIO_DB :
							  TRS_UIO_TAIL];
	}
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(DRV_ERROR_NONE,
			  send_task(_metadata, self, variant->stars, 1, false,
				    0, &pos));
		if (!i)
			first = pos;
	}
	ASSERT_EQ(0, wait_head(self, (first + 5) % DEPTH));

	if (!uio_d) {
		/* busy: a long task queued */
		ASSERT_EQ(DRV_ERROR_NONE,
			  send_task(_metadata, self, variant->stars, 1, false,
				    200000000, &pos));
		EXPECT_NE(DRV_ERROR_NONE,
			  config(self, DRV_SQCQ_PROP_SQ_HEAD, 0));
		ASSERT_EQ(0, wait_head(self, (first + 6) % DEPTH));
	}
	before = (first + self->sent) % DEPTH;
	if (tail_w)
		EXPECT_EQ(before, *tail_w);

	n_config = 0;
	ASSERT_EQ(DRV_ERROR_NONE, config(self, DRV_SQCQ_PROP_SQ_PAUSE, 0));
	ASSERT_EQ(DRV_ERROR_NONE, config(self, DRV_SQCQ_PROP_SQ_TAIL, 0));
	ASSERT_EQ(DRV_ERROR_NONE, config(self, DRV_SQCQ_PROP_SQ_HEAD, 0));
	/* PAUSE always asks the kernel; SQ_TAIL and SQ_HEAD not on uio_d */
	EXPECT_EQ(uio_d ? 1 : 3, n_config);
	if (uio_d) {
		EXPECT_EQ(0, *head_w);
		EXPECT_EQ(0, *tail_w);
	} else if (tail_w) {
		EXPECT_EQ(before, *tail_w);
	}
	ASSERT_EQ(DRV_ERROR_NONE, config(self, DRV_SQCQ_PROP_SQ_RESUME, 0));
	EXPECT_EQ(0, query(self, DRV_SQCQ_PROP_SQ_HEAD, &err));
	EXPECT_EQ(DRV_ERROR_NONE, err);
	EXPECT_EQ(0, query(self, DRV_SQCQ_PROP_SQ_TAIL, &err));
	EXPECT_EQ(DRV_ERROR_NONE, err);

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(DRV_ERROR_NONE,
			  send_task(_metadata, self, variant->stars, 1, i == 2,
				    0, &pos));
		EXPECT_EQ(i, pos);
		if (tail_w)
			EXPECT_EQ(i + 1, *tail_w);
	}
	ASSERT_EQ(0, wait_head(self, 3));
	EXPECT_EQ(1, recv_all(self, 1));

	/* a value beyond the SQ: refused, nothing moves */
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE,
		  config(self, DRV_SQCQ_PROP_SQ_HEAD, DEPTH));
	EXPECT_EQ(3, query(self, DRV_SQCQ_PROP_SQ_HEAD, &err));
	/* nothing more than was sent: no stale slot taken for a task */
	n = self->sent;
	ASSERT_EQ((int)n, truth(self, t, 16, &next));
	EXPECT_EQ(n, next);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(i, t[i].seq);
		EXPECT_EQ(NPUSIM_TASK_DONE, t[i].state);
		EXPECT_EQ(i < n - 3 ? (first + i) % DEPTH : i - (n - 3),
			  t[i].pos);
	}
	check_shr(_metadata, self, variant, next);
}

/* Bad inputs: drvError_t errors, and nothing submitted is lost. */
TEST_F(hal, bad_inputs)
{
	struct halTaskSendInfo s = {
		.type = DRV_NORMAL_TYPE, .tsId = TS, .sqId = self->sq,
	};
	struct halResourceIdInputInfo rin = { .type = DRV_INVALID_ID };
	struct halResourceIdOutputInfo rout;
	struct halSqCqQueryInfo q = { .prop = DRV_SQCQ_PROP_SQ_HEAD };
	uint8_t sqes[DEPTH * TRS_SQE_SIZE] = { 0 };
	halDevOpenIn oin = { 0 };
	halDevOpenOut oout;
	halDevCloseIn cin = { 0 };
	struct npusim_stats st0, st1;
	uint32_t pos, first = 0, n = 0;
	int absent = module_devices();	/* the first id past them */
	drvError_t ret;

	/* drv_comm_intf.c:86-160's codes, for a device npusim does not have */
	ASSERT_LT(0, absent);
	ASSERT_GT(NPUSIM_MAX_DEVICES, absent);
	EXPECT_EQ(DRV_ERROR_REPEATED_INIT,
		  halDeviceOpen(self->dev, &oin, &oout));
	EXPECT_EQ(DRV_ERROR_REPEATED_INIT,
		  halDeviceOpen(self->dev, NULL, &oout));
	EXPECT_EQ(DRV_ERROR_PARA_ERROR, halDeviceOpen(absent, &oin, NULL));
	EXPECT_EQ(DRV_ERROR_PARA_ERROR, halDeviceOpen(1124, &oin, &oout));
	EXPECT_EQ(DRV_ERROR_INVALID_DEVICE, halDeviceOpen(99, &oin, &oout));
	EXPECT_EQ(DRV_ERROR_INVALID_DEVICE, halDeviceOpen(absent, NULL, &oout));
	EXPECT_EQ(DRV_ERROR_UNINIT, halDeviceClose(absent, &cin));
	EXPECT_EQ(DRV_ERROR_UNINIT, halDeviceClose(absent, NULL));
	EXPECT_EQ(DRV_ERROR_PARA_ERROR, halDeviceClose(1124, NULL));
	ASSERT_EQ(0, stats(self->ctl, &st0));
	cin.close_type = DEV_CLOSE_ONLY_HOST;
	EXPECT_EQ(DRV_ERROR_NOT_SUPPORT, halDeviceClose(self->dev, &cin));
	cin.close_type = DEV_CLOSE_HOST_DEVICE;
	/* still open: npusim still has its fd, and its SQ takes tasks */
	ASSERT_EQ(0, stats(self->ctl, &st1));
	EXPECT_EQ(st0.fds, st1.fds);
	EXPECT_EQ(st0.sqs, st1.sqs);
	EXPECT_EQ(DRV_ERROR_OPEN_FAILED, halSqTaskSend(7, &s));
	EXPECT_EQ(DRV_ERROR_OPEN_FAILED, halSqCqQuery(7, &q));
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE, halSqTaskSend(self->dev, NULL));
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE, halSqCqQuery(self->dev, NULL));
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE, halSqCqConfig(self->dev, NULL));
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE, halCqReportRecv(self->dev, NULL));
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE,
		  halSqCqAllocate(self->dev, NULL, NULL));
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE, halSqCqFree(self->dev, NULL));
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE,
		  halResourceIdAlloc(self->dev, &rin, &rout));
	/* an SQ this process does not have, no SQEs, too many, no buffer */
	s.sqId = self->sq + 1;
	s.sqe_addr = sqes;
	s.sqe_num = 1;
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE, halSqTaskSend(self->dev, &s));
	s.sqId = self->sq;
	s.sqe_num = 0;
	EXPECT_NE(DRV_ERROR_NONE, halSqTaskSend(self->dev, &s));
	s.sqe_num = DEPTH + 1;
	EXPECT_NE(DRV_ERROR_NONE, halSqTaskSend(self->dev, &s));
	s.sqe_num = 1;
	s.sqe_addr = NULL;
	EXPECT_NE(DRV_ERROR_NONE, halSqTaskSend(self->dev, &s));
	EXPECT_EQ(0, self->sent);

	/* fill the SQ behind a long task until a send finds no room */
	for (;;) {
		ret = send_task(_metadata, self, variant->stars, 1, false,
				n ? 0 : 100000000, &pos);
		if (ret != DRV_ERROR_NONE)
			break;
		if (!n++)
			first = pos;
		ASSERT_GT(3 * DEPTH, n);
	}
	/* mapped: no room at once; kio: SEND's EAGAIN */
	EXPECT_EQ(variant->mapped ? DRV_ERROR_NO_RESOURCES :
				    DRV_ERROR_IOCRL_FAIL, ret);
	EXPECT_EQ(variant->mapped, self->full);
	EXPECT_LE(DEPTH - 1, n);
	/* a kio SQ holds depth tasks: its head alone cannot tell */
	ASSERT_EQ(0, wait_done(self));
	ASSERT_EQ(0, wait_head(self, (first + self->sent) % DEPTH));
	check_truth(_metadata, self, variant, first);
}

TEST_HARNESS_MAIN
