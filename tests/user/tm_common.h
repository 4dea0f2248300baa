/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the tag-matching integration tests (tm_match.c, tm_proc.c):
 * posting through the public API of dtm.h, polling with a deadline,
 * comparing completions field by field, sysfs counters of
 * /sys/class/dpusim/tm, pipes between processes and checks in forked
 * children.  The expected behaviour is /work/notes/tm-spec.md.
 */
#ifndef DPUSIM_TESTS_TM_COMMON_H
#define DPUSIM_TESTS_TM_COMMON_H

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dtm.h>

#define TM_SYSFS	"/sys/class/dpusim/tm/"
#define TM_NOBODY	65534
/* Exit status of a child that cannot run its check (the parent SKIPs) */
#define TM_CHILD_SKIP	77

/* ------------------------------------------------------------- sysfs */

/* /sys/class/dpusim/tm/<attr> as an integer; -1 on error. */
static inline long long tm_attr(const char *attr)
{
	char path[128], buf[64];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), TM_SYSFS "%s", attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtoll(buf, NULL, 10);
	fclose(f);
	return v;
}

/* ------------------------------------------------------------- time */

static inline int64_t tm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --------------------------------------------------------- posting */

/* One DTM_WR_TAG_ADD of one sg entry; *@handle gets the entry's handle. */
static inline int tm_add(struct dtm_srq *srq, uint64_t wr_id, int flags,
			 uint32_t cnt, uint64_t recv_wr_id, uint64_t tag,
			 uint64_t mask, uint64_t addr, uint32_t len,
			 uint32_t lkey, uint32_t *handle)
{
	struct dtm_sge sge = { addr, len, lkey };
	struct dtm_ops_wr wr = {
		.wr_id = wr_id,
		.opcode = DTM_WR_TAG_ADD,
		.flags = flags,
		.tm = {
			.unexpected_cnt = cnt,
			.add = {
				.recv_wr_id = recv_wr_id,
				.sg_list = &sge,
				.num_sge = 1,
				.tag = tag,
				.mask = mask,
			},
		},
	};
	struct dtm_ops_wr *bad = NULL;
	int ret = dtm_post_srq_ops(srq, &wr, &bad);

	if (!ret && handle)
		*handle = wr.tm.handle;
	return ret;
}

/* One DTM_WR_TAG_DEL or DTM_WR_TAG_SYNC. */
static inline int tm_op(struct dtm_srq *srq, enum dtm_ops_wr_opcode op,
			uint64_t wr_id, int flags, uint32_t cnt,
			uint32_t handle)
{
	struct dtm_ops_wr wr = {
		.wr_id = wr_id,
		.opcode = op,
		.flags = flags,
		.tm = { .unexpected_cnt = cnt, .handle = handle },
	};
	struct dtm_ops_wr *bad = NULL;

	return dtm_post_srq_ops(srq, &wr, &bad);
}

static inline int tm_del(struct dtm_srq *srq, uint64_t wr_id, int flags,
			 uint32_t handle)
{
	return tm_op(srq, DTM_WR_TAG_DEL, wr_id, flags, 0, handle);
}

static inline int tm_sync(struct dtm_srq *srq, uint64_t wr_id, int flags,
			  uint32_t cnt)
{
	return tm_op(srq, DTM_WR_TAG_SYNC, wr_id, flags, cnt, 0);
}

/* One untagged buffer. */
static inline int tm_recv(struct dtm_srq *srq, uint64_t wr_id, uint64_t addr,
			  uint32_t len, uint32_t lkey)
{
	struct dtm_sge sge = { addr, len, lkey };
	struct dtm_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct dtm_recv_wr *bad = NULL;

	return dtm_post_srq_recv(srq, &wr, &bad);
}

/*
 * TMH | payload sent inline (plain memory, two sg entries; the QP needs
 * max_sge >= 2; @len <= DPUSIM_TM_MAX_INLINE - 16).
 */
