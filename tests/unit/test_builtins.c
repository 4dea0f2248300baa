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
 * clo, ext[su][bh] and cmpb4 (Cao..Extuh, Cmpb4 there).  cls follows
 * UPMEM's QEMU DPU target (below: _cls is tcg_gen_clrsb_tl with a maximum
 * of 31, the sign bit not counted), not uPIMulator's Cls, which counts
 * over its 64-bit MRAM data width.
 *
 * The other register instructions (add ... lsr1x, hash, sats, lsl_add,
 * lsr_add, rol_add, lsl_sub, sub_rir, and_[su]_rki, the _rrif/_rirf forms
 * with the never-true condition "false") and the .s/.u forms
 * are tested against UPMEM's QEMU DPU target (upmem/qemu, commit 0562205,
 * target/dpu/translate.c and translate_defs.h): a shift or rotation uses
 * its operand's bits 0..4 (get_bits(v, 0, 4) / uext_5_32); lsl1/lsr1 are
 * _lsl/_lsr with op3 = 1 (ones shifted in); lslx/lsrx/lsl1x/lsr1x are 0
 * (lsl1x, lsr1x: 0xffffffff) for a shift of 0, else lsr/lsr/lsl/lsl by
 * 32 - shift with zeros (x) or ones (1x) shifted in; lsl_add rc, rb, ra, sh
 * is add(rb, lsl(ra, sh)); sub_rir is sub(imm, ra); hash is _hash; sats is
 * _sats (ra < 0 ? 0x7fffffff : 0x80000000); .s is sext_32_64, .u
 * uext_32_64 of the 32-bit result.  The references below are bit by bit,
 * as the ISA states them, not the header's formulas.  The builtins'
 * argument order and their string immediates are the SDK's (built_ins.h,
 * as uPIMulator vendors it: golang/uPIMulator/sdk/syslib/built_ins.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
		bad += rc != isa_count_leading(v, (int)(v >> 31)) - 1;
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

/* ---------------------------------------------------------------- ALU */

/* A shift of reg by sh (bits 0..4), fill shifted in at the vacated end. */
static uint32_t isa_shl(uint32_t a, uint32_t sh, uint32_t fill)
{
	uint32_t r = 0;

	sh &= 31;
	for (uint32_t i = 0; i < 32; i++)
		r |= (i < sh ? fill : (a >> (i - sh)) & 1) << i;
	return r;
}

static uint32_t isa_shr(uint32_t a, uint32_t sh, uint32_t fill)
{
	uint32_t r = 0;

	sh &= 31;
	for (uint32_t i = 0; i < 32; i++)
		r |= (i + sh >= 32 ? fill : (a >> (i + sh)) & 1) << i;
	return r;
}

static uint32_t isa_rot(uint32_t a, uint32_t sh, int left)
{
	uint32_t r = 0;

	sh &= 31;
	for (uint32_t i = 0; i < 32; i++)
		r |= ((a >> ((left ? i + 32 - sh : i + sh) % 32)) & 1) << i;
	return r;
}

enum isa_op {
	OP_ADD, OP_SUB, OP_RSUB, OP_AND, OP_OR, OP_XOR, OP_NAND, OP_NOR, OP_NXOR,
	OP_ANDN, OP_ORN, OP_LSL, OP_LSR, OP_ASR, OP_ROL, OP_ROR, OP_LSL1, OP_LSR1,
	OP_LSLX, OP_LSRX, OP_LSL1X, OP_LSR1X, OP_HASH,
};

