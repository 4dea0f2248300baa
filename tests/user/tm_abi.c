// SPDX-License-Identifier: GPL-2.0
/*
 * ABI tests of /dev/dpusim/tm, raw ioctls only (no library): every ioctl
 * of the "Tag matching" section of uapi/dpusim.h, mmap and poll on the
 * context fd, one test per failure path, as xfer_abi.c does for the
 * transfer ioctls.  The expected errnos are the header's and the
 * contract's (notes/tm-spec.md).
 *
 *  - ioc.*: the struct rules of each of the 13 ioctls (one variant each):
 *    short, long with zero / non-zero tail, bad pointers, unknown flags,
 *    non-zero reserved fields, another encoding of the command, what the
 *    kernel writes back (only within the user's size; out fields ignored
 *    on input), a read-only struct;
 *  - post.*: what the three POST ioctls share (nr_wr bounds, wrs pointer,
 *    unknown handle, nr_done in the middle of a list);
 *  - sge.*: sg lists of a tagged buffer, an untagged buffer and a send
 *    (keys, ranges, access, pointers, num_sge);
 *  - tm.*: everything else: each field's bounds, REG_MR (memlock, MRAM),
 *    DESTROY_CQ while used, CONNECT, POST_SEND and POST_SRQ_OPS paths,
 *    mmap, poll, CQ overrun in one and in two processes, a process
 *    scribbling over its ring.
 */
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"
#include "tm_ioctl.h"

#define PAGE		4096UL
#define BUF_LEN		(64U << 10)
#define RW_LEN		(32U << 10)	/* [0, 32K) LOCAL_WRITE|REMOTE_READ */
#define RECV_OFF	0		/* untagged buffers, 1 KiB each */
#define RXB_OFF		4096		/* rx_make()'s untagged buffers */
#define TAG_OFF		12288		/* tagged buffers */
#define MSG_OFF		16384		/* a valid eager message (32 bytes) */
#define NO_TAG_MATCH	0x7777ULL	/* a tag no entry of the tests has */
#define ACC_LW		DPUSIM_TM_ACCESS_LOCAL_WRITE
#define ACC_RR		DPUSIM_TM_ACCESS_REMOTE_READ
#define KADDR		0xffff888000000000ULL

/*
 * One context: SRQ (8 tags, 4 ops, 4 untagged buffers, 2 sges) on CQ scq
 * with 2 untagged buffers posted; QP (2 sges) on CQ qcq connected to it;
 * a 64 KiB buffer: [0, 32K) region lkey (LOCAL_WRITE | REMOTE_READ),
 * [32K, 64K) region lkey_ro (REMOTE_READ only), both holding a valid
 * eager message at their MSG_OFF / start.  Spare objects nothing uses:
 * a region, a CQ, an SRQ (on scq) and an unconnected QP (on qcq).
 */
struct tmctx {
	int fd;
	struct tm_cq scq, qcq;
	uint32_t srq, srqn, qp, qpn;
	uint32_t lkey, lkey_ro, spare_mr;
	uint32_t spare_cq, spare_srq, spare_qp, spare_qpn;
	uint8_t *buf;
	/* what the structs built by build() point to */
	struct dpusim_tm_sge sge;
	struct dpusim_tm_ops_wr ow;
	struct dpusim_tm_recv_wr rw;
	struct dpusim_tm_send_wr sw;
	uint8_t msg[64];
};

/* 0, or the step that failed */
static int ctx_setup(struct tmctx *c)
{
	struct tm_cq spare;
	int i;

	memset(c, 0, sizeof(*c));
	c->fd = tm_open();
	if (c->fd < 0)
		return 1;
	c->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->buf == MAP_FAILED)
		return 2;
	memset(c->buf, 0xee, BUF_LEN);
	tm_tmh(c->buf + MSG_OFF, DPUSIM_TM_TMH_EAGER, 1, NO_TAG_MATCH);
	tm_tmh(c->buf + RW_LEN, DPUSIM_TM_TMH_EAGER, 1, NO_TAG_MATCH);
	if (tm_reg_mr(c->fd, c->buf, RW_LEN, ACC_LW | ACC_RR, &c->lkey))
		return 3;
	if (tm_reg_mr(c->fd, c->buf + RW_LEN, RW_LEN, ACC_RR, &c->lkey_ro))
		return 4;
	if (tm_reg_mr(c->fd, c->buf, PAGE, ACC_LW, &c->spare_mr))
		return 5;
	if (tm_create_cq(c->fd, 16, &c->scq) || tm_create_cq(c->fd, 16, &c->qcq))
		return 6;
	if (tm_create_cq_nomap(c->fd, 4, &spare))
		return 7;
	c->spare_cq = spare.handle;
	if (tm_create_srq(c->fd, c->scq.handle, 8, 4, 4, 2, &c->srq, &c->srqn))
		return 8;
	if (tm_create_srq(c->fd, c->scq.handle, 1, 1, 1, 1, &c->spare_srq, NULL))
		return 9;
	if (tm_create_qp(c->fd, c->qcq.handle, 2, &c->qp, &c->qpn) ||
	    tm_create_qp(c->fd, c->qcq.handle, 2, &c->spare_qp, &c->spare_qpn))
		return 10;
	if (tm_connect(c->fd, c->qp, c->srqn))
		return 11;
	for (i = 0; i < 2; i++)
		if (tm_post_recv(c->fd, c->srq, c->lkey,
				 c->buf + RECV_OFF + i * 1024, 1024, 100 + i))
			return 12;
	return 0;
}

static void ctx_teardown(struct tmctx *c)
{
	if (c->fd >= 0)
		close(c->fd);
}

/* A second context with a region over the same buffer: its lkey */
static int other_ctx_mr(struct tmctx *c, int *fd2, uint32_t *lkey)
{
	*fd2 = tm_open();
	if (*fd2 < 0)
		return errno;
	return tm_reg_mr(*fd2, c->buf, RW_LEN, ACC_LW | ACC_RR, lkey);
}

/* An inline message of @len bytes: TMH(@op, tag) then 0x5a */
static int send_op(int fd, uint32_t qp, uint8_t op, uint32_t len,
		   uint32_t *nr_done)
{
	uint8_t msg[512];
	struct dpusim_tm_sge sge = { (uintptr_t)msg, len, 0 };
	struct dpusim_tm_send_wr wr = {
		.wr_id = 9, .opcode = DPUSIM_TM_WR_SEND,
		.flags = DPUSIM_TM_SEND_INLINE, .sg_list = (uintptr_t)&sge,
		.num_sge = 1,
	};

	memset(msg, 0x5a, sizeof(msg));
	if (len >= 16)
		tm_tmh(msg, op, 1, NO_TAG_MATCH);
	else
		msg[0] = op;
	return tm_post(fd, DPUSIM_IOCTL_TM_POST_SEND, 0, qp, 0, &wr, 1,
		       nr_done);
}

/* An unexpected 32-byte eager message on @qp */
static int send_unexp(int fd, uint32_t qp)
{
	return send_op(fd, qp, DPUSIM_TM_TMH_EAGER, 32, NULL);
}

/* A one-op POST_SRQ_OPS */
static int post_op(int fd, uint32_t srq, struct dpusim_tm_ops_wr *wr,
		   uint32_t *nr_done)
{
	return tm_post(fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0, srq, 0, wr, 1,
		       nr_done);
}

/* A receiver for the overrun tests: CQ of @cqe, SRQ, a QP of c on qcq */
struct rx {
	struct tm_cq cq;
	uint32_t srq, srqn, qp, qpn;
};

static int rx_make(struct tmctx *c, uint32_t cqe, uint32_t nbufs,
		   struct rx *r)
{
	struct dpusim_tm_sge sge[16];
	struct dpusim_tm_recv_wr wr[16];
	uint32_t i;
	int err;

	err = tm_create_cq(c->fd, cqe, &r->cq);
	if (!err)
		err = tm_create_srq(c->fd, r->cq.handle, 8, 4, 16, 1, &r->srq,
				    &r->srqn);
	if (!err)
		err = tm_create_qp(c->fd, c->qcq.handle, 1, &r->qp, &r->qpn);
	if (!err)
		err = tm_connect(c->fd, r->qp, r->srqn);
	for (i = 0; i < nbufs && i < 16; i++) {
		sge[i] = (struct dpusim_tm_sge){
			(uintptr_t)c->buf + RXB_OFF + i * 256, 256, c->lkey };
		wr[i] = (struct dpusim_tm_recv_wr){
			.wr_id = 1000 + i, .sg_list = (uintptr_t)&sge[i],
			.num_sge = 1 };
	}
	if (!err && nbufs)
		err = tm_post(c->fd, DPUSIM_IOCTL_TM_POST_SRQ_RECV, 0, r->srq,
			      0, wr, nbufs, NULL);
	return err;
}

static void rx_destroy(struct tmctx *c, struct rx *r)
{
	/* the SRQ first: its flush goes to qcq, not to a full r->cq */
	tm_destroy(c->fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, r->srq);
	tm_destroy(c->fd, DPUSIM_IOCTL_TM_DESTROY_QP, r->qp);
	tm_destroy(c->fd, DPUSIM_IOCTL_TM_DESTROY_CQ, r->cq.handle);
	tm_cq_unmap(&r->cq);
	tm_cq_drain(&c->qcq);
}

static int query(int fd)
{
	struct dpusim_tm_query q = { .size = sizeof(q) };

	return tm_call(fd, DPUSIM_IOCTL_TM_QUERY, &q);
}

/* A free rank (another test may hold one: EBUSY, try the next) */
static int open_free_rank(struct dpusim_rank_info *info)
{
	char path[64];
	int i, fd;

	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "/dev/dpusim/rank%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(info, 0, sizeof(*info));
		info->size = sizeof(*info);
		if (!ioctl(fd, DPUSIM_IOCTL_RANK_INFO, info))
			return fd;
		close(fd);
	}
	return -1;
}

/* pipes between a test and its child: one byte at a time */
static int get_byte(int fd)
{
	unsigned char b;

	return read(fd, &b, 1) == 1 ? b : -1;
}

static void put_byte(int fd, int v)
{
	unsigned char b = v;
	ssize_t r = write(fd, &b, 1);

	(void)r;
}

/* In a child: a context with a CQ and a QP connected to @srqn */
static int remote_qp(uint32_t srqn, int *fd, uint32_t *qp, uint32_t *qpn)
{
	struct tm_cq cq;
	int err;

	*fd = tm_open();
	if (*fd < 0)
		return errno;
	err = tm_create_cq(*fd, 4, &cq);
	if (!err)
		err = tm_create_qp(*fd, cq.handle, 1, qp, qpn);
	if (!err)
		err = tm_connect(*fd, *qp, srqn);
	return err;
}

/* =================================================== struct rules: ioc */

enum {
	K_QUERY, K_REG_MR, K_DEREG_MR, K_CREATE_CQ, K_DESTROY_CQ,
	K_CREATE_SRQ, K_DESTROY_SRQ, K_CREATE_QP, K_DESTROY_QP, K_CONNECT,
	K_POST_SRQ_OPS, K_POST_SRQ_RECV, K_POST_SEND,
};

union tm_any {
	struct dpusim_tm_query query;
	struct dpusim_tm_reg_mr reg_mr;
	struct dpusim_tm_destroy destroy;
	struct dpusim_tm_create_cq create_cq;
	struct dpusim_tm_create_srq create_srq;
	struct dpusim_tm_create_qp create_qp;
	struct dpusim_tm_connect connect;
	struct dpusim_tm_post post;
	uint8_t bytes[64];
};

#define GARBAGE 0xa5a5a5a5U

/*
 * A valid struct of @kind into @u (out fields GARBAGE if @garbage):
 * its size.  Each succeeds once on a fresh context.
 */
static size_t build(int kind, struct tmctx *c, union tm_any *u, bool garbage)
{
	uint32_t g = garbage ? GARBAGE : 0;

	memset(u, 0, sizeof(*u));
	switch (kind) {
	case K_QUERY:
		u->query.size = sizeof(u->query);
		if (garbage)
			memset(&u->query.max_num_tags, 0xa5,
			       sizeof(u->query) - 8);
		return sizeof(u->query);
	case K_REG_MR:
		u->reg_mr = (struct dpusim_tm_reg_mr){
			.size = sizeof(u->reg_mr), .addr = (uintptr_t)c->buf,
			.length = PAGE, .access = ACC_LW, .lkey = g,
			.rkey = g,
		};
		return sizeof(u->reg_mr);
	case K_DEREG_MR:
	case K_DESTROY_CQ:
	case K_DESTROY_SRQ:
	case K_DESTROY_QP:
		u->destroy.size = sizeof(u->destroy);
		u->destroy.handle = kind == K_DEREG_MR ? c->spare_mr :
				    kind == K_DESTROY_CQ ? c->spare_cq :
				    kind == K_DESTROY_SRQ ? c->spare_srq :
				    c->spare_qp;
		return sizeof(u->destroy);
	case K_CREATE_CQ:
		u->create_cq = (struct dpusim_tm_create_cq){
			.size = sizeof(u->create_cq), .cqe = 4, .handle = g,
			.mmap_offset = garbage ? ~0ULL : 0,
			.mmap_size = garbage ? ~0ULL : 0,
		};
		return sizeof(u->create_cq);
	case K_CREATE_SRQ:
		u->create_srq = (struct dpusim_tm_create_srq){
			.size = sizeof(u->create_srq),
			.cq_handle = c->scq.handle, .max_num_tags = 4,
			.max_ops = 4, .max_wr = 4, .max_sge = 2,
			.handle = g, .srq_num = g,
		};
		return sizeof(u->create_srq);
	case K_CREATE_QP:
		u->create_qp = (struct dpusim_tm_create_qp){
			.size = sizeof(u->create_qp),
			.cq_handle = c->qcq.handle, .max_sge = 2,
			.handle = g, .qp_num = g,
		};
		return sizeof(u->create_qp);
	case K_CONNECT:
		u->connect = (struct dpusim_tm_connect){
			.size = sizeof(u->connect), .qp_handle = c->spare_qp,
			.srq_num = c->srqn,
		};
		return sizeof(u->connect);
	case K_POST_SRQ_OPS:
		c->sge = (struct dpusim_tm_sge){
			(uintptr_t)c->buf + TAG_OFF, 512, c->lkey };
		c->ow = (struct dpusim_tm_ops_wr){
			.wr_id = 1, .opcode = DPUSIM_TM_WR_TAG_ADD,
			.handle = g, .recv_wr_id = 2,
			.sg_list = (uintptr_t)&c->sge, .num_sge = 1,
			.tag = 5, .mask = ~0ULL,
		};
		u->post = (struct dpusim_tm_post){
			.size = sizeof(u->post), .handle = c->srq, .nr_wr = 1,
			.nr_done = g, .wrs = (uintptr_t)&c->ow,
		};
		return sizeof(u->post);
	case K_POST_SRQ_RECV:
		c->sge = (struct dpusim_tm_sge){
			(uintptr_t)c->buf + TAG_OFF, 512, c->lkey };
		c->rw = (struct dpusim_tm_recv_wr){
			.wr_id = 3, .sg_list = (uintptr_t)&c->sge,
			.num_sge = 1,
		};
		u->post = (struct dpusim_tm_post){
			.size = sizeof(u->post), .handle = c->srq, .nr_wr = 1,
			.nr_done = g, .wrs = (uintptr_t)&c->rw,
		};
		return sizeof(u->post);
	case K_POST_SEND:
		tm_tmh(c->msg, DPUSIM_TM_TMH_EAGER, 1, NO_TAG_MATCH);
		memset(c->msg + 16, 0x5a, 16);
		c->sge = (struct dpusim_tm_sge){ (uintptr_t)c->msg, 32, 0 };
		c->sw = (struct dpusim_tm_send_wr){
			.wr_id = 4, .opcode = DPUSIM_TM_WR_SEND,
			.flags = DPUSIM_TM_SEND_INLINE,
			.sg_list = (uintptr_t)&c->sge, .num_sge = 1,
		};
		u->post = (struct dpusim_tm_post){
			.size = sizeof(u->post), .handle = c->qp, .nr_wr = 1,
			.nr_done = g, .wrs = (uintptr_t)&c->sw,
		};
		return sizeof(u->post);
	}
	return 0;
}

