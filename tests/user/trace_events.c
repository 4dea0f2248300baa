// SPDX-License-Identifier: GPL-2.0
/*
 * dpusim's tracepoints (kernel/trace.h, contract: notes/trace-contract.md)
 * through tracefs: one test per event.  Each test makes its own tracefs
 * instance (instances/dpusim_te_<pid>_<k>), enables only that one event in
 * it, clears its buffer, does a known operation (a transfer, a launch, a
 * crash, a tag-matching operation), disables the event and reads the
 * instance's trace file: the event must be there exactly as often as the
 * operation emits it, with every field exact (key=value in the contract's
 * order, single spaces; durations > 0, or >= 0 on a jiffies clock source
 * such as the debug kernel's, and under 10 s).  The instance is removed in
 * the fixture's teardown, which runs in the harness's parent process, so
 * also when the test body fails or crashes.
 *
 * What the library does not expose is checked for consistency instead:
 * the CQ handle (struct dtm_cq is opaque) is the same on every completion
 * of one CQ and differs between two CQs; where the raw ioctl interface is
 * used (tm_ioctl.h) the exact handle CREATE_CQ answered is checked.
 *
 * Last, an instance with every dpusim event enabled sees all 14 events for
 * one round of all those operations, and the same round with them disabled
 * leaves its buffer empty.
 */
#include <ctype.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <dpu.h>
#include <dpu_management.h>
#include <dtm.h>

#include "kselftest_harness.h"
#include "common.h"
#include "tm_common.h"
#include "tm_ioctl.h"

#define TRACEFS		"/sys/kernel/tracing"
#define DPU_BIN(name)	"build/tests/dpu/" name
#define HEAP		DPU_MRAM_HEAP_POINTER_NAME
#define MAX_INST	3
#define MAX_EV		128
#define MAX_CAP		8
#define FULL		(~0ULL)
#define TMO		2000	/* ms to wait for a completion that must be there */

static const char *const all_events[] = {
	"dpusim_xfer", "dpusim_async_queue", "dpusim_async_done",
	"dpusim_launch_start", "dpusim_launch_end", "dpusim_fault",
	"dpusim_tm_post", "dpusim_tm_match", "dpusim_tm_unexpected",
	"dpusim_tm_sync", "dpusim_tm_rndv_read", "dpusim_tm_fin",
	"dpusim_tm_completion", "dpusim_tm_overrun",
};
#define NR_EVENTS	(sizeof(all_events) / sizeof(all_events[0]))

/* ------------------------------------------------------------ tracefs */

/* tracefs at TRACEFS, mounted if it is not yet; 0 or -errno */
static int tracefs_mount(void)
{
	if (!access(TRACEFS "/instances", F_OK))
		return 0;
	if (mount("nodev", TRACEFS, "tracefs", 0, NULL) && errno != EBUSY)
		return -errno;
	return access(TRACEFS "/instances", F_OK) ? -errno : 0;
}

/* Write @s to @path (no newline needed); 0 or -errno */
static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n != (ssize_t)strlen(s))
		ret = n < 0 ? -errno : -EIO;
	close(fd);
	return ret;
}

