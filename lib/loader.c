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
#include <stdint.h>
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

/* Where npusim's hook objects keep (devid, tsid): its UAPI header says. */
#ifndef NPUSIM_TS_INST_ID_OFF
#define NPUSIM_TS_INST_ID_OFF	(~0u)
#endif
#ifndef NPUSIM_CHAN_ID_OFF
#define NPUSIM_CHAN_ID_OFF	(~0u)
#endif

/*
 * A driver's hooks: the manager node's unlocked_ioctl, the completion hook
 * (called for every report as it is queued, returns 0 when it was) and the
 * SQE trace hook (every SQE on its way to the device), each with the module
 * it lives in; and where the last two's driver objects keep (devid, tsid),
 * which the modules' missing BTF cannot tell.
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
	__u32 ts_inst_id_off;	/* struct trs_core_ts_inst: inst */
	__u32 chan_id_off;	/* struct trs_chan: inst */
};

/*
 * The real driver's names (hicann/driver: asdrv_pbl, asdrv_trs,
 * asdrv_trsbase) and npusim's mirror of them. The ascend offsets are those
 * of a kernel without lockdep (struct kref_safe is 48 bytes there).
 */
static const struct profile profiles[] = {
	{ "ascend", { "asdrv_pbl", "drv_ascend_intf_ioctl" },
	  { "asdrv_trs", "trs_logic_cq_enque" },
	  { "asdrv_trsbase", "trs_chan_trace_sqe" }, 64, 144 },
	{ "npusim", { "npusim", "npusim_manager_ioctl" },
	  { "npusim", "npusim_logic_cq_enque" },
	  { "npusim", "npusim_chan_trace_sqe" },
	  NPUSIM_TS_INST_ID_OFF, NPUSIM_CHAN_ID_OFF },
	{ "generic", { NULL, NULL }, { NULL, NULL }, { NULL, NULL }, ~0u, ~0u },
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
	int stars;
	int hooks;		/* 1: CQ hook, 2: SQE trace hook attached */
	bool has_loop;
	bool raw_tp;		/* tp_btf mode fell back to raw_tp */
	char why[sizeof(((struct steptime_info *)0)->reason)];
	struct steptime_bpf *skel;
	struct bpf_link *links[8];
	const char *link_names[8];
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

/* Whether kallsyms has @h's function, in @h's module. */
static bool kallsyms_has(const struct hook *h)
{
	char line[512], name[256], mod[64];
	bool found = false;
	FILE *f;
	int n;

	if (!h->fn)
		return false;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		mod[0] = '\0';
		n = sscanf(line, "%*s %*s %255s [%63[^]]]", name, mod);
		if (n >= 1 && strcmp(name, h->fn) == 0 &&
		    (!h->mod || strcmp(mod, h->mod) == 0 ||
		     (!mod[0] && access("/sys/module", F_OK) == 0)))
			found = true;
	}
	fclose(f);
	return found;
}

/* fentry on a module's function needs that module's BTF. */
static bool module_btf_has(const struct hook *h)
{
	char path[PATH_MAX];

	if (!h->mod)
		return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	snprintf(path, sizeof(path), "/sys/kernel/btf/%s", h->mod);
	return access(path, R_OK) == 0;
}

