// SPDX-License-Identifier: GPL-2.0
/*
 * Structured fuzzer of every ioctl of /dev/dpusim/rankN.
 *
 * Each ioctl is one entry of the table `ops`: a generator of descriptors
 * (valid ones, ones with exactly one defect whose errno the header fixes,
 * and random ones), the errnos uapi/dpusim.h allows for it, and a model of
 * what a success changes.  A new ioctl joins by adding an entry.
 *
 * Phases, repeated until the time or call budget is spent:
 *  exact   one thread; a shadow of a window of MRAM and WRAM of a few
 *          DPUs: a successful transfer to the DPUs updates it, a failed
 *          call changes nothing; the window is read back and compared
 *          every few calls; host destination buffers sit between guard
 *          bytes, and bytes no successful call named never change.
 *          Streams: the ids created (in order), each one's shape, the
 *          core that has it open and its cursor; every STREAM_* errno is
 *          predicted from it and every success's out fields checked; the
 *          streams are probed (OPEN or SEEK by 0) with the window.  Tokens
 *          moved by the rank file (DPUSIM_XFER_STREAM, synchronous or not:
 *          the errno expected in the kernel's order of checks, the bytes of
 *          a move down in the host buffer, an empty stream's tokens written
 *          up read back through its mapping) and, in the DPU program's
 *          session, by the worker file (DPUSIM_IOCTL_WORKER_STREAM_OPEN,
 *          _CLOSE, _SEEK, _MOVE and _WAIT as the DPU held and as none; a
 *          move down writes the DPU's modelled windows, checked through a
 *          mapping; a move up takes their bytes).  Registered token
 *          buffers: an OPEN may register one in a guarded area (or one
 *          with a defect: misaligned, empty, too long, read-only,
 *          unmapped, running into the guard), the model knows each
 *          stream's; moves with DPUSIM_XFER_STREAM_BUF name offsets in it
 *          (inside it, or across or past its end) and a shadow of the area
 *          follows what they write; with the window, the rank's
 *          pinned_pages must be the buffers' pages, and 0 once reopened.
 *  race    several threads on one fd, one of them unmapping and mapping
 *          the pages the others' blocks (and buffers) point to; the fd
 *          shared with a forked child that is killed mid-call; an fd
 *          closed while calls are in flight; a child exiting with calls in
 *          flight.  Only the errnos are checked; the rank is reopened
 *          (zeroed, nothing pinned) afterwards.
 *
 * Environment: DPUSIM_FUZZ_SEED (default: time), DPUSIM_FUZZ_SECONDS
 * (default 20), DPUSIM_FUZZ_CALLS (if set: at least that many calls, no
 * time limit).  Prints the seed, the calls made and an errno histogram.
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "fuzz_rng.h"
#include "common.h"
#include "tm_ioctl.h"

#define PAGE		4096UL
#define RANK_NODE	RANK_PATH(2)
#define RANK_IDX	2
#define WIN_DPUS	8		/* DPUs 0..7 are modelled */
#define WIN_MRAM	(64 * 1024)	/* first 64 KiB of their MRAM */
#define WIN_WRAM	4096		/* first 4 KiB of their WRAM */
#define SRC_PAGES	17		/* > WIN_MRAM + the longest block */
#define DST_PAGES	16
#define SBUF_PAGES	4		/* registered token buffers, then a guard */
#define MAX_FZ_BLOCKS	64
/* read-only zeros for the data of a stream of too many tokens */
#define ZERO_LEN	((uint64_t)DPUSIM_STREAM_MAX_TOKENS * 16 + 16 * PAGE)

/*
 * An empty stream's tokens the model follows, and how much of its memory
 * (moves up are generated only while they fit).
 */
#define UP_TOKENS	32
#define UP_BYTES	(2 * PAGE)

/* A stream the exact phase created (ioctl_fuzz's model of it). */
struct fstream {
	bool down;
	int32_t core;		/* the core that has it open, or -1 */
	uint32_t cursor, nr_tokens, token_size;
	uint32_t max_tokens;	/* empty: the tokens it has room for */
	uint64_t size, mem_size;
	const uint8_t *src;	/* made of data: the bytes (src, never changed) */
	uint32_t up_sizes[UP_TOKENS];	/* empty: its tokens' sizes */
	uint8_t *up;		/* empty: its first UP_BYTES (struct fz::upb) */
	uint64_t buf, buf_len;	/* the buffer registered at its OPEN, or 0 */
};

/* ------------------------------------------------------------ rng */

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int pct)
{
	return below(100) < pct;
}

/* ------------------------------------------------------------ state */

struct fz {
	int fd;
	struct dpusim_rank_info info;
	uint8_t *src;		/* SRC_PAGES of pattern, read-only for the DPU */
	uint8_t *dst;		/* DST_PAGES, guard bytes around what calls name */
	uint8_t *dst_shadow;	/* what dst must hold */
	uint8_t *ro;		/* a read-only page */
	uint8_t *hole;		/* an unmapped page (PROT_NONE after a mapped one) */
	uint8_t *edge;		/* last 16 bytes of a page before the hole */
	uint8_t *zero;		/* ZERO_LEN read-only (stream data), or NULL */
	uint8_t *sbuf;		/* SBUF_PAGES for registered buffers, a guard page after */
	uint8_t *sbuf_shadow;	/* what sbuf holds once the moves queued are done */
	uint8_t mram[WIN_DPUS][WIN_MRAM];
	uint8_t wram[WIN_DPUS][WIN_WRAM];
	struct fstream st[DPUSIM_STREAM_MAX];	/* ids 0 .. nst - 1 */
	uint8_t *upb;		/* UP_BYTES per stream id */
	uint32_t nst;
	uint64_t calls, ok, errs[160];
	/* tokens moved: by the rank file (down, up), by worker files */
	uint64_t xs_down, xs_up, ws_down, ws_up;
	/* OPENs that registered a buffer; moves with DPUSIM_XFER_STREAM_BUF */
	uint64_t sb_open, sb_down, sb_up;
	struct __test_metadata *md;
};

/* ------------------------------------------------------------ descriptors */

struct desc {
	uint32_t cmd;
	union {
		struct dpusim_xfer x;
		struct dpusim_sync s;
		struct dpusim_rank_info i;
		struct dpusim_launch l;
		struct dpusim_dpu_status st;
		struct dpusim_worker_open wo;
		struct dpusim_stream_create sc;
		struct dpusim_stream_cmd scmd;
		uint8_t raw[256];
	} u;
	struct dpusim_dpu_state states[WIN_DPUS];
	uint32_t size;		/* bytes of u the kernel may read */
	struct dpusim_xfer_dpu dpus[WIN_DPUS + 2];
	struct dpusim_block blocks[MAX_FZ_BLOCKS];
	int expect;		/* the errno, 0 for success, -1 if not fixed */
	bool exact;		/* the model applies (no random pointers) */
	bool tm;		/* an ioctl of /dev/dpusim/tm */
	bool use_argp;		/* pass argp instead of u.raw */
	uint64_t argp;
};

/* The errnos uapi/dpusim.h allows for each ioctl (0-terminated). */
static const int allowed_xfer[] = { EFAULT, EINVAL, E2BIG, EOVERFLOW, ENOSPC,
				    ENOMEM, EAGAIN, ETIMEDOUT, EINTR, EBUSY,
				    ENOENT, ENODATA, EPERM, 0 };	/* the last three: streams */
static const int allowed_launch[] = { EFAULT, EINVAL, E2BIG, EBUSY, ESRCH,
				      ETIMEDOUT, EINTR, 0 };
static const int allowed_status[] = { EFAULT, EINVAL, E2BIG, EINTR, 0 };
static const int allowed_worker_open[] = { EFAULT, EINVAL, E2BIG, EMFILE,
					   ENFILE, ENOMEM, 0 };
static const int allowed_sync[] = { EFAULT, EINVAL, E2BIG, ETIMEDOUT, EINTR, 0 };
static const int allowed_stream_create[] = { EFAULT, EINVAL, E2BIG, ENOSPC,
					     ENOMEM, 0 };
static const int allowed_stream_cmd[] = { EFAULT, EINVAL, E2BIG, ENOENT, EBUSY,
					  EINTR, ENOMEM, 0 };
static const int allowed_info[] = { EFAULT, EINVAL, E2BIG, 0 };
static const int allowed_unknown[] = { ENOTTY, EFAULT, EINVAL, E2BIG,
				       EOVERFLOW, ENOSPC, ENOMEM, EAGAIN,
				       ETIMEDOUT, EINTR, 0 };

/* ------------------------------------------------------------ the table */

struct op {
	const char *name;
	void (*gen)(struct fz *f, struct desc *d);
	void (*apply)(struct fz *f, const struct desc *d);	/* after success */
	unsigned long cmd;	/* TM: the ioctl it generates (0: several) */
};

static uint64_t host_addr(struct fz *f, bool to_dpu, uint64_t len, bool *exact)
{
	switch (below(20)) {
	case 0:
		*exact = false;
		return 0;				/* NULL */
	case 1:
		*exact = false;
		return (uintptr_t)f->hole + below(PAGE);	/* unmapped */
	case 2:
		*exact = false;
		return (uintptr_t)f->edge;		/* straddles into the hole */
	case 3:
		if (!to_dpu) {
			*exact = false;
			return (uintptr_t)f->ro;	/* read-only: no FROM_DPU */
		}
		if (len <= PAGE)
			return (uintptr_t)f->ro + below(PAGE - len + 1);
		/* fall through */
	default:
		if (to_dpu)
			return (uintptr_t)f->src + below(SRC_PAGES * PAGE - len + 1);
		return 0;	/* the caller places FROM_DPU blocks in dst */
	}
}

/* A valid transfer, maybe with one defect of a class whose errno is fixed. */
static void gen_xfer(struct fz *f, struct desc *d)
{
	struct dpusim_xfer *x = &d->u.x;
	uint32_t nd = 1 + below(WIN_DPUS), nb = 0, i, k, b;
	bool from = chance(40), wram = chance(25), nlc = chance(30);
	bool async = !from && chance(20);
	uint64_t win = wram ? WIN_WRAM : WIN_MRAM, len, off, dpos = 8;
	bool used[WIN_DPUS] = { 0 };

	d->cmd = DPUSIM_IOCTL_XFER;
	d->size = sizeof(*x);
	d->exact = true;
	d->expect = 0;
	off = below(win / 8) * 8;
	len = below((win - off) / 8 + 1) * 8;
	if (chance(5))
		len = 0;
	for (i = 0; i < nd; i++) {
		uint32_t dpu;

		do
			dpu = below(WIN_DPUS);
		while (used[dpu]);
		used[dpu] = true;
		k = nlc ? below(4) : 1 + below(3);
		if (nb + k > MAX_FZ_BLOCKS)
			k = 0;
		d->dpus[i] = (struct dpusim_xfer_dpu){ .dpu = dpu, .nr_blocks = k };
		/* k blocks adding up to len (or anything, without the check) */
		for (b = 0; b < k; b++) {
			uint64_t bl = nlc ? below(len + 64) :
				      (b + 1 == k ? len - (len / k) * (k - 1) : len / k);
			struct dpusim_block *blk = &d->blocks[nb + b];

			blk->length = bl;
			if (!from) {
				blk->addr = host_addr(f, true, bl, &d->exact);
			} else if (dpos + bl + 8 <= DST_PAGES * PAGE && chance(95)) {
				blk->addr = (uintptr_t)f->dst + dpos;
				dpos += bl + 8 + below(3) * 8;	/* guards between */
			} else {
				blk->addr = host_addr(f, false, bl, &d->exact);
				if (!blk->addr) {
					d->exact = false;
					blk->addr = (uintptr_t)f->hole;
				}
			}
			if (!bl && chance(50))
				blk->addr = rnd();	/* empty blocks are never read */
		}
		if (!nlc && k == 0)
			d->dpus[i].nr_blocks = 0;
		nb += k;
	}
	*x = (struct dpusim_xfer){
		.size = sizeof(*x),
		.flags = (from ? DPUSIM_XFER_FROM_DPU : 0) |
			 (wram ? DPUSIM_XFER_WRAM : 0) |
			 (nlc ? DPUSIM_XFER_NO_LENGTH_CHECK : 0) |
			 (async ? DPUSIM_XFER_ASYNC : 0),
		.offset = off, .length = len, .nr_dpus = nd, .nr_blocks = nb,
		.dpus = (uintptr_t)d->dpus, .blocks = (uintptr_t)d->blocks,
	};
	/* Without the length check a DPU with no blocks is EINVAL. */
	if (!nlc)
		for (i = 0; i < nd; i++)
			if (!d->dpus[i].nr_blocks && len)
				d->expect = EINVAL;
	if (!d->exact)
		d->expect = -1;

	/* At most one defect whose errno the header fixes. */
	switch (below(24)) {
	/* bit 5, DPUSIM_XFER_STREAM_BUF, without DPUSIM_XFER_STREAM; unknown ones */
	case 0: x->flags |= 1U << (5 + below(27)); d->expect = EINVAL; break;
	/* WRAM: 4-byte alignment (DPUSIM_WRAM_ALIGN), MRAM: 8 */
	case 1: x->offset |= wram ? 2 : 4; d->expect = EINVAL; break;
	case 2: if (len) { x->length |= wram ? 2 : 4; d->expect = EINVAL; } break;
	case 3: x->offset = (wram ? f->info.wram_size : f->info.mram_size) - 8 * below(2);
		x->length = 16; d->expect = EOVERFLOW; break;
	case 4: x->offset = UINT64_MAX - 7; x->length = 16; d->expect = EOVERFLOW; break;
	case 5: x->nr_dpus = f->info.nr_dpus + 1 + below(100); d->expect = E2BIG; break;
	case 6: x->nr_blocks = DPUSIM_XFER_MAX_BLOCKS + 1 + below(1000);
		d->expect = E2BIG; break;
	case 7: d->dpus[0].dpu = f->info.nr_dpus + below(1000); d->expect = EINVAL; break;
	case 8: if (nd > 1) { d->dpus[1].dpu = d->dpus[0].dpu; d->expect = EINVAL; } break;
	case 9: x->nr_blocks++; d->expect = EINVAL; break;
	case 10: x->dpus = chance(50) ? 0 : (uintptr_t)f->hole; d->expect = EFAULT; break;
	case 11: if (nb) { x->blocks = (uintptr_t)f->hole; d->expect = EFAULT; } break;
	case 12: d->size = 16 + below(32); x->size = d->size; d->expect = EINVAL; break;
	case 13: d->size = sizeof(*x) + 8 * (1 + below(8)); x->size = d->size;
		memset(d->u.raw + sizeof(*x), 0, d->size - sizeof(*x));
		d->u.raw[sizeof(*x) + below(d->size - sizeof(*x))] = 1 + below(255);
		d->expect = E2BIG; break;
	case 14: d->size = sizeof(*x) + 8 * (1 + below(8)); x->size = d->size;
		memset(d->u.raw + sizeof(*x), 0, d->size - sizeof(*x));
		break;	/* zero tail: as valid as before */
	case 15: /* padding over the cap: whole MRAM of more than 4 GiB of DPUs */
		if (f->info.nr_dpus * f->info.mram_size > DPUSIM_XFER_MAX_PAD_BYTES) {
			uint32_t n = DPUSIM_XFER_MAX_PAD_BYTES / f->info.mram_size + 1;

			for (i = 0; i < n && i < WIN_DPUS + 2; i++)
				d->dpus[i] = (struct dpusim_xfer_dpu){ .dpu = i };
			*x = (struct dpusim_xfer){ .size = sizeof(*x),
				.flags = DPUSIM_XFER_NO_LENGTH_CHECK, .length = f->info.mram_size,
				.nr_dpus = n, .dpus = (uintptr_t)d->dpus };
			d->expect = n <= WIN_DPUS + 2 ? E2BIG : -1;
		}
		break;
	default: break;
	}
}

/* Random bytes with a few fields kept sane enough to reach the kernel's checks. */
static void gen_xfer_random(struct fz *f, struct desc *d)
{
	struct dpusim_xfer *x = &d->u.x;
	uint32_t i;

	(void)f;
	d->cmd = DPUSIM_IOCTL_XFER;
	d->exact = false;
	d->expect = -1;
	for (i = 0; i < sizeof(d->u.raw); i++)
		d->u.raw[i] = rnd();
	d->size = chance(80) ? sizeof(*x) : below(sizeof(d->u.raw));
	x->size = d->size;
	if (chance(70))
		x->flags &= 0xf;
	if (chance(70)) {
		x->nr_dpus = below(WIN_DPUS + 3);
		x->dpus = (uintptr_t)d->dpus;
		for (i = 0; i < WIN_DPUS + 2; i++)
			d->dpus[i] = (struct dpusim_xfer_dpu){ below(80), below(8) };
	}
	if (chance(70)) {
		x->nr_blocks = below(MAX_FZ_BLOCKS + 1);
		x->blocks = (uintptr_t)d->blocks;
		for (i = 0; i < MAX_FZ_BLOCKS; i++) {
			d->blocks[i].length = chance(50) ? below(3 * PAGE) : rnd();
			d->blocks[i].addr = chance(30) ? rnd() :
				(uintptr_t)(chance(50) ? f->hole : f->ro) + below(PAGE);
		}
	}
	if (chance(60)) {
		x->offset = below(1 << 20) * 8;
		x->length = below(1 << 14) * 8;
	}
}

