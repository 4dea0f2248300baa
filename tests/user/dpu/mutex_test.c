// SPDX-License-Identifier: MIT
/*
 * mutex_test - every tasklet adds ITER times to three counters, each under
 * a different lock: a MUTEX_INIT mutex, a zero-initialised mutex_id_t (its
 * value, 0, is the key) and mutex_trylock in a loop.  Results: counter_a,
 * counter_b, counter_c (each NR_TASKLETS * ITER), expected.
 */
#include <barrier.h>
#include <defs.h>
#include <mutex.h>
#include <stdint.h>

#define ITER 2000

MUTEX_INIT(my_mutex);
mutex_id_t zero_id;		/* never initialised: 0 */
BARRIER_INIT(start, NR_TASKLETS);

__host uint64_t counter_a;
__host uint64_t counter_b;
__host uint64_t counter_c;
__host uint64_t expected;

int main(void)
{
	int i;

	if (me() == 0) {
		counter_a = counter_b = counter_c = 0;
		expected = (uint64_t)NR_TASKLETS * ITER;
	}
	barrier_wait(&start);
	for (i = 0; i < ITER; i++) {
		mutex_lock(MUTEX_GET(my_mutex));
		counter_a++;
		mutex_unlock(MUTEX_GET(my_mutex));

		mutex_lock(zero_id);
		counter_b++;
		mutex_unlock(zero_id);

		while (!mutex_trylock(MUTEX_GET(my_mutex)))
			;
		counter_c++;
		mutex_unlock(MUTEX_GET(my_mutex));
	}
	return 0;
}
