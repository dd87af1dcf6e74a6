// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The attach ladder: a mode's programs and their driver functions, what
 * the kernel offers for it, and trying it (open, configure, load, attach),
 * with why a mode failed, the verifier's reasons among them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "loader_int.h"

static const char *const mode_names[] = {
	[STEPTIME_ATTACH_AUTO] = "auto",
	[STEPTIME_ATTACH_FENTRY] = "fentry",
	[STEPTIME_ATTACH_KPROBE] = "kprobe",
	[STEPTIME_ATTACH_TP_BTF] = "tp_btf",
	[STEPTIME_ATTACH_TRACEPOINT] = "tracepoint",
};

const char *steptime__attach_mode_str(int mode)
{
	if (mode < 0 || mode > STEPTIME_ATTACH_TRACEPOINT)
		return "unknown";
	return mode_names[mode];
}

/* A program of a mode, and the driver function it attaches to. */
struct mode_prog {
	struct bpf_program *prog;
	const struct hook *hook;	/* NULL: a syscall tracepoint */
	bool ret;			/* kretprobe */
	bool optional;			/* the mode works without it */
};

static int mode_progs(struct load_ctx *c, struct steptime_bpf *s, int mode,
		      struct mode_prog *p)
{
	const struct profile *pr = c->prof;
	int n = 0;

#define MP(pg, h, r, o) (p[n++] = (struct mode_prog){ s->progs.pg, h, r, o })
	switch (mode) {
	case STEPTIME_ATTACH_FENTRY:
		MP(fentry_ioctl, &pr->ioctl, false, false);
		MP(fexit_ioctl, &pr->ioctl, false, false);
		MP(fexit_cq_enque, &pr->cq, false, true);
		MP(fentry_trace_sqe, &pr->sqe, false, true);
		MP(fentry_chan_add, &pr->chan_add, false, true);
		MP(fentry_chan_del, &pr->chan_del, false, true);
		break;
	case STEPTIME_ATTACH_KPROBE:
		MP(kprobe_ioctl, &pr->ioctl, false, false);
		MP(kretprobe_ioctl, &pr->ioctl, true, false);
		MP(kprobe_cq_enque, &pr->cq, false, true);
		MP(kretprobe_cq_enque, &pr->cq, true, true);
		MP(kprobe_trace_sqe, &pr->sqe, false, true);
		MP(kprobe_chan_add, &pr->chan_add, false, true);
		MP(kprobe_chan_del, &pr->chan_del, false, true);
		break;
	case STEPTIME_ATTACH_TP_BTF:
		if (c->raw_tp) {
			MP(rawtp_sys_enter, NULL, false, false);
			MP(rawtp_sys_exit, NULL, false, false);
		} else {
			MP(tpbtf_sys_enter, NULL, false, false);
			MP(tpbtf_sys_exit, NULL, false, false);
		}
		break;
	default:
		MP(tp_sys_enter_ioctl, NULL, false, false);
		MP(tp_sys_exit_ioctl, NULL, false, false);
		break;
	}
#undef MP
	return n;
}

/*
 * Whether a driver hook can be used in @mode: its function is in kallsyms
 * (in its module), and for fentry the module has BTF. Says why not.
 */
static bool hook_usable(struct load_ctx *c, int mode, const struct hook *h)
{
	const char *m = steptime__attach_mode_str(mode);

	if (!h->fn)
		return false;
	if (!kallsyms_has(h)) {
		why_add(c, "%s: %s%s%s not in kallsyms (%s)", m,
			h->mod ?: "", h->mod ? ":" : "", h->fn,
			h == &c->prof->ioctl ? "driver not loaded?" :
			"optional hook: not used");
		return false;
	}
	if (mode == STEPTIME_ATTACH_FENTRY && !module_btf_has(h)) {
		why_add(c, "fentry: no module BTF for %s (/sys/kernel/btf/%s)",
			h->mod, h->mod);
		return false;
	}
	return true;
}

/*
 * Whether the channel hooks bind the SQE trace hook's channels to their SQs
 * (both, or neither: a binding never dropped could name a reused channel's
 * memory). Without them uio_t SQEs are attributed by stream id, ambiguous
 * ones flagged. Test hook: STEPTIME_NO_CHAN_HOOK=1 leaves them out.
 */
static bool chan_hooks(struct load_ctx *c, int mode)
{
	const char *e = getenv("STEPTIME_NO_CHAN_HOOK");

	if (e && *e && strcmp(e, "0")) {
		why_add(c, "%s: channel hooks left out (STEPTIME_NO_CHAN_HOOK)",
			steptime__attach_mode_str(mode));
		return false;
	}
	return hook_usable(c, mode, &c->prof->chan_add) &&
	       hook_usable(c, mode, &c->prof->chan_del);
}

