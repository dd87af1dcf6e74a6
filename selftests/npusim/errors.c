// SPDX-License-Identifier: GPL-2.0
/*
 * npusim: every documented failure, and that a failed call changes nothing:
 * the counters stay as they were and the next valid call works.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include "npusim_test.h"

#define DEPTH 64

FIXTURE(err) {
	int fd;
	struct npq q;
	struct npusim_stats st0;	/* after setup */
	struct npusim_config cfg0;
};

FIXTURE_SETUP(err)
{
	do_open(&self->fd, true);
	npq_create(&self->q, self->fd, 0, DEPTH);
	/* the SQ's first truth page exists: a test's few tasks add none */
	do_roundtrip(&self->q, 1);
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
	do_roundtrip(&self->q, 4242);					\
} while (0)
#define EXPECT_NOTHING_CHANGED() EXPECT_NOTHING_CHANGED_BUT(0)

TEST_F(err, unknown_commands)
{
	static const unsigned long enotty[] = {	/* 'N': checked whole */
		_IOR('N', 9, struct npusim_stats),
		_IOR('N', 3, __u64),			/* STATS, wrong size */
		_IOW('N', 3, struct npusim_stats),	/* wrong direction */
		_IO('N', 0),
	};
	static const unsigned long eopnotsupp[] = { /* TRS: by number */
		_IOWR('X', TRS_MAX_CMD, struct trs_report_recv_info),
		_IOWR('X', 200, struct trs_report_recv_info),
		_IOWR('X', 2, __u64),
		_IO('X', 32),
		_IO('X', 14),
	};
	char buf[512] = { 0 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(enotty); i++)
		EXPECT_EQ(-ENOTTY, xioctl(self->fd, enotty[i], buf))
			TH_LOG("cmd %#lx", enotty[i]);
	for (i = 0; i < ARRAY_SIZE(eopnotsupp); i++)
		EXPECT_EQ(-EOPNOTSUPP, xioctl(self->fd, eopnotsupp[i], buf))
			TH_LOG("cmd %#lx", eopnotsupp[i]);
	/* the manager's numbers other than 0-2 */
	EXPECT_EQ(-EINVAL, xioctl(self->fd, _IO('Z', 3), buf));
	EXPECT_EQ(-EINVAL, xioctl(self->fd, _IO('Z', 0xff), buf));
	/* a TRS command with no argument */
	EXPECT_EQ(-EINVAL, ioctl(self->fd, TRS_IOC_SQCQ_SEND, NULL) ? -errno : 0);
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, unbound_fd)
{
	struct trs_sqcq_alloc_info ai;
	struct trs_uio_info uio = {};
	struct trs_logic_cqe c;
	struct npusim_stats st;
	struct ascend_module_status ms = { .name = ASCEND_MODULE_TSDRV };
	struct trs_sqe s;
	__u32 id;
	int fd;

	do_open(&fd, false);
	alloc_info_init(&ai, 0, self->q.stream, DEPTH, 0, &uio);
	sqe_task(&s, TRS_SQE_FFTS, 1, 1, true, 100, 0);
	EXPECT_EQ(-ENODEV, _do_alloc_info(fd, &ai));
	EXPECT_EQ(-ENODEV, _do_stream_alloc(fd, 0, &id));
	EXPECT_EQ(-ENODEV, _do_send(fd, self->q.sq, &s, 1, 0, NULL));
	EXPECT_EQ(-ENODEV, _do_recv(fd, self->q.lcq, &c, 1, 0));
	EXPECT_EQ(-ENODEV, _do_sq_free(fd, 0, self->q.sq, self->q.cq));
	EXPECT_EQ(-ENODEV, _do_truth(fd, self->q.sq, 0, NULL, 0, NULL));
	/* The manager's and the simulator's own commands work on any fd. */
	EXPECT_EQ(0, xioctl(fd, ASCEND_MANAGER_GET_MODULE_STATUS, &ms));
	EXPECT_EQ(0, ms.status);	/* the fixture's fd is bound */
	EXPECT_EQ(0, _do_manager(fd, ASCEND_MANAGER_CLOSE, "", 0));
	ASSERT_EQ(0, _do_stats(fd, &st));
	EXPECT_EQ(self->st0.fds + 1, st.fds);
	EXPECT_EQ(self->st0.sqs, st.sqs);
	close(fd);
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, manager_open)
{
	struct ascend_manager_arg a;
	struct npq q;
	int fd;

	do_open(&fd, false);
	EXPECT_EQ(-EINVAL, _do_manager(fd, ASCEND_MANAGER_OPEN, "TSDRVX", 0));
	EXPECT_EQ(-EINVAL, _do_manager(fd, ASCEND_MANAGER_OPEN, "", 0));
	EXPECT_EQ(-EINVAL, _do_manager(fd, ASCEND_MANAGER_OPEN, "DEVMM", 0));
	EXPECT_EQ(-ENODEV, _do_manager(fd, ASCEND_MANAGER_OPEN,
				       ASCEND_MODULE_TSDRV, 2));
	EXPECT_EQ(-ENODEV, _do_manager(fd, ASCEND_MANAGER_OPEN,
				       ASCEND_MODULE_TSDRV, -1));
	EXPECT_EQ(-EINVAL, ioctl(fd, ASCEND_MANAGER_OPEN, NULL) ? -errno : 0);
	EXPECT_EQ(-EFAULT, ioctl(fd, ASCEND_MANAGER_OPEN, 8) ? -errno : 0);
	/* No NUL within the 256 bytes: cut at 255, an unknown name. */
	memset(&a, 'T', sizeof(a));
	a.device_id = 0;
	EXPECT_EQ(-EINVAL, xioctl(fd, ASCEND_MANAGER_OPEN, &a));
	/* "TSDRV" then junk after the NUL: fine */
	memset(&a, 'x', sizeof(a));
	strcpy(a.module_name, ASCEND_MODULE_TSDRV);
	a.device_id = 1;
	EXPECT_EQ(0, xioctl(fd, ASCEND_MANAGER_OPEN, &a));
	/* A second OPEN, of anything: ENOSYS, even after CLOSE. */
	EXPECT_EQ(-ENOSYS, _do_bind_dev(fd, 0));
	EXPECT_EQ(-ENOSYS, _do_manager(fd, ASCEND_MANAGER_OPEN,
				       ASCEND_MODULE_URD, 0));
	EXPECT_EQ(0, _do_manager(fd, ASCEND_MANAGER_CLOSE, "junk", 7));
	EXPECT_EQ(-ENOSYS, _do_bind_dev(fd, 1));
	/* CLOSE only marks the fd: it keeps working until released */
	npq_create(&q, fd, 0, 16);
	do_roundtrip(&q, 1);
	close(fd);
	EXPECT_NOTHING_CHANGED_BUT(1);
}

