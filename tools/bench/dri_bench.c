// SPDX-License-Identifier: MIT
/*
 * dri_bench - the DRI figure of shared/design/performance.md: the corner
 * turn of an N x N float matrix over 64 DPUs (row blocks turned into
 * column blocks with a transposed layout, DRI_redist_create + DRI_do)
 * against a transpose of the same matrix in the guest (32 x 32 tiles;
 * target: ratio guest / turn >= 0.5).  For scale it also times a memcpy
 * of the matrix row by row (one read and one write of every byte, the
 * bandwidth limit).
 *
 * Per size, each repetition times one turn, one guest transpose and one
 * memcpy in turn, and the turn's two halves alone: the gather of the rows
 * into a host array and the (packed, transposing) scatter of an array to
 * the columns; medians of --reps.  After the runs every element of
 * every DPU is checked: a wrong turn exits 1.  Besides the ratio of the
 * medians it prints the median of the repetitions' own ratios (a turn and
 * the transpose after it), and DRI_BENCH_DEBUG=1 prints each repetition.
 * Each repetition also samples what the guest's second CPU adds
 * (capacity.h): the turn packs and copies on two CPUs, the transpose runs
 * on one.
 *
 * usage: dri_bench [--n N[,N...]] [--dpus D] [--reps R] [--json FILE]
 */
#include <dri.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capacity.h"

#define COLS_OFF (32u << 20)
#define MAX_SIZES 8

/* The guest's transpose: 32 x 32 tiles */
static void transpose(const float *a, float *b, uint64_t n)
{
	uint64_t i0, j0, i, j;

	for (i0 = 0; i0 < n; i0 += 32)
		for (j0 = 0; j0 < n; j0 += 32)
			for (i = i0; i < i0 + 32 && i < n; i++)
				for (j = j0; j < j0 + 32 && j < n; j++)
					b[j * n + i] = a[i * n + j];
}

struct result {
	uint64_t n;
	double turn_us, transpose_us, memcpy_us, gather_us, scatter_us;
	double paired;		/* median of the repetitions' own ratios */
	double capacity;	/* of the guest's second CPU (capacity.h) */
	uint64_t bad;
};

static int run(uint64_t n, uint32_t ndpus, unsigned int reps, struct bench_cap *cap,
	       struct result *res)
{
	DRI_Tuple rows_t[2] = { { .kind = DRI_BLOCK }, { .kind = DRI_WHOLE } };
	DRI_Tuple cols_t[2] = { { .kind = DRI_WHOLE }, { .kind = DRI_BLOCK } };
	DRI_Globaldata g = NULL;
	DRI_Partition prow = NULL, pcol = NULL;
	DRI_Group grows = NULL, gcols = NULL;
	DRI_Distribution rows = NULL, cols = NULL;
	DRI_Layout lt = NULL;
	DRI_Transfer load = NULL, turn = NULL, gat = NULL, sct = NULL;
	double *tt = calloc(reps, sizeof(double)), *th = calloc(reps, sizeof(double));
	double *tm = calloc(reps, sizeof(double)), t;
	double *tg = calloc(reps, sizeof(double)), *ts = calloc(reps, sizeof(double));
	double *tr = calloc(reps, sizeof(double));
	float *a = malloc(n * n * sizeof(float)), *b = malloc(n * n * sizeof(float));
	float *blk = malloc(n * ((n + ndpus - 1) / ndpus) * sizeof(float) + 8);
	uint64_t i, j, lo[1], hi[1], w, bytes;
	struct dpu_set_t set, dpu;
	void *abuf[1] = { a }, *bbuf[1] = { b };
	int transposed[2] = { 1, 0 }, rc = -1;
	char profile[96];
	unsigned int r;
	uint32_t d;

