// SPDX-License-Identifier: GPL-2.0
/*
 * The posting calls of dtm.h answer as libibverbs' ibv_post_*: 0 or a
 * positive errno value (errno set to it too) and *bad_wr = the first work
 * request not carried out; those before it are carried out, it and those
 * after it are not.  Every failure path of the four calls: the library's
 * own checks (a NULL object or list, more ops than max_ops), the kernel
 * failing the first request, the second of a list, and a full CQ (the
 * sender's EREMOTEIO / EOVERFLOW and the owner's one-shot EOVERFLOW).
 * The receiver-not-ready case is EAGAIN from the post (dtm.h says why).
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "common.h"
#include "tm_common.h"

#define RX_LEN	(16U << 10)
#define FULL	(~0ULL)
#define MD	(DTM_WC_TM_MATCH | DTM_WC_TM_DATA_VALID)
#define TMO	2000	/* ms to wait for a completion that must be there */
#define BAD_PTR	((void *)(uintptr_t)0x5a5a5a5a)	/* bad_wr not written yet */

FIXTURE(post) {
	struct dtm_context *ctx;
	struct dtm_cq *scq, *qcq;
	struct dtm_srq *srq;
	struct dtm_qp *qp;
	struct dtm_mr *mr;
	uint8_t *rx;
	uint32_t lkey;
};

FIXTURE_SETUP(post)
{
	struct dtm_srq_init_attr sa = {
		.max_num_tags = 16, .max_ops = 4, .max_wr = 16, .max_sge = 2,
	};
	struct dtm_qp_init_attr qa = { .max_sge = 2 };

	self->ctx = dtm_open_device(NULL);
	ASSERT_NE(NULL, self->ctx) TH_LOG("dtm_open_device: %s", strerror(errno));
	self->scq = dtm_create_cq(self->ctx, 64);
	ASSERT_NE(NULL, self->scq);
	self->qcq = dtm_create_cq(self->ctx, 64);
	ASSERT_NE(NULL, self->qcq);
	sa.cq = self->scq;
	self->srq = dtm_create_srq(self->ctx, &sa);
	ASSERT_NE(NULL, self->srq) TH_LOG("dtm_create_srq: %s", strerror(errno));
	qa.cq = self->qcq;
	self->qp = dtm_create_qp(self->ctx, &qa);
	ASSERT_NE(NULL, self->qp);
	ASSERT_EQ(0, dtm_connect(self->qp, self->srq->srq_num));
	self->rx = mmap(NULL, RX_LEN, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->rx);
	memset(self->rx, 0xee, RX_LEN);
	self->mr = dtm_reg_mr(self->ctx, self->rx, RX_LEN,
			      DTM_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->mr) TH_LOG("dtm_reg_mr: %s", strerror(errno));
	self->lkey = self->mr->lkey;
}

FIXTURE_TEARDOWN(post)
{
	if (self->ctx)
		dtm_close_device(self->ctx);
	if (self->rx && self->rx != MAP_FAILED)
		munmap(self->rx, RX_LEN);
}

#define RX(off)		((uint64_t)(uintptr_t)(self->rx + (off)))

/* An inline eager (or other @op) send: TMH | 8 bytes, chained to @next. */
struct msg {
	struct dtm_tmh tmh;
	uint8_t pay[8];
	struct dtm_sge sge[2];
};

static void mk_send(struct dtm_send_wr *wr, struct msg *m, uint64_t wr_id,
		    enum dtm_tmh_op op, uint64_t tag, struct dtm_send_wr *next)
{
	dtm_tmh_build(&m->tmh, op, (uint32_t)wr_id, tag);
	memset(m->pay, (int)wr_id, sizeof(m->pay));
	m->sge[0] = (struct dtm_sge){ (uintptr_t)&m->tmh, sizeof(m->tmh), 0 };
	m->sge[1] = (struct dtm_sge){ (uintptr_t)m->pay, sizeof(m->pay), 0 };
	*wr = (struct dtm_send_wr){
		.wr_id = wr_id, .next = next, .sg_list = m->sge, .num_sge = 2,
		.opcode = DTM_WR_SEND, .send_flags = DTM_SEND_INLINE,
	};
}

/* --------------------------------------------------------- sends */

/*
 * Three chained sends; the second is unexpected and finds no untagged
 * buffer: EAGAIN (positive, errno too), *bad_wr = the second, the first
 * delivered, the third not.  Reposting from *bad_wr carries out the rest.
 */
