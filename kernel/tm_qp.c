// SPDX-License-Identifier: GPL-2.0
/*
 * QPs: sender endpoints connected to one TM-SRQ, possibly another
 * process's of the same user.  A send is processed inside the sender's
 * system call (the doorbell): the message is gathered, then delivered to
 * the SRQ under its lock (tm_srq.c).  The receiving side answers through
 * the SRQ (POST_SEND with DPUSIM_TM_POST_FROM_SRQ): short messages (FIN,
 * no-tag) that land inline in a completion of the QP's CQ, and RDMA reads
 * of the QP owner's regions, which is also how the kernel fetches a
 * matched rendezvous payload.
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
			dpusim_tm_srq_flush_cqe(srq->cq, srq->num, qp->num,
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

int dpusim_tm_connect(struct dpusim_tm_ctx *ctx, struct dpusim_tm_connect *cmd)
{
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

/**
 * dpusim_tm_rdma_read - read a region of a QP's owner
 * @qp: the QP whose context must own the region
 * @va: first address in the region
 * @rkey: the region
 * @dst: where the bytes go
 * @len: bytes
 *
 * Return: 0, or -EACCES (no such region, another context's, no
 * REMOTE_READ, or the range leaves it).
 */
int dpusim_tm_rdma_read(struct dpusim_tm_qp *qp, u64 va, u32 rkey,
			struct dpusim_tm_iter *dst, u64 len)
{
	struct dpusim_tm_iter src;
	struct dpusim_tm_seg seg;
	struct dpusim_tm_mr *mr;
	int ret = -EACCES;

	mr = dpusim_tm_mr_lookup(qp->tm, rkey);
	if (!mr)
		return -EACCES;
	if (mr->ctx == qp->ctx &&
	    (mr->access & DPUSIM_TM_ACCESS_REMOTE_READ) &&
	    !dpusim_tm_mr_range(mr, va, len, &seg)) {
		dpusim_tm_iter_seg(&src, &seg);
		dpusim_tm_copy(dst, &src, len);
		ret = 0;
	}
	dpusim_tm_mr_put(mr);
	return ret;
}

/* A gathered message: inline bytes, or an sg list of the sender's regions */
struct dpusim_tm_msg {
	u8 inl[DPUSIM_TM_MAX_INLINE];
	u8 hdr[DPUSIM_TM_MAX_RNDV_HDR_SIZE];
	u32 hdr_len;
	u32 len;
	struct dpusim_tm_sgl *sgl;
	struct dpusim_tm_iter it;
};

static int dpusim_tm_msg_get(struct dpusim_tm_ctx *ctx,
			     const struct dpusim_tm_send_wr *wr, u32 max_sge,
			     struct dpusim_tm_msg *m)
{
	struct dpusim_tm_sge sge[DPUSIM_TM_MAX_SGE];
	struct dpusim_tm_iter hdr, out;
	u32 i, len = 0;

	m->sgl = NULL;
	if (wr->num_sge > max_sge)
		return -EINVAL;
	if (wr->flags & DPUSIM_TM_SEND_INLINE) {
		if (wr->num_sge && copy_from_user(sge, u64_to_user_ptr(wr->sg_list),
						  array_size(wr->num_sge,
							     sizeof(*sge))))
			return -EFAULT;
		for (i = 0; i < wr->num_sge; i++) {
			if (sge[i].length > DPUSIM_TM_MAX_INLINE - len)
				return -E2BIG;
			if (copy_from_user(m->inl + len,
					   u64_to_user_ptr(sge[i].addr),
					   sge[i].length))
				return -EFAULT;
			len += sge[i].length;
		}
		m->len = len;
		dpusim_tm_iter_buf(&m->it, m->inl, len);
	} else {
		m->sgl = dpusim_tm_sgl_get(ctx, wr->sg_list, wr->num_sge,
					   max_sge, 0);
		if (IS_ERR(m->sgl)) {
			int ret = PTR_ERR(m->sgl);

			m->sgl = NULL;
			return ret;
		}
		m->len = m->sgl->bytes;
		dpusim_tm_iter_sgl(&m->it, m->sgl);
	}
	m->hdr_len = min_t(u32, m->len, sizeof(m->hdr));
	hdr = m->it;
	dpusim_tm_iter_buf(&out, m->hdr, m->hdr_len);
	dpusim_tm_copy(&out, &hdr, m->hdr_len);
	return 0;
}

