// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libascendcl.so for npusim: CANN's ACL runtime calls (include/acl/acl_rt.h)
 * on the npu HAL (include/npusim/hal.h), which drives the device the way
 * CANN's runtime drives a 910B. See acl_rt.h for the contracts.
 *
 * State: a table of devices (opened once per process, counted by
 * aclrtSetDevice/aclrtResetDevice) and the calling thread's current device.
 * Streams and events are registered: a pointer that is not a live object is
 * rejected without being dereferenced.
 *
 * As CANN's libascendcl.so sits on its libruntime.so, a device's tasks go
 * through npusim's runtime (rt_sim.h: libruntime.so and the chip's
 * libruntime_v100.so or _v200.so), which calls the driver's library.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl_rt.h"
#include "acl/acl_npusim.h"
#include "acl/acl_prof_config.h"
#include <npusim/hal.h>
#include "rt_sim.h"

#define ACL_MAX_DEVICES		64
#define ACL_MAX_LAUNCH		1024

struct acl_device;

struct acl_stream {
	struct acl_stream *next;	/* the device's streams */
	struct acl_device *d;
	struct npu_stream *s;
};

struct acl_device {
	int id;
	unsigned int refs;
	struct npu_dev *dev;
	struct acl_stream *streams;
	struct acl_stream *default_stream;
};

struct acl_event {
	struct acl_event *next;		/* registry */
	struct acl_device *d;
	struct npu_event *ev;
	__u32 flags;
	bool recorded;
};

static struct {
	pthread_mutex_t lock;
	bool inited;
	struct acl_device *devs[ACL_MAX_DEVICES];
	struct acl_event *events;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

static __thread int cur_dev = -1;

/* ---------------------------------------------------------------------- */

static aclError from_errno(int err)
{
	switch (err) {
	case 0:
		return ACL_SUCCESS;
	case -ENOMEM:
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	case -ETIMEDOUT:
		return ACL_ERROR_RT_STREAM_SYNC_TIMEOUT;
	case -EINVAL:
		return ACL_ERROR_RT_PARAM_INVALID;
	default:
		return ACL_ERROR_RT_DRV_INTERNAL_ERROR;
	}
}

static struct acl_device *device_get_locked(int id)
{
	return id >= 0 && id < ACL_MAX_DEVICES ? g.devs[id] : NULL;
}

/* The calling thread's device; caller holds g.lock. */
static struct acl_device *current_locked(void)
{
	return device_get_locked(cur_dev);
}

static struct acl_stream *stream_find_locked(const void *p)
{
	struct acl_stream *s;
	int i;

	for (i = 0; i < ACL_MAX_DEVICES; i++) {
		if (!g.devs[i])
			continue;
		for (s = g.devs[i]->streams; s; s = s->next)
			if ((const void *)s == p)
				return s;
	}
	return NULL;
}

/*
 * @p as a stream (NULL: the current device's default stream).
 * Caller holds g.lock. Return: ACL_SUCCESS or the error for the caller.
 */
static aclError stream_resolve_locked(void *p, struct acl_stream **out)
{
	struct acl_device *d;

	if (!p) {
		d = current_locked();
		if (!d)
			return ACL_ERROR_RT_CONTEXT_NULL;
		*out = d->default_stream;
		return ACL_SUCCESS;
	}
	*out = stream_find_locked(p);
	return *out ? ACL_SUCCESS : ACL_ERROR_RT_PARAM_INVALID;
}

static struct acl_event *event_find_locked(const void *p)
{
	struct acl_event *e;

	for (e = g.events; e; e = e->next)
		if ((const void *)e == p)
			return e;
	return NULL;
}

/*
 * Streams go through the driver's library (libascend_hal.so, under the
 * npu HAL), which asks for a mapped SQ for every stream, as CANN's does;
 * the device picks the mode (npusim: by the chip, or its config.uio_mode
 * while sq_mode is NPUSIM_SQ_MODE_CONFIG, whose default is kio).
 */
static aclError stream_new_locked(struct acl_device *d,
				  struct acl_stream **out)
{
	struct npu_stream_opts so = { .sz = sizeof(so), .mapped = true };
	struct acl_stream *as = calloc(1, sizeof(*as));
	aclError ret;

