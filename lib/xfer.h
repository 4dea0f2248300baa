/* SPDX-License-Identifier: MIT */
/*
 * xfer.h - the transfer engine behind dpu_copy_to, dpu_copy_from,
 * dpu_broadcast_to, dpu_push_xfer and dpu_push_sg_xfer (internal).
 *
 * Every transfer goes through the same steps:
 *
 *   1. targets   which DPUs of which ranks take part (the enabled DPUs of
 *                the set or subset), one struct dpusim_xfer_part per rank;
 *   2. resolve   symbol name -> MRAM offset, with the alignment and range
 *                checks (DPU_ERR_UNKNOWN_SYMBOL, DPU_ERR_INVALID_MRAM_ACCESS);
 *   3. gather    the host blocks of every DPU into the part's
 *                dpusim_xfer_dpu[] / dpusim_block[] arrays, exactly what
 *                DPUSIM_IOCTL_XFER takes (one rank per thread for sg);
 *   4. check     every part (sg rules) before any ioctl, so a refused call
 *                changes no DPU of any rank, and split each part into as
 *                few calls as the kernel's per-call limits allow
 *                (DPUSIM_XFER_MAX_BYTES, _BLOCKS, _PAD_BYTES, _PAGES);
 *   5. issue     one DPUSIM_IOCTL_XFER per call of each rank that has DPUs
 *                taking part (one per rank unless a rank's share is over
 *                a limit), the ranks in parallel, a rank's calls in DPU
 *                order (with DPUSIM_XFER_ASYNC for the ASYNC flags:
 *                dpusim.ko queues the copy).
 *
 * Steps 1-4 need no device: the unit tests run them on ranks built with
 * dpusim_rank_new(-1, ...).
 */
#ifndef DPUSIM_LIB_XFER_H
#define DPUSIM_LIB_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uapi/dpusim.h>

#include "internal.h"

struct dpusim_xfer_req;

/* One rank's share of a transfer: the arguments of one DPUSIM_IOCTL_XFER. */
struct dpusim_xfer_part {
	struct dpusim_xfer_req *req;	/* back pointer for the worker threads */
	struct dpu_rank_t *rank;
	uint32_t first;			/* DPUs [first, first + count) of rank */
	uint32_t count;

	uint32_t nr_dpus;		/* used entries of dpus[] */
	struct dpusim_xfer_dpu *dpus;	/* count entries */
	uint32_t nr_blocks;		/* used entries of blocks[] */
	uint32_t cap_blocks;
	struct dpusim_block *blocks;
	uint64_t bytes;			/* bytes the kernel will move */

	/*
	 * Step 4: the part's DPUSIM_IOCTL_XFER calls.  Call k moves the DPUs
	 * dpus[call_end[k - 1] .. call_end[k] - 1] (call 0 from dpus[0]) and
	 * their blocks, each call within every per-call limit.
	 */
	uint32_t nr_calls;
	uint32_t *call_end;
	uint32_t calls_done;		/* step 5: the calls that succeeded */

	/* result of gathering (step 3) or issuing (step 5) */
	dpu_error_t err;
	int sys_errno;			/* errno of the ioctl, 0 if none */
	char msg[256];			/* what went wrong, for the log */
};

struct dpusim_xfer_req {
	const char *fn;			/* API function, for messages */
	uint32_t kflags;		/* DPUSIM_XFER_* */
	uint64_t offset;		/* MRAM or WRAM offset: symbol + symbol_offset */
	uint64_t length;		/* bytes per DPU */
	uint32_t nr_parts;
	struct dpusim_xfer_part *parts;

	/* sg gathering context (dpusim_xfer_gather_sg) */
	get_block_func_t sg_f;
	void *sg_args;			/* the copy of get_block_t.args */
	uint32_t sg_max_blocks;
	bool sg_length_check;
	/*
	 * A DPU whose get_block gives no block is left out of the ioctl
	 * instead of taking part with none: to the DPU without the length
	 * check, taking part would zero its @length bytes.
	 */
	bool sg_skip_empty;

};

/*
 * Step 1: a request for the enabled DPUs of set (a set from dpu_alloc*, a
 * rank from DPU_RANK_FOREACH or a DPU from DPU_FOREACH). *props gets the
 * set's props. DPU_ERR_INVALID_DPU_SET / DPU_ERR_DPU_DISABLED /
 * DPU_ERR_SYSTEM, with a message naming fn.
 */
dpu_error_t dpusim_xfer_req_new(struct dpu_set_t set, const char *fn,
				struct dpusim_set_props **props,
				struct dpusim_xfer_req **req);

void dpusim_xfer_req_free(struct dpusim_xfer_req *req);

/*
 * Step 2: MRAM offset of symbol_name + symbol_offset for length bytes.
 * The set's loaded program is read under props->lock;
 * DPU_MRAM_HEAP_POINTER_NAME is the whole MRAM even without a program.
 */
dpu_error_t dpusim_xfer_resolve(struct dpusim_set_props *props,
				const char *fn, const char *symbol_name,
				uint32_t symbol_offset, size_t length,
				uint64_t *mram_offset);

/*
 * The same for MRAM or WRAM symbols: *wram tells which memory. WRAM
 * follows the SDK's 4-byte rule (DPU_ERR_INVALID_WRAM_ACCESS), MRAM 8.
 */
