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
 *
 * Redistributions (DRI_redist_create): corner turns of square and
 * non-square arrays (rows to transposed columns, some DPUs with empty
 * blocks), to row-major blocks, block-cyclic columns, blocks with
 * overlaps and back from transposed columns; the destination checked on
 * every DPU, the source left as it was.  Halo refreshes (DRI_halo_create):
 * every DPU's interior rewritten with new values and its halo left stale,
 * then refreshed: each block must be the new array's, the halos clipped at
 * the array's edges.  Gathers with DRI_OVERLAP take each element from its
 * owner (the halos hold garbage).  DRI_ASYNC with 2 and 3 buffers,
 * scatters and gathers, and the packed gather it refuses; the wait for a
 * queue that is done (no SYNC with the rank's status page, one without,
 * whose mmap this program can make fail).  And every
 * failure path of the create calls and DRI_do: the negative errno, the
 * message, the result left alone and no allocation left behind (this
 * program counts the blocks malloc hands out).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dri.h>

#include "kselftest_harness.h"
#include "common.h"

#define PROFILE "sgXferEnable=true,sgXferMaxBlocksPerDpu=100000"

/* ------------------------------------------------------------ allocations */

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);

/* Blocks allocated and not yet freed (by anyone in the process) */
static long live_blocks;

void *malloc(size_t size)
{
	void *p = __libc_malloc(size);

	if (p)
		__atomic_add_fetch(&live_blocks, 1, __ATOMIC_RELAXED);
	return p;
}

void *calloc(size_t n, size_t size)
{
	void *p = __libc_calloc(n, size);

	if (p)
		__atomic_add_fetch(&live_blocks, 1, __ATOMIC_RELAXED);
	return p;
}

void *realloc(void *old, size_t size)
{
	void *p = __libc_realloc(old, size);

	if (p && !old)
		__atomic_add_fetch(&live_blocks, 1, __ATOMIC_RELAXED);
	else if (old && !size && !p)		/* glibc: realloc(p, 0) frees p */
		__atomic_sub_fetch(&live_blocks, 1, __ATOMIC_RELAXED);
	return p;
}

void free(void *p)
{
	if (p)
		__atomic_sub_fetch(&live_blocks, 1, __ATOMIC_RELAXED);
	__libc_free(p);
}

static long blocks_live(void)
{
	return __atomic_load_n(&live_blocks, __ATOMIC_RELAXED);
}

/*
 * While @fail_sync is set, DPUSIM_IOCTL_SYNC fails with it (the library's
 * wait for the queue); every other ioctl goes to the kernel.  The kernel's
 * SYNC fails only on a timeout or a signal, which a test cannot time.
 * @syncs counts the SYNCs the library makes.
 */
static int fail_sync;
static long syncs;

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == DPUSIM_IOCTL_SYNC) {
		__atomic_add_fetch(&syncs, 1, __ATOMIC_RELAXED);
		if (fail_sync) {
			errno = fail_sync;
			return -1;
		}
	}
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

/*
 * While @no_status_page is set, the mmap() of a rank's status page
 * (DPUSIM_MMAP_STATUS) fails with ENOMEM: a set allocated then waits for
 * its queue with DPUSIM_IOCTL_SYNC every time, even when it is done.
 */
static int no_status_page;

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (no_status_page && (uint64_t)off == DPUSIM_MMAP_STATUS) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/*
 * @call must fail with -@err, print a line containing @msg on stderr and
 * leave no allocation behind.
 */
