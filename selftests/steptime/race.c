// SPDX-License-Identifier: GPL-2.0
/*
 * A step finishes once: the completion hook (npusim's logic-CQ enqueue,
 * fexit or kprobe) and the ioctl exits (QUERY SQ_HEAD, RECV) all walk the
 * same SQ and each may see the step's last completion; only one of them
 * may take the record from OPEN to DONE. Many steps of a few tasks, with a
 * second thread on the other CPU polling the SQ head as fast as it can
 * while the device's engine reports the same tasks: every finished step
 * must come out of the ring buffer exactly once, and steps_done move by
 * exactly the number of steps. The finishers also race to raise the
 * step's last completion time: it must not be below the end of any of its
 * tasks (npusim's truth), whichever finisher wrote last.
 *
 * All of which holds trivially unless two finishers did meet on a step:
 * one of them must have found the step finished and lost step_close()'s
 * compare-and-swap to the other (finishes_raced). Under TCG with
 * thread=single the guest's two vCPUs take turns, so they meet only when
 * one is switched out inside the few instructions between its last
 * condition and the swap: once in 200 to 1500 steps (fentry, kprobe;
 * 6.12, 6.1).
 *
 * RACE_STEPS (default 3000) is the number of steps per attach mode; past
 * it, more (up to RACE_MORE times as many) until two finishers have met.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <steptime/loader.h>
#include <steptime/steptime.h>
#include <npusim/hal.h>

#include "kselftest_harness.h"
#include "ksft_filter.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	600

#define PIN_DIR		"/sys/fs/bpf/steptime_race"
#define TASKS		4
#define WAIT_NS		(10ull * 1000000000ull)
/* Steps past RACE_STEPS, up to this many times it, until finishers met. */
#define RACE_MORE	3

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* This thread on @cpu only: 0, or -errno. */
static int pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* Records taken off the ring buffer: how often each step of ours came. */
struct seen {
	__u32 tgid;
	__u64 first;		/* index id of step 0 */
	unsigned int n;		/* steps */
	unsigned int *count;	/* per step */
	__u64 *last_ns;		/* per step: its first record's last_complete_ns */
	unsigned int records, foreign, not_done;
	unsigned int logged;	/* second records described so far */
};

/* A second record of one step: what it says, for the log. */
static void describe(const struct steptime_step_stats *r, unsigned int i)
{
	fprintf(stderr, "# step %u (index %llu) again: state %u flags %#x tasks %llu completions %llu host %llu..%llu\n",
		i, (unsigned long long)r->index_id, r->state, r->flags,
		(unsigned long long)r->tasks,
		(unsigned long long)r->completions,
		(unsigned long long)r->host_start_ns,
		(unsigned long long)r->host_end_ns);
}

static int on_record(void *ctx, void *data, size_t len)
{
	const struct steptime_step_stats *r = data;
	struct seen *s = ctx;
	__u64 i;

	if (len < sizeof(*r) || r->tgid != s->tgid) {
		s->foreign++;
		return 0;
	}
	s->records++;
	i = r->index_id - s->first;
	if (r->index_id < s->first || i >= s->n) {
		s->foreign++;
		return 0;
	}
	if (!s->count[i])
		s->last_ns[i] = r->last_complete_ns;
	if (s->count[i]++ && s->logged++ < 8)
		describe(r, (unsigned int)i);
	if (r->state != STEPTIME_STEP_DONE)
		s->not_done++;
	return 0;
}

/* The other CPU's ioctl exits: the SQ head, as often as it answers. */
struct poller {
	struct npu_sqcq *q;
	atomic_bool stop;
	unsigned long queries;
};

static void *poll_head(void *arg)
{
	struct poller *p = arg;

	while (!atomic_load(&p->stop)) {
		npu_sqcq_query(p->q, TRS_SQCQ_PROP_SQ_HEAD);
		p->queries++;
	}
	return NULL;
}

/* The SQ head poller, started on @cpu only: 0, or an error number. */
static int start_poller(pthread_t *th, struct poller *p, int cpu)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_attr_init(&attr);
	if (err)
		return err;
	err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (!err)
		err = pthread_create(th, &attr, poll_head, p);
	pthread_attr_destroy(&attr);
	return err;
}

FIXTURE(race) {
	struct npu_dev *dev;
	struct npu_stream *s;
	struct ring_buffer *rb;
	int events;
	struct seen seen;
};

FIXTURE_VARIANT(race) {
	int mode;
};

/* The modes with a completion hook: the others have no second finisher. */
FIXTURE_VARIANT_ADD(race, fentry) { .mode = STEPTIME_ATTACH_FENTRY };
FIXTURE_VARIANT_ADD(race, kprobe) { .mode = STEPTIME_ATTACH_KPROBE };

