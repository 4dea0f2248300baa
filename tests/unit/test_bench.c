// SPDX-License-Identifier: MIT
/*
 * Unit tests of the benchmarks' calibration (tools/bench/bench.h):
 * bench_work_rounds() turns the samples into the work's passes, and a
 * sample gone wrong must not turn into hours of work (a negative
 * difference once became 4294967293 passes and hung CI).
 */
#include <math.h>

#include "../../tools/bench/bench.h"
#include "unit.h"

static void rounds_is(const char *name, double ratio, double transfer, double one,
		      unsigned int want)
{
	unsigned int got = bench_work_rounds(ratio, transfer, one);

	UNIT_CHECK(name, got == want, "ratio %g transfer %g one pass %g: %u passes, want %u",
		   ratio, transfer, one, got, want);
}

int main(void)
{
	rounds_is("rounds: ratio x transfer / one pass", 1.5, 100, 10, 15);
	rounds_is("rounds: rounded to nearest", 1.5, 100, 40, 4);
	rounds_is("rounds: work longer than wanted: one pass", 1.5, 10, 100, 1);
	rounds_is("rounds: a pass of 0 us: one pass", 1.5, 100, 0, 1);
	rounds_is("rounds: a negative pass (serial - copy < 0): one pass", 1.5, 3.07, -1.89, 1);
	rounds_is("rounds: a negative transfer: one pass", 1.5, -5, 10, 1);
	rounds_is("rounds: a transfer of 0 us: one pass", 1.5, 0, 10, 1);
	rounds_is("rounds: not a number: one pass", 1.5, NAN, 10, 1);
	rounds_is("rounds: infinite: one pass", 1.5, INFINITY, 10, 1);
	rounds_is("rounds: a tiny pass: at most BENCH_ROUNDS_MAX", 1.5, 100, 1e-9,
		  BENCH_ROUNDS_MAX);
	rounds_is("rounds: just under the bound", 1, BENCH_ROUNDS_MAX - 1, 1,
		  BENCH_ROUNDS_MAX - 1);
	return unit_done();
}
