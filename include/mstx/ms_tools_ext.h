/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mstx, CANN's tools-extension API (libms_tools_ext.so), implemented by
 * libsteptime: the names, types and signatures torch_npu and CANN's
 * samples call, written from the published API.
 *
 * Marks and ranges become phases of the step open in the process (see
 * steptime_phases__get() in <steptime/steptime.h>); a range named as
 * torch_npu names steps, "ProfilerStep#N" or "step N", is step N + 1
 * itself (its start and end are the step's START and END marks, on the
 * range's stream). Calls are also passed to CANN's own libms_tools_ext.so
 * when it is loaded after libsteptime (LD_PRELOAD), so msprof sees them.
 *
 * libms_tools_ext.so, installed next to libsteptime.so, is a link to it.
 */
#ifndef _STEPTIME_MS_TOOLS_EXT_H
#define _STEPTIME_MS_TOOLS_EXT_H

#include <acl/acl_base.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MSTX_INVALID_ID 0

typedef uint64_t mstxRangeId;

struct mstxDomainRegistration_st;
typedef struct mstxDomainRegistration_st mstxDomainRegistration_t;
typedef mstxDomainRegistration_t *mstxDomainHandle_t;

struct mstxMemHeap_st;
typedef struct mstxMemHeap_st mstxMemHeap_t;
typedef mstxMemHeap_t *mstxMemHeapHandle_t;

#ifndef MSTX_API
#define MSTX_API __attribute__((visibility("default")))
#endif

/** mstxMarkA() - an instant named @message (a phase count). */
MSTX_API void mstxMarkA(const char *message, aclrtStream stream);

/**
 * mstxRangeStartA() - start a range named @message
 * Return: its id, MSTX_INVALID_ID for a NULL or empty @message or when
 * 1024 ranges are open.
 */
MSTX_API mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream);

/** mstxRangeEnd() - end a range; an unknown id is ignored. */
MSTX_API void mstxRangeEnd(mstxRangeId id);

/** mstxDomainCreateA() - a named domain (the msprof_tx "domain" column) */
MSTX_API mstxDomainHandle_t mstxDomainCreateA(const char *name);
MSTX_API void mstxDomainDestroy(mstxDomainHandle_t handle);
MSTX_API void mstxDomainMarkA(mstxDomainHandle_t handle, const char *message,
			      aclrtStream stream);
MSTX_API mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t handle,
					   const char *message,
					   aclrtStream stream);
MSTX_API void mstxDomainRangeEnd(mstxDomainHandle_t handle, mstxRangeId id);

/* Memory-pool annotations: passed on to CANN's library when loaded. */
MSTX_API mstxMemHeapHandle_t mstxMemHeapRegister(mstxDomainHandle_t domain,
						 const void *desc);
MSTX_API void mstxMemHeapUnregister(mstxDomainHandle_t domain,
				    mstxMemHeapHandle_t heap);
MSTX_API void mstxMemRegionsRegister(mstxDomainHandle_t domain,
				     const void *desc);
MSTX_API void mstxMemRegionsUnregister(mstxDomainHandle_t domain,
				       const void *desc);

#ifdef __cplusplus
}
#endif

#endif /* _STEPTIME_MS_TOOLS_EXT_H */
