// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What every steptime command says the same way: option values, usage
 * errors, why the pinned maps cannot be opened, write errors.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"

/*
 * Who may read the maps under @pin, as load's --mode and --group set them:
 * " (the maps are mode 0600, owner root:root)", else what denies reaching
 * them (their directory's), into @buf; "" when stat() cannot tell.
 */
static void maps_access(const char *pin, char *buf, size_t len)
{
	char path[PATH_MAX], user[32], group[32];
	const char *what = "the maps are";
	struct passwd *pw;
	struct group *gr;
	struct stat st;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/steps", pin);
	if (stat(path, &st)) {
		if (stat(pin, &st))
			return;
		what = "their directory is";
	}
	pw = getpwuid(st.st_uid);
	if (pw)
		snprintf(user, sizeof(user), "%s", pw->pw_name);
	else
		snprintf(user, sizeof(user), "%u", (unsigned int)st.st_uid);
	gr = getgrgid(st.st_gid);
	if (gr)
		snprintf(group, sizeof(group), "%s", gr->gr_name);
	else
		snprintf(group, sizeof(group), "%u", (unsigned int)st.st_gid);
	snprintf(buf, len, " (%s mode %04o, owner %s:%s)", what,
		 (unsigned int)(st.st_mode & 07777), user, group);
}

int cli_open_error(const char *cmd, const char *pin, int err)
{
	char access[128];

	if (err == ENOENT || err == ENODEV) {
		fprintf(stderr, "steptime %s: steptime is not loaded (nothing "
			"pinned under %s): run `steptime load` first\n", cmd, pin);
	} else if ((err == EACCES || err == EPERM) && geteuid()) {
		maps_access(pin, access, sizeof(access));
		fprintf(stderr, "steptime %s: permission denied reading the maps "
			"under %s%s: run as root, or as a user their mode lets "
			"read (steptime load --mode 0660 --group GROUP, or "
			"--mode 0644)\n", cmd, pin, access);
	} else if (err == EACCES || err == EPERM || err == ENOSYS) {
		/* Root refused bpf(), or never given it: not the maps' mode. */
		fprintf(stderr, "steptime %s: %s reading the maps under %s: "
			"bpf() is refused to this process (%s): a container "
			"needs CAP_BPF with Docker's seccomp profile, or a "
			"profile that allows bpf() (deploy/README.md)\n", cmd,
			err == ENOSYS ? "bpf() not available" : "permission denied",
			pin, strerror(err));
	} else {
		fprintf(stderr, "steptime %s: cannot open the maps under %s: "
			"%s\n", cmd, pin, strerror(err));
	}
	return 1;
}

/*
 * ferror() keeps no errno, and a write that failed in an earlier fputs()
 * left its data in the buffer: flushing it again fails the same way (a
 * full disk, a closed pipe) and says why.
 */
int cli_out_error(FILE *f)
{
	errno = 0;
	if (fflush(f) == 0 && !ferror(f))
		return 0;
	if (errno)
		return -errno;
	clearerr(f);
	if (fflush(f) == EOF && errno)
		return -errno;
	return -EIO;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		fprintf(stderr, "steptime %s: ", cmd);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	fprintf(stderr, "Try 'steptime %s --help'.\n", cmd);
	return 2;
}

int cli_parse_ull(const char *s, int base, unsigned long long min,
		  unsigned long long max, unsigned long long *v)
{
	const char *digits = base == 8 ? "01234567" : "0123456789";
	char *end;

	if (!*s || strspn(s, digits) != strlen(s))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, base);
	return errno || *end || *v < min || *v > max ? -EINVAL : 0;
}

int cli_opt_ull(const char *cmd, const char *opt, const char *s,
		unsigned long long min, unsigned long long max,
		unsigned long long *v)
{
	if (!cli_parse_ull(s, 10, min, max, v))
		return 0;
	if (max == ULLONG_MAX)
		return cli_usage_error(cmd, "%s: '%s' is not a whole number of at least %llu",
				       opt, s, min);
	return cli_usage_error(cmd, "%s: '%s' is not a whole number from %llu to %llu",
			       opt, s, min, max);
}

int cli_opt_secs(const char *cmd, const char *opt, const char *s, double min,
		 double max, double *v)
{
	const char *dot = strchr(s, '.');
	char *end;

	/* Plain decimals: no sign, exponent, hex, inf or nan (strtod's). */
	if (*s && strspn(s, "0123456789.") == strlen(s) &&
	    (!dot || !strchr(dot + 1, '.')) && strcmp(s, ".")) {
		*v = strtod(s, &end);
		if (!*end && *v >= min && *v <= max)
			return 0;
	}
	return cli_usage_error(cmd, "%s: '%s' is not a number of seconds from %g to %g",
			       opt, s, min, max);
}
