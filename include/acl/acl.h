/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ACL entry header, as CANN's programs include it ("acl/acl.h"): the
 * runtime calls (acl_rt.h) that steptime's ACL runtime on npusim
 * (libascendcl.so, runtime/) implements. The profiling calls are in
 * acl_prof.h, implemented by libsteptime.
 */
#ifndef _STEPTIME_ACL_H
#define _STEPTIME_ACL_H

#include "acl_base.h"
#include "acl_rt.h"

#endif /* _STEPTIME_ACL_H */
