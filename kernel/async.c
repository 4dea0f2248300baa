// SPDX-License-Identifier: GPL-2.0
/*
 * Asynchronous transfers: DPUSIM_XFER_ASYNC and DPUSIM_IOCTL_SYNC.
 *
 * The submitting call (xfer_ioctl.c) does everything a synchronous
 * transfer does before the copy (check, pin and charge the user pages,
 * populate the memory), under the rank's state_lock, and queues a job on
 * the rank's list here: every error comes back at submit, with nothing
 * changed, and the queue only copies.  One work item per
 * rank (on an ordered workqueue) runs the jobs in submission order and
 * lingers a little for the next one (DPUSIM_ASYNC_LINGER_NS).  The
 * open file's queue is bounded (DPUSIM_ASYNC_MAX_*, EAGAIN over a limit):
 * jobs, blocks, bytes (moved and padded) and pinned pages.  The job keeps
 * its own copy of the DPU and block lists (charged to the memory cgroup),
 * the pinned pages and their RLIMIT_MEMLOCK charge; the worker copies
 * under state_lock, unpins, uncharges and wakes DPUSIM_IOCTL_SYNC.
 *
 * Each job holds a reference on the rank's ownership (dpusim_rank_get()):
 * closing the file does not wait for the jobs; the last job to finish ends
 * the ownership and frees the rank's memory (rank.c).
 *
 * The rank's status page (DPUSIM_MMAP_STATUS) counts the jobs queued and
 * the jobs done, so that a caller whose job is done skips the SYNC: a
 * system call per token for a stream's preload.  Each counter has one
 * writer at a time: the submits count under async.lock, the rank's work
 * item (one at a time: an ordered workqueue) counts the jobs done.
 */
#include <kunit/visibility.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "trace.h"
#include "xfer.h"

/**
 * struct dpusim_async_job - one queued DPUSIM_XFER_ASYNC transfer
 * @node: in the rank's async.jobs
 * @rank: the rank
 * @p: the pinned transfer; its lists are the job's own copies
 * @seq: for the tracepoints: which job
 * @queued_ns: when it was queued, if traced
 * @lists: small lists (DPUSIM_XFER_SMALL_LISTS): the DPUs, then the
 *         blocks, allocated with the job
 */
struct dpusim_async_job {
	struct list_head node;
	struct dpusim_rank *rank;
	struct dpusim_xfer_pin p;
	u64 seq;
	u64 queued_ns;
	u64 lists[];
};

/*
 * How long the rank's worker lingers after its last job for the next one,
 * and a DPUSIM_IOCTL_SYNC polls before it sleeps.  Waking a thread on
 * another CPU can cost more than a stream token's copy: a consumer that
 * submits its next move within the linger of the last one's end finds
 * the worker still here, as a DMA engine waits for its next descriptor,
 * and a SYNC that finds the copy about to end pays no wake-up.  Both
 * poll only while nothing else waits for their CPU (dpusim_poll()).
 * tools/bench/README has the wake-up latencies these were chosen from.
 */
#define DPUSIM_ASYNC_LINGER_NS	(1000 * NSEC_PER_USEC)
#define DPUSIM_ASYNC_POLL_NS	(200 * NSEC_PER_USEC)

/* Numbers the jobs of every rank, for the tracepoints */
static atomic64_t dpusim_async_seq = ATOMIC64_INIT(0);

static void dpusim_async_work(struct work_struct *work);

/**
 * dpusim_async_init - create the rank's workqueue
 * @rank: the rank, being initialised
 *
 * Return: 0 or -ENOMEM.
 */
int dpusim_async_init(struct dpusim_rank *rank)
{
	struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);

	if (!page)
		return -ENOMEM;
	/* lowmem: the kernel writes it through its own mapping */
	rank->async.status = page_address(page);
	atomic_set(&rank->async.pending, 0);
	INIT_WORK(&rank->async.work, dpusim_async_work);
	spin_lock_init(&rank->async.lock);
	INIT_LIST_HEAD(&rank->async.jobs);
	rank->async.running = false;
	rank->async.share = NULL;
	init_waitqueue_head(&rank->async.idle);
	rank->async.wq = alloc_ordered_workqueue("dpusim_rank%u", 0,
						 rank->index);
	if (!rank->async.wq) {
		__free_page(page);
		rank->async.status = NULL;
		return -ENOMEM;
	}
	return 0;
}

/**
 * dpusim_async_fini - wait for the queued jobs, destroy the workqueue
 * @rank: the rank, which no file (hence no mapping of its status page)
 *        holds any more
 */
