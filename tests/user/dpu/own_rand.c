// SPDX-License-Identifier: MIT
/*
 * own_rand - a DPU program that defines its own rand() and srand(), of
 * types the host's C library does not give them, as PIM-TC's does (its
 * dpu_util.c: a linear congruential generator seeded per DPU).
 * Results: first (the first three numbers after srand(seed)).
 */
#include <attributes.h>
#include <stdint.h>
#include <stdlib.h>

#define RANDOM_A 1103515245u
#define RANDOM_C 12345u

__host uint32_t seed;
__host uint64_t first[3];

static uint32_t random_previous;

void srand(uint32_t s)
{
	random_previous = s;
}

uint64_t rand(void)
{
	uint64_t r = (uint64_t)RANDOM_A * random_previous + RANDOM_C;

	random_previous = (uint32_t)r;
	return r;
}

int main(void)
{
	srand(seed);
	for (int i = 0; i < 3; i++)
		first[i] = rand();
	return 0;
}
