// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues: a ring of pages, mapped contiguously in the kernel
 * (vmap) and into the process (vm_insert_pages), that the process maps
 * and reads without a system call.  As rxe's queues do, the kernel keeps
 * its own producer index and size and reads nothing of the mapping but the
 * consumer index, which only decides whether the ring is full: a hostile
 * or buggy process can lose its own completions, never make the kernel
 * write outside the ring.
 *
 * Operations reserve the entries they will write before they change
 * anything, so a full ring refuses the operation (overrun, reported)
 * instead of dropping a completion.
 */
#include <kunit/visibility.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "dpusim.h"
#include "tm.h"
#include "trace.h"

static struct dpusim_tm_cqe *dpusim_tm_cq_entry(struct dpusim_tm_cq *cq,
						u32 idx)
{
	return (void *)cq->ring + DPUSIM_TM_CQ_RING_ENTRIES +
		(size_t)(idx & (cq->nr_entries - 1)) * sizeof(struct dpusim_tm_cqe);
}

static void dpusim_tm_cq_free_ring(struct dpusim_tm_cq *cq)
{
	unsigned long i;

	if (cq->ring)
		vunmap(cq->ring);
	for (i = 0; cq->pages && i < cq->npages; i++)
		if (cq->pages[i])
			__free_page(cq->pages[i]);
	kvfree(cq->pages);
}

/**
 * dpusim_tm_cq_alloc - a CQ with its ring, not yet in any context
 * @cqe: entries wanted, 1 .. DPUSIM_TM_MAX_CQE
 *
 * Return: the CQ (one reference) or an ERR_PTR.
 */
struct dpusim_tm_cq *dpusim_tm_cq_alloc(u32 cqe)
{
	struct dpusim_tm_cq *cq;
	unsigned long i;

	if (!cqe || cqe > DPUSIM_TM_MAX_CQE)
		return ERR_PTR(-EINVAL);
	cq = kzalloc(sizeof(*cq), GFP_KERNEL_ACCOUNT);
	if (!cq)
		return ERR_PTR(-ENOMEM);
	cq->nr_entries = roundup_pow_of_two(cqe);
	cq->ring_size = PAGE_ALIGN(DPUSIM_TM_CQ_RING_ENTRIES +
				   (size_t)cq->nr_entries *
				   sizeof(struct dpusim_tm_cqe));
	cq->npages = cq->ring_size >> PAGE_SHIFT;
	cq->pages = kvcalloc(cq->npages, sizeof(*cq->pages), GFP_KERNEL_ACCOUNT);
	if (!cq->pages)
		goto err;
	for (i = 0; i < cq->npages; i++) {
		cq->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO |
					  __GFP_NOWARN);
		if (!cq->pages[i])
			goto err;
	}
	cq->ring = vmap(cq->pages, cq->npages, VM_MAP, PAGE_KERNEL);
	if (!cq->ring)
		goto err;
	cq->ring->nr_entries = cq->nr_entries;
	cq->ring->entry_size = sizeof(struct dpusim_tm_cqe);
	kref_init(&cq->ref);
	spin_lock_init(&cq->lock);
	atomic_set(&cq->users, 0);
	return cq;

err:
	dpusim_tm_cq_free_ring(cq);
	kfree(cq);
	return ERR_PTR(-ENOMEM);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_cq_alloc);

static void dpusim_tm_cq_free(struct kref *ref)
{
	struct dpusim_tm_cq *cq = container_of(ref, struct dpusim_tm_cq, ref);

	dpusim_tm_cq_free_ring(cq);
	if (cq->ctx) {
		dpusim_uncharge(&cq->charge);
		dpusim_tm_ctx_put(cq->ctx);
	}
	kfree(cq);
}

void dpusim_tm_cq_put(struct dpusim_tm_cq *cq)
{
	kref_put(&cq->ref, dpusim_tm_cq_free);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_cq_put);

/**
 * dpusim_tm_cq_use - the CQ of a handle, for an SRQ or QP being created
 * @ctx: the context
 * @handle: the CQ
 *
 * Counted in @users under ctx->lock, where a destroy checks them.
 *
 * Return: the CQ, referenced, or NULL.
 */
struct dpusim_tm_cq *dpusim_tm_cq_use(struct dpusim_tm_ctx *ctx, u32 handle)
{
	struct dpusim_tm_cq *cq;

