/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dpusim internal declarations shared by the module's files.
 *
 * Locking of a rank, outermost first:
 *
 *   rank->owner.lock        the owner's pid; taken alone, nothing nests
 *   rank->state_lock        the rank's state: a transfer's check, pin,
 *                           populate and copy (synchronous, or the queue's
 *                           worker), the DPUs' run state and the workers'
 *                           holds (run.c, worker.c), the streams and their
 *                           cursors (stream.c), the emptying of a worker's
 *                           window.  Calls take it interruptibly.
 *     rank->run.worker_lock the worker files, their pids, the SHUTDOWN bit;
 *                           also taken alone, by the owner file's release,
 *                           which so never waits for a transfer
 *     mmap_lock             pinning user pages faults them in; a window's
 *                           filling and emptying read the worker's mm
 *       worker->win_lock    a window's entries, also under the fault
 *                           handler's mmap_lock (mmap.c)
 *       stream job's start_lock  a worker's copy thread and move ring
 *     rank->async.lock      (spinlock) the queue's list, its running flag
 *                           and the shared copy; also taken alone by the
 *                           queue's worker and by SYNC
 *   a memory's xarray lock  a leaf: orders a page fault (which takes no
 *                           rank lock: it runs under mmap_lock) against a
 *                           transfer populating the same page
 *
 * The budget (atomic) and the memlock charges (pin.c) take no lock.
 */
#ifndef _DPUSIM_H
#define _DPUSIM_H

#include <linux/atomic.h>
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <uapi/dpusim.h>

#include "compat.h"
#include "pin.h"

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

/**
 * struct dpusim_budget - resident simulated memory, module wide
 * @pages: pages charged
 * @limit: bytes that may be charged (module parameter mram_budget)
 */
struct dpusim_budget {
	atomic_long_t pages;
	unsigned long limit;
};

/**
 * struct dpusim_mem - one DPU's MRAM or WRAM, sparse
 * @pages: page index -> struct page *, present once written or mapped;
 *         pages are inserted and @nr_pages changed under its xa_lock (the
 *         transfers under the rank's state_lock, the page faults of a
 *         mapping without it)
 * @size: bytes
 * @nr_pages: resident pages
 * @budget: where the pages are charged
 */
struct dpusim_mem {
	struct xarray pages;
	u64 size;
	unsigned long nr_pages;
	struct dpusim_budget *budget;
};

/* The pages one call inserted, to take them out again if it fails. */
struct dpusim_mem_undo {
	unsigned long nr;
	unsigned long cap;
	struct {
		struct dpusim_mem *mem;
		pgoff_t idx;
	} *entries;
};

enum dpusim_mem_kind {
	DPUSIM_MRAM,
	DPUSIM_WRAM,
	DPUSIM_NR_MEMS,
};

struct dpusim_worker;

/**
 * struct dpusim_dpu - one DPU: its memories and its run state
 * @mem: MRAM and WRAM
 * @state: DPUSIM_DPU_*
 * @launches: launches since the rank was opened
 * @holder: the worker that claimed it (RUNNING only), or NULL
 * @reason: FAULT: why, NUL-terminated; otherwise empty
 *
 * The run state changes under the rank's state_lock, so that launches and
 * transfers serialise.
 */
struct dpusim_dpu {
	struct dpusim_mem mem[DPUSIM_NR_MEMS];
	u32 state;
	u32 launches;
	u64 run_start_ns;	/* when it started RUNNING, if traced */
	u64 modeled_cycles;	/* its last run's, as its worker reported */
	struct dpusim_worker *holder;
	char reason[DPUSIM_REASON_LEN];
};

/*
 * Transfer and launch counters of a rank, shown in sysfs.  A transfer's
 * guest time is the time its call held the rank (from its check to the
 * end of its copy; an asynchronous one's copy), its modeled time what the
 * call would take on real hardware (xfer_model.c).
 */
struct dpusim_xfer_stats {
	atomic64_t ioctls;
	atomic64_t bytes_to_dpu;
	atomic64_t bytes_from_dpu;
	atomic64_t guest_ns_to_dpu;
	atomic64_t guest_ns_from_dpu;
	atomic64_t modeled_ns_to_dpu;
	atomic64_t modeled_ns_from_dpu;
	atomic64_t blocks;
	atomic64_t launches;
	atomic64_t faults;
};

/* Bits of dpusim_rank::flags */
/*
 * OWNED: an open file owns the rank, or its queued transfers still run
 * after it was closed (then CLOSED too: teardown once they are done).
 */
