// SPDX-License-Identifier: MIT
/*
 * sdk-app's host: loads bin/dpu_code on 4 DPUs, gives each 8 tasklets'
 * words, launches twice, checks each DPU's sum and that its tallies (the
 * static in tally.c) went 8 then 16, and reads CLOCKS_PER_SEC by name as
 * TransPimLib does; checks quirks.c's own rand(), its int8 products and
 * its flags read at unaligned addresses.  Prints "sdk-app: OK" and exits
 * 0 when all hold.
 */
#include <dpu.h>
#include <dpu_log.h>
#include <stdint.h>
#include <stdio.h>

#ifndef DPU_BINARY
#define DPU_BINARY "bin/dpu_code"
#endif
#define NR_DPUS 4
#define WORDS (NR_TASKLETS * 32)
#define NR_FLAGS 16

/* What quirks.c computes, computed here */
static uint32_t want_rand(void)
{
	uint32_t seed = 42;

	for (int i = 0; i < 2; i++)
		seed = seed * 1103515245u + 12345u;
	return seed >> 16;
}

static int32_t want_mul(void)
{
	int32_t s = 0;

	for (int a = -3; a <= 3; a++)
		s += a * (int8_t)(a * 5);
	return s;
}

int main(void)
{
	struct dpu_set_t set, dpu;
	uint64_t words[WORDS], want = 0;
	uint8_t flags[NR_FLAGS];
	uint32_t want_flags = 0;
	int bad = 0;

	for (int i = 0; i < WORDS; i++) {
		words[i] = (uint64_t)i * 40503u + 7;
		want += words[i];
	}
	for (int k = 0; k < NR_FLAGS; k++) {
		flags[k] = (uint8_t)(k * 37 % 11);
		/*
		 * The DMA engine reads the aligned word holding byte k, whose
		 * byte k % 8 is flags[k]; a read of the 8 bytes at k itself
		 * would see flags[k + k % 8] there instead.
		 */
		want_flags += flags[k];
	}
	DPU_ASSERT(dpu_alloc(NR_DPUS, NULL, &set));
	DPU_ASSERT(dpu_load(set, DPU_BINARY, NULL));
	DPU_ASSERT(dpu_broadcast_to(set, DPU_MRAM_HEAP_POINTER_NAME, 0, words, sizeof(words),
				    DPU_XFER_DEFAULT));
	DPU_ASSERT(dpu_broadcast_to(set, "flags", 0, flags, sizeof(flags), DPU_XFER_DEFAULT));
	for (uint32_t launch = 1; launch <= 2; launch++) {
		DPU_ASSERT(dpu_launch(set, DPU_SYNCHRONOUS));
		DPU_FOREACH(set, dpu) {
			uint64_t sum;
			uint32_t errors, tallies, hz, clocks, rnd, fl;
			int32_t mul;

			DPU_ASSERT(dpu_copy_from(dpu, "sum", 0, &sum, sizeof(sum)));
			DPU_ASSERT(dpu_copy_from(dpu, "errors", 0, &errors, sizeof(errors)));
			DPU_ASSERT(dpu_copy_from(dpu, "tallies", 0, &tallies, sizeof(tallies)));
			DPU_ASSERT(dpu_copy_from(dpu, "dpu_hz", 0, &hz, sizeof(hz)));
			DPU_ASSERT(dpu_copy_from(dpu, "CLOCKS_PER_SEC", 0, &clocks, sizeof(clocks)));
			DPU_ASSERT(dpu_copy_from(dpu, "rand_val", 0, &rnd, sizeof(rnd)));
			DPU_ASSERT(dpu_copy_from(dpu, "mul_val", 0, &mul, sizeof(mul)));
			DPU_ASSERT(dpu_copy_from(dpu, "flags_set", 0, &fl, sizeof(fl)));
			if (rnd != want_rand() || mul != want_mul() || fl != want_flags) {
				printf("sdk-app: rand %u (want %u) mul %d (want %d) flags %u (want %u)\n",
				       rnd, want_rand(), mul, want_mul(), fl, want_flags);
				bad++;
			}
			if (sum != want || errors || tallies != launch * NR_TASKLETS || hz != clocks ||
			    clocks == 0) {
				printf("sdk-app: launch %u: sum %llu (want %llu) errors %u tallies %u hz %u CLOCKS_PER_SEC %u\n",
				       launch, (unsigned long long)sum, (unsigned long long)want,
				       errors, tallies, hz, clocks);
				bad++;
			}
		}
	}
	DPU_ASSERT(dpu_free(set));
	printf("sdk-app: %s\n", bad ? "FAILED" : "OK");
	return bad ? 1 : 0;
}