	if (!as)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	as->s = npu_stream_create(d->dev, &so);
	if (!as->s) {
		ret = from_errno(-errno);
		free(as);
		return ret;
	}
	as->d = d;
	as->next = d->streams;
	d->streams = as;
	*out = as;
	return ACL_SUCCESS;
}

static void stream_free_locked(struct acl_stream *as)
{
	struct acl_stream **pp;

	for (pp = &as->d->streams; *pp; pp = &(*pp)->next) {
		if (*pp == as) {
			*pp = as->next;
			break;
		}
	}
	npu_stream_destroy(as->s);
	free(as);
}

static void device_release_locked(struct acl_device *d)
{
	struct acl_event *e;

	/* Events of the device stay valid handles that cannot be recorded. */
	for (e = g.events; e; e = e->next) {
		if (e->d == d) {
			npu_event_destroy(e->ev);
			e->ev = NULL;
			e->d = NULL;
		}
	}
	while (d->streams)
		stream_free_locked(d->streams);
	npu_dev_close(d->dev);
	g.devs[d->id] = NULL;
	free(d);
}

/*
 * The device's sends, SQ head reads and synchronizes through the runtime,
 * when it has a task library for the chip; a chip it does not know keeps
 * the npu HAL's own calls of the driver's library.
 */
static void device_use_runtime(struct acl_device *d)
{
	struct npu_task_ops ops = {
		.sz = sizeof(ops), .send = rtSimTaskSend,
		.sq_head = rtSimSqHead, .sq_wait = rtSimSqWait,
	};

	if (rtSimDeviceInit((uint32_t)d->id, &ops.max_sqes) == 0)
		npu_dev_set_task_ops(d->dev, &ops);
}

/* ---------------------------------------------------------------------- */

aclError aclInit(const char *configPath)
{
	aclError ret = ACL_SUCCESS;

	if (configPath && *configPath && access(configPath, R_OK))
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&g.lock);
	if (g.inited)
		ret = ACL_ERROR_REPEAT_INITIALIZE;
	g.inited = true;
	pthread_mutex_unlock(&g.lock);
	return ret;
}

aclError aclFinalize(void)
{
	int i;

	pthread_mutex_lock(&g.lock);
	if (!g.inited) {
		pthread_mutex_unlock(&g.lock);
		return ACL_ERROR_UNINITIALIZE;
	}
	for (i = 0; i < ACL_MAX_DEVICES; i++)
		if (g.devs[i])
			device_release_locked(g.devs[i]);
	g.inited = false;
	pthread_mutex_unlock(&g.lock);
	return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId)
{
	struct npu_dev_opts o = { .sz = sizeof(o), .device_id = deviceId };
	struct acl_device *d;
	aclError ret = ACL_SUCCESS;

	if (deviceId < 0 || deviceId >= ACL_MAX_DEVICES)
		return ACL_ERROR_RT_INVALID_DEVICEID;
	pthread_mutex_lock(&g.lock);
	d = g.devs[deviceId];
	if (d) {
		d->refs++;
		goto out;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		ret = ACL_ERROR_RT_MEMORY_ALLOCATION;
		goto out_unlock;
	}
	d->id = deviceId;
	d->refs = 1;
	d->dev = npu_dev_open(&o);
	if (!d->dev) {
		ret = errno == ENOENT ? ACL_ERROR_RT_NO_DEVICE :
		      errno == ENODEV ? ACL_ERROR_RT_INVALID_DEVICEID :
		      from_errno(-errno);
		free(d);
		goto out_unlock;
	}
	g.devs[deviceId] = d;
	device_use_runtime(d);
	ret = stream_new_locked(d, &d->default_stream);
	if (ret) {
		device_release_locked(d);
		goto out_unlock;
	}
out:
	cur_dev = deviceId;
out_unlock:
	pthread_mutex_unlock(&g.lock);
	return ret;
}

