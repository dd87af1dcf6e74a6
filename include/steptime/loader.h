/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Loading and unloading steptime's BPF program (root only).
 */
#ifndef _STEPTIME_LOADER_H
#define _STEPTIME_LOADER_H

#include <stddef.h>
#include <linux/types.h>
#include <steptime/export.h>
#include <steptime/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct steptime_load_opts - how to load steptime
 * @sz: sizeof(struct steptime_load_opts), for forward compatibility
 * @device: the driver's manager node; NULL: /dev/davinci_manager if it
 *	exists, else /dev/npusim_manager
 * @attach_mode: STEPTIME_ATTACH_*; AUTO probes the best the kernel allows
 * @pin_dir: where maps and links are pinned; NULL: STEPTIME_PIN_DIR
 * @profile: driver profile ("ascend", "npusim"); NULL: from the device name
 * @counter_freq_hz: device counter frequency; 0: read it from the device
 *	where the driver exposes it, else the load fails with -EINVAL (a
 *	frequency is never assumed); above STEPTIME_FREQ_MAX_HZ (given or
 *	read), the load fails with -EINVAL
 * @map_mode: file mode of the pinned maps the step API opens (marks) and
 *	reads (steps, counters, info); 0: 0600 (root only)
 * @map_gid: group owning them; (gid_t)-1 or 0 with @map_mode 0: unchanged
 * @verbose: print libbpf's messages
 * @no_bpf_loop: use the bounded fallback loops even where bpf_loop()
 *	exists (tests of pre-5.17 behaviour: SEND batches above 64 SQEs are
 *	counted but not timed)
 * @stars_version: STARS SQE header layout, 1 (910B, 910_93) or 2 (950);
 *	0: read from the driver (its chip info, as halGetChipInfo()), else
 *	the load fails with -EINVAL (a layout is never assumed). Where the
 *	driver names the chip, a value that contradicts it fails with -EINVAL
 * @btf_path: a BTF file of the running kernel for CO-RE relocations, for a
 *	kernel without /sys/kernel/btf/vmlinux (BTFHub's files, or `pahole
 *	--btf_encode_detached FILE vmlinux`); NULL: the kernel's own. Modes that
 *	attach by the kernel's BTF ids (fentry, tp_btf) need the kernel's own
 *	and are skipped without it (tp_btf falls back to raw_tp)
 *
 * A load is atomic: a concurrent load of the same @pin_dir fails with
 * -EEXIST, readers see all of it or nothing, and a loader killed at any
 * point leaves a complete load or only a private directory beside @pin_dir
 * that steptime__load_leftovers() counts and steptime__unload() (or the
 * next load) removes. (Test hook: STEPTIME_LOAD_KILL_AT=N in the
 * environment SIGKILLs the loader at its Nth step.) The library sets no
 * process-wide libbpf state: a program wanting libbpf's messages calls
 * libbpf_set_print() itself.
 * @libs: the libsteptime.so files whose processes' marks are consumed
 *	through a uprobe on their steptime__ring_kick() (':'-separated);
 *	NULL: the one the dynamic loader finds for "libsteptime.so.1". A
 *	process whose library has no probe (linked statically, elsewhere)
 *	has its marks consumed at its ioctls on the device, as before.
 *	A path of PATH_MAX bytes or more fails the load with -ENAMETOOLONG,
 *	more than STEPTIME_KICK_LIBS files with -E2BIG.
 * @hal: the libascend_hal.so files whose entry points get uprobes, so that
 *	submissions to mapped SQs (910B's uio_t, 950's uio_d) are seen in the
 *	submitting thread (':'-separated, up to STEPTIME_HAL_LIBS); NULL:
 *	those running processes map, in $LD_LIBRARY_PATH's directories,
 *	under $ASCEND_HOME_PATH's Ascend root
 *	and in /usr/local/Ascend/driver/lib64{/driver,}. A process whose
 *	library has no probe has its mapped SQs' steps flagged
 *	(STEPTIME_F_UIO, figures absent), never counted short.
 * @journal: non-zero: only halSqCqAllocate() gets the HAL's uprobes; the
 *	mapped SQs' sends and heads are counted from the journal each
 *	process's libsteptime writes into its mark ring (lib/sends.c), with
 *	no trap per task. A process whose ring says it keeps none has its
 *	mapped SQs' steps flagged.
 */
/*
 * The highest counter frequency: the BPF program converts ticks to ns as
 * ticks / f * 10^9 + (ticks % f) * 10^9 / f, exact while (f - 1) * 10^9
 * fits in 64 bits (f up to 1.8e10). NPU counters run at tens of MHz.
 */
#define STEPTIME_FREQ_MAX_HZ	10000000000ull	/* 10 GHz */

struct steptime_load_opts {
	size_t sz;
	const char *device;
	int attach_mode;
	const char *pin_dir;
	const char *profile;
	__u64 counter_freq_hz;
	unsigned int map_mode;
	int map_gid;
	int verbose;
	int no_bpf_loop;
	int stars_version;
	const char *btf_path;
	const char *libs;
	const char *hal;
	int journal;
	size_t :0;
};
#define steptime_load_opts__last_field journal

/**
 * steptime__load() - load, attach and pin steptime's BPF program
 * @opts: options, or NULL for the defaults
 *
 * Return: 0 on success; -EPERM without CAP_BPF and CAP_PERFMON (or
 * CAP_SYS_ADMIN), -EEXIST when already loaded at the pin directory,
 * -ENODEV when the device is missing (or, without @device, neither
 * default exists), -ENOENT when the pin directory's parent does not, -EOPNOTSUPP when no attach mode works
 * or the kernel has no BTF and @btf_path is NULL, -EINVAL (-ENOENT) when
 * @btf_path is not a kernel's BTF (does not exist), another negative errno
 * otherwise. The reason is also printed to stderr.
 */
STEPTIME_API int steptime__load(const struct steptime_load_opts *opts);

/*
 * Instructions the verifier may process for any one program: a quarter of
 * its limit, so that kernels' builds that walk more states still load it
 * (one 6.18 build walked twice what another did). make check enforces it.
 */
#define STEPTIME_VERIFIER_BUDGET	250000

/**
 * struct steptime_prog - a program steptime attached, as the kernel has it
 * @name: its link's name under the pin directory (the program's name)
 * @id: the program's id (bpftool prog show id ID)
 * @verified_insns: instructions the verifier processed to accept it
 * @xlated_bytes: its size after the verifier's rewrites
 * @run_cnt: runs counted while kernel.bpf_stats_enabled is 1
 * @run_time_ns: their total time
 */
struct steptime_prog {
	char name[64];
	__u32 id;
	__u32 verified_insns;
	__u32 xlated_bytes;
	__u64 run_cnt;
	__u64 run_time_ns;
};

/* The most programs one load attaches: room for steptime__read_progs(). */
#define STEPTIME_MAX_PROGS	48

/**
 * steptime__read_progs() - the programs a load attached
 * @pin_dir: NULL for STEPTIME_PIN_DIR
 * @progs: filled with up to @max entries
 * @max: room in @progs (STEPTIME_MAX_PROGS holds any load's)
 *
 * Return: the number of entries filled; -E2BIG when more than @max are
 * attached (@progs holds @max of them), -ENOENT when nothing is loaded
 * there, -EACCES without the rights to read programs (root), -EINVAL for
 * a NULL @progs or negative @max, another negative errno otherwise.
 */
STEPTIME_API int steptime__read_progs(const char *pin_dir,
				      struct steptime_prog *progs, int max);

/**
 * steptime__unload() - detach and unpin everything steptime pinned
 * @pin_dir: NULL for STEPTIME_PIN_DIR
 *
 * Also removes what killed loaders left beside @pin_dir. Processes that
 * mark keep running: their marks fail (see steptime__mark()) until the
 * next load, which they pick up by themselves. Returns once the kernel has
 * freed the programs (it does so from a workqueue; a module they were
 * attached to, the driver's, stays in use until then), or after 5 s when
 * another holder keeps one.
 *
 * Return: 0 on success, -ENOENT when nothing is loaded there (nor left by a
 * killed load), -ENOTEMPTY when @pin_dir holds no load but files that are
 * not steptime's (left alone), another negative errno otherwise.
 */
STEPTIME_API int steptime__unload(const char *pin_dir);

/**
 * steptime__load_leftovers() - partial loads that killed loaders left
 * @pin_dir: NULL for STEPTIME_PIN_DIR
 *
 * Their links keep programs attached until steptime__unload() or the next
 * steptime__load() removes them.
 *
 * Return: how many (0: none).
 */
STEPTIME_API int steptime__load_leftovers(const char *pin_dir);

/**
 * steptime__read_info() - what the loader attached
 * @pin_dir: NULL for STEPTIME_PIN_DIR
 * @info: filled on success
 *
 * Return: 0, -ENOENT when not loaded, -EACCES without permission.
 */
STEPTIME_API int steptime__read_info(const char *pin_dir,
				     struct steptime_info *info);

/**
 * steptime__read_counters() - the global counters, summed over CPUs
 * @pin_dir: NULL for STEPTIME_PIN_DIR
 * @cnt: filled on success
 *
 * Return: 0, -ENOENT when not loaded, -EACCES without permission.
 */
STEPTIME_API int steptime__read_counters(const char *pin_dir,
					 struct steptime_counters *cnt);

/** steptime__attach_mode_str() - "fentry", "kprobe", "tp_btf", ... */
STEPTIME_API const char *steptime__attach_mode_str(int mode);

#ifdef __cplusplus
}
#endif

#endif /* _STEPTIME_LOADER_H */
