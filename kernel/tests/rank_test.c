// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for the rank: geometry parameter checks and the
 * one-owner rule.
 */
#include <kunit/test.h>

#include "../dpusim.h"

struct geometry_case {
	const char *name;
	struct dpusim_geometry geo;
	int expected;
};

static const struct geometry_case geometry_cases[] = {
	{ "defaults", { 4, 64, 64ULL << 20, 64 << 10 }, 0 },
	{ "smallest", { 1, 1, PAGE_SIZE, 8 }, 0 },
	{ "largest", { DPUSIM_MAX_RANKS, DPUSIM_MAX_DPUS, DPUSIM_MAX_MRAM,
		       DPUSIM_MAX_WRAM }, 0 },
	{ "no ranks", { 0, 64, 64ULL << 20, 64 << 10 }, -EINVAL },
	{ "too many ranks", { DPUSIM_MAX_RANKS + 1, 64, 64ULL << 20, 64 << 10 },
	  -EINVAL },
	{ "no dpus", { 4, 0, 64ULL << 20, 64 << 10 }, -EINVAL },
	{ "too many dpus", { 4, DPUSIM_MAX_DPUS + 1, 64ULL << 20, 64 << 10 },
	  -EINVAL },
	{ "no mram", { 4, 64, 0, 64 << 10 }, -EINVAL },
	{ "mram not page aligned", { 4, 64, PAGE_SIZE + 8, 64 << 10 },
	  -EINVAL },
	{ "mram too large", { 4, 64, DPUSIM_MAX_MRAM + PAGE_SIZE, 64 << 10 },
	  -EINVAL },
	{ "no wram", { 4, 64, 64ULL << 20, 0 }, -EINVAL },
	{ "wram not 8-aligned", { 4, 64, 64ULL << 20, 12 }, -EINVAL },
	{ "wram too large", { 4, 64, 64ULL << 20, DPUSIM_MAX_WRAM + 8 },
	  -EINVAL },
};

static void geometry_case_desc(const struct geometry_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(geometry, geometry_cases, geometry_case_desc);

static void dpusim_geometry_test(struct kunit *test)
{
	const struct geometry_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, dpusim_geometry_check(&c->geo), c->expected);
}

static struct kunit_case dpusim_geometry_cases[] = {
	KUNIT_CASE_PARAM(dpusim_geometry_test, geometry_gen_params),
	{}
};

static struct kunit_suite dpusim_geometry_suite = {
	.name = "dpusim_geometry",
	.test_cases = dpusim_geometry_cases,
};

static const struct dpusim_geometry test_geo = {
	.nr_ranks = 1,
	.nr_dpus = 8,
	.mram_size = 1 << 20,
	.wram_size = 4096,
};

static struct dpusim_budget test_budget = { .limit = SZ_1M };

static int dpusim_owner_init(struct kunit *test)
{
	struct dpusim_rank *rank;

	rank = kunit_kzalloc(test, sizeof(*rank), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rank);
	KUNIT_ASSERT_EQ(test, dpusim_rank_init(rank, 3, &test_geo,
					       &test_budget), 0);
	test->priv = rank;
	return 0;
}

static void dpusim_owner_exit(struct kunit *test)
{
	if (test->priv)		/* NULL if init failed */
		dpusim_rank_fini(test->priv);
}

static void dpusim_owner_init_geometry(struct kunit *test)
{
	struct dpusim_rank *rank = test->priv;

	KUNIT_EXPECT_EQ(test, rank->index, 3);
	KUNIT_EXPECT_EQ(test, rank->nr_dpus, 8);
	KUNIT_EXPECT_EQ(test, rank->mram_size, 1ULL << 20);
	KUNIT_EXPECT_EQ(test, rank->wram_size, 4096);
	KUNIT_EXPECT_FALSE(test, test_bit(DPUSIM_RANK_OWNED, &rank->flags));
	KUNIT_EXPECT_NULL(test, rank->owner.pid);
	KUNIT_EXPECT_EQ(test, dpusim_rank_resident_bytes(rank, DPUSIM_MRAM), 0);
}

static void dpusim_owner_second_claim_busy(struct kunit *test)
{
	struct dpusim_rank *rank = test->priv;

	KUNIT_ASSERT_EQ(test, dpusim_rank_claim(rank), 0);
	KUNIT_EXPECT_TRUE(test, test_bit(DPUSIM_RANK_OWNED, &rank->flags));
	KUNIT_EXPECT_PTR_EQ(test, rank->owner.pid, task_tgid(current));
	KUNIT_EXPECT_EQ(test, dpusim_rank_claim(rank), -EBUSY);
	/* The failed claim must not have dropped the owner. */
	KUNIT_EXPECT_PTR_EQ(test, rank->owner.pid, task_tgid(current));
	dpusim_rank_release(rank);
}

static void dpusim_owner_release_frees(struct kunit *test)
{
	struct dpusim_rank *rank = test->priv;

	KUNIT_ASSERT_EQ(test, dpusim_rank_claim(rank), 0);
	dpusim_rank_release(rank);
	KUNIT_EXPECT_FALSE(test, test_bit(DPUSIM_RANK_OWNED, &rank->flags));
	KUNIT_EXPECT_NULL(test, rank->owner.pid);
	KUNIT_EXPECT_EQ(test, dpusim_rank_claim(rank), 0);
	dpusim_rank_release(rank);
}

static struct kunit_case dpusim_owner_cases[] = {
	KUNIT_CASE(dpusim_owner_init_geometry),
	KUNIT_CASE(dpusim_owner_second_claim_busy),
	KUNIT_CASE(dpusim_owner_release_frees),
	{}
};

static struct kunit_suite dpusim_owner_suite = {
	.name = "dpusim_owner",
	.init = dpusim_owner_init,
	.exit = dpusim_owner_exit,
	.test_cases = dpusim_owner_cases,
};

kunit_test_suites(&dpusim_geometry_suite, &dpusim_owner_suite);
