/* SPDX-License-Identifier: MIT */
/*
 * dtm.h: tag-matching queues of /dev/dpusim/tm, a verbs-like API named
 * after libibverbs (ibv_X -> dtm_X) with rdma-core's numeric values.
 * Semantics: shared/design/tag-matching.md, rdma-core's
 * Documentation/tag_matching.md.
 *
 * Errors: functions returning int return 0 (or a count) on success and a
 * negative errno on failure (errno is set too); functions returning a
 * pointer return NULL and set errno.  The posting calls are the exception,
 * as libibverbs' ibv_post_*: dtm_post_send, dtm_post_srq_send,
 * dtm_post_srq_recv and dtm_post_srq_ops return 0 or a positive errno
 * value (errno is set to it too) and, on an error, set *bad_wr to the
 * first work request of the list not carried out: those before it were
 * carried out (ADD handles written back), it and those after it were not
 * and may be posted again.  A NULL object or list is EINVAL with *bad_wr
 * the list's head.  The errno meanings are those of include/uapi/dpusim.h.
 *
 * Where dtm still differs from the verbs, and why.  The kernel is both the
 * wire and the receiver's adapter: a send is delivered (matched, copied,
 * its completions written) inside dtm_post_send, before it returns, and
 * the kernel writes a completion only into room it reserved first.  So
 * what a verbs sender learns late, from a completion or never, a dtm
 * sender learns at once from the post, and the request is not carried
 * out (nothing consumed, no completion):
 *
 *  - Receiver not ready.  An unexpected, no-tag or FIN message that finds
 *    no untagged buffer fails the post with EAGAIN (*bad_wr = it); send
 *    it again once the receiver has posted one (dtm_post_srq_recv).  The
 *    verbs' QP attributes rnr_retry / min_rnr_timer and the completion
 *    IBV_WC_RNR_RETRY_EXC_ERR have no dtm equivalent: a verbs adapter
 *    retries in the background while the post has long returned, and
 *    dtm has no background progress.  Retrying inside the post would
 *    make it block (up to forever with rnr_retry 7), which a verbs post
 *    never does, and would deadlock a thread that is its own receiver;
 *    and an exhausted retry moves a verbs QP to the error state, which
 *    the kernel's connection does not have.  EAGAIN is the RNR NAK,
 *    handed to the caller, with the message intact; no completion
 *    carries IBV_WC_RNR_RETRY_EXC_ERR (13), so dtm_wc_status lacks it.
 *
 *  - Completion queue full.  A verbs adapter that finds the receiver's
 *    CQ full loses the completion, puts the CQ in error and raises
 *    IBV_EVENT_CQ_ERR on the receiver (ibv_get_async_event); the sender
 *    is not told.  dtm never loses a completion
 *    (shared/design/tag-matching.md: "a full CQ is an overrun error
 *    reported to the owner, never a silent drop"), so an operation whose
 *    completion has no room is refused: the post fails with EREMOTEIO
 *    when the full CQ is another context's (the receiver's), EOVERFLOW
 *    when it is the caller's own (its QP's, or its own SRQ's); send again
 *    once the owner has polled.  The owner is told by the kernel ABI
 *    (include/uapi/dpusim.h), not by an event queue: its CQ's ring counts
 *    the overrun, so dtm_poll_cq returns -EOVERFLOW once when the ring is
 *    empty; and the kernel reports it once to the first call of the
 *    owner's context that reaches it (none if the refused post was the
 *    owner's own): dtm_get_cq_event returns -EOVERFLOW, any other call
 *    fails with EOVERFLOW, not carried out (a post: *bad_wr = the head).
 *    There is no dtm_get_async_event: that one-shot report goes to
 *    whichever call comes first, raw ioctls on dtm_context_fd included,
 *    so a library event queue could not promise to hold it.
 *
 *  - Connection gone.  A send on a QP whose SRQ is gone fails with
 *    ECONNRESET (the QP's CQ got one DTM_WC_WR_FLUSH_ERR completion when
 *    it went), where a verbs QP in the error state takes each request and
 *    completes it with IBV_WC_WR_FLUSH_ERR: the kernel knows at once that
 *    nothing can be delivered.  (A QP never connected: ENOTCONN.)
 *
 *  - The other calls return a negative errno, dtm's one convention
 *    elsewhere, where libibverbs has three: ibv_poll_cq a negative value
 *    (as dtm_poll_cq); ibv_destroy_*, ibv_dereg_mr, ibv_query_device,
 *    ibv_req_notify_cq and ibv_modify_qp (dtm_connect's counterpart) the
 *    positive errno; ibv_close_device and ibv_get_cq_event -1 with errno
 *    (and dtm_get_cq_event has a timeout, ETIMEDOUT, which the verbs call
 *    has not).  Left so: verbs code tests those results against 0, which
 *    holds under any of the three; the posting calls are the ones whose
 *    value it uses (strerror(ret), ret == ENOMEM for a full queue).
 *
 * Threads: a context may be used from several threads; one CQ must be
 * polled by one thread at a time.
 */
