// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime trace: the steps map as a Chrome Trace Event JSON file, which
 * Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * Per process (pid = kernel tgid): track 1 holds the host step spans (START
 * to END mark, CLOCK_MONOTONIC); track 2 the device step spans; counter
 * tracks hold the tasks submitted, completed and failed. A "steptime"
 * process (pid 0) holds the loss counters. A host span's args are the
 * step's `steptime stat -o json` object (one formatter for both; tests
 * compare them), a device span's the step's device counter fields.
 *
 * Clocks: trace time is host CLOCK_MONOTONIC in microseconds. A device span
 * has an exact length (device counter difference) but the device counter's
 * offset from the host clock is not measured, so it is never placed as if it
 * were: --align start (default) draws it from its step's host START mark
 * (else the step's first submit) and says so in the track name and args;
 * --align none puts device spans of each process in a separate "device
 * clock" process whose time axis is the device counter (ticks / frequency),
 * which no host event shares.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <steptime/util.h>

#include "cmds.h"
#include "cli.h"
#include "snapshot.h"
#include "trace.h"

#define TID_HOST	1
#define TID_DEVICE	2
#define DEVICE_CLOCK_PID_BASE	1000000000u	/* pids above any kernel tgid */

enum align { ALIGN_START, ALIGN_NONE };

struct trace {
	FILE *f;
	enum align align;
	__u64 freq_hz;
	size_t events, unanchored;
	__u64 t_end;		/* latest host time in the trace */
	const char *raw;	/* -i: the step's record line, its args */
};

/* Trace time: microseconds with nanosecond digits. */
static void put_us(FILE *f, const char *key, __u64 ns)
{
	fprintf(f, ", \"%s\": %llu.%03llu", key, (unsigned long long)(ns / 1000),
		(unsigned long long)(ns % 1000));
}

static void event_sep(struct trace *t)
{
	fputs(t->events++ ? ",\n" : "\n", t->f);
}

/* A JSON string value (names from applications: any bytes). */
static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void meta(struct trace *t, __u32 pid, int tid, const char *what,
		 const char *name)
{
	event_sep(t);
	fprintf(t->f, "{\"ph\": \"M\", \"pid\": %u, \"tid\": %d, \"name\": \"%s\", "
		"\"args\": {\"name\": ", pid, tid, what);
	put_str(t->f, name);
	fputs("}}", t->f);
}

static void sort_index(struct trace *t, __u32 pid, int tid, int index)
{
	event_sep(t);
	fprintf(t->f, "{\"ph\": \"M\", \"pid\": %u, \"tid\": %d, \"name\": "
		"\"thread_sort_index\", \"args\": {\"sort_index\": %d}}",
		pid, tid, index);
}

static void proc_meta(struct trace *t, __u32 tgid)
{
	struct proc_labels l;
	char name[256];
	int n;

	if (proc_labels_read(tgid, &l))
		snprintf(l.comm, sizeof(l.comm), "exited");
	n = snprintf(name, sizeof(name), "%s (pid %u", l.comm, tgid);
	if (l.rank[0])
		n += snprintf(name + n, sizeof(name) - (size_t)n, ", rank %s", l.rank);
	if (l.device[0])
		n += snprintf(name + n, sizeof(name) - (size_t)n, ", device %s", l.device);
	snprintf(name + n, sizeof(name) - (size_t)n, ")");
	meta(t, tgid, 0, "process_name", name);
	meta(t, tgid, TID_HOST, "thread_name", "host steps (CLOCK_MONOTONIC)");
	sort_index(t, tgid, TID_HOST, TID_HOST);
	if (t->align == ALIGN_START) {
		meta(t, tgid, TID_DEVICE, "thread_name",
		     "device steps (exact length; drawn from the host START mark)");
		sort_index(t, tgid, TID_DEVICE, TID_DEVICE);
	} else {
		snprintf(name + n, sizeof(name) - (size_t)n,
			 "): device clock, not aligned with host time");
		meta(t, DEVICE_CLOCK_PID_BASE + tgid, 0, "process_name", name);
		meta(t, DEVICE_CLOCK_PID_BASE + tgid, TID_DEVICE, "thread_name",
		     "device steps (device counter time)");
	}
}

#ifdef STEPTIME_PHASES_MAX
/*
 * The step's phases (msproftx/mstx ranges and marks, by name): totals per
 * step, without the ranges' own start times, so they are args of the host
 * span and per-phase counters at the step's END, never invented sub-spans.
 */
static int phases_get(const struct steptime_step_stats *s,
		      struct steptime_phase *ph)
{
	int n = steptime_phases__get(s, ph, STEPTIME_PHASES_PER_STEP);

	return n < 0 ? 0 : n > STEPTIME_PHASES_PER_STEP ? STEPTIME_PHASES_PER_STEP : n;
}

static void phases_args(FILE *f, const struct steptime_phase *ph, int n)
{
	int i;

	fputs("\"phases\": [", f);
	for (i = 0; i < n; i++) {
		fputs(i ? ", {\"name\": " : "{\"name\": ", f);
		put_str(f, ph[i].name);
		fprintf(f, ", \"count\": %llu, \"host_ns\": %llu, \"device_ns\": %llu, "
			"\"device_count\": %llu}", (unsigned long long)ph[i].count,
			(unsigned long long)ph[i].host_ns,
			(unsigned long long)ph[i].device_ns,
			(unsigned long long)ph[i].device_count);
	}
	fputs("], ", f);
}
#endif

/*
 * A complete ("X") event. A host span's args are the step's stat JSON
 * object (and its phases); a device span's the step's device fields.
 */
static void span(struct trace *t, __u32 pid, int tid, const char *cat,
		 const struct steptime_step_stats *s, __u64 ts, __u64 dur,
		 const char *extra, bool host)
{
	char args[2048];

	if (host && t->raw)
		snprintf(args, sizeof(args), "%s", t->raw);
	else if (host)
		steptime_stats__snprintf(args, sizeof(args), STEPTIME_FMT_JSON, s);
	else
		snprintf(args, sizeof(args), "{\"pid\": %u, \"index_id\": %llu, "
			 "\"dev_start_ticks\": %llu, \"dev_end_ticks\": %llu, "
			 "\"device_time_ns\": %llu}", s->tgid,
			 (unsigned long long)s->index_id,
			 (unsigned long long)s->dev_start_ticks,
			 (unsigned long long)s->dev_end_ticks,
			 (unsigned long long)s->device_time_ns);
	event_sep(t);
	fprintf(t->f, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"step %llu%s\", "
		"\"pid\": %u, \"tid\": %d", cat, (unsigned long long)s->index_id,
		s->state == STEPTIME_STEP_DONE ? "" :
		s->state == STEPTIME_STEP_OPEN ? " (open)" :
		s->state == STEPTIME_STEP_ENDED ? " (ended)" : " (incomplete)",
		pid, tid);
	put_us(t->f, "ts", ts);
	put_us(t->f, "dur", dur);
	fprintf(t->f, ", \"args\": {%s", extra ? extra : "");
#ifdef STEPTIME_PHASES_MAX
	if (host) {
		struct steptime_phase ph[STEPTIME_PHASES_PER_STEP];
		int n = phases_get(s, ph);

		if (n)
			phases_args(t->f, ph, n);
	}
#endif
	fprintf(t->f, "\"step\": %s}}", args);
}

static void counter(struct trace *t, __u32 pid, const char *name, __u64 ts,
		    __u64 value)
{
	event_sep(t);
	fprintf(t->f, "{\"ph\": \"C\", \"pid\": %u, \"name\": \"%s\"", pid, name);
	put_us(t->f, "ts", ts);
	fprintf(t->f, ", \"args\": {\"value\": %llu}}", (unsigned long long)value);
}

#ifdef STEPTIME_PHASES_MAX
/* A counter named by an application (escaped). */
static void phase_counter(struct trace *t, __u32 pid, const char *name,
			  __u64 ts, __u64 value)
{
	event_sep(t);
	fprintf(t->f, "{\"ph\": \"C\", \"pid\": %u, \"name\": ", pid);
	put_str(t->f, name);
	put_us(t->f, "ts", ts);
	fprintf(t->f, ", \"args\": {\"value\": %llu}}", (unsigned long long)value);
}
#endif

static void host_span(struct trace *t, const struct steptime_step_stats *s)
{
	__u64 ns, end;

	if (!steptime_stats__host_ns(s, &ns)) {
		span(t, s->tgid, TID_HOST, "host_step", s, s->host_start_ns, ns,
		     NULL, true);
		if (s->host_end_ns > t->t_end)
			t->t_end = s->host_end_ns;
		return;
	}
	/* An open step (or one without END): up to its last known activity. */
	if (!(s->flags & STEPTIME_F_HOST_START))
		return;
	end = s->host_start_ns;
	if (s->tasks && s->last_submit_ns > end)
		end = s->last_submit_ns;
	if (s->completions && s->last_complete_ns > end)
		end = s->last_complete_ns;
	span(t, s->tgid, TID_HOST, "host_step", s, s->host_start_ns,
	     end - s->host_start_ns, "\"partial\": true, ", true);
}

static void device_span(struct trace *t, const struct steptime_step_stats *s)
{
	__u64 ns, anchor;

	if (steptime_stats__device_ns(s, &ns))
		return;
	if (t->align == ALIGN_NONE) {
		if (!t->freq_hz)
			return;
		anchor = (__u64)((double)s->dev_start_ticks * 1e9 / (double)t->freq_hz);
		span(t, DEVICE_CLOCK_PID_BASE + s->tgid, TID_DEVICE, "device_step",
		     s, anchor, ns, "\"clock\": \"device counter\", ", false);
		return;
	}
	if (s->flags & STEPTIME_F_HOST_START)
		anchor = s->host_start_ns;
	else if (s->tasks && !(s->flags & STEPTIME_F_JOURNAL))
		anchor = s->first_submit_ns;
	else {
		t->unanchored++;
		return;
	}
	span(t, s->tgid, TID_DEVICE, "device_step", s, anchor, ns,
	     s->flags & STEPTIME_F_HOST_START ?
	     "\"aligned_at\": \"host START mark\", " :
	     "\"aligned_at\": \"first submit\", ", false);
}

/* Cumulative tasks submitted, completed, failed, at the host time each moved. */
static void task_counters(struct trace *t, const struct steptime_step_stats *s,
			  __u64 cum[3])
{
	if (s->tasks) {
		cum[0] += s->tasks;
		counter(t, s->tgid, "tasks submitted", s->last_submit_ns, cum[0]);
	}
	if (s->completions) {
		cum[1] += s->completions;
		counter(t, s->tgid, "tasks completed", s->last_complete_ns, cum[1]);
	}
	if (s->errors) {
		cum[2] += s->errors;
		counter(t, s->tgid, "task errors", s->last_complete_ns, cum[2]);
	}
#ifdef STEPTIME_PHASES_MAX
	if (s->flags & STEPTIME_F_HOST_END) {
		struct steptime_phase ph[STEPTIME_PHASES_PER_STEP];
		int i, n = phases_get(s, ph);
		char name[sizeof(ph[0].name) + 32];

		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "phase %.*s: host ns",
				 (int)sizeof(ph[i].name), ph[i].name);
			phase_counter(t, s->tgid, name, s->host_end_ns, ph[i].host_ns);
			if (!ph[i].device_count)
				continue;
			snprintf(name, sizeof(name), "phase %.*s: device ns",
				 (int)sizeof(ph[i].name), ph[i].name);
			phase_counter(t, s->tgid, name, s->host_end_ns, ph[i].device_ns);
		}
	}
