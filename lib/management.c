// SPDX-License-Identifier: MIT
/* libdpusim: dpu_management.h — ranks, DPUs and their ids. */
#include <stddef.h>

#include <dpu_management.h>

#include "internal.h"

DPUSIM_API struct dpu_rank_t *dpu_rank_from_set(struct dpu_set_t set)
{
	if (set.kind != DPU_SET_RANKS || set.list.nr_ranks != 1 || !set.list.ranks)
		return NULL;
	return set.list.ranks[0];
}

DPUSIM_API struct dpu_t *dpu_from_set(struct dpu_set_t set)
{
	return set.kind == DPU_SET_DPU ? set.dpu : NULL;
}

DPUSIM_API struct dpu_set_t dpu_set_from_rank(struct dpu_rank_t **rank)
{
	struct dpu_set_t s = {
		.kind = DPU_SET_RANKS,
		.list = { .nr_ranks = 1, .ranks = rank },
	};

	return s;
}

DPUSIM_API struct dpu_set_t dpu_set_from_dpu(struct dpu_t *dpu)
{
	struct dpu_set_t s = { .kind = DPU_SET_DPU, .dpu = dpu };

	return s;
}

DPUSIM_API struct dpu_t *dpu_get(struct dpu_rank_t *rank,
				 dpu_slice_id_t slice_id,
				 dpu_member_id_t member_id)
{
	uint32_t i;

	if (!rank || member_id >= DPUSIM_DPUS_PER_SLICE)
		return NULL;
	i = (uint32_t)slice_id * DPUSIM_DPUS_PER_SLICE + member_id;
	return i < rank->nr_dpus ? &rank->dpus[i] : NULL;
}

DPUSIM_API struct dpu_rank_t *dpu_get_rank(struct dpu_t *dpu)
{
	return dpu ? dpu->rank : NULL;
}

DPUSIM_API dpu_id_t dpu_get_rank_id(struct dpu_rank_t *rank)
{
	return rank ? rank->index : 0;
}

DPUSIM_API dpu_slice_id_t dpu_get_slice_id(struct dpu_t *dpu)
{
	return dpu ? (dpu_slice_id_t)(dpu->index_in_rank / DPUSIM_DPUS_PER_SLICE) : 0;
}

DPUSIM_API dpu_member_id_t dpu_get_member_id(struct dpu_t *dpu)
{
	return dpu ? (dpu_member_id_t)(dpu->index_in_rank % DPUSIM_DPUS_PER_SLICE) : 0;
}

DPUSIM_API dpu_id_t dpu_get_id(struct dpu_t *dpu)
{
	if (!dpu)
		return 0;
	return (dpu->rank->index << 16) | ((uint32_t)dpu_get_slice_id(dpu) << 8) |
	       dpu_get_member_id(dpu);
}

DPUSIM_API bool dpu_is_enabled(struct dpu_t *dpu)
{
	return dpu && dpu->enabled;
}
