/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What CANN's acl_prof.h has beyond steptime's step and msproftx API
 * (acl_prof.h, libsteptime) and CANN's profiling samples call: the other
 * data-type flags of aclprofCreateConfig() and aclprofSetConfig(), with
 * CANN's names and values. aclprofSetConfig() is in steptime's ACL
 * runtime on npusim (libascendcl.so): it checks its arguments as CANN
 * does and keeps nothing (steptime has no such knobs). Included by
 * acl/acl.h.
 */
#ifndef _STEPTIME_ACL_PROF_CONFIG_H
#define _STEPTIME_ACL_PROF_CONFIG_H

#include <stddef.h>
#include "acl_prof.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACL_PROF_AICPU
#define ACL_PROF_AICPU		0x0008ULL
#endif
#ifndef ACL_PROF_L2CACHE
#define ACL_PROF_L2CACHE	0x0010ULL
#endif
#ifndef ACL_PROF_HCCL_TRACE
#define ACL_PROF_HCCL_TRACE	0x0020ULL
#endif

#ifndef STEPTIME_ACL_PROF_CONFIG_TYPE
#define STEPTIME_ACL_PROF_CONFIG_TYPE
typedef enum {
	ACL_PROF_ARGS_MIN = 0,
	ACL_PROF_STORAGE_LIMIT = 1,
	ACL_PROF_SYS_HARDWARE_MEM_FREQ = 3,
	ACL_PROF_LLC_MODE = 4,
	ACL_PROF_SYS_IO_FREQ = 5,
	ACL_PROF_SYS_INTERCONNECTION_FREQ = 6,
	ACL_PROF_DVPP_FREQ = 7,
	ACL_PROF_HOST_SYS = 8,
	ACL_PROF_HOST_SYS_USAGE = 9,
	ACL_PROF_HOST_SYS_USAGE_FREQ = 10,
	ACL_PROF_LOW_POWER_FREQ = 11,
	ACL_PROF_SYS_MEM_SERVICEFLOW = 12,
	ACL_PROF_SYS_CPU_FREQ = 13,
	ACL_PROF_OPTYPE = 14,
	ACL_PROF_NTS_METRICS = 15,
	ACL_PROF_PATH = 16,
	ACL_PROF_ARGS_MAX = 17,
} aclprofConfigType;
#endif

/**
 * aclprofSetConfig() - a profiling option (collection frequencies, ...)
 * @configType: ACL_PROF_STORAGE_LIMIT .. ACL_PROF_PATH (2 is not one)
 * @config: the value as text, @configLength bytes (1..4096)
 *
 * Return: ACL_SUCCESS (npusim: the option is accepted and not used);
 * ACL_ERROR_INVALID_PARAM for an unknown type, NULL or a bad length.
 */
__attribute__((visibility("default")))
aclError aclprofSetConfig(aclprofConfigType configType, const char *config,
			  size_t configLength);

#ifdef __cplusplus
}
#endif

#endif /* _STEPTIME_ACL_PROF_CONFIG_H */