#define EXPECT_FAILS(err, msg, call)						\
	do {									\
		struct capture cap_;						\
		long live_, r_;							\
		char *out_;							\
										\
		cap_begin(&cap_);						\
		live_ = blocks_live();						\
		r_ = (long)(call);						\
		live_ = blocks_live() - live_;					\
		out_ = cap_end(&cap_);						\
		EXPECT_EQ(-(long)(err), r_) TH_LOG("%s", #call);		\
		EXPECT_EQ(0, live_) TH_LOG("%s left %ld allocations", #call, live_); \
		EXPECT_NE(NULL, strstr(out_ ? out_ : "", (msg)))		\
			TH_LOG("%s printed \"%s\", not \"%s\"", #call, out_, (msg)); \
		free(out_);							\
	} while (0)

/* A result a failing call must leave as it was */
static char untouched_obj;
#define UNTOUCHED ((void *)&untouched_obj)

/* ------------------------------------------------------------ cases */

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

static uint64_t total_bytes(const struct rcase *c)
{
	uint64_t total = c->elem;
	int k;

	for (k = 0; k < c->ndims; k++)
		total *= c->n[k];
	return total;
}

static uint32_t nr_dpus(const struct rcase *c)
{
	uint32_t nr = 1;
	int k;

	for (k = 0; k < c->ndims; k++)
		nr *= c->grid[k];
	return nr;
}

static uint64_t round8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

/*
 * Pattern @seed's bytes: within a pattern, neighbours differ; two patterns
 * differ in every byte (101 is odd: seed * 101 is one-to-one mod 256).
 */
static void fill_seed(uint8_t *a, uint64_t total, unsigned int seed)
{
	uint64_t b;

	for (b = 0; b < total; b++)
		a[b] = (uint8_t)(b * 13 + b / 253 + 7 + seed * 101);
}

/* Element @lin's bytes: a pattern no two elements share */
static void fill(uint8_t *a, uint64_t total)
{
	fill_seed(a, total, 0);
}

static bool in_ranges(uint64_t i, const uint64_t lo[], const uint64_t hi[], uint64_t nr)
{
	uint64_t j;

	for (j = 0; j < nr; j++)
		if (i >= lo[j] && i < hi[j])
			return true;
	return false;
}

/*
 * DPU @d's block (with its overlaps if c->overlap), in the layout's order,
 * from its ranges (DRI_dist_ranges): the expected MRAM bytes, an element
 * the DPU owns taken from @own, one of its halo (owned by a neighbour) from
 * @halo.
 */
static uint64_t expect_mixed(struct __test_metadata *_metadata, DRI_Distribution dist,
			     const struct rcase *c, uint32_t d, const uint8_t *own,
			     const uint8_t *halo, uint8_t *out)
{
	uint64_t lo[DRI_MAX_DIMS][64], hi[DRI_MAX_DIMS][64], nr[DRI_MAX_DIMS];
	uint64_t olo[DRI_MAX_DIMS][64], ohi[DRI_MAX_DIMS][64], onr[DRI_MAX_DIMS];
	uint64_t idx[DRI_MAX_DIMS] = { 0 }, pos = 0, lin, stride;
	int k, lvl, mine, owned;

	for (k = 0; k < c->ndims; k++) {
		int64_t r = DRI_dist_ranges(dist, d, k, c->overlap, lo[k], hi[k], 64);
		int64_t o = DRI_dist_ranges(dist, d, k, 0, olo[k], ohi[k], 64);

		EXPECT_LE(0, r);
		EXPECT_GE(64, r);
		EXPECT_LE(0, o);
		EXPECT_GE(64, o);
		nr[k] = r < 0 ? 0 : r > 64 ? 64 : (uint64_t)r;
		onr[k] = o < 0 ? 0 : o > 64 ? 64 : (uint64_t)o;
	}
	for (;;) {
		for (mine = 1, owned = 1, k = 0; k < c->ndims && mine; k++) {
			mine = in_ranges(idx[k], lo[k], hi[k], nr[k]);
			owned &= in_ranges(idx[k], olo[k], ohi[k], onr[k]);
		}
		if (mine) {
			for (lin = 0, stride = 1, k = c->ndims; k-- > 0;) {
				lin += idx[k] * stride;
				stride *= c->n[k];
			}
			memcpy(out + pos, (owned ? own : halo) + lin * c->elem, c->elem);
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

/*
 * DPU @d's block, in the layout's order, from its ranges (DRI_dist_ranges):
 * the expected MRAM bytes.
 */
static uint64_t expect_block(struct __test_metadata *_metadata, DRI_Distribution dist,
			     const struct rcase *c, uint32_t d, const uint8_t *host,
			     uint8_t *out)
{
	return expect_mixed(_metadata, dist, c, d, host, host, out);
}

/* Every DPU's MRAM at @offset holds its block of expect_mixed(@own, @halo) */
static void check_mram(struct __test_metadata *_metadata, struct dpu_set_t set,
		       DRI_Distribution dist, const struct rcase *c, uint32_t offset,
		       const uint8_t *own, const uint8_t *halo, const char *what)
{
	uint64_t total = total_bytes(c), len, b;
	uint8_t *want = malloc(total + 8), *got = malloc(total + 8);
	struct dpu_set_t dpu;
	uint32_t i;

	ASSERT_TRUE(want && got);
	DPU_FOREACH(set, dpu, i) {
		len = expect_mixed(_metadata, dist, c, i, own, halo, want);
		EXPECT_EQ(len, DRI_dist_local_bytes(dist, i, c->overlap))
			TH_LOG("%s (%s): DPU %u's block", c->name, what, i);
		if (!len)
			continue;
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, offset, got,
						round8(len)));
		if (!memcmp(got, want, len))
			continue;
		for (b = 0; got[b] == want[b]; b++)
			;
		EXPECT_EQ(want[b], got[b])
			TH_LOG("%s (%s): DPU %u, byte %llu of its block (element %llu) of %llu",
			       c->name, what, i, (unsigned long long)b,
			       (unsigned long long)(b / c->elem), (unsigned long long)len);
		break;
	}
	free(want);
	free(got);
}

/* Write every DPU's block of expect_mixed(@own, @halo) to its MRAM at @offset */
static void put_mram(struct __test_metadata *_metadata, struct dpu_set_t set,
		     DRI_Distribution dist, const struct rcase *c, uint32_t offset,
		     const uint8_t *own, const uint8_t *halo)
{
	uint8_t *blk = calloc(1, total_bytes(c) + 8);
	struct dpu_set_t dpu;
	uint64_t len;
	uint32_t i;

	ASSERT_NE(NULL, blk);
	DPU_FOREACH(set, dpu, i) {
		len = expect_mixed(_metadata, dist, c, i, own, halo, blk);
		memset(blk + len, 0, 8);
		if (!len)
			continue;
		ASSERT_EQ(DPU_OK, dpu_copy_to(dpu, DPU_MRAM_HEAP_POINTER_NAME, offset, blk,
					      round8(len)));
	}
	free(blk);
}

/*
 * Every DPU's ranges with overlaps (DRI_dist_ranges) are its owned ranges
 * widened by the tuple's overlaps and clipped to the array, computed here
 * element by element: a halo that wrapped around an edge would fail.
 */
static void check_clipped(struct __test_metadata *_metadata, DRI_Distribution dist,
			  const struct rcase *c)
{
	uint64_t lo[64], hi[64], olo[64], ohi[64], i, j;
	uint32_t d, nd = nr_dpus(c);
	int64_t nr, no;
	bool want, got;
	int k;

	for (d = 0; d < nd; d++)
		for (k = 0; k < c->ndims; k++) {
			no = DRI_dist_ranges(dist, d, k, 0, olo, ohi, 64);
			nr = DRI_dist_ranges(dist, d, k, 1, lo, hi, 64);
			ASSERT_TRUE(no >= 0 && no <= 64 && nr >= 0 && nr <= 64);
			for (j = 0; j < (uint64_t)nr; j++)
				EXPECT_TRUE(lo[j] < hi[j] && hi[j] <= c->n[k])
					TH_LOG("%s: DPU %u dimension %d: range [%llu, %llu)",
					       c->name, d, k, (unsigned long long)lo[j],
					       (unsigned long long)hi[j]);
			for (i = 0; i < c->n[k]; i++) {
				for (want = false, j = 0; j < (uint64_t)no; j++)
					want |= i + c->t[k].left_overlap >= olo[j] &&
						i < ohi[j] + c->t[k].right_overlap;
				got = in_ranges(i, lo, hi, (uint64_t)nr);
				EXPECT_EQ(want, got)
					TH_LOG("%s: DPU %u dimension %d: element %llu %s its halo",
					       c->name, d, k, (unsigned long long)i,
					       got ? "is in" : "is not in");
				if (want != got)
					return;
			}
		}
}

/* The objects of a case over a set */
struct dobj {
	DRI_Globaldata g;
	DRI_Partition p;
	DRI_Group grp;
	DRI_Distribution dist;
	DRI_Layout lay;
};

static void dobj_make(struct __test_metadata *_metadata, struct dpu_set_t set,
		      const struct rcase *c, struct dobj *o)
{
	memset(o, 0, sizeof(*o));
	ASSERT_EQ(0, DRI_gdo_create(c->ndims, c->elem, c->n, &o->g));
	ASSERT_EQ(0, DRI_part_create(c->ndims, c->t, &o->p));
	ASSERT_EQ(0, DRI_group_create(set, c->ndims, c->grid, &o->grp));
	ASSERT_EQ(0, DRI_dist_create(o->g, o->p, o->grp, &o->dist));
	ASSERT_EQ(0, DRI_layout_create(c->ndims, c->order, &o->lay));
}

static void dobj_free(struct dobj *o)
{
	DRI_layout_destroy(o->lay);
	DRI_dist_destroy(o->dist);
	DRI_group_destroy(o->grp);
	DRI_part_destroy(o->p);
	DRI_gdo_destroy(o->g);
	memset(o, 0, sizeof(*o));
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

/* ------------------------------------------------------------ redistributions */

#define CYCO(b, l, r) { .kind = DRI_BLOCK_CYCLIC, .block = (b), .left_overlap = (l), \
			.right_overlap = (r) }

/*
 * A redistribution of an array scattered with @from to @to (at an MRAM
 * offset past any block of @from), over a set of its own, step by step:
 * redist_load() scatters the array, redist_turn() redistributes it and
 * checks that every DPU holds its block of @to.
 */
struct redist {
	const struct rcase *from, *to;
	struct dpu_set_t set;
	struct dobj f, t;
	DRI_Transfer in, x;
	uint8_t *a;
	uint64_t total;
	uint32_t to_off;
};

static void redist_make(struct __test_metadata *_metadata, struct redist *r,
			const struct rcase *from, const struct rcase *to)
{
	void *abuf[1];

	r->from = from;
	r->to = to;
	r->total = total_bytes(from);
	r->to_off = (uint32_t)round8(r->total) + 64;
	r->a = malloc(r->total);
	ASSERT_NE(NULL, r->a);
	abuf[0] = r->a;
	ASSERT_EQ(nr_dpus(from), nr_dpus(to));
	ASSERT_EQ(0, from->overlap);
	ASSERT_EQ(DPU_OK, dpu_alloc(nr_dpus(from), PROFILE, &r->set));
	dobj_make(_metadata, r->set, from, &r->f);
	dobj_make(_metadata, r->set, to, &r->t);
	ASSERT_EQ(0, DRI_xfer_create("in", r->f.dist, r->f.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1,
				     abuf, DRI_TO_DPUS, &r->in));
	ASSERT_EQ(0, DRI_redist_create("turn", r->f.dist, r->f.lay, DPU_MRAM_HEAP_POINTER_NAME, 0,
				       r->t.dist, r->t.lay, DPU_MRAM_HEAP_POINTER_NAME, r->to_off,
				       to->overlap ? DRI_OVERLAP : 0, &r->x));
}

/* Fill the array with @seed and scatter it with @from */
static void redist_load(struct __test_metadata *_metadata, struct redist *r, unsigned int seed)
{
	fill_seed(r->a, r->total, seed);
	ASSERT_EQ(0, DRI_do("in", r->in));
}

static void redist_turn(struct __test_metadata *_metadata, struct redist *r, const char *what)
{
	ASSERT_EQ(0, DRI_do("turn", r->x));
	check_mram(_metadata, r->set, r->t.dist, r->to, r->to_off, r->a, r->a, what);
}

/* Both, from the array filled with @seed */
static void redist_load_turn(struct __test_metadata *_metadata, struct redist *r,
			     unsigned int seed, const char *what)
{
	redist_load(_metadata, r, seed);
	redist_turn(_metadata, r, what);
}

static void redist_free(struct redist *r)
{
	DRI_xfer_destroy(r->x);
	DRI_xfer_destroy(r->in);
	dobj_free(&r->t);
	dobj_free(&r->f);
	dpu_free(r->set);
	free(r->a);
}

/*
 * Redistribute @from to @to: every DPU must then hold its block of @to,
 * the blocks of @from left as they were; again with new data.
 */
static void redistribute(struct __test_metadata *_metadata, const struct rcase *from,
			 const struct rcase *to)
{
	struct redist r;

	redist_make(_metadata, &r, from, to);
	redist_load(_metadata, &r, 0);
	check_mram(_metadata, r.set, r.f.dist, from, 0, r.a, r.a, "the source");
	redist_turn(_metadata, &r, "redistributed");
	check_mram(_metadata, r.set, r.f.dist, from, 0, r.a, r.a, "the source after");
	redist_load_turn(_metadata, &r, 1, "redistributed again");
	redist_free(&r);
}

/* Rows (block x whole over @p x 1) to transposed columns (whole x block over 1 x @p) */
static void corner_cases(uint64_t n0, uint64_t n1, uint32_t p, size_t elem, struct rcase *rows,
			 struct rcase *cols)
{
	*rows = (struct rcase){ "rows", 2, { n0, n1 }, { p, 1 }, { BLK, WHL }, { 0, 1 }, elem, 0 };
	*cols = (struct rcase){ "transposed columns", 2, { n0, n1 }, { 1, p }, { WHL, BLK },
				{ 1, 0 }, elem, 0 };
}

static void corner_turn(struct __test_metadata *_metadata, uint64_t n0, uint64_t n1, uint32_t p,
			size_t elem)
{
	struct rcase rows, cols;

	corner_cases(n0, n1, p, elem, &rows, &cols);
	redistribute(_metadata, &rows, &cols);
}

TEST(corner_turn_square_64x64_over_8_4byte)
{
	corner_turn(_metadata, 64, 64, 8, 4);
}

TEST(corner_turn_37x53_over_4_1byte)
{
	corner_turn(_metadata, 37, 53, 4, 1);
}

/* 5 rows over 6 DPUs: the last one has an empty block to gather from */
TEST(corner_turn_5x200_over_6_3byte_one_empty_source_block)
{
	corner_turn(_metadata, 5, 200, 6, 3);
}

/* 5 columns over 7 DPUs: two have empty blocks to scatter to */
TEST(corner_turn_200x5_over_7_4byte_empty_destination_blocks)
{
	corner_turn(_metadata, 200, 5, 7, 4);
}

/*
 * 4-byte elements are packed two by two (2 x 2 blocks): odd sizes leave
 * a last column and a last run per tile to the element loop
 */
TEST(corner_turn_37x53_over_5_4byte_odd_tiles)
{
	corner_turn(_metadata, 37, 53, 5, 4);
	corner_turn(_metadata, 53, 37, 3, 4);
	corner_turn(_metadata, 33, 65, 1, 4);
}

TEST(corner_turn_37x53_over_7_8byte)
{
	corner_turn(_metadata, 37, 53, 7, 8);
}

TEST(corner_turn_53x37_over_6_24byte)
{
	corner_turn(_metadata, 53, 37, 6, 24);
}

/* 1 MiB: a pack large enough to be split over the guest's CPUs */
TEST(corner_turn_512x512_over_8_4byte)
{
	corner_turn(_metadata, 512, 512, 8, 4);
}

/* ------------------------------------------------------------ packing helpers */

/* While @fail_pthread_create is set, pthread_create fails with it */
static int fail_pthread_create;

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

	if (fail_pthread_create)
		return fail_pthread_create;
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
	return real(t, attr, fn, arg);
}

static int nr_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The threads a packing transfer starts: one fewer than the CPUs, at most 3 */
static int helpers_expected(void)
{
	cpu_set_t cpus;
	int n;

	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		return -1;
	n = CPU_COUNT(&cpus) - 1;
	return n > 3 ? 3 : n;
}

/* Joined threads leave /proc/self/task a moment after pthread_join */
static int nr_threads_settled(int want)
{
	int i, n = nr_threads();

	for (i = 0; i < 1000 && n != want; i++) {
		usleep(1000);
		n = nr_threads();
	}
	return n;
}

/* The 1 MiB corner turn of corner_turn_512x512_over_8_4byte, step by step */
static void turn512_make(struct __test_metadata *_metadata, struct redist *r, struct rcase *rows,
			 struct rcase *cols)
{
	corner_cases(512, 512, 8, 4, rows, cols);
	redist_make(_metadata, r, rows, cols);
}

/*
 * The turn's pack starts its threads once, keeps them between calls, and
 * DRI_xfer_destroy joins them.
 */
TEST(pack_helpers_start_once_and_are_joined)
{
	int want = helpers_expected(), before = nr_threads();
	struct rcase rows, cols;
	struct redist tt;

	ASSERT_LE(0, want);
	ASSERT_LT(0, before);
	turn512_make(_metadata, &tt, &rows, &cols);
	EXPECT_EQ(before, nr_threads());	/* nothing started at create */
	redist_load_turn(_metadata, &tt, 0, "turned");
	EXPECT_EQ(before + want, nr_threads());
	redist_load_turn(_metadata, &tt, 1, "turned");
	redist_load_turn(_metadata, &tt, 2, "turned");
	EXPECT_EQ(before + want, nr_threads());	/* the same threads */
	redist_free(&tt);
	EXPECT_EQ(before, nr_threads_settled(before));
}

/* No thread can start: the caller packs alone, and again at the next call */
TEST(pack_helpers_that_cannot_start_leave_the_caller_alone)
{
	int before = nr_threads();
	struct rcase rows, cols;
	struct redist tt;

	turn512_make(_metadata, &tt, &rows, &cols);
	fail_pthread_create = EAGAIN;
	redist_load_turn(_metadata, &tt, 0, "turned");
	redist_load_turn(_metadata, &tt, 1, "turned");
	fail_pthread_create = 0;
	redist_load_turn(_metadata, &tt, 2, "turned");
	EXPECT_EQ(before, nr_threads());
	redist_free(&tt);
}

/*
 * A child of fork() has no helper threads: it turns alone with its
 * parent's transfer and destroys it without waiting for them; the parent
 * goes on with its threads.
 */
TEST(pack_helpers_not_in_a_child_of_fork)
{
	int want = helpers_expected(), before = nr_threads(), status;
	struct rcase rows, cols;
	struct redist tt;
	pid_t pid;

	turn512_make(_metadata, &tt, &rows, &cols);
	redist_load_turn(_metadata, &tt, 0, "turned");
	EXPECT_EQ(before + want, nr_threads());
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		alarm(20);	/* a wait for threads that do not exist */
		redist_load_turn(_metadata, &tt, 1, "turned");
		if (nr_threads() != 1)
			_exit(3);
		redist_free(&tt);
		_exit(_metadata->exit_code == KSFT_FAIL ? 2 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	EXPECT_EQ(0, WEXITSTATUS(status));
	redist_load_turn(_metadata, &tt, 2, "turned");
	EXPECT_EQ(before + want, nr_threads());
	redist_free(&tt);
	EXPECT_EQ(before, nr_threads_settled(before));
}

TEST(redist_rows_to_2x2_blocks_row_major)
{
	const struct rcase rows = { "rows", 2, { 37, 53 }, { 4, 1 }, { BLK, WHL }, { 0, 1 }, 4, 0 };
	const struct rcase blocks = { "2 x 2 blocks", 2, { 37, 53 }, { 2, 2 }, { BLK, BLK },
				      { 0, 1 }, 4, 0 };

	redistribute(_metadata, &rows, &blocks);
}

TEST(redist_rows_to_block_cyclic_columns)
{
	const struct rcase rows = { "rows", 2, { 37, 53 }, { 6, 1 }, { BLK, WHL }, { 0, 1 }, 8, 0 };
	const struct rcase cyc = { "block-cyclic(4) columns", 2, { 37, 53 }, { 1, 6 },
				   { WHL, CYC(4) }, { 0, 1 }, 8, 0 };

	redistribute(_metadata, &rows, &cyc);
}

TEST(redist_block_cyclic_rows_to_transposed_block_cyclic_columns)
{
	const struct rcase rows = { "block-cyclic(3) rows", 2, { 29, 41 }, { 4, 1 },
				    { CYC(3), WHL }, { 0, 1 }, 3, 0 };
	const struct rcase cols = { "block-cyclic(5) columns, transposed", 2, { 29, 41 }, { 1, 4 },
				    { WHL, CYC(5) }, { 1, 0 }, 3, 0 };

	redistribute(_metadata, &rows, &cols);
}

/* The inverse corner turn: a packed gather, then a row-major scatter */
TEST(redist_transposed_columns_back_to_rows)
{
	const struct rcase cols = { "transposed columns", 2, { 45, 38 }, { 1, 5 }, { WHL, BLK },
				    { 1, 0 }, 4, 0 };
	const struct rcase rows = { "rows", 2, { 45, 38 }, { 5, 1 }, { BLK, WHL }, { 0, 1 }, 4, 0 };

	redistribute(_metadata, &cols, &rows);
}

TEST(redist_rows_to_blocks_with_overlaps)
{
	const struct rcase rows = { "rows", 2, { 31, 15 }, { 6, 1 }, { BLK, WHL }, { 0, 1 }, 8, 0 };
	const struct rcase blocks = { "3 x 2 blocks with overlaps 1/2 x 2/1", 2, { 31, 15 },
				      { 3, 2 }, { OVL(1, 2), OVL(2, 1) }, { 0, 1 }, 8, 1 };

	redistribute(_metadata, &rows, &blocks);
}

TEST(redist_3d_to_another_grid_and_layout)
{
	const struct rcase a = { "2 x 2 x 1", 3, { 9, 7, 5 }, { 2, 2, 1 }, { BLK, BLK, WHL },
				 { 0, 1, 2 }, 8, 0 };
	const struct rcase b = { "1 x 2 x 2, layout (2, 1, 0)", 3, { 9, 7, 5 }, { 1, 2, 2 },
				 { WHL, CYC(2), BLK }, { 2, 1, 0 }, 8, 0 };

	redistribute(_metadata, &a, &b);
}

/* ------------------------------------------------------------ halo refresh */

/*
 * Scatter array A with its overlaps; write every DPU's interior (the
 * elements it owns) with array B's values, its halo left with A's; refresh
 * the halos: every block must be B's, with its overlaps.  Then once more
 * with array C, through the same transfer.
 */
static void halo_refresh(struct __test_metadata *_metadata, const struct rcase *c)
{
	uint64_t total = total_bytes(c);
	uint8_t *a = malloc(total), *b = malloc(total), *cc = malloc(total);
	void *abuf[1] = { a };
	struct dpu_set_t set;
	DRI_Transfer in, h;
	struct dobj o;

	ASSERT_TRUE(a && b && cc);
	ASSERT_EQ(1, c->overlap);
	fill_seed(a, total, 0);
	fill_seed(b, total, 1);
	fill_seed(cc, total, 2);
	ASSERT_EQ(DPU_OK, dpu_alloc(nr_dpus(c), PROFILE, &set));
	dobj_make(_metadata, set, c, &o);
	check_clipped(_metadata, o.dist, c);
	ASSERT_EQ(0, DRI_xfer_create("in", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, abuf,
				     DRI_TO_DPUS | DRI_OVERLAP, &in));
	ASSERT_EQ(0, DRI_halo_create("halo", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, &h));
	ASSERT_EQ(0, DRI_do("in", in));
	check_mram(_metadata, set, o.dist, c, 0, a, a, "scattered with overlaps");
	/* interiors updated, halos stale */
	put_mram(_metadata, set, o.dist, c, 0, b, a);
	check_mram(_metadata, set, o.dist, c, 0, b, a, "interiors updated");
	ASSERT_EQ(0, DRI_do("halo", h));
	check_mram(_metadata, set, o.dist, c, 0, b, b, "halos refreshed");
	put_mram(_metadata, set, o.dist, c, 0, cc, b);
	ASSERT_EQ(0, DRI_do("halo", h));
	check_mram(_metadata, set, o.dist, c, 0, cc, cc, "halos refreshed again");
	DRI_xfer_destroy(h);
	DRI_xfer_destroy(in);
	dobj_free(&o);
	dpu_free(set);
	free(a);
	free(b);
	free(cc);
}

TEST(halo_1d_1000_over_8_overlap_1_4byte)
{
	const struct rcase c = { "1-D 1000 over 8, overlaps 1/1", 1, { 1000 }, { 8 },
				 { OVL(1, 1) }, { 0 }, 4, 1 };

	halo_refresh(_metadata, &c);
}

/* Blocks of 1 and 2 elements, halos of 2: a halo spans two neighbours */
TEST(halo_1d_10_over_8_overlap_2_wider_than_a_block_1byte)
{
	const struct rcase c = { "1-D 10 over 8, overlaps 2/2", 1, { 10 }, { 8 }, { OVL(2, 2) },
				 { 0 }, 1, 1 };

	halo_refresh(_metadata, &c);
}

TEST(halo_2d_32x24_over_2x2_overlap_1_4byte)
{
	const struct rcase c = { "2-D 32 x 24 over 2 x 2, overlaps 1", 2, { 32, 24 }, { 2, 2 },
				 { OVL(1, 1), OVL(1, 1) }, { 0, 1 }, 4, 1 };

	halo_refresh(_metadata, &c);
}

TEST(halo_2d_31x15_over_3x2_overlap_2_3byte)
{
	const struct rcase c = { "2-D 31 x 15 over 3 x 2, overlaps 2", 2, { 31, 15 }, { 3, 2 },
				 { OVL(2, 2), OVL(2, 2) }, { 0, 1 }, 3, 1 };

	halo_refresh(_metadata, &c);
}

TEST(halo_2d_31x15_over_3x2_uneven_overlaps_8byte)
{
	const struct rcase c = { "2-D 31 x 15 over 3 x 2, overlaps 1/2 x 2/1", 2, { 31, 15 },
				 { 3, 2 }, { OVL(1, 2), OVL(2, 1) }, { 0, 1 }, 8, 1 };

	halo_refresh(_metadata, &c);
}

TEST(halo_2d_31x15_over_2x2_transposed_layout_8byte)
{
	const struct rcase c = { "2-D 31 x 15 over 2 x 2, overlaps 1, transposed", 2, { 31, 15 },
				 { 2, 2 }, { OVL(1, 1), OVL(1, 1) }, { 1, 0 }, 8, 1 };

	halo_refresh(_metadata, &c);
}

TEST(halo_2d_block_cyclic_rows_3byte)
{
	const struct rcase c = { "2-D 23 x 17 over 3 x 2, block-cyclic(4) rows, overlaps 1",
				 2, { 23, 17 }, { 3, 2 }, { CYCO(4, 1, 1), OVL(1, 1) }, { 0, 1 },
				 3, 1 };

	halo_refresh(_metadata, &c);
}

TEST(halo_2d_block_cyclic_columns_transposed_4byte)
{
	const struct rcase c = { "2-D 20 x 26 over 2 x 3, block-cyclic(3) columns, transposed",
				 2, { 20, 26 }, { 2, 3 }, { OVL(2, 1), CYCO(3, 1, 2) }, { 1, 0 },
				 4, 1 };

	halo_refresh(_metadata, &c);
}

TEST(halo_3d_9x7x5_over_2x2x2_overlap_1_3byte)
{
	const struct rcase c = { "3-D 9 x 7 x 5 over 2 x 2 x 2, overlaps 1", 3, { 9, 7, 5 },
				 { 2, 2, 2 }, { OVL(1, 1), OVL(1, 1), OVL(1, 1) }, { 0, 1, 2 },
				 3, 1 };

	halo_refresh(_metadata, &c);
}

TEST(halo_3d_layout_2_0_1_8byte)
{
	const struct rcase c = { "3-D 10 x 6 x 7 over 2 x 1 x 3, layout (2, 0, 1)", 3,
				 { 10, 6, 7 }, { 2, 1, 3 }, { OVL(2, 1), WHL, OVL(1, 1) },
				 { 2, 0, 1 }, 8, 1 };

	halo_refresh(_metadata, &c);
}

TEST(halo_4d_24byte)
{
	const struct rcase c = { "4-D 5 x 4 x 3 x 6 over 2 x 1 x 1 x 2, overlaps 1", 4,
				 { 5, 4, 3, 6 }, { 2, 1, 1, 2 }, { OVL(1, 1), WHL, WHL, OVL(1, 1) },
				 { 0, 1, 2, 3 }, 24, 1 };

	halo_refresh(_metadata, &c);
}

/*
 * 64 elements over 8, halos of 3: the first and last DPUs' blocks stop at
 * the array's edges (11 elements, the others 14), and nothing of the far
 * end is wrapped in.
 */
TEST(halo_1d_edges_are_clipped_not_wrapped)
{
	const struct rcase c = { "1-D 64 over 8, overlaps 3/3", 1, { 64 }, { 8 }, { OVL(3, 3) },
				 { 0 }, 8, 1 };
	uint64_t b[64], got[14];
	struct dpu_set_t set, dpu;
	DRI_Transfer h;
	struct dobj o;
	uint32_t i;

	halo_refresh(_metadata, &c);
	fill_seed((uint8_t *)b, sizeof(b), 1);
	ASSERT_EQ(DPU_OK, dpu_alloc(8, PROFILE, &set));
	dobj_make(_metadata, set, &c, &o);
	for (i = 0; i < 8; i++)
		EXPECT_EQ((i == 0 || i == 7 ? 11 : 14) * 8, DRI_dist_local_bytes(o.dist, i, 1))
			TH_LOG("DPU %u", i);
	/* MRAM: past each block, a canary the refresh must not replace with wrapped elements */
	DPU_FOREACH(set, dpu, i) {
		memset(got, 0x5a, sizeof(got));
		ASSERT_EQ(DPU_OK, dpu_copy_to(dpu, DPU_MRAM_HEAP_POINTER_NAME, 0, got, sizeof(got)));
	}
	put_mram(_metadata, set, o.dist, &c, 0, (uint8_t *)b, (uint8_t *)b);
	ASSERT_EQ(0, DRI_halo_create("halo", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, &h));
	ASSERT_EQ(0, DRI_do("halo", h));
	DPU_FOREACH(set, dpu, i) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, 0, got,
						sizeof(got)));
		if (i == 0) {
			EXPECT_EQ(0, memcmp(got, b, 11 * 8));
			EXPECT_NE(0, memcmp(got + 11, b + 61, 3 * 8)) TH_LOG("wrapped around");
		} else if (i == 7) {
			EXPECT_EQ(0, memcmp(got, b + 53, 11 * 8));
			EXPECT_NE(0, memcmp(got + 11, b, 3 * 8)) TH_LOG("wrapped around");
		} else {
			EXPECT_EQ(0, memcmp(got, b + i * 8 - 3, 14 * 8)) TH_LOG("DPU %u", i);
		}
	}
	DRI_xfer_destroy(h);
	dobj_free(&o);
	dpu_free(set);
}

/* ------------------------------------------------------------ gather with overlaps */

/*
 * Scatter A with overlaps, put garbage in every halo, gather with
 * DRI_OVERLAP into an array of yet another pattern: it must be A, every
 * element written, and from its owner.
 */
static void gather_owned(struct __test_metadata *_metadata, const struct rcase *c)
{
	uint64_t total = total_bytes(c), e;
	uint8_t *a = malloc(total), *g = malloc(total), *h = malloc(total);
	void *abuf[1] = { a }, *hbuf[1] = { h };
	struct dpu_set_t set;
	DRI_Transfer in, out;
	struct dobj o;

	ASSERT_TRUE(a && g && h);
	ASSERT_EQ(1, c->overlap);
	fill_seed(a, total, 0);
	fill_seed(g, total, 3);
	fill_seed(h, total, 4);
	ASSERT_EQ(DPU_OK, dpu_alloc(nr_dpus(c), PROFILE, &set));
	dobj_make(_metadata, set, c, &o);
	ASSERT_EQ(0, DRI_xfer_create("in", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, abuf,
				     DRI_TO_DPUS | DRI_OVERLAP, &in));
	ASSERT_EQ(0, DRI_xfer_create("out", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, hbuf,
				     DRI_FROM_DPUS | DRI_OVERLAP, &out));
	ASSERT_EQ(0, DRI_do("in", in));
	put_mram(_metadata, set, o.dist, c, 0, a, g);
	check_mram(_metadata, set, o.dist, c, 0, a, g, "garbage halos");
	ASSERT_EQ(0, DRI_do("out", out));
	if (memcmp(h, a, total)) {
		for (e = 0; !memcmp(h + e * c->elem, a + e * c->elem, c->elem); e++)
			;
		EXPECT_EQ(0, memcmp(h, a, total))
			TH_LOG("%s: element %llu is %s", c->name, (unsigned long long)e,
			       !memcmp(h + e * c->elem, g + e * c->elem, c->elem) ?
			       "a halo's garbage" : "not written");
	}
	DRI_xfer_destroy(out);
	DRI_xfer_destroy(in);
	dobj_free(&o);
	dpu_free(set);
	free(a);
	free(g);
	free(h);
}

TEST(gather_overlap_1d_reads_owners_only)
{
	const struct rcase c = { "1-D 1000 over 8, overlaps 2/3", 1, { 1000 }, { 8 },
				 { OVL(2, 3) }, { 0 }, 4, 1 };

	gather_owned(_metadata, &c);
}

TEST(gather_overlap_2d_3x2_3byte)
{
	const struct rcase c = { "2-D 31 x 15 over 3 x 2, overlaps 1/2 x 2/1", 2, { 31, 15 },
				 { 3, 2 }, { OVL(1, 2), OVL(2, 1) }, { 0, 1 }, 3, 1 };

	gather_owned(_metadata, &c);
}

TEST(gather_overlap_2d_transposed_packed_8byte)
{
	const struct rcase c = { "2-D 31 x 15 over 2 x 2, overlaps 1, transposed", 2, { 31, 15 },
				 { 2, 2 }, { OVL(1, 1), OVL(1, 1) }, { 1, 0 }, 8, 1 };

	gather_owned(_metadata, &c);
}

TEST(gather_overlap_3d_block_cyclic_24byte)
{
	const struct rcase c = { "3-D 9 x 7 x 5 over 2 x 1 x 2, block-cyclic(2) rows", 3,
				 { 9, 7, 5 }, { 2, 1, 2 }, { CYCO(2, 1, 1), WHL, OVL(1, 1) },
				 { 2, 0, 1 }, 24, 1 };

	gather_owned(_metadata, &c);
}

/*
 * Packed synchronous transfers go a window of MRAM at a time (a bounded
 * packing buffer, not the array): the windows of DPUSIM_DRI_WINDOW cut
 * runs and elements (8 bytes against elements of 3 and 24) and must give
 * the same MRAM and arrays as one window.  Each TEST runs in a process of
 * its own, so the setenv stays there.
 */
static const char *const windows[] = { "8", "16", "24", "40", "256", "4096" };

/* Only for the longer timeout of TEST_F_TIMEOUT (KASAN is slow) */
FIXTURE(slow) {
	int unused;
};

FIXTURE_SETUP(slow)
{
}

FIXTURE_TEARDOWN(slow)
{
}

TEST_F_TIMEOUT(slow, round_trips_in_windows, 300)
{
	unsigned int i, w;

	for (w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
		ASSERT_EQ(0, setenv("DPUSIM_DRI_WINDOW", windows[w], 1));
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			round_trip(_metadata, &cases[i]);
			if (_metadata->exit_code == KSFT_FAIL) {
				TH_LOG("window %s, case %u: %s", windows[w], i, cases[i].name);
				return;
			}
		}
	}
}

