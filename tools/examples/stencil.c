// SPDX-License-Identifier: MIT
/*
 * stencil - a 2-D Jacobi stencil with dri.h: the DPUs compute, the host
 * refreshes their halos between launches.
 *
 * An H x W float grid (fixed values on its boundary) is cut in blocks
 * over a P x Q grid of DPUs (DRI_BLOCK in both dimensions, overlap 1 on
 * every side: the halo a 5-point stencil reads).  The host
 *   1. scatters every block with its halo to MRAM block A of its DPU
 *      (DRI_xfer_create(... DRI_TO_DPUS | DRI_OVERLAP));
 *   2. tells each DPU its block's shape and the box of elements it
 *      updates: the ones it owns, less those on the grid's boundary.  Both
 *      come from DRI_dist_ranges, with and without the overlap; the
 *      per-DPU values go to the __host variable geom in one
 *      dpu_prepare_xfer/dpu_push_xfer;
 *   3. then, K times: dpu_launch (each DPU sets every element of its box
 *      to 0.25f * ((up + down) + (left + right)) from A's old values:
 *      A -> B, a barrier, the box of B copied back into A; see
 *      tools/examples/dpu/stencil.c), and DRI_do of a halo refresh
 *      (DRI_halo_create): the owned elements of every block gathered, the
 *      blocks scattered back with their halos, so that each halo holds its
 *      neighbours' new values;
 *   4. gathers the owned elements of every A (DRI_FROM_DPUS | DRI_OVERLAP:
 *      the halos are not read back) and compares the grid bit for bit with
 *      the same K sweeps done on the host in the same arithmetic order.
 *
 * MRAM: A at DPU_MRAM_HEAP_POINTER_NAME + 0 (the block with its halo, as
 * the DRI transfers lay it out: row-major, packed), B, the DPU's own,
 * right after it.  Only A is the host's: B never crosses to the host, so
 * one halo transfer serves every iteration.
 *
 * usage: stencil [--h H] [--w W] [--p P] [--q Q] [--iters K] [--dpu-program F]
 *   defaults: 256 x 256 floats over 8 x 8 DPUs, 10 iterations, the DPU
 *   program build/examples/dpu/stencil (run from the repository's root).
 * Exit status: 0 if every element matches, 1 on a mismatch or an error,
 * 2 on bad usage.
 */
#include <dri.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* This DPU's block (the DPU program's struct stencil_geom: keep the two in step) */
struct stencil_geom {
	uint32_t rows, cols;		/* of the block with its halo */
	uint32_t row_lo, row_hi;	/* the box to compute: local rows [lo, hi) */
	uint32_t col_lo, col_hi;	/* and local columns [lo, hi) */
};

