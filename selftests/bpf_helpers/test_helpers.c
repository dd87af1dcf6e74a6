// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the BPF program's helpers, as the kernel's BPF selftests
 * test theirs: a small program includes one concern's header from bpf/
 * (walk.bpf.c, sqe.bpf.c, queues.bpf.c, step.bpf.c, journal.bpf.c) and each
 * case runs it
 * with BPF_PROG_RUN on the host, inputs in its globals and sqs[0], results
 * read back. No device, no VM. A user or a kernel without BPF (CAP_BPF, BPF_PROG_RUN of syscall
 * programs: 5.14+) SKIPs with the reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kselftest_harness.h"
#include "ksft_filter.h"
#include "steptime/abi.h"
#include "steptime.h"
#include "walk.skel.h"
#include "sqe.skel.h"
#include "queues.skel.h"
#include "step.skel.h"
#include "journal.skel.h"

/*
 * Whether this user on this kernel can load a syscall program at all: a
 * trivial one. Where not, a failed load is a SKIP, for the reason in
 * *@why; where it can, a failed load is a broken program (the verifier
 * refuses one with EACCES or EINVAL too, as it refuses an unprivileged
 * user or a program type it does not know).
 */
static bool bpf_usable(const char **why)
{
	static const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_flags = BPF_F_SLEEPABLE);
	static char buf[128];
	int fd;

	fd = bpf_prog_load(BPF_PROG_TYPE_SYSCALL, NULL, "GPL", ret0,
			   ARRAY_SIZE(ret0), &o);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	snprintf(buf, sizeof(buf), "a trivial syscall program is refused: %s%s",
		 strerror(errno), errno == EINVAL ? " (5.14+ has them)" : "");
	*why = buf;
	return false;
}

/* BPF_PROG_RUN refused: not for this program type, or not for this user. */
static bool run_refused(int err)
{
	return err == -EPERM || err == -EOPNOTSUPP ||
	       err == -524 /* ENOTSUPP */;
}

/*
 * The maps the helpers' headers define, one entry each (a test uses
 * sqs[0] and the counters): loading stays fast and small.
 */
static void maps_shrink(struct bpf_object *obj)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		if (bpf_map__is_internal(m) ||
		    bpf_map__type(m) == BPF_MAP_TYPE_RINGBUF)
			continue;
		bpf_map__set_max_entries(m, 1);
	}
}

/* BPF_PROG_RUN of @p. Return: 0, or the kernel's -errno. */
static int prog_run(struct bpf_program *p, int *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, o);
	int err = bpf_prog_test_run_opts(bpf_program__fd(p), &o);

	*retval = o.retval;
	return err < 0 ? -errno : 0;
}

/*
 * Open and load @skel's object with its setting @field (common.bpf.h's,
 * read-only once loaded) at @value, or leave the test: SKIP or FAIL.
 */