TEST_F_TIMEOUT(slow, corner_turns_in_windows, 300)
{
	unsigned int w;

	for (w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
		ASSERT_EQ(0, setenv("DPUSIM_DRI_WINDOW", windows[w], 1));
		corner_turn(_metadata, 37, 53, 4, 1);
		corner_turn(_metadata, 5, 200, 6, 3);
		corner_turn(_metadata, 200, 5, 7, 4);
		corner_turn(_metadata, 53, 37, 6, 24);
		if (_metadata->exit_code == KSFT_FAIL) {
			TH_LOG("window %s", windows[w]);
			return;
		}
	}
}

TEST_F_TIMEOUT(slow, gather_overlap_transposed_in_windows, 300)
{
	const struct rcase c = { "2-D 31 x 15 over 2 x 2, overlaps 1, transposed", 2, { 31, 15 },
				 { 2, 2 }, { OVL(1, 1), OVL(1, 1) }, { 1, 0 }, 8, 1 };
	const struct rcase c3 = { "2-D 31 x 15 over 3 x 2, overlaps 1/2 x 2/1, transposed", 2,
				  { 31, 15 }, { 3, 2 }, { OVL(1, 2), OVL(2, 1) }, { 1, 0 }, 3, 1 };
	unsigned int w;

	for (w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
		ASSERT_EQ(0, setenv("DPUSIM_DRI_WINDOW", windows[w], 1));
		gather_owned(_metadata, &c);
		gather_owned(_metadata, &c3);
		if (_metadata->exit_code == KSFT_FAIL) {
			TH_LOG("window %s", windows[w]);
			return;
		}
	}
}

