// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions of the tag-matching device, the sg lists that name them
 * and the copy engine between them.
 *
 * A user region pins its pages long-term and charges them to the
 * process's RLIMIT_MEMLOCK as pinned memory (mm->pinned_vm), as
 * ib_umem_get() does.  An MRAM region names a range of one DPU's MRAM on a
 * rank the process has open: its pages are allocated (charged to the
 * module's budget) at registration and stay while the region lives, and
 * the region holds the rank's ownership.  Either way a region is an array
 * of pages, and every copy is page to page with kmap_local_page().
 *
 * Keys are module wide (xarray, cyclic, never 0): lkey == rkey == handle.
 * DEREG erases the key at once; the pages go when the last sg list naming
 * the region is gone.
 */
#include <kunit/visibility.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dpusim.h"
#include "tm.h"

#define DPUSIM_TM_ACCESS_ALL (DPUSIM_TM_ACCESS_LOCAL_WRITE |	\
			      DPUSIM_TM_ACCESS_REMOTE_WRITE |	\
			      DPUSIM_TM_ACCESS_REMOTE_READ)

static void dpusim_tm_mr_free(struct kref *ref)
{
	struct dpusim_tm_mr *mr = container_of(ref, struct dpusim_tm_mr, ref);

	if (mr->rank) {
		dpusim_rank_put(mr->rank);
	} else if (mr->pages) {
		unpin_user_pages_dirty_lock(mr->pages, mr->npages,
					    mr->access & (DPUSIM_TM_ACCESS_LOCAL_WRITE |
							  DPUSIM_TM_ACCESS_REMOTE_WRITE));
		dpusim_uncharge(&mr->charge);
	}
	atomic_dec(&mr->tm->nr_mrs);
	kvfree(mr->pages);
	kfree(mr);
}

void dpusim_tm_mr_put(struct dpusim_tm_mr *mr)
{
	kref_put(&mr->ref, dpusim_tm_mr_free);
}

/**
 * dpusim_tm_mr_lookup - the live region of a key
 * @tm: the device
 * @key: lkey or rkey
 *
 * Return: the region with a reference, or NULL.
 */
struct dpusim_tm_mr *dpusim_tm_mr_lookup(struct dpusim_tm_dev *tm, u32 key)
{
	struct dpusim_tm_mr *mr;

	xa_lock(&tm->mrs);
	mr = xa_load(&tm->mrs, key);
	if (mr && !kref_get_unless_zero(&mr->ref))
		mr = NULL;
	xa_unlock(&tm->mrs);
	return mr;
}

/* Pin [addr, addr + len) of the caller, charged to RLIMIT_MEMLOCK. */
static int dpusim_tm_mr_pin(struct dpusim_tm_mr *mr, u64 addr, u64 len)
{
	unsigned int gup = 0;
	int ret;

	mr->first_off = offset_in_page(addr);
	mr->npages = DIV_ROUND_UP(mr->first_off + len, PAGE_SIZE);
	ret = dpusim_charge(&mr->charge, &mr->tm->pinned_pages, mr->npages);
	if (ret)
		return ret;
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages),
				   GFP_KERNEL_ACCOUNT);
	if (!mr->pages) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	if (mr->access & (DPUSIM_TM_ACCESS_LOCAL_WRITE |
			  DPUSIM_TM_ACCESS_REMOTE_WRITE))
		gup |= FOLL_WRITE;
	ret = dpusim_pin_longterm(addr & PAGE_MASK, mr->npages, gup, mr->pages);
	if (ret)
		goto err_free;
	return 0;

err_free:
	kvfree(mr->pages);
	mr->pages = NULL;
err_uncharge:
	dpusim_uncharge(&mr->charge);
	return ret;
}

/* The pages of [off, off + len) of a DPU's MRAM, allocated if missing. */
static int dpusim_tm_mr_mram(struct dpusim_tm_mr *mr,
			     struct dpusim_tm_reg_mr *cmd)
{
	struct dpusim_rank *rank;
	struct dpusim_mem *mem;
	unsigned long i;
	struct file *file;
	u64 end;
	int ret;

