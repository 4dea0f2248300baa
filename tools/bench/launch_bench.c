// SPDX-License-Identifier: MIT
/*
 * launch_bench - DPU-program figures of issue 9, in one run in the guest.
 *
 *   overhead  dpu_launch(DPU_SYNCHRONOUS) of the empty DPU program
 *             (build/bench/dpu/empty) on all DPUs of 1 rank and of 4
 *             ranks: median wall time per launch over --reps launches
 *             (after one untimed warm-up launch, which starts the
 *             workers); tools/bench/run counts the system calls per
 *             launch with strace -c when strace is there
 *   vecadd    C = A + B over 64 DPUs x 16 tasklets (build/bench/dpu/vecadd,
 *             --elems int32 per DPU, in MRAM), the time of dpu_launch only,
 *             against the same loop on the host's own threads (one per
 *             online CPU, each a contiguous share of the same total): the
 *             DPU program's loop, 1 KiB blocks of A and B copied into a
 *             buffer, added, copied out to C (ratio = host time / DPU time,
 *             target >= 0.5); and, for reference, against a plain
 *             c[i] = a[i] + b[i] loop (no target). Every C element of
 *             both sides is checked after the runs.
 *
 * usage: launch_bench [--dpu-dir DIR] [--reps N] [--elems N] [--json FILE]
 *        launch_bench --strace-pass N [--dpu-dir DIR]
 * --strace-pass loads the empty program on 1 rank, launches it once, then
 * N more times, untimed: tools/bench/launch-run runs it under strace with
 * two values of N, so that the difference is the system calls of launches
 * alone, in the host and in the workers.
 * Exit status: 0 when every result was right (targets missed are
 * reported, not failures), 1 otherwise, 2 on bad usage.
 */
#include <dpu.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define VEC_DPUS 64u
#define VEC_TASKLETS 16u

static const char *dpu_dir = "build/bench/dpu";
static unsigned int reps = 20;
static uint32_t elems = 64 * 1024;	/* per DPU: 256 KiB per vector */

static char *prog(const char *name)
{
	static char buf[2][512];
	static int k;

	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dpu_dir, name);
	return buf[k];
}

/*
 * @n synchronous launches of the empty program on nr_ranks, after one
 * untimed; *@us their median µs (NULL: untimed, for --strace-pass).
 */
static int overhead(uint32_t nr_ranks, unsigned int n, double *us,
		    uint32_t *nr_dpus)
{
	struct dpu_set_t set;
	double *t;
	unsigned int i;
	int ret = -1;

	if (dpu_alloc_ranks(nr_ranks, NULL, &set) != DPU_OK)
		return -1;
	t = calloc(n ? n : 1, sizeof(*t));
	if (!t)
		goto out;
	if (dpu_get_nr_dpus(set, nr_dpus) != DPU_OK ||
	    dpu_load(set, prog("empty"), NULL) != DPU_OK ||
	    dpu_launch(set, DPU_SYNCHRONOUS) != DPU_OK)
		goto out;
	for (i = 0; i < n; i++) {
		double t0 = bench_now_us();

		if (dpu_launch(set, DPU_SYNCHRONOUS) != DPU_OK)
			goto out;
		t[i] = bench_now_us() - t0;
	}
	if (us)
		*us = bench_median(t, n);
	ret = 0;
out:
	free(t);
	dpu_free(set);
	return ret;
}

#define BLOCK_INTS 256	/* the DPU program's 1 KiB blocks */

struct host_add {
	const int32_t *a, *b;
	int32_t *c;
	size_t n;
	bool blocked;
};

static void *host_add_thread(void *arg)
{
	struct host_add *h = arg;
	int32_t ba[BLOCK_INTS], bb[BLOCK_INTS];

	if (!h->blocked) {
		for (size_t i = 0; i < h->n; i++)
			h->c[i] = h->a[i] + h->b[i];
		return NULL;
	}
	for (size_t off = 0; off < h->n; off += BLOCK_INTS) {
		size_t k = h->n - off < BLOCK_INTS ? h->n - off : BLOCK_INTS;

		memcpy(ba, h->a + off, k * 4);
		memcpy(bb, h->b + off, k * 4);
		for (size_t i = 0; i < k; i++)
			ba[i] += bb[i];
		memcpy(h->c + off, ba, k * 4);
	}
	return NULL;
}

