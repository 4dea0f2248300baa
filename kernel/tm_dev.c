// SPDX-License-Identifier: GPL-2.0
/*
 * The tag-matching device, /dev/dpusim/tm: one context per open file,
 * the table-driven ioctl dispatch (as the rank's, iommufd's and fwctl's),
 * mmap of completion rings, poll(), and the counters in sysfs.
 *
 * The device is mode 0666, as rdma-core's uverbs nodes are: what a
 * process may reach is decided per object (a QP connects only to an SRQ
 * of the same effective uid; regions are the process's own memory or a
 * rank it has open).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dpusim.h"
#include "tm.h"

static struct dpusim_tm_dev *dpusim_tm;

static void dpusim_tm_ctx_free(struct kref *ref)
{
	struct dpusim_tm_ctx *ctx = container_of(ref, struct dpusim_tm_ctx,
						 ref);

	xa_destroy(&ctx->mrs);
	xa_destroy(&ctx->cqs);
	xa_destroy(&ctx->srqs);
	xa_destroy(&ctx->qps);
	mutex_destroy(&ctx->lock);
	atomic_dec(&ctx->tm->contexts);
	put_device(&ctx->tm->dev);
	kfree(ctx);
}

void dpusim_tm_ctx_put(struct dpusim_tm_ctx *ctx)
{
	kref_put(&ctx->ref, dpusim_tm_ctx_free);
}

/**
 * dpusim_tm_ctx_add - enter a new SRQ or QP in its context
 * @ctx: the context
 * @cq_handle: the CQ the object uses
 * @cq: out: that CQ, referenced and its users counted, set before the
 *      object can be looked up (the send path looks QPs up under RCU)
 * @table: the context's SRQs or QPs, at most @max of them
 * @max: DPUSIM_TM_MAX_SRQ or DPUSIM_TM_MAX_QP
 * @handle: out, the object's handle in @table
 * @numbers: the device's SRQ or QP numbers, allocated cyclically
 * @next: the cursor of @numbers
 * @num: out, the object's number
 * @obj: the object
 *
 * Return: 0, -ENOENT (no such CQ), -ENOSPC (the table or the numbers are
 * full) or -ENOMEM; on an error nothing is entered and @cq is NULL.
 */
int dpusim_tm_ctx_add(struct dpusim_tm_ctx *ctx, u32 cq_handle,
		      struct dpusim_tm_cq **cq, struct xarray *table, u32 max,
		      u32 *handle, struct xarray *numbers, u32 *next, u32 *num,
		      void *obj)
{
	int ret;

	mutex_lock(&ctx->lock);
	*cq = xa_load(&ctx->cqs, cq_handle);
	if (!*cq) {
		mutex_unlock(&ctx->lock);
		return -ENOENT;
	}
	kref_get(&(*cq)->ref);
	atomic_inc(&(*cq)->users);
	ret = xa_alloc(table, handle, obj, XA_LIMIT(1, max),
		       GFP_KERNEL_ACCOUNT);
	if (!ret) {
		ret = xa_alloc_cyclic(numbers, num, obj, xa_limit_31b, next,
				      GFP_KERNEL_ACCOUNT);
		if (ret < 0)
			xa_erase(table, *handle);
		else
			ret = 0;
	}
	if (ret) {
		atomic_dec(&(*cq)->users);
		dpusim_tm_cq_put(*cq);
		*cq = NULL;
	}
	mutex_unlock(&ctx->lock);
	return ret == -EBUSY ? -ENOSPC : ret;
}

static int dpusim_tm_open(struct inode *inode, struct file *filp)
{
	struct dpusim_tm_dev *tm = container_of(inode->i_cdev,
						struct dpusim_tm_dev, cdev);
	struct dpusim_tm_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	kref_init(&ctx->ref);
	mutex_init(&ctx->lock);
	xa_init(&ctx->mrs);
	xa_init_flags(&ctx->cqs, XA_FLAGS_ALLOC1);
	xa_init_flags(&ctx->srqs, XA_FLAGS_ALLOC1);
	xa_init_flags(&ctx->qps, XA_FLAGS_ALLOC1);
	init_waitqueue_head(&ctx->wait);
	ctx->uid = current_euid();
	get_device(&tm->dev);
	ctx->tm = tm;
	atomic_inc(&tm->contexts);
	filp->private_data = ctx;
	return nonseekable_open(inode, filp);
}

