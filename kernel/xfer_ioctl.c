// SPDX-License-Identifier: GPL-2.0
/*
 * DPUSIM_IOCTL_XFER: a transfer descriptor checked whole before anything
 * else, then run synchronously or queued (DPUSIM_XFER_ASYNC) over the
 * transfer engine (xfer.c).  The checks against the rank's state (a DPU
 * running, a stream's core and cursor) and the resolution of a stream's
 * memory and buffer happen here, under the rank's state_lock, so that the
 * engine and the queue below call nothing above them.
 */
#include <kunit/visibility.h>
#include <linux/bitmap.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "xfer.h"
#include "trace.h"

#define DPUSIM_XFER_FLAGS \
	(DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_NO_LENGTH_CHECK | \
	 DPUSIM_XFER_WRAM | DPUSIM_XFER_ASYNC | DPUSIM_XFER_STREAM |	\
	 DPUSIM_XFER_STREAM_BUF)

/* What can be checked before the DPU and block lists are copied in. */
static int dpusim_xfer_check_header(const struct dpusim_rank *rank,
				    const struct dpusim_xfer *x)
{
	struct dpusim_mem *mem;
	u64 end, size;
	u32 align;

	if (x->flags & ~DPUSIM_XFER_FLAGS || x->__reserved ||
	    (x->flags & DPUSIM_XFER_STREAM_BUF && !(x->flags & DPUSIM_XFER_STREAM)))
		return -EINVAL;
	if (x->flags & DPUSIM_XFER_STREAM) {
		mem = dpusim_stream_mem((struct dpusim_rank *)rank, x->stream);
		if (!mem)
			return -ENOENT;
		if (x->flags & (DPUSIM_XFER_WRAM | DPUSIM_XFER_NO_LENGTH_CHECK) ||
		    x->nr_dpus != 1)
			return -EINVAL;
		align = 1;
		size = mem->size;
	} else {
		align = x->flags & DPUSIM_XFER_WRAM ? DPUSIM_WRAM_ALIGN :
						       DPUSIM_MRAM_ALIGN;
		size = x->flags & DPUSIM_XFER_WRAM ? rank->wram_size :
						      rank->mram_size;
	}
	if (!IS_ALIGNED(x->offset, align) || !IS_ALIGNED(x->length, align))
		return -EINVAL;
	if (x->nr_dpus > rank->nr_dpus || x->nr_blocks > DPUSIM_XFER_MAX_BLOCKS)
		return -E2BIG;
	if (check_add_overflow(x->offset, x->length, &end) || end > size)
		return -EOVERFLOW;
	return 0;
}

/**
 * dpusim_xfer_check_locked - what a transfer needs of the rank's state
 * @rank: the rank, its state_lock held
 * @x: the header
 * @dpus: its DPUs
 *
 * Return: 0, -EBUSY (a DPU of it RUNNING, or a stream's core), or a
 * stream move's errno.
 */
int dpusim_xfer_check_locked(struct dpusim_rank *rank,
			     const struct dpusim_xfer *x,
			     const struct dpusim_xfer_dpu *dpus)
{
	int ret;

	if (x->flags & DPUSIM_XFER_STREAM) {
		ret = dpusim_stream_core_check(rank, dpus[0].dpu, NULL);
		return ret ?: dpusim_stream_move_check(rank, x, dpus[0].dpu);
	}
	return dpusim_run_check_xfer(rank, dpus, x->nr_dpus);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_xfer_check_locked);

/**
 * dpusim_xfer_check - check a whole transfer descriptor
 * @rank: the rank
 * @x: the header
 * @dpus: x->nr_dpus entries
 * @blocks: x->nr_blocks entries
 * @moved: out, bytes the blocks move
 * @pad: out, bytes of zero padding the call writes
 * @dpu_max: out, the most bytes one DPU moves (to the DPUs: @x->length,
 *           the blocks and the padding; 0 without DPUs)
 *
 * Return: 0 or the errno documented at struct dpusim_xfer.
 */
int dpusim_xfer_check(const struct dpusim_rank *rank,
		      const struct dpusim_xfer *x,
		      const struct dpusim_xfer_dpu *dpus,
		      const struct dpusim_block *blocks, u64 *moved, u64 *pad,
		      u64 *dpu_max)
{
	DECLARE_BITMAP(seen, DPUSIM_MAX_DPUS);
	bool to_mem = !(x->flags & DPUSIM_XFER_FROM_DPU);
	u64 bytes, total = 0, zeros = 0, most = 0;
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
		cond_resched();
		total += bytes;
		if (total > DPUSIM_XFER_MAX_BYTES)
			return -E2BIG;
		/* bytes <= length; below it only with NO_LENGTH_CHECK */
		if (to_mem)
			zeros += x->length - bytes;
		if (zeros > DPUSIM_XFER_MAX_PAD_BYTES)
			return -E2BIG;
		most = max(most, to_mem ? x->length : bytes);
		first += dpus[i].nr_blocks;
	}
	if (first != x->nr_blocks)
		return -EINVAL;
	*moved = total;
	*pad = zeros;
	*dpu_max = most;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_xfer_check);

