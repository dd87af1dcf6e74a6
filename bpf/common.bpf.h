/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Includes, arch registers, settings the loader writes, counters.
 */
#ifndef __COMMON_BPF_H
#define __COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define ASCEND_TRS_NO_LINUX_TYPES
#define STEPTIME_ABI_NO_LINUX_TYPES
#ifndef __aligned_u64
#define __aligned_u64 __u64 __attribute__((aligned(8)))

/* vmlinux.h has no macros: the errno values the program returns itself. */
#ifndef ENOENT
#define ENOENT		2
#endif
#ifndef EAGAIN
#define EAGAIN		11
#endif
#endif
#include "ascend_trs.h"
#include "steptime/abi.h"
#include "steptime.h"

/*
 * The syscall's number and arguments in its saved user registers. SC_*
 * load them directly from the BTF-typed pointer tp_btf gets; raw_tp's is
 * untyped, so SC_CORE_* read them through the CO-RE helpers.
 */
#if defined(__TARGET_ARCH_x86)
#define NR_IOCTL	16
#define SC_NR(regs)	((regs)->orig_ax)
#define SC_ARG0(regs)	((regs)->di)
#define SC_ARG1(regs)	((regs)->si)
#define SC_ARG2(regs)	((regs)->dx)
#define SC_CORE_NR(regs) BPF_CORE_READ(regs, orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define NR_IOCTL	29
#define SC_NR(regs)	((regs)->syscallno)
#define SC_ARG0(regs)	((regs)->orig_x0)
#define SC_ARG1(regs)	((regs)->regs[1])
#define SC_ARG2(regs)	((regs)->regs[2])
#define SC_CORE_NR(regs) BPF_CORE_READ(regs, syscallno)
#else
#error "steptime supports x86_64 and arm64"
#endif

#define READ_ONCE(x)	(*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))

/*
 * Kernels before 6.8 verify a bpf_loop() callback once, in the state of its
 * first iteration, and prune as dead the branches that state cannot take
 * (fixed by "bpf: verify callbacks as if they are called unknown number of
 * times", v6.8). Whatever a callback carries from one iteration to the
 * next therefore starts from opaque_zero, a .bss value the verifier cannot
 * know, and no pointer is carried from one iteration to the next.
 */
__u64 opaque_zero;

/* Set by the loader before load. */
const volatile __u32 target_rdev;		/* kernel dev_t of the device */
const volatile __u64 counter_freq_hz;		/* 0: unknown, no device time */
const volatile bool has_bpf_loop = true;	/* bpf_loop(): 5.17+ */
const volatile bool cq_hook;			/* completion hook attached */
const volatile bool sqe_hook;			/* SQE trace hook attached */
const volatile bool chan_hook;			/* channel made/gone hooks */
const volatile __u32 stars_version = 1;		/* SQE header layout: 1, 2 */
/*
 * Mapped SQs counted from their process's journal (journal.bpf.h): the
 * HAL's send and query entry points carry no uprobe.
 */
const volatile bool journal_on;
/* Where the hooks' driver objects keep (devid, tsid); ~0: unknown. */
const volatile __u32 ts_inst_id_off = ~0u;	/* CQ hook's ts_inst */
const volatile __u32 chan_id_off = ~0u;		/* SQE trace hook's chan */

/* Owner numbers handed out at OPEN (and to files bound before load). */
__u64 owner_seq;
/*
 * Bumped after every replacement or deletion in files, cqs: what a thread
 * cached (st_cache, st_cache_way) is valid under the generation it read.
 */
__u64 files_gen;
__u64 cqs_gen;


#define offsetofend(T, m)	(__builtin_offsetof(T, m) + sizeof(((T *)0)->m))


/*
 * Add to a counter of this CPU's, through @cnt where the caller has it
 * (on 6.1, each lookup of a per-CPU array is a helper call), else looked up.
 * The counters map is maps.bpf.h's, which includes this file: a user of
 * these includes maps.bpf.h.
 */
#define CNT_ADD_AT(cnt, field, v)					\
	do {								\
		struct steptime_counters *__c = (cnt);			\
		__u32 __z = 0;						\
		if (!__c)						\
			__c = bpf_map_lookup_elem(&counters, &__z);	\
		if (__c)						\
			__c->field += (v);				\
	} while (0)
#define CNT_ADD(field, v) CNT_ADD_AT(NULL, field, v)
#define CNT_INC(field) CNT_ADD(field, 1)

#endif /* __COMMON_BPF_H */
