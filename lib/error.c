// SPDX-License-Identifier: MIT
/* libdpusim: dpu_error_to_string. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const error_strings[] = {
	[DPU_OK] = "success",
	[DPU_ERR_INTERNAL] = "internal error",
	[DPU_ERR_SYSTEM] = "system error",
	[DPU_ERR_DRIVER] = "driver error",
	[DPU_ERR_ALLOCATION] = "allocation error",
	[DPU_ERR_INVALID_DPU_SET] = "invalid dpu set",
	[DPU_ERR_INVALID_THREAD_ID] = "invalid thread id",
	[DPU_ERR_INVALID_NOTIFY_ID] = "invalid notify id",
	[DPU_ERR_INVALID_WRAM_ACCESS] = "invalid wram access",
	[DPU_ERR_INVALID_IRAM_ACCESS] = "invalid iram access",
	[DPU_ERR_INVALID_MRAM_ACCESS] = "invalid mram access",
	[DPU_ERR_INVALID_SYMBOL_ACCESS] = "invalid symbol access",
	[DPU_ERR_MRAM_BUSY] = "mram is busy",
	[DPU_ERR_TRANSFER_ALREADY_SET] = "transfer is already set",
	[DPU_ERR_NO_PROGRAM_LOADED] = "no program loaded",
	[DPU_ERR_DIFFERENT_DPU_PROGRAMS] = "dpus have different programs",
	[DPU_ERR_CORRUPTED_MEMORY] = "corrupted memory",
	[DPU_ERR_DPU_DISABLED] = "dpu is disabled",
	[DPU_ERR_DPU_ALREADY_RUNNING] = "dpu is already running",
	[DPU_ERR_INVALID_MEMORY_TRANSFER] = "invalid memory transfer",
	[DPU_ERR_INVALID_LAUNCH_POLICY] = "invalid launch policy",
	[DPU_ERR_DPU_FAULT] = "dpu is in fault",
	[DPU_ERR_ELF_INVALID_FILE] = "invalid ELF file",
	[DPU_ERR_ELF_NO_SUCH_FILE] = "no such ELF file",
	[DPU_ERR_ELF_NO_SUCH_SECTION] = "no such ELF section",
	[DPU_ERR_TIMEOUT] = "timeout",
	[DPU_ERR_INVALID_PROFILE] = "invalid profile",
	[DPU_ERR_UNKNOWN_SYMBOL] = "unknown symbol",
	[DPU_ERR_LOG_FORMAT] = "invalid log format",
	[DPU_ERR_LOG_CONTEXT_MISSING] = "log context is missing",
	[DPU_ERR_LOG_BUFFER_TOO_SMALL] = "log buffer is too small",
	[DPU_ERR_VPD_INVALID_FILE] = "invalid VPD file",
	[DPU_ERR_VPD_NO_REPAIR] = "repairs have not been generated",
	[DPU_ERR_NO_THREAD_PER_RANK] =
		"no thread to perform multiple-rank operation",
	[DPU_ERR_INVALID_BUFFER_SIZE] = "invalid buffer size",
	[DPU_ERR_NONBLOCKING_SYNC_CALLBACK] =
		"nonblocking and synchronous callback is invalid",
	[DPU_ERR_TOO_MANY_TASKLETS] =
		"program uses more tasklets than the dpu has threads",
	[DPU_ERR_SG_TOO_MANY_BLOCKS] =
		"scatter/gather transfer: too many blocks for a dpu",
	[DPU_ERR_SG_LENGTH_MISMATCH] =
		"scatter/gather transfer: block lengths do not add up to the transfer length",
	[DPU_ERR_SG_NOT_ACTIVATED] =
		"scatter/gather transfer not enabled (profile sgXferEnable=true)",
	[DPU_ERR_SG_NOT_MRAM_SYMBOL] =
		"scatter/gather transfer symbol is not an MRAM symbol",
};

#define NR_ERROR_STRINGS (sizeof(error_strings) / sizeof(error_strings[0]))

static const char *lookup(unsigned int v)
{
	if (v < NR_ERROR_STRINGS && error_strings[v])
		return error_strings[v];
	return NULL;
}

DPUSIM_API const char *dpu_error_to_string(dpu_error_t status)
{
	unsigned int v = (unsigned int)status;
	const char *s;
	char *out = NULL;
	int r;

	if (v == (unsigned int)DPU_ERR_ASYNC_JOBS) {
		out = strdup("asynchronous operation error");
		return out;
	}
	if (v & (unsigned int)DPU_ERR_ASYNC_JOBS) {
		unsigned int rest = v & ~(unsigned int)DPU_ERR_ASYNC_JOBS;
		unsigned int job = rest >> DPU_ERROR_ASYNC_JOB_TYPE_SHIFT;
		unsigned int err = rest & ((1U << DPU_ERROR_ASYNC_JOB_TYPE_SHIFT) - 1);

		s = lookup(err);
		if (s)
			r = asprintf(&out, "asynchronous operation error (job %u): %s (0x%x)",
				     job, s, rest);
		else
			r = asprintf(&out, "asynchronous operation error (job %u): unknown error (0x%x)",
				     job, rest);
		return r < 0 ? NULL : out;
	}
	s = lookup(v);
	if (s)
		return strdup(s);
	r = asprintf(&out, "unknown error (%u)", v);
	return r < 0 ? NULL : out;
}
