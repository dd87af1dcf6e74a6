// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime export: a Prometheus exporter. Serves GET /metrics in the text
 * exposition format 0.0.4, or OpenMetrics 1.0.0 when the scraper's Accept
 * header asks for application/openmetrics-text; GET / a page for people
 * (tools/page.c).
 *
 * The steps map is polled every --interval (default 0.25 s), and by a
 * scrape when the last poll is older than that. The map keeps the last
 * STEPTIME_PROC_STEPS (16) records of each process, so a poll is cheap and
 * a process finishing more than 16 steps between two polls (64 steps/s at
 * the default) loses steps to the exporter: counted in
 * steptime_exporter_steps_missed_total, lower --interval then. Each finished step (done or incomplete) of a live process is
 * counted once into its process's histograms and counters; a step the LRU
 * map evicted before a poll saw it is counted in
 * steptime_exporter_steps_missed_total (from the BPF program's own count of
 * finished steps), never silently.
 *
 * Series and memory are bounded: only live processes are exported (a pid
 * label goes away with its process; a reused pid is told apart by its start
 * time), at most --max-procs of them (default 1024, the number of mark
 * slots; more are counted in steptime_exporter_processes_dropped_total), and
 * label values are cut to 63 bytes. Per process the exporter keeps a fixed
 * struct (sizeof(struct xproc), about 1 KiB); the output grows linearly with
 * the processes (about 6 KiB each); the snapshot of the steps map is freed
 * after each poll. Labels: pid (kernel tgid), job_id, rank, local_rank and
 * device, read once from the process's environment (see snapshot.h); job_id and
 * not "job" because Prometheus' target label is "job".
 *
 * Clients are served at once and without blocking (tools/http.c), each
 * request within a deadline: a slow or idle client delays neither another
 * scrape nor the polling of the maps.
 *
 * A process id that comes back: the exited process's records (flagged
 * STEPTIME_F_EXITED) that the new one's have not replaced are left out of
 * the live process's figures.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <limits.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <steptime/util.h>

#include "cmds.h"
#include "http.h"
#include "cli.h"
#include "snapshot.h"
#include "trace.h"
#include "page.h"
#include "commit.h"		/* STEPTIME_COMMIT, by tools/Build.mk */
#include "export.h"

/* Output: a growing buffer; on ENOMEM the scrape fails (500). */
struct out {
	char *p;
	size_t len, cap;
	bool oom, om;
};

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

static int render(struct out *o, const struct exporter *x)
{
	o->len = 0;
	o->oom = false;		/* a failed scrape fails alone */
	render_procs(o, x, st_mono_ns());
	render_global(o, x);
	if (o->om)
		put(o, "# EOF\n");
	return o->oom ? -ENOMEM : 0;
}

#define CT_TEXT	"text/plain; version=0.0.4; charset=utf-8"
#define CT_OM	"application/openmetrics-text; version=1.0.0; charset=utf-8"
#define CT_PLAIN "text/plain; charset=utf-8"

struct export_ctx {
	struct exporter *x;
	struct out *o;
	struct http_server *srv;
	char *trace;			/* the last /trace response */
	char *page;			/* the last / response */
};

#define CT_JSON	"application/json"
#define CT_HTML	"text/html; charset=utf-8"
#define KEEP_DEFAULT	32	/* --keep: steps kept per process */

/* The value of @key in query @q ("a=1&b=2"), or NULL. */
static const char *query_get(const char *q, const char *key, char *buf,
			     size_t len)
{
	size_t n = strlen(key), v;

	while (*q) {
		v = strcspn(q, "&");
		if (!strncmp(q, key, n) && q[n] == '=') {
			snprintf(buf, len, "%.*s", (int)(v - n - 1), q + n + 1);
			return buf;
		}
		q += v + (q[v] == '&');
	}
	return NULL;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct steptime_step_stats *x = a, *y = b;

	return x->index_id < y->index_id ? -1 : x->index_id > y->index_id;
}

/*
 * GET /trace?pid=P[&last=N]: the flight recorder's last N (default all
 * kept) finished steps of process P (kernel tgid), as `steptime trace`
 * writes them. Return: the status; @e->trace holds a 200's body.
 */