/*
 * A stream move's memory and registered buffer, for the engine: under
 * state_lock, once dpusim_xfer_check_locked() passed.  The buffer's
 * reference goes to @p (dpusim_xfer_unpin() drops it).
 */
static int dpusim_xfer_resolve(struct dpusim_rank *rank,
			       struct dpusim_xfer_pin *p)
{
	struct dpusim_stream_buf *b;

	if (!(p->x.flags & DPUSIM_XFER_STREAM))
		return 0;
	p->smem = dpusim_stream_mem(rank, p->x.stream);
	if (!p->smem)
		return -ENOENT;
	if (!(p->x.flags & DPUSIM_XFER_STREAM_BUF) || !p->bytes)
		return 0;
	b = dpusim_stream_buf_get(rank, &p->x);
	if (IS_ERR(b))
		return PTR_ERR(b);
	p->sbuf = b;
	return 0;
}

/*
 * The asynchronous sequence: everything the synchronous one does before
 * the copy, under state_lock, then the job goes on the rank's queue
 * (async.c), which copies, unpins and counts it done.  Every error comes
 * back here, with nothing changed.  With @taken, see dpusim_xfer_exec().
 */
static int dpusim_xfer_submit(struct dpusim_rank *rank,
			      const struct dpusim_xfer_pin *src, bool *taken)
{
	struct dpusim_xfer_pin *p = dpusim_async_job_new(src, taken);
	int ret;

	if (!p)
		return -ENOMEM;
	ret = mutex_lock_interruptible(&rank->state_lock);
	if (ret)
		goto err_drop;
	ret = dpusim_xfer_check_locked(rank, &p->x, p->dpus);
	if (!ret)	/* room before pinning... */
		ret = dpusim_async_room(rank, p);
	if (!ret)
		ret = dpusim_xfer_resolve(rank, p);
	if (ret)
		goto err_unlock;
	ret = dpusim_xfer_pin_user(rank, p);
	if (ret)
		goto err_unlock;
	ret = dpusim_async_room(rank, p);	/* ...and with its pages */
	if (!ret)
		ret = dpusim_xfer_populate(rank, p);
	if (ret) {
		dpusim_xfer_unpin(p, false);
		goto err_unlock;
	}
	if (p->x.flags & DPUSIM_XFER_STREAM)
		dpusim_stream_move_done(rank, &p->x);	/* the cursor moves now */
	dpusim_async_queue(rank, p);
	mutex_unlock(&rank->state_lock);
	if (taken)
		*taken = true;
	return 0;

err_unlock:
	mutex_unlock(&rank->state_lock);
err_drop:
	dpusim_async_job_drop(p, taken);
	return ret;
}

/*
 * The synchronous sequence: queued transfers of the rank go first, then,
 * under state_lock, check against the rank's state, pin, populate, copy.
 */
static int dpusim_xfer_sync(struct dpusim_rank *rank, struct dpusim_xfer_pin *p)
{
	const struct dpusim_xfer *x = &p->x;
	u64 t0, dt;
	int ret;

	ret = dpusim_async_wait_idle(rank, 0);
	if (ret)
		return ret;
	ret = mutex_lock_interruptible(&rank->state_lock);
	if (ret)
		return ret;
	t0 = ktime_get_ns();
	ret = dpusim_xfer_check_locked(rank, x, p->dpus);
	if (!ret)
		ret = dpusim_xfer_resolve(rank, p);
	if (!ret)
		ret = dpusim_xfer_pin_user(rank, p);
	if (!ret) {
		ret = dpusim_xfer_populate(rank, p);
		if (!ret) {
			dpusim_xfer_copy(rank, p);
			if (x->flags & DPUSIM_XFER_STREAM)
				dpusim_stream_move_done(rank, x);
		}
		dpusim_xfer_unpin(p, !ret);
	}
	mutex_unlock(&rank->state_lock);
	if (!ret) {
		dt = ktime_get_ns() - t0;
		dpusim_xfer_count_time(rank, p, dt);
		trace_dpusim_xfer(rank->index, x->nr_dpus, x->nr_blocks, p->bytes,
				  x->flags & DPUSIM_XFER_FROM_DPU, false, dt,
				  p->modeled_ns);
	}
	return ret;
}

