// SPDX-License-Identifier: GPL-2.0
/*
 * The transfer engine: DPUSIM_IOCTL_XFER moves data between host blocks
 * and the memory of several DPUs of a rank in one call.
 *
 *   check     the whole descriptor, before anything else
 *   pin       every user page the call touches (pin_user_pages_fast),
 *             in the order the copy goes (see struct dpusim_order)
 *   populate  every memory page a write needs, charged to the budget
 *   copy      memcpy between the pinned user pages and the memory pages,
 *             one copy, no bounce buffer
 *   pad       to the DPU without a length check: zeros up to the length
 *
 * Only the copy moves bytes and it cannot fail, so a call that fails
 * changes nothing, for any DPU.
 */
#include <kunit/visibility.h>
#include <linux/bitmap.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "dpusim.h"

#define DPUSIM_XFER_FLAGS \
	(DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_NO_LENGTH_CHECK | \
	 DPUSIM_XFER_WRAM | DPUSIM_XFER_ASYNC)

/**
 * dpusim_walk_init - start walking a DPU's blocks
 * @w: the walk
 * @blocks: the DPU's blocks
 * @nr_blocks: how many
 * @limit: bytes after which the walk stops (the transfer's length)
 */
void dpusim_walk_init(struct dpusim_walk *w, const struct dpusim_block *blocks,
		      u32 nr_blocks, u64 limit)
{
	w->blk = blocks;
	w->end = blocks + nr_blocks;
	w->left = limit;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_walk_init);

/**
 * dpusim_walk_next - the next piece of host memory to move
 * @w: the walk
 * @addr: out, user address
 * @len: out, bytes (never 0)
 *
 * Empty blocks are skipped; the block that reaches the limit is cut there.
 *
 * Return: false once the blocks or the limit are used up.
 */
bool dpusim_walk_next(struct dpusim_walk *w, u64 *addr, u64 *len)
{
	const struct dpusim_block *b;

	while (w->left && w->blk < w->end) {
		b = w->blk++;
		if (!b->length)
			continue;
		*addr = b->addr;
		*len = min(b->length, w->left);
		w->left -= *len;
		return true;
	}
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_walk_next);

/**
 * dpusim_span_pages - pages that [@addr, @addr + @len) touches
 * @addr: start; @addr + @len must not wrap
 * @len: bytes
 *
 * Return: the page count, 0 for an empty range.
 */
unsigned long dpusim_span_pages(u64 addr, u64 len)
{
	if (!len)
		return 0;
	return ((addr + len - 1) >> PAGE_SHIFT) - (addr >> PAGE_SHIFT) + 1;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_span_pages);

static u64 dpusim_xfer_mem_size(const struct dpusim_rank *rank,
				const struct dpusim_xfer *x)
{
	return x->flags & DPUSIM_XFER_WRAM ? rank->wram_size : rank->mram_size;
}

static struct dpusim_mem *dpusim_xfer_mem(struct dpusim_rank *rank,
					  const struct dpusim_xfer *x, u32 dpu)
{
	return &rank->dpus[dpu].mem[x->flags & DPUSIM_XFER_WRAM ?
				    DPUSIM_WRAM : DPUSIM_MRAM];
}

/* What can be checked before the DPU and block lists are copied in. */
static int dpusim_xfer_check_header(const struct dpusim_rank *rank,
				    const struct dpusim_xfer *x)
{
	u64 end;

	if (x->flags & ~DPUSIM_XFER_FLAGS)
		return -EINVAL;
	if (!IS_ALIGNED(x->offset, 8) || !IS_ALIGNED(x->length, 8))
		return -EINVAL;
	if (x->nr_dpus > rank->nr_dpus || x->nr_blocks > DPUSIM_XFER_MAX_BLOCKS)
		return -E2BIG;
	if (check_add_overflow(x->offset, x->length, &end) ||
	    end > dpusim_xfer_mem_size(rank, x))
		return -EOVERFLOW;
	return 0;
}

/*
 * Bytes of memory the DPU's blocks cover: their sum, saturated, cut at
 * the length.  -EFAULT if a block wraps the address space.
 */
