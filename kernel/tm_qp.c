// SPDX-License-Identifier: GPL-2.0
/*
 * QPs: sender endpoints connected to one TM-SRQ, possibly another
 * process's of the same user.  Here: the QP's lifetime, CONNECT, and the
 * POST_SEND doorbell, whose sends are processed inside the sender's system
 * call by the data path (tm_msg.c): each message is gathered, then
 * delivered to the SRQ under its lock.  The receiving side answers through
 * the SRQ (POST_SEND with DPUSIM_TM_POST_FROM_SRQ, tm_srq.c): short
 * messages (FIN, no-tag) that land inline in a completion of the QP's CQ,
 * and RDMA reads of the QP owner's regions.
 */
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dpusim.h"
#include "tm.h"
#include "trace.h"

static void dpusim_tm_qp_free(struct kref *ref)
{
	struct dpusim_tm_qp *qp = container_of(ref, struct dpusim_tm_qp, ref);

	dpusim_tm_cq_put(qp->cq);
	mutex_destroy(&qp->lock);
	kfree_rcu(qp, rcu);	/* dpusim_tm_qp_get() looks up under RCU */
}

static void dpusim_tm_qp_put(struct dpusim_tm_qp *qp)
{
	kref_put(&qp->ref, dpusim_tm_qp_free);
}

int dpusim_tm_create_qp(struct dpusim_tm_ucmd *ucmd)
{
	struct dpusim_tm_create_qp *cmd = ucmd->cmd;
	struct dpusim_tm_ctx *ctx = ucmd->ctx;
	struct dpusim_tm_dev *tm = ctx->tm;
	struct dpusim_tm_qp *qp;
	int ret;

	if (cmd->flags || !cmd->max_sge)
		return -EINVAL;
	if (cmd->max_sge > DPUSIM_TM_MAX_SGE)
		return -E2BIG;
	qp = kzalloc(sizeof(*qp), GFP_KERNEL_ACCOUNT);
	if (!qp)
		return -ENOMEM;
	kref_init(&qp->ref);
	mutex_init(&qp->lock);
	qp->tm = tm;
	qp->ctx = ctx;
	qp->max_sge = cmd->max_sge;
	/* the send path looks QPs up under RCU and uses @cq at once */
	qp->cq = dpusim_tm_cq_use(ctx, cmd->cq_handle);
	if (!qp->cq) {
		ret = -ENOENT;
		goto err_free;
	}
	ret = dpusim_tm_obj_reserve(ctx, &ctx->qps, DPUSIM_TM_MAX_QP,
				    &qp->handle);
	if (ret)
		goto err_unuse;
	ret = dpusim_tm_num_reserve(&tm->qps, xa_limit_31b, &tm->next_qp,
				    &qp->num);
	if (ret)
		goto err_abort;
	cmd->handle = qp->handle;
	cmd->qp_num = qp->num;
	ret = dpusim_tm_ucmd_respond(ucmd, sizeof(*cmd));
	if (ret)
		goto err_release;
	xa_store(&tm->qps, cmd->qp_num, qp, GFP_KERNEL);
	dpusim_tm_obj_finalize(ctx, &ctx->qps, cmd->handle, qp);
	return 0;

err_release:
	xa_release(&tm->qps, qp->num);
err_abort:
	dpusim_tm_obj_abort(ctx, &ctx->qps, qp->handle);
err_unuse:
	dpusim_tm_cq_unuse(qp->cq);
err_free:
	mutex_destroy(&qp->lock);
	kfree(qp);
	return ret;
}

/**
 * dpusim_tm_destroy_qp - destroy a QP of the context
 * @ctx: the context
 * @handle: the QP
 *
 * Waits for a send under way; ends the connection (the SRQ's CQ gets a
 * flush completion naming the QP).  The QP is dead from then on: a
 * CONNECT or a send that still holds a reference finds it so under
 * qp->lock and fails with -ENOENT.
 *
 * Return: 0 or -ENOENT.
 */
