// SPDX-License-Identifier: GPL-2.0
/*
 * Tag matching through /dev/dpusim/tm and the library API of dtm.h, in
 * one process: every case checks the exact completions (opcode, status,
 * flags including SYNC_REQ, wr_id, byte_len, qp_num, src_qp, handle, tag,
 * priv) and the exact bytes in the buffers.  The expected behaviour is
 * the kernel's contract (notes/tm-spec.md); fields the contract leaves
 * open for a completion are not checked (WC_ANY_*: tag, priv and handle of
 * non-TM completions, byte_len of list-operation completions).
 *
 * Cases: the design note's minimum list (eager expected with tags sent in
 * reverse post order; unexpected with a tag mismatch, SYNC, TM_SYNC;
 * no-tag; rendezvous MATCH, DATA_VALID, FIN; an ADD completion with
 * SYNC_REQ triggering a SYNC; DEL with and without consumption; a full
 * list then a repost after DEL; masks; a wrong tag; rendezvous into a
 * too-small buffer) and more: the seed's m1/m2/b1/b2 race exactly,
 * ordering within a QP and across QPs, rendezvous access errors, the
 * send-path errnos, teardown flushes, DPU MRAM regions, sysfs counters.
 * The multi-process cases are in tm_proc.c, the examples in
 * tm_examples.c.
 */
#include <sys/mman.h>

#include <dpu.h>

#include "kselftest_harness.h"
#include "common.h"
#include "tm_common.h"

#define RX_LEN	(64U << 10)
#define TX_LEN	(64U << 10)
#define FULL	(~0ULL)
#define MD	(DTM_WC_TM_MATCH | DTM_WC_TM_DATA_VALID)
#define SREQ	DTM_WC_TM_SYNC_REQ
#define TMO	2000	/* ms to wait for a completion that must be there */

/*
 * One context: an SRQ with its CQ, a QP (own CQ) connected to it, a
 * receive region rx (LOCAL_WRITE, 0xee) and a send region tx (pattern,
 * LOCAL_WRITE | REMOTE_READ) for rendezvous payloads.
 */
FIXTURE(tm) {
	struct dtm_context *ctx;
	struct dtm_cq *scq, *qcq;
	struct dtm_srq *srq;
	struct dtm_qp *qp;
	uint8_t *rx, *tx;
	struct dtm_mr *rxmr, *txmr;
	uint32_t srqn, qpn, lkey;
};

FIXTURE_SETUP(tm)
{
	struct dtm_srq_init_attr sa = {
		.max_num_tags = 32, .max_ops = 16, .max_wr = 32, .max_sge = 4,
	};
	struct dtm_qp_init_attr qa = { .max_sge = 4 };

	self->ctx = dtm_open_device(NULL);
	ASSERT_NE(NULL, self->ctx) TH_LOG("dtm_open_device: %s", strerror(errno));
	self->scq = dtm_create_cq(self->ctx, 64);
	ASSERT_NE(NULL, self->scq) TH_LOG("dtm_create_cq: %s", strerror(errno));
	self->qcq = dtm_create_cq(self->ctx, 64);
	ASSERT_NE(NULL, self->qcq) TH_LOG("dtm_create_cq: %s", strerror(errno));
	sa.cq = self->scq;
	self->srq = dtm_create_srq(self->ctx, &sa);
	ASSERT_NE(NULL, self->srq) TH_LOG("dtm_create_srq: %s", strerror(errno));
	qa.cq = self->qcq;
	self->qp = dtm_create_qp(self->ctx, &qa);
	ASSERT_NE(NULL, self->qp) TH_LOG("dtm_create_qp: %s", strerror(errno));
	ASSERT_EQ(0, dtm_connect(self->qp, self->srq->srq_num));
	self->srqn = self->srq->srq_num;
	self->qpn = self->qp->qp_num;

	self->rx = mmap(NULL, RX_LEN, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->rx);
	self->tx = mmap(NULL, TX_LEN, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->tx);
	memset(self->rx, 0xee, RX_LEN);
	tm_fill(self->tx, TX_LEN, 1);
	self->rxmr = dtm_reg_mr(self->ctx, self->rx, RX_LEN,
				DTM_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->rxmr) TH_LOG("dtm_reg_mr: %s", strerror(errno));
	self->txmr = dtm_reg_mr(self->ctx, self->tx, TX_LEN,
				DTM_ACCESS_LOCAL_WRITE | DTM_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, self->txmr) TH_LOG("dtm_reg_mr: %s", strerror(errno));
	self->lkey = self->rxmr->lkey;
}

FIXTURE_TEARDOWN(tm)
{
	if (self->ctx)
		dtm_close_device(self->ctx);
	if (self->rx && self->rx != MAP_FAILED)
		munmap(self->rx, RX_LEN);
	if (self->tx && self->tx != MAP_FAILED)
		munmap(self->tx, TX_LEN);
}

/* Address of byte @off of rx, as an sge address */
#define RX(off)		((uint64_t)(uintptr_t)(self->rx + (off)))
/* Byte range of rx untouched (still 0xee) */
#define EXPECT_UNTOUCHED(off, len)					\
	EXPECT_EQ(-1, tm_first_not(self->rx + (off), (len), 0xee))	\
		TH_LOG("rx[%u..%u) written", (unsigned int)(off),	\
		       (unsigned int)((off) + (len)))

/* --------------------------------------------------------------- API */

/* The wire headers are rdma-core's ibv_tmh / ibv_rvh: big-endian fields. */
TEST(tmh_rvh_wire_format)
{
	static const uint8_t want_tmh[16] = {
		1, 0, 0, 0, 0x01, 0x02, 0x03, 0x04,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
	};
	static const uint8_t want_rvh[16] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0x0a, 0x0b, 0x0c, 0x0d, 0x10, 0x20, 0x30, 0x40,
	};
	struct dtm_tmh tmh;
	struct dtm_rvh rvh;
	enum dtm_tmh_op op;
	uint32_t app_ctx, rkey, len;
	uint64_t tag, va;

	ASSERT_EQ(16, sizeof(tmh));
	ASSERT_EQ(16, sizeof(rvh));
	dtm_tmh_build(&tmh, DTM_TMH_RNDV, 0x01020304, 0x1122334455667788ULL);
	EXPECT_EQ(0, memcmp(&tmh, want_tmh, 16));
	dtm_tmh_parse(&tmh, &op, &app_ctx, &tag);
	EXPECT_EQ(DTM_TMH_RNDV, op);
	EXPECT_EQ(0x01020304, app_ctx);
	EXPECT_EQ(0x1122334455667788ULL, tag);
	dtm_rvh_build(&rvh, 0x0102030405060708ULL, 0x0a0b0c0d, 0x10203040);
	EXPECT_EQ(0, memcmp(&rvh, want_rvh, 16));
	dtm_rvh_parse(&rvh, &va, &rkey, &len);
	EXPECT_EQ(0x0102030405060708ULL, va);
	EXPECT_EQ(0x0a0b0c0d, rkey);
	EXPECT_EQ(0x10203040, len);
	EXPECT_STREQ("TM_RECV", dtm_wc_opcode_str(DTM_WC_TM_RECV));
	EXPECT_STREQ("TM_RNDV_INCOMPLETE",
		     dtm_wc_status_str(DTM_WC_TM_RNDV_INCOMPLETE));
}

TEST_F(tm, query_device_caps)
{
	struct dtm_device_attr a;

	memset(&a, 0xa5, sizeof(a));
	ASSERT_EQ(0, dtm_query_device(self->ctx, &a));
	EXPECT_EQ(DPUSIM_TM_MAX_NUM_TAGS, a.max_num_tags);
	EXPECT_EQ(DPUSIM_TM_MAX_OPS, a.max_ops);
	EXPECT_EQ(DPUSIM_TM_MAX_SGE, a.max_sge);
	EXPECT_EQ(DPUSIM_TM_MAX_RNDV_HDR_SIZE, a.max_rndv_hdr_size);
	EXPECT_EQ(DPUSIM_TM_MAX_CQE, a.max_cqe);
	EXPECT_EQ(DTM_TM_CAP_RC, a.flags & DTM_TM_CAP_RC);
}

/* Tagged and untagged buffers need LOCAL_WRITE; sges must name the range. */
TEST_F(tm, post_checks_access_and_range)
{
	struct dtm_mr *ro = dtm_reg_mr(self->ctx, self->tx, 4096,
				       DTM_ACCESS_REMOTE_READ);
	uint32_t h;

	ASSERT_NE(NULL, ro);
	EXPECT_EQ(EACCES, tm_add(self->srq, 1, 0, 0, 1, 1, FULL,
				  (uintptr_t)self->tx, 64, ro->lkey, &h));
	EXPECT_EQ(EACCES, tm_recv(self->srq, 1, (uintptr_t)self->tx, 64,
				   ro->lkey));
	/* outside the region, unknown key */
	EXPECT_EQ(EINVAL, tm_add(self->srq, 1, 0, 0, 1, 1, FULL,
				  RX(RX_LEN - 32), 64, self->lkey, &h));
	EXPECT_EQ(EINVAL, tm_add(self->srq, 1, 0, 0, 1, 1, FULL,
				  RX(0) - 4096, 64, self->lkey, &h));
	EXPECT_EQ(EINVAL, tm_recv(self->srq, 1, RX(0), 64, 0xfffffff0));
	EXPECT_EQ(0, tm_pending(self->scq));
	EXPECT_EQ(0, dtm_dereg_mr(ro));
}

/* ------------------------------------------------------------- eager */

/*
 * Four tags posted 0..3, messages sent 3..0: each lands in its own buffer
 * (payload only, TMH stripped), completions in arrival order.
 */
