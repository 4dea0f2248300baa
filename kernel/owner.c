// SPDX-License-Identifier: GPL-2.0
/*
 * A rank's ownership.  A rank is owned by one open file at a time (UPMEM:
 * one process per rank); a second open() fails with -EBUSY.  The
 * ownership is a kref held by the open file, by each queued asynchronous
 * transfer and by each worker file: closing the file never waits; the
 * last reference frees the rank's memory, resets its run state and ends
 * the ownership.  An open() that finds the previous owner closed but its
 * transfers still running waits for them (interruptibly, bounded).
 */
#include <kunit/visibility.h>
#include <linux/pid.h>
#include <linux/sched.h>

#include "dpusim.h"

/**
 * dpusim_rank_free_memory - free every DPU's memory: it reads as zeros
 * @rank: the rank, with no transfer running
 */
void dpusim_rank_free_memory(struct dpusim_rank *rank)
{
	u32 i;
	int k;

	for (i = 0; i < rank->nr_dpus; i++)
		for (k = 0; k < DPUSIM_NR_MEMS; k++)
			dpusim_mem_free(&rank->dpus[i].mem[k]);
	dpusim_stream_free_all(rank);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_rank_free_memory);

/* 0, -EBUSY (owned), or -EAGAIN (closed, its transfers still running) */
static int dpusim_rank_try_claim(struct dpusim_rank *rank)
{
	int ret = 0;

	mutex_lock(&rank->owner.lock);
	if (test_bit(DPUSIM_RANK_OWNED, &rank->flags)) {
		ret = test_bit(DPUSIM_RANK_CLOSED, &rank->flags) ? -EAGAIN :
								    -EBUSY;
	} else {
		kref_init(&rank->owner.ref);
		clear_bit(DPUSIM_RANK_CLOSED, &rank->flags);
		set_bit(DPUSIM_RANK_OWNED, &rank->flags);
		rank->owner.pid = get_pid(task_tgid(current));
	}
	mutex_unlock(&rank->owner.lock);
	return ret;
}

/**
 * dpusim_rank_claim - make the current process the rank's owner
 * @rank: the rank
 *
 * If the previous owner closed the rank and its queued transfers still
 * run, waits for them: interruptibly, at most
 * DPUSIM_SYNC_DEFAULT_TIMEOUT_MS.
 *
 * Return: 0, -EBUSY if another open file owns the rank (or the wait timed
 * out), -ERESTARTSYS on a signal.
 */
int dpusim_rank_claim(struct dpusim_rank *rank)
{
	unsigned long timeout = msecs_to_jiffies(DPUSIM_SYNC_DEFAULT_TIMEOUT_MS);
	unsigned long *flags = &rank->flags;
	long left;
	int ret;

	for (;;) {
		ret = dpusim_rank_try_claim(rank);
		if (ret != -EAGAIN)
			return ret;
		left = wait_event_interruptible_timeout(rank->owner.idle,
							!test_bit(DPUSIM_RANK_OWNED,
								  flags),
							timeout);
		if (left < 0)
			return left;
		if (!left)
			return -EBUSY;
	}
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_rank_claim);

/**
 * dpusim_rank_touch_owner - the calling process is the rank's user now
 * @rank: the rank, owned by the caller's open file
 *
 * The file may outlive its opener (fork, SCM_RIGHTS): owner_pid shows the
 * process that made the latest call.
 */
void dpusim_rank_touch_owner(struct dpusim_rank *rank)
{
	struct pid *pid = task_tgid(current);

	if (READ_ONCE(rank->owner.pid) == pid)
		return;
	mutex_lock(&rank->owner.lock);
	if (rank->owner.pid && rank->owner.pid != pid) {
		put_pid(rank->owner.pid);
		WRITE_ONCE(rank->owner.pid, get_pid(pid));
	}
	mutex_unlock(&rank->owner.lock);
}

/* The last reference: free the memory, end the ownership. */
static void dpusim_rank_teardown(struct kref *kref)
{
	struct dpusim_rank *rank = container_of(kref, struct dpusim_rank,
						owner.ref);

	dpusim_rank_free_memory(rank);
	dpusim_run_reset(rank);
	mutex_lock(&rank->owner.lock);
	put_pid(rank->owner.pid);
	rank->owner.pid = NULL;
	clear_bit(DPUSIM_RANK_CLOSED, &rank->flags);
	clear_bit(DPUSIM_RANK_OWNED, &rank->flags);
	mutex_unlock(&rank->owner.lock);
	wake_up_all(&rank->owner.idle);
}

/* A queued job's or a worker file's reference on the ownership. */
void dpusim_rank_get(struct dpusim_rank *rank)
{
	kref_get(&rank->owner.ref);
}

void dpusim_rank_put(struct dpusim_rank *rank)
{
	kref_put(&rank->owner.ref, dpusim_rank_teardown);
}

