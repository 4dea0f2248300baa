// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated memory of one DPU (its MRAM, and its WRAM): sparse and
 * page based.  A page is allocated the first time something is written to
 * it; a page never written reads as zeros.  Every resident page is charged
 * to a budget (the module's: parameter mram_budget), so that simulated
 * gigabytes cost only what is really written.
 *
 * The pages live in an xarray indexed by page number, so that the fault
 * handler of a mapping (mmap.c) maps the very pages the transfer engine
 * copies into.  Transfers serialise among themselves (the rank's
 * state_lock); a page fault inserts pages without that lock (it runs under
 * mmap_lock, which the transfers take under state_lock to pin), so every
 * insertion, removal and count change is done under the xarray's own
 * lock, and a mapped page holds a reference of its own: the pages are
 * freed with put_page().  Lookups are RCU-safe.
 */
#include <kunit/visibility.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "dpusim.h"

/*
 * The budget follows the machine: 0 when the module is loaded (the
 * default) becomes half of its RAM, at least DPUSIM_BUDGET_MIN
 * (dpusim_budget_default()).  Resident simulated memory is kernel memory
 * that is neither swapped nor reclaimed, and a host program usually
 * keeps its own copy of what it moves to the DPUs: half leaves the other
 * half for that copy and the rest of the system.  The floor is the fixed
 * default of before, so that a machine of 2 GiB (which its kernel leaves
 * with less) loses nothing; that 1 GiB was far below what PrIM's
 * benchmarks keep resident with their default inputs (up to 3.75 GiB on one
 * rank).
 */
#define DPUSIM_BUDGET_MIN	SZ_1G

struct dpusim_budget dpusim_budget = {
	.pages = ATOMIC_LONG_INIT(0),
	.limit = 0,
};
module_param_named(mram_budget, dpusim_budget.limit, ulong, 0644);
MODULE_PARM_DESC(mram_budget,
		 "Bytes of simulated memory (all ranks) that may be resident; 0 at load (the default): half of the RAM, at least 1 GiB");

/**
 * dpusim_budget_default - give an unset budget its default, at load
 * @b: the budget
 *
 * A limit of 0 becomes half of the RAM (totalram_pages()), at least
 * DPUSIM_BUDGET_MIN; a limit set by the user stays.  Later writes to the
 * parameter are taken as they are (0 then allows nothing).
 */
void dpusim_budget_default(struct dpusim_budget *b)
{
	if (!b->limit)
		b->limit = max_t(unsigned long, (totalram_pages() / 2) << PAGE_SHIFT,
				 DPUSIM_BUDGET_MIN);
}

/**
 * dpusim_budget_charge - reserve @nr pages of the budget
 * @b: the budget
 * @nr: pages
 *
 * The count only moves if the new value fits: a charge that fails never
 * shows, even for a moment, so it cannot make a smaller concurrent charge
 * (another rank's) fail.
 *
 * Return: 0, or -ENOSPC (and nothing reserved) if the limit would be passed.
 */
int dpusim_budget_charge(struct dpusim_budget *b, unsigned long nr)
{
	unsigned long limit = READ_ONCE(b->limit) >> PAGE_SHIFT;
	long old = atomic_long_read(&b->pages);

	if (!nr)
		return 0;
	do {
		if (nr > limit || old > limit - nr)
			return -ENOSPC;
	} while (!atomic_long_try_cmpxchg(&b->pages, &old, old + nr));
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_budget_charge);

void dpusim_budget_uncharge(struct dpusim_budget *b, unsigned long nr)
{
	atomic_long_sub(nr, &b->pages);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_budget_uncharge);

void dpusim_mem_init(struct dpusim_mem *mem, u64 size, struct dpusim_budget *b)
{
	xa_init(&mem->pages);
	mem->size = size;
	mem->nr_pages = 0;
	mem->budget = b;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_mem_init);

/**
 * dpusim_mem_free - free every resident page and return it to the budget
 * @mem: the memory; it reads as zeros afterwards
 */
void dpusim_mem_free(struct dpusim_mem *mem)
{
	struct page *page;
	unsigned long idx;

	xa_for_each(&mem->pages, idx, page) {
		put_page(page);
		cond_resched();
	}
	xa_destroy(&mem->pages);
	dpusim_budget_uncharge(mem->budget, mem->nr_pages);
	WRITE_ONCE(mem->nr_pages, 0);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_mem_free);

static pgoff_t dpusim_first_page(u64 off)
{
	return off >> PAGE_SHIFT;
}

static pgoff_t dpusim_end_page(u64 off, u64 len)
{
	return (off + len + PAGE_SIZE - 1) >> PAGE_SHIFT;
}

/**
 * dpusim_mem_missing - pages of [@off, @off + @len) not yet resident
 * @mem: the memory
 * @off: byte offset, @off + @len within the memory
 * @len: bytes
 *
 * Return: the number of pages a write of the range would allocate.
 */
unsigned long dpusim_mem_missing(struct dpusim_mem *mem, u64 off, u64 len)
{
	pgoff_t first = dpusim_first_page(off), end = dpusim_end_page(off, len);
	XA_STATE(xas, &mem->pages, first);
	unsigned long present = 0;
	struct page *page;

	if (!len)
		return 0;
	/* One walk over the present entries, not a lookup per page. */
	rcu_read_lock();
	xas_for_each(&xas, page, end - 1) {
		if (xas_retry(&xas, page))
			continue;
		if (!(++present % 4096) && need_resched()) {
			xas_pause(&xas);
			rcu_read_unlock();
			cond_resched();
			rcu_read_lock();
		}
	}
	rcu_read_unlock();
	return end - first - present;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_mem_missing);

/*
 * Insert @page at @idx unless a page is there already (-EBUSY: a page
 * fault was first), counting it.  With @get, a reference for the caller
 * is taken on the page found or inserted, under the lock, so that
 * dpusim_mem_undo() sees it.  Returns the page at @idx, or an ERR_PTR.
 */
static struct page *dpusim_mem_insert(struct dpusim_mem *mem, pgoff_t idx,
				      struct page *page, bool get)
{
	struct page *ret;
	int err;

	xa_lock(&mem->pages);
	err = __xa_insert(&mem->pages, idx, page, GFP_KERNEL_ACCOUNT);
	if (!err) {
		WRITE_ONCE(mem->nr_pages, mem->nr_pages + 1);
		ret = page;
	} else if (err == -EBUSY) {
		ret = xa_load(&mem->pages, idx);
	} else {
		ret = ERR_PTR(err);
	}
	if (get && !IS_ERR(ret))
		get_page(ret);
	xa_unlock(&mem->pages);
	return ret;
}

/**
 * dpusim_mem_get_page - the page @idx of a memory, allocated if missing,
 * with a reference for the caller (a mapping's page fault)
 * @mem: the memory
 * @idx: page index, within the memory
 *
 * A missing page is charged to the budget here.
 *
 * Return: the page, or ERR_PTR(-ENOSPC) (budget exhausted) or
 * ERR_PTR(-ENOMEM).
 */
struct page *dpusim_mem_get_page(struct dpusim_mem *mem, pgoff_t idx)
{
	struct page *page, *found;

	xa_lock(&mem->pages);
	page = xa_load(&mem->pages, idx);
	if (page)
		get_page(page);
	xa_unlock(&mem->pages);
	if (page)
		return page;

	if (dpusim_budget_charge(mem->budget, 1))
		return ERR_PTR(-ENOSPC);
	page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!page) {
		dpusim_budget_uncharge(mem->budget, 1);
		return ERR_PTR(-ENOMEM);
	}
	found = dpusim_mem_insert(mem, idx, page, true);
	if (found != page) {
		/* another fault or a transfer was first, or no memory */
		__free_page(page);
		dpusim_budget_uncharge(mem->budget, 1);
	}
	return found;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_mem_get_page);

