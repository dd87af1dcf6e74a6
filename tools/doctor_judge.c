// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime doctor: its verdicts. For each process and figure of its steps,
 * exact, bound or absent with the reason, and for each mapped SQ whether
 * steptime's count is the driver's: from what doctor_gather.c read, with
 * nothing read here.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <steptime/steptime.h>
#include <steptime/loader.h>
#include "doctor.h"

/* ---------------------------------------------------------------------- */
/* Verdicts                                                               */
/* ---------------------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static void judge(struct judgement *j, enum verdict v, const char *fmt, ...)
{
	va_list ap;

	j->v = v;
	va_start(ap, fmt);
	vsnprintf(j->why, sizeof(j->why), fmt, ap);
	va_end(ap);
}

/* Marks written to the ring and not read, past its size: overwritten. */
__u64 marks_overrun(const struct proc *p)
{
	if (p->ring_read || p->head < p->seen ||
	    p->head - p->seen <= STEPTIME_MARK_RING)
		return 0;
	return p->head - p->seen - STEPTIME_MARK_RING;
}

void judge_marks(const struct doctor *d, struct proc *p)
{
	const char *how = p->kicked ? "read at its library's kicks (uprobe)" :
			  "read at its ioctls on the device";
	bool host = p->ring || (p->rec_flags & STEPTIME_F_HOST_START);
	__u64 over = marks_overrun(p);

	if (!p->ring && !p->recs) {
		const char *why = p->exited ?
			"not running, and steptime keeps no step of it" :
			p->lib[L_STEPTIME][0] ?
			"libsteptime is loaded but registered no mark ring: it has not marked yet, or its marks fail (its warning on stderr says why)" :
			"no mark ring registered, and no libsteptime.so mapped (linked statically, or not marking)";

		judge(&p->j[F_STEPS], V_ABSENT, "%s", why);
		judge(&p->j[F_HOST], V_ABSENT, "%s", why);
		return;
	}
	if (over) {
		judge(&p->j[F_STEPS], V_BOUND, "%llu marks overwritten in its %d-mark ring before steptime read them: steps missing or cut",
		      (unsigned long long)over, STEPTIME_MARK_RING);
		judge(&p->j[F_HOST], V_BOUND, "marks lost (see steps): the times of the steps they belong to are missing");
		return;
	}
	/* Marks lost are counted host-wide: a process's share is unknown. */
	if (host && d->cnt.marks_lost)
		judge(&p->j[F_STEPS], V_BOUND, "%llu marks lost host-wide (marks_lost: rings overrun before they were read): some may be this process's",
		      (unsigned long long)d->cnt.marks_lost);
	else if (!p->ring)
		judge(&p->j[F_STEPS], V_EXACT, "the records of the marks the kernel saw (%s)",
		      d->priv_err ? "whether a mark ring is registered needs root" :
		      "no mark ring registered: stream marks only, or gone");
	else
		judge(&p->j[F_STEPS], V_EXACT, "every mark %s, none lost", how);
	if (!host)
		judge(&p->j[F_HOST], V_ABSENT, "no host mark: its steps are marked on streams only");
	else if (p->ring)
		judge(&p->j[F_HOST], V_EXACT, "CLOCK_MONOTONIC at each mark, %s", how);
	else
		judge(&p->j[F_HOST], V_EXACT, "CLOCK_MONOTONIC at each mark");
}