static uint32_t isa_alu(enum isa_op op, uint32_t a, uint32_t b)
{
	uint32_t sh = b & 31, w, m, r;

	switch (op) {
	case OP_ADD: return (uint32_t)(((uint64_t)a + b) & 0xffffffffU);
	case OP_SUB: return (uint32_t)(((uint64_t)a + 0x100000000ULL - b) & 0xffffffffU);
	case OP_RSUB: return (uint32_t)(((uint64_t)b + 0x100000000ULL - a) & 0xffffffffU);
	case OP_AND: return a & b;
	case OP_OR: return a | b;
	case OP_XOR: return a ^ b;
	case OP_NAND: return ~(a & b);
	case OP_NOR: return ~(a | b);
	case OP_NXOR: return ~(a ^ b);
	case OP_ANDN: return ~a & b;
	case OP_ORN: return ~a | b;
	case OP_LSL: return isa_shl(a, b, 0);
	case OP_LSR: return isa_shr(a, b, 0);
	case OP_ASR: return isa_shr(a, b, a >> 31);
	case OP_ROL: return isa_rot(a, b, 1);
	case OP_ROR: return isa_rot(a, b, 0);
	case OP_LSL1: return isa_shl(a, b, 1);
	case OP_LSR1: return isa_shr(a, b, 1);
	case OP_LSLX: return sh ? isa_shr(a, 32 - sh, 0) : 0;
	case OP_LSRX: return sh ? isa_shl(a, 32 - sh, 0) : 0;
	case OP_LSL1X: return sh ? isa_shr(a, 32 - sh, 1) : 0xffffffffU;
	case OP_LSR1X: return sh ? isa_shl(a, 32 - sh, 1) : 0xffffffffU;
	case OP_HASH:
		w = 7 + ((b >> 2) & 3);
		m = (1U << w) - 1;
		r = (a & m) ^ ((a >> w) & m);
		return b & 1 ? r ^ ((a >> (2 * w)) & m) : r;
	}
	return 0xdeadbeefU;
}

/* rc = ra OP rb into int32_t and uint32_t, and the .s/.u pairs. */
struct alu_res {
	uint32_t s32, u32;
	int64_t s64;
	uint64_t u64;
	int has_su;
};

#define RRR_FN(name)                                                        \
	static struct alu_res rrr_##name(uint32_t a, uint32_t b)            \
	{                                                                   \
		struct alu_res r = { 0 };                                   \
		int32_t s;                                                  \
		__builtin_##name##_rrr(s, a, b);                            \
		__builtin_##name##_rrr(r.u32, a, b);                        \
		r.s32 = (uint32_t)s;                                        \
		__builtin_##name##_s_rrr(r.s64, a, b);                      \
		__builtin_##name##_u_rrr(r.u64, a, b);                      \
		r.has_su = 1;                                               \
		return r;                                                   \
	}
#define RRR_FN_NOSU(name)                                                   \
	static struct alu_res rrr_##name(uint32_t a, uint32_t b)            \
	{                                                                   \
		struct alu_res r = { 0 };                                   \
		int32_t s;                                                  \
		__builtin_##name##_rrr(s, a, b);                            \
		__builtin_##name##_rrr(r.u32, a, b);                        \
		r.s32 = (uint32_t)s;                                        \
		return r;                                                   \
	}
RRR_FN(add) RRR_FN(sub) RRR_FN(rsub) RRR_FN(and) RRR_FN(or) RRR_FN(xor)
RRR_FN(nand) RRR_FN(nor) RRR_FN(nxor) RRR_FN(andn) RRR_FN(orn) RRR_FN(lsl)
RRR_FN(lsr) RRR_FN(asr) RRR_FN(rol) RRR_FN(ror) RRR_FN(lsl1) RRR_FN(lsr1)
RRR_FN(lslx) RRR_FN(lsrx) RRR_FN(lsl1x) RRR_FN(lsr1x) RRR_FN(hash)

static const struct rrr_case {
	const char *name;
	enum isa_op op;
	struct alu_res (*fn)(uint32_t, uint32_t);
} rrrs[] = {
	{ "add", OP_ADD, rrr_add }, { "sub", OP_SUB, rrr_sub },
	{ "rsub", OP_RSUB, rrr_rsub }, { "and", OP_AND, rrr_and },
	{ "or", OP_OR, rrr_or }, { "xor", OP_XOR, rrr_xor },
	{ "nand", OP_NAND, rrr_nand }, { "nor", OP_NOR, rrr_nor },
	{ "nxor", OP_NXOR, rrr_nxor }, { "andn", OP_ANDN, rrr_andn },
	{ "orn", OP_ORN, rrr_orn }, { "lsl", OP_LSL, rrr_lsl },
	{ "lsr", OP_LSR, rrr_lsr }, { "asr", OP_ASR, rrr_asr },
	{ "rol", OP_ROL, rrr_rol }, { "ror", OP_ROR, rrr_ror },
	{ "lsl1", OP_LSL1, rrr_lsl1 }, { "lsr1", OP_LSR1, rrr_lsr1 },
	{ "lslx", OP_LSLX, rrr_lslx }, { "lsrx", OP_LSRX, rrr_lsrx },
	{ "lsl1x", OP_LSL1X, rrr_lsl1x }, { "lsr1x", OP_LSR1X, rrr_lsr1x },
	{ "hash", OP_HASH, rrr_hash },
};