static aclError reset_device(int32_t deviceId, bool force)
{
	struct acl_device *d;

	pthread_mutex_lock(&g.lock);
	d = device_get_locked(deviceId);
	if (!d) {
		pthread_mutex_unlock(&g.lock);
		return ACL_ERROR_RT_INVALID_DEVICEID;
	}
	if (force || !--d->refs)
		device_release_locked(d);
	if (cur_dev == deviceId && !device_get_locked(deviceId))
		cur_dev = -1;
	pthread_mutex_unlock(&g.lock);
	return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId)
{
	return reset_device(deviceId, false);
}

aclError aclrtResetDeviceForce(int32_t deviceId)
{
	return reset_device(deviceId, true);
}

aclError aclrtGetDevice(int32_t *deviceId)
{
	aclError ret = ACL_SUCCESS;

	if (!deviceId)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&g.lock);
	if (current_locked())
		*deviceId = cur_dev;
	else
		ret = ACL_ERROR_RT_CONTEXT_NULL;
	pthread_mutex_unlock(&g.lock);
	return ret;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
	struct npu_dev_opts o = { .sz = sizeof(o) };
	struct npu_dev *d;
	uint32_t n;

	if (!count)
		return ACL_ERROR_INVALID_PARAM;
	for (n = 0; n < ACL_MAX_DEVICES; n++) {
		o.device_id = (int)n;
		d = npu_dev_open(&o);
		if (!d)
			break;
		npu_dev_close(d);
	}
	if (!n && errno == ENOENT)
		return ACL_ERROR_RT_NO_DEVICE;
	*count = n;
	return ACL_SUCCESS;
}

/* ---------------------------------------------------------------------- */

aclError aclrtCreateStream(aclrtStream *stream)
{
	struct acl_stream *as;
	struct acl_device *d;
	aclError ret;

	if (!stream)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&g.lock);
	d = current_locked();
	ret = d ? stream_new_locked(d, &as) : ACL_ERROR_RT_CONTEXT_NULL;
	if (!ret)
		*stream = as;
	pthread_mutex_unlock(&g.lock);
	return ret;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
	struct acl_stream *as;
	aclError ret = ACL_SUCCESS;

	if (!stream)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&g.lock);
	as = stream_find_locked(stream);
	if (!as || as == as->d->default_stream)
		ret = ACL_ERROR_RT_PARAM_INVALID;
	else
		stream_free_locked(as);
	pthread_mutex_unlock(&g.lock);
	return ret;
}

/*
 * Look @p up and hand its HAL stream out of the lock: a stream is only
 * freed by aclrtDestroyStream/ResetDevice/Finalize, and using a stream
 * while another thread destroys it is the caller's bug, as with CANN.
 */
static aclError stream_get(void *p, struct npu_stream **s)
{
	struct acl_stream *as;
	aclError ret;

	pthread_mutex_lock(&g.lock);
	ret = stream_resolve_locked(p, &as);
	if (!ret)
		*s = as->s;
	pthread_mutex_unlock(&g.lock);
	return ret;
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
	struct npu_stream *s;
	aclError ret;

	if (timeout < -1)
		return ACL_ERROR_INVALID_PARAM;
	ret = stream_get(stream, &s);
	if (ret)
		return ret;
	return from_errno(npu_stream_sync(s, timeout));
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
	return aclrtSynchronizeStreamWithTimeout(stream, -1);
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtEventRecordedStatus *status)
{
	struct npu_stream *s;
	aclError ret;
	int done;

	if (!status)
		return ACL_ERROR_INVALID_PARAM;
	ret = stream_get(stream, &s);
	if (ret)
		return ret;
	done = npu_stream_query(s);
	if (done < 0)
		return from_errno(done);
	*status = done ? ACL_EVENT_RECORDED_STATUS_COMPLETE :
			 ACL_EVENT_RECORDED_STATUS_NOT_READY;
	return ACL_SUCCESS;
}

aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId)
{
	struct npu_stream *s;
	aclError ret;

	if (!streamId)
		return ACL_ERROR_INVALID_PARAM;
	ret = stream_get(stream, &s);
	if (!ret)
		*streamId = npu_stream_id(s);
	return ret;
}

int32_t rtGetStreamId(void *stm, int32_t *streamId)
{
	return aclrtStreamGetId(stm, streamId);
}

int32_t rtProfilerTraceEx(uint64_t id, uint64_t modelId, uint16_t tagId,
			  void *stm)
{
	struct npu_stream *s;
	struct trs_sqe sqe;
	aclError ret;
	int err;

	ret = stream_get(stm, &s);
	if (ret)
		return ret;
	npu_sqe_step_mark(&sqe, 0, 0, id, tagId);
	sqe.place_holder.model_id = modelId;
	err = npu_stream_submit(s, &sqe, 1);
	return err < 0 ? from_errno(err) : ACL_SUCCESS;
}

aclError aclnpusimLaunchKernel(aclrtStream stream, uint32_t kind,
			       uint32_t count, uint32_t durationNs)
{
	struct npu_task_desc td = { .duration_ns = durationNs };
	struct trs_sqe *sqes;
	struct npu_stream *s;
	aclError ret;
	uint32_t i;
	int err;

	if ((kind != ACL_NPUSIM_KERNEL_AICORE && kind != ACL_NPUSIM_KERNEL_AICPU &&
	     kind != ACL_NPUSIM_KERNEL_SDMA) || !count || count > ACL_MAX_LAUNCH)
		return ACL_ERROR_INVALID_PARAM;
	ret = stream_get(stream, &s);
	if (ret)
		return ret;
	sqes = malloc(count * sizeof(*sqes));
	if (!sqes)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	td.type = (__u8)kind;
	for (i = 0; i < count; i++)
		npu_sqe_task(&sqes[i], &td);
	err = npu_stream_submit(s, sqes, count);
	free(sqes);
	return err < 0 ? from_errno(err) : ACL_SUCCESS;
}

aclError aclnpusimStreamGetSq(aclrtStream stream, uint32_t *devId,
			       uint32_t *tsId, uint32_t *sqId)
{
	struct npu_stream *s;
	struct npu_dev *dev;
	aclError ret;

	if (!devId || !tsId || !sqId)
		return ACL_ERROR_INVALID_PARAM;
	ret = stream_get(stream, &s);
	if (ret)
		return ret;
	dev = npu_stream_dev(s);
	*devId = (uint32_t)npu_dev_id(dev);
	*tsId = (uint32_t)npu_dev_ts_id(dev);
	*sqId = (uint32_t)npu_sqcq_sq_id(npu_stream_sqcq(s));
	return ACL_SUCCESS;
}

/* ---------------------------------------------------------------------- */

#define ACL_EVENT_KNOWN_FLAGS	(ACL_EVENT_SYNC | \
				 ACL_EVENT_CAPTURE_STREAM_PROGRESS | \
				 0x4u | ACL_EVENT_TIME_LINE | \
				 ACL_EVENT_DEVICE_USE_ONLY | \
				 ACL_EVENT_EXTERNAL | ACL_EVENT_IPC)

aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
{
	struct acl_event *e;
	struct acl_device *d;
	aclError ret = ACL_SUCCESS;

	if (!event || !flag || (flag & ~ACL_EVENT_KNOWN_FLAGS))
		return ACL_ERROR_INVALID_PARAM;
	e = calloc(1, sizeof(*e));
	if (!e)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	pthread_mutex_lock(&g.lock);
	d = current_locked();
	if (!d) {
		ret = ACL_ERROR_RT_CONTEXT_NULL;
		goto err;
	}
	e->ev = npu_event_create(d->dev, flag);
	if (!e->ev) {
		ret = from_errno(-errno);
		goto err;
	}
	e->d = d;
	e->flags = flag;
	e->next = g.events;
	g.events = e;
	*event = e;
	pthread_mutex_unlock(&g.lock);
	return ACL_SUCCESS;
err:
	pthread_mutex_unlock(&g.lock);
	free(e);
	return ret;
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
	return aclrtCreateEventWithFlag(event, NPU_EVENT_DEFAULT);
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
	struct acl_event *e, **pp;

	if (!event)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&g.lock);
	for (pp = &g.events; *pp; pp = &(*pp)->next)
		if (*pp == event)
			break;
	e = *pp;
	if (e)
		*pp = e->next;
	pthread_mutex_unlock(&g.lock);
	if (!e)
		return ACL_ERROR_RT_PARAM_INVALID;
	npu_event_destroy(e->ev);
	free(e);
	return ACL_SUCCESS;
}

