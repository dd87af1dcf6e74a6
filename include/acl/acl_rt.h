/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ACL runtime calls of steptime's ACL runtime on npusim (libascendcl.so,
 * sim/runtime/), with CANN's names, signatures, flag values and error codes
 * (ABI facts, written here from the published API). What it covers is what
 * CANN's profiling samples and steptime's stream marks call: devices,
 * streams, timeline events, host-backed memory, plus a way to launch
 * simulated kernels (acl_npusim.h). Where the behaviour differs from CANN's
 * it is said below.
 *
 * Devices are npusim's (/dev/npusim_manager, or $NPU_HAL_DEVICE), numbered
 * as its OPEN numbers them. Streams and events are built and driven as
 * CANN's runtime drives a 910B (include/npusim/hal.h): a stream id from the
 * device, an SQ-CQ pair and a logic CQ per stream, step marks and kernels
 * without reports, synchronize by SQ head queries, timeline events whose
 * report carries the device counter.
 */
#ifndef _STEPTIME_ACL_RT_H
#define _STEPTIME_ACL_RT_H

#include <stddef.h>
#include <stdint.h>
#include "acl_base.h"
#include "error_codes/rt_error_codes.h"

#ifndef ACL_FUNC_VISIBILITY
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef void *aclrtEvent;
typedef void *aclrtContext;

/* aclrtCreateEventWithFlag() flags. */
#define ACL_EVENT_SYNC				0x00000001U
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS	0x00000002U
#define ACL_EVENT_TIME_LINE			0x00000008U
#define ACL_EVENT_DEVICE_USE_ONLY		0x00000010U
#define ACL_EVENT_EXTERNAL			0x00000020U
#define ACL_EVENT_IPC				0x00000040U

typedef enum aclrtEventStatus {
	ACL_EVENT_STATUS_COMPLETE = 0,
	ACL_EVENT_STATUS_NOT_READY = 1,
	ACL_EVENT_STATUS_RESERVED = 2,
} aclrtEventStatus;

typedef enum aclrtEventRecordedStatus {
	ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
	ACL_EVENT_RECORDED_STATUS_COMPLETE = 1,
} aclrtEventRecordedStatus;

typedef enum aclrtMemcpyKind {
	ACL_MEMCPY_HOST_TO_HOST,
	ACL_MEMCPY_HOST_TO_DEVICE,
	ACL_MEMCPY_DEVICE_TO_HOST,
	ACL_MEMCPY_DEVICE_TO_DEVICE,
	ACL_MEMCPY_DEFAULT,
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
	ACL_MEM_MALLOC_HUGE_FIRST,
	ACL_MEM_MALLOC_HUGE_ONLY,
	ACL_MEM_MALLOC_NORMAL_ONLY,
	ACL_MEM_MALLOC_HUGE_FIRST_P2P,
	ACL_MEM_MALLOC_HUGE_ONLY_P2P,
	ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
} aclrtMemMallocPolicy;

/**
 * aclInit() - initialise the runtime (once per process)
 * @configPath: a JSON configuration file, or NULL; npusim: only checked to
 *	be readable
 *
 * Return: ACL_SUCCESS; ACL_ERROR_REPEAT_INITIALIZE when already done;
 * ACL_ERROR_INVALID_PARAM for a configuration file that cannot be read.
 */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);

/**
 * aclFinalize() - release every device still set, and the runtime
 *
 * Return: ACL_SUCCESS; ACL_ERROR_UNINITIALIZE before aclInit().
 */
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

/**
 * aclrtSetDevice() - open device @deviceId (once per process, counted) and
 * make it the calling thread's current device
 *
 * The first set of a device creates its default stream (NULL stream).
 *
 * Return: ACL_SUCCESS; ACL_ERROR_RT_INVALID_DEVICEID for a device npusim
 * does not have; ACL_ERROR_RT_NO_DEVICE when npusim is absent.
 */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);

