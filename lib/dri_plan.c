// SPDX-License-Identifier: MIT
/*
 * dri_plan.c - a DRI distribution's transfer plan (dri_plan.h).
 *
 * A DPU's local block is the product of its ranges in each dimension
 * (dri_part.c).  Its elements are visited in the layout's order, the last
 * of order[] fastest; consecutive host offsets are merged into one run, so
 * a packed row-major block gives one run per row of its innermost ranges
 * and a transposed one a run per element.
 */
#include <errno.h>
#include <stdlib.h>

#include "dri_plan.h"

uint32_t dri_grid_size(const struct dri_shape *s)
{
	uint32_t n = 1;
	unsigned int k;

	for (k = 0; k < s->ndims; k++)
		n *= s->grid[k];
	return n;
}

/* The DPU's coordinate in dimension @k of the grid */
static uint32_t grid_coord(const struct dri_shape *s, uint32_t dpu, unsigned int k)
{
	unsigned int j;

	for (j = s->ndims; j-- > k + 1;)
		dpu /= s->grid[j];
	return dpu % s->grid[k];
}

/* Its ranges in every dimension, allocated; counts in @cnt */
static int dpu_ranges(const struct dri_shape *s, uint32_t dpu, bool overlap,
		      struct dri_range *rg[DRI_MAX_DIMS], uint64_t cnt[DRI_MAX_DIMS])
{
	unsigned int k;
	uint32_t c;

	for (k = 0; k < s->ndims; k++) {
		c = grid_coord(s, dpu, k);
		cnt[k] = dri_dim_ranges(&s->dim[k], s->n[k], s->grid[k], c, overlap, NULL, 0);
		rg[k] = calloc(cnt[k] ? cnt[k] : 1, sizeof(*rg[k]));
		if (!rg[k]) {
			while (k--)
				free(rg[k]);
			return -ENOMEM;
		}
		dri_dim_ranges(&s->dim[k], s->n[k], s->grid[k], c, overlap, rg[k], cnt[k]);
	}
	return 0;
}

uint64_t dri_local_elems(const struct dri_shape *s, uint32_t dpu, bool overlap)
{
	uint64_t total = 1;
	unsigned int k;

	for (k = 0; k < s->ndims; k++)
		total *= dri_dim_local_len(&s->dim[k], s->n[k], s->grid[k], grid_coord(s, dpu, k),
					   overlap);
	return total;
}

struct walk {
	const struct dri_shape *s;
	struct dri_range *rg[DRI_MAX_DIMS];
	uint64_t cnt[DRI_MAX_DIMS];
	/* dri_plan_walk_owned(): the ranges the DPU owns (no overlap) */
	struct dri_range *own[DRI_MAX_DIMS];
	uint64_t own_cnt[DRI_MAX_DIMS];
	uint64_t stride[DRI_MAX_DIMS];	/* host elements per step of each dimension */
	uint64_t idx[DRI_MAX_DIMS];
	dri_seg_fn fn;
	dri_seg_owned_fn owned_fn;
	void *ctx;
	uint64_t run_off, run_len;	/* the run being merged, in bytes */
	bool run_owned;
};

static int flush(struct walk *w)
{
	if (!w->run_len)
		return 0;
	if (w->owned_fn)
		return w->owned_fn(w->ctx, w->run_off, w->run_len, w->run_owned);
	return w->fn(w->ctx, w->run_off, w->run_len);
}

static int emit(struct walk *w, uint64_t off, uint64_t len, bool owned)
{
	int r;

	if (w->run_len && w->run_off + w->run_len == off && w->run_owned == owned) {
		w->run_len += len;
		return 0;
	}
	r = flush(w);
	if (r)
		return r;
	w->run_off = off;
	w->run_len = len;
	w->run_owned = owned;
	return 0;
}

