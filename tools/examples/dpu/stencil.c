// SPDX-License-Identifier: MIT
/*
 * stencil (DPU side) - one Jacobi sweep of a 5-point stencil over this
 * DPU's block of a 2-D float grid (host side: tools/examples/stencil.c,
 * which scatters the blocks with dri.h and refreshes their halos between
 * launches).
 *
 * MRAM at DPU_MRAM_HEAP_POINTER:
 *   A  [0, round8(rows * cols * 4))  the block with its halo (overlap 1
 *      on every side that has a neighbour), rows x cols floats, row-major
 *      and packed, as DRI_xfer_create(... DRI_OVERLAP) writes it: a row
 *      starts 8-byte aligned only when rows before it add up to an even
 *      number of floats.
 *   B  right after A: the new values, rows of PITCH(cols) floats (cols
 *      rounded up to even), so that every row of B starts aligned.
 *
 * A launch computes, for every element of the box geom.row_lo .. row_hi
 * x col_lo .. col_hi (the owned elements that are not on the grid's
 * boundary: the host works it out from the block's ranges),
 *     new = 0.25f * ((up + down) + (left + right))
 * reading A and writing B (phase 1), then, after a barrier, copies the
 * box of B back into A (phase 2).  Only the box changes in A: its halo is
 * the host's to refresh.  Phase 1 must read A's old values only, so no
 * tasklet may write A before all of them have finished reading it: that
 * is the barrier (and the reason for B; the copy back keeps a single
 * halo transfer on the host).
 *
 * The box is cut in bands of rows, one per tasklet, and each band in
 * strips of at most CHUNK columns.  Within a strip a tasklet keeps three
 * rows of A in WRAM (up, middle, down; each row read once) and writes one
 * row of B per row of the band.  MRAM moves obey the DMA rules: 8 to 2048
 * bytes, a multiple of 8, 8-byte-aligned addresses: a window of A is read
 * from the aligned address below it (one float more when it starts on an
 * odd float); in phase 2 it is read, its box elements replaced, and
 * written back whole.  Such a window stays within its row (the box is at
 * least one column away from either end of a row), so tasklets never
 * write the same 8 bytes.
 */
#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <stdint.h>

/* This DPU's block (the host's struct stencil_geom: keep the two in step) */
struct stencil_geom {
	uint32_t rows, cols;		/* of the block with its halo */
	uint32_t row_lo, row_hi;	/* the box to compute: local rows [lo, hi) */
	uint32_t col_lo, col_hi;	/* and local columns [lo, hi) */
};

__host struct stencil_geom geom;

#define CHUNK 128			/* columns of a strip: even */
#define WIN (CHUNK + 4)			/* a strip's window with its two neighbours, aligned */
#define PITCH(cols) (((cols) + 1) & ~1u)

_Static_assert(WIN * 4 <= 2048, "a window is one mram_read");

/* Per tasklet: three rows of A, one row of B (about 2 KiB: 24 tasklets fit) */
static float rows_a[NR_TASKLETS][3][WIN] __dma_aligned;
static float row_b[NR_TASKLETS][CHUNK] __dma_aligned;

BARRIER_INIT(sweep_done, NR_TASKLETS);

/* An aligned MRAM range holding @n floats from byte address @addr */
struct window {
	uint32_t start;		/* 8-byte aligned */
	uint32_t bytes;		/* a multiple of 8, at most WIN * 4 */
	uint32_t skip;		/* floats before the first one wanted: 0 or 1 */
};

static struct window window_of(uint32_t addr, uint32_t n)
{
	struct window w;

	w.start = addr & ~7u;
	w.bytes = ((addr + n * 4 + 7) & ~7u) - w.start;
	w.skip = (addr - w.start) / 4;
	return w;
}