/* "mod:fn", the kprobe target naming the module (vpbl has a namesake). */
static const char *kprobe_target(const struct hook *h, char *buf, size_t len)
{
	if (!h->mod)
		return h->fn;
	snprintf(buf, len, "%s:%s", h->mod, h->fn);
	return buf;
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

/* The counter frequency of device @dev through URD on @fd: 0 if none. */
static __u64 urd_dev_freq(int fd, __u32 dev)
{
	__u64 hz = 0;
	struct urd_ioctl_arg a = {
		.main_cmd = URD_MAIN_CMD_BASIC,
		.sub_cmd = URD_SUBCMD_GET_DEV_OSC_FREQ,
		.input = (__u64)(uintptr_t)&dev,
		.input_len = sizeof(dev),
		.output = (__u64)(uintptr_t)&hz,
		.output_len = sizeof(hz),
	};

	return ioctl(fd, URD_IOC_GET_DEV_OSC_FREQ, &a) ? 0 : hz;
}

/*
 * The device counter's frequency: given (--freq), or read where the driver
 * exposes it, as halGetDeviceInfo(INFO_TYPE_DEV_OSC_FREQUE) does: the URD
 * sub-driver of the manager node. Never assumed: 0 when it cannot be read
 * (the load then fails), and devices that disagree are refused, since
 * steptime converts every device's ticks at one frequency.
 */
static __u64 counter_freq(const struct load_ctx *c)
{
	struct ascend_manager_arg urd = { .module_name = ASCEND_MODULE_URD };
	__u64 hz = 0, d_hz;
	__u32 dev;
	int fd;

	if (c->opts && c->opts->counter_freq_hz)
		return c->opts->counter_freq_hz;
	if (!c->prof->ioctl.fn)
		return 0;
	fd = open(c->device, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (ioctl(fd, ASCEND_MANAGER_OPEN, &urd)) {
		close(fd);
		return 0;
	}
	for (dev = 0; dev < 64; dev++) {
		d_hz = urd_dev_freq(fd, dev);
		if (!d_hz)
			break;
		if (hz && d_hz != hz) {
			fprintf(stderr, "steptime: devices 0 and %u count at %llu and %llu Hz: one frequency for all is needed (--freq)\n",
				dev, (unsigned long long)hz,
				(unsigned long long)d_hz);
			hz = 0;
			break;
		}
		hz = d_hz;
	}
	close(fd);
	return hz;
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

/* A program of a mode, and the driver function it attaches to. */
struct mode_prog {
	struct bpf_program *prog;
	const struct hook *hook;	/* NULL: a syscall tracepoint */
	bool ret;			/* kretprobe */
	bool optional;			/* the mode works without it */
};

static int mode_progs(struct load_ctx *c, struct steptime_bpf *s, int mode,
		      struct mode_prog *p)
{
	const struct profile *pr = c->prof;
	int n = 0;

#define MP(pg, h, r, o) (p[n++] = (struct mode_prog){ s->progs.pg, h, r, o })
	switch (mode) {
	case STEPTIME_ATTACH_FENTRY:
		MP(fentry_ioctl, &pr->ioctl, false, false);
		MP(fexit_ioctl, &pr->ioctl, false, false);
		MP(fexit_cq_enque, &pr->cq, false, true);
		MP(fentry_trace_sqe, &pr->sqe, false, true);
		break;
	case STEPTIME_ATTACH_KPROBE:
		MP(kprobe_ioctl, &pr->ioctl, false, false);
		MP(kretprobe_ioctl, &pr->ioctl, true, false);
		MP(kprobe_cq_enque, &pr->cq, false, true);
		MP(kretprobe_cq_enque, &pr->cq, true, true);
		MP(kprobe_trace_sqe, &pr->sqe, false, true);
		break;
	case STEPTIME_ATTACH_TP_BTF:
		if (c->raw_tp) {
			MP(rawtp_sys_enter, NULL, false, false);
			MP(rawtp_sys_exit, NULL, false, false);
		} else {
			MP(tpbtf_sys_enter, NULL, false, false);
			MP(tpbtf_sys_exit, NULL, false, false);
		}
		break;
	default:
		MP(tp_sys_enter_ioctl, NULL, false, false);
		MP(tp_sys_exit_ioctl, NULL, false, false);
		break;
	}
#undef MP
	return n;
}

/*
 * Whether a driver hook can be used in @mode: its function is in kallsyms
 * (in its module), and for fentry the module has BTF. Says why not.
 */
static bool hook_usable(struct load_ctx *c, int mode, const struct hook *h)
{
	const char *m = steptime__attach_mode_str(mode);

	if (!h->fn)
		return false;
	if (!kallsyms_has(h)) {
		why_add(c, "%s: %s%s%s not in kallsyms (driver not loaded?)", m,
			h->mod ?: "", h->mod ? ":" : "", h->fn);
		return false;
	}
	if (mode == STEPTIME_ATTACH_FENTRY && !module_btf_has(h)) {
		why_add(c, "fentry: no module BTF for %s (/sys/kernel/btf/%s)",
			h->mod, h->mod);
		return false;
	}
	return true;
}

/* What the kernel offers for a mode, before trying it. */
static bool mode_available(struct load_ctx *c, int mode)
{
	const char *m = steptime__attach_mode_str(mode);

	switch (mode) {
	case STEPTIME_ATTACH_FENTRY:
	case STEPTIME_ATTACH_KPROBE:
		if (!c->prof->ioctl.fn) {
			why_add(c, "%s: profile %s names no handler", m,
				c->prof->name);
			return false;
		}
		return hook_usable(c, mode, &c->prof->ioctl);
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

static int mode_attach(struct load_ctx *c, int mode, bool cq, bool sqe)
{
	struct steptime_bpf *s = c->skel;
	struct mode_prog p[6];
	struct bpf_link *l;
	char target[192];
	int n, i, err;

	n = mode_progs(c, s, mode, p);
	for (i = 0; i < n; i++) {
		if ((p[i].hook == &c->prof->cq && !cq) ||
		    (p[i].hook == &c->prof->sqe && !sqe))
			continue;
		if (mode == STEPTIME_ATTACH_KPROBE)
			l = bpf_program__attach_kprobe(p[i].prog, p[i].ret,
						       kprobe_target(p[i].hook, target,
								     sizeof(target)));
		else
			l = bpf_program__attach(p[i].prog);
		err = link_add(c, p[i].prog, l);
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
	const struct profile *pr = c->prof;
	struct bpf_program *prog;
	struct mode_prog p[6];
	bool cq = false, sqe = false, on;
	int n, i, err;

	c->skel = steptime_bpf__open();
	if (!c->skel)
		return -errno;
	c->skel->rodata->target_rdev = c->rdev;
	c->skel->rodata->counter_freq_hz = c->freq;
	c->skel->rodata->has_bpf_loop = c->has_loop;
	c->skel->rodata->stars_version = c->stars;
	c->skel->rodata->ts_inst_id_off = pr->ts_inst_id_off;
	c->skel->rodata->chan_id_off = pr->chan_id_off;
	if (mode == STEPTIME_ATTACH_FENTRY || mode == STEPTIME_ATTACH_KPROBE) {
		cq = hook_usable(c, mode, &pr->cq);
		sqe = hook_usable(c, mode, &pr->sqe);
	}
	c->skel->rodata->cq_hook = cq;
	c->skel->rodata->sqe_hook = sqe;
	c->skel->rodata->use_task_storage = task_storage_ok(mode, c->raw_tp);

	bpf_object__for_each_program(prog, c->skel->obj)
		bpf_program__set_autoload(prog, false);
	n = mode_progs(c, c->skel, mode, p);
	for (i = 0; i < n; i++) {
		on = !p[i].optional || (p[i].hook == &pr->cq ? cq : sqe);
		bpf_program__set_autoload(p[i].prog, on);
		if (on && mode == STEPTIME_ATTACH_FENTRY)
			bpf_program__set_attach_target(p[i].prog, 0,
						       p[i].hook->fn);
	}
	bpf_program__set_autoload(c->skel->progs.tp_sched_process_exit, true);
	bpf_program__set_autoload(c->skel->progs.tp_sys_enter_exit_group, true);

	err = steptime_bpf__load(c->skel);
	if (err) {
		why_add(c, "%s: load failed: %s", m, strerror(-err));
		goto fail;
	}
	err = mode_attach(c, mode, cq, sqe);
	if (err) {
		why_add(c, "%s: attach failed: %s", m, strerror(-err));
		goto fail;
	}
	c->hooks = (cq ? 1 : 0) | (sqe ? 2 : 0);
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
	if (!c.freq) {
		fprintf(stderr, "steptime: the device counter frequency of %s cannot be read (profile %s): give it with --freq HZ\n",
			c.device, c.prof->name);
		return -EINVAL;
	}
	c.stars = OPT(opts, stars_version) ?: 1;
	if (c.stars != 1 && c.stars != 2) {
		fprintf(stderr, "steptime: STARS version %d: only 1 (910B, 910_93) and 2 (950) exist\n",
			c.stars);
		return -EINVAL;
	}
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
