// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Load, attach and pin steptime's BPF program; unload it; read what it
 * attached and its counters.
 *
 * Attach modes are probed best first (fentry, kprobe, tp_btf, tracepoint)
 * by what the kernel offers (kallsyms, BTF, tracefs) and then by trying:
 * the first mode that loads and attaches wins, and the reasons the better
 * ones failed are kept in the pinned "info" map for `steptime status`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ascend_trs.h"
#include "steptime/loader.h"
#include "steptime.skel.h"

#define BPFFS_ROOT	"/sys/fs/bpf"
#define TRACEFS_ROOT	"/sys/kernel/tracing"

/* An opts field, or 0 when @o is NULL or predates the field. */
#define OPT(o, f)							\
	((o) && (o)->sz >= offsetof(typeof(*(o)), f) + sizeof((o)->f) ?	\
	 (o)->f : 0)

struct profile {
	const char *name;
	const char *ioctl_fn;	/* the manager node's unlocked_ioctl */
	const char *cq_fn;	/* called for every completion report */
};

/* The real driver's names, and npusim's mirror of them. */
static const struct profile profiles[] = {
	{ "ascend", "drv_ascend_intf_ioctl", "trs_logic_cq_enque" },
	{ "npusim", "npusim_manager_ioctl", "npusim_logic_cq_enque" },
	{ "generic", NULL, NULL },	/* any char device: syscall modes */
};

static const char *const mode_names[] = {
	[STEPTIME_ATTACH_AUTO] = "auto",
	[STEPTIME_ATTACH_FENTRY] = "fentry",
	[STEPTIME_ATTACH_KPROBE] = "kprobe",
	[STEPTIME_ATTACH_TP_BTF] = "tp_btf",
	[STEPTIME_ATTACH_TRACEPOINT] = "tracepoint",
};

const char *steptime__attach_mode_str(int mode)
{
	if (mode < 0 || mode > STEPTIME_ATTACH_TRACEPOINT)
		return "unknown";
	return mode_names[mode];
}

struct load_ctx {
	const struct steptime_load_opts *opts;
	const struct profile *prof;
	const char *pin_dir;
	const char *device;
	__u32 rdev;
	__u64 freq;
	bool has_loop;
	bool raw_tp;		/* tp_btf mode fell back to raw_tp */
	char why[sizeof(((struct steptime_info *)0)->reason)];
	struct steptime_bpf *skel;
	struct bpf_link *links[5];
	const char *link_names[5];
	int nlinks;
};

static void why_add(struct load_ctx *c, const char *fmt, ...)
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

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return 0;
}

static int libbpf_verbose(enum libbpf_print_level level, const char *fmt,
			  va_list ap)
{
	return vfprintf(stderr, fmt, ap);
}

static bool kallsyms_has(const char *fn)
{
	char line[512], name[256];
	bool found = false;
	FILE *f;

	if (!fn)
		return false;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %255s", name) == 1 &&
		    strcmp(name, fn) == 0)
			found = true;
	}
	fclose(f);
	return found;
}

static bool fs_is(const char *path, long magic)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == magic;
}

