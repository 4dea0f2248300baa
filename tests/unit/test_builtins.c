// SPDX-License-Identifier: MIT
/*
 * Unit tests of the DPU instruction builtins of built_ins.h against the
 * ISA's definition of each instruction, written here independently of the
 * header.
 *
 * The 8x8-bit multiplies mul_X_Y rc, ra, rb: X selects ra's byte, Y rb's;
 * "l" is bits 0..7, "h" bits 8..15, "s" reads the byte as a signed 8-bit
 * number, "u" as unsigned; rc, all 32 bits, receives the product (its
 * two's complement when negative).  Twelve exist; there is no mul_u?_s?.
 * This is the definition the UPMEM ISA gives and uPIMulator's ALU
 * implements (VIA-Research/uPIMulator, golang/uPIMulator/src/simulator/
 * dpu/logic/alu.go, MulShSh..MulUlUl: BitSlice(SIGNED|UNSIGNED, 0|8, 8|16)
 * of each operand, multiplied, stored as a 32-bit word), as are cao, clz,
 * clo, cls, ext[su][bh] and cmpb4 (Cao..Extuh, Cmpb4 there).
 */
#include <stdint.h>
#include <stdio.h>

#include <built_ins.h>

#include "unit.h"

/* The ISA: one byte of a 32-bit register, read signed or unsigned. */
static int64_t isa_byte(uint32_t reg, int high, int is_signed)
{
	int64_t v = high ? (reg >> 8) & 0xff : reg & 0xff;

	if (is_signed && v >= 128)
		v -= 256;
	return v;
}

static uint32_t isa_mul(uint32_t ra, int ha, int sa, uint32_t rb, int hb, int sb)
{
	int64_t p = isa_byte(ra, ha, sa) * isa_byte(rb, hb, sb);

	return (uint32_t)(p & 0xffffffff);
}

/* Each builtin written into both an int32_t and a uint32_t destination. */
#define WRAP(name)                                                          \
	static uint32_t w_##name(uint32_t a, uint32_t b)                    \
	{                                                                   \
		int32_t s;                                                  \
		uint32_t u;                                                 \
		__builtin_##name##_rrr(s, a, b);                            \
		__builtin_##name##_rrr(u, a, b);                            \
		return (uint32_t)s == u ? u : 0xbad0bad0U;                  \
	}
WRAP(mul_sh_sh) WRAP(mul_sh_sl) WRAP(mul_sl_sh) WRAP(mul_sl_sl)
WRAP(mul_sh_uh) WRAP(mul_sh_ul) WRAP(mul_sl_uh) WRAP(mul_sl_ul)
WRAP(mul_uh_uh) WRAP(mul_uh_ul) WRAP(mul_ul_uh) WRAP(mul_ul_ul)

static const struct mul_case {
	const char *name;
	uint32_t (*fn)(uint32_t, uint32_t);
	int ha, sa, hb, sb;
} muls[] = {
	{ "mul_sh_sh", w_mul_sh_sh, 1, 1, 1, 1 },
	{ "mul_sh_sl", w_mul_sh_sl, 1, 1, 0, 1 },
	{ "mul_sl_sh", w_mul_sl_sh, 0, 1, 1, 1 },
	{ "mul_sl_sl", w_mul_sl_sl, 0, 1, 0, 1 },
	{ "mul_sh_uh", w_mul_sh_uh, 1, 1, 1, 0 },
	{ "mul_sh_ul", w_mul_sh_ul, 1, 1, 0, 0 },
	{ "mul_sl_uh", w_mul_sl_uh, 0, 1, 1, 0 },
	{ "mul_sl_ul", w_mul_sl_ul, 0, 1, 0, 0 },
	{ "mul_uh_uh", w_mul_uh_uh, 1, 0, 1, 0 },
	{ "mul_uh_ul", w_mul_uh_ul, 1, 0, 0, 0 },
	{ "mul_ul_uh", w_mul_ul_uh, 0, 0, 1, 0 },
	{ "mul_ul_ul", w_mul_ul_ul, 0, 0, 0, 0 },
};

