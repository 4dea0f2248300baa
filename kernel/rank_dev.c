// SPDX-License-Identifier: GPL-2.0
/*
 * The rank device: /dev/dpusim/rank<N> and the worker files it opens
 * (DPUSIM_IOCTL_WORKER_OPEN).  Their file operations, their ioctl tables
 * (dispatched by ioctl.c, table driven as iommufd and fwctl do it), the
 * mmap offset dispatch, poll(), and the rank's device and sysfs
 * attributes.  Everything below is reached from here: the rank object and
 * its ownership (rank.c, owner.c), transfers (xfer_ioctl.c, async.c), DPU
 * runs and workers (run.c, worker.c), streams and memory maps.
 *
 * The rank file owns the rank while open (owner.c): a second open() is
 * EBUSY.  It holds a module reference (fops.owner), so the module cannot
 * be unloaded while a rank is open: rmmod is refused with "Module dpusim
 * is in use".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/anon_inodes.h>
#include <linux/compat.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pid_namespace.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dpusim.h"

/**
 * dpusim_mmap - mmap() of a rank file or a worker file: the offset says
 * what (uapi/dpusim.h, DPUSIM_MMAP_*)
 * @rank: the rank
 * @w: the worker file's worker, or NULL for the rank file
 * @vma: the new mapping
 *
 * Called under mmap_lock: takes no lock of the rank.
 *
 * Return: 0, -EINVAL (not MAP_SHARED, a DPU past the rank, a range past
 * the memory, a window at another offset or longer than
 * DPUSIM_WINDOW_SIZE, a status page of more than a page), -EACCES (a
 * worker file and a DPU it does not hold), -EPERM (a writable or
 * executable status page, a writable stream), -EBUSY (a second window of
 * a worker file) or -ENOMEM (page tables for the resident pages).
 */
static int dpusim_mmap(struct dpusim_rank *rank, struct dpusim_worker *w,
		       struct vm_area_struct *vma)
{
	unsigned long dpu = vma->vm_pgoff >>
			    (DPUSIM_MMAP_DPU_SHIFT - PAGE_SHIFT);
	pgoff_t first = vma->vm_pgoff & (DPUSIM_MMAP_MEM_PAGES - 1);
	struct dpusim_mem *mem;
	bool wram, stream;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (w && vma->vm_pgoff == DPUSIM_WINDOW_PGOFF)
		return dpusim_window_mmap(w, vma);
	if (w && vma->vm_pgoff == DPUSIM_MMAP_MOVE_RING >> PAGE_SHIFT)
		return dpusim_stream_ring_mmap(w, vma);
	if (!w && vma->vm_pgoff == DPUSIM_MMAP_STATUS >> PAGE_SHIFT)
		return dpusim_async_status_mmap(rank, vma);
	wram = vma->vm_pgoff & DPUSIM_MMAP_MEM_PAGES;
	stream = !w && !wram && dpu >= DPUSIM_MMAP_STREAM_FIRST &&
		 dpu < DPUSIM_MMAP_STREAM_FIRST + DPUSIM_STREAM_MAX;
	if (stream)
		/* the owner's file: its streams live as long as it does */
		mem = dpusim_stream_mem(rank, dpu - DPUSIM_MMAP_STREAM_FIRST);
	else if (dpu < rank->nr_dpus)
		mem = &rank->dpus[dpu].mem[wram ? DPUSIM_WRAM : DPUSIM_MRAM];
	else
		mem = NULL;
	if (!mem)
		return -EINVAL;
	if (!dpusim_mmap_fits(vma, mem, first))
		return -EINVAL;
	if (w && READ_ONCE(w->held) != (s64)dpu)
		return -EACCES;
	if (stream) {
		/*
		 * Only the kernel writes a stream (moves, and headers that
		 * follow its own table of token sizes): the host reads it,
		 * now and after any mprotect().
		 */
		if (vma->vm_flags & VM_WRITE)
			return -EPERM;
		dpusim_vm_flags_clear(vma, VM_MAYWRITE);
	}
	return dpusim_mmap_mem(vma, mem, first);
}

