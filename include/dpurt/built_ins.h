/* SPDX-License-Identifier: MIT */
/*
 * built_ins.h - the DPU compiler's builtins that have a meaning on the host.
 */
#ifndef DPUSYSCORE_BUILT_INS_H
#define DPUSYSCORE_BUILT_INS_H

#include <defs.h>
#include <string.h>

#define __builtin_dpu_tid() me()
/* nop: no operation (the SDK's __builtin_nop_(), an asm "nop") */
#define __builtin_nop_() ((void)0)
#include <mram.h>
#define __builtin_dpu_ldma(to, from, size) mram_read((from), (to), (size))
#define __builtin_dpu_sdma(from, to, size) mram_write((from), (to), (size))

/*
 * The 8x8-bit multiplies, mul_X_Y rc, ra, rb: one byte of ra times one byte
 * of rb, the 16-bit product in the whole 32-bit rc.  X names ra's byte, Y
 * rb's: "l" is bits 0..7, "h" bits 8..15; "s" reads the byte as signed
 * (int8), "u" as unsigned (uint8).  Bits 16..31 of both operands are
 * ignored.  The product is sign-extended into rc when either byte is read
 * signed, zero-extended when both are unsigned.  The ISA has these twelve;
 * no mul_u?_s? exists (swap the operands).  As in the SDK's built_ins.h the
 * builtin writes its first argument: __builtin_mul_sl_ul_rrr(rc, ra, rb).
 */
#include <stdint.h>

static inline uint32_t __dpurt_byte(uint32_t r, int high)
{
	return high ? (r >> 8) & 0xffU : r & 0xffU;
}

static inline int32_t __dpurt_sbyte(uint32_t r, int high)
{
	uint32_t b = __dpurt_byte(r, high);

	return b & 0x80U ? (int32_t)b - 0x100 : (int32_t)b;
}

#define __DPURT_MUL_SS(ra, ha, rb, hb) \
	(__dpurt_sbyte((uint32_t)(ra), (ha)) * __dpurt_sbyte((uint32_t)(rb), (hb)))
#define __DPURT_MUL_SU(ra, ha, rb, hb) \
	(__dpurt_sbyte((uint32_t)(ra), (ha)) * (int32_t)__dpurt_byte((uint32_t)(rb), (hb)))
#define __DPURT_MUL_UU(ra, ha, rb, hb) \
	(__dpurt_byte((uint32_t)(ra), (ha)) * __dpurt_byte((uint32_t)(rb), (hb)))

#define __builtin_mul_sh_sh_rrr(rc, ra, rb) ((rc) = __DPURT_MUL_SS((ra), 1, (rb), 1))
#define __builtin_mul_sh_sl_rrr(rc, ra, rb) ((rc) = __DPURT_MUL_SS((ra), 1, (rb), 0))
#define __builtin_mul_sl_sh_rrr(rc, ra, rb) ((rc) = __DPURT_MUL_SS((ra), 0, (rb), 1))
#define __builtin_mul_sl_sl_rrr(rc, ra, rb) ((rc) = __DPURT_MUL_SS((ra), 0, (rb), 0))
#define __builtin_mul_sh_uh_rrr(rc, ra, rb) ((rc) = __DPURT_MUL_SU((ra), 1, (rb), 1))
#define __builtin_mul_sh_ul_rrr(rc, ra, rb) ((rc) = __DPURT_MUL_SU((ra), 1, (rb), 0))
#define __builtin_mul_sl_uh_rrr(rc, ra, rb) ((rc) = __DPURT_MUL_SU((ra), 0, (rb), 1))
#define __builtin_mul_sl_ul_rrr(rc, ra, rb) ((rc) = __DPURT_MUL_SU((ra), 0, (rb), 0))
#define __builtin_mul_uh_uh_rrr(rc, ra, rb) ((rc) = __DPURT_MUL_UU((ra), 1, (rb), 1))
#define __builtin_mul_uh_ul_rrr(rc, ra, rb) ((rc) = __DPURT_MUL_UU((ra), 1, (rb), 0))
#define __builtin_mul_ul_uh_rrr(rc, ra, rb) ((rc) = __DPURT_MUL_UU((ra), 0, (rb), 1))
#define __builtin_mul_ul_ul_rrr(rc, ra, rb) ((rc) = __DPURT_MUL_UU((ra), 0, (rb), 0))

