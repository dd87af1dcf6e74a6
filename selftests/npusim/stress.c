// SPDX-License-Identifier: GPL-2.0
/*
 * npusim under random, mostly valid, often wrong ioctls: two processes of
 * three threads each, on both devices and TS, with random closes,
 * FAIL_NTH armed at random and one process killed mid-flight. Afterwards
 * every live counter is back where it was (run_vm.sh checks the kernel
 * log). A bounded run; the long fuzzer is the project's own (selftests/
 * fuzz). Seeded: a failure names the seed to replay with STRESS_SEED.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "npusim_test.h"

#define RUN_MS		8000
#define IDS		8

struct worker {
	unsigned int seed;
	__u64 end_ns;
	long ops;
};

static __u32 rnd(unsigned int *s, __u32 n)
{
	return n ? (__u32)rand_r(s) % n : 0;
}

/* A value near the ones that matter: small ids, limits, garbage. */
static __u32 pick(unsigned int *s, const __u32 *ids)
{
	switch (rnd(s, 8)) {
	case 0:
		return rand_r(s);
	case 1:
		return ~0u - rnd(s, 2);
	case 2:
		return rnd(s, 4);
	default:
		return ids[rnd(s, IDS)];
	}
}

static void *ptr(unsigned int *s, void *good)
{
	switch (rnd(s, 16)) {
	case 0:
		return NULL;
	case 1:
		return (void *)8;
	default:
		return good;
	}
}