FIXTURE(ioc) {
	struct tmctx c;
	union tm_any u;
	size_t n;
};

FIXTURE_VARIANT(ioc) {
	unsigned long cmd;
	int kind;
	int zero_off;		/* a must-be-zero field besides flags, or -1 */
	uint32_t low_bad_flag;	/* the lowest unknown flag bit */
	bool writes_back;	/* the kernel copies the struct back */
};

#define IOC_VARIANT(_name, _kind, _zero, _flag, _wb)			\
	FIXTURE_VARIANT_ADD(ioc, _name) {				\
		.cmd = DPUSIM_IOCTL_TM_##_kind, .kind = K_##_kind,	\
		.zero_off = _zero, .low_bad_flag = _flag,		\
		.writes_back = _wb,					\
	}

#define RSV(s)	((int)offsetof(struct s, __reserved))
#define RQPN	((int)offsetof(struct dpusim_tm_post, remote_qpn))

IOC_VARIANT(query, QUERY, -1, 1, true);
IOC_VARIANT(reg_mr, REG_MR, RSV(dpusim_tm_reg_mr), 2, true);
IOC_VARIANT(dereg_mr, DEREG_MR, RSV(dpusim_tm_destroy), 1, false);
IOC_VARIANT(create_cq, CREATE_CQ, -1, 1, true);
IOC_VARIANT(destroy_cq, DESTROY_CQ, RSV(dpusim_tm_destroy), 1, false);
IOC_VARIANT(create_srq, CREATE_SRQ, RSV(dpusim_tm_create_srq), 1, true);
IOC_VARIANT(destroy_srq, DESTROY_SRQ, RSV(dpusim_tm_destroy), 1, false);
IOC_VARIANT(create_qp, CREATE_QP, -1, 1, true);
IOC_VARIANT(destroy_qp, DESTROY_QP, RSV(dpusim_tm_destroy), 1, false);
IOC_VARIANT(connect, CONNECT, -1, 1, false);
IOC_VARIANT(post_srq_ops, POST_SRQ_OPS, RQPN, 1, true);
IOC_VARIANT(post_srq_recv, POST_SRQ_RECV, RQPN, 1, true);
IOC_VARIANT(post_send, POST_SEND, RQPN, 2, true);

FIXTURE_SETUP(ioc)
{
	ASSERT_EQ(0, ctx_setup(&self->c));
	self->n = build(variant->kind, &self->c, &self->u, false);
	ASSERT_LT(8, self->n);
}

FIXTURE_TEARDOWN(ioc)
{
	ctx_teardown(&self->c);
}

/* The valid struct succeeds (and is what the failure tests start from) */
TEST_F(ioc, valid)
{
	EXPECT_EQ(0, tm_call(self->c.fd, variant->cmd, &self->u));
}

/* Below the first version (= the whole struct for every tm ioctl): EINVAL */
TEST_F(ioc, short_struct)
{
	union tm_any orig;
	uint32_t sizes[] = { self->n - 1, self->n - 4, 4, 0 };
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		self->u.query.size = sizes[i];
		orig = self->u;
		EXPECT_EQ(EINVAL, tm_call(self->c.fd, variant->cmd, &self->u))
			TH_LOG("size %u", sizes[i]);
		EXPECT_EQ(0, memcmp(&orig, &self->u, sizeof(orig)));
	}
	/* nothing was done: the valid one still succeeds */
	self->u.query.size = self->n;
	EXPECT_EQ(0, tm_call(self->c.fd, variant->cmd, &self->u));
}

/*
 * Longer with a zero tail: accepted; the kernel writes back only the
 * struct it knows (the tail stays zero) and nothing past the user's size.
 */
TEST_F(ioc, long_struct_zero_tail)
{
	uint8_t b[sizeof(union tm_any) + 64];

	memset(b, 0xaa, sizeof(b));
	memcpy(b, &self->u, self->n);
	memset(b + self->n, 0, 8);
	((union tm_any *)b)->query.size = self->n + 8;
	EXPECT_EQ(0, tm_call(self->c.fd, variant->cmd, b));
	EXPECT_EQ(0, memcmp(b + self->n, "\0\0\0\0\0\0\0\0", 8));
	EXPECT_EQ(0xaa, b[self->n + 8]);
	EXPECT_EQ(0, memcmp(b + self->n + 8, b + self->n + 9, 63));
}

/* Exact size: the bytes right after the struct are never written */
TEST_F(ioc, exact_size_guard)
{
	uint8_t b[sizeof(union tm_any) + 64];

	memset(b, 0xaa, sizeof(b));
	memcpy(b, &self->u, self->n);
	EXPECT_EQ(0, tm_call(self->c.fd, variant->cmd, b));
	EXPECT_EQ(0xaa, b[self->n]);
	EXPECT_EQ(0, memcmp(b + self->n, b + self->n + 1, 63));
}

/* Longer with a non-zero tail: E2BIG, nothing written, nothing done */
TEST_F(ioc, long_struct_nonzero_tail)
{
	uint8_t b[sizeof(union tm_any) + 64], orig[sizeof(b)];
	unsigned int pos;

	for (pos = 0; pos < 8; pos += 7) {
		memset(b, 0, sizeof(b));
		memcpy(b, &self->u, self->n);
		b[self->n + pos] = 1;
		((union tm_any *)b)->query.size = self->n + 8;
		memcpy(orig, b, sizeof(b));
		EXPECT_EQ(E2BIG, tm_call(self->c.fd, variant->cmd, b))
			TH_LOG("non-zero byte at %u", pos);
		EXPECT_EQ(0, memcmp(orig, b, sizeof(b)));
	}
	/* a size far past the struct, all zero: still accepted */
	memset(b, 0, sizeof(b));
	memcpy(b, &self->u, self->n);
	((union tm_any *)b)->query.size = sizeof(b);
	EXPECT_EQ(0, tm_call(self->c.fd, variant->cmd, b));
}

TEST_F(ioc, bad_struct_pointer)
{
	uint8_t *map = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *p;

	EXPECT_EQ(EFAULT, tm_call(self->c.fd, variant->cmd, NULL));
	EXPECT_EQ(EFAULT, tm_call(self->c.fd, variant->cmd, (void *)8));
	EXPECT_EQ(EFAULT, tm_call(self->c.fd, variant->cmd, (void *)KADDR));
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map + PAGE, PAGE));
	/* the struct runs into an unmapped page */
	p = map + PAGE - self->n / 2;
	memcpy(p, &self->u, self->n / 2);
	EXPECT_EQ(EFAULT, tm_call(self->c.fd, variant->cmd, p));
	/* the struct fits, its zero tail does not */
	p = map + PAGE - self->n;
	memcpy(p, &self->u, self->n);
	((union tm_any *)p)->query.size = self->n + 8;
	EXPECT_EQ(EFAULT, tm_call(self->c.fd, variant->cmd, p));
	/* the same at the exact size works */
	((union tm_any *)p)->query.size = self->n;
	EXPECT_EQ(0, tm_call(self->c.fd, variant->cmd, p));
	munmap(map, PAGE);
}

TEST_F(ioc, unknown_flags)
{
	self->u.query.flags = variant->low_bad_flag;
	EXPECT_EQ(EINVAL, tm_call(self->c.fd, variant->cmd, &self->u));
	self->u.query.flags = 1U << 31;
	EXPECT_EQ(EINVAL, tm_call(self->c.fd, variant->cmd, &self->u));
	self->u.query.flags = 0;
	EXPECT_EQ(0, tm_call(self->c.fd, variant->cmd, &self->u));
}

/* __reserved (or remote_qpn of a post that is not FROM_SRQ) non-zero */
TEST_F(ioc, nonzero_reserved)
{
	if (variant->zero_off < 0)
		SKIP(return, "no reserved field");
	*(uint32_t *)(self->u.bytes + variant->zero_off) = 1;
	EXPECT_EQ(EINVAL, tm_call(self->c.fd, variant->cmd, &self->u));
	*(uint32_t *)(self->u.bytes + variant->zero_off) = 0x80000000;
	EXPECT_EQ(EINVAL, tm_call(self->c.fd, variant->cmd, &self->u));
	*(uint32_t *)(self->u.bytes + variant->zero_off) = 0;
	EXPECT_EQ(0, tm_call(self->c.fd, variant->cmd, &self->u));
}

/* Out fields hold garbage on input: ignored */
TEST_F(ioc, out_fields_ignored)
{
	build(variant->kind, &self->c, &self->u, true);
	EXPECT_EQ(0, tm_call(self->c.fd, variant->cmd, &self->u));
	switch (variant->kind) {
	case K_QUERY:
		EXPECT_EQ(DPUSIM_TM_MAX_NUM_TAGS, self->u.query.max_num_tags);
		EXPECT_EQ(DPUSIM_TM_CAP_RC, self->u.query.cap_flags);
		break;
	case K_REG_MR:
		EXPECT_NE(GARBAGE, self->u.reg_mr.lkey);
		EXPECT_EQ(self->u.reg_mr.lkey, self->u.reg_mr.rkey);
		break;
	case K_CREATE_CQ:
		EXPECT_NE(GARBAGE, self->u.create_cq.handle);
		EXPECT_EQ((uint64_t)self->u.create_cq.handle * PAGE,
			  self->u.create_cq.mmap_offset);
		EXPECT_EQ(PAGE, self->u.create_cq.mmap_size);
		break;
	case K_CREATE_SRQ:
		EXPECT_NE(GARBAGE, self->u.create_srq.handle);
		EXPECT_NE(GARBAGE, self->u.create_srq.srq_num);
		break;
	case K_CREATE_QP:
		EXPECT_NE(GARBAGE, self->u.create_qp.handle);
		EXPECT_NE(GARBAGE, self->u.create_qp.qp_num);
		break;
	case K_POST_SRQ_OPS:
		EXPECT_NE(GARBAGE, self->c.ow.handle);
		/* fall through */
	case K_POST_SRQ_RECV:
	case K_POST_SEND:
		EXPECT_EQ(1, self->u.post.nr_done);
		break;
	}
}

/* The same number with another direction/size encoding: ENOTTY */
TEST_F(ioc, other_encoding)
{
	unsigned long nr = _IOC_NR(variant->cmd);

	EXPECT_EQ(ENOTTY, tm_call(self->c.fd,
				  _IOC(_IOC_READ | _IOC_WRITE, DPUSIM_TYPE, nr,
				       self->n), &self->u));
	EXPECT_EQ(ENOTTY, tm_call(self->c.fd, _IOW(DPUSIM_TYPE, nr, uint32_t),
				  &self->u));
	EXPECT_EQ(ENOTTY, tm_call(self->c.fd, _IO('x', nr), &self->u));
}

/*
 * A read-only struct: the ioctls that write back fail with EFAULT (the
 * creates are undone, see tm.*_readonly_struct_undone), the others work.
 */
TEST_F(ioc, readonly_struct)
{
	uint8_t *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	memcpy(p, &self->u, self->n);
	ASSERT_EQ(0, mprotect(p, PAGE, PROT_READ));
	EXPECT_EQ(variant->writes_back ? EFAULT : 0,
		  tm_call(self->c.fd, variant->cmd, p));
	munmap(p, PAGE);
}

/* ============================================== the three posts: post */

FIXTURE(post) {
	struct tmctx c;
	uint8_t wrs[4 * 64];	/* 4 work requests of the variant, packed */
};

#define WR(i)	(self->wrs + (i) * variant->wr_size)

FIXTURE_VARIANT(post) {
	unsigned long cmd;
	int kind;
	size_t wr_size;
};

FIXTURE_VARIANT_ADD(post, srq_ops) {
	.cmd = DPUSIM_IOCTL_TM_POST_SRQ_OPS, .kind = K_POST_SRQ_OPS,
	.wr_size = sizeof(struct dpusim_tm_ops_wr),
};

FIXTURE_VARIANT_ADD(post, srq_recv) {
	.cmd = DPUSIM_IOCTL_TM_POST_SRQ_RECV, .kind = K_POST_SRQ_RECV,
	.wr_size = sizeof(struct dpusim_tm_recv_wr),
};

FIXTURE_VARIANT_ADD(post, send) {
	.cmd = DPUSIM_IOCTL_TM_POST_SEND, .kind = K_POST_SEND,
	.wr_size = sizeof(struct dpusim_tm_send_wr),
};

/* wrs[i] a valid work request of the variant (built by build()) */
static void post_fill(struct tmctx *c, int kind, void *wr)
{
	union tm_any u;

	build(kind, c, &u, false);
	memcpy(wr, kind == K_POST_SRQ_OPS ? (void *)&c->ow :
		   kind == K_POST_SRQ_RECV ? (void *)&c->rw : (void *)&c->sw,
	       kind == K_POST_SRQ_OPS ? sizeof(c->ow) :
	       kind == K_POST_SRQ_RECV ? sizeof(c->rw) : sizeof(c->sw));
}

/* Make a work request of the variant malformed (EINVAL) */
static void post_break(int kind, void *wr)
{
	if (kind == K_POST_SRQ_OPS)
		((struct dpusim_tm_ops_wr *)wr)->opcode = 3;
	else if (kind == K_POST_SRQ_RECV)
		((struct dpusim_tm_recv_wr *)wr)->__reserved = 1;
	else
		((struct dpusim_tm_send_wr *)wr)->opcode = 0;
}

