// SPDX-License-Identifier: GPL-2.0
/*
 * steptime doctor sets steptime's count of each mapped SQ beside the
 * driver's own, the "uio send ok" of /proc/trs_core/ts_inst/dev<d>-ts<t>/
 * hw_sq (trs_proc_fs.c): the library's send_ok, every SQE it sent. On a
 * real host that is how the first user tells whether the counts hold.
 *
 * Here a process sends tasks of 1 to 5 SQEs through libascend_hal.so on a
 * mapped SQ of each chip's default mode (910B3 uio_t; 950 uio_d, which has
 * no tail word), steptime loaded with the HAL probed; the test's own count
 * of what it sent is the record both figures are checked against.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <npusim_abi.h>
#include <steptime/loader.h>
#include <steptime/steptime.h>
#include "../../sim/ascend_hal/ascend_hal.h"
#include "kselftest_harness.h"
#include "st_run.h"
#include "ksft_filter.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	600

#define PIN_DIR		"/sys/fs/bpf/steptime_hal_doctor"
#define CLI		"${STEPTIME_CLI:-${O:-build}/steptime}"
#define WAIT_MS		20000
#define DEPTH		64
#define TS		0
#define TASKS		24

FIXTURE(hd) {
	int ctl;
	__u32 dev, stream, sq, sent;
	char out[65536];
};

FIXTURE_VARIANT(hd) {
	__u32 dev;
	__u32 stars;
	const char *mode;
};

/* Every device is the variant's chip: one load parses one SQE layout. */
FIXTURE_VARIANT_ADD(hd, uio_t_910b3) { .dev = 0, .stars = 1, .mode = "uio_t" };
FIXTURE_VARIANT_ADD(hd, uio_d_950) { .dev = 1, .stars = 2, .mode = "uio_d" };

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

static int set_chip(int ctl, __u32 dev, __u32 stars)
{
	struct npusim_config c = {
		.mask = NPUSIM_CFG_STARS | NPUSIM_CFG_SQ_MODE |
			NPUSIM_CFG_SOFT_POLL | NPUSIM_CFG_SEND_MODE,
		.device = dev, .stars = stars, .sq_mode = NPUSIM_SQ_MODE_CHIP,
		.soft_poll_ms = 4, .soft_trigger = 1,
	};

	return ioctl(ctl, NPUSIM_IOC_SET_CONFIG, &c) ? -errno : 0;
}

FIXTURE_SETUP(hd)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o), .pin_dir = PIN_DIR, .map_gid = -1,
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
	char hal[4096];
	int d, err = 0;

	self->ctl = -1;
	if (geteuid())
		SKIP(return, "loading BPF needs root");
	self->ctl = open("/dev/" NPUSIM_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (self->ctl < 0)
		SKIP(return, "no npusim here (a VM test)");
	self->dev = variant->dev;
	for (d = 0; d < NPUSIM_MAX_DEVICES && !err; d++)
		err = set_chip(self->ctl, d, variant->stars);
	/* past the last device */
	ASSERT_LT(self->dev, d - 1) TH_LOG("set_chip: %s", strerror(-err));
	ASSERT_EQ(0, st_beside_self(hal, sizeof(hal), 2, "libascend_hal.so"));
	o.hal = hal;
	steptime__unload(PIN_DIR);
	err = steptime__load(&o);
	ASSERT_EQ(0, err) TH_LOG("steptime load --hal %s: %s", hal,
				 strerror(-err));
	/* allocated after the load: steptime counts it from its first SQE */
	ASSERT_EQ(DRV_ERROR_NONE, halDeviceOpen(self->dev, &oin, &oout));
	ASSERT_EQ(DRV_ERROR_NONE, halResourceIdAlloc(self->dev, &rin, &rout));
	self->stream = rout.resourceId;
	in.info[0] = self->stream;
	if (variant->stars == 2)
		in.cqeSize = 32;
	ASSERT_EQ(DRV_ERROR_NONE, halSqCqAllocate(self->dev, &in, &out));
	self->sq = out.sqId;
}

FIXTURE_TEARDOWN(hd)
{
	halDevCloseIn cin = { 0 };

	if (self->ctl < 0)
		return;
	halDeviceClose(self->dev, &cin);
	steptime__unload(PIN_DIR);
	close(self->ctl);
}

