// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime export's polling: the steps map read into per-process state
 * (struct xproc), each finished step counted once through its process's
 * window, the flight recorder, and the steps missed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <steptime/util.h>

#include "snapshot.h"
#include "export.h"

/* Step time buckets, seconds (le); +Inf follows. */
const char *const bucket_le[] = {
	"0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
	"0.25", "0.5", "1.0", "2.5", "5.0", "10.0", "30.0", "60.0",
};
__u64 bucket_ns[NBUCKETS];

static void hist_add(struct hist *h, __u64 ns)
{
	size_t i;

	for (i = 0; i < NBUCKETS && ns > bucket_ns[i]; i++)
		;
	h->bucket[i]++;
	h->count++;
	h->sum_ns += ns;
}

/* Label value escaping of both formats: \\, \" and \n. */
static size_t label_put(char *dst, size_t len, const char *name,
			const char *v, bool first)
{
	size_t o = 0;

	o += (size_t)snprintf(dst + o, len - o, "%s%s=\"", first ? "" : ",", name);
	for (; *v && o + 3 < len; v++) {
		if (*v == '\\' || *v == '"')
			dst[o++] = '\\';
		dst[o++] = *v == '\n' ? 'n' : *v;
	}
	o += (size_t)snprintf(dst + o, len - o, "\"");
	return o < len ? o : len - 1;
}

static void proc_init(struct xproc *p, __u32 tgid, __u64 start)
{
	struct steptime_step_stats *rec = p->rec;
	struct proc_labels l;
	char pid[16];
	size_t o = 0;

	memset(p, 0, sizeof(*p));
	p->rec = rec;		/* a reused pid's: emptied */
	p->tgid = tgid;
	p->start = start;
	p->last_end = st_mono_ns();
	if (proc_labels_read(tgid, &l))
		memset(&l, 0, sizeof(l));
	snprintf(pid, sizeof(pid), "%u", tgid);
	o += label_put(p->labels + o, sizeof(p->labels) - o, "pid", pid, true);
	o += label_put(p->labels + o, sizeof(p->labels) - o, "job_id", l.job, false);
	o += label_put(p->labels + o, sizeof(p->labels) - o, "rank", l.rank, false);
	o += label_put(p->labels + o, sizeof(p->labels) - o, "local_rank",
		       l.local_rank, false);
	label_put(p->labels + o, sizeof(p->labels) - o, "device", l.device, false);
	p->lab = l;
	o = label_put(p->info, sizeof(p->info), "comm", l.comm, true);
	label_put(p->info + o, sizeof(p->info) - o, "world_size", l.world_size, false);
}

struct xproc *proc_find(struct exporter *x, __u32 tgid, size_t *pos)
{
	size_t lo = 0, hi = x->n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (x->procs[mid].tgid == tgid) {
			*pos = mid;
			return &x->procs[mid];
		}
		if (x->procs[mid].tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	return NULL;
}

/* Forget the process at @pos (gone, or its pid reused out of scope). */
static void proc_drop(struct exporter *x, size_t pos)
{
	free(x->procs[pos].rec);
	memmove(&x->procs[pos], &x->procs[pos + 1],
		(x->n - pos - 1) * sizeof(*x->procs));
	x->n--;
}

/* The live process @tgid's entry, new or reset on pid reuse; NULL if gone or full. */
static struct xproc *proc_get(struct exporter *x, __u32 tgid, __u32 ns_tgid)
{
	__u64 start = proc_start(tgid);
	struct xproc *p;
	size_t pos;

