// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Load, attach and pin steptime's BPF program; unload it; read what it
 * attached and its counters.
 *
 * Attach modes are probed best first (fentry, kprobe, tp_btf, tracepoint)
 * by what the kernel offers (kallsyms, BTF, tracefs) and then by trying:
 * the first mode that loads and attaches wins, and the reasons the better
 * ones failed are kept in the pinned "info" map for `steptime status`.
 *
 * A load is atomic: everything is pinned in a private directory next to the
 * pin directory ("<name>-tmp-<pid>-<start time>", on the same bpffs) and
 * renamed into place with RENAME_NOREPLACE, so a racing loader gets -EEXIST
 * and readers never see half a load. A loader killed before the rename
 * leaves only its private directory, which names a dead process: `steptime
 * status` reports it, and `unload` and the next `load` remove it.
 *
 * No process-wide libbpf state is set here (libbpf_set_print() is the
 * steptime command's business): verifier logs are per object.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
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

void why_add(struct load_ctx *c, const char *fmt, ...)
{
	size_t len = strlen(c->why);
	va_list ap;

	if (len && len + 2 < sizeof(c->why)) {
		strcpy(c->why + len, "; ");
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(c->why + len, sizeof(c->why) - len, fmt, ap);
	va_end(ap);
}

/*
 * Test hook: with STEPTIME_LOAD_KILL_AT=N in the environment the loader
 * kills itself (SIGKILL: nothing of its own runs after) at its Nth
 * checkpoint, one after each step that leaves something in bpffs or the
 * kernel. selftests/loader kills a load at every one of them.
 */
static void checkpoint(struct load_ctx *c)
{
	if (c->kill_at && ++c->checkpoints == c->kill_at)
		raise(SIGKILL);
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
static bool mode_available(struct load_ctx *c, int mode)
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

static void links_destroy(struct load_ctx *c)
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

/*
 * Verifier log: the whole log for -v, one buffer for every program; else
 * the statistics and the error alone (BPF_LOG_STATS), which name why a
 * program was refused without a second verification for the log, in a
 * slot of its own per program (ST_LOG_SLOTS of STEPTIME_VERIFIER_ERR):
 * libbpf closes every program of a load that failed, so the slots tell
 * which one the verifier refused.
 */
#define STEPTIME_VERIFIER_LOG	(1u << 22)
#define STEPTIME_VERIFIER_ERR	(1u << 14)
#define ST_LOG_SLOTS		64
#define ST_LOG_LEVEL_STATS	4

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
static int mode_try_loops(struct load_ctx *c, int mode, bool loop)
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

static int pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Maps the step API and readers open; the rest stay private. */
static struct bpf_map *const *public_maps(struct steptime_bpf *s, int *n)
{
	static struct bpf_map *m[5];

	m[0] = s->maps.marks;
	m[1] = s->maps.steps;
	m[2] = s->maps.events;
	m[3] = s->maps.counters;
	m[4] = s->maps.info;
	*n = 5;
	return m;
}

static int pin_all(struct load_ctx *c)
{
	const struct steptime_load_opts *o = c->opts;
	unsigned int mode = o && o->map_mode ? o->map_mode : 0600;
	int gid = o && o->map_mode ? o->map_gid : -1;
	struct bpf_map *const *maps;
	char path[PATH_MAX];
	int i, n, err;

	maps = public_maps(c->skel, &n);
	for (i = 0; i < n; i++) {
		err = pin_path(path, sizeof(path), c->tmp_dir,
			       bpf_map__name(maps[i]));
		if (!err)
			err = bpf_map__pin(maps[i], path);
		if (err)
			return err;
		checkpoint(c);
		/*
		 * Read-only for everyone but root, marks included: each
		 * process's marks are in its own memory (steptime/abi.h).
		 */
		if (chmod(path, (mode & 0444) | 0600))
			return -errno;
		if (gid >= 0 && chown(path, -1, gid))
			return -errno;
	}
	err = pin_path(path, sizeof(path), c->tmp_dir, "links");
	if (err)
		return err;
	if (mkdir(path, 0700))
		return -errno;
	for (i = 0; i < c->nlinks; i++) {
		char lp[PATH_MAX];

		err = pin_path(lp, sizeof(lp), path, c->link_names[i]);
		if (!err)
			err = bpf_link__pin(c->links[i], lp);
		if (err)
			return err;
		checkpoint(c);
	}
	/* Others must be able to walk to the maps their mode grants. */
	if (chmod(c->tmp_dir, 0755))
		return -errno;
	if (c->bpffs_after && chmod(BPFFS_ROOT, c->bpffs_after))
		return -errno;
	return 0;
}

/*
 * Users that --mode/--group lets read the pins must be able to walk the
 * bpffs root: decide now what pin_all() changes there, so that the info
 * map records it and unload reverts it.
 */
static void bpffs_plan(struct load_ctx *c)
{
	const struct steptime_load_opts *o = c->opts;
	unsigned int mode = o && o->map_mode ? o->map_mode : 0600;
	struct stat st;

	c->bpffs_before = c->bpffs_after = 0;
	if (!(mode & 0066) || stat(BPFFS_ROOT, &st) || (st.st_mode & 0001))
		return;
	c->bpffs_before = st.st_mode & 07777;
	c->bpffs_after = c->bpffs_before | 0011;
}

/* Undo bpffs_plan()'s change, unless someone changed the mode since. */
static void bpffs_revert(const struct steptime_info *inf)
{
	struct stat st;

	if (!inf->bpffs_mode_after || stat(BPFFS_ROOT, &st) ||
	    (st.st_mode & 07777) != inf->bpffs_mode_after)
		return;
	chmod(BPFFS_ROOT, inf->bpffs_mode_before);
}

/*
 * @why into the info map's @len bytes: whole "; "-separated reasons, and
 * "..." where the rest does not fit, never a reason cut mid-word.
 */
static void reason_fit(char *dst, size_t len, const char *why)
{
	size_t n = strlen(why);

	if (n < len) {
		memcpy(dst, why, n + 1);
		return;
	}
	n = len - 4;		/* room for "..." */
	while (n > 0 && strncmp(why + n, "; ", 2))
		n--;
	snprintf(dst, len, "%.*s...", (int)n, why);
}

static int write_info(struct load_ctx *c, int mode)
{
	struct steptime_marks_hdr hdr = {
		.magic = STEPTIME_MAGIC,
		.version = STEPTIME_ABI_VERSION,
		.dev_rdev = c->rdev,
	};
	struct steptime_info inf = {
		.magic = STEPTIME_MAGIC,
		.version = STEPTIME_ABI_VERSION,
		.attach_mode = mode,
		.dev_rdev = c->rdev,
		.counter_freq_hz = c->freq,
		.bpffs_mode_before = c->bpffs_before,
		.bpffs_mode_after = c->bpffs_after,
		.stars_version = c->stars,
		.stars_from = c->stars_from,
	};
	struct timespec ts;
	__u32 zero = 0;
	int err, i;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	inf.loaded_ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	snprintf(inf.device, sizeof(inf.device), "%s", c->device);
	snprintf(inf.chip, sizeof(inf.chip), "%s", c->chip);
	for (i = 0; i < c->hal.n; i++) {
		if (!c->hal_on[i])
			continue;
		inf.hal[inf.nhal].dev = c->hal.st[i].st_dev;
		inf.hal[inf.nhal].ino = c->hal.st[i].st_ino;
		snprintf(inf.hal[inf.nhal].path, sizeof(inf.hal[0].path), "%s",
			 c->hal.path[i]);
		inf.nhal++;
	}
	/* The setting as asked (a second load compares it), in effect once a
	 * HAL library is probed. */
	if (c->journal)
		inf.hal_flags |= STEPTIME_HAL_JOURNAL;
	snprintf(inf.profile, sizeof(inf.profile), "%s%s", c->prof->name,
		 c->raw_tp ? " (raw_tp)" : "");
	if (mode == STEPTIME_ATTACH_FENTRY || mode == STEPTIME_ATTACH_KPROBE)
		why_add(c, "completion hook %s, SQE trace hook %s, channel binding %s",
			c->hooks & 1 ? "on" : "off", c->hooks & 2 ? "on" : "off",
			c->hooks & 4 ? "on" :
			"off (uio_t SQEs by stream id; ambiguous ones flagged)");
	reason_fit(inf.reason, sizeof(inf.reason), c->why[0] ? c->why :
		   OPT(c->opts, attach_mode) ? "requested" : "best mode available");
	err = bpf_map__update_elem(c->skel->maps.info, &zero, sizeof(zero),
				   &inf, sizeof(inf), BPF_ANY);
	if (err)
		return err;
	snprintf(hdr.device, sizeof(hdr.device), "%s", c->device);
	if ((inf.hal_flags & STEPTIME_HAL_JOURNAL) && inf.nhal)
		hdr.flags |= STEPTIME_MARKS_F_JOURNAL;
	for (i = 0; i < c->nkicked; i++) {
		hdr.kick[i].dev = c->kicked[i].st_dev;
		hdr.kick[i].ino = c->kicked[i].st_ino;
	}
	return bpf_map__update_elem(c->skel->maps.marks, &zero, sizeof(zero),
				    &hdr, sizeof(hdr), BPF_ANY);
}

/* Start time of @pid in clock ticks after boot; 0 when it is not running. */
static unsigned long long proc_start_time(int pid)
{
	unsigned long long start = 0;
	char path[64], buf[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* Field 22; the command (field 2) may hold spaces and parentheses. */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
	    sscanf(p + 1, " %*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
		   &start) != 1)
		start = 0;
	fclose(f);
	return start;
}

/*
 * The private directory of a load or unload in progress, beside @pin_dir
 * on the same bpffs: "<parent>/<name>-tmp-<pid>-<start time>" (bpffs
 * refuses names with dots). @pid -1: only the prefix, "<parent>/<name>-tmp-".
 */
static int private_dir(char *buf, size_t len, const char *pin_dir, int pid)
{
	const char *slash = strrchr(pin_dir, '/');
	int plen = slash ? (int)(slash - pin_dir) : 0, n;

	if (!slash)
		return -EINVAL;
	n = snprintf(buf, len, "%.*s/%s-tmp-", plen, pin_dir, slash + 1);
	if (n >= 0 && (size_t)n < len && pid >= 0)
		n += snprintf(buf + n, len - n, "%d-%llu", pid,
			      proc_start_time(pid));
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int unlink_dir(const char *dir);

/*
 * Private directories of loaders and unloaders that died (SIGKILL, power
 * cut of the process): count them, and remove them when @remove. Their
 * pinned links keep programs attached until then.
 */
static int leftovers(const char *pin_dir, bool remove)
{
	char prefix[PATH_MAX], path[PATH_MAX], *base;
	unsigned long long start;
	struct dirent *e;
	int n = 0, pid;
	size_t blen;
	DIR *d;

	if (private_dir(prefix, sizeof(prefix), pin_dir, -1))
		return 0;
	base = strrchr(prefix, '/');
	*base++ = '\0';
	blen = strlen(base);
	d = opendir(prefix[0] ? prefix : "/");
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, base, blen) ||
		    sscanf(e->d_name + blen, "%d-%llu", &pid, &start) != 2 ||
		    (pid > 0 && proc_start_time(pid) == start))
			continue;
		n++;
		if (remove && snprintf(path, sizeof(path), "%s/%s", prefix,
				       e->d_name) < (int)sizeof(path))
			unlink_dir(path);
	}
	closedir(d);
	return n;
}

int steptime__load_leftovers(const char *pin_dir)
{
	return leftovers(steptime__pin_dir(pin_dir), false);
}

/* The private directory becomes the pin directory, unless one exists. */
static int publish(struct load_ctx *c)
{
	char path[PATH_MAX];

	if (renameat2(AT_FDCWD, c->tmp_dir, AT_FDCWD, c->pin_dir,
		      RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EEXIST && errno != ENOTEMPTY)
		return -errno;
	if (pin_path(path, sizeof(path), c->pin_dir, "info") == 0 &&
	    access(path, F_OK) == 0)
		fprintf(stderr, "steptime: already loaded at %s by a concurrent load\n",
			c->pin_dir);
	else
		fprintf(stderr, "steptime: %s exists but holds no load (steptime unload removes it)\n",
			c->pin_dir);
	return -EEXIST;
}

int steptime__load(const struct steptime_load_opts *opts)
{
	static const int order[] = {
		STEPTIME_ATTACH_FENTRY, STEPTIME_ATTACH_KPROBE,
		STEPTIME_ATTACH_TP_BTF, STEPTIME_ATTACH_TRACEPOINT,
	};
	struct load_ctx c = { .opts = opts };
	const char *kill_at = getenv("STEPTIME_LOAD_KILL_AT");
	char path[PATH_MAX];
	int mode = STEPTIME_ATTACH_AUTO, i, err = -EOPNOTSUPP;
	__u64 missing;
	bool loop;

	if (opts && opts->sz < offsetof(struct steptime_load_opts, verbose) + sizeof(int)) {
		fprintf(stderr, "steptime: steptime_load_opts of %zu bytes: older than the first layout\n",
			opts->sz);
		return -EINVAL;
	}
	if (opts && (opts->attach_mode < STEPTIME_ATTACH_AUTO ||
		     opts->attach_mode > STEPTIME_ATTACH_TRACEPOINT)) {
		fprintf(stderr, "steptime: unknown attach mode %d\n",
			opts->attach_mode);
		return -EINVAL;
	}
	missing = load_caps_missing();
	if (missing) {
		/* A container given some capabilities: name the one it lacks. */
		fprintf(stderr, "steptime: must be run as root (loading BPF needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN): %s%s%s missing\n",
			missing & 1ull << CAP_BPF ? "CAP_BPF" : "",
			missing == (1ull << CAP_BPF | 1ull << CAP_PERFMON) ? " and " : "",
			missing & 1ull << CAP_PERFMON ? "CAP_PERFMON" : "");
		return -EPERM;
	}
	if (opts)
		mode = opts->attach_mode;
	c.pin_dir = steptime__pin_dir(opts ? opts->pin_dir : NULL);
	c.kill_at = kill_at ? atoi(kill_at) : 0;

	err = resolve_device(&c);
	if (err)
		return err;
	c.prof = profile_find(opts ? opts->profile : NULL, c.device);
	if (!c.prof) {
		fprintf(stderr, "steptime: unknown driver profile %s\n", opts->profile);
		return -EINVAL;
	}
	err = btf_check(&c);
	if (err)
		return err;
	/* What the device is: read before anything is touched. */
	c.freq = counter_freq(&c);
	if (!c.freq) {
		fprintf(stderr, "steptime: the device counter frequency of %s cannot be read (profile %s): give it with --freq HZ\n",
			c.device, c.prof->name);
		return -EINVAL;
	}
	if (c.freq > STEPTIME_FREQ_MAX_HZ) {
		fprintf(stderr, "steptime: a device counter frequency of %llu Hz is above %llu Hz, which the tick conversion allows\n",
			(unsigned long long)c.freq, STEPTIME_FREQ_MAX_HZ);
		return -EINVAL;
	}
	err = stars_version(&c);
	if (err)
		return err;
	err = ensure_mounts(c.pin_dir);
	if (err)
		return err;
	err = private_dir(c.tmp_dir, sizeof(c.tmp_dir), c.pin_dir, getpid());
	if (err) {
		fprintf(stderr, "steptime: bad pin directory %s\n", c.pin_dir);
		return err == -ENAMETOOLONG ? err : -EINVAL;
	}
	leftovers(c.pin_dir, true);
	if (pin_path(path, sizeof(path), c.pin_dir, "info") == 0 &&
	    access(path, F_OK) == 0) {
		fprintf(stderr, "steptime: already loaded at %s (steptime unload first)\n",
			c.pin_dir);
		return -EEXIST;
	}
	loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT,
				       BPF_FUNC_loop, NULL) > 0 &&
	       !OPT(opts, no_bpf_loop);
	err = kick_libs(&c, OPT(opts, libs));
	if (err) {
		if (err == -E2BIG)
			fprintf(stderr, "steptime: more than %d libsteptime files given\n",
				STEPTIME_KICK_LIBS);
		else
			fprintf(stderr, "steptime: libsteptime path: %s\n",
				strerror(-err));
		return err;
	}
	c.journal = OPT(opts, journal);
	err = hal_libs_find(&c.hal, OPT(opts, hal));
	if (err) {
		fprintf(stderr, "steptime: HAL library %s: %s\n",
			c.hal.bad[0] ? c.hal.bad : "path",
			err == -EINVAL ? "not a file" : strerror(-err));
		return err;
	}
	c.log_size = opts && opts->verbose ? STEPTIME_VERIFIER_LOG :
		     ST_LOG_SLOTS * STEPTIME_VERIFIER_ERR;
	c.log_buf = calloc(1, c.log_size);
	if (!c.log_buf)
		return -ENOMEM;

	err = -EOPNOTSUPP;
	for (i = 0; i < (int)(sizeof(order) / sizeof(order[0])); i++) {
		if (mode != STEPTIME_ATTACH_AUTO && mode != order[i])
			continue;
		if (!mode_available(&c, order[i]))
			continue;
		/* raw_tp: the same hook without BTF-typed arguments. */
		c.raw_tp = order[i] == STEPTIME_ATTACH_TP_BTF && !c.kernel_btf;
		err = mode_try_loops(&c, order[i], loop);
		if (err && order[i] == STEPTIME_ATTACH_TP_BTF && !c.raw_tp) {
			c.raw_tp = true;
			err = mode_try_loops(&c, order[i], loop);
		}
		if (!err) {
			mode = order[i];
			break;
		}
	}
	free(c.log_buf);
	if (err) {
		fprintf(stderr, "steptime: no attach mode works: %s\n", c.why);
		return err;
	}
	checkpoint(&c);		/* attached, nothing pinned: fds only */
	bpffs_plan(&c);
	err = write_info(&c, mode);
	if (!err && mkdir(c.tmp_dir, 0700))
		err = -errno;
	if (!err) {
		checkpoint(&c);
		err = pin_all(&c);
		if (!err)
			err = publish(&c);
		if (err)
			unlink_dir(c.tmp_dir);
	}
	if (err && err != -EEXIST)
		fprintf(stderr, "steptime: pinning under %s failed: %s\n",
			c.pin_dir, strerror(-err));
	checkpoint(&c);		/* complete */
	links_destroy(&c);
	steptime_bpf__destroy(c.skel);
	return err;
}

static int unlink_dir(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (pin_path(path, sizeof(path), dir, e->d_name))
			continue;
		if (e->d_type == DT_DIR)
			err = unlink_dir(path) ?: err;
		else if (unlink(path))
			err = -errno;
	}
	closedir(d);
	if (rmdir(dir))
		err = -errno;
	return err;
}

