// SPDX-License-Identifier: GPL-2.0
/*
 * Asynchronous transfers: DPUSIM_XFER_ASYNC and DPUSIM_IOCTL_SYNC.
 *
 * The submitting call does everything a synchronous transfer does before
 * the copy (check, pin the user pages, populate the memory under the
 * rank's xfer_lock), charges the pinned pages to the caller's
 * RLIMIT_MEMLOCK and queues a job on the rank's ordered workqueue: every
 * error comes back at submit, with nothing changed.  The job keeps its own
 * copy of the DPU and block lists, the pinned pages and a reference on the
 * mm (mmgrab) to uncharge it later; the worker copies under xfer_lock,
 * unpins, uncharges and wakes DPUSIM_IOCTL_SYNC.
 *
 * Since the job holds the pages, it completes safely after the process
 * exited; closing the file (dpusim_async_drain()) waits for the jobs
 * before the rank's memory is freed.
 */
#include <kunit/visibility.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "dpusim.h"

/**
 * struct dpusim_async_job - one queued DPUSIM_XFER_ASYNC transfer
 * @work: on the rank's async_wq
 * @rank: the rank
 * @mm: the submitter's mm (mmgrab), where @p's pages are charged; NULL if
 *      nothing is pinned
 * @p: the pinned transfer; its lists are the job's own copies
 */
struct dpusim_async_job {
	struct work_struct work;
	struct dpusim_rank *rank;
	struct mm_struct *mm;
	struct dpusim_xfer_pin p;
};

/**
 * dpusim_async_init - create the rank's workqueue
 * @rank: the rank, being initialised
 *
 * Return: 0 or -ENOMEM.
 */
int dpusim_async_init(struct dpusim_rank *rank)
{
	atomic_set(&rank->async_pending, 0);
	atomic_set(&rank->async_error, 0);
	init_waitqueue_head(&rank->async_idle);
	rank->async_wq = alloc_ordered_workqueue("dpusim_rank%u", 0,
						 rank->index);
	return rank->async_wq ? 0 : -ENOMEM;
}

/**
 * dpusim_async_fini - wait for the queued jobs and destroy the workqueue
 * @rank: the rank
 */
void dpusim_async_fini(struct dpusim_rank *rank)
{
	if (!rank->async_wq)
		return;
	destroy_workqueue(rank->async_wq);
	rank->async_wq = NULL;
}

/* Uncharge RLIMIT_MEMLOCK; the mm may have exited (then nothing to do). */
static void dpusim_async_uncharge(struct dpusim_async_job *job)
{
	struct mm_struct *mm = job->mm;

	if (!mm)
		return;
	if (mmget_not_zero(mm)) {
		account_locked_vm(mm, job->p.npinned, false);
		mmput(mm);
	}
	mmdrop(mm);
	job->mm = NULL;
}

static void dpusim_async_job_free(struct dpusim_async_job *job, bool dirty)
{
	dpusim_async_uncharge(job);
	dpusim_xfer_unpin(&job->p, dirty);
	kvfree(job->p.blocks);
	kvfree(job->p.dpus);
	kfree(job);
}

static void dpusim_async_work(struct work_struct *work)
{
	struct dpusim_async_job *job = container_of(work, typeof(*job), work);
	struct dpusim_rank *rank = job->rank;
	int ret = 0;

	mutex_lock(&rank->xfer_lock);
	dpusim_xfer_copy(rank, &job->p);
	mutex_unlock(&rank->xfer_lock);
	dpusim_async_job_free(job, !ret);

	/* The copy cannot fail today; the first error is kept for SYNC. */
	if (ret)
		atomic_cmpxchg(&rank->async_error, 0, ret);
	if (atomic_dec_and_test(&rank->async_pending))
		wake_up_all(&rank->async_idle);
}

/* kvmemdup() is 6.11+: a kvmalloc'ed copy, NULL for 0 bytes too. */
static void *dpusim_kvdup(const void *src, size_t n)
{
	void *p = n ? kvmalloc(n, GFP_KERNEL) : NULL;

	if (p)
		memcpy(p, src, n);
	return p;
}

