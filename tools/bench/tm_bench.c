// SPDX-License-Identifier: MIT
/*
 * tm_bench - tag-matching figures of shared/design/performance.md, through
 * the library API of include/dtm.h only, side by side with UCX.
 *
 *   pingpong  8-byte eager tag ping-pong between two processes (fork), pinned
 *             to CPUs 0 and 1: each has a CQ, a TM-SRQ and a QP connected to
 *             the other's SRQ; the tagged buffers of a repetition are posted
 *             before it (one tag per round trip, full mask), sends are
 *             DTM_SEND_INLINE, and completions are found by busy-polling
 *             dtm_poll_cq (the mapped ring: no system call to receive).
 *             One-way latency = round trip / 2, per round trip (the time
 *             between successive timestamps of the pinging side, as
 *             ucx_perftest takes it); the median of --iters round trips per
 *             repetition, the median of --reps repetitions after a warm-up.
 *             Timer: the TSC (rdtsc), calibrated against CLOCK_MONOTONIC.
 *             The guest has no invariant TSC, so ucx_perftest falls back to
 *             gettimeofday (1 us steps, one call per round trip, a system
 *             call with the guest's hpet clocksource): each repetition is
 *             also run timed that way, and that figure is the one compared
 *             with UCX's (like with like); the cost of one gettimeofday and
 *             the duration of our dtm_post_send call are printed too.
 *   syscalls  the system calls of both processes during one more repetition,
 *             counted by the kernel (a perf counter on the raw_syscalls:
 *             sys_enter tracepoint of each process; needs tracefs, skipped
 *             without it), and the dtm_post_send calls per message
 *             received: the design is exactly one ioctl per send and none
 *             to receive.
 *   rate      one process streams 8-byte eager messages (one tag, full
 *             mask) to the other, which polls its CQ and reposts consumed
 *             tagged buffers 256 at a time (one dtm_post_srq_ops call);
 *             flow control is a credit counter in shared memory (buffers
 *             posted), so no message is ever unexpected. Messages per second
 *             = messages / (first send .. last completion), the median of
 *             2 x --reps + 1 short streams (10000 messages, 5000 with
 *             --quick: tens of ms, so that most of them miss the host's
 *             preemptions of the VM's vCPU threads), alternating with as
 *             many ucx_perftest tag_bw runs of the same length; the time
 *             each side spends in its calls; also with 16 sends chained per
 *             dtm_post_send (information only).
 *   match     per-message matching cost as the posted list doubles, in one
 *             process (a QP connected to its own SRQ): one SRQ per length
 *             L = 16 .. 8192, each holding L entries (distinct tags, full
 *             mask). Each message carries the tag of the LAST-posted entry
 *             (worst case for a list scan) and the consumed tag is reposted
 *             at once, so the list stays at L and the same entry stays last.
 *             ns per message (send + poll + repost, median per message) and
 *             of the dtm_post_send call alone, the ratio to L/2 (target <=
 *             1.5 per doubling), and the same for the FIRST-posted entry.
 *             The lengths are measured interleaved, 50 messages of each in
 *             turn, so a change of the host's load hits them all alike.
 *   floor     what one entry into the kernel per message costs in this
 *             guest, whatever the kernel then does: the same two pinned
 *             processes ping-pong a counter in shared memory (no library,
 *             no tag matching), with nothing else, with one getppid, with
 *             one ioctl on /dev/dpusim/tm that the dispatch rejects at
 *             once (an unknown command: -ENOTTY), and with an empty
 *             DPUSIM_IOCTL_TM_POST_SEND (nr_wr 0: the struct copied in,
 *             -EINVAL) per message. One-way = round trip / 2, the median
 *             of --reps repetitions of --iters round trips, the variants
 *             taking turns within each repetition; beside UCX's tag_lat
 *             of the ping-pong above when it ran. A design that enters the
 *             kernel once per message cannot be faster than these rows.
 *   UCX       ucx_perftest (Debian's ucx-utils) tag_lat / tag_bw with 8-byte
 *             messages, server and client over shared memory (UCX_TLS,
 *             default posix,self), pinned like ours, run between our
 *             repetitions, alternating with them as sg_bench alternates with
 *             its baseline. Needs loopback networking for the rendezvous of
 *             the two (tools/bench/tm-run brings lo up in the VM); without
 *             ucx_perftest the UCX columns say why and nothing fails.
 *
 * usage: tm_bench [--cpu-model NAME] [--json FILE] [--reps N] [--iters N]
 *                 [--quick] [--only LIST] [--no-pin] [--no-ucx]
 *        tm_bench --strace-pass N [--post P]
 * --strace-pass runs one untimed ping-pong of N round trips after posting P
 * (default N) tagged buffers per side, for `strace -c -f` (tools/bench/
 * tm-run runs it twice with the same P and takes the difference).
 * The CPU model is only a label (the guest cannot see QEMU's -cpu name);
 * default $DPUSIM_BENCH_CPU, else "unknown"; the accelerator is
 * $DPUSIM_VM_ACCEL (tools/vm-run sets it).
 * Exit status: 0 when every message arrived intact and every ping-pong
 * message took one dtm_post_send (targets missed are reported, not
 * failures), 1 otherwise, 2 on bad usage.
 */
#include <dtm.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uapi/dpusim.h>

#include "bench.h"

#define SLOT		64	/* bytes per receive slot */
#define OPS_BATCH	1024	/* tag-list ops per dtm_post_srq_ops call */
#define MAX_REPS	63
#define RATE_WINDOW	1024	/* tagged buffers the rate receiver keeps posted */
#define SEND_BATCH_INFO	16	/* chained sends per call in the info row */
#define MAX_SEND_BATCH	16
#define MATCH_MIN	16
#define MATCH_MAX	8192
#define NR_MATCH	10	/* 16, 32, ..., 8192 */
#define STALL_SECONDS	60	/* no completion for that long: fail */

static unsigned int reps = 7;
static bool quick, pin = true;
static int failures;
static const char *role = "tm_bench";

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: FAIL: ", role);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	failures++;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: error: ", role);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* ------------------------------------------------------------ time */

static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return bench_now_ns();
#endif
}

static double ns_per_tick = 1.0;
static const char *timer_name = "CLOCK_MONOTONIC";
static char timer_note[160];

/* The TSC's rate against CLOCK_MONOTONIC, measured twice over 100 ms. */
static void calibrate(void)
{
#if defined(__x86_64__) || defined(__i386__)
	double r[2], d;

	for (int k = 0; k < 2; k++) {
		struct timespec ts = { 0, 100000000L };
		uint64_t t0 = bench_now_ns(), c0 = ticks(), t1, c1;

		/* sleeping, not polling the clock: with the guest's hpet
		 * clocksource every clock_gettime is a system call */
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		c1 = ticks();
		t1 = bench_now_ns();
		if (c1 <= c0)
			die("the TSC does not advance");
		r[k] = (double)(t1 - t0) / (double)(c1 - c0);
	}
	ns_per_tick = (r[0] + r[1]) / 2;
	d = r[0] > r[1] ? r[0] - r[1] : r[1] - r[0];
	timer_name = "rdtsc";
	snprintf(timer_note, sizeof(timer_note),
		 "rdtsc, %.4f ns per tick (two 100 ms calibrations against CLOCK_MONOTONIC, %.2f%% apart)",
		 ns_per_tick, 100 * d / ns_per_tick);
	if (d / ns_per_tick > 0.02)
		fprintf(stderr, "tm_bench: warning: TSC calibrations differ by %.1f%%\n",
			100 * d / ns_per_tick);
#else
	snprintf(timer_note, sizeof(timer_note), "CLOCK_MONOTONIC");
#endif
}

static inline double tk2ns(double t)
{
	return t * ns_per_tick;
}

static uint64_t deadline;

static void arm_deadline(void)
{
	deadline = ticks() + (uint64_t)(STALL_SECONDS * 1e9 / ns_per_tick);
}

/* Median cost of one gettimeofday (the timer ucx_perftest falls back to). */
static double gettimeofday_ns(void)
{
	enum { N = 2001 };
	static uint64_t s[N];
	struct timeval tv;

	for (int i = 0; i < N; i++) {
		uint64_t t0 = ticks();

		gettimeofday(&tv, NULL);
		s[i] = ticks() - t0;
	}
	return tk2ns(bench_median_u64(s, N));
}

/* ------------------------------------------------------------ syscalls */

/*
 * A per-process count of system calls made by the kernel: a perf counter on
 * the raw_syscalls:sys_enter tracepoint of the calling thread. fd -1 when
 * tracefs or perf is not available. The read() that fetches the count is
 * itself counted; sc_delta() subtracts what two back-to-back reads see.
 */
struct sc_counter {
	int fd;
	uint64_t self;		/* syscalls seen by a read right after a read */
	char why[128];		/* why it is not available */
};

static bool read_u64_file(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return false;
	ok = fscanf(f, "%" SCNu64, v) == 1;
	fclose(f);
	return ok;
}

