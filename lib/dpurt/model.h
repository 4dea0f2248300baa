/* SPDX-License-Identifier: MIT */
/*
 * model.h - the DPU pipeline model: modeled cycles of a DPU run from what
 * its tasklets did, never from wall time.
 *
 * Each tasklet has a clock, the modeled cycle it has reached.  The
 * runtime reports, in the order the tasklets run (run.c's round robin),
 * what each one did since its last report: n instructions, a DMA of b
 * bytes, or "could not go on before cycle c" (a barrier, a lock).
 *
 *  - Instructions: a tasklet issues at most once every @issue_interval
 *    cycles, the DPU at most once a cycle, so while r tasklets issue each
 *    progresses at min(1 / issue_interval, 1 / r) instructions a cycle.
 *    r counts every other tasklet not in a DMA, not waiting and not done
 *    at that cycle, as far as its reports tell; a tasklet whose reports
 *    stop earlier (it has not run yet) counts as issuing.  A report of
 *    fewer than DPURT_MODEL_SHORT instructions issues at 1 / issue_interval.
 *  - A DMA holds its tasklet (it issues nothing) while the others go on:
 *    the MRAM engine serves one DMA at a time, @dma_cycles_per_8b per 8
 *    bytes, in the order the DMAs are reported, and the tasklet goes on
 *    @dma_latency cycles after its DMA's service ends.
 *  - A wait moves the clock to the cycle the tasklet is let go.
 *
 * Integer cycles throughout: the result depends on the reports and the
 * parameters only, so the same run gives the same cycles on any CPU.
 */
#ifndef DPURT_MODEL_H
#define DPURT_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#define DPURT_MODEL_MAX_TASKLETS 24
/* a segment of fewer instructions issues at the tasklet's own rate */
#define DPURT_MODEL_SHORT 32

struct dpurt_model_params {
	uint32_t issue_interval;	/* cycles between two issues of a tasklet */
	uint32_t dma_latency;		/* cycles, the fixed part of a DMA */
	uint32_t dma_cycles_per_8b;	/* the engine's time per 8 bytes */
};

struct dpurt_model_tasklet {
	uint64_t clock;		/* the modeled cycle it has reached */
	uint64_t instr;		/* instructions it issued */
	uint64_t idle_from;	/* its last interval of issuing nothing ... */
	uint64_t idle_to;	/* ... (a DMA or a wait): [idle_from, idle_to) */
	bool done;		/* returned at @clock */
};

struct dpurt_model {
	struct dpurt_model_params p;
	unsigned int n;
	uint64_t engine_free;	/* the cycle the MRAM engine is free again */
	/* per r tasklets issuing: 2^20 / max(issue_interval, r), rounded up */
	uint64_t recip[DPURT_MODEL_MAX_TASKLETS + 1];
	struct dpurt_model_tasklet t[DPURT_MODEL_MAX_TASKLETS];
};

/* Return: 0, or -1 for bad parameters or more than 24 tasklets. */
int dpurt_model_init(struct dpurt_model *m, const struct dpurt_model_params *p,
		     unsigned int ntasklets);
void dpurt_model_compute(struct dpurt_model *m, unsigned int t, uint64_t instr);
void dpurt_model_dma(struct dpurt_model *m, unsigned int t, uint32_t bytes);
void dpurt_model_until(struct dpurt_model *m, unsigned int t, uint64_t cycle);
void dpurt_model_done(struct dpurt_model *m, unsigned int t);
/* the cycle the last tasklet reached; the instructions of all of them */
uint64_t dpurt_model_end(const struct dpurt_model *m);
uint64_t dpurt_model_instructions(const struct dpurt_model *m);

#endif
