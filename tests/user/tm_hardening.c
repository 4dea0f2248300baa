// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/dpusim/tm against a hostile local user (issue 29):
 *
 *  1. CONNECT racing DESTROY_QP: a QP that a CONNECT links into an SRQ is
 *     either connected before the destroy (which then ends the connection:
 *     a flush completion on the SRQ's CQ) or dead before the CONNECT
 *     (ENOENT); never connected and freed.
 *  2. A create publishes its object only after the reply reached user
 *     space: while the copy-out is held (a write-protected page, with
 *     userfaultfd), the handle, number or key it will return is unknown to
 *     every other call.
 *  3. What the kernel holds for the caller is charged and bounded: CQ
 *     rings and SRQ tag tables against RLIMIT_MEMLOCK, posted buffers
 *     against the per-user tm_user_bufs.
 *  -  A struct size over a page is E2BIG before anything reads its tail.
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/userfaultfd.h>

#include "kselftest_harness.h"
#include "tm_ioctl.h"

#define PAGE		4096UL
#define USER_BUFS_PARAM	"/sys/module/dpusim/parameters/tm_user_bufs"

static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % (int)sysconf(_SC_NPROCESSORS_ONLN), &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* ------------------------------------------------- 1. CONNECT vs DESTROY */

struct race {
	int fd;
	uint32_t qp, srq_num;
	atomic_int go;		/* round number the connector may start */
	atomic_int done;	/* round number the connector finished */
	int result;
	atomic_bool stop;
};

static void *connector(void *arg)
{
	struct race *r = arg;
	int round = 0;

	pin_to_cpu(1);
	for (;;) {
		while (atomic_load(&r->go) == round)
			;
		round = atomic_load(&r->go);
		if (atomic_load(&r->stop))
			return NULL;
		r->result = tm_connect(r->fd, r->qp, r->srq_num);
		atomic_store(&r->done, round);
	}
}

/* Completions of @cq naming @qp_num as the flushed peer */
static int flushes_of(struct tm_cq *cq, uint32_t qp_num)
{
	struct dpusim_tm_cqe c[64];
	int n, i, found = 0;

	while ((n = tm_cq_poll(cq, c, 64)) > 0)
		for (i = 0; i < n; i++)
			if (c[i].status == DPUSIM_TM_WC_WR_FLUSH_ERR &&
			    c[i].src_qp == qp_num)
				found++;
	return found;
}

TEST(connect_racing_destroy_qp)
{
	struct race r = { .fd = tm_open() };
	int rounds, connected = 0, refused = 0;
	uint32_t srq, qp_num, cq_qp_handle;
	struct tm_cq cq, cq_qp;
	pthread_t t;

	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, tm_create_cq(r.fd, 256, &cq));
	ASSERT_EQ(0, tm_create_cq_nomap(r.fd, 256, &cq_qp));
	cq_qp_handle = cq_qp.handle;
	ASSERT_EQ(0, tm_create_srq(r.fd, cq.handle, 4, 4, 4, 1, &srq,
				   &r.srq_num));
	ASSERT_EQ(0, pthread_create(&t, NULL, connector, &r));
	pin_to_cpu(0);

	for (rounds = 1; rounds <= 3000; rounds++) {
		int destroyed;

		ASSERT_EQ(0, tm_create_qp(r.fd, cq_qp_handle, 1, &r.qp,
					  &qp_num));
		atomic_store(&r.go, rounds);
		destroyed = tm_destroy(r.fd, DPUSIM_IOCTL_TM_DESTROY_QP, r.qp);
		while (atomic_load(&r.done) != rounds)
			;
		ASSERT_EQ(0, destroyed);
		if (r.result == 0) {
			/* connected first: the destroy ended the connection */
			connected++;
			ASSERT_EQ(1, flushes_of(&cq, qp_num))
				TH_LOG("round %d: CONNECT and DESTROY_QP of QP %u both succeeded, but the SRQ's CQ got no flush: the SRQ still lists a freed QP",
				       rounds, qp_num);
			/* and the SRQ no longer reaches it */
			ASSERT_EQ(ENOENT, tm_send_inline(r.fd,
							 DPUSIM_TM_POST_FROM_SRQ,
							 srq, qp_num, "x", 1, 0, 0));
		} else {
			refused++;
			ASSERT_EQ(ENOENT, r.result);
			ASSERT_EQ(0, flushes_of(&cq, qp_num));
		}
	}
	atomic_store(&r.stop, true);
	atomic_store(&r.go, rounds);
	pthread_join(t, NULL);
	TH_LOG("%d rounds: connected then destroyed %d, destroyed then refused %d",
	       rounds - 1, connected, refused);
	EXPECT_EQ(0, tm_destroy(r.fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, srq));
	close(r.fd);
}

