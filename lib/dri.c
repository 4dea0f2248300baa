// SPDX-License-Identifier: MIT
/*
 * dri.c - the DRI objects of include/dri.h over the partition arithmetic
 * (dri_part.c) and the plans (dri_plan.c).  A transfer's plan is kept per
 * DPU as strided runs (host offset, length, stride, count): a row-major
 * block is one run per row of it, a transposed one one run per column of
 * it, so the plan stays small; get_block finds block i of a DPU by a
 * binary search over its runs.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "dri.h"
#include "dri_plan.h"
#include "xfer.h"
#include "internal.h"

struct dri_gdo {
	unsigned int ndims;
	size_t elem;
	uint64_t n[DRI_MAX_DIMS];
};

struct dri_part {
	unsigned int ndims;
	struct dri_dim_part dim[DRI_MAX_DIMS];
};

struct dri_group {
	struct dpu_set_t set;
	unsigned int ndims;
	uint32_t grid[DRI_MAX_DIMS];
	uint32_t nr_dpus;
};

struct dri_dist {
	struct dpu_set_t set;
	struct dri_shape shape;		/* order[] unused here */
};

struct dri_layout {
	unsigned int ndims;
	unsigned int order[DRI_MAX_DIMS];
};

/*
 * Blocks first .. first + count - 1: @len bytes at host offset
 * @off + k * @stride, and at MRAM offset @moff + k * @len
 */
struct dri_run {
	uint64_t off;
	uint64_t stride;
	uint64_t count;
	uint64_t first;
	uint64_t moff;
	uint32_t len;
	bool discard;			/* a neighbour's element: into @scratch */
};

struct dri_dpu_plan {
	struct dri_run *runs;
	uint64_t nr_runs, cap;
	uint64_t nr_blocks;
	uint64_t bytes;			/* in MRAM: the sum of the blocks */
	uint32_t max_discard;		/* the longest discarded run */
};

/* The packing buffers of an asynchronous transfer (see struct dri_xfer) */
#define DRI_PACK_SLOTS	4

struct dri_xfer {
	char *name;
	char *symbol;
	struct dpu_set_t set;
	uint32_t offset;
	uint64_t length;		/* per DPU: the largest block, rounded up to 8 */
	int direction;
	int nbufs, next;
	uint8_t **bufs;
	uint8_t *cur;			/* the buffer of the DRI_do running */
	/* a gather from blocks with overlaps: where their bytes go */
	uint8_t *scratch;
	uint32_t nr_dpus;
	uint64_t max_blocks;
	struct dri_dpu_plan *plan;
	/* a redistribution: this gathers into @staging, then @then scatters */
	struct dri_xfer *then;
	void *staging;			/* dri_big_alloc()'s: free() it */
	/*
	 * Plans of short runs (a transposing layout: a run per element) are
	 * packed: DRI_do copies each DPU's runs into its place in @packed (or
	 * back out of it) with a CPU loop, and moves one block per DPU; a
	 * descriptor per element would cost the transfer engine far more.
	 * It does it a window of MRAM at a time: bytes @wo .. @wo + @wlen - 1
	 * of every DPU (at most @window), so a packing buffer holds @window
	 * bytes per DPU, not the array.  A synchronous transfer has one
	 * buffer.  An asynchronous one must leave a window's bytes until its
	 * copy ran: it cycles through DRI_PACK_SLOTS of them, and before it
	 * packs into one again it waits for the transfers queued so far.
	 */
	uint8_t *packed;		/* the push's: one of @slots, or NULL */
	uint8_t *slots[DRI_PACK_SLOTS];
	void *slots_raw[DRI_PACK_SLOTS];	/* what dri_big_alloc() gave to free() */
	int nslots, slot;		/* how many; the next to pack into */
	int filled;			/* slots packed since the last wait */
	uint64_t window;		/* bytes per DPU per push; DPU i at i * window */
	uint64_t wo, wlen;		/* the window of this push */
	bool async;			/* DRI_ASYNC */
	uint64_t host_bytes;		/* what the transfer allocated for data */
	struct dri_helpers *helpers;	/* packing threads (dri_pack()) */
	bool no_helpers;		/* they could not start: do not try again */
	/*
	 * A scatter changes nothing outside each DPU's block (bytes 0 ..
	 * plan[i].bytes - 1 at @offset).  The kernel moves one length per
	 * ioctl, a multiple of 8, and zeroes what a DPU's blocks leave of it:
	 * so a scatter is pushed in groups, the DPUs whose part of the window
	 * rounds up to the same length @glen together (a DPU with nothing
	 * left out), and a part that ends inside an 8-byte word is completed
	 * with the bytes the word held, read just before (@tail_read): every
	 * DPU's blocks then fill the length exactly, checked by the length
	 * check.  @glens holds the groups of a window (see dri_groups()).
	 */
	uint64_t *glens;		/* nr_dpus entries */
	uint64_t glen;			/* the group pushed; 0: not grouped */
	bool tail_read;			/* read the words the group ends in */
	/* not packed: DPU i's last word at 8 * i (NULL: no block ends inside one) */
	uint8_t *tail;
};

/*
 * The library's own large buffers (packing, a redistribution's host
 * array) start on a 2 MiB boundary and are marked for transparent huge
 * pages: each push pins and unpins every page of its host blocks, and a
 * huge page is one pin where 4 KiB pages are 512.  The slack before the
 * boundary is never touched.  *@raw gets what to free(); NULL when out of
 * memory.
 */
#define DRI_HUGE	(2ULL << 20)
#define DRI_HUGE_MIN	(512ULL << 10)

static void *dri_big_alloc(uint64_t size, void **raw)
{
	uintptr_t a;

	if (size < DRI_HUGE_MIN) {
		*raw = malloc(size ? size : 1);
		return *raw;
	}
	size = (size + DRI_HUGE - 1) & ~(DRI_HUGE - 1);
	*raw = size + DRI_HUGE > size ? malloc(size + DRI_HUGE) : NULL;
	if (!*raw)
		return NULL;
	a = ((uintptr_t)*raw + DRI_HUGE - 1) & ~(uintptr_t)(DRI_HUGE - 1);
	madvise((void *)a, size, MADV_HUGEPAGE);	/* a hint: failure is fine */
	return (void *)a;
}

/* Plans whose runs average fewer bytes than this are packed */
#define DRI_PACK_RUN_BYTES 256

/*
 * The packed bytes a transfer stages, over all DPUs and all its packing
 * buffers: windows at least DRI_PACK_MIN_WINDOW bytes per DPU, so that a
 * transposed block's window spans enough of its columns to read whole
 * cache lines of the host array.
 */
#define DRI_PACK_BUDGET		(16u << 20)
#define DRI_PACK_MIN_WINDOW	(64u << 10)

