// SPDX-License-Identifier: GPL-2.0
/*
 * The transfer engine: moves the data of a checked transfer
 * (xfer_ioctl.c) between host blocks and the memory of several DPUs of a
 * rank in one call.
 *
 *   pin       every distinct user page the call touches, once
 *             (pin_user_pages_fast), charged to the caller's
 *             RLIMIT_MEMLOCK as pinned memory (mm->pinned_vm)
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
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "xfer.h"

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

/*
 * The memory a transfer names: a DPU's MRAM or WRAM, or the stream's the
 * caller resolved (which lives as long as the rank's ownership: a caller
 * or a queued job holds it).
 */
static struct dpusim_mem *dpusim_xfer_mem(const struct dpusim_xfer_pin *p,
					  u32 dpu)
{
	if (p->x.flags & DPUSIM_XFER_STREAM)
		return p->smem;
	return &p->rank->dpus[dpu].mem[p->x.flags & DPUSIM_XFER_WRAM ?
				       DPUSIM_WRAM : DPUSIM_MRAM];
}

/**
 * dpusim_xfer_dpu_bytes - bytes of memory a DPU's blocks cover
 * @x: the header
 * @blocks: the DPU's blocks
 * @nr: their count
 * @bytes: out, their sum, saturated, cut at the length
 *
 * Return: 0, -EFAULT (a block wraps the address space) or -EINVAL (the sum
 * is not the length, without DPUSIM_XFER_NO_LENGTH_CHECK).
 */
int dpusim_xfer_dpu_bytes(const struct dpusim_xfer *x,
			  const struct dpusim_block *blocks, u32 nr, u64 *bytes)
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

/*
 * The engine moves the pieces of a call round-robin over its DPUs: block 0
 * of every DPU, then block 1 of every DPU, ... as the hardware does (seed
 * 000).  Host blocks laid out in that order are adjacent, so their pages
 * are pinned in long runs, one pin_user_pages_fast() call per run.
 * struct dpusim_order (dpusim.h) holds one cursor per DPU of the call.
 */
