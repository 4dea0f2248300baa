// SPDX-License-Identifier: GPL-2.0
/*
 * Pinning user pages and charging them: see pin.h.
 */
#include <kunit/visibility.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>

#include "pin.h"

/**
 * dpusim_charge - charge pages held for the caller to its memlock limit
 * @c: the charge, empty (@c->mm NULL); filled on success
 * @count: the device counter to count the pages in too
 * @npages: pages
 *
 * Return: 0, or -ENOMEM over RLIMIT_MEMLOCK (nothing charged, @c empty).
 */
int dpusim_charge(struct dpusim_charge *c, atomic_long_t *count,
		  unsigned long npages)
{
	struct mm_struct *mm = current->mm;
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if ((u64)atomic64_add_return(npages, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	mmgrab(mm);
	c->mm = mm;
	c->count = count;
	c->npages = npages;
	atomic_long_add(npages, count);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_charge);

/**
 * dpusim_uncharge - give a charge back
 * @c: the charge, or an empty one (nothing to do); empty afterwards
 */
void dpusim_uncharge(struct dpusim_charge *c)
{
	if (!c->mm)
		return;
	atomic64_sub(c->npages, &c->mm->pinned_vm);
	atomic_long_sub(c->npages, c->count);
	mmdrop(c->mm);
	c->mm = NULL;
	c->npages = 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_uncharge);

/**
 * dpusim_pin_longterm - pin a range of the caller's pages long-term
 * @addr: page aligned
 * @n: pages
 * @gup: FOLL_WRITE or 0 (FOLL_LONGTERM is added)
 * @pages: @n entries, filled in order
 *
 * For what stays pinned past the call (a tag-matching region, a stream
 * core's buffer), in runs of at most 512 pages, giving way between runs.
 *
 * Return: 0, or -EFAULT, -ENOMEM, -EOVERFLOW, -EINTR (a fatal signal)
 * with nothing pinned.
 */
int dpusim_pin_longterm(u64 addr, unsigned long n, unsigned int gup,
			struct page **pages)
{
	unsigned long done = 0;
	int ret;

	while (done < n) {
		ret = pin_user_pages_fast(addr + done * PAGE_SIZE,
					  min(n - done, 512UL),
					  gup | FOLL_LONGTERM, pages + done);
		if (ret <= 0) {
			ret = ret ?: -EFAULT;
			goto err;
		}
		done += ret;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err;
		}
		cond_resched();
	}
	return 0;

err:
	unpin_user_pages(pages, done);
	return ret;
}

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