static int dpusim_worker_claim_ioctl(struct dpusim_ucmd *ucmd)
{
	struct dpusim_worker_claim *c = ucmd->cmd;
	struct dpusim_rank *rank = ucmd->rank;
	u32 dpu, launches;
	int ret;

	if (c->__reserved)
		return -EINVAL;
	ret = dpusim_worker_claim(ucmd->worker, c->flags, c->timeout_ms,
				  &dpu, &launches);
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
	return dpusim_worker_finish(ucmd->worker, f->dpu, f->flags, f->reason,
				    f->modeled_cycles);
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

static int dpusim_worker_open_ioctl(struct dpusim_ucmd *ucmd)
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
		ret = mutex_lock_interruptible(&rank->state_lock);
		if (ret)
			return ret;
		/* Jobs are queued under state_lock: none can slip in now. */
		if (!atomic_read(&rank->async.pending))
			break;
		mutex_unlock(&rank->state_lock);
	}
	ret = dpusim_launch_locked(rank, first, nr);
	mutex_unlock(&rank->state_lock);
	if (!ret)
		wake_up_all(&rank->run.claim_wait);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_launch);

static int dpusim_launch_ioctl(struct dpusim_ucmd *ucmd)
{
	struct dpusim_launch *l = ucmd->cmd;

	if (l->flags)
		return -EINVAL;
	return dpusim_launch(ucmd->rank, l->first_dpu, l->nr_dpus);
}

static int dpusim_dpu_status_ioctl(struct dpusim_ucmd *ucmd)
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

static int dpusim_rank_info(struct dpusim_ucmd *ucmd)
{
	struct dpusim_rank_info *info = ucmd->cmd;
	struct dpusim_rank *rank = ucmd->rank;

	if (info->flags)
		return -EINVAL;

	*info = (struct dpusim_rank_info) {
		.size = sizeof(*info),
		.abi_version = DPUSIM_ABI_VERSION,
		.rank_index = rank->index,
		.nr_dpus = rank->nr_dpus,
		.wram_size = rank->wram_size,
		.mram_size = rank->mram_size,
	};
	return dpusim_ucmd_respond(ucmd, sizeof(*info));
}

static int dpusim_xfer_ioctl(struct dpusim_ucmd *ucmd)
{
	return dpusim_xfer_user(ucmd->rank, ucmd->cmd);
}

static int dpusim_sync_ioctl(struct dpusim_ucmd *ucmd)
{
	struct dpusim_sync *sync = ucmd->cmd;

	if (sync->flags || sync->__reserved ||
	    sync->timeout_ms > DPUSIM_SYNC_MAX_TIMEOUT_MS)
		return -EINVAL;
	return dpusim_async_sync(ucmd->rank, sync->timeout_ms);
}

union dpusim_ucmd_buffer {
	struct dpusim_rank_info info;
	struct dpusim_xfer xfer;
	struct dpusim_sync sync;
	struct dpusim_launch launch;
	struct dpusim_dpu_status status;
	struct dpusim_worker_open worker_open;
	struct dpusim_stream_create stream_create;
	struct dpusim_stream_cmd stream_cmd;
};

/* A caller passing the whole struct is never refused for its size. */
static_assert(sizeof(union dpusim_ucmd_buffer) <= DPUSIM_UCMD_MAX_SIZE);

#define IOCTL_OP(_name, _fn, _struct, _last)				\
	[DPUSIM_CMD_##_name - DPUSIM_CMD_BASE] = {			\
		.size = sizeof(_struct) +				\
			BUILD_BUG_ON_ZERO(sizeof(union dpusim_ucmd_buffer) < \
					  sizeof(_struct)),		\
		.min_size = offsetofend(_struct, _last),		\
		.ioctl_num = DPUSIM_IOCTL_##_name,			\
		.execute = _fn,						\
	}

static const struct dpusim_ioctl_op dpusim_ioctl_ops[] = {
	IOCTL_OP(RANK_INFO, dpusim_rank_info, struct dpusim_rank_info,
		 mram_size),
	IOCTL_OP(XFER, dpusim_xfer_ioctl, struct dpusim_xfer, blocks),
	IOCTL_OP(SYNC, dpusim_sync_ioctl, struct dpusim_sync, __reserved),
	IOCTL_OP(LAUNCH, dpusim_launch_ioctl, struct dpusim_launch, nr_dpus),
	IOCTL_OP(DPU_STATUS, dpusim_dpu_status_ioctl, struct dpusim_dpu_status,
		 nr_fault),
	IOCTL_OP(WORKER_OPEN, dpusim_worker_open_ioctl,
		 struct dpusim_worker_open, __reserved),
	IOCTL_OP(STREAM_CREATE, dpusim_stream_create_ioctl,
		 struct dpusim_stream_create, __reserved),
	IOCTL_OP(STREAM_OPEN, dpusim_stream_open_ioctl,
		 struct dpusim_stream_cmd, prev),
	IOCTL_OP(STREAM_CLOSE, dpusim_stream_close_ioctl,
		 struct dpusim_stream_cmd, prev),
	IOCTL_OP(STREAM_SEEK, dpusim_stream_seek_ioctl,
		 struct dpusim_stream_cmd, prev),
};

