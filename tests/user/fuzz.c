// SPDX-License-Identifier: GPL-2.0
/*
 * Structured fuzzer of every ioctl of /dev/dpusim/rankN (rank2; rank3 for
 * the exit races).
 *
 * Every ioctl is one entry of fz_ops[]: a generator of its struct (and of
 * what the struct points to), the errnos the header allows for it, a
 * predictor that lists the errnos the header requires for the call's
 * defects, and a commit that checks what a success returned and updates
 * the memory model (or checks that a failure changed nothing).  A new
 * ioctl joins with one entry.  The engine around the entries mutates the
 * struct's size (short, exact, an older version's, long with zero tail,
 * long with non-zero tail, huge) and where it lies (valid, read-only,
 * NULL, unmapped, straddling into an unmapped page, kernel address).
 *
 * Oracle, for every call:
 *  - the result is 0 or an errno uapi/dpusim.h allows for that ioctl;
 *  - a descriptor with defects the header fixes (unknown flag, short
 *    struct, non-zero tail, count over a limit, offset + length past the
 *    memory, bad pointer, ...) fails with the errno of one of its defects
 *    (any order of checks is accepted);
 *  - a well-formed call succeeds, or fails with a resource errno (ENOSPC,
 *    ENOMEM, EAGAIN with ASYNC, ETIMEDOUT/EINTR for waits);
 *  - memory model: a shadow of the first and last 128 KiB of MRAM and the
 *    first 64 KiB of WRAM of four DPUs; every successful TO_DPU updates it
 *    (blocks, then zero padding), failures change nothing, memory outside
 *    those areas is never written and reads zero; every FROM_DPU result is
 *    compared byte for byte where the model knows the bytes; the host
 *    destination is refilled before each FROM_DPU call and no byte outside
 *    the blocks may change (none at all if the call failed); the areas are
 *    read back and compared every VERIFY_EVERY calls.
 *  - streams (DPUSIM_IOCTL_STREAM_*): the model knows every stream it
 *    created (its shape, the core that has it open, its cursor); ids come
 *    in creation order, DPUSIM_STREAM_MAX of them at most; every out field
 *    is checked, a failed call changes nothing (checked with helper
 *    OPEN/SEEK calls, and stream_resident_bytes in the exact phases); with
 *    several threads or processes each one moves only the streams it
 *    created (the others' only with defects that fail before the stream
 *    is looked at), so the model of each stream stays exact; a new
 *    stream of data is read back through a mapping of it
 *    (DPUSIM_MMAP_STREAM), and rank-mmap maps streams too (and the
 *    status page, DPUSIM_MMAP_STATUS: read only, jobs done never ahead
 *    of jobs queued); a race phase
 *    checks that a STREAM_CREATE failing with EFAULT never exposes its
 *    stream (OPEN, mmap) to the owner's other threads;
 *  - tokens moved (STREAM_XFER: DPUSIM_IOCTL_XFER with DPUSIM_XFER_STREAM,
 *    synchronous or not): the model also follows an empty stream's tokens
 *    and the first UP_BYTES of its memory; a move down must give the bytes
 *    the model knows, a move up must write the blocks' bytes (read back
 *    through the stream's mapping) and make the pages resident that the
 *    model says (stream_resident_bytes), a failed move changes nothing;
 *  - registered token buffers: a STREAM_OPEN may register one in the
 *    ctx's own area (struct dpusim_stream_cmd @buf; valid, misaligned,
 *    too long, unwritable, ...), the model knows each stream's; moves
 *    with DPUSIM_XFER_STREAM_BUF name offsets in it (in and out of it, on
 *    streams with and without one; a forked child, on its parent's: they
 *    must fail, EPERM once they get that far), a move down must put the
 *    token there and write nothing else; in the exact phases the rank's
 *    pinned_pages and the process's VmPin are the buffers' pages, and a
 *    reopened rank pins nothing;
 *  - DPU programs move tokens too: a program session's worker calls the
 *    worker file's DPUSIM_IOCTL_WORKER_STREAM_OPEN/_CLOSE/_SEEK/_MOVE/_WAIT
 *    on some of its ctx's streams (as the DPU it holds, and as none) with
 *    an exact model of them (shared with the parent, which checks the
 *    streams afterwards): every errno, every answer, the bytes a move down
 *    puts in the DPU (an untracked one's areas), the bytes a move up takes;
 *  - a host thread may not act as a RUNNING DPU: EBUSY, for STREAM_* and
 *    transfers, is allowed only when a program session overlapped the call;
 *  - phases with several threads (and signals), the fd shared across fork,
 *    a thread munmap()ing block memory, the fd closed or the process
 *    exiting with calls in flight check errnos and host guards exactly,
 *    and the model for the DPUs they never write; after a close or an exit
 *    the reopened rank must read all zeros and have no stream left.
 *
 * Environment: DPUSIM_FUZZ_SEED (default: time), DPUSIM_FUZZ_SECONDS
 * (default 20, split over the phases), DPUSIM_FUZZ_CALLS (at least that
 * many calls in total; the last phase runs until reached).
 */
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "common.h"
#include "tm_ioctl.h"

#define PAGE		4096UL
#define MAREA		(128UL << 10)	/* MRAM area at each end, per DPU */
#define WAREA		(64UL << 10)	/* WRAM area at 0 */
#define NTRACK		4
#define DESC_LEN	(128UL << 10)
#define DESC_DPUS	(8UL << 10)	/* offset of the DPU list zone */
#define DESC_BLOCKS	(12UL << 10)	/* offset of the block list zone */
#define RO_CONST	(64UL << 10)	/* constant bytes at the start of ro */
#define RO_LEN		(80UL << 10)
#define RO_STRUCT	RO_CONST
#define RO_DPUS		(RO_CONST + PAGE)
#define RO_BLOCKS	(RO_CONST + PAGE + 1024)
#define SRC_LEN		(256UL << 10)
#define DST_LEN		(128UL << 10)
#define FLAP_LEN	(4 * PAGE)
#define SBUF_LEN	(16 * PAGE)	/* a ctx's registered token buffers */
#define MAXB		4096
#define MAXD		256
#define VERIFY_EVERY	256
#define KADDR		0xffff888000001000ULL
#define NONCANON	0x0000800000000000ULL

/* ------------------------------------------------------------ errno sets */

typedef struct { uint64_t w[2]; } eset;

static inline void es_add(eset *s, int e)
{
	if (e > 0 && e < 128)
		s->w[e >> 6] |= 1ULL << (e & 63);
}

static inline bool es_has(const eset *s, int e)
{
	return e > 0 && e < 128 && (s->w[e >> 6] >> (e & 63)) & 1;
}

static inline bool es_empty(const eset *s)
{
	return !s->w[0] && !s->w[1];
}

static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "ok";

	return n ? n : "E?";
}

static void es_fmt(const eset *s, char *buf, size_t n)
{
	size_t used = 0;
	int e;

	buf[0] = 0;
	for (e = 1; e < 128 && used + 1 < n; e++)
		if (es_has(s, e))
			used += snprintf(buf + used, n - used, "%s%s",
					 used ? "," : "", ename(e));
	if (!used)
		snprintf(buf, n, "-");
}

/* ---------------------------------------------------- shared statistics */

#define NOPS 30	/* 4 of the rank, 16 of /dev/dpusim/tm, 5 DPU programs, 5 streams */
#define FIRST_PROG_OP 20

struct fz_stats {
	uint64_t calls, ok, violations, printed, helper_calls;
	/*
	 * DPU programs: sessions running (a worker file open, DPUs maybe
	 * RUNNING) and a count of session starts and ends, so that a call
	 * can tell whether one overlapped it.
	 */
	uint64_t wopen, wgen;
	/*
	 * The worker's window (program sessions' children): windows mapped,
	 * claims whose window was compared with a plain mapping of the DPU,
	 * touches that got the SIGBUS they must get.
	 */
	uint64_t win_maps, win_checks, win_sigbus;
	/*
	 * Streams moved: DPUSIM_XFER_STREAM moves of the rank file that
	 * succeeded (down, up); the worker file's stream calls of program
	 * sessions' children (WORKER_STREAM_*: calls, successes, moves down
	 * and up that succeeded, of them asynchronous, bytes compared).
	 */
	uint64_t xs_down, xs_up;
	/*
	 * Registered token buffers: STREAM_OPENs that registered one, moves
	 * with DPUSIM_XFER_STREAM_BUF that succeeded (down, up).
	 */
	uint64_t sb_open, sb_down, sb_up;
	uint64_t ws_calls, ws_ok, ws_down, ws_up, ws_async, ws_checked;
	uint64_t err[134];
	uint64_t op_calls[NOPS];
	uint64_t eagain_seen_at_async_cap;
};

static struct fz_stats *ST;	/* MAP_SHARED: every test process adds */
static char tm_why[2][96];	/* TM: the call that left an overrun pending */
static uint64_t g_seed;
static double g_seconds = 20;
static uint64_t g_calls;

