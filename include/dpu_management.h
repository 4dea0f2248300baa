/* SPDX-License-Identifier: MIT */
/*
 * dpusim — the everyday part of UPMEM's dpu_management.h: the rank and DPU
 * behind a set member, and their ids.
 *
 * dpusim's topology: a rank's DPUs are numbered 0 .. n-1 in DPU_FOREACH
 * order; DPU i sits on slice (control interface) i / 8, member i % 8, as
 * the 8 chips x 8 DPUs of a hardware rank. A rank's id is N of
 * /dev/dpusim/rankN; a DPU's id is (rank id << 16) | (slice << 8) | member.
 */
#ifndef DPUSIM_DPU_MANAGEMENT_H
#define DPUSIM_DPU_MANAGEMENT_H

#include <stdbool.h>

#include "dpu_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** DPUs per slice (control interface) of a rank. */
#define DPUSIM_DPUS_PER_SLICE 8

/** The one rank of a set of one rank (DPU_RANK_FOREACH), else NULL. */
DPUSIM_API struct dpu_rank_t *dpu_rank_from_set(struct dpu_set_t set);
/** The DPU of a one-DPU set (DPU_FOREACH), else NULL. */
DPUSIM_API struct dpu_t *dpu_from_set(struct dpu_set_t set);
/** A one-rank set; *rank must stay valid while the set is used. */
DPUSIM_API struct dpu_set_t dpu_set_from_rank(struct dpu_rank_t **rank);
/** A one-DPU set. */
DPUSIM_API struct dpu_set_t dpu_set_from_dpu(struct dpu_t *dpu);

/** The DPU at slice, member of a rank, or NULL past the rank. */
DPUSIM_API struct dpu_t *dpu_get(struct dpu_rank_t *rank,
				 dpu_slice_id_t slice_id,
				 dpu_member_id_t member_id);
/** The rank of a DPU. */
DPUSIM_API struct dpu_rank_t *dpu_get_rank(struct dpu_t *dpu);
/** N of the rank's /dev/dpusim/rankN. */
DPUSIM_API dpu_id_t dpu_get_rank_id(struct dpu_rank_t *rank);
/** (rank id << 16) | (slice << 8) | member. */
DPUSIM_API dpu_id_t dpu_get_id(struct dpu_t *dpu);
DPUSIM_API dpu_slice_id_t dpu_get_slice_id(struct dpu_t *dpu);
DPUSIM_API dpu_member_id_t dpu_get_member_id(struct dpu_t *dpu);
/** false for the DPUs past nr_dpus in the last rank of dpu_alloc. */
DPUSIM_API bool dpu_is_enabled(struct dpu_t *dpu);

#ifdef __cplusplus
}
#endif

#endif /* DPUSIM_DPU_MANAGEMENT_H */