/**
 * dpusim_ioctl_dispatch - run one ioctl on a rank
 * @rank: the rank
 * @cmd: the ioctl command
 * @ubuffer: the user's struct, starting with its __u32 size
 *
 * Return: 0 or a negative errno as documented in uapi/dpusim.h.
 */
long dpusim_ioctl_dispatch(struct dpusim_rank *rank, unsigned int cmd,
			   void __user *ubuffer)
{
	struct dpusim_ucmd ucmd = {
		.rank = rank,
		.ubuffer = ubuffer,
	};
	union dpusim_ucmd_buffer buf;

	return dpusim_ucmd_dispatch(&ucmd, dpusim_ioctl_ops,
				    ARRAY_SIZE(dpusim_ioctl_ops),
				    DPUSIM_CMD_BASE, cmd, &buf);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_ioctl_dispatch);

static long dpusim_rank_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct dpusim_rank *rank = filp->private_data;

	dpusim_rank_touch_owner(rank);
	return dpusim_ioctl_dispatch(rank, cmd, (void __user *)arg);
}

/**
 * dpusim_rank_poll - poll() of the rank file
 * @filp: the rank file
 * @wait: the poll table
 *
 * Return: EPOLLIN | EPOLLRDNORM when no DPU of the rank is RUNNING.
 */
static __poll_t dpusim_rank_poll(struct file *filp, struct poll_table_struct *wait)
{
	struct dpusim_rank *rank = filp->private_data;

	poll_wait(filp, &rank->run.idle, wait);
	return READ_ONCE(rank->run.nr_running) ? 0 : EPOLLIN | EPOLLRDNORM;
}

/**
 * dpusim_rank_release - the owner closes the rank
 * @rank: the rank, owned by the caller
 *
 * Does not wait: queued asynchronous transfers hold their pinned user
 * pages and complete after the file (or the process) is gone; the last one
 * frees the rank's memory (the next owner finds it all zeros, and the
 * pages go back to the budget) and ends the ownership.  The worker files
 * hold the ownership too: the processes that claimed through them are
 * killed (worker.c), and the last file to close ends it.
 */
void dpusim_rank_release(struct dpusim_rank *rank)
{
	set_bit(DPUSIM_RANK_CLOSED, &rank->flags);
	dpusim_worker_shutdown(rank);
	dpusim_rank_put(rank);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_rank_release);

static int dpusim_rank_open(struct inode *inode, struct file *filp)
{
	struct dpusim_rank *rank = container_of(inode->i_cdev,
						struct dpusim_rank, cdev);
	int ret;

	ret = dpusim_rank_claim(rank);
	if (ret)
		return ret;
	filp->private_data = rank;
	return nonseekable_open(inode, filp);
}

static int dpusim_rank_file_release(struct inode *inode, struct file *filp)
{
	dpusim_rank_release(filp->private_data);
	return 0;
}

static int dpusim_rank_mmap(struct file *filp, struct vm_area_struct *vma)
{
	return dpusim_mmap(filp->private_data, NULL, vma);
}

static const struct file_operations dpusim_rank_fops = {
	.owner = THIS_MODULE,
	.open = dpusim_rank_open,
	.release = dpusim_rank_file_release,
	.unlocked_ioctl = dpusim_rank_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = dpusim_rank_poll,
	.mmap = dpusim_rank_mmap,
};

/**
 * dpusim_rank_from_file - the rank an open file owns
 * @file: any open file
 *
 * Return: the rank if @file is an open /dev/dpusim/rankN (it owns the
 * rank while open), else NULL.
 */
struct dpusim_rank *dpusim_rank_from_file(struct file *file)
{
	return file->f_op == &dpusim_rank_fops ? file->private_data : NULL;
}

static struct dpusim_rank *to_rank(struct device *dev)
{
	return container_of(dev, struct dpusim_rank, dev);
}

static ssize_t nr_dpus_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", to_rank(dev)->nr_dpus);
}
static DEVICE_ATTR_RO(nr_dpus);