/* ------------------------------------------- 2. publish after copy-out */

/*
 * A page whose writes stop the writer until released: the struct of a
 * create sits in it, so the create stops in its copy-out, with everything
 * else done.
 */
struct stall {
	int uffd;
	uint8_t *page;
};

/* 0, or a reason to skip */
static const char *stall_setup(struct stall *s)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };

	s->page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (s->page == MAP_FAILED)
		return "mmap";
	memset(s->page, 0, PAGE);
	s->uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (s->uffd < 0)
		return "this kernel has no userfaultfd (CONFIG_USERFAULTFD)";
	if (ioctl(s->uffd, UFFDIO_API, &api))
		return "UFFDIO_API failed";
	reg.range.start = (uintptr_t)s->page;
	reg.range.len = PAGE;
	if (ioctl(s->uffd, UFFDIO_REGISTER, &reg))
		return "userfaultfd cannot write-protect anonymous memory here";
	return NULL;
}

/* From now on a write to the page waits for stall_release() */
static int stall_protect(struct stall *s)
{
	struct uffdio_writeprotect wp = {
		.range = { (uintptr_t)s->page, PAGE },
		.mode = UFFDIO_WRITEPROTECT_MODE_WP,
	};

	return ioctl(s->uffd, UFFDIO_WRITEPROTECT, &wp);
}

/* Wait for the write fault: the writer is stopped.  0 or -1 (timeout). */
static int stall_wait(struct stall *s)
{
	struct pollfd p = { .fd = s->uffd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&p, 1, 10000) != 1)
		return -1;
	if (read(s->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT ||
	    !(msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP))
		return -1;
	return 0;
}

static void stall_release(struct stall *s)
{
	struct uffdio_writeprotect wp = {
		.range = { (uintptr_t)s->page, PAGE },
	};

	ioctl(s->uffd, UFFDIO_WRITEPROTECT, &wp);
}

static void stall_teardown(struct stall *s)
{
	if (s->uffd >= 0)
		close(s->uffd);
	munmap(s->page, PAGE);
}

struct held_call {
	int fd;
	unsigned long cmd;
	void *arg;
	int result;
};

static void *held_call_run(void *arg)
{
	struct held_call *c = arg;

	c->result = tm_call(c->fd, c->cmd, c->arg);
	return NULL;
}

FIXTURE(publish)
{
	int fd;
	struct stall st;
	struct tm_cq cq;
	uint8_t *buf;
	uint32_t lkey;
	pthread_t t;
	struct held_call call;
};

FIXTURE_SETUP(publish)
{
	const char *why;

	self->st.uffd = -1;
	self->fd = tm_open();
	ASSERT_LE(0, self->fd);
	why = stall_setup(&self->st);
	if (why)
		SKIP(return, "%s", why);
	self->buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
}

FIXTURE_TEARDOWN(publish)
{
	if (self->st.uffd >= 0)
		stall_teardown(&self->st);
	close(self->fd);
}

/*
 * Start @cmd with its struct (@len bytes of @arg) in the held page and
 * wait until it is stopped in its copy-out: the page, or NULL.
 */
static void *held_start(FIXTURE_DATA(publish) *self, unsigned long cmd,
			const void *arg, size_t len)
{
	memcpy(self->st.page, arg, len);
	if (stall_protect(&self->st))
		return NULL;
	self->call = (struct held_call){ self->fd, cmd, self->st.page, -1 };
	if (pthread_create(&self->t, NULL, held_call_run, &self->call))
		return NULL;
	if (stall_wait(&self->st)) {
		stall_release(&self->st);
		pthread_join(self->t, NULL);
		return NULL;
	}
	return self->st.page;
}

static int held_finish(FIXTURE_DATA(publish) *self)
{
	stall_release(&self->st);
	pthread_join(self->t, NULL);
	return self->call.result;
}

