// SPDX-License-Identifier: GPL-2.0
/*
 * npusim from the ABI tables only (ascend-abi.md section 2): raw command
 * values and byte offsets, no project header, so a layout mistake shared by
 * the header and the module cannot hide. Little-endian hosts (x86_64,
 * aarch64), as the ABI is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "kselftest_harness.h"

#define DEV		"/dev/npusim_manager"

/* The table's values: magic 'Z' manager, magic 'X' TRS (LP64). */
#define CMD_OPEN	0x00005a00ul
#define CMD_ALLOC	0xc060580ful
#define CMD_FREE	0x40345810ul
#define CMD_SEND	0x40405813ul
#define CMD_RECV	0xc0485814ul

#define SQE_SIZE	64
#define CQE_SIZE	32

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

/* { char module_name[256]; int device_id @256 }: 260 bytes. */
static int _raw_open(int fd, const char *name)
{
	uint8_t a[260] = { 0 };

	strcpy((char *)a, name);
	put32(a, 256, 0);
	return raw_ioctl(fd, CMD_OPEN, a);
}

/* halSqCqInputInfo, 96 bytes. */
static int _raw_alloc(int fd, uint32_t depth, uint32_t *sq, uint32_t *cq)
{
	uint8_t a[96] = { 0 };
	int err;

	put32(a, 0, 0);		/* type: normal */
	put32(a, 4, 0);		/* tsId */
	put32(a, 8, SQE_SIZE);	/* sqeSize */
	put32(a, 12, CQE_SIZE);	/* cqeSize */
	put32(a, 16, depth);	/* sqeDepth */
	put32(a, 20, depth);	/* cqeDepth */
	put32(a, 32, 0xffffffff); /* cqId, sqId: in/out, ignored in */
	put32(a, 36, 0xffffffff);
	err = raw_ioctl(fd, CMD_ALLOC, a);
	*cq = get32(a, 32);
	*sq = get32(a, 36);
	return err;
}

/* halTaskSendInfo, 64 bytes. Return: 0 or -errno; *pos from @28. */
static int _raw_send(int fd, uint32_t sq, const void *sqes, uint32_t n,
		     uint32_t *pos)
{
	uint8_t a[64] = { 0 };
	int err;

	put32(a, 8, sq);
	put32(a, 12, (uint32_t)-1);	/* timeout: forever */
	put64(a, 16, (uintptr_t)sqes);
	put32(a, 24, n);
	put32(a, 28, 0xdeadbeef);
	err = raw_ioctl(fd, CMD_SEND, a);
	*pos = get32(a, 28);
	return err;
}

/* halReportRecvInfo, 72 bytes, version 1. *got from @28. */
static int _raw_recv(int fd, uint32_t cq, void *cqes, uint32_t n,
		     int32_t timeout, uint32_t *got)
{
	uint8_t a[72] = { 0 };
	int err;

	put32(a, 8, cq);
	put32(a, 12, (uint32_t)timeout);
	put64(a, 16, (uintptr_t)cqes);
	put32(a, 24, n);
	put32(a, 28, 0xdeadbeef);
	put32(a, 36, 0xffffffff);	/* task_id: any */
	put32(a, 40, 1);		/* res[0]: version 1 */
	err = raw_ioctl(fd, CMD_RECV, a);
	*got = get32(a, 28);
	return err;
}

/* halSqCqFreeInfo, 52 bytes. */
static int _raw_free(int fd, uint32_t sq, uint32_t cq)
{
	uint8_t a[52] = { 0 };

	put32(a, 8, sq);
	put32(a, 12, cq);
	return raw_ioctl(fd, CMD_FREE, a);
}

#define raw_open(fd)		ASSERT_EQ(0, _raw_open(fd, "TSDRV"))
#define raw_alloc(fd, d, sq, cq) ASSERT_EQ(0, _raw_alloc(fd, d, sq, cq))
#define raw_free(fd, sq, cq)	ASSERT_EQ(0, _raw_free(fd, sq, cq))
#define raw_send_err(e, fd, sq, s, n, pos) \
	EXPECT_EQ(-(e), _raw_send(fd, sq, s, n, pos))

/* SQE: type @0, flags @1 (wr_cqe 0x40), u16 @2, stream @4, task @6. */
static void raw_task(uint8_t *s, uint8_t type, uint16_t stream,
		     uint16_t task, int wr_cqe, uint32_t dur, uint32_t error)
{
	memset(s, 0, SQE_SIZE);
	put8(s, 0, type);
	put8(s, 1, wr_cqe ? 0x40 : 0);
	put16(s, 4, stream);
	put16(s, 6, task);
	put32(s, 56, error);	/* npusim: injected error */
	put32(s, 60, dur);	/* npusim: duration ns */
}

/* Place-holder (type 3), task type 26 @2: {trace id @16, model @24, tag @32}. */
static void raw_mark(uint8_t *s, uint16_t stream, uint16_t task, uint64_t id,
		     uint16_t tag)
{
	raw_task(s, 3, stream, task, 1, 0, 0);
	put16(s, 2, 26);
	put64(s, 16, id);
	put64(s, 24, 0xffffffffull);
	put16(s, 32, tag);
}

FIXTURE(raw) {
	int fd;
	uint32_t sq, cq;
};

FIXTURE_SETUP(raw)
{
	self->fd = open(DEV, O_RDWR);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", DEV, strerror(errno));
	raw_open(self->fd);
	raw_alloc(self->fd, 32, &self->sq, &self->cq);
}

