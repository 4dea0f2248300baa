// SPDX-License-Identifier: GPL-2.0
/*
 * Object lifetimes of the tag-matching device: the contexts and their
 * users, the handles and module-wide numbers of objects being created
 * (reserve, then finalize or abort), the reply of a create, the unpublish
 * step of every destroy, and the per-user count of posted buffers.
 *
 * Everything here is called by the object files (tm_mr.c, tm_cq.c,
 * tm_srq.c, tm_qp.c), the data path (tm_msg.c) and the device (tm_dev.c);
 * it calls none of them.
 */
#include <linux/cred.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dpusim.h"
#include "tm.h"

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

/**
 * dpusim_tm_ctx_new - a context for a file being opened
 * @tm: the device
 *
 * Its user is the caller's effective uid; the device stays until the
 * context's last reference goes.
 *
 * Return: the context (one reference, the file's) or NULL.
 */
struct dpusim_tm_ctx *dpusim_tm_ctx_new(struct dpusim_tm_dev *tm)
{
	struct dpusim_tm_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return NULL;
	ctx->uid = current_euid();
	ctx->user = dpusim_tm_user_get(tm, ctx->uid);
	if (!ctx->user) {
		kfree(ctx);
		return NULL;
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
	return ctx;
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
