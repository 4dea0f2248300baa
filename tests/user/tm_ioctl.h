/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw-ioctl helpers for the tests of /dev/dpusim/tm (tm_abi, the fuzzers,
 * fail_nth): no library, only uapi/dpusim.h.  Every helper returns 0 or
 * the errno of the failed call (never -1), so callers can compare it.
 */
#ifndef DPUSIM_TESTS_TM_IOCTL_H
#define DPUSIM_TESTS_TM_IOCTL_H

#include <endian.h>
#include <sys/mman.h>

#include "common.h"

#define TM_PATH		"/dev/dpusim/tm"
#define TM_CQE_SIZE	sizeof(struct dpusim_tm_cqe)

/* /sys/class/dpusim/tm/<attr> as an integer; -1 on error. */
static inline long long sysfs_tm_attr(const char *attr)
{
	char path[128], buf[64];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/dpusim/tm/%s", attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtoll(buf, NULL, 0);
	fclose(f);
	return v;
}

static inline int tm_open(void)
{
	return open(TM_PATH, O_RDWR | O_CLOEXEC);
}

/* ioctl(), 0 or errno */
static inline int tm_call(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

/* A CQ and, once mapped, its ring; @nr is the kernel's answer, kept here */
struct tm_cq {
	uint32_t handle, nr;
	uint64_t off, size;
	struct dpusim_tm_cq_ring *ring;
};

static inline int tm_create_cq_nomap(int fd, uint32_t cqe, struct tm_cq *cq)
{
	struct dpusim_tm_create_cq c = { .size = sizeof(c), .cqe = cqe };
	int err = tm_call(fd, DPUSIM_IOCTL_TM_CREATE_CQ, &c);

	memset(cq, 0, sizeof(*cq));
	if (err)
		return err;
	cq->handle = c.handle;
	cq->nr = c.cqe;
	cq->off = c.mmap_offset;
	cq->size = c.mmap_size;
	return 0;
}

static inline int tm_cq_map(int fd, struct tm_cq *cq)
{
	void *p = mmap(NULL, cq->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       cq->off);

	if (p == MAP_FAILED)
		return errno;
	cq->ring = p;
	return 0;
}

/* CREATE_CQ and mmap of its ring */
static inline int tm_create_cq(int fd, uint32_t cqe, struct tm_cq *cq)
{
	int err = tm_create_cq_nomap(fd, cqe, cq);

	return err ? err : tm_cq_map(fd, cq);
}

static inline void tm_cq_unmap(struct tm_cq *cq)
{
	if (cq->ring)
		munmap(cq->ring, cq->size);
	cq->ring = NULL;
}

static inline struct dpusim_tm_cqe *tm_cqe_at(const struct tm_cq *cq,
					      uint32_t idx)
{
	return (struct dpusim_tm_cqe *)((uint8_t *)cq->ring +
		DPUSIM_TM_CQ_RING_ENTRIES + (size_t)(idx & (cq->nr - 1)) * TM_CQE_SIZE);
}

/* Completions not yet consumed */
static inline uint32_t tm_cq_pending(const struct tm_cq *cq)
{
	return __atomic_load_n(&cq->ring->producer, __ATOMIC_ACQUIRE) -
	       cq->ring->consumer;
}

/* Read up to @max completions into @out (may be NULL: drop them). */
static inline int tm_cq_poll(struct tm_cq *cq, struct dpusim_tm_cqe *out,
			     int max)
{
	uint32_t prod = __atomic_load_n(&cq->ring->producer, __ATOMIC_ACQUIRE);
	uint32_t cons = cq->ring->consumer;
	int n = 0;

	while (cons != prod && n < max) {
		if (out)
			memcpy(&out[n], tm_cqe_at(cq, cons), TM_CQE_SIZE);
		n++;
		cons++;
	}
	__atomic_store_n(&cq->ring->consumer, cons, __ATOMIC_RELEASE);
	return n;
}

static inline void tm_cq_drain(struct tm_cq *cq)
{
	__atomic_store_n(&cq->ring->consumer,
			 __atomic_load_n(&cq->ring->producer, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

static inline int tm_reg_mr(int fd, const void *addr, uint64_t len,
			    uint32_t access, uint32_t *lkey)
{
	struct dpusim_tm_reg_mr r = {
		.size = sizeof(r), .addr = (uintptr_t)addr, .length = len,
		.access = access,
	};
	int err = tm_call(fd, DPUSIM_IOCTL_TM_REG_MR, &r);

	if (!err && lkey)
		*lkey = r.lkey;
	return err;
}

static inline int tm_reg_mram(int fd, int rank_fd, uint32_t dpu, uint64_t off,
			      uint64_t len, uint32_t access, uint32_t *lkey)
{
	struct dpusim_tm_reg_mr r = {
		.size = sizeof(r), .flags = DPUSIM_TM_MR_MRAM, .addr = off,
		.length = len, .access = access, .rank_fd = rank_fd, .dpu = dpu,
	};
	int err = tm_call(fd, DPUSIM_IOCTL_TM_REG_MR, &r);

	if (!err && lkey)
		*lkey = r.lkey;
	return err;
}

/* DEREG_MR, DESTROY_CQ, DESTROY_SRQ, DESTROY_QP */
static inline int tm_destroy(int fd, unsigned long cmd, uint32_t handle)
{
	struct dpusim_tm_destroy d = { .size = sizeof(d), .handle = handle };

	return tm_call(fd, cmd, &d);
}

static inline int tm_create_srq(int fd, uint32_t cq, uint32_t tags,
				uint32_t ops, uint32_t wr, uint32_t sge,
				uint32_t *handle, uint32_t *num)
{
	struct dpusim_tm_create_srq s = {
		.size = sizeof(s), .cq_handle = cq, .max_num_tags = tags,
		.max_ops = ops, .max_wr = wr, .max_sge = sge,
	};
	int err = tm_call(fd, DPUSIM_IOCTL_TM_CREATE_SRQ, &s);

	if (!err) {
		if (handle)
			*handle = s.handle;
		if (num)
			*num = s.srq_num;
	}
	return err;
}

static inline int tm_create_qp(int fd, uint32_t cq, uint32_t sge,
			       uint32_t *handle, uint32_t *num)
{
	struct dpusim_tm_create_qp q = {
		.size = sizeof(q), .cq_handle = cq, .max_sge = sge,
	};
	int err = tm_call(fd, DPUSIM_IOCTL_TM_CREATE_QP, &q);

	if (!err) {
		if (handle)
			*handle = q.handle;
		if (num)
			*num = q.qp_num;
	}
	return err;
}

static inline int tm_connect(int fd, uint32_t qp, uint32_t srq_num)
{
	struct dpusim_tm_connect c = {
		.size = sizeof(c), .qp_handle = qp, .srq_num = srq_num,
	};

	return tm_call(fd, DPUSIM_IOCTL_TM_CONNECT, &c);
}

/* POST_SRQ_OPS, POST_SRQ_RECV or POST_SEND; *nr_done if non-NULL */
static inline int tm_post(int fd, unsigned long cmd, uint32_t flags,
			  uint32_t handle, uint32_t remote_qpn, const void *wrs,
			  uint32_t nr_wr, uint32_t *nr_done)
{
	struct dpusim_tm_post p = {
		.size = sizeof(p), .flags = flags, .handle = handle,
		.remote_qpn = remote_qpn, .nr_wr = nr_wr,
		.wrs = (uintptr_t)wrs,
	};
	int err = tm_call(fd, cmd, &p);

	if (nr_done)
		*nr_done = p.nr_done;
	return err;
}

/* The wire headers, big-endian */
static inline void tm_tmh(void *buf, uint8_t opcode, uint32_t app_ctx,
			  uint64_t tag)
{
	struct dpusim_tm_tmh h = {
		.opcode = opcode, .app_ctx = htobe32(app_ctx),
		.tag = htobe64(tag),
	};

	memcpy(buf, &h, sizeof(h));
}

static inline void tm_rvh(void *buf, uint64_t va, uint32_t rkey, uint32_t len)
{
	struct dpusim_tm_rvh h = {
		.va = htobe64(va), .rkey = htobe32(rkey), .len = htobe32(len),
	};

	memcpy(buf, &h, sizeof(h));
}

/* One TAG_ADD of @len bytes at @addr of region @lkey */
static inline int tm_tag_add(int fd, uint32_t srq, uint64_t tag, uint64_t mask,
			     uint32_t lkey, const void *addr, uint32_t len,
			     uint64_t wr_id, uint32_t *handle)
{
	struct dpusim_tm_sge sge = { (uintptr_t)addr, len, lkey };
	struct dpusim_tm_ops_wr wr = {
		.wr_id = wr_id, .opcode = DPUSIM_TM_WR_TAG_ADD,
		.recv_wr_id = wr_id, .sg_list = (uintptr_t)&sge, .num_sge = 1,
		.tag = tag, .mask = mask,
	};
	int err = tm_post(fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0, srq, 0, &wr, 1,
			  NULL);

	if (!err && handle)
		*handle = wr.handle;
	return err;
}

/* One untagged buffer of @len bytes at @addr of region @lkey */
static inline int tm_post_recv(int fd, uint32_t srq, uint32_t lkey,
			       const void *addr, uint32_t len, uint64_t wr_id)
{
	struct dpusim_tm_sge sge = { (uintptr_t)addr, len, lkey };
	struct dpusim_tm_recv_wr wr = {
		.wr_id = wr_id, .sg_list = (uintptr_t)&sge, .num_sge = 1,
	};

	return tm_post(fd, DPUSIM_IOCTL_TM_POST_SRQ_RECV, 0, srq, 0, &wr, 1,
		       NULL);
}

/* One inline SEND of @len bytes at @msg on QP @qp (or from SRQ @qp to @rqpn) */
static inline int tm_send_inline(int fd, uint32_t post_flags, uint32_t qp,
				 uint32_t rqpn, const void *msg, uint32_t len,
				 uint32_t send_flags, uint64_t wr_id)
{
	struct dpusim_tm_sge sge = { (uintptr_t)msg, len, 0 };
	struct dpusim_tm_send_wr wr = {
		.wr_id = wr_id, .opcode = DPUSIM_TM_WR_SEND,
		.flags = DPUSIM_TM_SEND_INLINE | send_flags,
		.sg_list = (uintptr_t)&sge, .num_sge = 1,
	};

	return tm_post(fd, DPUSIM_IOCTL_TM_POST_SEND, post_flags, qp, rqpn,
		       &wr, 1, NULL);
}

/* An eager message: TMH(EAGER, app_ctx, tag) then @plen payload bytes */
static inline int tm_send_eager(int fd, uint32_t qp, uint64_t tag,
				uint32_t app_ctx, const void *payload,
				uint32_t plen, uint32_t send_flags)
{
	uint8_t msg[DPUSIM_TM_MAX_INLINE];

	if (plen > sizeof(msg) - sizeof(struct dpusim_tm_tmh))
		return E2BIG;
	tm_tmh(msg, DPUSIM_TM_TMH_EAGER, app_ctx, tag);
	memcpy(msg + sizeof(struct dpusim_tm_tmh), payload, plen);
	return tm_send_inline(fd, 0, qp, 0, msg,
			      sizeof(struct dpusim_tm_tmh) + plen, send_flags,
			      tag);
}

#endif
