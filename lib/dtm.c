// SPDX-License-Identifier: MIT
/*
 * libdpusim: tag-matching queues (include/dtm.h) over the ioctls of
 * /dev/dpusim/tm (include/uapi/dpusim.h, "Tag matching").
 *
 * Every object is a handle of the kernel plus what the library needs to
 * find it again: the context keeps lists of its regions, CQs, SRQs and
 * QPs (under its mutex) so that dtm_close_device frees what the user did
 * not destroy, and dtm_get_cq_event scans the armed CQs.
 *
 * Completion queues are rings mapped into the process: dtm_poll_cq reads
 * them without a system call (lib/dtm_ring.h), using the ring size the
 * kernel returned at creation, never the ring's own header.  Posting
 * translates the linked lists of work requests into the uapi arrays
 * (at most DPUSIM_TM_MAX_WR per ioctl); the sg lists are handed to the
 * kernel as they are (struct dtm_sge is struct dpusim_tm_sge).  A single
 * send is one ioctl with the work request on the stack, nothing else.
 * The posting calls answer as libibverbs' ibv_post_*: 0 or a positive
 * errno value, with *bad_wr set (see include/dtm.h).
 *
 * No global mutable state.
 */
#include <errno.h>
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <dtm.h>
#include <uapi/dpusim.h>

#include "dtm_ring.h"
#include "internal.h"

/* ------------------------------------------------ dtm.h == uapi/dpusim.h */

#define SAME_FIELD(a, b, f)                                                   \
	(offsetof(a, f) == offsetof(b, f) &&                                  \
	 sizeof(((a *)0)->f) == sizeof(((b *)0)->f))

/* sg lists go to the kernel as the user wrote them */
_Static_assert(sizeof(struct dtm_sge) == sizeof(struct dpusim_tm_sge),
	       "struct dtm_sge is struct dpusim_tm_sge");
_Static_assert(SAME_FIELD(struct dtm_sge, struct dpusim_tm_sge, addr) &&
	       SAME_FIELD(struct dtm_sge, struct dpusim_tm_sge, length) &&
	       SAME_FIELD(struct dtm_sge, struct dpusim_tm_sge, lkey),
	       "struct dtm_sge is struct dpusim_tm_sge");
/* the wire headers are the uapi's */
_Static_assert(sizeof(struct dtm_tmh) == 16 &&
	       sizeof(struct dtm_tmh) == sizeof(struct dpusim_tm_tmh) &&
	       SAME_FIELD(struct dtm_tmh, struct dpusim_tm_tmh, opcode) &&
	       SAME_FIELD(struct dtm_tmh, struct dpusim_tm_tmh, app_ctx) &&
	       SAME_FIELD(struct dtm_tmh, struct dpusim_tm_tmh, tag),
	       "struct dtm_tmh is struct dpusim_tm_tmh");
_Static_assert(sizeof(struct dtm_rvh) == 16 &&
	       sizeof(struct dtm_rvh) == sizeof(struct dpusim_tm_rvh) &&
	       SAME_FIELD(struct dtm_rvh, struct dpusim_tm_rvh, va) &&
	       SAME_FIELD(struct dtm_rvh, struct dpusim_tm_rvh, rkey) &&
	       SAME_FIELD(struct dtm_rvh, struct dpusim_tm_rvh, len),
	       "struct dtm_rvh is struct dpusim_tm_rvh");
_Static_assert(sizeof(struct dpusim_tm_cqe) == 128, "a CQE is 128 bytes");
_Static_assert(sizeof(((struct dtm_wc *)0)->data) ==
	       sizeof(((struct dpusim_tm_cqe *)0)->data), "inline data size");
_Static_assert(sizeof(struct dpusim_tm_cq_ring) <= DPUSIM_TM_CQ_RING_ENTRIES,
	       "ring header before the entries");

/* numeric values are passed through unchanged */
#define EQ(a, b) ((int)(a) == (int)(b))
_Static_assert(EQ(DTM_ACCESS_LOCAL_WRITE, DPUSIM_TM_ACCESS_LOCAL_WRITE) &&
	       EQ(DTM_ACCESS_REMOTE_WRITE, DPUSIM_TM_ACCESS_REMOTE_WRITE) &&
	       EQ(DTM_ACCESS_REMOTE_READ, DPUSIM_TM_ACCESS_REMOTE_READ),
	       "access flags");
_Static_assert(EQ(DTM_TMH_NO_TAG, DPUSIM_TM_TMH_NO_TAG) &&
	       EQ(DTM_TMH_RNDV, DPUSIM_TM_TMH_RNDV) &&
	       EQ(DTM_TMH_FIN, DPUSIM_TM_TMH_FIN) &&
	       EQ(DTM_TMH_EAGER, DPUSIM_TM_TMH_EAGER), "TMH opcodes");
_Static_assert(EQ(DTM_WC_SEND, DPUSIM_TM_WC_SEND) &&
	       EQ(DTM_WC_RDMA_READ, DPUSIM_TM_WC_RDMA_READ) &&
	       EQ(DTM_WC_RECV, DPUSIM_TM_WC_RECV) &&
	       EQ(DTM_WC_TM_ADD, DPUSIM_TM_WC_TM_ADD) &&
	       EQ(DTM_WC_TM_DEL, DPUSIM_TM_WC_TM_DEL) &&
	       EQ(DTM_WC_TM_SYNC, DPUSIM_TM_WC_TM_SYNC) &&
	       EQ(DTM_WC_TM_RECV, DPUSIM_TM_WC_TM_RECV) &&
	       EQ(DTM_WC_TM_NO_TAG, DPUSIM_TM_WC_TM_NO_TAG), "wc opcodes");
