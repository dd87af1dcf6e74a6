// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A caller of libascend_hal.so, as CANN's libruntime_v100.so calls it:
 * through its PLT, built -fvisibility=hidden (and, in one of its two
 * builds, -z now with full RELRO). test_sends dlopen()s it RTLD_LOCAL.
 */
#include <dlfcn.h>
#include <ascend_trs.h>
#include "fake_hal.h"

int halSqCqAllocate(__u32 dev, struct fake_alloc_in *in,
		    struct fake_alloc_out *out);
int halSqCqFree(__u32 dev, struct trs_sqcq_free_info *f);
/* Weak, as the runtime declares it (npu_driver_base.hpp). */
int halSqTaskSend(__u32 dev, struct trs_task_send_info *s)
	__attribute__((weak));
int halSqCqQuery(__u32 dev, struct trs_sqcq_query_info *q);

static int c_alloc(__u32 dev, __u32 depth, __u32 *sq)
{
	struct fake_alloc_in in = {
		.type = TRS_SQCQ_TYPE_NORMAL, .sqeSize = 64, .cqeSize = 16,
		.sqeDepth = depth, .cqeDepth = depth,
	};
	struct fake_alloc_out out;
	int ret = halSqCqAllocate(dev, &in, &out);

	if (!ret)
		*sq = out.sqId;
	return ret;
}

static void send_info(struct trs_task_send_info *s, __u32 sq,
		      const void *sqes, __u32 n)
{
	*s = (struct trs_task_send_info){
		.type = TRS_SQCQ_TYPE_NORMAL, .sqId = sq,
		.sqe_addr = (__u64)(unsigned long)sqes, .sqe_num = n,
	};
}

static int c_send(__u32 dev, __u32 sq, const void *sqes, __u32 n)
{
	struct trs_task_send_info s;

	send_info(&s, sq, sqes, n);
	return halSqTaskSend(dev, &s);
}

static int c_head(__u32 dev, __u32 sq, __u32 *head)
{
	struct trs_sqcq_query_info q = {
		.type = TRS_SQCQ_TYPE_NORMAL, .sqId = sq,
		.prop = TRS_SQCQ_PROP_SQ_HEAD,
	};
	int ret = halSqCqQuery(dev, &q);

	if (!ret)
		*head = q.value[0];
	return ret;
}

static int c_free(__u32 dev, __u32 sq)
{
	struct trs_sqcq_free_info f = {
		.type = TRS_SQCQ_TYPE_NORMAL, .sqId = sq, .cqId = sq,
	};

	return halSqCqFree(dev, &f);
}

static int c_send_dlsym(__u32 dev, __u32 sq, const void *sqes, __u32 n)
{
	int (*fn)(__u32, struct trs_task_send_info *);
	struct trs_task_send_info s;
	void *h = dlopen("libascend_hal.so", RTLD_NOW | RTLD_NOLOAD);

	if (!h)
		return -1;
	fn = (int (*)(__u32, struct trs_task_send_info *))
		dlsym(h, "halSqTaskSend");
	dlclose(h);
	if (!fn)
		return -1;
	send_info(&s, sq, sqes, n);
	return fn(dev, &s);
}

__attribute__((visibility("default"))) const struct caller_ops caller_ops = {
	.alloc = c_alloc,
	.send = c_send,
	.head = c_head,
	.free_sq = c_free,
	.send_dlsym = c_send_dlsym,
};