#ifndef DPUSIM_DTM_H
#define DPUSIM_DTM_H

#include <stddef.h>
#include <stdint.h>

#include <dpu_types.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DPUSIM_API
#define DPUSIM_API __attribute__((visibility("default")))
#endif

#define DTM_DEVICE_PATH "/dev/dpusim/tm"

/* Access flags (enum ibv_access_flags) */
enum dtm_access_flags {
	DTM_ACCESS_LOCAL_WRITE = 1,
	DTM_ACCESS_REMOTE_WRITE = 2,
	DTM_ACCESS_REMOTE_READ = 4,
};

/* Wire headers (tm_types.h): big-endian fields; see dtm_tmh_* helpers */
enum dtm_tmh_op {
	DTM_TMH_NO_TAG = 0,
	DTM_TMH_RNDV = 1,
	DTM_TMH_FIN = 2,
	DTM_TMH_EAGER = 3,
};

struct dtm_tmh {
	uint8_t opcode;
	uint8_t reserved[3];
	uint32_t app_ctx;	/* big-endian */
	uint64_t tag;		/* big-endian */
};

struct dtm_rvh {
	uint64_t va;		/* big-endian */
	uint32_t rkey;		/* big-endian */
	uint32_t len;		/* big-endian */
};

/* Completion opcodes (enum ibv_wc_opcode) */
enum dtm_wc_opcode {
	DTM_WC_SEND = 0,
	DTM_WC_RDMA_READ = 2,
	DTM_WC_RECV = 128,
	DTM_WC_TM_ADD = 130,
	DTM_WC_TM_DEL = 131,
	DTM_WC_TM_SYNC = 132,
	DTM_WC_TM_RECV = 133,
	DTM_WC_TM_NO_TAG = 134,
};

/* Completion flags (enum ibv_wc_flags) */
enum dtm_wc_flags {
	DTM_WC_TM_SYNC_REQ = 1 << 4,
	DTM_WC_TM_MATCH = 1 << 5,
	DTM_WC_TM_DATA_VALID = 1 << 6,
	/* dpusim: the received message is in wc->data (receives on a QP) */
	DTM_WC_INLINE = 1 << 8,
};

/* Completion status (enum ibv_wc_status) */
enum dtm_wc_status {
	DTM_WC_SUCCESS = 0,
	DTM_WC_LOC_LEN_ERR = 1,
	DTM_WC_WR_FLUSH_ERR = 5,
	DTM_WC_REM_ACCESS_ERR = 10,
	DTM_WC_GENERAL_ERR = 21,
	DTM_WC_TM_ERR = 22,
	DTM_WC_TM_RNDV_INCOMPLETE = 23,
};

/* A completion (struct ibv_wc plus the TM fields of ibv_wc_tm_info) */
struct dtm_wc {
	uint64_t wr_id;
	enum dtm_wc_status status;
	enum dtm_wc_opcode opcode;
	uint32_t byte_len;
	uint32_t qp_num;	/* QP number, or SRQ number on an SRQ's CQ */
	uint32_t src_qp;	/* receives at an SRQ: the sending QP */
	unsigned int wc_flags;
	uint32_t handle;	/* TM_ADD/TM_DEL/TM_RECV: the tag entry */
	uint64_t tag;		/* TM_RECV: the message's tag */
	uint32_t priv;		/* TM_RECV: app_ctx of the TMH */
	uint8_t data[64];	/* DTM_WC_INLINE: the message */
};

