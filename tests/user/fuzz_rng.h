/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fuzzers' random numbers: xorshift64*, one state per thread, so that
 * racing threads draw without a lock and a seed repeats a thread's draws.
 */
#ifndef DPUSIM_TESTS_FUZZ_RNG_H
#define DPUSIM_TESTS_FUZZ_RNG_H

#include <stdint.h>

static __thread uint64_t rng_state;

static inline uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

#endif