static uint32_t post_handle(struct tmctx *c, int kind)
{
	return kind == K_POST_SEND ? c->qp : c->srq;
}

FIXTURE_SETUP(post)
{
	int i;

	ASSERT_EQ(0, ctx_setup(&self->c));
	for (i = 0; i < 4; i++)
		post_fill(&self->c, variant->kind, WR(i));
}

FIXTURE_TEARDOWN(post)
{
	ctx_teardown(&self->c);
}

static int do_post(struct tmctx *c, unsigned long cmd, int kind,
		   const void *wrs, uint32_t nr, uint32_t *nr_done)
{
	*nr_done = GARBAGE;
	return tm_post(c->fd, cmd, 0, post_handle(c, kind), 0, wrs, nr,
		       nr_done);
}

TEST_F(post, nr_wr_zero)
{
	uint32_t done;

	EXPECT_EQ(EINVAL, do_post(&self->c, variant->cmd, variant->kind,
				  self->wrs, 0, &done));
}

TEST_F(post, nr_wr_over_max)
{
	uint32_t done;

	EXPECT_EQ(E2BIG, do_post(&self->c, variant->cmd, variant->kind,
				 self->wrs, DPUSIM_TM_MAX_WR + 1, &done));
	EXPECT_EQ(E2BIG, do_post(&self->c, variant->cmd, variant->kind,
				 self->wrs, UINT32_MAX, &done));
}

TEST_F(post, bad_wrs_pointer)
{
	uint32_t done;

	EXPECT_EQ(EFAULT, do_post(&self->c, variant->cmd, variant->kind,
				  NULL, 1, &done));
	EXPECT_EQ(0, done);
	EXPECT_EQ(EFAULT, do_post(&self->c, variant->cmd, variant->kind,
				  (void *)KADDR, 1, &done));
	EXPECT_EQ(0, done);
}

/* The second work request lies in an unmapped page: EFAULT, nr_done 1 */
TEST_F(post, wrs_run_into_hole)
{
	uint8_t *map = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *p;
	uint32_t done;

	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map + PAGE, PAGE));
	p = map + PAGE - variant->wr_size;
	memcpy(p, WR(0), variant->wr_size);
	EXPECT_EQ(EFAULT, do_post(&self->c, variant->cmd, variant->kind, p, 2,
				  &done));
	EXPECT_EQ(1, done);
	munmap(map, PAGE);
}

TEST_F(post, unknown_handle)
{
	uint32_t done;

	EXPECT_EQ(ENOENT, tm_post(self->c.fd, variant->cmd, 0, 0, 0,
				  self->wrs, 1, &done));
	EXPECT_EQ(ENOENT, tm_post(self->c.fd, variant->cmd, 0, 4242, 0,
				  self->wrs, 1, &done));
	EXPECT_EQ(ENOENT, tm_post(self->c.fd, variant->cmd, 0, UINT32_MAX, 0,
				  self->wrs, 1, &done));
	EXPECT_EQ(0, done);
}

TEST_F(post, wr_reserved)
{
	uint32_t done;

	if (variant->kind == K_POST_SRQ_OPS)
		((struct dpusim_tm_ops_wr *)WR(0))->__reserved = 1;
	else if (variant->kind == K_POST_SRQ_RECV)
		((struct dpusim_tm_recv_wr *)WR(0))->__reserved = 1;
	else
		((struct dpusim_tm_send_wr *)WR(0))->__reserved = 1;
	EXPECT_EQ(EINVAL, do_post(&self->c, variant->cmd, variant->kind,
				  self->wrs, 1, &done));
	EXPECT_EQ(0, done);
	if (variant->kind == K_POST_SEND) {
		post_fill(&self->c, variant->kind, WR(0));
		((struct dpusim_tm_send_wr *)WR(0))->__reserved2 = 1;
		EXPECT_EQ(EINVAL, do_post(&self->c, variant->cmd,
					  variant->kind, self->wrs, 1, &done));
		EXPECT_EQ(0, done);
	}
}

/* [ok, ok, bad, ok]: the bad one's error, nr_done 2, the first two done */
TEST_F(post, nr_done_in_the_middle)
{
	long long msgs = sysfs_tm_attr("messages");
	uint32_t done;

	post_break(variant->kind, WR(2));
	EXPECT_EQ(EINVAL, do_post(&self->c, variant->cmd, variant->kind,
				  self->wrs, 4, &done));
	EXPECT_EQ(2, done);
	switch (variant->kind) {
	case K_POST_SRQ_OPS:
		EXPECT_NE(0, ((struct dpusim_tm_ops_wr *)WR(0))->handle);
		EXPECT_NE(0, ((struct dpusim_tm_ops_wr *)WR(1))->handle);
		EXPECT_EQ(0, ((struct dpusim_tm_ops_wr *)WR(3))->handle);
		break;
	case K_POST_SRQ_RECV:
		/* 2 + 2 buffers: max_wr (4) reached */
		EXPECT_EQ(ENOMEM, do_post(&self->c, variant->cmd,
					  variant->kind, self->wrs, 1, &done));
		EXPECT_EQ(0, done);
		break;
	case K_POST_SEND:
		EXPECT_EQ(msgs + 2, sysfs_tm_attr("messages"));
		EXPECT_EQ(2, tm_cq_pending(&self->c.scq));
		break;
	}
}

/* nr_done is written on success too, whatever it held */
TEST_F(post, nr_done_on_success)
{
	uint32_t done;

	EXPECT_EQ(0, do_post(&self->c, variant->cmd, variant->kind,
			     self->wrs, 2, &done));
	EXPECT_EQ(2, done);
}

/* ========================================================= sg lists: sge */

FIXTURE(sge) {
	struct tmctx c;
	int fd2;
};

FIXTURE_VARIANT(sge) {
	int kind;		/* K_POST_SRQ_OPS (TAG_ADD), _RECV or _SEND */
};

FIXTURE_VARIANT_ADD(sge, tag_add) { .kind = K_POST_SRQ_OPS };
FIXTURE_VARIANT_ADD(sge, recv) { .kind = K_POST_SRQ_RECV };
FIXTURE_VARIANT_ADD(sge, send) { .kind = K_POST_SEND };

FIXTURE_SETUP(sge)
{
	self->fd2 = -1;
	ASSERT_EQ(0, ctx_setup(&self->c));
}

FIXTURE_TEARDOWN(sge)
{
	if (self->fd2 >= 0)
		close(self->fd2);
	ctx_teardown(&self->c);
}

/*
 * Post one work request of the variant with sg list @sg (@n entries,
 * @sg_list overrides the pointer if non-zero): the errno; nr_done 0 on
 * failure is checked here.
 */
static int sge_post(struct tmctx *c, int kind, struct dpusim_tm_sge *sg,
		    uint32_t n, uint64_t sg_list)
{
	uint64_t p = sg_list ? sg_list : (uintptr_t)sg;
	uint32_t done = GARBAGE;
	int err;

	if (kind == K_POST_SRQ_OPS) {
		struct dpusim_tm_ops_wr wr = {
			.opcode = DPUSIM_TM_WR_TAG_ADD, .sg_list = p,
			.num_sge = n, .tag = 1, .mask = ~0ULL,
		};

		err = post_op(c->fd, c->srq, &wr, &done);
	} else if (kind == K_POST_SRQ_RECV) {
		struct dpusim_tm_recv_wr wr = { .sg_list = p, .num_sge = n };

		err = tm_post(c->fd, DPUSIM_IOCTL_TM_POST_SRQ_RECV, 0, c->srq,
			      0, &wr, 1, &done);
	} else {
		struct dpusim_tm_send_wr wr = {
			.opcode = DPUSIM_TM_WR_SEND, .sg_list = p,
			.num_sge = n,
		};

		err = tm_post(c->fd, DPUSIM_IOCTL_TM_POST_SEND, 0, c->qp, 0,
			      &wr, 1, &done);
	}
	if (done != (err ? 0 : 1))
		return 1000 + done;	/* shows up as a wrong errno */
	return err;
}

/* An sge of the variant's valid kind: the eager message for a send */
static struct dpusim_tm_sge sge_ok(struct tmctx *c, int kind)
{
	if (kind == K_POST_SEND)
		return (struct dpusim_tm_sge){
			(uintptr_t)c->buf + MSG_OFF, 32, c->lkey };
	return (struct dpusim_tm_sge){
		(uintptr_t)c->buf + TAG_OFF, 256, c->lkey };
}

TEST_F(sge, valid)
{
	struct dpusim_tm_sge s = sge_ok(&self->c, variant->kind);

	EXPECT_EQ(0, sge_post(&self->c, variant->kind, &s, 1, 0));
}

TEST_F(sge, unknown_lkey)
{
	struct dpusim_tm_sge s = sge_ok(&self->c, variant->kind);

	s.lkey = 0;
	EXPECT_EQ(EINVAL, sge_post(&self->c, variant->kind, &s, 1, 0));
	s.lkey = 0x7ffffff0;
	EXPECT_EQ(EINVAL, sge_post(&self->c, variant->kind, &s, 1, 0));
}

TEST_F(sge, other_context_lkey)
{
	struct dpusim_tm_sge s = sge_ok(&self->c, variant->kind);

	ASSERT_EQ(0, other_ctx_mr(&self->c, &self->fd2, &s.lkey));
	EXPECT_EQ(EINVAL, sge_post(&self->c, variant->kind, &s, 1, 0));
}

/* DEREG_MR: the key stops working at once */
TEST_F(sge, deregistered_lkey)
{
	struct dpusim_tm_sge s = sge_ok(&self->c, variant->kind);
	uint32_t lkey;

	ASSERT_EQ(0, tm_reg_mr(self->c.fd, self->c.buf, RW_LEN, ACC_LW, &lkey));
	s.lkey = lkey;
	ASSERT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DEREG_MR, lkey));
	EXPECT_EQ(EINVAL, sge_post(&self->c, variant->kind, &s, 1, 0));
}

TEST_F(sge, range_outside)
{
	struct dpusim_tm_sge s = sge_ok(&self->c, variant->kind);
	uint64_t start = (uintptr_t)self->c.buf;

	s.addr = start + RW_LEN - 8;		/* past the end */
	s.length = 16;
	EXPECT_EQ(EINVAL, sge_post(&self->c, variant->kind, &s, 1, 0));
	s.addr = start - 8;			/* before the start */
	EXPECT_EQ(EINVAL, sge_post(&self->c, variant->kind, &s, 1, 0));
	s.addr = start + RW_LEN;		/* right after it */
	s.length = 1;
	EXPECT_EQ(EINVAL, sge_post(&self->c, variant->kind, &s, 1, 0));
	s.addr = start + 32;			/* too long */
	s.length = RW_LEN;
	EXPECT_EQ(EINVAL, sge_post(&self->c, variant->kind, &s, 1, 0));
	s.addr = UINT64_MAX - 4;		/* wraps */
	s.length = 16;
	EXPECT_EQ(EINVAL, sge_post(&self->c, variant->kind, &s, 1, 0));
}

/*
 * A region without LOCAL_WRITE: EACCES for a tagged or untagged buffer;
 * a send needs no access (lkey_ro holds an eager message at its start).
 */
TEST_F(sge, no_local_write)
{
	struct dpusim_tm_sge s = {
		(uintptr_t)self->c.buf + RW_LEN, 32, self->c.lkey_ro };

	EXPECT_EQ(variant->kind == K_POST_SEND ? 0 : EACCES,
		  sge_post(&self->c, variant->kind, &s, 1, 0));
}

TEST_F(sge, bad_sg_list)
{
	struct dpusim_tm_sge s = sge_ok(&self->c, variant->kind);

	EXPECT_EQ(EFAULT, sge_post(&self->c, variant->kind, &s, 1, 8));
	EXPECT_EQ(EFAULT, sge_post(&self->c, variant->kind, &s, 1, KADDR));
}

/* num_sge over the object's max_sge (2): EINVAL (kernel: sgl_get/msg_get) */
TEST_F(sge, num_sge_over_max)
{
	struct dpusim_tm_sge s[3];
	int i;

	for (i = 0; i < 3; i++) {
		s[i] = sge_ok(&self->c, variant->kind);
		s[i].length = 16;
	}
	EXPECT_EQ(EINVAL, sge_post(&self->c, variant->kind, s, 3, 0));
	EXPECT_EQ(EINVAL, sge_post(&self->c, variant->kind, s,
				   DPUSIM_TM_MAX_SGE + 1, 0));
	EXPECT_EQ(EINVAL, sge_post(&self->c, variant->kind, s, UINT32_MAX, 0));
	/* max_sge exactly works */
	EXPECT_EQ(0, sge_post(&self->c, variant->kind, s, 2, 0));
}

/* num_sge 0: a zero-length buffer; a message of 0 bytes is too short */
TEST_F(sge, num_sge_zero)
{
	EXPECT_EQ(variant->kind == K_POST_SEND ? EINVAL : 0,
		  sge_post(&self->c, variant->kind, NULL, 0, 0));
}

/* ================================================ everything else: tm */

FIXTURE(tm) {
	struct tmctx c;
	int fd2;
};

FIXTURE_SETUP(tm)
{
	self->fd2 = -1;
	ASSERT_EQ(0, ctx_setup(&self->c));
}

FIXTURE_TEARDOWN(tm)
{
	if (self->fd2 >= 0)
		close(self->fd2);
	ctx_teardown(&self->c);
}

/* ------------------------------------------------------------- ENOTTY */

TEST_F(tm, unknown_ioctl_past_the_table)
{
	EXPECT_EQ(ENOTTY, tm_call(self->c.fd,
				  _IO(DPUSIM_TYPE, DPUSIM_CMD_TM_POST_SEND + 1),
				  NULL));
	EXPECT_EQ(ENOTTY, tm_call(self->c.fd, _IO(DPUSIM_TYPE, 0xff), NULL));
	EXPECT_EQ(ENOTTY, tm_call(self->c.fd,
				  _IO(DPUSIM_TYPE, DPUSIM_TM_CMD_BASE - 1),
				  NULL));
}

/* The rank ioctls are not the tm device's */
TEST_F(tm, unknown_ioctl_rank_commands)
{
	struct dpusim_rank_info info = { .size = sizeof(info) };
	struct dpusim_sync s = { .size = sizeof(s) };

	EXPECT_EQ(ENOTTY, tm_call(self->c.fd, DPUSIM_IOCTL_RANK_INFO, &info));
	EXPECT_EQ(ENOTTY, tm_call(self->c.fd, DPUSIM_IOCTL_SYNC, &s));
	EXPECT_EQ(ENOTTY, tm_call(self->c.fd, DPUSIM_IOCTL_XFER, NULL));
}