/* Everything of the context goes: QPs, SRQs, CQs (rings once unmapped), MRs */
static int dpusim_tm_release(struct inode *inode, struct file *filp)
{
	struct dpusim_tm_ctx *ctx = filp->private_data;
	unsigned long idx;
	void *obj;

	ctx->dead = true;
	xa_for_each(&ctx->qps, idx, obj)
		dpusim_tm_destroy_qp(ctx, idx);
	xa_for_each(&ctx->srqs, idx, obj)
		dpusim_tm_destroy_srq(ctx, idx);
	xa_for_each(&ctx->cqs, idx, obj)
		dpusim_tm_destroy_cq(ctx, idx, true);
	dpusim_tm_dereg_mr(ctx, 0);
	dpusim_tm_ctx_put(ctx);
	return 0;
}

/* ---------------------------------------------------------------- ioctl */

static int dpusim_tm_query(struct dpusim_tm_ctx *ctx, void *cmd)
{
	struct dpusim_tm_query *q = cmd;

	if (q->flags)
		return -EINVAL;
	*q = (struct dpusim_tm_query) {
		.size = sizeof(*q),
		.max_num_tags = DPUSIM_TM_MAX_NUM_TAGS,
		.max_ops = DPUSIM_TM_MAX_OPS,
		.max_sge = DPUSIM_TM_MAX_SGE,
		.max_rndv_hdr_size = DPUSIM_TM_MAX_RNDV_HDR_SIZE,
		.max_srq_wr = DPUSIM_TM_MAX_SRQ_WR,
		.max_cqe = DPUSIM_TM_MAX_CQE,
		.max_inline = DPUSIM_TM_MAX_INLINE,
		.max_qp_recv = DPUSIM_TM_MAX_QP_RECV,
		.max_msg = DPUSIM_TM_MAX_MSG,
		.cap_flags = DPUSIM_TM_CAP_RC,
	};
	return 0;
}

static int dpusim_tm_reg_mr_ioctl(struct dpusim_tm_ctx *ctx, void *cmd)
{
	return dpusim_tm_reg_mr(ctx, cmd);
}

static int dpusim_tm_destroy_check(const struct dpusim_tm_destroy *d)
{
	return d->flags || d->__reserved ? -EINVAL : 0;
}

static int dpusim_tm_dereg_mr_ioctl(struct dpusim_tm_ctx *ctx, void *cmd)
{
	struct dpusim_tm_destroy *d = cmd;

	if (dpusim_tm_destroy_check(d))
		return -EINVAL;
	return d->handle ? dpusim_tm_dereg_mr(ctx, d->handle) : -ENOENT;
}

static int dpusim_tm_create_cq_ioctl(struct dpusim_tm_ctx *ctx, void *cmd)
{
	return dpusim_tm_create_cq(ctx, cmd);
}

static int dpusim_tm_destroy_cq_ioctl(struct dpusim_tm_ctx *ctx, void *cmd)
{
	struct dpusim_tm_destroy *d = cmd;

	if (dpusim_tm_destroy_check(d))
		return -EINVAL;
	return dpusim_tm_destroy_cq(ctx, d->handle, false);
}

static int dpusim_tm_create_srq_ioctl(struct dpusim_tm_ctx *ctx, void *cmd)
{
	return dpusim_tm_create_srq(ctx, cmd);
}

static int dpusim_tm_destroy_srq_ioctl(struct dpusim_tm_ctx *ctx, void *cmd)
{
	struct dpusim_tm_destroy *d = cmd;

	if (dpusim_tm_destroy_check(d))
		return -EINVAL;
	return dpusim_tm_destroy_srq(ctx, d->handle);
}

static int dpusim_tm_create_qp_ioctl(struct dpusim_tm_ctx *ctx, void *cmd)
{
	return dpusim_tm_create_qp(ctx, cmd);
}

static int dpusim_tm_destroy_qp_ioctl(struct dpusim_tm_ctx *ctx, void *cmd)
{
	struct dpusim_tm_destroy *d = cmd;

	if (dpusim_tm_destroy_check(d))
		return -EINVAL;
	return dpusim_tm_destroy_qp(ctx, d->handle);
}

static int dpusim_tm_connect_ioctl(struct dpusim_tm_ctx *ctx, void *cmd)
{
	return dpusim_tm_connect(ctx, cmd);
}