void dpusim_async_fini(struct dpusim_rank *rank)
{
	if (!rank->async.wq)
		return;
	destroy_workqueue(rank->async.wq);
	rank->async.wq = NULL;
	__free_page(virt_to_page(rank->async.status));
	rank->async.status = NULL;
}

/* What a job adds to the queue's usage. */
static u64 dpusim_job_bytes(const struct dpusim_xfer_pin *p)
{
	return p->bytes + p->pad;
}

/**
 * dpusim_async_room - whether the queue has room for a job
 * @rank: the rank
 * @p: the job's transfer, before and again after pinning
 *
 * Return: 0, or -EAGAIN if the job would take the queue over a
 * DPUSIM_ASYNC_MAX_*.
 */
int dpusim_async_room(struct dpusim_rank *rank, const struct dpusim_xfer_pin *p)
{
	struct dpusim_async_usage *u = &rank->async.usage;

	if (atomic_read(&u->jobs) >= DPUSIM_ASYNC_MAX_JOBS ||
	    atomic_read(&u->blocks) > DPUSIM_ASYNC_MAX_BLOCKS - p->x.nr_blocks ||
	    atomic64_read(&u->bytes) > DPUSIM_ASYNC_MAX_BYTES - dpusim_job_bytes(p) ||
	    atomic_long_read(&u->pages) > DPUSIM_ASYNC_MAX_PAGES - p->npinned)
		return -EAGAIN;
	return 0;
}

static void dpusim_async_account(struct dpusim_rank *rank,
				 const struct dpusim_xfer_pin *p, int sign)
{
	struct dpusim_async_usage *u = &rank->async.usage;

	atomic_add(sign, &u->jobs);
	atomic_add(sign * (int)p->x.nr_blocks, &u->blocks);
	atomic64_add(sign * (s64)dpusim_job_bytes(p), &u->bytes);
	atomic_long_add(sign * (long)p->npinned, &u->pages);
}

static void dpusim_async_job_free(struct dpusim_async_job *job, bool dirty)
{
	dpusim_xfer_unpin(&job->p, dirty);
	if ((void *)job->p.dpus != job->lists) {
		kvfree(job->p.blocks);
		kvfree(job->p.dpus);
	}
	kfree(job);
}

/*
 * The job's copy, its first piece shared with DPUSIM_IOCTL_SYNC
 * (dpusim_async_help()): published in async.share while the worker
 * takes its chunks; then unpublished, and the worker waits for the
 * helpers still copying a chunk before it goes on (the share lives on
 * its stack, the pages stay pinned and the memory, under state_lock,
 * loses none meanwhile).  The acquire pairs with the helpers' fully
 * ordered decrement: their chunks' bytes before what the worker does
 * next (the unpinning, the status page's count).
 */
static void dpusim_async_copy(struct dpusim_rank *rank,
			      struct dpusim_xfer_pin *p)
{
	struct dpusim_xfer_share sh;
	bool shared = dpusim_xfer_share_begin(rank, p, &sh);

	if (shared) {
		spin_lock(&rank->async.lock);
		rank->async.share = &sh;
		spin_unlock(&rank->async.lock);
	}
	dpusim_xfer_share_copy(&sh);
	if (shared) {
		spin_lock(&rank->async.lock);
		rank->async.share = NULL;
		spin_unlock(&rank->async.lock);
		wait_var_event(&sh.helpers, !atomic_read_acquire(&sh.helpers));
	}
	dpusim_xfer_share_end(rank, p, &sh);
}

/*
 * A SYNC caller copies chunks of the job being copied, beside the
 * worker, until none is left.  The decrement is fully ordered: the
 * chunk's bytes before it, and it before the wake-up's look at the
 * wait queue (which only hashes the address: the share may be gone).
 */
static void dpusim_async_help(struct dpusim_rank *rank)
{
	struct dpusim_xfer_share *sh;

	spin_lock(&rank->async.lock);
	sh = rank->async.share;
	if (sh)
		atomic_inc(&sh->helpers);
	spin_unlock(&rank->async.lock);
	if (!sh)
		return;
	dpusim_xfer_share_copy(sh);
	if (atomic_dec_and_test(&sh->helpers))
		wake_up_var(&sh->helpers);
}