static int dpusim_xfer_dpu_bytes(const struct dpusim_xfer *x,
				 const struct dpusim_block *blocks, u32 nr,
				 u64 *bytes)
{
	u64 sum = 0, end;
	u32 i;

	for (i = 0; i < nr; i++) {
		if (check_add_overflow(blocks[i].addr, blocks[i].length, &end))
			return -EFAULT;
		if (check_add_overflow(sum, blocks[i].length, &sum))
			sum = U64_MAX;
	}
	if (!(x->flags & DPUSIM_XFER_NO_LENGTH_CHECK) && sum != x->length)
		return -EINVAL;
	*bytes = min(sum, x->length);
	return 0;
}

/**
 * dpusim_xfer_check - check a whole transfer descriptor
 * @rank: the rank
 * @x: the header
 * @dpus: x->nr_dpus entries
 * @blocks: x->nr_blocks entries
 *
 * Return: 0 or the errno documented at struct dpusim_xfer.
 */
int dpusim_xfer_check(const struct dpusim_rank *rank,
		      const struct dpusim_xfer *x,
		      const struct dpusim_xfer_dpu *dpus,
		      const struct dpusim_block *blocks)
{
	DECLARE_BITMAP(seen, DPUSIM_MAX_DPUS);
	u64 bytes, total = 0;
	u32 i, first = 0;
	int ret;

	ret = dpusim_xfer_check_header(rank, x);
	if (ret)
		return ret;

	bitmap_zero(seen, DPUSIM_MAX_DPUS);
	for (i = 0; i < x->nr_dpus; i++) {
		if (dpus[i].dpu >= rank->nr_dpus ||
		    __test_and_set_bit(dpus[i].dpu, seen))
			return -EINVAL;
		if (dpus[i].nr_blocks > x->nr_blocks - first)
			return -EINVAL;
		ret = dpusim_xfer_dpu_bytes(x, blocks + first,
					    dpus[i].nr_blocks, &bytes);
		if (ret)
			return ret;
		total += bytes;
		if (total > DPUSIM_XFER_MAX_BYTES)
			return -E2BIG;
		first += dpus[i].nr_blocks;
	}
	if (first != x->nr_blocks)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_xfer_check);

/*
 * The engine moves the pieces of a call round-robin over its DPUs: block 0
 * of every DPU, then block 1 of every DPU, ... as the hardware does (seed
 * 000).  Host blocks laid out in that order are adjacent, so their pages
 * are pinned in long runs, one pin_user_pages_fast() call per run.
 * struct dpusim_order (dpusim.h) holds one cursor per DPU of the call.
 */
static void dpusim_order_init(struct dpusim_order *o, struct dpusim_rank *rank,
			      const struct dpusim_xfer *x,
			      const struct dpusim_xfer_dpu *dpus,
			      const struct dpusim_block *blocks)
{
	u32 i;

	for (i = 0; i < x->nr_dpus; blocks += dpus[i++].nr_blocks) {
		dpusim_walk_init(&o->c[i].w, blocks, dpus[i].nr_blocks,
				 x->length);
		o->c[i].off = x->offset;
		o->c[i].mem = dpusim_xfer_mem(rank, x, dpus[i].dpu);
		o->c[i].page_idx = ULONG_MAX;	/* nothing looked up yet */
		o->act[i] = i;
	}
	o->nr_act = x->nr_dpus;
	o->pos = 0;
	o->kept = 0;
}

/* The next piece and the cursor of its DPU; NULL when all are done. */
static struct dpusim_cursor *dpusim_order_next(struct dpusim_order *o,
					       u64 *addr, u64 *len)
{
	struct dpusim_cursor *cur;
	u32 i;

	while (o->nr_act) {
		if (o->pos == o->nr_act) {
			o->nr_act = o->kept;
			o->pos = 0;
			o->kept = 0;
			continue;
		}
		i = o->act[o->pos++];
		cur = &o->c[i];
		if (dpusim_walk_next(&cur->w, addr, len)) {
			o->act[o->kept++] = i;
			return cur;
		}
	}
	return NULL;
}

/*
 * Place a piece in the array of pinned pages: returns the entry of its
 * first page and advances *@nr past its pages.  A piece that starts in the
 * page the previous piece ended in shares that entry (small blocks).
 * @last is the user page of the last entry (initially not page aligned).
 */