void judge_device(struct proc *p)
{
	bool runtime = p->lib[L_ACL][0] || p->lib[L_RUNTIME][0];

	if (p->dev_steps && p->dev_event_steps == p->dev_steps) {
		judge(&p->j[F_DEVICE], V_EXACT, "timeline events on the step's stream, read back through the CANN runtime (1 us resolution): %u of %u steps",
		      p->dev_steps, p->recs);
		return;
	}
	if (p->dev_steps) {
		judge(&p->j[F_DEVICE], V_EXACT, "device counter of the place-holder reports: %u of %u steps%s",
		      p->dev_steps, p->recs,
		      p->dev_event_steps ? " (some from timeline events, 1 us)" : "");
		return;
	}
	if (!p->recs) {
		judge(&p->j[F_DEVICE], V_ABSENT, "no step recorded yet");
		return;
	}
	if (!p->stream_steps) {
		judge(&p->j[F_DEVICE], V_ABSENT, "host marks only (no step marked on a stream): device time needs marks on the step's stream");
		return;
	}
	if (!runtime && !p->lib[L_NPUHAL][0] && !p->maps_err) {
		judge(&p->j[F_DEVICE], V_ABSENT, "stream marks, but no CANN runtime (libascendcl.so, libruntime.so) nor npusim HAL (libnpuhal.so) is mapped: no device time source");
		return;
	}
	if (p->maps_err) {
		judge(&p->j[F_DEVICE], V_ABSENT, "stream marks, but no device time reached steptime (its libraries are unknown: %s)",
		      strerror(-p->maps_err));
		return;
	}
	judge(&p->j[F_DEVICE], V_ABSENT, "stream marks and a runtime (%s), but no device time reached steptime: the END not completed yet, or the runtime's event calls failed",
	      runtime ? "CANN" : "npusim HAL");
}

/* Is @path one of the libascend_hal.so files the load probed? */
static bool hal_probed(const struct doctor *d, const char *path)
{
	__u32 i;

	for (i = 0; i < d->inf.nhal && i < STEPTIME_HAL_LIBS; i++)
		if (!strncmp(d->inf.hal[i].path, path,
			     sizeof(d->inf.hal[i].path)))
			return true;
	return false;
}

enum sends_path sends_path(const struct doctor *d, const struct proc *p)
{
	bool journal = d->inf.hal_flags & STEPTIME_HAL_JOURNAL;

	if (d->priv_err)
		return S_UNKNOWN;
	if (!p->sq.uio_t && !p->sq.uio_d)
		return S_KERNEL;
	if (journal && (p->journal & ST_PJ_JOURNAL) && d->inf.nhal)
		return S_JOURNAL;
	if (!journal && d->inf.nhal)
		return S_PROBES;
	return S_NONE;
}

/* Why the kernel never sees some of the process's SQEs. */
static void uio_reason(const struct doctor *d, const struct proc *p,
		       char *buf, size_t len)
{
	int hal = hook_count(d, H_HAL);

	if ((d->inf.hal_flags & STEPTIME_HAL_JOURNAL) &&
	    sends_path(d, p) == S_NONE)
		snprintf(buf, len, "a mapped SQ (uio_t %u, uio_d %u) whose sends %s",
			 p->sq.uio_t, p->sq.uio_d, !d->inf.nhal ?
			 "nobody sees: no libascend_hal.so was found at load (steptime load --journal --hal PATH)" :
			 "no journal reports: the process has no libsteptime that journals (for apps without it, a load without --journal)");
	else if (p->sq.uio_d > p->sq.hal)
		snprintf(buf, len, "uio_d SQ (%u) whose SQEs only the device and the process see, and %s",
			 p->sq.uio_d - p->sq.hal,
			 !hal ? "the HAL is not probed (steptime load --hal PATH)" :
			 !p->lib[L_HAL][0] ? "no libascend_hal.so in the process for the HAL probes" :
			 !hal_probed(d, p->lib[L_HAL]) ? "its libascend_hal.so is not the one probed (steptime load --hal PATH)" :
			 "the HAL probes did not see its submissions (allocated before the load?)");
	else if (p->sq.uio_t && !hook_count(d, H_SQE))
		snprintf(buf, len, "uio_t SQ (%u) and no SQE trace hook (attach mode %s: only fentry and kprobe attach it)",
			 p->sq.uio_t,
			 steptime__attach_mode_str(d->inf.attach_mode));
	else if (p->sq.uio_t && !hook_count(d, H_CHAN))
		snprintf(buf, len, "uio_t SQ (%u) whose SQEs the trace hook pins by stream id, which collide across devices: no channel binding (the driver's channel hooks are not attached)",
			 p->sq.uio_t);
	else
		snprintf(buf, len, "an SQ whose SQEs the kernel never sees (uio_d, or uio_t without the SQE trace hook)%s",
			 d->priv_err ? "" : ", since freed");
}

