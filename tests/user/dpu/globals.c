// SPDX-License-Identifier: MIT
/*
 * globals - proves that every DPU has its own copy of every global.
 * Input: dpu_id (the host writes each DPU's index).  Each launch: output =
 * dpu_id * 1000 + 7; plain (an ordinary, non-__host global) is set to
 * dpu_id * 3 and read back into echo; launches counts this DPU's launches;
 * init_check is an initialised global the program never writes
 * (0x12345678 while the load image is intact).
 */
#include <barrier.h>
#include <defs.h>
#include <stdint.h>

BARRIER_INIT(sync, NR_TASKLETS);

__host uint32_t dpu_id;
__host uint32_t output;
__host uint32_t echo;
__host uint32_t launches;
__host uint32_t init_check;

uint32_t plain;
uint32_t initialised = 0x12345678;
static uint32_t per_tasklet[NR_TASKLETS];

int main(void)
{
	per_tasklet[me()] = dpu_id + me();
	barrier_wait(&sync);
	if (me() == 0) {
		uint32_t sum = 0, t;

		for (t = 0; t < NR_TASKLETS; t++)
			sum += per_tasklet[t] - t;
		plain = sum / NR_TASKLETS * 3;
		output = dpu_id * 1000 + 7;
		echo = plain;
		init_check = initialised;
		launches++;
	}
	return 0;
}
