// SPDX-License-Identifier: GPL-2.0
/*
 * A core's registered token buffer: struct dpusim_stream_cmd @buf at
 * DPUSIM_IOCTL_STREAM_OPEN, used by DPUSIM_XFER_STREAM_BUF moves.
 *
 * A host thread acting as a core moves every token into or out of the
 * same two buffers; pinning them per move would put a pin and an unpin on
 * the critical path of every preload.  So the buffer is pinned once, at
 * the open, long-term and writable, and charged to the caller's
 * RLIMIT_MEMLOCK (mm->pinned_vm) as an RDMA memory region is
 * (ib_umem_get()); a move looks its pages up by offset.
 * The stream holds a reference until it is closed (or its rank's
 * ownership ends), each move that uses the pages one more until it is
 * done: the last one unpins and uncharges.
 */
#include <kunit/visibility.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "dpusim.h"

static void dpusim_stream_buf_free(struct kref *ref)
{
	struct dpusim_stream_buf *b = container_of(ref, typeof(*b), ref);

	if (b->charge.mm) {
		/* every move wrote through them as it pleased: dirty */
		unpin_user_pages_dirty_lock(b->pages, b->nr_pages, true);
		dpusim_uncharge(&b->charge);
	}
	kvfree(b->pages);
	kfree(b);
}

/**
 * dpusim_stream_buf_put - drop a reference to a registered buffer
 * @b: the buffer, or NULL
 */
void dpusim_stream_buf_put(struct dpusim_stream_buf *b)
{
	if (b)
		kref_put(&b->ref, dpusim_stream_buf_free);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_stream_buf_put);

/**
 * dpusim_stream_buf_register - pin a core's token buffer
 * @rank: the rank (its xfer.pinned_pages counts the buffer's pages)
 * @addr: the buffer, page aligned, in the caller's memory
 * @len: its bytes, 1 .. DPUSIM_STREAM_MAX_BUF
 *
 * Return: the buffer, with one reference; or ERR_PTR(-EINVAL, -E2BIG,
 * -EFAULT, -ENOMEM (also over RLIMIT_MEMLOCK) or -EINTR) with nothing
 * pinned or charged.
 */
struct dpusim_stream_buf *dpusim_stream_buf_register(struct dpusim_rank *rank,
						     u64 addr, u64 len)
{
	struct mm_struct *mm = current->mm;
	struct dpusim_stream_buf *b;
	u64 end;
	int ret;

	if (!len || !PAGE_ALIGNED(addr) || !mm)
		return ERR_PTR(-EINVAL);
	if (len > DPUSIM_STREAM_MAX_BUF)
		return ERR_PTR(-E2BIG);
	/* its whole pages: pin_user_pages_fast() would say EOVERFLOW */
	if (check_add_overflow(addr, (u64)PAGE_ALIGN(len), &end))
		return ERR_PTR(-EFAULT);
	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return ERR_PTR(-ENOMEM);
	kref_init(&b->ref);
	b->rank = rank;
	b->len = len;
	b->nr_pages = DIV_ROUND_UP(len, PAGE_SIZE);
	b->pages = kvmalloc_array(b->nr_pages, sizeof(*b->pages),
				  GFP_KERNEL_ACCOUNT);
	if (!b->pages) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = dpusim_charge(&b->charge, &rank->xfer.pinned_pages, b->nr_pages);
	if (ret)
		goto err_free;
	ret = dpusim_pin_longterm(addr, b->nr_pages, FOLL_WRITE, b->pages);
	if (ret)
		goto err_uncharge;
	return b;

err_uncharge:
	dpusim_uncharge(&b->charge);
err_free:
	kvfree(b->pages);
	kfree(b);
	return ERR_PTR(ret);
}

/**
 * dpusim_stream_buf_page - the page of a registered buffer at an offset
 * @b: the buffer
 * @off: an offset below @b->len
 *
 * Return: the page that holds byte @off.
 */
struct page *dpusim_stream_buf_page(const struct dpusim_stream_buf *b, u64 off)
{
	return b->pages[off >> PAGE_SHIFT];
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_stream_buf_page);
