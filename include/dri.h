/* SPDX-License-Identifier: MIT */
/*
 * dri.h - data reorganization (the 1999 DRI meeting's objects, seed 001;
 * shared/design/dri.md) on dpusim: a global array, partitioned dimension by
 * dimension, distributed over a grid of DPUs, laid out in each DPU's MRAM
 * in a chosen dimension order, and moved by planned transfers.
 *
 * A transfer's plan is computed once, at DRI_xfer_create(): for every DPU
 * the host byte runs whose concatenation is its local block.  DRI_do()
 * executes it with dpu_push_sg_xfer()s whose get_block callback reads the
 * plan: no recomputation, no staging copy of the array.  A gather is one
 * of them.  A scatter writes each DPU's block and not one byte of MRAM
 * outside it (not the rest of the 8-byte word a block ends in, not up to
 * a longer block of another DPU, nothing on a DPU that owns nothing):
 * one push per distinct block length rounded up to 8 (one for blocks of
 * the same size), each with only the DPUs of that length, preceded, when
 * some blocks end inside a word, by a read of those words (MRAM moves in
 * 8-byte words: their other bytes are written back as they were).  A plan of short
 * runs (a transposing layout) is packed by a tiled CPU loop instead, one
 * window of MRAM per dpu_push_sg_xfer() (16 MiB over all DPUs at most),
 * so what it stages is bounded.  The set must be
 * allocated with "sgXferEnable=true" and sgXferMaxBlocksPerDpu at least
 * DRI_xfer_max_blocks() (a transposing layout has a block per element).
 *
 * Every call returns 0 or a negative errno, and prints what went wrong on
 * stderr ("dri: ...", naming the dimension for a constraint).
 */
#ifndef DPUSIM_DRI_H
#define DPUSIM_DRI_H

#include <stddef.h>
#include <stdint.h>

#include <dpu.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DRI_MAX_DIMS 4

/* Datatypes: the element size in bytes (any size is allowed, per the seed) */
#define DRI_CHAR		1
#define DRI_SHORT		2
#define DRI_INT32		4
#define DRI_FLOAT		4
#define DRI_INT64		8
#define DRI_DOUBLE		8
#define DRI_COMPLEX		8
#define DRI_DOUBLE_COMPLEX	16

/* How a dimension is partitioned */
#define DRI_BLOCK		0	/* contiguous, balanced */
#define DRI_BLOCK_CYCLIC	1	/* blocks of .block elements, round-robin */
#define DRI_WHOLE		2	/* indivisible: one grid extent of 1 */

/* The seed's 4-tuple of one dimension (overlaps, min, max) and its kind */
typedef struct DRI_Tuple {
	int kind;
	uint64_t block;			/* DRI_BLOCK_CYCLIC */
	uint64_t left_overlap;
	uint64_t min;			/* elements per DPU, at least */
	uint64_t max;			/* at most; 0: no limit */
	uint64_t right_overlap;
} DRI_Tuple;

typedef struct dri_gdo *DRI_Globaldata;
typedef struct dri_part *DRI_Partition;
typedef struct dri_group *DRI_Group;
typedef struct dri_dist *DRI_Distribution;
typedef struct dri_layout *DRI_Layout;
typedef struct dri_xfer *DRI_Transfer;

/* Transfer directions (DRI_xfer_create) */
#define DRI_TO_DPUS	0	/* scatter: host array -> each DPU's block */
#define DRI_FROM_DPUS	1	/* gather: each DPU's owned elements -> host */
/*
 * DRI_xfer_create flag: the DPUs' blocks include their overlaps.  A
 * scatter writes them; a gather reads each DPU's owned elements out of
 * them (an element has one owner: its neighbours' copies are not read back).
 */
#define DRI_OVERLAP	(1 << 8)
/*
 * DRI_xfer_create flag: DRI_do queues the transfer (DPU_SG_XFER_ASYNC) and
 * returns; dpu_sync() on the set waits for it.  With @nbufs buffers, the
 * host works on one while the transfers of the others run: buffer k must
 * stay untouched until the transfer that uses it is done.  Not for a
 * gather whose runs are packed (a transposing layout).  A scatter whose
 * runs are packed is copied by DRI_do into packing buffers of the
 * transfer's own, a window of MRAM at a time (16 MiB in all at most):
 * once all of them hold queued windows, DRI_do waits for the set's queued
 * transfers before it packs the next, so a large one returns with only
 * its last windows in flight, and the error of a transfer queued earlier
 * is then DRI_do's (EIO, and dpu_sync() no longer sees it).  A scatter
 * whose blocks end inside an 8-byte word reads those words first (see
 * the top of this file): that read waits for the set's queued transfers.
 */
#define DRI_ASYNC	(1 << 9)

/* A global array of @ndims dimensions of sizes[] elements of @datatype bytes */
DPUSIM_API int DRI_gdo_create(int ndims, size_t datatype, const uint64_t sizes[],
			      DRI_Globaldata *gdo);
/* One tuple per dimension */
DPUSIM_API int DRI_part_create(int ndims, const DRI_Tuple tuples[], DRI_Partition *part);
/*
 * The DPUs of @set (all of the allocated set, in DPU_FOREACH order) as a
 * grid of grid[0] x ... x grid[ndims - 1] (row-major): the product must be
 * the number of DPUs.
 */