static void gen_sync(struct fz *f, struct desc *d)
{
	struct dpusim_sync *s = &d->u.s;

	(void)f;
	d->cmd = DPUSIM_IOCTL_SYNC;
	d->size = sizeof(*s);
	d->exact = true;
	d->expect = 0;
	*s = (struct dpusim_sync){ .size = sizeof(*s), .timeout_ms = below(3) * 1000 };
	switch (below(8)) {
	case 0: s->flags = 1U << below(32); d->expect = EINVAL; break;
	case 1: s->__reserved = 1 + below(1000); d->expect = EINVAL; break;
	case 2: s->timeout_ms = DPUSIM_SYNC_MAX_TIMEOUT_MS + 1 + below(1000); d->expect = EINVAL; break;
	case 3: d->size = below(16); s->size = d->size; d->expect = EINVAL; break;
	case 4: d->size = sizeof(*s) + 8; s->size = d->size;
		d->u.raw[sizeof(*s) + below(8)] = 1; d->expect = E2BIG; break;
	default: break;
	}
}

static void gen_info(struct fz *f, struct desc *d)
{
	struct dpusim_rank_info *i = &d->u.i;

	(void)f;
	d->cmd = DPUSIM_IOCTL_RANK_INFO;
	d->size = sizeof(*i);
	d->exact = true;
	d->expect = 0;
	memset(d->u.raw, 0, sizeof(d->u.raw));
	i->size = sizeof(*i);
	switch (below(6)) {
	case 0: i->flags = 1U << below(32); d->expect = EINVAL; break;
	case 1: d->size = below(offsetofend(struct dpusim_rank_info, mram_size));
		i->size = d->size; d->expect = EINVAL; break;
	case 2: d->size = sizeof(*i) + 8; i->size = d->size;
		d->u.raw[sizeof(*i) + below(8)] = 1; d->expect = E2BIG; break;
	default: break;
	}
}

/*
 * DPUSIM_IOCTL_LAUNCH: the fuzzed rank has no worker file open outside
 * worker_session(), so a well-formed launch fails with ESRCH.
 */
static void gen_launch(struct fz *f, struct desc *d)
{
	struct dpusim_launch *l = &d->u.l;
	uint32_t n = f->info.nr_dpus;

	d->cmd = DPUSIM_IOCTL_LAUNCH;
	d->size = sizeof(*l);
	d->exact = true;
	d->expect = ESRCH;
	l->nr_dpus = 1 + below(n);
	*l = (struct dpusim_launch){ .size = sizeof(*l), .nr_dpus = l->nr_dpus,
				     .first_dpu = below(n - l->nr_dpus + 1) };
	switch (below(9)) {
	case 0: l->flags = 1U << below(32); d->expect = EINVAL; break;
	case 1: l->nr_dpus = 0; d->expect = EINVAL; break;
	case 2: l->first_dpu = n + below(1000); d->expect = EINVAL; break;
	case 3: l->nr_dpus = n - l->first_dpu + 1 + below(UINT32_MAX - n);
		d->expect = EINVAL; break;
	case 4: d->size = below(sizeof(*l)); l->size = d->size; d->expect = EINVAL; break;
	case 5: d->size = sizeof(*l) + 8; l->size = d->size;
		d->u.raw[sizeof(*l) + below(8)] = 1; d->expect = E2BIG; break;
	case 6: d->use_argp = true; d->argp = (uintptr_t)f->hole; d->expect = EFAULT; break;
	default: break;
	}
}

static void gen_status(struct fz *f, struct desc *d)
{
	struct dpusim_dpu_status *st = &d->u.st;
	uint32_t n = f->info.nr_dpus, nr = below(WIN_DPUS + 1);

	d->cmd = DPUSIM_IOCTL_DPU_STATUS;
	d->size = sizeof(*st);
	d->exact = true;
	d->expect = 0;
	*st = (struct dpusim_dpu_status){
		/* first_dpu names a DPU of the rank, also with nr_dpus 0 */
		.size = sizeof(*st), .nr_dpus = nr,
		.first_dpu = nr ? below(n - nr + 1) : below(n),
		.states = (uintptr_t)d->states,
	};
	if (chance(20)) {	/* out fields: garbage in */
		st->nr_running = rnd();
		st->nr_fault = rnd();
	}
	switch (below(10)) {
	case 0: st->flags = 1U << below(32); d->expect = EINVAL; break;
	case 1: st->first_dpu = n + below(1000); d->expect = EINVAL; break;
	case 2: st->nr_dpus = n - st->first_dpu + 1 + below(1000); d->expect = EINVAL; break;
	case 3: if (nr) {
			st->states = chance(50) ? 0 : (uintptr_t)f->hole;
			d->expect = EFAULT;
		}
		break;
	case 4: if (nr) { st->states = (uintptr_t)f->ro; d->expect = EFAULT; } break;
	case 5: d->size = below(sizeof(*st)); st->size = d->size; d->expect = EINVAL; break;
	case 6: d->size = sizeof(*st) + 8; st->size = d->size;
		d->u.raw[sizeof(*st) + below(8)] = 1; d->expect = E2BIG; break;
	default: break;
	}
}

static void gen_worker_open(struct fz *f, struct desc *d)
{
	struct dpusim_worker_open *wo = &d->u.wo;

	d->cmd = DPUSIM_IOCTL_WORKER_OPEN;
	d->size = sizeof(*wo);
	d->exact = true;
	d->expect = 0;
	*wo = (struct dpusim_worker_open){ .size = sizeof(*wo) };
	if (chance(20))
		wo->fd = rnd();	/* an out field: ignored */
	switch (below(8)) {
	case 0: wo->flags = 1U << below(32); d->expect = EINVAL; break;
	case 1: wo->__reserved = 1 + below(1000); d->expect = EINVAL; break;
	case 2: d->size = below(sizeof(*wo)); wo->size = d->size; d->expect = EINVAL; break;
	case 3: d->size = sizeof(*wo) + 8; wo->size = d->size;
		d->u.raw[sizeof(*wo) + below(8)] = 1; d->expect = E2BIG; break;
	case 4: d->use_argp = true; d->argp = (uintptr_t)f->hole; d->expect = EFAULT; break;
	default: break;
	}
}

/* ------------------------------------------------ streams */

/* Offset of the header of token @i of @s (0 .. nr_tokens). */
static uint64_t fs_offset(const struct fstream *s, uint32_t i)
{
	uint64_t off = 0;
	uint32_t j;

	if (!s->down) {		/* the tokens written, one after the other */
		for (j = 0; j < i && j < s->nr_tokens; j++)
			off += DPUSIM_STREAM_HEADER + s->up_sizes[j];
		return off;
	}
	if (i < s->nr_tokens)
		return (uint64_t)i * (s->token_size + DPUSIM_STREAM_HEADER);
	return s->size + (uint64_t)i * DPUSIM_STREAM_HEADER;
}

/* Size of token @i of @s (0 at the end). */
static uint32_t fs_token(const struct fstream *s, uint32_t i)
{
	if (i >= s->nr_tokens)
		return 0;
	if (!s->down)
		return s->up_sizes[i];
	if (i + 1 < s->nr_tokens)
		return s->token_size;
	return s->size - (uint64_t)(s->nr_tokens - 1) * s->token_size;
}

/*
 * The token at the cursor of @s and the header after it, as a move down
 * gives them, into @out (at most UP_BYTES or a token of data + 8).
 */
static void fs_expect(const struct fstream *s, uint8_t *out)
{
	uint32_t cur = s->cursor, size = fs_token(s, cur);
	uint32_t h[2] = { size, fs_token(s, cur + 1) };

	if (!s->down) {
		memcpy(out, s->up + fs_offset(s, cur) + DPUSIM_STREAM_HEADER,
		       size + DPUSIM_STREAM_HEADER);
		return;
	}
	memcpy(out, s->src + (uint64_t)cur * s->token_size, size);
	memcpy(out + size, h, sizeof(h));
}

/* A move up of @len bytes (@src) at the cursor of @s: the model takes it. */
static void fs_up(struct fstream *s, uint64_t off, uint64_t len,
		  const uint8_t *src)
{
	memcpy(s->up + off, src, len);
	s->up_sizes[s->cursor] = len - 2 * DPUSIM_STREAM_HEADER;
	s->nr_tokens = s->cursor + 1;
	s->cursor++;
}

/*
 * DPUSIM_IOCTL_STREAM_CREATE: data from src (or an empty stream), at most
 * one defect.  The exact phase knows how many streams exist: the next one
 * gets id nst, none past DPUSIM_STREAM_MAX (ENOSPC).
 */
static void gen_stream_create(struct fz *f, struct desc *d)
{
	struct dpusim_stream_create *c = &d->u.sc;
	bool down = chance(70);

	d->cmd = DPUSIM_IOCTL_STREAM_CREATE;
	d->size = sizeof(*c);
	d->exact = true;
	*c = (struct dpusim_stream_create){
		.size = sizeof(*c),
		.stream_size = 1 + below(down ? SRC_PAGES * PAGE :
					 chance(90) ? 1 << 16 : 1 << 24),
		.token_size = DPUSIM_STREAM_MIN_TOKEN + below(chance(50) ? 64 : 8192),
	};
	if (down)
		c->data = (uintptr_t)f->src + below(SRC_PAGES * PAGE - c->stream_size + 1);
	if (chance(10)) {	/* out fields: garbage in */
		c->id = rnd();
		c->nr_tokens = rnd();
		c->mem_size = rnd();
	}
	d->expect = f->nst >= DPUSIM_STREAM_MAX ? ENOSPC : 0;
	switch (below(14)) {
	case 0: c->flags = 1U << below(32); d->expect = EINVAL; break;
	case 1: c->__reserved = 1 + below(1000); d->expect = EINVAL; break;
	case 2: c->token_size = below(DPUSIM_STREAM_MIN_TOKEN); d->expect = EINVAL; break;
	case 3: c->stream_size = 0; d->expect = EINVAL; break;
	case 4: c->stream_size = DPUSIM_STREAM_MAX_BYTES + 1 + below(1 << 20);
		d->expect = EINVAL; break;
	case 5: /* too many tokens (of readable data) */
		if (f->zero) {
			c->token_size = DPUSIM_STREAM_MIN_TOKEN;
			c->stream_size = (uint64_t)DPUSIM_STREAM_MAX_TOKENS * 16 + 1 +
					 below(16 * PAGE);
			c->data = (uintptr_t)f->zero;
			d->expect = E2BIG;
		}
		break;
	case 6: if (down) {	/* data running into the hole */
			c->stream_size = PAGE + below(4 * PAGE);
			c->data = (uintptr_t)f->hole - PAGE;
			d->expect = EFAULT;
		}
		break;
	case 7: if (down) { c->data = chance(50) ? (uintptr_t)f->hole : 8; d->expect = EFAULT; }
		break;
	case 8: d->size = below(sizeof(*c)); c->size = d->size; d->expect = EINVAL; break;
	case 9: d->size = sizeof(*c) + 8; c->size = d->size;
		d->u.raw[sizeof(*c) + below(8)] = 1; d->expect = E2BIG; break;
	case 10: d->use_argp = true; d->argp = (uintptr_t)f->hole; d->expect = EFAULT; break;
	default: break;
	}
}

/*
 * OPEN, CLOSE, SEEK: mostly a stream the exact phase created, by the core
 * that has it open or another; an OPEN often registers a token buffer in
 * sbuf; at most one defect (of the buffer too: one that is not valid, or
 * one with CLOSE or SEEK, found before the stream is looked up).
 */
static void gen_stream_cmd(struct fz *f, struct desc *d, unsigned long cmd)
{
	struct dpusim_stream_cmd *c = &d->u.scmd;
	const struct fstream *s = NULL;
	uint32_t n = f->info.nr_dpus, i, k;
	uint64_t p = below(SBUF_PAGES), room = (SBUF_PAGES - p) * PAGE;

	d->cmd = cmd;
	d->size = sizeof(*c);
	d->exact = true;
	*c = (struct dpusim_stream_cmd){ .size = sizeof(*c), .core = below(n) };
	if (f->nst && chance(85)) {
		c->id = below(f->nst);
		/* an OPEN: often of one nobody has open, if any */
		k = cmd == DPUSIM_IOCTL_STREAM_OPEN && chance(50) ? f->nst : 0;
		for (i = 0; i < k; i++)
			if (f->st[(c->id + i) % f->nst].core < 0) {
				c->id = (c->id + i) % f->nst;
				break;
			}
		s = &f->st[c->id];
		if (s->core >= 0 && chance(cmd == DPUSIM_IOCTL_STREAM_OPEN ? 20 : 85))
			c->core = s->core;
	} else {
		c->id = f->nst + below(chance(50) ? 8 : UINT32_MAX - f->nst);
	}
	if (cmd == DPUSIM_IOCTL_STREAM_SEEK)
		c->delta = chance(10) ? (chance(50) ? INT_MIN : INT_MAX) :
			   (int32_t)below(2 * (s ? s->nr_tokens : 4) + 5) -
			   (int32_t)(s ? s->nr_tokens : 4) - 2;
	if (!s)
		d->expect = ENOENT;
	else if (cmd == DPUSIM_IOCTL_STREAM_OPEN)
		d->expect = s->core >= 0 ? EBUSY : 0;
	else
		d->expect = s->core == (int32_t)c->core ? 0 : EINVAL;
	if (cmd == DPUSIM_IOCTL_STREAM_OPEN && chance(40)) {
		c->buf = (uintptr_t)f->sbuf + p * PAGE;
		c->buf_len = chance(60) ? room - below(PAGE) : 1 + below(PAGE);
	}
	switch (below(14)) {
	case 0: c->flags = 1U << below(32); d->expect = EINVAL; break;
	case 1: c->core = n + below(1000); d->expect = EINVAL; break;
	case 2: c->core = UINT32_MAX; d->expect = EINVAL; break;
	case 3: if (cmd != DPUSIM_IOCTL_STREAM_SEEK) {
			c->delta = chance(50) ? 1 + below(100) : INT_MIN;
			d->expect = EINVAL;
		}
		break;
	case 4: d->size = below(offsetofend(struct dpusim_stream_cmd, prev));
		c->size = d->size; d->expect = EINVAL; break;
	case 5: d->size = sizeof(*c) + 8; c->size = d->size;
		d->u.raw[sizeof(*c) + below(8)] = 1; d->expect = E2BIG; break;
	case 6: d->use_argp = true; d->argp = chance(50) ? 0 : (uintptr_t)f->hole;
		d->expect = EFAULT; break;
	case 7: c->cursor = rnd(); c->token = rnd(); c->nr_tokens = rnd();
		c->mem_size = rnd(); c->offset = rnd(); c->token_size = rnd();
		c->prev = rnd(); break;	/* out fields: ignored */
	case 8:	/* the buffer, registered before the stream is looked up */
		c->buf = (uintptr_t)f->sbuf + p * PAGE;
		c->buf_len = 1 + below(PAGE);
		d->expect = EINVAL;
		switch (below(9)) {
		case 0: c->buf += 1 + below(PAGE - 1); break;		/* misaligned */
		case 1: c->buf_len = 0; break;
		case 2: c->buf = 0; break;
		case 3: c->buf_len = DPUSIM_STREAM_MAX_BUF + 1 + below(1 << 20);
			d->expect = E2BIG; break;
		case 4: c->buf_len = room + 1 + below(PAGE);		/* into the guard */
			d->expect = EFAULT; break;
		case 5: c->buf = (uintptr_t)f->ro; d->expect = EFAULT; break;
		case 6: c->buf = (uintptr_t)f->hole; d->expect = EFAULT; break;
		case 7: if (cmd == DPUSIM_IOCTL_STREAM_OPEN) {	/* wraps */
				c->buf = UINT64_MAX - 2 * PAGE + 1;
				c->buf_len = 2 * PAGE + below(PAGE);
				d->expect = EFAULT;
			}
			break;	/* else a valid one, with CLOSE or SEEK */
		default: c->buf = 0xffff888000000000ULL + PAGE * below(256);	/* kernel */
			d->expect = EFAULT; break;
		}
		if (cmd != DPUSIM_IOCTL_STREAM_OPEN)
			d->expect = EINVAL;	/* any buffer: an OPEN's only */
		break;
	case 9:	/* the first version's size: no buffer, whatever follows */
		d->size = offsetofend(struct dpusim_stream_cmd, prev);
		c->size = d->size;
		break;
	default: break;
	}
}

