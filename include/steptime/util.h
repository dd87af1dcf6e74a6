/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Small helpers the app library (lib/) and the command (tools/) share.
 * Not installed (as loader.h): the build's own. Header-only, static
 * inline: what applications load exports nothing more for them, and the
 * mark's clock read stays inline on its fast path.
 */
#ifndef _STEPTIME_UTIL_H
#define _STEPTIME_UTIL_H

#include <time.h>
#include <linux/types.h>

/* CLOCK_MONOTONIC now, in ns: the clock of every host time steptime keeps. */
static inline __attribute__((always_inline)) __u64 st_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

#endif /* _STEPTIME_UTIL_H */
