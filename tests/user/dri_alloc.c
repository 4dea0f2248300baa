// SPDX-License-Identifier: GPL-2.0
/*
 * dri.h when memory runs out: every DRI call is run with its n-th
 * allocation failing, for n = 1, 2, ... until the call no longer fails.
 * Each failing call must return -ENOMEM (or, for DRI_do, whose
 * dpu_push_sg_xfer reports a system error, a negative errno), leave no
 * allocation behind, and leave nothing half-made: the same call then
 * succeeds and moves the right bytes.
 *
 * The allocations are counted by this program's own malloc, calloc,
 * realloc and free (glibc lets a program replace them; they forward to
 * __libc_malloc and friends), armed only around the call under test.
 */
#include <dri.h>

#include <errno.h>

#include "kselftest_harness.h"
#include "common.h"

#define PROFILE "sgXferEnable=true,sgXferMaxBlocksPerDpu=100000"

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);

/* Single-threaded while armed: the pack's threads start only for big arrays */
static long fail_at;		/* 0: off; n: the n-th allocation fails */
static long seen;		/* allocations while armed */
static long live;		/* allocated while armed and not yet freed */

static bool fail_now(void)
{
	return fail_at && ++seen == fail_at;
}

void *malloc(size_t size)
{
	void *p;

	if (fail_now())
		return NULL;
	p = __libc_malloc(size);
	if (p && fail_at)
		live++;
	return p;
}

void *calloc(size_t n, size_t size)
{
	void *p;

	if (fail_now())
		return NULL;
	p = __libc_calloc(n, size);
	if (p && fail_at)
		live++;
	return p;
}

void *realloc(void *old, size_t size)
{
	void *p;

	if (fail_now())
		return NULL;
	p = __libc_realloc(old, size);
	if (p && !old && fail_at)
		live++;
	return p;
}

/*
 * Only what was allocated while armed counts: a pointer freed while armed
 * that was allocated before would make the count go negative, which the
 * tests would see.
 */
void free(void *p)
{
	if (p && fail_at)
		live--;
	__libc_free(p);
}

static void arm(long n)
{
	seen = 0;
	live = 0;
	fail_at = n;
}

static long disarm(void)
{
	fail_at = 0;
	return live;
}

struct objs {
	struct dpu_set_t set;
	DRI_Globaldata g;
	DRI_Partition p, prow, pcol;
	DRI_Group grp, grows, gcols;
	DRI_Distribution dist, rows, cols;
	DRI_Layout lay, lt;
	uint8_t *a, *b;
	uint64_t n0, n1;
};

/* A 2-D array of 3-byte elements over a 2 x 2 grid, overlaps 1 and 2 */
static void setup(struct __test_metadata *_metadata, struct objs *o)
{
	DRI_Tuple t[2] = {
		{ .kind = DRI_BLOCK, .left_overlap = 1, .right_overlap = 2 },
		{ .kind = DRI_BLOCK_CYCLIC, .block = 3, .left_overlap = 1, .right_overlap = 1 },
	};
	DRI_Tuple rows_t[2] = { { .kind = DRI_BLOCK }, { .kind = DRI_WHOLE } };
	DRI_Tuple cols_t[2] = { { .kind = DRI_WHOLE }, { .kind = DRI_BLOCK } };
	int transposed[2] = { 1, 0 };
	uint64_t i;

	o->n0 = 31;
	o->n1 = 15;
	o->a = malloc(o->n0 * o->n1 * 3);
	o->b = calloc(1, o->n0 * o->n1 * 3);
	ASSERT_TRUE(o->a && o->b);
	for (i = 0; i < o->n0 * o->n1 * 3; i++)
		o->a[i] = (uint8_t)(i * 7 + i / 251);
	ASSERT_EQ(DPU_OK, dpu_alloc(4, PROFILE, &o->set));
	ASSERT_EQ(0, DRI_gdo_create(2, 3, (uint64_t[2]){ o->n0, o->n1 }, &o->g));
	ASSERT_EQ(0, DRI_part_create(2, t, &o->p));
	ASSERT_EQ(0, DRI_part_create(2, rows_t, &o->prow));
	ASSERT_EQ(0, DRI_part_create(2, cols_t, &o->pcol));
	ASSERT_EQ(0, DRI_group_create(o->set, 2, (uint32_t[2]){ 2, 2 }, &o->grp));
	ASSERT_EQ(0, DRI_group_create(o->set, 2, (uint32_t[2]){ 4, 1 }, &o->grows));
	ASSERT_EQ(0, DRI_group_create(o->set, 2, (uint32_t[2]){ 1, 4 }, &o->gcols));
	ASSERT_EQ(0, DRI_dist_create(o->g, o->p, o->grp, &o->dist));
	ASSERT_EQ(0, DRI_dist_create(o->g, o->prow, o->grows, &o->rows));
	ASSERT_EQ(0, DRI_dist_create(o->g, o->pcol, o->gcols, &o->cols));
	ASSERT_EQ(0, DRI_layout_create(2, transposed, &o->lt));
	ASSERT_EQ(0, DRI_layout_create(2, NULL, &o->lay));
}

