// SPDX-License-Identifier: GPL-2.0
/*
 * Fault-injection sweep of every ioctl path of /dev/dpusim/rank1, after
 * the kernel's iommufd fail_nth selftest
 * (tools/testing/selftests/iommu/iommufd_fail_nth.c): a path is first run
 * once without injection (it must succeed), then for n = 1, 2, ... the
 * n-th fault site it reaches (a slab or page allocation, a user copy)
 * fails, through /proc/self/task/<tid>/fail-nth, until the path runs past
 * every site without consuming the fault.
 *
 * At every n, with injection off again:
 *  - the call succeeded, or failed with an errno an injected fault may
 *    cause (ENOMEM, EFAULT);
 *  - the DPU memory around every DPU of the transfer (read back with a
 *    FROM_DPU transfer) and the whole host arena hold either what they
 *    held before (failure) or exactly what the transfer's semantics give
 *    (success, modelled here);
 *  - mram_resident_bytes and wram_resident_bytes are back to the value
 *    before (failure) or to that of the uninjected run (success);
 *  - pinned_pages and async_jobs of the rank are 0, VmPin and VmLck of the
 *    process are back to the value before.
 * Leaks are kmemleak's business: tools/vm-run scans it after the run.
 *
 * The DPU-program, stream, stream-move and tag-matching paths check their
 * own state the same way (see each section).
 *
 * Needs CONFIG_FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC,
 * FAULT_INJECTION_USERCOPY and FAULT_INJECTION_DEBUG_FS (the debug
 * kernel) and debugfs at /sys/kernel/debug; elsewhere every test skips.
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "common.h"
#include "tm_ioctl.h"

#define RANK		1
#define NODE		RANK_PATH(1)
#define PAGE		4096UL
#define ARENA_PAGES	16
#define ARENA_LEN	(ARENA_PAGES * PAGE)
#define MAX_NTH		1000
#define MAX_SNAP	8
#define SWEEP_TIMEOUT	1800

/* ------------------------------------------------ fault injection setup */

static char fi_missing[512];	/* why there is no fault injection, or "" */

static int writeat(int dfd, const char *fn, const char *val)
{
	int fd = openat(dfd, fn, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

static void nth_path(char *buf, size_t size)
{
	snprintf(buf, size, "/proc/self/task/%d/fail-nth", (int)gettid());
}

/* Like iommufd's setup_fault_injection(): any allocation may fail, quietly. */
static __attribute__((constructor)) void setup_fault_injection(void)
{
	static const char *const need[] = {
		"failslab", "fail_page_alloc", "fail_usercopy",
	};
	char path[300];
	struct dirent *de;
	struct stat st;
	DIR *dbg;
	size_t i;

	nth_path(path, sizeof(path));
	if (access(path, F_OK)) {
		snprintf(fi_missing, sizeof(fi_missing),
			 "no %s: kernel without CONFIG_FAULT_INJECTION", path);
		return;
	}
	dbg = opendir("/sys/kernel/debug/");
	if (!dbg) {
		snprintf(fi_missing, sizeof(fi_missing),
			 "debugfs is not mounted at /sys/kernel/debug");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(need); i++) {
		if (fstatat(dirfd(dbg), need[i], &st, 0)) {
			snprintf(fi_missing, sizeof(fi_missing),
				 "no /sys/kernel/debug/%s: kernel without FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_USERCOPY or FAULT_INJECTION_DEBUG_FS",
				 need[i]);
			goto out;
		}
	}
	if (writeat(dirfd(dbg), "failslab/ignore-gfp-wait", "N") ||
	    writeat(dirfd(dbg), "fail_page_alloc/ignore-gfp-wait", "N") ||
	    writeat(dirfd(dbg), "fail_page_alloc/ignore-gfp-highmem", "N")) {
		snprintf(fi_missing, sizeof(fi_missing),
			 "cannot configure /sys/kernel/debug/fail*: %s",
			 strerror(errno));
		goto out;
	}
	/* order-0 pages too (the default min-order is 1) */
	writeat(dirfd(dbg), "fail_page_alloc/min-order", "0");
	while ((de = readdir(dbg))) {
		if (strncmp(de->d_name, "fail", 4))
			continue;
		/* looking for kernel reports, not for injection messages */
		snprintf(path, sizeof(path), "%s/verbose", de->d_name);
		writeat(dirfd(dbg), path, "0");
	}
out:
	closedir(dbg);
}

/* --------------------------------------------------- fail-nth per thread */

struct nth {
	int fd;
	unsigned int n;		/* 0: not armed during the call */
};

static void nth_open(struct __test_metadata *_metadata, struct nth *s)
{
	char path[128];

	nth_path(path, sizeof(path));
	s->fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, s->fd) TH_LOG("%s: %s", path, strerror(errno));
	s->n = 0;
}

/* Arm: the n-th fault site from now on fails. */
static void nth_arm(struct __test_metadata *_metadata, struct nth *s)
{
	char buf[16];
	int len;

	if (!s->n)
		return;
	len = snprintf(buf, sizeof(buf), "%u", s->n);
	ASSERT_EQ(len, pwrite(s->fd, buf, len, 0));
}

/*
 * iommufd's fail_nth_next(): read the counter back and disarm.  "0" means
 * the armed fault fired in the call; anything else that the call ran past
 * every fault site.  Reading and writing fail-nth are user copies, fault
 * sites themselves: a counter still armed may fire there (EFAULT), which
 * also means the call did not reach it.  Returns true if it fired.
 */
static bool nth_disarm(struct __test_metadata *_metadata, struct nth *s)
{
	char buf[32] = "";
	ssize_t r, w;

	if (!s->n)
		return false;
	r = pread(s->fd, buf, sizeof(buf) - 1, 0);
	if (r == -1 && errno == EFAULT) {
		strcpy(buf, "1\n");
		r = 2;
	}
	w = pwrite(s->fd, "0", 1, 0);
	if (w == -1 && errno == EFAULT) {
		w = pwrite(s->fd, "0", 1, 0);
		strcpy(buf, "1\n");
		r = 2;
	}
	EXPECT_EQ(1, w);
	EXPECT_LT(1, r);
	return r == 2 && buf[0] == '0' && buf[1] == '\n';
}

/* ------------------------------------------------------------- helpers */

struct counters {
	long long mram, wram, pinned, jobs;
	long vmpin, vmlck;
};

static void read_counters(struct counters *c)
{
	c->mram = sysfs_rank_attr(RANK, "mram_resident_bytes");
	c->wram = sysfs_rank_attr(RANK, "wram_resident_bytes");	/* -1 if absent */
	c->pinned = sysfs_rank_attr(RANK, "pinned_pages");
	c->jobs = sysfs_rank_attr(RANK, "async_jobs");
	c->vmpin = proc_status_kb("VmPin:");
	c->vmlck = proc_status_kb("VmLck:");
}

/* A window of one DPU's memory, snapshotted before the call. */
struct snap {
	uint32_t dpu, wram;
	uint64_t lo, hi;
	uint8_t *before, *model;
};

/*
 * The state of one path: the rank, a host arena every block points into,
 * the transfer, the snapshots and the model.
 */
struct ctx {
	int fd;
	struct dpusim_rank_info info;
	uint8_t *arena, *arena_before, *arena_model;
	uint8_t *back;			/* read-back buffer */
	size_t back_len;
	struct dpusim_xfer_dpu dpus[64];
	struct dpusim_block blocks[1024];
	struct dpusim_xfer x;
	struct snap snap[MAX_SNAP];
	unsigned int nsnap;
	/* the op */
	bool queued;			/* an async transfer was accepted */
	int err2;			/* errno of the second call of the op */
	struct dpusim_rank_info out;	/* RANK_INFO result */
};

static uint64_t mem_size(struct ctx *c, uint32_t wram)
{
	return wram ? c->info.wram_size : c->info.mram_size;
}

/* One DPU's [lo, hi) into c->back, injection off; 0 or -1. */
static int read_dpu(struct ctx *c, uint32_t dpu, uint32_t wram, uint64_t lo,
		    uint64_t hi)
{
	struct dpusim_xfer_dpu d = { .dpu = dpu, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)c->back, hi - lo };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_FROM_DPU | wram,
		.offset = lo, .length = hi - lo, .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};

	if (hi - lo > c->back_len)
		return -1;
	memset(c->back, 0x5c, hi - lo);
	return xfer(c->fd, &x);
}

/* A synchronous transfer from the arena, injection off (path setup). */
static int write_dpu(struct ctx *c, uint32_t dpu, uint32_t wram, uint64_t off,
		     const uint8_t *src, uint64_t len)
{
	struct dpusim_xfer_dpu d = { .dpu = dpu, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)src, len };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = wram, .offset = off, .length = len,
		.nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};

	return xfer(c->fd, &x);
}

static void set_xfer(struct ctx *c, uint32_t flags, uint64_t off, uint64_t len,
		     uint32_t nr_dpus, uint32_t nr_blocks)
{
	c->x = (struct dpusim_xfer){
		.size = sizeof(c->x), .flags = flags, .offset = off,
		.length = len, .nr_dpus = nr_dpus, .nr_blocks = nr_blocks,
		.dpus = (uintptr_t)c->dpus, .blocks = (uintptr_t)c->blocks,
	};
}

static uint8_t *arena_at(struct ctx *c, uint64_t addr)
{
	return (uint8_t *)(uintptr_t)addr;
}

/* Snapshot, around every DPU of c->x, a page either side of the window. */
static int take_snapshots(struct ctx *c)
{
	uint32_t wram = c->x.flags & DPUSIM_XFER_WRAM;
	unsigned int i;

	c->nsnap = 0;
	for (i = 0; i < c->x.nr_dpus && i < MAX_SNAP; i++) {
		struct snap *s = &c->snap[c->nsnap++];
		uint64_t size = mem_size(c, wram);

		s->dpu = c->dpus[i].dpu;
		s->wram = wram;
		s->lo = c->x.offset >= PAGE ? c->x.offset - PAGE : 0;
		s->hi = c->x.offset + c->x.length + PAGE;
		if (s->hi > size)
			s->hi = size;
		if (read_dpu(c, s->dpu, wram, s->lo, s->hi))
			return -1;
		memcpy(s->before, c->back, s->hi - s->lo);
	}
	memcpy(c->arena_before, c->arena, ARENA_LEN);
	return 0;
}

/*
 * The model of a successful DPUSIM_IOCTL_XFER (header: to the DPU the
 * blocks are written one after the other from @offset, the rest of
 * @length zeroed with NO_LENGTH_CHECK; from the DPU each block is filled
 * in turn; bytes past @length never move), applied to the snapshots.
 */
static void build_model(struct ctx *c)
{
	const struct dpusim_xfer *x = &c->x;
	uint32_t b = 0, i;

	memcpy(c->arena_model, c->arena_before, ARENA_LEN);
	for (i = 0; i < c->nsnap; i++)
		memcpy(c->snap[i].model, c->snap[i].before,
		       c->snap[i].hi - c->snap[i].lo);
	for (i = 0; i < x->nr_dpus; i++) {
		struct snap *s = &c->snap[i];
		uint64_t pos = x->offset, end = x->offset + x->length;
		uint32_t k;

		for (k = 0; k < c->dpus[i].nr_blocks; k++, b++) {
			uint64_t n = c->blocks[b].length;
			size_t host = arena_at(c, c->blocks[b].addr) - c->arena;

			if (n > end - pos)
				n = end - pos;
			if (x->flags & DPUSIM_XFER_FROM_DPU)
				memcpy(c->arena_model + host,
				       s->model + (pos - s->lo), n);
			else
				memcpy(s->model + (pos - s->lo),
				       c->arena_before + host, n);
			pos += n;
		}
		if (!(x->flags & DPUSIM_XFER_FROM_DPU) &&
		    (x->flags & DPUSIM_XFER_NO_LENGTH_CHECK) && pos < end)
			memset(s->model + (pos - s->lo), 0, end - pos);
	}
}

/* Compare the DPU windows and the arena with @model (or before). */
static bool state_is(struct __test_metadata *_metadata, struct ctx *c,
		     bool model, unsigned int n)
{
	const char *what = model ? "the success's result" : "the state before";
	unsigned int i;

	for (i = 0; i < c->nsnap; i++) {
		struct snap *s = &c->snap[i];
		const uint8_t *want = model ? s->model : s->before;
		size_t len = s->hi - s->lo, j;

		if (read_dpu(c, s->dpu, s->wram, s->lo, s->hi)) {
			TH_LOG("n=%u: read-back of DPU %u failed: %s", n,
			       s->dpu, strerror(errno));
			return false;
		}
		if (memcmp(c->back, want, len)) {
			for (j = 0; j < len && c->back[j] == want[j]; j++)
				;
			TH_LOG("n=%u: DPU %u %s byte %#llx is %#x, not %s (%#x)",
			       n, s->dpu, s->wram ? "WRAM" : "MRAM",
			       (unsigned long long)(s->lo + j), c->back[j],
			       what, want[j]);
			return false;
		}
	}
	if (memcmp(c->arena, model ? c->arena_model : c->arena_before,
		   ARENA_LEN)) {
		TH_LOG("n=%u: the host buffer is not %s", n, what);
		return false;
	}
	return true;
}

/* --------------------------------------------------------------- paths */

struct path {
	/* with injection off, on the freshly opened rank: the state and c->x */
	int (*prepare)(struct ctx *c);
	/* the armed part; 0 or -1 with errno */
	int (*op)(struct __test_metadata *_metadata, struct ctx *c,
		  struct nth *nth);
	/* whether the call moves data (snapshots and model) */
	bool xfer;
	/* bytes of MRAM the uninjected run adds; -1: only as in that run */
	long long mram_delta;
};

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed * 17 + (i >> 12) + 1);
}

/* To four DPUs' MRAM, all holes: three pages each at offset 4 KiB. */
static int to_mram_prepare(struct ctx *c)
{
	uint32_t i;

	for (i = 0; i < 4; i++) {
		c->dpus[i] = (struct dpusim_xfer_dpu){ .dpu = 1 + 4 * i, .nr_blocks = 1 };
		c->blocks[i] = (struct dpusim_block){
			(uintptr_t)c->arena + 24 + i * 1000, 3 * PAGE };
	}
	set_xfer(c, 0, PAGE, 3 * PAGE, 4, 4);
	return 0;
}

/*
 * From MRAM: DPUs 3 and 7 hold two pages of a pattern at offset 8 KiB
 * (written beforehand); two blocks each, unaligned, into the arena's
 * second half.
 */
static int from_mram_prepare(struct ctx *c)
{
	uint8_t *dst = c->arena + ARENA_LEN / 2;
	uint32_t i;

	for (i = 0; i < 2; i++)
		if (write_dpu(c, 3 + 4 * i, 0, 2 * PAGE, c->arena + i * PAGE,
			      2 * PAGE))
			return -1;
	memset(dst, 0xee, ARENA_LEN / 2);
	for (i = 0; i < 2; i++) {
		c->dpus[i] = (struct dpusim_xfer_dpu){ .dpu = 3 + 4 * i, .nr_blocks = 2 };
		c->blocks[2 * i] = (struct dpusim_block){
			(uintptr_t)dst + 8 + i * 3 * PAGE, PAGE - 40 };
		c->blocks[2 * i + 1] = (struct dpusim_block){
			(uintptr_t)dst + 8 + i * 3 * PAGE + PAGE, PAGE + 40 };
	}
	set_xfer(c, DPUSIM_XFER_FROM_DPU, 2 * PAGE, 2 * PAGE, 2, 4);
	return 0;
}

/*
 * To WRAM: DPU 60 already holds 2 KiB at offset 0, DPU 61 nothing; 1 KiB
 * plus 24 bytes to each at offset 64.
 */
static int to_wram_prepare(struct ctx *c)
{
	uint32_t i;

	if (write_dpu(c, 60, DPUSIM_XFER_WRAM, 0, c->arena + 5 * PAGE, 2048))
		return -1;
	for (i = 0; i < 2; i++) {
		c->dpus[i] = (struct dpusim_xfer_dpu){ .dpu = 60 + i, .nr_blocks = 1 };
		c->blocks[i] = (struct dpusim_block){
			(uintptr_t)c->arena + 100 + i * 2000, 1048 };
	}
	set_xfer(c, DPUSIM_XFER_WRAM, 64, 1048, 2, 2);
	return 0;
}

/*
 * Padding (NO_LENGTH_CHECK, to the DPU): DPU 20 holds three pages of a
 * pattern; 3 blocks of 8 bytes to it, none to DPU 21 (holes), 3 pages
 * each: the rest is zeroed.
 */
static int pad_prepare(struct ctx *c)
{
	uint32_t i;

	if (write_dpu(c, 20, 0, 0, c->arena + 2 * PAGE, 3 * PAGE))
		return -1;
	c->dpus[0] = (struct dpusim_xfer_dpu){ .dpu = 20, .nr_blocks = 3 };
	c->dpus[1] = (struct dpusim_xfer_dpu){ .dpu = 21, .nr_blocks = 0 };
	for (i = 0; i < 3; i++)
		c->blocks[i] = (struct dpusim_block){
			(uintptr_t)c->arena + 9 * PAGE + i * 1234, 8 };
	set_xfer(c, DPUSIM_XFER_NO_LENGTH_CHECK, 0, 3 * PAGE, 2, 3);
	return 0;
}

