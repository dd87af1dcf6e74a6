// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libsteptime's bottom layer (lib/base.h): what every other file of the
 * library uses and nothing of it calls. It calls libc alone.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <steptime/steptime.h>
#include "base.h"

struct steptime_lib_counters st_lib_cnt;

int steptime__lib_counters(struct steptime_lib_counters *cnt, size_t sz)
{
	struct steptime_lib_counters now;
	size_t i, n = sizeof(now) / sizeof(__u64);

	if (!cnt)
		return -EINVAL;
	for (i = 0; i < n; i++)
		((__u64 *)&now)[i] = __atomic_load_n(&((__u64 *)&st_lib_cnt)[i],
						     __ATOMIC_RELAXED);
	memset(cnt, 0, sz);
	memcpy(cnt, &now, sz < sizeof(now) ? sz : sizeof(now));
	return 0;
}

const char *steptime__pin_dir(const char *given)
{
	const char *env = getenv("STEPTIME_PIN_DIR");

	if (given)
		return given;
	return env && *env ? env : STEPTIME_PIN_DIR;
}

void st_warn(const char *fmt, ...)
{
	const char *quiet = getenv("STEPTIME_QUIET");
	va_list ap;

	if (quiet && !strcmp(quiet, "1"))
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

__u32 st_pidns_ino(void)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st))
		return 0;
	return (__u32)st.st_ino;
}
