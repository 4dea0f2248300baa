// SPDX-License-Identifier: GPL-2.0
/*
 * mmap() of a DPU's memory, from the rank file (any DPU) or from a worker
 * file (only the DPU it holds): the mapping shows the very pages the
 * transfers copy to and from (mram.c).  The offset names the memory:
 * DPUSIM_MMAP_MRAM(dpu) or DPUSIM_MMAP_WRAM(dpu), plus a page-aligned
 * offset inside it.
 *
 * The pages the memory already holds are mapped at mmap() time (a worker
 * maps each DPU it runs, and a fault per page would cost it more than a
 * small program); the others at their first touch by the fault handler,
 * which allocates the page then and charges it to the module's budget
 * (SIGBUS over it).  The handler runs under mmap_lock, which nests inside
 * the rank's state_lock (dpusim.h), so it takes no rank lock: the
 * memory's xarray lock orders it against a transfer populating the same
 * page.
 *
 * The vma holds its file, and the file holds the rank's ownership (the
 * owner file itself, or a worker file's reference): the memory lives as
 * long as any mapping of it.
 *
 * The window of a worker file (DPUSIM_MMAP_WINDOW) shows whichever DPU the
 * worker holds: CLAIM fills it with the DPU's resident pages
 * (dpusim_window_fill()), its fault handler maps the others at their first
 * touch, and FINISH empties it (dpusim_window_clear()).  A worker thus
 * runs DPU after DPU at fixed addresses with no mmap or mremap call, whose
 * vma work would cost more than a small program.  Its entries
 * are those of a VM_PFNMAP mapping, set by apply_to_page_range() as
 * i915_mm.c does: no page reference, no rmap.  A page they show must stay
 * in its memory as long as they do, and it does: the window only ever
 * shows the pages of the DPU its worker holds, a RUNNING DPU; a memory
 * loses pages only at the rank's teardown (every mapping gone: each holds
 * its file) and in dpusim_mem_undo() of a failed transfer or tag-matching
 * MRAM registration, neither of which may name a RUNNING DPU (EBUSY,
 * checked under state_lock); and the window is emptied under the rank's
 * state_lock when its DPU stops being held, before any transfer can name
 * that DPU.  w->win_lock orders the fault handler (which checks the DPU
 * held) against the filling and the emptying.
 */
#include <kunit/visibility.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>

#include "dpusim.h"

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

/* ------------------------------------------------ the worker's window */

#define DPUSIM_WINDOW_MRAM_PAGE	(DPUSIM_WINDOW_MRAM >> PAGE_SHIFT)

/**
 * dpusim_window_mem - what page @idx of a window shows for DPU @dpu
 * @rank: the rank
 * @dpu: a DPU of the rank
 * @idx: page index in the window
 * @mem_idx: out, the page index in the memory
 *
 * Return: the DPU's WRAM or MRAM, or NULL (past the memory: SIGBUS).
 */
struct dpusim_mem *dpusim_window_mem(struct dpusim_rank *rank, u32 dpu,
				     pgoff_t idx, pgoff_t *mem_idx)
{
	struct dpusim_mem *mem;

	if (idx >= DPUSIM_WINDOW_MRAM_PAGE) {
		mem = &rank->dpus[dpu].mem[DPUSIM_MRAM];
		idx -= DPUSIM_WINDOW_MRAM_PAGE;
	} else {
		mem = &rank->dpus[dpu].mem[DPUSIM_WRAM];
	}
	if (idx >= dpusim_mem_pages(mem))
		return NULL;
	*mem_idx = idx;
	return mem;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_window_mem);

static vm_fault_t dpusim_window_fault(struct vm_fault *vmf)
{
	struct dpusim_worker *w = vmf->vma->vm_private_data;
	struct dpusim_mem *mem = NULL;
	struct page *page;
	vm_fault_t ret;
	pgoff_t idx;
	s32 dpu;

	mutex_lock(&w->win_lock);
	dpu = READ_ONCE(w->held);
	if (dpu >= 0)
		mem = dpusim_window_mem(w->rank, dpu,
					vmf->pgoff - DPUSIM_WINDOW_PGOFF, &idx);
	if (!mem) {
		ret = VM_FAULT_SIGBUS;
		goto out;
	}
	page = dpusim_mem_get_page(mem, idx);
	if (IS_ERR(page)) {
		ret = PTR_ERR(page) == -ENOSPC ? VM_FAULT_SIGBUS : VM_FAULT_OOM;
		goto out;
	}
	ret = vmf_insert_pfn(vmf->vma, vmf->address, page_to_pfn(page));
	put_page(page);		/* the memory keeps its own reference */
out:
	mutex_unlock(&w->win_lock);
	return ret;
}

/*
 * Only the window itself lets go: a refused mremap() closes the copy
 * move_vma() made of it, at another address, and the window stays.
 */