/* What the kernel offers for a mode, before trying it. */
bool mode_available(struct load_ctx *c, int mode)
{
	const char *m = steptime__attach_mode_str(mode);

	/*
	 * fentry and tp_btf name their target by the kernel's own BTF ids: an
	 * external BTF (--btf) serves CO-RE relocations, not attachment.
	 */
	if (mode == STEPTIME_ATTACH_FENTRY && !c->kernel_btf) {
		why_add(c, "fentry: the kernel has no BTF of its own (--btf serves CO-RE only)");
		return false;
	}
	switch (mode) {
	case STEPTIME_ATTACH_FENTRY:
	case STEPTIME_ATTACH_KPROBE:
		if (!c->prof->ioctl.fn) {
			why_add(c, "%s: profile %s names no handler", m,
				c->prof->name);
			return false;
		}
		if (!hook_usable(c, mode, &c->prof->ioctl))
			return false;
		if (mode == STEPTIME_ATTACH_FENTRY) {
			int err = fentry_probe(&c->prof->ioctl);

			if (err) {
				why_add(c, "fentry: an empty program on %s fails: %s",
					c->prof->ioctl.fn, err == -ENOTSUPP ?
					"ENOTSUPP (no ftrace direct calls for BPF trampolines: arm64 before 6.4)" :
					strerror(-err));
				return false;
			}
		}
		return true;
	case STEPTIME_ATTACH_TP_BTF:
		return true;
	case STEPTIME_ATTACH_TRACEPOINT:
		if (access(TRACEFS_ROOT "/events/syscalls/sys_enter_ioctl", F_OK) &&
		    access("/sys/kernel/debug/tracing/events/syscalls/sys_enter_ioctl", F_OK)) {
			why_add(c, "tracepoint: syscalls:sys_enter_ioctl missing (tracefs, CONFIG_FTRACE_SYSCALLS)");
			return false;
		}
		return true;
	}
	return false;
}

void links_destroy(struct load_ctx *c)
{
	while (c->nlinks > 0)
		bpf_link__destroy(c->links[--c->nlinks]);
}

int link_add(struct load_ctx *c, struct bpf_program *prog,
		    struct bpf_link *link)
{
	int err = libbpf_get_error(link);

	if (err)
		return err;
	if (c->nlinks == LOAD_MAX_LINKS) {
		bpf_link__destroy(link);
		return -E2BIG;
	}
	c->link_names[c->nlinks] = bpf_program__name(prog);
	c->links[c->nlinks++] = link;
	return 0;
}

/*
 * Marks written after a process's last ioctl are read at its exit: on
 * do_exit() in the modes that hook the driver, since a syscall tracepoint
 * would put every syscall of every process on the traced path; on
 * exit_group() in the syscall modes, where every syscall is on it already.
 */
static struct bpf_program *exit_sync_prog(struct steptime_bpf *s, int mode)
{
	if (mode == STEPTIME_ATTACH_FENTRY)
		return s->progs.fentry_do_exit;
	if (mode == STEPTIME_ATTACH_KPROBE)
		return s->progs.kprobe_do_exit;
	return s->progs.tp_sys_enter_exit_group;
}

/* Whether program @p of a mode is one of the optional hooks it left out. */
static bool hook_off(const struct load_ctx *c, const struct mode_prog *p,
		     bool cq, bool sqe, bool chan)
{
	const struct profile *pr = c->prof;

	if (!p->optional)
		return false;
	if (p->hook == &pr->cq)
		return !cq;
	if (p->hook == &pr->sqe)
		return !sqe;
	return !chan;
}

static int mode_attach(struct load_ctx *c, int mode, bool cq, bool sqe,
		       bool chan)
{
	struct steptime_bpf *s = c->skel;
	struct bpf_program *prog;
	struct mode_prog p[8];
	struct bpf_link *l;
	char target[192];
	int n, i, err;

	n = mode_progs(c, s, mode, p);
	for (i = 0; i < n; i++) {
		if (hook_off(c, &p[i], cq, sqe, chan))
			continue;
		if (mode == STEPTIME_ATTACH_KPROBE)
			l = bpf_program__attach_kprobe(p[i].prog, p[i].ret,
						       kprobe_target(p[i].hook, target,
								     sizeof(target)));
		else
			l = bpf_program__attach(p[i].prog);
		err = link_add(c, p[i].prog, l);
		if (err)
			return err;
	}
	l = bpf_program__attach(s->progs.tp_sched_process_exit);
	err = link_add(c, s->progs.tp_sched_process_exit, l);
	if (err)
		return err;
	kick_attach(c);
	hal_attach(c);
	/* Where it attaches, marks written after the last ioctl count too. */
	prog = exit_sync_prog(s, mode);
	if (mode == STEPTIME_ATTACH_KPROBE)
		l = bpf_program__attach_kprobe(prog, false, "do_exit");
	else
		l = bpf_program__attach(prog);
	err = libbpf_get_error(l);
	if (err) {
		/* the load works without it: said, not fatal */
		why_add(c, "%s not attached (%s): marks after a process's last ioctl are not read at its exit",
			bpf_program__name(prog), strerror(-err));
		return 0;
	}
	return link_add(c, prog, l);
}