#define SKEL_LOAD(skel, name, field, value)					\
	do {								\
		const char *__why = NULL;				\
		int __e;						\
		skel = name##__open();					\
		ASSERT_NE(NULL, skel) TH_LOG("opening " #name);		\
		maps_shrink(skel->obj);					\
		skel->rodata->field = (value);				\
		__e = name##__load(skel);				\
		if (__e && !bpf_usable(&__why)) {			\
			name##__destroy(skel);				\
			SKIP(return, "no BPF here: %s", __why);		\
		}							\
		ASSERT_EQ(0, __e) TH_LOG("loading " #name ": %s",	\
					 strerror(-__e));		\
	} while (0)

/* BPF_PROG_RUN of @prog: SKIP where the kernel refuses it. */
#define PROG_RUN(skel, name, prog)					\
	do {								\
		int __r = -1, __e = prog_run(skel->progs.prog, &__r);	\
		if (run_refused(__e)) {					\
			name##__destroy(skel);				\
			SKIP(return, "BPF_PROG_RUN refused: %s",	\
			     strerror(-__e));				\
		}							\
		ASSERT_EQ(0, __e) TH_LOG("BPF_PROG_RUN: %s",		\
					 strerror(-__e));		\
		ASSERT_EQ(0, __r) TH_LOG(#prog " returned %d", __r);	\
	} while (0)

/* A task of @sqes SQEs (1 to 8) recorded from virtual position @pos. */
struct sq_task {
	__u64 pos;
	__u32 sqes;
	__u8 flags;	/* of its record: VALID too unless DONE */
};

struct sq_case {
	const char *name;
	__u32 depth;
	__u64 done, tail;
	struct sq_task tasks[4];
	__u32 head;
	struct sq_task kept_task;	/* in kept[0], its slot reused */
	__u32 task_id;		/* report_find(): the report's */
	__u16 stream_id;
	/* expected */
	__u32 pos;		/* report_pos() */
	__u64 done_after;	/* sq_advance() */
	__u32 completions;
	__u32 behind;		/* heads_behind counted */
	__u32 kept;		/* tasks kept for their reports */
	__u32 found;		/* report_find() */
	__u64 at;		/* ...and the flags of the record at @at */
	__u8 flags;
	__u8 kept_flags;	/* ...and of kept[0] */
};

/*
 * The SQ a SEND of @c's tasks leaves (send.bpf.h): a task's record at its
 * last SQE, its other SQEs marked CONT (sqe_continue()).
 */
static void sq_fill(struct st_sq *sq, const struct sq_case *c)
{
	const struct sq_task *k;
	__u32 i;

	memset(sq, 0, sizeof(*sq));
	sq->depth = c->depth;
	sq->done = c->done;
	sq->tail = c->tail;
	sq->live = 1;
	for (k = c->tasks; k < c->tasks + 4 && k->sqes; k++) {
		for (i = 0; i + 1 < k->sqes; i++)
			sq->t[(k->pos + i) % c->depth].flags = ST_TASK_CONT;
		sq->t[(k->pos + i) % c->depth].flags =
			k->flags & ST_TASK_DONE ? k->flags :
						  ST_TASK_VALID | k->flags;
		sq->t[(k->pos + i) % c->depth].task_id = k->pos + i;
	}
	if (c->kept_task.sqes) {
		sq->kept[0].t.task_id = c->kept_task.pos;
		sq->kept[0].t.flags = ST_TASK_DONE | c->kept_task.flags;
		sq->kept[0].slot = c->kept_task.pos % c->depth;
		sq->kept_next = 1;
	}
}

/* @c's SQ into sqs[0] through @sq, its head and report, outputs unset. */
static int walk_in(struct walk_bpf *skel, const struct sq_case *c,
		   struct st_sq *sq)
{
	__u32 slot = 0;

	sq_fill(sq, c);
	skel->bss->in_head = c->head;
	skel->bss->in_task_id = c->task_id;
	skel->bss->in_stream_id = c->stream_id;
	skel->bss->out_pos = ~0u;
	skel->bss->out_completions = ~0u;
	skel->bss->out_found = ~0u;
	return bpf_map__update_elem(skel->maps.sqs, &slot, sizeof(slot), sq,
				    sizeof(*sq), BPF_ANY);
}

/* Run @prog on case @c, the SQ it leaves read back into @sq. */
#define WALK_RUN(skel, c, prog, sq)					\
	do {								\
		__u32 __slot = 0;					\
		ASSERT_EQ(0, walk_in(skel, c, sq)) TH_LOG("%s", (c)->name); \
		PROG_RUN(skel, walk_bpf, prog);				\
		ASSERT_EQ(0, bpf_map__lookup_elem(skel->maps.sqs, &__slot, \
						  sizeof(__slot), sq,	\
						  sizeof(*(sq)), 0));	\
	} while (0)

/* Depth 16 but where a case says; positions count from 0, never wrap. */
static const struct sq_case pos_cases[] = {
	{ "one SQE", 16, 0, 6, { { 4, 1 } }, 5, .pos = 4 },
	{ "head 0: the slot before is the SQ's last", 16, 14, 16,
	  { { 15, 1 } }, 0, .pos = 15 },
	{ "two SQEs, head after the first", 16, 0, 5, { { 3, 2 } }, 4, .pos = 4 },
	{ "two SQEs, head after the task", 16, 0, 5, { { 3, 2 } }, 5, .pos = 4 },
	{ "three SQEs, head after the first", 16, 0, 5, { { 2, 3 } }, 3, .pos = 4 },
	{ "four SQEs, head after the third", 16, 0, 6, { { 2, 4 } }, 5, .pos = 5 },
	{ "five SQEs, head after the first", 16, 0, 7, { { 2, 5 } }, 3, .pos = 6 },
	{ "five SQEs, head after the task", 16, 0, 7, { { 2, 5 } }, 7, .pos = 6 },
	{ "a task across the SQ's end, head at 15", 16, 14, 17,
	  { { 14, 3 } }, 15, .pos = 0 },
	{ "a task across the SQ's end, head at 0", 16, 14, 17,
	  { { 14, 3 } }, 0, .pos = 0 },
	{ "a task across the SQ's end, head past it", 16, 14, 17,
	  { { 14, 3 } }, 1, .pos = 0 },
	{ "eight SQEs, the most a task has", 16, 0, 8, { { 0, 8 } }, 1, .pos = 7 },
	{ "a longer run of CONT: a task's SQEs at most", 16, 0, 10,
	  { { 0, 10 } }, 1, .pos = 7 },
	{ "depth not a power of two", 10, 8, 11, { { 8, 3 } }, 9, .pos = 0 },
	{ "depth not a power of two, head 0", 10, 8, 10, { { 9, 1 } }, 0,
	  .pos = 9 },
	{ "the deepest SQ, head 0", ST_SQ_DEPTH, ST_SQ_DEPTH - 2, ST_SQ_DEPTH,
	  { { ST_SQ_DEPTH - 2, 2 } }, 0, .pos = ST_SQ_DEPTH - 1 },
};

TEST(report_pos)
{
	struct st_sq *sq = calloc(1, sizeof(*sq));
	struct walk_bpf *skel;
	const struct sq_case *c;

	ASSERT_NE(NULL, sq);
	SKEL_LOAD(skel, walk_bpf, stars_version, 1);
	for (c = pos_cases; c < pos_cases + ARRAY_SIZE(pos_cases); c++) {
		WALK_RUN(skel, c, run_report_pos, sq);
		EXPECT_EQ(c->pos, skel->bss->out_pos)
			TH_LOG("%s: depth %u head %u", c->name, c->depth,
			       c->head);
	}
	walk_bpf__destroy(skel);
	free(sq);
}

/* Depth 8 but where a case says. */
static const struct sq_case adv_cases[] = {
	{ "a head completes the tasks before it", 8, 0, 3,
	  { { 0, 1 }, { 1, 1 }, { 2, 1 } }, 2,
	  .done_after = 2, .completions = 2 },
	{ "a head at the tail completes all", 8, 0, 3,
	  { { 0, 1 }, { 1, 1 }, { 2, 1 } }, 3,
	  .done_after = 3, .completions = 3 },
	{ "a head at done completes nothing", 8, 0, 3,
	  { { 0, 1 }, { 1, 1 }, { 2, 1 } }, 0, .done_after = 0 },
	{ "the head wraps the SQ's end", 8, 6, 10,
	  { { 6, 1 }, { 7, 1 }, { 8, 1 }, { 9, 1 } }, 1,
	  .done_after = 9, .completions = 3 },
	{ "a head behind done", 8, 4, 6, { { 4, 1 }, { 5, 1 } }, 2,
	  .done_after = 4, .behind = 1 },
	{ "a head past the depth", 8, 0, 2, { { 0, 1 }, { 1, 1 } }, 8,
	  .done_after = 0 },
	{ "a head inside a 3-SQE task leaves it running", 8, 0, 5,
	  { { 0, 3 }, { 3, 2 } }, 2, .done_after = 2 },
	{ "a head past a 3-SQE and a 2-SQE task", 8, 0, 5,
	  { { 0, 3 }, { 3, 2 } }, 5, .done_after = 5, .completions = 2 },
	{ "a 5-SQE task across the SQ's end", 8, 6, 11, { { 6, 5 } }, 3,
	  .done_after = 11, .completions = 1 },
	{ "a task that asks for a report is kept for it", 8, 0, 2,
	  { { 0, 1, ST_TASK_WR_CQE }, { 1, 1 } }, 2,
	  .done_after = 2, .completions = 2, .kept = 1 },
	{ "the deepest SQ wraps", ST_SQ_DEPTH, ST_SQ_DEPTH - 2, ST_SQ_DEPTH + 2,
	  { { ST_SQ_DEPTH - 2, 1 }, { ST_SQ_DEPTH - 1, 1 }, { ST_SQ_DEPTH, 2 } },
	  2, .done_after = ST_SQ_DEPTH + 2, .completions = 3 },
};

static __u64 heads_behind(struct walk_bpf *skel)
{
	int n = libbpf_num_possible_cpus(), i;
	struct steptime_counters *c;
	__u64 sum = 0;
	__u32 k = 0;

	c = calloc(n, sizeof(*c));
	if (!c)
		return ~0ull;
	if (bpf_map__lookup_elem(skel->maps.counters, &k, sizeof(k), c,
				 n * sizeof(*c), 0))
		sum = ~0ull;
	for (i = 0; i < n && sum != ~0ull; i++)
		sum += c[i].heads_behind;
	free(c);
	return sum;
}

/* Records the walk marked complete: DONE, no longer VALID. */
static __u32 sq_done_tasks(const struct st_sq *sq)
{
	__u32 i, n = 0;

	for (i = 0; i < ST_SQ_DEPTH; i++)
		if ((sq->t[i].flags & (ST_TASK_DONE | ST_TASK_VALID)) ==
		    ST_TASK_DONE)
			n++;
	return n;
}

TEST(sq_advance)
{
	struct st_sq *sq = calloc(1, sizeof(*sq));
	__u64 behind, behind0 = 0;
	struct walk_bpf *skel;
	const struct sq_case *c;

	ASSERT_NE(NULL, sq);
	SKEL_LOAD(skel, walk_bpf, stars_version, 1);
	for (c = adv_cases; c < adv_cases + ARRAY_SIZE(adv_cases); c++) {
		WALK_RUN(skel, c, run_sq_advance, sq);
		behind = heads_behind(skel);
		EXPECT_EQ(c->done_after, sq->done) TH_LOG("%s", c->name);
		EXPECT_EQ(c->completions, skel->bss->out_completions)
			TH_LOG("%s", c->name);
		EXPECT_EQ(c->completions, sq_done_tasks(sq))
			TH_LOG("%s: records complete", c->name);
		EXPECT_EQ(c->behind, behind - behind0) TH_LOG("%s", c->name);
		EXPECT_EQ(c->kept, sq->kept_next) TH_LOG("%s", c->name);
		behind0 = behind;
	}
	walk_bpf__destroy(skel);
	free(sq);
}

#define DONE	ST_TASK_DONE
#define REPORTED	ST_TASK_REPORTED

/* A report's task, found where the head and the SQ say. */
static const struct sq_case find_cases[] = {
	{ .name = "running ahead of the head (match mode): completed",
	  .depth = 8, .tail = 3, .tasks = { { 0, 1 }, { 1, 1 }, { 2, 1 } },
	  .head = 1, .task_id = 2,
	  .found = 1, .completions = 1, .at = 2, .flags = DONE | REPORTED },
	{ .name = "complete before its report: the report applied late",
	  .depth = 8, .done = 4, .tail = 4, .tasks = { { 3, 1, DONE } },
	  .head = 4, .task_id = 3, .found = 1, .at = 3,
	  .flags = DONE | REPORTED },
	{ .name = "its report again: nothing more",
	  .depth = 8, .done = 4, .tail = 4,
	  .tasks = { { 3, 1, DONE | REPORTED } },
	  .head = 4, .task_id = 3, .found = 1, .at = 3,
	  .flags = DONE | REPORTED },
	{ .name = "a 3-SQE task, head after its first SQE",
	  .depth = 8, .done = 5, .tail = 5, .tasks = { { 2, 3, DONE } },
	  .head = 3, .task_id = 4, .found = 1, .at = 4,
	  .flags = DONE | REPORTED },
	{ .name = "kept, its slot taken by a later task",
	  .depth = 8, .done = 9, .tail = 10, .tasks = { { 9, 1 } },
	  .kept_task = { 1, 1 }, .head = 2, .task_id = 1, .found = 1,
	  .at = 9, .flags = ST_TASK_VALID, .kept_flags = DONE | REPORTED },
	{ .name = "kept, but more than a task's SQEs after the head",
	  .depth = 16, .done = 17, .tail = 18, .tasks = { { 17, 1 } },
	  .kept_task = { 1, 1 }, .head = 10, .task_id = 1,
	  .at = 17, .flags = ST_TASK_VALID, .kept_flags = DONE },
	{ .name = "no such task", .depth = 8, .tail = 2,
	  .tasks = { { 0, 1 }, { 1, 1 } }, .head = 1, .task_id = 7,
	  .at = 0, .flags = ST_TASK_VALID },
	{ .name = "its ids on another stream", .depth = 8, .tail = 2,
	  .tasks = { { 0, 1 }, { 1, 1 } }, .head = 1, .task_id = 1,
	  .stream_id = 1, .at = 1, .flags = ST_TASK_VALID },
	{ .name = "task ids compared in 16 bits, as reports carry them",
	  .depth = 8, .tail = 2, .tasks = { { 0, 1 }, { 1, 1 } },
	  .head = 1, .task_id = 0x10001, .found = 1, .completions = 1,
	  .at = 1, .flags = DONE | REPORTED },
};

TEST(report_find)
{
	struct st_sq *sq = calloc(1, sizeof(*sq));
	struct walk_bpf *skel;
	const struct sq_case *c;

	ASSERT_NE(NULL, sq);
	SKEL_LOAD(skel, walk_bpf, stars_version, 1);
	for (c = find_cases; c < find_cases + ARRAY_SIZE(find_cases); c++) {
		WALK_RUN(skel, c, run_report_find, sq);
		EXPECT_EQ(c->found, skel->bss->out_found) TH_LOG("%s", c->name);
		EXPECT_EQ(c->completions, skel->bss->out_completions)
			TH_LOG("%s", c->name);
		EXPECT_EQ(c->flags, sq->t[c->at % c->depth].flags)
			TH_LOG("%s: the record at %llu", c->name, c->at);
		EXPECT_EQ(c->kept_flags, sq->kept[0].t.flags)
			TH_LOG("%s: kept[0]", c->name);
		EXPECT_EQ(c->done, sq->done) TH_LOG("%s: a report moves no head",
						    c->name);
	}
	walk_bpf__destroy(skel);
	free(sq);
}

/* An SQE's first 16 bytes as the device reads them: little-endian. */
struct sqe_bytes {
	__u8 b[16];
};

static void put16(struct sqe_bytes *s, int off, __u16 v)
{
	s->b[off] = v;
	s->b[off + 1] = v >> 8;
}

static void put32(struct sqe_bytes *s, int off, __u32 v)
{
	put16(s, off, v);
	put16(s, off + 2, v >> 16);
}

struct sqe_case {
	const char *name;
	__u8 type, flags;		/* bytes 0 and 1 */
	__u16 w2, w12, w14;		/* the u16s at 2, 12 and 14 */
	__u32 w4;			/* the u32 at 4 */
	__u32 fill;			/* the u32 at 8: no field */
	/* expected */
	__u8 sqe_type, wr_cqe, sqes_after;
	__u16 stream_id, task_type;
	__u32 task_id;
};

/* The SQ's stream, which v2 SQEs do not carry. */
#define SQ_STREAM	0x2a

/*
 * ascend-abi.md, "SQE header, STARS v1": type in byte 0's low 6 bits,
 * wr_cqe 0x40 of byte 1, u16 at 2 a place-holder's task type (26:
 * PROFILER_TRACE_EX), u16 stream id at 4 (its low 15 bits: the 16th is
 * the match-mode flag of reports, ascend_trs.h), u16 task id at 6.
 */
static const struct sqe_case v1_cases[] = {
	{ "a kernel", 0, 0, 48, 0, 0, 7 | 300u << 16, 0,
	  0, 0, 0, 7, 0, 300 },
	{ "a place-holder asking for a report", 3, 0x40, 26, 0, 0,
	  5 | 0xffffu << 16, 0, 3, 1, 0, 5, 26, 0xffff },
	{ "a place-holder without", 3, 0x3f, 26, 0, 0, 1, 0,
	  3, 0, 0, 1, 26, 0 },
	{ "type bits above the 6", 0xc3, 0xbf, 26, 0, 0, 2, 0,
	  3, 0, 0, 2, 26, 0 },
	{ "stream id's 16th bit", 4, 0x40, 0, 0, 0, 0x8005 | 9u << 16, 0,
	  4, 1, 0, 5, 0, 9 },
	{ "v2's fields mean nothing", 1, 0x08, 0, 0xffff, 0xffff, 3, ~0u,
	  1, 0, 0, 3, 0, 0 },
	{ "every bit set", 0xff, 0xff, 0xffff, 0xffff, 0xffff, ~0u, ~0u,
	  0x3f, 1, 0, 0x7fff, 0, 0xffff },
};

/*
 * STARS v2: wr_cqe 0x08 of byte 1, u32 task id at 4, no stream id, a
 * place-holder's task type at 12; the SQEs after this one of its task in
 * bits 13-15 of the u16 at 14 (TRS_SQE_V2_LEN_SHIFT).
 */
static const struct sqe_case v2_cases[] = {
	{ "a kernel of 5 SQEs", 0, 0, 48, 0, 4u << 13, 0x12345678, 0,
	  0, 0, 4, SQ_STREAM, 0, 0x12345678 },
	{ "a place-holder asking for a report", 3, 0x08, 0xffff, 26, 0, 77, 0,
	  3, 1, 0, SQ_STREAM, 26, 77 },
	{ "v1's wr_cqe bit", 3, 0x40, 0, 26, 0, 1, 0,
	  3, 0, 0, SQ_STREAM, 26, 1 },
	{ "length bits only from 13", 1, 0, 0, 0, 0x1fff, 2, 0,
	  1, 0, 0, SQ_STREAM, 0, 2 },
	{ "every bit set", 0xff, 0xff, 0xffff, 0xffff, 0xffff, ~0u, ~0u,
	  0x3f, 1, 7, SQ_STREAM, 0, ~0u },
};

static void sqe_check(struct __test_metadata *_metadata, int version,
		      const struct sqe_case *cases, size_t n)
{
	const struct sqe_case *c;
	struct sqe_bpf *skel;
	struct sqe_bytes s;

	SKEL_LOAD(skel, sqe_bpf, stars_version, version);
	for (c = cases; c < cases + n; c++) {
		memset(&s, 0, sizeof(s));
		s.b[0] = c->type;
		s.b[1] = c->flags;
		put16(&s, 2, c->w2);
		put32(&s, 4, c->w4);
		put32(&s, 8, c->fill);
		put16(&s, 12, c->w12);
		put16(&s, 14, c->w14);
		memcpy(skel->bss->in_sqe, s.b, sizeof(skel->bss->in_sqe));
		skel->bss->in_stream = SQ_STREAM;
		PROG_RUN(skel, sqe_bpf, run_sqe_parse);
		EXPECT_EQ(c->sqe_type, skel->bss->out_sqe_type) TH_LOG("%s", c->name);
		EXPECT_EQ(c->wr_cqe, skel->bss->out_wr_cqe) TH_LOG("%s", c->name);
		EXPECT_EQ(c->sqes_after, skel->bss->out_sqes_after)
			TH_LOG("%s", c->name);
		EXPECT_EQ(c->stream_id, skel->bss->out_stream_id)
			TH_LOG("%s", c->name);
		EXPECT_EQ(c->task_type, skel->bss->out_task_type)
			TH_LOG("%s", c->name);
		EXPECT_EQ(c->task_id, skel->bss->out_task_id) TH_LOG("%s", c->name);
	}
	sqe_bpf__destroy(skel);
}

TEST(sqe_parse_v1)
{
	sqe_check(_metadata, 1, v1_cases, ARRAY_SIZE(v1_cases));
}

TEST(sqe_parse_v2)
{
	sqe_check(_metadata, 2, v2_cases, ARRAY_SIZE(v2_cases));
}

/* steptime/abi.h: lat_hist[i] counts 2^i <= ns < 2^(i+1), the last the rest. */
static const struct {
	__u64 ns;
	__u32 bucket;
} lat_cases[] = {
	{ 0, 0 }, { 1, 0 }, { 2, 1 }, { 3, 1 }, { 4, 2 }, { 1023, 9 },
	{ 1024, 10 }, { 1000000, 19 }, { (1ull << 31) - 1, 30 },
	{ 1ull << 31, 31 }, { 1ull << 32, 31 }, { 1ull << 40, 31 },
	{ ~0ull, 31 },
};

TEST(lat_bucket)
{
	struct queues_bpf *skel;
	size_t i;

	SKEL_LOAD(skel, queues_bpf, stars_version, 1);
	for (i = 0; i < ARRAY_SIZE(lat_cases); i++) {
		skel->bss->in_ns = lat_cases[i].ns;
		skel->bss->out_bucket = ~0u;
		PROG_RUN(skel, queues_bpf, run_lat_bucket);
		EXPECT_EQ(lat_cases[i].bucket, skel->bss->out_bucket)
			TH_LOG("%llu ns", lat_cases[i].ns);
	}
	queues_bpf__destroy(skel);
}

/*
 * Device ticks at @hz as ns, rounded down: exact where the product
 * ticks * 10^9 overflows 64 bits (a step of hours at 50 MHz), as long as
 * the result fits. 0 Hz: the frequency unknown, no device time.
 */
static const struct {
	__u64 hz, ticks, ns;
} tick_cases[] = {
	{ 0, 12345, 0 },
	{ 1000000000, 0, 0 }, { 1000000000, 1, 1 }, { 1000000000, ~0ull, ~0ull },
	{ 50000000, 1, 20 }, { 50000000, 49999999, 999999980 },
	{ 50000000, 50000000, 1000000000 },
	{ 50000000, 1000000000000ull, 20000000000000ull },
	{ 50000000, 900000000000000000ull, 18000000000000000000ull },
	{ 19200000, 1, 52 }, { 19200000, 7, 364 },
	{ 19200000, 69120000000ull, 3600000000000ull },
	{ 3, 1, 333333333 }, { 3, 2, 666666666 },
	{ 3, 1000000000, 333333333333333333ull },
};

TEST(ticks_to_ns)
{
	struct step_bpf *skel = NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tick_cases); i++) {
		/* Read-only once loaded: a load per frequency. */
		if (!skel || skel->rodata->counter_freq_hz != tick_cases[i].hz) {
			step_bpf__destroy(skel);
			SKEL_LOAD(skel, step_bpf, counter_freq_hz,
				  tick_cases[i].hz);
		}
		skel->bss->in_ticks = tick_cases[i].ticks;
		skel->bss->out_ns = 1;
		PROG_RUN(skel, step_bpf, run_ticks_to_ns);
		EXPECT_EQ(tick_cases[i].ns, skel->bss->out_ns)
			TH_LOG("%llu ticks at %llu Hz", tick_cases[i].ticks,
			       tick_cases[i].hz);
	}
	step_bpf__destroy(skel);
}

