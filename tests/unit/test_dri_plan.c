// SPDX-License-Identifier: MIT
/*
 * Unit tests of the DRI transfer plan (lib/dri_plan.c): for 1-D to 4-D
 * arrays, uneven sizes, block/block-cyclic/whole grids, with and without
 * overlaps, identity and permuted (transposed) layouts and element sizes
 * 1, 3, 8 and 24, the bytes a DPU's buffer gets through the plan are
 * exactly its elements in the layout's order (checked against a brute
 * force enumeration), and writing every DPU's buffer back through its
 * plan (no overlap) rebuilds the array.
 *
 * dri_plan_walk_owned(): for 1-D to 4-D arrays with overlaps (wider than
 * a neighbour's block, merging block-cyclic ones, none), uneven sizes,
 * several layouts and element sizes 1, 3, 8 and 24, its runs, concatenated,
 * are the overlapped walk byte for byte and element for element; a run is
 * flagged owned exactly when every element of it is the DPU's without
 * overlap (brute force with dri_dim_owner() and dri_dim_ranges()); no two
 * adjacent runs of the same flag are contiguous in the host (they were
 * merged); and the callback's error stops the walk and is returned.
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

/* ------------------------------------------------------------ dri_plan_walk_owned */

struct orun {
	uint64_t off, len;
	bool owned;
};

struct osink {
	struct orun *runs;
	uint64_t nr, cap;
	long stop_at;		/* > 0: the stop_at-th call returns -7 */
	long calls;
};

static int oseg(void *ctx, uint64_t off, uint64_t len, bool owned)
{
	struct osink *k = ctx;

	if (++k->calls == k->stop_at)
		return -7;
	if (k->nr == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 64;
		k->runs = realloc(k->runs, k->cap * sizeof(*k->runs));
		if (!k->runs)
			abort();
	}
	k->runs[k->nr++] = (struct orun){ off, len, owned };
	return 0;
}

/* The DPU's coordinate in dimension @k of the grid, computed here */
static uint32_t coord_of(const struct dri_shape *s, uint32_t dpu, unsigned int k)
{
	unsigned int j;

	for (j = s->ndims - 1; j > k; j--)
		dpu /= s->grid[j];
	return dpu % s->grid[k];
}

/*
 * Does DPU @dpu own element @lin (no overlap)?  By dri_dim_owner() and,
 * independently, by membership in dri_dim_ranges(): -1 if they disagree.
 */
static int owns_elem(const struct dri_shape *s, uint32_t dpu, uint64_t lin)
{
	struct dri_range rg[64];
	uint64_t idx[DRI_MAX_DIMS], cnt, r;
	bool by_owner = true, by_ranges = true, in;
	unsigned int k;
	uint32_t c;

	for (k = s->ndims; k-- > 0;) {
		idx[k] = lin % s->n[k];
		lin /= s->n[k];
	}
	for (k = 0; k < s->ndims; k++) {
		c = coord_of(s, dpu, k);
		if (dri_dim_owner(&s->dim[k], s->n[k], s->grid[k], idx[k]) != c)
			by_owner = false;
		cnt = dri_dim_ranges(&s->dim[k], s->n[k], s->grid[k], c, false, rg, 64);
		for (in = false, r = 0; r < cnt && r < 64; r++)
			in |= idx[k] >= rg[r].start && idx[k] < rg[r].end;
		if (!in)
			by_ranges = false;
	}
	return by_owner == by_ranges ? by_owner : -1;
}

