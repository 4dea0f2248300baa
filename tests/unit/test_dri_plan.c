// SPDX-License-Identifier: MIT
/*
 * Unit tests of the DRI transfer plan (lib/dri_plan.c): for 1-D to 4-D
 * arrays, uneven sizes, block/block-cyclic/whole grids, with and without
 * overlaps, identity and permuted (transposed) layouts and element sizes
 * 1, 3, 8 and 24, the bytes a DPU's buffer gets through the plan are
 * exactly its elements in the layout's order (checked against a brute
 * force enumeration), and writing every DPU's buffer back through its
 * plan (no overlap) rebuilds the array.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dri_plan.h"
#include "unit.h"

struct sink {
	const uint8_t *host;
	uint8_t *buf;
	uint64_t pos, cap;
	uint64_t segs;
	int gather;		/* write buf back into host2 */
	uint8_t *host2;
};

static int seg(void *ctx, uint64_t off, uint64_t len)
{
	struct sink *k = ctx;

	if (k->pos + len > k->cap)
		return -1;
	if (k->gather)
		memcpy(k->host2 + off, k->buf + k->pos, len);
	else
		memcpy(k->buf + k->pos, k->host + off, len);
	k->pos += len;
	k->segs++;
	return 0;
}

/* The DPU's element indices in the layout's order, by brute force */
static uint64_t expected(const struct dri_shape *s, uint32_t dpu, bool overlap, uint64_t *out)
{
	uint64_t idx[DRI_MAX_DIMS] = { 0 }, n = 0, lin, stride;
	uint32_t coord[DRI_MAX_DIMS], d = dpu;
	struct dri_range rg[DRI_MAX_DIMS][64];
	uint64_t cnt[DRI_MAX_DIMS];
	unsigned int k, lvl;
	int j, in;

	for (k = s->ndims; k-- > 0;) {
		coord[k] = d % s->grid[k];
		d /= s->grid[k];
	}
	for (k = 0; k < s->ndims; k++)
		cnt[k] = dri_dim_ranges(&s->dim[k], s->n[k], s->grid[k], coord[k], overlap,
					rg[k], 64);
	/* every index tuple in layout order (order[ndims - 1] fastest) */
	for (;;) {
		bool mine = true;

		for (k = 0; k < s->ndims && mine; k++) {
			for (in = 0, j = 0; j < (int)cnt[k]; j++)
				in |= idx[k] >= rg[k][j].start && idx[k] < rg[k][j].end;
			mine = in;
		}
		if (mine) {
			for (lin = 0, stride = 1, k = s->ndims; k-- > 0;) {
				lin += idx[k] * stride;
				stride *= s->n[k];
			}
			out[n++] = lin;
		}
		for (lvl = s->ndims; lvl-- > 0;) {
			unsigned int dd = s->order[lvl];

			if (++idx[dd] < s->n[dd])
				break;
			idx[dd] = 0;
		}
		if (lvl == (unsigned int)-1)
			return n;
	}
}

static int check_shape(const struct dri_shape *s, char *why, size_t wl)
{
	uint64_t total = s->elem, i, b, n, e;
	uint32_t dpu, ndpu = dri_grid_size(s);
	uint8_t *host, *host2, *buf, *want;
	uint64_t *exp;
	int ov, bad = 0;
	unsigned int k;

	for (k = 0; k < s->ndims; k++)
		total *= s->n[k];
	host = malloc(total);
	host2 = calloc(1, total);
	buf = malloc(total);
	want = malloc(total);
	exp = malloc(total / s->elem * sizeof(*exp));
	if (!host || !host2 || !buf || !want || !exp)
		abort();
	for (b = 0; b < total; b++)
		host[b] = (uint8_t)(b * 7 + b / 251 + 1);
	for (ov = 0; ov < 2 && !bad; ov++)
		for (dpu = 0; dpu < ndpu && !bad; dpu++) {
			struct sink sk = { .host = host, .buf = buf, .cap = total };

			n = expected(s, dpu, ov, exp);
			if (n != dri_local_elems(s, dpu, ov)) {
				snprintf(why, wl, "DPU %u overlap %d: %llu elements, dri_local_elems %llu",
					 dpu, ov, (unsigned long long)n,
					 (unsigned long long)dri_local_elems(s, dpu, ov));
				bad = 1;
				break;
			}
			if (dri_plan_walk(s, dpu, ov, seg, &sk) || sk.pos != n * s->elem) {
				snprintf(why, wl, "DPU %u overlap %d: the plan moves %llu bytes, not %llu",
					 dpu, ov, (unsigned long long)sk.pos,
					 (unsigned long long)(n * s->elem));
				bad = 1;
				break;
			}
			for (e = 0; e < n; e++)
				memcpy(want + e * s->elem, host + exp[e] * s->elem, s->elem);
			if (memcmp(buf, want, n * s->elem)) {
				for (i = 0; buf[i] == want[i]; i++)
					;
				snprintf(why, wl, "DPU %u overlap %d: byte %llu of its buffer is wrong",
					 dpu, ov, (unsigned long long)i);
				bad = 1;
				break;
			}
			if (!ov) {
				sk.gather = 1;
				sk.host2 = host2;
				sk.pos = 0;
				dri_plan_walk(s, dpu, false, seg, &sk);
			}
		}
	if (!bad && memcmp(host, host2, total)) {
		snprintf(why, wl, "gathering every DPU's block did not rebuild the array");
		bad = 1;
	}
	free(host);
	free(host2);
	free(buf);
	free(want);
	free(exp);
	return bad;
}

