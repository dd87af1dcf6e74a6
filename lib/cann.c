// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CANN's runtime calls, found at run time (lib/cann.h).
 *
 * One policy: look again, until rtProfilerTraceEx is found, each time the
 * dynamic loader has loaded objects since the last try (dlpi_adds); once
 * found, the table is final and read without a lock. A runtime loaded
 * after libsteptime (LD_PRELOAD, `import steptime` ahead of torch_npu, a
 * runtime dlopen()ed RTLD_LOCAL later) is found at the first lookup after
 * its load; one loaded before, at the first lookup (the constructor).
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cann.h"

#ifndef offsetofend
#define offsetofend(TYPE, FIELD) \
	(offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
#endif

struct st_cann st_cann;

static struct {
	pthread_mutex_t lock;
	unsigned long long adds; /* loader's load count at the last try */
} look = { .lock = PTHREAD_MUTEX_INITIALIZER };

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

/*
 * The calls @names[0 .. @n - 1] into @fns (NULL: missing), however the
 * runtime was loaded: the global scope first; then, for a runtime loaded
 * RTLD_LOCAL (Python's ctypes.CDLL, extension modules), its libraries by
 * soname (libascendcl.so: aclrt*; libruntime.so: rt*) and every other
 * loaded object, each opened with RTLD_NOLOAD (never loading anything). A
 * library that gave a call is kept open: its calls stay valid. Costs a
 * walk of the loaded objects.
 */
static void cann_syms(const char *const *names, void **fns, int n)
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

static void cann_fill(void)
{
	static const char *const names[] = {
		"rtProfilerTraceEx", "rtGetStreamId",
		"aclrtCreateEventWithFlag", "aclrtRecordEvent",
		"aclrtQueryEventStatus", "aclrtSynchronizeEvent",
		"aclrtEventElapsedTime", "aclrtEventGetTimestamp",
		"aclrtDestroyEvent",
		"npu_stream_is_valid", "npu_stream_id", "npu_stream_mark_step",
		"npu_stream_dev", "npu_event_create", "npu_event_record",
		"npu_event_query", "npu_event_timestamp", "npu_event_destroy",
	};
	struct st_cann *c = &st_cann;
	struct st_npu_hal *h = &c->npu;
	void *fn[18];

	_Static_assert(sizeof(names) / sizeof(names[0]) == 18, "names");
	cann_syms(names, fn, 18);
	c->trace_ex = fn[0];
	c->stream_id = fn[1];
	c->ev_create = fn[2];
	c->ev_record = fn[3];
	c->ev_query = fn[4];
	c->ev_sync = fn[5];
	c->ev_elapsed = fn[6];
	c->ev_ts = fn[7];
	c->ev_destroy = fn[8];
	c->mark_events = c->ev_create && c->ev_record && c->ev_query &&
			 c->ev_ts && c->ev_destroy;
	c->range_events = c->ev_create && c->ev_record && c->ev_query &&
			  c->ev_sync && c->ev_elapsed && c->ev_destroy;
	h->stream_id = fn[10];
	h->stream_mark_step = fn[11];
	h->stream_dev = fn[12];
	h->event_create = fn[13];
	h->event_record = fn[14];
	h->event_query = fn[15];
	h->event_timestamp = fn[16];
	h->event_destroy = fn[17];
	c->npu_events = h->stream_dev && h->event_create &&
			h->event_record && h->event_query &&
			h->event_timestamp && h->event_destroy;
	/* Last: its being set says the rest is. */
	__atomic_store_n(&h->stream_is_valid, fn[9], __ATOMIC_RELEASE);
}

static int adds_get(struct dl_phdr_info *info, size_t size, void *arg)
{
	*(unsigned long long *)arg =
		size >= offsetofend(struct dl_phdr_info, dlpi_adds) ?
		info->dlpi_adds : 0;
	return 1;
}

/* How many objects the dynamic loader has loaded so far. */
static unsigned long long loads_count(void)
{
	unsigned long long adds = 0;

	dl_iterate_phdr(adds_get, &adds);
	return adds;
}

void st_cann_lookup(void)
{
	unsigned long long adds;

	if (__atomic_load_n(&st_cann.found, __ATOMIC_ACQUIRE))
		return;
	/* Not found: look again only once something new was loaded. */
	adds = loads_count();
	if (adds && adds == __atomic_load_n(&look.adds, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&look.lock);
	if (!st_cann.found && (!adds || adds != look.adds)) {
		cann_fill();
		if (st_cann.trace_ex)
			__atomic_store_n(&st_cann.found, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&look.adds, adds, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&look.lock);
}