#endif
}

static void process(struct trace *t, const struct snap *snap,
		    char *const *raw, size_t i, size_t end)
{
	__u64 cum[3] = {};

	proc_meta(t, snap->steps[i].tgid);
	for (; i < end; i++) {
		t->raw = raw ? raw[i] : NULL;
		host_span(t, &snap->steps[i]);
		device_span(t, &snap->steps[i]);
		task_counters(t, &snap->steps[i], cum);
	}
}

#define COUNTER_JSON(name)						\
	fprintf(f, "%s\"" #name "\": %llu", first ? "" : ", ",		\
		(unsigned long long)cnt->name), first = false;

static void counters_json(FILE *f, const struct steptime_counters *cnt)
{
	bool first = true;

	fputc('{', f);
	STEPTIME_COUNTERS(COUNTER_JSON)
	fputc('}', f);
}

/* pid 0: steptime's own loss counters, sampled once, at the trace's end. */
static void losses(struct trace *t, const struct steptime_counters *cnt)
{
	size_t i;
	char name[64];

	meta(t, 0, 0, "process_name", "steptime (losses at the time of the trace)");
	for (i = 0; i < loss_count; i++) {
		snprintf(name, sizeof(name), "loss: %s", loss_names[i]);
		counter(t, 0, name, t->t_end, counter_get(cnt, loss_names[i]));
	}
}