static int trace_get(struct export_ctx *e, const char *query, size_t *len,
		     const char **msg)
{
	struct exporter *x = e->x;
	unsigned long long pid, last = x->keep;
	char buf[32];
	struct snap snap;
	struct xproc *p;
	size_t pos, from;
	FILE *f;
	int err;

	if (!x->keep) {
		*msg = "the flight recorder is off (--keep 0)\n";
		return 404;
	}
	if (!query_get(query, "pid", buf, sizeof(buf)) ||
	    cli_parse_ull(buf, 10, 1, UINT32_MAX, &pid)) {
		*msg = "bad request: /trace?pid=PID[&last=N] (PID: the pid label)\n";
		return 400;
	}
	if (query_get(query, "last", buf, sizeof(buf)) &&
	    cli_parse_ull(buf, 10, 1, UINT32_MAX, &last)) {
		*msg = "bad request: last=N, N from 1\n";
		return 400;
	}
	p = proc_find(x, (__u32)pid, &pos);
	if (!p || !p->rec_n) {
		*msg = "no such process: not exported now, or no finished step kept\n";
		return 404;
	}
	snap.steps = calloc(p->rec_n, sizeof(*snap.steps));
	if (!snap.steps) {
		*msg = "out of memory\n";
		return 500;
	}
	memcpy(snap.steps, p->rec, p->rec_n * sizeof(*snap.steps));
	qsort(snap.steps, p->rec_n, sizeof(*snap.steps), rec_cmp);
	from = p->rec_n > last ? p->rec_n - last : 0;
	memmove(snap.steps, snap.steps + from, (p->rec_n - from) * sizeof(*snap.steps));
	snap.n = p->rec_n - from;
	free(e->trace);
	e->trace = NULL;
	f = open_memstream(&e->trace, len);
	err = f ? trace_json_write(f, &snap, x->loaded ? &x->cnt : NULL, x->freq_hz) : -ENOMEM;
	if (f && fclose(f) && !err)
		err = -ENOMEM;
	free(snap.steps);
	if (err) {
		*msg = "out of memory\n";
		return 500;
	}
	return 200;
}

/* GET /: the page (tools/page.c) of what /metrics would say now. */
static int page_get(struct export_ctx *e, size_t *len)
{
	const struct exporter *x = e->x;
	struct page_node node = {
		.loaded = x->loaded, .cnt = x->loaded ? &x->cnt : NULL,
		.missed = x->missed, .dropped = x->dropped, .keep = x->keep,
	};
	struct page_proc *pp = calloc(x->n + 1, sizeof(*pp));
	__u64 now = st_mono_ns();
	const struct xproc *p;
	size_t i;
	FILE *f;
	int err;

	if (!pp)
		return -ENOMEM;
	for (i = 0; i < x->n; i++) {
		p = &x->procs[i];
		pp[i] = (struct page_proc){
			.pid = p->tgid, .lab = &p->lab, .last_id = p->last_id,
			.last_host = p->last_host, .last_dev = p->last_dev,
			.have_host = p->have_host, .have_dev = p->have_dev,
			.last_errors = p->have_last ? p->last.errors : 0,
			.incomplete = p->incomplete,
			.open_outstanding = p->open_outstanding,
			.stall_ns = p->open_start && now > p->open_progress ?
				    now - p->open_progress : 0,
			.steps = p->rec, .n = p->rec_n,
		};
	}
	free(e->page);
	e->page = NULL;
	f = open_memstream(&e->page, len);
	err = f ? page_write(f, &node, pp, x->n) : -ENOMEM;
	if (f && fclose(f) && !err)
		err = -ENOMEM;
	free(pp);
	return err;
}

static void text(struct http_resp *r, int status, const char *msg)
{
	r->status = status;
	r->type = CT_PLAIN;
	r->body = msg;
	r->len = strlen(msg);
}

/* A whole GET or HEAD request (tools/http.c checked it). */
static void handle(void *ctx, const struct http_req *req, struct http_resp *r)
{
	struct export_ctx *e = ctx;
	struct exporter *x = e->x;
	struct out *o = e->o;

	const char *msg;
	size_t len;

	if (!strcmp(req->path, "/")) {
		if (st_mono_ns() - x->last_poll_ns >= x->interval_ns)
			exporter_poll(x);
		if (page_get(e, &len)) {
			text(r, 500, "out of memory\n");
			return;
		}
		r->status = 200;
		r->type = CT_HTML;
		r->body = e->page;
		r->len = len;
		return;
	}
	if (!strcmp(req->path, "/trace")) {
		if (st_mono_ns() - x->last_poll_ns >= x->interval_ns)
			exporter_poll(x);
		r->status = trace_get(e, req->query, &len, &msg);
		if (r->status != 200) {
			text(r, r->status, msg);
			return;
		}
		r->type = CT_JSON;
		r->body = e->trace;
		r->len = len;
		return;
	}
	if (strcmp(req->path, "/metrics")) {
		text(r, 404, "not found: metrics are at /metrics, traces at /trace?pid=PID\n");
		return;
	}
	o->om = req->openmetrics;
	/*
	 * Values at most one --interval old: a scrape polls only when the
	 * timer has not, so its latency stays that of rendering.
	 */
	if (st_mono_ns() - x->last_poll_ns >= x->interval_ns)
		exporter_poll(x);
	x->scrapes++;
	x->serving = true;
	http_server_stats(e->srv, &x->http);
	if (render(o, x)) {
		text(r, 500, "out of memory\n");
		return;
	}
	r->status = 200;
	r->type = o->om ? CT_OM : CT_TEXT;
	r->body = o->p;
	r->len = o->len;
}

