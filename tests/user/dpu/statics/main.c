// SPDX-License-Identifier: MIT
/*
 * statics (with other.c) - two files of one DPU program each with a
 * file-static variable named counter, as C allows.  The program must load;
 * each file sees its own counter; the host reaches neither by name.
 * Results: from_main (5 + 1 = 6), from_other (100 + 2 = 102).
 */
#include <attributes.h>
#include <stdint.h>

__host uint32_t from_main;
__host uint32_t from_other;

static uint32_t counter = 5;

uint32_t other_bump(void);

int main(void)
{
	counter += 1;
	from_main = counter;
	from_other = other_bump();
	return 0;
}