/*
 * Counting and extension, op rc, ra on the 32-bit ra: cao counts its ones,
 * clz its leading zeros, clo its leading ones, cls the bits after the sign
 * bit equal to it (as clrsb: cls of 0 and of -1 is 31, of 1 is 30); clz
 * of 0 is 32, not undefined as the host's __builtin_clz.  extsb, extsh,
 * extub and extuh sign- or zero-extend ra's low byte or half-word.
 * cmpb4 rc, ra, rb sets each byte of rc to 1 where ra's and rb's bytes
 * are equal, 0 where not.
 */
static inline uint32_t __dpurt_clz(uint32_t r)
{
	return r ? (uint32_t)__builtin_clz(r) : 32;
}

static inline uint32_t __dpurt_cls(uint32_t r)
{
	return __dpurt_clz(r & 0x80000000U ? ~r : r) - 1;
}

static inline uint32_t __dpurt_cmpb4(uint32_t a, uint32_t b)
{
	uint32_t r = 0;

	for (int i = 0; i < 32; i += 8)
		r |= (((a >> i) & 0xffU) == ((b >> i) & 0xffU) ? 1U : 0U) << i;
	return r;
}

#define __builtin_cao_rr(rc, ra) ((rc) = (uint32_t)__builtin_popcount((uint32_t)(ra)))
#define __builtin_clz_rr(rc, ra) ((rc) = __dpurt_clz((uint32_t)(ra)))
#define __builtin_clo_rr(rc, ra) ((rc) = __dpurt_clz(~(uint32_t)(ra)))
#define __builtin_cls_rr(rc, ra) ((rc) = __dpurt_cls((uint32_t)(ra)))
#define __builtin_extsb_rr(rc, ra) ((rc) = (int32_t)(int8_t)(uint8_t)(uint32_t)(ra))
#define __builtin_extsh_rr(rc, ra) ((rc) = (int32_t)(int16_t)(uint16_t)(uint32_t)(ra))
#define __builtin_extub_rr(rc, ra) ((rc) = (uint32_t)(uint8_t)(uint32_t)(ra))
#define __builtin_extuh_rr(rc, ra) ((rc) = (uint32_t)(uint16_t)(uint32_t)(ra))
#define __builtin_cmpb4_rrr(rc, ra, rb) ((rc) = __dpurt_cmpb4((uint32_t)(ra), (uint32_t)(rb)))

/*
 * The rest of the ISA's register-to-register instructions, as UPMEM's own
 * QEMU DPU target defines them (upmem/qemu, target/dpu/translate.c and
 * translate_defs.h).  All work on 32-bit registers; a shift or rotation
 * amount is its operand's low 5 bits (lsl of 32 is lsl of 0).
 *
 *   add sub rsub        ra + rb, ra - rb, rb - ra (modulo 2^32)
 *   and or xor          bitwise; nand nor nxor their complements;
 *   andn orn            ~ra & rb, ~ra | rb
 *   lsl lsr asr         shifts; lsl1 and lsr1 shift ones in, not zeros
 *   rol ror             rotations
 *   lslx lsrx           the bits lsl / lsr shift out, right / left
 *                       aligned: ra >> (32 - sh), ra << (32 - sh); 0
 *                       when sh is 0
 *   lsl1x lsr1x         the same with ones shifted in: lsr1 (ra, 32 - sh),
 *                       lsl1 (ra, 32 - sh); all ones when sh is 0
 *   hash                rb's low 4 bits choose a width w = 7 + rb[3:2];
 *                       the xor of ra's w-bit fields 0 and 1, and of
 *                       field 2 when rb[0] is set
 *   sats                ra negative: 0x7fffffff, else 0x80000000 (the
 *                       saturated value of an overflowed result)
 *   lsl_add rc, rb, ra, sh     rc = rb + (ra << sh); lsr_add with >>,
 *   rol_add with a rotation, lsl_sub rc = rb - (ra << sh): the shifted
 *   operand is the third argument, as in the SDK's built_ins.h.
 *
 * The forms: _rrr (rc, ra, rb), _rri (rc, ra, imm), _rrri (rc, rb, ra,
 * shift), _rir (rc, imm, ra), _rr (rc, ra).  The ".s" and ".u" forms
 * (name_s_..., name_u_...) write the 64-bit pair dc with the 32-bit result
 * sign- or zero-extended.  An immediate is, as for the SDK's asm macros, a
 * string literal: "3", "-1", "0x10", "0b101", "017" (octal, as LLVM's
 * assembler reads a leading 0); anything else traps at run time.
 */
