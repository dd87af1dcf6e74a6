// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime export's rendering: the exporter's state as the Prometheus
 * text exposition format 0.0.4 or OpenMetrics 1.0.0 (metric families,
 * HELP and TYPE, labels, timestamps).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <steptime/util.h>

#include "commit.h"		/* STEPTIME_COMMIT, by tools/Build.mk */
#include "export.h"

__attribute__((format(printf, 2, 3)))
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	size_t room;
	char *grown;
	int n;

	for (;;) {
		room = o->cap - o->len;
		va_start(ap, fmt);
		n = vsnprintf(o->p ? o->p + o->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0 || o->oom)
			return;
		if ((size_t)n < room) {
			o->len += (size_t)n;
			return;
		}
		grown = realloc(o->p, o->cap * 2 + (size_t)n + 4096);
		if (!grown) {
			o->oom = true;
			return;
		}
		o->p = grown;
		o->cap = o->cap * 2 + (size_t)n + 4096;
	}
}

/*
 * A metric family's header. Counters are named NAME_total; OpenMetrics
 * names the family without the suffix, the text format with it.
 */
static void family(struct out *o, const char *name, const char *type,
		   const char *help)
{
	bool counter = !strcmp(type, "counter");
	const char *fam = name;
	char base[128];

	if (counter && o->om) {
		snprintf(base, sizeof(base), "%.*s", (int)(strlen(name) - 6), name);
		fam = base;
	}
	if (!strcmp(type, "info") && !o->om) {
		type = "gauge";
	} else if (!strcmp(type, "info")) {
		snprintf(base, sizeof(base), "%.*s", (int)(strlen(name) - 5), name);
		fam = base;
	}
	put(o, "# HELP %s %s\n# TYPE %s %s\n", fam, help, fam, type);
}

static void put_seconds(struct out *o, __u64 ns)
{
	put(o, "%llu.%09llu", (unsigned long long)(ns / 1000000000ull),
	    (unsigned long long)(ns % 1000000000ull));
}

static void hist_put(struct out *o, const char *name, const struct xproc *p,
		     const struct hist *h)
{
	__u64 cum = 0;
	size_t i;

	for (i = 0; i < NBUCKETS; i++) {
		cum += h->bucket[i];
		put(o, "%s_bucket{%s,le=\"%s\"} %llu\n", name, p->labels,
		    bucket_le[i], (unsigned long long)cum);
	}
	put(o, "%s_bucket{%s,le=\"+Inf\"} %llu\n", name, p->labels,
	    (unsigned long long)h->count);
	put(o, "%s_sum{%s} ", name, p->labels);
	put_seconds(o, h->sum_ns);
	put(o, "\n%s_count{%s} %llu\n", name, p->labels,
	    (unsigned long long)h->count);
}

/* A per-process u64 member as a sample of every process. */
#define PROC_U64(o, x, name, type, help, expr) do {			\
	size_t _i;							\
	family(o, name, type, help);					\
	for (_i = 0; _i < (x)->n; _i++) {				\
		const struct xproc *p = &(x)->procs[_i];		\
		put(o, "%s{%s} %llu\n", name, p->labels,		\
		    (unsigned long long)(expr));			\
	}								\
} while (0)

/* A per-process duration gauge, for the processes where @cond holds. */
#define PROC_SECONDS(o, x, name, help, cond, expr) do {		\
	size_t _i;							\
	family(o, name, "gauge", help);					\
	for (_i = 0; _i < (x)->n; _i++) {				\
		const struct xproc *p = &(x)->procs[_i];		\
		if (!(cond))						\
			continue;					\
		put(o, "%s{%s} ", name, p->labels);			\
		put_seconds(o, expr);					\
		put(o, "\n");						\
	}								\
} while (0)

/*
 * CLOCK_REALTIME minus CLOCK_MONOTONIC, read once per scrape: step records
 * hold CLOCK_MONOTONIC times (bpf_ktime_get_ns), Prometheus wants Unix
 * time. The realtime read sits between two monotonic ones, halving the
 * error; a clock set between scrapes moves the next scrape's timestamps.
 */
static __s64 mono_to_real_ns(void)
{
	struct timespec rt;
	__u64 m0, m1;

	m0 = st_mono_ns();
	clock_gettime(CLOCK_REALTIME, &rt);
	m1 = st_mono_ns();
	return (__s64)((__u64)rt.tv_sec * 1000000000ull + (__u64)rt.tv_nsec) -
	       (__s64)(m0 + (m1 - m0) / 2);
}

/* Monotonic @mono as a Unix timestamp, in seconds (0: none, or pre-1970). */
static void put_timestamp(struct out *o, __u64 mono, __s64 off)
{
	__s64 real = (__s64)mono + off;

	put_seconds(o, mono && real > 0 ? (__u64)real : 0);
}

