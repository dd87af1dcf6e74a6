// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime's CANN headers in one translation unit with CANN's acl_base.h
 * (a stand-in, cann_stub/): built as C and as C++ by test_acl_headers.sh.
 * CANN_FIRST: CANN's acl_base.h, then ours; else ours (with
 * STEPTIME_ACL_BASE_EXTERNAL), then CANN's.
 */
#ifdef CANN_FIRST
#include "cann_stub/acl/acl_base.h"
#include <acl/acl_prof.h>
#include <mstx/ms_tools_ext.h>
#else
#include <acl/acl_prof.h>
#include <mstx/ms_tools_ext.h>
#include "cann_stub/acl/acl_base.h"
#endif

/* Declared by ours, with CANN's types. */
static aclError (*const get_ts)(aclprofStepInfo *, aclprofStepTag,
				aclrtStream) = aclprofGetStepTimestamp;
static aclError (*const mark_ex)(const char *, size_t,
				 aclrtStream) = aclprofMarkEx;

int main(void)
{
	aclError err = ACL_SUCCESS;
	aclFloat16 h = 0;	/* CANN's own declarations are all there */

	(void)get_ts;
	(void)mark_ex;
	/* The codes are objects here: compare, never switch or #if. */
	if (err != 0 || ACL_ERROR_INVALID_PARAM != 100000 ||
	    ACL_ERROR_GE_FAILURE != 500002 ||
	    ACL_ERROR_PROFILING_FAILURE != 500005 || h)
		return 2;
	return 0;
}
