// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: every documented failure, and that a failed call changes nothing:
 * the counters stay as they were and the next valid call works.
 */
#include <sys/mman.h>
#include "npusim_test.h"

#define DEPTH 64

FIXTURE(err) {
	int fd;
	__u32 sq, cq;
	struct npusim_stats st0;	/* after setup */
	struct npusim_config cfg0;
};

FIXTURE_SETUP(err)
{
	do_open(&self->fd, true);
	do_alloc(self->fd, DEPTH, 0, &self->sq, &self->cq);
	do_stats(self->fd, &self->st0);
	do_get_config(self->fd, &self->cfg0);
}

FIXTURE_TEARDOWN(err)
{
	close(self->fd);
}

/*
 * The failed calls left the device as it was, apart from @n round trips
 * (_roundtrip()) of the test, and it still works.
 */
#define EXPECT_NOTHING_CHANGED_BUT(n) do {				\
	struct npusim_stats __st, __ex = self->st0;			\
	__ex.submitted += (n);						\
	__ex.completed += (n);						\
	__ex.reports += (n);						\
	do_stats(self->fd, &__st);					\
	EXPECT_STATS_EQ(__ex, __st);					\
	do_roundtrip(self->fd, self->sq, self->cq, 4242);		\
} while (0)
#define EXPECT_NOTHING_CHANGED() EXPECT_NOTHING_CHANGED_BUT(0)

static const unsigned long unknown_cmds[] = {
	_IOWR('X', TRS_MAX_CMD, struct trs_report_recv_info),
	_IOWR('X', 200, struct trs_report_recv_info),
	_IOW('X', TRS_IOC_NR_SQCQ_SEND, __u32[15]),	/* wrong size */
	_IOR('X', TRS_IOC_NR_SQCQ_SEND, struct trs_task_send_info), /* dir */
	_IO('X', TRS_IOC_NR_SQCQ_RECV),
	_IOW('Q', TRS_IOC_NR_SQCQ_SEND, struct trs_task_send_info),
	_IO('Z', 3),
	_IO('Z', 0xff),
	_IOR('N', 9, struct npusim_stats),
	_IOR('N', 3, __u64),				/* STATS, wrong size */
};

TEST_F(err, unknown_command_enotty)
{
	char buf[512] = { 0 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(unknown_cmds); i++)
		EXPECT_EQ(-ENOTTY, xioctl(self->fd, unknown_cmds[i], buf))
			TH_LOG("cmd %#lx", unknown_cmds[i]);
	EXPECT_NOTHING_CHANGED();
}