int dpusim_tm_destroy_qp(struct dpusim_tm_ctx *ctx, u32 handle)
{
	struct dpusim_tm_srq *srq;
	struct dpusim_tm_qp *qp;

	qp = dpusim_tm_obj_unpublish(ctx, &ctx->qps, handle);
	if (!qp)
		return -ENOENT;

	mutex_lock(&qp->lock);
	qp->dead = true;
	srq = qp->srq;
	if (srq) {
		mutex_lock(&srq->lock);
		if (!srq->dead) {
			xa_erase(&srq->qps, qp->num);
			dpusim_tm_flush_cqe(srq->cq, srq->num, qp->num,
					    dpusim_tm_list_sync_req(&srq->list) ?
					    DPUSIM_TM_WC_F_TM_SYNC_REQ : 0);
		}
		mutex_unlock(&srq->lock);
		qp->srq = NULL;
		dpusim_tm_srq_put(srq);
	}
	mutex_unlock(&qp->lock);
	xa_erase(&ctx->tm->qps, qp->num);
	atomic_dec(&qp->cq->users);
	dpusim_tm_qp_put(qp);	/* the table's reference */
	return 0;
}

/* The QP of a handle, referenced; lock-free: the send path's lookup */
static struct dpusim_tm_qp *dpusim_tm_qp_get(struct dpusim_tm_ctx *ctx,
					     u32 handle)
{
	struct dpusim_tm_qp *qp;

	rcu_read_lock();
	qp = xa_load(&ctx->qps, handle);
	if (qp && !kref_get_unless_zero(&qp->ref))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

int dpusim_tm_connect(struct dpusim_tm_ucmd *ucmd)
{
	struct dpusim_tm_connect *cmd = ucmd->cmd;
	struct dpusim_tm_ctx *ctx = ucmd->ctx;
	struct dpusim_tm_dev *tm = ctx->tm;
	struct dpusim_tm_srq *srq;
	struct dpusim_tm_qp *qp;
	int ret;

	if (cmd->flags)
		return -EINVAL;
	qp = dpusim_tm_qp_get(ctx, cmd->qp_handle);
	if (!qp)
		return -ENOENT;

	xa_lock(&tm->srqs);
	srq = xa_load(&tm->srqs, cmd->srq_num);
	if (srq && !kref_get_unless_zero(&srq->ref))
		srq = NULL;
	xa_unlock(&tm->srqs);
	if (!srq) {
		ret = -ENOENT;
		goto out_qp;
	}
	if (!uid_eq(srq->uid, current_euid())) {
		ret = -EACCES;
		goto out_srq;
	}

	mutex_lock(&qp->lock);
	if (qp->dead) {
		ret = -ENOENT;
		goto out_unlock;
	}
	if (qp->srq) {
		ret = -EISCONN;
		goto out_unlock;
	}
	mutex_lock(&srq->lock);
	ret = srq->dead ? -ENOENT :
		xa_insert(&srq->qps, qp->num, qp, GFP_KERNEL_ACCOUNT);
	mutex_unlock(&srq->lock);
	if (!ret) {
		qp->srq = srq;
		srq = NULL;	/* the QP keeps the reference */
	}
out_unlock:
	mutex_unlock(&qp->lock);
out_srq:
	if (srq)
		dpusim_tm_srq_put(srq);
out_qp:
	dpusim_tm_qp_put(qp);
	return ret;
}

int dpusim_tm_post_send(struct dpusim_tm_ucmd *ucmd)
{
	struct dpusim_tm_post *cmd = ucmd->cmd;
	struct dpusim_tm_ctx *ctx = ucmd->ctx;
	struct dpusim_tm_send_wr __user *uwrs = u64_to_user_ptr(cmd->wrs);
	struct dpusim_tm_send_wr wr;
	struct dpusim_tm_qp *qp;
	int ret = 0;
	u32 i = 0;

	if ((cmd->flags & ~DPUSIM_TM_POST_FROM_SRQ) || !cmd->nr_wr ||
	    (!(cmd->flags & DPUSIM_TM_POST_FROM_SRQ) && cmd->remote_qpn))
		return -EINVAL;
	if (cmd->nr_wr > DPUSIM_TM_MAX_WR)
		return -E2BIG;
	if (cmd->flags & DPUSIM_TM_POST_FROM_SRQ)
		return dpusim_tm_post_srq_send(ctx, cmd);

	qp = dpusim_tm_qp_get(ctx, cmd->handle);
	if (!qp)
		return -ENOENT;
	mutex_lock(&qp->lock);
	if (qp->dead)
		ret = -ENOENT;
	else if (!qp->srq)
		ret = -ENOTCONN;
	for (; !ret && i < cmd->nr_wr; i++) {
		ret = dpusim_tm_send_wr_get(&wr, &uwrs[i]);
		if (!ret)
			ret = dpusim_tm_qp_send(ctx, qp, &wr);
		if (ret)
			break;
	}
	mutex_unlock(&qp->lock);
	dpusim_tm_qp_put(qp);
	cmd->nr_done = i;
	return ret;
}
