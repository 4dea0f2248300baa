// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for the transfer engine: the block walker, descriptor
 * validation, and whole transfers (padding, truncation, all-or-nothing)
 * against real user memory (kunit_vm_mmap).
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/uaccess.h>

#include "../xfer.h"
#include "xfer_fixture.h"

/* ------------------------------------------------------------ walker */

struct walk_case {
	const char *name;
	struct dpusim_block blocks[4];
	u32 nr_blocks;
	u64 limit;
	struct dpusim_block pieces[4];
	u32 nr_pieces;
};

static const struct walk_case walk_cases[] = {
	{ "no blocks", {}, 0, 100, {}, 0 },
	{ "all fit", { { 0x1000, 10 }, { 0x3000, 20 } }, 2, 100,
	  { { 0x1000, 10 }, { 0x3000, 20 } }, 2 },
	{ "empty block skipped", { { 0x1000, 10 }, { 0x2000, 0 }, { 0x3000, 20 } },
	  3, 100, { { 0x1000, 10 }, { 0x3000, 20 } }, 2 },
	{ "cut inside a block", { { 0x1000, 10 }, { 0x3000, 20 } }, 2, 15,
	  { { 0x1000, 10 }, { 0x3000, 5 } }, 2 },
	{ "cut at a block end", { { 0x1000, 10 }, { 0x3000, 20 } }, 2, 10,
	  { { 0x1000, 10 } }, 1 },
	{ "limit zero", { { 0x1000, 10 } }, 1, 0, {}, 0 },
	{ "only empty blocks", { { 0x1000, 0 }, { 0x2000, 0 } }, 2, 8, {}, 0 },
	{ "huge block cut", { { 0x1000, U64_MAX - 0x1000 } }, 1, 64,
	  { { 0x1000, 64 } }, 1 },
};