TEST_F(publish, cq_unknown_until_replied)
{
	struct dpusim_tm_create_cq c = { .size = sizeof(c), .cqe = 16 };
	struct dpusim_tm_create_cq *out;
	uint32_t h;

	out = held_start(self, DPUSIM_IOCTL_TM_CREATE_CQ, &c,
			 sizeof(c));
	ASSERT_NE(NULL, out) TH_LOG("the create never reached its copy-out");
	/* handle 1, the lowest free one, is reserved, not yet a CQ */
	EXPECT_EQ(ENOENT, tm_destroy(self->fd, DPUSIM_IOCTL_TM_DESTROY_CQ, 1));
	EXPECT_EQ(ENOENT, tm_create_srq(self->fd, 1, 4, 4, 4, 1, NULL, NULL));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->fd, 1 * PAGE));
	/* and another create does not get it */
	ASSERT_EQ(0, tm_create_cq_nomap(self->fd, 16, &self->cq));
	EXPECT_EQ(2, self->cq.handle);
	ASSERT_EQ(0, held_finish(self));
	h = out->handle;
	EXPECT_EQ(1, h);
	EXPECT_EQ((uint64_t)h * PAGE, out->mmap_offset);
	EXPECT_EQ(0, tm_destroy(self->fd, DPUSIM_IOCTL_TM_DESTROY_CQ, h));
}

TEST_F(publish, srq_unknown_until_replied)
{
	struct dpusim_tm_create_srq s = {
		.size = sizeof(s), .max_num_tags = 4, .max_ops = 4,
		.max_wr = 4, .max_sge = 1,
	};
	struct dpusim_tm_create_srq *out;
	uint32_t h, num, qp;

	ASSERT_EQ(0, tm_create_cq_nomap(self->fd, 64, &self->cq));
	ASSERT_EQ(0, tm_create_qp(self->fd, self->cq.handle, 1, &qp, NULL));
	/* numbers are cyclic: the next SRQ's is this one's + 1 */
	ASSERT_EQ(0, tm_create_srq(self->fd, self->cq.handle, 4, 4, 4, 1, &h,
				   &num));
	ASSERT_EQ(0, tm_destroy(self->fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, h));
	s.cq_handle = self->cq.handle;
	out = held_start(self, DPUSIM_IOCTL_TM_CREATE_SRQ, &s,
			 sizeof(s));
	ASSERT_NE(NULL, out) TH_LOG("the create never reached its copy-out");
	EXPECT_EQ(ENOENT, tm_destroy(self->fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, 1));
	EXPECT_EQ(ENOENT, tm_connect(self->fd, qp, num + 1));
	EXPECT_EQ(ENOENT, tm_post_recv(self->fd, 1, 0, NULL, 0, 0));
	/* its CQ is in use already: the create counted it */
	EXPECT_EQ(EBUSY, tm_destroy(self->fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
				    self->cq.handle));
	ASSERT_EQ(0, held_finish(self));
	EXPECT_EQ(1, out->handle);
	EXPECT_EQ(num + 1, out->srq_num);
	EXPECT_EQ(0, tm_connect(self->fd, qp, out->srq_num));
	EXPECT_EQ(0, tm_destroy(self->fd, DPUSIM_IOCTL_TM_DESTROY_SRQ,
				out->handle));
}

TEST_F(publish, qp_unknown_until_replied)
{
	struct dpusim_tm_create_qp q = { .size = sizeof(q), .max_sge = 1 };
	struct dpusim_tm_create_qp *out;
	uint32_t srq, num;

	ASSERT_EQ(0, tm_create_cq_nomap(self->fd, 64, &self->cq));
	ASSERT_EQ(0, tm_create_srq(self->fd, self->cq.handle, 4, 4, 4, 1, &srq,
				   &num));
	q.cq_handle = self->cq.handle;
	out = held_start(self, DPUSIM_IOCTL_TM_CREATE_QP, &q,
			 sizeof(q));
	ASSERT_NE(NULL, out) TH_LOG("the create never reached its copy-out");
	EXPECT_EQ(ENOENT, tm_destroy(self->fd, DPUSIM_IOCTL_TM_DESTROY_QP, 1));
	EXPECT_EQ(ENOENT, tm_connect(self->fd, 1, num));
	EXPECT_EQ(ENOENT, tm_send_inline(self->fd, 0, 1, 0, "x", 1, 0, 0));
	ASSERT_EQ(0, held_finish(self));
	EXPECT_EQ(1, out->handle);
	EXPECT_EQ(0, tm_connect(self->fd, out->handle, num));
	EXPECT_EQ(0, tm_destroy(self->fd, DPUSIM_IOCTL_TM_DESTROY_QP,
				out->handle));
	EXPECT_EQ(0, tm_destroy(self->fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, srq));
}

