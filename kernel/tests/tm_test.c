// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for tag matching: the tag list (post order, masks, the
 * bounded size, handles), the matcher's sync rule as a state table (the
 * seed's m1/m2/b1/b2 race among the rows), and the completion ring
 * (reservation, overrun, a hostile consumer index).
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "../dpusim.h"
#include "../tm.h"

static void tm_entry_free(struct dpusim_tm_entry *e)
{
	kfree(e);
}

static void tm_list_exit(void *data)
{
	dpusim_tm_list_fini(data, tm_entry_free);
}

static struct dpusim_tm_list *tm_list_new(struct kunit *test, u32 max)
{
	struct dpusim_tm_list *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, l);
	KUNIT_ASSERT_EQ(test, dpusim_tm_list_init(l, max), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tm_list_exit, l),
			0);
	return l;
}

static struct dpusim_tm_entry *tm_add(struct kunit *test,
				      struct dpusim_tm_list *l, u64 tag,
				      u64 mask, u64 wr_id)
{
	struct dpusim_tm_entry *e = kzalloc(sizeof(*e), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, e);
	e->tag = tag;
	e->mask = mask;
	e->wr_id = wr_id;
	if (dpusim_tm_list_add(l, e)) {
		kfree(e);
		return NULL;
	}
	return e;
}

/* Match a message: the consumed entry's wr_id, or 0 if unexpected */
static u64 tm_msg(struct dpusim_tm_list *l, u64 tag)
{
	struct dpusim_tm_entry *e = dpusim_tm_list_match(l, tag);
	u64 wr_id;

	if (!e) {
		dpusim_tm_list_unexpected(l);
		return 0;
	}
	wr_id = e->wr_id;
	dpusim_tm_list_remove(l, e);
	kfree(e);
	return wr_id;
}

/* ---------------------------------------------------------------- list */

static void tm_list_post_order_test(struct kunit *test)
{
	struct dpusim_tm_list *l = tm_list_new(test, 16);

	/* three entries that all match tag 5: post order decides */
	tm_add(test, l, 5, ~0ULL, 1);
	tm_add(test, l, 0, 0, 2);		/* wildcard */
	tm_add(test, l, 4, ~1ULL, 3);		/* matches 4 and 5 */
	tm_add(test, l, 5, ~0ULL, 4);
	KUNIT_EXPECT_EQ(test, tm_msg(l, 5), 1);
	KUNIT_EXPECT_EQ(test, tm_msg(l, 5), 2);
	KUNIT_EXPECT_EQ(test, tm_msg(l, 5), 3);
	KUNIT_EXPECT_EQ(test, tm_msg(l, 5), 4);
	KUNIT_EXPECT_EQ(test, tm_msg(l, 5), 0);
	KUNIT_EXPECT_EQ(test, l->nr, 0);
}

static void tm_list_out_of_order_test(struct kunit *test)
{
	struct dpusim_tm_list *l = tm_list_new(test, 16);

	/* a later entry is consumed when earlier ones do not match */
	tm_add(test, l, 1, ~0ULL, 1);
	tm_add(test, l, 2, ~0ULL, 2);
	tm_add(test, l, 3, ~0ULL, 3);
	KUNIT_EXPECT_EQ(test, tm_msg(l, 3), 3);
	KUNIT_EXPECT_EQ(test, tm_msg(l, 2), 2);
	KUNIT_EXPECT_EQ(test, tm_msg(l, 1), 1);
}

static void tm_list_mask_test(struct kunit *test)
{
	struct dpusim_tm_list *l = tm_list_new(test, 16);
	struct dpusim_tm_entry *e;

	/* the posted tag is masked at ADD time */
	e = tm_add(test, l, 0xabcd, 0xff00, 1);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, e->tag, 0xab00ULL);
	/* bits outside the mask are free */
	KUNIT_EXPECT_EQ(test, tm_msg(l, 0x12ab00), 1);
	KUNIT_EXPECT_EQ(test, l->nr, 0);
}

