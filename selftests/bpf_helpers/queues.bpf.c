// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * queues.bpf.h's latency bucket, run by BPF_PROG_RUN (test_helpers.c):
 * lat_hist's index, as steptime/abi.h documents it to readers.
 */
#include "queues.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 in_ns;
__u32 out_bucket;

SEC("syscall")
int run_lat_bucket(void *ctx)
{
	out_bucket = lat_bucket(in_ns);
	return 0;
}
