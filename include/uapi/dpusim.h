/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * dpusim ioctl ABI: the only header shared by dpusim.ko and libdpusim.
 *
 * Rules (see shared/design/uapi-rules.md):
 *  - fixed-size types only; user pointers are __aligned_u64;
 *  - every struct starts with __u32 size, is naturally aligned, explicitly
 *    padded and a multiple of 8 bytes;
 *  - the kernel reads a struct with copy_struct_from_user(): a shorter
 *    struct is zero-extended, a longer one must have an all-zero tail
 *    and a size of at most a page (4096 bytes);
 *  - every flags / reserved field is checked.
 *
 * errno meanings, fixed for every ioctl:
 *   EFAULT     a user pointer (the struct or one it names) is bad
 *   EINVAL     a malformed field: unknown flag bit, non-zero reserved
 *              field, size below the first published version of the struct
 *   E2BIG      non-zero bytes past the end of the struct the kernel knows,
 *              a struct size over 4096 bytes (a page; its tail is not
 *              read), or a count over its documented limit
 *   EOVERFLOW  offset + length wraps or leaves the simulated memory
 *   EBUSY      the rank is owned by another open file; a DPU the call
 *              names is RUNNING (DPU programs, below)
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
	DPUSIM_CMD_LAUNCH,
	DPUSIM_CMD_DPU_STATUS,
	DPUSIM_CMD_WORKER_OPEN,
	DPUSIM_CMD_STREAM_CREATE,
	DPUSIM_CMD_STREAM_OPEN,
	DPUSIM_CMD_STREAM_CLOSE,
	DPUSIM_CMD_STREAM_SEEK,
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
	/*
	 * The memory is stream @stream's (see "Streams" below) instead of a
	 * DPU's: one token moved by the core that has the stream open,
	 * @nr_dpus 1 and dpus[0].dpu that core.  With DPUSIM_XFER_FROM_DPU
	 * (down): @offset is the data of the token at the cursor and
	 * @length its size + DPUSIM_STREAM_HEADER (the token and the header
	 * after it, which gives the size of the next one); ENODATA at the end
	 * of the stream.  Without it (up, a stream created empty): @offset
	 * is the header at the cursor and @length n + 2 headers (the header
	 * prevsize, n; n data bytes, a multiple of 8; the header n, 0 that
	 * ends the stream after it); ENOSPC past the stream's capacity or
	 * DPUSIM_STREAM_MAX_TOKENS.  The kernel keeps the token sizes itself:
	 * headers a core writes wrong are its own data's problem only.  The
	 * cursor moves to the next token (after an up move, the stream ends
	 * there).  No alignment rule; with DPUSIM_XFER_WRAM or
	 * DPUSIM_XFER_NO_LENGTH_CHECK, or a stream the core has not open:
	 * EINVAL; no stream @stream: ENOENT; the core is a RUNNING DPU (its
	 * program is the core, DPUSIM_IOCTL_WORKER_STREAM_MOVE): EBUSY.
	 */
	DPUSIM_XFER_STREAM = 1 << 4,
	/*
	 * With DPUSIM_XFER_STREAM: each block's @addr is an offset into the
	 * token buffer the core registered when it opened the stream
	 * (struct dpusim_stream_cmd @buf), not a user address.  Its pages
	 * were pinned once, at the open: a move pins and charges nothing.
	 * EINVAL without DPUSIM_XFER_STREAM, if the stream has no buffer or
	 * a block (of at least one byte) does not lie inside it; EPERM from
	 * a process other than the one that registered it.
	 */
	DPUSIM_XFER_STREAM_BUF = 1 << 5,
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
 * @offset: byte offset in each DPU's memory; a multiple of 8 (4 for WRAM)
 * @length: bytes of memory per DPU; a multiple of 8 (4 for WRAM)
 * @nr_dpus: entries in @dpus, at most the rank's DPU count
 * @nr_blocks: entries in @blocks, the sum of dpus[].nr_blocks
 * @dpus: user pointer to struct dpusim_xfer_dpu[@nr_dpus]
 * @blocks: user pointer to struct dpusim_block[@nr_blocks]
 * @stream: with DPUSIM_XFER_STREAM: the stream; else ignored
 * @__reserved: must be 0
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
	__u32 stream;
	__u32 __reserved;
};

#define DPUSIM_IOCTL_XFER	_IO(DPUSIM_TYPE, DPUSIM_CMD_XFER)

/*
 * WRAM transfers (DPUSIM_XFER_WRAM) follow the SDK's 4-byte rule: @offset
 * and @length are multiples of DPUSIM_WRAM_ALIGN; MRAM transfers keep
 * DPUSIM_MRAM_ALIGN.
 */