static unsigned long dpusim_piece_pages(u64 *last, unsigned long *nr,
					u64 addr, u64 len)
{
	u64 first = addr & PAGE_MASK, end = (addr + len - 1) & PAGE_MASK;
	unsigned long idx = *nr;

	if (first == *last)
		idx--;
	*nr = idx + ((end - first) >> PAGE_SHIFT) + 1;
	*last = end;
	return idx;
}

/* Pages[] entries a call needs. */
static unsigned long dpusim_xfer_nr_pages(struct dpusim_order *o)
{
	unsigned long nr = 0;
	u64 addr, len, last = 1;

	while (dpusim_order_next(o, &addr, &len))
		dpusim_piece_pages(&last, &nr, addr, len);
	return nr;
}

/* Pin the user pages of every piece, in order, merging adjacent runs. */
static int dpusim_xfer_pin(const struct dpusim_xfer *x, struct dpusim_order *o,
			   struct page **pages, unsigned long *npinned)
{
	unsigned int gup = x->flags & DPUSIM_XFER_FROM_DPU ? FOLL_WRITE : 0;
	unsigned long nr = 0, prev, run_len = 0;
	u64 addr, len, start, last = 1, run = 0;
	int ret;

	for (;;) {
		prev = nr;
		if (dpusim_order_next(o, &addr, &len)) {
			dpusim_piece_pages(&last, &nr, addr, len);
			if (nr == prev)
				continue;	/* within the last page */
			start = last - ((nr - prev - 1) << PAGE_SHIFT);
			if (run_len && start == run + (run_len << PAGE_SHIFT)) {
				run_len += nr - prev;
				continue;
			}
		}
		if (run_len) {
			ret = pin_user_pages_fast(run, run_len, gup,
						  pages + *npinned);
			if (ret < 0)
				return ret;
			*npinned += ret;
			if (ret < run_len)
				return -EFAULT;
		}
		if (nr == prev)
			return 0;	/* no piece left */
		run = start;
		run_len = nr - prev;
	}
}

/**
 * dpusim_xfer_populate - allocate the memory pages a transfer writes
 * @rank: the rank, its xfer_lock held
 * @p: the transfer
 *
 * All pages are charged at once; nothing to do from the DPU.
 *
 * Return: 0, or -ENOSPC / -ENOMEM with every DPU as it was.
 */
int dpusim_xfer_populate(struct dpusim_rank *rank, struct dpusim_xfer_pin *p)
{
	const struct dpusim_xfer *x = &p->x;
	const struct dpusim_xfer_dpu *dpus = p->dpus;
	const struct dpusim_block *blocks = p->blocks;
	const struct dpusim_block *b = blocks;
	struct dpusim_mem_undo undo = {};
	unsigned long missing = 0;
	u64 bytes;
	u32 i;
	int ret;

	lockdep_assert_held(&rank->xfer_lock);
	if (x->flags & DPUSIM_XFER_FROM_DPU)
		return 0;
	for (i = 0; i < x->nr_dpus; b += dpus[i++].nr_blocks) {
		dpusim_xfer_dpu_bytes(x, b, dpus[i].nr_blocks, &bytes);
		missing += dpusim_mem_missing(dpusim_xfer_mem(rank, x,
							      dpus[i].dpu),
					      x->offset, bytes);
	}
	if (!missing)
		return 0;
	ret = dpusim_budget_charge(rank->budget, missing);
	if (ret)
		return ret;

	undo.cap = missing;
	undo.entries = kvmalloc_array(missing, sizeof(*undo.entries),
				      GFP_KERNEL);
	if (!undo.entries) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	for (i = 0, b = blocks; i < x->nr_dpus; b += dpus[i++].nr_blocks) {
		dpusim_xfer_dpu_bytes(x, b, dpus[i].nr_blocks, &bytes);
		ret = dpusim_mem_populate(dpusim_xfer_mem(rank, x, dpus[i].dpu),
					  x->offset, bytes, &undo);
		if (ret) {
			dpusim_mem_undo(&undo);
			goto err_free;
		}
	}
	kvfree(undo.entries);
	return 0;

err_free:
	kvfree(undo.entries);
err_uncharge:
	dpusim_budget_uncharge(rank->budget, missing);
	return ret;
}

