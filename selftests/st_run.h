/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A shell command line's output, for the tests that drive the steptime
 * command as a user would.
 */
#ifndef ST_RUN_H
#define ST_RUN_H

#include <stdio.h>

/*
 * Run @cmd, its standard output (and what the line redirects there) into
 * @out, at most @len - 1 bytes, NUL-terminated.
 * Return: pclose()'s wait status, or -1 when it could not be started.
 */
static inline int st_run(const char *cmd, char *out, size_t len)
{
	FILE *f = popen(cmd, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	return pclose(f);
}

#endif /* ST_RUN_H */