static int pinned_open(const char *pin_dir, const char *name, int flags);

/*
 * Processes keep their mapping of the marks map after it is unpinned: a
 * zero magic tells their step API to reopen (a later load's map).
 */
static void marks_retire(const char *pin_dir)
{
	struct steptime_marks_hdr hdr;
	__u32 zero = 0;
	int fd = pinned_open(pin_dir, "marks", 0);

	if (fd < 0)
		return;
	if (bpf_map_lookup_elem(fd, &zero, &hdr) == 0) {
		memset(&hdr, 0, sizeof(hdr));
		bpf_map_update_elem(fd, &zero, &hdr, BPF_ANY);
	}
	close(fd);
}

/*
 * Whether @dir holds only names a steptime load pins (or nothing): what
 * unload may remove without "info" there (`unload --pin /sys/fs/bpf` must
 * not wipe other tools' pins).
 */
static bool only_ours(const char *dir)
{
	static const char *const ours[] = {
		"marks", "steps", "events", "counters", "info", "links",
	};
	struct dirent *e;
	bool ok = true;
	size_t i;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while (ok && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
			if (!strcmp(e->d_name, ours[i]))
				break;
		ok = i < sizeof(ours) / sizeof(ours[0]);
	}
	closedir(d);
	return ok;
}

