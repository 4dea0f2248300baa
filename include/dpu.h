/* SPDX-License-Identifier: MIT */
/*
 * dpusim — UPMEM-compatible host API (libdpusim).
 *
 * Names, signatures, enum values and macro forms follow UPMEM's SDK dpu.h
 * (2023.2) so existing host code compiles unchanged against
 * `pkg-config --cflags --libs dpusim`:
 *
 *	struct dpu_set_t set, dpu;
 *	uint32_t i;
 *	DPU_ASSERT(dpu_alloc(64, "sgXferEnable=true", &set));
 *	DPU_FOREACH(set, dpu, i) { ... }
 *	DPU_ASSERT(dpu_free(set));
 *
 * Every function returns a dpu_error_t; on failure it also prints one line
 * "dpusim: <what went wrong>" on stderr.
 *
 * Profile strings (dpu_alloc, dpu_alloc_ranks): key=value items separated
 * by ',' or '&'; blanks around keys and values are ignored, empty items are
 * skipped, a later key overrides an earlier one. As the SDK, the profile in
 * effect is $UPMEM_PROFILE_BASE, the program's string, then $UPMEM_PROFILE.
 * Keys:
 *   sgXferEnable=true|false|1|0   allow dpu_push_sg_xfer (default false)
 *   sgXferMaxBlocksPerDpu=N       max blocks per DPU in one sg transfer,
 *                                 N >= 1 decimal (default: DPUs in the set);
 *                                 requires sgXferEnable=true
 *   backend=hw|simulator          accepted for UPMEM code; ignored
 *   every other key of UPMEM's SDK (nrThreadPerPool, nrJobsPerRank,
 *   nrThreadsPerRank, cycleAccurate, mramSize, wramSize, disableSafeChecks,
 *   ...: the list is in lib/profile.c) is accepted and ignored: it tunes
 *   hardware, simulators or thread pools dpusim does not have (the module's
 *   parameters decide the sizes); integer-valued ones must be integers.
 * A key UPMEM's SDK does not know is DPU_ERR_INVALID_PROFILE with a message
 * naming it (the SDK ignores such typos silently; dpusim does not).
 */
#ifndef DPUSIM_DPU_H
#define DPUSIM_DPU_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dpu_error.h"
#include "dpu_log.h"
#include "dpu_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ enums */

/** Direction of a transfer. */
typedef enum _dpu_xfer_t {
	DPU_XFER_TO_DPU,	/**< host to DPU */
	DPU_XFER_FROM_DPU,	/**< DPU to host */
} dpu_xfer_t;

/** Options of dpu_push_xfer / dpu_broadcast_to. */
typedef enum _dpu_xfer_flags_t {
	/** Run the transfer, then clear the prepared buffers. */
	DPU_XFER_DEFAULT = 0,
	/** Run the transfer and keep the prepared buffers. */
	DPU_XFER_NO_RESET = 1 << 0,
	/** Queue the transfer and return; dpu_sync() waits for it. */
	DPU_XFER_ASYNC = 1 << 1,
} dpu_xfer_flags_t;

/** Options of dpu_push_sg_xfer. */
typedef enum _dpu_sg_xfer_flags_t {
	DPU_SG_XFER_DEFAULT = 0,
	/** Queue the transfer and return; dpu_sync() waits for it. */
	DPU_SG_XFER_ASYNC = 1 << 1,
	/**
	 * Allow a DPU's blocks to add up to less than `length` (to DPU: the
	 * rest of the MRAM range is zero-filled) or more (cut at `length`).
	 */
	DPU_SG_XFER_DISABLE_LENGTH_CHECK = 1 << 2,
} dpu_sg_xfer_flags_t;

/** How dpu_launch returns. Values as UPMEM's. */
typedef enum _dpu_launch_policy_t {
	/** Return at once; dpu_sync or dpu_status tell when it is done. */
	DPU_ASYNCHRONOUS,
	/** Return when every DPU of the set has finished. */
	DPU_SYNCHRONOUS,
} dpu_launch_policy_t;

/* ------------------------------------------------------------ errors */

/**
 * DPU_CHECK() - run an API call; on error print where and run on_error.
 * The message string is freed (dpu_error_to_string allocates it).
 */