/* Numbers 0..32 exist in the real driver; npusim implements four. */
TEST_F(err, unimplemented_trs_command)
{
	char buf[512] = { 0 };

	EXPECT_EQ(-EOPNOTSUPP, xioctl(self->fd, _IOWR('X', 1, __u64), buf));
	EXPECT_EQ(-EOPNOTSUPP, xioctl(self->fd, _IO('X', 32), buf));
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, unbound_fd)
{
	struct trs_sqcq_alloc_info ai;
	struct trs_logic_cqe c;
	struct npusim_stats st;
	struct trs_sqe s;
	int fd;

	do_open(&fd, false);
	alloc_info_init(&ai, DEPTH, 0);
	sqe_task(&s, TRS_SQE_FFTS, 1, 1, true, 100, 0);
	EXPECT_EQ(-EBADFD, _do_alloc_info(fd, &ai));
	EXPECT_EQ(-EBADFD, _do_send(fd, self->sq, &s, 1, 0, NULL));
	EXPECT_EQ(-EBADFD, _do_recv(fd, self->cq, &c, 1, 0));
	EXPECT_EQ(-EBADFD, _do_free(fd, self->sq, self->cq));
	EXPECT_EQ(-EBADFD, _do_manager(fd, ASCEND_MANAGER_GET_MODULE_STATUS,
				       ASCEND_MODULE_TSDRV, 0));
	EXPECT_EQ(-EBADFD, _do_manager(fd, ASCEND_MANAGER_CLOSE,
				       ASCEND_MODULE_TSDRV, 0));
	/* The simulator's own commands work on any fd. */
	ASSERT_EQ(0, _do_stats(fd, &st));
	EXPECT_EQ(self->st0.fds + 1, st.fds);
	EXPECT_EQ(self->st0.sqs, st.sqs);
	do_bind(fd);
	EXPECT_EQ(0, _do_manager(fd, ASCEND_MANAGER_GET_MODULE_STATUS,
				 ASCEND_MODULE_TSDRV, 0));
	close(fd);
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, manager_open_close)
{
	struct ascend_manager_arg a;
	__u32 sq, cq;
	int fd;

	do_open(&fd, false);
	EXPECT_EQ(-EINVAL, _do_manager(fd, ASCEND_MANAGER_OPEN, "TSDRVX", 0));
	EXPECT_EQ(-EINVAL, _do_manager(fd, ASCEND_MANAGER_OPEN, "", 0));
	EXPECT_EQ(-EINVAL, _do_manager(fd, ASCEND_MANAGER_OPEN, "DEVMM", 0));
	EXPECT_EQ(-ENODEV, _do_manager(fd, ASCEND_MANAGER_OPEN,
				       ASCEND_MODULE_TSDRV, 1));
	/* No NUL within the 256 bytes. */
	memset(&a, 'T', sizeof(a));
	a.device_id = 0;
	EXPECT_EQ(-EINVAL, xioctl(fd, ASCEND_MANAGER_OPEN, &a));
	EXPECT_EQ(-EBADFD, _do_manager(fd, ASCEND_MANAGER_GET_MODULE_STATUS,
				       ASCEND_MODULE_TSDRV, 0));

	do_bind(fd);
	EXPECT_EQ(-EBUSY, _do_bind(fd));
	do_alloc(fd, 16, 0, &sq, &cq);
	EXPECT_EQ(-EBUSY, _do_manager(fd, ASCEND_MANAGER_CLOSE,
				      ASCEND_MODULE_TSDRV, 0));
	do_free(fd, sq, cq);
	EXPECT_EQ(0, _do_manager(fd, ASCEND_MANAGER_CLOSE,
				 ASCEND_MODULE_TSDRV, 0));
	EXPECT_EQ(-EBADFD, _do_manager(fd, ASCEND_MANAGER_GET_MODULE_STATUS,
				       ASCEND_MODULE_TSDRV, 0));
	/* A closed fd can OPEN again. */
	do_bind(fd);
	do_alloc(fd, 16, 0, &sq, &cq);
	do_roundtrip(fd, sq, cq, 1);
	close(fd);
	EXPECT_NOTHING_CHANGED_BUT(1);
}

static const unsigned long ptr_cmds[] = {
	TRS_IOC_SQCQ_ALLOC, TRS_IOC_SQCQ_FREE, TRS_IOC_SQCQ_SEND,
	TRS_IOC_SQCQ_RECV, ASCEND_MANAGER_OPEN,
	ASCEND_MANAGER_GET_MODULE_STATUS, NPUSIM_IOC_GET_CONFIG,
	NPUSIM_IOC_SET_CONFIG, NPUSIM_IOC_TRUTH, NPUSIM_IOC_STATS,
	NPUSIM_IOC_CLOCK,
};

TEST_F(err, efault_arg)
{
	void *bad[] = { NULL, (void *)8, (void *)-4096L };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(ptr_cmds); i++) {
		for (j = 0; j < 3; j++) {
			void *arg = bad[j];

			EXPECT_EQ(-EFAULT, xioctl(self->fd, ptr_cmds[i], arg))
				TH_LOG("cmd %#lx arg %p", ptr_cmds[i], arg);
		}
	}
	EXPECT_NOTHING_CHANGED();
}