static void dpusim_order_init(struct dpusim_order *o,
			      const struct dpusim_xfer_pin *p)
{
	const struct dpusim_xfer *x = &p->x;
	const struct dpusim_xfer_dpu *dpus = p->dpus;
	const struct dpusim_block *blocks = p->blocks;
	u32 i;

	for (i = 0; i < x->nr_dpus; blocks += dpus[i++].nr_blocks) {
		dpusim_walk_init(&o->c[i].w, blocks, dpus[i].nr_blocks,
				 x->length);
		o->c[i].off = x->offset;
		o->c[i].mem = dpusim_xfer_mem(p, dpus[i].dpu);
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

/*
 * Pages[] entries a call needs.  *@sorted: each piece starts in the page
 * the previous one ended in or past it, so the entries are distinct pages
 * in increasing order (the common case: blocks laid out in copy order).
 */
static unsigned long dpusim_xfer_nr_pages(struct dpusim_order *o, bool *sorted)
{
	unsigned long nr = 0;
	u64 addr, len, last = 1;

	*sorted = true;
	while (dpusim_order_next(o, &addr, &len)) {
		if (nr && (addr & PAGE_MASK) < last)
			*sorted = false;
		dpusim_piece_pages(&last, &nr, addr, len);
		cond_resched();
	}
	return nr;
}

/* Pin @n user pages from @start into @pages + *@npinned. */
static int dpusim_pin_run(u64 start, unsigned long n, unsigned int gup,
			  struct page **pages, unsigned long *npinned)
{
	int ret = pin_user_pages_fast(start, n, gup, pages + *npinned);

	if (ret < 0)
		return ret;
	*npinned += ret;
	return ret < n ? -EFAULT : 0;
}

static unsigned int dpusim_gup_flags(const struct dpusim_xfer *x)
{
	return x->flags & DPUSIM_XFER_FROM_DPU ? FOLL_WRITE : 0;
}

/*
 * Sorted pieces: pin them in order, one pin_user_pages_fast() call per
 * run of adjacent pages; the entries are the distinct pages.
 */
static int dpusim_xfer_pin_sorted(struct dpusim_xfer_pin *p)
{
	unsigned int gup = dpusim_gup_flags(&p->x);
	unsigned long nr = 0, prev, run_len = 0;
	u64 addr, len, start = 0, last = 1, run = 0;
	int ret;

	for (;;) {
		prev = nr;
		if (dpusim_order_next(&p->o, &addr, &len)) {
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
			ret = dpusim_pin_run(run, run_len, gup, p->upages,
					     &p->npinned);
			if (ret)
				return ret;
		}
		if (nr == prev)
			return 0;	/* no piece left */
		run = start;
		run_len = nr - prev;
	}
}

/*
 * Pieces that go back to earlier pages (blocks interleaved, repeated or in
 * any order): each distinct page is pinned once, however many pieces lie
 * in it.  An xarray indexed by user page number collects the distinct
 * pages, numbers them in address order (their entries of p->upages) and
 * then fills the copy-order entries of p->pages.
 */
static int dpusim_xfer_pin_scattered(struct dpusim_rank *rank,
				     struct dpusim_xfer_pin *p)
{
	unsigned int gup = dpusim_gup_flags(&p->x);
	unsigned long nr = 0, e, k = 0, n = 0, vpn, end, run = 0, run_len = 0;
	struct xarray distinct;
	u64 addr, len, last = 1;
	void *entry;
	int ret = 0;

	xa_init(&distinct);
	/* 1: the distinct pages */
	dpusim_order_init(&p->o, p);
	while (dpusim_order_next(&p->o, &addr, &len)) {
		end = (addr + len - 1) >> PAGE_SHIFT;
		for (vpn = addr >> PAGE_SHIFT; vpn <= end; vpn++) {
			ret = xa_insert(&distinct, vpn, xa_mk_value(0),
					GFP_KERNEL_ACCOUNT);
			if (ret == -EBUSY)
				continue;	/* seen before */
			if (ret)
				goto out;
			if (++n > DPUSIM_XFER_MAX_PAGES) {
				ret = -E2BIG;
				goto out;
			}
			cond_resched();
		}
		cond_resched();	/* also for pieces in pages seen before */
	}

	/* 2: number them in address order, pin runs of adjacent pages */
	ret = dpusim_charge(&p->charge, &rank->xfer.pinned_pages, n);
	if (ret)
		goto out;
	ret = -ENOMEM;
	p->upages = kvmalloc_array(n, sizeof(*p->upages), GFP_KERNEL_ACCOUNT);
	if (!p->upages)
		goto out;
	ret = 0;
	xa_for_each(&distinct, vpn, entry) {
		xa_store(&distinct, vpn, xa_mk_value(k++), GFP_KERNEL);
		if (run_len && vpn == run + run_len) {
			run_len++;
			continue;
		}
		if (run_len) {
			ret = dpusim_pin_run(run << PAGE_SHIFT, run_len, gup,
					     p->upages, &p->npinned);
			if (ret)
				goto out;
		}
		run = vpn;
		run_len = 1;
		cond_resched();
	}
	ret = dpusim_pin_run(run << PAGE_SHIFT, run_len, gup, p->upages,
			     &p->npinned);
	if (ret)
		goto out;

	/* 3: the copy order's entries */
	dpusim_order_init(&p->o, p);
	while (dpusim_order_next(&p->o, &addr, &len)) {
		e = dpusim_piece_pages(&last, &nr, addr, len);
		for (vpn = addr >> PAGE_SHIFT; e < nr; e++, vpn++)
			p->pages[e] = p->upages[xa_to_value(xa_load(&distinct,
								    vpn))];
		cond_resched();
	}
out:
	xa_destroy(&distinct);
	return ret;
}

/**
 * dpusim_xfer_populate - allocate the memory pages a transfer writes
 * @rank: the rank, its state_lock held
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

	lockdep_assert_held(&rank->state_lock);
	if (x->flags & DPUSIM_XFER_FROM_DPU)
		return 0;
	for (i = 0; i < x->nr_dpus; b += dpus[i++].nr_blocks) {
		dpusim_xfer_dpu_bytes(x, b, dpus[i].nr_blocks, &bytes);
		missing += dpusim_mem_missing(dpusim_xfer_mem(p, dpus[i].dpu),
					      x->offset, bytes);
	}
	if (!missing)
		return 0;
	ret = dpusim_budget_charge(rank->budget, missing);
	if (ret)
		return ret;

	undo.cap = missing;
	undo.entries = kvmalloc_array(missing, sizeof(*undo.entries),
				      GFP_KERNEL_ACCOUNT);
	if (!undo.entries) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	for (i = 0, b = blocks; i < x->nr_dpus; b += dpus[i++].nr_blocks) {
		dpusim_xfer_dpu_bytes(x, b, dpus[i].nr_blocks, &bytes);
		ret = dpusim_mem_populate(dpusim_xfer_mem(p, dpus[i].dpu),
					  x->offset, bytes, &undo);
		if (ret) {
			/* pages mapped meanwhile stay, with their charge */
			missing -= dpusim_mem_undo(&undo);
			goto err_free;
		}
	}
	/* The pages a mapping's page fault inserted meanwhile, it charged. */
	dpusim_budget_uncharge(rank->budget, missing - undo.nr);
	kvfree(undo.entries);
	return 0;