/* CLOSE by another process than the opener changes nothing. */
TEST_F(err, close_from_child)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(_do_manager(self->fd, ASCEND_MANAGER_CLOSE, "", 0) ? 1 : 0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_NOTHING_CHANGED();
}

/* GET_MODULE_STATUS: 1 while no fd of any process is bound to it. */
TEST_F(err, module_status)
{
	struct ascend_module_status ms = { .name = ASCEND_MODULE_URD };
	int fd;

	ASSERT_EQ(0, xioctl(self->fd, ASCEND_MANAGER_GET_MODULE_STATUS, &ms));
	EXPECT_EQ(1, ms.status);
	do_open(&fd, false);
	ASSERT_EQ(0, _do_manager(fd, ASCEND_MANAGER_OPEN, ASCEND_MODULE_URD, 1));
	ms.status = 7;
	ASSERT_EQ(0, xioctl(self->fd, ASCEND_MANAGER_GET_MODULE_STATUS, &ms));
	EXPECT_EQ(0, ms.status);
	close(fd);
	ASSERT_EQ(0, xioctl(self->fd, ASCEND_MANAGER_GET_MODULE_STATUS, &ms));
	EXPECT_EQ(1, ms.status);
	strcpy(ms.name, ASCEND_MODULE_TSDRV);
	ASSERT_EQ(0, xioctl(self->fd, ASCEND_MANAGER_GET_MODULE_STATUS, &ms));
	EXPECT_EQ(0, ms.status);
	strcpy(ms.name, "NOT_A_MODULE");
	ASSERT_EQ(0, xioctl(self->fd, ASCEND_MANAGER_GET_MODULE_STATUS, &ms));
	EXPECT_EQ(1, ms.status);
	ms.name[0] = 0;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, ASCEND_MANAGER_GET_MODULE_STATUS,
				  &ms));
	memset(ms.name, 'a', sizeof(ms.name));
	EXPECT_EQ(-EINVAL, xioctl(self->fd, ASCEND_MANAGER_GET_MODULE_STATUS,
				  &ms));
	EXPECT_EQ(-EFAULT, ioctl(self->fd, ASCEND_MANAGER_GET_MODULE_STATUS, 8) ?
			   -errno : 0);
	EXPECT_NOTHING_CHANGED();
}

static const unsigned long ptr_cmds[] = {
	TRS_IOC_RES_ID_ALLOC, TRS_IOC_RES_ID_FREE, TRS_IOC_SQCQ_ALLOC,
	TRS_IOC_SQCQ_FREE, TRS_IOC_SQCQ_CONFIG, TRS_IOC_SQCQ_QUERY,
	TRS_IOC_SQCQ_SEND, TRS_IOC_SQCQ_RECV, NPUSIM_IOC_GET_CONFIG,
	NPUSIM_IOC_SET_CONFIG, NPUSIM_IOC_TRUTH, NPUSIM_IOC_STATS,
	NPUSIM_IOC_CLOCK, NPUSIM_IOC_FAIL_NTH,
};