/* An argument that ends past the last mapped byte. */
TEST_F(err, efault_arg_truncated)
{
	long page = sysconf(_SC_PAGESIZE);
	struct trs_task_send_info *si;
	char *p;

	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, munmap(p + page, page));
	si = (void *)(p + page - 32);
	memset(si, 0, 32);
	EXPECT_EQ(-EFAULT, xioctl(self->fd, TRS_IOC_SQCQ_SEND, si));
	munmap(p, page);
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, efault_sqe_addr)
{
	long page = sysconf(_SC_PAGESIZE);
	struct trs_sqe *s;
	__u64 next;
	char *p;
	int i;

	EXPECT_EQ(-EFAULT, _do_send(self->fd, self->sq, NULL, 1, 0, NULL));
	EXPECT_EQ(-EFAULT, _do_send(self->fd, self->sq, (void *)8, 1, 0, NULL));
	/* Four good SQEs, the fifth unmapped: nothing may be queued. */
	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, munmap(p + page, page));
	s = (void *)(p + page - 4 * sizeof(*s));
	for (i = 0; i < 4; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 1, i, true, 100, 0);
	EXPECT_EQ(-EFAULT, _do_send(self->fd, self->sq, s, 5, 0, NULL));
	ASSERT_EQ(0, _do_truth(self->fd, self->sq, 0, NULL, 0, &next));
	EXPECT_EQ(0, next);
	munmap(p, page);
	EXPECT_NOTHING_CHANGED();
}

/* The reports of a RECV into a bad buffer stay queued. */
TEST_F(err, efault_cqe_addr)
{
	long page = sysconf(_SC_PAGESIZE);
	struct npusim_stats st;
	struct trs_logic_cqe c[3];
	struct trs_sqe s[2];
	void *ro;

	sqe_task(&s[0], TRS_SQE_FFTS, 1, 1, true, 100, 0);
	sqe_task(&s[1], TRS_SQE_FFTS, 1, 2, true, 100, 0);
	do_send(self->fd, self->sq, s, 2, NULL);
	wait_idle(self->fd);

	ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	do_recv_err(EFAULT, self->fd, self->cq, NULL, 2, 0);
	do_recv_err(EFAULT, self->fd, self->cq, (void *)8, 2, 0);
	do_recv_err(EFAULT, self->fd, self->cq, ro, 2, 0);
	do_recv_err(EFAULT, self->fd, self->cq, ro, 2, 100);
	munmap(ro, page);
	do_stats(self->fd, &st);
	EXPECT_EQ(self->st0.reports_pending + 2, st.reports_pending);

	ASSERT_EQ(2, _recv_n(self->fd, self->cq, c, 2, 1000));
	EXPECT_EQ(1, c[0].task_id);
	EXPECT_EQ(2, c[1].task_id);
	do_recv_err(ETIMEDOUT, self->fd, self->cq, c, 3, 0);
	do_stats(self->fd, &st);
	EXPECT_EQ(self->st0.reports_pending, st.reports_pending);
	EXPECT_EQ(self->st0.reports + 2, st.reports);
}

