/* SPDX-License-Identifier: MIT */
/*
 * dpusim — status codes of the UPMEM-compatible host API.
 *
 * Names and numeric values are those of UPMEM's SDK (dpu_error.h, 2023.2),
 * so code that stores, compares or prints them behaves the same.
 */
#ifndef DPUSIM_DPU_ERROR_H
#define DPUSIM_DPU_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DPUSIM_API
#define DPUSIM_API __attribute__((visibility("default")))
#endif

/*
 * DPU_ERR_ASYNC_JOBS is 1U << 31, as UPMEM's, which ISO C before C23 does
 * not allow in an enum: keep -pedantic users' builds quiet.
 */
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#endif

/** Status returned by every API function. */
typedef enum dpu_error_t {
	DPU_OK = 0,			/**< success */
	DPU_ERR_INTERNAL,		/**< unexpected error in the library */
	DPU_ERR_SYSTEM,			/**< a system call or malloc failed */
	DPU_ERR_DRIVER,			/**< unexpected error from dpusim.ko */
	DPU_ERR_ALLOCATION,		/**< not enough free ranks / DPUs */
	DPU_ERR_INVALID_DPU_SET,	/**< invalid operation on this set */
	DPU_ERR_INVALID_THREAD_ID,
	DPU_ERR_INVALID_NOTIFY_ID,
	DPU_ERR_INVALID_WRAM_ACCESS,
	DPU_ERR_INVALID_IRAM_ACCESS,
	DPU_ERR_INVALID_MRAM_ACCESS,	/**< bad MRAM offset / length */
	DPU_ERR_INVALID_SYMBOL_ACCESS,
	DPU_ERR_MRAM_BUSY,
	DPU_ERR_TRANSFER_ALREADY_SET,
	DPU_ERR_NO_PROGRAM_LOADED,
	DPU_ERR_DIFFERENT_DPU_PROGRAMS,
	DPU_ERR_CORRUPTED_MEMORY,
	DPU_ERR_DPU_DISABLED,
	DPU_ERR_DPU_ALREADY_RUNNING,
	DPU_ERR_INVALID_MEMORY_TRANSFER,
	DPU_ERR_INVALID_LAUNCH_POLICY,
	DPU_ERR_DPU_FAULT,
	DPU_ERR_ELF_INVALID_FILE,
	DPU_ERR_ELF_NO_SUCH_FILE,
	DPU_ERR_ELF_NO_SUCH_SECTION,
	DPU_ERR_TIMEOUT,
	DPU_ERR_INVALID_PROFILE,	/**< bad profile string */
	DPU_ERR_UNKNOWN_SYMBOL,
	DPU_ERR_LOG_FORMAT,
	DPU_ERR_LOG_CONTEXT_MISSING,
	DPU_ERR_LOG_BUFFER_TOO_SMALL,
	DPU_ERR_VPD_INVALID_FILE,
	DPU_ERR_VPD_NO_REPAIR,
	DPU_ERR_NO_THREAD_PER_RANK,
	DPU_ERR_INVALID_BUFFER_SIZE,
	DPU_ERR_NONBLOCKING_SYNC_CALLBACK,
	DPU_ERR_TOO_MANY_TASKLETS,
	DPU_ERR_SG_TOO_MANY_BLOCKS,	/**< more blocks than sgXferMaxBlocksPerDpu */
	DPU_ERR_SG_LENGTH_MISMATCH,	/**< sum of block lengths != length */
	DPU_ERR_SG_NOT_ACTIVATED,	/**< profile lacks sgXferEnable=true */
	DPU_ERR_SG_NOT_MRAM_SYMBOL,	/**< sg transfer on a non-MRAM symbol */
	/** Error of an asynchronous job; the low bits hold the job's error. */
	DPU_ERR_ASYNC_JOBS = 1U << 31,
} dpu_error_t;

#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic pop
#endif

/** In an async-job error, shift of the job type (as UPMEM). */
#define DPU_ERROR_ASYNC_JOB_TYPE_SHIFT (16)

/**
 * dpu_error_to_string() - describe a status.
 *
 * As UPMEM's 2023 SDK, the string is newly allocated and belongs to the
 * caller, who may free() it (DPU_CHECK/DPU_ASSERT do). Never returns NULL
 * for a valid status unless memory is exhausted. An unknown value gives
 * "unknown error (N)".
 */
DPUSIM_API const char *dpu_error_to_string(dpu_error_t status);

#ifdef __cplusplus
}
#endif

#endif /* DPUSIM_DPU_ERROR_H */
