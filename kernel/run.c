// SPDX-License-Identifier: GPL-2.0
/*
 * The run state of a rank's DPUs: each DPU IDLE, RUNNING, DONE or FAULT,
 * its launch count and fault reason (DPUSIM_IOCTL_LAUNCH,
 * DPUSIM_IOCTL_DPU_STATUS, poll() of the rank file), and the check that
 * keeps transfers off RUNNING DPUs.  The worker processes that run the
 * programs end each run (worker.c).
 *
 * Locking (the order: dpusim.h).  The run state of every DPU (state,
 * launches, reason, holder), run.nr_running and run.nr_unheld change under
 * the rank's state_lock, so that launches and transfers serialise: a
 * transfer naming a RUNNING DPU fails with EBUSY, checked under the same
 * lock.
 */
#include <kunit/visibility.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "dpusim.h"
#include "trace.h"

/**
 * dpusim_run_init - set up a rank's run state and worker list
 * @rank: the rank, being initialised (its DPUs zeroed: IDLE)
 */
void dpusim_run_init(struct dpusim_rank *rank)
{
	init_waitqueue_head(&rank->run.idle);
	init_waitqueue_head(&rank->run.claim_wait);
	mutex_init(&rank->run.worker_lock);
	INIT_LIST_HEAD(&rank->run.workers);
	rank->run.nr_workers = 0;
	rank->run.nr_running = 0;
	rank->run.nr_unheld = 0;
}

/**
 * dpusim_run_reset - every DPU IDLE again, the rank no longer shut down
 * @rank: the rank, with no owner file, no queued job and no worker file
 *        left (the ownership's last reference)
 */
void dpusim_run_reset(struct dpusim_rank *rank)
{
	struct dpusim_dpu *dpu;
	u32 i;

	for (i = 0; i < rank->nr_dpus; i++) {
		dpu = &rank->dpus[i];
		WARN_ON_ONCE(dpu->holder);
		WRITE_ONCE(dpu->state, DPUSIM_DPU_IDLE);
		dpu->launches = 0;
		dpu->holder = NULL;
		memset(dpu->reason, 0, sizeof(dpu->reason));
	}
	WRITE_ONCE(rank->run.nr_running, 0);
	rank->run.nr_unheld = 0;
	clear_bit(DPUSIM_RANK_SHUTDOWN, &rank->flags);
}

/**
 * dpusim_dpu_end - the run of a DPU ends
 * @rank: the rank, its state_lock held
 * @i: the DPU, RUNNING
 * @state: DPUSIM_DPU_DONE or DPUSIM_DPU_FAULT
 * @reason: with a fault, what happened
 * @modeled_cycles: the run's modeled cycles, 0 if not modeled
 *
 * Its worker (if any) lets it go; poll() of the rank file wakes once none
 * runs.
 */
void dpusim_dpu_end(struct dpusim_rank *rank, u32 i, u32 state,
		    const char *reason, u64 modeled_cycles)
{
	struct dpusim_dpu *dpu = &rank->dpus[i];

	lockdep_assert_held(&rank->state_lock);
	if (WARN_ON_ONCE(dpu->state != DPUSIM_DPU_RUNNING))
		return;
	if (dpu->holder) {
		/* its program's stream move in flight writes its memory */
		dpusim_stream_job_flush(dpu->holder);
		WRITE_ONCE(dpu->holder->held, -1);
		dpu->holder = NULL;
	} else {
		rank->run.nr_unheld--;
	}
	WRITE_ONCE(dpu->state, state);
	strscpy_pad(dpu->reason, reason, sizeof(dpu->reason));
	WRITE_ONCE(dpu->modeled_cycles, modeled_cycles);
	if (state == DPUSIM_DPU_FAULT) {
		atomic64_inc(&rank->stats.faults);
		trace_dpusim_fault(rank->index, i);
	}
	trace_dpusim_launch_end(rank->index, i, state == DPUSIM_DPU_FAULT,
				dpu->run_start_ns ? ktime_get_ns() - dpu->run_start_ns : 0,
				modeled_cycles);
	WRITE_ONCE(rank->run.nr_running, rank->run.nr_running - 1);
	if (!rank->run.nr_running)
		wake_up_all(&rank->run.idle);
}