static inline int tm_send(struct dtm_qp *qp, uint64_t wr_id,
			  enum dtm_tmh_op op, uint32_t app_ctx, uint64_t tag,
			  const void *payload, uint32_t len,
			  unsigned int send_flags)
{
	struct dtm_tmh tmh;
	struct dtm_sge sge[2] = {
		{ (uintptr_t)&tmh, sizeof(tmh), 0 },
		{ (uintptr_t)payload, len, 0 },
	};
	struct dtm_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = len ? 2 : 1,
		.opcode = DTM_WR_SEND,
		.send_flags = DTM_SEND_INLINE | send_flags,
	};
	struct dtm_send_wr *bad = NULL;

	dtm_tmh_build(&tmh, op, app_ctx, tag);
	return dtm_post_send(qp, &wr, &bad);
}

/* A whole message already in registered memory (one sg entry). */
static inline int tm_send_mr(struct dtm_qp *qp, uint64_t wr_id,
			     const void *msg, uint32_t len, uint32_t lkey,
			     unsigned int send_flags)
{
	struct dtm_sge sge = { (uintptr_t)msg, len, lkey };
	struct dtm_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = DTM_WR_SEND,
		.send_flags = send_flags,
	};
	struct dtm_send_wr *bad = NULL;

	return dtm_post_send(qp, &wr, &bad);
}

/* TMH (@op) | RVH, 32 bytes, into @out. */
static inline void tm_rndv_hdr(uint8_t out[32], enum dtm_tmh_op op,
			       uint32_t app_ctx, uint64_t tag, uint64_t va,
			       uint32_t rkey, uint32_t len)
{
	struct dtm_tmh tmh;
	struct dtm_rvh rvh;

	dtm_tmh_build(&tmh, op, app_ctx, tag);
	dtm_rvh_build(&rvh, va, rkey, len);
	memcpy(out, &tmh, 16);
	memcpy(out + 16, &rvh, 16);
}

/*
 * A rendezvous request TMH | RVH | @meta_len bytes of @meta (at most 32),
 * sent inline.
 */
static inline int tm_send_rndv(struct dtm_qp *qp, uint64_t wr_id,
			       uint32_t app_ctx, uint64_t tag, uint64_t va,
			       uint32_t rkey, uint32_t len, const void *meta,
			       uint32_t meta_len, unsigned int send_flags)
{
	uint8_t m[64];
	struct dtm_sge sge = { (uintptr_t)m, 32 + meta_len, 0 };
	struct dtm_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = DTM_WR_SEND,
		.send_flags = DTM_SEND_INLINE | send_flags,
	};
	struct dtm_send_wr *bad = NULL;

	if (meta_len > 32)
		return -EINVAL;
	tm_rndv_hdr(m, DTM_TMH_RNDV, app_ctx, tag, va, rkey, len);
	if (meta_len)
		memcpy(m + 32, meta, meta_len);
	return dtm_post_send(qp, &wr, &bad);
}

/* From the SRQ to connected QP @qpn: @len bytes of @msg inline. */
static inline int tm_srq_send(struct dtm_srq *srq, uint32_t qpn,
			      uint64_t wr_id, const void *msg, uint32_t len,
			      unsigned int send_flags)
{
	struct dtm_sge sge = { (uintptr_t)msg, len, 0 };
	struct dtm_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = DTM_WR_SEND,
		.send_flags = DTM_SEND_INLINE | send_flags,
	};
	struct dtm_send_wr *bad = NULL;

	return dtm_post_srq_send(srq, qpn, &wr, &bad);
}

/* From the SRQ: RDMA read of QP @qpn's (@va, @rkey) into one local sge. */
static inline int tm_srq_read(struct dtm_srq *srq, uint32_t qpn,
			      uint64_t wr_id, uint64_t va, uint32_t rkey,
			      uint64_t addr, uint32_t len, uint32_t lkey,
			      unsigned int send_flags)
{
	struct dtm_sge sge = { addr, len, lkey };
	struct dtm_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = DTM_WR_RDMA_READ,
		.send_flags = send_flags,
		.rdma = { .remote_addr = va, .rkey = rkey },
	};
	struct dtm_send_wr *bad = NULL;

	return dtm_post_srq_send(srq, qpn, &wr, &bad);
}

/* ---------------------------------------------------------- polling */

/*
 * Up to @n completions within @timeout_ms: how many arrived, or a
 * negative errno if dtm_poll_cq failed before any did.
 */