FIXTURE_SETUP(race)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o), .attach_mode = variant->mode,
		.pin_dir = PIN_DIR, .map_gid = -1,
	};
	int err;

	if (geteuid())
		SKIP(longjmp(_metadata->env, 1), "needs root (loads steptime)");
	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	steptime__unload(PIN_DIR);
	err = steptime__load(&o);
	if (err == -EOPNOTSUPP && variant->mode == STEPTIME_ATTACH_FENTRY)
		SKIP(longjmp(_metadata->env, 1),
		     "fentry: this kernel attaches no BPF trampoline to npusim");
	ASSERT_EQ(0, err) TH_LOG("steptime load (%s): %s",
				 steptime__attach_mode_str(variant->mode),
				 strerror(-err));
	self->events = bpf_obj_get(PIN_DIR "/events");
	ASSERT_LE(0, self->events);
	self->seen.tgid = getpid();
	self->rb = ring_buffer__new(self->events, on_record, &self->seen, NULL);
	ASSERT_NE(NULL, self->rb);
	self->dev = npu_dev_open(NULL);
	ASSERT_NE(NULL, self->dev);
	self->s = npu_stream_create(self->dev, NULL);
	ASSERT_NE(NULL, self->s);
}

FIXTURE_TEARDOWN(race)
{
	npu_stream_destroy(self->s);
	npu_dev_close(self->dev);
	ring_buffer__free(self->rb);
	if (self->events >= 0)
		close(self->events);
	free(self->seen.count);
	free(self->seen.last_ns);
	steptime__unload(PIN_DIR);
}

/*
 * One host-marked step of TASKS tasks, the last one reported (wr_cqe):
 * the SQ head passes the others while the poller watches, the hook
 * completes what it has not when the last report is queued.
 */
static int step_once(struct npu_stream *s, __u64 *index_id)
{
	struct steptime_step *step = steptime_step__new();
	struct trs_sqe sqe[TASKS];
	int i, err;

	if (!step)
		return -errno;
	for (i = 0; i < TASKS; i++) {
		struct npu_task_desc d = {
			.type = TRS_SQE_FFTS, .duration_ns = 20000,
			.wr_cqe = i == TASKS - 1,
		};

		npu_sqe_task(&sqe[i], &d);
	}
	*index_id = steptime_step__index_id(step);
	err = steptime_step__mark(step, STEPTIME_TAG_START, NULL);
	if (!err)
		err = npu_stream_submit(s, sqe, TASKS) < 0 ? -EIO : 0;
	if (!err)
		err = steptime_step__mark(step, STEPTIME_TAG_END, NULL);
	/* a third finisher: the RECVs of the stream's own wait */
	if (!err)
		err = npu_stream_sync(s, 10000);
	steptime_step__free(step);
	return err;
}

/* The end of the step's last task, by npusim's truth, from SQ task @seq0. */
static __u64 truth_end(struct npu_dev *dev, struct npu_stream *s, __u64 seq0)
{
	struct npusim_task_truth t[TASKS * 2];
	__u64 end = 0;
	int n, i;

	n = npu_sim_truth(dev, npu_sqcq_sq_id(npu_stream_sqcq(s)), seq0, t,
			  TASKS * 2, NULL);
	for (i = 0; i < n; i++)
		if (t[i].sqe_type == TRS_SQE_FFTS && t[i].end_ns > end)
			end = t[i].end_ns;
	return end;
}

static __u64 next_seq(struct npu_dev *dev, struct npu_stream *s)
{
	struct npusim_task_truth t;
	__u64 next = 0;

	npu_sim_truth(dev, npu_sqcq_sq_id(npu_stream_sqcq(s)), 0, &t, 0, &next);
	return next;
}

/*
 * Whether two finishers have met on one step: one lost step_close() to the
 * other, or (a broken close) the step came out twice.
 */
static bool race_seen(const struct seen *s, const struct steptime_counters *c0)
{
	struct steptime_counters c;

	if (s->logged)
		return true;
	return !steptime__read_counters(PIN_DIR, &c) &&
	       c.finishes_raced > c0->finishes_raced;
}

/* Until step @i has come out of the ring buffer (state, not time). */
static bool wait_record(struct ring_buffer *rb, struct seen *s, unsigned int i)
{
	__u64 end = now_ns() + WAIT_NS;

	while (!s->count[i] && now_ns() < end) {
		if (ring_buffer__poll(rb, 100) == 0)
			ring_buffer__consume(rb);
	}
	return s->count[i];
}