/* The id of the program that link @name, pinned in @dir, runs. */
static int link_prog_id(const char *dir, const char *name, __u32 *id)
{
	struct bpf_link_info li = {};
	__u32 len = sizeof(li);
	int fd, err;

	fd = pinned_open(dir, name, 0);
	if (fd < 0)
		return fd;
	err = bpf_obj_get_info_by_fd(fd, &li, &len) ? -errno : 0;
	close(fd);
	*id = li.prog_id;
	return err;
}

#define UNLOAD_WAIT_MS	5000

/*
 * Wait until the kernel has freed the @n @progs (none when @n is an error,
 * steptime__read_progs()'s return). An unpinned link drops
 * its last reference from a workqueue, and a program attached to a
 * module (the driver's handler, its tracepoints) keeps the module in use
 * until it is freed: `steptime unload && rmmod` must not fail for that.
 * Bounded: a program someone else still holds (by fd) is not waited for.
 */
static void progs_wait_freed(const struct steptime_prog *progs, int n)
{
	int i, fd, live, ms;

	for (ms = 0; ms < UNLOAD_WAIT_MS; ms++) {
		for (i = live = 0; i < n; i++) {
			fd = bpf_prog_get_fd_by_id(progs[i].id);
			if (fd >= 0) {
				close(fd);
				live++;
			}
		}
		if (!live)
			return;
		usleep(1000);
	}
}

