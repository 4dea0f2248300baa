// SPDX-License-Identifier: GPL-2.0
/*
 * Race fuzzer of /dev/dpusim/tm: threads of one process and two processes
 * of one user racing the creates, the destroys, CONNECT, the three POSTs,
 * REG/DEREG_MR and the reading of completion rings (poll(), the mapped
 * ring), on handles and keys they guess instead of know: the lowest free
 * handle (a create takes the lowest free one), the number or key after the
 * last one seen (SRQ numbers, QP numbers and keys are allocated cyclically,
 * module wide), and numbers the other process publishes in shared memory.
 * A use-after-free between two such calls (issue 29) lives in a window of
 * a few instructions: KASAN names it on the debug kernel; the fuzzer checks
 * what user space can see:
 *
 *  - every errno is one uapi/dpusim.h documents for the call as made;
 *  - what a create returns is in range (handle, ring geometry, key);
 *  - CONNECT and DESTROY_QP of one QP that both succeed mean the connect
 *    linked the QP first, so the destroy unlinked it: the SRQ's CQ holds
 *    the flush completion naming the QP, and a POST_SEND from the SRQ to
 *    the QP's number fails with ENOENT;
 *  - completions read from the rings are well formed, and a ring's
 *    producer is never more than the ring's size ahead of its consumer;
 *  - the contexts, regions and pinned pages are all gone after close;
 *  - nothing hangs: every wait is bounded, and a thread or process still in
 *    a call HANG_GRACE_S seconds after the budget fails the family.
 *
 * One TEST per race family, so that a report names what raced:
 *
 *  connect_destroy_qp  each round, CONNECT and DESTROY_QP of one new QP,
 *                      the callers on two CPUs released together by a
 *                      spinning barrier, with no offset or a jitter
 *                      between the calls; the destroyer is a thread, then
 *                      a forked process
 *  create_destroy_srq, a thread and a forked process on each CPU, one
 *  create_destroy_cq,  file: each CREATEs (REG_MRs) in a tight loop and
 *  create_destroy_qp,  between two creates DESTROYs (DEREG_MRs) a guessed
 *  reg_dereg_mr        handle (key), most often another racer's newest
 *  posts_vs_destroy    one context: every kind of post, poll() and the
 *                      rings against the churn of SRQs, QPs and regions,
 *                      by threads and a forked process sharing the file
 *  two_processes       two contexts of one user: a sender process's QPs
 *                      connect and send to a receiver process's SRQs, which
 *                      answer and RDMA-read the sender's region, both
 *                      churning what they own; numbers and keys go
 *                      through shared memory
 *
 * A kernel report (KASAN, UBSAN, lockdep, WARN, an oops) read from
 * /dev/kmsg while a family runs stops the family and fails it, with the
 * seconds it took; a line at warning level marks each family's start in
 * the kernel log, so that the console's timestamps time the reports too.
 *
 * Environment: DPUSIM_FUZZ_SEED (default: time and pid), DPUSIM_FUZZ_SECONDS
 * (the whole run's budget, default 25, shared by the families that run,
 * by their weights in shares[]: "-t create_destroy_srq" runs that family
 * alone for all of it).
 */
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "fuzz_rng.h"
#include "common.h"
#include "tm_ioctl.h"

#define PAGE		4096UL
#define NSEC		1000000000ULL
#define BUF_LEN		(64U << 10)	/* each context's region */
#define RX_LEN		(32U << 10)	/* [0, RX_LEN): posted buffers */
#define SLOT		256U		/* one posted buffer */
#define SRC_OFF		RX_LEN		/* [SRC_OFF, BUF_LEN): messages, RDMA reads */
#define NR_TAGS		8U		/* tags 0 .. NR_TAGS - 1 */
#define CQ_ENTRIES	1024U
#define HANG_GRACE_S	30U		/* a call this long past the budget hangs */
#define NR_ERRNO	136		/* errno histogram (EHWPOISON is 133) */
#define ACC_RW		(DPUSIM_TM_ACCESS_LOCAL_WRITE | DPUSIM_TM_ACCESS_REMOTE_READ)

static uint64_t seed0;
static uint64_t budget_ms = 25000;	/* DPUSIM_FUZZ_SECONDS */
static unsigned int weight_sum;		/* of the families that run */

/*
 * Each family's part of the budget (with the default budget, the weight
 * is in seconds): more for those whose window the unfixed kernel showed
 * to be hit more rarely (a CQ's create and destroy are the slowest, a
 * ring of pages each), less for create_destroy_qp, whose window KASAN
 * cannot see on a non-preemptible kernel (the QP is freed after an RCU
 * grace period, which the racer held up in its window delays).
 */
static const struct {
	const char *name;
	unsigned int weight;
} shares[] = {
	{ "connect_destroy_qp", 4 }, { "create_destroy_srq", 4 },
	{ "create_destroy_cq", 8 }, { "reg_dereg_mr", 2 },
	{ "create_destroy_qp", 1 }, { "posts_vs_destroy", 3 },
	{ "two_processes", 3 },
};

static unsigned int family_weight(const char *name)
{
	unsigned int i;

	for (i = 0; i < sizeof(shares) / sizeof(shares[0]); i++)
		if (!strcmp(shares[i].name, name))
			return shares[i].weight;
	return 1;
}

static uint64_t family_ms(const char *name)
{
	uint64_t ms = budget_ms * family_weight(name) / (weight_sum ?: 1);

	return ms ?: 1;
}

/* the two CPUs the racing pairs are pinned to; -1: one CPU, no pinning */
static int cpus[2] = { -1, -1 };

/* ------------------------------------------------------------ basics */

static void rng_seed(uint64_t s)
{
	rng_state = (s * 0x9E3779B97F4A7C15ULL) | 1;
	rnd();
}

static uint32_t below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int pct)
{
	return below(100) < pct;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

/*
 * A cheap timestamp for short intervals between CPUs: the TSC (QEMU's
 * is the host clock's, the same on every vCPU).  Under emulation the
 * guest's clock_gettime() is a system call (no TSC clocksource), as long
 * as the calls being timed.
 */
static uint64_t cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return now_ns();
#endif
}

/*
 * A delay of @n loop iterations.  No pause instruction: under emulation
 * (QEMU's TCG) it leaves the translated code, which makes each iteration
 * microseconds long and the offsets between racing calls that coarse.
 */
static void spin(uint32_t n)
{
	while (n--)
		__asm__ volatile("" ::: "memory");
}

