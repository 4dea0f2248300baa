// SPDX-License-Identifier: GPL-2.0
/*
 * TM-SRQs: the serialisation point of tag matching.  Every message a
 * connected QP sends is delivered under the SRQ's lock, in the order each
 * QP sent them (tm_msg.c).  Here: the SRQ's lifetime, its tag-list
 * operations (ADD, DEL, SYNC, tm_list.c), its untagged buffers, and the
 * sends it posts to a connected QP.
 *
 * Every operation reserves the completions it will write before it
 * changes anything: a full CQ refuses the operation (overrun), it never
 * loses a completion.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dpusim.h"
#include "tm.h"
#include "trace.h"

static void dpusim_tm_srq_free(struct kref *ref)
{
	struct dpusim_tm_srq *srq = container_of(ref, struct dpusim_tm_srq,
						 ref);

	xa_destroy(&srq->qps);
	/* a create that failed: destroy never ran (the list is empty) */
	if (!srq->dead)
		dpusim_tm_list_fini(&srq->list, dpusim_tm_entry_drop);
	dpusim_uncharge(&srq->charge);
	mutex_destroy(&srq->lock);
	kfree(srq);
}

void dpusim_tm_srq_put(struct dpusim_tm_srq *srq)
{
	kref_put(&srq->ref, dpusim_tm_srq_free);
}

/* An SRQ built from @cmd, charged, not yet in any table */
static struct dpusim_tm_srq *
dpusim_tm_srq_alloc(struct dpusim_tm_ctx *ctx,
		    const struct dpusim_tm_create_srq *cmd)
{
	struct dpusim_tm_srq *srq;
	unsigned long npages;
	int ret;

	srq = kzalloc(sizeof(*srq), GFP_KERNEL_ACCOUNT);
	if (!srq)
		return ERR_PTR(-ENOMEM);
	ret = dpusim_tm_list_init(&srq->list, cmd->max_num_tags);
	if (ret) {
		kfree(srq);
		return ERR_PTR(ret);
	}
	/* the list's two hash tables, held as long as the SRQ */
	npages = DIV_ROUND_UP((sizeof(*srq->list.buckets) +
			       sizeof(*srq->list.handles)) <<
			      srq->list.hash_bits, PAGE_SIZE);
	ret = dpusim_charge(&srq->charge, &ctx->tm->charged_pages, npages);
	if (ret) {
		dpusim_tm_list_fini(&srq->list, dpusim_tm_entry_drop);
		kfree(srq);
		return ERR_PTR(ret);
	}
	kref_init(&srq->ref);
	mutex_init(&srq->lock);
	INIT_LIST_HEAD(&srq->rbufs);
	xa_init(&srq->qps);
	srq->tm = ctx->tm;
	srq->ctx = ctx;
	srq->uid = ctx->uid;
	srq->max_ops = cmd->max_ops;
	srq->max_wr = cmd->max_wr;
	srq->max_sge = cmd->max_sge;
	return srq;
}

int dpusim_tm_create_srq(struct dpusim_tm_ucmd *ucmd)
{
	struct dpusim_tm_create_srq *cmd = ucmd->cmd;
	struct dpusim_tm_ctx *ctx = ucmd->ctx;
	struct dpusim_tm_dev *tm = ctx->tm;
	struct dpusim_tm_srq *srq;
	int ret;

	if (cmd->flags || cmd->__reserved ||
	    !cmd->max_num_tags || !cmd->max_ops || !cmd->max_wr ||
	    !cmd->max_sge)
		return -EINVAL;
	if (cmd->max_num_tags > DPUSIM_TM_MAX_NUM_TAGS ||
	    cmd->max_ops > DPUSIM_TM_MAX_OPS ||
	    cmd->max_wr > DPUSIM_TM_MAX_SRQ_WR ||
	    cmd->max_sge > DPUSIM_TM_MAX_SGE)
		return -E2BIG;

	srq = dpusim_tm_srq_alloc(ctx, cmd);
	if (IS_ERR(srq))
		return PTR_ERR(srq);
	srq->cq = dpusim_tm_cq_use(ctx, cmd->cq_handle);
	if (!srq->cq) {
		ret = -ENOENT;
		goto err_free;
	}
	ret = dpusim_tm_obj_reserve(ctx, &ctx->srqs, DPUSIM_TM_MAX_SRQ,
				    &srq->handle);
	if (ret)
		goto err_unuse;
	ret = dpusim_tm_num_reserve(&tm->srqs, xa_limit_31b, &tm->next_srq,
				    &srq->num);
	if (ret)
		goto err_abort;
	cmd->handle = srq->handle;
	cmd->srq_num = srq->num;
	ret = dpusim_tm_ucmd_respond(ucmd, sizeof(*cmd));
	if (ret)
		goto err_release;
	xa_store(&tm->srqs, cmd->srq_num, srq, GFP_KERNEL);
	dpusim_tm_obj_finalize(ctx, &ctx->srqs, cmd->handle, srq);
	return 0;

err_release:
	xa_release(&tm->srqs, srq->num);
err_abort:
	dpusim_tm_obj_abort(ctx, &ctx->srqs, srq->handle);
err_unuse:
	dpusim_tm_cq_unuse(srq->cq);
	srq->cq = NULL;
err_free:
	dpusim_tm_srq_put(srq);
	return ret;
}

