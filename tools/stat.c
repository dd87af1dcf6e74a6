// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime stat | record: per-step statistics from the pinned maps. The
 * formatting is libsteptime's (steptime_stats__*), tested on its own; this
 * file only parses options and moves records to a stream.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <steptime/steptime.h>
#include "cmds.h"

static const char *pin_or_default(const char *pin)
{
	const char *env = getenv("STEPTIME_PIN_DIR");

	if (pin)
		return pin;
	return env && *env ? env : STEPTIME_PIN_DIR;
}

/* One message for the two failures users hit: not loaded, not allowed. */
static int open_error(const char *what, const char *pin, int err)
{
	if (err == ENOENT || err == ENODEV)
		fprintf(stderr, "steptime %s: steptime is not loaded (nothing "
			"pinned under %s): run `steptime load` first\n", what,
			pin);
	else if (err == EACCES || err == EPERM)
		fprintf(stderr, "steptime %s: no permission to read the maps "
			"under %s: run as root, or load with `steptime load "
			"--mode 0644` (or --group)\n", what, pin);
	else
		fprintf(stderr, "steptime %s: cannot open the maps under %s: "
			"%s\n", what, pin, strerror(err));
	return 1;
}

static int parse_count(const char *s, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return !*s || *end || errno || *s == '-' ? -EINVAL : 0;
}

static void stat_usage(FILE *f)
{
	fprintf(f,
		"usage: steptime stat [-p PID] [--last N] [-o table|csv|json] [--pin DIR]\n"
		"  One line per step, in step order. PID matches the kernel pid or the pid\n"
		"  inside the process's container. Times in microseconds (table, csv) or\n"
		"  nanoseconds (json); host times are CLOCK_MONOTONIC. Under each step\n"
		"  (table; key \"phases\" in json), its phases: the ranges and marks the\n"
		"  app made inside it (msproftx, mstx, steptime ranges).\n");
}

/*
 * The output of `stat`: 50-60 MB of JSON for 100,000 steps, formatted
 * straight into a buffer of its own and written in 1 MiB pieces (stdout
 * is unbuffered: stdio's copy of every byte and its per-call locking cost
 * as much as the formatting).
 */
#define OUT_BUF		(1 << 20)
#define OUT_LINE	4096	/* room for one record, or one phase */

struct out {
	FILE *f;
	char *buf;
	size_t len;
	int err;
};

static void out_flush(struct out *o)
{
	if (o->len && !o->err && fwrite(o->buf, 1, o->len, o->f) != o->len)
		o->err = -EIO;
	o->len = 0;
}

/* Where the next @n bytes (at most OUT_LINE) go. */
static char *out_room(struct out *o, size_t n)
{
	if (OUT_BUF - o->len < n)
		out_flush(o);
	return o->buf + o->len;
}

static void out_puts(struct out *o, const char *s)
{
	size_t n = strlen(s);

	memcpy(out_room(o, n), s, n);
	o->len += n;
}

__attribute__((format(printf, 2, 3)))
static void out_printf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out_room(o, OUT_LINE), OUT_LINE, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= OUT_LINE)
		o->err = -EOVERFLOW;
	else
		o->len += (size_t)n;
}

static void json_str(struct out *o, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	char *p = out_room(o, 6 * STEPTIME_PHASE_NAME + 2), *start = p;
	size_t i;

	*p++ = '"';
	for (i = 0; i < STEPTIME_PHASE_NAME && str[i]; i++) {
		unsigned char c = (unsigned char)str[i];

		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c < 0x20) {
			memcpy(p, "\\u00", 4);
			p[4] = hex[c >> 4];
			p[5] = hex[c & 0xf];
			p += 6;
		} else {
			*p++ = (char)c;
		}
	}
	*p++ = '"';
	o->len += (size_t)(p - start);
}

/* The step's record, formatted by libsteptime in place. Return: its length. */
static int record_put(struct out *o, enum steptime_fmt fmt,
		      const struct steptime_step_stats *s)
{
	int len = steptime_stats__snprintf(out_room(o, OUT_LINE), OUT_LINE,
					   fmt, s);

	if (len < 2 || len >= OUT_LINE)
		return -EINVAL;
	o->len += (size_t)len;
	return len;
}

/*
 * The step's phases (ranges and marks the app made inside it, read from
 * its process's phase file): JSON objects under "phases", or one indented
 * line each under the step in the table. The CSV keeps msprof's columns.
 */
