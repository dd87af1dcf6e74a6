// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A libascend_hal.so for test_sends: the four calls libsteptime journals,
 * with the real library's structs (the ioctls'), over queues in memory.
 * Its own count of what it accepted (send_ok, as the driver's shared-info
 * page keeps it) is the truth the test reads back.
 */
#include <string.h>
#include <ascend_trs.h>
#include "fake_hal.h"

#define API __attribute__((visibility("default")))

static struct fake_sq {
	__u32 depth, tail, head;
	__u64 send_ok;
} sqs[FAKE_SQS];

static int refuse_next;

API void fake_hal_refuse_next(void)
{
	refuse_next = 1;
}

API void fake_hal_set_head(__u32 sq, __u32 head)
{
	sqs[sq % FAKE_SQS].head = head;
}

API __u64 fake_hal_send_ok(__u32 sq)
{
	return sqs[sq % FAKE_SQS].send_ok;
}

API int halSqCqAllocate(__u32 dev, struct fake_alloc_in *in,
			struct fake_alloc_out *out)
{
	static __u32 next = 1;
	struct fake_sq *q;

	(void)dev;
	if (!in || !out || !in->sqeDepth || next >= FAKE_SQS)
		return FAKE_EINVAL;
	out->sqId = next++;
	out->cqId = out->sqId;
	q = &sqs[out->sqId];
	memset(q, 0, sizeof(*q));
	q->depth = in->sqeDepth;
	return 0;
}

API int halSqCqFree(__u32 dev, struct trs_sqcq_free_info *f)
{
	(void)dev;
	return f && f->sqId < FAKE_SQS ? 0 : FAKE_EINVAL;
}

API int halSqTaskSend(__u32 dev, struct trs_task_send_info *s)
{
	struct fake_sq *q;

	(void)dev;
	if (!s || s->sqId >= FAKE_SQS || !sqs[s->sqId].depth)
		return FAKE_EINVAL;
	q = &sqs[s->sqId];
	if (refuse_next) {
		refuse_next = 0;
		return FAKE_ENORES;
	}
	s->pos = q->tail;
	q->tail = (q->tail + s->sqe_num) % q->depth;
	q->send_ok += s->sqe_num;
	return 0;
}

API int halSqCqQuery(__u32 dev, struct trs_sqcq_query_info *q)
{
	(void)dev;
	if (!q || q->sqId >= FAKE_SQS)
		return FAKE_EINVAL;
	/* SQ_DEPTH too, as the real one answers it (trs_sqcq.c:1365). */
	if (q->prop == TRS_SQCQ_PROP_SQ_DEPTH)
		q->value[0] = sqs[q->sqId].depth;
	else if (q->prop == TRS_SQCQ_PROP_SQ_HEAD)
		q->value[0] = sqs[q->sqId].head;
	else
		return FAKE_EINVAL;
	return 0;
}
