/* SPDX-License-Identifier: MIT */
/*
 * dri_plan.h - a DRI distribution's transfer plan (shared/design/dri.md):
 * for each DPU of a grid, the host byte ranges whose concatenation is the
 * DPU's local block laid out in a chosen dimension order.  A scatter
 * copies them in order into the DPU's buffer; a gather writes the buffer
 * back through them.  Pure functions (tests/unit/test_dri_plan.c).
 */
#ifndef DPUSIM_DRI_PLAN_H
#define DPUSIM_DRI_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dri_part.h"

#define DRI_MAX_DIMS 4

/* A global array distributed over a grid of DPUs */
struct dri_shape {
	unsigned int ndims;			/* 1 .. DRI_MAX_DIMS */
	uint64_t n[DRI_MAX_DIMS];		/* elements per dimension (row-major) */
	uint32_t grid[DRI_MAX_DIMS];		/* parts per dimension; DPU = row-major index */
	struct dri_dim_part dim[DRI_MAX_DIMS];
	size_t elem;				/* bytes per element */
	/* the local block's layout: order[0] the outermost dimension */
	unsigned int order[DRI_MAX_DIMS];
};

/* Called for each host range, in the local block's order */
typedef int (*dri_seg_fn)(void *ctx, uint64_t host_off, uint64_t len);

/*
 * Walk DPU @dpu's local block (with its overlaps when @overlap) in the
 * layout's order, calling @fn once per run of bytes contiguous in the host
 * array.  Returns 0, or what @fn returned when not 0.
 */
int dri_plan_walk(const struct dri_shape *s, uint32_t dpu, bool overlap, dri_seg_fn fn,
		  void *ctx);

/* Called for each host range, with whether the DPU owns its elements */
typedef int (*dri_seg_owned_fn)(void *ctx, uint64_t host_off, uint64_t len, bool owned);

/*
 * The same walk of DPU @dpu's local block with its overlaps, with the runs
 * split where ownership changes: @owned is true for the elements the DPU
 * owns, false for those of its overlaps (owned by a neighbour).
 */
int dri_plan_walk_owned(const struct dri_shape *s, uint32_t dpu, dri_seg_owned_fn fn,
			void *ctx);

/* Elements of DPU @dpu's local block */
uint64_t dri_local_elems(const struct dri_shape *s, uint32_t dpu, bool overlap);

/* DPUs of the grid */
uint32_t dri_grid_size(const struct dri_shape *s);

#endif /* DPUSIM_DRI_PLAN_H */