TEST_F(race, hook_and_exits_finish_once)
{
	unsigned int n = strtoul(getenv("RACE_STEPS") ?: "3000", NULL, 0);
	unsigned int max = RACE_MORE * n;
	struct poller p = { .q = npu_stream_sqcq(self->s) };
	struct steptime_counters c0, c1;
	unsigned int i, twice = 0, never = 0, behind = 0;
	pthread_t th;
	__u64 idx = 0, seq0, end;
	int err;

	ASSERT_LT(0, n);
	self->seen.n = max;
	self->seen.count = calloc(max, sizeof(*self->seen.count));
	self->seen.last_ns = calloc(max, sizeof(*self->seen.last_ns));
	ASSERT_NE(NULL, self->seen.count);
	ASSERT_NE(NULL, self->seen.last_ns);
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &c0));
	err = pin_cpu(0);
	ASSERT_EQ(0, err) TH_LOG("this thread on CPU 0: %s", strerror(-err));
	err = start_poller(&th, &p, 1);
	ASSERT_EQ(0, err) TH_LOG("the poller on CPU 1: %s", strerror(err));
	for (i = 0; i < max; i++) {
		if (i >= n && !(i % 100) && race_seen(&self->seen, &c0))
			break;
		seq0 = next_seq(self->dev, self->s);
		ASSERT_EQ(0, step_once(self->s, &idx)) TH_LOG("step %u", i);
		if (!i)
			self->seen.first = idx;
		/* index ids are consecutive per process: one array fits */
		ASSERT_EQ(self->seen.first + i, idx);
		if (!wait_record(self->rb, &self->seen, i)) {
			i++;	/* a step whose record never came: never */
			break;
		}
		end = truth_end(self->dev, self->s, seq0);
		if (!end || self->seen.last_ns[i] < end) {
			if (behind++ < 8)
				TH_LOG("step %u: last completion %llu, its last task ended at %llu",
				       i, (unsigned long long)self->seen.last_ns[i],
				       (unsigned long long)end);
		}
	}
	n = i;
	atomic_store(&p.stop, true);
	pthread_join(th, NULL);
	/* Nothing of the SQ left to walk: every finisher has emitted. */
	npu_stream_destroy(self->s);
	self->s = NULL;
	ASSERT_EQ(0, steptime__read_counters(PIN_DIR, &c1));
	ring_buffer__consume(self->rb);

	for (i = 0; i < n; i++) {
		twice += self->seen.count[i] > 1;
		never += !self->seen.count[i];
	}
	TH_LOG("%u steps, %u records, %lu head queries; hook_reports %llu, head_completions %llu, steps_done %llu, finishes_raced %llu",
	       n, self->seen.records, p.queries,
	       (unsigned long long)(c1.hook_reports - c0.hook_reports),
	       (unsigned long long)(c1.head_completions - c0.head_completions),
	       (unsigned long long)(c1.steps_done - c0.steps_done),
	       (unsigned long long)(c1.finishes_raced - c0.finishes_raced));
	EXPECT_EQ(0, never);
	EXPECT_EQ(0, behind);
	EXPECT_EQ(0, twice) {
		for (i = 0; i < n; i++)
			if (self->seen.count[i] > 1)
				TH_LOG("step %u (index %llu): %u records", i,
				       (unsigned long long)(self->seen.first + i),
				       self->seen.count[i]);
	}
	EXPECT_EQ(n, self->seen.records);
	EXPECT_EQ(0, self->seen.not_done);
	EXPECT_EQ(n, c1.steps_done - c0.steps_done);
	EXPECT_EQ(0, c1.events_dropped - c0.events_dropped);
	/* Both kinds of finisher completed tasks of these steps. */
	EXPECT_LT(0, c1.hook_reports - c0.hook_reports);
	EXPECT_LT(0, c1.head_completions - c0.head_completions);
	/*
	 * And the race happened: two of them found the same step finished
	 * and one lost step_close() to the other. Else the once above was
	 * never in question. Required on x86_64 guests (2 to 14 per 3000
	 * steps there, both kernels, both modes; `make mutate`'s CAS
	 * mutation relies on it). The arm64 6.12 guest's kprobe mode met no
	 * race in 9000 steps under TCG: there the count is said, not
	 * required, until a way to make them meet there is found.
	 */
#ifdef __x86_64__
	EXPECT_LT(0, c1.finishes_raced - c0.finishes_raced);
#else
	if (c1.finishes_raced == c0.finishes_raced)
		TH_LOG("no finishers met in %u steps: the once above was not in question here",
		       n);
#endif
}

TEST_HARNESS_MAIN
