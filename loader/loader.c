// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Load, attach and pin steptime's BPF program; unload it; read what it
 * attached and its counters.
 *
 * Attach modes are probed best first (fentry, kprobe, tp_btf, tracepoint)
 * by what the kernel offers (kallsyms, BTF, tracefs) and then by trying:
 * the first mode that loads and attaches wins, and the reasons the better
 * ones failed are kept in the pinned "info" map for `steptime status`.
 *
 * A load is atomic: everything is pinned in a private directory next to the
 * pin directory ("<name>-tmp-<pid>-<start time>", on the same bpffs) and
 * renamed into place with RENAME_NOREPLACE, so a racing loader gets -EEXIST
 * and readers never see half a load. A loader killed before the rename
 * leaves only its private directory, which names a dead process: `steptime
 * status` reports it, and `unload` and the next `load` remove it.
 *
 * No process-wide libbpf state is set here (libbpf_set_print() is the
 * steptime command's business): verifier logs are per object.
 *
 * This file keeps steptime__load() and its context's life; the rest is by
 * concern: probe.c (what the kernel offers), device.c (the device and its
 * driver profile), attach.c (the attach ladder), uprobes.c (the ring
 * kick's and the HAL's uprobes), hal.c (finding libascend_hal.so), pin.c
 * (pinning, publishing, unloading) and read.c (the pins read back), with
 * loader_int.h between them.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>

#include "loader_int.h"

void why_add(struct load_ctx *c, const char *fmt, ...)
{
	size_t len = strlen(c->why);
	va_list ap;

	if (len && len + 2 < sizeof(c->why)) {
		strcpy(c->why + len, "; ");
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(c->why + len, sizeof(c->why) - len, fmt, ap);
	va_end(ap);
}

/*
 * Test hook: with STEPTIME_LOAD_KILL_AT=N in the environment the loader
 * kills itself (SIGKILL: nothing of its own runs after) at its Nth
 * checkpoint, one after each step that leaves something in bpffs or the
 * kernel. selftests/loader kills a load at every one of them.
 */
void checkpoint(struct load_ctx *c)
{
	if (c->kill_at && ++c->checkpoints == c->kill_at)
		raise(SIGKILL);
}

int steptime__load(const struct steptime_load_opts *opts)
{
	static const int order[] = {
		STEPTIME_ATTACH_FENTRY, STEPTIME_ATTACH_KPROBE,
		STEPTIME_ATTACH_TP_BTF, STEPTIME_ATTACH_TRACEPOINT,
	};
	struct load_ctx c = { .opts = opts };
	const char *kill_at = getenv("STEPTIME_LOAD_KILL_AT");
	char path[PATH_MAX];
	int mode = STEPTIME_ATTACH_AUTO, i, err = -EOPNOTSUPP;
	__u64 missing;
	bool loop;

	if (opts && opts->sz < offsetof(struct steptime_load_opts, verbose) + sizeof(int)) {
		fprintf(stderr, "steptime: steptime_load_opts of %zu bytes: older than the first layout\n",
			opts->sz);
		return -EINVAL;
	}
	if (opts && (opts->attach_mode < STEPTIME_ATTACH_AUTO ||
		     opts->attach_mode > STEPTIME_ATTACH_TRACEPOINT)) {
		fprintf(stderr, "steptime: unknown attach mode %d\n",
			opts->attach_mode);
		return -EINVAL;
	}
	missing = load_caps_missing();
	if (missing) {
		/* A container given some capabilities: name the one it lacks. */
		fprintf(stderr, "steptime: must be run as root (loading BPF needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN): %s%s%s missing\n",
			missing & 1ull << CAP_BPF ? "CAP_BPF" : "",
			missing == (1ull << CAP_BPF | 1ull << CAP_PERFMON) ? " and " : "",
			missing & 1ull << CAP_PERFMON ? "CAP_PERFMON" : "");
		return -EPERM;
	}
	if (opts)
		mode = opts->attach_mode;
	c.pin_dir = steptime__pin_dir(opts ? opts->pin_dir : NULL);
	c.kill_at = kill_at ? atoi(kill_at) : 0;

	err = resolve_device(&c);
	if (err)
		return err;
	c.prof = profile_find(opts ? opts->profile : NULL, c.device);
	if (!c.prof) {
		fprintf(stderr, "steptime: unknown driver profile %s\n", opts->profile);
		return -EINVAL;
	}
	err = btf_check(&c);
	if (err)
		return err;
	/* What the device is: read before anything is touched. */
	c.freq = counter_freq(&c);
	if (!c.freq) {
		fprintf(stderr, "steptime: the device counter frequency of %s cannot be read (profile %s): give it with --freq HZ\n",
			c.device, c.prof->name);
		return -EINVAL;
	}
	if (c.freq > STEPTIME_FREQ_MAX_HZ) {
		fprintf(stderr, "steptime: a device counter frequency of %llu Hz is above %llu Hz, which the tick conversion allows\n",
			(unsigned long long)c.freq, STEPTIME_FREQ_MAX_HZ);
		return -EINVAL;
	}
	err = stars_version(&c);
	if (err)
		return err;
	err = ensure_mounts(c.pin_dir);
	if (err)
		return err;
	err = private_dir(c.tmp_dir, sizeof(c.tmp_dir), c.pin_dir, getpid());
	if (err) {
		fprintf(stderr, "steptime: bad pin directory %s\n", c.pin_dir);
		return err == -ENAMETOOLONG ? err : -EINVAL;
	}
	leftovers(c.pin_dir, true);
	if (pin_path(path, sizeof(path), c.pin_dir, "info") == 0 &&
	    access(path, F_OK) == 0) {
		fprintf(stderr, "steptime: already loaded at %s (steptime unload first)\n",
			c.pin_dir);
		return -EEXIST;
	}
	loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT,
				       BPF_FUNC_loop, NULL) > 0 &&
	       !OPT(opts, no_bpf_loop);
	err = kick_libs(&c, OPT(opts, libs));
	if (err) {
		if (err == -E2BIG)
			fprintf(stderr, "steptime: more than %d libsteptime files given\n",
				STEPTIME_KICK_LIBS);
		else
			fprintf(stderr, "steptime: libsteptime path: %s\n",
				strerror(-err));
		return err;
	}
	c.journal = OPT(opts, journal);
	err = hal_libs_find(&c.hal, OPT(opts, hal));
	if (err) {
		fprintf(stderr, "steptime: HAL library %s: %s\n",
			c.hal.bad[0] ? c.hal.bad : "path",
			err == -EINVAL ? "not a file" : strerror(-err));
		return err;
	}
	c.log_size = opts && opts->verbose ? STEPTIME_VERIFIER_LOG :
		     ST_LOG_SLOTS * STEPTIME_VERIFIER_ERR;
	c.log_buf = calloc(1, c.log_size);
	if (!c.log_buf)
		return -ENOMEM;

	err = -EOPNOTSUPP;
	for (i = 0; i < (int)(sizeof(order) / sizeof(order[0])); i++) {
		if (mode != STEPTIME_ATTACH_AUTO && mode != order[i])
			continue;
		if (!mode_available(&c, order[i]))
			continue;
		/* raw_tp: the same hook without BTF-typed arguments. */
		c.raw_tp = order[i] == STEPTIME_ATTACH_TP_BTF && !c.kernel_btf;
		err = mode_try_loops(&c, order[i], loop);
		if (err && order[i] == STEPTIME_ATTACH_TP_BTF && !c.raw_tp) {
			c.raw_tp = true;
			err = mode_try_loops(&c, order[i], loop);
		}
		if (!err) {
			mode = order[i];
			break;
		}
	}
	free(c.log_buf);
	if (err) {
		fprintf(stderr, "steptime: no attach mode works: %s\n", c.why);
		return err;
	}
	checkpoint(&c);		/* attached, nothing pinned: fds only */
	bpffs_plan(&c);
	err = write_info(&c, mode);
	if (!err && mkdir(c.tmp_dir, 0700))
		err = -errno;
	if (!err) {
		checkpoint(&c);
		err = pin_all(&c);
		if (!err)
			err = publish(&c);
		if (err)
			unlink_dir(c.tmp_dir);
	}
	if (err && err != -EEXIST)
		fprintf(stderr, "steptime: pinning under %s failed: %s\n",
			c.pin_dir, strerror(-err));
	checkpoint(&c);		/* complete */
	links_destroy(&c);
	steptime_bpf__destroy(c.skel);
	return err;
}