static void dpusim_window_close(struct vm_area_struct *vma)
{
	struct dpusim_worker *w = vma->vm_private_data;
	struct mm_struct *mm = NULL;

	mutex_lock(&w->win_lock);
	if (w->win_mm == vma->vm_mm && w->win_start == vma->vm_start) {
		mm = w->win_mm;
		w->win_mm = NULL;
	}
	mutex_unlock(&w->win_lock);
	if (mm)
		mmdrop(mm);
}

/* The window stays where CLAIM and FINISH look for it, and whole. */
static int dpusim_window_mremap(struct vm_area_struct *vma)
{
	return -EINVAL;
}

static int dpusim_window_may_split(struct vm_area_struct *vma,
				   unsigned long addr)
{
	return -EINVAL;
}

static const struct vm_operations_struct dpusim_window_vm_ops = {
	.fault = dpusim_window_fault,
	.close = dpusim_window_close,
	.mremap = dpusim_window_mremap,
	.may_split = dpusim_window_may_split,
};

/**
 * dpusim_window_mmap - mmap() of a worker file's window
 * @w: the worker
 * @vma: the new mapping, MAP_SHARED, at DPUSIM_MMAP_WINDOW
 *
 * Return: 0, -EINVAL (longer than DPUSIM_WINDOW_SIZE) or -EBUSY (a
 * second window).
 */
int dpusim_window_mmap(struct dpusim_worker *w, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff != DPUSIM_WINDOW_PGOFF ||
	    vma_pages(vma) > (DPUSIM_WINDOW_SIZE >> PAGE_SHIFT))
		return -EINVAL;
	mutex_lock(&w->win_lock);
	if (w->win_mm) {
		mutex_unlock(&w->win_lock);
		return -EBUSY;
	}
	mmgrab(vma->vm_mm);
	w->win_mm = vma->vm_mm;
	w->win_start = vma->vm_start;
	mutex_unlock(&w->win_lock);
	/*
	 * No copy at fork, not even at the caller's request: FINISH empties
	 * the worker's own window only, so a child's copy would keep the
	 * DPU's pages after the worker let it go.  VM_DONTCOPY alone yields
	 * to madvise(MADV_DOFORK); VM_IO is what makes that EINVAL (the
	 * flags remap_pfn_range() sets; the window, already VM_PFNMAP, can
	 * neither be pinned nor mlocked nor dumped either way).
	 */
	dpusim_vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND |
			    VM_DONTDUMP | VM_DONTCOPY);
	vma->vm_ops = &dpusim_window_vm_ops;
	vma->vm_private_data = w;
	return 0;
}

/*
 * The window's address space, with a user reference (mmput_async() it),
 * or NULL: no window, or its process is exiting.
 */
static struct mm_struct *dpusim_window_mm(struct dpusim_worker *w)
{
	struct mm_struct *mm;

	mutex_lock(&w->win_lock);
	mm = w->win_mm;
	if (mm && !mmget_not_zero(mm))
		mm = NULL;
	mutex_unlock(&w->win_lock);
	return mm;
}

/* The window's vma, @mm's mmap_lock and w->win_lock held, or NULL. */
static struct vm_area_struct *dpusim_window_vma(struct dpusim_worker *w,
						struct mm_struct *mm)
{
	struct vm_area_struct *vma;

	if (w->win_mm != mm)
		return NULL;	/* unmapped, and maybe mapped again, meanwhile */
	vma = vma_lookup(mm, w->win_start);
	if (!vma || vma->vm_ops != &dpusim_window_vm_ops ||
	    vma->vm_private_data != w)
		return NULL;
	return vma;
}

struct dpusim_window_run {
	struct mm_struct *mm;
	pgprot_t prot;
	struct page **pages;
};

static int dpusim_window_set_pte(pte_t *pte, unsigned long addr, void *data)
{
	struct dpusim_window_run *run = data;
	struct page *page = *run->pages++;

	/* a fault of another thread of the worker may have been first */
	if (pte_none(ptep_get(pte)))
		set_pte_at(run->mm, addr, pte,
			   pte_mkspecial(mk_pte(page, run->prot)));
	return 0;
}

/* Pages of a memory set per round of its xarray */
#define DPUSIM_WINDOW_BATCH	64

/*
 * Map the resident pages of @mem, whose page 0 shows at window page
 * @first, in runs of consecutive pages.  No reference is taken: see the
 * comment at the top.
 */
static int dpusim_window_fill_mem(struct vm_area_struct *vma,
				  struct dpusim_mem *mem, pgoff_t first)
{
	struct page *pages[DPUSIM_WINDOW_BATCH];
	pgoff_t at[DPUSIM_WINDOW_BATCH];
	struct dpusim_window_run run = {
		.mm = vma->vm_mm,
		.prot = vma->vm_page_prot,
	};
	pgoff_t idx = 0, last;
	unsigned int n, i, j;
	struct page *page;
	int ret;

