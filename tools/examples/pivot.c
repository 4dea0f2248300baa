// SPDX-License-Identifier: MIT
/*
 * pivot - UPMEM's scatter/gather "pivot" example (seed 000-upmem-sg-xfer),
 * on dpusim.
 *
 * Every DPU holds a slice of an int buffer in its MRAM and partitions it
 * around a pivot: elements < pivot on the left, > pivot on the right, and
 * the two lengths in a small metadata record after the buffer. The DPU
 * side is a real DPU program (tools/examples/dpu/pivot.c, built by
 * dpusim-cc into build/examples/dpu/pivot) run with dpu_launch.
 *
 * The host part is the seed's: read every DPU's metadata, compute where
 * each DPU's left part goes in one contiguous host array of all left parts
 * (and the same for the right parts), and bring everything home with ONE
 * dpu_push_sg_xfer(DPU_XFER_FROM_DPU) driven by the seed's get_block and
 * sg_xfer_context (metadata + block_addresses). Each DPU has NB_BLOCKS = 2
 * blocks (left, right) whose lengths differ from DPU to DPU but always add
 * up to the slice, so the default length check holds; only when the slice
 * is not a multiple of 8 bytes (odd element count) is the transfer length
 * (rounded up to 8 bytes, as MRAM transfers must be) longer than the
 * blocks, and DPU_SG_XFER_DISABLE_LENGTH_CHECK is passed so that only the
 * blocks' bytes are written to the host.
 *
 * Then the offset-rotated variant of the seed's "Performance" section: a
 * random offset per DPU (in 0 .. NB_BLOCKS-1) is written to the DPU, the
 * "DPU" stores its blocks rotated by it (block (i + offset) % NB_BLOCKS at
 * the i-th place), and get_block maps block_index the same way.
 *
 * MRAM layout, all inside DPU_MRAM_HEAP_POINTER_NAME (the whole MRAM):
 *   [0, BUF)           the slice: elements_per_dpu ints, BUF = round8(4 n)
 *   [BUF, BUF + 8)     metadata written by the DPU: left, right (uint32)
 *   [BUF + 8, BUF + 16) parameters written by the host: offset (uint32), pad
 *
 * The input never contains the pivot itself, so left + right = n.
 *
 * usage: pivot [--dpus N] [--elements-per-dpu N] [--seed S] [--dpu-program F]
 * Exit status: 0 if both variants gathered exactly the expected arrays,
 * 1 on a mismatch or a DPU error, 2 on bad usage.
 */
#include <dpu.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NB_BLOCKS 2	/* left part, right part */

#define META_BYTES 8	/* uint32 left, right: written by the DPU */
#define PARAM_BYTES 8	/* uint32 offset, pad: written by the host */

/* ------------------------------------------------------------ the seed's */

/* User structure that stores the get_block function arguments */
typedef struct sg_xfer_context {
	size_t **metadata;		/* [in] array of block lengths */
	uint8_t ***block_addresses;	/* [in] indexes to store the next block */
	size_t *offsets;		/* [in] offsets per DPU (rotated variant) */
} sg_xfer_context;

/*
 * Callback function that returns the block information for a given DPU and
 * block index (the seed's get_block).
 */
static bool get_block(struct sg_block_info *out, uint32_t dpu_index,
		      uint32_t block_index, void *args)
{
	if (block_index >= NB_BLOCKS)
		return false;

	/* Unpack the arguments */
	sg_xfer_context *sc_args = (sg_xfer_context *)args;
	size_t **metadata = sc_args->metadata;
	uint8_t ***block_addresses = sc_args->block_addresses;

	/* Set the output block */
	size_t length = metadata[dpu_index][block_index];
	out->length = (uint32_t)(length * sizeof(int));
	out->addr = block_addresses[dpu_index][block_index];
	return true;
}

/* The seed's offset-rotated get_block (its "Performance" section). */
static bool get_block_rotated(struct sg_block_info *out, uint32_t dpu_index,
			      uint32_t block_index, void *args)
{
	if (block_index >= NB_BLOCKS)
		return false;

	/* Unpack the arguments */
	sg_xfer_context *sc_args = (sg_xfer_context *)args;
	size_t **metadata = sc_args->metadata;
	uint8_t ***block_addresses = sc_args->block_addresses;
	size_t *offsets = sc_args->offsets;

	/* Offset index */
	block_index = (uint32_t)((block_index + offsets[dpu_index]) % NB_BLOCKS);

	/* Set the output block */
	size_t length = metadata[dpu_index][block_index];
	out->length = (uint32_t)(length * sizeof(int));
	out->addr = block_addresses[dpu_index][block_index];
	return true;
}

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state;

