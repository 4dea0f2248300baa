// SPDX-License-Identifier: MIT
/*
 * sdk-cmake's host: loads DPU_BINARY (the path CMake passes) on 4 DPUs,
 * broadcasts NR_TASKLETS * 32 words, launches and checks every DPU's sum.
 * Prints "sdk-cmake: OK" and exits 0 when all hold.
 */
#include <dpu.h>
#include <stdint.h>
#include <stdio.h>

#define NR_DPUS 4
#define WORDS (NR_TASKLETS * 32)

int main(void)
{
	struct dpu_set_t set, dpu;
	uint64_t words[WORDS], want = 0;
	int bad = 0;

	for (int i = 0; i < WORDS; i++) {
		words[i] = (uint64_t)i * 2654435761u + 3;
		want += words[i];
	}
	DPU_ASSERT(dpu_alloc(NR_DPUS, NULL, &set));
	DPU_ASSERT(dpu_load(set, DPU_BINARY, NULL));
	DPU_ASSERT(dpu_broadcast_to(set, DPU_MRAM_HEAP_POINTER_NAME, 0, words, sizeof(words),
				    DPU_XFER_DEFAULT));
	DPU_ASSERT(dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu) {
		uint64_t sum;
		uint32_t tasklets;

		DPU_ASSERT(dpu_copy_from(dpu, "sum", 0, &sum, sizeof(sum)));
		DPU_ASSERT(dpu_copy_from(dpu, "tasklets", 0, &tasklets, sizeof(tasklets)));
		if (sum != want || tasklets != NR_TASKLETS) {
			printf("sdk-cmake: sum %llu (want %llu), %u tasklets (want %u)\n",
			       (unsigned long long)sum, (unsigned long long)want, tasklets,
			       NR_TASKLETS);
			bad++;
		}
	}
	DPU_ASSERT(dpu_free(set));
	printf("sdk-cmake: %s\n", bad ? "FAILED" : "OK");
	return bad ? 1 : 0;
}
