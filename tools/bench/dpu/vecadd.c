// SPDX-License-Identifier: MIT
/*
 * Vector addition on one DPU, as the PrIM-style programs do it: the
 * DPU's share of A and B lies at DPU_MRAM_HEAP_POINTER, A then B (args.n
 * int32 each), C is written after B. Each tasklet takes blocks of
 * BLOCK bytes in turn, reads A and B into WRAM, adds, writes C. (16
 * tasklets x 2 x 1 KiB of buffers: half of the 64 KiB WRAM.)
 */
#include <alloc.h>
#include <defs.h>
#include <mram.h>
#include <stdint.h>

#define BLOCK 1024

__host struct {
	uint32_t n;		/* elements per vector, a multiple of BLOCK / 4 */
	uint32_t pad;
} args;

int main(void)
{
	uint32_t bytes = args.n * sizeof(int32_t);
	uint32_t base = (uint32_t)DPU_MRAM_HEAP_POINTER;
	int32_t *a, *b;
	uint32_t off;

	a = mem_alloc(BLOCK);
	b = mem_alloc(BLOCK);
	for (off = me() * BLOCK; off < bytes; off += NR_TASKLETS * BLOCK) {
		mram_read((__mram_ptr void *)(base + off), a, BLOCK);
		mram_read((__mram_ptr void *)(base + bytes + off), b, BLOCK);
		for (unsigned int i = 0; i < BLOCK / sizeof(int32_t); i++)
			a[i] += b[i];
		mram_write(a, (__mram_ptr void *)(base + 2 * bytes + off), BLOCK);
	}
	return 0;
}
