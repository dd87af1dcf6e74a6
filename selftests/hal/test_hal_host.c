// SPDX-License-Identifier: GPL-2.0
/*
 * The npu HAL's contracts that need no device: argument checks, option
 * validation, SQE layouts and the stream registry (host test, no npusim).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <npusim/hal.h>
#include "kselftest_harness.h"

TEST(null_arguments)
{
	struct trs_logic_cqe c;
	struct trs_sqe s;

	EXPECT_EQ(-EINVAL, npu_dev_fd(NULL));
	EXPECT_EQ(NULL, npu_sqcq_alloc(NULL, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, npu_sqcq_free(NULL));
	EXPECT_EQ(-EINVAL, npu_sqcq_sq_id(NULL));
	EXPECT_EQ(-EINVAL, npu_sqcq_cq_id(NULL));
	EXPECT_EQ(-EINVAL, npu_sqcq_depth(NULL));
	EXPECT_FALSE(npu_sqcq_is_mapped(NULL));
	EXPECT_EQ(-EINVAL, npu_sqcq_sq_head(NULL));
	EXPECT_EQ(-EINVAL, npu_sqcq_send(NULL, &s, 1, 0));
	EXPECT_EQ(-EINVAL, npu_sqcq_recv(NULL, &c, 1, 0, NULL));
	EXPECT_EQ(NULL, npu_stream_create(NULL, NULL));
	EXPECT_EQ(-EINVAL, npu_stream_sync(NULL, 0));
	EXPECT_EQ(-EINVAL, npu_stream_mark_step(NULL, 1, 0));
	EXPECT_EQ(-EINVAL, npu_stream_stats(NULL, NULL, NULL, NULL));
	EXPECT_EQ(NULL, npu_stream_sqcq(NULL));
	EXPECT_EQ(-EINVAL, npu_sim_stats(NULL, NULL));
	EXPECT_EQ(-EINVAL, npu_sim_clock(NULL, NULL));
	EXPECT_EQ(-EINVAL, npu_sim_get_config(NULL, NULL));
	EXPECT_EQ(-EINVAL, npu_sim_set_config(NULL, NULL));
	EXPECT_EQ(-EINVAL, npu_sim_truth(NULL, 0, 0, NULL, 0, NULL));
	npu_dev_close(NULL);
	npu_stream_destroy(NULL);
}

TEST(dev_open)
{
	struct npu_dev_opts o = { .sz = sizeof(o), .path = "/nonexistent/x" };
	struct npu_dev_opts big[2];
	struct npusim_stats st;
	struct npu_dev *d;

	EXPECT_EQ(NULL, npu_dev_open(&o));
	EXPECT_EQ(ENOENT, errno);
	/* Options from a newer caller: unknown bytes must be zero. */
	memset(big, 0, sizeof(big));
	big[0].sz = sizeof(big);
	big[0].path = "/dev/null";
	big[0].no_bind = true;
	d = npu_dev_open(big);
	ASSERT_NE(NULL, d);
	npu_dev_close(d);
	((char *)big)[sizeof(o) + 1] = 1;
	EXPECT_EQ(NULL, npu_dev_open(big));
	EXPECT_EQ(EINVAL, errno);
	o.sz = 1;
	EXPECT_EQ(NULL, npu_dev_open(&o));
	EXPECT_EQ(EINVAL, errno);
	/* Not the simulator: its commands fail, nothing crashes. */
	o = (struct npu_dev_opts){ .sz = sizeof(o), .path = "/dev/null" };
	EXPECT_EQ(NULL, npu_dev_open(&o));
	EXPECT_EQ(ENOTTY, errno);
	o.no_bind = true;
	d = npu_dev_open(&o);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(-ENOTTY, npu_sim_stats(d, &st));
	EXPECT_EQ(NULL, npu_sqcq_alloc(d, NULL));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(NULL, npu_stream_create(d, NULL));
	EXPECT_EQ(ENOTTY, errno);
	npu_dev_close(d);
}

