// SPDX-License-Identifier: GPL-2.0
/*
 * The tag-matching device, /dev/dpusim/tm: the file operations (one
 * context per open file, tm_obj.c), the table-driven ioctl dispatch (as
 * the rank's, iommufd's and fwctl's) to the object files, mmap of
 * completion rings, poll(), the counters in sysfs and the device itself.
 *
 * The device is mode 0666, as rdma-core's uverbs nodes are: what a
 * process may reach is decided per object (a QP connects only to an SRQ
 * of the same effective uid; regions are the process's own memory or a
 * rank it has open).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dpusim.h"
#include "tm.h"

static struct dpusim_tm_dev *dpusim_tm;

static int dpusim_tm_open(struct inode *inode, struct file *filp)
{
	struct dpusim_tm_dev *tm = container_of(inode->i_cdev,
						struct dpusim_tm_dev, cdev);
	struct dpusim_tm_ctx *ctx = dpusim_tm_ctx_new(tm);

	if (!ctx)
		return -ENOMEM;
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
	dpusim_tm_destroy_cqs(ctx);
	dpusim_tm_dereg_mrs(ctx);
	dpusim_tm_ctx_put(ctx);
	return 0;
}

/* ---------------------------------------------------------------- ioctl */

static int dpusim_tm_query(struct dpusim_tm_ucmd *ucmd)
{
	struct dpusim_tm_query *q = ucmd->cmd;

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
	return dpusim_tm_ucmd_respond(ucmd, sizeof(*q));
}

/*
 * DESTROY_* and DEREG_MR: the handle, its reserved fields checked.  No
 * table hands out handle or key 0, so 0 is -ENOENT for all of them.
 */
static int dpusim_tm_destroy_obj(struct dpusim_tm_ucmd *ucmd,
				 int (*destroy)(struct dpusim_tm_ctx *ctx,
						u32 handle))
{
	const struct dpusim_tm_destroy *d = ucmd->cmd;

	if (d->flags || d->__reserved)
		return -EINVAL;
	return d->handle ? destroy(ucmd->ctx, d->handle) : -ENOENT;
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

static_assert(sizeof(union dpusim_tm_ucmd_buffer) <= DPUSIM_UCMD_MAX_SIZE);

/*
 * Replies: a handler that has one writes it itself, with
 * dpusim_tm_ucmd_respond() (a create before it publishes its object).
 * @post: the call is a post, whose @nr_done goes back whatever happens
 * (it names the failing entry).  @destroy: a DESTROY_* or DEREG_MR, which
 * runs instead of @execute on the handle of its struct dpusim_tm_destroy.
 */
struct dpusim_tm_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	unsigned int ioctl_num;
	bool post;
	int (*execute)(struct dpusim_tm_ucmd *ucmd);
	int (*destroy)(struct dpusim_tm_ctx *ctx, u32 handle);
};

#define TM_IOCTL_OP(_name, _fn, _struct, _last, _post)			\
	[DPUSIM_CMD_TM_##_name - DPUSIM_TM_CMD_BASE] = {		\
		.size = sizeof(_struct) +				\
			BUILD_BUG_ON_ZERO(sizeof(union dpusim_tm_ucmd_buffer) < \
					  sizeof(_struct)),		\
		.min_size = offsetofend(_struct, _last),		\
		.ioctl_num = DPUSIM_IOCTL_TM_##_name,			\
		.post = _post,						\
		.execute = _fn,						\
	}

#define TM_DESTROY_OP(_name, _fn)					\
	[DPUSIM_CMD_TM_##_name - DPUSIM_TM_CMD_BASE] = {		\
		.size = sizeof(struct dpusim_tm_destroy),		\
		.min_size = offsetofend(struct dpusim_tm_destroy,	\
					__reserved),			\
		.ioctl_num = DPUSIM_IOCTL_TM_##_name,			\
		.destroy = _fn,						\
	}

static const struct dpusim_tm_ioctl_op dpusim_tm_ioctl_ops[] = {
	TM_IOCTL_OP(QUERY, dpusim_tm_query, struct dpusim_tm_query,
		    cap_flags, false),
	TM_IOCTL_OP(REG_MR, dpusim_tm_reg_mr, struct dpusim_tm_reg_mr,
		    __reserved, false),
	TM_DESTROY_OP(DEREG_MR, dpusim_tm_dereg_mr),
	TM_IOCTL_OP(CREATE_CQ, dpusim_tm_create_cq,
		    struct dpusim_tm_create_cq, mmap_size, false),
	TM_DESTROY_OP(DESTROY_CQ, dpusim_tm_destroy_cq),
	TM_IOCTL_OP(CREATE_SRQ, dpusim_tm_create_srq,
		    struct dpusim_tm_create_srq, __reserved, false),
	TM_DESTROY_OP(DESTROY_SRQ, dpusim_tm_destroy_srq),
	TM_IOCTL_OP(CREATE_QP, dpusim_tm_create_qp,
		    struct dpusim_tm_create_qp, qp_num, false),
	TM_DESTROY_OP(DESTROY_QP, dpusim_tm_destroy_qp),
	TM_IOCTL_OP(CONNECT, dpusim_tm_connect,
		    struct dpusim_tm_connect, srq_num, false),
	TM_IOCTL_OP(POST_SRQ_OPS, dpusim_tm_post_srq_ops,
		    struct dpusim_tm_post, wrs, true),
	TM_IOCTL_OP(POST_SRQ_RECV, dpusim_tm_post_srq_recv,
		    struct dpusim_tm_post, wrs, true),
	TM_IOCTL_OP(POST_SEND, dpusim_tm_post_send,
		    struct dpusim_tm_post, wrs, true),
};