#define DPU_CHECK(statement, on_error)                                      \
	do {                                                                \
		dpu_error_t __dpu_check_err = (statement);                  \
		if (__dpu_check_err != DPU_OK) {                            \
			const char *__dpu_check_s =                         \
				dpu_error_to_string(__dpu_check_err);       \
			fprintf(stderr, "%s:%d(%s): DPU Error (%s)\n",      \
				__FILE__, __LINE__, __func__,               \
				__dpu_check_s ? __dpu_check_s : "?");       \
			free((void *)__dpu_check_s);                        \
			on_error;                                           \
		}                                                           \
	} while (0)

/** DPU_ASSERT() - run an API call; on error print it and exit(EXIT_FAILURE). */
#define DPU_ASSERT(statement) DPU_CHECK(statement, exit(EXIT_FAILURE))

/** dpu_alloc / dpu_alloc_ranks: take every rank that can be opened. */
#define DPU_ALLOCATE_ALL (UINT_MAX)

/* ------------------------------------------------------------ sets */

/**
 * dpu_alloc() - allocate whole ranks holding at least nr_dpus DPUs.
 * @nr_dpus: DPUs wanted, or DPU_ALLOCATE_ALL for every free rank.
 * @profile: "key=value" list separated by ',' or '&', or NULL.
 * @dpu_set: out, the set.
 *
 * Ranks are tried in index order; a rank owned by another open file is
 * skipped. The set holds exactly nr_dpus DPUs: when the last rank has more,
 * its extra DPUs are disabled (never iterated, never transferred), as UPMEM.
 * Returns DPU_ERR_ALLOCATION when not enough DPUs are free (nothing stays
 * open), DPU_ERR_INVALID_PROFILE for a bad profile.
 */
DPUSIM_API dpu_error_t dpu_alloc(uint32_t nr_dpus, const char *profile,
				 struct dpu_set_t *dpu_set);

/** dpu_alloc_ranks() - allocate nr_ranks whole ranks (or DPU_ALLOCATE_ALL). */
DPUSIM_API dpu_error_t dpu_alloc_ranks(uint32_t nr_ranks, const char *profile,
				       struct dpu_set_t *dpu_set);

/**
 * dpu_free() - release a set returned by dpu_alloc / dpu_alloc_ranks.
 * The ranks are closed, so other processes may own them again. A subset
 * (a rank or DPU from an iterator) gives DPU_ERR_INVALID_DPU_SET.
 */
DPUSIM_API dpu_error_t dpu_free(struct dpu_set_t dpu_set);

/** dpu_get_nr_ranks() - ranks in a set (1 for a single-DPU set). */
DPUSIM_API dpu_error_t dpu_get_nr_ranks(struct dpu_set_t dpu_set,
					uint32_t *nr_ranks);

/** dpu_get_nr_dpus() - enabled DPUs in a set. */
DPUSIM_API dpu_error_t dpu_get_nr_dpus(struct dpu_set_t dpu_set,
				       uint32_t *nr_dpus);

/* ------------------------------------------------------------ iterators */

/**
 * Iterator over the ranks of a set. @private, used by DPU_RANK_FOREACH.
 * Field names as UPMEM's.
 */
struct dpu_set_rank_iterator_t {
	struct dpu_set_t *set;
	uint32_t count;
	uint32_t next_idx;
	bool has_next;
	struct dpu_set_t next;
};

/** Iterator over the DPUs of a set. @private, used by DPU_FOREACH. */
struct dpu_set_dpu_iterator_t {
	struct dpu_set_rank_iterator_t rank_iterator;
	uint32_t count;
	uint32_t next_idx;
	bool has_next;
	struct dpu_set_t next;
};

DPUSIM_API struct dpu_set_rank_iterator_t
dpu_set_rank_iterator_from(struct dpu_set_t *set);
DPUSIM_API void
dpu_set_rank_iterator_next(struct dpu_set_rank_iterator_t *iterator);
DPUSIM_API struct dpu_set_dpu_iterator_t
dpu_set_dpu_iterator_from(struct dpu_set_t *set);
DPUSIM_API void
dpu_set_dpu_iterator_next(struct dpu_set_dpu_iterator_t *iterator);

