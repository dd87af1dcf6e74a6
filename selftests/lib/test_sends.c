// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The journal of sends (lib/sends.c) on the host: a libascend_hal.so of
 * the test's own (sends/fake_hal.c) and two callers of it, one linked
 * -z now with full RELRO and one lazily bound, dlopen()ed RTLD_LOCAL as
 * Python's ctypes or CANN's libruntime.so loads theirs. Their GOT entries
 * are patched once each, their calls reach the HAL as before, and each
 * send, stream mark and drained head is journaled in the mark ring, in
 * program order with the marks, byte for byte as steptime/abi.h says (the
 * ring parts need root: maps of steptime's layout, as test_marks).
 */
#include <dlfcn.h>
#include <limits.h>
#include <ascend_trs.h>
#include "st_internal.h"
#include "st_test.h"
#include "sends/fake_hal.h"
#include "kselftest_harness.h"

#define DEV	3

static void *hal_fn(const char *name)
{
	void *h = dlopen("libascend_hal.so", RTLD_NOW | RTLD_NOLOAD);
	void *f = h ? dlsym(h, name) : NULL;

	if (h)
		dlclose(h);
	return f;
}

/* The caller @name, beside this program in sends/. */
static const struct caller_ops *caller_load(const char *name)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);
	void *h;

	if (n <= 0)
		return NULL;
	path[n] = 0;
	snprintf(strrchr(path, '/'), 64, "/sends/%s", name);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "# %s\n", dlerror());
		return NULL;
	}
	return dlsym(h, "caller_ops");
}

static __u64 lib_count(size_t off)
{
	struct steptime_lib_counters c;

	steptime__lib_counters(&c, sizeof(c));
	return *(__u64 *)((char *)&c + off);
}

#define LIB_COUNT(name) lib_count(offsetof(struct steptime_lib_counters, name))

/* A task of one SQE, or the place-holder of a stream mark. */
/* @n tasks of one SQE each. */
static void sqe_tasks(struct trs_sqe *s, int n)
{
	memset(s, 0, n * sizeof(*s));
	while (n--)
		s[n].type = TRS_SQE_AICPU;
}

static void sqe_mark(struct trs_sqe *s, __u64 index_id, __u16 tag, bool v2)
{
	struct trs_sqe_v2 *s2 = (void *)s;

	memset(s, 0, sizeof(*s));
	s->type = TRS_SQE_PLACE_HOLDER;
	if (v2)
		s2->place_holder.task_type = TRS_TASK_PROFILER_TRACE_EX;
	else
		s->block_dim = TRS_TASK_PROFILER_TRACE_EX;
	s->place_holder.profiler_trace_id = index_id;
	s->place_holder.tag_id = tag;
}

/*
 * Both callers' four HAL calls patched, once: a second scan finds nothing
 * new, and every call still reaches the HAL.
 */
TEST(got_patched)
{
	const struct caller_ops *now, *lazy;
	struct trs_sqe sqes[2];
	__u64 patched = LIB_COUNT(got_patched);
	__u32 sq, h;

	now = caller_load("libcaller_now.so");
	ASSERT_NE(NULL, now);
	lazy = caller_load("libcaller_lazy.so");
	ASSERT_NE(NULL, lazy);
	ASSERT_NE(NULL, hal_fn("halSqTaskSend"));
	st_sends_scan();
	EXPECT_EQ(patched + 8, LIB_COUNT(got_patched));
	EXPECT_EQ(0, LIB_COUNT(got_foreign));
	st_sends_scan();
	EXPECT_EQ(patched + 8, LIB_COUNT(got_patched));
	sqe_tasks(sqes, 2);
	ASSERT_EQ(0, now->alloc(DEV, 16, &sq));
	EXPECT_EQ(0, now->send(DEV, sq, sqes, 2));
	EXPECT_EQ(0, lazy->send(DEV, sq, sqes, 1));
	EXPECT_EQ(0, lazy->head(DEV, sq, &h));
	EXPECT_EQ(3, ((__u64 (*)(__u32))hal_fn("fake_hal_send_ok"))(sq));
	EXPECT_EQ(0, now->free_sq(DEV, sq));
}

FIXTURE(ring) {
	struct st_pins p;
	char skip[128];
	const struct caller_ops *c;
	void (*set_head)(__u32 sq, __u32 head);
	void (*refuse_next)(void);
	__u64 (*send_ok)(__u32 sq);
};

FIXTURE_SETUP(ring)
{
	int err = st_pins_with_steps(&self->p, self->skip, sizeof(self->skip));

	if (err == 1)
		return;
	ASSERT_EQ(0, err);
	/* A load that reads the journal (load --journal). */
	self->p.hdr->flags = STEPTIME_MARKS_F_JOURNAL;
	self->c = caller_load("libcaller_now.so");
	ASSERT_NE(NULL, self->c);
	self->set_head = hal_fn("fake_hal_set_head");
	self->refuse_next = hal_fn("fake_hal_refuse_next");
	self->send_ok = hal_fn("fake_hal_send_ok");
	ASSERT_NE(NULL, self->set_head);
	ASSERT_NE(NULL, self->refuse_next);
	ASSERT_NE(NULL, self->send_ok);
}