static uint64_t module_mram_size(void)
{
	FILE *f = fopen("/sys/module/dpusim/parameters/mram_size", "r");
	unsigned long long v = 0;

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * A windowed transfer that would run past the end of MRAM fails before
 * any window moved: the MRAM is as it was.
 */
TEST(windowed_scatter_past_mram_end_moves_nothing)
{
	const struct rcase c = { "2-D 64 x 64 rows to 8, transposed", 2, { 64, 64 }, { 8, 1 },
				 { BLK, WHL }, { 1, 0 }, 4, 0 };
	uint64_t total = total_bytes(&c), mram = 0;
	uint8_t *a = malloc(total), *before = malloc(4096), *after = malloc(4096);
	void *abuf[1] = { a };
	struct dpu_set_t set, dpu;
	DRI_Transfer in;
	struct dobj o;
	uint32_t i, off;

	ASSERT_TRUE(a && before && after);
	fill(a, total);
	ASSERT_EQ(0, setenv("DPUSIM_DRI_WINDOW", "64", 1));
	ASSERT_EQ(DPU_OK, dpu_alloc(nr_dpus(&c), PROFILE, &set));
	mram = module_mram_size();
	ASSERT_GT(mram, 4096);
	/* 2 KiB per DPU from here: 1 KiB fits, the last windows do not */
	off = (uint32_t)(mram - 1024);
	dobj_make(_metadata, set, &c, &o);
	ASSERT_EQ(0, DRI_xfer_create("in", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, off, 1, abuf,
				     DRI_TO_DPUS, &in));
	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, off, before, 1024));
	EXPECT_GT(0, DRI_do("in", in));
	DPU_FOREACH(set, dpu, i) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, off, after, 1024));
		EXPECT_EQ(0, memcmp(before, after, 1024)) TH_LOG("DPU %u's MRAM changed", i);
	}
	DRI_xfer_destroy(in);
	dobj_free(&o);
	dpu_free(set);
	free(a);
	free(before);
	free(after);
}

/* Wide rows (runs of 1 KiB, not packed), halos of 1 row */
TEST(gather_overlap_rows_of_1kib_4byte)
{
	const struct rcase c = { "2-D 40 x 256 over 4 x 1, overlaps 1 row", 2, { 40, 256 }, { 4, 1 },
				 { OVL(1, 1), WHL }, { 0, 1 }, 4, 1 };

	gather_owned(_metadata, &c);
}

/* ------------------------------------------------------------ DRI_ASYNC */

/*
 * Queue (DPU_XFER_ASYNC) a copy of every DPU's first @len bytes of MRAM
 * into @snap (@len bytes per DPU): queued behind the transfers before it,
 * it sees what they left.
 */
static void snapshot(struct __test_metadata *_metadata, struct dpu_set_t set, uint8_t *snap,
		     uint64_t len)
{
	struct dpu_set_t dpu;
	uint32_t d;

	DPU_FOREACH(set, dpu, d) {
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, snap + d * len));
	}
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, len,
					DPU_XFER_ASYNC));
}

/* Every DPU's block in @snap (@len bytes per DPU) is expect_block(@host) */
static void check_snapshot(struct __test_metadata *_metadata, DRI_Distribution dist,
			   const struct rcase *c, const uint8_t *snap, uint64_t len,
			   const uint8_t *host, const char *what, int iter)
{
	uint8_t *want = malloc(total_bytes(c) + 8);
	uint64_t n, b;
	uint32_t d;

	ASSERT_NE(NULL, want);
	for (d = 0; d < nr_dpus(c); d++) {
		n = expect_block(_metadata, dist, c, d, host, want);
		if (!memcmp(snap + d * len, want, n))
			continue;
		for (b = 0; snap[d * len + b] == want[b]; b++)
			;
		EXPECT_EQ(want[b], snap[d * len + b])
			TH_LOG("%s (%s, iteration %d): DPU %u, byte %llu of its block",
			       c->name, what, iter, d, (unsigned long long)b);
		break;
	}
	free(want);
}

/*
 * Queue (DPU_XFER_ASYNC) a transfer long enough to keep the rank's queue
 * busy while the host goes on: 2 MiB to each DPU, 32 MiB into its MRAM,
 * far past the blocks.  The transfers queued behind it are in flight for
 * a while: a host buffer reused too early would show.
 */
#define BLOCKER_BYTES (2u << 20)
#define BLOCKER_OFFSET (32u << 20)

static void queue_blocker(struct __test_metadata *_metadata, struct dpu_set_t set,
			  const uint8_t *big)
{
	ASSERT_EQ(DPU_OK, dpu_broadcast_to(set, DPU_MRAM_HEAP_POINTER_NAME, BLOCKER_OFFSET, big,
					   BLOCKER_BYTES, DPU_XFER_ASYNC));
}

/*
 * @iters asynchronous scatters through @nbufs buffers: iteration i fills
 * buffer i % @nbufs with pattern i + 1 (buffer k is refilled only once the
 * transfer that used it is done: a dpu_sync every @nbufs DRI_do calls),
 * then DRI_do, and queues a snapshot of the DPUs' MRAM behind it; while
 * they run, the next iteration fills the next buffer.  At each dpu_sync,
 * every snapshot since the last one must hold its iteration's data, and
 * the DPUs the last one's.  Each round of DRI_do calls is queued behind a
 * blocker, so that the transfers are still in flight while the host fills
 * the next buffer.  A packed plan (@packed) is packed by DRI_do into
 * packing buffers of the transfer's own (4, cycled): there, the round's
 * buffers are filled first and its DRI_do calls made back to back, so that a pack
 * into a packed buffer still in flight would show in the snapshots (a
 * timing matter: caught in most runs, not all).
 */
static void async_scatter(struct __test_metadata *_metadata, const struct rcase *c, int nbufs,
			  int iters, bool packed)
{
	uint64_t total = total_bytes(c), len = 0;
	uint8_t *want = malloc(total), *big = calloc(1, BLOCKER_BYTES), *snaps;
	int i, j, k, synced = -1;
	void *bufs[4] = { NULL };
	struct dpu_set_t set;
	DRI_Transfer x;
	struct dobj o;
	uint32_t d;

	ASSERT_TRUE(nbufs >= 2 && nbufs <= 4);
	ASSERT_TRUE(want && big);
	for (k = 0; k < nbufs; k++) {
		bufs[k] = malloc(total);
		ASSERT_NE(NULL, bufs[k]);
	}
	ASSERT_EQ(DPU_OK, dpu_alloc(nr_dpus(c), PROFILE, &set));
	dobj_make(_metadata, set, c, &o);
	for (d = 0; d < nr_dpus(c); d++)
		if (DRI_dist_local_bytes(o.dist, d, c->overlap) > len)
			len = DRI_dist_local_bytes(o.dist, d, c->overlap);
	len = round8(len);
	/* touched now, so that no page fault slows the host down in the loop */
	snaps = calloc(1, iters * nr_dpus(c) * len);
	ASSERT_NE(NULL, snaps);
	for (k = 0; k < nbufs; k++)
		memset(bufs[k], 0, total);
	ASSERT_EQ(0, DRI_xfer_create("in", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, nbufs,
				     bufs, DRI_TO_DPUS | DRI_ASYNC |
				     (c->overlap ? DRI_OVERLAP : 0), &x));
	/* a packed plan moves one block per DPU */
	if (packed) {
		EXPECT_EQ(1, DRI_xfer_max_blocks(x));
	} else {
		EXPECT_LT(1, DRI_xfer_max_blocks(x));
	}
	for (i = 0; i < iters; i++) {
		if (i == synced + 1) {
			queue_blocker(_metadata, set, big);
			/* packed: the round's buffers first, its DRI_do calls back to back */
			for (j = i; packed && j < iters && j < i + nbufs; j++)
				fill_seed(bufs[j % nbufs], total, (unsigned int)j + 1);
		}
		if (!packed)
			fill_seed(bufs[i % nbufs], total, (unsigned int)i + 1);
		ASSERT_EQ(0, DRI_do("in", x));
		snapshot(_metadata, set, snaps + i * nr_dpus(c) * len, len);
		if (i != synced + nbufs && i != iters - 1)
			continue;
		ASSERT_EQ(DPU_OK, dpu_sync(set));
		for (j = synced + 1; j <= i; j++) {
			fill_seed(want, total, (unsigned int)j + 1);
			check_snapshot(_metadata, o.dist, c, snaps + j * nr_dpus(c) * len, len,
				       want, "queued behind its DRI_do", j);
		}
		check_mram(_metadata, set, o.dist, c, 0, want, want, "after a dpu_sync");
		if (_metadata->exit_code == KSFT_FAIL) {
			TH_LOG("iterations %d to %d, %d buffers", synced + 1, i, nbufs);
			break;
		}
		synced = i;
	}
	DRI_xfer_destroy(x);
	dobj_free(&o);
	dpu_free(set);
	for (k = 0; k < nbufs; k++)
		free(bufs[k]);
	free(want);
	free(big);
	free(snaps);
}

/* Rows of 512 bytes: 16 runs per DPU, not packed */
static const struct rcase async_rows = { "2-D 32 x 256 over 2 x 2, 4-byte", 2, { 32, 256 },
					 { 2, 2 }, { BLK, BLK }, { 0, 1 }, 4, 0 };

/* Transposing layouts: packed plans, one block per DPU */
static const struct rcase transposed_64 = { "2-D 64 x 64 rows over 8, transposed", 2,
					    { 64, 64 }, { 8, 1 }, { BLK, WHL }, { 1, 0 }, 4, 0 };
static const struct rcase transposed_37x53_3byte = { "2-D 37 x 53 over 3 x 2, transposed", 2,
						     { 37, 53 }, { 3, 2 }, { BLK, BLK },
						     { 1, 0 }, 3, 0 };

TEST(async_scatter_two_buffers)
{
	async_scatter(_metadata, &async_rows, 2, 9, false);
}

TEST(async_scatter_three_buffers)
{
	async_scatter(_metadata, &async_rows, 3, 13, false);
}

TEST(async_scatter_two_buffers_with_overlaps)
{
	const struct rcase c = { "2-D 32 x 256 over 2 x 2, overlaps 1", 2, { 32, 256 }, { 2, 2 },
				 { OVL(1, 1), OVL(1, 1) }, { 0, 1 }, 4, 1 };

	async_scatter(_metadata, &c, 2, 7, false);
}

/* A transposing layout: packed, through the transfer's packing buffers */
TEST(async_scatter_packed_transposed_two_buffers)
{
	const struct rcase c = transposed_64;

	async_scatter(_metadata, &c, 2, 24, true);
}

TEST(async_scatter_packed_transposed_three_buffers_3byte)
{
	const struct rcase c = transposed_37x53_3byte;

	async_scatter(_metadata, &c, 3, 19, true);
}

/*
 * The same in windows of DPUSIM_DRI_WINDOW bytes per DPU: 32 (and 36)
 * windows per DRI_do through the transfer's 4 packing buffers, so that
 * DRI_do waits for the queue before it packs into one again; a buffer
 * packed while its window is still queued (behind the blocker) would put
 * a later window's bytes on the DPUs.  The 3-byte case cuts elements.
 */
TEST(async_scatter_packed_in_windows)
{
	const struct rcase c = transposed_64;
	const struct rcase c3 = transposed_37x53_3byte;

	ASSERT_EQ(0, setenv("DPUSIM_DRI_WINDOW", "64", 1));
	async_scatter(_metadata, &c, 2, 12, true);
	ASSERT_EQ(0, setenv("DPUSIM_DRI_WINDOW", "40", 1));
	async_scatter(_metadata, &c3, 3, 10, true);
}

/*
 * dpu_sync of a queue that is done makes no system call when the status
 * page says so, and one SYNC per rank without the page; the data is there
 * either way.
 */
TEST(sync_of_a_done_queue)
{
	const struct rcase c = transposed_64;
	uint64_t total = total_bytes(&c);
	uint8_t *host = malloc(total);
	void *bufs[1] = { host };
	struct dpu_set_t set;
	DRI_Transfer x;
	uint32_t ranks;
	struct dobj o;
	int page;

	ASSERT_NE(NULL, host);
	fill_seed(host, total, 5);
	for (page = 1; page >= 0; page--) {
		no_status_page = !page;
		ASSERT_EQ(DPU_OK, dpu_alloc(nr_dpus(&c), PROFILE, &set));
		no_status_page = 0;
		dobj_make(_metadata, set, &c, &o);
		ASSERT_EQ(0, DRI_xfer_create("in", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0,
					     1, bufs, DRI_TO_DPUS | DRI_ASYNC, &x));
		ASSERT_EQ(0, DRI_do("in", x));
		ASSERT_EQ(DPU_OK, dpu_sync(set));	/* may wait */
		syncs = 0;
		ASSERT_EQ(DPU_OK, dpu_sync(set));	/* done: the page says so */
		ASSERT_EQ(DPU_OK, dpu_get_nr_ranks(set, &ranks));
		EXPECT_EQ(page ? 0 : (long)ranks, syncs) TH_LOG("with%s the status page",
								page ? "" : "out");
		check_mram(_metadata, set, o.dist, &c, 0, host, host, "after the sync");
		DRI_xfer_destroy(x);
		dobj_free(&o);
		dpu_free(set);
	}
	free(host);
}