TEST_F(tm, eager_expected_reverse_order)
{
	uint8_t pay[4][200];
	struct dtm_wc wc[4];
	struct dtm_wc_tm_info info;
	uint32_t h[4];
	int i, k;

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, tm_add(self->srq, 10 + i, 0, 0, 100 + i,
				    0x1000 + i, FULL, RX(i * 1024), 1024,
				    self->lkey, &h[i]));
		for (k = 0; k < i; k++)
			EXPECT_NE(h[k], h[i]);
	}
	for (i = 3; i >= 0; i--) {
		tm_fill(pay[i], 20 + 50 * i, 10 + i);
		ASSERT_EQ(0, tm_send(self->qp, 200 + i, DTM_TMH_EAGER, 0xa0 + i,
				     0x1000 + i, pay[i], 20 + 50 * i,
				     i == 0 ? DTM_SEND_SIGNALED : 0));
	}
	ASSERT_EQ(4, tm_poll(self->scq, wc, 4, TMO));
	for (k = 0; k < 4; k++) {
		i = 3 - k;
		EXPECT_WC(wc[k], .opcode = DTM_WC_TM_RECV, .flags = MD,
			  .wr_id = 100 + i, .byte_len = 20 + 50 * i,
			  .qp_num = self->srqn, .src_qp = self->qpn,
			  .handle = h[i], .tag = 0x1000 + i, .priv = 0xa0 + i);
		EXPECT_EQ(0, memcmp(self->rx + i * 1024, pay[i], 20 + 50 * i))
			TH_LOG("payload %d", i);
		EXPECT_UNTOUCHED(i * 1024 + 20 + 50 * i, 1024 - (20 + 50 * i));
	}
	dtm_wc_read_tm_info(&wc[0], &info);
	EXPECT_EQ(0x1003, info.tag);
	EXPECT_EQ(0xa3, info.priv);
	/* The one signaled send completes on the QP's CQ. */
	ASSERT_EQ(1, tm_poll(self->qcq, wc, 1, TMO));
	EXPECT_WC(wc[0], .opcode = DTM_WC_SEND, .wr_id = 200,
		  .qp_num = self->qpn,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TM);
	EXPECT_EQ(0, tm_pending(self->scq));
	EXPECT_EQ(0, tm_pending(self->qcq));
}

