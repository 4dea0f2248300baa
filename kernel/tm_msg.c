// SPDX-License-Identifier: GPL-2.0
/*
 * The message data path of tag matching, apart from the objects it runs
 * on (as rxe keeps rxe_req.c and rxe_resp.c apart from its object
 * files): a QP's message delivered to its SRQ (matched against the tag
 * list, copied into the tagged buffer or read from the sender's region for
 * a rendezvous, or handed whole to the next untagged buffer), the SRQ's
 * sends back to a connected QP (inline messages and RDMA reads), and the
 * completions all of them write.
 *
 * Every operation reserves the completions it will write before it
 * changes anything: a full CQ refuses the operation (overrun), it never
 * loses a completion.
 *
 * The callers (tm_qp.c, tm_srq.c) look the objects up, hold their locks
 * and check that they are alive; nothing here looks an object up by
 * handle or calls back into the object files.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dpusim.h"
#include "tm.h"
#include "trace.h"

/* Free a tagged buffer that is in no list, with its sg list */
void dpusim_tm_entry_drop(struct dpusim_tm_entry *e)
{
	dpusim_tm_sgl_put(e->sgl);
	kfree(e);
}

/* Take an untagged buffer off its SRQ's list and free it */
void dpusim_tm_rbuf_drop(struct dpusim_tm_rbuf *rb)
{
	list_del(&rb->node);
	dpusim_tm_sgl_put(rb->sgl);
	kfree(rb);
}

/*
 * A posted buffer is done with (consumed, deleted, or its post failed):
 * it no longer counts against its user.  srq->lock held, @srq not dead,
 * so its context (and its user) is alive.
 */
void dpusim_tm_srq_entry_done(struct dpusim_tm_srq *srq,
			      struct dpusim_tm_entry *e)
{
	dpusim_tm_entry_drop(e);
	dpusim_tm_bufs_uncharge(srq->ctx, 1);
}

static void dpusim_tm_srq_rbuf_done(struct dpusim_tm_srq *srq,
				    struct dpusim_tm_rbuf *rb)
{
	dpusim_tm_rbuf_drop(rb);
	srq->nr_rbufs--;
	dpusim_tm_bufs_uncharge(srq->ctx, 1);
}

/* A completion of the SRQ's CQ: its number, and SYNC_REQ if due. */
void dpusim_tm_srq_cqe(struct dpusim_tm_srq *srq, struct dpusim_tm_cqe *c)
{
	c->qp_num = srq->num;
	if (dpusim_tm_list_sync_req(&srq->list))
		c->wc_flags |= DPUSIM_TM_WC_F_TM_SYNC_REQ;
}

/**
 * dpusim_tm_flush_cqe - tell a peer its connection ended
 * @cq: the peer's CQ
 * @qp_num: qp_num of the completion (the CQ's QP or SRQ)
 * @src_qp: the other end
 * @wc_flags: DPUSIM_TM_WC_F_TM_SYNC_REQ on an SRQ's CQ when due
 *
 * Best effort: a full CQ counts an overrun.
 */
