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
 * cursor moved under the rank's state_lock, as for a transfer; then the
 * copy runs at once, or, for an asynchronous move (a preload), on the
 * worker's copy thread while the program computes.  A worker file has at
 * most one move in flight (struct dpusim_stream_job): the next move waits
 * for it, and so does the end of the DPU's run (dpusim_stream_job_flush()
 * from dpusim_dpu_end() and the unclaim), so a job only ever writes the
 * memory of a DPU that is RUNNING and held by its worker.  Such a memory
 * loses no page (mmap.c), a stream loses none while the rank is owned,
 * and the job takes no lock: flushing it under state_lock cannot deadlock.
 */
#include <linux/kthread.h>
#include <linux/overflow.h>
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/wait_bit.h>

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

/*
 * How long the copy thread and a waiter poll before they sleep: waking a
 * thread on another CPU can cost more than a token's copy, so a program
 * that moves tokens back to back finds the thread still polling, as a DMA
 * engine waits for its next descriptor.
 */
#define DPUSIM_STREAM_POLL_NS	(200 * NSEC_PER_USEC)

static int dpusim_worker_stream_move_locked(struct dpusim_worker *w,
					    struct dpusim_worker_stream_move *m,
					    struct dpusim_ucmd *ucmd);

/*
 * Run the queued move (the copy thread's): the copy, then @pending
 * cleared and a waiter of dpusim_stream_job_flush() woken.  wake_up_var()
 * looks at the wait queue without its lock: the full barrier orders the
 * store of @pending before that look (store_release_wake_up()).  Without
 * it the look may pass the store (a store buffer), find the queue empty
 * while the waiter, queued meanwhile, still reads @pending true, and the
 * waiter sleeps for ever: uninterruptibly, under the rank's state_lock
 * (FINISH, the release of the worker file).
 */
static void dpusim_stream_job_run(struct dpusim_stream_job *job)
{
	dpusim_stream_job_copy(job);
	/* release: after the copy */
	smp_store_release(&job->pending, false);
	/* the store before the wait queue's lockless look */
	smp_mb();
	wake_up_var(&job->pending);
}

/* A move written to the ring and not taken yet */
static bool dpusim_stream_ring_ready(struct dpusim_stream_job *job)
{
	struct dpusim_move_ring *r = READ_ONCE(job->ring);

	return r && READ_ONCE(r->submitted) != job->ring_seen;
}

/* Work for the copy thread (@thread), or the move in flight done. */
static bool dpusim_stream_job_ready(struct dpusim_stream_job *job, bool thread)
{
	/* acquire: the job's fields, or the copy, as the releaser left them */
	bool pending = smp_load_acquire(&job->pending);

	return thread ? pending || dpusim_stream_ring_ready(job) : !pending;
}

/*
 * Poll, at most DPUSIM_STREAM_POLL_NS (dpusim_poll()): the copy thread
 * (@thread) for work (a queued move or one in the ring), a waiter for the
 * end of the move in flight.
 */
static bool dpusim_stream_job_poll(struct dpusim_stream_job *job, bool thread)
{
	return dpusim_poll(dpusim_stream_job_ready(job, thread),
			   DPUSIM_STREAM_POLL_NS,
			   thread && kthread_should_stop());
}

/* Tell the ring's program that the thread sleeps (or not). */
static void dpusim_stream_ring_flags(struct dpusim_stream_job *job, u32 flags)
{
	struct dpusim_move_ring *r = READ_ONCE(job->ring);

	if (r)
		WRITE_ONCE(r->flags, flags);
}

/*
 * Take the rank's state_lock for a move of the ring, no queued move left
 * (they run first).  The thread must not sleep on the lock: its holder
 * may be waiting in dpusim_stream_job_flush() (FINISH, or the worker
 * file's release, right after an asynchronous
 * DPUSIM_IOCTL_WORKER_STREAM_MOVE) for a move queued meanwhile, which only
 * this thread copies; asleep on the lock, it would never copy it and
 * both would wait for ever (the mutex lets the flusher take it from
 * under the waiter it woke).  So it tries the lock and runs what gets
 * queued, polling a while, then sleeping a tick at a time (or till a
 * move is queued: the submitter wakes it).
 */
