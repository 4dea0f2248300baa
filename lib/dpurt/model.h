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
 *    bytes, and the tasklet goes on @dma_latency cycles after its DMA's
 *    service ends.  The engine's busy spans are kept, and a DMA takes the
 *    engine's first idle cycles at or after its tasklet's clock: the
 *    tasklets report in turns, not in modeled time, so a DMA reported
 *    after one that starts later in modeled time still goes first where
 *    the engine was idle, in pieces if it must (as the engine would have
 *    served it first and the later one after).
 *  - A wait moves the clock to the cycle the tasklet is let go, issuing
 *    nothing (a barrier, a handshake: the DPU stops the thread) or
 *    spinning (a mutex: the DPU's acquire jumps to itself while taken, so
 *    a waiter keeps its issue slots).
 *  - A lock keeps its modeled holds as spans too (sync.c): an acquire goes
 *    on at the first cycle not inside a busy span, and the hold takes the
 *    lock's idle cycles from there, in pieces if the stretches are short:
 *    on the DPU the holds of tasklets spinning on a lock follow one
 *    another without a gap, which the tasklets' turns here (all of one
 *    tasklet's holds before the next runs) would otherwise leave.
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

/*
 * The busy spans of one resource (the MRAM engine, a lock): [from, to),
 * sorted and disjoint, @busy of its cycles taken (all of them, unless two
 * spans were joined: then the two's, spread evenly over the joined span).
 * Spans that end before every tasklet's clock can no longer matter and
 * are dropped when room is needed; if none can be, the two closest are
 * joined, which keeps how busy the resource was, not where.
 */
#define DPURT_MODEL_SPANS 32

struct dpurt_model_span {
	uint64_t from, to, busy;
};

struct dpurt_model_spans {
	unsigned int n;
	struct dpurt_model_span span[DPURT_MODEL_SPANS];
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
	struct dpurt_model_spans engine;	/* the MRAM engine's busy spans */
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
void dpurt_model_spin(struct dpurt_model *m, unsigned int t, uint64_t cycle);
/* the first cycle at or after @at inside no wholly busy span of @s */
uint64_t dpurt_model_free_at(const struct dpurt_model_spans *s, uint64_t at);
/*
 * Take the first @len idle cycles of @s at or after @at, in pieces if the
 * idle stretches are short (a fluid, see the head of the file); return the
 * cycle after the last one taken.
 */
uint64_t dpurt_model_fill(const struct dpurt_model *m, struct dpurt_model_spans *s,
			  uint64_t at, uint64_t len);
void dpurt_model_done(struct dpurt_model *m, unsigned int t);
/* the cycle the last tasklet reached; the instructions of all of them */
uint64_t dpurt_model_end(const struct dpurt_model *m);
uint64_t dpurt_model_instructions(const struct dpurt_model *m);

#endif
