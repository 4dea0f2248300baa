/* SPDX-License-Identifier: MIT */
/*
 * profiling_internals.h - the profiling context of profiling.h (UPMEM SDK
 * names, dpu-rt's syslib/profiling_internals.h): per tasklet, the time a
 * section started (PROFILING_RESET_VALUE when not in it) and the time spent
 * in it.  NR_THREADS is the program's NR_TASKLETS.
 */
#ifndef DPUSYSCORE_PROFILING_INTERNALS_H
#define DPUSYSCORE_PROFILING_INTERNALS_H

#include <stdint.h>
#include <defs.h>

#ifndef NR_THREADS
#ifdef DPU_NR_THREADS
#define NR_THREADS DPU_NR_THREADS
#else
#define NR_THREADS NR_TASKLETS
#endif
#endif

typedef struct {
	uint32_t start[NR_THREADS];
	uint32_t count[NR_THREADS];
} dpu_profiling_t;

#endif /* DPUSYSCORE_PROFILING_INTERNALS_H */