/* bpffs and tracefs at their usual places; mounted where that is safe. */
static int ensure_mounts(const char *pin_dir)
{
	char parent[PATH_MAX], *slash;

	if (!fs_is(BPFFS_ROOT, BPF_FS_MAGIC) &&
	    strncmp(pin_dir, BPFFS_ROOT "/", strlen(BPFFS_ROOT) + 1) == 0 &&
	    mount("bpf", BPFFS_ROOT, "bpf", 0, "mode=0755")) {
		fprintf(stderr, "steptime: bpffs is not mounted at %s and mounting it failed: %s\n",
			BPFFS_ROOT, strerror(errno));
		return -ENOTSUP;
	}
	snprintf(parent, sizeof(parent), "%s", pin_dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	if (!fs_is(parent, BPF_FS_MAGIC)) {
		fprintf(stderr, "steptime: %s is not on a bpffs mount\n", pin_dir);
		return -EINVAL;
	}
	if (access(TRACEFS_ROOT "/events", F_OK) &&
	    mount("tracefs", TRACEFS_ROOT, "tracefs", 0, NULL) &&
	    errno != EBUSY)
		/* Not fatal: only the tracepoint mode needs it. */
		fprintf(stderr, "steptime: tracefs not mounted (%s); the tracepoint mode is unavailable\n",
			strerror(errno));
	return 0;
}

static const struct profile *profile_find(const char *name, const char *device)
{
	const char *base = strrchr(device, '/');
	size_t i;

	base = base ? base + 1 : device;
	if (!name) {
		if (strncmp(base, "davinci_manager", 15) == 0)
			name = "ascend";
		else if (strncmp(base, NPUSIM_DEV_NAME, strlen(NPUSIM_DEV_NAME)) == 0)
			name = "npusim";
		else
			name = "generic";
	}
	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (strcmp(profiles[i].name, name) == 0)
			return &profiles[i];
	return NULL;
}

/* npusim says its counter frequency; a real device is taken at 100 MHz. */
static __u64 counter_freq(const struct load_ctx *c)
{
	struct npusim_clock clk = {};
	int fd;

	if (c->opts && c->opts->counter_freq_hz)
		return c->opts->counter_freq_hz;
	if (strcmp(c->prof->name, "npusim") == 0) {
		fd = open(c->device, O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			if (ioctl(fd, NPUSIM_IOC_CLOCK, &clk) == 0 &&
			    clk.counter_freq_hz) {
				close(fd);
				return clk.counter_freq_hz;
			}
			close(fd);
		}
	}
	return 100000000ull;
}

/*
 * Task-local storage (5.11) keeps a call's entry a pointer away from the
 * task; tracing programs (fentry, tp_btf) have it with the map type, the
 * others only where the kernel lets their type call the helpers.
 */
static bool task_storage_ok(int mode, bool raw_tp)
{
	enum bpf_prog_type t;

	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) <= 0)
		return false;
	switch (mode) {
	case STEPTIME_ATTACH_FENTRY:
		return true;
	case STEPTIME_ATTACH_TP_BTF:
		if (!raw_tp)
			return true;
		t = BPF_PROG_TYPE_RAW_TRACEPOINT;
		break;
	case STEPTIME_ATTACH_KPROBE:
		t = BPF_PROG_TYPE_KPROBE;
		break;
	default:
		t = BPF_PROG_TYPE_TRACEPOINT;
		break;
	}
	return libbpf_probe_bpf_helper(t, BPF_FUNC_task_storage_get, NULL) > 0 &&
	       libbpf_probe_bpf_helper(t, BPF_FUNC_get_current_task_btf, NULL) > 0;
}

static struct bpf_program *const *mode_progs(struct steptime_bpf *s, int mode,
					     bool raw_tp, int *n)
{
	static struct bpf_program *p[3];

	*n = 2;
	switch (mode) {
	case STEPTIME_ATTACH_FENTRY:
		p[0] = s->progs.fentry_ioctl;
		p[1] = s->progs.fexit_ioctl;
		p[2] = s->progs.fentry_cq_enque;
		*n = 3;
		break;
	case STEPTIME_ATTACH_KPROBE:
		p[0] = s->progs.kprobe_ioctl;
		p[1] = s->progs.kretprobe_ioctl;
		p[2] = s->progs.kprobe_cq_enque;
		*n = 3;
		break;
	case STEPTIME_ATTACH_TP_BTF:
		p[0] = raw_tp ? s->progs.rawtp_sys_enter : s->progs.tpbtf_sys_enter;
		p[1] = raw_tp ? s->progs.rawtp_sys_exit : s->progs.tpbtf_sys_exit;
		break;
	default:
		p[0] = s->progs.tp_sys_enter_ioctl;
		p[1] = s->progs.tp_sys_exit_ioctl;
		break;
	}
	return p;
}

/* What the kernel offers for a mode, before trying it. */
static bool mode_available(struct load_ctx *c, int mode)
{
	const char *m = steptime__attach_mode_str(mode);

	switch (mode) {
	case STEPTIME_ATTACH_FENTRY:
	case STEPTIME_ATTACH_KPROBE:
		if (!c->prof->ioctl_fn) {
			why_add(c, "%s: profile %s names no handler", m,
				c->prof->name);
			return false;
		}
		if (!kallsyms_has(c->prof->ioctl_fn)) {
			why_add(c, "%s: %s not in kallsyms (driver not loaded?)",
				m, c->prof->ioctl_fn);
			return false;
		}
		return true;
	case STEPTIME_ATTACH_TP_BTF:
		return true;
	case STEPTIME_ATTACH_TRACEPOINT:
		if (access(TRACEFS_ROOT "/events/syscalls/sys_enter_ioctl", F_OK) &&
		    access("/sys/kernel/debug/tracing/events/syscalls/sys_enter_ioctl", F_OK)) {
			why_add(c, "tracepoint: syscalls:sys_enter_ioctl missing (tracefs, CONFIG_FTRACE_SYSCALLS)");
			return false;
		}
		return true;
	}
	return false;
}

