// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the sparse memory store: holes, page boundaries, the
 * budget, undo.
 */
#include <kunit/test.h>
#include <linux/mm.h>

#include "xfer_fixture.h"

#define MEM_SIZE (16 * PAGE_SIZE)

struct mram_test {
	struct dpusim_budget budget;
	struct dpusim_mem mem;
	struct dpusim_mem_undo undo;
	u8 buf[2 * PAGE_SIZE];
};

static int mram_test_init(struct kunit *test)
{
	struct mram_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->budget.limit = 8 * PAGE_SIZE;
	dpusim_mem_init(&t->mem, MEM_SIZE, &t->budget);
	t->undo.cap = 16;
	t->undo.entries = kunit_kcalloc(test, t->undo.cap,
					sizeof(*t->undo.entries), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->undo.entries);
	test->priv = t;
	return 0;
}

static void mram_test_exit(struct kunit *test)
{
	struct mram_test *t = test->priv;

	if (!t)
		return;
	dpusim_mem_free(&t->mem);
	/* Every charge was returned. */
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 0);
}

/* Write through populate, as the transfer engine does; charges pages. */
static void mem_write(struct kunit *test, struct mram_test *t, u64 off,
		      u8 *buf, size_t len)
{
	unsigned long missing = dpusim_mem_missing(&t->mem, off, len);

	KUNIT_ASSERT_EQ(test, dpusim_budget_charge(&t->budget, missing), 0);
	KUNIT_ASSERT_EQ(test, dpusim_mem_populate(&t->mem, off, len, &t->undo),
			0);
	t->undo.nr = 0;
	xfer_mem_rw(&t->mem, off, buf, len, true);
}

static void mram_hole_reads_zero(struct kunit *test)
{
	struct mram_test *t = test->priv;

	memset(t->buf, 0xaa, sizeof(t->buf));
	xfer_mem_rw(&t->mem, PAGE_SIZE - 24, t->buf, PAGE_SIZE, false);
	KUNIT_EXPECT_NULL(test, memchr_inv(t->buf, 0, PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, t->buf[PAGE_SIZE], 0xaa);
	/* Reading allocates nothing. */
	KUNIT_EXPECT_EQ(test, t->mem.nr_pages, 0);
}

struct span_case {
	const char *name;
	u64 off, len;
	unsigned long pages;
};

static const struct span_case span_cases[] = {
	{ "empty", 0, 0, 0 },
	{ "one byte", 5, 1, 1 },
	{ "first page exactly", 0, PAGE_SIZE, 1 },
	{ "second page exactly", PAGE_SIZE, PAGE_SIZE, 1 },
	{ "straddles a boundary", PAGE_SIZE - 8, 16, 2 },
	{ "ends on a boundary", 8, PAGE_SIZE - 8, 1 },
	{ "three pages", PAGE_SIZE - 8, PAGE_SIZE + 16, 3 },
	{ "whole memory", 0, MEM_SIZE, 16 },
	{ "last byte", MEM_SIZE - 1, 1, 1 },
};

static void span_case_desc(const struct span_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(span, span_cases, span_case_desc);

static void mram_missing_and_populate(struct kunit *test)
{
	const struct span_case *c = test->param_value;
	struct mram_test *t = test->priv;

	t->budget.limit = MEM_SIZE;
	KUNIT_EXPECT_EQ(test, dpusim_mem_missing(&t->mem, c->off, c->len),
			c->pages);
	KUNIT_ASSERT_EQ(test, dpusim_budget_charge(&t->budget, c->pages), 0);
	KUNIT_ASSERT_EQ(test, dpusim_mem_populate(&t->mem, c->off, c->len,
						  &t->undo), 0);
	KUNIT_EXPECT_EQ(test, t->undo.nr, c->pages);
	KUNIT_EXPECT_EQ(test, t->mem.nr_pages, c->pages);
	/* Populated now: nothing is missing any more. */
	KUNIT_EXPECT_EQ(test, dpusim_mem_missing(&t->mem, c->off, c->len), 0);
}

static void mram_round_trip_across_pages(struct kunit *test)
{
	struct mram_test *t = test->priv;
	u8 *out = kunit_kzalloc(test, PAGE_SIZE + 100, GFP_KERNEL);
	size_t i;

	KUNIT_ASSERT_NOT_NULL(test, out);
	for (i = 0; i < PAGE_SIZE + 100; i++)
		t->buf[i] = i * 7 + 1;
	mem_write(test, t, 3 * PAGE_SIZE - 40, t->buf, PAGE_SIZE + 100);
	KUNIT_EXPECT_EQ(test, t->mem.nr_pages, 3);
	xfer_mem_rw(&t->mem, 3 * PAGE_SIZE - 40, out, PAGE_SIZE + 100, false);
	KUNIT_EXPECT_EQ(test, memcmp(out, t->buf, PAGE_SIZE + 100), 0);
	/* The rest of the populated pages is still zero. */
	xfer_mem_rw(&t->mem, 2 * PAGE_SIZE, out, PAGE_SIZE - 40, false);
	KUNIT_EXPECT_NULL(test, memchr_inv(out, 0, PAGE_SIZE - 40));
}

static void mram_budget_enospc(struct kunit *test)
{
	struct mram_test *t = test->priv;

	KUNIT_EXPECT_EQ(test, dpusim_budget_charge(&t->budget, 8), 0);
	KUNIT_EXPECT_EQ(test, dpusim_budget_charge(&t->budget, 1), -ENOSPC);
	/* A refused charge takes nothing. */
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 8);
	dpusim_budget_uncharge(&t->budget, 8);
	KUNIT_EXPECT_EQ(test, dpusim_budget_charge(&t->budget, 9), -ENOSPC);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 0);
	KUNIT_EXPECT_EQ(test, dpusim_budget_charge(&t->budget, 0), 0);
}