static int dpusim_tm_post_srq_ops_ioctl(struct dpusim_tm_ctx *ctx, void *cmd)
{
	return dpusim_tm_post_srq_ops(ctx, cmd);
}

static int dpusim_tm_post_srq_recv_ioctl(struct dpusim_tm_ctx *ctx, void *cmd)
{
	return dpusim_tm_post_srq_recv(ctx, cmd);
}

static int dpusim_tm_post_send_ioctl(struct dpusim_tm_ctx *ctx, void *cmd)
{
	return dpusim_tm_post_send(ctx, cmd);
}

union dpusim_tm_ucmd_buffer {
	struct dpusim_tm_query query;
	struct dpusim_tm_reg_mr reg_mr;
	struct dpusim_tm_destroy destroy;
	struct dpusim_tm_create_cq create_cq;
	struct dpusim_tm_create_srq create_srq;
	struct dpusim_tm_create_qp create_qp;
	struct dpusim_tm_connect connect;
	struct dpusim_tm_post post;
};

/*
 * @respond: what goes back to the user's struct: nothing, the struct on
 * success, or the struct always (posts: nr_done names the failing entry)
 */
enum { DPUSIM_TM_OUT_NONE, DPUSIM_TM_OUT_OK, DPUSIM_TM_OUT_ALWAYS };

struct dpusim_tm_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	unsigned int ioctl_num;
	unsigned int respond;
	int (*execute)(struct dpusim_tm_ctx *ctx, void *cmd);
};

#define TM_IOCTL_OP(_name, _fn, _struct, _last, _respond)		\
	[DPUSIM_CMD_TM_##_name - DPUSIM_TM_CMD_BASE] = {		\
		.size = sizeof(_struct) +				\
			BUILD_BUG_ON_ZERO(sizeof(union dpusim_tm_ucmd_buffer) < \
					  sizeof(_struct)),		\
		.min_size = offsetofend(_struct, _last),		\
		.ioctl_num = DPUSIM_IOCTL_TM_##_name,			\
		.respond = DPUSIM_TM_OUT_##_respond,			\
		.execute = _fn,						\
	}

static const struct dpusim_tm_ioctl_op dpusim_tm_ioctl_ops[] = {
	TM_IOCTL_OP(QUERY, dpusim_tm_query, struct dpusim_tm_query,
		    cap_flags, OK),
	TM_IOCTL_OP(REG_MR, dpusim_tm_reg_mr_ioctl, struct dpusim_tm_reg_mr,
		    __reserved, OK),
	TM_IOCTL_OP(DEREG_MR, dpusim_tm_dereg_mr_ioctl,
		    struct dpusim_tm_destroy, __reserved, NONE),
	TM_IOCTL_OP(CREATE_CQ, dpusim_tm_create_cq_ioctl,
		    struct dpusim_tm_create_cq, mmap_size, OK),
	TM_IOCTL_OP(DESTROY_CQ, dpusim_tm_destroy_cq_ioctl,
		    struct dpusim_tm_destroy, __reserved, NONE),
	TM_IOCTL_OP(CREATE_SRQ, dpusim_tm_create_srq_ioctl,
		    struct dpusim_tm_create_srq, __reserved, OK),
	TM_IOCTL_OP(DESTROY_SRQ, dpusim_tm_destroy_srq_ioctl,
		    struct dpusim_tm_destroy, __reserved, NONE),
	TM_IOCTL_OP(CREATE_QP, dpusim_tm_create_qp_ioctl,
		    struct dpusim_tm_create_qp, qp_num, OK),
	TM_IOCTL_OP(DESTROY_QP, dpusim_tm_destroy_qp_ioctl,
		    struct dpusim_tm_destroy, __reserved, NONE),
	TM_IOCTL_OP(CONNECT, dpusim_tm_connect_ioctl,
		    struct dpusim_tm_connect, srq_num, NONE),
	TM_IOCTL_OP(POST_SRQ_OPS, dpusim_tm_post_srq_ops_ioctl,
		    struct dpusim_tm_post, wrs, ALWAYS),
	TM_IOCTL_OP(POST_SRQ_RECV, dpusim_tm_post_srq_recv_ioctl,
		    struct dpusim_tm_post, wrs, ALWAYS),
	TM_IOCTL_OP(POST_SEND, dpusim_tm_post_send_ioctl,
		    struct dpusim_tm_post, wrs, ALWAYS),
};