/* As stream_get(), for events. */
static aclError event_get(void *p, struct acl_event **out)
{
	struct acl_event *e;

	if (!p)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&g.lock);
	e = event_find_locked(p);
	pthread_mutex_unlock(&g.lock);
	if (!e || !e->ev)
		return ACL_ERROR_RT_PARAM_INVALID;
	*out = e;
	return ACL_SUCCESS;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
	struct acl_stream *as;
	struct acl_event *e;
	aclError ret;
	int err;

	if (!event)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&g.lock);
	e = event_find_locked(event);
	if (!e || !e->ev) {
		ret = ACL_ERROR_RT_PARAM_INVALID;
		goto out;
	}
	if (stream) {
		ret = stream_resolve_locked(stream, &as);
	} else {
		as = e->d->default_stream;
		ret = ACL_SUCCESS;
	}
	if (ret)
		goto out;
	if (as->d != e->d) {
		ret = ACL_ERROR_RT_STREAM_CONTEXT;
		goto out;
	}
	err = npu_event_record(e->ev, as->s);
	ret = from_errno(err);
	if (!err)
		e->recorded = true;
out:
	pthread_mutex_unlock(&g.lock);
	return ret;
}

aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)
{
	struct acl_event *e;
	struct npu_event *fresh;
	aclError ret;

	(void)stream;
	ret = event_get(event, &e);
	if (ret)
		return ret;
	fresh = npu_event_create(e->d->dev, e->flags);
	if (!fresh)
		return from_errno(-errno);
	pthread_mutex_lock(&g.lock);
	npu_event_destroy(e->ev);
	e->ev = fresh;
	e->recorded = false;
	pthread_mutex_unlock(&g.lock);
	return ACL_SUCCESS;
}

/* 1 complete, 0 not yet, or the ACL error (as a negative number). */
static int event_done(struct acl_event *e)
{
	int r = npu_event_query(e->ev);

	if (r == -ENODATA)
		return 0;
	if (r == -EIO || r == -ECANCELED)
		return 1;	/* done, with no timestamp */
	return r < 0 ? -(int)from_errno(r) : r;
}

aclError aclrtQueryEventStatus(aclrtEvent event,
			       aclrtEventRecordedStatus *status)
{
	struct acl_event *e;
	aclError ret;
	int r;

	if (!status)
		return ACL_ERROR_INVALID_PARAM;
	ret = event_get(event, &e);
	if (ret)
		return ret;
	r = event_done(e);
	if (r < 0)
		return -r;
	*status = r ? ACL_EVENT_RECORDED_STATUS_COMPLETE :
		      ACL_EVENT_RECORDED_STATUS_NOT_READY;
	return ACL_SUCCESS;
}

aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status)
{
	struct acl_event *e;
	aclError ret;
	int r;

	if (!status)
		return ACL_ERROR_INVALID_PARAM;
	ret = event_get(event, &e);
	if (ret)
		return ret;
	r = e->recorded ? event_done(e) : 1;
	if (r < 0)
		return -r;
	*status = r ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
	return ACL_SUCCESS;
}

aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout)
{
	struct acl_event *e;
	aclError ret;
	int err;

	if (timeout < -1)
		return ACL_ERROR_INVALID_PARAM;
	ret = event_get(event, &e);
	if (ret)
		return ret;
	err = npu_event_sync(e->ev, timeout);
	if (err == -ETIMEDOUT)
		return ACL_ERROR_RT_EVENT_SYNC_TIMEOUT;
	if (err == -EIO || err == -ECANCELED)
		return ACL_SUCCESS;
	return from_errno(err);
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
	return aclrtSynchronizeEventWithTimeout(event, -1);
}

