// SPDX-License-Identifier: MIT
/*
 * stream_consumer - the DPU side of tools/bench/stream_bench --core dpu: a
 * compute-bound consumer of stream 0, the DPU being the EBSP core.  One
 * pass per launch, as the host sets @args: move_down every token (with or
 * without preload) and/or run the work over it (@args.rounds passes of a
 * multiply-xor hash), or the work alone over a WRAM copy.  The pass's time
 * goes to @cycles (the perfcounter: 350 MHz cycles of host time).
 */
#include <alloc.h>
#include <defs.h>
#include <ebsp.h>
#include <perfcounter.h>
#include <stdint.h>

__host struct {
	uint32_t move, preload, compute, rounds;
	uint32_t tokens, token;
	uint32_t time_moves;	/* time each move_down (STREAM_BENCH_DEBUG) */
} args;
__host uint64_t cycles;
/*
 * Of them, inside bsp_stream_move_down, with @args.time_moves only: a
 * perfcounter read is a clock_gettime(), a system call in this guest
 * (clocksource hpet, emulated), two per token would weigh on every pass
 * that moves, and more on the one whose copy thread polls beside it.
 */
__host uint64_t move_cycles;
__host uint64_t hash;
__host int32_t bad;	/* the token whose size was wrong, or -1 */

static uint64_t work(const void *buf, uint32_t n)
{
	const uint64_t *p = buf;
	uint64_t h = 1469598103934665603ULL;
	uint32_t r, i;

	for (r = 0; r < args.rounds; r++)
		for (i = 0; i < n / 8; i++)
			h = (h ^ p[i]) * 1099511628211ULL + r;
	return h;
}

int main(void)
{
	void *copy = NULL, *buf;
	uint64_t h = 0;
	bsp_stream s;
	uint32_t i;
	perfcounter_t t = 0;

	bad = -1;
	move_cycles = 0;
	if (!args.move)
		copy = mem_alloc(args.token);
	if (args.move && !bsp_stream_open(&s, 0)) {
		bad = -2;
		return 0;
	}
	perfcounter_config(COUNT_CYCLES, true);
	for (i = 0; i < args.tokens; i++) {
		if (args.move) {
			int n;

			if (args.time_moves)
				t = perfcounter_get();
			n = bsp_stream_move_down(&s, &buf, args.preload);
			if (args.time_moves)
				move_cycles += perfcounter_get() - t;
			if (n != (int)args.token) {
				bad = (int32_t)i;
				break;
			}
		} else {
			buf = copy;
		}
		if (args.compute)
			h += work(buf, args.token);
	}
	cycles = perfcounter_get();
	hash = h;
	if (args.move)
		bsp_stream_close(&s);
	return 0;
}