/*
 * DPUSIM_DRI_WINDOW=BYTES sets the window per DPU of the packed
 * transfers created after it (a multiple of 8, at least 8):
 * the tests cut runs and elements with it.
 */
static uint64_t dri_window_env(void)
{
	const char *s = getenv("DPUSIM_DRI_WINDOW");
	unsigned long long v;
	char *end;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < 8 || v % 8) {
		dpusim_log("dri: DPUSIM_DRI_WINDOW=%s ignored: not a multiple of 8 from 8 up", s);
		return 0;
	}
	return v;
}

static int dri_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int dri_err(int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dpusim_log("dri: %s", msg);
	return -err;
}

static int check_ndims(const char *fn, int ndims)
{
	if (ndims < 1 || ndims > DRI_MAX_DIMS)
		return dri_err(EINVAL, "%s: %d dimensions (1 to %d)", fn, ndims, DRI_MAX_DIMS);
	return 0;
}

DPUSIM_API int DRI_gdo_create(int ndims, size_t datatype, const uint64_t sizes[],
			      DRI_Globaldata *gdo)
{
	struct dri_gdo *g;
	int k, r = check_ndims("DRI_gdo_create", ndims);

	if (r)
		return r;
	if (!sizes || !gdo || !datatype)
		return dri_err(EINVAL, "DRI_gdo_create: %s", !datatype ? "datatype of 0 bytes" :
			       "NULL sizes or result");
	for (k = 0; k < ndims; k++)
		if (!sizes[k])
			return dri_err(EINVAL, "DRI_gdo_create: dimension %d has 0 elements", k);
	g = calloc(1, sizeof(*g));
	if (!g)
		return dri_err(ENOMEM, "DRI_gdo_create: out of memory");
	g->ndims = (unsigned int)ndims;
	g->elem = datatype;
	memcpy(g->n, sizes, (size_t)ndims * sizeof(*sizes));
	*gdo = g;
	return 0;
}

