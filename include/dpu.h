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
 * skipped, a later key overrides an earlier one, an unknown key is
 * DPU_ERR_INVALID_PROFILE. Keys:
 *   sgXferEnable=true|false|1|0   allow dpu_push_sg_xfer (default false)
 *   sgXferMaxBlocksPerDpu=N       max blocks per DPU in one sg transfer,
 *                                 N >= 1 decimal (default: DPUs in the set);
 *                                 requires sgXferEnable=true
 *   backend=hw|simulator          accepted for UPMEM code; ignored
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
 * dpu_load() - read an ELF's symbol table for the DPUs of a set: symbols in
 * sections named ".mram*" become MRAM symbols. program may be NULL.
 */
DPUSIM_API dpu_error_t dpu_load(struct dpu_set_t dpu_set,
				const char *binary_path,
				struct dpu_program_t **program);

/** dpu_get_symbol() - address and size of a symbol of a loaded program. */
DPUSIM_API dpu_error_t dpu_get_symbol(struct dpu_program_t *program,
				      const char *symbol_name,
				      struct dpu_symbol_t *symbol);

/* ------------------------------------------------------------ transfers */

/** dpu_copy_to() - copy length bytes from src to symbol+offset of every DPU. */
DPUSIM_API dpu_error_t dpu_copy_to(struct dpu_set_t dpu_set,
				   const char *symbol_name,
				   uint32_t symbol_offset, const void *src,
				   size_t length);

/** dpu_copy_from() - copy from symbol+offset of one DPU to dst. */
DPUSIM_API dpu_error_t dpu_copy_from(struct dpu_set_t dpu_set,
				     const char *symbol_name,
				     uint32_t symbol_offset, void *dst,
				     size_t length);

/** dpu_broadcast_to() - copy the same host bytes to every DPU of the set. */
DPUSIM_API dpu_error_t dpu_broadcast_to(struct dpu_set_t dpu_set,
					const char *symbol_name,
					uint32_t symbol_offset,
					const void *src, size_t length,
					dpu_xfer_flags_t flags);

/** dpu_prepare_xfer() - set the host buffer of the DPUs of a set (NULL clears). */
DPUSIM_API dpu_error_t dpu_prepare_xfer(struct dpu_set_t dpu_set,
					void *buffer);

/** dpu_push_xfer() - run a transfer with the prepared buffers. */
DPUSIM_API dpu_error_t dpu_push_xfer(struct dpu_set_t dpu_set,
				     dpu_xfer_t xfer, const char *symbol_name,
				     uint32_t symbol_offset, size_t length,
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
 * Needs a set allocated with "sgXferEnable=true".
 */
DPUSIM_API dpu_error_t dpu_push_sg_xfer(struct dpu_set_t dpu_set,
					dpu_xfer_t xfer,
					const char *symbol_name,
					uint32_t symbol_offset, size_t length,
					get_block_t *get_block_info,
					dpu_sg_xfer_flags_t flags);

/** dpu_sync() - wait for the set's asynchronous work; first error wins. */
DPUSIM_API dpu_error_t dpu_sync(struct dpu_set_t dpu_set);

#ifdef __cplusplus
}
#endif

#endif /* DPUSIM_DPU_H */
