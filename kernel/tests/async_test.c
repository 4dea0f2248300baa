// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for asynchronous transfers (DPUSIM_XFER_ASYNC): round trip
 * after a sync, submit errors that change nothing, RLIMIT_MEMLOCK
 * accounting (once per distinct page), the queue's limits, a close that
 * does not wait, a rank torn down with a job still queued, the status
 * page's counters, and SYNCs that take chunks of the job being copied.
 *
 * A blocker (xfer_fixture.h) queued first on the rank's ordered
 * workqueue holds the jobs behind it, so a test can see them pending.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>

#include "xfer_fixture.h"

/* Pinned user pages are charged to mm->pinned_vm (RLIMIT_MEMLOCK). */
static unsigned long locked_vm(void)
{
	return atomic64_read(&current->mm->pinned_vm);
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
	KUNIT_EXPECT_EQ(test, dpusim_rank_resident_bytes(&t->rank, DPUSIM_MRAM),
			4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC | DPUSIM_XFER_FROM_DPU,
				  2 * PAGE_SIZE, dpus, 2, from, 2), 0);
	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 0), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async.pending), 0);
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
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC | (1 << 5), 64, dpus,
				  2, bad, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC, 56, dpus, 2, two, 2),
			-EINVAL);
	t->budget.limit = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC, PAGE_SIZE, dpus, 2,
				  two, 2), -ENOSPC);

	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async.pending), 0);
	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 0), 0);
	KUNIT_EXPECT_EQ(test, dpusim_rank_resident_bytes(&t->rank, DPUSIM_MRAM), 0);
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
	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async.pending), 1);
	KUNIT_EXPECT_EQ(test, locked_vm(), base + 5);
	/* A sync with a short timeout gives up, the job stays queued. */
	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 1), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async.pending), 1);
	unblock_rank(&blk);

	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 0), 0);
	KUNIT_EXPECT_EQ(test, locked_vm(), base);
}

/*
 * The status page counts a job queued once it is, and done once its
 * pages are let go; a submit that fails counts nothing.
 */
static void async_status_counts(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_rank_status *st = t->rank.async.status;
	const struct dpusim_xfer_dpu dpus[] = { { 0, 1 } };
	const struct dpusim_block b[] = { { xfer_uaddr(t, 0), PAGE_SIZE } };
	const struct dpusim_block bad[] = {
		{ xfer_uaddr(t, XFER_UMEM_PAGES * PAGE_SIZE - 32), 64 },
	};
	unsigned long base = locked_vm();
	struct blocker blk;
	u64 q0, d0;

	KUNIT_ASSERT_NOT_NULL(test, st);
	q0 = READ_ONCE(st->async_queued);
	d0 = READ_ONCE(st->async_done);
	KUNIT_EXPECT_EQ(test, q0, d0);

	block_rank(t, &blk);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC, PAGE_SIZE, dpus, 1, b, 1), 0);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC, 64, dpus, 1, bad, 1), -EFAULT);
	KUNIT_EXPECT_EQ(test, READ_ONCE(st->async_queued), q0 + 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(st->async_done), d0);
	KUNIT_EXPECT_EQ(test, locked_vm(), base + 1);
	unblock_rank(&blk);

	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 0), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(st->async_done), q0 + 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(st->async_queued), q0 + 1);
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
	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async.pending), 1);
	complete(&blk.go);
	dpusim_rank_fini(&t->rank);
	destroy_work_on_stack(&blk.work);

	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async.pending), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 0);
	KUNIT_EXPECT_EQ(test, locked_vm(), base);
	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + XFER_UMEM_HALF,
					     3 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf, 3 * PAGE_SIZE), 0);
	/* For the exit handler. */
	KUNIT_ASSERT_EQ(test, dpusim_rank_init(&t->rank, 0, &xfer_fixture_geo,
					       &t->budget), 0);
}

/*
 * Blocks alternating between two pages pin each page once: the charge and
 * the rank's pin count are 2 while the job is queued, whatever the number
 * of blocks (finding 1 and 4 of the hardening issue).
 */
