/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The transfer engine (xfer.c): a checked transfer's walk over its
 * blocks, its copy order, its pinned user pages, the memory pages a write
 * needs, and the copy.  The engine calls only what is below it (mram.c,
 * pin.c, a stream's registered buffer); the callers (xfer_ioctl.c, the
 * asynchronous queue) check the transfer against the rank's state and
 * resolve a stream's memory and buffer first.
 */
#ifndef DPUSIM_XFER_H
#define DPUSIM_XFER_H

#include "dpusim.h"

/* Walks a DPU's blocks, cut so that at most a given total is produced. */
struct dpusim_walk {
	const struct dpusim_block *blk;
	const struct dpusim_block *end;
	u64 left;
};

void dpusim_walk_init(struct dpusim_walk *w, const struct dpusim_block *blocks,
		      u32 nr_blocks, u64 limit);
bool dpusim_walk_next(struct dpusim_walk *w, u64 *addr, u64 *len);
/*
 * The engine moves the pieces of a call round-robin over its DPUs (see
 * xfer.c): one cursor per DPU of the call.
 */
struct dpusim_cursor {
	struct dpusim_walk w;
	u64 off;		/* the DPU's next memory offset */
	struct dpusim_mem *mem;
	pgoff_t page_idx;	/* which page of @mem @page is */
	struct page *page;	/* the last page looked up, NULL for a hole */
};

/* The chunks of a copy on two CPUs (xfer.c) */
#define DPUSIM_XFER_CHUNKS	8

/**
 * struct dpusim_xfer_share - the first piece of a copy, in chunks that
 * other CPUs may take while the copier takes them too (xfer.c)
 * @cur: the piece's DPU side at its start (each chunk copies it)
 * @orig: the order's cursor of that piece, moved past it at the end
 * @pages: the user page holding the piece's first byte, then the next
 * @addr: the piece's user address
 * @len: its bytes; 0: no piece
 * @last: dpusim_piece_pages()'s state after the piece, for the rest
 * @nr: likewise
 * @to_mem: the direction
 * @next: the next chunk to take
 * @helpers: the CPUs other than the copier's copying chunks right now
 */
struct dpusim_xfer_share {
	struct dpusim_cursor cur;
	struct dpusim_cursor *orig;
	struct page **pages;
	u64 addr;
	u64 len;
	u64 last;
	unsigned long nr;
	bool to_mem;
	atomic_t next;
	atomic_t helpers;
};

struct dpusim_order {
	struct dpusim_cursor *c;	/* one per DPU of the call */
	u32 *act;		/* cursors with pieces left, in DPU order */
	u32 nr_act;
	u32 pos;		/* next entry of act in this round */
	u32 kept;		/* entries of act kept in this round */
};

/**
 * struct dpusim_xfer_pin - a checked transfer with its user pages pinned
 * @rank: the rank
 * @x: the header
 * @dpus: x.nr_dpus entries
 * @blocks: x.nr_blocks entries
 * @bytes: bytes the blocks move
 * @pad: bytes of zero padding (to the DPUs, without a length check)
 * @dpu_max: the most bytes one DPU of the call moves (to the DPUs: its
 *           blocks and its padding, @x.length)
 * @modeled_ns: the call's time on real hardware (xfer_model.c), set by
 *              the caller once checked
 * @o: the copy order
 * @nr_orders: copies of @o's arrays: DPUSIM_XFER_CHUNKS for a synchronous
 *             copy on two CPUs (one per chunk), else 1
 * @pages: the user page of each piece, in copy order (a page may repeat)
 * @upages: the distinct user pages, each pinned once; @pages itself when
 *          the copy order visits the pages in increasing order
 * @npinned: entries of @upages pinned
 * @charge: the pinned pages, charged to the caller and the rank
 * @smem: with DPUSIM_XFER_STREAM: the stream's memory, set by the caller
 * @sbuf: with DPUSIM_XFER_STREAM_BUF and bytes to move: the registered
 *        buffer whose pages @pages names (none pinned per move), set by
 *        the caller with a reference that dpusim_xfer_pin_user() takes
 * @borrowed: @pages points into @sbuf's own array (the pieces are its
 *            pages in order, one after the other): nothing allocated
 * @c1: @o's cursor array for one DPU copied on one CPU (not allocated)
 * @act1: @o's act array, likewise
 *
 * Not to be copied once dpusim_xfer_pin_user() has run: @o may point
 * into it.
 */
struct dpusim_xfer_pin {
	struct dpusim_rank *rank;
	struct dpusim_xfer x;
	const struct dpusim_xfer_dpu *dpus;
	const struct dpusim_block *blocks;
	u64 bytes;
	u64 pad;
	u64 dpu_max;
	u64 modeled_ns;
	struct dpusim_order o;
	u32 nr_orders;
	struct page **pages;
	struct page **upages;
	unsigned long npinned;
	struct dpusim_charge charge;
	struct dpusim_mem *smem;
	struct dpusim_stream_buf *sbuf;
	bool borrowed;
	struct dpusim_cursor c1;
	u32 act1;
};

/*
 * A transfer whose lists (DPUs and blocks) take at most this many bytes
 * copies them onto the stack, and an asynchronous one keeps them in its
 * job's allocation: a stream move (one DPU, one block) allocates once.
 */
#define DPUSIM_XFER_SMALL_LISTS	128

int dpusim_xfer_dpu_bytes(const struct dpusim_xfer *x,
			  const struct dpusim_block *blocks, u32 nr,
			  u64 *bytes);
int dpusim_xfer_pin_user(struct dpusim_rank *rank, struct dpusim_xfer_pin *p);
int dpusim_xfer_populate(struct dpusim_rank *rank, struct dpusim_xfer_pin *p);
void dpusim_xfer_copy(struct dpusim_rank *rank, struct dpusim_xfer_pin *p);
bool dpusim_xfer_share_begin(struct dpusim_rank *rank, struct dpusim_xfer_pin *p,
			     struct dpusim_xfer_share *sh);
bool dpusim_xfer_share_copy_one(struct dpusim_xfer_share *sh);
void dpusim_xfer_share_copy(struct dpusim_xfer_share *sh);
void dpusim_xfer_share_end(struct dpusim_rank *rank, struct dpusim_xfer_pin *p,
			   struct dpusim_xfer_share *sh);
void dpusim_xfer_unpin(struct dpusim_xfer_pin *p, bool dirty);

/*
 * xfer_model.c: the modeled time of one call on real hardware, whose
 * table covers 1 .. DPUSIM_XFER_MODEL_DPUS DPUs (the hardware's rank)
 */
#define DPUSIM_XFER_MODEL_DPUS	64U

u64 dpusim_xfer_model_ns(bool from_dpu, bool wram, u64 dpu_bytes, u32 nr_dpus);

/* Count a finished call's guest time @guest_ns and modeled time. */
static inline void dpusim_xfer_count_time(struct dpusim_rank *rank,
					  const struct dpusim_xfer_pin *p,
					  u64 guest_ns)
{
	struct dpusim_xfer_stats *s = &rank->stats;
	bool from = p->x.flags & DPUSIM_XFER_FROM_DPU;

	atomic64_add(guest_ns, from ? &s->guest_ns_from_dpu : &s->guest_ns_to_dpu);
	atomic64_add(p->modeled_ns,
		     from ? &s->modeled_ns_from_dpu : &s->modeled_ns_to_dpu);
}

#endif /* DPUSIM_XFER_H */
