// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include "forward.h"

static void *sym_get(struct st_next *n, void *handle, bool forward);

void *st_next_get(struct st_next *n)
{
	return sym_get(n, RTLD_NEXT, true);
}

void *st_global_get(struct st_next *n)
{
	return sym_get(n, RTLD_DEFAULT, false);
}

static void *sym_get(struct st_next *n, void *handle, bool forward)
{
	struct timespec ts;
	void *fn = __atomic_load_n(&n->fn, __ATOMIC_ACQUIRE);
	__u64 now;

	if (fn)
		return fn;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	if (now < __atomic_load_n(&n->retry_ns, __ATOMIC_RELAXED))
		return NULL;
	/* STEPTIME_FORWARD=0: steptime answers alone even with CANN loaded. */
	if (forward && getenv("STEPTIME_FORWARD") &&
	    getenv("STEPTIME_FORWARD")[0] == '0')
		fn = NULL;
	else
		fn = dlsym(handle, n->name);
	if (fn)
		__atomic_store_n(&n->fn, fn, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&n->retry_ns, now + 1000000000ull,
				 __ATOMIC_RELAXED);
	return fn;
}