TEST_F(err, send_einval)
{
	struct trs_task_send_info si;
	struct trs_sqe s[DEPTH + 1];
	static const __u8 bad_types[] = { 2, 9, 10, 12, 20, 63 };
	unsigned int i;
	__u64 next;

	for (i = 0; i <= DEPTH; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, 1, i, false, 100, 0);

	for (i = 0; i < 8; i++) {
		send_info_init(&si, self->sq, s, 1, 0);
		si.res[i] = 1;
		do_send_info_err(EINVAL, self->fd, &si);
	}
	send_info_init(&si, self->sq, s, 1, 0);
	si.tsId = 1;
	do_send_info_err(EINVAL, self->fd, &si);
	send_info_init(&si, self->sq, s, 1, 0);
	si.type = TRS_TASK_TYPE_CALLBACK;
	do_send_info_err(EINVAL, self->fd, &si);
	send_info_init(&si, self->sq, s, 1, 0);
	si.type = 77;
	do_send_info_err(EINVAL, self->fd, &si);

	do_send_err(EINVAL, self->fd, self->sq, s, 0);
	do_send_err(EINVAL, self->fd, self->sq, s, DEPTH + 1);
	do_send_err(EINVAL, self->fd, self->sq, s, 0xffffffffu);

	/* One bad SQE in the middle: the batch is refused whole. */
	for (i = 0; i < sizeof(bad_types); i++) {
		s[5].type = bad_types[i];
		do_send_err(EINVAL, self->fd, self->sq, s, 10);
	}
	s[5].type = TRS_SQE_FFTS;
	ASSERT_EQ(0, _do_truth(self->fd, self->sq, 0, NULL, 0, &next));
	EXPECT_EQ(0, next);
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, alloc_einval)
{
	struct trs_sqcq_alloc_info ai;
	int i;

#define BAD_ALLOC(field, value) do {					\
	alloc_info_init(&ai, 16, 0);					\
	ai.field = value;						\
	do_alloc_info_err(EINVAL, self->fd, &ai);			\
} while (0)
	BAD_ALLOC(type, TRS_SQCQ_TYPE_CALLBACK);
	BAD_ALLOC(type, TRS_SQCQ_TYPE_LOGIC);
	BAD_ALLOC(tsId, 1);
	BAD_ALLOC(sqeSize, 32);
	BAD_ALLOC(cqeSize, 16);
	BAD_ALLOC(sqeDepth, 0);
	BAD_ALLOC(sqeDepth, TRS_SQ_MAX_DEPTH + 1);
	BAD_ALLOC(cqeDepth, 0);
	BAD_ALLOC(cqeDepth, TRS_SQ_MAX_DEPTH + 1);
	BAD_ALLOC(flag, 2);
	BAD_ALLOC(flag, 0x80000000u);
	BAD_ALLOC(ext_info_len, 4);
	for (i = 0; i < 3; i++)
		BAD_ALLOC(res[i], 1);
#undef BAD_ALLOC
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, recv_einval)
{
	struct trs_report_recv_info ri;
	struct trs_logic_cqe c[2];
	int i;

#define BAD_RECV(field, value) do {					\
	recv_info_init(&ri, self->cq, c, 2, 0);				\
	ri.field = value;						\
	do_recv_info_err(EINVAL, self->fd, &ri);			\
} while (0)
	BAD_RECV(type, TRS_SQCQ_TYPE_CALLBACK);
	BAD_RECV(tsId, 1);
	BAD_RECV(cqe_num, 0);
	BAD_RECV(cqId, self->cq + 1000);
	BAD_RECV(res[0], 2);
	for (i = 1; i < 8; i++)
		BAD_RECV(res[i], 1);
#undef BAD_RECV
	/* res[0] = 1 is version 1: valid. */
	recv_info_init(&ri, self->cq, c, 2, 0);
	ri.res[0] = 1;
	do_recv_info_err(ETIMEDOUT, self->fd, &ri);
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, free_einval)
{
	struct trs_sqcq_free_info fi;
	__u32 sq2, cq2;
	int i;

	do_alloc(self->fd, 16, 0, &sq2, &cq2);
#define BAD_FREE(field, value) do {					\
	memset(&fi, 0, sizeof(fi));					\
	fi.sqId = sq2;							\
	fi.cqId = cq2;							\
	fi.field = value;						\
	EXPECT_EQ(-EINVAL, xioctl(self->fd, TRS_IOC_SQCQ_FREE, &fi));	\
} while (0)
	BAD_FREE(type, TRS_SQCQ_TYPE_CALLBACK);
	BAD_FREE(tsId, 1);
	BAD_FREE(cqId, self->cq);	/* another SQ's CQ */
	BAD_FREE(sqId, 5000);
	for (i = 0; i < 8; i++)
		BAD_FREE(res[i], 1);
#undef BAD_FREE
	do_roundtrip(self->fd, sq2, cq2, 1);
	do_free(self->fd, sq2, cq2);
	do_free_err(EINVAL, self->fd, sq2, cq2);
	EXPECT_NOTHING_CHANGED_BUT(1);
}

