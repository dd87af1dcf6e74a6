// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * walk.bpf.h's helpers, run by BPF_PROG_RUN (test_helpers.c) on the SQ the
 * test writes into sqs[0]; the test reads the SQ back, and what is here.
 */
#include "walk.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u32 in_head;			/* the report's or the query's SQ head */
__u32 out_pos;			/* report_pos() */
__u32 in_task_id;		/* the report's task */
__u16 in_stream_id;
__u32 out_completions;		/* tasks the walk completed */
__u32 out_found;		/* report_find(): the report's task found */

static struct st_recv_ctx walk_x;	/* as cmd_ctx holds it: not the stack */

/* sqs[0], and a walk's state cleared for it. */
static __always_inline struct st_sq *walk_sq(struct st_recv_ctx *x)
{
	__u32 slot = 0;

	__builtin_memset(x, 0, sizeof(*x));
	x->now = bpf_ktime_get_ns();
	return bpf_map_lookup_elem(&sqs, &slot);
}

SEC("syscall")
int run_report_pos(void *ctx)
{
	struct st_sq *sq = walk_sq(&walk_x);

	if (!sq || !sq->depth)
		return 1;
	out_pos = report_pos(sq, in_head);
	return 0;
}

SEC("syscall")
int run_sq_advance(void *ctx)
{
	struct st_recv_ctx *x = &walk_x;
	struct st_sq *sq = walk_sq(x);

	if (!sq)
		return 1;
	walk_begin(x, sq, 0);
	sq_advance(x, sq, in_head);
	out_completions = x->completions;
	return 0;
}

SEC("syscall")
int run_report_find(void *ctx)
{
	struct st_recv_ctx *x = &walk_x;
	struct st_sq *sq = walk_sq(x);

	if (!sq)
		return 1;
	x->has_report = 1;
	x->rep.task_id = in_task_id;
	x->rep.stream_id = in_stream_id;
	x->rep.sq_head = in_head;
	walk_begin(x, sq, 0);
	report_find(x, sq);
	out_completions = x->completions;
	out_found = x->found;
	return 0;
}
