/* SPDX-License-Identifier: MIT */
/*
 * Profile strings of dpu_alloc / dpu_alloc_ranks.
 *
 * Syntax: items separated by ',' or '&'; each item is key=value; spaces and
 * tabs around keys and values are ignored; empty items (",,", a trailing
 * ',') are ignored; a later key overrides an earlier one. Keys are
 * case-sensitive; an unknown key is an error.
 *
 *   sgXferEnable=BOOL            allow dpu_push_sg_xfer (default false)
 *   sgXferMaxBlocksPerDpu=N      blocks per DPU per sg transfer, 1..2^32-1
 *                                (default: DPUs in the set); needs
 *                                sgXferEnable=true (final value)
 *   backend=hw|simulator         accepted for UPMEM code; both mean dpusim
 *   dpusimStrictDma=BOOL         (dpusim's own key, default false) fault the
 *                                DPU on an mram_read/mram_write outside the
 *                                SDK's rules (size 8..2048 and a multiple of
 *                                8, MRAM and WRAM addresses 8-byte aligned),
 *                                naming the call and the value. By default
 *                                such a request does what the DPU's DMA
 *                                engine does: the addresses' low 3 bits are
 *                                ignored and (((size >> 3) - 1) & 0xff) + 1
 *                                8-byte words move (a size below 8 moves
 *                                2048 bytes, 12 moves 8), as on the machine
 *                                (lib/dpurt/mram.c)
 *   dpusimDpuModel=v1A|v1B       (dpusim's own key, default v1A) the DPU
 *                                model the modeled time is of (README,
 *                                "Modeled hardware time"): v1A 350 MHz,
 *                                24 tasklets, 64 KiB WRAM; v1B 400 MHz,
 *                                16 tasklets, 62 KiB WRAM.  dpu_load
 *                                refuses a program the model cannot run
 *                                and sets CLOCKS_PER_SEC to its clock
 *
 * BOOL is true or false (any case), or 1 or 0.
 * N is decimal digits only: no sign, no 0x, no trailing characters.
 */
#ifndef DPUSIM_LIB_PROFILE_H
#define DPUSIM_LIB_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dpu_error.h>

struct dpusim_profile {
	bool sg_enabled;
	bool sg_max_blocks_set;		/* sgXferMaxBlocksPerDpu was given */
	uint32_t sg_max_blocks_per_dpu;	/* valid if sg_max_blocks_set */
	bool strict_dma;		/* dpusimStrictDma */
	bool dpu_v1b;			/* dpusimDpuModel=v1B */
};

/*
 * Parse s (NULL or "" = defaults) into *out. Pure: no output, no global
 * state. On error returns DPU_ERR_INVALID_PROFILE, leaves *out at the
 * defaults and writes a one-line reason (no "dpusim: " prefix) into
 * errbuf, e.g. "unknown key 'foo'". errbuf may be NULL.
 */
dpu_error_t dpusim_profile_parse(const char *s, struct dpusim_profile *out,
				 char *errbuf, size_t errlen);

#endif /* DPUSIM_LIB_PROFILE_H */
