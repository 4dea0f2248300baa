/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the transfer suites (dpusim_xfer, dpusim_async): a rank of
 * four small DPUs with its own budget, and eight pages of user memory
 * (kunit_vm_mmap) holding a pattern in the first half and 0xee in the
 * second, mirrored in @kbuf.
 */
#ifndef _DPUSIM_XFER_FIXTURE_H
#define _DPUSIM_XFER_FIXTURE_H

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/workqueue.h>

#include "../dpusim.h"

#define XFER_UMEM_PAGES	8
#define XFER_UMEM_HALF	(XFER_UMEM_PAGES * PAGE_SIZE / 2)

struct xfer_fixture {
	struct dpusim_budget budget;
	struct dpusim_rank rank;
	u8 __user *umem;
	u8 *kbuf;
};

extern const struct dpusim_geometry xfer_fixture_geo;

int xfer_fixture_init(struct kunit *test);
void xfer_fixture_exit(struct kunit *test);
u64 xfer_uaddr(struct xfer_fixture *t, size_t off);
void xfer_mem_rw(struct dpusim_mem *mem, u64 off, u8 *buf, size_t len,
		 bool to_mem);
void xfer_mram_read(struct xfer_fixture *t, u32 dpu, u64 off, u8 *out,
		    size_t len);
/*
 * A work item queued first on the rank's ordered workqueue: the rank's
 * asynchronous jobs wait behind it until unblock_rank().
 */
struct blocker {
	struct work_struct work;
	struct completion go;
};

void block_rank(struct xfer_fixture *t, struct blocker *b);
void unblock_rank(struct blocker *b);

/*
 * A rank of its own for the large copies (@nr_dpus DPUs of 256 KiB, a
 * budget of 4 MiB), two kernel buffers of @buf_len bytes (@want, @got)
 * and @umem_len bytes of user memory; torn down by xfer_big_fini().
 */
struct xfer_big {
	struct dpusim_budget budget;
	struct dpusim_rank rank;
	u8 *want;
	u8 *got;
	u8 __user *u;
	unsigned long pinned_vm;	/* current->mm's at the start */
};

struct xfer_big *xfer_big_init(struct kunit *test, u32 nr_dpus, size_t buf_len,
			       size_t umem_len);
void xfer_big_fini(struct kunit *test, struct xfer_big *b);

int xfer_run(struct xfer_fixture *t, u32 flags, u64 off, u64 len,
	     const struct dpusim_xfer_dpu *dpus, u32 nr_dpus,
	     const struct dpusim_block *blocks, u32 nr_blocks);

#endif /* _DPUSIM_XFER_FIXTURE_H */
