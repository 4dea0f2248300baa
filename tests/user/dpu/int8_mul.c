// SPDX-License-Identifier: MIT
/*
 * int8_mul - int8 arithmetic as pim-ml's int8 programs write it: products
 * built from the DPU's 8x8-bit multiply builtins (built_ins.h).
 * Inputs: x[N] (int8), w[N] (int16), y[N] (int32).
 * Results: dot = sum of x[i] * w[i] (mul_sl_ul + mul_sl_sh per term),
 * wide[i] = x[i] * y[i] (four byte products), and raw[12], the twelve
 * mul_X_Y of operands a and b.
 */
#include <attributes.h>
#include <built_ins.h>
#include <defs.h>
#include <stdint.h>

#define N 64

__host int8_t x[N];
__host int16_t w[N];
__host int32_t y[N];
__host uint32_t a, b;
__host int32_t dot;
__host int32_t wide[N];
__host uint32_t raw[12];

static int32_t mul_int8_int16(int8_t p, int16_t q)
{
	int32_t lo, hi;

	__builtin_mul_sl_ul_rrr(lo, p, q);
	__builtin_mul_sl_sh_rrr(hi, p, q);
	return (hi << 8) + lo;
}

static int32_t mul_int8_int32(int8_t p, int32_t q)
{
	int32_t t0, t1, t2, t3;

	__builtin_mul_sl_ul_rrr(t0, p, q);
	__builtin_mul_sl_uh_rrr(t1, p, q);
	__builtin_mul_sl_ul_rrr(t2, p, q >> 16);
	__builtin_mul_sl_sh_rrr(t3, p, q >> 16);
	return (int32_t)((uint32_t)t0 + ((uint32_t)t1 << 8) + ((uint32_t)t2 << 16) +
			 ((uint32_t)t3 << 24));
}

int main(void)
{
	int32_t sum = 0;

	if (me() != 0)
		return 0;
	for (int i = 0; i < N; i++) {
		sum += mul_int8_int16(x[i], w[i]);
		wide[i] = mul_int8_int32(x[i], y[i]);
	}
	dot = sum;
	__builtin_mul_sh_sh_rrr(raw[0], a, b);
	__builtin_mul_sh_sl_rrr(raw[1], a, b);
	__builtin_mul_sh_uh_rrr(raw[2], a, b);
	__builtin_mul_sh_ul_rrr(raw[3], a, b);
	__builtin_mul_sl_sh_rrr(raw[4], a, b);
	__builtin_mul_sl_sl_rrr(raw[5], a, b);
	__builtin_mul_sl_uh_rrr(raw[6], a, b);
	__builtin_mul_sl_ul_rrr(raw[7], a, b);
	__builtin_mul_uh_uh_rrr(raw[8], a, b);
	__builtin_mul_uh_ul_rrr(raw[9], a, b);
	__builtin_mul_ul_uh_rrr(raw[10], a, b);
	__builtin_mul_ul_ul_rrr(raw[11], a, b);
	return 0;
}
