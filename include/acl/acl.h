/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ACL entry header, as CANN's programs include it ("acl/acl.h"): the
 * runtime calls (acl_rt.h) that steptime's ACL runtime on npusim
 * (libascendcl.so, sim/runtime/) implements. The profiling calls are in
 * acl_prof.h (libsteptime) and acl_prof_config.h.
 */
#ifndef _STEPTIME_ACL_H
#define _STEPTIME_ACL_H

#include "acl_base.h"
#include "acl_rt.h"
#include "acl_prof.h"
#include "acl_prof_config.h"

#endif /* _STEPTIME_ACL_H */
