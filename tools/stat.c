// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime stat | record: per-step statistics from the pinned maps. The
 * formatting is libsteptime's (steptime_stats__*), tested on its own; this
 * file only parses options and moves records to a stream.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <steptime/steptime.h>
#include <steptime/util.h>
#include "cmds.h"
#include "cli.h"
#include "snapshot.h"
#include "../lib/st_stat.h"

static void stat_usage(FILE *f)
{
	fprintf(f,
		"usage: steptime stat [-p|--pid PID] [--rank N] [--job ID] [--device ID]\n"
		"                     [--last N] [-o|--format table|csv|json] [--pin DIR]\n"
		"  One line per step, in step order. Times in microseconds (table, csv) or\n"
		"  nanoseconds (json); host times are CLOCK_MONOTONIC. Under each step\n"
		"  (table; key \"phases\" in json), its phases: the ranges and marks the\n"
		"  app made inside it (msproftx, mstx, steptime ranges).\n"
		PROC_FILTER_USAGE
		"  Old spellings (they warn; gone in the next release): --output FORMAT\n"
		"  (-o|--format), -n N (--last).\n");
}

/*
 * The output of `stat`: 50-60 MB of JSON for 100,000 steps, formatted
 * straight into buffers of its own and written to stdout's fd (stdio's
 * copy of every byte and its per-call locking cost as much as the
 * formatting).
 * The text of a step (its record, then its phases) is the library's
 * (steptime_stats__snprintf(), st_phases_snprintf()), written from the
 * reader's snapshot in place.
 *
 * The steps, in order, are cut in slots of SLOT_STEPS. With a second CPU,
 * two threads format the slots, each taking the next one free, and the
 * main one writes them in order; a ring of RING slot buffers (reused: no
 * page is faulted twice) bounds how far ahead of the writes they run.
 * The header is the start of the first slot and the JSON tail the end of
 * the last one: an output of one slot is one write(), so that a reader
 * that stops at the header (`| grep -q ^PID`, `| head -1`) does not kill
 * the command with SIGPIPE on a second one.
 */
#define OUT_LINE	4096				/* one record */
#define STEP_TEXT	(4 + OUT_LINE + ST_PHASES_TEXT)	/* and its phases */
#define JSON_SEP	",\n  "		/* before each JSON record */
#define SLOT_STEPS	256
#define SLOT_BUF	(512ul << 10)	/* grown when a slot needs more */
#define RING		16
#define PREFETCH_AHEAD	8
#define GROUP		64	/* steps whose phases are looked up at once */

/* A formatting thread's steps of one group and their phases. */
struct group {
	const struct steptime_step_stats *s[GROUP];
	struct steptime_phase ph[GROUP][STEPTIME_PHASES_PER_STEP];
	int n[GROUP];
};

struct slot {
	char *buf;
	size_t len, cap;
	size_t id;		/* under printer.lock: the slot it holds, done */
	int err;		/* formatting stopped here: @len is what came before */
};

struct printer {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct steptime_reader *r;
	const size_t *idx;	/* NULL: every step of @r, else these */
	enum steptime_fmt fmt;
	size_t steps, slots;	/* steps in order; slots of SLOT_STEPS */
	size_t written;		/* under @lock: slots written */
	size_t next;		/* under @lock: slots claimed to format */
	bool quit;		/* under @lock: the thread stops */
	int fd;
	const char *head, *tail;	/* before slot 0, after the last */
	size_t head_len, tail_len;
	struct slot ring[RING];
	struct group *group[2];		/* this thread's, the other's */
};

/* The @i-th step to print. */
static const struct steptime_step_stats *printer_step(const struct printer *p,
						       size_t i)
{
	return st_reader_step(p->r, p->idx ? p->idx[i] : i);
}

/*
 * A step's text, with its phases @ph[0, @n) (@n as steptime_phases__get()
 * returns), at @buf (STEP_TEXT bytes of room): in JSON, JSON_SEP first.
 * Return: its length or -errno.
 */
