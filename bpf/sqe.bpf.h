/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An SQE's header, as steptime reads it: a SEND's SQEs (send.bpf.h) and
 * the SQE trace hook's (hooks.bpf.h).
 */
#ifndef __SQE_BPF_H
#define __SQE_BPF_H

#include "common.bpf.h"
#include "types.bpf.h"

/*
 * STARS v1 (910B, 910_93): wr_cqe is bit 6 of byte 1, u16 stream and task
 * ids at 4 and 6, a place-holder's task type at 2. STARS v2 (950): wr_cqe
 * is bit 3, a u32 task id at 4 and no stream id (one stream per SQ), the
 * place-holder's task type at 12.
 */
static __always_inline void sqe_parse(const struct st_sqe_raw *r,
				      __u16 sq_stream, struct st_sqe_head *h)
{
	h->sqe_type = r->type & TRS_SQE_TYPE_MASK;
	h->sqes_after = 0;
	if (stars_version >= 2) {
		h->sqes_after = (r->w14 >> TRS_SQE_V2_LEN_SHIFT) &
				TRS_SQE_V2_LEN_MASK;
		h->wr_cqe = !!(r->flags & TRS_SQE_V2_F_WR_CQE);
		h->task_id = r->w4;
		h->stream_id = sq_stream;
		h->task_type = h->sqe_type == TRS_SQE_PLACE_HOLDER ? r->w12 : 0;
	} else {
		h->wr_cqe = !!(r->flags & TRS_SQE_F_WR_CQE);
		h->stream_id = r->w4 & TRS_CQE_STREAM_ID_MASK;
		h->task_id = r->w4 >> 16;
		h->task_type = h->sqe_type == TRS_SQE_PLACE_HOLDER ? r->w2 : 0;
	}
}

#endif /* __SQE_BPF_H */