/* Picks _X (2 arguments) or _I (3 arguments); plain C99, no ## extension. */
#define _DPUSIM_FOREACH_PICK(_1, _2, _3, name, ...) name
#define _DPUSIM_FOREACH_SELECT(prefix, ...)                                 \
	_DPUSIM_FOREACH_PICK(__VA_ARGS__, prefix##I, prefix##X,             \
			     DPU_FOREACH_takes_2_or_3_arguments,            \
			     DPU_FOREACH_takes_2_or_3_arguments, unused)

/**
 * DPU_FOREACH(set, dpu) / DPU_FOREACH(set, dpu, i) - iterate the enabled
 * DPUs of set (an lvalue struct dpu_set_t). dpu (struct dpu_set_t, kind
 * DPU_SET_DPU) gets each DPU; i (an integer lvalue) its index in the set,
 * 0 … nr_dpus-1. Both count as used (no -Wunused-but-set-variable).
 */
#define DPU_FOREACH(...)                                                    \
	_DPUSIM_FOREACH_SELECT(_DPU_FOREACH_, __VA_ARGS__)(__VA_ARGS__)

#define _DPU_FOREACH_X(set, dpu)                                            \
	for (struct dpu_set_dpu_iterator_t __dpu_it =                       \
		     dpu_set_dpu_iterator_from(&(set));                     \
	     (dpu) = __dpu_it.next, (void)(dpu), __dpu_it.has_next;         \
	     dpu_set_dpu_iterator_next(&__dpu_it))

#define _DPU_FOREACH_I(set, dpu, i)                                         \
	for (struct dpu_set_dpu_iterator_t __dpu_it =                       \
		     dpu_set_dpu_iterator_from(&(set));                     \
	     (i) = __dpu_it.count, (dpu) = __dpu_it.next, (void)(i),        \
	     (void)(dpu), __dpu_it.has_next;                                \
	     dpu_set_dpu_iterator_next(&__dpu_it))

/**
 * DPU_RANK_FOREACH(set, rank) / DPU_RANK_FOREACH(set, rank, i) - iterate
 * the ranks of set; rank gets a one-rank set (kind DPU_SET_RANKS).
 */
#define DPU_RANK_FOREACH(...)                                               \
	_DPUSIM_FOREACH_SELECT(_DPU_RANK_FOREACH_, __VA_ARGS__)(__VA_ARGS__)

#define _DPU_RANK_FOREACH_X(set, rank)                                      \
	for (struct dpu_set_rank_iterator_t __rank_it =                     \
		     dpu_set_rank_iterator_from(&(set));                    \
	     (rank) = __rank_it.next, (void)(rank), __rank_it.has_next;     \
	     dpu_set_rank_iterator_next(&__rank_it))

#define _DPU_RANK_FOREACH_I(set, rank, i)                                   \
	for (struct dpu_set_rank_iterator_t __rank_it =                     \
		     dpu_set_rank_iterator_from(&(set));                    \
	     (i) = __rank_it.count, (rank) = __rank_it.next, (void)(i),     \
	     (void)(rank), __rank_it.has_next;                              \
	     dpu_set_rank_iterator_next(&__rank_it))

/* ------------------------------------------------------------ programs */

/**
 * dpu_load() - load a DPU program for the DPUs of a set. program may be NULL.
 *
 * A DPU program built by dpusim-cc (or its alias dpu-upmem-dpurte-clang)
 * is checked (its WRAM globals must fit in a DPU's WRAM), then its initial
 * WRAM and MRAM contents are written to every DPU of the set, and
 * dpu_launch can run it. Its symbols are every global in WRAM (__host
 * variables and any other) and in MRAM (__mram, __mram_noinit), and
 * DPU_MRAM_HEAP_POINTER_NAME, the MRAM past its MRAM globals.
 * Any other ELF (a UPMEM DPU binary, a host object) only gives its MRAM
 * symbols (sections named ".mram*") for transfers; dpu_launch refuses it.
 *
 * dpusim keeps one program per allocated set: loading through the set, one
 * of its ranks or one of its DPUs loads it for the whole set and frees the
 * program loaded before (an older *program pointer becomes invalid). The
 * program lives until the next dpu_load on the set or dpu_free.
 * Errors: DPU_ERR_ELF_NO_SUCH_FILE (cannot open the file),
 * DPU_ERR_ELF_INVALID_FILE (not an ELF, malformed, symbol outside its
 * memory, conflicting definitions, WRAM globals too big),
 * DPU_ERR_DPU_ALREADY_RUNNING (a DPU of the set runs), DPU_ERR_SYSTEM.
 */