	if (!tt || !th || !tm || !tg || !ts || !tr || !a || !b || !blk)
		goto out_free;
	for (i = 0; i < n * n; i++)
		a[i] = (float)i;
	snprintf(profile, sizeof(profile), "sgXferEnable=true,sgXferMaxBlocksPerDpu=%llu",
		 (unsigned long long)(n * ((n + ndpus - 1) / ndpus) + 64));
	if (dpu_alloc(ndpus, profile, &set) != DPU_OK)
		goto out_free;
	if (DRI_gdo_create(2, DRI_FLOAT, (uint64_t[2]){ n, n }, &g) ||
	    DRI_part_create(2, rows_t, &prow) || DRI_part_create(2, cols_t, &pcol) ||
	    DRI_group_create(set, 2, (uint32_t[2]){ ndpus, 1 }, &grows) ||
	    DRI_group_create(set, 2, (uint32_t[2]){ 1, ndpus }, &gcols) ||
	    DRI_dist_create(g, prow, grows, &rows) || DRI_dist_create(g, pcol, gcols, &cols) ||
	    DRI_layout_create(2, transposed, &lt) ||
	    DRI_xfer_create("load", rows, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, abuf,
			    DRI_TO_DPUS, &load) ||
	    DRI_redist_create("turn", rows, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, cols, lt,
			      DPU_MRAM_HEAP_POINTER_NAME, COLS_OFF, 0, &turn) ||
	    DRI_xfer_create("gather", rows, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, bbuf,
			    DRI_FROM_DPUS, &gat) ||
	    DRI_xfer_create("scatter", cols, lt, DPU_MRAM_HEAP_POINTER_NAME, COLS_OFF, 1, abuf,
			    DRI_TO_DPUS, &sct) ||
	    DRI_do("load", load))
		goto out;
	/* once untimed: the first touch of the MRAM pages and of b */
	if (DRI_do("turn", turn))
		goto out;
	transpose(a, b, n);
	for (r = 0; r < reps; r++) {
		bench_cap_sample(cap);
		t = bench_now_us();
		if (DRI_do("turn", turn))
			goto out;
		tt[r] = bench_now_us() - t;
		t = bench_now_us();
		transpose(a, b, n);
		th[r] = bench_now_us() - t;
		t = bench_now_us();
		for (i = 0; i < n; i++)
			memcpy(b + i * n, a + i * n, n * sizeof(float));
		tm[r] = bench_now_us() - t;
		t = bench_now_us();
		if (DRI_do("gather", gat))
			goto out;
		tg[r] = bench_now_us() - t;
		t = bench_now_us();
		if (DRI_do("scatter", sct))
			goto out;
		ts[r] = bench_now_us() - t;
	}
	res->n = n;
	if (getenv("DRI_BENCH_DEBUG"))
		for (r = 0; r < reps; r++)
			fprintf(stderr, "N %llu rep %u: turn %.0f transpose %.0f ratio %.2f\n",
				(unsigned long long)n, r, tt[r], th[r], th[r] / tt[r]);
	for (r = 0; r < reps; r++)
		tr[r] = th[r] / tt[r];
	res->paired = bench_median(tr, reps);
	res->turn_us = bench_median(tt, reps);
	res->transpose_us = bench_median(th, reps);
	res->memcpy_us = bench_median(tm, reps);
	res->gather_us = bench_median(tg, reps);
	res->scatter_us = bench_median(ts, reps);
	res->capacity = bench_cap_value(cap);
	res->bad = 0;
	/* every DPU holds its columns as rows: element (c, i) = A[i][c] */
	DPU_FOREACH(set, dpu, d) {
		if (DRI_dist_ranges(cols, d, 1, 0, lo, hi, 1) != 1)
			continue;
		w = hi[0] - lo[0];
		bytes = (w * n * sizeof(float) + 7) & ~7ULL;
		if (dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, COLS_OFF, blk, bytes) != DPU_OK)
			goto out;
		for (j = 0; j < w; j++)
			for (i = 0; i < n; i++)
				res->bad += blk[j * n + i] != a[i * n + lo[0] + j];
	}
	rc = 0;
out:
	DRI_xfer_destroy(sct);
	DRI_xfer_destroy(gat);
	DRI_xfer_destroy(turn);
	DRI_xfer_destroy(load);
	DRI_layout_destroy(lt);
	DRI_dist_destroy(cols);
	DRI_dist_destroy(rows);
	DRI_group_destroy(gcols);
	DRI_group_destroy(grows);
	DRI_part_destroy(pcol);
	DRI_part_destroy(prow);
	DRI_gdo_destroy(g);
	dpu_free(set);
out_free:
	free(tt);
	free(th);
	free(tm);
	free(tg);
	free(ts);
	free(tr);
	free(a);
	free(b);
	free(blk);
	return rc;
}