static void gen_stream_open(struct fz *f, struct desc *d)
{
	gen_stream_cmd(f, d, DPUSIM_IOCTL_STREAM_OPEN);
}

static void gen_stream_close(struct fz *f, struct desc *d)
{
	gen_stream_cmd(f, d, DPUSIM_IOCTL_STREAM_CLOSE);
}

static void gen_stream_seek(struct fz *f, struct desc *d)
{
	gen_stream_cmd(f, d, DPUSIM_IOCTL_STREAM_SEEK);
}

static bool is_stream_cmd(unsigned long cmd)
{
	return cmd == DPUSIM_IOCTL_STREAM_CREATE || cmd == DPUSIM_IOCTL_STREAM_OPEN ||
	       cmd == DPUSIM_IOCTL_STREAM_CLOSE || cmd == DPUSIM_IOCTL_STREAM_SEEK;
}

/* A successful STREAM_* call of the exact phase: check it, model it. */
static bool stream_apply(struct fz *f, const struct desc *d)
{
	if (d->cmd == DPUSIM_IOCTL_STREAM_CREATE) {
		const struct dpusim_stream_create *c = &d->u.sc;
		struct fstream *s;
		uint32_t nt = 0;
		uint64_t ms = 0;

		stream_layout(c->stream_size, c->token_size, c->data, &nt, &ms);
		if (c->id != f->nst || c->nr_tokens != nt || c->mem_size != ms ||
		    c->size != sizeof(*c) || f->nst >= DPUSIM_STREAM_MAX) {
			fprintf(stderr, "fuzz: STREAM_CREATE gave id %u nr_tokens %u mem_size %llu size %u, want %u %u %llu %zu\n",
				c->id, c->nr_tokens, (unsigned long long)c->mem_size,
				c->size, f->nst, nt, (unsigned long long)ms, sizeof(*c));
			return false;
		}
		s = &f->st[f->nst++];
		*s = (struct fstream){
			.down = c->data, .core = -1, .nr_tokens = nt,
			.token_size = c->token_size, .size = c->stream_size,
			.mem_size = ms, .src = (const uint8_t *)(uintptr_t)c->data,
			.max_tokens = c->data ? 0 : c->stream_size / 8 < DPUSIM_STREAM_MAX_TOKENS ?
				      c->stream_size / 8 : DPUSIM_STREAM_MAX_TOKENS,
			.up = c->data ? NULL : f->upb + (uint64_t)(f->nst - 1) * UP_BYTES,
		};
		if (s->up)
			memset(s->up, 0, UP_BYTES);
		return true;
	} else {
		const struct dpusim_stream_cmd *c = &d->u.scmd;
		struct fstream *s = &f->st[c->id];
		int64_t cur;

		switch (d->cmd) {
		case DPUSIM_IOCTL_STREAM_OPEN:
			s->core = c->core;
			s->cursor = 0;
			/* its buffer, if the version passed has one */
			if (d->size >= offsetofend(struct dpusim_stream_cmd, buf_len)) {
				s->buf = c->buf;
				s->buf_len = c->buf_len;
				f->sb_open += !!c->buf;
			}
			break;
		case DPUSIM_IOCTL_STREAM_CLOSE:
			s->core = -1;
			s->buf = s->buf_len = 0;
			break;
		default:
			cur = (int64_t)s->cursor + c->delta;
			s->cursor = cur < 0 ? 0 : cur > s->nr_tokens ? s->nr_tokens : cur;
			break;
		}
		if (c->size != sizeof(*c) || c->cursor != s->cursor ||
		    c->token != fs_token(s, s->cursor) || c->nr_tokens != s->nr_tokens ||
		    c->mem_size != s->mem_size || c->offset != fs_offset(s, s->cursor) ||
		    c->token_size != s->token_size ||
		    c->prev != (s->cursor ? fs_token(s, s->cursor - 1) : 0)) {
			fprintf(stderr, "fuzz: stream %u: cursor %u token %u nr_tokens %u mem_size %llu offset %llu token_size %u prev %u, want %u %u %u %llu %llu %u %u\n",
				c->id, c->cursor, c->token, c->nr_tokens,
				(unsigned long long)c->mem_size,
				(unsigned long long)c->offset, c->token_size, c->prev,
				s->cursor, fs_token(s, s->cursor), s->nr_tokens,
				(unsigned long long)s->mem_size,
				(unsigned long long)fs_offset(s, s->cursor), s->token_size,
				s->cursor ? fs_token(s, s->cursor - 1) : 0);
			return false;
		}
		return true;
	}
}

static bool check_up_bytes(struct fz *f, uint32_t id);

/* Every stream as modelled (a free one opens, a held one seeks by 0). */
static bool check_streams(struct fz *f)
{
	struct dpusim_stream_cmd c;
	uint32_t id;
	int r;

	for (id = 0; id <= f->nst && id < DPUSIM_STREAM_MAX; id++) {
		const struct fstream *s = &f->st[id];

		c = (struct dpusim_stream_cmd){ .size = sizeof(c), .id = id,
						.core = id < f->nst && s->core >= 0 ? s->core : 0 };
		r = ioctl(f->fd, id < f->nst && s->core >= 0 ? DPUSIM_IOCTL_STREAM_SEEK :
			  DPUSIM_IOCTL_STREAM_OPEN, &c) ? errno : 0;
		if (id == f->nst) {
			if (r != ENOENT) {
				fprintf(stderr, "fuzz: stream %u (never created): %s\n", id,
					strerror(r));
				return false;
			}
			break;
		}
		if (r || (s->core >= 0 && c.cursor != s->cursor) ||
		    c.nr_tokens != s->nr_tokens || c.mem_size != s->mem_size) {
			fprintf(stderr, "fuzz: stream %u (core %d cursor %u): %s, cursor %u\n",
				id, s->core, s->cursor, strerror(r), c.cursor);
			return false;
		}
		if (s->core < 0) {
			f->st[id].cursor = 0;
			if (ioctl(f->fd, DPUSIM_IOCTL_STREAM_CLOSE, &c)) {
				fprintf(stderr, "fuzz: stream %u: CLOSE after OPEN: %s\n", id,
					strerror(errno));
				return false;
			}
		}
		/* an empty stream's tokens: their bytes */
		if (!s->down && s->nr_tokens && !check_up_bytes(f, id))
			return false;
	}
	return true;
}

/* A successful WORKER_OPEN returned a file: close it at once. */
static void close_worker(struct desc *d, int err)
{
	if (!err && d->cmd == DPUSIM_IOCTL_WORKER_OPEN && !d->use_argp)
		close(d->u.wo.fd);
}

/* Unknown command numbers of our type, and other types. */
static void gen_unknown(struct fz *f, struct desc *d)
{
	(void)f;
	d->cmd = chance(50) ? _IO(DPUSIM_TYPE, DPUSIM_CMD_STREAM_SEEK + 1 + below(100)) :
			      (uint32_t)rnd();
	d->size = sizeof(uint32_t);
	d->u.i.size = 8;
	d->exact = true;
	d->expect = ENOTTY;
	if ((d->cmd & 0xffff) >= ((DPUSIM_TYPE << 8) | DPUSIM_CMD_BASE) &&
	    (d->cmd & 0xffff) <= ((DPUSIM_TYPE << 8) | DPUSIM_CMD_STREAM_SEEK))
		d->expect = -1;	/* a random number that is one of ours */
}

/* ------------------------------------------------ DPUSIM_XFER_STREAM */

/*
 * A stream of the exact phase, mostly (when there is one) one that @core
 * has open (-1: one some core has open, -2: one nobody has open); NULL
 * with *@id an id no stream has, now and then.
 */
static struct fstream *fs_pick(struct fz *f, int32_t core, uint32_t *id)
{
	uint32_t cand[DPUSIM_STREAM_MAX], nc = 0, i;

	if (!f->nst || chance(10)) {
		*id = f->nst + below(chance(50) ? 8 : UINT32_MAX - f->nst);
		return NULL;
	}
	for (i = 0; i < f->nst; i++)
		if (core == -1 ? f->st[i].core >= 0 :
		    f->st[i].core == (core == -2 ? -1 : core))
			cand[nc++] = i;
	*id = nc && chance(70) ? cand[below(nc)] : below(f->nst);
	return &f->st[*id];
}

/*
 * The errno the header fixes for a DPUSIM_XFER_STREAM transfer of the
 * exact phase, in the kernel's order of checks (the header, the lists,
 * the DPU's blocks, the stream's state under the lock, the pinning); 0:
 * it moves.  -1: not fixed.
 */
static int stream_xfer_expect(const struct fz *f, const struct desc *d)
{
	const struct dpusim_xfer *x = &d->u.x;
	const struct fstream *s = x->stream < f->nst ? &f->st[x->stream] : NULL;
	bool from = x->flags & DPUSIM_XFER_FROM_DPU;
	uint64_t end, sum = 0, n, used, a;
	uint32_t i;

	if (d->use_argp)
		return EFAULT;
	if (d->size < offsetofend(struct dpusim_xfer, blocks))
		return EINVAL;
	for (i = sizeof(*x); i < d->size; i++)
		if (d->u.raw[i])
			return E2BIG;
	if (x->flags & ~0x3fu || x->__reserved ||
	    (x->flags & DPUSIM_XFER_STREAM_BUF && !(x->flags & DPUSIM_XFER_STREAM)))
		return EINVAL;
	if (!s)
		return ENOENT;
	if (x->flags & (DPUSIM_XFER_WRAM | DPUSIM_XFER_NO_LENGTH_CHECK) ||
	    x->nr_dpus != 1)
		return EINVAL;
	if (__builtin_add_overflow(x->offset, x->length, &end) || end > s->mem_size)
		return EOVERFLOW;
	if (x->dpus != (uintptr_t)d->dpus || x->blocks != (uintptr_t)d->blocks)
		return EFAULT;
	if (d->dpus[0].dpu >= f->info.nr_dpus ||
	    d->dpus[0].nr_blocks > x->nr_blocks)
		return EINVAL;
	for (i = 0; i < d->dpus[0].nr_blocks; i++) {
		if (__builtin_add_overflow(d->blocks[i].addr, d->blocks[i].length, &end))
			return EFAULT;
		sum += d->blocks[i].length;
	}
	if (sum != x->length || d->dpus[0].nr_blocks != x->nr_blocks)
		return EINVAL;
	/* under the lock: the stream as the core names it */
	if (s->core != (int32_t)d->dpus[0].dpu)
		return EINVAL;
	if (from) {
		if (s->cursor == s->nr_tokens)
			return ENODATA;
		if (x->offset != fs_offset(s, s->cursor) + DPUSIM_STREAM_HEADER ||
		    x->length != (uint64_t)fs_token(s, s->cursor) + DPUSIM_STREAM_HEADER)
			return EINVAL;
	} else {
		if (s->down || x->offset != fs_offset(s, s->cursor) ||
		    x->length < 3 * DPUSIM_STREAM_HEADER || x->length % 8)
			return EINVAL;
		n = x->length - 2 * DPUSIM_STREAM_HEADER;
		used = x->offset - (uint64_t)s->cursor * DPUSIM_STREAM_HEADER;
		if (s->cursor >= s->max_tokens || used + n > s->size)
			return ENOSPC;
	}
	/*
	 * DPUSIM_XFER_STREAM_BUF: the registered buffer's pages, where the
	 * user's would be pinned: the stream has one, the blocks lie in it
	 */
	if (x->flags & DPUSIM_XFER_STREAM_BUF) {
		if (!s->buf_len)
			return EINVAL;
		for (i = 0; i < x->nr_blocks; i++)
			if (d->blocks[i].length &&
			    (d->blocks[i].addr >= s->buf_len ||
			     d->blocks[i].length > s->buf_len - d->blocks[i].addr))
				return EINVAL;
		return 0;
	}
	/* the pinning: the hole, and (to be written) the read-only page */
	for (i = 0; i < x->nr_blocks; i++) {
		a = d->blocks[i].addr;
		if (!d->blocks[i].length)
			continue;
		if ((a < (uintptr_t)f->hole + 2 * PAGE &&
		     a + d->blocks[i].length > (uintptr_t)f->hole) ||
		    (from && a < (uintptr_t)f->ro + PAGE &&
		     a + d->blocks[i].length > (uintptr_t)f->ro))
			return EFAULT;
	}
	return 0;
}

/*
 * DPUSIM_IOCTL_XFER with DPUSIM_XFER_STREAM: mostly a token of a stream
 * of the exact phase, moved by the core that has it open, at its cursor
 * (down into dst between guard bytes, up from src; synchronous or not),
 * else a stream not open, at its end, past its capacity, or none; at
 * most one defect.  Mostly, if the stream has a registered buffer, with
 * DPUSIM_XFER_STREAM_BUF: offsets in it, one after the other (mostly
 * inside it).
 */
static void gen_stream_xfer(struct fz *f, struct desc *d)
{
	struct dpusim_xfer *x = &d->u.x;
	uint32_t nb = 1 + below(3), i, id, nr = f->info.nr_dpus;
	uint64_t left, cut, dpos = 8 + 8 * below(64), n, room, spos = 0;
	uint32_t cand[DPUSIM_STREAM_MAX], nc = 0;
	struct fstream *s = NULL;
	bool from, sb;

	d->cmd = DPUSIM_IOCTL_XFER;
	d->size = sizeof(*x);
	d->exact = true;
	s = fs_pick(f, -1, &id);
	if (chance(50)) {	/* one open with a registered buffer, if any */
		for (i = 0; i < f->nst; i++)
			if (f->st[i].buf_len && f->st[i].core >= 0)
				cand[nc++] = i;
		if (nc) {
			id = cand[below(nc)];
			s = &f->st[id];
		}
	}
	*x = (struct dpusim_xfer){
		.size = sizeof(*x), .flags = DPUSIM_XFER_STREAM, .nr_dpus = 1,
		.nr_blocks = nb, .dpus = (uintptr_t)d->dpus,
		.blocks = (uintptr_t)d->blocks, .stream = id,
	};
	d->dpus[0] = (struct dpusim_xfer_dpu){
		.dpu = s && s->core >= 0 && chance(90) ? (uint32_t)s->core : below(nr),
		.nr_blocks = nb,
	};
	from = !s || s->down || chance(35);
	if (!from) {
		n = 8 * (1 + below(16));
		x->offset = fs_offset(s, s->cursor);
		x->length = n + 2 * DPUSIM_STREAM_HEADER;
		if (s->cursor >= UP_TOKENS || x->offset + x->length > UP_BYTES)
			from = true;	/* the model could not follow it */
	}
	if (from) {
		x->flags |= DPUSIM_XFER_FROM_DPU;
		x->offset = s ? fs_offset(s, s->cursor) + DPUSIM_STREAM_HEADER :
			    8 * below(16);
		x->length = s ? fs_token(s, s->cursor) + DPUSIM_STREAM_HEADER :
			    8 + 8 * below(8);
		if (s && s->down && chance(5)) {	/* up, on data: EINVAL */
			x->flags &= ~DPUSIM_XFER_FROM_DPU;
			x->offset -= DPUSIM_STREAM_HEADER;
			x->length = 24;
		}
	}
	if (chance(20))
		x->flags |= DPUSIM_XFER_ASYNC;
	sb = s ? chance(s->buf_len ? 75 : 3) : chance(5);
	room = s && s->buf_len ? s->buf_len : SBUF_PAGES * PAGE;
	if (sb) {
		x->flags |= DPUSIM_XFER_STREAM_BUF;
		spos = x->length <= room && chance(90) ? below(room - x->length + 1) :
			below(room + 64);
	}
	left = x->length;
	for (i = 0; i < nb; i++) {
		struct dpusim_block *b = &d->blocks[i];

		cut = i + 1 == nb ? left : below(left + 1);
		left -= cut;
		b->length = cut;
		if (sb) {
			b->addr = spos;
			spos += cut + (chance(10) ? below(16) : 0);
		} else if (!(x->flags & DPUSIM_XFER_FROM_DPU)) {
			b->addr = (uintptr_t)f->src + below(SRC_PAGES * PAGE - cut + 1);
		} else if (dpos + cut + 8 <= DST_PAGES * PAGE) {
			b->addr = (uintptr_t)f->dst + dpos;	/* guards between */
			dpos += cut + 8 + 8 * below(3);
		} else {
			b->addr = (uintptr_t)f->ro;		/* EFAULT */
		}
	}
	/* at most one defect (a third of the time); the errno follows */
	switch (below(54)) {
	case 0: x->flags |= 1U << (5 + below(27)); break;
	case 1: x->__reserved = 1 + below(1000); break;
	case 2: x->flags |= DPUSIM_XFER_WRAM; break;
	case 3: x->flags |= DPUSIM_XFER_NO_LENGTH_CHECK; break;
	case 4:
		x->nr_dpus = 2;
		d->dpus[1] = (struct dpusim_xfer_dpu){ .dpu = (d->dpus[0].dpu + 1) % nr };
		break;
	case 5: x->nr_dpus = 0; break;
	case 6: x->offset += chance(50) ? 8 : 1; break;
	case 7: x->offset = s ? s->mem_size - below(8) : UINT64_MAX - 7; break;
	case 8: d->dpus[0].dpu = (d->dpus[0].dpu + 1 + below(nr - 1)) % nr; break;
	case 9: d->dpus[0].dpu = nr + below(1000); break;
	case 10: d->blocks[nb - 1].length += 8; break;
	case 11: d->dpus[0].nr_blocks = nb - 1; break;
	case 12: x->dpus = chance(50) ? 0 : (uintptr_t)f->hole; break;
	case 13: x->blocks = (uintptr_t)f->hole; break;
	case 14:
		if (d->blocks[0].length)
			d->blocks[0].addr = (uintptr_t)f->hole + below(PAGE);
		break;
	case 15: d->size = below(offsetofend(struct dpusim_xfer, blocks)); x->size = d->size; break;
	case 16: d->size = sizeof(*x) + 8; x->size = d->size;
		d->u.raw[sizeof(*x) + below(8)] = 1; break;
	case 17: d->use_argp = true; d->argp = (uintptr_t)f->hole; break;
	case 18:	/* a block across the buffer's end (or at it), past it */
		if (sb) {
			i = below(nb);
			d->blocks[i].addr = chance(50) ? room - below(d->blocks[i].length + 1) :
					    room + below(1 << 20);
		}
		break;
	default: break;
	}
	d->expect = stream_xfer_expect(f, d);
}