/*
 * Many small blocks over few pages: 2 x 384 blocks of 8 bytes that go back
 * and forth over three host pages, to DPUs 30 and 31.
 */
static int small_blocks_prepare(struct ctx *c)
{
	uint32_t i, d;

	for (d = 0; d < 2; d++) {
		c->dpus[d] = (struct dpusim_xfer_dpu){ .dpu = 30 + d, .nr_blocks = 384 };
		for (i = 0; i < 384; i++)
			c->blocks[d * 384 + i] = (struct dpusim_block){
				(uintptr_t)c->arena + (i % 3) * PAGE +
					((i * 7 + d * 13) % 500) * 8, 8 };
	}
	set_xfer(c, 0, 16, 384 * 8, 2, 768);
	return 0;
}

static int async_to_mram_prepare(struct ctx *c)
{
	to_mram_prepare(c);
	c->x.flags |= DPUSIM_XFER_ASYNC;
	return 0;
}

static int async_from_mram_prepare(struct ctx *c)
{
	if (from_mram_prepare(c))
		return -1;
	c->x.flags |= DPUSIM_XFER_ASYNC;
	return 0;
}

static int async_small_blocks_prepare(struct ctx *c)
{
	small_blocks_prepare(c);
	c->x.flags |= DPUSIM_XFER_ASYNC;
	return 0;
}

/* SYNC of a transfer queued beforehand (injection off). */
static int queued_prepare(struct ctx *c)
{
	to_mram_prepare(c);
	c->x.flags |= DPUSIM_XFER_ASYNC;
	return 0;
}

static int nothing_prepare(struct ctx *c)
{
	(void)c;
	return 0;
}

static int sync_rank(struct ctx *c)
{
	struct dpusim_sync s = { .size = sizeof(s) };

	return ioctl(c->fd, DPUSIM_IOCTL_SYNC, &s);
}

static int op_xfer(struct __test_metadata *_metadata, struct ctx *c,
		   struct nth *nth)
{
	int r;

	nth_arm(_metadata, nth);
	r = xfer(c->fd, &c->x);
	c->queued = !r && (c->x.flags & DPUSIM_XFER_ASYNC);
	return r;
}

/* XFER(ASYNC) then SYNC, both armed: the fault may fire in either. */
static int op_async_sync(struct __test_metadata *_metadata, struct ctx *c,
			 struct nth *nth)
{
	int r;

	nth_arm(_metadata, nth);
	r = xfer(c->fd, &c->x);
	if (r)
		return r;
	c->queued = true;
	return sync_rank(c);
}

/* The transfer queued with injection off, then only SYNC armed. */
static int op_queued_sync(struct __test_metadata *_metadata, struct ctx *c,
			  struct nth *nth)
{
	if (xfer(c->fd, &c->x))
		return -2;
	c->queued = true;
	nth_arm(_metadata, nth);
	return sync_rank(c);
}

static int op_sync(struct __test_metadata *_metadata, struct ctx *c,
		   struct nth *nth)
{
	nth_arm(_metadata, nth);
	return sync_rank(c);
}

static int op_info(struct __test_metadata *_metadata, struct ctx *c,
		   struct nth *nth)
{
	c->out = (struct dpusim_rank_info){ .size = sizeof(c->out) };
	nth_arm(_metadata, nth);
	return ioctl(c->fd, DPUSIM_IOCTL_RANK_INFO, &c->out);
}

/* ---------------------------------------------------------------- sweep */

static bool clean_errno(int err)
{
	return err == ENOMEM || err == EFAULT;
}

/*
 * One run of @p at n = nth->n (0: no injection).  Returns 1 if the armed
 * fault fired, 0 if not; every check is an EXPECT/ASSERT.  @ref holds the
 * counters after the uninjected run (filled when nth->n is 0).
 */
static int run_once(struct __test_metadata *_metadata, const struct path *p,
		    struct ctx *c, struct nth *nth, struct counters *ref)
{
	struct counters before, after;
	unsigned int n = nth->n;
	int r, err, fired;
	bool ok;

	c->fd = open(NODE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, c->fd) TH_LOG("n=%u: open: %s", n, strerror(errno));
	c->info = (struct dpusim_rank_info){ .size = sizeof(c->info) };
	ASSERT_EQ(0, ioctl(c->fd, DPUSIM_IOCTL_RANK_INFO, &c->info));
	ASSERT_EQ(RANK, c->info.rank_index);
	c->queued = false;
	c->nsnap = 0;
	fill(c->arena, ARENA_LEN, n);
	ASSERT_EQ(0, p->prepare(c)) TH_LOG("n=%u: prepare: %s", n, strerror(errno));
	if (p->xfer) {
		ASSERT_EQ(0, take_snapshots(c)) TH_LOG("n=%u: snapshot: %s", n,
						      strerror(errno));
		build_model(c);
	}
	read_counters(&before);

	r = p->op(_metadata, c, nth);
	err = errno;
	fired = nth_disarm(_metadata, nth);
	ASSERT_NE(-2, r) TH_LOG("n=%u: setup of the op failed: %s", n, strerror(err));

	if (r) {
		EXPECT_TRUE(n && clean_errno(err))
			TH_LOG("n=%u: errno %d (%s), not one an injected fault may give",
			       n, err, strerror(err));
	}
	if (!n)
		ASSERT_EQ(0, r) TH_LOG("the uninjected run failed: %s", strerror(err));
	if (n && !fired)
		EXPECT_EQ(0, r) TH_LOG("n=%u: failed (%s) without consuming the fault",
				       n, strerror(err));
	/* an accepted async transfer completes whatever SYNC said */
	if (c->queued)
		EXPECT_EQ(0, sync_rank(c)) TH_LOG("n=%u: SYNC after the sweep: %s",
						  n, strerror(errno));
	ok = r == 0 || c->queued;

	if (p->op == op_info && r == 0) {
		EXPECT_EQ(RANK, c->out.rank_index);
		EXPECT_EQ(DPUSIM_ABI_VERSION, c->out.abi_version);
		EXPECT_EQ(c->info.nr_dpus, c->out.nr_dpus);
		EXPECT_EQ(c->info.mram_size, c->out.mram_size);
		EXPECT_EQ(c->info.wram_size, c->out.wram_size);
	} else if (p->op == op_info) {
		EXPECT_EQ(0, c->out.nr_dpus | c->out.abi_version |
			     c->out.rank_index | c->out.wram_size) TH_LOG("n=%u", n);
		EXPECT_EQ(0, c->out.mram_size);
	}
	if (p->xfer)
		EXPECT_TRUE(state_is(_metadata, c, ok, n))
			TH_LOG("n=%u: result %d errno %d (%s): %s", n, r, err,
			       strerror(err), ok ? "the success is not complete" :
			       "the failed call changed something");

	read_counters(&after);
	if (!n) {
		*ref = after;
		if (p->mram_delta >= 0)
			EXPECT_EQ(before.mram + p->mram_delta, after.mram);
	} else if (ok) {
		EXPECT_EQ(ref->mram, after.mram) TH_LOG("n=%u: mram_resident_bytes", n);
		EXPECT_EQ(ref->wram, after.wram) TH_LOG("n=%u: wram_resident_bytes", n);
	} else {
		EXPECT_EQ(before.mram, after.mram) TH_LOG("n=%u: mram_resident_bytes", n);
		EXPECT_EQ(before.wram, after.wram) TH_LOG("n=%u: wram_resident_bytes", n);
	}
	EXPECT_EQ(0, after.pinned) TH_LOG("n=%u: pinned_pages", n);
	EXPECT_EQ(0, after.jobs) TH_LOG("n=%u: async_jobs", n);
	EXPECT_EQ(before.vmpin, after.vmpin) TH_LOG("n=%u: VmPin", n);
	EXPECT_EQ(before.vmlck, after.vmlck) TH_LOG("n=%u: VmLck", n);
	EXPECT_EQ(0, close(c->fd));
	c->fd = -1;
	return fired;
}

/* Sweep @p; returns the number of n at which a fault fired. */
static unsigned int sweep(struct __test_metadata *_metadata, const struct path *p)
{
	struct counters ref = { 0 };
	unsigned int fired = 0;
	struct nth nth;
	struct ctx *c;
	size_t i;
	int f;

	c = calloc(1, sizeof(*c));
	ASSERT_NE(NULL, c);
	c->back_len = 4 * PAGE + 2 * PAGE;
	c->arena = mmap(NULL, 3 * ARENA_LEN + c->back_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, c->arena);
	c->arena_before = c->arena + ARENA_LEN;
	c->arena_model = c->arena_before + ARENA_LEN;
	c->back = c->arena_model + ARENA_LEN;
	for (i = 0; i < MAX_SNAP; i++) {
		c->snap[i].before = malloc(2 * c->back_len);
		ASSERT_NE(NULL, c->snap[i].before);
		c->snap[i].model = c->snap[i].before + c->back_len;
	}
	nth_open(_metadata, &nth);

	for (nth.n = 0; nth.n <= MAX_NTH; nth.n++) {
		f = run_once(_metadata, p, c, &nth, &ref);
		if (_metadata->exit_code == KSFT_FAIL && nth.n > 3)
			break;	/* one failure is reported, no need for 1000 */
		if (nth.n && !f)
			break;
		fired += f;
	}
	EXPECT_GE(MAX_NTH, nth.n) TH_LOG("still failing at n=%u", MAX_NTH);
	close(nth.fd);
	for (i = 0; i < MAX_SNAP; i++)
		free(c->snap[i].before);
	munmap(c->arena, 3 * ARENA_LEN + c->back_len);
	free(c);
	return fired;
}

FIXTURE(fail_nth)
{
	int unused;
};

FIXTURE_SETUP(fail_nth)
{
	if (fi_missing[0])
		SKIP(return, "%s", fi_missing);
	if (access(NODE, F_OK))
		SKIP(return, "no %s", NODE);
}

FIXTURE_TEARDOWN(fail_nth)
{
}

#define SWEEP(name, prep, opfn, is_xfer, delta)				\
TEST_F_TIMEOUT(fail_nth, name, SWEEP_TIMEOUT)				\
{									\
	static const struct path p = {					\
		.prepare = prep, .op = opfn, .xfer = is_xfer,		\
		.mram_delta = delta,					\
	};								\
	unsigned int n = sweep(_metadata, &p);				\
									\
	ksft_print_msg("%s: %u fault sites swept (n = 1..%u)\n",	\
		       #name, n, n + 1);				\
	EXPECT_LT(0, n) TH_LOG("no fault site at all");			\
}

SWEEP(rank_info, nothing_prepare, op_info, false, 0)
SWEEP(xfer_to_mram_allocating, to_mram_prepare, op_xfer, true, 12 * PAGE)
SWEEP(xfer_from_mram, from_mram_prepare, op_xfer, true, 0)
SWEEP(xfer_to_wram, to_wram_prepare, op_xfer, true, 0)
SWEEP(xfer_no_length_check_padding, pad_prepare, op_xfer, true, -1)
SWEEP(xfer_small_blocks_few_pages, small_blocks_prepare, op_xfer, true, 2 * PAGE)
SWEEP(async_to_mram_then_sync, async_to_mram_prepare, op_async_sync, true, 12 * PAGE)
SWEEP(async_from_mram_then_sync, async_from_mram_prepare, op_async_sync, true, 0)
SWEEP(async_small_blocks_then_sync, async_small_blocks_prepare, op_async_sync, true, 2 * PAGE)
SWEEP(sync_nothing_queued, nothing_prepare, op_sync, false, 0)
SWEEP(sync_of_queued_xfer, queued_prepare, op_queued_sync, true, 12 * PAGE)

/*
 * open() of the rank node: it fails with a clean errno and leaves the rank
 * free, or owns it; closing it leaves nothing behind.
 */
TEST_F_TIMEOUT(fail_nth, open_rank, SWEEP_TIMEOUT)
{
	unsigned int fired = 0;
	struct counters before, after;
	struct nth nth;
	int fd, err, f;

	nth_open(_metadata, &nth);
	for (nth.n = 0; nth.n <= MAX_NTH; nth.n++) {
		read_counters(&before);
		nth_arm(_metadata, &nth);
		fd = open(NODE, O_RDWR | O_CLOEXEC);
		err = errno;
		f = nth_disarm(_metadata, &nth);
		if (fd < 0) {
			EXPECT_TRUE(nth.n && clean_errno(err))
				TH_LOG("n=%u: errno %d (%s)", nth.n, err, strerror(err));
			EXPECT_EQ(0, sysfs_rank_attr(RANK, "is_owned"))
				TH_LOG("n=%u: a failed open() left the rank owned", nth.n);
			EXPECT_TRUE(f) TH_LOG("n=%u: failed without the fault", nth.n);
			fd = open(NODE, O_RDWR | O_CLOEXEC);
			EXPECT_LE(0, fd) TH_LOG("n=%u: open after the failed one: %s",
						nth.n, strerror(errno));
		} else {
			struct dpusim_rank_info info = { .size = sizeof(info) };

			EXPECT_EQ(1, sysfs_rank_attr(RANK, "is_owned"));
			EXPECT_EQ(0, ioctl(fd, DPUSIM_IOCTL_RANK_INFO, &info));
			EXPECT_EQ(RANK, info.rank_index);
		}
		if (fd >= 0)
			EXPECT_EQ(0, close(fd));
		EXPECT_EQ(0, sysfs_rank_attr(RANK, "is_owned")) TH_LOG("n=%u", nth.n);
		read_counters(&after);
		EXPECT_EQ(before.mram, after.mram);
		EXPECT_EQ(before.wram, after.wram);
		EXPECT_EQ(before.vmpin, after.vmpin);
		EXPECT_EQ(before.vmlck, after.vmlck);
		if (_metadata->exit_code == KSFT_FAIL && nth.n > 3)
			break;
		if (nth.n && !f)
			break;
		fired += f;
	}
	EXPECT_GE(MAX_NTH, nth.n);
	close(nth.fd);
	ksft_print_msg("open_rank: %u fault sites swept (n = 1..%u)\n", fired,
		       fired + 1);
	EXPECT_LT(0, fired);
}

/* ------------------------------------------------ DPU programs paths */

/*
 * One call of a DPU-program path under injection, on a fresh open of the
 * rank: DPUSIM_IOCTL_WORKER_OPEN, _LAUNCH, _DPU_STATUS, the worker file's
 * _WORKER_CLAIM and _WORKER_FINISH, mmap of the rank file (with a
 * transfer whose blocks lie in the mapping, so that the mapping's page
 * faults run under injection), the status page (with an asynchronous
 * transfer it counts), and the worker file's window (lw_*).  A failure
 * must be a clean errno that changed nothing: the run state (DPU_STATUS)
 * is as before, the worker file (if any) still works; a success has its
 * effect.  Closing the files leaves the rank free, nothing pinned.
 */
struct lctx {
	int fd, w;
	void *map;
	struct dpusim_dpu_state st[4];
	uint32_t dpu;
	/* the worker's window (lw_*): NULL while not mapped */
	uint8_t *win;
	int pipe[2];
	long long res_m, res_w;		/* resident bytes before the call */
	/* the status page, mapped beforehand (lp_status), and its count */
	const struct dpusim_rank_status *status;
	uint64_t queued0;
};

struct launch_path {
	int (*prepare)(struct lctx *l);		/* injection off: 0 or -1 */
	int (*call)(struct lctx *l);		/* armed: 0 or -1 with errno */
	/* injection off: checks after the call (@r its result) */
	void (*check)(struct __test_metadata *_metadata, struct lctx *l, int r,
		      unsigned int n);
};

static int l_launch(struct lctx *l, uint32_t first, uint32_t nr)
{
	struct dpusim_launch x = { .size = sizeof(x), .first_dpu = first, .nr_dpus = nr };

	return ioctl(l->fd, DPUSIM_IOCTL_LAUNCH, &x);
}

static int l_status(struct lctx *l, uint32_t first, uint32_t nr)
{
	struct dpusim_dpu_status s = {
		.size = sizeof(s), .first_dpu = first, .nr_dpus = nr,
		.states = (uintptr_t)l->st,
	};

	memset(l->st, 0xee, sizeof(l->st));
	return ioctl(l->fd, DPUSIM_IOCTL_DPU_STATUS, &s);
}

static int l_claim(struct lctx *l)
{
	struct dpusim_worker_claim c = {
		.size = sizeof(c), .flags = DPUSIM_CLAIM_NONBLOCK,
	};
	int r = ioctl(l->w, DPUSIM_IOCTL_WORKER_CLAIM, &c);

	if (!r)
		l->dpu = c.dpu;
	return r;
}

static int l_finish(struct lctx *l, uint32_t flags, const char *reason)
{
	struct dpusim_worker_finish f = {
		.size = sizeof(f), .flags = flags, .dpu = l->dpu,
	};

	if (reason)
		strncpy(f.reason, reason, sizeof(f.reason) - 1);
	return ioctl(l->w, DPUSIM_IOCTL_WORKER_FINISH, &f);
}

static int l_worker_open(struct lctx *l)
{
	struct dpusim_worker_open wo = { .size = sizeof(wo) };

	if (ioctl(l->fd, DPUSIM_IOCTL_WORKER_OPEN, &wo))
		return -1;
	l->w = wo.fd;
	return 0;
}

static int lp_none(struct lctx *l)
{
	(void)l;
	return 0;
}

static int lp_worker(struct lctx *l)
{
	return l_worker_open(l);
}

static int lp_launched(struct lctx *l)
{
	return l_worker_open(l) || l_launch(l, 1, 2);
}

static int lp_claimed(struct lctx *l)
{
	return lp_launched(l) || l_claim(l);
}

static void lc_worker_open(struct __test_metadata *_metadata, struct lctx *l,
			   int r, unsigned int n)
{
	if (r) {
		/* no worker file came to be */
		EXPECT_EQ(-1, l_launch(l, 0, 1)) TH_LOG("n=%u", n);
		EXPECT_EQ(ESRCH, errno) TH_LOG("n=%u", n);
		return;
	}
	EXPECT_EQ(O_RDWR, fcntl(l->w, F_GETFL) & O_ACCMODE);
	EXPECT_EQ(0, l_launch(l, 0, 1)) TH_LOG("n=%u: %s", n, strerror(errno));
	EXPECT_EQ(0, l_claim(l)) TH_LOG("n=%u: %s", n, strerror(errno));
	EXPECT_EQ(0, l_finish(l, 0, NULL));
}

static void lc_launch(struct __test_metadata *_metadata, struct lctx *l, int r,
		      unsigned int n)
{
	ASSERT_EQ(0, l_status(l, 0, 4));
	EXPECT_EQ(DPUSIM_DPU_IDLE, l->st[0].state);
	EXPECT_EQ(r ? DPUSIM_DPU_IDLE : DPUSIM_DPU_RUNNING, l->st[1].state)
		TH_LOG("n=%u: result %d", n, r);
	EXPECT_EQ(r ? 0 : 1, l->st[2].launches) TH_LOG("n=%u", n);
	if (!r) {
		EXPECT_EQ(0, l_claim(l));
		EXPECT_EQ(1, l->dpu);
		EXPECT_EQ(0, l_finish(l, 0, NULL));
	}
}

static void lc_status(struct __test_metadata *_metadata, struct lctx *l, int r,
		      unsigned int n)
{
	uint32_t i;

	if (r)
		return;
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(i == 1 || i == 2 ? DPUSIM_DPU_RUNNING : DPUSIM_DPU_IDLE,
			  l->st[i].state) TH_LOG("n=%u: DPU %u", n, i);
		EXPECT_EQ(0, l->st[i].reason[0]);
	}
}