/* Pin the calling thread to the racing pair's CPU @which (0 or 1). */
static void pin(int which)
{
	cpu_set_t set;

	if (cpus[which & 1] < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpus[which & 1], &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* MAP_SHARED memory: what a family's threads and processes share */
static void *shared_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* ------------------------------------------------------------ a family's run */

/* Shared by every thread and process of a family */
struct shared {
	atomic_bool stop;		/* a failure or a kernel report */
	atomic_bool over;		/* the budget is spent */
	atomic_int failed;		/* 1 once @why holds the first failure */
	atomic_ulong calls;
	atomic_ulong errs[NR_ERRNO];	/* by errno; [0]: successes */
	uint64_t t0, end, hard_end;	/* CLOCK_MONOTONIC: start, budget, hang */
	uint64_t seed;
	char why[512];
	char report[400];		/* the first kernel report line */
	uint64_t report_ns;
};

static void fail(struct shared *sh, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct shared *sh, const char *fmt, ...)
{
	char msg[sizeof(sh->why)];
	int zero = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (atomic_compare_exchange_strong(&sh->failed, &zero, 1))
		memcpy(sh->why, msg, sizeof(msg));
	atomic_store(&sh->stop, true);
}

/* The watcher thread raises @over at the deadline: no clock read per call */
static bool running(struct shared *sh)
{
	return !atomic_load_explicit(&sh->stop, memory_order_relaxed) &&
	       !atomic_load_explicit(&sh->over, memory_order_relaxed);
}

/*
 * The errnos uapi/dpusim.h documents for each call as this fuzzer makes
 * it (0-terminated).  Every call may also fail with ENOMEM (the kernel's
 * own bookkeeping) and EOVERFLOW (a CQ of the context overran: the
 * context's next call reports it once).  EINVAL is documented only where
 * a work request names a region by a key another thread may have
 * deregistered, or a tag entry by a handle its SRQ may never have issued;
 * EACCES never (one user).  ENOSPC of a post: the buffers one user's SRQs
 * hold together are capped (module parameter tm_user_bufs).
 */
#define E_ANY	ENOMEM, EOVERFLOW
static const int e_create[] = { ENOENT, ENOSPC, E_ANY, 0 };
static const int e_create_cq[] = { ENOSPC, E_ANY, 0 };
static const int e_reg[] = { ENOSPC, E_ANY, 0 };
static const int e_destroy[] = { ENOENT, E_ANY, 0 };
static const int e_destroy_cq[] = { ENOENT, EBUSY, E_ANY, 0 };
static const int e_connect[] = { ENOENT, EISCONN, E_ANY, 0 };
static const int e_send[] = { ENOENT, ENOTCONN, ECONNRESET, EAGAIN,
			      EREMOTEIO, E_ANY, 0 };
static const int e_send_sgl[] = { ENOENT, ENOTCONN, ECONNRESET, EAGAIN,
				  EREMOTEIO, EINVAL, E_ANY, 0 };
static const int e_srq_send[] = { ENOENT, EREMOTEIO, E_ANY, 0 };
static const int e_srq_read[] = { ENOENT, EREMOTEIO, EINVAL, E_ANY, 0 };
static const int e_srq_post[] = { ENOENT, ECONNRESET, EINVAL, ENOSPC, E_ANY, 0 };

/* Count @err of call @what; fail the family if the header does not allow it. */
static int check(struct shared *sh, const char *what, int err, const int *ok)
{
	const int *e;

	atomic_fetch_add_explicit(&sh->calls, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&sh->errs[err >= 0 && err < NR_ERRNO ? err : NR_ERRNO - 1],
				  1, memory_order_relaxed);
	if (!err)
		return 0;
	for (e = ok; *e; e++)
		if (*e == err)
			return err;
	fail(sh, "%s: errno %d (%s), which uapi/dpusim.h does not document for it",
	     what, err, strerror(err));
	return err;
}

/* A line in the kernel log (warning level: the console shows it). */
static void kmsg_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void kmsg_note(const char *fmt, ...)
{
	char line[256];
	ssize_t done;
	va_list ap;
	int fd, n;

	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "<4>dpusim tm_race_fuzz: ");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	done = write(fd, line, strlen(line));
	(void)done;	/* a note: nothing to do if it is lost */
	close(fd);
}

/*
 * The kernel's problem reports, as tools/vm-run finds them on the console
 * (kmemleak's come only from the scan it runs afterwards)
 */
static const char *const report_marks[] = {
	"BUG:", "WARNING:", "UBSAN:", "general protection fault", "Oops",
	"kernel BUG at", "possible circular locking", "possible recursive locking",
	"inconsistent lock state", "suspicious RCU usage", "INFO: task",
	"Kernel panic", NULL,
};

struct watch {
	struct shared *sh;
	atomic_bool quit;
	pthread_t thread;
	bool on;
};

/*
 * Raises the family's @over at its deadline, and reads /dev/kmsg from the
 * family's start: the first kernel report stops the family.  Without the
 * right to read it (not root), no report is watched.
 */
static void *watch_kmsg(void *arg)
{
	struct watch *w = arg;
	char rec[1024];
	const char *const *m;
	char *text, *nl;
	ssize_t n;
	int fd;

	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	while (!atomic_load(&w->quit)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (now_ns() >= w->sh->end)
			atomic_store(&w->sh->over, true);
		if (fd < 0) {
			usleep(20000);
			continue;
		}
		if (poll(&p, 1, 20) <= 0)
			continue;
		for (;;) {
			n = read(fd, rec, sizeof(rec) - 1);
			if (n < 0 && errno == EPIPE)
				continue;	/* records overwritten: go on */
			if (n <= 0)
				break;
			rec[n] = 0;
			text = strchr(rec, ';');
			text = text ? text + 1 : rec;
			nl = strchr(text, '\n');
			if (nl)
				*nl = 0;
			for (m = report_marks; *m; m++)
				if (strstr(text, *m))
					break;
			if (*m && !w->sh->report[0]) {
				w->sh->report_ns = now_ns();
				n = strlen(text);
				if (n > (ssize_t)sizeof(w->sh->report) - 1)
					n = sizeof(w->sh->report) - 1;
				memcpy(w->sh->report, text, n);
				atomic_store(&w->sh->stop, true);
			}
		}
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

struct family {
	const char *name;
	struct shared *sh;
	struct watch w;
	long long ctx0, mrs0, pin0;
};

static struct shared *family_begin(struct family *f, const char *name,
				   unsigned int nr)
{
	struct shared *sh = shared_alloc(sizeof(*sh));

	memset(f, 0, sizeof(*f));
	if (!sh)
		return NULL;
	f->name = name;
	f->sh = sh;
	sh->seed = seed0 + nr * 0x10001ULL;
	f->ctx0 = sysfs_tm_attr("contexts");
	f->mrs0 = sysfs_tm_attr("mrs");
	f->pin0 = sysfs_tm_attr("pinned_pages");
	ksft_print_msg("%s: seed %#llx (DPUSIM_FUZZ_SEED), %.1f s\n", name,
		       (unsigned long long)seed0, family_ms(name) / 1000.0);
	kmsg_note("%s: start, seed %#llx, %llu ms\n", name,
		  (unsigned long long)seed0, (unsigned long long)family_ms(name));
	sh->t0 = now_ns();
	sh->end = sh->t0 + family_ms(name) * 1000000ULL;
	sh->hard_end = sh->end + HANG_GRACE_S * NSEC;
	f->w.sh = sh;
	f->w.on = !pthread_create(&f->w.thread, NULL, watch_kmsg, &f->w);
	if (!f->w.on)
		return NULL;	/* no deadline without it */
	return sh;
}

/* Stop the watcher (a report of the last calls is in the log by now) and print the counts. */
static void family_end(struct family *f)
{
	struct shared *sh = f->sh;
	char line[1024];
	size_t n;
	int i;

	usleep(100000);
	atomic_store(&f->w.quit, true);
	if (f->w.on)
		pthread_join(f->w.thread, NULL);
	n = snprintf(line, sizeof(line), "%s: %lu calls in %.1f s:", f->name,
		     atomic_load(&sh->calls), (now_ns() - sh->t0) / 1e9);
	for (i = 0; i < NR_ERRNO && n < sizeof(line); i++)
		if (atomic_load(&sh->errs[i]))
			n += snprintf(line + n, sizeof(line) - n, " %s %lu",
				      i ? strerrorname_np(i) ?: "?" : "ok",
				      atomic_load(&sh->errs[i]));
	ksft_print_msg("%s\n", line);
	if (sh->report[0])
		ksft_print_msg("%s: kernel report %.2f s after the start: %s\n",
			       f->name, (sh->report_ns - sh->t0) / 1e9, sh->report);
	kmsg_note("%s: end\n", f->name);
}

/* Everything of the family's contexts is gone once they are closed and unmapped. */
static bool family_leaks(struct family *f, char *why, size_t len)
{
	long long ctx = 0, mrs = 0, pin = 0;
	int i;

	for (i = 0; i < 100; i++) {
		ctx = sysfs_tm_attr("contexts");
		mrs = sysfs_tm_attr("mrs");
		pin = sysfs_tm_attr("pinned_pages");
		if (ctx == f->ctx0 && mrs == f->mrs0 && pin == f->pin0)
			return false;
		usleep(20000);
	}
	snprintf(why, len, "after close: contexts %lld (was %lld), regions %lld (was %lld), pinned pages %lld (was %lld)",
		 ctx, f->ctx0, mrs, f->mrs0, pin, f->pin0);
	return true;
}

#define FAMILY_END(f)							\
	do {								\
		char __leak[256];					\
									\
		family_end(f);						\
		EXPECT_EQ(0, (f)->sh->report[0])			\
			TH_LOG("%s: kernel report %.2f s into the family: %s", \
			       (f)->name,				\
			       ((f)->sh->report_ns - (f)->sh->t0) / 1e9, \
			       (f)->sh->report);			\
		EXPECT_EQ(0, atomic_load(&(f)->sh->failed))		\
			TH_LOG("%s: %s", (f)->name, (f)->sh->why);	\
		if (!(f)->sh->report[0])				\
			EXPECT_FALSE(family_leaks(f, __leak, sizeof(__leak))) \
				TH_LOG("%s: %s", (f)->name, __leak);	\
	} while (0)

/* pthread_join() bounded by the family's hang limit */
static bool join_until(struct shared *sh, pthread_t t, const char *who)
{
	int64_t left = (int64_t)(sh->hard_end - now_ns());
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (left < 0)
		left = 0;
	ts.tv_sec += left / NSEC + (ts.tv_nsec + left % NSEC) / NSEC;
	ts.tv_nsec = (ts.tv_nsec + left % NSEC) % NSEC;
	if (!pthread_timedjoin_np(t, NULL, &ts))
		return true;
	fail(sh, "%s: still in a call %u s after the budget", who, HANG_GRACE_S);
	return false;
}

/* waitpid() bounded by the family's hang limit; then SIGKILL */
static bool reap_until(struct shared *sh, pid_t pid, const char *who)
{
	int status, i;

	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now_ns() > sh->hard_end) {
			kill(pid, SIGKILL);
			for (i = 0; i < 500 && waitpid(pid, &status, WNOHANG) == 0; i++)
				usleep(10000);
			fail(sh, "%s: still in a call %u s after the budget", who,
			     HANG_GRACE_S);
			return false;
		}
		usleep(10000);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fail(sh, "%s: ended with status %#x", who, status);
		return false;
	}
	return true;
}

/* Iterations of spin() in one microsecond (at least 1) */
static uint32_t spins_per_us(void)
{
	uint64_t t = now_ns();

	spin(1U << 20);
	t = now_ns() - t;
	return t ? ((1ULL << 20) * 1000 + t - 1) / t : 1;
}

/* ------------------------------------------------------------ rings */

static bool cqe_valid(const struct dpusim_tm_cqe *c)
{
	static const uint8_t ops[] = {
		DPUSIM_TM_WC_SEND, DPUSIM_TM_WC_RDMA_READ, DPUSIM_TM_WC_RECV,
		DPUSIM_TM_WC_TM_ADD, DPUSIM_TM_WC_TM_DEL, DPUSIM_TM_WC_TM_SYNC,
		DPUSIM_TM_WC_TM_RECV, DPUSIM_TM_WC_TM_NO_TAG,
	};
	static const uint8_t sts[] = {
		DPUSIM_TM_WC_SUCCESS, DPUSIM_TM_WC_LOC_LEN_ERR,
		DPUSIM_TM_WC_WR_FLUSH_ERR, DPUSIM_TM_WC_REM_ACCESS_ERR,
		DPUSIM_TM_WC_GENERAL_ERR, DPUSIM_TM_WC_TM_ERR,
		DPUSIM_TM_WC_TM_RNDV_INCOMPLETE,
	};
	bool op = false, st = false;
	unsigned int i;

	for (i = 0; i < sizeof(ops); i++)
		op |= c->opcode == ops[i];
	for (i = 0; i < sizeof(sts); i++)
		st |= c->status == sts[i];
	for (i = 0; i < 6; i++)
		if (c->__reserved[i])
			return false;
	return op && st &&
	       !(c->wc_flags & ~(DPUSIM_TM_WC_F_TM_SYNC_REQ | DPUSIM_TM_WC_F_TM_MATCH |
				 DPUSIM_TM_WC_F_TM_DATA_VALID | DPUSIM_TM_WC_F_INLINE));
}

/*
 * Consume the completions of @cq not yet read, the first @max of them
 * copied to @out: their number, or -1 after a failure (a producer more
 * than the ring ahead, a malformed completion).
 */
static int cq_take(struct shared *sh, struct tm_cq *cq, struct dpusim_tm_cqe *out,
		   int max)
{
	uint32_t prod = __atomic_load_n(&cq->ring->producer, __ATOMIC_ACQUIRE);
	uint32_t cons = cq->ring->consumer;
	int n = 0;

	if (prod - cons > cq->nr || cq->ring->nr_entries != cq->nr ||
	    cq->ring->entry_size != TM_CQE_SIZE) {
		fail(sh, "CQ %u: producer %u, consumer %u, %u entries of %u bytes (created with %u)",
		     cq->handle, prod, cons, cq->ring->nr_entries,
		     cq->ring->entry_size, cq->nr);
		return -1;
	}
	for (; cons != prod; cons++) {
		const struct dpusim_tm_cqe *c = tm_cqe_at(cq, cons);

		if (!cqe_valid(c)) {
			fail(sh, "CQ %u: a completion with opcode %u, status %u, flags %#x",
			     cq->handle, c->opcode, c->status, c->wc_flags);
			return -1;
		}
		if (n < max)
			memcpy(&out[n], c, sizeof(*c));
		n++;
	}
	__atomic_store_n(&cq->ring->consumer, cons, __ATOMIC_RELEASE);
	return n;
}

/* ------------------------------------------------------------ CONNECT vs DESTROY_QP */

/*
 * One QP per round: the leader CONNECTs it while the destroyer (thread
 * or process) DESTROYs it.  The two are released by @go and spin on
 * separate CPUs until then; @spins delays the destroyer, the leader's own
 * delay the connect.  The destroyer's spinning writes @beat; the leader
 * releases a round only while the beat is fresh, that is while both CPUs
 * run their racer: a host that has descheduled the destroyer's vCPU (or
 * an interrupt on its CPU) would otherwise make the connect always first.
 */
struct cdq {
	atomic_uint go;		/* the round the destroyer may run */
	atomic_uint done;	/* the round it has finished */
	_Atomic uint64_t beat;	/* cycles(), written while it waits */
	atomic_bool quit;
	uint32_t handle;	/* the round's QP */
	uint32_t spins;		/* the destroyer's delay */
	uint64_t released;	/* when the leader released the round (cycles()) */
	uint64_t seen;		/* when the destroyer saw it */
	int err;		/* its DESTROY_QP's errno */
	int fd;
};

static void cdq_destroyer(struct shared *sh, struct cdq *c)
{
	unsigned int r = atomic_load(&c->done), n = 0;

	pin(1);
	for (;;) {
		while (atomic_load_explicit(&c->go, memory_order_acquire) == r) {
			if (atomic_load_explicit(&c->quit, memory_order_relaxed))
				return;
			if (!(++n & 0xfffff) && now_ns() > sh->hard_end)
				return;
			if (!(n & 15))
				atomic_store_explicit(&c->beat, cycles(),
						      memory_order_relaxed);
		}
		r++;
		c->seen = cycles();
		spin(c->spins);
		c->err = tm_destroy(c->fd, DPUSIM_IOCTL_TM_DESTROY_QP, c->handle);
		atomic_store_explicit(&c->done, r, memory_order_release);
	}
}

static void *cdq_destroyer_thread(void *arg)
{
	void **a = arg;

	cdq_destroyer(a[0], a[1]);
	return NULL;
}

struct cdq_world {
	int fd;
	struct tm_cq scq, qcq;	/* the SRQ's CQ, the QPs' CQ */
	uint32_t srq, srqn;
	uint64_t rounds, connected, refused, recycled;
	uint64_t next_srq;	/* the round at which the SRQ is made again */
	int32_t width;		/* the widest jitter, spins */
	uint64_t late;		/* cycles(): a destroyer this late was held up */
	uint64_t fresh;		/* cycles(): a beat this recent is fresh */
	uint64_t nr_late;	/* rounds it was */
};

/* The SRQ, made again: a new srq_num for the next rounds */
static int cdq_new_srq(struct shared *sh, struct cdq_world *w)
{
	int err;

	if (w->srq) {
		err = tm_destroy(w->fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, w->srq);
		if (check(sh, "DESTROY_SRQ", err, e_destroy))
			return err;
		w->srq = 0;
		w->recycled++;
	}
	err = tm_create_srq(w->fd, w->scq.handle, 4, 4, 4, 1, &w->srq, &w->srqn);
	return check(sh, "CREATE_SRQ", err, e_create);
}

/*
 * A broken invariant left QP @qpn listed in the SRQ after it was freed,
 * with kfree_rcu(): KASAN flags a use only once the RCU batch holding it is
 * freed.  Destroying a few hundred QPs here (the batches are per CPU) fills
 * the batch, which is then freed after a grace period, not after a delay;
 * then the stale connection is used every 50 ms for up to 8 s (POST_SEND
 * from the SRQ reads the QP), and DESTROY_SRQ walks the SRQ's QPs.
 */
static void cdq_expose(struct shared *sh, struct cdq_world *w, uint32_t qpn)
{
	uint8_t msg[16];
	uint32_t h = 0;
	int i;

	for (i = 0; i < 1200; i++)
		if (!tm_create_qp(w->fd, w->qcq.handle, 1, &h, NULL))
			tm_destroy(w->fd, DPUSIM_IOCTL_TM_DESTROY_QP, h);
	tm_tmh(msg, DPUSIM_TM_TMH_NO_TAG, 0, 0);
	for (i = 0; i < 160 && !sh->report[0]; i++) {
		usleep(50000);
		tm_send_inline(w->fd, DPUSIM_TM_POST_FROM_SRQ, w->srq, qpn, msg,
			       sizeof(msg), 0, 0);
		tm_cq_drain(&w->qcq);
	}
	tm_destroy(w->fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, w->srq);
	w->srq = 0;
	usleep(200000);
}

/*
 * Rounds until @until (ns), each on a new QP (handle 1: the lowest free),
 * the SRQ made again every 256 rounds.  After each round: DESTROY_QP
 * succeeded (only the destroyer destroys the QP); a CONNECT that succeeded
 * came first, so the destroy flushed the connection; and the SRQ no
 * longer reaches the QP's number.
 */
static void cdq_rounds(struct shared *sh, struct cdq_world *w, struct cdq *c,
		       uint64_t until)
{
	struct dpusim_tm_cqe cqes[16];
	unsigned int r = atomic_load(&c->go);
	uint8_t msg[16];
	uint32_t h = 0, qpn = 0, n;
	int32_t off, j;
	int ea, eb, i, got;
	bool flush;

	tm_tmh(msg, DPUSIM_TM_TMH_NO_TAG, 0, 0);
	while (running(sh) && now_ns() < until) {
		if (!w->srq || w->rounds >= w->next_srq) {
			w->next_srq = w->rounds + 256;
			if (cdq_new_srq(sh, w))
				return;
		}
		ea = tm_create_qp(w->fd, w->qcq.handle, 1, &h, &qpn);
		if (check(sh, "CREATE_QP", ea, e_create))
			continue;
		/*
		 * The offset: none in half the rounds (the window follows the
		 * connect's lookup, which comes first when both start at once,
		 * the destroy taking the context's lock first), else a jitter
		 * of a sixteenth of the width or, in one round of eight, of all
		 * of it, for other relative speeds (kernel configurations,
		 * emulation).  Positive: the connect waits.
		 */
		j = below(2) ? 0 : below(4) ? w->width / 16 : w->width;
		off = (int32_t)below(2 * j + 1) - j;
		c->handle = h;
		c->spins = off < 0 ? -off : 0;
		for (n = 1;; n++) {
			uint64_t beat = atomic_load(&c->beat);

			/* a beat after this read of the clock is fresh too */
			if ((int64_t)(cycles() - beat) < (int64_t)w->fresh)
				break;
			if (!(n & 0xffff) && (!running(sh) || now_ns() > until)) {
				/* the QP goes with the context */
				return;
			}
		}
		c->released = cycles();
		atomic_store_explicit(&c->go, ++r, memory_order_release);
		spin(off > 0 ? off : 0);
		ea = tm_connect(w->fd, h, w->srqn);
		for (n = 0; atomic_load_explicit(&c->done, memory_order_acquire) != r; n++) {
			if (!(n & 0xfffff) && now_ns() > sh->hard_end) {
				fail(sh, "connect_destroy_qp: the destroyer is still in DESTROY_QP %u s after the budget",
				     HANG_GRACE_S);
				return;
			}
			spin(1);
		}
		eb = c->err;
		w->rounds++;
		check(sh, "CONNECT", ea, e_connect);
		check(sh, "DESTROY_QP", eb, e_destroy);
		if (atomic_load(&sh->failed))
			return;
		if (eb == EOVERFLOW) {	/* reported, not carried out */
			tm_destroy(w->fd, DPUSIM_IOCTL_TM_DESTROY_QP, h);
			tm_cq_drain(&w->scq);
			continue;
		}
		if (eb) {
			fail(sh, "DESTROY_QP of the round's QP (handle %u), which only the destroyer destroys: %s",
			     h, strerror(eb));
			return;
		}
		got = cq_take(sh, &w->scq, cqes, 16);
		if (got < 0 || cq_take(sh, &w->qcq, NULL, 0) < 0)
			return;
		for (i = 0, flush = false; i < got && i < 16; i++)
			flush |= cqes[i].status == DPUSIM_TM_WC_WR_FLUSH_ERR &&
				 cqes[i].qp_num == w->srqn && cqes[i].src_qp == qpn;
		if (ea == ENOENT)
			w->refused++;
		else if (!ea)
			w->connected++;
		/* the destroyer's CPU was held up (by the host, an interrupt) */
		if ((int64_t)(c->seen - c->released) > (int64_t)w->late)
			w->nr_late++;
		if (!ea && !flush) {
			fail(sh, "round %llu, %.2f s: CONNECT and DESTROY_QP of QP %u (qp_num %u) both succeeded, and the SRQ's CQ has no flush completion naming it: the connect linked it to SRQ %u after the destroy",
			     (unsigned long long)w->rounds, (now_ns() - sh->t0) / 1e9,
			     h, qpn, w->srqn);
			cdq_expose(sh, w, qpn);
			return;
		}
		if (ea && flush) {
			fail(sh, "round %llu: a flush completion for QP %u, whose CONNECT failed (%s)",
			     (unsigned long long)w->rounds, qpn, strerror(ea));
			return;
		}
		ea = tm_send_inline(w->fd, DPUSIM_TM_POST_FROM_SRQ, w->srq, qpn,
				    msg, sizeof(msg), 0, 0);
		if (ea != ENOENT && ea != EOVERFLOW) {
			fail(sh, "round %llu, %.2f s: POST_SEND from SRQ %u to QP %u after its DESTROY_QP returned: %s, not ENOENT",
			     (unsigned long long)w->rounds, (now_ns() - sh->t0) / 1e9,
			     w->srqn, qpn, strerror(ea));
			cdq_expose(sh, w, qpn);
			return;
		}
	}
}

TEST(connect_destroy_qp)
{
	struct family f;
	struct shared *sh = family_begin(&f, "connect_destroy_qp", 0);
	struct cdq_world w = { 0 };
	struct cdq *c = shared_alloc(sizeof(*c));
	void *arg[2] = { sh, c };
	uint64_t t, mid;
	pthread_t th;
	pid_t pid;
	int i;

	ASSERT_NE(NULL, sh);
	ASSERT_NE(NULL, c);
	rng_seed(sh->seed);
	w.fd = tm_open();
	ASSERT_LE(0, w.fd) TH_LOG("%s: %s", TM_PATH, strerror(errno));
	c->fd = w.fd;
	ASSERT_EQ(0, tm_create_cq(w.fd, CQ_ENTRIES, &w.scq));
	ASSERT_EQ(0, tm_create_cq(w.fd, CQ_ENTRIES, &w.qcq));
	/* the widest jitter, and lateness: one DESTROY_QP of a missing handle */
	t = now_ns();
	w.late = cycles();
	for (i = 0; i < 64; i++)
		tm_destroy(w.fd, DPUSIM_IOCTL_TM_DESTROY_QP, 1000);
	w.late = (cycles() - w.late) / 64;
	w.width = (now_ns() - t) / 64 * spins_per_us() / 1000 + 16;
	w.fresh = w.late / 4 + 1;

	/* first half: the destroyer is a thread; then a forked process */
	mid = sh->t0 + (sh->end - sh->t0) / 2;
	ASSERT_EQ(0, pthread_create(&th, NULL, cdq_destroyer_thread, arg));
	pin(0);
	cdq_rounds(sh, &w, c, mid);
	atomic_store(&c->quit, true);
	if (join_until(sh, th, "the destroyer thread") && running(sh)) {
		atomic_store(&c->quit, false);
		fflush(NULL);
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			cdq_destroyer(sh, c);
			_exit(0);
		}
		cdq_rounds(sh, &w, c, sh->end);
		atomic_store(&c->quit, true);
		reap_until(sh, pid, "the destroyer process");
	}
	ksft_print_msg("connect_destroy_qp: %llu rounds: the connect first in %llu, refused (ENOENT) in %llu; jitter up to %d spins; the destroyer held up in %llu; %llu SRQs\n",
		       (unsigned long long)w.rounds, (unsigned long long)w.connected,
		       (unsigned long long)w.refused, w.width,
		       (unsigned long long)w.nr_late, (unsigned long long)w.recycled + 1);
	tm_cq_unmap(&w.scq);
	tm_cq_unmap(&w.qcq);
	close(w.fd);
	FAMILY_END(&f);
}