/* Is this a message a QP may send to its SRQ? */
static int dpusim_tm_msg_check(const struct dpusim_tm_msg *m)
{
	const struct dpusim_tm_tmh *tmh = (const void *)m->hdr;

	if (m->len < sizeof(*tmh) || tmh->opcode > DPUSIM_TM_TMH_EAGER)
		return -EINVAL;
	if (tmh->opcode == DPUSIM_TM_TMH_RNDV &&
	    (m->len < sizeof(*tmh) + sizeof(struct dpusim_tm_rvh) ||
	     m->len > DPUSIM_TM_MAX_RNDV_HDR_SIZE))
		return -EINVAL;
	return 0;
}

static int dpusim_tm_send_wr_get(struct dpusim_tm_send_wr *wr,
				 const struct dpusim_tm_send_wr __user *uwr)
{
	if (copy_from_user(wr, uwr, sizeof(*wr)))
		return -EFAULT;
	if ((wr->opcode != DPUSIM_TM_WR_SEND &&
	     wr->opcode != DPUSIM_TM_WR_RDMA_READ) ||
	    (wr->flags & ~(DPUSIM_TM_SEND_SIGNALED | DPUSIM_TM_SEND_INLINE)) ||
	    wr->__reserved || wr->__reserved2)
		return -EINVAL;
	return 0;
}

/* SEND on a QP: srq->lock and qp->lock held by the caller */
static int dpusim_tm_qp_send(struct dpusim_tm_ctx *ctx, struct dpusim_tm_qp *qp,
			     const struct dpusim_tm_send_wr *wr,
			     struct dpusim_tm_msg *m)
{
	struct dpusim_tm_srq *srq = qp->srq;
	int ret;

	if (wr->opcode != DPUSIM_TM_WR_SEND)
		return -EINVAL;
	ret = dpusim_tm_msg_get(ctx, wr, qp->max_sge, m);
	if (!ret)
		ret = dpusim_tm_msg_check(m);
	if (!ret) {
		mutex_lock(&srq->lock);
		ret = dpusim_tm_srq_deliver(srq, qp, m->hdr, m->hdr_len,
					    &m->it, m->len,
					    wr->flags & DPUSIM_TM_SEND_SIGNALED,
					    wr->wr_id);
		mutex_unlock(&srq->lock);
	}
	dpusim_tm_sgl_put(m->sgl);
	return ret;
}

/* From an SRQ to a connected QP: srq->lock held */
static int dpusim_tm_srq_send(struct dpusim_tm_ctx *ctx,
			      struct dpusim_tm_srq *srq, struct dpusim_tm_qp *qp,
			      const struct dpusim_tm_send_wr *wr,
			      struct dpusim_tm_msg *m)
{
	bool signaled = wr->flags & DPUSIM_TM_SEND_SIGNALED;
	struct dpusim_tm_cqe c = {
		.wr_id = wr->wr_id,
		.qp_num = srq->num,
	};
	struct dpusim_tm_iter dst;
	struct dpusim_tm_sgl *sgl;
	int ret;

	if (wr->opcode == DPUSIM_TM_WR_RDMA_READ) {
		if (wr->flags & DPUSIM_TM_SEND_INLINE)
			return -EINVAL;
		sgl = dpusim_tm_sgl_get(ctx, wr->sg_list, wr->num_sge,
					srq->max_sge,
					DPUSIM_TM_ACCESS_LOCAL_WRITE);
		if (IS_ERR(sgl))
			return PTR_ERR(sgl);
		ret = dpusim_tm_cq_reserve(srq->cq, 1);
		if (ret) {
			dpusim_tm_sgl_put(sgl);
			return ret;
		}
		dpusim_tm_iter_sgl(&dst, sgl);
		ret = dpusim_tm_rdma_read(qp, wr->remote_addr, wr->rkey, &dst,
					  sgl->bytes);
		trace_dpusim_tm_rndv_read(qp->num, sgl->bytes, ret);
		c.opcode = DPUSIM_TM_WC_RDMA_READ;
		c.src_qp = qp->num;
		if (ret) {
			c.status = DPUSIM_TM_WC_REM_ACCESS_ERR;
		} else {
			c.byte_len = sgl->bytes;
			atomic64_inc(&srq->tm->stats.rndv_reads);
			atomic64_add(sgl->bytes, &srq->tm->stats.bytes);
		}
		if (ret || signaled) {
			if (dpusim_tm_list_sync_req(&srq->list))
				c.wc_flags |= DPUSIM_TM_WC_F_TM_SYNC_REQ;
			dpusim_tm_cq_push(srq->cq, &c);
		} else {
			dpusim_tm_cq_unreserve(srq->cq, 1);
		}
		dpusim_tm_sgl_put(sgl);
		return 0;
	}

