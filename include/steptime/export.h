/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef _STEPTIME_EXPORT_H
#define _STEPTIME_EXPORT_H

/* libsteptime is built with -fvisibility=hidden; this marks the public API. */
#ifndef STEPTIME_API
#define STEPTIME_API __attribute__((visibility("default")))
#endif

#endif /* _STEPTIME_EXPORT_H */
