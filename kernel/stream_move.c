// SPDX-License-Identifier: GPL-2.0
/*
 * Stream moves of DPU programs: the worker file's
 * DPUSIM_IOCTL_WORKER_STREAM_MOVE and _WAIT.  A DPU program is the core:
 * it moves a token between a stream's memory and its own WRAM or MRAM, a
 * copy from kernel pages to kernel pages (the worker's window shows the
 * DPU's pages as VM_PFNMAP entries, which cannot be pinned, and nothing
 * needs to be).
 *
 * A move is checked, the pages it writes allocated and the stream's
 * cursor moved under the rank's xfer_lock, as for a transfer; then the
 * copy runs at once, or, for an asynchronous move (a preload), on the
 * worker's work item while the program computes.  A worker file has at
 * most one move in flight (struct dpusim_stream_job): the next move waits
 * for it, and so does the end of the DPU's run (dpusim_stream_job_flush()
 * from dpusim_dpu_end() and the unclaim), so a job only ever writes the
 * memory of a DPU that is RUNNING and held by its worker.  Such a memory
 * loses no page (mmap.c), a stream loses none while the rank is owned,
 * and the job takes no lock: flushing it under xfer_lock cannot deadlock.
 */
#include <kunit/visibility.h>
#include <linux/overflow.h>

#include "dpusim.h"

static void dpusim_stream_job_copy(struct dpusim_stream_job *job)
{
	u64 soff = job->soff;
	u32 i;

	for (i = 0; i < job->nr; i++) {
		if (job->down)
			dpusim_mem_copy_mem(job->seg[i].mem, job->seg[i].off,
					    job->smem, soff, job->seg[i].len);
		else
			dpusim_mem_copy_mem(job->smem, soff, job->seg[i].mem,
					    job->seg[i].off, job->seg[i].len);
		soff += job->seg[i].len;
	}
}

static void dpusim_stream_job_work(struct work_struct *work)
{
	struct dpusim_stream_job *job =
		container_of(work, struct dpusim_stream_job, work);

	dpusim_stream_job_copy(job);
	smp_store_release(&job->pending, false);	/* after the copy */
}

/**
 * dpusim_stream_job_init - a new worker file has no move in flight
 * @w: the worker
 */
void dpusim_stream_job_init(struct dpusim_worker *w)
{
	INIT_WORK(&w->move.work, dpusim_stream_job_work);
	w->move.pending = false;
}

/**
 * dpusim_stream_job_flush - wait for the worker's move in flight
 * @w: the worker
 *
 * May be called under the rank's xfer_lock (the job takes no lock).
 */
void dpusim_stream_job_flush(struct dpusim_worker *w)
{
	flush_work(&w->move.work);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_stream_job_flush);

/*
 * The DPU's side of a move: each block inside the WRAM or the MRAM of
 * @dpu.  Its total length goes to *@len.
 */
static int dpusim_stream_job_segs(struct dpusim_rank *rank, u32 dpu,
				  const struct dpusim_worker_stream_move *m,
				  struct dpusim_stream_job *job, u64 *len)
{
	const struct dpusim_window_block *b;
	struct dpusim_mem *mem;
	u64 off, end;
	u32 i;

	*len = 0;
	for (i = 0; i < m->nr_blocks; i++) {
		b = &m->blocks[i];
		off = b->offset;
		if (off >= DPUSIM_WINDOW_MRAM) {
			mem = &rank->dpus[dpu].mem[DPUSIM_MRAM];
			off -= DPUSIM_WINDOW_MRAM;
		} else {
			mem = &rank->dpus[dpu].mem[DPUSIM_WRAM];
		}
		if (!b->length || check_add_overflow(off, b->length, &end) ||
		    end > mem->size || check_add_overflow(*len, b->length, len))
			return -EINVAL;
		job->seg[i].mem = mem;
		job->seg[i].off = off;
		job->seg[i].len = b->length;
	}
	job->nr = m->nr_blocks;
	return 0;
}

/* Allocate what the move writes; nothing is left over on an error. */
static int dpusim_stream_job_populate(struct dpusim_rank *rank,
				      struct dpusim_stream_job *job, u64 len)
{
	struct dpusim_mem_undo undo = {};
	unsigned long missing;
	int ret;
	u32 i;