	mutex_lock(&ctx->lock);
	cq = xa_load(&ctx->cqs, handle);
	if (cq) {
		kref_get(&cq->ref);
		atomic_inc(&cq->users);
	}
	mutex_unlock(&ctx->lock);
	return cq;
}

/* Undo dpusim_tm_cq_use() */
void dpusim_tm_cq_unuse(struct dpusim_tm_cq *cq)
{
	atomic_dec(&cq->users);
	dpusim_tm_cq_put(cq);
}

/* Entries the process has not consumed; a nonsense consumer counts as full */
static u32 dpusim_tm_cq_used(struct dpusim_tm_cq *cq)
{
	u32 used = cq->prod - READ_ONCE(cq->ring->consumer);

	return used > cq->nr_entries ? cq->nr_entries : used;
}

/**
 * dpusim_tm_cq_reserve - promise @n entries to an operation
 * @cq: the CQ
 * @n: entries
 *
 * A ring without room is an overrun: the ring's flag and counter say so,
 * the owner's context fails its next call with -EOVERFLOW, and its poll()
 * wakes.
 *
 * Return: 0 or -EOVERFLOW (nothing reserved).
 */
int dpusim_tm_cq_reserve(struct dpusim_tm_cq *cq, u32 n)
{
	int ret = 0;

	spin_lock(&cq->lock);
	if (n > cq->nr_entries - cq->reserved ||
	    dpusim_tm_cq_used(cq) > cq->nr_entries - cq->reserved - n) {
		cq->overruns++;
		WRITE_ONCE(cq->ring->overruns, cq->overruns);
		WRITE_ONCE(cq->ring->flags, DPUSIM_TM_CQ_F_OVERRUN);
		ret = -EOVERFLOW;
	} else {
		cq->reserved += n;
	}
	spin_unlock(&cq->lock);
	if (ret)
		trace_dpusim_tm_overrun(cq->handle);
	if (ret && cq->ctx) {
		atomic64_inc(&cq->ctx->tm->stats.overruns);
		atomic_set(&cq->ctx->overrun, 1);
		wake_up_interruptible(&cq->ctx->wait);
	}
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_cq_reserve);

void dpusim_tm_cq_unreserve(struct dpusim_tm_cq *cq, u32 n)
{
	spin_lock(&cq->lock);
	cq->reserved -= n;
	spin_unlock(&cq->lock);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_cq_unreserve);

/**
 * dpusim_tm_cq_push - write one reserved completion
 * @cq: the CQ
 * @cqe: the completion
 *
 * The entry is written before the producer index moves (release), so a
 * process that reads the index with acquire sees the whole entry.
 */
void dpusim_tm_cq_push(struct dpusim_tm_cq *cq, const struct dpusim_tm_cqe *cqe)
{
	spin_lock(&cq->lock);
	if (!WARN_ON_ONCE(!cq->reserved)) {
		memcpy(dpusim_tm_cq_entry(cq, cq->prod), cqe, sizeof(*cqe));
		cq->prod++;
		cq->reserved--;
		/* the entry is visible before the index that publishes it */
		smp_store_release(&cq->ring->producer, cq->prod);
	}
	spin_unlock(&cq->lock);
	trace_dpusim_tm_completion(cq->handle, cqe->opcode, cqe->status, cqe->wc_flags);
	if (cq->ctx && wq_has_sleeper(&cq->ctx->wait))
		wake_up_interruptible(&cq->ctx->wait);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_cq_push);

/* Does the ring hold completions the process has not consumed? */
bool dpusim_tm_cq_pending(struct dpusim_tm_cq *cq)
{
	return READ_ONCE(cq->ring->consumer) != READ_ONCE(cq->prod);
}

