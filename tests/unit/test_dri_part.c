// SPDX-License-Identifier: MIT
/*
 * Unit tests of the DRI partition arithmetic (lib/dri_part.c): every
 * element owned by exactly one part without overlap (1-D sweeps and 2-D
 * grids with uneven sizes: 31 x 15, 11 x k, primes), the owner function,
 * block balance, overlaps exactly as wide as asked and clipped at the
 * edges, block-cyclic ownership and merging, and the constraint
 * violations with the dimension named.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dri_part.h"
#include "unit.h"

#define MAXN 512

static const uint64_t sizes[] = { 1, 2, 7, 11, 15, 31, 97, 100, 257, 509 };
static const uint32_t parts[] = { 1, 2, 3, 4, 7, 8, 13, 64 };

/* Every element once, the owner function agreeing, ranges in order */
static int exactly_once(const struct dri_dim_part *d, uint64_t n, uint32_t np,
			char *why, size_t len)
{
	static struct dri_range rg[MAXN];
	static unsigned char seen[MAXN];
	uint64_t total = 0, k, i, cnt;
	uint32_t p;

	memset(seen, 0, sizeof(seen));
	for (p = 0; p < np; p++) {
		cnt = dri_dim_ranges(d, n, np, p, false, rg, MAXN);
		if (cnt > MAXN) {
			snprintf(why, len, "part %u: %llu ranges", p, (unsigned long long)cnt);
			return -1;
		}
		for (k = 0; k < cnt; k++) {
			if (rg[k].start >= rg[k].end || rg[k].end > n ||
			    (k && rg[k].start <= rg[k - 1].end)) {
				snprintf(why, len, "part %u: range %llu [%llu, %llu) out of order",
					 p, (unsigned long long)k, (unsigned long long)rg[k].start,
					 (unsigned long long)rg[k].end);
				return -1;
			}
			for (i = rg[k].start; i < rg[k].end; i++) {
				if (seen[i]++) {
					snprintf(why, len, "element %llu owned twice", (unsigned long long)i);
					return -1;
				}
				if (dri_dim_owner(d, n, np, i) != p) {
					snprintf(why, len, "element %llu: owner %u, ranges say %u",
						 (unsigned long long)i, dri_dim_owner(d, n, np, i), p);
					return -1;
				}
			}
			total += rg[k].end - rg[k].start;
		}
		if (dri_dim_owned(d, n, np, p) != 0 && !cnt) {
			snprintf(why, len, "part %u: owned %llu but no range", p,
				 (unsigned long long)dri_dim_owned(d, n, np, p));
			return -1;
		}
	}
	for (i = 0; i < n; i++)
		if (!seen[i]) {
			snprintf(why, len, "element %llu owned by no part", (unsigned long long)i);
			return -1;
		}
	for (k = 0, p = 0; p < np; p++)
		k += dri_dim_owned(d, n, np, p);
	if (k != n || total != n) {
		snprintf(why, len, "owned adds up to %llu, ranges to %llu, not %llu",
			 (unsigned long long)k, (unsigned long long)total, (unsigned long long)n);
		return -1;
	}
	return 0;
}

static void test_1d_exactly_once(void)
{
	static const uint64_t blocks[] = { 1, 3, 7, 64 };
	char name[96], why[128];
	unsigned int a, b, c;

	for (a = 0; a < sizeof(sizes) / sizeof(sizes[0]); a++)
		for (b = 0; b < sizeof(parts) / sizeof(parts[0]); b++) {
			struct dri_dim_part d = { .kind = DRI_DIM_BLOCK };

			snprintf(name, sizeof(name), "block: %llu over %u parts, each element once",
				 (unsigned long long)sizes[a], parts[b]);
			UNIT_CHECK(name, !exactly_once(&d, sizes[a], parts[b], why, sizeof(why)),
				   "%s", why);
			for (c = 0; c < sizeof(blocks) / sizeof(blocks[0]); c++) {
				d = (struct dri_dim_part){ .kind = DRI_DIM_BLOCK_CYCLIC,
							   .block = blocks[c] };
				snprintf(name, sizeof(name),
					 "block-cyclic(%llu): %llu over %u parts, each element once",
					 (unsigned long long)blocks[c], (unsigned long long)sizes[a],
					 parts[b]);
				UNIT_CHECK(name,
					   !exactly_once(&d, sizes[a], parts[b], why, sizeof(why)),
					   "%s", why);
			}
		}
}