/* ------------------------------------------------------------ create vs destroy */

enum kind { K_CQ, K_SRQ, K_QP, K_MR };

static const char *const create_name[] = {
	"CREATE_CQ", "CREATE_SRQ", "CREATE_QP", "REG_MR",
};
static const char *const destroy_name[] = {
	"DESTROY_CQ", "DESTROY_SRQ", "DESTROY_QP", "DEREG_MR",
};
static const unsigned long destroy_cmd[] = {
	DPUSIM_IOCTL_TM_DESTROY_CQ, DPUSIM_IOCTL_TM_DESTROY_SRQ,
	DPUSIM_IOCTL_TM_DESTROY_QP, DPUSIM_IOCTL_TM_DEREG_MR,
};

struct cd {
	int fd;
	enum kind kind;
	uint32_t cq;		/* the CQ of the SRQs and QPs */
	uint8_t *page;		/* what the regions register */
	_Atomic uint32_t last;	/* the last handle (lkey) a racer made */
	atomic_ulong made;	/* creates */
	atomic_ulong taken;	/* destroys of a guessed handle that succeeded */
	atomic_ulong mapped;	/* CQ rings mapped before a racer took them */
};

static uint32_t pow2_up(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* One create: its handle (lkey) in *@h, or an errno */
static int cd_create(struct shared *sh, struct cd *c, uint32_t *h)
{
	uint32_t num = 0, want;
	int err;

	switch (c->kind) {
	case K_CQ: {
		struct dpusim_tm_create_cq q = { .size = sizeof(q) };

		/* at most 16 entries: the ring is one page, the create quick */
		want = q.cqe = 1 + below(16);
		err = tm_call(c->fd, DPUSIM_IOCTL_TM_CREATE_CQ, &q);
		if (check(sh, create_name[c->kind], err, e_create_cq))
			return err;
		if (!q.handle || q.handle > DPUSIM_TM_MAX_CQ || q.cqe != pow2_up(want) ||
		    q.mmap_size < DPUSIM_TM_CQ_RING_ENTRIES + (uint64_t)q.cqe * TM_CQE_SIZE ||
		    q.mmap_size % PAGE || q.mmap_offset % PAGE)
			fail(sh, "CREATE_CQ of %u entries: handle %u, %u entries, mmap offset %#llx, size %#llx",
			     want, q.handle, q.cqe, (unsigned long long)q.mmap_offset,
			     (unsigned long long)q.mmap_size);
		*h = q.handle;
		/* the ring mapped, as another racer destroys the CQ */
		if (chance(10)) {
			void *p = mmap(NULL, q.mmap_size, PROT_READ | PROT_WRITE,
				       MAP_SHARED, c->fd, q.mmap_offset);

			if (p != MAP_FAILED) {
				atomic_fetch_add(&c->mapped, 1);
				munmap(p, q.mmap_size);
			} else if (errno != EINVAL && errno != ENOMEM) {
				fail(sh, "mmap of CQ %u's ring: %s", q.handle, strerror(errno));
			}
		}
		return 0;
	}
	case K_SRQ:
		err = tm_create_srq(c->fd, c->cq, 1, 1, 1, 1, h, &num);
		if (check(sh, create_name[c->kind], err, e_create))
			return err;
		if (!*h || *h > DPUSIM_TM_MAX_SRQ)
			fail(sh, "CREATE_SRQ: handle %u (srq_num %u)", *h, num);
		return 0;
	case K_QP:
		err = tm_create_qp(c->fd, c->cq, 1, h, &num);
		if (check(sh, create_name[c->kind], err, e_create))
			return err;
		if (!*h || *h > DPUSIM_TM_MAX_QP)
			fail(sh, "CREATE_QP: handle %u (qp_num %u)", *h, num);
		return 0;
	case K_MR: {
		struct dpusim_tm_reg_mr r = {
			.size = sizeof(r), .addr = (uintptr_t)c->page, .length = PAGE,
			.access = DPUSIM_TM_ACCESS_LOCAL_WRITE,
		};

		err = tm_call(c->fd, DPUSIM_IOCTL_TM_REG_MR, &r);
		if (check(sh, create_name[c->kind], err, e_reg))
			return err;
		if (!r.lkey || !r.rkey)
			fail(sh, "REG_MR: lkey %u, rkey %u", r.lkey, r.rkey);
		*h = r.lkey;
		return 0;
	}
	}
	return EINVAL;
}

static int cd_destroy(struct shared *sh, struct cd *c, uint32_t h)
{
	int err = tm_destroy(c->fd, destroy_cmd[c->kind], h);

	return check(sh, destroy_name[c->kind], err,
		     c->kind == K_CQ ? e_destroy_cq : e_destroy);
}

/*
 * A racer creates as fast as it can, publishing each handle (key), and
 * between two creates destroys a guessed handle: mostly 1 or 2 (a create
 * takes the lowest free handle, so a racer's new object is mostly there),
 * else 3 or the last one published.  Keys are cyclic and module wide: it
 * deregisters the key after the last one published (which the next
 * REG_MR takes) or one of the three before it (those of racers that have
 * not returned from their REG_MR yet: the others' creates move the last
 * key on meanwhile).  Racers run on both CPUs: whichever one is held up
 * between publishing its object and reading it, the other CPU is running
 * a racer.  Its own object a racer destroys one create later if the
 * guesses left it (a region, or a handle above 2), so that the tables
 * stay short.
 */
static void cd_racer(struct shared *sh, struct cd *c)
{
	uint32_t h = 0, mine = 0, last, g;

	while (running(sh)) {
		if (!cd_create(sh, c, &h)) {
			atomic_store_explicit(&c->last, h, memory_order_relaxed);
			atomic_fetch_add_explicit(&c->made, 1, memory_order_relaxed);
			if (mine)
				cd_destroy(sh, c, mine);
			mine = c->kind == K_MR || h > 2 ? h : 0;
		}
		last = atomic_load_explicit(&c->last, memory_order_relaxed);
		if (c->kind == K_MR)
			g = last + 1 - below(4);
		else
			g = below(10) < 8 ? 1 + below(2) : below(2) ? 3 : last;
		if (!cd_destroy(sh, c, g))
			atomic_fetch_add_explicit(&c->taken, 1, memory_order_relaxed);
	}
	if (mine)
		cd_destroy(sh, c, mine);
}

struct cd_arg {
	struct shared *sh;
	struct cd *c;
	int cpu;
	pthread_t thread;
};

static void *cd_racer_thread(void *arg)
{
	struct cd_arg *a = arg;

	pin(a->cpu);
	rng_seed(a->sh->seed + 1 + a->cpu);
	cd_racer(a->sh, a->c);
	return NULL;
}

/*
 * Four racers on one file: a thread and a forked process on each CPU (the
 * test's thread being CPU 0's).
 */
static void create_destroy(struct __test_metadata *_metadata, enum kind kind,
			   const char *name, unsigned int nr)
{
	struct family f;
	struct shared *sh = family_begin(&f, name, nr);
	struct cd *c = shared_alloc(sizeof(*c));
	struct tm_cq cq = { 0 };
	struct cd_arg th;
	pid_t pid[2];
	int i;

	ASSERT_NE(NULL, sh);
	ASSERT_NE(NULL, c);
	c->kind = kind;
	c->fd = tm_open();
	ASSERT_LE(0, c->fd) TH_LOG("%s: %s", TM_PATH, strerror(errno));
	c->page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, c->page);
	if (kind == K_SRQ || kind == K_QP) {
		ASSERT_EQ(0, tm_create_cq_nomap(c->fd, 4, &cq));
		c->cq = cq.handle;
	}
	fflush(NULL);
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (pid[i] == 0) {
			pin(i);
			rng_seed(sh->seed + 3 + i);
			cd_racer(sh, c);
			_exit(0);
		}
	}
	th = (struct cd_arg){ .sh = sh, .c = c, .cpu = 1 };
	ASSERT_EQ(0, pthread_create(&th.thread, NULL, cd_racer_thread, &th));
	pin(0);
	rng_seed(sh->seed);
	cd_racer(sh, c);
	join_until(sh, th.thread, "a racer thread");
	for (i = 0; i < 2; i++)
		reap_until(sh, pid[i], "a racer process");
	ksft_print_msg("%s: %lu %s succeeded; %lu %s of a guessed %s succeeded\n",
		       name, atomic_load(&c->made), create_name[kind],
		       atomic_load(&c->taken), destroy_name[kind],
		       kind == K_MR ? "key" : "handle");
	if (kind == K_CQ)
		ksft_print_msg("%s: %lu rings mapped\n", name, atomic_load(&c->mapped));
	close(c->fd);
	FAMILY_END(&f);
}