static void lc_claim(struct __test_metadata *_metadata, struct lctx *l, int r,
		     unsigned int n)
{
	if (r) {
		/* nothing held: the claim works now, and gives DPU 1 */
		EXPECT_EQ(0, l_claim(l)) TH_LOG("n=%u: %s", n, strerror(errno));
	}
	EXPECT_EQ(1, l->dpu) TH_LOG("n=%u", n);
	EXPECT_EQ(0, l_finish(l, 0, NULL)) TH_LOG("n=%u: %s", n, strerror(errno));
}

static void lc_finish(struct __test_metadata *_metadata, struct lctx *l, int r,
		      unsigned int n)
{
	ASSERT_EQ(0, l_status(l, 1, 1));
	if (r) {
		EXPECT_EQ(DPUSIM_DPU_RUNNING, l->st[0].state) TH_LOG("n=%u", n);
		EXPECT_EQ(0, l_finish(l, DPUSIM_FINISH_FAULT, "injected"))
			TH_LOG("n=%u: %s", n, strerror(errno));
		ASSERT_EQ(0, l_status(l, 1, 1));
	}
	EXPECT_EQ(DPUSIM_DPU_FAULT, l->st[0].state) TH_LOG("n=%u", n);
	EXPECT_STREQ("injected", l->st[0].reason);
}

static int lo_worker_open(struct lctx *l)
{
	return l_worker_open(l);
}

static int lo_launch(struct lctx *l)
{
	return l_launch(l, 1, 2);
}

static int lo_status(struct lctx *l)
{
	return l_status(l, 0, 4);
}

static int lo_claim(struct lctx *l)
{
	return l_claim(l);
}

static int lo_finish(struct lctx *l)
{
	return l_finish(l, DPUSIM_FINISH_FAULT, "injected");
}

/* mmap of DPU 2's MRAM, then a transfer to DPU 3 from the mapping */
static int lo_mmap_xfer(struct lctx *l)
{
	struct dpusim_xfer_dpu d = { .dpu = 3, .nr_blocks = 1 };
	struct dpusim_block b = { 0, 4 * PAGE };
	struct dpusim_xfer x = {
		.size = sizeof(x), .length = 4 * PAGE, .nr_dpus = 1,
		.nr_blocks = 1, .dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};

	l->map = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, l->fd,
		      DPUSIM_MMAP_MRAM(2));
	if (l->map == MAP_FAILED)
		return -1;
	b.addr = (uintptr_t)l->map;
	return xfer(l->fd, &x);
}

static void lc_mmap_xfer(struct __test_metadata *_metadata, struct lctx *l,
			 int r, unsigned int n)
{
	uint8_t *m = l->map;

	if (m == MAP_FAILED)
		return;
	/* the mapping works now; what the transfer did or not, whole */
	m[5] = 0x5a;
	EXPECT_EQ(0x5a, m[5]) TH_LOG("n=%u", n);
	EXPECT_LE(PAGE, sysfs_rank_attr(RANK, "mram_resident_bytes"));
	if (!r)
		EXPECT_EQ(8 * PAGE, sysfs_rank_attr(RANK, "mram_resident_bytes"))
			TH_LOG("n=%u", n);
	munmap(l->map, 4 * PAGE);
}

/* The status page, mapped before the call: it counts what the call queues */
static int lp_status(struct lctx *l)
{
	void *p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, l->fd, DPUSIM_MMAP_STATUS);

	if (p == MAP_FAILED)
		return -1;
	l->status = p;
	l->queued0 = l->status->async_queued;
	return 0;
}

/* mmap of the status page, then an asynchronous transfer it counts */
static uint8_t status_src[PAGE] __attribute__((aligned(PAGE)));

static int lo_status_mmap_async(struct lctx *l)
{
	struct dpusim_xfer_dpu d = { .dpu = 3, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)status_src, PAGE };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_ASYNC, .length = PAGE,
		.nr_dpus = 1, .nr_blocks = 1, .dpus = (uintptr_t)&d,
		.blocks = (uintptr_t)&b,
	};

	l->map = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, l->fd, DPUSIM_MMAP_STATUS);
	if (l->map == MAP_FAILED)
		return -1;
	return xfer(l->fd, &x);
}

static void lc_status_mmap_async(struct __test_metadata *_metadata,
				 struct lctx *l, int r, unsigned int n)
{
	struct dpusim_sync s = { .size = sizeof(s) };
	const struct dpusim_rank_status *st = l->map;

	EXPECT_EQ(0, ioctl(l->fd, DPUSIM_IOCTL_SYNC, &s)) TH_LOG("n=%u: SYNC: %s", n,
								 strerror(errno));
	/* a failed call queued nothing; the job of one that did is done */
	EXPECT_EQ(l->queued0 + !r, l->status->async_queued) TH_LOG("n=%u", n);
	EXPECT_EQ(l->queued0 + !r, l->status->async_done) TH_LOG("n=%u", n);
	if (st == MAP_FAILED) {
		/* the failed mmap left nothing behind: one maps now */
		st = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, l->fd, DPUSIM_MMAP_STATUS);
		ASSERT_NE(MAP_FAILED, st) TH_LOG("n=%u: the status page after a failed mmap: %s",
						 n, strerror(errno));
	}
	EXPECT_EQ(l->status->async_done, st->async_done) TH_LOG("n=%u: not the same page", n);
	/* the mappings hold the rank file: they go before its close */
	munmap((void *)st, PAGE);
	munmap((void *)l->status, PAGE);
}

/*
 * The worker's window (DPUSIM_MMAP_WINDOW).  Before the launch, DPUs 1
 * and 2 hold a pattern of their own in WRAM pages 0-1 and MRAM pages 0,
 * 1 and 3 (MRAM page 2 is a hole); DPU 1 is the one claimed.  The armed
 * call is a CLAIM with the window mapped (its fill allocates the page
 * tables; a fill that fails leaves the pages to their first touch), an
 * mmap of the window followed by a read of the hole through it (the
 * fault handler allocates the page and the page table), or a FINISH with
 * the window filled (it empties it).  After a failure nothing changed:
 * the run state (DPU_STATUS, and whether the DPU is held), the resident
 * bytes, and the budget's charge (exactly the resident bytes of every
 * rank); the window shows the held DPU's bytes, or nothing (SIGBUS) while
 * none is held, and a failed mmap left no window behind (another one
 * maps).  A success has its effect, and the same holds after it.
 */
#define LW_WRAM_PAGES	2
#define LW_HOLE		2		/* the MRAM page never written */
#define LW_PROBE	64		/* bytes of the hole the armed read takes */

static uint8_t lw_pat(uint32_t dpu, uint32_t wram, uint64_t off)
{
	return (uint8_t)(off * 7 + (off >> 12) * 13 + dpu * 31 + (wram ? 101 : 0) + 1);
}

static int lw_write(struct lctx *l, uint32_t dpu, uint32_t wram, uint64_t off,
		    uint64_t len)
{
	static uint8_t buf[2 * PAGE];
	struct dpusim_xfer_dpu d = { .dpu = dpu, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)buf, len };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = wram, .offset = off, .length = len,
		.nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};
	uint64_t i;

	for (i = 0; i < len && i < sizeof(buf); i++)
		buf[i] = lw_pat(dpu, wram, off + i);
	return xfer(l->fd, &x);
}

static void lw_resident(struct lctx *l)
{
	l->res_m = sysfs_rank_attr(RANK, "mram_resident_bytes");
	l->res_w = sysfs_rank_attr(RANK, "wram_resident_bytes");
}

static int lw_map(struct lctx *l)
{
	void *p = mmap(NULL, DPUSIM_WINDOW_SIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED, l->w, DPUSIM_MMAP_WINDOW);

	if (p == MAP_FAILED)
		return -1;
	l->win = p;
	return 0;
}

/* The patterns, a worker file, DPUs 1 and 2 RUNNING. */
static int lw_setup(struct lctx *l)
{
	uint32_t d;

	l->pipe[0] = l->pipe[1] = -1;
	for (d = 1; d <= 2; d++)
		if (lw_write(l, d, DPUSIM_XFER_WRAM, 0, LW_WRAM_PAGES * PAGE) ||
		    lw_write(l, d, 0, 0, 2 * PAGE) ||
		    lw_write(l, d, 0, 3 * PAGE, PAGE))
			return -1;
	return l_worker_open(l) || l_launch(l, 1, 2);
}

/* Window mapped, nothing claimed: the CLAIM fills it. */
static int lp_window_mapped(struct lctx *l)
{
	if (lw_setup(l) || lw_map(l))
		return -1;
	lw_resident(l);
	return 0;
}

/* DPU 1 claimed, no window yet. */
static int lp_window_claimed(struct lctx *l)
{
	if (lw_setup(l) || l_claim(l) || pipe2(l->pipe, O_CLOEXEC))
		return -1;
	lw_resident(l);
	return 0;
}

/* DPU 1 claimed into the window, the hole touched (mapped by a fault). */
static int lp_window_filled(struct lctx *l)
{
	if (lw_setup(l) || lw_map(l) || l_claim(l))
		return -1;
	l->win[DPUSIM_WINDOW_MRAM + LW_HOLE * PAGE + 8] = 0;
	lw_resident(l);
	return 0;
}

static int lo_window_claim(struct lctx *l)
{
	return l_claim(l);
}

/*
 * The hole is read by the kernel (a pipe write from the window): a fault
 * site of the copy itself (the pipe's page, the user copy) fails the call,
 * and those of the window's fault (page tables, the memory's page and
 * xarray node, the PFN's page table) run under injection.  A failed fault
 * is retried, as a process's own access would be (the copy routine's
 * byte loop faults again; VM_FAULT_OOM out of a user fault returns to the
 * access): the call succeeds, and what the failed attempt left behind
 * must be consistent with that (one page resident and charged, the hole
 * shown through the window).
 */
static int lo_window_mmap_read(struct lctx *l)
{
	if (lw_map(l))
		return -1;
	return write(l->pipe[1], l->win + DPUSIM_WINDOW_MRAM + LW_HOLE * PAGE,
		     LW_PROBE) == LW_PROBE ? 0 : -1;
}

static int lo_window_finish(struct lctx *l)
{
	return l_finish(l, 0, NULL);
}

static sigjmp_buf lw_jmp;

static void lw_on_sigbus(int sig)
{
	siglongjmp(lw_jmp, sig);
}

/* Copy @len bytes of the window at @off: 0, or the signal an access got. */
static int lw_read(struct lctx *l, uint64_t off, void *dst, size_t len)
{
	struct sigaction sa = { .sa_handler = lw_on_sigbus }, old;
	int sig;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	sig = sigsetjmp(lw_jmp, 1);
	if (!sig)
		memcpy(dst, l->win + off, len);
	sigaction(SIGBUS, &old, NULL);
	return sig;
}

/* @len bytes of the window at @off are DPU @dpu's (at @mem_off of WRAM or MRAM) */
static bool lw_shows_range(struct __test_metadata *_metadata, struct lctx *l,
			   uint32_t dpu, uint32_t wram, uint64_t mem_off,
			   uint64_t len, unsigned int n)
{
	static uint8_t got[2 * PAGE];
	uint64_t off = (wram ? 0 : DPUSIM_WINDOW_MRAM) + mem_off, i;
	int sig = lw_read(l, off, got, len);

	if (sig) {
		TH_LOG("n=%u: window byte %#llx (DPU %u %s %#llx): signal %d",
		       n, (unsigned long long)off, dpu, wram ? "WRAM" : "MRAM",
		       (unsigned long long)mem_off, sig);
		return false;
	}
	for (i = 0; i < len; i++) {
		if (got[i] != lw_pat(dpu, wram, mem_off + i)) {
			TH_LOG("n=%u: window byte %#llx is %#x, not DPU %u's %s byte %#llx (%#x)",
			       n, (unsigned long long)(off + i), got[i], dpu,
			       wram ? "WRAM" : "MRAM",
			       (unsigned long long)(mem_off + i),
			       lw_pat(dpu, wram, mem_off + i));
			return false;
		}
	}
	return true;
}

/* The window shows every page DPU @dpu was written. */
static bool lw_shows(struct __test_metadata *_metadata, struct lctx *l,
		     uint32_t dpu, unsigned int n)
{
	return lw_shows_range(_metadata, l, dpu, DPUSIM_XFER_WRAM, 0,
			      LW_WRAM_PAGES * PAGE, n) &&
	       lw_shows_range(_metadata, l, dpu, 0, 0, 2 * PAGE, n) &&
	       lw_shows_range(_metadata, l, dpu, 0, 3 * PAGE, PAGE, n);
}

/* Nothing held: a touch of either side of the window gets SIGBUS. */
static bool lw_empty(struct __test_metadata *_metadata, struct lctx *l,
		     unsigned int n)
{
	static const uint64_t at[] = {
		0, PAGE + 8, DPUSIM_WINDOW_MRAM, DPUSIM_WINDOW_MRAM + LW_HOLE * PAGE,
		DPUSIM_WINDOW_MRAM + 3 * PAGE + 100,
	};
	unsigned int i;
	uint8_t b;

	for (i = 0; i < ARRAY_SIZE(at); i++) {
		if (lw_read(l, at[i], &b, 1) != SIGBUS) {
			TH_LOG("n=%u: nothing held, yet window byte %#llx reads %#x",
			       n, (unsigned long long)at[i], b);
			return false;
		}
	}
	return true;
}

/*
 * The budget's charge is exactly the resident bytes of every rank: with
 * the limit set to those plus one page, a transfer to a hole of DPU 5
 * (never launched) allocates its page, and one to a second hole fails
 * with ENOSPC.  A charge left behind fails the first, one given back
 * twice lets the second through.
 */
