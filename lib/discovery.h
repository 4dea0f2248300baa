/* SPDX-License-Identifier: MIT */
/*
 * Finding the simulated ranks through libudev (sysfs class "dpusim").
 * Reads sysfs only: never opens a device, so it works while ranks are
 * owned (by this process or others).
 */
#ifndef DPUSIM_LIB_DISCOVERY_H
#define DPUSIM_LIB_DISCOVERY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dpu_error.h>

/* Bits of dpusim_rank_desc.valid: which attributes were read and parsed. */
enum {
	DPUSIM_ATTR_NR_DPUS = 1 << 0,
	DPUSIM_ATTR_MRAM_SIZE = 1 << 1,
	DPUSIM_ATTR_WRAM_SIZE = 1 << 2,
	DPUSIM_ATTR_IS_OWNED = 1 << 3,
	DPUSIM_ATTR_OWNER_PID = 1 << 4,
	DPUSIM_ATTR_MRAM_RESIDENT = 1 << 5,
	DPUSIM_ATTR_WRAM_RESIDENT = 1 << 6,
	DPUSIM_ATTR_PINNED = 1 << 7,
	DPUSIM_ATTR_ASYNC = 1 << 8,	/* all four async_* */
};

struct dpusim_rank_desc {
	uint32_t index;			/* N of rankN */
	char devnode[PATH_MAX];		/* /dev/dpusim/rankN */
	unsigned int valid;		/* DPUSIM_ATTR_* */
	uint32_t nr_dpus;
	uint64_t mram_size;		/* bytes per DPU */
	uint32_t wram_size;		/* bytes per DPU */
	bool is_owned;
	uint32_t owner_pid;		/* 0 if none */
	uint64_t mram_resident_bytes;
	uint64_t wram_resident_bytes;
	uint64_t pinned_pages;		/* user pages the rank holds pinned */
	/* the queue of asynchronous transfers, against DPUSIM_ASYNC_MAX_* */
	uint64_t async_jobs, async_blocks, async_bytes, async_pages;
};

/*
 * All ranks, sorted by index. *count may be 0 (no module loaded): the
 * caller decides whether that is an error (see DPUSIM_NO_RANKS_MSG).
 * Returns DPU_ERR_SYSTEM with a reason in errbuf if libudev fails.
 * Free *ranks with free().
 */
dpu_error_t dpusim_discover(struct dpusim_rank_desc **ranks, uint32_t *count,
			    char *errbuf, size_t errlen);

/*
 * The tag-matching device (/dev/dpusim/tm) and its counters, sysfs
 * /sys/class/dpusim/tm/<name> for each name of dpusim_tm_stat_names (in
 * that order: the current values first, then the cumulative ones).
 */
#define DPUSIM_TM_NR_STATS 12
extern const char *const dpusim_tm_stat_names[DPUSIM_TM_NR_STATS];

struct dpusim_tm_desc {
	char devnode[PATH_MAX];		/* /dev/dpusim/tm */
	unsigned int valid;		/* bit i: stats[i] was read and parsed */
	uint64_t stats[DPUSIM_TM_NR_STATS];
};

/*
 * Fills *tm and sets *found when the class device "tm" exists (the module
 * is loaded); *found = false otherwise, which is not an error.  Returns
 * DPU_ERR_SYSTEM with a reason in errbuf if libudev fails.
 */
dpu_error_t dpusim_discover_tm(struct dpusim_tm_desc *tm, bool *found,
			       char *errbuf, size_t errlen);

/* "rank12" -> 12; false for anything else ("tm", "rank", "rank1x"). */
bool dpusim_parse_rank_name(const char *sysname, uint32_t *index);

#define DPUSIM_NO_RANKS_MSG "no dpusim ranks found: is dpusim.ko loaded?"

#endif /* DPUSIM_LIB_DISCOVERY_H */