/* splitmix64: deterministic for a given --seed on every libc. */
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p) {
		fprintf(stderr, "pivot: out of memory\n");
		exit(EXIT_FAILURE);
	}
	return p;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pivot [--dpus N] [--elements-per-dpu N] [--seed S] [--dpu-program F]\n"
		"  --dpus N              DPUs to allocate (default: all free ranks)\n"
		"  --elements-per-dpu N  ints per DPU (default 4096, max %u)\n"
		"  --seed S              input seed (default 1)\n"
		"  --dpu-program F       the DPU program (default build/examples/dpu/pivot)\n",
		1U << 22);
}

/* ------------------------------------------------------------ the run */

struct pivot_run {
	struct dpu_set_t set;
	uint32_t nr_dpus;
	size_t n;		/* elements per DPU */
	size_t buf_bytes;	/* round8(n * sizeof(int)) */
	int pivot;
	int **input;		/* [dpu] n ints (buf_bytes allocated) */
	int *expect_left;	/* left parts of DPU 0, 1, ... concatenated */
	int *expect_right;
	size_t total_left, total_right;
};

/*
 * The DPU program of the seed (tools/examples/dpu/pivot.c, built by
 * dpusim-cc) partitions every DPU's slice in its MRAM: it reads the
 * host-written offset, writes the two blocks in the order the offset says
 * (block (i + offset) % NB_BLOCKS at the i-th place) and the metadata
 * (left and right lengths).
 */
static void run_dpus(struct pivot_run *r)
{
	uint32_t n = (uint32_t)r->n;
	int32_t pivot = r->pivot;

	DPU_ASSERT(dpu_broadcast_to(r->set, "nr_elements", 0, &n, sizeof(n),
				    DPU_XFER_DEFAULT));
	DPU_ASSERT(dpu_broadcast_to(r->set, "pivot", 0, &pivot, sizeof(pivot),
				    DPU_XFER_DEFAULT));
	DPU_ASSERT(dpu_launch(r->set, DPU_SYNCHRONOUS));
}

/* Count the elements of a that differ from b; print the first few. */
static size_t compare(const char *what, const int *a, const int *b, size_t n)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++) {
		if (a[i] == b[i])
			continue;
		if (bad++ < 5)
			fprintf(stderr, "pivot: %s[%zu] = %d, expected %d\n",
				what, i, a[i], b[i]);
	}
	return bad;
}

/*
 * One variant: write the slices and the offsets, let the "DPUs" partition,
 * then the seed's host part: metadata, block addresses, one scatter/gather
 * transfer, validation. Returns the number of problems found.
 */
