// SPDX-License-Identifier: MIT
/*
 * barrier_test - NR_TASKLETS tasklets go through ROUNDS rounds of two
 * barriers, one from BARRIER_INIT and one whose fields are filled by hand
 * (as some programs do); between them every tasklet checks that all the
 * others wrote the round's value.  Results: errors (must be 0), rounds
 * (ROUNDS), tasklets (NR_TASKLETS), launches (+1 per launch).
 */
#include <barrier.h>
#include <defs.h>
#include <stdint.h>

#define ROUNDS 200

BARRIER_INIT(my_barrier, NR_TASKLETS);

barrier_t hand_barrier = {
	.wait_queue = 0xff,
	.count = NR_TASKLETS,
	.initial_count = NR_TASKLETS,
	.lock = 0,
};

static volatile uint32_t seen[NR_TASKLETS];
static uint32_t err[NR_TASKLETS];

__host uint32_t errors;
__host uint32_t rounds;
__host uint32_t tasklets;
__host uint32_t launches;

int main(void)
{
	unsigned int id = me();
	uint32_t r, t;

	err[id] = 0;
	barrier_wait(&my_barrier);
	for (r = 1; r <= ROUNDS; r++) {
		seen[id] = r;
		barrier_wait(&my_barrier);
		for (t = 0; t < NR_TASKLETS; t++)
			if (seen[t] != r)
				err[id]++;
		barrier_wait(&hand_barrier);
	}
	barrier_wait(&my_barrier);
	if (id == 0) {
		errors = 0;
		for (t = 0; t < NR_TASKLETS; t++)
			errors += err[t];
		rounds = ROUNDS;
		tasklets = NR_TASKLETS;
		launches++;
	}
	return 0;
}