/* Ids of another fd, and freed ids, do not exist for this fd. */
TEST_F(err, foreign_and_freed_ids)
{
	struct npusim_task_truth t;
	struct trs_logic_cqe c;
	struct trs_sqe s;
	__u32 sq2, cq2, sq3, cq3;
	int fd2;

	do_open(&fd2, true);
	do_alloc(fd2, 16, 0, &sq2, &cq2);
	do_alloc(self->fd, 16, 0, &sq3, &cq3);
	do_free(self->fd, sq3, cq3);
	sqe_task(&s, TRS_SQE_FFTS, 1, 1, true, 100, 0);

	do_send_err(EINVAL, self->fd, sq2, &s, 1);
	do_recv_err(EINVAL, self->fd, cq2, &c, 1, 0);
	do_free_err(EINVAL, self->fd, sq2, cq2);
	do_truth_err(EINVAL, self->fd, sq2, 0, &t, 1);

	do_send_err(EINVAL, self->fd, sq3, &s, 1);
	do_recv_err(EINVAL, self->fd, cq3, &c, 1, 0);
	do_free_err(EINVAL, self->fd, sq3, cq3);
	do_truth_err(EINVAL, self->fd, sq3, 0, &t, 1);

	/* Nothing happened to the owner's pair either. */
	do_roundtrip(fd2, sq2, cq2, 9);
	close(fd2);
	EXPECT_NOTHING_CHANGED_BUT(1);
}

TEST_F(err, config_einval)
{
	struct npusim_config c, now;

#define BAD_CFG(m, field, value) do {					\
	memset(&c, 0, sizeof(c));					\
	c.mask = (m);							\
	c.field = value;						\
	do_set_config_err(EINVAL, self->fd, &c);			\
} while (0)
	BAD_CFG(NPUSIM_CFG_ALL + 1, units, 1);
	BAD_CFG(1u << 31, units, 1);
	BAD_CFG(NPUSIM_CFG_UNITS, units, 0);
	BAD_CFG(NPUSIM_CFG_UNITS, units, NPUSIM_MAX_UNITS + 1);
	BAD_CFG(NPUSIM_CFG_COUNTER_FREQ, counter_freq_hz, 0);
	BAD_CFG(NPUSIM_CFG_COUNTER_FREQ, counter_freq_hz, 0x100000000ull);
	BAD_CFG(NPUSIM_CFG_INJECT_ERROR, inject_error_every, 2);
	BAD_CFG(NPUSIM_CFG_DEFAULT_DURATION, res[0], 1);
	BAD_CFG(NPUSIM_CFG_DEFAULT_DURATION, res[6], 1);
	/* A valid field with an invalid one: nothing applied. */
	c.mask = NPUSIM_CFG_DEFAULT_DURATION | NPUSIM_CFG_UNITS;
	c.default_duration_ns = self->cfg0.default_duration_ns + 1;
	c.units = 0;
	c.res[6] = 0;
	do_set_config_err(EINVAL, self->fd, &c);
#undef BAD_CFG
	do_get_config(self->fd, &now);
	EXPECT_EQ(0, memcmp(&self->cfg0.units, &now.units,
			    sizeof(now) - sizeof(now.mask)));
	EXPECT_NOTHING_CHANGED();
}

/* Counter settings need an idle device. */
TEST_F(err, config_ebusy)
{
	struct npusim_config c = {
		.mask = NPUSIM_CFG_COUNTER_FREQ, .counter_freq_hz = 1000000,
	};
	struct npusim_config now;
	struct trs_sqe s;
	__u32 sq, cq;

	do_alloc(self->fd, 4, 0, &sq, &cq);
	sqe_task(&s, TRS_SQE_FFTS, 1, 1, false, 2000000000u, 0);
	do_send(self->fd, sq, &s, 1, NULL);
	do_set_config_err(EBUSY, self->fd, &c);
	c.mask = NPUSIM_CFG_UNITS;
	c.units = 2;
	do_set_config_err(EBUSY, self->fd, &c);
	do_get_config(self->fd, &now);
	EXPECT_EQ(self->cfg0.counter_freq_hz, now.counter_freq_hz);
	EXPECT_EQ(self->cfg0.units, now.units);
	do_free(self->fd, sq, cq);
}

