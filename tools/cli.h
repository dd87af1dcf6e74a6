/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every steptime command says the same way: option values, usage
 * errors, why the pinned maps cannot be opened, write errors.
 */
#ifndef _STEPTIME_TOOLS_CLI_H
#define _STEPTIME_TOOLS_CLI_H

#include <stdio.h>

/* The "not loaded" / "permission denied" messages of every command. */
int cli_open_error(const char *cmd, const char *pin, int err);

/*
 * Flush @f: 0 when everything written to it got there, else -errno of the
 * failure (ENOSPC, EPIPE...), -EIO when nothing says more.
 */
int cli_out_error(FILE *f);

/*
 * A bad command line: "steptime CMD: MSG" (getopt printed its own: @fmt
 * NULL), then "Try 'steptime CMD --help'.". Return: 2, the exit status.
 */
__attribute__((format(printf, 2, 3)))
int cli_usage_error(const char *cmd, const char *fmt, ...);

/*
 * An unsigned number in @base (10 or 8), in [@min, @max]: its digits only,
 * no sign, space, prefix or trailing text. Return: 0 or -EINVAL.
 */
int cli_parse_ull(const char *s, int base, unsigned long long min,
		  unsigned long long max, unsigned long long *v);

/*
 * Option @opt's decimal value @s, in [@min, @max]. Return: 0, or 2 after
 * the usage error naming the option.
 */
int cli_opt_ull(const char *cmd, const char *opt, const char *s,
		unsigned long long min, unsigned long long max,
		unsigned long long *v);

/* Option @opt's seconds @s (digits and one '.'), in [@min, @max]: as above. */
int cli_opt_secs(const char *cmd, const char *opt, const char *s, double min,
		 double max, double *v);

#endif /* _STEPTIME_TOOLS_CLI_H */