static int trace_write(struct trace *t, const struct snap *snap,
		       char *const *raw, const struct steptime_counters *cnt,
		       bool have_cnt)
{
	FILE *f = t->f;
	size_t i, end;

	fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [", f);
	for (i = 0; i < snap->n; i = end) {
		end = snap_group_end(snap, i);
		process(t, snap, raw, i, end);
	}
	if (!t->t_end)
		t->t_end = st_mono_ns();
	if (have_cnt)
		losses(t, cnt);
	fprintf(f, "\n], \"otherData\": {\"clock\": \"host CLOCK_MONOTONIC, "
		"microseconds\", \"device_alignment\": \"%s\", "
		"\"counter_freq_hz\": %llu, \"steps\": %zu, "
		"\"device_spans_unanchored\": %zu, \"counters\": ",
		t->align == ALIGN_START ?
		"device spans start at their step's host START mark (else its "
		"first submit); their length is exact, their placement is not "
		"a measured clock offset" :
		"device spans are on the device counter's own axis (separate "
		"processes); no host event shares it",
		(unsigned long long)t->freq_hz, snap->n, t->unanchored);
	if (have_cnt)
		counters_json(f, cnt);
	else
		fputs("null", f);
	fputs("}}\n", f);
	return cli_out_error(f);
}

int trace_json_write(FILE *f, const struct snap *snap,
		     const struct steptime_counters *cnt, __u64 freq_hz)
{
	struct trace t = { .f = f, .align = ALIGN_START, .freq_hz = freq_hz };

	return trace_write(&t, snap, NULL, cnt, cnt != NULL);
}

/*
 * --last: the last @last steps of each process, kept in order at the
 * start; record lines (-i) are swapped, not lost (all are freed).
 */
static void snap_keep_last(struct snap *snap, char **raw, size_t last)
{
	size_t i, end, n = 0, k;
	char *keep;

	for (i = 0; i < snap->n; i = end) {
		end = snap_group_end(snap, i);
		for (k = end - i > last ? end - last : i; k < end; k++, n++) {
			snap->steps[n] = snap->steps[k];
			if (raw) {
				keep = raw[k];
				raw[k] = raw[n];
				raw[n] = keep;
			}
		}
	}
	snap->n = n;
}

/* -i: `steptime record` lines (the keys of `steptime stat -o json`). */
struct in_rec {
	struct steptime_step_stats s;
	char *raw;
};

/* The value of "key": in @line; false when absent or null. */
static bool in_u64(const char *line, const char *key, __u64 *v)
{
	char pat[64], *end;
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	if (*p < '0' || *p > '9')
		return false;
	*v = strtoull(p, &end, 10);
	return true;
}

/* One record line into @s. Return: false when it is not one. */
static bool in_parse(const char *line, struct steptime_step_stats *s)
{
	static const char *const states[] = { "open", "done", "incomplete",
					      "ended" };
	__u64 v = 0;
	unsigned int i;
	char pat[64];

	memset(s, 0, sizeof(*s));
	if (line[0] != '{' || !in_u64(line, "pid", &v) || !v)
		return false;
	s->tgid = (__u32)v;
	if (!in_u64(line, "index_id", &s->index_id) ||
	    !in_u64(line, "flags", &v))
		return false;
	s->flags = (__u32)v;
	s->state = 4;
	for (i = 0; i < 4; i++) {
		snprintf(pat, sizeof(pat), "\"state\": \"%s\"", states[i]);
		if (strstr(line, pat))
			s->state = i;
	}
	if (s->state > STEPTIME_STEP_ENDED)
		return false;
	if (in_u64(line, "ns_pid", &v))
		s->ns_tgid = (__u32)v;
	if (in_u64(line, "pidns_ino", &v))
		s->pidns_ino = (__u32)v;
	s->stream = in_u64(line, "stream", &v) ? (__u32)v : STEPTIME_STREAM_NONE;
	in_u64(line, "host_start_ns", &s->host_start_ns);
	in_u64(line, "host_end_ns", &s->host_end_ns);
	in_u64(line, "gap_ns", &s->gap_ns);
	in_u64(line, "dev_start_ticks", &s->dev_start_ticks);
	in_u64(line, "dev_end_ticks", &s->dev_end_ticks);
	in_u64(line, "device_time_ns", &s->device_time_ns);
	in_u64(line, "tasks", &s->tasks);
	in_u64(line, "completions", &s->completions);
	in_u64(line, "reported", &s->reported);
	in_u64(line, "errors", &s->errors);
	in_u64(line, "submit_ioctls", &s->submit_ioctls);
	in_u64(line, "submit_ioctl_ns", &s->submit_ioctl_ns);
	in_u64(line, "first_submit_ns", &s->first_submit_ns);
	in_u64(line, "last_submit_ns", &s->last_submit_ns);
	in_u64(line, "last_complete_ns", &s->last_complete_ns);
	return true;
}

static int in_cmp(const void *a, const void *b)
{
	const struct in_rec *x = a, *y = b;

	if (x->s.tgid != y->s.tgid)
		return x->s.tgid < y->s.tgid ? -1 : 1;
	if (x->s.index_id != y->s.index_id)
		return x->s.index_id < y->s.index_id ? -1 : 1;
	return 0;
}

/*
 * Read `steptime record` output: every finished step, where the map keeps
 * only the last few of each process. Lines that are not records (a torn
 * last line) are counted in *skipped. Return: 0 or -errno.
 */
static int in_read(const char *path, struct snap *snap, char ***rawp,
		   size_t *skipped)
{
	struct in_rec *recs = NULL, *grown;
	size_t n = 0, cap = 0, len = 0, i;
	char *line = NULL, **raw;
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	ssize_t got;

	if (!f)
		return -errno;
	*skipped = 0;
	while ((got = getline(&line, &len, f)) > 0) {
		while (got && (line[got - 1] == '\n' || line[got - 1] == '\r'))
			line[--got] = '\0';
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			grown = realloc(recs, cap * sizeof(*recs));
			if (!grown)
				goto nomem;
			recs = grown;
		}
		if (!in_parse(line, &recs[n].s)) {
			*skipped += got > 0;
			continue;
		}
		recs[n].raw = strdup(line);
		if (!recs[n].raw)
			goto nomem;
		n++;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	qsort(recs, n, sizeof(*recs), in_cmp);
	snap->steps = calloc(n ? n : 1, sizeof(*snap->steps));
	raw = calloc(n + 1, sizeof(*raw));	/* NULL-terminated */
	if (!snap->steps || !raw) {
		free(raw);
		line = NULL;
		f = NULL;
		goto nomem;
	}
	for (i = 0; i < n; i++) {
		snap->steps[i] = recs[i].s;
		raw[i] = recs[i].raw;
	}
	snap->n = n;
	free(recs);
	*rawp = raw;
	return 0;
nomem:
	free(line);
	if (f && f != stdin)
		fclose(f);
	for (i = 0; i < n; i++)
		free(recs[i].raw);
	free(recs);
	free(snap->steps);
	snap->steps = NULL;
	return -ENOMEM;
}

static void trace_usage(FILE *f)
{
	fprintf(f,
		"usage: steptime trace [--output FILE] [-i|--input RECORD] [-p|--pid PID]\n"
		"                      [--rank N] [--job ID] [--device ID] [--last N]\n"
		"                      [--align start|none] [--pin DIR]\n"
		"  The steps in the map (the last 16 of each process), or every step of a\n"
		"  `steptime record` file (-i), as Chrome Trace Event JSON (Perfetto,\n"
		"  chrome://tracing). FILE '-' (default) is stdout. Host time is\n"
		"  CLOCK_MONOTONIC; device spans have exact lengths and are drawn from\n"
		"  their step's host START mark (--align start) or on the device\n"
		"  counter's own axis (--align none). --last N: the last N steps of each\n"
		"  process only (by index id).\n"
		PROC_FILTER_USAGE
		"  Old spelling (it warns; gone in the next release): -o FILE (--output).\n");
}

int cmd_trace(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'O' },
		{ "input", required_argument, NULL, 'i' },
		PROC_FILTER_LONGOPTS,
		{ "align", required_argument, NULL, 'a' },
		{ "last", required_argument, NULL, 'L' },
		{ "pin", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct trace t = { .f = stdout, .align = ALIGN_START };
	const char *file = "-", *pin = NULL, *input = NULL;
	struct steptime_counters cnt;
	char **raw = NULL;
	size_t skipped = 0;
	struct steptime_info info;
	struct snap snap;
	bool have_cnt, werr;
	size_t nsteps;
	struct proc_filter pf = {};
	unsigned long long last = 0;
	int c, err;

	while ((c = getopt_long(argc, argv, "o:i:p:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			cli_deprecated("trace", "-o FILE", "--output FILE");
			/* fall through */
		case 'O':
			file = optarg;
			break;
		case 'i':
			input = optarg;
			break;
		case 'a':
			if (!strcmp(optarg, "start"))
				t.align = ALIGN_START;
			else if (!strcmp(optarg, "none"))
				t.align = ALIGN_NONE;
			else
				return cli_usage_error("trace", "--align: '%s' is not start or none",
						       optarg);
			break;
		case 'L':
			err = cli_opt_ull("trace", "--last", optarg, 1, 1ull << 32, &last);
			if (err)
				return err;
			break;
		case 'P':
			pin = optarg;
			break;
		case 'h':
			trace_usage(stdout);
			return 0;
		default:	/* --pid, --rank, --job, --device; else usage */
			err = proc_filter_opt("trace", c, optarg, &pf);
			if (err)
				return err;
			break;
		}
	}
	if (optind != argc)
		return cli_usage_error("trace", "unexpected argument '%s'", argv[optind]);
	/* A record's processes may be gone, their pids another's. */
	if (input && proc_filter_labels(&pf))
		return cli_usage_error("trace", "--rank, --job, --device: not with -i (a record holds no labels; -p|--pid is)");
	pin = steptime__pin_dir(pin);
	if (input) {
		memset(&snap, 0, sizeof(snap));
		err = in_read(input, &snap, &raw, &skipped);
		if (err) {
			fprintf(stderr, "steptime trace: %s: %s\n", input, strerror(-err));
			return 1;
		}
		if (skipped)
			fprintf(stderr, "steptime trace: %s: %zu lines are not step "
				"records (skipped)\n", input, skipped);
	} else {
		err = snap_read(pin, &snap);
		if (err)
			return cli_open_error("trace", pin, -err);
	}
	if (pf.pid || proc_filter_labels(&pf)) {
		size_t i, n = 0;
		__u32 tgid = 0;
		bool in = false;

		for (i = 0; i < snap.n; i++) {
			/* Sorted by process: its labels read once. */
			if (!i || snap.steps[i].tgid != tgid) {
				tgid = snap.steps[i].tgid;
				in = proc_filter_match(&pf, tgid,
						       snap.steps[i].ns_tgid, NULL);
			}
			if (!in)
				continue;
			if (raw) {
				char *keep = raw[i];

				raw[i] = raw[n];
				raw[n] = keep;
			}
			snap.steps[n++] = snap.steps[i];
		}
		snap.n = n;
	}
	if (last)
		snap_keep_last(&snap, raw, last);
	have_cnt = !steptime__read_counters(pin, &cnt);
	if (!steptime__read_info(pin, &info))
		t.freq_hz = info.counter_freq_hz;
	if (strcmp(file, "-")) {
		t.f = fopen(file, "w");
		if (!t.f) {
			fprintf(stderr, "steptime trace: %s: %s\n", file, strerror(errno));
			snap_free(&snap);
			return 1;
		}
	}
	err = trace_write(&t, &snap, raw, &cnt, have_cnt);
	if (t.f != stdout && fclose(t.f) && !err)
		err = -errno;
	/* trace_write() fails only writing, or for want of memory. */
	werr = err && err != -ENOMEM;
	nsteps = snap.n;
	if (raw) {
		/* All lines: those -p filtered out were swapped past snap.n. */
		for (c = 0; raw[c]; c++)
			free(raw[c]);
		free(raw);
	}
	snap_free(&snap);
	if (err) {
		if (!strcmp(file, "-"))
			fprintf(stderr, "steptime trace: %s%s\n",
				werr ? "write error: " : "", strerror(-err));
		else
			fprintf(stderr, "steptime trace: %s: %s%s\n", file,
				werr ? "write error: " : "", strerror(-err));
		return 1;
	}
	if (t.f != stdout)
		fprintf(stderr, "steptime trace: %zu steps, %zu events in %s\n",
			nsteps, t.events, file);
	return 0;
}
