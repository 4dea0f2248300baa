// SPDX-License-Identifier: GPL-2.0
/*
 * DPU programs: the run state of a rank's DPUs (DPUSIM_IOCTL_LAUNCH,
 * DPUSIM_IOCTL_DPU_STATUS, poll() of the rank file) and the worker files
 * (DPUSIM_IOCTL_WORKER_OPEN; DPUSIM_IOCTL_WORKER_CLAIM and _FINISH on the
 * worker file) through which user-space worker processes run the programs.
 *
 * Locking.  The run state of every DPU (state, launches, reason, holder),
 * rank->nr_running, rank->nr_unheld and worker->held change under the
 * rank's xfer_lock, so that launches and transfers serialise: a transfer
 * naming a RUNNING DPU fails with EBUSY, checked under the same lock.
 * rank->worker_lock, nested inside xfer_lock, protects the list of worker
 * files, their lists of pids and the setting of DPUSIM_RANK_SHUTDOWN; the
 * release of the owner file takes only worker_lock, so it never waits for
 * a transfer.  Neither lock is taken under mmap_lock (mmap.c).
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
 * dpusim_run_init - set up a rank's run state and worker list
 * @rank: the rank, being initialised (its DPUs zeroed: IDLE)
 */
void dpusim_run_init(struct dpusim_rank *rank)
{
	init_waitqueue_head(&rank->run_idle);
	init_waitqueue_head(&rank->claim_wait);
	mutex_init(&rank->worker_lock);
	INIT_LIST_HEAD(&rank->workers);
	rank->nr_workers = 0;
	rank->nr_running = 0;
	rank->nr_unheld = 0;
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
	WRITE_ONCE(rank->nr_running, 0);
	rank->nr_unheld = 0;
	clear_bit(DPUSIM_RANK_SHUTDOWN, &rank->flags);
}

/*
 * The run of DPU @i ends: DONE, or FAULT with @reason.  Its worker (if
 * any) lets it go; poll() of the rank file wakes once none runs.
 */
static void dpusim_dpu_end(struct dpusim_rank *rank, u32 i, u32 state,
			   const char *reason)
{
	struct dpusim_dpu *dpu = &rank->dpus[i];

	lockdep_assert_held(&rank->xfer_lock);
	if (WARN_ON_ONCE(dpu->state != DPUSIM_DPU_RUNNING))
		return;
	if (dpu->holder) {
		/* its program's stream move in flight writes its memory */
		dpusim_stream_job_flush(dpu->holder);
		WRITE_ONCE(dpu->holder->held, -1);
		dpu->holder = NULL;
	} else {
		rank->nr_unheld--;
	}
	WRITE_ONCE(dpu->state, state);
	strscpy_pad(dpu->reason, reason, sizeof(dpu->reason));
	if (state == DPUSIM_DPU_FAULT) {
		atomic64_inc(&rank->stats.faults);
		trace_dpusim_fault(rank->index, i);
	}
	trace_dpusim_launch_end(rank->index, i, state == DPUSIM_DPU_FAULT,
				dpu->run_start_ns ? ktime_get_ns() - dpu->run_start_ns : 0);
	WRITE_ONCE(rank->nr_running, rank->nr_running - 1);
	if (!rank->nr_running)
		wake_up_all(&rank->run_idle);
}

/**
 * dpusim_run_check_xfer - may a transfer name these DPUs?
 * @rank: the rank, its xfer_lock held
 * @dpus: the transfer's DPUs, checked
 * @nr_dpus: how many
 *
 * Return: 0, or -EBUSY if one of them is RUNNING.
 */
int dpusim_run_check_xfer(struct dpusim_rank *rank,
			  const struct dpusim_xfer_dpu *dpus, u32 nr_dpus)
{
	u32 i;

	lockdep_assert_held(&rank->xfer_lock);
	if (!rank->nr_running)
		return 0;
	for (i = 0; i < nr_dpus; i++)
		if (rank->dpus[dpus[i].dpu].state == DPUSIM_DPU_RUNNING)
			return -EBUSY;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_run_check_xfer);

