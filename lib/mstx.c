// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Ranges by id: steptime_range__*() and CANN's mstx API (ms_tools_ext.h,
 * the names and signatures torch_npu and CANN's samples call;
 * libms_tools_ext.so is a link to this library).
 *
 * A range torch_npu opens for a step ("ProfilerStep#N" from
 * torch_npu.profiler.profile.step(), "step N" from its dynamic profiler)
 * is a step: its start and end are the step's START and END marks, on its
 * stream, so `profiler.step()` yields steps with nothing changed in the
 * app. Other ranges and marks are phases of the open step (lib/phase_write.c).
 *
 * When another mstx library is loaded after this one (LD_PRELOAD of
 * libsteptime in front of CANN's libms_tools_ext.so), every call is also
 * passed to it, with its own range ids and domain handles, so msprof keeps
 * working.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <steptime/steptime.h>
#include <mstx/ms_tools_ext.h>
#include "forward.h"
#include "phase_write.h"


#define SLOTS		STEPTIME_RANGES_MAX
#define DOMAIN_MAGIC	0x6d737478u	/* "mstx" */

struct range_slot {
	__u64 id;		/* 0: free */
	__u64 step;		/* a step's range: its index id */
	__u64 real_id;		/* the forwarded library's id */
	struct st_tx_range r;
};

struct mstxDomainRegistration_st {
	__u32 magic;
	char name[32];
	mstxDomainHandle_t real;
};

static struct {
	pthread_mutex_t lock;
	__u64 next_id;
	struct range_slot slot[SLOTS];
	int warned;
} ranges = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* "ProfilerStep#N" or "step N" (N decimal): step N + 1, else 0. */
static __u64 step_of_name(const char *name)
{
	const char *p;
	char *end;
	unsigned long long n;

	if (!strncmp(name, "ProfilerStep#", 13))
		p = name + 13;
	else if (!strncmp(name, "step ", 5))
		p = name + 5;
	else
		return 0;
	if (*p < '0' || *p > '9')
		return 0;
	errno = 0;
	n = strtoull(p, &end, 10);
	if (*end || errno || n == ~0ull)
		return 0;
	return n + 1;
}

static __u64 range_start(const char *name, const char *domain, void *stream,
			 __u64 real_id)
{
	struct range_slot *s = NULL;
	__u64 id, step;
	unsigned int i;

	if (!name || !*name) {
		errno = EINVAL;
		return 0;
	}
	pthread_mutex_lock(&ranges.lock);
	id = ++ranges.next_id;
	for (i = 0; i < SLOTS; i++) {
		s = &ranges.slot[(id + i) % SLOTS];
		if (!s->id)
			break;
	}
	if (i == SLOTS) {
		pthread_mutex_unlock(&ranges.lock);
		if (!__atomic_exchange_n(&ranges.warned, 1, __ATOMIC_RELAXED))
			st_warn("steptime: more than %d ranges open: not "
				"recorded\n", SLOTS);
		errno = ENOSPC;
		return 0;
	}
	s->id = id;
	s->real_id = real_id;
	s->step = step = step_of_name(name);
	snprintf(s->r.msg, sizeof(s->r.msg), "%s", name);
	snprintf(s->r.domain, sizeof(s->r.domain), "%s", domain);
	s->r.no_phase = step != 0;
	st_tx_begin(&s->r, stream);
	pthread_mutex_unlock(&ranges.lock);
	if (step)
		st_mark(step, STEPTIME_TAG_START, stream);
	return id;
}

/* End range @id; *real_id gets the forwarded id. Return: 0 or -ENOENT. */
static int range_end(__u64 id, __u64 *real_id)
{
	struct range_slot *s = &ranges.slot[id % SLOTS], copy;

	pthread_mutex_lock(&ranges.lock);
	if (!id || s->id != id) {
		pthread_mutex_unlock(&ranges.lock);
		return -ENOENT;
	}
	copy = *s;
	s->id = 0;
	pthread_mutex_unlock(&ranges.lock);
	*real_id = copy.real_id;
	st_tx_end(&copy.r, ST_TX_START_END);
	if (copy.step)
		st_mark(copy.step, STEPTIME_TAG_END, copy.r.stream);
	return 0;
}

__u64 steptime_range__start(const char *name, void *stream)
{
	return range_start(name, "default", stream, 0);
}

int steptime_range__end(__u64 range_id)
{
	__u64 real;

	return range_end(range_id, &real);
}

int steptime__mark_msg(const char *name, void *stream)
{
	if (!name || !*name)
		return -EINVAL;
	st_tx_mark(name, "default", stream, ST_TX_MARKER);
	return 0;
}

/* ---- mstx ------------------------------------------------------------- */

ST_FORWARD_DECL(mstxMarkA, void, (const char *, void *));
ST_FORWARD_DECL(mstxRangeStartA, mstxRangeId, (const char *, void *));
ST_FORWARD_DECL(mstxRangeEnd, void, (mstxRangeId));
ST_FORWARD_DECL(mstxDomainCreateA, mstxDomainHandle_t, (const char *));
ST_FORWARD_DECL(mstxDomainDestroy, void, (mstxDomainHandle_t));
ST_FORWARD_DECL(mstxDomainMarkA, void, (mstxDomainHandle_t, const char *,
					void *));
ST_FORWARD_DECL(mstxDomainRangeStartA, mstxRangeId,
		(mstxDomainHandle_t, const char *, void *));
ST_FORWARD_DECL(mstxDomainRangeEnd, void, (mstxDomainHandle_t, mstxRangeId));
ST_FORWARD_DECL(mstxMemHeapRegister, mstxMemHeapHandle_t, (mstxDomainHandle_t,
		const void *));
ST_FORWARD_DECL(mstxMemHeapUnregister, void, (mstxDomainHandle_t,
		mstxMemHeapHandle_t));
ST_FORWARD_DECL(mstxMemRegionsRegister, void, (mstxDomainHandle_t,
					       const void *));
ST_FORWARD_DECL(mstxMemRegionsUnregister, void, (mstxDomainHandle_t,
						 const void *));


MSTX_API void mstxMarkA(const char *message, void *stream)
{
	if (message && *message)
		st_tx_mark(message, "default", stream, ST_TX_MARKER);
	if (ST_FORWARD(mstxMarkA))
		ST_FORWARD(mstxMarkA)(message, stream);
}

MSTX_API mstxRangeId mstxRangeStartA(const char *message, void *stream)
{
	__u64 real = 0;

	if (ST_FORWARD(mstxRangeStartA))
		real = ST_FORWARD(mstxRangeStartA)(message, stream);
	return range_start(message, "default", stream, real);
}

MSTX_API void mstxRangeEnd(mstxRangeId id)
{
	__u64 real;

	if (range_end(id, &real))
		return;		/* MSTX_INVALID_ID or not ours: as CANN, ignored */
	if (real && ST_FORWARD(mstxRangeEnd))
		ST_FORWARD(mstxRangeEnd)(real);
}

static struct mstxDomainRegistration_st *domain_of(mstxDomainHandle_t h)
{
	return h && h->magic == DOMAIN_MAGIC ? h : NULL;
}

MSTX_API mstxDomainHandle_t mstxDomainCreateA(const char *name)
{
	struct mstxDomainRegistration_st *d;

	if (!name || !*name)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->magic = DOMAIN_MAGIC;
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (ST_FORWARD(mstxDomainCreateA))
		d->real = ST_FORWARD(mstxDomainCreateA)(name);
	return d;
}

MSTX_API void mstxDomainDestroy(mstxDomainHandle_t handle)
{
	struct mstxDomainRegistration_st *d = domain_of(handle);

	if (!d)
		return;
	if (d->real && ST_FORWARD(mstxDomainDestroy))
		ST_FORWARD(mstxDomainDestroy)(d->real);
	d->magic = 0;
	free(d);
}

MSTX_API void mstxDomainMarkA(mstxDomainHandle_t handle, const char *message,
			      void *stream)
{
	struct mstxDomainRegistration_st *d = domain_of(handle);

	if (!d)
		return;
	if (message && *message)
		st_tx_mark(message, d->name, stream, ST_TX_MARKER);
	if (d->real && ST_FORWARD(mstxDomainMarkA))
		ST_FORWARD(mstxDomainMarkA)(d->real, message, stream);
}

MSTX_API mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t handle,
					   const char *message, void *stream)
{
	struct mstxDomainRegistration_st *d = domain_of(handle);
	__u64 real = 0;

	if (!d)
		return 0;
	if (d->real && ST_FORWARD(mstxDomainRangeStartA))
		real = ST_FORWARD(mstxDomainRangeStartA)(d->real, message, stream);
	return range_start(message, d->name, stream, real);
}