err_free:
	kvfree(undo.entries);
err_uncharge:
	dpusim_budget_uncharge(rank->budget, missing);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_xfer_populate);

/*
 * The memory page of the cursor's DPU that holds byte @off.  Small blocks
 * put many pieces in one page: the last lookup is kept.  Under state_lock,
 * which the copy holds, pages are never removed; a page fault of a
 * mapping may fill a hole meanwhile (a hole read as zeros is then as if
 * the copy ran first).
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

/* Copy up to @pieces pieces (U64_MAX: all) of the order, from where it is */
static void dpusim_copy_pieces(struct dpusim_order *o, struct page **pages,
			       u64 *last, unsigned long *nr, u64 pieces,
			       bool to_mem)
{
	struct dpusim_cursor *cur;
	unsigned long idx;
	u64 addr, len;

	while (pieces-- && (cur = dpusim_order_next(o, &addr, &len))) {
		idx = dpusim_piece_pages(last, nr, addr, len);
		dpusim_copy_piece(cur, pages + idx, addr, len, to_mem);
		cur->off += len;
	}
}

/*
 * A synchronous transfer of large blocks is copied by two CPUs, as a
 * rank's DMA engines move its DPUs' memories side by side.  The copy
 * order is cut into DPUSIM_XFER_CHUNKS chunks of about equal bytes, each
 * starting from a copy of the order's state at its first piece (one walk
 * of the order, nothing copied); the caller and a work item (on whichever
 * CPU the scheduler finds idle) take the chunks in turn until none is
 * left.  The pieces are disjoint bytes on both sides.  A work item may
 * start late, late enough that with halves the caller, done with its own,
 * would wait for most of the other; with chunks, a late work item takes
 * only what is left.  If it never started, the caller took every chunk
 * and cancels it: never slower than one CPU but for the walk.
 */
#define DPUSIM_XFER_SPLIT_BYTES	(512 * 1024)
#define DPUSIM_XFER_SPLIT_AVG	4096	/* bytes per block, at least */

struct dpusim_chunk {
	struct dpusim_order o;	/* the order's state at the chunk's start */
	u64 last;		/* dpusim_piece_pages()'s state there */
	unsigned long nr;
	u64 pieces;		/* pieces in the chunk (the last: the rest) */
};

struct dpusim_copy_part {
	struct work_struct work;
	struct dpusim_chunk chunk[DPUSIM_XFER_CHUNKS];
	atomic_t next;		/* the next chunk to take */
	struct page **pages;
	bool to_mem;
};

/* Take chunks and copy them until none is left (caller and work item) */
static void dpusim_copy_chunks(struct dpusim_copy_part *part)
{
	struct dpusim_chunk *ch;
	int k;

	while ((k = atomic_inc_return(&part->next) - 1) < DPUSIM_XFER_CHUNKS) {
		ch = &part->chunk[k];
		dpusim_copy_pieces(&ch->o, part->pages, &ch->last, &ch->nr,
				   ch->pieces, part->to_mem);
	}
}

static void dpusim_copy_part_fn(struct work_struct *work)
{
	dpusim_copy_chunks(container_of(work, struct dpusim_copy_part, work));
}