static void dpusim_stream_ring_lock(struct dpusim_worker *w)
{
	struct dpusim_stream_job *job = &w->move;
	struct mutex *lock = &w->rank->state_lock;
	u64 end = local_clock() + DPUSIM_STREAM_POLL_NS;

	for (;;) {
		/* acquire: a job queued meanwhile, its fields */
		if (smp_load_acquire(&job->pending))
			dpusim_stream_job_run(job);
		if (mutex_trylock(lock)) {
			/* acquire: none can be queued while we hold the lock */
			if (!smp_load_acquire(&job->pending))
				return;
			mutex_unlock(lock);
			continue;
		}
		if (!need_resched() && single_task_running() &&
		    local_clock() < end)
			continue;
		set_current_state(TASK_INTERRUPTIBLE);
		/* acquire: pairs with the submitter's release */
		if (!smp_load_acquire(&job->pending))
			schedule_timeout(1);
		__set_current_state(TASK_RUNNING);
	}
}

/*
 * Claim move @seq of the ring: false if the program claimed it first, to
 * carry it out itself.  The page is the program's and @taken may hold
 * anything: one attempt, and a move whose claim fails is the program's.
 */
static bool dpusim_stream_ring_claim(struct dpusim_move_ring *r, u32 seq)
{
	u32 old = READ_ONCE(r->taken);

	return old != seq && cmpxchg(&r->taken, old, seq) == old;
}

/*
 * Carry out the move the ring holds, as the ioctl would (synchronously),
 * and answer in the ring, unless the program claimed it.  Only this
 * thread runs queued moves, so one it finds queued (by the ioctl,
 * meanwhile) runs first.
 */
static void dpusim_stream_ring_run(struct dpusim_worker *w)
{
	struct dpusim_stream_job *job = &w->move;
	struct dpusim_move_ring *r = job->ring;
	struct dpusim_worker_stream_move m;
	u32 seq, dpu;
	int ret;

	/* acquire: the move was written before its number */
	seq = smp_load_acquire(&r->submitted);
	job->ring_seen = seq;
	/* full barrier (cmpxchg): the claim before the snapshot */
	if (!dpusim_stream_ring_claim(r, seq))
		return;
	dpu = READ_ONCE(r->dpu);
	memcpy(&m, &r->move, sizeof(m));	/* a snapshot, checked as such */
	m.flags &= ~DPUSIM_STREAM_MOVE_ASYNC;
	dpusim_stream_ring_lock(w);
	/* a move left over from the run of another DPU does not happen */
	ret = dpu == w->held ? dpusim_worker_stream_move_locked(w, &m, NULL) :
			       -EPERM;
	mutex_unlock(&w->rank->state_lock);
	WRITE_ONCE(r->result, ret);
	WRITE_ONCE(r->next, ret ? 0 : m.next);
	/* release: the answer before its number */
	smp_store_release(&r->done, seq);
}

/*
 * The worker's copy thread: runs the queued moves and those of the move
 * ring, one at a time.
 */
static int dpusim_stream_job_thread(void *data)
{
	struct dpusim_worker *w = data;
	struct dpusim_stream_job *job = &w->move;
	struct dpusim_move_ring *r;

	while (!kthread_should_stop()) {
		if (!dpusim_stream_job_poll(job, true)) {
			r = READ_ONCE(job->ring);
			if (r)
				WRITE_ONCE(r->flags, DPUSIM_MOVE_RING_NEED_WAKEUP);
			/* the flag before the last look; pairs with the program's */
			smp_mb();
			set_current_state(TASK_INTERRUPTIBLE);
			if (kthread_should_stop()) {
				__set_current_state(TASK_RUNNING);
				return 0;
			}
			/*
			 * acquire: pairs with the submitter's release.  A ring
			 * mapped since the look at @ring is not flagged: no
			 * sleep then (the mmap's wake pairs with this look).
			 */
			if (!smp_load_acquire(&job->pending) &&
			    !dpusim_stream_ring_ready(job) &&
			    READ_ONCE(job->ring) == r)
				schedule();
			__set_current_state(TASK_RUNNING);
			dpusim_stream_ring_flags(job, 0);
			continue;
		}
		/* acquire: the queued job's fields */
		if (smp_load_acquire(&job->pending))
			dpusim_stream_job_run(job);
		else
			dpusim_stream_ring_run(w);
	}
	return 0;
}