/*
 * A per-process Unix-time gauge (Prometheus: export timestamps, not time
 * since), 0 for the processes where @cond does not hold.
 */
#define PROC_TIMESTAMP(o, x, name, help, off, cond, mono) do {		\
	size_t _i;							\
	family(o, name, "gauge", help);					\
	for (_i = 0; _i < (x)->n; _i++) {				\
		const struct xproc *p = &(x)->procs[_i];		\
		put(o, "%s{%s} ", name, p->labels);			\
		put_timestamp(o, (cond) ? (mono) : 0, off);		\
		put(o, "\n");						\
	}								\
} while (0)

static void render_procs(struct out *o, const struct exporter *x, __u64 now)
{
	__s64 off = mono_to_real_ns();
	size_t i;

	family(o, "steptime_step_host_seconds", "histogram",
	       "Host step time (END - START mark, CLOCK_MONOTONIC) of finished steps.");
	for (i = 0; i < x->n; i++)
		hist_put(o, "steptime_step_host_seconds", &x->procs[i], &x->procs[i].host);
	family(o, "steptime_step_device_seconds", "histogram",
	       "Device step time (device counter, exact) of finished steps.");
	for (i = 0; i < x->n; i++)
		hist_put(o, "steptime_step_device_seconds", &x->procs[i], &x->procs[i].dev);
	family(o, "steptime_steps_total", "counter",
	       "Finished steps, by state (done; incomplete: the process exited mid-step; ended: tasks on uio_d SQs, completion unknown).");
	for (i = 0; i < x->n; i++) {
		put(o, "steptime_steps_total{%s,state=\"done\"} %llu\n",
		    x->procs[i].labels, (unsigned long long)x->procs[i].done);
		put(o, "steptime_steps_total{%s,state=\"incomplete\"} %llu\n",
		    x->procs[i].labels, (unsigned long long)x->procs[i].incomplete);
		put(o, "steptime_steps_total{%s,state=\"ended\"} %llu\n",
		    x->procs[i].labels, (unsigned long long)x->procs[i].ended);
	}
	PROC_U64(o, x, "steptime_tasks_total", "counter",
		 "Tasks submitted in finished steps.", p->tasks);
	PROC_U64(o, x, "steptime_task_completions_total", "counter",
		 "Tasks of finished steps that completed.", p->completions);
	PROC_U64(o, x, "steptime_task_errors_total", "counter",
		 "Tasks of finished steps whose report carried an error.", p->errors);
	PROC_U64(o, x, "steptime_submit_ioctls_total", "counter",
		 "Submit (SQCQ_SEND) ioctls in finished steps.", p->submit_ioctls);
	family(o, "steptime_submit_seconds_total", "counter",
	       "Time spent inside submit ioctls in finished steps.");
	for (i = 0; i < x->n; i++) {
		put(o, "steptime_submit_seconds_total{%s} ", x->procs[i].labels);
		put_seconds(o, x->procs[i].submit_ns);
		put(o, "\n");
	}
	PROC_U64(o, x, "steptime_last_step_id", "gauge",
		 "Highest step index id seen (any state).", p->last_id);
	PROC_SECONDS(o, x, "steptime_last_step_host_seconds",
		     "Host time of the last finished step that has one.",
		     p->have_host, p->last_host);
	PROC_SECONDS(o, x, "steptime_last_step_device_seconds",
		     "Device time of the last finished step that has one.",
		     p->have_dev, p->last_dev);
	PROC_SECONDS(o, x, "steptime_recent_device_step_min_seconds",
		     "Smallest device time of the last " STR(RECENT) " finished "
		     "steps: above a threshold means " STR(RECENT)
		     " consecutive steps were.", p->have_recent,
		     p->recent_dev_min);
	PROC_U64(o, x, "steptime_last_step_tasks", "gauge",
		 "Tasks submitted in the last finished step.", p->last.tasks);
	PROC_U64(o, x, "steptime_last_step_completions", "gauge",
		 "Completions in the last finished step.", p->last.completions);
	PROC_U64(o, x, "steptime_last_step_errors", "gauge",
		 "Task errors in the last finished step.", p->last.errors);
	PROC_SECONDS(o, x, "steptime_last_step_submit_seconds",
		     "Time inside submit ioctls in the last finished step.",
		     p->have_last, p->last.submit_ioctl_ns);
	PROC_TIMESTAMP(o, x, "steptime_last_step_end_timestamp_seconds",
		       "Unix time of the last finished step's END mark (or of "
		       "when the exporter first saw the process, if later).",
		       off, true, p->last_end);
	PROC_SECONDS(o, x, "steptime_open_step_seconds",
		     "Age of the step open now (0: none).", true,
		     p->open_start && now > p->open_start ? now - p->open_start : 0);
	PROC_U64(o, x, "steptime_open_step_tasks_outstanding", "gauge",
		 "Tasks of the open step submitted and not completed yet (0: "
		 "none, or no step open).", p->open_outstanding);
	PROC_TIMESTAMP(o, x, "steptime_open_step_last_progress_timestamp_seconds",
		       "Unix time the device last completed a task of the open "
		       "step (or of its START): 0 when no step is open.", off,
		       p->open_start, p->open_progress);
	PROC_U64(o, x, "steptime_last_finished_step_id", "gauge",
		 "Highest index id of a finished step counted (0: none yet).", p->hw);
	family(o, "steptime_process_info", "info",
	       "A process marking steps: its name and job size.");
	for (i = 0; i < x->n; i++)
		put(o, "steptime_process_info{%s,%s} 1\n", x->procs[i].labels,
		    x->procs[i].info);
}