static void links_destroy(struct load_ctx *c)
{
	while (c->nlinks > 0)
		bpf_link__destroy(c->links[--c->nlinks]);
}

static int link_add(struct load_ctx *c, struct bpf_program *prog,
		    struct bpf_link *link)
{
	int err = libbpf_get_error(link);

	if (err)
		return err;
	c->link_names[c->nlinks] = bpf_program__name(prog);
	c->links[c->nlinks++] = link;
	return 0;
}

static int mode_attach(struct load_ctx *c, int mode, bool cq)
{
	struct steptime_bpf *s = c->skel;
	struct bpf_program *const *p;
	struct bpf_link *l;
	int n, i, err;

	p = mode_progs(s, mode, c->raw_tp, &n);
	if (!cq && n == 3)
		n = 2;
	for (i = 0; i < n; i++) {
		if (mode == STEPTIME_ATTACH_KPROBE)
			l = bpf_program__attach_kprobe(p[i], p[i] == s->progs.kretprobe_ioctl,
						       i == 2 ? c->prof->cq_fn : c->prof->ioctl_fn);
		else
			l = bpf_program__attach(p[i]);
		err = link_add(c, p[i], l);
		if (err)
			return err;
	}
	l = bpf_program__attach(s->progs.tp_sched_process_exit);
	err = link_add(c, s->progs.tp_sched_process_exit, l);
	if (err)
		return err;
	/* Where it attaches, marks written after the last ioctl count too. */
	l = bpf_program__attach(s->progs.tp_sys_enter_exit_group);
	if (libbpf_get_error(l))
		return 0;
	return link_add(c, s->progs.tp_sys_enter_exit_group, l);
}

/* Open, configure, load and attach the skeleton in one mode. */
static int mode_try(struct load_ctx *c, int mode)
{
	const char *m = steptime__attach_mode_str(mode);
	struct bpf_program *prog, *const *p;
	bool cq = false;
	int n, i, err;

	c->skel = steptime_bpf__open();
	if (!c->skel)
		return -errno;
	c->skel->rodata->target_rdev = c->rdev;
	c->skel->rodata->counter_freq_hz = c->freq;
	c->skel->rodata->has_bpf_loop = c->has_loop;
	if (mode == STEPTIME_ATTACH_FENTRY || mode == STEPTIME_ATTACH_KPROBE)
		cq = kallsyms_has(c->prof->cq_fn);
	c->skel->rodata->cq_hook = cq;
	c->skel->rodata->use_task_storage = task_storage_ok(mode, c->raw_tp);

	bpf_object__for_each_program(prog, c->skel->obj)
		bpf_program__set_autoload(prog, false);
	p = mode_progs(c->skel, mode, c->raw_tp, &n);
	if (!cq && n == 3)
		n = 2;
	for (i = 0; i < n; i++) {
		bpf_program__set_autoload(p[i], true);
		if (mode == STEPTIME_ATTACH_FENTRY)
			bpf_program__set_attach_target(p[i], 0, i == 2 ?
						       c->prof->cq_fn :
						       c->prof->ioctl_fn);
	}
	bpf_program__set_autoload(c->skel->progs.tp_sched_process_exit, true);
	bpf_program__set_autoload(c->skel->progs.tp_sys_enter_exit_group, true);

	err = steptime_bpf__load(c->skel);
	if (err) {
		why_add(c, "%s: load failed: %s", m, strerror(-err));
		goto fail;
	}
	err = mode_attach(c, mode, cq);
	if (err) {
		why_add(c, "%s: attach failed: %s", m, strerror(-err));
		goto fail;
	}
	return 0;
fail:
	links_destroy(c);
	steptime_bpf__destroy(c->skel);
	c->skel = NULL;
	return err;
}

static int pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Maps the step API and readers open; the rest stay private. */
static struct bpf_map *const *public_maps(struct steptime_bpf *s, int *n)
{
	static struct bpf_map *m[5];

	m[0] = s->maps.marks;
	m[1] = s->maps.steps;
	m[2] = s->maps.events;
	m[3] = s->maps.counters;
	m[4] = s->maps.info;
	*n = 5;
	return m;
}