/* The whole of @path, NUL-terminated (malloc'ed), or NULL */
static char *read_all(const char *path)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap), *nb;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	for (;;) {
		if (cap - len < 4096) {
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* One instance: its directory and the event it enables (NULL: all dpusim) */
struct inst {
	char dir[160];
	const char *event;
};

/* One event line of a trace file: "... <ts>: <name>: <args>" */
struct tev {
	char name[48];
	char args[240];
};

/* The event lines of an instance's trace file, and the file itself */
struct tbuf {
	int n;
	struct tev ev[MAX_EV];
	char *raw;
};

/* The trace file's text, for messages */
#define RAW(t)	((t)->raw ? (t)->raw : "")

FIXTURE(tr) {
	struct inst in[MAX_INST];
	int nr_inst;
	char record_cmd;	/* options/record-cmd before the test, or 0 */
};

/*
 * Instances take the top level's record-cmd (it cannot be set in one).
 * With it, enabling an event's first user and disabling its last one
 * registers and unregisters the sched_switch/sched_wakeup probes that
 * record the comms, live-patching the scheduler's tracepoint sites; under
 * QEMU TCG with 2 vCPUs one of those patches left the other CPU looping
 * on the int3 in __schedule (stock 6.1, soft lockup).  The tests do not
 * need comms: record-cmd is off while they run, restored afterwards.
 */
FIXTURE_SETUP(tr)
{
	int err = tracefs_mount();
	char *s;

	ASSERT_EQ(0, err) TH_LOG("tracefs at " TRACEFS ": %s", strerror(-err));
	s = read_all(TRACEFS "/options/record-cmd");
	if (s && (s[0] == '0' || s[0] == '1')) {
		self->record_cmd = s[0];
		err = write_str(TRACEFS "/options/record-cmd", "0");
		EXPECT_EQ(0, err) TH_LOG("record-cmd: %s", strerror(-err));
	}
	free(s);
}

/* In the harness's parent: runs after the test body even if it crashed. */
FIXTURE_TEARDOWN_PARENT(tr)
{
	char path[256];
	int k;

	for (k = 0; k < self->nr_inst; k++) {
		if (self->in[k].event)
			snprintf(path, sizeof(path), "%s/events/dpusim/%s/enable",
				 self->in[k].dir, self->in[k].event);
		else
			snprintf(path, sizeof(path), "%s/events/dpusim/enable",
				 self->in[k].dir);
		write_str(path, "0");
		EXPECT_EQ(0, rmdir(self->in[k].dir))
			TH_LOG("rmdir %s: %s", self->in[k].dir, strerror(errno));
	}
	if (self->record_cmd == '1')
		write_str(TRACEFS "/options/record-cmd", "1");
}

/* The enable file of instance @k */
static void inst_enable_path(const struct inst *in, char *path, size_t len)
{
	if (in->event)
		snprintf(path, len, "%s/events/dpusim/%s/enable", in->dir,
			 in->event);
	else
		snprintf(path, len, "%s/events/dpusim/enable", in->dir);
}

/*
 * A new instance for @event (NULL: the whole dpusim system), the event
 * still disabled; its index.
 */
static int inst_add(struct __test_metadata *_metadata,
		    FIXTURE_DATA(tr) *self, const char *event)
{
	struct inst *in = &self->in[self->nr_inst];
	char path[256], *s;
	int k = self->nr_inst;

	if (k >= MAX_INST) {
		TH_LOG("too many instances");
		EXPECT_LT(k, MAX_INST);
		return -1;
	}
	snprintf(in->dir, sizeof(in->dir), TRACEFS "/instances/dpusim_te_%d_%d",
		 (int)getpid(), k);
	in->event = event;
	if (mkdir(in->dir, 0755)) {
		TH_LOG("mkdir %s: %s", in->dir, strerror(errno));
		EXPECT_EQ(0, -errno);
		return -1;
	}
	self->nr_inst++;	/* the teardown removes it from now on */
	inst_enable_path(in, path, sizeof(path));
	s = read_all(path);
	if (!s) {
		TH_LOG("%s: %s (dpusim.ko without tracepoints?)", path,
		       strerror(errno));
		EXPECT_NE(NULL, s);
		return -1;
	}
	/* a new instance starts with every event off */
	EXPECT_EQ('0', s[0]) TH_LOG("%s: \"%s\"", path, s);
	free(s);
	return k;
}

/* Set the enable file of every instance to @on */
static void trace_enable(struct __test_metadata *_metadata,
			 FIXTURE_DATA(tr) *self, bool on)
{
	char path[256];
	int k, err;

	for (k = 0; k < self->nr_inst; k++) {
		inst_enable_path(&self->in[k], path, sizeof(path));
		err = write_str(path, on ? "1" : "0");
		ASSERT_EQ(0, err) TH_LOG("%s: %s", path, strerror(-err));
	}
}

/* Empty the buffer of every instance */
static void trace_clear(struct __test_metadata *_metadata,
			FIXTURE_DATA(tr) *self)
{
	char path[256];
	int k, fd;

	for (k = 0; k < self->nr_inst; k++) {
		snprintf(path, sizeof(path), "%s/trace", self->in[k].dir);
		fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
		close(fd);
	}
}

/* Enable the events, then clear the buffers: a recording begins */
static void trace_start(struct __test_metadata *_metadata,
			FIXTURE_DATA(tr) *self)
{
	trace_enable(_metadata, self, true);
	trace_clear(_metadata, self);
}

static void trace_stop(struct __test_metadata *_metadata,
		       FIXTURE_DATA(tr) *self)
{
	trace_enable(_metadata, self, false);
}

/*
 * Read instance @k's trace file into @t: every line that is not a '#'
 * comment is an event (a line that is not "...: name: args" is kept with
 * name "?", so nothing unexpected goes unnoticed).
 */
static void trace_read(struct __test_metadata *_metadata,
		       FIXTURE_DATA(tr) *self, int k, struct tbuf *t)
{
	char path[256], *line, *next, *p, *q;

	memset(t, 0, sizeof(*t));
	ASSERT_LE(0, k);
	snprintf(path, sizeof(path), "%s/trace", self->in[k].dir);
	t->raw = read_all(path);
	ASSERT_NE(NULL, t->raw) TH_LOG("%s: %s", path, strerror(errno));
	for (line = t->raw; *line; line = next) {
		struct tev *e = &t->ev[t->n];
		size_t len;

		next = strchr(line, '\n');
		len = next ? (size_t)(next - line) : strlen(line);
		next = next ? next + 1 : line + len;
		if (!len || line[0] == '#')
			continue;
		ASSERT_LT(t->n, MAX_EV) TH_LOG("more than %d events:\n%s",
					       MAX_EV, RAW(t));
		t->n++;
		snprintf(e->name, sizeof(e->name), "?");
		snprintf(e->args, sizeof(e->args), "%.*s", (int)len, line);
		p = memmem(line, len, ": dpusim_", 9);
		if (!p)
			continue;
		p += 2;
		q = memchr(p, ':', line + len - p);
		if (!q || q + 1 >= line + len || q[1] != ' ')
			continue;
		snprintf(e->name, sizeof(e->name), "%.*s", (int)(q - p), p);
		snprintf(e->args, sizeof(e->args), "%.*s",
			 (int)(line + len - (q + 2)), q + 2);
	}
}

/* Events named @name in @t */
static int ev_count(const struct tbuf *t, const char *name)
{
	int i, n = 0;

	for (i = 0; i < t->n; i++)
		n += !strcmp(t->ev[i].name, name);
	return n;
}

/*
 * Does @got match @pat exactly, where each '*' of @pat stands for a
 * decimal number (stored in cap[])?  The count of numbers, or -1.
 */
static int args_match(const char *got, const char *pat,
		      unsigned long long *cap)
{
	int n = 0;

	while (*pat) {
		if (*pat == '*') {
			char *end;

			if (!isdigit((unsigned char)*got))
				return -1;
			errno = 0;
			cap[n < MAX_CAP ? n : MAX_CAP - 1] = strtoull(got, &end, 10);
			if (errno)
				return -1;
			n++;
			got = end;
			pat++;
		} else if (*pat++ != *got++) {
			return -1;
		}
	}
	return *got ? -1 : n;
}

/*
 * Event @i of @t is @name with arguments @fmt (printf, then '*' for a
 * number, stored in @cap); logs both and the whole trace when not.
 */
static bool __attribute__((format(printf, 6, 7)))
ev_is(struct __test_metadata *_metadata, const struct tbuf *t, int i,
      const char *name, unsigned long long *cap, const char *fmt, ...)
{
	unsigned long long scratch[MAX_CAP];
	char pat[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pat, sizeof(pat), fmt, ap);
	va_end(ap);
	if (i >= t->n) {
		TH_LOG("event %d missing: want %s: %s; trace:\n%s", i, name,
		       pat, RAW(t));
		return false;
	}
	if (strcmp(t->ev[i].name, name) ||
	    args_match(t->ev[i].args, pat, cap ? cap : scratch) < 0) {
		TH_LOG("event %d: got %s: %s\n#   want %s: %s\n# trace:\n%s", i,
		       t->ev[i].name, t->ev[i].args, name, pat, RAW(t));
		return false;
	}
	return true;
}

/* EXPECT ev_is(): evaluates to whether event @i is what it should be */
#define EXPECT_EV(t, i, ...)						\
	({								\
		bool _ok = ev_is(_metadata, t, i, __VA_ARGS__);		\
									\
		EXPECT_TRUE(_ok);					\
		_ok;							\
	})

/* @t must hold exactly @n events */
#define EXPECT_NR_EV(t, nr)						\
	EXPECT_EQ(nr, (t)->n) TH_LOG("want %d events; trace:\n%s", nr, RAW(t))

/*
 * The clock source: a jiffies one (the debug kernel's, without TSC, HPET
 * or ACPI PM timer) makes every duration a multiple of a tick, most of
 * them 0; any other must give durations > 0.
 */
static char clocksource[64];

static bool coarse_clock(void)
{
	char *s;

	if (!clocksource[0]) {
		s = read_all("/sys/devices/system/clocksource/clocksource0/current_clocksource");
		snprintf(clocksource, sizeof(clocksource), "%s",
			 s ? strtok(s, "\n") ?: "?" : "?");
		free(s);
	}
	return strstr(clocksource, "jiffies");
}

/* A duration_ns: > 0 (>= 0 on a jiffies clock source), under 10 s */
#define EXPECT_DURATION(v)						\
	do {								\
		unsigned long long _d = (v);				\
									\
		EXPECT_GT(10000000000ULL, _d);				\
		if (!coarse_clock())					\
			EXPECT_LT(0, _d)				\
				TH_LOG("duration_ns=0, clock source %s", \
				       clocksource);			\
	} while (0)

/* ------------------------------------------------------------ DPUs */

static uint32_t rank_of(struct dpu_set_t dpu)
{
	return dpu_get_rank_id(dpu_get_rank(dpu_from_set(dpu)));
}

/* The DPU's number in its rank (the kernel's dpu=) */
static uint32_t dpu_num(struct dpu_set_t dpu)
{
	struct dpu_t *d = dpu_from_set(dpu);

	return dpu_get_slice_id(d) * DPUSIM_DPUS_PER_SLICE + dpu_get_member_id(d);
}

/* Member @idx of @set (DPU_FOREACH order) */
static struct dpu_set_t nth_dpu(struct dpu_set_t set, uint32_t idx)
{
	struct dpu_set_t dpu, found = set;
	uint32_t i;

	DPU_FOREACH(set, dpu, i)
		if (i == idx)
			found = dpu;
	return found;
}

/* Launch with the library's fault messages kept off the test's stderr */
static dpu_error_t launch_quiet(struct dpu_set_t set)
{
	struct capture c;
	dpu_error_t r;

	cap_begin(&c);
	r = dpu_launch(set, DPU_SYNCHRONOUS);
	free(cap_end(&c));
	return r;
}

/* crash on @set: DPU @bad (index in the set) crashes (SIGSEGV), or none */
static void crash_setup(struct __test_metadata *_metadata,
			struct dpu_set_t set, int bad)
{
	uint32_t zero = 0, one = 1;

	ASSERT_EQ(DPU_OK, dpu_copy_to(set, "mode", 0, &zero, 4));
	ASSERT_EQ(DPU_OK, dpu_copy_to(set, "tasklet", 0, &one, 4));
	if (bad >= 0)
		ASSERT_EQ(DPU_OK, dpu_copy_to(nth_dpu(set, bad), "mode", 0,
					      &one, 4));
}

/* ------------------------------------------------------- tag matching */

#define RX_LEN	(64U << 10)
#define TX_LEN	(64U << 10)

/* One context: an SRQ on scq, a QP on qcq connected to it, rx and tx */
struct tm_env {
	struct dtm_context *ctx;
	struct dtm_cq *scq, *qcq;
	struct dtm_srq *srq;
	struct dtm_qp *qp;
	uint8_t *rx, *tx;
	struct dtm_mr *rxmr, *txmr;
	uint32_t srqn, qpn, lkey;
};

static void tm_env_open(struct __test_metadata *_metadata, struct tm_env *m)
{
	struct dtm_srq_init_attr sa = {
		.max_num_tags = 32, .max_ops = 16, .max_wr = 32, .max_sge = 4,
	};
	struct dtm_qp_init_attr qa = { .max_sge = 4 };

	memset(m, 0, sizeof(*m));
	m->ctx = dtm_open_device(NULL);
	ASSERT_NE(NULL, m->ctx) TH_LOG("dtm_open_device: %s", strerror(errno));
	m->scq = dtm_create_cq(m->ctx, 64);
	ASSERT_NE(NULL, m->scq);
	m->qcq = dtm_create_cq(m->ctx, 64);
	ASSERT_NE(NULL, m->qcq);
	sa.cq = m->scq;
	m->srq = dtm_create_srq(m->ctx, &sa);
	ASSERT_NE(NULL, m->srq) TH_LOG("dtm_create_srq: %s", strerror(errno));
	qa.cq = m->qcq;
	m->qp = dtm_create_qp(m->ctx, &qa);
	ASSERT_NE(NULL, m->qp) TH_LOG("dtm_create_qp: %s", strerror(errno));
	ASSERT_EQ(0, dtm_connect(m->qp, m->srq->srq_num));
	m->srqn = m->srq->srq_num;
	m->qpn = m->qp->qp_num;
	m->rx = mmap(NULL, RX_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m->rx);
	m->tx = mmap(NULL, TX_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m->tx);
	memset(m->rx, 0xee, RX_LEN);
	tm_fill(m->tx, TX_LEN, 1);
	m->rxmr = dtm_reg_mr(m->ctx, m->rx, RX_LEN, DTM_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, m->rxmr);
	m->txmr = dtm_reg_mr(m->ctx, m->tx, TX_LEN,
			     DTM_ACCESS_LOCAL_WRITE | DTM_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, m->txmr);
	m->lkey = m->rxmr->lkey;
}

static void tm_env_close(struct tm_env *m)
{
	if (m->ctx)
		dtm_close_device(m->ctx);
	if (m->rx && m->rx != MAP_FAILED)
		munmap(m->rx, RX_LEN);
	if (m->tx && m->tx != MAP_FAILED)
		munmap(m->tx, TX_LEN);
	memset(m, 0, sizeof(*m));
}

#define RX(m, off)	((uint64_t)(uintptr_t)((m)->rx + (off)))

/*
 * A raw context (tm_ioctl.h, so the CQ handles are known): an SRQ on a CQ
 * of @cqe entries with @nbufs untagged buffers of 256 bytes, a QP on its
 * own CQ connected to it.
 */
struct raw_rx {
	int fd;
	struct tm_cq scq, qcq;
	uint32_t srq, srqn, qp, qpn, lkey;
	uint8_t *buf;
};

static void raw_rx_open(struct __test_metadata *_metadata, struct raw_rx *r,
			uint32_t cqe, uint32_t nbufs)
{
	uint32_t i;

	memset(r, 0, sizeof(*r));
	r->fd = tm_open();
	ASSERT_LE(0, r->fd) TH_LOG(TM_PATH ": %s", strerror(errno));
	r->buf = mmap(NULL, 16 * 256, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r->buf);
	ASSERT_EQ(0, tm_reg_mr(r->fd, r->buf, 16 * 256,
			       DPUSIM_TM_ACCESS_LOCAL_WRITE, &r->lkey));
	ASSERT_EQ(0, tm_create_cq(r->fd, 64, &r->qcq));
	ASSERT_EQ(0, tm_create_cq(r->fd, cqe, &r->scq));
	ASSERT_NE(r->qcq.handle, r->scq.handle);
	ASSERT_EQ(0, tm_create_srq(r->fd, r->scq.handle, 8, 4, 16, 1, &r->srq,
				   &r->srqn));
	ASSERT_EQ(0, tm_create_qp(r->fd, r->qcq.handle, 1, &r->qp, &r->qpn));
	ASSERT_EQ(0, tm_connect(r->fd, r->qp, r->srqn));
	for (i = 0; i < nbufs && i < 16; i++)
		ASSERT_EQ(0, tm_post_recv(r->fd, r->srq, r->lkey,
					  r->buf + i * 256, 256, 1000 + i));
}

static void raw_rx_close(struct raw_rx *r)
{
	tm_cq_unmap(&r->scq);
	tm_cq_unmap(&r->qcq);
	if (r->fd > 0)
		close(r->fd);
	if (r->buf && r->buf != MAP_FAILED)
		munmap(r->buf, 16 * 256);
	memset(r, 0, sizeof(*r));
}

/* An unexpected eager message of 8 payload bytes: 0 or errno */
static int raw_send_unexp(struct raw_rx *r, uint64_t tag)
{
	static const uint8_t pay[8] = "payload";

	return tm_send_eager(r->fd, r->qp, tag, 7, pay, sizeof(pay), 0);
}

/* ============================================================ rank side */

/*
 * dpu_copy_to of 4096 bytes to DPU 3 of a set, a gather from the 8 DPUs
 * (push_xfer FROM_DPU), an asynchronous push to the 8 DPUs: one
 * dpusim_xfer each, every field exact, duration_ns > 0, modeled_ns > 0.
 * The modeled time is a function of the call alone: the same call again,
 * or the same push made synchronous, gives the same modeled_ns.
 */
TEST_F(tr, xfer)
{
	struct dpu_set_t set, dpu;
	unsigned long long cap[MAX_CAP], m_one, m_gather, m_push;
	uint8_t *in, *out;
	struct capture c;
	struct tbuf t;
	uint32_t rank, i;
	dpu_error_t r;
	int k;

	in = malloc(8 * 4096);
	out = malloc(8 * 4096);
	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	tm_fill(in, 8 * 4096, 5);
	memset(out, 0, 8 * 4096);
	ASSERT_EQ(DPU_OK, dpu_alloc(8, NULL, &set));
	dpu = nth_dpu(set, 3);
	rank = rank_of(dpu);
	ASSERT_EQ(3, dpu_num(dpu));
	k = inst_add(_metadata, self, "dpusim_xfer");
	ASSERT_LE(0, k);

	/* synchronous, to one DPU */
	trace_start(_metadata, self);
	ASSERT_EQ(DPU_OK, dpu_copy_to(dpu, HEAP, 0, in, 4096));
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 1);
	m_one = 0;
	if (EXPECT_EV(&t, 0, "dpusim_xfer", cap,
		      "rank=%u dpus=1 blocks=1 bytes=4096 dir=to_dpu async=0 duration_ns=* modeled_ns=*",
		      rank)) {
		EXPECT_DURATION(cap[0]);
		m_one = cap[1];
		EXPECT_LT(0, m_one);
	}
	free(t.raw);

	/* the same call again: the same modeled time */
	trace_start(_metadata, self);
	ASSERT_EQ(DPU_OK, dpu_copy_to(dpu, HEAP, 0, in, 4096));
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 1);
	if (EXPECT_EV(&t, 0, "dpusim_xfer", cap,
		      "rank=%u dpus=1 blocks=1 bytes=4096 dir=to_dpu async=0 duration_ns=* modeled_ns=*",
		      rank))
		EXPECT_EQ(m_one, cap[1]);
	free(t.raw);

	/* synchronous gather of 512 bytes from each of the 8 DPUs */
	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, out + i * 512));
	trace_start(_metadata, self);
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_FROM_DPU, HEAP, 0, 512,
					DPU_XFER_DEFAULT));
	trace_stop(_metadata, self);
	EXPECT_EQ(0, memcmp(out + 3 * 512, in, 512));
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 1);
	m_gather = 0;
	if (EXPECT_EV(&t, 0, "dpusim_xfer", cap,
		      "rank=%u dpus=8 blocks=8 bytes=4096 dir=from_dpu async=0 duration_ns=* modeled_ns=*",
		      rank)) {
		EXPECT_DURATION(cap[0]);
		m_gather = cap[1];
		/* 8 DPUs read back cost more than one DPU written */
		EXPECT_LT(m_one, m_gather);
	}
	free(t.raw);

	/* asynchronous push of 1024 bytes to each of the 8 DPUs */
	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, in + i * 1024));
	trace_start(_metadata, self);
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_TO_DPU, HEAP, 8192, 1024,
					DPU_XFER_ASYNC));
	ASSERT_EQ(DPU_OK, dpu_sync(set));
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 1);
	m_push = 0;
	if (EXPECT_EV(&t, 0, "dpusim_xfer", cap,
		      "rank=%u dpus=8 blocks=8 bytes=8192 dir=to_dpu async=1 duration_ns=* modeled_ns=*",
		      rank)) {
		EXPECT_DURATION(cap[0]);
		m_push = cap[1];
		EXPECT_LT(0, m_push);
	}
	free(t.raw);

	/* the same push, synchronous: the same modeled time */
	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, in + i * 1024));
	trace_start(_metadata, self);
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_TO_DPU, HEAP, 8192, 1024,
					DPU_XFER_DEFAULT));
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 1);
	if (EXPECT_EV(&t, 0, "dpusim_xfer", cap,
		      "rank=%u dpus=8 blocks=8 bytes=8192 dir=to_dpu async=0 duration_ns=* modeled_ns=*",
		      rank))
		EXPECT_EQ(m_push, cap[1]);
	free(t.raw);

	/* a refused transfer (past the MRAM) is no transfer */
	trace_start(_metadata, self);
	cap_begin(&c);
	r = dpu_copy_to(nth_dpu(set, 3), HEAP, 1U << 31, in, 4096);
	free(cap_end(&c));
	EXPECT_EQ(DPU_ERR_INVALID_MRAM_ACCESS, r);
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 0);
	free(t.raw);

	dpu_free(set);
	free(in);
	free(out);
}