/* -------------------------------------------------------------- QUERY */

TEST_F(tm, query_values)
{
	struct dpusim_tm_query q;

	memset(&q, 0xa5, sizeof(q));
	q.size = sizeof(q);
	q.flags = 0;
	ASSERT_EQ(0, tm_call(self->c.fd, DPUSIM_IOCTL_TM_QUERY, &q));
	EXPECT_EQ(sizeof(q), q.size);
	EXPECT_EQ(DPUSIM_TM_MAX_NUM_TAGS, q.max_num_tags);
	EXPECT_EQ(DPUSIM_TM_MAX_OPS, q.max_ops);
	EXPECT_EQ(DPUSIM_TM_MAX_SGE, q.max_sge);
	EXPECT_EQ(DPUSIM_TM_MAX_RNDV_HDR_SIZE, q.max_rndv_hdr_size);
	EXPECT_EQ(DPUSIM_TM_MAX_SRQ_WR, q.max_srq_wr);
	EXPECT_EQ(DPUSIM_TM_MAX_CQE, q.max_cqe);
	EXPECT_EQ(DPUSIM_TM_MAX_INLINE, q.max_inline);
	EXPECT_EQ(DPUSIM_TM_MAX_QP_RECV, q.max_qp_recv);
	EXPECT_EQ(DPUSIM_TM_MAX_MSG, q.max_msg);
	EXPECT_EQ(DPUSIM_TM_CAP_RC, q.cap_flags);
}

/* ------------------------------------------------------------- REG_MR */

static int reg(int fd, uint64_t addr, uint64_t len, uint32_t access)
{
	return tm_reg_mr(fd, (void *)(uintptr_t)addr, len, access, NULL);
}

TEST_F(tm, reg_mr_keys)
{
	struct dpusim_tm_reg_mr r = {
		.size = sizeof(r), .addr = (uintptr_t)self->c.buf,
		.length = 100, .access = ACC_LW | ACC_RR |
					 DPUSIM_TM_ACCESS_REMOTE_WRITE,
	};
	long long mrs = sysfs_tm_attr("mrs");

	ASSERT_EQ(0, tm_call(self->c.fd, DPUSIM_IOCTL_TM_REG_MR, &r));
	EXPECT_NE(0, r.lkey);
	EXPECT_EQ(r.lkey, r.rkey);
	EXPECT_NE(self->c.lkey, r.lkey);
	EXPECT_EQ(mrs + 1, sysfs_tm_attr("mrs"));
	EXPECT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DEREG_MR, r.lkey));
	EXPECT_EQ(mrs, sysfs_tm_attr("mrs"));
}

TEST_F(tm, reg_mr_zero_length)
{
	EXPECT_EQ(EINVAL, reg(self->c.fd, (uintptr_t)self->c.buf, 0, ACC_LW));
}

TEST_F(tm, reg_mr_unknown_access)
{
	EXPECT_EQ(EINVAL, reg(self->c.fd, (uintptr_t)self->c.buf, PAGE, 1U << 3));
	EXPECT_EQ(EINVAL, reg(self->c.fd, (uintptr_t)self->c.buf, PAGE, 1U << 31));
}

TEST_F(tm, reg_mr_over_max_msg)
{
	EXPECT_EQ(E2BIG, reg(self->c.fd, (uintptr_t)self->c.buf,
			     (uint64_t)DPUSIM_TM_MAX_MSG + 1, ACC_LW));
	EXPECT_EQ(E2BIG, reg(self->c.fd, (uintptr_t)self->c.buf, UINT64_MAX,
			     ACC_LW));
}

TEST_F(tm, reg_mr_wraps)
{
	EXPECT_EQ(EOVERFLOW, reg(self->c.fd, UINT64_MAX - 100, PAGE, ACC_LW));
	EXPECT_EQ(EOVERFLOW, reg(self->c.fd, UINT64_MAX, 1, ACC_LW));
}

/* An unmapped page in the range, or a kernel address: EFAULT, nothing pinned */
TEST_F(tm, reg_mr_unmapped)
{
	uint8_t *map = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long pin = proc_status_kb("VmPin:");
	long long pages = sysfs_tm_attr("pinned_pages");
	long long mrs = sysfs_tm_attr("mrs");

	ASSERT_NE(MAP_FAILED, map);
	map[0] = 1;
	ASSERT_EQ(0, munmap(map + PAGE, PAGE));
	EXPECT_EQ(EFAULT, reg(self->c.fd, (uintptr_t)map, 2 * PAGE, ACC_LW));
	EXPECT_EQ(EFAULT, reg(self->c.fd, (uintptr_t)map + PAGE, 1, ACC_LW));
	EXPECT_EQ(EFAULT, reg(self->c.fd, KADDR, PAGE, ACC_LW));
	EXPECT_EQ(EFAULT, reg(self->c.fd, 0, PAGE, ACC_LW));
	EXPECT_EQ(pin, proc_status_kb("VmPin:"));
	EXPECT_EQ(pages, sysfs_tm_attr("pinned_pages"));
	EXPECT_EQ(mrs, sysfs_tm_attr("mrs"));
	munmap(map, PAGE);
}

/*
 * RLIMIT_MEMLOCK as an unprivileged process (no CAP_IPC_LOCK): ENOMEM,
 * VmPin unchanged; within the limit it works and is charged.
 */
TEST_F(tm, reg_mr_memlock)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { 4 * PAGE, 4 * PAGE };
		long pin, pages;
		uint8_t *p;
		int fd;

		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(10);
		if (setresuid(65534, 65534, 65534))
			_exit(11);
		fd = tm_open();
		if (fd < 0)
			_exit(12);
		p = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(13);
		memset(p, 1, 16 * PAGE);
		pin = proc_status_kb("VmPin:");
		pages = sysfs_tm_attr("pinned_pages");
		if (reg(fd, (uintptr_t)p, 16 * PAGE, ACC_LW) != ENOMEM)
			_exit(14);
		if (reg(fd, (uintptr_t)p, 5 * PAGE, 0) != ENOMEM)
			_exit(15);
		if (proc_status_kb("VmPin:") != pin)
			_exit(16);
		if (sysfs_tm_attr("pinned_pages") != pages)
			_exit(17);
		if (reg(fd, (uintptr_t)p, 2 * PAGE, ACC_LW))
			_exit(18);
		if (proc_status_kb("VmPin:") != pin + 8)
			_exit(19);
		/* 2 + 3 pages > 4 */
		if (reg(fd, (uintptr_t)p + 4 * PAGE, 3 * PAGE, ACC_LW) != ENOMEM)
			_exit(20);
		if (proc_status_kb("VmPin:") != pin + 8)
			_exit(21);
		_exit(0);
	}
	EXPECT_EQ(0, child_exit_status(pid));
}

TEST_F(tm, reg_mr_rank_fd_without_flag)
{
	struct dpusim_tm_reg_mr r = {
		.size = sizeof(r), .addr = (uintptr_t)self->c.buf,
		.length = PAGE, .access = ACC_LW, .rank_fd = 1,
	};

	EXPECT_EQ(EINVAL, tm_call(self->c.fd, DPUSIM_IOCTL_TM_REG_MR, &r));
	r.rank_fd = -1;
	EXPECT_EQ(EINVAL, tm_call(self->c.fd, DPUSIM_IOCTL_TM_REG_MR, &r));
}

TEST_F(tm, reg_mr_dpu_without_flag)
{
	struct dpusim_tm_reg_mr r = {
		.size = sizeof(r), .addr = (uintptr_t)self->c.buf,
		.length = PAGE, .access = ACC_LW, .dpu = 1,
	};

	EXPECT_EQ(EINVAL, tm_call(self->c.fd, DPUSIM_IOCTL_TM_REG_MR, &r));
}

TEST_F(tm, reg_mr_mram_closed_fd)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(EBADF, tm_reg_mram(self->c.fd, fd, 0, 0, PAGE, ACC_LW, NULL));
	EXPECT_EQ(EBADF, tm_reg_mram(self->c.fd, -1, 0, 0, PAGE, ACC_LW, NULL));
}

TEST_F(tm, reg_mr_mram_not_a_rank)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(ENODEV, tm_reg_mram(self->c.fd, fd, 0, 0, PAGE, ACC_LW, NULL));
	/* the tm device itself is not a rank either */
	EXPECT_EQ(ENODEV, tm_reg_mram(self->c.fd, self->c.fd, 0, 0, PAGE,
				      ACC_LW, NULL));
	close(fd);
}

TEST_F(tm, reg_mr_mram_ok)
{
	struct dpusim_rank_info info;
	int rfd = open_free_rank(&info);
	uint32_t lkey = 0;

	if (rfd < 0)
		SKIP(return, "no free rank");
	EXPECT_EQ(0, tm_reg_mram(self->c.fd, rfd, info.nr_dpus - 1,
				 info.mram_size - PAGE, PAGE, ACC_LW, &lkey));
	EXPECT_NE(0, lkey);
	EXPECT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DEREG_MR, lkey));
	close(rfd);
}

TEST_F(tm, reg_mr_mram_dpu_out_of_range)
{
	struct dpusim_rank_info info;
	int rfd = open_free_rank(&info);

	if (rfd < 0)
		SKIP(return, "no free rank");
	EXPECT_EQ(EINVAL, tm_reg_mram(self->c.fd, rfd, info.nr_dpus, 0, PAGE,
				      ACC_LW, NULL));
	EXPECT_EQ(EINVAL, tm_reg_mram(self->c.fd, rfd, UINT32_MAX, 0, PAGE,
				      ACC_LW, NULL));
	close(rfd);
}

TEST_F(tm, reg_mr_mram_past_end)
{
	struct dpusim_rank_info info;
	int rfd = open_free_rank(&info);

	if (rfd < 0)
		SKIP(return, "no free rank");
	EXPECT_EQ(EOVERFLOW, tm_reg_mram(self->c.fd, rfd, 0,
					 info.mram_size - PAGE, 2 * PAGE,
					 ACC_LW, NULL));
	EXPECT_EQ(EOVERFLOW, tm_reg_mram(self->c.fd, rfd, 0, info.mram_size,
					 1, ACC_LW, NULL));
	EXPECT_EQ(EOVERFLOW, tm_reg_mram(self->c.fd, rfd, 0, UINT64_MAX - 10,
					 PAGE, ACC_LW, NULL));
	close(rfd);
}

/* A RUNNING DPU's MRAM, as for a transfer: EBUSY, nothing allocated */
TEST_F(tm, reg_mr_mram_running_ebusy)
{
	struct dpusim_worker_open wo = { .size = sizeof(wo) };
	struct dpusim_launch l = { .size = sizeof(l), .first_dpu = 2, .nr_dpus = 1 };
	struct dpusim_rank_info info;
	int rfd = open_free_rank(&info);
	long long res;
	uint32_t lkey = 0;

	if (rfd < 0)
		SKIP(return, "no free rank");
	ASSERT_EQ(0, ioctl(rfd, DPUSIM_IOCTL_WORKER_OPEN, &wo));
	ASSERT_EQ(0, ioctl(rfd, DPUSIM_IOCTL_LAUNCH, &l));
	res = sysfs_rank_attr(info.rank_index, "mram_resident_bytes");
	EXPECT_EQ(EBUSY, tm_reg_mram(self->c.fd, rfd, 2, 0, 4 * PAGE, ACC_LW, NULL));
	EXPECT_EQ(res, sysfs_rank_attr(info.rank_index, "mram_resident_bytes"));
	/* another DPU of the rank is not running */
	EXPECT_EQ(0, tm_reg_mram(self->c.fd, rfd, 3, 0, PAGE, ACC_LW, &lkey));
	EXPECT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DEREG_MR, lkey));
	close(wo.fd);	/* DPU 2 faults: "no worker left" */
	close(rfd);
}

/* A failed copy-out undoes the registration: nothing pinned or counted */
TEST_F(tm, reg_mr_readonly_struct_undone)
{
	struct dpusim_tm_reg_mr *r = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long pin = proc_status_kb("VmPin:");
	long long mrs = sysfs_tm_attr("mrs");

	ASSERT_NE(MAP_FAILED, r);
	*r = (struct dpusim_tm_reg_mr){
		.size = sizeof(*r), .addr = (uintptr_t)self->c.buf,
		.length = 4 * PAGE, .access = ACC_LW,
	};
	ASSERT_EQ(0, mprotect(r, PAGE, PROT_READ));
	EXPECT_EQ(EFAULT, tm_call(self->c.fd, DPUSIM_IOCTL_TM_REG_MR, r));
	EXPECT_EQ(pin, proc_status_kb("VmPin:"));
	EXPECT_EQ(mrs, sysfs_tm_attr("mrs"));
	munmap(r, PAGE);
}

/* ----------------------------------------------------------- DEREG_MR */

TEST_F(tm, dereg_mr_unknown)
{
	EXPECT_EQ(ENOENT, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DEREG_MR, 0));
	EXPECT_EQ(ENOENT, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DEREG_MR,
				     0x7ffffff0));
	EXPECT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DEREG_MR,
				self->c.spare_mr));
	EXPECT_EQ(ENOENT, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DEREG_MR,
				     self->c.spare_mr));
}

TEST_F(tm, dereg_mr_other_context)
{
	uint32_t lkey = 0;

	ASSERT_EQ(0, other_ctx_mr(&self->c, &self->fd2, &lkey));
	EXPECT_EQ(ENOENT, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DEREG_MR, lkey));
	EXPECT_EQ(0, tm_destroy(self->fd2, DPUSIM_IOCTL_TM_DEREG_MR, lkey));
}

/* ---------------------------------------------------------- CREATE_CQ */

TEST_F(tm, create_cq_cqe_zero)
{
	struct tm_cq cq;

	EXPECT_EQ(EINVAL, tm_create_cq_nomap(self->c.fd, 0, &cq));
}

TEST_F(tm, create_cq_cqe_over_max)
{
	struct tm_cq cq;

	EXPECT_EQ(E2BIG, tm_create_cq_nomap(self->c.fd, DPUSIM_TM_MAX_CQE + 1,
					    &cq));
	EXPECT_EQ(E2BIG, tm_create_cq_nomap(self->c.fd, UINT32_MAX, &cq));
}

