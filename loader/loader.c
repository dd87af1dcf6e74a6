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
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
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

/* The id of the program that link @name, pinned in @dir, runs. */
static int link_prog_id(const char *dir, const char *name, __u32 *id)
{
	struct bpf_link_info li = {};
	__u32 len = sizeof(li);
	int fd, err;

	fd = pinned_open(dir, name, 0);
	if (fd < 0)
		return fd;
	err = bpf_obj_get_info_by_fd(fd, &li, &len) ? -errno : 0;
	close(fd);
	*id = li.prog_id;
	return err;
}

/* The value size of map @fd; 0 when it cannot be read. */
static __u32 map_value_size(int fd)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : mi.value_size;
}

int pinned_open(const char *pin_dir, const char *name, int flags)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = flags);
	char path[PATH_MAX];
	int fd;

	if (pin_path(path, sizeof(path), steptime__pin_dir(pin_dir), name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get_opts(path, &o);
	return fd < 0 ? -errno : fd;
}

int steptime__read_info(const char *pin_dir, struct steptime_info *inf)
{
	__u32 zero = 0;
	int fd, err;

	fd = pinned_open(pin_dir, "info", BPF_F_RDONLY);
	if (fd < 0)
		return fd;
	err = map_value_size(fd) == sizeof(*inf) ? 0 : -EPROTO;
	if (!err)
		err = bpf_map_lookup_elem(fd, &zero, inf) ? -errno : 0;
	close(fd);
	if (!err && inf->magic != STEPTIME_MAGIC)
		err = -EPROTO;
	return err;
}

int steptime__read_progs(const char *pin_dir, struct steptime_prog *progs,
			 int max)
{
	struct bpf_prog_info pi;
	char dir[PATH_MAX];
	struct dirent *de;
	__u32 len, id;
	int n = 0, pfd, err = 0;
	DIR *d;

	if (!progs || max < 0)
		return -EINVAL;
	if (pin_path(dir, sizeof(dir), steptime__pin_dir(pin_dir), "links"))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == max) {		/* one more than there is room for */
			err = -E2BIG;
			break;
		}
		err = link_prog_id(dir, de->d_name, &id);
		if (err)
			break;
		pfd = bpf_prog_get_fd_by_id(id);
		if (pfd < 0) {
			err = -errno;
			break;
		}
		memset(&pi, 0, sizeof(pi));
		len = sizeof(pi);
		err = bpf_obj_get_info_by_fd(pfd, &pi, &len) ? -errno : 0;
		close(pfd);
		if (err)
			break;
		memset(&progs[n], 0, sizeof(progs[n]));
		snprintf(progs[n].name, sizeof(progs[n].name), "%.63s",
			 de->d_name);
		progs[n].id = id;
		progs[n].verified_insns = pi.verified_insns;
		progs[n].xlated_bytes = pi.xlated_prog_len;
		progs[n].run_cnt = pi.run_cnt;
		progs[n].run_time_ns = pi.run_time_ns;
		n++;
	}
	closedir(d);
	return err ?: n;
}

int steptime__read_counters(const char *pin_dir, struct steptime_counters *cnt)
{
	size_t n = sizeof(*cnt) / sizeof(__u64), i;
	int ncpu = libbpf_num_possible_cpus(), fd, err, cpu;
	__u64 *vals, *sum = (__u64 *)cnt;
	__u32 zero = 0;

	if (ncpu < 0)
		return ncpu;
	fd = pinned_open(pin_dir, "counters", BPF_F_RDONLY);
	if (fd < 0)
		return fd;
	vals = calloc((size_t)ncpu, sizeof(*cnt));
	if (!vals) {
		close(fd);
		return -ENOMEM;
	}
	err = bpf_map_lookup_elem(fd, &zero, vals) ? -errno : 0;
	memset(cnt, 0, sizeof(*cnt));
	for (cpu = 0; !err && cpu < ncpu; cpu++)
		for (i = 0; i < n; i++)
			sum[i] += vals[cpu * n + i];
	free(vals);
	close(fd);
	return err;
}