/**
 * dpusim_mem_populate - allocate the missing pages of a range
 * @mem: the memory
 * @off: byte offset
 * @len: bytes
 * @undo: records each page inserted, for dpusim_mem_undo(); its @cap must
 *        cover the pages dpusim_mem_missing() counted
 *
 * The pages must have been charged to the budget by the caller.  A page
 * fault of a mapping may insert pages of the range meanwhile (charging
 * them itself): @undo->nr says how many pages this call inserted.
 *
 * Return: 0 or -ENOMEM.
 */
int dpusim_mem_populate(struct dpusim_mem *mem, u64 off, u64 len,
			struct dpusim_mem_undo *undo)
{
	pgoff_t idx, end = dpusim_end_page(off, len);
	struct page *page, *found;

	if (!len)
		return 0;
	for (idx = dpusim_first_page(off); idx < end; idx++) {
		if (xa_load(&mem->pages, idx))
			continue;
		if (WARN_ON_ONCE(undo->nr >= undo->cap))
			return -EINVAL;
		page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!page)
			return -ENOMEM;
		found = dpusim_mem_insert(mem, idx, page, false);
		if (found != page) {
			__free_page(page);
			if (IS_ERR(found))
				return PTR_ERR(found);
			continue;	/* a page fault inserted it */
		}
		undo->entries[undo->nr].mem = mem;
		undo->entries[undo->nr].idx = idx;
		undo->nr++;
		cond_resched();
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_mem_populate);