static int step_print(struct out *o, enum steptime_fmt fmt,
		      const struct steptime_step_stats *s)
{
	struct steptime_phase ph[STEPTIME_PHASES_MAX];
	int n, i, len;

	n = steptime_phases__get(s, ph, STEPTIME_PHASES_MAX);
	if (n > STEPTIME_PHASES_MAX)
		n = STEPTIME_PHASES_MAX;
	len = record_put(o, fmt, s);
	if (len < 0)
		return len;
	if (fmt != STEPTIME_FMT_JSON) {
		for (i = 0; fmt == STEPTIME_FMT_TABLE && i < n; i++) {
			out_printf(o, "    phase %-24s %6llu x %12.3f us host",
				   ph[i].name, (unsigned long long)ph[i].count,
				   ph[i].host_ns / 1e3);
			if (ph[i].device_count)
				out_printf(o, " %12.3f us device (%llu)",
					   ph[i].device_ns / 1e3,
					   (unsigned long long)ph[i].device_count);
			out_puts(o, "\n");
		}
		return 0;
	}
	/* Without the object's closing brace. */
	o->len--;
	out_puts(o, ", \"phases\": [");
	for (i = 0; i < n; i++) {
		out_puts(o, i ? ", {\"name\": " : "{\"name\": ");
		json_str(o, ph[i].name);
		if (ph[i].device_count)
			out_printf(o, ", \"count\": %llu, \"host_ns\": %llu, "
				   "\"device_ns\": %llu, \"device_count\": %llu}",
				   (unsigned long long)ph[i].count,
				   (unsigned long long)ph[i].host_ns,
				   (unsigned long long)ph[i].device_ns,
				   (unsigned long long)ph[i].device_count);
		else
			out_printf(o, ", \"count\": %llu, \"host_ns\": %llu, "
				   "\"device_ns\": null, \"device_count\": 0}",
				   (unsigned long long)ph[i].count,
				   (unsigned long long)ph[i].host_ns);
	}
	out_puts(o, "]}");
	return 0;
}

/* Write the steps of @r to @f in @fmt. Return: 0 or -errno. */
static int stat_print(FILE *f, struct steptime_reader *r, enum steptime_fmt fmt)
{
	struct out o = { .f = f, .buf = malloc(OUT_BUF) };
	struct steptime_step_stats s;
	int n = 0, err;

	if (!o.buf)
		return -ENOMEM;
	err = steptime_stats__snprintf_header(out_room(&o, OUT_LINE), OUT_LINE,
					      fmt);
	if (err < 0 || err >= OUT_LINE) {
		free(o.buf);
		return -EINVAL;
	}
	o.len += (size_t)err;
	err = 0;
	if (fmt == STEPTIME_FMT_JSON)
		out_puts(&o, "[");
	while (!steptime_reader__next(r, &s)) {
		if (fmt == STEPTIME_FMT_JSON)
			out_puts(&o, n ? ",\n  " : "\n  ");
		err = step_print(&o, fmt, &s);
		if (err)
			break;
		n++;
	}
	if (!err && fmt == STEPTIME_FMT_JSON)
		out_puts(&o, n ? "\n]\n" : "]\n");
	out_flush(&o);		/* what was formatted, even after an error */
	free(o.buf);
	if (err)
		return err;
	return o.err ? o.err : fflush(f) || ferror(f) ? -EIO : 0;
}