/* Bind ADDR:PORT or [ADDR]:PORT. Return: the listening socket or -errno. */
static int listen_on(const char *spec)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	char host[256];
	const char *port, *colon = strrchr(spec, ':');
	struct addrinfo *ai;
	unsigned long long n;
	int fd, one = 1, err;

	if (!colon || colon == spec || !colon[1] || strlen(spec) >= sizeof(host))
		return -EINVAL;
	port = colon + 1;
	if (spec[0] == '[') {
		if (colon[-1] != ']')
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - spec - 2), spec + 1);
	} else {
		snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
	}
	if (cli_parse_ull(port, 10, 0, 65535, &n))
		return -EINVAL;
	err = getaddrinfo(host, port, &hints, &ai);
	if (err)
		return -EADDRNOTAVAIL;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		freeaddrinfo(ai);
		return err;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128)) {
		err = -errno;
		close(fd);
		freeaddrinfo(ai);
		return err;
	}
	freeaddrinfo(ai);
	return fd;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void export_usage(FILE *f)
{
	fprintf(f,
		"usage: steptime export [--listen ADDR:PORT] [--interval DURATION]\n"
		"                       [--max-procs N] [--pidns INO|PATH] [--cgroup PATH]\n"
		"                       [--devices LIST] [-p|--pid PID] [--rank N]\n"
		"                       [--job ID] [--device ID] [--keep N]\n"
		"                       [--once [--openmetrics]] [--pin DIR]\n"
		"  Serves Prometheus metrics at http://ADDR:PORT/metrics (default\n"
		"  127.0.0.1:9775): text format 0.0.4, or OpenMetrics when the Accept header\n"
		"  asks for it. Polls the maps every --interval (a number and its unit:\n"
		"  500ms, 2s; default 250ms): values are at most that old. --max-procs:\n"
		"  processes exported at most (default 1024).\n"
		"  --pidns: only processes of that PID namespace (inode, or /proc/PID/ns/pid).\n"
		"  --cgroup: only processes in that cgroup v2 subtree (/kubepods/... as\n"
		"  /proc/PID/cgroup shows it, or /sys/fs/cgroup/...). --devices: only\n"
		"  processes whose device label is in LIST (0-3,6).\n"
		PROC_FILTER_USAGE
		"  --keep N: the flight recorder keeps each process's last N finished steps\n"
		"  (default 32, 0: off), served at /trace?pid=PID[&last=N] as a Chrome\n"
		"  Trace Event JSON (Perfetto), as `steptime trace` writes it.\n"
		"  GET / is a page of the processes, their last steps and losses.\n"
		"  --once: print the metrics once to stdout and exit.\n"
		"  Old spellings (they warn; gone in the next release): -l ADDR:PORT\n"
		"  (--listen), --interval with no unit (seconds).\n");
}

/*
 * The maps are polled on time whatever the clients do: serving never
 * blocks (tools/http.c), and waits only until the next poll is due.
 */
static void export_loop(struct exporter *x, struct http_server *srv)
{
	__u64 next = st_mono_ns(), now;

	while (!stop) {
		now = st_mono_ns();
		if (now >= next) {
			exporter_poll(x);
			next = now + x->interval_ns;
			now = st_mono_ns();
		}
		http_server_step(srv, next > now ? next - now : 0);
	}
}