static void walk_case_desc(const struct walk_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(walk, walk_cases, walk_case_desc);

static void dpusim_walk_test(struct kunit *test)
{
	const struct walk_case *c = test->param_value;
	struct dpusim_walk w;
	u64 addr, len;
	u32 n = 0;

	dpusim_walk_init(&w, c->blocks, c->nr_blocks, c->limit);
	while (dpusim_walk_next(&w, &addr, &len)) {
		KUNIT_ASSERT_LT(test, n, c->nr_pieces);
		KUNIT_EXPECT_EQ(test, addr, c->pieces[n].addr);
		KUNIT_EXPECT_EQ(test, len, c->pieces[n].length);
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, c->nr_pieces);
	/* An exhausted walk stays exhausted. */
	KUNIT_EXPECT_FALSE(test, dpusim_walk_next(&w, &addr, &len));
}

static struct kunit_case walk_test_cases[] = {
	KUNIT_CASE_PARAM(dpusim_walk_test, walk_gen_params),
	{}
};

static struct kunit_suite walk_suite = {
	.name = "dpusim_block_walk",
	.test_cases = walk_test_cases,
};

/* ------------------------------------------------------------ check */

static const struct dpusim_geometry check_geo = {
	.nr_ranks = 1,
	.nr_dpus = 8,
	.mram_size = SZ_1G,
	.wram_size = SZ_4K,
};

struct check_case {
	const char *name;
	struct dpusim_xfer x;
	struct dpusim_xfer_dpu dpus[5];
	struct dpusim_block blocks[4];
	int expected;
};

#define XF(_flags, _off, _len, _nd, _nb) \
	{ .flags = (_flags), .offset = (_off), .length = (_len), \
	  .nr_dpus = (_nd), .nr_blocks = (_nb) }
#define B(_a, _l) { .addr = (_a), .length = (_l) }
#define NLC DPUSIM_XFER_NO_LENGTH_CHECK

static const struct check_case check_cases[] = {
	{ "valid, two DPUs", XF(0, 0, 64, 2, 3), { { 0, 2 }, { 3, 1 } },
	  { B(0x1000, 32), B(0x2000, 32), B(0x3000, 64) }, 0 },
	{ "no DPUs", XF(0, 0, 64, 0, 0), {}, {}, 0 },
	{ "unknown flag", XF(1 << 5, 0, 8, 1, 1), { { 0, 1 } },
	  { B(0x1000, 8) }, -EINVAL },
	{ "high flag", XF(1U << 31, 0, 8, 1, 1), { { 0, 1 } },
	  { B(0x1000, 8) }, -EINVAL },
	{ "unaligned offset", XF(0, 4, 8, 1, 1), { { 0, 1 } },
	  { B(0x1000, 8) }, -EINVAL },
	{ "unaligned length", XF(0, 0, 12, 1, 1), { { 0, 1 } },
	  { B(0x1000, 12) }, -EINVAL },
	{ "more DPUs than the rank", XF(0, 0, 8, 9, 0), {}, {}, -E2BIG },
	{ "too many blocks", XF(0, 0, 8, 1, DPUSIM_XFER_MAX_BLOCKS + 1), {},
	  {}, -E2BIG },
	{ "past the end of MRAM", XF(0, SZ_1G - 8, 16, 1, 1), { { 0, 1 } },
	  { B(0x1000, 16) }, -EOVERFLOW },
	{ "ends at the end of MRAM", XF(0, SZ_1G - 16, 16, 1, 1), { { 0, 1 } },
	  { B(0x1000, 16) }, 0 },
	{ "offset + length wraps", XF(0, U64_MAX - 7, 16, 1, 1), { { 0, 1 } },
	  { B(0x1000, 16) }, -EOVERFLOW },
	{ "past the end of WRAM", XF(DPUSIM_XFER_WRAM, SZ_4K - 8, 16, 1, 1),
	  { { 0, 1 } }, { B(0x1000, 16) }, -EOVERFLOW },
	{ "within WRAM", XF(DPUSIM_XFER_WRAM, SZ_4K - 16, 16, 1, 1),
	  { { 0, 1 } }, { B(0x1000, 16) }, 0 },
	{ "DPU index out of the rank", XF(0, 0, 8, 1, 1), { { 8, 1 } },
	  { B(0x1000, 8) }, -EINVAL },
	{ "DPU twice", XF(0, 0, 8, 2, 2), { { 1, 1 }, { 1, 1 } },
	  { B(0x1000, 8), B(0x2000, 8) }, -EINVAL },
	{ "DPU block counts exceed the list", XF(0, 0, 8, 2, 2),
	  { { 0, 1 }, { 1, 2 } }, { B(0x1000, 8), B(0x2000, 8) }, -EINVAL },
	{ "DPU block counts short of the list", XF(0, 0, 8, 1, 2),
	  { { 0, 1 } }, { B(0x1000, 8), B(0x2000, 8) }, -EINVAL },
	{ "blocks short of length", XF(0, 0, 64, 1, 1), { { 0, 1 } },
	  { B(0x1000, 56) }, -EINVAL },
	{ "blocks short, no length check", XF(NLC, 0, 64, 1, 1), { { 0, 1 } },
	  { B(0x1000, 56) }, 0 },
	{ "blocks past length", XF(0, 0, 64, 1, 2), { { 0, 2 } },
	  { B(0x1000, 64), B(0x2000, 1) }, -EINVAL },
	{ "blocks past length, no length check", XF(NLC, 0, 64, 1, 2),
	  { { 0, 2 } }, { B(0x1000, 64), B(0x2000, 1) }, 0 },
	{ "no blocks for a DPU", XF(0, 0, 8, 1, 0), { { 0, 0 } }, {}, -EINVAL },
	{ "no blocks, no length check", XF(NLC, 0, 8, 1, 0), { { 0, 0 } }, {},
	  0 },
	{ "block address wraps", XF(NLC, 0, 8, 1, 1), { { 0, 1 } },
	  { B(U64_MAX - 3, 8) }, -EFAULT },
	{ "block lengths overflow", XF(NLC, 0, 8, 1, 2), { { 0, 2 } },
	  { B(0x1000, U64_MAX / 2 + 1), B(0x1000, U64_MAX / 2 + 1) }, 0 },
	{ "padding up to the cap", XF(NLC, 0, SZ_1G, 4, 0),
	  { { 0, 0 }, { 1, 0 }, { 2, 0 }, { 3, 0 } }, {}, 0 },
	{ "padding over the cap", XF(NLC, 0, SZ_1G, 5, 0),
	  { { 0, 0 }, { 1, 0 }, { 2, 0 }, { 3, 0 }, { 4, 0 } }, {}, -E2BIG },
	{ "from the DPU nothing is padded", XF(NLC | DPUSIM_XFER_FROM_DPU, 0,
					      SZ_1G, 5, 0),
	  { { 0, 0 }, { 1, 0 }, { 2, 0 }, { 3, 0 }, { 4, 0 } }, {}, 0 },
	{ "over the bytes per call", XF(0, 0, SZ_1G, 2, 2),
	  { { 0, 1 }, { 1, 1 } }, { B(0x1000, SZ_1G), B(0x1000, SZ_1G) },
	  -E2BIG },
};

static void check_case_desc(const struct check_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(check, check_cases, check_case_desc);

static struct dpusim_budget check_budget = { .limit = SZ_1M };

static void dpusim_xfer_check_test(struct kunit *test)
{
	const struct check_case *c = test->param_value;
	struct dpusim_rank *rank = kunit_kzalloc(test, sizeof(*rank),
						 GFP_KERNEL);
	u64 bytes, pad, most;

	KUNIT_ASSERT_NOT_NULL(test, rank);
	KUNIT_ASSERT_EQ(test, dpusim_rank_init(rank, 0, &check_geo,
					       &check_budget), 0);
	KUNIT_EXPECT_EQ(test, dpusim_xfer_check(rank, &c->x, c->dpus,
						c->blocks, &bytes, &pad, &most),
			c->expected);
	dpusim_rank_fini(rank);
}

static struct kunit_case check_test_cases[] = {
	KUNIT_CASE_PARAM(dpusim_xfer_check_test, check_gen_params),
	{}
};

static struct kunit_suite check_suite = {
	.name = "dpusim_xfer_check",
	.test_cases = check_test_cases,
};

/* ------------------------------------------------------------ transfers */

static void xfer_gather_scatter_round_trip(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	/* DPU 1 gathers 3 blocks (one straddles a page), DPU 3 one. */
	const struct dpusim_xfer_dpu dpus[] = { { 1, 3 }, { 3, 1 } };
	const struct dpusim_block to[] = {
		{ xfer_uaddr(t, 8), 1000 }, { xfer_uaddr(t, PAGE_SIZE - 100), 2000 },
		{ xfer_uaddr(t, 3 * PAGE_SIZE), 1096 }, { xfer_uaddr(t, 40), 4096 },
	};
	const size_t back = 4 * PAGE_SIZE;	/* scatter into the 0xee half */
	const struct dpusim_block from[] = {
		{ xfer_uaddr(t, back), 3000 }, { xfer_uaddr(t, back + 5000), 1096 },
		{ xfer_uaddr(t, back + 9000), 4096 },
	};
	const struct dpusim_xfer_dpu from_dpus[] = { { 1, 2 }, { 3, 1 } };
	u8 *got = kunit_kzalloc(test, 4096, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, got);
	KUNIT_ASSERT_EQ(test, xfer_run(t, 0, PAGE_SIZE + 8, 4096, dpus, 2, to, 4), 0);

	xfer_mram_read(t, 1, PAGE_SIZE + 8, got, 4096);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf + 8, 1000), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got + 1000, t->kbuf + PAGE_SIZE - 100,
				     2000), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got + 3000, t->kbuf + 3 * PAGE_SIZE,
				     1096), 0);
	xfer_mram_read(t, 3, PAGE_SIZE + 8, got, 4096);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf + 40, 4096), 0);
	/* Untouched DPUs stay empty. */
	KUNIT_EXPECT_EQ(test, t->rank.dpus[0].mem[DPUSIM_MRAM].nr_pages, 0);
	KUNIT_EXPECT_EQ(test, t->rank.dpus[2].mem[DPUSIM_MRAM].nr_pages, 0);

	KUNIT_ASSERT_EQ(test, xfer_run(t, DPUSIM_XFER_FROM_DPU, PAGE_SIZE + 8, 4096,
				       from_dpus, 2, from, 3), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + back, 3000), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf + 8, 1000), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got + 1000, t->kbuf + PAGE_SIZE - 100,
				     2000), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + back + 5000, 1096),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf + 3 * PAGE_SIZE, 1096), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + back + 9000, 4096),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf + 40, 4096), 0);
	/* The bytes between the host blocks were not written. */
	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + back + 3000, 2000),
			0);
	KUNIT_EXPECT_NULL(test, memchr_inv(got, 0xee, 2000));

	KUNIT_EXPECT_EQ(test, atomic64_read(&t->rank.stats.ioctls), 2);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->rank.stats.blocks), 7);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->rank.stats.bytes_to_dpu), 8192);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->rank.stats.bytes_from_dpu),
			8192);
}

