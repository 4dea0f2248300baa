// SPDX-License-Identifier: GPL-2.0
/*
 * dri.h on the rank devices: scatter and gather round trips for 1-D to 4-D
 * arrays, uneven sizes, element sizes 1, 3, 8 and 24, block, block-cyclic
 * and whole dimensions, overlaps and transposed layouts.  What each DPU's
 * MRAM holds after a scatter is checked element by element against its
 * ranges as DRI_dist_ranges gives them (walked here in the layout's order,
 * independently of the plan), and a gather into a zeroed array must give
 * the array back.  Also: constraint violations name the dimension, and a
 * set without the scatter/gather profile is refused with a message.
 */
#include <dri.h>

#include "kselftest_harness.h"
#include "common.h"

#define PROFILE "sgXferEnable=true,sgXferMaxBlocksPerDpu=100000"

struct rcase {
	const char *name;
	int ndims;
	uint64_t n[DRI_MAX_DIMS];
	uint32_t grid[DRI_MAX_DIMS];
	DRI_Tuple t[DRI_MAX_DIMS];
	int order[DRI_MAX_DIMS];
	size_t elem;
	int overlap;
};

/* Element @lin's bytes: a pattern no two elements share */
static void fill(uint8_t *a, uint64_t total)
{
	uint64_t b;

	for (b = 0; b < total; b++)
		a[b] = (uint8_t)(b * 13 + b / 253 + 7);
}

/*
 * DPU @d's block, in the layout's order, from its ranges (DRI_dist_ranges):
 * the expected MRAM bytes.
 */
static uint64_t expect_block(struct __test_metadata *_metadata, DRI_Distribution dist,
			     const struct rcase *c, uint32_t d, const uint8_t *host,
			     uint8_t *out)
{
	uint64_t lo[DRI_MAX_DIMS][64], hi[DRI_MAX_DIMS][64], nr[DRI_MAX_DIMS];
	uint64_t idx[DRI_MAX_DIMS] = { 0 }, pos = 0, lin, stride;
	int k, lvl, j, in, mine;

	for (k = 0; k < c->ndims; k++) {
		int64_t r = DRI_dist_ranges(dist, d, k, c->overlap, lo[k], hi[k], 64);

		EXPECT_LE(0, r);
		EXPECT_GE(64, r);
		nr[k] = r < 0 ? 0 : (uint64_t)r;
	}
	for (;;) {
		for (mine = 1, k = 0; k < c->ndims && mine; k++) {
			for (in = 0, j = 0; j < (int)nr[k]; j++)
				in |= idx[k] >= lo[k][j] && idx[k] < hi[k][j];
			mine = in;
		}
		if (mine) {
			for (lin = 0, stride = 1, k = c->ndims; k-- > 0;) {
				lin += idx[k] * stride;
				stride *= c->n[k];
			}
			memcpy(out + pos, host + lin * c->elem, c->elem);
			pos += c->elem;
		}
		for (lvl = c->ndims; lvl-- > 0;) {
			int dd = c->order[lvl];

			if (++idx[dd] < c->n[dd])
				break;
			idx[dd] = 0;
		}
		if (lvl < 0)
			return pos;
	}
}

