// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The formatters against known records: table, CSV, JSON, percentiles. */
#include <math.h>
#include <stdlib.h>
#include <steptime/steptime.h>
#include "kselftest_harness.h"
#include "st_stat.h"

/* A finished step with device marks, tasks and latencies. */
static void full_step(struct steptime_step_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->tgid = 100;
	s->ns_tgid = 7;
	s->pidns_ino = 4026531836u;
	s->index_id = 3;
	s->stream = 5;
	s->state = STEPTIME_STEP_DONE;
	s->flags = STEPTIME_F_HOST_START | STEPTIME_F_HOST_END |
		   STEPTIME_F_DEV_START | STEPTIME_F_DEV_END |
		   STEPTIME_F_STREAM | STEPTIME_F_GAP;
	s->host_start_ns = 1000000;
	s->host_end_ns = 3500000;
	s->gap_ns = 250000;
	s->dev_start_ticks = 1000;
	s->dev_end_ticks = 1240;
	s->device_time_ns = 2400000;
	s->tasks = 4;
	s->completions = 4;
	s->reported = 1;
	s->submit_ioctls = 2;
	s->submit_ioctl_ns = 1500;
	s->first_submit_ns = 1100000;
	s->last_submit_ns = 1200000;
	s->last_complete_ns = 3000000;
	s->lat_hist[10] = 2;	/* [1024, 2048) */
	s->lat_hist[20] = 2;	/* [1048576, 2097152) */
}

/* A step that only started: everything else unknown. */
static void open_step(struct steptime_step_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->tgid = 200;
	s->ns_tgid = 200;
	s->pidns_ino = 1;
	s->index_id = 9;
	s->stream = STEPTIME_STREAM_NONE;
	s->state = STEPTIME_STEP_OPEN;
	s->flags = STEPTIME_F_HOST_START;
	s->host_start_ns = 5000;
}

static const char *fmt(enum steptime_fmt f, const struct steptime_step_stats *s)
{
	static char buf[2048];

	if (steptime_stats__snprintf(buf, sizeof(buf), f, s) < 0)
		return "(error)";
	return buf;
}

TEST(parse)
{
	EXPECT_EQ(STEPTIME_FMT_TABLE, steptime_fmt__parse("table"));
	EXPECT_EQ(STEPTIME_FMT_CSV, steptime_fmt__parse("csv"));
	EXPECT_EQ(STEPTIME_FMT_JSON, steptime_fmt__parse("json"));
	EXPECT_EQ(-EINVAL, steptime_fmt__parse("xml"));
	EXPECT_EQ(-EINVAL, steptime_fmt__parse(NULL));
}

TEST(state_names)
{
	EXPECT_STREQ("open", steptime_state_str(STEPTIME_STEP_OPEN));
	EXPECT_STREQ("done", steptime_state_str(STEPTIME_STEP_DONE));
	EXPECT_STREQ("incomplete",
		     steptime_state_str(STEPTIME_STEP_INCOMPLETE));
	EXPECT_STREQ("ended", steptime_state_str(STEPTIME_STEP_ENDED));
	EXPECT_STREQ("unknown", steptime_state_str(77));
}

TEST(percentiles)
{
	struct steptime_step_stats s;

	full_step(&s);
	/* Two samples below 2048, two in [2^20, 2^21): interpolated. */
	EXPECT_EQ(2048, steptime_stats__lat_pct(&s, 50));
	EXPECT_EQ(2076180, steptime_stats__lat_pct(&s, 99));
	EXPECT_EQ(1536, steptime_stats__lat_pct(&s, 25));
	EXPECT_EQ(2097152, steptime_stats__lat_pct(&s, 100));
	EXPECT_EQ(0, steptime_stats__lat_pct(&s, 0));
	EXPECT_EQ(0, steptime_stats__lat_pct(&s, 101));
	EXPECT_EQ(0, steptime_stats__lat_pct(NULL, 50));
	open_step(&s);
	EXPECT_EQ(0, steptime_stats__lat_pct(&s, 50));
}