/* To the DPU, blocks shorter than length: the rest is zero-filled. */
static void xfer_pad_to_dpu(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 0, 1 } };
	const struct dpusim_block ones[] = { { xfer_uaddr(t, 4 * PAGE_SIZE), 256 } };
	const struct dpusim_block some[] = { { xfer_uaddr(t, 0), 24 } };
	u8 got[256];

	/* Fill 256 bytes with 0xee first. */
	KUNIT_ASSERT_EQ(test, xfer_run(t, 0, 0, 256, dpus, 1, ones, 1), 0);
	KUNIT_ASSERT_EQ(test, xfer_run(t, DPUSIM_XFER_NO_LENGTH_CHECK, 0, 128, dpus,
				       1, some, 1), 0);
	xfer_mram_read(t, 0, 0, got, sizeof(got));
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf, 24), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(got + 24, 0, 128 - 24));
	KUNIT_EXPECT_NULL(test, memchr_inv(got + 128, 0xee, 128));
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->rank.stats.bytes_to_dpu),
			256 + 24);
}

/* Padding over a hole allocates nothing. */
static void xfer_pad_hole_stays_hole(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 2, 1 } };
	const struct dpusim_block b[] = { { xfer_uaddr(t, 0), 8 } };

	KUNIT_ASSERT_EQ(test, xfer_run(t, DPUSIM_XFER_NO_LENGTH_CHECK, 0,
				       4 * PAGE_SIZE, dpus, 1, b, 1), 0);
	KUNIT_EXPECT_EQ(test, t->rank.dpus[2].mem[DPUSIM_MRAM].nr_pages, 1);
}