static inline uint32_t __dpurt_imm(const char *s)
{
	uint32_t v = 0, base = 10, neg = 0;

	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	} else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
		base = 2;
		s += 2;
	} else if (s[0] == '0' && s[1]) {
		base = 8;
		s++;
	}
	if (!*s)
		__builtin_trap();
	for (; *s; s++) {
		uint32_t d = *s >= '0' && *s <= '9' ? (uint32_t)(*s - '0') :
			     *s >= 'a' && *s <= 'f' ? (uint32_t)(*s - 'a' + 10) :
			     *s >= 'A' && *s <= 'F' ? (uint32_t)(*s - 'A' + 10) : 99;

		if (d >= base)
			__builtin_trap();
		v = v * base + d;
	}
	return neg ? 0U - v : v;
}

static inline uint32_t __dpurt_add(uint32_t a, uint32_t b) { return a + b; }
static inline uint32_t __dpurt_sub(uint32_t a, uint32_t b) { return a - b; }
static inline uint32_t __dpurt_rsub(uint32_t a, uint32_t b) { return b - a; }
static inline uint32_t __dpurt_and(uint32_t a, uint32_t b) { return a & b; }
static inline uint32_t __dpurt_or(uint32_t a, uint32_t b) { return a | b; }
static inline uint32_t __dpurt_xor(uint32_t a, uint32_t b) { return a ^ b; }
static inline uint32_t __dpurt_nand(uint32_t a, uint32_t b) { return ~(a & b); }
static inline uint32_t __dpurt_nor(uint32_t a, uint32_t b) { return ~(a | b); }
static inline uint32_t __dpurt_nxor(uint32_t a, uint32_t b) { return ~(a ^ b); }
static inline uint32_t __dpurt_andn(uint32_t a, uint32_t b) { return ~a & b; }
static inline uint32_t __dpurt_orn(uint32_t a, uint32_t b) { return ~a | b; }
static inline uint32_t __dpurt_lsl(uint32_t a, uint32_t s) { return a << (s & 31); }
static inline uint32_t __dpurt_lsr(uint32_t a, uint32_t s) { return a >> (s & 31); }

static inline uint32_t __dpurt_asr(uint32_t a, uint32_t s)
{
	s &= 31;
	return a & 0x80000000U ? ~(~a >> s) : a >> s;
}

static inline uint32_t __dpurt_rol(uint32_t a, uint32_t s)
{
	s &= 31;
	return s ? a << s | a >> (32 - s) : a;
}

static inline uint32_t __dpurt_ror(uint32_t a, uint32_t s)
{
	s &= 31;
	return s ? a >> s | a << (32 - s) : a;
}

static inline uint32_t __dpurt_lsl1(uint32_t a, uint32_t s)
{
	s &= 31;
	return a << s | ((1U << s) - 1);
}

static inline uint32_t __dpurt_lsr1(uint32_t a, uint32_t s)
{
	s &= 31;
	return a >> s | ~(0xffffffffU >> s);
}

static inline uint32_t __dpurt_lslx(uint32_t a, uint32_t s)
{
	s &= 31;
	return s ? a >> (32 - s) : 0;
}

static inline uint32_t __dpurt_lsrx(uint32_t a, uint32_t s)
{
	s &= 31;
	return s ? a << (32 - s) : 0;
}

static inline uint32_t __dpurt_lsl1x(uint32_t a, uint32_t s)
{
	s &= 31;
	return s ? __dpurt_lsr1(a, 32 - s) : 0xffffffffU;
}

static inline uint32_t __dpurt_lsr1x(uint32_t a, uint32_t s)
{
	s &= 31;
	return s ? __dpurt_lsl1(a, 32 - s) : 0xffffffffU;
}

static inline uint32_t __dpurt_hash(uint32_t a, uint32_t b)
{
	uint32_t w = ((b & 15) >> 2) + 7, mask = (1U << w) - 1;
	uint32_t r = (a & mask) ^ ((a >> w) & mask);

	return b & 1 ? r ^ ((a >> 2 * w) & mask) : r;
}

