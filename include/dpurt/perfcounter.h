/* SPDX-License-Identifier: MIT */
/*
 * perfcounter.h - the DPU's performance counter (UPMEM SDK 2023.2 names).
 *
 * Modeled (a program built by dpusim-cc, the default): the counter reads
 * the DPU's modeled time since it was last reset (or the launch began):
 * COUNT_CYCLES the calling tasklet's modeled cycle, COUNT_INSTRUCTIONS the
 * DPU's modeled instructions (README, "Modeled hardware time"; the model:
 * lib/dpurt/model.c).  The same program and input give the same figures
 * on any host.
 *
 * Without the model (dpusim-cc -fno-dpu-model): the time elapsed on the
 * host's monotonic clock, as cycles of a 350 MHz DPU clock
 * (CLOCKS_PER_SEC = 350000000); COUNT_INSTRUCTIONS counts the same cycles.
 *
 * One counter per DPU, shared by its tasklets, as on hardware;
 * COUNT_NOTHING freezes it.
 */
#ifndef DPUSYSCORE_PERFCOUNTER_H
#define DPUSYSCORE_PERFCOUNTER_H

#include <stdint.h>
#include <stdbool.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t perfcounter_t;

typedef enum _perfcounter_config_t {
	COUNT_SAME = 0,
	COUNT_CYCLES = 1,
	COUNT_INSTRUCTIONS = 2,
	COUNT_NOTHING = 3,
	COUNT_DISABLE_BOTH = 6,
	COUNT_ENABLE_BOTH = 7,
} perfcounter_config_t;

#define DPURT_CLOCK_HZ 350000000u

/*
 * As in the SDK, CLOCKS_PER_SEC is a variable of the DPU (in its WRAM, so
 * that the host reads it by name: dpu_copy_from(dpu, "CLOCKS_PER_SEC",
 * 0, &hz, 4)), not a macro: the DPU's clock rate, 350000000 here.  The
 * C library's macro of <time.h> (included above, so that a later include
 * changes nothing) is removed.
 */
#undef CLOCKS_PER_SEC
extern const volatile uint32_t CLOCKS_PER_SEC;

perfcounter_t perfcounter_get(void);
perfcounter_t perfcounter_config(perfcounter_config_t config, bool reset_value);

typedef struct {
	perfcounter_t cycles;
	perfcounter_t instr;
} perfcounter_pair_t;

perfcounter_pair_t perfcounter_get_both(bool should_reset);

#ifdef __cplusplus
}
#endif

#endif /* DPUSYSCORE_PERFCOUNTER_H */
