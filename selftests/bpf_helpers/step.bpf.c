// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * step.bpf.h's device-time conversion, run by BPF_PROG_RUN
 * (test_helpers.c) under the counter frequency the test sets before load.
 */
#include "step.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 in_ticks;
__u64 out_ns;

SEC("syscall")
int run_ticks_to_ns(void *ctx)
{
	out_ns = ticks_to_ns(in_ticks);
	return 0;
}