/* A payload larger than the tagged buffer: what fits, LOC_LEN_ERR. */
TEST_F(tm, eager_over_buffer_loc_len_err)
{
	uint8_t pay[100];
	struct dtm_wc wc;
	uint32_t h;

	ASSERT_EQ(0, tm_add(self->srq, 1, 0, 0, 77, 0x42, FULL, RX(0), 64,
			    self->lkey, &h));
	tm_fill(pay, sizeof(pay), 3);
	ASSERT_EQ(0, tm_send(self->qp, 2, DTM_TMH_EAGER, 9, 0x42, pay,
			     sizeof(pay), 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	/* byte_len: bytes written (uapi: "bytes written to the buffer") */
	EXPECT_WC(wc, .opcode = DTM_WC_TM_RECV,
		  .status = DTM_WC_LOC_LEN_ERR, .flags = wc.wc_flags,
		  .wr_id = 77, .byte_len = 64, .qp_num = self->srqn,
		  .src_qp = self->qpn, .handle = h, .tag = 0x42, .priv = 9);
	EXPECT_TRUE(wc.wc_flags & DTM_WC_TM_MATCH);
	EXPECT_FALSE(wc.wc_flags & SREQ);
	EXPECT_EQ(0, memcmp(self->rx, pay, 64));
	EXPECT_UNTOUCHED(64, 64);
}

/* ------------------------------------------------------- unexpected */

/*
 * A message whose tag matches nothing goes whole (TMH included) to the
 * untagged buffer, RECV with SYNC_REQ; entries added while in sync stay
 * eligible; TAG_SYNC with the count ends SYNC_REQ (TM_SYNC completion).
 */
TEST_F(tm, unexpected_tag_mismatch_then_sync)
{
	uint8_t pay[20], want[36];
	struct dtm_wc wc;
	struct dtm_tmh tmh;
	enum dtm_tmh_op op;
	uint32_t h0, h1, app_ctx;
	uint64_t tag;

	ASSERT_EQ(0, tm_recv(self->srq, 7, RX(4096), 256, self->lkey));
	ASSERT_EQ(0, tm_add(self->srq, 1, DTM_OPS_SIGNALED, 0, 101, 0x10,
			    FULL, RX(0), 256, self->lkey, &h0));
	ASSERT_EQ(0, tm_add(self->srq, 2, 0, 0, 102, 0x20, FULL, RX(256), 256,
			    self->lkey, &h1));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_ADD, .wr_id = 1, .qp_num = self->srqn,
		  .handle = h0,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TAG | WC_ANY_PRIV);

	tm_fill(pay, sizeof(pay), 4);
	ASSERT_EQ(0, tm_send(self->qp, 3, DTM_TMH_EAGER, 0x55, 0x11, pay,
			     sizeof(pay), 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_RECV, .flags = SREQ, .wr_id = 7,
		  .byte_len = 36, .qp_num = self->srqn, .src_qp = self->qpn,
		  .any = WC_ANY_TM);
	dtm_tmh_build(&tmh, DTM_TMH_EAGER, 0x55, 0x11);
	memcpy(want, &tmh, 16);
	memcpy(want + 16, pay, sizeof(pay));
	EXPECT_EQ(0, memcmp(self->rx + 4096, want, 36));
	EXPECT_UNTOUCHED(4096 + 36, 256 - 36);
	dtm_tmh_parse((const void *)(self->rx + 4096), &op, &app_ctx, &tag);
	EXPECT_EQ(DTM_TMH_EAGER, op);
	EXPECT_EQ(0x55, app_ctx);
	EXPECT_EQ(0x11, tag);

	/* h0 was added in sync: still eligible; SYNC_REQ on its completion */
	ASSERT_EQ(0, tm_send(self->qp, 4, DTM_TMH_EAGER, 0x56, 0x10, pay, 8, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_RECV, .flags = MD | SREQ,
		  .wr_id = 101, .byte_len = 8, .qp_num = self->srqn,
		  .src_qp = self->qpn, .handle = h0, .tag = 0x10, .priv = 0x56);

	ASSERT_EQ(0, tm_sync(self->srq, 5, DTM_OPS_SIGNALED, 1));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_SYNC, .wr_id = 5,
		  .qp_num = self->srqn,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TM);

	ASSERT_EQ(0, tm_send(self->qp, 6, DTM_TMH_EAGER, 0x57, 0x20, pay, 12, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_RECV, .flags = MD, .wr_id = 102,
		  .byte_len = 12, .qp_num = self->srqn, .src_qp = self->qpn,
		  .handle = h1, .tag = 0x20, .priv = 0x57);
	EXPECT_EQ(0, memcmp(self->rx + 256, pay, 12));
	EXPECT_EQ(0, tm_pending(self->scq));
	EXPECT_EQ(0, tm_pending(self->qcq));
}

/*
 * No untagged buffer: the unexpected (and the no-tag) message fails with
 * EAGAIN, nothing consumed, nothing counted (the SRQ stays in sync).
 */
TEST_F(tm, unexpected_without_buffer_is_eagain)
{
	long long msgs = tm_attr("messages"), unexp = tm_attr("unexpected");
	uint8_t pay[8] = "abcdefg";
	struct dtm_wc wc;
	uint32_t h;

	EXPECT_EQ(EAGAIN, tm_send(self->qp, 1, DTM_TMH_EAGER, 1, 0x99, pay,
				   8, 0));
	EXPECT_EQ(EAGAIN, tm_send(self->qp, 2, DTM_TMH_NO_TAG, 1, 0, pay, 8,
				   0));
	EXPECT_EQ(0, tm_pending(self->scq));
	EXPECT_EQ(msgs, tm_attr("messages"));
	EXPECT_EQ(unexp, tm_attr("unexpected"));
	/* still in sync: an ADD completes without SYNC_REQ */
	ASSERT_EQ(0, tm_add(self->srq, 3, DTM_OPS_SIGNALED, 0, 30, 0x98, FULL,
			    RX(0), 64, self->lkey, &h));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_ADD, .wr_id = 3, .qp_num = self->srqn,
		  .handle = h,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TAG | WC_ANY_PRIV);

	/* with a buffer it is unexpected once: a SYNC with 1 is in sync */
	ASSERT_EQ(0, tm_recv(self->srq, 4, RX(4096), 64, self->lkey));
	ASSERT_EQ(0, tm_send(self->qp, 5, DTM_TMH_EAGER, 1, 0x99, pay, 8, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_RECV, .flags = SREQ, .wr_id = 4,
		  .byte_len = 24, .qp_num = self->srqn, .src_qp = self->qpn,
		  .any = WC_ANY_TM);
	ASSERT_EQ(0, tm_sync(self->srq, 6, DTM_OPS_SIGNALED, 1));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_SYNC, .wr_id = 6,
		  .qp_num = self->srqn,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TM);
	EXPECT_EQ(msgs + 1, tm_attr("messages"));
	EXPECT_EQ(unexp + 1, tm_attr("unexpected"));
}

/*
 * A NO_TAG message bypasses matching (a wildcard entry is not consumed),
 * lands whole in the untagged buffer, TM_NO_TAG, and is not unexpected.
 */
TEST_F(tm, no_tag_bypasses_matching)
{
	long long unexp = tm_attr("unexpected"), no_tag = tm_attr("no_tag");
	uint8_t pay[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, want[24];
	struct dtm_tmh tmh;
	struct dtm_wc wc;
	uint32_t h;

	ASSERT_EQ(0, tm_add(self->srq, 1, 0, 0, 300, 0, 0, RX(0), 256,
			    self->lkey, &h));
	ASSERT_EQ(0, tm_recv(self->srq, 8, RX(4096), 256, self->lkey));
	ASSERT_EQ(0, tm_send(self->qp, 2, DTM_TMH_NO_TAG, 0x77, 0x1234, pay,
			     sizeof(pay), 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_NO_TAG, .wr_id = 8, .byte_len = 24,
		  .qp_num = self->srqn, .src_qp = self->qpn, .any = WC_ANY_TM);
	dtm_tmh_build(&tmh, DTM_TMH_NO_TAG, 0x77, 0x1234);
	memcpy(want, &tmh, 16);
	memcpy(want + 16, pay, 8);
	EXPECT_EQ(0, memcmp(self->rx + 4096, want, 24));
	EXPECT_UNTOUCHED(0, 256);
	EXPECT_EQ(unexp, tm_attr("unexpected"));
	EXPECT_EQ(no_tag + 1, tm_attr("no_tag"));

	/* the wildcard entry is still there, and no SYNC is due */
	ASSERT_EQ(0, tm_send(self->qp, 3, DTM_TMH_EAGER, 0x78, 0x5, pay, 4, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_RECV, .flags = MD, .wr_id = 300,
		  .byte_len = 4, .qp_num = self->srqn, .src_qp = self->qpn,
		  .handle = h, .tag = 0x5, .priv = 0x78);
	EXPECT_EQ(0, memcmp(self->rx, pay, 4));
}

/* -------------------------------------------------------- rendezvous */

/*
 * Expected rendezvous: MATCH (byte_len = RVH len), the kernel reads the
 * sender's region, DATA_VALID with the exact data, and the FIN (TMH with
 * opcode FIN + the same RVH) inline on the sender QP's CQ.
 */
TEST_F(tm, rndv_expected_match_data_valid_fin)
{
	const uint32_t len = 3000;
	const uint64_t va = (uintptr_t)(self->tx + 100);
	uint8_t meta[8] = "METADAT", fin[32];
	struct dtm_wc wc[2];
	uint32_t h;

	ASSERT_EQ(0, tm_add(self->srq, 1, 0, 0, 400, 0x500, FULL, RX(0), 4096,
			    self->lkey, &h));
	ASSERT_EQ(0, tm_send_rndv(self->qp, 401, 0x33, 0x500, va,
				  self->txmr->rkey, len, meta, 8, 0));
	ASSERT_EQ(2, tm_poll(self->scq, wc, 2, TMO));
	EXPECT_WC(wc[0], .opcode = DTM_WC_TM_RECV, .flags = DTM_WC_TM_MATCH,
		  .wr_id = 400, .byte_len = len, .qp_num = self->srqn,
		  .src_qp = self->qpn, .handle = h, .tag = 0x500, .priv = 0x33);
	EXPECT_WC(wc[1], .opcode = DTM_WC_TM_RECV,
		  .flags = DTM_WC_TM_DATA_VALID, .wr_id = 400, .byte_len = len,
		  .qp_num = self->srqn, .src_qp = self->qpn, .handle = h,
		  .tag = 0x500, .priv = 0x33);
	EXPECT_EQ(0, memcmp(self->rx, self->tx + 100, len));
	EXPECT_UNTOUCHED(len, 4096 - len);

	ASSERT_EQ(1, tm_poll(self->qcq, wc, 1, TMO));
	EXPECT_WC(wc[0], .opcode = DTM_WC_RECV, .flags = DTM_WC_INLINE,
		  .byte_len = 32, .qp_num = self->qpn, .src_qp = self->srqn,
		  .any = WC_ANY_WRID | WC_ANY_TM);
	tm_rndv_hdr(fin, DTM_TMH_FIN, 0x33, 0x500, va, self->txmr->rkey, len);
	EXPECT_EQ(0, memcmp(wc[0].data, fin, 32)) TH_LOG("FIN bytes differ");
	EXPECT_EQ(0, tm_pending(self->scq));
	EXPECT_EQ(0, tm_pending(self->qcq));
}

/*
 * RVH len over the tagged buffer: one completion MATCH with status
 * TM_RNDV_INCOMPLETE, TMH + RVH in the buffer (byte_len 32), no FIN; the
 * software reads the payload (RDMA_READ from the SRQ) and sends the FIN
 * itself, which the sender sees.
 */
TEST_F(tm, rndv_too_small_software_finishes)
{
	const uint32_t len = 1000;
	const uint64_t va = (uintptr_t)(self->tx + 200);
	uint8_t hdr[32], fin[32];
	struct dtm_wc wc;
	uint32_t h, rkey, rlen;
	uint64_t rva;

	ASSERT_EQ(0, tm_add(self->srq, 1, 0, 0, 600, 0x900, FULL, RX(0), 64,
			    self->lkey, &h));
	ASSERT_EQ(0, tm_send_rndv(self->qp, 2, 0x44, 0x900, va,
				  self->txmr->rkey, len, NULL, 0, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_RECV,
		  .status = DTM_WC_TM_RNDV_INCOMPLETE, .flags = DTM_WC_TM_MATCH,
		  .wr_id = 600, .byte_len = 32, .qp_num = self->srqn,
		  .src_qp = self->qpn, .handle = h, .tag = 0x900, .priv = 0x44);
	tm_rndv_hdr(hdr, DTM_TMH_RNDV, 0x44, 0x900, va, self->txmr->rkey, len);
	EXPECT_EQ(0, memcmp(self->rx, hdr, 32));
	EXPECT_UNTOUCHED(32, 32);
	EXPECT_EQ(0, tm_pending(self->scq));
	EXPECT_EQ(0, tm_pending(self->qcq));	/* no FIN from the kernel */

	/* software: the RVH from the buffer, an RDMA read, the FIN */
	dtm_rvh_parse((const void *)(self->rx + 16), &rva, &rkey, &rlen);
	EXPECT_EQ(va, rva);
	EXPECT_EQ(self->txmr->rkey, rkey);
	EXPECT_EQ(len, rlen);
	ASSERT_EQ(0, tm_srq_read(self->srq, wc.src_qp, 601, rva, rkey,
				 RX(4096), rlen, self->lkey, DTM_SEND_SIGNALED));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_RDMA_READ, .wr_id = 601,
		  .byte_len = len, .qp_num = self->srqn,
		  .any = WC_ANY_SRC | WC_ANY_TM);
	EXPECT_EQ(0, memcmp(self->rx + 4096, self->tx + 200, len));
	EXPECT_UNTOUCHED(4096 + len, 64);

	tm_rndv_hdr(fin, DTM_TMH_FIN, 0x44, 0x900, va, self->txmr->rkey, len);
	ASSERT_EQ(0, tm_srq_send(self->srq, self->qpn, 602, fin, 32, 0));
	ASSERT_EQ(1, tm_poll(self->qcq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_RECV, .flags = DTM_WC_INLINE,
		  .byte_len = 32, .qp_num = self->qpn, .src_qp = self->srqn,
		  .any = WC_ANY_WRID | WC_ANY_TM);
	EXPECT_EQ(0, memcmp(wc.data, fin, 32));
	EXPECT_EQ(0, tm_pending(self->scq));	/* FIN unsignaled */
}

/* A tagged buffer smaller than TMH + RVH gets what fits of them. */
TEST_F(tm, rndv_incomplete_tiny_buffer_gets_what_fits)
{
	const uint64_t va = (uintptr_t)self->tx;
	uint8_t hdr[32];
	struct dtm_wc wc;
	uint32_t h;

	ASSERT_EQ(0, tm_add(self->srq, 1, 0, 0, 610, 0x901, FULL, RX(0), 20,
			    self->lkey, &h));
	ASSERT_EQ(0, tm_send_rndv(self->qp, 2, 0x45, 0x901, va,
				  self->txmr->rkey, 100, NULL, 0, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_RECV,
		  .status = DTM_WC_TM_RNDV_INCOMPLETE, .flags = DTM_WC_TM_MATCH,
		  .wr_id = 610, .byte_len = 20, .qp_num = self->srqn,
		  .src_qp = self->qpn, .handle = h, .tag = 0x901, .priv = 0x45);
	tm_rndv_hdr(hdr, DTM_TMH_RNDV, 0x45, 0x901, va, self->txmr->rkey, 100);
	EXPECT_EQ(0, memcmp(self->rx, hdr, 20));
	EXPECT_UNTOUCHED(20, 44);
	EXPECT_EQ(0, tm_pending(self->qcq));
}

/*
 * An unexpected rendezvous request (with metadata) lands whole in the
 * untagged buffer; software reads the payload and sends the FIN.
 */
TEST_F(tm, rndv_unexpected_software_finishes)
{
	const uint32_t len = 2000;
	const uint64_t va = (uintptr_t)(self->tx + 300);
	uint8_t meta[8] = "METADAT", want[40], fin[32];
	struct dtm_wc wc;
	enum dtm_tmh_op op;
	uint32_t app_ctx, rkey, rlen;
	uint64_t tag, rva;

	ASSERT_EQ(0, tm_recv(self->srq, 700, RX(8192), 256, self->lkey));
	ASSERT_EQ(0, tm_send_rndv(self->qp, 1, 0x66, 0xa00, va,
				  self->txmr->rkey, len, meta, 8, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_RECV, .flags = SREQ, .wr_id = 700,
		  .byte_len = 40, .qp_num = self->srqn, .src_qp = self->qpn,
		  .any = WC_ANY_TM);
	tm_rndv_hdr(want, DTM_TMH_RNDV, 0x66, 0xa00, va, self->txmr->rkey, len);
	memcpy(want + 32, meta, 8);
	EXPECT_EQ(0, memcmp(self->rx + 8192, want, 40));
	EXPECT_EQ(0, tm_pending(self->qcq));

	dtm_tmh_parse((const void *)(self->rx + 8192), &op, &app_ctx, &tag);
	dtm_rvh_parse((const void *)(self->rx + 8192 + 16), &rva, &rkey, &rlen);
	EXPECT_EQ(DTM_TMH_RNDV, op);
	EXPECT_EQ(0xa00, tag);
	/* unsignaled read: no completion on success */
	ASSERT_EQ(0, tm_srq_read(self->srq, wc.src_qp, 701, rva, rkey,
				 RX(16384), rlen, self->lkey, 0));
	EXPECT_EQ(0, memcmp(self->rx + 16384, self->tx + 300, len));
	EXPECT_EQ(0, tm_pending(self->scq));
	tm_rndv_hdr(fin, DTM_TMH_FIN, app_ctx, tag, rva, rkey, rlen);
	ASSERT_EQ(0, tm_srq_send(self->srq, wc.src_qp, 702, fin, 32,
				 DTM_SEND_SIGNALED));
	ASSERT_EQ(1, tm_poll(self->qcq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_RECV, .flags = DTM_WC_INLINE,
		  .byte_len = 32, .qp_num = self->qpn, .src_qp = self->srqn,
		  .any = WC_ANY_WRID | WC_ANY_TM);
	EXPECT_EQ(0, memcmp(wc.data, fin, 32));
	/* the signaled SRQ-side send: DTM_WC_SEND on the SRQ's CQ */
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_SEND, .flags = SREQ, .wr_id = 702,
		  .qp_num = self->srqn,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TM);
	ASSERT_EQ(0, tm_sync(self->srq, 703, DTM_OPS_SIGNALED, 1));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_SYNC, .wr_id = 703,
		  .qp_num = self->srqn,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TM);
}

/*
 * A rendezvous the kernel cannot read: MATCH, then TM_RECV with
 * REM_ACCESS_ERR (flags 0), and the sender's CQ gets RECV REM_ACCESS_ERR
 * with the request's TMH + RVH inline (no FIN).
 */
static void rndv_access_err(struct __test_metadata *_metadata,
			    FIXTURE_DATA(tm) *self, uint64_t va,
			    uint32_t rkey, uint32_t len)
{
	uint8_t hdr[32];
	struct dtm_wc wc[2];
	uint32_t h;

	ASSERT_EQ(0, tm_add(self->srq, 1, 0, 0, 900, 0xb00, FULL, RX(0), 4096,
			    self->lkey, &h));
	ASSERT_EQ(0, tm_send_rndv(self->qp, 2, 0x99, 0xb00, va, rkey, len,
				  NULL, 0, 0));
	ASSERT_EQ(2, tm_poll(self->scq, wc, 2, TMO));
	EXPECT_WC(wc[0], .opcode = DTM_WC_TM_RECV, .flags = DTM_WC_TM_MATCH,
		  .wr_id = 900, .byte_len = len, .qp_num = self->srqn,
		  .src_qp = self->qpn, .handle = h, .tag = 0xb00, .priv = 0x99);
	EXPECT_WC(wc[1], .opcode = DTM_WC_TM_RECV,
		  .status = DTM_WC_REM_ACCESS_ERR, .wr_id = 900,
		  .qp_num = self->srqn, .src_qp = self->qpn,
		  .any = WC_ANY_LEN | WC_ANY_TM);
	ASSERT_EQ(1, tm_poll(self->qcq, wc, 1, TMO));
	EXPECT_WC(wc[0], .opcode = DTM_WC_RECV,
		  .status = DTM_WC_REM_ACCESS_ERR, .flags = DTM_WC_INLINE,
		  .byte_len = 32, .qp_num = self->qpn, .src_qp = self->srqn,
		  .any = WC_ANY_WRID | WC_ANY_TM);
	tm_rndv_hdr(hdr, DTM_TMH_RNDV, 0x99, 0xb00, va, rkey, len);
	EXPECT_EQ(0, memcmp(wc[0].data, hdr, 32));
	EXPECT_UNTOUCHED(0, 4096);
	EXPECT_EQ(0, tm_pending(self->scq));
	EXPECT_EQ(0, tm_pending(self->qcq));
}

/* The key of a region deregistered before the send: keys die at once. */
TEST_F(tm, rndv_wrong_rkey_rem_access_err)
{
	struct dtm_mr *mr = dtm_reg_mr(self->ctx, self->tx, 4096,
				       DTM_ACCESS_REMOTE_READ);
	uint32_t rkey;

	ASSERT_NE(NULL, mr);
	rkey = mr->rkey;
	ASSERT_EQ(0, dtm_dereg_mr(mr));
	rndv_access_err(_metadata, self, (uintptr_t)self->tx, rkey, 1000);
}

TEST_F(tm, rndv_range_outside_region_rem_access_err)
{
	rndv_access_err(_metadata, self, (uintptr_t)(self->tx + TX_LEN - 100),
			self->txmr->rkey, 200);
}

TEST_F(tm, rndv_region_without_remote_read_rem_access_err)
{
	struct dtm_mr *mr = dtm_reg_mr(self->ctx, self->tx, 8192,
				       DTM_ACCESS_LOCAL_WRITE);

	ASSERT_NE(NULL, mr);
	rndv_access_err(_metadata, self, (uintptr_t)self->tx, mr->rkey, 1000);
}

/* The rkey must name a region of the sending QP's context. */
TEST_F(tm, rndv_other_context_rkey_rem_access_err)
{
	struct dtm_context *ctx2 = dtm_open_device(NULL);
	struct dtm_mr *mr;

	ASSERT_NE(NULL, ctx2);
	mr = dtm_reg_mr(ctx2, self->tx, 8192, DTM_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	rndv_access_err(_metadata, self, (uintptr_t)self->tx, mr->rkey, 1000);
	dtm_close_device(ctx2);
}

/* ----------------------------------------------------- the sync rule */

/*
 * After an unexpected message, an ADD's completion carries SYNC_REQ;
 * software answers with TAG_SYNC and the count: TM_SYNC without SYNC_REQ,
 * and the entry becomes eligible.
 */
TEST_F(tm, add_sync_req_triggers_sync)
{
	uint8_t pay[8] = "payload";
	struct dtm_wc wc;
	uint32_t hb;

	ASSERT_EQ(0, tm_recv(self->srq, 9, RX(8192), 64, self->lkey));
	ASSERT_EQ(0, tm_send(self->qp, 1, DTM_TMH_EAGER, 1, 0x61, pay, 8, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_RECV, .flags = SREQ, .wr_id = 9,
		  .byte_len = 24, .qp_num = self->srqn, .src_qp = self->qpn,
		  .any = WC_ANY_TM);

	ASSERT_EQ(0, tm_add(self->srq, 20, DTM_OPS_SIGNALED, 0, 120, 0x62,
			    FULL, RX(0), 64, self->lkey, &hb));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_ADD, .flags = SREQ, .wr_id = 20,
		  .qp_num = self->srqn, .handle = hb,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TAG | WC_ANY_PRIV);
	ASSERT_TRUE(wc.wc_flags & DTM_WC_TM_SYNC_REQ);

	/* the reaction to SYNC_REQ */
	ASSERT_EQ(0, tm_sync(self->srq, 21, DTM_OPS_SIGNALED, 1));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_SYNC, .wr_id = 21,
		  .qp_num = self->srqn,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TM);

	ASSERT_EQ(0, tm_send(self->qp, 2, DTM_TMH_EAGER, 2, 0x62, pay, 8, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_RECV, .flags = MD, .wr_id = 120,
		  .byte_len = 8, .qp_num = self->srqn, .src_qp = self->qpn,
		  .handle = hb, .tag = 0x62, .priv = 2);
	EXPECT_EQ(0, memcmp(self->rx, pay, 8));
}

/*
 * The seed's race, exactly: m1 arrives unexpected (hw = 1); b1 is posted
 * with the stale count 0 (not eligible); m2, with b1's tag, arrives: it
 * must not match b1 (it would overtake m1), so it is unexpected too (hw =
 * 2, SYNC_REQ); software handles both and posts b2 with TM_SYNC and count
 * 2: in sync, b1 and b2 eligible; m3 and m4 land in b1 then b2.
 */
TEST_F(tm, seed_race_m1_m2_b1_b2)
{
	const uint64_t T = 0x77;
	uint8_t m[4][32], want[48];
	struct dtm_tmh tmh;
	struct dtm_wc wc[6];
	uint32_t hb1, hb2;
	int i;

	for (i = 0; i < 4; i++)
		tm_fill(m[i], 32, 40 + i);
	ASSERT_EQ(0, tm_recv(self->srq, 0xf1, RX(0), 64, self->lkey));
	ASSERT_EQ(0, tm_recv(self->srq, 0xf2, RX(64), 64, self->lkey));

	/* m1: nothing posted */
	ASSERT_EQ(0, tm_send(self->qp, 1, DTM_TMH_EAGER, 1, T, m[0], 32, 0));
	/* b1 with the count software had before m1 */
	ASSERT_EQ(0, tm_add(self->srq, 0xa1, DTM_OPS_SIGNALED | DTM_OPS_TM_SYNC,
			    0, 0xb1, T, FULL, RX(4096), 64, self->lkey, &hb1));
	/* m2: b1's tag */
	ASSERT_EQ(0, tm_send(self->qp, 2, DTM_TMH_EAGER, 2, T, m[1], 32, 0));
	/* software has seen m1 and m2: b2 with TM_SYNC and 2 */
	ASSERT_EQ(0, tm_add(self->srq, 0xa2, DTM_OPS_SIGNALED | DTM_OPS_TM_SYNC,
			    2, 0xb2, T, FULL, RX(8192), 64, self->lkey, &hb2));
	EXPECT_NE(hb1, hb2);
	/* m3, m4: b1 then b2 */
	ASSERT_EQ(0, tm_send(self->qp, 3, DTM_TMH_EAGER, 3, T, m[2], 32, 0));
	ASSERT_EQ(0, tm_send(self->qp, 4, DTM_TMH_EAGER, 4, T, m[3], 32, 0));

	ASSERT_EQ(6, tm_poll(self->scq, wc, 6, TMO));
	EXPECT_WC(wc[0], .opcode = DTM_WC_RECV, .flags = SREQ, .wr_id = 0xf1,
		  .byte_len = 48, .qp_num = self->srqn, .src_qp = self->qpn,
		  .any = WC_ANY_TM);
	EXPECT_WC(wc[1], .opcode = DTM_WC_TM_ADD, .flags = SREQ, .wr_id = 0xa1,
		  .qp_num = self->srqn, .handle = hb1,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TAG | WC_ANY_PRIV);
	EXPECT_WC(wc[2], .opcode = DTM_WC_RECV, .flags = SREQ, .wr_id = 0xf2,
		  .byte_len = 48, .qp_num = self->srqn, .src_qp = self->qpn,
		  .any = WC_ANY_TM);
	EXPECT_WC(wc[3], .opcode = DTM_WC_TM_ADD, .wr_id = 0xa2,
		  .qp_num = self->srqn, .handle = hb2,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TAG | WC_ANY_PRIV);
	EXPECT_WC(wc[4], .opcode = DTM_WC_TM_RECV, .flags = MD, .wr_id = 0xb1,
		  .byte_len = 32, .qp_num = self->srqn, .src_qp = self->qpn,
		  .handle = hb1, .tag = T, .priv = 3);
	EXPECT_WC(wc[5], .opcode = DTM_WC_TM_RECV, .flags = MD, .wr_id = 0xb2,
		  .byte_len = 32, .qp_num = self->srqn, .src_qp = self->qpn,
		  .handle = hb2, .tag = T, .priv = 4);

	/* m1 and m2 whole in the untagged buffers, m3 in b1, m4 in b2 */
	for (i = 0; i < 2; i++) {
		dtm_tmh_build(&tmh, DTM_TMH_EAGER, 1 + i, T);
		memcpy(want, &tmh, 16);
		memcpy(want + 16, m[i], 32);
		EXPECT_EQ(0, memcmp(self->rx + 64 * i, want, 48)) TH_LOG("m%d", i + 1);
	}
	EXPECT_EQ(0, memcmp(self->rx + 4096, m[2], 32));
	EXPECT_EQ(0, memcmp(self->rx + 8192, m[3], 32));
	EXPECT_EQ(0, tm_pending(self->scq));
}

/* ------------------------------------------------------------- DEL */

/* DEL of an entry still in the list removes it: its tag goes unexpected. */
TEST_F(tm, del_unconsumed_entry)
{
	uint8_t pay[8] = "deleted";
	struct dtm_wc wc;
	uint32_t h, h2;

	ASSERT_EQ(0, tm_recv(self->srq, 9, RX(8192), 64, self->lkey));
	ASSERT_EQ(0, tm_add(self->srq, 30, 0, 0, 130, 0x70, FULL, RX(0), 256,
			    self->lkey, &h));
	ASSERT_EQ(0, tm_add(self->srq, 31, 0, 0, 131, 0x71, FULL, RX(256), 256,
			    self->lkey, &h2));
	ASSERT_EQ(0, tm_del(self->srq, 32, DTM_OPS_SIGNALED, h));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_DEL, .wr_id = 32,
		  .qp_num = self->srqn, .handle = h,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TAG | WC_ANY_PRIV);
	/* unsignaled DEL of a live entry: no completion */
	ASSERT_EQ(0, tm_del(self->srq, 33, 0, h2));
	EXPECT_EQ(0, tm_pending(self->scq));

	ASSERT_EQ(0, tm_send(self->qp, 1, DTM_TMH_EAGER, 5, 0x70, pay, 8, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_RECV, .flags = SREQ, .wr_id = 9,
		  .byte_len = 24, .qp_num = self->srqn, .src_qp = self->qpn,
		  .any = WC_ANY_TM);
	EXPECT_UNTOUCHED(0, 512);
}

/*
 * DEL of an entry a message consumed: the consumption completion is
 * delivered, the DEL completes with TM_ERR even unsignaled, and the
 * handle is not issued again before both are in.
 */
TEST_F(tm, del_consumed_entry_tm_err)
{
	uint8_t pay[8] = "consume";
	struct dtm_wc wc;
	uint32_t h, hk;
	int k;

	ASSERT_EQ(0, tm_add(self->srq, 40, 0, 0, 140, 0x80, FULL, RX(0), 64,
			    self->lkey, &h));
	ASSERT_EQ(0, tm_send(self->qp, 1, DTM_TMH_EAGER, 6, 0x80, pay, 8, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_RECV, .flags = MD, .wr_id = 140,
		  .byte_len = 8, .qp_num = self->srqn, .src_qp = self->qpn,
		  .handle = h, .tag = 0x80, .priv = 6);
	/* the handle stays reserved until the DEL completion is in */
	for (k = 0; k < 40; k++) {
		ASSERT_EQ(0, tm_add(self->srq, 50, 0, 0, 150, 0x81 + k, FULL,
				    RX(1024), 64, self->lkey, &hk));
		EXPECT_NE(h, hk) TH_LOG("handle %u reissued at %d", h, k);
		ASSERT_EQ(0, tm_del(self->srq, 51, 0, hk));
	}
	EXPECT_EQ(0, tm_pending(self->scq));
	ASSERT_EQ(0, tm_del(self->srq, 41, 0, h));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_DEL, .status = DTM_WC_TM_ERR,
		  .wr_id = 41, .qp_num = self->srqn, .handle = h,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TAG | WC_ANY_PRIV);
	EXPECT_EQ(0, tm_pending(self->scq));
}

/*
 * A handle the SRQ issued whose entry is gone (consumed, or deleted
 * already): every DEL of it completes TM_DEL with TM_ERR, signaled or
 * not; it is never EINVAL (spec: "every time").  Here: consumed.
 */
TEST_F(tm, del_consumed_handle_again_tm_err)
{
	uint8_t pay[8] = "consume";
	struct dtm_wc wc;
	uint32_t h;
	int k;

	ASSERT_EQ(0, tm_add(self->srq, 1, 0, 0, 1, 0x90, FULL, RX(0), 64,
			    self->lkey, &h));
	ASSERT_EQ(0, tm_send(self->qp, 1, DTM_TMH_EAGER, 6, 0x90, pay, 8, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	for (k = 0; k < 3; k++) {
		ASSERT_EQ(0, tm_del(self->srq, 2 + k, k == 1 ? DTM_OPS_SIGNALED : 0,
				    h)) TH_LOG("DEL %d of consumed handle %u", k, h);
		ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
		EXPECT_WC(wc, .opcode = DTM_WC_TM_DEL, .status = DTM_WC_TM_ERR,
			  .wr_id = 2 + k, .qp_num = self->srqn, .handle = h,
			  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TAG | WC_ANY_PRIV);
	}
	EXPECT_EQ(0, tm_pending(self->scq));
}

/* The same for a handle whose entry was deleted (DEL completion in). */
TEST_F(tm, del_deleted_handle_again_tm_err)
{
	struct dtm_wc wc;
	uint32_t h;
	int k;

	ASSERT_EQ(0, tm_add(self->srq, 4, 0, 0, 1, 0x91, FULL, RX(0), 64,
			    self->lkey, &h));
	ASSERT_EQ(0, tm_del(self->srq, 5, DTM_OPS_SIGNALED, h));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_DEL, .wr_id = 5, .qp_num = self->srqn,
		  .handle = h,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TAG | WC_ANY_PRIV);
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, tm_del(self->srq, 6 + k, 0, h))
			TH_LOG("DEL %d of deleted handle %u", k, h);
		ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
		EXPECT_WC(wc, .opcode = DTM_WC_TM_DEL, .status = DTM_WC_TM_ERR,
			  .wr_id = 6 + k, .qp_num = self->srqn, .handle = h,
			  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TAG | WC_ANY_PRIV);
	}
	EXPECT_EQ(0, tm_pending(self->scq));
}

/*
 * A DEL of a handle never issued (above the last one issued, or 0):
 * EINVAL, bad_wr at it, those before done, none after.
 */
TEST_F(tm, del_unknown_handle_bad_wr)
{
	struct dtm_ops_wr ops[3] = {
		{ .wr_id = 50, .opcode = DTM_WR_TAG_SYNC,
		  .flags = DTM_OPS_SIGNALED },
		{ .wr_id = 51, .opcode = DTM_WR_TAG_DEL,
		  .flags = DTM_OPS_SIGNALED, .tm.handle = 0x7edcba98 },
		{ .wr_id = 52, .opcode = DTM_WR_TAG_SYNC,
		  .flags = DTM_OPS_SIGNALED },
	};
	struct dtm_ops_wr *bad = NULL;
	struct dtm_wc wc[3];

	ops[0].next = &ops[1];
	ops[1].next = &ops[2];
	EXPECT_EQ(EINVAL, dtm_post_srq_ops(self->srq, ops, &bad));
	EXPECT_EQ(&ops[1], bad);
	ASSERT_EQ(1, tm_poll(self->scq, wc, 3, 200));
	EXPECT_WC(wc[0], .opcode = DTM_WC_TM_SYNC, .wr_id = 50,
		  .qp_num = self->srqn,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TM);
	/* handle 0 is never issued */
	EXPECT_EQ(EINVAL, tm_del(self->srq, 53, DTM_OPS_SIGNALED, 0));
	EXPECT_EQ(0, tm_pending(self->scq));
}

/* ------------------------------------------------------------ limits */

/*
 * max_num_tags 4: the fifth ADD of one call is ENOMEM with bad_wr at it
 * (the four before are posted, handles written back); after a DEL the
 * fifth goes in, and the list matches as posted.
 */
TEST_F(tm, list_full_enomem_then_repost)
{
	struct dtm_srq_init_attr sa = {
		.cq = self->scq, .max_num_tags = 4, .max_ops = 8, .max_wr = 4,
		.max_sge = 1,
	};
	struct dtm_qp_init_attr qa = { .cq = self->qcq, .max_sge = 2 };
	struct dtm_srq *srq = dtm_create_srq(self->ctx, &sa);
	struct dtm_qp *qp = dtm_create_qp(self->ctx, &qa);
	struct dtm_sge sge[5];
	struct dtm_ops_wr ops[5], *bad = NULL;
	uint8_t pay[8] = "fifth..";
	struct dtm_wc wc;
	int i;

	ASSERT_NE(NULL, srq);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, dtm_connect(qp, srq->srq_num));
	memset(ops, 0, sizeof(ops));
	for (i = 0; i < 5; i++) {
		sge[i] = (struct dtm_sge){ RX(i * 256), 256, self->lkey };
		ops[i].wr_id = 60 + i;
		ops[i].opcode = DTM_WR_TAG_ADD;
		ops[i].tm.handle = 0;
		ops[i].tm.add.recv_wr_id = 160 + i;
		ops[i].tm.add.sg_list = &sge[i];
		ops[i].tm.add.num_sge = 1;
		ops[i].tm.add.tag = 0x100 + i;
		ops[i].tm.add.mask = FULL;
		ops[i].next = i < 4 ? &ops[i + 1] : NULL;
	}
	EXPECT_EQ(ENOMEM, dtm_post_srq_ops(srq, ops, &bad));
	ASSERT_EQ(&ops[4], bad);
	for (i = 1; i < 4; i++)
		EXPECT_NE(ops[i - 1].tm.handle, ops[i].tm.handle);
	EXPECT_EQ(0, tm_pending(self->scq));

	ASSERT_EQ(0, tm_del(srq, 70, DTM_OPS_SIGNALED, ops[1].tm.handle));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_DEL, .wr_id = 70,
		  .qp_num = srq->srq_num, .handle = ops[1].tm.handle,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TAG | WC_ANY_PRIV);
	ops[4].next = NULL;
	bad = NULL;
	ASSERT_EQ(0, dtm_post_srq_ops(srq, &ops[4], &bad));
	for (i = 0; i < 4; i++)
		EXPECT_NE(ops[i].tm.handle, ops[4].tm.handle);

	/* the fifth matches; the deleted second's tag finds nothing */
	ASSERT_EQ(0, tm_send(qp, 1, DTM_TMH_EAGER, 7, 0x104, pay, 8, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_RECV, .flags = MD, .wr_id = 164,
		  .byte_len = 8, .qp_num = srq->srq_num, .src_qp = qp->qp_num,
		  .handle = ops[4].tm.handle, .tag = 0x104, .priv = 7);
	EXPECT_EQ(0, memcmp(self->rx + 4 * 256, pay, 8));
	EXPECT_EQ(EAGAIN, tm_send(qp, 2, DTM_TMH_EAGER, 7, 0x101, pay, 8, 0));
	EXPECT_EQ(0, tm_pending(self->scq));
	EXPECT_EQ(0, dtm_destroy_qp(qp));
	EXPECT_EQ(0, dtm_destroy_srq(srq));
	/* destroying the QP told the SRQ's CQ; drain it */
	tm_pending(self->scq);
}

/* max_ops 4: a call of five ops is ENOMEM at index 4, four carried out. */
TEST_F(tm, max_ops_enomem_bad_wr)
{
	struct dtm_srq_init_attr sa = {
		.cq = self->scq, .max_num_tags = 8, .max_ops = 4, .max_wr = 4,
		.max_sge = 1,
	};
	struct dtm_srq *srq = dtm_create_srq(self->ctx, &sa);
	struct dtm_ops_wr ops[5], *bad = NULL;
	struct dtm_wc wc[5];
	int i;

	ASSERT_NE(NULL, srq);
	memset(ops, 0, sizeof(ops));
	for (i = 0; i < 5; i++) {
		ops[i].wr_id = 80 + i;
		ops[i].opcode = DTM_WR_TAG_SYNC;
		ops[i].flags = DTM_OPS_SIGNALED;
		ops[i].next = i < 4 ? &ops[i + 1] : NULL;
	}
	EXPECT_EQ(ENOMEM, dtm_post_srq_ops(srq, ops, &bad));
	EXPECT_EQ(&ops[4], bad);
	ASSERT_EQ(4, tm_poll(self->scq, wc, 5, 200));
	for (i = 0; i < 4; i++)
		EXPECT_WC(wc[i], .opcode = DTM_WC_TM_SYNC, .wr_id = 80 + i,
			  .qp_num = srq->srq_num,
			  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TM);
	/* exactly max_ops in one call is fine */
	ops[3].next = NULL;
	bad = NULL;
	EXPECT_EQ(0, dtm_post_srq_ops(srq, ops, &bad));
	EXPECT_EQ(4, tm_poll(self->scq, wc, 5, 200));
	EXPECT_EQ(0, dtm_destroy_srq(srq));
}

/* ------------------------------------------------------------- masks */

/*
 * Partial masks, a wildcard (mask 0) and a full mask: each message takes
 * the earliest-posted entry it matches under that entry's mask (the
 * posted tag is masked at ADD); entries are consumed out of post order;
 * the completion reports the message's own tag; a tag no entry accepts
 * goes unexpected.
 */
TEST_F(tm, masks_wildcard_and_partial)
{
	static const struct { uint64_t tag, mask; } e[6] = {
		{ 0x12ff, 0xff00 },		/* e0: stored as 0x1200 */
		{ 0xdead, 0 },			/* e1: wildcard */
		{ 0x1234, FULL },		/* e2 */
		{ 0xab00, 0xff00 },		/* e3 */
		{ 0x00cd, 0x00ff },		/* e4 */
		{ 0xf000000000000000ULL, 0xf000000000000000ULL },	/* e5 */
	};
	/* message tag -> entry (-1: unexpected) */
	static const struct { uint64_t tag; int entry; } msg[6] = {
		{ 0x1234, 0 }, { 0x1234, 1 }, { 0x1234, 2 }, { 0x77cd, 4 },
		{ 0xf123456789abcdefULL, 5 }, { 0xac00, -1 },
	};
	uint8_t pay[6][16];
	uint32_t h[6];
	struct dtm_wc wc;
	int i;

	ASSERT_EQ(0, tm_recv(self->srq, 0x5e, RX(8192), 64, self->lkey));
	for (i = 0; i < 6; i++)
		ASSERT_EQ(0, tm_add(self->srq, i, 0, 0, 500 + i, e[i].tag,
				    e[i].mask, RX(i * 256), 256, self->lkey,
				    &h[i]));
	for (i = 0; i < 6; i++) {
		int k = msg[i].entry;

		tm_fill(pay[i], 16, 60 + i);
		ASSERT_EQ(0, tm_send(self->qp, i, DTM_TMH_EAGER, 0xc0 + i,
				     msg[i].tag, pay[i], 16, 0));
		ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
		if (k < 0) {
			EXPECT_WC(wc, .opcode = DTM_WC_RECV, .flags = SREQ,
				  .wr_id = 0x5e, .byte_len = 32,
				  .qp_num = self->srqn, .src_qp = self->qpn,
				  .any = WC_ANY_TM);
			continue;
		}
		EXPECT_WC(wc, .opcode = DTM_WC_TM_RECV, .flags = MD,
			  .wr_id = 500 + k, .byte_len = 16,
			  .qp_num = self->srqn, .src_qp = self->qpn,
			  .handle = h[k], .tag = msg[i].tag, .priv = 0xc0 + i);
		EXPECT_EQ(0, memcmp(self->rx + k * 256, pay[i], 16))
			TH_LOG("message %d in entry %d", i, k);
	}
	/* after the sync e3 (untouched so far) takes its tag */
	EXPECT_UNTOUCHED(3 * 256, 256);
	ASSERT_EQ(0, tm_sync(self->srq, 99, 0, 1));
	ASSERT_EQ(0, tm_send(self->qp, 9, DTM_TMH_EAGER, 0xcf, 0xab42, pay[0],
			     16, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_RECV, .flags = MD, .wr_id = 503,
		  .byte_len = 16, .qp_num = self->srqn, .src_qp = self->qpn,
		  .handle = h[3], .tag = 0xab42, .priv = 0xcf);
	EXPECT_EQ(0, tm_pending(self->scq));
}

/* ---------------------------------------------------------- ordering */

/*
 * Four wildcard entries, four messages of different tags chained in one
 * dtm_post_send: message i lands in entry i (send order x post order).
 */
TEST_F(tm, order_within_qp_wildcards)
{
	struct dtm_tmh tmh[4];
	struct dtm_sge sge[4][2];
	struct dtm_send_wr wr[4], *bad = NULL;
	uint8_t pay[4][40];
	struct dtm_wc wc[4];
	uint32_t h[4];
	int i;

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, tm_add(self->srq, i, 0, 0, 800 + i, 0, 0,
				    RX(i * 128), 128, self->lkey, &h[i]));
		tm_fill(pay[i], 40, 80 + i);
		dtm_tmh_build(&tmh[i], DTM_TMH_EAGER, i, 0x4000 - i);
		sge[i][0] = (struct dtm_sge){ (uintptr_t)&tmh[i], 16, 0 };
		sge[i][1] = (struct dtm_sge){ (uintptr_t)pay[i], 40, 0 };
		wr[i] = (struct dtm_send_wr){
			.wr_id = 20 + i, .next = i < 3 ? &wr[i + 1] : NULL,
			.sg_list = sge[i], .num_sge = 2, .opcode = DTM_WR_SEND,
			.send_flags = DTM_SEND_INLINE,
		};
	}
	ASSERT_EQ(0, dtm_post_send(self->qp, wr, &bad));
	ASSERT_EQ(4, tm_poll(self->scq, wc, 4, TMO));
	for (i = 0; i < 4; i++) {
		EXPECT_WC(wc[i], .opcode = DTM_WC_TM_RECV, .flags = MD,
			  .wr_id = 800 + i, .byte_len = 40,
			  .qp_num = self->srqn, .src_qp = self->qpn,
			  .handle = h[i], .tag = 0x4000 - i, .priv = i);
		EXPECT_EQ(0, memcmp(self->rx + i * 128, pay[i], 40));
	}
}

/*
 * Two QPs (one in another context) to one SRQ, sends interleaved A B A B:
 * the SRQ serialises them in that order over the wildcard entries.
 */
TEST_F(tm, order_across_qps)
{
	struct dtm_context *ctx2 = dtm_open_device(NULL);
	struct dtm_cq *cq2;
	struct dtm_qp *qp2;
	struct dtm_qp_init_attr qa = { .max_sge = 2 };
	uint8_t pay[6][24];
	struct dtm_wc wc[6];
	uint32_t h[6];
	int i;

	ASSERT_NE(NULL, ctx2);
	cq2 = dtm_create_cq(ctx2, 16);
	ASSERT_NE(NULL, cq2);
	qa.cq = cq2;
	qp2 = dtm_create_qp(ctx2, &qa);
	ASSERT_NE(NULL, qp2);
	ASSERT_EQ(0, dtm_connect(qp2, self->srqn));
	for (i = 0; i < 6; i++)
		ASSERT_EQ(0, tm_add(self->srq, i, 0, 0, 850 + i, 0, 0,
				    RX(i * 128), 128, self->lkey, &h[i]));
	for (i = 0; i < 6; i++) {
		tm_fill(pay[i], 24, 90 + i);
		ASSERT_EQ(0, tm_send(i % 2 ? qp2 : self->qp, i, DTM_TMH_EAGER,
				     i, 0x600 + i, pay[i], 24, 0));
	}
	ASSERT_EQ(6, tm_poll(self->scq, wc, 6, TMO));
	for (i = 0; i < 6; i++) {
		EXPECT_WC(wc[i], .opcode = DTM_WC_TM_RECV, .flags = MD,
			  .wr_id = 850 + i, .byte_len = 24,
			  .qp_num = self->srqn,
			  .src_qp = i % 2 ? qp2->qp_num : self->qpn,
			  .handle = h[i], .tag = 0x600 + i, .priv = i);
		EXPECT_EQ(0, memcmp(self->rx + i * 128, pay[i], 24));
	}
	EXPECT_EQ(0, tm_pending(cq2));
	dtm_close_device(ctx2);
}

/* --------------------------------------------------- errors, teardown */

/* The send-path checks of the spec, one errno each; nothing completes. */
TEST_F(tm, connect_and_send_errors)
{
	struct dtm_qp_init_attr qa = { .cq = self->qcq, .max_sge = 4 };
	struct dtm_qp *qp2 = dtm_create_qp(self->ctx, &qa);
	uint8_t m[80];
	struct dtm_sge sge = { (uintptr_t)m, 0, 0 };
	struct dtm_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = DTM_WR_SEND, .send_flags = DTM_SEND_INLINE,
	};
	struct dtm_send_wr *bad;

	ASSERT_NE(NULL, qp2);
	EXPECT_EQ(ENOTCONN, tm_send(qp2, 1, DTM_TMH_EAGER, 0, 1, m, 8, 0));
	EXPECT_EQ(-ENOENT, dtm_connect(qp2, 0x7ffffff0));
	EXPECT_EQ(-EISCONN, dtm_connect(self->qp, self->srqn));

	memset(m, 0, sizeof(m));
	dtm_tmh_build((struct dtm_tmh *)m, DTM_TMH_EAGER, 0, 1);
	sge.length = 15;			/* shorter than a TMH */
	EXPECT_EQ(EINVAL, dtm_post_send(self->qp, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	m[0] = 4;				/* no such TMH opcode */
	sge.length = 16;
	EXPECT_EQ(EINVAL, dtm_post_send(self->qp, &wr, &bad));
	dtm_tmh_build((struct dtm_tmh *)m, DTM_TMH_RNDV, 0, 1);
	sge.length = 31;			/* rendezvous without its RVH */
	EXPECT_EQ(EINVAL, dtm_post_send(self->qp, &wr, &bad));
	sge.length = 65;			/* over max_rndv_hdr_size */
	EXPECT_EQ(EINVAL, dtm_post_send(self->qp, &wr, &bad));
	wr.opcode = DTM_WR_RDMA_READ;		/* not on a QP */
	wr.send_flags = 0;
	sge = (struct dtm_sge){ RX(0), 64, self->lkey };
	EXPECT_EQ(EINVAL, dtm_post_send(self->qp, &wr, &bad));

	/* from the SRQ: only to a connected QP, at most 64 bytes */
	dtm_tmh_build((struct dtm_tmh *)m, DTM_TMH_NO_TAG, 0, 0);
	EXPECT_EQ(ENOENT, tm_srq_send(self->srq, qp2->qp_num, 2, m, 16, 0));
	EXPECT_EQ(E2BIG, tm_srq_send(self->srq, self->qpn, 3, m, 65, 0));
	/* a CQ in use */
	EXPECT_EQ(-EBUSY, dtm_destroy_cq(self->scq));
	EXPECT_EQ(0, tm_pending(self->scq));
	EXPECT_EQ(0, tm_pending(self->qcq));
	EXPECT_EQ(0, dtm_destroy_qp(qp2));
}

/* A message from the SRQ to its QP: inline, TM_NO_TAG for a no-tag TMH. */
TEST_F(tm, srq_send_no_tag_inline)
{
	uint8_t m[40];
	struct dtm_wc wc;

	tm_fill(m, sizeof(m), 8);
	dtm_tmh_build((struct dtm_tmh *)m, DTM_TMH_NO_TAG, 0x12, 0x34);
	ASSERT_EQ(0, tm_srq_send(self->srq, self->qpn, 5, m, 40,
				 DTM_SEND_SIGNALED));
	ASSERT_EQ(1, tm_poll(self->qcq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_NO_TAG, .flags = DTM_WC_INLINE,
		  .byte_len = 40, .qp_num = self->qpn, .src_qp = self->srqn,
		  .any = WC_ANY_WRID | WC_ANY_TM);
	EXPECT_EQ(0, memcmp(wc.data, m, 40));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_SEND, .wr_id = 5, .qp_num = self->srqn,
		  .any = WC_ANY_LEN | WC_ANY_SRC | WC_ANY_TM);
}

/*
 * Destroying an SRQ ends its connections: the QP's CQ gets RECV
 * WR_FLUSH_ERR (src_qp = the SRQ) and its later sends are ECONNRESET.
 */
TEST_F(tm, destroy_srq_flushes_connected_qp)
{
	struct dtm_srq_init_attr sa = {
		.cq = self->scq, .max_num_tags = 4, .max_ops = 4, .max_wr = 4,
		.max_sge = 1,
	};
	struct dtm_qp_init_attr qa = { .cq = self->qcq, .max_sge = 2 };
	struct dtm_srq *srq = dtm_create_srq(self->ctx, &sa);
	struct dtm_qp *qp = dtm_create_qp(self->ctx, &qa);
	struct dtm_wc wc;
	uint32_t srqn;

	ASSERT_NE(NULL, srq);
	ASSERT_NE(NULL, qp);
	srqn = srq->srq_num;
	ASSERT_EQ(0, dtm_connect(qp, srqn));
	ASSERT_EQ(0, dtm_destroy_srq(srq));
	ASSERT_EQ(1, tm_poll(self->qcq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_RECV, .status = DTM_WC_WR_FLUSH_ERR,
		  .qp_num = qp->qp_num, .src_qp = srqn,
		  .any = WC_ANY_WRID | WC_ANY_LEN | WC_ANY_TM);
	EXPECT_EQ(ECONNRESET, tm_send(qp, 1, DTM_TMH_EAGER, 0, 1, "x", 1, 0));
	EXPECT_EQ(0, tm_pending(self->scq));
	EXPECT_EQ(0, tm_pending(self->qcq));
}

/*
 * Destroying a QP: its SRQ's CQ gets RECV WR_FLUSH_ERR naming it; like
 * every completion of the SRQ's CQ it carries SYNC_REQ while the counts
 * differ (here one unexpected message, no SYNC yet).
 */
TEST_F(tm, destroy_qp_flush_at_srq_carries_sync_req)
{
	struct dtm_qp_init_attr qa = { .cq = self->qcq, .max_sge = 2 };
	struct dtm_qp *qp = dtm_create_qp(self->ctx, &qa);
	struct dtm_wc wc;
	uint32_t qpn;

	ASSERT_NE(NULL, qp);
	qpn = qp->qp_num;
	ASSERT_EQ(0, dtm_connect(qp, self->srqn));
	ASSERT_EQ(0, tm_recv(self->srq, 1, RX(0), 64, self->lkey));
	ASSERT_EQ(0, tm_send(qp, 1, DTM_TMH_EAGER, 0, 0x1, "x", 1, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_RECV, .flags = SREQ, .wr_id = 1,
		  .byte_len = 17, .qp_num = self->srqn, .src_qp = qpn,
		  .any = WC_ANY_TM);
	ASSERT_EQ(0, dtm_destroy_qp(qp));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_RECV, .status = DTM_WC_WR_FLUSH_ERR,
		  .flags = SREQ, .qp_num = self->srqn, .src_qp = qpn,
		  .any = WC_ANY_WRID | WC_ANY_LEN | WC_ANY_TM);
	/* in sync: the flush of another QP carries no SYNC_REQ */
	ASSERT_EQ(0, tm_sync(self->srq, 2, 0, 1));
	ASSERT_EQ(0, dtm_destroy_qp(self->qp));
	self->qp = NULL;
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_RECV, .status = DTM_WC_WR_FLUSH_ERR,
		  .qp_num = self->srqn, .src_qp = self->qpn,
		  .any = WC_ANY_WRID | WC_ANY_LEN | WC_ANY_TM);
}

/* -------------------------------------------------------- DPU MRAM */

#define MRAM_OFF	(1U << 20)

/* DPU @want of a one-rank set (*@other: the next DPU). */
static int pick_dpus(struct dpu_set_t set, uint32_t want,
		     struct dpu_set_t *dpu, struct dpu_set_t *other)
{
	struct dpu_set_t d;
	uint32_t i;
	int found = 0;

	DPU_FOREACH(set, d, i) {
		if (i == want) {
			*dpu = d;
			found++;
		} else if (i == want + 1) {
			*other = d;
			found++;
		}
	}
	return found == 2 ? 0 : -1;
}

/* A matched eager message lands in a DPU's MRAM, read back with dpu.h. */
TEST_F(tm, mram_eager_lands_in_dpu)
{
	struct dpu_set_t set, dpu, other;
	uint8_t pay[200], back[208], zeros[208] = { 0 };
	struct dtm_mr *mr;
	struct dtm_wc wc;
	uint32_t h;

	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(1, NULL, &set));
	ASSERT_EQ(0, pick_dpus(set, 7, &dpu, &other));
	mr = dtm_reg_mr_mram(self->ctx, dpu, MRAM_OFF, 8192,
			     DTM_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr) TH_LOG("dtm_reg_mr_mram: %s", strerror(errno));
	ASSERT_EQ(0, tm_add(self->srq, 1, 0, 0, 1000, 0xc00, FULL,
			    MRAM_OFF + 64, 4096, mr->lkey, &h));
	tm_fill(pay, sizeof(pay), 5);
	ASSERT_EQ(0, tm_send(self->qp, 2, DTM_TMH_EAGER, 0xd, 0xc00, pay,
			     sizeof(pay), 0));
	ASSERT_EQ(1, tm_poll(self->scq, &wc, 1, TMO));
	EXPECT_WC(wc, .opcode = DTM_WC_TM_RECV, .flags = MD, .wr_id = 1000,
		  .byte_len = 200, .qp_num = self->srqn, .src_qp = self->qpn,
		  .handle = h, .tag = 0xc00, .priv = 0xd);
	ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME,
					MRAM_OFF + 64, back, sizeof(back)));
	EXPECT_EQ(0, memcmp(back, pay, 200));
	EXPECT_EQ(0, memcmp(back + 200, zeros, 8));
	/* only that DPU */
	ASSERT_EQ(DPU_OK, dpu_copy_from(other, DPU_MRAM_HEAP_POINTER_NAME,
					MRAM_OFF + 64, back, sizeof(back)));
	EXPECT_EQ(0, memcmp(back, zeros, sizeof(back)));
	EXPECT_EQ(0, dtm_dereg_mr(mr));
	EXPECT_EQ(DPU_OK, dpu_free(set));
}

/* A rendezvous payload read by the kernel from a DPU's MRAM region. */
TEST_F(tm, mram_rndv_from_dpu)
{
	struct dpu_set_t set, dpu, other;
	uint8_t *data = malloc(4096), fin[32];
	struct dtm_mr *mr;
	struct dtm_wc wc[2];
	uint32_t h;

	ASSERT_NE(NULL, data);
	tm_fill(data, 4096, 6);
	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(1, NULL, &set));
	ASSERT_EQ(0, pick_dpus(set, 11, &dpu, &other));
	ASSERT_EQ(DPU_OK, dpu_copy_to(dpu, DPU_MRAM_HEAP_POINTER_NAME,
				      MRAM_OFF, data, 4096));
	mr = dtm_reg_mr_mram(self->ctx, dpu, MRAM_OFF, 4096,
			     DTM_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr) TH_LOG("dtm_reg_mr_mram: %s", strerror(errno));
	ASSERT_EQ(0, tm_add(self->srq, 1, 0, 0, 1001, 0xc01, FULL, RX(0), 8192,
			    self->lkey, &h));
	ASSERT_EQ(0, tm_send_rndv(self->qp, 2, 0xe, 0xc01, MRAM_OFF, mr->rkey,
				  4096, NULL, 0, 0));
	ASSERT_EQ(2, tm_poll(self->scq, wc, 2, TMO));
	EXPECT_WC(wc[0], .opcode = DTM_WC_TM_RECV, .flags = DTM_WC_TM_MATCH,
		  .wr_id = 1001, .byte_len = 4096, .qp_num = self->srqn,
		  .src_qp = self->qpn, .handle = h, .tag = 0xc01, .priv = 0xe);
	EXPECT_WC(wc[1], .opcode = DTM_WC_TM_RECV,
		  .flags = DTM_WC_TM_DATA_VALID, .wr_id = 1001,
		  .byte_len = 4096, .qp_num = self->srqn, .src_qp = self->qpn,
		  .handle = h, .tag = 0xc01, .priv = 0xe);
	EXPECT_EQ(0, memcmp(self->rx, data, 4096));
	EXPECT_UNTOUCHED(4096, 4096);
	ASSERT_EQ(1, tm_poll(self->qcq, wc, 1, TMO));
	tm_rndv_hdr(fin, DTM_TMH_FIN, 0xe, 0xc01, MRAM_OFF, mr->rkey, 4096);
	EXPECT_WC(wc[0], .opcode = DTM_WC_RECV, .flags = DTM_WC_INLINE,
		  .byte_len = 32, .qp_num = self->qpn, .src_qp = self->srqn,
		  .any = WC_ANY_WRID | WC_ANY_TM);
	EXPECT_EQ(0, memcmp(wc[0].data, fin, 32));
	EXPECT_EQ(0, dtm_dereg_mr(mr));
	EXPECT_EQ(DPU_OK, dpu_free(set));
	free(data);
}

/* ---------------------------------------------------------- counters */

static const char *const counters[] = {
	"messages", "matches", "unexpected", "syncs", "rndv_reads", "bytes",
};

/*
 * One known sequence: an eager match (100 payload bytes), an unexpected
 * eager message (16 + 50 bytes, whole), one TAG_SYNC, a rendezvous match
 * (3000 bytes read).  Counted: messages 3, matches 2, unexpected 1, syncs
 * 1, rndv_reads 1, bytes 3166 (the bytes that landed in receive buffers;
 * the spec names the counter without defining it: this is the reading
 * where a matched eager message counts its payload and an unexpected one
 * the whole message it delivers).
 */
TEST_F(tm, counters_exact)
{
	static const long long delta[] = { 3, 2, 1, 1, 1, 100 + 66 + 3000 };
	long long before[6];
	uint8_t pay[100];
	struct dtm_wc wc[2];
	uint32_t h;
	int i;

	for (i = 0; i < 6; i++) {
		before[i] = tm_attr(counters[i]);
		ASSERT_LE(0, before[i]) TH_LOG("no " TM_SYSFS "%s", counters[i]);
	}
	tm_fill(pay, sizeof(pay), 7);
	ASSERT_EQ(0, tm_add(self->srq, 1, 0, 0, 1, 1, FULL, RX(0), 256,
			    self->lkey, &h));
	ASSERT_EQ(0, tm_send(self->qp, 1, DTM_TMH_EAGER, 1, 1, pay, 100, 0));
	ASSERT_EQ(1, tm_poll(self->scq, wc, 1, TMO));
	EXPECT_EQ(DTM_WC_TM_RECV, wc[0].opcode);
	ASSERT_EQ(0, tm_recv(self->srq, 2, RX(4096), 256, self->lkey));
	ASSERT_EQ(0, tm_send(self->qp, 2, DTM_TMH_EAGER, 2, 2, pay, 50, 0));
	ASSERT_EQ(1, tm_poll(self->scq, wc, 1, TMO));
	EXPECT_EQ(DTM_WC_RECV, wc[0].opcode);
	ASSERT_EQ(0, tm_sync(self->srq, 3, 0, 1));
	ASSERT_EQ(0, tm_add(self->srq, 4, 0, 0, 4, 3, FULL, RX(8192), 4096,
			    self->lkey, &h));
	ASSERT_EQ(0, tm_send_rndv(self->qp, 5, 5, 3, (uintptr_t)self->tx,
				  self->txmr->rkey, 3000, NULL, 0, 0));
	ASSERT_EQ(2, tm_poll(self->scq, wc, 2, TMO));
	EXPECT_EQ(DTM_WC_TM_DATA_VALID, wc[1].wc_flags);
	ASSERT_EQ(1, tm_poll(self->qcq, wc, 1, TMO));
	for (i = 0; i < 6; i++) {
		const char *name = counters[i];
		long long was = before[i], want = was + delta[i];

		EXPECT_EQ(want, tm_attr(name))
			TH_LOG("%s: before %lld", name, was);
	}
}

TEST_HARNESS_MAIN