static bool dpusim_xfer_split(const struct dpusim_xfer_pin *p)
{
	return p->bytes >= DPUSIM_XFER_SPLIT_BYTES && p->x.nr_blocks > 1 &&
	       p->bytes / p->x.nr_blocks >= DPUSIM_XFER_SPLIT_AVG &&
	       num_online_cpus() > 1;
}

/* Chunk @k's state: a copy of @o's, in the @k-th copy of its arrays */
static void dpusim_chunk_start(struct dpusim_copy_part *part, u32 k,
			       const struct dpusim_order *o, u32 nr_dpus,
			       u64 last, unsigned long nr)
{
	struct dpusim_chunk *ch = &part->chunk[k];

	ch->o = *o;
	ch->o.c = o->c + (size_t)k * nr_dpus;
	ch->o.act = o->act + (size_t)k * nr_dpus;
	memcpy(ch->o.c, o->c, nr_dpus * sizeof(*o->c));
	memcpy(ch->o.act, o->act, nr_dpus * sizeof(*o->act));
	ch->last = last;
	ch->nr = nr;
	ch->pieces = U64_MAX;
}

/*
 * The copy on two CPUs.  Returns the cursors at the end: the last
 * chunk's, which copies the pieces left after every other chunk's.
 */
static struct dpusim_cursor *dpusim_xfer_copy_two(struct dpusim_rank *rank,
						  struct dpusim_xfer_pin *p,
						  struct dpusim_copy_part *part)
{
	const struct dpusim_xfer *x = &p->x;
	struct dpusim_order *o = &p->o;
	u64 addr, len, last = 1, done = 0, n = 0, first[DPUSIM_XFER_CHUNKS];
	struct dpusim_cursor *cur;
	unsigned long nr = 0;
	u32 k = 1;

	/* chunk k starts at the first piece at or past k / CHUNKS of the bytes */
	dpusim_order_init(o, p);
	first[0] = 0;
	for (;;) {
		while (k < DPUSIM_XFER_CHUNKS &&
		       done >= div_u64(p->bytes * k, DPUSIM_XFER_CHUNKS)) {
			dpusim_chunk_start(part, k, o, x->nr_dpus, last, nr);
			first[k++] = n;
		}
		cur = dpusim_order_next(o, &addr, &len);
		if (!cur)
			break;
		dpusim_piece_pages(&last, &nr, addr, len);
		cur->off += len;
		done += len;
		n++;
	}
	/* boundaries past the end: empty chunks at the end state */
	while (k < DPUSIM_XFER_CHUNKS) {
		dpusim_chunk_start(part, k, o, x->nr_dpus, last, nr);
		first[k++] = n;
	}
	for (k = 0; k + 1 < DPUSIM_XFER_CHUNKS; k++)
		part->chunk[k].pieces = first[k + 1] - first[k];
	/* chunk 0 from the start, in the first copy of the arrays */
	dpusim_order_init(o, p);
	part->chunk[0].o = *o;
	part->chunk[0].last = 1;
	part->chunk[0].nr = 0;
	part->pages = p->pages;
	part->to_mem = !(x->flags & DPUSIM_XFER_FROM_DPU);
	atomic_set(&part->next, 0);
	INIT_WORK_ONSTACK(&part->work, dpusim_copy_part_fn);
	queue_work(system_unbound_wq, &part->work);
	dpusim_copy_chunks(part);
	/* waits for the work if it runs; if it never did, nothing is left */
	cancel_work_sync(&part->work);
	destroy_work_on_stack(&part->work);
	return part->chunk[DPUSIM_XFER_CHUNKS - 1].o.c;
}

/* After the copy: zeros past the blocks (to the DPUs), the counters */
static void dpusim_xfer_copy_end(struct dpusim_rank *rank,
				 const struct dpusim_xfer_pin *p,
				 const struct dpusim_cursor *c)
{
	const struct dpusim_xfer *x = &p->x;
	bool to_mem = !(x->flags & DPUSIM_XFER_FROM_DPU);
	u64 moved = 0;
	u32 i;

	for (i = 0; i < x->nr_dpus; i++) {
		moved += c[i].off - x->offset;
		if (to_mem && c[i].off < x->offset + x->length)
			dpusim_mem_zero(c[i].mem, c[i].off,
					x->offset + x->length - c[i].off);
	}

	atomic64_inc(&rank->stats.ioctls);
	atomic64_add(x->nr_blocks, &rank->stats.blocks);
	atomic64_add(moved, to_mem ? &rank->stats.bytes_to_dpu :
				     &rank->stats.bytes_from_dpu);
}