static size_t run_variant(struct pivot_run *r, bool rotated)
{
	const char *name = rotated ? "rotated" : "plain";
	struct dpu_set_t dpu;
	uint32_t i, nr_rotated = 0;
	size_t bad = 0, k, sum_left = 0, sum_right = 0;
	uint32_t (*raw_meta)[2] = xcalloc(r->nr_dpus, sizeof(*raw_meta));
	size_t *offsets = xcalloc(r->nr_dpus, sizeof(*offsets));
	size_t **metadata = xcalloc(r->nr_dpus, sizeof(*metadata));
	uint8_t ***block_addresses = xcalloc(r->nr_dpus, sizeof(*block_addresses));
	int *left = xcalloc(r->total_left + 1, sizeof(int));
	int *right = xcalloc(r->total_right + 1, sizeof(int));
	int *all;
	dpu_sg_xfer_flags_t flags;

	/* The input slices, then each DPU's offset (0 for the plain variant). */
	DPU_FOREACH(r->set, dpu, i)
		DPU_ASSERT(dpu_prepare_xfer(dpu, r->input[i]));
	DPU_ASSERT(dpu_push_xfer(r->set, DPU_XFER_TO_DPU,
				 DPU_MRAM_HEAP_POINTER_NAME, 0, r->buf_bytes,
				 DPU_XFER_DEFAULT));
	DPU_FOREACH(r->set, dpu, i) {
		uint32_t param[2] = { 0, 0 };

		offsets[i] = rotated ? rng() % NB_BLOCKS : 0;
		nr_rotated += offsets[i] != 0;
		param[0] = (uint32_t)offsets[i];
		DPU_ASSERT(dpu_copy_to(dpu, DPU_MRAM_HEAP_POINTER_NAME,
				       (uint32_t)(r->buf_bytes + META_BYTES),
				       param, sizeof(param)));
	}

	run_dpus(r);

	/* Host part of the seed: every DPU's metadata, in one transfer. */
	DPU_FOREACH(r->set, dpu, i)
		DPU_ASSERT(dpu_prepare_xfer(dpu, raw_meta[i]));
	DPU_ASSERT(dpu_push_xfer(r->set, DPU_XFER_FROM_DPU,
				 DPU_MRAM_HEAP_POINTER_NAME,
				 (uint32_t)r->buf_bytes, META_BYTES,
				 DPU_XFER_DEFAULT));

	/* Left parts one after another in `left`, right parts in `right`. */
	for (i = 0; i < r->nr_dpus; i++) {
		metadata[i] = xcalloc(NB_BLOCKS, sizeof(size_t));
		block_addresses[i] = xcalloc(NB_BLOCKS, sizeof(uint8_t *));
		metadata[i][0] = raw_meta[i][0];
		metadata[i][1] = raw_meta[i][1];
		if (metadata[i][0] + metadata[i][1] != r->n ||
		    sum_left + metadata[i][0] > r->total_left ||
		    sum_right + metadata[i][1] > r->total_right) {
			fprintf(stderr, "pivot: %s: DPU %u: bad metadata left %zu right %zu\n",
				name, i, metadata[i][0], metadata[i][1]);
			exit(EXIT_FAILURE);
		}
		block_addresses[i][0] = (uint8_t *)(left + sum_left);
		block_addresses[i][1] = (uint8_t *)(right + sum_right);
		sum_left += metadata[i][0];
		sum_right += metadata[i][1];
	}
	/* Poison, so that a block the transfer skipped shows up. */
	for (k = 0; k < r->total_left; k++)
		left[k] = INT32_MIN;
	for (k = 0; k < r->total_right; k++)
		right[k] = INT32_MIN;

	/*
	 * One scatter/gather transfer for every DPU: the slice (rounded up to
	 * 8 bytes) goes to the DPU's two blocks. The blocks add up to n ints;
	 * when that is not a multiple of 8 bytes, the length check must go.
	 */
	sg_xfer_context sc_args = {
		.metadata = metadata,
		.block_addresses = block_addresses,
		.offsets = offsets,
	};
	get_block_t get_block_info = {
		.f = rotated ? get_block_rotated : get_block,
		.args = &sc_args,
		.args_size = sizeof(sc_args),
	};
	flags = r->n * sizeof(int) == r->buf_bytes ?
		DPU_SG_XFER_DEFAULT : DPU_SG_XFER_DISABLE_LENGTH_CHECK;
	DPU_ASSERT(dpu_push_sg_xfer(r->set, DPU_XFER_FROM_DPU,
				    DPU_MRAM_HEAP_POINTER_NAME, 0, r->buf_bytes,
				    &get_block_info, flags));

	/* Validate the partition. */
	if (sum_left != r->total_left || sum_right != r->total_right) {
		fprintf(stderr, "pivot: %s: DPUs report %zu + %zu elements, expected %zu + %zu\n",
			name, sum_left, sum_right, r->total_left, r->total_right);
		bad++;
	}
	for (k = 0; k < r->total_left; k++)
		if (!(left[k] < r->pivot) && bad++ < 5)
			fprintf(stderr, "pivot: %s: left[%zu] = %d is not < %d\n",
				name, k, left[k], r->pivot);
	for (k = 0; k < r->total_right; k++)
		if (!(right[k] > r->pivot) && bad++ < 5)
			fprintf(stderr, "pivot: %s: right[%zu] = %d is not > %d\n",
				name, k, right[k], r->pivot);
	/* Exactly what each DPU's stable partition gives, in DPU order ... */
	bad += compare(rotated ? "rotated left" : "plain left", left,
		       r->expect_left, r->total_left);
	bad += compare(rotated ? "rotated right" : "plain right", right,
		       r->expect_right, r->total_right);
	/* ... and, independently of that, the same multiset as the input. */
	all = xcalloc(r->nr_dpus * r->n + 1, sizeof(int));
	memcpy(all, left, r->total_left * sizeof(int));
	memcpy(all + r->total_left, right, r->total_right * sizeof(int));
	qsort(all, r->total_left + r->total_right, sizeof(int), cmp_int);
	{
		int *in = xcalloc(r->nr_dpus * r->n + 1, sizeof(int));

		for (i = 0; i < r->nr_dpus; i++)
			memcpy(in + (size_t)i * r->n, r->input[i], r->n * sizeof(int));
		qsort(in, r->nr_dpus * r->n, sizeof(int), cmp_int);
		if (r->total_left + r->total_right != r->nr_dpus * r->n ||
		    memcmp(in, all, r->nr_dpus * r->n * sizeof(int)) != 0) {
			fprintf(stderr, "pivot: %s: left + right is not the input multiset\n",
				name);
			bad++;
		}
		free(in);
	}

	printf("  %-7s  %zu left + %zu right elements, 1 dpu_push_sg_xfer(DPU_XFER_FROM_DPU, length %zu, %s)",
	       name, sum_left, sum_right, r->buf_bytes,
	       flags == DPU_SG_XFER_DEFAULT ? "DPU_SG_XFER_DEFAULT" :
					      "DPU_SG_XFER_DISABLE_LENGTH_CHECK");
	if (rotated)
		printf(", %u of %u DPUs rotated", nr_rotated, r->nr_dpus);
	printf(": %s\n", bad ? "MISMATCH" : "OK");

	free(all);
	for (i = 0; i < r->nr_dpus; i++) {
		free(metadata[i]);
		free(block_addresses[i]);
	}
	free(metadata);
	free(block_addresses);
	free(offsets);
	free(raw_meta);
	free(left);
	free(right);
	return bad;
}

