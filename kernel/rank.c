// SPDX-License-Identifier: GPL-2.0
/*
 * The rank device: /dev/dpusim/rank<N>, its ownership rule and its sysfs
 * attributes.
 *
 * A rank is owned by one open file at a time (UPMEM: one process per rank);
 * a second open() fails with -EBUSY.  The ownership is a kref held by the
 * open file and by each queued asynchronous transfer: closing the file
 * never waits; the last reference frees the rank's memory and ends the
 * ownership.  An open() that finds the previous owner closed but its
 * transfers still running waits for them (interruptibly, bounded).
 * The file holds a module reference
 * (fops.owner), so the module cannot be unloaded while a rank is open:
 * rmmod is refused with "Module dpusim is in use".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/compat.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pid_namespace.h>
#include <linux/slab.h>

#include "xfer.h"

/**
 * dpusim_geometry_check - validate the module parameters
 * @geo: the requested geometry
 *
 * Return: 0, or -EINVAL with a message naming the bad parameter.
 */
int dpusim_geometry_check(const struct dpusim_geometry *geo)
{
	if (!geo->nr_ranks || geo->nr_ranks > DPUSIM_MAX_RANKS) {
		pr_err("ranks=%u: must be 1..%u\n", geo->nr_ranks,
		       DPUSIM_MAX_RANKS);
		return -EINVAL;
	}
	if (!geo->nr_dpus || geo->nr_dpus > DPUSIM_MAX_DPUS) {
		pr_err("dpus_per_rank=%u: must be 1..%u\n", geo->nr_dpus,
		       DPUSIM_MAX_DPUS);
		return -EINVAL;
	}
	if (!geo->mram_size || geo->mram_size > DPUSIM_MAX_MRAM ||
	    !PAGE_ALIGNED(geo->mram_size)) {
		pr_err("mram_size=%llu: must be a multiple of %lu up to %llu\n",
		       geo->mram_size, PAGE_SIZE, DPUSIM_MAX_MRAM);
		return -EINVAL;
	}
	if (!geo->wram_size || geo->wram_size > DPUSIM_MAX_WRAM ||
	    !IS_ALIGNED(geo->wram_size, 8)) {
		pr_err("wram_size=%u: must be a multiple of 8 up to %u\n",
		       geo->wram_size, DPUSIM_MAX_WRAM);
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_geometry_check);

/* The arrays dpusim_rank_init() allocates (NULL: never allocated) */
static void dpusim_rank_free_arrays(struct dpusim_rank *rank)
{
	kvfree(rank->split_act);
	rank->split_act = NULL;
	kvfree(rank->split_c);
	rank->split_c = NULL;
	kvfree(rank->dpus);
	rank->dpus = NULL;
}

/**
 * dpusim_rank_init - set up a rank's state, without any device
 * @rank: zeroed rank
 * @index: N of rankN
 * @geo: validated geometry
 * @budget: where the rank's memory is charged
 *
 * Return: 0 or -ENOMEM.
 */
int dpusim_rank_init(struct dpusim_rank *rank, u32 index,
		     const struct dpusim_geometry *geo,
		     struct dpusim_budget *budget)
{
	u32 i;

	rank->index = index;
	rank->dpus = kvcalloc(geo->nr_dpus, sizeof(*rank->dpus), GFP_KERNEL);
	rank->split_c = kvcalloc(array_size(DPUSIM_XFER_CHUNKS, geo->nr_dpus),
				 sizeof(*rank->split_c), GFP_KERNEL);
	rank->split_act = kvcalloc(array_size(DPUSIM_XFER_CHUNKS, geo->nr_dpus),
				   sizeof(*rank->split_act), GFP_KERNEL);
	if (!rank->dpus || !rank->split_c || !rank->split_act ||
	    dpusim_async_init(rank)) {
		dpusim_rank_free_arrays(rank);
		return -ENOMEM;
	}
	rank->nr_dpus = geo->nr_dpus;
	rank->mram_size = geo->mram_size;
	rank->wram_size = geo->wram_size;
	rank->budget = budget;
	/* Unowned, the rank holds its own reference: jobs may come and go. */
	kref_init(&rank->owner_ref);
	init_waitqueue_head(&rank->owner_idle);
	mutex_init(&rank->lock);
	mutex_init(&rank->xfer_lock);
	dpusim_run_init(rank);
	xa_init_flags(&rank->streams, XA_FLAGS_ALLOC);
	for (i = 0; i < rank->nr_dpus; i++) {
		dpusim_mem_init(&rank->dpus[i].mem[DPUSIM_MRAM],
				geo->mram_size, budget);
		dpusim_mem_init(&rank->dpus[i].mem[DPUSIM_WRAM],
				geo->wram_size, budget);
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_rank_init);

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

/**
 * dpusim_rank_fini - undo dpusim_rank_init()
 * @rank: the rank
 *
 * Queued asynchronous transfers finish first.
 */
void dpusim_rank_fini(struct dpusim_rank *rank)
{
	dpusim_async_fini(rank);
	dpusim_rank_free_memory(rank);
	dpusim_rank_free_arrays(rank);
	put_pid(rank->owner);
	rank->owner = NULL;
	mutex_destroy(&rank->worker_lock);
	mutex_destroy(&rank->xfer_lock);
	mutex_destroy(&rank->lock);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_rank_fini);

/**
 * dpusim_rank_resident_bytes - bytes of the rank's MRAM or WRAM resident
 * @rank: the rank
 * @kind: DPUSIM_MRAM or DPUSIM_WRAM
 *
 * Return: the sum over its DPUs, read without locking (a snapshot).
 */
u64 dpusim_rank_resident_bytes(struct dpusim_rank *rank,
			       enum dpusim_mem_kind kind)
{
	unsigned long pages = 0;
	u32 i;

	for (i = 0; i < rank->nr_dpus; i++)
		pages += READ_ONCE(rank->dpus[i].mem[kind].nr_pages);
	return (u64)pages << PAGE_SHIFT;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_rank_resident_bytes);

/* 0, -EBUSY (owned), or -EAGAIN (closed, its transfers still running) */
static int dpusim_rank_try_claim(struct dpusim_rank *rank)
{
	int ret = 0;

	mutex_lock(&rank->lock);
	if (test_bit(DPUSIM_RANK_OWNED, &rank->flags)) {
		ret = test_bit(DPUSIM_RANK_CLOSED, &rank->flags) ? -EAGAIN :
								    -EBUSY;
	} else {
		kref_init(&rank->owner_ref);
		clear_bit(DPUSIM_RANK_CLOSED, &rank->flags);
		set_bit(DPUSIM_RANK_OWNED, &rank->flags);
		rank->owner = get_pid(task_tgid(current));
	}
	mutex_unlock(&rank->lock);
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
		left = wait_event_interruptible_timeout(rank->owner_idle,
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

	if (READ_ONCE(rank->owner) == pid)
		return;
	mutex_lock(&rank->lock);
	if (rank->owner && rank->owner != pid) {
		put_pid(rank->owner);
		WRITE_ONCE(rank->owner, get_pid(pid));
	}
	mutex_unlock(&rank->lock);
}

/* The last reference: free the memory, end the ownership. */
static void dpusim_rank_teardown(struct kref *kref)
{
	struct dpusim_rank *rank = container_of(kref, struct dpusim_rank,
						owner_ref);

	dpusim_rank_free_memory(rank);
	dpusim_run_reset(rank);
	mutex_lock(&rank->lock);
	put_pid(rank->owner);
	rank->owner = NULL;
	clear_bit(DPUSIM_RANK_CLOSED, &rank->flags);
	clear_bit(DPUSIM_RANK_OWNED, &rank->flags);
	mutex_unlock(&rank->lock);
	wake_up_all(&rank->owner_idle);
}

/* A queued job's or a worker file's reference on the ownership. */
void dpusim_rank_get(struct dpusim_rank *rank)
{
	kref_get(&rank->owner_ref);
}

void dpusim_rank_put(struct dpusim_rank *rank)
{
	kref_put(&rank->owner_ref, dpusim_rank_teardown);
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

	mutex_lock(&rank->lock);
	pid = pid_nr_ns(rank->owner, task_active_pid_ns(current));
	mutex_unlock(&rank->lock);
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
			  atomic_long_read(&to_rank(dev)->pinned_pages));
}
static DEVICE_ATTR_RO(pinned_pages);

/* What the queued asynchronous transfers hold (DPUSIM_ASYNC_MAX_*). */
static ssize_t async_jobs_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  atomic_read(&to_rank(dev)->async_usage.jobs));
}
static DEVICE_ATTR_RO(async_jobs);

static ssize_t async_blocks_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  atomic_read(&to_rank(dev)->async_usage.blocks));
}
static DEVICE_ATTR_RO(async_blocks);

static ssize_t async_bytes_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&to_rank(dev)->async_usage.bytes));
}
static DEVICE_ATTR_RO(async_bytes);

static ssize_t async_pages_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n",
			  atomic_long_read(&to_rank(dev)->async_usage.pages));
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
	&dev_attr_launches.attr,
	&dev_attr_faults.attr,
	&dev_attr_dpu_state.attr,
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
 *
 * Return: the rank, or an ERR_PTR.
 */
struct dpusim_rank *dpusim_rank_create(u32 index,
				       const struct dpusim_geometry *geo,
				       dev_t devt)
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
	rank->dev.class = &dpusim_class;
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
