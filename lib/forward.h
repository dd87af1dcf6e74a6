/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Forwarding to the real library (zero-change deployment): with
 * LD_PRELOAD=libsteptime.so in front of CANN's libraries, each aclprof and
 * mstx call is recorded here and passed on to the next definition of the
 * same name (dlsym(RTLD_NEXT)), so msprof keeps working. Without a real
 * library, ST_FORWARD() is NULL and steptime answers alone.
 *
 * The lookup runs at the first call and, while it finds nothing, again at
 * most once a second (a runtime dlopen()ed later is found).
 */
#ifndef _STEPTIME_FORWARD_H
#define _STEPTIME_FORWARD_H

#include "base.h"

struct st_next {
	const char *name;
	void *fn;		/* the next definition, or NULL */
	__u64 retry_ns;		/* no lookup before this time */
};

/* The next definition of @n->name, or NULL. */
ST_HIDDEN void *st_next_get(struct st_next *n);

/* @n->name in the global scope (dlsym(RTLD_DEFAULT)), or NULL. */
ST_HIDDEN void *st_global_get(struct st_next *n);

#define ST_FORWARD_DECL(name, ret, args)				\
	typedef ret (*name##_next_fn) args;				\
	static struct st_next name##_next = { #name, NULL, 0 }

#define ST_FORWARD(name) ((name##_next_fn)st_next_get(&name##_next))

#endif /* _STEPTIME_FORWARD_H */