	p = proc_find(x, tgid, &pos);
	if (!start) {
		if (p)
			proc_drop(x, pos);
		return NULL;
	}
	if (p && p->start == start)
		return p;
	if (!proc_in_scope(&x->scope, tgid, ns_tgid, start)) {
		if (p)		/* the pid reused out of scope */
			proc_drop(x, pos);
		return NULL;
	}
	if (p) {
		proc_init(p, tgid, start);
		return p;
	}
	if (x->n == x->max) {
		x->dropped++;
		return NULL;
	}
	memmove(&x->procs[pos + 1], &x->procs[pos], (x->n - pos) * sizeof(*p));
	x->n++;
	x->procs[pos].rec = x->keep ? calloc(x->keep, sizeof(*p->rec)) : NULL;
	proc_init(&x->procs[pos], tgid, start);
	return &x->procs[pos];
}

/* The bit of step @idx in @p's window, or 0 outside it. */
static __u64 window_bit(const struct xproc *p, __u64 idx)
{
	return idx <= p->hw && p->hw - idx < 64 ? 1ull << (p->hw - idx) : 0;
}

/* Count @s once. Return: true when it was new. */
static bool step_mark_counted(struct xproc *p, __u64 idx)
{
	__u64 d, bit;

	if (idx > p->hw) {
		d = idx - p->hw;
		p->window = d >= 64 ? 0 : p->window << d;
		p->nodev = d >= 64 ? 0 : p->nodev << d;
		p->window |= 1;
		p->hw = idx;
		return true;
	}
	d = p->hw - idx;
	if (d >= 64)
		return false;	/* older than the window: counted long ago */
	bit = 1ull << d;
	if (p->window & bit)
		return false;
	p->window |= bit;
	return true;
}

/* The flight recorder's copy of step @idx, or NULL. */
static struct steptime_step_stats *rec_find(struct xproc *p, __u64 idx)
{
	size_t i;