static ssize_t mram_size_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", to_rank(dev)->mram_size);
}
static DEVICE_ATTR_RO(mram_size);

static ssize_t wram_size_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_rank(dev)->wram_size);
}
static DEVICE_ATTR_RO(wram_size);

static ssize_t is_owned_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  test_bit(DPUSIM_RANK_OWNED, &to_rank(dev)->flags));
}
static DEVICE_ATTR_RO(is_owned);

/* In the reader's pid namespace; 0 if the owner is not visible there. */
static ssize_t owner_pid_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct dpusim_rank *rank = to_rank(dev);
	pid_t pid;

	mutex_lock(&rank->owner.lock);
	pid = pid_nr_ns(rank->owner.pid, task_active_pid_ns(current));
	mutex_unlock(&rank->owner.lock);
	return sysfs_emit(buf, "%d\n", pid);
}
static DEVICE_ATTR_RO(owner_pid);

static ssize_t mram_resident_bytes_show(struct device *dev,
					struct device_attribute *attr,
					char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  dpusim_rank_resident_bytes(to_rank(dev),
						     DPUSIM_MRAM));
}
static DEVICE_ATTR_RO(mram_resident_bytes);

static ssize_t wram_resident_bytes_show(struct device *dev,
					struct device_attribute *attr,
					char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  dpusim_rank_resident_bytes(to_rank(dev),
						     DPUSIM_WRAM));
}
static DEVICE_ATTR_RO(wram_resident_bytes);

static ssize_t stream_resident_bytes_show(struct device *dev,
					  struct device_attribute *attr,
					  char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  dpusim_stream_resident_bytes(to_rank(dev)));
}
static DEVICE_ATTR_RO(stream_resident_bytes);

/* How close the rank is to its limits (uapi/dpusim.h). */
static ssize_t pinned_pages_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n",
			  atomic_long_read(&to_rank(dev)->xfer.pinned_pages));
}
static DEVICE_ATTR_RO(pinned_pages);

/* What the queued asynchronous transfers hold (DPUSIM_ASYNC_MAX_*). */
static ssize_t async_jobs_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  atomic_read(&to_rank(dev)->async.usage.jobs));
}
static DEVICE_ATTR_RO(async_jobs);

static ssize_t async_blocks_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  atomic_read(&to_rank(dev)->async.usage.blocks));
}
static DEVICE_ATTR_RO(async_blocks);

static ssize_t async_bytes_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&to_rank(dev)->async.usage.bytes));
}
static DEVICE_ATTR_RO(async_bytes);

static ssize_t async_pages_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n",
			  atomic_long_read(&to_rank(dev)->async.usage.pages));
}
static DEVICE_ATTR_RO(async_pages);

/* Counters of successful DPUSIM_IOCTL_XFER calls and what they moved. */
#define DPUSIM_STAT_ATTR(_attr, _field)					\
static ssize_t _attr##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%lld\n",				\
			  atomic64_read(&to_rank(dev)->stats._field));	\
}									\
static DEVICE_ATTR_RO(_attr)

DPUSIM_STAT_ATTR(xfer_ioctls, ioctls);
DPUSIM_STAT_ATTR(xfer_bytes_to_dpu, bytes_to_dpu);
DPUSIM_STAT_ATTR(xfer_bytes_from_dpu, bytes_from_dpu);
DPUSIM_STAT_ATTR(xfer_blocks, blocks);
DPUSIM_STAT_ATTR(xfer_guest_ns_to_dpu, guest_ns_to_dpu);
DPUSIM_STAT_ATTR(xfer_guest_ns_from_dpu, guest_ns_from_dpu);
DPUSIM_STAT_ATTR(xfer_modeled_ns_to_dpu, modeled_ns_to_dpu);
DPUSIM_STAT_ATTR(xfer_modeled_ns_from_dpu, modeled_ns_from_dpu);
/* DPUs launched and DPU runs that faulted, since the module was loaded */
DPUSIM_STAT_ATTR(launches, launches);
DPUSIM_STAT_ATTR(faults, faults);