/* To the DPU, blocks longer than length: cut at length. */
static void xfer_truncate_to_dpu(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 0, 2 } };
	const struct dpusim_block b[] = { { xfer_uaddr(t, 0), 40 },
					  { xfer_uaddr(t, 100), 60 } };
	u8 got[128];

	KUNIT_ASSERT_EQ(test, xfer_run(t, DPUSIM_XFER_NO_LENGTH_CHECK, 0, 64, dpus,
				       1, b, 2), 0);
	xfer_mram_read(t, 0, 0, got, sizeof(got));
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf, 40), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got + 40, t->kbuf + 100, 24), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(got + 64, 0, 64));
}

/* From the DPU: short blocks get the first bytes, long ones are cut. */
static void xfer_from_dpu_short_and_long(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 0, 1 } };
	const struct dpusim_block fill[] = { { xfer_uaddr(t, 0), 64 } };
	const struct dpusim_block shrt[] = { { xfer_uaddr(t, 5 * PAGE_SIZE), 16 } };
	const struct dpusim_block lng[] = { { xfer_uaddr(t, 6 * PAGE_SIZE), 100 } };
	u8 got[100];

	KUNIT_ASSERT_EQ(test, xfer_run(t, 0, 0, 64, dpus, 1, fill, 1), 0);
	KUNIT_ASSERT_EQ(test, xfer_run(t, DPUSIM_XFER_FROM_DPU |
				       DPUSIM_XFER_NO_LENGTH_CHECK, 0, 64, dpus, 1,
				       shrt, 1), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + 5 * PAGE_SIZE, 32),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf, 16), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(got + 16, 0xee, 16));

	KUNIT_ASSERT_EQ(test, xfer_run(t, DPUSIM_XFER_FROM_DPU |
				       DPUSIM_XFER_NO_LENGTH_CHECK, 0, 64, dpus, 1,
				       lng, 1), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + 6 * PAGE_SIZE, 100),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf, 64), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(got + 64, 0xee, 36));
}

