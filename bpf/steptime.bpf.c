// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime: stamp every task submission (TRS SQCQ_SEND) and completion report
 * (SQCQ_RECV) of the Ascend driver with kernel time, and attribute each task
 * to the training step open in its process.
 *
 * The same core runs behind four attach modes, of which the loader enables
 * one (bpf_program__set_autoload): fentry/fexit or kprobe/kretprobe on the
 * driver's ioctl handler, tp_btf/raw_tp on sys_enter/sys_exit, or the
 * syscalls:sys_{enter,exit}_ioctl tracepoints. The syscall modes match the
 * device by fd -> file -> inode -> rdev.
 *
 * Times: every *_ns is bpf_ktime_get_ns() (CLOCK_MONOTONIC). A task's submit
 * time is the SEND ioctl's entry (exact: it cannot start earlier). Its
 * completion time is the exit of the RECV that returned its report (exact
 * to the syscall) or, for a task without a report of its own, of the RECV
 * whose report's sq_head passed it: an upper bound.
 */

/*
 * Each header includes the headers it uses, so that a test program
 * (selftests/bpf_helpers/) can include one concern's header alone; this
 * order is theirs.
 */
#include "common.bpf.h"
#include "types.bpf.h"
#include "maps.bpf.h"
#include "thread.bpf.h"
#include "proc.bpf.h"
#include "step.bpf.h"
#include "marks.bpf.h"
#include "queues.bpf.h"
#include "sqe.bpf.h"
#include "send.bpf.h"
#include "walk.bpf.h"
#include "recv.bpf.h"
#include "hal.bpf.h"
#include "journal.bpf.h"
#include "ioctl.bpf.h"
#include "hooks.bpf.h"
#include "exit.bpf.h"

/* Mode 1: fentry/fexit on the driver's ioctl handler (target set at load). */
SEC("fentry")
int BPF_PROG(fentry_ioctl, struct file *file, unsigned int cmd,
	     unsigned long arg)
{
	if (!cmd_tracked(cmd) || cmd == TRS_IOC_SQCQ_RECV)
		return 0;
	return ioctl_enter((__u64)file, cmd, arg);
}

SEC("fexit")
int BPF_PROG(fexit_ioctl, struct file *file, unsigned int cmd,
	     unsigned long arg, long ret)
{
	return cmd_tracked(cmd) ? ioctl_exit((__u64)file, cmd, arg, ret) : 0;
}