/*
 * A journaled SQ's pending segments: step 7's 3 tasks up to SQE 10 and its
 * stream END's place-holder (SQE 11), then 2 tasks of no step up to SQE
 * 20. Each snapshot of a head completes the segments sent before it, and
 * only those: short of the tail by 15 (SQE 5), none; by 5 (SQE 15), step
 * 7's, which finishes, done; drained (SQE 20), the rest.
 */
TEST(journal_head)
{
	static const struct {
		__u32 flags, j_head, completions, state;
	} snaps[] = {
		{ STEPTIME_SNAP_HEAD | 15 << 16, 0, 0, STEPTIME_STEP_OPEN },
		{ STEPTIME_SNAP_HEAD | 5 << 16, 2, 3, STEPTIME_STEP_DONE },
		{ STEPTIME_SNAP_HEAD | 5 << 16, 2, 3, STEPTIME_STEP_DONE },
		{ STEPTIME_SNAP_DRAINED, 3, 3, STEPTIME_STEP_DONE },
	};
	struct steptime_step_key k = { .tgid = 4242, .index_id = 7 };
	struct st_sq *sq = calloc(1, sizeof(*sq));
	struct steptime_step_stats rec = {
		.state = STEPTIME_STEP_OPEN, .tasks = 3,
		.flags = STEPTIME_F_STREAM,
	};
	struct journal_bpf *skel;
	__u32 slot = 0;
	size_t i;

	ASSERT_NE(NULL, sq);
	SKEL_LOAD(skel, journal_bpf, stars_version, 1);
	sq->live = 1;
	sq->j_tasks = 5;
	sq->j_sqes = 20;
	sq->jsegs[0] = (struct st_jseg){ .index_id = 7, .end = 10, .tasks = 3 };
	sq->jsegs[1] = (struct st_jseg){ .index_id = 7, .end = 12,
					 .flags = ST_JSEG_END };
	sq->jsegs[2] = (struct st_jseg){ .end = 20, .tasks = 2 };
	sq->j_tail = 3;
	ASSERT_EQ(0, bpf_map__update_elem(skel->maps.sqs, &slot, sizeof(slot),
					  sq, sizeof(*sq), BPF_ANY));
	ASSERT_EQ(0, bpf_map__update_elem(skel->maps.steps, &k, sizeof(k),
					  &rec, sizeof(rec), BPF_ANY));
	skel->bss->in_tgid = k.tgid;
	skel->bss->in_cnt = (__u64)5 << 32 | 20;
	for (i = 0; i < ARRAY_SIZE(snaps); i++) {
		skel->bss->in_flags = snaps[i].flags;
		PROG_RUN(skel, journal_bpf, run_journal_snap);
		ASSERT_EQ(0, bpf_map__lookup_elem(skel->maps.sqs, &slot,
						  sizeof(slot), sq,
						  sizeof(*sq), 0));
		ASSERT_EQ(0, bpf_map__lookup_elem(skel->maps.steps, &k,
						  sizeof(k), &rec,
						  sizeof(rec), 0));
		EXPECT_EQ(snaps[i].j_head, sq->j_head) TH_LOG("snapshot %zu", i);
		EXPECT_EQ(snaps[i].completions, rec.completions)
			TH_LOG("snapshot %zu", i);
		EXPECT_EQ(snaps[i].state, rec.state) TH_LOG("snapshot %zu", i);
	}
	EXPECT_TRUE(rec.flags & STEPTIME_F_STREAM_END);
	EXPECT_FALSE(rec.flags & STEPTIME_F_UIO);
	journal_bpf__destroy(skel);
	free(sq);
}

