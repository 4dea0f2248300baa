// SPDX-License-Identifier: MIT
/*
 * perfcounter.c - the DPU's time: the performance counter, and the modeled
 * time behind it.
 *
 * A program built by dpusim-cc with its model (the default) counts its
 * instructions as it runs (tools/dpu-model-plugin.cc adds each basic
 * block's count to __dpusim_icount); the runtime hands the running
 * tasklet's count to the pipeline model (model.c) at every DMA, wait and
 * counter read, and the counter reads the model: modeled cycles of the
 * calling tasklet since the last reset, or modeled instructions of the
 * DPU.  The same program and input give the same figures on any host.
 *
 * A program built without it (dpusim-cc -fno-dpu-model, or code the
 * runtime's own tests run) reads the host's CLOCK_MONOTONIC since the last
 * reset as cycles of a 350 MHz DPU (x 0.35), instructions counted as one
 * a cycle.
 *
 * One counter per DPU, shared by its tasklets, as on hardware; one DPU
 * runs at a time in a process (run.c).
 */
#include "dpurt.h"

#include <time.h>

#include <perfcounter.h>

#include "model.h"
#include "model_table.h"

/*
 * In the DPU's WRAM (dpu.ld keeps .dpu_wram.rt.*), so that every DPU has it
 * and the host finds it by name, as in the SDK.  Its own section: a const
 * object cannot share one with writable runtime data.
 */
__attribute__((section(".dpu_wram.rt.clocks"), used))
const volatile uint32_t CLOCKS_PER_SEC = DPURT_CLOCK_HZ;

/*
 * The plugin's counter: instructions of the running tasklet not yet taken.
 * Not thread-local: only the thread running the DPU's tasklets runs
 * instrumented code (run.c), and a plain global costs one host
 * instruction per basic block.
 */
unsigned long long __dpusim_icount;
/* Defined by dpusim-cc in a program it instrumented. */
extern const char __dpusim_model_on __attribute__((weak));

bool dpurt_modeled;
static struct dpurt_model model;

static const struct dpurt_model_params model_params = {
	.issue_interval = DPU_ISSUE_INTERVAL,
	.dma_latency = DPU_DMA_LATENCY,
	.dma_cycles_per_8b = DPU_DMA_CYCLES_PER_8B,
};

static _Atomic uint64_t base_ns;
static _Atomic uint64_t frozen;      /* COUNT_NOTHING: the value kept */
static _Atomic int mode = COUNT_CYCLES;
static uint64_t base_cycle, base_instr;	/* modeled: the last reset */

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

/* ---- the modeled time, for the runtime's other files ------------------ */

void dpurt_time_take(void)
{
	unsigned long long n = __dpusim_icount;

	__dpusim_icount = 0;
	if (dpurt_modeled)
		dpurt_model_compute(&model, __dpurt_tasklet_id, n);
}

void dpurt_time_dma(uint32_t bytes)
{
	if (!dpurt_modeled)
		return;
	__dpusim_icount += DPU_COST_DMA_ISSUE;
	dpurt_time_take();
	dpurt_model_dma(&model, __dpurt_tasklet_id, bytes);
}

uint64_t dpurt_time_now(void)
{
	if (!dpurt_modeled)
		return 0;
	dpurt_time_take();
	return model.t[__dpurt_tasklet_id % DPURT_MODEL_MAX_TASKLETS].clock;
}

uint64_t dpurt_time_sync(void)
{
	if (!dpurt_modeled)
		return 0;
	__dpusim_icount += DPU_COST_SYNC;
	return dpurt_time_now();
}

void dpurt_time_until(uint64_t cycle)
{
	if (dpurt_modeled)
		dpurt_model_until(&model, __dpurt_tasklet_id, cycle);
}

uint64_t dpurt_time_lock(struct dpurt_model_spans *s)
{
	uint64_t start;

	if (!dpurt_modeled)
		return 0;
	__dpusim_icount += DPU_COST_MUTEX;
	start = dpurt_model_free_at(s, dpurt_time_now());
	dpurt_model_spin(&model, __dpurt_tasklet_id, start);
	return start;
}