/*
 * An asynchronous packed scatter that must wait for a packing buffer and
 * whose wait fails: DRI_do says so (EIO, with a message), leaves nothing
 * allocated, and the transfer works again once the queue answers.  The
 * set has no status page, so that the wait is a SYNC even if the queue
 * is done by then.
 */
TEST(async_scatter_packed_wait_fails)
{
	const struct rcase c = transposed_64;
	uint64_t total = total_bytes(&c);
	uint8_t *host = malloc(total);
	void *bufs[1] = { host };
	struct dpu_set_t set;
	DRI_Transfer x;
	struct dobj o;

	ASSERT_NE(NULL, host);
	fill_seed(host, total, 7);
	ASSERT_EQ(0, setenv("DPUSIM_DRI_WINDOW", "256", 1));	/* 8 windows, 4 buffers */
	no_status_page = 1;
	ASSERT_EQ(DPU_OK, dpu_alloc(nr_dpus(&c), PROFILE, &set));
	no_status_page = 0;
	dobj_make(_metadata, set, &c, &o);
	ASSERT_EQ(0, DRI_xfer_create("in", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, bufs,
				     DRI_TO_DPUS | DRI_ASYNC, &x));
	EXPECT_EQ(4u * 8 * 256, DRI_xfer_host_bytes(x));
	fail_sync = EIO;
	EXPECT_FAILS(EIO, "DRI_do in: a transfer queued before this window failed", DRI_do("in", x));
	fail_sync = 0;
	ASSERT_EQ(DPU_OK, dpu_sync(set));
	ASSERT_EQ(0, DRI_do("in", x));
	ASSERT_EQ(DPU_OK, dpu_sync(set));
	check_mram(_metadata, set, o.dist, &c, 0, host, host, "after the wait answered");
	DRI_xfer_destroy(x);
	dobj_free(&o);
	dpu_free(set);
	free(host);
}

/*
 * What a packed transfer stages stays bounded whatever the array (64 MiB
 * of floats over 8 DPUs, transposed): 16 MiB of packing buffers, however
 * many host buffers an asynchronous one cycles through (it kept a packed
 * copy of the whole array per buffer before); a redistribution adds its
 * host array of the global shape.  No DRI_do: the buffers are never
 * touched.
 */
TEST(packing_buffers_stay_bounded)
{
	const struct rcase c = { "2-D 4096 x 4096 rows over 8, transposed", 2, { 4096, 4096 },
				 { 8, 1 }, { BLK, WHL }, { 1, 0 }, 4, 0 };
	const struct rcase rows = { "2-D 64 x 64 rows over 8", 2, { 64, 64 }, { 8, 1 },
				    { BLK, WHL }, { 0, 1 }, 4, 0 };
	const struct rcase small = transposed_64;
	uint64_t total = total_bytes(&c);
	void *big = malloc(total), *bufs[3] = { big, big, big };
	DRI_Transfer x, r;
	struct dpu_set_t set;
	struct dobj o, o2;

	ASSERT_NE(NULL, big);
	ASSERT_EQ(0, unsetenv("DPUSIM_DRI_WINDOW"));
	ASSERT_EQ(DPU_OK, dpu_alloc(8, PROFILE, &set));
	dobj_make(_metadata, set, &c, &o);
	ASSERT_EQ(0, DRI_xfer_create("a", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 3, bufs,
				     DRI_TO_DPUS | DRI_ASYNC, &x));
	EXPECT_EQ(16ULL << 20, DRI_xfer_host_bytes(x));
	DRI_xfer_destroy(x);
	ASSERT_EQ(0, DRI_xfer_create("s", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 3, bufs,
				     DRI_TO_DPUS, &x));
	EXPECT_EQ(16ULL << 20, DRI_xfer_host_bytes(x));
	DRI_xfer_destroy(x);
	ASSERT_EQ(0, DRI_xfer_create("g", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, bufs,
				     DRI_FROM_DPUS, &x));
	EXPECT_EQ(16ULL << 20, DRI_xfer_host_bytes(x));
	DRI_xfer_destroy(x);
	dobj_make(_metadata, set, &rows, &o2);
	/* unpacked: nothing of its own */
	ASSERT_EQ(0, DRI_xfer_create("u", o2.dist, o2.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 3, bufs,
				     DRI_TO_DPUS | DRI_ASYNC, &x));
	EXPECT_EQ(0u, DRI_xfer_host_bytes(x));
	DRI_xfer_destroy(x);
	dobj_free(&o2);
	/* small: each of the 4 buffers holds the whole, 8 x 2 KiB */
	dobj_make(_metadata, set, &small, &o2);
	ASSERT_EQ(0, DRI_xfer_create("t", o2.dist, o2.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 2, bufs,
				     DRI_TO_DPUS | DRI_ASYNC, &x));
	EXPECT_EQ(4u * 8 * 2048, DRI_xfer_host_bytes(x));
	DRI_xfer_destroy(x);
	dobj_free(&o2);
	/* rows to transposed columns: the host array, then the packed scatter */
	dobj_make(_metadata, set, &(struct rcase){ "rows", 2, { 4096, 4096 }, { 8, 1 },
						   { BLK, WHL }, { 0, 1 }, 4, 0 }, &o2);
	ASSERT_EQ(0, DRI_redist_create("r", o2.dist, o2.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, o.dist,
				       o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 0, &r));
	EXPECT_EQ(total + (16ULL << 20), DRI_xfer_host_bytes(r));
	DRI_xfer_destroy(r);
	EXPECT_EQ(0u, DRI_xfer_host_bytes(NULL));
	dobj_free(&o2);
	dobj_free(&o);
	dpu_free(set);
	free(big);
}

/*
 * Asynchronous gathers through 2 buffers: each DRI_do lands in the next
 * buffer.  A synchronous scatter between two of them waits for the first
 * (a rank runs its transfers in order), so each gather sees its own data.
 */
TEST(async_gather_two_buffers)
{
	const struct rcase *c = &async_rows;
	uint64_t total = total_bytes(c);
	uint8_t *src = malloc(total), *want = malloc(total), *big = calloc(1, BLOCKER_BYTES);
	uint8_t *b0 = malloc(total), *b1 = malloc(total);
	void *sbuf[1] = { src }, *bufs[2] = { b0, b1 };
	struct dpu_set_t set;
	DRI_Transfer in, out;
	struct dobj o;

	ASSERT_TRUE(src && want && big && b0 && b1);
	fill_seed(b0, total, 50);
	fill_seed(b1, total, 51);
	ASSERT_EQ(DPU_OK, dpu_alloc(nr_dpus(c), PROFILE, &set));
	dobj_make(_metadata, set, c, &o);
	ASSERT_EQ(0, DRI_xfer_create("in", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, sbuf,
				     DRI_TO_DPUS, &in));
	ASSERT_EQ(0, DRI_xfer_create("out", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 2, bufs,
				     DRI_FROM_DPUS | DRI_ASYNC, &out));
	EXPECT_LT(1, DRI_xfer_max_blocks(out));
	fill_seed(src, total, 1);
	ASSERT_EQ(0, DRI_do("in", in));
	queue_blocker(_metadata, set, big);		/* the gathers stay in flight */
	ASSERT_EQ(0, DRI_do("out", out));		/* into b0 */
	fill_seed(src, total, 2);
	ASSERT_EQ(0, DRI_do("in", in));
	ASSERT_EQ(0, DRI_do("out", out));		/* into b1 */
	ASSERT_EQ(DPU_OK, dpu_sync(set));
	fill_seed(want, total, 1);
	EXPECT_EQ(0, memcmp(b0, want, total)) TH_LOG("the first gather, into buffer 0");
	fill_seed(want, total, 2);
	EXPECT_EQ(0, memcmp(b1, want, total)) TH_LOG("the second gather, into buffer 1");
	fill_seed(src, total, 3);
	ASSERT_EQ(0, DRI_do("in", in));
	ASSERT_EQ(0, DRI_do("out", out));		/* into b0 again */
	ASSERT_EQ(DPU_OK, dpu_sync(set));
	fill_seed(want, total, 3);
	EXPECT_EQ(0, memcmp(b0, want, total)) TH_LOG("the third gather, into buffer 0");
	fill_seed(want, total, 2);
	EXPECT_EQ(0, memcmp(b1, want, total)) TH_LOG("buffer 1, left alone");
	DRI_xfer_destroy(out);
	DRI_xfer_destroy(in);
	dobj_free(&o);
	dpu_free(set);
	free(src);
	free(want);
	free(big);
	free(b0);
	free(b1);
}

/* A gather whose runs are packed cannot be asynchronous: refused, with a message */
TEST(async_gather_packed_is_refused)
{
	const struct rcase c = transposed_64;
	uint64_t total = total_bytes(&c);
	uint8_t *b0 = malloc(total), *b1 = malloc(total);
	void *bufs[2] = { b0, b1 };
	DRI_Transfer x = UNTOUCHED;
	struct dpu_set_t set;
	struct dobj o;

	ASSERT_TRUE(b0 && b1);
	ASSERT_EQ(DPU_OK, dpu_alloc(nr_dpus(&c), PROFILE, &set));
	dobj_make(_metadata, set, &c, &o);
	EXPECT_FAILS(EINVAL, "DRI_ASYNC",
		     DRI_xfer_create("out", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 2, bufs,
				     DRI_FROM_DPUS | DRI_ASYNC, &x));
	EXPECT_EQ(UNTOUCHED, x);
	EXPECT_FAILS(EINVAL, "gather it synchronously",
		     DRI_xfer_create("out", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, bufs,
				     DRI_FROM_DPUS | DRI_ASYNC, &x));
	EXPECT_EQ(UNTOUCHED, x);
	/* synchronously, the same gather is fine */
	ASSERT_EQ(0, DRI_xfer_create("out", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 2, bufs,
				     DRI_FROM_DPUS, &x));
	EXPECT_EQ(1, DRI_xfer_max_blocks(x));
	DRI_xfer_destroy(x);
	dobj_free(&o);
	dpu_free(set);
	free(b0);
	free(b1);
}

/* ------------------------------------------------------------ failure paths */

TEST(gdo_create_rejects_0_and_5_dimensions)
{
	uint64_t n[5] = { 4, 4, 4, 4, 4 };
	DRI_Globaldata g = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "DRI_gdo_create: 0 dimensions", DRI_gdo_create(0, 4, n, &g));
	EXPECT_FAILS(EINVAL, "DRI_gdo_create: 5 dimensions", DRI_gdo_create(5, 4, n, &g));
	EXPECT_FAILS(EINVAL, "DRI_gdo_create: -1 dimensions", DRI_gdo_create(-1, 4, n, &g));
	EXPECT_EQ(UNTOUCHED, g);
}

TEST(gdo_create_rejects_null_sizes)
{
	DRI_Globaldata g = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "NULL sizes", DRI_gdo_create(2, 4, NULL, &g));
	EXPECT_EQ(UNTOUCHED, g);
}

TEST(gdo_create_rejects_a_null_result)
{
	uint64_t n[2] = { 4, 4 };

	EXPECT_FAILS(EINVAL, "NULL sizes or result", DRI_gdo_create(2, 4, n, NULL));
}

TEST(gdo_create_rejects_a_datatype_of_0_bytes)
{
	uint64_t n[2] = { 4, 4 };
	DRI_Globaldata g = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "datatype of 0 bytes", DRI_gdo_create(2, 0, n, &g));
	EXPECT_EQ(UNTOUCHED, g);
}

TEST(gdo_create_rejects_a_dimension_of_0_elements)
{
	uint64_t n[3] = { 4, 0, 4 };
	DRI_Globaldata g = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "dimension 1 has 0 elements", DRI_gdo_create(3, 4, n, &g));
	EXPECT_EQ(UNTOUCHED, g);
}

TEST(part_create_rejects_0_and_5_dimensions)
{
	DRI_Tuple t[5] = { BLK, BLK, BLK, BLK, BLK };
	DRI_Partition p = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "DRI_part_create: 0 dimensions", DRI_part_create(0, t, &p));
	EXPECT_FAILS(EINVAL, "DRI_part_create: 5 dimensions", DRI_part_create(5, t, &p));
	EXPECT_EQ(UNTOUCHED, p);
}

TEST(part_create_rejects_null_tuples)
{
	DRI_Partition p = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "NULL tuples", DRI_part_create(2, NULL, &p));
	EXPECT_EQ(UNTOUCHED, p);
}

TEST(part_create_rejects_a_null_result)
{
	DRI_Tuple t[2] = { BLK, BLK };

	EXPECT_FAILS(EINVAL, "NULL tuples or result", DRI_part_create(2, t, NULL));
}

TEST(part_create_rejects_an_unknown_kind)
{
	DRI_Tuple t[2] = { BLK, { .kind = DRI_WHOLE + 1 } };
	DRI_Partition p = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "dimension 1: unknown kind 3", DRI_part_create(2, t, &p));
	t[1].kind = -1;
	EXPECT_FAILS(EINVAL, "dimension 1: unknown kind -1", DRI_part_create(2, t, &p));
	EXPECT_EQ(UNTOUCHED, p);
}

TEST(part_create_rejects_block_cyclic_blocks_of_0)
{
	DRI_Tuple t[2] = { CYC(0), BLK };
	DRI_Partition p = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "dimension 0: block-cyclic with blocks of 0",
		     DRI_part_create(2, t, &p));
	EXPECT_EQ(UNTOUCHED, p);
}