TEST_F(err, efault_arg)
{
	void *bad[] = { (void *)8, (void *)-4096L };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(ptr_cmds); i++) {
		for (j = 0; j < ARRAY_SIZE(bad); j++) {
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

/* ALLOC reads trs_uio_info first: a bad pointer allocates nothing. */
TEST_F(err, efault_uio_info)
{
	struct trs_sqcq_alloc_info ai;
	struct trs_uio_info *ro;

	alloc_info_init(&ai, 0, self->q.stream, DEPTH, 0, NULL);
	EXPECT_EQ(-EFAULT, _do_alloc_info(self->fd, &ai));
	ai.uio_info = 8;
	EXPECT_EQ(-EFAULT, _do_alloc_info(self->fd, &ai));
	logic_alloc_info_init(&ai, 0, self->q.stream, 16, NULL);
	EXPECT_EQ(-EFAULT, _do_alloc_info(self->fd, &ai));
	/* readable but not writable: nothing is allocated either */
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	alloc_info_init(&ai, 0, self->q.stream, DEPTH, 0, ro);
	EXPECT_EQ(-EFAULT, _do_alloc_info(self->fd, &ai));
	munmap(ro, 4096);
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, efault_sqe_addr)
{
	long page = sysconf(_SC_PAGESIZE);
	struct trs_sqe *s;
	__u64 next;
	char *p;
	int i;

	EXPECT_EQ(-EFAULT, _do_send(self->fd, self->q.sq, (void *)8, 1, 0,
				    NULL));
	/* Four good SQEs, the fifth unmapped: nothing may be queued. */
	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, munmap(p + page, page));
	s = (void *)(p + page - 4 * sizeof(*s));
	for (i = 0; i < 4; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, self->q.stream, i, true, 100, 0);
	EXPECT_EQ(-EFAULT, _do_send(self->fd, self->q.sq, s, 5, 0, NULL));
	ASSERT_EQ(0, _do_truth(self->fd, self->q.sq, 0, NULL, 0, &next));
	EXPECT_EQ(1, next);	/* the setup's round trip only */
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

	sqe_task(&s[0], TRS_SQE_FFTS, self->q.stream, 1, true, 100, 0);
	sqe_task(&s[1], TRS_SQE_FFTS, self->q.stream, 2, true, 100, 0);
	do_send(self->fd, self->q.sq, s, 2, NULL);
	wait_head(self->fd, 0, self->q.sq, 3);

	ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	do_recv_err(EFAULT, self->fd, self->q.lcq, (void *)8, 2, 0);
	do_recv_err(EFAULT, self->fd, self->q.lcq, ro, 2, 0);
	do_recv_err(EFAULT, self->fd, self->q.lcq, ro, 2, 100);
	munmap(ro, page);
	do_stats(self->fd, &st);
	EXPECT_EQ(self->st0.reports_pending + 2, st.reports_pending);

	ASSERT_EQ(2, _recv_n(self->fd, self->q.lcq, c, 2, WAIT_MS));
	EXPECT_EQ(1, c[0].task_id);
	EXPECT_EQ(2, c[1].task_id);
	EXPECT_EQ(0, _do_recv(self->fd, self->q.lcq, c, 3, 0));
	do_stats(self->fd, &st);
	EXPECT_EQ(self->st0.reports_pending, st.reports_pending);
	EXPECT_EQ(self->st0.reports + 2, st.reports);
}

TEST_F(err, send_einval)
{
	struct trs_task_send_info si;
	struct trs_sqe s[DEPTH + 1];
	unsigned int i;
	__u64 next;

	for (i = 0; i <= DEPTH; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, self->q.stream, i, false, 100, 0);
	send_info_init(&si, 0, self->q.sq, s, 1, 0);
	for (i = 1; i < 8; i++) {
		si.type = i;
		do_send_info_err(EINVAL, self->fd, &si);
	}
	si.type = 0x80000000u;
	do_send_info_err(EINVAL, self->fd, &si);
	send_info_init(&si, 2, self->q.sq, s, 1, 0);
	do_send_info_err(EINVAL, self->fd, &si);	/* no TS 2 */
	send_info_init(&si, 1, self->q.sq, s, 1, 0);
	do_send_info_err(EINVAL, self->fd, &si);	/* not on TS 1 */
	send_info_init(&si, 0, self->q.sq, NULL, 1, 0);
	do_send_info_err(EINVAL, self->fd, &si);
	do_send_err(EINVAL, self->fd, self->q.sq, s, 0);
	do_send_err(EINVAL, self->fd, self->q.sq, s, DEPTH + 1);
	do_send_err(EINVAL, self->fd, self->q.sq + 1000, s, 1);
	ASSERT_EQ(0, _do_truth(self->fd, self->q.sq, 0, NULL, 0, &next));
	EXPECT_EQ(1, next);	/* the setup's round trip only */
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, alloc_einval)
{
	struct trs_sqcq_alloc_info ai;
	struct trs_uio_info uio = {};
	__u32 other_stream;
	int fd;

#define BAD_ALLOC(field, value) do {					\
	alloc_info_init(&ai, 0, self->q.stream, DEPTH, 0, &uio);	\
	ai.field = (value);						\
	do_alloc_info_err(EINVAL, self->fd, &ai)			\
		TH_LOG(#field " = %#x", (unsigned int)(value));		\
} while (0)
	BAD_ALLOC(type, TRS_SQCQ_TYPE_CALLBACK);
	BAD_ALLOC(type, TRS_SQCQ_TYPE_SHM);
	BAD_ALLOC(type, TRS_SQCQ_TYPE_GDB);
	BAD_ALLOC(type, TRS_SQCQ_TYPE_MAX);
	BAD_ALLOC(type, 0x80000000u);
	BAD_ALLOC(tsId, 2);
	BAD_ALLOC(sqeSize, 32);
	BAD_ALLOC(cqeSize, 8);
	BAD_ALLOC(sqeDepth, 0);
	BAD_ALLOC(sqeDepth, TRS_SQ_MAX_DEPTH + 1);
	BAD_ALLOC(cqeDepth, 0);
	BAD_ALLOC(cqeDepth, TRS_SQ_MAX_DEPTH + 1);
	BAD_ALLOC(flag, TSDRV_FLAG_REUSE_CQ);	/* STARS: pairs only */
	BAD_ALLOC(flag, TSDRV_FLAG_REUSE_SQ);
	BAD_ALLOC(flag, TSDRV_FLAG_SPECIFIED_SQ_MEM);
	BAD_ALLOC(info[0], 999);		/* never allocated */
	BAD_ALLOC(ext_info, (uintptr_t)&uio);	/* and ext_info_len 0 */
	alloc_info_init(&ai, 0, self->q.stream, DEPTH, 0, &uio);
	ai.ext_info = (__u64)(uintptr_t)&uio;
	ai.ext_info_len = 257;
	do_alloc_info_err(EINVAL, self->fd, &ai);
	ai.ext_info = 8;
	ai.ext_info_len = 16;
	do_alloc_info_err(EFAULT, self->fd, &ai);

	/* another fd's stream, and a freed one */
	do_open(&fd, true);
	do_stream_alloc(fd, 0, &other_stream);
	BAD_ALLOC(info[0], other_stream);
	do_stream_free(fd, 0, other_stream);
	BAD_ALLOC(info[0], other_stream);
	close(fd);
#undef BAD_ALLOC

#define BAD_LOGIC(field, value, e) do {					\
	logic_alloc_info_init(&ai, 0, self->q.stream, 16, &uio);	\
	ai.field = (value);						\
	do_alloc_info_err(e, self->fd, &ai)				\
		TH_LOG(#field " = %#x", (unsigned int)(value));		\
} while (0)
	/* trs_logic_cq.c: 0 < cqeSize <= 32, 0 < cqeDepth <= max */
	BAD_LOGIC(cqeSize, 0, EINVAL);
	BAD_LOGIC(cqeSize, TRS_CQE_SIZE + 1, EINVAL);
	BAD_LOGIC(cqeDepth, 0, EINVAL);
	BAD_LOGIC(cqeDepth, NPUSIM_LOGIC_CQ_MAX_DEPTH + 1, EINVAL);
	BAD_LOGIC(info[0], 999, EINVAL);
	BAD_LOGIC(info[0], TRS_STREAM_ID_NONE, EINVAL);
	/* the stream has its logic CQ already */
	BAD_LOGIC(info[0], self->q.stream, EBUSY);
#undef BAD_LOGIC
	EXPECT_NOTHING_CHANGED();
}

/*
 * A NORMAL ALLOC with @flag (and @sq, @cq asked for) succeeds with
 * @want_sq, @want_cq; its FREE with @free_flag too.
 */
static int alloc_free_flag(int fd, __u32 stream, __u32 flag, __u32 sq,
			   __u32 cq, __u32 want_sq, __u32 want_cq,
			   __u32 free_flag, struct trs_uio_info *uio)
{
	struct trs_sqcq_alloc_info ai;
	int err;

	alloc_info_init(&ai, 0, stream, DEPTH, flag, uio);
	ai.sqId = sq;
	ai.cqId = cq;
	err = _do_alloc_info(fd, &ai);
	if (err)
		return err;
	if (ai.sqId != want_sq || ai.cqId != want_cq || ai.flag != flag)
		return -EBADMSG;
	return _do_free_type(fd, TRS_SQCQ_TYPE_NORMAL, 0, ai.sqId, ai.cqId,
			     free_flag);
}

/*
 * The ALLOC flags the runtime passes (stream_sqcq_manage.cc,
 * device_sq_cq_pool.cc, stream.cc, npu_driver_res.cc) do what
 * trs_hw_sqcq.c and trs_logic_cq.c do with them; what the driver refuses
 * fails with its errno and leaves nothing: the next ALLOC gets the same
 * ids and FREE works.
 */
TEST_F(err, alloc_flags_as_driver)
{
	static const __u32 ignored[] = {
		TSDRV_FLAG_RANGE_ID, TSDRV_FLAG_RTS_RSV_SQCQ_ID,
		TSDRV_FLAG_TASK_SINK_SQ, TSDRV_FLAG_PRE_ASYNC_SQ,
		TSDRV_FLAG_REMOTE_ID, TSDRV_FLAG_NO_CQ_MEM,
		TSDRV_FLAG_TASK_SINK_SQ | TSDRV_FLAG_PRE_ASYNC_SQ |
		TSDRV_FLAG_RANGE_ID | TSDRV_FLAG_RTS_RSV_SQCQ_ID,
	};
	static const __u32 refused[] = {
		TSDRV_FLAG_REUSE_SQ,	/* without REUSE_CQ: -EINVAL */
		TSDRV_FLAG_REUSE_SQ | TSDRV_FLAG_REUSE_CQ, /* pairs: -EINVAL */
		TSDRV_FLAG_SPECIFIED_CQ_ID | TSDRV_FLAG_REUSE_CQ,
	};
	const __u32 spec = TSDRV_FLAG_SPECIFIED_SQ_ID |
			   TSDRV_FLAG_SPECIFIED_CQ_ID;
	struct trs_uio_info uio = {};
	struct trs_sqcq_alloc_info ai;
	__u32 stream, sq0, cq0 = 0, sq, cq, lcq0, lcq;
	size_t i;

	do_stream_alloc(self->fd, 0, &stream);
	do_sq_alloc(self->fd, 0, stream, DEPTH, &sq0, &cq0);
	do_sq_free(self->fd, 0, sq0, cq0);

	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		EXPECT_EQ(0, alloc_free_flag(self->fd, stream, ignored[i], 0,
					     0, sq0, cq0, 0, &uio))
			TH_LOG("flag %#x", ignored[i]);

	/* NO_SQ_MEM: no queue memory to map, a kernel-mode SQ */
	uio.sq_que_addr = 0x7f0000000000ul;
	uio.uio_flag = 7;
	EXPECT_EQ(0, alloc_free_flag(self->fd, stream, TSDRV_FLAG_NO_SQ_MEM,
				     0, 0, sq0, cq0, 0, &uio));
	EXPECT_EQ(0, uio.uio_flag);
	EXPECT_EQ(TRS_SOFT_QUE_NONE, uio.soft_que_flag);
	memset(&uio, 0, sizeof(uio));

	/* SPECIFIED_*_ID (device_sq_cq_pool.cc): that id, or -ENOSPC */
	sq = sq0 + 9;
	cq = cq0 + 11;
	EXPECT_EQ(0, alloc_free_flag(self->fd, stream,
				     spec | TSDRV_FLAG_NO_SQ_MEM, sq, cq, sq,
				     cq, 0, &uio));
	alloc_info_init(&ai, 0, stream, DEPTH, spec, &uio);
	ai.sqId = self->q.sq;
	ai.cqId = cq0 + 11;
	do_alloc_info_err(ENOSPC, self->fd, &ai);
	ai.sqId = sq0 + 9;
	ai.cqId = self->q.cq;
	do_alloc_info_err(ENOSPC, self->fd, &ai);
	ai.sqId = NPUSIM_MAX_SQS;
	ai.cqId = cq0 + 11;
	do_alloc_info_err(ENOSPC, self->fd, &ai);

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		alloc_info_init(&ai, 0, stream, DEPTH, refused[i], &uio);
		ai.cqId = self->q.cq;
		do_alloc_info_err(EINVAL, self->fd, &ai)
			TH_LOG("flag %#x", refused[i]);
	}

	/* FREE: RSV_SQ_ID and RSV_CQ_ID name the pool the ids go back to */
	EXPECT_EQ(0, alloc_free_flag(self->fd, stream, 0, 0, 0, sq0, cq0,
				     TSDRV_FLAG_RSV_SQ_ID |
				     TSDRV_FLAG_RSV_CQ_ID, &uio));

	/* LOGIC: THREAD_BIND_IRQ cleared (no IRQ bound), SPECIFIED_CQ_ID */
	logic_alloc_info_init(&ai, 0, stream, 16, &uio);
	ai.flag = TSDRV_FLAG_THREAD_BIND_IRQ | TSDRV_FLAG_REUSE_CQ;
	ASSERT_EQ(0, _do_alloc_info(self->fd, &ai));
	EXPECT_EQ(TSDRV_FLAG_REUSE_CQ, ai.flag);
	lcq0 = ai.cqId;
	do_lcq_free(self->fd, 0, lcq0);
	logic_alloc_info_init(&ai, 0, stream, 16, &uio);
	ai.flag = TSDRV_FLAG_SPECIFIED_CQ_ID;
	ai.cqId = lcq0 + 5;
	ASSERT_EQ(0, _do_alloc_info(self->fd, &ai));
	EXPECT_EQ(lcq0 + 5, ai.cqId);
	do_lcq_free(self->fd, 0, ai.cqId);
	logic_alloc_info_init(&ai, 0, stream, 16, &uio);
	ai.flag = TSDRV_FLAG_SPECIFIED_CQ_ID;
	ai.cqId = self->q.lcq;
	do_alloc_info_err(ENOSPC, self->fd, &ai);
	do_lcq_alloc(self->fd, 0, stream, 16, &lcq);
	EXPECT_EQ(lcq0, lcq);
	do_lcq_free(self->fd, 0, lcq);

	/* nothing leaked: the same ids again */
	do_sq_alloc(self->fd, 0, stream, DEPTH, &sq, &cq);
	EXPECT_EQ(sq0, sq);
	EXPECT_EQ(cq0, cq);
	do_sq_free(self->fd, 0, sq, cq);
	do_stream_free(self->fd, 0, stream);
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, free_einval)
{
	struct trs_logic_cqe c;
	__u32 sq, cq, lcq, stream;
	int fd;

	EXPECT_EQ(-EINVAL, _do_free_type(self->fd, TRS_SQCQ_TYPE_CALLBACK, 0,
					 self->q.sq, self->q.cq, 0));
	EXPECT_EQ(-EINVAL, _do_free_type(self->fd, TRS_SQCQ_TYPE_MAX, 0,
					 self->q.sq, self->q.cq, 0));
	EXPECT_EQ(-EINVAL, _do_free_type(self->fd, 0, 2, self->q.sq,
					 self->q.cq, 0));
	EXPECT_EQ(-EINVAL, _do_sq_free(self->fd, 0, self->q.sq, self->q.cq + 1));
	EXPECT_EQ(-EINVAL, _do_sq_free(self->fd, 0, self->q.sq + 1, self->q.cq));
	EXPECT_EQ(-EINVAL, _do_sq_free(self->fd, 1, self->q.sq, self->q.cq));
	/* REUSE_CQ: STARS devices have no shared CQs */
	EXPECT_EQ(-EINVAL, _do_free_type(self->fd, 0, 0, self->q.sq,
					 self->q.cq, TSDRV_FLAG_REUSE_CQ));
	EXPECT_EQ(-EINVAL, _do_lcq_free(self->fd, 0, self->q.lcq + 1));
	/* a logic CQ id is no hardware CQ id, and the other way round */
	EXPECT_EQ(-EINVAL, _do_recv_type(self->fd, TRS_SQCQ_TYPE_LOGIC, 0,
					 self->q.lcq + 5, &c, 1, 0));

	/* another fd's queues with the same ids */
	do_open(&fd, true);
	do_stream_alloc(fd, 0, &stream);
	do_sq_alloc(fd, 0, stream, 16, &sq, &cq);
	do_lcq_alloc(fd, 0, stream, 16, &lcq);
	EXPECT_EQ(-EINVAL, _do_sq_free(self->fd, 0, sq, cq));
	EXPECT_EQ(-EINVAL, _do_lcq_free(self->fd, 0, lcq));
	EXPECT_EQ(-EINVAL, _do_stream_free(self->fd, 0, stream));
	/* the stream is in use */
	EXPECT_EQ(-EBUSY, _do_stream_free(fd, 0, stream));
	do_lcq_free(fd, 0, lcq);
	EXPECT_EQ(-EBUSY, _do_stream_free(fd, 0, stream));
	do_sq_free(fd, 0, sq, cq);
	do_stream_free(fd, 0, stream);
	/* freed: gone */
	EXPECT_EQ(-EINVAL, _do_sq_free(fd, 0, sq, cq));
	EXPECT_EQ(-EINVAL, _do_lcq_free(fd, 0, lcq));
	EXPECT_EQ(-EINVAL, _do_stream_free(fd, 0, stream));
	close(fd);
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, recv_einval)
{
	struct trs_report_recv_info ri;
	struct trs_logic_cqe c[2];

#define BAD_RECV(field, value) do {					\
	recv_info_init(&ri, TRS_SQCQ_TYPE_LOGIC, 0, self->q.lcq, c, 2, 0); \
	ri.field = (value);						\
	do_recv_info_err(EINVAL, self->fd, &ri)				\
		TH_LOG(#field " = %#x", (unsigned int)(value));		\
} while (0)
	BAD_RECV(type, TRS_SQCQ_TYPE_CALLBACK);
	BAD_RECV(type, TRS_SQCQ_TYPE_SHM);
	BAD_RECV(type, TRS_SQCQ_TYPE_MAX);
	BAD_RECV(tsId, 2);
	BAD_RECV(cqe_num, 0);
	BAD_RECV(cqe_addr, 0);
	BAD_RECV(timeout, -2);
	BAD_RECV(res[0], 2);
	BAD_RECV(cqId, self->q.lcq + 1);
#undef BAD_RECV
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, query_config_einval)
{
	struct trs_sqcq_config_info cfg = {
		.type = TRS_SQCQ_TYPE_LOGIC, .cqId = self->q.lcq,
		.prop = TRS_SQCQ_PROP_SQ_PAUSE,
	};
	struct trs_sqcq_query_info q = {
		.type = TRS_SQCQ_TYPE_LOGIC, .sqId = self->q.sq,
		.prop = TRS_SQCQ_PROP_SQ_HEAD,
	};
	struct npusim_config c;
	__u32 v;

	EXPECT_EQ(-EINVAL, xioctl(self->fd, TRS_IOC_SQCQ_QUERY, &q));
	EXPECT_EQ(-EINVAL, _do_query(self->fd, 0, self->q.sq, 100, &v));
	EXPECT_EQ(-EINVAL, _do_query(self->fd, 0, self->q.sq + 1,
				     TRS_SQCQ_PROP_SQ_HEAD, &v));
	EXPECT_EQ(-EINVAL, _do_query(self->fd, 2, self->q.sq,
				     TRS_SQCQ_PROP_SQ_HEAD, &v));
	EXPECT_EQ(-EOPNOTSUPP, xioctl(self->fd, TRS_IOC_SQCQ_CONFIG, &cfg));
	/*
	 * SQ_HEAD of an idle SQ: the runtime's cleanup, done where the chip
	 * picked the SQ's mode (even kio); under config.sq_mode CONFIG
	 * npusim has no such SQ and refuses it.
	 */
	do_get_config(self->fd, &c);
	EXPECT_EQ(c.sq_mode == NPUSIM_SQ_MODE_CHIP ? 0 : -EOPNOTSUPP,
		  _do_sq_config(self->fd, 0, self->q.sq, TRS_SQCQ_PROP_SQ_HEAD));
	EXPECT_EQ(-EINVAL, _do_sq_config(self->fd, 0, self->q.sq + 1,
					 TRS_SQCQ_PROP_SQ_PAUSE));
	cfg.type = TRS_SQCQ_TYPE_CALLBACK;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, TRS_IOC_SQCQ_CONFIG, &cfg));
	cfg.type = TRS_SQCQ_TYPE_LOGIC;
	cfg.prop = TRS_SQCQ_PROP_SQCQ_RESET;
	cfg.cqId = self->q.lcq + 1;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, TRS_IOC_SQCQ_CONFIG, &cfg));
	EXPECT_NOTHING_CHANGED();
}