/**
 * dpusim_tm_destroy_srq - destroy an SRQ of the context
 * @ctx: the context
 * @handle: the SRQ
 *
 * Drops its buffers, ends its connections (each QP gets a flush
 * completion; its later sends fail with -ECONNRESET).
 *
 * Return: 0 or -ENOENT.
 */
int dpusim_tm_destroy_srq(struct dpusim_tm_ctx *ctx, u32 handle)
{
	struct dpusim_tm_rbuf *rb, *tmp;
	struct dpusim_tm_srq *srq;
	struct dpusim_tm_cq *cq;
	struct dpusim_tm_qp *qp;
	unsigned long idx;

	srq = dpusim_tm_obj_unpublish(ctx, &ctx->srqs, handle);
	if (!srq)
		return -ENOENT;
	xa_erase(&ctx->tm->srqs, srq->num);

	mutex_lock(&srq->lock);
	srq->dead = true;
	/*
	 * A QP is in @qps only while it is connected and alive: its destroy
	 * takes it out under this lock before it lets go of it.
	 */
	xa_for_each(&srq->qps, idx, qp) {
		qp->reset = true;
		dpusim_tm_flush_cqe(qp->cq, qp->num, srq->num, 0);
		xa_erase(&srq->qps, idx);
	}
	dpusim_tm_bufs_uncharge(srq->ctx, srq->list.nr + srq->nr_rbufs);
	dpusim_tm_list_fini(&srq->list, dpusim_tm_entry_drop);
	list_for_each_entry_safe(rb, tmp, &srq->rbufs, node)
		dpusim_tm_rbuf_drop(rb);
	srq->nr_rbufs = 0;
	/*
	 * Nothing uses the CQ of a dead SRQ: let it (and its context) go now,
	 * not when the last connected QP of another process lets go of it.
	 */
	cq = srq->cq;
	srq->cq = NULL;
	mutex_unlock(&srq->lock);

	dpusim_tm_cq_unuse(cq);
	dpusim_tm_srq_put(srq);	/* the table's reference */
	return 0;
}

/* The SRQ of a handle, referenced */
struct dpusim_tm_srq *dpusim_tm_srq_get(struct dpusim_tm_ctx *ctx, u32 handle)
{
	struct dpusim_tm_srq *srq;

	mutex_lock(&ctx->lock);
	srq = xa_load(&ctx->srqs, handle);
	if (srq)
		kref_get(&srq->ref);
	mutex_unlock(&ctx->lock);
	return srq;
}

/* What a failed ADD must put back: the sync state it changed */
struct dpusim_tm_sync_state {
	u32 sw_cnt;
	u32 epoch;
	bool pending;
};

static void dpusim_tm_sync_save(struct dpusim_tm_list *l,
				struct dpusim_tm_sync_state *s)
{
	s->sw_cnt = l->sw_cnt;
	s->epoch = l->epoch;
	s->pending = l->pending;
}

static void dpusim_tm_sync_restore(struct dpusim_tm_list *l,
				   const struct dpusim_tm_sync_state *s)
{
	l->sw_cnt = s->sw_cnt;
	l->epoch = s->epoch;
	l->pending = s->pending;
}

/* One list operation, checked and carried out; srq->lock held. */
static int dpusim_tm_srq_op(struct dpusim_tm_ctx *ctx,
			    struct dpusim_tm_srq *srq,
			    struct dpusim_tm_ops_wr __user *uwr)
{
	struct dpusim_tm_cqe c = {};
	struct dpusim_tm_sync_state saved;
	struct dpusim_tm_entry *e = NULL;
	struct dpusim_tm_sgl *sgl = NULL;
	struct dpusim_tm_ops_wr wr;
	bool sync, signaled, issued;
	u32 need;
	int ret;