/* 1 and the maximum work; cqe comes back rounded up to a power of two */
TEST_F(tm, create_cq_bounds_and_ring)
{
	struct tm_cq cq;

	ASSERT_EQ(0, tm_create_cq(self->c.fd, 3, &cq));
	EXPECT_EQ(4, cq.nr);
	EXPECT_EQ(PAGE, cq.size);
	EXPECT_EQ((uint64_t)cq.handle * PAGE, cq.off);
	EXPECT_EQ(4, cq.ring->nr_entries);
	EXPECT_EQ(sizeof(struct dpusim_tm_cqe), cq.ring->entry_size);
	EXPECT_EQ(128, sizeof(struct dpusim_tm_cqe));
	EXPECT_EQ(0, cq.ring->producer);
	EXPECT_EQ(0, cq.ring->consumer);
	EXPECT_EQ(0, cq.ring->flags);
	EXPECT_EQ(0, cq.ring->overruns);
	tm_cq_unmap(&cq);
	ASSERT_EQ(0, tm_create_cq_nomap(self->c.fd, 1, &cq));
	EXPECT_EQ(1, cq.nr);
	ASSERT_EQ(0, tm_create_cq_nomap(self->c.fd, 33, &cq));
	EXPECT_EQ(64, cq.nr);
	EXPECT_EQ(3 * PAGE, cq.size);	/* 256 + 64 * 128 bytes */
	ASSERT_EQ(0, tm_create_cq_nomap(self->c.fd, DPUSIM_TM_MAX_CQE, &cq));
	EXPECT_EQ(DPUSIM_TM_MAX_CQE, cq.nr);
	EXPECT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
				cq.handle));
}

/* A failed copy-out undoes the create: the next one gets the same handle */
TEST_F(tm, create_cq_readonly_struct_undone)
{
	struct dpusim_tm_create_cq *c = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct tm_cq cq;
	uint32_t h;

	ASSERT_NE(MAP_FAILED, c);
	ASSERT_EQ(0, tm_create_cq_nomap(self->c.fd, 4, &cq));
	h = cq.handle;
	ASSERT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_CQ, h));
	*c = (struct dpusim_tm_create_cq){ .size = sizeof(*c), .cqe = 4 };
	ASSERT_EQ(0, mprotect(c, PAGE, PROT_READ));
	EXPECT_EQ(EFAULT, tm_call(self->c.fd, DPUSIM_IOCTL_TM_CREATE_CQ, c));
	ASSERT_EQ(0, tm_create_cq_nomap(self->c.fd, 4, &cq));
	EXPECT_EQ(h, cq.handle);
	munmap(c, PAGE);
}

/* --------------------------------------------------------- DESTROY_CQ */

TEST_F(tm, destroy_cq_unknown)
{
	EXPECT_EQ(ENOENT, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_CQ, 0));
	EXPECT_EQ(ENOENT, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
				     4242));
	EXPECT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
				self->c.spare_cq));
	EXPECT_EQ(ENOENT, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
				     self->c.spare_cq));
}

TEST_F(tm, destroy_cq_used_by_srq)
{
	int fd = self->c.fd;

	EXPECT_EQ(EBUSY, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
				    self->c.scq.handle));
	ASSERT_EQ(0, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, self->c.srq));
	EXPECT_EQ(EBUSY, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
				    self->c.scq.handle));
	ASSERT_EQ(0, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_SRQ,
				self->c.spare_srq));
	EXPECT_EQ(0, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
				self->c.scq.handle));
}

TEST_F(tm, destroy_cq_used_by_qp)
{
	int fd = self->c.fd;

	EXPECT_EQ(EBUSY, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
				    self->c.qcq.handle));
	ASSERT_EQ(0, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_QP, self->c.qp));
	EXPECT_EQ(EBUSY, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
				    self->c.qcq.handle));
	ASSERT_EQ(0, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_QP,
				self->c.spare_qp));
	EXPECT_EQ(0, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
				self->c.qcq.handle));
}

/* --------------------------------------------------------- CREATE_SRQ */

static int srq_with(int fd, uint32_t cq, uint32_t tags, uint32_t ops,
		    uint32_t wr, uint32_t sge)
{
	return tm_create_srq(fd, cq, tags, ops, wr, sge, NULL, NULL);
}

TEST_F(tm, create_srq_unknown_cq)
{
	int fd = self->c.fd;

	EXPECT_EQ(ENOENT, srq_with(fd, 0, 4, 4, 4, 1));
	EXPECT_EQ(ENOENT, srq_with(fd, 4242, 4, 4, 4, 1));
	ASSERT_EQ(0, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_CQ, self->c.spare_cq));
	EXPECT_EQ(ENOENT, srq_with(fd, self->c.spare_cq, 4, 4, 4, 1));
}

TEST_F(tm, create_srq_max_num_tags_zero)
{
	EXPECT_EQ(EINVAL, srq_with(self->c.fd, self->c.scq.handle, 0, 4, 4, 1));
}

TEST_F(tm, create_srq_max_num_tags_over)
{
	int cq = self->c.scq.handle;

	EXPECT_EQ(E2BIG, srq_with(self->c.fd, cq, DPUSIM_TM_MAX_NUM_TAGS + 1,
				  4, 4, 1));
	EXPECT_EQ(0, srq_with(self->c.fd, cq, DPUSIM_TM_MAX_NUM_TAGS, 4, 4, 1));
}

TEST_F(tm, create_srq_max_ops_zero)
{
	EXPECT_EQ(EINVAL, srq_with(self->c.fd, self->c.scq.handle, 4, 0, 4, 1));
}

TEST_F(tm, create_srq_max_ops_over)
{
	int cq = self->c.scq.handle;

	EXPECT_EQ(E2BIG, srq_with(self->c.fd, cq, 4, DPUSIM_TM_MAX_OPS + 1,
				  4, 1));
	EXPECT_EQ(0, srq_with(self->c.fd, cq, 4, DPUSIM_TM_MAX_OPS, 4, 1));
}

TEST_F(tm, create_srq_max_wr_zero)
{
	EXPECT_EQ(EINVAL, srq_with(self->c.fd, self->c.scq.handle, 4, 4, 0, 1));
}

TEST_F(tm, create_srq_max_wr_over)
{
	int cq = self->c.scq.handle;

	EXPECT_EQ(E2BIG, srq_with(self->c.fd, cq, 4, 4,
				  DPUSIM_TM_MAX_SRQ_WR + 1, 1));
	EXPECT_EQ(0, srq_with(self->c.fd, cq, 4, 4, DPUSIM_TM_MAX_SRQ_WR, 1));
}

TEST_F(tm, create_srq_max_sge_zero)
{
	EXPECT_EQ(EINVAL, srq_with(self->c.fd, self->c.scq.handle, 4, 4, 4, 0));
}

TEST_F(tm, create_srq_max_sge_over)
{
	int cq = self->c.scq.handle;

	EXPECT_EQ(E2BIG, srq_with(self->c.fd, cq, 4, 4, 4,
				  DPUSIM_TM_MAX_SGE + 1));
	EXPECT_EQ(0, srq_with(self->c.fd, cq, 4, 4, 4, DPUSIM_TM_MAX_SGE));
}

TEST_F(tm, create_srq_readonly_struct_undone)
{
	struct dpusim_tm_create_srq *s = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
					      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t h, h2;

	ASSERT_NE(MAP_FAILED, s);
	ASSERT_EQ(0, tm_create_srq(self->c.fd, self->c.scq.handle, 1, 1, 1, 1,
				   &h, NULL));
	ASSERT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, h));
	*s = (struct dpusim_tm_create_srq){
		.size = sizeof(*s), .cq_handle = self->c.scq.handle,
		.max_num_tags = 1, .max_ops = 1, .max_wr = 1, .max_sge = 1,
	};
	ASSERT_EQ(0, mprotect(s, PAGE, PROT_READ));
	EXPECT_EQ(EFAULT, tm_call(self->c.fd, DPUSIM_IOCTL_TM_CREATE_SRQ, s));
	ASSERT_EQ(0, tm_create_srq(self->c.fd, self->c.scq.handle, 1, 1, 1, 1,
				   &h2, NULL));
	EXPECT_EQ(h, h2);
	munmap(s, PAGE);
}

/* -------------------------------------------------------- DESTROY_SRQ */

TEST_F(tm, destroy_srq_unknown)
{
	int fd = self->c.fd;

	EXPECT_EQ(ENOENT, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, 0));
	EXPECT_EQ(ENOENT, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, 4242));
	EXPECT_EQ(0, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_SRQ,
				self->c.spare_srq));
	EXPECT_EQ(ENOENT, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_SRQ,
				     self->c.spare_srq));
}

/* ---------------------------------------------------------- CREATE_QP */

TEST_F(tm, create_qp_unknown_cq)
{
	int fd = self->c.fd;

	EXPECT_EQ(ENOENT, tm_create_qp(fd, 0, 1, NULL, NULL));
	EXPECT_EQ(ENOENT, tm_create_qp(fd, 4242, 1, NULL, NULL));
	ASSERT_EQ(0, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_CQ, self->c.spare_cq));
	EXPECT_EQ(ENOENT, tm_create_qp(fd, self->c.spare_cq, 1, NULL, NULL));
}

TEST_F(tm, create_qp_max_sge_zero)
{
	EXPECT_EQ(EINVAL, tm_create_qp(self->c.fd, self->c.qcq.handle, 0, NULL,
				       NULL));
}

TEST_F(tm, create_qp_max_sge_over)
{
	int cq = self->c.qcq.handle;

	EXPECT_EQ(E2BIG, tm_create_qp(self->c.fd, cq, DPUSIM_TM_MAX_SGE + 1,
				      NULL, NULL));
	EXPECT_EQ(E2BIG, tm_create_qp(self->c.fd, cq, UINT32_MAX, NULL, NULL));
	EXPECT_EQ(0, tm_create_qp(self->c.fd, cq, DPUSIM_TM_MAX_SGE, NULL,
				  NULL));
}

TEST_F(tm, create_qp_readonly_struct_undone)
{
	struct dpusim_tm_create_qp *q = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t h, h2;

	ASSERT_NE(MAP_FAILED, q);
	ASSERT_EQ(0, tm_create_qp(self->c.fd, self->c.qcq.handle, 1, &h, NULL));
	ASSERT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_QP, h));
	*q = (struct dpusim_tm_create_qp){
		.size = sizeof(*q), .cq_handle = self->c.qcq.handle,
		.max_sge = 1,
	};
	ASSERT_EQ(0, mprotect(q, PAGE, PROT_READ));
	EXPECT_EQ(EFAULT, tm_call(self->c.fd, DPUSIM_IOCTL_TM_CREATE_QP, q));
	ASSERT_EQ(0, tm_create_qp(self->c.fd, self->c.qcq.handle, 1, &h2, NULL));
	EXPECT_EQ(h, h2);
	munmap(q, PAGE);
}

/* --------------------------------------------------------- DESTROY_QP */

TEST_F(tm, destroy_qp_unknown)
{
	int fd = self->c.fd;

	EXPECT_EQ(ENOENT, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_QP, 0));
	EXPECT_EQ(ENOENT, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_QP, 4242));
	EXPECT_EQ(0, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_QP,
				self->c.spare_qp));
	EXPECT_EQ(ENOENT, tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_QP,
				     self->c.spare_qp));
}

/* Destroying a connected QP: its SRQ's CQ gets a flush completion */
TEST_F(tm, destroy_qp_flushes_srq)
{
	struct dpusim_tm_cqe e;

	ASSERT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_QP,
				self->c.qp));
	ASSERT_EQ(1, tm_cq_poll(&self->c.scq, &e, 1));
	EXPECT_EQ(DPUSIM_TM_WC_RECV, e.opcode);
	EXPECT_EQ(DPUSIM_TM_WC_WR_FLUSH_ERR, e.status);
	EXPECT_EQ(self->c.srqn, e.qp_num);
	EXPECT_EQ(self->c.qpn, e.src_qp);
}

/* ------------------------------------------------------------ CONNECT */

TEST_F(tm, connect_twice)
{
	EXPECT_EQ(EISCONN, tm_connect(self->c.fd, self->c.qp, self->c.srqn));
	EXPECT_EQ(0, tm_connect(self->c.fd, self->c.spare_qp, self->c.srqn));
	EXPECT_EQ(EISCONN, tm_connect(self->c.fd, self->c.spare_qp,
				      self->c.srqn));
}

TEST_F(tm, connect_unknown_srq)
{
	uint32_t srqn, h;

	EXPECT_EQ(ENOENT, tm_connect(self->c.fd, self->c.spare_qp, 0));
	EXPECT_EQ(ENOENT, tm_connect(self->c.fd, self->c.spare_qp, 0x7ffffff0));
	/* a destroyed SRQ's number */
	ASSERT_EQ(0, tm_create_srq(self->c.fd, self->c.scq.handle, 1, 1, 1, 1,
				   &h, &srqn));
	ASSERT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, h));
	EXPECT_EQ(ENOENT, tm_connect(self->c.fd, self->c.spare_qp, srqn));
	/* the QP is still unconnected */
	EXPECT_EQ(0, tm_connect(self->c.fd, self->c.spare_qp, self->c.srqn));
}

TEST_F(tm, connect_unknown_qp)
{
	EXPECT_EQ(ENOENT, tm_connect(self->c.fd, 0, self->c.srqn));
	EXPECT_EQ(ENOENT, tm_connect(self->c.fd, 4242, self->c.srqn));
}

/* A process of another user (nobody, /dev/dpusim/tm is 0666): EACCES */
TEST_F(tm, connect_other_user)
{
	uint32_t srqn = self->c.srqn;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct tm_cq cq;
		uint32_t qp;
		int fd;

		if (setresuid(65534, 65534, 65534))
			_exit(10);
		fd = tm_open();
		if (fd < 0)
			_exit(11);
		if (tm_create_cq_nomap(fd, 4, &cq))
			_exit(12);
		if (tm_create_qp(fd, cq.handle, 1, &qp, NULL))
			_exit(13);
		if (tm_connect(fd, qp, srqn) != EACCES)
			_exit(14);
		/* still unconnected: a send says so */
		if (send_unexp(fd, qp) != ENOTCONN)
			_exit(15);
		_exit(0);
	}
	EXPECT_EQ(0, child_exit_status(pid));
}

/* ---------------------------------------------------------- POST_SEND */

TEST_F(tm, send_unconnected)
{
	uint32_t done = GARBAGE;

	EXPECT_EQ(ENOTCONN, send_op(self->c.fd, self->c.spare_qp,
				    DPUSIM_TM_TMH_EAGER, 32, &done));
	EXPECT_EQ(0, done);
}

TEST_F(tm, send_message_under_16_bytes)
{
	EXPECT_EQ(EINVAL, send_op(self->c.fd, self->c.qp, DPUSIM_TM_TMH_EAGER,
				  15, NULL));
	EXPECT_EQ(EINVAL, send_op(self->c.fd, self->c.qp, DPUSIM_TM_TMH_NO_TAG,
				  1, NULL));
	EXPECT_EQ(0, send_op(self->c.fd, self->c.qp, DPUSIM_TM_TMH_EAGER, 16,
			     NULL));
}