static const uint8_t edges[] = { 0x00, 0x01, 0x7f, 0x80, 0x81, 0xff };
#define NEDGES (sizeof(edges) / sizeof(edges[0]))

/*
 * Every edge value in each byte of each operand, the other byte of the
 * low half an edge too and bits 16..31 non-zero junk, so a builtin that
 * reads the wrong byte, the wrong signedness or the upper half fails.
 */
static void test_mul_edges(const struct mul_case *m)
{
	static const uint32_t junk[] = { 0xa5c30000U, 0x00010000U, 0xffff0000U };
	unsigned int n = 0, bad = 0;
	uint32_t fa = 0, fb = 0, got0 = 0, want0 = 0;
	char name[64];

	for (unsigned int ja = 0; ja < 3; ja++)
	for (unsigned int al = 0; al < NEDGES; al++)
	for (unsigned int ah = 0; ah < NEDGES; ah++)
	for (unsigned int bl = 0; bl < NEDGES; bl++)
	for (unsigned int bh = 0; bh < NEDGES; bh++) {
		uint32_t a = junk[ja] | (uint32_t)edges[ah] << 8 | edges[al];
		uint32_t b = junk[(ja + 1) % 3] | (uint32_t)edges[bh] << 8 | edges[bl];
		uint32_t want = isa_mul(a, m->ha, m->sa, b, m->hb, m->sb);
		uint32_t got = m->fn(a, b);

		n++;
		if (got != want && !bad++) {
			fa = a;
			fb = b;
			got0 = got;
			want0 = want;
		}
	}
	snprintf(name, sizeof(name), "%s: %u operand pairs match the ISA", m->name, n);
	UNIT_CHECK(name, !bad, "%u wrong, first %s(0x%08x, 0x%08x) = 0x%08x, ISA 0x%08x",
		   bad, m->name, fa, fb, got0, want0);
}

/* A few products written out by hand, the extremes of each kind. */
static void test_mul_known(void)
{
	int32_t s;
	uint32_t u;
	int ok = 1;

	__builtin_mul_sl_sl_rrr(s, 0xffffff80U, 0x12340080U);
	ok &= s == 16384;			/* -128 * -128 */
	__builtin_mul_sl_sl_rrr(s, 0x80, 0x7f);
	ok &= s == -16256;			/* -128 * 127 */
	__builtin_mul_sl_ul_rrr(s, 0x80, 0xff);
	ok &= s == -32640;			/* -128 * 255 */
	__builtin_mul_sh_ul_rrr(s, 0x7f00, 0xff);
	ok &= s == 32385;			/* 127 * 255 */
	__builtin_mul_uh_uh_rrr(u, 0xffffffffU, 0xffffffffU);
	ok &= u == 65025;			/* 255 * 255, zero-extended */
	__builtin_mul_ul_ul_rrr(s, 0xffffffffU, 0xffffffffU);
	ok &= s == 65025;
	__builtin_mul_sh_sh_rrr(u, 0xff00, 0x0100);
	ok &= u == 0xffffffffU;			/* -1 * 1, the full 32 bits */
	__builtin_mul_ul_uh_rrr(s, 0xff, 0x0100);
	ok &= s == 255;
	__builtin_mul_uh_ul_rrr(s, 0x0200, 0x03);
	ok &= s == 6;
	__builtin_mul_sl_uh_rrr(s, 0xfe, 0x0300);
	ok &= s == -6;
	__builtin_mul_sh_uh_rrr(s, 0xfe00, 0x0300);
	ok &= s == -6;
	__builtin_mul_sl_sh_rrr(s, 0x03, 0xfe00);
	ok &= s == -6;
	__builtin_mul_sh_sl_rrr(s, 0xfe00, 0x03);
	ok &= s == -6;
	__builtin_mul_sh_ul_rrr(s, 0xfe00, 0x03);
	ok &= s == -6;
	UNIT_CHECK("mul: hand-computed extremes", ok, "a product differs");
}