FIXTURE_TEARDOWN(ring)
{
	st_pins_fini(&self->p);
}

static void expect_ent(struct __test_metadata *_metadata,
		       const struct steptime_ring *r, __u64 pos, __u64 index,
		       __u32 tag, __u32 stream, __u64 time)
{
	const struct steptime_mark *m = &r->ring[pos % STEPTIME_MARK_RING];

	EXPECT_EQ(pos + 1, m->seq) TH_LOG("entry %llu", (unsigned long long)pos);
	EXPECT_EQ(index, m->index_id) TH_LOG("entry %llu", (unsigned long long)pos);
	EXPECT_EQ(tag, m->tag) TH_LOG("entry %llu", (unsigned long long)pos);
	EXPECT_EQ(stream, m->stream) TH_LOG("entry %llu", (unsigned long long)pos);
	EXPECT_EQ(time, m->time_ns) TH_LOG("entry %llu", (unsigned long long)pos);
}

#define CNT(tasks, sqes)	((__u64)(tasks) << 32 | (sqes))

/*
 * What was sent before a mark is in the ring before it; a stream mark's
 * place-holder comes after a snapshot of what came before it, with its
 * position; a refused send adds nothing; a head that moved is said once,
 * with how far it is short of the tail (none: drained); a
 * send through dlsym() is not seen, but the next send finds the tail past
 * the journal's and says so (the BPF program also checks the driver's
 * send_ok).
 */
TEST_F(ring, journal_in_program_order)
{
	const struct steptime_ring *r = st_marks_ring();
	struct steptime_step *st;
	struct trs_sqe sqes[2];
	__u64 base, key;
	__u32 sq, h;

	NEED_PINS();
	st = steptime_step__new();
	ASSERT_NE(NULL, st);
	EXPECT_EQ(STEPTIME_RING_F_JOURNAL, r->res[0]);
	ASSERT_EQ(0, self->c->alloc(DEV, 16, &sq));
	key = STEPTIME_SQ_KEY(DEV, 0, sq);
	sqe_tasks(sqes, 2);
	base = r->head;
	ASSERT_EQ(0, self->c->send(DEV, sq, sqes, 2));
	ASSERT_EQ(0, self->c->send(DEV, sq, sqes, 1));
	/* Not yet in the ring: sends cost no entry of their own. */
	EXPECT_EQ(base, r->head);
	ASSERT_EQ(0, steptime_step__mark(st, STEPTIME_TAG_START, NULL));
	expect_ent(_metadata, r, base, key, STEPTIME_TAG_SQ_SNAP, 0, CNT(2, 3));
	EXPECT_EQ(STEPTIME_TAG_START, r->ring[(base + 1) % STEPTIME_MARK_RING].tag);
	/* A stream START (v1 layout), then its END (v2 layout). */
	sqe_mark(&sqes[0], 77, STEPTIME_TAG_START, false);
	ASSERT_EQ(0, self->c->send(DEV, sq, sqes, 1));
	expect_ent(_metadata, r, base + 2, key, STEPTIME_TAG_SQ_SNAP, 0,
		   CNT(2, 3));
	expect_ent(_metadata, r, base + 3, 77, STEPTIME_TAG_SQ_START, 3, key);
	sqe_tasks(sqes, 1);
	self->refuse_next();
	EXPECT_EQ(FAKE_ENORES, self->c->send(DEV, sq, sqes, 2));
	ASSERT_EQ(0, self->c->send(DEV, sq, sqes, 2));
	sqe_mark(&sqes[0], 77, STEPTIME_TAG_END, true);
	ASSERT_EQ(0, self->c->send(DEV, sq, sqes, 1));
	expect_ent(_metadata, r, base + 4, key, STEPTIME_TAG_SQ_SNAP, 0,
		   CNT(3, 6));
	expect_ent(_metadata, r, base + 5, 77, STEPTIME_TAG_SQ_END, 6, key);
	EXPECT_EQ(base + 6, r->head);
	/*
	 * The head short of the tail (7) by 2, by 1: each said with how far,
	 * once; at it: drained, once. Nothing moved, nothing said.
	 */
	self->set_head(sq, 5);
	ASSERT_EQ(0, self->c->head(DEV, sq, &h));
	expect_ent(_metadata, r, base + 6, key, STEPTIME_TAG_SQ_SNAP,
		   STEPTIME_SNAP_HEAD | 2 << 16, CNT(3, 7));
	self->set_head(sq, 6);
	ASSERT_EQ(0, self->c->head(DEV, sq, &h));
	ASSERT_EQ(0, self->c->head(DEV, sq, &h));
	expect_ent(_metadata, r, base + 7, key, STEPTIME_TAG_SQ_SNAP,
		   STEPTIME_SNAP_HEAD | 1 << 16, CNT(3, 7));
	EXPECT_EQ(base + 8, r->head);
	self->set_head(sq, 7);
	ASSERT_EQ(0, self->c->head(DEV, sq, &h));
	expect_ent(_metadata, r, base + 8, key, STEPTIME_TAG_SQ_SNAP,
		   STEPTIME_SNAP_DRAINED, CNT(3, 7));
	ASSERT_EQ(0, self->c->head(DEV, sq, &h));
	EXPECT_EQ(base + 9, r->head);
	/* Around the journal: the driver counts it, the journal not. */
	sqe_tasks(sqes, 1);
	ASSERT_EQ(0, self->c->send_dlsym(DEV, sq, sqes, 1));
	EXPECT_EQ(8, self->send_ok(sq));
	ASSERT_EQ(0, steptime_step__mark(st, STEPTIME_TAG_END, NULL));
	EXPECT_EQ(STEPTIME_TAG_END, r->ring[(base + 9) % STEPTIME_MARK_RING].tag);
	EXPECT_EQ(base + 10, r->head);
	/*
	 * The next send finds the tail one past the journal's: that SQE is
	 * counted (as the driver's send_ok), in no task, and said.
	 */
	ASSERT_EQ(0, self->c->send(DEV, sq, sqes, 1));
	ASSERT_EQ(0, steptime__mark(99, STEPTIME_TAG_START, NULL));
	expect_ent(_metadata, r, base + 10, key, STEPTIME_TAG_SQ_SNAP,
		   STEPTIME_SNAP_GAP, CNT(4, 9));
	EXPECT_EQ(9, self->send_ok(sq));
	/* Said once. */
	self->set_head(sq, 9);
	ASSERT_EQ(0, self->c->head(DEV, sq, &h));
	expect_ent(_metadata, r, base + 12, key, STEPTIME_TAG_SQ_SNAP,
		   STEPTIME_SNAP_DRAINED, CNT(4, 9));
	/* A new SQ of the same ids starts from zero. */
	ASSERT_EQ(0, self->c->free_sq(DEV, sq));
	steptime_step__free(st);
}

