// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime load | unload | status
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <steptime/loader.h>
#include <steptime/util.h>
#include "cmds.h"
#include "cli.h"
#include "snapshot.h"
#include "phase_write.h"		/* st_phases_sweep() */

/* load: already loaded with settings other than those given. */
#define LOAD_EXIT_OTHER	3

static int parse_attach(const char *s)
{
	int m;

	for (m = STEPTIME_ATTACH_AUTO; m <= STEPTIME_ATTACH_TRACEPOINT; m++)
		if (!strcmp(s, steptime__attach_mode_str(m)))
			return m;
	return -1;
}

/* A group's name or number; -1 when there is no such group or number. */
static int parse_group(const char *s)
{
	struct group *g = getgrnam(s);
	unsigned long long v;

	if (g)
		return (int)g->gr_gid;
	return cli_parse_ull(s, 10, 0, INT_MAX, &v) ? -1 : (int)v;
}

/* The driver profiles of loader/loader.c, as load_usage() names them. */
static bool known_profile(const char *s)
{
	return !strcmp(s, "ascend") || !strcmp(s, "npusim") ||
	       !strcmp(s, "generic");
}

static void load_usage(FILE *f)
{
	fprintf(f,
		"usage: steptime load [-d|--device PATH]\n"
		"                     [-a|--attach auto|fentry|kprobe|tp_btf|tracepoint]\n"
		"                     [--pin DIR] [-P|--profile ascend|npusim|generic]\n"
		"                     [-f|--freq HZ] [-S|--stars 1|2] [-m|--mode OCTAL]\n"
		"                     [-g|--group NAME|GID] [-B|--btf FILE] [-l|--lib PATH]...\n"
		"                     [-H|--hal PATH]... [--journal] [--no-bpf-loop]\n"
		"                     [-v|--verbose]\n"
		"  --freq: the device counter's frequency (up to 10 GHz), where the driver\n"
		"  does not expose it;\n"
		"  --stars: the STARS SQE layout, 1 (910B, 910_93) or 2 (950), where the\n"
		"  driver does not say the chip (one that contradicts the driver is refused).\n"
		"  --mode/--group: who may mark steps and read stats (default 0600, root only);\n"
		"  e.g. --mode 0660 --group video lets that group's processes mark steps.\n"
		"  --btf: this kernel's BTF, for a kernel without /sys/kernel/btf/vmlinux\n"
		"  (BTFHub's files, or `pahole --btf_encode_detached FILE VMLINUX` from its\n"
		"  debug vmlinux); used for CO-RE only: fentry and tp_btf still need the\n"
		"  kernel's own BTF.\n"
		"  --lib: a libsteptime.so whose processes have their marks consumed through a\n"
		"  uprobe, with no ioctl (up to 4; default: the one the dynamic loader finds).\n"
		"  --hal: a libascend_hal.so whose entry points get uprobes, so that mapped\n"
		"  queues' submissions (910B uio_t, 950 uio_d) are counted (up to 4; default:\n"
		"  those running processes map, in $LD_LIBRARY_PATH, $ASCEND_HOME_PATH's and\n"
		"  /usr/local/Ascend/driver/lib64/driver's). Steps of a process whose HAL has\n"
		"  no probe are flagged, their task figures absent.\n"
		"  --journal: only halSqCqAllocate() gets a uprobe; each process's libsteptime\n"
		"  journals its own sends and head reads in its mark ring: no trap per task.\n"
		"  Steps of a process without it are flagged.\n"
		"Where steptime is loaded already: exit 0 when the options given match\n"
		"the load, else 3 with each difference named (steptime(8)).\n"
		"Old spelling (it warns; gone in the next release): -p DIR (--pin).\n");
}

/* Append @path to the ':'-separated @list of @size bytes; -1: it cannot. */
static int path_list_add(char *list, size_t size, const char *path)
{
	if (strchr(path, ':') || strlen(list) + strlen(path) + 2 > size)
		return -1;
	if (list[0])
		strcat(list, ":");
	strcat(list, path);
	return 0;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return 0;
}

static int libbpf_stderr(enum libbpf_print_level level, const char *fmt,
			 va_list ap)
{
	return vfprintf(stderr, fmt, ap);
}