	file = fget(cmd->rank_fd);
	if (!file)
		return -EBADF;
	rank = dpusim_rank_from_file(file);
	if (!rank) {
		ret = -ENODEV;
		goto out_fput;
	}
	if (cmd->dpu >= rank->nr_dpus) {
		ret = -EINVAL;
		goto out_fput;
	}
	if (check_add_overflow(cmd->addr, cmd->length, &end) ||
	    end > rank->mram_size) {
		ret = -EOVERFLOW;
		goto out_fput;
	}
	mem = &rank->dpus[cmd->dpu].mem[DPUSIM_MRAM];
	mr->first_off = offset_in_page(cmd->addr);
	mr->npages = DIV_ROUND_UP(mr->first_off + cmd->length, PAGE_SIZE);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages),
				   GFP_KERNEL_ACCOUNT);
	if (!mr->pages) {
		ret = -ENOMEM;
		goto out_fput;
	}

	mutex_lock(&rank->state_lock);
	/* as a transfer: its pages may be in a worker's window (mmap.c) */
	if (rank->dpus[cmd->dpu].state == DPUSIM_DPU_RUNNING) {
		ret = -EBUSY;
		goto out_unlock;
	}
	ret = dpusim_mem_populate_charged(mem, cmd->addr, cmd->length);
	if (ret)
		goto out_unlock;
	for (i = 0; i < mr->npages; i++)
		mr->pages[i] = dpusim_mem_page(mem, (cmd->addr & PAGE_MASK) +
					       i * PAGE_SIZE);
	dpusim_rank_get(rank);
	mr->rank = rank;
out_unlock:
	mutex_unlock(&rank->state_lock);
	if (ret) {
		kvfree(mr->pages);
		mr->pages = NULL;
	}
out_fput:
	fput(file);
	return ret;
}

/*
 * Reserve @mr's key: module wide (cyclic, never 0) and in the context's
 * table, counted against DPUSIM_TM_MAX_MR.
 */
static int dpusim_tm_mr_reserve(struct dpusim_tm_ctx *ctx,
				struct dpusim_tm_mr *mr)
{
	struct dpusim_tm_dev *tm = ctx->tm;
	int ret;

	mutex_lock(&ctx->lock);
	if (ctx->nr_mrs >= DPUSIM_TM_MAX_MR) {
		ret = -ENOSPC;
		goto out;
	}
	ret = dpusim_tm_num_reserve(&tm->mrs, xa_limit_32b, &tm->next_mr,
				    &mr->key);
	if (ret)
		goto out;
	ret = xa_insert(&ctx->mrs, mr->key, NULL, GFP_KERNEL_ACCOUNT);
	if (ret) {
		xa_release(&tm->mrs, mr->key);
		goto out;
	}
	ctx->nr_mrs++;
out:
	mutex_unlock(&ctx->lock);
	return ret;
}

static void dpusim_tm_mr_abort(struct dpusim_tm_ctx *ctx, u32 key)
{
	mutex_lock(&ctx->lock);
	xa_release(&ctx->mrs, key);
	xa_release(&ctx->tm->mrs, key);
	ctx->nr_mrs--;
	mutex_unlock(&ctx->lock);
}

/* Key first (found by rkey), then the context's table (found by DEREG) */
static void dpusim_tm_mr_finalize(struct dpusim_tm_ctx *ctx,
				  struct dpusim_tm_mr *mr, u32 key)
{
	xa_store(&ctx->tm->mrs, key, mr, GFP_KERNEL);
	mutex_lock(&ctx->lock);
	xa_store(&ctx->mrs, key, mr, GFP_KERNEL);
	mutex_unlock(&ctx->lock);
}

int dpusim_tm_reg_mr(struct dpusim_tm_ucmd *ucmd)
{
	struct dpusim_tm_reg_mr *cmd = ucmd->cmd;
	struct dpusim_tm_ctx *ctx = ucmd->ctx;
	struct dpusim_tm_dev *tm = ctx->tm;
	bool mram = cmd->flags & DPUSIM_TM_MR_MRAM;
	struct dpusim_tm_mr *mr;
	u64 end;
	int ret;

	if ((cmd->flags & ~DPUSIM_TM_MR_MRAM) ||
	    (cmd->access & ~DPUSIM_TM_ACCESS_ALL) || !cmd->length ||
	    cmd->__reserved ||
	    (!mram && (cmd->rank_fd || cmd->dpu)))
		return -EINVAL;
	if (cmd->length > DPUSIM_TM_MAX_MSG)
		return -E2BIG;
	if (check_add_overflow(cmd->addr, cmd->length, &end))
		return -EOVERFLOW;
	if (!mram && !access_ok(u64_to_user_ptr(cmd->addr), cmd->length))
		return -EFAULT;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return -ENOMEM;
	kref_init(&mr->ref);
	mr->tm = tm;
	mr->ctx = ctx;
	mr->access = cmd->access;
	mr->iova = cmd->addr;
	mr->length = cmd->length;
	atomic_inc(&tm->nr_mrs);

	ret = mram ? dpusim_tm_mr_mram(mr, cmd) :
		     dpusim_tm_mr_pin(mr, cmd->addr, cmd->length);
	if (ret)
		goto err_put;
	ret = dpusim_tm_mr_reserve(ctx, mr);
	if (ret)
		goto err_put;
	cmd->lkey = mr->key;
	cmd->rkey = mr->key;
	ret = dpusim_tm_ucmd_respond(ucmd, sizeof(*cmd));
	if (ret) {
		dpusim_tm_mr_abort(ctx, mr->key);
		goto err_put;
	}
	dpusim_tm_mr_finalize(ctx, mr, cmd->lkey);
	return 0;

err_put:
	dpusim_tm_mr_put(mr);
	return ret;
}