static void tm_list_mask_cases_test(struct kunit *test)
{
	struct dpusim_tm_list *l = tm_list_new(test, 16);

	tm_add(test, l, 0xab00, 0xff00, 1);
	KUNIT_EXPECT_EQ(test, tm_msg(l, 0xac00), 0);	/* wrong tag */
	KUNIT_EXPECT_EQ(test, tm_msg(l, 0x12abff), 1);	/* other bits free */
	dpusim_tm_list_sync(l, 1);	/* software saw the unexpected one */
	tm_add(test, l, 0, 0, 2);
	KUNIT_EXPECT_EQ(test, tm_msg(l, ~0ULL), 2);	/* mask 0: any tag */
}

static void tm_list_full_test(struct kunit *test)
{
	struct dpusim_tm_list *l = tm_list_new(test, 4);
	struct dpusim_tm_entry *e[4];
	int i;

	for (i = 0; i < 4; i++) {
		e[i] = tm_add(test, l, i, ~0ULL, i + 1);
		KUNIT_ASSERT_NOT_NULL(test, e[i]);
	}
	KUNIT_EXPECT_NULL(test, tm_add(test, l, 9, ~0ULL, 9));
	/* DEL one, then the repost fits */
	dpusim_tm_list_remove(l, e[1]);
	kfree(e[1]);
	KUNIT_EXPECT_NOT_NULL(test, tm_add(test, l, 9, ~0ULL, 9));
	KUNIT_EXPECT_EQ(test, tm_msg(l, 9), 9);
}

static void tm_list_handles_test(struct kunit *test)
{
	struct dpusim_tm_list *l = tm_list_new(test, 4);
	struct dpusim_tm_entry *a, *b;
	bool issued;
	u32 h;

	a = tm_add(test, l, 1, ~0ULL, 1);
	KUNIT_ASSERT_NOT_NULL(test, a);
	h = a->handle;
	KUNIT_EXPECT_NE(test, h, 0);
	KUNIT_EXPECT_PTR_EQ(test, dpusim_tm_list_find(l, h, &issued), a);
	KUNIT_EXPECT_TRUE(test, issued);
	KUNIT_EXPECT_EQ(test, tm_msg(l, 1), 1);
	/* consumed: not found, but known as issued (DEL gets TM_ERR) */
	KUNIT_EXPECT_NULL(test, dpusim_tm_list_find(l, h, &issued));
	KUNIT_EXPECT_TRUE(test, issued);
	/* never issued */
	KUNIT_EXPECT_NULL(test, dpusim_tm_list_find(l, h + 100, &issued));
	KUNIT_EXPECT_FALSE(test, issued);
	KUNIT_EXPECT_NULL(test, dpusim_tm_list_find(l, 0, &issued));
	KUNIT_EXPECT_FALSE(test, issued);
	/* the freed handle is not issued again at once */
	b = tm_add(test, l, 2, ~0ULL, 2);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_EXPECT_NE(test, b->handle, h);
}

/*
 * Handles wrap after 2^32 - 1 of them, skipping 0 and the handles still
 * in use; from then on every handle counts as issued.
 */
static void tm_list_handles_wrap_test(struct kunit *test)
{
	struct dpusim_tm_list *l = tm_list_new(test, 4);
	struct dpusim_tm_entry *a, *b, *c, *d;
	bool issued;

	a = tm_add(test, l, 1, ~0ULL, 1);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_EQ(test, a->handle, 1);
	b = tm_add(test, l, 2, ~0ULL, 2);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_EQ(test, b->handle, 2);
	KUNIT_EXPECT_EQ(test, tm_msg(l, 2), 2);	/* 2 is free again */
	KUNIT_EXPECT_NULL(test, dpusim_tm_list_find(l, U32_MAX, &issued));
	KUNIT_EXPECT_FALSE(test, issued);

	l->next_handle = U32_MAX;
	c = tm_add(test, l, 3, ~0ULL, 3);
	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_EXPECT_EQ(test, c->handle, U32_MAX);
	KUNIT_EXPECT_TRUE(test, l->wrapped);
	/* 0 is never a handle, 1 is in use: the next is 2 */
	d = tm_add(test, l, 4, ~0ULL, 4);
	KUNIT_ASSERT_NOT_NULL(test, d);
	KUNIT_EXPECT_EQ(test, d->handle, 2);
	KUNIT_EXPECT_PTR_EQ(test, dpusim_tm_list_find(l, 1, &issued), a);
	KUNIT_EXPECT_PTR_EQ(test, dpusim_tm_list_find(l, U32_MAX, &issued), c);
	KUNIT_EXPECT_PTR_EQ(test, dpusim_tm_list_find(l, 2, &issued), d);
	KUNIT_EXPECT_NULL(test, dpusim_tm_list_find(l, 1000, &issued));
	KUNIT_EXPECT_TRUE(test, issued);
	KUNIT_EXPECT_NULL(test, dpusim_tm_list_find(l, 0, &issued));
	KUNIT_EXPECT_FALSE(test, issued);
	KUNIT_EXPECT_EQ(test, tm_msg(l, 3), 3);
	KUNIT_EXPECT_NULL(test, dpusim_tm_list_find(l, U32_MAX, &issued));
	KUNIT_EXPECT_TRUE(test, issued);
}