/*
 * Sends that wrap the SQ, one past its end and one onto it: the journal's
 * tail wraps with the driver's (the drained head is found there), and no
 * SQE is taken for one sent around the journal.
 */
TEST_F(ring, wrap_drained)
{
	const struct steptime_ring *r = st_marks_ring();
	struct steptime_step *st;
	struct trs_sqe sqes[3];
	__u64 base, key;
	__u32 sq, h;

	NEED_PINS();
	st = steptime_step__new();
	ASSERT_NE(NULL, st);
	ASSERT_EQ(0, self->c->alloc(DEV, 4, &sq));
	key = STEPTIME_SQ_KEY(DEV, 0, sq);
	sqe_tasks(sqes, 3);
	ASSERT_EQ(0, steptime_step__mark(st, STEPTIME_TAG_START, NULL));
	base = r->head;
	/* 0..2, then 3 and around to 0..1: the tail at 2. */
	ASSERT_EQ(0, self->c->send(DEV, sq, sqes, 3));
	ASSERT_EQ(0, self->c->send(DEV, sq, sqes, 3));
	self->set_head(sq, 2);
	ASSERT_EQ(0, self->c->head(DEV, sq, &h));
	expect_ent(_metadata, r, base, key, STEPTIME_TAG_SQ_SNAP,
		   STEPTIME_SNAP_DRAINED, CNT(2, 6));
	/* 2..3: the tail onto the SQ's end, 0. */
	ASSERT_EQ(0, self->c->send(DEV, sq, sqes, 2));
	self->set_head(sq, 0);
	ASSERT_EQ(0, self->c->head(DEV, sq, &h));
	expect_ent(_metadata, r, base + 1, key, STEPTIME_TAG_SQ_SNAP,
		   STEPTIME_SNAP_DRAINED, CNT(3, 8));
	ASSERT_EQ(0, self->c->send(DEV, sq, sqes, 1));
	ASSERT_EQ(0, steptime_step__mark(st, STEPTIME_TAG_END, NULL));
	expect_ent(_metadata, r, base + 2, key, STEPTIME_TAG_SQ_SNAP, 0,
		   CNT(4, 9));
	EXPECT_EQ(9, self->send_ok(sq));
	ASSERT_EQ(0, self->c->free_sq(DEV, sq));
	steptime_step__free(st);
}

