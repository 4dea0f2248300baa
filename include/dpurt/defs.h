/* SPDX-License-Identifier: MIT */
/*
 * defs.h - me(), halt(), NR_TASKLETS for DPU programs built by dpusim-cc.
 *
 * NR_TASKLETS comes from -DNR_TASKLETS=N on the dpusim-cc command line (the
 * same number is recorded in the program, so the worker runs N threads of
 * main); 1 when not given.
 */
#ifndef DPUSYSCORE_DEFS_H
#define DPUSYSCORE_DEFS_H

#include <sysdef.h>
#include <macro_utils.h>
#include <attributes.h>

#ifndef NR_TASKLETS
#define NR_TASKLETS 1
#endif

#ifdef __cplusplus
extern "C" {
#endif

extern __thread unsigned int __dpurt_tasklet_id;
__NO_RETURN void __dpurt_halt(void);

/* The current tasklet: 0 .. NR_TASKLETS - 1. */
static inline sysname_t me(void)
{
	return __dpurt_tasklet_id;
}

/*
 * Stops the DPU: the run ends as if every tasklet had returned (the DPU is
 * DONE, not FAULT).
 */
__NO_RETURN static inline void halt(void)
{
	__dpurt_halt();
}

/* Unused 32-bit words of the tasklet's stack (stacks are host threads' here). */
int check_stack(void);

#ifdef __cplusplus
}
#endif

#endif /* DPUSYSCORE_DEFS_H */