static void lw_budget_exact(struct __test_metadata *_metadata, struct lctx *l,
			    unsigned int n)
{
	long long limit = mram_budget_read(), used = 0, a, b;
	char path[64];
	int r1, r2, e1, e2, rk;

	ASSERT_LT(0, limit) TH_LOG("mram_budget");
	for (rk = 0; rk < 64; rk++) {
		snprintf(path, sizeof(path), "/sys/class/dpusim/rank%d", rk);
		if (access(path, F_OK))
			break;
		a = sysfs_rank_attr(rk, "mram_resident_bytes");
		b = sysfs_rank_attr(rk, "wram_resident_bytes");
		used += (a > 0 ? a : 0) + (b > 0 ? b : 0);
	}
	ASSERT_EQ(0, mram_budget_write(used + PAGE));
	r1 = lw_write(l, 5, 0, 64 * PAGE, PAGE);
	e1 = errno;
	r2 = lw_write(l, 5, 0, 66 * PAGE, PAGE);
	e2 = errno;
	ASSERT_EQ(0, mram_budget_write(limit));
	EXPECT_EQ(0, r1) TH_LOG("n=%u: a page within the budget: %s (a charge left behind)",
				n, strerror(e1));
	EXPECT_EQ(-1, r2) TH_LOG("n=%u: a page past the budget was allocated (a charge given back twice)",
				 n);
	if (r2)
		EXPECT_EQ(ENOSPC, e2) TH_LOG("n=%u", n);
}

/*
 * DPU_STATUS of DPUs 0-3: DPU 1 @st1, DPU 2 RUNNING; with @held, a claim
 * fails with EINVAL (the worker holds a DPU).
 */
static void lw_state(struct __test_metadata *_metadata, struct lctx *l,
		     uint32_t st1, bool held, unsigned int n)
{
	struct dpusim_worker_claim c = {
		.size = sizeof(c), .flags = DPUSIM_CLAIM_NONBLOCK,
	};

	ASSERT_EQ(0, l_status(l, 0, 4));
	EXPECT_EQ(DPUSIM_DPU_IDLE, l->st[0].state) TH_LOG("n=%u", n);
	EXPECT_EQ(st1, l->st[1].state) TH_LOG("n=%u: DPU 1", n);
	EXPECT_EQ(DPUSIM_DPU_RUNNING, l->st[2].state) TH_LOG("n=%u: DPU 2", n);
	EXPECT_EQ(1, l->st[1].launches) TH_LOG("n=%u", n);
	if (held) {
		EXPECT_EQ(-1, ioctl(l->w, DPUSIM_IOCTL_WORKER_CLAIM, &c))
			TH_LOG("n=%u: the worker holds no DPU", n);
		EXPECT_EQ(EINVAL, errno) TH_LOG("n=%u", n);
	}
}

/* Resident bytes: the call's @dm more MRAM than before, WRAM as before */
static void lw_res_is(struct __test_metadata *_metadata, struct lctx *l,
		      long long dm, unsigned int n, const char *when)
{
	EXPECT_EQ(l->res_m + dm, sysfs_rank_attr(RANK, "mram_resident_bytes"))
		TH_LOG("n=%u: mram_resident_bytes %s", n, when);
	EXPECT_EQ(l->res_w, sysfs_rank_attr(RANK, "wram_resident_bytes"))
		TH_LOG("n=%u: wram_resident_bytes %s", n, when);
}

/* FINISH (DONE) empties the window; the budget; unmapped. */
static void lw_end(struct __test_metadata *_metadata, struct lctx *l,
		   unsigned int n)
{
	EXPECT_EQ(0, l_finish(l, 0, NULL)) TH_LOG("n=%u: %s", n, strerror(errno));
	EXPECT_TRUE(lw_empty(_metadata, l, n)) TH_LOG("n=%u: after FINISH", n);
	ASSERT_EQ(0, l_status(l, 1, 1));
	EXPECT_EQ(DPUSIM_DPU_DONE, l->st[0].state) TH_LOG("n=%u", n);
	lw_budget_exact(_metadata, l, n);
	EXPECT_EQ(0, munmap(l->win, DPUSIM_WINDOW_SIZE));
	l->win = NULL;
}

static void lc_window_claim(struct __test_metadata *_metadata, struct lctx *l,
			    int r, unsigned int n)
{
	uint8_t hole[PAGE];

	ASSERT_NE(NULL, l->win);
	/* CLAIM allocates no memory page, whatever happened */
	lw_res_is(_metadata, l, 0, n, "after the CLAIM");
	lw_state(_metadata, l, DPUSIM_DPU_RUNNING, !r, n);
	if (r) {
		/* nothing held: the window shows nothing, the claim works now */
		EXPECT_TRUE(lw_empty(_metadata, l, n))
			TH_LOG("n=%u: the failed CLAIM left a DPU in the window", n);
		EXPECT_EQ(0, l_claim(l)) TH_LOG("n=%u: %s", n, strerror(errno));
	}
	EXPECT_EQ(1, l->dpu) TH_LOG("n=%u", n);
	/* the resident pages: filled, or mapped at their first touch */
	EXPECT_TRUE(lw_shows(_metadata, l, 1, n));
	lw_res_is(_metadata, l, 0, n, "after reading resident pages");
	/* the hole: zeros, the page allocated by the fault */
	EXPECT_EQ(0, lw_read(l, DPUSIM_WINDOW_MRAM + LW_HOLE * PAGE, hole, PAGE))
		TH_LOG("n=%u", n);
	EXPECT_EQ(0, hole[0] | hole[PAGE - 1] | memcmp(hole, hole + 1, PAGE - 1))
		TH_LOG("n=%u: the hole is not zeros", n);
	lw_res_is(_metadata, l, PAGE, n, "after reading the hole");
	lw_end(_metadata, l, n);
}

static void lc_window_mmap_read(struct __test_metadata *_metadata,
				struct lctx *l, int r, unsigned int n)
{
	uint8_t got[LW_PROBE], zero[LW_PROBE] = { 0 };

	lw_state(_metadata, l, DPUSIM_DPU_RUNNING, true, n);
	if (!l->win) {
		/* the failed mmap left no window: one maps now */
		lw_res_is(_metadata, l, 0, n, "after the failed mmap");
		ASSERT_EQ(0, lw_map(l)) TH_LOG("n=%u: the window after a failed mmap: %s",
					       n, strerror(errno));
	} else {
		/* the hole's page came to be with the read, and only then */
		lw_res_is(_metadata, l, r ? 0 : PAGE, n,
			  r ? "after the failed read of the hole" :
			      "after the read of the hole");
	}
	if (!r) {
		EXPECT_EQ(LW_PROBE, read(l->pipe[0], got, LW_PROBE));
		EXPECT_EQ(0, memcmp(got, zero, LW_PROBE)) TH_LOG("n=%u", n);
	}
	EXPECT_TRUE(lw_shows(_metadata, l, 1, n));
	EXPECT_EQ(0, lw_read(l, DPUSIM_WINDOW_MRAM + LW_HOLE * PAGE, got, LW_PROBE))
		TH_LOG("n=%u", n);
	EXPECT_EQ(0, memcmp(got, zero, LW_PROBE)) TH_LOG("n=%u: the hole", n);
	lw_res_is(_metadata, l, PAGE, n, "after reading the hole");
	lw_end(_metadata, l, n);
	close(l->pipe[0]);
	close(l->pipe[1]);
}

static void lc_window_finish(struct __test_metadata *_metadata,
			     struct lctx *l, int r, unsigned int n)
{
	lw_res_is(_metadata, l, 0, n, "after the FINISH");
	lw_state(_metadata, l, r ? DPUSIM_DPU_RUNNING : DPUSIM_DPU_DONE, r, n);
	if (r) {
		/* still held, still in the window */
		EXPECT_TRUE(lw_shows(_metadata, l, 1, n))
			TH_LOG("n=%u: the failed FINISH changed the window", n);
		lw_end(_metadata, l, n);
		return;
	}
	EXPECT_TRUE(lw_empty(_metadata, l, n)) TH_LOG("n=%u: after FINISH", n);
	lw_res_is(_metadata, l, 0, n, "after touching the empty window");
	lw_budget_exact(_metadata, l, n);
	EXPECT_EQ(0, munmap(l->win, DPUSIM_WINDOW_SIZE));
	l->win = NULL;
}

static unsigned int launch_sweep(struct __test_metadata *_metadata,
				 const struct launch_path *p)
{
	struct counters before, after;
	unsigned int fired = 0;
	struct lctx l;
	struct nth nth;
	int r, err, f;

	nth_open(_metadata, &nth);
	for (nth.n = 0; nth.n <= MAX_NTH; nth.n++) {
		memset(&l, 0, sizeof(l));
		l.w = -1;
		l.map = MAP_FAILED;
		l.fd = open(NODE, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, l.fd) TH_LOG("n=%u: open: %s", nth.n, strerror(errno));
		ASSERT_EQ(0, p->prepare(&l)) TH_LOG("n=%u: prepare: %s", nth.n,
						     strerror(errno));
		read_counters(&before);
		nth_arm(_metadata, &nth);
		r = p->call(&l);
		err = errno;
		f = nth_disarm(_metadata, &nth);
		if (r)
			EXPECT_TRUE(nth.n && clean_errno(err))
				TH_LOG("n=%u: errno %d (%s), not one an injected fault may give",
				       nth.n, err, strerror(err));
		if (!nth.n)
			ASSERT_EQ(0, r) TH_LOG("the uninjected run failed: %s",
					       strerror(err));
		if (nth.n && !f)
			EXPECT_EQ(0, r) TH_LOG("n=%u: failed (%s) without the fault",
					       nth.n, strerror(err));
		p->check(_metadata, &l, r, nth.n);
		read_counters(&after);
		EXPECT_EQ(0, after.pinned) TH_LOG("n=%u: pinned_pages", nth.n);
		EXPECT_EQ(before.vmpin, after.vmpin) TH_LOG("n=%u: VmPin", nth.n);
		/* the worker file first: the rank's release kills claimers */
		if (l.w >= 0)
			EXPECT_EQ(0, close(l.w));
		EXPECT_EQ(0, close(l.fd));
		EXPECT_EQ(0, sysfs_rank_attr(RANK, "is_owned")) TH_LOG("n=%u", nth.n);
		EXPECT_EQ(0, sysfs_rank_attr(RANK, "mram_resident_bytes"));
		if (_metadata->exit_code == KSFT_FAIL && nth.n > 3)
			break;
		if (nth.n && !f)
			break;
		fired += f;
	}
	EXPECT_GE(MAX_NTH, nth.n);
	close(nth.fd);
	return fired;
}