DPUSIM_API dpu_error_t dpu_load(struct dpu_set_t dpu_set,
				const char *binary_path,
				struct dpu_program_t **program);

/** dpu_load_from_memory() - dpu_load of an ELF image held in memory. */
DPUSIM_API dpu_error_t dpu_load_from_memory(struct dpu_set_t dpu_set,
					    uint8_t *buffer,
					    size_t buffer_size,
					    struct dpu_program_t **program);

/** Address of MRAM in a DPU's address space, as UPMEM's. */
#define DPU_MRAM_BASE 0x08000000u

/**
 * dpu_get_symbol() - address and size of a symbol of a loaded program.
 * As UPMEM, an MRAM symbol's address is DPU_MRAM_BASE + its offset in
 * MRAM, a WRAM symbol's its WRAM address (below 0x08000000).
 * DPU_ERR_UNKNOWN_SYMBOL if the program has no symbol of that name.
 */
DPUSIM_API dpu_error_t dpu_get_symbol(struct dpu_program_t *program,
				      const char *symbol_name,
				      struct dpu_symbol_t *symbol);

/* ------------------------------------------------------------ running */

/**
 * dpu_launch() - run the loaded program on the enabled DPUs of a set.
 *
 * The program must be a DPU program built by dpusim-cc (also under its
 * UPMEM name dpu-upmem-dpurte-clang); a UPMEM DPU binary (ELF machine 245)
 * is refused with DPU_ERR_ELF_INVALID_FILE and a message saying how to
 * rebuild it. Each DPU runs NR_TASKLETS threads of the program's main
 * against its own WRAM and MRAM (dpusim.ko's memory), in worker processes
 * the library starts (about one per CPU) and dpusim.ko kills when the host
 * process ends. The queued asynchronous transfers of each rank run first.
 * DPU_SYNCHRONOUS returns when every DPU has finished: DPU_ERR_DPU_FAULT
 * if one faulted (a broken MRAM rule, mem_alloc out of WRAM, a crash), each
 * faulting DPU named on stderr with the reason. DPU_ASYNCHRONOUS returns at
 * once; dpu_status tells whether the DPUs are done and dpu_sync waits for
 * them (and returns DPU_ERR_DPU_FAULT as above). While a DPU runs,
 * transfers to it and launches of it fail with DPU_ERR_DPU_ALREADY_RUNNING.
 * Errors: DPU_ERR_NO_PROGRAM_LOADED, DPU_ERR_ELF_INVALID_FILE,
 * DPU_ERR_INVALID_LAUNCH_POLICY, DPU_ERR_DPU_ALREADY_RUNNING,
 * DPU_ERR_DPU_FAULT, DPU_ERR_SYSTEM (workers could not start).
 */
DPUSIM_API dpu_error_t dpu_launch(struct dpu_set_t dpu_set,
				  dpu_launch_policy_t policy);

/** Options of dpu_callback (values as UPMEM's). */
typedef enum _dpu_callback_flags_t {
	/** Call now, on the caller's thread, once per rank. */
	DPU_CALLBACK_DEFAULT = 0,
	/**
	 * Call on a thread of its own once what was queued on the set before
	 * (asynchronous transfers, launches, callbacks) has finished;
	 * dpu_sync waits for it and returns its error.
	 */
	DPU_CALLBACK_ASYNC = 1 << 0,
	/** With ASYNC: do not hold back later work (always true here). */
	DPU_CALLBACK_NONBLOCKING = 1 << 1,
	/** Call once for the whole set (rank index 0) instead of per rank. */
	DPU_CALLBACK_SINGLE_CALL = 1 << 2,
} dpu_callback_flags_t;

/**
 * dpu_callback() - call callback(rank, rank index in the set, args) for
 * each rank of the set (see dpu_callback_flags_t). The first error a call
 * returns is returned. NONBLOCKING without ASYNC:
 * DPU_ERR_NONBLOCKING_SYNC_CALLBACK.
 */