static void teardown(struct objs *o)
{
	DRI_layout_destroy(o->lay);
	DRI_layout_destroy(o->lt);
	DRI_dist_destroy(o->cols);
	DRI_dist_destroy(o->rows);
	DRI_dist_destroy(o->dist);
	DRI_group_destroy(o->gcols);
	DRI_group_destroy(o->grows);
	DRI_group_destroy(o->grp);
	DRI_part_destroy(o->pcol);
	DRI_part_destroy(o->prow);
	DRI_part_destroy(o->p);
	DRI_gdo_destroy(o->g);
	dpu_free(o->set);
	free(o->a);
	free(o->b);
}

/* The object creators that need no set */
TEST(creators_fail_cleanly)
{
	DRI_Tuple t[2] = { { .kind = DRI_BLOCK }, { .kind = DRI_WHOLE } };
	DRI_Globaldata g;
	DRI_Partition p;
	DRI_Layout l;
	long n;
	int r;

	for (n = 1;; n++) {
		g = NULL;
		arm(n);
		r = DRI_gdo_create(2, 4, (uint64_t[2]){ 3, 4 }, &g);
		if (!r) {
			disarm();
			break;
		}
		EXPECT_EQ(0, disarm());
		EXPECT_EQ(-ENOMEM, r);
		EXPECT_EQ(NULL, g);
	}
	EXPECT_LT(1, n);
	DRI_gdo_destroy(g);
	for (n = 1;; n++) {
		arm(n);
		r = DRI_part_create(2, t, &p);
		disarm();
		if (!r)
			break;
		EXPECT_EQ(-ENOMEM, r);
	}
	EXPECT_LT(1, n);
	DRI_part_destroy(p);
	for (n = 1;; n++) {
		arm(n);
		r = DRI_layout_create(2, (int[2]){ 1, 0 }, &l);
		disarm();
		if (!r)
			break;
		EXPECT_EQ(-ENOMEM, r);
	}
	EXPECT_LT(1, n);
	DRI_layout_destroy(l);
}

/*
 * @make creates a transfer; with its n-th allocation failing it must
 * return -ENOMEM and leave nothing allocated, and the transfer made once
 * nothing fails must work (checked by @check).
 */
#define SWEEP(make, check)                                                  \
	do {                                                                \
		DRI_Transfer x = NULL;                                      \
		long n, left;                                               \
		int r;                                                      \
                                                                            \
		for (n = 1; n < 10000; n++) {                               \
			arm(n);                                             \
			r = (make);                                         \
			left = disarm();                                    \
			if (!r)                                             \
				break;                                      \
			EXPECT_EQ(-ENOMEM, r) TH_LOG("allocation %ld", n);  \
			EXPECT_EQ(0, left) TH_LOG("allocation %ld: %ld left", n, left); \
		}                                                           \
		EXPECT_LT(2, n) TH_LOG("the call allocates nothing?");      \
		ASSERT_EQ(0, r);                                            \
		check;                                                      \
		arm(0);                                                     \
		DRI_xfer_destroy(x);                                        \
	} while (0)

