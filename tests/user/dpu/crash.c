// SPDX-License-Identifier: MIT
/*
 * crash - crashes in tasklet `tasklet` when told: mode 1 writes through a
 * NULL pointer ("SIGSEGV at 0x0 (tasklet T)"), mode 2 divides by zero
 * ("SIGFPE ..."), mode 3 calls abort() ("SIGABRT (tasklet T)"); mode 0
 * returns (result = 1).
 */
#include <defs.h>
#include <stdint.h>
#include <stdlib.h>

__host uint32_t mode;
__host uint32_t tasklet;
__host uint32_t result;

int main(void)
{
	volatile int zero = 0;

	if (me() != tasklet || mode == 0) {
		if (me() == 0)
			result = 1;
		return 0;
	}
	switch (mode) {
	case 1:
		*(volatile uint32_t *)(uintptr_t)zero = 1;
		break;
	case 2:
		result = 10 / zero;
		break;
	case 3:
		abort();
	}
	return 0;
}