TEST(part_create_rejects_min_above_max)
{
	DRI_Tuple t[2] = { BLK, { .kind = DRI_BLOCK, .min = 5, .max = 4 } };
	DRI_Partition p = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "dimension 1: min 5 above max 4", DRI_part_create(2, t, &p));
	EXPECT_EQ(UNTOUCHED, p);
}

TEST(layout_create_rejects_0_and_5_dimensions)
{
	int order[5] = { 0, 1, 2, 3, 4 };
	DRI_Layout l = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "DRI_layout_create: 0 dimensions", DRI_layout_create(0, order, &l));
	EXPECT_FAILS(EINVAL, "DRI_layout_create: 5 dimensions", DRI_layout_create(5, order, &l));
	EXPECT_FAILS(EINVAL, "DRI_layout_create: 5 dimensions", DRI_layout_create(5, NULL, &l));
	EXPECT_EQ(UNTOUCHED, l);
}

TEST(layout_create_rejects_a_null_result)
{
	int order[2] = { 1, 0 };

	EXPECT_FAILS(EINVAL, "NULL result", DRI_layout_create(2, order, NULL));
	EXPECT_FAILS(EINVAL, "NULL result", DRI_layout_create(2, NULL, NULL));
}

TEST(layout_create_rejects_a_repeated_dimension)
{
	int order[3] = { 2, 0, 2 };
	DRI_Layout l = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "not a permutation of 0..2 (entry 2 is 2)",
		     DRI_layout_create(3, order, &l));
	EXPECT_EQ(UNTOUCHED, l);
}

TEST(layout_create_rejects_a_dimension_out_of_range)
{
	int order[3] = { 0, 3, 1 };
	DRI_Layout l = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "not a permutation of 0..2 (entry 1 is 3)",
		     DRI_layout_create(3, order, &l));
	order[1] = -1;
	EXPECT_FAILS(EINVAL, "not a permutation of 0..2 (entry 1 is -1)",
		     DRI_layout_create(3, order, &l));
	EXPECT_EQ(UNTOUCHED, l);
}

TEST(group_create_rejects_an_empty_set)
{
	struct dpu_set_t none;
	uint32_t grid[1] = { 1 };
	DRI_Group grp = UNTOUCHED;

	memset(&none, 0, sizeof(none));
	EXPECT_FAILS(EINVAL, "DRI_group_create: invalid or empty dpu set",
		     DRI_group_create(none, 1, grid, &grp));
	EXPECT_EQ(UNTOUCHED, grp);
}

/*
 * A set of 8 DPUs and a 2-D array of 16 x 12 floats over it, 4 x 2 with
 * overlaps of 1: what the failure paths below start from.
 */
static const struct rcase fx_case = { "2-D 16 x 12 over 4 x 2, overlaps 1", 2, { 16, 12 },
				      { 4, 2 }, { OVL(1, 1), OVL(1, 1) }, { 0, 1 }, 4, 1 };

FIXTURE(dri)
{
	struct dpu_set_t set;
	struct dobj o;
	uint8_t a[16 * 12 * 4];
	void *bufs[3];
};

FIXTURE_SETUP(dri)
{
	ASSERT_EQ(DPU_OK, dpu_alloc(8, PROFILE, &self->set));
	dobj_make(_metadata, self->set, &fx_case, &self->o);
	fill(self->a, sizeof(self->a));
	self->bufs[0] = self->bufs[1] = self->bufs[2] = self->a;
}

FIXTURE_TEARDOWN(dri)
{
	dobj_free(&self->o);
	dpu_free(self->set);
}

TEST_F(dri, group_create_rejects_0_and_5_dimensions)
{
	uint32_t grid[5] = { 8, 1, 1, 1, 1 };
	DRI_Group grp = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "DRI_group_create: 0 dimensions",
		     DRI_group_create(self->set, 0, grid, &grp));
	EXPECT_FAILS(EINVAL, "DRI_group_create: 5 dimensions",
		     DRI_group_create(self->set, 5, grid, &grp));
	EXPECT_EQ(UNTOUCHED, grp);
}

TEST_F(dri, group_create_rejects_a_null_grid)
{
	DRI_Group grp = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "NULL grid", DRI_group_create(self->set, 2, NULL, &grp));
	EXPECT_EQ(UNTOUCHED, grp);
}

TEST_F(dri, group_create_rejects_a_null_result)
{
	uint32_t grid[2] = { 4, 2 };

	EXPECT_FAILS(EINVAL, "NULL grid or result", DRI_group_create(self->set, 2, grid, NULL));
}

TEST_F(dri, group_create_rejects_a_grid_product_other_than_the_dpus)
{
	uint32_t few[2] = { 3, 2 }, many[3] = { 2, 2, 4 }, zero[2] = { 8, 0 };
	DRI_Group grp = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "a grid of 6 DPUs for a set of 8",
		     DRI_group_create(self->set, 2, few, &grp));
	EXPECT_FAILS(EINVAL, "a grid of 16 DPUs for a set of 8",
		     DRI_group_create(self->set, 3, many, &grp));
	EXPECT_FAILS(EINVAL, "a grid of 0 DPUs for a set of 8",
		     DRI_group_create(self->set, 2, zero, &grp));
	EXPECT_EQ(UNTOUCHED, grp);
}

TEST_F(dri, dist_create_rejects_null_objects)
{
	DRI_Distribution d = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "NULL object", DRI_dist_create(NULL, self->o.p, self->o.grp, &d));
	EXPECT_FAILS(EINVAL, "NULL object", DRI_dist_create(self->o.g, NULL, self->o.grp, &d));
	EXPECT_FAILS(EINVAL, "NULL object", DRI_dist_create(self->o.g, self->o.p, NULL, &d));
	EXPECT_FAILS(EINVAL, "NULL object",
		     DRI_dist_create(self->o.g, self->o.p, self->o.grp, NULL));
	EXPECT_EQ(UNTOUCHED, d);
}

TEST_F(dri, dist_create_rejects_mismatched_dimension_counts)
{
	uint64_t n[3] = { 16, 12, 2 };
	uint32_t grid[3] = { 4, 2, 1 };
	DRI_Tuple t[3] = { BLK, BLK, BLK };
	DRI_Distribution d = UNTOUCHED;
	DRI_Globaldata g3;
	DRI_Partition p3;
	DRI_Group grp3;

	ASSERT_EQ(0, DRI_gdo_create(3, 4, n, &g3));
	ASSERT_EQ(0, DRI_part_create(3, t, &p3));
	ASSERT_EQ(0, DRI_group_create(self->set, 3, grid, &grp3));
	EXPECT_FAILS(EINVAL, "3-D data, 2-D partition, 2-D grid",
		     DRI_dist_create(g3, self->o.p, self->o.grp, &d));
	EXPECT_FAILS(EINVAL, "2-D data, 3-D partition, 2-D grid",
		     DRI_dist_create(self->o.g, p3, self->o.grp, &d));
	EXPECT_FAILS(EINVAL, "2-D data, 2-D partition, 3-D grid",
		     DRI_dist_create(self->o.g, self->o.p, grp3, &d));
	EXPECT_EQ(UNTOUCHED, d);
	DRI_group_destroy(grp3);
	DRI_part_destroy(p3);
	DRI_gdo_destroy(g3);
}

TEST_F(dri, dist_create_rejects_a_whole_dimension_over_several_dpus)
{
	DRI_Tuple t[2] = { BLK, WHL };
	DRI_Distribution d = UNTOUCHED;
	DRI_Partition p;

	ASSERT_EQ(0, DRI_part_create(2, t, &p));
	EXPECT_FAILS(EINVAL, "dimension 1 is whole (indivisible) but spread over 2 parts",
		     DRI_dist_create(self->o.g, p, self->o.grp, &d));
	EXPECT_EQ(UNTOUCHED, d);
	DRI_part_destroy(p);
}

TEST_F(dri, dist_create_rejects_a_part_above_max)
{
	DRI_Tuple t[2] = { { .kind = DRI_BLOCK, .max = 3 }, BLK };
	DRI_Distribution d = UNTOUCHED;
	DRI_Partition p;

	ASSERT_EQ(0, DRI_part_create(2, t, &p));
	EXPECT_FAILS(EINVAL, "dimension 0: part 0 owns 4 elements, more than the max 3",
		     DRI_dist_create(self->o.g, p, self->o.grp, &d));
	EXPECT_EQ(UNTOUCHED, d);
	DRI_part_destroy(p);
}

TEST_F(dri, dist_ranges_rejects_a_bad_dimension_or_dpu)
{
	uint64_t lo[4] = { 77, 77, 77, 77 }, hi[4] = { 77, 77, 77, 77 };

	EXPECT_FAILS(EINVAL, "no dimension 2", DRI_dist_ranges(self->o.dist, 0, 2, 0, lo, hi, 4));
	EXPECT_FAILS(EINVAL, "no dimension -1",
		     DRI_dist_ranges(self->o.dist, 0, -1, 0, lo, hi, 4));
	EXPECT_FAILS(EINVAL, "or DPU 8", DRI_dist_ranges(self->o.dist, 8, 0, 0, lo, hi, 4));
	EXPECT_FAILS(EINVAL, "no dimension", DRI_dist_ranges(NULL, 0, 0, 0, lo, hi, 4));
	EXPECT_FAILS(EINVAL, "no dimension", DRI_dist_ranges(self->o.dist, 0, 0, 0, NULL, hi, 4));
	EXPECT_EQ(77, lo[0]);
	EXPECT_EQ(77, hi[0]);
	/* only counting */
	EXPECT_EQ(1, DRI_dist_ranges(self->o.dist, 0, 0, 1, NULL, NULL, 0));
	EXPECT_EQ(0, DRI_dist_local_bytes(self->o.dist, 8, 0));
	EXPECT_EQ(0, DRI_dist_local_bytes(NULL, 0, 0));
	EXPECT_EQ(4 * 6 * 4, DRI_dist_local_bytes(self->o.dist, 0, 0));
	EXPECT_EQ(5 * 7 * 4, DRI_dist_local_bytes(self->o.dist, 0, 1));
}

TEST_F(dri, xfer_create_rejects_null_arguments)
{
	const char *heap = DPU_MRAM_HEAP_POINTER_NAME;
	DRI_Transfer x = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "NULL argument",
		     DRI_xfer_create(NULL, self->o.dist, NULL, heap, 0, 1, self->bufs,
				     DRI_TO_DPUS, &x));
	EXPECT_FAILS(EINVAL, "NULL argument",
		     DRI_xfer_create("x", NULL, NULL, heap, 0, 1, self->bufs, DRI_TO_DPUS, &x));
	EXPECT_FAILS(EINVAL, "NULL argument",
		     DRI_xfer_create("x", self->o.dist, NULL, NULL, 0, 1, self->bufs,
				     DRI_TO_DPUS, &x));
	EXPECT_FAILS(EINVAL, "NULL argument",
		     DRI_xfer_create("x", self->o.dist, NULL, heap, 0, 1, NULL, DRI_TO_DPUS, &x));
	EXPECT_FAILS(EINVAL, "NULL argument",
		     DRI_xfer_create("x", self->o.dist, NULL, heap, 0, 1, self->bufs,
				     DRI_TO_DPUS, NULL));
	EXPECT_EQ(UNTOUCHED, x);
}

TEST_F(dri, xfer_create_rejects_fewer_than_1_buffer)
{
	DRI_Transfer x = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "0 buffers",
		     DRI_xfer_create("x", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 0,
				     self->bufs, DRI_TO_DPUS, &x));
	EXPECT_FAILS(EINVAL, "-1 buffers",
		     DRI_xfer_create("x", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, -1,
				     self->bufs, DRI_FROM_DPUS, &x));
	EXPECT_EQ(UNTOUCHED, x);
}

TEST_F(dri, xfer_create_rejects_a_null_buffer)
{
	DRI_Transfer x = UNTOUCHED;
	void *bufs[3] = { self->a, self->a, NULL };

	EXPECT_FAILS(EINVAL, "DRI_xfer_create x: buffer 2 is NULL",
		     DRI_xfer_create("x", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 3,
				     bufs, DRI_TO_DPUS, &x));
	bufs[0] = NULL;
	EXPECT_FAILS(EINVAL, "DRI_xfer_create x: buffer 0 is NULL",
		     DRI_xfer_create("x", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 1,
				     bufs, DRI_FROM_DPUS, &x));
	EXPECT_EQ(UNTOUCHED, x);
}

TEST_F(dri, xfer_create_rejects_a_bad_direction)
{
	DRI_Transfer x = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "DRI_xfer_create x: direction 2",
		     DRI_xfer_create("x", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 1,
				     self->bufs, 2, &x));
	EXPECT_FAILS(EINVAL, "DRI_xfer_create x: direction 3",
		     DRI_xfer_create("x", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 1,
				     self->bufs, 3 | DRI_OVERLAP | DRI_ASYNC, &x));
	EXPECT_FAILS(EINVAL, "DRI_xfer_create x: direction 1024",
		     DRI_xfer_create("x", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 1,
				     self->bufs, 1 << 10, &x));
	EXPECT_FAILS(EINVAL, "DRI_xfer_create x: direction",
		     DRI_xfer_create("x", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 1,
				     self->bufs, -1, &x));
	EXPECT_EQ(UNTOUCHED, x);
}

TEST_F(dri, xfer_create_rejects_an_mram_offset_not_a_multiple_of_8)
{
	static const uint32_t offs[] = { 1, 4, 7, 12, 1028 };
	DRI_Transfer x = UNTOUCHED;
	char msg[64];
	unsigned int k;

	for (k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
		snprintf(msg, sizeof(msg), "MRAM offset %u is not a multiple of 8", offs[k]);
		EXPECT_FAILS(EINVAL, msg,
			     DRI_xfer_create("x", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME,
					     offs[k], 1, self->bufs, DRI_TO_DPUS, &x));
	}
	EXPECT_EQ(UNTOUCHED, x);
}