static inline void st_add(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static void msg(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("# %s\n", buf);
	fflush(stdout);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ rng */

struct rng { uint64_t s; };

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rn(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static bool chance(struct rng *r, unsigned int pct)
{
	return rn(r, 100) < pct;
}

/* -------------------------------------------------------------- regions */

/* What the kernel may do with our address ranges; the rest is bad. */
enum { P_R = 1, P_W = 2, P_FLAKY = 4 };

struct region { uint64_t start, len; int prot; };

#define NREG 24
struct regions { struct region r[NREG]; int n; };

static void reg_add(struct regions *rs, const void *p, uint64_t len, int prot)
{
	if (rs->n < NREG)
		rs->r[rs->n++] = (struct region){ (uintptr_t)p, len, prot };
}

enum { RC_OK, RC_BAD, RC_FLAKY };

/* Can the kernel read (or write) [addr, addr + len)? */
static int range_check(const struct regions *rs, uint64_t addr, uint64_t len,
		       bool write)
{
	int need = write ? P_W : P_R, res = RC_OK, i;
	uint64_t end;

	if (!len)
		return RC_OK;
	if (__builtin_add_overflow(addr, len, &end))
		return RC_BAD;
	while (addr < end) {
		for (i = 0; i < rs->n; i++)
			if (addr >= rs->r[i].start &&
			    addr - rs->r[i].start < rs->r[i].len)
				break;
		if (i == rs->n)
			return RC_BAD;
		if (rs->r[i].prot & P_FLAKY)
			res = RC_FLAKY;
		else if (!(rs->r[i].prot & need))
			return RC_BAD;
		addr = rs->r[i].start + rs->r[i].len;
	}
	return res;
}

/* Bytes readable from @addr on, at most @max. */
static uint64_t readable_len(const struct regions *rs, uint64_t addr,
			     uint64_t max)
{
	uint64_t done = 0;
	int i;

	while (done < max) {
		for (i = 0; i < rs->n; i++)
			if (addr + done >= rs->r[i].start &&
			    addr + done - rs->r[i].start < rs->r[i].len &&
			    (rs->r[i].prot & P_R) && !(rs->r[i].prot & P_FLAKY))
				break;
		if (i == rs->n)
			break;
		done = rs->r[i].start + rs->r[i].len - addr;
	}
	return done < max ? done : max;
}

/* ---------------------------------------------------------------- model */

/*
 * An empty stream's tokens, as the model follows them: their sizes, the
 * first UP_BYTES of its memory (zeros where nothing was written) and which
 * of those pages are resident.  Moves up are generated only while the
 * token at the cursor and its end header fit: UP_TOKENS, UP_BYTES.
 */
#define UP_TOKENS	64
#define UP_BYTES	(4 * PAGE)

struct upstream {
	uint32_t sizes[UP_TOKENS];
	uint32_t pages;		/* bit i: page i resident (page 0 from the start) */
	uint8_t bytes[UP_BYTES];
};

/*
 * A stream the model knows exists.  @owner is the ctx (sid) that created
 * it and is the only one to move it (OPEN, CLOSE, SEEK, DPUSIM_XFER_STREAM
 * moves, and the DPU programs of its sessions); 0: no stream known with
 * that id; OWNER_LOST: a stream whose state the model lost (a session's
 * worker killed in its moves), left alone.  Written by the owner only;
 * others read @owner.
 */
#define OWNER_LOST	(-1)

struct mstream {
	int owner;
	bool down;		/* made of data (else empty, for results) */
	int32_t core;		/* the core that has it open, or -1 */
	uint32_t cursor, nr_tokens, token_size;
	uint32_t max_tokens;	/* empty: the tokens it has room for */
	uint64_t data_size, mem_size;
	const uint8_t *src;	/* made of data: the bytes, if they never change */
	struct upstream *up;	/* empty: its tokens */
	/* the buffer its holder registered at the OPEN (in its ctx's sbuf), or 0 */
	uint64_t buf, buf_len;
};

struct model {
	int rank, fd;
	uint32_t nr_dpus, wram;
	uint64_t mram;
	uint32_t tracked[NTRACK];
	int ntracked;
	uint64_t ma, wa, per_dpu;	/* area sizes, shadow bytes per DPU */
	bool zero_ok;		/* memory outside the areas reads zero */
	uint8_t *shadow;	/* per DPU: MRAM area 0, area 1, WRAM */
	/* streams, by id; exact phases: ids 0 .. nst - 1 exist, nothing else */
	struct mstream st[DPUSIM_STREAM_MAX];
	struct upstream *up;	/* DPUSIM_STREAM_MAX: of the empty ones, by id */
	uint32_t nst;
	uint64_t st_res;	/* exact: stream_resident_bytes */
};

static int track_idx(const struct model *m, uint32_t dpu)
{
	int i;

	for (i = 0; i < m->ntracked; i++)
		if (m->tracked[i] == dpu)
			return i;
	return -1;
}

static bool in_area(const struct model *m, bool wram, uint64_t off)
{
	if (wram)
		return off < m->wa;
	return off < m->ma || (off >= m->mram - m->ma && off < m->mram);
}

static uint8_t *model_ptr(const struct model *m, int ti, bool wram,
			  uint64_t off)
{
	uint8_t *b = m->shadow + ti * m->per_dpu;

	if (wram)
		return off < m->wa ? b + 2 * m->ma + off : NULL;
	if (off < m->ma)
		return b + off;
	if (off >= m->mram - m->ma && off < m->mram)
		return b + m->ma + (off - (m->mram - m->ma));
	return NULL;
}

/* 1 and *v if the model knows the byte, else 0. */
static int model_byte(const struct model *m, uint32_t dpu, bool wram,
		      uint64_t off, uint8_t *v)
{
	int ti = track_idx(m, dpu);

	if (!in_area(m, wram, off)) {
		*v = 0;
		return m->zero_ok;
	}
	if (ti < 0)
		return 0;
	*v = *model_ptr(m, ti, wram, off);
	return 1;
}

static int model_init(struct model *m, int rank, int fd)
{
	struct dpusim_rank_info info = { .size = sizeof(info) };

	memset(m, 0, sizeof(*m));
	m->rank = rank;
	m->fd = fd;
	if (ioctl(fd, DPUSIM_IOCTL_RANK_INFO, &info))
		return -1;
	m->nr_dpus = info.nr_dpus;
	m->wram = info.wram_size;
	m->mram = info.mram_size;
	if (m->nr_dpus < 8 || m->nr_dpus > MAXD || m->mram < 4 * MAREA ||
	    m->wram < 64)
		return -2;
	m->ma = MAREA;
	m->wa = m->wram < WAREA ? m->wram : WAREA;
	m->tracked[0] = 0;
	m->tracked[1] = 1;
	m->tracked[2] = m->nr_dpus / 2;
	m->tracked[3] = m->nr_dpus - 1;
	m->ntracked = NTRACK;
	m->per_dpu = 2 * m->ma + m->wa;
	m->zero_ok = true;
	m->shadow = calloc(NTRACK, m->per_dpu);
	m->up = calloc(DPUSIM_STREAM_MAX, sizeof(*m->up));
	return m->shadow && m->up ? 0 : -1;
}

static void model_fini(struct model *m)
{
	free(m->shadow);
	free(m->up);
	m->shadow = NULL;
	m->up = NULL;
}

/* --------------------------------------------------------------- context */

struct fz_call;

struct ctx {
	struct rng rng;
	struct model *m;
	int fd;
	const char *phase;
	struct regions rs;
	uint8_t *desc, *ro, *ro_rw, *dst, *none, *vbuf;
	uint8_t *sbuf;		/* SBUF_LEN: registered token buffers */
	uint8_t *dst_exp, *dst_cnt, fill;
	bool exact;		/* single thread: the model is exact */
	bool may_eintr, may_ebadf, flap_on;
	bool stop_on_ebadf, saw_ebadf;
	bool ro_shared;		/* the memfd views are shared with a fork */
	bool tm_mode;		/* pick the ops of /dev/dpusim/tm */
	bool forked;		/* a fork's child: the known streams' buffers are not its */
	int sid;		/* owner of the streams this ctx creates */
	int async_pct;
	uint64_t calls, nviol;
	struct dpusim_xfer_dpu dv[MAXD + 8];
	struct dpusim_block bv[MAXB + 8];
	struct fz_call *k;
};

static uint8_t *g_src;		/* SRC_LEN constant random bytes */
static uint8_t *g_flap;		/* FLAP_LEN, remapped by the racer */
static uint8_t *g_zero;		/* ZERO_LEN read-only, never touched here */
static int g_sid;		/* stream owners handed out */

/* Room for the data of the largest stream and more (costs nothing). */
#define ZERO_LEN	(DPUSIM_STREAM_MAX_BYTES + (64UL << 20))

/* Reserve @len + 2 guard pages, return the middle, mapped with @prot. */
static uint8_t *map_guarded(size_t len, int prot)
{
	uint8_t *p = mmap(NULL, len + 2 * PAGE, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + PAGE, len, prot))
		return NULL;
	return p + PAGE;
}

static int globals_init(void)
{
	struct rng r = { g_seed ^ 0x5eed };
	size_t i;

	if (g_src)
		return 0;
	g_src = map_guarded(SRC_LEN, PROT_READ | PROT_WRITE);
	g_zero = map_guarded(ZERO_LEN, PROT_READ);
	if (!g_src || !g_zero)
		return -1;
	for (i = 0; i < SRC_LEN; i += 8) {
		uint64_t v = rnd(&r);

		memcpy(g_src + i, &v, 8);
	}
	return 0;
}

static int ctx_init(struct ctx *c, struct model *m, int fd, uint64_t seed,
		    const char *phase)
{
	struct rng r;
	int mfd;
	size_t i;

	memset(c, 0, sizeof(*c));
	c->rng.s = seed;
	c->m = m;
	c->fd = fd;
	c->phase = phase;
	c->async_pct = 15;
	c->sid = __atomic_add_fetch(&g_sid, 1, __ATOMIC_RELAXED);
	if (globals_init())
		return -1;
	c->desc = map_guarded(DESC_LEN, PROT_READ | PROT_WRITE);
	c->dst = map_guarded(DST_LEN, PROT_READ | PROT_WRITE);
	c->none = map_guarded(PAGE, PROT_NONE);
	c->sbuf = map_guarded(SBUF_LEN, PROT_READ | PROT_WRITE);
	if (!c->desc || !c->dst || !c->none || !c->sbuf)
		return -1;
	/* one memfd, a read-write and a read-only view (then a guard page) */
	mfd = memfd_create("fuzz-ro", MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, RO_LEN))
		return -1;
	c->ro_rw = mmap(NULL, RO_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	c->ro = map_guarded(RO_LEN, PROT_NONE);
	if (c->ro_rw == MAP_FAILED || !c->ro ||
	    mmap(c->ro, RO_LEN, PROT_READ, MAP_SHARED | MAP_FIXED, mfd, 0) == MAP_FAILED)
		return -1;
	close(mfd);
	r.s = seed ^ 0xc0;
	for (i = 0; i < RO_CONST; i++)
		c->ro_rw[i] = rnd(&r);
	c->dst_exp = malloc(DST_LEN);
	c->dst_cnt = malloc(DST_LEN);
	c->vbuf = malloc(NTRACK * MAREA);
	if (!c->dst_exp || !c->dst_cnt || !c->vbuf)
		return -1;
	reg_add(&c->rs, c->desc, DESC_LEN, P_R | P_W);
	reg_add(&c->rs, c->dst, DST_LEN, P_R | P_W);
	reg_add(&c->rs, c->sbuf, SBUF_LEN, P_R | P_W);
	reg_add(&c->rs, c->ro, RO_LEN, P_R);
	reg_add(&c->rs, g_src, SRC_LEN, P_R);	/* never a FROM target */
	reg_add(&c->rs, g_zero, ZERO_LEN, P_R);	/* stream data only */
	if (g_flap)
		reg_add(&c->rs, g_flap, FLAP_LEN, P_R | P_W | P_FLAKY);
	return 0;
}

static void ctx_fini(struct ctx *c)
{
	/*
	 * pages may still be pinned by queued async jobs, and registered
	 * buffers until their stream is closed: that is fine
	 */
	munmap(c->desc - PAGE, DESC_LEN + 2 * PAGE);
	munmap(c->sbuf - PAGE, SBUF_LEN + 2 * PAGE);
	munmap(c->dst - PAGE, DST_LEN + 2 * PAGE);
	munmap(c->none - PAGE, 3 * PAGE);
	munmap(c->ro - PAGE, RO_LEN + 2 * PAGE);
	munmap(c->ro_rw, RO_LEN);
	free(c->dst_exp);
	free(c->dst_cnt);
	free(c->vbuf);
}

/* ------------------------------------------------------------ one call */

enum { PL_RW, PL_RO, PL_NULL, PL_UNMAPPED, PL_STRADDLE, PL_KERNEL, PL_LOW };
static const char *const pl_name[] = {
	"rw", "ro", "null", "unmapped", "straddle", "kernel", "low"
};

struct fz_op;

struct fz_call {
	const struct fz_op *op;
	unsigned long cmd;
	uint32_t size;
	int place;
	uint8_t *arg;
	size_t img_len;
	const struct dpusim_xfer_dpu *dv;	/* lists as generated */
	const struct dpusim_block *bv;
	eset must, may, amb;
	long ret;
	int err;
	/* tag matching: the context, the wr list, an mmap's arguments */
	int tctx, tm_q, tm_mflags, tm_mprot;
	bool tm_ovf;		/* an overrun pending: reported by this call */
	bool st_map;		/* rank-mmap of stream st_id */
	bool status_map;	/* rank-mmap of the status page */
	uint32_t st_id;
	uint64_t wgen;		/* ST->wgen + ST->wopen before the call */
	uint32_t tm_nw;
	uint64_t tm_wrs, tm_mlen, tm_moff;
	/* the fields, as the kernel would read them */
	union {
		struct dpusim_rank_info info;
		struct dpusim_xfer x;
		struct dpusim_sync s;
		struct dpusim_launch l;
		struct dpusim_dpu_status st;
		struct dpusim_worker_open wo;
		struct dpusim_tm_query tq;
		struct dpusim_tm_reg_mr trm;
		struct dpusim_tm_destroy td;
		struct dpusim_tm_create_cq tcq;
		struct dpusim_tm_create_srq tsrq;
		struct dpusim_tm_create_qp tqp;
		struct dpusim_tm_connect tcon;
		struct dpusim_tm_post tp;
		struct dpusim_stream_create sc;
		struct dpusim_stream_cmd scmd;
	} f;
	uint8_t img[8192 + 64];	/* the struct as written, tail included */
};

/*
 * One entry per ioctl.  gen fills k->f (and what it points to) through
 * place_struct(); predict adds the errnos of the call's defects to
 * k->must (k->may: allowed either way; k->amb: allowed for a well-formed
 * call); commit checks a success's outputs and updates the model, or
 * checks that a failure changed nothing.
 */
struct fz_op {
	const char *name;
	unsigned long cmd;		/* 0: random unknown command */
	size_t size, min_size;		/* struct; 0: none */
	unsigned int weight;
	int errnos[16];			/* every errno the header allows, 0 */
	void (*gen)(struct ctx *c, struct fz_call *k);
	void (*predict)(struct ctx *c, struct fz_call *k);
	void (*commit)(struct ctx *c, struct fz_call *k);
	bool tm;			/* on /dev/dpusim/tm (k->tctx's fd) */
	void (*exec)(struct ctx *c, struct fz_call *k);	/* not an ioctl */
};

static void violation(struct ctx *c, struct fz_call *k, const char *fmt, ...)
{
	char what[512], must[128], may[128];
	va_list ap;
	uint32_t i;

	c->nviol++;
	st_add(&ST->violations, 1);
	if (__atomic_fetch_add(&ST->printed, 1, __ATOMIC_RELAXED) >= 40)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	es_fmt(&k->must, must, sizeof(must));
	es_fmt(&k->may, may, sizeof(may));
	msg("VIOLATION [%s seed=%llu call %llu] %s: %s", c->phase,
	    (unsigned long long)g_seed, (unsigned long long)c->calls,
	    k->op->name, what);
	msg("  cmd=%#lx arg=%p (%s) size=%u -> ret=%ld %s; must=%s may=%s",
	    k->cmd, k->arg, pl_name[k->place], k->size, k->ret, ename(k->err),
	    must, may);
	if (k->op->cmd == DPUSIM_IOCTL_XFER) {
		const struct dpusim_xfer *x = &k->f.x;

		msg("  xfer flags=%#x offset=%#llx length=%#llx nr_dpus=%u nr_blocks=%u dpus=%#llx blocks=%#llx stream=%u",
		    x->flags, (unsigned long long)x->offset,
		    (unsigned long long)x->length, x->nr_dpus, x->nr_blocks,
		    (unsigned long long)x->dpus, (unsigned long long)x->blocks,
		    x->stream);
		for (i = 0; k->dv && i < x->nr_dpus && i < 4 && x->nr_dpus <= MAXD; i++)
			msg("  dpus[%u] = {%u, %u}", i, k->dv[i].dpu, k->dv[i].nr_blocks);
		for (i = 0; k->bv && i < x->nr_blocks && i < 6 && x->nr_blocks <= MAXB; i++)
			msg("  blocks[%u] = {%#llx, %#llx}", i,
			    (unsigned long long)k->bv[i].addr,
			    (unsigned long long)k->bv[i].length);
	} else if (k->op->tm) {
		const uint32_t *w = (const uint32_t *)&k->f;

		if (k->tm_ovf)
			msg("  overrun pending since %s", tm_why[k->tctx]);
		msg("  tm ctx %d fields %#x %#x %#x %#x %#x %#x %#x %#x nr_wr-list %u mmap %#llx@%#llx flags %#x",
		    k->tctx, w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7],
		    k->tm_nw, (unsigned long long)k->tm_mlen,
		    (unsigned long long)k->tm_moff, k->tm_mflags);
	} else if (k->op->cmd == DPUSIM_IOCTL_SYNC) {
		msg("  sync flags=%#x timeout_ms=%u reserved=%u", k->f.s.flags,
		    k->f.s.timeout_ms, k->f.s.__reserved);
	}
}

/* Write @len bytes of @src at @dst, a user address in one of our views. */
static void put_bytes(struct ctx *c, uint8_t *dst, const void *src, size_t len)
{
	if (dst >= c->ro && dst < c->ro + RO_LEN)
		dst = c->ro_rw + (dst - c->ro);
	memcpy(dst, src, len);
}

/*
 * Place a list of @len bytes: in the desc zone at @rw_off, or read-only,
 * NULL, unmapped, straddling the end of the read-only view, kernel.
 * Returns the user address.
 */
static uint64_t place_list(struct ctx *c, const void *list, size_t len,
			   size_t rw_off, size_t ro_off, size_t ro_room)
{
	unsigned int r = rn(&c->rng, 100);
	size_t fit;

	if (r < 93 || (r < 96 && len > ro_room) || (c->ro_shared && r < 99)) {
		put_bytes(c, c->desc + rw_off, list, len);
		return (uintptr_t)(c->desc + rw_off);
	}
	if (r < 96) {
		put_bytes(c, c->ro + ro_off, list, len);
		return (uintptr_t)(c->ro + ro_off);
	}
	switch (r) {
	case 96:
		return len ? 0 : (uintptr_t)(c->desc + rw_off);
	case 97:
		return (uintptr_t)c->none + rn(&c->rng, PAGE);
	case 98:
		fit = len ? rn(&c->rng, len < 4096 ? len : 4096) : 0;
		put_bytes(c, c->ro + RO_LEN - fit, list, fit);
		return (uintptr_t)(c->ro + RO_LEN - fit);
	default:
		return KADDR;
	}
}

/*
 * A struct that grew (struct dpusim_stream_cmd: @buf, @buf_len): a caller
 * of its first version passes min_size .. size bytes, the rest is zeros.
 */
static bool struct_grew(const struct fz_op *op)
{
	return op->cmd == DPUSIM_IOCTL_STREAM_OPEN ||
	       op->cmd == DPUSIM_IOCTL_STREAM_CLOSE ||
	       op->cmd == DPUSIM_IOCTL_STREAM_SEEK;
}

/* Size, image and place of the struct; then k->f from the image. */
static void place_struct(struct ctx *c, struct fz_call *k, const void *fields)
{
	size_t ks = k->op->size, tail = 0, fit, off;
	unsigned int r = rn(&c->rng, 100);
	bool nz = false;

	k->size = ks;
	if (r < 6) {
		k->size = rn(&c->rng, k->op->min_size);
	} else if (r >= 94 && struct_grew(k->op)) {
		k->size = k->op->min_size + rn(&c->rng, ks - k->op->min_size);
	} else if (r < 16) {
		tail = 1 + rn(&c->rng, chance(&c->rng, 10) ? 4000 : 64);
	} else if (r < 22) {
		tail = 1 + rn(&c->rng, chance(&c->rng, 10) ? 4000 : 64);
		nz = true;
	} else if (r < 25) {
		k->size = chance(&c->rng, 50) ? 0xffffffffu : ks + (1u << 20);
	}
	if (tail)
		k->size = ks + tail;
	memcpy(k->img, fields, ks);
	memcpy(k->img, &k->size, 4);
	memset(k->img + ks, 0, tail);
	if (nz)
		k->img[ks + rn(&c->rng, tail)] = 1 + rn(&c->rng, 255);
	k->img_len = ks + tail;

	r = rn(&c->rng, 100);
	off = rn(&c->rng, 64);
	if (r < 85) {
		k->place = PL_RW;
		k->arg = c->desc + off;
	} else if (r < 90 && !c->ro_shared) {
		k->place = PL_RO;
		k->arg = c->ro + RO_STRUCT + off;
		if (k->img_len > PAGE - off)
			k->img_len = PAGE - off;	/* the rest: list zone */
	} else if (r < 93) {
		k->place = PL_NULL;
		k->arg = NULL;
	} else if (r < 95) {
		k->place = PL_UNMAPPED;
		k->arg = c->none + rn(&c->rng, PAGE);
	} else if (r < 98) {
		k->place = PL_STRADDLE;
		fit = rn(&c->rng, k->img_len);
		k->arg = c->desc + DESC_LEN - fit;
		k->img_len = fit;
	} else if (r < 99) {
		k->place = PL_KERNEL;
		k->arg = (uint8_t *)(uintptr_t)KADDR;
	} else {
		k->place = PL_LOW;
		k->arg = (uint8_t *)(uintptr_t)(8 + rn(&c->rng, 4096));
	}
	if (k->place == PL_RW || k->place == PL_RO || k->place == PL_STRADDLE)
		put_bytes(c, k->arg, k->img, k->img_len);
	memcpy(&k->f, k->img, ks);
	if (k->size < ks)	/* zero-extended (only meaningful >= min) */
		memset((uint8_t *)&k->f + k->size, 0, ks - k->size);
}

/* The struct-level rules: returns false if the fields are not reached. */
static bool predict_struct(struct ctx *c, struct fz_call *k)
{
	size_t ks = k->op->size;
	uint64_t a = (uintptr_t)k->arg, rl, i;
	const uint8_t *p;

	if (range_check(&c->rs, a, 4, false) != RC_OK) {
		es_add(&k->must, EFAULT);
		return false;
	}
	if (k->size < k->op->min_size) {
		es_add(&k->must, EINVAL);
		return false;
	}
	/* over a page: E2BIG before the struct is read, on every device */
	if (k->size > UCMD_MAX_SIZE) {
		es_add(&k->must, E2BIG);
		return false;
	}
	/* what the kernel reads: an older version's size, at most its own */
	if (range_check(&c->rs, a, k->size < ks ? k->size : ks, false) != RC_OK) {
		es_add(&k->must, EFAULT);
		return false;
	}
	if (k->size > ks) {
		rl = readable_len(&c->rs, a + ks, k->size - ks);
		p = k->arg + ks;
		for (i = 0; i < rl && !p[i]; i++)
			;
		if (i < rl)
			es_add(&k->must, E2BIG);
		if (rl < k->size - ks)
			es_add(&k->must, EFAULT);
	}
	return true;
}

/* ------------------------------------------------------ DPUSIM_IOCTL_XFER */

struct area { uint64_t start, len; };

static int areas_of(const struct model *m, bool wram, struct area *a)
{
	if (wram) {
		a[0] = (struct area){ 0, m->wa };
		return 1;
	}
	a[0] = (struct area){ 0, m->ma };
	a[1] = (struct area){ m->mram - m->ma, m->ma };
	return 2;
}

static uint64_t pick_len(struct ctx *c, uint64_t max)
{
	unsigned int r = rn(&c->rng, 100);
	uint64_t l;

	if (r < 12)
		l = 0;
	else if (r < 30)
		l = 8;
	else if (r < 65)
		l = 8 * (1 + rn(&c->rng, 64));
	else if (r < 90)
		l = 8 * (1 + rn(&c->rng, 512));
	else
		l = 8 * rn(&c->rng, max / 8 + 1);
	return l > max ? max & ~7ULL : l;
}

static void gen_offset_length(struct ctx *c, struct dpusim_xfer *x)
{
	bool wram = x->flags & DPUSIM_XFER_WRAM;
	bool from = x->flags & DPUSIM_XFER_FROM_DPU;
	const struct model *m = c->m;
	uint64_t mem = wram ? m->wram : m->mram, l;
	struct area a[2];
	int na = areas_of(m, wram, a), which;
	unsigned int r = rn(&c->rng, 100);
	bool hi_in_area = !wram || m->wram == m->wa;

	if (r < 80 || (r < 95 && !from && !hi_in_area)) {
		which = rn(&c->rng, na);
		l = pick_len(c, a[which].len);
		if (from && chance(&c->rng, 20))
			x->offset = 8 * rn(&c->rng, (mem - l) / 8 + 1);
		else
			x->offset = a[which].start +
				    8 * rn(&c->rng, (a[which].len - l) / 8 + 1);
		x->length = l;
	} else if (r < 95) {
		l = pick_len(c, a[na - 1].len);
		switch (rn(&c->rng, 9)) {
		case 0:
			x->offset = mem - l, x->length = l;
			break;
		case 1:
			x->length = l ? l : 8;
			x->offset = mem - x->length + 8;
			break;
		case 2:
			x->offset = mem, x->length = 0;
			break;
		case 3:
			x->offset = mem, x->length = 8;
			break;
		case 4:
			x->offset = ~7ULL, x->length = 8 * (1 + rn(&c->rng, 4));
			break;
		case 5:
			x->offset = 8, x->length = ~7ULL - 8 * rn(&c->rng, 4);
			break;
		case 6:
			x->offset = 0, x->length = mem;
			break;
		case 7:
			x->offset = 1ULL << 63, x->length = 8;
			break;
		default:
			x->offset = 0, x->length = mem + 8;
			break;
		}
	} else {
		which = rn(&c->rng, na);
		l = pick_len(c, a[which].len - 8);
		x->offset = a[which].start +
			    8 * rn(&c->rng, (a[which].len - l - 8) / 8 + 1);
		x->length = l;
		if (chance(&c->rng, 50))
			x->offset += 1 + rn(&c->rng, 7);
		else
			x->length += 1 + rn(&c->rng, 7);
	}
}

/* Address for a valid block of @len bytes. */
static uint64_t block_addr(struct ctx *c, bool from, uint64_t len)
{
	unsigned int r = rn(&c->rng, 100);

	if (c->flap_on && r < 25 && len <= FLAP_LEN)
		return (uintptr_t)g_flap + rn(&c->rng, FLAP_LEN - len + 1);
	if (from)
		return (uintptr_t)c->dst + rn(&c->rng, DST_LEN - len + 1);
	if (r < 85 || len > RO_CONST)
		return (uintptr_t)g_src + rn(&c->rng, SRC_LEN - len + 1);
	return (uintptr_t)c->ro + rn(&c->rng, RO_CONST - len + 1);
}

/* A bad block: an address the kernel must refuse, or one that wraps. */
static void bad_block(struct ctx *c, bool from, struct dpusim_block *b)
{
	uint64_t k;

	if (!b->length)
		b->length = 1 + rn(&c->rng, 64);
	switch (rn(&c->rng, from ? 7 : 6)) {
	case 0:
		b->addr = 0;
		break;
	case 1:
		b->addr = (uintptr_t)c->none + rn(&c->rng, PAGE);
		if (b->length > PAGE)
			b->length = PAGE;
		break;
	case 2:
		b->addr = KADDR + rn(&c->rng, 1 << 20);
		break;
	case 3:
		b->addr = NONCANON + rn(&c->rng, 1 << 20);
		break;
	case 4:
		b->addr = ~0ULL - rn(&c->rng, 64);
		b->length = 65 + rn(&c->rng, 64);	/* wraps */
		break;
	case 5:	/* straddles into the guard page after the buffer */
		if (b->length < 2)
			b->length = 2;
		if (b->length > 8192)
			b->length = 8192;
		k = 1 + rn(&c->rng, b->length - 1);
		b->addr = from ? (uintptr_t)c->dst + DST_LEN - k :
				 (uintptr_t)g_src + SRC_LEN - k;
		break;
	default: /* read-only: bad as a FROM_DPU target */
		if (b->length > RO_CONST)
			b->length = RO_CONST;
		b->addr = (uintptr_t)c->ro + rn(&c->rng, RO_CONST - b->length + 1);
		break;
	}
}

static void gen_xfer(struct ctx *c, struct fz_call *k)
{
	struct dpusim_xfer x = { .size = sizeof(x) };
	const struct model *m = c->m;
	uint32_t pool[MAXD], np = 0, i, j, nd, t, nb, total = 0;
	uint64_t target, left, cut;
	bool from, nlc, inexact_to;
	unsigned int r;

	x.flags = rn(&c->rng, 8);
	if (chance(&c->rng, c->async_pct))
		x.flags |= DPUSIM_XFER_ASYNC;
	/* bit 5 (DPUSIM_XFER_STREAM_BUF) without DPUSIM_XFER_STREAM, unknown ones */
	if (chance(&c->rng, 3))
		x.flags |= 1u << (5 + rn(&c->rng, 27));
	from = x.flags & DPUSIM_XFER_FROM_DPU;
	nlc = x.flags & DPUSIM_XFER_NO_LENGTH_CHECK;
	gen_offset_length(c, &x);

	/* which DPUs: outside the exact phases, writes avoid tracked ones */
	inexact_to = !c->exact && !from;
	for (i = 0; i < m->nr_dpus; i++)
		if (!inexact_to || track_idx(m, i) < 0)
			pool[np++] = i;
	r = rn(&c->rng, 100);
	if (r < 60)
		nd = 1 + rn(&c->rng, 4);
	else if (r < 85)
		nd = 1 + rn(&c->rng, 16);
	else if (r < 93)
		nd = 1 + rn(&c->rng, np);
	else if (r < 95)
		nd = 0;
	else
		nd = np;
	if (nd > np)
		nd = np;
	for (i = 0; i < nd; i++) {
		j = i + rn(&c->rng, np - i);
		t = pool[i], pool[i] = pool[j], pool[j] = t;
		c->dv[i].dpu = pool[i];
	}
	if (nd >= 2 && chance(&c->rng, 3))
		c->dv[1 + rn(&c->rng, nd - 1)].dpu = c->dv[0].dpu;	/* twice */
	if (nd && chance(&c->rng, 2))
		c->dv[rn(&c->rng, nd)].dpu = chance(&c->rng, 50) ? 0xffffffffu :
					     m->nr_dpus + rn(&c->rng, 1000);

	/* each DPU's blocks */
	for (i = 0; i < nd; i++) {
		r = rn(&c->rng, 100);
		if (!nlc || r < 20)
			target = x.length;
		else if (r < 70)
			target = rn(&c->rng, x.length + 1);
		else
			target = x.length + rn(&c->rng, 4096);
		if (target > (64UL << 10) && (x.length > (256UL << 10) || !nlc))
			target = rn(&c->rng, 64UL << 10);	/* bounded */
		if (chance(&c->rng, 3))
			target += chance(&c->rng, 50) || !target ?
				  1 + rn(&c->rng, 16) : -1;
		r = rn(&c->rng, 100);
		nb = r < 70 ? 1 + rn(&c->rng, 3) : r < 78 ? 0 :
		     r < 95 ? 1 + rn(&c->rng, 16) : 1 + rn(&c->rng, 64);
		if (!nb && target && chance(&c->rng, 80))
			nb = 1;
		if (total + nb > MAXB)
			nb = MAXB - total;
		left = target;
		for (j = 0; j < nb; j++) {
			struct dpusim_block *b = &c->bv[total + j];

			cut = j + 1 == nb ? left :
			      chance(&c->rng, 20) ? 0 : rn(&c->rng, left + 1);
			if (cut > (64UL << 10))
				cut = 64UL << 10;
			left -= cut;
			b->length = cut;
			b->addr = block_addr(c, from, cut);
			if (chance(&c->rng, 2))
				bad_block(c, from, b);
			else if (!cut && chance(&c->rng, 20))
				b->addr = rnd(&c->rng);	/* empty: any address */
		}
		c->dv[i].nr_blocks = nb;
		total += nb;
	}
	x.nr_dpus = nd;
	x.nr_blocks = total;
	r = rn(&c->rng, 100);
	if (r < 2 && total)
		x.nr_blocks--;
	else if (r < 4)
		x.nr_blocks++;
	else if (r < 5)
		x.nr_blocks = DPUSIM_XFER_MAX_BLOCKS + 1 + rn(&c->rng, 3);
	else if (r < 6)
		x.nr_blocks = 0xffffffffu;
	else if (r < 7)
		x.nr_dpus = m->nr_dpus + 1 + rn(&c->rng, 3);
	x.dpus = place_list(c, c->dv, nd * sizeof(c->dv[0]), DESC_DPUS,
			    RO_DPUS, 1024);
	x.blocks = place_list(c, c->bv, total * sizeof(c->bv[0]), DESC_BLOCKS,
			      RO_BLOCKS, RO_LEN - RO_BLOCKS);
	k->dv = c->dv;
	k->bv = c->bv;
	place_struct(c, k, &x);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t u = *(const uint64_t *)a, v = *(const uint64_t *)b;

	return u < v ? -1 : u > v;
}

/* Distinct user pages the call's pieces touch, if over @max (else 0). */
static uint64_t distinct_pages(const struct fz_call *k, uint64_t ub,
			       uint64_t max)
{
	const struct dpusim_xfer *x = &k->f.x;
	uint64_t *pg, np = 0, d = 0, p, left, len, end;
	uint32_t i, j, first = 0;

	if (ub <= max)
		return 0;
	pg = malloc(ub * sizeof(*pg));
	if (!pg)
		return 0;
	for (i = 0; i < x->nr_dpus; first += k->dv[i++].nr_blocks) {
		left = x->length;
		for (j = first; j < first + k->dv[i].nr_blocks && left; j++) {
			const struct dpusim_block *b = &k->bv[j];

			if (!b->length ||
			    __builtin_add_overflow(b->addr, b->length, &end))
				continue;
			len = b->length < left ? b->length : left;
			left -= len;
			for (p = b->addr >> 12; p <= (b->addr + len - 1) >> 12; p++)
				pg[np++] = p;
		}
	}
	qsort(pg, np, sizeof(*pg), cmp_u64);
	for (p = 0; p < np; p++)
		if (!p || pg[p] != pg[p - 1])
			d++;
	free(pg);
	return d;
}

/* DPUSIM_XFER_STREAM (the streams' section) */
static struct mstream *ms_mine(struct ctx *c, uint32_t id);
static bool predict_stream_header(struct ctx *c, struct fz_call *k,
				  uint64_t *mem);
static void predict_stream_state(struct ctx *c, struct fz_call *k);

static void predict_xfer(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_xfer *x = &k->f.x;
	const struct model *m = c->m;
	bool from = x->flags & DPUSIM_XFER_FROM_DPU;
	bool nlc = x->flags & DPUSIM_XFER_NO_LENGTH_CHECK;
	bool wram = x->flags & DPUSIM_XFER_WRAM;
	bool stream = x->flags & DPUSIM_XFER_STREAM;
	/* blocks at offsets in the stream's registered buffer, not addresses */
	bool sb = stream && x->flags & DPUSIM_XFER_STREAM_BUF;
	const struct mstream *e = stream ? ms_mine(c, x->stream) : NULL;
	uint64_t mem = wram ? m->wram : m->mram, end, sum, bytes, total = 0;
	uint64_t zeros = 0, left, len, pages_ub = 0;
	uint32_t align = wram ? DPUSIM_WRAM_ALIGN : DPUSIM_MRAM_ALIGN;
	uint8_t seen[MAXD] = {};
	uint32_t i, j, first = 0;
	bool counts_ok = true;
	int rd, rb;

	if (x->flags & ~0x3fu || x->__reserved ||
	    (x->flags & DPUSIM_XFER_STREAM_BUF && !stream))
		es_add(&k->must, EINVAL);
	/* a stream's memory: no alignment, its own size, its own rules */
	if (stream) {
		if (!predict_stream_header(c, k, &mem))
			return;
		align = 1;
	}
	/* WRAM: DPUSIM_WRAM_ALIGN, MRAM: DPUSIM_MRAM_ALIGN */
	if (x->offset % align || x->length % align)
		es_add(&k->must, EINVAL);
	if (__builtin_add_overflow(x->offset, x->length, &end) || end > mem)
		es_add(&k->must, EOVERFLOW);
	if (x->nr_dpus > m->nr_dpus || x->nr_blocks > DPUSIM_XFER_MAX_BLOCKS) {
		es_add(&k->must, E2BIG);
		return;
	}
	/* the lists */
	rd = range_check(&c->rs, x->dpus, (uint64_t)x->nr_dpus * 8, false);
	rb = range_check(&c->rs, x->blocks, (uint64_t)x->nr_blocks * 16, false);
	if (rd == RC_BAD || rb == RC_BAD)
		es_add(&k->must, EFAULT);
	if (rd != RC_OK || rb != RC_OK)
		return;
	for (i = 0; i < x->nr_dpus; i++) {
		const struct dpusim_xfer_dpu *d = &k->dv[i];

		if (d->dpu >= m->nr_dpus || seen[d->dpu])
			es_add(&k->must, EINVAL);
		else
			seen[d->dpu] = 1;
		if (d->nr_blocks > x->nr_blocks - first) {
			es_add(&k->must, EINVAL);
			counts_ok = false;
			break;
		}
		sum = 0;
		for (j = first; j < first + d->nr_blocks; j++) {
			if (__builtin_add_overflow(k->bv[j].addr, k->bv[j].length, &end))
				es_add(&k->must, EFAULT);
			if (__builtin_add_overflow(sum, k->bv[j].length, &sum))
				sum = ~0ULL;
		}
		if (!nlc && sum != x->length)
			es_add(&k->must, EINVAL);
		bytes = sum < x->length ? sum : x->length;
		total += bytes;
		if (!from)
			zeros += x->length - bytes;
		/* the pieces the kernel touches, and those past the length */
		left = x->length;
		for (j = first; j < first + d->nr_blocks; j++) {
			const struct dpusim_block *b = &k->bv[j];
			int rc;

			if (!b->length)
				continue;
			if (!left) {
				if (!sb &&
				    range_check(&c->rs, b->addr, b->length, from) != RC_OK)
					es_add(&k->may, EFAULT);
				continue;
			}
			len = b->length < left ? b->length : left;
			left -= len;
			if (__builtin_add_overflow(b->addr, len, &end))
				continue;	/* EFAULT above */
			pages_ub += ((b->addr + len - 1) >> 12) - (b->addr >> 12) + 1;
			if (sb) {	/* inside the buffer (none: EINVAL below) */
				if (e && e->buf_len &&
				    (b->addr >= e->buf_len || len > e->buf_len - b->addr))
					es_add(&k->must, EINVAL);
				continue;
			}
			rc = range_check(&c->rs, b->addr, len, from);
			if (rc == RC_BAD)
				es_add(&k->must, EFAULT);
			else if (rc == RC_FLAKY)
				es_add(&k->may, EFAULT);
		}
		first += d->nr_blocks;
	}
	if (counts_ok && first != x->nr_blocks)
		es_add(&k->must, EINVAL);
	/* the stream's state, as the core names it (checked under the lock) */
	if (stream && counts_ok && x->nr_dpus == 1 && k->dv[0].dpu < m->nr_dpus)
		predict_stream_state(c, k);
	/*
	 * DPUSIM_XFER_STREAM_BUF: the stream has no buffer; this and the
	 * blocks outside it are found where the pages would be pinned, after
	 * the queue's room and the allocations
	 */
	if (sb) {
		if (e && !e->buf_len)
			es_add(&k->must, EINVAL);
		es_add(&k->may, ENOMEM);
		if (x->flags & DPUSIM_XFER_ASYNC)
			es_add(&k->may, EAGAIN);
	}
	if (total > DPUSIM_XFER_MAX_BYTES || zeros > DPUSIM_XFER_MAX_PAD_BYTES)
		es_add(&k->must, E2BIG);
	if (counts_ok &&
	    distinct_pages(k, pages_ub, DPUSIM_XFER_MAX_PAGES) > DPUSIM_XFER_MAX_PAGES)
		es_add(&k->must, E2BIG);
	/* a well-formed call may still fail for want of resources */
	es_add(&k->amb, ENOMEM);
	if (!from)
		es_add(&k->amb, ENOSPC);
	if (x->flags & DPUSIM_XFER_ASYNC)
		es_add(&k->amb, EAGAIN);
	else
		es_add(&k->amb, ETIMEDOUT);
}

/* After a FROM_DPU call: compare the destination arena. */
static void check_dst(struct ctx *c, struct fz_call *k, bool ok)
{
	const struct dpusim_xfer *x = &k->f.x;
	bool wram = x->flags & DPUSIM_XFER_WRAM;
	uint64_t i, left, len, off, a, n;
	uint32_t d, j, first = 0;
	uint8_t v;

	if (!ok) {
		for (i = 0; i < DST_LEN; i++)
			if (c->dst[i] != c->fill) {
				violation(c, k, "failed FROM_DPU changed the destination at +%llu (%#x, was %#x)",
					  (unsigned long long)i, c->dst[i], c->fill);
				return;
			}
		return;
	}
	memset(c->dst_cnt, 0, DST_LEN);
	for (d = 0; d < x->nr_dpus; first += k->dv[d++].nr_blocks) {
		left = x->length;
		off = x->offset;
		for (j = first; j < first + k->dv[d].nr_blocks && left; j++) {
			const struct dpusim_block *b = &k->bv[j];

			len = b->length < left ? b->length : left;
			left -= len;
			for (n = 0; n < len; n++, off++) {
				a = b->addr + n;
				if (a < (uintptr_t)c->dst ||
				    a >= (uintptr_t)c->dst + DST_LEN)
					continue;
				i = a - (uintptr_t)c->dst;
				if (c->dst_cnt[i] < 2)
					c->dst_cnt[i]++;
				if (model_byte(c->m, k->dv[d].dpu, wram, off, &v))
					c->dst_exp[i] = v;
				else
					c->dst_cnt[i] = 2;	/* unknown */
			}
		}
	}
	for (i = 0; i < DST_LEN; i++) {
		if (!c->dst_cnt[i] && c->dst[i] != c->fill) {
			violation(c, k, "FROM_DPU wrote host byte +%llu outside its blocks (%#x, fill %#x)",
				  (unsigned long long)i, c->dst[i], c->fill);
			return;
		}
		if (c->dst_cnt[i] == 1 && c->dst[i] != c->dst_exp[i]) {
			violation(c, k, "FROM_DPU returned %#x at host +%llu, model says %#x",
				  c->dst[i], (unsigned long long)i, c->dst_exp[i]);
			return;
		}
	}
}

static int raw_sync(int fd)
{
	struct dpusim_sync s = { .size = sizeof(s) };
	int ret;

	do {
		st_add(&ST->helper_calls, 1);
		ret = ioctl(fd, DPUSIM_IOCTL_SYNC, &s);
	} while (ret && errno == EINTR);
	return ret ? errno : 0;
}

static bool nonzero(const uint8_t *p, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return true;
	return false;
}

static void commit_xfer(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_xfer *x = &k->f.x;
	bool from = x->flags & DPUSIM_XFER_FROM_DPU;
	bool wram = x->flags & DPUSIM_XFER_WRAM;
	struct model *m = c->m;
	uint64_t left, len, off, n, e, s, t;
	uint32_t d, j, first = 0;
	struct area ar[2];
	int ti, err, na, q;

	if (from) {
		if (k->ret == 0 && (x->flags & DPUSIM_XFER_ASYNC)) {
			err = raw_sync(c->fd);
			if (err == EBADF && c->may_ebadf)
				return;
			if (err) {
				violation(c, k, "SYNC after an async FROM_DPU: %s", ename(err));
				return;
			}
		}
		check_dst(c, k, k->ret == 0);
		return;
	}
	if (k->ret)
		return;
	/* TO_DPU succeeded: the model takes its bytes, then zeros */
	for (d = 0; d < x->nr_dpus; first += k->dv[d++].nr_blocks) {
		ti = track_idx(m, k->dv[d].dpu);
		if (ti >= 0 && !c->exact) {
			violation(c, k, "fuzzer: tracked DPU written in an inexact phase");
			ti = -1;
		}
		left = x->length;
		off = x->offset;
		for (j = first; j < first + k->dv[d].nr_blocks && left; j++) {
			const struct dpusim_block *b = &k->bv[j];

			len = b->length < left ? b->length : left;
			left -= len;
			if (len && (!in_area(m, wram, off) ||
				    !in_area(m, wram, off + len - 1)) && m->zero_ok &&
			    nonzero((const uint8_t *)(uintptr_t)b->addr, len)) {
				m->zero_ok = false;
				msg("fuzzer: data written outside the model areas (off %#llx); zero checks off",
				    (unsigned long long)off);
			}
			for (n = 0; n < len && ti >= 0; n++) {
				uint8_t *p = model_ptr(m, ti, wram, off + n);

				if (p)
					*p = *(const uint8_t *)(uintptr_t)(b->addr + n);
			}
			off += len;
		}
		e = x->offset + x->length;
		if (ti < 0 || off >= e)
			continue;
		na = areas_of(m, wram, ar);
		for (q = 0; q < na; q++) {
			s = off > ar[q].start ? off : ar[q].start;
			t = e < ar[q].start + ar[q].len ? e : ar[q].start + ar[q].len;
			if (s < t)
				memset(model_ptr(m, ti, wram, s), 0, t - s);
		}
	}
}

static void gen_xfer_fill(struct ctx *c, struct fz_call *k)
{
	gen_xfer(c, k);
	if (k->f.x.flags & DPUSIM_XFER_FROM_DPU) {
		c->fill = rnd(&c->rng);
		memset(c->dst, c->fill, DST_LEN);
	}
}

/* ------------------------------------------------- DPUSIM_IOCTL_RANK_INFO */

static void gen_info(struct ctx *c, struct fz_call *k)
{
	struct dpusim_rank_info i = { .size = sizeof(i) };

	if (chance(&c->rng, 5))
		i.flags = 1u << rn(&c->rng, 32);
	if (chance(&c->rng, 20)) {	/* out fields: garbage in */
		i.abi_version = rnd(&c->rng);
		i.nr_dpus = rnd(&c->rng);
		i.mram_size = rnd(&c->rng);
	}
	place_struct(c, k, &i);
}

static void predict_info(struct ctx *c, struct fz_call *k)
{
	size_t n = k->size < sizeof(k->f.info) ? k->size : sizeof(k->f.info);

	if (k->f.info.flags)
		es_add(&k->must, EINVAL);
	if (range_check(&c->rs, (uintptr_t)k->arg, n, true) != RC_OK)
		es_add(&k->must, EFAULT);
}

static void commit_info(struct ctx *c, struct fz_call *k)
{
	struct dpusim_rank_info out;
	const struct model *m = c->m;

	if (k->place != PL_RW && k->place != PL_RO)
		return;
	if (k->ret) {
		if (memcmp(k->arg, k->img, k->img_len))
			violation(c, k, "failed RANK_INFO changed its struct");
		return;
	}
	memcpy(&out, k->arg, sizeof(out));
	if (out.flags || out.abi_version != DPUSIM_ABI_VERSION ||
	    out.rank_index != (uint32_t)m->rank || out.nr_dpus != m->nr_dpus ||
	    out.wram_size != m->wram || out.mram_size != m->mram)
		violation(c, k, "RANK_INFO returned abi %u rank %u dpus %u wram %u mram %llu",
			  out.abi_version, out.rank_index, out.nr_dpus,
			  out.wram_size, (unsigned long long)out.mram_size);
	if (k->img_len > sizeof(out) &&
	    memcmp(k->arg + sizeof(out), k->img + sizeof(out),
		   k->img_len - sizeof(out)))
		violation(c, k, "RANK_INFO wrote past the struct it knows");
}

/* ------------------------------------------------------ DPUSIM_IOCTL_SYNC */

static void gen_sync(struct ctx *c, struct fz_call *k)
{
	struct dpusim_sync s = { .size = sizeof(s) };
	static const uint32_t t[] = {
		0, 1, 10, 1000, DPUSIM_SYNC_MAX_TIMEOUT_MS,
		DPUSIM_SYNC_MAX_TIMEOUT_MS + 1, 0xffffffffu,
	};

	s.timeout_ms = chance(&c->rng, 70) ? t[rn(&c->rng, 5)] :
		       chance(&c->rng, 50) ? t[rn(&c->rng, 7)] : rnd(&c->rng);
	if (chance(&c->rng, 4))
		s.flags = 1u << rn(&c->rng, 32);
	if (chance(&c->rng, 4))
		s.__reserved = 1 + rn(&c->rng, 0xfffffffe);
	place_struct(c, k, &s);
}

static void predict_sync(struct ctx *c, struct fz_call *k)
{
	if (k->f.s.flags || k->f.s.__reserved ||
	    k->f.s.timeout_ms > DPUSIM_SYNC_MAX_TIMEOUT_MS)
		es_add(&k->must, EINVAL);
	es_add(&k->amb, ETIMEDOUT);
}

static void commit_none(struct ctx *c, struct fz_call *k)
{
	if (k->ret && (k->place == PL_RW || k->place == PL_RO) &&
	    memcmp(k->arg, k->img, k->img_len))
		violation(c, k, "failed call changed its struct");
}

/* ------------------------------------------------- unknown ioctl numbers */

static void gen_unknown(struct ctx *c, struct fz_call *k)
{
	unsigned int nr, dir, size, type;

	do {
		type = DPUSIM_TYPE;
		nr = rn(&c->rng, 256);
		dir = rn(&c->rng, 4);
		size = chance(&c->rng, 50) ? 0 : rn(&c->rng, 1 << 14);
		if (chance(&c->rng, 5))
			type = DPUSIM_TYPE + 1 + rn(&c->rng, 0x20);	/* 0xdc..0xfb */
		k->cmd = _IOC(dir, type, nr, size);
	} while (k->cmd == DPUSIM_IOCTL_RANK_INFO || k->cmd == DPUSIM_IOCTL_XFER ||
		 k->cmd == DPUSIM_IOCTL_SYNC || k->cmd == DPUSIM_IOCTL_LAUNCH ||
		 k->cmd == DPUSIM_IOCTL_DPU_STATUS ||
		 k->cmd == DPUSIM_IOCTL_WORKER_OPEN ||
		 k->cmd == DPUSIM_IOCTL_STREAM_CREATE ||
		 k->cmd == DPUSIM_IOCTL_STREAM_OPEN ||
		 k->cmd == DPUSIM_IOCTL_STREAM_CLOSE ||
		 k->cmd == DPUSIM_IOCTL_STREAM_SEEK);
	k->arg = chance(&c->rng, 50) ? c->desc : NULL;
	k->place = k->arg ? PL_RW : PL_NULL;
}

static void predict_unknown(struct ctx *c, struct fz_call *k)
{
	es_add(&k->must, ENOTTY);
}

static void commit_nothing(struct ctx *c, struct fz_call *k)
{
}

/* ------------------------------------------- tag matching: /dev/dpusim/tm */

/*
 * The TM world: two contexts (two opens of /dev/dpusim/tm), their CQs
 * (every ring mapped), MRs over guarded buffers (and MRAM of rank3),
 * SRQs, QPs and connections, kept here so the generators name live,
 * dead and random objects.  After every TM call every ring is scanned:
 * the producer only moves forward, new completions carry known opcodes
 * and statuses, the consumer is advanced (mostly) or scribbled (ahead,
 * far behind) to provoke overruns; a CQ's overruns counter that moved
 * marks its context: its next ioctl must fail with EOVERFLOW (once).
 */
#define TM_NCTX		2
#define TM_NCQ		8
#define TM_NMR		16
#define TM_NSRQ		6
#define TM_NQP		12
#define TM_NH		48
#define TM_BUF		(64UL << 10)
#define TM_WRS_OFF	(16UL << 10)	/* desc: the wr array */
#define TM_SGE_OFF	(24UL << 10)	/* desc: sg lists, 256 bytes per wr */
#define TM_MSG_OFF	(48UL << 10)	/* desc: inline messages */
#define TM_MAXWR	24

struct tm_wcq { uint32_t h, nr, prod; uint64_t off, size; uint8_t *ring; int ctx; bool live; uint32_t ovr; };
struct tm_wmr { uint32_t key, access; uint64_t addr, len; int ctx; bool live, mram; };
struct tm_wsrq {
	uint32_t h, num, sge, tags, ops, wr, unexp;
	uint32_t th[TM_NH];		/* tag handles issued */
	int nth, ctx, cq;
	bool live;
};
struct tm_wqp { uint32_t h, num, sge; int ctx, cq, srq; bool live; };

struct tmw {
	int fd[TM_NCTX], rank_fd;
	uint64_t mram;
	uint32_t nr_dpus;
	uint8_t *buf[TM_NCTX];
	struct tm_wcq cq[TM_NCQ];
	struct tm_wmr mr[TM_NMR];
	struct tm_wsrq srq[TM_NSRQ];
	struct tm_wqp qp[TM_NQP];
	bool pending[TM_NCTX];
	uint64_t cqes, overruns, bad_cqe, nr_done_kept;
};

static struct tmw *TW;

/* A free CQ slot; the ring of a destroyed CQ is unmapped to make one. */
static int tm_free_slot_cq(void)
{
	int i;

	for (i = 0; i < TM_NCQ; i++)
		if (!TW->cq[i].ring)
			return i;
	for (i = 0; i < TM_NCQ; i++)
		if (!TW->cq[i].live) {
			munmap(TW->cq[i].ring, TW->cq[i].size);
			TW->cq[i].ring = NULL;
			return i;
		}
	return -1;
}

static int tm_live_cq(struct ctx *c, int cx)
{
	int i, n = 0, pick = -1;

	for (i = 0; i < TM_NCQ; i++)
		if (TW->cq[i].live && TW->cq[i].ctx == cx && !rn(&c->rng, ++n))
			pick = i;
	return pick;
}

/* A handle: a live object's (@live >= 0), a dead one's, 0 or random. */
static uint32_t tm_handle(struct ctx *c, int live, uint32_t h)
{
	unsigned int r = rn(&c->rng, 100);

	if (live >= 0 && r < 85)
		return h;
	if (r < 90)
		return 0;
	if (r < 96)
		return 1 + rn(&c->rng, 40);
	return rnd(&c->rng);
}

static int tm_pick_srq(struct ctx *c, int cx)
{
	int i, n = 0, pick = -1;

	for (i = 0; i < TM_NSRQ; i++)
		if (TW->srq[i].live && (cx < 0 || TW->srq[i].ctx == cx) &&
		    !rn(&c->rng, ++n))
			pick = i;
	return pick;
}

static int tm_pick_qp(struct ctx *c, int cx, bool connected)
{
	int i, n = 0, pick = -1;

	for (i = 0; i < TM_NQP; i++)
		if (TW->qp[i].live && (cx < 0 || TW->qp[i].ctx == cx) &&
		    (!connected || TW->qp[i].srq >= 0) && !rn(&c->rng, ++n))
			pick = i;
	return pick;
}

static int tm_pick_mr(struct ctx *c, int cx, uint32_t need)
{
	int i, n = 0, pick = -1;

	for (i = 0; i < TM_NMR; i++)
		if (TW->mr[i].live && TW->mr[i].ctx == cx &&
		    (TW->mr[i].access & need) == need && !rn(&c->rng, ++n))
			pick = i;
	return pick;
}

/* One sg entry: inside MR @mi mostly, else a defect (EINVAL/EACCES). */
static void tm_sge(struct ctx *c, int mi, uint32_t maxlen,
		   struct dpusim_tm_sge *s, bool *defect)
{
	const struct tm_wmr *m = mi >= 0 ? &TW->mr[mi] : NULL;
	uint64_t off, len;

	if (!m || chance(&c->rng, 4)) {
		s->addr = m ? m->addr : (uintptr_t)TW->buf[0];
		s->length = 1 + rn(&c->rng, 64);
		s->lkey = chance(&c->rng, 50) ? 0 : rnd(&c->rng) & 0xffff;
		*defect = true;
		return;
	}
	len = rn(&c->rng, (m->len < maxlen ? m->len : maxlen) + 1);
	off = rn(&c->rng, m->len - len + 1);
	s->addr = m->addr + off;
	s->length = len;
	s->lkey = m->key;
	if (chance(&c->rng, 3)) {	/* past the end of the region */
		s->addr = m->addr + m->len - rn(&c->rng, 8);
		s->length = 9 + rn(&c->rng, 64);
		*defect = true;
	}
}

static uint64_t tm_place_sges(struct ctx *c, int wi,
			      const struct dpusim_tm_sge *s, uint32_t n,
			      bool *bad)
{
	size_t off = TM_SGE_OFF + (size_t)wi * 16 * sizeof(*s);

	if (n && chance(&c->rng, 2)) {
		*bad = true;
		return chance(&c->rng, 50) ? (uintptr_t)c->none : 8;
	}
	put_bytes(c, c->desc + off, s, n * sizeof(*s));
	return (uintptr_t)(c->desc + off);
}

/* Place the wr array; EFAULT possible unless it went to writable memory. */
static uint64_t tm_place_wrs(struct ctx *c, struct fz_call *k, const void *wrs,
			     size_t len, bool writes_back)
{
	uint64_t a = place_list(c, wrs, len, TM_WRS_OFF, RO_BLOCKS,
				RO_LEN - RO_BLOCKS);

	if (range_check(&c->rs, a, len, writes_back) != RC_OK)
		es_add(&k->may, EFAULT);
	k->tm_wrs = a;
	return a;
}

static void tm_choose_ctx(struct ctx *c, struct fz_call *k)
{
	k->tctx = rn(&c->rng, TM_NCTX);
}

/* -- QUERY */

static void gen_tm_query(struct ctx *c, struct fz_call *k)
{
	struct dpusim_tm_query q = { .size = sizeof(q) };

	tm_choose_ctx(c, k);
	if (chance(&c->rng, 5))
		q.flags = 1u << rn(&c->rng, 32);
	if (chance(&c->rng, 20))
		q.max_num_tags = q.max_msg = rnd(&c->rng);
	place_struct(c, k, &q);
}

static void predict_tm_query(struct ctx *c, struct fz_call *k)
{
	if (k->f.tq.flags)
		es_add(&k->must, EINVAL);
	if (range_check(&c->rs, (uintptr_t)k->arg, 4, true) != RC_OK)
		es_add(&k->must, EFAULT);
}

static void commit_tm_query(struct ctx *c, struct fz_call *k)
{
	struct dpusim_tm_query q;

	if (k->ret || (k->place != PL_RW && k->place != PL_RO))
		return;
	memcpy(&q, k->arg, sizeof(q));
	if (q.max_num_tags != DPUSIM_TM_MAX_NUM_TAGS ||
	    q.max_ops != DPUSIM_TM_MAX_OPS || q.max_sge != DPUSIM_TM_MAX_SGE ||
	    q.max_rndv_hdr_size != DPUSIM_TM_MAX_RNDV_HDR_SIZE ||
	    q.max_srq_wr != DPUSIM_TM_MAX_SRQ_WR ||
	    q.max_cqe != DPUSIM_TM_MAX_CQE || q.max_inline != DPUSIM_TM_MAX_INLINE ||
	    q.max_qp_recv != DPUSIM_TM_MAX_QP_RECV ||
	    q.max_msg != DPUSIM_TM_MAX_MSG || !(q.cap_flags & DPUSIM_TM_CAP_RC))
		violation(c, k, "TM_QUERY returned limits other than the header's");
}

/* -- REG_MR */

static void gen_tm_reg_mr(struct ctx *c, struct fz_call *k)
{
	struct dpusim_tm_reg_mr r = { .size = sizeof(r) };
	unsigned int p = rn(&c->rng, 100);
	uint64_t off;

	tm_choose_ctx(c, k);
	r.access = chance(&c->rng, 85) ?
		   DPUSIM_TM_ACCESS_LOCAL_WRITE | DPUSIM_TM_ACCESS_REMOTE_READ : rn(&c->rng, 8);
	if (p < 80) {
		off = rn(&c->rng, TM_BUF);
		r.addr = (uintptr_t)TW->buf[k->tctx] + off;
		r.length = 1 + rn(&c->rng, chance(&c->rng, 70) ? 512 : TM_BUF - off);
		if (chance(&c->rng, 3))
			r.length += PAGE;	/* into the guard page */
	} else if (p < 88 && TW->rank_fd >= 0) {
		r.flags = DPUSIM_TM_MR_MRAM;
		r.rank_fd = TW->rank_fd;
		r.dpu = chance(&c->rng, 90) ? rn(&c->rng, TW->nr_dpus) : TW->nr_dpus + rn(&c->rng, 4);
		r.addr = chance(&c->rng, 90) ? rn(&c->rng, 1 << 20) : TW->mram - rn(&c->rng, 64);
		r.length = 1 + rn(&c->rng, 2 * PAGE);
		if (chance(&c->rng, 5))
			r.rank_fd = chance(&c->rng, 50) ? 999 : TW->fd[0];
	} else if (p < 92) {
		r.addr = (uintptr_t)c->ro + rn(&c->rng, PAGE);
		r.length = 1 + rn(&c->rng, PAGE);
	} else if (p < 95) {
		r.addr = (uintptr_t)c->none;
		r.length = 1 + rn(&c->rng, PAGE);
	} else {
		r.addr = rnd(&c->rng);
		r.length = chance(&c->rng, 50) ? 0 : rnd(&c->rng) >> rn(&c->rng, 64);
	}
	if (chance(&c->rng, 3))
		r.flags |= 1u << (1 + rn(&c->rng, 31));
	if (chance(&c->rng, 3))
		r.__reserved = 1;
	if (chance(&c->rng, 3))
		r.length = 0;
	if (chance(&c->rng, 2))
		r.length = DPUSIM_TM_MAX_MSG + 1 + rn(&c->rng, 4096);
	if (chance(&c->rng, 3) && !(r.flags & DPUSIM_TM_MR_MRAM))
		r.dpu = 1;
	if (chance(&c->rng, 10))
		r.lkey = r.rkey = rnd(&c->rng);	/* out fields */
	place_struct(c, k, &r);
}

static void predict_tm_reg_mr(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_tm_reg_mr *r = &k->f.trm;
	bool mram = r->flags & DPUSIM_TM_MR_MRAM;
	uint64_t end;

	if ((r->flags & ~DPUSIM_TM_MR_MRAM) || r->access > 7 || !r->length ||
	    r->__reserved || (!mram && (r->rank_fd || r->dpu)))
		es_add(&k->must, EINVAL);
	else if (r->length > DPUSIM_TM_MAX_MSG)
		es_add(&k->must, E2BIG);
	else if (__builtin_add_overflow(r->addr, r->length, &end))
		es_add(&k->must, EOVERFLOW);
	else if (!mram && range_check(&c->rs, r->addr, r->length, false) != RC_OK)
		es_add(&k->must, EFAULT);
	if (!es_empty(&k->must))
		return;
	if (mram) {
		if (r->rank_fd != TW->rank_fd)
			es_add(&k->must, r->rank_fd == TW->fd[0] ? ENODEV : EBADF);
		else if (r->dpu >= TW->nr_dpus)
			es_add(&k->must, EINVAL);
		else if (end > TW->mram)
			es_add(&k->must, EOVERFLOW);
	} else if ((r->access & (DPUSIM_TM_ACCESS_LOCAL_WRITE |
				 DPUSIM_TM_ACCESS_REMOTE_WRITE)) &&
		   range_check(&c->rs, r->addr, r->length, true) != RC_OK) {
		es_add(&k->must, EFAULT);
	}
	if (range_check(&c->rs, (uintptr_t)k->arg, sizeof(*r), true) != RC_OK)
		es_add(&k->may, EFAULT);
	es_add(&k->amb, ENOMEM);
	es_add(&k->amb, ENOSPC);
}

static void commit_tm_reg_mr(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_tm_reg_mr *r = &k->f.trm;
	struct dpusim_tm_reg_mr out;
	int i;

	if (k->ret)
		return;
	memcpy(&out, k->arg, sizeof(out));
	if (!out.lkey || out.lkey != out.rkey)
		violation(c, k, "REG_MR: lkey %u rkey %u", out.lkey, out.rkey);
	for (i = 0; i < TM_NMR; i++)
		if (!TW->mr[i].live)
			break;
	if (i == TM_NMR) {
		tm_destroy(TW->fd[k->tctx], DPUSIM_IOCTL_TM_DEREG_MR, out.lkey);
		return;
	}
	TW->mr[i] = (struct tm_wmr){ out.lkey, r->access, r->addr, r->length,
				     k->tctx, true, r->flags & DPUSIM_TM_MR_MRAM };
}

/* -- DEREG_MR, DESTROY_CQ, DESTROY_SRQ, DESTROY_QP */

static void gen_tm_destroy(struct ctx *c, struct fz_call *k)
{
	struct dpusim_tm_destroy d = { .size = sizeof(d) };
	int i = -1, n = 0, j;

	tm_choose_ctx(c, k);
	switch (k->cmd) {
	case DPUSIM_IOCTL_TM_DEREG_MR:
		i = tm_pick_mr(c, k->tctx, 0);
		d.handle = tm_handle(c, i, i >= 0 ? TW->mr[i].key : 0);
		break;
	case DPUSIM_IOCTL_TM_DESTROY_CQ:
		i = tm_live_cq(c, k->tctx);
		d.handle = tm_handle(c, i, i >= 0 ? TW->cq[i].h : 0);
		break;
	case DPUSIM_IOCTL_TM_DESTROY_SRQ:
		for (j = 0; j < TM_NSRQ; j++)
			if (TW->srq[j].live && TW->srq[j].ctx == k->tctx && !rn(&c->rng, ++n))
				i = j;
		d.handle = tm_handle(c, i, i >= 0 ? TW->srq[i].h : 0);
		break;
	default:
		for (j = 0; j < TM_NQP; j++)
			if (TW->qp[j].live && TW->qp[j].ctx == k->tctx && !rn(&c->rng, ++n))
				i = j;
		d.handle = tm_handle(c, i, i >= 0 ? TW->qp[i].h : 0);
		break;
	}
	if (chance(&c->rng, 4))
		d.flags = 1u << rn(&c->rng, 32);
	if (chance(&c->rng, 4))
		d.__reserved = 1 + rn(&c->rng, 100);
	place_struct(c, k, &d);
}

static void predict_tm_destroy(struct ctx *c, struct fz_call *k)
{
	if (k->f.td.flags || k->f.td.__reserved)
		es_add(&k->must, EINVAL);
	es_add(&k->amb, ENOENT);
	es_add(&k->amb, EBUSY);
	es_add(&k->amb, EOVERFLOW);
}

static void commit_tm_destroy(struct ctx *c, struct fz_call *k)
{
	uint32_t h = k->f.td.handle;
	int i, j;

	commit_none(c, k);
	if (k->ret)
		return;
	switch (k->cmd) {
	case DPUSIM_IOCTL_TM_DEREG_MR:
		for (i = 0; i < TM_NMR; i++)
			if (TW->mr[i].live && TW->mr[i].key == h && TW->mr[i].ctx == k->tctx)
				TW->mr[i].live = false;
		break;
	case DPUSIM_IOCTL_TM_DESTROY_CQ:
		for (i = 0; i < TM_NCQ; i++)
			if (TW->cq[i].live && TW->cq[i].h == h && TW->cq[i].ctx == k->tctx) {
				TW->cq[i].live = false;
				for (j = 0; j < TM_NSRQ; j++)
					if (TW->srq[j].live && TW->srq[j].cq == i)
						violation(c, k, "DESTROY_CQ of a CQ an SRQ uses succeeded");
				for (j = 0; j < TM_NQP; j++)
					if (TW->qp[j].live && TW->qp[j].cq == i)
						violation(c, k, "DESTROY_CQ of a CQ a QP uses succeeded");
			}
		break;
	case DPUSIM_IOCTL_TM_DESTROY_SRQ:
		for (i = 0; i < TM_NSRQ; i++)
			if (TW->srq[i].live && TW->srq[i].h == h && TW->srq[i].ctx == k->tctx) {
				TW->srq[i].live = false;
				for (j = 0; j < TM_NQP; j++)
					if (TW->qp[j].srq == i)
						TW->qp[j].srq = -2;	/* reset */
			}
		break;
	default:
		for (i = 0; i < TM_NQP; i++)
			if (TW->qp[i].live && TW->qp[i].h == h && TW->qp[i].ctx == k->tctx)
				TW->qp[i].live = false;
		break;
	}
}

/* -- CREATE_CQ (and its mapping) */

static void gen_tm_create_cq(struct ctx *c, struct fz_call *k)
{
	struct dpusim_tm_create_cq q = { .size = sizeof(q) };
	unsigned int r = rn(&c->rng, 100);

	tm_choose_ctx(c, k);
	q.cqe = r < 70 ? 1 + rn(&c->rng, 8) : r < 90 ? 1 + rn(&c->rng, 300) :
		r < 94 ? 0 : r < 97 ? DPUSIM_TM_MAX_CQE + rn(&c->rng, 3) : rnd(&c->rng);
	if (chance(&c->rng, 4))
		q.flags = 1u << rn(&c->rng, 32);
	if (chance(&c->rng, 10))
		q.handle = q.mmap_offset = q.mmap_size = rnd(&c->rng);
	place_struct(c, k, &q);
}

static void predict_tm_create_cq(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_tm_create_cq *q = &k->f.tcq;

	if (q->flags || !q->cqe)
		es_add(&k->must, EINVAL);
	if (q->cqe > DPUSIM_TM_MAX_CQE)
		es_add(&k->must, E2BIG);
	if (range_check(&c->rs, (uintptr_t)k->arg, sizeof(*q), true) != RC_OK)
		es_add(&k->may, EFAULT);
	es_add(&k->amb, ENOMEM);
	es_add(&k->amb, ENOSPC);
}

static void commit_tm_create_cq(struct ctx *c, struct fz_call *k)
{
	struct dpusim_tm_create_cq out;
	struct tm_cq cq;
	uint32_t want = 1;
	int i;

	if (k->ret)
		return;
	memcpy(&out, k->arg, sizeof(out));
	while (want < k->f.tcq.cqe)
		want <<= 1;
	if (out.cqe != want || out.mmap_size < DPUSIM_TM_CQ_RING_ENTRIES + (uint64_t)want * TM_CQE_SIZE ||
	    out.mmap_offset % PAGE || !out.handle)
		violation(c, k, "CREATE_CQ(%u): cqe %u handle %u offset %#llx size %#llx",
			  k->f.tcq.cqe, out.cqe, out.handle,
			  (unsigned long long)out.mmap_offset,
			  (unsigned long long)out.mmap_size);
	cq = (struct tm_cq){ out.handle, out.cqe, out.mmap_offset, out.mmap_size };
	i = tm_free_slot_cq();
	if (i < 0 || out.cqe > 512 || tm_cq_map(TW->fd[k->tctx], &cq)) {
		tm_destroy(TW->fd[k->tctx], DPUSIM_IOCTL_TM_DESTROY_CQ, out.handle);
		return;
	}
	if (cq.ring->nr_entries != out.cqe || cq.ring->entry_size != TM_CQE_SIZE ||
	    cq.ring->producer || cq.ring->consumer || cq.ring->flags)
		violation(c, k, "new ring: nr %u entry_size %u producer %u flags %#x",
			  cq.ring->nr_entries, cq.ring->entry_size,
			  cq.ring->producer, cq.ring->flags);
	TW->cq[i] = (struct tm_wcq){ out.handle, out.cqe, 0, out.mmap_offset,
				     out.mmap_size, (uint8_t *)cq.ring, k->tctx, true };
}

/* -- CREATE_SRQ */

static uint32_t tm_lim(struct ctx *c, uint32_t small, uint32_t max, bool *bad)
{
	unsigned int r = rn(&c->rng, 100);

	if (r < 92)
		return 1 + rn(&c->rng, small);
	*bad = true;
	return r < 95 ? 0 : max + 1 + rn(&c->rng, 3);
}

static void gen_tm_create_srq(struct ctx *c, struct fz_call *k)
{
	struct dpusim_tm_create_srq s = { .size = sizeof(s) };
	int q;
	bool bad = false;

	tm_choose_ctx(c, k);
	q = tm_live_cq(c, k->tctx);
	s.cq_handle = tm_handle(c, q, q >= 0 ? TW->cq[q].h : 0);
	s.max_num_tags = tm_lim(c, 8, DPUSIM_TM_MAX_NUM_TAGS, &bad);
	s.max_ops = tm_lim(c, 6, DPUSIM_TM_MAX_OPS, &bad);
	s.max_wr = tm_lim(c, 6, DPUSIM_TM_MAX_SRQ_WR, &bad);
	s.max_sge = tm_lim(c, 3, DPUSIM_TM_MAX_SGE, &bad);
	if (chance(&c->rng, 3))
		s.flags = 1u << rn(&c->rng, 32);
	if (chance(&c->rng, 3))
		s.__reserved = 1;
	place_struct(c, k, &s);
}

static void predict_tm_create_srq(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_tm_create_srq *s = &k->f.tsrq;

	if (s->flags || s->__reserved || !s->max_num_tags || !s->max_ops ||
	    !s->max_wr || !s->max_sge)
		es_add(&k->must, EINVAL);
	else if (s->max_num_tags > DPUSIM_TM_MAX_NUM_TAGS ||
		 s->max_ops > DPUSIM_TM_MAX_OPS ||
		 s->max_wr > DPUSIM_TM_MAX_SRQ_WR || s->max_sge > DPUSIM_TM_MAX_SGE)
		es_add(&k->must, E2BIG);
	if (range_check(&c->rs, (uintptr_t)k->arg, sizeof(*s), true) != RC_OK)
		es_add(&k->may, EFAULT);
	es_add(&k->amb, ENOENT);
	es_add(&k->amb, ENOMEM);
	es_add(&k->amb, ENOSPC);
}

static int tm_cq_idx(int cx, uint32_t h)
{
	int i;

	for (i = 0; i < TM_NCQ; i++)
		if (TW->cq[i].live && TW->cq[i].ctx == cx && TW->cq[i].h == h)
			return i;
	return -1;
}

static void commit_tm_create_srq(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_tm_create_srq *s = &k->f.tsrq;
	struct dpusim_tm_create_srq out;
	int i, q = tm_cq_idx(k->tctx, s->cq_handle);

	if (k->ret)
		return;
	memcpy(&out, k->arg, sizeof(out));
	for (i = 0; i < TM_NSRQ; i++)
		if (!TW->srq[i].live)
			break;
	if (i == TM_NSRQ || q < 0) {
		if (q < 0)
			violation(c, k, "CREATE_SRQ on CQ %u (not a live CQ) succeeded",
				  s->cq_handle);
		tm_destroy(TW->fd[k->tctx], DPUSIM_IOCTL_TM_DESTROY_SRQ, out.handle);
		return;
	}
	memset(&TW->srq[i], 0, sizeof(TW->srq[i]));
	TW->srq[i].h = out.handle;
	TW->srq[i].num = out.srq_num;
	TW->srq[i].sge = s->max_sge;
	TW->srq[i].tags = s->max_num_tags;
	TW->srq[i].ops = s->max_ops;
	TW->srq[i].wr = s->max_wr;
	TW->srq[i].ctx = k->tctx;
	TW->srq[i].cq = q;
	TW->srq[i].live = true;
}

/* -- CREATE_QP */

static void gen_tm_create_qp(struct ctx *c, struct fz_call *k)
{
	struct dpusim_tm_create_qp s = { .size = sizeof(s) };
	bool bad = false;
	int q;

	tm_choose_ctx(c, k);
	q = tm_live_cq(c, k->tctx);
	s.cq_handle = tm_handle(c, q, q >= 0 ? TW->cq[q].h : 0);
	s.max_sge = tm_lim(c, 4, DPUSIM_TM_MAX_SGE, &bad);
	if (chance(&c->rng, 3))
		s.flags = 1u << rn(&c->rng, 32);
	place_struct(c, k, &s);
}

static void predict_tm_create_qp(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_tm_create_qp *s = &k->f.tqp;

	if (s->flags || !s->max_sge)
		es_add(&k->must, EINVAL);
	else if (s->max_sge > DPUSIM_TM_MAX_SGE)
		es_add(&k->must, E2BIG);
	if (range_check(&c->rs, (uintptr_t)k->arg, sizeof(*s), true) != RC_OK)
		es_add(&k->may, EFAULT);
	es_add(&k->amb, ENOENT);
	es_add(&k->amb, ENOMEM);
	es_add(&k->amb, ENOSPC);
}

static void commit_tm_create_qp(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_tm_create_qp *s = &k->f.tqp;
	struct dpusim_tm_create_qp out;
	int i, q = tm_cq_idx(k->tctx, s->cq_handle);

	if (k->ret)
		return;
	memcpy(&out, k->arg, sizeof(out));
	for (i = 0; i < TM_NQP; i++)
		if (!TW->qp[i].live)
			break;
	if (i == TM_NQP || q < 0) {
		if (q < 0)
			violation(c, k, "CREATE_QP on CQ %u (not a live CQ) succeeded",
				  s->cq_handle);
		tm_destroy(TW->fd[k->tctx], DPUSIM_IOCTL_TM_DESTROY_QP, out.handle);
		return;
	}
	TW->qp[i] = (struct tm_wqp){ out.handle, out.qp_num, s->max_sge,
				     k->tctx, q, -1, true };
}

/* -- CONNECT */

static void gen_tm_connect(struct ctx *c, struct fz_call *k)
{
	struct dpusim_tm_connect s = { .size = sizeof(s) };
	int q, r;

	tm_choose_ctx(c, k);
	q = tm_pick_qp(c, k->tctx, false);
	r = tm_pick_srq(c, -1);
	s.qp_handle = tm_handle(c, q, q >= 0 ? TW->qp[q].h : 0);
	s.srq_num = tm_handle(c, r, r >= 0 ? TW->srq[r].num : 0);
	if (chance(&c->rng, 3))
		s.flags = 1u << rn(&c->rng, 32);
	place_struct(c, k, &s);
}

static void predict_tm_connect(struct ctx *c, struct fz_call *k)
{
	if (k->f.tcon.flags)
		es_add(&k->must, EINVAL);
	es_add(&k->amb, ENOENT);
	es_add(&k->amb, EISCONN);
	es_add(&k->amb, ENOMEM);
}

static void commit_tm_connect(struct ctx *c, struct fz_call *k)
{
	int i, j;

	commit_none(c, k);
	if (k->ret)
		return;
	for (i = 0; i < TM_NQP; i++)
		if (TW->qp[i].live && TW->qp[i].ctx == k->tctx &&
		    TW->qp[i].h == k->f.tcon.qp_handle)
			break;
	for (j = 0; j < TM_NSRQ; j++)
		if (TW->srq[j].live && TW->srq[j].num == k->f.tcon.srq_num)
			break;
	if (i == TM_NQP || j == TM_NSRQ) {
		violation(c, k, "CONNECT of qp %u to srq %u (not both live) succeeded",
			  k->f.tcon.qp_handle, k->f.tcon.srq_num);
		return;
	}
	if (TW->qp[i].srq != -1)
		violation(c, k, "CONNECT of a QP connected before succeeded");
	TW->qp[i].srq = j;
}

/* -- POST_SRQ_OPS, POST_SRQ_RECV, POST_SEND */

static void tm_post_top(struct ctx *c, struct dpusim_tm_post *p, uint32_t nr)
{
	p->size = sizeof(*p);
	p->nr_wr = nr;
	if (chance(&c->rng, 2))
		p->nr_wr = 0;
	if (chance(&c->rng, 2))
		p->nr_wr = DPUSIM_TM_MAX_WR + 1 + rn(&c->rng, 100);
	if (chance(&c->rng, 2))
		p->flags |= 1u << (1 + rn(&c->rng, 31));
	if (chance(&c->rng, 10))
		p->nr_done = rnd(&c->rng);	/* out */
}

static void gen_tm_srq_ops(struct ctx *c, struct fz_call *k)
{
	struct dpusim_tm_ops_wr w[TM_MAXWR] = {};
	struct dpusim_tm_sge s[16];
	struct dpusim_tm_post p = {};
	struct tm_wsrq *q;
	int si, i, j, mi;
	uint32_t nr, ns;
	bool defect = false, bad = false;

	tm_choose_ctx(c, k);
	si = tm_pick_srq(c, k->tctx);
	q = si >= 0 ? &TW->srq[si] : NULL;
	p.handle = tm_handle(c, si, q ? q->h : 0);
	nr = 1 + rn(&c->rng, q && chance(&c->rng, 90) ? q->ops : TM_MAXWR);
	for (i = 0; i < (int)nr; i++) {
		unsigned int r = rn(&c->rng, 100);

		w[i].wr_id = rnd(&c->rng);
		w[i].flags = rn(&c->rng, 4);
		w[i].unexpected_cnt = q && chance(&c->rng, 70) ? q->unexp : rn(&c->rng, 4);
		if (r < 60) {
			w[i].opcode = DPUSIM_TM_WR_TAG_ADD;
			w[i].recv_wr_id = rnd(&c->rng);
			w[i].tag = rn(&c->rng, 6);
			w[i].mask = chance(&c->rng, 70) ? ~0ULL : chance(&c->rng, 50) ? 0 : rnd(&c->rng);
			ns = q ? rn(&c->rng, q->sge + 1) : 1;
			if (chance(&c->rng, 2))
				ns = 17;
			for (j = 0; j < (int)ns && j < 16; j++) {
				mi = tm_pick_mr(c, chance(&c->rng, 97) ? k->tctx : !k->tctx,
						chance(&c->rng, 95) ? DPUSIM_TM_ACCESS_LOCAL_WRITE : 0);
				tm_sge(c, mi, 256, &s[j], &defect);
			}
			w[i].num_sge = ns;
			w[i].sg_list = tm_place_sges(c, i, s, ns < 16 ? ns : 16, &bad);
		} else if (r < 85) {
			w[i].opcode = DPUSIM_TM_WR_TAG_DEL;
			w[i].handle = q && q->nth && chance(&c->rng, 85) ?
				      q->th[rn(&c->rng, q->nth)] : rn(&c->rng, 3) ? rnd(&c->rng) : 0;
		} else if (r < 97) {
			w[i].opcode = DPUSIM_TM_WR_TAG_SYNC;
		} else {
			w[i].opcode = 3 + rn(&c->rng, 10);
		}
		if (chance(&c->rng, 1))
			w[i].flags |= 4;
		if (chance(&c->rng, 1))
			w[i].__reserved = 1;
	}
	tm_post_top(c, &p, nr);
	p.wrs = tm_place_wrs(c, k, w, nr * sizeof(w[0]), true);
	k->tm_nw = nr;
	place_struct(c, k, &p);
}

static bool tm_post_predict_top(struct ctx *c, struct fz_call *k, bool send)
{
	const struct dpusim_tm_post *p = &k->f.tp;

	if ((send ? p->flags & ~DPUSIM_TM_POST_FROM_SRQ : p->flags) ||
	    (!(send && (p->flags & DPUSIM_TM_POST_FROM_SRQ)) && p->remote_qpn) ||
	    !p->nr_wr)
		es_add(&k->must, EINVAL);
	else if (p->nr_wr > DPUSIM_TM_MAX_WR)
		es_add(&k->must, E2BIG);
	/* the struct goes back always (nr_done) */
	if (range_check(&c->rs, (uintptr_t)k->arg, sizeof(*p), true) != RC_OK) {
		if (es_empty(&k->must))
			es_add(&k->must, EFAULT);
		else
			es_add(&k->may, EFAULT);
	}
	if (p->wrs != k->tm_wrs || p->nr_wr != k->tm_nw)
		es_add(&k->may, EFAULT);	/* a random or shortened list */
	return es_empty(&k->must);
}

static void predict_tm_srq_ops(struct ctx *c, struct fz_call *k)
{
	static const int e[] = { ENOENT, EINVAL, EACCES, ENOMEM, EFAULT,
				 EOVERFLOW, ECONNRESET, E2BIG, 0 };
	int i;

	tm_post_predict_top(c, k, false);
	for (i = 0; e[i]; i++)
		es_add(&k->amb, e[i]);
}

/*
 * nr_done is "always written": the number done, or the failing index.
 * Left as the caller wrote it (an early failure) is a finding of its
 * own, counted apart so that it does not hide the others.
 */
static bool tm_check_nr_done(struct ctx *c, struct fz_call *k, uint32_t done)
{
	uint32_t in;

	if (k->size != sizeof(k->f.tp))
		return false;	/* a struct refused as such is not written back */
	memcpy(&in, k->img + offsetof(struct dpusim_tm_post, nr_done), 4);
	if (k->ret && done == in && in > k->f.tp.nr_wr) {
		TW->nr_done_kept++;
		if (TW->nr_done_kept <= 3)
			violation(c, k, "nr_done not written: still the caller's %u (nr_wr %u, %s)",
				  done, k->f.tp.nr_wr, ename(k->err));
		else
			c->nviol++, st_add(&ST->violations, 1);
		return false;
	}
	if (done > k->f.tp.nr_wr || (!k->ret && done != k->f.tp.nr_wr)) {
		violation(c, k, "nr_done %u of %u (ret %ld)", done, k->f.tp.nr_wr, k->ret);
		return false;
	}
	return true;
}

/* Handles written back by the ADDs done; DEL completions say the rest. */
static void commit_tm_srq_ops(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_tm_post *p = &k->f.tp;
	const struct dpusim_tm_ops_wr *w;
	uint32_t done, i;
	struct tm_wsrq *q = NULL;

	if (k->place != PL_RW)
		return;
	memcpy(&done, k->arg + offsetof(struct dpusim_tm_post, nr_done), 4);
	if (!tm_check_nr_done(c, k, done))
		return;
	if (k->tm_wrs != (uintptr_t)(c->desc + TM_WRS_OFF) || p->wrs != k->tm_wrs)
		return;
	for (i = 0; i < TM_NSRQ; i++)
		if (TW->srq[i].live && TW->srq[i].ctx == k->tctx && TW->srq[i].h == p->handle)
			q = &TW->srq[i];
	if (!q)
		return;
	w = (const struct dpusim_tm_ops_wr *)(c->desc + TM_WRS_OFF);
	for (i = 0; i < done && i < k->tm_nw; i++)
		if (w[i].opcode == DPUSIM_TM_WR_TAG_ADD) {
			if (!w[i].handle)
				violation(c, k, "ADD %u of %u done (nr_done %u, %s), handle 0 written back",
					  i, k->tm_nw, done, ename(k->err));
			if (q->nth < TM_NH)
				q->th[q->nth++] = w[i].handle;
			else
				q->th[rn(&c->rng, TM_NH)] = w[i].handle;
		}
}

static void gen_tm_srq_recv(struct ctx *c, struct fz_call *k)
{
	struct dpusim_tm_recv_wr w[TM_MAXWR] = {};
	struct dpusim_tm_sge s[16];
	struct dpusim_tm_post p = {};
	struct tm_wsrq *q;
	int si, i, j, mi;
	uint32_t nr, ns;
	bool defect = false, bad = false;

	tm_choose_ctx(c, k);
	si = tm_pick_srq(c, k->tctx);
	q = si >= 0 ? &TW->srq[si] : NULL;
	p.handle = tm_handle(c, si, q ? q->h : 0);
	nr = 1 + rn(&c->rng, chance(&c->rng, 80) ? 3 : TM_MAXWR);
	for (i = 0; i < (int)nr; i++) {
		w[i].wr_id = rnd(&c->rng);
		ns = q ? rn(&c->rng, q->sge + 1) : 1;
		if (chance(&c->rng, 2))
			ns = 17;
		for (j = 0; j < (int)ns && j < 16; j++) {
			mi = tm_pick_mr(c, chance(&c->rng, 97) ? k->tctx : !k->tctx,
					chance(&c->rng, 95) ? DPUSIM_TM_ACCESS_LOCAL_WRITE : 0);
			tm_sge(c, mi, 256, &s[j], &defect);
		}
		w[i].num_sge = ns;
		w[i].sg_list = tm_place_sges(c, i, s, ns < 16 ? ns : 16, &bad);
		if (chance(&c->rng, 1))
			w[i].__reserved = 1;
	}
	tm_post_top(c, &p, nr);
	p.wrs = tm_place_wrs(c, k, w, nr * sizeof(w[0]), false);
	k->tm_nw = nr;
	place_struct(c, k, &p);
}

static void predict_tm_srq_recv(struct ctx *c, struct fz_call *k)
{
	static const int e[] = { ENOENT, EINVAL, EACCES, ENOMEM, EFAULT,
				 ECONNRESET, E2BIG, 0 };
	int i;

	tm_post_predict_top(c, k, false);
	for (i = 0; e[i]; i++)
		es_add(&k->amb, e[i]);
}

static void commit_tm_post(struct ctx *c, struct fz_call *k)
{
	uint32_t done;

	if (k->place != PL_RW)
		return;
	memcpy(&done, k->arg + offsetof(struct dpusim_tm_post, nr_done), 4);
	tm_check_nr_done(c, k, done);
}

/* A message of @kind for a QP of context @cx: its bytes at @m, its length. */
static uint32_t tm_msg(struct ctx *c, int cx, uint8_t *m)
{
	unsigned int r = rn(&c->rng, 100);
	uint32_t len, i, plen;
	int mi;

	if (r < 50) {			/* eager */
		plen = rn(&c->rng, chance(&c->rng, 80) ? 64 : 240);
		tm_tmh(m, DPUSIM_TM_TMH_EAGER, rnd(&c->rng), rn(&c->rng, 6));
		len = 16 + plen;
	} else if (r < 75) {		/* rendezvous */
		mi = tm_pick_mr(c, cx, chance(&c->rng, 90) ? DPUSIM_TM_ACCESS_REMOTE_READ : 0);
		tm_tmh(m, DPUSIM_TM_TMH_RNDV, rnd(&c->rng), rn(&c->rng, 6));
		if (mi >= 0 && chance(&c->rng, 85)) {
			uint64_t l = rn(&c->rng, (TW->mr[mi].len < 600 ? TW->mr[mi].len : 600) + 1);

			tm_rvh(m + 16, TW->mr[mi].addr + rn(&c->rng, TW->mr[mi].len - l + 1),
			       TW->mr[mi].key, l);
			if (chance(&c->rng, 8))	/* past the end */
				tm_rvh(m + 16, TW->mr[mi].addr + TW->mr[mi].len - 4, TW->mr[mi].key, 64);
		} else {
			tm_rvh(m + 16, rnd(&c->rng), rn(&c->rng, 3) ? rnd(&c->rng) & 0xfff : 0,
			       rn(&c->rng, 512));
		}
		len = 32 + rn(&c->rng, 33);
		if (chance(&c->rng, 4))
			len = chance(&c->rng, 50) ? 16 + rn(&c->rng, 16) : 65 + rn(&c->rng, 64);
	} else if (r < 85) {
		tm_tmh(m, DPUSIM_TM_TMH_NO_TAG, rnd(&c->rng), rnd(&c->rng));
		len = 16 + rn(&c->rng, 100);
	} else if (r < 92) {
		tm_tmh(m, DPUSIM_TM_TMH_FIN, rnd(&c->rng), rn(&c->rng, 6));
		len = 32;
	} else if (r < 96) {
		tm_tmh(m, DPUSIM_TM_TMH_EAGER, 0, 0);
		len = rn(&c->rng, 16);	/* no room for the TMH */
	} else {
		tm_tmh(m, 4 + rn(&c->rng, 250), 0, 0);
		len = 16 + rn(&c->rng, 30);
	}
	for (i = 32; i < len; i++)
		m[i] = rnd(&c->rng);
	if (len > 16 && r < 50)
		for (i = 16; i < 32 && i < len; i++)
			m[i] = rnd(&c->rng);
	return len;
}

/* The message as sg entries: inline pieces, or copied into an MR. */
static uint32_t tm_msg_sges(struct ctx *c, int cx, int wi, const uint8_t *m,
			    uint32_t len, bool inl, struct dpusim_tm_sge *s)
{
	uint8_t *dst = c->desc + TM_MSG_OFF + (size_t)wi * 320;
	uint32_t n = 1 + rn(&c->rng, 3), i, pos = 0, piece;
	int mi;

	if (!inl) {
		mi = tm_pick_mr(c, cx, 0);
		if (mi < 0 || TW->mr[mi].mram || TW->mr[mi].len < len ||
		    TW->mr[mi].addr < (uintptr_t)TW->buf[cx] ||
		    TW->mr[mi].addr + TW->mr[mi].len > (uintptr_t)TW->buf[cx] + TM_BUF) {
			inl = true;
		} else {
			uint64_t off = rn(&c->rng, TW->mr[mi].len - len + 1);

			memcpy((void *)(uintptr_t)(TW->mr[mi].addr + off), m, len);
			s[0] = (struct dpusim_tm_sge){ TW->mr[mi].addr + off, len,
						       TW->mr[mi].key };
			return 1;
		}
	}
	memcpy(dst, m, len);
	for (i = 0; i < n; i++) {
		piece = i == n - 1 ? len - pos : rn(&c->rng, len - pos + 1);
		s[i] = (struct dpusim_tm_sge){ (uintptr_t)dst + pos, piece, 0 };
		pos += piece;
	}
	return n;
}

static void gen_tm_send(struct ctx *c, struct fz_call *k)
{
	struct dpusim_tm_send_wr w[TM_MAXWR] = {};
	struct dpusim_tm_sge s[16];
	struct dpusim_tm_post p = {};
	uint8_t m[256];
	int qi, si, i, mi, j;
	uint32_t nr, len, ns;
	bool bad = false, defect = false;

	tm_choose_ctx(c, k);
	nr = 1 + rn(&c->rng, chance(&c->rng, 85) ? 2 : 8);
	if (chance(&c->rng, 75)) {			/* QP -> SRQ */
		qi = tm_pick_qp(c, k->tctx, chance(&c->rng, 90));
		p.handle = tm_handle(c, qi, qi >= 0 ? TW->qp[qi].h : 0);
		for (i = 0; i < (int)nr; i++) {
			len = tm_msg(c, k->tctx, m);
			w[i].wr_id = rnd(&c->rng);
			w[i].opcode = chance(&c->rng, 97) ? DPUSIM_TM_WR_SEND :
				      chance(&c->rng, 50) ? DPUSIM_TM_WR_RDMA_READ : rn(&c->rng, 8);
			w[i].flags = (chance(&c->rng, 30) ? DPUSIM_TM_SEND_SIGNALED : 0) |
				     (chance(&c->rng, 70) ? DPUSIM_TM_SEND_INLINE : 0);
			w[i].num_sge = tm_msg_sges(c, k->tctx, i, m, len,
						   w[i].flags & DPUSIM_TM_SEND_INLINE, s);
			if (w[i].num_sge > 1 || s[0].lkey == 0)
				w[i].flags |= DPUSIM_TM_SEND_INLINE;
			w[i].sg_list = tm_place_sges(c, i, s, w[i].num_sge, &bad);
			if (chance(&c->rng, 1))
				w[i].flags |= 1u << rn(&c->rng, 32);
		}
	} else {					/* SRQ -> QP: FIN, reply, RDMA read */
		si = tm_pick_srq(c, k->tctx);
		qi = -1;
		for (j = 0; si >= 0 && j < TM_NQP; j++)
			if (TW->qp[j].live && TW->qp[j].srq == si && (qi < 0 || chance(&c->rng, 50)))
				qi = j;
		p.flags = DPUSIM_TM_POST_FROM_SRQ;
		p.handle = tm_handle(c, si, si >= 0 ? TW->srq[si].h : 0);
		p.remote_qpn = tm_handle(c, qi, qi >= 0 ? TW->qp[qi].num : 0);
		for (i = 0; i < (int)nr; i++) {
			w[i].wr_id = rnd(&c->rng);
			w[i].flags = chance(&c->rng, 40) ? DPUSIM_TM_SEND_SIGNALED : 0;
			if (chance(&c->rng, 55)) {
				w[i].opcode = DPUSIM_TM_WR_RDMA_READ;
				ns = si >= 0 ? rn(&c->rng, TW->srq[si].sge + 1) : 1;
				for (j = 0; j < (int)ns; j++) {
					mi = tm_pick_mr(c, k->tctx, chance(&c->rng, 95) ?
							DPUSIM_TM_ACCESS_LOCAL_WRITE : 0);
					tm_sge(c, mi, 200, &s[j], &defect);
				}
				w[i].num_sge = ns;
				w[i].sg_list = tm_place_sges(c, i, s, ns, &bad);
				mi = qi >= 0 ? tm_pick_mr(c, TW->qp[qi].ctx,
							  chance(&c->rng, 85) ? DPUSIM_TM_ACCESS_REMOTE_READ : 0) : -1;
				if (mi >= 0 && chance(&c->rng, 90)) {
					w[i].remote_addr = TW->mr[mi].addr + rn(&c->rng, TW->mr[mi].len);
					w[i].rkey = TW->mr[mi].key;
				} else {
					w[i].remote_addr = rnd(&c->rng);
					w[i].rkey = rn(&c->rng, 64);
				}
			} else {
				w[i].opcode = DPUSIM_TM_WR_SEND;
				w[i].flags |= DPUSIM_TM_SEND_INLINE;
				len = tm_msg(c, k->tctx, m);
				if (chance(&c->rng, 60) && len > 64)
					len = 16 + rn(&c->rng, 49);
				w[i].num_sge = tm_msg_sges(c, k->tctx, i, m, len, true, s);
				w[i].sg_list = tm_place_sges(c, i, s, w[i].num_sge, &bad);
			}
			if (chance(&c->rng, 1))
				w[i].__reserved2 = 1;
		}
	}
	tm_post_top(c, &p, nr);
	if (chance(&c->rng, 2))
		p.remote_qpn = 1 + rn(&c->rng, 100);
	p.wrs = tm_place_wrs(c, k, w, nr * sizeof(w[0]), false);
	k->tm_nw = nr;
	place_struct(c, k, &p);
}

static void predict_tm_send(struct ctx *c, struct fz_call *k)
{
	static const int e[] = { ENOENT, EINVAL, EACCES, ENOMEM, EFAULT, E2BIG,
				 EOVERFLOW, ECONNRESET, ENOTCONN, EAGAIN,
				 EREMOTEIO, 0 };
	int i;

	tm_post_predict_top(c, k, true);
	for (i = 0; e[i]; i++)
		es_add(&k->amb, e[i]);
}

/* -- mmap of the context fd, poll */

static void gen_tm_mmap(struct ctx *c, struct fz_call *k)
{
	int q = -1, i, n = 0;

	tm_choose_ctx(c, k);
	for (i = 0; i < TM_NCQ; i++)
		if (TW->cq[i].ring && TW->cq[i].ctx == k->tctx && !rn(&c->rng, ++n))
			q = i;
	k->tm_mlen = q >= 0 ? TW->cq[q].size : PAGE;
	k->tm_moff = q >= 0 ? TW->cq[q].off : PAGE;
	k->tm_mflags = MAP_SHARED;
	k->tm_mprot = PROT_READ | PROT_WRITE;
	k->tm_q = q;
	switch (rn(&c->rng, 12)) {
	case 0: k->tm_mlen += PAGE; break;
	case 1: k->tm_mlen = k->tm_mlen > PAGE ? k->tm_mlen - PAGE : 2 * PAGE; break;
	case 2: k->tm_moff += PAGE * (1 + rn(&c->rng, 300)); break;
	case 3: k->tm_moff = rnd(&c->rng) & ~(PAGE - 1) & ((1ULL << 46) - 1); break;
	case 4: k->tm_mflags = MAP_PRIVATE; break;
	case 5: k->tm_mprot = PROT_READ; break;
	case 6: k->tm_moff = 0; break;
	default: break;
	}
	k->cmd = 0;
	k->place = PL_RW;
}

static void predict_tm_mmap(struct ctx *c, struct fz_call *k)
{
	const struct tm_wcq *q = NULL;
	bool ok;
	int i;

	/* the live CQ at that offset, if any (every live CQ is tracked) */
	k->tm_q = -1;
	for (i = 0; i < TM_NCQ; i++)
		if (TW->cq[i].live && TW->cq[i].ctx == k->tctx &&
		    TW->cq[i].off == k->tm_moff)
			k->tm_q = i;
	q = k->tm_q >= 0 ? &TW->cq[k->tm_q] : NULL;
	ok = q && k->tm_mflags == MAP_SHARED && k->tm_mlen == q->size;

	if (!ok)
		es_add(&k->must, EINVAL);
	es_add(&k->amb, ENOMEM);
}

static void exec_tm_mmap(struct ctx *c, struct fz_call *k)
{
	void *p = mmap(NULL, k->tm_mlen, k->tm_mprot, k->tm_mflags,
		       TW->fd[k->tctx], k->tm_moff);

	k->ret = p == MAP_FAILED ? -1 : 0;
	k->err = p == MAP_FAILED ? errno : 0;
	if (p == MAP_FAILED)
		return;
	/* a second view of the same ring */
	if (k->tm_q >= 0 && memcmp(p, TW->cq[k->tm_q].ring, 128))
		violation(c, k, "second mapping of CQ %u differs", TW->cq[k->tm_q].h);
	munmap(p, k->tm_mlen);
}

static void gen_tm_poll(struct ctx *c, struct fz_call *k)
{
	tm_choose_ctx(c, k);
	k->cmd = 0;
	k->place = PL_RW;
}

static void predict_tm_poll(struct ctx *c, struct fz_call *k)
{
}

static void exec_tm_poll(struct ctx *c, struct fz_call *k)
{
	struct pollfd pf = { .fd = TW->fd[k->tctx], .events = POLLIN };
	bool want = TW->pending[k->tctx];
	int i, r;

	for (i = 0; i < TM_NCQ; i++) {
		struct dpusim_tm_cq_ring *g = (void *)TW->cq[i].ring;

		if (TW->cq[i].live && TW->cq[i].ctx == k->tctx &&
		    __atomic_load_n(&g->producer, __ATOMIC_ACQUIRE) != g->consumer)
			want = true;
	}
	r = poll(&pf, 1, 0);
	k->ret = r < 0 ? -1 : 0;
	k->err = r < 0 ? errno : 0;
	if (r >= 0 && (!!(pf.revents & POLLIN) != want || (pf.revents & POLLNVAL) ||
		       (!TW->pending[k->tctx] && (pf.revents & POLLERR))))
		violation(c, k, "poll: revents %#x, want POLLIN %d (overrun pending %d)",
			  pf.revents, want, TW->pending[k->tctx]);
}

/* unknown commands on the TM fd: the rank's, and numbers past the table */
static void gen_tm_unknown(struct ctx *c, struct fz_call *k)
{
	static const unsigned long rank_cmds[] = {
		DPUSIM_IOCTL_RANK_INFO, DPUSIM_IOCTL_XFER, DPUSIM_IOCTL_SYNC,
	};

	tm_choose_ctx(c, k);
	switch (rn(&c->rng, 4)) {
	case 0: k->cmd = rank_cmds[rn(&c->rng, 3)]; break;
	case 1: k->cmd = _IO(DPUSIM_TYPE, DPUSIM_CMD_TM_POST_SEND + 1 + rn(&c->rng, 40)); break;
	case 2: k->cmd = _IOWR(DPUSIM_TYPE, DPUSIM_CMD_TM_QUERY + rn(&c->rng, 13), 16); break;
	default: k->cmd = _IO(DPUSIM_TYPE, DPUSIM_TM_CMD_BASE - 1 - rn(&c->rng, 0x20)); break;
	}
	k->arg = c->desc;
	k->place = PL_RW;
}

static void predict_tm_unknown(struct ctx *c, struct fz_call *k)
{
	es_add(&k->must, ENOTTY);
}

/* ---- after every TM call: the rings */

static bool tm_known_wc(const struct dpusim_tm_cqe *e)
{
	switch (e->opcode) {
	case DPUSIM_TM_WC_SEND: case DPUSIM_TM_WC_RDMA_READ: case DPUSIM_TM_WC_RECV:
	case DPUSIM_TM_WC_TM_ADD: case DPUSIM_TM_WC_TM_DEL: case DPUSIM_TM_WC_TM_SYNC:
	case DPUSIM_TM_WC_TM_RECV: case DPUSIM_TM_WC_TM_NO_TAG:
		break;
	default:
		return false;
	}
	switch (e->status) {
	case DPUSIM_TM_WC_SUCCESS: case DPUSIM_TM_WC_LOC_LEN_ERR:
	case DPUSIM_TM_WC_WR_FLUSH_ERR: case DPUSIM_TM_WC_REM_ACCESS_ERR:
	case DPUSIM_TM_WC_GENERAL_ERR: case DPUSIM_TM_WC_TM_ERR:
	case DPUSIM_TM_WC_TM_RNDV_INCOMPLETE:
		break;
	default:
		return false;
	}
	return !(e->wc_flags & ~(DPUSIM_TM_WC_F_TM_SYNC_REQ | DPUSIM_TM_WC_F_TM_MATCH |
				 DPUSIM_TM_WC_F_TM_DATA_VALID | DPUSIM_TM_WC_F_INLINE)) &&
	       !(e->wc_flags & DPUSIM_TM_WC_F_INLINE && e->byte_len > 64);
}

static void tm_scan(struct ctx *c, struct fz_call *k)
{
	uint32_t ovr[TM_NCTX] = {}, prod, cons, i, n;
	int q, j, cx;

	for (q = 0; q < TM_NCQ; q++) {
		struct tm_wcq *w = &TW->cq[q];
		struct dpusim_tm_cq_ring *g = (void *)w->ring;
		struct tm_cq view = { .nr = w->nr, .ring = g };

		if (!g)
			continue;
		prod = __atomic_load_n(&g->producer, __ATOMIC_ACQUIRE);
		n = prod - w->prod;
		if (n > w->nr)
			violation(c, k, "CQ %u: producer %u -> %u (ring of %u)",
				  w->h, w->prod, prod, w->nr);
		for (i = 0; i < n && i < w->nr; i++) {
			const struct dpusim_tm_cqe *e = tm_cqe_at(&view, w->prod + i);

			TW->cqes++;
			if (!tm_known_wc(e) && TW->bad_cqe++ < 5)
				violation(c, k, "CQ %u: completion opcode %u status %u flags %#x len %u",
					  w->h, e->opcode, e->status, e->wc_flags, e->byte_len);
			for (j = 0; j < TM_NSRQ; j++)
				if (TW->srq[j].live && TW->srq[j].cq == q &&
				    e->qp_num == TW->srq[j].num && e->opcode == DPUSIM_TM_WC_RECV &&
				    !(e->wc_flags & DPUSIM_TM_WC_F_TM_MATCH) &&
				    e->status != DPUSIM_TM_WC_WR_FLUSH_ERR)
					TW->srq[j].unexp++;
		}
		w->prod = prod;
		if (g->overruns != w->ovr && w->live)
			ovr[w->ctx] += g->overruns - w->ovr;
		w->ovr = g->overruns;
		/* the consumer: mostly caught up, sometimes left, sometimes scribbled */
		cons = rn(&c->rng, 100);
		if (cons < 80 || !w->live)
			g->consumer = prod;
		else if (cons < 83)
			g->consumer = prod + 1 + rn(&c->rng, 5);	/* ahead: full */
		else if (cons < 85)
			g->consumer = prod - w->nr - rn(&c->rng, 3);	/* far behind */
		if (chance(&c->rng, 1))
			g->__pad0[rn(&c->rng, 15)] = rnd(&c->rng);	/* ignored */
	}
	for (cx = 0; cx < TM_NCTX; cx++) {
		if (!ovr[cx])
			continue;
		TW->overruns += ovr[cx];
		/*
		 * The caller's own overrun is reported by its call: as
		 * EOVERFLOW, or a post's EFAULT when its struct could not be
		 * written back after that.
		 */
		if (!(k && k->tctx == cx && k->op->cmd &&
		      (k->err == EOVERFLOW ||
		       (k->err == EFAULT && k->op->min_size ==
			offsetofend(struct dpusim_tm_post, wrs))))) {
			TW->pending[cx] = true;
			snprintf(tm_why[cx], sizeof(tm_why[0]), "call %llu %s ctx %d -> %s",
				 (unsigned long long)c->calls, k ? k->op->name : "populate",
				 k ? k->tctx : -1, k ? ename(k->err) : "-");
		}
	}
	if (k && k->op->cmd && (k->err == EOVERFLOW || k->tm_ovf))
		TW->pending[k->tctx] = false;
}

/* --------------------------------------------------------- DPU programs */

/*
 * The fuzzed rank has worker files only inside a "program" session (one
 * call of the table): LAUNCH fails with ESRCH unless one overlaps, and a
 * transfer may find a DPU RUNNING (EBUSY) only then.
 */
/* 2 * session starts and ends so far, + 1 if a session runs now */
static uint64_t session_mark(void)
{
	uint64_t gen = __atomic_load_n(&ST->wgen, __ATOMIC_SEQ_CST);

	return 2 * gen + !!__atomic_load_n(&ST->wopen, __ATOMIC_SEQ_CST);
}

/* Did a session run at some point since @mark? */
static bool session_since(uint64_t mark)
{
	return (mark & 1) || session_mark() != mark;
}

/* Did a session run at some point since @k's mark? */
static bool session_overlapped(const struct fz_call *k)
{
	return session_since(k->wgen);
}

static void gen_launch(struct ctx *c, struct fz_call *k)
{
	uint32_t n = c->m->nr_dpus, nr = 1 + rn(&c->rng, n);
	struct dpusim_launch l = {
		.size = sizeof(l), .nr_dpus = nr,
		.first_dpu = rn(&c->rng, n - nr + 1),
	};

	switch (rn(&c->rng, 12)) {
	case 0: l.flags = 1u << rn(&c->rng, 32); break;
	case 1: l.nr_dpus = 0; break;
	case 2: l.first_dpu = n + rn(&c->rng, 1000); break;
	case 3: l.nr_dpus = n - l.first_dpu + 1 + rn(&c->rng, 0xffffff00u); break;
	case 4: l.first_dpu = rnd(&c->rng); l.nr_dpus = rnd(&c->rng); break;
	default: break;
	}
	place_struct(c, k, &l);
}

static void predict_launch(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_launch *l = &k->f.l;
	uint32_t n = c->m->nr_dpus;

	if (l->flags || !l->nr_dpus || l->first_dpu >= n ||
	    l->nr_dpus > n - l->first_dpu)
		es_add(&k->must, EINVAL);
	/* well-formed: no worker file (ESRCH), unless a session overlaps */
	es_add(&k->amb, ESRCH);
	es_add(&k->amb, EBUSY);
	es_add(&k->amb, ETIMEDOUT);
}

static void commit_launch(struct ctx *c, struct fz_call *k)
{
	if (!k->ret && !session_overlapped(k))
		violation(c, k, "LAUNCH succeeded without a worker file");
	if (k->ret == -1 && k->err == ESRCH && es_empty(&k->must) &&
	    session_overlapped(k))
		return;
	commit_none(c, k);
}

static void gen_status(struct ctx *c, struct fz_call *k)
{
	uint32_t n = c->m->nr_dpus, nr = rn(&c->rng, n + 1);
	uint8_t junk[64 * 64];
	struct dpusim_dpu_status st = {
		.size = sizeof(st), .nr_dpus = nr,
		.first_dpu = nr ? rn(&c->rng, n - nr + 1) : rn(&c->rng, n),
	};

	memset(junk, 0xa5, sizeof(junk));
	if (nr > 64)
		st.nr_dpus = nr = 64;
	st.states = place_list(c, junk, nr * sizeof(struct dpusim_dpu_state),
			       DESC_DPUS, RO_DPUS - RO_CONST, 1024);
	switch (rn(&c->rng, 12)) {
	case 0: st.flags = 1u << rn(&c->rng, 32); break;
	case 1: st.first_dpu = n + rn(&c->rng, 1000); break;
	case 2: st.nr_dpus = n + 1 + rn(&c->rng, 1000); break;
	case 3: st.nr_running = rnd(&c->rng); st.nr_fault = rnd(&c->rng); break;
	default: break;
	}
	place_struct(c, k, &st);
}

static void predict_status(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_dpu_status *st = &k->f.st;
	uint32_t n = c->m->nr_dpus;
	size_t rn_ = k->size < sizeof(*st) ? k->size : sizeof(*st);

	if (st->flags || st->first_dpu >= n || st->nr_dpus > n - st->first_dpu) {
		es_add(&k->must, EINVAL);
		return;
	}
	if (st->nr_dpus &&
	    range_check(&c->rs, st->states,
			(uint64_t)st->nr_dpus * sizeof(struct dpusim_dpu_state),
			true) != RC_OK)
		es_add(&k->must, EFAULT);
	if (range_check(&c->rs, (uintptr_t)k->arg, rn_, true) != RC_OK)
		es_add(&k->must, EFAULT);
}

static void commit_status(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_dpu_state *s;
	struct dpusim_dpu_status out;
	uint32_t i, run = 0, fault = 0;

	if (k->ret || (k->place != PL_RW && k->place != PL_RO)) {
		commit_none(c, k);
		return;
	}
	memcpy(&out, k->arg, sizeof(out));
	s = (const void *)(uintptr_t)k->f.st.states;
	for (i = 0; i < k->f.st.nr_dpus; i++) {
		if (s[i].state > DPUSIM_DPU_FAULT ||
		    !memchr(s[i].reason, 0, sizeof(s[i].reason)) ||
		    (s[i].state != DPUSIM_DPU_FAULT && s[i].reason[0])) {
			violation(c, k, "DPU_STATUS: DPU %u state %u", i, s[i].state);
			return;
		}
		run += s[i].state == DPUSIM_DPU_RUNNING;
		fault += s[i].state == DPUSIM_DPU_FAULT;
	}
	if (out.nr_running != run || out.nr_fault != fault)
		violation(c, k, "DPU_STATUS: counts %u %u, states say %u %u",
			  out.nr_running, out.nr_fault, run, fault);
	if (run && !session_overlapped(k))
		violation(c, k, "DPU_STATUS: %u DPUs RUNNING without a session", run);
}

static void gen_worker_open(struct ctx *c, struct fz_call *k)
{
	struct dpusim_worker_open wo = { .size = sizeof(wo) };

	switch (rn(&c->rng, 10)) {
	case 0: wo.flags = 1u << rn(&c->rng, 32); break;
	case 1: wo.__reserved = 1 + rn(&c->rng, 1000); break;
	case 2: wo.fd = rnd(&c->rng); break;	/* out field: ignored */
	default: break;
	}
	place_struct(c, k, &wo);
}

static void predict_worker_open(struct ctx *c, struct fz_call *k)
{
	size_t n = k->size < sizeof(k->f.wo) ? k->size : sizeof(k->f.wo);

	if (k->f.wo.flags || k->f.wo.__reserved)
		es_add(&k->must, EINVAL);
	else if (range_check(&c->rs, (uintptr_t)k->arg, n, true) != RC_OK)
		es_add(&k->must, EFAULT);
	es_add(&k->amb, E2BIG);	/* other sessions' worker files */
}

/*
 * The worker file exists from the call to its close: a session for the
 * other threads (their LAUNCH may succeed meanwhile).
 */
static void exec_worker_open(struct ctx *c, struct fz_call *k)
{
	struct dpusim_worker_open out;

	__atomic_add_fetch(&ST->wgen, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&ST->wopen, 1, __ATOMIC_SEQ_CST);
	k->ret = ioctl(c->fd, k->cmd, k->arg);
	k->err = k->ret ? errno : 0;
	if (!k->ret) {
		memcpy(&out, k->arg, sizeof(out));
		if (out.fd < 0 || fcntl(out.fd, F_GETFD) != FD_CLOEXEC)
			violation(c, k, "WORKER_OPEN gave fd %d", out.fd);
		else
			close(out.fd);
	}
	__atomic_fetch_sub(&ST->wopen, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&ST->wgen, 1, __ATOMIC_SEQ_CST);
}

/*
 * A whole DPU program, with the fuzzed rank's fd: a worker file, a
 * launch of a few DPUs, a child process that claims them one by one
 * (NONBLOCK), maps the held DPU's memories and reads them, is refused a
 * mapping of another DPU, sends defective claims and finishes, and
 * finishes each DPU DONE or FAULT; then DPU_STATUS.  Most children also
 * map the worker file's window (DPUSIM_MMAP_WINDOW): it must show the
 * held DPU's bytes (those of a plain mapping of it), refuse a second
 * window (EBUSY), a split or a move (EINVAL), and be empty (SIGBUS)
 * before the first claim and after each FINISH.  The strict checks only
 * when no other session overlapped (threads, forks).
 */
static void gen_program(struct ctx *c, struct fz_call *k)
{
	(void)c;
	k->cmd = DPUSIM_IOCTL_LAUNCH;
}

static void predict_program(struct ctx *c, struct fz_call *k)
{
	es_add(&k->amb, EBUSY);		/* another session's DPUs */
	es_add(&k->amb, E2BIG);		/* other sessions' worker files */
	es_add(&k->amb, ETIMEDOUT);
}

/* Streams moved by the session's DPU programs (their section, below) */
struct prog_streams;
static struct prog_streams *ps_prepare(struct ctx *c);
static void ps_merge(struct ctx *c, struct prog_streams *ps, bool exited);
static int ps_verify(struct ctx *c, struct fz_call *k, struct prog_streams *ps);
static void ps_free(struct prog_streams *ps);
static int pw_streams(int w, struct rng *r, struct prog_streams *ps,
		      int32_t dpu, uint32_t nr);

/*
 * The child's SIGBUS handler (it is single-threaded): back to the access
 * of pw_copy() that got the signal.
 */
static sigjmp_buf pw_jmp;

static void pw_on_sigbus(int sig)
{
	siglongjmp(pw_jmp, sig);
}

/*
 * What the child did to its current window that was refused and so must
 * have changed nothing: named when a later check of the window fails.
 */
static unsigned int pw_refused;
enum { PW_MUNMAP = 1, PW_MPROTECT = 2, PW_MREMAP = 4 };

/* Copy @len bytes from @src: 0, or the signal an access got. */
static int pw_copy(void *dst, const volatile uint8_t *src, size_t len)
{
	int sig = sigsetjmp(pw_jmp, 1);

	if (!sig)
		memcpy(dst, (const void *)src, len);
	return sig;
}

/*
 * Map the worker's window: mostly whole, else only a part of the WRAM
 * side, or the WRAM side and the start of the MRAM.  Now and then a
 * defective mmap first (MAP_PRIVATE, or longer than DPUSIM_WINDOW_SIZE):
 * EINVAL.  NULL on failure (*@step says which).
 */
static volatile uint8_t *pw_window_map(int w, struct rng *r, uint64_t *len,
				       int *step)
{
	bool priv = chance(r, 50);
	void *p;

	*step = 24;
	if (chance(r, 10)) {
		p = mmap(NULL, priv ? PAGE : DPUSIM_WINDOW_SIZE + PAGE * (1 + rn(r, 4)),
			 PROT_READ, priv ? MAP_PRIVATE : MAP_SHARED, w,
			 DPUSIM_MMAP_WINDOW);
		if (p != MAP_FAILED || errno != EINVAL)
			return NULL;
	}
	switch (rn(r, 4)) {
	case 0: *len = PAGE * (1 + rn(r, 32)); break;
	case 1: *len = DPUSIM_WINDOW_MRAM + PAGE * (1 + rn(r, 64)); break;
	default: *len = DPUSIM_WINDOW_SIZE; break;
	}
	*step = 17;
	p = mmap(NULL, *len, chance(r, 50) ? PROT_READ : PROT_READ | PROT_WRITE,
		 MAP_SHARED, w, DPUSIM_MMAP_WINDOW);
	if (p == MAP_FAILED)
		return NULL;
	st_add(&ST->win_maps, 1);
	pw_refused = 0;
	return p;
}

/* A touch of the WRAM and of the MRAM side of the window gets SIGBUS. */
static bool pw_window_empty(struct rng *r, volatile uint8_t *win, uint64_t len)
{
	uint8_t b;

	if (pw_copy(&b, win + rn(r, len < PAGE ? len : PAGE), 1) != SIGBUS)
		return false;
	if (len > DPUSIM_WINDOW_MRAM &&
	    pw_copy(&b, win + DPUSIM_WINDOW_MRAM +
		    rn(r, len - DPUSIM_WINDOW_MRAM < 64 * PAGE ?
			  len - DPUSIM_WINDOW_MRAM : 64 * PAGE), 1) != SIGBUS)
		return false;
	st_add(&ST->win_sigbus, 1);
	return true;
}

/*
 * Up to four pages of the held DPU's WRAM (@wram) or MRAM, read through
 * the window and through a plain mapping (in either order: the first
 * read of a hole allocates the page the other one then shows), must be
 * the same bytes.  MRAM pages are taken at its start or at its end (the
 * areas the model writes) or anywhere (holes).  0 or the failed step.
 */
static int pw_window_compare(int w, struct rng *r, volatile uint8_t *win,
			     uint64_t len, const struct dpusim_worker_claim *cl,
			     bool wram)
{
	static uint8_t via_win[4 * PAGE], via_map[4 * PAGE];
	uint64_t size = wram ? cl->wram_size : cl->mram_size;
	uint64_t pages = (size + PAGE - 1) / PAGE, first, np, at;
	uint64_t side = wram ? 0 : DPUSIM_WINDOW_MRAM;
	volatile uint8_t *m;
	int sig;

	if (len <= side)
		return 0;
	/* the pages of the memory inside the window */
	if ((len - side) / PAGE < pages)
		pages = (len - side) / PAGE;
	np = pages < 4 ? pages : 4;
	if (!np)
		return 0;
	switch (wram ? 0 : rn(r, 3)) {
	case 1: first = pages - np; break;
	case 2: first = rn(r, pages - np + 1); break;
	default: first = rn(r, (pages - np < 4 ? pages - np : 4) + 1); break;
	}
	m = mmap(NULL, np * PAGE, PROT_READ, MAP_SHARED, w,
		 (wram ? DPUSIM_MMAP_WRAM(cl->dpu) : DPUSIM_MMAP_MRAM(cl->dpu)) +
		 first * PAGE);
	if (m == MAP_FAILED)
		return 19;
	at = side + first * PAGE;
	sig = -1;
	if (chance(r, 50))	/* the window first */
		sig = pw_copy(via_win, win + at, np * PAGE);
	if (pw_copy(via_map, m, np * PAGE)) {
		/* a hole over the module's budget: no verdict */
		munmap((void *)m, np * PAGE);
		return 0;
	}
	if (sig == -1)
		sig = pw_copy(via_win, win + at, np * PAGE);
	munmap((void *)m, np * PAGE);
	if (sig)
		return 20;	/* the held DPU's memory: never SIGBUS */
	if (memcmp(via_win, via_map, np * PAGE))
		return 21;
	return 0;
}

/* The window while a DPU is held: its bytes, its limits; 0 or the step. */
static int pw_window_held(int w, struct rng *r, volatile uint8_t *win,
			  uint64_t len, const struct dpusim_worker_claim *cl)
{
	uint64_t wram_end = (cl->wram_size + PAGE - 1) & ~(PAGE - 1);
	void *p, *to;
	uint8_t b;
	int ret;

	ret = pw_window_compare(w, r, win, len, cl, true);
	if (!ret)
		ret = pw_window_compare(w, r, win, len, cl, false);
	if (ret)
		return ret;
	st_add(&ST->win_checks, 1);
	/* between the WRAM and the MRAM side: SIGBUS */
	if (chance(r, 20) && wram_end < DPUSIM_WINDOW_MRAM && wram_end < len &&
	    pw_copy(&b, win + wram_end, 1) != SIGBUS)
		return 22;
	/* one window per worker file */
	if (chance(r, 50)) {
		p = mmap(NULL, chance(r, 50) ? PAGE : DPUSIM_WINDOW_SIZE, PROT_READ,
			 MAP_SHARED, w, DPUSIM_MMAP_WINDOW);
		if (p != MAP_FAILED || errno != EBUSY)
			return 23;
	}
	/* neither split nor moved (the window works on, checked after FINISH) */
	if (chance(r, 10) && len >= 2 * PAGE) {
		pw_refused |= PW_MUNMAP;
		if (munmap((void *)(win + len - PAGE), PAGE) != -1 || errno != EINVAL)
			return 25;
	}
	if (chance(r, 10) && len >= 2 * PAGE) {
		pw_refused |= PW_MPROTECT;
		if (mprotect((void *)win, PAGE, PROT_NONE) != -1 || errno != EINVAL)
			return 26;
	}
	if (chance(r, 5)) {
		to = mmap(NULL, len, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (to == MAP_FAILED)
			return 27;
		pw_refused |= PW_MREMAP;
		p = mremap((void *)win, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
		if (p != MAP_FAILED || errno != EINVAL)
			return 27;
		munmap(to, len);
	}
	return 0;
}

/*
 * The child: claim until nothing is left; exit 0 or the failed step.
 * Three in four children also use the window: mapped before the first
 * claim (filled by CLAIM), after it (pages mapped at their first touch),
 * or now one, now the other, unmapped again after some FINISH.
 */
static int program_worker_run(int w, uint64_t seed, uint32_t nr_dpus,
			      struct prog_streams *ps)
{
	struct rng r = { seed | 1 };
	struct sigaction sa = { .sa_handler = pw_on_sigbus };
	struct dpusim_worker_claim cl;
	struct dpusim_worker_finish fin;
	unsigned int win_mode = rn(&r, 4);
	bool map_before = win_mode == 1 || (win_mode == 3 && chance(&r, 50));
	volatile uint8_t *m, *win = NULL;
	uint64_t win_len = 0;
	int i, ret, step;
	uint8_t b;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		return 17;
	for (i = 0; i < 300; i++) {
		if (win_mode && !win && map_before) {
			win = pw_window_map(w, &r, &win_len, &step);
			if (!win)
				return step;
			if (!pw_window_empty(&r, win, win_len))
				return 18;	/* nothing held yet */
		}
		/* the stream calls of a worker that holds no DPU */
		ret = pw_streams(w, &r, ps, -1, nr_dpus);
		if (ret)
			return ret;
		cl = (struct dpusim_worker_claim){ .size = sizeof(cl),
						   .flags = DPUSIM_CLAIM_NONBLOCK };
		if (ioctl(w, DPUSIM_IOCTL_WORKER_CLAIM, &cl))	/* ESHUTDOWN: exit */
			return errno == EAGAIN || errno == ESHUTDOWN ? 0 : 10;
		if (chance(&r, 30) && (ioctl(w, DPUSIM_IOCTL_WORKER_CLAIM, &cl) != -1 ||
				       errno != EINVAL))
			return 11;
		if (win_mode && !win) {
			win = pw_window_map(w, &r, &win_len, &step);
			if (!win)
				return step;
		}
		m = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, w,
			 DPUSIM_MMAP_MRAM((cl.dpu + 1) % nr_dpus));
		if (nr_dpus > 1 && (m != MAP_FAILED || errno != EACCES))
			return 12;
		m = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, w,
			 (chance(&r, 50) ? DPUSIM_MMAP_WRAM(cl.dpu) :
			  DPUSIM_MMAP_MRAM(cl.dpu)) +
			 PAGE * rn(&r, 4));
		if (m == MAP_FAILED)
			return 13;
		pw_copy(&b, m + rn(&r, PAGE), 1);	/* SIGBUS: over the budget */
		munmap((void *)m, PAGE);
		if (win) {
			ret = pw_window_held(w, &r, win, win_len, &cl);
			if (ret)
				return ret;
		}
		/* the program moves its streams (FINISH waits for a move in flight) */
		ret = pw_streams(w, &r, ps, cl.dpu, nr_dpus);
		if (ret)
			return ret;
		fin = (struct dpusim_worker_finish){ .size = sizeof(fin), .dpu = cl.dpu };
		if (chance(&r, 30)) {
			fin.flags = chance(&r, 50) ? 2u << rn(&r, 31) : 0;
			fin.dpu = fin.flags ? cl.dpu : cl.dpu + 1;
			if (ioctl(w, DPUSIM_IOCTL_WORKER_FINISH, &fin) != -1 ||
			    errno != EINVAL)
				return 14;
			fin = (struct dpusim_worker_finish){ .size = sizeof(fin),
							     .dpu = cl.dpu };
		}
		if (cl.dpu % 3 == 1) {
			fin.flags = DPUSIM_FINISH_FAULT;
			snprintf(fin.reason, sizeof(fin.reason), "fuzz %u", cl.dpu);
		}
		if (chance(&r, 5))
			return 0;	/* exit holding it: "worker exited" */
		if (ioctl(w, DPUSIM_IOCTL_WORKER_FINISH, &fin))
			return 15;
		if (!win)
			continue;
		/* FINISH emptied the window */
		if (!pw_window_empty(&r, win, win_len))
			return 28;
		if (win_mode == 3 && chance(&r, 30)) {
			if (munmap((void *)win, win_len))
				return 29;
			win = NULL;
			map_before = chance(&r, 50);
		}
	}
	return 16;
}

static int program_worker(int w, uint64_t seed, uint32_t nr_dpus,
			  struct prog_streams *ps)
{
	static const char *const what[] = {
		[17] = "window mmap failed",
		[18] = "window not empty before the first claim",
		[19] = "plain mmap of the held DPU failed",
		[20] = "window SIGBUS on the held DPU",
		[21] = "window bytes differ from a plain mapping of the held DPU",
		[22] = "window between WRAM and MRAM not SIGBUS",
		[23] = "second window not EBUSY",
		[24] = "defective window mmap not EINVAL",
		[25] = "partial munmap of the window not EINVAL",
		[26] = "partial mprotect of the window not EINVAL",
		[27] = "mremap of the window not EINVAL",
		[28] = "window not empty after FINISH",
		[29] = "munmap of the whole window failed",
	};
	int code = program_worker_run(w, seed, nr_dpus, ps);

	if (code >= 17 && code <= 29)
		/* not through stdio: its buffer is a copy of the parent's */
		dprintf(STDOUT_FILENO,
			"# program worker: step %d: %s (refused before on this window:%s%s%s%s)\n",
			code, what[code],
			pw_refused & PW_MUNMAP ? " munmap of a part" : "",
			pw_refused & PW_MPROTECT ? " mprotect of a part" : "",
			pw_refused & PW_MREMAP ? " mremap" : "",
			pw_refused ? "" : " nothing");
	return code;
}

static void exec_program(struct ctx *c, struct fz_call *k)
{
	struct dpusim_worker_open wo = { .size = sizeof(wo) };
	uint32_t n = c->m->nr_dpus, nr = 1 + rn(&c->rng, n < 6 ? n : 6);
	struct dpusim_launch l = {
		.size = sizeof(l), .nr_dpus = nr, .first_dpu = rn(&c->rng, n - nr + 1),
	};
	struct dpusim_dpu_state st[6];
	struct dpusim_dpu_status sq = {
		.size = sizeof(sq), .first_dpu = l.first_dpu, .nr_dpus = nr,
		.states = (uintptr_t)st,
	};
	uint64_t mark, seed = rnd(&c->rng);
	struct prog_streams *ps = NULL;
	bool solo, exited = false;
	pid_t pid = -1;
	int w, r, code = -1, status = -1;
	uint32_t i;

	mark = __atomic_add_fetch(&ST->wgen, 1, __ATOMIC_SEQ_CST);
	solo = !__atomic_fetch_add(&ST->wopen, 1, __ATOMIC_SEQ_CST);
	k->ret = ioctl(c->fd, DPUSIM_IOCTL_WORKER_OPEN, &wo);
	k->err = k->ret ? errno : 0;
	if (k->ret)
		goto out;
	w = wo.fd;
	/*
	 * Close race: w may be the rank's old number (WORKER_OPEN ran while
	 * it was closed); LAUNCH then reaches the worker file, ENOTTY, which
	 * the caller takes as it takes EBADF.
	 */
	k->ret = ioctl(c->fd, DPUSIM_IOCTL_LAUNCH, &l);
	k->err = k->ret ? errno : 0;
	if (!k->ret) {
		ps = ps_prepare(c);
		pid = fork();
		if (pid == 0) {
			close(c->fd);	/* a worker keeps no rank file */
			_exit(program_worker(w, seed, n, ps));
		}
		/* the session ends with the child (signals: EINTR, again) */
		while (pid > 0 && waitpid(pid, &status, 0) != pid)
			if (errno != EINTR)
				break;
		if (pid > 0 && WIFEXITED(status)) {
			code = WEXITSTATUS(status);
			exited = true;
		}
	}
	close(w);
	solo = solo && __atomic_load_n(&ST->wgen, __ATOMIC_SEQ_CST) == mark;
	/* the streams: the child's model is exact whoever else ran */
	if (ps) {
		ps_merge(c, ps, exited);
		if (code >= 30 && code <= 39)
			violation(c, k, "program: worker failed at step %d (worker stream calls)",
				  code);
		else if (exited && !code && !c->may_ebadf)
			ps_verify(c, k, ps);
		ps_free(ps);
	}
	/*
	 * The rank file closed under us (close race): the kernel kills the
	 * worker (SIGKILL) and claims fail with ESHUTDOWN; nothing to check.
	 */
	if (k->ret || !solo || c->may_ebadf)
		goto out;
	if (code)
		violation(c, k, "program: worker failed at step %d", code);
	/* STATUS waits for a transfer of another thread: signals cut it. */
	while ((r = ioctl(c->fd, DPUSIM_IOCTL_DPU_STATUS, &sq)) && errno == EINTR)
		;
	if (r) {
		if (errno != EBADF || !c->may_ebadf)
			violation(c, k, "program: DPU_STATUS: %s", strerror(errno));
		goto out;
	}
	/*
	 * The worker file's release ended every DPU the session left
	 * RUNNING before close() returned.  But a session another thread
	 * began after that close() may have launched these DPUs again
	 * (RUNNING, or ended with its own reasons) before the STATUS: then
	 * there is no verdict.
	 */
	if (__atomic_load_n(&ST->wgen, __ATOMIC_SEQ_CST) != mark)
		goto out;
	for (i = 0; i < nr; i++) {
		uint32_t dpu = l.first_dpu + i;
		const struct dpusim_dpu_state *s = &st[i];

		if (s->state == DPUSIM_DPU_DONE && dpu % 3 != 1 && !s->reason[0])
			continue;
		if (s->state == DPUSIM_DPU_FAULT &&
		    (!strcmp(s->reason, "worker exited") ||
		     !strcmp(s->reason, "no worker left") ||
		     (dpu % 3 == 1 && !strncmp(s->reason, "fuzz ", 5))))
			continue;
		violation(c, k, "program: DPU %u state %u reason \"%.56s\"", dpu,
			  s->state, s->reason);
	}
out:
	__atomic_fetch_sub(&ST->wopen, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&ST->wgen, 1, __ATOMIC_SEQ_CST);
}

/* ------------------------------------------------ DPUSIM_IOCTL_STREAM_* */

/*
 * Streams.  The model (struct mstream) follows every stream its ctx
 * created: the shape the kernel's dpusim_stream_layout() gives, the core
 * that has it open and its cursor.  In the exact phases it knows every
 * stream of the rank: ids 0 .. nst - 1, stream_resident_bytes; a
 * well-formed STREAM_CREATE gets id nst, and fails with ENOSPC only once
 * DPUSIM_STREAM_MAX exist (or for the budget).  With several threads (or
 * forks) a ctx opens, closes and seeks only the streams it created, and
 * names the others' only with a defect the kernel checks before it looks
 * the stream up (flags, core, delta): each stream's model stays exact, and
 * the ids a ctx is given must be ids nobody was given before.
 */

/*
 * Bytes a new stream makes resident: all of one of data; a page of an
 * empty one, and its token tables (a u64 offset and a u32 size for each of
 * min(capacity / 8, DPUSIM_STREAM_MAX_TOKENS) + 1 tokens).
 */
static uint64_t stream_res(bool down, uint64_t mem_size, uint64_t data_size)
{
	uint64_t n = data_size / 8;

	if (down)
		return (mem_size + PAGE - 1) / PAGE * PAGE;
	if (n > DPUSIM_STREAM_MAX_TOKENS)
		n = DPUSIM_STREAM_MAX_TOKENS;
	return PAGE + ((n + 1) * 12 + PAGE - 1) / PAGE * PAGE;
}

/* Size of token @i (0 at the end). */
static uint32_t ms_token(const struct mstream *e, uint32_t i)
{
	if (i >= e->nr_tokens)
		return 0;
	if (!e->down)
		return e->up->sizes[i];
	if (i + 1 < e->nr_tokens)
		return e->token_size;
	return e->data_size - (uint64_t)(e->nr_tokens - 1) * e->token_size;
}

/* Offset of the header of token @i (0 .. nr_tokens) in the memory. */
static uint64_t ms_offset(const struct mstream *e, uint32_t i)
{
	uint64_t off = 0;
	uint32_t j;

	if (!e->down) {		/* the tokens written, one after the other */
		for (j = 0; j < i && j < e->nr_tokens; j++)
			off += DPUSIM_STREAM_HEADER + e->up->sizes[j];
		return off;
	}
	if (i < e->nr_tokens)
		return (uint64_t)i * (e->token_size + DPUSIM_STREAM_HEADER);
	return e->data_size + (uint64_t)i * DPUSIM_STREAM_HEADER;
}

/* The stream @id if this ctx may move it (exact: any known one), or NULL. */
static struct mstream *ms_mine(struct ctx *c, uint32_t id)
{
	struct mstream *e;
	int o;

	if (id >= DPUSIM_STREAM_MAX)
		return NULL;
	e = &c->m->st[id];
	o = __atomic_load_n(&e->owner, __ATOMIC_ACQUIRE);
	return o > 0 && (o == c->sid || c->exact) ? e : NULL;
}

static bool ms_known(const struct model *m, uint32_t id)
{
	return id < DPUSIM_STREAM_MAX &&
	       __atomic_load_n(&m->st[id].owner, __ATOMIC_ACQUIRE);
}

/* The rank was closed and opened again: no stream left. */
static void ms_reset(struct model *m)
{
	memset(m->st, 0, sizeof(m->st));
	memset(m->up, 0, DPUSIM_STREAM_MAX * sizeof(*m->up));
	m->nst = 0;
	m->st_res = 0;
}

static const char *scmd_name(unsigned long cmd)
{
	return cmd == DPUSIM_IOCTL_STREAM_OPEN ? "OPEN" :
	       cmd == DPUSIM_IOCTL_STREAM_CLOSE ? "CLOSE" : "SEEK";
}

/* A STREAM_OPEN/_CLOSE/_SEEK outside the oracle: 0 or the errno. */
static int raw_scmd(int fd, unsigned long cmd, uint32_t id, uint32_t core,
		    int32_t delta, struct dpusim_stream_cmd *out)
{
	struct dpusim_stream_cmd s;
	int ret;

	do {
		s = (struct dpusim_stream_cmd){
			.size = sizeof(s), .id = id, .core = core, .delta = delta,
		};
		st_add(&ST->helper_calls, 1);
		ret = ioctl(fd, cmd, &s);
	} while (ret && errno == EINTR);
	if (out)
		*out = s;
	return ret ? errno : 0;
}

/* The out fields of a success on stream @e (its cursor already applied). */
static bool scmd_out_ok(const struct mstream *e,
			const struct dpusim_stream_cmd *o, char *why, size_t n)
{
	uint32_t c = e->cursor, prev = c ? ms_token(e, c - 1) : 0;

	if (o->size == sizeof(*o) && o->cursor == c &&
	    o->token == ms_token(e, c) && o->nr_tokens == e->nr_tokens &&
	    o->mem_size == e->mem_size && o->offset == ms_offset(e, c) &&
	    o->token_size == e->token_size && o->prev == prev)
		return true;
	snprintf(why, n, "out size %u cursor %u token %u nr_tokens %u mem_size %llu offset %llu token_size %u prev %u; model: cursor %u token %u nr_tokens %u mem_size %llu offset %llu token_size %u prev %u",
		 o->size, o->cursor, o->token, o->nr_tokens,
		 (unsigned long long)o->mem_size, (unsigned long long)o->offset,
		 o->token_size, o->prev, c, ms_token(e, c), e->nr_tokens,
		 (unsigned long long)e->mem_size,
		 (unsigned long long)ms_offset(e, c), e->token_size, prev);
	return false;
}

/*
 * Check stream @id against the model with helper calls: a free one opens
 * (its cursor on token 0; closed again at once), a held one answers a
 * SEEK by 0 of its holder with the model's cursor.  On a mismatch, say
 * what in @why and take the real state (holder, cursor) into the model.
 * Returns 0 (as modelled), 1 (mismatch) or -1 (the fd is gone).
 */
static int stream_probe(struct ctx *c, uint32_t id, char *why, size_t n)
{
	struct mstream *e = &c->m->st[id];
	uint32_t core = rn(&c->rng, c->m->nr_dpus), h;
	uint64_t mark = session_mark();
	struct dpusim_stream_cmd o;
	int err;

	if (e->core < 0) {
		err = raw_scmd(c->fd, DPUSIM_IOCTL_STREAM_OPEN, id, core, 0, &o);
		/* a host thread may not act as a RUNNING DPU: no verdict */
		if (err == EBUSY && session_since(mark))
			return 0;
		if (!err) {
			e->cursor = 0;
			if (!scmd_out_ok(e, &o, why, n)) {
				raw_scmd(c->fd, DPUSIM_IOCTL_STREAM_CLOSE, id, core, 0, NULL);
				return 1;
			}
			err = raw_scmd(c->fd, DPUSIM_IOCTL_STREAM_CLOSE, id, core, 0, NULL);
			/* the core launched meanwhile: close it once it is not */
			for (h = 0; err == EBUSY && session_since(mark) && h < 20000; h++) {
				usleep(500);
				err = raw_scmd(c->fd, DPUSIM_IOCTL_STREAM_CLOSE, id, core, 0,
					       NULL);
			}
			if (!err)
				return 0;
			if (err == EBADF)
				return -1;
			snprintf(why, n, "stream %u: CLOSE by core %u right after its OPEN: %s",
				 id, core, ename(err));
		} else if (err == EBADF) {
			return -1;
		} else {
			snprintf(why, n, "stream %u: OPEN by core %u: %s, the model says nobody has it open",
				 id, core, ename(err));
		}
	} else {
		err = raw_scmd(c->fd, DPUSIM_IOCTL_STREAM_SEEK, id, e->core, 0, &o);
		if (err == EBUSY && session_since(mark))
			return 0;
		if (!err) {
			if (scmd_out_ok(e, &o, why, n))
				return 0;
			e->cursor = o.cursor;
			return 1;
		}
		if (err == EBADF)
			return -1;
		snprintf(why, n, "stream %u: SEEK by 0 by core %d: %s, the model says core %d has it open at token %u",
			 id, e->core, ename(err), e->core, e->cursor);
	}
	/* find the real state */
	e->core = -1;
	e->cursor = 0;
	if (!raw_scmd(c->fd, DPUSIM_IOCTL_STREAM_OPEN, id, 0, 0, NULL)) {
		raw_scmd(c->fd, DPUSIM_IOCTL_STREAM_CLOSE, id, 0, 0, NULL);
		return 1;
	}
	for (h = 0; h < c->m->nr_dpus; h++)
		if (!raw_scmd(c->fd, DPUSIM_IOCTL_STREAM_SEEK, id, h, 0, &o)) {
			e->core = h;
			e->cursor = o.cursor;
			break;
		}
	return 1;
}

/*
 * Exact phases: nothing but the known streams exists (the next id is
 * free) and stream_resident_bytes is theirs.  Returns mismatches, said in
 * @why (the last one).
 */
static int streams_nothing_else(struct ctx *c, char *why, size_t n)
{
	struct model *m = c->m;
	long long res = sysfs_rank_attr(m->rank, "stream_resident_bytes");
	int err, bad = 0;

	if (res >= 0 && (uint64_t)res != m->st_res) {
		snprintf(why, n, "stream_resident_bytes %lld, the model's streams make %llu",
			 res, (unsigned long long)m->st_res);
		m->st_res = res;
		bad++;
	}
	if (m->nst < DPUSIM_STREAM_MAX) {
		err = raw_scmd(c->fd, DPUSIM_IOCTL_STREAM_OPEN, m->nst, 0, 0, NULL);
		if (err == EBADF)
			return bad;
		if (err != ENOENT) {
			snprintf(why, n, "stream %u (the next id) exists: OPEN %s", m->nst,
				 ename(err));
			if (!err)
				raw_scmd(c->fd, DPUSIM_IOCTL_STREAM_CLOSE, m->nst, 0, 0, NULL);
			bad++;
		}
	}
	return bad;
}

/*
 * Exact phases: once no move is in flight, the rank's pinned_pages and the
 * process's VmPin are the pages of the buffers registered to the streams
 * (the model's).  Returns mismatches, said in @why (the last one).
 */
static int pins_verify(struct ctx *c, char *why, size_t n)
{
	struct model *m = c->m;
	uint64_t want = 0;
	long long pin;
	long vm;
	uint32_t id;
	int bad = 0;

	for (id = 0; id < DPUSIM_STREAM_MAX; id++) {
		if (m->st[id].owner < 0)
			return 0;	/* lost: whether it still has one too */
		if (m->st[id].owner)
			want += (m->st[id].buf_len + PAGE - 1) / PAGE;
	}
	if (raw_sync(c->fd))
		return 0;
	pin = sysfs_rank_attr(m->rank, "pinned_pages");
	vm = proc_status_kb("VmPin:");
	if (pin >= 0 && (uint64_t)pin != want) {
		snprintf(why, n, "pinned_pages %lld, the streams' registered buffers are %llu pages",
			 pin, (unsigned long long)want);
		bad++;
	}
	if (vm >= 0 && (uint64_t)vm != want * (PAGE >> 10)) {
		snprintf(why, n, "VmPin %ld kB, the streams' registered buffers are %llu pages",
			 vm, (unsigned long long)want);
		bad++;
	}
	return bad;
}

/* Every known stream as modelled, and (exact) nothing else; mismatches. */
static int streams_verify(struct ctx *c, const char *when)
{
	char why[320];
	uint32_t id;
	int bad = 0, r;

	for (id = 0; id < DPUSIM_STREAM_MAX; id++) {
		if (!ms_known(c->m, id) || c->m->st[id].owner < 0)
			continue;
		r = stream_probe(c, id, why, sizeof(why));
		if (r < 0)
			return bad;
		if (r) {
			msg("VIOLATION [%s seed=%llu] %s", when,
			    (unsigned long long)g_seed, why);
			bad++;
		}
	}
	if (c->exact && streams_nothing_else(c, why, sizeof(why))) {
		msg("VIOLATION [%s seed=%llu] %s", when, (unsigned long long)g_seed,
		    why);
		bad++;
	}
	if (c->exact && pins_verify(c, why, sizeof(why))) {
		msg("VIOLATION [%s seed=%llu] %s", when, (unsigned long long)g_seed,
		    why);
		bad++;
	}
	if (bad)
		st_add(&ST->violations, bad);
	return bad;
}

/*
 * A freshly opened rank has no stream: none resident, id 0 free, no
 * registered buffer pinned (they went with the ownership, and the moves
 * using them before it ended).
 */
static int streams_none(int fd, int rank, const char *when)
{
	long long res = sysfs_rank_attr(rank, "stream_resident_bytes");
	long long pin = sysfs_rank_attr(rank, "pinned_pages");
	int err = raw_scmd(fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 0, 0, NULL), bad = 0;

	if (res > 0) {
		msg("VIOLATION [%s] reopened rank%d: stream_resident_bytes %lld",
		    when, rank, res);
		bad++;
	}
	if (pin > 0) {
		msg("VIOLATION [%s] reopened rank%d: pinned_pages %lld", when, rank,
		    pin);
		bad++;
	}
	if (err != ENOENT) {
		msg("VIOLATION [%s] reopened rank%d: OPEN of stream 0: %s, not ENOENT",
		    when, rank, ename(err));
		bad++;
	}
	if (bad)
		st_add(&ST->violations, bad);
	return bad;
}

/* Bytes of the module's budget resident nowhere (all ranks), or -1. */
static long long budget_room(void)
{
	static const char *const attr[] = {
		"mram_resident_bytes", "wram_resident_bytes",
		"stream_resident_bytes",
	};
	long long limit = mram_budget_read(), used = 0, v;
	unsigned int r, i;

	if (limit < 0)
		return -1;
	for (r = 0; r < 64 && sysfs_rank_attr(r, "nr_dpus") > 0; r++)
		for (i = 0; i < 3; i++)
			if ((v = sysfs_rank_attr(r, attr[i])) > 0)
				used += v;
	return limit - used;
}

/* Data for a stream of @len bytes: readable, flaky or bad. */
static uint64_t stream_data(struct ctx *c, uint64_t len)
{
	unsigned int r = rn(&c->rng, 100);
	uint64_t k;

	if (c->flap_on && r < 15 && len <= FLAP_LEN)
		return (uintptr_t)g_flap + rn(&c->rng, FLAP_LEN - len + 1);
	if (r < 80 && len <= SRC_LEN)
		return (uintptr_t)g_src + rn(&c->rng, SRC_LEN - len + 1);
	if (r < 88 && len <= RO_CONST)
		return (uintptr_t)c->ro + rn(&c->rng, RO_CONST - len + 1);
	if (r < 92 && len <= ZERO_LEN)
		return (uintptr_t)g_zero + PAGE * rn(&c->rng, (ZERO_LEN - len) / PAGE + 1);
	switch (rn(&c->rng, 5)) {	/* bad */
	case 0:
		return (uintptr_t)c->none + rn(&c->rng, PAGE);
	case 1:
		return KADDR + rn(&c->rng, 1 << 20);
	case 2:
		return NONCANON + rn(&c->rng, 1 << 20);
	case 3:		/* straddles into the guard page after the source */
		k = len > 1 ? 1 + rn(&c->rng, len - 1 < SRC_LEN ? len - 1 : SRC_LEN) : 0;
		if (k)
			return (uintptr_t)g_src + SRC_LEN - k;
		/* fall through */
	default:
		return ~0ULL - rn(&c->rng, 64);	/* wraps */
	}
}

static uint32_t stream_token_size(struct ctx *c)
{
	static const uint32_t t[] = {
		16, 16, 17, 24, 32, 48, 64, 100, 128, 256, 1000, 4096, 65536,
		1u << 20, 0x7fffffffu, 0xffffffffu,
	};

	return chance(&c->rng, 80) ? t[rn(&c->rng, 16)] :
	       DPUSIM_STREAM_MIN_TOKEN + rn(&c->rng, 600);
}

static void gen_stream_create(struct ctx *c, struct fz_call *k)
{
	struct dpusim_stream_create s = { .size = sizeof(s) };
	bool down = chance(&c->rng, 65);
	unsigned int r = rn(&c->rng, 100);

	s.token_size = stream_token_size(c);
	if (down)	/* the kernel copies it all, and keeps it resident */
		s.stream_size = r < 50 ? 1 + rn(&c->rng, 512) :
				r < 85 ? 1 + rn(&c->rng, 8192) :
				1 + rn(&c->rng, SRC_LEN);
	else		/* one page resident, whatever the capacity */
		s.stream_size = r < 60 ? 1 + rn(&c->rng, 8192) :
				r < 90 ? 1 + rn(&c->rng, 1 << 20) :
				r < 96 ? 1 + rn(&c->rng, DPUSIM_STREAM_MAX_BYTES) :
				DPUSIM_STREAM_MAX_BYTES;
	switch (rn(&c->rng, 24)) {
	case 0: s.flags = 1u << rn(&c->rng, 32); break;
	case 1: s.__reserved = 1 + rn(&c->rng, 0xfffffffe); break;
	case 2: s.token_size = rn(&c->rng, DPUSIM_STREAM_MIN_TOKEN); break;
	case 3: s.stream_size = 0; break;
	case 4:
		s.stream_size = chance(&c->rng, 50) ?
				DPUSIM_STREAM_MAX_BYTES + 1 + rn(&c->rng, 1 << 20) :
				chance(&c->rng, 50) ? ~0ULL : 1ULL << 63;
		break;
	case 5:	/* more than DPUSIM_STREAM_MAX_TOKENS tokens */
		s.token_size = DPUSIM_STREAM_MIN_TOKEN + rn(&c->rng, 64);
		s.stream_size = (uint64_t)s.token_size * DPUSIM_STREAM_MAX_TOKENS +
				1 + rn(&c->rng, 100 * (uint64_t)s.token_size);
		down = !chance(&c->rng, 10);	/* empty: no limit of tokens */
		break;
	case 6:	/* out fields: garbage in */
		s.id = rnd(&c->rng);
		s.mem_size = rnd(&c->rng);
		s.nr_tokens = rnd(&c->rng);
		break;
	default: break;
	}
	if (down)
		s.data = stream_data(c, s.stream_size);
	place_struct(c, k, &s);
}

/*
 * The memory of a new stream of data, through a mapping of the rank file
 * at DPUSIM_MMAP_STREAM(@id): EBSP's format, the data copied at creation
 * (@data: bytes nobody changes).  Every page of it is resident: reading
 * allocates nothing.  Returns NULL or what differs.
 */
static const char *stream_format_check(struct ctx *c, uint32_t id,
				       const struct mstream *e,
				       const uint8_t *data, char *why, size_t n)
{
	const uint8_t *p = mmap(NULL, e->mem_size, PROT_READ, MAP_SHARED, c->fd,
				DPUSIM_MMAP_STREAM(id));
	uint32_t i, h[2], prev = 0, size;
	uint64_t off;

	if (p == MAP_FAILED) {
		if (errno == EBADF && c->may_ebadf)
			return NULL;
		snprintf(why, n, "mmap of stream %u (%llu bytes): %s", id,
			 (unsigned long long)e->mem_size, ename(errno));
		return why;
	}
	why[0] = 0;
	for (i = 0; i <= e->nr_tokens && !why[0]; i++) {
		size = ms_token(e, i);
		off = ms_offset(e, i);
		memcpy(h, p + off, sizeof(h));
		if (h[0] != prev || h[1] != size)
			snprintf(why, n, "stream %u: header of token %u at %llu is %u, %u; want %u, %u",
				 id, i, (unsigned long long)off, h[0], h[1], prev, size);
		else if (size && memcmp(p + off + DPUSIM_STREAM_HEADER, data, size))
			snprintf(why, n, "stream %u: the data of token %u (at %llu) is not what it was made of",
				 id, i, (unsigned long long)off + DPUSIM_STREAM_HEADER);
		data += size;
		prev = size;
	}
	munmap((void *)p, e->mem_size);
	return why[0] ? why : NULL;
}

/*
 * The data of a new stream, if it never changes (g_src, g_zero: the read-
 * only view's constant bytes are not, gen_status() puts lists there):
 * what a move down must give; NULL if not known.
 */
static const uint8_t *stream_src(struct ctx *c, uint64_t data, uint64_t len)
{
	if (!data || range_check(&c->rs, data, len, false) != RC_OK)
		return NULL;
	if ((data >= (uintptr_t)g_src && data + len <= (uintptr_t)g_src + SRC_LEN) ||
	    (data >= (uintptr_t)g_zero && data + len <= (uintptr_t)g_zero + ZERO_LEN))
		return (const uint8_t *)(uintptr_t)data;
	return NULL;
}

/* The struct's answer cannot be written back: EFAULT. */
static bool answer_unwritable(struct ctx *c, struct fz_call *k, size_t ks)
{
	size_t n = k->size < ks ? k->size : ks;

	return range_check(&c->rs, (uintptr_t)k->arg, n, true) != RC_OK;
}

static void predict_stream_create(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_stream_create *s = &k->f.sc;
	uint32_t nt;
	uint64_t ms;
	int e, rc;

	if (s->flags || s->__reserved)
		es_add(&k->must, EINVAL);
	e = stream_layout(s->stream_size, s->token_size, s->data, &nt, &ms);
	if (e)
		es_add(&k->must, e);
	if (s->data && s->stream_size) {
		rc = range_check(&c->rs, s->data, s->stream_size, false);
		if (rc == RC_BAD)
			es_add(&k->must, EFAULT);
		else if (rc == RC_FLAKY)
			es_add(&k->may, EFAULT);
	}
	if (answer_unwritable(c, k, sizeof(*s)))
		es_add(&k->must, EFAULT);
	if (c->exact && c->m->nst >= DPUSIM_STREAM_MAX)
		es_add(&k->must, ENOSPC);
	if (es_has(&k->must, EFAULT) || es_has(&k->may, EFAULT)) {
		/* the memory is allocated before the data is read */
		es_add(&k->may, ENOMEM);
		es_add(&k->may, ENOSPC);
	}
	es_add(&k->amb, ENOMEM);
	es_add(&k->amb, ENOSPC);	/* the budget; other ctxs' streams */
}

static void commit_stream_create(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_stream_create *s = &k->f.sc;
	struct dpusim_stream_create out;
	struct model *m = c->m;
	struct mstream *e;
	char why[320];
	uint32_t nt = 0;
	uint64_t ms = 0;

	if (k->ret) {
		commit_none(c, k);
		if (c->exact && k->err != EBADF &&
		    streams_nothing_else(c, why, sizeof(why)))
			violation(c, k, "failed STREAM_CREATE (%s): %s",
				  ename(k->err), why);
		/* exact: ENOSPC under DPUSIM_STREAM_MAX is the budget's */
		if (c->exact && k->err == ENOSPC && es_empty(&k->must) &&
		    !stream_layout(s->stream_size, s->token_size, s->data, &nt, &ms)) {
			long long room = budget_room();
			uint64_t need = stream_res(s->data, ms, s->stream_size);

			if (room >= 0 && (uint64_t)room > need + (1ULL << 20))
				violation(c, k, "ENOSPC with %lld bytes of the budget free; the stream needs %llu",
					  room, (unsigned long long)need);
		}
		return;
	}
	memcpy(&out, k->arg, sizeof(out));
	stream_layout(s->stream_size, s->token_size, s->data, &nt, &ms);
	if (out.size != sizeof(out) || out.flags || out.__reserved ||
	    out.stream_size != s->stream_size || out.data != s->data ||
	    out.token_size != s->token_size || out.nr_tokens != nt ||
	    out.mem_size != ms)
		violation(c, k, "STREAM_CREATE of %llu bytes in tokens of %u (%s) returned size %u nr_tokens %u mem_size %llu, the layout says %u %llu",
			  (unsigned long long)s->stream_size, s->token_size,
			  s->data ? "data" : "empty", out.size, out.nr_tokens,
			  (unsigned long long)out.mem_size, nt,
			  (unsigned long long)ms);
	if (k->img_len > sizeof(out) &&
	    memcmp(k->arg + sizeof(out), k->img + sizeof(out),
		   k->img_len - sizeof(out)))
		violation(c, k, "STREAM_CREATE wrote past the struct it knows");
	if (out.id >= DPUSIM_STREAM_MAX) {
		violation(c, k, "STREAM_CREATE gave id %u", out.id);
		return;
	}
	if (c->exact && out.id != m->nst)
		violation(c, k, "STREAM_CREATE gave id %u, not the next one (%u)",
			  out.id, m->nst);
	e = &m->st[out.id];
	if (ms_known(m, out.id)) {
		violation(c, k, "STREAM_CREATE gave id %u again", out.id);
		return;
	}
	*e = (struct mstream){
		.down = s->data, .core = -1, .nr_tokens = nt,
		.token_size = s->token_size, .data_size = s->stream_size,
		.mem_size = ms, .src = stream_src(c, s->data, s->stream_size),
		.max_tokens = s->data ? 0 : s->stream_size / 8 < DPUSIM_STREAM_MAX_TOKENS ?
			      s->stream_size / 8 : DPUSIM_STREAM_MAX_TOKENS,
	};
	if (!e->down) {
		e->up = &m->up[out.id];
		memset(e->up, 0, sizeof(*e->up));
		e->up->pages = 1;	/* the header 0, 0 */
	}
	__atomic_store_n(&e->owner, c->sid, __ATOMIC_RELEASE);
	if (e->down && chance(&c->rng, 30) &&
	    range_check(&c->rs, s->data, s->stream_size, false) == RC_OK &&
	    stream_format_check(c, out.id, e, (const uint8_t *)(uintptr_t)s->data,
				why, sizeof(why)))
		violation(c, k, "STREAM_CREATE: %s", why);
	if (!c->exact)
		return;
	if (out.id >= m->nst)
		m->nst = out.id + 1;
	m->st_res += stream_res(e->down, ms, s->stream_size);
	if (streams_nothing_else(c, why, sizeof(why)))
		violation(c, k, "after STREAM_CREATE of stream %u: %s", out.id, why);
}

static int32_t stream_delta(struct ctx *c, const struct mstream *e)
{
	uint32_t nt = e ? e->nr_tokens : 8;

	switch (rn(&c->rng, 12)) {
	case 0: return 0;
	case 1: return INT_MIN;
	case 2: return INT_MAX;
	case 3: return (int32_t)rnd(&c->rng);
	case 4: return -(int32_t)rn(&c->rng, nt + 3);
	default: return rn(&c->rng, nt < 8 ? nt + 3 : nt / 3 + 3);
	}
}

/*
 * A token buffer for an OPEN (@open; other commands: a defect): mostly
 * a valid one in the ctx's area, else misaligned, of 0 bytes or without
 * an address, over DPUSIM_STREAM_MAX_BUF, running into the guard page,
 * read-only, unmapped, a kernel or non-canonical address, wrapping.
 */
static void gen_stream_buf(struct ctx *c, struct dpusim_stream_cmd *s, bool open)
{
	uint64_t p = rn(&c->rng, SBUF_LEN / PAGE), room = SBUF_LEN - p * PAGE;
	unsigned int r = rn(&c->rng, 100);

	if (r >= (open ? 45 : 5))
		return;		/* none */
	s->buf = (uintptr_t)c->sbuf + p * PAGE;
	s->buf_len = r % 4 ? room - rn(&c->rng, PAGE) :
		     1 + rn(&c->rng, chance(&c->rng, 50) ? room : PAGE);
	if (r < (open ? 36 : 2))
		return;		/* valid (a defect if not an OPEN) */
	switch (rn(&c->rng, 11)) {
	case 0: s->buf += 1 + rn(&c->rng, PAGE - 1); break;
	case 1: s->buf_len = 0; break;
	case 2: s->buf = 0; break;
	case 3:
		s->buf_len = chance(&c->rng, 50) ? ~0ULL - rn(&c->rng, 2) :
			     DPUSIM_STREAM_MAX_BUF + 1 + rn(&c->rng, 1 << 20);
		break;
	case 4:	/* into the guard page; or as long as allowed */
		s->buf_len = chance(&c->rng, 80) ? room + 1 + rn(&c->rng, 2 * PAGE) :
			     DPUSIM_STREAM_MAX_BUF;
		break;
	case 5:
		s->buf = (uintptr_t)g_zero + PAGE * rn(&c->rng, 64);
		break;
	case 6: s->buf = (uintptr_t)c->ro + PAGE * rn(&c->rng, RO_LEN / PAGE); break;
	case 7: s->buf = (uintptr_t)c->none; break;
	case 8: s->buf = KADDR + PAGE * rn(&c->rng, 256); break;
	case 9: s->buf = NONCANON + PAGE * rn(&c->rng, 256); break;
	default:	/* the end wraps */
		s->buf = (~0ULL & ~(PAGE - 1)) - PAGE * rn(&c->rng, 2);
		s->buf_len = 2 * PAGE + rn(&c->rng, 4 * PAGE);
		break;
	}
}

/*
 * OPEN, CLOSE and SEEK: mostly a stream this ctx created, by the core
 * that has it open (or another one); else an id no stream has (never
 * created, >= DPUSIM_STREAM_MAX); another ctx's stream only with a defect.
 * An OPEN often registers a token buffer (gen_stream_buf()).
 */
static void gen_stream_cmd(struct ctx *c, struct fz_call *k)
{
	const struct model *m = c->m;
	bool seek = k->op->cmd == DPUSIM_IOCTL_STREAM_SEEK;
	bool open = k->op->cmd == DPUSIM_IOCTL_STREAM_OPEN;
	struct dpusim_stream_cmd s = { .size = sizeof(s) };
	uint32_t own[DPUSIM_STREAM_MAX], nown = 0, i, j, n = 0;
	const struct mstream *e = NULL;
	unsigned int r = rn(&c->rng, 100);
	bool need_defect = false;

	for (i = 0; i < DPUSIM_STREAM_MAX; i++)
		if (ms_mine(c, i))
			own[nown++] = i;
	if (r < 80 && nown) {
		s.id = own[rn(&c->rng, nown)];
		/* an OPEN: often of one nobody has open, if any */
		for (i = 0, j = open && chance(&c->rng, 50) ? nown : 0; i < j; i++)
			if (m->st[own[i]].core < 0)
				own[n++] = own[i];
		if (n)
			s.id = own[rn(&c->rng, n)];
		e = &m->st[s.id];
	} else if (r < 88 && c->exact && m->nst < DPUSIM_STREAM_MAX) {
		s.id = m->nst + rn(&c->rng, DPUSIM_STREAM_MAX - m->nst);
	} else if (r < 95) {
		s.id = DPUSIM_STREAM_MAX + rn(&c->rng, chance(&c->rng, 50) ? 16 : 1 << 30);
	} else if (r < 97) {
		s.id = chance(&c->rng, 50) ? 0xffffffffu : rnd(&c->rng);
	} else {
		s.id = rn(&c->rng, DPUSIM_STREAM_MAX);
		need_defect = !c->exact && !ms_mine(c, s.id);
	}
	if (e && e->core >= 0 && chance(&c->rng, open ? 30 : 85))
		s.core = e->core;
	else
		s.core = rn(&c->rng, m->nr_dpus);
	if (seek)
		s.delta = stream_delta(c, e);
	switch (rn(&c->rng, need_defect ? 3 : 16)) {
	case 0: s.flags = 1u << rn(&c->rng, 32); break;
	case 1:
		s.core = chance(&c->rng, 50) ? m->nr_dpus + rn(&c->rng, 1000) :
					       0xffffffffu - rn(&c->rng, 2);
		break;
	case 2:
		if (seek)
			s.flags = 1u << rn(&c->rng, 32);
		else
			s.delta = chance(&c->rng, 50) ? 1 + rn(&c->rng, 100) : INT_MIN;
		break;
	case 3:	/* out fields: garbage in */
		s.cursor = rnd(&c->rng);
		s.token = rnd(&c->rng);
		s.nr_tokens = rnd(&c->rng);
		s.mem_size = rnd(&c->rng);
		s.offset = rnd(&c->rng);
		s.token_size = rnd(&c->rng);
		s.prev = rnd(&c->rng);
		break;
	default: break;
	}
	gen_stream_buf(c, &s, open);
	place_struct(c, k, &s);
}

/* A defect the kernel finds before it looks the stream up (or pins). */
static bool scmd_bad_fields(const struct ctx *c, const struct fz_call *k)
{
	const struct dpusim_stream_cmd *s = &k->f.scmd;

	return s->flags || s->core >= c->m->nr_dpus ||
	       (k->op->cmd != DPUSIM_IOCTL_STREAM_SEEK && s->delta) ||
	       !s->buf != !s->buf_len ||
	       (s->buf && k->op->cmd != DPUSIM_IOCTL_STREAM_OPEN);
}

/*
 * An OPEN's buffer, registered before the stream is looked up: its
 * defects (a misaligned address, over DPUSIM_STREAM_MAX_BUF, wrapping;
 * then, after the allocations and RLIMIT_MEMLOCK, memory not writable).
 */
static void predict_stream_buf(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_stream_cmd *s = &k->f.scmd;
	uint64_t end;
	int rc;

	if (s->buf % PAGE) {
		es_add(&k->must, EINVAL);
		return;
	}
	if (s->buf_len > DPUSIM_STREAM_MAX_BUF) {
		es_add(&k->must, E2BIG);
		return;
	}
	if (__builtin_add_overflow(s->buf, s->buf_len, &end)) {
		es_add(&k->must, EFAULT);
		return;
	}
	es_add(&k->may, ENOMEM);
	es_add(&k->amb, ENOMEM);
	rc = range_check(&c->rs, s->buf, s->buf_len, true);
	if (rc == RC_BAD)
		es_add(&k->must, EFAULT);
	else if (rc == RC_FLAKY)
		es_add(&k->may, EFAULT);
}

static void predict_stream_cmd(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_stream_cmd *s = &k->f.scmd;
	const struct mstream *e = ms_mine(c, s->id);

	if (scmd_bad_fields(c, k)) {
		es_add(&k->must, EINVAL);
	} else {
		if (s->buf)	/* an OPEN's buffer: pinned first */
			predict_stream_buf(c, k);
		if (e) {
			if (k->op->cmd == DPUSIM_IOCTL_STREAM_OPEN && e->core >= 0)
				es_add(&k->must, EBUSY);
			if (k->op->cmd != DPUSIM_IOCTL_STREAM_OPEN &&
			    e->core != (int32_t)s->core)
				es_add(&k->must, EINVAL);
		} else if (c->exact || s->id >= DPUSIM_STREAM_MAX) {
			es_add(&k->must, ENOENT);
		} else {
			/* not generated: another ctx's stream without a defect */
			es_add(&k->amb, ENOENT);
			es_add(&k->amb, EBUSY);
			es_add(&k->amb, EINVAL);
		}
	}
	if (answer_unwritable(c, k, sizeof(*s)))
		es_add(&k->must, EFAULT);
}

static void commit_stream_cmd(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_stream_cmd *s = &k->f.scmd;
	struct mstream *e = ms_mine(c, s->id);
	struct dpusim_stream_cmd out;
	uint64_t had_buf = 0;
	char why[320] = "";

	if (k->ret) {
		commit_none(c, k);
		/* nothing changed: the stream is as it was */
		if (e && k->err != EBADF && !scmd_bad_fields(c, k) &&
		    stream_probe(c, s->id, why, sizeof(why)) == 1)
			violation(c, k, "failed STREAM_%s (%s) of stream %u: %s",
				  scmd_name(k->cmd), ename(k->err), s->id, why);
		/* ... and its buffer pinned nothing */
		if (c->exact && s->buf && k->err != EBADF &&
		    pins_verify(c, why, sizeof(why)))
			violation(c, k, "failed STREAM_%s (%s) with a buffer: %s",
				  scmd_name(k->cmd), ename(k->err), why);
		return;
	}
	if (!e)
		return;		/* not ours: run_call reported it if it must fail */
	switch (k->cmd) {
	case DPUSIM_IOCTL_STREAM_OPEN:
		e->core = s->core;
		e->cursor = 0;
		e->buf = s->buf;
		e->buf_len = s->buf_len;
		if (s->buf)
			st_add(&ST->sb_open, 1);
		break;
	case DPUSIM_IOCTL_STREAM_CLOSE:
		e->core = -1;
		had_buf = e->buf_len;
		e->buf = e->buf_len = 0;
		break;
	default: {
		int64_t cur = (int64_t)e->cursor + s->delta;

		e->cursor = cur < 0 ? 0 : cur > e->nr_tokens ? e->nr_tokens : cur;
		break;
	}
	}
	/* an older version's size: the answer is cut there */
	memset(&out, 0, sizeof(out));
	memcpy(&out, k->arg, k->size < sizeof(out) ? k->size : sizeof(out));
	if (!scmd_out_ok(e, &out, why, sizeof(why)) || out.flags ||
	    out.id != s->id || out.core != s->core || out.delta != s->delta) {
		violation(c, k, "STREAM_%s of stream %u by core %u (delta %d): %s; id %u core %u delta %d flags %#x",
			  scmd_name(k->cmd), s->id, s->core, s->delta, why,
			  out.id, out.core, out.delta, out.flags);
		e->cursor = out.cursor;
	}
	if (k->size >= sizeof(out) &&
	    (out.buf != s->buf || out.buf_len != s->buf_len))
		violation(c, k, "STREAM_%s answered buf %#llx buf_len %llu, given %#llx %llu",
			  scmd_name(k->cmd), (unsigned long long)out.buf,
			  (unsigned long long)out.buf_len, (unsigned long long)s->buf,
			  (unsigned long long)s->buf_len);
	if (k->img_len > sizeof(out) &&
	    memcmp(k->arg + sizeof(out), k->img + sizeof(out),
		   k->img_len - sizeof(out)))
		violation(c, k, "STREAM_%s wrote past the struct it knows",
			  scmd_name(k->cmd));
	if (k->size < sizeof(out) && k->img_len > k->size &&
	    memcmp(k->arg + k->size, k->img + k->size,
		   (k->img_len < sizeof(out) ? k->img_len : sizeof(out)) - k->size))
		violation(c, k, "STREAM_%s wrote past the caller's version (%u bytes)",
			  scmd_name(k->cmd), k->size);
	/* registered: its pages pinned and charged; closed: let go */
	if (c->exact && (s->buf || had_buf) && pins_verify(c, why, sizeof(why)))
		violation(c, k, "STREAM_%s of stream %u: %s", scmd_name(k->cmd),
			  s->id, why);
}

/* mmap() of the rank file: offsets, lengths and flags, then a touch. */
struct mmap_args { uint64_t off, len; int flags; };

static void gen_rank_mmap(struct ctx *c, struct fz_call *k)
{
	const struct model *m = c->m;
	uint32_t dpu = chance(&c->rng, 90) ? rn(&c->rng, m->nr_dpus) :
		       m->nr_dpus + rn(&c->rng, 1000);
	bool wram = chance(&c->rng, 40);
	uint64_t size = wram ? m->wram : m->mram;

	k->tm_moff = (wram ? DPUSIM_MMAP_WRAM(dpu) : DPUSIM_MMAP_MRAM(dpu)) +
		     PAGE * rn(&c->rng, size / PAGE + 2);
	k->tm_mlen = PAGE * (1 + rn(&c->rng, chance(&c->rng, 80) ? 4 : size / PAGE + 1));
	if (chance(&c->rng, 5))
		k->tm_moff += 1 + rn(&c->rng, PAGE - 1);
	k->tm_mflags = chance(&c->rng, 85) ? MAP_SHARED : MAP_PRIVATE;
	k->tm_mprot = chance(&c->rng, 50) ? PROT_READ : PROT_READ | PROT_WRITE;
	if (chance(&c->rng, 8)) {
		/* a worker file's window: not a rank file's offset */
		k->tm_moff = DPUSIM_MMAP_WINDOW;
		k->tm_mlen = chance(&c->rng, 50) ? DPUSIM_WINDOW_SIZE :
			     PAGE * (1 + rn(&c->rng, 4));
	} else if (chance(&c->rng, 15)) {
		/* a stream's memory: mostly one of ours */
		uint32_t own[DPUSIM_STREAM_MAX], nown = 0, i;
		uint64_t pages = 4;

		for (i = 0; i < DPUSIM_STREAM_MAX; i++)
			if (ms_mine(c, i))
				own[nown++] = i;
		k->st_map = true;
		k->st_id = nown && chance(&c->rng, 80) ? own[rn(&c->rng, nown)] :
			   rn(&c->rng, DPUSIM_STREAM_MAX + 4);
		if (ms_mine(c, k->st_id))
			pages = (c->m->st[k->st_id].mem_size + PAGE - 1) / PAGE;
		k->tm_moff = DPUSIM_MMAP_STREAM(k->st_id);
		if (chance(&c->rng, 30))
			k->tm_moff += PAGE * rn(&c->rng, pages + 1);
		k->tm_mlen = PAGE * (1 + rn(&c->rng, chance(&c->rng, 70) ? 4 : pages + 1));
		if (chance(&c->rng, 5))
			k->tm_moff |= DPUSIM_MMAP_WRAM_BIT;	/* no stream's */
	} else if (chance(&c->rng, 10)) {
		/* the status page: read only, one page, shared */
		k->status_map = true;
		k->tm_moff = DPUSIM_MMAP_STATUS;
		if (chance(&c->rng, 10))
			k->tm_moff += chance(&c->rng, 50) ? PAGE : 1 + rn(&c->rng, PAGE - 1);
		k->tm_mlen = PAGE * (chance(&c->rng, 85) ? 1 : 2 + rn(&c->rng, 3));
		k->tm_mprot = chance(&c->rng, 80) ? PROT_READ :
			      chance(&c->rng, 50) ? PROT_READ | PROT_WRITE :
			      PROT_READ | PROT_EXEC;
	}
}

static void predict_rank_mmap(struct ctx *c, struct fz_call *k)
{
	const struct model *m = c->m;
	uint64_t dpu = k->tm_moff >> DPUSIM_MMAP_DPU_SHIFT;
	uint64_t inner = k->tm_moff & (DPUSIM_MMAP_WRAM_BIT - 1);
	uint64_t size = k->tm_moff & DPUSIM_MMAP_WRAM_BIT ? m->wram : m->mram;
	const struct mstream *e = ms_mine(c, k->st_id);

	es_add(&k->amb, ENOMEM);
	if (k->status_map) {
		if (k->tm_mflags != MAP_SHARED || k->tm_moff != DPUSIM_MMAP_STATUS ||
		    k->tm_mlen != PAGE)
			es_add(&k->must, EINVAL);
		else if (k->tm_mprot & (PROT_WRITE | PROT_EXEC))
			es_add(&k->must, EPERM);
		return;
	}
	if (k->st_map && !(k->tm_moff & DPUSIM_MMAP_WRAM_BIT) &&
	    k->st_id < DPUSIM_STREAM_MAX) {
		size = e ? (e->mem_size + PAGE - 1) / PAGE * PAGE : 0;
		if (k->tm_moff % PAGE || k->tm_mflags != MAP_SHARED ||
		    inner > size || k->tm_mlen > size - inner)
			es_add(e || c->exact ? &k->must : &k->amb, EINVAL);
		else if (k->tm_mprot & PROT_WRITE)
			es_add(&k->must, EPERM);	/* read only */
		/* another ctx's stream: it may exist, and be mapped */
		if (!e && !c->exact && k->tm_mprot & PROT_WRITE)
			es_add(&k->amb, EPERM);
		return;
	}
	if (k->tm_moff % PAGE || k->tm_mflags != MAP_SHARED || dpu >= m->nr_dpus ||
	    inner > size || k->tm_mlen > size - inner ||
	    k->tm_moff == DPUSIM_MMAP_WINDOW)
		es_add(&k->must, EINVAL);
}

static void exec_rank_mmap(struct ctx *c, struct fz_call *k)
{
	const struct mstream *e;
	volatile uint8_t *p = mmap(NULL, k->tm_mlen, k->tm_mprot, k->tm_mflags,
				   c->fd, k->tm_moff);

	k->ret = p == MAP_FAILED ? -1 : 0;
	k->err = p == MAP_FAILED ? errno : 0;
	if (p == MAP_FAILED)
		return;
	if (k->status_map) {
		const struct dpusim_rank_status *st = (const void *)p;
		uint64_t done = __atomic_load_n(&st->async_done, __ATOMIC_ACQUIRE);

		/* a job counts as queued before it can count as done */
		if (done > __atomic_load_n(&st->async_queued, __ATOMIC_ACQUIRE))
			violation(c, k, "status page: %llu jobs done of %llu queued",
				  (unsigned long long)done,
				  (unsigned long long)st->async_queued);
		if (!mprotect((void *)p, PAGE, PROT_READ | PROT_WRITE))
			violation(c, k, "status page: mprotect() made it writable");
		munmap((void *)p, k->tm_mlen);
		return;
	}
	/* a stream is read only, after mprotect() too */
	if (k->st_map && !mprotect((void *)p, k->tm_mlen, PROT_READ | PROT_WRITE))
		violation(c, k, "stream %u: mprotect() made it writable", k->st_id);
	/* a read allocates a zero page at most: the model does not change */
	if (!k->st_map)
		(void)p[rn(&c->rng, k->tm_mlen)];
	else if ((e = ms_mine(c, k->st_id)) &&
		 (e->down || !(k->tm_moff & (DPUSIM_MMAP_WRAM_BIT - 1))))
		/* streams: only what is resident (stream_resident_bytes) */
		(void)p[rn(&c->rng, e->down ? k->tm_mlen : PAGE)];
	munmap((void *)p, k->tm_mlen);
}

/* ------------------------------------- DPUSIM_XFER_STREAM (the rank file) */

/*
 * Moves of a token by a host thread acting as a core: DPUSIM_IOCTL_XFER
 * with DPUSIM_XFER_STREAM, synchronous or not.  Mostly a stream of this
 * ctx, by the core that has it open, at its cursor: down (a stream of
 * data, or the tokens an empty one was given) into blocks of the
 * destination arena, or up (an empty stream's next token) from g_src;
 * then, or instead, the defects the header gives an errno.  The model
 * follows the cursor, an empty stream's tokens and the first UP_BYTES of
 * its memory (the pages resident too: stream_resident_bytes in the exact
 * phases); a move down must give the bytes the model knows, a move up
 * must write what the blocks hold (read back through a mapping of the
 * stream's resident pages), a failed move changes nothing.
 */

/* See predict_xfer(): the stream, @mem its size; false if not reached */
static bool predict_stream_header(struct ctx *c, struct fz_call *k,
				  uint64_t *mem)
{
	const struct dpusim_xfer *x = &k->f.x;
	const struct mstream *e = ms_mine(c, x->stream);

	if (!e) {
		if ((c->exact && !ms_known(c->m, x->stream)) ||
		    x->stream >= DPUSIM_STREAM_MAX) {
			es_add(&k->must, ENOENT);
		} else if (c->forked && x->flags & DPUSIM_XFER_STREAM_BUF) {
			/*
			 * A fork's child, on a stream of its parent's ctx: no
			 * buffer of the stream is the child's, the move fails
			 * wherever it stops (EPERM: a buffer the parent
			 * registered, after every other check of the move)
			 */
			static const int any[] = {
				ENOENT, EINVAL, ENODATA, ENOSPC, EOVERFLOW, EFAULT,
				EPERM, 0,
			};
			int i;

			for (i = 0; any[i]; i++)
				es_add(&k->must, any[i]);
			es_add(&k->may, ENOMEM);
			es_add(&k->may, EAGAIN);
		} else if (es_empty(&k->must)) {
			/* not generated: another ctx's stream without a defect */
			es_add(&k->amb, ENOENT);
			es_add(&k->amb, EINVAL);
			es_add(&k->amb, ENODATA);
			es_add(&k->amb, EOVERFLOW);
			es_add(&k->amb, EFAULT);
			es_add(&k->amb, EPERM);
		}
		return false;
	}
	if (x->flags & (DPUSIM_XFER_WRAM | DPUSIM_XFER_NO_LENGTH_CHECK) ||
	    x->nr_dpus != 1)
		es_add(&k->must, EINVAL);
	*mem = e->mem_size;
	return true;
}

/* The token at the cursor, as the core dv[0] may move it. */
static void predict_stream_state(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_xfer *x = &k->f.x;
	const struct mstream *e = ms_mine(c, x->stream);
	uint64_t n, used;

	if (e->core != (int32_t)k->dv[0].dpu) {
		es_add(&k->must, EINVAL);
		return;
	}
	if (x->flags & DPUSIM_XFER_FROM_DPU) {
		if (e->cursor == e->nr_tokens)
			es_add(&k->must, ENODATA);
		else if (x->offset != ms_offset(e, e->cursor) + DPUSIM_STREAM_HEADER ||
			 x->length != (uint64_t)ms_token(e, e->cursor) + DPUSIM_STREAM_HEADER)
			es_add(&k->must, EINVAL);
		return;
	}
	/* up: a stream created empty, at the cursor's header, n + 2 headers */
	if (e->down || x->offset != ms_offset(e, e->cursor) ||
	    x->length < 3 * DPUSIM_STREAM_HEADER || x->length % 8) {
		es_add(&k->must, EINVAL);
		return;
	}
	n = x->length - 2 * DPUSIM_STREAM_HEADER;
	used = x->offset - (uint64_t)e->cursor * DPUSIM_STREAM_HEADER;
	if (e->cursor >= e->max_tokens || used + n > e->data_size)
		es_add(&k->must, ENOSPC);
}

/* Cut @len bytes into @nb blocks (some maybe empty) at @bv. */
static void cut_blocks(struct ctx *c, struct dpusim_block *bv, uint32_t nb,
		       uint64_t len)
{
	uint64_t left = len, cut;
	uint32_t j;

	for (j = 0; j < nb; j++) {
		cut = j + 1 == nb ? left : chance(&c->rng, 15) ? 0 :
		      rn(&c->rng, left + 1);
		left -= cut;
		bv[j].length = cut;
	}
}

static void gen_stream_xfer(struct ctx *c, struct fz_call *k)
{
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_STREAM, .nr_dpus = 1,
	};
	struct model *m = c->m;
	uint32_t own[DPUSIM_STREAM_MAX], nown = 0, i, nb;
	uint32_t par[DPUSIM_STREAM_MAX], npar = 0;
	const struct mstream *e = NULL, *g;
	unsigned int r = rn(&c->rng, 100);
	bool down, need_defect = false, more = false, sb;
	uint64_t pos, n, room;

	for (i = 0; i < DPUSIM_STREAM_MAX; i++)
		if (ms_mine(c, i))
			own[nown++] = i;
	/* a fork's child: often one of its parent's open with a buffer */
	for (i = 0; c->forked && r >= 70 && i < DPUSIM_STREAM_MAX; i++)
		if (ms_known(m, i) && !ms_mine(c, i) && m->st[i].buf_len &&
		    m->st[i].core >= 0)
			par[npar++] = i;
	if (npar) {
		x.stream = par[rn(&c->rng, npar)];
		need_defect = true;	/* not its own */
	} else if (r < 85 && nown) {
		x.stream = own[rn(&c->rng, nown)];
		e = &m->st[x.stream];
		/* often one open with a registered buffer, if any */
		n = 0;
		if (chance(&c->rng, 40))
			for (i = 0; i < nown; i++)
				if (m->st[own[i]].buf_len && m->st[own[i]].core >= 0)
					own[n++] = own[i];
		if (n) {
			x.stream = own[rn(&c->rng, n)];
			e = &m->st[x.stream];
		}
	} else if (r < 91 && c->exact && m->nst < DPUSIM_STREAM_MAX) {
		x.stream = m->nst + rn(&c->rng, DPUSIM_STREAM_MAX - m->nst);
	} else if (r < 97) {
		x.stream = DPUSIM_STREAM_MAX +
			   rn(&c->rng, chance(&c->rng, 50) ? 16 : 1 << 30);
	} else {
		x.stream = rn(&c->rng, DPUSIM_STREAM_MAX);
		e = ms_mine(c, x.stream);
		need_defect = !e && (!c->exact || ms_known(m, x.stream));
	}
	/*
	 * @g: the stream the move follows.  A fork's child names a stream
	 * of its parent's ctx with DPUSIM_XFER_STREAM_BUF and no other
	 * defect, as the parent would move it (its model as at the fork):
	 * that must fail.  Else, mostly with the registered buffer, if any.
	 */
	g = e;
	if (need_defect && c->forked && ms_known(m, x.stream) &&
	    (npar || chance(&c->rng, 50))) {
		g = &m->st[x.stream];
		need_defect = false;
		sb = true;
	} else {
		sb = chance(&c->rng, g && g->buf_len ? 60 : 3);
	}
	c->dv[0] = (struct dpusim_xfer_dpu){
		.dpu = g && g->core >= 0 && chance(&c->rng, 90) ? (uint32_t)g->core :
		       rn(&c->rng, m->nr_dpus),
	};
	/* down: a stream of data, or an empty one's tokens; up: its next one */
	down = !g || g->down || chance(&c->rng, 30);
	if (!down) {
		n = 8 * (1 + rn(&c->rng, chance(&c->rng, 80) ? 8 : 64));
		x.offset = ms_offset(g, g->cursor);
		x.length = n + 2 * DPUSIM_STREAM_HEADER;
		/* a token the model could not follow: read one instead */
		if (g->cursor >= UP_TOKENS || x.offset + x.length > UP_BYTES)
			down = true;
	}
	if (down) {
		x.flags |= DPUSIM_XFER_FROM_DPU;
		if (g) {
			x.offset = ms_offset(g, g->cursor) + DPUSIM_STREAM_HEADER;
			x.length = ms_token(g, g->cursor) + DPUSIM_STREAM_HEADER;
		} else {
			x.offset = 8 * rn(&c->rng, 32);
			x.length = 8 * (1 + rn(&c->rng, 8));
		}
		if (g && g->down && chance(&c->rng, 4)) {	/* up, on data */
			x.flags &= ~DPUSIM_XFER_FROM_DPU;
			x.offset -= DPUSIM_STREAM_HEADER;
			x.length = 24;
		}
	}
	if (chance(&c->rng, c->async_pct))
		x.flags |= DPUSIM_XFER_ASYNC;
	if (sb)
		x.flags |= DPUSIM_XFER_STREAM_BUF;
	switch (rn(&c->rng, need_defect ? 2 : 36)) {
	case 0: x.flags |= 1u << (5 + rn(&c->rng, 27)); break;
	case 1: x.__reserved = 1 + rn(&c->rng, 0xfffffffe); break;
	case 2: x.flags |= DPUSIM_XFER_WRAM; break;
	case 3: x.flags |= DPUSIM_XFER_NO_LENGTH_CHECK; break;
	case 4:	/* no DPU, or a second one */
		x.nr_dpus = chance(&c->rng, 50) ? 0 : 2;
		c->dv[1] = (struct dpusim_xfer_dpu){ .dpu = (c->dv[0].dpu + 1) % m->nr_dpus };
		break;
	case 5:
		c->dv[0].dpu = chance(&c->rng, 50) ? 0xffffffffu :
			       m->nr_dpus + rn(&c->rng, 1000);
		break;
	case 6: c->dv[0].dpu = (c->dv[0].dpu + 1 + rn(&c->rng, m->nr_dpus - 1)) %
			       m->nr_dpus; break;
	case 7:
		x.offset += chance(&c->rng, 50) ? 8 : -(uint64_t)(1 + rn(&c->rng, 8));
		break;
	case 8: x.length += chance(&c->rng, 50) ? 8 : 1 + rn(&c->rng, 8); break;
	case 9:	/* past the stream's memory, or wrapping */
		if (chance(&c->rng, 50) && g)
			x.offset = g->mem_size - rn(&c->rng, 8);
		else
			x.offset = ~0ULL - rn(&c->rng, 16);
		break;
	case 10: x.length = chance(&c->rng, 50) ? 8 : 0; break;
	default: break;
	}
	/*
	 * the blocks: in the destination arena (down) or g_src (up); with
	 * the registered buffer, offsets in it one after the other (mostly
	 * all inside it)
	 */
	nb = chance(&c->rng, 70) ? 1 : 1 + rn(&c->rng, 3);
	cut_blocks(c, c->bv, nb, x.length);
	room = g && g->buf_len ? g->buf_len : SBUF_LEN;
	if (sb)
		pos = x.length <= room && chance(&c->rng, 90) ?
		      rn(&c->rng, room - x.length + 1) : rn(&c->rng, room + 64);
	else
		pos = 8 * rn(&c->rng, 512);
	for (i = 0; i < nb; i++) {
		struct dpusim_block *b = &c->bv[i];

		if (sb) {
			b->addr = pos;
			pos += b->length + (chance(&c->rng, 10) ? rn(&c->rng, 16) : 0);
		} else if (!(x.flags & DPUSIM_XFER_FROM_DPU)) {
			b->addr = (uintptr_t)g_src +
				  (b->length < SRC_LEN ? rn(&c->rng, SRC_LEN - b->length) : 0);
		} else if (pos + b->length <= DST_LEN) {
			b->addr = (uintptr_t)c->dst + pos;
			pos += b->length + rn(&c->rng, 64);
		} else {
			b->addr = (uintptr_t)c->ro;	/* read-only: EFAULT */
		}
	}
	switch (rn(&c->rng, need_defect ? 1 : 30)) {
	case 1:
		if (!sb) {
			bad_block(c, x.flags & DPUSIM_XFER_FROM_DPU,
				  &c->bv[rn(&c->rng, nb)]);
			break;
		}
		/* outside the buffer: across its end (or just at it), past it */
		i = rn(&c->rng, nb);
		c->bv[i].addr = chance(&c->rng, 50) ?
				room - rn(&c->rng, c->bv[i].length + 1) :
				room + rn(&c->rng, 1 << 20);
		break;
	case 2: c->bv[nb - 1].length += 1 + rn(&c->rng, 8); break;	/* sum != length */
	case 3: more = true; break;	/* the DPU's count: past the list */
	default: break;
	}
	c->dv[0].nr_blocks = nb + more;
	x.nr_blocks = nb;
	if (x.nr_dpus == 2)
		c->dv[1].nr_blocks = 0;
	x.dpus = place_list(c, c->dv, x.nr_dpus * sizeof(c->dv[0]), DESC_DPUS,
			    RO_DPUS, 1024);
	x.blocks = place_list(c, c->bv, nb * sizeof(c->bv[0]), DESC_BLOCKS,
			      RO_BLOCKS, RO_LEN - RO_BLOCKS);
	k->dv = c->dv;
	k->bv = c->bv;
	c->fill = rnd(&c->rng);
	memset(c->dst, c->fill, DST_LEN);
	/* the registered buffers: the fill (down), known bytes (up) */
	if (x.flags & DPUSIM_XFER_STREAM_BUF) {
		if (x.flags & DPUSIM_XFER_FROM_DPU)
			memset(c->sbuf, c->fill, SBUF_LEN);
		else
			memcpy(c->sbuf, g_src + PAGE * rn(&c->rng, (SRC_LEN - SBUF_LEN) / PAGE + 1),
			       SBUF_LEN);
	}
	place_struct(c, k, &x);
}