#define LAUNCH_SWEEP(name, prep, callfn, checkfn)			\
TEST_F_TIMEOUT(fail_nth, name, SWEEP_TIMEOUT)				\
{									\
	static const struct launch_path p = {				\
		.prepare = prep, .call = callfn, .check = checkfn,	\
	};								\
	unsigned int n = launch_sweep(_metadata, &p);			\
									\
	ksft_print_msg("%s: %u fault sites swept (n = 1..%u)\n",	\
		       #name, n, n + 1);				\
	EXPECT_LT(0, n) TH_LOG("no fault site at all");			\
}

/* DPUSIM_IOCTL_WORKER_OPEN */
LAUNCH_SWEEP(worker_open, lp_none, lo_worker_open, lc_worker_open)
/* DPUSIM_IOCTL_LAUNCH */
LAUNCH_SWEEP(launch, lp_worker, lo_launch, lc_launch)
/* DPUSIM_IOCTL_DPU_STATUS */
LAUNCH_SWEEP(dpu_status, lp_launched, lo_status, lc_status)
/* DPUSIM_IOCTL_WORKER_CLAIM */
LAUNCH_SWEEP(worker_claim, lp_launched, lo_claim, lc_claim)
/* DPUSIM_IOCTL_WORKER_FINISH */
LAUNCH_SWEEP(worker_finish, lp_claimed, lo_finish, lc_finish)
/* mmap of the rank file and page faults of the mapping */
LAUNCH_SWEEP(mmap_fault_in_xfer, lp_none, lo_mmap_xfer, lc_mmap_xfer)
/* mmap of the status page (DPUSIM_MMAP_STATUS), an asynchronous transfer */
LAUNCH_SWEEP(status_mmap_async, lp_status, lo_status_mmap_async, lc_status_mmap_async)
/* DPUSIM_IOCTL_WORKER_CLAIM filling the worker's window */
LAUNCH_SWEEP(window_claim_fill, lp_window_mapped, lo_window_claim, lc_window_claim)
/* mmap of the window, and the fault of a hole through it */
LAUNCH_SWEEP(window_mmap_fault, lp_window_claimed, lo_window_mmap_read,
	     lc_window_mmap_read)
/* DPUSIM_IOCTL_WORKER_FINISH emptying the window */
LAUNCH_SWEEP(window_finish, lp_window_filled, lo_window_finish, lc_window_finish)

/* ------------------------------------------------------ stream paths */

/*
 * The stream ioctls under injection, each on a fresh open of the rank:
 * STREAM_CREATE (a stream of data, and an empty one), OPEN, CLOSE and
 * SEEK; OPEN registering a token buffer (struct dpusim_stream_cmd @buf:
 * its struct and page array allocated, its pages faulted in and pinned)
 * and the CLOSE that lets go of it.  Beforehand (injection off) stream 0
 * (data: 7 tokens, 100 bytes in tokens of 16) and stream 1 (empty) exist;
 * for CLOSE and SEEK stream 0 is open by core 3 at token 4 (with a
 * buffer for the CLOSE that lets go of one).  After a failure nothing
 * changed: no stream was created (the next create gets id 2, and OPEN of
 * id 2 says ENOENT), stream_resident_bytes is as before, the budget's
 * charge is exactly the resident bytes (one page more fits, two do not),
 * stream 0's holder and cursor are as before (SEEK by 0 of its holder,
 * OPEN when it has none), the rank's pinned_pages and VmPin are as
 * before; a success has its effect, exactly (a buffer registered: its
 * pages pinned and charged to VmPin; let go: neither).  Closing the rank
 * frees every stream, and lets go of every buffer.
 */
#define ST_DATA_LEN	(3 * PAGE + 100)	/* the armed create's data */
#define ST_TOKEN	64
#define ST_BUF_LEN	(3 * PAGE + 100)	/* a token buffer: 4 pages */
#define ST_BUF_PAGES	4

struct sctx {
	int fd;
	uint8_t data[ST_DATA_LEN];
	struct dpusim_stream_create made;	/* the armed create's answer */
	long long res, res_m, res_w;		/* resident bytes before the call */
	long long pinned;			/* pinned_pages before the call */
	long vmpin;				/* VmPin (kB) before the call */
	uint8_t *rb;				/* a token buffer mapped, or NULL */
};

struct stream_path {
	int (*prepare)(struct sctx *s);		/* injection off: 0 or -1 */
	int (*call)(struct sctx *s);		/* armed: 0 or -1 with errno */
	/* injection off: checks after the call (@r its result) */
	void (*check)(struct __test_metadata *_metadata, struct sctx *s, int r,
		      unsigned int n);
};

static int s_create(struct sctx *s, uint64_t size, uint32_t token,
		    const void *data, struct dpusim_stream_create *out)
{
	struct dpusim_stream_create c = {
		.size = sizeof(c), .stream_size = size, .token_size = token,
		.data = (uintptr_t)data,
	};
	int r = ioctl(s->fd, DPUSIM_IOCTL_STREAM_CREATE, &c);

	if (out)
		*out = c;
	return r;
}

static int s_cmd(struct sctx *s, unsigned long cmd, uint32_t id, uint32_t core,
		 int32_t delta, struct dpusim_stream_cmd *out)
{
	struct dpusim_stream_cmd c = {
		.size = sizeof(c), .id = id, .core = core, .delta = delta,
	};
	int r = ioctl(s->fd, cmd, &c);

	if (out)
		*out = c;
	return r;
}

/* Streams 0 (data, 7 tokens) and 1 (empty). */
static int sp_two(struct sctx *s)
{
	return s_create(s, 100, 16, s->data, NULL) ||
	       s_create(s, 4096, 16, NULL, NULL);
}

/* ... and stream 0 open by core 3, its cursor on token 4. */
static int sp_held(struct sctx *s)
{
	return sp_two(s) ||
	       s_cmd(s, DPUSIM_IOCTL_STREAM_OPEN, 0, 3, 0, NULL) ||
	       s_cmd(s, DPUSIM_IOCTL_STREAM_SEEK, 0, 3, 4, NULL);
}

/* OPEN of stream @id by @core registering @len bytes at @buf */
static int s_open_buf(struct sctx *s, uint32_t id, uint32_t core,
		      const void *buf, uint64_t len)
{
	struct dpusim_stream_cmd c = {
		.size = sizeof(c), .id = id, .core = core,
		.buf = (uintptr_t)buf, .buf_len = len,
	};

	return ioctl(s->fd, DPUSIM_IOCTL_STREAM_OPEN, &c);
}

/* Streams 0 and 1, and a token buffer mapped (never touched: no page yet) */
static int sp_two_buf(struct sctx *s)
{
	s->rb = mmap(NULL, ST_BUF_PAGES * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->rb == MAP_FAILED) {
		s->rb = NULL;
		return -1;
	}
	return sp_two(s);
}

/* ... and stream 0 open by core 3 with the buffer, its cursor on token 4 */
static int sp_held_buf(struct sctx *s)
{
	return sp_two_buf(s) ||
	       s_open_buf(s, 0, 3, s->rb, ST_BUF_LEN) ||
	       s_cmd(s, DPUSIM_IOCTL_STREAM_SEEK, 0, 3, 4, NULL);
}

static int so_create_data(struct sctx *s)
{
	return s_create(s, ST_DATA_LEN, ST_TOKEN, s->data, &s->made);
}

static int so_create_empty(struct sctx *s)
{
	return s_create(s, 1 << 20, 16, NULL, &s->made);
}

static int so_open(struct sctx *s)
{
	return s_cmd(s, DPUSIM_IOCTL_STREAM_OPEN, 0, 5, 0, NULL);
}

static int so_open_buf(struct sctx *s)
{
	return s_open_buf(s, 0, 5, s->rb, ST_BUF_LEN);
}

static int so_close(struct sctx *s)
{
	return s_cmd(s, DPUSIM_IOCTL_STREAM_CLOSE, 0, 3, 0, NULL);
}

static int so_seek(struct sctx *s)
{
	return s_cmd(s, DPUSIM_IOCTL_STREAM_SEEK, 0, 3, 2, NULL);
}

/*
 * The budget's charge is exactly what is resident (all ranks: MRAM, WRAM,
 * streams, with the token tables of empty ones): with the budget set to
 * that plus a page, one stream of 64 bytes of data (a page, no table) is
 * created and a second one is refused.
 */
static void st_budget_exact(struct __test_metadata *_metadata, struct sctx *s,
			    unsigned int n)
{
	static const uint8_t probe_data[64] = { 1, 2, 3 };
	static const char *const attr[] = {
		"mram_resident_bytes", "wram_resident_bytes",
		"stream_resident_bytes",
	};
	long long limit = mram_budget_read(), used = 0, v;
	char path[64];
	int r1, r2, e1, e2, rk, i;

	ASSERT_LT(0, limit) TH_LOG("mram_budget");
	for (rk = 0; rk < 64; rk++) {
		snprintf(path, sizeof(path), "/sys/class/dpusim/rank%d", rk);
		if (access(path, F_OK))
			break;
		for (i = 0; i < 3; i++)
			if ((v = sysfs_rank_attr(rk, attr[i])) > 0)
				used += v;
	}
	ASSERT_EQ(0, mram_budget_write(used + PAGE));
	r1 = s_create(s, 64, 16, probe_data, NULL);
	e1 = errno;
	r2 = s_create(s, 64, 16, probe_data, NULL);
	e2 = errno;
	ASSERT_EQ(0, mram_budget_write(limit));
	EXPECT_EQ(0, r1) TH_LOG("n=%u: a stream of a page within the budget: %s (a charge left behind)",
				n, strerror(e1));
	EXPECT_EQ(-1, r2) TH_LOG("n=%u: a stream past the budget was created (a charge given back twice)",
				 n);
	if (r2)
		EXPECT_EQ(ENOSPC, e2) TH_LOG("n=%u", n);
}

/*
 * Stream 0: with @holder >= 0, open by that core at token @cursor (its
 * holder's SEEK by 0 says so, another core's OPEN is EBUSY); else open by
 * nobody (the core @holder_was, if >= 0, cannot SEEK it; OPEN works, and
 * is closed again).
 */
static void st_stream0_is(struct __test_metadata *_metadata, struct sctx *s,
			  int holder, uint32_t cursor, int holder_was,
			  unsigned int n, const char *what)
{
	struct dpusim_stream_cmd o;
	int r;

	if (holder >= 0) {
		r = s_cmd(s, DPUSIM_IOCTL_STREAM_SEEK, 0, holder, 0, &o);
		EXPECT_EQ(0, r) TH_LOG("n=%u %s: stream 0 is not open by core %d: %s",
				       n, what, holder, strerror(errno));
		if (!r) {
			EXPECT_EQ(cursor, o.cursor) TH_LOG("n=%u %s: the cursor", n, what);
			EXPECT_EQ(cursor < 6 ? 16 : cursor == 6 ? 4 : 0, o.token)
				TH_LOG("n=%u %s", n, what);
			EXPECT_EQ(7, o.nr_tokens) TH_LOG("n=%u %s", n, what);
			EXPECT_EQ(cursor < 7 ? 24 * cursor : 156, o.offset)
				TH_LOG("n=%u %s", n, what);
			EXPECT_EQ(!cursor ? 0 : cursor < 7 ? 16 : 4, o.prev)
				TH_LOG("n=%u %s", n, what);
		}
		r = s_cmd(s, DPUSIM_IOCTL_STREAM_OPEN, 0, 7, 0, NULL);
		EXPECT_EQ(-1, r) TH_LOG("n=%u %s: stream 0 opens by core 7", n, what);
		if (r)
			EXPECT_EQ(EBUSY, errno) TH_LOG("n=%u %s", n, what);
		return;
	}
	if (holder_was >= 0) {
		r = s_cmd(s, DPUSIM_IOCTL_STREAM_SEEK, 0, holder_was, 0, &o);
		EXPECT_EQ(-1, r) TH_LOG("n=%u %s: stream 0 is open by core %d (cursor %u)",
					n, what, holder_was, o.cursor);
		if (r)
			EXPECT_EQ(EINVAL, errno) TH_LOG("n=%u %s", n, what);
	}
	r = s_cmd(s, DPUSIM_IOCTL_STREAM_OPEN, 0, 7, 0, &o);
	EXPECT_EQ(0, r) TH_LOG("n=%u %s: stream 0 should be open by nobody: OPEN: %s",
			       n, what, strerror(errno));
	if (!r) {
		EXPECT_EQ(0, o.cursor) TH_LOG("n=%u %s", n, what);
		EXPECT_EQ(0, s_cmd(s, DPUSIM_IOCTL_STREAM_CLOSE, 0, 7, 0, NULL))
			TH_LOG("n=%u %s: %s", n, what, strerror(errno));
	}
}

static void sc_create(struct __test_metadata *_metadata, struct sctx *s, int r,
		      unsigned int n, bool down)
{
	struct dpusim_stream_create c;
	long long res = sysfs_rank_attr(RANK, "stream_resident_bytes");
	uint64_t mem, tokens;

	if (down) {
		tokens = (ST_DATA_LEN + ST_TOKEN - 1) / ST_TOKEN;
		mem = ST_DATA_LEN + (tokens + 1) * 8;
	} else {
		tokens = 0;
		mem = (1 << 20) + ((1 << 20) / 8 + 1) * 8;
	}
	if (r) {
		EXPECT_EQ(s->res, res) TH_LOG("n=%u: stream_resident_bytes after a failed create", n);
		EXPECT_EQ(-1, s_cmd(s, DPUSIM_IOCTL_STREAM_OPEN, 2, 0, 0, NULL))
			TH_LOG("n=%u: the failed create left stream 2 behind", n);
		EXPECT_EQ(ENOENT, errno) TH_LOG("n=%u", n);
		st_budget_exact(_metadata, s, n);	/* creates stream 2, 3 maybe */
		/* the numbering went on as if the call never was */
		ASSERT_EQ(0, s_create(s, 64, 16, s->data, &c)) TH_LOG("n=%u: %s", n,
								     strerror(errno));
		EXPECT_EQ(3, c.id) TH_LOG("n=%u: the next ids", n);
	} else {
		EXPECT_EQ(2, s->made.id) TH_LOG("n=%u", n);
		EXPECT_EQ(tokens, s->made.nr_tokens) TH_LOG("n=%u", n);
		EXPECT_EQ(mem, s->made.mem_size) TH_LOG("n=%u", n);
		/* an empty one: a page, and its token tables (12 bytes a token) */
		EXPECT_EQ(s->res + (long long)(down ? (mem + PAGE - 1) / PAGE * PAGE :
					       PAGE + (((1 << 20) / 8 + 1) * 12 + PAGE - 1) /
						      PAGE * PAGE),
			  res) TH_LOG("n=%u: stream_resident_bytes", n);
		EXPECT_EQ(0, s_cmd(s, DPUSIM_IOCTL_STREAM_OPEN, 2, 0, 0, NULL))
			TH_LOG("n=%u: OPEN of the new stream: %s", n, strerror(errno));
		st_budget_exact(_metadata, s, n);
		ASSERT_EQ(0, s_create(s, 64, 16, s->data, &c)) TH_LOG("n=%u: %s", n,
								     strerror(errno));
		EXPECT_EQ(4, c.id) TH_LOG("n=%u: the next ids", n);
	}
	st_stream0_is(_metadata, s, -1, 0, -1, n, "after a create");
}

static void sc_create_data(struct __test_metadata *_metadata, struct sctx *s,
			   int r, unsigned int n)
{
	sc_create(_metadata, s, r, n, true);
}

static void sc_create_empty(struct __test_metadata *_metadata, struct sctx *s,
			    int r, unsigned int n)
{
	sc_create(_metadata, s, r, n, false);
}

static void sc_open(struct __test_metadata *_metadata, struct sctx *s, int r,
		    unsigned int n)
{
	if (r)
		st_stream0_is(_metadata, s, -1, 0, 5, n, "after a failed OPEN");
	else
		st_stream0_is(_metadata, s, 5, 0, -1, n, "after OPEN");
}

static void sc_close(struct __test_metadata *_metadata, struct sctx *s, int r,
		     unsigned int n)
{
	if (r)
		st_stream0_is(_metadata, s, 3, 4, -1, n, "after a failed CLOSE");
	else
		st_stream0_is(_metadata, s, -1, 0, 3, n, "after CLOSE");
}

static void sc_seek(struct __test_metadata *_metadata, struct sctx *s, int r,
		    unsigned int n)
{
	st_stream0_is(_metadata, s, 3, r ? 4 : 6, -1, n,
		      r ? "after a failed SEEK" : "after SEEK");
}

/*
 * The buffer's pages: pinned and charged to VmPin (@pinned), or neither
 * (the only pages pinned: VmPin moved as pinned_pages did)
 */
static void st_buf_pinned(struct __test_metadata *_metadata, struct sctx *s,
			  bool pinned, unsigned int n, const char *what)
{
	long long want = pinned ? ST_BUF_PAGES : 0;

	EXPECT_EQ(want, sysfs_rank_attr(RANK, "pinned_pages"))
		TH_LOG("n=%u %s: pinned_pages", n, what);
	EXPECT_EQ(s->vmpin + (long)(want - s->pinned) * (long)(PAGE >> 10),
		  proc_status_kb("VmPin:")) TH_LOG("n=%u %s: VmPin", n, what);
}

static void sc_open_buf(struct __test_metadata *_metadata, struct sctx *s,
			int r, unsigned int n)
{
	if (r) {
		st_buf_pinned(_metadata, s, false, n, "after a failed OPEN");
		st_stream0_is(_metadata, s, -1, 0, 5, n, "after a failed OPEN");
		return;
	}
	st_buf_pinned(_metadata, s, true, n, "after OPEN");
	st_stream0_is(_metadata, s, 5, 0, -1, n, "after OPEN");
	/* the buffer stays registered: the rank's close lets go of it */
}

static void sc_close_buf(struct __test_metadata *_metadata, struct sctx *s,
			 int r, unsigned int n)
{
	st_buf_pinned(_metadata, s, r, n, r ? "after a failed CLOSE" : "after CLOSE");
	sc_close(_metadata, s, r, n);
}

static unsigned int stream_sweep(struct __test_metadata *_metadata,
				 const struct stream_path *p)
{
	unsigned int fired = 0;
	struct sctx *s = calloc(1, sizeof(*s));
	struct nth nth;
	size_t i;
	long vm0;
	int r, err, f;

	ASSERT_NE(NULL, s);
	for (i = 0; i < sizeof(s->data); i++)
		s->data[i] = i * 13 + 5;
	nth_open(_metadata, &nth);
	for (nth.n = 0; nth.n <= MAX_NTH; nth.n++) {
		vm0 = proc_status_kb("VmPin:");
		s->rb = NULL;
		s->fd = open(NODE, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, s->fd) TH_LOG("n=%u: open: %s", nth.n, strerror(errno));
		ASSERT_EQ(0, p->prepare(s)) TH_LOG("n=%u: prepare: %s", nth.n,
						    strerror(errno));
		memset(&s->made, 0, sizeof(s->made));
		s->res = sysfs_rank_attr(RANK, "stream_resident_bytes");
		s->res_m = sysfs_rank_attr(RANK, "mram_resident_bytes");
		s->res_w = sysfs_rank_attr(RANK, "wram_resident_bytes");
		s->pinned = sysfs_rank_attr(RANK, "pinned_pages");
		s->vmpin = proc_status_kb("VmPin:");
		nth_arm(_metadata, &nth);
		r = p->call(s);
		err = errno;
		f = nth_disarm(_metadata, &nth);
		if (r)
			EXPECT_TRUE(nth.n && clean_errno(err))
				TH_LOG("n=%u: errno %d (%s), not one an injected fault may give",
				       nth.n, err, strerror(err));
		if (!nth.n)
			ASSERT_EQ(0, r) TH_LOG("the uninjected run failed: %s",
					       strerror(err));
		if (nth.n && !f)
			EXPECT_EQ(0, r) TH_LOG("n=%u: failed (%s) without the fault",
					       nth.n, strerror(err));
		p->check(_metadata, s, r, nth.n);
		EXPECT_EQ(s->res_m, sysfs_rank_attr(RANK, "mram_resident_bytes"))
			TH_LOG("n=%u", nth.n);
		EXPECT_EQ(s->res_w, sysfs_rank_attr(RANK, "wram_resident_bytes"))
			TH_LOG("n=%u", nth.n);
		EXPECT_EQ(0, close(s->fd));
		/* the streams go with the ownership, and their buffers */
		EXPECT_EQ(0, sysfs_rank_attr(RANK, "is_owned")) TH_LOG("n=%u", nth.n);
		EXPECT_EQ(0, sysfs_rank_attr(RANK, "stream_resident_bytes"))
			TH_LOG("n=%u: streams left after the close", nth.n);
		EXPECT_EQ(0, sysfs_rank_attr(RANK, "pinned_pages"))
			TH_LOG("n=%u: buffers pinned after the close", nth.n);
		EXPECT_EQ(vm0, proc_status_kb("VmPin:"))
			TH_LOG("n=%u: VmPin after the close", nth.n);
		if (s->rb)
			munmap(s->rb, ST_BUF_PAGES * PAGE);
		if (_metadata->exit_code == KSFT_FAIL && nth.n > 3)
			break;
		if (nth.n && !f)
			break;
		fired += f;
	}
	EXPECT_GE(MAX_NTH, nth.n);
	close(nth.fd);
	free(s);
	return fired;
}

#define STREAM_SWEEP(name, prep, callfn, checkfn)			\
TEST_F_TIMEOUT(fail_nth, name, SWEEP_TIMEOUT)				\
{									\
	static const struct stream_path p = {				\
		.prepare = prep, .call = callfn, .check = checkfn,	\
	};								\
	unsigned int n = stream_sweep(_metadata, &p);			\
									\
	ksft_print_msg("%s: %u fault sites swept (n = 1..%u)\n",	\
		       #name, n, n + 1);				\
	EXPECT_LT(0, n) TH_LOG("no fault site at all");			\
}

/* DPUSIM_IOCTL_STREAM_CREATE: 3 pages + 100 bytes of data, tokens of 64 */
STREAM_SWEEP(stream_create_data, sp_two, so_create_data, sc_create_data)
/* DPUSIM_IOCTL_STREAM_CREATE: an empty stream of 1 MiB */
STREAM_SWEEP(stream_create_empty, sp_two, so_create_empty, sc_create_empty)
/* DPUSIM_IOCTL_STREAM_OPEN of a free stream */
STREAM_SWEEP(stream_open, sp_two, so_open, sc_open)
/* DPUSIM_IOCTL_STREAM_CLOSE by the core that has it open */
STREAM_SWEEP(stream_close, sp_held, so_close, sc_close)
/* DPUSIM_IOCTL_STREAM_SEEK by 2 tokens */
STREAM_SWEEP(stream_seek, sp_held, so_seek, sc_seek)
/* DPUSIM_IOCTL_STREAM_OPEN registering a token buffer of 4 pages, never touched */
STREAM_SWEEP(stream_open_buf, sp_two_buf, so_open_buf, sc_open_buf)
/* DPUSIM_IOCTL_STREAM_CLOSE letting go of the buffer registered at the OPEN */
STREAM_SWEEP(stream_close_buf, sp_held_buf, so_close, sc_close_buf)

/* ------------------------------------------------ stream move paths */

/*
 * Tokens moved under injection, on a fresh open of the rank: by a DPU
 * program through its worker file (DPUSIM_IOCTL_WORKER_STREAM_OPEN,
 * _CLOSE, _SEEK, _MOVE down and up, synchronous or not, _WAIT) and by a
 * host thread through the rank file (DPUSIM_IOCTL_XFER with
 * DPUSIM_XFER_STREAM, down and up, synchronous or not; and with
 * DPUSIM_XFER_STREAM_BUF, through the token buffers registered at the
 * OPENs).  Beforehand (injection off) streams 0 (data: 7 tokens, 100
 * bytes in tokens of 16) and 1 (empty, room for 16 KiB) exist; the worker
 * paths hold DPU 2 (launched, claimed) and, but for OPEN, have both
 * streams open as it; the rank paths have them open by core 3 (for
 * DPUSIM_XFER_STREAM_BUF with two pages of a mapping registered each).
 * A move down takes token 0 (24 bytes: its 16 and the header after it)
 * into WRAM byte 0 and an MRAM page boundary of the DPU (a page of each
 * never written: the move allocates them) or into a host buffer (across
 * a page boundary of the registered one); a move up puts a token of
 * MV_UP bytes (two pages of the stream, the second never written).
 * After a failure nothing changed: the cursor (SEEK by 0 of the core),
 * the stream's bytes and stream_resident_bytes, the host buffer, the
 * pinned pages (the registered buffers' only) and VmPin; the budget's
 * charge is exactly the resident bytes.  The DPU's memory may keep pages
 * a failed move down allocated, zeros (uapi: a running DPU's memory only
 * grows).  A success has its effect, exactly.  After an asynchronous
 * move down through a registered buffer, another one is queued and its
 * stream closed under it: the move keeps the buffer until it is done.
 */
#define MV_DPU		2
#define MV_CORE		3
#define MV_UP		(PAGE + 8)	/* n: a token up over two pages */
#define MV_MRAM		(3 * PAGE - 8)	/* the second block of a move down */

struct mctx {
	struct sctx s;			/* the rank file (s.fd), stream 0's data */
	int w;				/* the worker file, or -1 */
	uint8_t buf[2 * PAGE];		/* a host buffer: 0xa5 */
	uint8_t *rb;			/* the registered buffers (4 pages), or NULL */
	long long pinned;		/* the pages they pin (now) */
	uint8_t up[MV_UP + 16];		/* the token up: header, data, end */
	struct dpusim_worker_stream_move mv;	/* the armed move's answer */
	long long res_s, res_m, res_w;	/* resident bytes before the call */
	int moved;			/* the move of a move-and-wait: 0 or -1 */
	struct dpusim_move_ring *ring;	/* the worker's move ring, or NULL */
};

struct mpath {
	int (*prepare)(struct mctx *m);		/* injection off: 0 or -1 */
	int (*call)(struct mctx *m);		/* armed: 0 or -1 with errno */
	void (*check)(struct __test_metadata *_metadata, struct mctx *m, int r,
		      unsigned int n);
};

static int m_wcmd(struct mctx *m, unsigned long cmd, uint32_t id, int32_t delta,
		  struct dpusim_stream_cmd *out)
{
	struct dpusim_stream_cmd c = {
		.size = sizeof(c), .id = id, .core = MV_DPU, .delta = delta,
	};
	int r = ioctl(m->w, cmd, &c);

	if (out)
		*out = c;
	return r;
}

static int m_wmove(struct mctx *m, uint32_t flags, uint32_t id, uint64_t off,
		   uint32_t nb, const struct dpusim_window_block *b)
{
	m->mv = (struct dpusim_worker_stream_move){
		.size = sizeof(m->mv), .flags = flags, .stream = id,
		.nr_blocks = nb, .offset = off, .next = 0xeeeeeeee,
	};
	memcpy(m->mv.blocks, b, nb * sizeof(*b));
	return ioctl(m->w, DPUSIM_IOCTL_WORKER_STREAM_MOVE, &m->mv);
}

static int m_xmove(struct mctx *m, uint32_t flags, uint32_t id, uint64_t off,
		   void *buf, uint64_t len)
{
	struct dpusim_xfer_dpu d = { .dpu = MV_CORE, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)buf, len };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = flags | DPUSIM_XFER_STREAM,
		.offset = off, .length = len, .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b, .stream = id,
	};

	return xfer(m->s.fd, &x);
}