static double host_vecadd(const int32_t *a, const int32_t *b, int32_t *c,
			  size_t n, unsigned int nthreads, bool blocked)
{
	struct host_add h[64];
	pthread_t tid[64];
	size_t share = (n + nthreads - 1) / nthreads;
	double t0 = bench_now_us();
	unsigned int i;

	for (i = 0; i < nthreads; i++) {
		size_t lo = i * share, hi = lo + share > n ? n : lo + share;

		h[i] = (struct host_add){ a + lo, b + lo, c + lo, hi > lo ? hi - lo : 0,
					  blocked };
		if (i)
			pthread_create(&tid[i], NULL, host_add_thread, &h[i]);
	}
	host_add_thread(&h[0]);
	for (i = 1; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	return bench_now_us() - t0;
}

static int vecadd(double *dpu_us, double *host_us, double *plain_us,
		  unsigned int *nthreads)
{
	size_t n = (size_t)VEC_DPUS * elems, bytes = (size_t)elems * 4;
	struct { uint32_t n, pad; } args = { elems, 0 };
	int32_t *a = NULL, *b = NULL, *c = NULL, *hc = NULL, *pc = NULL;
	double *td = NULL, *th = NULL, *tp = NULL;
	struct dpu_set_t set, dpu;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int i;
	uint32_t d;
	int ret = -1;

	*nthreads = cpus < 1 ? 1 : cpus > 64 ? 64 : (unsigned int)cpus;
	if (dpu_alloc(VEC_DPUS, NULL, &set) != DPU_OK)
		return -1;
	a = malloc(n * 4);
	b = malloc(n * 4);
	c = malloc(n * 4);
	hc = malloc(n * 4);
	pc = malloc(n * 4);
	td = calloc(reps, sizeof(*td));
	th = calloc(reps, sizeof(*th));
	tp = calloc(reps, sizeof(*tp));
	if (!a || !b || !c || !hc || !pc || !td || !th || !tp)
		goto out;
	for (size_t k = 0; k < n; k++) {
		a[k] = (int32_t)(k * 2654435761u);
		b[k] = (int32_t)(k * 40503u + 7);
	}
	memset(c, 0, n * 4);
	memset(hc, 0, n * 4);
	memset(pc, 0, n * 4);
	if (dpu_load(set, prog("vecadd"), NULL) != DPU_OK ||
	    dpu_broadcast_to(set, "args", 0, &args, sizeof(args), DPU_XFER_DEFAULT) != DPU_OK)
		goto out;
	DPU_FOREACH(set, dpu, d)
		if (dpu_prepare_xfer(dpu, a + (size_t)d * elems) != DPU_OK)
			goto out;
	if (dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0,
			  bytes, DPU_XFER_DEFAULT) != DPU_OK)
		goto out;
	DPU_FOREACH(set, dpu, d)
		if (dpu_prepare_xfer(dpu, b + (size_t)d * elems) != DPU_OK)
			goto out;
	if (dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME,
			  (uint32_t)bytes, bytes, DPU_XFER_DEFAULT) != DPU_OK)
		goto out;
	/* warm-up: workers started, MRAM of C allocated, host pages touched */
	if (dpu_launch(set, DPU_SYNCHRONOUS) != DPU_OK)
		goto out;
	host_vecadd(a, b, hc, n, *nthreads, true);
	host_vecadd(a, b, pc, n, *nthreads, false);
	for (i = 0; i < reps; i++) {
		double t0 = bench_now_us();

		if (dpu_launch(set, DPU_SYNCHRONOUS) != DPU_OK)
			goto out;
		td[i] = bench_now_us() - t0;
		th[i] = host_vecadd(a, b, hc, n, *nthreads, true);
		tp[i] = host_vecadd(a, b, pc, n, *nthreads, false);
	}
	DPU_FOREACH(set, dpu, d)
		if (dpu_prepare_xfer(dpu, c + (size_t)d * elems) != DPU_OK)
			goto out;
	if (dpu_push_xfer(set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME,
			  (uint32_t)(2 * bytes), bytes, DPU_XFER_DEFAULT) != DPU_OK)
		goto out;
	for (size_t k = 0; k < n; k++) {
		int32_t want = (int32_t)((uint32_t)a[k] + (uint32_t)b[k]);

		if (c[k] != want || hc[k] != want || pc[k] != want) {
			fprintf(stderr, "vecadd: element %zu: DPU %d host %d/%d, want %d\n",
				k, c[k], hc[k], pc[k], want);
			goto out;
		}
	}
	*dpu_us = bench_median(td, reps);
	*host_us = bench_median(th, reps);
	*plain_us = bench_median(tp, reps);
	ret = 0;