/*
 * The resident pages (of the first UP_BYTES) of empty stream @id, read
 * through a mapping of it, against the model's bytes (queued moves are
 * waited for first).  0, -1 (no verdict: the fd is gone) or 1 with @why.
 */
static int up_compare(struct ctx *c, uint32_t id, char *why, size_t n)
{
	const struct mstream *e = &c->m->st[id];
	uint64_t len = (e->mem_size + PAGE - 1) / PAGE * PAGE, off, i;
	const uint8_t *p;
	int err = raw_sync(c->fd), p_i;

	if (err == EBADF && c->may_ebadf)
		return -1;
	if (err) {
		snprintf(why, n, "SYNC before reading stream %u: %s", id, ename(err));
		return 1;
	}
	if (len > UP_BYTES)
		len = UP_BYTES;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, c->fd, DPUSIM_MMAP_STREAM(id));
	if (p == MAP_FAILED) {
		if (errno == EBADF && c->may_ebadf)
			return -1;
		snprintf(why, n, "mmap of stream %u: %s", id, ename(errno));
		return 1;
	}
	why[0] = 0;
	for (p_i = 0; (uint64_t)p_i * PAGE < len && !why[0]; p_i++) {
		if (!(e->up->pages & (1u << p_i)))
			continue;	/* a hole: reading it would allocate it */
		off = (uint64_t)p_i * PAGE;
		for (i = off; i < off + PAGE && i < e->mem_size; i++)
			if (p[i] != e->up->bytes[i]) {
				snprintf(why, n, "stream %u: byte %llu is %#x, the model says %#x (%u tokens, cursor %u)",
					 id, (unsigned long long)i, p[i],
					 e->up->bytes[i], e->nr_tokens, e->cursor);
				break;
			}
	}
	munmap((void *)p, len);
	return why[0] ? 1 : 0;
}

