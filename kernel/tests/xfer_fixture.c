// SPDX-License-Identifier: GPL-2.0
/*
 * The fixture of the transfer suites, see xfer_fixture.h.
 */
#include <linux/mman.h>
#include <linux/uaccess.h>

#include "xfer_fixture.h"

const struct dpusim_geometry xfer_fixture_geo = {
	.nr_ranks = 1,
	.nr_dpus = 4,
	.mram_size = 16 * PAGE_SIZE,
	.wram_size = SZ_4K,
};

int xfer_fixture_init(struct kunit *test)
{
	struct xfer_fixture *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	unsigned long addr;
	size_t i;

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->budget.limit = SZ_1M;
	KUNIT_ASSERT_EQ(test, dpusim_rank_init(&t->rank, 0, &xfer_fixture_geo,
					       &t->budget), 0);
	test->priv = t;
	addr = kunit_vm_mmap(test, NULL, 0, XFER_UMEM_PAGES * PAGE_SIZE,
			     PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, addr, 0, "no user memory for the test");
	t->umem = (u8 __user *)addr;
	t->kbuf = kunit_kzalloc(test, XFER_UMEM_PAGES * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->kbuf);
	/* A recognisable pattern in the first half, 0xee in the second. */
	for (i = 0; i < XFER_UMEM_HALF; i++)
		t->kbuf[i] = (i * 13 + 5) & 0xff;
	memset(t->kbuf + XFER_UMEM_HALF, 0xee, XFER_UMEM_HALF);
	KUNIT_ASSERT_EQ(test, copy_to_user(t->umem, t->kbuf,
					   XFER_UMEM_PAGES * PAGE_SIZE), 0);
	return 0;
}

void xfer_fixture_exit(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;

	if (!t)			/* NULL if init failed */
		return;
	dpusim_rank_fini(&t->rank);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 0);
}

struct xfer_big *xfer_big_init(struct kunit *test, u32 nr_dpus, size_t buf_len,
			       size_t umem_len)
{
	struct xfer_big *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	struct dpusim_geometry geo = {
		.nr_ranks = 1, .nr_dpus = nr_dpus, .mram_size = SZ_256K, .wram_size = SZ_4K,
	};
	unsigned long addr;

	KUNIT_ASSERT_NOT_NULL(test, b);
	b->want = kunit_kmalloc(test, buf_len, GFP_KERNEL);
	b->got = kunit_kmalloc(test, buf_len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b->want);
	KUNIT_ASSERT_NOT_NULL(test, b->got);
	addr = kunit_vm_mmap(test, NULL, 0, umem_len, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, addr, 0, "no user memory for the test");
	b->u = (u8 __user *)addr;
	b->pinned_vm = atomic64_read(&current->mm->pinned_vm);
	b->budget.limit = SZ_4M;
	KUNIT_ASSERT_EQ(test, dpusim_rank_init(&b->rank, 0, &geo, &b->budget), 0);
	return b;
}

/* Nothing left pinned or charged; the rank's memory all given back. */
void xfer_big_fini(struct kunit *test, struct xfer_big *b)
{
	KUNIT_EXPECT_EQ(test, atomic_long_read(&b->rank.xfer.pinned_pages), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm), b->pinned_vm);
	dpusim_rank_fini(&b->rank);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&b->budget.pages), 0);
}

u64 xfer_uaddr(struct xfer_fixture *t, size_t off)
{
	return (u64)(uintptr_t)(t->umem + off);
}

/* Copy [off, off + len) of a memory through the page-sized primitive. */
void xfer_mem_rw(struct dpusim_mem *mem, u64 off, u8 *buf, size_t len,
		 bool to_mem)
{
	size_t n;

	while (len) {
		n = min_t(size_t, len, PAGE_SIZE - offset_in_page(off));
		dpusim_mem_copy_page(mem, off, buf, n, to_mem);
		off += n;
		buf += n;
		len -= n;
	}
}

/* Read [off, off + len) of a DPU's MRAM into @out. */
void xfer_mram_read(struct xfer_fixture *t, u32 dpu, u64 off, u8 *out,
		    size_t len)
{
	xfer_mem_rw(&t->rank.dpus[dpu].mem[DPUSIM_MRAM], off, out, len, false);
}

int xfer_run(struct xfer_fixture *t, u32 flags, u64 off, u64 len,
	     const struct dpusim_xfer_dpu *dpus, u32 nr_dpus,
	     const struct dpusim_block *blocks, u32 nr_blocks)
{
	struct dpusim_xfer x = {
		.size = sizeof(x),
		.flags = flags,
		.offset = off,
		.length = len,
		.nr_dpus = nr_dpus,
		.nr_blocks = nr_blocks,
	};

	return dpusim_xfer_run(&t->rank, &x, dpus, blocks);
}

static void blocker_fn(struct work_struct *work)
{
	struct blocker *b = container_of(work, struct blocker, work);

	wait_for_completion(&b->go);
}

void block_rank(struct xfer_fixture *t, struct blocker *b)
{
	init_completion(&b->go);
	INIT_WORK_ONSTACK(&b->work, blocker_fn);
	queue_work(t->rank.async.wq, &b->work);
}

void unblock_rank(struct blocker *b)
{
	complete(&b->go);
	flush_work(&b->work);
	destroy_work_on_stack(&b->work);
}