static inline uint32_t __dpurt_sats(uint32_t a)
{
	return a & 0x80000000U ? 0x7fffffffU : 0x80000000U;
}

static inline uint32_t __dpurt_lsl_add(uint32_t b, uint32_t a, uint32_t s)
{
	return b + __dpurt_lsl(a, s);
}

static inline uint32_t __dpurt_lsr_add(uint32_t b, uint32_t a, uint32_t s)
{
	return b + __dpurt_lsr(a, s);
}

static inline uint32_t __dpurt_rol_add(uint32_t b, uint32_t a, uint32_t s)
{
	return b + __dpurt_rol(a, s);
}

static inline uint32_t __dpurt_lsl_sub(uint32_t b, uint32_t a, uint32_t s)
{
	return b - __dpurt_lsl(a, s);
}

/* 32-bit result r into the pair dc, sign- (.s) or zero-extended (.u). */
#define __DPURT_S(r) ((int64_t)(int32_t)(uint32_t)(r))
#define __DPURT_U(r) ((uint64_t)(uint32_t)(r))
#define __DPURT_IMM(imm) __dpurt_imm("" imm)
#define __DPURT_RRR(fn, ra, rb) fn((uint32_t)(ra), (uint32_t)(rb))
#define __DPURT_RRI(fn, ra, imm) fn((uint32_t)(ra), __DPURT_IMM(imm))
#define __DPURT_RRRI(fn, rb, ra, sh) fn((uint32_t)(rb), (uint32_t)(ra), __DPURT_IMM(sh))

#define __builtin_add_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_add, ra, rb))
#define __builtin_add_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_add, ra, rb)))
#define __builtin_add_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_add, ra, rb)))
#define __builtin_sub_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_sub, ra, rb))
#define __builtin_sub_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_sub, ra, rb)))
#define __builtin_sub_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_sub, ra, rb)))
#define __builtin_rsub_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_rsub, ra, rb))
#define __builtin_rsub_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_rsub, ra, rb)))
#define __builtin_rsub_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_rsub, ra, rb)))
#define __builtin_and_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_and, ra, rb))
#define __builtin_and_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_and, ra, rb)))
#define __builtin_and_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_and, ra, rb)))
#define __builtin_or_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_or, ra, rb))
#define __builtin_or_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_or, ra, rb)))
#define __builtin_or_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_or, ra, rb)))
#define __builtin_xor_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_xor, ra, rb))
#define __builtin_xor_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_xor, ra, rb)))
#define __builtin_xor_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_xor, ra, rb)))
#define __builtin_nand_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_nand, ra, rb))
#define __builtin_nand_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_nand, ra, rb)))
#define __builtin_nand_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_nand, ra, rb)))
#define __builtin_nor_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_nor, ra, rb))
#define __builtin_nor_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_nor, ra, rb)))
#define __builtin_nor_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_nor, ra, rb)))
#define __builtin_nxor_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_nxor, ra, rb))
#define __builtin_nxor_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_nxor, ra, rb)))
#define __builtin_nxor_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_nxor, ra, rb)))
#define __builtin_andn_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_andn, ra, rb))
#define __builtin_andn_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_andn, ra, rb)))
#define __builtin_andn_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_andn, ra, rb)))
#define __builtin_orn_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_orn, ra, rb))
#define __builtin_orn_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_orn, ra, rb)))
#define __builtin_orn_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_orn, ra, rb)))
#define __builtin_lsl_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_lsl, ra, rb))
#define __builtin_lsl_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_lsl, ra, rb)))
#define __builtin_lsl_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_lsl, ra, rb)))
#define __builtin_lsr_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_lsr, ra, rb))
#define __builtin_lsr_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_lsr, ra, rb)))
#define __builtin_lsr_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_lsr, ra, rb)))
#define __builtin_asr_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_asr, ra, rb))
#define __builtin_asr_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_asr, ra, rb)))
#define __builtin_asr_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_asr, ra, rb)))
#define __builtin_rol_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_rol, ra, rb))
#define __builtin_rol_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_rol, ra, rb)))
#define __builtin_rol_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_rol, ra, rb)))
#define __builtin_ror_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_ror, ra, rb))
#define __builtin_ror_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_ror, ra, rb)))
#define __builtin_ror_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_ror, ra, rb)))
#define __builtin_lsl1_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_lsl1, ra, rb))
#define __builtin_lsl1_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_lsl1, ra, rb)))
#define __builtin_lsl1_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_lsl1, ra, rb)))
#define __builtin_lsr1_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_lsr1, ra, rb))
#define __builtin_lsr1_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_lsr1, ra, rb)))
#define __builtin_lsr1_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_lsr1, ra, rb)))
#define __builtin_lslx_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_lslx, ra, rb))
#define __builtin_lslx_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_lslx, ra, rb)))
#define __builtin_lslx_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_lslx, ra, rb)))
#define __builtin_lsrx_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_lsrx, ra, rb))
#define __builtin_lsrx_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_lsrx, ra, rb)))
#define __builtin_lsrx_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_lsrx, ra, rb)))
#define __builtin_lsl1x_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_lsl1x, ra, rb))
#define __builtin_lsl1x_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_lsl1x, ra, rb)))
#define __builtin_lsl1x_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_lsl1x, ra, rb)))
#define __builtin_lsr1x_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_lsr1x, ra, rb))
#define __builtin_lsr1x_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_lsr1x, ra, rb)))
#define __builtin_lsr1x_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_lsr1x, ra, rb)))
#define __builtin_hash_rrr(rc, ra, rb) ((rc) = __DPURT_RRR(__dpurt_hash, ra, rb))
#define __builtin_hash_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_RRR(__dpurt_hash, ra, rb)))
#define __builtin_hash_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_RRR(__dpurt_hash, ra, rb)))

