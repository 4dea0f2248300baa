// SPDX-License-Identifier: MIT
/*
 * stream_bench - the streams figure of shared/design/performance.md: a
 * compute-bound consumer of a down-stream, with and without preload
 * (target: preload hides at least 80 % of the transfer).
 *
 * One rank; the core is DPU 0: a host thread acting as it
 * (ebsp_set_core(0)), or with --core dpu a DPU program
 * (tools/bench/dpu/stream_consumer.c, one pass per launch, timed by the
 * program itself with the perfcounter, so the launch is not counted).  A
 * stream of --tokens tokens of --token bytes.  Per repetition, each timed:
 *   xfer      move_down of every token, no compute
 *   compute   the consumer's work on every token, no move (on a copy)
 *   plain     move_down without preload, then the work, token by token
 *   preload   move_down with preload (the next token is an asynchronous
 *             transfer while the work runs), then the work
 * hidden = (plain - preload) / xfer: the part of the transfer time the
 * preload took off the critical path.  The work is calibrated to take
 * about --ratio times the transfer of a token (compute-bound).  Medians
 * of --reps repetitions.  Each repetition also samples what the guest's
 * second CPU adds (capacity.h), and the figure is printed beside the
 * most an overlap could hide with it; and two plain threads doing the
 * same copies and work without dpusim (handoff.h) show what this
 * machine gives such an overlap.  STREAM_BENCH_DEBUG=1 prints each
 * pass's time and the part of it spent in move_down.  --plain only takes
 * the plain threads' samples (no device needed: it runs on the host too).
 *
 * usage: stream_bench [--core host|dpu] [--tokens N] [--token BYTES]
 *                     [--reps N] [--ratio R] [--json FILE] [--plain]
 */
#include <dpu.h>
#include <ebsp.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capacity.h"
#include "handoff.h"

static unsigned int tokens = 64, reps = 7;
static unsigned int token = 256 * 1024;
static double ratio = 1.5;
static unsigned int rounds = 1;	/* the work's passes over a token */
static int dpu_core;			/* --core dpu */
static struct dpu_set_t core_dpu;	/* with it: DPU 0 of the set */
static int debug;			/* STREAM_BENCH_DEBUG set */
#define CONSUMER "build/bench/dpu/stream_consumer"
#define CAL_PASSES 5	/* of the transfer and of the work, to calibrate */

/* The consumer's work: arithmetic over the token, @rounds passes. */
static uint64_t work(const void *buf, unsigned int n)
{
	const uint64_t *p = buf;
	uint64_t h = 1469598103934665603ULL;
	unsigned int r, i;

	for (r = 0; r < rounds; r++)
		for (i = 0; i < n / 8; i++)
			h = (h ^ p[i]) * 1099511628211ULL + r;
	return h;
}

static volatile uint64_t sink;

/* The plain threads' medians, printed beside the figure */
static void print_plain(struct bench_handoff *h, double *hidden)
{
	double copy, serial, overlap;
	unsigned int n = bench_handoff_value(h, &copy, &serial, &overlap, hidden);

	if (!n) {
		printf("  two plain threads: not sampled (one CPU)\n");
		*hidden = 0;
		return;
	}
	printf("  two plain threads doing the same, no dpusim (handoff.h: one copies token k + 1 while\n"
	       "  the other works on token k), median of %u: copy %.0f us, copy then work %.0f us,\n"
	       "  overlapped %.0f us: they hide %.0f %% (this machine's reference, not a bound)\n",
	       n, copy, serial, overlap, 100 * *hidden);
}

/* Under STREAM_BENCH_DEBUG: a pass's time and the part of it in move_down */
static void debug_pass(int move, int preload, int compute, double us, double in_move)
{
	if (debug)
		fprintf(stderr, "pass move %d preload %d compute %d: %.0f us, %.0f in move_down\n",
			move, preload, compute, us, in_move);
}

/* One pass run by the DPU program; µs. */
static double dpu_pass(int move, int preload, int compute)
{
	struct {
		uint32_t move, preload, compute, rounds;
		uint32_t tokens, token, time_moves;
	} args = { move, preload, compute, rounds, tokens, token, (uint32_t)debug };
	uint64_t cycles = 0, mc = 0;
	int32_t bad = 0;

	if (dpu_copy_to(core_dpu, "args", 0, &args, sizeof(args)) != DPU_OK ||
	    dpu_launch(core_dpu, DPU_SYNCHRONOUS) != DPU_OK ||
	    dpu_copy_from(core_dpu, "cycles", 0, &cycles, sizeof(cycles)) != DPU_OK ||
	    dpu_copy_from(core_dpu, "move_cycles", 0, &mc, sizeof(mc)) != DPU_OK ||
	    dpu_copy_from(core_dpu, "bad", 0, &bad, sizeof(bad)) != DPU_OK) {
		fprintf(stderr, "stream_bench: running %s failed\n", CONSUMER);
		exit(1);
	}
	if (bad != -1) {
		fprintf(stderr, "stream_bench: the DPU program failed at token %d\n", bad);
		exit(1);
	}
	debug_pass(move, preload, compute, cycles / 350.0, mc / 350.0);
	return cycles / 350.0;	/* the perfcounter's 350 MHz cycles */
}

