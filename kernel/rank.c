// SPDX-License-Identifier: GPL-2.0
/*
 * A rank: its geometry, its DPUs' memories and the state of each part
 * (transfers, the asynchronous queue, DPU runs, streams), set up and torn
 * down here.  Its device and files: rank_dev.c; its ownership: owner.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/compat.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pid_namespace.h>
#include <linux/slab.h>

#include "xfer.h"

/**
 * dpusim_geometry_check - validate the module parameters
 * @geo: the requested geometry
 *
 * Return: 0, or -EINVAL with a message naming the bad parameter.
 */
int dpusim_geometry_check(const struct dpusim_geometry *geo)
{
	if (!geo->nr_ranks || geo->nr_ranks > DPUSIM_MAX_RANKS) {
		pr_err("ranks=%u: must be 1..%u\n", geo->nr_ranks,
		       DPUSIM_MAX_RANKS);
		return -EINVAL;
	}
	if (!geo->nr_dpus || geo->nr_dpus > DPUSIM_MAX_DPUS) {
		pr_err("dpus_per_rank=%u: must be 1..%u\n", geo->nr_dpus,
		       DPUSIM_MAX_DPUS);
		return -EINVAL;
	}
	if (!geo->mram_size || geo->mram_size > DPUSIM_MAX_MRAM ||
	    !PAGE_ALIGNED(geo->mram_size)) {
		pr_err("mram_size=%llu: must be a multiple of %lu up to %llu\n",
		       geo->mram_size, PAGE_SIZE, DPUSIM_MAX_MRAM);
		return -EINVAL;
	}
	if (!geo->wram_size || geo->wram_size > DPUSIM_MAX_WRAM ||
	    !IS_ALIGNED(geo->wram_size, 8)) {
		pr_err("wram_size=%u: must be a multiple of 8 up to %u\n",
		       geo->wram_size, DPUSIM_MAX_WRAM);
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_geometry_check);

/* The arrays dpusim_rank_init() allocates (NULL: never allocated) */
static void dpusim_rank_free_arrays(struct dpusim_rank *rank)
{
	kvfree(rank->xfer.split_act);
	rank->xfer.split_act = NULL;
	kvfree(rank->xfer.split_c);
	rank->xfer.split_c = NULL;
	kvfree(rank->dpus);
	rank->dpus = NULL;
}

/**
 * dpusim_rank_init - set up a rank's state, without any device
 * @rank: zeroed rank
 * @index: N of rankN
 * @geo: validated geometry
 * @budget: where the rank's memory is charged
 *
 * Return: 0 or -ENOMEM.
 */
int dpusim_rank_init(struct dpusim_rank *rank, u32 index,
		     const struct dpusim_geometry *geo,
		     struct dpusim_budget *budget)
{
	u32 i;

	rank->index = index;
	rank->dpus = kvcalloc(geo->nr_dpus, sizeof(*rank->dpus), GFP_KERNEL);
	rank->xfer.split_c = kvcalloc(array_size(DPUSIM_XFER_CHUNKS,
						 geo->nr_dpus),
				      sizeof(*rank->xfer.split_c), GFP_KERNEL);
	rank->xfer.split_act = kvcalloc(array_size(DPUSIM_XFER_CHUNKS,
						   geo->nr_dpus),
					sizeof(*rank->xfer.split_act),
					GFP_KERNEL);
	if (!rank->dpus || !rank->xfer.split_c || !rank->xfer.split_act ||
	    dpusim_async_init(rank)) {
		dpusim_rank_free_arrays(rank);
		return -ENOMEM;
	}
	rank->nr_dpus = geo->nr_dpus;
	rank->mram_size = geo->mram_size;
	rank->wram_size = geo->wram_size;
	rank->budget = budget;
	/* Unowned, the rank holds its own reference: jobs may come and go. */
	kref_init(&rank->owner.ref);
	init_waitqueue_head(&rank->owner.idle);
	mutex_init(&rank->owner.lock);
	mutex_init(&rank->state_lock);
	dpusim_run_init(rank);
	xa_init_flags(&rank->streams, XA_FLAGS_ALLOC);
	for (i = 0; i < rank->nr_dpus; i++) {
		dpusim_mem_init(&rank->dpus[i].mem[DPUSIM_MRAM],
				geo->mram_size, budget);
		dpusim_mem_init(&rank->dpus[i].mem[DPUSIM_WRAM],
				geo->wram_size, budget);
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_rank_init);

/**
 * dpusim_rank_fini - undo dpusim_rank_init()
 * @rank: the rank
 *
 * Queued asynchronous transfers finish first.
 */
void dpusim_rank_fini(struct dpusim_rank *rank)
{
	dpusim_async_fini(rank);
	dpusim_rank_free_memory(rank);
	dpusim_rank_free_arrays(rank);
	put_pid(rank->owner.pid);
	rank->owner.pid = NULL;
	mutex_destroy(&rank->run.worker_lock);
	mutex_destroy(&rank->state_lock);
	mutex_destroy(&rank->owner.lock);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_rank_fini);

/**
 * dpusim_rank_resident_bytes - bytes of the rank's MRAM or WRAM resident
 * @rank: the rank
 * @kind: DPUSIM_MRAM or DPUSIM_WRAM
 *
 * Return: the sum over its DPUs, read without locking (a snapshot).
 */
u64 dpusim_rank_resident_bytes(struct dpusim_rank *rank,
			       enum dpusim_mem_kind kind)
{
	unsigned long pages = 0;
	u32 i;

	for (i = 0; i < rank->nr_dpus; i++)
		pages += READ_ONCE(rank->dpus[i].mem[kind].nr_pages);
	return (u64)pages << PAGE_SHIFT;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_rank_resident_bytes);