/* Move one piece: host bytes at @addr, in @pages, and memory at @off. */
/*
 * The memory page of the cursor's DPU that holds byte @off.  Small blocks
 * put many pieces in one page: the last lookup is kept.  The xarray does
 * not change under xfer_lock, which the copy holds.
 */
static struct page *dpusim_cursor_page(struct dpusim_cursor *cur, u64 off)
{
	pgoff_t idx = off >> PAGE_SHIFT;

	if (idx != cur->page_idx) {
		cur->page = dpusim_mem_page(cur->mem, off);
		cur->page_idx = idx;
	}
	return cur->page;
}

/* Move one piece: host bytes at @addr, in @pages, and the DPU's memory. */
static void dpusim_copy_piece(struct dpusim_cursor *cur, struct page **pages,
			      u64 addr, u64 len, bool to_mem)
{
	size_t uoff = offset_in_page(addr), n;
	u64 off = cur->off;
	void *u;

	while (len) {
		n = min_t(u64, len, min(PAGE_SIZE - uoff,
					PAGE_SIZE - offset_in_page(off)));
		u = kmap_local_page(*pages);
		dpusim_page_copy(dpusim_cursor_page(cur, off), off, u + uoff,
				 n, to_mem);
		kunmap_local(u);
		uoff += n;
		if (uoff == PAGE_SIZE) {
			uoff = 0;
			pages++;
		}
		off += n;
		len -= n;
		cond_resched();
	}
}

/**
 * dpusim_xfer_copy - move the bytes of a pinned, populated transfer
 * @rank: the rank, its xfer_lock held
 * @p: the transfer
 *
 * Cannot fail.
 */
void dpusim_xfer_copy(struct dpusim_rank *rank, struct dpusim_xfer_pin *p)
{
	const struct dpusim_xfer *x = &p->x;
	struct dpusim_order *o = &p->o;
	struct page **pages = p->pages;
	bool to_mem = !(x->flags & DPUSIM_XFER_FROM_DPU);
	struct dpusim_cursor *cur;
	unsigned long nr = 0, idx;
	u64 addr, len, last = 1, moved = 0;
	u32 i;

	lockdep_assert_held(&rank->xfer_lock);
	dpusim_order_init(o, rank, x, p->dpus, p->blocks);
	while ((cur = dpusim_order_next(o, &addr, &len))) {
		idx = dpusim_piece_pages(&last, &nr, addr, len);
		dpusim_copy_piece(cur, pages + idx, addr, len, to_mem);
		cur->off += len;
	}
	for (i = 0; i < x->nr_dpus; i++) {
		cur = &o->c[i];
		moved += cur->off - x->offset;
		if (to_mem && cur->off < x->offset + x->length)
			dpusim_mem_zero(cur->mem, cur->off,
					x->offset + x->length - cur->off);
	}

	atomic64_inc(&rank->stats.ioctls);
	atomic64_add(x->nr_blocks, &rank->stats.blocks);
	atomic64_add(moved, to_mem ? &rank->stats.bytes_to_dpu :
				     &rank->stats.bytes_from_dpu);
}

/**
 * dpusim_xfer_pin_user - allocate the order and pin a transfer's user pages
 * @rank: the rank
 * @p: p->x, p->dpus and p->blocks set and checked, with DPUs
 *
 * Return: 0, then dpusim_xfer_unpin() releases @p; or -ENOMEM / -EFAULT
 * with nothing pinned or allocated.
 */
int dpusim_xfer_pin_user(struct dpusim_rank *rank, struct dpusim_xfer_pin *p)
{
	const struct dpusim_xfer *x = &p->x;
	unsigned long nr_pages;
	int ret;

	p->npinned = 0;
	p->pages = NULL;
	p->o.c = kmalloc_array(x->nr_dpus, sizeof(*p->o.c), GFP_KERNEL);
	p->o.act = kmalloc_array(x->nr_dpus, sizeof(*p->o.act), GFP_KERNEL);
	if (!p->o.c || !p->o.act) {
		ret = -ENOMEM;
		goto err;
	}
	dpusim_order_init(&p->o, rank, x, p->dpus, p->blocks);
	nr_pages = dpusim_xfer_nr_pages(&p->o);
	if (nr_pages) {
		p->pages = kvmalloc_array(nr_pages, sizeof(*p->pages),
					  GFP_KERNEL);
		if (!p->pages) {
			ret = -ENOMEM;
			goto err;
		}
	}
	dpusim_order_init(&p->o, rank, x, p->dpus, p->blocks);
	ret = dpusim_xfer_pin(x, &p->o, p->pages, &p->npinned);
	if (ret)
		goto err;
	return 0;

err:
	dpusim_xfer_unpin(p, false);
	return ret;
}