aclError aclnpusimEventGetCounter(aclrtEvent event, uint64_t *ticks,
				  uint64_t *freqHz)
{
	struct acl_event *e;
	aclError ret;
	__u64 t, hz;

	if (!ticks)
		return ACL_ERROR_INVALID_PARAM;
	ret = event_get(event, &e);
	if (ret)
		return ret;
	if (!e->recorded)
		return ACL_ERROR_RT_INTERNAL_ERROR;	/* "recorder null" */
	if (npu_event_timestamp(e->ev, &t))
		return ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID;
	if (freqHz) {
		if (npu_dev_counter_freq(e->d->dev, &hz))
			return ACL_ERROR_RT_DRV_INTERNAL_ERROR;
		*freqHz = hz;
	}
	*ticks = t;
	return ACL_SUCCESS;
}

/* Counter ticks to microseconds, truncated, as CANN converts them. */
static uint64_t ticks_to_us(uint64_t ticks, uint64_t hz)
{
	return (uint64_t)((unsigned __int128)ticks * 1000000u / hz);
}

aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp)
{
	uint64_t ticks, hz;
	aclError ret;

	if (!event || !timestamp)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclnpusimEventGetCounter(event, &ticks, &hz);
	if (!ret)
		*timestamp = ticks_to_us(ticks, hz);
	return ret;
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent,
			       aclrtEvent endEvent)
{
	uint64_t t0, t1, hz;
	aclError ret;

	if (!ms || !startEvent || !endEvent)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclnpusimEventGetCounter(startEvent, &t0, &hz);
	if (!ret)
		ret = aclnpusimEventGetCounter(endEvent, &t1, NULL);
	if (!ret)
		*ms = (float)((double)(int64_t)(t1 - t0) * 1e3 / (double)hz);
	return ret;
}

/* ---------------------------------------------------------------------- */

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	void *p;

	if (!devPtr || !size || (unsigned int)policy > ACL_MEM_MALLOC_NORMAL_ONLY_P2P)
		return ACL_ERROR_INVALID_PARAM;
	if (size > SIZE_MAX - 31 ||
	    posix_memalign(&p, 32, (size + 31) & ~(size_t)31))
		return ACL_ERROR_BAD_ALLOC;
	*devPtr = p;
	return ACL_SUCCESS;
}

aclError aclrtFree(void *devPtr)
{
	if (!devPtr)
		return ACL_ERROR_INVALID_PARAM;
	free(devPtr);
	return ACL_SUCCESS;
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
	return aclrtMalloc(hostPtr, size, ACL_MEM_MALLOC_NORMAL_ONLY);
}

aclError aclrtFreeHost(void *hostPtr)
{
	return aclrtFree(hostPtr);
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
		     aclrtMemcpyKind kind)
{
	if (!dst || !src || count > destMax ||
	    (unsigned int)kind > ACL_MEMCPY_DEFAULT)
		return ACL_ERROR_INVALID_PARAM;
	memmove(dst, src, count);
	return ACL_SUCCESS;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value,
		     size_t count)
{
	if (!devPtr || count > maxCount)
		return ACL_ERROR_INVALID_PARAM;
	memset(devPtr, value, count);
	return ACL_SUCCESS;
}

/* ---------------------------------------------------------------------- */

#define ACL_PROF_CONFIG_MAX_LEN	4096

aclError aclprofSetConfig(aclprofConfigType configType, const char *config,
			  size_t configLength)
{
	if (configType <= ACL_PROF_ARGS_MIN || configType >= ACL_PROF_ARGS_MAX ||
	    configType == 2 || !config || !configLength ||
	    configLength > ACL_PROF_CONFIG_MAX_LEN)
		return ACL_ERROR_INVALID_PARAM;
	return ACL_SUCCESS;
}