int main(int argc, char **argv)
{
	uint64_t sizes[MAX_SIZES] = { 512, 1024, 2048, 4096 };
	unsigned int nsizes = 4, reps = 7, k;
	struct result res[MAX_SIZES];
	struct bench_cap cap;
	const char *json = NULL;
	uint32_t ndpus = 64;
	int a, r, failed = 0;
	char *s, *e;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--n") && a + 1 < argc) {
			for (nsizes = 0, s = argv[++a]; *s && nsizes < MAX_SIZES; s = *e ? e + 1 : e) {
				sizes[nsizes] = strtoull(s, &e, 10);
				if (e == s || !sizes[nsizes] || (*e && *e != ','))
					goto usage;
				nsizes++;
			}
		} else if (!strcmp(argv[a], "--dpus") && a + 1 < argc) {
			ndpus = (uint32_t)strtoul(argv[++a], NULL, 10);
		} else if (!strcmp(argv[a], "--reps") && a + 1 < argc) {
			reps = (unsigned int)strtoul(argv[++a], NULL, 10);
		} else if (!strcmp(argv[a], "--json") && a + 1 < argc) {
			json = argv[++a];
		} else {
			goto usage;
		}
	}
	if (!nsizes || !ndpus || !reps)
		goto usage;
	for (k = 0; k < nsizes; k++)
		if (sizes[k] * sizes[k] * 4 / ndpus > COLS_OFF) {
			fprintf(stderr, "dri_bench: %llu x %llu floats do not fit %u DPUs\n",
				(unsigned long long)sizes[k], (unsigned long long)sizes[k], ndpus);
			return 2;
		}
	printf("corner turn over %u DPUs (rows -> transposed columns) vs the guest's transpose, median of %u:\n",
	       ndpus, reps);
	printf("  %6s %12s %14s %8s %8s %8s %12s %10s %10s %9s\n", "N", "turn us", "transpose us", "ratio",
	       "paired", "target", "memcpy us", "gather us", "scatter us", "capacity");
	for (k = 0; k < nsizes; k++) {
		if (bench_cap_init(&cap))
			return 1;
		r = run(sizes[k], ndpus, reps, &cap, &res[k]);
		bench_cap_free(&cap);
		if (r) {
			fprintf(stderr, "dri_bench: the run of N = %llu failed\n",
				(unsigned long long)sizes[k]);
			return 1;
		}
		printf("  %6llu %12.0f %14.0f %7.2f%s %7.2f%s %8s %12.0f %10.0f %10.0f %9.2f%s\n",
		       (unsigned long long)res[k].n, res[k].turn_us, res[k].transpose_us,
		       res[k].transpose_us / res[k].turn_us,
		       res[k].transpose_us / res[k].turn_us >= 0.5 ? " " : "*",
		       res[k].paired, res[k].paired >= 0.5 ? " " : "*", ">= 0.5",
		       res[k].memcpy_us, res[k].gather_us, res[k].scatter_us, res[k].capacity,
		       res[k].bad ? "  WRONG ELEMENTS" : "");
		failed |= !!res[k].bad;
	}
	printf("  * below target; every element of every DPU checked: %s\n",
	       failed ? "MISMATCH" : "all where they must be");
	printf("  capacity: what this guest's second CPU added while the row ran (capacity.h; 2.00 = two\n"
	       "  whole CPUs): the turn packs and copies on two CPUs, the transpose runs on one\n");
	if (json) {
		FILE *f = fopen(json, "w");

		if (!f) {
			perror(json);
			return 1;
		}
		fprintf(f, "{\"benchmark\": \"dri_bench\", \"dpus\": %u, \"reps\": %u, \"rows\": [", ndpus,
			reps);
		for (k = 0; k < nsizes; k++)
			fprintf(f, "%s\n  {\"n\": %llu, \"turn_us\": %.1f, \"transpose_us\": %.1f, \"memcpy_us\": %.1f, \"gather_us\": %.1f, \"scatter_us\": %.1f, \"ratio\": %.3f, \"paired_ratio\": %.3f, \"target\": 0.5, \"capacity\": %.3f, \"wrong_elements\": %llu}",
				k ? "," : "", (unsigned long long)res[k].n, res[k].turn_us,
				res[k].transpose_us, res[k].memcpy_us, res[k].gather_us,
				res[k].scatter_us, res[k].transpose_us / res[k].turn_us,
				res[k].paired, res[k].capacity, (unsigned long long)res[k].bad);
		fprintf(f, "\n]}\n");
		fclose(f);
	}
	return failed;
usage:
	fprintf(stderr, "usage: dri_bench [--n N[,N...]] [--dpus D] [--reps R] [--json FILE]\n");
	return 2;
}
