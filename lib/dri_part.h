/* SPDX-License-Identifier: MIT */
/*
 * dri_part.h - the partition arithmetic of the DRI layer (shared/design/dri.md):
 * which elements of each dimension each part owns, with and without its
 * overlaps, for block, block-cyclic and whole dimensions, and the min/max
 * constraints.  Pure functions: no DPU, no allocation (host unit tests:
 * tests/unit/test_dri_part.c).
 */
#ifndef DPUSIM_DRI_PART_H
#define DPUSIM_DRI_PART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum dri_dim_kind {
	DRI_DIM_BLOCK,		/* contiguous, balanced: parts differ by at most 1 */
	DRI_DIM_BLOCK_CYCLIC,	/* blocks of @block elements dealt round-robin */
	DRI_DIM_WHOLE,		/* indivisible: one part owns all of it */
};

/* How one dimension is partitioned (the seed's 4-tuple and kind) */
struct dri_dim_part {
	enum dri_dim_kind kind;
	uint64_t block;		/* DRI_DIM_BLOCK_CYCLIC: elements per block */
	uint64_t left_overlap;	/* elements before each owned range */
	uint64_t right_overlap;	/* elements after it */
	uint64_t min;		/* elements each part must own, at least */
	uint64_t max;		/* at most; 0: no limit */
};

/* Elements [start, end) of a dimension */
struct dri_range {
	uint64_t start, end;
};

/*
 * Check @d over a dimension of @n elements split into @nparts parts:
 * 0, or -EINVAL with a message in @msg (naming dimension @dim) when the
 * kind cannot split it so (a whole dimension over more than one part, a
 * block size of 0) or a part would own fewer than min or more than max
 * elements.
 */
int dri_dim_check(const struct dri_dim_part *d, unsigned int dim, uint64_t n,
		  uint32_t nparts, char *msg, size_t msg_len);

/* Elements part @p owns (no overlap) */
uint64_t dri_dim_owned(const struct dri_dim_part *d, uint64_t n, uint32_t nparts,
		       uint32_t p);

/*
 * The ranges part @p owns, in order, with the overlaps when @overlap
 * (each owned range widened by the overlaps, clipped to [0, @n); ranges
 * that then touch or overlap are merged).  Writes at most @max ranges to
 * @out; returns how many there are (may exceed @max).
 */
uint64_t dri_dim_ranges(const struct dri_dim_part *d, uint64_t n, uint32_t nparts,
			uint32_t p, bool overlap, struct dri_range *out, uint64_t max);

/* Elements in those ranges, all together (no allocation) */
uint64_t dri_dim_local_len(const struct dri_dim_part *d, uint64_t n, uint32_t nparts,
			   uint32_t p, bool overlap);

/* The part that owns element @i (no overlap) */
uint32_t dri_dim_owner(const struct dri_dim_part *d, uint64_t n, uint32_t nparts,
		       uint64_t i);

#endif /* DPUSIM_DRI_PART_H */