DPUSIM_API dpu_error_t dpu_callback(struct dpu_set_t dpu_set,
				    dpu_error_t (*callback)(struct dpu_set_t,
							    uint32_t, void *),
				    void *args, dpu_callback_flags_t flags);

/**
 * dpu_status() - *done: no DPU of the set is running; *fault: at least one
 * DPU of the set faulted in its latest run.
 */
DPUSIM_API dpu_error_t dpu_status(struct dpu_set_t dpu_set, bool *done,
				  bool *fault);

/* ------------------------------------------------------------ transfers */

/*
 * Rules common to every transfer function:
 *
 * - symbol_name names an MRAM or WRAM symbol of the program loaded with
 *   dpu_load; without a program, DPU_MRAM_HEAP_POINTER_NAME names the
 *   whole MRAM. Any other name: DPU_ERR_UNKNOWN_SYMBOL.
 * - MRAM: symbol_offset and length are multiples of 8, the MRAM address
 *   they give is a multiple of 8, and symbol_offset + length fits in the
 *   symbol; otherwise DPU_ERR_INVALID_MRAM_ACCESS. WRAM: the same with 4
 *   (the SDK's rule), else DPU_ERR_INVALID_WRAM_ACCESS.
 * - A DPU that runs a program (dpu_launch) takes no transfer:
 *   DPU_ERR_DPU_ALREADY_RUNNING, nothing moved on its rank.
 * - The DPUs taking part are the enabled DPUs of the set given: a set from
 *   dpu_alloc*, one rank (DPU_RANK_FOREACH) or one DPU (DPU_FOREACH).
 *   Disabled DPUs (past nr_dpus in the last rank) never take part.
 * - Everything is checked before anything moves; then each rank with DPUs
 *   taking part gets one DPUSIM_IOCTL_XFER, the ranks in parallel, or
 *   more when its share is over the kernel's limits of one call (below).
 *   A rank of one call either completes its share or is left unchanged;
 *   when one rank of a multi-rank set fails, the other ranks may have
 *   completed.
 * - Errors of the module (errno, also logged with its text):
 *     EFAULT    DPU_ERR_INVALID_MEMORY_TRANSFER  a host buffer or block is
 *               not mapped (or, from the DPU, not writable)
 *     ENOSPC    DPU_ERR_ALLOCATION   the simulated-memory budget (module
 *               parameter mram_budget) would be exceeded
 *     ENOMEM    DPU_ERR_SYSTEM       the kernel is out of memory, or (ASYNC)
 *               the pinned host pages would exceed RLIMIT_MEMLOCK
 *     E2BIG     DPU_ERR_INVALID_MEMORY_TRANSFER  over one call's limits
 *     EOVERFLOW DPU_ERR_INVALID_MRAM_ACCESS
 *     others    DPU_ERR_DRIVER (EINVAL: libdpusim and dpusim.ko disagree)
 * - Any transfer that fits the DPUs' memory is taken, as by the SDK.  One
 *   DPUSIM_IOCTL_XFER moves at most 1 GiB (DPUSIM_XFER_MAX_BYTES), 2^20
 *   blocks, 4 GiB of zero padding and 2^19 pinned pages of one rank; a
 *   rank's share over that is split by the library into as few calls as
 *   those limits allow, each a run of the rank's DPUs in DPU_FOREACH order
 *   with their whole blocks (64 DPUs x 50 MiB: 4 calls of at most 20
 *   DPUs), issued one after the other.  Each call changes nothing if it
 *   fails, and the rank stops at the first that fails: then the DPUs of
 *   the calls before it have their data (to the DPUs: written to MRAM;
 *   from the DPUs: written to their host blocks; ASYNC: queued and
 *   completing), those of the failing call and after it are unchanged,
 *   and the message says how many DPUs of the rank are done.  Such a
 *   failure (ENOSPC as the second call fills the budget, EFAULT on a later
 *   DPU's buffer, EBUSY for a DPU launched meanwhile, EAGAIN for a full
 *   queue) is the one case where a rank is left part done.  A single DPU
 *   whose share alone is over a limit (more than 1 GiB: only with
 *   mram_size over 1 GiB) is refused before any ioctl with
 *   DPU_ERR_INVALID_MEMORY_TRANSFER.
 * - Unknown flag bits: DPU_ERR_INVALID_MEMORY_TRANSFER. A bad direction:
 *   DPU_ERR_INVALID_MEMORY_TRANSFER. A disabled DPU given as a set:
 *   DPU_ERR_DPU_DISABLED.
 * - ASYNC (DPU_XFER_ASYNC, DPU_SG_XFER_ASYNC): the call checks everything,
 *   gathers the block lists and issues the same ioctls per rank, which
 *   dpusim.ko queues (DPUSIM_XFER_ASYNC) once it has checked the
 *   descriptor, pinned the host pages and allocated the MRAM: every error
 *   of the transfer, including an unmapped host block or an exhausted
 *   budget, is returned by the call, and then DPU_OK means the transfer
 *   will complete. The pinned pages count against RLIMIT_MEMLOCK (ulimit
 *   -l) until the copy is done: over it, DPU_ERR_SYSTEM (ENOMEM). Queued
 *   transfers run in submission order per rank; a synchronous transfer
 *   waits for the queued ones first. dpu_sync() waits for all of them and
 *   returns the first error since the previous dpu_sync (then clears it).
 *   The host buffers must stay valid and unchanged until dpu_sync, as with
 *   UPMEM. dpu_free syncs before closing the ranks, and closing a rank
 *   (also at process exit) waits for its queued transfers in the kernel.
 */

