// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libruntime_v100.so (910B) and, built with RT_V200, libruntime_v200.so
 * (950): the runtime's task path on the driver's library, as CANN's
 * task_submit/v100 and v200 send (see rt_sim.h). Built -fvisibility=hidden;
 * rtSimTaskOps() is the only name it exports.
 */
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "../ascend_hal/ascend_hal.h"
#include "rt_sim.h"

#ifdef RT_V200
#define RT_SONAME	"libruntime_v200.so"
#define RT_MAX_SQES	5	/* stars_base.hpp: a David task */
#else
#define RT_SONAME	"libruntime_v100.so"
#define RT_MAX_SQES	4
#endif

/*
 * Weak, as CANN's npu_driver_base.hpp declares it (a driver without the
 * call still loads the runtime): the call goes through the PLT, bound at
 * load (-z now), and whatever comes first in the global scope (LD_PRELOAD)
 * answers it.
 */
extern __typeof__(halSqTaskSend) halSqTaskSend __attribute__((weak));

static uint64_t rt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Whether @timeout_ms (from @start) leaves time for another try. */
static bool rt_time_left(int32_t timeout_ms, uint64_t start)
{
	return timeout_ms < 0 ||
	       (timeout_ms > 0 && rt_now_ms() - start < (uint64_t)timeout_ms);
}

/* Between polls: a yield first, then 20 us doubling to 1 ms (TCG guests). */
static void rt_pause(unsigned int *us)
{
	struct timespec ts = { .tv_nsec = (long)*us * 1000 };

	nanosleep(&ts, NULL);
	*us = *us ? (*us < 1000 ? *us * 2 : *us) : 20;
}

/*
 * Whether the driver has the call: its own function, so that the send
 * below stays a call through the PLT rather than through this address.
 */
static __attribute__((noinline)) bool rt_have_send(void)
{
	return halSqTaskSend != NULL;
}

/* Which failures of a send the chip's runtime tries again. */
static bool rt_send_retry(drvError_t ret)
{
#ifdef RT_V200
	/* task_david.cc: a full queue only; anything else drops the task */
	return ret == DRV_ERROR_NO_RESOURCES;
#else
	/* task_submit.cc: every error, the same struct again */
	(void)ret;
	return true;
#endif
}

static int32_t rt_send(uint32_t dev, uint32_t ts, uint32_t sq,
		       const void *sqes, uint32_t n, int32_t timeout_ms,
		       uint32_t *pos)
{
	struct halTaskSendInfo info = {
		.type = DRV_NORMAL_TYPE, .tsId = ts, .sqId = sq,
		.timeout = timeout_ms, .sqe_addr = (uint8_t *)sqes,
		.sqe_num = n,
	};
	uint64_t start = rt_now_ms();
	unsigned int us = 0;
	drvError_t ret;

	if (!sqes || !n || n > RT_MAX_SQES || !pos)
		return DRV_ERROR_INVALID_VALUE;
	if (!rt_have_send())
		return DRV_ERROR_NOT_SUPPORT;
	for (;;) {
		ret = halSqTaskSend(dev, &info);
		if (ret == DRV_ERROR_NONE) {
			*pos = info.pos;
			return ret;
		}
		if (!rt_send_retry(ret) || !rt_time_left(timeout_ms, start))
			return ret;
		rt_pause(&us);
	}
}

static int32_t rt_sq_head(uint32_t dev, uint32_t ts, uint32_t sq,
			  uint32_t *head)
{
	struct halSqCqQueryInfo q = {
		.type = DRV_NORMAL_TYPE, .tsId = ts, .sqId = sq,
		.prop = DRV_SQCQ_PROP_SQ_HEAD,
	};
	drvError_t ret;

	if (!head)
		return DRV_ERROR_INVALID_VALUE;
	ret = halSqCqQuery(dev, &q);
	if (ret == DRV_ERROR_NONE)
		*head = q.value[0];
	return ret;
}

/* Stream::Synchronize's busy wait: the head read until it is @pos. */
static int32_t rt_sq_wait(uint32_t dev, uint32_t ts, uint32_t sq,
			  uint32_t pos, int32_t timeout_ms)
{
	uint64_t start = rt_now_ms();
	unsigned int us = 0;
	uint32_t head;
	int32_t ret;

	for (;;) {
		ret = rt_sq_head(dev, ts, sq, &head);
		if (ret || head == pos)
			return ret;
		if (!rt_time_left(timeout_ms, start))
			return DRV_ERROR_WAIT_TIMEOUT;
		rt_pause(&us);
	}
}

static const struct rt_sim_task_ops rt_ops = {
	.soname = RT_SONAME,
	.max_sqes = RT_MAX_SQES,
	.send = rt_send,
	.sq_head = rt_sq_head,
	.sq_wait = rt_sq_wait,
};

RT_SIM_API const struct rt_sim_task_ops *rtSimTaskOps(void);

RT_SIM_API const struct rt_sim_task_ops *rtSimTaskOps(void)
{
	return &rt_ops;
}
