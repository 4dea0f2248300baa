// SPDX-License-Identifier: MIT
/*
 * streams - the seed's EBSP streams example (seed 003) on dpusim, the DPUs
 * being the cores.
 *
 * For each of --dpus DPUs the host creates, as the seed does, a down-stream
 * of count = 256 floats in tokens of count_in_token = 32 (stream k for DPU
 * k), then an empty up-stream with room for 8 tokens of 100 ints (stream
 * dpus + k).  The DPU program (tools/examples/dpu/streams.c) moves the
 * floats down with preload, sums each token, and moves results up with the
 * seed's double-buffered move_up loop.  The host then reads every
 * up-stream through the pointer bsp_stream_create returned (EBSP's format:
 * prevsize, nextsize before every token) and checks each value against
 * its own sums.
 *
 * usage: streams [--dpus N] [--dpu-program FILE]
 * Exit status: 0 if every result matches, 1 otherwise, 2 on bad usage.
 */
#include <dpu.h>
#include <ebsp.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT 256
#define COUNT_IN_TOKEN 32
#define TOKENS (COUNT / COUNT_IN_TOKEN)
#define UP_INTS 100

int main(int argc, char **argv)
{
	const char *prog = "build/examples/dpu/streams";
	uint32_t nr = 4, k, i, t, bad = 0;
	const uint32_t **up;
	struct dpu_set_t set, dpu;
	float *data;
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--dpus") && a + 1 < argc)
			nr = (uint32_t)strtoul(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "--dpu-program") && a + 1 < argc)
			prog = argv[++a];
		else {
			fprintf(stderr, "usage: streams [--dpus N] [--dpu-program FILE]\n");
			return 2;
		}
	}
	if (!nr || nr > 64)
		return 2;
	data = malloc(nr * COUNT * sizeof(float));
	up = calloc(nr, sizeof(*up));
	if (!data || !up)
		return 1;
	if (dpu_alloc(nr, NULL, &set) != DPU_OK || ebsp_set_target(set) != DPU_OK ||
	    dpu_load(set, prog, NULL) != DPU_OK)
		return 1;

	/* the seed's host code, once per DPU: stream k */
	for (k = 0; k < nr; k++) {
		int count = COUNT;
		int count_in_token = COUNT_IN_TOKEN;
		float *d = data + k * COUNT;

		for (i = 0; i < COUNT; i++)
			d[i] = (float)(k * 1000 + i) / 4;
		if (!bsp_stream_create(count * sizeof(float), count_in_token * sizeof(float), d))
			return 1;
	}
	/* the up-streams: dpus + k, room for a token of results per token */
	for (k = 0; k < nr; k++) {
		up[k] = bsp_stream_create(TOKENS * UP_INTS * sizeof(int), UP_INTS * sizeof(int), NULL);
		if (!up[k])
			return 1;
	}
	DPU_FOREACH(set, dpu, k) {
		int core = (int)k, n = (int)nr;

		if (dpu_copy_to(dpu, "core", 0, &core, sizeof(core)) != DPU_OK ||
		    dpu_copy_to(dpu, "nr_cores", 0, &n, sizeof(n)) != DPU_OK)
			return 1;
	}
	if (dpu_launch(set, DPU_SYNCHRONOUS) != DPU_OK)
		return 1;

	for (k = 0; k < nr; k++) {
		const uint32_t *h = up[k];

		for (t = 0; t < TOKENS; t++) {
			const int *r = (const int *)(h + 2);
			float sum = 0;

			for (i = 0; i < COUNT_IN_TOKEN; i++)
				sum += data[k * COUNT + t * COUNT_IN_TOKEN + i];
			if (h[0] != (t ? UP_INTS * 4 : 0) || h[1] != UP_INTS * 4) {
				printf("DPU %u token %u: header %u, %u\n", k, t, h[0], h[1]);
				bad++;
			}
			for (i = 0; i < UP_INTS; i++)
				bad += r[i] != (int)sum + (int)i;
			if (k == 0)
				printf("DPU 0, token %u: sum of 32 floats %.2f, results %d %d ... %d\n",
				       t, sum, r[0], r[1], r[UP_INTS - 1]);
			h += 2 + UP_INTS;
		}
		if (h[1] != 0) {
			printf("DPU %u: no terminator after the last token\n", k);
			bad++;
		}
	}
	printf("%u DPUs x %d tokens moved down with preload and %d moved up double-buffered: %s\n",
	       nr, TOKENS, TOKENS, bad ? "MISMATCH" : "all results match");
	dpu_free(set);
	free(data);
	free(up);
	return bad ? 1 : 0;
}