/*
 * A journal begun late: the SQ allocated and sent to before the library
 * saw its calls (here through dlsym()), as under Python's `import
 * steptime`. Its first send it takes is said at once (BEGIN); the SQ's
 * depth, asked of the HAL then, lets a head short of the tail be said
 * (without it, none could be) and the tail wrap with the driver's.
 */
TEST_F(ring, late_begin)
{
	int (*alloc)(__u32, struct fake_alloc_in *, struct fake_alloc_out *) =
		hal_fn("halSqCqAllocate");
	int (*send)(__u32, struct trs_task_send_info *) =
		hal_fn("halSqTaskSend");
	const struct steptime_ring *r = st_marks_ring();
	struct fake_alloc_in in = { .sqeDepth = 8 };
	struct trs_task_send_info si = { .sqe_num = 3 };
	struct fake_alloc_out out = {};
	struct trs_sqe sqes[3];
	__u64 base, key;
	__u32 h;

	NEED_PINS();
	ASSERT_NE(NULL, alloc);
	ASSERT_NE(NULL, send);
	sqe_tasks(sqes, 3);
	ASSERT_EQ(0, alloc(DEV, &in, &out));
	key = STEPTIME_SQ_KEY(DEV, 0, out.sqId);
	si.sqId = out.sqId;
	si.sqe_addr = (__u64)(unsigned long)sqes;
	ASSERT_EQ(0, send(DEV, &si));
	/* The ring registered, as by the app's first mark. */
	ASSERT_EQ(0, steptime__mark(98, STEPTIME_TAG_START, NULL));
	base = r->head;
	/* 3..4: the journal's first send, said at once. */
	ASSERT_EQ(0, self->c->send(DEV, out.sqId, sqes, 2));
	expect_ent(_metadata, r, base, key, STEPTIME_TAG_SQ_SNAP,
		   STEPTIME_SNAP_BEGIN, CNT(1, 2));
	/* 5..6, then 7 and around to 0: the tail at 1. */
	ASSERT_EQ(0, self->c->send(DEV, out.sqId, sqes, 2));
	ASSERT_EQ(0, self->c->send(DEV, out.sqId, sqes, 2));
	self->set_head(out.sqId, 6);
	ASSERT_EQ(0, self->c->head(DEV, out.sqId, &h));
	expect_ent(_metadata, r, base + 1, key, STEPTIME_TAG_SQ_SNAP,
		   STEPTIME_SNAP_HEAD | 3 << 16, CNT(3, 6));
	self->set_head(out.sqId, 1);
	ASSERT_EQ(0, self->c->head(DEV, out.sqId, &h));
	expect_ent(_metadata, r, base + 2, key, STEPTIME_TAG_SQ_SNAP,
		   STEPTIME_SNAP_DRAINED, CNT(3, 6));
	EXPECT_EQ(base + 3, r->head);
	EXPECT_EQ(9, self->send_ok(out.sqId));
	ASSERT_EQ(0, self->c->free_sq(DEV, out.sqId));
}

/*
 * A runtime polling the head while it sends (CANN's recycle thread): a
 * head that has not moved is said once, however many sends came since,
 * so that polling costs no ring entry per send.
 */
TEST_F(ring, head_polled)
{
	const struct steptime_ring *r = st_marks_ring();
	struct trs_sqe sqes[2];
	__u64 base, key;
	__u32 sq, h;

	NEED_PINS();
	ASSERT_EQ(0, steptime__mark(97, STEPTIME_TAG_START, NULL));
	ASSERT_EQ(0, self->c->alloc(DEV, 16, &sq));
	key = STEPTIME_SQ_KEY(DEV, 0, sq);
	sqe_tasks(sqes, 2);
	base = r->head;
	ASSERT_EQ(0, self->c->send(DEV, sq, sqes, 2));
	self->set_head(sq, 1);
	ASSERT_EQ(0, self->c->head(DEV, sq, &h));
	expect_ent(_metadata, r, base, key, STEPTIME_TAG_SQ_SNAP,
		   STEPTIME_SNAP_HEAD | 1 << 16, CNT(1, 2));
	ASSERT_EQ(0, self->c->send(DEV, sq, sqes, 1));
	ASSERT_EQ(0, self->c->head(DEV, sq, &h));
	ASSERT_EQ(0, self->c->send(DEV, sq, sqes, 1));
	ASSERT_EQ(0, self->c->head(DEV, sq, &h));
	EXPECT_EQ(base + 1, r->head);
	self->set_head(sq, 4);
	ASSERT_EQ(0, self->c->head(DEV, sq, &h));
	expect_ent(_metadata, r, base + 1, key, STEPTIME_TAG_SQ_SNAP,
		   STEPTIME_SNAP_DRAINED, CNT(3, 4));
	ASSERT_EQ(0, self->c->free_sq(DEV, sq));
}

TEST_HARNESS_MAIN