static int dpusim_launch_locked(struct dpusim_rank *rank, u32 first, u32 nr)
{
	struct dpusim_dpu *dpu;
	u32 i;

	lockdep_assert_held(&rank->xfer_lock);
	/* Worker files only go away under xfer_lock: this cannot change. */
	if (!READ_ONCE(rank->nr_workers))
		return -ESRCH;
	for (i = first; i < first + nr; i++)
		if (rank->dpus[i].state == DPUSIM_DPU_RUNNING)
			return -EBUSY;
	for (i = first; i < first + nr; i++) {
		dpu = &rank->dpus[i];
		WRITE_ONCE(dpu->state, DPUSIM_DPU_RUNNING);
		dpu->launches++;
		memset(dpu->reason, 0, sizeof(dpu->reason));
		dpu->run_start_ns = trace_dpusim_launch_end_enabled() ? ktime_get_ns() : 0;
		trace_dpusim_launch_start(rank->index, i);
	}
	WRITE_ONCE(rank->nr_running, rank->nr_running + nr);
	WRITE_ONCE(rank->nr_unheld, rank->nr_unheld + nr);
	atomic64_add(nr, &rank->stats.launches);
	return 0;
}

/**
 * dpusim_launch - DPUSIM_IOCTL_LAUNCH: set DPUs RUNNING, wake the workers
 * @rank: the rank
 * @first: first DPU
 * @nr: DPUs
 *
 * Waits for the queued asynchronous transfers first, as a synchronous
 * transfer does.
 *
 * Return: 0, or the errno of struct dpusim_launch with nothing launched.
 */
int dpusim_launch(struct dpusim_rank *rank, u32 first, u32 nr)
{
	int ret;

	if (!nr || first >= rank->nr_dpus || nr > rank->nr_dpus - first)
		return -EINVAL;
	for (;;) {
		ret = dpusim_async_wait_idle(rank, 0);
		if (ret)
			return ret;
		ret = mutex_lock_interruptible(&rank->xfer_lock);
		if (ret)
			return ret;
		/* Jobs are queued under xfer_lock: none can slip in now. */
		if (!atomic_read(&rank->async_pending))
			break;
		mutex_unlock(&rank->xfer_lock);
	}
	ret = dpusim_launch_locked(rank, first, nr);
	mutex_unlock(&rank->xfer_lock);
	if (!ret)
		wake_up_all(&rank->claim_wait);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_launch);

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
	ret = mutex_lock_interruptible(&rank->xfer_lock);
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
	mutex_unlock(&rank->xfer_lock);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_dpu_status);

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
	mutex_lock(&rank->worker_lock);
	if (rank->nr_workers >= DPUSIM_MAX_WORKERS) {
		mutex_unlock(&rank->worker_lock);
		kfree(w);
		return ERR_PTR(-E2BIG);
	}
	list_add_tail(&w->node, &rank->workers);
	WRITE_ONCE(rank->nr_workers, rank->nr_workers + 1);
	dpusim_rank_get(rank);
	mutex_unlock(&rank->worker_lock);
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

	mutex_lock(&rank->xfer_lock);
	if (w->held >= 0)
		dpusim_dpu_end(rank, w->held, DPUSIM_DPU_FAULT, "worker exited");
	mutex_lock(&rank->worker_lock);
	list_del(&w->node);
	WRITE_ONCE(rank->nr_workers, rank->nr_workers - 1);
	last = !rank->nr_workers;
	mutex_unlock(&rank->worker_lock);
	for (i = 0; last && rank->nr_unheld && i < rank->nr_dpus; i++)
		if (rank->dpus[i].state == DPUSIM_DPU_RUNNING)
			dpusim_dpu_end(rank, i, DPUSIM_DPU_FAULT,
				       "no worker left");
	mutex_unlock(&rank->xfer_lock);

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

	mutex_lock(&rank->worker_lock);
	set_bit(DPUSIM_RANK_SHUTDOWN, &rank->flags);
	list_for_each_entry(w, &rank->workers, node)
		list_for_each_entry(p, &w->pids, node)
			kill_pid(p->pid, SIGKILL, 1);
	mutex_unlock(&rank->worker_lock);
	wake_up_all(&rank->claim_wait);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_worker_shutdown);

/*
 * Record the calling process as a worker of the rank (once; entries of
 * processes gone are dropped on the way), using *@spare if a node is
 * needed.  Kernel threads are never recorded.  -ESHUTDOWN once the owner
 * file is released: the check and the record are under worker_lock, as
 * the shutdown is, so no claimer escapes the kill.
 */
static int dpusim_worker_note_pid(struct dpusim_worker *w,
				  struct dpusim_worker_pid **spare)
{
	struct pid *pid = task_tgid(current);
	struct dpusim_worker_pid *p, *n;
	bool found = false;
	int ret = 0;

	mutex_lock(&w->rank->worker_lock);
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
	mutex_unlock(&w->rank->worker_lock);
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