static void xfer_holes_read_zero(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 3, 1 } };
	const struct dpusim_block b[] = { { xfer_uaddr(t, 4 * PAGE_SIZE + 8),
					    2 * PAGE_SIZE } };
	u8 *got = kunit_kzalloc(test, 2 * PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, got);
	KUNIT_ASSERT_EQ(test, xfer_run(t, DPUSIM_XFER_FROM_DPU, 8 * PAGE_SIZE,
				       2 * PAGE_SIZE, dpus, 1, b, 1), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + 4 * PAGE_SIZE + 8,
					     2 * PAGE_SIZE), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(got, 0, 2 * PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, t->rank.dpus[3].mem[DPUSIM_MRAM].nr_pages, 0);
}

/* A length mismatch on the last DPU: nothing written to any DPU. */
static void xfer_length_mismatch_changes_nothing(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 0, 1 }, { 1, 1 } };
	const struct dpusim_block b[] = { { xfer_uaddr(t, 0), 64 },
					  { xfer_uaddr(t, 64), 56 } };

	KUNIT_EXPECT_EQ(test, xfer_run(t, 0, 0, 64, dpus, 2, b, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, dpusim_rank_resident_bytes(&t->rank, DPUSIM_MRAM), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->rank.stats.ioctls), 0);
}

/* A bad address in the second DPU's block: the first DPU is unchanged. */
static void xfer_bad_address_changes_nothing(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 0, 1 }, { 1, 1 } };
	const struct dpusim_block b[] = {
		{ xfer_uaddr(t, 0), 64 },
		{ xfer_uaddr(t, XFER_UMEM_PAGES * PAGE_SIZE - 32), 64 },	/* runs off */
	};
	const struct dpusim_block kernel_addr[] = {
		{ xfer_uaddr(t, 0), 64 }, { (u64)(uintptr_t)t->kbuf, 64 },
	};
	u8 got[64];

	KUNIT_EXPECT_EQ(test, xfer_run(t, 0, 0, 64, dpus, 2, b, 2), -EFAULT);
	KUNIT_EXPECT_EQ(test, xfer_run(t, 0, 0, 64, dpus, 2, kernel_addr, 2),
			-EFAULT);
	KUNIT_EXPECT_EQ(test, dpusim_rank_resident_bytes(&t->rank, DPUSIM_MRAM), 0);

	/* From the DPU: the first host block is not written either. */
	KUNIT_EXPECT_EQ(test, xfer_run(t, DPUSIM_XFER_FROM_DPU, 0, 64, dpus, 2, b,
				       2), -EFAULT);
	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem, 64), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf, 64), 0);
}

/* Over the budget: -ENOSPC, no page of any DPU allocated. */
static void xfer_budget_enospc(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 0, 1 }, { 1, 1 } };
	const struct dpusim_block b[] = { { xfer_uaddr(t, 0), PAGE_SIZE },
					  { xfer_uaddr(t, PAGE_SIZE), PAGE_SIZE } };

	t->budget.limit = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, xfer_run(t, 0, 0, PAGE_SIZE, dpus, 2, b, 2), -ENOSPC);
	KUNIT_EXPECT_EQ(test, dpusim_rank_resident_bytes(&t->rank, DPUSIM_MRAM), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 0);
	/* One DPU fits. */
	KUNIT_EXPECT_EQ(test, xfer_run(t, 0, 0, PAGE_SIZE, dpus, 1, b, 1), 0);
	KUNIT_EXPECT_EQ(test, dpusim_rank_resident_bytes(&t->rank, DPUSIM_MRAM), PAGE_SIZE);
	/* Overwriting resident pages needs no budget. */
	KUNIT_EXPECT_EQ(test, xfer_run(t, 0, 0, PAGE_SIZE, dpus, 1, b + 1, 1), 0);
}