/* One pass over the stream: move (and preload) and/or work; µs. */
static double pass(int move, int preload, int compute, const void *copy)
{
	double t0, t1 = 0, in_move = 0;
	ebsp_stream s;
	unsigned int i;
	void *buf;
	int n;

	if (dpu_core)
		return dpu_pass(move, preload, compute);

	if (!bsp_stream_open(&s, 0))
		exit(1);
	t0 = bench_now_us();
	for (i = 0; i < tokens; i++) {
		if (move) {
			if (debug)	/* a clock read is a system call here (hpet) */
				t1 = bench_now_us();
			n = bsp_stream_move_down(&s, &buf, preload);
			if (debug)
				in_move += bench_now_us() - t1;
			if (n != (int)token) {
				fprintf(stderr, "stream_bench: token %u: %d bytes\n", i, n);
				exit(1);
			}
		} else {
			buf = (void *)copy;
		}
		if (compute)
			sink += work(buf, token);
	}
	t0 = bench_now_us() - t0;
	bsp_stream_close(&s);
	debug_pass(move, preload, compute, t0, in_move);
	return t0;
}

/* --plain: the plain threads' samples only, no device */
static int run_plain(void)
{
	struct bench_handoff ho;
	double plain, cal[CAL_PASSES];
	unsigned int i, k;

	if (bench_handoff_init(&ho, tokens, token, work))
		return 1;
	/*
	 * The work as long as about ratio x a token's copy: from the medians
	 * of CAL_PASSES copies and passes of the work alone (not from serial
	 * - copy of one sample: its first, cold, copy took longer than the
	 * warm copy and work after it in a third of the samples of 4 x 4 KiB,
	 * and the difference came out negative).
	 */
	for (i = 0; i < CAL_PASSES; i++) {
		bench_handoff_sample(&ho);
		cal[i] = bench_now_us();
		for (k = 0; k < tokens; k++)
			sink += work(handoff_tok(&ho, ho.src, k), ho.token);
		cal[i] = bench_now_us() - cal[i];
	}
	if (!ho.n) {
		printf("stream_bench --plain: one CPU, or no thread: nothing to sample\n");
		bench_handoff_free(&ho);
		return 0;
	}
	rounds = bench_work_rounds(ratio, bench_median(ho.copy, ho.n),
				   bench_median(cal, CAL_PASSES));
	ho.n = 0;
	for (i = 0; i < reps; i++)
		bench_handoff_sample(&ho);
	printf("stream %u tokens x %u B, work %u passes, no device:\n", tokens, token, rounds);
	print_plain(&ho, &plain);
	bench_handoff_free(&ho);
	return 0;
}

