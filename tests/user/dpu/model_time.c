// SPDX-License-Identifier: MIT
/*
 * model_time - the modeled DPU time as an unmodified program reads it: the
 * SDK's perfcounter around a compute phase and a DMA phase, each between
 * barriers, read by tasklet 0.  Built three ways (Makefile): with
 * NR_TASKLETS 1 (model_time), 16 (model_time_16) and without the model
 * (model_time_plain, dpusim-cc -fno-dpu-model).
 *
 * Host variables: iters (the compute loop's length, set by the host);
 * cycles and instrs (perfcounter_get_both after the compute phase),
 * dma_cycles (perfcounter_get after NR_TASKLETS x 8 DMAs of 256 bytes),
 * sums (the loop's results, so that it is not optimised away).
 */
#include <attributes.h>
#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <perfcounter.h>
#include <stdint.h>

BARRIER_INIT(model_barrier, NR_TASKLETS);

__host uint32_t iters = 1000;
__host uint64_t cycles;
__host uint64_t instrs;
__host uint64_t dma_cycles;
__host uint32_t sums[NR_TASKLETS];

__mram_noinit uint64_t area[NR_TASKLETS * 8 * 32];
static __dma_aligned uint64_t wbuf[NR_TASKLETS][32];

int main(void)
{
	unsigned int t = me();
	uint32_t s = t;

	barrier_wait(&model_barrier);
	if (t == 0)
		perfcounter_config(COUNT_CYCLES, true);
	barrier_wait(&model_barrier);
	for (uint32_t i = 0; i < iters; i++)
		s = (s ^ i) + (s << 3);
	sums[t] = s;
	barrier_wait(&model_barrier);
	if (t == 0) {
		perfcounter_pair_t p = perfcounter_get_both(false);

		cycles = p.cycles;
		instrs = p.instr;
		perfcounter_config(COUNT_CYCLES, true);
	}
	barrier_wait(&model_barrier);
	for (unsigned int k = 0; k < 8; k++)
		mram_read(&area[(t * 8 + k) * 32], wbuf[t], sizeof(wbuf[t]));
	barrier_wait(&model_barrier);
	if (t == 0)
		dma_cycles = perfcounter_get();
	return 0;
}