#define DPUSIM_MRAM_ALIGN	8U
#define DPUSIM_WRAM_ALIGN	4U

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
 * finished.  A queued transfer cannot fail (every error comes back when it
 * is submitted), so it returns 0 once they have; the rank's status page
 * (DPUSIM_MMAP_STATUS) says so without a system call.  Errors: EINVAL
 * (unknown flag, non-zero @__reserved, @timeout_ms over the
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

/*
 * ------------------------------------------------------------------------
 * DPU programs (shared/design/dpu-programs.md)
 *
 * Each DPU of a rank has a run state, kept by the kernel:
 *   IDLE     never launched since the rank was opened
 *   RUNNING  launched and not finished: transfers to it (DPUSIM_IOCTL_XFER
 *            naming it) and launches of it fail with EBUSY
 *   DONE     its program returned
 *   FAULT    its program faulted (a broken MRAM rule, a crash, a worker
 *            that died); @reason of struct dpusim_dpu_state says why
 * The program itself runs in user space, in worker processes: the owner
 * of the rank opens worker files (DPUSIM_IOCTL_WORKER_OPEN) and hands each
 * one to a process that claims RUNNING DPUs one at a time
 * (DPUSIM_IOCTL_WORKER_CLAIM), maps the claimed DPU's memories (mmap of
 * the worker file, or its window, below), runs the program on them and
 * reports the end
 * (DPUSIM_IOCTL_WORKER_FINISH).  When the rank's owner file is released
 * (close, process exit or kill), the kernel sends SIGKILL to every
 * process that claimed through one of the rank's worker files, and the
 * rank stays owned until every worker file is closed: a killed host
 * leaves no worker behind.
 *
 * Memory mapping: mmap() of the rank file (any DPU) or of a worker file
 * (only the DPU it holds claimed, else EACCES) with MAP_SHARED (else
 * EINVAL) at the offsets below maps the DPU's memory itself: the pages
 * the transfers copy to and from.  A page never written is allocated at
 * its first touch and charged to the module's budget; over the budget the
 * access gets SIGBUS.  A range past the memory's size: EINVAL.
 * ------------------------------------------------------------------------
 */
#define DPUSIM_MMAP_DPU_SHIFT	31
#define DPUSIM_MMAP_WRAM_BIT	(1ULL << 30)
/* mmap offset of byte 0 of a DPU's MRAM, and of its WRAM */
#define DPUSIM_MMAP_MRAM(dpu)	((__u64)(dpu) << DPUSIM_MMAP_DPU_SHIFT)
#define DPUSIM_MMAP_WRAM(dpu)	(DPUSIM_MMAP_MRAM(dpu) | DPUSIM_MMAP_WRAM_BIT)

/*
 * The window of a worker file: one mapping (MAP_SHARED, at offset
 * DPUSIM_MMAP_WINDOW, at most DPUSIM_WINDOW_SIZE bytes) that shows the
 * WRAM (at 0) and the MRAM (at DPUSIM_WINDOW_MRAM) of whichever DPU the
 * worker holds, so that a worker runs DPU after DPU at the same addresses
 * without a call of its own: CLAIM maps the DPU's resident pages into the
 * window, FINISH takes them out, and the others are mapped at their first
 * touch.  While the worker holds no DPU, and past either memory, an
 * access gets SIGBUS.  One window per worker file (a second: EBUSY); it
 * can be neither moved (mremap) nor split (munmap or mprotect of a part):
 * EINVAL.  A child forked by the worker never has it, and
 * madvise(MADV_DOFORK) on it is EINVAL.  Offset DPUSIM_MMAP_WINDOW of the
 * rank file: EINVAL.
 */
#define DPUSIM_MMAP_WINDOW	DPUSIM_MMAP_MRAM(0xffffffffU)
#define DPUSIM_WINDOW_MRAM	(1ULL << 25)
#define DPUSIM_WINDOW_SIZE	(DPUSIM_WINDOW_MRAM + (1ULL << 30))

/*
 * The status page of a rank file: mmap() of one page at DPUSIM_MMAP_STATUS
 * (MAP_SHARED, else EINVAL; read only: PROT_WRITE or PROT_EXEC, EPERM, and
 * mprotect() cannot add them) shows a struct dpusim_rank_status, which the
 * kernel updates as the rank's DPUSIM_XFER_ASYNC transfers are queued and
 * finish: a caller learns without a system call that DPUSIM_IOCTL_SYNC
 * would not wait.  Every mapping shows the same page, from the rank's
 * first owner to the module's unloading: its counters never go back.
 * More than one page, or a worker file: EINVAL.
 */
#define DPUSIM_MMAP_STATUS	DPUSIM_MMAP_MRAM(0xfffffffdU)

/**
 * struct dpusim_rank_status - the page at DPUSIM_MMAP_STATUS
 * @async_queued: DPUSIM_XFER_ASYNC transfers queued on the rank so far
 *                (counted before the submitting call returns)
 * @async_done: how many of them finished: their bytes are in place and
 *              their pages let go (stored with release semantics after
 *              that)
 *
 * Read @async_queued, then @async_done with acquire semantics: if
 * @async_done is at least the @async_queued read first, every transfer
 * queued before that read has finished, as after a DPUSIM_IOCTL_SYNC that
 * returned.
 */
struct dpusim_rank_status {
	__aligned_u64 async_queued;
	__aligned_u64 async_done;
};

/* struct dpusim_dpu_state::state */
enum {
	DPUSIM_DPU_IDLE = 0,
	DPUSIM_DPU_RUNNING = 1,
	DPUSIM_DPU_DONE = 2,
	DPUSIM_DPU_FAULT = 3,
};

/* Bytes of struct dpusim_dpu_state::reason, with its NUL */
#define DPUSIM_REASON_LEN	56U

/* Worker files one rank may have open at once (E2BIG above) */
#define DPUSIM_MAX_WORKERS	64U

/**
 * struct dpusim_launch - DPUSIM_IOCTL_LAUNCH
 * @size: sizeof(struct dpusim_launch)
 * @flags: must be 0
 * @first_dpu: first DPU to launch
 * @nr_dpus: DPUs to launch, @first_dpu .. @first_dpu + @nr_dpus - 1
 *
 * Waits for the file's queued asynchronous transfers (as a synchronous
 * DPUSIM_IOCTL_XFER does), then sets the DPUs RUNNING (their reasons
 * cleared) and wakes the workers.  Returns at once; poll() on the rank
 * file reports EPOLLIN when no DPU of the rank is RUNNING.
 * Errors: EINVAL (unknown flag, @nr_dpus 0, a DPU past the rank), EBUSY (a
 * DPU of the range is RUNNING; nothing launched), ESRCH (the rank has no
 * worker file open: nothing could run the program), and those of the
 * wait (EINTR/ERESTARTSYS, ETIMEDOUT), all with nothing launched.
 */
struct dpusim_launch {
	__u32 size;
	__u32 flags;
	__u32 first_dpu;
	__u32 nr_dpus;
};

#define DPUSIM_IOCTL_LAUNCH	_IO(DPUSIM_TYPE, DPUSIM_CMD_LAUNCH)

/**
 * struct dpusim_dpu_state - the run state of one DPU
 * @state: DPUSIM_DPU_*
 * @launches: launches of the DPU since the rank was opened
 * @reason: FAULT: why, NUL-terminated; otherwise empty
 */
struct dpusim_dpu_state {
	__u32 state;
	__u32 launches;
	char reason[DPUSIM_REASON_LEN];
};

/**
 * struct dpusim_dpu_status - DPUSIM_IOCTL_DPU_STATUS
 * @size: sizeof(struct dpusim_dpu_status)
 * @flags: must be 0
 * @first_dpu: first DPU to report
 * @nr_dpus: DPUs to report, 0 .. the rank's DPU count
 * @states: user pointer to struct dpusim_dpu_state[@nr_dpus], written
 * @nr_running: out, DPUs of the range that are RUNNING
 * @nr_fault: out, DPUs of the range that are FAULT
 *
 * Reads the run states; changes nothing.  Errors: EINVAL (unknown flag, a
 * DPU past the rank), EFAULT (@states), EINTR/ERESTARTSYS (a signal while
 * waiting for a transfer of the rank to end; call again).
 */
struct dpusim_dpu_status {
	__u32 size;
	__u32 flags;
	__u32 first_dpu;
	__u32 nr_dpus;
	__aligned_u64 states;
	__u32 nr_running;
	__u32 nr_fault;
};

#define DPUSIM_IOCTL_DPU_STATUS	_IO(DPUSIM_TYPE, DPUSIM_CMD_DPU_STATUS)

/**
 * struct dpusim_worker_open - DPUSIM_IOCTL_WORKER_OPEN
 * @size: sizeof(struct dpusim_worker_open)
 * @flags: must be 0
 * @fd: out, a new file descriptor (O_RDWR | O_CLOEXEC) of a worker file
 * @__reserved: must be 0
 *
 * The worker file holds the rank's memory (not its owner file): hand it
 * to a worker process (dup2 it in the child, which must not keep the rank
 * file).  Errors: EINVAL, E2BIG (DPUSIM_MAX_WORKERS worker files open),
 * EMFILE/ENFILE, ENOMEM.
 */
struct dpusim_worker_open {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 __reserved;
};

#define DPUSIM_IOCTL_WORKER_OPEN	_IO(DPUSIM_TYPE, DPUSIM_CMD_WORKER_OPEN)

/*
 * Ioctls of a worker file (its own table: numbers from
 * DPUSIM_WORKER_CMD_BASE; the rank's commands there give ENOTTY, and the
 * worker's on a rank file too).
 */
#define DPUSIM_WORKER_CMD_BASE	0x90

enum {
	DPUSIM_CMD_WORKER_CLAIM = DPUSIM_WORKER_CMD_BASE,
	DPUSIM_CMD_WORKER_FINISH,
	DPUSIM_CMD_WORKER_STREAM_OPEN,
	DPUSIM_CMD_WORKER_STREAM_CLOSE,
	DPUSIM_CMD_WORKER_STREAM_SEEK,
	DPUSIM_CMD_WORKER_STREAM_MOVE,
	DPUSIM_CMD_WORKER_STREAM_WAIT,
};

/* dpusim_worker_claim::flags */
enum {
	/* Do not wait: EAGAIN when no DPU waits to be run */
	DPUSIM_CLAIM_NONBLOCK = 1 << 0,
};

/**
 * struct dpusim_worker_claim - DPUSIM_IOCTL_WORKER_CLAIM
 * @size: sizeof(struct dpusim_worker_claim)
 * @flags: DPUSIM_CLAIM_*
 * @dpu: out, the DPU claimed, the lowest RUNNING DPU no worker holds
 * @nr_dpus: out, DPUs in the rank
 * @wram_size: out, bytes of WRAM per DPU
 * @launches: out, the DPU's launch count (struct dpusim_dpu_state)
 * @mram_size: out, bytes of MRAM per DPU
 * @timeout_ms: longest wait; 0 for DPUSIM_SYNC_DEFAULT_TIMEOUT_MS, at most
 *              DPUSIM_SYNC_MAX_TIMEOUT_MS
 * @__reserved: must be 0
 *
 * Waits (interruptibly, at most @timeout_ms: then ETIMEDOUT, call again)
 * until a DPU is RUNNING and held by no worker,
 * then holds it for this worker file, which may hold one DPU at a time.
 * The calling process is recorded as a worker of the rank (killed when
 * the rank's owner file is released).  Errors: EINVAL (unknown flag, a
 * DPU already held: finish it first, @timeout_ms over the maximum,
 * non-zero @__reserved), EAGAIN (NONBLOCK, nothing to run), ETIMEDOUT,
 * ESHUTDOWN (the rank's owner file is released: exit),
 * EINTR/ERESTARTSYS.  Closing a worker file that holds a DPU faults the
 * DPU ("worker exited"); when the last worker file of the rank is closed,
 * every RUNNING DPU no worker holds faults too ("no worker left").
 */
struct dpusim_worker_claim {
	__u32 size;
	__u32 flags;
	__u32 dpu;
	__u32 nr_dpus;
	__u32 wram_size;
	__u32 launches;
	__aligned_u64 mram_size;
	__u32 timeout_ms;
	__u32 __reserved;
};

#define DPUSIM_IOCTL_WORKER_CLAIM	_IO(DPUSIM_TYPE, DPUSIM_CMD_WORKER_CLAIM)

/* dpusim_worker_finish::flags */
enum {
	/* The program faulted: the DPU becomes FAULT with @reason */
	DPUSIM_FINISH_FAULT = 1 << 0,
};

/**
 * struct dpusim_worker_finish - DPUSIM_IOCTL_WORKER_FINISH
 * @size: sizeof(struct dpusim_worker_finish)
 * @flags: DPUSIM_FINISH_*
 * @dpu: the DPU this worker file holds
 * @__reserved: must be 0
 * @reason: DPUSIM_FINISH_FAULT: why, NUL-terminated (an empty reason is
 *          stored as "fault"); otherwise all zero
 * @modeled_cycles: the run's modeled DPU cycles (the slowest tasklet's,
 *          lib/dpurt/model.c), 0 if the program was not built with the
 *          model; in the dpusim_launch_end tracepoint and sysfs
 *          dpu_modeled_cycles.  Absent from an older, shorter struct: 0.
 *
 * Ends the run of the held DPU: DONE, or FAULT with DPUSIM_FINISH_FAULT,
 * and lets it go.  When the rank has no RUNNING DPU left, poll() on the
 * rank file reports EPOLLIN.  Errors: EINVAL (unknown flag, @dpu not the
 * held DPU, @reason without a NUL or non-zero without the flag).
 */
struct dpusim_worker_finish {
	__u32 size;
	__u32 flags;
	__u32 dpu;
	__u32 __reserved;
	char reason[DPUSIM_REASON_LEN];
	__aligned_u64 modeled_cycles;
};

#define DPUSIM_IOCTL_WORKER_FINISH	_IO(DPUSIM_TYPE, DPUSIM_CMD_WORKER_FINISH)

/* struct dpusim_stream_cmd, as the held DPU (see "Streams" below) */
#define DPUSIM_IOCTL_WORKER_STREAM_OPEN		\
	_IO(DPUSIM_TYPE, DPUSIM_CMD_WORKER_STREAM_OPEN)
#define DPUSIM_IOCTL_WORKER_STREAM_CLOSE	\
	_IO(DPUSIM_TYPE, DPUSIM_CMD_WORKER_STREAM_CLOSE)
#define DPUSIM_IOCTL_WORKER_STREAM_SEEK		\
	_IO(DPUSIM_TYPE, DPUSIM_CMD_WORKER_STREAM_SEEK)

/* dpusim_worker_stream_move::flags */
enum {
	/* From the stream to the DPU (move_down); without it, up */
	DPUSIM_STREAM_MOVE_DOWN = 1 << 0,
	/* Return once queued: DPUSIM_IOCTL_WORKER_STREAM_WAIT waits for it */
	DPUSIM_STREAM_MOVE_ASYNC = 1 << 1,
};

#define DPUSIM_STREAM_MOVE_MAX_BLOCKS	3U

/**
 * struct dpusim_window_block - a block of the held DPU's memories
 * @offset: its offset in the window: WRAM at 0, MRAM at DPUSIM_WINDOW_MRAM
 * @length: bytes, at least 1; the block lies inside one memory
 */
struct dpusim_window_block {
	__aligned_u64 offset;
	__aligned_u64 length;
};

/**
 * struct dpusim_worker_stream_move - DPUSIM_IOCTL_WORKER_STREAM_MOVE
 * @size: sizeof(struct dpusim_worker_stream_move)
 * @flags: DPUSIM_STREAM_MOVE_*
 * @stream: the stream, open by the DPU the worker holds
 * @nr_blocks: entries of @blocks used, 1 .. DPUSIM_STREAM_MOVE_MAX_BLOCKS
 * @offset: offset in the stream's memory, as for DPUSIM_XFER_STREAM
 * @blocks: the DPU's side, in order; their lengths add up to the move's
 *          length, with the rules of DPUSIM_XFER_STREAM (down: the token
 *          at the cursor and the header after it; up: header, data,
 *          terminator at the cursor)
 * @next: out, down: the size of the token after the one moved (0: it is
 *        the last), so that a preload can be described before the token
 *        that holds its header has arrived; up: 0
 * @__reserved: must be 0
 *
 * A DPU program moves one token between a stream and its own WRAM or
 * MRAM: the kernel copies from memory to memory (the window's pages
 * cannot be pinned).  Everything is checked and the pages written
 * allocated before the call returns, and the cursor moves then; with
 * DPUSIM_STREAM_MOVE_ASYNC the copy runs on a kernel thread meanwhile
 * (a preload), one move at a time per worker file: a move, FINISH or
 * DPUSIM_IOCTL_WORKER_STREAM_WAIT waits for the one in flight (so the
 * next preload also waits for the token before it: one call per token).  Pages of
 * the DPU's memory allocated for a move that then fails stay (zeros; a
 * running DPU's memory only grows, see DPUSIM_MMAP_WINDOW).  Errors: those
 * of DPUSIM_XFER_STREAM, and EINVAL (unknown flag, @nr_blocks out of
 * range, a block of length 0 or not inside one memory), EPERM (no DPU
 * held), ENOSPC (the budget).
 */
struct dpusim_worker_stream_move {
	__u32 size;
	__u32 flags;
	__u32 stream;
	__u32 nr_blocks;
	__aligned_u64 offset;
	struct dpusim_window_block blocks[DPUSIM_STREAM_MOVE_MAX_BLOCKS];
	__u32 next;
	__u32 __reserved;
};

#define DPUSIM_IOCTL_WORKER_STREAM_MOVE		\
	_IO(DPUSIM_TYPE, DPUSIM_CMD_WORKER_STREAM_MOVE)

/* dpusim_worker_stream_wait::flags */
enum {
	/* Only wake the copy thread (it takes the move ring's move); no wait */
	DPUSIM_STREAM_WAIT_KICK = 1 << 0,
};

/**
 * struct dpusim_worker_stream_wait - DPUSIM_IOCTL_WORKER_STREAM_WAIT
 * @size: sizeof(struct dpusim_worker_stream_wait)
 * @flags: DPUSIM_STREAM_WAIT_*
 *
 * Waits until the worker file's move in flight (if any) is done; with
 * DPUSIM_STREAM_WAIT_KICK, wakes the copy thread instead.  Errors: EINVAL.
 */
struct dpusim_worker_stream_wait {
	__u32 size;
	__u32 flags;
};

#define DPUSIM_IOCTL_WORKER_STREAM_WAIT		\
	_IO(DPUSIM_TYPE, DPUSIM_CMD_WORKER_STREAM_WAIT)

/*
 * The move ring of a worker file: mmap() of one page at
 * DPUSIM_MMAP_MOVE_RING (MAP_SHARED, read and write) shows a struct
 * dpusim_move_ring through which the DPU program submits moves with no
 * system call, as io_uring's SQPOLL does: it writes @move, then stores
 * @submitted + 1 (release); the worker file's copy thread, which polls
 * while it has work (and a little after), takes a snapshot of @move,
 * checks and carries it out as DPUSIM_IOCTL_WORKER_STREAM_MOVE would
 * (synchronously: DPUSIM_STREAM_MOVE_ASYNC is ignored), writes @result
 * and @next, then stores the sequence number in @done (release).  When
 * the thread goes to sleep it sets DPUSIM_MOVE_RING_NEED_WAKEUP in
 * @flags: a program that sees it after storing @submitted (with a full
 * barrier in between) wakes the thread with DPUSIM_IOCTL_WORKER_STREAM_WAIT
 * and DPUSIM_STREAM_WAIT_KICK.  One move at a time: write the next once
 * @done caught up.
 *
 * Whoever carries a move out first claims it: the thread, and a program
 * that would rather not wait for it (the thread asleep, or busy on the
 * program's own CPU), each store its sequence number in @taken with a
 * compare-and-exchange, and only the one that stored it carries it out.
 * A program that claims a move does it with DPUSIM_IOCTL_WORKER_STREAM_MOVE
 * and then stores @done itself, so @done always catches up.  A program
 * that never claims needs nothing of this: the thread claims every move.
 * The kernel trusts nothing in the page: a move written wrong fails with
 * its errno in @result; the page is the program's own.  One ring per
 * worker file; every mapping shows the same page.
 */
#define DPUSIM_MMAP_MOVE_RING	DPUSIM_MMAP_MRAM(0xfffffffeU)

/* dpusim_move_ring::flags */
enum {
	DPUSIM_MOVE_RING_NEED_WAKEUP = 1 << 0,
};

/**
 * struct dpusim_move_ring - the page at DPUSIM_MMAP_MOVE_RING
 * @submitted: the program's: sequence number of the move in @move
 * @done: the kernel's: sequence number of the last move carried out
 * @flags: the kernel's: DPUSIM_MOVE_RING_*
 * @result: the kernel's: 0 or -errno of move @done
 * @next: the kernel's: @next of move @done
 * @dpu: the program's: the DPU it runs as; a move for another DPU than the
 *       one the worker file holds when the thread takes it fails (EPERM)
 * @move: the program's: the move, as for DPUSIM_IOCTL_WORKER_STREAM_MOVE
 * @taken: both sides': sequence number of the last move claimed
 * @__reserved: unused
 */
struct dpusim_move_ring {
	__u32 submitted;
	__u32 done;
	__u32 flags;
	__s32 result;
	__u32 next;
	__u32 dpu;
	struct dpusim_worker_stream_move move;
	__u32 taken;
	__u32 __reserved;
};

/*
 * ------------------------------------------------------------------------
 * Streams (shared/design/streams.md): EBSP's streams in the rank's
 * simulated external memory.
 *
 * The owner of a rank creates streams (DPUSIM_IOCTL_STREAM_CREATE); they
 * are numbered from 0 in creation order and last as long as the rank's
 * ownership.  A stream's memory has EBSP's format: before every token two
 * __u32 in host order, the size of the token before it and its own size
 * (sizes without the headers): 0, n0, data0, n0, n1, data1, ..., n(k-1), 0.
 * A core (a DPU of the rank, named by its index) opens a stream
 * (DPUSIM_IOCTL_STREAM_OPEN); one core at a time.  The kernel keeps the
 * stream's cursor (the next token) and its own table of token sizes.
 * ------------------------------------------------------------------------
 */
#define DPUSIM_STREAM_MAX		256U		/* streams per rank */
#define DPUSIM_STREAM_MAX_TOKENS	(1U << 20)	/* tokens per stream */
#define DPUSIM_STREAM_MAX_BYTES		(1ULL << 29)	/* data bytes */
#define DPUSIM_STREAM_MIN_TOKEN		16U		/* EBSP's minimum */
#define DPUSIM_STREAM_HEADER		8U		/* prevsize, nextsize */
#define DPUSIM_STREAM_MAX_BUF		(1ULL << 30)	/* a core's token buffer */
/*
 * mmap() of the rank file at DPUSIM_MMAP_STREAM(id) (MAP_SHARED, at most
 * the stream's mem_size bytes) shows a stream's memory, in EBSP's format:
 * the pointer bsp_stream_create() returns.  Read only: only the kernel
 * writes a stream (moves, and the headers of its own table of token
 * sizes); PROT_WRITE is EPERM, and mprotect() cannot add it (EACCES).
 */
#define DPUSIM_MMAP_STREAM_FIRST	0xfffff000U
#define DPUSIM_MMAP_STREAM(id)		DPUSIM_MMAP_MRAM(DPUSIM_MMAP_STREAM_FIRST + (id))

/**
 * struct dpusim_stream_create - DPUSIM_IOCTL_STREAM_CREATE
 * @size: sizeof(struct dpusim_stream_create)
 * @flags: must be 0
 * @stream_size: bytes of data: those of @data, or the capacity of an empty
 *               stream for results; 1 .. DPUSIM_STREAM_MAX_BYTES
 * @data: user pointer to @stream_size bytes cut into tokens of
 *        @token_size (the last one smaller if they do not divide), or 0:
 *        an empty stream (one header 0, 0) that cores write tokens to
 * @token_size: bytes per token, at least DPUSIM_STREAM_MIN_TOKEN
 * @id: out, the stream's number
 * @mem_size: out, bytes of its memory, headers included
 * @nr_tokens: out, tokens it holds (0 for an empty stream)
 * @__reserved: must be 0
 *
 * The data is copied: the caller may reuse its buffer.  The memory is
 * charged to the module's budget.  Errors: EINVAL (unknown flag, sizes out
 * of range, @token_size below the minimum, non-zero @__reserved), E2BIG
 * (more than DPUSIM_STREAM_MAX_TOKENS tokens), EFAULT, ENOSPC (the budget,
 * or DPUSIM_STREAM_MAX streams), ENOMEM; nothing is created on an error.
 */
struct dpusim_stream_create {
	__u32 size;
	__u32 flags;
	__aligned_u64 stream_size;
	__aligned_u64 data;
	__u32 token_size;
	__u32 id;
	__aligned_u64 mem_size;
	__u32 nr_tokens;
	__u32 __reserved;
};

#define DPUSIM_IOCTL_STREAM_CREATE	_IO(DPUSIM_TYPE, DPUSIM_CMD_STREAM_CREATE)

/**
 * struct dpusim_stream_cmd - DPUSIM_IOCTL_STREAM_OPEN, _CLOSE and _SEEK
 * @size: sizeof(struct dpusim_stream_cmd)
 * @flags: must be 0
 * @id: the stream
 * @core: the DPU acting as the core
 * @delta: SEEK: tokens to move the cursor by (clamped to the first token
 *         and the end; INT_MIN: the first, INT_MAX: the end); else 0
 * @cursor: out, the index of the next token (nr_tokens: the end)
 * @token: out, the size of the token at the cursor, 0 at the end
 * @nr_tokens: out, tokens the stream holds
 * @mem_size: out, bytes of its memory
 * @offset: out, the offset of the header of the token at the cursor
 * @token_size: out, the token size the stream was created with
 * @prev: out, the size of the token before the cursor (0 at the first)
 * @buf: OPEN from a host thread (the rank file): 0, or a page-aligned
 *       user buffer of @buf_len bytes that the core moves tokens into
 *       and out of with DPUSIM_XFER_STREAM_BUF; else 0
 * @buf_len: bytes of @buf, at most DPUSIM_STREAM_MAX_BUF; 0 without @buf
 *
 * OPEN: the stream is open by @core from now on, its cursor on token 0.
 * With @buf, the buffer's pages are pinned, writable, and charged to the
 * caller's RLIMIT_MEMLOCK (mm->pinned_vm) until the stream is closed or
 * the rank's ownership ends; moves in flight keep them until they are
 * done.  A move names the pages the buffer had at the open: the buffer
 * must stay mapped, and not be remapped, while the stream is open.
 * CLOSE: it is open by no core.  SEEK: moves the cursor.  Errors: EINVAL
 * (unknown flag, @core not a DPU of the rank, @delta with OPEN or CLOSE,
 * CLOSE or SEEK of a stream @core has not open; @buf not page aligned,
 * @buf_len 0 with @buf or not 0 without it, @buf with CLOSE, SEEK or on a
 * worker file), ENOENT (no stream @id), EBUSY (OPEN of a stream another
 * core has open; on the rank file, @core is RUNNING: while a DPU runs,
 * its program is the core), E2BIG (@buf_len over DPUSIM_STREAM_MAX_BUF),
 * EFAULT (@buf not mapped writable), ENOMEM (also: over RLIMIT_MEMLOCK).
 * @buf is checked and pinned first, before the stream and @core are
 * looked at (so its errors come before ENOENT and EBUSY, and an OPEN
 * that fails holds its pages for the time of the call only).
 *
 * The same three commands on a worker file (DPUSIM_IOCTL_WORKER_STREAM_*)
 * act as the DPU the worker holds: @core must be that DPU (EPERM if not,
 * or if it holds none).  A stream stays open by its core when the DPU's
 * run ends: its next run, or a host thread acting as it, closes it.
 */
struct dpusim_stream_cmd {
	__u32 size;
	__u32 flags;
	__u32 id;
	__u32 core;
	__s32 delta;
	__u32 cursor;
	__u32 token;
	__u32 nr_tokens;
	__aligned_u64 mem_size;
	__aligned_u64 offset;
	__u32 token_size;
	__u32 prev;
	__aligned_u64 buf;
	__aligned_u64 buf_len;
};

#define DPUSIM_IOCTL_STREAM_OPEN	_IO(DPUSIM_TYPE, DPUSIM_CMD_STREAM_OPEN)
#define DPUSIM_IOCTL_STREAM_CLOSE	_IO(DPUSIM_TYPE, DPUSIM_CMD_STREAM_CLOSE)
#define DPUSIM_IOCTL_STREAM_SEEK	_IO(DPUSIM_TYPE, DPUSIM_CMD_STREAM_SEEK)

/*
 * ------------------------------------------------------------------------
 * Tag matching: /dev/dpusim/tm (shared/design/tag-matching.md)
 *
 * One context per open file; every object (memory region, completion
 * queue, TM-SRQ, QP) belongs to the context and is destroyed with it
 * (close, process exit).  Objects are named by per-context handles; SRQs
 * and QPs also have a module-wide number (@srq_num, @qp_num) by which
 * processes of the same user connect.  Memory-region keys are module wide
 * too (a rendezvous names the sender's region by rkey).
 *
 * Numeric values are rdma-core's (libibverbs verbs.h, tm_types.h), so the
 * DTM_* names of the library's dtm.h are the same numbers.
 *
 * Fields marked "out" are written by the kernel and ignored on input.
 *
 * Extra errno meanings of the tag-matching ioctls:
 *   ENOENT     no object with that handle, number or key
 *   EBUSY      destroying a CQ that an SRQ or QP still uses
 *   ENOMEM     also: max_num_tags or max_ops exceeded (the call's
 *              @nr_done names the first operation not carried out)
 *   ENOSPC     a per-context object limit (DPUSIM_TM_MAX_*) is reached;
 *              or a tagged or untagged buffer posted beyond what one
 *              user's SRQs may hold together (module parameter
 *              tm_user_bufs, default 65536)
 *   ENOMEM     also: a CQ's ring or an SRQ's tag tables would take the
 *              caller's pinned memory (mm->pinned_vm: these pages, the
 *              regions' and the transfers' pinned pages) over
 *              RLIMIT_MEMLOCK (without CAP_IPC_LOCK)
 *   EACCES     connecting to an SRQ of another user; a region's access
 *              flags do not allow the use
 *   EISCONN    the QP is already connected
 *   ENOTCONN   sending on a QP that was never connected
 *   ECONNRESET the peer of the connection is gone
 *   EAGAIN     an unexpected or no-tag message found no untagged buffer
 *              (nothing consumed: send again after the receiver posts one)
 *   EOVERFLOW  a completion could not be written because the CQ is full:
 *              the operation was not carried out, the CQ is marked
 *              (DPUSIM_TM_CQ_F_OVERRUN, @overruns in its ring) and the
 *              next call of the CQ's context fails once with EOVERFLOW
 *   EREMOTEIO  the receiver's CQ is full (it got EOVERFLOW); nothing sent
 * ------------------------------------------------------------------------
 */
#define DPUSIM_TM_CMD_BASE	0xA0

enum {
	DPUSIM_CMD_TM_QUERY = DPUSIM_TM_CMD_BASE,
	DPUSIM_CMD_TM_REG_MR,
	DPUSIM_CMD_TM_DEREG_MR,
	DPUSIM_CMD_TM_CREATE_CQ,
	DPUSIM_CMD_TM_DESTROY_CQ,
	DPUSIM_CMD_TM_CREATE_SRQ,
	DPUSIM_CMD_TM_DESTROY_SRQ,
	DPUSIM_CMD_TM_CREATE_QP,
	DPUSIM_CMD_TM_DESTROY_QP,
	DPUSIM_CMD_TM_CONNECT,
	DPUSIM_CMD_TM_POST_SRQ_OPS,
	DPUSIM_CMD_TM_POST_SRQ_RECV,
	DPUSIM_CMD_TM_POST_SEND,
};

/* Capabilities and limits (E2BIG above the per-call ones) */
#define DPUSIM_TM_MAX_NUM_TAGS		16384U	/* tags one SRQ's list holds */
#define DPUSIM_TM_MAX_OPS		16384U	/* list ops of one call */
#define DPUSIM_TM_MAX_SRQ_WR		16384U	/* untagged buffers per SRQ */
#define DPUSIM_TM_MAX_SGE		16U	/* entries of one sg list */
#define DPUSIM_TM_MAX_RNDV_HDR_SIZE	64U	/* TMH + RVH + metadata */
#define DPUSIM_TM_MAX_INLINE		256U	/* DPUSIM_TM_SEND_INLINE bytes */
#define DPUSIM_TM_MAX_QP_RECV		64U	/* bytes of a message to a QP */
#define DPUSIM_TM_MAX_CQE		65536U	/* entries of one CQ */
#define DPUSIM_TM_MAX_WR		4096U	/* work requests of one call */
#define DPUSIM_TM_MAX_MSG		(1U << 30)	/* bytes of one message */
#define DPUSIM_TM_MAX_MR		4096U	/* regions per context */
#define DPUSIM_TM_MAX_CQ		256U	/* CQs per context */
#define DPUSIM_TM_MAX_SRQ		256U	/* SRQs per context */
#define DPUSIM_TM_MAX_QP		1024U	/* QPs per context */

/* dpusim_tm_query::cap_flags */
#define DPUSIM_TM_CAP_RC		(1U << 0)	/* IBV_TM_CAP_RC */

/**
 * struct dpusim_tm_query - DPUSIM_IOCTL_TM_QUERY
 * @size: sizeof(struct dpusim_tm_query)
 * @flags: must be 0
 * @max_num_tags: out, DPUSIM_TM_MAX_NUM_TAGS
 * @max_ops: out, DPUSIM_TM_MAX_OPS
 * @max_sge: out, DPUSIM_TM_MAX_SGE
 * @max_rndv_hdr_size: out, DPUSIM_TM_MAX_RNDV_HDR_SIZE
 * @max_srq_wr: out, DPUSIM_TM_MAX_SRQ_WR
 * @max_cqe: out, DPUSIM_TM_MAX_CQE
 * @max_inline: out, DPUSIM_TM_MAX_INLINE
 * @max_qp_recv: out, DPUSIM_TM_MAX_QP_RECV
 * @max_msg: out, DPUSIM_TM_MAX_MSG
 * @cap_flags: out, DPUSIM_TM_CAP_*
 */
struct dpusim_tm_query {
	__u32 size;
	__u32 flags;
	__u32 max_num_tags;
	__u32 max_ops;
	__u32 max_sge;
	__u32 max_rndv_hdr_size;
	__u32 max_srq_wr;
	__u32 max_cqe;
	__u32 max_inline;
	__u32 max_qp_recv;
	__u32 max_msg;
	__u32 cap_flags;
};

#define DPUSIM_IOCTL_TM_QUERY	_IO(DPUSIM_TYPE, DPUSIM_CMD_TM_QUERY)

/* Access flags of a memory region (IBV_ACCESS_*) */
enum {
	DPUSIM_TM_ACCESS_LOCAL_WRITE = 1 << 0,
	DPUSIM_TM_ACCESS_REMOTE_WRITE = 1 << 1,
	DPUSIM_TM_ACCESS_REMOTE_READ = 1 << 2,
};

/* dpusim_tm_reg_mr::flags */
enum {
	/*
	 * The region is @length bytes of MRAM of DPU @dpu at byte offset
	 * @addr, on the rank open as @rank_fd (the caller's own open file of
	 * /dev/dpusim/rankN).  Its addresses (sge addr, RVH va) are MRAM
	 * offsets.  The pages are allocated at registration (ENOSPC over
	 * the module's budget) and the rank stays owned until the region is
	 * gone.  Not charged to RLIMIT_MEMLOCK: nothing of the process is
	 * pinned.
	 */
	DPUSIM_TM_MR_MRAM = 1 << 0,
};

/**
 * struct dpusim_tm_reg_mr - DPUSIM_IOCTL_TM_REG_MR
 * @size: sizeof(struct dpusim_tm_reg_mr)
 * @flags: DPUSIM_TM_MR_*
 * @addr: user address of the region (MRAM offset with DPUSIM_TM_MR_MRAM)
 * @length: bytes, 1 .. DPUSIM_TM_MAX_MSG
 * @access: DPUSIM_TM_ACCESS_*
 * @rank_fd: DPUSIM_TM_MR_MRAM: an open /dev/dpusim/rankN; else must be 0
 * @dpu: DPUSIM_TM_MR_MRAM: DPU index in the rank; else must be 0
 * @lkey: out, the key local work requests name the region by; also its
 *        handle for DPUSIM_IOCTL_TM_DEREG_MR
 * @rkey: out, the key a rendezvous (RVH) names the region by
 *
 * Pins the pages long-term (FOLL_LONGTERM; written through when
 * LOCAL_WRITE or REMOTE_WRITE is set) and charges them to the caller's
 * RLIMIT_MEMLOCK as pinned memory (mm->pinned_vm), CAP_IPC_LOCK exempt.
 * Errors: EINVAL (unknown flag or access bit, zero length, fields that
 * must be 0), E2BIG (@length over DPUSIM_TM_MAX_MSG), EOVERFLOW (@addr +
 * @length wraps, or leaves the DPU's MRAM), EFAULT (the range is not
 * mapped), ENOMEM (RLIMIT_MEMLOCK), EBADF (@rank_fd is not open),
 * ENODEV (@rank_fd is not a rank), EBUSY (DPUSIM_TM_MR_MRAM of a DPU
 * that is RUNNING, as a transfer), ENOSPC (the MRAM budget, or
 * DPUSIM_TM_MAX_MR regions).
 */
struct dpusim_tm_reg_mr {
	__u32 size;
	__u32 flags;
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 access;
	__s32 rank_fd;
	__u32 dpu;
	__u32 lkey;
	__u32 rkey;
	__u32 __reserved;
};

#define DPUSIM_IOCTL_TM_REG_MR	_IO(DPUSIM_TYPE, DPUSIM_CMD_TM_REG_MR)

/**
 * struct dpusim_tm_destroy - DPUSIM_IOCTL_TM_DEREG_MR, _DESTROY_CQ,
 *                            _DESTROY_SRQ, _DESTROY_QP
 * @size: sizeof(struct dpusim_tm_destroy)
 * @flags: must be 0
 * @handle: the object's handle (lkey for a region)
 * @__reserved: must be 0
 *
 * A region stays pinned until the buffers posted with it are consumed or
 * dropped; its keys stop working at once.  A CQ used by an SRQ or a QP
 * fails with EBUSY.  Destroying an SRQ drops its posted buffers and ends
 * its connections (the QPs get a DPUSIM_TM_WC_WR_FLUSH_ERR completion);
 * destroying a QP ends its connection (the SRQ's CQ gets one).
 */
struct dpusim_tm_destroy {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 __reserved;
};

#define DPUSIM_IOCTL_TM_DEREG_MR	_IO(DPUSIM_TYPE, DPUSIM_CMD_TM_DEREG_MR)
#define DPUSIM_IOCTL_TM_DESTROY_CQ	_IO(DPUSIM_TYPE, DPUSIM_CMD_TM_DESTROY_CQ)
#define DPUSIM_IOCTL_TM_DESTROY_SRQ	_IO(DPUSIM_TYPE, DPUSIM_CMD_TM_DESTROY_SRQ)
#define DPUSIM_IOCTL_TM_DESTROY_QP	_IO(DPUSIM_TYPE, DPUSIM_CMD_TM_DESTROY_QP)

/*
 * The completion ring of a CQ, mapped with mmap(ctx fd, @mmap_offset,
 * @mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED).  The kernel writes
 * entries and then @producer (release); the process reads entries while
 * @consumer != @producer and then advances @consumer (release).  Indexes
 * run freely (u32, wrapping); entry i is at entries[i & (nr_entries - 1)].
 * The kernel keeps its own producer index and nr_entries and never reads
 * anything of the mapping but @consumer, which it only uses to decide
 * whether the ring is full (a consumer more than nr_entries behind, or
 * ahead, counts as full).
 */
struct dpusim_tm_cq_ring {
	__u32 producer;
	__u32 __pad0[15];
	__u32 consumer;
	__u32 __pad1[15];
	__u32 nr_entries;	/* a power of two */
	__u32 entry_size;	/* sizeof(struct dpusim_tm_cqe) */
	__u32 flags;		/* DPUSIM_TM_CQ_F_* */
	__u32 overruns;		/* completions refused because full */
	__u32 __pad2[12];
};

#define DPUSIM_TM_CQ_F_OVERRUN		(1U << 0)
/* Byte offset of entries[0] in the mapping */
#define DPUSIM_TM_CQ_RING_ENTRIES	256U

/* Completion opcodes (enum ibv_wc_opcode) */
enum {
	DPUSIM_TM_WC_SEND = 0,
	DPUSIM_TM_WC_RDMA_READ = 2,
	DPUSIM_TM_WC_RECV = 128,
	DPUSIM_TM_WC_TM_ADD = 130,
	DPUSIM_TM_WC_TM_DEL = 131,
	DPUSIM_TM_WC_TM_SYNC = 132,
	DPUSIM_TM_WC_TM_RECV = 133,
	DPUSIM_TM_WC_TM_NO_TAG = 134,
};

/* Completion flags (enum ibv_wc_flags) */
enum {
	DPUSIM_TM_WC_F_TM_SYNC_REQ = 1 << 4,
	DPUSIM_TM_WC_F_TM_MATCH = 1 << 5,
	DPUSIM_TM_WC_F_TM_DATA_VALID = 1 << 6,
	/* dpusim: the message is in @data (receives on a QP) */
	DPUSIM_TM_WC_F_INLINE = 1 << 8,
};

/* Completion status (enum ibv_wc_status) */
enum {
	DPUSIM_TM_WC_SUCCESS = 0,
	DPUSIM_TM_WC_LOC_LEN_ERR = 1,
	DPUSIM_TM_WC_WR_FLUSH_ERR = 5,
	DPUSIM_TM_WC_REM_ACCESS_ERR = 10,
	DPUSIM_TM_WC_GENERAL_ERR = 21,
	DPUSIM_TM_WC_TM_ERR = 22,
	DPUSIM_TM_WC_TM_RNDV_INCOMPLETE = 23,
};

/**
 * struct dpusim_tm_cqe - one completion, 128 bytes
 * @wr_id: the work request's wr_id (recv_wr_id for a tagged buffer)
 * @tag: TM_RECV: the message's tag (TMH)
 * @byte_len: bytes written to the buffer (for a rendezvous MATCH
 *            completion: the length the RVH announces)
 * @priv: TM_RECV: app_ctx of the TMH
 * @qp_num: the QP (or, on an SRQ's CQ, the SRQ number) it belongs to
 * @src_qp: receives at an SRQ: the sending QP's number; the SRQ-side
 *          DPUSIM_IOCTL_TM_POST_SEND names it as @remote_qpn
 * @opcode: DPUSIM_TM_WC_* opcode
 * @status: DPUSIM_TM_WC_* status
 * @wc_flags: DPUSIM_TM_WC_F_*
 * @handle: TM_ADD/TM_DEL: the tag entry's handle; TM_RECV: the handle of
 *          the entry the message consumed
 * @__reserved: 0
 * @data: DPUSIM_TM_WC_F_INLINE: the first @byte_len bytes of the message
 */
struct dpusim_tm_cqe {
	__aligned_u64 wr_id;
	__aligned_u64 tag;
	__u32 byte_len;
	__u32 priv;
	__u32 qp_num;
	__u32 src_qp;
	__u8 opcode;
	__u8 status;
	__u16 wc_flags;
	__u32 handle;
	__u32 __reserved[6];
	__u8 data[64];
};

/**
 * struct dpusim_tm_create_cq - DPUSIM_IOCTL_TM_CREATE_CQ
 * @size: sizeof(struct dpusim_tm_create_cq)
 * @flags: must be 0
 * @cqe: in, entries wanted, 1 .. DPUSIM_TM_MAX_CQE; out, the ring's
 *       nr_entries (rounded up to a power of two)
 * @handle: out
 * @mmap_offset: out, where to mmap the ring on the context's fd
 * @mmap_size: out, the size to map (exactly)
 *
 * The ring's pages are charged to the caller's RLIMIT_MEMLOCK as pinned
 * memory until the CQ and its last mapping are gone (ENOMEM above it).
 */
struct dpusim_tm_create_cq {
	__u32 size;
	__u32 flags;
	__u32 cqe;
	__u32 handle;
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_size;
};

#define DPUSIM_IOCTL_TM_CREATE_CQ	_IO(DPUSIM_TYPE, DPUSIM_CMD_TM_CREATE_CQ)

/**
 * struct dpusim_tm_create_srq - DPUSIM_IOCTL_TM_CREATE_SRQ
 * @size: sizeof(struct dpusim_tm_create_srq)
 * @flags: must be 0
 * @cq_handle: the CQ of all its completions
 * @max_num_tags: 1 .. DPUSIM_TM_MAX_NUM_TAGS
 * @max_ops: 1 .. DPUSIM_TM_MAX_OPS
 * @max_wr: untagged buffers, 1 .. DPUSIM_TM_MAX_SRQ_WR
 * @max_sge: 1 .. DPUSIM_TM_MAX_SGE
 * @handle: out
 * @srq_num: out, module-wide number QPs connect to
 * @__reserved: must be 0
 *
 * The tag list's tables (24 bytes per tag of @max_num_tags rounded up to
 * a power of two) are charged to the caller's RLIMIT_MEMLOCK as pinned
 * memory while the SRQ lives (ENOMEM above it).
 */
struct dpusim_tm_create_srq {
	__u32 size;
	__u32 flags;
	__u32 cq_handle;
	__u32 max_num_tags;
	__u32 max_ops;
	__u32 max_wr;
	__u32 max_sge;
	__u32 handle;
	__u32 srq_num;
	__u32 __reserved;
};

#define DPUSIM_IOCTL_TM_CREATE_SRQ	_IO(DPUSIM_TYPE, DPUSIM_CMD_TM_CREATE_SRQ)

/**
 * struct dpusim_tm_create_qp - DPUSIM_IOCTL_TM_CREATE_QP
 * @size: sizeof(struct dpusim_tm_create_qp)
 * @flags: must be 0
 * @cq_handle: the CQ of its send completions and of what it receives
 * @max_sge: 1 .. DPUSIM_TM_MAX_SGE
 * @handle: out
 * @qp_num: out, module-wide number
 */
struct dpusim_tm_create_qp {
	__u32 size;
	__u32 flags;
	__u32 cq_handle;
	__u32 max_sge;
	__u32 handle;
	__u32 qp_num;
};

#define DPUSIM_IOCTL_TM_CREATE_QP	_IO(DPUSIM_TYPE, DPUSIM_CMD_TM_CREATE_QP)

/**
 * struct dpusim_tm_connect - DPUSIM_IOCTL_TM_CONNECT
 * @size: sizeof(struct dpusim_tm_connect)
 * @flags: must be 0
 * @qp_handle: the caller's QP
 * @srq_num: the TM-SRQ it sends to, possibly another process's (same
 *           effective uid, else EACCES)
 */
struct dpusim_tm_connect {
	__u32 size;
	__u32 flags;
	__u32 qp_handle;
	__u32 srq_num;
};

#define DPUSIM_IOCTL_TM_CONNECT	_IO(DPUSIM_TYPE, DPUSIM_CMD_TM_CONNECT)

/*
 * Wire headers of tag-matching messages (struct ibv_tmh / ibv_rvh of
 * rdma-core's tm_types.h): 16 bytes each, fields big-endian.
 * Eager: TMH | payload.  Rendezvous request: TMH | RVH | metadata (at most
 * DPUSIM_TM_MAX_RNDV_HDR_SIZE in all).  FIN: the request's TMH | RVH with
 * the FIN opcode.  No-tag: TMH | anything.
 */
enum {
	DPUSIM_TM_TMH_NO_TAG = 0,
	DPUSIM_TM_TMH_RNDV = 1,
	DPUSIM_TM_TMH_FIN = 2,
	DPUSIM_TM_TMH_EAGER = 3,
};

struct dpusim_tm_tmh {
	__u8 opcode;
	__u8 reserved[3];
	__be32 app_ctx;
	__be64 tag;
};

struct dpusim_tm_rvh {
	__be64 va;
	__be32 rkey;
	__be32 len;
};

/* An sg entry (struct ibv_sge): @addr in the region named by @lkey */
struct dpusim_tm_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * dpusim_tm_ops_wr::opcode (enum ibv_ops_wr_opcode).  TAG_ADD appends a
 * tagged buffer (ENOMEM when the list holds max_num_tags); a message
 * matches the earliest-posted eligible entry with (tag & mask) ==
 * (entry tag & mask).  TAG_DEL of an entry in the list removes it; of a
 * handle the SRQ issued whose entry is gone (consumed or deleted) it
 * completes with DPUSIM_TM_WC_TM_ERR (written even when not signaled);
 * of a handle never issued it fails with EINVAL.  Handles are issued
 * cyclically from 32 bits: none is issued twice before 2^32 others.
 * Entries added while the SRQ's unexpected count and software's differ
 * (DPUSIM_TM_WC_F_TM_SYNC_REQ) do not match until an op with
 * DPUSIM_TM_OPS_TM_SYNC or a TAG_SYNC reports the count.
 */
enum {
	DPUSIM_TM_WR_TAG_ADD = 0,
	DPUSIM_TM_WR_TAG_DEL = 1,
	DPUSIM_TM_WR_TAG_SYNC = 2,
};

/* dpusim_tm_ops_wr::flags (enum ibv_ops_flags) */
enum {
	DPUSIM_TM_OPS_SIGNALED = 1 << 0,
	DPUSIM_TM_OPS_TM_SYNC = 1 << 1,
};

/**
 * struct dpusim_tm_ops_wr - one tag-list operation (struct ibv_ops_wr)
 * @wr_id: identifies the operation in its completion
 * @opcode: DPUSIM_TM_WR_TAG_*
 * @flags: DPUSIM_TM_OPS_*; TAG_SYNC always synchronises
 * @unexpected_cnt: unexpected messages software has handled (read with
 *                  DPUSIM_TM_OPS_TM_SYNC or TAG_SYNC)
 * @handle: TAG_DEL: in, the entry; TAG_ADD: out, written back
 * @recv_wr_id: TAG_ADD: wr_id of the buffer's receive completions
 * @sg_list: TAG_ADD: user pointer to struct dpusim_tm_sge[@num_sge],
 *           regions of the SRQ's context with LOCAL_WRITE
 * @num_sge: TAG_ADD: 0 .. the SRQ's max_sge
 * @__reserved: must be 0
 * @tag: TAG_ADD: the tag
 * @mask: TAG_ADD: bits of the tag that must match (0: matches any tag)
 */
struct dpusim_tm_ops_wr {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 flags;
	__u32 unexpected_cnt;
	__u32 handle;
	__aligned_u64 recv_wr_id;
	__aligned_u64 sg_list;
	__u32 num_sge;
	__u32 __reserved;
	__aligned_u64 tag;
	__aligned_u64 mask;
};

/**
 * struct dpusim_tm_recv_wr - one untagged buffer (struct ibv_recv_wr)
 * @wr_id: identifies the buffer in its completion
 * @sg_list: user pointer to struct dpusim_tm_sge[@num_sge]
 * @num_sge: 0 .. the SRQ's max_sge
 * @__reserved: must be 0
 */
struct dpusim_tm_recv_wr {
	__aligned_u64 wr_id;
	__aligned_u64 sg_list;
	__u32 num_sge;
	__u32 __reserved;
};

/* dpusim_tm_send_wr::opcode (enum ibv_wr_opcode) */
enum {
	DPUSIM_TM_WR_SEND = 2,
	DPUSIM_TM_WR_RDMA_READ = 4,
};

/* dpusim_tm_send_wr::flags (enum ibv_send_flags) */
enum {
	DPUSIM_TM_SEND_SIGNALED = 1 << 1,
	/*
	 * The sg entries are plain user memory (lkey ignored), copied at
	 * post time; at most DPUSIM_TM_MAX_INLINE bytes in all.
	 */
	DPUSIM_TM_SEND_INLINE = 1 << 3,
};

/**
 * struct dpusim_tm_send_wr - one send or RDMA read (struct ibv_send_wr)
 * @wr_id: identifies it in its completion
 * @opcode: DPUSIM_TM_WR_SEND or (SRQ side only) DPUSIM_TM_WR_RDMA_READ
 * @flags: DPUSIM_TM_SEND_*
 * @sg_list: user pointer to struct dpusim_tm_sge[@num_sge]: the message
 *           (SEND) or where the read data lands (RDMA_READ, regions with
 *           LOCAL_WRITE)
 * @num_sge: 0 .. max_sge of the QP (or the SRQ)
 * @__reserved: must be 0
 * @remote_addr: RDMA_READ: address in the remote region
 * @rkey: RDMA_READ: the remote region, a region of the peer QP's context
 *        with REMOTE_READ
 * @__reserved2: must be 0
 *
 * A SEND on a QP goes to its SRQ and is matched there: it starts with a
 * struct dtm_tmh (at least 16 bytes); a rendezvous request is 32 ..
 * DPUSIM_TM_MAX_RNDV_HDR_SIZE bytes.  A SEND from an SRQ to a connected
 * QP is at most DPUSIM_TM_MAX_QP_RECV bytes and lands in the completion
 * (DPUSIM_TM_WC_F_INLINE): FINs and no-tag replies.
 */
struct dpusim_tm_send_wr {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 flags;
	__aligned_u64 sg_list;
	__u32 num_sge;
	__u32 __reserved;
	__aligned_u64 remote_addr;
	__u32 rkey;
	__u32 __reserved2;
};

/**
 * struct dpusim_tm_post - DPUSIM_IOCTL_TM_POST_SRQ_OPS, _POST_SRQ_RECV,
 *                         _POST_SEND
 * @size: sizeof(struct dpusim_tm_post)
 * @flags: POST_SEND: DPUSIM_TM_POST_FROM_SRQ or 0; else must be 0
 * @handle: the SRQ (POST_SRQ_*, and POST_SEND from an SRQ) or the QP
 * @remote_qpn: POST_SEND from an SRQ: the connected QP it goes to;
 *              else must be 0
 * @nr_wr: entries in @wrs, 1 .. DPUSIM_TM_MAX_WR
 * @nr_done: out, the work requests carried out; on an error, the index
 *           of the failing one (the verbs' bad_wr); always written
 * @wrs: user pointer to @nr_wr struct dpusim_tm_ops_wr,
 *       dpusim_tm_recv_wr or dpusim_tm_send_wr
 *
 * Work requests are carried out in order; the call stops at the first
 * that fails and returns its error, with those before it done.  A
 * malformed work request (unknown opcode or flag, non-zero reserved
 * field, more sg entries than the object's max_sge, an lkey that is not
 * one of the context's regions or a range outside it) is EINVAL.  More
 * untagged buffers than the SRQ's max_wr is ENOMEM; a buffer (tagged or
 * untagged) beyond the tm_user_bufs that the SRQs of one effective uid
 * hold together is ENOSPC.  The kernel writes
 * back only @nr_done, with put_user(): first 0, before anything is
 * carried out (a struct that cannot be written fails with EFAULT and
 * changes nothing), then the final count.
 */
struct dpusim_tm_post {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 remote_qpn;
	__u32 nr_wr;
	__u32 nr_done;
	__aligned_u64 wrs;
};

#define DPUSIM_TM_POST_FROM_SRQ		(1U << 0)

#define DPUSIM_IOCTL_TM_POST_SRQ_OPS	_IO(DPUSIM_TYPE, DPUSIM_CMD_TM_POST_SRQ_OPS)
#define DPUSIM_IOCTL_TM_POST_SRQ_RECV	_IO(DPUSIM_TYPE, DPUSIM_CMD_TM_POST_SRQ_RECV)
#define DPUSIM_IOCTL_TM_POST_SEND	_IO(DPUSIM_TYPE, DPUSIM_CMD_TM_POST_SEND)

#endif /* _UAPI_DPUSIM_H */