static int step_text(char *buf, enum steptime_fmt fmt,
		     const struct steptime_step_stats *s,
		     const struct steptime_phase *ph, int n)
{
	int len = 0, more;

	if (n > STEPTIME_PHASES_PER_STEP)
		n = STEPTIME_PHASES_PER_STEP;
	if (fmt == STEPTIME_FMT_JSON) {
		memcpy(buf, JSON_SEP, 4);
		len = 4;
	}
	more = steptime_stats__snprintf(buf + len, OUT_LINE, fmt, s);
	if (more < 2 || more >= OUT_LINE)
		return -EINVAL;
	len += more;
	/* The phases go inside the JSON object: before its closing brace. */
	if (fmt == STEPTIME_FMT_JSON)
		len--;
	more = st_phases_snprintf(buf + len, ST_PHASES_TEXT, fmt, ph,
				  n < 0 ? 0 : n);
	if (more < 0 || more >= ST_PHASES_TEXT)
		return -EINVAL;
	return len + more;
}

/* Return: 0, or -errno as soon as a write fails. */
static int write_all(int fd, const char *p, size_t len)
{
	ssize_t w;

	while (len) {
		w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Room for @n more bytes in @s. Return: 0 or -ENOMEM. */
static int slot_room(struct slot *s, size_t n)
{
	size_t cap = s->cap ? s->cap : SLOT_BUF;
	char *grown;

	if (s->cap - s->len >= n)
		return 0;
	while (cap - s->len < n)
		cap *= 2;
	grown = realloc(s->buf, cap);
	if (!grown)
		return -ENOMEM;
	s->buf = grown;
	s->cap = cap;
	return 0;
}

/* Append @len bytes of @text to @s. Return: 0 or -ENOMEM. */
static int slot_put(struct slot *s, const char *text, size_t len)
{
	int err = slot_room(s, len);

	if (err)
		return err;
	memcpy(s->buf + s->len, text, len);
	s->len += len;
	return 0;
}

/*
 * The text of slot @j into its ring buffer, with @g: the header first in
 * slot 0, the tail last in the last slot. Return: 0 or -errno.
 */
static int slot_fill(struct printer *p, size_t j, struct group *g)
{
	struct slot *s = &p->ring[j % RING];
	size_t i = j * SLOT_STEPS, end = i + SLOT_STEPS, k, first = i;
	const char *ahead;
	int len, err;

	if (end > p->steps)
		end = p->steps;
	s->len = 0;
	if (!j) {
		err = slot_put(s, p->head, p->head_len);
		if (err)
			return err;
	}
	for (; i < end; i++) {
		k = (i - first) % GROUP;
		if (!k) {
			size_t m = end - i < GROUP ? end - i : GROUP, x;

			/* Scattered records: their keys fetched ahead, at once. */
			for (x = 0; x < m; x++) {
				g->s[x] = printer_step(p, i + x);
				__builtin_prefetch(g->s[x]);
			}
			st_phases_get_many(g->s, m, g->ph, g->n);
		}
		err = slot_room(s, STEP_TEXT);
		if (err)
			return err;
		/* The records are read in time order, scattered: fetch ahead. */
		if (i + PREFETCH_AHEAD < end) {
			ahead = (const char *)printer_step(p, i + PREFETCH_AHEAD);
			for (len = 0; len < (int)sizeof(struct steptime_step_stats);
			     len += 64)
				__builtin_prefetch(ahead + len);
		}
		len = step_text(s->buf + s->len, p->fmt, g->s[k], g->ph[k],
				g->n[k]);
		if (len < 0)
			return len;
		if (!i && p->fmt == STEPTIME_FMT_JSON) {	/* no comma first */
			len--;
			memmove(s->buf + s->len, s->buf + s->len + 1,
				(size_t)len);
		}
		s->len += (size_t)len;
	}
	return j + 1 == p->slots ? slot_put(s, p->tail, p->tail_len) : 0;
}

/* Write slot @j, once formatted. Return: 0 or -errno. */
static int slot_write(struct printer *p, size_t j)
{
	struct slot *s = &p->ring[j % RING];
	int err;

	pthread_mutex_lock(&p->lock);
	while (s->id != j)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
	/* What was formatted, even after an error. */
	err = write_all(p->fd, s->buf, s->len);
	pthread_mutex_lock(&p->lock);
	p->written = j + 1;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return s->err ? s->err : err;
}

static void slot_done(struct printer *p, size_t j, int err)
{
	pthread_mutex_lock(&p->lock);
	p->ring[j % RING].err = err;
	p->ring[j % RING].id = j;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/*
 * The next slot to format, once the ring has room for it (@wait), else
 * (size_t)-1: none left, quitting, or no room and not to wait.
 */
static size_t slot_claim(struct printer *p, bool wait)
{
	size_t j = (size_t)-1;

	pthread_mutex_lock(&p->lock);
	while (wait && !p->quit && p->next < p->slots &&
	       p->next >= p->written + RING)
		pthread_cond_wait(&p->cond, &p->lock);
	if (!p->quit && p->next < p->slots && p->next < p->written + RING)
		j = p->next++;
	pthread_mutex_unlock(&p->lock);
	return j;
}

static bool slot_ready(struct printer *p, size_t j)
{
	bool ready;

	pthread_mutex_lock(&p->lock);
	ready = p->ring[j % RING].id == j;
	pthread_mutex_unlock(&p->lock);
	return ready;
}

static void *slot_thread(void *arg)
{
	struct printer *p = arg;
	size_t j;

	while ((j = slot_claim(p, true)) != (size_t)-1)
		slot_done(p, j, slot_fill(p, j, p->group[1]));
	return NULL;
}

/*
 * Two threads are worth it with a second CPU to run the other, and a
 * second slot to give it. STEPTIME_STAT_THREADS=0 or 1 decides instead
 * (tests).
 */
static bool use_thread(size_t slots)
{
	const char *env = getenv("STEPTIME_STAT_THREADS");
	cpu_set_t cpus;

	if (env && *env)
		return *env != '0';
	if (slots < 2 || sched_getaffinity(0, sizeof(cpus), &cpus))
		return false;
	return CPU_COUNT(&cpus) > 1;
}

/*
 * Write the steps of @r to @fd in @fmt, or only the @n at @idx (NULL: all).
 * Return: 0 or -errno.
 */
static int stat_print(int fd, struct steptime_reader *r, const size_t *idx,
		      size_t n_idx, enum steptime_fmt fmt)
{
	struct printer p = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
		.r = r, .idx = idx, .fmt = fmt, .fd = fd,
		.steps = idx ? n_idx : steptime_reader__count(r),
	};
	bool threaded;
	pthread_t thread;
	char head[OUT_LINE];
	size_t j, i;
	int err, n;

	p.slots = (p.steps + SLOT_STEPS - 1) / SLOT_STEPS;
	for (i = 0; i < RING; i++) {
		p.ring[i].id = (size_t)-1;
		/* Here, not in the thread: one malloc arena, no new heap. */
		p.ring[i].buf = i < p.slots ? malloc(SLOT_BUF) : NULL;
		p.ring[i].cap = p.ring[i].buf ? SLOT_BUF : 0;
	}
	n = steptime_stats__snprintf_header(head, sizeof(head) - 1, fmt);
	if (n < 0 || n >= OUT_LINE - 2)
		return -EINVAL;
	if (fmt == STEPTIME_FMT_JSON)
		head[n++] = '[';
	p.head = head;
	p.head_len = (size_t)n;
	p.tail = fmt != STEPTIME_FMT_JSON ? "" : p.steps ? "\n]\n" : "]\n";
	p.tail_len = strlen(p.tail);
	p.group[0] = malloc(sizeof(struct group));
	p.group[1] = use_thread(p.slots) ? malloc(sizeof(struct group)) : NULL;
	err = p.group[0] ? 0 : -ENOMEM;
	/* No step: no slot, the header and tail at once. */
	if (!err && !p.slots) {
		memcpy(head + n, p.tail, p.tail_len);
		err = write_all(fd, head, p.head_len + p.tail_len);
	}
	threaded = !err && p.group[1] &&
		   !pthread_create(&thread, NULL, slot_thread, &p);
	/*
	 * Slots are formatted by whichever thread runs, so that one the
	 * scheduler leaves out for a while holds up a slot, not the ring;
	 * this one writes each slot as soon as it and those before it are
	 * done. p.written is only written here.
	 */
	while (!err && p.written < p.slots) {
		if (!slot_ready(&p, p.written) &&
		    (j = slot_claim(&p, false)) != (size_t)-1)
			slot_done(&p, j, slot_fill(&p, j, p.group[0]));
		else
			err = slot_write(&p, p.written);
	}
	if (threaded) {
		pthread_mutex_lock(&p.lock);
		p.quit = true;
		pthread_cond_broadcast(&p.cond);
		pthread_mutex_unlock(&p.lock);
		pthread_join(thread, NULL);
	}
	for (i = 0; i < RING; i++)
		free(p.ring[i].buf);
	free(p.group[0]);
	free(p.group[1]);
	return err;
}

/* Processes already matched against a filter: their labels read once. */
struct seen {
	struct { __u32 tgid; bool in; } *p;
	size_t n, cap;
};

/* Whether @s's process passes @f. Return: 1, 0, or -ENOMEM. */
static int seen_match(struct seen *seen, const struct proc_filter *f,
		      const struct steptime_step_stats *s)
{
	size_t i;
	void *grown;

	for (i = 0; i < seen->n; i++)
		if (seen->p[i].tgid == s->tgid)
			return seen->p[i].in;
	if (seen->n == seen->cap) {
		seen->cap = seen->cap ? 2 * seen->cap : 16;
		grown = realloc(seen->p, seen->cap * sizeof(*seen->p));
		if (!grown)
			return -ENOMEM;
		seen->p = grown;
	}
	seen->p[seen->n].tgid = s->tgid;
	seen->p[seen->n].in = proc_filter_match(f, s->tgid, s->ns_tgid, NULL);
	return seen->p[seen->n++].in;
}

/*
 * The positions in @r of the steps of the processes passing @f, the last
 * @last of them (0: all), into *@idx (malloc'ed) and *@n. Return: 0 or -errno.
 */
static int stat_select(struct steptime_reader *r, const struct proc_filter *f,
		       size_t last, size_t **idx, size_t *n)
{
	size_t i, count = steptime_reader__count(r), k = 0;
	struct seen seen = {};
	int in = 0;

	*idx = malloc((count ? count : 1) * sizeof(**idx));
	if (!*idx)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		in = seen_match(&seen, f, st_reader_step(r, i));
		if (in < 0)
			break;
		if (in)
			(*idx)[k++] = i;
	}
	free(seen.p);
	if (in < 0) {
		free(*idx);
		return in;
	}
	if (last && last < k) {
		memmove(*idx, *idx + k - last, last * sizeof(**idx));
		k = last;
	}
	*n = k;
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	static const struct option lo[] = {
		PROC_FILTER_LONGOPTS,
		{ "last", required_argument, NULL, 'L' },
		{ "format", required_argument, NULL, 'o' },
		{ "output", required_argument, NULL, 'O' },	/* old --format */
		{ "pin", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct steptime_reader_opts ro = { .sz = sizeof(ro) };
	enum steptime_fmt fmt = STEPTIME_FMT_TABLE;
	struct proc_filter pf = {};
	struct steptime_reader *r;
	unsigned long long v;
	size_t *idx = NULL, n_idx = 0, last;
	bool labels;
	int c, err;

	while ((c = getopt_long(argc, argv, "p:n:o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			cli_deprecated("stat", "-n", "--last");
			/* fall through */
		case 'L':
			err = cli_opt_ull("stat", "--last", optarg, 1, SIZE_MAX, &v);
			if (err)
				return err;
			ro.last = (size_t)v;
			break;
		case 'O':
			cli_deprecated("stat", "--output FORMAT", "-o|--format");
			/* fall through */
		case 'o':
			err = steptime_fmt__parse(optarg);
			if (err < 0)
				return cli_usage_error("stat", "--format: '%s' is not table, csv or json",
						       optarg);
			fmt = (enum steptime_fmt)err;
			break;
		case 'P':
			ro.pin_dir = optarg;
			break;
		case 'h':
			stat_usage(stdout);
			return 0;
		default:	/* --pid, --rank, --job, --device; else usage */
			err = proc_filter_opt("stat", c, optarg, &pf);
			if (err)
				return err;
			break;
		}
	}
	if (optind != argc)
		return cli_usage_error("stat", "unexpected argument '%s'", argv[optind]);
	ro.pin_dir = steptime__pin_dir(ro.pin_dir);
	ro.pid = (int)pf.pid;
	/* Labels are the processes': --last counts the steps that pass. */
	labels = proc_filter_labels(&pf);
	last = ro.last;
	if (labels)
		ro.last = 0;
	r = steptime_reader__open(&ro);
	if (!r)
		return cli_open_error("stat", ro.pin_dir, errno);
	err = labels ? stat_select(r, &pf, last, &idx, &n_idx) : 0;
	fflush(stdout);		/* stat_print() writes to its fd */
	if (!err)
		err = stat_print(STDOUT_FILENO, r, idx, n_idx, fmt);
	free(idx);
	steptime_reader__free(r);
	if (err) {
		/* Else than memory and the format, stat_print() fails writing. */
		fprintf(stderr, "steptime stat: %s%s\n",
			err == -ENOMEM || err == -EINVAL ? "" : "write error: ",
			strerror(-err));
		return 1;
	}
	return 0;
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
	unsigned long long skipped;	/* queued before the start */
	bool skipping;			/* draining that backlog */
	__u64 start_ns;			/* CLOCK_MONOTONIC at the start */
	bool write_err;			/* err is the output's */
	int err;
};

/* When a step finished, as far as its record says (CLOCK_MONOTONIC). */
static __u64 step_finish_ns(const struct steptime_step_stats *s)
{
	__u64 t = s->last_complete_ns;

	if ((s->flags & STEPTIME_F_HOST_END) && s->host_end_ns > t)
		t = s->host_end_ns;
	return t;
}

static int record_one(void *ctx, void *data, size_t size)
{
	const struct steptime_step_stats *s = data;
	struct record *rec = ctx;

	if (size < sizeof(*s))
		return 0;
	/*
	 * The backlog is what finished before the start: a step that finished
	 * since, while the backlog was drained, is printed.
	 */
	if (rec->skipping && step_finish_ns(s) < rec->start_ns) {
		rec->skipped++;
		return 0;
	}
	if (rec->pid && s->tgid != (__u32)rec->pid &&
	    s->ns_tgid != (__u32)rec->pid)
		return 0;
	rec->err = steptime_stats__fprint(rec->out, STEPTIME_FMT_JSON, s);
	if (!rec->err && fputc('\n', rec->out) == EOF)
		rec->err = -EIO;
	if (!rec->err || rec->err == -EIO)
		rec->err = cli_out_error(rec->out);
	if (rec->err) {
		rec->write_err = true;
		return rec->err;
	}
	rec->count++;
	/* A negative return stops ring_buffer__poll(). */
	return rec->max && rec->count >= rec->max ? -EINTR : 0;
}

/*
 * Taking steps off the ring buffer writes its consumer position: without
 * write access to "events" (--mode grants read access only), root is the
 * fix, not a --mode.
 */
static int record_open_error(const char *pin, int err)
{
	if (err != EACCES && err != EPERM)
		return cli_open_error("record", pin, err);
	fprintf(stderr, "steptime record: no write access to %s/events: record "
		"consumes the ring buffer of finished steps, which only root "
		"may (--mode and --group grant read access only): run as root\n",
		pin);
	return 1;
}

static void record_usage(FILE *f)
{
	fprintf(f,
		"usage: steptime record [--output FILE] [-p|--pid PID] [--duration DURATION]\n"
		"                       [-n|--count N] [--backlog] [--pin DIR]\n"
		"  Streams each step that finishes from its start on (done or incomplete)\n"
		"  as a JSON line, the keys of `steptime stat -o json`, until SIGINT/SIGTERM,\n"
		"  the --duration (a number and its unit: 30s, 5m) or --count steps. FILE\n"
		"  '-' (default) is stdout.\n"
		"  It consumes the one ring buffer of finished steps: run one record at a\n"
		"  time (two split the steps between them). Steps queued there before it\n"
		"  started (finished while no record ran, up to about 900) are consumed\n"
		"  unprinted and counted; --backlog prints them first. Needs root: taking\n"
		"  steps off the ring buffer writes to it, which --mode never grants.\n"
		"  Old spellings (they warn; gone in the next release): -o FILE\n"
		"  (--output), --duration with no unit (seconds).\n");
}

static int record_loop(struct ring_buffer *rb, struct record *rec,
		       unsigned long long duration_ns)
{
	__u64 end = duration_ns ? st_mono_ns() + duration_ns : 0;
	int err = 0;

	while (!stop && (!rec->max || rec->count < rec->max)) {
		if (end && st_mono_ns() >= end)
			break;
		err = ring_buffer__poll(rb, 100);
		/*
		 * The program wakes the reader only when it had caught up: a
		 * step committed while it was still reading waits for the next
		 * wakeup, which may never come. A quiet poll reads it anyway.
		 */
		if (err == 0)
			err = ring_buffer__consume(rb);
		if (err == -EINTR) {
			err = rec->err;
			continue;
		}
		if (err < 0)
			break;
		err = 0;
	}
	/* What finished before the stop. */
	if (!err && (!rec->max || rec->count < rec->max)) {
		err = ring_buffer__consume(rb);
		err = err == -EINTR ? rec->err : err < 0 ? err : 0;
	}
	return err;
}

int cmd_record(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'O' },
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'n' },
		{ "pin", required_argument, NULL, 'P' },
		{ "backlog", no_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	LIBBPF_OPTS(bpf_obj_get_opts, go);
	struct record rec = { .out = stdout };
	unsigned long long v, duration = 0;
	const char *file = "-", *pin = NULL;
	bool backlog = false;
	struct sigaction sa = { .sa_handler = on_signal };
	struct ring_buffer *rb;
	char path[4096];
	int c, fd, err;

	while ((c = getopt_long(argc, argv, "o:p:n:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			cli_deprecated("record", "-o FILE", "--output FILE");
			/* fall through */
		case 'O':
			file = optarg;
			break;
		case 'p':
			err = cli_opt_ull("record", "--pid", optarg, 1, INT_MAX, &v);
			if (err)
				return err;
			rec.pid = (int)v;
			break;
		case 'd':
			err = cli_opt_duration("record", "--duration", NULL, optarg,
					       CLI_S, CLI_MS, UINT_MAX * CLI_S,
					       &duration);
			if (err)
				return err;
			break;
		case 'n':
			err = cli_opt_ull("record", "--count", optarg, 1,
					  ULLONG_MAX, &rec.max);
			if (err)
				return err;
			break;
		case 'P':
			pin = optarg;
			break;
		case 'B':
			backlog = true;
			break;
		case 'h':
			record_usage(stdout);
			return 0;
		default:
			return cli_usage_error("record", NULL);
		}
	}
	if (optind != argc)
		return cli_usage_error("record", "unexpected argument '%s'", argv[optind]);
	pin = steptime__pin_dir(pin);
	rec.start_ns = st_mono_ns();
	snprintf(path, sizeof(path), "%s/events", pin);
	/* The consumer position is written through a mapping: read-write. */
	fd = bpf_obj_get_opts(path, &go);
	if (fd < 0)
		return record_open_error(pin, errno);
	rb = ring_buffer__new(fd, record_one, &rec, NULL);
	if (!rb) {
		err = errno;
		close(fd);
		return record_open_error(pin, err);
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
	/* What finished before now: consumed, counted, not printed. */
	rec.skipping = !backlog;
	err = ring_buffer__consume(rb);
	rec.skipping = false;
	if (err == -EINTR)	/* --count reached */
		err = rec.err;
	if (err >= 0)
		err = record_loop(rb, &rec, duration);
	ring_buffer__free(rb);
	close(fd);
	if (rec.out != stdout && fclose(rec.out) && !err) {
		err = -errno;
		rec.write_err = true;
	}
	if (err) {
		fprintf(stderr, "steptime record: %s%s\n",
			rec.write_err ? "write error: " : "", strerror(-err));
		return 1;
	}
	fprintf(stderr, "steptime record: %llu steps", rec.count);
	if (rec.skipped)
		fprintf(stderr, " (and %llu queued before the start, skipped: --backlog prints them)",
			rec.skipped);
	fputc('\n', stderr);
	return 0;
}
