/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ACL base types steptime's CANN drop-in needs: aclError, aclrtStream
 * and the error codes, with CANN's names and values (ABI facts, written
 * here from the published tables). A build that takes these from CANN's own
 * acl_base.h defines STEPTIME_ACL_BASE_EXTERNAL.
 */
#ifndef _STEPTIME_ACL_BASE_H
#define _STEPTIME_ACL_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef STEPTIME_ACL_BASE_EXTERNAL

typedef int aclError;

/* A device stream; NULL is the default stream. */
typedef void *aclrtStream;

#define ACL_SUCCESS				0
#define ACL_ERROR_INVALID_PARAM			100000
#define ACL_ERROR_UNINITIALIZE			100001
#define ACL_ERROR_REPEAT_INITIALIZE		100002
#define ACL_ERROR_INVALID_PROFILING_CONFIG	100010
#define ACL_ERROR_PROF_ALREADY_RUN		100042
#define ACL_ERROR_PROF_NOT_RUN			100043
#define ACL_ERROR_BAD_ALLOC			200000
#define ACL_ERROR_API_NOT_SUPPORT		200001
#define ACL_ERROR_FEATURE_UNSUPPORTED		200006
#define ACL_ERROR_INTERNAL_ERROR		500000
#define ACL_ERROR_FAILURE			500001
#define ACL_ERROR_GE_FAILURE			500002
#define ACL_ERROR_RT_FAILURE			500003
#define ACL_ERROR_DRV_FAILURE			500004
#define ACL_ERROR_PROFILING_FAILURE		500005

#endif /* STEPTIME_ACL_BASE_EXTERNAL */

#ifdef __cplusplus
}
#endif

#endif /* _STEPTIME_ACL_BASE_H */
