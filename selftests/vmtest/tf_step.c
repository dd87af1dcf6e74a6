// SPDX-License-Identifier: GPL-2.0
/*
 * Without steptime: threads single-step themselves (EFLAGS.TF, a SIGTRAP
 * per instruction, syscalls included) while the main thread loads BPF
 * programs that keep the verifier busy, the work hal_steps' process did
 * when a 6.12 guest under TCG warned that a single-step #DB was taken in
 * kernel mode (issue 46). test_vmtest.sh runs it in a guest and checks the
 * kernel log: user-mode stepping, however much of it, must not reach the
 * kernel (the warning is not a TF leak from user space).
 *
 *   tf_step SECONDS [THREADS]
 *
 * Prints "tf_step: N single steps in T threads, L BPF loads (F failed)";
 * exits 1 when nothing was stepped or loaded (a run testing nothing).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

#define MAX_THREADS	16
#define X86_EFLAGS_TF	0x100

static volatile int stop;
static __thread unsigned long steps;
static unsigned long total_steps;

static void on_trap(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;

	steps++;
	if (stop)
		uc->uc_mcontext.gregs[REG_EFL] &= ~X86_EFLAGS_TF;
}

static void tf_set(void)
{
	__asm__ __volatile__("pushf; orq $0x100, (%%rsp); popf" ::: "memory", "cc");
}

static void *stepper(void *arg)
{
	volatile unsigned long x = 0;
	int i;

	while (!stop) {
		tf_set();
		for (i = 0; i < 2000 && !stop; i++) {
			x += i;
			if (!(i % 64))
				syscall(SYS_getppid);
		}
	}
	__atomic_fetch_add(&total_steps, steps, __ATOMIC_RELAXED);
	return NULL;
}

static struct bpf_insn insn(__u8 code, __u8 dst, __u8 src, __s16 off, __s32 imm)
{
	return (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src,
				  .off = off, .imm = imm };
}

/* A branchy program: the verifier pushes a state per branch. */
static int load_branchy(void)
{
	struct bpf_insn p[304];
	union bpf_attr a;
	int i = 0, fd;

	p[i++] = insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns);
	p[i++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, 6, 0, 0, 0);
	while (i < 300) {
		p[i] = insn(BPF_JMP | BPF_JGT | BPF_K, 6, 0, 1, i);
		i++;
		p[i++] = insn(BPF_ALU64 | BPF_ADD | BPF_K, 6, 0, 0, 1);
	}
	p[i++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	p[i++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (unsigned long)p;
	a.insn_cnt = i;
	a.license = (unsigned long)"GPL";
	fd = syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (fd >= 0)
		close(fd);
	return fd;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_trap, .sa_flags = SA_SIGINFO };
	int secs = argc > 1 ? atoi(argv[1]) : 20;
	int n = argc > 2 ? atoi(argv[2]) : 2;
	unsigned long loads = 0, failed = 0;
	pthread_t t[MAX_THREADS];
	time_t end;
	int i;

	if (n < 1 || n > MAX_THREADS || secs < 1) {
		fprintf(stderr, "usage: %s SECONDS [THREADS 1-%d]\n", argv[0],
			MAX_THREADS);
		return 2;
	}
	if (sigaction(SIGTRAP, &sa, NULL)) {
		perror("sigaction");
		return 1;
	}
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, stepper, NULL)) {
			perror("pthread_create");
			return 1;
		}
	end = time(NULL) + secs;
	while (time(NULL) < end) {
		if (load_branchy() < 0)
			failed++;
		loads++;
	}
	stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("tf_step: %lu single steps in %d threads, %lu BPF loads (%lu failed)\n",
	       total_steps, n, loads, failed);
	return total_steps && loads > failed ? 0 : 1;
}