/**
 * dpusim_mem_populate_charged - allocate the missing pages of a range,
 * charged to the memory's budget
 * @mem: the memory, not a running DPU's (dpusim_mem_undo() may remove a
 *       page a worker's window shows: use dpusim_mem_fill() there)
 * @off: byte offset
 * @len: bytes
 *
 * A page fault of a mapping may insert pages of the range meanwhile; it
 * charges them itself.  On an error the pages this call inserted go again,
 * but for those a mapping mapped meanwhile, which stay with their charge.
 *
 * Return: 0, -ENOSPC (the budget) or -ENOMEM, with nothing else left.
 */
int dpusim_mem_populate_charged(struct dpusim_mem *mem, u64 off, u64 len)
{
	unsigned long missing = dpusim_mem_missing(mem, off, len);
	struct dpusim_mem_undo undo = {};
	int ret;

	if (!missing)
		return 0;
	ret = dpusim_budget_charge(mem->budget, missing);
	if (ret)
		return ret;
	undo.cap = missing;
	undo.entries = kvmalloc_array(missing, sizeof(*undo.entries),
				      GFP_KERNEL_ACCOUNT);
	if (!undo.entries) {
		dpusim_budget_uncharge(mem->budget, missing);
		return -ENOMEM;
	}
	ret = dpusim_mem_populate(mem, off, len, &undo);
	if (ret)
		missing -= dpusim_mem_undo(&undo);	/* the pages kept */
	else
		missing -= undo.nr;	/* the pages this call inserted */
	dpusim_budget_uncharge(mem->budget, missing);
	kvfree(undo.entries);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_mem_populate_charged);

/**
 * dpusim_mem_undo - remove the pages a failed call inserted
 * @undo: the record filled by dpusim_mem_populate()
 *
 * The pages go back to being holes, except those a mapping has mapped
 * meanwhile (a reference besides the memory's own): they stay resident.
 * The budget charge of the removed pages stays with the caller, who
 * charged it; that of the pages kept goes with them.
 *
 * Return: the number of pages kept.
 */
unsigned long dpusim_mem_undo(struct dpusim_mem_undo *undo)
{
	unsigned long kept = 0;
	struct dpusim_mem *mem;
	struct page *page;

	while (undo->nr) {
		undo->nr--;
		mem = undo->entries[undo->nr].mem;
		xa_lock(&mem->pages);
		page = xa_load(&mem->pages, undo->entries[undo->nr].idx);
		if (page_count(page) > 1) {
			page = NULL;
			kept++;
		} else {
			__xa_erase(&mem->pages, undo->entries[undo->nr].idx);
			WRITE_ONCE(mem->nr_pages, mem->nr_pages - 1);
		}
		xa_unlock(&mem->pages);
		if (page)
			put_page(page);
	}
	return kept;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_mem_undo);

/**
 * dpusim_mem_zero - write zeros to [@off, @off + @len)
 * @mem: the memory, its writers serialised by the caller
 * @off: byte offset
 * @len: bytes
 *
 * Holes already read as zeros and stay holes: nothing is allocated, and
 * only the resident pages of the range are visited, so the cost is that
 * of the pages written, however long the range.
 */
void dpusim_mem_zero(struct dpusim_mem *mem, u64 off, u64 len)
{
	pgoff_t idx = off >> PAGE_SHIFT, last;
	u64 end = off + len, pstart, from, to;
	struct page *page;

	if (!len)
		return;
	last = (end - 1) >> PAGE_SHIFT;
	for (page = xa_find(&mem->pages, &idx, last, XA_PRESENT); page;
	     page = xa_find_after(&mem->pages, &idx, last, XA_PRESENT)) {
		pstart = (u64)idx << PAGE_SHIFT;
		from = max(off, pstart);
		to = min(end, pstart + PAGE_SIZE);
		memzero_page(page, from - pstart, to - from);
		cond_resched();
	}
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_mem_zero);

/*
 * The copy of the transfer engine: four words at a time, then words, then
 * bytes.  The kernel's memcpy() is "rep movsb" on CPUs with ERMS/FSRM and
 * copy_page() "rep movsq", which an emulator may run a byte or a word at
 * a time; a loop of plain moves is as fast everywhere (tools/bench/README
 * has the figures).  Kbuild keeps GCC from turning the loops back into a
 * memcpy() call.
 */
