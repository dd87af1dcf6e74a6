// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sqe.bpf.h's SQE header parsing, run by BPF_PROG_RUN (test_helpers.c)
 * under the STARS version the test sets before load. The SQE goes in as
 * the device's bytes, so that the test states the layout itself.
 */
#include "sqe.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u8 in_sqe[sizeof(struct st_sqe_raw)];
__u16 in_stream;		/* the SQ's stream: v2 SQEs carry none */
__u32 out_task_id;
__u16 out_stream_id;
__u16 out_task_type;
__u8 out_sqe_type;
__u8 out_wr_cqe;
__u8 out_sqes_after;

SEC("syscall")
int run_sqe_parse(void *ctx)
{
	struct st_sqe_head h = {};
	struct st_sqe_raw r;

	__builtin_memcpy(&r, in_sqe, sizeof(r));
	sqe_parse(&r, in_stream, &h);
	out_task_id = h.task_id;
	out_stream_id = h.stream_id;
	out_task_type = h.task_type;
	out_sqe_type = h.sqe_type;
	out_wr_cqe = h.wr_cqe;
	out_sqes_after = h.sqes_after;
	return 0;
}