TEST(create_destroy_srq)
{
	create_destroy(_metadata, K_SRQ, "create_destroy_srq", 1);
}

TEST(create_destroy_cq)
{
	create_destroy(_metadata, K_CQ, "create_destroy_cq", 2);
}

TEST(reg_dereg_mr)
{
	create_destroy(_metadata, K_MR, "reg_dereg_mr", 3);
}

TEST(create_destroy_qp)
{
	create_destroy(_metadata, K_QP, "create_destroy_qp", 4);
}

/* ------------------------------------------------------------ chaos: posts, poll, churn */

/*
 * One context as the chaos families use it, in shared memory: numbers and
 * keys published for the guesses of the other threads and processes.
 */
struct world {
	int fd;
	struct tm_cq scq, qcq;		/* the SRQs' CQ, the QPs' CQ */
	uint8_t *buf;			/* BUF_LEN: [0, RX_LEN) posted, then messages */
	_Atomic uint32_t key;		/* the region's key (0: none) */
	_Atomic uint32_t srq_num, qp_num;	/* the last made */
	_Atomic uint32_t src_qp;	/* a sender seen in a completion */
	_Atomic uint32_t tag;		/* a tag entry's handle seen */
	_Atomic uint32_t unexp;		/* unexpected messages seen */
	atomic_ulong cqes;		/* completions read */
	struct world *peer;		/* the other end (itself in one context) */
};

