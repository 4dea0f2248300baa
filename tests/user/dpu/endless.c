// SPDX-License-Identifier: MIT
/* endless - never returns: every tasklet counts in WRAM forever. */
#include <defs.h>
#include <stdint.h>

__host volatile uint64_t spins;

int main(void)
{
	for (;;)
		spins++;
	return 0;
}