/*
 * The objects a failed create made must not stay: the struct goes back
 * before the handle could be used, and a failed copy undoes the create.
 */
static void dpusim_tm_undo_create(struct dpusim_tm_ctx *ctx, unsigned int nr,
				  void *cmd)
{
	union dpusim_tm_ucmd_buffer *b = cmd;

	switch (nr + DPUSIM_TM_CMD_BASE) {
	case DPUSIM_CMD_TM_REG_MR:
		dpusim_tm_dereg_mr(ctx, b->reg_mr.lkey);
		break;
	case DPUSIM_CMD_TM_CREATE_CQ:
		dpusim_tm_destroy_cq(ctx, b->create_cq.handle, true);
		break;
	case DPUSIM_CMD_TM_CREATE_SRQ:
		dpusim_tm_destroy_srq(ctx, b->create_srq.handle);
		break;
	case DPUSIM_CMD_TM_CREATE_QP:
		dpusim_tm_destroy_qp(ctx, b->create_qp.handle);
		break;
	}
}

static long dpusim_tm_ioctl(struct file *filp, unsigned int cmd,
			    unsigned long arg)
{
	struct dpusim_tm_ctx *ctx = filp->private_data;
	void __user *ubuffer = (void __user *)arg;
	const struct dpusim_tm_ioctl_op *op;
	union dpusim_tm_ucmd_buffer buf;
	u32 __user *nr_done;
	unsigned int nr;
	u32 user_size;
	int ret;

	nr = _IOC_NR(cmd);
	if (_IOC_TYPE(cmd) != DPUSIM_TYPE || nr < DPUSIM_TM_CMD_BASE ||
	    nr - DPUSIM_TM_CMD_BASE >= ARRAY_SIZE(dpusim_tm_ioctl_ops))
		return -ENOTTY;
	nr -= DPUSIM_TM_CMD_BASE;
	op = &dpusim_tm_ioctl_ops[nr];
	if (op->ioctl_num != cmd)
		return -ENOTTY;

	ret = get_user(user_size, (u32 __user *)ubuffer);
	if (ret)
		return ret;
	if (user_size < op->min_size)
		return -EINVAL;
	ret = copy_struct_from_user(&buf, op->size, ubuffer, user_size);
	if (ret)
		return ret;

	/*
	 * A post writes back only nr_done, which it first sets to 0: a
	 * struct that cannot be written fails before anything is carried
	 * out.
	 */
	nr_done = &((struct dpusim_tm_post __user *)ubuffer)->nr_done;
	if (op->respond == DPUSIM_TM_OUT_ALWAYS)
		buf.post.nr_done = 0;
	if (atomic_xchg(&ctx->overrun, 0)) {
		ret = -EOVERFLOW;	/* a CQ of the context overran */
	} else {
		if (op->respond == DPUSIM_TM_OUT_ALWAYS && put_user(0, nr_done))
			return -EFAULT;
		ret = op->execute(ctx, &buf);
	}
	if (ret == -EOVERFLOW)
		atomic_set(&ctx->overrun, 0);	/* reported now */
	if (op->respond == DPUSIM_TM_OUT_ALWAYS) {
		if (put_user(buf.post.nr_done, nr_done))
			ret = -EFAULT;
	} else if (op->respond == DPUSIM_TM_OUT_OK && !ret) {
		if (copy_to_user(ubuffer, &buf,
				 min_t(size_t, user_size, op->size))) {
			dpusim_tm_undo_create(ctx, nr, &buf);
			ret = -EFAULT;
		}
	}
	return ret;
}

static int dpusim_tm_mmap(struct file *filp, struct vm_area_struct *vma)
{
	return dpusim_tm_cq_mmap(filp->private_data, vma);
}

static __poll_t dpusim_tm_poll(struct file *filp, poll_table *wait)
{
	struct dpusim_tm_ctx *ctx = filp->private_data;
	struct dpusim_tm_cq *cq;
	unsigned long idx;
	__poll_t mask = 0;

	poll_wait(filp, &ctx->wait, wait);
	if (atomic_read(&ctx->overrun))
		mask |= EPOLLIN | EPOLLRDNORM | EPOLLERR;
	mutex_lock(&ctx->lock);
	xa_for_each(&ctx->cqs, idx, cq) {
		if (dpusim_tm_cq_pending(cq)) {
			mask |= EPOLLIN | EPOLLRDNORM;
			break;
		}
	}
	mutex_unlock(&ctx->lock);
	return mask;
}