/* Two asynchronous pushes: set of 8 x 1024 bytes, then DPU 3 alone x 4096 */
static void two_async_pushes(struct __test_metadata *_metadata,
			     struct dpu_set_t set, uint8_t *in)
{
	struct dpu_set_t dpu;
	uint32_t i;

	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, in + i * 1024));
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_TO_DPU, HEAP, 0, 1024,
					DPU_XFER_ASYNC));
	ASSERT_EQ(DPU_OK, dpu_prepare_xfer(nth_dpu(set, 3), in + 8192));
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_TO_DPU, HEAP, 65536, 4096,
					DPU_XFER_ASYNC));
	ASSERT_EQ(DPU_OK, dpu_sync(set));
}

/*
 * Two queued jobs: dpusim_async_queue for each, with consecutive job
 * numbers, their DPUs, blocks and bytes, queued >= 1.
 */
TEST_F(tr, async_queue)
{
	unsigned long long a[MAX_CAP], b[MAX_CAP];
	struct dpu_set_t set;
	struct tbuf t;
	bool ok0, ok1;
	uint8_t *in;
	uint32_t rank;
	int k;

	in = calloc(1, 16384);
	ASSERT_NE(NULL, in);
	ASSERT_EQ(DPU_OK, dpu_alloc(8, NULL, &set));
	rank = rank_of(nth_dpu(set, 0));
	k = inst_add(_metadata, self, "dpusim_async_queue");
	ASSERT_LE(0, k);

	trace_start(_metadata, self);
	two_async_pushes(_metadata, set, in);
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 2);
	ok0 = EXPECT_EV(&t, 0, "dpusim_async_queue", a,
			"rank=%u job=* dpus=8 blocks=8 bytes=8192 queued=*",
			rank);
	ok1 = EXPECT_EV(&t, 1, "dpusim_async_queue", b,
			"rank=%u job=* dpus=1 blocks=1 bytes=4096 queued=*",
			rank);
	if (ok0 && ok1) {
		EXPECT_EQ(a[0] + 1, b[0]) TH_LOG("jobs %llu then %llu", a[0], b[0]);
		/* the first may have started before the second came */
		EXPECT_EQ(1, a[1]);
		EXPECT_LE(1, b[1]);
		EXPECT_GE(2, b[1]);
	}
	free(t.raw);

	/* a synchronous transfer is queued nowhere */
	trace_start(_metadata, self);
	ASSERT_EQ(DPU_OK, dpu_copy_to(set, HEAP, 0, in, 4096));
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 0);
	free(t.raw);
	dpu_free(set);
	free(in);
}

