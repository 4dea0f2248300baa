// SPDX-License-Identifier: MIT
/*
 * sdk-app's DPU side: the SDK surface the public programs that did not
 * run used (issue 30): SimplePIM's fsb and buddy allocators, TransPimLib's
 * CLOCKS_PER_SEC, dpu_alignment's profiling.h, and a file-static variable
 * whose name the other file (tally.c) uses too; quirks.c has the rest.
 */
#include <alloc.h>
#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <mutex.h>
#include <perfcounter.h>
#include <profiling.h>
#include <stdint.h>

#define WORDS 32

BARRIER_INIT(sync, NR_TASKLETS);
MUTEX_INIT(lock);
PROFILING_INIT(sum_section);

__host uint64_t sum;
__host uint32_t errors;
__host uint32_t dpu_hz;
__host uint32_t tallies;

static uint32_t count;  /* tally.c has its own */
static fsb_allocator_t blocks;

uint32_t tally(void);
void quirks(void);

int main(void)
{
	unsigned int id = me();
	uint64_t *a, *b, s = 0;

	if (id == 0) {
		mem_reset();
		sum = 0;
		errors = 0;
		count = 0;
		blocks = fsb_alloc(WORDS * sizeof(uint64_t), NR_TASKLETS);
		buddy_init(8192);
		dpu_hz = CLOCKS_PER_SEC;
		quirks();
	}
	barrier_wait(&sync);
	profiling_start(&sum_section);
	a = fsb_get(blocks);
	b = buddy_alloc(WORDS * sizeof(uint64_t));
	if (!a || !b) {
		mutex_lock(lock);
		errors++;
		mutex_unlock(lock);
		return 0;
	}
	mram_read((__mram_ptr void *)(DPU_MRAM_HEAP_POINTER + id * WORDS * sizeof(uint64_t)), a,
		  WORDS * sizeof(uint64_t));
	for (int i = 0; i < WORDS; i++) {
		b[i] = a[i];
		s += b[i];
	}
	fsb_free(blocks, a);
	buddy_free(b);
	profiling_stop(&sum_section);
	mutex_lock(lock);
	sum += s;
	count++;
	tallies = tally();
	mutex_unlock(lock);
	return 0;
}
