// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime doctor: what steptime can see on this host and in each process
 * that marks steps, and why: the hooks attached, the SQ modes of each
 * device, each process's ring, runtime and taints, and for each figure of
 * its steps a verdict (exact, bound, absent) with the reason. What a user
 * attaches to a bug report.
 *
 * The program's private maps (sqs, procs) are reached through its
 * programs' map ids, which only root may open: without root, those
 * sections say so and the rest is printed.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <steptime/steptime.h>
#include <steptime/loader.h>
#include "cmds.h"
#include "cli.h"
#include "doctor.h"

/* ---------------------------------------------------------------------- */
/* The command                                                            */
/* ---------------------------------------------------------------------- */

static void doctor_usage(FILE *f)
{
	fprintf(f,
		"usage: steptime doctor [-p|--pid PID] [-o|--format text|json] [--pin DIR]\n"
		"  What steptime can see on this host and in each process that marks\n"
		"  steps, and why: the attach mode and the hooks attached (completion\n"
		"  hook, SQE trace hook, ring-kick uprobe, HAL probes), the SQ modes seen\n"
		"  per device (kio, uio_t, uio_d), and per process its mark ring, the\n"
		"  CANN runtime (device time source), marks lost, taints and a verdict\n"
		"  per figure: exact, bound or absent, with the reason. PID matches the\n"
		"  kernel pid or the pid inside the process's container. Run it as\n"
		"  root (the SQs, the rings and the programs need it) and attach its\n"
		"  output to a bug report.\n"
		"  Old spelling (it warns; gone in the next release): --output FORMAT\n"
		"  (-o|--format).\n");
}

/* Not loaded or unreadable: the host's part, then one line on stderr. */
static int not_loaded(const char *pin, int err, bool json)
{
	if (json) {
		printf("{\n");
		host_json();
		printf("  \"loaded\": %s,\n", err == EACCES || err == EPERM ?
		       "null" : "false");
		json_kv("  ", "pin", pin, false);
		json_kv("  ", "error", strerror(err), true);
		printf("}\n");
	} else {
		host_text();
		printf("loaded:       %s (%s)\n", err == EACCES || err == EPERM ?
		       "unknown" : "no", strerror(err));
	}
	fflush(stdout);
	return cli_open_error("doctor", pin, err);
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'o' },
		{ "output", required_argument, NULL, 'O' },	/* old --format */
		{ "pin", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct doctor d = { .pin = NULL };
	unsigned long long v;
	bool json = false;
	int c, err;

	while ((c = getopt_long(argc, argv, "p:o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			err = cli_opt_ull("doctor", "--pid", optarg, 1, INT_MAX, &v);
			if (err)
				return err;
			d.pid = (int)v;
			break;
		case 'O':
			cli_deprecated("doctor", "--output FORMAT", "-o|--format");
			/* fall through */
		case 'o':
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return cli_usage_error("doctor", "--format: '%s' is not text or json",
						       optarg);
			json = !strcmp(optarg, "json");
			break;
		case 'P':
			d.pin = optarg;
			break;
		case 'h':
			doctor_usage(stdout);
			return 0;
		default:
			return cli_usage_error("doctor", NULL);
		}
	}
	if (optind != argc)
		return cli_usage_error("doctor", "unexpected argument '%s'", argv[optind]);
	d.pin = steptime__pin_dir(d.pin);
	err = steptime__read_info(d.pin, &d.inf);
	if (err)
		return not_loaded(d.pin, -err, json);
	err = gather(&d);
	if (!err) {
		if (json)
			doctor_json(&d);
		else
			doctor_text(&d);
	}
	free(d.procs);
	free(d.sqs);
	free(d.checks);
	if (err) {
		fprintf(stderr, "steptime doctor: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