	if (copy_from_user(&wr, uwr, sizeof(wr)))
		return -EFAULT;
	if (wr.opcode > DPUSIM_TM_WR_TAG_SYNC ||
	    (wr.flags & ~(DPUSIM_TM_OPS_SIGNALED | DPUSIM_TM_OPS_TM_SYNC)) ||
	    wr.__reserved)
		return -EINVAL;
	signaled = wr.flags & DPUSIM_TM_OPS_SIGNALED;
	sync = (wr.flags & DPUSIM_TM_OPS_TM_SYNC) ||
	       wr.opcode == DPUSIM_TM_WR_TAG_SYNC;
	need = signaled;

	switch (wr.opcode) {
	case DPUSIM_TM_WR_TAG_ADD:
		if (srq->list.nr >= srq->list.max)
			return -ENOMEM;
		sgl = dpusim_tm_sgl_get(ctx, wr.sg_list, wr.num_sge,
					srq->max_sge,
					DPUSIM_TM_ACCESS_LOCAL_WRITE);
		if (IS_ERR(sgl))
			return PTR_ERR(sgl);
		e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
		if (!e) {
			dpusim_tm_sgl_put(sgl);
			return -ENOMEM;
		}
		e->tag = wr.tag;
		e->mask = wr.mask;
		e->wr_id = wr.recv_wr_id;
		e->sgl = sgl;
		ret = dpusim_tm_bufs_charge(srq->ctx, 1);
		if (ret) {
			dpusim_tm_entry_drop(e);
			return ret;
		}
		c.opcode = DPUSIM_TM_WC_TM_ADD;
		break;
	case DPUSIM_TM_WR_TAG_DEL:
		e = dpusim_tm_list_find(&srq->list, wr.handle, &issued);
		if (!e && !issued)
			return -EINVAL;
		if (!e)
			need = 1;	/* an error always completes */
		c.opcode = DPUSIM_TM_WC_TM_DEL;
		c.handle = wr.handle;
		break;
	default:
		c.opcode = DPUSIM_TM_WC_TM_SYNC;
		break;
	}

	ret = dpusim_tm_cq_reserve(srq->cq, need);
	if (ret) {
		if (wr.opcode == DPUSIM_TM_WR_TAG_ADD)
			dpusim_tm_srq_entry_done(srq, e);
		return ret;
	}
	dpusim_tm_sync_save(&srq->list, &saved);
	if (sync)
		dpusim_tm_list_sync(&srq->list, wr.unexpected_cnt);

	switch (wr.opcode) {
	case DPUSIM_TM_WR_TAG_ADD:
		ret = dpusim_tm_list_add(&srq->list, e);
		if (!ret && put_user(e->handle, &uwr->handle)) {
			dpusim_tm_list_remove(&srq->list, e);
			ret = -EFAULT;
		}
		if (ret) {
			dpusim_tm_sync_restore(&srq->list, &saved);
			dpusim_tm_cq_unreserve(srq->cq, need);
			dpusim_tm_srq_entry_done(srq, e);
			return ret;
		}
		c.handle = e->handle;
		break;
	case DPUSIM_TM_WR_TAG_DEL:
		if (e) {
			dpusim_tm_list_remove(&srq->list, e);
			dpusim_tm_srq_entry_done(srq, e);
		} else {
			c.status = DPUSIM_TM_WC_TM_ERR;
		}
		break;
	}
	if (sync) {
		atomic64_inc(&srq->tm->stats.syncs);
		trace_dpusim_tm_sync(srq->num, wr.unexpected_cnt);
	}
	trace_dpusim_tm_post(srq->num, wr.opcode == DPUSIM_TM_WR_TAG_ADD ? DPUSIM_TRACE_TM_ADD :
				       wr.opcode == DPUSIM_TM_WR_TAG_DEL ? DPUSIM_TRACE_TM_DEL :
				       DPUSIM_TRACE_TM_SYNC,
			     wr.opcode == DPUSIM_TM_WR_TAG_ADD ? wr.tag : 0, c.handle);
	if (need) {
		c.wr_id = wr.wr_id;
		dpusim_tm_srq_cqe(srq, &c);
		dpusim_tm_cq_push(srq->cq, &c);
	}
	return 0;
}

