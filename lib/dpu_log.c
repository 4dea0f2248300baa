// SPDX-License-Identifier: MIT
/*
 * libdpusim: dpu_log_read. The log is the runtime's __stdout_buffer in the
 * DPU's MRAM: { uint32_t length; uint32_t lost; } then length bytes of
 * text (lib/dpurt). It is read with ordinary transfers.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <dpu_log.h>
#include <dpu_management.h>

#include "program.h"
#include "xfer.h"

#define LOG_SYMBOL "__stdout_buffer"
#define LOG_HEADER 8u

DPUSIM_API dpu_error_t dpu_log_read(struct dpu_set_t set, FILE *stream)
{
	static const char fn[] = "dpu_log_read";
	struct dpusim_set_props *props = dpusim_set_props(set, fn);
	const struct dpusim_symbol *sym;
	uint64_t base = 0, size = 0;
	uint32_t hdr[2], len;
	bool open_line = false;
	dpu_error_t ret;
	uint8_t *text;

	if (!props)
		return DPU_ERR_INVALID_DPU_SET;
	/* as the SDK: the header first, whatever follows */
	if (stream && set.kind == DPU_SET_DPU)
		fprintf(stream, "=== DPU#0x%x ===\n", (unsigned int)dpu_get_id(set.dpu));
	if (set.kind != DPU_SET_DPU) {
		dpusim_log("%s: the set must be one DPU (from DPU_FOREACH), as UPMEM", fn);
		return DPU_ERR_INVALID_DPU_SET;
	}
	if (!stream) {
		dpusim_log("%s: stream is NULL", fn);
		return DPU_ERR_INTERNAL;
	}
	pthread_mutex_lock(&props->lock);
	sym = dpusim_program_find(props->program, LOG_SYMBOL);
	if (sym && sym->mem == DPUSIM_SYM_MRAM) {
		base = sym->offset;
		size = sym->size;
	}
	ret = !props->program ? DPU_ERR_NO_PROGRAM_LOADED :
	      !size ? DPU_ERR_LOG_CONTEXT_MISSING : DPU_OK;
	pthread_mutex_unlock(&props->lock);
	if (ret != DPU_OK) {
		dpusim_log("%s: %s", fn, ret == DPU_ERR_NO_PROGRAM_LOADED ?
			   "no program loaded" :
			   "the program has no log (" LOG_SYMBOL "): build it with dpusim-cc");
		return ret;
	}
	if (size < LOG_HEADER || base % 8) {
		dpusim_log("%s: the program's " LOG_SYMBOL " is malformed", fn);
		return DPU_ERR_LOG_FORMAT;
	}
	ret = dpusim_xfer_raw(set, fn, false, DPU_XFER_FROM_DPU, base, hdr,
			      sizeof(hdr));
	if (ret != DPU_OK)
		return ret;
	len = hdr[0];
	if (len > size - LOG_HEADER) {
		dpusim_log("%s: the DPU's log header says %" PRIu32 " bytes, the log holds %" PRIu64 ": the program overwrote it",
			   fn, len, size - LOG_HEADER);
		return DPU_ERR_LOG_FORMAT;
	}
	if (len) {
		uint32_t rounded = (len + 7u) & ~7u;

		text = malloc(rounded);
		if (!text) {
			dpusim_log("%s: out of memory", fn);
			return DPU_ERR_SYSTEM;
		}
		ret = dpusim_xfer_raw(set, fn, false, DPU_XFER_FROM_DPU,
				      base + LOG_HEADER, text, rounded);
		if (ret == DPU_OK && fwrite(text, 1, len, stream) != len)
			ret = DPU_ERR_SYSTEM;
		open_line = text[len - 1] != '\n';
		free(text);
		if (ret != DPU_OK)
			return ret;
	}
	if (hdr[1]) {
		/* the SDK's error; the text that fitted is shown all the same */
		fprintf(stream, "%s[dpusim: %" PRIu32 " bytes of this DPU's log were lost: the log holds %" PRIu64 "]\n",
			open_line ? "\n" : "", hdr[1], size - LOG_HEADER);
		fflush(stream);
		dpusim_log("%s: DPU %u printed %" PRIu32 " bytes more than its log holds (%" PRIu64 "); they are lost",
			   fn, set.dpu->index_in_set, hdr[1], size - LOG_HEADER);
		return DPU_ERR_LOG_BUFFER_TOO_SMALL;
	}
	return fflush(stream) == 0 ? DPU_OK : DPU_ERR_SYSTEM;
}