dpu_error_t dpusim_xfer_resolve_mem(struct dpusim_set_props *props,
				    const char *fn, const char *symbol_name,
				    uint32_t symbol_offset, size_t length,
				    uint64_t *offset, bool *wram);

/*
 * Range and alignment of symbol_offset/length inside a symbol of size bytes
 * at base of its memory (what names it: for messages).
 */
dpu_error_t dpusim_xfer_check_range(const char *fn, const char *what, bool wram,
				    uint64_t base, uint64_t size,
				    uint32_t symbol_offset, size_t length,
				    uint64_t *offset);

/* Step 3, one block per DPU: buf for every DPU (copy_to, broadcast, copy_from). */
dpu_error_t dpusim_xfer_gather_buffer(struct dpusim_xfer_req *req,
				      const void *buf);

/* Step 3, one block per DPU that has a prepared buffer (push_xfer). */
dpu_error_t dpusim_xfer_gather_prepared(struct dpusim_xfer_req *req);

/*
 * Step 3 for dpu_push_sg_xfer: copies get_block->args (args_size bytes),
 * calls get_block->f for each DPU (index in the whole set) and block
 * 0, 1, ... until false, at most max_blocks + 1 times per DPU; one thread
 * per rank when there are several. With length_check the blocks of each
 * DPU must add up to req->length. On error nothing is issued and the first
 * error in DPU_FOREACH order is logged and returned:
 * DPU_ERR_SG_TOO_MANY_BLOCKS, DPU_ERR_SG_LENGTH_MISMATCH,
 * DPU_ERR_INVALID_MEMORY_TRANSFER (2^32 - 1 blocks or more in a
 * rank), DPU_ERR_SYSTEM.
 */
dpu_error_t dpusim_xfer_gather_sg(struct dpusim_xfer_req *req,
				  const get_block_t *get_block,
				  uint32_t max_blocks, bool length_check);

/*
 * Step 4: split every part into calls within the kernel's per-call limits
 * (DPUSIM_XFER_MAX_BYTES moved, _MAX_BLOCKS, _MAX_PAD_BYTES of zero
 * padding, _MAX_PAGES pinned, counted as the pages each block spans: at
 * least what the kernel pins), greedily in DPU order: a call takes DPUs
 * until the next would pass a limit.  That is the fewest calls of
 * consecutive DPUs, and the fewest at all when the DPUs' shares are equal
 * (dpu_push_xfer, dpu_broadcast_to).  A DPU's share is never cut (one
 * call has one offset and length for all its DPUs): a DPU alone over a
 * limit is DPU_ERR_INVALID_MEMORY_TRANSFER, nothing issued.
 */
dpu_error_t dpusim_xfer_check_limits(struct dpusim_xfer_req *req);

/*
 * Step 5: the calls of every part with DPUs, the parts in parallel, a
 * part's calls in order; first error logged.  Each call changes nothing
 * if it fails, and a part stops at its first failed call: the DPUs of
 * its calls before it are done (written to MRAM, or their host blocks
 * written), those of the failed call and after it are unchanged, and the
 * message says which.  A part of one call fails as a whole.
 */
dpu_error_t dpusim_xfer_issue(struct dpusim_xfer_req *req);

/* errno of DPUSIM_IOCTL_XFER -> dpu_error_t (documented in dpu.h). */
dpu_error_t dpusim_xfer_errno_to_error(int err);

/*
 * One buffer to (or from: one-DPU sets) length bytes at offset of the MRAM
 * or WRAM of every enabled DPU of set, synchronously; no symbol, no
 * alignment rule of the API (the kernel's still apply). For dpu_load's
 * images and dpu_log_read.
 */
dpu_error_t dpusim_xfer_raw(struct dpu_set_t set, const char *fn, bool wram,
			    dpu_xfer_t dir, uint64_t offset, void *buf,
			    size_t length);

/*
 * dpu_push_sg_xfer for the library's own callers (DRI): the DPUs whose
 * get_block gives no block do not take part (their memory is untouched,
 * whatever the length check), and @max_blocks replaces the profile's
 * sgXferMaxBlocksPerDpu (the caller checked its own limit against it).
 */
dpu_error_t dpusim_push_sg_subset(struct dpu_set_t set, const char *fn, dpu_xfer_t dir,
				  const char *symbol, uint32_t symbol_offset, size_t length,
				  const get_block_t *get_block, uint32_t max_blocks,
				  bool length_check, bool async);

/* ------------------------------------------------------------ async.c */

/*
 * Issue req (fully gathered and checked) with DPUSIM_XFER_ASYNC: the
 * ioctls of each rank (one unless split), each queued by dpusim.ko, errors returned at once as by
 * dpusim_xfer_issue. Makes dpu_free sync the set first. The caller keeps
 * req (the kernel has its own copy of the lists).
 */
dpu_error_t dpusim_async_submit(struct dpusim_set_props *props,
				struct dpusim_xfer_req *req);

/*
 * DPUSIM_IOCTL_SYNC on every rank of the set: wait until the transfers
 * queued so far have run; return the first error of those jobs (the
 * kernel clears it), logged with fn.
 */
dpu_error_t dpusim_async_sync(struct dpusim_set_props *props, const char *fn);

#endif /* DPUSIM_LIB_XFER_H */