DPUSIM_API int DRI_part_create(int ndims, const DRI_Tuple tuples[], DRI_Partition *part)
{
	struct dri_part *p;
	int k, r = check_ndims("DRI_part_create", ndims);

	if (r)
		return r;
	if (!tuples || !part)
		return dri_err(EINVAL, "DRI_part_create: NULL tuples or result");
	for (k = 0; k < ndims; k++) {
		if (tuples[k].kind < DRI_BLOCK || tuples[k].kind > DRI_WHOLE)
			return dri_err(EINVAL, "DRI_part_create: dimension %d: unknown kind %d", k,
				       tuples[k].kind);
		if (tuples[k].kind == DRI_BLOCK_CYCLIC && !tuples[k].block)
			return dri_err(EINVAL, "DRI_part_create: dimension %d: block-cyclic with blocks of 0", k);
		if (tuples[k].max && tuples[k].min > tuples[k].max)
			return dri_err(EINVAL, "DRI_part_create: dimension %d: min %llu above max %llu", k,
				       (unsigned long long)tuples[k].min,
				       (unsigned long long)tuples[k].max);
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return dri_err(ENOMEM, "DRI_part_create: out of memory");
	p->ndims = (unsigned int)ndims;
	for (k = 0; k < ndims; k++)
		p->dim[k] = (struct dri_dim_part){
			.kind = (enum dri_dim_kind)tuples[k].kind, .block = tuples[k].block,
			.left_overlap = tuples[k].left_overlap,
			.right_overlap = tuples[k].right_overlap,
			.min = tuples[k].min, .max = tuples[k].max,
		};
	*part = p;
	return 0;
}

DPUSIM_API int DRI_group_create(struct dpu_set_t set, int ndims, const uint32_t grid[],
				DRI_Group *group)
{
	struct dpusim_set_props *props = dpusim_set_props(set, "DRI_group_create");
	struct dri_group *g;
	uint64_t prod = 1;
	uint32_t nr;
	int k, r = check_ndims("DRI_group_create", ndims);

	if (r)
		return r;
	if (!props)
		return -EINVAL;
	if (!grid || !group)
		return dri_err(EINVAL, "DRI_group_create: NULL grid or result");
	for (k = 0; k < ndims; k++)
		prod *= grid[k] ? grid[k] : 0;
	if (dpu_get_nr_dpus(set, &nr) != DPU_OK)
		return -EINVAL;
	if (prod != nr)
		return dri_err(EINVAL, "DRI_group_create: a grid of %llu DPUs for a set of %u",
			       (unsigned long long)prod, nr);
	g = calloc(1, sizeof(*g));
	if (!g)
		return dri_err(ENOMEM, "DRI_group_create: out of memory");
	g->set = set;
	g->ndims = (unsigned int)ndims;
	g->nr_dpus = nr;
	memcpy(g->grid, grid, (size_t)ndims * sizeof(*grid));
	*group = g;
	return 0;
}

DPUSIM_API int DRI_dist_create(DRI_Globaldata gdo, DRI_Partition part, DRI_Group group,
			       DRI_Distribution *dist)
{
	struct dri_dist *d;
	char msg[200];
	unsigned int k;

	if (!gdo || !part || !group || !dist)
		return dri_err(EINVAL, "DRI_dist_create: NULL object");
	if (gdo->ndims != part->ndims || gdo->ndims != group->ndims)
		return dri_err(EINVAL, "DRI_dist_create: %u-D data, %u-D partition, %u-D grid",
			       gdo->ndims, part->ndims, group->ndims);
	for (k = 0; k < gdo->ndims; k++)
		if (dri_dim_check(&part->dim[k], k, gdo->n[k], group->grid[k], msg, sizeof(msg)))
			return dri_err(EINVAL, "DRI_dist_create: %s", msg);
	d = calloc(1, sizeof(*d));
	if (!d)
		return dri_err(ENOMEM, "DRI_dist_create: out of memory");
	d->set = group->set;
	d->shape.ndims = gdo->ndims;
	d->shape.elem = gdo->elem;
	for (k = 0; k < gdo->ndims; k++) {
		d->shape.n[k] = gdo->n[k];
		d->shape.grid[k] = group->grid[k];
		d->shape.dim[k] = part->dim[k];
		d->shape.order[k] = k;
	}
	*dist = d;
	return 0;
}

DPUSIM_API int64_t DRI_dist_ranges(DRI_Distribution dist, uint32_t dpu, int dim, int overlap,
				   uint64_t lo[], uint64_t hi[], uint64_t max)
{
	struct dri_range *rg;
	uint64_t n, i;
	uint32_t c = dpu;
	int k;

	if (!dist || dim < 0 || dim >= (int)dist->shape.ndims ||
	    dpu >= dri_grid_size(&dist->shape) || (max && (!lo || !hi)))
		return dri_err(EINVAL, "DRI_dist_ranges: no dimension %d or DPU %u", dim, dpu);
	for (k = (int)dist->shape.ndims - 1; k > dim; k--)
		c /= dist->shape.grid[k];
	c %= dist->shape.grid[dim];
	n = dri_dim_ranges(&dist->shape.dim[dim], dist->shape.n[dim], dist->shape.grid[dim], c,
			   overlap, NULL, 0);
	rg = calloc(n ? n : 1, sizeof(*rg));
	if (!rg)
		return dri_err(ENOMEM, "DRI_dist_ranges: out of memory");
	dri_dim_ranges(&dist->shape.dim[dim], dist->shape.n[dim], dist->shape.grid[dim], c,
		       overlap, rg, n);
	for (i = 0; i < n && i < max; i++) {
		lo[i] = rg[i].start;
		hi[i] = rg[i].end;
	}
	free(rg);
	return (int64_t)n;
}

DPUSIM_API uint64_t DRI_dist_local_bytes(DRI_Distribution dist, uint32_t dpu, int overlap)
{
	if (!dist || dpu >= dri_grid_size(&dist->shape))
		return 0;
	return dri_local_elems(&dist->shape, dpu, overlap) * dist->shape.elem;
}

DPUSIM_API int DRI_layout_create(int ndims, const int order[], DRI_Layout *layout)
{
	struct dri_layout *l;
	unsigned int seen = 0;
	int k, r = check_ndims("DRI_layout_create", ndims);

	if (r)
		return r;
	if (!layout)
		return dri_err(EINVAL, "DRI_layout_create: NULL result");
	for (k = 0; order && k < ndims; k++) {
		if (order[k] < 0 || order[k] >= ndims || (seen & (1u << order[k])))
			return dri_err(EINVAL,
				       "DRI_layout_create: order is not a permutation of 0..%d (entry %d is %d)",
				       ndims - 1, k, order[k]);
		seen |= 1u << order[k];
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return dri_err(ENOMEM, "DRI_layout_create: out of memory");
	l->ndims = (unsigned int)ndims;
	for (k = 0; k < ndims; k++)
		l->order[k] = order ? (unsigned int)order[k] : (unsigned int)k;
	*layout = l;
	return 0;
}

/* ------------------------------------------------------------ plans */

static int plan_add(struct dri_dpu_plan *p, uint64_t off, uint64_t len, bool discard)
{
	struct dri_run *r = p->nr_runs ? &p->runs[p->nr_runs - 1] : NULL;

	if (len > UINT32_MAX)
		return -E2BIG;
	p->bytes += len;
	if (discard) {
		off = 0;		/* every discarded run lands on the scratch */
		if (len > p->max_discard)
			p->max_discard = (uint32_t)len;
	}
	if (r && r->len == len && r->discard == discard &&
	    (discard || (r->count == 1 ? off > r->off : off == r->off + r->count * r->stride))) {
		if (r->count == 1)
			r->stride = off - r->off;
		r->count++;
		p->nr_blocks++;
		return 0;
	}
	if (p->nr_runs == p->cap) {
		uint64_t cap = p->cap ? 2 * p->cap : 16;
		struct dri_run *n = realloc(p->runs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->runs = n;
		p->cap = cap;
	}
	p->runs[p->nr_runs++] = (struct dri_run){
		.off = off, .stride = 0, .count = 1, .first = p->nr_blocks,
		.moff = p->bytes - len, .len = (uint32_t)len, .discard = discard,
	};
	p->nr_blocks++;
	return 0;
}

static int plan_seg(void *ctx, uint64_t off, uint64_t len)
{
	return plan_add(ctx, off, len, false);
}

/* A gather from a block with its overlaps: the neighbours' bytes discarded */
static int plan_seg_owned(void *ctx, uint64_t off, uint64_t len, bool owned)
{
	return plan_add(ctx, off, len, !owned);
}

/* Bytes of DPU @i's block in the window @wo .. @wo + @wlen - 1 */
static uint64_t dri_extent(const struct dri_xfer *x, uint32_t i)
{
	uint64_t have = x->plan[i].bytes;

	if (have <= x->wo)
		return 0;
	return have - x->wo < x->wlen ? have - x->wo : x->wlen;
}

static uint64_t dri_round8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

/* Where DPU @i's last word (in the group being pushed) is kept on the host */
static uint8_t *dri_tail_word(const struct dri_xfer *x, uint32_t i)
{
	if (x->packed)	/* after its packed bytes: the window is a multiple of 8 */
		return x->packed + i * x->window + x->glen - 8;
	return x->tail + 8 * (uint64_t)i;
}

static bool dri_get_block(struct sg_block_info *out, uint32_t dpu_index, uint32_t block_index,
			  void *args)
{
	struct dri_xfer *x = *(struct dri_xfer **)args;
	const struct dri_dpu_plan *p;
	uint64_t lo = 0, hi, mid, e = 0;
	const struct dri_run *r;

	if (dpu_index >= x->nr_dpus)
		return false;
	if (x->glen) {
		e = dri_extent(x, dpu_index);
		if (dri_round8(e) != x->glen)
			return false;		/* another group's, or nothing */
		if (x->tail_read) {
			if (block_index || !(e % 8))
				return false;
			out->addr = dri_tail_word(x, dpu_index);
			out->length = 8;
			return true;
		}
	}
	if (x->packed) {
		uint64_t have = x->plan[dpu_index].bytes;

		if (block_index || have <= x->wo)
			return false;
		out->addr = x->packed + dpu_index * x->window;
		/* grouped: the packed bytes, then the rest of their last word */
		out->length = (uint32_t)(x->glen ? x->glen : dri_extent(x, dpu_index));
		return true;
	}
	p = &x->plan[dpu_index];
	if (x->glen && block_index == p->nr_blocks && e % 8) {
		/* the rest of the last word, as it was */
		out->addr = dri_tail_word(x, dpu_index) + e % 8;
		out->length = (uint32_t)(8 - e % 8);
		return true;
	}
	if (block_index >= p->nr_blocks)
		return false;
	hi = p->nr_runs;
	while (hi - lo > 1) {		/* the last run with first <= block_index */
		mid = (lo + hi) / 2;
		if (p->runs[mid].first <= block_index)
			lo = mid;
		else
			hi = mid;
	}
	r = &p->runs[lo];
	out->addr = (r->discard ? x->scratch : x->cur + r->off) +
		    (block_index - r->first) * r->stride;
	out->length = r->len;
	return true;
}

/* Pack the plan if its runs are short: one block per DPU from then on */
static int dri_pack_setup(struct dri_xfer *x)
{
	uint64_t runs = 0, bytes = 0, size;
	uint32_t i;
	int k;

	for (i = 0; i < x->nr_dpus; i++) {
		runs += x->plan[i].nr_blocks;
		bytes += x->plan[i].bytes;
	}
	if (!runs || bytes / runs >= DRI_PACK_RUN_BYTES)
		return 0;
	x->nslots = x->async ? DRI_PACK_SLOTS : 1;
	x->window = x->length;
	size = dri_window_env();
	if (size && size < x->length) {
		x->window = size;
	} else if ((uint64_t)x->nslots * x->nr_dpus * x->length > DRI_PACK_BUDGET) {
		x->window = (DRI_PACK_BUDGET / x->nslots / x->nr_dpus) & ~7ULL;
		if (x->window < DRI_PACK_MIN_WINDOW)
			x->window = DRI_PACK_MIN_WINDOW;
		if (x->window > x->length)
			x->window = x->length;
	}
	if (x->window > UINT32_MAX)
		return -E2BIG;
	size = (uint64_t)x->nr_dpus * x->window;
	for (k = 0; k < x->nslots; k++) {
		x->slots[k] = dri_big_alloc(size, &x->slots_raw[k]);
		if (!x->slots[k])
			return -ENOMEM;
		x->host_bytes += size;
	}
	x->packed = x->slots[0];
	x->max_blocks = 1;
	return 0;
}

/*
 * Copy @nr runs of the same shape (@len bytes, @count times, @stride
 * apart), run k starting @len bytes after run k - 1 (a transposed
 * block's adjacent columns), between the host array at @h and @p
 * (run after run): in tiles of DRI_TILE x DRI_TILE, as a transpose is
 * done, so that neither side walks the whole array once per run.
 */
#define DRI_TILE 32

/*
 * One tile: @len is a compile-time constant where dri_pack_tiles() can
 * make it one, so that an element is a load and a store, not a call.  The
 * inner loop walks the packed side, whose elements are adjacent, and
 * strides over the host array (the faster of the two orders: see the
 * corner turn in tools/bench/README).
 */
#define DRI_TILE_LOOP(LEN, DST, SRC)						\
	do {									\
		for (k = k0; k < ke; k++) {					\
			hh = h + c0 * stride + k * (LEN);			\
			pp = p + (k * count + c0) * (LEN);			\
			for (c = c0; c < ce; c++, hh += stride, pp += (LEN))	\
				memcpy(DST, SRC, (LEN));			\
		}								\
	} while (0)

#define DRI_TILE_SIZES(DST, SRC)						\
	do {									\
		switch (len) {							\
		case 1:								\
			DRI_TILE_LOOP(1, DST, SRC);				\
			break;							\
		case 2:								\
			DRI_TILE_LOOP(2, DST, SRC);				\
			break;							\
		case 4:								\
			DRI_TILE_LOOP(4, DST, SRC);				\
			break;							\
		case 8:								\
			DRI_TILE_LOOP(8, DST, SRC);				\
			break;							\
		case 16:							\
			DRI_TILE_LOOP(16, DST, SRC);				\
			break;							\
		default:							\
			DRI_TILE_LOOP(len, DST, SRC);				\
			break;							\
		}								\
	} while (0)

/*
 * The same for 4-byte elements, two by two: a 2 x 2 block is two 8-byte
 * loads and two 8-byte stores (the halves swapped), where the loop above
 * makes four of each: half the memory accesses.
 * The transpose of a 2 x 2 block is its own inverse: one shape serves
 * both directions.
 */
static inline void dri_swap2x2(uint8_t *d0, uint8_t *d1, const uint8_t *s0, const uint8_t *s1)
{
	uint64_t a, b, lo, hi;

	memcpy(&a, s0, 8);
	memcpy(&b, s1, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	lo = (a & 0xffffffffULL) | (b << 32);
	hi = (a >> 32) | (b & 0xffffffff00000000ULL);
#else
	lo = (a >> 32 << 32) | (b >> 32);
	hi = (a << 32) | (b & 0xffffffffULL);
#endif
	memcpy(d0, &lo, 8);
	memcpy(d1, &hi, 8);
}

static void dri_tile4(uint8_t *p, uint8_t *h, uint64_t k0, uint64_t ke, uint64_t c0,
		      uint64_t ce, uint64_t count, uint64_t stride, bool to_packed)
{
	uint64_t k = k0, c;
	uint8_t *hh, *pp;

	for (; k + 1 < ke; k += 2) {
		hh = h + c0 * stride + k * 4;
		pp = p + (k * count + c0) * 4;
		for (c = c0; c + 1 < ce; c += 2, hh += 2 * stride, pp += 8) {
			if (to_packed)
				dri_swap2x2(pp, pp + count * 4, hh, hh + stride);
			else
				dri_swap2x2(hh, hh + stride, pp, pp + count * 4);
		}
		if (c < ce) {		/* the tile's last column of an odd count */
			if (to_packed) {
				memcpy(pp, hh, 4);
				memcpy(pp + count * 4, hh + 4, 4);
			} else {
				memcpy(hh, pp, 4);
				memcpy(hh + 4, pp + count * 4, 4);
			}
		}
	}
	if (k < ke) {			/* the tile's last run of an odd number */
		hh = h + c0 * stride + k * 4;
		pp = p + (k * count + c0) * 4;
		for (c = c0; c < ce; c++, hh += stride, pp += 4) {
			if (to_packed)
				memcpy(pp, hh, 4);
			else
				memcpy(hh, pp, 4);
		}
	}
}

static void dri_pack_tiles(uint8_t *p, uint8_t *h, uint64_t nr, uint32_t len, uint64_t count,
			   uint64_t stride, bool to_packed)
{
	uint64_t k0, c0, k, c, ke, ce;
	uint8_t *pp, *hh;

	for (k0 = 0; k0 < nr; k0 += DRI_TILE)
		for (c0 = 0; c0 < count; c0 += DRI_TILE) {
			ke = k0 + DRI_TILE < nr ? k0 + DRI_TILE : nr;
			ce = c0 + DRI_TILE < count ? c0 + DRI_TILE : count;
			if (len == 4)
				dri_tile4(p, h, k0, ke, c0, ce, count, stride, to_packed);
			else if (to_packed)
				DRI_TILE_SIZES(pp, hh);
			else
				DRI_TILE_SIZES(hh, pp);
		}
}

/*
 * Bytes @a .. @b - 1 of run @r's blocks (in MRAM order) between the host
 * array and @p: the part of a run that a window cuts.
 */
static void dri_pack_part(const struct dri_xfer *x, const struct dri_run *r, uint64_t a,
			  uint64_t b, uint8_t *p, bool to_packed)
{
	uint64_t k, in, n;
	uint8_t *h;

	while (a < b) {
		k = a / r->len;
		in = a % r->len;
		n = r->len - in < b - a ? r->len - in : b - a;
		h = x->cur + r->off + k * r->stride + in;
		if (to_packed)
			memcpy(p, h, n);
		else
			memcpy(h, p, n);
		p += n;
		a += n;
	}
}

/* The first run of @pl that ends after MRAM offset @o */
static uint64_t dri_run_at(const struct dri_dpu_plan *pl, uint64_t o)
{
	uint64_t lo = 0, hi = pl->nr_runs, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (pl->runs[mid].moff + pl->runs[mid].count * pl->runs[mid].len <= o)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Groups of whole runs waiting to be tiled: the next group is added to it
 * when it continues it on both sides (the next columns of the host array,
 * the next bytes of @packed), across DPUs too, so that a corner turn's
 * pack is one tiled transpose of the whole window, not one per DPU with
 * a DPU's few columns per tile.
 */
struct dri_pending {
	uint8_t *p, *h;
	uint64_t nr, count, stride;
	uint32_t len;
};

static void dri_pending_flush(struct dri_pending *g, bool to_packed)
{
	if (g->nr)
		dri_pack_tiles(g->p, g->h, g->nr, g->len, g->count, g->stride, to_packed);
	g->nr = 0;
}

static void dri_pending_add(struct dri_pending *g, uint8_t *p, uint8_t *h, uint64_t nr,
			    const struct dri_run *r, bool to_packed)
{
	uint64_t stride = r->count > 1 ? r->stride : 0;

	if (g->nr && g->len == r->len && g->count == r->count && g->stride == stride &&
	    p == g->p + g->nr * r->count * r->len && h == g->h + g->nr * r->len) {
		g->nr += nr;
		return;
	}
	dri_pending_flush(g, to_packed);
	*g = (struct dri_pending){ .p = p, .h = h, .nr = nr, .count = r->count,
				   .stride = stride, .len = r->len };
}

/*
 * Copy the runs of DPUs @from .. @to - 1 in this push's window between
 * the host array and @packed.  Whole runs go to dri_pending_add(), which
 * tiles those of the same shape that continue each other (a transposed
 * block's columns) as one.
 */
static void dri_pack_dpus(struct dri_xfer *x, bool to_packed, uint32_t from, uint32_t to)
{
	struct dri_pending g = { .nr = 0 };
	uint64_t k, pos, end, rend;
	const struct dri_dpu_plan *pl;
	const struct dri_run *r;
	uint8_t *p;
	uint32_t i;

	for (i = from; i < to; i++) {
		pl = &x->plan[i];
		p = x->packed + i * x->window;
		pos = x->wo;
		end = x->wo + x->wlen < pl->bytes ? x->wo + x->wlen : pl->bytes;
		for (k = dri_run_at(pl, pos); pos < end; k++) {
			r = &pl->runs[k];
			rend = r->moff + r->count * r->len;
			if (pos > r->moff || rend > end) {	/* cut by the window */
				if (rend > end)
					rend = end;
				if (!r->discard)
					dri_pack_part(x, r, pos - r->moff, rend - r->moff, p, to_packed);
			} else if (!r->discard) {
				dri_pending_add(&g, p, x->cur + r->off, 1, r, to_packed);
			}
			p += rend - pos;
			pos = rend;
		}
	}
	dri_pending_flush(&g, to_packed);
}

/*
 * Packing helpers.  A pack is cut into DRI_PACK_CHUNKS chunks of DPUs
 * (their parts are disjoint on both sides), which the caller and the
 * transfer's helper threads take in turn: a helper that wakes late only
 * takes fewer chunks, and none if the caller took them all, so a pack is
 * never much slower than the caller alone.  Waking a thread costs far
 * less than starting one (tools/bench/README, the corner turn): so the
 * threads are started at the transfer's first pack of at least
 * DRI_PACK_HELP_BYTES, parked on a condition variable between packs, and
 * joined by DRI_xfer_destroy().  There are up to
 * DRI_PACK_THREADS - 1 of them, one fewer than the CPUs the process may
 * run on; none with one CPU, or when none could start (the caller then
 * packs alone).  They block every signal.  In a child of fork() they do
 * not exist: there the caller packs alone and nothing is joined.
 *
 * @claim holds the pack's generation (high 32 bits) and its next chunk:
 * a helper takes a chunk only of the generation it woke for, with the
 * parameters it read under @lock, so a late helper cannot take a chunk
 * of the next pack.  @done counts the chunks finished; the caller waits
 * for all of them before DRI_do goes on.
 */
#define DRI_PACK_THREADS	4
#define DRI_PACK_CHUNKS		8
#define DRI_PACK_HELP_BYTES	(256u << 10)

struct dri_helpers {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t tid[DRI_PACK_THREADS - 1];
	int nr;				/* threads started */
	pid_t pid;			/* of the process that started them */
	bool stop;
	uint32_t gen;			/* the pack posted last */
	struct dri_xfer *x;		/* its parameters */
	bool to_packed;
	uint32_t nchunks;
	_Atomic uint64_t claim;		/* gen << 32 | next chunk */
	_Atomic uint32_t done;		/* chunks finished */
};

static void dri_pack_chunk(struct dri_xfer *x, bool to_packed, uint32_t k, uint32_t n)
{
	dri_pack_dpus(x, to_packed, (uint32_t)((uint64_t)x->nr_dpus * k / n),
		      (uint32_t)((uint64_t)x->nr_dpus * (k + 1) / n));
}

/* Take and pack chunks of generation @gen until none is left */
static void dri_pack_claim(struct dri_helpers *h, uint32_t gen, struct dri_xfer *x,
			   bool to_packed, uint32_t n)
{
	uint64_t c = atomic_load(&h->claim);

	while ((uint32_t)(c >> 32) == gen && (uint32_t)c < n) {
		if (!atomic_compare_exchange_weak(&h->claim, &c, c + 1))
			continue;
		dri_pack_chunk(x, to_packed, (uint32_t)c, n);
		atomic_fetch_add(&h->done, 1);
		c = atomic_load(&h->claim);
	}
}

static void *dri_helper_thread(void *arg)
{
	struct dri_helpers *h = arg;
	uint32_t gen = 0, n;	/* the pack last seen */
	struct dri_xfer *x;
	bool to_packed;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (!h->stop && h->gen == gen)
			pthread_cond_wait(&h->wake, &h->lock);
		if (h->stop)
			break;
		gen = h->gen;
		x = h->x;
		to_packed = h->to_packed;
		n = h->nchunks;
		pthread_mutex_unlock(&h->lock);
		dri_pack_claim(h, gen, x, to_packed, n);
		pthread_mutex_lock(&h->lock);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static void dri_helpers_stop(struct dri_helpers *h)
{
	int t;

	if (!h)
		return;
	/*
	 * In a child of fork() the threads do not exist, and destroying the
	 * condition variable would wait for them to leave it.
	 */
	if (h->pid == getpid()) {
		pthread_mutex_lock(&h->lock);
		h->stop = true;
		pthread_cond_broadcast(&h->wake);
		pthread_mutex_unlock(&h->lock);
		for (t = 0; t < h->nr; t++)
			pthread_join(h->tid[t], NULL);
		pthread_cond_destroy(&h->wake);
		pthread_mutex_destroy(&h->lock);
	}
	free(h);
}

/*
 * The helpers of @x, started at the first call; NULL when the process
 * may run on one CPU only or no thread could start (then the caller
 * packs alone), and in a child of fork().
 */
static struct dri_helpers *dri_helpers_get(struct dri_xfer *x)
{
	struct dri_helpers *h = x->helpers;
	sigset_t all, old;
	cpu_set_t cpus;
	int t, want;

	if (h)
		return h->pid == getpid() ? h : NULL;
	if (x->no_helpers)
		return NULL;
	x->no_helpers = true;
	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		return NULL;
	want = CPU_COUNT(&cpus) - 1;
	if (want > DRI_PACK_THREADS - 1)
		want = DRI_PACK_THREADS - 1;
	if (want < 1)
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	if (pthread_mutex_init(&h->lock, NULL)) {
		free(h);
		return NULL;
	}
	if (pthread_cond_init(&h->wake, NULL)) {
		pthread_mutex_destroy(&h->lock);
		free(h);
		return NULL;
	}
	h->pid = getpid();
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);	/* the threads inherit it */
	for (t = 0; t < want && !pthread_create(&h->tid[t], NULL, dri_helper_thread, h); t++)
		h->nr++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!h->nr) {
		dri_helpers_stop(h);
		return NULL;
	}
	x->helpers = h;
	x->no_helpers = false;
	return h;
}

/*
 * Copy the runs of every DPU between the host array and @packed: alone
 * below DRI_PACK_HELP_BYTES, else with the transfer's helpers.
 */
static void dri_pack(struct dri_xfer *x, bool to_packed)
{
	uint64_t bytes = (uint64_t)x->nr_dpus * x->wlen;
	uint32_t n = x->nr_dpus < DRI_PACK_CHUNKS ? x->nr_dpus : DRI_PACK_CHUNKS, gen;
	struct dri_helpers *h = NULL;

	if (bytes >= DRI_PACK_HELP_BYTES && n > 1)
		h = dri_helpers_get(x);
	if (!h) {
		dri_pack_dpus(x, to_packed, 0, x->nr_dpus);
		return;
	}
	pthread_mutex_lock(&h->lock);
	gen = ++h->gen;
	h->x = x;
	h->to_packed = to_packed;
	h->nchunks = n;
	atomic_store(&h->done, 0);
	atomic_store(&h->claim, (uint64_t)gen << 32);
	pthread_cond_broadcast(&h->wake);
	pthread_mutex_unlock(&h->lock);
	dri_pack_claim(h, gen, x, to_packed, n);
	while (atomic_load(&h->done) < n)
		sched_yield();	/* a helper finishes its last chunk */
}

DPUSIM_API void DRI_xfer_destroy(DRI_Transfer x)
{
	uint32_t i;
	int k;

	if (!x)
		return;
	DRI_xfer_destroy(x->then);
	dri_helpers_stop(x->helpers);
	free(x->staging);
	free(x->scratch);
	for (k = 0; k < DRI_PACK_SLOTS; k++)
		free(x->slots_raw[k]);
	for (i = 0; x->plan && i < x->nr_dpus; i++)
		free(x->plan[i].runs);
	free(x->plan);
	free(x->glens);
	free(x->tail);
	free(x->bufs);
	free(x->name);
	free(x->symbol);
	free(x);
}

DPUSIM_API int DRI_xfer_create(const char *name, DRI_Distribution dist, DRI_Layout layout,
			       const char *symbol, uint32_t offset, int nbufs, void *bufs[],
			       int direction, DRI_Transfer *xfer)
{
	struct dpusim_set_props *props;
	bool overlap = direction & DRI_OVERLAP, async = direction & DRI_ASYNC;
	struct dri_shape shape;
	uint32_t i, max_discard = 0;
	struct dri_xfer *x;
	uint64_t bytes;
	int k, r;

	if (!name || !dist || !symbol || !xfer || nbufs < 1 || !bufs)
		return dri_err(EINVAL, "DRI_xfer_create: NULL argument or %d buffers", nbufs);
	for (k = 0; k < nbufs; k++)
		if (!bufs[k])
			return dri_err(EINVAL, "DRI_xfer_create %s: buffer %d is NULL", name, k);
	direction &= ~(DRI_OVERLAP | DRI_ASYNC);
	if (direction != DRI_TO_DPUS && direction != DRI_FROM_DPUS)
		return dri_err(EINVAL, "DRI_xfer_create %s: direction %d", name, direction);
	if (offset % 8)
		return dri_err(EINVAL, "DRI_xfer_create %s: MRAM offset %u is not a multiple of 8",
			       name, offset);
	shape = dist->shape;
	if (layout) {
		if (layout->ndims != shape.ndims)
			return dri_err(EINVAL, "DRI_xfer_create %s: a %u-D layout for %u-D data", name,
				       layout->ndims, shape.ndims);
		memcpy(shape.order, layout->order, sizeof(shape.order));
	}
	props = dpusim_set_props(dist->set, "DRI_xfer_create");
	if (!props)
		return -EINVAL;
	if (!props->sg_enabled)
		return dri_err(EINVAL, "DRI_xfer_create %s: the set needs the profile \"sgXferEnable=true\"",
			       name);
	x = calloc(1, sizeof(*x));
	if (!x)
		return dri_err(ENOMEM, "DRI_xfer_create: out of memory");
	x->name = strdup(name);
	x->symbol = strdup(symbol);
	x->bufs = calloc((size_t)nbufs, sizeof(*x->bufs));
	x->nr_dpus = dri_grid_size(&shape);
	x->plan = calloc(x->nr_dpus, sizeof(*x->plan));
	if (!x->name || !x->symbol || !x->bufs || !x->plan) {
		DRI_xfer_destroy(x);
		return dri_err(ENOMEM, "DRI_xfer_create: out of memory");
	}
	for (k = 0; k < nbufs; k++)
		x->bufs[k] = bufs[k];
	x->nbufs = nbufs;
	x->set = dist->set;
	x->offset = offset;
	x->direction = direction;
	x->async = async;
	for (i = 0; i < x->nr_dpus; i++) {
		if (overlap && direction == DRI_FROM_DPUS)
			r = dri_plan_walk_owned(&shape, i, plan_seg_owned, &x->plan[i]);
		else
			r = dri_plan_walk(&shape, i, overlap, plan_seg, &x->plan[i]);
		if (r) {
			DRI_xfer_destroy(x);
			return dri_err(-r, "DRI_xfer_create %s: planning DPU %u", name, i);
		}
		bytes = dri_local_elems(&shape, i, overlap) * shape.elem;
		if (bytes > x->length)
			x->length = bytes;
		if (x->plan[i].nr_blocks > x->max_blocks)
			x->max_blocks = x->plan[i].nr_blocks;
		if (x->plan[i].max_discard > max_discard)
			max_discard = x->plan[i].max_discard;
	}
	x->length = (x->length + 7) & ~7ULL;
	if (direction == DRI_TO_DPUS) {
		x->glens = calloc(x->nr_dpus, sizeof(*x->glens));
		for (i = 0; i < x->nr_dpus && x->glens && !x->tail; i++)
			if (x->plan[i].bytes % 8) {
				x->tail = malloc(8 * (size_t)x->nr_dpus);
				if (!x->tail)
					break;
			}
		if (!x->glens || (i < x->nr_dpus && !x->tail)) {
			DRI_xfer_destroy(x);
			return dri_err(ENOMEM, "DRI_xfer_create: out of memory");
		}
	}
	if (max_discard) {
		x->scratch = malloc(max_discard);
		x->host_bytes += max_discard;
		if (!x->scratch) {
			DRI_xfer_destroy(x);
			return dri_err(ENOMEM, "DRI_xfer_create: out of memory");
		}
	}
	r = dri_pack_setup(x);
	if (r) {
		DRI_xfer_destroy(x);
		return dri_err(-r, "DRI_xfer_create %s: out of memory", name);
	}
	if (async && x->packed && direction == DRI_FROM_DPUS) {
		DRI_xfer_destroy(x);
		return dri_err(EINVAL,
			       "DRI_xfer_create %s: DRI_ASYNC: this layout's runs are too short to move one by one, and unpacking them on the host needs the transfer done: gather it synchronously",
			       name);
	}
	if (x->max_blocks > props->sg_max_blocks_per_dpu) {
		r = dri_err(E2BIG,
			    "DRI_xfer_create %s: %llu blocks for one DPU, the set allows %u (profile sgXferMaxBlocksPerDpu)",
			    name, (unsigned long long)x->max_blocks, props->sg_max_blocks_per_dpu);
		DRI_xfer_destroy(x);
		return r;
	}
	*xfer = x;
	return 0;
}

/* The same set: field by field (the struct has padding) */
static bool same_set(struct dpu_set_t a, struct dpu_set_t b)
{
	if (a.kind != b.kind)
		return false;
	if (a.kind == DPU_SET_DPU)
		return a.dpu == b.dpu;
	return a.list.nr_ranks == b.list.nr_ranks && a.list.ranks == b.list.ranks;
}

static int redist_create(const char *name, DRI_Distribution from, DRI_Layout from_layout,
			 const char *from_symbol, uint32_t from_offset, int from_flags,
			 DRI_Distribution to, DRI_Layout to_layout, const char *to_symbol,
			 uint32_t to_offset, int to_flags, DRI_Transfer *xfer)
{
	struct dri_xfer *g = NULL, *sc = NULL;
	uint64_t total;
	void *buf[1], *raw;
	unsigned int k;
	int r;

	if (!name || !from || !to || !xfer)
		return dri_err(EINVAL, "DRI_redist_create: NULL argument");
	if (from->shape.ndims != to->shape.ndims || from->shape.elem != to->shape.elem ||
	    memcmp(from->shape.n, to->shape.n, sizeof(from->shape.n)))
		return dri_err(EINVAL, "DRI_redist_create %s: the two distributions are not of the same array",
			       name);
	if (!same_set(from->set, to->set))
		return dri_err(EINVAL, "DRI_redist_create %s: the two distributions are not over the same set",
			       name);
	total = from->shape.elem;
	for (k = 0; k < from->shape.ndims; k++)
		total *= from->shape.n[k];
	buf[0] = dri_big_alloc(total, &raw);
	if (!buf[0])
		return dri_err(ENOMEM, "DRI_redist_create %s: %llu bytes for the host array", name,
			       (unsigned long long)total);
	r = DRI_xfer_create(name, from, from_layout, from_symbol, from_offset, 1, buf,
			    DRI_FROM_DPUS | (from_flags & DRI_OVERLAP), &g);
	if (!r)
		r = DRI_xfer_create(name, to, to_layout, to_symbol, to_offset, 1, buf,
				    DRI_TO_DPUS | (to_flags & DRI_OVERLAP), &sc);
	if (r) {
		DRI_xfer_destroy(g);
		free(raw);
		return r;
	}
	g->then = sc;
	g->staging = raw;
	g->host_bytes += total;
	*xfer = g;
	return 0;
}

DPUSIM_API int DRI_redist_create(const char *name, DRI_Distribution from,
				 DRI_Layout from_layout, const char *from_symbol,
				 uint32_t from_offset, DRI_Distribution to, DRI_Layout to_layout,
				 const char *to_symbol, uint32_t to_offset, int to_flags,
				 DRI_Transfer *xfer)
{
	return redist_create(name, from, from_layout, from_symbol, from_offset, 0, to, to_layout,
			     to_symbol, to_offset, to_flags, xfer);
}

DPUSIM_API int DRI_halo_create(const char *name, DRI_Distribution dist, DRI_Layout layout,
			       const char *symbol, uint32_t offset, DRI_Transfer *xfer)
{
	return redist_create(name, dist, layout, symbol, offset, DRI_OVERLAP, dist, layout,
			     symbol, offset, DRI_OVERLAP, xfer);
}

DPUSIM_API uint64_t DRI_xfer_max_blocks(DRI_Transfer xfer)
{
	uint64_t m;

	if (!xfer)
		return 0;
	m = DRI_xfer_max_blocks(xfer->then);
	return xfer->max_blocks > m ? xfer->max_blocks : m;
}

DPUSIM_API uint64_t DRI_xfer_host_bytes(DRI_Transfer xfer)
{
	return xfer ? xfer->host_bytes + DRI_xfer_host_bytes(xfer->then) : 0;
}

/*
 * One push of the window at @offset: a gather (@x->glen 0, every DPU, the
 * blocks short of @length by what each DPU lacks), or a scatter group's
 * write or read of its last words.  Only the DPUs with blocks take part.
 * The read is synchronous, so it waits for the rank's queued transfers:
 * it sees what they wrote.
 */
static int dri_push(const char *name, struct dri_xfer *x, uint64_t offset, uint64_t length)
{
	get_block_t gb = { .f = dri_get_block, .args = &x, .args_size = sizeof(x) };
	dpu_xfer_t dir = x->direction == DRI_TO_DPUS ? DPU_XFER_TO_DPU : DPU_XFER_FROM_DPU;
	dpu_error_t e;

	if (x->tail_read) {
		dir = DPU_XFER_FROM_DPU;
		offset += x->glen - 8;
		length = 8;
	}
	/* a block more than the plan's: the rest of the last word */
	e = dpusim_push_sg_subset(x->set, "DRI_do", dir, x->symbol, (uint32_t)(x->offset + offset),
				  length, &gb, (uint32_t)x->max_blocks + 1, x->glen != 0,
				  x->async && !x->tail_read);
	if (e != DPU_OK) {
		const char *m = dpu_error_to_string(e);
		int r = dri_err(EIO, "DRI_do %s: %s", name, m ? m : "error");

		free((void *)m);
		return r;
	}
	return 0;
}

static int dri_cmp_desc(const void *a, const void *b)
{
	uint64_t u = *(const uint64_t *)a, v = *(const uint64_t *)b;

	return u < v ? 1 : u > v ? -1 : 0;
}

/*
 * The groups of a scatter's window in @x->glens, the longest first (its
 * push checks the whole range before any other moves a byte): each is a
 * length (a multiple of 8) with bit 0 set if one of its DPUs' parts ends
 * inside a word.  Returns how many.
 */
static uint32_t dri_groups(struct dri_xfer *x)
{
	uint32_t i, n = 0, k;
	uint64_t e;

	for (i = 0; i < x->nr_dpus; i++) {
		e = dri_extent(x, i);
		if (e)
			x->glens[n++] = dri_round8(e) | (e % 8 != 0);
	}
	qsort(x->glens, n, sizeof(*x->glens), dri_cmp_desc);
	for (i = 0, k = 0; i < n; i++) {
		if (k && (x->glens[k - 1] & ~7ULL) == (x->glens[i] & ~7ULL))
			x->glens[k - 1] |= x->glens[i];
		else
			x->glens[k++] = x->glens[i];
	}
	return k;
}

/*
 * A scatter of the window @x->wo, @x->wlen (packed into @x->packed first
 * if the transfer packs): the words the blocks end inside are read, then
 * each group is written, its DPUs' blocks filling its length exactly.
 */
static int dri_scatter_window(const char *name, struct dri_xfer *x)
{
	uint32_t g, n = dri_groups(x);
	int r = 0;

	x->tail_read = true;
	for (g = 0; g < n && !r; g++) {
		x->glen = x->glens[g] & ~7ULL;
		if (x->glens[g] & 1)
			r = dri_push(name, x, x->wo, x->glen);
	}
	x->tail_read = false;
	x->glen = 0;
	if (r)
		return r;
	if (x->packed)
		dri_pack(x, true);
	for (g = 0; g < n && !r; g++) {
		x->glen = x->glens[g] & ~7ULL;
		r = dri_push(name, x, x->wo, x->glen);
	}
	x->glen = 0;
	return r;
}

/*
 * The packing buffer of the next window.  An asynchronous transfer's
 * buffers may hold windows still queued: once all of them were packed
 * since the last wait, it waits for the set's queued transfers (every
 * one: the kernel waits for a rank's queue as a whole) before it packs
 * into the first again.
 */
static int dri_next_slot(const char *name, struct dri_xfer *x)
{
	struct dpusim_set_props *props;

	if (x->filled == x->nslots) {
		props = dpusim_set_props(x->set, "DRI_do");
		if (!props)
			return -EINVAL;
		if (dpusim_async_sync(props, "DRI_do") != DPU_OK)
			return dri_err(EIO,
				       "DRI_do %s: a transfer queued before this window failed (waiting for a packing buffer)",
				       name);
		x->filled = 0;
	}
	if (x->async)
		x->filled++;
	x->packed = x->slots[x->slot];
	x->slot = (x->slot + 1) % x->nslots;
	return 0;
}

/*
 * A packed transfer in windows.  The whole range is checked first, and
 * the last window (the one that would cross the end of the symbol) goes
 * first, so that bad arguments fail before anything moved.
 */
static int dri_do_packed(const char *name, struct dri_xfer *x)
{
	uint64_t nw = x->length ? (x->length + x->window - 1) / x->window : 1, j;
	int r;

	if (nw > 1) {	/* one window: the push itself checks it first */
		struct dpusim_set_props *props = dpusim_set_props(x->set, "DRI_do");
		uint64_t mo;
		bool wram;

		if (!props)
			return -EINVAL;
		if (dpusim_xfer_resolve_mem(props, "DRI_do", x->symbol, x->offset, x->length,
					    &mo, &wram) != DPU_OK)
			return dri_err(EINVAL, "DRI_do %s: MRAM symbol %s + %u, %llu bytes", name,
				       x->symbol, x->offset, (unsigned long long)x->length);
	}
	for (j = 0; j < nw; j++) {
		x->wo = (j ? j - 1 : nw - 1) * x->window;
		x->wlen = x->length - x->wo < x->window ? x->length - x->wo : x->window;
		r = dri_next_slot(name, x);
		if (r)
			return r;
		if (x->direction == DRI_TO_DPUS) {
			r = dri_scatter_window(name, x);
			if (r)
				return r;
			continue;
		}
		r = dri_push(name, x, x->wo, x->wlen);
		if (r)
			return r;
		dri_pack(x, false);
	}
	return 0;
}

DPUSIM_API int DRI_do(const char *name, DRI_Transfer x)
{
	int r;

	if (!x || !name || strcmp(name, x->name))
		return dri_err(EINVAL, "DRI_do: no transfer named %s here", name ? name : "(NULL)");
	x->cur = x->bufs[x->next];
	x->next = (x->next + 1) % x->nbufs;
	if (x->packed) {
		r = dri_do_packed(name, x);
	} else {
		x->wo = 0;
		x->wlen = x->length;
		r = x->direction == DRI_TO_DPUS ? dri_scatter_window(name, x) :
			dri_push(name, x, 0, x->length);
	}
	if (r)
		return r;
	return x->then ? DRI_do(name, x->then) : 0;
}

DPUSIM_API void DRI_gdo_destroy(DRI_Globaldata gdo)
{
	free(gdo);
}

DPUSIM_API void DRI_part_destroy(DRI_Partition part)
{
	free(part);
}

DPUSIM_API void DRI_group_destroy(DRI_Group group)
{
	free(group);
}

DPUSIM_API void DRI_dist_destroy(DRI_Distribution dist)
{
	free(dist);
}

DPUSIM_API void DRI_layout_destroy(DRI_Layout layout)
{
	free(layout);
}