/*
 * pim-ml's int8 code: an int8_t times an int16_t as two byte products
 * (mul_sl_ul on the low byte, mul_sl_sh on the high one), operands passed
 * as C values (sign-extended as in a DPU register), each evaluated once.
 */
static int32_t mul_int8_int16(int8_t x, int16_t y)
{
	int32_t lo, hi;

	__builtin_mul_sl_ul_rrr(lo, x, y);
	__builtin_mul_sl_sh_rrr(hi, x, y);
	return (hi << 8) + lo;
}

static void test_mul_int8_int16(void)
{
	unsigned int bad = 0;
	int32_t r, i = 0, j = 0;

	for (int x = -128; x <= 127; x++)
		for (int y = -32768; y <= 32767; y += 127)
			bad += mul_int8_int16((int8_t)x, (int16_t)y) != x * y;
	UNIT_CHECK("mul: pim-ml's int8 x int16 from two byte products", !bad,
		   "%u products wrong", bad);

	__builtin_mul_ul_ul_rrr(r, i++ + 3, j++ + 5);
	UNIT_CHECK("mul: each operand evaluated once", i == 1 && j == 1 && r == 15,
		   "i %d, j %d, r %d", i, j, r);
}

/* The ISA's counting instructions, bit by bit from the most significant. */
static uint32_t isa_count_leading(uint32_t r, int bit)
{
	uint32_t n = 0;

	for (int i = 31; i >= 0 && (int)((r >> i) & 1) == bit; i--)
		n++;
	return n;
}

static void test_count_and_extend(void)
{
	static const uint32_t vals[] = {
		0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000,
		0x7fffffffU, 0x80000000U, 0x80000001U, 0xfffffffeU, 0xffffffffU,
		0x12345678U, 0xedcba987U, 0x00ff00ffU, 0xff00ff00U,
	};
	unsigned int bad = 0, badcmp = 0;

	for (unsigned int k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
		uint32_t v = vals[k], rc, ones = 0;
		int32_t sc;

		for (int i = 0; i < 32; i++)
			ones += (v >> i) & 1;
		__builtin_cao_rr(rc, v);
		bad += rc != ones;
		__builtin_clz_rr(rc, v);
		bad += rc != isa_count_leading(v, 0);
		__builtin_clo_rr(rc, v);
		bad += rc != isa_count_leading(v, 1);
		__builtin_cls_rr(rc, v);
		bad += rc != isa_count_leading(v, (int)(v >> 31));
		__builtin_extsb_rr(sc, v);
		bad += sc != (int32_t)((v & 0xff) - (v & 0x80 ? 0x100 : 0));
		__builtin_extsh_rr(sc, v);
		bad += sc != (int32_t)((v & 0xffff) - (v & 0x8000 ? 0x10000 : 0));
		__builtin_extub_rr(rc, v);
		bad += rc != (v & 0xff);
		__builtin_extuh_rr(rc, v);
		bad += rc != (v & 0xffff);
		for (unsigned int m = 0; m < sizeof(vals) / sizeof(vals[0]); m++) {
			uint32_t want = 0;

			for (int i = 0; i < 4; i++)
				if (((v >> 8 * i) & 0xff) == ((vals[m] >> 8 * i) & 0xff))
					want |= 1U << 8 * i;
			__builtin_cmpb4_rrr(rc, v, vals[m]);
			badcmp += rc != want;
		}
	}
	UNIT_CHECK("cao, clz, clo, cls, ext[su][bh] match the ISA", !bad,
		   "%u results wrong", bad);
	UNIT_CHECK("cmpb4 matches the ISA", !badcmp, "%u results wrong", badcmp);
}

int main(void)
{
	for (unsigned int k = 0; k < sizeof(muls) / sizeof(muls[0]); k++)
		test_mul_edges(&muls[k]);
	test_mul_known();
	test_mul_int8_int16();
	test_count_and_extend();
	return unit_done();
}
