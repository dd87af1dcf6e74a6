// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime doctor: what it prints, as text in 80 columns or as JSON, of
 * what doctor_gather.c read and doctor_judge.c judged.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

#include <steptime/steptime.h>
#include <steptime/loader.h>
#include <steptime/util.h>
#include "snapshot.h"
#include "doctor.h"

static const char *const verdict_str[] = { "exact", "bound", "absent" };

static const char *const figure_key[] = {
	"steps", "host_times", "device_time", "task_counts", "completion_times",
};

static const char *const figure_text[] = {
	"steps", "host times", "device time", "task counts", "completion times",
};

static const char *const lib_key[] = {
	"libsteptime", "libascendcl", "libruntime", "libnpuhal",
	"libascend_hal",
};

static const char *const sends_key[] = {
	[S_UNKNOWN] = "unknown", [S_KERNEL] = "kernel", [S_JOURNAL] = "journal",
	[S_PROBES] = "hal_probes", [S_NONE] = "none",
};

static const char *const sends_text[] = {
	[S_UNKNOWN] = "unknown (needs root)",
	[S_KERNEL] = "seen by the kernel (no mapped SQ)",
	[S_JOURNAL] = "from its own journal (load --journal, libsteptime; no trap per task)",
	[S_PROBES] = "by the HAL's uprobes (a trap per task)",
	[S_NONE] = "not counted: no journal in the process and no HAL probe (an app without libsteptime needs a load without --journal)",
};

/* ---------------------------------------------------------------------- */
/* Text                                                                   */
/* ---------------------------------------------------------------------- */

/*
 * "@label@text" at @indent, wrapped at WIDTH columns: continuation lines
 * at @indent + @hang.
 */
static void wrap(int indent, int hang, const char *label, const char *text)
{
	int col = indent + (int)strlen(label), w;
	const char *p = text, *sp;

	printf("%*s%s", indent, "", label);
	while (*p) {
		while (*p == ' ')
			p++;
		sp = strchr(p, ' ');
		w = sp ? (int)(sp - p) : (int)strlen(p);
		/* A word longer than a line (a path): cut where the line ends. */
		if (w > WIDTH - indent - hang)
			w = col + 1 < WIDTH ? WIDTH - col - (p != text) :
					      WIDTH - indent - hang;
		if (col + 1 + w > WIDTH && col > indent + hang) {
			printf("\n%*s", indent + hang, "");
			col = indent + hang;
		} else if (p != text) {
			putchar(' ');
			col++;
		}
		printf("%.*s", w, p);
		col += w;
		p += w;
	}
	putchar('\n');
}

static void hook_line(const char *label, int n, const char *none)
{
	char text[160], lab[32];

	if (n)
		snprintf(text, sizeof(text), "attached (%d program%s)", n,
			 n > 1 ? "s" : "");
	else
		snprintf(text, sizeof(text), "not attached: %s", none);
	snprintf(lab, sizeof(lab), "%-16s ", label);
	wrap(2, 17, lab, text);
}

/*
 * The uprobes on libascend_hal.so (programs uprobe_hal_*, uretprobe_hal_*):
 * they see the submissions to mapped SQs (uio_t, uio_d) in the submitting
 * thread. Which files, or where the loader looked for one.
 */
static void hal_text(const struct doctor *d)
{
	int n = hook_count(d, H_HAL);
	__u32 i;

	if (!n || !d->inf.nhal) {
		printf("HAL probes: not attached: no libascend_hal.so was found in running\n"
		       "  processes' maps, $LD_LIBRARY_PATH, $ASCEND_HOME_PATH's Ascend root or\n"
		       "  /usr/local/Ascend/driver/lib64/driver at load (steptime load --hal PATH)\n");
		return;
	}
	printf("HAL probes: %d program%s on\n", n, n > 1 ? "s" : "");
	for (i = 0; i < d->inf.nhal && i < STEPTIME_HAL_LIBS; i++)
		printf("  %.*s\n", (int)sizeof(d->inf.hal[i].path),
		       d->inf.hal[i].path);
}

