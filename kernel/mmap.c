// SPDX-License-Identifier: GPL-2.0
/*
 * mmap() of a DPU's memory, from the rank file (any DPU) or from a worker
 * file (only the DPU it holds): the mapping shows the very pages the
 * transfers copy to and from (mram.c).  The offset names the memory:
 * DPUSIM_MMAP_MRAM(dpu) or DPUSIM_MMAP_WRAM(dpu), plus a page-aligned
 * offset inside it.
 *
 * The pages the memory already holds are mapped at mmap() time (a worker
 * maps each DPU it runs: one trap per page would cost more than the
 * program under emulation); the others at their first touch by the fault
 * handler, which allocates the page then and charges it to the module's
 * budget (SIGBUS over it).  The handler runs under mmap_lock, and the transfers
 * take mmap_lock (pinning user pages) under the rank's xfer_lock, so it
 * takes neither xfer_lock nor worker_lock: the memory's xarray lock
 * orders it against a transfer populating the same page.
 *
 * The vma holds its file, and the file holds the rank's ownership (the
 * owner file itself, or a worker file's reference): the memory lives as
 * long as any mapping of it.
 */
#include <linux/mm.h>

#include "dpusim.h"

/* Pages of the offset that lie inside one memory */
#define DPUSIM_MMAP_MEM_PAGES	(DPUSIM_MMAP_WRAM_BIT >> PAGE_SHIFT)

static unsigned long dpusim_mem_pages(const struct dpusim_mem *mem)
{
	return DIV_ROUND_UP(mem->size, PAGE_SIZE);
}

static vm_fault_t dpusim_vm_fault(struct vm_fault *vmf)
{
	struct dpusim_mem *mem = vmf->vma->vm_private_data;
	pgoff_t idx = vmf->pgoff & (DPUSIM_MMAP_MEM_PAGES - 1);
	struct page *page;

	if (idx >= dpusim_mem_pages(mem))
		return VM_FAULT_SIGBUS;
	page = dpusim_mem_get_page(mem, idx);
	if (IS_ERR(page))
		return PTR_ERR(page) == -ENOSPC ? VM_FAULT_SIGBUS :
						  VM_FAULT_OOM;
	vmf->page = page;	/* the reference taken goes to the mapping */
	return 0;
}

static const struct vm_operations_struct dpusim_vm_ops = {
	.fault = dpusim_vm_fault,
};

/* Resident pages mapped per xa_lock round */
#define DPUSIM_PREFAULT_BATCH	32

/*
 * Map the resident pages of the range now.  The pages are referenced
 * under the xarray's lock (as the fault handler does), then inserted
 * outside it; vm_insert_page() takes the mapping's own reference.
 */
static int dpusim_mmap_prefault(struct vm_area_struct *vma,
				struct dpusim_mem *mem, pgoff_t first)
{
	pgoff_t last = first + vma_pages(vma) - 1, idx = first;
	struct page *batch[DPUSIM_PREFAULT_BATCH];
	pgoff_t at[DPUSIM_PREFAULT_BATCH];
	unsigned int n, i;
	struct page *page;
	int ret = 0;

	do {
		XA_STATE(xas, &mem->pages, idx);

		n = 0;
		xa_lock(&mem->pages);
		xas_for_each(&xas, page, last) {
			get_page(page);
			at[n] = xas.xa_index;
			batch[n++] = page;
			if (n == DPUSIM_PREFAULT_BATCH)
				break;
		}
		xa_unlock(&mem->pages);
		for (i = 0; i < n; i++) {
			if (!ret)
				ret = vm_insert_page(vma, vma->vm_start +
						     ((at[i] - first) << PAGE_SHIFT),
						     batch[i]);
			put_page(batch[i]);
		}
		if (n)
			idx = at[n - 1] + 1;
	} while (n == DPUSIM_PREFAULT_BATCH && idx <= last && !ret);
	return ret;
}

/**
 * dpusim_mmap - map a DPU's MRAM or WRAM
 * @rank: the rank
 * @w: the worker file's worker, or NULL for the rank file
 * @vma: the new mapping
 *
 * Called under mmap_lock: takes no lock of the rank.
 *
 * Return: 0, -EINVAL (not MAP_SHARED, a DPU past the rank, a range past
 * the memory), -EACCES (a worker file and a DPU it does not hold) or
 * -ENOMEM (page tables for the resident pages).
 */
int dpusim_mmap(struct dpusim_rank *rank, struct dpusim_worker *w,
		struct vm_area_struct *vma)
{
	unsigned long dpu = vma->vm_pgoff >>
			    (DPUSIM_MMAP_DPU_SHIFT - PAGE_SHIFT);
	pgoff_t first = vma->vm_pgoff & (DPUSIM_MMAP_MEM_PAGES - 1);
	struct dpusim_mem *mem;
	bool wram;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (dpu >= rank->nr_dpus)
		return -EINVAL;
	wram = vma->vm_pgoff & DPUSIM_MMAP_MEM_PAGES;
	mem = &rank->dpus[dpu].mem[wram ? DPUSIM_WRAM : DPUSIM_MRAM];
	if (first > dpusim_mem_pages(mem) ||
	    vma_pages(vma) > dpusim_mem_pages(mem) - first)
		return -EINVAL;
	if (w && READ_ONCE(w->held) != (s64)dpu)
		return -EACCES;
	dpusim_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &dpusim_vm_ops;
	vma->vm_private_data = mem;
	return dpusim_mmap_prefault(vma, mem, first);
}
