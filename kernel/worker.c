// SPDX-License-Identifier: GPL-2.0
/*
 * The workers of DPU programs: the state behind each worker file
 * (DPUSIM_IOCTL_WORKER_OPEN; DPUSIM_IOCTL_WORKER_CLAIM and _FINISH on the
 * worker file, rank_dev.c) through which user-space worker processes run
 * the programs, DPU after DPU.  The DPUs' run state: run.c.
 *
 * Locking (the order: dpusim.h).  worker->held changes under the rank's
 * state_lock, with the DPU's run state.  rank->run.worker_lock protects
 * the list of worker files, their lists of pids and the setting of
 * DPUSIM_RANK_SHUTDOWN.
 *
 * Lifetime.  Each worker file holds a reference on the rank's ownership
 * (dpusim_rank_get()), as a queued job does: when the owner file is
 * released, the rank is marked shut down (claims fail with ESHUTDOWN),
 * every process that claimed through one of its worker files is sent
 * SIGKILL, and the rank stays owned, with its memory, until the last
 * worker file is closed; then the last reference frees the memory and
 * resets the run state (dpusim_run_reset()).
 */
#include <kunit/visibility.h>
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "dpusim.h"
#include "trace.h"

/* A process that claimed through a worker file. */
struct dpusim_worker_pid {
	struct list_head node;
	struct pid *pid;
};

/**
 * dpusim_worker_create - a new worker of a rank (a worker file's state)
 * @rank: the rank, owned by the caller
 *
 * Return: the worker, holding a reference on the rank's ownership, or
 * ERR_PTR(-E2BIG) (DPUSIM_MAX_WORKERS workers) or ERR_PTR(-ENOMEM).
 */
struct dpusim_worker *dpusim_worker_create(struct dpusim_rank *rank)
{
	struct dpusim_worker *w;

	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w)
		return ERR_PTR(-ENOMEM);
	w->rank = rank;
	w->held = -1;
	INIT_LIST_HEAD(&w->pids);
	mutex_init(&w->win_lock);
	dpusim_stream_job_init(w);
	mutex_lock(&rank->run.worker_lock);
	if (rank->run.nr_workers >= DPUSIM_MAX_WORKERS) {
		mutex_unlock(&rank->run.worker_lock);
		kfree(w);
		return ERR_PTR(-E2BIG);
	}
	list_add_tail(&w->node, &rank->run.workers);
	WRITE_ONCE(rank->run.nr_workers, rank->run.nr_workers + 1);
	dpusim_rank_get(rank);
	mutex_unlock(&rank->run.worker_lock);
	return w;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_worker_create);

/**
 * dpusim_worker_destroy - a worker file is released
 * @w: the worker
 *
 * The DPU it holds faults ("worker exited"); if it was the rank's last
 * worker, so does every RUNNING DPU no worker holds ("no worker left").
 * Then its reference on the rank's ownership goes.
 */
void dpusim_worker_destroy(struct dpusim_worker *w)
{
	struct dpusim_rank *rank = w->rank;
	struct dpusim_worker_pid *p, *n;
	bool last;
	u32 i;

	mutex_lock(&rank->state_lock);
	if (w->held >= 0)
		dpusim_dpu_end(rank, w->held, DPUSIM_DPU_FAULT, "worker exited", 0);
	mutex_lock(&rank->run.worker_lock);
	list_del(&w->node);
	WRITE_ONCE(rank->run.nr_workers, rank->run.nr_workers - 1);
	last = !rank->run.nr_workers;
	mutex_unlock(&rank->run.worker_lock);
	for (i = 0; last && rank->run.nr_unheld && i < rank->nr_dpus; i++)
		if (rank->dpus[i].state == DPUSIM_DPU_RUNNING)
			dpusim_dpu_end(rank, i, DPUSIM_DPU_FAULT,
				       "no worker left", 0);
	mutex_unlock(&rank->state_lock);

	list_for_each_entry_safe(p, n, &w->pids, node) {
		put_pid(p->pid);
		kfree(p);
	}
	dpusim_stream_job_exit(w);	/* no move: flushed when @held ended */
	mutex_destroy(&w->win_lock);
	kfree(w);
	dpusim_rank_put(rank);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_worker_destroy);