/** dpu_copy_to() - copy length bytes from src to symbol+offset of every DPU. */
DPUSIM_API dpu_error_t dpu_copy_to(struct dpu_set_t dpu_set,
				   const char *symbol_name,
				   uint32_t symbol_offset, const void *src,
				   size_t length);

/**
 * dpu_copy_from() - copy from symbol+offset of one DPU to dst.
 * As UPMEM, the set must be one DPU (from DPU_FOREACH): a set of ranks is
 * DPU_ERR_INVALID_DPU_SET even if it holds a single DPU.
 */
DPUSIM_API dpu_error_t dpu_copy_from(struct dpu_set_t dpu_set,
				     const char *symbol_name,
				     uint32_t symbol_offset, void *dst,
				     size_t length);

/**
 * dpu_broadcast_to() - copy the same host bytes to every DPU of the set.
 * flags: DPU_XFER_ASYNC (DPU_XFER_NO_RESET is accepted and has no effect).
 */
DPUSIM_API dpu_error_t dpu_broadcast_to(struct dpu_set_t dpu_set,
					const char *symbol_name,
					uint32_t symbol_offset,
					const void *src, size_t length,
					dpu_xfer_flags_t flags);

/**
 * dpu_prepare_xfer() - set the host buffer of the enabled DPUs of a set
 * (NULL clears). A buffer set before is replaced.
 */
DPUSIM_API dpu_error_t dpu_prepare_xfer(struct dpu_set_t dpu_set,
					void *buffer);

/**
 * dpu_push_xfer() - run a transfer with the prepared buffers: each DPU of
 * the set that has one moves length bytes between it and symbol+offset;
 * DPUs without one do not take part.
 *
 * Unless DPU_XFER_NO_RESET, the prepared buffers of the set's DPUs are
 * cleared after a successful transfer (with DPU_XFER_ASYNC: once it is
 * queued). As UPMEM, they are kept when the call returns an error, so it
 * can be retried.
 */
DPUSIM_API dpu_error_t dpu_push_xfer(struct dpu_set_t dpu_set,
				     dpu_xfer_t xfer, const char *symbol_name,
				     uint32_t symbol_offset, size_t length,
				     dpu_xfer_flags_t flags);

/*
 * The *_symbol variants take a struct dpu_symbol_t (from dpu_get_symbol)
 * instead of a name: an address from DPU_MRAM_BASE (0x08000000) up is
 * MRAM, below it WRAM; symbol_offset + length must fit in symbol.size.
 */
DPUSIM_API dpu_error_t dpu_copy_to_symbol(struct dpu_set_t dpu_set,
					  struct dpu_symbol_t symbol,
					  uint32_t symbol_offset,
					  const void *src, size_t length);