static void round_trip(struct __test_metadata *_metadata, const struct rcase *c)
{
	DRI_Globaldata g;
	DRI_Partition p;
	DRI_Group grp;
	DRI_Distribution dist;
	DRI_Layout lay;
	DRI_Transfer to, from;
	struct dpu_set_t set, dpu;
	uint64_t total = c->elem, want_len;
	uint8_t *a, *b, *want, *got;
	void *abuf[1], *bbuf[1];
	uint32_t nr = 1, i;
	int k;

	for (k = 0; k < c->ndims; k++) {
		total *= c->n[k];
		nr *= c->grid[k];
	}
	a = malloc(total);
	b = calloc(1, total);
	want = malloc(total + 8);
	got = malloc(total + 8);
	ASSERT_TRUE(a && b && want && got);
	fill(a, total);
	abuf[0] = a;
	bbuf[0] = b;
	ASSERT_EQ(DPU_OK, dpu_alloc(nr, PROFILE, &set));
	ASSERT_EQ(0, DRI_gdo_create(c->ndims, c->elem, c->n, &g));
	ASSERT_EQ(0, DRI_part_create(c->ndims, c->t, &p));
	ASSERT_EQ(0, DRI_group_create(set, c->ndims, c->grid, &grp));
	ASSERT_EQ(0, DRI_dist_create(g, p, grp, &dist));
	ASSERT_EQ(0, DRI_layout_create(c->ndims, c->order, &lay));
	ASSERT_EQ(0, DRI_xfer_create("in", dist, lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, abuf,
				     DRI_TO_DPUS | (c->overlap ? DRI_OVERLAP : 0), &to));
	ASSERT_EQ(0, DRI_xfer_create("out", dist, lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, bbuf,
				     DRI_FROM_DPUS, &from));
	ASSERT_EQ(0, DRI_do("in", to));
	/* every DPU's MRAM: its elements, in the layout's order */
	DPU_FOREACH(set, dpu, i) {
		want_len = expect_block(_metadata, dist, c, i, a, want);
		EXPECT_EQ(want_len, DRI_dist_local_bytes(dist, i, c->overlap));
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, 0, got,
						(want_len + 7) & ~7ULL));
		EXPECT_EQ(0, memcmp(got, want, want_len)) TH_LOG("%s: DPU %u's block", c->name, i);
	}
	if (!c->overlap) {
		ASSERT_EQ(0, DRI_do("out", from));
		EXPECT_EQ(0, memcmp(a, b, total)) TH_LOG("%s: the gather", c->name);
	}
	DRI_xfer_destroy(to);
	DRI_xfer_destroy(from);
	DRI_layout_destroy(lay);
	DRI_dist_destroy(dist);
	DRI_group_destroy(grp);
	DRI_part_destroy(p);
	DRI_gdo_destroy(g);
	dpu_free(set);
	free(a);
	free(b);
	free(want);
	free(got);
}

#define BLK { .kind = DRI_BLOCK }
#define CYC(b) { .kind = DRI_BLOCK_CYCLIC, .block = (b) }
#define WHL { .kind = DRI_WHOLE }
#define OVL(l, r) { .kind = DRI_BLOCK, .left_overlap = (l), .right_overlap = (r) }

static const struct rcase cases[] = {
	{ "1-D 1000 floats over 8", 1, { 1000 }, { 8 }, { BLK }, { 0 }, 4, 0 },
	{ "1-D 997 bytes over 8, block-cyclic(16)", 1, { 997 }, { 8 }, { CYC(16) }, { 0 }, 1, 0 },
	{ "2-D 31 x 15 over 4 x 2, 4-byte", 2, { 31, 15 }, { 4, 2 }, { BLK, BLK }, { 0, 1 }, 4, 0 },
	{ "2-D 31 x 15 over 4 x 2, transposed, 8-byte", 2, { 31, 15 }, { 4, 2 }, { BLK, BLK },
	  { 1, 0 }, 8, 0 },
	{ "2-D 11 x 9 over 8 x 1 (block x whole), 3-byte", 2, { 11, 9 }, { 8, 1 }, { BLK, WHL },
	  { 0, 1 }, 3, 0 },
	{ "2-D 64 x 64 rows to 8, transposed (corner turn), 4-byte", 2, { 64, 64 }, { 8, 1 },
	  { BLK, WHL }, { 1, 0 }, 4, 0 },
	{ "2-D 23 x 17 over 4 x 2 with overlaps 1/2, 24-byte", 2, { 23, 17 }, { 4, 2 },
	  { OVL(1, 2), OVL(2, 1) }, { 0, 1 }, 24, 1 },
	{ "3-D 9 x 7 x 5 over 2 x 2 x 2, layout (2, 0, 1), 8-byte", 3, { 9, 7, 5 }, { 2, 2, 2 },
	  { BLK, CYC(2), BLK }, { 2, 0, 1 }, 8, 0 },
	{ "4-D 5 x 4 x 3 x 7 over 2 x 1 x 2 x 2, 3-byte", 4, { 5, 4, 3, 7 }, { 2, 1, 2, 2 },
	  { BLK, WHL, BLK, CYC(3) }, { 0, 1, 2, 3 }, 3, 0 },
	{ "4-D 5 x 4 x 3 x 7 reversed layout, 24-byte", 4, { 5, 4, 3, 7 }, { 2, 2, 1, 2 },
	  { BLK, BLK, WHL, BLK }, { 3, 2, 1, 0 }, 24, 0 },
};