static void one_op(unsigned int *s, int fd, __u32 *streams, __u32 *sqs,
		   __u32 *cqs, __u32 *lcqs)
{
	static __thread struct trs_sqe sqes[64];
	static __thread struct trs_logic_cqe cqes[64];
	struct trs_uio_info uio = { .sq_que_addr = rnd(s, 4) == 0 };
	struct trs_sqcq_alloc_info ai;
	struct trs_task_send_info si;
	struct trs_report_recv_info ri;
	struct npusim_task_truth t[4];
	__u32 ts = rnd(s, 8) ? rnd(s, 2) : rnd(s, 5), i, n, v;
	int r;

	switch (rnd(s, 12)) {
	case 0:
		if (!_do_stream_alloc(fd, ts, &v))
			streams[rnd(s, IDS)] = v;
		break;
	case 1:
		_do_res_id(fd, rnd(s, 3) ? TRS_IOC_RES_ID_FREE :
					   TRS_IOC_RES_ID_ALLOC,
			   ts, rnd(s, 8) ? 0 : rnd(s, 16) - 2, &streams[rnd(s, IDS)]);
		break;
	case 2:
		alloc_info_init(&ai, ts, pick(s, streams), 1 + rnd(s, 128),
				rnd(s, 6) ? 0 : rand_r(s), ptr(s, &uio));
		ai.type = rnd(s, 8) ? 0 : rnd(s, 7);
		ai.cqId = pick(s, cqs);
		if (!_do_alloc_info(fd, &ai)) {
			i = rnd(s, IDS);
			sqs[i] = ai.sqId;
			cqs[i] = ai.cqId;
			if (uio.uio_flag && rnd(s, 2))
				munmap((void *)(uintptr_t)(uio.sq_que_addr -
						NPUSIM_SQ_MMAP_SQE_OFF),
				       NPUSIM_SQ_MMAP_SIZE(ai.sqeDepth));
		}
		break;
	case 3:
		logic_alloc_info_init(&ai, ts, pick(s, streams),
				      rnd(s, 8) ? 64 : rnd(s, 70000), &uio);
		if (!_do_alloc_info(fd, &ai))
			lcqs[rnd(s, IDS)] = ai.cqId;
		break;
	case 4:
		_do_free_type(fd, rnd(s, 6) ? 0 : rnd(s, 7), ts, pick(s, sqs),
			      pick(s, cqs), rnd(s, 6) ? 0 : TSDRV_FLAG_REUSE_CQ);
		break;
	case 5:
		_do_lcq_free(fd, ts, pick(s, lcqs));
		break;
	case 6:
	case 7:
		n = 1 + rnd(s, 64);
		for (i = 0; i < n; i++) {
			sqe_task(&sqes[i], rnd(s, 16), pick(s, streams) |
				 (rnd(s, 8) ? 0 : TRS_SQE_STREAM_MATCH), i,
				 rnd(s, 3) == 0, rnd(s, 20000),
				 rnd(s, 32) ? 0 : 0x42);
			sqes[i].flags |= rnd(s, 256) & 0x88;
		}
		send_info_init(&si, ts, pick(s, sqs), ptr(s, sqes), n,
			       rnd(s, 4) ? 0 : rnd(s, 3));
		_do_send_info(fd, &si);
		break;
	case 8:
		v = rnd(s, 2) ? TRS_SQCQ_TYPE_LOGIC : rnd(s, 7);
		recv_info_init(&ri, v, ts, v == TRS_SQCQ_TYPE_LOGIC ?
			       pick(s, lcqs) : pick(s, cqs), ptr(s, cqes),
			       rnd(s, 65), rnd(s, 4) ? 0 : rnd(s, 3));
		ri.res[0] = rnd(s, 3);
		ri.stream_id = pick(s, streams);
		ri.task_id = rnd(s, 64);
		_do_recv_info(fd, &ri);
		break;
	case 9:
		_do_query(fd, ts, pick(s, sqs), rnd(s, 16), &v);
		_do_sq_config(fd, ts, pick(s, sqs), rnd(s, 16));
		break;
	case 10:
		r = _do_truth_ts(fd, ts, pick(s, sqs), rnd(s, 100), t, 4, NULL);
		(void)r;
		break;
	default:
		if (rnd(s, 4) == 0)
			_do_fail_nth(fd, rnd(s, 8));
		else
			_do_manager(fd, ASCEND_MANAGER_CLOSE, "", 0);
		break;
	}
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	__u32 streams[IDS] = { 0 }, sqs[IDS] = { 0 }, cqs[IDS] = { 0 };
	__u32 lcqs[IDS] = { 0 };
	int fd = -1;

	while (now_ns() < w->end_ns) {
		if (fd < 0 || rnd(&w->seed, 400) == 0) {
			if (fd >= 0)
				close(fd);
			fd = _do_open_dev(rnd(&w->seed, 10) ? rnd(&w->seed, 2) :
							      rnd(&w->seed, 4) - 1);
			if (fd < 0)
				continue;
		}
		one_op(&w->seed, fd, streams, sqs, cqs, lcqs);
		w->ops++;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Three threads for @ms; exit status 0. */
static void run_process(unsigned int seed, int ms)
{
	struct worker w[3];
	pthread_t tid[3];
	int i;

	for (i = 0; i < 3; i++) {
		w[i] = (struct worker){
			.seed = seed * 7919 + i,
			.end_ns = now_ns() + (__u64)ms * 1000000,
		};
		pthread_create(&tid[i], NULL, worker_fn, &w[i]);
	}
	for (i = 0; i < 3; i++)
		pthread_join(tid[i], NULL);
	_exit(0);
}

TEST(random_ioctls_clean_up)
{
	struct npusim_stats base, st;
	unsigned int seed = getenv("STRESS_SEED") ?
			    strtoul(getenv("STRESS_SEED"), NULL, 0) :
			    (unsigned int)now_ns();
	pid_t pid[2];
	int ctl, i, status;

	TH_LOG("seed %u (STRESS_SEED to replay)", seed);
	do_open(&ctl, false);
	do_stats(ctl, &base);
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			run_process(seed + i, RUN_MS);
	}
	/* one process dies mid-flight, with whatever it holds */
	pause_us(RUN_MS * 1000 / 2);
	kill(pid[1], SIGKILL);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
	wait_live(ctl, &base, &st);
	TH_LOG("submitted %llu, reports %llu, drops %llu, errors %llu, cancelled %llu, traced %llu, fail_nth %llu",
	       st.submitted - base.submitted, st.reports - base.reports,
	       st.report_drops - base.report_drops, st.errors - base.errors,
	       st.cancelled - base.cancelled,
	       st.traced_sqes - base.traced_sqes,
	       st.fail_nth_hits - base.fail_nth_hits);
	/* a run that exercised nothing tests nothing */
	EXPECT_LT(base.submitted + 1000, st.submitted);
	EXPECT_LT(base.reports, st.reports);
	EXPECT_LT(base.fail_nth_hits, st.fail_nth_hits);
	close(ctl);
}

TEST_HARNESS_MAIN
