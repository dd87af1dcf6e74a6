// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The uprobe baseline of bench/mark.c: what a mark costs when every mark
 * traps into a BPF program (the approach steptime's mmapped ring avoids).
 * The program does what a mark must: take the time, store it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct bench_hit {
	__u64	hits;
	__u64	index_id;
	__u64	tag;
	__u64	time_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_hit);
} hits SEC(".maps");

SEC("uprobe")
int BPF_KPROBE(bench_uprobe_mark, __u64 index_id, __u32 tag)
{
	__u32 zero = 0;
	struct bench_hit *h = bpf_map_lookup_elem(&hits, &zero);

	if (!h)
		return 0;
	h->hits++;
	h->index_id = index_id;
	h->tag = tag;
	h->time_ns = bpf_ktime_get_ns();
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