/* A move up of n = @len - 16 bytes at @off, from @src: the model takes it. */
static void up_apply(struct model *m, bool exact, struct mstream *e,
		     uint64_t off, uint64_t len, const uint8_t *src)
{
	uint32_t p;

	memcpy(e->up->bytes + off, src, len);
	e->up->sizes[e->cursor] = len - 2 * DPUSIM_STREAM_HEADER;
	e->nr_tokens = e->cursor + 1;
	e->cursor++;
	for (p = off / PAGE; p <= (off + len - 1) / PAGE; p++) {
		if (e->up->pages & (1u << p))
			continue;
		e->up->pages |= 1u << p;
		if (exact)
			m->st_res += PAGE;
	}
}

/*
 * The token at the cursor of @e and the header after it, into @exp;
 * @known[i] says whether the model knows byte i.
 */
static void token_expect(const struct mstream *e, uint8_t *exp, uint8_t *known)
{
	uint32_t cur = e->cursor, size = ms_token(e, cur);
	uint32_t h[2] = { size, ms_token(e, cur + 1) };
	uint64_t off = ms_offset(e, cur) + DPUSIM_STREAM_HEADER;

	if (!e->down) {
		memcpy(exp, e->up->bytes + off, size + DPUSIM_STREAM_HEADER);
		memset(known, 1, size + DPUSIM_STREAM_HEADER);
		return;
	}
	memset(known, !!e->src, size);
	if (e->src)
		memcpy(exp, e->src + (uint64_t)cur * e->token_size, size);
	memcpy(exp + size, h, sizeof(h));
	memset(known + size, 1, sizeof(h));
}