static const uint32_t alu_vals[] = {
	0, 1, 2, 3, 4, 5, 7, 8, 13, 15, 16, 17, 31, 32, 33, 63, 64, 0x7f, 0x80,
	0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffffU, 0x80000000U,
	0x80000001U, 0xfffffffeU, 0xffffffffU, 0xffffffe1U, 0x12345678U,
	0xedcba987U, 0x00ff00ffU, 0xff00ff00U, 0xdeadbeefU,
};
#define NVALS (sizeof(alu_vals) / sizeof(alu_vals[0]))

static int res_ok(const struct alu_res *r, uint32_t want)
{
	if (r->s32 != want || r->u32 != want)
		return 0;
	return !r->has_su || (r->s64 == (int64_t)(int32_t)want && r->u64 == (uint64_t)want);
}

static void test_rrr(void)
{
	for (unsigned int k = 0; k < sizeof(rrrs) / sizeof(rrrs[0]); k++) {
		const struct rrr_case *c = &rrrs[k];
		unsigned int bad = 0, n = 0;
		uint32_t fa = 0, fb = 0, want0 = 0;
		struct alu_res got = { 0 };
		char name[96];

		for (unsigned int i = 0; i < NVALS; i++)
			for (unsigned int j = 0; j < NVALS; j++) {
				uint32_t a = alu_vals[i], b = alu_vals[j];
				uint32_t want = isa_alu(c->op, a, b);
				struct alu_res r = c->fn(a, b);

				n++;
				if (!res_ok(&r, want) && !bad++) {
					fa = a;
					fb = b;
					got = r;
					want0 = want;
				}
			}
		snprintf(name, sizeof(name), "%s_rrr and its .s/.u forms: %u operand pairs match the ISA",
			 c->name, n);
		UNIT_CHECK(name, !bad,
			   "%u wrong, first %s(0x%08x, 0x%08x) = 0x%08x/0x%08x, .s 0x%016llx, .u 0x%016llx; ISA 0x%08x",
			   bad, c->name, fa, fb, got.s32, got.u32, (unsigned long long)got.s64,
			   (unsigned long long)got.u64, want0);
	}
}

/* The immediates: string literals as the SDK's asm macros take them. */
static const uint32_t imm_vals[] = {
	0, 1, 5, 31, 32, 33, 0xffffffffU, 16, 5, 15, 0xffffffffU, 0x80000000U, 8,
};
#define NIMMS (sizeof(imm_vals) / sizeof(imm_vals[0]))
/* Each immediate a literal, in imm_vals' order. */
#define RRI_BODY(name, lit)                                                 \
	__builtin_##name##_rri(out[n].u32, a, lit);                         \
	__builtin_##name##_rri(s, a, lit);                                  \
	out[n].s32 = (uint32_t)s;
#define RRI_BODY_SU(name, lit)                                              \
	RRI_BODY(name, lit)                                                 \
	__builtin_##name##_s_rri(out[n].s64, a, lit);                       \
	__builtin_##name##_u_rri(out[n].u64, a, lit);                       \
	out[n].has_su = 1;

#define RRI_DEF(name, body)                                                 \
	static void rri_##name(uint32_t a, struct alu_res *out)             \
	{                                                                   \
		unsigned int n = 0;                                         \
		int32_t s;                                                  \
		memset(out, 0, NIMMS * sizeof(*out));                       \
		RRI_EACH(name, body)                                        \
	}
#define RRI_EACH(name, body)                                                \
	body(name, "0") n++; body(name, "1") n++; body(name, "5") n++;      \
	body(name, "31") n++; body(name, "32") n++; body(name, "33") n++;   \
	body(name, "-1") n++; body(name, "0x10") n++;                       \
	body(name, "0b101") n++; body(name, "017") n++;                     \
	body(name, "0xFFFFFFFF") n++; body(name, "-2147483648") n++;        \
	body(name, "+8") n++;                                               \
	(void)n;