/* One task of @n SQEs of the chip's layout; halSqTaskSend's result. */
static drvError_t send_task(FIXTURE_DATA(hd) *self, __u32 stars, __u32 n)
{
	__u8 sqes[5 * TRS_SQE_SIZE];
	struct halTaskSendInfo s = {
		.type = DRV_NORMAL_TYPE, .tsId = TS, .sqId = self->sq,
		.sqe_addr = sqes, .sqe_num = n,
	};
	drvError_t ret;
	__u32 i;

	memset(sqes, 0, sizeof(sqes));
	for (i = 0; i < n; i++) {
		__u8 *p = sqes + i * TRS_SQE_SIZE;

		if (stars == 2) {
			struct trs_sqe_v2 *v2 = (void *)p;
			__u16 len = (i ? 0 : n - 1) << TRS_SQE_V2_LEN_SHIFT;

			v2->type = TRS_SQE_AICPU;
			v2->task_id = self->sent + i;
			memcpy(p + 14, &len, sizeof(len));
			v2->task.sim_duration_ns = 1000;
		} else {
			struct trs_sqe *v1 = (void *)p;

			v1->type = TRS_SQE_AICPU;
			v1->rt_stream_id = self->stream;
			v1->task_id = self->sent + i;
			v1->task.sim_duration_ns = 1000;
		}
	}
	ret = halSqTaskSend(self->dev, &s);
	if (ret == DRV_ERROR_NONE)
		self->sent += n;
	return ret;
}

/* Until the SQ's head, read as the runtime reads it, is @pos. */
static int wait_head(FIXTURE_DATA(hd) *self, __u32 pos)
{
	struct halSqCqQueryInfo q = {
		.type = DRV_NORMAL_TYPE, .tsId = TS, .sqId = self->sq,
		.prop = DRV_SQCQ_PROP_SQ_HEAD,
	};
	__u64 end = now_ms() + WAIT_MS;

	for (;;) {
		if (halSqCqQuery(self->dev, &q) != DRV_ERROR_NONE)
			return -1;
		if (q.value[0] == pos)
			return 0;
		if (now_ms() > end)
			return -1;
		usleep(1000);
	}
}

/* This SQ's entry of doctor's "driver_counts", or NULL. */
static const char *sq_entry(const char *json, __u32 dev, __u32 sq)
{
	char want[96];

	snprintf(want, sizeof(want), "{\"device\": %u, \"ts\": %u, \"sq\": %u, \"pid\": %d,",
		 dev, TS, sq, getpid());
	return strstr(json, want);
}

TEST_F(hd, send_ok_beside_steptime)
{
	char cmd[256], want[160];
	const char *e;
	__u32 i;

	for (i = 0; i < TASKS; i++) {
		ASSERT_EQ(DRV_ERROR_NONE,
			  send_task(self, variant->stars,
				    1 + i % (variant->stars == 2 ? 5 : 4)));
		/* the SQ holds 63: let the device catch up now and then */
		if (i % 8 == 7)
			ASSERT_EQ(0, wait_head(self, self->sent % DEPTH));
	}
	ASSERT_EQ(0, wait_head(self, self->sent % DEPTH));

	snprintf(cmd, sizeof(cmd), CLI " doctor --pin %s -p %d 2>&1",
		 PIN_DIR, getpid());
	ASSERT_EQ(0, st_run(cmd, self->out, sizeof(self->out)));
	TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "driver counts: SQEs per mapped SQ, steptime's and the driver's"));
	/* Its mapped SQ's sends: the HAL's probes saw them. */
	EXPECT_NE(NULL, strstr(self->out, "sends:      by the HAL's uprobes"));

	snprintf(cmd, sizeof(cmd), CLI " doctor --pin %s -p %d -o json",
		 PIN_DIR, getpid());
	ASSERT_EQ(0, st_run(cmd, self->out, sizeof(self->out)));
	EXPECT_NE(NULL, strstr(self->out, "\"sends\": \"hal_probes\""));
	e = sq_entry(self->out, self->dev, self->sq);
	ASSERT_NE(NULL, e) TH_LOG("SQ %u not in %s", self->sq, self->out);
	/* both the driver's count and steptime's are what was sent */
	snprintf(want, sizeof(want), "\"mode\": \"%s\", \"send_ok\": %u, \"steptime_sqes\": %u, \"verdict\": \"equal\"}",
		 variant->mode, self->sent, self->sent);
	EXPECT_NE(NULL, strstr(e, want)) TH_LOG("want %s in %.300s", want, e);
}

TEST_HARNESS_MAIN