TEST(sqe_layouts)
{
	struct npu_task_desc d = {
		.type = TRS_SQE_AICPU | 0xc0, .stream_id = 0xa1b2,
		.task_id = 0xc3d4, .wr_cqe = false, .duration_ns = 7,
		.sim_error = 9,
	};
	struct trs_sqe s;
	__u8 b[64];
	int i;

	memset(&s, 0xee, sizeof(s));
	npu_sqe_task(&s, &d);
	memcpy(b, &s, 64);
	/* Lock bits are not the HAL's to set. */
	EXPECT_EQ(TRS_SQE_AICPU, b[0]);
	EXPECT_EQ(0, b[1]);
	EXPECT_EQ(0, b[2] | b[3]);
	EXPECT_EQ(0xb2, b[4]);
	EXPECT_EQ(0xa1, b[5]);
	EXPECT_EQ(0xd4, b[6]);
	EXPECT_EQ(0xc3, b[7]);
	EXPECT_EQ(9, b[56]);
	EXPECT_EQ(7, b[60]);
	for (i = 8; i < 56; i++) {
		EXPECT_EQ(0, b[i]) TH_LOG("byte %d", i);
	}

	npu_sqe_step_mark(&s, 0x0102, 0x0304, 0xaabbccdd00112233ull, 0x0506);
	memcpy(b, &s, 64);
	EXPECT_EQ(TRS_SQE_PLACE_HOLDER, b[0]);
	/* As rtProfilerTraceEx on an ordinary stream: pre_p 1, no wr_cqe. */
	EXPECT_EQ(0x04, b[1]);
	EXPECT_EQ(TRS_TASK_PROFILER_TRACE_EX, b[2] | b[3] << 8);
	EXPECT_EQ(0x02, b[4]);
	EXPECT_EQ(0x04, b[6]);
	EXPECT_EQ(0x33, b[16]);
	EXPECT_EQ(0xaa, b[23]);
	EXPECT_EQ(0xffffffffull, s.place_holder.model_id);
	EXPECT_EQ(0x06, b[32]);
	EXPECT_EQ(0x05, b[33]);
	EXPECT_EQ(0, s.place_holder.sim_error);
	EXPECT_EQ(0, s.place_holder.sim_duration_ns);
}

/* STARS v2: flags at their v2 bits, 32-bit task id, task type at @12. */
TEST(sqe_v2)
{
	struct npu_task_desc d = { .type = TRS_SQE_FFTS, .stream_id = 9,
				   .task_id = 3, .wr_cqe = true,
				   .duration_ns = 0x11223344 };
	struct trs_sqe s;
	struct trs_sqe_v2 v;
	__u8 b[64];

	npu_sqe_task(&s, &d);
	npu_sqe_to_v2(&v, &s, 0x01020304);
	memcpy(b, &v, 64);
	EXPECT_EQ(TRS_SQE_FFTS, b[0]);
	EXPECT_EQ(TRS_SQE_V2_F_WR_CQE, b[1]);
	EXPECT_EQ(0x04, b[4]);
	EXPECT_EQ(0x01, b[7]);
	EXPECT_EQ(0x44, b[60]);

	npu_sqe_step_mark(&s, 9, 3, 0x55, 60001);
	npu_sqe_to_v2(&v, &s, 70000);
	memcpy(b, &v, 64);
	EXPECT_EQ(TRS_SQE_PLACE_HOLDER, b[0]);
	EXPECT_EQ(TRS_SQE_V2_F_PRE_P, b[1]);	/* no wr_cqe */
	EXPECT_EQ(0, b[2] | b[3]);
	EXPECT_EQ(70000, v.task_id);
	EXPECT_EQ(TRS_TASK_PROFILER_TRACE_EX, b[12] | b[13] << 8);
	EXPECT_EQ(0x55, b[16]);
	EXPECT_EQ(60001, v.place_holder.tag_id);
	EXPECT_EQ(TRS_MODEL_ID_NONE, v.place_holder.model_id);
}

/* Any pointer may be asked about: the registry never dereferences it. */
TEST(registry_foreign_pointers)
{
	static char stat_buf[64];
	void *heap = malloc(256);
	int local;

	EXPECT_EQ(0, npu_stream_is_valid(NULL));
	EXPECT_EQ(0, npu_stream_is_valid(&local));
	EXPECT_EQ(0, npu_stream_is_valid(heap));
	EXPECT_EQ(0, npu_stream_is_valid(stat_buf));
	EXPECT_EQ(0, npu_stream_is_valid((void *)1));
	EXPECT_EQ(0, npu_stream_is_valid((void *)-1L));
	EXPECT_EQ(-EINVAL, npu_stream_id(heap));
	EXPECT_EQ(-EINVAL, npu_stream_submit(heap, NULL, 0));
	EXPECT_EQ(-EINVAL, npu_stream_submit((void *)8, NULL, 1));
	free(heap);
}

TEST_HARNESS_MAIN
