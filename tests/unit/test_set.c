// SPDX-License-Identifier: MIT
/*
 * Unit tests of DPU sets without a device: ranks are built in memory
 * (fd -1) and assembled as dpu_alloc does; then DPU_FOREACH,
 * DPU_RANK_FOREACH, sizes, disabled DPUs, props and dpu_free.
 */
#include <stdlib.h>
#include <string.h>

#include <uapi/dpusim.h>

#include "discovery.h"
#include "internal.h"
#include "unit.h"
#include "unit_set.h"

static void test_partial_last_rank(void)
{
	struct dpu_set_t set, dpu, rank;
	uint32_t n, i, r, visited = 0, per_rank[3] = { 0 };
	bool order_ok = true;
	struct dpusim_set_props *props;

	if (!make_set(3, 4, 10, NULL, &set)) {
		unit_fail("make set 3x4 for 10 DPUs", "failed");
		return;
	}
	unit_pass("make set 3x4 for 10 DPUs");

	UNIT_CHECK("nr_dpus is 10", dpu_get_nr_dpus(set, &n) == DPU_OK && n == 10, "got %u", n);
	UNIT_CHECK("nr_ranks is 3", dpu_get_nr_ranks(set, &n) == DPU_OK && n == 3, "got %u", n);

	DPU_FOREACH(set, dpu, i) {
		if (dpu.kind != DPU_SET_DPU || i != visited ||
		    dpu.dpu->index_in_set != i || !dpu.dpu->enabled ||
		    dpu.dpu->rank->index * 4 + dpu.dpu->index_in_rank != i)
			order_ok = false;
		visited++;
	}
	UNIT_CHECK("DPU_FOREACH(set, dpu, i) visits 10 in order", visited == 10 && order_ok,
		   "visited %u, order %s", visited, order_ok ? "ok" : "wrong");

	visited = 0;
	DPU_FOREACH(set, dpu)
		visited++;
	UNIT_CHECK("DPU_FOREACH(set, dpu) visits 10", visited == 10, "visited %u", visited);

	visited = 0;
	DPU_RANK_FOREACH(set, rank, r) {
		uint32_t k;

		if (r < 3) {
			DPU_FOREACH(rank, dpu, k)
				per_rank[r]++;
			if (dpu_get_nr_dpus(rank, &n) != DPU_OK || n != per_rank[r])
				order_ok = false;
			if (dpu_get_nr_ranks(rank, &n) != DPU_OK || n != 1)
				order_ok = false;
		}
		visited++;
	}
	UNIT_CHECK("DPU_RANK_FOREACH(set, rank, i) visits 3 ranks of 4,4,2",
		   visited == 3 && per_rank[0] == 4 && per_rank[1] == 4 &&
		   per_rank[2] == 2 && order_ok,
		   "visited %u ranks: %u,%u,%u", visited, per_rank[0],
		   per_rank[1], per_rank[2]);

	visited = 0;
	DPU_RANK_FOREACH(set, rank)
		visited++;
	UNIT_CHECK("DPU_RANK_FOREACH(set, rank) visits 3", visited == 3, "visited %u", visited);

	UNIT_CHECK("disabled tail DPUs", !set.list.ranks[2]->dpus[2].enabled &&
		   !set.list.ranks[2]->dpus[3].enabled &&
		   set.list.ranks[2]->nr_enabled == 2,
		   "wrong enable flags");

	props = dpusim_set_props(set, NULL);
	UNIT_CHECK("props: defaults resolved", props && !props->sg_enabled &&
		   props->sg_max_blocks_per_dpu == 10 && props->nr_dpus == 10 &&
		   props->nr_ranks == 3,
		   "props %p", (void *)props);

	/* one DPU of the set */
	{
		struct dpu_set_t one = { .kind = DPU_SET_DPU };
		struct dpu_set_t d2, r2;
		uint32_t c = 0, c2 = 0;

		one.dpu = &set.list.ranks[1]->dpus[3];
		DPU_FOREACH(one, d2, i)
			c += (d2.dpu == one.dpu && i == 0);
		DPU_RANK_FOREACH(one, r2)
			c2++;
		UNIT_CHECK("DPU_FOREACH over one DPU", c == 1, "count %u", c);
		UNIT_CHECK("DPU_RANK_FOREACH over one DPU", c2 == 1, "count %u", c2);
		UNIT_CHECK("nr_dpus of one DPU", dpu_get_nr_dpus(one, &n) == DPU_OK && n == 1, "got %u", n);
		UNIT_CHECK("props of one DPU", dpusim_set_props(one, NULL) == props, "different props");
		UNIT_CHECK("dpu_free of one DPU refused",
			   dpu_free(one) == DPU_ERR_INVALID_DPU_SET, "not refused");
	}

	/* a rank of the set is not the set */
	{
		struct dpu_set_t r1 = set;

		r1.list.ranks = set.list.ranks + 1;
		r1.list.nr_ranks = 1;
		UNIT_CHECK("dpu_free of a rank subset refused",
			   dpu_free(r1) == DPU_ERR_INVALID_DPU_SET, "not refused");
	}

	UNIT_CHECK("dpu_free of the set", dpu_free(set) == DPU_OK, "failed");
}