#define __builtin_add_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_add, ra, imm))
#define __builtin_add_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_add, rb, imm)))
#define __builtin_add_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_add, rb, imm)))
#define __builtin_and_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_and, ra, imm))
#define __builtin_and_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_and, rb, imm)))
#define __builtin_and_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_and, rb, imm)))
#define __builtin_or_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_or, ra, imm))
#define __builtin_or_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_or, rb, imm)))
#define __builtin_or_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_or, rb, imm)))
#define __builtin_xor_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_xor, ra, imm))
#define __builtin_lsl_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_lsl, ra, imm))
#define __builtin_lsl_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_lsl, rb, imm)))
#define __builtin_lsl_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_lsl, rb, imm)))
#define __builtin_lsr_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_lsr, ra, imm))
#define __builtin_lsr_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_lsr, rb, imm)))
#define __builtin_lsr_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_lsr, rb, imm)))
#define __builtin_asr_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_asr, ra, imm))
#define __builtin_asr_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_asr, rb, imm)))
#define __builtin_asr_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_asr, rb, imm)))
#define __builtin_rol_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_rol, ra, imm))
#define __builtin_rol_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_rol, rb, imm)))
#define __builtin_rol_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_rol, rb, imm)))
#define __builtin_ror_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_ror, ra, imm))
#define __builtin_ror_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_ror, rb, imm)))
#define __builtin_ror_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_ror, rb, imm)))
#define __builtin_lsl1_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_lsl1, ra, imm))
#define __builtin_lsl1_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_lsl1, rb, imm)))
#define __builtin_lsl1_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_lsl1, rb, imm)))
#define __builtin_lsr1_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_lsr1, ra, imm))
#define __builtin_lsr1_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_lsr1, rb, imm)))
#define __builtin_lsr1_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_lsr1, rb, imm)))
#define __builtin_lslx_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_lslx, ra, imm))
#define __builtin_lslx_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_lslx, rb, imm)))
#define __builtin_lslx_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_lslx, rb, imm)))
#define __builtin_lsrx_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_lsrx, ra, imm))
#define __builtin_lsrx_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_lsrx, rb, imm)))
#define __builtin_lsrx_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_lsrx, rb, imm)))
#define __builtin_lsl1x_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_lsl1x, ra, imm))
#define __builtin_lsl1x_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_lsl1x, rb, imm)))
#define __builtin_lsl1x_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_lsl1x, rb, imm)))
#define __builtin_lsr1x_rri(rc, ra, imm) ((rc) = __DPURT_RRI(__dpurt_lsr1x, ra, imm))
#define __builtin_lsr1x_s_rri(dc, rb, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_lsr1x, rb, imm)))
#define __builtin_lsr1x_u_rri(dc, rb, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_lsr1x, rb, imm)))