static void tm_list_many_test(struct kunit *test)
{
	struct dpusim_tm_list *l = tm_list_new(test, 8192);
	u32 i;

	/* a full list of exact tags, consumed in reverse post order */
	for (i = 0; i < 8192; i++)
		KUNIT_ASSERT_NOT_NULL(test, tm_add(test, l, i * 7919ULL,
						   ~0ULL, i + 1));
	for (i = 8192; i-- > 0;)
		KUNIT_ASSERT_EQ(test, tm_msg(l, i * 7919ULL), i + 1);
	KUNIT_EXPECT_EQ(test, l->nr, 0);
}

static struct kunit_case dpusim_tm_list_cases[] = {
	KUNIT_CASE(tm_list_post_order_test),
	KUNIT_CASE(tm_list_out_of_order_test),
	KUNIT_CASE(tm_list_mask_test),
	KUNIT_CASE(tm_list_mask_cases_test),
	KUNIT_CASE(tm_list_full_test),
	KUNIT_CASE(tm_list_handles_test),
	KUNIT_CASE(tm_list_handles_wrap_test),
	KUNIT_CASE(tm_list_many_test),
	{}
};

static struct kunit_suite dpusim_tm_list_suite = {
	.name = "dpusim_tm_list",
	.test_cases = dpusim_tm_list_cases,
};

/* ------------------------------------------------- the sync rule, a table */

/*
 * One step of a scenario: a message arrives ('m', tag; expect the wr_id
 * it lands in, 0 = unexpected), a tag is added ('a', tag -> wr_id, with
 * TM_SYNC and a count when sync >= 0), or a TAG_SYNC ('s', count).  After
 * each step, sync_req is the expected SYNC_REQ flag.
 */
struct tm_step {
	char what;
	u64 tag;
	u64 wr_id;
	int sync;
	bool sync_req;
};

struct tm_scenario {
	const char *name;
	struct tm_step steps[10];
};

static const struct tm_scenario tm_scenarios[] = {
	{ "in sync: adds match at once", {
		{ 'a', 1, 11, -1, false },
		{ 'm', 1, 11, -1, false },
		{ 0 } } },
	{ "seed race m1 m2 b1 b2", {
		/* m1 arrives: nothing posted, unexpected; hw = 1 */
		{ 'm', 1, 0, -1, true },
		/* b1 posted before software saw m1 (count 0): held back */
		{ 'a', 2, 21, 0, true },
		/* m2 has b1's tag but b1 is not eligible: unexpected too */
		{ 'm', 2, 0, -1, true },
		/* software handled m1 and m2, posts b2 with count 2 */
		{ 'a', 2, 22, 2, false },
		/* now b1 (earlier) matches first, then b2 */
		{ 'm', 2, 21, -1, false },
		{ 'm', 2, 22, -1, false },
		{ 0 } } },
	{ "add without TM_SYNC while out of sync waits", {
		{ 'm', 9, 0, -1, true },
		{ 'a', 3, 31, -1, true },
		{ 'm', 3, 0, -1, true },
		{ 's', 0, 0, 2, false },
		{ 'm', 3, 31, -1, false },
		{ 0 } } },
	{ "stale count keeps it held", {
		{ 'm', 9, 0, -1, true },
		{ 'm', 9, 0, -1, true },
		{ 'a', 4, 41, 1, true },
		{ 'm', 4, 0, -1, true },
		{ 's', 0, 0, 3, false },
		{ 'm', 4, 41, -1, false },
		{ 0 } } },
	{ "entries added in sync stay eligible", {
		{ 'a', 5, 51, -1, false },
		{ 'm', 9, 0, -1, true },
		{ 'm', 5, 51, -1, true },
		{ 0 } } },
	{ "sync with the right count on the add itself", {
		{ 'm', 9, 0, -1, true },
		{ 'a', 6, 61, 1, false },
		{ 'm', 6, 61, -1, false },
		{ 0 } } },
};

