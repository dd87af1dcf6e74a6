// SPDX-License-Identifier: GPL-2.0
/*
 * The chips' task libraries of npusim's runtime (libruntime_v100.so,
 * libruntime_v200.so; sim/runtime/rt_sim.h) on the host, no device: this
 * program defines halSqTaskSend and halSqCqQuery itself, ahead of
 * libascend_hal.so in the global scope (as an LD_PRELOAD interposer), and
 * scripts their answers. Checked:
 *   - a task library dlopen()ed RTLD_NOW calls this program's functions
 *     (interposable: no DEEPBIND, no local binding);
 *   - one call per task, at most 4 SQEs (v100) or 5 (v200), larger or
 *     empty tasks refused before any call;
 *   - v100 retries every error with the same struct, unchanged; v200
 *     retries DRV_ERROR_NO_RESOURCES only and gives up the task on any
 *     other error; a timeout of 0 is one try;
 *   - the synchronize polls halSqCqQuery(SQ_HEAD) until the head is the
 *     position asked for, or times out.
 */
#include <dlfcn.h>
#include <string.h>
#include "../../sim/ascend_hal/ascend_hal.h"
#include "../../sim/runtime/rt_sim.h"
#include "kselftest_harness.h"

#define SCRIPT_MAX	8

static struct {
	drvError_t ret[SCRIPT_MAX];	/* answers, in order; then the last */
	unsigned int n;			/* answers scripted */
	unsigned int calls;
	struct halTaskSendInfo first;	/* the first call's struct */
	const struct halTaskSendInfo *first_p;
	unsigned int changed;		/* calls whose struct differed */
	uint32_t heads[SCRIPT_MAX];	/* SQ_HEAD answers */
	unsigned int queries;
	unsigned int bad_queries;	/* not an SQ_HEAD of a NORMAL SQ */
} fake;

static drvError_t next_answer(void)
{
	unsigned int i = fake.calls < fake.n ? fake.calls : fake.n - 1;

	return fake.n ? fake.ret[i] : DRV_ERROR_NONE;
}

drvError_t halSqTaskSend(uint32_t devId, struct halTaskSendInfo *info)
{
	drvError_t ret = next_answer();

	if (!fake.calls) {
		fake.first = *info;
		fake.first_p = info;
	} else if (info != fake.first_p ||
		   memcmp(info, &fake.first, sizeof(*info))) {
		fake.changed++;
	}
	fake.calls++;
	if (ret == DRV_ERROR_NONE)
		info->pos = 7;
	return ret;
}

drvError_t halSqCqQuery(uint32_t devId, struct halSqCqQueryInfo *info)
{
	unsigned int i = fake.queries < SCRIPT_MAX ? fake.queries :
						       SCRIPT_MAX - 1;

	if (info->type != DRV_NORMAL_TYPE ||
	    info->prop != DRV_SQCQ_PROP_SQ_HEAD || info->sqId != 3)
		fake.bad_queries++;
	fake.queries++;
	info->value[0] = fake.heads[i];
	return DRV_ERROR_NONE;
}

FIXTURE(task) {
	void *h;
	const struct rt_sim_task_ops *ops;
	uint8_t sqes[8 * 64];
};

FIXTURE_VARIANT(task) {
	const char *lib;
	uint32_t max_sqes;
	bool retry_all;		/* v100: every error */
};

FIXTURE_VARIANT_ADD(task, v100) {
	.lib = "libruntime_v100.so", .max_sqes = 4, .retry_all = true,
};

FIXTURE_VARIANT_ADD(task, v200) {
	.lib = "libruntime_v200.so", .max_sqes = 5, .retry_all = false,
};

FIXTURE_SETUP(task)
{
	rt_sim_task_ops_fn fn;

	memset(&fake, 0, sizeof(fake));
	self->h = dlopen(variant->lib, RTLD_NOW);
	ASSERT_NE(NULL, self->h) TH_LOG("%s", dlerror());
	fn = (rt_sim_task_ops_fn)dlsym(self->h, RT_SIM_TASK_OPS_SYM);
	ASSERT_NE(NULL, fn);
	self->ops = fn();
	ASSERT_NE(NULL, self->ops);
	memset(self->sqes, 0x5a, sizeof(self->sqes));
}

FIXTURE_TEARDOWN(task)
{
}

static void script(const drvError_t *ret, unsigned int n)
{
	memcpy(fake.ret, ret, n * sizeof(*ret));
	fake.n = n;
}