/*
 * The same two jobs: dpusim_async_done for each, err=0, with the job
 * numbers dpusim_async_queue gave them (a second instance records that
 * event only), durations > 0.
 */
TEST_F(tr, async_done)
{
	unsigned long long q[2][MAX_CAP], d[2][MAX_CAP];
	struct dpu_set_t set;
	struct tbuf t, tq;
	uint8_t *in;
	uint32_t rank;
	int k, kq, i;

	in = calloc(1, 16384);
	ASSERT_NE(NULL, in);
	ASSERT_EQ(DPU_OK, dpu_alloc(8, NULL, &set));
	rank = rank_of(nth_dpu(set, 0));
	k = inst_add(_metadata, self, "dpusim_async_done");
	kq = inst_add(_metadata, self, "dpusim_async_queue");
	ASSERT_LE(0, k);
	ASSERT_LE(0, kq);

	trace_start(_metadata, self);
	two_async_pushes(_metadata, set, in);
	trace_stop(_metadata, self);
	trace_read(_metadata, self, kq, &tq);
	ASSERT_EQ(2, tq.n) TH_LOG("queue trace:\n%s", RAW(&tq));
	ASSERT_TRUE(ev_is(_metadata, &tq, 0, "dpusim_async_queue", q[0],
			  "rank=%u job=* dpus=8 blocks=8 bytes=8192 queued=*", rank));
	ASSERT_TRUE(ev_is(_metadata, &tq, 1, "dpusim_async_queue", q[1],
			  "rank=%u job=* dpus=1 blocks=1 bytes=4096 queued=*", rank));

	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 2);
	for (i = 0; i < 2; i++) {
		if (!EXPECT_EV(&t, i, "dpusim_async_done", d[i],
			       "rank=%u job=%llu bytes=%u err=0 wait_ns=* duration_ns=*",
			       rank, q[i][0], i ? 4096 : 8192))
			continue;
		EXPECT_GT(10000000000ULL, d[i][0]);	/* wait_ns */
		EXPECT_DURATION(d[i][1]);
	}
	free(t.raw);
	free(tq.raw);
	dpu_free(set);
	free(in);
}

/* empty on a set of 4: a launch_start per DPU; then DPU 2 alone: one */
TEST_F(tr, launch_start)
{
	struct dpu_set_t set, dpu;
	bool seen[64] = { false };
	unsigned long long cap[MAX_CAP];
	struct tbuf t;
	uint32_t rank, i;
	int k;

	ASSERT_EQ(DPU_OK, dpu_alloc(4, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("empty"), NULL));
	rank = rank_of(nth_dpu(set, 0));
	k = inst_add(_metadata, self, "dpusim_launch_start");
	ASSERT_LE(0, k);

	trace_start(_metadata, self);
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 4);
	for (i = 0; i < 4 && i < (uint32_t)t.n; i++) {
		if (EXPECT_EV(&t, i, "dpusim_launch_start", cap,
			      "rank=%u dpu=*", rank) && cap[0] < 64) {
			EXPECT_FALSE(seen[cap[0]]) TH_LOG("dpu %llu twice", cap[0]);
			seen[cap[0]] = true;
		}
	}
	DPU_FOREACH(set, dpu, i)
		EXPECT_TRUE(seen[dpu_num(dpu)]) TH_LOG("no start of dpu %u", i);
	free(t.raw);

	dpu = nth_dpu(set, 2);
	trace_start(_metadata, self);
	ASSERT_EQ(DPU_OK, dpu_launch(dpu, DPU_SYNCHRONOUS));
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 1);
	EXPECT_EV(&t, 0, "dpusim_launch_start", NULL,
		  "rank=%u dpu=%u", rank, dpu_num(dpu));
	free(t.raw);
	dpu_free(set);
}