/* Read @n floats at @addr into @buf; they are at buf + the result */
static uint32_t read_floats(uint32_t addr, uint32_t n, float *buf)
{
	struct window w = window_of(addr, n);

	mram_read((__mram_ptr const void *)w.start, buf, w.bytes);
	return w.skip;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

int main(void)
{
	const uint32_t t = me();
	const uint32_t rows = geom.rows, cols = geom.cols;
	const uint32_t a = (uint32_t)DPU_MRAM_HEAP_POINTER;
	const uint32_t b = a + ((rows * cols * 4 + 7) & ~7u);
	const uint32_t pitch = PITCH(cols);
	/* the stencil reads around the box: it stays inside the block's edges */
	const uint32_t row_lo = max_u32(geom.row_lo, 1), row_hi = min_u32(geom.row_hi, rows - 1);
	const uint32_t col_lo = max_u32(geom.col_lo, 1), col_hi = min_u32(geom.col_hi, cols - 1);
	/* this tasklet's band of rows: an even share of the box's */
	const uint32_t nrows = rows > 2 && cols > 2 && row_hi > row_lo && col_hi > col_lo ?
			       row_hi - row_lo : 0;
	const uint32_t r0 = row_lo + nrows * t / NR_TASKLETS;
	const uint32_t r1 = row_lo + nrows * (t + 1) / NR_TASKLETS;
	float (*in)[WIN] = rows_a[t];
	float *out = row_b[t];
	uint32_t skip[3], e, cs, ce, r, c;

	/* Phase 1: A -> B, strip by strip (strips start at even columns) */
	for (e = col_lo & ~1u; r0 < r1 && e < col_hi; e += CHUNK) {
		cs = max_u32(e, col_lo);
		ce = min_u32(e + CHUNK, col_hi);
		/* row r of A, columns cs - 1 .. ce, is in slot (r - r0 + 1) % 3 */
		skip[0] = read_floats(a + ((r0 - 1) * cols + cs - 1) * 4, ce - cs + 2, in[0]);
		skip[1] = read_floats(a + (r0 * cols + cs - 1) * 4, ce - cs + 2, in[1]);
		for (r = r0; r < r1; r++) {
			const uint32_t su = (r - r0) % 3, sm = (r - r0 + 1) % 3,
				       sd = (r - r0 + 2) % 3;
			const float *up, *mid, *down;

			skip[sd] = read_floats(a + ((r + 1) * cols + cs - 1) * 4, ce - cs + 2,
					       in[sd]);
			up = in[su] + skip[su];
			mid = in[sm] + skip[sm];
			down = in[sd] + skip[sd];
			/* column c is at index c - cs + 1 of up, mid, down */
			for (c = cs; c < ce; c++) {
				const uint32_t j = c - cs + 1;

				out[c - e] = 0.25f * ((up[j] + down[j]) + (mid[j - 1] + mid[j + 1]));
			}
			/* B's row r, columns e .. ce rounded up to even */
			mram_write(out, (__mram_ptr void *)(b + (r * pitch + e) * 4),
				   (PITCH(ce) - e) * 4);
		}
	}

	barrier_wait(&sweep_done);

	/* Phase 2: the box of B back into A, row by row, strip by strip */
	for (r = r0; r < r1; r++)
		for (e = col_lo & ~1u; e < col_hi; e += CHUNK) {
			struct window w;
			float *dst;

			cs = max_u32(e, col_lo);
			ce = min_u32(e + CHUNK, col_hi);
			mram_read((__mram_ptr const void *)(b + (r * pitch + e) * 4), out,
				  (PITCH(ce) - e) * 4);
			w = window_of(a + (r * cols + cs) * 4, ce - cs);
			mram_read((__mram_ptr const void *)w.start, in[0], w.bytes);
			dst = in[0] + w.skip;
			for (c = cs; c < ce; c++)
				dst[c - cs] = out[c - e];
			mram_write(in[0], (__mram_ptr void *)w.start, w.bytes);
		}
	return 0;
}