static int dpusim_tm_post_check(const struct dpusim_tm_post *cmd)
{
	if (cmd->flags || cmd->remote_qpn || !cmd->nr_wr)
		return -EINVAL;
	if (cmd->nr_wr > DPUSIM_TM_MAX_WR)
		return -E2BIG;
	return 0;
}

int dpusim_tm_post_srq_ops(struct dpusim_tm_ucmd *ucmd)
{
	struct dpusim_tm_post *cmd = ucmd->cmd;
	struct dpusim_tm_ctx *ctx = ucmd->ctx;
	struct dpusim_tm_ops_wr __user *uwrs = u64_to_user_ptr(cmd->wrs);
	struct dpusim_tm_srq *srq;
	int ret = 0;
	u32 i;

	ret = dpusim_tm_post_check(cmd);
	if (ret)
		return ret;
	srq = dpusim_tm_srq_get(ctx, cmd->handle);
	if (!srq)
		return -ENOENT;
	mutex_lock(&srq->lock);
	for (i = 0; i < cmd->nr_wr; i++) {
		if (srq->dead) {
			ret = -ECONNRESET;
			break;
		}
		if (i >= srq->max_ops) {
			ret = -ENOMEM;
			break;
		}
		ret = dpusim_tm_srq_op(ctx, srq, &uwrs[i]);
		if (ret)
			break;
	}
	mutex_unlock(&srq->lock);
	dpusim_tm_srq_put(srq);
	cmd->nr_done = i;
	return ret;
}

int dpusim_tm_post_srq_recv(struct dpusim_tm_ucmd *ucmd)
{
	struct dpusim_tm_post *cmd = ucmd->cmd;
	struct dpusim_tm_ctx *ctx = ucmd->ctx;
	struct dpusim_tm_recv_wr __user *uwrs = u64_to_user_ptr(cmd->wrs);
	struct dpusim_tm_recv_wr wr;
	struct dpusim_tm_srq *srq;
	struct dpusim_tm_rbuf *rb;
	int ret = 0;
	u32 i;

	ret = dpusim_tm_post_check(cmd);
	if (ret)
		return ret;
	srq = dpusim_tm_srq_get(ctx, cmd->handle);
	if (!srq)
		return -ENOENT;
	mutex_lock(&srq->lock);
	for (i = 0; i < cmd->nr_wr; i++) {
		if (copy_from_user(&wr, &uwrs[i], sizeof(wr))) {
			ret = -EFAULT;
			break;
		}
		if (wr.__reserved) {
			ret = -EINVAL;
			break;
		}
		if (srq->dead) {
			ret = -ECONNRESET;
			break;
		}
		if (srq->nr_rbufs >= srq->max_wr) {
			ret = -ENOMEM;
			break;
		}
		rb = kzalloc(sizeof(*rb), GFP_KERNEL_ACCOUNT);
		if (!rb) {
			ret = -ENOMEM;
			break;
		}
		rb->sgl = dpusim_tm_sgl_get(ctx, wr.sg_list, wr.num_sge,
					    srq->max_sge,
					    DPUSIM_TM_ACCESS_LOCAL_WRITE);
		if (IS_ERR(rb->sgl)) {
			ret = PTR_ERR(rb->sgl);
			kfree(rb);
			break;
		}
		ret = dpusim_tm_bufs_charge(srq->ctx, 1);
		if (ret) {
			dpusim_tm_sgl_put(rb->sgl);
			kfree(rb);
			break;
		}
		rb->wr_id = wr.wr_id;
		list_add_tail(&rb->node, &srq->rbufs);
		srq->nr_rbufs++;
		trace_dpusim_tm_post(srq->num, DPUSIM_TRACE_TM_RECV, 0, 0);
	}
	mutex_unlock(&srq->lock);
	dpusim_tm_srq_put(srq);
	cmd->nr_done = i;
	return ret;
}

/**
 * dpusim_tm_post_srq_send - POST_SEND from an SRQ to a connected QP
 * @ctx: the caller's context
 * @cmd: the call, its flags and counts checked by dpusim_tm_post_send()
 *
 * Return: 0 or a negative errno; @cmd->nr_done says how many were done.
 */
int dpusim_tm_post_srq_send(struct dpusim_tm_ctx *ctx,
			    struct dpusim_tm_post *cmd)
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
			ret = dpusim_tm_srq_send(ctx, srq, qp, &wr);
		if (ret)
			break;
	}
	mutex_unlock(&srq->lock);
	dpusim_tm_srq_put(srq);
	cmd->nr_done = i;
	return ret;
}