/* CONFIG SQCQ_RESET of a logic CQ drops its reports, counted. */
TEST_F(err, logic_cq_reset_counts)
{
	struct trs_sqcq_config_info cfg = {
		.type = TRS_SQCQ_TYPE_LOGIC, .cqId = self->q.lcq,
		.prop = TRS_SQCQ_PROP_SQCQ_RESET,
	};
	struct npusim_stats st;
	struct trs_logic_cqe c;
	struct trs_sqe s[3];
	int i;

	for (i = 0; i < 3; i++)
		sqe_task(&s[i], TRS_SQE_FFTS, self->q.stream, i, true, 100, 0);
	do_send(self->fd, self->q.sq, s, 3, NULL);
	wait_head(self->fd, 0, self->q.sq, 4);	/* after the setup's task */
	ASSERT_EQ(0, xioctl(self->fd, TRS_IOC_SQCQ_CONFIG, &cfg));
	EXPECT_EQ(0, _do_recv(self->fd, self->q.lcq, &c, 1, 0));
	do_stats(self->fd, &st);
	EXPECT_EQ(self->st0.report_drops + 3, st.report_drops);
	EXPECT_EQ(self->st0.reports_pending, st.reports_pending);
	do_roundtrip(&self->q, 5);
}

TEST_F(err, res_id_errors)
{
	struct trs_res_id_para p = { .res_type = TRS_RES_STREAM };
	__u32 id, ev;

	p.res_type = -1;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, TRS_IOC_RES_ID_ALLOC, &p));
	p.res_type = TRS_RES_HW_SQ;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, TRS_IOC_RES_ID_ALLOC, &p));
	p.res_type = TRS_RES_LOGIC_CQ;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, TRS_IOC_RES_ID_ALLOC, &p));
	p.res_type = TRS_RES_STREAM;
	p.tsid = 2;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, TRS_IOC_RES_ID_ALLOC, &p));
	EXPECT_EQ(-EINVAL, _do_stream_free(self->fd, 0, self->q.stream + 1));
	EXPECT_EQ(-EINVAL, _do_stream_free(self->fd, 1, self->q.stream));
	/* other types have their own id space, from 0 */
	ev = 77;
	ASSERT_EQ(0, _do_res_id(self->fd, TRS_IOC_RES_ID_ALLOC, 0,
				TRS_RES_EVENT, &ev));
	EXPECT_EQ(0, ev);
	ASSERT_EQ(0, _do_res_id(self->fd, TRS_IOC_RES_ID_ALLOC, 0,
				TRS_RES_EVENT, &ev));
	EXPECT_EQ(1, ev);
	/* event 1 is no stream 1 */
	EXPECT_EQ(-EINVAL, _do_res_id(self->fd, TRS_IOC_RES_ID_FREE, 0,
				      TRS_RES_STREAM, &ev));
	ASSERT_EQ(0, _do_res_id(self->fd, TRS_IOC_RES_ID_FREE, 0,
				TRS_RES_EVENT, &ev));
	ev = 0;
	ASSERT_EQ(0, _do_res_id(self->fd, TRS_IOC_RES_ID_FREE, 0,
				TRS_RES_EVENT, &ev));
	/* lowest free */
	do_stream_alloc(self->fd, 0, &id);
	EXPECT_EQ(self->q.stream + 1, id);
	do_stream_free(self->fd, 0, id);
	EXPECT_NOTHING_CHANGED();
}