/* Run one job: copy, then let go of everything it holds. */
static void dpusim_async_run(struct dpusim_async_job *job)
{
	struct dpusim_rank *rank = job->rank;
	const struct dpusim_xfer *x = &job->p.x;
	u64 t0, t1;

	mutex_lock(&rank->state_lock);
	t0 = ktime_get_ns();
	dpusim_async_copy(rank, &job->p);
	mutex_unlock(&rank->state_lock);
	t1 = ktime_get_ns();
	dpusim_xfer_count_time(rank, &job->p, t1 - t0);
	trace_dpusim_xfer(rank->index, x->nr_dpus, x->nr_blocks, job->p.bytes,
			  x->flags & DPUSIM_XFER_FROM_DPU, true, t1 - t0,
			  job->p.modeled_ns);
	trace_dpusim_async_done(rank->index, job->seq, job->p.bytes, 0,
				job->queued_ns ? t0 - job->queued_ns : 0, t1 - t0);
	dpusim_async_account(rank, &job->p, -1);
	dpusim_async_job_free(job, true);

	/*
	 * Let go of the ownership before the job counts as done: a SYNC
	 * that returned, then close(), leaves the rank free at once (the
	 * rank itself outlives this: dpusim_async_fini() flushes the queue).
	 */
	dpusim_rank_put(rank);
	/* the copy and the unpinning before the count (the status page) */
	smp_store_release(&rank->async.status->async_done,
			  rank->async.status->async_done + 1);
	if (atomic_dec_and_test(&rank->async.pending))
		wake_up_all(&rank->async.idle);
}

/* The first queued job, taken off the list; NULL if there is none. */
static struct dpusim_async_job *dpusim_async_next(struct dpusim_rank *rank,
						  bool last)
{
	struct dpusim_async_job *job;

	spin_lock(&rank->async.lock);
	job = list_first_entry_or_null(&rank->async.jobs, typeof(*job), node);
	if (job)
		list_del(&job->node);
	else if (last)
		rank->async.running = false;	/* the next submit kicks */
	spin_unlock(&rank->async.lock);
	return job;
}

/*
 * The rank's work item: the queued jobs one after the other, in order,
 * then a linger for the next one (it runs with no wake-up) before it
 * returns.  The rank outlives it: dpusim_async_fini() flushes the queue.
 */
static void dpusim_async_work(struct work_struct *work)
{
	struct dpusim_rank *rank = container_of(work, struct dpusim_rank,
						async.work);
	struct dpusim_async_job *job;

	for (;;) {
		job = dpusim_async_next(rank, false);
		if (!job) {
			dpusim_poll(!list_empty_careful(&rank->async.jobs),
				    DPUSIM_ASYNC_LINGER_NS, false);
			job = dpusim_async_next(rank, true);
			if (!job)
				return;
		}
		dpusim_async_run(job);
		cond_resched();
	}
}

/* A kvmalloc'ed, memcg-charged copy; NULL for 0 bytes too. */
static void *dpusim_kvdup(const void *src, size_t n)
{
	void *p = n ? kvmalloc(n, GFP_KERNEL_ACCOUNT) : NULL;

	if (p)
		memcpy(p, src, n);
	return p;
}

/**
 * dpusim_async_job_new - a job for a checked transfer
 * @src: the transfer: its header, lists, bytes and pad
 * @taken: NULL: the job copies @src's lists (into its own allocation if
 *         small); else they are kvmalloc'ed and the job uses them, and
 *         takes them once queued (the ioctl's own copies: a copy saved
 *         per call)
 *
 * Return: the job's transfer, for the caller to pin and populate, then
 * dpusim_async_queue() or dpusim_async_job_drop(); or NULL: out of
 * memory.
 */
struct dpusim_xfer_pin *dpusim_async_job_new(const struct dpusim_xfer_pin *src,
					     bool *taken)
{
	const struct dpusim_xfer *x = &src->x;
	size_t dl = array_size(x->nr_dpus, sizeof(*src->dpus));
	size_t bl = array_size(x->nr_blocks, sizeof(*src->blocks));
	bool small = !taken && dl + bl <= DPUSIM_XFER_SMALL_LISTS;
	struct dpusim_async_job *job;

	/* both multiples of 8: the blocks stay aligned after the DPUs */
	job = kzalloc(small ? struct_size(job, lists, (dl + bl) / sizeof(u64)) :
		      sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job)
		return NULL;
	if (taken) {
		job->p.dpus = src->dpus;
		job->p.blocks = src->blocks;
	} else if (small) {
		memcpy(job->lists, src->dpus, dl);
		memcpy((u8 *)job->lists + dl, src->blocks, bl);
		job->p.dpus = (void *)job->lists;
		job->p.blocks = (void *)((u8 *)job->lists + dl);
	} else {
		job->p.dpus = dpusim_kvdup(src->dpus, dl);
		job->p.blocks = dpusim_kvdup(src->blocks, bl);
		if (!job->p.dpus || (x->nr_blocks && !job->p.blocks)) {
			kvfree(job->p.blocks);
			kvfree(job->p.dpus);
			kfree(job);
			return NULL;
		}
	}
	job->p.x = *x;
	job->p.bytes = src->bytes;
	job->p.pad = src->pad;
	job->p.dpu_max = src->dpu_max;
	job->p.modeled_ns = src->modeled_ns;
	return &job->p;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_async_job_new);