/*
 * After a move down: the blocks hold the token, nothing else changed (of
 * the destination arena, or of the ctx's registered buffers with
 * DPUSIM_XFER_STREAM_BUF: blocks at offsets in the stream's, which may
 * overlap: the last one written wins).
 */
static void check_stream_dst(struct ctx *c, struct fz_call *k,
			     const struct mstream *e)
{
	const struct dpusim_xfer *x = &k->f.x;
	bool sb = x->flags & DPUSIM_XFER_STREAM_BUF;
	uint8_t *exp = c->vbuf, *known = c->vbuf + DST_LEN;
	uint8_t *arena = sb ? c->sbuf : c->dst;
	uint64_t alen = sb ? SBUF_LEN : DST_LEN, base = sb ? e->buf : 0;
	uint64_t i, a, at = 0;
	uint32_t j;

	if (sb && (e->buf < (uintptr_t)c->sbuf ||
		   e->buf + e->buf_len > (uintptr_t)c->sbuf + SBUF_LEN)) {
		violation(c, k, "fuzzer: stream %u's buffer %#llx is not in the ctx's area",
			  x->stream, (unsigned long long)e->buf);
		return;
	}
	token_expect(e, exp, known);
	memset(c->dst_cnt, 0, alen);	/* 1: the model knows the byte, 2: not */
	for (j = 0; j < x->nr_blocks; j++) {
		const struct dpusim_block *b = &k->bv[j];

		for (i = 0; i < b->length; i++, at++) {
			a = base + b->addr + i - (uintptr_t)arena;
			c->dst_cnt[a] = known[at] ? 1 : 2;
			c->dst_exp[a] = exp[at];
		}
	}
	for (i = 0; i < alen; i++) {
		if (!c->dst_cnt[i] && arena[i] != c->fill) {
			violation(c, k, "STREAM_XFER down wrote host byte +%llu outside its blocks%s",
				  (unsigned long long)i, sb ? " (registered buffers)" : "");
			return;
		}
		if (c->dst_cnt[i] == 1 && arena[i] != c->dst_exp[i]) {
			violation(c, k, "STREAM_XFER down of token %u of stream %u: host byte +%llu%s is %#x, the model says %#x",
				  e->cursor, x->stream, (unsigned long long)i,
				  sb ? " (registered buffers)" : "", arena[i],
				  c->dst_exp[i]);
			return;
		}
	}
	if (sb)
		check_dst(c, k, false);	/* the destination arena: untouched */
}