static void hooks_text(const struct doctor *d)
{
	const char *mode = steptime__attach_mode_str(d->inf.attach_mode);
	char none[128];

	if (d->nprogs < 0) {
		printf("hooks:        unknown: reading the programs: %s%s\n",
		       strerror(-d->nprogs),
		       d->nprogs == -EACCES || d->nprogs == -EPERM ?
		       " (needs root)" : "");
		return;
	}
	snprintf(none, sizeof(none), "attach mode %s has no kernel-function hooks, or the driver's symbol is missing (see why)",
		 mode);
	printf("hooks:\n");
	hook_line("ioctl", hook_count(d, H_IOCTL), "steptime sees no ioctl");
	hook_line("completion hook", hook_count(d, H_CQ), none);
	hook_line("SQE trace hook", hook_count(d, H_SQE), none);
	hook_line("ring-kick probe", hook_count(d, H_KICK),
		  "marks are read at each process's ioctls only");
	hook_line("process exit", hook_count(d, H_EXIT), "exits not seen");
	hook_line("channel hooks", hook_count(d, H_CHAN),
		  "uio_t SQEs are pinned by stream id (ambiguous ones flagged)");
	hal_text(d);
}

static void sqs_text(const struct doctor *d)
{
	int i;

	if (d->priv_err) {
		printf("SQ modes:     unknown: %s%s\n", strerror(-d->priv_err),
		       d->priv_err == -EACCES || d->priv_err == -EPERM ?
		       " (the program's SQ map needs root)" : "");
		return;
	}
	if (!d->ndevs) {
		printf("SQ modes:     no SQ tracked now\n");
		return;
	}
	printf("SQ modes:     %-8s %6s %6s %6s %10s %12s\n", "device", "kio",
	       "uio_t", "uio_d", "HAL-seen", "before-load");
	for (i = 0; i < d->ndevs; i++) {
		const struct sq_modes *m = &d->devs[i];
		char dev[16];

		if (m->dev == ST_DEV_UNKNOWN)
			snprintf(dev, sizeof(dev), "?");
		else
			snprintf(dev, sizeof(dev), "%u", m->dev);
		printf("              %-8s %6u %6u %6u %10u %12u\n", dev, m->kio,
		       m->uio_t, m->uio_d, m->hal, m->preexisting);
	}
}

static void checks_text(const struct doctor *d)
{
	int i;

	if (d->priv_err)
		return;
	if (d->nchecks < 0) {
		printf("driver counts: %s%s\n", d->nchecks == -ENOENT ?
		       "no " HW_SQ_ROOT " (no Ascend driver's files)" :
		       strerror(-d->nchecks), d->nchecks == -EACCES ?
		       " (" HW_SQ_ROOT " needs root)" : "");
		return;
	}
	if (!d->nchecks) {
		printf("driver counts: no mapped SQ now\n");
		return;
	}
	printf("driver counts: SQEs per mapped SQ, steptime's and the driver's\n");
	printf("              %-3s %-2s %-5s %-7s %-5s %10s %10s %s\n", "dev",
	       "ts", "sq", "pid", "mode", "steptime", "send_ok", "verdict");
	for (i = 0; i < d->nchecks; i++) {
		const struct sq_check *c = &d->checks[i];
		char st[24] = "-";

		if (c->st)
			snprintf(st, sizeof(st), "%llu",
				 (unsigned long long)c->st->sqes);
		printf("              %-3u %-2u %-5u %-7d %-5s %10s %10llu %s\n",
		       c->drv.dev, c->drv.ts, c->drv.id, c->drv.pid,
		       c->drv.mode, st, (unsigned long long)c->drv.send_ok,
		       check_verdict(c, true));
	}
}

static void losses_text(const struct doctor *d)
{
	char text[1024] = "";
	size_t i, n = 0;
	__u64 v;

	for (i = 0; i < loss_count; i++) {
		v = counter_get(&d->cnt, loss_names[i]);
		if (v)
			n += snprintf(text + n, sizeof(text) - n, "%s%s %llu",
				      n ? ", " : "", loss_names[i],
				      (unsigned long long)v);
		if (n >= sizeof(text))
			break;
	}
	wrap(0, 14, "losses:       ", n ? text : "none");
}