/* The run state of each DPU, in DPU order: a snapshot, read unlocked. */
static ssize_t dpu_state_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	static const char * const names[] = {
		[DPUSIM_DPU_IDLE] = "idle",
		[DPUSIM_DPU_RUNNING] = "running",
		[DPUSIM_DPU_DONE] = "done",
		[DPUSIM_DPU_FAULT] = "fault",
	};
	struct dpusim_rank *rank = to_rank(dev);
	int len = 0;
	u32 i, state;

	for (i = 0; i < rank->nr_dpus; i++) {
		state = READ_ONCE(rank->dpus[i].state);
		len += sysfs_emit_at(buf, len, "%s%s", i ? " " : "",
				     state < ARRAY_SIZE(names) ? names[state] :
								 "?");
	}
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}
static DEVICE_ATTR_RO(dpu_state);

/*
 * Each DPU's last run, in modeled DPU cycles as its program reported them
 * (0: running, never run, or built without the model), in DPU order.
 */
static ssize_t dpu_modeled_cycles_show(struct device *dev,
				       struct device_attribute *attr, char *buf)
{
	struct dpusim_rank *rank = to_rank(dev);
	int len = 0;
	u32 i;

	for (i = 0; i < rank->nr_dpus; i++)
		len += sysfs_emit_at(buf, len, "%s%llu", i ? " " : "",
				     READ_ONCE(rank->dpus[i].modeled_cycles));
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}
static DEVICE_ATTR_RO(dpu_modeled_cycles);

static struct attribute *dpusim_rank_attrs[] = {
	&dev_attr_nr_dpus.attr,
	&dev_attr_mram_size.attr,
	&dev_attr_wram_size.attr,
	&dev_attr_is_owned.attr,
	&dev_attr_owner_pid.attr,
	&dev_attr_mram_resident_bytes.attr,
	&dev_attr_wram_resident_bytes.attr,
	&dev_attr_stream_resident_bytes.attr,
	&dev_attr_pinned_pages.attr,
	&dev_attr_async_jobs.attr,
	&dev_attr_async_blocks.attr,
	&dev_attr_async_bytes.attr,
	&dev_attr_async_pages.attr,
	&dev_attr_xfer_ioctls.attr,
	&dev_attr_xfer_bytes_to_dpu.attr,
	&dev_attr_xfer_bytes_from_dpu.attr,
	&dev_attr_xfer_blocks.attr,
	&dev_attr_xfer_guest_ns_to_dpu.attr,
	&dev_attr_xfer_guest_ns_from_dpu.attr,
	&dev_attr_xfer_modeled_ns_to_dpu.attr,
	&dev_attr_xfer_modeled_ns_from_dpu.attr,
	&dev_attr_launches.attr,
	&dev_attr_faults.attr,
	&dev_attr_dpu_state.attr,
	&dev_attr_dpu_modeled_cycles.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dpusim_rank);

static void dpusim_rank_dev_release(struct device *dev)
{
	struct dpusim_rank *rank = to_rank(dev);

	dpusim_rank_fini(rank);
	kfree(rank);
}

/**
 * dpusim_rank_create - create and register /dev/dpusim/rank<index>
 * @index: N of rankN
 * @geo: validated geometry
 * @devt: the device number
 * @class: the "dpusim" class
 *
 * Return: the rank, or an ERR_PTR.
 */
struct dpusim_rank *dpusim_rank_create(u32 index,
				       const struct dpusim_geometry *geo,
				       dev_t devt, struct class *class)
{
	struct dpusim_rank *rank;
	int ret;

	rank = kzalloc(sizeof(*rank), GFP_KERNEL);
	if (!rank)
		return ERR_PTR(-ENOMEM);

	ret = dpusim_rank_init(rank, index, geo, &dpusim_budget);
	if (ret) {
		kfree(rank);
		return ERR_PTR(ret);
	}
	device_initialize(&rank->dev);
	rank->dev.class = class;
	rank->dev.devt = devt;
	rank->dev.groups = dpusim_rank_groups;
	rank->dev.release = dpusim_rank_dev_release;
	cdev_init(&rank->cdev, &dpusim_rank_fops);
	rank->cdev.owner = THIS_MODULE;

	ret = dev_set_name(&rank->dev, "rank%u", index);
	if (ret)
		goto err_put;
	ret = cdev_device_add(&rank->cdev, &rank->dev);
	if (ret)
		goto err_put;
	return rank;

err_put:
	put_device(&rank->dev);
	return ERR_PTR(ret);
}

/**
 * dpusim_rank_destroy - remove the device; the rank is freed with its
 * last reference
 * @rank: the rank
 */
void dpusim_rank_destroy(struct dpusim_rank *rank)
{
	cdev_device_del(&rank->cdev, &rank->dev);
	put_device(&rank->dev);
}