/* A move of stream @id through its registered buffer: @len bytes at @boff */
static int m_bmove(struct mctx *m, uint32_t flags, uint32_t id, uint64_t off,
		   uint64_t boff, uint64_t len)
{
	return m_xmove(m, flags | DPUSIM_XFER_STREAM_BUF, id, off,
		       (void *)(uintptr_t)boff, len);
}

static int m_sync(struct mctx *m)
{
	struct dpusim_sync sy = { .size = sizeof(sy) };

	return ioctl(m->s.fd, DPUSIM_IOCTL_SYNC, &sy);
}

static int m_wait(struct mctx *m)
{
	struct dpusim_worker_stream_wait wt = { .size = sizeof(wt) };

	return ioctl(m->w, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &wt);
}

/* Streams 0 (data) and 1 (empty, 16 KiB); the token up in m->up */
static int mp_streams(struct mctx *m)
{
	uint32_t h[2] = { 0, MV_UP }, t[2] = { MV_UP, 0 };
	size_t i;

	m->w = -1;
	memset(m->buf, 0xa5, sizeof(m->buf));
	memcpy(m->up, h, 8);
	for (i = 0; i < MV_UP; i++)
		m->up[8 + i] = i * 11 + 3;
	memcpy(m->up + 8 + MV_UP, t, 8);
	return s_create(&m->s, 100, 16, m->s.data, NULL) ||
	       s_create(&m->s, 16 << 10, 16, NULL, NULL);
}

/* ... and DPU MV_DPU held by a worker file, the token up in its WRAM */
static int mp_held(struct mctx *m)
{
	struct dpusim_worker_open wo = { .size = sizeof(wo) };
	struct dpusim_launch l = { .size = sizeof(l), .first_dpu = MV_DPU, .nr_dpus = 1 };
	struct dpusim_worker_claim c = {
		.size = sizeof(c), .flags = DPUSIM_CLAIM_NONBLOCK,
	};
	struct dpusim_xfer_dpu d = { .dpu = MV_DPU, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)m->up, sizeof(m->up) };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_WRAM, .offset = 4 * PAGE,
		.length = sizeof(m->up), .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};

	if (mp_streams(m) || xfer(m->s.fd, &x) ||
	    ioctl(m->s.fd, DPUSIM_IOCTL_WORKER_OPEN, &wo))
		return -1;
	m->w = wo.fd;
	if (ioctl(m->s.fd, DPUSIM_IOCTL_LAUNCH, &l) ||
	    ioctl(m->w, DPUSIM_IOCTL_WORKER_CLAIM, &c) || c.dpu != MV_DPU)
		return -1;
	return 0;
}

/* ... with both streams open as DPU MV_DPU */
static int mp_held_open(struct mctx *m)
{
	return mp_held(m) ||
	       m_wcmd(m, DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, 0, NULL) ||
	       m_wcmd(m, DPUSIM_IOCTL_WORKER_STREAM_OPEN, 1, 0, NULL);
}

/* ... and stream 0's cursor on token 4 */
static int mp_held_seek(struct mctx *m)
{
	return mp_held_open(m) ||
	       m_wcmd(m, DPUSIM_IOCTL_WORKER_STREAM_SEEK, 0, 4, NULL);
}

/* ... an asynchronous move queued (its copy maybe done) */
static int mp_held_queued(struct mctx *m)
{
	static const struct dpusim_window_block b = { 2 * PAGE, 24 };

	return mp_held_open(m) ||
	       m_wmove(m, DPUSIM_STREAM_MOVE_DOWN | DPUSIM_STREAM_MOVE_ASYNC, 0, 8,
		       1, &b);
}

/* Streams open by core MV_CORE (a host thread) */
static int mp_host_open(struct mctx *m)
{
	return mp_streams(m) ||
	       s_cmd(&m->s, DPUSIM_IOCTL_STREAM_OPEN, 0, MV_CORE, 0, NULL) ||
	       s_cmd(&m->s, DPUSIM_IOCTL_STREAM_OPEN, 1, MV_CORE, 0, NULL);
}

/*
 * ... with token buffers registered: stream 0's the first two pages of
 * m->rb (0xa5), stream 1's the next two (the token up at their start)
 */
static int mp_host_open_buf(struct mctx *m)
{
	m->rb = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->rb == MAP_FAILED) {
		m->rb = NULL;
		return -1;
	}
	if (mp_streams(m))
		return -1;
	memset(m->rb, 0xa5, 2 * PAGE);
	memcpy(m->rb + 2 * PAGE, m->up, sizeof(m->up));
	m->pinned = 4;
	return s_open_buf(&m->s, 0, MV_CORE, m->rb, 2 * PAGE) ||
	       s_open_buf(&m->s, 1, MV_CORE, m->rb + 2 * PAGE, 2 * PAGE);
}

static int mo_wopen(struct mctx *m)
{
	return m_wcmd(m, DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, 0, NULL);
}

static int mo_wclose(struct mctx *m)
{
	return m_wcmd(m, DPUSIM_IOCTL_WORKER_STREAM_CLOSE, 0, 0, NULL);
}

static int mo_wseek(struct mctx *m)
{
	return m_wcmd(m, DPUSIM_IOCTL_WORKER_STREAM_SEEK, 0, 2, NULL);
}

/* Token 0 down: 8 bytes at WRAM 0, 16 across an MRAM page boundary */
static const struct dpusim_window_block mv_down[2] = {
	{ 0, 8 }, { DPUSIM_WINDOW_MRAM + MV_MRAM, 16 },
};

static int mo_wdown(struct mctx *m)
{
	return m_wmove(m, DPUSIM_STREAM_MOVE_DOWN, 0, 8, 2, mv_down);
}

/*
 * A move and its wait: @moved says whether the move happened when the
 * wait failed (the check waits again, uninjected).
 */
static int mo_wdown_async(struct mctx *m)
{
	m->moved = m_wmove(m, DPUSIM_STREAM_MOVE_DOWN | DPUSIM_STREAM_MOVE_ASYNC,
			   0, 8, 2, mv_down);
	return m->moved ?: m_wait(m);
}

/* The token up, from WRAM (where mp_held put it) */
static int mo_wup(struct mctx *m)
{
	const struct dpusim_window_block b = { 4 * PAGE, sizeof(m->up) };

	return m_wmove(m, 0, 1, 0, 1, &b);
}

static int mo_wup_async(struct mctx *m)
{
	const struct dpusim_window_block b = { 4 * PAGE, sizeof(m->up) };

	m->moved = m_wmove(m, DPUSIM_STREAM_MOVE_ASYNC, 1, 0, 1, &b);
	return m->moved ?: m_wait(m);
}

static int mo_wwait(struct mctx *m)
{
	return m_wait(m);
}

static int mo_xdown(struct mctx *m)
{
	return m_xmove(m, DPUSIM_XFER_FROM_DPU, 0, 8, m->buf + PAGE - 8, 24);
}

static int mo_xdown_async(struct mctx *m)
{
	m->moved = m_xmove(m, DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_ASYNC, 0, 8,
			   m->buf + PAGE - 8, 24);
	return m->moved ?: m_sync(m);
}

static int mo_xup(struct mctx *m)
{
	return m_xmove(m, 0, 1, 0, m->up, sizeof(m->up));
}

static int mo_xup_async(struct mctx *m)
{
	m->moved = m_xmove(m, DPUSIM_XFER_ASYNC, 1, 0, m->up, sizeof(m->up));
	return m->moved ?: m_sync(m);
}

/* The same through the registered buffers: token 0 at offset PAGE - 8 */
static int mo_bdown(struct mctx *m)
{
	return m_bmove(m, DPUSIM_XFER_FROM_DPU, 0, 8, PAGE - 8, 24);
}

static int mo_bdown_async(struct mctx *m)
{
	m->moved = m_bmove(m, DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_ASYNC, 0, 8,
			   PAGE - 8, 24);
	return m->moved ?: m_sync(m);
}

static int mo_bup(struct mctx *m)
{
	return m_bmove(m, 0, 1, 0, 0, sizeof(m->up));
}

static int mo_bup_async(struct mctx *m)
{
	m->moved = m_bmove(m, DPUSIM_XFER_ASYNC, 1, 0, 0, sizeof(m->up));
	return m->moved ?: m_sync(m);
}

/*
 * Stream @id's cursor (and an empty one's tokens) as its core @core sees
 * it: through the worker file (@w) or the rank file.
 */
static void mv_cursor_is(struct __test_metadata *_metadata, struct mctx *m,
			 bool w, uint32_t id, uint32_t cursor, uint32_t tokens,
			 unsigned int n, const char *what)
{
	struct dpusim_stream_cmd o = { .size = sizeof(o), .id = id,
				       .core = w ? MV_DPU : MV_CORE };
	int r = ioctl(w ? m->w : m->s.fd,
		      w ? DPUSIM_IOCTL_WORKER_STREAM_SEEK : DPUSIM_IOCTL_STREAM_SEEK, &o);

	EXPECT_EQ(0, r) TH_LOG("n=%u %s: SEEK of stream %u: %s", n, what, id,
			       strerror(errno));
	if (r)
		return;
	EXPECT_EQ(cursor, o.cursor) TH_LOG("n=%u %s: stream %u's cursor", n, what, id);
	EXPECT_EQ(tokens, o.nr_tokens) TH_LOG("n=%u %s: stream %u's tokens", n, what, id);
}

/* The first @len bytes of stream @id are @want (zeros if NULL) */
static void mv_stream_is(struct __test_metadata *_metadata, struct mctx *m,
			 uint32_t id, const uint8_t *want, size_t len,
			 unsigned int n, const char *what)
{
	const uint8_t *p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, m->s.fd,
				DPUSIM_MMAP_STREAM(id));
	size_t i;

	ASSERT_NE(MAP_FAILED, p) TH_LOG("n=%u: mmap of stream %u: %s", n, id,
					strerror(errno));
	for (i = 0; i < len; i++)
		if (p[i] != (want ? want[i] : 0)) {
			EXPECT_EQ(want ? want[i] : 0, p[i])
				TH_LOG("n=%u %s: stream %u byte %zu", n, what, id, i);
			break;
		}
	munmap((void *)p, 2 * PAGE);
}

/* Token 0 of stream 0 and the header after it, as a move down gives them */
static void mv_token0(struct mctx *m, uint8_t *out)
{
	uint32_t h[2] = { 16, 16 };

	memcpy(out, m->s.data, 16);
	memcpy(out + 16, h, 8);
}

/* The held DPU's bytes where mv_down puts token 0: zeros, or token 0 */
static void mv_dpu_is(struct __test_metadata *_metadata, struct mctx *m,
		      bool moved, unsigned int n)
{
	uint8_t want[24], got[24];
	uint8_t *wr, *mr;

	mv_token0(m, want);
	if (!moved)
		memset(want, 0, sizeof(want));
	wr = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, m->w, DPUSIM_MMAP_WRAM(MV_DPU));
	mr = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, m->w,
		  DPUSIM_MMAP_MRAM(MV_DPU) + 2 * PAGE);
	ASSERT_NE(MAP_FAILED, wr);
	ASSERT_NE(MAP_FAILED, mr);
	memcpy(got, wr, 8);
	memcpy(got + 8, mr + PAGE - 8, 16);
	EXPECT_EQ(0, memcmp(want, got, 24))
		TH_LOG("n=%u: the DPU's bytes of token 0 (moved: %d)", n, moved);
	munmap(wr, PAGE);
	munmap(mr, 2 * PAGE);
}

static void mc_wopen(struct __test_metadata *_metadata, struct mctx *m, int r,
		     unsigned int n)
{
	if (r) {
		/* open by nobody: the host opens it as another core */
		EXPECT_EQ(0, s_cmd(&m->s, DPUSIM_IOCTL_STREAM_OPEN, 0, 7, 0, NULL))
			TH_LOG("n=%u: after a failed WORKER_STREAM_OPEN: %s", n,
			       strerror(errno));
		return;
	}
	mv_cursor_is(_metadata, m, true, 0, 0, 7, n, "after OPEN");
	EXPECT_EQ(-1, s_cmd(&m->s, DPUSIM_IOCTL_STREAM_OPEN, 0, 7, 0, NULL));
	EXPECT_EQ(EBUSY, errno) TH_LOG("n=%u", n);
}

static void mc_wclose(struct __test_metadata *_metadata, struct mctx *m, int r,
		      unsigned int n)
{
	if (r) {
		mv_cursor_is(_metadata, m, true, 0, 4, 7, n, "after a failed CLOSE");
		return;
	}
	EXPECT_EQ(-1, m_wcmd(m, DPUSIM_IOCTL_WORKER_STREAM_SEEK, 0, 0, NULL));
	EXPECT_EQ(EINVAL, errno) TH_LOG("n=%u: stream 0 still open by DPU %u", n,
					MV_DPU);
	EXPECT_EQ(0, s_cmd(&m->s, DPUSIM_IOCTL_STREAM_OPEN, 0, 7, 0, NULL))
		TH_LOG("n=%u: %s", n, strerror(errno));
}