static void mram_budget_follows_limit(struct kunit *test)
{
	struct mram_test *t = test->priv;

	t->budget.limit = 0;
	KUNIT_EXPECT_EQ(test, dpusim_budget_charge(&t->budget, 1), -ENOSPC);
	t->budget.limit = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, dpusim_budget_charge(&t->budget, 1), 0);
	dpusim_budget_uncharge(&t->budget, 1);
}

static void mram_undo_removes_only_new_pages(struct kunit *test)
{
	struct mram_test *t = test->priv;

	memset(t->buf, 0x5a, 8);
	mem_write(test, t, PAGE_SIZE, t->buf, 8);
	KUNIT_ASSERT_EQ(test, t->mem.nr_pages, 1);

	KUNIT_ASSERT_EQ(test, dpusim_budget_charge(&t->budget, 2), 0);
	KUNIT_ASSERT_EQ(test, dpusim_mem_populate(&t->mem, 0, 3 * PAGE_SIZE,
						  &t->undo), 0);
	KUNIT_EXPECT_EQ(test, t->undo.nr, 2);
	KUNIT_EXPECT_EQ(test, t->mem.nr_pages, 3);
	dpusim_mem_undo(&t->undo);
	dpusim_budget_uncharge(&t->budget, 2);
	KUNIT_EXPECT_EQ(test, t->undo.nr, 0);
	KUNIT_EXPECT_EQ(test, t->mem.nr_pages, 1);
	KUNIT_EXPECT_EQ(test, dpusim_mem_missing(&t->mem, 0, 3 * PAGE_SIZE), 2);
	/* The page that was there keeps its data. */
	xfer_mem_rw(&t->mem, PAGE_SIZE, t->buf + 8, 8, false);
	KUNIT_EXPECT_EQ(test, memcmp(t->buf, t->buf + 8, 8), 0);
}