/**
 * aclrtResetDevice() - drop one aclrtSetDevice() reference of @deviceId;
 * the last one destroys the device's streams and closes it
 *
 * Return: ACL_SUCCESS; ACL_ERROR_RT_INVALID_DEVICEID for a device that is
 * not set.
 */
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);

/** aclrtResetDeviceForce() - as aclrtResetDevice(), whatever the count */
ACL_FUNC_VISIBILITY aclError aclrtResetDeviceForce(int32_t deviceId);

/**
 * aclrtGetDevice() - the calling thread's current device
 *
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for NULL;
 * ACL_ERROR_RT_CONTEXT_NULL when the thread has none.
 */
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId);

/** aclrtGetDeviceCount() - devices npusim has */
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);

/**
 * aclrtCreateStream() - a stream on the current device
 *
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for NULL;
 * ACL_ERROR_RT_CONTEXT_NULL with no current device;
 * ACL_ERROR_RT_DRV_INTERNAL_ERROR when the device refuses.
 */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);

/**
 * aclrtDestroyStream() - destroy a stream created by aclrtCreateStream()
 *
 * Waits for the tasks still queued, as CANN's runtime does (a recycle
 * task, then SQ head queries; at most 30 s). Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for NULL;
 * ACL_ERROR_RT_PARAM_INVALID for anything else that is not a live stream.
 */
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);

/**
 * aclrtSynchronizeStream() - wait until the stream's tasks completed
 * @stream: NULL: the current device's default stream
 *
 * Return: ACL_SUCCESS; ACL_ERROR_RT_PARAM_INVALID; ACL_ERROR_RT_CONTEXT_NULL;
 * ACL_ERROR_RT_DRV_INTERNAL_ERROR.
 */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);

/**
 * aclrtSynchronizeStreamWithTimeout() - as aclrtSynchronizeStream()
 * @timeout: ms; -1 forever
 *
 * Return: also ACL_ERROR_RT_STREAM_SYNC_TIMEOUT.
 */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(
	aclrtStream stream, int32_t timeout);

/**
 * aclrtStreamQuery() - ACL_EVENT_RECORDED_STATUS_COMPLETE when every task
 * of the stream completed (one SQ head query), else _NOT_READY
 */
ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream,
					      aclrtEventRecordedStatus *status);

/** aclrtStreamGetId() - the device's id of @stream (NULL: default stream) */
ACL_FUNC_VISIBILITY aclError aclrtStreamGetId(aclrtStream stream,
					      int32_t *streamId);

/**
 * aclrtCreateEvent() - an event of the current device with CANN's default
 * flags (sync, stream mark and timeline: its record is an EVENT_RECORD SQE
 * that asks for a report)
 */
ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event);

/**
 * aclrtCreateEventWithFlag() - an event with ACL_EVENT_* @flag
 *
 * ACL_EVENT_TIME_LINE: a record is a place-holder SQE with wr_cqe, and
 * its report gives the device counter when the stream reached it
 * (aclrtEventGetTimestamp()).
 *
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for NULL or unknown flags;
 * ACL_ERROR_RT_CONTEXT_NULL with no current device.
 */
ACL_FUNC_VISIBILITY aclError aclrtCreateEventWithFlag(aclrtEvent *event,
						      uint32_t flag);

/**
 * aclrtRecordEvent() - record @event on @stream (NULL: default stream of
 * the event's device)
 *
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for a NULL event;
 * ACL_ERROR_RT_PARAM_INVALID for a dead event or stream;
 * ACL_ERROR_RT_STREAM_CONTEXT for a stream of another device.
 */
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event,
					      aclrtStream stream);

/**
 * aclrtResetEvent() - forget the last record (npusim: nothing is
 * submitted)
 */
ACL_FUNC_VISIBILITY aclError aclrtResetEvent(aclrtEvent event,
					     aclrtStream stream);

/**
 * aclrtQueryEvent() - ACL_EVENT_STATUS_COMPLETE when the last record
 * completed or there was none, else ACL_EVENT_STATUS_NOT_READY
 */
