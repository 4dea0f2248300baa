// SPDX-License-Identifier: MIT
/*
 * pivot - the DPU side of the seed's pivot example (tools/examples/pivot.c):
 * partitions this DPU's slice around a pivot, in MRAM.
 *
 * Inputs: __host nr_elements (n int32 at DPU_MRAM_HEAP_POINTER) and pivot.
 * MRAM at DPU_MRAM_HEAP_POINTER, BUF = n * 4 rounded up to 8:
 *   [0, BUF)             the slice; rewritten: the elements < pivot (the
 *                        left block) in input order, then the others (the
 *                        right block) in input order; with offset 1 the
 *                        right block comes first
 *   [BUF, BUF + 8)       metadata written here: uint32 left, right
 *   [BUF + 8, BUF + 16)  parameters written by the host: uint32 offset
 *                        (0 or 1: block (i + offset) % 2 at the i-th place)
 *   [BUF + 16, ...)      scratch, BUF bytes
 * Results also in __host left_count, right_count.  Runs in tasklet 0
 * (other tasklets return at once).
 */
#include <defs.h>
#include <mram.h>
#include <stdint.h>

#define CHUNK 2048 /* bytes */

__host uint32_t nr_elements;
__host int32_t pivot;
__host uint32_t left_count;
__host uint32_t right_count;

static int32_t in[CHUNK / 4] __dma_aligned;
static uint32_t meta[2] __dma_aligned;
static uint32_t param[2] __dma_aligned;

int main(void)
{
	uint32_t n = nr_elements;
	uint32_t buf = (n * 4 + 7) & ~7u;
	uint32_t base = (uint32_t)DPU_MRAM_HEAP_POINTER;
	__mram_ptr int32_t *slice = (__mram_ptr int32_t *)base;
	__mram_ptr int32_t *scratch = (__mram_ptr int32_t *)(base + buf + 16);
	uint32_t left = 0, right = 0, i, k;

	if (me() != 0)
		return 0;
	mram_read((__mram_ptr void *)(base + buf + 8), param, 8);

	/* lefts in place (never past what was read), rights to scratch */
	for (i = 0; i < n; i += CHUNK / 4) {
		uint32_t cnt = n - i < CHUNK / 4 ? n - i : CHUNK / 4;

		mram_read((__mram_ptr void *)(base + i * 4), in, (cnt * 4 + 7) & ~7u);
		for (k = 0; k < cnt; k++) {
			if (in[k] < pivot)
				slice[left++] = in[k];
			else
				scratch[right++] = in[k];
		}
	}
	if (param[0] % 2 == 0) {
		for (k = 0; k < right; k++)
			slice[left + k] = scratch[k];
	} else {
		/* rotated: right block first */
		for (k = 0; k < left; k++)
			scratch[right + k] = slice[k];
		for (k = 0; k < n; k++)
			slice[k] = scratch[k];
	}
	meta[0] = left;
	meta[1] = right;
	mram_write(meta, (__mram_ptr void *)(base + buf), 8);
	left_count = left;
	right_count = right;
	return 0;
}