TEST_F_TIMEOUT(err, ids_lowest_free_and_enospc, 120)
{
	static __u32 ids[NPUSIM_MAX_RES_IDS];
	__u32 id, i, n = 0;
	int r;

	/* the fixture holds stream 0 of TS 0 */
	for (;;) {
		r = _do_stream_alloc(self->fd, 0, &id);
		if (r)
			break;
		ASSERT_GT(NPUSIM_MAX_RES_IDS, n);
		ids[n++] = id;
	}
	EXPECT_EQ(-ENOSPC, r);
	EXPECT_EQ(NPUSIM_MAX_RES_IDS - 1, n);
	for (i = 0; i < n; i++)
		EXPECT_EQ(i + 1, ids[i]);
	/* TS 1 has its own ids */
	do_stream_alloc(self->fd, 1, &id);
	EXPECT_EQ(0, id);
	do_stream_free(self->fd, 1, id);
	/* a freed id is the lowest free: reused first */
	do_stream_free(self->fd, 0, ids[100]);
	do_stream_free(self->fd, 0, ids[7]);
	do_stream_alloc(self->fd, 0, &id);
	EXPECT_EQ(ids[7], id);
	do_stream_alloc(self->fd, 0, &id);
	EXPECT_EQ(ids[100], id);
	for (i = 0; i < n; i++)
		do_stream_free(self->fd, 0, ids[i]);
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, config_einval)
{
	struct npusim_config c;

#define BAD_CFG(m, field, value) do {					\
	memset(&c, 0, sizeof(c));					\
	c.mask = (m);							\
	c.field = (value);						\
	do_set_config_err(EINVAL, self->fd, &c)				\
		TH_LOG(#field " = %#llx", (unsigned long long)(value));	\
} while (0)
	BAD_CFG(1u << 31, units, 1);
	BAD_CFG(1u << 4, units, 1);
	BAD_CFG(NPUSIM_CFG_UNITS, units, 0);
	BAD_CFG(NPUSIM_CFG_UNITS, units, NPUSIM_MAX_UNITS + 1);
	BAD_CFG(NPUSIM_CFG_COUNTER_FREQ, counter_freq_hz, 0);
	BAD_CFG(NPUSIM_CFG_COUNTER_FREQ, counter_freq_hz, 0x100000000ull);
	BAD_CFG(NPUSIM_CFG_INJECT_ERROR, inject_error_every, 2);
	BAD_CFG(NPUSIM_CFG_UIO_MODE, uio_mode, 3);
	BAD_CFG(NPUSIM_CFG_DURATION_PCT, duration_pct, 0);
	BAD_CFG(NPUSIM_CFG_DURATION_PCT, duration_pct, 100001);
	BAD_CFG(NPUSIM_CFG_STARS, stars, 0);
	BAD_CFG(NPUSIM_CFG_STARS, stars, 3);
	BAD_CFG(NPUSIM_CFG_SQCQ_PAIR, sqcq_pair, 2);
	BAD_CFG(NPUSIM_CFG_DEFAULT_DURATION, device, 2);
	BAD_CFG(NPUSIM_CFG_DEFAULT_DURATION, pad, 1);
	BAD_CFG(NPUSIM_CFG_DEFAULT_DURATION, res[0], 1);
	BAD_CFG(NPUSIM_CFG_DEFAULT_DURATION, res[4], 1);
	/* A valid field with an invalid one: nothing applied. */
	memset(&c, 0, sizeof(c));
	c.mask = NPUSIM_CFG_DEFAULT_DURATION | NPUSIM_CFG_UNITS;
	c.default_duration_ns = self->cfg0.default_duration_ns + 1;
	c.units = 0;
	do_set_config_err(EINVAL, self->fd, &c);
#undef BAD_CFG
	do_get_config(self->fd, &c);
	EXPECT_EQ(self->cfg0.default_duration_ns, c.default_duration_ns);
	memset(&c, 0, sizeof(c));
	c.device = 2;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, NPUSIM_IOC_GET_CONFIG, &c));
	EXPECT_EQ(-EINVAL, _do_clock_dev(self->fd, 2, (void *)&c));
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, config_ebusy)
{
	struct npusim_config c = {
		.mask = NPUSIM_CFG_COUNTER_FREQ,
		.counter_freq_hz = self->cfg0.counter_freq_hz + 1,
	};
	struct trs_sqe s;

	/* a queued task: the clock cannot change under it */
	do_sq_pause(self->fd, 0, self->q.sq);
	sqe_task(&s, TRS_SQE_FFTS, self->q.stream, 1, false, 100, 0);
	do_send(self->fd, self->q.sq, &s, 1, NULL);
	do_set_config_err(EBUSY, self->fd, &c);
	/* an SQ: the SQE header and chip family neither */
	c.mask = NPUSIM_CFG_STARS;
	c.stars = 2;
	do_set_config_err(EBUSY, self->fd, &c);
	c.mask = NPUSIM_CFG_SQCQ_PAIR;
	c.sqcq_pair = 0;
	do_set_config_err(EBUSY, self->fd, &c);
	/* the same values are no change */
	c.mask = NPUSIM_CFG_STARS | NPUSIM_CFG_SQCQ_PAIR;
	c.stars = self->cfg0.stars;
	c.sqcq_pair = self->cfg0.sqcq_pair;
	do_set_config(self->fd, &c);
	do_sq_resume(self->fd, 0, self->q.sq);
	wait_head(self->fd, 0, self->q.sq, 2);	/* after the setup's task */
	self->st0.submitted++;
	self->st0.completed++;
	EXPECT_NOTHING_CHANGED();
}