static void proc_text(const struct doctor *d, const struct proc *p)
{
	char text[512];
	__u32 taint;
	int f, l;

	printf("\nprocess %u", p->tgid);
	if (p->ns_tgid && p->ns_tgid != p->tgid)
		printf(" (pid %u in its namespace)", p->ns_tgid);
	printf(" %s%s\n", p->comm[0] ? p->comm : "?",
	       p->exited ? " (not running)" : "");
	if (d->priv_err)
		snprintf(text, sizeof(text), "unknown (needs root)");
	else if (!p->ring)
		snprintf(text, sizeof(text), "not registered");
	else if (p->ring_read)
		snprintf(text, sizeof(text), "registered, %s; %llu marks read (ring not readable: %s)",
			 p->kicked ? "kick probed" : "read at ioctls",
			 (unsigned long long)p->seen, strerror(-p->ring_read));
	else
		snprintf(text, sizeof(text), "registered, %s; %llu marks written, %llu read",
			 p->kicked ? "kick probed" : "read at ioctls",
			 (unsigned long long)p->head, (unsigned long long)p->seen);
	wrap(2, 12, "mark ring:  ", text);
	if (p->exited) {
		/* Nothing to read: the records say what there is. */
	} else if (p->maps_err) {
		snprintf(text, sizeof(text), "unknown: /proc/%u/maps: %s",
			 p->tgid, strerror(-p->maps_err));
		wrap(2, 12, "libraries:  ", text);
	} else {
		for (l = 0, text[0] = '\0'; l < L_NUM; l++)
			if (p->lib[l][0])
				snprintf(text + strlen(text), sizeof(text) - strlen(text),
					 "%s%s", text[0] ? " " : "", p->lib[l]);
		wrap(2, 12, "libraries:  ", text[0] ? text : "none of libsteptime, CANN's runtime, the HAL");
		wrap(2, 12, "runtime:    ", p->lib[L_ACL][0] || p->lib[L_RUNTIME][0] ?
		     "CANN runtime found (timeline events)" :
		     p->lib[L_NPUHAL][0] ? "npusim HAL found (counter ticks)" :
		     "no CANN runtime or HAL mapped");
	}
	if (!d->priv_err) {
		snprintf(text, sizeof(text), "kio %u, uio_t %u, uio_d %u (HAL-seen %u, before load %u)",
			 p->sq.kio, p->sq.uio_t, p->sq.uio_d, p->sq.hal,
			 p->sq.preexisting);
		wrap(2, 12, "SQs:        ", text);
		wrap(2, 12, "sends:      ", sends_text[sends_path(d, p)]);
	}
	taint = proc_taints(p);
	snprintf(text, sizeof(text), "%s%s%s%s",
		 taint & STEPTIME_F_UIO ? "uio (an SQ whose SQEs the kernel never sees)" : "",
		 taint & ST_TAINT_UIO_HOST ? "uio_host (its host-marked steps: a uio_t SQ seen at the driver's copy)" : "",
		 (taint & (STEPTIME_F_UIO | ST_TAINT_UIO_HOST)) &&
		 (taint & STEPTIME_F_PREEXISTING) ? ", " : "",
		 taint & STEPTIME_F_PREEXISTING ? "preexisting (a file or SQ from before the load)" :
		 taint & (STEPTIME_F_UIO | ST_TAINT_UIO_HOST) ? "" : "none");
	wrap(2, 12, "taints:     ", text);
	snprintf(text, sizeof(text), "%u kept (done %u, ended %u, open %u, incomplete %u)",
		 p->recs, p->done, p->ended, p->open, p->incomplete);
	if (marks_overrun(p))
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "; %llu marks overwritten unread",
			 (unsigned long long)marks_overrun(p));
	wrap(2, 12, "steps:      ", text);
	for (f = 0; f < F_NUM; f++) {
		char label[32];

		snprintf(label, sizeof(label), "%-17s %-7s ", figure_text[f],
			 verdict_str[p->j[f].v]);
		wrap(4, 26, label, p->j[f].why);
	}
}

void host_text(void)
{
	struct utsname u;

	uname(&u);
	printf("steptime:     %s (BPF ABI %d)\n", STEPTIME_VERSION,
	       STEPTIME_ABI_VERSION);
	printf("kernel:       %s %s\n", u.release, u.machine);
	printf("kernel BTF:   %s\n", access("/sys/kernel/btf/vmlinux", R_OK) ?
	       "absent (fentry and tp_btf need it)" : "present");
}

void doctor_text(const struct doctor *d)
{
	size_t i;

	host_text();
	printf("loaded:       at %s, %.0f s ago\n", d->pin,
	       ((double)st_mono_ns() - (double)d->inf.loaded_ns) / 1e9);
	printf("device:       %s (profile %s)\n", d->inf.device, d->inf.profile);
	printf("attach mode:  %s\n", steptime__attach_mode_str(d->inf.attach_mode));
	wrap(0, 14, "why:          ", d->inf.reason);
	hooks_text(d);
	sqs_text(d);
	checks_text(d);
	losses_text(d);
	if (d->steps_err)
		printf("steps:        unreadable: %s\n", strerror(-d->steps_err));
	if (!d->nprocs)
		printf("\nprocesses:    none seen by steptime\n");
	for (i = 0; i < d->nprocs; i++)
		proc_text(d, &d->procs[i]);
}