TEST(xfer_create_scatter_and_gather)
{
	struct objs o;
	void *abuf[2], *bbuf[1];

	setup(_metadata, &o);
	abuf[0] = o.a;
	abuf[1] = o.a;
	bbuf[0] = o.b;
	SWEEP(DRI_xfer_create("s", o.dist, o.lt, DPU_MRAM_HEAP_POINTER_NAME, 0, 2, abuf,
			      DRI_TO_DPUS | DRI_OVERLAP | DRI_ASYNC, &x),
	      ({ ASSERT_EQ(0, DRI_do("s", x)); ASSERT_EQ(DPU_OK, dpu_sync(o.set)); }));
	SWEEP(DRI_xfer_create("g", o.dist, o.lt, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, bbuf,
			      DRI_FROM_DPUS | DRI_OVERLAP, &x),
	      ({ ASSERT_EQ(0, DRI_do("g", x));
		 EXPECT_EQ(0, memcmp(o.a, o.b, o.n0 * o.n1 * 3)); }));
	teardown(&o);
}

TEST(redist_and_halo_create)
{
	DRI_Transfer load;
	struct objs o;
	void *abuf[1];

	setup(_metadata, &o);
	abuf[0] = o.a;
	ASSERT_EQ(0, DRI_xfer_create("load", o.rows, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1,
				     abuf, DRI_TO_DPUS, &load));
	ASSERT_EQ(0, DRI_do("load", load));
	SWEEP(DRI_redist_create("turn", o.rows, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, o.cols,
				o.lt, DPU_MRAM_HEAP_POINTER_NAME, 1 << 20, 0, &x),
	      ASSERT_EQ(0, DRI_do("turn", x)));
	SWEEP(DRI_halo_create("halo", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 2 << 20, &x),
	      ASSERT_EQ(0, DRI_do("halo", x)));
	DRI_xfer_destroy(load);
	teardown(&o);
}

/*
 * DRI_do of a corner turn with its n-th allocation failing (the
 * library's transfer bookkeeping): an error, nothing left allocated, and
 * the next DRI_do turns the matrix right.
 */
TEST(do_fails_cleanly_then_works)
{
	DRI_Transfer load, turn, back;
	struct objs o;
	void *abuf[1], *bbuf[1];
	long n, left;
	int r;

	setup(_metadata, &o);
	abuf[0] = o.a;
	bbuf[0] = o.b;
	ASSERT_EQ(0, DRI_xfer_create("load", o.rows, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1,
				     abuf, DRI_TO_DPUS, &load));
	ASSERT_EQ(0, DRI_redist_create("turn", o.rows, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0,
				       o.cols, o.lt, DPU_MRAM_HEAP_POINTER_NAME, 1 << 20, 0, &turn));
	ASSERT_EQ(0, DRI_xfer_create("back", o.cols, o.lt, DPU_MRAM_HEAP_POINTER_NAME, 1 << 20, 1,
				     bbuf, DRI_FROM_DPUS, &back));
	ASSERT_EQ(0, DRI_do("load", load));
	for (n = 1; n < 10000; n++) {
		arm(n);
		r = DRI_do("turn", turn);
		left = disarm();
		EXPECT_EQ(0, left) TH_LOG("allocation %ld: %ld left", n, left);
		if (!r)
			break;
		EXPECT_GT(0, r);
	}
	TH_LOG("DRI_do of the turn makes %ld allocations", n - 1);
	ASSERT_EQ(0, DRI_do("turn", turn));
	ASSERT_EQ(0, DRI_do("back", back));
	EXPECT_EQ(0, memcmp(o.a, o.b, o.n0 * o.n1 * 3));
	DRI_xfer_destroy(back);
	DRI_xfer_destroy(turn);
	DRI_xfer_destroy(load);
	teardown(&o);
}

TEST_HARNESS_MAIN