/* A successful move of the exact phase: the model follows it. */
static void apply_stream_xfer(struct fz *f, const struct desc *d)
{
	static uint8_t buf[UP_BYTES + SRC_PAGES * PAGE];
	const struct dpusim_xfer *x = &d->u.x;
	struct fstream *s = &f->st[x->stream];
	/*
	 * DPUSIM_XFER_STREAM_BUF: offsets in the stream's buffer, which the
	 * shadow of sbuf follows (the moves run in order: a move up reads
	 * what those queued before it wrote)
	 */
	bool sb = x->flags & DPUSIM_XFER_STREAM_BUF;
	uint8_t *sbase = sb ? f->sbuf_shadow + (s->buf - (uintptr_t)f->sbuf) : NULL;
	uint64_t at = 0;
	uint32_t i;

	if (x->flags & DPUSIM_XFER_FROM_DPU) {
		fs_expect(s, buf);
		f->xs_down++;
		f->sb_down += sb;
		for (i = 0; i < x->nr_blocks; at += d->blocks[i++].length)
			if (d->blocks[i].length)
				memcpy(sb ? sbase + d->blocks[i].addr :
				       f->dst_shadow +
				       (d->blocks[i].addr - (uintptr_t)f->dst),
				       buf + at, d->blocks[i].length);
		s->cursor++;
		return;
	}
	for (i = 0; i < x->nr_blocks; at += d->blocks[i++].length)
		memcpy(buf + at, sb ? sbase + d->blocks[i].addr :
		       (const void *)(uintptr_t)d->blocks[i].addr,
		       d->blocks[i].length);
	fs_up(s, x->offset, x->length, buf);
	f->xs_up++;
	f->sb_up += sb;
}

/* An empty stream's tokens read through a mapping: as modelled? */
static bool check_up_bytes(struct fz *f, uint32_t id)
{
	const struct fstream *s = &f->st[id];
	uint64_t len = fs_offset(s, s->nr_tokens) + DPUSIM_STREAM_HEADER;
	const uint8_t *p = mmap(NULL, PAGE * ((len + PAGE - 1) / PAGE), PROT_READ,
				MAP_SHARED, f->fd, DPUSIM_MMAP_STREAM(id));
	bool ok;

	if (p == MAP_FAILED) {
		fprintf(stderr, "fuzz: mmap of stream %u: %s\n", id, strerror(errno));
		return false;
	}
	ok = !memcmp(p, s->up, len);
	if (!ok)
		fprintf(stderr, "fuzz: stream %u (%u tokens written): its bytes differ from the model\n",
			id, s->nr_tokens);
	munmap((void *)p, PAGE * ((len + PAGE - 1) / PAGE));
	return ok;
}

/* ------------------------------------------------ /dev/dpusim/tm */

/*
 * One context with a small world: a mapped CQ, a region over a guarded
 * buffer (and one without LOCAL_WRITE), an SRQ, a QP connected to it, a
 * second QP never connected.  The generators build a valid call of each
 * TM ioctl, or one with exactly one defect whose errno the header fixes,
 * or a random one.  The ring is drained after every call, so the
 * completions of one call always fit and EOVERFLOW never comes.
 */
#define TMW_BUF		(16 * PAGE)

struct tmw {
	int fd;
	struct tm_cq cq;
	uint32_t srq, srq_num, qp, qp_num, qp2, qp2_num, lkey, lkey_ro, dead_lkey;
	uint8_t *buf;			/* TMW_BUF between guard pages */
	uint8_t *hole;			/* an unmapped page */
	uint8_t *ro;			/* a read-only page */
	struct dpusim_tm_ops_wr ow[4];
	struct dpusim_tm_recv_wr rw[4];
	struct dpusim_tm_send_wr sw[4];
	struct dpusim_tm_sge sge[4];
	uint8_t msg[256];
};

static struct tmw *TMW;

static const int allowed_tm_common[] = { EFAULT, EINVAL, E2BIG, ENOMEM,
					 ENODEV, EOVERFLOW, 0 };
static const int allowed_tm_reg[] = { EOVERFLOW, EBADF, ENOSPC, 0 };
static const int allowed_tm_handle[] = { ENOENT, 0 };
static const int allowed_tm_create[] = { ENOENT, ENOSPC, 0 };
static const int allowed_tm_destroy_cq[] = { ENOENT, EBUSY, 0 };
static const int allowed_tm_connect[] = { ENOENT, EACCES, EISCONN, 0 };
static const int allowed_tm_srq_post[] = { ENOENT, EACCES, ECONNRESET, 0 };
static const int allowed_tm_send[] = { ENOENT, EACCES, ENOTCONN, ECONNRESET,
				       EAGAIN, EREMOTEIO, 0 };

static bool in_list(const int *e, int err)
{
	for (; *e; e++)
		if (*e == err)
			return true;
	return false;
}

static bool tm_allowed(unsigned long cmd, int err)
{
	if (in_list(allowed_tm_common, err))
		return true;
	switch (cmd) {
	case DPUSIM_IOCTL_TM_QUERY: return false;
	case DPUSIM_IOCTL_TM_REG_MR: return in_list(allowed_tm_reg, err);
	case DPUSIM_IOCTL_TM_DEREG_MR:
	case DPUSIM_IOCTL_TM_DESTROY_SRQ:
	case DPUSIM_IOCTL_TM_DESTROY_QP: return in_list(allowed_tm_handle, err);
	case DPUSIM_IOCTL_TM_CREATE_CQ: return err == ENOSPC;
	case DPUSIM_IOCTL_TM_DESTROY_CQ: return in_list(allowed_tm_destroy_cq, err);
	case DPUSIM_IOCTL_TM_CREATE_SRQ:
	case DPUSIM_IOCTL_TM_CREATE_QP: return in_list(allowed_tm_create, err);
	case DPUSIM_IOCTL_TM_CONNECT: return in_list(allowed_tm_connect, err);
	case DPUSIM_IOCTL_TM_POST_SRQ_OPS:
	case DPUSIM_IOCTL_TM_POST_SRQ_RECV: return in_list(allowed_tm_srq_post, err);
	case DPUSIM_IOCTL_TM_POST_SEND: return in_list(allowed_tm_send, err);
	default: return err == ENOTTY;
	}
}

/* The struct-level defects every TM ioctl has (size, tail, pointer). */
static bool tm_struct_defect(struct desc *d, uint32_t size, uint32_t min)
{
	switch (below(14)) {
	case 0:
		d->size = below(min);
		d->u.i.size = d->size;
		d->expect = EINVAL;
		return true;
	case 1:
		d->size = size + 8;
		d->u.i.size = d->size;
		d->u.raw[size + below(8)] = 1 + below(255);
		d->expect = E2BIG;
		return true;
	case 2:
		d->argp = chance(50) ? 0 : (uintptr_t)TMW->hole + below(PAGE);
		d->use_argp = true;
		d->expect = EFAULT;
		return true;
	default:
		return false;
	}
}

static void tm_begin(struct desc *d, unsigned long cmd, uint32_t size)
{
	memset(d->u.raw, 0, sizeof(d->u.raw));
	d->cmd = cmd;
	d->tm = true;
	d->size = size;
	d->u.i.size = size;
	d->exact = true;
	d->expect = 0;
}

/* A random struct: the errno is not fixed, only allowed. */
static void tm_randomize(struct desc *d)
{
	size_t i;

	for (i = 4; i < d->size && i < sizeof(d->u.raw); i++)
		d->u.raw[i] = chance(70) ? 0 : rnd();
	d->expect = -1;
	d->exact = false;
}

static void gen_tm_query(struct fz *f, struct desc *d)
{
	struct dpusim_tm_query *q = (void *)d->u.raw;

	(void)f;
	tm_begin(d, DPUSIM_IOCTL_TM_QUERY, sizeof(*q));
	if (tm_struct_defect(d, sizeof(*q), offsetofend(struct dpusim_tm_query, cap_flags)))
		return;
	if (chance(20)) {
		q->flags = 1U << below(32);
		d->expect = EINVAL;
	}
}

static void gen_tm_reg_mr(struct fz *f, struct desc *d)
{
	struct dpusim_tm_reg_mr *r = (void *)d->u.raw;

	(void)f;
	tm_begin(d, DPUSIM_IOCTL_TM_REG_MR, sizeof(*r));
	r->addr = (uintptr_t)TMW->buf + below(TMW_BUF / 2);
	r->length = 1 + below(TMW_BUF / 2);
	r->access = below(8);
	d->expect = -1;		/* ENOMEM (memlock), ENOSPC (regions) */
	if (tm_struct_defect(d, sizeof(*r), offsetofend(struct dpusim_tm_reg_mr, __reserved)))
		return;
	switch (below(12)) {
	case 0: r->flags = 2U << below(31); d->expect = EINVAL; break;
	case 1: r->access = 8U << below(29); d->expect = EINVAL; break;
	case 2: r->length = 0; d->expect = EINVAL; break;
	case 3: r->__reserved = 1 + below(9); d->expect = EINVAL; break;
	case 4: r->rank_fd = 1 + below(9); d->expect = EINVAL; break;
	case 5: r->dpu = 1 + below(9); d->expect = EINVAL; break;
	case 6: r->length = DPUSIM_TM_MAX_MSG + 1 + below(PAGE); d->expect = E2BIG; break;
	case 7: r->addr = ~0ULL - below(PAGE); r->length = PAGE; d->expect = EOVERFLOW; break;
	case 8: r->addr = (uintptr_t)TMW->hole; r->length = PAGE; d->expect = EFAULT; break;
	case 9: r->flags = DPUSIM_TM_MR_MRAM; r->rank_fd = 1000 + below(9);
		d->expect = EBADF; break;
	case 10: r->flags = DPUSIM_TM_MR_MRAM; r->rank_fd = TMW->fd;
		d->expect = ENODEV; break;
	default: break;
	}
	if (chance(5))
		tm_randomize(d);
}

/* A destroy of a handle nobody has (ENOENT) or a defect; never the world's. */
static void gen_tm_destroy(struct desc *d, unsigned long cmd)
{
	struct dpusim_tm_destroy *x = (void *)d->u.raw;

	tm_begin(d, cmd, sizeof(*x));
	x->handle = 0x40000000U + below(1U << 20);
	d->expect = ENOENT;
	if (cmd == DPUSIM_IOCTL_TM_DEREG_MR && chance(30))
		x->handle = TMW->dead_lkey;	/* deregistered before */
	if (tm_struct_defect(d, sizeof(*x), offsetofend(struct dpusim_tm_destroy, __reserved)))
		return;
	switch (below(6)) {
	case 0: x->flags = 1U << below(32); d->expect = EINVAL; break;
	case 1: x->__reserved = 1 + below(9); d->expect = EINVAL; break;
	case 2:	/* the world's CQ: an SRQ and QPs use it */
		if (cmd == DPUSIM_IOCTL_TM_DESTROY_CQ) {
			x->handle = TMW->cq.handle;
			d->expect = EBUSY;
		}
		break;
	default: break;
	}
}

static void gen_tm_dereg(struct fz *f, struct desc *d) { (void)f; gen_tm_destroy(d, DPUSIM_IOCTL_TM_DEREG_MR); }
static void gen_tm_destroy_cq(struct fz *f, struct desc *d) { (void)f; gen_tm_destroy(d, DPUSIM_IOCTL_TM_DESTROY_CQ); }
static void gen_tm_destroy_srq(struct fz *f, struct desc *d) { (void)f; gen_tm_destroy(d, DPUSIM_IOCTL_TM_DESTROY_SRQ); }
static void gen_tm_destroy_qp(struct fz *f, struct desc *d) { (void)f; gen_tm_destroy(d, DPUSIM_IOCTL_TM_DESTROY_QP); }

static void gen_tm_create_cq(struct fz *f, struct desc *d)
{
	struct dpusim_tm_create_cq *q = (void *)d->u.raw;

	(void)f;
	tm_begin(d, DPUSIM_IOCTL_TM_CREATE_CQ, sizeof(*q));
	q->cqe = 1 + below(64);
	d->expect = -1;		/* ENOSPC once DPUSIM_TM_MAX_CQ are made */
	if (tm_struct_defect(d, sizeof(*q), offsetofend(struct dpusim_tm_create_cq, mmap_size)))
		return;
	switch (below(6)) {
	case 0: q->flags = 1U << below(32); d->expect = EINVAL; break;
	case 1: q->cqe = 0; d->expect = EINVAL; break;
	case 2: q->cqe = DPUSIM_TM_MAX_CQE + 1 + below(1000); d->expect = E2BIG; break;
	default: break;
	}
}

static void gen_tm_create_srq(struct fz *f, struct desc *d)
{
	struct dpusim_tm_create_srq *s = (void *)d->u.raw;

	(void)f;
	tm_begin(d, DPUSIM_IOCTL_TM_CREATE_SRQ, sizeof(*s));
	s->cq_handle = TMW->cq.handle;
	s->max_num_tags = 1 + below(8);
	s->max_ops = 1 + below(8);
	s->max_wr = 1 + below(8);
	s->max_sge = 1 + below(4);
	d->expect = -1;
	if (tm_struct_defect(d, sizeof(*s), offsetofend(struct dpusim_tm_create_srq, __reserved)))
		return;
	switch (below(12)) {
	case 0: s->flags = 1U << below(32); d->expect = EINVAL; break;
	case 1: s->__reserved = 1; d->expect = EINVAL; break;
	case 2: s->max_num_tags = 0; d->expect = EINVAL; break;
	case 3: s->max_ops = 0; d->expect = EINVAL; break;
	case 4: s->max_wr = 0; d->expect = EINVAL; break;
	case 5: s->max_sge = 0; d->expect = EINVAL; break;
	case 6: s->max_num_tags = DPUSIM_TM_MAX_NUM_TAGS + 1; d->expect = E2BIG; break;
	case 7: s->max_ops = DPUSIM_TM_MAX_OPS + 1; d->expect = E2BIG; break;
	case 8: s->max_wr = DPUSIM_TM_MAX_SRQ_WR + 1; d->expect = E2BIG; break;
	case 9: s->max_sge = DPUSIM_TM_MAX_SGE + 1; d->expect = E2BIG; break;
	case 10: s->cq_handle = 0x40000000U + below(1000); d->expect = ENOENT; break;
	default: break;
	}
}

static void gen_tm_create_qp(struct fz *f, struct desc *d)
{
	struct dpusim_tm_create_qp *q = (void *)d->u.raw;

	(void)f;
	tm_begin(d, DPUSIM_IOCTL_TM_CREATE_QP, sizeof(*q));
	q->cq_handle = TMW->cq.handle;
	q->max_sge = 1 + below(4);
	d->expect = -1;
	if (tm_struct_defect(d, sizeof(*q), offsetofend(struct dpusim_tm_create_qp, qp_num)))
		return;
	switch (below(6)) {
	case 0: q->flags = 1U << below(32); d->expect = EINVAL; break;
	case 1: q->max_sge = 0; d->expect = EINVAL; break;
	case 2: q->max_sge = DPUSIM_TM_MAX_SGE + 1 + below(9); d->expect = E2BIG; break;
	case 3: q->cq_handle = 0x40000000U + below(1000); d->expect = ENOENT; break;
	default: break;
	}
}