/*
 * SHUTDOWN: the owner file is released; claims fail with ESHUTDOWN until
 * the ownership ends (every worker file closed).
 */
enum {
	DPUSIM_RANK_OWNED,
	DPUSIM_RANK_CLOSED,
	DPUSIM_RANK_SHUTDOWN,
};

/*
 * What the queued asynchronous transfers of the open file hold together,
 * against the DPUSIM_ASYNC_MAX_* limits.  Added at submit under the rank's
 * state_lock, subtracted by the worker.
 */
struct dpusim_async_usage {
	atomic_t jobs;
	atomic_t blocks;
	atomic64_t bytes;
	atomic_long_t pages;
};

struct dpusim_cursor;
struct dpusim_xfer_pin;
struct dpusim_xfer_share;

/**
 * struct dpusim_rank_owner - a rank's ownership (owner.c)
 * @lock: protects @pid
 * @pid: the process that opened the rank or made its latest call on it,
 *       or NULL
 * @ref: held by the open file, by each queued job and by each worker
 *       file; the last put frees the rank's memory and ends the ownership
 * @idle: woken when the ownership ends
 */
struct dpusim_rank_owner {
	struct mutex lock;	/* protects pid */
	struct pid *pid;
	struct kref ref;
	wait_queue_head_t idle;
};

/**
 * struct dpusim_rank_async - a rank's queue of asynchronous transfers
 * (async.c)
 * @wq: workqueue of @work
 * @work: runs the queued DPUSIM_XFER_ASYNC jobs, in order
 * @lock: protects @jobs, @running and @share
 * @jobs: jobs queued and not started, in submission order
 * @running: @work is queued or runs (a new job needs no kick)
 * @share: the chunks of the job being copied that a DPUSIM_IOCTL_SYNC may
 *         copy too, or NULL
 * @pending: jobs queued and not finished
 * @status: the page at DPUSIM_MMAP_STATUS, written through this (lowmem)
 *          address: async_queued under @lock, async_done by @work alone
 * @idle: woken when @pending drops to 0
 * @usage: what the queued jobs hold
 */
struct dpusim_rank_async {
	struct workqueue_struct *wq;
	struct work_struct work;
	spinlock_t lock;	/* jobs, running, share */
	struct list_head jobs;
	bool running;
	struct dpusim_xfer_share *share;
	atomic_t pending;
	struct dpusim_rank_status *status;
	wait_queue_head_t idle;
	struct dpusim_async_usage usage;
};

/**
 * struct dpusim_rank_xfer - the transfer engine's state of a rank (xfer.c)
 * @pinned_pages: user pages the rank's transfers hold pinned right now
 * @split_c: the copy order's cursors for a synchronous copy on two CPUs
 *           (DPUSIM_XFER_CHUNKS copies of one per DPU), under state_lock:
 *           allocated with the rank, so that such a copy allocates none
 * @split_act: its act arrays, likewise
 */
struct dpusim_rank_xfer {
	atomic_long_t pinned_pages;
	struct dpusim_cursor *split_c;
	u32 *split_act;
};

/**
 * struct dpusim_rank_run - the run state of a rank's DPUs and its workers
 * (run.c, worker.c)
 * @nr_running: DPUs RUNNING; under state_lock (READ_ONCE for poll)
 * @nr_unheld: DPUs RUNNING that no worker holds; under state_lock
 * @idle: poll() of the rank file: woken when @nr_running drops to 0
 * @claim_wait: claimers wait here for @nr_unheld or SHUTDOWN
 * @worker_lock: protects @workers, @nr_workers, the workers' pid lists
 *               and the SHUTDOWN bit's transitions
 * @workers: the open worker files (struct dpusim_worker)
 * @nr_workers: entries of @workers
 */
struct dpusim_rank_run {
	u32 nr_running;
	u32 nr_unheld;
	wait_queue_head_t idle;
	wait_queue_head_t claim_wait;
	struct mutex worker_lock;	/* workers, nr_workers, pids */
	struct list_head workers;
	u32 nr_workers;
};