TEST_F(publish, mr_unknown_until_replied)
{
	struct dpusim_tm_reg_mr r = {
		.size = sizeof(r), .addr = (uintptr_t)self->buf, .length = PAGE,
		.access = DPUSIM_TM_ACCESS_LOCAL_WRITE,
	};
	struct dpusim_tm_reg_mr *out;
	uint32_t key, srq;

	ASSERT_EQ(0, tm_create_cq_nomap(self->fd, 64, &self->cq));
	ASSERT_EQ(0, tm_create_srq(self->fd, self->cq.handle, 4, 4, 4, 1, &srq,
				   NULL));
	/* keys are cyclic and module wide: the next is this one + 1 */
	ASSERT_EQ(0, tm_reg_mr(self->fd, self->buf, PAGE,
			       DPUSIM_TM_ACCESS_LOCAL_WRITE, &key));
	ASSERT_EQ(0, tm_destroy(self->fd, DPUSIM_IOCTL_TM_DEREG_MR, key));
	out = held_start(self, DPUSIM_IOCTL_TM_REG_MR, &r,
			 sizeof(r));
	ASSERT_NE(NULL, out) TH_LOG("the create never reached its copy-out");
	EXPECT_EQ(ENOENT, tm_destroy(self->fd, DPUSIM_IOCTL_TM_DEREG_MR,
				     key + 1));
	EXPECT_EQ(EINVAL, tm_post_recv(self->fd, srq, key + 1, self->buf, 8,
				       0));
	ASSERT_EQ(0, held_finish(self));
	EXPECT_EQ(key + 1, out->lkey);
	EXPECT_EQ(0, tm_post_recv(self->fd, srq, out->lkey, self->buf, 8, 0));
	EXPECT_EQ(0, tm_destroy(self->fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, srq));
	EXPECT_EQ(0, tm_destroy(self->fd, DPUSIM_IOCTL_TM_DEREG_MR, out->lkey));
}

/* ----------------------------------------------- 3. memory held, bounded */

/*
 * Run @fn in a child that is nobody (no CAP_IPC_LOCK) with
 * RLIMIT_MEMLOCK = @memlock; its exit status is the test's verdict.
 */
static int as_nobody(rlim_t memlock, int (*fn)(void))
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct rlimit rl = { memlock, memlock };

		if (setrlimit(RLIMIT_MEMLOCK, &rl) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		_exit(fn());
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* 64 KiB of memlock = 16 pages: the rings of all CQs together */
static int cq_rings_within_memlock(void)
{
	long long base = sysfs_tm_attr("charged_pages");
	struct tm_cq cq[64];
	int fd = tm_open(), n, i, err = 0;
	long long held;

	if (fd < 0 || base < 0)
		return 1;
	/* a full-size ring (8 MiB) is refused outright */
	if (tm_create_cq_nomap(fd, DPUSIM_TM_MAX_CQE, &cq[0]) != ENOMEM)
		return 2;
	for (n = 0; n < 64; n++) {
		err = tm_create_cq_nomap(fd, 128, &cq[n]);	/* 5 pages */
		if (err)
			break;
	}
	if (err != ENOMEM || n == 0 || n * 5 > 16)
		return 3;
	held = sysfs_tm_attr("charged_pages") - base;
	if (held != n * 5)
		return 4;
	/* a mapped ring stays charged after its CQ is destroyed */
	if (tm_cq_map(fd, &cq[0]) ||
	    tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_CQ, cq[0].handle) ||
	    tm_create_cq_nomap(fd, 128, &cq[n]) != ENOMEM)
		return 5;
	tm_cq_unmap(&cq[0]);
	if (tm_create_cq_nomap(fd, 128, &cq[0]))
		return 6;
	for (i = 0; i < n; i++)
		tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_CQ, cq[i].handle);
	if (sysfs_tm_attr("charged_pages") != base)
		return 7;
	close(fd);
	return 0;
}