/**
 * dpusim_worker_shutdown - the rank's owner file is released
 * @rank: the rank
 *
 * Claims fail with ESHUTDOWN from now on (the claimers waiting are woken)
 * and every process that claimed through a worker file of the rank gets
 * SIGKILL: their files close, and the ownership ends with the last one.
 */
void dpusim_worker_shutdown(struct dpusim_rank *rank)
{
	struct dpusim_worker_pid *p;
	struct dpusim_worker *w;

	mutex_lock(&rank->run.worker_lock);
	set_bit(DPUSIM_RANK_SHUTDOWN, &rank->flags);
	list_for_each_entry(w, &rank->run.workers, node)
		list_for_each_entry(p, &w->pids, node)
			kill_pid(p->pid, SIGKILL, 1);
	mutex_unlock(&rank->run.worker_lock);
	wake_up_all(&rank->run.claim_wait);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_worker_shutdown);

/*
 * Record the calling process as a worker of the rank (once; entries of
 * processes gone are dropped on the way), using *@spare if a node is
 * needed.  Kernel threads are never recorded.  -ESHUTDOWN once the owner
 * file is released: the check and the record are under run.worker_lock, as
 * the shutdown is, so no claimer escapes the kill.
 */
static int dpusim_worker_note_pid(struct dpusim_worker *w,
				  struct dpusim_worker_pid **spare)
{
	struct pid *pid = task_tgid(current);
	struct dpusim_worker_pid *p, *n;
	bool found = false;
	int ret = 0;

	mutex_lock(&w->rank->run.worker_lock);
	if (test_bit(DPUSIM_RANK_SHUTDOWN, &w->rank->flags)) {
		ret = -ESHUTDOWN;
		goto out;
	}
	if (current->flags & PF_KTHREAD)
		goto out;
	list_for_each_entry_safe(p, n, &w->pids, node) {
		if (p->pid == pid) {
			found = true;
		} else if (!pid_has_task(p->pid, PIDTYPE_TGID)) {
			list_del(&p->node);
			put_pid(p->pid);
			kfree(p);
		}
	}
	if (!found) {
		p = *spare;
		*spare = NULL;
		p->pid = get_pid(pid);
		list_add_tail(&p->node, &w->pids);
	}
out:
	mutex_unlock(&w->rank->run.worker_lock);
	return ret;
}

/* One attempt: 0 (*@dpu claimed), -EAGAIN (none to run) or an errno. */
static int dpusim_worker_take(struct dpusim_worker *w,
			      struct dpusim_worker_pid **spare, u32 *dpu,
			      u32 *launches)
{
	struct dpusim_rank *rank = w->rank;
	u32 i;
	int ret;

	lockdep_assert_held(&rank->state_lock);
	if (w->held >= 0)
		return -EINVAL;
	ret = dpusim_worker_note_pid(w, spare);
	if (ret)
		return ret;
	if (!rank->run.nr_unheld)
		return -EAGAIN;
	for (i = 0; i < rank->nr_dpus; i++)
		if (rank->dpus[i].state == DPUSIM_DPU_RUNNING &&
		    !rank->dpus[i].holder)
			break;
	if (WARN_ON_ONCE(i == rank->nr_dpus))
		return -EAGAIN;
	rank->dpus[i].holder = w;
	WRITE_ONCE(w->held, i);
	rank->run.nr_unheld--;
	*dpu = i;
	*launches = rank->dpus[i].launches;
	return 0;
}

static bool dpusim_claim_ready(struct dpusim_rank *rank)
{
	return READ_ONCE(rank->run.nr_unheld) ||
	       test_bit(DPUSIM_RANK_SHUTDOWN, &rank->flags);
}

/**
 * dpusim_worker_claim - hold the lowest RUNNING DPU no worker holds
 * @w: the worker, holding no DPU
 * @flags: DPUSIM_CLAIM_*
 * @timeout_ms: longest wait, 0 for DPUSIM_SYNC_DEFAULT_TIMEOUT_MS
 * @dpu: out, the DPU
 * @launches: out, the DPU's launch count
 *
 * Waits interruptibly unless DPUSIM_CLAIM_NONBLOCK.  The calling process
 * is recorded as a worker of the rank.
 *
 * Return: 0, or -EINVAL, -EAGAIN, -ESHUTDOWN, -ERESTARTSYS, -ETIMEDOUT,
 * -ENOMEM.
 */