/* Mode 2: kprobe/kretprobe on the same handler. */
SEC("kprobe")
int BPF_KPROBE(kprobe_ioctl, struct file *file, unsigned int cmd,
	       unsigned long arg)
{
	return cmd_tracked(cmd) ? ioctl_enter((__u64)file, cmd, arg) : 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(kretprobe_ioctl, long ret)
{
	return ioctl_exit(0, 0, 0, ret);
}

/* Mode 3: tp_btf on sys_enter/sys_exit, and raw_tp where BTF is missing. */
SEC("tp_btf/sys_enter")
int BPF_PROG(tpbtf_sys_enter, struct pt_regs *regs, long id)
{
	if (id != NR_IOCTL || SC_ARG1(regs) == TRS_IOC_SQCQ_RECV)
		return 0;
	return sys_ioctl_enter(SC_ARG0(regs), SC_ARG1(regs), SC_ARG2(regs),
			       true);
}

/* The saved registers still hold the arguments: untracked cmds stop here. */
SEC("tp_btf/sys_exit")
int BPF_PROG(tpbtf_sys_exit, struct pt_regs *regs, long ret)
{
	if (SC_NR(regs) != NR_IOCTL)
		return 0;
	return sys_ioctl_exit(SC_ARG0(regs), SC_ARG1(regs), SC_ARG2(regs),
			      ret, true);
}

SEC("raw_tp/sys_enter")
int BPF_PROG(rawtp_sys_enter, struct pt_regs *regs, long id)
{
	__u64 cmd;

	if (id != NR_IOCTL)
		return 0;
	cmd = PT_REGS_PARM2_CORE_SYSCALL(regs);
	if (cmd == TRS_IOC_SQCQ_RECV)
		return 0;
	return sys_ioctl_enter(PT_REGS_PARM1_CORE_SYSCALL(regs), cmd,
			       PT_REGS_PARM3_CORE_SYSCALL(regs), false);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(rawtp_sys_exit, struct pt_regs *regs, long ret)
{
	if (SC_CORE_NR(regs) != NR_IOCTL)
		return 0;
	return sys_ioctl_exit(PT_REGS_PARM1_CORE_SYSCALL(regs),
			      PT_REGS_PARM2_CORE_SYSCALL(regs),
			      PT_REGS_PARM3_CORE_SYSCALL(regs), ret, false);
}

/* Mode 4: the syscalls:sys_{enter,exit}_ioctl tracepoints. */
SEC("tracepoint/syscalls/sys_enter_ioctl")
int tp_sys_enter_ioctl(struct trace_event_raw_sys_enter *ctx)
{
	return sys_ioctl_enter(ctx->args[0], ctx->args[1], ctx->args[2],
			       false);
}

SEC("tracepoint/syscalls/sys_exit_ioctl")
int tp_sys_exit_ioctl(struct trace_event_raw_sys_exit *ctx)
{
	return ioctl_exit(0, 0, 0, ctx->ret);
}

/* Every mode: the step API's ring kick (libsteptime's st_ring_kick()). */
SEC("uprobe")
int BPF_KPROBE(uprobe_ring_kick, void *ring)
{
	return ring_kick((__u64)ring);
}

/*
 * Every mode: libascend_hal.so's entry points (hal.bpf.h). The device id
 * comes first, then the ioctl's struct.
 */
SEC("uprobe")
int BPF_KPROBE(uprobe_hal_alloc, __u32 dev, void *in)
{
	return hal_enter(ST_HAL_ALLOC, dev, (__u64)in);
}

SEC("uretprobe")
int BPF_KRETPROBE(uretprobe_hal_alloc, int ret)
{
	struct st_hal_call c;

	hal_take(ST_HAL_ALLOC, &c);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(uprobe_hal_send, __u32 dev, void *info)
{
	return hal_send_enter(dev, (__u64)info);
}

SEC("uprobe")
int BPF_KPROBE(uprobe_hal_query, __u32 dev, void *info)
{
	return hal_enter(ST_HAL_QUERY, dev, (__u64)info);
}

SEC("uretprobe")
int BPF_KRETPROBE(uretprobe_hal_query, int ret)
{
	return hal_query_exit(ret);
}

SEC("fexit")
int BPF_PROG(fexit_cq_enque, void *ts, __u32 logic_cq_id, __u32 stream_id,
	     __u32 task_id, void *cqe, int ret)
{
	return cq_enque_done(ts, logic_cq_id, stream_id, cqe, ret);
}


SEC("kprobe")
int BPF_KPROBE(kprobe_cq_enque, void *ts, __u32 logic_cq_id, __u32 stream_id,
	       __u32 task_id, void *cqe)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_enque e = {
		.ts_inst = (__u64)ts,
		.cqe = (__u64)cqe,
		.logic_cq_id = logic_cq_id,
		.stream_id = stream_id,
	};

	bpf_map_update_elem(&enques, &id, &e, BPF_ANY);
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(kretprobe_cq_enque, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct st_enque *e = bpf_map_lookup_elem(&enques, &id), c;

	if (!e)
		return 0;
	c = *e;
	bpf_map_delete_elem(&enques, &id);
	return cq_enque_done((void *)c.ts_inst, c.logic_cq_id, c.stream_id,
			     (void *)c.cqe, (int)ret);
}

SEC("fentry")
int BPF_PROG(fentry_trace_sqe, const char *str, void *chan, void *sq,
	     void *sqe)
{
	return trace_sqe(chan, sq, sqe);
}

SEC("kprobe")
int BPF_KPROBE(kprobe_trace_sqe, const char *str, void *chan, void *sq,
	       void *sqe)
{
	return trace_sqe(chan, sq, sqe);
}

SEC("fentry")
int BPF_PROG(fentry_chan_add, void *chan)
{
	return chan_add(chan);
}

SEC("kprobe")
int BPF_KPROBE(kprobe_chan_add, void *chan)
{
	return chan_add(chan);
}

SEC("fentry")
int BPF_PROG(fentry_chan_del, void *chan)
{
	return chan_del(chan);
}

SEC("kprobe")
int BPF_KPROBE(kprobe_chan_del, void *chan)
{
	return chan_del(chan);
}

SEC("tracepoint/sched/sched_process_exit")
int tp_sched_process_exit(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct st_proc *p;

	/* Only the last thread of the process. */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	p = proc_find(tgid);
	if (!p)
		return 0;
	/* Its memory is gone: marks since exit_sync() are lost. */
	step_abandon(tgid, p->cur_index);
	if (p->prev_index != p->cur_index)
		step_abandon(tgid, p->prev_index);
	steps_retire(p, tgid);
	proc_free(p);
	bpf_for_each_map_elem(&sqs, drop_sq, &tgid, 0);
	bpf_for_each_map_elem(&cqs, drop_cq, &tgid, 0);
	bpf_for_each_map_elem(&files, drop_file, &tgid, 0);
	__sync_fetch_and_add(&cqs_gen, 1);
	__sync_fetch_and_add(&files_gen, 1);
	CNT_INC(proc_exits);
	return 0;
}

/*
 * fentry and kprobe modes: do_exit(), which every exit passes (exit(),
 * exit_group(), a fatal signal). A syscall tracepoint instead would send
 * every syscall of every process down the traced path (syscall_regfunc()
 * sets SYSCALL_WORK_SYSCALL_TRACEPOINT on all tasks).
 */
SEC("fentry/do_exit")
int BPF_PROG(fentry_do_exit, long code)
{
	return exit_sync();
}

SEC("kprobe/do_exit")
int BPF_KPROBE(kprobe_do_exit)
{
	return exit_sync();
}

/*
 * The syscall modes, where every syscall takes the traced path already:
 * exit() and exit_group() (a fatal signal's exit is missed).
 */
SEC("tracepoint/syscalls/sys_enter_exit_group")
int tp_sys_enter_exit_group(void *ctx)
{
	return exit_sync();
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
