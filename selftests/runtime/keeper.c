// SPDX-License-Identifier: GPL-2.0
/*
 * npusim's runtime built as CANN's (sim/runtime/rt_sim.h) on a 910B3 and a
 * 950 (npusim's chip-picked modes: uio_t, uio_d HIGH_PERFORMANCE):
 *   - libruntime.so loads the chip's task library, libruntime_v100.so or
 *     libruntime_v200.so;
 *   - a small job through the ACL runtime stand-in, and tasks of every
 *     size sent through libruntime.so itself, reach the driver's library
 *     as one halSqTaskSend() per task of at most 4 (v100) or 5 (v200)
 *     SQEs, each call made from the chip's task library, and every SQE
 *     they carried is in npusim's truth of the SQ, in order, and done once
 *     the runtime's synchronize returned;
 *   - a caller that finds halSqTaskSend with dlsym() (libhal_dlsym.so)
 *     reaches the library without passing this program's halSqTaskSend.
 *
 * This program defines halSqTaskSend itself, ahead of libascend_hal.so in
 * the global scope, as an LD_PRELOAD interposer would: a task library that
 * bound it any other way (DEEPBIND, a strong local binding, a direct call)
 * goes past it and fails the checks.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <npusim_abi.h>
#include "acl/acl.h"
#include "acl/acl_npusim.h"
#include "../../sim/ascend_hal/ascend_hal.h"
#include "../../sim/runtime/rt_sim.h"
#include "kselftest_harness.h"

#define WAIT_MS		60000	/* a synchronize (TCG is slow) */
#define DEPTH		64
#define TS		0
#define MAX_TRUTH	2048
/*
 * Task times: long enough that a synchronize returning early finds tasks
 * not done (a few ms in all).
 */
#define KERNEL_NS	100000
#define TASK_NS		500000

/* What this program's halSqTaskSend saw: successful sends only. */
static struct {
	const char *lib;		/* where the calls must come from */
	unsigned int tasks;		/* accepted sends */
	unsigned long sqes;		/* SQEs they carried */
	unsigned int max_n;		/* the largest task */
	unsigned int foreign;		/* calls from anywhere else */
} seen;

drvError_t halSqTaskSend(uint32_t devId, struct halTaskSendInfo *info);

drvError_t halSqTaskSend(uint32_t devId, struct halTaskSendInfo *info)
{
	static drvError_t (*next)(uint32_t, struct halTaskSendInfo *);
	void *from = __builtin_return_address(0);
	drvError_t ret;
	Dl_info di;

	if (!next)
		next = (drvError_t (*)(uint32_t, struct halTaskSendInfo *))
			dlsym(RTLD_NEXT, "halSqTaskSend");
	if (!next)
		return DRV_ERROR_NOT_SUPPORT;
	if (!dladdr(from, &di) || !di.dli_fname || !seen.lib ||
	    !strstr(di.dli_fname, seen.lib))
		seen.foreign++;
	ret = next(devId, info);
	if (ret == DRV_ERROR_NONE) {
		seen.tasks++;
		seen.sqes += info->sqe_num;
		if (info->sqe_num > seen.max_n)
			seen.max_n = info->sqe_num;
	}
	return ret;
}

FIXTURE(keeper) {
	int ctl;			/* npusim's controls */
	struct npusim_config saved;
};

FIXTURE_VARIANT(keeper) {
	uint32_t dev;
	uint32_t stars;
	const char *lib;
	uint32_t max_sqes;
};

FIXTURE_VARIANT_ADD(keeper, v100_910b3) {
	.dev = 0, .stars = 1, .lib = "libruntime_v100.so", .max_sqes = 4,
};

FIXTURE_VARIANT_ADD(keeper, v200_950) {
	.dev = 1, .stars = 2, .lib = "libruntime_v200.so", .max_sqes = 5,
};

#define CFG_MASK	(NPUSIM_CFG_STARS | NPUSIM_CFG_SQ_MODE | \
			 NPUSIM_CFG_SEND_MODE)

static int set_config(int ctl, uint32_t dev, const struct npusim_config *v)
{
	struct npusim_config c = *v;

	c.mask = CFG_MASK;
	c.device = dev;
	return ioctl(ctl, NPUSIM_IOC_SET_CONFIG, &c) ? -errno : 0;
}

FIXTURE_SETUP(keeper)
{
	struct npusim_config c = {
		.stars = variant->stars, .sq_mode = NPUSIM_SQ_MODE_CHIP,
		.send_mode = NPUSIM_SEND_HIGH_PERFORMANCE,
	};

	self->ctl = open("/dev/" NPUSIM_DEV_NAME, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->ctl);
	self->saved.device = variant->dev;
	ASSERT_EQ(0, ioctl(self->ctl, NPUSIM_IOC_GET_CONFIG, &self->saved));
	ASSERT_EQ(0, set_config(self->ctl, variant->dev, &c));
	memset(&seen, 0, sizeof(seen));
	seen.lib = variant->lib;
}

