/* SPDX-License-Identifier: MIT */
/*
 * built_ins.h - the DPU compiler's builtins that have a meaning on the host.
 */
#ifndef DPUSYSCORE_BUILT_INS_H
#define DPUSYSCORE_BUILT_INS_H

#include <defs.h>
#include <string.h>

#define __builtin_dpu_tid() me()
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
 * clz its leading zeros, clo its leading ones, cls its leading bits equal
 * to the sign bit (the sign bit included: cls of 0 and of -1 is 32); clz
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
	return __dpurt_clz(r & 0x80000000U ? ~r : r);
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

#endif /* DPUSYSCORE_BUILT_INS_H */