/*
 * A clean launch of 4: launch_end state=done for each, duration > 0 and
 * modeled cycles; then the crash program with DPU 1 crashing: state=fault
 * for it, done for the others.
 */
TEST_F(tr, launch_end)
{
	unsigned long long cap[MAX_CAP];
	struct dpu_set_t set, dpu;
	int state[64];		/* 0 none, 1 done, 2 fault */
	struct tbuf t;
	uint32_t rank, i, crash_dpu;
	char key[32];
	int k, round;

	ASSERT_EQ(DPU_OK, dpu_alloc(4, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("crash"), NULL));
	rank = rank_of(nth_dpu(set, 0));
	crash_dpu = dpu_num(nth_dpu(set, 1));
	snprintf(key, sizeof(key), "dpu=%u ", crash_dpu);
	k = inst_add(_metadata, self, "dpusim_launch_end");
	ASSERT_LE(0, k);

	for (round = 0; round < 2; round++) {
		crash_setup(_metadata, set, round ? 1 : -1);
		trace_start(_metadata, self);
		EXPECT_EQ(round ? DPU_ERR_DPU_FAULT : DPU_OK, launch_quiet(set));
		trace_stop(_metadata, self);
		trace_read(_metadata, self, k, &t);
		EXPECT_NR_EV(&t, 4);
		memset(state, 0, sizeof(state));
		for (i = 0; i < 4 && i < (uint32_t)t.n; i++) {
			bool fault = round && strstr(t.ev[i].args, key);

			if (!EXPECT_EV(&t, i, "dpusim_launch_end",
				       cap, "rank=%u dpu=* state=%s duration_ns=* modeled_cycles=*",
				       rank, fault ? "fault" : "done"))
				continue;
			EXPECT_DURATION(cap[1]);
			/* a modeled program: its run's cycles, a fault's up to it */
			EXPECT_LT(0ULL, cap[2]);
			if (cap[0] < 64) {
				EXPECT_EQ(0, state[cap[0]]) TH_LOG("dpu %llu twice", cap[0]);
				state[cap[0]] = fault ? 2 : 1;
			}
		}
		DPU_FOREACH(set, dpu, i)
			EXPECT_EQ(round && dpu_num(dpu) == crash_dpu ? 2 : 1,
				  state[dpu_num(dpu)])
				TH_LOG("round %d, dpu %u", round, dpu_num(dpu));
		free(t.raw);
	}
	dpu_free(set);
}

/* DPU 1 of 4 crashes: exactly one dpusim_fault, for it; a clean run: none */
TEST_F(tr, fault)
{
	struct dpu_set_t set;
	struct tbuf t;
	uint32_t rank;
	int k;

	ASSERT_EQ(DPU_OK, dpu_alloc(4, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("crash"), NULL));
	rank = rank_of(nth_dpu(set, 0));
	k = inst_add(_metadata, self, "dpusim_fault");
	ASSERT_LE(0, k);

	crash_setup(_metadata, set, 1);
	trace_start(_metadata, self);
	EXPECT_EQ(DPU_ERR_DPU_FAULT, launch_quiet(set));
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 1);
	EXPECT_EV(&t, 0, "dpusim_fault", NULL,
		  "rank=%u dpu=%u", rank, dpu_num(nth_dpu(set, 1)));
	free(t.raw);

	crash_setup(_metadata, set, -1);
	trace_start(_metadata, self);
	EXPECT_EQ(DPU_OK, launch_quiet(set));
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 0);
	free(t.raw);
	dpu_free(set);
}

/* ========================================================= tag matching */

/*
 * ADD (tag and the handle the library returned), DEL of it, SYNC, three
 * untagged buffers in one call, an ADD that also syncs: one dpusim_tm_post
 * each, srq = the SRQ's number.
 */
TEST_F(tr, tm_post)
{
	const uint64_t tag = 0xfedcba9876543210ULL;
	struct dtm_sge sge[3];
	struct dtm_recv_wr wr[3];
	struct dtm_recv_wr *bad = NULL;
	struct tm_env m;
	struct tbuf t;
	uint32_t h, h2;
	int k, i;

	tm_env_open(_metadata, &m);
	k = inst_add(_metadata, self, "dpusim_tm_post");
	ASSERT_LE(0, k);

	trace_start(_metadata, self);
	ASSERT_EQ(0, tm_add(m.srq, 1, 0, 0, 11, tag, FULL, RX(&m, 0), 256,
			    m.lkey, &h));
	ASSERT_EQ(0, tm_del(m.srq, 2, 0, h));
	ASSERT_EQ(0, tm_sync(m.srq, 3, 0, 0));
	for (i = 0; i < 3; i++) {
		sge[i] = (struct dtm_sge){ RX(&m, 4096 + i * 256), 256, m.lkey };
		wr[i] = (struct dtm_recv_wr){
			.wr_id = 20 + i, .next = i < 2 ? &wr[i + 1] : NULL,
			.sg_list = &sge[i], .num_sge = 1,
		};
	}
	ASSERT_EQ(0, dtm_post_srq_recv(m.srq, wr, &bad));
	ASSERT_EQ(0, tm_add(m.srq, 4, DTM_OPS_TM_SYNC, 0, 12, 0x42, FULL,
			    RX(&m, 1024), 256, m.lkey, &h2));
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 7);
	EXPECT_EV(&t, 0, "dpusim_tm_post", NULL,
		  "srq=%u op=add tag=0x%llx handle=%u", m.srqn,
		  (unsigned long long)tag, h);
	EXPECT_EV(&t, 1, "dpusim_tm_post", NULL,
		  "srq=%u op=del tag=0x0 handle=%u", m.srqn, h);
	EXPECT_EV(&t, 2, "dpusim_tm_post", NULL,
		  "srq=%u op=sync tag=0x0 handle=0", m.srqn);
	for (i = 3; i < 6; i++)
		EXPECT_EV(&t, i, "dpusim_tm_post", NULL,
			  "srq=%u op=recv tag=0x0 handle=0", m.srqn);
	EXPECT_EV(&t, 6, "dpusim_tm_post", NULL,
		  "srq=%u op=add tag=0x42 handle=%u", m.srqn, h2);
	free(t.raw);

	/* a refused post (DEL of an unknown handle) is no post */
	trace_start(_metadata, self);
	EXPECT_EQ(EINVAL, tm_del(m.srq, 5, 0, h2 + 1000));
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 0);
	free(t.raw);
	tm_env_close(&m);
}

/*
 * An eager message of 100 bytes matching a posted tag (rndv=0, bytes =
 * the payload), a rendezvous of 3000 (rndv=1, bytes = the RVH length);
 * a no-tag message matches nothing, not even a wildcard tag.
 */