/* ---------------------------------------------------------------------- */
/* JSON                                                                   */
/* ---------------------------------------------------------------------- */

static void json_str(const char *s)
{
	unsigned int n;
	char esc[6];

	putchar('"');
	for (; *s; s++) {
		n = st_json_esc((unsigned char)*s, esc);
		if (n)
			fwrite(esc, 1, n, stdout);
		else
			putchar(*s);
	}
	putchar('"');
}

void json_kv(const char *indent, const char *key, const char *s,
		    bool last)
{
	printf("%s\"%s\": ", indent, key);
	json_str(s);
	printf("%s\n", last ? "" : ",");
}

static void json_modes(const struct sq_modes *m)
{
	printf("{\"kio\": %u, \"uio_t\": %u, \"uio_d\": %u, \"hal_seen\": %u, \"preexisting\": %u}",
	       m->kio, m->uio_t, m->uio_d, m->hal, m->preexisting);
}

static void hal_json(const struct doctor *d)
{
	int n = hook_count(d, H_HAL);
	__u32 i;

	printf("    \"hal_probes\": {\"attached\": %s, \"programs\": %d, \"libraries\": [",
	       n && d->inf.nhal ? "true" : "false", n);
	for (i = 0; i < d->inf.nhal && i < STEPTIME_HAL_LIBS; i++) {
		char path[sizeof(d->inf.hal[i].path) + 1];

		snprintf(path, sizeof(path), "%.*s",
			 (int)sizeof(d->inf.hal[i].path), d->inf.hal[i].path);
		printf("%s", i ? ", " : "");
		json_str(path);
	}
	printf("]}\n");
}

static void hooks_json(const struct doctor *d)
{
	static const char *const key[] = {
		"ioctl", "completion_hook", "sqe_trace_hook", "ring_kick",
		"process_exit", "channel_hooks",
	};
	int h;

	if (d->nprogs < 0) {
		printf("  \"hooks\": null,\n");
		json_kv("  ", "hooks_error", strerror(-d->nprogs), false);
		return;
	}
	printf("  \"hooks\": {\n");
	for (h = 0; h < H_HAL; h++)
		printf("    \"%s\": %d,\n", key[h], hook_count(d, h));
	hal_json(d);
	printf("  },\n");
	printf("  \"programs\": [");
	for (h = 0; h < d->nprogs; h++) {
		printf("%s", h ? ", " : "");
		json_str(d->progs[h].name);
	}
	printf("],\n");
}

static void proc_json(const struct doctor *d, const struct proc *p, bool last)
{
	__u32 taint;
	char written[24] = "null";
	int f, l;

	if (p->ring && !p->ring_read)
		snprintf(written, sizeof(written), "%llu",
			 (unsigned long long)p->head);
	printf("    {\n      \"pid\": %u, \"ns_pid\": %u, \"running\": %s,\n",
	       p->tgid, p->ns_tgid, p->exited ? "false" : "true");
	json_kv("      ", "comm", p->comm, false);
	if (d->priv_err)
		printf("      \"ring\": null,\n");
	else
		printf("      \"ring\": {\"registered\": %s, \"kick_probed\": %s, \"marks_read\": %llu, \"marks_written\": %s},\n",
		       p->ring ? "true" : "false", p->kicked ? "true" : "false",
		       (unsigned long long)p->seen, written);
	printf("      \"libraries\": {");
	for (l = 0; l < L_NUM; l++) {
		printf("%s\"%s\": ", l ? ", " : "", lib_key[l]);
		if (p->lib[l][0])
			json_str(p->lib[l]);
		else
			printf("null");
	}
	printf("},\n");
	printf("      \"cann_runtime\": %s,\n", p->maps_err ? "null" :
	       p->lib[L_ACL][0] || p->lib[L_RUNTIME][0] ? "true" : "false");
	printf("      \"sends\": \"%s\",\n", sends_key[sends_path(d, p)]);
	printf("      \"sqs\": ");
	if (d->priv_err)
		printf("null");
	else
		json_modes(&p->sq);
	taint = proc_taints(p);
	printf(",\n      \"taints\": [%s%s%s%s],\n",
	       taint & STEPTIME_F_UIO ? "\"uio\"" : "",
	       taint & ST_TAINT_UIO_HOST ? "\"uio_host\"" : "",
	       (taint & (STEPTIME_F_UIO | ST_TAINT_UIO_HOST)) &&
	       (taint & STEPTIME_F_PREEXISTING) ? ", " : "",
	       taint & STEPTIME_F_PREEXISTING ? "\"preexisting\"" : "");
	printf("      \"steps\": {\"kept\": %u, \"done\": %u, \"ended\": %u, \"open\": %u, \"incomplete\": %u},\n",
	       p->recs, p->done, p->ended, p->open, p->incomplete);
	printf("      \"marks_overwritten\": %llu,\n",
	       (unsigned long long)marks_overrun(p));
	printf("      \"figures\": {\n");
	for (f = 0; f < F_NUM; f++) {
		printf("        \"%s\": {\"verdict\": \"%s\", \"why\": ",
		       figure_key[f], verdict_str[p->j[f].v]);
		json_str(p->j[f].why);
		printf("}%s\n", f + 1 < F_NUM ? "," : "");
	}
	printf("      }\n    }%s\n", last ? "" : ",");
}