static void tm_scenario_desc(const struct tm_scenario *s, char *desc)
{
	strscpy(desc, s->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(tm_scenario, tm_scenarios, tm_scenario_desc);

static void tm_sync_rule_test(struct kunit *test)
{
	const struct tm_scenario *s = test->param_value;
	struct dpusim_tm_list *l = tm_list_new(test, 16);
	const struct tm_step *st;
	int i;

	for (i = 0, st = s->steps; st->what; i++, st++) {
		switch (st->what) {
		case 'm':
			KUNIT_EXPECT_EQ_MSG(test, tm_msg(l, st->tag), st->wr_id,
					    "step %d", i);
			break;
		case 'a':
			if (st->sync >= 0)
				dpusim_tm_list_sync(l, st->sync);
			KUNIT_ASSERT_NOT_NULL(test, tm_add(test, l, st->tag,
							   ~0ULL, st->wr_id));
			break;
		case 's':
			dpusim_tm_list_sync(l, st->sync);
			break;
		}
		KUNIT_EXPECT_EQ_MSG(test, dpusim_tm_list_sync_req(l),
				    st->sync_req, "step %d", i);
	}
}

static struct kunit_case dpusim_tm_match_cases[] = {
	KUNIT_CASE_PARAM(tm_sync_rule_test, tm_scenario_gen_params),
	{}
};

static struct kunit_suite dpusim_tm_match_suite = {
	.name = "dpusim_tm_match",
	.test_cases = dpusim_tm_match_cases,
};

/* ---------------------------------------------------------------- ring */

static void tm_cq_exit(void *data)
{
	dpusim_tm_cq_put(data);
}

static struct dpusim_tm_cq *tm_cq_new(struct kunit *test, u32 cqe)
{
	struct dpusim_tm_cq *cq = dpusim_tm_cq_alloc(cqe);

	KUNIT_ASSERT_FALSE(test, IS_ERR(cq));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tm_cq_exit, cq),
			0);
	return cq;
}

static struct dpusim_tm_cqe *tm_ring_entry(struct dpusim_tm_cq *cq, u32 i)
{
	return (void *)cq->ring + DPUSIM_TM_CQ_RING_ENTRIES +
		(i & (cq->nr_entries - 1)) * sizeof(struct dpusim_tm_cqe);
}

static void tm_cq_sizes_test(struct kunit *test)
{
	struct dpusim_tm_cq *cq = tm_cq_new(test, 5);

	KUNIT_EXPECT_EQ(test, cq->nr_entries, 8);
	KUNIT_EXPECT_EQ(test, cq->ring->nr_entries, 8);
	KUNIT_EXPECT_EQ(test, cq->ring->entry_size, 128);
	KUNIT_EXPECT_TRUE(test, PAGE_ALIGNED(cq->ring_size));
	KUNIT_EXPECT_GE(test, cq->ring_size, DPUSIM_TM_CQ_RING_ENTRIES + 8 * 128);
	KUNIT_EXPECT_TRUE(test, IS_ERR(dpusim_tm_cq_alloc(0)));
	KUNIT_EXPECT_TRUE(test, IS_ERR(dpusim_tm_cq_alloc(DPUSIM_TM_MAX_CQE + 1)));
}