TEST_F(err, truth_queries)
{
	struct npusim_truth_query q = { .sq_id = self->q.sq, .count = 2 };
	struct npusim_task_truth t[2];
	__u64 next = 99;

	q.addr = (__u64)(uintptr_t)t;
	q.res = 1;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, NPUSIM_IOC_TRUTH, &q));
	q.res = 0;
	q.flags = 2;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, NPUSIM_IOC_TRUTH, &q));
	q.flags = 0;
	q.ts_id = 2;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, NPUSIM_IOC_TRUTH, &q));
	q.ts_id = 1;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, NPUSIM_IOC_TRUTH, &q));
	do_truth_err(EINVAL, self->fd, self->q.sq + 1000, 0, t, 1);
	/* Not submitted yet: no record, not an error. */
	EXPECT_EQ(0, _do_truth(self->fd, self->q.sq, 1, t, 2, &next));
	EXPECT_EQ(1, next);
	EXPECT_EQ(0, _do_truth(self->fd, self->q.sq, 1ull << 40, t, 2, &next));
	EXPECT_NOTHING_CHANGED();
	/* the setup's round trip and this one */
	EXPECT_EQ(2, _do_truth(self->fd, self->q.sq, 0, t, 2, &next));
	EXPECT_EQ(2, next);
	q.count = 1;
	q.seq = 0;
	q.ts_id = 0;
	q.addr = 8;
	EXPECT_EQ(-EFAULT, xioctl(self->fd, NPUSIM_IOC_TRUTH, &q));
}