static int pin_all(struct load_ctx *c)
{
	const struct steptime_load_opts *o = c->opts;
	unsigned int mode = o && o->map_mode ? o->map_mode : 0600;
	int gid = o && o->map_mode ? o->map_gid : -1;
	struct bpf_map *const *maps;
	char path[PATH_MAX];
	int i, n, err;

	if (mkdir(c->pin_dir, 0755) && errno != EEXIST)
		return -errno;
	maps = public_maps(c->skel, &n);
	for (i = 0; i < n; i++) {
		err = pin_path(path, sizeof(path), c->pin_dir,
			       bpf_map__name(maps[i]));
		if (!err)
			err = bpf_map__pin(maps[i], path);
		if (err)
			return err;
		/*
		 * Read-only for everyone but root, marks included: each
		 * process's marks are in its own memory (steptime/abi.h).
		 */
		if (chmod(path, (mode & 0444) | 0600))
			return -errno;
		if (gid >= 0 && chown(path, -1, gid))
			return -errno;
	}
	err = pin_path(path, sizeof(path), c->pin_dir, "links");
	if (err)
		return err;
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	for (i = 0; i < c->nlinks; i++) {
		char lp[PATH_MAX];

		err = pin_path(lp, sizeof(lp), path, c->link_names[i]);
		if (!err)
			err = bpf_link__pin(c->links[i], lp);
		if (err)
			return err;
	}
	/* Others must be able to walk to the maps their mode grants. */
	if (mode & 0066 && chmod(c->pin_dir, 0755))
		return -errno;
	if (mode & 0066) {
		struct stat st;

		if (stat(BPFFS_ROOT, &st) == 0 && !(st.st_mode & 0001))
			chmod(BPFFS_ROOT, st.st_mode | 0011);
	}
	return 0;
}

static int write_info(struct load_ctx *c, int mode)
{
	struct steptime_marks_hdr hdr = {
		.magic = STEPTIME_MAGIC,
		.version = STEPTIME_ABI_VERSION,
		.dev_rdev = c->rdev,
	};
	struct steptime_info inf = {
		.magic = STEPTIME_MAGIC,
		.version = STEPTIME_ABI_VERSION,
		.attach_mode = mode,
		.dev_rdev = c->rdev,
		.counter_freq_hz = c->freq,
	};
	struct timespec ts;
	__u32 zero = 0;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	inf.loaded_ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	snprintf(inf.device, sizeof(inf.device), "%s", c->device);
	snprintf(inf.profile, sizeof(inf.profile), "%s%s", c->prof->name,
		 c->raw_tp ? " (raw_tp)" : "");
	snprintf(inf.reason, sizeof(inf.reason), "%s", c->why[0] ? c->why :
		 OPT(c->opts, attach_mode) ? "requested" : "best mode available");
	err = bpf_map__update_elem(c->skel->maps.info, &zero, sizeof(zero),
				   &inf, sizeof(inf), BPF_ANY);
	if (err)
		return err;
	snprintf(hdr.device, sizeof(hdr.device), "%s", c->device);
	return bpf_map__update_elem(c->skel->maps.marks, &zero, sizeof(zero),
				    &hdr, sizeof(hdr), BPF_ANY);
}

static int resolve_device(struct load_ctx *c)
{
	const char *dev = c->opts ? c->opts->device : NULL;
	struct stat st;

	if (!dev)
		dev = access("/dev/davinci_manager", F_OK) == 0 ?
		      "/dev/davinci_manager" : "/dev/" NPUSIM_DEV_NAME;
	c->device = dev;
	if (stat(dev, &st)) {
		fprintf(stderr, "steptime: device %s: %s\n", dev, strerror(errno));
		return -ENODEV;
	}
	if (!S_ISCHR(st.st_mode)) {
		fprintf(stderr, "steptime: %s is not a character device\n", dev);
		return -ENODEV;
	}
	/* The kernel's dev_t, not glibc's st_rdev encoding. */
	c->rdev = major(st.st_rdev) << 20 | minor(st.st_rdev);
	return 0;
}

