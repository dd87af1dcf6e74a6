/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A shell command line's output, for the tests that drive the steptime
 * command as a user would.
 */
#ifndef ST_RUN_H
#define ST_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/*
 * @name beside this program's binary, @up folders up (the build tree's
 * libraries from $(O)/selftests/<dir>/: 2), into @buf.
 * Return: 0, or -1 when it does not fit or /proc/self/exe is unreadable.
 */
static inline int st_beside_self(char *buf, size_t len, int up,
				 const char *name)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash = NULL;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	for (up++; up > 0; up--) {
		slash = strrchr(buf, '/');
		if (!slash)
			return -1;
		*slash = 0;
	}
	return (size_t)snprintf(slash, len - (slash - buf), "/%s", name) <
	       len - (slash - buf) ? 0 : -1;
}

/* The number after " @key=" in @line, a "key=value" record; -1: none. */
static inline long st_field(const char *line, const char *key)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

#endif /* ST_RUN_H */
