/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npusim's runtime, built as CANN's (ascend-abi.md section 6):
 *
 *   - libruntime.so, the keeper: at a device's first rtSimDeviceInit() it
 *     asks the driver's library for the chip (halGetChipInfo) and dlopen()s
 *     the chip's task library with RTLD_NOW (no RTLD_DEEPBIND), as CANN's
 *     runtime_keeper.cc does by the chip's dev_info: libruntime_v100.so for
 *     a 910B or 910_93 (STARS v1), libruntime_v200.so for a 950 (STARS v2);
 *     kept loaded for the life of the process;
 *   - libruntime_v100.so / libruntime_v200.so: built -fvisibility=hidden,
 *     linked -z now with full RELRO, libascend_hal.so a DT_NEEDED; they call
 *     halSqTaskSend() through the PLT as a weak undefined symbol (CANN's
 *     npu_driver_base.hpp), the other HAL calls strong. So LD_PRELOAD, or a
 *     patch of their GOT, interposes it. Each exports rtSimTaskOps() only.
 *
 * A task is what one halSqTaskSend() carries: 1-4 SQEs on v100, 1-5 on v200
 * (npusim runs each SQE on its own). v100 retries every error with the
 * same struct; v200 retries only DRV_ERROR_NO_RESOURCES and abandons the
 * task on any other. Completion is the SQ head, read with
 * halSqCqQuery(SQ_HEAD) (a user-space read on mapped SQs), polled by a
 * synchronize's busy wait.
 *
 * Every call returns a drvError_t. Timeouts: 0 one try, < 0 forever.
 */
#ifndef _SIM_RT_SIM_H
#define _SIM_RT_SIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RT_SIM_API	__attribute__((visibility("default")))

/* What a chip's task library gives the keeper (rtSimTaskOps()). */
struct rt_sim_task_ops {
	const char *soname;		/* "libruntime_v100.so", ... */
	uint32_t max_sqes;		/* SQEs in one task */
	int32_t (*send)(uint32_t devId, uint32_t tsId, uint32_t sqId,
			const void *sqes, uint32_t sqeNum, int32_t timeoutMs,
			uint32_t *pos);
	int32_t (*sq_head)(uint32_t devId, uint32_t tsId, uint32_t sqId,
			   uint32_t *head);
	int32_t (*sq_wait)(uint32_t devId, uint32_t tsId, uint32_t sqId,
			   uint32_t pos, int32_t timeoutMs);
};

/* The task libraries' one entry point. */
typedef const struct rt_sim_task_ops *(*rt_sim_task_ops_fn)(void);
#define RT_SIM_TASK_OPS_SYM	"rtSimTaskOps"

/*
 * rtSimDeviceInit() - pick and load @devId's task library (once)
 * @maxSqes: if not NULL, the most SQEs of one task on that chip
 *
 * DRV_ERROR_NOT_SUPPORT: a chip with no task library here (neither 910B,
 * 910_93 nor 950); DRV_ERROR_INNER_ERR: the library did not load.
 */
RT_SIM_API int32_t rtSimDeviceInit(uint32_t devId, uint32_t *maxSqes);

/* The soname of @devId's task library, or NULL before rtSimDeviceInit(). */
RT_SIM_API const char *rtSimLibrary(uint32_t devId);

/*
 * rtSimTaskSend() - one task of @sqeNum SQEs on an SQ the caller allocated
 * through libascend_hal.so; @pos: out, the first SQE's position.
 * DRV_ERROR_UNINIT before rtSimDeviceInit().
 */
RT_SIM_API int32_t rtSimTaskSend(uint32_t devId, uint32_t tsId, uint32_t sqId,
				 const void *sqes, uint32_t sqeNum,
				 int32_t timeoutMs, uint32_t *pos);

/* rtSimSqHead() - the SQ's head, as the runtime reads it */
RT_SIM_API int32_t rtSimSqHead(uint32_t devId, uint32_t tsId, uint32_t sqId,
			       uint32_t *head);

/*
 * rtSimSqWait() - a synchronize: poll the SQ head until it is @pos (the
 * position after the last SQE sent); DRV_ERROR_WAIT_TIMEOUT after
 * @timeoutMs.
 */
RT_SIM_API int32_t rtSimSqWait(uint32_t devId, uint32_t tsId, uint32_t sqId,
			       uint32_t pos, int32_t timeoutMs);

#ifdef __cplusplus
}
#endif

#endif /* _SIM_RT_SIM_H */