static void async_pins_each_page_once(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const u32 nr = 512;
	struct dpusim_xfer_dpu dpus[] = { { 2, nr } };
	struct dpusim_block *b;
	unsigned long base = locked_vm();
	struct blocker blk;
	u8 *got;
	u32 i;

	b = kunit_kcalloc(test, nr, sizeof(*b), GFP_KERNEL);
	got = kunit_kzalloc(test, nr * 8, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, got);
	for (i = 0; i < nr; i++)
		b[i] = (struct dpusim_block){
			xfer_uaddr(t, (i % 2) * PAGE_SIZE + (i / 2) * 8), 8 };

	block_rank(t, &blk);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC, nr * 8, dpus, 1, b,
				  nr), 0);
	KUNIT_EXPECT_EQ(test, locked_vm(), base + 2);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->rank.xfer.pinned_pages), 2);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->rank.async.usage.pages), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async.usage.blocks), nr);
	unblock_rank(&blk);
	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 0), 0);
	KUNIT_EXPECT_EQ(test, locked_vm(), base);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->rank.xfer.pinned_pages), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async.usage.jobs), 0);

	/* The bytes landed in copy order. */
	xfer_mram_read(t, 2, 0, got, nr * 8);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ(test, memcmp(got + i * 8, t->kbuf + (i % 2) *
					     PAGE_SIZE + (i / 2) * 8, 8), 0);
}

/* A full queue: EAGAIN, nothing changed; room again after a sync. */
static void async_queue_full(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 1, 1 } };
	const struct dpusim_block b[] = { { xfer_uaddr(t, 0), 8 } };
	unsigned long base = locked_vm();
	struct blocker blk;
	u32 i;

	block_rank(t, &blk);
	for (i = 0; i < DPUSIM_ASYNC_MAX_JOBS; i++)
		KUNIT_ASSERT_EQ(test, run(t, DPUSIM_XFER_ASYNC, 8, dpus, 1, b,
					  1), 0);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC, 8, dpus, 1, b, 1),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async.usage.jobs),
			DPUSIM_ASYNC_MAX_JOBS);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async.pending),
			DPUSIM_ASYNC_MAX_JOBS);
	KUNIT_EXPECT_EQ(test, locked_vm(), base + DPUSIM_ASYNC_MAX_JOBS);
	unblock_rank(&blk);
	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 0), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->rank.async.usage.jobs), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->rank.async.usage.bytes), 0);
	KUNIT_EXPECT_EQ(test, locked_vm(), base);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC, 8, dpus, 1, b, 1), 0);
	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 0), 0);
}

/*
 * Closing the rank with a job queued does not wait: the job keeps the
 * ownership and the memory; once it is done, the rank is free and empty.
 */
static void async_release_does_not_wait(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu dpus[] = { { 0, 1 } };
	const struct dpusim_block b[] = { { xfer_uaddr(t, 0), PAGE_SIZE } };
	struct blocker blk;

	KUNIT_ASSERT_EQ(test, dpusim_rank_claim(&t->rank), 0);
	block_rank(t, &blk);
	KUNIT_EXPECT_EQ(test, run(t, DPUSIM_XFER_ASYNC, PAGE_SIZE, dpus, 1, b,
				  1), 0);
	dpusim_rank_release(&t->rank);
	/* Still owned (by the job), memory still there. */
	KUNIT_EXPECT_TRUE(test, test_bit(DPUSIM_RANK_OWNED, &t->rank.flags));
	KUNIT_EXPECT_EQ(test, dpusim_rank_resident_bytes(&t->rank,
							 DPUSIM_MRAM),
			PAGE_SIZE);
	unblock_rank(&blk);
	flush_workqueue(t->rank.async.wq);
	KUNIT_EXPECT_FALSE(test, test_bit(DPUSIM_RANK_OWNED, &t->rank.flags));
	KUNIT_EXPECT_NULL(test, t->rank.owner.pid);
	KUNIT_EXPECT_EQ(test, dpusim_rank_resident_bytes(&t->rank,
							 DPUSIM_MRAM), 0);
	/* Free for the next owner at once. */
	KUNIT_EXPECT_EQ(test, dpusim_rank_claim(&t->rank), 0);
	dpusim_rank_release(&t->rank);
	KUNIT_EXPECT_FALSE(test, test_bit(DPUSIM_RANK_OWNED, &t->rank.flags));
}

