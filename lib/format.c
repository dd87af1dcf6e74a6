// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Step records as table, CSV and JSON. Pure functions (no I/O but
 * steptime_stats__fprint()), shared by the CLI, aclprofStop() and Python.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <steptime/steptime.h>
#include <steptime/util.h>
#include "st_internal.h"
#include "st_stat.h"

#define NONE	((__u64)-1)	/* a value the record does not have */
#define STEPTIME_MODEL_ID_NONE	0xffffffffu	/* what CANN step marks carry */

/* snprintf into a buffer that counts what it could not hold. */
struct out {
	char *buf;
	size_t len, pos;
};

__attribute__((format(printf, 2, 3)))
static void out_printf(struct out *o, const char *fmt, ...)
{
	size_t room = o->pos < o->len ? o->len - o->pos : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->pos : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

static inline size_t out_room(const struct out *o)
{
	return o->pos < o->len ? o->len - o->pos : 0;
}

/* The hot path of JSON (100,000 records per `stat`): no vsnprintf. */
static inline void out_mem(struct out *o, const char *s, size_t n)
{
	size_t room = out_room(o);

	/* Two branches: a constant @n is copied inline in the first. */
	if (room >= n)
		memcpy(o->buf + o->pos, s, n);
	else if (room)
		memcpy(o->buf + o->pos, s, room);
	o->pos += n;
}

static inline void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

/* How many decimal digits @v has. */
static unsigned int u64_digits(__u64 v)
{
	static const __u64 pow10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
		10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
		100000000000ull, 1000000000000ull, 10000000000000ull,
		100000000000000ull, 1000000000000000ull, 10000000000000000ull,
		100000000000000000ull, 1000000000000000000ull,
		10000000000000000000ull,
	};
	/* floor(log10(2) * bits), then one comparison to correct it. */
	unsigned int t = (unsigned int)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;

	return t + (v >= pow10[t]) + !v;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * The 8 decimal digits of @x (< 10^8) as ASCII, the first in the lowest
 * byte: both halves of 4 digits, then their 4 pairs, then 8 digits, each
 * step in parallel lanes of one 64-bit word (no chain of divisions).
 */
static __u64 dec8(__u32 x)
{
	__u64 v = x / 10000 | (__u64)(x % 10000) << 32;
	__u64 hi = (v * 10486 >> 20) & 0x0000007f0000007full;	/* lane / 100 */
	__u64 pairs = (v - 100 * hi) << 16 | hi;
	__u64 tens = (pairs * 103 >> 10) & 0x000f000f000f000full;	/* / 10 */

	return ((pairs - 10 * tens) << 8 | tens) + 0x3030303030303030ull;
}

/* The low @n (1 to 8) bytes of @d at @dst, and no byte after them. */
static void put_low(char *dst, __u64 d, unsigned int n)
{
	__u32 w;

	if (n >= 4) {
		w = (__u32)d;
		memcpy(dst, &w, 4);
		w = (__u32)(d >> (8 * (n - 4)));
		memcpy(dst + n - 4, &w, 4);
		return;
	}
	dst[0] = (char)d;
	if (n > 1)
		dst[1] = (char)(d >> 8);
	if (n > 2)
		dst[2] = (char)(d >> 16);
}

/* The @n digits of @v (u64_digits()) at @dst[0, n). */
static void u64_dec(char *dst, __u64 v, unsigned int n)
{
	__u64 lo, mid;

	if (n <= 8) {
		put_low(dst, dec8((__u32)v) >> (8 * (8 - n)), n);
		return;
	}
	lo = dec8((__u32)(v % 100000000));
	v /= 100000000;
	memcpy(dst + n - 8, &lo, 8);
	if (n <= 16) {
		put_low(dst, dec8((__u32)v) >> (8 * (16 - n)), n - 8);
		return;
	}
	mid = dec8((__u32)(v % 100000000));
	memcpy(dst + n - 16, &mid, 8);
	put_low(dst, dec8((__u32)(v / 100000000)) >> (8 * (24 - n)), n - 16);
}
#else
static void u64_dec(char *dst, __u64 v, unsigned int n)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char *end = dst + n;

	while (v >= 100) {
		end -= 2;
		memcpy(end, pairs + v % 100 * 2, 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(end - 2, pairs + v * 2, 2);
	else
		end[-1] = (char)('0' + v);
}
#endif

static void out_u64(struct out *o, __u64 v)
{
	unsigned int n;
	char d[20];

	if (v < 10 && out_room(o)) {	/* flags, counts, errors: often */
		o->buf[o->pos++] = (char)('0' + v);
		return;
	}
	n = u64_digits(v);
	if (out_room(o) >= n) {
		u64_dec(o->buf + o->pos, v, n);
		o->pos += n;
		return;
	}
	u64_dec(d, v, n);
	out_mem(o, d, n);
}

static int out_done(struct out *o)
{
	if (o->len)
		o->buf[o->pos < o->len ? o->pos : o->len - 1] = '\0';
	return o->pos > (size_t)0x7fffffff ? -E2BIG : (int)o->pos;
}

const char *steptime_state_str(unsigned int state)
{
	switch (state) {
	case STEPTIME_STEP_OPEN:
		return "open";
	case STEPTIME_STEP_DONE:
		return "done";
	case STEPTIME_STEP_INCOMPLETE:
		return "incomplete";
	case STEPTIME_STEP_ENDED:
		return "ended";
	default:
		return "unknown";
	}
}

int steptime_fmt__parse(const char *name)
{
	if (!name)
		return -EINVAL;
	if (!strcmp(name, "table"))
		return STEPTIME_FMT_TABLE;
	if (!strcmp(name, "csv"))
		return STEPTIME_FMT_CSV;
	if (!strcmp(name, "json"))
		return STEPTIME_FMT_JSON;
	return -EINVAL;
}

/* Percentiles @pct[0..n) (n: 1 or 2) of the latency histogram, in one pass. */
static void lat_pcts(const struct steptime_step_stats *s, const double *pct,
		     __u64 *out, int n)
{
	double total, below = 0, lo, rank[2];
	__u64 sum = 0;
	int i, k;

	/*
	 * 32 counts of 32 bits: their integer sum is exact in a double, as
	 * was every partial sum of the doubles it replaces (3 times faster).
	 */
	_Static_assert(sizeof(s->lat_hist[0]) == 4 && STEPTIME_LAT_BUCKETS <= 1024,
		       "lat_hist sums exactly in a double");
	for (i = 0; i < STEPTIME_LAT_BUCKETS; i++)
		sum += s->lat_hist[i];
	for (k = 0; k < n; k++)
		out[k] = 0;
	if (!sum)
		return;
	total = (double)sum;
	for (k = 0; k < n; k++)
		rank[k] = total * pct[k] / 100.0;
	for (i = 0, k = 0; i < STEPTIME_LAT_BUCKETS && k < n; i++) {
		if (!s->lat_hist[i])
			continue;
		/* Every percentile whose rank falls in this bucket. */
		while (k < n && below + s->lat_hist[i] >= rank[k]) {
			lo = (double)(1ull << i);
			out[k] = (__u64)(lo + lo * (rank[k] - below) / s->lat_hist[i]);
			k++;
		}
		below += s->lat_hist[i];
	}
}

int steptime_stats__host_ns(const struct steptime_step_stats *s, __u64 *ns)
{
	const __u32 both = STEPTIME_F_HOST_START | STEPTIME_F_HOST_END;

	if ((s->flags & both) != both || s->host_end_ns < s->host_start_ns)
		return -ENODATA;
	*ns = s->host_end_ns - s->host_start_ns;
	return 0;
}

int steptime_stats__device_ns(const struct steptime_step_stats *s, __u64 *ns)
{
	const __u32 both = STEPTIME_F_DEV_START | STEPTIME_F_DEV_END;

	if ((s->flags & both) != both)
		return -ENODATA;
	*ns = s->device_time_ns;
	return 0;
}

__u64 steptime_stats__lat_pct(const struct steptime_step_stats *s, double pct)
{
	__u64 v;

	if (!s || !(pct > 0 && pct <= 100))
		return 0;
	lat_pcts(s, &pct, &v, 1);
	return v;
}

/*
 * The derived values every format prints.
 *
 * The CSV's msprof step_trace columns, on one clock per row: the host's
 * CLOCK_MONOTONIC, as the marks are. msprof (Ascend/msprof
 * analysis/mscalculate/step_trace/create_step_table.py, and
 * analysis/csrc/domain/services/persistence/device/trace_persistence.cpp)
 * defines them on the device clock: Iteration Time = step end - step
 * start, FP to BP = BP end - FP start, Iteration Refresh = step end - BP
 * end, Data Aug Bound = FP start - the previous step's end; and for
 * iterations known only from step marks (no forward/backward points, the
 * case of the step API) it writes FP Start, BP End, FP to BP and Refresh
 * as 0. steptime's step is START .. END: FP Start = START, Iteration End =
 * END, Iteration Time = END - START (@iter_time), Data Aug Bound = the
 * host gap before START; it has no backward-pass point either, so BP End,
 * FP to BP and Refresh are 0 as msprof's (@no_fpbp), for a step with both
 * marks, and empty otherwise. The device's own time of the step is in
 * steptime's Device Time column, never mixed into Iteration Time.
 */
struct row {
	__u64 host_start, host_end, host_time, gap, dev_start, dev_end;
	__u64 dev_time, iter_time, no_fpbp;
	__u64 first_submit, last_submit, last_complete, p50, p99;
	__u64 tasks, completions, reported, errors;
};

static void row_fill(struct row *r, const struct steptime_step_stats *s)
{
	static const double pct[2] = { 50, 99 };
	__u64 p[2];
	bool hs = s->flags & STEPTIME_F_HOST_START;
	bool he = s->flags & STEPTIME_F_HOST_END;
	bool uio, per_task;

	r->host_start = hs ? s->host_start_ns : NONE;
	r->host_end = he ? s->host_end_ns : NONE;
	if (steptime_stats__host_ns(s, &r->host_time))
		r->host_time = NONE;
	r->gap = s->flags & STEPTIME_F_GAP ? s->gap_ns : NONE;
	r->dev_start = s->flags & STEPTIME_F_DEV_START ? s->dev_start_ticks : NONE;
	r->dev_end = s->flags & STEPTIME_F_DEV_END ? s->dev_end_ticks : NONE;
	if (steptime_stats__device_ns(s, &r->dev_time))
		r->dev_time = NONE;
	r->iter_time = r->host_time;
	r->no_fpbp = r->host_time != NONE ? 0 : NONE;
	/* F_UIO: tasks the kernel never saw may belong to it (abi.h) */
	uio = s->flags & STEPTIME_F_UIO;
	/* F_JOURNAL: counted per step, its tasks' own figures unmeasured */
	per_task = !uio && !(s->flags & STEPTIME_F_JOURNAL);
	r->tasks = uio ? NONE : s->tasks;
	r->completions = uio ? NONE : s->completions;
	r->reported = per_task ? s->reported : NONE;
	r->errors = per_task ? s->errors : NONE;
	r->first_submit = s->tasks && per_task ? s->first_submit_ns : NONE;
	r->last_submit = s->tasks && per_task ? s->last_submit_ns : NONE;
	r->last_complete = s->completions && !uio ? s->last_complete_ns : NONE;
	lat_pcts(s, pct, p, 2);
	r->p50 = p[0];
	r->p99 = p[1];
	if (!r->p50 || !per_task)
		r->p50 = r->p99 = NONE;
}

/* A count (CSV), or an empty cell. */
static void csv_u64(struct out *o, __u64 v)
{
	out_mem(o, ",", 1);
	if (v != NONE)
		out_u64(o, v);
}

/* Microseconds with 3 decimals (CSV), or an empty cell. */
static void csv_us(struct out *o, __u64 ns)
{
	char frac[4] = { '.', (char)('0' + ns % 1000 / 100),
			 (char)('0' + ns % 100 / 10), (char)('0' + ns % 10) };

	out_mem(o, ",", 1);
	if (ns == NONE)
		return;
	out_u64(o, ns / 1000);
	out_mem(o, frac, 4);
}

/* @n bytes of @s in a column of @width: right-aligned, or @left. */
static void out_cell(struct out *o, const char *s, size_t n, size_t width,
		     bool left)
{
	static const char spaces[] = "                ";	/* 16 */
	size_t pad = width > n ? width - n : 0;

	if (left)
		out_mem(o, s, n);
	for (; pad; pad -= pad < 16 ? pad : 16)
		out_mem(o, spaces, pad < 16 ? pad : 16);
	if (!left)
		out_mem(o, s, n);
}

/* @v in a column of @width. */
static void out_u64_cell(struct out *o, __u64 v, size_t width, bool left)
{
	char d[24];
	struct out c = { d, sizeof(d), 0 };

	out_u64(&c, v);
	out_cell(o, d, c.pos, width, left);
}

/* Microseconds with 1 decimal (table), or "-". */
static void table_us(struct out *o, int width, __u64 ns)
{
	char d[24];
	struct out c = { d, sizeof(d), 0 };

	out_mem(o, " ", 1);
	if (ns == NONE) {
		out_cell(o, "-", 1, (size_t)width, false);
		return;
	}
	out_u64(&c, ns / 1000);
	d[c.pos++] = '.';
	d[c.pos++] = (char)('0' + ns % 1000 / 100);
	out_cell(o, d, c.pos, (size_t)width, false);
}

static inline void json_field(struct out *o, const char *prefix, size_t len, __u64 v)
{
	out_mem(o, prefix, len);
	if (v == NONE)
		out_mem(o, "null", 4);
	else
		out_u64(o, v);
}

/* ', "key": value', the key's length known at compile time. */
#define json_u64(o, key, v) \
	json_field(o, ", \"" key "\": ", sizeof(", \"" key "\": ") - 1, v)

/* The same for a count, which has no NONE: every value is a number. */
#define json_count(o, key, v) do {					\
	out_mem(o, ", \"" key "\": ", sizeof(", \"" key "\": ") - 1);	\
	out_u64(o, v);							\
} while (0)

#define TABLE_HDR \
	"%-8s %-8s %-6s %-10s %12s %12s %7s %10s %10s %10s %10s\n"
#define CSV_HDR								\
	"Device_id,Iteration ID,FP Start(us),BP End(us),Iteration End(us),"	\
	"Iteration Time(us),FP to BP Time(us),Iteration Refresh(us),"	\
	"Data Aug Bound(us),Model ID,PID,NS PID,Stream,State,"		\
	"Host Time(us),Device Time(us),Tasks,Completions,Errors,"	\
	"Submit Overhead(us),Task p50(us),Task p99(us)\n"

int steptime_stats__snprintf_header(char *buf, size_t len,
				    enum steptime_fmt fmt)
{
	struct out o = { buf, len, 0 };

	switch (fmt) {
	case STEPTIME_FMT_TABLE:
		out_printf(&o, TABLE_HDR, "PID", "INDEX", "STREAM", "STATE",
			   "HOST(us)", "DEVICE(us)", "TASKS", "SUBMIT(us)",
			   "GAP(us)", "P50(us)", "P99(us)");
		break;
	case STEPTIME_FMT_CSV:
		out_printf(&o, CSV_HDR);
		break;
	case STEPTIME_FMT_JSON:
		if (len)
			buf[0] = '\0';
		break;
	default:
		return -EINVAL;
	}
	return out_done(&o);
}

/*
 * The table and the CSV, printf's formats in their comments: written by
 * hand, as the JSON is (vsnprintf per cell took 2 us a record).
 */
static void fmt_table(struct out *o, const struct steptime_step_stats *s,
		      const struct row *r)
{
	const char *state = steptime_state_str(s->state);

	/* "%-8u %-8llu %-6s %-10s" */
	out_u64_cell(o, s->tgid, 8, true);
	out_mem(o, " ", 1);
	out_u64_cell(o, s->index_id, 8, true);
	out_mem(o, " ", 1);
	if (s->stream == STEPTIME_STREAM_NONE)
		out_cell(o, "-", 1, 6, true);
	else
		out_u64_cell(o, s->stream, 6, true);
	out_mem(o, " ", 1);
	out_cell(o, state, strlen(state), 10, true);
	table_us(o, 12, r->host_time);
	table_us(o, 12, r->dev_time);
	out_mem(o, " ", 1);		/* " %7llu" */
	if (r->tasks == NONE)
		out_cell(o, "-", 1, 7, false);
	else
		out_u64_cell(o, r->tasks, 7, false);
	table_us(o, 10, s->submit_ioctl_ns);
	table_us(o, 10, r->gap);
	table_us(o, 10, r->p50);
	table_us(o, 10, r->p99);
	out_mem(o, "\n", 1);
}

static void fmt_csv(struct out *o, const struct steptime_step_stats *s,
		    const struct row *r)
{
	out_mem(o, "0,", 2);		/* "0,%llu" */
	out_u64(o, s->index_id);
	csv_us(o, r->host_start);	/* FP Start */
	csv_us(o, r->no_fpbp);		/* BP End */
	csv_us(o, r->host_end);		/* Iteration End */
	csv_us(o, r->iter_time);	/* Iteration Time */
	csv_us(o, r->no_fpbp);		/* FP to BP Time */
	csv_us(o, r->no_fpbp);		/* Iteration Refresh */
	csv_us(o, r->gap);		/* Data Aug Bound */
	out_mem(o, ",", 1);		/* ",%llu,%u,%u," */
	out_u64(o, STEPTIME_MODEL_ID_NONE);
	out_mem(o, ",", 1);
	out_u64(o, s->tgid);
	out_mem(o, ",", 1);
	out_u64(o, s->ns_tgid);
	out_mem(o, ",", 1);
	if (s->stream != STEPTIME_STREAM_NONE)
		out_u64(o, s->stream);
	out_mem(o, ",", 1);		/* ",%s" */
	out_str(o, steptime_state_str(s->state));
	csv_us(o, r->host_time);
	csv_us(o, r->dev_time);
	csv_u64(o, r->tasks);		/* ",%llu,%llu,%llu" */
	csv_u64(o, r->completions);
	csv_u64(o, r->errors);
	csv_us(o, s->submit_ioctl_ns);
	csv_us(o, r->p50);
	csv_us(o, r->p99);
	out_mem(o, "\n", 1);
}

static void fmt_json(struct out *o, const struct steptime_step_stats *s,
		     const struct row *r)
{
	out_str(o, "{\"pid\": ");
	out_u64(o, s->tgid);
	json_u64(o, "ns_pid", s->ns_tgid);
	json_u64(o, "pidns_ino", s->pidns_ino);
	json_u64(o, "index_id", s->index_id);
	json_u64(o, "stream", s->stream == STEPTIME_STREAM_NONE ? NONE : s->stream);
	out_str(o, ", \"state\": \"");
	out_str(o, steptime_state_str(s->state));
	out_str(o, "\"");
	json_u64(o, "flags", s->flags);
	json_u64(o, "host_start_ns", r->host_start);
	json_u64(o, "host_end_ns", r->host_end);
	json_u64(o, "host_time_ns", r->host_time);
	json_u64(o, "gap_ns", r->gap);
	json_u64(o, "dev_start_ticks", r->dev_start);
	json_u64(o, "dev_end_ticks", r->dev_end);
	json_u64(o, "device_time_ns", r->dev_time);
	json_u64(o, "tasks", r->tasks);
	json_u64(o, "completions", r->completions);
	json_u64(o, "reported", r->reported);
	json_u64(o, "errors", r->errors);
	json_u64(o, "submit_ioctls", s->submit_ioctls);
	json_u64(o, "submit_ioctl_ns", s->submit_ioctl_ns);
	json_u64(o, "first_submit_ns", r->first_submit);
	json_u64(o, "last_submit_ns", r->last_submit);
	json_u64(o, "last_complete_ns", r->last_complete);
	json_u64(o, "lat_p50_ns", r->p50);
	json_u64(o, "lat_p99_ns", r->p99);
	out_str(o, "}");
}

int steptime_stats__snprintf(char *buf, size_t len, enum steptime_fmt fmt,
			     const struct steptime_step_stats *s)
{
	struct out o = { buf, len, 0 };
	struct row r;

	if (!s || (!buf && len))
		return -EINVAL;
	row_fill(&r, s);
	switch (fmt) {
	case STEPTIME_FMT_TABLE:
		fmt_table(&o, s, &r);
		break;
	case STEPTIME_FMT_CSV:
		fmt_csv(&o, s, &r);
		break;
	case STEPTIME_FMT_JSON:
		fmt_json(&o, s, &r);
		break;
	default:
		return -EINVAL;
	}
	return out_done(&o);
}

int steptime_stats__fprint(FILE *f, enum steptime_fmt fmt,
			   const struct steptime_step_stats *s)
{
	char line[2048];
	int n;

	if (!f)
		return -EINVAL;
	n = steptime_stats__snprintf(line, sizeof(line), fmt, s);
	if (n < 0)
		return n;
	if (fputs(line, f) == EOF)
		return -EIO;
	return 0;
}

/* @str (at most STEPTIME_PHASE_NAME bytes) as a JSON string. */
static void json_str(struct out *o, const char *str)
{
	char esc[6];
	size_t i, run = 0;
	unsigned int n;

	out_mem(o, "\"", 1);
	for (i = 0; i < STEPTIME_PHASE_NAME && str[i]; i++) {
		n = st_json_esc((unsigned char)str[i], esc);
		if (!n) {
			run++;
			continue;
		}
		out_mem(o, str + i - run, run);
		run = 0;
		out_mem(o, esc, n);
	}
	out_mem(o, str + i - run, run);
	out_mem(o, "\"", 1);
}

int st_phases_snprintf(char *buf, size_t len, enum steptime_fmt fmt,
		       const struct steptime_phase *ph, int n)
{
	struct out o = { buf, len, 0 };
	int i;

	if (n < 0 || (n && !ph) || (!buf && len))
		return -EINVAL;
	switch (fmt) {
	case STEPTIME_FMT_TABLE:
		for (i = 0; i < n; i++) {
			out_printf(&o, "    phase %-24s %6llu x %12.3f us host",
				   ph[i].name, (unsigned long long)ph[i].count,
				   ph[i].host_ns / 1e3);
			if (ph[i].device_count)
				out_printf(&o, " %12.3f us device (%llu)",
					   ph[i].device_ns / 1e3,
					   (unsigned long long)ph[i].device_count);
			out_mem(&o, "\n", 1);
		}
		break;
	case STEPTIME_FMT_CSV:		/* msprof's columns: no phases */
		break;
	case STEPTIME_FMT_JSON:
		out_str(&o, ", \"phases\": [");
		for (i = 0; i < n; i++) {
			out_str(&o, i ? ", {\"name\": " : "{\"name\": ");
			json_str(&o, ph[i].name);
			json_count(&o, "count", ph[i].count);
			json_count(&o, "host_ns", ph[i].host_ns);
			if (ph[i].device_count) {
				json_count(&o, "device_ns", ph[i].device_ns);
				json_count(&o, "device_count", ph[i].device_count);
			} else {
				out_str(&o, ", \"device_ns\": null, \"device_count\": 0");
			}
			out_mem(&o, "}", 1);
		}
		out_mem(&o, "]}", 2);
		break;
	default:
		return -EINVAL;
	}
	return out_done(&o);
}