static void gen_tm_connect(struct fz *f, struct desc *d)
{
	struct dpusim_tm_connect *c = (void *)d->u.raw;

	(void)f;
	tm_begin(d, DPUSIM_IOCTL_TM_CONNECT, sizeof(*c));
	c->qp_handle = TMW->qp;		/* connected at setup */
	c->srq_num = TMW->srq_num;
	d->expect = EISCONN;
	if (tm_struct_defect(d, sizeof(*c), offsetofend(struct dpusim_tm_connect, srq_num)))
		return;
	switch (below(5)) {
	case 0: c->flags = 1U << below(32); d->expect = EINVAL; break;
	case 1: c->qp_handle = 0x40000000U + below(1000); d->expect = ENOENT; break;
	case 2: c->qp_handle = TMW->qp2; c->srq_num = 0x7fff0000U + below(1000);
		d->expect = ENOENT; break;
	default: break;
	}
}

/* POST_*: the generic top-level defects. */
static bool tm_post_defect(struct desc *d, struct dpusim_tm_post *p, bool send)
{
	if (tm_struct_defect(d, sizeof(*p), offsetofend(struct dpusim_tm_post, wrs)))
		return true;
	switch (below(12)) {
	case 0: p->flags = 2U << below(31); d->expect = EINVAL; return true;
	case 1: if (!send) { p->flags = 1; d->expect = EINVAL; return true; }
		p->remote_qpn = 1 + below(100); d->expect = EINVAL; return true;
	case 2: p->nr_wr = 0; d->expect = EINVAL; return true;
	case 3: p->nr_wr = DPUSIM_TM_MAX_WR + 1 + below(100); d->expect = E2BIG; return true;
	case 4: p->wrs = (uintptr_t)TMW->hole; d->expect = EFAULT; return true;
	case 5: p->handle = 0x40000000U + below(1000); d->expect = ENOENT; return true;
	default: return false;
	}
}

static void gen_tm_srq_ops(struct fz *f, struct desc *d)
{
	struct dpusim_tm_post *p = (void *)d->u.raw;
	struct dpusim_tm_ops_wr *w = TMW->ow;

	(void)f;
	tm_begin(d, DPUSIM_IOCTL_TM_POST_SRQ_OPS, sizeof(*p));
	memset(w, 0, sizeof(TMW->ow));
	TMW->sge[0] = (struct dpusim_tm_sge){ (uintptr_t)TMW->buf, 64, TMW->lkey };
	w[0].opcode = DPUSIM_TM_WR_TAG_ADD;
	w[0].sg_list = (uintptr_t)TMW->sge;
	w[0].num_sge = 1;
	w[0].tag = below(4);
	w[0].mask = ~0ULL;
	w[0].flags = DPUSIM_TM_OPS_SIGNALED;
	w[1].opcode = DPUSIM_TM_WR_TAG_DEL;	/* the ADD just before */
	w[1].flags = DPUSIM_TM_OPS_SIGNALED;
	p->handle = TMW->srq;
	p->nr_wr = 1;
	p->wrs = (uintptr_t)w;
	d->expect = 0;		/* the exact phase deletes what it added */
	if (tm_post_defect(d, p, false))
		return;
	switch (below(10)) {
	case 0: w[0].opcode = 3 + below(100); d->expect = EINVAL; break;
	case 1: w[0].__reserved = 1; d->expect = EINVAL; break;
	case 2: w[0].flags = 4U << below(29); d->expect = EINVAL; break;
	case 3: w[0].num_sge = 5; d->expect = EINVAL; break;	/* max_sge 4 */
	case 4: TMW->sge[0].lkey = TMW->lkey_ro; d->expect = EACCES; break;
	case 5: TMW->sge[0].length = TMW_BUF + 1; d->expect = EINVAL; break;
	case 6: TMW->sge[0].lkey = 0x7fff0000U; d->expect = EINVAL; break;
	case 7: w[0].sg_list = (uintptr_t)TMW->hole; d->expect = EFAULT; break;
	case 8:	/* a handle never issued */
		w[0].opcode = DPUSIM_TM_WR_TAG_DEL;
		w[0].handle = chance(50) ? 0 : 0xfffffff0U;
		d->expect = EINVAL;
		break;
	default:
		p->nr_wr = 2;	/* ADD then DEL of a handle the kernel writes back */
		d->expect = -1;
		break;
	}
	if (chance(5))
		tm_randomize(d);
}

static void gen_tm_srq_recv(struct fz *f, struct desc *d)
{
	struct dpusim_tm_post *p = (void *)d->u.raw;
	struct dpusim_tm_recv_wr *w = TMW->rw;

	(void)f;
	tm_begin(d, DPUSIM_IOCTL_TM_POST_SRQ_RECV, sizeof(*p));
	memset(w, 0, sizeof(TMW->rw));
	TMW->sge[0] = (struct dpusim_tm_sge){ (uintptr_t)TMW->buf + PAGE, 256, TMW->lkey };
	w[0].sg_list = (uintptr_t)TMW->sge;
	w[0].num_sge = 1;
	p->handle = TMW->srq;
	p->nr_wr = 1;
	p->wrs = (uintptr_t)w;
	d->expect = -1;		/* ENOMEM once max_wr buffers wait */
	if (tm_post_defect(d, p, false))
		return;
	switch (below(8)) {
	case 0: w[0].__reserved = 1; d->expect = EINVAL; break;
	case 1: w[0].num_sge = 5; d->expect = EINVAL; break;
	case 2: TMW->sge[0].lkey = TMW->lkey_ro; d->expect = EACCES; break;
	case 3: TMW->sge[0].lkey = 0x7fff0000U; d->expect = EINVAL; break;
	case 4: w[0].sg_list = 8; d->expect = EFAULT; break;
	default: break;
	}
}

static void gen_tm_send(struct fz *f, struct desc *d)
{
	struct dpusim_tm_post *p = (void *)d->u.raw;
	struct dpusim_tm_send_wr *w = TMW->sw;
	uint32_t len = 16 + below(64);

	(void)f;
	tm_begin(d, DPUSIM_IOCTL_TM_POST_SEND, sizeof(*p));
	memset(w, 0, sizeof(TMW->sw));
	tm_tmh(TMW->msg, DPUSIM_TM_TMH_EAGER, below(100), below(4));
	TMW->sge[0] = (struct dpusim_tm_sge){ (uintptr_t)TMW->msg, len, 0 };
	w[0].opcode = DPUSIM_TM_WR_SEND;
	w[0].flags = DPUSIM_TM_SEND_INLINE | (chance(50) ? DPUSIM_TM_SEND_SIGNALED : 0);
	w[0].sg_list = (uintptr_t)TMW->sge;
	w[0].num_sge = 1;
	p->handle = TMW->qp;
	p->nr_wr = 1;
	p->wrs = (uintptr_t)w;
	d->expect = -1;		/* EAGAIN: unexpected without an untagged buffer */
	if (tm_post_defect(d, p, true))
		return;
	switch (below(14)) {
	case 0: TMW->sge[0].length = below(16); d->expect = EINVAL; break;
	case 1: TMW->msg[0] = 4 + below(250); d->expect = EINVAL; break;
	case 2: TMW->msg[0] = DPUSIM_TM_TMH_RNDV; TMW->sge[0].length = 16 + below(16);
		d->expect = EINVAL; break;
	case 3: TMW->msg[0] = DPUSIM_TM_TMH_RNDV; TMW->sge[0].length = 65 + below(100);
		d->expect = EINVAL; break;
	case 4: TMW->sge[0].length = DPUSIM_TM_MAX_INLINE + 1; d->expect = E2BIG; break;
	case 5: w[0].opcode = DPUSIM_TM_WR_RDMA_READ; d->expect = EINVAL; break;
	case 6: w[0].num_sge = 5; d->expect = EINVAL; break;		/* max_sge 4 */
	case 7: w[0].__reserved = 1; d->expect = EINVAL; break;
	case 8: w[0].__reserved2 = 1; d->expect = EINVAL; break;
	case 9: p->handle = TMW->qp2; d->expect = ENOTCONN; break;
	case 10: TMW->sge[0].addr = (uintptr_t)TMW->hole; d->expect = EFAULT; break;
	case 11:	/* FROM_SRQ to a QP that is not connected to it */
		p->flags = DPUSIM_TM_POST_FROM_SRQ;
		p->handle = TMW->srq;
		p->remote_qpn = TMW->qp2_num;
		d->expect = ENOENT;
		break;
	case 12:	/* FROM_SRQ: a reply of at most 64 bytes to the QP */
		p->flags = DPUSIM_TM_POST_FROM_SRQ;
		p->handle = TMW->srq;
		p->remote_qpn = TMW->qp_num;
		TMW->msg[0] = DPUSIM_TM_TMH_NO_TAG;
		TMW->sge[0].length = chance(50) ? 65 + below(100) : 16 + below(49);
		d->expect = TMW->sge[0].length > DPUSIM_TM_MAX_QP_RECV ? E2BIG : 0;
		break;
	default: break;
	}
	if (chance(5))
		tm_randomize(d);
}

/* Unknown command numbers on the TM fd (the rank's among them). */
static void gen_tm_unknown(struct fz *f, struct desc *d)
{
	static const unsigned long rank_cmds[] = {
		DPUSIM_IOCTL_RANK_INFO, DPUSIM_IOCTL_XFER, DPUSIM_IOCTL_SYNC,
		DPUSIM_IOCTL_STREAM_CREATE, DPUSIM_IOCTL_STREAM_OPEN,
		DPUSIM_IOCTL_STREAM_CLOSE, DPUSIM_IOCTL_STREAM_SEEK,
	};

	(void)f;
	tm_begin(d, 0, 16);
	switch (below(3)) {
	case 0: d->cmd = rank_cmds[below(ARRAY_SIZE(rank_cmds))]; break;
	case 1: d->cmd = _IO(DPUSIM_TYPE, DPUSIM_CMD_TM_POST_SEND + 1 + below(40)); break;
	default: d->cmd = _IOWR(DPUSIM_TYPE, DPUSIM_CMD_TM_QUERY + below(13), 16); break;
	}
	d->expect = ENOTTY;
}

/* The world: one context, objects every generator names. */
static int tmw_setup(void)
{
	uint8_t *m;
	int err;

	TMW = calloc(1, sizeof(*TMW));
	if (!TMW)
		return ENOMEM;
	TMW->fd = tm_open();
	if (TMW->fd < 0)
		return errno;
	m = mmap(NULL, TMW_BUF + 3 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (m == MAP_FAILED)
		return errno;
	TMW->buf = m + PAGE;
	TMW->ro = m + PAGE + TMW_BUF;
	TMW->hole = m;
	if (mprotect(m, PAGE, PROT_NONE) || mprotect(TMW->ro, PAGE, PROT_READ) ||
	    mprotect(TMW->ro + PAGE, PAGE, PROT_NONE))
		return errno;
	err = tm_create_cq(TMW->fd, 256, &TMW->cq);
	err = err ?: tm_reg_mr(TMW->fd, TMW->buf, TMW_BUF,
			       DPUSIM_TM_ACCESS_LOCAL_WRITE | DPUSIM_TM_ACCESS_REMOTE_READ,
			       &TMW->lkey);
	err = err ?: tm_reg_mr(TMW->fd, TMW->buf, PAGE, DPUSIM_TM_ACCESS_REMOTE_READ,
			       &TMW->lkey_ro);
	err = err ?: tm_reg_mr(TMW->fd, TMW->buf, PAGE, 0, &TMW->dead_lkey);
	err = err ?: tm_destroy(TMW->fd, DPUSIM_IOCTL_TM_DEREG_MR, TMW->dead_lkey);
	err = err ?: tm_create_srq(TMW->fd, TMW->cq.handle, 8, 4, 8, 4, &TMW->srq,
				   &TMW->srq_num);
	err = err ?: tm_create_qp(TMW->fd, TMW->cq.handle, 4, &TMW->qp, &TMW->qp_num);
	err = err ?: tm_create_qp(TMW->fd, TMW->cq.handle, 4, &TMW->qp2, &TMW->qp2_num);
	err = err ?: tm_connect(TMW->fd, TMW->qp, TMW->srq_num);
	return err;
}

static void tmw_teardown(void)
{
	if (!TMW)
		return;
	tm_cq_unmap(&TMW->cq);
	if (TMW->fd >= 0)
		close(TMW->fd);
	munmap(TMW->hole, TMW_BUF + 3 * PAGE);
	free(TMW);
	TMW = NULL;
}

/* The model of a successful transfer to the DPUs: blocks, then zeros. */
static void apply_xfer(struct fz *f, const struct desc *d)
{
	const struct dpusim_xfer *x = &d->u.x;
	const struct dpusim_block *b = d->blocks;
	bool wram = x->flags & DPUSIM_XFER_WRAM;
	uint64_t win = wram ? WIN_WRAM : WIN_MRAM;
	uint32_t i, k;

	if (!d->exact || x->offset + x->length > win)
		return;
	for (i = 0; i < x->nr_dpus; b += d->dpus[i++].nr_blocks) {
		uint32_t dpu = d->dpus[i].dpu;
		uint8_t *mem = wram ? f->wram[dpu] : f->mram[dpu];
		uint64_t pos = 0, n;

		if (dpu >= WIN_DPUS)
			continue;
		for (k = 0; k < d->dpus[i].nr_blocks && pos < x->length; k++) {
			n = b[k].length < x->length - pos ? b[k].length : x->length - pos;
			if (!n)
				continue;
			if (x->flags & DPUSIM_XFER_FROM_DPU)
				memcpy(f->dst_shadow + (b[k].addr - (uintptr_t)f->dst),
				       mem + x->offset + pos, n);
			else
				memcpy(mem + x->offset + pos, (void *)(uintptr_t)b[k].addr, n);
			pos += n;
		}
		if (!(x->flags & DPUSIM_XFER_FROM_DPU))
			memset(mem + x->offset + pos, 0, x->length - pos);
	}
}

static const struct op ops[] = {
	{ "xfer", gen_xfer, apply_xfer },
	{ "xfer-random", gen_xfer_random, NULL },
	{ "sync", gen_sync, NULL },
	{ "rank-info", gen_info, NULL },
	{ "launch", gen_launch, NULL },
	{ "dpu-status", gen_status, NULL },
	{ "worker-open", gen_worker_open, NULL },
	{ "stream-create", gen_stream_create, NULL },
	{ "stream-open", gen_stream_open, NULL },
	{ "stream-close", gen_stream_close, NULL },
	{ "stream-seek", gen_stream_seek, NULL },
	{ "stream-xfer", gen_stream_xfer, apply_stream_xfer },
	{ "unknown", gen_unknown, NULL },
	/* /dev/dpusim/tm, from NR_RANK_OPS on */
	{ "tm-query", gen_tm_query, NULL, DPUSIM_IOCTL_TM_QUERY },
	{ "tm-reg-mr", gen_tm_reg_mr, NULL, DPUSIM_IOCTL_TM_REG_MR },
	{ "tm-dereg-mr", gen_tm_dereg, NULL, DPUSIM_IOCTL_TM_DEREG_MR },
	{ "tm-create-cq", gen_tm_create_cq, NULL, DPUSIM_IOCTL_TM_CREATE_CQ },
	{ "tm-destroy-cq", gen_tm_destroy_cq, NULL, DPUSIM_IOCTL_TM_DESTROY_CQ },
	{ "tm-create-srq", gen_tm_create_srq, NULL, DPUSIM_IOCTL_TM_CREATE_SRQ },
	{ "tm-destroy-srq", gen_tm_destroy_srq, NULL, DPUSIM_IOCTL_TM_DESTROY_SRQ },
	{ "tm-create-qp", gen_tm_create_qp, NULL, DPUSIM_IOCTL_TM_CREATE_QP },
	{ "tm-destroy-qp", gen_tm_destroy_qp, NULL, DPUSIM_IOCTL_TM_DESTROY_QP },
	{ "tm-connect", gen_tm_connect, NULL, DPUSIM_IOCTL_TM_CONNECT },
	{ "tm-post-srq-ops", gen_tm_srq_ops, NULL, DPUSIM_IOCTL_TM_POST_SRQ_OPS },
	{ "tm-post-srq-recv", gen_tm_srq_recv, NULL, DPUSIM_IOCTL_TM_POST_SRQ_RECV },
	{ "tm-post-send", gen_tm_send, NULL, DPUSIM_IOCTL_TM_POST_SEND },
	{ "tm-unknown", gen_tm_unknown, NULL, 0 },
};

#define NR_RANK_OPS	13

/* Is @err one the header allows for ioctl @cmd? */
static bool allowed(unsigned long cmd, int err)
{
	const int *e;

	switch (cmd) {
	case DPUSIM_IOCTL_XFER: e = allowed_xfer; break;
	case DPUSIM_IOCTL_SYNC: e = allowed_sync; break;
	case DPUSIM_IOCTL_RANK_INFO: e = allowed_info; break;
	case DPUSIM_IOCTL_LAUNCH: e = allowed_launch; break;
	case DPUSIM_IOCTL_DPU_STATUS: e = allowed_status; break;
	case DPUSIM_IOCTL_WORKER_OPEN: e = allowed_worker_open; break;
	case DPUSIM_IOCTL_STREAM_CREATE: e = allowed_stream_create; break;
	case DPUSIM_IOCTL_STREAM_OPEN:
	case DPUSIM_IOCTL_STREAM_CLOSE:
	case DPUSIM_IOCTL_STREAM_SEEK: e = allowed_stream_cmd; break;
	default: e = allowed_unknown; break;
	}
	for (; *e; e++)
		if (*e == err)
			return true;
	return false;
}

/* ------------------------------------------------------------ checks */

static atomic_ulong total_calls;

/* Calls that reached the driver (not EBADF on a closed fd) are counted. */
static int do_call(int fd, struct desc *d)
{
	int err = ioctl(fd, d->cmd, d->use_argp ? (void *)(uintptr_t)d->argp :
			(void *)d->u.raw) ? errno : 0;

	if (err != EBADF)
		atomic_fetch_add(&total_calls, 1);
	return err;
}

/*
 * No move in flight (a synchronous transfer waited for them): the rank
 * pins the pages of the streams' registered buffers, nothing else.
 */
static bool check_pins(struct fz *f)
{
	long long pin = sysfs_rank_attr(RANK_IDX, "pinned_pages");
	uint64_t want = 0;
	uint32_t id;

	for (id = 0; id < f->nst; id++)
		want += (f->st[id].buf_len + PAGE - 1) / PAGE;
	if (pin >= 0 && (uint64_t)pin != want) {
		fprintf(stderr, "fuzz: pinned_pages %lld, the registered buffers are %llu pages\n",
			pin, (unsigned long long)want);
		return false;
	}
	return true;
}

/* Read the modelled window back and compare; false on a mismatch. */
static bool check_window(struct fz *f)
{
	static uint8_t back[WIN_MRAM];
	struct dpusim_xfer_dpu dd = { .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)back };
	struct dpusim_xfer x = {
		.size = sizeof(x), .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&dd, .blocks = (uintptr_t)&b,
	};
	uint32_t i;

	for (i = 0; i < WIN_DPUS; i++) {
		dd.dpu = i;
		x.flags = DPUSIM_XFER_FROM_DPU;
		x.length = b.length = WIN_MRAM;
		if (ioctl(f->fd, DPUSIM_IOCTL_XFER, &x) || memcmp(back, f->mram[i], WIN_MRAM)) {
			fprintf(stderr, "fuzz: DPU %u MRAM window differs from the model\n", i);
			return false;
		}
		x.flags |= DPUSIM_XFER_WRAM;
		x.length = b.length = WIN_WRAM;
		if (ioctl(f->fd, DPUSIM_IOCTL_XFER, &x) || memcmp(back, f->wram[i], WIN_WRAM)) {
			fprintf(stderr, "fuzz: DPU %u WRAM window differs from the model\n", i);
			return false;
		}
	}
	if (memcmp(f->dst, f->dst_shadow, DST_PAGES * PAGE)) {
		fprintf(stderr, "fuzz: host memory changed that no successful call named\n");
		return false;
	}
	if (memcmp(f->sbuf, f->sbuf_shadow, SBUF_PAGES * PAGE)) {
		fprintf(stderr, "fuzz: the registered buffers differ from what the moves wrote\n");
		return false;
	}
	return check_pins(f) && check_streams(f);
}

