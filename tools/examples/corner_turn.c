// SPDX-License-Identifier: MIT
/*
 * corner_turn - the corner turn with dri.h: an N x N float matrix spread
 * over 64 DPUs by rows (row blocks, row-major in MRAM) is redistributed
 * by columns with a transposed layout (each DPU then holds its columns as
 * rows), then every element of every DPU is checked (seed 001).  The
 * benchmark against the guest's transpose is tools/bench/dri_bench.
 *
 * MRAM: the row block at 0, the column block at COLS_OFF.
 *
 * usage: corner_turn [--n N] [--dpus D]
 * Exit status: 0 if every element is where it must be, 1 otherwise.
 */
#include <dri.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLS_OFF (32u << 20)

#define CHECK(call)                                                          \
	do {                                                                 \
		if (call) {                                                  \
			fprintf(stderr, "corner_turn: %s failed\n", #call);  \
			return 1;                                            \
		}                                                            \
	} while (0)

int main(int argc, char **argv)
{
	uint64_t n = 512, i, j, lo[1], hi[1];
	uint32_t ndpus = 64, d;
	DRI_Tuple rows_t[2] = { { .kind = DRI_BLOCK }, { .kind = DRI_WHOLE } };
	DRI_Tuple cols_t[2] = { { .kind = DRI_WHOLE }, { .kind = DRI_BLOCK } };
	int transposed[2] = { 1, 0 };
	DRI_Globaldata g;
	DRI_Partition prow, pcol;
	DRI_Group grows, gcols;
	DRI_Distribution rows, cols;
	DRI_Layout lt;
	DRI_Transfer load, turn;
	struct dpu_set_t set, dpu;
	float *a, *blk;
	void *abuf[1];
	char profile[96];
	uint64_t bad = 0;
	int k;

	for (k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--n") && k + 1 < argc)
			n = strtoull(argv[++k], NULL, 10);
		else if (!strcmp(argv[k], "--dpus") && k + 1 < argc)
			ndpus = (uint32_t)strtoul(argv[++k], NULL, 10);
		else {
			fprintf(stderr, "usage: corner_turn [--n N] [--dpus D]\n");
			return 2;
		}
	}
	if (!n || !ndpus || n * n * 4 / ndpus > COLS_OFF)
		return 2;
	a = malloc(n * n * sizeof(float));
	blk = malloc(n * n * sizeof(float));
	if (!a || !blk)
		return 1;
	for (i = 0; i < n * n; i++)
		a[i] = (float)i;
	abuf[0] = a;
	/* a transposed block is a block per element */
	snprintf(profile, sizeof(profile), "sgXferEnable=true,sgXferMaxBlocksPerDpu=%llu",
		 (unsigned long long)(n * ((n + ndpus - 1) / ndpus) + 64));
	CHECK(dpu_alloc(ndpus, profile, &set) != DPU_OK);
	CHECK(DRI_gdo_create(2, DRI_FLOAT, (uint64_t[2]){ n, n }, &g));
	CHECK(DRI_part_create(2, rows_t, &prow));
	CHECK(DRI_part_create(2, cols_t, &pcol));
	CHECK(DRI_group_create(set, 2, (uint32_t[2]){ ndpus, 1 }, &grows));
	CHECK(DRI_group_create(set, 2, (uint32_t[2]){ 1, ndpus }, &gcols));
	CHECK(DRI_dist_create(g, prow, grows, &rows));
	CHECK(DRI_dist_create(g, pcol, gcols, &cols));
	CHECK(DRI_layout_create(2, transposed, &lt));
	CHECK(DRI_xfer_create("load", rows, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, abuf,
			      DRI_TO_DPUS, &load));
	CHECK(DRI_redist_create("turn", rows, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, cols, lt,
				DPU_MRAM_HEAP_POINTER_NAME, COLS_OFF, 0, &turn));
	CHECK(DRI_do("load", load));
	CHECK(DRI_do("turn", turn));
	/* every DPU holds its columns as rows: element (c, i) = A[i][c] */
	DPU_FOREACH(set, dpu, d) {
		uint64_t w, bytes;

		if (DRI_dist_ranges(cols, d, 1, 0, lo, hi, 1) != 1)
			continue;
		w = hi[0] - lo[0];
		bytes = (w * n * sizeof(float) + 7) & ~7ULL;
		CHECK(dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, COLS_OFF, blk, bytes) != DPU_OK);
		for (j = 0; j < w; j++)
			for (i = 0; i < n; i++)
				bad += blk[j * n + i] != a[i * n + lo[0] + j];
	}
	printf("corner turn of a %llu x %llu float matrix over %u DPUs (rows -> transposed columns)\n",
	       (unsigned long long)n, (unsigned long long)n, ndpus);
	printf("%llu elements checked on the DPUs: %s\n", (unsigned long long)(n * n),
	       bad ? "MISMATCH" : "all where they must be");
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
	free(a);
	free(blk);
	return bad ? 1 : 0;
}