/*
 * An asynchronous copy shares its first piece (a stream move's token, a
 * large block) with the DPUSIM_IOCTL_SYNC that waits for it (async.c):
 * the piece is cut into chunks of DPUSIM_XFER_SHARE_CHUNK bytes, which
 * the copier and the waiters take in turn until none is left, as the
 * synchronous copy on two CPUs does with its work item.  A copy on the
 * other CPU may run much slower than alone while the consumer works
 * beside it, so a consumer done with its work could wait for most of it;
 * taking the chunks left, it waits no longer than a copy of its own would
 * take, so a preload is not slower than no preload.
 */
#define DPUSIM_XFER_SHARE_CHUNK	(16 * 1024)
#define DPUSIM_XFER_SHARE_MIN	(4 * DPUSIM_XFER_SHARE_CHUNK)

/**
 * dpusim_xfer_share_begin - start a copy whose first piece may be shared
 * @rank: the rank, its state_lock held
 * @p: the pinned, populated transfer (one copy order)
 * @sh: filled in: the first piece, no chunk taken
 *
 * Then dpusim_xfer_share_copy() (and any helper's, while @sh is shared),
 * then dpusim_xfer_share_end() once no helper copies any more.
 *
 * Return: whether sharing the piece is worth it (large enough, another
 * CPU online); the copy is the same either way.
 */
bool dpusim_xfer_share_begin(struct dpusim_rank *rank, struct dpusim_xfer_pin *p,
			     struct dpusim_xfer_share *sh)
{
	struct dpusim_order *o = &p->o;
	struct dpusim_cursor *cur;
	u64 addr = 0, len = 0;

	lockdep_assert_held(&rank->state_lock);
	memset(sh, 0, sizeof(*sh));
	sh->last = 1;
	sh->to_mem = !(p->x.flags & DPUSIM_XFER_FROM_DPU);
	dpusim_order_init(o, p);
	cur = dpusim_order_next(o, &addr, &len);
	if (!cur)
		return false;
	sh->pages = p->pages + dpusim_piece_pages(&sh->last, &sh->nr, addr, len);
	sh->cur = *cur;
	sh->orig = cur;
	sh->addr = addr;
	sh->len = len;
	return len >= DPUSIM_XFER_SHARE_MIN && num_online_cpus() > 1;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_xfer_share_begin);

/**
 * dpusim_xfer_share_copy_one - take the next chunk of the piece and copy it
 * @sh: the piece
 *
 * Return: false if no chunk was left.
 */
bool dpusim_xfer_share_copy_one(struct dpusim_xfer_share *sh)
{
	u64 start = (u64)atomic_inc_return(&sh->next) - 1;
	struct dpusim_cursor c;
	u64 addr;

	if (start >= div_u64(sh->len + DPUSIM_XFER_SHARE_CHUNK - 1,
			     DPUSIM_XFER_SHARE_CHUNK))
		return false;
	start *= DPUSIM_XFER_SHARE_CHUNK;
	c = sh->cur;
	c.off += start;
	addr = sh->addr + start;
	dpusim_copy_piece(&c, sh->pages + ((addr >> PAGE_SHIFT) - (sh->addr >> PAGE_SHIFT)),
			  addr, min_t(u64, DPUSIM_XFER_SHARE_CHUNK, sh->len - start),
			  sh->to_mem);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_xfer_share_copy_one);

/**
 * dpusim_xfer_share_copy - copy chunks of the piece until none is left
 * @sh: the piece
 */
void dpusim_xfer_share_copy(struct dpusim_xfer_share *sh)
{
	while (dpusim_xfer_share_copy_one(sh))
		;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_xfer_share_copy);

/**
 * dpusim_xfer_share_end - the rest of the copy, after the shared piece
 * @rank: the rank, its state_lock held since dpusim_xfer_share_begin()
 * @p: the transfer
 * @sh: the piece: every chunk copied, no helper copying any more
 */
