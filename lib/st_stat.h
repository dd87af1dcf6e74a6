/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libsteptime internals for the `steptime` command alone: it links
 * libsteptime.a, so it reaches these hidden names; apps cannot, and the
 * public API stays what it is. With them, `steptime stat` formats the
 * steps of one reader on two threads, in place (no copy of each record),
 * with the library's writers.
 */
#ifndef _STEPTIME_ST_STAT_H
#define _STEPTIME_ST_STAT_H

#include <stddef.h>
#include <steptime/steptime.h>
#include "st_internal.h"

/*
 * The @i-th step in order, of the steptime_reader__count() that
 * steptime_reader__next() returns (@i below it: not checked), in place:
 * valid until the reader is freed. Any thread may call it.
 */
ST_HIDDEN const struct steptime_step_stats *
st_reader_step(const struct steptime_reader *r, size_t i);

/*
 * steptime_phases__get() of @s[0, @n), up to STEPTIME_PHASES_PER_STEP each
 * into @out[i] (*@found[i]: as its return), under one lock: threads that
 * format steps side by side would each take it per step, and wait.
 */
ST_HIDDEN void st_phases_get_many(const struct steptime_step_stats *const *s,
				  size_t n,
				  struct steptime_phase (*out)[STEPTIME_PHASES_PER_STEP],
				  int *found);

/* The most st_phases_snprintf() writes, its NUL included. */
#define ST_PHASES_TEXT	(STEPTIME_PHASES_PER_STEP * 640 + 8)

/*
 * The phases @ph[0, @n) of a step as `steptime stat` prints them after
 * its record: the JSON object's tail (`, "phases": [...]}`, to replace
 * the record's closing brace), one line each in the table, nothing in
 * CSV. Return: the length (as snprintf), or -EINVAL.
 */
ST_HIDDEN int st_phases_snprintf(char *buf, size_t len, enum steptime_fmt fmt,
				 const struct steptime_phase *ph, int n);

#endif
