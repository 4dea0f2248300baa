// SPDX-License-Identifier: MIT
/*
 * profiling_test - profiling.h's sections as UPMEM's dpu_alignment uses
 * them: a context per section, started and stopped around the work of
 * each tasklet.  Built as is, profiling_start/stop do nothing (the SDK's
 * usual build); profiling_on.c builds it with DPU_PROFILING, where each
 * tasklet's time in the section is counted.  Results: work (a checksum),
 * and the contexts compute and copy, read by name.
 */
#include <attributes.h>
#include <defs.h>
#include <mram.h>
#include <profiling.h>
#include <stdint.h>

PROFILING_INIT(compute);
PROFILING_INIT(copy);

__host uint64_t work[NR_TASKLETS];

static uint64_t buf[NR_TASKLETS][32];

int main(void)
{
	unsigned int id = me();
	uint64_t x = id + 1;

	profiling_start(&compute);
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	profiling_stop(&compute);
	profiling_start(&copy);
	for (int i = 0; i < 32; i++)
		buf[id][i] = x + (uint64_t)i;
	mram_write(buf[id], (__mram_ptr void *)(DPU_MRAM_HEAP_POINTER + id * sizeof(buf[0])),
		   sizeof(buf[0]));
	profiling_stop(&copy);
	work[id] = x;
	return 0;
}