TEST_F(dri, xfer_create_rejects_a_layout_of_other_dimensions)
{
	int order[3] = { 2, 1, 0 };
	DRI_Transfer x = UNTOUCHED;
	DRI_Layout l1, l3;

	ASSERT_EQ(0, DRI_layout_create(1, NULL, &l1));
	ASSERT_EQ(0, DRI_layout_create(3, order, &l3));
	EXPECT_FAILS(EINVAL, "a 1-D layout for 2-D data",
		     DRI_xfer_create("x", self->o.dist, l1, DPU_MRAM_HEAP_POINTER_NAME, 0, 1,
				     self->bufs, DRI_TO_DPUS, &x));
	EXPECT_FAILS(EINVAL, "a 3-D layout for 2-D data",
		     DRI_xfer_create("x", self->o.dist, l3, DPU_MRAM_HEAP_POINTER_NAME, 0, 1,
				     self->bufs, DRI_FROM_DPUS | DRI_OVERLAP, &x));
	EXPECT_EQ(UNTOUCHED, x);
	DRI_layout_destroy(l3);
	DRI_layout_destroy(l1);
}

/*
 * 32 x 256 floats over 2 x 2: each DPU's block is 16 rows of 512 bytes,
 * apart in the host: 16 blocks.  A set that allows 8 refuses the plan; one
 * that allows 16 takes it and moves the right bytes.
 */
TEST(xfer_create_rejects_more_blocks_than_sgXferMaxBlocksPerDpu)
{
	const struct rcase *c = &async_rows;
	uint64_t total = total_bytes(c);
	uint8_t *a = malloc(total);
	void *bufs[1] = { a };
	DRI_Transfer x = UNTOUCHED;
	struct dpu_set_t set;
	struct dobj o;

	ASSERT_NE(NULL, a);
	fill(a, total);
	ASSERT_EQ(DPU_OK, dpu_alloc(4, "sgXferEnable=true,sgXferMaxBlocksPerDpu=8", &set));
	dobj_make(_metadata, set, c, &o);
	EXPECT_FAILS(E2BIG, "16 blocks for one DPU, the set allows 8",
		     DRI_xfer_create("x", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, bufs,
				     DRI_TO_DPUS, &x));
	EXPECT_FAILS(E2BIG, "sgXferMaxBlocksPerDpu",
		     DRI_xfer_create("x", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, bufs,
				     DRI_FROM_DPUS, &x));
	EXPECT_EQ(UNTOUCHED, x);
	dobj_free(&o);
	dpu_free(set);
	ASSERT_EQ(DPU_OK, dpu_alloc(4, "sgXferEnable=true,sgXferMaxBlocksPerDpu=16", &set));
	dobj_make(_metadata, set, c, &o);
	ASSERT_EQ(0, DRI_xfer_create("x", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, bufs,
				     DRI_TO_DPUS, &x));
	EXPECT_EQ(16, DRI_xfer_max_blocks(x));
	ASSERT_EQ(0, DRI_do("x", x));
	check_mram(_metadata, set, o.dist, c, 0, a, a, "16 blocks per DPU");
	DRI_xfer_destroy(x);
	dobj_free(&o);
	dpu_free(set);
	free(a);
}

TEST_F(dri, redist_create_rejects_null_arguments)
{
	const char *heap = DPU_MRAM_HEAP_POINTER_NAME;
	DRI_Distribution d = self->o.dist;
	DRI_Transfer x = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "DRI_redist_create: NULL argument",
		     DRI_redist_create(NULL, d, NULL, heap, 0, d, NULL, heap, 4096, 0, &x));
	EXPECT_FAILS(EINVAL, "DRI_redist_create: NULL argument",
		     DRI_redist_create("r", NULL, NULL, heap, 0, d, NULL, heap, 4096, 0, &x));
	EXPECT_FAILS(EINVAL, "DRI_redist_create: NULL argument",
		     DRI_redist_create("r", d, NULL, heap, 0, NULL, NULL, heap, 4096, 0, &x));
	EXPECT_FAILS(EINVAL, "DRI_redist_create: NULL argument",
		     DRI_redist_create("r", d, NULL, heap, 0, d, NULL, heap, 4096, 0, NULL));
	/* a NULL symbol: the transfers' own check */
	EXPECT_FAILS(EINVAL, "NULL argument",
		     DRI_redist_create("r", d, NULL, NULL, 0, d, NULL, heap, 4096, 0, &x));
	EXPECT_FAILS(EINVAL, "NULL argument",
		     DRI_redist_create("r", d, NULL, heap, 0, d, NULL, NULL, 4096, 0, &x));
	EXPECT_EQ(UNTOUCHED, x);
}

TEST_F(dri, redist_create_rejects_distributions_of_different_arrays)
{
	const struct rcase other_n = { "16 x 13", 2, { 16, 13 }, { 4, 2 }, { BLK, BLK }, { 0, 1 },
				       4, 0 };
	const struct rcase other_elem = { "16 x 12 doubles", 2, { 16, 12 }, { 4, 2 }, { BLK, BLK },
					  { 0, 1 }, 8, 0 };
	const struct rcase other_ndims = { "16 x 12 x 1", 3, { 16, 12, 1 }, { 4, 2, 1 },
					   { BLK, BLK, BLK }, { 0, 1, 2 }, 4, 0 };
	const struct rcase *others[3] = { &other_n, &other_elem, &other_ndims };
	const char *heap = DPU_MRAM_HEAP_POINTER_NAME;
	DRI_Transfer x = UNTOUCHED;
	struct dobj o;
	int k;

	for (k = 0; k < 3; k++) {
		dobj_make(_metadata, self->set, others[k], &o);
		EXPECT_FAILS(EINVAL, "the two distributions are not of the same array",
			     DRI_redist_create("r", self->o.dist, NULL, heap, 0, o.dist, NULL, heap,
					       4096, 0, &x));
		EXPECT_FAILS(EINVAL, "the two distributions are not of the same array",
			     DRI_redist_create("r", o.dist, NULL, heap, 0, self->o.dist, NULL, heap,
					       4096, 0, &x));
		dobj_free(&o);
	}
	EXPECT_EQ(UNTOUCHED, x);
}

TEST_F(dri, redist_create_rejects_distributions_over_different_sets)
{
	const char *heap = DPU_MRAM_HEAP_POINTER_NAME;
	DRI_Transfer x = UNTOUCHED;
	struct dpu_set_t other;
	struct dobj o;

	ASSERT_EQ(DPU_OK, dpu_alloc(8, PROFILE, &other));
	dobj_make(_metadata, other, &fx_case, &o);
	EXPECT_FAILS(EINVAL, "the two distributions are not over the same set",
		     DRI_redist_create("r", self->o.dist, NULL, heap, 0, o.dist, NULL, heap, 4096, 0,
				       &x));
	EXPECT_FAILS(EINVAL, "the two distributions are not over the same set",
		     DRI_redist_create("r", o.dist, NULL, heap, 0, self->o.dist, NULL, heap, 4096, 0,
				       &x));
	EXPECT_EQ(UNTOUCHED, x);
	dobj_free(&o);
	dpu_free(other);
}

/* The transfers' own checks: what they refuse, the redistribution refuses */
TEST_F(dri, redist_create_rejects_an_mram_offset_not_a_multiple_of_8)
{
	const char *heap = DPU_MRAM_HEAP_POINTER_NAME;
	DRI_Distribution d = self->o.dist;
	DRI_Transfer x = UNTOUCHED;
	DRI_Layout l3;
	int order[3] = { 0, 1, 2 };

	EXPECT_FAILS(EINVAL, "MRAM offset 4 is not a multiple of 8",
		     DRI_redist_create("r", d, NULL, heap, 4, d, NULL, heap, 4096, 0, &x));
	EXPECT_FAILS(EINVAL, "MRAM offset 4100 is not a multiple of 8",
		     DRI_redist_create("r", d, NULL, heap, 0, d, NULL, heap, 4100, 0, &x));
	ASSERT_EQ(0, DRI_layout_create(3, order, &l3));
	EXPECT_FAILS(EINVAL, "a 3-D layout for 2-D data",
		     DRI_redist_create("r", d, NULL, heap, 0, d, l3, heap, 4096, 0, &x));
	EXPECT_EQ(UNTOUCHED, x);
	DRI_layout_destroy(l3);
}

/*
 * One set, its struct dpu_set_t copied member by member into storage of
 * other bytes (its padding differs): still the same set, and the
 * redistribution between two distributions over it must be made.  Fails
 * while redist_create() compares the two sets with memcmp(), padding
 * bytes included.
 */
TEST_F(dri, redist_create_takes_one_set_whatever_its_padding)
{
	const char *heap = DPU_MRAM_HEAP_POINTER_NAME;
	struct dpu_set_t copy;
	DRI_Transfer x = NULL;
	struct dobj o;

	memset(&copy, 0xa5, sizeof(copy));
	copy.kind = self->set.kind;
	if (self->set.kind == DPU_SET_RANKS) {
		copy.list.nr_ranks = self->set.list.nr_ranks;
		copy.list.ranks = self->set.list.ranks;
	} else {
		copy.dpu = self->set.dpu;
	}
	dobj_make(_metadata, copy, &fx_case, &o);
	EXPECT_EQ(0, DRI_redist_create("r", self->o.dist, NULL, heap, 0, o.dist, NULL, heap, 4096,
				       0, &x));
	DRI_xfer_destroy(x);
	dobj_free(&o);
}

TEST_F(dri, halo_create_rejects_null_arguments)
{
	const char *heap = DPU_MRAM_HEAP_POINTER_NAME;
	DRI_Transfer x = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "NULL argument", DRI_halo_create(NULL, self->o.dist, NULL, heap, 0, &x));
	EXPECT_FAILS(EINVAL, "NULL argument", DRI_halo_create("h", NULL, NULL, heap, 0, &x));
	EXPECT_FAILS(EINVAL, "NULL argument", DRI_halo_create("h", self->o.dist, NULL, NULL, 0, &x));
	EXPECT_FAILS(EINVAL, "NULL argument", DRI_halo_create("h", self->o.dist, NULL, heap, 0, NULL));
	EXPECT_EQ(UNTOUCHED, x);
}

TEST_F(dri, halo_create_rejects_an_mram_offset_not_a_multiple_of_8)
{
	DRI_Transfer x = UNTOUCHED;

	EXPECT_FAILS(EINVAL, "MRAM offset 4 is not a multiple of 8",
		     DRI_halo_create("h", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 4, &x));
	EXPECT_FAILS(EINVAL, "MRAM offset 9 is not a multiple of 8",
		     DRI_halo_create("h", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 9, &x));
	EXPECT_EQ(UNTOUCHED, x);
}

TEST_F(dri, halo_create_rejects_a_layout_of_other_dimensions)
{
	DRI_Transfer x = UNTOUCHED;
	DRI_Layout l1;

	ASSERT_EQ(0, DRI_layout_create(1, NULL, &l1));
	EXPECT_FAILS(EINVAL, "a 1-D layout for 2-D data",
		     DRI_halo_create("h", self->o.dist, l1, DPU_MRAM_HEAP_POINTER_NAME, 0, &x));
	EXPECT_EQ(UNTOUCHED, x);
	DRI_layout_destroy(l1);
}

/*
 * DRI_do with another transfer's name: -EINVAL, nothing moved, and the
 * buffers' turn not taken (the next DRI_do still uses buffer 0).
 */
TEST_F(dri, do_rejects_a_wrong_name)
{
	uint64_t total = sizeof(self->a);
	uint8_t b[sizeof(self->a)], canary[sizeof(self->a)];
	struct rcase nc = fx_case;	/* the blocks without their overlaps */
	void *bufs[2] = { self->a, b };
	struct dpu_set_t dpu;
	DRI_Transfer x, h;
	uint32_t i;

	nc.overlap = 0;
	fill_seed(b, total, 1);
	memset(canary, 0x3c, total);
	DPU_FOREACH(self->set, dpu, i) {
		ASSERT_EQ(DPU_OK, dpu_copy_to(dpu, DPU_MRAM_HEAP_POINTER_NAME, 0, canary, total));
	}
	ASSERT_EQ(0, DRI_xfer_create("in", self->o.dist, self->o.lay, DPU_MRAM_HEAP_POINTER_NAME,
				     0, 2, bufs, DRI_TO_DPUS, &x));
	ASSERT_EQ(0, DRI_halo_create("halo", self->o.dist, self->o.lay,
				     DPU_MRAM_HEAP_POINTER_NAME, 0, &h));
	EXPECT_FAILS(EINVAL, "DRI_do: no transfer named halo here", DRI_do("halo", x));
	EXPECT_FAILS(EINVAL, "DRI_do: no transfer named i here", DRI_do("i", x));
	EXPECT_FAILS(EINVAL, "DRI_do: no transfer named in2 here", DRI_do("in2", x));
	EXPECT_FAILS(EINVAL, "DRI_do: no transfer named in here", DRI_do("in", h));
	/* nothing moved */
	DPU_FOREACH(self->set, dpu, i) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, 0, b, total));
		memset(canary, 0x3c, total);
		EXPECT_EQ(0, memcmp(b, canary, total)) TH_LOG("DPU %u", i);
	}
	fill_seed(b, total, 1);
	/* the first DRI_do by its name uses buffer 0 */
	ASSERT_EQ(0, DRI_do("in", x));
	check_mram(_metadata, self->set, self->o.dist, &nc, 0, self->a, self->a,
		   "the first DRI_do");
	DRI_xfer_destroy(h);
	DRI_xfer_destroy(x);
}

