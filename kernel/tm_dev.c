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

static unsigned int tm_user_bufs = 65536;
module_param(tm_user_bufs, uint, 0644);
MODULE_PARM_DESC(tm_user_bufs,
		 "Tagged and untagged buffers the SRQs of one user may hold (default 65536)");

/**
 * dpusim_tm_bufs_charge - count buffers posted to a context's SRQ
 * @ctx: the SRQ's context, alive (the SRQ is not dead)
 * @n: buffers
 *
 * Return: 0 or -ENOSPC (the user holds tm_user_bufs already).
 */
int dpusim_tm_bufs_charge(struct dpusim_tm_ctx *ctx, u32 n)
{
	struct dpusim_tm_user *u = ctx->user;

	if ((unsigned int)atomic_add_return(n, &u->bufs) >
	    READ_ONCE(tm_user_bufs)) {
		atomic_sub(n, &u->bufs);
		return -ENOSPC;
	}
	atomic_long_add(n, &ctx->tm->posted_bufs);
	return 0;
}

void dpusim_tm_bufs_uncharge(struct dpusim_tm_ctx *ctx, u32 n)
{
	atomic_sub(n, &ctx->user->bufs);
	atomic_long_sub(n, &ctx->tm->posted_bufs);
}

/* The user of @uid, referenced; created with its first context */
static struct dpusim_tm_user *dpusim_tm_user_get(struct dpusim_tm_dev *tm,
						 kuid_t uid)
{
	struct dpusim_tm_user *u;

	mutex_lock(&tm->users_lock);
	u = xa_load(&tm->users, __kuid_val(uid));
	if (u) {
		u->ref++;
		goto out;
	}
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u)
		goto out;
	u->uid = uid;
	u->ref = 1;
	if (xa_is_err(xa_store(&tm->users, __kuid_val(uid), u,
			       GFP_KERNEL_ACCOUNT))) {
		kfree(u);
		u = NULL;
	}
out:
	mutex_unlock(&tm->users_lock);
	return u;
}

static void dpusim_tm_user_put(struct dpusim_tm_dev *tm,
			       struct dpusim_tm_user *u)
{
	mutex_lock(&tm->users_lock);
	if (!--u->ref) {
		WARN_ON_ONCE(atomic_read(&u->bufs));
		xa_erase(&tm->users, __kuid_val(u->uid));
		kfree(u);
	}
	mutex_unlock(&tm->users_lock);
}

static void dpusim_tm_ctx_free(struct kref *ref)
{
	struct dpusim_tm_ctx *ctx = container_of(ref, struct dpusim_tm_ctx,
						 ref);

	xa_destroy(&ctx->mrs);
	xa_destroy(&ctx->cqs);
	xa_destroy(&ctx->srqs);
	xa_destroy(&ctx->qps);
	mutex_destroy(&ctx->lock);
	dpusim_tm_user_put(ctx->tm, ctx->user);
	atomic_dec(&ctx->tm->contexts);
	put_device(&ctx->tm->dev);
	kfree(ctx);
}

void dpusim_tm_ctx_put(struct dpusim_tm_ctx *ctx)
{
	kref_put(&ctx->ref, dpusim_tm_ctx_free);
}

/**
 * dpusim_tm_ucmd_respond - write the reply of a call back to user space
 * @ucmd: the call
 * @cmd_len: bytes of the kernel's struct
 *
 * As much of the struct as the user's size covers.  A create calls it
 * before it publishes its object, so that a failure here aborts an object
 * nobody saw.
 *
 * Return: 0 or -EFAULT.
 */
int dpusim_tm_ucmd_respond(struct dpusim_tm_ucmd *ucmd, size_t cmd_len)
{
	if (copy_to_user(ucmd->ubuffer, ucmd->cmd,
			 min_t(size_t, ucmd->user_size, cmd_len)))
		return -EFAULT;
	return 0;
}

/**
 * dpusim_tm_obj_reserve - reserve a handle for an object being created
 * @ctx: the context
 * @table: one of its tables (XA_FLAGS_ALLOC1)
 * @max: the table's limit, DPUSIM_TM_MAX_*
 * @handle: out, the lowest free handle
 *
 * The slot holds XA_ZERO_ENTRY: lookups read it as NULL, and a destroy
 * of the handle is -ENOENT, until dpusim_tm_obj_finalize() or
 * dpusim_tm_obj_abort().
 *
 * Return: 0, -ENOSPC (the table is full) or -ENOMEM.
 */
