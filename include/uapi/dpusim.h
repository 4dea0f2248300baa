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
 *   ENOMEM     the kernel could not allocate its own bookkeeping, or
 *              the user pages a transfer pins would exceed the caller's
 *              RLIMIT_MEMLOCK (without CAP_IPC_LOCK)
 *   ENOSPC     the simulated-memory budget is exhausted; nothing changed
 *   EAGAIN     the open file's queue of asynchronous transfers is full
 *              (DPUSIM_ASYNC_MAX_*); DPUSIM_IOCTL_SYNC, then try again
 *   ENOTTY     unknown ioctl command
 *   ENODEV     the device is gone
 *   ETIMEDOUT  a wait for queued asynchronous transfers timed out
 *   EINTR      a wait was interrupted by a signal (ERESTARTSYS restarts it)
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
	DPUSIM_CMD_XFER,
	DPUSIM_CMD_SYNC,
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

/**
 * struct dpusim_block - one host block of a transfer
 * @addr: user address of the block
 * @length: bytes in the block (0 is allowed and moves nothing)
 */
struct dpusim_block {
	__aligned_u64 addr;
	__aligned_u64 length;
};

/**
 * struct dpusim_xfer_dpu - the blocks of one DPU
 * @dpu: index of the DPU in the rank; each DPU at most once per transfer
 * @nr_blocks: how many of dpusim_xfer::blocks belong to this DPU; the
 *             blocks of dpus[0] come first, then those of dpus[1], ...
 */
struct dpusim_xfer_dpu {
	__u32 dpu;
	__u32 nr_blocks;
};

/* dpusim_xfer::flags */
enum {
	/* MRAM to host blocks (scatter); without it, host blocks to MRAM */
	DPUSIM_XFER_FROM_DPU = 1 << 0,
	/*
	 * A DPU's blocks may add up to less or more than @length: to the DPU,
	 * the rest of the @length bytes of MRAM is filled with zeros; from the
	 * DPU, only the bytes the blocks hold are written; bytes past @length
	 * are never moved.  Without the flag the sum must equal @length.
	 */
	DPUSIM_XFER_NO_LENGTH_CHECK = 1 << 1,
	/* The memory is the DPU's WRAM instead of its MRAM */
	DPUSIM_XFER_WRAM = 1 << 2,
	/*
	 * Return once the transfer is queued; DPUSIM_IOCTL_SYNC waits for it.
	 * Everything is checked, the user pages pinned and the memory pages
	 * allocated before the call returns, so its errors are those of a
	 * synchronous call, with nothing changed; EAGAIN if the queue is full
	 * (DPUSIM_ASYNC_MAX_*).  The pinned pages stay charged to the caller's
	 * RLIMIT_MEMLOCK until the copy is done.  The user buffers must stay
	 * valid and unchanged until DPUSIM_IOCTL_SYNC.  Queued transfers of
	 * the open file run in submission order; a synchronous
	 * DPUSIM_IOCTL_XFER waits for them first.  Closing the file (also at
	 * process exit) does not wait: the queued transfers still complete,
	 * and the rank is free for the next open() once they have (an open()
	 * meanwhile waits for them, interruptibly, for at most
	 * DPUSIM_SYNC_DEFAULT_TIMEOUT_MS, then fails with EBUSY).
	 */
	DPUSIM_XFER_ASYNC = 1 << 3,
};

/* Limits of one DPUSIM_IOCTL_XFER (E2BIG above them) */
#define DPUSIM_XFER_MAX_BLOCKS	(1U << 20)	/* blocks in one call */
#define DPUSIM_XFER_MAX_BYTES	(1ULL << 30)	/* bytes moved in one call */
/*
 * Zeros written past the blocks, up to @length, to the DPUs of one call
 * (DPUSIM_XFER_NO_LENGTH_CHECK, to the DPU): the sum over its DPUs.
 */
#define DPUSIM_XFER_MAX_PAD_BYTES	(4ULL << 30)
/*
 * Distinct user pages one call pins (each page once, however many blocks
 * lie in it); pages are 4 KiB on x86-64.
 */
#define DPUSIM_XFER_MAX_PAGES	(1U << 19)

/*
 * Limits of the asynchronous queue of an open file (EAGAIN above them):
 * transfers queued and not finished, and what they hold together.  Bytes
 * count both the bytes moved and the zero padding.
 */
