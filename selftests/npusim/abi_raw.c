// SPDX-License-Identifier: GPL-2.0
/*
 * npusim driven the way CANN's runtime drives the real driver, written from
 * the ABI tables only (ascend-abi.md sections 2-3): raw command values and
 * byte offsets, no project header, so that a layout mistake shared by the
 * header and the module cannot hide. Little-endian LP64 hosts (x86_64,
 * aarch64), as the ABI is.
 *
 * The flow: one TSDRV fd per device; a stream id from TRS_RES_ID_ALLOC; an
 * SQ-CQ pair for it (ALLOC type 0, stream in info[0], a trs_uio_info
 * pointer in res[0..1]); a logic CQ for it (ALLOC type 2, sqId 0, cqeSize
 * 32, stream in info[0], thread id in info[1]); tasks without wr_cqe and a
 * recycle task with wr_cqe every N; progress from SQCQ_QUERY SQ_HEAD; the
 * reports from RECV type 2; then FREE type 2, FREE type 0, RES_ID_FREE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include "kselftest_harness.h"
#include "ksft_filter.h"

#define DEV		"/dev/npusim_manager"

/* The tables' values: magic 'Z' manager, magic 'X' TRS (LP64). */
#define CMD_OPEN	0x00005a00ul
#define CMD_CLOSE	0x00005a01ul
#define CMD_STATUS	0x00005a02ul
#define CMD_RES_ALLOC	0xc02c5800ul	/* _IOWR('X', 0, 44) */
#define CMD_RES_FREE	0x402c5801ul	/* _IOW('X', 1, 44) */
#define CMD_ALLOC	0xc060580ful
#define CMD_FREE	0x40345810ul
#define CMD_QUERY	0xc0345812ul
#define CMD_SEND	0x40405813ul
#define CMD_RECV	0xc0485814ul

#define TYPE_NORMAL	0
#define TYPE_LOGIC	2
#define PROP_SQ_HEAD	1
#define PROP_SQ_TAIL	2
#define PROP_SQ_DEPTH	7
#define SQE_SIZE	64
#define LCQE_SIZE	32
#define HWCQE_SIZE	16
#define DEPTH		256
#define RECYCLE_EVERY	64	/* a wr_cqe task every 64, as the runtime */

static void put8(uint8_t *b, size_t off, uint8_t v) { b[off] = v; }
static void put16(uint8_t *b, size_t off, uint16_t v) { memcpy(b + off, &v, 2); }
static void put32(uint8_t *b, size_t off, uint32_t v) { memcpy(b + off, &v, 4); }
static void put64(uint8_t *b, size_t off, uint64_t v) { memcpy(b + off, &v, 8); }

static uint16_t get16(const uint8_t *b, size_t off)
{
	uint16_t v;

	memcpy(&v, b + off, 2);
	return v;
}

