// SPDX-License-Identifier: GPL-2.0
/*
 * dpusim: simulated processing-in-memory DPU ranks.
 *
 * Module entry: the geometry parameters, the "dpusim" class and one
 * char device per rank (/dev/dpusim/rank<N>).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include "dpusim.h"
#include "tm.h"

static unsigned int ranks = 4;
module_param(ranks, uint, 0444);
MODULE_PARM_DESC(ranks, "Number of simulated ranks (default 4)");

static unsigned int dpus_per_rank = 64;
module_param(dpus_per_rank, uint, 0444);
MODULE_PARM_DESC(dpus_per_rank, "DPUs per rank (default 64)");

static ulong mram_size = 64UL << 20;
module_param(mram_size, ulong, 0444);
MODULE_PARM_DESC(mram_size, "MRAM bytes per DPU, a multiple of PAGE_SIZE (default 64 MiB)");

static unsigned int wram_size = 64U << 10;
module_param(wram_size, uint, 0444);
MODULE_PARM_DESC(wram_size, "WRAM bytes per DPU, a multiple of 8 (default 64 KiB)");

static char *dpusim_devnode(dpusim_devnode_dev *dev, umode_t *mode)
{
	/* tag matching decides per object what a process may reach */
	if (mode && !strcmp(dev_name(dev), "tm"))
		*mode = 0666;
	return kasprintf(GFP_KERNEL, "dpusim/%s", dev_name(dev));
}

static struct class dpusim_class = {
	.name = "dpusim",
	.devnode = dpusim_devnode,
};

static dev_t dpusim_devt;
static struct dpusim_rank **dpusim_ranks;
static u32 dpusim_nr_ranks;

static void dpusim_destroy_ranks(void)
{
	while (dpusim_nr_ranks)
		dpusim_rank_destroy(dpusim_ranks[--dpusim_nr_ranks]);
}

static int __init dpusim_init(void)
{
	const struct dpusim_geometry geo = {
		.nr_ranks = ranks,
		.nr_dpus = dpus_per_rank,
		.mram_size = mram_size,
		.wram_size = wram_size,
	};
	struct dpusim_rank *rank;
	int ret;

	ret = dpusim_geometry_check(&geo);
	if (ret)
		return ret;
	dpusim_budget_default(&dpusim_budget);

	dpusim_ranks = kcalloc(geo.nr_ranks, sizeof(*dpusim_ranks), GFP_KERNEL);
	if (!dpusim_ranks)
		return -ENOMEM;

	/* minors 0 .. nr_ranks - 1: the ranks; nr_ranks: tm */
	ret = alloc_chrdev_region(&dpusim_devt, 0, geo.nr_ranks + 1, "dpusim");
	if (ret)
		goto err_free;

	ret = class_register(&dpusim_class);
	if (ret)
		goto err_region;

	while (dpusim_nr_ranks < geo.nr_ranks) {
		rank = dpusim_rank_create(dpusim_nr_ranks, &geo,
					  MKDEV(MAJOR(dpusim_devt),
						dpusim_nr_ranks),
					  &dpusim_class);
		if (IS_ERR(rank)) {
			ret = PTR_ERR(rank);
			goto err_ranks;
		}
		dpusim_ranks[dpusim_nr_ranks++] = rank;
	}

	ret = dpusim_tm_create(MKDEV(MAJOR(dpusim_devt), geo.nr_ranks),
			       &dpusim_class);
	if (ret)
		goto err_ranks;

	pr_info("%u ranks of %u DPUs, %llu bytes MRAM and %u bytes WRAM per DPU\n",
		geo.nr_ranks, geo.nr_dpus, geo.mram_size, geo.wram_size);
	return 0;

err_ranks:
	dpusim_destroy_ranks();
	class_unregister(&dpusim_class);
err_region:
	unregister_chrdev_region(dpusim_devt, geo.nr_ranks + 1);
err_free:
	kfree(dpusim_ranks);
	return ret;
}

static void __exit dpusim_exit(void)
{
	u32 nr = dpusim_nr_ranks;

	dpusim_tm_destroy();
	dpusim_destroy_ranks();
	class_unregister(&dpusim_class);
	unregister_chrdev_region(dpusim_devt, nr + 1);
	kfree(dpusim_ranks);
}

module_init(dpusim_init);
module_exit(dpusim_exit);

MODULE_DESCRIPTION("Simulated processing-in-memory DPU ranks");
MODULE_LICENSE("GPL");