FIXTURE_TEARDOWN(keeper)
{
	set_config(self->ctl, variant->dev, &self->saved);
	close(self->ctl);
}

/* Truth of the SQ's first @n tasks; the count, or a negative errno. */
static int truth(int ctl, uint32_t dev, uint32_t sq,
		 struct npusim_task_truth *t, uint32_t n, uint64_t *next)
{
	struct npusim_truth_query q = {
		.sq_id = sq, .count = n, .addr = (uintptr_t)t, .ts_id = TS,
		.device = dev, .flags = NPUSIM_TRUTH_ANY_OWNER,
	};

	if (ioctl(ctl, NPUSIM_IOC_TRUTH, &q))
		return -errno;
	*next = q.next_seq;
	return (int)q.count;
}

/*
 * The SQ's truth holds exactly @sqes tasks, in order, every one done; with
 * @depth, at positions from @first_pos on.
 */
static void check_truth(struct __test_metadata *_metadata, int ctl,
			uint32_t dev, uint32_t sq, unsigned long sqes,
			uint32_t first_pos, uint32_t depth)
{
	static struct npusim_task_truth t[MAX_TRUTH];
	unsigned int i, undone = 0, misplaced = 0;
	uint64_t next = 0;

	ASSERT_GE(MAX_TRUTH, sqes);
	ASSERT_EQ((int)sqes, truth(ctl, dev, sq, t, MAX_TRUTH, &next));
	EXPECT_EQ(sqes, next);
	for (i = 0; i < sqes; i++) {
		undone += t[i].state != NPUSIM_TASK_DONE;
		misplaced += t[i].seq != i ||
			     (depth && t[i].pos != (first_pos + i) % depth);
	}
	EXPECT_EQ(0, undone);
	EXPECT_EQ(0, misplaced);
}

/* The ACL runtime's job: kernels of 1..9 SQEs, a synchronize, all done. */
TEST_F(keeper, acl_job)
{
	static const uint32_t counts[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 3, 1 };
	aclrtStream stream;
	uint32_t dev, ts, sq, i, r;
	aclError ret = aclInit(NULL);

	ASSERT_TRUE(ret == ACL_SUCCESS || ret == ACL_ERROR_REPEAT_INITIALIZE);
	ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(variant->dev));
	ASSERT_NE(NULL, rtSimLibrary(variant->dev));
	EXPECT_STREQ(variant->lib, rtSimLibrary(variant->dev));
	ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
	ASSERT_EQ(ACL_SUCCESS, aclnpusimStreamGetSq(stream, &dev, &ts, &sq));
	ASSERT_EQ(variant->dev, dev);
	for (r = 0; r < 3; r++)
		for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
			ASSERT_EQ(ACL_SUCCESS, aclnpusimLaunchKernel(stream,
					ACL_NPUSIM_KERNEL_AICORE, counts[i],
					KERNEL_NS));
	ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream));
	/*
	 * every send came from the chip's library, a task each, as CANN's
	 * runtime sends (each kernel is a task of one SQE here; tasks of
	 * 1..max_sqes SQEs: tasks_of_each_size)
	 */
	EXPECT_EQ(0, seen.foreign);
	EXPECT_EQ(1, seen.max_n);
	ASSERT_LT(0, seen.tasks);
	/* the stream's SQ got exactly what those sends carried, all done */
	check_truth(_metadata, self->ctl, variant->dev, sq, seen.sqes, 0, 0);
	EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
	EXPECT_EQ(ACL_SUCCESS, aclrtResetDeviceForce(variant->dev));
	EXPECT_EQ(ACL_SUCCESS, aclFinalize());
}

/* An SQ of the caller's, as the runtime allocates it. */
static void sq_alloc(struct __test_metadata *_metadata, uint32_t dev,
		     uint32_t stars, uint32_t *stream, uint32_t *sq)
{
	struct halResourceIdInputInfo rin = { .type = DRV_STREAM_ID };
	struct halResourceIdOutputInfo rout;
	struct halSqCqInputInfo in = {
		.type = DRV_NORMAL_TYPE, .sqeSize = 64,
		.cqeSize = stars == 2 ? 32 : 16,
		.sqeDepth = DEPTH, .cqeDepth = DEPTH,
	};
	struct halSqCqOutputInfo out;
	halDevOpenIn oin = { 0 };
	halDevOpenOut oout;

	ASSERT_EQ(DRV_ERROR_NONE, halDeviceOpen(dev, &oin, &oout));
	ASSERT_EQ(DRV_ERROR_NONE, halResourceIdAlloc(dev, &rin, &rout));
	*stream = rout.resourceId;
	in.info[0] = *stream;
	ASSERT_EQ(DRV_ERROR_NONE, halSqCqAllocate(dev, &in, &out));
	*sq = out.sqId;
}