/* Unlink a region of the context (ctx->lock held) and drop its reference. */
static void dpusim_tm_mr_unlink(struct dpusim_tm_ctx *ctx,
				struct dpusim_tm_mr *mr)
{
	xa_erase(&ctx->mrs, mr->key);
	xa_erase(&ctx->tm->mrs, mr->key);
	ctx->nr_mrs--;
	dpusim_tm_mr_put(mr);
}

/**
 * dpusim_tm_dereg_mr - unregister a region
 * @ctx: the context
 * @key: the region's lkey
 *
 * Return: 0 or -ENOENT.
 */
int dpusim_tm_dereg_mr(struct dpusim_tm_ctx *ctx, u32 key)
{
	struct dpusim_tm_mr *mr;

	mutex_lock(&ctx->lock);
	mr = xa_load(&ctx->mrs, key);
	if (mr)
		dpusim_tm_mr_unlink(ctx, mr);
	mutex_unlock(&ctx->lock);
	return mr ? 0 : -ENOENT;
}

/* At teardown: every region of the context */
void dpusim_tm_dereg_mrs(struct dpusim_tm_ctx *ctx)
{
	struct dpusim_tm_mr *mr;
	unsigned long idx;

	mutex_lock(&ctx->lock);
	xa_for_each(&ctx->mrs, idx, mr)
		dpusim_tm_mr_unlink(ctx, mr);
	mutex_unlock(&ctx->lock);
}

/**
 * dpusim_tm_mr_range - the segment [@addr, @addr + @len) of a region
 * @mr: the region (the caller's reference is not taken over)
 * @addr: first address
 * @len: bytes
 * @seg: out
 *
 * Return: 0 or -EINVAL if the range leaves the region.
 */
int dpusim_tm_mr_range(struct dpusim_tm_mr *mr, u64 addr, u64 len,
		       struct dpusim_tm_seg *seg)
{
	if (addr < mr->iova || addr - mr->iova > mr->length ||
	    len > mr->length - (addr - mr->iova) || len > U32_MAX)
		return -EINVAL;
	seg->mr = mr;
	seg->off = addr - mr->iova;
	seg->len = len;
	return 0;
}

void dpusim_tm_sgl_put(struct dpusim_tm_sgl *sgl)
{
	u32 i;

	if (!sgl)
		return;
	for (i = 0; i < sgl->nr; i++)
		dpusim_tm_mr_put(sgl->seg[i].mr);
	kfree(sgl);
}

/**
 * dpusim_tm_sgl_get - resolve a user sg list against the context's regions
 * @ctx: the context whose regions the lkeys must name
 * @usgl: user pointer to struct dpusim_tm_sge[@nr]
 * @nr: entries, at most @max_sge
 * @max_sge: the object's limit
 * @access: access bits every region must grant
 *
 * Return: the list (holding a reference on each region) or an ERR_PTR:
 * -EINVAL (too many entries, unknown lkey, another context's region, a
 * range outside it, a message over DPUSIM_TM_MAX_MSG), -EACCES (access),
 * -EFAULT, -ENOMEM.
 */