	ret = dpusim_tm_msg_get(ctx, wr, srq->max_sge, m);
	if (ret)
		return ret;
	ret = -E2BIG;
	if (m->len > DPUSIM_TM_MAX_QP_RECV)
		goto out;
	ret = dpusim_tm_cq_reserve(qp->cq, 1);
	if (ret) {
		ret = qp->ctx == ctx ? -EOVERFLOW : -EREMOTEIO;
		goto out;
	}
	ret = dpusim_tm_cq_reserve(srq->cq, signaled);
	if (ret) {
		dpusim_tm_cq_unreserve(qp->cq, 1);
		goto out;
	}
	{
		struct dpusim_tm_cqe r = {
			.byte_len = m->len,
			.qp_num = qp->num,
			.src_qp = srq->num,
			.opcode = DPUSIM_TM_WC_RECV,
			.wc_flags = DPUSIM_TM_WC_F_INLINE,
		};

		memcpy(r.data, m->hdr, m->hdr_len);
		if (m->len >= sizeof(struct dpusim_tm_tmh)) {
			if (m->hdr[0] == DPUSIM_TM_TMH_NO_TAG) {
				r.opcode = DPUSIM_TM_WC_TM_NO_TAG;
			} else if (m->hdr[0] == DPUSIM_TM_TMH_FIN) {
				atomic64_inc(&srq->tm->stats.fins);
				trace_dpusim_tm_fin(qp->num);
			}
		}
		dpusim_tm_cq_push(qp->cq, &r);
	}
	if (signaled) {
		c.opcode = DPUSIM_TM_WC_SEND;
		c.byte_len = m->len;
		c.src_qp = qp->num;
		if (dpusim_tm_list_sync_req(&srq->list))
			c.wc_flags |= DPUSIM_TM_WC_F_TM_SYNC_REQ;
		dpusim_tm_cq_push(srq->cq, &c);
	}
	atomic64_inc(&srq->tm->stats.messages);
	ret = 0;
out:
	dpusim_tm_sgl_put(m->sgl);
	return ret;
}

static int dpusim_tm_post_send_srq(struct dpusim_tm_ctx *ctx,
				   struct dpusim_tm_post *cmd,
				   struct dpusim_tm_msg *m)
{
	struct dpusim_tm_send_wr __user *uwrs = u64_to_user_ptr(cmd->wrs);
	struct dpusim_tm_send_wr wr;
	struct dpusim_tm_srq *srq;
	struct dpusim_tm_qp *qp;
	int ret = 0;
	u32 i;

	srq = dpusim_tm_srq_get(ctx, cmd->handle);
	if (!srq)
		return -ENOENT;

	mutex_lock(&srq->lock);
	qp = srq->dead ? NULL : xa_load(&srq->qps, cmd->remote_qpn);
	if (!qp)
		ret = -ENOENT;
	for (i = 0; !ret && i < cmd->nr_wr; i++) {
		ret = dpusim_tm_send_wr_get(&wr, &uwrs[i]);
		if (!ret)
			ret = dpusim_tm_srq_send(ctx, srq, qp, &wr, m);
		if (ret)
			break;
	}
	mutex_unlock(&srq->lock);
	dpusim_tm_srq_put(srq);
	cmd->nr_done = i;
	return ret;
}

int dpusim_tm_post_send(struct dpusim_tm_ctx *ctx, struct dpusim_tm_post *cmd)
{
	struct dpusim_tm_send_wr __user *uwrs = u64_to_user_ptr(cmd->wrs);
	struct dpusim_tm_send_wr wr;
	struct dpusim_tm_msg msg, *m = &msg;
	struct dpusim_tm_qp *qp;
	int ret = 0;
	u32 i = 0;

	if ((cmd->flags & ~DPUSIM_TM_POST_FROM_SRQ) || !cmd->nr_wr ||
	    (!(cmd->flags & DPUSIM_TM_POST_FROM_SRQ) && cmd->remote_qpn))
		return -EINVAL;
	if (cmd->nr_wr > DPUSIM_TM_MAX_WR)
		return -E2BIG;
	if (cmd->flags & DPUSIM_TM_POST_FROM_SRQ)
		return dpusim_tm_post_send_srq(ctx, cmd, m);

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
			ret = dpusim_tm_qp_send(ctx, qp, &wr, m);
		if (ret)
			break;
	}
	mutex_unlock(&qp->lock);
	dpusim_tm_qp_put(qp);
	cmd->nr_done = i;
	return ret;
}