TEST_F(err, truth_queries)
{
	struct npusim_truth_query q = { .sq_id = self->sq, .count = 1 };
	struct npusim_task_truth t[2];
	__u64 next = 99;

	q.addr = (__u64)(uintptr_t)t;
	q.res[2] = 1;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, NPUSIM_IOC_TRUTH, &q));
	q.res[2] = 0;
	do_truth_err(EINVAL, self->fd, self->sq + 1000, 0, t, 1);

	do_roundtrip(self->fd, self->sq, self->cq, 1);
	/* A record to write, and nowhere to write it. */
	q.addr = 8;
	EXPECT_EQ(-EFAULT, xioctl(self->fd, NPUSIM_IOC_TRUTH, &q));
	/* Past the end: not an error, nothing written. */
	EXPECT_EQ(0, _do_truth(self->fd, self->sq, 1, t, 2, &next));
	EXPECT_EQ(1, next);
	EXPECT_EQ(1, _do_truth(self->fd, self->sq, 0, t, 2, &next));
	EXPECT_EQ(0, t[0].seq);
	EXPECT_EQ(NPUSIM_TASK_DONE, t[0].state);
}

/* What ALLOC and FREE ignore, by the header. */
TEST_F(err, ignored_fields)
{
	struct trs_sqcq_alloc_info ai;
	struct trs_sqcq_free_info fi;
	__u32 ext[4] = { 1, 2, 3, 4 };
	int i;

	alloc_info_init(&ai, 16, 0);
	ai.grpId = 7;
	for (i = 0; i < 5; i++)
		ai.info[i] = 0xdead0000 + i;
	ai.ext_info_len = sizeof(ext);
	ai.ext_info = (__u64)(uintptr_t)ext;
	ai.sqId = 12345;
	ai.cqId = 54321;
	ASSERT_EQ(0, _do_alloc_info(self->fd, &ai));
	EXPECT_NE(12345, ai.sqId);
	do_roundtrip(self->fd, ai.sqId, ai.cqId, 1);
	memset(&fi, 0, sizeof(fi));
	fi.sqId = ai.sqId;
	fi.cqId = ai.cqId;
	fi.flag = 0x123;
	EXPECT_EQ(0, xioctl(self->fd, TRS_IOC_SQCQ_FREE, &fi));
}

/* Ids: the lowest free ones, reused after FREE; ENOSPC when none is left. */
TEST_F_TIMEOUT(err, ids_and_enospc, 60)
{
	static __u32 sq[NPUSIM_MAX_SQS], cq[NPUSIM_MAX_SQS];
	struct npusim_stats st;
	__u32 a, b, c, d, e, f;
	int fd, n, r;

	do_alloc(self->fd, 1, 0, &a, &b);
	do_alloc(self->fd, 1, 0, &c, &d);
	do_free(self->fd, a, b);
	do_alloc(self->fd, 1, 0, &e, &f);
	EXPECT_EQ(a, e);
	EXPECT_EQ(b, f);
	do_free(self->fd, c, d);
	do_free(self->fd, e, f);

	do_open(&fd, true);
	for (n = 0; n < NPUSIM_MAX_SQS; n++) {
		r = _do_alloc(fd, 1, 0, &sq[n], &cq[n]);
		if (r)
			break;
	}
	EXPECT_EQ(-ENOSPC, r);
	/* The fixture's SQ holds one id. */
	EXPECT_EQ(NPUSIM_MAX_SQS - 1, n);
	do_stats(self->fd, &st);
	EXPECT_EQ(self->st0.sqs + n, st.sqs);
	/* Room again after a FREE, with the freed id. */
	do_free(fd, sq[n / 2], cq[n / 2]);
	do_alloc(fd, 1, 0, &a, &b);
	EXPECT_EQ(sq[n / 2], a);
	close(fd);
	EXPECT_NOTHING_CHANGED_BUT(0);
}

TEST_HARNESS_MAIN