int steptime__unload(const char *pin_dir)
{
	struct steptime_prog progs[LOAD_MAX_LINKS];
	char path[PATH_MAX], tmp[PATH_MAX];
	struct steptime_info inf;
	const char *dir;
	bool loaded;
	int stale, err, n;

	pin_dir = steptime__pin_dir(pin_dir);
	if (pin_path(path, sizeof(path), pin_dir, "info") ||
	    private_dir(tmp, sizeof(tmp), pin_dir, getpid()))
		return -ENAMETOOLONG;
	stale = leftovers(pin_dir, true);
	if (access(pin_dir, F_OK))
		return stale ? 0 : -ENOENT;
	loaded = access(path, F_OK) == 0;
	if (!loaded && !only_ours(pin_dir)) {
		fprintf(stderr, "steptime: %s holds no steptime load but other files: not removed\n",
			pin_dir);
		return stale ? 0 : -ENOTEMPTY;
	}
	if (loaded && !steptime__read_info(pin_dir, &inf))
		bpffs_revert(&inf);
	marks_retire(pin_dir);
	n = steptime__read_progs(pin_dir, progs, LOAD_MAX_LINKS);
	/*
	 * Out of the way first, in one step: readers and a new load see it
	 * loaded or not, never half removed; a killed unload leaves a
	 * private directory like a killed load's.
	 */
	dir = renameat2(AT_FDCWD, pin_dir, AT_FDCWD, tmp, RENAME_NOREPLACE) ?
	      pin_dir : tmp;
	err = unlink_dir(dir);
	progs_wait_freed(progs, n);
	return err ?: loaded || stale ? 0 : -ENOENT;
}