__u32 proc_taints(const struct proc *p)
{
	__u32 t = p->taint | p->rec_flags;

	if (!(p->taint & STEPTIME_F_UIO) && (p->host_taint & STEPTIME_F_UIO))
		t = (t & ~STEPTIME_F_UIO) | ST_TAINT_UIO_HOST;
	return t;
}

void judge_tasks(const struct doctor *d, struct proc *p)
{
	char why[REASON - 32];

	if (proc_taints(p) & ST_TAINT_UIO_HOST) {
		snprintf(why, sizeof(why), "in host-marked steps: a uio_t SQ the HAL's probes do not count (its SQEs seen at the driver's copy, not at the send); stream-marked steps exact");
		judge(&p->j[F_TASKS], V_ABSENT, "%s", why);
		judge(&p->j[F_COMPLETION], V_ABSENT, "%s", why);
		return;
	}
	if (proc_taints(p) & STEPTIME_F_UIO) {
		uio_reason(d, p, why, sizeof(why));
		judge(&p->j[F_TASKS], V_ABSENT, "%s", why);
		judge(&p->j[F_COMPLETION], V_ABSENT, "%s", why);
		return;
	}
	if (proc_taints(p) & STEPTIME_F_PREEXISTING)
		judge(&p->j[F_TASKS], V_BOUND, "lower bounds: a device file or SQ opened before `steptime load`, whose tasks are not counted");
	else if (d->priv_err && !p->recs)
		judge(&p->j[F_TASKS], V_ABSENT, "no step recorded, and its SQs are not readable without root");
	else if (!p->recs && !p->sq.kio && !p->sq.uio_t && !p->sq.uio_d)
		judge(&p->j[F_TASKS], V_ABSENT, "no step and no SQ of it seen");
	else if (!p->sq.kio && !p->sq.uio_t && !p->sq.uio_d)
		judge(&p->j[F_TASKS], V_EXACT, "every SQE of its SQs seen by the kernel (none live now)");
	else
		judge(&p->j[F_TASKS], V_EXACT, "every SQE seen at its submission, by the kernel or the HAL probes (kio %u, uio_t %u, uio_d %u; HAL-seen %u)",
		      p->sq.kio, p->sq.uio_t, p->sq.uio_d, p->sq.hal);
	if (!p->completions)
		judge(&p->j[F_COMPLETION], V_ABSENT, "no task completed in the steps kept");
	else if (p->reported < p->completions)
		judge(&p->j[F_COMPLETION], V_BOUND, "%llu of %llu completions had no report of their own: upper bounds (the report of a later task of the SQ)",
		      (unsigned long long)(p->completions - p->reported),
		      (unsigned long long)p->completions);
	else
		judge(&p->j[F_COMPLETION], V_EXACT, "every completion had its own report");
}

/*
 * Whether steptime's count of @c is the driver's, and if not why: @brief
 * in the 80 columns of the text, else the reason.
 */
const char *check_verdict(const struct sq_check *c, bool brief)
{
	if (!c->st)
		return brief ? "untracked" : "not tracked by steptime";
	if (c->st->flags & ST_SQ_PREEXISTING)
		return brief ? "before load" :
		       "allocated before the load: counted from then";
	if (c->st->sqes == c->drv.send_ok)
		return "equal";
	if (!(c->st->flags & ST_SQ_HAL))
		return brief ? "not seen" :
		       "differs: its sends are not seen (no HAL path)";
	return "differs";
}