#define __builtin_lsl_add_rrri(rc, rb, ra, shift) ((rc) = __DPURT_RRRI(__dpurt_lsl_add, rb, ra, shift))
#define __builtin_lsl_add_s_rrri(dc, rb, ra, shift) \
	((dc) = __DPURT_S(__DPURT_RRRI(__dpurt_lsl_add, rb, ra, shift)))
#define __builtin_lsl_add_u_rrri(dc, rb, ra, shift) \
	((dc) = __DPURT_U(__DPURT_RRRI(__dpurt_lsl_add, rb, ra, shift)))
#define __builtin_lsr_add_rrri(rc, rb, ra, shift) ((rc) = __DPURT_RRRI(__dpurt_lsr_add, rb, ra, shift))
#define __builtin_lsr_add_s_rrri(dc, rb, ra, shift) \
	((dc) = __DPURT_S(__DPURT_RRRI(__dpurt_lsr_add, rb, ra, shift)))
#define __builtin_lsr_add_u_rrri(dc, rb, ra, shift) \
	((dc) = __DPURT_U(__DPURT_RRRI(__dpurt_lsr_add, rb, ra, shift)))
#define __builtin_rol_add_rrri(rc, rb, ra, shift) ((rc) = __DPURT_RRRI(__dpurt_rol_add, rb, ra, shift))
#define __builtin_rol_add_s_rrri(dc, rb, ra, shift) \
	((dc) = __DPURT_S(__DPURT_RRRI(__dpurt_rol_add, rb, ra, shift)))
#define __builtin_rol_add_u_rrri(dc, rb, ra, shift) \
	((dc) = __DPURT_U(__DPURT_RRRI(__dpurt_rol_add, rb, ra, shift)))
#define __builtin_lsl_sub_rrri(rc, rb, ra, shift) ((rc) = __DPURT_RRRI(__dpurt_lsl_sub, rb, ra, shift))
#define __builtin_lsl_sub_s_rrri(dc, rb, ra, shift) \
	((dc) = __DPURT_S(__DPURT_RRRI(__dpurt_lsl_sub, rb, ra, shift)))
#define __builtin_lsl_sub_u_rrri(dc, rb, ra, shift) \
	((dc) = __DPURT_U(__DPURT_RRRI(__dpurt_lsl_sub, rb, ra, shift)))

#define __builtin_sub_rir(rc, imm, ra) ((rc) = __dpurt_sub(__DPURT_IMM(imm), (uint32_t)(ra)))
#define __builtin_and_s_rki(dc, ra, imm) ((dc) = __DPURT_S(__DPURT_RRI(__dpurt_and, ra, imm)))
#define __builtin_and_u_rki(dc, ra, imm) ((dc) = __DPURT_U(__DPURT_RRI(__dpurt_and, ra, imm)))

#define __builtin_sats_rr(rc, ra) ((rc) = __dpurt_sats((uint32_t)(ra)))
#define __builtin_sats_s_rr(dc, ra) ((dc) = __DPURT_S(__dpurt_sats((uint32_t)(ra))))
#define __builtin_sats_u_rr(dc, ra) ((dc) = __DPURT_U(__dpurt_sats((uint32_t)(ra))))

