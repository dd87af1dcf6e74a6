/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What steptime's ACL runtime on npusim (libascendcl.so) adds to CANN's
 * API: launching simulated kernels, and the raw device counter of an
 * event. Not CANN names: a program that calls these runs on npusim only.
 */
#ifndef _STEPTIME_ACL_NPUSIM_H
#define _STEPTIME_ACL_NPUSIM_H

#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* aclnpusimLaunchKernel() task kinds: the SQE types CANN uses for them. */
#define ACL_NPUSIM_KERNEL_AICORE	0	/* FFTS */
#define ACL_NPUSIM_KERNEL_AICPU		1
#define ACL_NPUSIM_KERNEL_SDMA		11	/* memcpy-like */

/**
 * aclnpusimLaunchKernel() - submit @count simulated kernels on @stream
 * @stream: NULL: the current device's default stream
 * @kind: ACL_NPUSIM_KERNEL_*
 * @count: kernels, 1..1024, submitted in one batch, in order
 * @durationNs: how long each runs on the device; 0: npusim's default
 *
 * Each kernel is one SQE without wr_cqe, as CANN launches kernels on an
 * ordinary stream: no report; the runtime learns of it by SQ head queries.
 *
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for a bad @kind or @count;
 * ACL_ERROR_RT_PARAM_INVALID for a dead stream; ACL_ERROR_RT_CONTEXT_NULL;
 * ACL_ERROR_RT_DRV_INTERNAL_ERROR when the device refuses.
 */
ACL_FUNC_VISIBILITY aclError aclnpusimLaunchKernel(aclrtStream stream,
						   uint32_t kind,
						   uint32_t count,
						   uint32_t durationNs);

/**
 * aclnpusimEventGetCounter() - the device counter when the stream reached
 * the event's last record (what aclrtEventGetTimestamp() gives in us)
 * @ticks: out
 * @freqHz: out, may be NULL: the counter's frequency
 *
 * Return: as aclrtEventGetTimestamp().
 */
ACL_FUNC_VISIBILITY aclError aclnpusimEventGetCounter(aclrtEvent event,
						      uint64_t *ticks,
						      uint64_t *freqHz);

/**
 * aclnpusimStreamGetSq() - where @stream's SQEs go: its device, TS and SQ
 * id (what npusim's truth, NPUSIM_IOC_TRUTH, is keyed by)
 * @stream: NULL: the current device's default stream
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for a NULL out pointer;
 * as aclrtStreamGetId() for the stream.
 */
ACL_FUNC_VISIBILITY aclError aclnpusimStreamGetSq(aclrtStream stream,
						  uint32_t *devId,
						  uint32_t *tsId,
						  uint32_t *sqId);

#ifdef __cplusplus
}
#endif

#endif /* _STEPTIME_ACL_NPUSIM_H */