static void reopen(struct __test_metadata *_metadata, struct fz *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = open(RANK_NODE, O_RDWR | O_CLOEXEC);	/* waits for queued work */
	ASSERT_LE(0, f->fd);
	memset(f->mram, 0, sizeof(f->mram));
	memset(f->wram, 0, sizeof(f->wram));
	memcpy(f->dst_shadow, f->dst, DST_PAGES * PAGE);
	memcpy(f->sbuf_shadow, f->sbuf, SBUF_PAGES * PAGE);
	f->nst = 0;	/* the streams went with the ownership, */
	/* ... and their buffers (the moves using them ended before) */
	ASSERT_EQ(0, sysfs_rank_attr(RANK_IDX, "pinned_pages"));
}

enum verdict { CALL_OK, CALL_RESYNC, CALL_BAD };

/*
 * One exact-phase call: CALL_BAD (with a message) on a contract violation,
 * CALL_RESYNC when a call the model cannot follow (random pointers)
 * succeeded in writing to the DPUs.
 */
static enum verdict exact_call(struct fz *f)
{
	const struct op *op = &ops[below(100) < 70 ? 0 : 1 + below(NR_RANK_OPS - 1)];
	static struct desc d;
	int err;

	memset(&d, 0, sizeof(d));
	op->gen(f, &d);
	err = do_call(f->fd, &d);
	close_worker(&d, err);
	f->calls++;
	f->errs[err < 160 ? err : 159]++;
	if (err == 0)
		f->ok++;
	if (err && !allowed(d.cmd, err)) {
		fprintf(stderr, "fuzz: %s: errno %d (%s) is not one the header allows\n",
			op->name, err, strerror(err));
		return CALL_BAD;
	}
	if (d.expect >= 0 && err != d.expect && !(d.expect == 0 && err == ENOSPC)) {
		fprintf(stderr, "fuzz: %s: got errno %d (%s), the header says %d (%s); flags %#x size %u\n",
			op->name, err, strerror(err), d.expect, strerror(d.expect),
			d.cmd == DPUSIM_IOCTL_XFER ? d.u.x.flags : 0, d.size);
		return CALL_BAD;
	}
	if (!err && !d.use_argp && is_stream_cmd(d.cmd))
		return stream_apply(f, &d) ? CALL_OK : CALL_BAD;
	if (err || d.cmd != DPUSIM_IOCTL_XFER)
		return CALL_OK;
	if (d.exact && op->apply) {
		op->apply(f, &d);
		return CALL_OK;
	}
	if (d.u.x.flags & DPUSIM_XFER_FROM_DPU) {
		struct dpusim_sync sy = { .size = sizeof(sy) };

		/*
		 * a random read that succeeded: only host memory changed,
		 * once every queued transfer is done (stream moves down)
		 */
		if (ioctl(f->fd, DPUSIM_IOCTL_SYNC, &sy)) {
			fprintf(stderr, "fuzz: SYNC after a random read: %s\n",
				strerror(errno));
			return CALL_BAD;
		}
		memcpy(f->dst_shadow, f->dst, DST_PAGES * PAGE);
		return CALL_OK;
	}
	return CALL_RESYNC;
}

/* ------------------------------------------------------------ workers */

/* ------------------------------------------------ worker stream calls */

/* A worker stream call of the session: its errno must be @want. */
static bool ws_stream_expect(struct fz *f, int w, unsigned long cmd,
			     struct desc *d, int want, const char *what)
{
	int err = ioctl(w, cmd, d->use_argp ? (void *)(uintptr_t)d->argp :
			(void *)d->u.raw) ? errno : 0;

	f->calls++;
	f->errs[err < 160 ? err : 159]++;
	atomic_fetch_add(&total_calls, 1);
	if (err == want)
		return true;
	fprintf(stderr, "fuzz: worker session: %s: errno %d (%s), want %d (%s)\n",
		what, err, strerror(err), want, strerror(want));
	return false;
}

/* WORKER_STREAM_OPEN, _CLOSE or _SEEK as DPU @dpu (-1: none held). */
static bool ws_scmd(struct fz *f, int w, int32_t dpu)
{
	static const unsigned long wcmds[] = {
		DPUSIM_IOCTL_WORKER_STREAM_OPEN, DPUSIM_IOCTL_WORKER_STREAM_CLOSE,
		DPUSIM_IOCTL_WORKER_STREAM_SEEK,
	};
	static const unsigned long rcmds[] = {
		DPUSIM_IOCTL_STREAM_OPEN, DPUSIM_IOCTL_STREAM_CLOSE,
		DPUSIM_IOCTL_STREAM_SEEK,
	};
	static struct desc d;
	struct dpusim_stream_cmd *c = &d.u.scmd;
	uint32_t which = below(3), nr = f->info.nr_dpus;
	struct fstream *s = NULL;
	int want, sdef = 0;
	char what[96];

	memset(&d, 0, sizeof(d));
	d.size = sizeof(*c);
	*c = (struct dpusim_stream_cmd){ .size = sizeof(*c) };
	/* a DPU held mostly opens a free stream, or works on its own */
	if (dpu >= 0 && chance(40))
		which = 0;
	s = fs_pick(f, dpu < 0 ? -1 : which == 0 ? -2 : dpu, &c->id);
	c->core = dpu >= 0 && chance(85) ? (uint32_t)dpu :
		  s && s->core >= 0 && chance(50) ? (uint32_t)s->core : below(nr);
	if (which == 2)
		c->delta = chance(10) ? (chance(50) ? INT_MIN : INT_MAX) :
			   (int32_t)below(9) - 4;
	switch (below(14)) {
	case 0: c->flags = 1U << below(32); break;
	case 1: c->core = chance(50) ? UINT32_MAX : nr + below(1000); break;
	case 2: if (which != 2) c->delta = 1 + below(100); break;
	case 3: d.size = below(offsetofend(struct dpusim_stream_cmd, prev));
		c->size = d.size; sdef = EINVAL; break;
	case 4: d.size = sizeof(*c) + 8; c->size = d.size;
		d.u.raw[sizeof(*c) + below(8)] = 1; sdef = E2BIG; break;
	case 5: d.use_argp = true; d.argp = (uintptr_t)f->hole; sdef = EFAULT; break;
	case 6: d.size = sizeof(*c) + 16; c->size = d.size; break;	/* zeros */
	case 7:	/* a token buffer: a host thread's only (EINVAL first) */
		c->buf = chance(80) ? (uintptr_t)f->sbuf + PAGE * below(SBUF_PAGES) : 0;
		c->buf_len = c->buf && chance(20) ? 0 : 1 + below(PAGE);
		break;
	default: break;
	}
	if (sdef)
		want = sdef;
	else if (c->flags || c->core >= nr || (which != 2 && c->delta) ||
		 c->buf || c->buf_len)
		want = EINVAL;
	else if (dpu < 0 || c->core != (uint32_t)dpu)
		want = EPERM;
	else if (!s)
		want = ENOENT;
	else if (which == 0)
		want = s->core >= 0 ? EBUSY : 0;
	else
		want = s->core != (int32_t)c->core ? EINVAL : 0;
	snprintf(what, sizeof(what), "WORKER_STREAM cmd %u as DPU %d: stream %u core %u delta %d",
		 which, dpu, c->id, c->core, c->delta);
	if (!ws_stream_expect(f, w, wcmds[which], &d, want, what))
		return false;
	if (want)
		return true;
	d.cmd = rcmds[which];	/* the same answer as the rank file's */
	return stream_apply(f, &d);
}

/* The held DPU's modelled windows, read through a mapping: as modelled? */
static bool ws_windows_ok(struct fz *f, int w, uint32_t dpu)
{
	uint8_t *m;
	bool ok;

	m = mmap(NULL, WIN_WRAM, PROT_READ, MAP_SHARED, w, DPUSIM_MMAP_WRAM(dpu));
	if (m == MAP_FAILED)
		return false;
	ok = !memcmp(m, f->wram[dpu], WIN_WRAM);
	munmap(m, WIN_WRAM);
	m = mmap(NULL, WIN_MRAM, PROT_READ, MAP_SHARED, w, DPUSIM_MMAP_MRAM(dpu));
	if (m == MAP_FAILED)
		return false;
	ok = ok && !memcmp(m, f->mram[dpu], WIN_MRAM);
	munmap(m, WIN_MRAM);
	if (!ok)
		fprintf(stderr, "fuzz: worker session: DPU %u's windows differ from the model after a move\n",
			dpu);
	return ok;
}

/* The model's byte of the held DPU at window offset @wo */
static uint8_t *ws_model(struct fz *f, uint32_t dpu, uint64_t wo)
{
	return wo >= DPUSIM_WINDOW_MRAM ? &f->mram[dpu][wo - DPUSIM_WINDOW_MRAM] :
					  &f->wram[dpu][wo];
}

/* WORKER_STREAM_MOVE as DPU @dpu (-1: none held). */
static bool ws_smove(struct fz *f, int w, int32_t dpu)
{
	static struct desc d;
	static uint8_t buf[UP_BYTES + SRC_PAGES * PAGE];
	struct dpusim_worker_stream_move *m = (void *)d.u.raw;
	const uint32_t v1 = offsetofend(struct dpusim_worker_stream_move, blocks);
	uint64_t pos[2] = { 8 * below(32), 8 * below(32) }, len, left, cut, end;
	uint64_t n, used, off, sum = 0, at;
	uint32_t nb = 1 + below(3), i, j, wsize = f->info.wram_size;
	struct fstream *s = NULL;
	bool down, bad_blocks = false, reserved_seen;
	int want, sdef = 0, mr;
	char what[160];

	memset(&d, 0, sizeof(d));
	d.size = sizeof(*m);
	*m = (struct dpusim_worker_stream_move){ .size = sizeof(*m) };
	s = fs_pick(f, dpu, &m->stream);
	down = !s || s->down || chance(40);
	len = 0;
	if (!down) {
		n = 8 * (1 + below(16));
		m->offset = fs_offset(s, s->cursor);
		len = n + 2 * DPUSIM_STREAM_HEADER;
		if (s->cursor >= UP_TOKENS || m->offset + len > UP_BYTES)
			down = true;	/* the model could not follow it */
	}
	if (down) {
		m->flags = DPUSIM_STREAM_MOVE_DOWN;
		m->offset = s ? fs_offset(s, s->cursor) + DPUSIM_STREAM_HEADER : 8;
		len = s ? fs_token(s, s->cursor) + DPUSIM_STREAM_HEADER : 24;
	}
	if (chance(30))
		m->flags |= DPUSIM_STREAM_MOVE_ASYNC;
	/* blocks of at least a byte, one after the other in either window */
	if (len < nb)
		nb = len;
	left = len;
	for (i = 0; i < nb; i++) {
		static const uint64_t room[2] = { WIN_WRAM, WIN_MRAM };

		cut = i + 1 == nb ? left : 1 + below(left - (nb - i - 1));
		left -= cut;
		mr = chance(50);
		if (pos[mr] + cut > room[mr])
			mr = !mr;
		m->blocks[i] = (struct dpusim_window_block){
			(mr ? DPUSIM_WINDOW_MRAM : 0) + pos[mr], cut,
		};
		pos[mr] += cut + 8 * below(3);
	}
	m->nr_blocks = nb;
	switch (below(42)) {
	case 0: m->flags |= 4U << below(30); break;
	case 1: m->nr_blocks = chance(50) ? 0 : 4 + below(100); break;
	case 2: m->__reserved = 1 + below(1000); break;
	case 3: m->blocks[below(nb)].length = 0; break;
	case 4: m->blocks[below(nb)] = (struct dpusim_window_block){ wsize - 4, 8 }; break;
	case 5: m->blocks[below(nb)] = (struct dpusim_window_block){
			DPUSIM_WINDOW_MRAM + f->info.mram_size - 4, 8 }; break;
	case 6: m->blocks[below(nb)] = (struct dpusim_window_block){ DPUSIM_WINDOW_MRAM - 4, 8 }; break;
	case 7: m->offset += 8; break;
	case 8: m->blocks[nb - 1].length += 8; break;
	case 9: d.size = below(v1); m->size = d.size; sdef = EINVAL; break;
	case 10: d.size = v1; m->size = v1; break;	/* the first version */
	case 11: d.size = sizeof(*m) + 8; m->size = d.size;
		d.u.raw[sizeof(*m) + below(8)] = 1; sdef = E2BIG; break;
	case 12: d.use_argp = true; d.argp = (uintptr_t)f->hole; sdef = EFAULT; break;
	case 13: m->next = rnd(); break;	/* an out field: ignored */
	default: break;
	}
	reserved_seen = d.size >= offsetofend(struct dpusim_worker_stream_move, __reserved);
	for (j = 0; j < m->nr_blocks && j < DPUSIM_STREAM_MOVE_MAX_BLOCKS; j++) {
		bool in_m = m->blocks[j].offset >= DPUSIM_WINDOW_MRAM;

		off = in_m ? m->blocks[j].offset - DPUSIM_WINDOW_MRAM : m->blocks[j].offset;
		if (!m->blocks[j].length ||
		    __builtin_add_overflow(off, m->blocks[j].length, &end) ||
		    end > (in_m ? f->info.mram_size : wsize))
			bad_blocks = true;
		sum += m->blocks[j].length;
	}
	/* the errno, in the kernel's order */
	if (sdef)
		want = sdef;
	else if (m->flags & ~(DPUSIM_STREAM_MOVE_DOWN | DPUSIM_STREAM_MOVE_ASYNC) ||
		 !m->nr_blocks || m->nr_blocks > DPUSIM_STREAM_MOVE_MAX_BLOCKS ||
		 (reserved_seen && m->__reserved))
		want = EINVAL;
	else if (dpu < 0)
		want = EPERM;
	else if (bad_blocks)
		want = EINVAL;
	else if (!s)
		want = ENOENT;
	else if (s->core != dpu)
		want = EINVAL;
	else if (m->flags & DPUSIM_STREAM_MOVE_DOWN)
		want = s->cursor == s->nr_tokens ? ENODATA :
		       m->offset != fs_offset(s, s->cursor) + DPUSIM_STREAM_HEADER ||
		       sum != (uint64_t)fs_token(s, s->cursor) + DPUSIM_STREAM_HEADER ?
		       EINVAL : 0;
	else if (s->down || m->offset != fs_offset(s, s->cursor) ||
		 sum < 3 * DPUSIM_STREAM_HEADER || sum % 8)
		want = EINVAL;
	else {
		n = sum - 2 * DPUSIM_STREAM_HEADER;
		used = m->offset - (uint64_t)s->cursor * DPUSIM_STREAM_HEADER;
		want = s->cursor >= s->max_tokens || used + n > s->size ? ENOSPC : 0;
	}
	snprintf(what, sizeof(what), "WORKER_STREAM_MOVE as DPU %d: stream %u flags %#x offset %llu nr_blocks %u size %u",
		 dpu, m->stream, m->flags, (unsigned long long)m->offset,
		 m->nr_blocks, d.size);
	if (!ws_stream_expect(f, w, DPUSIM_IOCTL_WORKER_STREAM_MOVE, &d, want, what))
		return false;
	if (want)
		return true;
	if (d.size >= offsetofend(struct dpusim_worker_stream_move, next) &&
	    m->next != ((m->flags & DPUSIM_STREAM_MOVE_DOWN) ?
			fs_token(s, s->cursor + 1) : 0)) {
		fprintf(stderr, "fuzz: worker session: %s: next %u\n", what, m->next);
		return false;
	}
	if (!(m->flags & DPUSIM_STREAM_MOVE_DOWN)) {
		for (at = 0, j = 0; j < nb; j++)
			for (i = 0; i < m->blocks[j].length; i++)
				buf[at++] = *ws_model(f, dpu, m->blocks[j].offset + i);
		fs_up(s, m->offset, sum, buf);
		f->ws_up++;
		return true;
	}
	fs_expect(s, buf);
	for (at = 0, j = 0; j < nb; j++)
		for (i = 0; i < m->blocks[j].length; i++)
			*ws_model(f, dpu, m->blocks[j].offset + i) = buf[at++];
	s->cursor++;
	f->ws_down++;
	if (m->flags & DPUSIM_STREAM_MOVE_ASYNC) {
		struct dpusim_worker_stream_wait wt = { .size = sizeof(wt) };

		if (chance(40))
			return true;	/* the next move, or FINISH, waits for it */
		if (ioctl(w, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &wt)) {
			fprintf(stderr, "fuzz: worker session: WAIT: %s\n", strerror(errno));
			return false;
		}
	}
	return ws_windows_ok(f, w, dpu);
}