/* Which SQE layout the program parses, and who said so. */
/* Which libascend_hal.so files carry the HAL probes, on @f. */
static void hal_lines(FILE *f, const char *prefix,
		      const struct steptime_info *inf)
{
	__u32 i;

	if (!inf->nhal) {
		fprintf(f, "%sno libascend_hal.so probed: steps of processes with mapped queues\n"
			"%sare flagged, their task figures absent (load --hal PATH)\n",
			prefix, prefix);
		return;
	}
	for (i = 0; i < inf->nhal && i < STEPTIME_HAL_LIBS; i++)
		fprintf(f, "%sHAL %s on %.*s\n", prefix,
			inf->hal_flags & STEPTIME_HAL_JOURNAL ?
			"allocation probe (sends from the processes' journals)" :
			"probes", (int)sizeof(inf->hal[i].path), inf->hal[i].path);
}

static const char *stars_line(const struct steptime_info *inf)
{
	static char line[128];

	switch (inf->stars_from) {
	case STEPTIME_STARS_FROM_DEVICE:
		snprintf(line, sizeof(line), "STARS v%u, read from the device (%s)",
			 inf->stars_version, inf->chip);
		break;
	case STEPTIME_STARS_FROM_BOTH:
		snprintf(line, sizeof(line), "STARS v%u, given (--stars) and read from the device (%s)",
			 inf->stars_version, inf->chip);
		break;
	default:
		snprintf(line, sizeof(line), "STARS v%u, given (--stars): %s%s",
			 inf->stars_version,
			 inf->chip[0] ? "the driver names an unknown chip, " :
					"the driver does not say the chip",
			 inf->chip);
		break;
	}
	return line;
}

/* The settings differences found, "; "-separated, in @d->buf. */
struct load_diff {
	char buf[1024];
	size_t len;
};

