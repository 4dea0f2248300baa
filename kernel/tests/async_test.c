// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for asynchronous transfers (DPUSIM_XFER_ASYNC): round trip
 * after a sync, submit errors that change nothing, RLIMIT_MEMLOCK
 * accounting, and a rank torn down with a job still queued.
 *
 * A "blocker" work item queued first on the rank's ordered workqueue
 * holds the jobs behind it, so a test can see them pending.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>

#include "xfer_fixture.h"

struct blocker {
	struct work_struct work;
	struct completion go;
};

static void blocker_fn(struct work_struct *work)
{
	struct blocker *b = container_of(work, struct blocker, work);

	wait_for_completion(&b->go);
}

static void block_rank(struct xfer_fixture *t, struct blocker *b)
{
	init_completion(&b->go);
	INIT_WORK_ONSTACK(&b->work, blocker_fn);
	queue_work(t->rank.async_wq, &b->work);
}

static void unblock_rank(struct blocker *b)
{
	complete(&b->go);
	flush_work(&b->work);
	destroy_work_on_stack(&b->work);
}

static unsigned long locked_vm(void)
{
	return READ_ONCE(current->mm->locked_vm);
}

/* Transfers at offset 0 of the DPUs' MRAM. */
static int run(struct xfer_fixture *t, u32 flags, u64 len,
	       const struct dpusim_xfer_dpu *dpus, u32 nr_dpus,
	       const struct dpusim_block *blocks, u32 nr_blocks)
{
	return xfer_run(t, flags, 0, len, dpus, nr_dpus, blocks, nr_blocks);
}

/* To two DPUs and back, both queued: the data is there after the sync. */
static void async_round_trip(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 1, 1 }, { 3, 1 } };
	const struct dpusim_block to[] = {
		{ xfer_uaddr(t, 100), 2 * PAGE_SIZE },
		{ xfer_uaddr(t, PAGE_SIZE), 2 * PAGE_SIZE },
	};
	const struct dpusim_block from[] = {
		{ xfer_uaddr(t, XFER_UMEM_HALF), 2 * PAGE_SIZE },
		{ xfer_uaddr(t, XFER_UMEM_HALF + 2 * PAGE_SIZE), 2 * PAGE_SIZE },
	};
	unsigned long base = locked_vm();
	u8 *got;

	got = kunit_kzalloc(test, XFER_UMEM_HALF, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, got);

	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC, 2 * PAGE_SIZE, dpus,
				  2, to, 2), 0);
	/* Populated at submit. */
	KUNIT_EXPECT_EQ(test, dpusim_rank_resident_bytes(&t->rank),
			4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC | DPUSIM_XFER_FROM_DPU,
				  2 * PAGE_SIZE, dpus, 2, from, 2), 0);
	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 0), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async_pending), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->rank.stats.ioctls), 2);
	KUNIT_EXPECT_EQ(test, locked_vm(), base);

	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + XFER_UMEM_HALF, XFER_UMEM_HALF), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf + 100, 2 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got + 2 * PAGE_SIZE, t->kbuf + PAGE_SIZE,
				     2 * PAGE_SIZE), 0);
	/* A second sync has nothing to wait for. */
	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 1), 0);
}

/* Every error of an async call comes back at submit, nothing changed. */
static void async_submit_errors_change_nothing(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 0, 1 }, { 1, 1 } };
	const struct dpusim_block bad[] = {
		{ xfer_uaddr(t, 0), 64 },
		{ xfer_uaddr(t, XFER_UMEM_PAGES * PAGE_SIZE - 32), 64 },	/* runs off */
	};
	const struct dpusim_block two[] = {
		{ xfer_uaddr(t, 0), PAGE_SIZE }, { xfer_uaddr(t, PAGE_SIZE), PAGE_SIZE },
	};
	unsigned long base = locked_vm();
	u8 got[64];

	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC, 64, dpus, 2, bad, 2),
			-EFAULT);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC | DPUSIM_XFER_FROM_DPU,
				  64, dpus, 2, bad, 2), -EFAULT);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC | (1 << 4), 64, dpus,
				  2, bad, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC, 56, dpus, 2, two, 2),
			-EINVAL);
	t->budget.limit = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC, PAGE_SIZE, dpus, 2,
				  two, 2), -ENOSPC);

	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async_pending), 0);
	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 0), 0);
	KUNIT_EXPECT_EQ(test, dpusim_rank_resident_bytes(&t->rank), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->rank.stats.ioctls), 0);
	KUNIT_EXPECT_EQ(test, locked_vm(), base);
	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem, 64), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf, 64), 0);
}

/* The pinned pages are charged while queued and uncharged once done. */
static void async_memlock_returns_to_zero(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 0, 1 }, { 2, 1 } };
	const struct dpusim_block b[] = {
		{ xfer_uaddr(t, 0), 2 * PAGE_SIZE },			/* 2 pages */
		{ xfer_uaddr(t, 2 * PAGE_SIZE + 8), 2 * PAGE_SIZE },	/* 3 pages */
	};
	unsigned long base = locked_vm();
	struct blocker blk;

	block_rank(t, &blk);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC, 2 * PAGE_SIZE, dpus,
				  2, b, 2), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async_pending), 1);
	KUNIT_EXPECT_EQ(test, locked_vm(), base + 5);
	/* A sync with a short timeout gives up, the job stays queued. */
	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 1), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async_pending), 1);
	unblock_rank(&blk);

	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 0), 0);
	KUNIT_EXPECT_EQ(test, locked_vm(), base);
}

/* Tearing the rank down with a job queued waits for it. */
static void async_fini_waits(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 1, 1 } };
	const struct dpusim_block to[] = { { xfer_uaddr(t, 0), 3 * PAGE_SIZE } };
	const struct dpusim_block from[] = { { xfer_uaddr(t, XFER_UMEM_HALF),
					       3 * PAGE_SIZE } };
	unsigned long base = locked_vm();
	struct blocker blk;
	u8 *got;

	got = kunit_kzalloc(test, 3 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, got);
	KUNIT_ASSERT_EQ(test, run(t, 0, 3 * PAGE_SIZE, dpus, 1, to, 1), 0);

	block_rank(t, &blk);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC | DPUSIM_XFER_FROM_DPU,
				  3 * PAGE_SIZE, dpus, 1, from, 1), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async_pending), 1);
	complete(&blk.go);
	dpusim_rank_fini(&t->rank);
	destroy_work_on_stack(&blk.work);

	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async_pending), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 0);
	KUNIT_EXPECT_EQ(test, locked_vm(), base);
	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + XFER_UMEM_HALF,
					     3 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf, 3 * PAGE_SIZE), 0);
	/* For the exit handler. */
	KUNIT_ASSERT_EQ(test, dpusim_rank_init(&t->rank, 0, &xfer_fixture_geo,
					       &t->budget), 0);
}

static struct kunit_case async_test_cases[] = {
	KUNIT_CASE(async_round_trip),
	KUNIT_CASE(async_submit_errors_change_nothing),
	KUNIT_CASE(async_memlock_returns_to_zero),
	KUNIT_CASE(async_fini_waits),
	{}
};

static struct kunit_suite async_suite = {
	.name = "dpusim_async",
	.init = xfer_fixture_init,
	.exit = xfer_fixture_exit,
	.test_cases = async_test_cases,
};

kunit_test_suite(async_suite);