int dpusim_tm_obj_reserve(struct dpusim_tm_ctx *ctx, struct xarray *table,
			  u32 max, u32 *handle)
{
	int ret;

	mutex_lock(&ctx->lock);
	ret = xa_alloc(table, handle, NULL, XA_LIMIT(1, max),
		       GFP_KERNEL_ACCOUNT);
	mutex_unlock(&ctx->lock);
	return ret == -EBUSY ? -ENOSPC : ret;
}

/*
 * Publish a reserved handle's object: from now on other threads find it,
 * and may destroy it at once.  The store replaces a reserved slot, so it
 * allocates nothing and cannot fail.
 */
void dpusim_tm_obj_finalize(struct dpusim_tm_ctx *ctx, struct xarray *table,
			    u32 handle, void *obj)
{
	mutex_lock(&ctx->lock);
	WARN_ON_ONCE(xa_is_err(xa_store(table, handle, obj, GFP_KERNEL)));
	mutex_unlock(&ctx->lock);
}

/* Give a reserved handle back; its object was never published. */
void dpusim_tm_obj_abort(struct dpusim_tm_ctx *ctx, struct xarray *table,
			 u32 handle)
{
	mutex_lock(&ctx->lock);
	xa_release(table, handle);
	mutex_unlock(&ctx->lock);
}

/**
 * dpusim_tm_num_reserve - reserve a module-wide number or key
 * @numbers: the device's SRQ or QP numbers, or region keys
 * @limit: the range of values
 * @next: the cursor: numbers are allocated cyclically
 * @num: out
 *
 * As a handle, the slot reads as NULL until xa_store() publishes the
 * object, or xa_release() gives it back.  An object with a number and a
 * handle publishes its number first: until its handle is published
 * nothing can destroy it and so unpublish the number.
 *
 * Return: 0, -ENOSPC or -ENOMEM.
 */
int dpusim_tm_num_reserve(struct xarray *numbers, struct xa_limit limit,
			  u32 *next, u32 *num)
{
	int ret = xa_alloc_cyclic(numbers, num, NULL, limit, next,
				  GFP_KERNEL_ACCOUNT);

	if (ret == -EBUSY)
		return -ENOSPC;
	return ret < 0 ? ret : 0;
}

/**
 * dpusim_tm_obj_unpublish - take a published object out of its table
 * @ctx: the context
 * @table: the table
 * @handle: the handle
 *
 * The first step of every destroy: afterwards no lookup of @ctx finds the
 * object, and the caller owns the table's reference.
 *
 * Return: the object, or NULL (no object, or only a reservation).
 */
void *dpusim_tm_obj_unpublish(struct dpusim_tm_ctx *ctx, struct xarray *table,
			      u32 handle)
{
	void *obj;

	mutex_lock(&ctx->lock);
	obj = xa_load(table, handle);
	if (obj)
		xa_erase(table, handle);
	mutex_unlock(&ctx->lock);
	return obj;
}