void dpusim_xfer_share_end(struct dpusim_rank *rank, struct dpusim_xfer_pin *p,
			   struct dpusim_xfer_share *sh)
{
	lockdep_assert_held(&rank->state_lock);
	if (sh->orig) {
		sh->orig->off += sh->len;
		dpusim_copy_pieces(&p->o, p->pages, &sh->last, &sh->nr, U64_MAX,
				   sh->to_mem);
	}
	dpusim_xfer_copy_end(rank, p, p->o.c);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_xfer_share_end);

/* A copy on this CPU: an asynchronous copy's walk, shared with nobody */
static void dpusim_xfer_copy_one(struct dpusim_rank *rank,
				 struct dpusim_xfer_pin *p)
{
	struct dpusim_xfer_share sh;

	dpusim_xfer_share_begin(rank, p, &sh);
	dpusim_xfer_share_copy(&sh);
	dpusim_xfer_share_end(rank, p, &sh);
}

/**
 * dpusim_xfer_copy - move the bytes of a pinned, populated transfer
 * @rank: the rank, its state_lock held
 * @p: the transfer; on two CPUs if dpusim_xfer_pin_user() chose so
 *     (@p->nr_orders)
 *
 * Cannot fail.
 */
void dpusim_xfer_copy(struct dpusim_rank *rank, struct dpusim_xfer_pin *p)
{
	struct dpusim_copy_part part;

	lockdep_assert_held(&rank->state_lock);
	if (p->nr_orders > 1)
		dpusim_xfer_copy_end(rank, p, dpusim_xfer_copy_two(rank, p, &part));
	else
		dpusim_xfer_copy_one(rank, p);
}

/*
 * DPUSIM_XFER_STREAM_BUF: the pieces' pages are the registered buffer's
 * (@p->sbuf), looked up by offset (pinned at the open, nothing to pin or
 * charge); the move holds a reference to the buffer until
 * dpusim_xfer_unpin().  When
 * the pieces are the buffer's pages in order, one after the other (a
 * token in one block), @p->pages is a window of the buffer's own array.
 */
static int dpusim_xfer_pages_stream_buf(struct dpusim_xfer_pin *p,
					unsigned long nr_pages)
{
	struct dpusim_stream_buf *b = p->sbuf;
	unsigned long nr = 0, e, first = ULONG_MAX;
	u64 addr, len, last = 1, off;
	bool in_order = true;

	if (!b)
		return -EINVAL;
	dpusim_order_init(&p->o, p);
	while (dpusim_order_next(&p->o, &addr, &len)) {
		/* blocks lie inside the buffer: offsets, not addresses */
		if (addr >= b->len || len > b->len - addr)
			return -EINVAL;
		e = dpusim_piece_pages(&last, &nr, addr, len);
		if (first == ULONG_MAX)
			first = addr >> PAGE_SHIFT;
		in_order &= (addr >> PAGE_SHIFT) == first + e;
	}
	if (in_order) {
		p->pages = b->pages + first;
		p->borrowed = true;
		return 0;
	}
	p->pages = kvmalloc_array(nr_pages, sizeof(*p->pages),
				  GFP_KERNEL_ACCOUNT);
	if (!p->pages)
		return -ENOMEM;
	nr = 0;
	last = 1;
	dpusim_order_init(&p->o, p);
	while (dpusim_order_next(&p->o, &addr, &len)) {
		e = dpusim_piece_pages(&last, &nr, addr, len);
		for (off = addr & PAGE_MASK; e < nr; e++, off += PAGE_SIZE)
			p->pages[e] = dpusim_stream_buf_page(b, off);
	}
	return 0;
}

/**
 * dpusim_xfer_pin_user - allocate the order and pin a transfer's user pages
 * @rank: the rank, its state_lock held
 * @p: p->x, p->dpus and p->blocks set and checked, with DPUs; p->smem
 *     and p->sbuf as struct dpusim_xfer_pin says
 *
 * Each distinct page is pinned once and charged to the caller's
 * RLIMIT_MEMLOCK.  Called under state_lock (before mmap_lock: dpusim.h),
 * so that a call waiting for the rank holds no pages.
 *
 * Return: 0, then dpusim_xfer_unpin() releases @p; or -ENOMEM, -EFAULT,
 * -E2BIG (over DPUSIM_XFER_MAX_PAGES) with nothing pinned or allocated.
 */
