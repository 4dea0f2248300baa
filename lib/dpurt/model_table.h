/* SPDX-License-Identifier: MIT */
/*
 * model_table.h - every number of the modeled DPU time, with its source.
 * Read by the runtime (model.c, C) and by dpusim-cc's compiler plugin
 * (tools/dpu-model-plugin.cc, C++), so that the instruction costs the
 * plugin counts and the times the runtime turns them into come from one
 * place.
 *
 * Sources (tools/model/SOURCES.md quotes each):
 *  [SDK]   UPMEM SDK documentation, "DPU chip characteristics" table.
 *  [HC31]  UPMEM's Hot Chips 31 (2019) talk as AnandTech reported it:
 *          14-stage interleaved pipeline, 11 threads for full use,
 *          1 instruction a cycle.
 *  [uPIM]  uPIMulator (Hyun et al., HPCA 2024) defaults: 11-cycle
 *          revolver scheduling; a DMA blocks its thread.
 *  [PrIMn] PrIM's observations as restated in lecture notes (secondary):
 *          native 32/64-bit add/sub, multiply/divide/float emulated,
 *          multiply and divide "at most bit-width" steps; MRAM latency
 *          alpha + beta * size, 2 bytes a cycle at most.
 *  [est]   not found in any source reachable when this was written: an
 *          estimate from the operation's software sequence, to be
 *          calibrated (tools/bench/run --bench model prints the figures
 *          it leads to).
 */
#ifndef DPURT_MODEL_TABLE_H
#define DPURT_MODEL_TABLE_H

/* ---- instruction costs (counted by the plugin, per GIMPLE operation) ---- */

/* 32-bit add, sub, logic, shift, compare, move, WRAM load or store [PrIMn] */
#define DPU_COST_OP32		1
/* 64-bit add/sub/logic/compare: a pair (addc/subc) [PrIMn; est for logic] */
#define DPU_COST_OP64		2
/* 64-bit shift by a variable amount: a short sequence [est] */
#define DPU_COST_SHIFT64	4
/* 32-bit multiply: mul_step, one per significant bit of the smaller
 * operand (counted as the program runs), and the steps around them
 * [PrIMn "at most bit-width"; the set-up est] */
#define DPU_COST_MUL32		32	/* the most: 32 bits */
#define DPU_COST_MUL32_BASE	4
/* 8-bit multiply: one of the native 8x8 multiply instructions [PrIMn
 * "no 32-bit multiplier"; the ISA's mul_ul_ul] */
#define DPU_COST_MUL8		1
/* 16-bit multiply: four 8x8 products and their adds [est] */
#define DPU_COST_MUL16		8
/* 64-bit multiply: three 32-bit products and adds [est] */
#define DPU_COST_MUL64		100
/* 32-bit divide or remainder: div_step, one per bit [PrIMn] */
#define DPU_COST_DIV32		32
/* 64-bit divide or remainder: a software loop [est] */
#define DPU_COST_DIV64		200
/* float add/sub/compare/convert, emulated in software [est] */
#define DPU_COST_FADD32		40
/* float multiply [est] */
#define DPU_COST_FMUL32		60
/* float divide [est] */
#define DPU_COST_FDIV32		150
/* double add/sub/compare/convert [est] */
#define DPU_COST_FADD64		60
/* double multiply [est] */
#define DPU_COST_FMUL64		120
/* double divide [est] */
#define DPU_COST_FDIV64		300
/* a branch, a call's jump and return [est: one instruction each] */
#define DPU_COST_BRANCH		1
#define DPU_COST_CALL		2

/* ---- the pipeline (the runtime's model.c) ------------------------------ */

/* a tasklet issues at most once every 11 cycles [HC31, uPIM] */
#define DPU_ISSUE_INTERVAL	11
/* the DPU issues at most one instruction a cycle [HC31] */
/* MRAM DMA: fixed latency in cycles, and cycles per byte, of one
 * mram_read or mram_write; the per-byte part is the engine's (one DMA at a
 * time), the latency overlaps with other tasklets' DMAs [PrIMn form
 * alpha + beta * size; 0.5 cycle a byte is the 2 bytes a cycle ceiling;
 * alpha est] */
#define DPU_DMA_LATENCY		77
#define DPU_DMA_CYCLES_PER_8B	4
/* instructions of a runtime call the plugin does not see: a DMA's ldma/
 * sdma and its address set-up, a barrier, a mutex operation [est] */
#define DPU_COST_DMA_ISSUE	4
#define DPU_COST_SYNC		4
/* mutex_lock and mutex_unlock: one acquire or release each, inline; a
 * taken mutex's acquire jumps to itself [SDK syslib mutex.h] */
#define DPU_COST_MUTEX		1
/* a launch as the host times it (dpu_launch, synchronous): the DPUs'
 * boot and the host's polling, added to the run's last cycle [fit:
 * the intercept of kernel time against work in uPIMulator's real-hardware
 * PrIM runs, tools/model/validate-prim] */
#define DPU_LAUNCH_CYCLES	70000

/* ---- the DPU models [SDK] --------------------------------------------- */

#define DPU_V1A_HZ		350000000u
#define DPU_V1A_TASKLETS	24
#define DPU_V1B_HZ		400000000u
#define DPU_V1B_TASKLETS	16

#endif