int dpusim_tm_create_cq(struct dpusim_tm_ucmd *ucmd)
{
	struct dpusim_tm_create_cq *cmd = ucmd->cmd;
	struct dpusim_tm_ctx *ctx = ucmd->ctx;
	struct dpusim_tm_cq *cq;
	int ret;

	if (cmd->flags)
		return -EINVAL;
	if (cmd->cqe > DPUSIM_TM_MAX_CQE)
		return -E2BIG;
	cq = dpusim_tm_cq_alloc(cmd->cqe);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	kref_get(&ctx->ref);
	cq->ctx = ctx;
	ret = dpusim_charge(&cq->charge, &ctx->tm->charged_pages,
			    cq->npages);
	if (ret)
		goto err_put;
	ret = dpusim_tm_obj_reserve(ctx, &ctx->cqs, DPUSIM_TM_MAX_CQ,
				    &cq->handle);
	if (ret)
		goto err_put;
	cmd->cqe = cq->nr_entries;
	cmd->handle = cq->handle;
	cmd->mmap_offset = (u64)cq->handle << PAGE_SHIFT;
	cmd->mmap_size = cq->ring_size;
	ret = dpusim_tm_ucmd_respond(ucmd, sizeof(*cmd));
	if (ret) {
		dpusim_tm_obj_abort(ctx, &ctx->cqs, cmd->handle);
		goto err_put;
	}
	dpusim_tm_obj_finalize(ctx, &ctx->cqs, cmd->handle, cq);
	return 0;

err_put:
	dpusim_tm_cq_put(cq);
	return ret;
}

/* Take a CQ out of its context; @force at teardown: nothing uses it */
static int dpusim_tm_cq_remove(struct dpusim_tm_ctx *ctx, u32 handle,
			       bool force)
{
	struct dpusim_tm_cq *cq;

	mutex_lock(&ctx->lock);
	cq = xa_load(&ctx->cqs, handle);
	if (!cq) {
		mutex_unlock(&ctx->lock);
		return -ENOENT;
	}
	if (!force && atomic_read(&cq->users)) {
		mutex_unlock(&ctx->lock);
		return -EBUSY;
	}
	xa_erase(&ctx->cqs, handle);
	mutex_unlock(&ctx->lock);
	dpusim_tm_cq_put(cq);	/* the table's reference */
	return 0;
}

/**
 * dpusim_tm_destroy_cq - remove a CQ from its context
 * @ctx: the context
 * @handle: the CQ
 *
 * The ring stays mapped (and allocated) until the last munmap.
 *
 * Return: 0, -ENOENT, or -EBUSY while an SRQ or QP uses it.
 */
int dpusim_tm_destroy_cq(struct dpusim_tm_ctx *ctx, u32 handle)
{
	return dpusim_tm_cq_remove(ctx, handle, false);
}

/* At teardown, after the SRQs and QPs: every CQ of the context */
void dpusim_tm_destroy_cqs(struct dpusim_tm_ctx *ctx)
{
	struct dpusim_tm_cq *cq;
	unsigned long idx;

	xa_for_each(&ctx->cqs, idx, cq)
		dpusim_tm_cq_remove(ctx, idx, true);
}

static void dpusim_tm_vma_open(struct vm_area_struct *vma)
{
	struct dpusim_tm_cq *cq = vma->vm_private_data;

	kref_get(&cq->ref);
}

static void dpusim_tm_vma_close(struct vm_area_struct *vma)
{
	dpusim_tm_cq_put(vma->vm_private_data);
}

static const struct vm_operations_struct dpusim_tm_vm_ops = {
	.open = dpusim_tm_vma_open,
	.close = dpusim_tm_vma_close,
};

/**
 * dpusim_tm_cq_mmap - map a CQ's ring
 * @ctx: the context
 * @vma: the mapping: at the CQ's mmap_offset, exactly its mmap_size,
 *       shared
 *
 * Return: 0, -EINVAL (wrong offset, size or not shared), -ENOENT.
 */
int dpusim_tm_cq_mmap(struct dpusim_tm_ctx *ctx, struct vm_area_struct *vma)
{
	struct dpusim_tm_cq *cq;
	unsigned long npages;
	int ret;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_pgoff > U32_MAX)
		return -EINVAL;
	mutex_lock(&ctx->lock);
	cq = xa_load(&ctx->cqs, vma->vm_pgoff);
	if (cq)
		kref_get(&cq->ref);
	mutex_unlock(&ctx->lock);
	if (!cq)
		return -EINVAL;
	if (vma->vm_end - vma->vm_start != cq->ring_size) {
		ret = -EINVAL;
		goto err;
	}
	dpusim_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	npages = cq->npages;
	ret = vm_insert_pages(vma, vma->vm_start, cq->pages, &npages);
	if (ret)
		goto err;
	vma->vm_private_data = cq;
	vma->vm_ops = &dpusim_tm_vm_ops;
	return 0;
err:
	dpusim_tm_cq_put(cq);
	return ret;
}
