// SPDX-License-Identifier: MIT
/*
 * model_lock - a mutex's holds in the modeled time: 16 tasklets add to one
 * shared word under one mutex (the lock phase), then each to its own word
 * with no lock (the free phase), each phase between barriers and timed by
 * tasklet 0's perfcounter.  On the DPU the lock phase is bound by the
 * holds, one after another; the free phase by the pipeline.
 *
 * Host variables: iters (set by the host); lock_cycles, free_cycles (the
 * two phases' modeled cycles); shared, own (the sums, so that the work is
 * not optimised away).
 */
#include <attributes.h>
#include <barrier.h>
#include <defs.h>
#include <mutex.h>
#include <perfcounter.h>
#include <stdint.h>

BARRIER_INIT(lock_barrier, NR_TASKLETS);
MUTEX_INIT(word_mutex);

__host uint32_t iters = 100;
__host uint64_t lock_cycles;
__host uint64_t free_cycles;
__host volatile uint32_t shared;
__host volatile uint32_t own[NR_TASKLETS];

int main(void)
{
	unsigned int t = me();

	barrier_wait(&lock_barrier);
	if (t == 0)
		perfcounter_config(COUNT_CYCLES, true);
	barrier_wait(&lock_barrier);
	for (uint32_t i = 0; i < iters; i++) {
		mutex_lock(word_mutex);
		shared = shared + i;
		mutex_unlock(word_mutex);
	}
	barrier_wait(&lock_barrier);
	if (t == 0) {
		lock_cycles = perfcounter_get();
		perfcounter_config(COUNT_CYCLES, true);
	}
	barrier_wait(&lock_barrier);
	for (uint32_t i = 0; i < iters; i++)
		own[t] = own[t] + i;
	barrier_wait(&lock_barrier);
	if (t == 0)
		free_cycles = perfcounter_get();
	return 0;
}
