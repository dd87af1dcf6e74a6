/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CANN-compatible profiling step API, implemented by libsteptime.
 *
 * A CANN program that marks training steps with aclprofGetStepTimestamp()
 * builds unchanged against this header and libsteptime
 * (`pkg-config --cflags --libs steptime`). Names, types, enum and flag
 * values and error codes are CANN's; the behaviour differs where noted.
 *
 * Session and marks (steptime's choice, the same as CANN's): a mark is
 * reported only between aclprofStart() and aclprofStop(). Outside a started
 * session aclprofGetStepTimestamp() still checks and sets the object's flags
 * and returns ACL_ERROR_GE_FAILURE, as CANN does; it writes no mark. Use the
 * native steptime_step API (<steptime/steptime.h>) for always-on marks that
 * need no session. Inside a session a mark also fails with
 * ACL_ERROR_GE_FAILURE when steptime is not loaded or its map is not
 * accessible (the reason is printed once on stderr).
 *
 * aclprofStop() writes this process's steps of the session under the
 * aclprofInit() path: steptime_step_trace_<pid>_<n>.csv (msprof step_trace
 * columns) and steptime_steps_<pid>_<n>.json (the keys of
 * `steptime stat -o json`).
 */
#ifndef _STEPTIME_ACL_PROF_H
#define _STEPTIME_ACL_PROF_H

#include "acl_base.h"

#ifndef MSVP_PROF_API
#define MSVP_PROF_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Data types of aclprofCreateConfig()'s dataTypeConfig. */
#define ACL_PROF_ACL_API		0x0001ULL
#define ACL_PROF_TASK_TIME		0x0002ULL
#define ACL_PROF_AICORE_METRICS		0x0004ULL
#define ACL_PROF_TRAINING_TRACE		0x0040ULL
#define ACL_PROF_MSPROFTX		0x0080ULL
#define ACL_PROF_RUNTIME_API		0x0100ULL

typedef enum {
	ACL_AICORE_ARITHMETIC_UTILIZATION = 0,
	ACL_AICORE_NONE = 0xFF,
} aclprofAicoreMetrics;

typedef enum {
	ACL_STEP_START = 0,	/* step start */
	ACL_STEP_END = 1,	/* step end; any other value acts as END */
} aclprofStepTag;

typedef struct aclprofConfig aclprofConfig;
typedef struct aclprofAicoreEvents aclprofAicoreEvents;

/*
 * Opaque to applications. The object behind it is laid out as
 * { bool startFlag; bool endFlag; uint64_t indexId; } (16 bytes, indexId at
 * offset 8) because frameworks (MindSpore) cast it and overwrite indexId:
 * a mark uses the indexId value current at the time of the mark.
 */
typedef struct aclprofStepInfo aclprofStepInfo;
typedef aclprofStepInfo *aclprofStepInfoPtr;

/**
 * aclprofInit() - start a profiling session's life, results under @path
 * @profilerResultPath: directory for the results (created if missing)
 * @length: strlen(@profilerResultPath), 1 .. 4095
 *
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for a NULL or empty path, a
 * length that does not match, or a directory that cannot be created or
 * written; ACL_ERROR_REPEAT_INITIALIZE when already initialised.
 */
MSVP_PROF_API aclError aclprofInit(const char *profilerResultPath,
				   size_t length);

/**
 * aclprofFinalize() - end what aclprofInit() began
 *
 * A session still started is stopped first (its results are written).
 *
 * Return: ACL_SUCCESS; ACL_ERROR_UNINITIALIZE without aclprofInit().
 */
MSVP_PROF_API aclError aclprofFinalize(void);

/**
 * aclprofCreateConfig() - describe what to collect
 * @deviceIdList: @deviceNums device ids (may be NULL when @deviceNums is 0)
 * @deviceNums: number of devices, at most 64; 0 only with ACL_PROF_MSPROFTX
 * @aicoreMetrics: recorded, not used by steptime
 * @aicoreEvents: must be NULL (as in CANN)
 * @dataTypeConfig: ACL_PROF_* flags, recorded
 *
 * Return: a config, or NULL for invalid arguments (errno EINVAL) or
 * allocation failure (errno ENOMEM).
 */
MSVP_PROF_API aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList,
		uint32_t deviceNums, aclprofAicoreMetrics aicoreMetrics,
		const aclprofAicoreEvents *aicoreEvents,
		uint64_t dataTypeConfig);

/**
 * aclprofDestroyConfig() - free a config made by aclprofCreateConfig()
 *
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for NULL, a pointer that is
 * not a live config, or the config of a session still started.
 */
MSVP_PROF_API aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig);

/**
 * aclprofStart() - start collecting: marks are reported from now on
 *
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for NULL or a pointer that is
 * not a live config; ACL_ERROR_UNINITIALIZE without aclprofInit();
 * ACL_ERROR_PROF_ALREADY_RUN when a session is already started.
 */
MSVP_PROF_API aclError aclprofStart(const aclprofConfig *profilerConfig);

/**
 * aclprofStop() - stop collecting and write the session's steps
 *
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for NULL, a pointer that is
 * not a live config, or a config other than the started one;
 * ACL_ERROR_UNINITIALIZE without aclprofInit(); ACL_ERROR_PROF_NOT_RUN
 * without aclprofStart(); ACL_ERROR_PROFILING_FAILURE when the results
 * could not be written (the session is stopped anyway).
 */