enum {
	R_SRQ = 1 << 0,		/* create, destroy SRQs */
	R_QP = 1 << 1,		/* create, connect, destroy QPs */
	R_MR = 1 << 2,		/* register, deregister the region */
	R_SEND = 1 << 3,	/* POST_SEND on QPs */
	R_RECV = 1 << 4,	/* POST_SRQ_OPS, _RECV, POST_SEND from SRQs */
	R_ALL = 0x1f,
};

static int world_open(struct world *w)
{
	struct dpusim_tm_reg_mr r = { .size = sizeof(r), .length = BUF_LEN,
				      .access = ACC_RW };
	uint32_t i;
	int err;

	w->fd = tm_open();
	if (w->fd < 0)
		return errno;
	w->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (w->buf == MAP_FAILED)
		return errno;
	/* messages a send names by sg list: eager with tags 0 .. NR_TAGS - 1 */
	for (i = 0; i < NR_TAGS; i++) {
		tm_tmh(w->buf + SRC_OFF + i * SLOT, DPUSIM_TM_TMH_EAGER, i, i);
		memset(w->buf + SRC_OFF + i * SLOT + 16, 0x40 + i, SLOT - 16);
	}
	err = tm_create_cq(w->fd, CQ_ENTRIES, &w->scq);
	if (!err)
		err = tm_create_cq(w->fd, CQ_ENTRIES, &w->qcq);
	if (err)
		return err;
	r.addr = (uintptr_t)w->buf;
	err = tm_call(w->fd, DPUSIM_IOCTL_TM_REG_MR, &r);
	if (!err)
		atomic_store(&w->key, r.lkey);
	return err;
}

