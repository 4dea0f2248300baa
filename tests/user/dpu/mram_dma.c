// SPDX-License-Identifier: MIT
/*
 * mram_dma - mram_read/mram_write outside the SDK's rules, as public
 * programs do them (PrIM's TRNS done-array, pim-ml's 4-aligned LUT reads,
 * SimplePIM's short writes). The MRAM heap holds words w[i] = WORD(i).
 *   out[0]  mram_read 8 bytes at heap + 13 (unaligned)     hardware: w[1]
 *   out[1]  mram_read 8 bytes at heap + 20 (4-aligned)      hardware: w[2]
 *   out[2]  words of buf that mram_read of 4 bytes filled  hardware: 256
 *   out[3]  buf[255] after that read                       hardware: w[255]
 *   out[4]  w[301] after mram_write of 12 bytes at w[300]  hardware: unchanged
 *   out[5]  TRNS-style done bits: bit i set for byte i     hardware: 0xffff
 *   out[6]  w[400..401] after TRNS-style sets: low bytes   hardware: 0xff, 0xff
 * In strict mode (profile dpusimStrictDma=true) the first read faults:
 * "mram_read: MRAM 0x... unaligned (tasklet 0)".
 */
#include <defs.h>
#include <mram.h>
#include <stdint.h>

#define WORD(i) (0x0101010101010101ull * ((i) & 0x7f) + ((uint64_t)(i) << 32))

__host uint64_t out[8];

static uint64_t buf[300] __dma_aligned;
static uint64_t word __dma_aligned;

/* PrIM TRNS's get_and_set_done: the byte's address, bit address % 8 */
static int get_and_set_done(uint32_t done_array, uint32_t address)
{
	int result;

	mram_read((__mram_ptr void *)(done_array + address), &word, sizeof(word));
	result = (word & (0x01 << (address % sizeof(word)))) != 0;
	word |= 0x01 << (address % sizeof(word));
	mram_write(&word, (__mram_ptr void *)(done_array + address), sizeof(word));
	return result;
}

int main(void)
{
	uint32_t base = (uint32_t)DPU_MRAM_HEAP_POINTER;
	uint64_t seen = 0;
	uint32_t i, n;

	for (i = 0; i < 512; i += 8) {
		uint32_t j;

		for (j = 0; j < 8; j++)
			buf[j] = WORD(i + j);
		mram_write(buf, (__mram_ptr void *)(base + 8 * i), 64);
	}
	for (i = 0; i < 8; i++)
		out[i] = 0;

	mram_read((__mram_ptr void *)(base + 13), buf, 8);
	out[0] = buf[0];
	mram_read((__mram_ptr void *)(base + 20), buf, 8);
	out[1] = buf[0];

	for (i = 0; i < 300; i++)
		buf[i] = 0xeeeeeeeeeeeeeeeeull;
	mram_read((__mram_ptr void *)base, buf, 4);
	for (n = 0; n < 300 && buf[n] != 0xeeeeeeeeeeeeeeeeull; n++)
		;
	out[2] = n;
	out[3] = buf[255];

	buf[0] = 0xaaaa;
	buf[1] = 0xbbbb;
	mram_write(buf, (__mram_ptr void *)(base + 8 * 300), 12);
	mram_read((__mram_ptr void *)(base + 8 * 300), buf, 16);
	out[4] = buf[0] == 0xaaaa ? buf[1] : ~0ull;

	/* a zeroed done-array of 2 words at w[400] */
	buf[0] = buf[1] = 0;
	mram_write(buf, (__mram_ptr void *)(base + 8 * 400), 16);
	for (i = 0; i < 16; i++) {
		if (get_and_set_done(base + 8 * 400, i))
			break;	/* set before: a bit two addresses share */
		if (get_and_set_done(base + 8 * 400, i))
			seen |= 1ull << i;	/* and now reads back set */
	}
	out[5] = seen;
	mram_read((__mram_ptr void *)(base + 8 * 400), buf, 16);
	out[6] = (buf[0] & 0xffffffff) | (buf[1] << 32);
	return 0;
}