RRI_DEF(add, RRI_BODY_SU) RRI_DEF(and, RRI_BODY_SU) RRI_DEF(or, RRI_BODY_SU)
RRI_DEF(xor, RRI_BODY) RRI_DEF(lsl, RRI_BODY_SU) RRI_DEF(lsr, RRI_BODY_SU)
RRI_DEF(asr, RRI_BODY_SU) RRI_DEF(rol, RRI_BODY_SU) RRI_DEF(ror, RRI_BODY_SU)
RRI_DEF(lsl1, RRI_BODY_SU) RRI_DEF(lsr1, RRI_BODY_SU) RRI_DEF(lslx, RRI_BODY_SU)
RRI_DEF(lsrx, RRI_BODY_SU) RRI_DEF(lsl1x, RRI_BODY_SU) RRI_DEF(lsr1x, RRI_BODY_SU)

static const struct rri_case {
	const char *name;
	enum isa_op op;
	void (*fn)(uint32_t, struct alu_res *);
} rris[] = {
	{ "add", OP_ADD, rri_add }, { "and", OP_AND, rri_and },
	{ "or", OP_OR, rri_or }, { "xor", OP_XOR, rri_xor },
	{ "lsl", OP_LSL, rri_lsl }, { "lsr", OP_LSR, rri_lsr },
	{ "asr", OP_ASR, rri_asr }, { "rol", OP_ROL, rri_rol },
	{ "ror", OP_ROR, rri_ror }, { "lsl1", OP_LSL1, rri_lsl1 },
	{ "lsr1", OP_LSR1, rri_lsr1 }, { "lslx", OP_LSLX, rri_lslx },
	{ "lsrx", OP_LSRX, rri_lsrx }, { "lsl1x", OP_LSL1X, rri_lsl1x },
	{ "lsr1x", OP_LSR1X, rri_lsr1x },
};

/*
 * Every value of alu_vals through @c's builtin with each of @nimm
 * immediates (@imms, in the order its function writes them), against the
 * ISA; one check named @name.
 */
static void check_imm_case(const struct rri_case *c, const uint32_t *imms,
			   unsigned int nimm, const char *name)
{
	struct alu_res out[32], got = { 0 };
	uint32_t fa = 0, fi = 0, want0 = 0;
	unsigned int bad = 0;

	for (unsigned int i = 0; i < NVALS; i++) {
		c->fn(alu_vals[i], out);
		for (unsigned int j = 0; j < nimm; j++) {
			/* rsub(a, imm) = imm - a: sub_rirf */
			uint32_t want = isa_alu(c->op, alu_vals[i], imms[j]);

			if (!res_ok(&out[j], want) && !bad++) {
				fa = alu_vals[i];
				fi = j;
				got = out[j];
				want0 = want;
			}
		}
	}
	UNIT_CHECK(name, !bad,
		   "%u wrong, first ra 0x%08x, immediate #%u: 0x%08x/0x%08x, .s 0x%016llx, .u 0x%016llx; ISA 0x%08x",
		   bad, fa, fi, got.s32, got.u32, (unsigned long long)got.s64,
		   (unsigned long long)got.u64, want0);
}

static void test_rri(void)
{
	char name[96];

	for (unsigned int k = 0; k < sizeof(rris) / sizeof(rris[0]); k++) {
		snprintf(name, sizeof(name), "%s_rri%s: %zu immediates match the ISA", rris[k].name,
			 rris[k].op == OP_XOR ? "" : " and its .s/.u forms", NIMMS);
		check_imm_case(&rris[k], imm_vals, NIMMS, name);
	}
}

/* rc = rb + (ra << sh) and its kin, sh an immediate; sub_rir, and_[su]_rki. */
#define RRRI_EACH(X, rb, ra)                                                \
	X(rb, ra, "0", 0) X(rb, ra, "1", 1) X(rb, ra, "4", 4)               \
	X(rb, ra, "31", 31) X(rb, ra, "32", 32) X(rb, ra, "33", 33)
