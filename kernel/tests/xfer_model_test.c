// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the transfer time model (xfer_model.c): its edges, that
 * it grows with the bytes and the DPUs, that it saturates instead of
 * overflowing, the directions and memories, and the largest share a
 * checked transfer hands it.
 */
#include <kunit/test.h>
#include <linux/sizes.h>

#include "../xfer.h"

#define TO	false
#define FROM	true
#define MRAM	false
#define WRAM	true

static u64 model(bool from, bool wram, u64 bytes, u32 dpus)
{
	return dpusim_xfer_model_ns(from, wram, bytes, dpus);
}

/* A call that moves nothing takes nothing, in every direction and memory. */
static void model_zero_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, model(TO, MRAM, 0, 1), 0);
	KUNIT_EXPECT_EQ(test, model(FROM, WRAM, 0, 64), 0);
	KUNIT_EXPECT_EQ(test, model(TO, MRAM, SZ_1M, 0), 0);
	KUNIT_EXPECT_EQ(test, model(FROM, MRAM, U64_MAX, 0), 0);
}

/*
 * One byte costs at least the call's fixed part: more than the byte alone
 * at the rank's bandwidth, so a small call is not free.
 */
static void model_small_test(struct kunit *test)
{
	u64 one = model(TO, MRAM, 1, 1), eight = model(TO, MRAM, 8, 1);

	KUNIT_EXPECT_GT(test, one, 0);
	KUNIT_EXPECT_GE(test, eight, one);
	/* fixed + 7 bytes: far less than 8 calls of one byte */
	KUNIT_EXPECT_LT(test, eight, 8 * one);
}

/*
 * The modeled bandwidths lie where the measurements do: a 1-DPU call
 * moves 64 MiB to the DPU at 0.3 .. 3 GB/s and back at 0.05 .. 1 GB/s; a
 * 64-DPU call of 1 MiB each moves the rank's 64 MiB at 1 .. 20 GB/s to
 * the DPUs and more slowly back.  Bytes per ns are GB/s.
 */
static void model_bandwidth_test(struct kunit *test)
{
	u64 t1_to = model(TO, MRAM, SZ_64M, 1);
	u64 t1_from = model(FROM, MRAM, SZ_64M, 1);
	u64 t64_to = model(TO, MRAM, SZ_1M, 64);
	u64 t64_from = model(FROM, MRAM, SZ_1M, 64);

	KUNIT_EXPECT_GT(test, (u64)SZ_64M * 10, 3 * t1_to);
	KUNIT_EXPECT_LT(test, (u64)SZ_64M, 3 * t1_to);
	KUNIT_EXPECT_GT(test, (u64)SZ_64M * 100, 5 * t1_from);
	KUNIT_EXPECT_LT(test, (u64)SZ_64M, t1_from);
	KUNIT_EXPECT_GT(test, (u64)SZ_64M, t64_to);
	KUNIT_EXPECT_LT(test, (u64)SZ_64M, 20 * t64_to);
	KUNIT_EXPECT_GT(test, t64_from, t64_to);
	/* 64 DPUs of a rank move its bytes faster than one DPU would */
	KUNIT_EXPECT_LT(test, t64_to, t1_to);
}

/* Non-decreasing in the bytes, for every DPU count up to past a rank's. */
static void model_monotonic_bytes_test(struct kunit *test)
{
	static const u64 bytes[] = {
		0, 1, 8, 64, 4096, SZ_64K, SZ_1M, SZ_64M, SZ_1G, SZ_4G,
		1ULL << 40, 1ULL << 50, U64_MAX,
	};
	static const u32 dpus[] = { 1, 2, 7, 16, 63, 64, 65, 128, 256 };
	unsigned int i, j, d, w;

	for (d = 0; d < 2; d++)
		for (w = 0; w < 2; w++)
			for (j = 0; j < ARRAY_SIZE(dpus); j++)
				for (i = 1; i < ARRAY_SIZE(bytes); i++)
					KUNIT_EXPECT_GE(test, model(d, w, bytes[i], dpus[j]),
							model(d, w, bytes[i - 1], dpus[j]));
	/* and strictly: a MiB more is time more */
	KUNIT_EXPECT_GT(test, model(TO, MRAM, 2 * SZ_1M, 64), model(TO, MRAM, SZ_1M, 64));
	KUNIT_EXPECT_GT(test, model(FROM, MRAM, 2 * SZ_1M, 1), model(FROM, MRAM, SZ_1M, 1));
}

/* Non-decreasing in the DPUs of the call, the same share each. */
static void model_monotonic_dpus_test(struct kunit *test)
{
	static const u64 bytes[] = { 1, 8, 4096, SZ_1M, SZ_64M };
	unsigned int i, d, w;
	u32 n;

	for (d = 0; d < 2; d++)
		for (w = 0; w < 2; w++)
			for (i = 0; i < ARRAY_SIZE(bytes); i++)
				for (n = 2; n <= 256; n++)
					KUNIT_EXPECT_GE(test, model(d, w, bytes[i], n),
							model(d, w, bytes[i], n - 1));
	KUNIT_EXPECT_GT(test, model(TO, MRAM, SZ_1M, 64), model(TO, MRAM, SZ_1M, 1));
}

/*
 * Past the hardware's 64 DPUs a rank's channel carries every DPU's bytes:
 * 128 DPUs of S bytes take what 64 DPUs of 2 S take.
 */
static void model_past_rank_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, model(TO, MRAM, SZ_1M, 128), model(TO, MRAM, SZ_2M, 64));
	KUNIT_EXPECT_EQ(test, model(FROM, WRAM, 4096, 256), model(FROM, WRAM, 4 * 4096, 64));
	/* rounded up: never less than the 64-DPU call of the same share */
	KUNIT_EXPECT_GE(test, model(TO, MRAM, 1, 65), model(TO, MRAM, 1, 64));
}