static void tm_cq_push_test(struct kunit *test)
{
	struct dpusim_tm_cq *cq = tm_cq_new(test, 4);
	struct dpusim_tm_cqe c = {};
	u32 i;

	/* 10 rounds of the ring: wrap-around of the entries */
	for (i = 0; i < 40; i++) {
		KUNIT_ASSERT_EQ(test, dpusim_tm_cq_reserve(cq, 1), 0);
		c.wr_id = i;
		dpusim_tm_cq_push(cq, &c);
		KUNIT_EXPECT_EQ(test, cq->ring->producer, i + 1);
		KUNIT_EXPECT_EQ(test, tm_ring_entry(cq, i)->wr_id, i);
		cq->ring->consumer = i + 1;	/* the process consumed it */
	}
	KUNIT_EXPECT_EQ(test, cq->overruns, 0);
}

static void tm_cq_overrun_test(struct kunit *test)
{
	struct dpusim_tm_cq *cq = tm_cq_new(test, 4);
	struct dpusim_tm_cqe c = {};
	int i;

	for (i = 0; i < 4; i++) {
		KUNIT_ASSERT_EQ(test, dpusim_tm_cq_reserve(cq, 1), 0);
		dpusim_tm_cq_push(cq, &c);
	}
	/* full: refused, reported in the ring, nothing written */
	KUNIT_EXPECT_EQ(test, dpusim_tm_cq_reserve(cq, 1), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, cq->ring->flags, DPUSIM_TM_CQ_F_OVERRUN);
	KUNIT_EXPECT_EQ(test, cq->ring->overruns, 1);
	KUNIT_EXPECT_EQ(test, cq->ring->producer, 4);
	/* consuming two makes room for exactly two */
	cq->ring->consumer = 2;
	KUNIT_EXPECT_EQ(test, dpusim_tm_cq_reserve(cq, 3), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, dpusim_tm_cq_reserve(cq, 2), 0);
	/* reservations count: nothing more fits */
	KUNIT_EXPECT_EQ(test, dpusim_tm_cq_reserve(cq, 1), -EOVERFLOW);
	dpusim_tm_cq_unreserve(cq, 2);
	KUNIT_EXPECT_EQ(test, dpusim_tm_cq_reserve(cq, 1), 0);
	dpusim_tm_cq_unreserve(cq, 1);
	KUNIT_EXPECT_EQ(test, cq->overruns, 3);
}

static void tm_cq_hostile_test(struct kunit *test)
{
	struct dpusim_tm_cq *cq = tm_cq_new(test, 4);
	struct dpusim_tm_cqe c = { .wr_id = 7 };
	static const u32 bad[] = { 100, 0x80000000, 2, 5 };
	int i;

	KUNIT_ASSERT_EQ(test, dpusim_tm_cq_reserve(cq, 1), 0);
	dpusim_tm_cq_push(cq, &c);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		/* a consumer ahead of the producer: the ring counts as full */
		cq->ring->consumer = bad[i];
		cq->ring->producer = 12345;	/* scribbled, never read */
		cq->ring->nr_entries = 1U << 30;
		KUNIT_EXPECT_EQ(test, dpusim_tm_cq_reserve(cq, 1), -EOVERFLOW);
	}
	/* a sane consumer again: the kernel's own indexes still hold */
	cq->ring->consumer = 1;
	KUNIT_EXPECT_EQ(test, dpusim_tm_cq_reserve(cq, 1), 0);
	dpusim_tm_cq_push(cq, &c);
	KUNIT_EXPECT_EQ(test, cq->ring->producer, 2);
	KUNIT_EXPECT_EQ(test, tm_ring_entry(cq, 1)->wr_id, 7);
	KUNIT_EXPECT_EQ(test, cq->nr_entries, 4);
}

static struct kunit_case dpusim_tm_cq_cases[] = {
	KUNIT_CASE(tm_cq_sizes_test),
	KUNIT_CASE(tm_cq_push_test),
	KUNIT_CASE(tm_cq_overrun_test),
	KUNIT_CASE(tm_cq_hostile_test),
	{}
};

static struct kunit_suite dpusim_tm_cq_suite = {
	.name = "dpusim_tm_cq",
	.test_cases = dpusim_tm_cq_cases,
};

kunit_test_suites(&dpusim_tm_list_suite, &dpusim_tm_match_suite,
		  &dpusim_tm_cq_suite);
