/* SPDX-License-Identifier: MIT */
/*
 * dpusim — types of the UPMEM-compatible host API (as UPMEM's dpu_types.h).
 */
#ifndef DPUSIM_DPU_TYPES_H
#define DPUSIM_DPU_TYPES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DPUSIM_API
#define DPUSIM_API __attribute__((visibility("default")))
#endif

/** Name of the symbol that always names the whole MRAM of a DPU. */
#define DPU_MRAM_HEAP_POINTER_NAME "__sys_used_mram_end"

typedef uint32_t dpu_mem_max_addr_t;
typedef uint32_t dpu_mem_max_size_t;

/* Ids of dpu_management.h, as UPMEM's */
typedef uint16_t dpu_rank_id_t;
typedef uint32_t dpu_id_t;
typedef uint8_t dpu_slice_id_t;
typedef uint8_t dpu_member_id_t;

/** A simulated rank (opaque; one open /dev/dpusim/rankN). */
struct dpu_rank_t;
/** One DPU of a rank (opaque). */
struct dpu_t;
/** A loaded DPU program (opaque). */
struct dpu_program_t;

/** What a struct dpu_set_t holds. */
typedef enum _dpu_set_kind_t {
	/** A list of ranks (what dpu_alloc returns, DPU_RANK_FOREACH yields). */
	DPU_SET_RANKS,
	/** Exactly one DPU (what DPU_FOREACH yields). */
	DPU_SET_DPU,
} dpu_set_kind_t;

/** A set of DPUs; a small value passed by copy, as UPMEM's. */
struct dpu_set_t {
	dpu_set_kind_t kind;
	union {
		struct {
			uint32_t nr_ranks;
			struct dpu_rank_t **ranks;
		} list;
		struct dpu_t *dpu;
	};
};

/** Address and size of a symbol of a loaded program. */
struct dpu_symbol_t {
	dpu_mem_max_addr_t address;
	dpu_mem_max_size_t size;
};

#ifdef __cplusplus
}
#endif

#endif /* DPUSIM_DPU_TYPES_H */