/**
 * dpusim_async_submit - queue a checked transfer
 * @rank: the rank
 * @x: the header, with DPUSIM_XFER_ASYNC, checked, with DPUs
 * @dpus: x->nr_dpus entries (copied)
 * @blocks: x->nr_blocks entries (copied); user addresses of the current
 *          process
 *
 * Return: 0 once queued, or an errno of struct dpusim_xfer (-ENOMEM over
 * RLIMIT_MEMLOCK) with nothing changed.
 */
int dpusim_async_submit(struct dpusim_rank *rank, const struct dpusim_xfer *x,
			const struct dpusim_xfer_dpu *dpus,
			const struct dpusim_block *blocks)
{
	struct dpusim_async_job *job;
	struct dpusim_xfer_dpu *jdpus;
	struct dpusim_block *jblocks = NULL;
	int ret;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return -ENOMEM;
	jdpus = dpusim_kvdup(dpus, array_size(x->nr_dpus, sizeof(*dpus)));
	if (x->nr_blocks)
		jblocks = dpusim_kvdup(blocks, array_size(x->nr_blocks,
							  sizeof(*blocks)));
	if (!jdpus || (x->nr_blocks && !jblocks)) {
		kvfree(jblocks);
		kvfree(jdpus);
		kfree(job);
		return -ENOMEM;
	}
	INIT_WORK(&job->work, dpusim_async_work);
	job->rank = rank;
	job->p.x = *x;
	job->p.dpus = jdpus;
	job->p.blocks = jblocks;

	ret = dpusim_xfer_pin_user(rank, &job->p);
	if (ret) {
		kvfree(jblocks);
		kvfree(jdpus);
		kfree(job);
		return ret;
	}
	if (job->p.npinned) {
		ret = account_locked_vm(current->mm, job->p.npinned, true);
		if (ret)
			goto err_free;
		mmgrab(current->mm);
		job->mm = current->mm;
	}

	ret = mutex_lock_interruptible(&rank->xfer_lock);
	if (ret)
		goto err_free;
	ret = dpusim_xfer_populate(rank, &job->p);
	if (!ret) {
		atomic_inc(&rank->async_pending);
		queue_work(rank->async_wq, &job->work);
	}
	mutex_unlock(&rank->xfer_lock);
	if (!ret)
		return 0;

err_free:
	dpusim_async_job_free(job, false);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_async_submit);

static bool dpusim_async_idle(struct dpusim_rank *rank)
{
	return !atomic_read(&rank->async_pending);
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

	if (dpusim_async_idle(rank))
		return 0;
	if (!timeout_ms)
		timeout_ms = DPUSIM_SYNC_DEFAULT_TIMEOUT_MS;
	left = wait_event_interruptible_timeout(rank->async_idle,
						dpusim_async_idle(rank),
						msecs_to_jiffies(timeout_ms));
	if (left < 0)
		return left;
	return left ? 0 : -ETIMEDOUT;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_async_wait_idle);

/**
 * dpusim_async_sync - DPUSIM_IOCTL_SYNC: wait for the jobs, take the error
 * @rank: the rank
 * @timeout_ms: longest wait, 0 for DPUSIM_SYNC_DEFAULT_TIMEOUT_MS
 *
 * Return: 0, the first error of a job since the previous sync (cleared),
 * -ETIMEDOUT or -ERESTARTSYS.
 */
int dpusim_async_sync(struct dpusim_rank *rank, u32 timeout_ms)
{
	int ret;

	ret = dpusim_async_wait_idle(rank, timeout_ms);
	if (ret)
		return ret;
	return atomic_xchg(&rank->async_error, 0);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_async_sync);

/**
 * dpusim_async_drain - wait for every queued job, drop the pending error
 * @rank: the rank, its file being closed
 *
 * Not interruptible: the jobs use the rank's memory, which the caller
 * frees next.  Bounded: a job is a copy of at most DPUSIM_XFER_MAX_BYTES.
 */
void dpusim_async_drain(struct dpusim_rank *rank)
{
	flush_workqueue(rank->async_wq);
	atomic_set(&rank->async_error, 0);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_async_drain);