/* Whole tasks: 1..max SQEs in one call each; 0 or max + 1 in none. */
TEST_F(task, task_sizes)
{
	uint32_t n, pos;

	EXPECT_STREQ(variant->lib, self->ops->soname);
	EXPECT_EQ(variant->max_sqes, self->ops->max_sqes);
	for (n = 1; n <= variant->max_sqes; n++) {
		fake.calls = 0;
		pos = 0;
		EXPECT_EQ(DRV_ERROR_NONE,
			  self->ops->send(1, 0, 3, self->sqes, n, 1000, &pos));
		EXPECT_EQ(1, fake.calls);
		EXPECT_EQ(n, fake.first.sqe_num);
		EXPECT_EQ(DRV_NORMAL_TYPE, fake.first.type);
		EXPECT_EQ(3, fake.first.sqId);
		EXPECT_TRUE(self->sqes == fake.first.sqe_addr);
		EXPECT_EQ(7, pos);
	}
	fake.calls = 0;
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE,
		  self->ops->send(1, 0, 3, self->sqes, variant->max_sqes + 1,
				  1000, &pos));
	EXPECT_EQ(DRV_ERROR_INVALID_VALUE,
		  self->ops->send(1, 0, 3, self->sqes, 0, 1000, &pos));
	EXPECT_EQ(0, fake.calls);
}

/* A full queue is retried on both chips, with the same struct. */
TEST_F(task, full_queue_retried)
{
	static const drvError_t r[] = {
		DRV_ERROR_NO_RESOURCES, DRV_ERROR_NO_RESOURCES, DRV_ERROR_NONE,
	};
	uint32_t pos = 0;

	script(r, 3);
	EXPECT_EQ(DRV_ERROR_NONE,
		  self->ops->send(0, 1, 3, self->sqes, 2, 10000, &pos));
	EXPECT_EQ(3, fake.calls);
	EXPECT_EQ(0, fake.changed);
	EXPECT_EQ(7, pos);
}

/* Other errors: v100 tries the same struct again, v200 gives up. */
TEST_F(task, other_errors)
{
	static const drvError_t r[] = {
		DRV_ERROR_NO_RESOURCES, DRV_ERROR_IOCRL_FAIL,
		DRV_ERROR_INNER_ERR, DRV_ERROR_NONE,
	};
	uint32_t pos = 0;
	drvError_t ret;

	script(r, 4);
	ret = self->ops->send(0, 1, 3, self->sqes, 1, 10000, &pos);
	if (variant->retry_all) {
		EXPECT_EQ(DRV_ERROR_NONE, ret);
		EXPECT_EQ(4, fake.calls);
		EXPECT_EQ(0, fake.changed);
	} else {
		EXPECT_EQ(DRV_ERROR_IOCRL_FAIL, ret);
		EXPECT_EQ(2, fake.calls);
	}
}

/* Timeout 0: one try; a timeout ends the retries with the last error. */
TEST_F(task, timeouts)
{
	static const drvError_t r[] = { DRV_ERROR_NO_RESOURCES };
	uint32_t pos = 0;

	script(r, 1);
	EXPECT_EQ(DRV_ERROR_NO_RESOURCES,
		  self->ops->send(0, 0, 3, self->sqes, 1, 0, &pos));
	EXPECT_EQ(1, fake.calls);
	fake.calls = 0;
	EXPECT_EQ(DRV_ERROR_NO_RESOURCES,
		  self->ops->send(0, 0, 3, self->sqes, 1, 20, &pos));
	EXPECT_LT(1, fake.calls);
	EXPECT_EQ(0, fake.changed);
}

/* The synchronize reads SQ_HEAD until it is the position asked for. */
TEST_F(task, sync_polls_sq_head)
{
	uint32_t head = 0;

	fake.heads[0] = 1;
	fake.heads[1] = 2;
	fake.heads[2] = 2;
	fake.heads[3] = 9;
	fake.heads[4] = 9;	/* the read after the wait */
	EXPECT_EQ(DRV_ERROR_NONE, self->ops->sq_wait(0, 0, 3, 9, 10000));
	EXPECT_EQ(4, fake.queries);
	EXPECT_EQ(DRV_ERROR_NONE, self->ops->sq_head(0, 0, 3, &head));
	EXPECT_EQ(9, head);
	fake.queries = 0;
	fake.heads[SCRIPT_MAX - 1] = 1;
	EXPECT_EQ(DRV_ERROR_WAIT_TIMEOUT, self->ops->sq_wait(0, 0, 3, 5, 20));
	EXPECT_LT(1, fake.queries);
	EXPECT_EQ(0, fake.bad_queries);
}

TEST_HARNESS_MAIN