#define RRRI_CHECK(rb, ra, lit, sh)                                         \
	{                                                                   \
		uint32_t want, r;                                           \
		int64_t s;                                                  \
		uint64_t u;                                                 \
		want = (uint32_t)(((uint64_t)(rb) + isa_shl((ra), (sh), 0)) & 0xffffffffU); \
		__builtin_lsl_add_rrri(r, rb, ra, lit);                     \
		__builtin_lsl_add_s_rrri(s, rb, ra, lit);                   \
		__builtin_lsl_add_u_rrri(u, rb, ra, lit);                   \
		bad += r != want || s != (int32_t)want || u != want;        \
		want = (uint32_t)(((uint64_t)(rb) + isa_shr((ra), (sh), 0)) & 0xffffffffU); \
		__builtin_lsr_add_rrri(r, rb, ra, lit);                     \
		__builtin_lsr_add_s_rrri(s, rb, ra, lit);                   \
		__builtin_lsr_add_u_rrri(u, rb, ra, lit);                   \
		bad += r != want || s != (int32_t)want || u != want;        \
		want = (uint32_t)(((uint64_t)(rb) + isa_rot((ra), (sh), 1)) & 0xffffffffU); \
		__builtin_rol_add_rrri(r, rb, ra, lit);                     \
		__builtin_rol_add_s_rrri(s, rb, ra, lit);                   \
		__builtin_rol_add_u_rrri(u, rb, ra, lit);                   \
		bad += r != want || s != (int32_t)want || u != want;        \
		want = (uint32_t)(((uint64_t)(rb) + 0x100000000ULL - isa_shl((ra), (sh), 0)) & 0xffffffffU); \
		__builtin_lsl_sub_rrri(r, rb, ra, lit);                     \
		__builtin_lsl_sub_s_rrri(s, rb, ra, lit);                   \
		__builtin_lsl_sub_u_rrri(u, rb, ra, lit);                   \
		bad += r != want || s != (int32_t)want || u != want;        \
		n += 4;                                                     \
	}

static void test_rrri_rir_rki(void)
{
	unsigned int bad = 0, n = 0, badi = 0;

	for (unsigned int i = 0; i < NVALS; i++)
		for (unsigned int j = 0; j < NVALS; j++) {
			uint32_t rb = alu_vals[i], ra = alu_vals[j];

			RRRI_EACH(RRRI_CHECK, rb, ra)
		}
	UNIT_CHECK("lsl_add, lsr_add, rol_add, lsl_sub (rrri and .s/.u): rb + or - (ra shifted)",
		   !bad, "%u of %u wrong", bad, n);

	/* lsl_add's operand order: rc = rb + (ra << sh), the third shifted */
	{
		uint32_t r;

		__builtin_lsl_add_rrri(r, 1, 2, "4");
		badi += r != 33;
		__builtin_lsr_add_rrri(r, 1, 0x80000000U, "31");
		badi += r != 2;
		__builtin_lsl_sub_rrri(r, 0, 1, "2");
		badi += r != 0xfffffffcU;			/* borrow: 0 - 4 */
		__builtin_lsl_add_rrri(r, 0xffffffffU, 1, "0");
		badi += r != 0;					/* carry out dropped */
		__builtin_rol_add_rrri(r, 0, 0x80000001U, "1");
		badi += r != 3;
	}
	UNIT_CHECK("lsl_add rc, rb, ra, sh is rb + (ra << sh), 32 bits wide", !badi,
		   "%u results wrong", badi);

	badi = 0;
	for (unsigned int i = 0; i < NVALS; i++) {
		uint32_t a = alu_vals[i], r;
		int64_t s;
		uint64_t u;

		__builtin_sub_rir(r, "0", a);
		badi += r != 0U - a;
		__builtin_sub_rir(r, "-1", a);
		badi += r != ~a;
		__builtin_sub_rir(r, "0x10", a);
		badi += r != 16U - a;
		__builtin_and_s_rki(s, a, "0xffff8000");
		badi += s != (int64_t)(int32_t)(a & 0xffff8000U);
		__builtin_and_u_rki(u, a, "0xffff8000");
		badi += u != (uint64_t)(a & 0xffff8000U);
	}
	UNIT_CHECK("sub_rir is imm - ra; and_s_rki / and_u_rki extend ra & imm", !badi,
		   "%u results wrong", badi);
}

