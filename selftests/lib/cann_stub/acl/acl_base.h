/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A stand-in for CANN's acl/acl_base.h in test_acl_headers.sh, shaped as
 * CANN lays it out (hicann/runtime include/external/acl): acl_base.h, with
 * include guard INC_EXTERNAL_ACL_ACL_BASE_H_, includes acl_base_rt.h
 * (guard INC_EXTERNAL_ACL_ACL_BASE_RT_H_), which declares the types and
 * the error codes as `static const int` objects, and more types steptime
 * does not declare. Written for the test; not CANN's text.
 */
#ifndef INC_EXTERNAL_ACL_ACL_BASE_H_
#define INC_EXTERNAL_ACL_ACL_BASE_H_

#include "acl_base_rt.h"

#endif