static int check_owned_shape(const struct dri_shape *s, char *why, size_t wl)
{
	uint64_t total = s->elem, b, n, e, r, nel, pos, lin;
	uint32_t dpu, ndpu = dri_grid_size(s);
	uint8_t *host, *buf, *want;
	uint64_t *exp;
	unsigned int k;
	int bad = 0, own, ret;

	for (k = 0; k < s->ndims; k++)
		total *= s->n[k];
	host = malloc(total);
	buf = malloc(total);
	want = malloc(total);
	exp = malloc(total / s->elem * sizeof(*exp));
	if (!host || !buf || !want || !exp)
		abort();
	for (b = 0; b < total; b++)
		host[b] = (uint8_t)(b * 7 + b / 251 + 1);
	for (dpu = 0; dpu < ndpu && !bad; dpu++) {
		struct sink sk = { .host = host, .buf = want, .cap = total };
		struct osink ok = { 0 };

		n = expected(s, dpu, true, exp);
		ret = dri_plan_walk_owned(s, dpu, oseg, &ok);
		if (ret || dri_plan_walk(s, dpu, true, seg, &sk)) {
			snprintf(why, wl, "DPU %u: the walk returned %d", dpu, ret);
			bad = 1;
		}
		/* the runs, concatenated: the overlapped walk, element by element */
		for (pos = 0, e = 0, r = 0; r < ok.nr && !bad; r++) {
			const struct orun *o = &ok.runs[r];

			if (!o->len || o->off % s->elem || o->len % s->elem ||
			    o->off + o->len > total || pos + o->len > total) {
				snprintf(why, wl, "DPU %u run %llu: %llu bytes at %llu", dpu,
					 (unsigned long long)r, (unsigned long long)o->len,
					 (unsigned long long)o->off);
				bad = 1;
				break;
			}
			memcpy(buf + pos, host + o->off, o->len);
			pos += o->len;
			for (nel = 0; nel < o->len / s->elem; nel++, e++) {
				lin = o->off / s->elem + nel;
				if (e >= n || exp[e] != lin) {
					snprintf(why, wl, "DPU %u: element %llu of its block is %llu, not %lld",
						 dpu, (unsigned long long)e, (unsigned long long)lin,
						 e < n ? (long long)exp[e] : -1LL);
					bad = 1;
					break;
				}
				own = owns_elem(s, dpu, lin);
				if (own < 0 || own != o->owned) {
					snprintf(why, wl, "DPU %u: element %llu (%llu of its block) is in a run flagged %s, owned by brute force: %d",
						 dpu, (unsigned long long)lin, (unsigned long long)e,
						 o->owned ? "owned" : "not owned", own);
					bad = 1;
					break;
				}
			}
			if (!bad && r && ok.runs[r - 1].owned == o->owned &&
			    ok.runs[r - 1].off + ok.runs[r - 1].len == o->off) {
				snprintf(why, wl, "DPU %u: runs %llu and %llu (%s, at %llu) were not merged",
					 dpu, (unsigned long long)r - 1, (unsigned long long)r,
					 o->owned ? "owned" : "not owned", (unsigned long long)o->off);
				bad = 1;
			}
		}
		if (!bad && (e != n || pos != sk.pos || memcmp(buf, want, pos))) {
			snprintf(why, wl, "DPU %u: the runs give %llu elements (%llu bytes), the overlapped walk %llu (%llu bytes)%s",
				 dpu, (unsigned long long)e, (unsigned long long)pos,
				 (unsigned long long)n, (unsigned long long)sk.pos,
				 pos == sk.pos ? ", bytes differ" : "");
			bad = 1;
		}
		/* the callback's error stops the walk and comes back */
		if (!bad && ok.nr >= 2) {
			struct osink stop = { .stop_at = 2 };

			ret = dri_plan_walk_owned(s, dpu, oseg, &stop);
			if (ret != -7 || stop.calls != 2 || stop.nr != 1) {
				snprintf(why, wl, "DPU %u: the callback failed on its call 2: the walk returned %d after %ld calls",
					 dpu, ret, stop.calls);
				bad = 1;
			}
			free(stop.runs);
		}
		free(ok.runs);
	}
	free(host);
	free(buf);
	free(want);
	free(exp);
	return bad;
}

#define PB(l, r) { .kind = DRI_DIM_BLOCK, .left_overlap = (l), .right_overlap = (r) }
#define PC(b, l, r) { .kind = DRI_DIM_BLOCK_CYCLIC, .block = (b), .left_overlap = (l), \
		      .right_overlap = (r) }
#define PW { .kind = DRI_DIM_WHOLE }