	for (i = 0; p->rec && i < p->rec_n; i++)
		if (p->rec[i].index_id == idx)
			return &p->rec[i];
	return NULL;
}

static void rec_push(struct exporter *x, struct xproc *p,
		     const struct steptime_step_stats *s)
{
	if (!p->rec)
		return;
	if (p->rec_n < x->keep) {
		p->rec[p->rec_n++] = *s;
		return;
	}
	p->rec[p->rec_head] = *s;	/* the oldest goes */
	p->rec_head = (p->rec_head + 1) % x->keep;
}

static void step_count(struct exporter *x, struct xproc *p,
		       const struct steptime_step_stats *s)
{
	struct steptime_step_stats *r;
	__u64 ns, bit;

	if (!step_mark_counted(p, s->index_id)) {
		bit = window_bit(p, s->index_id);
		if ((p->nodev & bit) && !steptime_stats__device_ns(s, &ns)) {
			hist_add(&p->dev, ns);
			p->nodev &= ~bit;
			r = rec_find(p, s->index_id);
			if (r)
				*r = *s;
		}
		return;
	}
	rec_push(x, p, s);
	x->counted++;
	p->counted++;
	if (!p->first || s->index_id < p->first)
		p->first = s->index_id;
	if (s->state == STEPTIME_STEP_DONE)
		p->done++;
	else if (s->state == STEPTIME_STEP_ENDED)
		p->ended++;
	else
		p->incomplete++;
	if (!steptime_stats__host_ns(s, &ns))
		hist_add(&p->host, ns);
	if (!steptime_stats__device_ns(s, &ns))
		hist_add(&p->dev, ns);
	else if (s->state == STEPTIME_STEP_DONE && s->flags & STEPTIME_F_STREAM)
		p->nodev |= window_bit(p, s->index_id);
	p->submit_ioctls += s->submit_ioctls;
	p->submit_ns += s->submit_ioctl_ns;
	if (s->flags & STEPTIME_F_UIO)
		return;		/* its task figures are unknown (abi.h) */
	p->tasks += s->tasks;
	p->completions += s->completions;
	if (!(s->flags & STEPTIME_F_JOURNAL))
		p->errors += s->errors;	/* else not measured (abi.h) */
}

/*
 * A stream-marked step gets its device times after it is done (the step
 * API reads the timeline events back at the next step's end, or at exit):
 * counting waits for them until a step DEVICE_TIME_STEPS later has
 * finished, or, when the process stopped stepping (no step open), for a
 * second. Under emulation a step's events are read back up to two steps
 * late, and the BPF program takes them at the process's next ioctl.
 * Later still (a loaded host), the step is counted without them, and its
 * device time joins the histogram when it comes (xproc.nodev).
 */
#define DEVICE_TIME_STEPS	4
#define DEVICE_TIME_WAIT_NS	1000000000ull

static bool device_time_pending(const struct steptime_step_stats *s,
				__u64 max_finished, bool stepping, __u64 now)
{
	if (s->state != STEPTIME_STEP_DONE || !(s->flags & STEPTIME_F_STREAM) ||
	    s->flags & STEPTIME_F_DEV_END ||
	    s->index_id + DEVICE_TIME_STEPS <= max_finished)
		return false;
	return stepping || !(s->flags & STEPTIME_F_HOST_END) ||
	       now - s->host_end_ns < DEVICE_TIME_WAIT_NS;
}

/*
 * Under a scope the BPF program's count of finished steps is the host's,
 * not this exporter's: a process's missed steps are the index ids from
 * the first it counted to the highest that it never counted (the step API
 * numbers a process's steps 1, 2, ...), less those awaiting their device
 * time. A counter: it never goes down.
 */
static void scope_missed(struct exporter *x, struct xproc *p, __u64 pending)
{
	__u64 span, missed;

	if (!p->first)
		return;
	span = p->hw - p->first + 1;
	if (span <= p->counted + pending)
		return;
	missed = span - p->counted - pending;
	if (missed > p->missed) {
		x->missed += missed - p->missed;
		p->missed = missed;
	}
}

/*
 * The open step's device progress: tasks submitted and not completed, and
 * when the device last completed one of them (else the step's START): a
 * device that stopped completing tasks shows as outstanding tasks and an
 * old progress time; a host that stopped submitting, as none outstanding.
 */
static void open_step(struct xproc *p, const struct steptime_step_stats *s)
{
	p->open_start = s->host_start_ns;
	p->open_outstanding = s->flags & STEPTIME_F_UIO || s->completions >= s->tasks ?
			      0 : s->tasks - s->completions;
	p->open_progress = s->completions && s->last_complete_ns > s->host_start_ns ?
			   s->last_complete_ns : s->host_start_ns;
}

/* The steps [i, end) of one live process, in index order. */
static void proc_update(struct exporter *x, struct xproc *p,
			const struct steptime_step_stats *s, size_t n)
{
	__u64 recent[RECENT], ns, max_finished = 0, now = st_mono_ns(), pending = 0;
	size_t i, nrecent = 0;
	bool stepping = false;

	for (i = 0; i < n; i++) {
		if (step_finished(&s[i]) && s[i].index_id > max_finished)
			max_finished = s[i].index_id;
		stepping |= s[i].state == STEPTIME_STEP_OPEN;
	}
	p->open_start = 0;
	p->open_outstanding = 0;
	p->open_progress = 0;
	for (i = 0; i < n; i++) {
		if (s[i].index_id > p->last_id)
			p->last_id = s[i].index_id;
		if (!step_finished(&s[i])) {
			if (s[i].flags & STEPTIME_F_HOST_START)
				open_step(p, &s[i]);
			continue;
		}
		if (device_time_pending(&s[i], max_finished, stepping, now)) {
			x->pending++;
			pending++;
			continue;
		}
		step_count(x, p, &s[i]);
		p->last = s[i];
		p->have_last = true;
		if (s[i].flags & STEPTIME_F_HOST_END && s[i].host_end_ns > p->last_end)
			p->last_end = s[i].host_end_ns;
		if (!steptime_stats__host_ns(&s[i], &ns)) {
			p->last_host = ns;
			p->have_host = true;
		}
		if (!steptime_stats__device_ns(&s[i], &ns)) {
			recent[nrecent++ % RECENT] = ns;
			p->last_dev = ns;
			p->have_dev = true;
		}
	}
	if (x->scoped)
		scope_missed(x, p, pending);
	if (nrecent >= RECENT) {
		p->recent_dev_min = recent[0];
		for (i = 1; i < RECENT; i++)
			if (recent[i] < p->recent_dev_min)
				p->recent_dev_min = recent[i];
		p->have_recent = true;
	}
}

/*
 * The records of @s[0, @n), process @tgid's in the map, that belong to the
 * process running under that id now: the records of an exited process
 * that had the same id (STEPTIME_F_EXITED, while the id runs again) are
 * dropped, and the others kept in order at the start of @s. A zombie's
 * are its own. Return: how many are kept.
 */
static size_t steps_of_live(struct steptime_step_stats *s, size_t n,
			    __u32 tgid)
{
	size_t i, kept = 0;

	for (i = 0; i < n && !(s[i].flags & STEPTIME_F_EXITED); i++)
		;
	if (i == n || proc_exited(tgid))
		return n;
	for (i = 0; i < n; i++)
		if (!(s[i].flags & STEPTIME_F_EXITED))
			s[kept++] = s[i];
	return kept;
}

static __u64 finished_steps(const struct steptime_counters *c)
{
	return c->steps_done + c->steps_incomplete + c->steps_ended;
}

void exporter_poll(struct exporter *x)
{
	struct snap snap;
	struct xproc *p;
	__u64 finished;
	size_t i, end, pos, live;
	bool *seen;
	int err;

	x->polls++;
	x->last_poll_ns = st_mono_ns();
	err = steptime__read_counters(x->pin, &x->cnt);
	x->loaded = !err;
	if (!err && !x->freq_hz) {
		struct steptime_info info;

		if (!steptime__read_info(x->pin, &info))
			x->freq_hz = info.counter_freq_hz;
	}
	x->open_err = err;
	/*
	 * Scoped to a PID namespace, only its records are kept, sorted and
	 * walked: a node's exporter on a host of many namespaces (pods) pays
	 * for its own processes, not for every process of the host.
	 */
	if (!err)
		err = snap_read_ns(x->pin, x->scope.pidns_ino, &snap);
	if (err) {
		if (err != -ENOENT)
			x->poll_errors++;
		return;
	}
	seen = calloc(x->max, sizeof(*seen));
	x->pending = 0;
	for (i = 0; i < snap.n; i = end) {
		end = snap_group_end(&snap, i);
		live = steps_of_live(&snap.steps[i], end - i, snap.steps[i].tgid);
		if (!live)
			continue;	/* a pid reused by a process not stepping */
		p = proc_get(x, snap.steps[i].tgid, snap.steps[i].ns_tgid);
		if (!p)
			continue;
		proc_update(x, p, &snap.steps[i], live);
	}
	/* Processes with no step left in the map: keep them while they live. */
	for (i = 0; i < snap.n; i = end) {
		end = snap_group_end(&snap, i);
		if (seen && proc_find(x, snap.steps[i].tgid, &pos))
			seen[pos] = true;
	}
	for (i = x->n; i-- > 0;)
		if (!(seen && seen[i]) && proc_start(x->procs[i].tgid) !=
		    x->procs[i].start)
			proc_drop(x, i);
	free(seen);
	snap_free(&snap);
	finished = finished_steps(&x->cnt);
	/* steptime loaded again: its counters started from 0. */
	if (x->scoped)
		return;		/* missed steps are counted per process */
	if (x->have_base && finished < x->base_finished)
		x->have_base = false;
	if (!x->have_base) {
		/*
		 * History in the map at start is counted, not "missed": all
		 * of it, also the steps that finished while the map was read
		 * (the counters are read again after it).
		 */
		if (!steptime__read_counters(x->pin, &x->cnt))
			finished = finished_steps(&x->cnt);
		x->base_finished = finished;
		x->counted = 0;
		x->have_base = true;
	} else if (finished - x->base_finished > x->counted + x->pending &&
		   finished - x->base_finished - x->counted - x->pending > x->missed) {
		/* A counter: it never goes down. */
		x->missed = finished - x->base_finished - x->counted - x->pending;
	}
}