	if (first >= vma_pages(vma))
		return 0;
	last = min_t(pgoff_t, dpusim_mem_pages(mem), vma_pages(vma) - first);
	if (!last--)
		return 0;
	do {
		XA_STATE(xas, &mem->pages, idx);

		n = 0;
		xa_lock(&mem->pages);
		xas_for_each(&xas, page, last) {
			at[n] = xas.xa_index;
			pages[n++] = page;
			if (n == DPUSIM_WINDOW_BATCH)
				break;
		}
		xa_unlock(&mem->pages);
		for (i = 0; i < n; i = j) {
			for (j = i + 1; j < n && at[j] == at[j - 1] + 1; j++)
				;
			run.pages = &pages[i];
			ret = apply_to_page_range(run.mm, vma->vm_start +
						  ((first + at[i]) << PAGE_SHIFT),
						  (j - i) << PAGE_SHIFT,
						  dpusim_window_set_pte, &run);
			if (ret)
				return ret;
		}
		if (n)
			idx = at[n - 1] + 1;
		cond_resched();
	} while (n == DPUSIM_WINDOW_BATCH && idx <= last);
	return 0;
}

/**
 * dpusim_window_fill - map the DPU a worker just claimed into its window
 * @w: the worker
 * @dpu: the DPU claimed
 *
 * Nothing happens if the worker has no window, or no longer holds @dpu;
 * if page tables cannot be allocated, the pages left out are mapped at
 * their first touch instead.
 */
void dpusim_window_fill(struct dpusim_worker *w, u32 dpu)
{
	struct mm_struct *mm = dpusim_window_mm(w);
	struct vm_area_struct *vma;
	struct dpusim_dpu *d;

	if (!mm)
		return;
	mmap_read_lock(mm);
	mutex_lock(&w->win_lock);
	vma = dpusim_window_vma(w, mm);
	if (vma && READ_ONCE(w->held) == (s32)dpu) {
		d = &w->rank->dpus[dpu];
		if (!dpusim_window_fill_mem(vma, &d->mem[DPUSIM_WRAM], 0))
			dpusim_window_fill_mem(vma, &d->mem[DPUSIM_MRAM],
					       DPUSIM_WINDOW_MRAM_PAGE);
	}
	mutex_unlock(&w->win_lock);
	mmap_read_unlock(mm);
	mmput_async(mm);
}

/* Unmap @len bytes of the window from byte @off (clipped to the vma). */
static void dpusim_window_zap(struct vm_area_struct *vma, u64 off, u64 len)
{
	unsigned long size = vma->vm_end - vma->vm_start;

	if (off >= size)
		return;
	zap_vma_ptes(vma, vma->vm_start + off,
		     PAGE_ALIGN(min_t(u64, len, size - off)));
}

/**
 * dpusim_window_clear - empty a worker's window
 * @w: the worker, whose DPU is no longer held; the rank's state_lock held,
 *     so that no transfer names that DPU before its pages left the window
 */
void dpusim_window_clear(struct dpusim_worker *w)
{
	struct mm_struct *mm = dpusim_window_mm(w);
	struct vm_area_struct *vma;

	lockdep_assert_held(&w->rank->state_lock);
	if (!mm)
		return;
	mmap_read_lock(mm);
	mutex_lock(&w->win_lock);
	vma = dpusim_window_vma(w, mm);
	if (vma) {
		/* the two memories' ranges, not the whole window */
		dpusim_window_zap(vma, 0, w->rank->wram_size);
		dpusim_window_zap(vma, DPUSIM_WINDOW_MRAM, w->rank->mram_size);
	}
	mutex_unlock(&w->win_lock);
	mmap_read_unlock(mm);
	mmput_async(mm);
}

/**
 * dpusim_mmap_mem - map a memory: a DPU's MRAM or WRAM, or a stream
 * @vma: the new mapping, MAP_SHARED, its range checked against @mem
 *       (dpusim_mmap_fits())
 * @mem: the memory
 * @first: the page of @mem at @vma's start
 *
 * Called under mmap_lock: takes no lock of the rank.
 *
 * Return: 0 or -ENOMEM (page tables for the resident pages).
 */
int dpusim_mmap_mem(struct vm_area_struct *vma, struct dpusim_mem *mem,
		    pgoff_t first)
{
	dpusim_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &dpusim_vm_ops;
	vma->vm_private_data = mem;
	return dpusim_mmap_prefault(vma, mem, first);
}

/**
 * dpusim_mmap_fits - whether a mapping's range lies inside a memory
 * @vma: the mapping
 * @mem: the memory
 * @first: the page of @mem at @vma's start
 */
bool dpusim_mmap_fits(struct vm_area_struct *vma,
		      const struct dpusim_mem *mem, pgoff_t first)
{
	return first <= dpusim_mem_pages(mem) &&
	       vma_pages(vma) <= dpusim_mem_pages(mem) - first;
}