TEST_F(post, send_list_second_fails)
{
	struct dtm_send_wr wr[3], *bad = BAD_PTR;
	struct msg m[3];
	struct dtm_wc wc[3];
	uint32_t h;
	int r;

	ASSERT_EQ(0, tm_add(self->srq, 1, 0, 0, 100, 0x10, FULL, RX(0), 64,
			    self->lkey, &h));
	mk_send(&wr[2], &m[2], 3, DTM_TMH_EAGER, 0x12, NULL);
	mk_send(&wr[1], &m[1], 2, DTM_TMH_EAGER, 0x11, &wr[2]);
	mk_send(&wr[0], &m[0], 1, DTM_TMH_EAGER, 0x10, &wr[1]);
	errno = 0;
	r = dtm_post_send(self->qp, wr, &bad);
	EXPECT_EQ(EAGAIN, r);
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(&wr[1], bad);
	ASSERT_EQ(1, tm_poll(self->scq, wc, 3, 200));
	EXPECT_WC(wc[0], .opcode = DTM_WC_TM_RECV, .flags = MD, .wr_id = 100,
		  .byte_len = 8, .qp_num = self->srq->srq_num,
		  .src_qp = self->qp->qp_num, .handle = h, .tag = 0x10,
		  .priv = 1);
	EXPECT_EQ(0, tm_pending(self->qcq));

	/* with buffers, the rest goes: two unexpected messages */
	ASSERT_EQ(0, tm_recv(self->srq, 7, RX(1024), 64, self->lkey));
	ASSERT_EQ(0, tm_recv(self->srq, 8, RX(2048), 64, self->lkey));
	bad = BAD_PTR;
	EXPECT_EQ(0, dtm_post_send(self->qp, &wr[1], &bad));
	EXPECT_EQ(BAD_PTR, bad);	/* untouched on success */
	ASSERT_EQ(2, tm_poll(self->scq, wc, 3, TMO));
	EXPECT_WC(wc[0], .opcode = DTM_WC_RECV, .flags = DTM_WC_TM_SYNC_REQ,
		  .wr_id = 7, .byte_len = 24, .qp_num = self->srq->srq_num,
		  .src_qp = self->qp->qp_num, .any = WC_ANY_TM);
	EXPECT_WC(wc[1], .opcode = DTM_WC_RECV, .flags = DTM_WC_TM_SYNC_REQ,
		  .wr_id = 8, .byte_len = 24, .qp_num = self->srq->srq_num,
		  .src_qp = self->qp->qp_num, .any = WC_ANY_TM);
}

/*
 * One send (the library's one-ioctl path): EAGAIN without an untagged
 * buffer, ENOTCONN on a QP never connected, ECONNRESET once its SRQ is
 * gone; each positive, errno the same, *bad_wr = the request.
 */
TEST_F(post, send_single_errors)
{
	struct dtm_qp_init_attr qa = { .cq = self->qcq, .max_sge = 2 };
	struct dtm_srq_init_attr sa = {
		.cq = self->scq, .max_num_tags = 4, .max_ops = 4, .max_wr = 4,
		.max_sge = 1,
	};
	struct dtm_qp *qp2 = dtm_create_qp(self->ctx, &qa);
	struct dtm_srq *srq2 = dtm_create_srq(self->ctx, &sa);
	struct dtm_send_wr wr, *bad = BAD_PTR;
	struct msg m;
	struct dtm_wc wc;

	ASSERT_NE(NULL, qp2);
	ASSERT_NE(NULL, srq2);
	mk_send(&wr, &m, 1, DTM_TMH_NO_TAG, 0, NULL);
	errno = 0;
	EXPECT_EQ(EAGAIN, dtm_post_send(self->qp, &wr, &bad));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(&wr, bad);

	bad = BAD_PTR;
	errno = 0;
	EXPECT_EQ(ENOTCONN, dtm_post_send(qp2, &wr, &bad));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(&wr, bad);

	ASSERT_EQ(0, dtm_connect(qp2, srq2->srq_num));
	ASSERT_EQ(0, dtm_destroy_srq(srq2));
	ASSERT_EQ(1, tm_poll(self->qcq, &wc, 1, TMO));
	EXPECT_EQ(DTM_WC_WR_FLUSH_ERR, wc.status);
	bad = BAD_PTR;
	errno = 0;
	EXPECT_EQ(ECONNRESET, dtm_post_send(qp2, &wr, &bad));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(&wr, bad);
	/* a NULL bad_wr is tolerated */
	EXPECT_EQ(ECONNRESET, dtm_post_send(qp2, &wr, NULL));
	EXPECT_EQ(0, tm_pending(self->scq));
	EXPECT_EQ(0, dtm_destroy_qp(qp2));
}