static const struct file_operations dpusim_tm_fops = {
	.owner = THIS_MODULE,
	.open = dpusim_tm_open,
	.release = dpusim_tm_release,
	.unlocked_ioctl = dpusim_tm_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = dpusim_tm_mmap,
	.poll = dpusim_tm_poll,
};

/* ---------------------------------------------------------------- sysfs */

static struct dpusim_tm_dev *to_tm(struct device *dev)
{
	return container_of(dev, struct dpusim_tm_dev, dev);
}

#define DPUSIM_TM_STAT_ATTR(_attr, _field)				\
static ssize_t _attr##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%lld\n",				\
			  atomic64_read(&to_tm(dev)->stats._field));	\
}									\
static DEVICE_ATTR_RO(_attr)

DPUSIM_TM_STAT_ATTR(messages, messages);
DPUSIM_TM_STAT_ATTR(matches, matches);
DPUSIM_TM_STAT_ATTR(unexpected, unexpected);
DPUSIM_TM_STAT_ATTR(syncs, syncs);
DPUSIM_TM_STAT_ATTR(rndv_reads, rndv_reads);
DPUSIM_TM_STAT_ATTR(bytes, bytes);
DPUSIM_TM_STAT_ATTR(no_tag, no_tag);
DPUSIM_TM_STAT_ATTR(fins, fins);
DPUSIM_TM_STAT_ATTR(overruns, overruns);

static ssize_t contexts_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&to_tm(dev)->contexts));
}
static DEVICE_ATTR_RO(contexts);

static ssize_t mrs_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&to_tm(dev)->nr_mrs));
}
static DEVICE_ATTR_RO(mrs);

static ssize_t pinned_pages_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n",
			  atomic_long_read(&to_tm(dev)->pinned_pages));
}
static DEVICE_ATTR_RO(pinned_pages);

static struct attribute *dpusim_tm_attrs[] = {
	&dev_attr_messages.attr,
	&dev_attr_matches.attr,
	&dev_attr_unexpected.attr,
	&dev_attr_syncs.attr,
	&dev_attr_rndv_reads.attr,
	&dev_attr_bytes.attr,
	&dev_attr_no_tag.attr,
	&dev_attr_fins.attr,
	&dev_attr_overruns.attr,
	&dev_attr_contexts.attr,
	&dev_attr_mrs.attr,
	&dev_attr_pinned_pages.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dpusim_tm);

static void dpusim_tm_dev_release(struct device *dev)
{
	struct dpusim_tm_dev *tm = to_tm(dev);

	xa_destroy(&tm->mrs);
	xa_destroy(&tm->srqs);
	xa_destroy(&tm->qps);
	kfree(tm);
}

/**
 * dpusim_tm_create - register /dev/dpusim/tm
 * @devt: its device number
 *
 * Return: 0 or a negative errno.
 */
int dpusim_tm_create(dev_t devt)
{
	struct dpusim_tm_dev *tm;
	int ret;

	tm = kzalloc(sizeof(*tm), GFP_KERNEL);
	if (!tm)
		return -ENOMEM;
	xa_init_flags(&tm->mrs, XA_FLAGS_ALLOC1);
	xa_init_flags(&tm->srqs, XA_FLAGS_ALLOC1);
	xa_init_flags(&tm->qps, XA_FLAGS_ALLOC1);
	device_initialize(&tm->dev);
	tm->dev.class = &dpusim_class;
	tm->dev.devt = devt;
	tm->dev.groups = dpusim_tm_groups;
	tm->dev.release = dpusim_tm_dev_release;
	cdev_init(&tm->cdev, &dpusim_tm_fops);
	tm->cdev.owner = THIS_MODULE;
	ret = dev_set_name(&tm->dev, "tm");
	if (ret)
		goto err_put;
	ret = cdev_device_add(&tm->cdev, &tm->dev);
	if (ret)
		goto err_put;
	dpusim_tm = tm;
	return 0;

err_put:
	put_device(&tm->dev);
	return ret;
}

void dpusim_tm_destroy(void)
{
	if (!dpusim_tm)
		return;
	cdev_device_del(&dpusim_tm->cdev, &dpusim_tm->dev);
	put_device(&dpusim_tm->dev);
	dpusim_tm = NULL;
}