static uint64_t sc_read(const struct sc_counter *c)
{
	uint64_t v;

	if (read(c->fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		die("reading the syscall counter: %s", strerror(errno));
	return v;
}

static void sc_open(struct sc_counter *c)
{
	static const char *const ids[] = {
		"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
		"/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
	};
	struct perf_event_attr a;
	uint64_t id = 0, v0, v1;
	bool found = false;

	c->fd = -1;
	for (unsigned int i = 0; i < sizeof(ids) / sizeof(ids[0]) && !found; i++)
		found = read_u64_file(ids[i], &id);
	if (!found) {
		snprintf(c->why, sizeof(c->why), "no tracefs (raw_syscalls/sys_enter/id)");
		return;
	}
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_TRACEPOINT;
	a.size = sizeof(a);
	a.config = id;
	c->fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (c->fd < 0) {
		snprintf(c->why, sizeof(c->why), "perf_event_open: %s", strerror(errno));
		return;
	}
	v0 = sc_read(c);
	v1 = sc_read(c);
	c->self = v1 - v0;
}

static uint64_t sc_delta(const struct sc_counter *c, uint64_t before)
{
	return sc_read(c) - before - c->self;
}

static void sc_close(struct sc_counter *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* ------------------------------------------------------------ processes */

static void pin_to(unsigned int cpu)
{
	cpu_set_t set;

	if (!pin || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		fprintf(stderr, "%s: warning: sched_setaffinity(%u): %s\n", role, cpu,
			strerror(errno));
}

static void unpin(void)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (!pin || n < 2)
		return;
	CPU_ZERO(&set);
	for (long i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Pipes between the two processes, for set-up and barriers (never timed). */
struct link {
	int rfd, wfd;
};

static void link_write(const struct link *l, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(l->wfd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("write to the peer process: %s", w < 0 ? strerror(errno) : "closed");
		b += w;
		n -= (size_t)w;
	}
}

static void link_read(const struct link *l, void *p, size_t n)
{
	uint8_t *b = p;

	while (n) {
		ssize_t r = read(l->rfd, b, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("the peer process is gone (%s)", r < 0 ? strerror(errno) : "EOF");
		b += r;
		n -= (size_t)r;
	}
}

static void barrier(const struct link *l)
{
	uint8_t b = 0x5a;

	link_write(l, &b, 1);
	link_read(l, &b, 1);
}

/* fork with two pipes: *me is this side's end; returns the child's pid (0 in it). */
static pid_t fork_pair(struct link *me)
{
	int a[2], b[2];
	pid_t pid;

	if (pipe2(a, O_CLOEXEC) || pipe2(b, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(a[1]);
		close(b[0]);
		me->rfd = a[0];
		me->wfd = b[1];
	} else {
		close(a[0]);
		close(b[1]);
		me->rfd = b[0];
		me->wfd = a[1];
	}
	return pid;
}

/* The child's exit status: 0 when it succeeded. */
static int reap(pid_t pid, const char *what)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st))
		fail("%s: the other process exited with status %d", what, WEXITSTATUS(st));
	else
		fail("%s: the other process died of signal %d", what, WTERMSIG(st));
	return 1;
}

static void *shared_alloc(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap shared: %s", strerror(errno));
	return p;
}

/* ------------------------------------------------------------ endpoints */

struct ep {
	struct dtm_context *ctx;
	struct dtm_cq *cq;
	struct dtm_srq *srq;
	struct dtm_qp *qp;
	struct dtm_mr *mr;
	uint8_t *buf;
	size_t buf_len;
	uint32_t slots;
	uint32_t ops_batch;
	struct dtm_ops_wr *ops;	/* ops_batch of them */
	struct dtm_sge *sges;
	uint64_t srq_ops_calls;	/* dtm_post_srq_ops calls */
	uint64_t srq_ops_busy;	/* ticks spent in them */
};

#define CHECK_PTR(p, what)                                                  \
	do {                                                                \
		if (!(p))                                                   \
			die("%s: %s", what, strerror(errno));               \
	} while (0)

#define CHECK_RC(call)                                                      \
	do {                                                                \
		int _rc = (call);                                           \
		if (_rc < 0)                                                \
			die("%s:%d: %s: %s", __FILE__, __LINE__, #call,     \
			    strerror(-_rc));                                \
	} while (0)

static struct dtm_device_attr dev_attr;

static void ep_open(struct ep *e, uint32_t max_tags, uint32_t cqe, uint32_t slots)
{
	struct dtm_srq_init_attr sa;
	struct dtm_qp_init_attr qa;
	long page = sysconf(_SC_PAGESIZE);

	memset(e, 0, sizeof(*e));
	e->ctx = dtm_open_device(DTM_DEVICE_PATH);
	CHECK_PTR(e->ctx, "dtm_open_device(" DTM_DEVICE_PATH ") (is dpusim.ko loaded?)");
	CHECK_RC(dtm_query_device(e->ctx, &dev_attr));
	if (max_tags > dev_attr.max_num_tags)
		die("need %u tags in one SRQ, the device holds %u", max_tags, dev_attr.max_num_tags);
	if (cqe > dev_attr.max_cqe)
		cqe = dev_attr.max_cqe;
	e->ops_batch = dev_attr.max_ops < OPS_BATCH ? dev_attr.max_ops : OPS_BATCH;
	if (e->ops_batch == 0)
		die("the device reports max_ops 0");
	e->cq = dtm_create_cq(e->ctx, (int)cqe);
	CHECK_PTR(e->cq, "dtm_create_cq");
	memset(&sa, 0, sizeof(sa));
	sa.cq = e->cq;
	sa.max_num_tags = max_tags;
	sa.max_ops = e->ops_batch;
	sa.max_wr = 16;
	sa.max_sge = 1;
	e->srq = dtm_create_srq(e->ctx, &sa);
	CHECK_PTR(e->srq, "dtm_create_srq");
	memset(&qa, 0, sizeof(qa));
	qa.cq = e->cq;
	qa.max_sge = 1;
	e->qp = dtm_create_qp(e->ctx, &qa);
	CHECK_PTR(e->qp, "dtm_create_qp");

	e->slots = slots;
	e->buf_len = ((size_t)slots * SLOT + (size_t)page - 1) / (size_t)page * (size_t)page;
	e->buf = mmap(NULL, e->buf_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (e->buf == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	memset(e->buf, 0, e->buf_len);
	e->mr = dtm_reg_mr(e->ctx, e->buf, e->buf_len, DTM_ACCESS_LOCAL_WRITE);
	CHECK_PTR(e->mr, "dtm_reg_mr");

	e->ops = calloc(e->ops_batch, sizeof(*e->ops));
	e->sges = calloc(e->ops_batch, sizeof(*e->sges));
	if (!e->ops || !e->sges)
		die("out of memory");
}

static void ep_close(struct ep *e)
{
	int rc;

	if ((rc = dtm_destroy_qp(e->qp)) < 0)
		fail("dtm_destroy_qp: %s", strerror(-rc));
	if ((rc = dtm_destroy_srq(e->srq)) < 0)
		fail("dtm_destroy_srq: %s", strerror(-rc));
	if ((rc = dtm_dereg_mr(e->mr)) < 0)
		fail("dtm_dereg_mr: %s", strerror(-rc));
	if ((rc = dtm_destroy_cq(e->cq)) < 0)
		fail("dtm_destroy_cq: %s", strerror(-rc));
	if ((rc = dtm_close_device(e->ctx)) < 0)
		fail("dtm_close_device: %s", strerror(-rc));
	munmap(e->buf, e->buf_len);
	free(e->ops);
	free(e->sges);
}

static inline uint8_t *slot_of(const struct ep *e, uint64_t wr_id)
{
	return e->buf + (size_t)(wr_id % e->slots) * SLOT;
}

/*
 * Post n tagged buffers (TAG_ADD, full mask, unsignaled): buffer i has tag
 * tag0 + i * stride and recv_wr_id wrid0 + i, and lands in slot (wrid0 + i)
 * % slots. The handles go to handles[i] if handles is not NULL.
 */
static void post_tags(struct ep *e, struct dtm_srq *srq, uint32_t n, uint64_t tag0,
		      uint64_t stride, uint64_t wrid0, uint32_t *handles)
{
	uint32_t done = 0;
	uint64_t t0 = ticks();

	while (done < n) {
		uint32_t k = n - done < e->ops_batch ? n - done : e->ops_batch;
		struct dtm_ops_wr *bad = NULL;
		int rc;

		for (uint32_t i = 0; i < k; i++) {
			struct dtm_ops_wr *o = &e->ops[i];
			uint64_t id = wrid0 + done + i;

			e->sges[i].addr = (uintptr_t)slot_of(e, id);
			e->sges[i].length = SLOT;
			e->sges[i].lkey = e->mr->lkey;
			memset(o, 0, sizeof(*o));
			o->wr_id = id;
			o->next = i + 1 < k ? &e->ops[i + 1] : NULL;
			o->opcode = DTM_WR_TAG_ADD;
			o->flags = 0;
			o->tm.add.recv_wr_id = id;
			o->tm.add.sg_list = &e->sges[i];
			o->tm.add.num_sge = 1;
			o->tm.add.tag = tag0 + (uint64_t)(done + i) * stride;
			o->tm.add.mask = ~0ULL;
		}
		rc = dtm_post_srq_ops(srq, e->ops, &bad);
		e->srq_ops_calls++;
		if (rc)
			die("dtm_post_srq_ops (TAG_ADD x%u, op %td failed): %s", k,
			    bad ? bad - e->ops : (ptrdiff_t)-1, strerror(rc));
		if (handles)
			for (uint32_t i = 0; i < k; i++)
				handles[done + i] = e->ops[i].tm.handle;
		done += k;
	}
	e->srq_ops_busy += ticks() - t0;
}

/* What goes on the wire: TMH (eager) and an 8-byte payload. */
struct wire {
	struct dtm_tmh tmh;
	uint64_t payload;
};

struct sender {
	struct dtm_qp *qp;
	struct wire msg[MAX_SEND_BATCH];
	struct dtm_sge sge[MAX_SEND_BATCH];
	struct dtm_send_wr wr[MAX_SEND_BATCH];
	uint64_t posts;		/* dtm_post_send calls */
	uint64_t msgs;		/* messages in them */
	uint64_t busy;		/* ticks spent in them */
};

static void sender_init(struct sender *s, struct dtm_qp *qp)
{
	memset(s, 0, sizeof(*s));
	s->qp = qp;
	for (int i = 0; i < MAX_SEND_BATCH; i++) {
		s->sge[i].addr = (uintptr_t)&s->msg[i];
		s->sge[i].length = sizeof(s->msg[i]);
		s->sge[i].lkey = 0;
		s->wr[i].sg_list = &s->sge[i];
		s->wr[i].num_sge = 1;
		s->wr[i].opcode = DTM_WR_SEND;
		s->wr[i].send_flags = DTM_SEND_INLINE;
	}
}

/* k eager messages in one dtm_post_send: tag tag0 + i * stride, payload seq0 + i. */
static inline void send_msgs(struct sender *s, uint32_t k, uint64_t tag0, uint64_t stride,
			     uint64_t seq0)
{
	struct dtm_send_wr *bad = NULL;
	uint64_t t0;
	int rc;

	for (uint32_t i = 0; i < k; i++) {
		dtm_tmh_build(&s->msg[i].tmh, DTM_TMH_EAGER, 7, tag0 + i * stride);
		s->msg[i].payload = seq0 + i;
		s->wr[i].wr_id = seq0 + i;
		s->wr[i].next = i + 1 < k ? &s->wr[i + 1] : NULL;
	}
	t0 = ticks();
	rc = dtm_post_send(s->qp, s->wr, &bad);
	s->busy += ticks() - t0;
	s->posts++;
	if (rc)
		die("dtm_post_send (%u messages, tag 0x%" PRIx64 "): %s", k, tag0, strerror(rc));
	s->msgs += k;
}

/* Busy-poll until at least one completion: returns how many (<= max). */
static inline int wait_wc(struct dtm_cq *cq, int max, struct dtm_wc *wc)
{
	unsigned long spins = 0;

	for (;;) {
		int n = dtm_poll_cq(cq, max, wc);

		if (n > 0)
			return n;
		if (n < 0)
			die("dtm_poll_cq: %s", strerror(-n));
		if (++spins % (1UL << 18) == 0 && ticks() > deadline)
			die("no completion for %d s", STALL_SECONDS);
	}
}

static void check_recv(const struct dtm_wc *wc, uint64_t tag, uint64_t wr_id,
		       const uint8_t *slot, uint64_t payload)
{
	const unsigned int want = DTM_WC_TM_MATCH | DTM_WC_TM_DATA_VALID;
	uint64_t got;

	if (wc->status != DTM_WC_SUCCESS || wc->opcode != DTM_WC_TM_RECV ||
	    (wc->wc_flags & want) != want || wc->tag != tag || wc->wr_id != wr_id ||
	    wc->byte_len != sizeof(uint64_t))
		die("unexpected completion: status %s opcode %s flags 0x%x tag 0x%" PRIx64
		    " wr_id %" PRIu64 " byte_len %u; expected TM_RECV MATCH|DATA_VALID tag 0x%" PRIx64
		    " wr_id %" PRIu64 " byte_len 8",
		    dtm_wc_status_str(wc->status), dtm_wc_opcode_str(wc->opcode), wc->wc_flags,
		    wc->tag, wc->wr_id, wc->byte_len, tag, wr_id);
	memcpy(&got, slot, sizeof(got));
	if (got != payload)
		die("message %" PRIu64 ": the tagged buffer holds payload %" PRIu64, payload, got);
}

/* ------------------------------------------------------------ UCX */

/*
 * The baseline: Debian's ucx_perftest (ucx-utils), server and client on this
 * machine over shared memory (UCX_TLS, default posix,self), pinned like our
 * two processes (-c 1 / -c 0), its CSV output parsed. It needs loopback
 * networking for the rendezvous (tools/bench/tm-run brings lo up). Runs
 * between our repetitions, alternating, as sg_bench alternates with its
 * memcpy baseline.
 */
static struct {
	bool ok;		/* usable so far */
	char why[200];		/* why not */
	char tls[64];
	char version[64];
	int port;
} ucx;

static void ucx_init(bool enabled)
{
	const char *tls = getenv("UCX_TLS");
	char line[256];
	FILE *p;

	if (!enabled) {
		snprintf(ucx.why, sizeof(ucx.why), "not run (--no-ucx)");
		return;
	}
	if (!tls || !*tls) {
		tls = "posix,self";
		setenv("UCX_TLS", tls, 1);
	}
	snprintf(ucx.tls, sizeof(ucx.tls), "%s", tls);
	snprintf(ucx.version, sizeof(ucx.version), "unknown");
	ucx.port = 20000 + (int)(getpid() % 20000);
	p = popen("ucx_info -v 2>/dev/null", "r");
	if (p) {
		while (fgets(line, sizeof(line), p))
			if (sscanf(line, "# Version %63s", ucx.version) == 1)
				break;
		pclose(p);
	}
	ucx.ok = true;
}

/* fork + exec with stdin from /dev/null, stdout and stderr to out_fd (or /dev/null) */
static pid_t spawn(char *const argv[], int out_fd)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);

		if (nul < 0)
			_exit(126);
		dup2(nul, 0);
		dup2(out_fd >= 0 ? out_fd : nul, 1);
		dup2(out_fd >= 0 ? out_fd : nul, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Waits up to @ms for @pid; kills it after that. Returns the wait status, or -1. */
static int wait_or_kill(pid_t pid, int ms)
{
	int st;

	for (int t = 0; t < ms; t += 10) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/* The last CSV line of `ucx_perftest -v`: 8 numbers (iterations, 50th
 * percentile latency, average, overall latency [us], average and overall
 * bandwidth [MB/s], average and overall message rate [msg/s]). */
static bool ucx_parse(const char *out, double f[8])
{
	const char *line = out, *best = NULL;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		unsigned int commas = 0;

		for (size_t i = 0; i < len; i++)
			commas += line[i] == ',';
		if (len && line[0] >= '0' && line[0] <= '9' && commas == 7)
			best = line;
		line += len + (nl ? 1 : 0);
	}
	return best && sscanf(best, "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &f[0], &f[1], &f[2],
			      &f[3], &f[4], &f[5], &f[6], &f[7]) == 8;
}

/* The last non-empty line of @out, for messages. */
static void last_line(const char *out, char *buf, size_t len)
{
	const char *end = out + strlen(out), *start;

	while (end > out && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	start = end;
	while (start > out && start[-1] != '\n')
		start--;
	snprintf(buf, len, "%.*s", (int)(end - start), start);
}

/*
 * One ucx_perftest run of @test (tag_lat, tag_bw) with 8-byte messages;
 * fills f[] from its CSV. On failure UCX is marked unusable, with the
 * reason.
 */
static bool ucx_run(const char *test, uint32_t n, uint32_t warm, double f[8])
{
	char port[16], ns[16], ws[16], *out;
	char *srv_argv[] = { "ucx_perftest", "-p", port, "-c", "1", NULL };
	char *cli_argv[] = { "ucx_perftest", "127.0.0.1", "-p", port, "-t", (char *)test,
			     "-s", "8", "-n", ns, "-w", ws, "-v", "-c", "0", NULL };
	size_t cap = 1 << 16;
	pid_t srv;
	int st = -1;
	bool ok = false;

	if (!ucx.ok)
		return false;
	if (!pin) {
		srv_argv[3] = NULL;
		cli_argv[13] = NULL;
	}
	out = malloc(cap);
	if (!out)
		die("out of memory");
	snprintf(port, sizeof(port), "%d", ucx.port++);
	snprintf(ns, sizeof(ns), "%u", n);
	snprintf(ws, sizeof(ws), "%u", warm);
	srv = spawn(srv_argv, -1);
	/* the client fails at once while the server is not listening yet */
	for (int attempt = 0; attempt < 100 && !ok; attempt++) {
		int fds[2];
		size_t got = 0;
		pid_t cli;
		uint64_t t_end = bench_now_ns() + 300ULL * 1000000000ULL;

		if (pipe2(fds, O_CLOEXEC))
			die("pipe: %s", strerror(errno));
		cli = spawn(cli_argv, fds[1]);
		close(fds[1]);
		for (;;) {
			ssize_t r = read(fds[0], out + got, cap - 1 - got);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			got += (size_t)r;
			if (got == cap - 1 || bench_now_ns() > t_end)
				break;
		}
		out[got] = 0;
		close(fds[0]);
		st = wait_or_kill(cli, 10000);
		if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && ucx_parse(out, f)) {
			ok = true;
			break;
		}
		if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 127) {
			snprintf(ucx.why, sizeof(ucx.why), "ucx_perftest not found (install ucx-utils)");
			break;
		}
		if (!strstr(out, "Connection refused"))
			break;
		usleep(100000);
	}
	if (ok) {
		if (wait_or_kill(srv, 10000) == -1)
			fprintf(stderr, "tm_bench: warning: the ucx_perftest server did not exit\n");
	} else {
		char ll[160];

		kill(srv, SIGKILL);
		waitpid(srv, NULL, 0);
		if (!ucx.why[0]) {
			last_line(out, ll, sizeof(ll));
			snprintf(ucx.why, sizeof(ucx.why), "ucx_perftest -t %s failed (%s): %s", test,
				 st == -1 ? "timed out" : "exit status", ll);
		}
		fprintf(stderr, "tm_bench: %s; no UCX figures\n", ucx.why);
		ucx.ok = false;
	}
	free(out);
	return ok;
}

/* ------------------------------------------------------------ ping-pong */

struct pp_result {
	double one_way_ns;		/* median of repetitions */
	double lo_ns, hi_ns;		/* extremes of the repetitions' medians */
	double gtod_one_way_us;		/* timed like ucx_perftest */
	double gtod_lo_us, gtod_hi_us;
	double send_ns;			/* the pinging side's dtm_post_send call */
	uint32_t iters;
	unsigned int ucx_n;		/* repetitions UCX ran */
	double ucx_us, ucx_lo, ucx_hi;	/* ucx_perftest tag_lat, 50th percentile */
	/* per repetition, in the order run */
	double run_gtod[MAX_REPS], run_tsc[MAX_REPS], run_ucx[MAX_REPS];
	/* the counted repetition */
	bool counted;
	char count_note[160];
	uint64_t sc[2];			/* syscalls of ping, pong */
	uint64_t posts[2];		/* dtm_post_send calls of ping, pong */
	uint64_t recvs[2];		/* messages received by ping, pong */
};

struct pp_report {			/* pong -> ping, through the pipe */
	uint64_t sc, posts, recvs;
	int counted;
	char why[128];
};

#define PP_TAG(phase, i)	(((uint64_t)(phase) + 1) << 40 | (uint64_t)(i))

enum pp_timer { PP_TSC, PP_GTOD, PP_NONE };

/*
 * One repetition, both roles: post @post tagged buffers (tags PP_TAG(phase,
 * i)), barrier, @iters round trips, barrier. The pinging side returns the
 * median one-way latency (ns, or us for PP_GTOD) and in *send_ns the median
 * duration of its dtm_post_send calls.
 */
static double pp_rep(struct ep *e, struct sender *s, const struct link *l, bool ping,
		     unsigned int phase, uint32_t iters, uint32_t post, enum pp_timer timer,
		     uint64_t *samples, uint64_t *ssamples, double *send_ns,
		     struct sc_counter *sc, uint64_t *sc_out)
{
	struct dtm_wc wc;
	uint64_t prev = 0, sc0 = 0;
	struct timeval tv;

	post_tags(e, e->srq, post, PP_TAG(phase, 0), 1, 0, NULL);
	barrier(l);
	arm_deadline();
	if (sc)
		sc0 = sc_read(sc);
	if (ping) {
		if (timer == PP_TSC) {
			prev = ticks();
		} else if (timer == PP_GTOD) {
			gettimeofday(&tv, NULL);
			prev = (uint64_t)tv.tv_sec * 1000000 + (uint64_t)tv.tv_usec;
		}
		for (uint32_t i = 0; i < iters; i++) {
			uint64_t now, t0 = ticks();

			send_msgs(s, 1, PP_TAG(phase, i), 0, i);
			ssamples[i] = ticks() - t0;
			wait_wc(e->cq, 1, &wc);
			check_recv(&wc, PP_TAG(phase, i), i, slot_of(e, i), i);
			if (timer == PP_TSC) {
				now = ticks();
				samples[i] = now - prev;
				prev = now;
			} else if (timer == PP_GTOD) {
				gettimeofday(&tv, NULL);
				now = (uint64_t)tv.tv_sec * 1000000 + (uint64_t)tv.tv_usec;
				samples[i] = now - prev;
				prev = now;
			}
		}
	} else {
		for (uint32_t i = 0; i < iters; i++) {
			wait_wc(e->cq, 1, &wc);
			check_recv(&wc, PP_TAG(phase, i), i, slot_of(e, i), i);
			send_msgs(s, 1, PP_TAG(phase, i), 0, i);
		}
	}
	if (sc)
		*sc_out = sc_delta(sc, sc0);
	barrier(l);
	if (!ping || timer == PP_NONE)
		return 0;
	if (send_ns)
		*send_ns = tk2ns(bench_median_u64(ssamples, iters));
	if (timer == PP_TSC)
		return tk2ns(bench_median_u64(samples, iters)) / 2;
	return bench_median_u64(samples, iters) / 2;
}

/*
 * The ping-pong: the parent pings (CPU 0), the child pongs (CPU 1). Each
 * repetition: ucx_perftest tag_lat (the child waits), ours timed with the
 * TSC, ours timed like ucx_perftest. With strace_iters, one untimed
 * repetition of that many iterations after posting @post buffers, nothing
 * else.
 */
static void pingpong(struct pp_result *res, uint32_t iters, uint32_t strace_iters, uint32_t post)
{
	struct link l;
	pid_t pid;
	bool ping;
	struct ep e;
	struct sender s;
	uint32_t peer, mine, max_post;
	uint32_t warm = iters < 1000 ? iters : 1000;
	uint64_t *samples, *ssamples;
	double med[MAX_REPS], gmed[MAX_REPS], smed[MAX_REPS], umed[MAX_REPS], f[8];
	unsigned int phase = 0;
	struct sc_counter sc;
	struct pp_report rep;

	memset(res, 0, sizeof(*res));
	res->iters = iters;
	max_post = strace_iters ? (post > strace_iters ? post : strace_iters) : iters;
	pid = fork_pair(&l);
	ping = pid != 0;
	role = ping ? "tm_bench[ping]" : "tm_bench[pong]";
	pin_to(ping ? 0 : 1);

	ep_open(&e, max_post, 256, 64);
	sender_init(&s, e.qp);
	mine = e.srq->srq_num;
	link_write(&l, &mine, sizeof(mine));
	link_read(&l, &peer, sizeof(peer));
	CHECK_RC(dtm_connect(e.qp, peer));
	samples = calloc(max_post, sizeof(*samples));
	ssamples = calloc(max_post, sizeof(*ssamples));
	if (!samples || !ssamples)
		die("out of memory");

	if (strace_iters) {
		pp_rep(&e, &s, &l, ping, phase++, strace_iters, max_post, PP_NONE, samples, ssamples,
		       NULL, NULL, NULL);
		goto out;
	}

	pp_rep(&e, &s, &l, ping, phase++, warm, warm, PP_TSC, samples, ssamples, NULL, NULL, NULL);
	for (unsigned int r = 0; r < reps; r++) {
		if (ping && ucx_run("tag_lat", iters, warm, f)) {
			umed[res->ucx_n] = res->run_ucx[res->ucx_n] = f[1];
			res->ucx_n++;
		}
		med[r] = pp_rep(&e, &s, &l, ping, phase++, iters, iters, PP_TSC, samples, ssamples,
				&smed[r], NULL, NULL);
		gmed[r] = pp_rep(&e, &s, &l, ping, phase++, iters, iters, PP_GTOD, samples, ssamples,
				 NULL, NULL, NULL);
	}

	/* one more, counting the system calls of both sides */
	memset(&rep, 0, sizeof(rep));
	sc_open(&sc);
	if (sc.fd >= 0) {
		uint64_t posts0 = s.posts, n = 0;

		pp_rep(&e, &s, &l, ping, phase++, iters, iters, PP_NONE, samples, ssamples, NULL,
		       &sc, &n);
		rep.counted = 1;
		rep.sc = n;
		rep.posts = s.posts - posts0;
		rep.recvs = iters;
	} else {
		snprintf(rep.why, sizeof(rep.why), "%s", sc.why);
	}
	sc_close(&sc);
	if (!ping) {
		link_write(&l, &rep, sizeof(rep));
	} else {
		struct pp_report other;

		link_read(&l, &other, sizeof(other));
		res->counted = rep.counted && other.counted;
		if (res->counted) {
			res->sc[0] = rep.sc;
			res->sc[1] = other.sc;
			res->posts[0] = rep.posts;
			res->posts[1] = other.posts;
			res->recvs[0] = rep.recvs;
			res->recvs[1] = other.recvs;
		} else {
			snprintf(res->count_note, sizeof(res->count_note), "not counted: %s",
				 rep.counted ? other.why : rep.why);
		}
		for (unsigned int r = 0; r < reps; r++) {
			res->run_tsc[r] = med[r];
			res->run_gtod[r] = gmed[r];
		}
		res->one_way_ns = bench_median_range(med, reps, &res->lo_ns, &res->hi_ns);
		res->gtod_one_way_us = bench_median_range(gmed, reps, &res->gtod_lo_us, &res->gtod_hi_us);
		res->send_ns = bench_median_range(smed, reps, NULL, NULL);
		if (res->ucx_n)
			res->ucx_us = bench_median_range(umed, res->ucx_n, &res->ucx_lo, &res->ucx_hi);
	}
out:
	ep_close(&e);
	free(samples);
	free(ssamples);
	if (!ping)
		_exit(failures ? 1 : 0);
	close(l.rfd);
	close(l.wfd);
	reap(pid, "ping-pong");
	role = "tm_bench";
	unpin();
}

/* ------------------------------------------------------------ rate */

struct rate_shared {
	_Atomic uint64_t credits;	/* messages the receiver has buffers for, in all */
	_Atomic uint64_t t_start;	/* the sender's first send of a phase */
};

struct rate_result {
	double msgs_per_s;		/* one send per dtm_post_send */
	double lo, hi;
	double batch_msgs_per_s;	/* SEND_BATCH_INFO sends per call */
	double batch_lo, batch_hi;
	double send_ns, repost_ns;	/* per message: the sender's call, the receiver's reposts */
	uint64_t messages;		/* per repetition */
	unsigned int reps;
	uint32_t window, repost;
	unsigned int ucx_n;
	double ucx_mr, ucx_lo, ucx_hi;	/* ucx_perftest tag_bw, overall message rate */
	double run_ours[MAX_REPS], run_ucx[MAX_REPS];	/* per stream, in the order run */
	bool counted;
	char count_note[160];
	uint64_t sc_send, sc_recv, posts_send, ops_recv, counted_msgs;
};

#define RATE_TAG 0x5241544500000000ULL

struct rate_report {			/* sender -> receiver */
	uint64_t sc, posts;
	uint64_t busy[MAX_REPS];	/* ticks in dtm_post_send, per repetition */
	int counted;
	char why[128];
};

/*
 * One phase of the stream: @n messages, @batch per dtm_post_send. The
 * receiver returns the elapsed ticks from the first send to the last
 * completion; *busy gets the ticks this side spent in its calls
 * (dtm_post_send, or the reposts).
 */
static uint64_t rate_phase(struct ep *e, struct sender *s, const struct link *l,
			   struct rate_shared *sh, bool recv_side, uint64_t n, uint32_t batch,
			   uint64_t *seq, uint64_t *posted, uint32_t *pending, uint32_t repost,
			   struct sc_counter *sc, uint64_t *sc_out, uint64_t *busy)
{
	struct dtm_wc wc[64];
	uint64_t sc0 = 0, elapsed = 0, busy0 = recv_side ? e->srq_ops_busy : s->busy;

	barrier(l);
	arm_deadline();
	if (sc)
		sc0 = sc_read(sc);
	if (!recv_side) {
		uint64_t sent = 0;

		atomic_store_explicit(&sh->t_start, ticks(), memory_order_release);
		while (sent < n) {
			uint64_t cr = atomic_load_explicit(&sh->credits, memory_order_acquire);
			uint64_t room = cr - *seq, k = n - sent;

			if (room == 0) {
				unsigned long spins = 0;

				do {
					cr = atomic_load_explicit(&sh->credits, memory_order_acquire);
					if (++spins % (1UL << 20) == 0 && ticks() > deadline)
						die("no credit from the receiver for %d s", STALL_SECONDS);
				} while (cr == *seq);
				room = cr - *seq;
			}
			if (k > batch)
				k = batch;
			if (k > room)
				k = room;
			send_msgs(s, (uint32_t)k, RATE_TAG, 0, *seq);
			*seq += k;
			sent += k;
		}
	} else {
		uint64_t got = 0;

		while (got < n) {
			int m = wait_wc(e->cq, 64, wc);

			for (int i = 0; i < m; i++) {
				check_recv(&wc[i], RATE_TAG, *seq, slot_of(e, *seq), *seq);
				(*seq)++;
			}
			got += (uint64_t)m;
			*pending += (uint32_t)m;
			if (*pending >= repost) {
				post_tags(e, e->srq, repost, RATE_TAG, 0, *posted, NULL);
				*posted += repost;
				*pending -= repost;
				atomic_fetch_add_explicit(&sh->credits, repost, memory_order_release);
			}
		}
		elapsed = ticks() - atomic_load_explicit(&sh->t_start, memory_order_acquire);
	}
	if (sc)
		*sc_out = sc_delta(sc, sc0);
	if (busy)
		*busy = (recv_side ? e->srq_ops_busy : s->busy) - busy0;
	barrier(l);
	return elapsed;
}

/*
 * The stream: the parent receives (CPU 0), the child sends (CPU 1). Each
 * repetition: ucx_perftest tag_bw (the child waits), ours with one send per
 * call, ours with SEND_BATCH_INFO per call.
 */
static void rate(struct rate_result *res, uint64_t n, unsigned int nreps)
{
	struct rate_shared *sh = shared_alloc(sizeof(*sh));
	struct link l;
	pid_t pid;
	bool recv_side;
	struct ep e;
	struct sender s;
	uint32_t srq_num, pending = 0, repost = quick ? 128 : 256;
	uint64_t seq = 0, posted = 0, t[MAX_REPS], tb[MAX_REPS], busy[MAX_REPS];
	uint32_t warm = (uint32_t)(n / 10 ? n / 10 : 1);
	double v[MAX_REPS], f[8];
	struct sc_counter sc;
	struct rate_report rep;
	uint64_t sc_n = 0, posts0, ops0;

	memset(res, 0, sizeof(*res));
	res->messages = n;
	res->reps = nreps;
	res->window = RATE_WINDOW;
	res->repost = repost;
	atomic_store(&sh->credits, 0);
	pid = fork_pair(&l);
	recv_side = pid != 0;
	role = recv_side ? "tm_bench[recv]" : "tm_bench[send]";
	pin_to(recv_side ? 0 : 1);

	if (recv_side) {
		ep_open(&e, RATE_WINDOW, 2 * RATE_WINDOW, RATE_WINDOW);
		srq_num = e.srq->srq_num;
		link_write(&l, &srq_num, sizeof(srq_num));
		post_tags(&e, e.srq, RATE_WINDOW, RATE_TAG, 0, 0, NULL);
		posted = RATE_WINDOW;
		atomic_store_explicit(&sh->credits, RATE_WINDOW, memory_order_release);
	} else {
		ep_open(&e, 1, 64, 1);
		link_read(&l, &srq_num, sizeof(srq_num));
		CHECK_RC(dtm_connect(e.qp, srq_num));
	}
	sender_init(&s, e.qp);
	memset(&rep, 0, sizeof(rep));

	rate_phase(&e, &s, &l, sh, recv_side, warm, 1, &seq, &posted, &pending, repost, NULL, NULL,
		   NULL);
	for (unsigned int r = 0; r < nreps; r++) {
		if (recv_side && ucx_run("tag_bw", (uint32_t)n, warm, f)) {
			v[res->ucx_n] = res->run_ucx[res->ucx_n] = f[7];
			res->ucx_n++;
		}
		t[r] = rate_phase(&e, &s, &l, sh, recv_side, n, 1, &seq, &posted, &pending, repost,
				  NULL, NULL, recv_side ? &busy[r] : &rep.busy[r]);
		tb[r] = rate_phase(&e, &s, &l, sh, recv_side, n, SEND_BATCH_INFO, &seq, &posted,
				   &pending, repost, NULL, NULL, NULL);
	}
	if (recv_side && res->ucx_n)
		res->ucx_mr = bench_median_range(v, res->ucx_n, &res->ucx_lo, &res->ucx_hi);

	sc_open(&sc);
	posts0 = s.posts;
	ops0 = e.srq_ops_calls;
	if (sc.fd >= 0) {
		rate_phase(&e, &s, &l, sh, recv_side, n, 1, &seq, &posted, &pending, repost,
			   &sc, &sc_n, NULL);
		rep.counted = 1;
		rep.sc = sc_n;
		rep.posts = s.posts - posts0;
	} else {
		snprintf(rep.why, sizeof(rep.why), "%s", sc.why);
	}
	sc_close(&sc);
	if (!recv_side) {
		link_write(&l, &rep, sizeof(rep));
	} else {
		struct rate_report other;

		link_read(&l, &other, sizeof(other));
		res->counted = rep.counted && other.counted;
		if (res->counted) {
			res->sc_recv = rep.sc;
			res->ops_recv = e.srq_ops_calls - ops0;
			res->sc_send = other.sc;
			res->posts_send = other.posts;
			res->counted_msgs = n;
		} else {
			snprintf(res->count_note, sizeof(res->count_note), "not counted: %s",
				 rep.counted ? other.why : rep.why);
		}
		for (unsigned int r = 0; r < nreps; r++)
			v[r] = tk2ns((double)other.busy[r]) / (double)n;
		res->send_ns = bench_median_range(v, nreps, NULL, NULL);
		for (unsigned int r = 0; r < nreps; r++)
			v[r] = tk2ns((double)busy[r]) / (double)n;
		res->repost_ns = bench_median_range(v, nreps, NULL, NULL);
		for (unsigned int r = 0; r < nreps; r++)
			v[r] = res->run_ours[r] = (double)n / (tk2ns((double)t[r]) / 1e9);
		res->msgs_per_s = bench_median_range(v, nreps, &res->lo, &res->hi);
		for (unsigned int r = 0; r < nreps; r++)
			v[r] = (double)n / (tk2ns((double)tb[r]) / 1e9);
		res->batch_msgs_per_s = bench_median_range(v, nreps, &res->batch_lo, &res->batch_hi);
	}
	ep_close(&e);
	if (!recv_side)
		_exit(failures ? 1 : 0);
	close(l.rfd);
	close(l.wfd);
	reap(pid, "message rate");
	munmap(sh, sizeof(*sh));
	role = "tm_bench";
	unpin();
}

/* ------------------------------------------------------------ matching */

/*
 * One TM-SRQ per list length, each with L entries and a QP of its own
 * connected to it, all in one context with one CQ: the lengths are measured
 * interleaved (MATCH_CHUNK messages of each in turn), so a change of the
 * host's load hits all of them alike.
 */
#define MATCH_CHUNK	50
#define MATCH_TAG(len, j)	(0x4d00000000000000ULL | (uint64_t)(len) << 24 | (uint64_t)(j))

struct mlist {
	struct dtm_srq *srq;
	struct dtm_qp *qp;
	struct sender s;
	uint32_t len;
	uint32_t head, tail;		/* first- and last-posted entry */
	uint32_t *handles;
	uint64_t *samples[2], *ssamples[2];	/* [0] last-posted, [1] first-posted */
	double v[2][MAX_REPS], vs[2][MAX_REPS];
};

struct match_row {
	uint32_t len;
	double last_ns, first_ns;	/* median ns per message: send + poll + repost */
	double last_lo, last_hi;	/* extremes of the repetitions (last) */
	double last_send_ns, first_send_ns;	/* of which the dtm_post_send call */
	double ratio;			/* last_ns / last_ns at len / 2; 0 for the first */
	double send_ratio;		/* the same for last_send_ns */
};

struct match_result {
	struct match_row rows[NR_MATCH];
	unsigned int nr;
	uint32_t msgs;			/* per repetition and case */
	double worst_ratio, worst_send_ratio;
};

static void mlist_open(struct ep *e, struct mlist *m, uint32_t len, uint32_t msgs)
{
	struct dtm_srq_init_attr sa;
	struct dtm_qp_init_attr qa;

	memset(m, 0, sizeof(*m));
	memset(&sa, 0, sizeof(sa));
	sa.cq = e->cq;
	sa.max_num_tags = len;
	sa.max_ops = e->ops_batch;
	sa.max_wr = 16;
	sa.max_sge = 1;
	m->srq = dtm_create_srq(e->ctx, &sa);
	CHECK_PTR(m->srq, "dtm_create_srq");
	memset(&qa, 0, sizeof(qa));
	qa.cq = e->cq;
	qa.max_sge = 1;
	m->qp = dtm_create_qp(e->ctx, &qa);
	CHECK_PTR(m->qp, "dtm_create_qp");
	CHECK_RC(dtm_connect(m->qp, m->srq->srq_num));
	sender_init(&m->s, m->qp);
	m->len = len;
	m->handles = calloc(len, sizeof(*m->handles));
	for (int c = 0; c < 2; c++) {
		m->samples[c] = calloc(msgs, sizeof(uint64_t));
		m->ssamples[c] = calloc(msgs, sizeof(uint64_t));
		if (!m->samples[c] || !m->ssamples[c])
			die("out of memory");
	}
	if (!m->handles)
		die("out of memory");
	/* entry j: tag MATCH_TAG(len, j), recv_wr_id j; all share receive slot 0 */
	post_tags(e, m->srq, len, MATCH_TAG(len, 0), 1, 0, m->handles);
	m->head = 0;
	m->tail = len - 1;
}

static void mlist_close(struct mlist *m)
{
	int rc;

	if ((rc = dtm_destroy_qp(m->qp)) < 0)
		fail("dtm_destroy_qp: %s", strerror(-rc));
	if ((rc = dtm_destroy_srq(m->srq)) < 0)
		fail("dtm_destroy_srq: %s", strerror(-rc));
	free(m->handles);
	for (int c = 0; c < 2; c++) {
		free(m->samples[c]);
		free(m->ssamples[c]);
	}
}

/*
 * @k messages on list @m, each carrying the tag of its last-posted (or
 * first-posted) entry; the consumed tag is reposted at once, so it becomes
 * the last-posted one. The list is always a rotation of the post order:
 * tail = head - 1 (mod L). Samples (send + poll + repost, and the send call
 * alone) go to s[] and ss[].
 */
static void match_chunk(struct ep *e, struct mlist *m, bool last, uint32_t k, uint64_t *seq,
			uint64_t *s, uint64_t *ss)
{
	struct dtm_wc wc;

	for (uint32_t i = 0; i < k; i++) {
		uint32_t j = last ? m->tail : m->head;
		uint64_t tag = MATCH_TAG(m->len, j), t0 = ticks();

		send_msgs(&m->s, 1, tag, 0, *seq);
		ss[i] = ticks() - t0;
		wait_wc(e->cq, 1, &wc);
		check_recv(&wc, tag, j, slot_of(e, j), *seq);
		post_tags(e, m->srq, 1, tag, 0, j, &m->handles[j]);
		s[i] = ticks() - t0;
		(*seq)++;
		if (!last) {
			m->tail = j;
			m->head = (j + 1) % m->len;
		}
	}
}

static void matching(struct match_result *res, uint32_t msgs)
{
	struct mlist m[NR_MATCH];
	struct ep e;
	uint64_t seq = 0;
	unsigned int nl = 0, combos;
	double prev = 0, prev_send = 0;
	struct dtm_wc wc;

	memset(res, 0, sizeof(*res));
	res->msgs = msgs;
	pin_to(0);
	ep_open(&e, 1, 256, 1);
	for (uint32_t len = MATCH_MIN; len <= MATCH_MAX && nl < NR_MATCH; len *= 2)
		mlist_open(&e, &m[nl++], len, msgs);
	combos = 2 * nl;

	/* warm-up: a chunk of each, twice */
	arm_deadline();
	for (int w = 0; w < 2; w++)
		for (unsigned int c = 0; c < combos; c++)
			match_chunk(&e, &m[c / 2], c % 2 == 0, MATCH_CHUNK, &seq, m[c / 2].samples[c % 2],
				    m[c / 2].ssamples[c % 2]);
	for (unsigned int r = 0; r < reps; r++) {
		arm_deadline();
		for (uint32_t off = 0; off < msgs; off += MATCH_CHUNK) {
			uint32_t k = msgs - off < MATCH_CHUNK ? msgs - off : MATCH_CHUNK;
			bool down = (off / MATCH_CHUNK) % 2;

			for (unsigned int x = 0; x < combos; x++) {
				unsigned int c = down ? combos - 1 - x : x;
				struct mlist *ml = &m[c / 2];

				match_chunk(&e, ml, c % 2 == 0, k, &seq, ml->samples[c % 2] + off,
					    ml->ssamples[c % 2] + off);
			}
		}
		for (unsigned int i = 0; i < nl; i++)
			for (int c = 0; c < 2; c++) {
				m[i].v[c][r] = tk2ns(bench_median_u64(m[i].samples[c], msgs));
				m[i].vs[c][r] = tk2ns(bench_median_u64(m[i].ssamples[c], msgs));
			}
	}
	if (dtm_poll_cq(e.cq, 1, &wc) != 0)
		fail("matching: a completion nobody asked for (opcode %s, status %s)",
		     dtm_wc_opcode_str(wc.opcode), dtm_wc_status_str(wc.status));

	for (unsigned int i = 0; i < nl; i++) {
		struct match_row *row = &res->rows[res->nr++];

		row->len = m[i].len;
		row->last_ns = bench_median_range(m[i].v[0], reps, &row->last_lo, &row->last_hi);
		row->first_ns = bench_median_range(m[i].v[1], reps, NULL, NULL);
		row->last_send_ns = bench_median_range(m[i].vs[0], reps, NULL, NULL);
		row->first_send_ns = bench_median_range(m[i].vs[1], reps, NULL, NULL);
		row->ratio = prev > 0 ? row->last_ns / prev : 0;
		row->send_ratio = prev_send > 0 ? row->last_send_ns / prev_send : 0;
		if (row->ratio > res->worst_ratio)
			res->worst_ratio = row->ratio;
		if (row->send_ratio > res->worst_send_ratio)
			res->worst_send_ratio = row->send_ratio;
		prev = row->last_ns;
		prev_send = row->last_send_ns;
	}
	for (unsigned int i = 0; i < nl; i++)
		mlist_close(&m[i]);
	ep_close(&e);
	unpin();
}

/* ------------------------------------------------------------ output */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
	fputc('"', f);
}

static void guest_cpu_name(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !c)
			continue;
		c++;
		while (*c == ' ' || *c == '\t')
			c++;
		c[strcspn(c, "\n")] = 0;
		snprintf(buf, len, "%s", c);
		break;
	}
	fclose(f);
}

static void json_array(FILE *f, const char *name, const double *v, unsigned int n, const char *fmt_)
{
	fprintf(f, "\"%s\": [", name);
	for (unsigned int i = 0; i < n; i++) {
		fprintf(f, i ? ", " : "");
		fprintf(f, fmt_, v[i]);
	}
	fprintf(f, "]");
}

/* ------------------------------------------------------------ floor */

#define FLOOR_WARM	500	/* untimed round trips before each repetition */

enum { FL_SHM, FL_GETPPID, FL_ENOTTY, FL_EMPTY_POST, NR_FLOOR };

static const char *const floor_name[NR_FLOOR] = {
	[FL_SHM] = "floor: counter ping-pong, shared mem",
	[FL_GETPPID] = "  + one getppid per message",
	[FL_ENOTTY] = "  + one rejected tm ioctl (ENOTTY)",
	[FL_EMPTY_POST] = "  + one empty TM_POST_SEND (EINVAL)",
};

struct floor_result {
	bool ran;
	char why[160];
	double one_way_ns[NR_FLOOR];		/* median of repetitions */
	double lo_ns[NR_FLOOR], hi_ns[NR_FLOOR];
};

/* The kernel entry of @variant on @fd; its result is not looked at. */
static void floor_enter(int variant, int fd)
{
	struct dpusim_tm_post p = { .size = sizeof(p) };

	switch (variant) {
	case FL_GETPPID:
		(void)syscall(SYS_getppid);
		break;
	case FL_ENOTTY:
		(void)ioctl(fd, _IO(DPUSIM_TYPE, 0xff), 0);
		break;
	case FL_EMPTY_POST:
		(void)ioctl(fd, DPUSIM_IOCTL_TM_POST_SEND, &p);
		break;
	}
}

static void floor_wait(volatile uint64_t *word, uint64_t want)
{
	while (*word != want)
		if (ticks() > deadline)
			die("floor: no answer for %d s", STALL_SECONDS);
}

/* One repetition of @variant: @iters round trips; the ping's ticks. */
static uint64_t floor_rep(volatile uint64_t *sh, int fd, int variant, uint32_t iters)
{
	uint64_t t0 = 0;
	pid_t pid;

	sh[0] = sh[8] = 0;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	arm_deadline();
	if (pid == 0) {
		pin_to(1);
		for (uint64_t i = 1; i <= FLOOR_WARM + iters; i++) {
			floor_wait(&sh[0], i);
			floor_enter(variant, fd);
			sh[8] = i;
		}
		_exit(0);
	}
	for (uint64_t i = 1; i <= FLOOR_WARM + iters; i++) {
		if (i == FLOOR_WARM + 1)
			t0 = ticks();	/* after the pong has started and faulted in */
		floor_enter(variant, fd);
		sh[0] = i;
		floor_wait(&sh[8], i);
	}
	t0 = ticks() - t0;
	reap(pid, "floor");
	return t0;
}

static void floor_run(struct floor_result *res, uint32_t iters)
{
	double v[NR_FLOOR][MAX_REPS];
	volatile uint64_t *sh;
	int fd;

	memset(res, 0, sizeof(*res));
	fd = open("/dev/dpusim/tm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(res->why, sizeof(res->why), "/dev/dpusim/tm: %s", strerror(errno));
		return;
	}
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	pin_to(0);
	for (unsigned int r = 0; r < reps; r++)
		for (int k = 0; k < NR_FLOOR; k++)
			v[k][r] = tk2ns((double)floor_rep(sh, fd, k, iters)) / (2.0 * iters);
	for (int k = 0; k < NR_FLOOR; k++)
		res->one_way_ns[k] = bench_median_range(v[k], reps, &res->lo_ns[k], &res->hi_ns[k]);
	unpin();
	res->ran = true;
	munmap((void *)sh, 4096);
	close(fd);
}

static double per_msg(uint64_t a, uint64_t msgs)
{
	return msgs ? (double)a / (double)msgs : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tm_bench [--cpu-model NAME] [--json FILE] [--reps N] [--iters N]\n"
		"                [--quick] [--only pingpong,floor,rate,match] [--no-pin] [--no-ucx]\n"
		"       tm_bench --strace-pass N [--post P]\n"
		"  --cpu-model NAME  QEMU -cpu model to report (default $DPUSIM_BENCH_CPU)\n"
		"  --json FILE       also write the results as JSON\n"
		"  --reps N          repetitions per figure, median reported (default 7, max %d)\n"
		"  --iters N         ping-pong round trips per repetition (default 10000)\n"
		"  --quick           fewer round trips and messages\n"
		"  --only LIST       some of pingpong, floor, rate, match\n"
		"  --no-pin          do not pin the two processes to CPUs 0 and 1\n"
		"  --no-ucx          do not run ucx_perftest between the repetitions\n"
		"  --strace-pass N   one untimed ping-pong of N round trips (for strace -c -f)\n"
		"  --post P          with --strace-pass: tagged buffers posted per side (default N)\n",
		MAX_REPS);
}

#define ROW "%-40s %11s %11s %-11s %7s  %s\n"

static const char *fmt(char *buf, size_t len, const char *f, double v)
{
	snprintf(buf, len, f, v);
	return buf;
}

int main(int argc, char **argv)
{
	const char *cpu = getenv("DPUSIM_BENCH_CPU"), *json = NULL, *only = NULL;
	const char *accel = getenv("DPUSIM_VM_ACCEL");
	uint32_t iters = 0, strace_iters = 0, post = 0;
	bool do_pp, do_rate, do_match, do_floor, use_ucx = true;
	struct floor_result fl;
	struct pp_result pp;
	struct rate_result rr;
	struct match_result mr;
	struct utsname un;
	char cpuname[128], a[32], b[32], c[32], d[200];
	double gtod_ns = 0, lat_ratio = 0, lat_ratio_tsc = 0, rate_ratio = 0, rate_ratio_best = 0;

	for (int i = 1; i < argc; i++) {
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;
		long v;

		if (!strcmp(argv[i], "--cpu-model") && val) {
			cpu = val;
			i++;
		} else if (!strcmp(argv[i], "--json") && val) {
			json = val;
			i++;
		} else if (!strcmp(argv[i], "--only") && val) {
			only = val;
			i++;
		} else if ((!strcmp(argv[i], "--reps") || !strcmp(argv[i], "--iters") ||
			    !strcmp(argv[i], "--strace-pass") || !strcmp(argv[i], "--post")) && val) {
			v = strtol(val, &end, 10);
			if (*end || v < 1 || v > 100000000L ||
			    (!strcmp(argv[i], "--reps") && v > MAX_REPS)) {
				fprintf(stderr, "tm_bench: bad value for %s: '%s'\n", argv[i], val);
				usage(stderr);
				return 2;
			}
			if (!strcmp(argv[i], "--reps"))
				reps = (unsigned int)v;
			else if (!strcmp(argv[i], "--iters"))
				iters = (uint32_t)v;
			else if (!strcmp(argv[i], "--strace-pass"))
				strace_iters = (uint32_t)v;
			else
				post = (uint32_t)v;
			i++;
		} else if (!strcmp(argv[i], "--quick")) {
			quick = true;
		} else if (!strcmp(argv[i], "--no-pin")) {
			pin = false;
		} else if (!strcmp(argv[i], "--no-ucx")) {
			use_ucx = false;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "tm_bench: bad option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (!cpu || !*cpu)
		cpu = "unknown";
	if (!accel || !*accel)
		accel = "unknown";
	if (!iters)
		iters = quick ? 2000 : 10000;
	uname(&un);
	guest_cpu_name(cpuname, sizeof(cpuname));
	calibrate();

	if (strace_iters) {
		ucx_init(false);
		pingpong(&pp, 0, strace_iters, post);
		printf("tm_bench: strace pass: %u round trips (%u messages), %u tagged buffers posted per side: %s\n",
		       strace_iters, 2 * strace_iters, post > strace_iters ? post : strace_iters,
		       failures ? "FAILED" : "done");
		return failures ? 1 : 0;
	}
	do_pp = !only || strstr(only, "pingpong");
	do_rate = !only || strstr(only, "rate");
	do_match = !only || strstr(only, "match");
	do_floor = !only || strstr(only, "floor");
	ucx_init(use_ucx && (do_pp || do_rate));
	gtod_ns = gettimeofday_ns();

	printf("tm_bench: QEMU CPU model %s, accelerator %s, guest CPU \"%s\", kernel %s, median of %u repetitions\n",
	       cpu, accel, cpuname, un.release, reps);
	printf("timer: %s; one gettimeofday (ucx_perftest's timer in this guest: no invariant TSC) costs %.0f ns\n",
	       timer_note, gtod_ns);
	if (ucx.ok)
		printf("baseline: ucx_perftest (UCX %s, UCX_TLS=%s), run between our repetitions, alternating\n",
		       ucx.version, ucx.tls);
	else
		printf("baseline: none: UCX %s\n", ucx.why);
	printf("\n" ROW, "figure", "dpusim", "UCX", "unit", "ratio", "detail");

	if (do_pp) {
		pingpong(&pp, iters, 0, 0);
		if (pp.ucx_n) {
			lat_ratio = pp.gtod_one_way_us / pp.ucx_us;
			lat_ratio_tsc = pp.one_way_ns / 1000 / pp.ucx_us;
		}
		snprintf(d, sizeof(d), "gettimeofday per round trip as ucx_perftest (1 us steps); goal <= 1.0%s",
			 lat_ratio > 1.0 ? " MISSED" : "");
		printf(ROW, "eager ping-pong latency, 8 B, one-way", fmt(a, sizeof(a), "%.2f", pp.gtod_one_way_us),
		       pp.ucx_n ? fmt(b, sizeof(b), "%.2f", pp.ucx_us) : "-", "us",
		       pp.ucx_n ? fmt(c, sizeof(c), "%.2f", lat_ratio) : "-", d);
		snprintf(d, sizeof(d), "TSC-timed, %u round trips/rep; reps %.3f..%.3f (UCX %.2f..%.2f)",
			 iters, pp.lo_ns / 1000, pp.hi_ns / 1000, pp.ucx_lo, pp.ucx_hi);
		printf(ROW, "  same, timed with the TSC", fmt(a, sizeof(a), "%.3f", pp.one_way_ns / 1000),
		       pp.ucx_n ? fmt(b, sizeof(b), "%.2f", pp.ucx_us) : "-", "us",
		       pp.ucx_n ? fmt(c, sizeof(c), "%.2f", lat_ratio_tsc) : "-", d);
		printf(ROW, "  of which dtm_post_send (one ioctl)", fmt(a, sizeof(a), "%.3f", pp.send_ns / 1000),
		       "", "us", "", "median duration of the pinging side's call");
		if (pp.counted) {
			uint64_t msgs = pp.recvs[0] + pp.recvs[1];

			snprintf(d, sizeof(d), "kernel's count, both processes: %" PRIu64 " + %" PRIu64
				 " for %" PRIu64 " messages; dtm_post_send calls/msg %.3f",
				 pp.sc[0], pp.sc[1], msgs, per_msg(pp.posts[0] + pp.posts[1], msgs));
			printf(ROW, "  system calls per message",
			       fmt(a, sizeof(a), "%.3f", per_msg(pp.sc[0] + pp.sc[1], msgs)), "-",
			       "calls", "", d);
			if (per_msg(pp.posts[0] + pp.posts[1], msgs) != 1.0)
				fail("ping-pong: %.3f dtm_post_send calls per message, expected 1",
				     per_msg(pp.posts[0] + pp.posts[1], msgs));
		} else {
			printf(ROW, "  system calls per message", "-", "-", "calls", "", pp.count_note);
		}
		fflush(stdout);
	}
	if (do_floor) {
		floor_run(&fl, iters);
		if (!fl.ran)
			printf(ROW, "floor: one kernel entry per message", "-", "-", "us", "", fl.why);
		for (int k = 0; fl.ran && k < NR_FLOOR; k++) {
			bool ucx_ran = do_pp && pp.ucx_n;

			snprintf(d, sizeof(d), "%s%s; reps %.3f..%.3f", k ? "" : "two processes, a counter each way; ",
				 k ? "the least one kernel entry per message costs" : "no system call",
				 fl.lo_ns[k] / 1000, fl.hi_ns[k] / 1000);
			printf(ROW, floor_name[k], fmt(a, sizeof(a), "%.3f", fl.one_way_ns[k] / 1000),
			       ucx_ran ? fmt(b, sizeof(b), "%.2f", pp.ucx_us) : "-", "us",
			       ucx_ran ? fmt(c, sizeof(c), "%.2f", fl.one_way_ns[k] / 1000 / pp.ucx_us) : "-", d);
		}
		fflush(stdout);
	}
	if (do_rate) {
		rate(&rr, quick ? 5000 : 10000, 2 * reps + 1 < MAX_REPS ? 2 * reps + 1 : MAX_REPS);
		if (rr.ucx_n) {
			rate_ratio = rr.msgs_per_s / rr.ucx_mr;
			rate_ratio_best = rr.hi / rr.ucx_hi;
		}
		snprintf(d, sizeof(d), "median of %u streams of %" PRIu64 " messages; %u buffers posted, %u reposted per call; reps %.0f..%.0f (UCX %.0f..%.0f)",
			 rr.reps, rr.messages, rr.window, rr.repost, rr.lo, rr.hi, rr.ucx_lo, rr.ucx_hi);
		printf(ROW, "message rate, 8 B eager", fmt(a, sizeof(a), "%.0f", rr.msgs_per_s),
		       rr.ucx_n ? fmt(b, sizeof(b), "%.0f", rr.ucx_mr) : "-", "msg/s",
		       rr.ucx_n ? fmt(c, sizeof(c), "%.2f", rate_ratio) : "-", d);
		snprintf(d, sizeof(d), "the fastest stream of each (UCX's rate is bimodal when the host is busy)");
		printf(ROW, "  best of the streams", fmt(a, sizeof(a), "%.0f", rr.hi),
		       rr.ucx_n ? fmt(b, sizeof(b), "%.0f", rr.ucx_hi) : "-", "msg/s",
		       rr.ucx_n ? fmt(c, sizeof(c), "%.2f", rate_ratio_best) : "-", d);
		snprintf(d, sizeof(d), "per message: sender in dtm_post_send %.0f ns, receiver in reposts %.0f ns",
			 rr.send_ns, rr.repost_ns);
		printf(ROW, "  time in calls", "", "", "", "", d);
		snprintf(d, sizeof(d), "information: %d sends chained per dtm_post_send; reps %.0f..%.0f",
			 SEND_BATCH_INFO, rr.batch_lo, rr.batch_hi);
		printf(ROW, "  16 sends per dtm_post_send", fmt(a, sizeof(a), "%.0f", rr.batch_msgs_per_s),
		       "", "msg/s", "", d);
		if (rr.counted) {
			snprintf(d, sizeof(d), "sender %.3f (dtm_post_send %.3f), receiver %.4f (reposts %.4f)",
				 per_msg(rr.sc_send, rr.counted_msgs), per_msg(rr.posts_send, rr.counted_msgs),
				 per_msg(rr.sc_recv, rr.counted_msgs), per_msg(rr.ops_recv, rr.counted_msgs));
			printf(ROW, "  system calls per message",
			       fmt(a, sizeof(a), "%.3f", per_msg(rr.sc_send + rr.sc_recv, rr.counted_msgs)),
			       "-", "calls", "", d);
		} else {
			printf(ROW, "  system calls per message", "-", "-", "calls", "", rr.count_note);
		}
		fflush(stdout);
	}
	if (do_match) {
		printf("\nmatching cost per message as the posted list doubles (one process, a QP connected to its own SRQ;\n"
		       "send + poll + repost of the consumed tag; lengths interleaved; %u messages/rep each):\n",
		       quick ? 500 : 2000);
		matching(&mr, quick ? 500 : 2000);
		printf("  %6s %10s %10s %19s %7s %7s %10s %10s %6s\n", "L", "ns/msg", "send call",
		       "reps", "x L/2", "send", "first:ns", "send call", "target");
		for (unsigned int i = 0; i < mr.nr; i++) {
			const struct match_row *r = &mr.rows[i];

			snprintf(d, sizeof(d), "%.0f..%.0f", r->last_lo, r->last_hi);
			printf("  %6u %10.0f %10.0f %19s %7s %7s %10.0f %10.0f %6s %s\n", r->len,
			       r->last_ns, r->last_send_ns, d,
			       r->ratio > 0 ? fmt(a, sizeof(a), "%.2f", r->ratio) : "-",
			       r->send_ratio > 0 ? fmt(b, sizeof(b), "%.2f", r->send_ratio) : "-",
			       r->first_ns, r->first_send_ns, r->ratio > 0 ? "<=1.5" : "-",
			       r->ratio == 0 ? "" : r->ratio <= 1.5 ? "ok" : "ABOVE");
		}
		printf("  message carries the tag of the last-posted entry (first: of the first-posted);\n"
		       "  worst growth per doubling: %.2fx per message, %.2fx for the send call (target <= 1.5x);"
		       " L=%u vs L=%u: %.2fx\n",
		       mr.worst_ratio, mr.worst_send_ratio, mr.rows[mr.nr - 1].len, mr.rows[0].len,
		       mr.rows[mr.nr - 1].last_ns / mr.rows[0].last_ns);
	}

	if (json) {
		FILE *f = fopen(json, "w");

		if (!f)
			die("cannot write %s: %s", json, strerror(errno));
		fprintf(f, "{\n  \"benchmark\": \"tm_bench\",\n  \"qemu_cpu_model\": ");
		json_str(f, cpu);
		fprintf(f, ",\n  \"accelerator\": ");
		json_str(f, accel);
		fprintf(f, ",\n  \"guest_cpu\": ");
		json_str(f, cpuname);
		fprintf(f, ",\n  \"kernel\": ");
		json_str(f, un.release);
		fprintf(f, ",\n  \"repetitions\": %u,\n  \"statistic\": \"median\",\n  \"quick\": %s,\n",
			reps, quick ? "true" : "false");
		fprintf(f, "  \"timer\": ");
		json_str(f, timer_name);
		fprintf(f, ",\n  \"timer_note\": ");
		json_str(f, timer_note);
		fprintf(f, ",\n  \"ns_per_tick\": %.6f,\n  \"gettimeofday_ns\": %.1f,\n  \"pinned\": %s,\n",
			ns_per_tick, gtod_ns, pin ? "true" : "false");
		fprintf(f, "  \"ucx\": {\"used\": %s, \"version\": ", ucx.ok ? "true" : "false");
		json_str(f, ucx.version);
		fprintf(f, ", \"tls\": ");
		json_str(f, ucx.tls);
		fprintf(f, ", \"note\": ");
		json_str(f, ucx.why);
		fprintf(f, "},\n");
		if (do_pp) {
			uint64_t msgs = pp.recvs[0] + pp.recvs[1];

			fprintf(f, "  \"pingpong\": {\"message_bytes\": 8, \"iterations\": %u, "
				"\"one_way_us_gettimeofday\": %.3f, \"one_way_ns\": %.1f, "
				"\"one_way_ns_min_rep\": %.1f, \"one_way_ns_max_rep\": %.1f, "
				"\"post_send_call_ns\": %.1f, \"ucx_reps\": %u, \"ucx_tag_lat_us\": %.3f, "
				"\"ucx_min_rep\": %.3f, \"ucx_max_rep\": %.3f, "
				"\"ratio\": %.4f, \"ratio_tsc\": %.4f, \"goal\": 1.0, ",
				pp.iters, pp.gtod_one_way_us, pp.one_way_ns, pp.lo_ns, pp.hi_ns, pp.send_ns,
				pp.ucx_n, pp.ucx_us, pp.ucx_lo, pp.ucx_hi, lat_ratio, lat_ratio_tsc);
			json_array(f, "runs_us_gettimeofday", pp.run_gtod, reps, "%.2f");
			fprintf(f, ", ");
			json_array(f, "runs_ns_tsc", pp.run_tsc, reps, "%.1f");
			fprintf(f, ", ");
			json_array(f, "runs_ucx_us", pp.run_ucx, pp.ucx_n, "%.2f");
			fprintf(f, ", ");
			if (pp.counted)
				fprintf(f, "\"syscalls_counted\": true, \"syscalls_per_message\": %.4f, "
					"\"syscalls_ping\": %" PRIu64 ", \"syscalls_pong\": %" PRIu64 ", "
					"\"post_send_calls_per_message\": %.4f, \"messages_counted\": %" PRIu64 "},\n",
					per_msg(pp.sc[0] + pp.sc[1], msgs), pp.sc[0], pp.sc[1],
					per_msg(pp.posts[0] + pp.posts[1], msgs), msgs);
			else {
				fprintf(f, "\"syscalls_counted\": false, \"syscalls_note\": ");
				json_str(f, pp.count_note);
				fprintf(f, "},\n");
			}
		}
		if (do_floor) {
			fprintf(f, "  \"floor\": {\"ran\": %s, \"note\": ", fl.ran ? "true" : "false");
			json_str(f, fl.why);
			fprintf(f, ", \"iterations\": %u, \"rows\": [\n", iters);
			for (int k = 0; fl.ran && k < NR_FLOOR; k++) {
				fprintf(f, "    {\"variant\": ");
				json_str(f, floor_name[k]);
				fprintf(f, ", \"one_way_ns\": %.1f, \"min_rep\": %.1f, \"max_rep\": %.1f, "
					"\"ratio_to_ucx_tag_lat\": %.4f}%s\n", fl.one_way_ns[k], fl.lo_ns[k],
					fl.hi_ns[k], do_pp && pp.ucx_n ? fl.one_way_ns[k] / 1000 / pp.ucx_us : 0,
					k + 1 < NR_FLOOR ? "," : "");
			}
			fprintf(f, "  ]},\n");
		}
		if (do_rate) {
			fprintf(f, "  \"rate\": {\"message_bytes\": 8, \"messages\": %" PRIu64 ", \"streams\": %u, \"window\": %u, "
				"\"repost_batch\": %u, \"msgs_per_s\": %.0f, \"msgs_per_s_min_rep\": %.0f, "
				"\"msgs_per_s_max_rep\": %.0f, \"batch16_msgs_per_s\": %.0f, "
				"\"sender_call_ns_per_msg\": %.1f, \"receiver_repost_ns_per_msg\": %.1f, "
				"\"ucx_reps\": %u, \"ucx_tag_bw_msgs_per_s\": %.0f, \"ucx_min_rep\": %.0f, "
				"\"ucx_max_rep\": %.0f, \"ratio\": %.4f, \"ratio_best\": %.4f, ",
				rr.messages, rr.reps, rr.window, rr.repost, rr.msgs_per_s, rr.lo, rr.hi,
				rr.batch_msgs_per_s, rr.send_ns, rr.repost_ns, rr.ucx_n, rr.ucx_mr,
				rr.ucx_lo, rr.ucx_hi, rate_ratio, rate_ratio_best);
			json_array(f, "runs_msgs_per_s", rr.run_ours, rr.reps, "%.0f");
			fprintf(f, ", ");
			json_array(f, "runs_ucx_msgs_per_s", rr.run_ucx, rr.ucx_n, "%.0f");
			fprintf(f, ", ");
			if (rr.counted)
				fprintf(f, "\"syscalls_counted\": true, \"sender_syscalls_per_message\": %.4f, "
					"\"receiver_syscalls_per_message\": %.5f, \"sender_post_send_per_message\": %.4f, "
					"\"receiver_post_srq_ops_per_message\": %.5f},\n",
					per_msg(rr.sc_send, rr.counted_msgs), per_msg(rr.sc_recv, rr.counted_msgs),
					per_msg(rr.posts_send, rr.counted_msgs), per_msg(rr.ops_recv, rr.counted_msgs));
			else {
				fprintf(f, "\"syscalls_counted\": false, \"syscalls_note\": ");
				json_str(f, rr.count_note);
				fprintf(f, "},\n");
			}
		}
		if (do_match) {
			fprintf(f, "  \"matching\": {\"messages_per_rep\": %u, \"target_ratio_per_doubling\": 1.5, "
				"\"worst_ratio_per_doubling\": %.4f, \"worst_send_ratio_per_doubling\": %.4f, "
				"\"rows\": [\n", mr.msgs, mr.worst_ratio, mr.worst_send_ratio);
			for (unsigned int i = 0; i < mr.nr; i++) {
				const struct match_row *r = &mr.rows[i];

				fprintf(f, "    {\"list_len\": %u, \"ns_per_msg_last\": %.1f, \"ns_per_msg_first\": %.1f, "
					"\"last_min_rep\": %.1f, \"last_max_rep\": %.1f, \"send_ns_last\": %.1f, "
					"\"send_ns_first\": %.1f, \"ratio_to_half\": %.4f, \"send_ratio_to_half\": %.4f, "
					"\"verdict\": \"%s\"}%s\n",
					r->len, r->last_ns, r->first_ns, r->last_lo, r->last_hi, r->last_send_ns,
					r->first_send_ns, r->ratio, r->send_ratio,
					r->ratio == 0 ? "info" : r->ratio <= 1.5 ? "ok" : "ABOVE",
					i + 1 < mr.nr ? "," : "");
			}
			fprintf(f, "  ]},\n");
		}
		fprintf(f, "  \"failures\": %d\n}\n", failures);
		if (fclose(f) != 0)
			die("writing %s: %s", json, strerror(errno));
	}
	printf("tm_bench: %s\n", failures ? "FAILED (see above)" : "done");
	return failures ? 1 : 0;
}