void host_json(void)
{
	struct utsname u;

	uname(&u);
	json_kv("  ", "version", STEPTIME_VERSION, false);
	printf("  \"abi\": %d,\n", STEPTIME_ABI_VERSION);
	json_kv("  ", "kernel", u.release, false);
	json_kv("  ", "machine", u.machine, false);
	printf("  \"kernel_btf\": %s,\n",
	       access("/sys/kernel/btf/vmlinux", R_OK) ? "false" : "true");
}

/* "driver_counts": null where unreadable (with why), else one per SQ. */
static void checks_json(const struct doctor *d)
{
	int i;

	printf("  \"driver_counts\": ");
	if (d->priv_err || d->nchecks < 0) {
		printf("null,\n");
		json_kv("  ", "driver_counts_error",
			strerror(d->priv_err ? -d->priv_err : -d->nchecks),
			false);
		return;
	}
	printf("[");
	for (i = 0; i < d->nchecks; i++) {
		const struct sq_check *c = &d->checks[i];

		printf("%s\n    {\"device\": %u, \"ts\": %u, \"sq\": %u, \"pid\": %d, \"mode\": \"%s\", \"send_ok\": %llu, \"steptime_sqes\": ",
		       i ? "," : "", c->drv.dev, c->drv.ts, c->drv.id,
		       c->drv.pid, c->drv.mode,
		       (unsigned long long)c->drv.send_ok);
		if (c->st)
			printf("%llu", (unsigned long long)c->st->sqes);
		else
			printf("null");
		printf(", \"verdict\": ");
		json_str(check_verdict(c, false));
		printf("}");
	}
	printf("%s],\n", d->nchecks ? "\n  " : "");
}

void doctor_json(const struct doctor *d)
{
	size_t i;
	int k;

	printf("{\n");
	host_json();
	printf("  \"loaded\": true,\n");
	json_kv("  ", "pin", d->pin, false);
	json_kv("  ", "device", d->inf.device, false);
	json_kv("  ", "profile", d->inf.profile, false);
	json_kv("  ", "attach_mode",
		steptime__attach_mode_str(d->inf.attach_mode), false);
	json_kv("  ", "why", d->inf.reason, false);
	hooks_json(d);
	printf("  \"sq_modes\": ");
	if (d->priv_err) {
		printf("null,\n");
		json_kv("  ", "sq_modes_error", strerror(-d->priv_err), false);
	} else {
		printf("{");
		for (k = 0; k < d->ndevs; k++) {
			if (d->devs[k].dev == ST_DEV_UNKNOWN)
				printf("%s\"?\": ", k ? ", " : "");
			else
				printf("%s\"%u\": ", k ? ", " : "", d->devs[k].dev);
			json_modes(&d->devs[k]);
		}
		printf("},\n");
	}
	checks_json(d);
	printf("  \"losses\": {");
	for (i = 0; i < loss_count; i++)
		printf("%s\"%s\": %llu", i ? ", " : "", loss_names[i],
		       (unsigned long long)counter_get(&d->cnt, loss_names[i]));
	printf("},\n  \"processes\": [\n");
	for (i = 0; i < d->nprocs; i++)
		proc_json(d, &d->procs[i], i + 1 == d->nprocs);
	printf("  ]\n}\n");
}