/**
 * dpusim_run_check_xfer - may a transfer name these DPUs?
 * @rank: the rank, its state_lock held
 * @dpus: the transfer's DPUs, checked
 * @nr_dpus: how many
 *
 * Return: 0, or -EBUSY if one of them is RUNNING.
 */
int dpusim_run_check_xfer(struct dpusim_rank *rank,
			  const struct dpusim_xfer_dpu *dpus, u32 nr_dpus)
{
	u32 i;

	lockdep_assert_held(&rank->state_lock);
	if (!rank->run.nr_running)
		return 0;
	for (i = 0; i < nr_dpus; i++)
		if (rank->dpus[dpus[i].dpu].state == DPUSIM_DPU_RUNNING)
			return -EBUSY;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_run_check_xfer);

/**
 * dpusim_launch_locked - set DPUs RUNNING
 * @rank: the rank, its state_lock held, no asynchronous transfer queued
 * @first: first DPU
 * @nr: DPUs, checked against the rank
 *
 * Return: 0, -ESRCH (no worker file) or -EBUSY (one of them RUNNING),
 * with nothing launched.
 */
int dpusim_launch_locked(struct dpusim_rank *rank, u32 first, u32 nr)
{
	struct dpusim_dpu *dpu;
	u32 i;

	lockdep_assert_held(&rank->state_lock);
	/* Worker files only go away under state_lock: this cannot change. */
	if (!READ_ONCE(rank->run.nr_workers))
		return -ESRCH;
	for (i = first; i < first + nr; i++)
		if (rank->dpus[i].state == DPUSIM_DPU_RUNNING)
			return -EBUSY;
	for (i = first; i < first + nr; i++) {
		dpu = &rank->dpus[i];
		WRITE_ONCE(dpu->state, DPUSIM_DPU_RUNNING);
		dpu->launches++;
		memset(dpu->reason, 0, sizeof(dpu->reason));
		WRITE_ONCE(dpu->modeled_cycles, 0);
		dpu->run_start_ns = trace_dpusim_launch_end_enabled() ? ktime_get_ns() : 0;
		trace_dpusim_launch_start(rank->index, i);
	}
	WRITE_ONCE(rank->run.nr_running, rank->run.nr_running + nr);
	WRITE_ONCE(rank->run.nr_unheld, rank->run.nr_unheld + nr);
	atomic64_add(nr, &rank->stats.launches);
	return 0;
}

/**
 * dpusim_dpu_status - read the run states of DPUs @first .. @first + @nr - 1
 * @rank: the rank
 * @first: first DPU
 * @nr: DPUs, may be 0
 * @states: out, @nr entries
 * @nr_running: out, RUNNING DPUs of the range
 * @nr_fault: out, FAULT DPUs of the range
 *
 * Return: 0, -EINVAL (a DPU past the rank) or -ERESTARTSYS.
 */
int dpusim_dpu_status(struct dpusim_rank *rank, u32 first, u32 nr,
		      struct dpusim_dpu_state *states, u32 *nr_running,
		      u32 *nr_fault)
{
	struct dpusim_dpu *dpu;
	u32 i;
	int ret;

	if (first >= rank->nr_dpus || nr > rank->nr_dpus - first)
		return -EINVAL;
	ret = mutex_lock_interruptible(&rank->state_lock);
	if (ret)
		return ret;
	*nr_running = 0;
	*nr_fault = 0;
	for (i = 0; i < nr; i++) {
		dpu = &rank->dpus[first + i];
		states[i].state = dpu->state;
		states[i].launches = dpu->launches;
		memcpy(states[i].reason, dpu->reason, sizeof(states[i].reason));
		*nr_running += dpu->state == DPUSIM_DPU_RUNNING;
		*nr_fault += dpu->state == DPUSIM_DPU_FAULT;
	}
	mutex_unlock(&rank->state_lock);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_dpu_status);