DPUSIM_API int DRI_group_create(struct dpu_set_t set, int ndims, const uint32_t grid[],
				DRI_Group *group);
/* Which block each DPU owns; the constraints are checked here */
DPUSIM_API int DRI_dist_create(DRI_Globaldata gdo, DRI_Partition part, DRI_Group group,
			       DRI_Distribution *dist);
/*
 * Query: the ranges DPU @dpu owns in dimension @dim (with its overlaps if
 * @overlap): writes at most @max pairs [lo[i], hi[i]) and returns how
 * many there are (or a negative errno).
 */
DPUSIM_API int64_t DRI_dist_ranges(DRI_Distribution dist, uint32_t dpu, int dim,
				   int overlap, uint64_t lo[], uint64_t hi[], uint64_t max);
/* Bytes of DPU @dpu's local block (with its overlaps if @overlap) */
DPUSIM_API uint64_t DRI_dist_local_bytes(DRI_Distribution dist, uint32_t dpu, int overlap);
/*
 * A block's layout in MRAM: the dimensions from the outermost to the
 * innermost (order NULL: 0, 1, ..., the array's own row-major order;
 * {1, 0} in 2-D: transposed).
 */
DPUSIM_API int DRI_layout_create(int ndims, const int order[], DRI_Layout *layout);
/*
 * A planned transfer named @name between the host arrays bufs[0 ..
 * nbufs - 1] (used in turn by successive DRI_do calls) and each DPU's
 * block at MRAM symbol @symbol + @offset (a multiple of 8), in
 * @direction (DRI_TO_DPUS, DRI_FROM_DPUS) | DRI_OVERLAP | DRI_ASYNC.
 */
DPUSIM_API int DRI_xfer_create(const char *name, DRI_Distribution dist, DRI_Layout layout,
			       const char *symbol, uint32_t offset, int nbufs, void *bufs[],
			       int direction, DRI_Transfer *xfer);
/*
 * A planned redistribution named @name between two distributions of the
 * same global array over the same set (DPUs to DPUs: the corner turn is
 * row blocks to column blocks with a transposed layout): DRI_do gathers
 * every DPU's owned elements of @from into a host array of the global
 * shape (allocated here, one for the transfer) and scatters @to's blocks
 * (with their overlaps if @to_flags has DRI_OVERLAP) from it.  Each byte
 * crosses the host once each way; no other copy is made.
 */
DPUSIM_API int DRI_redist_create(const char *name, DRI_Distribution from,
				 DRI_Layout from_layout, const char *from_symbol,
				 uint32_t from_offset, DRI_Distribution to, DRI_Layout to_layout,
				 const char *to_symbol, uint32_t to_offset, int to_flags,
				 DRI_Transfer *xfer);
/*
 * Halo refresh named @name: every DPU's block with its overlaps, at
 * @symbol + @offset in @layout, gets its overlaps (the halo) from the DPUs
 * that own those elements.  DRI_do gathers the owned elements of every
 * block into a host array of the global shape (allocated here) and
 * scatters the blocks with their overlaps back: one MRAM range per DPU
 * per dpu_push_sg_xfer, so a DPU's whole block is rewritten, its own
 * elements with the values they already have.
 */
DPUSIM_API int DRI_halo_create(const char *name, DRI_Distribution dist, DRI_Layout layout,
			       const char *symbol, uint32_t offset, DRI_Transfer *xfer);
/* Blocks of the DPU with the most (the sgXferMaxBlocksPerDpu it needs) */
DPUSIM_API uint64_t DRI_xfer_max_blocks(DRI_Transfer xfer);
/*
 * Query: the bytes of host memory @xfer holds for data of its own: its
 * packing buffers (at most 16 MiB, or 64 KiB per DPU and buffer, whatever
 * the array's size), the scratch of a gather from overlapped blocks, and
 * a redistribution's host array of the global shape.
 */
DPUSIM_API uint64_t DRI_xfer_host_bytes(DRI_Transfer xfer);
/*
 * Execute the plan with the next buffer; @name must be the transfer's.
 * A transfer that packs (a transposing layout) 256 KiB or more in one
 * DRI_do starts, the first time, up to 3 threads of its own (one fewer
 * than the CPUs the process may run on), which pack beside the caller and
 * sleep between calls, with every signal blocked; DRI_xfer_destroy()
 * joins them.  A child of fork() uses the parent's transfers without
 * them.  One transfer is not for two threads at once.
 */
DPUSIM_API int DRI_do(const char *name, DRI_Transfer xfer);

DPUSIM_API void DRI_gdo_destroy(DRI_Globaldata gdo);
DPUSIM_API void DRI_part_destroy(DRI_Partition part);
DPUSIM_API void DRI_group_destroy(DRI_Group group);
DPUSIM_API void DRI_dist_destroy(DRI_Distribution dist);
DPUSIM_API void DRI_layout_destroy(DRI_Layout layout);
DPUSIM_API void DRI_xfer_destroy(DRI_Transfer xfer);

#ifdef __cplusplus
}
#endif

#endif /* DPUSIM_DRI_H */