MSTX_API void mstxDomainRangeEnd(mstxDomainHandle_t handle, mstxRangeId id)
{
	struct mstxDomainRegistration_st *d = domain_of(handle);
	__u64 real;

	if (!d || range_end(id, &real))
		return;
	if (real && d->real && ST_FORWARD(mstxDomainRangeEnd))
		ST_FORWARD(mstxDomainRangeEnd)(d->real, real);
}

/* Memory-pool annotations: steptime has no use for them; passed on. */
MSTX_API mstxMemHeapHandle_t mstxMemHeapRegister(mstxDomainHandle_t handle,
					      const void *desc)
{
	struct mstxDomainRegistration_st *d = domain_of(handle);

	if (d && d->real && ST_FORWARD(mstxMemHeapRegister))
		return ST_FORWARD(mstxMemHeapRegister)(d->real, desc);
	return NULL;
}

MSTX_API void mstxMemHeapUnregister(mstxDomainHandle_t handle,
				    mstxMemHeapHandle_t heap)
{
	struct mstxDomainRegistration_st *d = domain_of(handle);

	if (d && d->real && heap && ST_FORWARD(mstxMemHeapUnregister))
		ST_FORWARD(mstxMemHeapUnregister)(d->real, heap);
}

MSTX_API void mstxMemRegionsRegister(mstxDomainHandle_t handle, const void *desc)
{
	struct mstxDomainRegistration_st *d = domain_of(handle);

	if (d && d->real && ST_FORWARD(mstxMemRegionsRegister))
		ST_FORWARD(mstxMemRegionsRegister)(d->real, desc);
}

MSTX_API void mstxMemRegionsUnregister(mstxDomainHandle_t handle,
				       const void *desc)
{
	struct mstxDomainRegistration_st *d = domain_of(handle);

	if (d && d->real && ST_FORWARD(mstxMemRegionsUnregister))
		ST_FORWARD(mstxMemRegionsUnregister)(d->real, desc);
}
