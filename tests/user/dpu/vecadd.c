// SPDX-License-Identifier: MIT
/*
 * vecadd - vector addition as the PrIM programs write it: arguments in a
 * 12-byte __host DPU_INPUT_ARGUMENTS, NR_TASKLETS (16) tasklets, blocks of
 * 2^BL bytes (BL 10 by default: 16 tasklets x 2 buffers x 1 KiB is half the
 * 64 KiB WRAM; -DBL=11 needs 8 tasklets or fewer) moved by
 * mram_read/mram_write, cycles in DPU_RESULTS.
 *
 * MRAM at DPU_MRAM_HEAP_POINTER, T = DPU_INPUT_ARGUMENTS.transfer_size:
 *   A [0, T), B [T, 2T), C = A + B written to [2T, 3T)
 * DPU_INPUT_ARGUMENTS.size: bytes of A (and B) to add, a multiple of 8,
 * at most T.  DPU_RESULTS[t].cycles: tasklet t's perfcounter cycles.
 */
#include <alloc.h>
#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <perfcounter.h>
#include <stdint.h>

#ifndef BL
#define BL 10
#endif
#define BLOCK_SIZE (1 << BL)

typedef struct {
	uint32_t size;
	uint32_t transfer_size;
	enum kernels {
		kernel1 = 0,
		nr_kernels = 1,
	} kernel;
} dpu_arguments_t;

typedef struct {
	uint64_t cycles;
} dpu_results_t;

__host dpu_arguments_t DPU_INPUT_ARGUMENTS;
__host dpu_results_t DPU_RESULTS[NR_TASKLETS];

BARRIER_INIT(my_barrier, NR_TASKLETS);

static void vector_addition(int32_t *bufferB, int32_t *bufferA, unsigned int l_size)
{
#pragma unroll
	for (unsigned int i = 0; i < l_size; i++)
		bufferB[i] += bufferA[i];
}

int main(void)
{
	unsigned int tasklet_id = me();
	uint32_t input_size_dpu_bytes = DPU_INPUT_ARGUMENTS.size;
	uint32_t transfer = DPU_INPUT_ARGUMENTS.transfer_size;
	uint32_t mram_base_addr_A = (uint32_t)DPU_MRAM_HEAP_POINTER;
	uint32_t mram_base_addr_B = mram_base_addr_A + transfer;
	uint32_t mram_base_addr_C = mram_base_addr_B + transfer;
	uint32_t base_tasklet = tasklet_id << BL;
	int32_t *cache_A, *cache_B;

	if (tasklet_id == 0)
		mem_reset();
	barrier_wait(&my_barrier);
	perfcounter_config(COUNT_CYCLES, true);

	cache_A = (int32_t *)mem_alloc(BLOCK_SIZE);
	cache_B = (int32_t *)mem_alloc(BLOCK_SIZE);

	for (uint32_t byte_index = base_tasklet; byte_index < input_size_dpu_bytes;
	     byte_index += BLOCK_SIZE * NR_TASKLETS) {
		uint32_t l_size_bytes = (byte_index + BLOCK_SIZE >= input_size_dpu_bytes)
						? (input_size_dpu_bytes - byte_index)
						: BLOCK_SIZE;

		mram_read((__mram_ptr void const *)(mram_base_addr_A + byte_index), cache_A,
			  l_size_bytes);
		mram_read((__mram_ptr void const *)(mram_base_addr_B + byte_index), cache_B,
			  l_size_bytes);
		vector_addition(cache_B, cache_A, l_size_bytes >> 2);
		mram_write(cache_B, (__mram_ptr void *)(mram_base_addr_C + byte_index),
			   l_size_bytes);
	}
	DPU_RESULTS[tasklet_id].cycles = perfcounter_get();
	return 0;
}