_Static_assert(EQ(DTM_WC_TM_SYNC_REQ, DPUSIM_TM_WC_F_TM_SYNC_REQ) &&
	       EQ(DTM_WC_TM_MATCH, DPUSIM_TM_WC_F_TM_MATCH) &&
	       EQ(DTM_WC_TM_DATA_VALID, DPUSIM_TM_WC_F_TM_DATA_VALID) &&
	       EQ(DTM_WC_INLINE, DPUSIM_TM_WC_F_INLINE), "wc flags");
_Static_assert(EQ(DTM_WC_SUCCESS, DPUSIM_TM_WC_SUCCESS) &&
	       EQ(DTM_WC_LOC_LEN_ERR, DPUSIM_TM_WC_LOC_LEN_ERR) &&
	       EQ(DTM_WC_WR_FLUSH_ERR, DPUSIM_TM_WC_WR_FLUSH_ERR) &&
	       EQ(DTM_WC_REM_ACCESS_ERR, DPUSIM_TM_WC_REM_ACCESS_ERR) &&
	       EQ(DTM_WC_GENERAL_ERR, DPUSIM_TM_WC_GENERAL_ERR) &&
	       EQ(DTM_WC_TM_ERR, DPUSIM_TM_WC_TM_ERR) &&
	       EQ(DTM_WC_TM_RNDV_INCOMPLETE, DPUSIM_TM_WC_TM_RNDV_INCOMPLETE),
	       "wc status");
_Static_assert(EQ(DTM_WR_TAG_ADD, DPUSIM_TM_WR_TAG_ADD) &&
	       EQ(DTM_WR_TAG_DEL, DPUSIM_TM_WR_TAG_DEL) &&
	       EQ(DTM_WR_TAG_SYNC, DPUSIM_TM_WR_TAG_SYNC), "ops opcodes");
_Static_assert(EQ(DTM_OPS_SIGNALED, DPUSIM_TM_OPS_SIGNALED) &&
	       EQ(DTM_OPS_TM_SYNC, DPUSIM_TM_OPS_TM_SYNC), "ops flags");
_Static_assert(EQ(DTM_WR_SEND, DPUSIM_TM_WR_SEND) &&
	       EQ(DTM_WR_RDMA_READ, DPUSIM_TM_WR_RDMA_READ), "send opcodes");
_Static_assert(EQ(DTM_SEND_SIGNALED, DPUSIM_TM_SEND_SIGNALED) &&
	       EQ(DTM_SEND_INLINE, DPUSIM_TM_SEND_INLINE), "send flags");
_Static_assert(EQ(DTM_TM_CAP_RC, DPUSIM_TM_CAP_RC), "capability flags");

/* ------------------------------------------------------------ objects */

/* An intrusive doubly linked list (circular, with a head node). */
struct dtm_node {
	struct dtm_node *prev, *next;
};

#define DTM_CONTAINER(ptr, type, member)                                      \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

static void node_init(struct dtm_node *head)
{
	head->prev = head->next = head;
}

static void node_add(struct dtm_node *head, struct dtm_node *n)
{
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}

