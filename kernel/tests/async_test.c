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

#include "../dpusim.h"

#define UMEM_PAGES 8
#define HALF (UMEM_PAGES * PAGE_SIZE / 2)

static const struct dpusim_geometry async_geo = {
	.nr_ranks = 1,
	.nr_dpus = 4,
	.mram_size = 16 * PAGE_SIZE,
	.wram_size = SZ_4K,
};

struct async_test {
	struct dpusim_budget budget;
	struct dpusim_rank rank;
	u8 __user *umem;
	u8 *kbuf;
};

struct blocker {
	struct work_struct work;
	struct completion go;
};

static void blocker_fn(struct work_struct *work)
{
	struct blocker *b = container_of(work, struct blocker, work);

	wait_for_completion(&b->go);
}

static void block_rank(struct async_test *t, struct blocker *b)
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

static int async_test_init(struct kunit *test)
{
	struct async_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	unsigned long addr;
	size_t i;

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->budget.limit = SZ_1M;
	KUNIT_ASSERT_EQ(test, dpusim_rank_init(&t->rank, 0, &async_geo,
					       &t->budget), 0);
	test->priv = t;
	addr = kunit_vm_mmap(test, NULL, 0, UMEM_PAGES * PAGE_SIZE,
			     PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, addr, 0, "no user memory for the test");
	t->umem = (u8 __user *)addr;
	t->kbuf = kunit_kzalloc(test, UMEM_PAGES * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->kbuf);
	/* A pattern in the first half, 0xee in the second. */
	for (i = 0; i < HALF; i++)
		t->kbuf[i] = (i * 7 + 3) & 0xff;
	memset(t->kbuf + HALF, 0xee, HALF);
	KUNIT_ASSERT_EQ(test, copy_to_user(t->umem, t->kbuf,
					   UMEM_PAGES * PAGE_SIZE), 0);
	return 0;
}

static void async_test_exit(struct kunit *test)
{
	struct async_test *t = test->priv;

	if (!t)
		return;
	dpusim_rank_fini(&t->rank);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 0);
}

static u64 uaddr(struct async_test *t, size_t off)
{
	return (u64)(uintptr_t)(t->umem + off);
}

static unsigned long locked_vm(void)
{
	return READ_ONCE(current->mm->locked_vm);
}

static int run(struct async_test *t, u32 flags, u64 len,
	       const struct dpusim_xfer_dpu *dpus, u32 nr_dpus,
	       const struct dpusim_block *blocks, u32 nr_blocks)
{
	struct dpusim_xfer x = {
		.size = sizeof(x),
		.flags = flags,
		.length = len,
		.nr_dpus = nr_dpus,
		.nr_blocks = nr_blocks,
	};

	return dpusim_xfer_run(&t->rank, &x, dpus, blocks);
}

/* To two DPUs and back, both queued: the data is there after the sync. */
static void async_round_trip(struct kunit *test)
{
	struct async_test *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 1, 1 }, { 3, 1 } };
	const struct dpusim_block to[] = {
		{ uaddr(t, 100), 2 * PAGE_SIZE },
		{ uaddr(t, PAGE_SIZE), 2 * PAGE_SIZE },
	};
	const struct dpusim_block from[] = {
		{ uaddr(t, HALF), 2 * PAGE_SIZE },
		{ uaddr(t, HALF + 2 * PAGE_SIZE), 2 * PAGE_SIZE },
	};
	unsigned long base = locked_vm();
	u8 *got;

	got = kunit_kzalloc(test, HALF, GFP_KERNEL);
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

	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + HALF, HALF), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf + 100, 2 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got + 2 * PAGE_SIZE, t->kbuf + PAGE_SIZE,
				     2 * PAGE_SIZE), 0);
	/* A second sync has nothing to wait for. */
	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 1), 0);
}

/* Every error of an async call comes back at submit, nothing changed. */
static void async_submit_errors_change_nothing(struct kunit *test)
{
	struct async_test *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 0, 1 }, { 1, 1 } };
	const struct dpusim_block bad[] = {
		{ uaddr(t, 0), 64 },
		{ uaddr(t, UMEM_PAGES * PAGE_SIZE - 32), 64 },	/* runs off */
	};
	const struct dpusim_block two[] = {
		{ uaddr(t, 0), PAGE_SIZE }, { uaddr(t, PAGE_SIZE), PAGE_SIZE },
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
	struct async_test *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 0, 1 }, { 2, 1 } };
	const struct dpusim_block b[] = {
		{ uaddr(t, 0), 2 * PAGE_SIZE },			/* 2 pages */
		{ uaddr(t, 2 * PAGE_SIZE + 8), 2 * PAGE_SIZE },	/* 3 pages */
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
	struct async_test *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 1, 1 } };
	const struct dpusim_block to[] = { { uaddr(t, 0), 3 * PAGE_SIZE } };
	const struct dpusim_block from[] = { { uaddr(t, HALF),
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
	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + HALF,
					     3 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf, 3 * PAGE_SIZE), 0);
	/* For the exit handler. */
	KUNIT_ASSERT_EQ(test, dpusim_rank_init(&t->rank, 0, &async_geo,
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
	.init = async_test_init,
	.exit = async_test_exit,
	.test_cases = async_test_cases,
};

kunit_test_suite(async_suite);