/* The .s / .u forms of the multiplies, counts, extensions and cmpb4. */
#define __builtin_mul_sh_sh_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_MUL_SS((ra), 1, (rb), 1)))
#define __builtin_mul_sh_sl_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_MUL_SS((ra), 1, (rb), 0)))
#define __builtin_mul_sl_sh_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_MUL_SS((ra), 0, (rb), 1)))
#define __builtin_mul_sl_sl_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_MUL_SS((ra), 0, (rb), 0)))
#define __builtin_mul_sh_uh_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_MUL_SU((ra), 1, (rb), 1)))
#define __builtin_mul_sh_ul_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_MUL_SU((ra), 1, (rb), 0)))
#define __builtin_mul_sl_uh_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_MUL_SU((ra), 0, (rb), 1)))
#define __builtin_mul_sl_ul_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__DPURT_MUL_SU((ra), 0, (rb), 0)))
#define __builtin_mul_uh_uh_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_MUL_UU((ra), 1, (rb), 1)))
#define __builtin_mul_uh_ul_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_MUL_UU((ra), 1, (rb), 0)))
#define __builtin_mul_ul_uh_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_MUL_UU((ra), 0, (rb), 1)))
#define __builtin_mul_ul_ul_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__DPURT_MUL_UU((ra), 0, (rb), 0)))
#define __builtin_cao_s_rr(dc, ra) ((dc) = __DPURT_S(__builtin_popcount((uint32_t)(ra))))
#define __builtin_cao_u_rr(dc, ra) ((dc) = __DPURT_U(__builtin_popcount((uint32_t)(ra))))
#define __builtin_clz_s_rr(dc, ra) ((dc) = __DPURT_S(__dpurt_clz((uint32_t)(ra))))
#define __builtin_clz_u_rr(dc, ra) ((dc) = __DPURT_U(__dpurt_clz((uint32_t)(ra))))
#define __builtin_clo_s_rr(dc, ra) ((dc) = __DPURT_S(__dpurt_clz(~(uint32_t)(ra))))
#define __builtin_clo_u_rr(dc, ra) ((dc) = __DPURT_U(__dpurt_clz(~(uint32_t)(ra))))
#define __builtin_cls_s_rr(dc, ra) ((dc) = __DPURT_S(__dpurt_cls((uint32_t)(ra))))
#define __builtin_cls_u_rr(dc, ra) ((dc) = __DPURT_U(__dpurt_cls((uint32_t)(ra))))
#define __builtin_extsb_s_rr(dc, ra) ((dc) = (int64_t)(int8_t)(uint8_t)(uint32_t)(ra))
#define __builtin_extsh_s_rr(dc, ra) ((dc) = (int64_t)(int16_t)(uint16_t)(uint32_t)(ra))
#define __builtin_extub_u_rr(dc, ra) ((dc) = (uint64_t)(uint8_t)(uint32_t)(ra))
#define __builtin_extuh_u_rr(dc, ra) ((dc) = (uint64_t)(uint16_t)(uint32_t)(ra))
#define __builtin_cmpb4_s_rrr(dc, ra, rb) ((dc) = __DPURT_S(__dpurt_cmpb4((uint32_t)(ra), (uint32_t)(rb))))
#define __builtin_cmpb4_u_rrr(dc, ra, rb) ((dc) = __DPURT_U(__dpurt_cmpb4((uint32_t)(ra), (uint32_t)(rb))))

/*
 * The _rrif and _rirf forms: the instruction with the condition "false",
 * which never jumps (the SDK's false_cc argument, a string literal, is
 * not otherwise used), its immediate a signed 24-bit field (sext_24_32 in
 * UPMEM's QEMU): rc = ra OP imm, or for sub_rirf rc = imm - ra.
 */
static inline uint32_t __dpurt_imm24(uint32_t v)
{
	v &= 0xffffffU;
	return v & 0x800000U ? v | 0xff000000U : v;
}

#define __DPURT_RRIF(fn, ra, imm, cc) \
	((void)("" cc), fn((uint32_t)(ra), __dpurt_imm24(__DPURT_IMM(imm))))
#define __DPURT_RIRF(imm, ra, cc) \
	((void)("" cc), __dpurt_sub(__dpurt_imm24(__DPURT_IMM(imm)), (uint32_t)(ra)))