/* @n SQEs of the chip's layout, without reports, from task id @task. */
static void sqes_fill(uint8_t *p, uint32_t stars, uint32_t stream,
		      uint32_t task, uint32_t n)
{
	uint32_t i;

	memset(p, 0, (size_t)n * TRS_SQE_SIZE);
	for (i = 0; i < n; i++, p += TRS_SQE_SIZE) {
		if (stars == 2) {
			struct trs_sqe_v2 *s = (void *)p;

			s->type = TRS_SQE_AICPU;
			s->task_id = task + i;
			s->task.sim_duration_ns = TASK_NS;
		} else {
			struct trs_sqe *s = (void *)p;

			s->type = TRS_SQE_AICPU;
			s->rt_stream_id = stream;
			s->task_id = task + i;
			s->task.sim_duration_ns = TASK_NS;
		}
	}
}

/*
 * Tasks of every size the chip takes, sent through libruntime.so: one
 * halSqTaskSend each, from the task library; one more SQE is refused
 * before the driver's library sees it; the synchronize returns with all
 * of them done.
 */
TEST_F(keeper, tasks_of_each_size)
{
	uint8_t sqes[8 * TRS_SQE_SIZE];
	uint32_t stream, sq, max = 0, pos, first = 0, n, r, sent = 0;
	unsigned int tasks = 0;
	halDevCloseIn cin = { 0 };

	sq_alloc(_metadata, variant->dev, variant->stars, &stream, &sq);
	ASSERT_EQ(DRV_ERROR_NONE, rtSimDeviceInit(variant->dev, &max));
	EXPECT_EQ(variant->max_sqes, max);
	EXPECT_STREQ(variant->lib, rtSimLibrary(variant->dev));
	sqes_fill(sqes, variant->stars, stream, 0, max + 1);
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE,
		  rtSimTaskSend(variant->dev, TS, sq, sqes, max + 1, 0, &pos));
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE,
		  rtSimTaskSend(variant->dev, TS, sq, sqes, 0, 0, &pos));
	EXPECT_EQ(0, seen.tasks + seen.foreign);
	for (r = 0; r < 2; r++) {
		for (n = 1; n <= max; n++) {
			sqes_fill(sqes, variant->stars, stream, sent, n);
			ASSERT_EQ(DRV_ERROR_NONE,
				  rtSimTaskSend(variant->dev, TS, sq, sqes, n,
						WAIT_MS, &pos));
			if (!sent)
				first = pos;
			EXPECT_EQ((first + sent) % DEPTH, pos);
			sent += n;
			tasks++;
		}
	}
	ASSERT_EQ(DRV_ERROR_NONE,
		  rtSimSqWait(variant->dev, TS, sq, (first + sent) % DEPTH,
			      WAIT_MS));
	EXPECT_EQ(tasks, seen.tasks);
	EXPECT_EQ(sent, seen.sqes);
	EXPECT_EQ(0, seen.foreign);
	check_truth(_metadata, self->ctl, variant->dev, sq, sent, first,
		    DEPTH);
	halDeviceClose(variant->dev, &cin);
}

/*
 * libhal_dlsym.so's sends reach the driver's library past this program's
 * halSqTaskSend (as past any interposer), and the device runs them.
 */
TEST_F(keeper, dlsym_caller)
{
	drvError_t (*send)(uint32_t, struct halTaskSendInfo *);
	uint8_t sqes[8 * TRS_SQE_SIZE];
	uint32_t stream, sq, max = 0, n, sent = 0, first = 0;
	halDevCloseIn cin = { 0 };
	void *h;

	h = dlopen("libhal_dlsym.so", RTLD_NOW);
	ASSERT_NE(NULL, h) TH_LOG("%s", dlerror());
	send = (drvError_t (*)(uint32_t, struct halTaskSendInfo *))
		dlsym(h, "dlsymSqTaskSend");
	ASSERT_NE(NULL, send);
	sq_alloc(_metadata, variant->dev, variant->stars, &stream, &sq);
	ASSERT_EQ(DRV_ERROR_NONE, rtSimDeviceInit(variant->dev, &max));
	for (n = 1; n <= max; n++) {
		struct halTaskSendInfo info = {
			.type = DRV_NORMAL_TYPE, .tsId = TS, .sqId = sq,
			.sqe_addr = sqes, .sqe_num = n,
		};

		sqes_fill(sqes, variant->stars, stream, sent, n);
		ASSERT_EQ(DRV_ERROR_NONE, send(variant->dev, &info));
		if (!sent)
			first = info.pos;
		sent += n;
	}
	ASSERT_EQ(DRV_ERROR_NONE,
		  rtSimSqWait(variant->dev, TS, sq, (first + sent) % DEPTH,
			      WAIT_MS));
	EXPECT_EQ(0, seen.tasks + seen.foreign);
	check_truth(_metadata, self->ctl, variant->dev, sq, sent, first,
		    DEPTH);
	halDeviceClose(variant->dev, &cin);
}

TEST_HARNESS_MAIN