TEST_F(tm, send_tmh_opcode_4)
{
	long long msgs = sysfs_tm_attr("messages");

	EXPECT_EQ(EINVAL, send_op(self->c.fd, self->c.qp, 4, 32, NULL));
	EXPECT_EQ(EINVAL, send_op(self->c.fd, self->c.qp, 0xff, 32, NULL));
	EXPECT_EQ(msgs, sysfs_tm_attr("messages"));
}

TEST_F(tm, send_rndv_under_32_bytes)
{
	EXPECT_EQ(EINVAL, send_op(self->c.fd, self->c.qp, DPUSIM_TM_TMH_RNDV,
				  31, NULL));
	EXPECT_EQ(EINVAL, send_op(self->c.fd, self->c.qp, DPUSIM_TM_TMH_RNDV,
				  16, NULL));
}

TEST_F(tm, send_rndv_over_64_bytes)
{
	EXPECT_EQ(EINVAL, send_op(self->c.fd, self->c.qp, DPUSIM_TM_TMH_RNDV,
				  DPUSIM_TM_MAX_RNDV_HDR_SIZE + 1, NULL));
	EXPECT_EQ(EINVAL, send_op(self->c.fd, self->c.qp, DPUSIM_TM_TMH_RNDV,
				  256, NULL));
}

/* INLINE over DPUSIM_TM_MAX_INLINE in one sge or summed over two */
TEST_F(tm, send_inline_over_256)
{
	uint8_t msg[300];
	struct dpusim_tm_sge sge[2] = {
		{ (uintptr_t)msg, 200, 0 }, { (uintptr_t)msg + 200, 57, 0 },
	};
	struct dpusim_tm_send_wr wr = {
		.opcode = DPUSIM_TM_WR_SEND, .flags = DPUSIM_TM_SEND_INLINE,
		.sg_list = (uintptr_t)sge, .num_sge = 2,
	};
	uint32_t done = GARBAGE;

	memset(msg, 0, sizeof(msg));
	tm_tmh(msg, DPUSIM_TM_TMH_EAGER, 1, NO_TAG_MATCH);
	EXPECT_EQ(E2BIG, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SEND, 0,
				 self->c.qp, 0, &wr, 1, &done));
	EXPECT_EQ(0, done);
	EXPECT_EQ(E2BIG, send_op(self->c.fd, self->c.qp, DPUSIM_TM_TMH_EAGER,
				 DPUSIM_TM_MAX_INLINE + 1, NULL));
	sge[1].length = 56;	/* 256 exactly */
	EXPECT_EQ(0, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SEND, 0,
			     self->c.qp, 0, &wr, 1, &done));
}

/* An inline sge with a bad address: EFAULT */
TEST_F(tm, send_inline_bad_address)
{
	struct dpusim_tm_sge sge = { 8, 32, 0 };
	struct dpusim_tm_send_wr wr = {
		.opcode = DPUSIM_TM_WR_SEND, .flags = DPUSIM_TM_SEND_INLINE,
		.sg_list = (uintptr_t)&sge, .num_sge = 1,
	};

	EXPECT_EQ(EFAULT, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SEND, 0,
				  self->c.qp, 0, &wr, 1, NULL));
	wr.sg_list = 8;
	EXPECT_EQ(EFAULT, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SEND, 0,
				  self->c.qp, 0, &wr, 1, NULL));
}

TEST_F(tm, send_rdma_read_on_qp)
{
	struct dpusim_tm_sge sge = {
		(uintptr_t)self->c.buf + TAG_OFF, 32, self->c.lkey };
	struct dpusim_tm_send_wr wr = {
		.opcode = DPUSIM_TM_WR_RDMA_READ, .sg_list = (uintptr_t)&sge,
		.num_sge = 1, .remote_addr = (uintptr_t)self->c.buf,
		.rkey = self->c.lkey,
	};
	uint32_t done = GARBAGE;

	EXPECT_EQ(EINVAL, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SEND, 0,
				  self->c.qp, 0, &wr, 1, &done));
	EXPECT_EQ(0, done);
}

TEST_F(tm, send_unknown_wr_opcode_and_flags)
{
	struct dpusim_tm_send_wr wr;
	uint32_t op[] = { 0, 1, 3, 5, UINT32_MAX };
	unsigned int i;

	for (i = 0; i < 5; i++) {
		build(K_POST_SEND, &self->c, &(union tm_any){}, false);
		wr = self->c.sw;
		wr.opcode = op[i];
		EXPECT_EQ(EINVAL, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SEND,
					  0, self->c.qp, 0, &wr, 1, NULL));
	}
	wr = self->c.sw;
	wr.flags |= 1U << 0;
	EXPECT_EQ(EINVAL, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SEND, 0,
				  self->c.qp, 0, &wr, 1, NULL));
	wr.flags = DPUSIM_TM_SEND_INLINE | (1U << 31);
	EXPECT_EQ(EINVAL, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SEND, 0,
				  self->c.qp, 0, &wr, 1, NULL));
}

TEST_F(tm, send_remote_qpn_without_from_srq)
{
	uint8_t msg[32];

	tm_tmh(msg, DPUSIM_TM_TMH_EAGER, 1, NO_TAG_MATCH);
	EXPECT_EQ(EINVAL, tm_send_inline(self->c.fd, 0, self->c.qp,
					 self->c.qpn, msg, 32, 0, 1));
}

TEST_F(tm, send_from_srq_unconnected_qpn)
{
	uint8_t msg[32];
	struct rx r;

	tm_tmh(msg, DPUSIM_TM_TMH_NO_TAG, 1, 0);
	/* an unconnected QP, none, a QP connected to another SRQ */
	EXPECT_EQ(ENOENT, tm_send_inline(self->c.fd, DPUSIM_TM_POST_FROM_SRQ,
					 self->c.srq, self->c.spare_qpn, msg,
					 32, 0, 1));
	EXPECT_EQ(ENOENT, tm_send_inline(self->c.fd, DPUSIM_TM_POST_FROM_SRQ,
					 self->c.srq, 0, msg, 32, 0, 1));
	ASSERT_EQ(0, rx_make(&self->c, 4, 0, &r));
	EXPECT_EQ(ENOENT, tm_send_inline(self->c.fd, DPUSIM_TM_POST_FROM_SRQ,
					 self->c.srq, r.qpn, msg, 32, 0, 1));
	/* and an unknown SRQ handle */
	EXPECT_EQ(ENOENT, tm_send_inline(self->c.fd, DPUSIM_TM_POST_FROM_SRQ,
					 4242, self->c.qpn, msg, 32, 0, 1));
	EXPECT_EQ(0, tm_cq_pending(&self->c.qcq));
}

/* FROM_SRQ: 64 bytes land inline on the QP's CQ, 65 are E2BIG */
TEST_F(tm, send_from_srq_over_64_bytes)
{
	uint8_t msg[80];
	struct dpusim_tm_cqe e;

	memset(msg, 0x3c, sizeof(msg));
	tm_tmh(msg, DPUSIM_TM_TMH_NO_TAG, 7, 0);
	EXPECT_EQ(E2BIG, tm_send_inline(self->c.fd, DPUSIM_TM_POST_FROM_SRQ,
					self->c.srq, self->c.qpn, msg,
					DPUSIM_TM_MAX_QP_RECV + 1, 0, 1));
	EXPECT_EQ(0, tm_cq_pending(&self->c.qcq));
	ASSERT_EQ(0, tm_send_inline(self->c.fd, DPUSIM_TM_POST_FROM_SRQ,
				    self->c.srq, self->c.qpn, msg,
				    DPUSIM_TM_MAX_QP_RECV, 0, 1));
	ASSERT_EQ(1, tm_cq_poll(&self->c.qcq, &e, 1));
	EXPECT_EQ(DPUSIM_TM_WC_TM_NO_TAG, e.opcode);
	EXPECT_EQ(DPUSIM_TM_WC_F_INLINE, e.wc_flags);
	EXPECT_EQ(DPUSIM_TM_MAX_QP_RECV, e.byte_len);
	EXPECT_EQ(self->c.qpn, e.qp_num);
	EXPECT_EQ(self->c.srqn, e.src_qp);
	EXPECT_EQ(0, memcmp(e.data, msg, DPUSIM_TM_MAX_QP_RECV));
}

/*
 * An unexpected message with no untagged buffer: EAGAIN, nothing consumed
 * or counted; after a buffer is posted the same send works.
 */
TEST_F(tm, send_unexpected_no_buffer)
{
	long long msgs, unexp;
	struct dpusim_tm_cqe e;
	struct rx r;

	ASSERT_EQ(0, rx_make(&self->c, 4, 0, &r));
	msgs = sysfs_tm_attr("messages");
	unexp = sysfs_tm_attr("unexpected");
	EXPECT_EQ(EAGAIN, send_unexp(self->c.fd, r.qp));
	EXPECT_EQ(EAGAIN, send_op(self->c.fd, r.qp, DPUSIM_TM_TMH_NO_TAG, 16,
				  NULL));
	EXPECT_EQ(msgs, sysfs_tm_attr("messages"));
	EXPECT_EQ(unexp, sysfs_tm_attr("unexpected"));
	EXPECT_EQ(0, tm_cq_pending(&r.cq));
	ASSERT_EQ(0, tm_post_recv(self->c.fd, r.srq, self->c.lkey,
				  self->c.buf + RXB_OFF, 256, 77));
	EXPECT_EQ(0, send_unexp(self->c.fd, r.qp));
	EXPECT_EQ(msgs + 1, sysfs_tm_attr("messages"));
	EXPECT_EQ(unexp + 1, sysfs_tm_attr("unexpected"));
	ASSERT_EQ(1, tm_cq_poll(&r.cq, &e, 1));
	EXPECT_EQ(DPUSIM_TM_WC_RECV, e.opcode);
	EXPECT_EQ(DPUSIM_TM_WC_SUCCESS, e.status);
	EXPECT_EQ(77, e.wr_id);
	EXPECT_EQ(32, e.byte_len);
	EXPECT_EQ(r.srqn, e.qp_num);
	EXPECT_EQ(r.qpn, e.src_qp);
}

/* The peer SRQ destroyed: the QP's CQ gets FLUSH_ERR, sends ECONNRESET */
TEST_F(tm, send_peer_srq_destroyed)
{
	struct dpusim_tm_cqe e;
	uint32_t done = GARBAGE, srqn;

	ASSERT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_SRQ,
				self->c.srq));
	ASSERT_EQ(1, tm_cq_poll(&self->c.qcq, &e, 1));
	EXPECT_EQ(DPUSIM_TM_WC_RECV, e.opcode);
	EXPECT_EQ(DPUSIM_TM_WC_WR_FLUSH_ERR, e.status);
	EXPECT_EQ(self->c.qpn, e.qp_num);
	EXPECT_EQ(self->c.srqn, e.src_qp);
	EXPECT_EQ(ECONNRESET, send_op(self->c.fd, self->c.qp,
				      DPUSIM_TM_TMH_EAGER, 32, &done));
	EXPECT_EQ(0, done);
	/* a QP connects once: not to another SRQ either */
	ASSERT_EQ(0, tm_create_srq(self->c.fd, self->c.scq.handle, 1, 1, 1, 1,
				   NULL, &srqn));
	EXPECT_EQ(EISCONN, tm_connect(self->c.fd, self->c.qp, srqn));
}

/* The peer SRQ's process exits: FLUSH_ERR on the QP's CQ, ECONNRESET */
TEST_F(tm, send_peer_process_gone)
{
	int to_parent[2], to_child[2];
	struct dpusim_tm_cqe e;
	uint32_t srqn = 0, qp, qpn;
	pid_t pid;

	ASSERT_EQ(0, pipe(to_parent));
	ASSERT_EQ(0, pipe(to_child));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct tm_cq cq;
		int fd = tm_open();
		uint32_t srq, n = 0;
		ssize_t w;

		if (fd < 0 || tm_create_cq_nomap(fd, 4, &cq) ||
		    tm_create_srq(fd, cq.handle, 1, 1, 1, 1, &srq, &n))
			n = 0;
		w = write(to_parent[1], &n, sizeof(n));
		(void)w;
		get_byte(to_child[0]);
		_exit(0);
	}
	close(to_parent[1]);
	close(to_child[0]);
	ASSERT_EQ(sizeof(srqn), read(to_parent[0], &srqn, sizeof(srqn)));
	ASSERT_NE(0, srqn);
	ASSERT_EQ(0, tm_create_qp(self->c.fd, self->c.qcq.handle, 1, &qp, &qpn));
	ASSERT_EQ(0, tm_connect(self->c.fd, qp, srqn));
	put_byte(to_child[1], 1);
	ASSERT_EQ(0, child_exit_status(pid));
	ASSERT_EQ(1, tm_cq_poll(&self->c.qcq, &e, 1));
	EXPECT_EQ(DPUSIM_TM_WC_RECV, e.opcode);
	EXPECT_EQ(DPUSIM_TM_WC_WR_FLUSH_ERR, e.status);
	EXPECT_EQ(qpn, e.qp_num);
	EXPECT_EQ(srqn, e.src_qp);
	EXPECT_EQ(ECONNRESET, send_unexp(self->c.fd, qp));
	/* the number is gone with the SRQ */
	EXPECT_EQ(ENOENT, tm_connect(self->c.fd, self->c.spare_qp, srqn));
	close(to_parent[0]);
	close(to_child[1]);
}

/* ------------------------------------------------------- POST_SRQ_OPS */

static struct dpusim_tm_ops_wr add_wr(struct tmctx *c, uint64_t tag,
				      uint32_t flags,
				      struct dpusim_tm_sge *sge)
{
	*sge = (struct dpusim_tm_sge){
		(uintptr_t)c->buf + TAG_OFF, 256, c->lkey };
	return (struct dpusim_tm_ops_wr){
		.wr_id = 500 + tag, .opcode = DPUSIM_TM_WR_TAG_ADD,
		.flags = flags, .recv_wr_id = 600 + tag,
		.sg_list = (uintptr_t)sge, .num_sge = 1, .tag = tag,
		.mask = ~0ULL,
	};
}

static struct dpusim_tm_ops_wr del_wr(uint32_t handle, uint32_t flags)
{
	return (struct dpusim_tm_ops_wr){
		.wr_id = 700, .opcode = DPUSIM_TM_WR_TAG_DEL, .flags = flags,
		.handle = handle,
	};
}