static uint32_t get32(const uint8_t *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

static uint64_t get64(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

static int raw_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* { char module_name[256]; s32 device_id @256 }: 260 bytes. */
static int raw_open(int dev)
{
	uint8_t a[260] = { 0 };
	int fd = open(DEV, O_RDWR), err;

	if (fd < 0)
		return -errno;
	strcpy((char *)a, "TSDRV");
	put32(a, 256, dev);
	err = raw_ioctl(fd, CMD_OPEN, a);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* trs_res_id_para, 44 bytes: tsid @0, res_type @4, id @8. */
static int raw_res(int fd, unsigned long cmd, uint32_t *id)
{
	uint8_t a[44] = { 0 };
	int err;

	put32(a, 4, 0);		/* stream */
	put32(a, 8, *id);
	err = raw_ioctl(fd, cmd, a);
	*id = get32(a, 8);
	return err;
}

/*
 * halSqCqInputInfo, 96 bytes, with the trs_uio_info pointer at @72 (64
 * bytes; uio_flag @58, soft_que_flag @57).
 */
static int raw_alloc(int fd, uint32_t type, uint32_t stream, uint32_t *sq,
		     uint32_t *cq, uint8_t *uio)
{
	uint8_t a[96] = { 0 };
	int err;

	memset(uio, 0xa5, 64);
	put64(uio, 0, 0);	/* sq_que_addr 0: kernel mode */
	put32(a, 0, type);
	put32(a, 4, 0);		/* tsId */
	put32(a, 8, type == TYPE_NORMAL ? SQE_SIZE : 0);
	put32(a, 12, type == TYPE_NORMAL ? HWCQE_SIZE : LCQE_SIZE);
	put32(a, 16, type == TYPE_NORMAL ? DEPTH : 0);
	put32(a, 20, DEPTH);
	put32(a, 32, 0);	/* cqId */
	put32(a, 36, 0);	/* sqId: 0 for a logic CQ */
	put32(a, 40, stream);	/* info[0] */
	put32(a, 44, (uint32_t)syscall(SYS_gettid));	/* info[1] */
	put64(a, 72, (uintptr_t)uio);
	err = raw_ioctl(fd, CMD_ALLOC, a);
	*cq = get32(a, 32);
	*sq = get32(a, 36);
	return err;
}

/* halSqCqFreeInfo, 52 bytes: type @0, tsId @4, sqId @8, cqId @12, flag @16. */
static int raw_free(int fd, uint32_t type, uint32_t sq, uint32_t cq)
{
	uint8_t a[52] = { 0 };

	put32(a, 0, type);
	put32(a, 8, sq);
	put32(a, 12, cq);
	return raw_ioctl(fd, CMD_FREE, a);
}

/* halSqCqQueryInfo, 52 bytes: prop @16, value[0] @20. */
static int raw_query(int fd, uint32_t sq, uint32_t prop, uint32_t *v)
{
	uint8_t a[52] = { 0 };
	int err;

	put32(a, 8, sq);
	put32(a, 16, prop);
	err = raw_ioctl(fd, CMD_QUERY, a);
	*v = get32(a, 20);
	return err;
}

/* halTaskSendInfo, 64 bytes: pos out @28. */
static int raw_send(int fd, uint32_t sq, const void *sqes, uint32_t n,
		    uint32_t *pos)
{
	uint8_t a[64] = { 0 };
	int err;

	put32(a, 8, sq);
	put32(a, 12, (uint32_t)-1);	/* timeout: forever */
	put64(a, 16, (uintptr_t)sqes);
	put32(a, 24, n);
	err = raw_ioctl(fd, CMD_SEND, a);
	*pos = get32(a, 28);
	return err;
}

/* halReportRecvInfo, 72 bytes: report_cqe_num out @28. */
static int raw_recv(int fd, uint32_t type, uint32_t cq, void *cqes, uint32_t n,
		    int32_t timeout, uint32_t *got)
{
	uint8_t a[72] = { 0 };
	int err;

	put32(a, 0, type);
	put32(a, 8, cq);
	put32(a, 12, (uint32_t)timeout);
	put64(a, 16, (uintptr_t)cqes);
	put32(a, 24, n);
	put32(a, 28, 0xdeadbeef);
	err = raw_ioctl(fd, CMD_RECV, a);
	*got = get32(a, 28);
	return err;
}

/* STARS v1 SQE: type @0, wr_cqe 0x40 @1, stream u16 @4, task u16 @6. */
static void raw_task(uint8_t *s, uint8_t type, uint16_t stream,
		     uint16_t task, int wr_cqe)
{
	memset(s, 0, SQE_SIZE);
	put8(s, 0, type);
	put8(s, 1, wr_cqe ? 0x40 : 0);
	put16(s, 4, stream);
	put16(s, 6, task);
	put32(s, 60, 1000);	/* npusim: 1 us */
}

/* A CANN step mark: place-holder (3), task type 26 @2, no wr_cqe. */
static void raw_mark(uint8_t *s, uint16_t stream, uint16_t task, uint64_t id,
		     uint16_t tag)
{
	raw_task(s, 3, stream, task, 0);
	put16(s, 2, 26);
	put64(s, 16, id);
	put64(s, 24, 0xffffffffull);
	put16(s, 32, tag);
	put32(s, 60, 0);
}

/* What one device's stream is made of in CANN's runtime. */
struct rt_stream {
	int fd;
	uint32_t stream, sq, cq, lcq;
	uint8_t uio[64];
};

static int rt_stream_create(struct rt_stream *s, int dev)
{
	uint8_t luio[64];
	uint32_t unused;
	int err;

	s->fd = raw_open(dev);
	if (s->fd < 0)
		return s->fd;
	s->stream = 0xffff;
	err = raw_res(s->fd, CMD_RES_ALLOC, &s->stream);
	if (!err)
		err = raw_alloc(s->fd, TYPE_NORMAL, s->stream, &s->sq, &s->cq,
				s->uio);
	if (!err)
		err = raw_alloc(s->fd, TYPE_LOGIC, s->stream, &unused, &s->lcq,
				luio);
	return err;
}

static uint32_t wait_head(int fd, uint32_t sq, uint32_t want)
{
	struct timespec t = { 0, 200000 };
	uint32_t head = ~0u;
	int i;

	for (i = 0; i < 50000; i++) {
		if (raw_query(fd, sq, PROP_SQ_HEAD, &head))
			return ~0u;
		if (head == want)
			break;
		nanosleep(&t, NULL);
	}
	return head;
}

FIXTURE(rt) {
	struct rt_stream d0, d1;
};

FIXTURE_SETUP(rt)
{
	ASSERT_EQ(0, rt_stream_create(&self->d0, 0));
	ASSERT_EQ(0, rt_stream_create(&self->d1, 1));
}

FIXTURE_TEARDOWN(rt)
{
	close(self->d0.fd);
	close(self->d1.fd);
}

/* Two devices hand out the same ids: ids are per (device, TS). */
TEST_F(rt, ids_collide_across_devices)
{
	EXPECT_EQ(self->d0.stream, self->d1.stream);
	EXPECT_EQ(self->d0.sq, self->d1.sq);
	EXPECT_EQ(self->d0.cq, self->d1.cq);
	EXPECT_EQ(self->d0.lcq, self->d1.lcq);
	/* kernel mode: uio_flag 0, soft_que_flag 0, written back */
	EXPECT_EQ(0, self->d0.uio[58]);
	EXPECT_EQ(0, self->d0.uio[57]);
}

/*
 * Sparse reports: tasks without wr_cqe and marks finish silently; the
 * recycle task every 64 reports to the stream's logic CQ; SQ_HEAD tells how
 * far the SQ went. Both devices at once, with the same ids.
 */
TEST_F(rt, sparse_reports_and_sq_head)
{
	struct rt_stream *st[2] = { &self->d0, &self->d1 };
	static uint8_t s[2 * RECYCLE_EVERY * SQE_SIZE];
	uint8_t c[4 * LCQE_SIZE];
	uint32_t pos, got, v, i, k;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < 2 * RECYCLE_EVERY; i++) {
			uint8_t *e = s + i * SQE_SIZE;

			if (i == 10 || i == 20)
				raw_mark(e, st[k]->stream, i, 1000 + k,
					 i == 10 ? 0 : 1);
			else
				raw_task(e, 0, st[k]->stream, i,
					 (i + 1) % RECYCLE_EVERY == 0);
		}
		ASSERT_EQ(0, raw_send(st[k]->fd, st[k]->sq, s,
				      2 * RECYCLE_EVERY, &pos));
		EXPECT_EQ(0, pos);
	}
	for (k = 0; k < 2; k++) {
		EXPECT_EQ(2 * RECYCLE_EVERY,
			  wait_head(st[k]->fd, st[k]->sq, 2 * RECYCLE_EVERY));
		ASSERT_EQ(0, raw_query(st[k]->fd, st[k]->sq, PROP_SQ_TAIL, &v));
		EXPECT_EQ(2 * RECYCLE_EVERY, v);
		ASSERT_EQ(0, raw_query(st[k]->fd, st[k]->sq, PROP_SQ_DEPTH, &v));
		EXPECT_EQ(DEPTH, v);
		/* exactly the two recycle tasks reported */
		ASSERT_EQ(0, raw_recv(st[k]->fd, TYPE_LOGIC, st[k]->lcq, c, 4,
				      0, &got));
		ASSERT_EQ(2, got);
		for (i = 0; i < 2; i++) {
			const uint8_t *r = c + i * LCQE_SIZE;

			EXPECT_EQ(st[k]->stream, get16(r, 0));
			EXPECT_EQ((i + 1) * RECYCLE_EVERY - 1, get16(r, 2));
			EXPECT_EQ(0, get32(r, 4));		/* error_code */
			EXPECT_EQ(0, r[9]);			/* sqe_type */
			EXPECT_EQ(st[k]->sq, get16(r, 10));
			EXPECT_EQ((i + 1) * RECYCLE_EVERY, get16(r, 12));
			EXPECT_EQ(0, get16(r, 14) & 4);		/* error_bit */
		}
		/* nothing for the hardware CQ: the stream has a logic CQ */
		EXPECT_EQ(0, raw_recv(st[k]->fd, TYPE_NORMAL, st[k]->cq, c, 4,
				      0, &got));
		EXPECT_EQ(0, got);
	}
}

/* A failed task reports even without wr_cqe; timeout 0 never waits. */
TEST_F(rt, failure_reports)
{
	uint8_t s[SQE_SIZE], c[LCQE_SIZE];
	uint32_t pos, got;

	raw_task(s, 1, self->d0.stream, 5, 0);
	put32(s, 56, 0x55);		/* npusim: fail with 0x55 */
	ASSERT_EQ(0, raw_send(self->d0.fd, self->d0.sq, s, 1, &pos));
	ASSERT_EQ(1, wait_head(self->d0.fd, self->d0.sq, 1));
	ASSERT_EQ(0, raw_recv(self->d0.fd, TYPE_LOGIC, self->d0.lcq, c, 1,
			      5000, &got));
	ASSERT_EQ(1, got);
	EXPECT_EQ(5, get16(c, 2));
	EXPECT_EQ(0x55, get32(c, 4));
	EXPECT_EQ(1, c[8]);		/* error type: exception */
	EXPECT_EQ(1, c[9]);
	EXPECT_EQ(4, get16(c, 14) & 4);
	EXPECT_EQ(0, get64(c, 16));	/* the failed SQE's index */
	EXPECT_EQ(0, raw_recv(self->d0.fd, TYPE_LOGIC, self->d0.lcq, c, 1, 0,
			      &got));
	EXPECT_EQ(0, got);
}

/*
 * Without a logic CQ, RECV type 0 returns raw hardware CQEs: 16 bytes
 * each (their layout is not in the ABI tables: basic.c checks it). The
 * buffer's room past the one report returned starts a page, which RECV
 * must not touch either.
 */
TEST_F(rt, hardware_cqe)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t s[SQE_SIZE], uio[64], *map, *c;
	uint32_t stream = 0, sq, cq, pos, got, i;

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	c = map + page - HWCQE_SIZE;

	ASSERT_EQ(0, raw_res(self->d0.fd, CMD_RES_ALLOC, &stream));
	ASSERT_EQ(0, raw_alloc(self->d0.fd, TYPE_NORMAL, stream, &sq, &cq, uio));
	raw_mark(s, stream, 9, 1, 0);
	put8(s, 1, 0x40);		/* this mark asks for a report */
	ASSERT_EQ(0, raw_send(self->d0.fd, sq, s, 1, &pos));
	memset(c, 0xa5, 2 * HWCQE_SIZE);
	ASSERT_EQ(0, raw_recv(self->d0.fd, TYPE_NORMAL, cq, c, 2, 5000, &got));
	ASSERT_EQ(1, got);
	/* Braced: the harness's TH_LOG is a statement after EXPECT's. */
	for (i = HWCQE_SIZE; i < 2 * HWCQE_SIZE; i++) {
		EXPECT_EQ(0xa5, c[i]) TH_LOG("byte %u", i);
	}
	/* and nothing went to the logic CQ of the other stream */
	EXPECT_EQ(0, raw_recv(self->d0.fd, TYPE_LOGIC, self->d0.lcq, c, 2, 0,
			      &got));
	EXPECT_EQ(0, got);
	EXPECT_EQ(0, raw_free(self->d0.fd, TYPE_NORMAL, sq, cq));
	EXPECT_EQ(0, raw_res(self->d0.fd, CMD_RES_FREE, &stream));
	munmap(map, 2 * page);
}

