// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime: per-training-step device timing for Ascend NPUs.
 */
#include <stdio.h>
#include <string.h>

#include <steptime/steptime.h>
#include "cmds.h"
#include "cli.h"
#include "snapshot.h"

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "load", cmd_load, "load and attach the BPF program (root)" },
	{ "unload", cmd_unload, "detach and unpin it (root)" },
	{ "status", cmd_status, "attach mode, device and every counter" },
	{ "stat", cmd_stat, "per-step statistics: table, csv or json" },
	{ "record", cmd_record, "stream finished steps as JSON lines" },
	{ "trace", cmd_trace, "the steps as a Perfetto/Chrome trace (JSON)" },
	{ "export", cmd_export, "serve Prometheus/OpenMetrics metrics" },
	{ "top", cmd_top, "a live view of the processes' steps" },
	{ "doctor", cmd_doctor, "what steptime sees here and why (bug reports)" },
};

static int usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: steptime COMMAND [OPTIONS]   (steptime COMMAND --help)\n"
		"       steptime --version\n\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	return f == stderr ? 2 : 0;
}

/* 0, or 1 after naming the write error of what @who printed. */
static int out_ok(const char *who)
{
	int err = cli_out_error(stdout);

	if (!err)
		return 0;
	fprintf(stderr, "%s: write error: %s\n", who, strerror(-err));
	return 1;
}

/*
 * The command's own argv[0] is "steptime CMD": getopt_long() prefixes its
 * messages (unknown option, missing value) with it.
 */
static int run(const struct cmd *c, int argc, char **argv)
{
	char name[32];
	int ret;

	snprintf(name, sizeof(name), "steptime %s", c->name);
	argv[1] = name;
	ret = c->fn(argc - 1, argv + 1);
	/* What it printed must have got there (a command that failed said why). */
	return ret ?: out_ok(name);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return usage(stdout) ?: out_ok("steptime");
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("steptime %s (BPF ABI %d)\n", STEPTIME_VERSION,
		       STEPTIME_ABI_VERSION);
		return out_ok("steptime");
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return run(&cmds[i], argc, argv);
	fprintf(stderr, "steptime: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