TEST_F(tr, tm_match)
{
	uint8_t pay[100];
	struct dtm_wc wc[4];
	struct tm_env m;
	struct tbuf t;
	uint32_t h1, h2, h3;
	int k;

	tm_env_open(_metadata, &m);
	tm_fill(pay, sizeof(pay), 9);
	ASSERT_EQ(0, tm_add(m.srq, 1, 0, 0, 11, 0x1234, FULL, RX(&m, 0), 256,
			    m.lkey, &h1));
	ASSERT_EQ(0, tm_add(m.srq, 2, 0, 0, 12, 0xabcdef0123ULL, FULL,
			    RX(&m, 4096), 4096, m.lkey, &h2));
	ASSERT_EQ(0, tm_add(m.srq, 3, 0, 0, 13, 0x7, 0, RX(&m, 8192), 256,
			    m.lkey, &h3));	/* a wildcard: NO_TAG bypasses it */
	ASSERT_EQ(0, tm_recv(m.srq, 4, RX(&m, 16384), 256, m.lkey));
	k = inst_add(_metadata, self, "dpusim_tm_match");
	ASSERT_LE(0, k);

	trace_start(_metadata, self);
	ASSERT_EQ(0, tm_send(m.qp, 10, DTM_TMH_EAGER, 0x55, 0x1234, pay,
			     sizeof(pay), 0));
	ASSERT_EQ(0, tm_send_rndv(m.qp, 11, 0x66, 0xabcdef0123ULL,
				  (uintptr_t)(m.tx + 100), m.txmr->rkey, 3000,
				  NULL, 0, 0));
	ASSERT_EQ(0, tm_send(m.qp, 12, DTM_TMH_NO_TAG, 0x77, 0x7, pay, 8, 0));
	trace_stop(_metadata, self);
	ASSERT_EQ(4, tm_poll(m.scq, wc, 4, TMO));
	EXPECT_EQ(0, memcmp(m.rx, pay, sizeof(pay)));
	EXPECT_EQ(0, memcmp(m.rx + 4096, m.tx + 100, 3000));
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 2);
	EXPECT_EV(&t, 0, "dpusim_tm_match", NULL,
		  "srq=%u tag=0x1234 handle=%u bytes=100 rndv=0",
		  m.srqn, h1);
	EXPECT_EV(&t, 1, "dpusim_tm_match", NULL,
		  "srq=%u tag=0xabcdef0123 handle=%u bytes=3000 rndv=1",
		  m.srqn, h2);
	free(t.raw);
	tm_env_close(&m);
}

/*
 * A message whose tag is not posted lands in an untagged buffer:
 * dpusim_tm_unexpected with its tag and the bytes written (TMH included,
 * as the completion's byte_len); a matched or a no-tag message is not.
 */
TEST_F(tr, tm_unexpected)
{
	uint8_t pay[20];
	struct dtm_wc wc[3];
	struct tm_env m;
	struct tbuf t;
	uint32_t h;
	int k;

	tm_env_open(_metadata, &m);
	tm_fill(pay, sizeof(pay), 4);
	ASSERT_EQ(0, tm_recv(m.srq, 7, RX(&m, 4096), 256, m.lkey));
	ASSERT_EQ(0, tm_recv(m.srq, 8, RX(&m, 8192), 256, m.lkey));
	ASSERT_EQ(0, tm_add(m.srq, 1, 0, 0, 101, 0x10, FULL, RX(&m, 0), 256,
			    m.lkey, &h));
	k = inst_add(_metadata, self, "dpusim_tm_unexpected");
	ASSERT_LE(0, k);

	trace_start(_metadata, self);
	ASSERT_EQ(0, tm_send(m.qp, 3, DTM_TMH_EAGER, 0x55, 0x1122334455ULL,
			     pay, sizeof(pay), 0));
	ASSERT_EQ(0, tm_send(m.qp, 4, DTM_TMH_NO_TAG, 0x56, 0x99, pay, 8, 0));
	ASSERT_EQ(0, tm_send(m.qp, 5, DTM_TMH_EAGER, 0x57, 0x10, pay, 8, 0));
	trace_stop(_metadata, self);
	ASSERT_EQ(3, tm_poll(m.scq, wc, 3, TMO));
	EXPECT_EQ(DTM_WC_RECV, wc[0].opcode);
	EXPECT_EQ(36, wc[0].byte_len);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 1);
	EXPECT_EV(&t, 0, "dpusim_tm_unexpected", NULL,
		  "srq=%u tag=0x1122334455 bytes=36", m.srqn);
	free(t.raw);
	tm_env_close(&m);
}

/*
 * A SYNC op after one unexpected message (unexpected=1), a SYNC with 0,
 * an ADD with DTM_OPS_TM_SYNC and 1: one dpusim_tm_sync each; an ADD
 * without the flag: none.
 */
TEST_F(tr, tm_sync)
{
	uint8_t pay[8] = "abcdefg";
	struct dtm_wc wc;
	struct tm_env m;
	struct tbuf t;
	uint32_t h;
	int k;

	tm_env_open(_metadata, &m);
	ASSERT_EQ(0, tm_recv(m.srq, 7, RX(&m, 4096), 256, m.lkey));
	ASSERT_EQ(0, tm_send(m.qp, 1, DTM_TMH_EAGER, 1, 0x99, pay, 8, 0));
	ASSERT_EQ(1, tm_poll(m.scq, &wc, 1, TMO));
	EXPECT_EQ(DTM_WC_TM_SYNC_REQ, wc.wc_flags & DTM_WC_TM_SYNC_REQ);
	k = inst_add(_metadata, self, "dpusim_tm_sync");
	ASSERT_LE(0, k);

	trace_start(_metadata, self);
	ASSERT_EQ(0, tm_sync(m.srq, 2, DTM_OPS_SIGNALED, 1));
	ASSERT_EQ(0, tm_add(m.srq, 3, 0, 0, 30, 0x98, FULL, RX(&m, 0), 64,
			    m.lkey, &h));
	ASSERT_EQ(0, tm_sync(m.srq, 4, 0, 0));
	ASSERT_EQ(0, tm_add(m.srq, 5, DTM_OPS_TM_SYNC, 1, 31, 0x97, FULL,
			    RX(&m, 256), 64, m.lkey, &h));
	trace_stop(_metadata, self);
	ASSERT_EQ(1, tm_poll(m.scq, &wc, 1, TMO));
	EXPECT_EQ(DTM_WC_TM_SYNC, wc.opcode);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 3);
	EXPECT_EV(&t, 0, "dpusim_tm_sync", NULL,
		  "srq=%u unexpected=1", m.srqn);
	EXPECT_EV(&t, 1, "dpusim_tm_sync", NULL,
		  "srq=%u unexpected=0", m.srqn);
	EXPECT_EV(&t, 2, "dpusim_tm_sync", NULL,
		  "srq=%u unexpected=1", m.srqn);
	free(t.raw);
	tm_env_close(&m);
}

/*
 * The kernel reads the sender's region for an expected rendezvous of
 * 3000 bytes, and for an RDMA read from the SRQ of 512 (qp = the sender's
 * QP number, err=0); one with a wrong rkey fails with err=-EACCES.
 */
TEST_F(tr, tm_rndv_read)
{
	struct dtm_wc wc[4];
	struct tm_env m;
	struct tbuf t;
	uint32_t h;
	int k;

	tm_env_open(_metadata, &m);
	ASSERT_EQ(0, tm_add(m.srq, 1, 0, 0, 400, 0x500, FULL, RX(&m, 0), 4096,
			    m.lkey, &h));
	ASSERT_EQ(0, tm_add(m.srq, 2, 0, 0, 401, 0x501, FULL, RX(&m, 4096),
			    4096, m.lkey, &h));
	k = inst_add(_metadata, self, "dpusim_tm_rndv_read");
	ASSERT_LE(0, k);

	trace_start(_metadata, self);
	ASSERT_EQ(0, tm_send_rndv(m.qp, 10, 0x33, 0x500, (uintptr_t)(m.tx + 100),
				  m.txmr->rkey, 3000, NULL, 0, 0));
	ASSERT_EQ(0, tm_srq_read(m.srq, m.qpn, 11, (uintptr_t)m.tx,
				 m.txmr->rkey, RX(&m, 8192), 512, m.lkey,
				 DTM_SEND_SIGNALED));
	/* rx is not REMOTE_READ: both reads are refused */
	ASSERT_EQ(0, tm_srq_read(m.srq, m.qpn, 12, (uintptr_t)m.rx,
				 m.rxmr->rkey, RX(&m, 12288), 256, m.lkey,
				 DTM_SEND_SIGNALED));
	ASSERT_EQ(0, tm_send_rndv(m.qp, 13, 0x34, 0x501, (uintptr_t)m.rx,
				  m.rxmr->rkey, 1000, NULL, 0, 0));
	trace_stop(_metadata, self);
	EXPECT_EQ(0, memcmp(m.rx, m.tx + 100, 3000));
	EXPECT_EQ(0, memcmp(m.rx + 8192, m.tx, 512));
	ASSERT_EQ(4, tm_poll(m.scq, wc, 4, TMO));
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 4);
	EXPECT_EV(&t, 0, "dpusim_tm_rndv_read", NULL,
		  "qp=%u bytes=3000 err=0", m.qpn);
	EXPECT_EV(&t, 1, "dpusim_tm_rndv_read", NULL,
		  "qp=%u bytes=512 err=0", m.qpn);
	EXPECT_EV(&t, 2, "dpusim_tm_rndv_read", NULL,
		  "qp=%u bytes=256 err=%d", m.qpn, -EACCES);
	EXPECT_EV(&t, 3, "dpusim_tm_rndv_read", NULL,
		  "qp=%u bytes=1000 err=%d", m.qpn, -EACCES);
	free(t.raw);
	tm_env_close(&m);
}