	if (job->down) {
		/* a running DPU's memory: pages allocated stay (mram.c) */
		for (i = 0; i < job->nr; i++) {
			ret = dpusim_mem_fill(job->seg[i].mem, job->seg[i].off,
					      job->seg[i].len);
			if (ret)
				return ret;
		}
		return 0;
	}
	missing = dpusim_mem_missing(job->smem, job->soff, len);
	if (!missing)
		return 0;
	ret = dpusim_budget_charge(rank->budget, missing);
	if (ret)
		return ret;
	undo.cap = missing;
	undo.entries = kvmalloc_array(missing, sizeof(*undo.entries),
				      GFP_KERNEL_ACCOUNT);
	if (!undo.entries) {
		dpusim_budget_uncharge(rank->budget, missing);
		return -ENOMEM;
	}
	ret = dpusim_mem_populate(job->smem, job->soff, len, &undo);
	if (ret) {
		missing -= dpusim_mem_undo(&undo);
		dpusim_budget_uncharge(rank->budget, missing);
	} else if (undo.nr < missing) {
		/* a mapping's fault inserted (and charged) some of them */
		dpusim_budget_uncharge(rank->budget, missing - undo.nr);
	}
	kvfree(undo.entries);
	return ret;
}

/**
 * dpusim_worker_stream_move - a DPU program moves a token
 * @w: the worker file holding the DPU
 * @m: the move, DPUSIM_IOCTL_WORKER_STREAM_MOVE
 *
 * Return: 0 (done, or queued with DPUSIM_STREAM_MOVE_ASYNC), or the errno
 * of struct dpusim_worker_stream_move with nothing moved.
 */
int dpusim_worker_stream_move(struct dpusim_worker *w,
			      const struct dpusim_worker_stream_move *m)
{
	struct dpusim_rank *rank = w->rank;
	struct dpusim_stream_job *job = &w->move;
	struct dpusim_stream *s;
	struct dpusim_xfer x;
	u64 len;
	s32 dpu;
	int ret;

	if (m->flags & ~(DPUSIM_STREAM_MOVE_DOWN | DPUSIM_STREAM_MOVE_ASYNC) ||
	    !m->nr_blocks || m->nr_blocks > DPUSIM_STREAM_MOVE_MAX_BLOCKS)
		return -EINVAL;
	for (;;) {
		/* the move in flight first: its job is reused */
		dpusim_stream_job_flush(w);
		ret = mutex_lock_interruptible(&rank->xfer_lock);
		if (ret)
			return ret;
		if (!smp_load_acquire(&job->pending))
			break;
		mutex_unlock(&rank->xfer_lock);
	}
	dpu = w->held;
	if (dpu < 0) {
		ret = -EPERM;
		goto out;
	}
	ret = dpusim_stream_job_segs(rank, dpu, m, job, &len);
	if (ret)
		goto out;
	s = xa_load(&rank->streams, m->stream);
	if (!s) {
		ret = -ENOENT;
		goto out;
	}
	x = (struct dpusim_xfer) {
		.flags = m->flags & DPUSIM_STREAM_MOVE_DOWN ?
			 DPUSIM_XFER_FROM_DPU : 0,
		.offset = m->offset,
		.length = len,
		.stream = m->stream,
	};
	ret = dpusim_stream_move_check(rank, &x, dpu);
	if (ret)
		goto out;
	job->down = m->flags & DPUSIM_STREAM_MOVE_DOWN;
	job->smem = &s->mem;
	job->soff = m->offset;
	ret = dpusim_stream_job_populate(rank, job, len);
	if (ret)
		goto out;
	dpusim_stream_move_done(rank, &x);
	if (m->flags & DPUSIM_STREAM_MOVE_ASYNC) {
		WRITE_ONCE(job->pending, true);
		queue_work(system_unbound_wq, &job->work);
	} else {
		dpusim_stream_job_copy(job);
	}
out:
	mutex_unlock(&rank->xfer_lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_worker_stream_move);

int dpusim_worker_stream_move_ioctl(struct dpusim_ucmd *ucmd)
{
	return dpusim_worker_stream_move(ucmd->worker, ucmd->cmd);
}

int dpusim_worker_stream_wait_ioctl(struct dpusim_ucmd *ucmd)
{
	struct dpusim_worker_stream_wait *wt = ucmd->cmd;

	if (wt->flags)
		return -EINVAL;
	dpusim_stream_job_flush(ucmd->worker);
	return 0;
}
