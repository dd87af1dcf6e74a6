/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Small helpers the app library (lib/) and the command (tools/) share.
 * Not installed (as loader.h): the build's own. Header-only, static
 * inline: what applications load exports nothing more for them, and the
 * mark's clock read stays inline on its fast path.
 */
#ifndef _STEPTIME_UTIL_H
#define _STEPTIME_UTIL_H

#include <time.h>
#include <linux/types.h>

/* CLOCK_MONOTONIC now, in ns: the clock of every host time steptime keeps. */
static inline __attribute__((always_inline)) __u64 st_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/*
 * The escape of byte @c inside a JSON string, written to @esc. RFC 8259
 * section 7: quotation mark, reverse solidus and the control characters
 * U+0000 to U+001F must be escaped; every other byte stands as itself,
 * DEL (0x7f) and UTF-8's bytes included (its grammar's unescaped is
 * %x20-21 / %x23-5B / %x5D-10FFFF). Return: the escape's length (2 or
 * 6), or 0 when @c needs none.
 */
static inline unsigned int st_json_esc(unsigned char c, char esc[6])
{
	static const char hex[] = "0123456789abcdef";

	if (c >= 0x20 && c != '"' && c != '\\')
		return 0;
	esc[0] = '\\';
	if (c >= 0x20) {
		esc[1] = (char)c;
		return 2;
	}
	esc[1] = 'u';
	esc[2] = '0';
	esc[3] = '0';
	esc[4] = hex[c >> 4];
	esc[5] = hex[c & 0xf];
	return 6;
}

#endif /* _STEPTIME_UTIL_H */
