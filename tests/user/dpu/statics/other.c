// SPDX-License-Identifier: MIT
/* statics: the second file, with its own file-static counter. */
#include <stdint.h>

static uint32_t counter = 100;

uint32_t other_bump(void)
{
	counter += 2;
	return counter;
}
