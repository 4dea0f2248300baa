// SPDX-License-Identifier: MIT
/*
 * alloc_test - mem_alloc in the DPU's WRAM.
 * mode 0: every tasklet allocates buffers of odd sizes, checks that each is
 *         8-byte aligned and inside WRAM, fills it and checks nobody else
 *         wrote there; tasklet 0 then checks mem_reset returns the heap start
 *         and that the first mem_alloc after it returns the same address.
 *         Results: errors (0), heap_start (WRAM address of the heap).
 * mode 1: allocate 4 KiB blocks until WRAM runs out: the DPU faults with
 *         "mem_alloc: 4096 bytes, WRAM has N (tasklet T)".
 */
#include <alloc.h>
#include <barrier.h>
#include <defs.h>
#include <stdint.h>

#define WRAM_BASE 0x06000000u
#define WRAM_END (WRAM_BASE + 64 * 1024)

BARRIER_INIT(sync, NR_TASKLETS);

__host uint32_t mode;
__host uint32_t errors;
__host uint32_t heap_start;

static uint32_t err[NR_TASKLETS];

int main(void)
{
	static const uint32_t sizes[] = { 1, 3, 8, 13, 100, 255, 7 };
	uint8_t *bufs[sizeof(sizes) / sizeof(sizes[0])];
	unsigned int id = me(), i, j;

	if (mode == 1) {
		for (;;)
			mem_alloc(4096);
	}
	if (id == 0) {
		heap_start = (uint32_t)mem_reset();
		errors = 0;
	}
	barrier_wait(&sync);
	err[id] = 0;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uintptr_t p;

		bufs[i] = mem_alloc(sizes[i]);
		p = (uintptr_t)bufs[i];
		if (p % 8 || p < WRAM_BASE || p + sizes[i] > WRAM_END)
			err[id]++;
		for (j = 0; j < sizes[i]; j++)
			bufs[i][j] = (uint8_t)(id * 16 + i);
	}
	barrier_wait(&sync);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (j = 0; j < sizes[i]; j++)
			if (bufs[i][j] != (uint8_t)(id * 16 + i))
				err[id]++;
	barrier_wait(&sync);
	if (id == 0) {
		void *start = mem_reset();
		void *again = mem_alloc(16);

		if ((uint32_t)start != heap_start || again != start)
			err[0]++;
		for (i = 0; i < NR_TASKLETS; i++)
			errors += err[i];
	}
	return 0;
}