/* max_ops (4) ops in one call work, 5 fail at index 4: ENOMEM */
TEST_F(tm, ops_max_ops_exceeded)
{
	struct dpusim_tm_ops_wr wr[5];
	struct dpusim_tm_sge sge;
	uint32_t done = GARBAGE;
	int i;

	for (i = 0; i < 5; i++)
		wr[i] = (struct dpusim_tm_ops_wr){
			.wr_id = i, .opcode = DPUSIM_TM_WR_TAG_SYNC };
	EXPECT_EQ(ENOMEM, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0,
				  self->c.srq, 0, wr, 5, &done));
	EXPECT_EQ(4, done);
	EXPECT_EQ(0, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0,
			     self->c.srq, 0, wr, 4, &done));
	EXPECT_EQ(4, done);
	/* ADDs: the four first are in, the fifth not */
	for (i = 0; i < 5; i++)
		wr[i] = add_wr(&self->c, i, 0, &sge);
	EXPECT_EQ(ENOMEM, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0,
				  self->c.srq, 0, wr, 5, &done));
	EXPECT_EQ(4, done);
	EXPECT_NE(0, wr[3].handle);
	EXPECT_EQ(0, wr[4].handle);
}

/* max_num_tags (8) entries: the ADD past it fails, nr_done at it */
TEST_F(tm, ops_list_full)
{
	struct dpusim_tm_ops_wr wr[4];
	struct dpusim_tm_sge sge;
	uint32_t done = GARBAGE, h;
	int i;

	for (i = 0; i < 4; i++)
		wr[i] = add_wr(&self->c, i, 0, &sge);
	ASSERT_EQ(0, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0,
			     self->c.srq, 0, wr, 4, &done));
	ASSERT_EQ(0, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0,
			     self->c.srq, 0, wr, 2, &done));
	h = wr[0].handle;
	for (i = 0; i < 4; i++)
		wr[i] = add_wr(&self->c, 10 + i, 0, &sge);
	EXPECT_EQ(ENOMEM, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0,
				  self->c.srq, 0, wr, 4, &done));
	EXPECT_EQ(2, done);
	EXPECT_NE(0, wr[1].handle);
	EXPECT_EQ(0, wr[2].handle);
	EXPECT_EQ(0, wr[3].handle);
	/* a DEL makes room for one */
	wr[0] = del_wr(h, 0);
	wr[1] = add_wr(&self->c, 20, 0, &sge);
	wr[2] = add_wr(&self->c, 21, 0, &sge);
	EXPECT_EQ(ENOMEM, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0,
				  self->c.srq, 0, wr, 3, &done));
	EXPECT_EQ(2, done);
	EXPECT_EQ(0, tm_cq_pending(&self->c.scq));
}

/* The handle is written back to wrs[i].handle; SIGNALED: TM_ADD with it */
TEST_F(tm, ops_add_handle_written_back)
{
	struct dpusim_tm_ops_wr wr[2];
	struct dpusim_tm_sge sge;
	struct dpusim_tm_cqe e[2];
	int i;

	for (i = 0; i < 2; i++) {
		wr[i] = add_wr(&self->c, i, DPUSIM_TM_OPS_SIGNALED, &sge);
		wr[i].handle = GARBAGE;
	}
	ASSERT_EQ(0, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0,
			     self->c.srq, 0, wr, 2, NULL));
	EXPECT_NE(0, wr[0].handle);
	EXPECT_NE(GARBAGE, wr[0].handle);
	EXPECT_NE(wr[0].handle, wr[1].handle);
	ASSERT_EQ(2, tm_cq_poll(&self->c.scq, e, 2));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(DPUSIM_TM_WC_TM_ADD, e[i].opcode);
		EXPECT_EQ(DPUSIM_TM_WC_SUCCESS, e[i].status);
		EXPECT_EQ(wr[i].handle, e[i].handle);
		EXPECT_EQ(wr[i].wr_id, e[i].wr_id);
		EXPECT_EQ(self->c.srqn, e[i].qp_num);
	}
}

/* DEL of a handle never issued: EINVAL, nr_done at it */
TEST_F(tm, ops_del_never_issued)
{
	struct dpusim_tm_ops_wr wr[2];
	struct dpusim_tm_sge sge;
	uint32_t done = GARBAGE;

	wr[0] = add_wr(&self->c, 1, 0, &sge);
	wr[1] = del_wr(0x12345, DPUSIM_TM_OPS_SIGNALED);
	EXPECT_EQ(EINVAL, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0,
				  self->c.srq, 0, wr, 2, &done));
	EXPECT_EQ(1, done);
	EXPECT_NE(0, wr[0].handle);
	wr[0] = del_wr(0, 0);
	EXPECT_EQ(EINVAL, post_op(self->c.fd, self->c.srq, wr, &done));
	EXPECT_EQ(0, done);
	EXPECT_EQ(0, tm_cq_pending(&self->c.scq));
}

/* DEL of a live entry: removed; a completion only if SIGNALED */
TEST_F(tm, ops_del_live)
{
	struct dpusim_tm_sge sge;
	struct dpusim_tm_ops_wr wr = add_wr(&self->c, 1, 0, &sge);
	struct dpusim_tm_cqe e;
	uint32_t h;

	ASSERT_EQ(0, post_op(self->c.fd, self->c.srq, &wr, NULL));
	wr = del_wr(wr.handle, 0);
	EXPECT_EQ(0, post_op(self->c.fd, self->c.srq, &wr, NULL));
	EXPECT_EQ(0, tm_cq_pending(&self->c.scq));
	wr = add_wr(&self->c, 1, 0, &sge);
	ASSERT_EQ(0, post_op(self->c.fd, self->c.srq, &wr, NULL));
	h = wr.handle;
	wr = del_wr(h, DPUSIM_TM_OPS_SIGNALED);
	EXPECT_EQ(0, post_op(self->c.fd, self->c.srq, &wr, NULL));
	ASSERT_EQ(1, tm_cq_poll(&self->c.scq, &e, 1));
	EXPECT_EQ(DPUSIM_TM_WC_TM_DEL, e.opcode);
	EXPECT_EQ(DPUSIM_TM_WC_SUCCESS, e.status);
	EXPECT_EQ(h, e.handle);
	EXPECT_EQ(700, e.wr_id);
	/* the entry is gone: the tag goes unexpected */
	EXPECT_EQ(0, tm_send_eager(self->c.fd, self->c.qp, 1, 0, "x", 1, 0));
	ASSERT_EQ(1, tm_cq_poll(&self->c.scq, &e, 1));
	EXPECT_EQ(DPUSIM_TM_WC_RECV, e.opcode);
}

/*
 * DEL of a consumed entry: success, and a TM_DEL completion with status
 * DTM_WC_TM_ERR even without SIGNALED.
 */
TEST_F(tm, ops_del_consumed)
{
	struct dpusim_tm_sge sge;
	struct dpusim_tm_ops_wr wr = add_wr(&self->c, 5, 0, &sge);
	struct dpusim_tm_cqe e;
	uint32_t h, done = GARBAGE;

	ASSERT_EQ(0, post_op(self->c.fd, self->c.srq, &wr, NULL));
	h = wr.handle;
	ASSERT_EQ(0, tm_send_eager(self->c.fd, self->c.qp, 5, 0, "abc", 3, 0));
	ASSERT_EQ(1, tm_cq_poll(&self->c.scq, &e, 1));
	EXPECT_EQ(DPUSIM_TM_WC_TM_RECV, e.opcode);
	EXPECT_EQ(h, e.handle);
	wr = del_wr(h, 0);
	EXPECT_EQ(0, post_op(self->c.fd, self->c.srq, &wr, &done));
	EXPECT_EQ(1, done);
	ASSERT_EQ(1, tm_cq_poll(&self->c.scq, &e, 1));
	EXPECT_EQ(DPUSIM_TM_WC_TM_DEL, e.opcode);
	EXPECT_EQ(DPUSIM_TM_WC_TM_ERR, e.status);
	EXPECT_EQ(h, e.handle);
	EXPECT_EQ(700, e.wr_id);
	EXPECT_EQ(self->c.srqn, e.qp_num);
}

/*
 * tm-spec.md: after the TM_ERR completion "the handle is free", and an
 * already released handle is unknown: EINVAL with nr_done at it.  Same
 * for a handle whose entry a DEL removed.
 */
/*
 * A handle whose entry is gone (deleted, or consumed) completes every DEL
 * with TM_ERR: handles are cyclic, never issued twice, so the kernel can
 * tell "issued, gone" from "never issued" (EINVAL) forever.
 */
TEST_F(tm, ops_del_released_handle)
{
	struct dpusim_tm_sge sge;
	struct dpusim_tm_ops_wr wr = add_wr(&self->c, 5, 0, &sge);
	uint32_t h, done = GARBAGE;
	int i;

	ASSERT_EQ(0, post_op(self->c.fd, self->c.srq, &wr, NULL));
	h = wr.handle;
	wr = del_wr(h, 0);
	ASSERT_EQ(0, post_op(self->c.fd, self->c.srq, &wr, NULL));
	tm_cq_drain(&self->c.scq);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, post_op(self->c.fd, self->c.srq, &wr, &done));
		EXPECT_EQ(1, done);
		EXPECT_EQ(1, tm_cq_pending(&self->c.scq));
		tm_cq_drain(&self->c.scq);
	}

	wr = add_wr(&self->c, 6, 0, &sge);
	ASSERT_EQ(0, post_op(self->c.fd, self->c.srq, &wr, NULL));
	h = wr.handle;
	ASSERT_EQ(0, tm_send_eager(self->c.fd, self->c.qp, 6, 0, "abc", 3, 0));
	wr = del_wr(h, 0);
	ASSERT_EQ(0, post_op(self->c.fd, self->c.srq, &wr, NULL));
	tm_cq_drain(&self->c.scq);
	EXPECT_EQ(0, post_op(self->c.fd, self->c.srq, &wr, &done));
	EXPECT_EQ(1, tm_cq_pending(&self->c.scq));
	/* a handle above the last one issued was never issued */
	wr = del_wr(h + 1000, 0);
	EXPECT_EQ(EINVAL, post_op(self->c.fd, self->c.srq, &wr, &done));
	EXPECT_EQ(0, done);
}

TEST_F(tm, ops_opcode_3)
{
	struct dpusim_tm_ops_wr wr = { .opcode = 3 };
	uint32_t done = GARBAGE;

	EXPECT_EQ(EINVAL, post_op(self->c.fd, self->c.srq, &wr, &done));
	EXPECT_EQ(0, done);
	wr.opcode = UINT32_MAX;
	EXPECT_EQ(EINVAL, post_op(self->c.fd, self->c.srq, &wr, &done));
}

TEST_F(tm, ops_unknown_flag)
{
	struct dpusim_tm_ops_wr wr = {
		.opcode = DPUSIM_TM_WR_TAG_SYNC, .flags = 1U << 2,
	};
	uint32_t done = GARBAGE;

	EXPECT_EQ(EINVAL, post_op(self->c.fd, self->c.srq, &wr, &done));
	EXPECT_EQ(0, done);
	wr.flags = 1U << 31;
	EXPECT_EQ(EINVAL, post_op(self->c.fd, self->c.srq, &wr, &done));
	EXPECT_EQ(0, tm_cq_pending(&self->c.scq));
}

/* ------------------------------------------------------ POST_SRQ_RECV */

/* 2 posted of max_wr 4: 3 more fail at the third, ENOMEM, nr_done 2 */
TEST_F(tm, recv_beyond_max_wr)
{
	struct dpusim_tm_sge sge = {
		(uintptr_t)self->c.buf + TAG_OFF, 64, self->c.lkey };
	struct dpusim_tm_recv_wr wr[3];
	uint32_t done = GARBAGE;
	int i;

	for (i = 0; i < 3; i++)
		wr[i] = (struct dpusim_tm_recv_wr){
			.wr_id = i, .sg_list = (uintptr_t)&sge, .num_sge = 1 };
	EXPECT_EQ(ENOMEM, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SRQ_RECV, 0,
				  self->c.srq, 0, wr, 3, &done));
	EXPECT_EQ(2, done);
	/* a consumed buffer makes room for one */
	ASSERT_EQ(0, send_unexp(self->c.fd, self->c.qp));
	EXPECT_EQ(0, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SRQ_RECV, 0,
			     self->c.srq, 0, wr, 1, &done));
	EXPECT_EQ(ENOMEM, tm_post(self->c.fd, DPUSIM_IOCTL_TM_POST_SRQ_RECV, 0,
				  self->c.srq, 0, wr, 1, &done));
	EXPECT_EQ(0, done);
}

/* ------------------------------------------------------------ mmap */

TEST_F(tm, mmap_wrong_size)
{
	struct tm_cq cq;
	void *p;

	ASSERT_EQ(0, tm_create_cq_nomap(self->c.fd, 64, &cq));
	ASSERT_EQ(3 * PAGE, cq.size);
	p = mmap(NULL, cq.size - PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->c.fd, cq.off);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, cq.size + PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->c.fd, cq.off);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, tm_cq_map(self->c.fd, &cq));
}

TEST_F(tm, mmap_wrong_offset)
{
	struct tm_cq cq = self->c.scq;
	void *p;

	cq.ring = NULL;
	cq.off = 0;			/* handle 0 never exists */
	EXPECT_EQ(EINVAL, tm_cq_map(self->c.fd, &cq));
	cq.off = 200 * PAGE;		/* no such CQ */
	EXPECT_EQ(EINVAL, tm_cq_map(self->c.fd, &cq));
	cq.off = (uint64_t)self->c.spare_cq * PAGE;	/* destroyed */
	ASSERT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
				self->c.spare_cq));
	EXPECT_EQ(EINVAL, tm_cq_map(self->c.fd, &cq));
	/* a page offset past 32 bits */
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, self->c.fd,
		 (off_t)1 << 44);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(tm, mmap_private)
{
	void *p = mmap(NULL, self->c.scq.size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE, self->c.fd, self->c.scq.off);

	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, self->c.scq.size, PROT_READ, MAP_PRIVATE, self->c.fd,
		 self->c.scq.off);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
}

