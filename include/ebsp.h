/* SPDX-License-Identifier: MIT */
/*
 * ebsp.h - Epiphany BSP's streams on dpusim (seed 003, shared/design/streams.md)
 *
 * A stream lives in the kernel, in the simulated external memory of a rank:
 * a sequence of tokens, each preceded by a header of two ints (the size of
 * the token before it and its own).  The host creates streams for a set
 * (ebsp_set_target() then bsp_stream_create(), numbered from 0 in creation
 * order); a core moves tokens down into a local buffer and up from one.  A
 * core is a DPU of the rank: here a host thread that says which DPU it acts
 * as (ebsp_set_core()).  Each move is one transfer descriptor; a preloaded
 * move_down is an asynchronous transfer, so the next token arrives while the
 * current one is processed.
 *
 * Where EBSP's own implementation goes wrong, this one does not: after a
 * preloaded move_down, seek is relative to the token last returned; the end
 * of a stream is sticky; closing twice or a negative id is an error with a
 * message, not a stray write; a move_up larger than the space left fails
 * without writing.  Errors are printed on stderr ("ebsp: ...").
 */
#ifndef DPUSIM_EBSP_H
#define DPUSIM_EBSP_H

#include <stdint.h>

#include <dpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A stream as one core has it open: fill it with bsp_stream_open(). */
typedef struct ebsp_stream {
	int id;			/* -1 when not open */
	uint32_t core;
	struct dpu_rank_t *rank;
	uint32_t token_size;	/* the stream's token size at creation */
	uint32_t size;		/* size of the next token to return, 0: end */
	uint32_t prev;		/* size of the token before it */
	uint64_t data_off;	/* where its data lies in the stream */
	void *buf[2];		/* token buffers, @cap bytes each */
	uint32_t cap;
	void *reg;		/* the buffers registered at the open, or NULL */
	size_t reg_len;		/* bytes mapped at @reg */
	int cur;		/* the buffer returned last */
	int preloaded;		/* the next token is in flight into buf[cur ^ 1] */
	int up_pending;		/* a move_up without wait is in flight */
	uint32_t hdr[4];	/* the headers of the move_up in flight */
} ebsp_stream;

typedef ebsp_stream bsp_stream;

/*
 * The rank whose external memory holds the streams bsp_stream_create()
 * makes from now on, in every thread: the first rank of @set.
 */
DPUSIM_API dpu_error_t ebsp_set_target(struct dpu_set_t set);

/* The DPU the calling thread acts as, for bsp_stream_open() (default 0). */
DPUSIM_API void ebsp_set_core(uint32_t core);

/*
 * A stream of @stream_size bytes in tokens of @token_size (at least 16),
 * copied from @initial_data, or empty (@initial_data NULL) with room for
 * @stream_size bytes that cores move up.  Returns its memory, in EBSP's
 * format, read-only, valid until the set is freed; NULL on error.
 */
DPUSIM_API void *bsp_stream_create(int stream_size, int token_size,
				   const void *initial_data);

/* Nonzero if the calling thread's core now has stream @stream_id open. */
DPUSIM_API int bsp_stream_open(ebsp_stream *stream, int stream_id);

/* Wait for the moves in flight and close the stream. */
DPUSIM_API void bsp_stream_close(ebsp_stream *stream);

/*
 * The next token: *@buffer points to a local copy; returns its size, 0 at
 * the end or on an error.  With @preload the token after it is fetched
 * asynchronously meanwhile.
 */
DPUSIM_API int bsp_stream_move_down(ebsp_stream *stream, void **buffer,
				    int preload);

/*
 * Write @data_size bytes (a multiple of 8) as the next token.  Waits for
 * the previous move_up first; without @wait_for_completion returns while
 * the data is still being moved (the caller fills another buffer).
 * Returns @data_size, or 0 on an error (nothing written).
 */
DPUSIM_API int bsp_stream_move_up(ebsp_stream *stream, const void *data,
				  int data_size, int wait_for_completion);

/* Move the cursor by @delta_tokens, clamped; INT_MIN: start, INT_MAX: end. */
DPUSIM_API void bsp_stream_seek(ebsp_stream *stream, int delta_tokens);

#ifdef __cplusplus
}
#endif

#endif /* DPUSIM_EBSP_H */