/* A mode's name as status shows it: tp_btf's fallback is raw_tp. */
static const char *mode_label(const struct load_ctx *c, int mode)
{
	if (mode == STEPTIME_ATTACH_TP_BTF && c->raw_tp)
		return "raw_tp";
	return steptime__attach_mode_str(mode);
}

static bool log_verbose(const struct load_ctx *c)
{
	return c->log_size == STEPTIME_VERIFIER_LOG;
}

/* Program @i's verifier log: its slot, or with -v the one log. */
static char *log_slot(const struct load_ctx *c, int i)
{
	if (log_verbose(c))
		return c->log_buf;
	return c->log_buf + (i < ST_LOG_SLOTS ? i : ST_LOG_SLOTS - 1) *
	       (size_t)STEPTIME_VERIFIER_ERR;
}

/*
 * The program of @s the verifier refused, its log in *@log: libbpf loads
 * them in order and stops at the first refused, so it is the last whose
 * slot the kernel wrote. NULL when no program's was (the load failed
 * before) or with -v (one log for all; libbpf's messages name it).
 */
static const char *prog_refused(const struct load_ctx *c,
				struct steptime_bpf *s, const char **log)
{
	const char *name = NULL;
	struct bpf_program *prog;
	int i = 0;

	*log = c->log_buf;
	if (log_verbose(c))
		return NULL;
	bpf_object__for_each_program(prog, s->obj) {
		if (!bpf_program__autoload(prog))
			continue;
		if (log_slot(c, i)[0]) {
			name = bpf_program__name(prog);
			*log = log_slot(c, i);
		}
		i++;
	}
	return name;
}

/*
 * The call libbpf writes where a CO-RE relocation found no match in the
 * BTF it was given (libbpf's POISON_CALL, 0xbad2310): the verifier then
 * refuses it as an unknown function.
 */
#define ST_LIBBPF_POISON	"invalid func unknown#195896080"

/*
 * Why the verifier refused a program, from its log: "too large: N insns"
 * for the instruction limit, a CO-RE relocation that found nothing, else
 * the log's last message.
 */
static void verifier_reason(const char *log, char *buf, size_t len)
{
	const char *p = log ? strstr(log, "BPF program is too large. Processed ") : NULL;
	const char *end, *line = NULL, *s;

	if (log && strstr(log, ST_LIBBPF_POISON)) {
		snprintf(buf, len, "a CO-RE relocation found no match: the "
			 "BTF does not describe this kernel's types (--btf of "
			 "another kernel?)");
		return;
	}
	if (p) {
		snprintf(buf, len, "too large: %lu insns",
			 strtoul(p + strlen("BPF program is too large. Processed "),
				 NULL, 10));
		return;
	}
	/* The last line that is not the statistics. */
	for (s = log; s && *s; s = end + 1) {
		end = strchrnul(s, '\n');
		if (end > s && strncmp(s, "processed ", 10) &&
		    strncmp(s, "verification time", 17) &&
		    strncmp(s, "stack depth", 11))
			line = s;
		if (!*end)
			break;
	}
	if (!line) {
		snprintf(buf, len, "no verifier log");
		return;
	}
	end = strchrnul(line, '\n');
	snprintf(buf, len, "%.*s", (int)(end - line), line);
}