static void world_close(struct world *w)
{
	tm_cq_unmap(&w->scq);
	tm_cq_unmap(&w->qcq);
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	if (w->buf && w->buf != MAP_FAILED)
		munmap(w->buf, BUF_LEN);
}

/* An SRQ number to connect to: the peer's last, or the next one (cyclic) */
static uint32_t guess_srq_num(struct world *w)
{
	uint32_t n = atomic_load_explicit(&w->peer->srq_num, memory_order_relaxed);

	return n + (below(3) ? 0 : below(2) ? 1 : -1);
}

/* A QP number an SRQ sends to: a sender seen, the peer's last, or the next */
static uint32_t guess_qp_num(struct world *w)
{
	if (chance(40))
		return atomic_load_explicit(&w->src_qp, memory_order_relaxed);
	return atomic_load_explicit(&w->peer->qp_num, memory_order_relaxed) +
	       (below(3) ? 0 : 1);
}

static void sge_rx(struct world *w, struct dpusim_tm_sge *s)
{
	s->addr = (uintptr_t)w->buf + below(RX_LEN / SLOT) * SLOT;
	s->length = SLOT;
	s->lkey = atomic_load_explicit(&w->key, memory_order_relaxed);
}

static void post_recvs(struct shared *sh, struct world *w, uint32_t srq,
		       uint32_t nr)
{
	struct dpusim_tm_recv_wr wr[4] = { 0 };
	struct dpusim_tm_sge sge[4];
	uint32_t i;

	for (i = 0; i < nr && i < 4; i++) {
		sge_rx(w, &sge[i]);
		wr[i].wr_id = rnd();
		wr[i].sg_list = (uintptr_t)&sge[i];
		wr[i].num_sge = 1;
	}
	check(sh, "POST_SRQ_RECV",
	      tm_post(w->fd, DPUSIM_IOCTL_TM_POST_SRQ_RECV, 0, srq, 0, wr, i, NULL),
	      e_srq_post);
}

static void do_srq(struct shared *sh, struct world *w)
{
	uint32_t h = 0, num = 0;
	int err;

	if (chance(35)) {
		check(sh, "DESTROY_SRQ",
		      tm_destroy(w->fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, 1 + below(2)),
		      e_destroy);
		return;
	}
	err = tm_create_srq(w->fd, w->scq.handle, 32, 8, 16, 2, &h, &num);
	if (check(sh, "CREATE_SRQ", err, e_create))
		return;
	if (!h || h > DPUSIM_TM_MAX_SRQ)
		fail(sh, "CREATE_SRQ: handle %u", h);
	atomic_store_explicit(&w->srq_num, num, memory_order_relaxed);
	post_recvs(sh, w, h, 1 + below(4));
	if (h > 2)
		check(sh, "DESTROY_SRQ",
		      tm_destroy(w->fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, h), e_destroy);
}