int steptime__load(const struct steptime_load_opts *opts)
{
	static const int order[] = {
		STEPTIME_ATTACH_FENTRY, STEPTIME_ATTACH_KPROBE,
		STEPTIME_ATTACH_TP_BTF, STEPTIME_ATTACH_TRACEPOINT,
	};
	struct load_ctx c = { .opts = opts };
	char path[PATH_MAX];
	int mode = STEPTIME_ATTACH_AUTO, i, err = -EOPNOTSUPP;

	if (opts && opts->sz < offsetof(struct steptime_load_opts, verbose) + sizeof(int))
		return -EINVAL;	/* the first released layout */
	if (opts && (opts->attach_mode < STEPTIME_ATTACH_AUTO ||
		     opts->attach_mode > STEPTIME_ATTACH_TRACEPOINT))
		return -EINVAL;
	if (opts)
		mode = opts->attach_mode;
	c.pin_dir = opts && opts->pin_dir ? opts->pin_dir : STEPTIME_PIN_DIR;
	libbpf_set_print(opts && opts->verbose ? libbpf_verbose : libbpf_quiet);

	err = resolve_device(&c);
	if (err)
		return err;
	c.prof = profile_find(opts ? opts->profile : NULL, c.device);
	if (!c.prof) {
		fprintf(stderr, "steptime: unknown driver profile %s\n", opts->profile);
		return -EINVAL;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, "steptime: this kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF): CO-RE cannot relocate\n");
		return -EOPNOTSUPP;
	}
	err = ensure_mounts(c.pin_dir);
	if (err)
		return err;
	if (pin_path(path, sizeof(path), c.pin_dir, "info") == 0 &&
	    access(path, F_OK) == 0) {
		fprintf(stderr, "steptime: already loaded at %s (steptime unload first)\n",
			c.pin_dir);
		return -EEXIST;
	}
	c.freq = counter_freq(&c);
	c.has_loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT,
					     BPF_FUNC_loop, NULL) > 0 &&
		     !OPT(opts, no_bpf_loop);

	err = -EOPNOTSUPP;
	for (i = 0; i < (int)(sizeof(order) / sizeof(order[0])); i++) {
		if (mode != STEPTIME_ATTACH_AUTO && mode != order[i])
			continue;
		if (!mode_available(&c, order[i]))
			continue;
		err = mode_try(&c, order[i]);
		if (err && order[i] == STEPTIME_ATTACH_TP_BTF) {
			/* Same hook without BTF-typed arguments. */
			c.raw_tp = true;
			err = mode_try(&c, order[i]);
		}
		if (!err) {
			mode = order[i];
			break;
		}
	}
	if (err) {
		fprintf(stderr, "steptime: no attach mode works: %s\n", c.why);
		return err;
	}
	err = write_info(&c, mode);
	if (!err)
		err = pin_all(&c);
	if (err) {
		fprintf(stderr, "steptime: pinning under %s failed: %s\n",
			c.pin_dir, strerror(-err));
		steptime__unload(c.pin_dir);
	}
	links_destroy(&c);
	steptime_bpf__destroy(c.skel);
	return err;
}

static int unlink_dir(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (pin_path(path, sizeof(path), dir, e->d_name))
			continue;
		if (e->d_type == DT_DIR)
			err = unlink_dir(path) ?: err;
		else if (unlink(path))
			err = -errno;
	}
	closedir(d);
	if (rmdir(dir))
		err = -errno;
	return err;
}

static int pinned_open(const char *pin_dir, const char *name, int flags);

/*
 * Processes keep their mapping of the marks map after it is unpinned: a
 * zero magic tells their step API to reopen (a later load's map).
 */
static void marks_retire(const char *pin_dir)
{
	struct steptime_marks_hdr hdr;
	__u32 zero = 0;
	int fd = pinned_open(pin_dir, "marks", 0);

	if (fd < 0)
		return;
	if (bpf_map_lookup_elem(fd, &zero, &hdr) == 0) {
		memset(&hdr, 0, sizeof(hdr));
		bpf_map_update_elem(fd, &zero, &hdr, BPF_ANY);
	}
	close(fd);
}

int steptime__unload(const char *pin_dir)
{
	char path[PATH_MAX];

	pin_dir = pin_dir ?: STEPTIME_PIN_DIR;
	marks_retire(pin_dir);
	if (pin_path(path, sizeof(path), pin_dir, "info"))
		return -ENAMETOOLONG;
	if (access(path, F_OK))
		return access(pin_dir, F_OK) ? -ENOENT : unlink_dir(pin_dir) ?: -ENOENT;
	return unlink_dir(pin_dir);
}

static int pinned_open(const char *pin_dir, const char *name, int flags)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = flags);
	char path[PATH_MAX];
	int fd;

	if (pin_path(path, sizeof(path), pin_dir ?: STEPTIME_PIN_DIR, name))
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
	err = bpf_map_lookup_elem(fd, &zero, inf) ? -errno : 0;
	close(fd);
	if (!err && inf->magic != STEPTIME_MAGIC)
		err = -EPROTO;
	return err;
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
