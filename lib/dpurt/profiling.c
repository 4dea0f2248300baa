// SPDX-License-Identifier: MIT
/*
 * profiling.c - profiling_start/profiling_stop of profiling.h built with
 * DPU_PROFILING: the tasklet's slots of its context, timed with the time
 * register's value (the perfcounter / 16, 32 bits, as the SDK reads it).
 */
#include "dpurt.h"

#include <perfcounter.h>
#include <profiling.h>

static uint32_t time_register(void)
{
	return (uint32_t)(perfcounter_get() >> 4);
}

static __attribute__((noreturn)) void profiling_fault(const char *what)
{
	struct dpurt_msg m = { .len = 0 };

	dpurt_msg_str(&m, what);
	dpurt_msg_tasklet(&m);
	dpurt_fault(m.buf);
}

void __dpurt_profiling_start(uint32_t *start)
{
	if (*start != PROFILING_RESET_VALUE)
		profiling_fault("profiling_start: section already started");
	*start = time_register();
}

void __dpurt_profiling_stop(uint32_t *start, uint32_t *count)
{
	if (*start == PROFILING_RESET_VALUE)
		profiling_fault("profiling_stop: section not started");
	*count += time_register() - *start;
	*start = PROFILING_RESET_VALUE;
}