#define CHECK(call)                                                      \
	do {                                                             \
		if (call) {                                              \
			fprintf(stderr, "stencil: %s failed\n", #call);  \
			return 1;                                        \
		}                                                        \
	} while (0)

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !v || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* Deterministic start: a hash in [-1, 1) inside, fixed values on the boundary */
static void init_grid(float *g, uint32_t h, uint32_t w)
{
	uint32_t i, j, x;

	for (i = 0; i < h; i++)
		for (j = 0; j < w; j++) {
			x = i * 2654435761u ^ (j + 0x9e37u) * 40503u;
			x ^= x >> 15;
			x *= 2246822519u;
			x ^= x >> 13;
			g[(size_t)i * w + j] = (float)(x >> 8) / (1 << 23) - 1.0f;
			if (i == 0)
				g[(size_t)i * w + j] = 1.0f;
			else if (i == h - 1)
				g[(size_t)i * w + j] = -1.0f;
			else if (j == 0)
				g[(size_t)i * w + j] = 0.5f;
			else if (j == w - 1)
				g[(size_t)i * w + j] = -0.5f;
		}
}

/*
 * The host's reference: @iters Jacobi sweeps of @a (boundary fixed), with
 * @tmp (a copy of @a) as the other buffer.  The result is in the returned one.
 */
static float *jacobi(float *a, float *tmp, uint32_t h, uint32_t w, uint32_t iters)
{
	uint32_t k, i, j;
	float *t;

	for (k = 0; k < iters; k++) {
		for (i = 1; i + 1 < h; i++)
			for (j = 1; j + 1 < w; j++) {
				const float *m = a + (size_t)i * w + j;

				tmp[(size_t)i * w + j] = 0.25f * ((m[-(ptrdiff_t)w] + m[w]) +
								   (m[-1] + m[1]));
			}
		t = a;
		a = tmp;
		tmp = t;
	}
	return a;
}

/* One dimension of DPU @d's block: its extent with the halo and its box */
static int block_dim(DRI_Distribution dist, uint32_t d, int dim, uint64_t n,
		     uint32_t *extent, uint32_t *lo, uint32_t *hi)
{
	uint64_t olo, ohi, own_lo, own_hi, first, last;

	if (DRI_dist_ranges(dist, d, dim, 1, &olo, &ohi, 1) != 1 ||
	    DRI_dist_ranges(dist, d, dim, 0, &own_lo, &own_hi, 1) != 1)
		return -1;
	/* the grid's first and last elements keep their values */
	first = own_lo > 0 ? own_lo : 1;
	last = own_hi < n - 1 ? own_hi : n - 1;
	*extent = (uint32_t)(ohi - olo);
	*lo = (uint32_t)(first - olo);
	*hi = last > first ? (uint32_t)(last - olo) : *lo;
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t h = 256, w = 256, p = 8, q = 8, iters = 10, ndpus, d, k;
	const char *dpu_program = "build/examples/dpu/stencil";
	DRI_Tuple t[2] = {
		{ .kind = DRI_BLOCK, .left_overlap = 1, .right_overlap = 1, .min = 1 },
		{ .kind = DRI_BLOCK, .left_overlap = 1, .right_overlap = 1, .min = 1 },
	};
	DRI_Globaldata g;
	DRI_Partition part;
	DRI_Group group;
	DRI_Distribution dist;
	DRI_Transfer scatter, halo, gather;
	struct dpu_set_t set, dpu;
	struct dpu_program_t *prog;
	struct dpu_symbol_t heap;
	struct stencil_geom *geom;
	float *grid, *ref, *tmp, *res, *out;
	void *grid_buf[1], *out_buf[1];
	uint64_t mram = 0, need, max_blocks, bad = 0, first_bad = 0, n, e;
	double t0, t_scatter, t_launch = 0, t_halo = 0, t_gather;
	char profile[96];
	int i;

	for (i = 1; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		uint32_t *dst = !strcmp(opt, "--h") ? &h : !strcmp(opt, "--w") ? &w :
				!strcmp(opt, "--p") ? &p : !strcmp(opt, "--q") ? &q :
				!strcmp(opt, "--iters") ? &iters : NULL;

		if (!strcmp(opt, "--dpu-program") && val)
			dpu_program = val;
		else if (!dst || parse_u32(val, dst)) {
			fprintf(stderr, "usage: stencil [--h H] [--w W] [--p P] [--q Q] [--iters K] [--dpu-program F]\n"
				"  an H x W float grid (default 256 x 256) over P x Q DPUs (8 x 8), K iterations (10)\n");
			return 2;
		}
		i++;
	}
	if (p > h || q > w || (uint64_t)p * q > UINT32_MAX) {
		fprintf(stderr, "stencil: %u x %u DPUs for %u x %u elements: every DPU needs a row and a column\n",
			p, q, h, w);
		return 2;
	}
	ndpus = p * q;
	n = (uint64_t)h * w;
	grid = malloc(n * sizeof(float));
	ref = malloc(n * sizeof(float));
	tmp = malloc(n * sizeof(float));
	out = malloc(n * sizeof(float));
	geom = calloc(ndpus, sizeof(*geom));
	if (!grid || !ref || !tmp || !out || !geom)
		return 1;
	init_grid(grid, h, w);
	grid_buf[0] = grid;
	out_buf[0] = out;

	/*
	 * Scatter/gather blocks per DPU: a block with its halo is a run per
	 * row; a gather of the owned elements out of it is up to three per
	 * row (left halo, owned, right halo), the halo rows one each.
	 */
	max_blocks = 3 * ((uint64_t)h / p + 3) + 2;
	snprintf(profile, sizeof(profile), "sgXferEnable=true,sgXferMaxBlocksPerDpu=%" PRIu64,
		 max_blocks);
	CHECK(dpu_alloc(ndpus, profile, &set) != DPU_OK);
	CHECK(dpu_load(set, dpu_program, &prog) != DPU_OK);
	CHECK(dpu_get_symbol(prog, DPU_MRAM_HEAP_POINTER_NAME, &heap) != DPU_OK);

	CHECK(DRI_gdo_create(2, DRI_FLOAT, (uint64_t[2]){ h, w }, &g));
	CHECK(DRI_part_create(2, t, &part));
	CHECK(DRI_group_create(set, 2, (uint32_t[2]){ p, q }, &group));
	CHECK(DRI_dist_create(g, part, group, &dist));

	/* Every DPU's geometry, from its ranges with and without the halo */
	for (d = 0; d < ndpus; d++) {
		CHECK(block_dim(dist, d, 0, h, &geom[d].rows, &geom[d].row_lo, &geom[d].row_hi));
		CHECK(block_dim(dist, d, 1, w, &geom[d].cols, &geom[d].col_lo, &geom[d].col_hi));
		/* A, then B: rows padded to an even number of floats */
		need = ((DRI_dist_local_bytes(dist, d, 1) + 7) & ~7ull) +
		       (uint64_t)geom[d].rows * ((geom[d].cols + 1) & ~1u) * sizeof(float);
		if (need > mram)
			mram = need;
	}
	if (mram > heap.size) {
		fprintf(stderr, "stencil: blocks A and B need %" PRIu64 " bytes of MRAM, a DPU has %" PRIu64 "\n",
			mram, (uint64_t)heap.size);
		return 2;
	}
	DPU_FOREACH(set, dpu, d)
		CHECK(dpu_prepare_xfer(dpu, &geom[d]) != DPU_OK);
	CHECK(dpu_push_xfer(set, DPU_XFER_TO_DPU, "geom", 0, sizeof(*geom), DPU_XFER_DEFAULT) !=
	      DPU_OK);

	CHECK(DRI_xfer_create("scatter", dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, grid_buf,
			      DRI_TO_DPUS | DRI_OVERLAP, &scatter));
	CHECK(DRI_halo_create("halo", dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, &halo));
	CHECK(DRI_xfer_create("gather", dist, NULL, DPU_MRAM_HEAP_POINTER_NAME, 0, 1, out_buf,
			      DRI_FROM_DPUS | DRI_OVERLAP, &gather));

	t0 = now_ms();
	CHECK(DRI_do("scatter", scatter));
	t_scatter = now_ms() - t0;
	for (k = 0; k < iters; k++) {
		t0 = now_ms();
		CHECK(dpu_launch(set, DPU_SYNCHRONOUS) != DPU_OK);
		t_launch += now_ms() - t0;
		t0 = now_ms();
		CHECK(DRI_do("halo", halo));
		t_halo += now_ms() - t0;
	}
	/* NaN everywhere first: an element the gather missed cannot match */
	memset(out, 0xff, n * sizeof(float));
	t0 = now_ms();
	CHECK(DRI_do("gather", gather));
	t_gather = now_ms() - t0;

	memcpy(ref, grid, n * sizeof(float));
	memcpy(tmp, grid, n * sizeof(float));
	res = jacobi(ref, tmp, h, w, iters);
	for (e = 0; e < n; e++)
		if (memcmp(&out[e], &res[e], sizeof(float)) && !bad++)
			first_bad = e;

	printf("stencil: %u x %u floats over %u x %u = %u DPUs (blocks of up to %u x %u, halo 1), %u iterations\n",
	       h, w, p, q, ndpus, (h + p - 1) / p, (w + q - 1) / q, iters);
	printf("  scatter %.2f ms; per iteration: launch %.2f ms, halo refresh %.2f ms; gather %.2f ms\n",
	       t_scatter, t_launch / iters, t_halo / iters, t_gather);
	if (!bad)
		printf("  all %" PRIu64 " elements match the host's Jacobi, bit for bit\n", n);
	else
		printf("  MISMATCH: %" PRIu64 " of %" PRIu64 " elements differ; the first, (%" PRIu64 ", %" PRIu64 "): DPUs %.9g, host %.9g\n",
		       bad, n, first_bad / w, first_bad % w, out[first_bad],
		       res[first_bad]);

	DRI_xfer_destroy(gather);
	DRI_xfer_destroy(halo);
	DRI_xfer_destroy(scatter);
	DRI_dist_destroy(dist);
	DRI_group_destroy(group);
	DRI_part_destroy(part);
	DRI_gdo_destroy(g);
	dpu_free(set);
	free(grid);
	free(ref);
	free(tmp);
	free(out);
	free(geom);
	return bad ? 1 : 0;
}