/*
 * The FIN of an expected rendezvous, and one the software sends from the
 * SRQ (after an incomplete rendezvous): dpusim_tm_fin with the sender's
 * QP number; a no-tag message sent the same way is no FIN.
 */
TEST_F(tr, tm_fin)
{
	uint8_t fin[32], nt[16];
	struct dtm_wc wc[4];
	struct dtm_tmh tmh;
	struct tm_env m;
	struct tbuf t;
	uint32_t h;
	int k;

	tm_env_open(_metadata, &m);
	ASSERT_EQ(0, tm_add(m.srq, 1, 0, 0, 400, 0x500, FULL, RX(&m, 0), 4096,
			    m.lkey, &h));
	tm_rndv_hdr(fin, DTM_TMH_FIN, 0x34, 0x600, (uintptr_t)m.tx,
		    m.txmr->rkey, 200);
	dtm_tmh_build(&tmh, DTM_TMH_NO_TAG, 0, 0);
	memcpy(nt, &tmh, sizeof(nt));
	k = inst_add(_metadata, self, "dpusim_tm_fin");
	ASSERT_LE(0, k);

	trace_start(_metadata, self);
	ASSERT_EQ(0, tm_send_rndv(m.qp, 10, 0x33, 0x500, (uintptr_t)(m.tx + 100),
				  m.txmr->rkey, 3000, NULL, 0, 0));
	ASSERT_EQ(0, tm_srq_send(m.srq, m.qpn, 11, fin, sizeof(fin), 0));
	ASSERT_EQ(0, tm_srq_send(m.srq, m.qpn, 12, nt, sizeof(nt), 0));
	trace_stop(_metadata, self);
	ASSERT_EQ(3, tm_poll(m.qcq, wc, 3, TMO));
	EXPECT_EQ(DTM_TMH_FIN, wc[0].data[0]);
	EXPECT_EQ(DTM_TMH_FIN, wc[1].data[0]);
	EXPECT_EQ(DTM_WC_TM_NO_TAG, wc[2].opcode);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 2);
	EXPECT_EV(&t, 0, "dpusim_tm_fin", NULL, "qp=%u",
		  m.qpn);
	EXPECT_EV(&t, 1, "dpusim_tm_fin", NULL, "qp=%u",
		  m.qpn);
	free(t.raw);
	tm_env_close(&m);
}

/* The completions expected on one CQ, in order; handle 0: learn it */
struct cq_want {
	uint32_t handle;
	int n, used;
	uint32_t op[8], st[8], fl[8];
};

static void cq_want_add(struct cq_want *w, uint32_t op, uint32_t st,
			uint32_t fl)
{
	if (w->n < 8) {
		w->op[w->n] = op;
		w->st[w->n] = st;
		w->fl[w->n] = fl;
		w->n++;
	}
}

/*
 * Every event of @t is a dpusim_tm_completion of CQ @a or @b, each CQ's
 * in the order of its completions, with their opcode, status and flags;
 * a CQ without a handle takes the first one not the other's.
 */
static void check_completions(struct __test_metadata *_metadata,
			      const struct tbuf *t, struct cq_want *a,
			      struct cq_want *b)
{
	struct cq_want *w;
	unsigned int cq;
	int i;

	for (i = 0; i < t->n; i++) {
		if (sscanf(t->ev[i].args, "cq=%u ", &cq) != 1) {
			EXPECT_EV(t, i, "dpusim_tm_completion",
				  NULL, "cq=* ...");
			continue;
		}
		if (!a->handle && cq != b->handle)
			a->handle = cq;
		else if (!b->handle && cq != a->handle)
			b->handle = cq;
		w = cq == a->handle ? a : cq == b->handle ? b : NULL;
		if (!w || w->used >= w->n) {
			EXPECT_NE(NULL, w) TH_LOG("event %d of an unknown CQ, or one too many; trace:\n%s",
						 i, RAW(t));
			if (w)
				EXPECT_LT(w->used, w->n);
			continue;
		}
		EXPECT_EV(t, i, "dpusim_tm_completion", NULL,
			  "cq=%u opcode=%u status=%u flags=0x%x", cq,
			  w->op[w->used], w->st[w->used], w->fl[w->used]);
		w->used++;
	}
	EXPECT_EQ(a->n, a->used);
	EXPECT_EQ(b->n, b->used);
	EXPECT_NE(a->handle, b->handle);
}

/*
 * Completions through the library (an ADD, a matched eager message with a
 * signaled send, one over its buffer, a rendezvous with its FIN): one
 * dpusim_tm_completion each, opcode, status and flags those of the
 * dtm_wc the library returns, in order per CQ, cq the same for every
 * completion of one CQ and different between the SRQ's and the QP's (the
 * library does not expose the handle).  Through the raw interface the cq
 * is exactly the handle CREATE_CQ returned.
 */
TEST_F(tr, tm_completion)
{
	struct cq_want a = { 0 }, b = { 0 };
	struct dpusim_tm_cqe cqe[4];
	uint8_t pay[50];
	struct dtm_wc wc[8];
	struct raw_rx r;
	struct tm_env m;
	struct tbuf t;
	uint32_t h;
	int k, i, n;

	tm_env_open(_metadata, &m);
	tm_fill(pay, sizeof(pay), 2);
	k = inst_add(_metadata, self, "dpusim_tm_completion");
	ASSERT_LE(0, k);

	trace_start(_metadata, self);
	ASSERT_EQ(0, tm_add(m.srq, 1, DTM_OPS_SIGNALED, 0, 100, 0x10, FULL,
			    RX(&m, 0), 256, m.lkey, &h));
	ASSERT_EQ(0, tm_send(m.qp, 2, DTM_TMH_EAGER, 1, 0x10, pay, sizeof(pay),
			     DTM_SEND_SIGNALED));
	ASSERT_EQ(0, tm_add(m.srq, 3, 0, 0, 101, 0x20, FULL, RX(&m, 256), 16,
			    m.lkey, &h));
	ASSERT_EQ(0, tm_send(m.qp, 4, DTM_TMH_EAGER, 2, 0x20, pay, sizeof(pay),
			     0));
	ASSERT_EQ(0, tm_add(m.srq, 5, 0, 0, 102, 0x30, FULL, RX(&m, 4096),
			    4096, m.lkey, &h));
	ASSERT_EQ(0, tm_send_rndv(m.qp, 6, 3, 0x30, (uintptr_t)m.tx,
				  m.txmr->rkey, 3000, NULL, 0, 0));
	trace_stop(_metadata, self);

	n = tm_poll(m.scq, wc, 8, 200);
	ASSERT_EQ(5, n);
	EXPECT_EQ(DTM_WC_TM_ADD, wc[0].opcode);
	EXPECT_EQ(DTM_WC_TM_RECV, wc[1].opcode);
	EXPECT_EQ(DTM_WC_LOC_LEN_ERR, wc[2].status);
	for (i = 0; i < n; i++)
		cq_want_add(&a, wc[i].opcode, wc[i].status, wc[i].wc_flags);
	n = tm_poll(m.qcq, wc, 8, 200);
	ASSERT_EQ(2, n);
	EXPECT_EQ(DTM_WC_SEND, wc[0].opcode);
	EXPECT_EQ(DTM_WC_RECV, wc[1].opcode);
	EXPECT_EQ(DTM_WC_INLINE, wc[1].wc_flags);
	for (i = 0; i < n; i++)
		cq_want_add(&b, wc[i].opcode, wc[i].status, wc[i].wc_flags);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 7);
	check_completions(_metadata, &t, &a, &b);
	TH_LOG("library CQs: SRQ's cq=%u, QP's cq=%u", a.handle, b.handle);
	free(t.raw);
	tm_env_close(&m);

	/* raw: an unexpected message with a signaled send */
	raw_rx_open(_metadata, &r, 64, 2);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	trace_start(_metadata, self);
	ASSERT_EQ(0, tm_send_eager(r.fd, r.qp, 0x77, 1, pay, 8,
				   DPUSIM_TM_SEND_SIGNALED));
	trace_stop(_metadata, self);
	a.handle = r.scq.handle;
	b.handle = r.qcq.handle;
	ASSERT_EQ(1, tm_cq_poll(&r.scq, cqe, 4));
	EXPECT_EQ(DPUSIM_TM_WC_RECV, cqe[0].opcode);
	cq_want_add(&a, cqe[0].opcode, cqe[0].status, cqe[0].wc_flags);
	ASSERT_EQ(1, tm_cq_poll(&r.qcq, cqe, 4));
	EXPECT_EQ(DPUSIM_TM_WC_SEND, cqe[0].opcode);
	cq_want_add(&b, cqe[0].opcode, cqe[0].status, cqe[0].wc_flags);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 2);
	check_completions(_metadata, &t, &a, &b);
	free(t.raw);
	raw_rx_close(&r);
}

