/* SPDX-License-Identifier: MIT */
/*
 * dpusim — the DPU log (as UPMEM's dpu_log.h).
 *
 * DPU programs built by dpusim-cc print (printf, puts, putchar) into a
 * per-DPU log of DPUSIM_LOG_SIZE bytes in the DPU's MRAM (the runtime's
 * __stdout_buffer), emptied when the DPU starts a run. What does not fit
 * is dropped and counted; dpu_log_read says how much was lost.
 */
#ifndef DPUSIM_DPU_LOG_H
#define DPUSIM_DPU_LOG_H

#include <stdio.h>

#include "dpu_error.h"
#include "dpu_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of a DPU's log, its 8-byte header included. */
#define DPUSIM_LOG_SIZE 65536

/**
 * dpu_log_read() - write the log of the latest run of a DPU to stream.
 * @set: one DPU (from DPU_FOREACH), as UPMEM
 * @stream: where to write
 *
 * As the SDK, a line "=== DPU#0x<id> ===" (dpu_get_id) comes first. When
 * the program printed more than the log holds, the text that fitted is
 * followed by "[dpusim: N bytes of this DPU's log were lost: the log
 * holds M]" and the call returns DPU_ERR_LOG_BUFFER_TOO_SMALL (the SDK's
 * error; it shows none of the text). Errors: DPU_ERR_INVALID_DPU_SET (not
 * one DPU),
 * DPU_ERR_NO_PROGRAM_LOADED, DPU_ERR_LOG_CONTEXT_MISSING (the program has
 * no log: not built by dpusim-cc), DPU_ERR_LOG_FORMAT (the header is
 * corrupt: the program overwrote it), DPU_ERR_SYSTEM (writing stream).
 */
DPUSIM_API dpu_error_t dpu_log_read(struct dpu_set_t set, FILE *stream);

#ifdef __cplusplus
}
#endif

#endif /* DPUSIM_DPU_LOG_H */