/**
 * struct dpusim_rank - one simulated rank, /dev/dpusim/rank<index>
 * @dev: the device; its release frees the rank
 * @cdev: the char device
 * @index: N of rankN
 * @nr_dpus: DPUs in the rank
 * @mram_size: MRAM bytes per DPU
 * @wram_size: WRAM bytes per DPU
 * @flags: DPUSIM_RANK_*
 * @owner: the ownership
 * @state_lock: the rank's state: a transfer's check, pin, populate and
 *              copy, the DPUs' run state, the streams, the workers'
 *              holds and windows (see Locking above)
 * @dpus: the DPUs, @nr_dpus of them
 * @budget: where the memory of the DPUs is charged
 * @stats: counters
 * @async: the queue of asynchronous transfers
 * @xfer: the transfer engine's state
 * @run: the DPUs' run state and the workers
 * @streams: the streams (stream.c), under @state_lock
 */
struct dpusim_rank {
	struct device dev;
	struct cdev cdev;
	u32 index;
	u32 nr_dpus;
	u64 mram_size;
	u32 wram_size;
	unsigned long flags;
	struct dpusim_rank_owner owner;
	struct mutex state_lock;	/* the rank's state: see Locking */
	struct dpusim_dpu *dpus;
	struct dpusim_budget *budget;
	struct dpusim_xfer_stats stats;
	struct dpusim_rank_async async;
	struct dpusim_rank_xfer xfer;
	struct dpusim_rank_run run;
	struct xarray streams;
};

/**
 * struct dpusim_stream_job - a stream move of a DPU program (stream_move.c)
 * @start_lock: the start of @thread and the allocation of @ring_page
 * @thread: the worker's copy thread, which runs the asynchronous moves and
 *          those of the move ring; started at the first one
 * @ring_page: the move ring's page (DPUSIM_MMAP_MOVE_RING), or NULL
 * @ring: its kernel address; set once, under @start_lock
 * @ring_seen: the sequence number of the ring's move taken last (@thread's)
 * @pending: a move is queued or running; set under the rank's state_lock,
 *           cleared by @thread when its copy is done
 * @down: from the stream to the DPU
 * @smem: the stream's memory
 * @soff: where the move starts in it
 * @nr: entries of @seg
 * @seg: the DPU's side, in order: a memory, an offset, a length
 */
struct dpusim_stream_job {
	struct mutex start_lock;	/* @thread, @ring_page */
	struct task_struct *thread;
	struct page *ring_page;
	struct dpusim_move_ring *ring;
	u32 ring_seen;
	bool pending;
	bool down;
	struct dpusim_mem *smem;
	u64 soff;
	u32 nr;
	struct {
		struct dpusim_mem *mem;
		u64 off;
		u64 len;
	} seg[DPUSIM_STREAM_MOVE_MAX_BLOCKS];
};

/**
 * struct dpusim_worker - one worker file
 * @rank: the rank; the worker holds a reference on its ownership
 * @node: in rank->run.workers, under rank->run.worker_lock
 * @pids: struct dpusim_worker_pid, the processes that claimed through the
 *        file, under rank->run.worker_lock
 * @held: the DPU held, or -1; under rank->state_lock (READ_ONCE in mmap)
 * @win_lock: the window's page table entries (mmap.c), nested inside
 *            mmap_lock
 * @win_mm: the address space of the window (a reference, mmgrab()), or
 *          NULL: no window; under @win_lock
 * @win_start: where the window starts in @win_mm; under @win_lock
 * @move: the stream move in flight of the held DPU's program
 *        (stream_move.c)
 */
struct dpusim_worker {
	struct dpusim_rank *rank;
	struct list_head node;
	struct list_head pids;
	s32 held;
	struct mutex win_lock;	/* the window's entries, inside mmap_lock */
	struct mm_struct *win_mm;
	unsigned long win_start;
	struct dpusim_stream_job move;
};

/**
 * struct dpusim_stream - one stream of a rank (stream.c)
 * @id: its number, from 0 in creation order
 * @token_size: bytes per token at creation
 * @nr_tokens: tokens it holds
 * @data_size: bytes of data (an empty stream: its capacity)
 * @core: the DPU that has it open, or -1
 * @cursor: the next token, 0 .. @nr_tokens
 * @sizes: an empty stream's table of token sizes, or NULL (a stream of
 *         data: tokens of @token_size, the last one the rest)
 * @offs: with @sizes: the offset of each token's header (@nr_tokens + 1)
 * @max_tokens: with @sizes: the tokens the tables have room for
 * @table_pages: with @sizes: the pages the tables are charged as
 * @budget: where they are charged
 * @mem: its memory, in EBSP's format
 *
 * All but @mem under the rank's state_lock.
 */
