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

#endif /* DPUSYSCORE_BUILT_INS_H */
