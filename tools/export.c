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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <steptime/util.h>

#include "cmds.h"
#include "http.h"
#include "cli.h"
#include "snapshot.h"
#include "trace.h"
#include "page.h"
#include "export.h"

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
