// SPDX-License-Identifier: MIT
/*
 * sdk_alloc - the SDK's other WRAM allocators as SimplePIM's programs use
 * them: tasklet 0 makes a fixed-size block allocator (one block per
 * tasklet) and a buddy heap; every tasklet takes a block of each, reads
 * its slice of MRAM into them with mram_read, sums it, and gives the
 * blocks back.  Results: errors (0), sum (of the 8 * 64 words the host
 * wrote at DPU_MRAM_HEAP_POINTER), fsb_left (blocks still free: all).
 */
#include <alloc.h>
#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <mutex.h>
#include <stdint.h>

#define WORDS 64

BARRIER_INIT(sync, NR_TASKLETS);
MUTEX_INIT(sum_lock);

__host uint32_t errors;
__host uint64_t sum;
__host uint32_t fsb_left;

fsb_allocator_t blocks;

int main(void)
{
	unsigned int id = me();
	__mram_ptr uint64_t *src = (__mram_ptr uint64_t *)DPU_MRAM_HEAP_POINTER + id * WORDS;
	uint64_t *a, *b, s = 0;
	uint32_t bad = 0;

	if (id == 0) {
		mem_reset();
		errors = 0;
		sum = 0;
		blocks = fsb_alloc(WORDS * sizeof(uint64_t), NR_TASKLETS);
		buddy_init(4096);
	}
	barrier_wait(&sync);
	a = fsb_get(blocks);
	b = buddy_alloc(WORDS * sizeof(uint64_t));
	if (!a || !b || (uintptr_t)a % 8 || (uintptr_t)b % 8) {
		bad++;
	} else {
		mram_read(src, a, WORDS * sizeof(uint64_t));
		mram_read(src, b, WORDS * sizeof(uint64_t));
		for (int i = 0; i < WORDS; i++) {
			s += a[i];
			bad += a[i] != b[i];
		}
		fsb_free(blocks, a);
		buddy_free(b);
	}
	mutex_lock(sum_lock);
	errors += bad;
	sum += s;
	mutex_unlock(sum_lock);
	barrier_wait(&sync);
	if (id == 0) {
		void *got[NR_TASKLETS + 1];
		uint32_t n = 0;

		while (n <= NR_TASKLETS && (got[n] = fsb_get(blocks)) != NULL)
			n++;
		fsb_left = n;
	}
	return 0;
}