int cmd_stat(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "last", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "pin", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct steptime_reader_opts ro = { .sz = sizeof(ro) };
	enum steptime_fmt fmt = STEPTIME_FMT_TABLE;
	struct steptime_reader *r;
	unsigned long long v;
	int c, err;

	while ((c = getopt_long(argc, argv, "p:n:o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_count(optarg, &v) || !v || v > 0x7fffffff)
				goto bad;
			ro.pid = (int)v;
			break;
		case 'n':
			if (parse_count(optarg, &v) || !v)
				goto bad;
			ro.last = (size_t)v;
			break;
		case 'o':
			err = steptime_fmt__parse(optarg);
			if (err < 0)
				goto bad;
			fmt = (enum steptime_fmt)err;
			break;
		case 'P':
			ro.pin_dir = optarg;
			break;
		case 'h':
			stat_usage(stdout);
			return 0;
		default:
			stat_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		stat_usage(stderr);
		return 2;
	}
	r = steptime_reader__open(&ro);
	if (!r)
		return open_error("stat", pin_or_default(ro.pin_dir), errno);
	/* stat_print() writes in large pieces of its own. */
	setvbuf(stdout, NULL, _IONBF, 0);
	err = stat_print(stdout, r, fmt);
	steptime_reader__free(r);
	if (err) {
		fprintf(stderr, "steptime stat: %s\n", strerror(-err));
		return 1;
	}
	return 0;
bad:
	fprintf(stderr, "steptime stat: bad value for --%s: '%s'\n",
		c == 'p' ? "pid" : c == 'n' ? "last" : "output", optarg);
	stat_usage(stderr);
	return 2;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

struct record {
	FILE *out;
	int pid;
	unsigned long long count, max;
	int err;
};

static int record_one(void *ctx, void *data, size_t size)
{
	const struct steptime_step_stats *s = data;
	struct record *rec = ctx;

	if (size < sizeof(*s))
		return 0;
	if (rec->pid && s->tgid != (__u32)rec->pid &&
	    s->ns_tgid != (__u32)rec->pid)
		return 0;
	rec->err = steptime_stats__fprint(rec->out, STEPTIME_FMT_JSON, s);
	if (!rec->err && (fputc('\n', rec->out) == EOF ||
			  fflush(rec->out) == EOF))
		rec->err = -EIO;
	if (rec->err)
		return rec->err;
	rec->count++;
	/* A negative return stops ring_buffer__poll(). */
	return rec->max && rec->count >= rec->max ? -EINTR : 0;
}

static void record_usage(FILE *f)
{
	fprintf(f,
		"usage: steptime record [-o FILE] [-p PID] [--duration SEC] [--count N] [--pin DIR]\n"
		"  Streams each finished step (done or incomplete) as a JSON line, the\n"
		"  keys of `steptime stat -o json`, until SIGINT/SIGTERM, --duration\n"
		"  seconds or --count steps. FILE '-' (default) is stdout.\n");
}

static __u64 mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

static int record_loop(struct ring_buffer *rb, struct record *rec,
		       unsigned long long duration_s)
{
	__u64 end = duration_s ? mono_ms() + duration_s * 1000 : 0;
	int err = 0;

	while (!stop && (!rec->max || rec->count < rec->max)) {
		if (end && mono_ms() >= end)
			break;
		err = ring_buffer__poll(rb, 100);
		if (err == -EINTR) {
			err = rec->err;
			continue;
		}
		if (err < 0)
			break;
		err = 0;
	}
	return err;
}

int cmd_record(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'c' },
		{ "pin", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	LIBBPF_OPTS(bpf_obj_get_opts, go);
	struct record rec = { .out = stdout };
	unsigned long long v, duration = 0;
	const char *file = "-", *pin = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	struct ring_buffer *rb;
	char path[4096];
	int c, fd, err;

	while ((c = getopt_long(argc, argv, "o:p:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			file = optarg;
			break;
		case 'p':
			if (parse_count(optarg, &v) || !v || v > 0x7fffffff)
				goto bad;
			rec.pid = (int)v;
			break;
		case 'd':
			if (parse_count(optarg, &duration) || !duration)
				goto bad;
			break;
		case 'c':
			if (parse_count(optarg, &rec.max) || !rec.max)
				goto bad;
			break;
		case 'P':
			pin = optarg;
			break;
		case 'h':
			record_usage(stdout);
			return 0;
		default:
			record_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		record_usage(stderr);
		return 2;
	}
	pin = pin_or_default(pin);
	snprintf(path, sizeof(path), "%s/events", pin);
	/* The consumer position is written through a mapping: read-write. */
	fd = bpf_obj_get_opts(path, &go);
	if (fd < 0)
		return open_error("record", pin, errno);
	rb = ring_buffer__new(fd, record_one, &rec, NULL);
	if (!rb) {
		err = errno;
		close(fd);
		return open_error("record", pin, err);
	}
	if (strcmp(file, "-")) {
		rec.out = fopen(file, "w");
		if (!rec.out) {
			fprintf(stderr, "steptime record: %s: %s\n", file,
				strerror(errno));
			ring_buffer__free(rb);
			close(fd);
			return 1;
		}
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = record_loop(rb, &rec, duration);
	ring_buffer__free(rb);
	close(fd);
	if (rec.out != stdout && fclose(rec.out) && !err)
		err = -errno;
	if (err) {
		fprintf(stderr, "steptime record: %s\n", strerror(-err));
		return 1;
	}
	fprintf(stderr, "steptime record: %llu steps\n", rec.count);
	return 0;
bad:
	fprintf(stderr, "steptime record: bad value for --%s: '%s'\n",
		c == 'p' ? "pid" : c == 'd' ? "duration" : "count", optarg);
	record_usage(stderr);
	return 2;
}