/*
 * dpusim_xfer_run() below; with @taken, the lists are kvmalloc'ed and a
 * queued asynchronous transfer takes them (*@taken true).
 */
static int dpusim_xfer_exec(struct dpusim_rank *rank,
			    const struct dpusim_xfer *x,
			    const struct dpusim_xfer_dpu *dpus,
			    const struct dpusim_block *blocks, bool *taken)
{
	struct dpusim_xfer_pin p = {
		.x = *x,
		.dpus = dpus,
		.blocks = blocks,
	};
	int ret;

	ret = dpusim_xfer_check(rank, x, dpus, blocks, &p.bytes, &p.pad,
				&p.dpu_max);
	if (ret || !x->nr_dpus)
		return ret;
	p.modeled_ns = dpusim_xfer_model_ns(x->flags & DPUSIM_XFER_FROM_DPU,
					    x->flags & DPUSIM_XFER_WRAM,
					    p.dpu_max, x->nr_dpus);
	if (x->flags & DPUSIM_XFER_ASYNC)
		return dpusim_xfer_submit(rank, &p, taken);
	return dpusim_xfer_sync(rank, &p);
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
 * populated (async.c); without it, queued transfers of the rank go first,
 * then, under the rank's state_lock, pin, populate, copy.
 *
 * Return: 0, or an errno of struct dpusim_xfer with nothing changed.
 */
int dpusim_xfer_run(struct dpusim_rank *rank, const struct dpusim_xfer *x,
		    const struct dpusim_xfer_dpu *dpus,
		    const struct dpusim_block *blocks)
{
	return dpusim_xfer_exec(rank, x, dpus, blocks, NULL);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_xfer_run);

/* A kvmalloc'ed, memcg-charged copy of @n bytes of user memory. */
static void *dpusim_memdup_user(u64 uptr, size_t n)
{
	void *p = kvmalloc(n, GFP_KERNEL_ACCOUNT);

	if (!p)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(p, u64_to_user_ptr(uptr), n)) {
		kvfree(p);
		return ERR_PTR(-EFAULT);
	}
	return p;
}

/*
 * A call with a few DPUs and blocks (a stream move: one and one): its
 * lists are copied onto the stack, and an asynchronous one's job copies
 * them into its own allocation (dpusim_async_job_new()).
 */
static int dpusim_xfer_user_small(struct dpusim_rank *rank,
				  const struct dpusim_xfer *x,
				  size_t dpus_len, size_t blocks_len)
{
	u64 lists[DPUSIM_XFER_SMALL_LISTS / sizeof(u64)];
	struct dpusim_block *blocks = (void *)((u8 *)lists + dpus_len);

	if (copy_from_user(lists, u64_to_user_ptr(x->dpus), dpus_len) ||
	    copy_from_user(blocks, u64_to_user_ptr(x->blocks), blocks_len))
		return -EFAULT;
	return dpusim_xfer_exec(rank, x, (void *)lists, blocks, NULL);
}

/**
 * dpusim_xfer_user - DPUSIM_IOCTL_XFER after its header was copied in
 * @rank: the rank
 * @x: the header
 *
 * Return: 0 or the errno documented at struct dpusim_xfer.
 */
int dpusim_xfer_user(struct dpusim_rank *rank, const struct dpusim_xfer *x)
{
	size_t dpus_len, blocks_len;
	struct dpusim_xfer_dpu *dpus;
	struct dpusim_block *blocks;
	bool taken = false;
	int ret;

	/* Bound the counts before allocating anything for them. */
	ret = dpusim_xfer_check_header(rank, x);
	if (ret)
		return ret;

	dpus_len = array_size(x->nr_dpus, sizeof(*dpus));
	blocks_len = array_size(x->nr_blocks, sizeof(*blocks));
	/* both multiples of 8: the blocks stay aligned after the DPUs */
	if (dpus_len + blocks_len <= DPUSIM_XFER_SMALL_LISTS)
		return dpusim_xfer_user_small(rank, x, dpus_len, blocks_len);

	dpus = dpusim_memdup_user(x->dpus, dpus_len);
	if (IS_ERR(dpus))
		return PTR_ERR(dpus);
	blocks = dpusim_memdup_user(x->blocks, blocks_len);
	if (IS_ERR(blocks)) {
		ret = PTR_ERR(blocks);
		goto out_dpus;
	}
	ret = dpusim_xfer_exec(rank, x, dpus, blocks, &taken);
	if (!taken)
		kvfree(blocks);
out_dpus:
	if (!taken)
		kvfree(dpus);
	return ret;
}
