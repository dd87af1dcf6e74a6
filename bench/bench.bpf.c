// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reference points for the benchmarks, not part of steptime:
 *  - the uprobe baseline of bench/mark.c: what a mark costs when every mark
 *    traps into a BPF program (the approach steptime's mmapped ring avoids);
 *    the program does what a mark must: take the time, store it;
 *  - the floor of the tp_btf attach mode for bench/hook.c: a sys_enter and
 *    sys_exit pair that only counts ioctls, the least any hook on those
 *    tracepoints can cost;
 *  - the floors of the fentry and kprobe modes (VM): an fentry/fexit and a
 *    kprobe/kretprobe pair on the driver's ioctl function (its name set at
 *    load) that only count calls, alone and with a program of the same
 *    kind on the SQE trace function, the third hook those modes attach;
 *  - the floor of steptime's HAL probe for bench/hal.c: a uprobe on
 *    libascend_hal.so's halSqTaskSend() that only counts calls, the least
 *    any probe on a submission can cost (steptime's is an entry probe).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#if defined(__TARGET_ARCH_x86)
#define NR_IOCTL	16
#define SYSCALL_NR(regs) BPF_CORE_READ(regs, orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define NR_IOCTL	29
#define SYSCALL_NR(regs) BPF_CORE_READ((struct user_pt_regs *)(regs), syscallno)
#endif

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

__u64 floor_enter, floor_exit;

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_sys_enter, struct pt_regs *regs, long id)
{
	if (id != NR_IOCTL)
		return 0;
	__sync_fetch_and_add(&floor_enter, 1);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_sys_exit, struct pt_regs *regs, long ret)
{
	if (SYSCALL_NR(regs) != NR_IOCTL)
		return 0;
	__sync_fetch_and_add(&floor_exit, 1);
	return 0;
}

SEC("fentry")
int BPF_PROG(floor_fentry)
{
	__sync_fetch_and_add(&floor_enter, 1);
	return 0;
}

SEC("fexit")
int BPF_PROG(floor_fexit)
{
	__sync_fetch_and_add(&floor_exit, 1);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(floor_kprobe)
{
	__sync_fetch_and_add(&floor_enter, 1);
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(floor_kretprobe)
{
	__sync_fetch_and_add(&floor_exit, 1);
	return 0;
}

/*
 * The third hook of steptime's fentry and kprobe modes: the driver's SQE
 * trace function (its name set at load), which every SQE a SEND moves
 * passes through.
 */
__u64 floor_sqes;

SEC("fentry")
int BPF_PROG(floor_fentry_sqe)
{
	__sync_fetch_and_add(&floor_sqes, 1);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(floor_kprobe_sqe)
{
	__sync_fetch_and_add(&floor_sqes, 1);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(floor_uprobe_hal)
{
	__sync_fetch_and_add(&floor_enter, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
