/* SPDX-License-Identifier: MIT */
/*
 * Host unit tests: a set of ranks built in memory, with no device behind
 * it (fd -1), as dpu_alloc would assemble it.
 */
#ifndef DPUSIM_TESTS_UNIT_SET_H
#define DPUSIM_TESTS_UNIT_SET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <uapi/dpusim.h>

#include "internal.h"

#define UNIT_MRAM_SIZE (64ULL << 20)

static bool make_set(uint32_t nr_ranks, uint32_t dpus_per_rank,
		     uint32_t nr_dpus, const char *profile,
		     struct dpu_set_t *set)
{
	struct dpu_rank_t **ranks = calloc(nr_ranks, sizeof(*ranks));
	struct dpusim_profile p;
	uint32_t i;

	if (!ranks || dpusim_profile_parse(profile, &p, NULL, 0) != DPU_OK) {
		free(ranks);
		return false;
	}
	for (i = 0; i < nr_ranks; i++) {
		struct dpusim_rank_info info = {
			.size = sizeof(info),
			.abi_version = DPUSIM_ABI_VERSION,
			.rank_index = i,
			.nr_dpus = dpus_per_rank,
			.wram_size = 64 << 10,
			.mram_size = UNIT_MRAM_SIZE,
		};
		if (dpusim_rank_new(-1, &info, &ranks[i]) != DPU_OK) {
			while (i--)
				dpusim_rank_destroy(ranks[i]);
			free(ranks);
			return false;
		}
	}
	/* Takes the ranks, also on failure. */
	return dpusim_set_assemble(ranks, nr_ranks, nr_dpus, &p, set) == DPU_OK;
}

#endif
