/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ACL base types steptime's CANN drop-in needs: aclError, aclrtStream
 * and the error codes, with CANN's names, types and values (ABI facts,
 * written here from the published tables). As in CANN, the codes are
 * `static const int` objects, not macros: code written against CANN (and
 * ours) may not use them in #if, nor, in C, in case labels or static
 * initialisers (they are not integer constant expressions in C).
 *
 * Together with CANN's own headers in one translation unit:
 *  - CANN's acl_base.h (or acl_base_rt.h) first: nothing here is declared
 *    again (CANN's include guards say so), with or without the macro below;
 *  - ours first: define STEPTIME_ACL_BASE_EXTERNAL. Then this header
 *    declares only the types aclError (int) and aclrtStream (void *) that
 *    steptime's declarations need, and CANN's acl_base.h declares them again
 *    identically, which C11 and C++ allow, and declares the codes.
 *    Without the macro CANN's definitions of the codes after ours are
 *    redefinitions: a compile error, as including CANN's own codes twice is.
 */
#ifndef _STEPTIME_ACL_BASE_H
#define _STEPTIME_ACL_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(INC_EXTERNAL_ACL_ACL_BASE_H_) || \
    defined(INC_EXTERNAL_ACL_ACL_BASE_RT_H_)
/* CANN's acl_base.h came first: it declared all of this. */
#elif defined(STEPTIME_ACL_BASE_EXTERNAL)
/* CANN's acl_base.h declares the codes (and these types again). */
typedef int aclError;
typedef void *aclrtStream;
#else

typedef int aclError;

/* A device stream; NULL is the default stream. */
typedef void *aclrtStream;

static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_UNINITIALIZE = 100001;
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_INVALID_PROFILING_CONFIG = 100010;
static const int ACL_ERROR_PROF_ALREADY_RUN = 100042;
static const int ACL_ERROR_PROF_NOT_RUN = 100043;
static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_API_NOT_SUPPORT = 200001;
static const int ACL_ERROR_FEATURE_UNSUPPORTED = 200006;
static const int ACL_ERROR_INTERNAL_ERROR = 500000;
static const int ACL_ERROR_FAILURE = 500001;
static const int ACL_ERROR_GE_FAILURE = 500002;
static const int ACL_ERROR_RT_FAILURE = 500003;
static const int ACL_ERROR_DRV_FAILURE = 500004;
static const int ACL_ERROR_PROFILING_FAILURE = 500005;

#endif /* CANN's first, STEPTIME_ACL_BASE_EXTERNAL, or ours */

#ifdef __cplusplus
}
#endif

#endif /* _STEPTIME_ACL_BASE_H */