void dpusim_tm_flush_cqe(struct dpusim_tm_cq *cq, u32 qp_num, u32 src_qp,
			 u16 wc_flags)
{
	struct dpusim_tm_cqe c = {
		.opcode = DPUSIM_TM_WC_RECV,
		.status = DPUSIM_TM_WC_WR_FLUSH_ERR,
		.wc_flags = wc_flags,
		.qp_num = qp_num,
		.src_qp = src_qp,
	};

	if (!dpusim_tm_cq_reserve(cq, 1))
		dpusim_tm_cq_push(cq, &c);
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
static int dpusim_tm_rdma_read(struct dpusim_tm_qp *qp, u64 va, u32 rkey,
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

/*
 * Reserve @n completions on the SRQ's CQ and @m on the sender's: a full
 * receiver CQ is -EREMOTEIO for another process's sender, -EOVERFLOW for
 * its own.
 */
static int dpusim_tm_srq_reserve(struct dpusim_tm_srq *srq,
				 struct dpusim_tm_qp *qp, u32 n, u32 m)
{
	int ret;

	ret = dpusim_tm_cq_reserve(srq->cq, n);
	if (ret)
		return srq->cq->ctx == qp->ctx ? -EOVERFLOW : -EREMOTEIO;
	ret = dpusim_tm_cq_reserve(qp->cq, m);
	if (ret)
		dpusim_tm_cq_unreserve(srq->cq, n);
	return ret;
}

/*
 * A rendezvous request that matched @e; srq->lock held.  The payload is
 * read from the sender's region at once (RDMA read), and the sender gets
 * the FIN inline in a completion of its CQ.
 */
static int dpusim_tm_srq_rndv(struct dpusim_tm_srq *srq,
			      struct dpusim_tm_qp *qp,
			      struct dpusim_tm_entry *e, const u8 *hdr,
			      u32 signaled)
{
	const struct dpusim_tm_tmh *tmh = (const void *)hdr;
	const struct dpusim_tm_rvh *rvh = (const void *)(hdr + sizeof(*tmh));
	struct dpusim_tm_cqe c = {
		.wr_id = e->wr_id,
		.tag = be64_to_cpu(tmh->tag),
		.priv = be32_to_cpu(tmh->app_ctx),
		.src_qp = qp->num,
		.opcode = DPUSIM_TM_WC_TM_RECV,
		.wc_flags = DPUSIM_TM_WC_F_TM_MATCH,
		.handle = e->handle,
	};
	struct dpusim_tm_cqe fin = {
		.qp_num = qp->num,
		.src_qp = srq->num,
		.opcode = DPUSIM_TM_WC_RECV,
		.wc_flags = DPUSIM_TM_WC_F_INLINE,
		.byte_len = 2 * sizeof(*tmh),
	};
	struct dpusim_tm_iter dst, src;
	u32 len = be32_to_cpu(rvh->len);
	int ret;

	dpusim_tm_iter_sgl(&dst, e->sgl);
	if (len > e->sgl->bytes) {
		/* software finishes it: the headers go to the buffer */
		ret = dpusim_tm_srq_reserve(srq, qp, 1, signaled);
		if (ret)
			return ret;
		dpusim_tm_iter_buf(&src, (void *)hdr, 2 * sizeof(*tmh));
		c.byte_len = dpusim_tm_copy(&dst, &src, 2 * sizeof(*tmh));
		c.status = DPUSIM_TM_WC_TM_RNDV_INCOMPLETE;
		dpusim_tm_list_remove(&srq->list, e);
		trace_dpusim_tm_match(srq->num, c.tag, c.handle, len, true);
		dpusim_tm_srq_cqe(srq, &c);
		dpusim_tm_cq_push(srq->cq, &c);
		dpusim_tm_srq_entry_done(srq, e);
		return 0;
	}

	ret = dpusim_tm_srq_reserve(srq, qp, 2, signaled + 1);
	if (ret)
		return ret;
	dpusim_tm_list_remove(&srq->list, e);
	trace_dpusim_tm_match(srq->num, c.tag, c.handle, len, true);
	c.byte_len = len;
	dpusim_tm_srq_cqe(srq, &c);
	dpusim_tm_cq_push(srq->cq, &c);

	ret = dpusim_tm_rdma_read(qp, be64_to_cpu(rvh->va),
				  be32_to_cpu(rvh->rkey), &dst, len);
	c.wc_flags = 0;
	trace_dpusim_tm_rndv_read(qp->num, len, ret);
	if (ret) {
		c.status = DPUSIM_TM_WC_REM_ACCESS_ERR;
		c.byte_len = 0;
		fin.status = DPUSIM_TM_WC_REM_ACCESS_ERR;
	} else {
		c.wc_flags = DPUSIM_TM_WC_F_TM_DATA_VALID;
		atomic64_inc(&srq->tm->stats.rndv_reads);
		atomic64_inc(&srq->tm->stats.fins);
		atomic64_add(len, &srq->tm->stats.bytes);
	}
	dpusim_tm_srq_cqe(srq, &c);
	dpusim_tm_cq_push(srq->cq, &c);
	memcpy(fin.data, hdr, 2 * sizeof(*tmh));
	if (!ret)
		fin.data[0] = DPUSIM_TM_TMH_FIN;
	dpusim_tm_cq_push(qp->cq, &fin);
	if (!ret)
		trace_dpusim_tm_fin(qp->num);
	dpusim_tm_srq_entry_done(srq, e);
	return 0;
}

/**
 * dpusim_tm_srq_deliver - one message from @qp arrives at @srq
 * @srq: the SRQ, locked
 * @qp: the sender, locked
 * @hdr: the first @hdr_len bytes of the message (at least the TMH; the
 *       whole request for a rendezvous)
 * @hdr_len: bytes of @hdr
 * @msg: the whole message, at its start
 * @len: bytes of the message
 * @signaled: write a send completion to the sender's CQ
 * @wr_id: its wr_id
 *
 * Return: 0; -ECONNRESET (SRQ gone); -EAGAIN (an untagged buffer was
 * needed and none is posted); -EREMOTEIO / -EOVERFLOW (a CQ is full).
 * Nothing is consumed when it fails.
 */
static int dpusim_tm_srq_deliver(struct dpusim_tm_srq *srq,
				 struct dpusim_tm_qp *qp,
				 const u8 *hdr, u32 hdr_len,
				 struct dpusim_tm_iter *msg, u32 len,
				 bool signaled, u64 wr_id)
{
	const struct dpusim_tm_tmh *tmh = (const void *)hdr;
	struct dpusim_tm_stats *st = &srq->tm->stats;
	u8 op = tmh->opcode;
	struct dpusim_tm_cqe c = {
		.tag = be64_to_cpu(tmh->tag),
		.priv = be32_to_cpu(tmh->app_ctx),
		.src_qp = qp->num,
	};
	struct dpusim_tm_entry *e = NULL;
	struct dpusim_tm_rbuf *rb;
	struct dpusim_tm_iter dst;
	u64 n;
	int ret;

	if (srq->dead || qp->reset)
		return -ECONNRESET;
	if (op == DPUSIM_TM_TMH_EAGER || op == DPUSIM_TM_TMH_RNDV)
		e = dpusim_tm_list_match(&srq->list, c.tag);

	if (e && op == DPUSIM_TM_TMH_RNDV) {
		ret = dpusim_tm_srq_rndv(srq, qp, e, hdr, signaled);
		if (ret)
			return ret;
		atomic64_inc(&st->matches);
	} else if (e) {
		ret = dpusim_tm_srq_reserve(srq, qp, 1, signaled);
		if (ret)
			return ret;
		dpusim_tm_iter_skip(msg, sizeof(*tmh));
		dpusim_tm_iter_sgl(&dst, e->sgl);
		n = dpusim_tm_copy(&dst, msg, len - sizeof(*tmh));
		c.wr_id = e->wr_id;
		c.handle = e->handle;
		c.opcode = DPUSIM_TM_WC_TM_RECV;
		c.wc_flags = DPUSIM_TM_WC_F_TM_MATCH |
			     DPUSIM_TM_WC_F_TM_DATA_VALID;
		c.byte_len = n;
		if (n < len - sizeof(*tmh))
			c.status = DPUSIM_TM_WC_LOC_LEN_ERR;
		trace_dpusim_tm_match(srq->num, c.tag, c.handle, n, false);
		/*
		 * The completion first, the bookkeeping after: the receiver
		 * may see it at once, and the SRQ's lock, held, keeps its
		 * next op from finding the entry still listed.
		 */
		dpusim_tm_srq_cqe(srq, &c);
		dpusim_tm_cq_push(srq->cq, &c);
		dpusim_tm_list_remove(&srq->list, e);
		dpusim_tm_srq_entry_done(srq, e);
		atomic64_inc(&st->matches);
		atomic64_add(n, &st->bytes);
	} else {
		rb = list_first_entry_or_null(&srq->rbufs,
					      struct dpusim_tm_rbuf, node);
		if (!rb)
			return -EAGAIN;
		ret = dpusim_tm_srq_reserve(srq, qp, 1, signaled);
		if (ret)
			return ret;
		dpusim_tm_iter_sgl(&dst, rb->sgl);
		n = dpusim_tm_copy(&dst, msg, len);
		c.wr_id = rb->wr_id;
		c.byte_len = n;
		if (n < len)
			c.status = DPUSIM_TM_WC_LOC_LEN_ERR;
		if (op == DPUSIM_TM_TMH_NO_TAG) {
			c.opcode = DPUSIM_TM_WC_TM_NO_TAG;
			atomic64_inc(&st->no_tag);
		} else {
			c.opcode = DPUSIM_TM_WC_RECV;
			if (op == DPUSIM_TM_TMH_FIN) {
				atomic64_inc(&st->fins);
			} else {
				dpusim_tm_list_unexpected(&srq->list);
				atomic64_inc(&st->unexpected);
				trace_dpusim_tm_unexpected(srq->num, c.tag, n);
			}
		}
		dpusim_tm_srq_cqe(srq, &c);
		dpusim_tm_cq_push(srq->cq, &c);
		dpusim_tm_srq_rbuf_done(srq, rb);
		atomic64_add(n, &st->bytes);
	}
	atomic64_inc(&st->messages);
	if (signaled) {
		struct dpusim_tm_cqe s = {
			.wr_id = wr_id,
			.qp_num = qp->num,
			.opcode = DPUSIM_TM_WC_SEND,
			.byte_len = len,
		};

		dpusim_tm_cq_push(qp->cq, &s);
	}
	return 0;
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

/* Copy in one work request of a POST_SEND and check its fields */
int dpusim_tm_send_wr_get(struct dpusim_tm_send_wr *wr,
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

/**
 * dpusim_tm_qp_send - one SEND of a QP to its SRQ
 * @ctx: the sender's context
 * @qp: the sender, locked, alive and connected
 * @wr: the work request, checked by dpusim_tm_send_wr_get()
 *
 * Gathers the message, then delivers it under the SRQ's lock.
 *
 * Return: 0 or a negative errno as for DPUSIM_IOCTL_TM_POST_SEND.
 */
int dpusim_tm_qp_send(struct dpusim_tm_ctx *ctx, struct dpusim_tm_qp *qp,
		      const struct dpusim_tm_send_wr *wr)
{
	struct dpusim_tm_srq *srq = qp->srq;
	struct dpusim_tm_msg msg, *m = &msg;
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

/**
 * dpusim_tm_srq_send - one work request of an SRQ to a connected QP
 * @ctx: the SRQ's context
 * @srq: the SRQ, locked and alive
 * @qp: the peer, connected to @srq
 * @wr: the work request, checked by dpusim_tm_send_wr_get()
 *
 * An RDMA_READ of the QP owner's region, or a short SEND (FIN, no-tag)
 * that lands inline in a completion of the QP's CQ.
 *
 * Return: 0 or a negative errno as for DPUSIM_IOCTL_TM_POST_SEND.
 */
int dpusim_tm_srq_send(struct dpusim_tm_ctx *ctx, struct dpusim_tm_srq *srq,
		       struct dpusim_tm_qp *qp,
		       const struct dpusim_tm_send_wr *wr)
{
	bool signaled = wr->flags & DPUSIM_TM_SEND_SIGNALED;
	struct dpusim_tm_msg msg, *m = &msg;
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