static void mram_zero_keeps_holes(struct kunit *test)
{
	struct mram_test *t = test->priv;

	memset(t->buf, 0xff, PAGE_SIZE);
	mem_write(test, t, 0, t->buf, PAGE_SIZE);
	dpusim_mem_zero(&t->mem, 64, 4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, t->mem.nr_pages, 1);
	xfer_mem_rw(&t->mem, 0, t->buf, PAGE_SIZE, false);
	KUNIT_EXPECT_NULL(test, memchr_inv(t->buf, 0xff, 64));
	KUNIT_EXPECT_NULL(test, memchr_inv(t->buf + 64, 0, PAGE_SIZE - 64));
}

/*
 * Zeroing visits only the resident pages of the range: pages between and
 * around them stay holes, a partial page keeps its bytes outside the range.
 */
static void mram_zero_resident_pages_only(struct kunit *test)
{
	struct mram_test *t = test->priv;

	memset(t->buf, 0xab, PAGE_SIZE);
	mem_write(test, t, 3 * PAGE_SIZE, t->buf, PAGE_SIZE);
	mem_write(test, t, 9 * PAGE_SIZE, t->buf, PAGE_SIZE);
	dpusim_mem_zero(&t->mem, 3 * PAGE_SIZE + 8, 6 * PAGE_SIZE + 16);
	KUNIT_EXPECT_EQ(test, t->mem.nr_pages, 2);
	KUNIT_EXPECT_EQ(test, dpusim_mem_missing(&t->mem, 0, MEM_SIZE),
			MEM_SIZE / PAGE_SIZE - 2);
	xfer_mem_rw(&t->mem, 3 * PAGE_SIZE, t->buf, PAGE_SIZE, false);
	KUNIT_EXPECT_NULL(test, memchr_inv(t->buf, 0xab, 8));
	KUNIT_EXPECT_NULL(test, memchr_inv(t->buf + 8, 0, PAGE_SIZE - 8));
	xfer_mem_rw(&t->mem, 9 * PAGE_SIZE, t->buf, PAGE_SIZE, false);
	KUNIT_EXPECT_NULL(test, memchr_inv(t->buf, 0, 24));
	KUNIT_EXPECT_NULL(test, memchr_inv(t->buf + 24, 0xab, PAGE_SIZE - 24));
	/* An empty range and the whole memory. */
	dpusim_mem_zero(&t->mem, 9 * PAGE_SIZE + 64, 0);
	xfer_mem_rw(&t->mem, 9 * PAGE_SIZE, t->buf, PAGE_SIZE, false);
	KUNIT_EXPECT_NULL(test, memchr_inv(t->buf + 24, 0xab, PAGE_SIZE - 24));
	dpusim_mem_zero(&t->mem, 0, MEM_SIZE);
	xfer_mem_rw(&t->mem, 9 * PAGE_SIZE, t->buf, PAGE_SIZE, false);
	KUNIT_EXPECT_NULL(test, memchr_inv(t->buf, 0, PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, t->mem.nr_pages, 2);
}

/* A charge that fails leaves the count as it was, at every size. */
static void mram_budget_failed_charge_leaves_count(struct kunit *test)
{
	struct mram_test *t = test->priv;

	KUNIT_EXPECT_EQ(test, dpusim_budget_charge(&t->budget, 3), 0);
	KUNIT_EXPECT_EQ(test, dpusim_budget_charge(&t->budget, 6), -ENOSPC);
	KUNIT_EXPECT_EQ(test, dpusim_budget_charge(&t->budget, ULONG_MAX),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, dpusim_budget_charge(&t->budget, LONG_MAX),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 3);
	KUNIT_EXPECT_EQ(test, dpusim_budget_charge(&t->budget, 5), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 8);
	dpusim_budget_uncharge(&t->budget, 8);
}

static void mram_free_returns_budget(struct kunit *test)
{
	struct mram_test *t = test->priv;

	memset(t->buf, 1, sizeof(t->buf));
	mem_write(test, t, 0, t->buf, sizeof(t->buf));
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 2);
	dpusim_mem_free(&t->mem);
	KUNIT_EXPECT_EQ(test, t->mem.nr_pages, 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 0);
	xfer_mem_rw(&t->mem, 0, t->buf, PAGE_SIZE, false);
	KUNIT_EXPECT_NULL(test, memchr_inv(t->buf, 0, PAGE_SIZE));
}