/* The ring stays mapped and readable after DESTROY_CQ and close() */
TEST_F(tm, mmap_survives_destroy_and_close)
{
	struct dpusim_tm_sge sge;
	struct dpusim_tm_ops_wr wr;
	struct tm_cq cq, cq2;
	uint32_t srq;

	ASSERT_EQ(0, tm_create_cq(self->c.fd, 4, &cq));
	cq2 = cq;
	ASSERT_EQ(0, tm_cq_map(self->c.fd, &cq2));	/* a second mapping */
	ASSERT_EQ(0, tm_create_srq(self->c.fd, cq.handle, 4, 4, 4, 1, &srq,
				   NULL));
	wr = add_wr(&self->c, 1, DPUSIM_TM_OPS_SIGNALED, &sge);
	ASSERT_EQ(0, post_op(self->c.fd, srq, &wr, NULL));
	ASSERT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, srq));
	ASSERT_EQ(0, tm_destroy(self->c.fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
				cq.handle));
	EXPECT_EQ(1, cq.ring->producer);
	EXPECT_EQ(DPUSIM_TM_WC_TM_ADD, tm_cqe_at(&cq, 0)->opcode);
	EXPECT_EQ(wr.handle, tm_cqe_at(&cq, 0)->handle);
	tm_cq_unmap(&cq2);
	close(self->c.fd);
	self->c.fd = -1;
	EXPECT_EQ(1, cq.ring->producer);
	EXPECT_EQ(4, cq.ring->nr_entries);
	EXPECT_EQ(wr.handle, tm_cqe_at(&cq, 0)->handle);
	cq.ring->consumer = 1;		/* still writable */
	EXPECT_EQ(1, cq.ring->consumer);
	tm_cq_unmap(&cq);
}

/* ------------------------------------------------------------ poll */

TEST_F(tm, poll_nothing_pending)
{
	struct pollfd p = { .fd = self->c.fd, .events = POLLIN };

	EXPECT_EQ(0, poll(&p, 1, 0));
	EXPECT_EQ(0, p.revents);
}

TEST_F(tm, poll_completion_pending)
{
	struct pollfd p = { .fd = self->c.fd, .events = POLLIN };
	uint8_t msg[16];

	ASSERT_EQ(0, send_unexp(self->c.fd, self->c.qp));
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_TRUE(p.revents & POLLIN);
	EXPECT_FALSE(p.revents & POLLERR);
	/* still pending until consumed: a long timeout returns at once */
	EXPECT_EQ(1, poll(&p, 1, 10000));
	tm_cq_drain(&self->c.scq);
	p.revents = 0;
	EXPECT_EQ(0, poll(&p, 1, 0));
	/* a completion on the QP's CQ (from the SRQ) too */
	tm_tmh(msg, DPUSIM_TM_TMH_NO_TAG, 0, 0);
	ASSERT_EQ(0, tm_send_inline(self->c.fd, DPUSIM_TM_POST_FROM_SRQ,
				    self->c.srq, self->c.qpn, msg, 16, 0, 0));
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_TRUE(p.revents & POLLIN);
	tm_cq_drain(&self->c.qcq);
	EXPECT_EQ(0, poll(&p, 1, 0));
}

/* ------------------------------------------------------- CQ overrun */

/*
 * SRQ CQs of 1..4 entries: the completion that does not fit refuses its
 * send (EOVERFLOW to a sender of the same context), marks the ring, and
 * consumed nothing; once drained the same send works.
 */
TEST_F(tm, overrun_same_context)
{
	uint32_t cqe;

	for (cqe = 1; cqe <= 4; cqe++) {
		long long msgs, ovr = sysfs_tm_attr("overruns");
		struct rx r;
		uint32_t i;

		ASSERT_EQ(0, rx_make(&self->c, cqe, 16, &r));
		for (i = 0; i < r.cq.nr; i++)
			ASSERT_EQ(0, send_unexp(self->c.fd, r.qp));
		msgs = sysfs_tm_attr("messages");
		EXPECT_EQ(EOVERFLOW, send_unexp(self->c.fd, r.qp))
			TH_LOG("cqe %u", cqe);
		EXPECT_EQ(DPUSIM_TM_CQ_F_OVERRUN, r.cq.ring->flags);
		EXPECT_EQ(1, r.cq.ring->overruns);
		EXPECT_EQ(r.cq.nr, r.cq.ring->producer);
		EXPECT_EQ(ovr + 1, sysfs_tm_attr("overruns"));
		EXPECT_EQ(msgs, sysfs_tm_attr("messages"));
		/* reported in that call: the next one works */
		EXPECT_EQ(0, query(self->c.fd));
		tm_cq_drain(&r.cq);
		EXPECT_EQ(0, send_unexp(self->c.fd, r.qp));
		/* the refused message consumed no buffer: wr_id in order */
		EXPECT_EQ(1000 + r.cq.nr,
			  tm_cqe_at(&r.cq, r.cq.nr)->wr_id);
		rx_destroy(&self->c, &r);
	}
}

/*
 * The SRQ in this process, the sender in a child: the sender gets
 * EREMOTEIO, this context's next ioctl EOVERFLOW exactly once.
 */
TEST_F(tm, overrun_other_process)
{
	int to_parent[2], to_child[2];
	struct pollfd p = { .fd = self->c.fd, .events = POLLIN };
	struct dpusim_tm_cqe e;
	uint32_t child_qpn = 0;
	struct rx r;
	pid_t pid;
	int i;

	ASSERT_EQ(0, rx_make(&self->c, 2, 16, &r));
	ASSERT_EQ(0, pipe(to_parent));
	ASSERT_EQ(0, pipe(to_child));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint32_t qp, qpn;
		int fd, err;

		err = remote_qp(r.srqn, &fd, &qp, &qpn);
		if (!err)
			err = send_unexp(fd, qp) || send_unexp(fd, qp) ? 1 : 0;
		if (!err)
			err = send_unexp(fd, qp) == EREMOTEIO ? 0 : 2;
		if (!err)
			err = query(fd) ? 3 : 0;	/* not marked */
		{
			ssize_t w = write(to_parent[1], &qpn, sizeof(qpn));

			(void)w;
		}
		put_byte(to_parent[1], err);
		get_byte(to_child[0]);		/* parent drained the ring */
		_exit(0);			/* QP gone: a flush completion */
	}
	close(to_parent[1]);
	close(to_child[0]);
	ASSERT_EQ(sizeof(child_qpn), read(to_parent[0], &child_qpn,
					  sizeof(child_qpn)));
	EXPECT_EQ(0, get_byte(to_parent[0]));
	EXPECT_EQ(2, r.cq.ring->producer);
	EXPECT_EQ(DPUSIM_TM_CQ_F_OVERRUN, r.cq.ring->flags);
	EXPECT_EQ(1, r.cq.ring->overruns);
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_TRUE(p.revents & POLLIN);
	EXPECT_TRUE(p.revents & POLLERR);
	EXPECT_EQ(EOVERFLOW, query(self->c.fd));
	EXPECT_EQ(0, query(self->c.fd));
	EXPECT_EQ(0, query(self->c.fd));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, tm_cq_poll(&r.cq, &e, 1));
		EXPECT_EQ(DPUSIM_TM_WC_RECV, e.opcode);
		EXPECT_EQ(1000 + i, e.wr_id);
		EXPECT_EQ(child_qpn, e.src_qp);
	}
	put_byte(to_child[1], 1);
	EXPECT_EQ(0, child_exit_status(pid));
	ASSERT_EQ(1, tm_cq_poll(&r.cq, &e, 1));
	EXPECT_EQ(DPUSIM_TM_WC_RECV, e.opcode);
	EXPECT_EQ(DPUSIM_TM_WC_WR_FLUSH_ERR, e.status);
	EXPECT_EQ(child_qpn, e.src_qp);
	EXPECT_EQ(0, query(self->c.fd));
	close(to_parent[0]);
	close(to_child[1]);
}

/* Fill the ring header and entries with nonsense; keep the producer */
static uint32_t scribble(struct tm_cq *cq)
{
	uint32_t prod = __atomic_load_n(&cq->ring->producer, __ATOMIC_ACQUIRE);

	memset((uint8_t *)cq->ring + DPUSIM_TM_CQ_RING_ENTRIES, 0xff,
	       cq->nr * TM_CQE_SIZE);
	cq->ring->producer = 0xdeadbeef;
	cq->ring->nr_entries = 3;
	cq->ring->entry_size = 0;
	cq->ring->flags = 0x55;
	cq->ring->overruns = 0;
	memset(cq->ring->__pad0, 0xff, sizeof(cq->ring->__pad0));
	memset(cq->ring->__pad2, 0xff, sizeof(cq->ring->__pad2));
	return prod;
}

/* Every entry but index @idx (none if @idx < 0) holds the 0xff scribble */
static bool only_entry_written(struct tm_cq *cq, int64_t idx)
{
	uint32_t i, j;

	for (i = 0; i < cq->nr; i++) {
		const uint8_t *b = (const uint8_t *)tm_cqe_at(cq, i);

		if (idx >= 0 && i == ((uint32_t)idx & (cq->nr - 1)))
			continue;
		for (j = 0; j < TM_CQE_SIZE; j++)
			if (b[j] != 0xff)
				return false;
	}
	return true;
}

/*
 * A process scribbling over its own ring: consumer ahead of the
 * producer, far behind, garbage header: the ring counts as full (sends
 * EOVERFLOW), nothing crashes; a sane consumer again and entries land at
 * the kernel's producer index.
 */
TEST_F(tm, ring_scribble)
{
	long long msgs;
	uint32_t prod;
	struct rx r;

	ASSERT_EQ(0, rx_make(&self->c, 4, 16, &r));
	ASSERT_EQ(0, send_unexp(self->c.fd, r.qp));
	ASSERT_EQ(0, send_unexp(self->c.fd, r.qp));
	tm_cq_drain(&r.cq);
	prod = scribble(&r.cq);
	ASSERT_EQ(2, prod);
	msgs = sysfs_tm_attr("messages");

	r.cq.ring->consumer = prod + 1;			/* ahead */
	EXPECT_EQ(EOVERFLOW, send_unexp(self->c.fd, r.qp));
	EXPECT_EQ(DPUSIM_TM_CQ_F_OVERRUN, r.cq.ring->flags);
	EXPECT_EQ(1, r.cq.ring->overruns);
	r.cq.ring->consumer = prod + 0x80000000;	/* far ahead */
	EXPECT_EQ(EOVERFLOW, send_unexp(self->c.fd, r.qp));
	r.cq.ring->consumer = prod - 5;			/* > nr behind */
	EXPECT_EQ(EOVERFLOW, send_unexp(self->c.fd, r.qp));
	r.cq.ring->consumer = prod - 4;			/* exactly full */
	EXPECT_EQ(EOVERFLOW, send_unexp(self->c.fd, r.qp));
	EXPECT_EQ(4, r.cq.ring->overruns);
	EXPECT_EQ(msgs, sysfs_tm_attr("messages"));
	EXPECT_EQ(0, query(self->c.fd));
	EXPECT_TRUE(only_entry_written(&r.cq, -1));

	r.cq.ring->consumer = prod;			/* sane again */
	ASSERT_EQ(0, send_unexp(self->c.fd, r.qp));
	EXPECT_EQ(prod + 1, r.cq.ring->producer);
	EXPECT_EQ(DPUSIM_TM_WC_RECV, tm_cqe_at(&r.cq, prod)->opcode);
	EXPECT_EQ(1002, tm_cqe_at(&r.cq, prod)->wr_id);
	EXPECT_EQ(r.qpn, tm_cqe_at(&r.cq, prod)->src_qp);
	EXPECT_EQ(32, tm_cqe_at(&r.cq, prod)->byte_len);
	EXPECT_TRUE(only_entry_written(&r.cq, prod));
	EXPECT_EQ(msgs + 1, sysfs_tm_attr("messages"));
	/* the header's nr_entries is the user's business; the kernel's is 4 */
	EXPECT_EQ(3, r.cq.ring->nr_entries);
	ASSERT_EQ(0, send_unexp(self->c.fd, r.qp));
	ASSERT_EQ(0, send_unexp(self->c.fd, r.qp));
	ASSERT_EQ(0, send_unexp(self->c.fd, r.qp));
	EXPECT_EQ(EOVERFLOW, send_unexp(self->c.fd, r.qp));
	EXPECT_EQ(prod + 4, r.cq.ring->producer);
	EXPECT_EQ(1005, tm_cqe_at(&r.cq, prod + 3)->wr_id);
}

/*
 * The same with the sender in another process: EREMOTEIO for it,
 * EOVERFLOW once for the scribbler, and a sane consumer makes it work.
 */
TEST_F(tm, ring_scribble_remote)
{
	int to_parent[2], to_child[2];
	uint32_t prod;
	struct rx r;
	pid_t pid;

	ASSERT_EQ(0, rx_make(&self->c, 4, 16, &r));
	ASSERT_EQ(0, send_unexp(self->c.fd, r.qp));
	tm_cq_drain(&r.cq);
	prod = scribble(&r.cq);
	r.cq.ring->consumer = prod + 2;			/* ahead */
	ASSERT_EQ(0, pipe(to_parent));
	ASSERT_EQ(0, pipe(to_child));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint32_t qp, qpn;
		int fd, err;

		err = remote_qp(r.srqn, &fd, &qp, &qpn);
		put_byte(to_parent[1], err ? 100 : send_unexp(fd, qp));
		get_byte(to_child[0]);
		put_byte(to_parent[1], send_unexp(fd, qp));
		get_byte(to_child[0]);
		/* destroy the QP while the ring has room for its flush */
		tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_QP, qp);
		put_byte(to_parent[1], 0);
		get_byte(to_child[0]);
		_exit(0);
	}
	close(to_parent[1]);
	close(to_child[0]);
	EXPECT_EQ(EREMOTEIO, get_byte(to_parent[0]));
	EXPECT_EQ(EOVERFLOW, query(self->c.fd));
	EXPECT_EQ(0, query(self->c.fd));
	EXPECT_EQ(0xdeadbeef, r.cq.ring->producer);	/* nothing written */
	EXPECT_EQ(DPUSIM_TM_CQ_F_OVERRUN, r.cq.ring->flags);
	r.cq.ring->consumer = prod;
	put_byte(to_child[1], 1);
	EXPECT_EQ(0, get_byte(to_parent[0]));
	EXPECT_EQ(prod + 1, r.cq.ring->producer);
	EXPECT_EQ(DPUSIM_TM_WC_RECV, tm_cqe_at(&r.cq, prod)->opcode);
	EXPECT_EQ(1001, tm_cqe_at(&r.cq, prod)->wr_id);
	EXPECT_TRUE(only_entry_written(&r.cq, prod));
	EXPECT_EQ(0, query(self->c.fd));
	tm_cq_drain(&r.cq);
	put_byte(to_child[1], 1);
	EXPECT_EQ(0, get_byte(to_parent[0]));
	put_byte(to_child[1], 1);
	EXPECT_EQ(0, child_exit_status(pid));
	EXPECT_EQ(prod + 2, r.cq.ring->producer);
	EXPECT_EQ(DPUSIM_TM_WC_WR_FLUSH_ERR, tm_cqe_at(&r.cq, prod + 1)->status);
	close(to_parent[0]);
	close(to_child[1]);
}

TEST_HARNESS_MAIN