/* WORKER_STREAM_WAIT: 0, DPUSIM_STREAM_WAIT_KICK, or a defect. */
static bool ws_swait(struct fz *f, int w, int32_t dpu)
{
	static struct desc d;
	struct dpusim_worker_stream_wait *wt = (void *)d.u.raw;
	int want = 0;

	memset(&d, 0, sizeof(d));
	d.size = sizeof(*wt);
	*wt = (struct dpusim_worker_stream_wait){ .size = sizeof(*wt) };
	switch (below(8)) {
	case 0: wt->flags = 2U << below(31); want = EINVAL; break;
	case 1: wt->flags = DPUSIM_STREAM_WAIT_KICK; break;
	case 2: d.size = below(sizeof(*wt)); wt->size = d.size; want = EINVAL; break;
	case 3: d.size = sizeof(*wt) + 8; wt->size = d.size;
		d.u.raw[sizeof(*wt) + below(8)] = 1; want = E2BIG; break;
	default: break;
	}
	return ws_stream_expect(f, w, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &d, want,
				dpu >= 0 ? "WORKER_STREAM_WAIT" :
					   "WORKER_STREAM_WAIT, nothing held");
}

/* Some worker stream calls as DPU @dpu (-1: none held); false on a violation. */
static bool ws_streams(struct fz *f, int w, int32_t dpu)
{
	uint32_t n = below(dpu >= 0 ? 12 : 3), i;
	bool ok = true;

	for (i = 0; i < n && ok; i++) {
		switch (below(10)) {
		case 0: case 1: case 2: case 3: ok = ws_scmd(f, w, dpu); break;
		case 4: ok = ws_swait(f, w, dpu); break;
		default: ok = ws_smove(f, w, dpu); break;
		}
	}
	return ok;
}


#define WS_FAIL(...)					\
	do {						\
		fprintf(stderr, "fuzz: worker session: " __VA_ARGS__); \
		fprintf(stderr, "\n");			\
		goto bad;				\
	} while (0)

/* An ioctl that must fail with @want (0: succeed). */
static bool ws_expect(struct fz *f, int fd, unsigned long cmd, void *arg,
		      int want, const char *what)
{
	int err = ioctl(fd, cmd, arg) ? errno : 0;

	f->calls++;
	atomic_fetch_add(&total_calls, 1);
	if (err == want)
		return true;
	fprintf(stderr, "fuzz: worker session: %s: errno %d (%s), want %d (%s)\n",
		what, err, strerror(err), want, strerror(want));
	return false;
}

/*
 * The exact phase's DPU program runs: a worker file, a launch of some
 * modelled DPUs, claims in DPU order, each DPU's WRAM and MRAM windows
 * written through a mapping of the worker file (the model follows),
 * random defects of every worker ioctl and of mmap on the way, FINISH
 * (DONE, or FAULT with a reason), sometimes a worker file closed while
 * holding a DPU; then DPU_STATUS must show what happened.
 */
static enum verdict worker_session(struct fz *f)
{
	struct dpusim_worker_open wo = { .size = sizeof(wo) };
	struct dpusim_dpu_state st[WIN_DPUS];
	struct dpusim_dpu_status sq = { .size = sizeof(sq), .states = (uintptr_t)st };
	uint32_t first = below(WIN_DPUS), nr = 1 + below(WIN_DPUS - first);
	uint32_t want[WIN_DPUS], k, i, quit = chance(15) ? below(nr) : nr;
	struct dpusim_launch l = { .size = sizeof(l), .first_dpu = first, .nr_dpus = nr };
	struct dpusim_worker_claim c;
	struct dpusim_worker_finish fin;
	char reason[WIN_DPUS][DPUSIM_REASON_LEN];
	uint8_t *m;
	int w = -1;

	if (!ws_expect(f, f->fd, DPUSIM_IOCTL_WORKER_OPEN, &wo, 0, "WORKER_OPEN"))
		return CALL_BAD;
	w = wo.fd;
	if (!ws_expect(f, f->fd, DPUSIM_IOCTL_LAUNCH, &l, 0, "LAUNCH"))
		goto bad;
	if (!ws_expect(f, f->fd, DPUSIM_IOCTL_LAUNCH, &l, EBUSY, "LAUNCH again"))
		goto bad;
	{
		struct dpusim_xfer_dpu dd = { .dpu = first + below(nr), .nr_blocks = 1 };
		struct dpusim_block b = { (uintptr_t)f->dst, 8 };
		struct dpusim_xfer x = {
			.size = sizeof(x), .flags = DPUSIM_XFER_FROM_DPU, .length = 8,
			.nr_dpus = 1, .nr_blocks = 1, .dpus = (uintptr_t)&dd,
			.blocks = (uintptr_t)&b,
		};

		if (!ws_expect(f, f->fd, DPUSIM_IOCTL_XFER, &x, EBUSY, "XFER to a RUNNING DPU"))
			goto bad;
	}
	for (k = 0; k < nr; k++) {
		want[k] = DPUSIM_DPU_FAULT;
		strcpy(reason[k], k == quit ? "worker exited" : "no worker left");
	}
	for (k = 0; k < nr && k <= quit; k++) {
		uint32_t dpu = first + k;

		/* stream calls of a worker that holds no DPU */
		if (!ws_streams(f, w, -1))
			goto bad;
		c = (struct dpusim_worker_claim){ .size = sizeof(c),
						  .flags = 2U << below(31) };
		if (chance(20) && !ws_expect(f, w, DPUSIM_IOCTL_WORKER_CLAIM, &c,
					     EINVAL, "CLAIM with a bad flag"))
			goto bad;
		c = (struct dpusim_worker_claim){ .size = sizeof(c),
						  .flags = DPUSIM_CLAIM_NONBLOCK };
		if (!ws_expect(f, w, DPUSIM_IOCTL_WORKER_CLAIM, &c, 0, "CLAIM"))
			goto bad;
		if (c.dpu != dpu || c.nr_dpus != f->info.nr_dpus ||
		    c.wram_size != f->info.wram_size || c.mram_size != f->info.mram_size)
			WS_FAIL("CLAIM gave DPU %u (want %u), %u DPUs", c.dpu, dpu, c.nr_dpus);
		if (chance(20) && !ws_expect(f, w, DPUSIM_IOCTL_WORKER_CLAIM, &c,
					     EINVAL, "CLAIM holding a DPU"))
			goto bad;
		/* mmap: not the held DPU, private, past the memory */
		switch (below(4)) {
		case 0:
			m = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, w,
				 DPUSIM_MMAP_MRAM((dpu + 1 + below(f->info.nr_dpus - 1)) %
						  f->info.nr_dpus));
			if (m != MAP_FAILED || errno != EACCES)
				WS_FAIL("mmap of a DPU not held: %s", strerror(errno));
			break;
		case 1:
			m = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, w, DPUSIM_MMAP_WRAM(dpu));
			if (m != MAP_FAILED || errno != EINVAL)
				WS_FAIL("private mmap: %s", strerror(errno));
			break;
		case 2:
			m = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, w,
				 DPUSIM_MMAP_WRAM(dpu) + f->info.wram_size - PAGE);
			if (m != MAP_FAILED || errno != EINVAL)
				WS_FAIL("mmap past WRAM: %s", strerror(errno));
			break;
		default:
			break;
		}
		/* write the windows through the mapping; the model follows */
		if (dpu < WIN_DPUS) {
			uint32_t off, len;

			m = mmap(NULL, WIN_WRAM, PROT_READ | PROT_WRITE, MAP_SHARED, w,
				 DPUSIM_MMAP_WRAM(dpu));
			if (m == MAP_FAILED)
				WS_FAIL("mmap WRAM: %s", strerror(errno));
			if (memcmp(m, f->wram[dpu], WIN_WRAM))
				WS_FAIL("WRAM of DPU %u mapped differs from the model", dpu);
			off = below(WIN_WRAM);
			len = below(WIN_WRAM - off + 1);
			for (i = 0; i < len; i++)
				m[off + i] = f->wram[dpu][off + i] = rnd();
			munmap(m, WIN_WRAM);
			m = mmap(NULL, WIN_MRAM, PROT_READ | PROT_WRITE, MAP_SHARED, w,
				 DPUSIM_MMAP_MRAM(dpu));
			if (m == MAP_FAILED)
				WS_FAIL("mmap MRAM: %s", strerror(errno));
			if (memcmp(m, f->mram[dpu], WIN_MRAM))
				WS_FAIL("MRAM of DPU %u mapped differs from the model", dpu);
			off = below(WIN_MRAM);
			len = below(WIN_MRAM - off + 1) % 4096;
			for (i = 0; i < len; i++)
				m[off + i] = f->mram[dpu][off + i] = rnd();
			munmap(m, WIN_MRAM);
			/* the program moves tokens of the streams */
			if (!ws_streams(f, w, dpu))
				goto bad;
		}
		if (k == quit)
			break;	/* the worker file closes holding it */
		fin = (struct dpusim_worker_finish){ .size = sizeof(fin), .dpu = dpu };
		switch (below(6)) {
		case 0: fin.flags = 2U << below(31); break;
		case 1: fin.dpu = dpu + 1 + below(100); break;
		case 2: fin.__reserved = 1; break;
		case 3: fin.reason[below(DPUSIM_REASON_LEN)] = 'x'; break;
		case 4: fin.flags = DPUSIM_FINISH_FAULT;
			memset(fin.reason, 'y', sizeof(fin.reason));
			break;
		default: fin.dpu = ~0U; break;
		}
		if (chance(50) && !ws_expect(f, w, DPUSIM_IOCTL_WORKER_FINISH, &fin,
					     EINVAL, "FINISH with a defect"))
			goto bad;
		fin = (struct dpusim_worker_finish){ .size = sizeof(fin), .dpu = dpu };
		want[k] = DPUSIM_DPU_DONE;
		reason[k][0] = 0;
		if (chance(40)) {
			fin.flags = DPUSIM_FINISH_FAULT;
			snprintf(fin.reason, sizeof(fin.reason), "%s %u",
				 chance(20) ? "" : "SIGSEGV at", (unsigned int)below(1000));
			want[k] = DPUSIM_DPU_FAULT;
			strcpy(reason[k], fin.reason[0] ? fin.reason : "fault");
		}
		if (!ws_expect(f, w, DPUSIM_IOCTL_WORKER_FINISH, &fin, 0, "FINISH"))
			goto bad;
	}
	if (quit == nr) {
		c = (struct dpusim_worker_claim){ .size = sizeof(c),
						  .flags = DPUSIM_CLAIM_NONBLOCK };
		if (!ws_expect(f, w, DPUSIM_IOCTL_WORKER_CLAIM, &c, EAGAIN,
			       "CLAIM with nothing to run"))
			goto bad;
	}
	close(w);
	w = -1;
	sq.first_dpu = first;
	sq.nr_dpus = nr;
	if (!ws_expect(f, f->fd, DPUSIM_IOCTL_DPU_STATUS, &sq, 0, "DPU_STATUS"))
		return CALL_BAD;
	if (sq.nr_running)
		WS_FAIL("%u DPUs still RUNNING", sq.nr_running);
	for (k = 0; k < nr; k++)
		if (st[k].state != want[k] || strcmp(st[k].reason, reason[k]))
			WS_FAIL("DPU %u: state %u reason \"%.56s\", want %u \"%s\"",
				first + k, st[k].state, st[k].reason, want[k], reason[k]);
	return CALL_OK;
bad:
	if (w >= 0)
		close(w);
	return CALL_BAD;
}

/* ------------------------------------------------------------ races */

struct racer {
	int fd;
	uint8_t *area;		/* pages the flipper unmaps and maps again */
	atomic_bool stop;
	atomic_ulong bad;	/* errnos outside the allowed set */
	uint64_t seed;
	bool closing;		/* EBADF allowed: the fd is closed under us */
	/*
	 * Set just before that close.  From then on ENOTTY is allowed too: a
	 * WORKER_OPEN in flight at the close can get the freed number, and a
	 * rank command on that worker file is ENOTTY (seen once in CI).
	 */
	atomic_bool closed;
	bool holed;		/* the flipper left part of area unmapped */
	bool tm;		/* calls of /dev/dpusim/tm (no block pointers) */
};

static void *race_caller(void *arg)
{
	struct racer *r = arg;
	struct desc *d = calloc(1, sizeof(*d));
	struct fz f = { 0 };

	if (!d)
		return NULL;
	rng_state = r->seed ^ (uintptr_t)pthread_self();
	f.src = f.ro = f.hole = f.edge = r->area;
	f.dst = f.sbuf = r->area;	/* buffers registered there too */
	f.info.nr_dpus = 64;
	f.info.mram_size = 64 << 20;
	f.info.wram_size = 64 << 10;
	while (!atomic_load(&r->stop)) {
		int err, i;

		memset(d, 0, sizeof(*d));
		if (r->tm)
			ops[NR_RANK_OPS + below(ARRAY_SIZE(ops) - NR_RANK_OPS)].gen(&f, d);
		else
			ops[below(NR_RANK_OPS)].gen(&f, d);
		/*
		 * Point the blocks into the flipping area, and keep them
		 * there: a transfer from the DPUs writes what they name.
		 */
		for (i = 0; !r->tm && i < MAX_FZ_BLOCKS; i++) {
			uint64_t off = below(4 * PAGE);

			d->blocks[i].addr = (uintptr_t)r->area + off;
			if (d->blocks[i].length > 4 * PAGE - off)
				d->blocks[i].length = below(4 * PAGE - off + 1);
		}
		if (d->cmd == DPUSIM_IOCTL_XFER && d->u.x.length > 4 * PAGE)
			d->u.x.length = 4 * PAGE;
		err = do_call(r->fd, d);
		close_worker(d, err);
		if (err && !(r->tm ? tm_allowed : allowed)(d->cmd, err) &&
		    !(r->closing && err == EBADF) &&
		    !(atomic_load(&r->closed) && err == ENOTTY)) {
			fprintf(stderr, "fuzz: race: errno %d (%s) on %#x\n", err,
				strerror(err), d->cmd);
			atomic_fetch_add(&r->bad, 1);
		}
	}
	free(d);
	return NULL;
}

