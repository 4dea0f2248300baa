// SPDX-License-Identifier: MIT
/*
 * model_bench - the modeled DPU time (issue 33): microbenchmarks written
 * here, their modeled figures beside the published ones, and what the
 * instrumentation costs.
 *
 *   1. arithmetic throughput (build/bench/dpu/model_arith_<N>t): MOPS of
 *      add, sub, mul, div on int32, int64, float, double for 1 to 24
 *      tasklets, in modeled cycles of a 350 MHz DPU;
 *   2. MRAM (model_mram_<N>t): cycles per DMA and MB/s by size, read and
 *      write, 1, 2 and 16 tasklets;
 *   3. the published figures these can be held against (tools/model/
 *      SOURCES.md: what is reachable from here and its kind), each with
 *      the modeled figure and the ratio;
 *   4. the instrumentation's cost: vecadd (64 DPUs x 16 tasklets, the
 *      launch) and the pivot example (the whole program) built with and
 *      without the model, alternating, median of --reps: guest time
 *      ratio (target <= 1.5);
 *   5. determinism: the arithmetic table once more, compared.
 *
 * usage: model_bench [--dpu-dir DIR] [--pivot PATH] [--reps N] [--json FILE]
 * Exit status: 0, 1 if a run failed or the modeled figures changed between
 * two runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dpu.h>

#include "bench.h"

#define HZ		350e6
#define NR_NRS		7
#define NR_OPS		16
#define VEC_DPUS	64u
#define VEC_ELEMS	(64u * 1024)

static const unsigned int nrs[NR_NRS] = { 1, 2, 4, 8, 11, 16, 24 };
static const char *const type_names[4] = { "int32", "int64", "float", "double" };
static const char *const op_names[4] = { "add", "sub", "mul", "div" };
static const unsigned int mram_nrs[3] = { 1, 2, 16 };
#define NR_SIZES 9	/* 8 .. 2048 */

static const char *dpu_dir = "build/bench/dpu";
static const char *pivot_bin = "build/examples/pivot";
static unsigned int reps = 5;

struct arith {
	uint64_t cycles[NR_NRS][NR_OPS];
	uint64_t instrs[NR_NRS][NR_OPS];
	uint32_t elems;
};

static const char *prog(const char *name)
{
	static char buf[4][512];
	static unsigned int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dpu_dir, name);
	return buf[k];
}

static int put32(struct dpu_set_t set, const char *sym, uint32_t v)
{
	return dpu_broadcast_to(set, sym, 0, &v, sizeof(v), DPU_XFER_DEFAULT) == DPU_OK ? 0 : -1;
}

static int get64(struct dpu_set_t set, const char *sym, uint64_t *v)
{
	struct dpu_set_t dpu;

	DPU_FOREACH(set, dpu) {
		return dpu_copy_from(dpu, sym, 0, v, sizeof(*v)) == DPU_OK ? 0 : -1;
	}
	return -1;
}

static int run_arith(struct arith *a)
{
	for (unsigned int n = 0; n < NR_NRS; n++) {
		struct dpu_set_t set, dpu;
		char name[32];

		snprintf(name, sizeof(name), "model_arith_%ut", nrs[n]);
		if (dpu_alloc(1, NULL, &set) != DPU_OK)
			return -1;
		if (dpu_load(set, prog(name), NULL) != DPU_OK) {
			dpu_free(set);
			return -1;
		}
		DPU_FOREACH(set, dpu)
			dpu_copy_from(dpu, "elems", 0, &a->elems, sizeof(a->elems));
		for (unsigned int op = 0; op < NR_OPS; op++) {
			if (put32(set, "op", op) || dpu_launch(set, DPU_SYNCHRONOUS) != DPU_OK ||
			    get64(set, "cycles", &a->cycles[n][op]) ||
			    get64(set, "instrs", &a->instrs[n][op])) {
				dpu_free(set);
				return -1;
			}
		}
		dpu_free(set);
	}
	return 0;
}