/**
 * struct dpusim_stream_buf - a core's registered token buffer (stream_buf.c)
 * @ref: the stream's while open, and one per move using it
 * @rank: the rank
 * @charge: @nr_pages pinned pages, charged to the registering process and
 *          @rank's xfer.pinned_pages (empty only for a KUnit test's buffer of
 *          kernel pages)
 * @len: bytes registered
 * @nr_pages: entries of @pages
 * @pages: the pinned pages, in order
 */
struct dpusim_stream_buf {
	struct kref ref;
	struct dpusim_rank *rank;
	struct dpusim_charge charge;
	u64 len;
	unsigned long nr_pages;
	struct page **pages;
};

struct dpusim_stream {
	u32 id;
	u32 token_size;
	u32 nr_tokens;
	u64 data_size;
	s32 core;
	u32 cursor;
	u32 *sizes;
	u64 *offs;
	u32 max_tokens;
	unsigned long table_pages;
	struct dpusim_budget *budget;
	struct dpusim_mem mem;
	struct dpusim_stream_buf *buf;	/* its core's, while open */
};

/* main.c */

/* mram.c */
extern struct dpusim_budget dpusim_budget;
void dpusim_budget_default(struct dpusim_budget *b);
int dpusim_budget_charge(struct dpusim_budget *b, unsigned long nr);
void dpusim_budget_uncharge(struct dpusim_budget *b, unsigned long nr);
void dpusim_mem_init(struct dpusim_mem *mem, u64 size, struct dpusim_budget *b);
void dpusim_mem_free(struct dpusim_mem *mem);
unsigned long dpusim_mem_missing(struct dpusim_mem *mem, u64 off, u64 len);
int dpusim_mem_populate(struct dpusim_mem *mem, u64 off, u64 len,
			struct dpusim_mem_undo *undo);
unsigned long dpusim_mem_undo(struct dpusim_mem_undo *undo);
struct page *dpusim_mem_get_page(struct dpusim_mem *mem, pgoff_t idx);
int dpusim_mem_fill(struct dpusim_mem *mem, u64 off, u64 len);
int dpusim_mem_populate_charged(struct dpusim_mem *mem, u64 off, u64 len);
void dpusim_mem_copy_mem(struct dpusim_mem *dst, u64 doff,
			 struct dpusim_mem *src, u64 soff, u64 len);
void dpusim_mem_zero(struct dpusim_mem *mem, u64 off, u64 len);
struct page *dpusim_mem_page(struct dpusim_mem *mem, u64 off);
void dpusim_page_copy(struct page *page, u64 off, void *buf, size_t len,
		      bool to_mem);
void dpusim_mem_copy_page(struct dpusim_mem *mem, u64 off, void *buf,
			  size_t len, bool to_mem);

/* rank.c */
int dpusim_geometry_check(const struct dpusim_geometry *geo);
int dpusim_rank_init(struct dpusim_rank *rank, u32 index,
		     const struct dpusim_geometry *geo,
		     struct dpusim_budget *budget);
void dpusim_rank_fini(struct dpusim_rank *rank);
u64 dpusim_rank_resident_bytes(struct dpusim_rank *rank,
			       enum dpusim_mem_kind kind);

/* owner.c */
void dpusim_rank_free_memory(struct dpusim_rank *rank);
int dpusim_rank_claim(struct dpusim_rank *rank);
void dpusim_rank_touch_owner(struct dpusim_rank *rank);
void dpusim_rank_get(struct dpusim_rank *rank);
void dpusim_rank_put(struct dpusim_rank *rank);

/* rank_dev.c */
void dpusim_rank_release(struct dpusim_rank *rank);
struct dpusim_rank *dpusim_rank_from_file(struct file *file);
int dpusim_launch(struct dpusim_rank *rank, u32 first, u32 nr);
struct dpusim_rank *dpusim_rank_create(u32 index,
				       const struct dpusim_geometry *geo,
				       dev_t devt, struct class *class);
void dpusim_rank_destroy(struct dpusim_rank *rank);

/* xfer_ioctl.c: DPUSIM_IOCTL_XFER over the engine (xfer.h) */
int dpusim_xfer_check_locked(struct dpusim_rank *rank,
			     const struct dpusim_xfer *x,
			     const struct dpusim_xfer_dpu *dpus);
int dpusim_xfer_check(const struct dpusim_rank *rank,
		      const struct dpusim_xfer *x,
		      const struct dpusim_xfer_dpu *dpus,
		      const struct dpusim_block *blocks,
		      u64 *bytes, u64 *pad, u64 *dpu_max);