static void test_all_and_profile(void)
{
	struct dpu_set_t set, dpu;
	struct dpusim_set_props *props;
	uint32_t n = 0, c = 0;

	if (!make_set(2, 8, UINT32_MAX, "sgXferEnable=true,sgXferMaxBlocksPerDpu=5", &set)) {
		unit_fail("make set 2x8 all", "failed");
		return;
	}
	UNIT_CHECK("all: nr_dpus 16", dpu_get_nr_dpus(set, &n) == DPU_OK && n == 16, "got %u", n);
	DPU_FOREACH(set, dpu)
		c++;
	UNIT_CHECK("all: DPU_FOREACH visits 16", c == 16, "visited %u", c);
	props = dpusim_set_props(set, NULL);
	UNIT_CHECK("props: sg enabled, max 5", props && props->sg_enabled &&
		   props->sg_max_blocks_per_dpu == 5, "wrong props");
	UNIT_CHECK("all: dpu_free", dpu_free(set) == DPU_OK, "failed");

	if (!make_set(1, 64, 64, "sgXferEnable=true", &set)) {
		unit_fail("make set 1x64", "failed");
		return;
	}
	props = dpusim_set_props(set, NULL);
	UNIT_CHECK("props: max blocks defaults to nr_dpus", props &&
		   props->sg_max_blocks_per_dpu == 64, "got %u",
		   props ? props->sg_max_blocks_per_dpu : 0);
	UNIT_CHECK("one-rank set: dpu_free", dpu_free(set) == DPU_OK, "failed");
}

static void test_invalid_sets(void)
{
	struct dpu_set_t bad = { .kind = (dpu_set_kind_t)7 };
	struct dpu_set_t empty = { .kind = DPU_SET_RANKS };
	struct dpu_set_t nulldpu = { .kind = DPU_SET_DPU };
	struct dpu_set_t dpu;
	uint32_t n, c = 0;

	UNIT_CHECK("nr_dpus of bad kind", dpu_get_nr_dpus(bad, &n) == DPU_ERR_INVALID_DPU_SET, "accepted");
	UNIT_CHECK("nr_ranks of NULL dpu", dpu_get_nr_ranks(nulldpu, &n) == DPU_ERR_INVALID_DPU_SET, "accepted");
	UNIT_CHECK("nr_dpus of empty set is 0", dpu_get_nr_dpus(empty, &n) == DPU_OK && n == 0, "got %u", n);
	DPU_FOREACH(bad, dpu)
		c++;
	DPU_FOREACH(empty, dpu)
		c++;
	DPU_FOREACH(nulldpu, dpu)
		c++;
	UNIT_CHECK("no iteration over bad/empty sets", c == 0, "visited %u", c);
	UNIT_CHECK("dpu_free of empty set refused", dpu_free(empty) == DPU_ERR_INVALID_DPU_SET, "accepted");
	UNIT_CHECK("nr_dpus NULL output", dpu_get_nr_dpus(empty, NULL) != DPU_OK, "accepted");
}

static void test_rank_names(void)
{
	uint32_t i = 99;

	UNIT_CHECK("rank name rank0", dpusim_parse_rank_name("rank0", &i) && i == 0, "got %u", i);
	UNIT_CHECK("rank name rank17", dpusim_parse_rank_name("rank17", &i) && i == 17, "got %u", i);
	UNIT_CHECK("rank name rejects tm", !dpusim_parse_rank_name("tm", &i), "accepted");
	UNIT_CHECK("rank name rejects rank", !dpusim_parse_rank_name("rank", &i), "accepted");
	UNIT_CHECK("rank name rejects rank01", !dpusim_parse_rank_name("rank01", &i), "accepted");
	UNIT_CHECK("rank name rejects rank1x", !dpusim_parse_rank_name("rank1x", &i), "accepted");
	UNIT_CHECK("rank name rejects overflow", !dpusim_parse_rank_name("rank4294967296", &i), "accepted");
}

static void test_alloc_args(void)
{
	struct dpusim_rank_desc *descs = NULL;
	struct dpu_set_t set;
	uint32_t nr = 0;
	char err[256];

	UNIT_CHECK("dpu_alloc bad profile", dpu_alloc(1, "foo=1", &set) == DPU_ERR_INVALID_PROFILE,
		   "not DPU_ERR_INVALID_PROFILE");
	UNIT_CHECK("dpu_alloc 0 DPUs", dpu_alloc(0, NULL, &set) == DPU_ERR_ALLOCATION,
		   "not DPU_ERR_ALLOCATION");
	UNIT_CHECK("dpu_alloc_ranks 0 ranks", dpu_alloc_ranks(0, NULL, &set) == DPU_ERR_ALLOCATION,
		   "not DPU_ERR_ALLOCATION");
	UNIT_CHECK("dpu_alloc NULL set", dpu_alloc(1, NULL, NULL) == DPU_ERR_INVALID_DPU_SET,
		   "not DPU_ERR_INVALID_DPU_SET");

	if (dpusim_discover(&descs, &nr, err, sizeof(err)) == DPU_OK && nr == 0) {
		/* the host: no module loaded */
		UNIT_CHECK("dpu_alloc without ranks", dpu_alloc(1, NULL, &set) == DPU_ERR_ALLOCATION,
			   "not DPU_ERR_ALLOCATION");
		UNIT_CHECK("dpu_alloc ALL without ranks",
			   dpu_alloc(DPU_ALLOCATE_ALL, NULL, &set) == DPU_ERR_ALLOCATION,
			   "not DPU_ERR_ALLOCATION");
	}
	free(descs);
}

int main(void)
{
	test_partial_last_rank();
	test_all_and_profile();
	test_invalid_sets();
	test_rank_names();
	test_alloc_args();
	return unit_done();
}