static void do_qp(struct shared *sh, struct world *w)
{
	uint32_t h = 0, num = 0;
	int err;

	switch (below(4)) {
	case 0:
	case 1:
		err = tm_create_qp(w->fd, w->qcq.handle, 2, &h, &num);
		if (check(sh, "CREATE_QP", err, e_create))
			return;
		if (!h || h > DPUSIM_TM_MAX_QP)
			fail(sh, "CREATE_QP: handle %u", h);
		atomic_store_explicit(&w->qp_num, num, memory_order_relaxed);
		check(sh, "CONNECT", tm_connect(w->fd, h, guess_srq_num(w)), e_connect);
		if (h > 3)
			check(sh, "DESTROY_QP",
			      tm_destroy(w->fd, DPUSIM_IOCTL_TM_DESTROY_QP, h), e_destroy);
		return;
	case 2:
		check(sh, "CONNECT", tm_connect(w->fd, 1 + below(3), guess_srq_num(w)),
		      e_connect);
		return;
	default:
		check(sh, "DESTROY_QP",
		      tm_destroy(w->fd, DPUSIM_IOCTL_TM_DESTROY_QP, 1 + below(3)),
		      e_destroy);
	}
}

static void do_mr(struct shared *sh, struct world *w)
{
	struct dpusim_tm_reg_mr r = { .size = sizeof(r), .addr = (uintptr_t)w->buf,
				      .length = BUF_LEN, .access = ACC_RW };
	uint32_t k = atomic_load_explicit(&w->key, memory_order_relaxed);
	int err;

	if (chance(50)) {
		/* the current key, or the next one (keys are cyclic) */
		err = tm_destroy(w->fd, DPUSIM_IOCTL_TM_DEREG_MR, k + !below(4));
		check(sh, "DEREG_MR", err, e_destroy);
		return;
	}
	err = tm_call(w->fd, DPUSIM_IOCTL_TM_REG_MR, &r);
	if (check(sh, "REG_MR", err, e_reg))
		return;
	/* the region it replaces goes (a guess may have taken it already) */
	k = atomic_exchange(&w->key, r.lkey);
	if (k)
		check(sh, "DEREG_MR", tm_destroy(w->fd, DPUSIM_IOCTL_TM_DEREG_MR, k),
		      e_destroy);
}

/* POST_SEND on a QP: eager, no-tag, rendezvous or FIN; inline or by sg list */
static void do_send(struct shared *sh, struct world *w)
{
	struct dpusim_tm_send_wr wr[2] = { 0 };
	struct dpusim_tm_sge sge;
	uint32_t tag = below(NR_TAGS), len = 16, hdr = 16;
	bool sgl = chance(20);
	uint8_t msg[64];

	if (sgl) {	/* a prepared eager message of the region */
		sge.addr = (uintptr_t)w->buf + SRC_OFF + tag * SLOT;
		sge.length = 16 + below(SLOT - 16);
		sge.lkey = atomic_load_explicit(&w->key, memory_order_relaxed);
	} else {
		switch (below(4)) {
		case 0:
			tm_tmh(msg, DPUSIM_TM_TMH_NO_TAG, 0, 0);
			len += below(32);
			break;
		case 1:
			tm_tmh(msg, DPUSIM_TM_TMH_RNDV, 1, tag);
			tm_rvh(msg + 16, (uintptr_t)w->buf + SRC_OFF,
			       atomic_load_explicit(&w->key, memory_order_relaxed),
			       1 + below(2 * SLOT));
			hdr = 32;
			len = 32 + below(16);
			break;
		case 2:
			tm_tmh(msg, DPUSIM_TM_TMH_FIN, 0, tag);
			len = 32;
			break;
		default:
			tm_tmh(msg, DPUSIM_TM_TMH_EAGER, 2, tag);
			len += below(48);
		}
		memset(msg + hdr, 0x5a, len - hdr);
		sge.addr = (uintptr_t)msg;
		sge.length = len;
		sge.lkey = 0;
	}
	wr[0].wr_id = wr[1].wr_id = rnd();
	wr[0].opcode = wr[1].opcode = DPUSIM_TM_WR_SEND;
	wr[0].flags = wr[1].flags = (sgl ? 0 : DPUSIM_TM_SEND_INLINE) |
				    (chance(30) ? DPUSIM_TM_SEND_SIGNALED : 0);
	wr[0].sg_list = wr[1].sg_list = (uintptr_t)&sge;
	wr[0].num_sge = wr[1].num_sge = 1;
	check(sh, "POST_SEND",
	      tm_post(w->fd, DPUSIM_IOCTL_TM_POST_SEND, 0, 1 + below(3), 0, wr,
		      1 + below(2), NULL),
	      sgl ? e_send_sgl : e_send);
}

/* The SRQ side: list operations, untagged buffers, replies, RDMA reads */
static void do_recv(struct shared *sh, struct world *w)
{
	struct dpusim_tm_ops_wr ops[3] = { 0 };
	struct dpusim_tm_sge sge[3];
	struct dpusim_tm_send_wr wr = { 0 };
	uint32_t srq = 1 + below(2), i, nr;
	uint8_t msg[64];

	switch (below(5)) {
	case 0:
	case 1:
		nr = 1 + below(3);
		for (i = 0; i < nr; i++) {
			ops[i].wr_id = rnd();
			ops[i].flags = (chance(50) ? DPUSIM_TM_OPS_SIGNALED : 0) |
				       (chance(20) ? DPUSIM_TM_OPS_TM_SYNC : 0);
			ops[i].unexpected_cnt = atomic_load_explicit(&w->unexp,
								     memory_order_relaxed);
			switch (below(4)) {
			case 0:
				ops[i].opcode = DPUSIM_TM_WR_TAG_DEL;
				ops[i].handle = chance(70) ?
					atomic_load_explicit(&w->tag, memory_order_relaxed) :
					1 + below(64);
				break;
			case 1:
				ops[i].opcode = DPUSIM_TM_WR_TAG_SYNC;
				break;
			default:
				sge_rx(w, &sge[i]);
				ops[i].opcode = DPUSIM_TM_WR_TAG_ADD;
				ops[i].recv_wr_id = rnd();
				ops[i].sg_list = (uintptr_t)&sge[i];
				ops[i].num_sge = 1;
				ops[i].tag = below(NR_TAGS);
				ops[i].mask = chance(80) ? ~0ULL : 0;
			}
		}
		check(sh, "POST_SRQ_OPS",
		      tm_post(w->fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0, srq, 0, ops, nr, NULL),
		      e_srq_post);
		return;
	case 2:
		post_recvs(sh, w, srq, 1 + below(4));
		return;
	case 3:	/* a no-tag reply or a FIN, inline */
		tm_tmh(msg, chance(50) ? DPUSIM_TM_TMH_NO_TAG : DPUSIM_TM_TMH_FIN, 0,
		       below(NR_TAGS));
		memset(msg + 16, 0x33, sizeof(msg) - 16);
		sge[0].addr = (uintptr_t)msg;
		sge[0].length = 16 + below(sizeof(msg) - 15);
		sge[0].lkey = 0;
		wr.flags = DPUSIM_TM_SEND_INLINE |
			   (chance(30) ? DPUSIM_TM_SEND_SIGNALED : 0);
		wr.opcode = DPUSIM_TM_WR_SEND;
		wr.sg_list = (uintptr_t)&sge[0];
		wr.num_sge = 1;
		check(sh, "POST_SEND from an SRQ",
		      tm_post(w->fd, DPUSIM_IOCTL_TM_POST_SEND, DPUSIM_TM_POST_FROM_SRQ,
			      srq, guess_qp_num(w), &wr, 1, NULL),
		      e_srq_send);
		return;
	default:	/* RDMA read of the peer's region, by its published key */
		sge_rx(w, &sge[0]);
		sge[0].length = 1 + below(SLOT);
		wr.opcode = DPUSIM_TM_WR_RDMA_READ;
		wr.flags = chance(50) ? DPUSIM_TM_SEND_SIGNALED : 0;
		wr.sg_list = (uintptr_t)&sge[0];
		wr.num_sge = 1;
		wr.remote_addr = (uintptr_t)w->peer->buf + SRC_OFF + below(SLOT);
		wr.rkey = atomic_load_explicit(&w->peer->key, memory_order_relaxed);
		check(sh, "RDMA_READ from an SRQ",
		      tm_post(w->fd, DPUSIM_IOCTL_TM_POST_SEND, DPUSIM_TM_POST_FROM_SRQ,
			      srq, guess_qp_num(w), &wr, 1, NULL),
		      e_srq_read);
	}
}