/*
 * The truth by (device, TS, SQ), whoever owns the SQ: for CAP_SYS_ADMIN,
 * on any fd; the same ids on two devices are two SQs.
 */
TEST_F(err, truth_any_owner)
{
	struct npusim_truth_query q = {
		.flags = NPUSIM_TRUTH_ANY_OWNER, .count = 1,
	};
	struct npusim_task_truth t;
	struct trs_sqe s;
	struct npq q1;
	int ctl, fd1;

	do_open(&ctl, false);
	do_open_dev(&fd1, 1);
	npq_create(&q1, fd1, 0, 16);
	EXPECT_EQ(self->q.sq, q1.sq);
	sqe_task(&s, TRS_SQE_FFTS, q1.stream, 0x321, false, 100, 0);
	npq_send(&q1, &s, 1, NULL);
	wait_head(fd1, 0, q1.sq, 1);
	q.addr = (__u64)(uintptr_t)&t;
	q.sq_id = q1.sq;
	q.device = 1;
	ASSERT_EQ(0, xioctl(ctl, NPUSIM_IOC_TRUTH, &q));
	EXPECT_EQ(1, q.count);
	EXPECT_EQ(1, q.next_seq);
	EXPECT_EQ(0x321, t.task_id);
	q.device = 0;
	q.count = 1;
	ASSERT_EQ(0, xioctl(ctl, NPUSIM_IOC_TRUTH, &q));
	EXPECT_EQ(1, t.task_id);	/* the fixture's round trip */
	q.device = 2;
	EXPECT_EQ(-EINVAL, xioctl(ctl, NPUSIM_IOC_TRUTH, &q));
	q.device = 1;
	q.sq_id = q1.sq + 1;
	EXPECT_EQ(-EINVAL, xioctl(ctl, NPUSIM_IOC_TRUTH, &q));
	close(fd1);
	close(ctl);
	self->st0.submitted++;
	self->st0.completed++;
	EXPECT_NOTHING_CHANGED();
}

