/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Chrome Trace Event JSON of `steptime trace`, for other commands: the
 * exporter's flight recorder (GET /trace) writes the same format.
 */
#ifndef _STEPTIME_TOOLS_TRACE_H
#define _STEPTIME_TOOLS_TRACE_H

#include <stdio.h>
#include "snapshot.h"

/*
 * @snap's steps (sorted by process and index id) as a trace on @f: host
 * and device spans (device spans drawn from their host START mark), the
 * steps' phases, task counters; @cnt (NULL: none) as the loss counters;
 * @freq_hz the device counter's. Return: 0, or -errno of the write.
 */
int trace_json_write(FILE *f, const struct snap *snap,
		     const struct steptime_counters *cnt, __u64 freq_hz);

#endif /* _STEPTIME_TOOLS_TRACE_H */