static void test_block_balance(void)
{
	struct dri_dim_part d = { .kind = DRI_DIM_BLOCK };
	uint64_t lo, hi, o;
	unsigned int a, b;
	uint32_t p;
	bool ok = true;

	for (a = 0; a < sizeof(sizes) / sizeof(sizes[0]); a++)
		for (b = 0; b < sizeof(parts) / sizeof(parts[0]); b++) {
			lo = UINT64_MAX;
			hi = 0;
			for (p = 0; p < parts[b]; p++) {
				o = dri_dim_owned(&d, sizes[a], parts[b], p);
				lo = o < lo ? o : lo;
				hi = o > hi ? o : hi;
				/* the bigger parts first */
				if (p && o > dri_dim_owned(&d, sizes[a], parts[b], p - 1))
					ok = false;
			}
			if (hi - lo > 1)
				ok = false;
		}
	UNIT_CHECK("block: parts differ by at most one element, bigger first", ok,
		   "unbalanced");
}

/* Block with overlaps: each part's range widened exactly, clipped at the edges */
static void test_overlap_widths(void)
{
	static const uint64_t widths[][2] = { { 0, 0 }, { 1, 0 }, { 0, 2 }, { 2, 3 }, { 40, 1 } };
	struct dri_range own, ov;
	char why[128] = "";
	unsigned int a, b, w;
	uint32_t p;
	bool ok = true;

	for (a = 0; a < sizeof(sizes) / sizeof(sizes[0]) && ok; a++)
		for (b = 0; b < sizeof(parts) / sizeof(parts[0]) && ok; b++)
			for (w = 0; w < sizeof(widths) / sizeof(widths[0]) && ok; w++) {
				struct dri_dim_part d = {
					.kind = DRI_DIM_BLOCK, .left_overlap = widths[w][0],
					.right_overlap = widths[w][1],
				};
				uint64_t n = sizes[a], want_s, want_e;

				for (p = 0; p < parts[b] && ok; p++) {
					if (!dri_dim_ranges(&d, n, parts[b], p, false, &own, 1))
						continue;
					if (dri_dim_ranges(&d, n, parts[b], p, true, &ov, 1) != 1) {
						ok = false;
						snprintf(why, sizeof(why), "n %llu part %u: not one range",
							 (unsigned long long)n, p);
						break;
					}
					want_s = own.start > d.left_overlap ? own.start - d.left_overlap : 0;
					want_e = own.end + d.right_overlap < n ? own.end + d.right_overlap : n;
					if (ov.start != want_s || ov.end != want_e) {
						ok = false;
						snprintf(why, sizeof(why),
							 "n %llu, %u parts, part %u, overlap %llu/%llu: [%llu, %llu) not [%llu, %llu)",
							 (unsigned long long)n, parts[b], p,
							 (unsigned long long)d.left_overlap,
							 (unsigned long long)d.right_overlap,
							 (unsigned long long)ov.start, (unsigned long long)ov.end,
							 (unsigned long long)want_s, (unsigned long long)want_e);
					}
				}
			}
	UNIT_CHECK("block overlaps: exactly the widths asked, clipped at the array's edges", ok,
		   "%s", why);
}

static void test_overlap_example(void)
{
	/* 31 over 4: 8, 8, 8, 7; left 2, right 3 */
	struct dri_dim_part d = { .kind = DRI_DIM_BLOCK, .left_overlap = 2, .right_overlap = 3 };
	struct dri_range r[4];
	bool ok = true;

	ok &= dri_dim_ranges(&d, 31, 4, 0, true, &r[0], 1) == 1;
	ok &= dri_dim_ranges(&d, 31, 4, 1, true, &r[1], 1) == 1;
	ok &= dri_dim_ranges(&d, 31, 4, 2, true, &r[2], 1) == 1;
	ok &= dri_dim_ranges(&d, 31, 4, 3, true, &r[3], 1) == 1;
	UNIT_CHECK("31 over 4 with overlaps 2 and 3: [0,11) [6,19) [14,27) [22,31)",
		   ok && r[0].start == 0 && r[0].end == 11 && r[1].start == 6 && r[1].end == 19 &&
		   r[2].start == 14 && r[2].end == 27 && r[3].start == 22 && r[3].end == 31,
		   "[%llu,%llu) [%llu,%llu) [%llu,%llu) [%llu,%llu)",
		   (unsigned long long)r[0].start, (unsigned long long)r[0].end,
		   (unsigned long long)r[1].start, (unsigned long long)r[1].end,
		   (unsigned long long)r[2].start, (unsigned long long)r[2].end,
		   (unsigned long long)r[3].start, (unsigned long long)r[3].end);
}