TEST(headers)
{
	char buf[1024];

	EXPECT_LT(0, steptime_stats__snprintf_header(buf, sizeof(buf),
						     STEPTIME_FMT_CSV));
	EXPECT_STREQ("Device_id,Iteration ID,FP Start(us),BP End(us),"
		     "Iteration End(us),Iteration Time(us),FP to BP Time(us),"
		     "Iteration Refresh(us),Data Aug Bound(us),Model ID,PID,"
		     "NS PID,Stream,State,Host Time(us),Device Time(us),Tasks,"
		     "Completions,Errors,Submit Overhead(us),Task p50(us),"
		     "Task p99(us)\n", buf);
	steptime_stats__snprintf_header(buf, sizeof(buf), STEPTIME_FMT_TABLE);
	EXPECT_STREQ("PID      INDEX    STREAM STATE      "
		     "    HOST(us)   DEVICE(us)   TASKS SUBMIT(us)"
		     "    GAP(us)    P50(us)    P99(us)\n", buf);
	EXPECT_EQ(0, steptime_stats__snprintf_header(buf, sizeof(buf),
						     STEPTIME_FMT_JSON));
	EXPECT_STREQ("", buf);
	EXPECT_EQ(-EINVAL, steptime_stats__snprintf_header(buf, sizeof(buf),
							   (enum steptime_fmt)9));
}

TEST(table)
{
	struct steptime_step_stats s;

	full_step(&s);
	EXPECT_STREQ("100      3        5      done      "
		     "       2500.0       2400.0       4        1.5"
		     "      250.0        2.0     2076.1\n",
		     fmt(STEPTIME_FMT_TABLE, &s));
	open_step(&s);
	EXPECT_STREQ("200      9        -      open      "
		     "            -            -       0        0.0"
		     "          -          -          -\n",
		     fmt(STEPTIME_FMT_TABLE, &s));
}

TEST(csv)
{
	struct steptime_step_stats s;

	full_step(&s);
	EXPECT_STREQ("0,3,1000.000,0.000,3500.000,2500.000,0.000,"
		     "0.000,250.000,4294967295,100,7,5,done,2500.000,"
		     "2400.000,4,4,0,1.500,2.048,2076.180\n",
		     fmt(STEPTIME_FMT_CSV, &s));
	open_step(&s);
	EXPECT_STREQ("0,9,5.000,,,,,,,4294967295,200,200,,open,,,0,0,0,"
		     "0.000,,\n", fmt(STEPTIME_FMT_CSV, &s));
}

/*
 * Without device marks the row is the same but for Device Time: Iteration
 * Time is always the host's END - START, never the device's time.
 */
TEST(csv_host_iteration_time)
{
	struct steptime_step_stats s;

	full_step(&s);
	s.flags &= ~STEPTIME_F_DEV_END;
	s.state = STEPTIME_STEP_INCOMPLETE;
	s.last_complete_ns = 4000000;	/* completed after END */
	EXPECT_STREQ("0,3,1000.000,0.000,3500.000,2500.000,0.000,"
		     "0.000,250.000,4294967295,100,7,5,incomplete,2500.000,"
		     ",4,4,0,1.500,2.048,2076.180\n",
		     fmt(STEPTIME_FMT_CSV, &s));
}

/* The CSV's columns, as numbers (an empty cell: NAN). */
#define CSV_COLS	22
enum { C_FP_START = 2, C_BP_END, C_ITER_END, C_ITER_TIME, C_FP_BP,
       C_REFRESH, C_DATA_AUG, C_HOST_TIME = 14, C_DEV_TIME };