static const struct tcase owned_cases[] = {
	{ "owned: 1-D 97 over 7, overlaps 1/2, 4-byte",
	  { .ndims = 1, .n = { 97 }, .grid = { 7 }, .dim = { PB(1, 2) }, .elem = 4,
	    .order = { 0 } } },
	{ "owned: 1-D 10 over 8, overlaps 2/2 wider than a neighbour's block, 1-byte",
	  { .ndims = 1, .n = { 10 }, .grid = { 8 }, .dim = { PB(2, 2) }, .elem = 1,
	    .order = { 0 } } },
	{ "owned: 1-D 100 over 8, block-cyclic(3), overlaps 1/1, 3-byte",
	  { .ndims = 1, .n = { 100 }, .grid = { 8 }, .dim = { PC(3, 1, 1) }, .elem = 3,
	    .order = { 0 } } },
	{ "owned: 1-D 21 over 2, block-cyclic(2), overlaps 2/2 (ranges merge), 24-byte",
	  { .ndims = 1, .n = { 21 }, .grid = { 2 }, .dim = { PC(2, 2, 2) }, .elem = 24,
	    .order = { 0 } } },
	{ "owned: 1-D 13 over 5, no overlap (all owned), 8-byte",
	  { .ndims = 1, .n = { 13 }, .grid = { 5 }, .dim = { PB(0, 0) }, .elem = 8,
	    .order = { 0 } } },
	{ "owned: 2-D 31 x 15 over 4 x 3, overlaps 1/2 x 2/1, row-major, 8-byte",
	  { .ndims = 2, .n = { 31, 15 }, .grid = { 4, 3 }, .dim = { PB(1, 2), PB(2, 1) },
	    .elem = 8, .order = { 0, 1 } } },
	{ "owned: 2-D 31 x 15 over 4 x 3, overlaps 1/2 x 2/1, transposed, 24-byte",
	  { .ndims = 2, .n = { 31, 15 }, .grid = { 4, 3 }, .dim = { PB(1, 2), PB(2, 1) },
	    .elem = 24, .order = { 1, 0 } } },
	{ "owned: 2-D 23 x 17 over 3 x 2, block-cyclic(4) rows overlap 1, columns overlap 2, 1-byte",
	  { .ndims = 2, .n = { 23, 17 }, .grid = { 3, 2 }, .dim = { PC(4, 1, 1), PB(2, 2) },
	    .elem = 1, .order = { 0, 1 } } },
	{ "owned: 2-D 16 x 16 rows over 8 (block x whole), overlaps 1/1, transposed, 4-byte",
	  { .ndims = 2, .n = { 16, 16 }, .grid = { 8, 1 }, .dim = { PB(1, 1), PW }, .elem = 4,
	    .order = { 1, 0 } } },
	{ "owned: 2-D 12 x 9 over 3 x 3, no overlap, transposed, 3-byte",
	  { .ndims = 2, .n = { 12, 9 }, .grid = { 3, 3 }, .dim = { PB(0, 0), PB(0, 0) },
	    .elem = 3, .order = { 1, 0 } } },
	{ "owned: 2-D 5 x 9 over 6 x 1 (an empty block), overlaps 1/1, 8-byte",
	  { .ndims = 2, .n = { 5, 9 }, .grid = { 6, 1 }, .dim = { PB(1, 1), PW }, .elem = 8,
	    .order = { 0, 1 } } },
	{ "owned: 3-D 9 x 7 x 5 over 2 x 2 x 2, overlaps 1, layout (2, 0, 1), 3-byte",
	  { .ndims = 3, .n = { 9, 7, 5 }, .grid = { 2, 2, 2 },
	    .dim = { PB(1, 1), PB(1, 1), PB(1, 1) }, .elem = 3, .order = { 2, 0, 1 } } },
	{ "owned: 3-D 6 x 8 x 10 over 1 x 2 x 3, block-cyclic(3) last, layout (1, 2, 0), 8-byte",
	  { .ndims = 3, .n = { 6, 8, 10 }, .grid = { 1, 2, 3 },
	    .dim = { PW, PB(2, 1), PC(3, 1, 1) }, .elem = 8, .order = { 1, 2, 0 } } },
	{ "owned: 3-D 7 x 6 x 11 over 2 x 1 x 2, overlaps in the first and last, identity, 24-byte",
	  { .ndims = 3, .n = { 7, 6, 11 }, .grid = { 2, 1, 2 },
	    .dim = { PB(1, 2), PW, PB(3, 1) }, .elem = 24, .order = { 0, 1, 2 } } },
	{ "owned: 4-D 3 x 4 x 5 x 6 over 3 x 1 x 2 x 1, overlaps, reversed layout, 24-byte",
	  { .ndims = 4, .n = { 3, 4, 5, 6 }, .grid = { 3, 1, 2, 1 },
	    .dim = { PB(1, 1), PW, PB(2, 1), PW }, .elem = 24, .order = { 3, 2, 1, 0 } } },
	{ "owned: 4-D 5 x 4 x 3 x 7 over 2 x 2 x 1 x 2, block-cyclic(2) last, identity, 1-byte",
	  { .ndims = 4, .n = { 5, 4, 3, 7 }, .grid = { 2, 2, 1, 2 },
	    .dim = { PB(1, 0), PB(0, 1), PW, PC(2, 1, 1) }, .elem = 1, .order = { 0, 1, 2, 3 } } },
	{ "owned: 4-D 4 x 5 x 3 x 6 over 2 x 2 x 3 x 2, overlaps 1, layout (1, 3, 0, 2), 8-byte",
	  { .ndims = 4, .n = { 4, 5, 3, 6 }, .grid = { 2, 2, 3, 2 },
	    .dim = { PB(1, 1), PB(1, 1), PB(1, 1), PB(1, 1) }, .elem = 8,
	    .order = { 1, 3, 0, 2 } } },
	{ "owned: 4-D 6 x 3 x 4 x 5 over 3 x 1 x 2 x 1, block-cyclic(1) first, 3-byte",
	  { .ndims = 4, .n = { 6, 3, 4, 5 }, .grid = { 3, 1, 2, 1 },
	    .dim = { PC(1, 1, 1), PW, PB(1, 2), PB(0, 0) }, .elem = 3,
	    .order = { 2, 0, 3, 1 } } },
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
	for (c = 0; c < sizeof(owned_cases) / sizeof(owned_cases[0]); c++) {
		why[0] = 0;
		UNIT_CHECK(owned_cases[c].name, !check_owned_shape(&owned_cases[c].s, why,
								   sizeof(why)), "%s", why);
	}
	return unit_done();
}
