// SPDX-License-Identifier: MIT
/*
 * sdk-app: more of what the public programs that did not run do (issue
 * 30): PIM-TC defines its own rand() and srand(), of its own types;
 * pim-ml multiplies int8 values with the DPU's 8x8 multiply builtins;
 * PrIM's TRNS reads the 8-byte MRAM word that holds a byte of its flag
 * array at that byte's own (unaligned) address and looks at byte
 * address % 8 of it, relying on the DMA engine ignoring the low bits.
 */
#include <built_ins.h>
#include <mram.h>
#include <stdint.h>

#define NR_FLAGS 16

__mram_noinit uint8_t flags[NR_FLAGS];
__host uint32_t rand_val;
__host int32_t mul_val;
__host uint32_t flags_set;

static uint32_t seed;

/* PIM-TC's types: uint32_t, not the C library's int */
void srand(uint32_t s)
{
	seed = s;
}

uint32_t rand(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 16;
}

void quirks(void)
{
	__dma_aligned uint8_t word[8];
	int32_t p;

	srand(42);
	rand();
	rand_val = rand();

	mul_val = 0;
	for (int8_t a = -3; a <= 3; a++) {
		__builtin_mul_sl_sl_rrr(p, a, (int8_t)(a * 5));
		mul_val += p;
	}

	flags_set = 0;
	for (uint32_t k = 0; k < NR_FLAGS; k++) {
		mram_read((__mram_ptr void const *)((uintptr_t)flags + k), word, 8);
		flags_set += word[k % 8];
	}
}
