// SPDX-License-Identifier: MIT
/*
 * hostvar - __host variables of 4 and 12 bytes (WRAM transfers follow the
 * SDK's 4-byte rule): out4.v = ~in4.v; out12 = { in12.c + 1, in12.b * 2,
 * in12.a ^ 0xffffffff }.
 */
#include <defs.h>
#include <stdint.h>

struct four {
	uint32_t v;
};

struct twelve {
	uint32_t a, b, c;
};

__host struct four in4;
__host struct four out4;
__host struct twelve in12;
__host struct twelve out12;

int main(void)
{
	_Static_assert(sizeof(in4) == 4 && sizeof(in12) == 12, "sizes");
	out4.v = ~in4.v;
	out12.a = in12.c + 1;
	out12.b = in12.b * 2;
	out12.c = in12.a ^ 0xffffffffu;
	return 0;
}