static int csv_cols(const char *line, double *v)
{
	const char *p = line;
	char *end;
	int n = 0;

	while (n < CSV_COLS) {
		if (*p == ',' || *p == '\n')
			v[n] = NAN;
		else
			v[n] = strtod(p, &end);
		n++;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return n;
}

/* Equal to the CSV's precision (ns as us with 3 decimals). */
static double us_diff(double a, double b)
{
	return a > b ? a - b : b - a;
}
#define EXPECT_US(a, b)	EXPECT_GT(0.0015, us_diff((a), (b)))

/*
 * msprof's step_trace relations, on one clock in every row (Ascend/msprof
 * create_step_table.py, trace_persistence.cpp): Iteration Time = Iteration
 * End - FP Start (the step's START); BP End <= Iteration End; FP to BP =
 * BP End - FP Start and Refresh = Iteration End - BP End where there is a
 * BP End, else all three 0 as msprof writes them for step-marked
 * iterations; Data Aug Bound = FP Start - the previous Iteration End.
 * On a demo's figures: device time shorter than the host's, the last
 * task completed after END; and without device time.
 */
TEST(csv_step_trace_one_clock)
{
	struct steptime_step_stats s[2];
	double v[2][CSV_COLS];
	int i, dev;

	for (dev = 1; dev >= 0; dev--) {
		full_step(&s[0]);
		s[0].host_start_ns = 15200000000ull;
		s[0].host_end_ns = 15237500000ull;
		full_step(&s[1]);
		s[1].index_id = 4;
		s[1].host_start_ns = 15237878435ull;
		s[1].host_end_ns = 15263954696ull;
		s[1].gap_ns = s[1].host_start_ns - s[0].host_end_ns;
		s[1].device_time_ns = 14435000;
		s[1].last_complete_ns = 15272446697ull;
		for (i = 0; i < 2; i++) {
			if (!dev)
				s[i].flags &= ~(STEPTIME_F_DEV_START |
						STEPTIME_F_DEV_END);
			ASSERT_EQ(CSV_COLS,
				  csv_cols(fmt(STEPTIME_FMT_CSV, &s[i]), v[i]));
		}
		for (i = 0; i < 2; i++) {
			double *c = v[i];

			EXPECT_US(c[C_ITER_TIME], c[C_ITER_END] - c[C_FP_START]);
			EXPECT_US(c[C_ITER_TIME], c[C_HOST_TIME]);
			EXPECT_GE(c[C_ITER_END], c[C_BP_END]);
			if (c[C_BP_END] != 0) {
				EXPECT_GE(c[C_BP_END], c[C_FP_START]);
				EXPECT_US(c[C_FP_BP], c[C_BP_END] - c[C_FP_START]);
				EXPECT_US(c[C_REFRESH], c[C_ITER_END] - c[C_BP_END]);
			} else {
				EXPECT_EQ(0, c[C_FP_BP]);
				EXPECT_EQ(0, c[C_REFRESH]);
			}
			/* Device time: its own column only. */
			if (dev) {
				EXPECT_US(s[i].device_time_ns / 1000.0,
					  c[C_DEV_TIME]);
			} else {
				EXPECT_TRUE(isnan(c[C_DEV_TIME]));
			}
		}
		EXPECT_US(v[1][C_DATA_AUG], v[1][C_FP_START] - v[0][C_ITER_END]);
		EXPECT_US(26076.261, v[1][C_ITER_TIME]);
	}
}

TEST(json)
{
	struct steptime_step_stats s;

	full_step(&s);
	EXPECT_STREQ("{\"pid\": 100, \"ns_pid\": 7, \"pidns_ino\": 4026531836, "
		     "\"index_id\": 3, \"stream\": 5, \"state\": \"done\", "
		     "\"flags\": 95, \"host_start_ns\": 1000000, "
		     "\"host_end_ns\": 3500000, \"host_time_ns\": 2500000, "
		     "\"gap_ns\": 250000, \"dev_start_ticks\": 1000, "
		     "\"dev_end_ticks\": 1240, \"device_time_ns\": 2400000, "
		     "\"tasks\": 4, \"completions\": 4, \"reported\": 1, "
		     "\"errors\": 0, \"submit_ioctls\": 2, "
		     "\"submit_ioctl_ns\": 1500, \"first_submit_ns\": 1100000, "
		     "\"last_submit_ns\": 1200000, "
		     "\"last_complete_ns\": 3000000, \"lat_p50_ns\": 2048, "
		     "\"lat_p99_ns\": 2076180}", fmt(STEPTIME_FMT_JSON, &s));
	open_step(&s);
	EXPECT_STREQ("{\"pid\": 200, \"ns_pid\": 200, \"pidns_ino\": 1, "
		     "\"index_id\": 9, \"stream\": null, \"state\": \"open\", "
		     "\"flags\": 1, \"host_start_ns\": 5000, "
		     "\"host_end_ns\": null, \"host_time_ns\": null, "
		     "\"gap_ns\": null, \"dev_start_ticks\": null, "
		     "\"dev_end_ticks\": null, \"device_time_ns\": null, "
		     "\"tasks\": 0, \"completions\": 0, \"reported\": 0, "
		     "\"errors\": 0, \"submit_ioctls\": 0, "
		     "\"submit_ioctl_ns\": 0, \"first_submit_ns\": null, "
		     "\"last_submit_ns\": null, \"last_complete_ns\": null, "
		     "\"lat_p50_ns\": null, \"lat_p99_ns\": null}",
		     fmt(STEPTIME_FMT_JSON, &s));
}

/*
 * A phase name in JSON (st_json_esc(), which `steptime doctor -o json`
 * writes with too): RFC 8259 escapes '"', '\' and U+0000..U+001F and
 * nothing else. DEL (0x7f) is not a control character to JSON: it stands
 * as itself, where doctor's own escaper wrote "\u007f".
 */
TEST(json_phase_name_escapes)
{
	struct steptime_phase ph = { .count = 1, .host_ns = 2 };
	char buf[ST_PHASES_TEXT];

	snprintf(ph.name, sizeof(ph.name), "a\"b\\c\x01\x1f" "d\x7f" "e\xc3\xa9");
	ASSERT_LT(0, st_phases_snprintf(buf, sizeof(buf), STEPTIME_FMT_JSON,
					&ph, 1));
	EXPECT_STREQ(", \"phases\": [{\"name\": "
		     "\"a\\\"b\\\\c\\u0001\\u001fd\x7f" "e\xc3\xa9\", "
		     "\"count\": 1, \"host_ns\": 2, \"device_ns\": null, "
		     "\"device_count\": 0}]}", buf);
}

/*
 * A step of a process with uio_d SQs (F_UIO): its task figures are absent
 * in every format, whatever the record holds (the tasks the kernel saw);
 * marks, gap, device time and submit ioctls stay.
 */
TEST(uio_step_task_figures_absent)
{
	struct steptime_step_stats s;

	full_step(&s);
	s.flags |= STEPTIME_F_UIO;
	s.state = STEPTIME_STEP_ENDED;
	s.errors = 1;
	EXPECT_STREQ("{\"pid\": 100, \"ns_pid\": 7, \"pidns_ino\": 4026531836, "
		     "\"index_id\": 3, \"stream\": 5, \"state\": \"ended\", "
		     "\"flags\": 127, \"host_start_ns\": 1000000, "
		     "\"host_end_ns\": 3500000, \"host_time_ns\": 2500000, "
		     "\"gap_ns\": 250000, \"dev_start_ticks\": 1000, "
		     "\"dev_end_ticks\": 1240, \"device_time_ns\": 2400000, "
		     "\"tasks\": null, \"completions\": null, "
		     "\"reported\": null, \"errors\": null, "
		     "\"submit_ioctls\": 2, \"submit_ioctl_ns\": 1500, "
		     "\"first_submit_ns\": null, \"last_submit_ns\": null, "
		     "\"last_complete_ns\": null, \"lat_p50_ns\": null, "
		     "\"lat_p99_ns\": null}", fmt(STEPTIME_FMT_JSON, &s));
	EXPECT_STREQ("0,3,1000.000,0.000,3500.000,2500.000,0.000,0.000,250.000,"
		     "4294967295,100,7,5,ended,2500.000,2400.000,,,,1.500,,\n",
		     fmt(STEPTIME_FMT_CSV, &s));
	EXPECT_NE(NULL, strstr(fmt(STEPTIME_FMT_TABLE, &s), " ended "));
	EXPECT_NE(NULL, strstr(fmt(STEPTIME_FMT_TABLE, &s), "       - "));
}

/*
 * A step counted from its process's journal (F_JOURNAL): tasks and
 * completions stay; the per-task figures the journal never measured
 * (reported, errors, submit times, latency) are null, never 0.
 */
TEST(journal_step_per_task_figures_absent)
{
	struct steptime_step_stats s;

	full_step(&s);
	s.flags |= STEPTIME_F_JOURNAL;
	EXPECT_STREQ("{\"pid\": 100, \"ns_pid\": 7, \"pidns_ino\": 4026531836, "
		     "\"index_id\": 3, \"stream\": 5, \"state\": \"done\", "
		     "\"flags\": 2143, \"host_start_ns\": 1000000, "
		     "\"host_end_ns\": 3500000, \"host_time_ns\": 2500000, "
		     "\"gap_ns\": 250000, \"dev_start_ticks\": 1000, "
		     "\"dev_end_ticks\": 1240, \"device_time_ns\": 2400000, "
		     "\"tasks\": 4, \"completions\": 4, "
		     "\"reported\": null, \"errors\": null, "
		     "\"submit_ioctls\": 2, \"submit_ioctl_ns\": 1500, "
		     "\"first_submit_ns\": null, \"last_submit_ns\": null, "
		     "\"last_complete_ns\": 3000000, \"lat_p50_ns\": null, "
		     "\"lat_p99_ns\": null}", fmt(STEPTIME_FMT_JSON, &s));
}

/*
 * JSON numbers are written by hand, 8 digits at a time: every digit count
 * and its edges, against printf's, and every truncation of them, which
 * writes nothing past its terminator.
 */
TEST(json_numbers)
{
	struct steptime_step_stats s;
	unsigned long long v, p = 1, x = 88172645463325252ull;
	char want[64], full[2048], cut[2048];
	const char *at;
	int i, d, n, len;

	full_step(&s);
	for (i = 0; i < 20 * 5 + 1000; i++) {
		if (i < 100) {		/* 10^k - 2 .. 10^k + 2 */
			v = p + (unsigned long long)(i % 5) - 2;
			if (i % 5 == 4)
				p *= 10;
		} else {		/* xorshift, every magnitude */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v = x >> (x % 64);
		}
		if (v == ~0ull)		/* NONE: "null" */
			v--;
		s.tasks = v;
		snprintf(want, sizeof(want), "\"tasks\": %llu,", v);
		len = steptime_stats__snprintf(full, sizeof(full),
					       STEPTIME_FMT_JSON, &s);
		at = strstr(full, "\"tasks\": ");
		ASSERT_NE(NULL, at);
		ASSERT_EQ(0, strncmp(want, at, strlen(want))) {
			TH_LOG("%llu: %.40s", v, at);
		}
		/* Cut inside the number: a prefix, then nothing written. */
		for (d = 0; d < 22; d++) {
			n = (int)(at - full) + 9 + d;
			memset(cut, 'Z', sizeof(cut));
			ASSERT_EQ(len, steptime_stats__snprintf(cut, (size_t)n,
						STEPTIME_FMT_JSON, &s));
			ASSERT_EQ(0, memcmp(full, cut, (size_t)n - 1));
			ASSERT_EQ('\0', cut[n - 1]);
			ASSERT_EQ('Z', cut[n]);
		}
	}
	s.tasks = 0;
	EXPECT_NE(NULL, strstr(fmt(STEPTIME_FMT_JSON, &s), "\"tasks\": 0,"));
	s.tasks = ~0ull - 1;
	EXPECT_NE(NULL, strstr(fmt(STEPTIME_FMT_JSON, &s),
			       "\"tasks\": 18446744073709551614,"));
}

/* Like snprintf: the needed length, a terminated prefix. */
TEST(truncation)
{
	struct steptime_step_stats s;
	char small[11];
	int full;

	full_step(&s);
	full = (int)strlen(fmt(STEPTIME_FMT_JSON, &s));
	EXPECT_EQ(full, steptime_stats__snprintf(small, sizeof(small),
						 STEPTIME_FMT_JSON, &s));
	EXPECT_STREQ("{\"pid\": 10", small);
	EXPECT_EQ(full, steptime_stats__snprintf(NULL, 0, STEPTIME_FMT_JSON,
						 &s));
	EXPECT_EQ(-EINVAL, steptime_stats__snprintf(small, sizeof(small),
						    STEPTIME_FMT_JSON, NULL));
	EXPECT_EQ(-EINVAL, steptime_stats__snprintf(small, sizeof(small),
						    (enum steptime_fmt)7, &s));
	EXPECT_EQ(-EINVAL, steptime_stats__fprint(NULL, STEPTIME_FMT_CSV, &s));
}

TEST_HARNESS_MAIN