struct dtm_wc_tm_info {
	uint64_t tag;
	uint32_t priv;
};

/* Device capabilities (struct ibv_tm_caps and friends) */
#define DTM_TM_CAP_RC 1
struct dtm_device_attr {
	uint32_t max_num_tags;
	uint32_t max_ops;
	uint32_t max_sge;
	uint32_t max_rndv_hdr_size;
	uint32_t max_srq_wr;
	uint32_t max_cqe;
	uint32_t max_inline;
	uint32_t max_qp_recv;
	uint32_t max_msg;
	uint32_t flags;		/* DTM_TM_CAP_* */
};

struct dtm_context;
struct dtm_cq;

struct dtm_mr {
	struct dtm_context *context;
	void *addr;		/* MRAM regions: the MRAM offset */
	size_t length;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
};

struct dtm_srq_init_attr {
	struct dtm_cq *cq;
	uint32_t max_num_tags;
	uint32_t max_ops;
	uint32_t max_wr;
	uint32_t max_sge;
};

struct dtm_srq {
	struct dtm_context *context;
	struct dtm_cq *cq;
	uint32_t handle;
	uint32_t srq_num;
};

struct dtm_qp_init_attr {
	struct dtm_cq *cq;
	uint32_t max_sge;
};

struct dtm_qp {
	struct dtm_context *context;
	struct dtm_cq *cq;
	uint32_t handle;
	uint32_t qp_num;
};

struct dtm_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* enum ibv_ops_wr_opcode, enum ibv_ops_flags */
enum dtm_ops_wr_opcode {
	DTM_WR_TAG_ADD = 0,
	DTM_WR_TAG_DEL = 1,
	DTM_WR_TAG_SYNC = 2,
};

enum dtm_ops_flags {
	DTM_OPS_SIGNALED = 1 << 0,
	DTM_OPS_TM_SYNC = 1 << 1,
};

/* struct ibv_ops_wr */
struct dtm_ops_wr {
	uint64_t wr_id;
	struct dtm_ops_wr *next;
	enum dtm_ops_wr_opcode opcode;
	int flags;
	struct {
		uint32_t unexpected_cnt;
		uint32_t handle;	/* in for DEL, out for ADD */
		struct {
			uint64_t recv_wr_id;
			struct dtm_sge *sg_list;
			int num_sge;
			uint64_t tag;
			uint64_t mask;
		} add;
	} tm;
};

/* struct ibv_recv_wr */
struct dtm_recv_wr {
	uint64_t wr_id;
	struct dtm_recv_wr *next;
	struct dtm_sge *sg_list;
	int num_sge;
};

/* enum ibv_wr_opcode, enum ibv_send_flags */
enum dtm_wr_opcode {
	DTM_WR_SEND = 2,
	DTM_WR_RDMA_READ = 4,
};

enum dtm_send_flags {
	DTM_SEND_SIGNALED = 1 << 1,
	DTM_SEND_INLINE = 1 << 3,
};

/* struct ibv_send_wr */
struct dtm_send_wr {
	uint64_t wr_id;
	struct dtm_send_wr *next;
	struct dtm_sge *sg_list;
	int num_sge;
	enum dtm_wr_opcode opcode;
	unsigned int send_flags;
	struct {
		uint64_t remote_addr;
		uint32_t rkey;
	} rdma;
};

/* Context */
DPUSIM_API struct dtm_context *dtm_open_device(const char *path);
DPUSIM_API int dtm_close_device(struct dtm_context *ctx);
DPUSIM_API int dtm_query_device(struct dtm_context *ctx,
				struct dtm_device_attr *attr);
/* The context's file descriptor: poll() it for completions */
DPUSIM_API int dtm_context_fd(const struct dtm_context *ctx);

/* Memory regions */
DPUSIM_API struct dtm_mr *dtm_reg_mr(struct dtm_context *ctx, void *addr,
				     size_t length, int access);
/* @length bytes of MRAM at @mram_offset of the single DPU @dpu */
DPUSIM_API struct dtm_mr *dtm_reg_mr_mram(struct dtm_context *ctx,
					  struct dpu_set_t dpu,
					  uint64_t mram_offset, size_t length,
					  int access);
