// SPDX-License-Identifier: MIT
/*
 * perfcounter.c - the simulated performance counter: nanoseconds of the
 * host's CLOCK_MONOTONIC since the last reset (or the launch), as cycles
 * of a 350 MHz DPU (x 0.35).  One counter per DPU.
 */
#include "dpurt.h"

#include <time.h>

#include <perfcounter.h>

/*
 * In the DPU's WRAM (dpu.ld keeps .dpu_wram.rt.*), so that every DPU has it
 * and the host finds it by name, as in the SDK.  Its own section: a const
 * object cannot share one with writable runtime data.
 */
__attribute__((section(".dpu_wram.rt.clocks"), used))
const volatile uint32_t CLOCKS_PER_SEC = DPURT_CLOCK_HZ;

static _Atomic uint64_t base_ns;
static _Atomic uint64_t frozen;      /* COUNT_NOTHING: the value kept */
static _Atomic int mode = COUNT_CYCLES;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t cycles(uint64_t ns)
{
	/* 350 MHz: 0.35 cycles per ns */
	return ns / 20 * 7 + ns % 20 * 7 / 20;
}

void dpurt_perf_reset(void)
{
	atomic_store(&base_ns, now_ns());
	atomic_store(&frozen, 0);
	atomic_store(&mode, COUNT_CYCLES);
}

perfcounter_t perfcounter_get(void)
{
	uint64_t now, base;

	if (atomic_load(&mode) == COUNT_NOTHING)
		return atomic_load(&frozen);
	now = now_ns();
	base = atomic_load(&base_ns);
	return now > base ? cycles(now - base) : 0;
}

perfcounter_t perfcounter_config(perfcounter_config_t config, bool reset_value)
{
	perfcounter_t old = perfcounter_get();

	if (config == COUNT_NOTHING)
		atomic_store(&frozen, reset_value ? 0 : old);
	if (reset_value)
		atomic_store(&base_ns, now_ns());
	if (config == COUNT_CYCLES || config == COUNT_INSTRUCTIONS || config == COUNT_ENABLE_BOTH) {
		if (atomic_load(&mode) == COUNT_NOTHING && !reset_value) {
			/* resume from the frozen value */
			uint64_t f = atomic_load(&frozen);

			atomic_store(&base_ns, now_ns() - f * 20 / 7);
		}
		atomic_store(&mode, COUNT_CYCLES);
	} else if (config == COUNT_NOTHING || config == COUNT_DISABLE_BOTH) {
		if (config == COUNT_DISABLE_BOTH)
			atomic_store(&frozen, reset_value ? 0 : old);
		atomic_store(&mode, COUNT_NOTHING);
	}
	return old;
}

perfcounter_pair_t perfcounter_get_both(bool should_reset)
{
	perfcounter_pair_t p;

	p.cycles = perfcounter_get();
	p.instr = p.cycles;
	if (should_reset)
		atomic_store(&base_ns, now_ns());
	return p;
}
