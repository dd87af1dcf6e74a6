// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The uprobes of a load, beside its kernel hooks: the ring kick's on the
 * libsteptime files whose processes kick the program themselves, and the
 * HAL's on each libascend_hal.so that hal.c found.
 */
#include <errno.h>
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "loader_int.h"

/*
 * The libsteptime files whose processes kick the BPF program themselves
 * (steptime__ring_kick(), see steptime/abi.h): those given, or the one the
 * dynamic loader finds for its soname. None found: marks are consumed at
 * the processes' ioctls, as without the probe.
 */
int kick_libs(struct load_ctx *c, const char *libs)
{
	struct link_map *lm = NULL;
	char path[PATH_MAX];
	const char *p = libs;
	void *h;
	int r;

	c->nkick = 0;
	if (libs) {
		while ((r = path_list_next(&p, path, sizeof(path))) > 0) {
			if (c->nkick == STEPTIME_KICK_LIBS)
				return -E2BIG;
			strcpy(c->kick_path[c->nkick++], path);
		}
		return r;
	}
	h = dlopen("libsteptime.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return 0;
	if (!dlinfo(h, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name[0] &&
	    realpath(lm->l_name, c->kick_path[0]))
		c->nkick = 1;
	dlclose(h);
	return 0;
}

/* The ring kick's uprobe on each library; one that fails is said, not fatal. */
void kick_attach(struct load_ctx *c)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "steptime__ring_kick");
	struct bpf_program *prog = c->skel->progs.uprobe_ring_kick;
	struct bpf_link *l;
	int i, err;

	c->nkicked = 0;
	for (i = 0; i < c->nkick; i++) {
		if (stat(c->kick_path[i], &c->kicked[c->nkicked])) {
			why_add(c, "ring kick: %s: %s", c->kick_path[i],
				strerror(errno));
			continue;
		}
		l = bpf_program__attach_uprobe_opts(prog, -1, c->kick_path[i],
						    0, &uo);
		err = link_add(c, prog, l);
		if (err) {
			why_add(c, "ring kick: %s: %s", c->kick_path[i],
				strerror(-err));
			continue;
		}
		/* Its pin: one name per library. */
		snprintf(c->kick_names[c->nkicked], sizeof(c->kick_names[0]),
			 "%s_%d", bpf_program__name(prog), c->nkicked);
		c->link_names[c->nlinks - 1] = c->kick_names[c->nkicked];
		c->nkicked++;
	}
}

/*
 * libascend_hal.so's entry points and the programs on them (bpf/hal.bpf.h):
 * at entry, and at return unless @ret is NULL.
 */
struct hal_probe {
	const char *fn;
	struct bpf_program *entry, *ret;
};

static int hal_probes(const struct load_ctx *c, struct hal_probe *p)
{
	struct steptime_bpf *s = c->skel;

	p[0] = (struct hal_probe){ "halSqCqAllocate", s->progs.uprobe_hal_alloc,
				   s->progs.uretprobe_hal_alloc };
	/* The per-task calls: counted from the processes' journals. */
	if (c->journal)
		return 1;
	p[1] = (struct hal_probe){ "halSqTaskSend", s->progs.uprobe_hal_send,
				   NULL };
	p[2] = (struct hal_probe){ "halSqCqQuery", s->progs.uprobe_hal_query,
				   s->progs.uretprobe_hal_query };
	return 3;
}

/* One uprobe of library @lib on @fn; its pin named after both. */
static int hal_attach_one(struct load_ctx *c, int lib, const char *fn,
			  struct bpf_program *prog, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = fn, .retprobe = ret);
	struct bpf_link *l;
	int err;

	l = bpf_program__attach_uprobe_opts(prog, -1, c->hal.path[lib], 0, &uo);
	err = link_add(c, prog, l);
	if (err)
		return err;
	snprintf(c->hal_names[c->nhal_names], sizeof(c->hal_names[0]),
		 "%s_%d", bpf_program__name(prog), lib);
	c->link_names[c->nlinks - 1] = c->hal_names[c->nhal_names++];
	return 0;
}

/*
 * Every entry point of each library, or none of it: a library with some
 * probes missing would count part of a process's work. One that fails is
 * said, not fatal: its processes' steps are flagged.
 */
void hal_attach(struct load_ctx *c)
{
	struct hal_probe p[3];
	int n = hal_probes(c, p), lib, i, first, err = 0;

	c->nhal_names = 0;
	for (lib = 0; lib < c->hal.n; lib++) {
		first = c->nlinks;
		for (i = 0; i < n && !err; i++) {
			err = hal_attach_one(c, lib, p[i].fn, p[i].entry, false);
			if (!err && p[i].ret)
				err = hal_attach_one(c, lib, p[i].fn, p[i].ret,
						     true);
		}
		c->hal_on[lib] = !err;
		if (!err)
			continue;
		why_add(c, "HAL: %s: %s: %s", c->hal.path[lib], p[i - 1].fn,
			strerror(-err));
		while (c->nlinks > first) {
			bpf_link__destroy(c->links[--c->nlinks]);
			c->nhal_names--;
		}
		err = 0;
	}
}

/*
 * The HAL's programs load where there is a library to put them on; the
 * per-task ones not with the journal (journal.bpf.h counts those calls).
 */
void hal_autoload(struct load_ctx *c)
{
	struct steptime_bpf *s = c->skel;
	struct hal_probe p[3];
	int n = hal_probes(c, p), i;

	for (i = 0; i < n; i++) {
		bpf_program__set_autoload(p[i].entry, c->hal.n > 0);
		if (p[i].ret)
			bpf_program__set_autoload(p[i].ret, c->hal.n > 0);
	}
	if (c->journal) {
		bpf_program__set_autoload(s->progs.uprobe_hal_send, false);
		bpf_program__set_autoload(s->progs.uprobe_hal_query, false);
		bpf_program__set_autoload(s->progs.uretprobe_hal_query, false);
	}
}
