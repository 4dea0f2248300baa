/* SPDX-License-Identifier: MIT */
/*
 * profiling.h - code section profiling, the DPU side of dpu-profiling's
 * "sections" mode (UPMEM SDK names and behaviour, dpu-rt's
 * syslib/profiling.h and profiling.c).
 *
 *     PROFILING_INIT(loop);            // a global context named loop
 *     profiling_start(&loop); ... profiling_stop(&loop);
 *
 * Without DPU_PROFILING defined (the usual build), profiling_start and
 * profiling_stop do nothing, as in the SDK.  With -DDPU_PROFILING they
 * count, per tasklet, the time spent between them in loop.count[me()], in
 * the units of the DPU's time register (perfcounter_get() / 16: modeled
 * DPU cycles, or the host's time without the model, see perfcounter.h);
 * starting a section twice or stopping one not started faults the
 * DPU, as in the SDK.  The context is an ordinary WRAM global, so the host
 * reads it by name (dpu_copy_from(dpu, "loop", ...)); there is no
 * dpu-profiling tool to collect it.
 */
#ifndef DPUSYSCORE_PROFILING_H
#define DPUSYSCORE_PROFILING_H

#include <attributes.h>
#include <defs.h>
#include <limits.h>
#include <stdint.h>
#include <profiling_internals.h>

#define PROFILING_RESET_VALUE (UINT32_MAX)

/* In the program's WRAM data (dpusim-cc moves .data.* there). */
#define PROFILING_INIT(_name)                                                   \
	__section(".data.dpu_profiling") dpu_profiling_t _name = {              \
		.start = { [0 ...(NR_THREADS - 1)] = PROFILING_RESET_VALUE },   \
		.count = { [0 ...(NR_THREADS - 1)] = 0 },                       \
	}

#ifdef DPU_PROFILING
#ifdef __cplusplus
extern "C" {
#endif
void __dpurt_profiling_start(uint32_t *start);
void __dpurt_profiling_stop(uint32_t *start, uint32_t *count);
#ifdef __cplusplus
}
#endif

static inline void profiling_start(dpu_profiling_t *context)
{
	__dpurt_profiling_start(&context->start[me()]);
}

static inline void profiling_stop(dpu_profiling_t *context)
{
	__dpurt_profiling_stop(&context->start[me()], &context->count[me()]);
}
#else
#define profiling_start(context) \
	do {                     \
	} while (0)
#define profiling_stop(context) \
	do {                    \
	} while (0)
#endif /* DPU_PROFILING */

#endif /* DPUSYSCORE_PROFILING_H */