/* Open, configure, load and attach the skeleton in one mode. */
static int mode_try(struct load_ctx *c, int mode)
{
	const char *m = mode_label(c, mode), *refused, *log;
	const struct profile *pr = c->prof;
	struct bpf_program *prog;
	struct mode_prog p[8];
	bool cq = false, sqe = false, chan = false, on;
	char why[160], *lb;
	int n, i, err;

	LIBBPF_OPTS(bpf_object_open_opts, oo,
		    .btf_custom_path = c->btf_path);

	c->refused = false;
	c->skel = steptime_bpf__open_opts(&oo);
	if (!c->skel)
		return -errno;
	c->skel->rodata->target_rdev = c->rdev;
	c->skel->rodata->counter_freq_hz = c->freq;
	c->skel->rodata->has_bpf_loop = c->has_loop;
	c->skel->rodata->stars_version = c->stars;
	c->skel->rodata->ts_inst_id_off = pr->ts_inst_id_off;
	c->skel->rodata->chan_id_off = pr->chan_id_off;
	c->skel->rodata->journal_on = c->journal && c->hal.n > 0;
	if ((mode == STEPTIME_ATTACH_FENTRY || mode == STEPTIME_ATTACH_KPROBE) &&
	    !c->no_hooks) {
		cq = hook_usable(c, mode, &pr->cq);
		sqe = hook_usable(c, mode, &pr->sqe);
		chan = sqe && chan_hooks(c, mode);
	}
	c->skel->rodata->cq_hook = cq;
	c->skel->rodata->sqe_hook = sqe;
	c->skel->rodata->chan_hook = chan;

	bpf_object__for_each_program(prog, c->skel->obj)
		bpf_program__set_autoload(prog, false);
	n = mode_progs(c, c->skel, mode, p);
	for (i = 0; i < n; i++) {
		on = !hook_off(c, &p[i], cq, sqe, chan);
		bpf_program__set_autoload(p[i].prog, on);
		if (on && mode == STEPTIME_ATTACH_FENTRY)
			bpf_program__set_attach_target(p[i].prog, 0,
						       p[i].hook->fn);
	}
	bpf_program__set_autoload(c->skel->progs.tp_sched_process_exit, true);
	bpf_program__set_autoload(exit_sync_prog(c->skel, mode), true);
	bpf_program__set_autoload(c->skel->progs.uprobe_ring_kick, c->nkick > 0);
	hal_autoload(c);
	/* Per program: a log level for the object would apply to its BTF. */
	i = 0;
	bpf_object__for_each_program(prog, c->skel->obj) {
		if (!bpf_program__autoload(prog))
			continue;
		lb = log_slot(c, i++);
		lb[0] = 0;
		bpf_program__set_log_buf(prog, lb, log_verbose(c) ?
					 c->log_size : STEPTIME_VERIFIER_ERR);
		bpf_program__set_log_level(prog, ST_LOG_LEVEL_STATS |
					   log_verbose(c));
	}

	err = steptime_bpf__load(c->skel);
	if (err) {
		refused = prog_refused(c, c->skel, &log);
		/*
		 * -ENOSPC: the verifier said more than the log holds, which
		 * at BPF_LOG_STATS is a refusal (a 6.18 build fills it with
		 * blank lines after "BPF program is too large").
		 */
		c->refused = (refused || log_verbose(c)) &&
			     (err == -E2BIG || err == -EACCES ||
			      err == -EINVAL || err == -ENOSPC);
		if (c->refused) {
			verifier_reason(log, why, sizeof(why));
			why_add(c, "%s: %s refused%s%s: %s", m,
				refused ?: "a program",
				cq || sqe ? " with the driver hooks" : "",
				c->has_loop ? "" : " without bpf_loop()", why);
		} else {
			why_add(c, "%s: load failed%s: %s", m,
				cq || sqe ? " with the driver hooks" : "",
				strerror(-err));
		}
		if (log_verbose(c) && c->log_buf[0])
			fprintf(stderr, "steptime: %s: verifier log:\n%s\n", m,
				c->log_buf);
		goto fail;
	}
	err = mode_attach(c, mode, cq, sqe, chan);
	if (err) {
		why_add(c, "%s: attach failed%s: %s", m,
			cq || sqe ? " with the driver hooks" : "",
			strerror(-err));
		goto fail;
	}
	c->hooks = (cq ? 1 : 0) | (sqe ? 2 : 0) | (chan ? 4 : 0);
	return 0;
fail:
	links_destroy(c);
	steptime_bpf__destroy(c->skel);
	c->skel = NULL;
	/* The completion and SQE hooks are extras: try the ioctl hook alone. */
	if ((cq || sqe) && !c->no_hooks) {
		c->no_hooks = true;
		err = mode_try(c, mode);
		c->no_hooks = false;
	}
	return err;
}

/*
 * A mode with bpf_loop() where @loop says it may, then, if the verifier
 * refused it, without: the bounded fallbacks verify in fewer instructions.
 */
int mode_try_loops(struct load_ctx *c, int mode, bool loop)
{
	int err;

	c->has_loop = loop;
	err = mode_try(c, mode);
	if (err && c->refused && loop) {
		c->has_loop = false;
		err = mode_try(c, mode);
		if (!err)
			why_add(c, "%s: loaded without bpf_loop()",
				mode_label(c, mode));
	}
	return err;
}