TEST(cq_rings_charged_to_memlock)
{
	EXPECT_EQ(0, as_nobody(64 << 10, cq_rings_within_memlock));
}

static int srq_tables_within_memlock(void)
{
	long long base = sysfs_tm_attr("charged_pages");
	uint32_t srq;
	struct tm_cq cq;
	int fd = tm_open();

	if (fd < 0 || base < 0 || tm_create_cq_nomap(fd, 16, &cq))
		return 1;
	/* 16384 tags: 384 KiB of tables, over 64 KiB */
	if (tm_create_srq(fd, cq.handle, DPUSIM_TM_MAX_NUM_TAGS, 4, 4, 1,
			  &srq, NULL) != ENOMEM)
		return 2;
	/* 1024 tags: 24 KiB, 6 pages */
	if (tm_create_srq(fd, cq.handle, 1024, 4, 4, 1, &srq, NULL))
		return 3;
	if (sysfs_tm_attr("charged_pages") - base != 1 + 6)
		return 4;
	if (tm_destroy(fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, srq) ||
	    sysfs_tm_attr("charged_pages") - base != 1)
		return 5;
	close(fd);
	return 0;
}

TEST(srq_tables_charged_to_memlock)
{
	EXPECT_EQ(0, as_nobody(64 << 10, srq_tables_within_memlock));
}

static long long read_param(const char *path)
{
	char buf[32] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return buf[0] ? strtoll(buf, NULL, 0) : -1;
}

static int write_param(const char *path, long long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%lld\n", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

FIXTURE(bufs)
{
	long long saved;
	int a, b;
	struct tm_cq cq_a, cq_b;
	uint32_t srq_a, srq_b, lkey_a, lkey_b, num_a;
	uint8_t *buf;
};

FIXTURE_SETUP(bufs)
{
	self->a = self->b = -1;
	self->saved = read_param(USER_BUFS_PARAM);
	ASSERT_LT(0, self->saved);
	ASSERT_EQ(0, sysfs_tm_attr("posted_bufs"))
		TH_LOG("another test left buffers posted");
	ASSERT_EQ(0, write_param(USER_BUFS_PARAM, 8));
	self->buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	/* two contexts of the same user */
	self->a = tm_open();
	self->b = tm_open();
	ASSERT_LE(0, self->a);
	ASSERT_LE(0, self->b);
	ASSERT_EQ(0, tm_create_cq(self->a, 64, &self->cq_a));
	ASSERT_EQ(0, tm_create_cq(self->b, 64, &self->cq_b));
	ASSERT_EQ(0, tm_create_srq(self->a, self->cq_a.handle, 16, 16, 16, 1,
				   &self->srq_a, &self->num_a));
	ASSERT_EQ(0, tm_create_srq(self->b, self->cq_b.handle, 16, 16, 16, 1,
				   &self->srq_b, NULL));
	ASSERT_EQ(0, tm_reg_mr(self->a, self->buf, PAGE,
			       DPUSIM_TM_ACCESS_LOCAL_WRITE, &self->lkey_a));
	ASSERT_EQ(0, tm_reg_mr(self->b, self->buf, PAGE,
			       DPUSIM_TM_ACCESS_LOCAL_WRITE, &self->lkey_b));
}

FIXTURE_TEARDOWN(bufs)
{
	if (self->a >= 0)
		close(self->a);
	if (self->b >= 0)
		close(self->b);
	if (self->saved > 0)
		write_param(USER_BUFS_PARAM, self->saved);
}

/* The user's SRQs together hold at most tm_user_bufs buffers: ENOSPC */
TEST_F(bufs, cap_is_per_user)
{
	uint32_t done;
	int i;

	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, tm_post_recv(self->a, self->srq_a, self->lkey_a,
					  self->buf, 8, i));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, tm_tag_add(self->b, self->srq_b, i, ~0ULL,
					self->lkey_b, self->buf, 8, i, NULL));
	EXPECT_EQ(8, sysfs_tm_attr("posted_bufs"));
	EXPECT_EQ(ENOSPC, tm_post_recv(self->a, self->srq_a, self->lkey_a,
				       self->buf, 8, 9));
	EXPECT_EQ(ENOSPC, tm_tag_add(self->b, self->srq_b, 9, ~0ULL,
				     self->lkey_b, self->buf, 8, 9, NULL));
	/* a multi-entry post stops at the first over the cap */
	{
		struct dpusim_tm_sge sge = { (uintptr_t)self->buf, 8,
					     self->lkey_a };
		struct dpusim_tm_recv_wr wr[2] = {
			{ .sg_list = (uintptr_t)&sge, .num_sge = 1 },
			{ .sg_list = (uintptr_t)&sge, .num_sge = 1 },
		};

		EXPECT_EQ(ENOSPC, tm_post(self->a,
					  DPUSIM_IOCTL_TM_POST_SRQ_RECV, 0,
					  self->srq_a, 0, wr, 2, &done));
		EXPECT_EQ(0, done);
	}
	EXPECT_EQ(8, sysfs_tm_attr("posted_bufs"));
	/* destroying an SRQ gives its buffers back */
	ASSERT_EQ(0, tm_destroy(self->b, DPUSIM_IOCTL_TM_DESTROY_SRQ,
				self->srq_b));
	EXPECT_EQ(5, sysfs_tm_attr("posted_bufs"));
	EXPECT_EQ(0, tm_post_recv(self->a, self->srq_a, self->lkey_a,
				  self->buf, 8, 6));
	/* the file goes (and its SRQ) once its ring is unmapped too */
	tm_cq_unmap(&self->cq_a);
	close(self->a);
	self->a = -1;
	EXPECT_EQ(0, sysfs_tm_attr("posted_bufs"));
}