static void node_del(struct dtm_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

struct dtm_context {
	int fd;
	/* guards the lists and the CQs' armed flags */
	pthread_mutex_t lock;
	struct dtm_node mrs, cqs, srqs, qps;
};

struct dtm_cq {
	struct dtm_context *context;
	uint32_t handle;
	bool armed;			/* dtm_req_notify_cq; under ctx->lock */
	void *ring;			/* the mapping */
	size_t ring_size;
	struct dtm_ring_state rs;	/* the poller's; one thread at a time */
	struct dtm_node node;
};

struct dtm_mr_obj {
	struct dtm_mr mr;
	struct dtm_node node;
};

struct dtm_srq_obj {
	struct dtm_srq srq;
	uint32_t max_ops;		/* ops one dtm_post_srq_ops may carry */
	struct dtm_node node;
};

struct dtm_qp_obj {
	struct dtm_qp qp;
	struct dtm_node node;
};

/* Return -err with errno set (the library's convention). */
static int fail(int err)
{
	errno = err;
	return -err;
}

static void *fail_ptr(int err)
{
	errno = err;
	return NULL;
}

/* A posting call's failure, as ibv_post_*: @err positive, errno set too. */
static int post_err(int err)
{
	errno = err;
	return err;
}

/* A DPUSIM_IOCTL_TM_DEREG_MR / _DESTROY_* call: 0 or -errno. */
static int tm_destroy(int fd, unsigned long cmd, uint32_t handle)
{
	struct dpusim_tm_destroy d = {
		.size = sizeof(d),
		.handle = handle,
	};

	if (ioctl(fd, cmd, &d) < 0)
		return -errno;
	return 0;
}

/*
 * Destroy a kernel object of @ctx, then take its library object off the
 * context's list: on an error (EBUSY for a CQ in use) nothing changes.
 * Returns 0 or fail(errno).
 */
static int tm_destroy_unlink(struct dtm_context *ctx, unsigned long cmd,
			     uint32_t handle, struct dtm_node *node)
{
	int ret = tm_destroy(ctx->fd, cmd, handle);

	if (ret)
		return fail(-ret);
	pthread_mutex_lock(&ctx->lock);
	node_del(node);
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

/* ------------------------------------------------------------ context */

DPUSIM_API struct dtm_context *dtm_open_device(const char *path)
{
	struct dtm_context *ctx;
	int err;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return fail_ptr(ENOMEM);
	err = pthread_mutex_init(&ctx->lock, NULL);
	if (err) {
		free(ctx);
		return fail_ptr(err);
	}
	node_init(&ctx->mrs);
	node_init(&ctx->cqs);
	node_init(&ctx->srqs);
	node_init(&ctx->qps);
	ctx->fd = open(path ? path : DTM_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (ctx->fd < 0) {
		err = errno;
		pthread_mutex_destroy(&ctx->lock);
		free(ctx);
		return fail_ptr(err);
	}
	return ctx;
}

DPUSIM_API int dtm_close_device(struct dtm_context *ctx)
{
	struct dtm_node *n, *next;
	int ret = 0;

	if (!ctx)
		return fail(EINVAL);
	/*
	 * The kernel destroys everything of the context when the file
	 * closes; the library frees its own objects.
	 */
	pthread_mutex_lock(&ctx->lock);
	for (n = ctx->qps.next; n != &ctx->qps; n = next) {
		next = n->next;
		free(DTM_CONTAINER(n, struct dtm_qp_obj, node));
	}
	for (n = ctx->srqs.next; n != &ctx->srqs; n = next) {
		next = n->next;
		free(DTM_CONTAINER(n, struct dtm_srq_obj, node));
	}
	for (n = ctx->mrs.next; n != &ctx->mrs; n = next) {
		next = n->next;
		free(DTM_CONTAINER(n, struct dtm_mr_obj, node));
	}
	for (n = ctx->cqs.next; n != &ctx->cqs; n = next) {
		struct dtm_cq *cq = DTM_CONTAINER(n, struct dtm_cq, node);

		next = n->next;
		munmap(cq->ring, cq->ring_size);
		free(cq);
	}
	node_init(&ctx->qps);
	node_init(&ctx->srqs);
	node_init(&ctx->mrs);
	node_init(&ctx->cqs);
	pthread_mutex_unlock(&ctx->lock);

	/* Linux closes the descriptor even when close reports an error */
	if (close(ctx->fd) < 0 && errno != EINTR)
		ret = -errno;
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	if (ret)
		errno = -ret;
	return ret;
}

DPUSIM_API int dtm_query_device(struct dtm_context *ctx,
				struct dtm_device_attr *attr)
{
	struct dpusim_tm_query q = { .size = sizeof(q) };

	if (!ctx || !attr)
		return fail(EINVAL);
	if (ioctl(ctx->fd, DPUSIM_IOCTL_TM_QUERY, &q) < 0)
		return -errno;
	*attr = (struct dtm_device_attr) {
		.max_num_tags = q.max_num_tags,
		.max_ops = q.max_ops,
		.max_sge = q.max_sge,
		.max_rndv_hdr_size = q.max_rndv_hdr_size,
		.max_srq_wr = q.max_srq_wr,
		.max_cqe = q.max_cqe,
		.max_inline = q.max_inline,
		.max_qp_recv = q.max_qp_recv,
		.max_msg = q.max_msg,
		.flags = q.cap_flags,
	};
	return 0;
}

DPUSIM_API int dtm_context_fd(const struct dtm_context *ctx)
{
	if (!ctx)
		return fail(EINVAL);
	return ctx->fd;
}

/* ------------------------------------------------------------ regions */

static struct dtm_mr *reg_mr(struct dtm_context *ctx,
			     const struct dpusim_tm_reg_mr *in, void *addr,
			     size_t length)
{
	struct dpusim_tm_reg_mr r = *in;
	struct dtm_mr_obj *obj;

	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return fail_ptr(ENOMEM);
	if (ioctl(ctx->fd, DPUSIM_IOCTL_TM_REG_MR, &r) < 0) {
		int err = errno;

		free(obj);
		return fail_ptr(err);
	}
	obj->mr = (struct dtm_mr) {
		.context = ctx,
		.addr = addr,
		.length = length,
		.handle = r.lkey,	/* DEREG_MR names the region by lkey */
		.lkey = r.lkey,
		.rkey = r.rkey,
	};
	pthread_mutex_lock(&ctx->lock);
	node_add(&ctx->mrs, &obj->node);
	pthread_mutex_unlock(&ctx->lock);
	return &obj->mr;
}

DPUSIM_API struct dtm_mr *dtm_reg_mr(struct dtm_context *ctx, void *addr,
				     size_t length, int access)
{
	struct dpusim_tm_reg_mr r = {
		.size = sizeof(r),
		.flags = 0,
		.addr = (uintptr_t)addr,
		.length = length,
		.access = (uint32_t)access,
	};

	if (!ctx)
		return fail_ptr(EINVAL);
	return reg_mr(ctx, &r, addr, length);
}

DPUSIM_API struct dtm_mr *dtm_reg_mr_mram(struct dtm_context *ctx,
					  struct dpu_set_t dpu,
					  uint64_t mram_offset, size_t length,
					  int access)
{
	struct dpusim_tm_reg_mr r = {
		.size = sizeof(r),
		.flags = DPUSIM_TM_MR_MRAM,
		.addr = mram_offset,
		.length = length,
		.access = (uint32_t)access,
	};

	if (!ctx || dpu.kind != DPU_SET_DPU || !dpu.dpu || !dpu.dpu->rank)
		return fail_ptr(EINVAL);
	r.rank_fd = dpu.dpu->rank->fd;
	r.dpu = dpu.dpu->index_in_rank;
	return reg_mr(ctx, &r, (void *)(uintptr_t)mram_offset, length);
}

DPUSIM_API int dtm_dereg_mr(struct dtm_mr *mr)
{
	struct dtm_mr_obj *obj;
	int ret;

	if (!mr || !mr->context)
		return fail(EINVAL);
	obj = DTM_CONTAINER(mr, struct dtm_mr_obj, mr);
	ret = tm_destroy_unlink(mr->context, DPUSIM_IOCTL_TM_DEREG_MR,
				mr->handle, &obj->node);
	if (!ret)
		free(obj);
	return ret;
}

/* ------------------------------------------------------------ rings */

int dtm_ring_poll(void *ring, struct dtm_ring_state *st, int num_entries,
		  struct dtm_wc *wc)
{
	struct dpusim_tm_cq_ring *hdr = ring;
	const unsigned char *entries =
		(const unsigned char *)ring + DPUSIM_TM_CQ_RING_ENTRIES;
	const uint32_t mask = st->nr_entries - 1;
	uint32_t cons = st->consumer, prod, avail, n, i, ov;

	if (num_entries < 0 || (num_entries && !wc) ||
	    !st->nr_entries || (st->nr_entries & mask))
		return fail(EINVAL);
	if (!num_entries)
		return 0;

	/* the entries up to the producer are complete (kernel: release) */
	prod = __atomic_load_n(&hdr->producer, __ATOMIC_ACQUIRE);
	avail = prod - cons;
	if (avail > st->nr_entries)	/* a corrupted producer: one ring */
		avail = st->nr_entries;
	n = avail < (uint32_t)num_entries ? avail : (uint32_t)num_entries;

	for (i = 0; i < n; i++) {
		const struct dpusim_tm_cqe *e = (const void *)
			(entries + (size_t)((cons + i) & mask) *
				   sizeof(struct dpusim_tm_cqe));
		struct dtm_wc *w = &wc[i];
		uint32_t byte_len = e->byte_len;
		uint16_t flags = e->wc_flags;

		w->wr_id = e->wr_id;
		w->status = (enum dtm_wc_status)e->status;
		w->opcode = (enum dtm_wc_opcode)e->opcode;
		w->byte_len = byte_len;
		w->qp_num = e->qp_num;
		w->src_qp = e->src_qp;
		w->wc_flags = flags;
		w->handle = e->handle;
		w->tag = e->tag;
		w->priv = e->priv;
		if (flags & DTM_WC_INLINE)
			memcpy(w->data, e->data,
			       byte_len < sizeof(w->data) ? byte_len
							  : sizeof(w->data));
	}

	if (n) {
		st->consumer = cons + n;
		/* the entries are read before the kernel may reuse them */
		__atomic_store_n(&hdr->consumer, st->consumer,
				 __ATOMIC_RELEASE);
		return (int)n;
	}

	/* empty: a completion the kernel refused is reported once */
	ov = __atomic_load_n(&hdr->overruns, __ATOMIC_RELAXED);
	if (ov != st->last_overruns) {
		st->last_overruns = ov;
		return fail(EOVERFLOW);
	}
	return 0;
}

int dtm_ring_pending(const void *ring)
{
	const struct dpusim_tm_cq_ring *hdr = ring;

	return __atomic_load_n(&hdr->producer, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&hdr->consumer, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ CQs */

DPUSIM_API struct dtm_cq *dtm_create_cq(struct dtm_context *ctx, int cqe)
{
	struct dpusim_tm_create_cq c = {
		.size = sizeof(c),
		.cqe = (uint32_t)cqe,
	};
	struct dtm_cq *cq;
	uint32_t nr;
	void *ring;
	int err;

	if (!ctx || cqe < 1)
		return fail_ptr(EINVAL);
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return fail_ptr(ENOMEM);
	if (ioctl(ctx->fd, DPUSIM_IOCTL_TM_CREATE_CQ, &c) < 0) {
		err = errno;
		goto err_free;
	}
	nr = c.cqe;
	/* what the kernel answered must describe a ring that fits the map */
	if (!nr || (nr & (nr - 1)) ||
	    c.mmap_size < DPUSIM_TM_CQ_RING_ENTRIES +
			  (uint64_t)nr * sizeof(struct dpusim_tm_cqe) ||
	    c.mmap_size > SIZE_MAX ||
	    (uint64_t)(off_t)c.mmap_offset != c.mmap_offset) {
		err = EPROTO;
		goto err_destroy;
	}
	ring = mmap(NULL, (size_t)c.mmap_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, ctx->fd, (off_t)c.mmap_offset);
	if (ring == MAP_FAILED) {
		err = errno;
		goto err_destroy;
	}
	cq->context = ctx;
	cq->handle = c.handle;
	cq->ring = ring;
	cq->ring_size = (size_t)c.mmap_size;
	cq->rs.nr_entries = nr;
	cq->rs.consumer = 0;
	cq->rs.last_overruns = 0;
	pthread_mutex_lock(&ctx->lock);
	node_add(&ctx->cqs, &cq->node);
	pthread_mutex_unlock(&ctx->lock);
	return cq;

err_destroy:
	tm_destroy(ctx->fd, DPUSIM_IOCTL_TM_DESTROY_CQ, c.handle);
err_free:
	free(cq);
	return fail_ptr(err);
}

DPUSIM_API int dtm_destroy_cq(struct dtm_cq *cq)
{
	int ret;

	if (!cq)
		return fail(EINVAL);
	/* EBUSY (an SRQ or QP uses it) leaves everything as it was */
	ret = tm_destroy_unlink(cq->context, DPUSIM_IOCTL_TM_DESTROY_CQ,
				cq->handle, &cq->node);
	if (ret)
		return ret;
	munmap(cq->ring, cq->ring_size);
	free(cq);
	return 0;
}

DPUSIM_API int dtm_poll_cq(struct dtm_cq *cq, int num_entries,
			   struct dtm_wc *wc)
{
	if (!cq)
		return fail(EINVAL);
	return dtm_ring_poll(cq->ring, &cq->rs, num_entries, wc);
}

DPUSIM_API int dtm_req_notify_cq(struct dtm_cq *cq, int solicited_only)
{
	(void)solicited_only;	/* no solicited events: every one counts */
	if (!cq)
		return fail(EINVAL);
	pthread_mutex_lock(&cq->context->lock);
	cq->armed = true;
	pthread_mutex_unlock(&cq->context->lock);
	return 0;
}

/* An armed CQ with unread completions, disarmed; NULL if none. */
static struct dtm_cq *take_armed(struct dtm_context *ctx)
{
	struct dtm_cq *found = NULL;
	struct dtm_node *n;

	pthread_mutex_lock(&ctx->lock);
	for (n = ctx->cqs.next; n != &ctx->cqs; n = n->next) {
		struct dtm_cq *cq = DTM_CONTAINER(n, struct dtm_cq, node);

		if (cq->armed && dtm_ring_pending(cq->ring)) {
			cq->armed = false;
			found = cq;
			break;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	return found;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* First back-off and its cap, microseconds (see dtm_get_cq_event) */
#define DTM_EVENT_BACKOFF_MIN_US	20
#define DTM_EVENT_BACKOFF_MAX_US	1000

DPUSIM_API int dtm_get_cq_event(struct dtm_context *ctx, struct dtm_cq **cq,
				int timeout_ms)
{
	int64_t deadline = 0;
	long backoff_us = DTM_EVENT_BACKOFF_MIN_US;
	bool was_ready = false;

	if (!ctx || !cq)
		return fail(EINVAL);
	if (timeout_ms >= 0)
		deadline = now_ms() + timeout_ms;

	for (;;) {
		struct pollfd pfd = { .fd = ctx->fd, .events = POLLIN };
		struct dtm_cq *found = take_armed(ctx);
		int wait_ms = -1, r;

		if (found) {
			*cq = found;
			return 0;
		}
		if (timeout_ms >= 0) {
			int64_t left = deadline - now_ms();

			wait_ms = left > 0 ? (int)left : 0;
		}
		/*
		 * poll() is level-triggered over every CQ of the context: an
		 * unarmed CQ holding completions keeps it ready.  Then wait a
		 * little (growing, capped) between the checks instead of
		 * spinning.
		 */
		if (was_ready) {
			long us = backoff_us;
			struct timespec ts;

			if (wait_ms >= 0 && (long)wait_ms * 1000 < us)
				us = (long)wait_ms * 1000;
			ts.tv_sec = us / 1000000;
			ts.tv_nsec = (us % 1000000) * 1000;
			nanosleep(&ts, NULL);
			if (backoff_us < DTM_EVENT_BACKOFF_MAX_US)
				backoff_us *= 2;
			was_ready = false;
			continue;
		}
		r = poll(&pfd, 1, wait_ms);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return fail(ETIMEDOUT);
		if (pfd.revents & POLLNVAL)
			return fail(EBADF);
		if (pfd.revents & POLLERR) {
			struct dpusim_tm_query q = { .size = sizeof(q) };

			/*
			 * A completion was refused (a full CQ): the kernel
			 * keeps the context ready and fails its next call
			 * once with EOVERFLOW.  Report it here (and take
			 * the kernel's report, or we would wake at once,
			 * forever); if another thread's call took it first,
			 * it was reported there.
			 */
			if (ioctl(ctx->fd, DPUSIM_IOCTL_TM_QUERY, &q) < 0 &&
			    errno == EOVERFLOW)
				return -EOVERFLOW;
		}
		was_ready = true;
		/* an armed CQ may be the one: check before backing off */
		found = take_armed(ctx);
		if (found) {
			*cq = found;
			return 0;
		}
		if (timeout_ms >= 0 && deadline - now_ms() <= 0)
			return fail(ETIMEDOUT);
	}
}

/* ------------------------------------------------------------ SRQs, QPs */

static bool cq_of(const struct dtm_cq *cq, const struct dtm_context *ctx)
{
	return cq && cq->context == ctx;
}

DPUSIM_API struct dtm_srq *dtm_create_srq(struct dtm_context *ctx,
					  const struct dtm_srq_init_attr *attr)
{
	struct dpusim_tm_create_srq c = { .size = sizeof(c) };
	struct dtm_srq_obj *obj;

	if (!ctx || !attr || !cq_of(attr->cq, ctx))
		return fail_ptr(EINVAL);
	c.cq_handle = attr->cq->handle;
	c.max_num_tags = attr->max_num_tags;
	c.max_ops = attr->max_ops;
	c.max_wr = attr->max_wr;
	c.max_sge = attr->max_sge;
	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return fail_ptr(ENOMEM);
	if (ioctl(ctx->fd, DPUSIM_IOCTL_TM_CREATE_SRQ, &c) < 0) {
		int err = errno;

		free(obj);
		return fail_ptr(err);
	}
	obj->srq = (struct dtm_srq) {
		.context = ctx,
		.cq = attr->cq,
		.handle = c.handle,
		.srq_num = c.srq_num,
	};
	obj->max_ops = attr->max_ops;
	pthread_mutex_lock(&ctx->lock);
	node_add(&ctx->srqs, &obj->node);
	pthread_mutex_unlock(&ctx->lock);
	return &obj->srq;
}

DPUSIM_API int dtm_destroy_srq(struct dtm_srq *srq)
{
	struct dtm_srq_obj *obj;
	int ret;

	if (!srq || !srq->context)
		return fail(EINVAL);
	obj = DTM_CONTAINER(srq, struct dtm_srq_obj, srq);
	ret = tm_destroy_unlink(srq->context, DPUSIM_IOCTL_TM_DESTROY_SRQ,
				srq->handle, &obj->node);
	if (!ret)
		free(obj);
	return ret;
}

DPUSIM_API struct dtm_qp *dtm_create_qp(struct dtm_context *ctx,
					const struct dtm_qp_init_attr *attr)
{
	struct dpusim_tm_create_qp c = { .size = sizeof(c) };
	struct dtm_qp_obj *obj;

	if (!ctx || !attr || !cq_of(attr->cq, ctx))
		return fail_ptr(EINVAL);
	c.cq_handle = attr->cq->handle;
	c.max_sge = attr->max_sge;
	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return fail_ptr(ENOMEM);
	if (ioctl(ctx->fd, DPUSIM_IOCTL_TM_CREATE_QP, &c) < 0) {
		int err = errno;

		free(obj);
		return fail_ptr(err);
	}
	obj->qp = (struct dtm_qp) {
		.context = ctx,
		.cq = attr->cq,
		.handle = c.handle,
		.qp_num = c.qp_num,
	};
	pthread_mutex_lock(&ctx->lock);
	node_add(&ctx->qps, &obj->node);
	pthread_mutex_unlock(&ctx->lock);
	return &obj->qp;
}

DPUSIM_API int dtm_destroy_qp(struct dtm_qp *qp)
{
	struct dtm_qp_obj *obj;
	int ret;

	if (!qp || !qp->context)
		return fail(EINVAL);
	obj = DTM_CONTAINER(qp, struct dtm_qp_obj, qp);
	ret = tm_destroy_unlink(qp->context, DPUSIM_IOCTL_TM_DESTROY_QP,
				qp->handle, &obj->node);
	if (!ret)
		free(obj);
	return ret;
}

DPUSIM_API int dtm_connect(struct dtm_qp *qp, uint32_t srq_num)
{
	struct dpusim_tm_connect c = { .size = sizeof(c) };

	if (!qp || !qp->context)
		return fail(EINVAL);
	c.qp_handle = qp->handle;
	c.srq_num = srq_num;
	if (ioctl(qp->context->fd, DPUSIM_IOCTL_TM_CONNECT, &c) < 0)
		return -errno;
	return 0;
}

/* ------------------------------------------------------------ posting */

/* Work requests converted on the stack; longer lists use the heap. */
#define DTM_STACK_WRS	16U

struct post_target {
	int fd;
	unsigned long cmd;
	uint32_t flags;
	uint32_t handle;
	uint32_t remote_qpn;
	uint32_t limit;		/* work requests one library call may carry */
};

/*
 * One ioctl with @nr converted work requests.  Returns 0 or the errno;
 * *done = the requests carried out (on an error, the failing one's index;
 * 0 when the kernel failed before looking at them).
 */
static int post_ioctl(const struct post_target *t, void *wrs, uint32_t nr,
		      uint32_t *done)
{
	struct dpusim_tm_post p = {
		.size = sizeof(p),
		.flags = t->flags,
		.handle = t->handle,
		.remote_qpn = t->remote_qpn,
		.nr_wr = nr,
		.nr_done = 0,
		.wrs = (uintptr_t)wrs,
	};

	if (ioctl(t->fd, t->cmd, &p) == 0) {
		*done = nr;
		return 0;
	}
	*done = p.nr_done < nr ? p.nr_done : nr ? nr - 1 : 0;
	return errno;
}

/* What the generic poster needs to know of one list type. */
struct wr_type {
	size_t usize;					/* uapi struct */
	void *(*next)(void *wr);
	void (*conv)(void *u, const void *wr);		/* list -> uapi */
	void (*done)(const void *u, void *wr);		/* after success */
};

/*
 * Post a list: chunks of at most DPUSIM_TM_MAX_WR (and t->limit in all),
 * stopped at the first error.  Returns 0 or post_err(errno) with *bad =
 * the first list element not carried out (@first when none was; NULL for
 * an empty list).
 */
static int post_list(const struct post_target *t, const struct wr_type *ty,
		     void *first, void **bad, void *stack, uint32_t stack_n)
{
	uint32_t len = 0, total = 0;
	void *w, *arr = stack, *heap = NULL;
	int ret = 0;

	*bad = first;
	if (!first)
		return post_err(EINVAL);
	for (w = first; w && len < DPUSIM_TM_MAX_WR; w = ty->next(w))
		len++;
	if (len > stack_n) {
		heap = malloc(len * ty->usize);
		if (!heap)
			return post_err(ENOMEM);
		arr = heap;
	}

	w = first;
	while (w) {
		void *chunk = w, *x;
		uint32_t n = 0, room, done, i;

		if (total >= t->limit) {
			/* the kernel's answer to a call over the limit */
			*bad = w;
			ret = ENOMEM;
			break;
		}
		room = t->limit - total < len ? t->limit - total : len;
		for (; w && n < room; w = ty->next(w), n++)
			ty->conv((char *)arr + (size_t)n * ty->usize, w);
		ret = post_ioctl(t, arr, n, &done);
		for (i = 0, x = chunk; i < done; i++, x = ty->next(x))
			if (ty->done)
				ty->done((char *)arr + (size_t)i * ty->usize, x);
		if (ret) {
			*bad = x;
			break;
		}
		total += n;
	}
	free(heap);
	return ret ? post_err(ret) : 0;
}

/* ---- ops */

static void *ops_next(void *wr)
{
	return ((struct dtm_ops_wr *)wr)->next;
}

static void ops_conv(void *u, const void *wr)
{
	const struct dtm_ops_wr *w = wr;
	struct dpusim_tm_ops_wr *o = u;

	*o = (struct dpusim_tm_ops_wr) {
		.wr_id = w->wr_id,
		.opcode = (uint32_t)w->opcode,
		.flags = (uint32_t)w->flags,
		.unexpected_cnt = w->tm.unexpected_cnt,
	};
	if (w->opcode == DTM_WR_TAG_ADD) {
		o->recv_wr_id = w->tm.add.recv_wr_id;
		o->sg_list = (uintptr_t)w->tm.add.sg_list;
		o->num_sge = (uint32_t)w->tm.add.num_sge;
		o->tag = w->tm.add.tag;
		o->mask = w->tm.add.mask;
	} else {
		o->handle = w->tm.handle;
	}
}

static void ops_done(const void *u, void *wr)
{
	const struct dpusim_tm_ops_wr *o = u;
	struct dtm_ops_wr *w = wr;

	if (w->opcode == DTM_WR_TAG_ADD)
		w->tm.handle = o->handle;	/* the kernel wrote it back */
}

static const struct wr_type ops_type = {
	.usize = sizeof(struct dpusim_tm_ops_wr),
	.next = ops_next,
	.conv = ops_conv,
	.done = ops_done,
};

DPUSIM_API int dtm_post_srq_ops(struct dtm_srq *srq, struct dtm_ops_wr *wr,
				struct dtm_ops_wr **bad_wr)
{
	struct dpusim_tm_ops_wr stack[DTM_STACK_WRS];
	struct post_target t;
	void *bad = NULL;
	int ret;

	if (!srq || !srq->context) {
		if (bad_wr)
			*bad_wr = wr;
		return post_err(EINVAL);
	}
	t = (struct post_target) {
		.fd = srq->context->fd,
		.cmd = DPUSIM_IOCTL_TM_POST_SRQ_OPS,
		.handle = srq->handle,
		/* the kernel counts max_ops per ioctl; a call is one */
		.limit = DTM_CONTAINER(srq, struct dtm_srq_obj, srq)->max_ops,
	};
	ret = post_list(&t, &ops_type, wr, &bad, stack, DTM_STACK_WRS);
	if (ret && bad_wr)
		*bad_wr = bad;
	return ret;
}

/* ---- untagged buffers */

static void *recv_next(void *wr)
{
	return ((struct dtm_recv_wr *)wr)->next;
}

static void recv_conv(void *u, const void *wr)
{
	const struct dtm_recv_wr *w = wr;

	*(struct dpusim_tm_recv_wr *)u = (struct dpusim_tm_recv_wr) {
		.wr_id = w->wr_id,
		.sg_list = (uintptr_t)w->sg_list,
		.num_sge = (uint32_t)w->num_sge,
	};
}

static const struct wr_type recv_type = {
	.usize = sizeof(struct dpusim_tm_recv_wr),
	.next = recv_next,
	.conv = recv_conv,
};

DPUSIM_API int dtm_post_srq_recv(struct dtm_srq *srq, struct dtm_recv_wr *wr,
				 struct dtm_recv_wr **bad_wr)
{
	struct dpusim_tm_recv_wr stack[DTM_STACK_WRS];
	struct post_target t;
	void *bad = NULL;
	int ret;

	if (!srq || !srq->context) {
		if (bad_wr)
			*bad_wr = wr;
		return post_err(EINVAL);
	}
	t = (struct post_target) {
		.fd = srq->context->fd,
		.cmd = DPUSIM_IOCTL_TM_POST_SRQ_RECV,
		.handle = srq->handle,
		.limit = UINT32_MAX,
	};
	ret = post_list(&t, &recv_type, wr, &bad, stack, DTM_STACK_WRS);
	if (ret && bad_wr)
		*bad_wr = bad;
	return ret;
}

/* ---- sends */

static void *send_next(void *wr)
{
	return ((struct dtm_send_wr *)wr)->next;
}

static inline void send_conv_one(struct dpusim_tm_send_wr *u,
				 const struct dtm_send_wr *w)
{
	*u = (struct dpusim_tm_send_wr) {
		.wr_id = w->wr_id,
		.opcode = (uint32_t)w->opcode,
		.flags = w->send_flags,
		.sg_list = (uintptr_t)w->sg_list,
		.num_sge = (uint32_t)w->num_sge,
		.remote_addr = w->rdma.remote_addr,
		.rkey = w->rdma.rkey,
	};
}

static void send_conv(void *u, const void *wr)
{
	send_conv_one(u, wr);
}

static const struct wr_type send_type = {
	.usize = sizeof(struct dpusim_tm_send_wr),
	.next = send_next,
	.conv = send_conv,
};

static int post_send(int fd, uint32_t flags, uint32_t handle,
		     uint32_t remote_qpn, struct dtm_send_wr *wr,
		     struct dtm_send_wr **bad_wr)
{
	struct dpusim_tm_send_wr stack[DTM_STACK_WRS];
	struct post_target t;
	void *bad = NULL;
	int ret;

	if (wr && !wr->next) {
		/* the latency path: one ioctl, the request on the stack */
		struct dpusim_tm_post p = {
			.size = sizeof(p),
			.flags = flags,
			.handle = handle,
			.remote_qpn = remote_qpn,
			.nr_wr = 1,
			.wrs = (uintptr_t)&stack[0],
		};

		send_conv_one(&stack[0], wr);
		if (ioctl(fd, DPUSIM_IOCTL_TM_POST_SEND, &p) == 0)
			return 0;
		if (bad_wr)
			*bad_wr = wr;
		return errno;
	}
	t = (struct post_target) {
		.fd = fd,
		.cmd = DPUSIM_IOCTL_TM_POST_SEND,
		.flags = flags,
		.handle = handle,
		.remote_qpn = remote_qpn,
		.limit = UINT32_MAX,
	};
	ret = post_list(&t, &send_type, wr, &bad, stack, DTM_STACK_WRS);
	if (ret && bad_wr)
		*bad_wr = bad;
	return ret;
}

DPUSIM_API int dtm_post_send(struct dtm_qp *qp, struct dtm_send_wr *wr,
			     struct dtm_send_wr **bad_wr)
{
	if (!qp || !qp->context) {
		if (bad_wr)
			*bad_wr = wr;
		return post_err(EINVAL);
	}
	return post_send(qp->context->fd, 0, qp->handle, 0, wr, bad_wr);
}

DPUSIM_API int dtm_post_srq_send(struct dtm_srq *srq, uint32_t remote_qpn,
				 struct dtm_send_wr *wr,
				 struct dtm_send_wr **bad_wr)
{
	if (!srq || !srq->context) {
		if (bad_wr)
			*bad_wr = wr;
		return post_err(EINVAL);
	}
	return post_send(srq->context->fd, DPUSIM_TM_POST_FROM_SRQ,
			 srq->handle, remote_qpn, wr, bad_wr);
}

/* ------------------------------------------------------------ helpers */

DPUSIM_API void dtm_wc_read_tm_info(const struct dtm_wc *wc,
				    struct dtm_wc_tm_info *info)
{
	if (!wc || !info)
		return;
	info->tag = wc->tag;
	info->priv = wc->priv;
}

DPUSIM_API void dtm_tmh_build(struct dtm_tmh *tmh, enum dtm_tmh_op op,
			      uint32_t app_ctx, uint64_t tag)
{
	if (!tmh)
		return;
	tmh->opcode = (uint8_t)op;
	memset(tmh->reserved, 0, sizeof(tmh->reserved));
	tmh->app_ctx = htobe32(app_ctx);
	tmh->tag = htobe64(tag);
}

DPUSIM_API void dtm_tmh_parse(const struct dtm_tmh *tmh, enum dtm_tmh_op *op,
			      uint32_t *app_ctx, uint64_t *tag)
{
	if (!tmh)
		return;
	if (op)
		*op = (enum dtm_tmh_op)tmh->opcode;
	if (app_ctx)
		*app_ctx = be32toh(tmh->app_ctx);
	if (tag)
		*tag = be64toh(tmh->tag);
}

DPUSIM_API void dtm_rvh_build(struct dtm_rvh *rvh, uint64_t va, uint32_t rkey,
			      uint32_t len)
{
	if (!rvh)
		return;
	rvh->va = htobe64(va);
	rvh->rkey = htobe32(rkey);
	rvh->len = htobe32(len);
}

DPUSIM_API void dtm_rvh_parse(const struct dtm_rvh *rvh, uint64_t *va,
			      uint32_t *rkey, uint32_t *len)
{
	if (!rvh)
		return;
	if (va)
		*va = be64toh(rvh->va);
	if (rkey)
		*rkey = be32toh(rvh->rkey);
	if (len)
		*len = be32toh(rvh->len);
}

DPUSIM_API const char *dtm_wc_opcode_str(enum dtm_wc_opcode opcode)
{
	switch (opcode) {
	case DTM_WC_SEND:
		return "SEND";
	case DTM_WC_RDMA_READ:
		return "RDMA_READ";
	case DTM_WC_RECV:
		return "RECV";
	case DTM_WC_TM_ADD:
		return "TM_ADD";
	case DTM_WC_TM_DEL:
		return "TM_DEL";
	case DTM_WC_TM_SYNC:
		return "TM_SYNC";
	case DTM_WC_TM_RECV:
		return "TM_RECV";
	case DTM_WC_TM_NO_TAG:
		return "TM_NO_TAG";
	}
	return "UNKNOWN";
}

DPUSIM_API const char *dtm_wc_status_str(enum dtm_wc_status status)
{
	switch (status) {
	case DTM_WC_SUCCESS:
		return "SUCCESS";
	case DTM_WC_LOC_LEN_ERR:
		return "LOC_LEN_ERR";
	case DTM_WC_WR_FLUSH_ERR:
		return "WR_FLUSH_ERR";
	case DTM_WC_REM_ACCESS_ERR:
		return "REM_ACCESS_ERR";
	case DTM_WC_GENERAL_ERR:
		return "GENERAL_ERR";
	case DTM_WC_TM_ERR:
		return "TM_ERR";
	case DTM_WC_TM_RNDV_INCOMPLETE:
		return "TM_RNDV_INCOMPLETE";
	}
	return "UNKNOWN";
}