int dpusim_xfer_run(struct dpusim_rank *rank, const struct dpusim_xfer *x,
		    const struct dpusim_xfer_dpu *dpus,
		    const struct dpusim_block *blocks);
int dpusim_xfer_user(struct dpusim_rank *rank, const struct dpusim_xfer *x);

/*
 * dpusim_poll - poll @cond for at most @ns nanoseconds, while nothing else
 * waits for this CPU (as KVM's halt polling does) and @stop is false;
 * evaluates to @cond's last value.  Where waking a thread on another CPU
 * costs more than the work it waits for, the asynchronous transfers'
 * worker and SYNC (async.c), and a DPU program's copy thread and its
 * waiters (stream_move.c) poll a little before they sleep.
 * local_clock(), not ktime_get_ns(): a virtual machine's clocksource may
 * trap on every read; and no cpu_relax(): an emulator may trap on every
 * PAUSE as well, and the loop gives way to any other task anyway.
 */
#define dpusim_poll(cond, ns, stop)					\
	({								\
		u64 __end = local_clock() + (ns);			\
		bool __ok;						\
									\
		while (!(__ok = (cond)) && !need_resched() &&		\
		       single_task_running() && local_clock() <= __end && \
		       !(stop))						\
			barrier();					\
		__ok;							\
	})

/* async.c */
int dpusim_async_init(struct dpusim_rank *rank);
void dpusim_async_fini(struct dpusim_rank *rank);
struct dpusim_xfer_pin *dpusim_async_job_new(const struct dpusim_xfer_pin *src,
					     bool *taken);
void dpusim_async_job_drop(struct dpusim_xfer_pin *p, bool *taken);
int dpusim_async_room(struct dpusim_rank *rank,
		      const struct dpusim_xfer_pin *p);
void dpusim_async_queue(struct dpusim_rank *rank, struct dpusim_xfer_pin *p);
int dpusim_async_wait_idle(struct dpusim_rank *rank, u32 timeout_ms);
int dpusim_async_sync(struct dpusim_rank *rank, u32 timeout_ms);
int dpusim_async_status_mmap(struct dpusim_rank *rank,
			     struct vm_area_struct *vma);

/* ioctl.c */

/*
 * The largest struct size a dispatcher takes (E2BIG above, before the
 * struct is read), a page as for openat2(), clone3() and bpf():
 * copy_struct_from_user() checks every byte past the struct it knows, so
 * an unbounded size would scan up to 4 GiB of user memory in one call.
 * Every struct of the ABI fits with room to grow.  4096 on every
 * architecture: the ABI says so.
 */
#define DPUSIM_UCMD_MAX_SIZE	4096U

/**
 * struct dpusim_ucmd - one ioctl call in progress
 * @rank: the rank the file is open on
 * @worker: the worker file's state (worker ioctls), else NULL
 * @ubuffer: the user's struct
 * @user_size: the size field the user passed
 * @cmd: the kernel copy of the struct
 */
struct dpusim_ucmd {
	struct dpusim_rank *rank;
	struct dpusim_worker *worker;
	void __user *ubuffer;
	u32 user_size;
	void *cmd;
};

struct dpusim_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	unsigned int ioctl_num;
	int (*execute)(struct dpusim_ucmd *ucmd);
};

int dpusim_ucmd_respond(struct dpusim_ucmd *ucmd, size_t cmd_len);
long dpusim_ucmd_dispatch(struct dpusim_ucmd *ucmd,
			  const struct dpusim_ioctl_op *ops,
			  unsigned int nr_ops, unsigned int base,
			  unsigned int cmd, void *buf);
long dpusim_ioctl_dispatch(struct dpusim_rank *rank, unsigned int cmd,
			   void __user *ubuffer);

/* run.c */
void dpusim_run_init(struct dpusim_rank *rank);
void dpusim_run_reset(struct dpusim_rank *rank);
void dpusim_dpu_end(struct dpusim_rank *rank, u32 i, u32 state,
		    const char *reason, u64 modeled_cycles);
int dpusim_run_check_xfer(struct dpusim_rank *rank,
			  const struct dpusim_xfer_dpu *dpus, u32 nr_dpus);
int dpusim_launch_locked(struct dpusim_rank *rank, u32 first, u32 nr);
int dpusim_dpu_status(struct dpusim_rank *rank, u32 first, u32 nr,
		      struct dpusim_dpu_state *states, u32 *nr_running,
		      u32 *nr_fault);