/* The node is like davinci_manager's: root:root 0660 by default. */
TEST_F(err, node_mode)
{
	struct stat st;

	ASSERT_EQ(0, stat(NPUSIM_DEV, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0660, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_uid);
	EXPECT_EQ(0, st.st_gid);
}

static int drop_cap(int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[cap / 32].effective &= ~(1u << (cap % 32));
	d[cap / 32].permitted &= ~(1u << (cap % 32));
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * Global controls need CAP_SYS_ADMIN; without it SET_CONFIG and FAIL_NTH
 * fail with EPERM and change nothing, and everything else works. A user
 * outside the node's group cannot open it at all.
 */
TEST_F(err, cap_sys_admin)
{
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct npusim_config c;
		struct npusim_stats st;
		int bad = 0;

		if (drop_cap(CAP_SYS_ADMIN))
			_exit(100);
		memset(&c, 0, sizeof(c));
		c.mask = NPUSIM_CFG_DEFAULT_DURATION;
		c.default_duration_ns = 1;
		bad |= _do_set_config(self->fd, &c) != -EPERM;
		bad |= (_do_fail_nth(self->fd, 1) != -EPERM) << 1;
		bad |= (_do_get_config_dev(self->fd, 0, &c) != 0) << 2;
		bad |= (_do_stats(self->fd, &st) != 0) << 3;
		bad |= (_roundtrip(&self->q, 9) != 0) << 4;
		{
			struct npusim_truth_query tq = {
				.sq_id = self->q.sq,
				.flags = NPUSIM_TRUTH_ANY_OWNER,
			};

			bad |= (xioctl(self->fd, NPUSIM_IOC_TRUTH, &tq) !=
				-EPERM) << 5;
		}
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgid(65534) || setuid(65534))
			_exit(100);
		_exit(open(NPUSIM_DEV, O_RDWR) < 0 && errno == EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_NOTHING_CHANGED_BUT(1);
}

static int write_param(const char *name, const char *value)
{
	char path[128];
	int fd, n;

	snprintf(path, sizeof(path), "/sys/module/npusim/parameters/%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, value, strlen(value));
	close(fd);
	return n < 0 ? -errno : 0;
}

/*
 * Kernel memory is capped per process: past max_proc_kbytes an ALLOC
 * fails with ENOMEM and leaves nothing; another process has its own
 * budget; everything comes back on release.
 */
TEST_F(err, memory_cap_per_process)
{
	struct npusim_stats st, st1;
	__u32 sq[64], cq[64];
	int n = 0, r, fd, i;
	pid_t pid;
	int status;

	do_open(&fd, true);
	ASSERT_EQ(0, write_param("max_proc_kbytes", "1024"));
	do_stats(self->fd, &st);
	for (;;) {
		cq[n] = 0;
		r = _do_sq_alloc(fd, 0, TRS_STREAM_ID_NONE, 1024, 0, &sq[n],
				 &cq[n], NULL);
		if (r)
			break;
		ASSERT_GT(64, ++n);
	}
	EXPECT_EQ(-ENOMEM, r);
	EXPECT_LT(0, n);
	do_stats(self->fd, &st1);
	EXPECT_EQ(st.sqs + n, st1.sqs);
	EXPECT_EQ(st.cqs + n, st1.cqs);
	EXPECT_LT(st.kmem_bytes, st1.kmem_bytes);
	/* a RES_ID, or a RECV buffer, fails the same way */
	/* another process has its own budget */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int cfd = _do_open(true);
		__u32 s2, c2 = 0;

		_exit(cfd < 0 || _do_sq_alloc(cfd, 0, TRS_STREAM_ID_NONE, 1024,
					      0, &s2, &c2, NULL));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, _do_sq_free(fd, 0, sq[i], cq[i]));
	close(fd);
	ASSERT_EQ(0, write_param("max_proc_kbytes", "524288"));
	do_stats(self->fd, &st1);
	EXPECT_LIVE_EQ(self->st0, st1);
	EXPECT_NOTHING_CHANGED();
}

TEST_HARNESS_MAIN
