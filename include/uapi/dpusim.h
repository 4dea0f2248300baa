/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * dpusim ioctl ABI: the only header shared by dpusim.ko and libdpusim.
 *
 * Rules (see shared/design/uapi-rules.md):
 *  - fixed-size types only; user pointers are __aligned_u64;
 *  - every struct starts with __u32 size, is naturally aligned, explicitly
 *    padded and a multiple of 8 bytes;
 *  - the kernel reads a struct with copy_struct_from_user(): a shorter
 *    struct is zero-extended, a longer one must have an all-zero tail;
 *  - every flags / reserved field is checked.
 *
 * errno meanings, fixed for every ioctl:
 *   EFAULT     a user pointer (the struct or one it names) is bad
 *   EINVAL     a malformed field: unknown flag bit, non-zero reserved
 *              field, size below the first published version of the struct
 *   E2BIG      non-zero bytes past the end of the struct the kernel knows,
 *              or a count over its documented limit
 *   EOVERFLOW  offset + length wraps or leaves the simulated memory
 *   EBUSY      the rank is owned by another open file
 *   ENOMEM     the kernel could not allocate its own bookkeeping
 *   ENOSPC     the simulated-memory budget is exhausted; nothing changed
 *   ENOTTY     unknown ioctl command
 *   ENODEV     the device is gone
 */
#ifndef _UAPI_DPUSIM_H
#define _UAPI_DPUSIM_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define DPUSIM_ABI_VERSION	1

#define DPUSIM_TYPE		0xDB
#define DPUSIM_CMD_BASE		0x80

enum {
	DPUSIM_CMD_RANK_INFO = DPUSIM_CMD_BASE,
};

/**
 * struct dpusim_rank_info - DPUSIM_IOCTL_RANK_INFO
 * @size: sizeof(struct dpusim_rank_info)
 * @flags: must be 0
 * @abi_version: out, DPUSIM_ABI_VERSION
 * @rank_index: out, N of /dev/dpusim/rankN
 * @nr_dpus: out, DPUs in this rank
 * @wram_size: out, bytes of WRAM per DPU
 * @mram_size: out, bytes of MRAM per DPU
 *
 * Returns the geometry of the rank the file descriptor is open on.
 */
struct dpusim_rank_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 rank_index;
	__u32 nr_dpus;
	__u32 wram_size;
	__aligned_u64 mram_size;
};

#define DPUSIM_IOCTL_RANK_INFO	_IO(DPUSIM_TYPE, DPUSIM_CMD_RANK_INFO)

#endif /* _UAPI_DPUSIM_H */
