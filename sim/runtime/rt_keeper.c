// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libruntime.so for npusim: the keeper that loads each device's task
 * library by its chip, as CANN's runtime_keeper.cc does (see rt_sim.h).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../ascend_hal/ascend_hal.h"
#include "rt_sim.h"

#define RT_MAX_DEVICES	64

/* The chips CANN's config/<chip>/dev_info_reg.cc names, by prefix. */
static const struct {
	const char *prefix;
	const char *lib;
} rt_chips[] = {
	{ "910B", "libruntime_v100.so" },	/* config/910_B_93 */
	{ "910_93", "libruntime_v100.so" },
	{ "950", "libruntime_v200.so" },	/* config/950 */
};

static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct rt_sim_task_ops *rt_dev_ops[RT_MAX_DEVICES];

static const struct rt_sim_task_ops *rt_ops(uint32_t dev)
{
	if (dev >= RT_MAX_DEVICES)
		return NULL;
	return __atomic_load_n(&rt_dev_ops[dev], __ATOMIC_ACQUIRE);
}

static const char *rt_chip_lib(const halChipInfo *ci)
{
	size_t i;

	for (i = 0; i < sizeof(rt_chips) / sizeof(rt_chips[0]); i++)
		if (!strncmp((const char *)ci->name, rt_chips[i].prefix,
			     strlen(rt_chips[i].prefix)))
			return rt_chips[i].lib;
	return NULL;
}

/*
 * dlopen() by soname (found by this library's RUNPATH, $ORIGIN, or the
 * loader's path), RTLD_NOW, never closed: the runtime's life is the
 * process's.
 */
static const struct rt_sim_task_ops *rt_load(const char *lib)
{
	rt_sim_task_ops_fn fn;
	void *h = dlopen(lib, RTLD_NOW);

	if (!h) {
		fprintf(stderr, "libruntime.so: %s\n", dlerror());
		return NULL;
	}
	fn = (rt_sim_task_ops_fn)dlsym(h, RT_SIM_TASK_OPS_SYM);
	if (!fn) {
		fprintf(stderr, "libruntime.so: %s: no %s\n", lib,
			RT_SIM_TASK_OPS_SYM);
		dlclose(h);
		return NULL;
	}
	return fn();
}

RT_SIM_API int32_t rtSimDeviceInit(uint32_t devId, uint32_t *maxSqes)
{
	const struct rt_sim_task_ops *ops;
	halChipInfo ci;
	const char *lib;
	drvError_t ret = DRV_ERROR_NONE;

	if (devId >= RT_MAX_DEVICES)
		return DRV_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&rt_lock);
	ops = rt_dev_ops[devId];
	if (ops)
		goto out;
	ret = halGetChipInfo(devId, &ci);
	if (ret)
		goto out;
	ret = DRV_ERROR_NOT_SUPPORT;
	lib = rt_chip_lib(&ci);
	if (!lib)
		goto out;
	ret = DRV_ERROR_INNER_ERR;
	ops = rt_load(lib);
	if (!ops)
		goto out;
	__atomic_store_n(&rt_dev_ops[devId], ops, __ATOMIC_RELEASE);
	ret = DRV_ERROR_NONE;
out:
	pthread_mutex_unlock(&rt_lock);
	if (!ret && maxSqes)
		*maxSqes = ops->max_sqes;
	return ret;
}

RT_SIM_API const char *rtSimLibrary(uint32_t devId)
{
	const struct rt_sim_task_ops *ops = rt_ops(devId);

	return ops ? ops->soname : NULL;
}

RT_SIM_API int32_t rtSimTaskSend(uint32_t devId, uint32_t tsId, uint32_t sqId,
				 const void *sqes, uint32_t sqeNum,
				 int32_t timeoutMs, uint32_t *pos)
{
	const struct rt_sim_task_ops *ops = rt_ops(devId);

	if (!ops)
		return DRV_ERROR_UNINIT;
	return ops->send(devId, tsId, sqId, sqes, sqeNum, timeoutMs, pos);
}

RT_SIM_API int32_t rtSimSqHead(uint32_t devId, uint32_t tsId, uint32_t sqId,
			       uint32_t *head)
{
	const struct rt_sim_task_ops *ops = rt_ops(devId);

	if (!ops)
		return DRV_ERROR_UNINIT;
	return ops->sq_head(devId, tsId, sqId, head);
}

RT_SIM_API int32_t rtSimSqWait(uint32_t devId, uint32_t tsId, uint32_t sqId,
			       uint32_t pos, int32_t timeoutMs)
{
	const struct rt_sim_task_ops *ops = rt_ops(devId);

	if (!ops)
		return DRV_ERROR_UNINIT;
	return ops->sq_wait(devId, tsId, sqId, pos, timeoutMs);
}