/*
 * From the SRQ: a no-tag message, then one over DPUSIM_TM_MAX_QP_RECV:
 * E2BIG at the second, the first delivered to the QP.
 */
TEST_F(post, srq_send_list_second_fails)
{
	uint8_t big[65];
	struct dtm_sge sge = { (uintptr_t)big, sizeof(big), 0 };
	struct dtm_send_wr wr[2], *bad = BAD_PTR;
	struct msg m;
	struct dtm_wc wc;

	mk_send(&wr[0], &m, 1, DTM_TMH_NO_TAG, 0, &wr[1]);
	memset(big, 0, sizeof(big));
	dtm_tmh_build((struct dtm_tmh *)big, DTM_TMH_NO_TAG, 0, 0);
	wr[1] = (struct dtm_send_wr){
		.wr_id = 2, .sg_list = &sge, .num_sge = 1,
		.opcode = DTM_WR_SEND, .send_flags = DTM_SEND_INLINE,
	};
	errno = 0;
	EXPECT_EQ(E2BIG, dtm_post_srq_send(self->srq, self->qp->qp_num, wr,
					   &bad));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(&wr[1], bad);
	ASSERT_EQ(1, tm_poll(self->qcq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_NO_TAG, .flags = DTM_WC_INLINE,
		  .byte_len = 24, .qp_num = self->qp->qp_num,
		  .src_qp = self->srq->srq_num, .any = WC_ANY_WRID | WC_ANY_TM);
	EXPECT_EQ(0, tm_pending(self->qcq));

	/* the first request fails: ENOENT for a QP not connected to it */
	bad = BAD_PTR;
	EXPECT_EQ(ENOENT, dtm_post_srq_send(self->srq, 0x7ffffff0, &wr[0],
					    &bad));
	EXPECT_EQ(&wr[0], bad);
}

/* ------------------------------------------------------- SRQ posts */

/*
 * ADD, DEL of a handle never issued, SYNC: EINVAL at the DEL, the ADD
 * carried out (handle written back, its completion), the SYNC not.
 */
TEST_F(post, srq_ops_list_second_fails)
{
	struct dtm_sge sge = { RX(0), 64, self->lkey };
	struct dtm_ops_wr ops[3] = {
		{ .wr_id = 1, .opcode = DTM_WR_TAG_ADD,
		  .flags = DTM_OPS_SIGNALED,
		  .tm.add = { .recv_wr_id = 10, .sg_list = &sge, .num_sge = 1,
			      .tag = 0x20, .mask = FULL } },
		{ .wr_id = 2, .opcode = DTM_WR_TAG_DEL,
		  .flags = DTM_OPS_SIGNALED, .tm.handle = 0x7edcba98 },
		{ .wr_id = 3, .opcode = DTM_WR_TAG_SYNC,
		  .flags = DTM_OPS_SIGNALED },
	};
	struct dtm_ops_wr *bad = BAD_PTR;
	struct dtm_wc wc[3];

	ops[0].next = &ops[1];
	ops[1].next = &ops[2];
	errno = 0;
	EXPECT_EQ(EINVAL, dtm_post_srq_ops(self->srq, ops, &bad));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(&ops[1], bad);
	EXPECT_NE(0, ops[0].tm.handle);
	ASSERT_EQ(1, tm_poll(self->scq, wc, 3, 200));
	EXPECT_WC(wc[0], .opcode = DTM_WC_TM_ADD, .wr_id = 1,
		  .qp_num = self->srq->srq_num, .handle = ops[0].tm.handle,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TAG | WC_ANY_PRIV);
	bad = BAD_PTR;
	EXPECT_EQ(0, dtm_post_srq_ops(self->srq, &ops[2], &bad));
	EXPECT_EQ(BAD_PTR, bad);
	ASSERT_EQ(1, tm_poll(self->scq, wc, 3, TMO));
	EXPECT_EQ(DTM_WC_TM_SYNC, wc[0].opcode);
	EXPECT_EQ(3, wc[0].wr_id);
}

/*
 * max_ops 4: five ops in one call fail in the library, before the
 * kernel: ENOMEM at the fifth, the four carried out.
 */
TEST_F(post, srq_ops_over_max_ops)
{
	struct dtm_ops_wr ops[5], *bad = BAD_PTR;
	struct dtm_wc wc[5];
	int i;

	memset(ops, 0, sizeof(ops));
	for (i = 0; i < 5; i++) {
		ops[i].wr_id = 20 + i;
		ops[i].opcode = DTM_WR_TAG_SYNC;
		ops[i].flags = DTM_OPS_SIGNALED;
		ops[i].next = i < 4 ? &ops[i + 1] : NULL;
	}
	errno = 0;
	EXPECT_EQ(ENOMEM, dtm_post_srq_ops(self->srq, ops, &bad));
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_EQ(&ops[4], bad);
	EXPECT_EQ(4, tm_poll(self->scq, wc, 5, 200));
}

/*
 * Two untagged buffers, the second with a bad lkey: EINVAL at it; the
 * first is posted (one unexpected message lands), the second is not (the
 * next one is EAGAIN).
 */
TEST_F(post, srq_recv_list_second_fails)
{
	struct dtm_sge sge[2] = {
		{ RX(0), 64, self->lkey },
		{ RX(64), 64, 0xfffffff0 },
	};
	struct dtm_recv_wr rwr[2] = {
		{ .wr_id = 1, .next = &rwr[1], .sg_list = &sge[0], .num_sge = 1 },
		{ .wr_id = 2, .sg_list = &sge[1], .num_sge = 1 },
	};
	struct dtm_recv_wr *bad = BAD_PTR;
	struct dtm_send_wr wr;
	struct msg m;
	struct dtm_wc wc;

	errno = 0;
	EXPECT_EQ(EINVAL, dtm_post_srq_recv(self->srq, rwr, &bad));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(&rwr[1], bad);
	mk_send(&wr, &m, 5, DTM_TMH_NO_TAG, 0, NULL);
	EXPECT_EQ(0, dtm_post_send(self->qp, &wr, NULL));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_EQ(DTM_WC_TM_NO_TAG, wc.opcode);
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(EAGAIN, dtm_post_send(self->qp, &wr, NULL));
}

/* ------------------------------------------------ library checks */

/*
 * A NULL object: EINVAL, *bad_wr = the list's head; a NULL list: EINVAL,
 * *bad_wr = NULL; nothing reaches the kernel.
 */
TEST_F(post, null_object_or_list)
{
	struct dtm_send_wr swr = { .wr_id = 1 }, *sbad;
	struct dtm_recv_wr rwr = { .wr_id = 2 }, *rbad;
	struct dtm_ops_wr owr = { .wr_id = 3 }, *obad;

	sbad = BAD_PTR;
	errno = 0;
	EXPECT_EQ(EINVAL, dtm_post_send(NULL, &swr, &sbad));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(&swr, sbad);
	sbad = BAD_PTR;
	EXPECT_EQ(EINVAL, dtm_post_send(self->qp, NULL, &sbad));
	EXPECT_EQ(NULL, sbad);
	sbad = BAD_PTR;
	errno = 0;
	EXPECT_EQ(EINVAL, dtm_post_srq_send(NULL, 1, &swr, &sbad));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(&swr, sbad);
	sbad = BAD_PTR;
	EXPECT_EQ(EINVAL, dtm_post_srq_send(self->srq, self->qp->qp_num, NULL,
					    &sbad));
	EXPECT_EQ(NULL, sbad);

	rbad = BAD_PTR;
	errno = 0;
	EXPECT_EQ(EINVAL, dtm_post_srq_recv(NULL, &rwr, &rbad));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(&rwr, rbad);
	rbad = BAD_PTR;
	EXPECT_EQ(EINVAL, dtm_post_srq_recv(self->srq, NULL, &rbad));
	EXPECT_EQ(NULL, rbad);

	obad = BAD_PTR;
	errno = 0;
	EXPECT_EQ(EINVAL, dtm_post_srq_ops(NULL, &owr, &obad));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(&owr, obad);
	obad = BAD_PTR;
	EXPECT_EQ(EINVAL, dtm_post_srq_ops(self->srq, NULL, &obad));
	EXPECT_EQ(NULL, obad);
	EXPECT_EQ(EINVAL, dtm_post_srq_ops(NULL, &owr, NULL));

	EXPECT_EQ(0, tm_pending(self->scq));
	EXPECT_EQ(0, tm_pending(self->qcq));
}

/* ------------------------------------------------------- full CQ */

/*
 * An SRQ whose CQ holds one completion, fed by a QP of another context
 * and one of its own.  Once full: the other context's send is EREMOTEIO,
 * the owner's next call is EOVERFLOW once (a post: *bad_wr = the head,
 * not carried out), its poll reports the overrun once; the owner's own
 * send into the full CQ is EOVERFLOW and takes the report with it.
 */
TEST_F(post, full_cq_sender_and_owner)
{
	struct dtm_srq_init_attr sa = {
		.max_num_tags = 4, .max_ops = 4, .max_wr = 8, .max_sge = 1,
	};
	struct dtm_cq *cq1 = dtm_create_cq(self->ctx, 1);
	struct dtm_context *ctx2 = dtm_open_device(NULL);
	struct dtm_cq *cq2;
	struct dtm_qp *qp2, *qp1;
	struct dtm_srq *srq1;
	struct dtm_sge sge = { RX(4096), 64, self->lkey };
	struct dtm_recv_wr rwr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 };
	struct dtm_recv_wr *rbad;
	struct dtm_send_wr wr, *bad;
	struct dtm_qp_init_attr qa = { .max_sge = 2 };
	struct msg m;
	struct dtm_wc wc[2];

	ASSERT_NE(NULL, cq1);
	ASSERT_NE(NULL, ctx2);
	sa.cq = cq1;
	srq1 = dtm_create_srq(self->ctx, &sa);
	ASSERT_NE(NULL, srq1);
	cq2 = dtm_create_cq(ctx2, 8);
	ASSERT_NE(NULL, cq2);
	qa.cq = cq2;
	qp2 = dtm_create_qp(ctx2, &qa);
	ASSERT_NE(NULL, qp2);
	ASSERT_EQ(0, dtm_connect(qp2, srq1->srq_num));
	qa.cq = self->qcq;
	qp1 = dtm_create_qp(self->ctx, &qa);
	ASSERT_NE(NULL, qp1);
	ASSERT_EQ(0, dtm_connect(qp1, srq1->srq_num));
	ASSERT_EQ(0, tm_recv(srq1, 1, RX(0), 64, self->lkey));
	ASSERT_EQ(0, tm_recv(srq1, 2, RX(64), 64, self->lkey));

	mk_send(&wr, &m, 1, DTM_TMH_NO_TAG, 0, NULL);
	ASSERT_EQ(0, dtm_post_send(qp2, &wr, NULL));	/* cq1 now full */
	bad = BAD_PTR;
	errno = 0;
	EXPECT_EQ(EREMOTEIO, dtm_post_send(qp2, &wr, &bad));
	EXPECT_EQ(EREMOTEIO, errno);
	EXPECT_EQ(&wr, bad);

	/* the owner's next call: EOVERFLOW once, not carried out */
	rbad = BAD_PTR;
	errno = 0;
	EXPECT_EQ(EOVERFLOW, dtm_post_srq_recv(srq1, &rwr, &rbad));
	EXPECT_EQ(EOVERFLOW, errno);
	EXPECT_EQ(&rwr, rbad);
	EXPECT_EQ(0, dtm_post_srq_recv(srq1, &rwr, &rbad));
	/* the ring: the completion, then the overrun once */
	ASSERT_EQ(1, dtm_poll_cq(cq1, 2, wc));
	EXPECT_EQ(DTM_WC_TM_NO_TAG, wc[0].opcode);
	EXPECT_EQ(1, wc[0].wr_id);
	EXPECT_EQ(-EOVERFLOW, dtm_poll_cq(cq1, 2, wc));
	EXPECT_EQ(0, dtm_poll_cq(cq1, 2, wc));

	/* polled: the other context sends again */
	EXPECT_EQ(0, dtm_post_send(qp2, &wr, NULL));
	/* the owner's own send into its full CQ: EOVERFLOW, reported there */
	bad = BAD_PTR;
	errno = 0;
	EXPECT_EQ(EOVERFLOW, dtm_post_send(qp1, &wr, &bad));
	EXPECT_EQ(EOVERFLOW, errno);
	EXPECT_EQ(&wr, bad);
	EXPECT_EQ(0, tm_sync(self->srq, 5, 0, 0));
	ASSERT_EQ(1, dtm_poll_cq(cq1, 2, wc));
	EXPECT_EQ(2, wc[0].wr_id);
	/* once polled, the owner's QP sends too */
	EXPECT_EQ(0, dtm_post_send(qp1, &wr, NULL));
	dtm_close_device(ctx2);
}

TEST_HARNESS_MAIN