/* After a failed move down with DPUSIM_XFER_STREAM_BUF: no byte written. */
static void check_sbuf_untouched(struct ctx *c, struct fz_call *k)
{
	uint64_t i;

	for (i = 0; i < SBUF_LEN; i++)
		if (c->sbuf[i] != c->fill) {
			violation(c, k, "failed STREAM_XFER down changed the registered buffers at +%llu (%#x, was %#x)",
				  (unsigned long long)i, c->sbuf[i], c->fill);
			return;
		}
}

static void commit_stream_xfer(struct ctx *c, struct fz_call *k)
{
	const struct dpusim_xfer *x = &k->f.x;
	bool from = x->flags & DPUSIM_XFER_FROM_DPU;
	bool sb = x->flags & DPUSIM_XFER_STREAM_BUF;
	struct mstream *e = ms_mine(c, x->stream);
	uint8_t *src = c->vbuf;
	char why[320];
	uint64_t at = 0;
	uint32_t j;
	int err;

	if (k->ret) {
		if (from)
			check_dst(c, k, false);
		if (from && sb)
			check_sbuf_untouched(c, k);
		commit_none(c, k);
		if (!e || k->err == EBADF)
			return;
		/* nothing moved: the cursor, the stream's bytes */
		if (stream_probe(c, x->stream, why, sizeof(why)) == 1)
			violation(c, k, "failed STREAM_XFER (%s) of stream %u: %s",
				  ename(k->err), x->stream, why);
		if (!e->down && chance(&c->rng, 30) &&
		    up_compare(c, x->stream, why, sizeof(why)) == 1)
			violation(c, k, "failed STREAM_XFER (%s): %s", ename(k->err), why);
		return;
	}
	if (!e)
		return;		/* not ours: run_call reported it if it must fail */
	if (x->flags & DPUSIM_XFER_ASYNC) {
		err = raw_sync(c->fd);
		if (err == EBADF && c->may_ebadf)
			return;
		if (err)
			violation(c, k, "SYNC after an async STREAM_XFER: %s", ename(err));
	}
	if (from) {
		check_stream_dst(c, k, e);
		e->cursor++;
		st_add(&ST->xs_down, 1);
		if (sb)
			st_add(&ST->sb_down, 1);
		return;
	}
	/* the blocks' bytes: user addresses, or offsets in the buffer */
	if (sb && !e->buf_len)
		return;		/* it has none: run_call reported the success */
	for (j = 0; j < x->nr_blocks; j++) {
		memcpy(src + at, (const void *)(uintptr_t)((sb ? e->buf : 0) +
							   k->bv[j].addr),
		       k->bv[j].length);
		at += k->bv[j].length;
	}
	up_apply(c->m, c->exact, e, x->offset, x->length, src);
	st_add(&ST->xs_up, 1);
	if (sb)
		st_add(&ST->sb_up, 1);
	if (chance(&c->rng, 30) && up_compare(c, x->stream, why, sizeof(why)) == 1)
		violation(c, k, "after STREAM_XFER up: %s", why);
}

/* ------------------------------------- DPU programs moving streams */

/*
 * A program session's worker is the core of some of its ctx's streams:
 * before the fork, up to PS_MAX of them are copied into a shared area
 * (their model, and an empty one's tokens and bytes), the child calls
 * the worker file's DPUSIM_IOCTL_WORKER_STREAM_OPEN, _CLOSE, _SEEK, _MOVE
 * and _WAIT on them as the DPU it holds (and as none, between claims),
 * with the defects the header gives an errno, and keeps the area's model
 * exact; afterwards the parent takes the area back into its model and
 * checks it (the holder and cursor, an empty stream's bytes through a
 * mapping).  Nobody else moves a ctx's streams, and the ctx waits for its
 * session: the child's model is exact in every phase.
 *
 * Moves down write the held DPU's memory: only a DPU the model does not
 * track, inside the areas (PS_WRAM bytes of WRAM, PS_MRAM of MRAM), and
 * the child reads the bytes back through a mapping of the DPU.  Moves up
 * read it anywhere in those ranges (written first, on an untracked DPU).
 */
#define PS_MAX		4
#define PS_WRAM		(16UL << 10)
#define PS_MRAM		(64UL << 10)
#define PS_BUF		(PS_WRAM + PS_MRAM)

struct prog_streams {
	uint32_t n, id[PS_MAX];
	struct mstream e[PS_MAX];
	struct upstream up[PS_MAX];
	uint32_t nst;		/* exact: no stream has an id >= nst */
	bool exact;
	uint32_t ntracked, tracked[NTRACK];
	uint32_t wram_size;
	uint64_t mram_size;
};

static struct prog_streams *ps_prepare(struct ctx *c)
{
	struct prog_streams *ps = mmap(NULL, sizeof(*ps), PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint32_t own[DPUSIM_STREAM_MAX], nown = 0, i, j, t;
	struct model *m = c->m;

	if (ps == MAP_FAILED)
		return NULL;
	for (i = 0; i < DPUSIM_STREAM_MAX; i++)
		if (ms_mine(c, i))
			own[nown++] = i;
	for (i = 0; i < nown && i < PS_MAX; i++) {
		j = i + rn(&c->rng, nown - i);
		t = own[i], own[i] = own[j], own[j] = t;
		ps->id[i] = own[i];
		ps->e[i] = m->st[own[i]];
		if (!ps->e[i].down) {
			ps->up[i] = *m->st[own[i]].up;
			ps->e[i].up = &ps->up[i];
		}
	}
	ps->n = i;
	ps->nst = m->nst;
	ps->exact = c->exact;
	ps->ntracked = m->ntracked;
	memcpy(ps->tracked, m->tracked, sizeof(ps->tracked));
	ps->wram_size = m->wram;
	ps->mram_size = m->mram;
	return ps;
}

static void ps_free(struct prog_streams *ps)
{
	munmap(ps, sizeof(*ps));
}

/*
 * The session is over: its streams' model comes back (@exited: the child
 * ran to its end; else what it did last is unknown, the streams are left
 * alone from now on).
 */
static void ps_merge(struct ctx *c, struct prog_streams *ps, bool exited)
{
	struct model *m = c->m;
	struct mstream *e;
	struct upstream *up;
	uint32_t i;

	for (i = 0; i < ps->n; i++) {
		e = &m->st[ps->id[i]];
		if (!exited) {
			__atomic_store_n(&e->owner, OWNER_LOST, __ATOMIC_RELEASE);
			continue;
		}
		up = e->up;
		if (up && c->exact)
			m->st_res += (uint64_t)PAGE *
				     (__builtin_popcount(ps->up[i].pages) -
				      __builtin_popcount(up->pages));
		*e = ps->e[i];
		e->up = up;
		if (up)
			*up = ps->up[i];
	}
}

/* After the session: its streams as modelled (0, or the violations). */
static int ps_verify(struct ctx *c, struct fz_call *k, struct prog_streams *ps)
{
	char why[320];
	uint32_t i;
	int bad = 0;

	for (i = 0; i < ps->n; i++) {
		if (stream_probe(c, ps->id[i], why, sizeof(why)) == 1) {
			violation(c, k, "program: stream %u after the session: %s",
				  ps->id[i], why);
			bad++;
		}
		if (!ps->e[i].down &&
		    up_compare(c, ps->id[i], why, sizeof(why)) == 1) {
			violation(c, k, "program: after the session: %s", why);
			bad++;
		}
	}
	return bad;
}

/* The child's state for the DPU it holds: its memories mapped */
struct ps_held {
	int32_t dpu;		/* -1: none held */
	bool tracked;		/* the model tracks its memory: no write */
	volatile uint8_t *wram, *mram;	/* PS_WRAM, PS_MRAM of them */
};

/* The child's view of a struct it passes: where, what size, its defect */
struct ws_arg {
	void *arg;
	uint32_t size;
	int sdef;		/* errno of a struct-level defect, or 0 */
};

/*
 * Place @ks bytes of @fields (@min: the first version's size): exact
 * mostly, else too short, an older version's (zero-extended by the
 * kernel), longer (a zero tail or not), unmapped.
 */
static void ws_place(struct rng *r, const void *fields, size_t ks, size_t min,
		     struct ws_arg *a)
{
	static uint64_t buf[64];
	uint8_t *b = (uint8_t *)buf;
	uint32_t size = ks, tail = 0;

	a->sdef = 0;
	memset(buf, 0, sizeof(buf));
	switch (rn(r, 40)) {
	case 0:	/* under the first version */
		size = rn(r, min);
		a->sdef = EINVAL;
		break;
	case 4: case 5: case 6:
		size = min + rn(r, ks - min + 1);
		break;
	case 1:
		tail = 8 * (1 + rn(r, 4));
		b[ks + rn(r, tail)] = 1 + rn(r, 255);
		a->sdef = E2BIG;
		break;
	case 2:
		tail = 8 * (1 + rn(r, 4));	/* zeros: as good as none */
		break;
	case 3:
		a->arg = chance(r, 50) ? NULL : (void *)(uintptr_t)(8 + rn(r, 4096));
		a->size = ks;
		a->sdef = EFAULT;
		return;
	default:
		break;
	}
	if (tail)
		size = ks + tail;
	memcpy(b, fields, ks);
	memcpy(b, &size, sizeof(size));
	a->arg = b;
	a->size = size;
}

/* A worker stream call whose result the child checks: 0 or the errno. */
static int ws_ioctl(int w, unsigned long cmd, const struct ws_arg *a)
{
	int ret = ioctl(w, cmd, a->arg);

	st_add(&ST->ws_calls, 1);
	if (!ret)
		st_add(&ST->ws_ok, 1);
	return ret ? errno : 0;
}

/* The errno is one of @must (or 0 if @must is empty); else say so. */
static bool ws_verdict(const char *what, int err, const struct ws_arg *a,
		       const eset *must, const char *fields)
{
	char m[128];
	eset one = {};

	if (a->sdef) {
		es_add(&one, a->sdef);
		must = &one;
	}
	if (es_empty(must) ? !err : es_has(must, err))
		return true;
	es_fmt(must, m, sizeof(m));
	/* not through stdio: its buffer is a copy of the parent's */
	dprintf(STDOUT_FILENO, "# program worker: %s (%s; size %u%s): %s, must %s\n",
		what, fields, a->size, a->sdef ? ", struct defect" : "",
		ename(err), es_empty(must) ? "succeed" : m);
	return false;
}

/*
 * A stream of the session (-1 .. n - 1: -1 an id no stream has); with
 * @core >= 0, mostly one that core has open (or, -2, one nobody has).
 */
static int ws_pick(struct rng *r, const struct prog_streams *ps, uint32_t *id,
		   int32_t core)
{
	int j = rn(r, ps->n + 1), k, cand[PS_MAX], nc = 0;

	for (k = 0; k < (int)ps->n && core != -1; k++)
		if (ps->e[k].core == (core == -2 ? -1 : core))
			cand[nc++] = k;
	if (nc && chance(r, 70))
		j = cand[rn(r, nc)];

	if (j == (int)ps->n || chance(r, 5)) {
		*id = ps->exact && ps->nst < DPUSIM_STREAM_MAX && chance(r, 70) ?
		      ps->nst + rn(r, DPUSIM_STREAM_MAX - ps->nst) :
		      DPUSIM_STREAM_MAX + rn(r, chance(r, 50) ? 16 : 1u << 31);
		return -1;
	}
	*id = ps->id[j];
	return j;
}

/* The core a call names: mostly the DPU held, else another, or none. */
static uint32_t ws_core(struct rng *r, const struct ps_held *h, uint32_t nr)
{
	unsigned int v = rn(r, 100);

	if (h->dpu >= 0 && v < 85)
		return h->dpu;
	if (v < 96)
		return rn(r, nr);
	return chance(r, 50) ? 0xffffffffu : nr + rn(r, 1000);
}

/* WORKER_STREAM_OPEN, _CLOSE or _SEEK: 0 or the step failed. */
static int ws_cmd(int w, struct rng *r, struct prog_streams *ps,
		  const struct ps_held *h, uint32_t nr)
{
	static const unsigned long cmds[] = {
		DPUSIM_IOCTL_WORKER_STREAM_OPEN, DPUSIM_IOCTL_WORKER_STREAM_CLOSE,
		DPUSIM_IOCTL_WORKER_STREAM_SEEK,
	};
	static const char *const names[] = { "OPEN", "CLOSE", "SEEK" };
	int which = rn(r, 3), j;
	bool open, seek;
	struct dpusim_stream_cmd s = { .size = sizeof(s) }, o, in = {};
	struct mstream *e;
	char what[64], fields[192], why[320];
	struct ws_arg a;
	eset must = {};
	int64_t cur;
	int err;

	/* a DPU held mostly opens a free stream, or moves its own */
	if (h->dpu >= 0 && chance(r, 40))
		which = 0;
	open = which == 0;
	seek = which == 2;
	j = ws_pick(r, ps, &s.id, h->dpu < 0 ? -1 : open ? -2 : h->dpu);
	e = j >= 0 ? &ps->e[j] : NULL;
	s.core = e && e->core >= 0 && !open && chance(r, 30) ? (uint32_t)e->core :
		 ws_core(r, h, nr);
	if (seek)
		s.delta = chance(r, 10) ? (chance(r, 50) ? INT_MIN : INT_MAX) :
			  (int32_t)rn(r, 9) - 4;
	switch (rn(r, 20)) {
	case 0: s.flags = 1u << rn(r, 32); break;
	case 1: if (!seek) s.delta = chance(r, 50) ? 1 + rn(r, 100) : INT_MIN; break;
	case 2:	/* out fields: garbage in */
		s.cursor = rnd(r);
		s.offset = rnd(r);
		s.prev = rnd(r);
		break;
	case 3:	/* a token buffer: a host thread's only */
		s.buf = chance(r, 80) ? PAGE * (1 + rn(r, 1 << 20)) : 0;
		s.buf_len = chance(r, 80) ? 1 + rn(r, 4 * PAGE) : 0;
		break;
	default: break;
	}
	if (s.flags || s.core >= nr || (!seek && s.delta))
		es_add(&must, EINVAL);
	if (s.core < nr && (h->dpu < 0 || s.core != (uint32_t)h->dpu))
		es_add(&must, EPERM);
	if (!e)
		es_add(&must, ENOENT);
	else if (open && e->core >= 0)
		es_add(&must, EBUSY);
	else if (!open && e->core != (int32_t)s.core)
		es_add(&must, EINVAL);
	ws_place(r, &s, sizeof(s), offsetofend(struct dpusim_stream_cmd, prev), &a);
	/* what the kernel reads of them: an older version's has no buffer */
	memcpy(&in, &s, a.size < sizeof(in) ? a.size : sizeof(in));
	if (in.buf || in.buf_len)
		es_add(&must, EINVAL);
	err = ws_ioctl(w, cmds[which], &a);
	snprintf(what, sizeof(what), "WORKER_STREAM_%s as DPU %d", names[which],
		 h->dpu);
	snprintf(fields, sizeof(fields),
		 "stream %u core %u delta %d flags %#x buf %#llx/%llu; model: core %d cursor %u",
		 s.id, s.core, s.delta, s.flags, (unsigned long long)in.buf,
		 (unsigned long long)in.buf_len, e ? e->core : -2,
		 e ? e->cursor : 0);
	if (!ws_verdict(what, err, &a, &must, fields))
		return 30;
	if (err)
		return 0;
	switch (which) {
	case 0:
		e->core = s.core;
		e->cursor = 0;
		break;
	case 1:		/* the buffer a host thread registered goes too */
		e->core = -1;
		e->buf = e->buf_len = 0;
		break;
	default:
		cur = (int64_t)e->cursor + s.delta;
		e->cursor = cur < 0 ? 0 : cur > e->nr_tokens ? e->nr_tokens : cur;
		break;
	}
	memcpy(&o, a.arg, sizeof(o));
	if (!scmd_out_ok(e, &o, why, sizeof(why)) || o.id != s.id ||
	    o.core != s.core || o.delta != s.delta || o.flags) {
		dprintf(STDOUT_FILENO, "# program worker: %s (%s): %s\n", what,
			fields, why);
		return 31;
	}
	if (a.size > sizeof(o) &&
	    memcmp((uint8_t *)a.arg + sizeof(o), (uint8_t[32]){ 0 },
		   a.size - sizeof(o))) {
		dprintf(STDOUT_FILENO, "# program worker: %s wrote past its struct\n",
			what);
		return 31;
	}
	return 0;
}

/* The window offset of byte @off of the held DPU's area @mram */
static uint64_t ws_woff(bool mram, uint64_t off)
{
	return mram ? DPUSIM_WINDOW_MRAM + off : off;
}

/* Bytes of the held DPU's mapped areas at window offset @wo */
static volatile uint8_t *ws_at(const struct ps_held *h, uint64_t wo)
{
	return wo >= DPUSIM_WINDOW_MRAM ? h->mram + (wo - DPUSIM_WINDOW_MRAM) :
					  h->wram + wo;
}

/*
 * Cut @len bytes into @nb blocks of at least a byte each, laid one after
 * the other (a random gap between) in the areas: the WRAM's or the
 * MRAM's, at random.  False if they do not fit.
 */
static bool ws_blocks(struct rng *r, struct dpusim_window_block *b, uint32_t nb,
		      uint64_t len)
{
	uint64_t left = len, pos[2] = { 8 * rn(r, 64), 8 * rn(r, 64) }, cut;
	static const uint64_t room[2] = { PS_WRAM, PS_MRAM };
	uint32_t j;
	int mr;

	if (len < nb)
		return false;
	for (j = 0; j < nb; j++) {
		cut = j + 1 == nb ? left : 1 + rn(r, left - (nb - j - 1));
		left -= cut;
		mr = chance(r, 50);
		if (pos[mr] + cut > room[mr])
			mr = !mr;
		if (pos[mr] + cut > room[mr])
			return false;
		b[j] = (struct dpusim_window_block){ ws_woff(mr, pos[mr]), cut };
		pos[mr] += cut + rn(r, 24);
	}
	return true;
}

/*
 * The same move through the worker file's move ring (mapped at the
 * first one, in this process): the errno the kernel answered in the page
 * (the ring carries it out synchronously), @next written into @mv as the
 * ioctl would; ETIMEDOUT if no answer came.
 */
static int ws_ring_move(int w, struct dpusim_worker_stream_move *mv, int dpu)
{
	struct dpusim_worker_stream_wait kick = {
		.size = sizeof(kick), .flags = DPUSIM_STREAM_WAIT_KICK,
	};
	struct dpusim_move_ring *ring;
	uint32_t seq;
	int i, err = 0;

	/* mapped for this move only: a mapping holds the worker file */
	ring = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, w,
		    DPUSIM_MMAP_MOVE_RING);
	if (ring == MAP_FAILED)
		return errno;
	ring->move = *mv;
	ring->dpu = (uint32_t)dpu;
	seq = __atomic_load_n(&ring->done, __ATOMIC_ACQUIRE) + 1;
	__atomic_store_n(&ring->submitted, seq, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; __atomic_load_n(&ring->done, __ATOMIC_ACQUIRE) != seq; i++) {
		if (i > 200000) {
			err = ETIMEDOUT;
			break;
		}
		if (i % 64 == 63 || (ring->flags & DPUSIM_MOVE_RING_NEED_WAKEUP)) {
			ioctl(w, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &kick);
			usleep(10);
		}
	}
	st_add(&ST->ws_calls, 1);
	if (!err && ring->result)
		err = -ring->result;
	if (!err) {
		st_add(&ST->ws_ok, 1);
		mv->next = ring->next;
	}
	munmap(ring, 4096);
	return err;
}

/* WORKER_STREAM_MOVE: 0 or the step failed. */
static int ws_move(int w, struct rng *r, struct prog_streams *ps,
		   const struct ps_held *h, uint32_t nr)
{
	static uint8_t exp[PS_BUF], known[PS_BUF];
	struct dpusim_worker_stream_move mv = { .size = sizeof(mv) };
	uint64_t wsize = ps->wram_size, len = 0, end, off, n, used;
	char what[64], fields[256];
	uint32_t j, nb, i, at;
	struct mstream *e;
	struct ws_arg a;
	eset must = {};
	bool down, blocks_ok = true, async, fits;
	int jj, err;

	jj = ws_pick(r, ps, &mv.stream, h->dpu);
	e = jj >= 0 ? &ps->e[jj] : NULL;
	down = !e || e->down || chance(r, 30);
	if (!down) {
		n = 8 * (1 + rn(r, chance(r, 80) ? 8 : 64));
		mv.offset = ms_offset(e, e->cursor);
		len = n + 2 * DPUSIM_STREAM_HEADER;
		if (e->cursor >= UP_TOKENS || mv.offset + len > UP_BYTES)
			down = true;	/* the model could not follow it */
	}
	if (down) {
		mv.flags = DPUSIM_STREAM_MOVE_DOWN;
		if (e) {
			mv.offset = ms_offset(e, e->cursor) + DPUSIM_STREAM_HEADER;
			len = ms_token(e, e->cursor) + DPUSIM_STREAM_HEADER;
		} else {
			mv.offset = 8 * rn(r, 16);
			len = 8 * (1 + rn(r, 8));
		}
	}
	async = chance(r, 30);
	if (async)
		mv.flags |= DPUSIM_STREAM_MOVE_ASYNC;
	nb = 1 + rn(r, 3);
	fits = ws_blocks(r, mv.blocks, nb, len);
	if (!fits) {
		/* too long for the areas: one block, and a defect */
		nb = 1;
		mv.blocks[0] = (struct dpusim_window_block){ 0, len };
	}
	mv.nr_blocks = nb;
	/* a move down may write only an untracked DPU's areas */
	switch (rn(r, (down && (h->tracked || !fits)) ? 7 : 26)) {
	case 0: mv.flags |= 4u << rn(r, 30); break;
	case 1: mv.nr_blocks = chance(r, 50) ? 0 : 4 + rn(r, 1000); break;
	case 2: mv.blocks[rn(r, nb)].length = 0; break;
	case 3:	/* past the WRAM, or the MRAM */
		mv.blocks[rn(r, nb)] = chance(r, 50) ?
			(struct dpusim_window_block){ wsize - rn(r, 8), 8 + rn(r, 8) } :
			(struct dpusim_window_block){ DPUSIM_WINDOW_MRAM + ps->mram_size -
						      rn(r, 8), 8 + rn(r, 8) };
		break;
	case 4:	/* across the gap, or wrapping */
		mv.blocks[rn(r, nb)] = chance(r, 50) ?
			(struct dpusim_window_block){ DPUSIM_WINDOW_MRAM - 4, 8 } :
			(struct dpusim_window_block){ 8 + rn(r, 8), ~0ULL - rn(r, 8) };
		break;
	case 5: mv.offset += chance(r, 50) ? 8 : -(uint64_t)(1 + rn(r, 8)); break;
	case 6: mv.blocks[nb - 1].length += 8; break;	/* the length */
	default: break;
	}
	if (chance(r, 4))
		mv.__reserved = 1 + rn(r, 0xfffffffe);
	if (chance(r, 10))
		mv.next = rnd(r);	/* an out field: ignored */
	/* a shorter (older) struct hides the fields past it: zeros */
	ws_place(r, &mv, sizeof(mv),
		 offsetofend(struct dpusim_worker_stream_move, blocks), &a);
	/* what the kernel reads of the fields: zeros past a shorter struct */
	if (a.arg && a.size < sizeof(mv)) {
		uint8_t *p = (uint8_t *)&mv;

		memset(p + a.size, 0, sizeof(mv) - a.size);
	}
	/* the prediction, every defect found */
	if (mv.flags & ~(DPUSIM_STREAM_MOVE_DOWN | DPUSIM_STREAM_MOVE_ASYNC) ||
	    !mv.nr_blocks || mv.nr_blocks > DPUSIM_STREAM_MOVE_MAX_BLOCKS ||
	    mv.__reserved)
		es_add(&must, EINVAL);
	if (h->dpu < 0)
		es_add(&must, EPERM);
	len = 0;
	for (j = 0; j < mv.nr_blocks && j < DPUSIM_STREAM_MOVE_MAX_BLOCKS; j++) {
		const struct dpusim_window_block *b = &mv.blocks[j];
		bool mr = b->offset >= DPUSIM_WINDOW_MRAM;

		off = mr ? b->offset - DPUSIM_WINDOW_MRAM : b->offset;
		if (!b->length || __builtin_add_overflow(off, b->length, &end) ||
		    end > (mr ? ps->mram_size : wsize) ||
		    __builtin_add_overflow(len, b->length, &len))
			blocks_ok = false;
	}
	if (!blocks_ok)
		es_add(&must, EINVAL);
	if (blocks_ok && es_empty(&must)) {
		bool dn = mv.flags & DPUSIM_STREAM_MOVE_DOWN;

		if (!e) {
			es_add(&must, ENOENT);
		} else if (e->core != h->dpu) {
			es_add(&must, EINVAL);
		} else if (dn) {
			if (e->cursor == e->nr_tokens)
				es_add(&must, ENODATA);
			else if (mv.offset != ms_offset(e, e->cursor) + DPUSIM_STREAM_HEADER ||
				 len != (uint64_t)ms_token(e, e->cursor) + DPUSIM_STREAM_HEADER)
				es_add(&must, EINVAL);
		} else if (e->down || mv.offset != ms_offset(e, e->cursor) ||
			   len < 3 * DPUSIM_STREAM_HEADER || len % 8) {
			es_add(&must, EINVAL);
		} else {
			n = len - 2 * DPUSIM_STREAM_HEADER;
			used = mv.offset - (uint64_t)e->cursor * DPUSIM_STREAM_HEADER;
			if (e->cursor >= e->max_tokens || used + n > e->data_size)
				es_add(&must, ENOSPC);
		}
	}
	/* a move that succeeds writes only where it may, within the areas */
	if (es_empty(&must) && !a.sdef && (mv.flags & DPUSIM_STREAM_MOVE_DOWN) &&
	    (h->tracked || !fits)) {
		dprintf(STDOUT_FILENO, "# program worker: fuzzer: a move down of %llu bytes to DPU %d would succeed\n",
			(unsigned long long)len, h->dpu);
		return 39;
	}
	/* up: the source, written first (untracked DPU), read for the model */
	if (es_empty(&must) && !a.sdef && !(mv.flags & DPUSIM_STREAM_MOVE_DOWN)) {
		struct dpusim_worker_stream_wait wt = { .size = sizeof(wt) };

		/*
		 * The move in flight (an asynchronous one) may still read or
		 * write these areas: as a program must, wait for it before
		 * touching the buffers of the next one.
		 */
		ioctl(w, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &wt);
		n = len - 2 * DPUSIM_STREAM_HEADER;
		if (!h->tracked && chance(r, 60)) {
			uint32_t hd[2] = { e->cursor ? ms_token(e, e->cursor - 1) : 0, n };
			uint32_t tl[2] = { n, 0 };

			memcpy(exp, hd, 8);
			memcpy(exp + 8, g_src + rn(r, SRC_LEN - n), n);
			memcpy(exp + 8 + n, tl, 8);
			for (at = 0, j = 0; j < nb; j++)
				for (i = 0; i < mv.blocks[j].length; i++, at++)
					*ws_at(h, mv.blocks[j].offset + i) = exp[at];
		}
		for (at = 0, j = 0; j < nb; j++)
			for (i = 0; i < mv.blocks[j].length; i++, at++)
				exp[at] = *ws_at(h, mv.blocks[j].offset + i);
	}
	/* a well-formed call, now and then through the move ring */
	if (!a.sdef && a.size == sizeof(mv) && chance(r, 25))
		err = ws_ring_move(w, a.arg, h->dpu);
	else
		err = ws_ioctl(w, DPUSIM_IOCTL_WORKER_STREAM_MOVE, &a);
	snprintf(what, sizeof(what), "WORKER_STREAM_MOVE as DPU %d", h->dpu);
	snprintf(fields, sizeof(fields),
		 "stream %u flags %#x offset %llu nr_blocks %u blocks %#llx+%llu %#llx+%llu %#llx+%llu; model: core %d cursor %u/%u",
		 mv.stream, mv.flags, (unsigned long long)mv.offset, mv.nr_blocks,
		 (unsigned long long)mv.blocks[0].offset,
		 (unsigned long long)mv.blocks[0].length,
		 (unsigned long long)mv.blocks[1].offset,
		 (unsigned long long)mv.blocks[1].length,
		 (unsigned long long)mv.blocks[2].offset,
		 (unsigned long long)mv.blocks[2].length,
		 e ? e->core : -2, e ? e->cursor : 0, e ? e->nr_tokens : 0);
	if (!a.sdef && es_empty(&must) && (err == ENOSPC || err == ENOMEM))
		return 0;	/* the budget, the copy thread: nothing moved */
	if (!ws_verdict(what, err, &a, &must, fields))
		return 30;
	if (err)
		return 0;
	if (async)
		st_add(&ST->ws_async, 1);
	/* the answer: @next, the size of the token after the one moved down */
	memcpy(&mv, a.arg, a.size < sizeof(mv) ? a.size : sizeof(mv));
	if (a.size >= offsetofend(struct dpusim_worker_stream_move, next) &&
	    mv.next != ((mv.flags & DPUSIM_STREAM_MOVE_DOWN) ?
			ms_token(e, e->cursor + 1) : 0)) {
		dprintf(STDOUT_FILENO, "# program worker: %s (%s): next %u, the model says %u\n",
			what, fields, mv.next,
			(mv.flags & DPUSIM_STREAM_MOVE_DOWN) ? ms_token(e, e->cursor + 1) : 0);
		return 31;
	}
	if (a.size > sizeof(mv) &&
	    memcmp((uint8_t *)a.arg + sizeof(mv), (uint8_t[32]){ 0 },
		   a.size - sizeof(mv))) {
		dprintf(STDOUT_FILENO, "# program worker: %s wrote past its struct\n",
			what);
		return 31;
	}
	if (!(mv.flags & DPUSIM_STREAM_MOVE_DOWN)) {
		up_apply(NULL, false, e, mv.offset, len, exp);
		st_add(&ST->ws_up, 1);
		return 0;
	}
	token_expect(e, exp, known);
	e->cursor++;
	st_add(&ST->ws_down, 1);
	/* the bytes: at once, after WAIT, or never (the next move waits) */
	if (async) {
		if (chance(r, 40))
			return 0;
		a.arg = &(struct dpusim_worker_stream_wait){ .size = 8 };
		a.size = 8;
		a.sdef = 0;
		err = ws_ioctl(w, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &a);
		if (err) {
			dprintf(STDOUT_FILENO, "# program worker: WAIT after an async move: %s\n",
				ename(err));
			return 30;
		}
	}
	for (at = 0, j = 0; j < nb; j++)
		for (i = 0; i < mv.blocks[j].length; i++, at++)
			if (known[at] && *ws_at(h, mv.blocks[j].offset + i) != exp[at]) {
				dprintf(STDOUT_FILENO, "# program worker: %s (%s): byte %u of the token is %#x, the model says %#x\n",
					what, fields, at,
					*ws_at(h, mv.blocks[j].offset + i), exp[at]);
				return 32;
			}
	st_add(&ST->ws_checked, 1);
	return 0;
}

