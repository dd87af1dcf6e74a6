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

/*
 * An old spelling @old used: "steptime CMD: OLD is deprecated, use NEW"
 * on stderr. It still works for one release (steptime(8), OLD SPELLINGS).
 */
void cli_deprecated(const char *cmd, const char *old, const char *new);

/* Durations in ns, as cli_opt_duration() takes them. */
#define CLI_MS	1000000ull
#define CLI_S	1000000000ull

/*
 * Option @opt's duration @s: a decimal number and its unit, ns, us, ms, s,
 * m or h ("500ms", "1.5s", "1m"), in [@min_ns, @max_ns], into *@ns. A bare
 * number is read in @old_unit_ns, the option's unit before units were
 * asked for, with a deprecation warning; so is @old, the old spelling of
 * @opt that gave @s (NULL: @opt gave it), in the same one warning.
 * Return: 0, or 2 after the usage error naming the option.
 */
int cli_opt_duration(const char *cmd, const char *opt, const char *old,
		     const char *s, unsigned long long old_unit_ns,
		     unsigned long long min_ns, unsigned long long max_ns,
		     unsigned long long *ns);

#endif /* _STEPTIME_TOOLS_CLI_H */
