// SPDX-License-Identifier: MIT
/*
 * streams (DPU side) - the seed's EBSP streams example on a DPU, the DPU
 * being the core (seed 003; host side: tools/examples/streams.c).
 *
 * The DPU opens its down-stream (@core: 256 floats in tokens of 32) and
 * moves it down token by token with double buffering (preload: the next
 * token arrives while this one is summed).  For every token it fills one
 * of two buffers of 100 ints with the seed's pattern, here
 * (int)(sum of the token) + i, and moves it up to its up-stream
 * (@core + @nr_cores) without waiting, swapping buffers, as the seed does.
 */
#include <defs.h>
#include <ebsp.h>

__host int core;	/* this DPU's down-stream; its up-stream: core + nr_cores */
__host int nr_cores;
__host int tokens_done;

int main(void)
{
	int *buffer1 = ebsp_malloc(100 * sizeof(int));
	int *buffer2 = ebsp_malloc(100 * sizeof(int));
	int *curbuffer = buffer1, *otherbuffer = buffer2, *swap;
	bsp_stream down, up;
	void *token = NULL;
	int size, i;

	tokens_done = 0;
	if (!bsp_stream_open(&down, core))
		return 1;
	if (!bsp_stream_open(&up, core + nr_cores)) {
		bsp_stream_close(&down);
		return 1;
	}
	while ((size = bsp_stream_move_down(&down, &token, 1)) > 0) {
		const float *f = token;
		float sum = 0;

		for (i = 0; i < size / (int)sizeof(float); i++)
			sum += f[i];
		/* Fill curbuffer */
		for (i = 0; i < 100; i++)
			curbuffer[i] = (int)sum + i;
		/* Send up */
		bsp_stream_move_up(&up, curbuffer, 100 * sizeof(int), 0);
		/* Use other buffer */
		swap = curbuffer;
		curbuffer = otherbuffer;
		otherbuffer = swap;
		tokens_done++;
	}
	bsp_stream_close(&up);
	bsp_stream_close(&down);
	ebsp_free(buffer1);
	ebsp_free(buffer2);
	return 0;
}