static void dpusim_copy(void *dst, const void *src, size_t len)
{
	for (; len >= 4 * sizeof(u64); len -= 4 * sizeof(u64)) {
		u64 a = get_unaligned((const u64 *)src);
		u64 b = get_unaligned((const u64 *)src + 1);
		u64 c = get_unaligned((const u64 *)src + 2);
		u64 d = get_unaligned((const u64 *)src + 3);

		put_unaligned(a, (u64 *)dst);
		put_unaligned(b, (u64 *)dst + 1);
		put_unaligned(c, (u64 *)dst + 2);
		put_unaligned(d, (u64 *)dst + 3);
		dst += 4 * sizeof(u64);
		src += 4 * sizeof(u64);
	}
	for (; len >= sizeof(u64); len -= sizeof(u64)) {
		put_unaligned(get_unaligned((const u64 *)src), (u64 *)dst);
		dst += sizeof(u64);
		src += sizeof(u64);
	}
	for (; len; len--)
		*(u8 *)dst++ = *(const u8 *)src++;
}

/**
 * dpusim_mem_page - the resident page holding byte @off, or NULL (a hole)
 * @mem: the memory
 * @off: byte offset
 */
struct page *dpusim_mem_page(struct dpusim_mem *mem, u64 off)
{
	return xa_load(&mem->pages, off >> PAGE_SHIFT);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_mem_page);

/**
 * dpusim_page_copy - move bytes between a mapped buffer and a memory page
 * @page: the page of the memory holding @off, NULL for a hole
 * @off: byte offset in the memory
 * @buf: kernel address of the other side
 * @len: bytes; [@off, @off + @len) must not cross a page of the memory
 * @to_mem: direction; writing needs the page populated
 *
 * A hole reads as zeros.
 */
void dpusim_page_copy(struct page *page, u64 off, void *buf, size_t len,
		      bool to_mem)
{
	void *m;

	if (!page) {
		if (!WARN_ON_ONCE(to_mem))
			memset(buf, 0, len);
		return;
	}
	m = kmap_local_page(page);
	if (to_mem)
		dpusim_copy(m + offset_in_page(off), buf, len);
	else
		dpusim_copy(buf, m + offset_in_page(off), len);
	kunmap_local(m);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_page_copy);

/**
 * dpusim_mem_copy_page - move up to one page between a mapped buffer and
 * the memory
 * @mem: the memory
 * @off: byte offset in @mem
 * @buf: kernel address of the other side
 * @len: bytes; [@off, @off + @len) must not cross a page of @mem
 * @to_mem: direction; writing needs the page populated
 */
void dpusim_mem_copy_page(struct dpusim_mem *mem, u64 off, void *buf,
			  size_t len, bool to_mem)
{
	dpusim_page_copy(dpusim_mem_page(mem, off), off, buf, len, to_mem);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_mem_copy_page);

/**
 * dpusim_mem_fill - allocate the missing pages of a range, for good
 * @mem: the memory
 * @off: byte offset
 * @len: bytes, within the memory
 *
 * Each page allocated is charged to the budget, as a mapping's fault
 * does, and none is removed again if a later one fails: for the memory of
 * a running DPU, whose pages its worker's window may show with no
 * reference of its own (mmap.c).
 *
 * Return: 0, -ENOSPC (the budget) or -ENOMEM.
 */
int dpusim_mem_fill(struct dpusim_mem *mem, u64 off, u64 len)
{
	pgoff_t idx, end = dpusim_end_page(off, len);
	struct page *page;

	if (!len)
		return 0;
	for (idx = dpusim_first_page(off); idx < end; idx++) {
		if (xa_load(&mem->pages, idx))
			continue;
		page = dpusim_mem_get_page(mem, idx);
		if (IS_ERR(page))
			return PTR_ERR(page);
		put_page(page);	/* the memory keeps its own reference */
		cond_resched();
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_mem_fill);

/**
 * dpusim_mem_copy_mem - copy between two memories
 * @dst: the memory written, its pages of the range resident
 * @doff: byte offset in @dst
 * @src: the memory read (a hole reads as zeros)
 * @soff: byte offset in @src
 * @len: bytes
 */
void dpusim_mem_copy_mem(struct dpusim_mem *dst, u64 doff,
			 struct dpusim_mem *src, u64 soff, u64 len)
{
	while (len) {
		size_t n = min_t(u64, len,
				 PAGE_SIZE - max(offset_in_page(doff),
						 offset_in_page(soff)));
		struct page *dp = dpusim_mem_page(dst, doff);
		void *d;

		if (WARN_ON_ONCE(!dp))
			return;
		d = kmap_local_page(dp);
		dpusim_mem_copy_page(src, soff, d + offset_in_page(doff), n,
				     false);
		kunmap_local(d);
		doff += n;
		soff += n;
		len -= n;
		if (!offset_in_page(doff))
			cond_resched();
	}
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_mem_copy_mem);