static void chaos(struct shared *sh, struct world *w, unsigned int roles)
{
	static const struct {
		unsigned int role, weight;
		void (*fn)(struct shared *sh, struct world *w);
	} acts[] = {
		{ R_SRQ, 2, do_srq }, { R_QP, 3, do_qp }, { R_MR, 1, do_mr },
		{ R_SEND, 4, do_send }, { R_RECV, 4, do_recv },
	};
	unsigned int i, total = 0, pick;

	for (i = 0; i < 5; i++)
		if (roles & acts[i].role)
			total += acts[i].weight;
	while (running(sh)) {
		pick = below(total);
		for (i = 0; i < 5; i++) {
			if (!(roles & acts[i].role))
				continue;
			if (pick < acts[i].weight) {
				acts[i].fn(sh, w);
				break;
			}
			pick -= acts[i].weight;
		}
	}
}

/* Reads the rings of a process's context: poll(), then every completion */
static void poller(struct shared *sh, struct world *w)
{
	struct dpusim_tm_cqe c[64];
	int n, i;

	while (running(sh)) {
		struct pollfd p = { .fd = w->fd, .events = POLLIN };

		n = poll(&p, 1, below(6));
		if (n < 0 && errno != EINTR)
			fail(sh, "poll: %s", strerror(errno));
		if (n > 0 && (p.revents & ~(POLLIN | POLLRDNORM | POLLERR)))
			fail(sh, "poll: revents %#x", p.revents);
		n = cq_take(sh, &w->scq, c, 64);
		for (i = 0; i < n && i < 64; i++) {
			if (c[i].src_qp && c[i].opcode != DPUSIM_TM_WC_TM_ADD)
				atomic_store(&w->src_qp, c[i].src_qp);
			if (c[i].opcode == DPUSIM_TM_WC_TM_ADD)
				atomic_store(&w->tag, c[i].handle);
			if (c[i].opcode == DPUSIM_TM_WC_RECV && !c[i].status)
				atomic_fetch_add(&w->unexp, 1);
		}
		atomic_fetch_add(&w->cqes, n > 0 ? n : 0);
		n = cq_take(sh, &w->qcq, NULL, 0);
		atomic_fetch_add(&w->cqes, n > 0 ? n : 0);
	}
}

struct runner {
	struct shared *sh;
	struct world *w;
	unsigned int roles;
	int cpu;		/* -1: not pinned */
	uint64_t seed;
	pthread_t thread;
};

static void *chaos_thread(void *arg)
{
	struct runner *r = arg;

	if (r->cpu >= 0)
		pin(r->cpu);
	rng_seed(r->seed);
	if (r->roles)
		chaos(r->sh, r->w, r->roles);
	else
		poller(r->sh, r->w);
	return NULL;
}

/* The threads of one process on world @w: one per entry of @roles (0: the poller) */
static void run_threads(struct shared *sh, struct world *w, const unsigned int *roles,
			const int *cpu, unsigned int nr, uint64_t seed)
{
	struct runner r[4];
	unsigned int i;
	int err;

	for (i = 0; i < nr && i < 4; i++) {
		r[i] = (struct runner){ sh, w, roles[i], cpu[i], seed + i };
		err = pthread_create(&r[i].thread, NULL, chaos_thread, &r[i]);
		if (err) {
			fail(sh, "pthread_create: %s", strerror(err));
			break;
		}
	}
	nr = i;
	for (i = 0; i < nr; i++)
		if (!join_until(sh, r[i].thread, "a chaos thread"))
			_exit(1);	/* a thread is stuck in the kernel */
}

TEST(posts_vs_destroy)
{
	static const unsigned int roles[] = { R_SRQ | R_QP | R_MR, R_SEND | R_RECV, 0 };
	static const int cpu[] = { 1, 0, -1 };
	struct family f;
	struct shared *sh = family_begin(&f, "posts_vs_destroy", 5);
	struct world *w = shared_alloc(sizeof(*w));
	pid_t pid;

	ASSERT_NE(NULL, sh);
	ASSERT_NE(NULL, w);
	w->peer = w;
	ASSERT_EQ(0, world_open(w));
	/* another process sharing the file: the same context, every role */
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		rng_seed(sh->seed + 9);
		chaos(sh, w, R_ALL);
		_exit(0);
	}
	run_threads(sh, w, roles, cpu, 3, sh->seed);
	reap_until(sh, pid, "the process sharing the file");
	ksft_print_msg("posts_vs_destroy: %lu completions read; %u unexpected messages\n",
		       atomic_load(&w->cqes), atomic_load(&w->unexp));
	world_close(w);
	FAMILY_END(&f);
}

TEST(two_processes)
{
	static const unsigned int snd_roles[] = { R_QP | R_SEND | R_MR, 0 };
	static const unsigned int rcv_roles[] = { R_SRQ | R_RECV | R_MR, 0 };
	static const int snd_cpu[] = { 0, -1 }, rcv_cpu[] = { 1, -1 };
	struct family f;
	struct shared *sh = family_begin(&f, "two_processes", 6);
	struct world *w = shared_alloc(2 * sizeof(*w));
	atomic_int *ready = shared_alloc(sizeof(*ready));
	pid_t pid;
	int err;

	ASSERT_NE(NULL, sh);
	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, ready);
	w[0].peer = &w[1];
	w[1].peer = &w[0];
	w[0].fd = w[1].fd = -1;
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* the receiver: its own context, SRQs; replies and RDMA reads */
		err = world_open(&w[1]);
		atomic_store(ready, err ? -err : 1);
		if (!err)
			run_threads(sh, &w[1], rcv_roles, rcv_cpu, 2, sh->seed + 100);
		world_close(&w[1]);
		_exit(err ? 1 : 0);
	}
	ASSERT_EQ(0, world_open(&w[0]));
	while (!atomic_load(ready) && now_ns() < sh->hard_end)
		usleep(1000);
	EXPECT_EQ(1, atomic_load(ready)) TH_LOG("the receiver's context: %s",
						strerror(-atomic_load(ready)));
	if (atomic_load(ready) == 1)
		run_threads(sh, &w[0], snd_roles, snd_cpu, 2, sh->seed);
	reap_until(sh, pid, "the receiver process");
	ksft_print_msg("two_processes: %lu completions read by the sender, %lu by the receiver; %u unexpected messages\n",
		       atomic_load(&w[0].cqes), atomic_load(&w[1].cqes),
		       atomic_load(&w[1].unexp));
	world_close(&w[0]);
	FAMILY_END(&f);
}

/* ------------------------------------------------------------ main */

/*
 * The harness's own main, after the budget is shared: the families the
 * command line selects (the harness's test_enabled(), as it will run
 * them) share DPUSIM_FUZZ_SECONDS by their weights, and each one's harness
 * timeout is its part plus the hang limit, so a hang is also a harness
 * timeout.
 */
int main(int argc, char **argv)
{
	struct __fixture_variant_metadata no_variant = { .name = "" };
	struct __test_metadata *t;
	uint64_t secs = 25;
	cpu_set_t set;
	const char *e;
	int i, n = 0;

	seed0 = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	e = getenv("DPUSIM_FUZZ_SEED");
	if (e)
		seed0 = strtoull(e, NULL, 0);
	e = getenv("DPUSIM_FUZZ_SECONDS");
	if (e)
		secs = strtoull(e, NULL, 0);
	budget_ms = secs * 1000;
	opterr = 0;	/* test_harness_run() reports the options it does not take */
	for (t = _fixture_global.tests; t; t = t->next)
		if (test_enabled(argc, argv, &_fixture_global, &no_variant, t))
			weight_sum += family_weight(t->name);
	opterr = 1;
	optind = 1;	/* for test_harness_run()'s own parse */
	for (t = _fixture_global.tests; t; t = t->next)
		t->timeout = family_ms(t->name) / 1000 + 1 + 2 * HANG_GRACE_S;
	if (!sched_getaffinity(0, sizeof(set), &set))
		for (i = 0; i < CPU_SETSIZE && n < 2; i++)
			if (CPU_ISSET(i, &set))
				cpus[n++] = i;
	if (n < 2)
		cpus[0] = cpus[1] = -1;
	return test_harness_run(argc, argv);
}
