// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test shim (LD_PRELOAD): realloc() of 16 KiB or more fails with ENOMEM
 * while the file named by $FAIL_REALLOC_FLAG exists, so that a test can
 * make the exporter's output buffer fail to grow, then let it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

void *realloc(void *p, size_t n)
{
	static void *(*real)(void *, size_t);
	const char *flag = getenv("FAIL_REALLOC_FLAG");

	if (!real)
		real = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	if (flag && n >= 16384 && !access(flag, F_OK)) {
		errno = ENOMEM;
		return NULL;
	}
	return real(p, n);
}