int main(int argc, char **argv)
{
	const char *json = NULL;
	struct dpu_set_t set;
	double *tx, *tc, *tp, *tl, x, c, p, l, hidden, best, capacity, ceiling;
	double cal_x[CAL_PASSES], cal_c[CAL_PASSES], plain;
	struct bench_handoff ho;
	struct bench_cap cap;
	int plain_only = 0;
	uint8_t *data;
	size_t total;
	unsigned int i;
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--tokens") && a + 1 < argc)
			tokens = (unsigned int)strtoul(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "--token") && a + 1 < argc)
			token = (unsigned int)strtoul(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "--reps") && a + 1 < argc)
			reps = (unsigned int)strtoul(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "--ratio") && a + 1 < argc)
			ratio = strtod(argv[++a], NULL);
		else if (!strcmp(argv[a], "--core") && a + 1 < argc)
			dpu_core = !strcmp(argv[++a], "dpu");
		else if (!strcmp(argv[a], "--json") && a + 1 < argc)
			json = argv[++a];
		else if (!strcmp(argv[a], "--plain"))
			plain_only = 1;
		else {
			fprintf(stderr, "usage: stream_bench [--core host|dpu] [--tokens N] [--token BYTES] [--reps N] [--ratio R] [--json FILE] [--plain]\n");
			return 2;
		}
	}
	if (!tokens || !reps || token < 16 || token % 8 || ratio <= 0)
		return 2;
	if (plain_only)
		return run_plain();
	debug = !!getenv("STREAM_BENCH_DEBUG");
	total = (size_t)tokens * token;
	data = malloc(total);
	tx = calloc(reps, sizeof(*tx));
	tc = calloc(reps, sizeof(*tc));
	tp = calloc(reps, sizeof(*tp));
	tl = calloc(reps, sizeof(*tl));
	if (!data || !tx || !tc || !tp || !tl)
		return 1;
	for (i = 0; i < total; i++)
		data[i] = (uint8_t)(i * 31 + 7);
	if (dpu_alloc_ranks(1, NULL, &set) != DPU_OK || ebsp_set_target(set) != DPU_OK)
		return 1;
	ebsp_set_core(0);
	if (!bsp_stream_create((int)total, (int)token, data))
		return 1;
	if (dpu_core) {
		unsigned int k;

		DPU_FOREACH(set, core_dpu, k)
			break;
		if (dpu_load(core_dpu, CONSUMER, NULL) != DPU_OK)
			return 1;
	}

	/*
	 * Calibrate the work: about ratio x one token's transfer, from the
	 * medians of CAL_PASSES passes of each (from one pass each, the work
	 * came out at 1.0 to 2.3 transfers from run to run).
	 */
	pass(1, 0, 0, NULL);
	for (i = 0; i < CAL_PASSES; i++) {
		cal_x[i] = pass(1, 0, 0, NULL);
		cal_c[i] = pass(0, 0, 1, data);
	}
	x = bench_median(cal_x, CAL_PASSES) / tokens;
	c = bench_median(cal_c, CAL_PASSES) / tokens;
	rounds = bench_work_rounds(ratio, x, c);

	if (bench_cap_init(&cap) || bench_handoff_init(&ho, tokens, token, work))
		return 1;
	for (i = 0; i < reps; i++) {
		bench_cap_sample(&cap);
		bench_handoff_sample(&ho);
		tx[i] = pass(1, 0, 0, NULL);
		tc[i] = pass(0, 0, 1, data);
		tl[i] = pass(1, 0, 1, NULL);
		tp[i] = pass(1, 1, 1, NULL);
	}
	x = bench_median(tx, reps);
	c = bench_median(tc, reps);
	l = bench_median(tl, reps);
	p = bench_median(tp, reps);
	hidden = (l - p) / x;
	/* the quietest repetition of each (bench_median() sorted them) */
	best = (tl[0] - tp[0]) / tx[0];
	printf("stream %u tokens x %u B, %s as core 0, work %u passes (%.1fx a token's transfer):\n",
	       tokens, token, dpu_core ? "a DPU program" : "a host thread", rounds, c / x);
	printf("  transfer alone %.0f us, work alone %.0f us, both without preload %.0f us, with preload %.0f us\n",
	       x, c, l, p);
	printf("  preload hides %.0f %% of the transfer (target >= 80 %%: %s); ideal max(transfer, work) %.0f us\n",
	       100 * hidden, hidden >= 0.8 ? "met" : "MISSED", x > c ? x : c);
	printf("  fastest of %u repetitions each: transfer %.0f us, both without preload %.0f us, with preload %.0f us: hides %.0f %%\n",
	       reps, tx[0], tl[0], tp[0], 100 * best);
	capacity = bench_cap_value(&cap);
	bench_cap_free(&cap);
	ceiling = capacity < 2 ? 2 - 2 / capacity : 1;
	printf("  this guest's second CPU: capacity %.2f (capacity.h: 2.00 = two whole CPUs), so an overlap could hide at most %.0f %%\n",
	       capacity, 100 * ceiling);
	print_plain(&ho, &plain);
	bench_handoff_free(&ho);
	if (json) {
		FILE *f = fopen(json, "w");

		if (f) {
			fprintf(f, "{\"core\": \"%s\", \"tokens\": %u, \"token_bytes\": %u, \"work_rounds\": %u, \"xfer_us\": %.1f, \"work_us\": %.1f, \"plain_us\": %.1f, \"preload_us\": %.1f, \"hidden\": %.3f, \"hidden_fastest\": %.3f, \"capacity\": %.3f, \"hidden_ceiling\": %.3f, \"plain_threads_hidden\": %.3f, \"reps\": %u}\n",
				dpu_core ? "dpu" : "host", tokens, token, rounds, x, c, l, p,
				hidden, best, capacity, ceiling, plain, reps);
			fclose(f);
		}
	}
	dpu_free(set);
	return 0;
}