__attribute__((format(printf, 2, 3)))
static void diff_add(struct load_diff *d, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (d->len && d->len + 2 < sizeof(d->buf))
		d->len += snprintf(d->buf + d->len, sizeof(d->buf) - d->len, "; ");
	if (d->len >= sizeof(d->buf) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(d->buf + d->len, sizeof(d->buf) - d->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		d->len += (size_t)n;
	if (d->len > sizeof(d->buf) - 1)
		d->len = sizeof(d->buf) - 1;
}

/* A loaded file's identity: stat(2)'s st_dev and st_ino, as recorded. */
struct file_id {
	__u64 dev;
	__u64 ino;
};

/*
 * Whether the ':'-separated files of @list are the @n recorded in @ids
 * (a zero inode: an empty slot), as sets.
 */
static bool same_files(const char *list, const struct file_id *ids, int n)
{
	char buf[4 * PATH_MAX], *save, *p;
	int given = 0, recorded = 0, i;
	struct stat st;

	snprintf(buf, sizeof(buf), "%s", list);
	for (p = strtok_r(buf, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
		if (stat(p, &st))
			return false;
		for (i = 0; i < n; i++)
			if (ids[i].ino == st.st_ino && ids[i].dev == st.st_dev)
				break;
		if (i == n)
			return false;
		given++;
	}
	for (i = 0; i < n; i++)
		recorded += !!ids[i].ino;
	return given == recorded;
}

static void diff_libs(struct load_diff *d, const char *pin, const char *libs)
{
	struct steptime_marks_hdr hdr;
	struct file_id ids[STEPTIME_KICK_LIBS];
	char path[PATH_MAX];
	__u32 zero = 0;
	int fd, i, err;

	snprintf(path, sizeof(path), "%s/marks", pin);
	fd = bpf_obj_get_opts(path, &(struct bpf_obj_get_opts){
		.sz = sizeof(struct bpf_obj_get_opts),
		.file_flags = BPF_F_RDONLY });
	err = fd < 0 ? fd : bpf_map_lookup_elem(fd, &zero, &hdr);
	if (fd >= 0)
		close(fd);
	for (i = 0; !err && i < STEPTIME_KICK_LIBS; i++) {
		ids[i].dev = hdr.kick[i].dev;
		ids[i].ino = hdr.kick[i].ino;
	}
	if (err || !same_files(libs, ids, STEPTIME_KICK_LIBS))
		diff_add(d, "--lib %s: not the libsteptime files probed", libs);
}

static void diff_hal(struct load_diff *d, const struct steptime_info *inf,
		     const char *hal)
{
	struct file_id ids[STEPTIME_HAL_LIBS] = {};
	__u32 i;

	for (i = 0; i < inf->nhal && i < STEPTIME_HAL_LIBS; i++) {
		ids[i].dev = inf->hal[i].dev;
		ids[i].ino = inf->hal[i].ino;
	}
	if (!same_files(hal, ids, STEPTIME_HAL_LIBS))
		diff_add(d, "--hal %s: not the libascend_hal.so files probed",
			 hal);
}

/* --mode and --group against the pinned maps' (the steps map's) own. */
static void diff_access(struct load_diff *d, const char *pin,
			const struct steptime_load_opts *o)
{
	/* pin_all()'s: read bits as asked, written by root alone. */
	unsigned int want = (o->map_mode & 0444) | 0600;
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/steps", pin);
	if (stat(path, &st)) {
		diff_add(d, "%s: %s", path, strerror(errno));
		return;
	}
	if (o->map_mode && (st.st_mode & 0777) != want)
		diff_add(d, "--mode: the maps' mode is %04o, not %04o",
			 st.st_mode & 0777, want);
	if (o->map_gid >= 0 && st.st_gid != (gid_t)o->map_gid)
		diff_add(d, "--group: the maps' group is %u, not %d",
			 st.st_gid, o->map_gid);
}

/*
 * What of the settings @o gives differs from the load @inf at @pin, into
 * @d. An option not given accepts what is loaded; --btf, --no-bpf-loop
 * and --verbose are not recorded by a load and not compared.
 */
static void load_diff(struct load_diff *d, const char *pin,
		      const struct steptime_info *inf,
		      const struct steptime_load_opts *o)
{
	size_t plen;
	struct stat st;

	if (o->device && stat(o->device, &st))
		diff_add(d, "--device %s: %s", o->device, strerror(errno));
	else if (o->device &&
		 (major(st.st_rdev) << 20 | minor(st.st_rdev)) != inf->dev_rdev)
		diff_add(d, "--device: loaded on %s, not %s", inf->device,
			 o->device);
	if (o->attach_mode != STEPTIME_ATTACH_AUTO &&
	    (int)inf->attach_mode != o->attach_mode)
		diff_add(d, "--attach: attach mode %s, not %s",
			 steptime__attach_mode_str(inf->attach_mode),
			 steptime__attach_mode_str(o->attach_mode));
	/* The profile's name, then " (raw_tp)" where that was used. */
	plen = o->profile ? strlen(o->profile) : 0;
	if (o->profile && (strncmp(inf->profile, o->profile, plen) ||
			   (inf->profile[plen] && inf->profile[plen] != ' ')))
		diff_add(d, "--profile: profile %s, not %s", inf->profile,
			 o->profile);
	if (o->counter_freq_hz && inf->counter_freq_hz != o->counter_freq_hz)
		diff_add(d, "--freq: counter at %llu Hz, not %llu",
			 (unsigned long long)inf->counter_freq_hz,
			 (unsigned long long)o->counter_freq_hz);
	if (o->stars_version && (int)inf->stars_version != o->stars_version)
		diff_add(d, "--stars: STARS v%u, not v%d", inf->stars_version,
			 o->stars_version);
	if (o->map_mode || o->map_gid >= 0)
		diff_access(d, pin, o);
	if (o->libs)
		diff_libs(d, pin, o->libs);
	if (o->hal)
		diff_hal(d, inf, o->hal);
	if (o->journal && !(inf->hal_flags & STEPTIME_HAL_JOURNAL))
		diff_add(d, "--journal: the HAL's sends %s, not journaled",
			 inf->nhal ? "probed" : "unseen");
}

/* The lines a load prints about what is loaded. */
static void loaded_lines(const struct steptime_info *inf)
{
	printf("steptime: loaded on %s, attach mode %s (%s)\n",
	       inf->device, steptime__attach_mode_str(inf->attach_mode),
	       inf->reason);
	printf("steptime: %s\n", stars_line(inf));
	hal_lines(stdout, "steptime: ", inf);
}

/*
 * A load where one is already pinned at @o->pin_dir: 0 (said on stdout)
 * when it has the settings @o gives, else LOAD_EXIT_OTHER with the
 * differences on stderr. Return: -1 when nothing is loaded there.
 */
static int load_again(const struct steptime_load_opts *o)
{
	struct load_diff d = {};
	struct steptime_info inf;

	if (steptime__read_info(o->pin_dir, &inf))
		return -1;
	load_diff(&d, o->pin_dir, &inf, o);
	if (d.len) {
		fprintf(stderr, "steptime: already loaded at %s with other settings: %s (steptime unload first)\n",
			o->pin_dir, d.buf);
		return LOAD_EXIT_OTHER;
	}
	printf("steptime: already loaded at %s with these settings\n",
	       o->pin_dir);
	loaded_lines(&inf);
	return 0;
}

int cmd_load(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "attach", required_argument, NULL, 'a' },
		{ "pin", required_argument, NULL, 'I' },
		{ "profile", required_argument, NULL, 'P' },
		{ "freq", required_argument, NULL, 'f' },
		{ "mode", required_argument, NULL, 'm' },
		{ "group", required_argument, NULL, 'g' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "no-bpf-loop", no_argument, NULL, 'L' },
		{ "btf", required_argument, NULL, 'B' },
		{ "stars", required_argument, NULL, 'S' },
		{ "lib", required_argument, NULL, 'l' },
		{ "hal", required_argument, NULL, 'H' },
		{ "journal", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	LIBBPF_OPTS(steptime_load_opts, o, .map_gid = -1);
	char libs[4 * PATH_MAX] = "", hal[4 * PATH_MAX] = "";
	struct steptime_info inf;
	unsigned long long v;
	int c, err;

	while ((c = getopt_long(argc, argv, "d:a:p:P:f:m:g:S:B:l:H:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o.device = optarg; break;
		case 'a':
			o.attach_mode = parse_attach(optarg);
			if (o.attach_mode < 0)
				return cli_usage_error("load", "--attach: '%s' is not auto, fentry, kprobe, tp_btf or tracepoint",
						       optarg);
			break;
		case 'p': cli_deprecated("load", "-p", "--pin"); /* fall through */
		case 'I': o.pin_dir = optarg; break;
		case 'P':
			if (!known_profile(optarg))
				return cli_usage_error("load", "--profile: '%s' is not ascend, npusim or generic",
						       optarg);
			o.profile = optarg;
			break;
		case 'f':
			err = cli_opt_ull("load", "--freq", optarg, 1,
					  STEPTIME_FREQ_MAX_HZ, &v);
			if (err)
				return err;
			o.counter_freq_hz = v;
			break;
		case 'S':
			err = cli_opt_ull("load", "--stars", optarg, 1, 2, &v);
			if (err)
				return err;
			o.stars_version = (int)v;
			break;
		case 'm':
			if (cli_parse_ull(optarg, 8, 0, 0777, &v))
				return cli_usage_error("load", "--mode: '%s' is not an octal mode up to 0777",
						       optarg);
			o.map_mode = (unsigned int)v;
			break;
		case 'g':
			o.map_gid = parse_group(optarg);
			if (o.map_gid < 0)
				return cli_usage_error("load", "--group: no group '%s'", optarg);
			break;
		case 'l':
			if (path_list_add(libs, sizeof(libs), optarg))
				return cli_usage_error("load", "--lib: '%s' has a ':' or is one too many",
						       optarg);
			o.libs = libs;
			break;
		case 'H':
			if (path_list_add(hal, sizeof(hal), optarg))
				return cli_usage_error("load", "--hal: '%s' has a ':' or is one too many",
						       optarg);
			o.hal = hal;
			break;
		case 'v': o.verbose = 1; break;
		case 'J': o.journal = 1; break;
		case 'L': o.no_bpf_loop = 1; break;
		case 'B': o.btf_path = optarg; break;
		case 'h': load_usage(stdout); return 0;
		default: return cli_usage_error("load", NULL);
		}
	}
	if (optind < argc)
		return cli_usage_error("load", "unexpected argument '%s'", argv[optind]);
	if (o.map_gid >= 0 && !o.map_mode)
		o.map_mode = 0660;
	o.pin_dir = steptime__pin_dir(o.pin_dir);
	/* libbpf's messages: the command's choice, never the library's. */
	libbpf_set_print(o.verbose ? libbpf_stderr : libbpf_quiet);
	/* Idempotent: an init container or unit runs it on every start. */
	err = load_again(&o);
	if (err >= 0)
		return err;
	/* Its reason is printed: one line, no second errno to contradict it. */
	err = steptime__load(&o);
	if (err == -EEXIST) {
		/* A concurrent load won the race: judged as any other. */
		err = load_again(&o);
		return err >= 0 ? err : 1;
	}
	if (err)
		return 1;
	if (steptime__read_info(o.pin_dir, &inf) == 0)
		loaded_lines(&inf);
	return 0;
}

/*
 * The options of `unload` and `status`: --pin DIR into *@pin, and -v into
 * *@verbose where @lo has it (status).
 * Return: -1 to go on, else the exit status (--help: 0, bad usage: 2).
 */
static int pin_args(const char *cmd, int argc, char **argv,
		    const struct option *lo, const char **pin, bool *verbose)
{
	int c;

	*pin = NULL;
	while ((c = getopt_long(argc, argv, verbose ? "p:vh" : "p:h", lo,
				NULL)) != -1) {
		if (c == 'p' || c == 'I') {
			if (c == 'p')
				cli_deprecated(cmd, "-p", "--pin");
			*pin = optarg;
		} else if (c == 'v' && verbose) {
			*verbose = true;
		} else if (c == 'h') {
			printf("usage: steptime %s [--pin DIR]%s\n"
			       "  Old spelling (it warns; gone in the next release): -p DIR (--pin).\n",
			       cmd, verbose ? " [-v|--verbose]" : "");
			if (verbose)
				printf("  -v, --verbose: also each attached program: instructions the\n"
				       "  verifier processed to accept it (budget %u), its size, and its\n"
				       "  runs and run time (counted while kernel.bpf_stats_enabled=1).\n",
				       STEPTIME_VERIFIER_BUDGET);
			return 0;
		} else {
			return cli_usage_error(cmd, NULL);
		}
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'",
				       argv[optind]);
	*pin = steptime__pin_dir(*pin);
	return -1;
}

int cmd_unload(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "pin", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *pin;
	int err = pin_args("unload", argc, argv, lo, &pin, NULL);

	if (err >= 0)
		return err;
	err = steptime__unload(pin);
	if (err == -ENOENT) {
		fprintf(stderr, "steptime unload: not loaded at %s\n", pin);
		return 1;
	}
	if (err == -EACCES || err == -EPERM) {
		fprintf(stderr, "steptime unload: permission denied removing the pins under %s: unload needs root (CAP_SYS_ADMIN or CAP_BPF)\n",
			pin);
		return 1;
	}
	if (err) {
		fprintf(stderr, "steptime unload: %s\n", strerror(-err));
		return 1;
	}
	/* The phases of the steps that went, where their process is gone. */
	st_phases_sweep();
	return 0;
}

/* status -v: the attached programs, as the kernel has them. */
static int print_progs(const char *pin)
{
	struct steptime_prog progs[STEPTIME_MAX_PROGS];
	int n = steptime__read_progs(pin, progs, STEPTIME_MAX_PROGS), i;

	if (n < 0) {
		fprintf(stderr, "steptime status: programs: %s%s\n", strerror(-n),
			n == -EACCES || n == -EPERM ? " (reading programs needs root)" : "");
		return 1;
	}
	printf("programs:    %-24s %14s %10s %12s %14s\n", "", "verified insns",
	       "bytes", "runs", "run time ns");
	for (i = 0; i < n; i++)
		printf("  %-34s %14u %10u %12llu %14llu%s\n", progs[i].name,
		       progs[i].verified_insns, progs[i].xlated_bytes,
		       (unsigned long long)progs[i].run_cnt,
		       (unsigned long long)progs[i].run_time_ns,
		       progs[i].verified_insns > STEPTIME_VERIFIER_BUDGET ?
		       "  over budget" : "");
	return 0;
}

#define PRINT_COUNTER(name) printf("  %-20s %llu\n", #name, (unsigned long long)cnt.name);

int cmd_status(int argc, char **argv)
{
	struct steptime_counters cnt;
	struct steptime_info inf;
	static const struct option lo[] = {
		{ "pin", required_argument, NULL, 'I' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	bool verbose = false;
	const char *pin;
	int err = pin_args("status", argc, argv, lo, &pin, &verbose), n;

	if (err >= 0)
		return err;
	err = steptime__read_info(pin, &inf);
	n = steptime__load_leftovers(pin);
	if (n > 0)
		fprintf(stderr, "steptime: %d load%s killed before %s finished left programs attached beside %s (steptime unload removes them)\n",
			n, n > 1 ? "s" : "", n > 1 ? "they" : "it", pin);
	if (err == -ENOENT) {
		fprintf(stderr, "steptime: not loaded at %s (steptime load)\n", pin);
		return 1;
	}
	if (err)
		return cli_open_error("status", pin, -err);
	printf("loaded:      %.0f s ago\n",
	       ((double)st_mono_ns() - (double)inf.loaded_ns) / 1e9);
	printf("device:      %s (dev %u:%u)\n", inf.device, inf.dev_rdev >> 20,
	       inf.dev_rdev & 0xfffff);
	printf("profile:     %s\n", inf.profile);
	printf("attach mode: %s\n", steptime__attach_mode_str(inf.attach_mode));
	printf("why:         %s\n", inf.reason);
	printf("counter:     %llu Hz\n", (unsigned long long)inf.counter_freq_hz);
	printf("sqe layout:  %s\n", stars_line(&inf));
	hal_lines(stdout, "hal:         ", &inf);
	err = steptime__read_counters(pin, &cnt);
	if (err)
		return cli_open_error("status", pin, -err);
	printf("counters:\n");
	STEPTIME_COUNTERS(PRINT_COUNTER)
	return verbose ? print_progs(pin) : 0;
}