/* Wake the copy thread, if it sleeps (while it polls, it sees the work). */
static void dpusim_stream_job_wake(struct dpusim_stream_job *job)
{
	wake_up_process(job->thread);
}

/**
 * dpusim_stream_job_init - a new worker file has no move in flight
 * @w: the worker
 */
void dpusim_stream_job_init(struct dpusim_worker *w)
{
	memset(&w->move, 0, sizeof(w->move));
	mutex_init(&w->move.start_lock);
}

/**
 * dpusim_stream_job_exit - the worker file goes: its copy thread stops
 * @w: the worker, with no move in flight
 */
void dpusim_stream_job_exit(struct dpusim_worker *w)
{
	if (w->move.thread)
		kthread_stop(w->move.thread);
	if (w->move.ring_page)
		put_page(w->move.ring_page);
	mutex_destroy(&w->move.start_lock);
}

/* The copy thread, started at the first asynchronous move or ring. */
static int dpusim_stream_job_start(struct dpusim_worker *w)
{
	struct task_struct *t;
	int ret = 0;

	mutex_lock(&w->move.start_lock);
	if (!w->move.thread) {
		t = kthread_run(dpusim_stream_job_thread, w, "dpusim-dma/%d",
				task_pid_nr(current));
		if (IS_ERR(t))
			ret = PTR_ERR(t);
		else
			w->move.thread = t;
	}
	mutex_unlock(&w->move.start_lock);
	return ret;
}

/**
 * dpusim_stream_ring_mmap - mmap() of a worker file's move ring
 * @w: the worker
 * @vma: one page, MAP_SHARED, at DPUSIM_MMAP_MOVE_RING
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int dpusim_stream_ring_mmap(struct dpusim_worker *w,
			    struct vm_area_struct *vma)
{
	struct dpusim_stream_job *job = &w->move;
	struct page *page;
	int ret;

	if (vma_pages(vma) != 1)
		return -EINVAL;
	ret = dpusim_stream_job_start(w);
	if (ret)
		return ret;
	mutex_lock(&job->start_lock);
	page = job->ring_page;
	if (!page) {
		page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!page) {
			mutex_unlock(&job->start_lock);
			return -ENOMEM;
		}
		job->ring_page = page;
		/* lowmem: the kernel writes it through its own mapping */
		WRITE_ONCE(job->ring, page_address(page));
		/*
		 * The copy thread may sleep with no ring to have flagged
		 * (started by an earlier asynchronous move, or just now and
		 * asleep before the page was there): the program would wait
		 * for ever for its first move, never told to kick.  Woken, it
		 * polls, and flags this ring when it sleeps again.  The wake's
		 * full barrier pairs with the thread's look at @ring after it
		 * set its state (dpusim_stream_job_thread()).
		 */
		dpusim_stream_job_wake(job);
	}
	mutex_unlock(&job->start_lock);
	dpusim_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return vm_insert_page(vma, vma->vm_start, page);
}

/**
 * dpusim_stream_job_flush - wait for the worker's move in flight
 * @w: the worker
 *
 * May be called under the rank's state_lock (the copy takes no lock).
 */
void dpusim_stream_job_flush(struct dpusim_worker *w)
{
	struct dpusim_stream_job *job = &w->move;

	/* acquire: the copy is seen done, pairs with the thread's release */
	if (!smp_load_acquire(&job->pending) ||
	    dpusim_stream_job_poll(job, false))
		return;
	/* the same, once woken by wake_up_var() */
	wait_var_event(&job->pending, !smp_load_acquire(&job->pending));
}

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

/*
 * Allocate what the move writes; on an error, nothing is left over in the
 * stream, and the pages of a running DPU's memory allocated stay (zeros).
 */