static int dpusim_tm_open(struct inode *inode, struct file *filp)
{
	struct dpusim_tm_dev *tm = container_of(inode->i_cdev,
						struct dpusim_tm_dev, cdev);
	struct dpusim_tm_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	ctx->uid = current_euid();
	ctx->user = dpusim_tm_user_get(tm, ctx->uid);
	if (!ctx->user) {
		kfree(ctx);
		return -ENOMEM;
	}
	kref_init(&ctx->ref);
	mutex_init(&ctx->lock);
	xa_init(&ctx->mrs);
	xa_init_flags(&ctx->cqs, XA_FLAGS_ALLOC1);
	xa_init_flags(&ctx->srqs, XA_FLAGS_ALLOC1);
	xa_init_flags(&ctx->qps, XA_FLAGS_ALLOC1);
	init_waitqueue_head(&ctx->wait);
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

/* The handle of a DESTROY_* or DEREG_MR, its reserved fields checked */
static int dpusim_tm_destroy_handle(struct dpusim_tm_ucmd *ucmd, u32 *handle)
{
	const struct dpusim_tm_destroy *d = ucmd->cmd;

	if (d->flags || d->__reserved)
		return -EINVAL;
	*handle = d->handle;
	return 0;
}

static int dpusim_tm_dereg_mr_ioctl(struct dpusim_tm_ucmd *ucmd)
{
	u32 handle;
	int ret = dpusim_tm_destroy_handle(ucmd, &handle);

	if (ret)
		return ret;
	/* key 0 means "all of them" inside the kernel only */
	return handle ? dpusim_tm_dereg_mr(ucmd->ctx, handle) : -ENOENT;
}

static int dpusim_tm_destroy_cq_ioctl(struct dpusim_tm_ucmd *ucmd)
{
	u32 handle;
	int ret = dpusim_tm_destroy_handle(ucmd, &handle);

	return ret ?: dpusim_tm_destroy_cq(ucmd->ctx, handle, false);
}

static int dpusim_tm_destroy_srq_ioctl(struct dpusim_tm_ucmd *ucmd)
{
	u32 handle;
	int ret = dpusim_tm_destroy_handle(ucmd, &handle);

	return ret ?: dpusim_tm_destroy_srq(ucmd->ctx, handle);
}

static int dpusim_tm_destroy_qp_ioctl(struct dpusim_tm_ucmd *ucmd)
{
	u32 handle;
	int ret = dpusim_tm_destroy_handle(ucmd, &handle);

	return ret ?: dpusim_tm_destroy_qp(ucmd->ctx, handle);
}

static int dpusim_tm_connect_ioctl(struct dpusim_tm_ucmd *ucmd)
{
	return dpusim_tm_connect(ucmd->ctx, ucmd->cmd);
}

static int dpusim_tm_post_srq_ops_ioctl(struct dpusim_tm_ucmd *ucmd)
{
	return dpusim_tm_post_srq_ops(ucmd->ctx, ucmd->cmd);
}

static int dpusim_tm_post_srq_recv_ioctl(struct dpusim_tm_ucmd *ucmd)
{
	return dpusim_tm_post_srq_recv(ucmd->ctx, ucmd->cmd);
}

static int dpusim_tm_post_send_ioctl(struct dpusim_tm_ucmd *ucmd)
{
	return dpusim_tm_post_send(ucmd->ctx, ucmd->cmd);
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
 * (it names the failing entry).
 */
struct dpusim_tm_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	unsigned int ioctl_num;
	bool post;
	int (*execute)(struct dpusim_tm_ucmd *ucmd);
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

static const struct dpusim_tm_ioctl_op dpusim_tm_ioctl_ops[] = {
	TM_IOCTL_OP(QUERY, dpusim_tm_query, struct dpusim_tm_query,
		    cap_flags, false),
	TM_IOCTL_OP(REG_MR, dpusim_tm_reg_mr, struct dpusim_tm_reg_mr,
		    __reserved, false),
	TM_IOCTL_OP(DEREG_MR, dpusim_tm_dereg_mr_ioctl,
		    struct dpusim_tm_destroy, __reserved, false),
	TM_IOCTL_OP(CREATE_CQ, dpusim_tm_create_cq,
		    struct dpusim_tm_create_cq, mmap_size, false),
	TM_IOCTL_OP(DESTROY_CQ, dpusim_tm_destroy_cq_ioctl,
		    struct dpusim_tm_destroy, __reserved, false),
	TM_IOCTL_OP(CREATE_SRQ, dpusim_tm_create_srq,
		    struct dpusim_tm_create_srq, __reserved, false),
	TM_IOCTL_OP(DESTROY_SRQ, dpusim_tm_destroy_srq_ioctl,
		    struct dpusim_tm_destroy, __reserved, false),
	TM_IOCTL_OP(CREATE_QP, dpusim_tm_create_qp,
		    struct dpusim_tm_create_qp, qp_num, false),
	TM_IOCTL_OP(DESTROY_QP, dpusim_tm_destroy_qp_ioctl,
		    struct dpusim_tm_destroy, __reserved, false),
	TM_IOCTL_OP(CONNECT, dpusim_tm_connect_ioctl,
		    struct dpusim_tm_connect, srq_num, false),
	TM_IOCTL_OP(POST_SRQ_OPS, dpusim_tm_post_srq_ops_ioctl,
		    struct dpusim_tm_post, wrs, true),
	TM_IOCTL_OP(POST_SRQ_RECV, dpusim_tm_post_srq_recv_ioctl,
		    struct dpusim_tm_post, wrs, true),
	TM_IOCTL_OP(POST_SEND, dpusim_tm_post_send_ioctl,
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
		ret = op->execute(&ucmd);
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
