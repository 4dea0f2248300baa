// SPDX-License-Identifier: MIT
/*
 * sdk-app's host: loads bin/dpu_code on 4 DPUs, gives each 8 tasklets'
 * words, launches twice, checks each DPU's sum and that its tallies (the
 * static in tally.c) went 8 then 16, and reads CLOCKS_PER_SEC by name as
 * TransPimLib does.  Prints "sdk-app: OK" and exits 0 when all hold.
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

int main(void)
{
	struct dpu_set_t set, dpu;
	uint64_t words[WORDS], want = 0;
	int bad = 0;

	for (int i = 0; i < WORDS; i++) {
		words[i] = (uint64_t)i * 40503u + 7;
		want += words[i];
	}
	DPU_ASSERT(dpu_alloc(NR_DPUS, NULL, &set));
	DPU_ASSERT(dpu_load(set, DPU_BINARY, NULL));
	DPU_ASSERT(dpu_broadcast_to(set, DPU_MRAM_HEAP_POINTER_NAME, 0, words, sizeof(words),
				    DPU_XFER_DEFAULT));
	for (uint32_t launch = 1; launch <= 2; launch++) {
		DPU_ASSERT(dpu_launch(set, DPU_SYNCHRONOUS));
		DPU_FOREACH(set, dpu) {
			uint64_t sum;
			uint32_t errors, tallies, hz, clocks;

			DPU_ASSERT(dpu_copy_from(dpu, "sum", 0, &sum, sizeof(sum)));
			DPU_ASSERT(dpu_copy_from(dpu, "errors", 0, &errors, sizeof(errors)));
			DPU_ASSERT(dpu_copy_from(dpu, "tallies", 0, &tallies, sizeof(tallies)));
			DPU_ASSERT(dpu_copy_from(dpu, "dpu_hz", 0, &hz, sizeof(hz)));
			DPU_ASSERT(dpu_copy_from(dpu, "CLOCKS_PER_SEC", 0, &clocks, sizeof(clocks)));
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
