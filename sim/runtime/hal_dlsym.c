// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libhal_dlsym.so: a third-party caller of the driver's library, as
 * memfabric_hybrid is: it dlopen()s libascend_hal.so and finds
 * halSqTaskSend with dlsym() on that handle, so its sends reach the
 * library's own definition whatever the process interposes (LD_PRELOAD,
 * a GOT patch of the runtime). For tests of sends no hook sees.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "../ascend_hal/ascend_hal.h"

typedef drvError_t (*hal_send_fn)(uint32_t, struct halTaskSendInfo *);

static pthread_once_t hd_once = PTHREAD_ONCE_INIT;
static hal_send_fn hd_send;

static void hd_resolve(void)
{
	void *h = dlopen("libascend_hal.so", RTLD_NOW);

	if (h)
		hd_send = (hal_send_fn)dlsym(h, "halSqTaskSend");
}

/*
 * dlsymSqTaskSend() - halSqTaskSend(@devId, @info), found by dlsym();
 * DRV_ERROR_NOT_SUPPORT when the library or the call is not there.
 */
__attribute__((visibility("default")))
drvError_t dlsymSqTaskSend(uint32_t devId, struct halTaskSendInfo *info);

drvError_t dlsymSqTaskSend(uint32_t devId, struct halTaskSendInfo *info)
{
	pthread_once(&hd_once, hd_resolve);
	return hd_send ? hd_send(devId, info) : DRV_ERROR_NOT_SUPPORT;
}