#define __builtin_add_rrif(rc, ra, imm, false_cc) ((rc) = __DPURT_RRIF(__dpurt_add, ra, imm, false_cc))
#define __builtin_add_s_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_S(__DPURT_RRIF(__dpurt_add, ra, imm, false_cc)))
#define __builtin_add_u_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_U(__DPURT_RRIF(__dpurt_add, ra, imm, false_cc)))
#define __builtin_sub_rrif(rc, ra, imm, false_cc) ((rc) = __DPURT_RRIF(__dpurt_sub, ra, imm, false_cc))
#define __builtin_sub_s_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_S(__DPURT_RRIF(__dpurt_sub, ra, imm, false_cc)))
#define __builtin_sub_u_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_U(__DPURT_RRIF(__dpurt_sub, ra, imm, false_cc)))
#define __builtin_and_rrif(rc, ra, imm, false_cc) ((rc) = __DPURT_RRIF(__dpurt_and, ra, imm, false_cc))
#define __builtin_and_s_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_S(__DPURT_RRIF(__dpurt_and, ra, imm, false_cc)))
#define __builtin_and_u_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_U(__DPURT_RRIF(__dpurt_and, ra, imm, false_cc)))
#define __builtin_or_rrif(rc, ra, imm, false_cc) ((rc) = __DPURT_RRIF(__dpurt_or, ra, imm, false_cc))
#define __builtin_or_s_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_S(__DPURT_RRIF(__dpurt_or, ra, imm, false_cc)))
#define __builtin_or_u_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_U(__DPURT_RRIF(__dpurt_or, ra, imm, false_cc)))
#define __builtin_xor_rrif(rc, ra, imm, false_cc) ((rc) = __DPURT_RRIF(__dpurt_xor, ra, imm, false_cc))
#define __builtin_xor_s_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_S(__DPURT_RRIF(__dpurt_xor, ra, imm, false_cc)))
#define __builtin_xor_u_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_U(__DPURT_RRIF(__dpurt_xor, ra, imm, false_cc)))
#define __builtin_nand_rrif(rc, ra, imm, false_cc) ((rc) = __DPURT_RRIF(__dpurt_nand, ra, imm, false_cc))
#define __builtin_nand_s_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_S(__DPURT_RRIF(__dpurt_nand, ra, imm, false_cc)))
#define __builtin_nand_u_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_U(__DPURT_RRIF(__dpurt_nand, ra, imm, false_cc)))
#define __builtin_nor_rrif(rc, ra, imm, false_cc) ((rc) = __DPURT_RRIF(__dpurt_nor, ra, imm, false_cc))
#define __builtin_nor_s_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_S(__DPURT_RRIF(__dpurt_nor, ra, imm, false_cc)))
#define __builtin_nor_u_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_U(__DPURT_RRIF(__dpurt_nor, ra, imm, false_cc)))
#define __builtin_nxor_rrif(rc, ra, imm, false_cc) ((rc) = __DPURT_RRIF(__dpurt_nxor, ra, imm, false_cc))
#define __builtin_nxor_s_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_S(__DPURT_RRIF(__dpurt_nxor, ra, imm, false_cc)))
#define __builtin_nxor_u_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_U(__DPURT_RRIF(__dpurt_nxor, ra, imm, false_cc)))
#define __builtin_andn_rrif(rc, ra, imm, false_cc) ((rc) = __DPURT_RRIF(__dpurt_andn, ra, imm, false_cc))
#define __builtin_andn_s_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_S(__DPURT_RRIF(__dpurt_andn, ra, imm, false_cc)))
#define __builtin_andn_u_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_U(__DPURT_RRIF(__dpurt_andn, ra, imm, false_cc)))
#define __builtin_orn_rrif(rc, ra, imm, false_cc) ((rc) = __DPURT_RRIF(__dpurt_orn, ra, imm, false_cc))
#define __builtin_orn_s_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_S(__DPURT_RRIF(__dpurt_orn, ra, imm, false_cc)))
#define __builtin_orn_u_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_U(__DPURT_RRIF(__dpurt_orn, ra, imm, false_cc)))
#define __builtin_hash_rrif(rc, ra, imm, false_cc) ((rc) = __DPURT_RRIF(__dpurt_hash, ra, imm, false_cc))
#define __builtin_hash_s_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_S(__DPURT_RRIF(__dpurt_hash, ra, imm, false_cc)))
#define __builtin_hash_u_rrif(dc, ra, imm, false_cc) \
	((dc) = __DPURT_U(__DPURT_RRIF(__dpurt_hash, ra, imm, false_cc)))
#define __builtin_sub_rirf(rc, imm, ra, false_cc) ((rc) = __DPURT_RIRF(imm, ra, false_cc))
#define __builtin_sub_s_rirf(dc, imm, ra, false_cc) ((dc) = __DPURT_S(__DPURT_RIRF(imm, ra, false_cc)))
#define __builtin_sub_u_rirf(dc, imm, ra, false_cc) ((dc) = __DPURT_U(__DPURT_RIRF(imm, ra, false_cc)))

#endif /* DPUSYSCORE_BUILT_INS_H */