/*
 * Large one-block jobs, each waited for at once: the SYNC finds the job
 * being copied and takes chunks of it beside the worker (async.c).  The
 * bytes are right in both directions, round after round, nothing stays
 * shared or pinned.  (Whether a SYNC came in time to help is the
 * scheduler's; the chunk split itself is xfer_shared_piece_round_trip's.)
 */
#define HELP_LEN	(SZ_128K - 40)
#define HELP_ROUNDS	12

static void async_sync_helps_copy(struct kunit *test)
{
	const struct dpusim_xfer_dpu dpu = { .dpu = 0, .nr_blocks = 1 };
	struct xfer_big *b = xfer_big_init(test, 1, HELP_LEN, 2 * SZ_128K);
	struct dpusim_xfer x = {
		.size = sizeof(x), .offset = 16, .length = HELP_LEN, .nr_dpus = 1,
		.nr_blocks = 1,
	};
	struct dpusim_block blk;
	int round, i;

	for (round = 0; round < HELP_ROUNDS; round++) {
		for (i = 0; i < HELP_LEN; i++)
			b->want[i] = (i * 11 + round * 29 + i / 4096) & 0xff;
		KUNIT_ASSERT_EQ(test, copy_to_user(b->u + 24, b->want, HELP_LEN), 0);
		KUNIT_ASSERT_EQ(test, clear_user(b->u + SZ_128K, SZ_128K), 0);
		blk = (struct dpusim_block){ (u64)(uintptr_t)(b->u + 24), HELP_LEN };
		x.flags = DPUSIM_XFER_ASYNC;
		KUNIT_ASSERT_EQ(test, dpusim_xfer_run(&b->rank, &x, &dpu, &blk), 0);
		KUNIT_ASSERT_EQ(test, dpusim_async_sync(&b->rank, 0), 0);
		blk.addr = (u64)(uintptr_t)(b->u + SZ_128K + 8);
		x.flags = DPUSIM_XFER_ASYNC | DPUSIM_XFER_FROM_DPU;
		KUNIT_ASSERT_EQ(test, dpusim_xfer_run(&b->rank, &x, &dpu, &blk), 0);
		KUNIT_ASSERT_EQ(test, dpusim_async_sync(&b->rank, 0), 0);
		KUNIT_ASSERT_EQ(test, copy_from_user(b->got, b->u + SZ_128K + 8, HELP_LEN), 0);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(b->got, b->want, HELP_LEN), 0, "round %d", round);
	}
	KUNIT_EXPECT_NULL(test, b->rank.async.share);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->rank.async.pending), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&b->rank.stats.ioctls), 2 * HELP_ROUNDS);
	xfer_big_fini(test, b);
}

static struct kunit_case async_test_cases[] = {
	KUNIT_CASE(async_pins_each_page_once),
	KUNIT_CASE(async_queue_full),
	KUNIT_CASE(async_release_does_not_wait),
	KUNIT_CASE(async_round_trip),
	KUNIT_CASE(async_submit_errors_change_nothing),
	KUNIT_CASE(async_memlock_returns_to_zero),
	KUNIT_CASE(async_status_counts),
	KUNIT_CASE(async_fini_waits),
	KUNIT_CASE(async_sync_helps_copy),
	{}
};

static struct kunit_suite async_suite = {
	.name = "dpusim_async",
	.init = xfer_fixture_init,
	.exit = xfer_fixture_exit,
	.test_cases = async_test_cases,
};

kunit_test_suite(async_suite);