#define DPUSIM_ASYNC_MAX_JOBS	64U
#define DPUSIM_ASYNC_MAX_BLOCKS	(1U << 21)
#define DPUSIM_ASYNC_MAX_BYTES	(8ULL << 30)
#define DPUSIM_ASYNC_MAX_PAGES	(1U << 20)

/**
 * struct dpusim_xfer - DPUSIM_IOCTL_XFER
 * @size: sizeof(struct dpusim_xfer)
 * @flags: DPUSIM_XFER_*
 * @offset: byte offset in each DPU's memory; a multiple of 8
 * @length: bytes of memory per DPU; a multiple of 8
 * @nr_dpus: entries in @dpus, at most the rank's DPU count
 * @nr_blocks: entries in @blocks, the sum of dpus[].nr_blocks
 * @dpus: user pointer to struct dpusim_xfer_dpu[@nr_dpus]
 * @blocks: user pointer to struct dpusim_block[@nr_blocks]
 *
 * Moves data between host blocks and the memory of several DPUs of the
 * rank in one call.  The whole descriptor is checked, every distinct user
 * page of the blocks is pinned (once) and charged to the caller's
 * RLIMIT_MEMLOCK (as pinned memory, mm->pinned_vm, like RDMA and iommufd
 * do), and every memory page the call writes is allocated before a byte
 * moves: a call that fails changes nothing.  Errors:
 * EINVAL (unknown flag, unaligned offset/length, DPU index out of the rank
 * or repeated, block counts that do not add up, a DPU's block lengths not
 * adding up to @length without DPUSIM_XFER_NO_LENGTH_CHECK), E2BIG (more
 * DPUs than the rank has, over DPUSIM_XFER_MAX_BLOCKS,
 * DPUSIM_XFER_MAX_BYTES, DPUSIM_XFER_MAX_PAD_BYTES or
 * DPUSIM_XFER_MAX_PAGES), EOVERFLOW (@offset + @length past the memory),
 * EFAULT (a bad descriptor or block address), ENOSPC (the module's
 * resident-memory budget, parameter mram_budget, would be exceeded),
 * ENOMEM (also: the pinned pages would exceed RLIMIT_MEMLOCK), EAGAIN
 * (DPUSIM_XFER_ASYNC: the queue is full).  A synchronous call first waits
 * for the file's queued asynchronous transfers: EINTR/ERESTARTSYS on a
 * signal, ETIMEDOUT after DPUSIM_SYNC_DEFAULT_TIMEOUT_MS, both with nothing
 * changed.
 */
struct dpusim_xfer {
	__u32 size;
	__u32 flags;
	__aligned_u64 offset;
	__aligned_u64 length;
	__u32 nr_dpus;
	__u32 nr_blocks;
	__aligned_u64 dpus;
	__aligned_u64 blocks;
};

#define DPUSIM_IOCTL_XFER	_IO(DPUSIM_TYPE, DPUSIM_CMD_XFER)

/* dpusim_sync::timeout_ms: 0 means the default; above the maximum, EINVAL */
#define DPUSIM_SYNC_DEFAULT_TIMEOUT_MS	10000U
#define DPUSIM_SYNC_MAX_TIMEOUT_MS	600000U

/**
 * struct dpusim_sync - DPUSIM_IOCTL_SYNC
 * @size: sizeof(struct dpusim_sync)
 * @flags: must be 0
 * @timeout_ms: longest wait in milliseconds; 0 for
 *              DPUSIM_SYNC_DEFAULT_TIMEOUT_MS, at most
 *              DPUSIM_SYNC_MAX_TIMEOUT_MS
 * @__reserved: must be 0
 *
 * Waits until every DPUSIM_XFER_ASYNC transfer queued on the open file has
 * finished.  Returns 0, or the first error one of them hit since the
 * previous DPUSIM_IOCTL_SYNC (as -errno; the error is then cleared).
 * Errors: EINVAL (unknown flag, non-zero @__reserved, @timeout_ms over the
 * maximum, @size below 16), E2BIG (non-zero bytes past the struct), EFAULT
 * (bad struct pointer), ETIMEDOUT (the transfers did not finish in time;
 * they are still queued), EINTR/ERESTARTSYS (a signal; call again).
 */
struct dpusim_sync {
	__u32 size;
	__u32 flags;
	__u32 timeout_ms;
	__u32 __reserved;
};

#define DPUSIM_IOCTL_SYNC	_IO(DPUSIM_TYPE, DPUSIM_CMD_SYNC)

#endif /* _UAPI_DPUSIM_H */