static void xfer_wram(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 2, 1 } };
	const struct dpusim_block b[] = { { xfer_uaddr(t, 0), 64 } };

	KUNIT_ASSERT_EQ(test, xfer_run(t, DPUSIM_XFER_WRAM, SZ_4K - 64, 64, dpus, 1,
				       b, 1), 0);
	KUNIT_EXPECT_EQ(test, t->rank.dpus[2].mem[DPUSIM_WRAM].nr_pages, 1);
	KUNIT_EXPECT_EQ(test, t->rank.dpus[2].mem[DPUSIM_MRAM].nr_pages, 0);
}

/*
 * Block j of DPU d at host offset (j * 4 + d) * 48: in the engine's order
 * (block 0 of every DPU, then block 1, ...) the blocks are adjacent, share
 * pages and are pinned as one run; each DPU still gets its own blocks.
 */
static void xfer_interleaved_small_blocks(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 0, 64 }, { 1, 64 },
						{ 2, 64 }, { 3, 64 } };
	struct dpusim_block *b = kunit_kcalloc(test, 256, sizeof(*b),
					       GFP_KERNEL);
	u8 *got = kunit_kzalloc(test, 64 * 48, GFP_KERNEL);
	u32 d, j;

	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, got);
	for (d = 0; d < 4; d++)
		for (j = 0; j < 64; j++)
			b[d * 64 + j] = (struct dpusim_block) {
				xfer_uaddr(t, (j * 4 + d) * 48), 48 };
	KUNIT_ASSERT_EQ(test, xfer_run(t, 0, 0, 64 * 48, dpus, 4, b, 256), 0);
	for (d = 0; d < 4; d++) {
		xfer_mram_read(t, d, 0, got, 64 * 48);
		for (j = 0; j < 64; j++)
			KUNIT_EXPECT_EQ_MSG(test, memcmp(got + j * 48,
							 t->kbuf + (j * 4 + d) * 48,
							 48), 0,
					    "DPU %u block %u", d, j);
	}

	/* And back, into the 0xee half, the same interleaving. */
	for (d = 0; d < 4; d++)
		for (j = 0; j < 64; j++)
			b[d * 64 + j].addr += 4 * PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, xfer_run(t, DPUSIM_XFER_FROM_DPU, 0, 64 * 48, dpus, 4,
				       b, 256), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + 4 * PAGE_SIZE,
					     64 * 48), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf, 64 * 48), 0);
}

/*
 * A synchronous transfer large enough to be copied on two CPUs (768 KiB
 * in blocks of 64 KiB to four DPUs), there and back, twice: the bytes
 * right each time, the copy order in the rank's own arrays (nothing
 * allocated for it), nothing left pinned.
 */
#define SPLIT_BLK	SZ_64K
#define SPLIT_BLKS	3			/* per DPU */
#define SPLIT_LEN	(4 * SPLIT_BLKS * SPLIT_BLK)