static long dpusim_tm_ioctl(struct file *filp, unsigned int cmd,
			    unsigned long arg)
{
	union dpusim_tm_ucmd_buffer buf;
	struct dpusim_tm_ucmd ucmd = {
		.ctx = filp->private_data,
		.ubuffer = (void __user *)arg,
		.cmd = &buf,
	};
	const struct dpusim_tm_ioctl_op *op;
	u32 __user *nr_done;
	unsigned int nr;
	int ret;

	nr = _IOC_NR(cmd);
	if (_IOC_TYPE(cmd) != DPUSIM_TYPE || nr < DPUSIM_TM_CMD_BASE ||
	    nr - DPUSIM_TM_CMD_BASE >= ARRAY_SIZE(dpusim_tm_ioctl_ops))
		return -ENOTTY;
	op = &dpusim_tm_ioctl_ops[nr - DPUSIM_TM_CMD_BASE];
	if (op->ioctl_num != cmd)
		return -ENOTTY;

	ret = get_user(ucmd.user_size, (u32 __user *)ucmd.ubuffer);
	if (ret)
		return ret;
	if (ucmd.user_size < op->min_size)
		return -EINVAL;
	/* bounds copy_struct_from_user()'s scan of the tail, as clone3's */
	if (ucmd.user_size > DPUSIM_UCMD_MAX_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&buf, op->size, ucmd.ubuffer,
				    ucmd.user_size);
	if (ret)
		return ret;

	/*
	 * A post writes back only nr_done, which it first sets to 0: a
	 * struct that cannot be written fails before anything is carried
	 * out.
	 */
	nr_done = &((struct dpusim_tm_post __user *)ucmd.ubuffer)->nr_done;
	if (op->post)
		buf.post.nr_done = 0;
	if (atomic_xchg(&ucmd.ctx->overrun, 0)) {
		ret = -EOVERFLOW;	/* a CQ of the context overran */
	} else {
		if (op->post && put_user(0, nr_done))
			return -EFAULT;
		ret = op->destroy ?
		      dpusim_tm_destroy_obj(&ucmd, op->destroy) :
		      op->execute(&ucmd);
	}
	if (ret == -EOVERFLOW)
		atomic_set(&ucmd.ctx->overrun, 0);	/* reported now */
	if (op->post && put_user(buf.post.nr_done, nr_done))
		ret = -EFAULT;
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

static ssize_t charged_pages_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n",
			  atomic_long_read(&to_tm(dev)->charged_pages));
}
static DEVICE_ATTR_RO(charged_pages);

static ssize_t posted_bufs_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n",
			  atomic_long_read(&to_tm(dev)->posted_bufs));
}
static DEVICE_ATTR_RO(posted_bufs);

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
	&dev_attr_charged_pages.attr,
	&dev_attr_posted_bufs.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dpusim_tm);

static void dpusim_tm_dev_release(struct device *dev)
{
	struct dpusim_tm_dev *tm = to_tm(dev);

	xa_destroy(&tm->mrs);
	xa_destroy(&tm->srqs);
	xa_destroy(&tm->qps);
	xa_destroy(&tm->users);
	mutex_destroy(&tm->users_lock);
	kfree(tm);
}

/**
 * dpusim_tm_create - register /dev/dpusim/tm
 * @devt: its device number
 * @class: the "dpusim" class
 *
 * Return: 0 or a negative errno.
 */
int dpusim_tm_create(dev_t devt, struct class *class)
{
	struct dpusim_tm_dev *tm;
	int ret;

	tm = kzalloc(sizeof(*tm), GFP_KERNEL);
	if (!tm)
		return -ENOMEM;
	xa_init_flags(&tm->mrs, XA_FLAGS_ALLOC1);
	xa_init_flags(&tm->srqs, XA_FLAGS_ALLOC1);
	xa_init_flags(&tm->qps, XA_FLAGS_ALLOC1);
	xa_init(&tm->users);
	mutex_init(&tm->users_lock);
	device_initialize(&tm->dev);
	tm->dev.class = class;
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
