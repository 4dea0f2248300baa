/* SPDX-License-Identifier: MIT */
/*
 * ebsp.h (DPU side) - Epiphany BSP's streams in a DPU program: the DPU is
 * the core (seed 003, shared/design/streams.md).
 *
 * The host creates the streams (the host's <ebsp.h>: ebsp_set_target(),
 * bsp_stream_create()) before it launches the program; the program opens
 * them by number and moves tokens between them and its WRAM.  Each move is
 * one descriptor for the kernel, which copies the token straight into (or
 * out of) the DPU's memory; a preloaded move_down runs asynchronously, so
 * the next token arrives while the program processes the current one.
 * The token buffers come from the WRAM heap (mem_alloc), two of
 * token_size + 8 bytes per stream moved down, and are reused after
 * bsp_stream_close().
 *
 * A stream stays open by its DPU when the launch ends (its cursor is kept
 * by the kernel): the next launch may go on moving tokens, or close it.
 * Errors are printed on the worker's stderr ("ebsp: DPU n: ...").
 */
#ifndef DPUSIM_DPURT_EBSP_H
#define DPUSIM_DPURT_EBSP_H

#include <stddef.h>
#include <stdint.h>

/* A stream as this DPU has it open: fill it with bsp_stream_open(). */
typedef struct ebsp_stream {
	int id;			/* -1 when not open */
	uint32_t token_size;	/* the stream's token size at creation */
	uint32_t size;		/* size of the next token to return, 0: end */
	uint32_t prev;		/* size of the token before it */
	uint64_t data_off;	/* where its data lies in the stream */
	char *buf[2];		/* token buffers in WRAM, @cap bytes each */
	uint32_t cap;
	int cur;		/* the buffer returned last */
	int preloaded;		/* the next token is in flight into buf[cur ^ 1] */
	int up_pending;		/* a move_up without wait is in flight */
	int ring_result;	/* its move's answer from the ring: 0 or -errno, */
	uint32_t ring_next;	/* and the size of the token after the one moved */
	uint32_t *hdr;		/* 4 words of WRAM: the headers of a move_up */
	uint32_t launch;	/* the launch its buffers belong to */
} ebsp_stream;

typedef ebsp_stream bsp_stream;

/* Nonzero if this DPU now has stream @stream_id open. */
int bsp_stream_open(ebsp_stream *stream, int stream_id);

/* Wait for the moves in flight and close the stream. */
void bsp_stream_close(ebsp_stream *stream);

/* The next token in *@buffer (WRAM); its size, 0 at the end or on error. */
int bsp_stream_move_down(ebsp_stream *stream, void **buffer, int preload);

/*
 * Write @data_size bytes (a multiple of 8, in WRAM or MRAM) as the next
 * token; @data_size, or 0 on an error (nothing written).
 */
int bsp_stream_move_up(ebsp_stream *stream, const void *data, int data_size,
		       int wait_for_completion);

/* Move the cursor by @delta_tokens, clamped; INT_MIN: start, INT_MAX: end. */
void bsp_stream_seek(ebsp_stream *stream, int delta_tokens);

/*
 * EBSP's local allocator: @size bytes of WRAM (8-aligned) from the heap,
 * given back by ebsp_free() for the next ebsp_malloc() or stream of this
 * launch.  Faults the DPU when the WRAM is full, as mem_alloc() does.
 */
void *ebsp_malloc(unsigned int size);
void ebsp_free(void *ptr);

#endif /* DPUSIM_DPURT_EBSP_H */