static void mc_wseek(struct __test_metadata *_metadata, struct mctx *m, int r,
		     unsigned int n)
{
	mv_cursor_is(_metadata, m, true, 0, r ? 4 : 6, 7, n,
		     r ? "after a failed SEEK" : "after SEEK");
}

/* A move down (and WAIT): the cursor, the DPU's bytes, its pages */
static void mc_wdown(struct __test_metadata *_metadata, struct mctx *m, int r,
		     unsigned int n)
{
	long long mram, wram;

	/* the move happened, its wait failed: wait now */
	if (r && !m->moved) {
		ASSERT_EQ(0, m_wait(m)) TH_LOG("n=%u: %s", n, strerror(errno));
		r = 0;
	}
	mram = sysfs_rank_attr(RANK, "mram_resident_bytes");
	wram = sysfs_rank_attr(RANK, "wram_resident_bytes");

	mv_cursor_is(_metadata, m, true, 0, r ? 0 : 1, 7, n, "after the move down");
	if (!r)
		EXPECT_EQ(16, m->mv.next) TH_LOG("n=%u: the answer's @next", n);
	/* the move's pages: allocated, or (a failure) maybe some of them */
	if (r) {
		EXPECT_LE(m->res_m, mram) TH_LOG("n=%u", n);
		EXPECT_GE(m->res_m + 2 * (long long)PAGE, mram) TH_LOG("n=%u", n);
		EXPECT_LE(m->res_w, wram) TH_LOG("n=%u", n);
		EXPECT_GE(m->res_w + (long long)PAGE, wram) TH_LOG("n=%u", n);
	} else {
		EXPECT_EQ(m->res_m + 2 * (long long)PAGE, mram) TH_LOG("n=%u", n);
		EXPECT_EQ(m->res_w + (long long)PAGE, wram) TH_LOG("n=%u", n);
	}
	mv_dpu_is(_metadata, m, !r, n);
	st_budget_exact(_metadata, &m->s, n);
	/* the stream moves on, as the DPU */
	EXPECT_EQ(0, m_wmove(m, DPUSIM_STREAM_MOVE_DOWN, 0, r ? 8 : 32, 2, mv_down))
		TH_LOG("n=%u: the next move: %s", n, strerror(errno));
}

/*
 * The move ring: its mmap (the page, the copy thread), then token 0 down
 * through it, answered in the page (the thread's own work is not
 * injected: it is not the calling task).
 */
static int mo_ring_down(struct mctx *m)
{
	struct dpusim_worker_stream_wait kick = {
		.size = sizeof(kick), .flags = DPUSIM_STREAM_WAIT_KICK,
	};
	struct dpusim_move_ring *r;
	int i;

	r = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, m->w,
		 DPUSIM_MMAP_MOVE_RING);
	if (r == MAP_FAILED)
		return -1;
	m->ring = r;
	r->move = (struct dpusim_worker_stream_move){
		.size = sizeof(r->move), .flags = DPUSIM_STREAM_MOVE_DOWN,
		.nr_blocks = 2, .offset = 8,
		.blocks = { mv_down[0], mv_down[1] },
	};
	r->dpu = MV_DPU;
	__atomic_store_n(&r->submitted, r->done + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < 20000 &&
	     __atomic_load_n(&r->done, __ATOMIC_ACQUIRE) != r->submitted; i++) {
		if (r->flags & DPUSIM_MOVE_RING_NEED_WAKEUP)
			ioctl(m->w, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &kick);
		usleep(100);
	}
	if (r->done != r->submitted) {
		errno = ETIMEDOUT;	/* not a clean errno: reported */
		return -1;
	}
	m->mv.next = r->next;
	if (r->result) {
		errno = -r->result;
		return -1;
	}
	return 0;
}

static void mc_wdown(struct __test_metadata *_metadata, struct mctx *m, int r,
		     unsigned int n);

static void mc_ring_down(struct __test_metadata *_metadata, struct mctx *m,
			 int r, unsigned int n)
{
	/* a failed mmap left no ring: one maps now */
	if (r) {
		void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
			       m->w, DPUSIM_MMAP_MOVE_RING);

		EXPECT_NE(MAP_FAILED, p) TH_LOG("n=%u: the ring after a failed mmap: %s",
						 n, strerror(errno));
		if (p != MAP_FAILED)
			munmap(p, PAGE);
	}
	mc_wdown(_metadata, m, r, n);
	/* the ring holds the worker file: it goes before the close */
	if (m->ring)
		munmap(m->ring, PAGE);
	m->ring = NULL;
}

/* A move up (and WAIT): the stream's bytes, tokens, pages */
static void mc_wup(struct __test_metadata *_metadata, struct mctx *m, int r,
		   unsigned int n)
{
	long long res;

	if (r && !m->moved) {
		ASSERT_EQ(0, m_wait(m)) TH_LOG("n=%u: %s", n, strerror(errno));
		r = 0;
	}
	res = sysfs_rank_attr(RANK, "stream_resident_bytes");

	mv_cursor_is(_metadata, m, true, 1, r ? 0 : 1, r ? 0 : 1, n,
		     "after the move up");
	if (!r)
		EXPECT_EQ(0, m->mv.next) TH_LOG("n=%u: the answer's @next", n);
	/* the second page of the stream: allocated by the move, or not */
	EXPECT_EQ(m->res_s + (r ? 0 : (long long)PAGE), res)
		TH_LOG("n=%u: stream_resident_bytes", n);
	mv_stream_is(_metadata, m, 1, r ? NULL : m->up, r ? 8 : sizeof(m->up), n,
		     "after the move up");
	st_budget_exact(_metadata, &m->s, n);
}

static void mc_wwait(struct __test_metadata *_metadata, struct mctx *m, int r,
		     unsigned int n)
{
	uint8_t want[24], got[24];
	uint8_t *wr = mmap(NULL, 3 * PAGE, PROT_READ, MAP_SHARED, m->w,
			   DPUSIM_MMAP_WRAM(MV_DPU));

	/* whatever WAIT did, the move queued before is done by now */
	ASSERT_EQ(0, m_wait(m)) TH_LOG("n=%u: %s", n, strerror(errno));
	ASSERT_NE(MAP_FAILED, wr);
	mv_token0(m, want);
	memcpy(got, wr + 2 * PAGE, 24);
	EXPECT_EQ(0, memcmp(want, got, 24)) TH_LOG("n=%u", n);
	munmap(wr, 3 * PAGE);
	mv_cursor_is(_metadata, m, true, 0, 1, 7, n, "after WAIT");
}

/*
 * A host thread's move down: the cursor, the host buffer (the registered
 * one, if any), the pages pinned (the registered buffers' only)
 */
static void mc_xdown(struct __test_metadata *_metadata, struct mctx *m, int r,
		     unsigned int n)
{
	uint8_t want[2 * PAGE];

	if (r && !m->moved) {
		ASSERT_EQ(0, m_sync(m)) TH_LOG("n=%u: %s", n, strerror(errno));
		r = 0;
	}
	memset(want, 0xa5, sizeof(want));
	if (!r)
		mv_token0(m, want + PAGE - 8);
	mv_cursor_is(_metadata, m, false, 0, r ? 0 : 1, 7, n, "after the move down");
	EXPECT_EQ(0, memcmp(want, m->rb ?: m->buf, sizeof(want)))
		TH_LOG("n=%u: the host buffer (moved: %d)", n, !r);
	EXPECT_EQ(m->pinned, sysfs_rank_attr(RANK, "pinned_pages")) TH_LOG("n=%u", n);
	st_budget_exact(_metadata, &m->s, n);
}

/*
 * ... and (uninjected) a move through stream 0's buffer queued, then the
 * stream closed under it: the move, done, lets go of the buffer.
 */
static void mc_bdown_async(struct __test_metadata *_metadata, struct mctx *m,
			   int r, unsigned int n)
{
	uint32_t cur = r && m->moved ? 0 : 1, h[2] = { 16, 16 };
	uint8_t want[24];

	mc_xdown(_metadata, m, r, n);
	memcpy(want, m->s.data + 16 * cur, 16);
	memcpy(want + 16, h, 8);
	ASSERT_EQ(0, m_bmove(m, DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_ASYNC, 0,
			     8 + 24 * cur, 2 * PAGE - 24, 24))
		TH_LOG("n=%u: %s", n, strerror(errno));
	EXPECT_EQ(0, s_cmd(&m->s, DPUSIM_IOCTL_STREAM_CLOSE, 0, MV_CORE, 0, NULL))
		TH_LOG("n=%u: CLOSE under the move: %s", n, strerror(errno));
	EXPECT_EQ(0, m_sync(m)) TH_LOG("n=%u: %s", n, strerror(errno));
	EXPECT_EQ(0, memcmp(want, m->rb + 2 * PAGE - 24, 24))
		TH_LOG("n=%u: token %u through the buffer of a stream closed", n, cur);
	m->pinned -= 2;
	EXPECT_EQ(m->pinned, sysfs_rank_attr(RANK, "pinned_pages")) TH_LOG("n=%u", n);
}

static void mc_xup(struct __test_metadata *_metadata, struct mctx *m, int r,
		   unsigned int n)
{
	long long res;

	if (r && !m->moved) {
		ASSERT_EQ(0, m_sync(m)) TH_LOG("n=%u: %s", n, strerror(errno));
		r = 0;
	}
	res = sysfs_rank_attr(RANK, "stream_resident_bytes");

	mv_cursor_is(_metadata, m, false, 1, r ? 0 : 1, r ? 0 : 1, n,
		     "after the move up");
	EXPECT_EQ(m->res_s + (r ? 0 : (long long)PAGE), res)
		TH_LOG("n=%u: stream_resident_bytes", n);
	mv_stream_is(_metadata, m, 1, r ? NULL : m->up, r ? 8 : sizeof(m->up), n,
		     "after the move up");
	EXPECT_EQ(m->pinned, sysfs_rank_attr(RANK, "pinned_pages")) TH_LOG("n=%u", n);
	st_budget_exact(_metadata, &m->s, n);
}

static unsigned int move_sweep(struct __test_metadata *_metadata,
			       const struct mpath *p)
{
	struct dpusim_worker_finish fin = { .size = sizeof(fin), .dpu = MV_DPU };
	unsigned int fired = 0;
	struct mctx *m = calloc(1, sizeof(*m));
	struct counters before, after;
	struct nth nth;
	long long pin0;
	size_t i;
	long vm0;
	int r, err, f;

	ASSERT_NE(NULL, m);
	for (i = 0; i < sizeof(m->s.data); i++)
		m->s.data[i] = i * 13 + 5;
	nth_open(_metadata, &nth);
	for (nth.n = 0; nth.n <= MAX_NTH; nth.n++) {
		vm0 = proc_status_kb("VmPin:");
		m->rb = NULL;
		m->pinned = 0;
		m->s.fd = open(NODE, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, m->s.fd) TH_LOG("n=%u: open: %s", nth.n, strerror(errno));
		ASSERT_EQ(0, p->prepare(m)) TH_LOG("n=%u: prepare: %s", nth.n,
						    strerror(errno));
		pin0 = m->pinned;
		m->res_s = sysfs_rank_attr(RANK, "stream_resident_bytes");
		m->res_m = sysfs_rank_attr(RANK, "mram_resident_bytes");
		m->res_w = sysfs_rank_attr(RANK, "wram_resident_bytes");
		read_counters(&before);
		m->moved = -1;	/* a plain call: its failure moved nothing */
		nth_arm(_metadata, &nth);
		r = p->call(m);
		err = errno;
		f = nth_disarm(_metadata, &nth);
		if (r)
			EXPECT_TRUE(nth.n && clean_errno(err))
				TH_LOG("n=%u: errno %d (%s), not one an injected fault may give",
				       nth.n, err, strerror(err));
		if (!nth.n)
			ASSERT_EQ(0, r) TH_LOG("the uninjected run failed: %s",
					       strerror(err));
		if (nth.n && !f)
			EXPECT_EQ(0, r) TH_LOG("n=%u: failed (%s) without the fault",
					       nth.n, strerror(err));
		p->check(_metadata, m, r, nth.n);
		read_counters(&after);
		/* the registered buffers' pages only, as many as the check left */
		EXPECT_EQ(m->pinned, after.pinned) TH_LOG("n=%u: pinned_pages", nth.n);
		EXPECT_EQ(before.vmpin - (pin0 - m->pinned) * (long)(PAGE >> 10),
			  after.vmpin) TH_LOG("n=%u: VmPin", nth.n);
		/* the worker file first: the rank's release kills claimers */
		if (m->w >= 0) {
			ioctl(m->w, DPUSIM_IOCTL_WORKER_FINISH, &fin);
			EXPECT_EQ(0, close(m->w));
		}
		EXPECT_EQ(0, close(m->s.fd));
		EXPECT_EQ(0, sysfs_rank_attr(RANK, "is_owned")) TH_LOG("n=%u", nth.n);
		EXPECT_EQ(0, sysfs_rank_attr(RANK, "stream_resident_bytes"))
			TH_LOG("n=%u: streams left after the close", nth.n);
		EXPECT_EQ(0, sysfs_rank_attr(RANK, "mram_resident_bytes"));
		/* ... and the buffers registered with them */
		EXPECT_EQ(0, sysfs_rank_attr(RANK, "pinned_pages")) TH_LOG("n=%u", nth.n);
		EXPECT_EQ(vm0, proc_status_kb("VmPin:")) TH_LOG("n=%u: VmPin", nth.n);
		if (m->rb)
			munmap(m->rb, 4 * PAGE);
		if (_metadata->exit_code == KSFT_FAIL && nth.n > 3)
			break;
		if (nth.n && !f)
			break;
		fired += f;
	}
	EXPECT_GE(MAX_NTH, nth.n);
	close(nth.fd);
	free(m);
	return fired;
}