static void *race_flipper(void *arg)
{
	struct racer *r = arg;

	/*
	 * MAP_FIXED_NOREPLACE: if another mapping took the hole meanwhile (a
	 * thread stack, a malloc arena), leave it alone and stop flipping.
	 */
	while (!atomic_load(&r->stop)) {
		munmap(r->area + PAGE, 2 * PAGE);
		sched_yield();
		if (mmap(r->area + PAGE, 2 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0) != r->area + PAGE) {
			r->holed = true;
			break;
		}
		sched_yield();
	}
	return NULL;
}

/* Threads on @fd for @ms milliseconds; the number of bad errnos. */
static unsigned long race_threads(int fd, uint64_t seed, unsigned int ms,
				  bool close_midway)
{
	struct racer r = { .fd = fd, .seed = seed, .closing = close_midway };
	pthread_t t[5];
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	int i;

	r.area = mmap(NULL, 5 * PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (r.area == MAP_FAILED || mprotect(r.area + 4 * PAGE, PAGE, PROT_NONE))
		return 1;	/* a guard page after the area */
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, race_caller, &r);
	pthread_create(&t[4], NULL, race_flipper, &r);
	nanosleep(&ts, NULL);
	if (close_midway) {
		atomic_store(&r.closed, true);
		close(fd);	/* calls in flight keep the file; then EBADF */
		nanosleep(&ts, NULL);
	}
	atomic_store(&r.stop, true);
	for (i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	munmap(r.area, r.holed ? PAGE : 5 * PAGE);
	if (r.holed)
		munmap(r.area + 3 * PAGE, 2 * PAGE);
	return atomic_load(&r.bad);
}

/*
 * One round of races: threads on the fd; the fd shared with a child that
 * is killed mid-call; a dup of it closed under calls; a child exiting with
 * calls in flight.  Returns the number of bad errnos.
 */
static unsigned long race_round(struct fz *f, uint64_t seed)
{
	unsigned long bad = race_threads(f->fd, seed, 150, false);
	int status, dupfd;
	pid_t pid;

	pid = fork();
	if (pid == 0)
		_exit(race_threads(f->fd, seed + 1, 2000, false) ? 1 : 0);
	bad += race_threads(f->fd, seed + 2, 100, false);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);

	dupfd = dup(f->fd);
	if (dupfd >= 0)
		bad += race_threads(dupfd, seed + 3, 100, true);

	pid = fork();
	if (pid == 0) {
		struct racer r = { .fd = f->fd, .seed = seed + 4 };
		pthread_t t;

		r.area = mmap(NULL, 5 * PAGE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (r.area == MAP_FAILED || mprotect(r.area + 4 * PAGE, PAGE, PROT_NONE))
			_exit(1);
		pthread_create(&t, NULL, race_caller, &r);
		usleep(50000);
		_exit(0);	/* with the caller in flight */
	}
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status))
		bad++;
	return bad;
}

/* ------------------------------------------------ TM: exact and races */

/* Undo what a successful exact-phase call made, so limits are not hit. */
static void tm_cleanup(const struct desc *d)
{
	const void *u = d->u.raw;
	uint32_t h;

	switch (d->cmd) {
	case DPUSIM_IOCTL_TM_REG_MR:
		tm_destroy(TMW->fd, DPUSIM_IOCTL_TM_DEREG_MR,
			   ((const struct dpusim_tm_reg_mr *)u)->lkey);
		break;
	case DPUSIM_IOCTL_TM_CREATE_CQ:
		tm_destroy(TMW->fd, DPUSIM_IOCTL_TM_DESTROY_CQ,
			   ((const struct dpusim_tm_create_cq *)u)->handle);
		break;
	case DPUSIM_IOCTL_TM_CREATE_SRQ:
		tm_destroy(TMW->fd, DPUSIM_IOCTL_TM_DESTROY_SRQ,
			   ((const struct dpusim_tm_create_srq *)u)->handle);
		break;
	case DPUSIM_IOCTL_TM_CREATE_QP:
		tm_destroy(TMW->fd, DPUSIM_IOCTL_TM_DESTROY_QP,
			   ((const struct dpusim_tm_create_qp *)u)->handle);
		break;
	case DPUSIM_IOCTL_TM_POST_SRQ_OPS:
		if (TMW->ow[0].opcode == DPUSIM_TM_WR_TAG_ADD) {
			struct dpusim_tm_ops_wr del = {
				.opcode = DPUSIM_TM_WR_TAG_DEL,
				.handle = TMW->ow[0].handle,
			};

			tm_post(TMW->fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0, TMW->srq, 0,
				&del, 1, NULL);
		}
		break;
	case DPUSIM_IOCTL_TM_POST_SRQ_RECV:
		/* an unexpected message takes the untagged buffer */
		h = 0;
		tm_send_eager(TMW->fd, TMW->qp, 0xdead0000ULL, 0, &h, sizeof(h), 0);
		break;
	}
	tm_cq_drain(&TMW->cq);
}

static enum verdict tm_exact_call(struct fz *f, uint64_t *ncalls)
{
	const struct op *op = &ops[NR_RANK_OPS + below(ARRAY_SIZE(ops) - NR_RANK_OPS)];
	static struct desc d;
	uint32_t prod = TMW->cq.ring->producer;
	int err;

	memset(&d, 0, sizeof(d));
	op->gen(f, &d);
	err = do_call(TMW->fd, &d);
	(*ncalls)++;
	f->errs[err < 160 ? err : 159]++;
	if (err && !tm_allowed(d.cmd, err)) {
		fprintf(stderr, "fuzz: %s: errno %d (%s) is not one the header allows\n",
			op->name, err, strerror(err));
		return CALL_BAD;
	}
	if (d.expect >= 0 && err != d.expect) {
		fprintf(stderr, "fuzz: %s: got errno %d (%s), the header says %d (%s); size %u\n",
			op->name, err, strerror(err), d.expect, strerror(d.expect), d.size);
		return CALL_BAD;
	}
	if ((int32_t)(TMW->cq.ring->producer - prod) < 0) {
		fprintf(stderr, "fuzz: %s: the ring's producer went back\n", op->name);
		return CALL_BAD;
	}
	if (TMW->cq.ring->flags & DPUSIM_TM_CQ_F_OVERRUN) {
		fprintf(stderr, "fuzz: %s: the drained ring overran\n", op->name);
		return CALL_BAD;
	}
	if (!err)
		tm_cleanup(&d);
	else
		tm_cq_drain(&TMW->cq);
	return CALL_OK;
}

/* TM threads on @fd for @ms; with @close_midway the fd is closed under them. */
static unsigned long tm_race_threads(int fd, uint64_t seed, unsigned int ms,
				     bool close_midway)
{
	struct racer r = { .fd = fd, .seed = seed, .closing = close_midway,
			   .tm = true };
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, race_caller, &r);
	nanosleep(&ts, NULL);
	if (close_midway) {
		close(fd);
		nanosleep(&ts, NULL);
	}
	atomic_store(&r.stop, true);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return atomic_load(&r.bad);
}

/*
 * TM races: threads on the context; the fd shared with a child killed
 * mid-call; a dup closed under calls; a child exiting with calls in
 * flight.  The ring is drained by a thread that poll()s it meanwhile.
 */
static unsigned long tm_race_round(uint64_t seed)
{
	unsigned long bad;
	int status, dupfd;
	pid_t pid;

	bad = tm_race_threads(TMW->fd, seed, 100, false);
	tm_cq_drain(&TMW->cq);
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(tm_race_threads(TMW->fd, seed + 1, 2000, false) ? 1 : 0);
	bad += tm_race_threads(TMW->fd, seed + 2, 80, false);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	dupfd = dup(TMW->fd);
	if (dupfd >= 0)
		bad += tm_race_threads(dupfd, seed + 3, 60, true);
	pid = fork();
	if (pid == 0) {
		struct racer r = { .fd = TMW->fd, .seed = seed + 4, .tm = true };
		pthread_t t;

		pthread_create(&t, NULL, race_caller, &r);
		usleep(30000);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status))
		bad++;
	tm_cq_drain(&TMW->cq);
	/* an overrun a race left pending is reported to the next call */
	if (TMW->cq.ring->flags & DPUSIM_TM_CQ_F_OVERRUN) {
		struct dpusim_tm_query q = { .size = sizeof(q) };

		if (tm_call(TMW->fd, DPUSIM_IOCTL_TM_QUERY, &q) == EOVERFLOW)
			TMW->cq.ring->flags = 0;
	}
	return bad;
}

/* ------------------------------------------------------------ the run */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

FIXTURE(fuzz)
{
	struct fz *f;
};

FIXTURE_SETUP(fuzz)
{
	struct fz *f = calloc(1, sizeof(*f));
	uint8_t *m;

	ASSERT_NE(NULL, f);
	f->fd = -1;
	m = mmap(NULL, (SRC_PAGES + DST_PAGES + 4) * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	f->src = m;
	f->dst = m + SRC_PAGES * PAGE;
	f->ro = f->dst + DST_PAGES * PAGE;
	f->edge = f->ro + 2 * PAGE - 16;
	f->hole = f->ro + 2 * PAGE;
	for (size_t i = 0; i < (SRC_PAGES + DST_PAGES + 2) * PAGE; i++)
		m[i] = (uint8_t)(i * 2654435761U >> 13);
	ASSERT_EQ(0, mprotect(f->ro, PAGE, PROT_READ));
	ASSERT_EQ(0, mprotect(f->hole, 2 * PAGE, PROT_NONE));
	f->dst_shadow = malloc(DST_PAGES * PAGE);
	ASSERT_NE(NULL, f->dst_shadow);
	f->sbuf = mmap(NULL, (SBUF_PAGES + 1) * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, f->sbuf);
	ASSERT_EQ(0, mprotect(f->sbuf + SBUF_PAGES * PAGE, PAGE, PROT_NONE));
	for (size_t i = 0; i < SBUF_PAGES * PAGE; i++)
		f->sbuf[i] = (uint8_t)(i * 40503U >> 7);
	f->sbuf_shadow = malloc(SBUF_PAGES * PAGE);
	ASSERT_NE(NULL, f->sbuf_shadow);
	f->upb = calloc(DPUSIM_STREAM_MAX, UP_BYTES);
	ASSERT_NE(NULL, f->upb);
	f->zero = mmap(NULL, ZERO_LEN, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, f->zero);
	reopen(_metadata, f);
	f->info.size = sizeof(f->info);
	ASSERT_EQ(0, ioctl(f->fd, DPUSIM_IOCTL_RANK_INFO, &f->info));
	self->f = f;
}

FIXTURE_TEARDOWN(fuzz)
{
	if (self->f && self->f->fd >= 0)
		close(self->f->fd);
}

TEST_F_TIMEOUT(fuzz, ioctls, 7 * 24 * 3600)
{
	struct fz *f = self->f;
	const char *e;
	uint64_t seed = (uint64_t)time(NULL) ^ getpid(), calls_min = 0;
	uint64_t secs = 20, t0 = now_ms(), rounds = 0, tm_calls = 0;
	long long mrs0, ctx0, pin0;
	unsigned long bad = 0;
	unsigned int i;

	e = getenv("DPUSIM_FUZZ_SEED");
	if (e)
		seed = strtoull(e, NULL, 0);
	e = getenv("DPUSIM_FUZZ_SECONDS");
	if (e)
		secs = strtoull(e, NULL, 0);
	e = getenv("DPUSIM_FUZZ_CALLS");
	if (e)
		calls_min = strtoull(e, NULL, 0);
	ksft_print_msg("fuzz: seed %#llx (DPUSIM_FUZZ_SEED), %s\n",
		       (unsigned long long)seed,
		       calls_min ? "call budget (DPUSIM_FUZZ_CALLS)" : "time budget");
	rng_state = seed | 1;
	mrs0 = sysfs_tm_attr("mrs");
	ctx0 = sysfs_tm_attr("contexts");
	pin0 = sysfs_tm_attr("pinned_pages");
	if (access(TM_PATH, F_OK))
		ksft_print_msg("fuzz: no %s: the tag-matching ioctls are not fuzzed\n", TM_PATH);
	else
		ASSERT_EQ(0, tmw_setup()) TH_LOG("the TM world: %s", strerror(errno));

	while (calls_min ? atomic_load(&total_calls) < calls_min :
			   now_ms() - t0 < secs * 1000) {
		/* exact phase */
		for (i = 0; i < 2000; i++) {
			enum verdict v = exact_call(f);

			ASSERT_NE(CALL_BAD, v) TH_LOG("seed %#llx, call %llu",
				(unsigned long long)seed, (unsigned long long)f->calls);
			if (v == CALL_RESYNC)
				reopen(_metadata, f);	/* memory zero again */
			if (i % 100 == 50)
				ASSERT_NE(CALL_BAD, worker_session(f))
					TH_LOG("seed %#llx, call %llu",
					       (unsigned long long)seed,
					       (unsigned long long)f->calls);
			if (i % 250 == 249)
				ASSERT_TRUE(check_window(f)) TH_LOG("after %llu calls",
					(unsigned long long)f->calls);
		}
		ASSERT_TRUE(check_window(f));
		/* race phase, then a clean rank again */
		bad += race_round(f, seed + rounds);
		ASSERT_EQ(0, bad) TH_LOG("errnos outside the header's set in the races");
		reopen(_metadata, f);
		/* /dev/dpusim/tm: exact calls, then races on the context */
		for (i = 0; TMW && i < 500; i++)
			ASSERT_NE(CALL_BAD, tm_exact_call(f, &tm_calls))
				TH_LOG("seed %#llx, TM call %llu", (unsigned long long)seed,
				       (unsigned long long)tm_calls);
		if (TMW) {
			bad += tm_race_round(seed + rounds);
			/* the races filled the lists: a fresh context */
			tmw_teardown();
			ASSERT_EQ(0, tmw_setup()) TH_LOG("the TM world: %s", strerror(errno));
		}
		ASSERT_EQ(0, bad) TH_LOG("errnos outside the header's set in the TM races");
		rounds++;
	}
	if (TMW) {
		tmw_teardown();
		/* everything of the context is gone with it */
		for (i = 0; i < 50 && (sysfs_tm_attr("mrs") != mrs0 ||
				       sysfs_tm_attr("pinned_pages") != pin0 ||
				       sysfs_tm_attr("contexts") != ctx0); i++)
			usleep(50000);
		EXPECT_EQ(mrs0, sysfs_tm_attr("mrs"));
		EXPECT_EQ(ctx0, sysfs_tm_attr("contexts"));
		EXPECT_EQ(pin0, sysfs_tm_attr("pinned_pages"));
		ksft_print_msg("fuzz: %llu TM exact-phase calls\n",
			       (unsigned long long)tm_calls);
	}
	ksft_print_msg("fuzz: %lu calls in %.1f s (%llu exact-phase calls, %llu succeeded; %llu race rounds)\n",
		       atomic_load(&total_calls), (now_ms() - t0) / 1000.0,
		       (unsigned long long)f->calls, (unsigned long long)f->ok,
		       (unsigned long long)rounds);
	ksft_print_msg("fuzz: tokens moved: %llu down and %llu up by the rank file (DPUSIM_XFER_STREAM), %llu down and %llu up by worker files\n",
		       (unsigned long long)f->xs_down, (unsigned long long)f->xs_up,
		       (unsigned long long)f->ws_down, (unsigned long long)f->ws_up);
	ksft_print_msg("fuzz: registered token buffers: %llu OPENs registered one; of the moves by the rank file, %llu down and %llu up with DPUSIM_XFER_STREAM_BUF\n",
		       (unsigned long long)f->sb_open, (unsigned long long)f->sb_down,
		       (unsigned long long)f->sb_up);
	for (i = 1; i < 160; i++)
		if (f->errs[i])
			ksft_print_msg("fuzz:   %-10s %llu\n", strerror(i),
				       (unsigned long long)f->errs[i]);
}

TEST_HARNESS_MAIN