static void test_block_cyclic(void)
{
	struct dri_dim_part d = { .kind = DRI_DIM_BLOCK_CYCLIC, .block = 2 };
	struct dri_range r[8];
	uint64_t n;

	/* 11 in blocks of 2 over 3 parts: 0 owns [0,2) [6,8); 1 [2,4) [8,10); 2 [4,6) [10,11) */
	n = dri_dim_ranges(&d, 11, 3, 2, false, r, 8);
	UNIT_CHECK("block-cyclic(2): 11 over 3, part 2 owns [4,6) and [10,11)",
		   n == 2 && r[0].start == 4 && r[0].end == 6 && r[1].start == 10 && r[1].end == 11,
		   "%llu ranges", (unsigned long long)n);
	UNIT_CHECK("block-cyclic(2): 11 over 3, part 2 owns 3 elements",
		   dri_dim_owned(&d, 11, 3, 2) == 3, "%llu",
		   (unsigned long long)dri_dim_owned(&d, 11, 3, 2));
	UNIT_CHECK("block-cyclic(2): element 9 belongs to part 1", dri_dim_owner(&d, 11, 3, 9) == 1,
		   "%u", dri_dim_owner(&d, 11, 3, 9));
	/* with overlaps 1/1 over 2 parts, part 0's blocks merge: [0,2) [4,6) [8,10) of 10 */
	d.left_overlap = d.right_overlap = 1;
	n = dri_dim_ranges(&d, 10, 2, 0, true, r, 8);
	UNIT_CHECK("block-cyclic(2) with overlaps 1/1: touching ranges merge into [0,10)",
		   n == 1 && r[0].start == 0 && r[0].end == 10, "%llu ranges, first [%llu,%llu)",
		   (unsigned long long)n, (unsigned long long)r[0].start,
		   (unsigned long long)r[0].end);
	/* more parts than blocks: the last parts own nothing */
	UNIT_CHECK("block-cyclic(64): 100 over 4, parts 2 and 3 own nothing",
		   dri_dim_owned(&(struct dri_dim_part){ .kind = DRI_DIM_BLOCK_CYCLIC, .block = 64 },
				 100, 4, 2) == 0 &&
		   dri_dim_ranges(&(struct dri_dim_part){ .kind = DRI_DIM_BLOCK_CYCLIC, .block = 64 },
				  100, 4, 3, false, r, 8) == 0,
		   "they own something");
}

/* 2-D: a grid of px x py parts over nx x ny, part = gx * py + gy */
static int grid_once(const struct dri_dim_part *dx, const struct dri_dim_part *dy,
		     uint64_t nx, uint64_t ny, uint32_t px, uint32_t py)
{
	static unsigned char seen[64][64];
	struct dri_range rx[64], ry[64];
	uint64_t cx, cy, a, b, i, j;
	uint32_t gx, gy;

	memset(seen, 0, sizeof(seen));
	for (gx = 0; gx < px; gx++)
		for (gy = 0; gy < py; gy++) {
			cx = dri_dim_ranges(dx, nx, px, gx, false, rx, 64);
			cy = dri_dim_ranges(dy, ny, py, gy, false, ry, 64);
			for (a = 0; a < cx; a++)
				for (b = 0; b < cy; b++)
					for (i = rx[a].start; i < rx[a].end; i++)
						for (j = ry[b].start; j < ry[b].end; j++)
							if (seen[i][j]++)
								return -1;
		}
	for (i = 0; i < nx; i++)
		for (j = 0; j < ny; j++)
			if (seen[i][j] != 1)
				return -1;
	return 0;
}

