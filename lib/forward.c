// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
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

/* CANN's runtime libraries, by the sonames CANN installs them under. */
static const char *const cann_sonames[] = {
	"libascendcl.so",
	"libruntime.so",
};

/* Fill the missing @fns from @h. Return: how many it gave. */
static int syms_from(void *h, const char *const *names, void **fns, int n)
{
	int i, got = 0;

	for (i = 0; i < n; i++) {
		if (fns[i])
			continue;
		fns[i] = dlsym(h, names[i]);
		got += fns[i] != NULL;
	}
	return got;
}

/* Look in the object at @path, if it is loaded; keep it if it gave any. */
static int syms_from_loaded(const char *path, const char *const *names,
			    void **fns, int n)
{
	void *h = dlopen(path, RTLD_NOLOAD | RTLD_LAZY);
	int got;

	if (!h)
		return 0;
	got = syms_from(h, names, fns, n);
	if (!got)
		dlclose(h);
	return got;
}

struct objs {
	char **path;
	size_t n, cap;
};

/* dl_iterate_phdr() holds the loader's lock: only collect names here. */
static int obj_collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct objs *o = arg;
	char **p;

	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 64;
		p = realloc(o->path, o->cap * sizeof(*p));
		if (!p)
			return 1;
		o->path = p;
	}
	o->path[o->n] = strdup(info->dlpi_name);
	if (o->path[o->n])
		o->n++;
	return 0;
}

static bool syms_all(void **fns, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!fns[i])
			return false;
	return true;
}

void st_cann_syms(const char *const *names, void **fns, int n)
{
	struct objs o = {};
	size_t i;

	memset(fns, 0, n * sizeof(*fns));
	syms_from(RTLD_DEFAULT, names, fns, n);
	for (i = 0; i < sizeof(cann_sonames) / sizeof(cann_sonames[0]); i++)
		if (!syms_all(fns, n))
			syms_from_loaded(cann_sonames[i], names, fns, n);
	if (syms_all(fns, n))
		return;
	dl_iterate_phdr(obj_collect, &o);
	for (i = 0; i < o.n; i++) {
		if (!syms_all(fns, n))
			syms_from_loaded(o.path[i], names, fns, n);
		free(o.path[i]);
	}
	free(o.path);
}