TEST(round_trips)
{
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		round_trip(_metadata, &cases[i]);
		if (_metadata->exit_code == KSFT_FAIL) {
			TH_LOG("case %u: %s", i, cases[i].name);
			break;
		}
	}
}

TEST(constraint_names_the_dimension)
{
	DRI_Tuple t[2] = { { .kind = DRI_BLOCK }, { .kind = DRI_BLOCK, .min = 3 } };
	uint64_t n[2] = { 16, 10 };
	uint32_t grid[2] = { 2, 4 };
	DRI_Globaldata g;
	DRI_Partition p;
	DRI_Group grp;
	DRI_Distribution dist;
	struct dpu_set_t set;
	struct capture cap;
	char *msg;

	ASSERT_EQ(DPU_OK, dpu_alloc(8, PROFILE, &set));
	ASSERT_EQ(0, DRI_gdo_create(2, DRI_FLOAT, n, &g));
	ASSERT_EQ(0, DRI_part_create(2, t, &p));
	ASSERT_EQ(0, DRI_group_create(set, 2, grid, &grp));
	cap_begin(&cap);
	EXPECT_EQ(-EINVAL, DRI_dist_create(g, p, grp, &dist));
	msg = cap_end(&cap);
	ASSERT_NE(NULL, msg);
	EXPECT_NE(NULL, strstr(msg, "dimension 1: part 2 owns 2 elements, fewer than the min 3"))
		TH_LOG("%s", msg);
	free(msg);
	/* a grid that is not the set */
	grid[1] = 3;
	EXPECT_EQ(-EINVAL, DRI_group_create(set, 2, grid, &grp));
	DRI_group_destroy(grp);
	DRI_part_destroy(p);
	DRI_gdo_destroy(g);
	dpu_free(set);
}

TEST(needs_the_sg_profile)
{
	DRI_Tuple t = { .kind = DRI_BLOCK };
	uint64_t n = 64;
	uint32_t grid = 8;
	float a[64];
	void *bufs[1] = { a };
	DRI_Globaldata g;
	DRI_Partition p;
	DRI_Group grp;
	DRI_Distribution dist;
	DRI_Transfer x;
	struct dpu_set_t set;
	struct capture cap;
	char *msg;

	ASSERT_EQ(DPU_OK, dpu_alloc(8, NULL, &set));
	ASSERT_EQ(0, DRI_gdo_create(1, DRI_FLOAT, &n, &g));
	ASSERT_EQ(0, DRI_part_create(1, &t, &p));
	ASSERT_EQ(0, DRI_group_create(set, 1, &grid, &grp));
	ASSERT_EQ(0, DRI_dist_create(g, p, grp, &dist));
	cap_begin(&cap);
	EXPECT_EQ(-EINVAL, DRI_xfer_create("x", dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, bufs,
					   DRI_TO_DPUS, &x));
	msg = cap_end(&cap);
	ASSERT_NE(NULL, msg);
	EXPECT_NE(NULL, strstr(msg, "sgXferEnable=true")) TH_LOG("%s", msg);
	free(msg);
	DRI_dist_destroy(dist);
	DRI_group_destroy(grp);
	DRI_part_destroy(p);
	DRI_gdo_destroy(g);
	dpu_free(set);
}

TEST_HARNESS_MAIN
