// SPDX-License-Identifier: MIT
/* sdk-app: a second file with a file-static variable named as task.c's. */
#include <stdint.h>

static uint32_t count;

uint32_t tally(void)
{
	return ++count;
}