static struct dri_dim_part B = { .kind = DRI_DIM_BLOCK };
static struct dri_dim_part C3 = { .kind = DRI_DIM_BLOCK_CYCLIC, .block = 3 };
static struct dri_dim_part W = { .kind = DRI_DIM_WHOLE };
static struct dri_dim_part BO = { .kind = DRI_DIM_BLOCK, .left_overlap = 1, .right_overlap = 2 };

struct tcase {
	const char *name;
	struct dri_shape s;
};

static const struct tcase cases[] = {
	{ "1-D 97 over 7, block", { 1, { 97 }, { 7 }, { { .kind = DRI_DIM_BLOCK } }, 4, { 0 } } },
	{ "1-D 100 over 8, block-cyclic(3), elements of 3 bytes",
	  { 1, { 100 }, { 8 }, { { .kind = DRI_DIM_BLOCK_CYCLIC, .block = 3 } }, 3, { 0 } } },
	{ "2-D 31 x 15 over 4 x 3, row-major, 4-byte", { 2, { 31, 15 }, { 4, 3 }, { { .kind = DRI_DIM_BLOCK } }, 4, { 0, 1 } } },
	{ "2-D 31 x 15 over 4 x 3, transposed layout, 8-byte",
	  { 2, { 31, 15 }, { 4, 3 }, { { .kind = DRI_DIM_BLOCK } }, 8, { 1, 0 } } },
	{ "2-D 16 x 16 rows to 8 DPUs (block x whole), transposed (corner turn), 4-byte",
	  { 2, { 16, 16 }, { 8, 1 }, { { .kind = DRI_DIM_BLOCK } }, 4, { 1, 0 } } },
	{ "2-D 11 x 7 over 3 x 2 with overlaps 1/2, 24-byte records",
	  { 2, { 11, 7 }, { 3, 2 }, { { .kind = DRI_DIM_BLOCK } }, 24, { 0, 1 } } },
	{ "3-D 5 x 4 x 3 over 2 x 2 x 1, layout (2, 0, 1), 1-byte",
	  { 3, { 5, 4, 3 }, { 2, 2, 1 }, { { .kind = DRI_DIM_BLOCK } }, 1, { 2, 0, 1 } } },
	{ "4-D 3 x 4 x 5 x 6 over 1 x 2 x 2 x 3, block-cyclic(3) last, 8-byte",
	  { 4, { 3, 4, 5, 6 }, { 1, 2, 2, 3 }, { { .kind = DRI_DIM_BLOCK } }, 8, { 0, 1, 2, 3 } } },
	{ "4-D 3 x 4 x 5 x 6 reversed layout with overlaps, 3-byte",
	  { 4, { 3, 4, 5, 6 }, { 3, 1, 2, 1 }, { { .kind = DRI_DIM_BLOCK } }, 3, { 3, 2, 1, 0 } } },
};

int main(void)
{
	char why[160];
	unsigned int c, k;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct dri_shape s = cases[c].s;

		/* dimension partitions per case */
		for (k = 0; k < s.ndims; k++)
			if (c >= 2)
				s.dim[k] = B;
		if (c == 4)
			s.dim[1] = W;
		if (c == 5)
			s.dim[0] = s.dim[1] = BO;
		if (c == 7)
			s.dim[3] = C3;
		if (c == 8)
			s.dim[0] = s.dim[2] = BO;
		why[0] = 0;
		UNIT_CHECK(cases[c].name, !check_shape(&s, why, sizeof(why)), "%s", why);
	}
	return unit_done();
}
