// SPDX-License-Identifier: MIT
/*
 * model_mram - MRAM DMA bandwidth by transfer size, as PrIM's MRAM
 * microbenchmarks measure it, in dpusim's modeled time: each tasklet
 * issues reps DMAs of size bytes (mram_read, or mram_write if write) to
 * its own MRAM area, between two barriers; tasklet 0 then reads the DPU's
 * modeled cycles.  Built once per tasklet count (model_mram_<N>t).
 *
 * Host variables: size (8..2048, a multiple of 8), write, reps (in);
 * cycles (out).
 */
#include <attributes.h>
#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <perfcounter.h>
#include <stdint.h>

BARRIER_INIT(mram_barrier, NR_TASKLETS);

__host uint32_t size = 2048;
__host uint32_t write;
__host uint32_t reps = 16;
__host uint64_t cycles;

static __dma_aligned uint8_t wbuf[NR_TASKLETS][2048];

int main(void)
{
	unsigned int t = me();
	/* in registers: the loop reads no host variable (the DMA calls could
	 * change them, so the compiler would reload and multiply each time) */
	uint32_t n = reps, sz = size, wr = write;
	uint32_t m = (uint32_t)DPU_MRAM_HEAP_POINTER + t * n * 2048;

	barrier_wait(&mram_barrier);
	if (t == 0)
		perfcounter_config(COUNT_CYCLES, true);
	barrier_wait(&mram_barrier);
	for (uint32_t k = 0; k < n; k++, m += sz) {
		if (wr)
			mram_write(wbuf[t], (__mram_ptr void *)m, sz);
		else
			mram_read((__mram_ptr void *)m, wbuf[t], sz);
	}
	barrier_wait(&mram_barrier);
	if (t == 0)
		cycles = perfcounter_get();
	return 0;
}