static double mops(const struct arith *a, unsigned int n, unsigned int op)
{
	uint64_t c = a->cycles[n][op];

	return c ? (double)nrs[n] * a->elems * HZ / (double)c / 1e6 : 0;
}

/* cycles[t][write][size]: cycles of reps DMAs per tasklet */
static int run_mram(uint64_t cycles[3][2][NR_SIZES], uint32_t dma_reps)
{
	for (unsigned int n = 0; n < 3; n++) {
		struct dpu_set_t set;
		char name[32];

		snprintf(name, sizeof(name), "model_mram_%ut", mram_nrs[n]);
		if (dpu_alloc(1, NULL, &set) != DPU_OK)
			return -1;
		if (dpu_load(set, prog(name), NULL) != DPU_OK || put32(set, "reps", dma_reps)) {
			dpu_free(set);
			return -1;
		}
		for (unsigned int w = 0; w < 2; w++)
			for (unsigned int s = 0; s < NR_SIZES; s++)
				if (put32(set, "write", w) || put32(set, "size", 8u << s) ||
				    dpu_launch(set, DPU_SYNCHRONOUS) != DPU_OK ||
				    get64(set, "cycles", &cycles[n][w][s])) {
					dpu_free(set);
					return -1;
				}
		dpu_free(set);
	}
	return 0;
}

/* Guest time of one vecadd launch on 64 DPUs, after a first one: us */
static int time_vecadd(const char *name, double *us)
{
	struct { uint32_t n, pad; } args = { VEC_ELEMS, 0 };
	struct dpu_set_t set;
	double t0;
	int ret = -1;

	if (dpu_alloc(VEC_DPUS, NULL, &set) != DPU_OK)
		return -1;
	if (dpu_load(set, prog(name), NULL) != DPU_OK ||
	    dpu_broadcast_to(set, "args", 0, &args, sizeof(args), DPU_XFER_DEFAULT) != DPU_OK ||
	    dpu_launch(set, DPU_SYNCHRONOUS) != DPU_OK)
		goto out;
	t0 = bench_now_us();
	if (dpu_launch(set, DPU_SYNCHRONOUS) != DPU_OK)
		goto out;
	*us = bench_now_us() - t0;
	ret = 0;
out:
	dpu_free(set);
	return ret;
}