int dpusim_xfer_pin_user(struct dpusim_rank *rank, struct dpusim_xfer_pin *p)
{
	const struct dpusim_xfer *x = &p->x;
	unsigned long nr_pages;
	bool sorted;
	int ret;

	lockdep_assert_held(&rank->state_lock);
	p->rank = rank;
	p->npinned = 0;
	p->pages = NULL;
	p->upages = NULL;
	p->charge = (struct dpusim_charge){};
	p->borrowed = false;
	/*
	 * A copy of the arrays per chunk of a copy on two CPUs: a large
	 * synchronous one (an asynchronous one leaves the other CPU to the
	 * caller), in the rank's own arrays (under state_lock from here to
	 * dpusim_xfer_unpin()), so that the call allocates none.
	 */
	p->nr_orders = !(x->flags & DPUSIM_XFER_ASYNC) && dpusim_xfer_split(p) ?
		       DPUSIM_XFER_CHUNKS : 1;
	if (p->nr_orders > 1) {
		p->o.c = rank->xfer.split_c;
		p->o.act = rank->xfer.split_act;
	} else if (x->nr_dpus == 1) {
		p->o.c = &p->c1;
		p->o.act = &p->act1;
	} else {
		p->o.c = kvmalloc_array((size_t)p->nr_orders * x->nr_dpus,
					sizeof(*p->o.c), GFP_KERNEL_ACCOUNT);
		p->o.act = kvmalloc_array((size_t)p->nr_orders * x->nr_dpus,
					  sizeof(*p->o.act), GFP_KERNEL_ACCOUNT);
		if (!p->o.c || !p->o.act) {
			ret = -ENOMEM;
			goto err;
		}
	}
	dpusim_order_init(&p->o, p);
	nr_pages = dpusim_xfer_nr_pages(&p->o, &sorted);
	if (!nr_pages)
		return 0;
	if (sorted && nr_pages > DPUSIM_XFER_MAX_PAGES) {
		ret = -E2BIG;
		goto err;
	}
	if (x->flags & DPUSIM_XFER_STREAM_BUF) {
		ret = dpusim_xfer_pages_stream_buf(p, nr_pages);
		if (ret)
			goto err;
		return 0;
	}
	p->pages = kvmalloc_array(nr_pages, sizeof(*p->pages),
				  GFP_KERNEL_ACCOUNT);
	if (!p->pages) {
		ret = -ENOMEM;
		goto err;
	}
	if (sorted) {
		ret = dpusim_charge(&p->charge, &rank->xfer.pinned_pages,
				    nr_pages);
		if (ret)
			goto err;
		p->upages = p->pages;
		dpusim_order_init(&p->o, p);
		ret = dpusim_xfer_pin_sorted(p);
	} else {
		/* charged once the distinct pages are counted */
		ret = dpusim_xfer_pin_scattered(rank, p);
	}
	if (ret)
		goto err;
	return 0;

err:
	dpusim_xfer_unpin(p, false);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_xfer_pin_user);

/**
 * dpusim_xfer_unpin - unpin, uncharge and free what dpusim_xfer_pin_user()
 * took
 * @p: the transfer
 * @dirty: the copy wrote to the user pages (from the DPU)
 */
void dpusim_xfer_unpin(struct dpusim_xfer_pin *p, bool dirty)
{
	dpusim_stream_buf_put(p->sbuf);
	p->sbuf = NULL;
	if (p->x.flags & DPUSIM_XFER_FROM_DPU)
		unpin_user_pages_dirty_lock(p->upages, p->npinned, dirty);
	else
		unpin_user_pages(p->upages, p->npinned);
	p->npinned = 0;
	dpusim_uncharge(&p->charge);
	if (p->upages != p->pages)
		kvfree(p->upages);
	p->upages = NULL;
	if (!p->borrowed)
		kvfree(p->pages);
	p->pages = NULL;
	p->borrowed = false;
	/* its own arrays: one order, not inline (two CPUs: the rank's) */
	if (p->nr_orders == 1 && p->o.c != &p->c1) {
		kvfree(p->o.act);
		kvfree(p->o.c);
	}
	p->o.act = NULL;
	p->o.c = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_xfer_unpin);