ACL_FUNC_VISIBILITY aclError aclrtQueryEvent(aclrtEvent event,
					     aclrtEventStatus *status);

/**
 * aclrtQueryEventStatus() - ACL_EVENT_RECORDED_STATUS_COMPLETE once the
 * last record completed; _NOT_READY before, and when never recorded
 *
 * Does not wait: it takes the reports the device has written so far.
 */
ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(
	aclrtEvent event, aclrtEventRecordedStatus *status);

/** aclrtSynchronizeEvent() - wait for the last record to complete */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);

/**
 * aclrtSynchronizeEventWithTimeout() - as aclrtSynchronizeEvent()
 * @timeout: ms; -1 forever
 *
 * Return: also ACL_ERROR_RT_EVENT_SYNC_TIMEOUT.
 */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEventWithTimeout(
	aclrtEvent event, int32_t timeout);

/**
 * aclrtEventGetTimestamp() - when the stream reached the last record
 * @timestamp: out, in microseconds of the device's system counter, as
 *	CANN gives it (counter / (frequency / 10^6), truncated); the
 *	counter itself: aclnpusimEventGetCounter() (acl_npusim.h)
 *
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for NULL;
 * ACL_ERROR_RT_INTERNAL_ERROR when never recorded;
 * ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID before it completed, or for an
 * event without ACL_EVENT_TIME_LINE.
 */
ACL_FUNC_VISIBILITY aclError aclrtEventGetTimestamp(aclrtEvent event,
						    uint64_t *timestamp);

/**
 * aclrtEventElapsedTime() - device time between two completed records
 * @ms: out, (end - start) counter ticks in milliseconds
 *
 * Return: as aclrtEventGetTimestamp() for either event.
 */
ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float *ms,
						   aclrtEvent startEvent,
						   aclrtEvent endEvent);

/** aclrtDestroyEvent() - free an event; a pending record is forgotten */
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);

/**
 * aclrtMalloc() - "device" memory: npusim has none, so host memory,
 * 32-byte aligned, size rounded up to 32 as CANN rounds it
 *
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for NULL or size 0;
 * ACL_ERROR_BAD_ALLOC.
 */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size,
					 aclrtMemMallocPolicy policy);

/** aclrtFree() - free what aclrtMalloc() gave; NULL: ACL_ERROR_INVALID_PARAM */
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);

/** aclrtMallocHost() - host memory (as aclrtMalloc()) */
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);

/** aclrtFreeHost() - free what aclrtMallocHost() gave */
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);

/**
 * aclrtMemcpy() - copy @count bytes (synchronous)
 *
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for NULL pointers, @count
 * above @destMax or an unknown @kind.
 */
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax,
					 const void *src, size_t count,
					 aclrtMemcpyKind kind);

/** aclrtMemset() - set @count bytes; @count above @maxCount is invalid */
ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount,
					 int32_t value, size_t count);

/*
 * The two rt* calls of CANN's libruntime that profiling tools resolve by
 * name (steptime's stream marks among them). rtError_t is int32_t, 0 on
 * success.
 */

/**
 * rtProfilerTraceEx() - a step mark on @stm (NULL: default stream): the
 * place-holder SQE of task type PROFILER_TRACE_EX carrying {@id,
 * @modelId, @tagId}, without wr_cqe, as CANN submits it
 *
 * Return: 0, or ACL_ERROR_RT_* (as aclrtRecordEvent()).
 */
ACL_FUNC_VISIBILITY int32_t rtProfilerTraceEx(uint64_t id, uint64_t modelId,
					      uint16_t tagId, void *stm);

/** rtGetStreamId() - as aclrtStreamGetId() */
ACL_FUNC_VISIBILITY int32_t rtGetStreamId(void *stm, int32_t *streamId);

#ifdef __cplusplus
}
#endif

#endif /* _STEPTIME_ACL_RT_H */
