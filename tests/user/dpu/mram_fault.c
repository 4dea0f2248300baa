// SPDX-License-Identifier: MIT
/*
 * mram_fault - breaks an MRAM rule in tasklet `tasklet` when `mode` says so:
 *   0 no fault (a legal read and write; result = 0x600d)
 *   1 mram_read of 12 bytes        "mram_read: size 12 not a multiple of 8 (tasklet T)"
 *   2 mram_read of 4096 bytes      "mram_read: size 4096 above 2048 (tasklet T)"
 *   3 mram_read of 4 bytes         "mram_read: size 4 below 8 (tasklet T)"
 *   4 unaligned MRAM address       "mram_read: MRAM 0x... unaligned (tasklet T)"
 *   5 unaligned WRAM buffer        "mram_write: WRAM 0x... unaligned (tasklet T)"
 *   6 past the end of MRAM         "mram_write: 0x...+16 outside MRAM (tasklet T)"
 */
#include <defs.h>
#include <mram.h>
#include <stdint.h>

__host uint32_t mode;
__host uint32_t tasklet;
__host uint32_t result;

static uint64_t buf[NR_TASKLETS][260] __dma_aligned;

int main(void)
{
	uint32_t base = (uint32_t)DPU_MRAM_HEAP_POINTER;
	uint64_t *b = buf[me()];

	if (me() != tasklet || mode == 0) {
		mram_read((__mram_ptr void *)base, b, 64);
		mram_write(b, (__mram_ptr void *)(base + 64 * (me() + 1)), 64);
		if (me() == 0)
			result = 0x600d;
		return 0;
	}
	switch (mode) {
	case 1:
		mram_read((__mram_ptr void *)base, b, 12);
		break;
	case 2:
		mram_read((__mram_ptr void *)base, b, 4096);
		break;
	case 3:
		mram_read((__mram_ptr void *)base, b, 4);
		break;
	case 4:
		mram_read((__mram_ptr void *)(base + 4), b, 8);
		break;
	case 5:
		mram_write((uint8_t *)b + 4, (__mram_ptr void *)base, 8);
		break;
	case 6:
		mram_write(b, (__mram_ptr void *)(uint32_t)(0x08000000u + (64u << 20) - 8), 16);
		break;
	}
	result = 0xbad;
	return 0;
}