/**
 * dpusim_xfer_unpin - unpin and free what dpusim_xfer_pin_user() took
 * @p: the transfer
 * @dirty: the copy wrote to the user pages (from the DPU)
 */
void dpusim_xfer_unpin(struct dpusim_xfer_pin *p, bool dirty)
{
	if (p->x.flags & DPUSIM_XFER_FROM_DPU)
		unpin_user_pages_dirty_lock(p->pages, p->npinned, dirty);
	else
		unpin_user_pages(p->pages, p->npinned);
	p->npinned = 0;
	kvfree(p->pages);
	p->pages = NULL;
	kfree(p->o.act);
	p->o.act = NULL;
	kfree(p->o.c);
	p->o.c = NULL;
}

/**
 * dpusim_xfer_run - run a transfer whose lists are already in the kernel
 * @rank: the rank
 * @x: the header
 * @dpus: x->nr_dpus entries
 * @blocks: x->nr_blocks entries; their addresses are user addresses of
 *          the current process
 *
 * With DPUSIM_XFER_ASYNC the transfer is queued once checked, pinned and
 * populated (async.c); without it, queued transfers of the rank go first.
 *
 * Return: 0, or an errno of struct dpusim_xfer with nothing changed.
 */
int dpusim_xfer_run(struct dpusim_rank *rank, const struct dpusim_xfer *x,
		    const struct dpusim_xfer_dpu *dpus,
		    const struct dpusim_block *blocks)
{
	struct dpusim_xfer_pin p = {
		.x = *x,
		.dpus = dpus,
		.blocks = blocks,
	};
	int ret;

	ret = dpusim_xfer_check(rank, x, dpus, blocks);
	if (ret || !x->nr_dpus)
		return ret;
	if (x->flags & DPUSIM_XFER_ASYNC)
		return dpusim_async_submit(rank, x, dpus, blocks);

	ret = dpusim_xfer_pin_user(rank, &p);
	if (ret)
		return ret;
	ret = dpusim_async_wait_idle(rank, 0);
	if (ret)
		goto out_unpin;
	ret = mutex_lock_interruptible(&rank->xfer_lock);
	if (ret)
		goto out_unpin;
	ret = dpusim_xfer_populate(rank, &p);
	if (!ret)
		dpusim_xfer_copy(rank, &p);
	mutex_unlock(&rank->xfer_lock);

out_unpin:
	dpusim_xfer_unpin(&p, !ret);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_xfer_run);

/**
 * dpusim_xfer_user - DPUSIM_IOCTL_XFER after its header was copied in
 * @rank: the rank
 * @x: the header
 *
 * Return: 0 or the errno documented at struct dpusim_xfer.
 */
int dpusim_xfer_user(struct dpusim_rank *rank, const struct dpusim_xfer *x)
{
	struct dpusim_xfer_dpu *dpus;
	struct dpusim_block *blocks;
	int ret;

	/* Bound the counts before allocating anything for them. */
	ret = dpusim_xfer_check_header(rank, x);
	if (ret)
		return ret;

	dpus = vmemdup_user(u64_to_user_ptr(x->dpus),
			    array_size(x->nr_dpus, sizeof(*dpus)));
	if (IS_ERR(dpus))
		return PTR_ERR(dpus);
	blocks = vmemdup_user(u64_to_user_ptr(x->blocks),
			      array_size(x->nr_blocks, sizeof(*blocks)));
	if (IS_ERR(blocks)) {
		ret = PTR_ERR(blocks);
		goto out_dpus;
	}
	ret = dpusim_xfer_run(rank, x, dpus, blocks);
	kvfree(blocks);
out_dpus:
	kvfree(dpus);
	return ret;
}