/* The runtime's teardown order; every id is gone afterwards. */
TEST_F(rt, runtime_teardown)
{
	uint8_t s[SQE_SIZE];
	uint32_t pos, id;

	EXPECT_EQ(0, raw_free(self->d0.fd, TYPE_LOGIC, 0, self->d0.lcq));
	EXPECT_EQ(0, raw_free(self->d0.fd, TYPE_NORMAL, self->d0.sq,
			      self->d0.cq));
	id = self->d0.stream;
	EXPECT_EQ(0, raw_res(self->d0.fd, CMD_RES_FREE, &id));
	raw_task(s, 0, self->d0.stream, 1, 1);
	EXPECT_EQ(-EINVAL, raw_send(self->d0.fd, self->d0.sq, s, 1, &pos));
	EXPECT_EQ(-EINVAL, raw_free(self->d0.fd, TYPE_LOGIC, 0, self->d0.lcq));
	id = self->d0.stream;
	EXPECT_EQ(-EINVAL, raw_res(self->d0.fd, CMD_RES_FREE, &id));
	/* device 1's objects with the same ids are untouched */
	raw_task(s, 0, self->d1.stream, 1, 0);
	EXPECT_EQ(0, raw_send(self->d1.fd, self->d1.sq, s, 1, &pos));
}

/* CLOSE then GET_MODULE_STATUS, as davinci_intf_init.c. */
TEST_F(rt, close_and_module_status)
{
	uint8_t a[260] = { 0 };

	strcpy((char *)a, "TSDRV");
	EXPECT_EQ(0, raw_ioctl(self->d0.fd, CMD_STATUS, a));
	EXPECT_EQ(0, get32(a, 256));	/* TSDRV fds are open */
	EXPECT_EQ(0, raw_ioctl(self->d0.fd, CMD_CLOSE, a));
	/* a second OPEN on the fd: ENOSYS */
	put32(a, 256, 0);
	EXPECT_EQ(-ENOSYS, raw_ioctl(self->d0.fd, CMD_OPEN, a));
	memset(a, 0, sizeof(a));
	strcpy((char *)a, "NO_SUCH_MODULE");
	EXPECT_EQ(0, raw_ioctl(self->d0.fd, CMD_STATUS, a));
	EXPECT_EQ(1, get32(a, 256));
}

TEST_HARNESS_MAIN