static void xfer_two_cpu_copy_round_trip(struct kunit *test)
{
	struct {
		struct dpusim_xfer_dpu dpus[4];
		struct dpusim_block to[4 * SPLIT_BLKS], from[4 * SPLIT_BLKS];
	} *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	struct dpusim_xfer x = {
		.size = sizeof(x), .length = SPLIT_BLKS * SPLIT_BLK, .nr_dpus = 4,
		.nr_blocks = 4 * SPLIT_BLKS,
	};
	struct xfer_big *b;
	int round, i;

	if (num_online_cpus() < 2)
		kunit_skip(test, "one CPU: no copy on two");
	KUNIT_ASSERT_NOT_NULL(test, s);
	b = xfer_big_init(test, 4, SPLIT_LEN, 2 * SPLIT_LEN);
	for (i = 0; i < 4; i++)
		s->dpus[i] = (struct dpusim_xfer_dpu){ .dpu = i, .nr_blocks = SPLIT_BLKS };
	/* DPU d's block k: the (k * 4 + d)-th 64 KiB, as an interleaved gather */
	for (i = 0; i < 4 * SPLIT_BLKS; i++) {
		size_t off = (size_t)((i % SPLIT_BLKS) * 4 + i / SPLIT_BLKS) * SPLIT_BLK;

		s->to[i] = (struct dpusim_block){ (u64)(uintptr_t)(b->u + off), SPLIT_BLK };
		s->from[i] = (struct dpusim_block){ (u64)(uintptr_t)(b->u + SPLIT_LEN + off),
						    SPLIT_BLK };
	}
	for (round = 0; round < 2; round++) {
		for (i = 0; i < SPLIT_LEN; i++)
			b->want[i] = (i * 7 + round * 31 + i / 4096) & 0xff;
		KUNIT_ASSERT_EQ(test, copy_to_user(b->u, b->want, SPLIT_LEN), 0);
		KUNIT_ASSERT_EQ(test, clear_user(b->u + SPLIT_LEN, SPLIT_LEN), 0);
		x.flags = 0;
		KUNIT_EXPECT_EQ(test, dpusim_xfer_run(&b->rank, &x, s->dpus, s->to), 0);
		x.flags = DPUSIM_XFER_FROM_DPU;
		KUNIT_EXPECT_EQ(test, dpusim_xfer_run(&b->rank, &x, s->dpus, s->from), 0);
		KUNIT_ASSERT_EQ(test, copy_from_user(b->got, b->u + SPLIT_LEN, SPLIT_LEN), 0);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(b->got, b->want, SPLIT_LEN), 0, "round %d", round);
		/* the chunks' cursors were the rank's: the first one names DPU 0's MRAM */
		KUNIT_EXPECT_PTR_EQ(test, b->rank.xfer.split_c[0].mem,
				    &b->rank.dpus[0].mem[DPUSIM_MRAM]);
		KUNIT_EXPECT_EQ(test, atomic_long_read(&b->rank.xfer.pinned_pages), 0);
		KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm), b->pinned_vm);
	}
	xfer_big_fini(test, b);
}

/*
 * An asynchronous copy's first piece in chunks (dpusim_xfer_share_*): a
 * work item on another CPU takes chunks while the test takes them too,
 * as a SYNC does beside the rank's worker.  One block at an odd user
 * address, its length not a multiple of the chunk, both directions:
 * every byte lands, none around it, and the chunks add up.
 */
#define SHARE_SPAN	SZ_128K
#define SHARE_LEN	(5 * SZ_16K + 1032)
#define SHARE_UOFF	100

struct share_helper {
	struct work_struct work;
	struct dpusim_xfer_share *sh;
	unsigned int n;
};

static void share_helper_fn(struct work_struct *work)
{
	struct share_helper *h = container_of(work, struct share_helper, work);

	while (dpusim_xfer_share_copy_one(h->sh))
		h->n++;
}

static void share_move(struct kunit *test, struct dpusim_rank *rank, u32 flags,
		       u8 __user *u)
{
	const struct dpusim_xfer_dpu dpu = { .dpu = 0, .nr_blocks = 1 };
	const struct dpusim_block blk = { (u64)(uintptr_t)u, SHARE_LEN };
	struct dpusim_xfer_pin p = {
		.x = { .size = sizeof(p.x), .flags = flags, .offset = 8,
		       .length = SHARE_LEN, .nr_dpus = 1, .nr_blocks = 1 },
		.dpus = &dpu, .blocks = &blk,
	};
	struct dpusim_xfer_share sh;
	struct share_helper h = { .sh = &sh };
	unsigned int n = 0;
	bool shared;

	KUNIT_ASSERT_EQ(test, dpusim_xfer_check(rank, &p.x, &dpu, &blk, &p.bytes, &p.pad,
						&p.dpu_max), 0);
	mutex_lock(&rank->state_lock);
	KUNIT_ASSERT_EQ(test, dpusim_xfer_pin_user(rank, &p), 0);
	KUNIT_ASSERT_EQ(test, dpusim_xfer_populate(rank, &p), 0);
	shared = dpusim_xfer_share_begin(rank, &p, &sh);
	KUNIT_EXPECT_EQ(test, shared, num_online_cpus() > 1);
	KUNIT_EXPECT_EQ(test, sh.len, (u64)SHARE_LEN);
	INIT_WORK_ONSTACK(&h.work, share_helper_fn);
	queue_work(system_unbound_wq, &h.work);
	while (dpusim_xfer_share_copy_one(&sh))
		n++;
	flush_work(&h.work);
	destroy_work_on_stack(&h.work);
	KUNIT_EXPECT_EQ(test, n + h.n, DIV_ROUND_UP(SHARE_LEN, SZ_16K));
	KUNIT_EXPECT_FALSE(test, dpusim_xfer_share_copy_one(&sh));
	dpusim_xfer_share_end(rank, &p, &sh);
	dpusim_xfer_unpin(&p, true);
	mutex_unlock(&rank->state_lock);
}