/* worker.c */
struct dpusim_worker *dpusim_worker_create(struct dpusim_rank *rank);
void dpusim_worker_destroy(struct dpusim_worker *w);
int dpusim_worker_claim(struct dpusim_worker *w, u32 flags, u32 timeout_ms,
			u32 *dpu, u32 *launches);
void dpusim_worker_unclaim(struct dpusim_worker *w, u32 dpu);
int dpusim_worker_finish(struct dpusim_worker *w, u32 dpu, u32 flags,
			 const char *reason, u64 modeled_cycles);
void dpusim_worker_shutdown(struct dpusim_rank *rank);

/* stream.c */
int dpusim_stream_layout(u64 stream_size, u32 token_size, bool down,
			 u32 *nr_tokens, u64 *mem_size);
u32 dpusim_stream_token(const struct dpusim_stream *s, u32 i, u64 *off);
u32 dpusim_stream_seek(u32 cursor, u32 nr_tokens, s32 delta);
int dpusim_stream_create(struct dpusim_rank *rank,
			 struct dpusim_stream_create *c);
int dpusim_stream_cmd(struct dpusim_rank *rank, unsigned int cmd,
		      struct dpusim_stream_cmd *c, struct dpusim_worker *w);
void dpusim_stream_free_all(struct dpusim_rank *rank);
u64 dpusim_stream_resident_bytes(struct dpusim_rank *rank);
struct dpusim_mem *dpusim_stream_mem(struct dpusim_rank *rank, u32 id);
struct dpusim_stream_buf *dpusim_stream_buf_get(struct dpusim_rank *rank,
						const struct dpusim_xfer *x);
int dpusim_stream_core_check(struct dpusim_rank *rank, u32 core,
			     struct dpusim_worker *w);
int dpusim_stream_move_check(struct dpusim_rank *rank,
			     const struct dpusim_xfer *x, u32 core);
void dpusim_stream_move_done(struct dpusim_rank *rank,
			     const struct dpusim_xfer *x);
int dpusim_stream_create_ioctl(struct dpusim_ucmd *ucmd);
int dpusim_stream_open_ioctl(struct dpusim_ucmd *ucmd);
int dpusim_stream_close_ioctl(struct dpusim_ucmd *ucmd);
int dpusim_stream_seek_ioctl(struct dpusim_ucmd *ucmd);
int dpusim_stream_cmd_respond(struct dpusim_ucmd *ucmd, unsigned int cmd);

/* stream_buf.c */
struct dpusim_stream_buf *dpusim_stream_buf_register(struct dpusim_rank *rank,
						     u64 addr, u64 len);
void dpusim_stream_buf_put(struct dpusim_stream_buf *b);
struct page *dpusim_stream_buf_page(const struct dpusim_stream_buf *b, u64 off);

/* stream_move.c */
void dpusim_stream_job_init(struct dpusim_worker *w);
void dpusim_stream_job_flush(struct dpusim_worker *w);
void dpusim_stream_job_exit(struct dpusim_worker *w);
int dpusim_stream_ring_mmap(struct dpusim_worker *w,
			    struct vm_area_struct *vma);
int dpusim_worker_stream_move_ioctl(struct dpusim_ucmd *ucmd);
int dpusim_worker_stream_wait_ioctl(struct dpusim_ucmd *ucmd);

/* mmap.c */
/* Pages of the mmap offset that lie inside one memory */
#define DPUSIM_MMAP_MEM_PAGES	(DPUSIM_MMAP_WRAM_BIT >> PAGE_SHIFT)
#define DPUSIM_WINDOW_PGOFF	(DPUSIM_MMAP_WINDOW >> PAGE_SHIFT)

int dpusim_mmap_mem(struct vm_area_struct *vma, struct dpusim_mem *mem,
		    pgoff_t first);
bool dpusim_mmap_fits(struct vm_area_struct *vma,
		      const struct dpusim_mem *mem, pgoff_t first);
int dpusim_window_mmap(struct dpusim_worker *w, struct vm_area_struct *vma);
struct dpusim_mem *dpusim_window_mem(struct dpusim_rank *rank, u32 dpu,
				     pgoff_t idx, pgoff_t *mem_idx);
void dpusim_window_fill(struct dpusim_worker *w, u32 dpu);
void dpusim_window_clear(struct dpusim_worker *w);

#endif /* _DPUSIM_H */