TEST_F(dri, do_rejects_a_null_name_or_transfer)
{
	DRI_Transfer x;

	ASSERT_EQ(0, DRI_xfer_create("in", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 1,
				     self->bufs, DRI_TO_DPUS, &x));
	EXPECT_FAILS(EINVAL, "DRI_do: no transfer named (NULL) here", DRI_do(NULL, x));
	EXPECT_FAILS(EINVAL, "DRI_do: no transfer named in here", DRI_do("in", NULL));
	DRI_xfer_destroy(x);
}

/* Transfers the set refuses: DRI_do says so with -EIO */
TEST_F(dri, do_reports_an_unknown_symbol)
{
	DRI_Transfer x;

	ASSERT_EQ(0, DRI_xfer_create("in", self->o.dist, NULL, "no_such_symbol", 0, 1, self->bufs,
				     DRI_TO_DPUS, &x));
	EXPECT_FAILS(EIO, "DRI_do in: ", DRI_do("in", x));
	DRI_xfer_destroy(x);
}

TEST_F(dri, do_reports_an_mram_range_past_the_end)
{
	DRI_Transfer x, h;

	ASSERT_EQ(0, DRI_xfer_create("out", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME,
				     UINT32_MAX & ~7U, 1, self->bufs, DRI_FROM_DPUS, &x));
	EXPECT_FAILS(EIO, "DRI_do out: ", DRI_do("out", x));
	ASSERT_EQ(0, DRI_halo_create("h", self->o.dist, NULL, DPU_MRAM_HEAP_POINTER_NAME,
				     UINT32_MAX & ~7U, &h));
	EXPECT_FAILS(EIO, "DRI_do h: ", DRI_do("h", h));
	DRI_xfer_destroy(h);
	DRI_xfer_destroy(x);
}

/* The destroys take NULL; the queries of nothing are 0 */
TEST(destroy_and_queries_take_null)
{
	DRI_gdo_destroy(NULL);
	DRI_part_destroy(NULL);
	DRI_group_destroy(NULL);
	DRI_dist_destroy(NULL);
	DRI_layout_destroy(NULL);
	DRI_xfer_destroy(NULL);
	EXPECT_EQ(0, DRI_xfer_max_blocks(NULL));
	EXPECT_EQ(0, DRI_dist_local_bytes(NULL, 0, 1));
}

/* ------------------------------------------------------------ nothing outside the blocks */

/*
 * A scatter, a halo refresh and a redistribution write each DPU's block
 * and nothing else: not the rest of the 8-byte word a block ends in, not
 * the bytes up to the largest block of the set, not a DPU that owns
 * nothing.  Every DPU's MRAM is filled with a pattern of its own over
 * FENCE_SPAN bytes (past every block of these cases) before the call;
 * after it, each byte outside the block must still be the pattern's, and
 * the block must be the one expect_mixed() gives.
 */
#define FENCE_SPAN 16384

static void fence_fill(struct __test_metadata *_metadata, struct dpu_set_t set, uint8_t *before)
{
	struct dpu_set_t dpu;
	uint32_t i;

	DPU_FOREACH(set, dpu, i) {
		fill_seed(before + (uint64_t)i * FENCE_SPAN, FENCE_SPAN, 50 + i);
		ASSERT_EQ(DPU_OK, dpu_copy_to(dpu, DPU_MRAM_HEAP_POINTER_NAME, 0,
					      before + (uint64_t)i * FENCE_SPAN, FENCE_SPAN));
	}
}

static void fence_snapshot(struct __test_metadata *_metadata, struct dpu_set_t set,
			   uint8_t *before)
{
	struct dpu_set_t dpu;
	uint32_t i;

	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, 0,
						before + (uint64_t)i * FENCE_SPAN, FENCE_SPAN));
}

/*
 * Every DPU's MRAM 0 .. FENCE_SPAN - 1: its block of @c's @dist at
 * @offset with @host's elements, and @before's bytes everywhere else
 */
static void fence_check(struct __test_metadata *_metadata, struct dpu_set_t set,
			DRI_Distribution dist, const struct rcase *c, uint32_t offset,
			const uint8_t *before, const uint8_t *host, const char *what)
{
	uint8_t *want = malloc(FENCE_SPAN), *got = malloc(FENCE_SPAN);
	struct dpu_set_t dpu;
	uint64_t len, b;
	uint32_t i;

	ASSERT_TRUE(want && got);
	DPU_FOREACH(set, dpu, i) {
		memcpy(want, before + (uint64_t)i * FENCE_SPAN, FENCE_SPAN);
		len = DRI_dist_local_bytes(dist, i, c->overlap);
		ASSERT_GE(FENCE_SPAN, offset + len);
		ASSERT_EQ(len, expect_mixed(_metadata, dist, c, i, host, host, want + offset));
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, 0, got,
						FENCE_SPAN));
		if (!memcmp(got, want, FENCE_SPAN))
			continue;
		for (b = 0; got[b] == want[b]; b++)
			;
		EXPECT_EQ(want[b], got[b])
			TH_LOG("%s (%s): DPU %u's MRAM byte %llu changed: its block is bytes %u .. %llu",
			       c->name, what, i, (unsigned long long)b, offset,
			       (unsigned long long)(offset + len - 1));
		break;
	}
	free(want);
	free(got);
}

/* A scatter of @c at MRAM offset @offset (@flags: DRI_ASYNC) */
static void fence_scatter(struct __test_metadata *_metadata, const struct rcase *c,
			  uint32_t offset, int flags)
{
	uint64_t total = total_bytes(c);
	uint8_t *a = malloc(total), *before = malloc((uint64_t)nr_dpus(c) * FENCE_SPAN);
	void *abuf[1] = { a };
	struct dpu_set_t set;
	DRI_Transfer x;
	struct dobj o;

	ASSERT_TRUE(a && before);
	fill(a, total);
	ASSERT_EQ(DPU_OK, dpu_alloc(nr_dpus(c), PROFILE, &set));
	dobj_make(_metadata, set, c, &o);
	ASSERT_EQ(0, DRI_xfer_create("in", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, offset, 1,
				     abuf, DRI_TO_DPUS | flags | (c->overlap ? DRI_OVERLAP : 0),
				     &x));
	fence_fill(_metadata, set, before);
	ASSERT_EQ(0, DRI_do("in", x));
	if (flags & DRI_ASYNC)
		ASSERT_EQ(DPU_OK, dpu_sync(set));
	fence_check(_metadata, set, o.dist, c, offset, before, a, "scatter");
	DRI_xfer_destroy(x);
	dobj_free(&o);
	dpu_free(set);
	free(a);
	free(before);
}

static const struct rcase fence_cases[] = {
	/* blocks of 256, 224 and 196 bytes: three lengths, one ends inside a word */
	{ "2-D 31 x 15 over 4 x 2, 4-byte", 2, { 31, 15 }, { 4, 2 }, { BLK, BLK }, { 0, 1 }, 4, 0 },
	/* 3-byte elements: most blocks end inside a word */
	{ "2-D 11 x 9 over 8 x 1, 3-byte", 2, { 11, 9 }, { 8, 1 }, { BLK, WHL }, { 0, 1 }, 3, 0 },
	/* 3 elements over 8: five DPUs own nothing */
	{ "1-D 3 over 8, 4-byte", 1, { 3 }, { 8 }, { BLK }, { 0 }, 4, 0 },
	{ "1-D 997 bytes over 8, block-cyclic(16)", 1, { 997 }, { 8 }, { CYC(16) }, { 0 }, 1, 0 },
	/* packed (a transposing layout) */
	{ "2-D 31 x 15 over 4 x 2, transposed, 4-byte", 2, { 31, 15 }, { 4, 2 }, { BLK, BLK },
	  { 1, 0 }, 4, 0 },
	{ "2-D 37 x 53 over 1 x 5, transposed, 3-byte", 2, { 37, 53 }, { 1, 5 }, { WHL, BLK },
	  { 1, 0 }, 3, 0 },
	{ "2-D 23 x 17 over 4 x 2 with overlaps 1/2, 3-byte", 2, { 23, 17 }, { 4, 2 },
	  { OVL(1, 2), OVL(2, 1) }, { 0, 1 }, 3, 1 },
	{ "4-D 5 x 4 x 3 x 7 over 2 x 1 x 2 x 2, 3-byte", 4, { 5, 4, 3, 7 }, { 2, 1, 2, 2 },
	  { BLK, WHL, BLK, CYC(3) }, { 0, 1, 2, 3 }, 3, 0 },
};

static void fence_scatters(struct __test_metadata *_metadata)
{
	unsigned int i;

	for (i = 0; i < sizeof(fence_cases) / sizeof(fence_cases[0]); i++) {
		fence_scatter(_metadata, &fence_cases[i], 0, 0);
		fence_scatter(_metadata, &fence_cases[i], 40, 0);
		fence_scatter(_metadata, &fence_cases[i], 8, DRI_ASYNC);
		if (_metadata->exit_code == KSFT_FAIL) {
			TH_LOG("case %u: %s", i, fence_cases[i].name);
			return;
		}
	}
}

TEST(scatter_changes_nothing_outside_the_blocks)
{
	fence_scatters(_metadata);
}

TEST_F_TIMEOUT(slow, scatter_in_windows_changes_nothing_outside_the_blocks, 300)
{
	unsigned int w;

	for (w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
		ASSERT_EQ(0, setenv("DPUSIM_DRI_WINDOW", windows[w], 1));
		fence_scatters(_metadata);
		if (_metadata->exit_code == KSFT_FAIL) {
			TH_LOG("window %s", windows[w]);
			return;
		}
	}
}

/* A halo refresh: the blocks with their overlaps rewritten, nothing else */
static void fence_halo(struct __test_metadata *_metadata, const struct rcase *c)
{
	uint64_t total = total_bytes(c);
	uint8_t *a = malloc(total), *before = malloc((uint64_t)nr_dpus(c) * FENCE_SPAN);
	void *abuf[1] = { a };
	struct dpu_set_t set;
	DRI_Transfer in, h;
	struct dobj o;

	ASSERT_TRUE(a && before);
	fill(a, total);
	ASSERT_EQ(DPU_OK, dpu_alloc(nr_dpus(c), PROFILE, &set));
	dobj_make(_metadata, set, c, &o);
	ASSERT_EQ(0, DRI_xfer_create("in", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 16, 1, abuf,
				     DRI_TO_DPUS | DRI_OVERLAP, &in));
	ASSERT_EQ(0, DRI_halo_create("halo", o.dist, o.lay, DPU_MRAM_HEAP_POINTER_NAME, 16, &h));
	fence_fill(_metadata, set, before);
	ASSERT_EQ(0, DRI_do("in", in));
	fence_check(_metadata, set, o.dist, c, 16, before, a, "scattered with overlaps");
	fence_snapshot(_metadata, set, before);
	ASSERT_EQ(0, DRI_do("halo", h));
	fence_check(_metadata, set, o.dist, c, 16, before, a, "halo refreshed");
	DRI_xfer_destroy(h);
	DRI_xfer_destroy(in);
	dobj_free(&o);
	dpu_free(set);
	free(a);
	free(before);
}

TEST(halo_refresh_changes_nothing_outside_the_blocks)
{
	const struct rcase c1 = { "1-D 10 over 8, overlaps 2/2", 1, { 10 }, { 8 }, { OVL(2, 2) },
				  { 0 }, 1, 1 };
	const struct rcase c2 = { "2-D 31 x 15 over 3 x 2, overlaps 2", 2, { 31, 15 }, { 3, 2 },
				  { OVL(2, 2), OVL(2, 2) }, { 0, 1 }, 3, 1 };
	const struct rcase c3 = { "2-D 31 x 15 over 2 x 2, overlaps 1, transposed", 2,
				  { 31, 15 }, { 2, 2 }, { OVL(1, 1), OVL(1, 1) }, { 1, 0 }, 4, 1 };

	fence_halo(_metadata, &c1);
	fence_halo(_metadata, &c2);
	fence_halo(_metadata, &c3);
}

/* A redistribution: @to's blocks at their offset written, nothing else */
static void fence_redist(struct __test_metadata *_metadata, const struct rcase *from,
			 const struct rcase *to)
{
	uint8_t *before = malloc((uint64_t)nr_dpus(from) * FENCE_SPAN);
	struct redist r;

	ASSERT_NE(NULL, before);
	redist_make(_metadata, &r, from, to);
	fence_fill(_metadata, r.set, before);
	redist_load(_metadata, &r, 3);
	fence_snapshot(_metadata, r.set, before);
	ASSERT_EQ(0, DRI_do("turn", r.x));
	fence_check(_metadata, r.set, r.t.dist, to, r.to_off, before, r.a, "redistributed");
	redist_free(&r);
	free(before);
}

TEST(redistribution_changes_nothing_outside_the_blocks)
{
	struct rcase rows, cols;
	const struct rcase blocks = { "2 x 2 blocks", 2, { 23, 9 }, { 2, 2 }, { BLK, BLK },
				      { 0, 1 }, 3, 0 };
	const struct rcase rows4 = { "rows", 2, { 23, 9 }, { 4, 1 }, { BLK, WHL }, { 0, 1 }, 3, 0 };

	corner_cases(5, 200, 6, 3, &rows, &cols);	/* one empty source block */
	fence_redist(_metadata, &rows, &cols);
	corner_cases(37, 53, 5, 4, &rows, &cols);
	fence_redist(_metadata, &rows, &cols);
	fence_redist(_metadata, &rows4, &blocks);
}

TEST_HARNESS_MAIN