/* The x shifts return what the plain shift drops: a 64-bit shift's halves. */
static void test_shift_pairs(void)
{
	unsigned int bad = 0;

	for (unsigned int i = 0; i < NVALS; i++)
		for (uint32_t sh = 1; sh < 32; sh++) {
			uint32_t a = alu_vals[i], lo, hi;
			uint64_t wide = (uint64_t)a << sh;

			__builtin_lsl_rrr(lo, a, sh);
			__builtin_lslx_rrr(hi, a, sh);
			bad += lo != (uint32_t)wide || hi != (uint32_t)(wide >> 32);
			wide = ((uint64_t)a << 32) >> sh;
			__builtin_lsr_rrr(hi, a, sh);
			__builtin_lsrx_rrr(lo, a, sh);
			bad += hi != (uint32_t)(wide >> 32) || lo != (uint32_t)wide;
		}
	UNIT_CHECK("lsl/lslx and lsr/lsrx are the halves of a 64-bit shift", !bad,
		   "%u pairs wrong", bad);

	__builtin_nop_();
	UNIT_CHECK("nop_ is a statement that does nothing", 1, "%s", "");
}

static void test_sats_and_su(void)
{
	unsigned int bad = 0;

	for (unsigned int i = 0; i < NVALS; i++) {
		uint32_t a = alu_vals[i], r, want = a >> 31 ? 0x7fffffffU : 0x80000000U;
		int64_t s;
		uint64_t u;

		__builtin_sats_rr(r, a);
		__builtin_sats_s_rr(s, a);
		__builtin_sats_u_rr(u, a);
		bad += r != want || s != (int64_t)(int32_t)want || u != want;

		/* the .s/.u forms of the earlier instructions */
		__builtin_clz_rr(r, a);
		__builtin_clz_s_rr(s, a);
		__builtin_clz_u_rr(u, a);
		bad += s != (int64_t)r || u != r;
		__builtin_clo_rr(r, a);
		__builtin_clo_s_rr(s, a);
		__builtin_clo_u_rr(u, a);
		bad += s != (int64_t)r || u != r;
		__builtin_cls_rr(r, a);
		__builtin_cls_s_rr(s, a);
		__builtin_cls_u_rr(u, a);
		bad += s != (int64_t)r || u != r;
		__builtin_cao_rr(r, a);
		__builtin_cao_s_rr(s, a);
		__builtin_cao_u_rr(u, a);
		bad += s != (int64_t)r || u != r;
		__builtin_extsb_s_rr(s, a);
		bad += s != (int64_t)(int8_t)(a & 0xff);
		__builtin_extsh_s_rr(s, a);
		bad += s != (int64_t)(int16_t)(a & 0xffff);
		__builtin_extub_u_rr(u, a);
		bad += u != (a & 0xff);
		__builtin_extuh_u_rr(u, a);
		bad += u != (a & 0xffff);
		for (unsigned int j = 0; j < NVALS; j++) {
			uint32_t b = alu_vals[j];

			__builtin_cmpb4_rrr(r, a, b);
			__builtin_cmpb4_s_rrr(s, a, b);
			__builtin_cmpb4_u_rrr(u, a, b);
			bad += s != (int64_t)r || u != r;
			__builtin_mul_sl_sl_rrr(r, a, b);
			__builtin_mul_sl_sl_s_rrr(s, a, b);
			bad += s != (int64_t)(int32_t)r;
			__builtin_mul_sh_uh_rrr(r, a, b);
			__builtin_mul_sh_uh_s_rrr(s, a, b);
			bad += s != (int64_t)(int32_t)r;
			__builtin_mul_ul_ul_rrr(r, a, b);
			__builtin_mul_ul_ul_u_rrr(u, a, b);
			bad += u != r;
			__builtin_mul_uh_ul_rrr(r, a, b);
			__builtin_mul_uh_ul_u_rrr(u, a, b);
			bad += u != r;
		}
	}
	UNIT_CHECK("sats, and the .s/.u forms of counts, extensions, cmpb4, multiplies", !bad,
		   "%u results wrong", bad);
}

/*
 * The _rrif/_rirf forms (condition "false": no jump), immediate a signed
 * 24-bit field: as the _rri forms with the immediate sign-extended from
 * bit 23 (UPMEM's QEMU: sext_24_32), for the SDK's in-range immediates
 * the value written.
 */