static inline int tm_poll(struct dtm_cq *cq, struct dtm_wc *wc, int n,
			  int timeout_ms)
{
	int64_t end = tm_now_ms() + timeout_ms;
	int got = 0, r;

	while (got < n) {
		r = dtm_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return got ? got : r;
		got += r;
		if (got == n || tm_now_ms() > end)
			break;
		if (!r)
			usleep(100);
	}
	return got;
}

/* Completions present now (consumed): 0 when the CQ is empty. */
static inline int tm_pending(struct dtm_cq *cq)
{
	struct dtm_wc wc[16];

	return dtm_poll_cq(cq, 16, wc);
}

/* ------------------------------------------------------- completions */

/* Fields a struct wc_want does not check */
enum {
	WC_ANY_LEN = 1 << 0,
	WC_ANY_QPN = 1 << 1,
	WC_ANY_SRC = 1 << 2,
	WC_ANY_HANDLE = 1 << 3,
	WC_ANY_TAG = 1 << 4,
	WC_ANY_PRIV = 1 << 5,
	WC_ANY_WRID = 1 << 6,
};
/* Fields the spec defines only for TM completions */
#define WC_ANY_TM (WC_ANY_HANDLE | WC_ANY_TAG | WC_ANY_PRIV)

struct wc_want {
	enum dtm_wc_opcode opcode;
	enum dtm_wc_status status;
	unsigned int flags;
	uint64_t wr_id;
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t handle;
	uint64_t tag;
	uint32_t priv;
	unsigned int any;	/* WC_ANY_* */
};

static inline const char *tm_flags_str(unsigned int f, char *buf, size_t len)
{
	static const struct { unsigned int bit; const char *name; } names[] = {
		{ DTM_WC_TM_SYNC_REQ, "SYNC_REQ" },
		{ DTM_WC_TM_MATCH, "MATCH" },
		{ DTM_WC_TM_DATA_VALID, "DATA_VALID" },
		{ DTM_WC_INLINE, "INLINE" },
	};
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(f & names[i].bit))
			continue;
		n += snprintf(buf + n, n < len ? len - n : 0, "%s%s",
			      n ? "|" : "", names[i].name);
		f &= ~names[i].bit;
	}
	if (f)
		n += snprintf(buf + n, n < len ? len - n : 0, "%s0x%x",
			      n ? "|" : "", f);
	if (!n)
		snprintf(buf, len, "0");
	return buf;
}

/* One line describing a completion. */
static inline const char *tm_wc_str(const struct dtm_wc *wc, char *buf,
				    size_t len)
{
	char fl[64];

	snprintf(buf, len,
		 "%s(%d) status %s(%d) flags %s wr_id 0x%llx byte_len %u qp_num %u src_qp %u handle %u tag 0x%llx priv 0x%x",
		 dtm_wc_opcode_str(wc->opcode), (int)wc->opcode,
		 dtm_wc_status_str(wc->status), (int)wc->status,
		 tm_flags_str(wc->wc_flags, fl, sizeof(fl)),
		 (unsigned long long)wc->wr_id, wc->byte_len, wc->qp_num,
		 wc->src_qp, wc->handle, (unsigned long long)wc->tag,
		 wc->priv);
	return buf;
}

/*
 * 0 if @got is what @w wants; else 1 and @why names every differing
 * field (and the whole completion).
 */