MSVP_PROF_API aclError aclprofStop(const aclprofConfig *profilerConfig);

/**
 * aclprofCreateStepInfo() - a new step object
 *
 * Both flags clear; indexId from a process-wide counter starting at 1,
 * unique per object (START and END of the object share it).
 *
 * Return: the object, or NULL when allocation fails.
 */
MSVP_PROF_API aclprofStepInfo *aclprofCreateStepInfo(void);

/**
 * aclprofGetStepTimestamp() - mark the start or the end of a step
 * @stepInfo: from aclprofCreateStepInfo()
 * @tag: ACL_STEP_START, or END (any other value)
 * @stream: the stream the mark is ordered on; NULL: the default stream
 *
 * Checks in CANN's order: NULL @stepInfo, then START with startFlag set,
 * then END with endFlag set; then sets the flag; then reports the mark.
 *
 * A NULL @stream is the current context's default stream, as in CANN:
 * where an ACL runtime is loaded (CANN's, or steptime's libascendcl.so on
 * npusim) the mark goes on that stream like any other and the call fails
 * as CANN's does when the runtime refuses it (no current context: no
 * aclrtSetDevice). Where none is loaded (host-only use) there is no
 * default stream: the mark is a host mark only (no stream id, no device
 * time) and the call succeeds.
 *
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for NULL, a pointer that is
 * not a live step object, or a tag already marked on this object;
 * ACL_ERROR_GE_FAILURE when the mark could not be reported (no started
 * session, steptime not loaded, no permission; the flag stays set).
 */
MSVP_PROF_API aclError aclprofGetStepTimestamp(aclprofStepInfo *stepInfo,
		aclprofStepTag tag, aclrtStream stream);

/**
 * aclprofDestroyStepInfo() - free a step object
 *
 * NULL is logged. A second destroy, or a pointer that is not a live step
 * object, is reported on stderr and ignored (CANN would double free).
 */
MSVP_PROF_API void aclprofDestroyStepInfo(aclprofStepInfo *stepinfo);

/*
 * msproftx: marks and ranges with messages (CANN's names, codes and
 * semantics). Valid from an aclprofStart() whose config has
 * ACL_PROF_MSPROFTX until aclprofFinalize(); before that CreateStamp
 * returns NULL and the others fail with -1 (CANN's PROFILING_FAILED).
 * A range or a mark is a phase of the step open in the process
 * (steptime_phases__get()); aclprofStop() writes the session's records
 * to steptime_msprof_tx_<pid>_<n>.csv with msprof's msprof_tx columns.
 */

/**
 * aclprofCreateStamp() - a stamp from the pool of 100
 * Return: the stamp; NULL before aclprofStart (with ACL_PROF_MSPROFTX) or
 * when all 100 are in use.
 */
MSVP_PROF_API void *aclprofCreateStamp(void);

/** aclprofDestroyStamp() - return @stamp to the pool (a range it has open is dropped) */
MSVP_PROF_API void aclprofDestroyStamp(void *stamp);

/**
 * aclprofSetStampTraceMessage() - the stamp's message (its phase name)
 * @msgLen: bytes of @msg, less than 128
 * Return: ACL_SUCCESS; -1 for a stamp that is not live, NULL @msg or
 * @msgLen >= 128 (the message is unchanged).
 */
MSVP_PROF_API aclError aclprofSetStampTraceMessage(void *stamp,
						   const char *msg,
						   uint32_t msgLen);

/** aclprofMark() - an instant with the stamp's message. Return: 0 or -1. */
MSVP_PROF_API aclError aclprofMark(void *stamp);

/**
 * aclprofMarkEx() - an instant with a message, on @stream
 *
 * Unlike aclprofGetStepTimestamp(), a NULL @stream is refused, as CANN's
 * msproftx refuses it (before anything else, not taken as the default
 * stream).
 *
 * Return: ACL_SUCCESS; -1 before aclprofStart, for NULL @msg or @stream,
 * @msgLen outside 1 .. 155 or not strlen(@msg).
 */
MSVP_PROF_API aclError aclprofMarkEx(const char *msg, size_t msgLen,
				     aclrtStream stream);

/**
 * aclprofPush() - open a range on the process-wide stack
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for NULL; -1 before
 * aclprofStart or for a stamp that is not live.
 */
MSVP_PROF_API aclError aclprofPush(void *stamp);

/** aclprofPop() - close the last pushed range. Return: 0, -1 when empty. */
MSVP_PROF_API aclError aclprofPop(void);

/**
 * aclprofRangeStart() - open a range; *@rangeId gets its id (the stamp's
 * pool slot, from 0)
 * Return: ACL_SUCCESS; ACL_ERROR_INVALID_PARAM for NULL @stamp or
 * @rangeId; -1 before aclprofStart or for a stamp that is not live.
 */
MSVP_PROF_API aclError aclprofRangeStart(void *stamp, uint32_t *rangeId);

/**
 * aclprofRangeStop() - close range @rangeId
 * Return: ACL_SUCCESS; -1 for an id that is not an open range (also a
 * second stop of the same range).
 */
MSVP_PROF_API aclError aclprofRangeStop(uint32_t rangeId);

#ifdef __cplusplus
}
#endif

#endif /* _STEPTIME_ACL_PROF_H */
