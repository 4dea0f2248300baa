// SPDX-License-Identifier: MIT
/*
 * clocks - CLOCKS_PER_SEC as TransPimLib's programs use it: the DPU turns
 * cycles into time with it, the host reads it by name
 * (dpu_copy_from(dpu, "CLOCKS_PER_SEC", ...)).  Results: hz (the value
 * the DPU sees), cycles (a perfcounter reading).
 */
#include <attributes.h>
#include <perfcounter.h>
#include <stdint.h>
#include <time.h>

__host uint32_t hz;
__host uint64_t cycles;

int main(void)
{
	perfcounter_config(COUNT_CYCLES, true);
	hz = CLOCKS_PER_SEC;
	cycles = perfcounter_get();
	return 0;
}