#define RENDER_COUNTER(name)						\
	family(o, "steptime_bpf_" #name "_total", "counter",		\
	       "BPF program counter " #name " (steptime status).");	\
	put(o, "steptime_bpf_" #name "_total %llu\n",			\
	    (unsigned long long)x->cnt.name);

static void render_http(struct out *o, const struct http_stats *h)
{
	family(o, "steptime_exporter_connections", "gauge",
	       "HTTP connections open now (this scrape's included).");
	put(o, "steptime_exporter_connections %zu\n", h->open);
	family(o, "steptime_exporter_http_rejected_total", "counter",
	       "Malformed or refused requests (answered 4xx or 5xx).");
	put(o, "steptime_exporter_http_rejected_total %llu\n",
	    (unsigned long long)h->rejected);
	family(o, "steptime_exporter_http_timeouts_total", "counter",
	       "Connections closed at their deadline (request not received "
	       "in 5 s, or response not read in 10 s).");
	put(o, "steptime_exporter_http_timeouts_total %llu\n",
	    (unsigned long long)h->timed_out);
	family(o, "steptime_exporter_http_evicted_total", "counter",
	       "Connections closed for a new one (256 open at most).");
	put(o, "steptime_exporter_http_evicted_total %llu\n",
	    (unsigned long long)h->evicted);
}

/* Prometheus' convention: a constant 1 labelled with what was built. */
static void render_build_info(struct out *o)
{
	family(o, "steptime_build_info", "info",
	       "The steptime that serves: its version, BPF ABI and commit.");
	put(o, "steptime_build_info{version=\"%s\",abi_version=\"%d\"%s%s%s} 1\n",
	    STEPTIME_VERSION, STEPTIME_ABI_VERSION,
	    STEPTIME_COMMIT[0] ? ",revision=\"" : "", STEPTIME_COMMIT,
	    STEPTIME_COMMIT[0] ? "\"" : "");
}

static void render_global(struct out *o, const struct exporter *x)
{
	render_build_info(o);
	family(o, "steptime_loaded", "gauge",
	       "1 when steptime's maps are pinned and readable.");
	put(o, "steptime_loaded %d\n", x->loaded);
	if (x->loaded) {
		STEPTIME_COUNTERS(RENDER_COUNTER)
	}
	family(o, "steptime_exporter_processes", "gauge",
	       "Processes exported now.");
	put(o, "steptime_exporter_processes %zu\n", x->n);
	family(o, "steptime_exporter_processes_max", "gauge",
	       "The bound on exported processes (--max-procs).");
	put(o, "steptime_exporter_processes_max %zu\n", x->max);
	family(o, "steptime_exporter_processes_dropped_total", "counter",
	       "Times a process was not exported because --max-procs were.");
	put(o, "steptime_exporter_processes_dropped_total %llu\n",
	    (unsigned long long)x->dropped);
	family(o, "steptime_exporter_steps_missed_total", "counter",
	       "Finished steps never counted (evicted from the map or process "
	       "gone before a poll, or not exported).");
	put(o, "steptime_exporter_steps_missed_total %llu\n",
	    (unsigned long long)x->missed);
	family(o, "steptime_exporter_polls_total", "counter", "Polls of the maps.");
	put(o, "steptime_exporter_polls_total %llu\n", (unsigned long long)x->polls);
	family(o, "steptime_exporter_poll_errors_total", "counter",
	       "Polls that failed (other than not loaded).");
	put(o, "steptime_exporter_poll_errors_total %llu\n",
	    (unsigned long long)x->poll_errors);
	family(o, "steptime_exporter_scrapes_total", "counter",
	       "Scrapes served.");
	put(o, "steptime_exporter_scrapes_total %llu\n",
	    (unsigned long long)x->scrapes);
	if (x->serving)
		render_http(o, &x->http);
}

int render(struct out *o, const struct exporter *x)
{
	o->len = 0;
	o->oom = false;		/* a failed scrape fails alone */
	render_procs(o, x, st_mono_ns());
	render_global(o, x);
	if (o->om)
		put(o, "# EOF\n");
	return o->oom ? -ENOMEM : 0;
}