int main(int argc, char **argv)
{
	struct pivot_run r = { .n = 4096 };
	uint64_t nr_dpus = DPU_ALLOCATE_ALL, seed = 1, v;
	const char *dpu_program = "build/examples/dpu/pivot";
	uint32_t nr_ranks, i;
	size_t bad = 0, k, l, rr;
	char profile[96];

	for (int a = 1; a < argc; a++) {
		const char *opt = argv[a], *val = a + 1 < argc ? argv[a + 1] : NULL;

		if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(opt, "--dpus") && parse_u64(val, UINT32_MAX, &v) && v) {
			nr_dpus = v;
		} else if (!strcmp(opt, "--elements-per-dpu") &&
			   parse_u64(val, 1U << 22, &v) && v) {
			r.n = v;
		} else if (!strcmp(opt, "--seed") && parse_u64(val, UINT64_MAX, &v)) {
			seed = v;
		} else if (!strcmp(opt, "--dpu-program") && val) {
			dpu_program = val;
		} else {
			fprintf(stderr, "pivot: bad option or value: %s%s%s\n", opt,
				val ? " " : "", val ? val : "");
			usage(stderr);
			return 2;
		}
		a++;
	}
	r.buf_bytes = (r.n * sizeof(int) + 7) & ~(size_t)7;
	rng_state = seed;

	/* Two blocks per DPU (left, right). */
	snprintf(profile, sizeof(profile),
		 "sgXferEnable=true, sgXferMaxBlocksPerDpu=%d", NB_BLOCKS);
	DPU_ASSERT(dpu_alloc((uint32_t)nr_dpus, profile, &r.set));
	DPU_ASSERT(dpu_get_nr_dpus(r.set, &r.nr_dpus));
	DPU_ASSERT(dpu_get_nr_ranks(r.set, &nr_ranks));
	DPU_ASSERT(dpu_load(r.set, dpu_program, NULL));

	/*
	 * The input: a pivot, and per DPU a share of elements below it drawn
	 * at random, so left lengths differ from DPU to DPU; DPU 0 has only
	 * left elements and DPU 1 only right ones (empty blocks).
	 */
	r.pivot = (int)(rng() % 2000001) - 1000000;
	r.input = xcalloc(r.nr_dpus, sizeof(*r.input));
	for (i = 0; i < r.nr_dpus; i++) {
		uint64_t share = i == 0 ? 1000 : i == 1 ? 0 : rng() % 1001;

		r.input[i] = xcalloc(r.buf_bytes, 1);
		for (k = 0; k < r.n; k++) {
			int d = 1 + (int)(rng() % (1U << 30));

			if (rng() % 1000 < share) {
				r.input[i][k] = r.pivot - d;
				r.total_left++;
			} else {
				r.input[i][k] = r.pivot + d;
				r.total_right++;
			}
		}
	}
	r.expect_left = xcalloc(r.total_left + 1, sizeof(int));
	r.expect_right = xcalloc(r.total_right + 1, sizeof(int));
	for (i = 0, l = 0, rr = 0; i < r.nr_dpus; i++)
		for (k = 0; k < r.n; k++) {
			if (r.input[i][k] < r.pivot)
				r.expect_left[l++] = r.input[i][k];
			else
				r.expect_right[rr++] = r.input[i][k];
		}

	printf("pivot: %u DPUs in %u rank%s x %zu elements, pivot %d, seed %" PRIu64 "\n",
	       r.nr_dpus, nr_ranks, nr_ranks == 1 ? "" : "s", r.n, r.pivot, seed);
	bad += run_variant(&r, false);
	bad += run_variant(&r, true);
	printf("pivot: %s\n", bad ? "FAILED" : "OK");

	DPU_ASSERT(dpu_free(r.set));
	for (i = 0; i < r.nr_dpus; i++)
		free(r.input[i]);
	free(r.input);
	free(r.expect_left);
	free(r.expect_right);
	return bad ? 1 : 0;
}