DPUSIM_API int dtm_dereg_mr(struct dtm_mr *mr);

/* Completion queues */
DPUSIM_API struct dtm_cq *dtm_create_cq(struct dtm_context *ctx, int cqe);
DPUSIM_API int dtm_destroy_cq(struct dtm_cq *cq);
/*
 * Reads up to @num_entries completions from the mapped ring, no system
 * call.  Returns how many, or -EOVERFLOW once when the kernel refused a
 * completion because the ring was full (after the entries before it were
 * returned).
 */
DPUSIM_API int dtm_poll_cq(struct dtm_cq *cq, int num_entries,
			   struct dtm_wc *wc);
/* Arms @cq: the next completion makes dtm_get_cq_event() return it */
DPUSIM_API int dtm_req_notify_cq(struct dtm_cq *cq, int solicited_only);
/*
 * Waits (poll() on the context fd, @timeout_ms as poll's; -1 forever) for
 * an armed CQ of @ctx to hold a completion; disarms it and returns it in
 * *@cq.  -ETIMEDOUT when the time ran out.
 */
DPUSIM_API int dtm_get_cq_event(struct dtm_context *ctx, struct dtm_cq **cq,
				int timeout_ms);

/* TM-SRQs and QPs */
DPUSIM_API struct dtm_srq *dtm_create_srq(struct dtm_context *ctx,
					  const struct dtm_srq_init_attr *attr);
DPUSIM_API int dtm_destroy_srq(struct dtm_srq *srq);
DPUSIM_API struct dtm_qp *dtm_create_qp(struct dtm_context *ctx,
					const struct dtm_qp_init_attr *attr);
DPUSIM_API int dtm_destroy_qp(struct dtm_qp *qp);
DPUSIM_API int dtm_connect(struct dtm_qp *qp, uint32_t srq_num);

/*
 * Posting (ibv_post_*): 0, or a positive errno value (errno set too) with
 * *bad_wr = the first request not carried out; see the top of this file
 * for EAGAIN (no untagged buffer) and EREMOTEIO / EOVERFLOW (a full CQ).
 */
DPUSIM_API int dtm_post_srq_ops(struct dtm_srq *srq, struct dtm_ops_wr *wr,
				struct dtm_ops_wr **bad_wr);
DPUSIM_API int dtm_post_srq_recv(struct dtm_srq *srq, struct dtm_recv_wr *wr,
				 struct dtm_recv_wr **bad_wr);
DPUSIM_API int dtm_post_send(struct dtm_qp *qp, struct dtm_send_wr *wr,
			     struct dtm_send_wr **bad_wr);
/* From the receiving side to a connected QP: FIN, no-tag, RDMA read */
DPUSIM_API int dtm_post_srq_send(struct dtm_srq *srq, uint32_t remote_qpn,
				 struct dtm_send_wr *wr,
				 struct dtm_send_wr **bad_wr);

/* Completion accessors (ibv_wc_read_tm_info) */
DPUSIM_API void dtm_wc_read_tm_info(const struct dtm_wc *wc,
				    struct dtm_wc_tm_info *info);

/* Wire-header helpers: host values in, big-endian bytes out and back */
DPUSIM_API void dtm_tmh_build(struct dtm_tmh *tmh, enum dtm_tmh_op op,
			      uint32_t app_ctx, uint64_t tag);
DPUSIM_API void dtm_tmh_parse(const struct dtm_tmh *tmh, enum dtm_tmh_op *op,
			      uint32_t *app_ctx, uint64_t *tag);
DPUSIM_API void dtm_rvh_build(struct dtm_rvh *rvh, uint64_t va, uint32_t rkey,
			      uint32_t len);
DPUSIM_API void dtm_rvh_parse(const struct dtm_rvh *rvh, uint64_t *va,
			      uint32_t *rkey, uint32_t *len);

/* Readable names, for messages: "TM_RECV", "TM_RNDV_INCOMPLETE" */
DPUSIM_API const char *dtm_wc_opcode_str(enum dtm_wc_opcode opcode);
DPUSIM_API const char *dtm_wc_status_str(enum dtm_wc_status status);

#ifdef __cplusplus
}
#endif

#endif /* DPUSIM_DTM_H */