/* The value size of map @fd; 0 when it cannot be read. */
static __u32 map_value_size(int fd)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : mi.value_size;
}

static int pinned_open(const char *pin_dir, const char *name, int flags)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = flags);
	char path[PATH_MAX];
	int fd;

	if (pin_path(path, sizeof(path), steptime__pin_dir(pin_dir), name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get_opts(path, &o);
	return fd < 0 ? -errno : fd;
}

int steptime__read_info(const char *pin_dir, struct steptime_info *inf)
{
	__u32 zero = 0;
	int fd, err;

	fd = pinned_open(pin_dir, "info", BPF_F_RDONLY);
	if (fd < 0)
		return fd;
	err = map_value_size(fd) == sizeof(*inf) ? 0 : -EPROTO;
	if (!err)
		err = bpf_map_lookup_elem(fd, &zero, inf) ? -errno : 0;
	close(fd);
	if (!err && inf->magic != STEPTIME_MAGIC)
		err = -EPROTO;
	return err;
}

int steptime__read_progs(const char *pin_dir, struct steptime_prog *progs,
			 int max)
{
	struct bpf_prog_info pi;
	char dir[PATH_MAX];
	struct dirent *de;
	__u32 len, id;
	int n = 0, pfd, err = 0;
	DIR *d;

	if (!progs || max < 0)
		return -EINVAL;
	if (pin_path(dir, sizeof(dir), steptime__pin_dir(pin_dir), "links"))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == max) {		/* one more than there is room for */
			err = -E2BIG;
			break;
		}
		err = link_prog_id(dir, de->d_name, &id);
		if (err)
			break;
		pfd = bpf_prog_get_fd_by_id(id);
		if (pfd < 0) {
			err = -errno;
			break;
		}
		memset(&pi, 0, sizeof(pi));
		len = sizeof(pi);
		err = bpf_obj_get_info_by_fd(pfd, &pi, &len) ? -errno : 0;
		close(pfd);
		if (err)
			break;
		memset(&progs[n], 0, sizeof(progs[n]));
		snprintf(progs[n].name, sizeof(progs[n].name), "%.63s",
			 de->d_name);
		progs[n].id = id;
		progs[n].verified_insns = pi.verified_insns;
		progs[n].xlated_bytes = pi.xlated_prog_len;
		progs[n].run_cnt = pi.run_cnt;
		progs[n].run_time_ns = pi.run_time_ns;
		n++;
	}
	closedir(d);
	return err ?: n;
}

int steptime__read_counters(const char *pin_dir, struct steptime_counters *cnt)
{
	size_t n = sizeof(*cnt) / sizeof(__u64), i;
	int ncpu = libbpf_num_possible_cpus(), fd, err, cpu;
	__u64 *vals, *sum = (__u64 *)cnt;
	__u32 zero = 0;

	if (ncpu < 0)
		return ncpu;
	fd = pinned_open(pin_dir, "counters", BPF_F_RDONLY);
	if (fd < 0)
		return fd;
	vals = calloc((size_t)ncpu, sizeof(*cnt));
	if (!vals) {
		close(fd);
		return -ENOMEM;
	}
	err = bpf_map_lookup_elem(fd, &zero, vals) ? -errno : 0;
	memset(cnt, 0, sizeof(*cnt));
	for (cpu = 0; !err && cpu < ncpu; cpu++)
		for (i = 0; i < n; i++)
			sum[i] += vals[cpu * n + i];
	free(vals);
	close(fd);
	return err;
}