/* WORKER_STREAM_WAIT: 0 or the step failed. */
static int ws_wait(int w, struct rng *r, const struct ps_held *h)
{
	struct dpusim_worker_stream_wait wt = { .size = sizeof(wt) };
	struct ws_arg a;
	eset must = {};
	char what[64];
	int err;

	if (chance(r, 20)) {	/* bit 0 may be DPUSIM_STREAM_WAIT_KICK */
		wt.flags = 2u << rn(r, 31);
		es_add(&must, EINVAL);
	}
	ws_place(r, &wt, sizeof(wt),
		 offsetofend(struct dpusim_worker_stream_wait, flags), &a);
	err = ws_ioctl(w, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &a);
	snprintf(what, sizeof(what), "WORKER_STREAM_WAIT as DPU %d", h->dpu);
	return ws_verdict(what, err, &a, &must, wt.flags ? "a flag" : "") ? 0 : 30;
}

/*
 * Some worker stream calls as the DPU @dpu held (-1: none): 0 or the
 * step that failed.  The held DPU's areas are mapped meanwhile.
 */
static int pw_streams(int w, struct rng *r, struct prog_streams *ps,
		      int32_t dpu, uint32_t nr)
{
	struct ps_held h = { .dpu = dpu };
	int i, nc, ret = 0;
	uint32_t t;

	if (!ps)
		return 0;
	nc = dpu >= 0 ? rn(r, 14) : rn(r, 3);
	if (!nc)
		return 0;
	if (dpu >= 0) {
		for (t = 0; t < ps->ntracked; t++)
			h.tracked |= ps->tracked[t] == (uint32_t)dpu;
		h.wram = mmap(NULL, PS_WRAM, PROT_READ | PROT_WRITE, MAP_SHARED, w,
			      DPUSIM_MMAP_WRAM(dpu));
		h.mram = mmap(NULL, PS_MRAM, PROT_READ | PROT_WRITE, MAP_SHARED, w,
			      DPUSIM_MMAP_MRAM(dpu));
		if (h.wram == MAP_FAILED || h.mram == MAP_FAILED)
			return 33;
	}
	for (i = 0; i < nc && !ret; i++) {
		switch (rn(r, 10)) {
		case 0: case 1: case 2: case 3:
			ret = ws_cmd(w, r, ps, &h, nr);
			break;
		case 4:
			ret = ws_wait(w, r, &h);
			break;
		default:
			ret = ws_move(w, r, ps, &h, nr);
			break;
		}
	}
	if (dpu >= 0) {
		munmap((void *)h.wram, PS_WRAM);
		munmap((void *)h.mram, PS_MRAM);
	}
	return ret;
}

/* ------------------------------------------------------------ the table */

/* errnos the header gives every DPUSIM ioctl with a struct */
#define COMMON_ERRNOS EFAULT, EINVAL, E2BIG, EBUSY, ENODEV, EINTR

static const struct fz_op fz_ops[NOPS] = {
	{
		.name = "RANK_INFO", .cmd = DPUSIM_IOCTL_RANK_INFO,
		.size = sizeof(struct dpusim_rank_info),
		.min_size = offsetofend(struct dpusim_rank_info, mram_size),
		.weight = 10,
		.errnos = { COMMON_ERRNOS, 0 },
		.gen = gen_info, .predict = predict_info, .commit = commit_info,
	},
	{
		.name = "XFER", .cmd = DPUSIM_IOCTL_XFER,
		.size = sizeof(struct dpusim_xfer),
		.min_size = offsetofend(struct dpusim_xfer, blocks),
		.weight = 70,
		.errnos = { COMMON_ERRNOS, EOVERFLOW, ENOMEM, ENOSPC, EAGAIN,
			    ETIMEDOUT, EPERM, 0 },
		.gen = gen_xfer_fill, .predict = predict_xfer,
		.commit = commit_xfer,
	},
	{
		.name = "SYNC", .cmd = DPUSIM_IOCTL_SYNC,
		.size = sizeof(struct dpusim_sync),
		.min_size = offsetofend(struct dpusim_sync, __reserved),
		.weight = 10,
		.errnos = { COMMON_ERRNOS, ETIMEDOUT, 0 },
		.gen = gen_sync, .predict = predict_sync, .commit = commit_none,
	},
	{
		.name = "unknown", .cmd = 0, .weight = 10,
		.errnos = { ENOTTY, 0 },
		.gen = gen_unknown, .predict = predict_unknown,
		.commit = commit_nothing,
	},
	/* /dev/dpusim/tm: the header's errnos, its extra TM meanings */
#define TM_OP(_cmd, _struct, _last, _w, _gen, _pred, _commit, ...)	\
	{								\
		.name = #_cmd + sizeof("DPUSIM_IOCTL_TM_") - 1,		\
		.cmd = _cmd,						\
		.size = sizeof(_struct),				\
		.min_size = offsetofend(_struct, _last),		\
		.weight = _w, .tm = true,				\
		.errnos = { TM_COMMON_ERRNOS, __VA_ARGS__ },		\
		.gen = _gen, .predict = _pred, .commit = _commit,	\
	}
#define TM_COMMON_ERRNOS EFAULT, EINVAL, E2BIG, ENOMEM, ENODEV, EOVERFLOW
	TM_OP(DPUSIM_IOCTL_TM_QUERY, struct dpusim_tm_query, cap_flags, 3, gen_tm_query,
	      predict_tm_query, commit_tm_query, 0),
	TM_OP(DPUSIM_IOCTL_TM_REG_MR, struct dpusim_tm_reg_mr, __reserved, 10, gen_tm_reg_mr,
	      predict_tm_reg_mr, commit_tm_reg_mr, EBADF, ENOSPC, 0),
	TM_OP(DPUSIM_IOCTL_TM_DEREG_MR, struct dpusim_tm_destroy, __reserved, 4, gen_tm_destroy,
	      predict_tm_destroy, commit_tm_destroy, ENOENT, 0),
	TM_OP(DPUSIM_IOCTL_TM_CREATE_CQ, struct dpusim_tm_create_cq, mmap_size, 5,
	      gen_tm_create_cq, predict_tm_create_cq, commit_tm_create_cq,
	      ENOSPC, 0),
	TM_OP(DPUSIM_IOCTL_TM_DESTROY_CQ, struct dpusim_tm_destroy, __reserved, 2,
	      gen_tm_destroy, predict_tm_destroy, commit_tm_destroy, ENOENT,
	      EBUSY, 0),
	TM_OP(DPUSIM_IOCTL_TM_CREATE_SRQ, struct dpusim_tm_create_srq, __reserved, 5,
	      gen_tm_create_srq, predict_tm_create_srq, commit_tm_create_srq,
	      ENOENT, ENOSPC, 0),
	TM_OP(DPUSIM_IOCTL_TM_DESTROY_SRQ, struct dpusim_tm_destroy, __reserved, 2,
	      gen_tm_destroy, predict_tm_destroy, commit_tm_destroy, ENOENT, 0),
	TM_OP(DPUSIM_IOCTL_TM_CREATE_QP, struct dpusim_tm_create_qp, qp_num, 6,
	      gen_tm_create_qp, predict_tm_create_qp, commit_tm_create_qp,
	      ENOENT, ENOSPC, 0),
	TM_OP(DPUSIM_IOCTL_TM_DESTROY_QP, struct dpusim_tm_destroy, __reserved, 2,
	      gen_tm_destroy, predict_tm_destroy, commit_tm_destroy, ENOENT, 0),
	TM_OP(DPUSIM_IOCTL_TM_CONNECT, struct dpusim_tm_connect, srq_num, 6, gen_tm_connect,
	      predict_tm_connect, commit_tm_connect, ENOENT, EACCES, EISCONN, 0),
	TM_OP(DPUSIM_IOCTL_TM_POST_SRQ_OPS, struct dpusim_tm_post, wrs, 20, gen_tm_srq_ops,
	      predict_tm_srq_ops, commit_tm_srq_ops, ENOENT, ENOSPC, EACCES,
	      ECONNRESET, 0),
	TM_OP(DPUSIM_IOCTL_TM_POST_SRQ_RECV, struct dpusim_tm_post, wrs, 10, gen_tm_srq_recv,
	      predict_tm_srq_recv, commit_tm_post, ENOENT, EACCES, ECONNRESET,
	      0),
	TM_OP(DPUSIM_IOCTL_TM_POST_SEND, struct dpusim_tm_post, wrs, 30, gen_tm_send,
	      predict_tm_send, commit_tm_post, ENOENT, EACCES, ENOTCONN,
	      ECONNRESET, EAGAIN, EREMOTEIO, 0),
	{
		.name = "tm-mmap", .weight = 4, .tm = true,
		.errnos = { EINVAL, ENOMEM, 0 },
		.gen = gen_tm_mmap, .predict = predict_tm_mmap,
		.commit = commit_nothing, .exec = exec_tm_mmap,
	},
	{
		.name = "tm-poll", .weight = 4, .tm = true,
		.errnos = { 0 },
		.gen = gen_tm_poll, .predict = predict_tm_poll,
		.commit = commit_nothing, .exec = exec_tm_poll,
	},
	{
		.name = "tm-unknown", .weight = 2, .tm = true,
		.errnos = { ENOTTY, 0 },
		.gen = gen_tm_unknown, .predict = predict_tm_unknown,
		.commit = commit_nothing,
	},
	/* DPU programs (FIRST_PROG_OP on), of the rank */
	{
		.name = "LAUNCH", .cmd = DPUSIM_IOCTL_LAUNCH,
		.size = sizeof(struct dpusim_launch),
		.min_size = offsetofend(struct dpusim_launch, nr_dpus),
		.weight = 4,
		.errnos = { COMMON_ERRNOS, ESRCH, ETIMEDOUT, 0 },
		.gen = gen_launch, .predict = predict_launch,
		.commit = commit_launch,
	},
	{
		.name = "DPU_STATUS", .cmd = DPUSIM_IOCTL_DPU_STATUS,
		.size = sizeof(struct dpusim_dpu_status),
		.min_size = offsetofend(struct dpusim_dpu_status, nr_fault),
		.weight = 4,
		.errnos = { COMMON_ERRNOS, ENOMEM, 0 },
		.gen = gen_status, .predict = predict_status,
		.commit = commit_status,
	},
	{
		.name = "WORKER_OPEN", .cmd = DPUSIM_IOCTL_WORKER_OPEN,
		.size = sizeof(struct dpusim_worker_open),
		.min_size = offsetofend(struct dpusim_worker_open, __reserved),
		.weight = 3,
		.errnos = { COMMON_ERRNOS, EMFILE, ENFILE, ENOMEM, 0 },
		.gen = gen_worker_open, .predict = predict_worker_open,
		.commit = commit_none, .exec = exec_worker_open,
	},
	{
		/* WORKER_OPEN, LAUNCH, WORKER_CLAIM, mmap, WORKER_FINISH */
		.name = "program", .weight = 2,
		.errnos = { COMMON_ERRNOS, EMFILE, ENFILE, ENOMEM, ETIMEDOUT, 0 },
		.gen = gen_program, .predict = predict_program,
		.commit = commit_nothing, .exec = exec_program,
	},
	{
		.name = "rank-mmap", .weight = 3,
		.errnos = { EINVAL, ENOMEM, EPERM, 0 },
		.gen = gen_rank_mmap, .predict = predict_rank_mmap,
		.commit = commit_nothing, .exec = exec_rank_mmap,
	},
	/* streams, of the rank */
	{
		.name = "STREAM_CREATE", .cmd = DPUSIM_IOCTL_STREAM_CREATE,
		.size = sizeof(struct dpusim_stream_create),
		.min_size = sizeof(struct dpusim_stream_create),	/* v1 */
		.weight = 3,
		.errnos = { COMMON_ERRNOS, ENOSPC, ENOMEM, 0 },
		.gen = gen_stream_create, .predict = predict_stream_create,
		.commit = commit_stream_create,
	},
#define STREAM_CMD_OP(_name, _w)					\
	{								\
		.name = "STREAM_" #_name, .cmd = DPUSIM_IOCTL_STREAM_##_name, \
		.size = sizeof(struct dpusim_stream_cmd),		\
		/* v1: up to @prev; v2 added @buf, @buf_len */		\
		.min_size = offsetofend(struct dpusim_stream_cmd, prev),	\
		.weight = _w,						\
		.errnos = { COMMON_ERRNOS, ENOENT, ENOMEM, 0 },		\
		.gen = gen_stream_cmd, .predict = predict_stream_cmd,	\
		.commit = commit_stream_cmd,				\
	}
	STREAM_CMD_OP(OPEN, 4),
	STREAM_CMD_OP(CLOSE, 3),
	STREAM_CMD_OP(SEEK, 5),
	{
		/* DPUSIM_IOCTL_XFER with DPUSIM_XFER_STREAM: a token moved */
		.name = "STREAM_XFER", .cmd = DPUSIM_IOCTL_XFER,
		.size = sizeof(struct dpusim_xfer),
		.min_size = offsetofend(struct dpusim_xfer, blocks),
		.weight = 8,
		.errnos = { COMMON_ERRNOS, EOVERFLOW, ENOMEM, ENOSPC, EAGAIN,
			    ETIMEDOUT, ENOENT, ENODATA, EPERM, 0 },
		.gen = gen_stream_xfer, .predict = predict_xfer,
		.commit = commit_stream_xfer,
	},
};

/* ---------------------------------------------------------- the engine */

static void run_call(struct ctx *c, struct fz_call *k)
{
	const struct fz_op *op = k->op;
	int idx = op - fz_ops, i;
	eset allowed = {};
	bool reached;

	for (i = 0; op->errnos[i]; i++)
		es_add(&allowed, op->errnos[i]);
	reached = !op->size || predict_struct(c, k);
	if (reached && op->tm && op->cmd && TW->pending[k->tctx] &&
	    es_empty(&k->must)) {
		/*
		 * A CQ of the context overran: a call whose struct is read
		 * reports it instead of running, once (posts then write
		 * their struct back).
		 */
		k->tm_ovf = true;
		es_add(&k->must, EOVERFLOW);
		if (op->min_size == offsetofend(struct dpusim_tm_post, wrs) &&
		    range_check(&c->rs, (uintptr_t)k->arg, sizeof(k->f.tp), true) != RC_OK)
			es_add(&k->must, EFAULT);
	} else if (reached) {
		op->predict(c, k);
	}
	if (c->may_eintr)
		es_add(&k->may, EINTR);
	if (c->may_ebadf) {
		es_add(&k->may, EBADF);
		es_add(&allowed, EBADF);
	}
	k->wgen = session_mark();
	errno = 0;
	if (op->exec) {
		op->exec(c, k);
	} else {
		k->ret = ioctl(op->tm ? TW->fd[k->tctx] : c->fd, k->cmd, k->arg);
		k->err = k->ret ? errno : 0;
	}
	c->calls++;
	st_add(&ST->calls, 1);
	st_add(&ST->op_calls[idx], 1);
	if (!k->ret)
		st_add(&ST->ok, 1);
	else
		st_add(&ST->err[k->err > 0 && k->err < 134 ? k->err : 0], 1);
	/*
	 * Close race: the number may also have been taken meanwhile by a
	 * worker file another thread's WORKER_OPEN installed (the lowest
	 * free number), whose table knows no rank command: ENOTTY.
	 */
	if ((k->err == EBADF || (k->err == ENOTTY && !op->tm)) && c->may_ebadf) {
		c->saw_ebadf = true;
		return;
	}
	if (k->ret && k->ret != -1) {
		violation(c, k, "returned %ld", k->ret);
		return;
	}
	/*
	 * A DPU-program session overlapped: its DPUs may have been RUNNING,
	 * and a host thread may not name them (a transfer) nor act as them
	 * (a stream's core).
	 */
	if (k->err == EBUSY && session_overlapped(k) &&
	    (k->cmd == DPUSIM_IOCTL_XFER || k->cmd == DPUSIM_IOCTL_STREAM_OPEN ||
	     k->cmd == DPUSIM_IOCTL_STREAM_CLOSE || k->cmd == DPUSIM_IOCTL_STREAM_SEEK))
		es_add(&k->may, EBUSY);
	if (k->ret && !es_has(&allowed, k->err)) {
		violation(c, k, "errno %s is not one the header allows for %s",
			  ename(k->err), op->name);
	} else if (!es_empty(&k->must)) {
		if (!k->ret)
			violation(c, k, "succeeded, must fail");
		else if (!es_has(&k->must, k->err) && !es_has(&k->may, k->err))
			violation(c, k, "wrong errno");
	} else if (k->ret && !es_has(&k->may, k->err) &&
		   !es_has(&k->amb, k->err)) {
		violation(c, k, "well-formed call failed");
	}
	op->commit(c, k);
	if (op->tm)
		tm_scan(c, k);
}

static const struct fz_op *pick_op(struct ctx *c)
{
	unsigned int total = 0, r, i;

	for (i = 0; i < NOPS; i++)
		if (fz_ops[i].tm == c->tm_mode)
			total += fz_ops[i].weight;
	r = rn(&c->rng, total);
	for (i = 0; fz_ops[i].tm != c->tm_mode || r >= fz_ops[i].weight; i++)
		if (fz_ops[i].tm == c->tm_mode)
			r -= fz_ops[i].weight;
	return &fz_ops[i];
}

static void one_random_call(struct ctx *c)
{
	struct fz_call *k = c->k;

	memset(k, 0, offsetof(struct fz_call, img));
	k->op = pick_op(c);
	k->cmd = k->op->cmd;
	k->op->gen(c, k);
}

/* FROM_DPU (or TO) helper with one block per DPU, outside the oracle. */
static int raw_xfer(int fd, uint32_t flags, uint64_t off, uint64_t len,
		    uint32_t nd, const uint32_t *dpus, uint8_t *buf)
{
	struct dpusim_xfer_dpu d[MAXD];
	struct dpusim_block b[MAXD];
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = flags, .offset = off, .length = len,
		.nr_dpus = nd, .nr_blocks = nd,
		.dpus = (uintptr_t)d, .blocks = (uintptr_t)b,
	};
	uint32_t i;
	int ret;

	for (i = 0; i < nd; i++) {
		d[i] = (struct dpusim_xfer_dpu){ dpus[i], 1 };
		b[i] = (struct dpusim_block){ (uintptr_t)(buf + i * len), len };
	}
	do {
		st_add(&ST->helper_calls, 1);
		ret = ioctl(fd, DPUSIM_IOCTL_XFER, &x);
	} while (ret && errno == EINTR);
	return ret ? errno : 0;
}

/* Read the model's areas back and compare; returns mismatches. */
static int model_verify(struct ctx *c, const char *when)
{
	struct model *m = c->m;
	struct area ar[2];
	int kind, na, q, ti, err, bad = 0;
	uint64_t i, off;
	uint32_t dpu;

	for (kind = 0; kind < 2; kind++) {
		na = areas_of(m, kind, ar);
		for (q = 0; q < na; q++) {
			err = raw_xfer(c->fd, DPUSIM_XFER_FROM_DPU |
				       (kind ? DPUSIM_XFER_WRAM : 0), ar[q].start,
				       ar[q].len, m->ntracked, m->tracked, c->vbuf);
			if (err) {
				msg("VIOLATION [%s] read-back failed: %s", when, ename(err));
				st_add(&ST->violations, 1);
				return 1;
			}
			for (ti = 0; ti < m->ntracked; ti++) {
				uint8_t *s = model_ptr(m, ti, kind, ar[q].start);
				uint8_t *g = c->vbuf + ti * ar[q].len;

				if (!memcmp(s, g, ar[q].len))
					continue;
				for (i = 0; s[i] == g[i]; i++)
					;
				msg("VIOLATION [%s seed=%llu] memory of DPU %u %s+%#llx is %#x, model %#x",
				    when, (unsigned long long)g_seed, m->tracked[ti],
				    kind ? "WRAM" : "MRAM",
				    (unsigned long long)(ar[q].start + i), g[i], s[i]);
				st_add(&ST->violations, 1);
				bad++;
				memcpy(s, g, ar[q].len);	/* resync */
			}
		}
	}
	/* outside the areas: zeros (any DPU) */
	if (m->zero_ok) {
		dpu = rn(&c->rng, m->nr_dpus);
		off = m->ma + 8 * rn(&c->rng, (m->mram - 2 * m->ma - PAGE) / 8);
		err = raw_xfer(c->fd, DPUSIM_XFER_FROM_DPU, off, PAGE, 1, &dpu, c->vbuf);
		for (i = 0; !err && i < PAGE; i++)
			if (c->vbuf[i]) {
				msg("VIOLATION [%s] DPU %u MRAM+%#llx (never written) is %#x",
				    when, dpu, (unsigned long long)(off + i), c->vbuf[i]);
				st_add(&ST->violations, 1);
				bad++;
				break;
			}
	}
	return bad + streams_verify(c, when);
}

/* Every DPU's areas read zero (a rank just opened). */
static int verify_all_zero(int fd, const struct model *m, const char *when)
{
	uint32_t dpus[MAXD], i, n = m->nr_dpus;
	uint8_t *buf = malloc((size_t)n * MAREA);
	struct area ar[2];
	int kind, na, q, err, bad = 0;
	uint64_t j;

	if (!buf)
		return 1;
	for (i = 0; i < n; i++)
		dpus[i] = i;
	for (kind = 0; kind < 2 && !bad; kind++) {
		na = areas_of(m, kind, ar);
		for (q = 0; q < na && !bad; q++) {
			err = raw_xfer(fd, DPUSIM_XFER_FROM_DPU |
				       (kind ? DPUSIM_XFER_WRAM : 0), ar[q].start,
				       ar[q].len, n, dpus, buf);
			if (err) {
				msg("VIOLATION [%s] read-back failed: %s", when, ename(err));
				bad++;
				break;
			}
			for (j = 0; j < n * ar[q].len; j++)
				if (buf[j]) {
					msg("VIOLATION [%s] reopened rank%d: DPU %llu %s+%#llx is %#x, not 0",
					    when, m->rank, (unsigned long long)(j / ar[q].len),
					    kind ? "WRAM" : "MRAM",
					    (unsigned long long)(ar[q].start + j % ar[q].len),
					    buf[j]);
					bad++;
					break;
				}
		}
	}
	free(buf);
	if (bad)
		st_add(&ST->violations, bad);
	return bad;
}

/* Random calls until @deadline and at least @min_calls. */
static void run_random(struct ctx *c, double deadline, uint64_t min_calls,
		       volatile int *stop)
{
	struct fz_call *k = malloc(sizeof(*k));
	uint64_t start = c->calls;

	if (!k)
		return;
	c->k = k;
	while ((now() < deadline || c->calls - start < min_calls) &&
	       !(stop && *stop)) {
		one_random_call(c);
		run_call(c, k);
		if (c->saw_ebadf && c->stop_on_ebadf)
			break;
		if (c->exact && c->calls % VERIFY_EVERY == 0)
			c->nviol += model_verify(c, c->phase);
	}
	c->k = NULL;
	free(k);
}

/* ------------------------------------------------------------- fixture */

static double share(double frac)
{
	return g_seconds * frac;
}

static uint64_t quota(double frac)
{
	return (uint64_t)(g_calls * frac);
}

static int open_rank_retry(int rank, double seconds)
{
	char path[64];
	double end = now() + seconds;
	int fd;

	snprintf(path, sizeof(path), "/dev/dpusim/rank%d", rank);
	for (;;) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0 || (errno != EBUSY && errno != EINTR) || now() > end)
			return fd;
		usleep(50000);
	}
}

FIXTURE(fz) {
	int fd;
	struct model m;
	struct ctx c;
};

FIXTURE_SETUP(fz)
{
	int ret;

	self->fd = open_rank_retry(2, 25);
	ASSERT_LE(0, self->fd) TH_LOG("open rank2: %s", strerror(errno));
	ret = model_init(&self->m, 2, self->fd);
	if (ret == -2)
		SKIP(return, "rank2 geometry does not fit the model");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, ctx_init(&self->c, &self->m, self->fd, g_seed, "setup"));
	/* a freshly opened rank reads zeros: the model starts there */
	ASSERT_EQ(0, verify_all_zero(self->fd, &self->m, "open"));
	ASSERT_EQ(0, streams_none(self->fd, 2, "open"));
}

FIXTURE_TEARDOWN(fz)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* ------------------------------------------------- the header's limits */

/* One fixed XFER through the same oracle; @expect < 0: oracle only. */
static void fixed_xfer(struct ctx *c, struct fz_call *k, uint32_t flags,
		       uint64_t off, uint64_t len, uint32_t nd,
		       const struct dpusim_xfer_dpu *dv, uint32_t nb,
		       const struct dpusim_block *bv, const char *what,
		       int expect)
{
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = flags, .offset = off, .length = len,
		.nr_dpus = nd, .nr_blocks = nb,
		.dpus = (uintptr_t)dv, .blocks = (uintptr_t)bv,
	};
	double t0 = now();

	memset(k, 0, offsetof(struct fz_call, img));
	k->op = &fz_ops[1];
	k->cmd = DPUSIM_IOCTL_XFER;
	k->dv = dv;
	k->bv = bv;
	k->size = sizeof(x);
	k->place = PL_RW;
	k->arg = c->desc;
	k->img_len = sizeof(x);
	memcpy(k->img, &x, sizeof(x));
	memcpy(c->desc, &x, sizeof(x));
	k->f.x = x;
	c->fill = 0xa5;
	memset(c->dst, c->fill, DST_LEN);
	run_call(c, k);
	if (expect >= 0 && k->err != expect)
		violation(c, k, "%s: expected %s", what, ename(expect));
	msg("limits: %-44s -> %s (%.2f s)", what, ename(k->err), now() - t0);
}

/* One fixed call of the rank ioctl @cmd, its struct @fields, same oracle. */
static void fixed_call(struct ctx *c, struct fz_call *k, unsigned long cmd,
		       const void *fields, const char *what, int expect)
{
	const struct fz_op *op = NULL;
	double t0 = now();
	int i;

	for (i = 0; i < NOPS && !op; i++)
		if (fz_ops[i].cmd == cmd && !fz_ops[i].tm)
			op = &fz_ops[i];
	memset(k, 0, offsetof(struct fz_call, img));
	k->op = op;
	k->cmd = cmd;
	k->size = op->size;
	k->place = PL_RW;
	k->arg = c->desc;
	k->img_len = op->size;
	memcpy(k->img, fields, op->size);
	memcpy(c->desc, fields, op->size);
	memcpy(&k->f, fields, op->size);
	run_call(c, k);
	if (expect >= 0 && k->err != expect)
		violation(c, k, "%s: expected %s", what, ename(expect));
	if (what[0])
		msg("limits: %-44s -> %s (%.2f s)", what, ename(k->err), now() - t0);
}

static void fixed_create(struct ctx *c, struct fz_call *k, uint64_t size,
			 uint32_t token, const void *data, const char *what,
			 int expect)
{
	struct dpusim_stream_create s = {
		.size = sizeof(s), .stream_size = size, .token_size = token,
		.data = (uintptr_t)data,
	};

	fixed_call(c, k, DPUSIM_IOCTL_STREAM_CREATE, &s, what, expect);
}

static void fixed_scmd(struct ctx *c, struct fz_call *k, unsigned long cmd,
		       uint32_t id, uint32_t core, int32_t delta,
		       const char *what, int expect)
{
	struct dpusim_stream_cmd s = {
		.size = sizeof(s), .id = id, .core = core, .delta = delta,
	};

	fixed_call(c, k, cmd, &s, what, expect);
}

/* An OPEN of stream @id by @core registering @len bytes at @buf. */
static void fixed_sbuf(struct ctx *c, struct fz_call *k, uint32_t id,
		       uint32_t core, const void *buf, uint64_t len,
		       const char *what, int expect)
{
	struct dpusim_stream_cmd s = {
		.size = sizeof(s), .id = id, .core = core,
		.buf = (uintptr_t)buf, .buf_len = len,
	};

	fixed_call(c, k, DPUSIM_IOCTL_STREAM_OPEN, &s, what, expect);
}

/*
 * Streams at their limits: DPUSIM_STREAM_MAX_TOKENS tokens and one more,
 * DPUSIM_STREAM_MAX_BYTES and one more, DPUSIM_STREAM_MAX streams and one
 * more; OPEN, SEEK and CLOSE at the ends of the largest stream; a token
 * buffer of DPUSIM_STREAM_MAX_BUF bytes and one more.
 */
static void stream_limits(struct ctx *c, struct fz_call *k)
{
	uint64_t big = (uint64_t)DPUSIM_STREAM_MAX_TOKENS * DPUSIM_STREAM_MIN_TOKEN;
	uint32_t last = c->m->nr_dpus - 1, id, i;
	uint64_t t0;

	fixed_create(c, k, big + 1, DPUSIM_STREAM_MIN_TOKEN, g_zero,
		     "stream: MAX_TOKENS + 1 tokens", E2BIG);
	fixed_create(c, k, big + 1, DPUSIM_STREAM_MIN_TOKEN, NULL,
		     "stream: as many, empty (no limit of tokens)", 0);
	fixed_create(c, k, big, DPUSIM_STREAM_MIN_TOKEN, g_zero,
		     "stream: MAX_TOKENS tokens of 16 bytes", 0);
	id = ((const struct dpusim_stream_create *)c->desc)->id;
	if (!k->err) {
		fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_OPEN, id, last, 0,
			   "stream: OPEN by the last core", 0);
		fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_SEEK, id, last, INT_MAX,
			   "stream: SEEK INT_MAX (the end)", 0);
		fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_SEEK, id, last, -1,
			   "stream: SEEK -1 (the last token)", 0);
		fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_SEEK, id, last, INT_MIN,
			   "stream: SEEK INT_MIN (the first token)", 0);
		fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_SEEK, id, last,
			   DPUSIM_STREAM_MAX_TOKENS - 1, "stream: SEEK to the last token", 0);
		fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_OPEN, id, 0, 0,
			   "stream: OPEN by another core", EBUSY);
		fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_OPEN, id, last, 0,
			   "stream: OPEN by the core that has it", EBUSY);
		fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_SEEK, id, 0, 1,
			   "stream: SEEK by another core", EINVAL);
		fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_CLOSE, id, 0xffffffffu, 0,
			   "stream: CLOSE by core ~0", EINVAL);
		fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_CLOSE, id, last, 0,
			   "stream: CLOSE by its core", 0);
		fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_CLOSE, id, last, 0,
			   "stream: CLOSE again", EINVAL);
		fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_CLOSE, 0, 0xffffffffu, 0,
			   "stream: CLOSE of a free stream by core ~0", EINVAL);
	}
	fixed_create(c, k, DPUSIM_STREAM_MAX_BYTES, DPUSIM_STREAM_MIN_TOKEN, NULL,
		     "stream: empty of MAX_BYTES", 0);
	fixed_create(c, k, DPUSIM_STREAM_MAX_BYTES + 1, 1u << 20, NULL,
		     "stream: empty of MAX_BYTES + 1", EINVAL);
	fixed_create(c, k, DPUSIM_STREAM_MAX_BYTES + 1, 1u << 20, g_zero,
		     "stream: MAX_BYTES + 1 of data", EINVAL);
	fixed_create(c, k, 100, DPUSIM_STREAM_MIN_TOKEN - 1, g_src,
		     "stream: tokens of 15 bytes", EINVAL);
	fixed_create(c, k, 0, DPUSIM_STREAM_MIN_TOKEN, g_src,
		     "stream: 0 bytes", EINVAL);
	t0 = c->m->nst;
	for (i = c->m->nst; i < DPUSIM_STREAM_MAX; i++) {
		fixed_create(c, k, 1 + i % 300, DPUSIM_STREAM_MIN_TOKEN + i % 7,
			     i % 3 ? (const void *)(g_src + 64 * i) : NULL, "", 0);
		if (k->err)
			break;
	}
	msg("limits: streams %llu .. %u created", (unsigned long long)t0,
	    c->m->nst - 1);
	fixed_create(c, k, 64, DPUSIM_STREAM_MIN_TOKEN, g_src,
		     "stream: one more than DPUSIM_STREAM_MAX", ENOSPC);
	fixed_create(c, k, 64, DPUSIM_STREAM_MIN_TOKEN, NULL,
		     "stream: one more than DPUSIM_STREAM_MAX, empty", ENOSPC);
	fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_OPEN, DPUSIM_STREAM_MAX - 1, 1, 0,
		   "stream: OPEN of the last one", 0);
	fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_SEEK, DPUSIM_STREAM_MAX - 1, 1, 3,
		   "stream: SEEK of the last one", 0);
	fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_OPEN, DPUSIM_STREAM_MAX, 1, 0,
		   "stream: OPEN of id DPUSIM_STREAM_MAX", ENOENT);
	fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_CLOSE, DPUSIM_STREAM_MAX - 1, 1, 0,
		   "stream: CLOSE of the last one", 0);
	fixed_sbuf(c, k, DPUSIM_STREAM_MAX - 1, 1, c->sbuf, DPUSIM_STREAM_MAX_BUF + 1,
		   "stream: buffer of MAX_BUF + 1 bytes", E2BIG);
	/* EFAULT past the mapping (ENOMEM: RLIMIT_MEMLOCK without CAP_IPC_LOCK) */
	fixed_sbuf(c, k, DPUSIM_STREAM_MAX - 1, 1, c->sbuf, DPUSIM_STREAM_MAX_BUF,
		   "stream: buffer of MAX_BUF bytes, 16 mapped", -1);
	fixed_sbuf(c, k, DPUSIM_STREAM_MAX - 1, 1, c->sbuf + PAGE, 1,
		   "stream: buffer of 1 byte", 0);
	fixed_scmd(c, k, DPUSIM_IOCTL_STREAM_CLOSE, DPUSIM_STREAM_MAX - 1, 1, 0,
		   "stream: CLOSE, the buffer let go", 0);
}