/* Guest time of the pivot example, the whole program: us */
static int time_pivot(const char *dpu_prog, double *us)
{
	double t0;
	int status;
	pid_t pid;

	fflush(stdout);
	t0 = bench_now_us();
	pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execl(pivot_bin, pivot_bin, "--dpus", "64", "--elements-per-dpu", "65536",
		      "--dpu-program", dpu_prog, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	*us = bench_now_us() - t0;
	return 0;
}

static int cost(double *vec_model, double *vec_plain, double *piv_model, double *piv_plain)
{
	double *vm = calloc(reps, sizeof(double)), *vp = calloc(reps, sizeof(double));
	double *pm = calloc(reps, sizeof(double)), *pp = calloc(reps, sizeof(double));
	int ret = -1;

	if (!vm || !vp || !pm || !pp)
		goto out;
	/* alternating, so that a slow spell of the host hits both */
	for (unsigned int r = 0; r < reps; r++) {
		if (time_vecadd("vecadd", &vm[r]) || time_vecadd("vecadd_plain", &vp[r]) ||
		    time_pivot(prog("pivot"), &pm[r]) || time_pivot(prog("pivot_plain"), &pp[r]))
			goto out;
	}
	*vec_model = bench_median(vm, reps);
	*vec_plain = bench_median(vp, reps);
	*piv_model = bench_median(pm, reps);
	*piv_plain = bench_median(pp, reps);
	ret = 0;
out:
	free(vm);
	free(vp);
	free(pm);
	free(pp);
	return ret;
}

int main(int argc, char **argv)
{
	static struct arith a, again;
	static uint64_t mc[3][2][NR_SIZES];
	const uint32_t dma_reps = 16;
	const char *json = NULL;
	double vm, vp, pm, pp;
	int status = 0;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dpu-dir") && i + 1 < argc) {
			dpu_dir = argv[++i];
		} else if (!strcmp(argv[i], "--pivot") && i + 1 < argc) {
			pivot_bin = argv[++i];
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = (unsigned int)strtoul(argv[++i], NULL, 10);
			if (!reps)
				reps = 1;
		} else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
			json = argv[++i];
		} else {
			fprintf(stderr, "usage: model_bench [--dpu-dir DIR] [--pivot PATH] [--reps N] [--json FILE]\n");
			return 2;
		}
	}

	if (run_arith(&a)) {
		fprintf(stderr, "model_bench: the arithmetic runs failed\n");
		return 1;
	}
	printf("1. arithmetic throughput, modeled MOPS of a 350 MHz DPU (%u elements per tasklet)\n",
	       a.elems);
	printf("   %-14s", "tasklets");
	for (unsigned int n = 0; n < NR_NRS; n++)
		printf(" %8u", nrs[n]);
	printf("\n");
	for (unsigned int op = 0; op < NR_OPS; op++) {
		char name[24];

		snprintf(name, sizeof(name), "%s %s", type_names[op / 4], op_names[op % 4]);
		printf("   %-14s", name);
		for (unsigned int n = 0; n < NR_NRS; n++)
			printf(" %8.2f", mops(&a, n, op));
		printf("\n");
	}

	if (run_mram(mc, dma_reps)) {
		fprintf(stderr, "model_bench: the MRAM runs failed\n");
		return 1;
	}
	printf("\n2. MRAM DMA, modeled: cycles per DMA (1 tasklet) and MB/s (1, 2, 16 tasklets)\n");
	printf("   %-6s %10s %10s %9s %9s %9s %9s %9s %9s\n", "bytes", "read cyc", "write cyc",
	       "rd 1t", "rd 2t", "rd 16t", "wr 1t", "wr 2t", "wr 16t");
	for (unsigned int s = 0; s < NR_SIZES; s++) {
		printf("   %-6u %10.1f %10.1f", 8u << s, (double)mc[0][0][s] / dma_reps,
		       (double)mc[0][1][s] / dma_reps);
		for (unsigned int w = 0; w < 2; w++)
			for (unsigned int n = 0; n < 3; n++)
				printf(" %9.1f", mc[n][w][s] ? (double)mram_nrs[n] * dma_reps *
						(8u << s) * HZ / (double)mc[n][w][s] / 1e6 : 0);
		printf("\n");
	}

	{
		double sat = mops(&a, 4, 0) / mops(&a, 6, 0);	/* 11 vs 24 tasklets */
		double below = mops(&a, 3, 0) / mops(&a, 4, 0);	/* 8 vs 11 */
		double ipe32 = (double)a.instrs[0][0] / a.elems;
		double ipe64 = (double)a.instrs[0][4] / a.elems;
		double bw = (double)dma_reps * 2048 * HZ / (double)mc[0][0][NR_SIZES - 1] / 1e6;
		double bw2 = (double)2 * dma_reps * 2048 * HZ / (double)mc[1][0][NR_SIZES - 1] / 1e6;
		double bw16 = (double)16 * dma_reps * 2048 * HZ / (double)mc[2][0][NR_SIZES - 1] / 1e6;

		printf("\n3. published figures reachable from here (tools/model/SOURCES.md), modeled beside them\n");
		printf("   %-62s %10s %10s %6s\n", "figure [source]", "published", "modeled", "ratio");
		printf("   %-62s %10.2f %10.2f %6.2f\n",
		       "int32 add MOPS, 11 / 24 tasklets: saturated at 11 [PrIMn]", 1.0, sat, sat);
		printf("   %-62s %10s %10.2f %6s\n",
		       "int32 add MOPS, 8 / 11 tasklets: not yet saturated [PrIMn]", "< 1", below,
		       below < 1 ? "ok" : "NO");
		printf("   %-62s %10.2f %10.2f %6.2f\n",
		       "int32 add loop, instructions per element [PrIMn]", 6.0, ipe32, ipe32 / 6.0);
		printf("   %-62s %10.2f %10.2f %6.2f\n",
		       "int64 add loop, instructions per element [PrIMn]", 7.0, ipe64, ipe64 / 7.0);
		printf("   %-62s %10.1f %10.1f %6.2f\n",
		       "MRAM read MB/s, 2048 B, 1 tasklet, ceiling 2 B/cycle [PrIMn]", 2 * HZ / 1e6,
		       bw, bw / (2 * HZ / 1e6));
		printf("   %-62s %10.2f %10.2f %6.2f\n",
		       "MRAM read MB/s, 2048 B, 2 / 16 tasklets: saturated at 2 [PrIMn]", 1.0,
		       bw2 / bw16, bw2 / bw16);
		printf("   PrIM's own figures (arithmetic MOPS, MRAM and WRAM MB/s, CPU-DPU GB/s):"
		       " not reachable from this machine (tools/model/SOURCES.md);\n"
		       "   real-hardware PrIM kernel times: tools/model/validate-prim; transfers:"
		       " tools/model/fit-xfer\n");
	}

	if (cost(&vm, &vp, &pm, &pp)) {
		fprintf(stderr, "model_bench: the instrumentation-cost runs failed\n");
		return 1;
	}
	printf("\n4. the instrumentation's cost, guest time, median of %u (target <= 1.5)\n", reps);
	printf("   vecadd %u DPUs x 16 tasklets, one launch: %.0f us modeled, %.0f us without: %.2fx (%s)\n",
	       VEC_DPUS, vm, vp, vm / vp, vm / vp <= 1.5 ? "met" : "NOT met");
	printf("   pivot example, 64 DPUs, the whole program: %.0f us modeled, %.0f us without: %.2fx (%s)\n",
	       pm, pp, pm / pp, pm / pp <= 1.5 ? "met" : "NOT met");

	if (run_arith(&again)) {
		fprintf(stderr, "model_bench: the second arithmetic run failed\n");
		return 1;
	}
	if (memcmp(&a, &again, sizeof(a))) {
		printf("\n5. determinism: the arithmetic table CHANGED between two runs\n");
		status = 1;
	} else {
		printf("\n5. determinism: the arithmetic table, run twice: identical (%u launches)\n",
		       NR_NRS * NR_OPS);
	}

	if (json) {
		f = fopen(json, "w");
		if (!f) {
			fprintf(stderr, "model_bench: %s: %s\n", json, strerror(errno));
			return 1;
		}
		fprintf(f, "{\"mops\": {");
		for (unsigned int op = 0; op < NR_OPS; op++) {
			fprintf(f, "%s\"%s_%s\": [", op ? ", " : "", type_names[op / 4], op_names[op % 4]);
			for (unsigned int n = 0; n < NR_NRS; n++)
				fprintf(f, "%s%.3f", n ? ", " : "", mops(&a, n, op));
			fprintf(f, "]");
		}
		fprintf(f, "}, \"tasklets\": [1, 2, 4, 8, 11, 16, 24], \"mram_read_cycles_1t\": [");
		for (unsigned int s = 0; s < NR_SIZES; s++)
			fprintf(f, "%s%.1f", s ? ", " : "", (double)mc[0][0][s] / dma_reps);
		fprintf(f, "], \"vecadd_model_us\": %.1f, \"vecadd_plain_us\": %.1f, "
			   "\"pivot_model_us\": %.1f, \"pivot_plain_us\": %.1f, \"deterministic\": %s}\n",
			vm, vp, pm, pp, status ? "false" : "true");
		fclose(f);
	}
	return status;
}