struct dpusim_tm_sgl *dpusim_tm_sgl_get(struct dpusim_tm_ctx *ctx, u64 usgl,
					u32 nr, u32 max_sge, u32 access)
{
	struct dpusim_tm_sge sge[DPUSIM_TM_MAX_SGE];
	struct dpusim_tm_sgl *sgl;
	struct dpusim_tm_mr *mr;
	int ret = 0;
	u32 i;

	if (nr > max_sge)
		return ERR_PTR(-EINVAL);
	if (nr && copy_from_user(sge, u64_to_user_ptr(usgl),
				 array_size(nr, sizeof(*sge))))
		return ERR_PTR(-EFAULT);
	sgl = kzalloc(struct_size(sgl, seg, nr), GFP_KERNEL_ACCOUNT);
	if (!sgl)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < nr; i++) {
		mr = dpusim_tm_mr_lookup(ctx->tm, sge[i].lkey);
		if (!mr) {
			ret = -EINVAL;
			break;
		}
		if (mr->ctx != ctx)
			ret = -EINVAL;
		else if ((mr->access & access) != access)
			ret = -EACCES;
		else
			ret = dpusim_tm_mr_range(mr, sge[i].addr, sge[i].length,
						 &sgl->seg[i]);
		if (ret) {
			dpusim_tm_mr_put(mr);
			break;
		}
		sgl->nr = i + 1;
		sgl->bytes += sge[i].length;
	}
	if (!ret && sgl->bytes > DPUSIM_TM_MAX_MSG)
		ret = -EINVAL;
	if (ret) {
		dpusim_tm_sgl_put(sgl);
		return ERR_PTR(ret);
	}
	return sgl;
}

void dpusim_tm_iter_sgl(struct dpusim_tm_iter *it,
			const struct dpusim_tm_sgl *sgl)
{
	*it = (struct dpusim_tm_iter){ .seg = sgl->seg, .nr = sgl->nr };
}

void dpusim_tm_iter_seg(struct dpusim_tm_iter *it,
			const struct dpusim_tm_seg *seg)
{
	*it = (struct dpusim_tm_iter){ .seg = seg, .nr = 1 };
}

void dpusim_tm_iter_buf(struct dpusim_tm_iter *it, void *buf, u64 len)
{
	*it = (struct dpusim_tm_iter){ .kbuf = buf, .klen = len };
}

/**
 * dpusim_tm_iter_skip - advance a cursor without copying
 * @it: the cursor
 * @n: bytes; stops at the end
 */
void dpusim_tm_iter_skip(struct dpusim_tm_iter *it, u64 n)
{
	u64 left;

	if (it->kbuf) {
		it->pos += min(n, it->klen - it->pos);
		return;
	}
	while (n && it->i < it->nr) {
		left = it->seg[it->i].len - it->pos;
		if (n < left) {
			it->pos += n;
			return;
		}
		n -= left;
		it->i++;
		it->pos = 0;
	}
}

/*
 * The next piece of @it, at most @max bytes and never across a page: maps
 * it (kunmap_local() by the caller) and returns its length, 0 at the end.
 */
static size_t dpusim_tm_iter_map(struct dpusim_tm_iter *it, size_t max,
				 void **p)
{
	const struct dpusim_tm_seg *seg;
	u64 byte;
	size_t n;

	if (it->kbuf) {
		n = min_t(u64, max, it->klen - it->pos);
		*p = it->kbuf + it->pos;
		return n;
	}
	while (it->i < it->nr && it->pos == it->seg[it->i].len) {
		it->i++;
		it->pos = 0;
	}
	if (it->i == it->nr)
		return 0;
	seg = &it->seg[it->i];
	byte = seg->mr->first_off + seg->off + it->pos;
	n = min_t(u64, seg->len - it->pos, PAGE_SIZE - offset_in_page(byte));
	n = min(n, max);
	*p = kmap_local_page(seg->mr->pages[byte >> PAGE_SHIFT]) +
		offset_in_page(byte);
	return n;
}

static void dpusim_tm_iter_unmap(struct dpusim_tm_iter *it, void *p)
{
	if (!it->kbuf)
		kunmap_local(p);
}

/**
 * dpusim_tm_copy - copy from one cursor to another
 * @dst: where to
 * @src: where from
 * @len: bytes wanted
 *
 * Both cursors advance; the copy stops at the end of either.
 *
 * Return: bytes copied.
 */
u64 dpusim_tm_copy(struct dpusim_tm_iter *dst, struct dpusim_tm_iter *src,
		   u64 len)
{
	u64 done = 0;

	while (done < len) {
		size_t want = min_t(u64, len - done, PAGE_SIZE);
		void *s, *d;
		size_t n;

		n = dpusim_tm_iter_map(src, want, &s);
		if (!n)
			break;
		n = dpusim_tm_iter_map(dst, n, &d);
		if (!n) {
			dpusim_tm_iter_unmap(src, s);
			break;
		}
		memcpy(d, s, n);
		dpusim_tm_iter_unmap(dst, d);
		dpusim_tm_iter_unmap(src, s);
		src->pos += n;
		dst->pos += n;
		done += n;
		if (!(done & (SZ_1M - 1)))
			cond_resched();
	}
	return done;
}