void dpurt_time_unlock(struct dpurt_model_spans *s, uint64_t start)
{
	uint64_t end;

	if (!dpurt_modeled)
		return;
	__dpusim_icount += DPU_COST_MUTEX;
	end = dpurt_time_now();
	if (end < start)	/* not from this tasklet's lock: a hold of nothing */
		end = start;
	dpurt_model_spin(&model, __dpurt_tasklet_id, dpurt_model_fill(&model, s, start, end - start));
}

void dpurt_time_done(void)
{
	dpurt_time_take();
	if (dpurt_modeled)
		dpurt_model_done(&model, __dpurt_tasklet_id);
}

uint64_t dpurt_time_end(void)
{
	return dpurt_modeled ? dpurt_model_end(&model) + DPU_LAUNCH_CYCLES : 0;
}

/* ---- the counter ------------------------------------------------------- */

void dpurt_perf_reset(void)
{
	dpurt_modeled = &__dpusim_model_on != NULL;
	__dpusim_icount = 0;
	if (dpurt_modeled && dpurt_model_init(&model, &model_params, dpurt_ctx.nr_tasklets))
		dpurt_modeled = false;
	base_cycle = 0;
	base_instr = 0;
	atomic_store(&base_ns, now_ns());
	atomic_store(&frozen, 0);
	atomic_store(&mode, COUNT_CYCLES);
}

/* modeled: the calling tasklet's cycle, and the DPU's instructions */
static void modeled_now(uint64_t *cycle, uint64_t *instr)
{
	dpurt_time_take();
	*cycle = model.t[__dpurt_tasklet_id % DPURT_MODEL_MAX_TASKLETS].clock;
	*instr = dpurt_model_instructions(&model);
}

/* Both counts since the last reset: cycles and instructions */
static void counted_both(uint64_t *cyc, uint64_t *ins)
{
	uint64_t c, i;

	if (!dpurt_modeled) {
		uint64_t now = now_ns(), base = atomic_load(&base_ns);

		/* unmodeled, instructions count as cycles (one a cycle) */
		*cyc = *ins = now > base ? cycles(now - base) : 0;
		return;
	}
	modeled_now(&c, &i);
	*cyc = c > base_cycle ? c - base_cycle : 0;
	*ins = i > base_instr ? i - base_instr : 0;
}

static uint64_t counted(int m)
{
	uint64_t c, i;

	counted_both(&c, &i);
	return m == COUNT_INSTRUCTIONS ? i : c;
}

static void reset_base(void)
{
	if (dpurt_modeled)
		modeled_now(&base_cycle, &base_instr);
	else
		atomic_store(&base_ns, now_ns());
}

perfcounter_t perfcounter_get(void)
{
	int m = atomic_load(&mode);

	if (m == COUNT_NOTHING)
		return atomic_load(&frozen);
	return counted(m);
}

perfcounter_t perfcounter_config(perfcounter_config_t config, bool reset_value)
{
	perfcounter_t old = perfcounter_get();

	if (config == COUNT_NOTHING)
		atomic_store(&frozen, reset_value ? 0 : old);
	if (reset_value)
		reset_base();
	if (config == COUNT_CYCLES || config == COUNT_INSTRUCTIONS || config == COUNT_ENABLE_BOTH) {
		int m = config == COUNT_INSTRUCTIONS ? COUNT_INSTRUCTIONS : COUNT_CYCLES;

		if (atomic_load(&mode) == COUNT_NOTHING && !reset_value) {
			/* resume from the frozen value */
			uint64_t f = atomic_load(&frozen);

			if (dpurt_modeled) {
				uint64_t c, i;

				modeled_now(&c, &i);
				if (m == COUNT_INSTRUCTIONS)
					base_instr = i - f;
				else
					base_cycle = c - f;
			} else {
				atomic_store(&base_ns, now_ns() - f * 20 / 7);
			}
		}
		/* unmodeled, instructions count as cycles (one a cycle) */
		atomic_store(&mode, dpurt_modeled ? m : COUNT_CYCLES);
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

	counted_both(&p.cycles, &p.instr);
	if (should_reset)
		reset_base();
	return p;
}