static int dpusim_stream_job_populate(struct dpusim_stream_job *job, u64 len)
{
	int ret;
	u32 i;

	if (!job->down)
		return dpusim_mem_populate_charged(job->smem, job->soff, len);
	/* a running DPU's memory: pages allocated stay (mram.c) */
	for (i = 0; i < job->nr; i++) {
		ret = dpusim_mem_fill(job->seg[i].mem, job->seg[i].off,
				      job->seg[i].len);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A move, the rank's state_lock held and no move in flight; with @ucmd
 * its answer is written before anything changes.
 */
static int dpusim_worker_stream_move_locked(struct dpusim_worker *w,
					    struct dpusim_worker_stream_move *m,
					    struct dpusim_ucmd *ucmd)
{
	struct dpusim_rank *rank = w->rank;
	struct dpusim_stream_job *job = &w->move;
	struct dpusim_stream *s;
	struct dpusim_xfer x;
	u64 len, off;
	s32 dpu;
	int ret;

	lockdep_assert_held(&rank->state_lock);
	if (m->flags & ~(DPUSIM_STREAM_MOVE_DOWN | DPUSIM_STREAM_MOVE_ASYNC) ||
	    !m->nr_blocks || m->nr_blocks > DPUSIM_STREAM_MOVE_MAX_BLOCKS ||
	    m->__reserved)
		return -EINVAL;
	dpu = w->held;
	if (dpu < 0)
		return -EPERM;
	if (m->flags & DPUSIM_STREAM_MOVE_ASYNC) {
		ret = dpusim_stream_job_start(w);
		if (ret)
			return ret;
	}
	ret = dpusim_stream_job_segs(rank, dpu, m, job, &len);
	if (ret)
		return ret;
	s = xa_load(&rank->streams, m->stream);
	if (!s)
		return -ENOENT;
	x = (struct dpusim_xfer) {
		.flags = m->flags & DPUSIM_STREAM_MOVE_DOWN ?
			 DPUSIM_XFER_FROM_DPU : 0,
		.offset = m->offset,
		.length = len,
		.stream = m->stream,
	};
	ret = dpusim_stream_move_check(rank, &x, dpu);
	if (ret)
		return ret;
	/* answered first: a move whose answer cannot be written does not happen */
	m->size = sizeof(*m);
	m->next = x.flags & DPUSIM_XFER_FROM_DPU ?
		  dpusim_stream_token(s, s->cursor + 1, &off) : 0;
	ret = ucmd ? dpusim_ucmd_respond(ucmd, sizeof(*m)) : 0;
	if (ret)
		return ret;
	job->down = m->flags & DPUSIM_STREAM_MOVE_DOWN;
	job->smem = &s->mem;
	job->soff = m->offset;
	ret = dpusim_stream_job_populate(job, len);
	if (ret)
		return ret;
	dpusim_stream_move_done(rank, &x);
	if (m->flags & DPUSIM_STREAM_MOVE_ASYNC) {
		/* release: the job's fields before the flag */
		smp_store_release(&job->pending, true);
		dpusim_stream_job_wake(job);
	} else {
		dpusim_stream_job_copy(job);
	}
	return 0;
}

/* The ioctl's move: the one in flight first (its job is reused). */
static int dpusim_worker_stream_move_answer(struct dpusim_worker *w,
					    struct dpusim_worker_stream_move *m,
					    struct dpusim_ucmd *ucmd)
{
	struct mutex *lock = &w->rank->state_lock;
	int ret;

	for (;;) {
		dpusim_stream_job_flush(w);
		ret = mutex_lock_interruptible(lock);
		if (ret)
			return ret;
		/* acquire: the previous copy is done with the job's fields */
		if (!smp_load_acquire(&w->move.pending))
			break;
		mutex_unlock(lock);
	}
	ret = dpusim_worker_stream_move_locked(w, m, ucmd);
	mutex_unlock(lock);
	return ret;
}

int dpusim_worker_stream_move_ioctl(struct dpusim_ucmd *ucmd)
{
	return dpusim_worker_stream_move_answer(ucmd->worker, ucmd->cmd, ucmd);
}

int dpusim_worker_stream_wait_ioctl(struct dpusim_ucmd *ucmd)
{
	struct dpusim_worker_stream_wait *wt = ucmd->cmd;

	if (wt->flags & ~DPUSIM_STREAM_WAIT_KICK)
		return -EINVAL;
	if (wt->flags & DPUSIM_STREAM_WAIT_KICK) {
		if (ucmd->worker->move.thread)
			dpusim_stream_job_wake(&ucmd->worker->move);
		return 0;
	}
	dpusim_stream_job_flush(ucmd->worker);
	return 0;
}