/*
 * An SRQ CQ of 2 entries filled by unexpected messages: the next one
 * overruns it (EOVERFLOW to the sender), dpusim_tm_overrun with the CQ's
 * handle, once; drained, the same send works and overruns nothing.
 */
TEST_F(tr, tm_overrun)
{
	struct raw_rx r;
	struct tbuf t;
	uint32_t i;
	int k;

	raw_rx_open(_metadata, &r, 2, 8);
	k = inst_add(_metadata, self, "dpusim_tm_overrun");
	ASSERT_LE(0, k);

	trace_start(_metadata, self);
	for (i = 0; i < r.scq.nr; i++)
		ASSERT_EQ(0, raw_send_unexp(&r, 0x100 + i));
	EXPECT_EQ(EOVERFLOW, raw_send_unexp(&r, 0x200));
	EXPECT_EQ(1, r.scq.ring->overruns);
	tm_cq_drain(&r.scq);
	EXPECT_EQ(0, raw_send_unexp(&r, 0x201));
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 1);
	EXPECT_EV(&t, 0, "dpusim_tm_overrun", NULL, "cq=%u",
		  r.scq.handle);
	free(t.raw);
	raw_rx_close(&r);
}

/* ============================================================= all */

/* One of every operation above: each of the 14 events at least once */
static void workload(struct __test_metadata *_metadata, struct dpu_set_t set,
		     uint8_t *in)
{
	uint8_t pay[24];
	struct dpu_set_t dpu;
	struct dtm_wc wc[8];
	struct tm_env m;
	struct raw_rx r;
	uint32_t i, h;

	/* transfers, synchronous and asynchronous */
	ASSERT_EQ(DPU_OK, dpu_copy_to(set, HEAP, 0, in, 4096));
	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, in + i * 1024));
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_TO_DPU, HEAP, 4096, 1024,
					DPU_XFER_ASYNC));
	ASSERT_EQ(DPU_OK, dpu_sync(set));
	/* a clean run and a crash */
	crash_setup(_metadata, set, -1);
	ASSERT_EQ(DPU_OK, launch_quiet(set));
	crash_setup(_metadata, set, 1);
	ASSERT_EQ(DPU_ERR_DPU_FAULT, launch_quiet(set));

	/* tag matching */
	tm_env_open(_metadata, &m);
	tm_fill(pay, sizeof(pay), 3);
	ASSERT_EQ(0, tm_recv(m.srq, 1, RX(&m, 8192), 256, m.lkey));
	ASSERT_EQ(0, tm_add(m.srq, 2, DTM_OPS_SIGNALED, 0, 20, 0x1, FULL,
			    RX(&m, 0), 256, m.lkey, &h));
	ASSERT_EQ(0, tm_add(m.srq, 3, 0, 0, 21, 0x2, FULL, RX(&m, 256), 256,
			    m.lkey, &h));
	ASSERT_EQ(0, tm_del(m.srq, 4, 0, h));
	ASSERT_EQ(0, tm_add(m.srq, 5, 0, 0, 22, 0x3, FULL, RX(&m, 4096), 4096,
			    m.lkey, &h));
	ASSERT_EQ(0, tm_send(m.qp, 6, DTM_TMH_EAGER, 0, 0x1, pay, 24, 0));
	ASSERT_EQ(0, tm_send(m.qp, 7, DTM_TMH_EAGER, 0, 0x9, pay, 24, 0));
	ASSERT_EQ(0, tm_sync(m.srq, 8, 0, 1));
	ASSERT_EQ(0, tm_send_rndv(m.qp, 9, 0, 0x3, (uintptr_t)m.tx,
				  m.txmr->rkey, 2000, NULL, 0, 0));
	EXPECT_EQ(5, tm_poll(m.scq, wc, 8, 200));
	EXPECT_EQ(1, tm_poll(m.qcq, wc, 8, 200));
	tm_env_close(&m);
	raw_rx_open(_metadata, &r, 2, 8);
	for (i = 0; i < r.scq.nr; i++)
		ASSERT_EQ(0, raw_send_unexp(&r, 0x100 + i));
	EXPECT_EQ(EOVERFLOW, raw_send_unexp(&r, 0x200));
	raw_rx_close(&r);
}

/*
 * An instance with the whole dpusim system enabled records all 14 events
 * for one workload; disabled, the same workload leaves its buffer empty
 * (and every event's own enable file says 0).
 */
TEST_F(tr, disabled_events_record_nothing)
{
	char path[256], *s;
	struct dpu_set_t set;
	struct tbuf t;
	uint8_t *in;
	size_t e;
	int k, i;

	in = calloc(1, 16384);
	ASSERT_NE(NULL, in);
	ASSERT_EQ(DPU_OK, dpu_alloc(4, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("crash"), NULL));
	k = inst_add(_metadata, self, NULL);
	ASSERT_LE(0, k);

	trace_start(_metadata, self);
	workload(_metadata, set, in);
	trace_stop(_metadata, self);
	trace_read(_metadata, self, k, &t);
	for (e = 0; e < NR_EVENTS; e++)
		if (!ev_count(&t, all_events[e])) {
			TH_LOG("no %s in:\n%s", all_events[e], RAW(&t));
			EXPECT_LE(1, ev_count(&t, all_events[e]));
		}
	for (i = 0; i < t.n; i++)
		EXPECT_STRNE("?", t.ev[i].name) TH_LOG("line %s", t.ev[i].args);
	free(t.raw);

	for (e = 0; e < NR_EVENTS; e++) {
		snprintf(path, sizeof(path), "%s/events/dpusim/%s/enable",
			 self->in[k].dir, all_events[e]);
		s = read_all(path);
		ASSERT_NE(NULL, s) TH_LOG("%s: %s", path, strerror(errno));
		EXPECT_EQ('0', s[0]) TH_LOG("%s: %s", path, s);
		free(s);
	}
	trace_clear(_metadata, self);
	workload(_metadata, set, in);
	trace_read(_metadata, self, k, &t);
	EXPECT_NR_EV(&t, 0);
	free(t.raw);
	dpu_free(set);
	free(in);
}

TEST_HARNESS_MAIN