static void xfer_shared_piece_round_trip(struct kunit *test)
{
	struct xfer_big *b = xfer_big_init(test, 1, SHARE_SPAN, 2 * SHARE_SPAN);
	int i;

	for (i = 0; i < SHARE_SPAN; i++)
		b->want[i] = (i * 13 + i / 4096) & 0xff;
	KUNIT_ASSERT_EQ(test, copy_to_user(b->u, b->want, SHARE_SPAN), 0);
	KUNIT_ASSERT_EQ(test, clear_user(b->u + SHARE_SPAN, SHARE_SPAN), 0);

	share_move(test, &b->rank, 0, b->u + SHARE_UOFF);
	share_move(test, &b->rank, DPUSIM_XFER_FROM_DPU, b->u + SHARE_SPAN + SHARE_UOFF);

	KUNIT_ASSERT_EQ(test, copy_from_user(b->got, b->u + SHARE_SPAN, SHARE_SPAN), 0);
	KUNIT_EXPECT_EQ(test, memcmp(b->got + SHARE_UOFF, b->want + SHARE_UOFF, SHARE_LEN), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(b->got, 0, SHARE_UOFF));
	KUNIT_EXPECT_NULL(test, memchr_inv(b->got + SHARE_UOFF + SHARE_LEN, 0,
					   SHARE_SPAN - SHARE_UOFF - SHARE_LEN));
	KUNIT_EXPECT_EQ(test, atomic64_read(&b->rank.stats.ioctls), 2);
	KUNIT_EXPECT_EQ(test, atomic64_read(&b->rank.stats.bytes_to_dpu), SHARE_LEN);
	KUNIT_EXPECT_EQ(test, atomic64_read(&b->rank.stats.bytes_from_dpu), SHARE_LEN);
	xfer_big_fini(test, b);
}

static struct kunit_case xfer_test_cases[] = {
	KUNIT_CASE(xfer_interleaved_small_blocks),
	KUNIT_CASE(xfer_gather_scatter_round_trip),
	KUNIT_CASE(xfer_pad_to_dpu),
	KUNIT_CASE(xfer_pad_hole_stays_hole),
	KUNIT_CASE(xfer_truncate_to_dpu),
	KUNIT_CASE(xfer_from_dpu_short_and_long),
	KUNIT_CASE(xfer_holes_read_zero),
	KUNIT_CASE(xfer_length_mismatch_changes_nothing),
	KUNIT_CASE(xfer_bad_address_changes_nothing),
	KUNIT_CASE(xfer_budget_enospc),
	KUNIT_CASE(xfer_wram),
	KUNIT_CASE(xfer_two_cpu_copy_round_trip),
	KUNIT_CASE(xfer_shared_piece_round_trip),
	{}
};

static struct kunit_suite xfer_suite = {
	.name = "dpusim_xfer",
	.init = xfer_fixture_init,
	.exit = xfer_fixture_exit,
	.test_cases = xfer_test_cases,
};

kunit_test_suites(&walk_suite, &check_suite, &xfer_suite);
