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
#include <stdbool.h>
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

void cli_deprecated(const char *cmd, const char *old, const char *new)
{
	fprintf(stderr, "steptime %s: %s is deprecated, use %s (the old "
		"spelling goes in the next release)\n", cmd, old, new);
}

static const struct {
	const char *name;
	unsigned long long ns;
} dur_units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
	{ "s", 1000000000ull }, { "m", 60000000000ull },
	{ "h", 3600000000000ull },
};

/* @ns as the largest unit that writes it whole: "50ms", "1h". */
static void dur_str(unsigned long long ns, char *buf, size_t len)
{
	size_t i = sizeof(dur_units) / sizeof(dur_units[0]);

	while (--i && ns % dur_units[i].ns)
		;
	snprintf(buf, len, "%llu%s", ns / dur_units[i].ns, dur_units[i].name);
}

/*
 * @s, digits with at most one '.', times @unit ns (what is below 1 ns
 * dropped), into *@ns. Return: 0 or -EINVAL (not that, or past 2^64 ns).
 */
static int dur_value(const char *s, size_t len, unsigned long long unit,
		     unsigned long long *ns)
{
	unsigned long long v = 0, scale = unit;
	bool frac = false, digit = false;
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] == '.' && !frac) {
			frac = true;
			continue;
		}
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		digit = true;
		if (!frac) {
			if (__builtin_mul_overflow(v, 10, &v) ||
			    __builtin_add_overflow(v, (s[i] - '0') * unit, &v))
				return -EINVAL;
			continue;
		}
		scale /= 10;
		if (__builtin_add_overflow(v, (s[i] - '0') * scale, &v))
			return -EINVAL;
	}
	*ns = v;
	return digit ? 0 : -EINVAL;
}

int cli_opt_duration(const char *cmd, const char *opt, const char *old,
		     const char *s, unsigned long long old_unit_ns,
		     unsigned long long min_ns, unsigned long long max_ns,
		     unsigned long long *ns)
{
	size_t num = strspn(s, "0123456789."), i;
	char lo[32], was[64], now[64], old_unit[32];
	const char *unit = "";
	unsigned long long v;
	int err = -EINVAL;

	if (!s[num]) {
		err = dur_value(s, num, old_unit_ns, &v);
		/* Its old unit, spelt out: what to write instead. */
		dur_str(old_unit_ns, old_unit, sizeof(old_unit));
		unit = old_unit + strspn(old_unit, "0123456789");
	}
	for (i = 0; err && i < sizeof(dur_units) / sizeof(dur_units[0]); i++)
		if (num && !strcmp(s + num, dur_units[i].name))
			err = dur_value(s, num, dur_units[i].ns, &v);
	dur_str(min_ns, lo, sizeof(lo));
	dur_str(max_ns, now, sizeof(now));
	if (err)
		return cli_usage_error(cmd, "%s: '%s' is not a duration: a number and its unit, ns, us, ms, s, m or h (500ms, 2s), from %s to %s",
				       opt, s, lo, now);
	if (v < min_ns || v > max_ns)
		return cli_usage_error(cmd, "%s: '%s' is not from %s to %s",
				       opt, s, lo, now);
	/* One warning for all that is old in it. */
	if (*unit || old) {
		snprintf(was, sizeof(was), "%s %s", old ?: opt, s);
		snprintf(now, sizeof(now), "%s %s%s", opt, s, unit);
		cli_deprecated(cmd, was, now);
	}
	*ns = v;
	return 0;
}