	lockdep_assert_held(&rank->xfer_lock);
	if (w->held >= 0)
		return -EINVAL;
	ret = dpusim_worker_note_pid(w, spare);
	if (ret)
		return ret;
	if (!rank->nr_unheld)
		return -EAGAIN;
	for (i = 0; i < rank->nr_dpus; i++)
		if (rank->dpus[i].state == DPUSIM_DPU_RUNNING &&
		    !rank->dpus[i].holder)
			break;
	if (WARN_ON_ONCE(i == rank->nr_dpus))
		return -EAGAIN;
	rank->dpus[i].holder = w;
	WRITE_ONCE(w->held, i);
	rank->nr_unheld--;
	*dpu = i;
	*launches = rank->dpus[i].launches;
	return 0;
}

static bool dpusim_claim_ready(struct dpusim_rank *rank)
{
	return READ_ONCE(rank->nr_unheld) ||
	       test_bit(DPUSIM_RANK_SHUTDOWN, &rank->flags);
}

static int dpusim_worker_claim_launches(struct dpusim_worker *w, u32 flags,
					u32 timeout_ms, u32 *dpu, u32 *launches)
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
		ret = mutex_lock_interruptible(&rank->xfer_lock);
		if (ret)
			break;
		ret = dpusim_worker_take(w, &spare, dpu, launches);
		mutex_unlock(&rank->xfer_lock);
		if (ret != -EAGAIN || (flags & DPUSIM_CLAIM_NONBLOCK))
			break;
		left = wait_event_interruptible_timeout(rank->claim_wait,
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

/**
 * dpusim_worker_claim - hold the lowest RUNNING DPU no worker holds
 * @w: the worker, holding no DPU
 * @flags: DPUSIM_CLAIM_*
 * @dpu: out, the DPU
 *
 * Waits interruptibly, at most DPUSIM_SYNC_DEFAULT_TIMEOUT_MS, unless
 * DPUSIM_CLAIM_NONBLOCK.  The calling process is recorded as a worker of
 * the rank.
 *
 * Return: 0, or -EINVAL, -EAGAIN, -ESHUTDOWN, -ERESTARTSYS, -ETIMEDOUT,
 * -ENOMEM.
 */
int dpusim_worker_claim(struct dpusim_worker *w, u32 flags, u32 *dpu)
{
	u32 launches;

	return dpusim_worker_claim_launches(w, flags, 0, dpu, &launches);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_worker_claim);

/* A claim whose answer could not be written: let the DPU go again. */
static void dpusim_worker_unclaim(struct dpusim_worker *w, u32 dpu)
{
	struct dpusim_rank *rank = w->rank;

	mutex_lock(&rank->xfer_lock);
	if (w->held == dpu) {
		/* another thread of the worker may have moved a token */
		dpusim_stream_job_flush(w);
		rank->dpus[dpu].holder = NULL;
		WRITE_ONCE(w->held, -1);
		rank->nr_unheld++;
		/* a fault of another thread may have mapped a page already */
		dpusim_window_clear(w);
	}
	mutex_unlock(&rank->xfer_lock);
	wake_up_all(&rank->claim_wait);
}

/**
 * dpusim_worker_finish - end the run of the DPU a worker holds
 * @w: the worker
 * @dpu: the DPU it holds
 * @flags: DPUSIM_FINISH_*
 * @reason: DPUSIM_REASON_LEN bytes: with DPUSIM_FINISH_FAULT a string
 *          (empty: "fault"), else all zero
 *
 * Return: 0, -EINVAL or -ERESTARTSYS.
 */
int dpusim_worker_finish(struct dpusim_worker *w, u32 dpu, u32 flags,
			 const char *reason)
{
	struct dpusim_rank *rank = w->rank;
	bool fault = flags & DPUSIM_FINISH_FAULT;
	int ret;

	if (flags & ~DPUSIM_FINISH_FAULT)
		return -EINVAL;
	if (fault ? !memchr(reason, 0, DPUSIM_REASON_LEN) :
		    !!memchr_inv(reason, 0, DPUSIM_REASON_LEN))
		return -EINVAL;
	ret = mutex_lock_interruptible(&rank->xfer_lock);
	if (ret)
		return ret;
	if (w->held < 0 || w->held != dpu) {
		ret = -EINVAL;
	} else {
		dpusim_dpu_end(rank, dpu,
			       fault ? DPUSIM_DPU_FAULT : DPUSIM_DPU_DONE,
			       !fault ? "" : reason[0] ? reason : "fault");
		/* before any transfer may name the DPU (mmap.c) */
		dpusim_window_clear(w);
	}
	mutex_unlock(&rank->xfer_lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_worker_finish);

/* ------------------------------------------------ the rank's ioctls */

int dpusim_launch_ioctl(struct dpusim_ucmd *ucmd)
{
	struct dpusim_launch *l = ucmd->cmd;

	if (l->flags)
		return -EINVAL;
	return dpusim_launch(ucmd->rank, l->first_dpu, l->nr_dpus);
}

int dpusim_dpu_status_ioctl(struct dpusim_ucmd *ucmd)
{
	struct dpusim_dpu_status *st = ucmd->cmd;
	struct dpusim_rank *rank = ucmd->rank;
	struct dpusim_dpu_state *states;
	u32 running, fault;
	int ret;

	if (st->flags)
		return -EINVAL;
	/* bounded by the rank's DPU count before the allocation */
	if (st->first_dpu >= rank->nr_dpus ||
	    st->nr_dpus > rank->nr_dpus - st->first_dpu)
		return -EINVAL;
	states = kvcalloc(st->nr_dpus, sizeof(*states), GFP_KERNEL_ACCOUNT);
	if (!states)
		return -ENOMEM;
	ret = dpusim_dpu_status(rank, st->first_dpu, st->nr_dpus, states,
				&running, &fault);
	if (ret)
		goto out;
	if (copy_to_user(u64_to_user_ptr(st->states), states,
			 array_size(st->nr_dpus, sizeof(*states)))) {
		ret = -EFAULT;
		goto out;
	}
	st->size = sizeof(*st);
	st->nr_running = running;
	st->nr_fault = fault;
	ret = dpusim_ucmd_respond(ucmd, sizeof(*st));
out:
	kvfree(states);
	return ret;
}

/* ------------------------------------------------ the worker file */

static int dpusim_worker_claim_ioctl(struct dpusim_ucmd *ucmd)
{
	struct dpusim_worker_claim *c = ucmd->cmd;
	struct dpusim_rank *rank = ucmd->rank;
	u32 dpu, launches;
	int ret;

	if (c->__reserved)
		return -EINVAL;
	ret = dpusim_worker_claim_launches(ucmd->worker, c->flags,
					   c->timeout_ms, &dpu, &launches);
	if (ret)
		return ret;
	*c = (struct dpusim_worker_claim) {
		.size = sizeof(*c),
		.flags = c->flags,
		.dpu = dpu,
		.nr_dpus = rank->nr_dpus,
		.wram_size = rank->wram_size,
		.launches = launches,
		.mram_size = rank->mram_size,
		.timeout_ms = c->timeout_ms,
	};
	ret = dpusim_ucmd_respond(ucmd, sizeof(*c));
	if (ret)
		dpusim_worker_unclaim(ucmd->worker, dpu);
	else
		dpusim_window_fill(ucmd->worker, dpu);
	return ret;
}

static int dpusim_worker_finish_ioctl(struct dpusim_ucmd *ucmd)
{
	struct dpusim_worker_finish *f = ucmd->cmd;

	if (f->__reserved)
		return -EINVAL;
	return dpusim_worker_finish(ucmd->worker, f->dpu, f->flags, f->reason);
}

static int dpusim_worker_stream_open_ioctl(struct dpusim_ucmd *ucmd)
{
	return dpusim_stream_cmd_respond(ucmd, DPUSIM_CMD_STREAM_OPEN);
}

static int dpusim_worker_stream_close_ioctl(struct dpusim_ucmd *ucmd)
{
	return dpusim_stream_cmd_respond(ucmd, DPUSIM_CMD_STREAM_CLOSE);
}

static int dpusim_worker_stream_seek_ioctl(struct dpusim_ucmd *ucmd)
{
	return dpusim_stream_cmd_respond(ucmd, DPUSIM_CMD_STREAM_SEEK);
}

union dpusim_worker_ucmd_buffer {
	struct dpusim_worker_claim claim;
	struct dpusim_worker_finish finish;
	struct dpusim_stream_cmd stream;
	struct dpusim_worker_stream_move move;
	struct dpusim_worker_stream_wait wait;
};

/* A caller passing the whole struct is never refused for its size. */
static_assert(sizeof(union dpusim_worker_ucmd_buffer) <= DPUSIM_UCMD_MAX_SIZE);

#define WORKER_IOCTL_OP(_name, _fn, _struct, _last)			\
	[DPUSIM_CMD_WORKER_##_name - DPUSIM_WORKER_CMD_BASE] = {	\
		.size = sizeof(_struct) +				\
			BUILD_BUG_ON_ZERO(sizeof(union dpusim_worker_ucmd_buffer) < \
					  sizeof(_struct)),		\
		.min_size = offsetofend(_struct, _last),		\
		.ioctl_num = DPUSIM_IOCTL_WORKER_##_name,		\
		.execute = _fn,						\
	}

static const struct dpusim_ioctl_op dpusim_worker_ops[] = {
	WORKER_IOCTL_OP(CLAIM, dpusim_worker_claim_ioctl,
			struct dpusim_worker_claim, mram_size),
	WORKER_IOCTL_OP(FINISH, dpusim_worker_finish_ioctl,
			struct dpusim_worker_finish, reason),
	WORKER_IOCTL_OP(STREAM_OPEN, dpusim_worker_stream_open_ioctl,
			struct dpusim_stream_cmd, prev),
	WORKER_IOCTL_OP(STREAM_CLOSE, dpusim_worker_stream_close_ioctl,
			struct dpusim_stream_cmd, prev),
	WORKER_IOCTL_OP(STREAM_SEEK, dpusim_worker_stream_seek_ioctl,
			struct dpusim_stream_cmd, prev),
	WORKER_IOCTL_OP(STREAM_MOVE, dpusim_worker_stream_move_ioctl,
			struct dpusim_worker_stream_move, blocks),
	WORKER_IOCTL_OP(STREAM_WAIT, dpusim_worker_stream_wait_ioctl,
			struct dpusim_worker_stream_wait, flags),
};

static long dpusim_worker_ioctl(struct file *filp, unsigned int cmd,
				unsigned long arg)
{
	struct dpusim_worker *w = filp->private_data;
	struct dpusim_ucmd ucmd = {
		.rank = w->rank,
		.worker = w,
		.ubuffer = (void __user *)arg,
	};
	union dpusim_worker_ucmd_buffer buf;

	return dpusim_ucmd_dispatch(&ucmd, dpusim_worker_ops,
				    ARRAY_SIZE(dpusim_worker_ops),
				    DPUSIM_WORKER_CMD_BASE, cmd, &buf);
}

static int dpusim_worker_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct dpusim_worker *w = filp->private_data;

	return dpusim_mmap(w->rank, w, vma);
}

static int dpusim_worker_release(struct inode *inode, struct file *filp)
{
	dpusim_worker_destroy(filp->private_data);
	return 0;
}

static const struct file_operations dpusim_worker_fops = {
	.owner = THIS_MODULE,
	.release = dpusim_worker_release,
	.unlocked_ioctl = dpusim_worker_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = dpusim_worker_mmap,
};

int dpusim_worker_open_ioctl(struct dpusim_ucmd *ucmd)
{
	struct dpusim_worker_open *wo = ucmd->cmd;
	struct dpusim_worker *w;
	struct file *file;
	int fd, ret;

	if (wo->flags || wo->__reserved)
		return -EINVAL;
	w = dpusim_worker_create(ucmd->rank);
	if (IS_ERR(w))
		return PTR_ERR(w);
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		dpusim_worker_destroy(w);
		return fd;
	}
	/* anon_inode_getfile() takes the module reference of the fops */
	file = anon_inode_getfile("[dpusim-worker]", &dpusim_worker_fops, w,
				  O_RDWR | O_CLOEXEC);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		dpusim_worker_destroy(w);
		return PTR_ERR(file);
	}
	wo->size = sizeof(*wo);
	wo->fd = fd;
	ret = dpusim_ucmd_respond(ucmd, sizeof(*wo));
	if (ret) {
		put_unused_fd(fd);
		fput(file);	/* releases the worker */
		return ret;
	}
	fd_install(fd, file);
	return 0;
}

/**
 * dpusim_rank_poll - poll() of the rank file
 * @filp: the rank file
 * @wait: the poll table
 *
 * Return: EPOLLIN | EPOLLRDNORM when no DPU of the rank is RUNNING.
 */
__poll_t dpusim_rank_poll(struct file *filp, struct poll_table_struct *wait)
{
	struct dpusim_rank *rank = filp->private_data;

	poll_wait(filp, &rank->run_idle, wait);
	return READ_ONCE(rank->nr_running) ? 0 : EPOLLIN | EPOLLRDNORM;
}
