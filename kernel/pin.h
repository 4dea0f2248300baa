/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pinning user pages and charging what the kernel holds for a process.
 * The layer every object that keeps user or kernel pages on a process's
 * behalf builds on: transfers, stream buffers, tag-matching regions,
 * rings and tag tables.  It calls nothing of dpusim's.
 */
#ifndef DPUSIM_PIN_H
#define DPUSIM_PIN_H

#include <linux/atomic.h>
#include <linux/types.h>

struct mm_struct;
struct page;

/**
 * struct dpusim_charge - pages charged to a process's RLIMIT_MEMLOCK
 * @mm: the charged address space, mmgrab()ed; NULL: nothing charged
 * @count: the device's counter that counts the same pages (sysfs)
 * @npages: pages charged to @mm->pinned_vm and to @count
 *
 * As RDMA (ib_umem_get), io_uring and iommufd charge: mm->pinned_vm
 * against RLIMIT_MEMLOCK, CAP_IPC_LOCK exempt.  The charge stays with the
 * process that made it, whoever drops it, so an object passed to another
 * process (a file descriptor sent over a socket) gives the pages back to
 * the one that pinned them.
 */
struct dpusim_charge {
	struct mm_struct *mm;
	atomic_long_t *count;
	unsigned long npages;
};

int dpusim_charge(struct dpusim_charge *c, atomic_long_t *count,
		  unsigned long npages);
void dpusim_uncharge(struct dpusim_charge *c);
int dpusim_pin_longterm(u64 addr, unsigned long n, unsigned int gup,
			struct page **pages);
unsigned long dpusim_span_pages(u64 addr, u64 len);

#endif /* DPUSIM_PIN_H */
