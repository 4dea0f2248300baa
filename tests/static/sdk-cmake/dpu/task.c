// SPDX-License-Identifier: MIT
/*
 * sdk-cmake's DPU side: each tasklet sums its share of the words the host
 * broadcast to the MRAM heap; tasklet 0 publishes the total in `sum`.
 */
#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <mutex.h>
#include <stdint.h>

#define WORDS_PER_TASKLET 32

BARRIER_INIT(sync, NR_TASKLETS);
MUTEX_INIT(lock);

__host uint64_t sum;
__host uint32_t tasklets;
__dma_aligned uint64_t buf[NR_TASKLETS][WORDS_PER_TASKLET];

int main(void)
{
	unsigned int id = me();
	uint64_t s = 0;

	if (id == 0) {
		sum = 0;
		tasklets = NR_TASKLETS;
	}
	barrier_wait(&sync);
	mram_read((__mram_ptr void *)(DPU_MRAM_HEAP_POINTER + id * sizeof(buf[id])), buf[id],
		  sizeof(buf[id]));
	for (int i = 0; i < WORDS_PER_TASKLET; i++)
		s += buf[id][i];
	mutex_lock(lock);
	sum += s;
	mutex_unlock(lock);
	return 0;
}