out:
	free(a);
	free(b);
	free(c);
	free(hc);
	free(pc);
	free(td);
	free(th);
	free(tp);
	dpu_free(set);
	return ret;
}

static int usage(void)
{
	fprintf(stderr, "usage: launch_bench [--dpu-dir DIR] [--reps N] [--elems N] [--json FILE]\n"
		"       launch_bench --strace-pass N [--dpu-dir DIR]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *json = NULL;
	double o1 = 0, o4 = 0, dus = 0, hus = 0, pus = 0;
	uint32_t n1 = 0, n4 = 0;
	unsigned int nthreads = 0;
	int ok = 1, i, pass = -1;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dpu-dir") && i + 1 < argc)
			dpu_dir = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = (unsigned int)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--elems") && i + 1 < argc)
			elems = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(argv[i], "--strace-pass") && i + 1 < argc)
			pass = atoi(argv[++i]);
		else
			return usage();
	}
	if (!reps || !elems || elems % 256)
		return usage();
	if (pass >= 0)
		return overhead(1, (unsigned int)pass, NULL, &n1) ? 1 : 0;

	if (overhead(1, reps, &o1, &n1)) {
		fprintf(stderr, "launch_bench: overhead on 1 rank failed\n");
		ok = 0;
	} else {
		printf("launch overhead, empty program, 1 rank (%u DPUs): %.0f us per synchronous launch (median of %u)\n",
		       n1, o1, reps);
	}
	if (overhead(4, reps, &o4, &n4)) {
		fprintf(stderr, "launch_bench: overhead on 4 ranks failed\n");
		ok = 0;
	} else {
		printf("launch overhead, empty program, 4 ranks (%u DPUs): %.0f us per synchronous launch (median of %u)\n",
		       n4, o4, reps);
	}
	if (vecadd(&dus, &hus, &pus, &nthreads)) {
		fprintf(stderr, "launch_bench: vecadd failed\n");
		ok = 0;
	} else {
		printf("vecadd %u DPUs x %u tasklets, %u int32 per DPU: DPUs %.0f us; the same loop (1 KiB blocks copied, added, copied out) on %u host threads %.0f us: ratio host/DPU %.2f (target >= 0.5: %s)\n",
		       VEC_DPUS, VEC_TASKLETS, elems, dus, nthreads, hus, hus / dus,
		       hus / dus >= 0.5 ? "met" : "MISSED");
		printf("vecadd reference: a plain c[i] = a[i] + b[i] loop on %u host threads %.0f us: ratio %.2f (no target)\n",
		       nthreads, pus, pus / dus);
	}
	if (json) {
		FILE *f = fopen(json, "w");

		if (f) {
			fprintf(f, "{\"overhead_1rank_us\": %.1f, \"overhead_1rank_dpus\": %u, \"overhead_4ranks_us\": %.1f, \"overhead_4ranks_dpus\": %u, \"vecadd_dpu_us\": %.1f, \"vecadd_host_us\": %.1f, \"vecadd_plain_us\": %.1f, \"vecadd_host_threads\": %u, \"vecadd_ratio\": %.3f, \"vecadd_plain_ratio\": %.3f, \"reps\": %u, \"elems_per_dpu\": %u}\n",
				o1, n1, o4, n4, dus, hus, pus, nthreads, dus > 0 ? hus / dus : 0,
				dus > 0 ? pus / dus : 0, reps, elems);
			fclose(f);
		}
	}
	return ok ? 0 : 1;
}