/**
 * dpusim_async_job_drop - free a job that was not queued
 * @p: the job's transfer, unpinned
 * @taken: as given to dpusim_async_job_new(): the lists stay the caller's
 */
void dpusim_async_job_drop(struct dpusim_xfer_pin *p, bool *taken)
{
	struct dpusim_async_job *job = container_of(p, typeof(*job), p);

	if (taken) {
		job->p.dpus = NULL;
		job->p.blocks = NULL;
	}
	dpusim_async_job_free(job, false);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_async_job_drop);

/**
 * dpusim_async_queue - queue a job, pinned and populated
 * @rank: the rank, its state_lock held (the submits queue in order)
 * @p: the job's transfer; dpusim_async_room() allowed it
 *
 * The job holds a reference on the rank's ownership until it is done.
 */
void dpusim_async_queue(struct dpusim_rank *rank, struct dpusim_xfer_pin *p)
{
	struct dpusim_async_job *job = container_of(p, typeof(*job), p);
	const struct dpusim_xfer *x = &p->x;
	int queued;
	bool kick;

	lockdep_assert_held(&rank->state_lock);
	job->rank = rank;
	dpusim_async_account(rank, p, 1);
	job->seq = atomic64_inc_return(&dpusim_async_seq);
	if (trace_dpusim_async_done_enabled())
		job->queued_ns = ktime_get_ns();
	queued = atomic_inc_return(&rank->async.pending);
	trace_dpusim_async_queue(rank->index, job->seq, x->nr_dpus, x->nr_blocks, p->bytes,
				 queued);
	dpusim_rank_get(rank);
	spin_lock(&rank->async.lock);
	list_add_tail(&job->node, &rank->async.jobs);
	WRITE_ONCE(rank->async.status->async_queued, rank->async.status->async_queued + 1);
	kick = !rank->async.running;
	rank->async.running = true;
	spin_unlock(&rank->async.lock);
	if (kick)
		queue_work(rank->async.wq, &rank->async.work);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_async_queue);

static bool dpusim_async_idle(struct dpusim_rank *rank)
{
	return !atomic_read(&rank->async.pending);
}

/**
 * dpusim_async_wait_idle - wait until no job of the rank is queued
 * @rank: the rank
 * @timeout_ms: longest wait, 0 for DPUSIM_SYNC_DEFAULT_TIMEOUT_MS
 *
 * Return: 0, -ETIMEDOUT, or -ERESTARTSYS on a signal.
 */
int dpusim_async_wait_idle(struct dpusim_rank *rank, u32 timeout_ms)
{
	long left;

	dpusim_async_help(rank);
	if (dpusim_poll(dpusim_async_idle(rank), DPUSIM_ASYNC_POLL_NS, false))
		return 0;
	if (!timeout_ms)
		timeout_ms = DPUSIM_SYNC_DEFAULT_TIMEOUT_MS;
	left = wait_event_interruptible_timeout(rank->async.idle,
						dpusim_async_idle(rank),
						msecs_to_jiffies(timeout_ms));
	if (left < 0)
		return left;
	return left ? 0 : -ETIMEDOUT;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_async_wait_idle);

/**
 * dpusim_async_sync - DPUSIM_IOCTL_SYNC: wait for the jobs
 * @rank: the rank
 * @timeout_ms: longest wait, 0 for DPUSIM_SYNC_DEFAULT_TIMEOUT_MS
 *
 * A queued job cannot fail: its errors came back at submit.
 *
 * Return: 0, -ETIMEDOUT or -ERESTARTSYS.
 */
int dpusim_async_sync(struct dpusim_rank *rank, u32 timeout_ms)
{
	return dpusim_async_wait_idle(rank, timeout_ms);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_async_sync);

/**
 * dpusim_async_status_mmap - mmap() of the rank file's status page
 * @rank: the rank
 * @vma: MAP_SHARED, at DPUSIM_MMAP_STATUS
 *
 * Return: 0, -EINVAL (not one page), -EPERM (writable or executable) or
 * -ENOMEM.
 */
int dpusim_async_status_mmap(struct dpusim_rank *rank,
			     struct vm_area_struct *vma)
{
	if (vma_pages(vma) != 1)
		return -EINVAL;
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EPERM;
	dpusim_vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
	dpusim_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return vm_insert_page(vma, vma->vm_start, virt_to_page(rank->async.status));
}
