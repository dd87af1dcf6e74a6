/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The loader's inside: one load's context and what its files call of
 * each other. Not installed; nothing here is exported (the loader is built
 * -fvisibility=hidden, and its API is steptime/loader.h).
 */
#ifndef _LOADER_INT_H
#define _LOADER_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <linux/capability.h>
#include <bpf/libbpf.h>

#include "npusim_abi.h"
#include "steptime/loader.h"
#include "steptime/steptime.h"
#include "steptime.skel.h"
#include "hal.h"

#ifndef ST_HIDDEN
#define ST_HIDDEN __attribute__((visibility("hidden")))
#endif

#define BPFFS_ROOT	"/sys/fs/bpf"
#define ENOTSUPP	524	/* the kernel's, not in user space's errno.h */
#define TRACEFS_ROOT	"/sys/kernel/tracing"
#ifndef CAP_PERFMON
#define CAP_PERFMON	38	/* 5.8 */
#endif
#ifndef CAP_BPF
#define CAP_BPF		39
#endif

/* An opts field, or 0 when @o is NULL or predates the field. */
#define OPT(o, f)							\
	((o) && (o)->sz >= offsetof(typeof(*(o)), f) + sizeof((o)->f) ?	\
	 (o)->f : 0)

/*
 * A driver's hooks: the manager node's unlocked_ioctl, the completion hook
 * (called for every report as it is queued, returns 0 when it was), the
 * SQE trace hook (every SQE on its way to the device) and the channel hooks
 * (a channel made, in its SQ's ALLOC, and gone: they bind the trace hook's
 * channel to its SQ), each with the module it lives in; and where the CQ
 * and trace hooks' driver objects keep (devid, tsid), which the modules'
 * missing BTF cannot tell.
 */
struct hook {
	const char *mod;
	const char *fn;
};

struct profile {
	const char *name;
	struct hook ioctl;
	struct hook cq;
	struct hook sqe;
	struct hook chan_add, chan_del;
	__u32 ts_inst_id_off;	/* struct trs_core_ts_inst: inst */
	__u32 chan_id_off;	/* struct trs_chan: inst */
};

/* Links of one load: the core's, ring kicks' and HAL probes' (below 30). */
#define LOAD_MAX_LINKS	STEPTIME_MAX_PROGS

struct load_ctx {
	const struct steptime_load_opts *opts;
	const struct profile *prof;
	const char *pin_dir;
	const char *device;
	const char *btf_path;	/* external BTF for CO-RE, or NULL */
	bool kernel_btf;	/* /sys/kernel/btf/vmlinux exists */
	char tmp_dir[PATH_MAX];	/* the private directory being filled */
	int kill_at, checkpoints;	/* test hook, see checkpoint() */
	char *log_buf;		/* verifier log: see STEPTIME_VERIFIER_LOG */
	size_t log_size;
	__u32 rdev;
	__u64 freq;
	__u32 bpffs_before, bpffs_after;	/* see steptime_info */
	int stars, stars_from;	/* STEPTIME_STARS_FROM_* */
	char chip[32];		/* device 0's name, as the driver gave it */
	int hooks;		/* 1: CQ hook, 2: SQE trace hook, 4: channel hooks */
	bool no_hooks;		/* the ioctl hook alone */
	bool has_loop;		/* bpf_loop() used (probed, not refused) */
	bool raw_tp;		/* tp_btf mode fell back to raw_tp */
	bool refused;		/* the last mode_try(): the verifier said no */
	char why[1024];		/* every mode's; info keeps what fits */
	/* libsteptime files to put the ring kick's uprobe on, and those it is on */
	char kick_path[STEPTIME_KICK_LIBS][PATH_MAX];
	int nkick;
	struct stat kicked[STEPTIME_KICK_LIBS];
	int nkicked;
	/* libascend_hal.so files to probe, and those probed (hal_attach()) */
	struct hal_libs hal;
	bool hal_on[STEPTIME_HAL_LIBS];
	bool journal;		/* send and query left to the journal */
	struct steptime_bpf *skel;
	struct bpf_link *links[LOAD_MAX_LINKS];
	const char *link_names[LOAD_MAX_LINKS];
	char kick_names[STEPTIME_KICK_LIBS][32];
	char hal_names[STEPTIME_HAL_LIBS * 6][40];
	int nhal_names;
	int nlinks;
};

/*
 * Verifier log: the whole log for -v, one buffer for every program; else
 * the statistics and the error alone (BPF_LOG_STATS), which name why a
 * program was refused without a second verification for the log, in a
 * slot of its own per program (ST_LOG_SLOTS of STEPTIME_VERIFIER_ERR):
 * libbpf closes every program of a load that failed, so the slots tell
 * which one the verifier refused.
 */
#define STEPTIME_VERIFIER_LOG	(1u << 22)
#define STEPTIME_VERIFIER_ERR	(1u << 14)
#define ST_LOG_SLOTS		64
#define ST_LOG_LEVEL_STATS	4

/* loader.c: the load's context */
ST_HIDDEN void why_add(struct load_ctx *c, const char *fmt, ...);
ST_HIDDEN void checkpoint(struct load_ctx *c);

/* probe.c: what the kernel offers */
ST_HIDDEN bool kallsyms_has(const struct hook *h);
ST_HIDDEN bool module_btf_has(const struct hook *h);
ST_HIDDEN const char *kprobe_target(const struct hook *h, char *buf,
				    size_t len);
ST_HIDDEN int ensure_mounts(const char *pin_dir);
ST_HIDDEN int fentry_probe(const struct hook *h);
ST_HIDDEN __u64 load_caps_missing(void);
ST_HIDDEN int btf_check(struct load_ctx *c);

/* device.c: the device and its driver */
ST_HIDDEN const struct profile *profile_find(const char *name,
					     const char *device);
ST_HIDDEN __u64 counter_freq(const struct load_ctx *c);
ST_HIDDEN int stars_version(struct load_ctx *c);
ST_HIDDEN int resolve_device(struct load_ctx *c);

/* attach.c: the attach ladder */
ST_HIDDEN bool mode_available(struct load_ctx *c, int mode);
ST_HIDDEN void links_destroy(struct load_ctx *c);
ST_HIDDEN int link_add(struct load_ctx *c, struct bpf_program *prog,
		       struct bpf_link *link);
ST_HIDDEN int mode_try_loops(struct load_ctx *c, int mode, bool loop);

/* uprobes.c: the ring kick's and the HAL's uprobes */
ST_HIDDEN int kick_libs(struct load_ctx *c, const char *libs);
ST_HIDDEN void kick_attach(struct load_ctx *c);
ST_HIDDEN void hal_attach(struct load_ctx *c);
ST_HIDDEN void hal_autoload(struct load_ctx *c);

/* pin.c: pinning, publishing and unloading */
ST_HIDDEN int pin_path(char *buf, size_t len, const char *dir,
		       const char *name);
ST_HIDDEN int pin_all(struct load_ctx *c);
ST_HIDDEN void bpffs_plan(struct load_ctx *c);
ST_HIDDEN int write_info(struct load_ctx *c, int mode);
ST_HIDDEN int private_dir(char *buf, size_t len, const char *pin_dir,
			  int pid);
ST_HIDDEN int leftovers(const char *pin_dir, bool remove);
ST_HIDDEN int publish(struct load_ctx *c);
ST_HIDDEN int unlink_dir(const char *dir);

/* read.c: the pinned maps read back */
ST_HIDDEN int pinned_open(const char *pin_dir, const char *name, int flags);

#endif /* _LOADER_INT_H */
