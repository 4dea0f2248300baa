// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for DPU programs (worker.c, mmap.c's page lookup): run-state
 * transitions, transfers refused on a RUNNING DPU, the faults when worker
 * files are released, the claim order, the shutdown, the pages a
 * mapping's fault inserts, and the layout of a worker's window.
 */
#include <kunit/test.h>

#include "xfer_fixture.h"

/* A claim with the default timeout, the launch count ignored */
static int claim(struct dpusim_worker *w, u32 flags, u32 *dpu)
{
	u32 launches;

	return dpusim_worker_claim(w, flags, 0, dpu, &launches);
}

static u32 dpu_state(struct xfer_fixture *t, u32 dpu)
{
	return t->rank.dpus[dpu].state;
}

static struct dpusim_worker *new_worker(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	struct dpusim_worker *w = dpusim_worker_create(&t->rank);

	KUNIT_ASSERT_FALSE(test, IS_ERR(w));
	return w;
}

static const char no_reason[DPUSIM_REASON_LEN];

/* IDLE -> RUNNING -> DONE / FAULT, as DPU_STATUS reports them */
static void launch_state_transitions(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	char reason[DPUSIM_REASON_LEN] = "mram_read: size 12 (tasklet 3)";
	struct dpusim_dpu_state st[4];
	struct dpusim_worker *w;
	u32 dpu, running, fault;

	KUNIT_EXPECT_EQ(test, dpusim_launch(&t->rank, 0, 2), -ESRCH);
	KUNIT_EXPECT_EQ(test, dpu_state(t, 0), DPUSIM_DPU_IDLE);
	w = new_worker(test);
	KUNIT_EXPECT_EQ(test, dpusim_launch(&t->rank, 0, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, dpusim_launch(&t->rank, 4, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, dpusim_launch(&t->rank, 3, 2), -EINVAL);
	KUNIT_ASSERT_EQ(test, dpusim_launch(&t->rank, 0, 2), 0);
	KUNIT_EXPECT_EQ(test, dpu_state(t, 0), DPUSIM_DPU_RUNNING);
	KUNIT_EXPECT_EQ(test, dpu_state(t, 1), DPUSIM_DPU_RUNNING);
	KUNIT_EXPECT_EQ(test, dpu_state(t, 2), DPUSIM_DPU_IDLE);
	KUNIT_EXPECT_EQ(test, t->rank.run.nr_running, 2);
	/* A DPU of the range runs: nothing launched */
	KUNIT_EXPECT_EQ(test, dpusim_launch(&t->rank, 1, 2), -EBUSY);
	KUNIT_EXPECT_EQ(test, dpu_state(t, 2), DPUSIM_DPU_IDLE);

	KUNIT_ASSERT_EQ(test, claim(w, 0, &dpu), 0);
	KUNIT_EXPECT_EQ(test, dpu, 0);
	KUNIT_EXPECT_EQ(test, dpusim_worker_finish(w, 1, 0, no_reason, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, dpusim_worker_finish(w, 0, 0, reason, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, dpusim_worker_finish(w, 0, 2, no_reason, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, dpusim_worker_finish(w, 0, 0, no_reason, 12345),
			0);
	KUNIT_EXPECT_EQ(test, dpu_state(t, 0), DPUSIM_DPU_DONE);
	/* the run's modeled cycles stay with the DPU until its next launch */
	KUNIT_EXPECT_EQ(test, t->rank.dpus[0].modeled_cycles, 12345ULL);
	KUNIT_EXPECT_EQ(test, w->held, -1);
	/* Nothing held any more */
	KUNIT_EXPECT_EQ(test, dpusim_worker_finish(w, 0, 0, no_reason, 0),
			-EINVAL);

	KUNIT_ASSERT_EQ(test, claim(w, 0, &dpu), 0);
	KUNIT_EXPECT_EQ(test, dpu, 1);
	KUNIT_EXPECT_EQ(test, dpusim_worker_finish(w, 1, DPUSIM_FINISH_FAULT,
						   reason, 77), 0);
	KUNIT_EXPECT_EQ(test, t->rank.dpus[1].modeled_cycles, 77ULL);
	KUNIT_EXPECT_EQ(test, dpu_state(t, 1), DPUSIM_DPU_FAULT);
	KUNIT_EXPECT_EQ(test, t->rank.run.nr_running, 0);

	KUNIT_ASSERT_EQ(test, dpusim_dpu_status(&t->rank, 0, 4, st, &running,
						&fault), 0);
	KUNIT_EXPECT_EQ(test, running, 0);
	KUNIT_EXPECT_EQ(test, fault, 1);
	KUNIT_EXPECT_EQ(test, st[0].state, DPUSIM_DPU_DONE);
	KUNIT_EXPECT_EQ(test, st[0].launches, 1);
	KUNIT_EXPECT_STREQ(test, st[0].reason, "");
	KUNIT_EXPECT_EQ(test, st[1].state, DPUSIM_DPU_FAULT);
	KUNIT_EXPECT_STREQ(test, st[1].reason, reason);
	KUNIT_EXPECT_EQ(test, st[2].state, DPUSIM_DPU_IDLE);
	KUNIT_EXPECT_EQ(test, st[2].launches, 0);
	KUNIT_EXPECT_EQ(test, dpusim_dpu_status(&t->rank, 4, 0, st, &running,
						&fault), -EINVAL);
	KUNIT_EXPECT_EQ(test, dpusim_dpu_status(&t->rank, 2, 3, st, &running,
						&fault), -EINVAL);

	/* A second launch clears the reason and modeled time, and counts */
	KUNIT_ASSERT_EQ(test, dpusim_launch(&t->rank, 1, 1), 0);
	KUNIT_EXPECT_EQ(test, t->rank.dpus[1].launches, 2);
	KUNIT_EXPECT_EQ(test, t->rank.dpus[1].reason[0], 0);
	KUNIT_EXPECT_EQ(test, t->rank.dpus[1].modeled_cycles, 0ULL);
	KUNIT_EXPECT_EQ(test, t->rank.dpus[0].modeled_cycles, 12345ULL);
	KUNIT_ASSERT_EQ(test, claim(w, 0, &dpu), 0);
	/* An empty reason is stored as "fault" */
	KUNIT_EXPECT_EQ(test, dpusim_worker_finish(w, 1, DPUSIM_FINISH_FAULT,
						   no_reason, 0), 0);
	KUNIT_EXPECT_STREQ(test, t->rank.dpus[1].reason, "fault");
	dpusim_worker_destroy(w);
}

/* Transfers naming a RUNNING DPU: EBUSY with nothing changed */
static void launch_xfer_refused_on_running(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu d1[] = { { 1, 1 } };
	const struct dpusim_xfer_dpu d01[] = { { 0, 1 }, { 1, 1 } };
	const struct dpusim_block b[] = {
		{ xfer_uaddr(t, 0), PAGE_SIZE },
		{ xfer_uaddr(t, PAGE_SIZE), PAGE_SIZE },
	};
	long budget = atomic_long_read(&t->budget.pages);
	struct dpusim_worker *w = new_worker(test);
	u32 dpu;

	KUNIT_ASSERT_EQ(test, dpusim_launch(&t->rank, 1, 1), 0);
	KUNIT_EXPECT_EQ(test, xfer_run(t, 0, 0, PAGE_SIZE, d1, 1, b, 1),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, xfer_run(t, 0, 0, PAGE_SIZE, d01, 2, b, 2),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, xfer_run(t, DPUSIM_XFER_ASYNC, 0, PAGE_SIZE, d1,
				       1, b, 1), -EBUSY);
	KUNIT_EXPECT_EQ(test, xfer_run(t, DPUSIM_XFER_FROM_DPU, 0, PAGE_SIZE,
				       d1, 1, b, 1), -EBUSY);
	KUNIT_EXPECT_EQ(test, t->rank.dpus[0].mem[DPUSIM_MRAM].nr_pages, 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), budget);
	/* Another DPU is free to move */
	KUNIT_EXPECT_EQ(test, xfer_run(t, 0, 0, PAGE_SIZE, d01, 1, b, 1), 0);
	KUNIT_EXPECT_EQ(test, t->rank.dpus[0].mem[DPUSIM_MRAM].nr_pages, 1);

	KUNIT_ASSERT_EQ(test, claim(w, 0, &dpu), 0);
	KUNIT_ASSERT_EQ(test, dpusim_worker_finish(w, dpu, 0, no_reason, 0), 0);
	KUNIT_EXPECT_EQ(test, xfer_run(t, 0, 0, PAGE_SIZE, d1, 1, b, 1), 0);
	dpusim_worker_destroy(w);
}

/* WRAM needs 4-byte alignment, MRAM 8 */
static void launch_wram_align(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	const struct dpusim_xfer_dpu d[] = { { 2, 1 } };
	const struct dpusim_block b[] = { { xfer_uaddr(t, 0), 12 } };

	KUNIT_EXPECT_EQ(test, xfer_run(t, DPUSIM_XFER_WRAM, 4, 12, d, 1, b, 1),
			0);
	KUNIT_EXPECT_EQ(test, xfer_run(t, DPUSIM_XFER_WRAM, 2, 12, d, 1, b, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, xfer_run(t, 0, 4, 12, d, 1, b, 1), -EINVAL);
}

/* A worker file released holding a DPU, then the last one */
static void launch_fault_on_release(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	struct dpusim_worker *a = new_worker(test), *b = new_worker(test);
	u32 dpu;

	KUNIT_EXPECT_EQ(test, t->rank.run.nr_workers, 2);
	KUNIT_ASSERT_EQ(test, dpusim_launch(&t->rank, 0, 3), 0);
	KUNIT_ASSERT_EQ(test, claim(a, 0, &dpu), 0);
	KUNIT_ASSERT_EQ(test, dpu, 0);
	dpusim_worker_destroy(a);
	KUNIT_EXPECT_EQ(test, dpu_state(t, 0), DPUSIM_DPU_FAULT);
	KUNIT_EXPECT_STREQ(test, t->rank.dpus[0].reason, "worker exited");
	KUNIT_EXPECT_EQ(test, dpu_state(t, 1), DPUSIM_DPU_RUNNING);
	KUNIT_EXPECT_EQ(test, t->rank.run.nr_running, 2);

	KUNIT_ASSERT_EQ(test, claim(b, 0, &dpu), 0);
	KUNIT_ASSERT_EQ(test, dpu, 1);
	dpusim_worker_destroy(b);
	KUNIT_EXPECT_STREQ(test, t->rank.dpus[1].reason, "worker exited");
	KUNIT_EXPECT_EQ(test, dpu_state(t, 2), DPUSIM_DPU_FAULT);
	KUNIT_EXPECT_STREQ(test, t->rank.dpus[2].reason, "no worker left");
	KUNIT_EXPECT_EQ(test, t->rank.run.nr_running, 0);
	KUNIT_EXPECT_EQ(test, t->rank.run.nr_unheld, 0);
	KUNIT_EXPECT_EQ(test, t->rank.run.nr_workers, 0);
}

/* Lowest RUNNING unheld DPU first; one DPU per worker; NONBLOCK */
static void launch_claim_order(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	struct dpusim_worker *a = new_worker(test), *b = new_worker(test);
	struct dpusim_worker *c = new_worker(test);
	u32 dpu = 99;

	KUNIT_EXPECT_EQ(test, claim(a, DPUSIM_CLAIM_NONBLOCK, &dpu), -EAGAIN);
	KUNIT_EXPECT_EQ(test, claim(a, 2, &dpu), -EINVAL);
	KUNIT_ASSERT_EQ(test, dpusim_launch(&t->rank, 3, 1), 0);
	KUNIT_ASSERT_EQ(test, dpusim_launch(&t->rank, 1, 1), 0);
	KUNIT_ASSERT_EQ(test, claim(a, 0, &dpu), 0);
	KUNIT_EXPECT_EQ(test, dpu, 1);
	KUNIT_EXPECT_PTR_EQ(test, t->rank.dpus[1].holder, a);
	KUNIT_EXPECT_EQ(test, claim(a, DPUSIM_CLAIM_NONBLOCK, &dpu), -EINVAL);
	KUNIT_ASSERT_EQ(test, claim(b, DPUSIM_CLAIM_NONBLOCK, &dpu), 0);
	KUNIT_EXPECT_EQ(test, dpu, 3);
	KUNIT_EXPECT_EQ(test, claim(c, DPUSIM_CLAIM_NONBLOCK, &dpu), -EAGAIN);
	KUNIT_ASSERT_EQ(test, dpusim_launch(&t->rank, 0, 1), 0);
	KUNIT_ASSERT_EQ(test, claim(c, DPUSIM_CLAIM_NONBLOCK, &dpu), 0);
	KUNIT_EXPECT_EQ(test, dpu, 0);
	/* FINISH of a DPU another worker holds */
	KUNIT_EXPECT_EQ(test, dpusim_worker_finish(c, 1, 0, no_reason, 0),
			-EINVAL);
	dpusim_worker_destroy(c);
	dpusim_worker_destroy(b);
	dpusim_worker_destroy(a);
	KUNIT_EXPECT_EQ(test, t->rank.run.nr_running, 0);
}

/* At most DPUSIM_MAX_WORKERS worker files */
static void launch_max_workers(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	struct dpusim_worker **w;
	u32 i;

	w = kunit_kcalloc(test, DPUSIM_MAX_WORKERS, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	for (i = 0; i < DPUSIM_MAX_WORKERS; i++)
		w[i] = new_worker(test);
	KUNIT_EXPECT_PTR_EQ(test, dpusim_worker_create(&t->rank),
			    ERR_PTR(-E2BIG));
	for (i = 0; i < DPUSIM_MAX_WORKERS; i++)
		dpusim_worker_destroy(w[i]);
	KUNIT_EXPECT_EQ(test, t->rank.run.nr_workers, 0);
}

/* The owner file released: claims fail with ESHUTDOWN */
static void launch_shutdown(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	struct dpusim_worker *w;
	u32 dpu;

	KUNIT_ASSERT_EQ(test, dpusim_rank_claim(&t->rank), 0);
	w = new_worker(test);
	KUNIT_ASSERT_EQ(test, dpusim_launch(&t->rank, 2, 1), 0);
	dpusim_rank_release(&t->rank);
	/* The worker file keeps the rank owned */
	KUNIT_EXPECT_TRUE(test, test_bit(DPUSIM_RANK_OWNED, &t->rank.flags));
	KUNIT_EXPECT_EQ(test, claim(w, 0, &dpu), -ESHUTDOWN);
	dpusim_worker_destroy(w);
	KUNIT_EXPECT_FALSE(test, test_bit(DPUSIM_RANK_OWNED, &t->rank.flags));
	/* The ownership's end reset the run state */
	KUNIT_EXPECT_FALSE(test, test_bit(DPUSIM_RANK_SHUTDOWN,
					  &t->rank.flags));
	KUNIT_EXPECT_EQ(test, dpu_state(t, 2), DPUSIM_DPU_IDLE);
	KUNIT_EXPECT_EQ(test, t->rank.dpus[2].launches, 0);
}

/*
 * A mapping's page fault allocates and charges a missing page, shares a
 * page a transfer populated, and a failed transfer's undo keeps a page
 * that got mapped meanwhile.
 */
static void launch_fault_pages(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	struct dpusim_mem *mem = &t->rank.dpus[3].mem[DPUSIM_MRAM];
	struct dpusim_mem_undo undo = {};
	struct page *p, *q;
	long base = atomic_long_read(&t->budget.pages);

	p = dpusim_mem_get_page(mem, 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(p));
	KUNIT_EXPECT_EQ(test, mem->nr_pages, 1);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), base + 1);
	KUNIT_EXPECT_PTR_EQ(test, dpusim_mem_page(mem, 2 * PAGE_SIZE), p);
	q = dpusim_mem_get_page(mem, 2);
	KUNIT_EXPECT_PTR_EQ(test, q, p);
	KUNIT_EXPECT_EQ(test, mem->nr_pages, 1);
	put_page(q);
	put_page(p);

	/* populate pages 0..1, one gets "mapped", the undo keeps it */
	undo.cap = 2;
	undo.entries = kunit_kcalloc(test, 2, sizeof(*undo.entries),
				     GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, undo.entries);
	KUNIT_ASSERT_EQ(test, dpusim_mem_populate(mem, 0, 2 * PAGE_SIZE,
						  &undo), 0);
	KUNIT_EXPECT_EQ(test, undo.nr, 2);
	p = dpusim_mem_get_page(mem, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(p));
	KUNIT_EXPECT_EQ(test, dpusim_mem_undo(&undo), 1);
	KUNIT_EXPECT_NULL(test, dpusim_mem_page(mem, 0));
	KUNIT_EXPECT_PTR_EQ(test, dpusim_mem_page(mem, PAGE_SIZE), p);
	KUNIT_EXPECT_EQ(test, mem->nr_pages, 2);
	put_page(p);
	/* the test charged the populated pages itself: only the kept one */
	dpusim_budget_charge(&t->budget, 1);

	/* Over the budget: -ENOSPC (SIGBUS), nothing inserted */
	t->budget.limit = atomic_long_read(&t->budget.pages) << PAGE_SHIFT;
	KUNIT_EXPECT_PTR_EQ(test, dpusim_mem_get_page(mem, 5), ERR_PTR(-ENOSPC));
	KUNIT_EXPECT_NULL(test, dpusim_mem_page(mem, 5 * PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, mem->nr_pages, 2);
}

/* What each page of a worker's window shows: WRAM, a gap, MRAM, past it */
static void launch_window_layout(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	struct dpusim_rank *rank = &t->rank;
	pgoff_t wram = DIV_ROUND_UP(rank->wram_size, PAGE_SIZE);
	pgoff_t mram = rank->mram_size >> PAGE_SHIFT;
	pgoff_t mram_at = DPUSIM_WINDOW_MRAM >> PAGE_SHIFT, idx = 99;
	u32 last = rank->nr_dpus - 1;

	KUNIT_ASSERT_LT(test, wram, mram_at);
	KUNIT_EXPECT_PTR_EQ(test, dpusim_window_mem(rank, 1, 0, &idx),
			    &rank->dpus[1].mem[DPUSIM_WRAM]);
	KUNIT_EXPECT_EQ(test, idx, 0);
	KUNIT_EXPECT_PTR_EQ(test, dpusim_window_mem(rank, last, wram - 1, &idx),
			    &rank->dpus[last].mem[DPUSIM_WRAM]);
	KUNIT_EXPECT_EQ(test, idx, wram - 1);
	/* between the memories, and past the MRAM: nothing (SIGBUS) */
	idx = 99;
	KUNIT_EXPECT_NULL(test, dpusim_window_mem(rank, 1, wram, &idx));
	KUNIT_EXPECT_NULL(test, dpusim_window_mem(rank, 1, mram_at - 1, &idx));
	KUNIT_EXPECT_NULL(test, dpusim_window_mem(rank, 1, mram_at + mram, &idx));
	KUNIT_EXPECT_NULL(test, dpusim_window_mem(rank, 1,
						  DPUSIM_WINDOW_SIZE >> PAGE_SHIFT,
						  &idx));
	KUNIT_EXPECT_EQ(test, idx, 99);
	KUNIT_EXPECT_PTR_EQ(test, dpusim_window_mem(rank, 2, mram_at, &idx),
			    &rank->dpus[2].mem[DPUSIM_MRAM]);
	KUNIT_EXPECT_EQ(test, idx, 0);
	KUNIT_EXPECT_PTR_EQ(test, dpusim_window_mem(rank, 2, mram_at + mram - 1,
						    &idx),
			    &rank->dpus[2].mem[DPUSIM_MRAM]);
	KUNIT_EXPECT_EQ(test, idx, mram - 1);
	/* the runtime's addresses: WRAM 0x06000000, MRAM 0x08000000 */
	KUNIT_EXPECT_EQ(test, 0x06000000ULL + DPUSIM_WINDOW_MRAM, 0x08000000ULL);
	KUNIT_EXPECT_GE(test, DPUSIM_WINDOW_SIZE - DPUSIM_WINDOW_MRAM,
			(u64)DPUSIM_MAX_MRAM);
}

static struct kunit_case dpusim_launch_cases[] = {
	KUNIT_CASE(launch_state_transitions),
	KUNIT_CASE(launch_xfer_refused_on_running),
	KUNIT_CASE(launch_wram_align),
	KUNIT_CASE(launch_fault_on_release),
	KUNIT_CASE(launch_claim_order),
	KUNIT_CASE(launch_max_workers),
	KUNIT_CASE(launch_shutdown),
	KUNIT_CASE(launch_fault_pages),
	KUNIT_CASE(launch_window_layout),
	{}
};

static struct kunit_suite dpusim_launch_suite = {
	.name = "dpusim_launch",
	.init = xfer_fixture_init,
	.exit = xfer_fixture_exit,
	.test_cases = dpusim_launch_cases,
};

kunit_test_suite(dpusim_launch_suite);