static const uint32_t imm24_vals[] = {
	0, 1, 0xffffffffU, 0x7fffffU, 0xff800000U, 0x10, 0x123456U, 0xfff00000U,
};
#define NIMM24 (sizeof(imm24_vals) / sizeof(imm24_vals[0]))
_Static_assert(NIMM24 <= 32 && NIMMS <= 32, "check_imm_case's out[]");
#define RRIF_EACH(name, body)                                               \
	body(name, "0") n++; body(name, "1") n++; body(name, "-1") n++;     \
	body(name, "0x7fffff") n++; body(name, "-8388608") n++;             \
	body(name, "0x10") n++; body(name, "0x123456") n++;                 \
	body(name, "-1048576") n++;                                         \
	(void)n;
#define RRIF_BODY(name, lit)                                                \
	__builtin_##name##_rrif(out[n].u32, a, lit, "false");               \
	__builtin_##name##_rrif(s, a, lit, "false");                        \
	out[n].s32 = (uint32_t)s;
#define RRIF_BODY_SU(name, lit)                                             \
	RRIF_BODY(name, lit)                                                \
	__builtin_##name##_s_rrif(out[n].s64, a, lit, "false");             \
	__builtin_##name##_u_rrif(out[n].u64, a, lit, "false");             \
	out[n].has_su = 1;
#define RRIF_DEF(name, body)                                                \
	static void rrif_##name(uint32_t a, struct alu_res *out)            \
	{                                                                   \
		unsigned int n = 0;                                         \
		int32_t s;                                                  \
		memset(out, 0, NIMM24 * sizeof(*out));                      \
		RRIF_EACH(name, body)                                       \
	}

RRIF_DEF(add, RRIF_BODY_SU) RRIF_DEF(sub, RRIF_BODY_SU) RRIF_DEF(and, RRIF_BODY_SU)
RRIF_DEF(or, RRIF_BODY_SU) RRIF_DEF(xor, RRIF_BODY_SU) RRIF_DEF(nand, RRIF_BODY_SU)
RRIF_DEF(nor, RRIF_BODY_SU) RRIF_DEF(nxor, RRIF_BODY_SU) RRIF_DEF(andn, RRIF_BODY_SU)
RRIF_DEF(orn, RRIF_BODY_SU) RRIF_DEF(hash, RRIF_BODY_SU)

static void rirf_sub(uint32_t a, struct alu_res *out)
{
	unsigned int n = 0;
	int32_t s;

#define RIRF_BODY(name, lit)                                                \
	__builtin_##name##_rirf(out[n].u32, lit, a, "false");               \
	__builtin_##name##_rirf(s, lit, a, "false");                        \
	out[n].s32 = (uint32_t)s;                                           \
	__builtin_##name##_s_rirf(out[n].s64, lit, a, "false");             \
	__builtin_##name##_u_rirf(out[n].u64, lit, a, "false");             \
	out[n].has_su = 1;
	memset(out, 0, NIMM24 * sizeof(*out));
	RRIF_EACH(sub, RIRF_BODY)
#undef RIRF_BODY
}

static void test_rrif(void)
{
	static const struct rri_case rrifs[] = {
		{ "add", OP_ADD, rrif_add }, { "sub", OP_SUB, rrif_sub },
		{ "and", OP_AND, rrif_and }, { "or", OP_OR, rrif_or },
		{ "xor", OP_XOR, rrif_xor }, { "nand", OP_NAND, rrif_nand },
		{ "nor", OP_NOR, rrif_nor }, { "nxor", OP_NXOR, rrif_nxor },
		{ "andn", OP_ANDN, rrif_andn }, { "orn", OP_ORN, rrif_orn },
		{ "hash", OP_HASH, rrif_hash }, { "sub_rirf", OP_RSUB, rirf_sub },
	};

	char name[96];

	for (unsigned int k = 0; k < sizeof(rrifs) / sizeof(rrifs[0]); k++) {
		snprintf(name, sizeof(name), "%s%s and its .s/.u forms: %zu 24-bit immediates match the ISA",
			 rrifs[k].name, rrifs[k].op == OP_RSUB ? "" : "_rrif", NIMM24);
		check_imm_case(&rrifs[k], imm24_vals, NIMM24, name);
	}
}

int main(void)
{
	for (unsigned int k = 0; k < sizeof(muls) / sizeof(muls[0]); k++)
		test_mul_edges(&muls[k]);
	test_mul_known();
	test_mul_int8_int16();
	test_count_and_extend();
	test_rrr();
	test_rri();
	test_rrif();
	test_rrri_rir_rki();
	test_shift_pairs();
	test_sats_and_su();
	return unit_done();
}