static void test_2d(void)
{
	struct dri_dim_part blk = { .kind = DRI_DIM_BLOCK };
	struct dri_dim_part cyc = { .kind = DRI_DIM_BLOCK_CYCLIC, .block = 4 };
	struct dri_dim_part whole = { .kind = DRI_DIM_WHOLE };
	char name[80];
	uint64_t k;

	UNIT_CHECK("2-D 31 x 15 over a 4 x 3 grid (block x block): each element once",
		   !grid_once(&blk, &blk, 31, 15, 4, 3), "not");
	UNIT_CHECK("2-D 31 x 15 over a 8 x 8 grid (block x block-cyclic): each element once",
		   !grid_once(&blk, &cyc, 31, 15, 8, 8), "not");
	UNIT_CHECK("2-D 31 x 15 over 16 x 1 (block x whole): each element once",
		   !grid_once(&blk, &whole, 31, 15, 16, 1), "not");
	for (k = 1; k <= 13; k++) {
		snprintf(name, sizeof(name), "2-D 11 x %llu over a 3 x 2 grid: each element once",
			 (unsigned long long)k);
		UNIT_CHECK(name, !grid_once(&blk, &blk, 11, k, 3, 2), "not");
	}
	UNIT_CHECK("2-D 59 x 61 (primes) over 7 x 5: each element once",
		   !grid_once(&blk, &cyc, 59, 61, 7, 5), "not");
}

static void test_constraints(void)
{
	struct dri_dim_part d = { .kind = DRI_DIM_BLOCK, .min = 3 };
	char msg[160];
	int r;

	r = dri_dim_check(&d, 1, 10, 4, msg, sizeof(msg));
	UNIT_CHECK("min 3 with 10 over 4: fails, naming dimension 1 and the part",
		   r == -EINVAL && strstr(msg, "dimension 1: part 2 owns 2 elements, fewer than the min 3"),
		   "%d: %s", r, msg);
	d.min = 0;
	d.max = 2;
	r = dri_dim_check(&d, 0, 10, 4, msg, sizeof(msg));
	UNIT_CHECK("max 2 with 10 over 4: fails, naming dimension 0",
		   r == -EINVAL && strstr(msg, "dimension 0: part 0 owns 3 elements, more than the max 2"),
		   "%d: %s", r, msg);
	d.max = 3;
	d.min = 2;
	UNIT_CHECK("min 2, max 3 with 10 over 4: fits", !dri_dim_check(&d, 0, 10, 4, msg, sizeof(msg)),
		   "%s", msg);
	d = (struct dri_dim_part){ .kind = DRI_DIM_BLOCK, .min = 5, .max = 4 };
	r = dri_dim_check(&d, 2, 10, 1, msg, sizeof(msg));
	UNIT_CHECK("min above max: fails", r == -EINVAL && strstr(msg, "dimension 2: min 5 is above max 4"),
		   "%d: %s", r, msg);
	d = (struct dri_dim_part){ .kind = DRI_DIM_WHOLE };
	r = dri_dim_check(&d, 3, 10, 2, msg, sizeof(msg));
	UNIT_CHECK("a whole dimension over 2 parts: fails",
		   r == -EINVAL && strstr(msg, "dimension 3 is whole"), "%d: %s", r, msg);
	UNIT_CHECK("a whole dimension over 1 part: fits", !dri_dim_check(&d, 3, 10, 1, msg, sizeof(msg)),
		   "%s", msg);
	d = (struct dri_dim_part){ .kind = DRI_DIM_BLOCK_CYCLIC, .block = 0 };
	r = dri_dim_check(&d, 1, 10, 2, msg, sizeof(msg));
	UNIT_CHECK("block-cyclic with blocks of 0: fails",
		   r == -EINVAL && strstr(msg, "blocks of 0"), "%d: %s", r, msg);
	d = (struct dri_dim_part){ .kind = DRI_DIM_BLOCK_CYCLIC, .block = 4, .min = 1 };
	r = dri_dim_check(&d, 0, 10, 4, msg, sizeof(msg));
	UNIT_CHECK("block-cyclic(4), 10 over 4, min 1: part 3 owns nothing, fails",
		   r == -EINVAL && strstr(msg, "part 3 owns 0 elements"), "%d: %s", r, msg);
	d = (struct dri_dim_part){ .kind = DRI_DIM_BLOCK };
	r = dri_dim_check(&d, 0, 0, 4, msg, sizeof(msg));
	UNIT_CHECK("an empty dimension: fails", r == -EINVAL, "%d", r);
}

int main(void)
{
	test_1d_exactly_once();
	test_block_balance();
	test_overlap_widths();
	test_overlap_example();
	test_block_cyclic();
	test_2d();
	test_constraints();
	return unit_done();
}