DPUSIM_API dpu_error_t dpu_copy_from_symbol(struct dpu_set_t dpu_set,
					    struct dpu_symbol_t symbol,
					    uint32_t symbol_offset, void *dst,
					    size_t length);
DPUSIM_API dpu_error_t dpu_broadcast_to_symbol(struct dpu_set_t dpu_set,
					       struct dpu_symbol_t symbol,
					       uint32_t symbol_offset,
					       const void *src, size_t length,
					       dpu_xfer_flags_t flags);
DPUSIM_API dpu_error_t dpu_push_xfer_symbol(struct dpu_set_t dpu_set,
					    dpu_xfer_t xfer,
					    struct dpu_symbol_t symbol,
					    uint32_t symbol_offset,
					    size_t length,
					    dpu_xfer_flags_t flags);

/** One host block of a scatter/gather transfer. */
struct sg_block_info {
	/** Start of the block in host memory. */
	uint8_t *addr;
	/** Bytes in the block. */
	uint32_t length;
};

/**
 * get_block_func_t - fill out with block block_index of DPU dpu_index (its
 * index in the whole set, DPU_FOREACH order); return false when there is
 * no such block. May be called from several threads, in any order.
 */
typedef bool (*get_block_func_t)(struct sg_block_info *out,
				 uint32_t dpu_index, uint32_t block_index,
				 void *args);

/** The get_block callback and its arguments (copied, args_size bytes). */
typedef struct get_block_t {
	get_block_func_t f;
	void *args;
	size_t args_size;
} get_block_t;

/**
 * dpu_push_sg_xfer() - scatter/gather transfer between the blocks that
 * get_block_info->f returns for each DPU and symbol+offset of its MRAM.
 * Needs a set allocated with "sgXferEnable=true" (else
 * DPU_ERR_SG_NOT_ACTIVATED).
 *
 * get_block_info->args is copied (args_size bytes) once before the first
 * call and the callback gets the copy (NULL when args is NULL or args_size
 * is 0); the copy is freed when the call returns. f is called with the
 * DPU's index in the whole allocated set (also when the set given is one
 * rank or one DPU of it) and block 0, 1, ... until it returns false,
 * from one thread per rank. A DPU with more than sgXferMaxBlocksPerDpu
 * blocks: DPU_ERR_SG_TOO_MANY_BLOCKS (f is not called past block max).
 * Without DPU_SG_XFER_DISABLE_LENGTH_CHECK, a DPU whose block lengths do
 * not add up to length: DPU_ERR_SG_LENGTH_MISMATCH. Every DPU of every rank
 * is gathered and checked before the first ioctl: on these errors nothing
 * moves for any DPU. With the flag, to the DPU the rest of the length
 * bytes of MRAM is zero-filled; from the DPU only the blocks' bytes are
 * written; bytes past length are never moved. get_block_info or f NULL:
 * DPU_ERR_INVALID_MEMORY_TRANSFER.
 */
DPUSIM_API dpu_error_t dpu_push_sg_xfer(struct dpu_set_t dpu_set,
					dpu_xfer_t xfer,
					const char *symbol_name,
					uint32_t symbol_offset, size_t length,
					get_block_t *get_block_info,
					dpu_sg_xfer_flags_t flags);

struct get_block_t;
/** dpu_push_sg_xfer() with a struct dpu_symbol_t; MRAM symbols only. */
DPUSIM_API dpu_error_t dpu_push_sg_xfer_symbol(struct dpu_set_t dpu_set,
					       dpu_xfer_t xfer,
					       struct dpu_symbol_t symbol,
					       uint32_t symbol_offset,
					       size_t length,
					       struct get_block_t *get_block_info,
					       dpu_sg_xfer_flags_t flags);

/**
 * dpu_sync() - wait for the asynchronous transfers queued on the set (any
 * subset waits for every rank of the whole set) and for an asynchronous
 * dpu_launch; returns the first error since the previous dpu_sync and
 * clears it (DPU_ERR_DPU_FAULT if a DPU of the launch faulted). DPU_OK
 * when nothing was queued.
 */
DPUSIM_API dpu_error_t dpu_sync(struct dpu_set_t dpu_set);

#ifdef __cplusplus
}
#endif

#endif /* DPUSIM_DPU_H */
