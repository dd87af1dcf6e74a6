// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * journal.bpf.h's snapshot, run by BPF_PROG_RUN (test_helpers.c) on the SQ
 * the test writes into sqs[0], for process in_tgid's steps in steps; the
 * test reads the SQ and the steps back.
 */
#include "journal.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u32 in_tgid;
__u64 in_cnt;			/* the snapshot: tasks << 32 | SQEs */
__u32 in_flags;			/* STEPTIME_SNAP_* (and how far behind) */

static struct st_proc proc;	/* a process with no step open */

SEC("syscall")
int run_journal_snap(void *ctx)
{
	struct jctx j = { .k.tgid = in_tgid };
	__u32 slot = 0, zero = 0;
	struct st_sq *sq = bpf_map_lookup_elem(&sqs, &slot);

	j.c = bpf_map_lookup_elem(&counters, &zero);
	if (!sq || !j.c)
		return 1;
	journal_snap(&j, &proc, sq, in_cnt, in_flags);
	return 0;
}