/* Fill charges each page it allocates and keeps them when the budget ends */
static void mram_fill_keeps_pages(struct kunit *test)
{
	struct mram_test *t = test->priv;

	KUNIT_EXPECT_EQ(test, dpusim_mem_fill(&t->mem, PAGE_SIZE - 1, 2), 0);
	KUNIT_EXPECT_EQ(test, t->mem.nr_pages, 2);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 2);
	/* 10 pages, 8 in the budget (2 already there): fails after 6 more */
	KUNIT_EXPECT_EQ(test, dpusim_mem_fill(&t->mem, 0, 10 * PAGE_SIZE),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, t->mem.nr_pages, 8);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 8);
	KUNIT_EXPECT_EQ(test, dpusim_mem_fill(&t->mem, 0, 0), 0);
}

/* Memory to memory, across pages at different offsets; holes read as 0 */
static void mram_copy_mem(struct kunit *test)
{
	struct mram_test *t = test->priv;
	struct dpusim_mem dst;
	u8 *out = kunit_kzalloc(test, 2 * PAGE_SIZE, GFP_KERNEL);
	size_t i, len = PAGE_SIZE + 300;

	KUNIT_ASSERT_NOT_NULL(test, out);
	t->budget.limit = 16 * PAGE_SIZE;
	dpusim_mem_init(&dst, MEM_SIZE, &t->budget);
	for (i = 0; i < len; i++)
		t->buf[i] = i * 13 + 5;
	mem_write(test, t, 5 * PAGE_SIZE + 17, t->buf, len);
	KUNIT_ASSERT_EQ(test, dpusim_mem_fill(&dst, 2 * PAGE_SIZE - 100, len),
			0);
	dpusim_mem_copy_mem(&dst, 2 * PAGE_SIZE - 100, &t->mem,
			    5 * PAGE_SIZE + 17, len);
	xfer_mem_rw(&dst, 2 * PAGE_SIZE - 100, out, len, false);
	KUNIT_EXPECT_EQ(test, memcmp(out, t->buf, len), 0);
	/* from a hole: zeros over what was there */
	dpusim_mem_copy_mem(&dst, 2 * PAGE_SIZE - 100, &t->mem, 0, 200);
	xfer_mem_rw(&dst, 2 * PAGE_SIZE - 100, out, 201, false);
	KUNIT_EXPECT_NULL(test, memchr_inv(out, 0, 200));
	KUNIT_EXPECT_EQ(test, out[200], t->buf[200]);
	/* the source holds its pages only */
	KUNIT_EXPECT_EQ(test, t->mem.nr_pages, 2);
	dpusim_mem_free(&dst);
}

static struct kunit_case mram_cases[] = {
	KUNIT_CASE(mram_hole_reads_zero),
	KUNIT_CASE_PARAM(mram_missing_and_populate, span_gen_params),
	KUNIT_CASE(mram_round_trip_across_pages),
	KUNIT_CASE(mram_budget_enospc),
	KUNIT_CASE(mram_budget_follows_limit),
	KUNIT_CASE(mram_undo_removes_only_new_pages),
	KUNIT_CASE(mram_zero_keeps_holes),
	KUNIT_CASE(mram_zero_resident_pages_only),
	KUNIT_CASE(mram_budget_failed_charge_leaves_count),
	KUNIT_CASE(mram_free_returns_budget),
	KUNIT_CASE(mram_fill_keeps_pages),
	KUNIT_CASE(mram_copy_mem),
	{}
};

static struct kunit_suite mram_suite = {
	.name = "dpusim_mram",
	.init = mram_test_init,
	.exit = mram_test_exit,
	.test_cases = mram_cases,
};

kunit_test_suite(mram_suite);