/* A consumed buffer no longer counts */
TEST_F(bufs, consumed_buffer_is_given_back)
{
	uint8_t msg[sizeof(struct dpusim_tm_tmh)];
	uint32_t qp, h;
	struct tm_cq cq_qp;
	int i;

	for (i = 0; i < 7; i++)
		ASSERT_EQ(0, tm_post_recv(self->a, self->srq_a, self->lkey_a,
					  self->buf, 64, i));
	ASSERT_EQ(0, tm_tag_add(self->a, self->srq_a, 42, ~0ULL, self->lkey_a,
				self->buf, 64, 42, &h));
	ASSERT_EQ(ENOSPC, tm_post_recv(self->a, self->srq_a, self->lkey_a,
				       self->buf, 64, 8));
	ASSERT_EQ(0, tm_create_cq(self->b, 64, &cq_qp));
	ASSERT_EQ(0, tm_create_qp(self->b, cq_qp.handle, 1, &qp, NULL));
	ASSERT_EQ(0, tm_connect(self->b, qp, self->num_a));
	/* an eager match takes the tagged buffer, an unexpected an untagged */
	ASSERT_EQ(0, tm_send_eager(self->b, qp, 42, 0, "ab", 2, 0));
	EXPECT_EQ(7, sysfs_tm_attr("posted_bufs"));
	tm_tmh(msg, DPUSIM_TM_TMH_EAGER, 0, 7);
	ASSERT_EQ(0, tm_send_inline(self->b, 0, qp, 0, msg, sizeof(msg), 0, 0));
	EXPECT_EQ(6, sysfs_tm_attr("posted_bufs"));
	EXPECT_EQ(0, tm_post_recv(self->a, self->srq_a, self->lkey_a,
				  self->buf, 64, 9));
}

/* ------------------------------------------------- struct size bound */

TEST(struct_over_a_page_is_e2big)
{
	int fd = tm_open();
	uint8_t *two = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct dpusim_tm_query *q = (void *)two;

	ASSERT_LE(0, fd);
	ASSERT_NE(MAP_FAILED, two);
	memset(two, 0, 2 * PAGE);
	q->size = PAGE;			/* zero tail to a page: fine */
	EXPECT_EQ(0, tm_call(fd, DPUSIM_IOCTL_TM_QUERY, q));
	EXPECT_EQ(DPUSIM_TM_MAX_CQE, q->max_cqe);
	q->size = PAGE + 1;		/* a byte more, zero too: refused */
	EXPECT_EQ(E2BIG, tm_call(fd, DPUSIM_IOCTL_TM_QUERY, q));
	q->size = 0xffffffff;		/* before any of the tail is read */
	EXPECT_EQ(E2BIG, tm_call(fd, DPUSIM_IOCTL_TM_QUERY, q));
	munmap(two, 2 * PAGE);
	close(fd);
}

TEST_HARNESS_MAIN
