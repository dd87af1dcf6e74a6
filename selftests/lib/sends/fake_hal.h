/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* test_sends' libascend_hal.so and its callers (fake_hal.c, caller.c). */
#ifndef _FAKE_HAL_H
#define _FAKE_HAL_H

#include <linux/types.h>

#define FAKE_SQS	16
#define FAKE_EINVAL	1	/* DRV_ERROR_INVALID_VALUE's place */
#define FAKE_ENORES	2	/* a send that found no room */

/* halSqCqInputInfo and halSqCqOutputInfo, as far as they are read. */
struct fake_alloc_in {
	__u32 type, tsId, sqeSize, cqeSize, sqeDepth, cqeDepth, grpId, flag;
	__u32 cqId, sqId, info[5], res[8];
};

struct fake_alloc_out {
	__u32 sqId, cqId;
	__u64 queueVAddr;
	__u32 flag, res[5];
};

/* The callers' entry points (caller.c), one object linked each way. */
struct caller_ops {
	int (*alloc)(__u32 dev, __u32 depth, __u32 *sq);
	int (*send)(__u32 dev, __u32 sq, const void *sqes, __u32 n);
	int (*head)(__u32 dev, __u32 sq, __u32 *head);
	int (*free_sq)(__u32 dev, __u32 sq);
	/* halSqTaskSend() found with dlsym(), as a few third parties do */
	int (*send_dlsym)(__u32 dev, __u32 sq, const void *sqes, __u32 n);
};

#endif