/* The largest shares saturate at U64_MAX instead of wrapping. */
static void model_overflow_test(struct kunit *test)
{
	u64 big = model(TO, MRAM, DPUSIM_XFER_MAX_PAD_BYTES, 256);

	/* the largest a call can ask for (a 4 GiB share) stays exact */
	KUNIT_EXPECT_LT(test, big, U64_MAX);
	KUNIT_EXPECT_GT(test, big, model(TO, MRAM, DPUSIM_XFER_MAX_PAD_BYTES, 64));
	KUNIT_EXPECT_EQ(test, model(TO, MRAM, U64_MAX, 1), U64_MAX);
	KUNIT_EXPECT_EQ(test, model(FROM, WRAM, U64_MAX, 64), U64_MAX);
	KUNIT_EXPECT_EQ(test, model(TO, MRAM, U64_MAX / 2, 256), U64_MAX);
	KUNIT_EXPECT_EQ(test, model(FROM, MRAM, 1ULL << 60, 64), U64_MAX);
	KUNIT_EXPECT_LT(test, model(FROM, MRAM, 1ULL << 40, 64), U64_MAX);
}

/* The DPUs are read more slowly than written, at every DPU count. */
static void model_direction_test(struct kunit *test)
{
	u32 n;

	for (n = 1; n <= 64; n++) {
		KUNIT_EXPECT_GT(test, model(FROM, MRAM, SZ_64K, n), model(TO, MRAM, SZ_64K, n));
		KUNIT_EXPECT_GT(test, model(FROM, MRAM, 8, n), model(TO, MRAM, 8, n));
	}
}

/* A WRAM call's fixed part is at least an MRAM call's, for many DPUs. */
static void model_wram_test(struct kunit *test)
{
	KUNIT_EXPECT_GE(test, model(TO, WRAM, 8, 64), model(TO, MRAM, 8, 64));
	KUNIT_EXPECT_GE(test, model(FROM, WRAM, 8, 64), model(FROM, MRAM, 8, 64));
	/* the bytes cost the same in either memory */
	KUNIT_EXPECT_EQ(test, model(TO, WRAM, SZ_1M, 4) - model(TO, WRAM, SZ_64K, 4),
			model(TO, MRAM, SZ_1M, 4) - model(TO, MRAM, SZ_64K, 4));
}

/* The same call gives the same time: the model is a pure function. */
static void model_deterministic_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, model(TO, MRAM, 12345, 17), model(TO, MRAM, 12345, 17));
	KUNIT_EXPECT_EQ(test, model(FROM, MRAM, SZ_1M, 64), model(FROM, MRAM, SZ_1M, 64));
}

static const struct dpusim_geometry model_geo = {
	.nr_ranks = 1,
	.nr_dpus = 4,
	.mram_size = SZ_1M,
	.wram_size = SZ_4K,
};

static struct dpusim_budget model_budget = { .limit = SZ_1M };

/*
 * The share a checked transfer hands the model: to the DPUs every DPU
 * gets the whole length (its blocks, then zeros); from them, the most
 * bytes one DPU's blocks hold.
 */
static void model_check_share_test(struct kunit *test)
{
	struct dpusim_rank *rank = kunit_kzalloc(test, sizeof(*rank), GFP_KERNEL);
	const struct dpusim_xfer_dpu dpus[] = { { 0, 1 }, { 2, 2 }, { 3, 1 } };
	const struct dpusim_block blocks[] = {
		{ 0x10000, 16 }, { 0x20000, 24 }, { 0x30000, 16 }, { 0x40000, 8 },
	};
	struct dpusim_xfer x = {
		.flags = DPUSIM_XFER_NO_LENGTH_CHECK, .offset = 0, .length = 64,
		.nr_dpus = 3, .nr_blocks = 4,
	};
	u64 bytes, pad, most;

	KUNIT_ASSERT_NOT_NULL(test, rank);
	KUNIT_ASSERT_EQ(test, dpusim_rank_init(rank, 0, &model_geo, &model_budget), 0);
	KUNIT_EXPECT_EQ(test, dpusim_xfer_check(rank, &x, dpus, blocks, &bytes, &pad, &most), 0);
	KUNIT_EXPECT_EQ(test, bytes, 64);
	KUNIT_EXPECT_EQ(test, most, 64);
	x.flags |= DPUSIM_XFER_FROM_DPU;
	KUNIT_EXPECT_EQ(test, dpusim_xfer_check(rank, &x, dpus, blocks, &bytes, &pad, &most), 0);
	KUNIT_EXPECT_EQ(test, most, 40);
	/* cut at the length */
	x.length = 32;
	KUNIT_EXPECT_EQ(test, dpusim_xfer_check(rank, &x, dpus, blocks, &bytes, &pad, &most), 0);
	KUNIT_EXPECT_EQ(test, most, 32);
	dpusim_rank_fini(rank);
}

static struct kunit_case model_test_cases[] = {
	KUNIT_CASE(model_zero_test),
	KUNIT_CASE(model_small_test),
	KUNIT_CASE(model_bandwidth_test),
	KUNIT_CASE(model_monotonic_bytes_test),
	KUNIT_CASE(model_monotonic_dpus_test),
	KUNIT_CASE(model_past_rank_test),
	KUNIT_CASE(model_overflow_test),
	KUNIT_CASE(model_direction_test),
	KUNIT_CASE(model_wram_test),
	KUNIT_CASE(model_deterministic_test),
	KUNIT_CASE(model_check_share_test),
	{}
};

static struct kunit_suite model_suite = {
	.name = "dpusim_xfer_model",
	.test_cases = model_test_cases,
};

kunit_test_suites(&model_suite);