/* Is element @i of dimension @d owned (always, when not asked)? */
static bool owns(const struct walk *w, unsigned int d, uint64_t i)
{
	uint64_t r;

	if (!w->owned_fn)
		return true;
	for (r = 0; r < w->own_cnt[d]; r++)
		if (i >= w->own[d][r].start && i < w->own[d][r].end)
			return true;
	return false;
}

/*
 * Elements [@start, @end) of the innermost dimension @d, @base elements
 * into the host array: emitted in pieces of the same ownership.
 */
static int emit_range(struct walk *w, unsigned int d, uint64_t base, uint64_t start,
		      uint64_t end, bool owned)
{
	size_t e = w->s->elem;
	uint64_t i = start, next, r;
	bool in;
	int ret;

	while (i < end) {
		in = owns(w, d, i);
		next = end;
		for (r = 0; w->owned_fn && r < w->own_cnt[d]; r++) {
			/* the next boundary of an owned range after i */
			if (w->own[d][r].start > i && w->own[d][r].start < next)
				next = w->own[d][r].start;
			if (w->own[d][r].end > i && w->own[d][r].end < next)
				next = w->own[d][r].end;
		}
		ret = emit(w, (base + i) * e, (next - i) * e, owned && in);
		if (ret)
			return ret;
		i = next;
	}
	return 0;
}

/* Visit layout level @lvl (order[lvl]) and below; @owned: so far */
static int visit(struct walk *w, unsigned int lvl, bool owned)
{
	const struct dri_shape *s = w->s;
	unsigned int d = s->order[lvl], k;
	uint64_t r, i, off;
	bool in;
	int ret;

	for (r = 0; r < w->cnt[d]; r++) {
		if (lvl + 1 == s->ndims && d == s->ndims - 1) {
			/* innermost, and contiguous in the host: whole ranges */
			for (off = 0, k = 0; k + 1 < s->ndims; k++)
				off += w->idx[k] * w->stride[k];
			ret = emit_range(w, d, off, w->rg[d][r].start, w->rg[d][r].end, owned);
			if (ret)
				return ret;
			continue;
		}
		for (i = w->rg[d][r].start; i < w->rg[d][r].end; i++) {
			w->idx[d] = i;
			in = owned && owns(w, d, i);
			if (lvl + 1 < s->ndims) {
				ret = visit(w, lvl + 1, in);
			} else {
				for (off = 0, k = 0; k < s->ndims; k++)
					off += w->idx[k] * w->stride[k];
				ret = emit(w, off * s->elem, s->elem, in);
			}
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int walk(struct walk *w, uint32_t dpu, bool overlap)
{
	const struct dri_shape *s = w->s;
	unsigned int k;
	int ret;

	if (!s->ndims || s->ndims > DRI_MAX_DIMS || dpu >= dri_grid_size(s))
		return -EINVAL;
	ret = dpu_ranges(s, dpu, overlap, w->rg, w->cnt);
	if (ret)
		return ret;
	if (w->owned_fn) {
		ret = dpu_ranges(s, dpu, false, w->own, w->own_cnt);
		if (ret)
			goto out;
	}
	w->stride[s->ndims - 1] = 1;
	for (k = s->ndims - 1; k-- > 0;)
		w->stride[k] = w->stride[k + 1] * s->n[k + 1];
	ret = visit(w, 0, true);
	if (!ret)
		ret = flush(w);
	for (k = 0; w->owned_fn && k < s->ndims; k++)
		free(w->own[k]);
out:
	for (k = 0; k < s->ndims; k++)
		free(w->rg[k]);
	return ret;
}

int dri_plan_walk(const struct dri_shape *s, uint32_t dpu, bool overlap, dri_seg_fn fn,
		  void *ctx)
{
	struct walk w = { .s = s, .fn = fn, .ctx = ctx };

	return walk(&w, dpu, overlap);
}

int dri_plan_walk_owned(const struct dri_shape *s, uint32_t dpu, dri_seg_owned_fn fn,
			void *ctx)
{
	struct walk w = { .s = s, .owned_fn = fn, .ctx = ctx };

	return walk(&w, dpu, true);
}