int cmd_export(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, 'A' },
		{ "interval", required_argument, NULL, 'i' },
		{ "max-procs", required_argument, NULL, 'm' },
		{ "once", no_argument, NULL, '1' },
		{ "openmetrics", no_argument, NULL, 'O' },
		{ "pin", required_argument, NULL, 'P' },
		{ "pidns", required_argument, NULL, 'N' },
		{ "cgroup", required_argument, NULL, 'C' },
		{ "devices", required_argument, NULL, 'V' },
		PROC_FILTER_LONGOPTS,
		{ "keep", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct sigaction sa = { .sa_handler = on_signal };
	struct exporter x = { .max = EXPORT_MAX_PROCS, .keep = KEEP_DEFAULT };
	const char *listen_spec = "127.0.0.1:9775";
	struct out o = {};
	struct export_ctx e = { .x = &x, .o = &o };
	unsigned long long interval = 250 * CLI_MS;
	unsigned long long v;
	bool once = false;
	size_t i;
	int c, lfd, err;

	while ((c = getopt_long(argc, argv, "l:p:h", lo, NULL)) != -1) {
		switch (c) {
		case 'l':
			cli_deprecated("export", "-l", "--listen");
			/* fall through */
		case 'A':
			listen_spec = optarg;
			break;
		case 'i':
			err = cli_opt_duration("export", "--interval", NULL, optarg,
					       CLI_S, 10 * CLI_MS, 3600 * CLI_S,
					       &interval);
			if (err)
				return err;
			break;
		case 'm':
			err = cli_opt_ull("export", "--max-procs", optarg, 1,
					  1 << 20, &v);
			if (err)
				return err;
			x.max = (size_t)v;
			break;
		case '1':
			once = true;
			break;
		case 'O':
			o.om = true;
			break;
		case 'P':
			x.pin = optarg;
			break;
		case 'N':
			err = scope_pidns(&x.scope, optarg);
			if (err)
				return err;
			break;
		case 'C':
			err = scope_cgroup(&x.scope, optarg);
			if (err)
				return err;
			break;
		case 'V':
			err = scope_devices(&x.scope, optarg);
			if (err)
				return err;
			break;
		case 'k':
			err = cli_opt_ull("export", "--keep", optarg, 0, 4096, &v);
			if (err)
				return err;
			x.keep = (size_t)v;
			break;
		case 'h':
			export_usage(stdout);
			return 0;
		default:	/* --pid, --rank, --job, --device; else usage */
			err = proc_filter_opt("export", c, optarg, &x.scope.filter);
			if (err)
				return err;
			break;
		}
	}
	if (optind != argc)
		return cli_usage_error("export", "unexpected argument '%s'", argv[optind]);
	if (o.om && !once)
		return cli_usage_error("export", "--openmetrics: only with --once (served, the format is the one the scraper's Accept header asks for)");
	x.pin = steptime__pin_dir(x.pin);
	x.scoped = x.scope.pidns_ino || x.scope.cgroup[0] ||
		   x.scope.have_devices || x.scope.filter.pid ||
		   proc_filter_labels(&x.scope.filter);
	x.interval_ns = interval;
	for (i = 0; i < NBUCKETS; i++)
		bucket_ns[i] = (__u64)(strtod(bucket_le[i], NULL) * 1e9 + 0.5);
	x.procs = calloc(x.max, sizeof(*x.procs));
	if (!x.procs) {
		fprintf(stderr, "steptime export: out of memory\n");
		return 1;
	}
	if (once) {
		exporter_poll(&x);
		err = render(&o, &x);
		if (!err) {
			/* A short fwrite(): the failed write()'s errno. */
			errno = 0;
			if (fwrite(o.p, 1, o.len, stdout) != o.len)
				err = errno ? -errno : -EIO;
			else
				err = cli_out_error(stdout);
			if (err)
				fprintf(stderr, "steptime export: write error: %s\n",
					strerror(-err));
		}
		if (!x.loaded)
			cli_open_error("export", x.pin, -x.open_err);
		free(o.p);
		free(x.procs);
		return err || !x.loaded ? 1 : 0;
	}
	/*
	 * Maps it may never read: said now, not served as "not loaded". Only
	 * maps not pinned yet are waited for (steptime load after export).
	 */
	err = steptime__read_counters(x.pin, &x.cnt);
	if (err && err != -ENOENT && err != -ENODEV) {
		free(x.procs);
		return cli_open_error("export", x.pin, -err);
	}
	lfd = listen_on(listen_spec);
	if (lfd == -EINVAL) {
		free(x.procs);
		return cli_usage_error("export", "--listen: malformed address '%s' (ADDR:PORT or [ADDR]:PORT, PORT up to 65535)",
				       listen_spec);
	}
	if (lfd < 0) {
		fprintf(stderr, "steptime export: cannot listen on '%s': %s\n",
			listen_spec, strerror(-lfd));
		free(x.procs);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	e.srv = http_server_new(lfd, handle, &e);
	if (!e.srv) {
		fprintf(stderr, "steptime export: out of memory\n");
		close(lfd);
		free(x.procs);
		return 1;
	}
	fprintf(stderr, "steptime export: serving http://%s/metrics\n", listen_spec);
	export_loop(&x, e.srv);
	http_server_free(e.srv);
	close(lfd);
	free(o.p);
	free(e.trace);
	free(e.page);
	for (i = 0; i < x.n; i++)
		free(x.procs[i].rec);
	free(x.procs);
	return 0;
}
