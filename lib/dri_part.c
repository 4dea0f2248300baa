// SPDX-License-Identifier: MIT
/*
 * dri_part.c - the partition arithmetic of the DRI layer (dri_part.h).
 *
 * Block: part p owns [p * q + min(p, r), ...) with q = n / P, r = n % P
 * (the first r parts one more).  Block-cyclic with blocks of b: block j,
 * [j b, min(n, (j + 1) b)), belongs to part j mod P.  Whole: one part owns
 * the dimension.  Overlaps widen each owned range and are clipped at the
 * array's edges.
 */
#include <errno.h>
#include <stdio.h>

#include "dri_part.h"

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Block: the range of part @p */
static struct dri_range block_range(uint64_t n, uint32_t nparts, uint32_t p)
{
	uint64_t q = n / nparts, r = n % nparts;
	uint64_t start = p * q + min_u64(p, r);

	return (struct dri_range){ start, start + q + (p < r) };
}

uint64_t dri_dim_owned(const struct dri_dim_part *d, uint64_t n, uint32_t nparts,
		       uint32_t p)
{
	uint64_t blocks, full, last;
	struct dri_range rg;

	switch (d->kind) {
	case DRI_DIM_BLOCK:
		rg = block_range(n, nparts, p);
		return rg.end - rg.start;
	case DRI_DIM_BLOCK_CYCLIC:
		if (!d->block)
			return 0;
		blocks = (n + d->block - 1) / d->block;
		if (p >= blocks)
			return 0;
		/* blocks p, p + P, ...: the count, then the last one's length */
		full = (blocks - 1 - p) / nparts + 1;
		last = p + (full - 1) * nparts;
		return (full - 1) * d->block + min_u64(d->block, n - last * d->block);
	case DRI_DIM_WHOLE:
	default:
		return p == 0 ? n : 0;
	}
}

int dri_dim_check(const struct dri_dim_part *d, unsigned int dim, uint64_t n,
		  uint32_t nparts, char *msg, size_t msg_len)
{
	uint64_t own;
	uint32_t p;

	if (!nparts || !n) {
		snprintf(msg, msg_len, "dimension %u: %llu elements over %u parts", dim,
			 (unsigned long long)n, nparts);
		return -EINVAL;
	}
	if (d->kind == DRI_DIM_WHOLE && nparts != 1) {
		snprintf(msg, msg_len, "dimension %u is whole (indivisible) but spread over %u parts",
			 dim, nparts);
		return -EINVAL;
	}
	if (d->kind == DRI_DIM_BLOCK_CYCLIC && !d->block) {
		snprintf(msg, msg_len, "dimension %u: block-cyclic with blocks of 0 elements", dim);
		return -EINVAL;
	}
	if (d->kind > DRI_DIM_WHOLE) {
		snprintf(msg, msg_len, "dimension %u: unknown partition kind %d", dim, d->kind);
		return -EINVAL;
	}
	if (d->max && d->min > d->max) {
		snprintf(msg, msg_len, "dimension %u: min %llu is above max %llu", dim,
			 (unsigned long long)d->min, (unsigned long long)d->max);
		return -EINVAL;
	}
	for (p = 0; p < nparts; p++) {
		own = dri_dim_owned(d, n, nparts, p);
		if (own < d->min) {
			snprintf(msg, msg_len,
				 "dimension %u: part %u owns %llu elements, fewer than the min %llu",
				 dim, p, (unsigned long long)own, (unsigned long long)d->min);
			return -EINVAL;
		}
		if (d->max && own > d->max) {
			snprintf(msg, msg_len,
				 "dimension %u: part %u owns %llu elements, more than the max %llu",
				 dim, p, (unsigned long long)own, (unsigned long long)d->max);
			return -EINVAL;
		}
	}
	return 0;
}

/* Append @rg (widened by the overlaps when @overlap), merging with the last */
static void put_range(const struct dri_dim_part *d, uint64_t n, bool overlap,
		      struct dri_range rg, struct dri_range *out, uint64_t max,
		      uint64_t *count, struct dri_range *last, uint64_t *total)
{
	if (rg.start >= rg.end)
		return;
	if (overlap) {
		rg.start = rg.start > d->left_overlap ? rg.start - d->left_overlap : 0;
		rg.end = n - rg.end > d->right_overlap ? rg.end + d->right_overlap : n;
	}
	if (*count && rg.start <= last->end) {
		if (rg.end > last->end) {
			*total += rg.end - last->end;
			last->end = rg.end;
		}
		if (*count <= max)
			out[*count - 1] = *last;
		return;
	}
	*last = rg;
	*total += rg.end - rg.start;
	if (*count < max)
		out[*count] = rg;
	(*count)++;
}

static uint64_t dim_ranges(const struct dri_dim_part *d, uint64_t n, uint32_t nparts,
			   uint32_t p, bool overlap, struct dri_range *out, uint64_t max,
			   uint64_t *total)
{
	struct dri_range last = { 0, 0 };
	uint64_t count = 0, j, blocks;

	switch (d->kind) {
	case DRI_DIM_BLOCK:
		put_range(d, n, overlap, block_range(n, nparts, p), out, max, &count, &last, total);
		break;
	case DRI_DIM_BLOCK_CYCLIC:
		if (!d->block)
			break;
		blocks = (n + d->block - 1) / d->block;
		for (j = p; j < blocks; j += nparts)
			put_range(d, n, overlap,
				  (struct dri_range){ j * d->block, min_u64(n, (j + 1) * d->block) },
				  out, max, &count, &last, total);
		break;
	case DRI_DIM_WHOLE:
	default:
		if (p == 0)
			put_range(d, n, overlap, (struct dri_range){ 0, n }, out, max, &count,
				  &last, total);
		break;
	}
	return count;
}

uint64_t dri_dim_ranges(const struct dri_dim_part *d, uint64_t n, uint32_t nparts,
			uint32_t p, bool overlap, struct dri_range *out, uint64_t max)
{
	uint64_t total = 0;

	return dim_ranges(d, n, nparts, p, overlap, out, max, &total);
}

uint64_t dri_dim_local_len(const struct dri_dim_part *d, uint64_t n, uint32_t nparts,
			   uint32_t p, bool overlap)
{
	uint64_t total = 0;

	dim_ranges(d, n, nparts, p, overlap, NULL, 0, &total);
	return total;
}

uint32_t dri_dim_owner(const struct dri_dim_part *d, uint64_t n, uint32_t nparts,
		       uint64_t i)
{
	uint64_t q = n / nparts, r = n % nparts;

	switch (d->kind) {
	case DRI_DIM_BLOCK:
		/* the first r parts own q + 1 each */
		if (i < r * (q + 1))
			return (uint32_t)(i / (q + 1));
		return (uint32_t)(r + (i - r * (q + 1)) / q);
	case DRI_DIM_BLOCK_CYCLIC:
		return d->block ? (uint32_t)((i / d->block) % nparts) : 0;
	case DRI_DIM_WHOLE:
	default:
		return 0;
	}
}
