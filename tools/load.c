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

#include <bpf/libbpf.h>
#include <steptime/loader.h>
#include "cmds.h"
#include "cli.h"
#include "snapshot.h"
#include "phase_write.h"		/* st_phases_sweep() */

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
		"usage: steptime load [--device PATH]\n"
		"                     [--attach auto|fentry|kprobe|tp_btf|tracepoint]\n"
		"                     [--pin DIR] [--profile ascend|npusim|generic] [--freq HZ]\n"
		"                     [--stars 1|2] [--mode OCTAL] [--group NAME|GID]\n"
		"                     [--btf FILE] [--lib PATH]... [--hal PATH]...\n"
		"                     [--no-bpf-loop] [-v|--verbose]\n"
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
		"  no probe are flagged, their task figures absent.\n");
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
		fprintf(f, "%sHAL probes on %.*s\n", prefix,
			(int)sizeof(inf->hal[i].path), inf->hal[i].path);
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

int cmd_load(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "attach", required_argument, NULL, 'a' },
		{ "pin", required_argument, NULL, 'p' },
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
		case 'p': o.pin_dir = optarg; break;
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
	/* Its reason is printed: one line, no second errno to contradict it. */
	if (steptime__load(&o))
		return 1;
	if (steptime__read_info(o.pin_dir, &inf) == 0) {
		printf("steptime: loaded on %s, attach mode %s (%s)\n",
		       inf.device, steptime__attach_mode_str(inf.attach_mode),
		       inf.reason);
		printf("steptime: %s\n", stars_line(&inf));
		hal_lines(stdout, "steptime: ", &inf);
	}
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
		if (c == 'p') {
			*pin = optarg;
		} else if (c == 'v' && verbose) {
			*verbose = true;
		} else if (c == 'h') {
			printf("usage: steptime %s [--pin DIR]%s\n", cmd,
			       verbose ? " [-v|--verbose]" : "");
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
		{ "pin", required_argument, NULL, 'p' },
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
	struct steptime_prog progs[32];
	int n = steptime__read_progs(pin, progs, 32), i;

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
	struct timespec ts;
	static const struct option lo[] = {
		{ "pin", required_argument, NULL, 'p' },
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
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("loaded:      %.0f s ago\n",
	       (ts.tv_sec * 1e9 + ts.tv_nsec - (double)inf.loaded_ns) / 1e9);
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