int dpusim_worker_claim(struct dpusim_worker *w, u32 flags, u32 timeout_ms,
			u32 *dpu, u32 *launches)
{
	struct dpusim_rank *rank = w->rank;
	struct dpusim_worker_pid *spare;
	long left;
	int ret;

	if (flags & ~DPUSIM_CLAIM_NONBLOCK ||
	    timeout_ms > DPUSIM_SYNC_MAX_TIMEOUT_MS)
		return -EINVAL;
	left = msecs_to_jiffies(timeout_ms ? timeout_ms :
				DPUSIM_SYNC_DEFAULT_TIMEOUT_MS);
	spare = kzalloc(sizeof(*spare), GFP_KERNEL_ACCOUNT);
	if (!spare)
		return -ENOMEM;
	for (;;) {
		ret = mutex_lock_interruptible(&rank->state_lock);
		if (ret)
			break;
		ret = dpusim_worker_take(w, &spare, dpu, launches);
		mutex_unlock(&rank->state_lock);
		if (ret != -EAGAIN || (flags & DPUSIM_CLAIM_NONBLOCK))
			break;
		left = wait_event_interruptible_timeout(rank->run.claim_wait,
							dpusim_claim_ready(rank),
							left);
		if (left < 0) {
			ret = left;
			break;
		}
		if (!left) {
			ret = -ETIMEDOUT;
			break;
		}
	}
	kfree(spare);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_worker_claim);

/**
 * dpusim_worker_unclaim - let go of a DPU whose claim's answer could not
 * be written
 * @w: the worker
 * @dpu: the DPU dpusim_worker_claim() gave it
 */
void dpusim_worker_unclaim(struct dpusim_worker *w, u32 dpu)
{
	struct dpusim_rank *rank = w->rank;

	mutex_lock(&rank->state_lock);
	if (w->held == dpu) {
		/* another thread of the worker may have moved a token */
		dpusim_stream_job_flush(w);
		rank->dpus[dpu].holder = NULL;
		WRITE_ONCE(w->held, -1);
		rank->run.nr_unheld++;
		/* a fault of another thread may have mapped a page already */
		dpusim_window_clear(w);
	}
	mutex_unlock(&rank->state_lock);
	wake_up_all(&rank->run.claim_wait);
}

/**
 * dpusim_worker_finish - end the run of the DPU a worker holds
 * @w: the worker
 * @dpu: the DPU it holds
 * @flags: DPUSIM_FINISH_*
 * @reason: DPUSIM_REASON_LEN bytes: with DPUSIM_FINISH_FAULT a string
 *          (empty: "fault"), else all zero
 * @modeled_cycles: the run's modeled cycles (0: not modeled); a fault's
 *          are kept too, up to the fault
 *
 * Return: 0, -EINVAL or -ERESTARTSYS.
 */
int dpusim_worker_finish(struct dpusim_worker *w, u32 dpu, u32 flags,
			 const char *reason, u64 modeled_cycles)
{
	struct dpusim_rank *rank = w->rank;
	bool fault = flags & DPUSIM_FINISH_FAULT;
	int ret;

	if (flags & ~DPUSIM_FINISH_FAULT)
		return -EINVAL;
	if (fault ? !memchr(reason, 0, DPUSIM_REASON_LEN) :
		    !!memchr_inv(reason, 0, DPUSIM_REASON_LEN))
		return -EINVAL;
	ret = mutex_lock_interruptible(&rank->state_lock);
	if (ret)
		return ret;
	if (w->held < 0 || w->held != dpu) {
		ret = -EINVAL;
	} else {
		dpusim_dpu_end(rank, dpu,
			       fault ? DPUSIM_DPU_FAULT : DPUSIM_DPU_DONE,
			       !fault ? "" : reason[0] ? reason : "fault",
			       modeled_cycles);
		/* before any transfer may name the DPU (mmap.c) */
		dpusim_window_clear(w);
	}
	mutex_unlock(&rank->state_lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_worker_finish);