FIXTURE_TEARDOWN(raw)
{
	close(self->fd);
}

TEST_F(raw, submit_and_reports)
{
	uint8_t s[4 * SQE_SIZE], c[8 * CQE_SIZE];
	uint32_t pos, got;
	const uint8_t *r;

	raw_task(s, 0, 0x1234, 0x0101, 1, 1000, 0);		/* FFTS */
	raw_mark(s + SQE_SIZE, 0x1234, 0x0102, 77, 1);
	raw_task(s + 2 * SQE_SIZE, 1, 0x1234, 0x0103, 0, 1000, 0x55);
	raw_task(s + 3 * SQE_SIZE, 11, 0x1234, 0x0104, 0, 1000, 0);
	ASSERT_EQ(0, _raw_send(self->fd, self->sq, s, 4, &pos));
	EXPECT_EQ(0, pos);

	/* The mark, the report-asking task and the failed one report. */
	got = 0;
	while (got < 3) {
		uint32_t n;

		ASSERT_EQ(0, _raw_recv(self->fd, self->cq, c + got * CQE_SIZE,
				       8 - got, 5000, &n));
		ASSERT_LT(0, n);
		got += n;
	}
	EXPECT_EQ(3, got);

	r = c;
	EXPECT_EQ(0x1234, get16(r, 0));
	EXPECT_EQ(0x0101, get16(r, 2));
	EXPECT_EQ(0, get32(r, 4));
	EXPECT_EQ(0, r[9]);			/* sqe_type FFTS */
	EXPECT_EQ(self->sq, get16(r, 10));
	EXPECT_EQ(1, get16(r, 12));		/* sq_head */
	EXPECT_EQ(0, get16(r, 14) & 4);		/* error_bit */
	EXPECT_EQ(0, get64(r, 16));		/* no timestamp for FFTS */
	EXPECT_NE(0, get64(r, 24));		/* enque_timestamp */

	r = c + CQE_SIZE;
	EXPECT_EQ(0x0102, get16(r, 2));
	EXPECT_EQ(3, r[9]);			/* place-holder */
	EXPECT_EQ(2, get16(r, 12));
	EXPECT_NE(0, get64(r, 16));		/* device time of the mark */
	EXPECT_LE(get64(c, 24), get64(r, 16));

	r = c + 2 * CQE_SIZE;
	EXPECT_EQ(0x0103, get16(r, 2));
	EXPECT_EQ(0x55, get32(r, 4));
	EXPECT_EQ(1, r[9]);			/* AICPU */
	EXPECT_EQ(3, get16(r, 12));
	EXPECT_EQ(4, get16(r, 14) & 4);
}

TEST_F(raw, recv_timeout_writes_zero)
{
	uint8_t c[CQE_SIZE];
	uint32_t got;

	EXPECT_EQ(-ETIMEDOUT, _raw_recv(self->fd, self->cq, c, 1, 0, &got));
	EXPECT_EQ(0, got);
}

TEST_F(raw, positions)
{
	uint8_t s[10 * SQE_SIZE], c[CQE_SIZE];
	uint32_t pos, got, i;

	for (i = 0; i < 10; i++)
		raw_task(s + i * SQE_SIZE, 0, 1, i, i == 9, 100, 0);
	ASSERT_EQ(0, _raw_send(self->fd, self->sq, s, 10, &pos));
	EXPECT_EQ(0, pos);
	ASSERT_EQ(0, _raw_send(self->fd, self->sq, s, 10, &pos));
	EXPECT_EQ(10, pos);
	ASSERT_EQ(0, _raw_recv(self->fd, self->cq, c, 1, 5000, &got));
	ASSERT_EQ(1, got);
	EXPECT_EQ(10, get16(c, 12));
	ASSERT_EQ(0, _raw_recv(self->fd, self->cq, c, 1, 5000, &got));
	ASSERT_EQ(1, got);
	EXPECT_EQ(20, get16(c, 12));
}

TEST_F(raw, errors)
{
	uint8_t s[SQE_SIZE], a[96] = { 0 };
	uint32_t pos, sq2, cq2;
	int fd;

	raw_task(s, 0, 1, 1, 1, 100, 0);
	/* nr 33 does not exist; RECV's number with another size neither. */
	EXPECT_EQ(-ENOTTY, raw_ioctl(self->fd, 0xc0485821ul, a));
	EXPECT_EQ(-ENOTTY, raw_ioctl(self->fd, 0xc0475814ul, a));
	raw_send_err(EINVAL, self->fd, self->sq, s, 0, &pos);
	raw_send_err(EINVAL, self->fd, self->sq, s, 33, &pos);
	raw_send_err(EFAULT, self->fd, self->sq, (void *)8, 1, &pos);
	s[0] = 2;	/* not an SQE type npusim runs */
	raw_send_err(EINVAL, self->fd, self->sq, s, 1, &pos);

	fd = open(DEV, O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, _raw_open(fd, "TSDRV2"));
	EXPECT_EQ(-EBADFD, _raw_alloc(fd, 32, &sq2, &cq2));
	raw_open(fd);
	raw_alloc(fd, 32, &sq2, &cq2);
	raw_send_err(EINVAL, self->fd, sq2, s, 1, &pos);
	raw_free(fd, sq2, cq2);
	EXPECT_EQ(-EINVAL, _raw_free(fd, sq2, cq2));
	close(fd);
	raw_free(self->fd, self->sq, self->cq);
}

TEST_HARNESS_MAIN