static inline int wc_diff(const struct dtm_wc *got, const struct wc_want *w,
			  char *why, size_t len)
{
	char a[64], b[64], line[320];
	size_t n = 0;

#define WC_FIELD(cond, fmt, ...)					\
	do {								\
		if (cond)						\
			n += snprintf(why + n, n < len ? len - n : 0,	\
				      fmt "; ", __VA_ARGS__);		\
	} while (0)
	why[0] = '\0';
	WC_FIELD(got->opcode != w->opcode, "opcode %s(%d), want %s(%d)",
		 dtm_wc_opcode_str(got->opcode), (int)got->opcode,
		 dtm_wc_opcode_str(w->opcode), (int)w->opcode);
	WC_FIELD(got->status != w->status, "status %s(%d), want %s(%d)",
		 dtm_wc_status_str(got->status), (int)got->status,
		 dtm_wc_status_str(w->status), (int)w->status);
	WC_FIELD(got->wc_flags != w->flags, "flags %s, want %s",
		 tm_flags_str(got->wc_flags, a, sizeof(a)),
		 tm_flags_str(w->flags, b, sizeof(b)));
	WC_FIELD(!(w->any & WC_ANY_WRID) && got->wr_id != w->wr_id,
		 "wr_id 0x%llx, want 0x%llx", (unsigned long long)got->wr_id,
		 (unsigned long long)w->wr_id);
	WC_FIELD(!(w->any & WC_ANY_LEN) && got->byte_len != w->byte_len,
		 "byte_len %u, want %u", got->byte_len, w->byte_len);
	WC_FIELD(!(w->any & WC_ANY_QPN) && got->qp_num != w->qp_num,
		 "qp_num %u, want %u", got->qp_num, w->qp_num);
	WC_FIELD(!(w->any & WC_ANY_SRC) && got->src_qp != w->src_qp,
		 "src_qp %u, want %u", got->src_qp, w->src_qp);
	WC_FIELD(!(w->any & WC_ANY_HANDLE) && got->handle != w->handle,
		 "handle %u, want %u", got->handle, w->handle);
	WC_FIELD(!(w->any & WC_ANY_TAG) && got->tag != w->tag,
		 "tag 0x%llx, want 0x%llx", (unsigned long long)got->tag,
		 (unsigned long long)w->tag);
	WC_FIELD(!(w->any & WC_ANY_PRIV) && got->priv != w->priv,
		 "priv 0x%x, want 0x%x", got->priv, w->priv);
#undef WC_FIELD
	if (!n)
		return 0;
	snprintf(why + n, n < len ? len - n : 0, "got: %s",
		 tm_wc_str(got, line, sizeof(line)));
	return 1;
}

/* In a TEST: the completion @got must be what the initialisers say. */
#define EXPECT_WC(got, ...)						\
	do {								\
		struct wc_want _w = { __VA_ARGS__ };			\
		char _why[1024];					\
		EXPECT_EQ(0, wc_diff(&(got), &_w, _why, sizeof(_why)))	\
			TH_LOG("completion %s: %s", #got, _why);	\
	} while (0)

/* ------------------------------------------------- forked children */

/* A failed check in a forked child: say which and exit 1. */
static inline void __attribute__((noreturn, format(printf, 3, 4)))
tm_child_fail(int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "# child %d: line %d: %s failed", (int)getpid(), line,
		cond);
	if (fmt[1]) {	/* fmt is " " then the caller's format */
		fprintf(stderr, ":");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fprintf(stderr, "\n");
	fflush(stderr);
	_exit(1);
}

#define CCHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			tm_child_fail(__LINE__, #cond, " " __VA_ARGS__);	\
	} while (0)

/* In a child: the completion @got must be what the initialisers say. */
#define CCHECK_WC(got, ...)						\
	do {								\
		struct wc_want _w = { __VA_ARGS__ };			\
		char _why[1024];					\
		CCHECK(!wc_diff(&(got), &_w, _why, sizeof(_why)), "%s", _why); \
	} while (0)

/* A u32 through a pipe; 0, or -1 (also after @timeout_ms without data). */
static inline int tm_pipe_put(int fd, uint32_t v)
{
	return write(fd, &v, sizeof(v)) == sizeof(v) ? 0 : -1;
}

static inline int tm_pipe_get(int fd, uint32_t *v, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, timeout_ms) != 1)
		return -1;
	return read(fd, v, sizeof(*v)) == sizeof(*v) ? 0 : -1;
}

/* A byte pattern for message @seed: byte i of it. */
static inline uint8_t tm_pat(uint32_t seed, size_t i)
{
	return (uint8_t)(seed * 131 + i * 7 + (i >> 8) * 13 + 1);
}

static inline void tm_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = tm_pat(seed, i);
}

/* Index of the first byte of @buf that differs from @c, or -1. */
static inline long tm_first_not(const void *buf, size_t len, uint8_t c)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != c)
			return (long)i;
	return -1;
}

#endif