#define MOVE_SWEEP(name, prep, callfn, checkfn)				\
TEST_F_TIMEOUT(fail_nth, name, SWEEP_TIMEOUT)				\
{									\
	static const struct mpath p = {					\
		.prepare = prep, .call = callfn, .check = checkfn,	\
	};								\
	unsigned int n = move_sweep(_metadata, &p);			\
									\
	ksft_print_msg("%s: %u fault sites swept (n = 1..%u)\n",	\
		       #name, n, n + 1);				\
	EXPECT_LT(0, n) TH_LOG("no fault site at all");			\
}

/* DPUSIM_IOCTL_WORKER_STREAM_OPEN as the DPU held */
MOVE_SWEEP(worker_stream_open, mp_held, mo_wopen, mc_wopen)
/* DPUSIM_IOCTL_WORKER_STREAM_CLOSE */
MOVE_SWEEP(worker_stream_close, mp_held_seek, mo_wclose, mc_wclose)
/* DPUSIM_IOCTL_WORKER_STREAM_SEEK by 2 tokens */
MOVE_SWEEP(worker_stream_seek, mp_held_seek, mo_wseek, mc_wseek)
/* DPUSIM_IOCTL_WORKER_STREAM_MOVE down into WRAM and MRAM holes */
MOVE_SWEEP(worker_stream_move_down, mp_held_open, mo_wdown, mc_wdown)
/* ... asynchronous (the copy thread started), then WAIT */
MOVE_SWEEP(worker_stream_move_down_async, mp_held_open, mo_wdown_async, mc_wdown)
/* DPUSIM_IOCTL_WORKER_STREAM_MOVE up over a page of the stream not yet written */
MOVE_SWEEP(worker_stream_move_up, mp_held_open, mo_wup, mc_wup)
/* ... asynchronous, then WAIT */
MOVE_SWEEP(worker_stream_move_up_async, mp_held_open, mo_wup_async, mc_wup)
/* mmap of the move ring (DPUSIM_MMAP_MOVE_RING) and a move through it */
MOVE_SWEEP(move_ring_mmap_move, mp_held_open, mo_ring_down, mc_ring_down)
/* DPUSIM_IOCTL_WORKER_STREAM_WAIT for a move queued */
MOVE_SWEEP(worker_stream_wait, mp_held_queued, mo_wwait, mc_wwait)
/* DPUSIM_IOCTL_XFER with DPUSIM_XFER_STREAM, down into a host buffer */
MOVE_SWEEP(xfer_stream_down, mp_host_open, mo_xdown, mc_xdown)
/* ... asynchronous, then DPUSIM_IOCTL_SYNC */
MOVE_SWEEP(xfer_stream_down_async, mp_host_open, mo_xdown_async, mc_xdown)
/* ... up, from a host buffer, over a page of the stream not yet written */
MOVE_SWEEP(xfer_stream_up, mp_host_open, mo_xup, mc_xup)
/* ... asynchronous, then DPUSIM_IOCTL_SYNC */
MOVE_SWEEP(xfer_stream_up_async, mp_host_open, mo_xup_async, mc_xup)
/* DPUSIM_XFER_STREAM_BUF: down into the registered buffer, across a page */
MOVE_SWEEP(xfer_stream_buf_down, mp_host_open_buf, mo_bdown, mc_xdown)
/* ... asynchronous, then DPUSIM_IOCTL_SYNC (then a move queued, its stream closed) */
MOVE_SWEEP(xfer_stream_buf_down_async, mp_host_open_buf, mo_bdown_async,
	   mc_bdown_async)
/* ... up, from the registered buffer */
MOVE_SWEEP(xfer_stream_buf_up, mp_host_open_buf, mo_bup, mc_xup)
/* ... asynchronous, then DPUSIM_IOCTL_SYNC */
MOVE_SWEEP(xfer_stream_buf_up_async, mp_host_open_buf, mo_bup_async, mc_xup)

/* ----------------------------------------------- /dev/dpusim/tm paths */

/*
 * One context per run: a mapped CQ, regions over a guarded buffer, an
 * SRQ and a QP connected to it, as far as the path needs; then the one
 * call under injection.  A failure must be a clean errno that changes
 * nothing: the regions, contexts and pinned pages of
 * /sys/class/dpusim/tm, VmPin and the ring's producer (no completion) are
 * as before, the context still answers, and the same call made again
 * without injection succeeds.  Closing the context puts every count back.
 */
#define TM_BUFLEN	(8 * PAGE)

struct tmc {
	int fd, rank_fd;
	uint8_t *buf;			/* TM_BUFLEN between guard pages */
	struct tm_cq cq;
	uint32_t lkey, srq, srq_num, qp, qp_num, made;
	uint8_t msg[64];
};

enum { TMC_CQ = 1, TMC_MR = 2, TMC_SRQ = 4, TMC_QP = 8, TMC_CONN = 16 };

struct tm_path {
	unsigned int needs;		/* TMC_* made before the call */
	int (*prepare)(struct tmc *t);	/* more set-up, 0 or errno */
	int (*op)(struct tmc *t);	/* the call: 0 or errno */
	void (*undo)(struct tmc *t);	/* after a success: back to the start */
};

struct tm_state { long long mrs, contexts, pinned, charged, bufs; long vmpin; };

static void tm_state(struct tm_state *s)
{
	s->mrs = sysfs_tm_attr("mrs");
	s->contexts = sysfs_tm_attr("contexts");
	s->pinned = sysfs_tm_attr("pinned_pages");
	s->charged = sysfs_tm_attr("charged_pages");
	s->bufs = sysfs_tm_attr("posted_bufs");
	s->vmpin = proc_status_kb("VmPin:");
}

static int tmc_setup(struct tmc *t, unsigned int needs)
{
	int err = 0;

	t->fd = tm_open();
	if (t->fd < 0)
		return errno;
	if (needs & TMC_CQ)
		err = tm_create_cq(t->fd, 64, &t->cq);
	if (!err && (needs & TMC_MR))
		err = tm_reg_mr(t->fd, t->buf, TM_BUFLEN, DPUSIM_TM_ACCESS_LOCAL_WRITE |
				DPUSIM_TM_ACCESS_REMOTE_READ, &t->lkey);
	if (!err && (needs & TMC_SRQ))
		err = tm_create_srq(t->fd, t->cq.handle, 4, 4, 4, 2, &t->srq, &t->srq_num);
	if (!err && (needs & TMC_QP))
		err = tm_create_qp(t->fd, t->cq.handle, 2, &t->qp, &t->qp_num);
	if (!err && (needs & TMC_CONN))
		err = tm_connect(t->fd, t->qp, t->srq_num);
	return err;
}

static int tm_op_reg_mr(struct tmc *t)
{
	return tm_reg_mr(t->fd, t->buf + PAGE / 2, 4 * PAGE,
			 DPUSIM_TM_ACCESS_LOCAL_WRITE, &t->made);
}

static void tm_undo_mr(struct tmc *t)
{
	tm_destroy(t->fd, DPUSIM_IOCTL_TM_DEREG_MR, t->made);
}

static int tm_prep_rank(struct tmc *t)
{
	t->rank_fd = open(NODE, O_RDWR | O_CLOEXEC);
	return t->rank_fd < 0 ? errno : 0;
}

static int tm_op_reg_mram(struct tmc *t)
{
	return tm_reg_mram(t->fd, t->rank_fd, 1, PAGE / 2, 3 * PAGE,
			   DPUSIM_TM_ACCESS_LOCAL_WRITE | DPUSIM_TM_ACCESS_REMOTE_READ,
			   &t->made);
}

static int tm_op_create_cq(struct tmc *t)
{
	struct tm_cq cq;
	int err = tm_create_cq_nomap(t->fd, 100, &cq);

	if (err)
		return err;
	err = tm_cq_map(t->fd, &cq);
	if (err) {	/* the mmap failed: the CQ goes, the error stays */
		tm_destroy(t->fd, DPUSIM_IOCTL_TM_DESTROY_CQ, cq.handle);
		return err;
	}
	if (cq.ring->nr_entries != 128 || cq.ring->producer)
		return EPROTO;
	tm_cq_unmap(&cq);
	t->made = cq.handle;
	return 0;
}

static void tm_undo_cq(struct tmc *t)
{
	tm_destroy(t->fd, DPUSIM_IOCTL_TM_DESTROY_CQ, t->made);
}

static int tm_op_create_srq(struct tmc *t)
{
	return tm_create_srq(t->fd, t->cq.handle, 8, 8, 8, 4, &t->made, NULL);
}

static void tm_undo_srq(struct tmc *t)
{
	tm_destroy(t->fd, DPUSIM_IOCTL_TM_DESTROY_SRQ, t->made);
}

static int tm_op_create_qp(struct tmc *t)
{
	return tm_create_qp(t->fd, t->cq.handle, 4, &t->made, NULL);
}

static void tm_undo_qp(struct tmc *t)
{
	tm_destroy(t->fd, DPUSIM_IOCTL_TM_DESTROY_QP, t->made);
}

static int tm_op_connect(struct tmc *t)
{
	return tm_connect(t->fd, t->qp, t->srq_num);
}

static void tm_undo_connect(struct tmc *t)
{
	/* a QP connects once: a new one for the run again */
	tm_destroy(t->fd, DPUSIM_IOCTL_TM_DESTROY_QP, t->qp);
	tm_create_qp(t->fd, t->cq.handle, 2, &t->qp, &t->qp_num);
	tm_cq_drain(&t->cq);
}

static int tm_op_tag_add(struct tmc *t)
{
	return tm_tag_add(t->fd, t->srq, 7, ~0ULL, t->lkey, t->buf, 256, 1, &t->made);
}

static void tm_undo_tag(struct tmc *t)
{
	struct dpusim_tm_ops_wr del = {
		.opcode = DPUSIM_TM_WR_TAG_DEL, .handle = t->made,
	};

	tm_post(t->fd, DPUSIM_IOCTL_TM_POST_SRQ_OPS, 0, t->srq, 0, &del, 1, NULL);
	tm_cq_drain(&t->cq);
}

static int tm_op_recv(struct tmc *t)
{
	return tm_post_recv(t->fd, t->srq, t->lkey, t->buf + PAGE, 512, 2);
}

static void tm_undo_recv(struct tmc *t)
{
	uint32_t x = 0;

	/* an unexpected message takes the buffer */
	tm_send_eager(t->fd, t->qp, 0x99, 0, &x, sizeof(x), 0);
	tm_cq_drain(&t->cq);
}

static int tm_prep_tag(struct tmc *t)
{
	return tm_tag_add(t->fd, t->srq, 7, ~0ULL, t->lkey, t->buf, 256, 1, NULL);
}

static int tm_op_eager(struct tmc *t)
{
	memset(t->msg, 0xe5, sizeof(t->msg));
	return tm_send_eager(t->fd, t->qp, 7, 42, t->msg, 48, DPUSIM_TM_SEND_SIGNALED);
}

static void tm_undo_consumed(struct tmc *t)
{
	tm_cq_drain(&t->cq);
	tm_prep_tag(t);		/* the entry the message took */
}

static int tm_prep_untagged(struct tmc *t)
{
	return tm_post_recv(t->fd, t->srq, t->lkey, t->buf + PAGE, 512, 2);
}

static int tm_op_unexpected(struct tmc *t)
{
	memset(t->msg, 0x3c, sizeof(t->msg));
	return tm_send_eager(t->fd, t->qp, 0x1234, 1, t->msg, 40, 0);
}

static void tm_undo_unexpected(struct tmc *t)
{
	tm_cq_drain(&t->cq);
	tm_prep_untagged(t);
}

static int tm_op_rndv(struct tmc *t)
{
	uint8_t m[32];

	tm_tmh(m, DPUSIM_TM_TMH_RNDV, 5, 7);
	tm_rvh(m + 16, (uintptr_t)t->buf + 4 * PAGE, t->lkey, 200);
	return tm_send_inline(t->fd, 0, t->qp, 0, m, sizeof(m), 0, 3);
}

static int tm_op_rdma_read(struct tmc *t)
{
	struct dpusim_tm_sge sge = { (uintptr_t)t->buf + 2 * PAGE, 300, t->lkey };
	struct dpusim_tm_send_wr wr = {
		.wr_id = 9, .opcode = DPUSIM_TM_WR_RDMA_READ,
		.flags = DPUSIM_TM_SEND_SIGNALED, .sg_list = (uintptr_t)&sge,
		.num_sge = 1, .remote_addr = (uintptr_t)t->buf + 5 * PAGE,
		.rkey = t->lkey,
	};

	return tm_post(t->fd, DPUSIM_IOCTL_TM_POST_SEND, DPUSIM_TM_POST_FROM_SRQ,
		       t->srq, t->qp_num, &wr, 1, NULL);
}

static void tm_undo_drain(struct tmc *t)
{
	tm_cq_drain(&t->cq);
}

/* One run at n = nth->n (0: none); returns 1 if the armed fault fired. */
static int tm_run_once(struct __test_metadata *_metadata, const struct tm_path *p,
		       struct tmc *t, struct nth *nth, const struct tm_state *base)
{
	struct dpusim_tm_query q = { .size = sizeof(q) };
	struct tm_state before, after;
	unsigned int n = nth->n;
	uint32_t prod = 0;
	int err, fired;

	t->rank_fd = -1;
	memset(&t->cq, 0, sizeof(t->cq));
	ASSERT_EQ(0, tmc_setup(t, p->needs)) TH_LOG("n=%u: set-up", n);
	if (p->prepare)
		ASSERT_EQ(0, p->prepare(t)) TH_LOG("n=%u: prepare", n);
	if (t->cq.ring) {
		tm_cq_drain(&t->cq);
		prod = t->cq.ring->producer;
	}
	tm_state(&before);

	nth_arm(_metadata, nth);
	err = p->op(t);
	fired = nth_disarm(_metadata, nth);

	if (!n)
		ASSERT_EQ(0, err) TH_LOG("the uninjected run failed: %s", strerror(err));
	if (err) {
		EXPECT_TRUE(clean_errno(err))
			TH_LOG("n=%u: errno %d (%s), not one an injected fault may give",
			       n, err, strerror(err));
		EXPECT_TRUE(fired) TH_LOG("n=%u: failed (%s) without consuming the fault",
					  n, strerror(err));
		tm_state(&after);
		EXPECT_EQ(before.mrs, after.mrs) TH_LOG("n=%u: mrs", n);
		EXPECT_EQ(before.contexts, after.contexts) TH_LOG("n=%u: contexts", n);
		EXPECT_EQ(before.pinned, after.pinned) TH_LOG("n=%u: pinned_pages", n);
		EXPECT_EQ(before.charged, after.charged) TH_LOG("n=%u: charged_pages", n);
		EXPECT_EQ(before.bufs, after.bufs) TH_LOG("n=%u: posted_bufs", n);
		EXPECT_EQ(before.vmpin, after.vmpin) TH_LOG("n=%u: VmPin", n);
		if (t->cq.ring)
			EXPECT_EQ(prod, t->cq.ring->producer)
				TH_LOG("n=%u: a failed call (%s) wrote a completion", n, strerror(err));
		if (t->cq.ring)
			EXPECT_EQ(0, t->cq.ring->flags) TH_LOG("n=%u: ring flags", n);
		/* the context still works, and nothing was half done */
		EXPECT_EQ(0, tm_call(t->fd, DPUSIM_IOCTL_TM_QUERY, &q)) TH_LOG("n=%u", n);
		EXPECT_EQ(0, p->op(t)) TH_LOG("n=%u: the call again, without the fault", n);
	} else if (n) {
		EXPECT_EQ(0, tm_call(t->fd, DPUSIM_IOCTL_TM_QUERY, &q)) TH_LOG("n=%u", n);
	}
	if (p->undo)
		p->undo(t);
	tm_cq_unmap(&t->cq);
	EXPECT_EQ(0, close(t->fd));
	if (t->rank_fd >= 0)
		close(t->rank_fd);
	tm_state(&after);
	EXPECT_EQ(base->mrs, after.mrs) TH_LOG("n=%u: mrs after close", n);
	EXPECT_EQ(base->contexts, after.contexts) TH_LOG("n=%u: contexts after close", n);
	EXPECT_EQ(base->pinned, after.pinned) TH_LOG("n=%u: pinned_pages after close", n);
	EXPECT_EQ(base->charged, after.charged) TH_LOG("n=%u: charged_pages after close", n);
	EXPECT_EQ(base->bufs, after.bufs) TH_LOG("n=%u: posted_bufs after close", n);
	EXPECT_EQ(base->vmpin, after.vmpin) TH_LOG("n=%u: VmPin after close", n);
	return fired;
}

static unsigned int tm_sweep(struct __test_metadata *_metadata,
			     const struct tm_path *p)
{
	struct tm_state base;
	unsigned int fired = 0;
	struct nth nth;
	struct tmc t = { 0 };
	uint8_t *m;
	int f;

	if (access(TM_PATH, F_OK)) {
		SKIP(return 0, "no %s", TM_PATH);
	}
	m = mmap(NULL, TM_BUFLEN + 2 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, m) TH_LOG("buffer");
	ASSERT_EQ(0, mprotect(m, PAGE, PROT_NONE));
	ASSERT_EQ(0, mprotect(m + PAGE + TM_BUFLEN, PAGE, PROT_NONE));
	t.buf = m + PAGE;
	tm_state(&base);
	nth_open(_metadata, &nth);
	for (nth.n = 0; nth.n <= MAX_NTH; nth.n++) {
		f = tm_run_once(_metadata, p, &t, &nth, &base);
		if (_metadata->exit_code == KSFT_FAIL && nth.n > 3)
			break;
		if (nth.n && !f)
			break;
		fired += f;
	}
	EXPECT_GE(MAX_NTH, nth.n) TH_LOG("still failing at n=%u", MAX_NTH);
	close(nth.fd);
	munmap(m, TM_BUFLEN + 2 * PAGE);
	return fired;
}

#define TM_SWEEP(name, _needs, _prep, _op, _undo)			\
TEST_F_TIMEOUT(fail_nth, name, SWEEP_TIMEOUT)				\
{									\
	static const struct tm_path p = {				\
		.needs = _needs, .prepare = _prep, .op = _op,		\
		.undo = _undo,						\
	};								\
	unsigned int n = tm_sweep(_metadata, &p);			\
									\
	ksft_print_msg("%s: %u fault sites swept (n = 1..%u)\n",	\
		       #name, n, n + 1);				\
	EXPECT_LT(0, n) TH_LOG("no fault site at all");			\
}

#define TMC_ALL	(TMC_CQ | TMC_MR | TMC_SRQ | TMC_QP | TMC_CONN)

TM_SWEEP(tm_reg_mr_user, 0, NULL, tm_op_reg_mr, tm_undo_mr)
TM_SWEEP(tm_reg_mr_mram, 0, tm_prep_rank, tm_op_reg_mram, tm_undo_mr)
TM_SWEEP(tm_create_cq_mmap, 0, NULL, tm_op_create_cq, tm_undo_cq)
TM_SWEEP(tm_create_srq, TMC_CQ, NULL, tm_op_create_srq, tm_undo_srq)
TM_SWEEP(tm_create_qp, TMC_CQ, NULL, tm_op_create_qp, tm_undo_qp)
TM_SWEEP(tm_connect, TMC_CQ | TMC_SRQ | TMC_QP, NULL, tm_op_connect, tm_undo_connect)
TM_SWEEP(tm_post_ops_add, TMC_CQ | TMC_MR | TMC_SRQ, NULL, tm_op_tag_add, tm_undo_tag)
TM_SWEEP(tm_post_recv, TMC_ALL, NULL, tm_op_recv, tm_undo_recv)
TM_SWEEP(tm_send_eager_expected, TMC_ALL, tm_prep_tag, tm_op_eager, tm_undo_consumed)
TM_SWEEP(tm_send_unexpected, TMC_ALL, tm_prep_untagged, tm_op_unexpected, tm_undo_unexpected)
TM_SWEEP(tm_send_rendezvous, TMC_ALL, tm_prep_tag, tm_op_rndv, tm_undo_consumed)
TM_SWEEP(tm_srq_rdma_read, TMC_ALL, NULL, tm_op_rdma_read, tm_undo_drain)

TEST_HARNESS_MAIN