TEST_F_TIMEOUT(fz, limits, 900)
{
	struct ctx *c = &self->c;
	struct model *m = &self->m;
	struct fz_call *k = malloc(sizeof(*k));
	struct dpusim_xfer_dpu *dv = calloc(MAXD, sizeof(*dv));
	size_t nbig = DPUSIM_XFER_MAX_BLOCKS + 1, i, npg;
	struct dpusim_block *bv = calloc(nbig, sizeof(*bv));
	uint64_t mb = m->mram;
	uint8_t *big, *ro2g;
	uint32_t nd;

	c->phase = "limits";
	c->exact = true;
	ASSERT_NE(NULL, k);
	ASSERT_NE(NULL, dv);
	ASSERT_NE(NULL, bv);
	reg_add(&c->rs, dv, MAXD * sizeof(*dv), P_R | P_W);
	reg_add(&c->rs, bv, nbig * sizeof(*bv), P_R | P_W);

	/* blocks: exactly the limit (all empty), one over */
	dv[0] = (struct dpusim_xfer_dpu){ 5, DPUSIM_XFER_MAX_BLOCKS };
	fixed_xfer(c, k, 0, 0, 0, 1, dv, DPUSIM_XFER_MAX_BLOCKS, bv,
		   "MAX_BLOCKS empty blocks", 0);
	dv[0].nr_blocks = DPUSIM_XFER_MAX_BLOCKS + 1;
	fixed_xfer(c, k, 0, 0, 0, 1, dv, DPUSIM_XFER_MAX_BLOCKS + 1, bv,
		   "MAX_BLOCKS + 1", E2BIG);
	fixed_xfer(c, k, DPUSIM_XFER_ASYNC, 0, 0, 1, dv,
		   DPUSIM_XFER_MAX_BLOCKS + 1, bv, "MAX_BLOCKS + 1, async", E2BIG);
	fixed_xfer(c, k, 0, 0, 0, m->nr_dpus + 1, dv, 0, bv,
		   "nr_dpus = rank's + 1", E2BIG);

	/* bytes: 1 GiB from the DPUs into one buffer, then one DPU more */
	nd = DPUSIM_XFER_MAX_BYTES / mb;
	if (nd < m->nr_dpus && DPUSIM_XFER_MAX_BYTES % mb == 0) {
		big = mmap(NULL, mb, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		ASSERT_NE(MAP_FAILED, big);
		reg_add(&c->rs, big, mb, P_R | P_W);
		for (i = 0; i <= nd; i++) {
			dv[i] = (struct dpusim_xfer_dpu){ i, 1 };
			bv[i] = (struct dpusim_block){ (uintptr_t)big, mb };
		}
		fixed_xfer(c, k, DPUSIM_XFER_FROM_DPU, 0, mb, nd + 1, dv, nd + 1,
			   bv, "MAX_BYTES + mram_size (FROM_DPU)", E2BIG);
		fixed_xfer(c, k, DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_NO_LENGTH_CHECK,
			   0, mb, nd, dv, nd, bv, "MAX_BYTES exactly (FROM_DPU)", 0);
		for (i = 0; i < mb && k->err == 0; i += 64)
			if (big[i]) {
				violation(c, k, "MRAM never written read %#x at %zu",
					  big[i], i);
				break;
			}
		munmap(big, mb);
		c->rs.n--;
	}

	/* pages: 2^19 distinct read-only zero pages, and one more */
	npg = DPUSIM_XFER_MAX_PAGES + 1;
	ro2g = mmap(NULL, npg * PAGE, PROT_READ,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, ro2g);
	reg_add(&c->rs, ro2g, npg * PAGE, P_R);
	for (i = 0; i < npg; i++)
		bv[i] = (struct dpusim_block){ (uintptr_t)ro2g + i * PAGE + 8, 8 };
	dv[0] = (struct dpusim_xfer_dpu){ 7, npg };
	fixed_xfer(c, k, 0, 0, npg * 8, 1, dv, npg, bv,
		   "MAX_PAGES + 1 pages, in order", E2BIG);
	for (i = 0; i < npg; i++)	/* descending: the scattered path */
		bv[i].addr = (uintptr_t)ro2g + (npg - 1 - i) * PAGE + 8;
	fixed_xfer(c, k, 0, 0, npg * 8, 1, dv, npg, bv,
		   "MAX_PAGES + 1 pages, descending", E2BIG);
	dv[0].nr_blocks = npg - 1;
	fixed_xfer(c, k, 0, m->mram - (npg - 1) * 8, (npg - 1) * 8, 1, dv,
		   npg - 1, bv + 1, "MAX_PAGES pages exactly (zeros to DPU 7)", -1);
	munmap(ro2g, npg * PAGE);
	c->rs.n--;

	/* padding: every DPU padded over its whole MRAM */
	for (i = 0; i < m->nr_dpus; i++)
		dv[i] = (struct dpusim_xfer_dpu){ i, 0 };
	if ((uint64_t)m->nr_dpus * mb > DPUSIM_XFER_MAX_PAD_BYTES)
		fixed_xfer(c, k, DPUSIM_XFER_NO_LENGTH_CHECK, 0, mb, m->nr_dpus,
			   dv, 0, bv, "padding over MAX_PAD_BYTES", E2BIG);
	else
		msg("limits: MAX_PAD_BYTES + 1 not reachable on rank2 (%u DPUs x %llu B)",
		    m->nr_dpus, (unsigned long long)mb);
	nd = DPUSIM_XFER_MAX_PAD_BYTES / mb < m->nr_dpus ?
	     DPUSIM_XFER_MAX_PAD_BYTES / mb : m->nr_dpus;
	fixed_xfer(c, k, DPUSIM_XFER_NO_LENGTH_CHECK, 0, mb, nd, dv, 0, bv,
		   "padding up to MAX_PAD_BYTES (zeros)", 0);

	/* offsets and lengths at the ends of MRAM and WRAM */
	dv[0] = (struct dpusim_xfer_dpu){ 3, 1 };
	bv[0] = (struct dpusim_block){ (uintptr_t)g_src, 8 };
	fixed_xfer(c, k, 0, mb - 8, 8, 1, dv, 1, bv, "last 8 bytes of MRAM", 0);
	fixed_xfer(c, k, 0, mb, 8, 1, dv, 1, bv, "offset = mram_size", EOVERFLOW);
	fixed_xfer(c, k, 0, ~7ULL, 8, 1, dv, 1, bv, "offset + length wraps",
		   EOVERFLOW);
	fixed_xfer(c, k, 0, mb - 4, 8, 1, dv, 1, bv, "unaligned offset", -1);
	fixed_xfer(c, k, DPUSIM_XFER_WRAM, m->wram - 8, 8, 1, dv, 1, bv,
		   "last 8 bytes of WRAM", 0);
	fixed_xfer(c, k, DPUSIM_XFER_WRAM, m->wram, 8, 1, dv, 1, bv,
		   "offset = wram_size", EOVERFLOW);
	dv[0].nr_blocks = 0;
	fixed_xfer(c, k, 0, mb, 0, 1, dv, 0, bv, "offset = mram_size, length 0", 0);
	bv[0] = (struct dpusim_block){ ~0ULL - 3, 8 };
	dv[0].nr_blocks = 1;
	fixed_xfer(c, k, 0, 0, 8, 1, dv, 1, bv, "block address wraps", EFAULT);
	EXPECT_EQ(0, model_verify(c, "limits"));

	/* the async queue: 64 jobs, EAGAIN over (if still queued), SYNC */
	if (m->nr_dpus > 9) {
		size_t len = 8UL << 20;
		uint8_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int j, eagain = 0, ok = 0, other = 0, err;
		uint32_t d0 = 9;

		ASSERT_NE(MAP_FAILED, buf);
		for (j = 0; j < (int)DPUSIM_ASYNC_MAX_JOBS + 8; j++) {
			err = raw_xfer(self->fd, DPUSIM_XFER_FROM_DPU |
				       DPUSIM_XFER_ASYNC, m->ma, len, 1, &d0, buf);
			if (!err) {
				ok++;
			} else if (err == EAGAIN) {
				eagain++;
			} else {
				other++;
				msg("VIOLATION async submit: %s", ename(err));
			}
		}
		st_add(&ST->violations, other);
		EXPECT_EQ(0, other);
		msg("limits: %d async jobs of 8 MiB submitted without SYNC: %d queued, %d EAGAIN",
		    j, ok, eagain);
		EXPECT_EQ(0, raw_sync(self->fd));
		EXPECT_EQ(0, raw_xfer(self->fd, DPUSIM_XFER_FROM_DPU |
				      DPUSIM_XFER_ASYNC, m->ma, len, 1, &d0, buf));
		EXPECT_EQ(0, raw_sync(self->fd));
		munmap(buf, len);
	}

	/* SYNC timeouts */
	if (self->fd >= 0) {
		struct dpusim_sync s = { .size = sizeof(s) };
		uint32_t tm[] = { 0, 1, DPUSIM_SYNC_MAX_TIMEOUT_MS,
				  DPUSIM_SYNC_MAX_TIMEOUT_MS + 1, 0xffffffffu };

		for (i = 0; i < 5; i++) {
			s.timeout_ms = tm[i];
			errno = 0;
			EXPECT_EQ(i >= 3 ? -1 : 0, ioctl(self->fd, DPUSIM_IOCTL_SYNC, &s));
			EXPECT_EQ(i >= 3 ? EINVAL : 0, errno) TH_LOG("timeout %u", tm[i]);
		}
	}
	stream_limits(c, k);
	c->nviol += model_verify(c, "limits end");
	EXPECT_EQ(0, c->nviol);
	free(k);
	free(bv);
	free(dv);
}

/* ------------------------------------------------- threads, fork, races */

struct thr {
	pthread_t t;
	struct ctx c;
	struct model *m;
	int fd;
	uint64_t seed;
	double deadline;
	uint64_t quota;
	volatile int *stop;
	int *ready, *done;
	bool eintr, flap, ebadf;
	const char *phase;
	int async_pct;
	int init_failed;
	uint64_t calls, nviol;
};

static void sig_nop(int sig)
{
	(void)sig;
}

static void *thr_main(void *arg)
{
	struct thr *t = arg;

	if (ctx_init(&t->c, t->m, t->fd, t->seed, t->phase)) {
		t->init_failed = 1;
		__atomic_fetch_add(t->ready, 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(t->done, 1, __ATOMIC_SEQ_CST);
		return NULL;
	}
	t->c.exact = false;
	t->c.may_eintr = t->eintr;
	t->c.flap_on = t->flap;
	t->c.may_ebadf = t->ebadf;
	t->c.stop_on_ebadf = t->ebadf;
	t->c.async_pct = t->async_pct;
	__atomic_fetch_add(t->ready, 1, __ATOMIC_SEQ_CST);
	run_random(&t->c, t->deadline, t->quota, t->stop);
	t->calls = t->c.calls;
	t->nviol = t->c.nviol;
	ctx_fini(&t->c);
	__atomic_fetch_add(t->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *flap_main(void *arg)
{
	volatile int *stop = arg;
	struct rng r = { g_seed ^ 0xf1a9 };
	void *p;

	while (!*stop) {
		switch (rn(&r, 4)) {
		case 0:
			/*
			 * The pages unmapped (freed unless pinned), then new
			 * ones.  Not a munmap(): another thread's mmap() of a
			 * DPU's memory could land in the hole, and the blocks
			 * of a FROM_DPU transfer there would write that DPU
			 * (a tracked one's bytes changed once that way).
			 */
			p = mmap(g_flap, FLAP_LEN, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
				 -1, 0);
			usleep(rn(&r, 100));
			if (p == g_flap)
				p = mmap(g_flap, FLAP_LEN, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			if (p != g_flap) {
				msg("flap: mmap: %s, racer stops", strerror(errno));
				return NULL;
			}
			memset(g_flap, 0x77, FLAP_LEN);
			break;
		case 1:
			mprotect(g_flap, FLAP_LEN, PROT_NONE);
			break;
		case 2:
			mprotect(g_flap, FLAP_LEN, PROT_READ);
			break;
		default:
			mmap(g_flap, FLAP_LEN, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			break;
		}
		usleep(rn(&r, 300));
	}
	mprotect(g_flap, FLAP_LEN, PROT_READ | PROT_WRITE);
	return NULL;
}

static void install_sigusr1(void)
{
	struct sigaction sa = { .sa_handler = sig_nop };	/* no SA_RESTART */

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

#define NTHR 3

/*
 * @n threads of random calls on @fd until @seconds passed (and @quota
 * calls); returns their violations.  With @close_after_ms >= 0, the fd is
 * closed that long after they started and the threads end on EBADF.
 */
static uint64_t run_threads(struct model *m, int fd, const char *phase,
			    uint64_t salt, double seconds, uint64_t quota,
			    bool eintr, bool flap, int close_after_ms,
			    int async_pct, uint64_t *calls)
{
	struct thr *t = calloc(NTHR, sizeof(*t));
	volatile int stop = 0;
	int ready = 0, done = 0, i;
	pthread_t racer;
	uint64_t viol = 0;
	double deadline = now() + seconds;
	struct rng r = { g_seed ^ salt };

	if (!t)
		return 1;
	install_sigusr1();
	for (i = 0; i < NTHR; i++) {
		t[i] = (struct thr){
			.m = m, .fd = fd, .seed = g_seed ^ salt ^ (0x1000ULL * (i + 1)),
			.deadline = deadline, .quota = quota / NTHR, .stop = &stop,
			.ready = &ready, .done = &done, .eintr = eintr,
			.flap = flap, .ebadf = close_after_ms >= 0, .phase = phase,
			.async_pct = async_pct,
		};
		if (pthread_create(&t[i].t, NULL, thr_main, &t[i])) {
			t[i].init_failed = 2;
			__atomic_fetch_add(&ready, 1, __ATOMIC_SEQ_CST);
			__atomic_fetch_add(&done, 1, __ATOMIC_SEQ_CST);
		}
	}
	while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < NTHR)
		usleep(1000);
	if (flap)
		pthread_create(&racer, NULL, flap_main, (void *)&stop);
	if (close_after_ms >= 0) {
		usleep(1000 * close_after_ms);
		close(fd);
		usleep(20000);
		stop = 1;
	}
	while (__atomic_load_n(&done, __ATOMIC_SEQ_CST) < NTHR) {
		if (eintr) {
			i = rn(&r, NTHR);
			if (!t[i].init_failed)
				pthread_kill(t[i].t, SIGUSR1);
			usleep(200 + rn(&r, 2000));
		} else {
			usleep(5000);
		}
	}
	stop = 1;
	for (i = 0; i < NTHR; i++) {
		if (t[i].init_failed != 2)
			pthread_join(t[i].t, NULL);
		if (t[i].init_failed) {
			msg("thread %d: setup failed", i);
			viol++;
		}
		viol += t[i].nviol;
		*calls += t[i].calls;
	}
	if (flap)
		pthread_join(racer, NULL);
	free(t);
	return viol;
}

/* ------------------------------------------------------------- phases */

TEST_F_TIMEOUT(fz, random_exact, 60)
{
	struct ctx *c = &self->c;

	c->phase = "exact";
	c->exact = true;
	c->rng.s = g_seed ^ 0xe1;
	run_random(c, now() + share(0.35), quota(0.5), NULL);
	c->nviol += model_verify(c, "exact end");
	msg("exact: %llu calls", (unsigned long long)c->calls);
	EXPECT_EQ(0, c->nviol);
}

TEST_F_TIMEOUT(fz, threads_signals, 60)
{
	uint64_t calls = 0, viol;

	viol = run_threads(&self->m, self->fd, "threads", 0x7e, share(0.15),
			   quota(0.2), true, false, -1, 20, &calls);
	msg("threads: %d threads, %llu calls, with SIGUSR1 (EINTR)", NTHR,
	    (unsigned long long)calls);
	EXPECT_EQ(0, raw_sync(self->fd));
	EXPECT_EQ(0, viol);
	EXPECT_EQ(0, model_verify(&self->c, "threads end"));
}

TEST_F_TIMEOUT(fz, munmap_race, 60)
{
	uint64_t calls = 0, viol;

	g_flap = map_guarded(FLAP_LEN, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, g_flap);
	viol = run_threads(&self->m, self->fd, "munmap", 0x3a, share(0.1),
			   quota(0.1), false, true, -1, 20, &calls);
	msg("munmap race: %llu calls with blocks in memory a thread unmaps",
	    (unsigned long long)calls);
	EXPECT_EQ(0, raw_sync(self->fd));
	EXPECT_EQ(0, viol);
	EXPECT_EQ(0, model_verify(&self->c, "munmap end"));
}

TEST_F_TIMEOUT(fz, fork_shared_fd, 60)
{
	struct ctx *c = &self->c;
	double end = now() + share(0.1), dur;
	int iter = 0, st;
	pid_t pid;

	c->exact = false;
	c->ro_shared = true;
	do {
		dur = 0.3 + rn(&c->rng, 700) / 1000.0;
		fflush(stdout);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			c->rng.s ^= 0xc41dULL + iter;
			c->sid = (1 << 24) | getpid();	/* the parent's streams are not its */
			c->forked = true;		/* nor their buffers */
			c->phase = "fork-child";
			c->nviol = 0;
			run_random(c, now() + dur, 0, NULL);
			_exit(c->nviol ? 1 : 0);
		}
		c->phase = "fork-parent";
		if (iter % 2) {	/* the child dies in the middle of its calls */
			run_random(c, now() + dur / 2, 0, NULL);
			kill(pid, SIGKILL);
			run_random(c, now() + dur / 2, 0, NULL);
		} else {
			run_random(c, now() + dur, 0, NULL);
		}
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		if (iter % 2 == 0)
			EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		iter++;
	} while (now() < end);
	msg("fork: %d rounds, parent %llu calls", iter, (unsigned long long)c->calls);
	EXPECT_EQ(0, raw_sync(self->fd));
	EXPECT_EQ(0, c->nviol);
	EXPECT_EQ(0, model_verify(c, "fork end"));
}

TEST_F_TIMEOUT(fz, close_race, 90)
{
	double end = now() + share(0.12), t0, waited_max = 0;
	uint64_t calls = 0, viol = 0;
	int iter = 0;

	do {
		viol += run_threads(&self->m, self->fd, "close", 0xc1 + iter, 10,
				    0, false, false, rn(&self->c.rng, 60), 50, &calls);
		self->fd = -1;
		t0 = now();
		self->fd = open_rank_retry(2, 25);
		ASSERT_LE(0, self->fd) TH_LOG("reopen rank2: %s", strerror(errno));
		if (now() - t0 > waited_max)
			waited_max = now() - t0;
		self->m.fd = self->c.fd = self->fd;
		/* closed: freed; queued work done before the open returned */
		viol += verify_all_zero(self->fd, &self->m, "close race");
		viol += streams_none(self->fd, 2, "close race");
		memset(self->m.shadow, 0, NTRACK * self->m.per_dpu);
		self->m.zero_ok = true;
		ms_reset(&self->m);
		iter++;
	} while (now() < end);
	msg("close race: %d rounds, %llu calls, reopen waited up to %.2f s",
	    iter, (unsigned long long)calls, waited_max);
	EXPECT_EQ(0, viol);
}

/*
 * A STREAM_CREATE whose answer cannot be written back fails with EFAULT
 * and creates nothing; the stream it had made must not be reachable
 * meanwhile, by id, by another thread of the owner: neither opened nor
 * mapped (DPUSIM_MMAP_STREAM).  A thread holds the rank's transfer lock
 * most of the time (large synchronous FROM_DPU transfers of a DPU the
 * model does not track, into a buffer of its own), which stretches
 * whatever the create does between publishing the stream and taking it
 * back; two threads try the next id all along.  A mapping that succeeds
 * is never touched (its memory would be freed under it).
 */
struct sc_race {
	int fd;
	uint32_t id, dpu;
	uint64_t mram;
	volatile int stop;
	uint64_t maps, opens, xfers, tries;
};

static void *sc_race_hog(void *arg)
{
	struct sc_race *r = arg;
	size_t len = r->mram < (16UL << 20) ? r->mram : 16UL << 20;
	uint8_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	struct dpusim_xfer_dpu d = { .dpu = r->dpu, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)buf, len };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_FROM_DPU,
		.offset = r->mram - len, .length = len, .nr_dpus = 1,
		.nr_blocks = 1, .dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};

	if (buf == MAP_FAILED)
		return NULL;
	while (!r->stop)
		if (!ioctl(r->fd, DPUSIM_IOCTL_XFER, &x))
			r->xfers++;
	munmap(buf, len);
	return NULL;
}

static void *sc_race_mapper(void *arg)
{
	struct sc_race *r = arg;
	void *p;

	while (!r->stop) {
		p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, r->fd,
			 DPUSIM_MMAP_STREAM(r->id));
		r->tries++;
		if (p != MAP_FAILED) {
			r->maps++;
			munmap(p, PAGE);
		}
	}
	return NULL;
}

static void *sc_race_opener(void *arg)
{
	struct sc_race *r = arg;
	uint32_t core = 0;

	while (!r->stop) {
		if (!raw_scmd(r->fd, DPUSIM_IOCTL_STREAM_OPEN, r->id, core, 0, NULL)) {
			r->opens++;
			raw_scmd(r->fd, DPUSIM_IOCTL_STREAM_CLOSE, r->id, core, 0, NULL);
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(fz, stream_create_race, 120)
{
	struct ctx *c = &self->c;
	struct model *m = &self->m;
	struct sc_race r = {
		.fd = self->fd, .id = m->nst, .dpu = m->nr_dpus / 2 + 1,
		.mram = m->mram,
	};
	double end = now() + (share(0.1) > 3 ? share(0.1) : 3);
	struct dpusim_stream_create *s;
	pthread_t t[3];
	uint64_t n = 0, bad = 0;
	int i;

	c->phase = "create-race";
	c->exact = true;
	ASSERT_GT(DPUSIM_STREAM_MAX, r.id);
	ASSERT_GT(0, track_idx(m, r.dpu));
	/* the struct on a page of its own, read-only: EFAULT on the answer */
	s = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	ASSERT_NE(MAP_FAILED, s);
	*s = (struct dpusim_stream_create){
		.size = sizeof(*s), .stream_size = 64UL << 10, .token_size = 64,
	};
	ASSERT_EQ(0, mprotect(s, PAGE, PROT_READ));
	pthread_create(&t[0], NULL, sc_race_hog, &r);
	pthread_create(&t[1], NULL, sc_race_mapper, &r);
	pthread_create(&t[2], NULL, sc_race_opener, &r);
	do {
		errno = 0;
		if (ioctl(self->fd, DPUSIM_IOCTL_STREAM_CREATE, s) != -1 ||
		    errno != EFAULT) {
			msg("VIOLATION [create-race] STREAM_CREATE with a read-only struct: %s",
			    ename(errno));
			bad++;
			break;
		}
		n++;
	} while (now() < end && !r.maps && !r.opens);
	r.stop = 1;
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	msg("create race: %llu creates failed (EFAULT) with %llu transfers holding the lock; stream %u (never created) mapped %llu times, opened %llu times in %llu tries",
	    (unsigned long long)n, (unsigned long long)r.xfers, r.id,
	    (unsigned long long)r.maps, (unsigned long long)r.opens,
	    (unsigned long long)r.tries);
	if (r.maps)
		msg("VIOLATION [create-race] the stream of a failed STREAM_CREATE was mmap()ed: the mapping outlives it (its memory is freed under the mapping)");
	if (r.opens)
		msg("VIOLATION [create-race] the stream of a failed STREAM_CREATE was opened");
	bad += r.maps + r.opens;
	st_add(&ST->violations, bad);
	munmap(s, PAGE);
	/* nothing left of it */
	bad = streams_verify(c, "create race");
	EXPECT_EQ(0, r.maps);
	EXPECT_EQ(0, r.opens);
	EXPECT_EQ(0, bad);
}

TEST_F_TIMEOUT(fz, exit_race, 90)
{
	double end = now() + share(0.08), t0, waited_max = 0;
	uint64_t v0 = ST->violations;
	struct model m3;
	int iter = 0, st, fd3, bad = 0;
	pid_t pid;

	do {
		int mode = iter % 2;
		uint64_t delay = rn(&self->c.rng, 40);

		fflush(stdout);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			uint64_t calls = 0;
			int fd = open_rank_retry(3, 25);

			if (fd < 0 || model_init(&m3, 3, fd))
				_exit(2);
			if (mode == 0) {
				/* exit with the threads in their calls */
				pid_t me = fork();

				if (me == 0) {	/* a timer: exit this soon */
					usleep(1000 * (delay + 5));
					kill(getppid(), SIGKILL);
					_exit(0);
				}
			}
			run_threads(&m3, fd, "exit-child", 0xe0 + iter, 10, 0,
				    false, false, -1, 60, &calls);
			_exit(0);
		}
		if (mode == 1) {
			usleep(1000 * (delay + 10));
			kill(pid, SIGKILL);
		}
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		if (WIFEXITED(st) && WEXITSTATUS(st) == 2) {
			msg("exit race: child could not open rank3");
			bad++;
		}
		t0 = now();
		fd3 = open_rank_retry(3, 25);
		ASSERT_LE(0, fd3) TH_LOG("reopen rank3: %s", strerror(errno));
		if (now() - t0 > waited_max)
			waited_max = now() - t0;
		ASSERT_EQ(0, model_init(&m3, 3, fd3));
		bad += verify_all_zero(fd3, &m3, "exit race");
		bad += streams_none(fd3, 3, "exit race");
		model_fini(&m3);
		close(fd3);
		iter++;
	} while (now() < end);
	/* the timer grandchildren of mode 0 */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	msg("exit race: %d rounds (exit/kill with calls in flight), reopen waited up to %.2f s",
	    iter, waited_max);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(v0, ST->violations);
}

/* ------------------------------------------------ phase: /dev/dpusim/tm */

/* A helper call outside the oracle: an EOVERFLOW it gets is the report. */
static int tm_h(int cx, int err)
{
	if (err == EOVERFLOW)
		TW->pending[cx] = false;
	return err;
}

#define TM_H(cx, call) ({ int __e; do { __e = tm_h(cx, call); } while (__e == EOVERFLOW); __e; })

/*
 * Top the world up: per context two mapped CQs, three regions, an SRQ
 * with untagged and tagged buffers, two QPs connected (to either
 * context's SRQ), so that random calls reach matching, rendezvous, FINs.
 */
static void tm_populate(struct ctx *c)
{
	int cx, n, i, j, q;
	uint32_t h, num;

	for (cx = 0; cx < TM_NCTX; cx++) {
		int fd = TW->fd[cx];

		for (n = 0, i = 0; i < TM_NCQ; i++)
			n += TW->cq[i].live && TW->cq[i].ctx == cx;
		for (; n < 2; n++) {
			struct tm_cq cq;

			i = tm_free_slot_cq();
			if (i < 0 || TM_H(cx, tm_create_cq(fd, 4 + rn(&c->rng, 60), &cq)))
				break;
			TW->cq[i] = (struct tm_wcq){ cq.handle, cq.nr, 0, cq.off, cq.size,
						     (uint8_t *)cq.ring, cx, true };
		}
		for (n = 0, i = 0; i < TM_NMR; i++)
			n += TW->mr[i].live && TW->mr[i].ctx == cx &&
			     (TW->mr[i].access & DPUSIM_TM_ACCESS_LOCAL_WRITE);
		for (i = 0; n < 3 && i < TM_NMR; i++) {
			uint64_t off = rn(&c->rng, TM_BUF / 2), len = 256 + rn(&c->rng, TM_BUF / 2);
			uint32_t acc = DPUSIM_TM_ACCESS_LOCAL_WRITE | DPUSIM_TM_ACCESS_REMOTE_READ;

			if (TW->mr[i].live)
				continue;
			if (TM_H(cx, tm_reg_mr(fd, TW->buf[cx] + off, len, acc, &h)))
				break;
			TW->mr[i] = (struct tm_wmr){ h, acc, (uintptr_t)TW->buf[cx] + off,
						     len, cx, true, false };
			n++;
		}
		if (tm_pick_srq(c, cx) < 0 && (q = tm_live_cq(c, cx)) >= 0) {
			for (i = 0; i < TM_NSRQ && TW->srq[i].live; i++)
				;
			if (i < TM_NSRQ && !TM_H(cx, tm_create_srq(fd, TW->cq[q].h, 4, 4, 4, 2, &h, &num))) {
				memset(&TW->srq[i], 0, sizeof(TW->srq[i]));
				TW->srq[i] = (struct tm_wsrq){ .h = h, .num = num, .sge = 2, .tags = 4,
							      .ops = 4, .wr = 4, .ctx = cx, .cq = q,
							      .live = true };
			}
		}
		for (n = 0, i = 0; i < TM_NQP; i++)
			n += TW->qp[i].live && TW->qp[i].ctx == cx && TW->qp[i].srq >= 0;
		for (; n < 2; n++) {
			int s = tm_pick_srq(c, -1);

			q = tm_live_cq(c, cx);
			for (i = 0; i < TM_NQP && TW->qp[i].live; i++)
				;
			if (s < 0 || q < 0 || i == TM_NQP ||
			    TM_H(cx, tm_create_qp(fd, TW->cq[q].h, 3, &h, &num)))
				break;
			TW->qp[i] = (struct tm_wqp){ h, num, 3, cx, q, -1, true };
			if (!TM_H(cx, tm_connect(fd, h, TW->srq[s].num)))
				TW->qp[i].srq = s;
		}
	}
	/* buffers: an untagged one and a tagged one on each SRQ */
	for (i = 0; i < TM_NSRQ; i++) {
		struct tm_wsrq *s = &TW->srq[i];
		int mi;

		if (!s->live || (mi = tm_pick_mr(c, s->ctx, DPUSIM_TM_ACCESS_LOCAL_WRITE)) < 0 ||
		    TW->mr[mi].mram)
			continue;
		j = TM_H(s->ctx, tm_post_recv(TW->fd[s->ctx], s->h, TW->mr[mi].key,
					      (void *)(uintptr_t)TW->mr[mi].addr,
					      TW->mr[mi].len < 300 ? TW->mr[mi].len : 300, i));
		if (!TM_H(s->ctx, tm_tag_add(TW->fd[s->ctx], s->h, rn(&c->rng, 6), ~0ULL,
					     TW->mr[mi].key, (void *)(uintptr_t)TW->mr[mi].addr,
					     TW->mr[mi].len < 200 ? TW->mr[mi].len : 200, i, &h)) &&
		    s->nth < TM_NH)
			s->th[s->nth++] = h;
		(void)j;
	}
	tm_scan(c, NULL);
}

struct tm_counts { long long mrs, contexts, pinned; long vmpin; };

static void tm_counts(struct tm_counts *t)
{
	t->mrs = sysfs_tm_attr("mrs");
	t->contexts = sysfs_tm_attr("contexts");
	t->pinned = sysfs_tm_attr("pinned_pages");
	t->vmpin = proc_status_kb("VmPin:");
}

static void tm_world_fini(void)
{
	int i;

	for (i = 0; i < TM_NCQ; i++)
		if (TW->cq[i].ring)
			munmap(TW->cq[i].ring, TW->cq[i].size);
	for (i = 0; i < TM_NCTX; i++) {
		close(TW->fd[i]);
		munmap(TW->buf[i] - PAGE, TM_BUF + 2 * PAGE);
	}
	if (TW->rank_fd >= 0)
		close(TW->rank_fd);
	free(TW);
	TW = NULL;
}

TEST_F_TIMEOUT(fz, tag_matching, 120)
{
	struct ctx *c = &self->c;
	struct tm_counts t0, t1;
	double end, t_end;
	struct dpusim_rank_info info = { .size = sizeof(info) };
	uint64_t rounds = 0, v0 = c->nviol;
	int i, tries;

	if (access(TM_PATH, F_OK))
		SKIP(return, "no %s", TM_PATH);
	tm_counts(&t0);
	TW = calloc(1, sizeof(*TW));
	ASSERT_NE(NULL, TW);
	for (i = 0; i < TM_NCTX; i++) {
		TW->fd[i] = tm_open();
		ASSERT_LE(0, TW->fd[i]) TH_LOG("open %s: %s", TM_PATH, strerror(errno));
		TW->buf[i] = map_guarded(TM_BUF, PROT_READ | PROT_WRITE);
		ASSERT_NE(NULL, TW->buf[i]);
		memset(TW->buf[i], 0x5a, TM_BUF);
	}
	TW->rank_fd = open_rank_retry(3, 25);
	if (TW->rank_fd >= 0 && !ioctl(TW->rank_fd, DPUSIM_IOCTL_RANK_INFO, &info)) {
		TW->nr_dpus = info.nr_dpus;
		TW->mram = info.mram_size;
	} else if (TW->rank_fd >= 0) {
		close(TW->rank_fd);
		TW->rank_fd = -1;
	}
	/* the TM buffers are fair game for the kernel */
	for (i = 0; i < TM_NCTX; i++)
		reg_add(&c->rs, TW->buf[i], TM_BUF, P_R | P_W);
	c->phase = "tm";
	c->exact = false;
	c->tm_mode = true;
	c->rng.s = g_seed ^ 0x7a9;
	end = now() + share(0.2);
	do {
		tm_populate(c);
		t_end = now() + 0.25;
		run_random(c, t_end < end ? t_end : end, 200, NULL);
		rounds++;
	} while (now() < end);
	c->tm_mode = false;
	msg("tm: module-wide now: messages %lld matches %lld unexpected %lld syncs %lld rndv_reads %lld no_tag %lld fins %lld overruns %lld",
	    sysfs_tm_attr("messages"), sysfs_tm_attr("matches"),
	    sysfs_tm_attr("unexpected"), sysfs_tm_attr("syncs"),
	    sysfs_tm_attr("rndv_reads"), sysfs_tm_attr("no_tag"),
	    sysfs_tm_attr("fins"), sysfs_tm_attr("overruns"));
	msg("tm: %llu calls in %llu rounds, %llu completions, %llu overruns; nr_done left unwritten %llu times",
	    (unsigned long long)c->calls, (unsigned long long)rounds,
	    (unsigned long long)TW->cqes, (unsigned long long)TW->overruns,
	    (unsigned long long)TW->nr_done_kept);
	tm_world_fini();
	/* everything is gone with the contexts */
	for (tries = 0; tries < 50; tries++) {
		tm_counts(&t1);
		if (t1.mrs == t0.mrs && t1.contexts == t0.contexts &&
		    t1.pinned == t0.pinned && t1.vmpin == t0.vmpin)
			break;
		usleep(50000);
	}
	EXPECT_EQ(t0.mrs, t1.mrs);
	EXPECT_EQ(t0.contexts, t1.contexts);
	EXPECT_EQ(t0.pinned, t1.pinned);
	EXPECT_EQ(t0.vmpin, t1.vmpin);
	EXPECT_EQ(v0, c->nviol);
}

TEST_F_TIMEOUT(fz, random_final, 60)
{
	struct ctx *c = &self->c;
	uint64_t done = __atomic_load_n(&ST->calls, __ATOMIC_SEQ_CST);

	c->phase = "final";
	c->exact = true;
	c->rng.s = g_seed ^ 0xf17a1;
	run_random(c, now() + share(0.1), g_calls > done ? g_calls - done : 0, NULL);
	c->nviol += model_verify(c, "final end");
	msg("final: %llu calls", (unsigned long long)c->calls);
	EXPECT_EQ(0, c->nviol);
}

TEST_F(fz, summary)
{
	char line[2048];
	size_t n;
	int e;

	n = snprintf(line, sizeof(line), "fuzz: seed=%llu calls=%llu ok=%llu",
		     (unsigned long long)g_seed, (unsigned long long)ST->calls,
		     (unsigned long long)ST->ok);
	for (e = 0; e < 134; e++)
		if (ST->err[e] && n < sizeof(line))
			n += snprintf(line + n, sizeof(line) - n, " %s=%llu",
				      ename(e), (unsigned long long)ST->err[e]);
	msg("%s", line);
	msg("fuzz: per ioctl: RANK_INFO=%llu XFER=%llu SYNC=%llu unknown=%llu; helper calls (read-back, sync)=%llu; violations=%llu",
	    (unsigned long long)ST->op_calls[0], (unsigned long long)ST->op_calls[1],
	    (unsigned long long)ST->op_calls[2], (unsigned long long)ST->op_calls[3],
	    (unsigned long long)ST->helper_calls, (unsigned long long)ST->violations);
	n = snprintf(line, sizeof(line), "fuzz: per TM, DPU-program and stream op:");
	for (e = 4; e < NOPS && n < sizeof(line); e++)
		n += snprintf(line + n, sizeof(line) - n, " %s=%llu", fz_ops[e].name,
			      (unsigned long long)ST->op_calls[e]);
	msg("%s", line);
	msg("fuzz: program workers' windows: %llu mapped, %llu claims compared with a plain mapping, %llu empty (SIGBUS) as they must be",
	    (unsigned long long)ST->win_maps, (unsigned long long)ST->win_checks,
	    (unsigned long long)ST->win_sigbus);
	msg("fuzz: registered token buffers: %llu STREAM_OPENs registered one; moves with DPUSIM_XFER_STREAM_BUF: %llu down, %llu up",
	    (unsigned long long)ST->sb_open, (unsigned long long)ST->sb_down,
	    (unsigned long long)ST->sb_up);
	msg("fuzz: streams moved: STREAM_XFER %llu down, %llu up; program workers' WORKER_STREAM_* calls %llu (%llu succeeded): moves %llu down (%llu compared byte for byte), %llu up, %llu asynchronous",
	    (unsigned long long)ST->xs_down, (unsigned long long)ST->xs_up,
	    (unsigned long long)ST->ws_calls, (unsigned long long)ST->ws_ok,
	    (unsigned long long)ST->ws_down, (unsigned long long)ST->ws_checked,
	    (unsigned long long)ST->ws_up, (unsigned long long)ST->ws_async);
	if (g_calls)
		EXPECT_LE(g_calls, ST->calls);
}

static int timeout_for(const char *name)
{
	static const struct { const char *name; double share, quota; } t[] = {
		{ "random_exact", 0.35, 0.5 }, { "threads_signals", 0.15, 0.2 },
		{ "munmap_race", 0.1, 0.1 }, { "fork_shared_fd", 0.1, 0 },
		{ "close_race", 0.12, 0 }, { "exit_race", 0.08, 0 },
		{ "random_final", 0.1, 1.0 }, { "tag_matching", 0.2, 0 },
		{ "stream_create_race", 0.1, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(name, t[i].name))
			return 120 + 3 * share(t[i].share) +
			       (uint64_t)(g_calls * t[i].quota) / 50;
	return !strcmp(name, "limits") ? 900 : 60;
}

int main(int argc, char **argv)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t;
	const char *e;

	e = getenv("DPUSIM_FUZZ_SEED");
	g_seed = e ? strtoull(e, NULL, 0) :
		 ((uint64_t)time(NULL) << 16) ^ getpid();
	e = getenv("DPUSIM_FUZZ_SECONDS");
	if (e && strtod(e, NULL) > 0)
		g_seconds = strtod(e, NULL);
	e = getenv("DPUSIM_FUZZ_CALLS");
	if (e)
		g_calls = strtoull(e, NULL, 0);
	ST = mmap(NULL, sizeof(*ST), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ST == MAP_FAILED)
		return 1;
	msg("fuzz: seed=%llu seconds=%g calls>=%llu (replay: DPUSIM_FUZZ_SEED=%llu)",
	    (unsigned long long)g_seed, g_seconds, (unsigned long long)g_calls,
	    (unsigned long long)g_seed);
	for (f = __fixture_list; f; f = f->next)
		for (t = f->tests; t; t = t->next)
			t->timeout = timeout_for(t->name);
	return test_harness_run(argc, argv);
}
