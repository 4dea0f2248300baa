// SPDX-License-Identifier: MIT
/*
 * A printf only in a function nothing calls (SimplePIM's print_entry):
 * the SDK's --gc-sections drops it, so the program has no log and its
 * heap starts at the start of MRAM.
 */
#include <defs.h>
#include <mram.h>
#include <stdint.h>
#include <stdio.h>

__host uint32_t answer;

void print_entry(uint32_t v)
{
	printf("entry %u\n", v);
}

int main(void)
{
	if (me() == 0)
		answer = 42;
	return 0;
}
