/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dpusim internal declarations shared by the module's files.
 */
#ifndef _DPUSIM_H
#define _DPUSIM_H

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <uapi/dpusim.h>

#include "compat.h"

/* Upper bounds of the module parameters. */
#define DPUSIM_MAX_RANKS	64
#define DPUSIM_MAX_DPUS		256
#define DPUSIM_MAX_MRAM		((u64)SZ_1G)
#define DPUSIM_MAX_WRAM		SZ_1M

struct dpusim_geometry {
	u32 nr_ranks;
	u32 nr_dpus;
	u64 mram_size;
	u32 wram_size;
};

/* Bits of dpusim_rank::flags */
enum {
	DPUSIM_RANK_OWNED,
};

/**
 * struct dpusim_rank - one simulated rank, /dev/dpusim/rank<index>
 * @dev: the device; its release frees the rank
 * @cdev: the char device
 * @index: N of rankN
 * @nr_dpus: DPUs in the rank
 * @mram_size: MRAM bytes per DPU
 * @wram_size: WRAM bytes per DPU
 * @flags: DPUSIM_RANK_OWNED while an open file owns the rank
 * @lock: protects @owner
 * @owner: the process that opened the rank, or NULL
 */
struct dpusim_rank {
	struct device dev;
	struct cdev cdev;
	u32 index;
	u32 nr_dpus;
	u64 mram_size;
	u32 wram_size;
	unsigned long flags;
	struct mutex lock;	/* protects owner */
	struct pid *owner;
};

/* main.c */
extern struct class dpusim_class;

/* rank.c */
int dpusim_geometry_check(const struct dpusim_geometry *geo);
void dpusim_rank_init(struct dpusim_rank *rank, u32 index,
		      const struct dpusim_geometry *geo);
int dpusim_rank_claim(struct dpusim_rank *rank);
void dpusim_rank_release(struct dpusim_rank *rank);
struct dpusim_rank *dpusim_rank_create(u32 index,
				       const struct dpusim_geometry *geo,
				       dev_t devt);
void dpusim_rank_destroy(struct dpusim_rank *rank);

/* ioctl.c */
long dpusim_ioctl_dispatch(struct dpusim_rank *rank, unsigned int cmd,
			   void __user *ubuffer);
long dpusim_rank_ioctl(struct file *filp, unsigned int cmd,
		       unsigned long arg);

#endif /* _DPUSIM_H */