/*
 * A journal begun at the SQ's 10th SQE (libsteptime patched late): its
 * BEGIN snapshot of 2 SQEs, taken right after the send that also opened
 * step 7 on the SQ's stream, makes 8 the driver's count before it. Step 7
 * saw every send of its own: not flagged.
 */
TEST(journal_begin_late)
{
	struct steptime_step_key k = { .tgid = 4243, .index_id = 7 };
	struct st_sq *sq = calloc(1, sizeof(*sq));
	struct steptime_step_stats rec = {
		.state = STEPTIME_STEP_OPEN, .flags = STEPTIME_F_STREAM,
	};
	__u64 *shr = calloc(1, 2048);	/* trs_sq_shr_info: send_ok at 1032 */
	struct journal_bpf *skel;
	__u32 slot = 0;

	ASSERT_NE(NULL, sq);
	ASSERT_NE(NULL, shr);
	SKEL_LOAD(skel, journal_bpf, stars_version, 1);
	shr[1032 / 8] = 10;
	sq->live = 1;
	sq->stream_open = 1;
	sq->stream_index = 7;
	sq->j_shr = (__u64)(unsigned long)shr;
	ASSERT_EQ(0, bpf_map__update_elem(skel->maps.sqs, &slot, sizeof(slot),
					  sq, sizeof(*sq), BPF_ANY));
	ASSERT_EQ(0, bpf_map__update_elem(skel->maps.steps, &k, sizeof(k),
					  &rec, sizeof(rec), BPF_ANY));
	skel->bss->in_tgid = k.tgid;
	skel->bss->in_cnt = 2;
	skel->bss->in_flags = STEPTIME_SNAP_BEGIN;
	PROG_RUN(skel, journal_bpf, run_journal_snap);
	ASSERT_EQ(0, bpf_map__lookup_elem(skel->maps.sqs, &slot, sizeof(slot),
					  sq, sizeof(*sq), 0));
	ASSERT_EQ(0, bpf_map__lookup_elem(skel->maps.steps, &k, sizeof(k),
					  &rec, sizeof(rec), 0));
	EXPECT_EQ(8, sq->j_okoff);
	EXPECT_EQ(2, sq->j_sqes);
	EXPECT_FALSE(rec.flags & STEPTIME_F_UIO);
	journal_bpf__destroy(skel);
	free(shr);
	free(sq);
}

TEST_HARNESS_MAIN
