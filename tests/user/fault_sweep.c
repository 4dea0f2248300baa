// SPDX-License-Identifier: GPL-2.0
/*
 * Fault-injection sweep of every ioctl path, in the style of the kernel's
 * iommufd fail_nth selftest: for n = 1, 2, ... the n-th fault site the
 * call reaches (a slab or page allocation, a user copy) fails, through
 * /proc/thread-self/fail-nth, until the call runs past every site.  At
 * every n the call succeeds completely or fails with a clean errno and
 * changes nothing: the DPU memory (read back with injection off), the
 * host buffer, the rank's resident bytes, its pinned pages and the
 * process's VmPin are as before.  Leaks show in kmemleak, which
 * tools/vm-run scans after the run.  Needs a kernel with
 * CONFIG_FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC and
 * FAULT_INJECTION_USERCOPY (the debug kernel); elsewhere it skips.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "common.h"

#define PAGE	4096UL
#define RANK	1
#define RANK_NODE	RANK_PATH(1)
#define MAX_NTH	2000

static int writeat(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/*
 * Every allocation may be failed (GFP_KERNEL ones included, order 0 pages
 * too), quietly: we look for kernel reports, not injection messages.
 */
static bool setup_fault_injection(void)
{
	static const char *const quiet[] = {
		"failslab", "fail_page_alloc", "fail_usercopy",
	};
	char path[128];
	size_t i;

	if (access("/proc/thread-self/fail-nth", F_OK))
		return false;
	if (writeat("/sys/kernel/debug/failslab/ignore-gfp-wait", "N") ||
	    writeat("/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N") ||
	    writeat("/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "N") ||
	    writeat("/sys/kernel/debug/fail_page_alloc/min-order", "0"))
		return false;
	for (i = 0; i < ARRAY_SIZE(quiet); i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/%s/verbose",
			 quiet[i]);
		if (writeat(path, "0"))
			return false;
	}
	return true;
}

/* Fail the @nth fault site from now on (0: off). */
static void nth_arm(int fd, unsigned int nth)
{
	char buf[16];
	int n = snprintf(buf, sizeof(buf), "%u", nth);

	if (pwrite(fd, buf, n, 0) != n)
		abort();
}

/*
 * Disarm; true if the armed fault fired in the call (the counter reached
 * 0).  Reading and writing fail-nth are user copies, fault sites too: a
 * counter still armed may fire there (EFAULT), as iommufd's fail_nth
 * selftest notes; then the call did not reach it.
 */
static bool nth_fired(int fd)
{
	char buf[16] = "";
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	bool fired = n > 0 && atoi(buf) == 0;

	if (pwrite(fd, "0", 1, 0) != 1 && pwrite(fd, "0", 1, 0) != 1)
		abort();
	return fired;
}

static long vm_pin_kb(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmPin:", 6))
			v = strtol(line + 6, NULL, 10);
	fclose(f);
	return v;
}

/* ------------------------------------------------------------ the paths */

/*
 * Each path: prepare() with injection off (the rank is freshly opened,
 * its memory all holes), op() armed, then expect() with injection off:
 * the state after a success (ok) or after a failure (nothing changed).
 */
struct sweep {
	int fd;			/* the rank */
	uint8_t *src;		/* SRC_LEN bytes of pattern */
	uint8_t *dst;		/* SRC_LEN bytes of 0xee */
	uint8_t *back;		/* read-back buffer */
	struct dpusim_xfer_dpu dpus[8];
	struct dpusim_block blocks[512];
	struct dpusim_xfer x;
	bool queued;		/* op_async: the transfer was queued */
};

#define SRC_LEN	(8 * PAGE)

static void set_xfer(struct sweep *s, uint32_t flags, uint64_t off,
		     uint64_t len, uint32_t nr_dpus, uint32_t nr_blocks)
{
	s->x = (struct dpusim_xfer){
		.size = sizeof(s->x), .flags = flags, .offset = off,
		.length = len, .nr_dpus = nr_dpus, .nr_blocks = nr_blocks,
		.dpus = (uintptr_t)s->dpus, .blocks = (uintptr_t)s->blocks,
	};
}

/* One DPU's bytes [off, off + len) of MRAM (or WRAM) into s->back. */
static int read_dpu(struct sweep *s, uint32_t dpu, uint32_t wram, uint64_t off,
		    uint64_t len)
{
	struct dpusim_xfer_dpu d = { .dpu = dpu, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)s->back, len };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_FROM_DPU | wram,
		.offset = off, .length = len, .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};

	memset(s->back, 0x11, len);
	return xfer(s->fd, &x);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* To four DPUs' MRAM, pages allocated: three pages each, offset 4 KiB. */
static void to_mram_prepare(struct sweep *s)
{
	for (uint32_t i = 0; i < 4; i++) {
		s->dpus[i] = (struct dpusim_xfer_dpu){ .dpu = i * 3, .nr_blocks = 1 };
		s->blocks[i] = (struct dpusim_block){ (uintptr_t)s->src + i * 100,
						      3 * PAGE };
	}
	set_xfer(s, 0, PAGE, 3 * PAGE, 4, 4);
}

static bool to_mram_expect(struct sweep *s, bool ok)
{
	for (uint32_t i = 0; i < 4; i++) {
		if (read_dpu(s, i * 3, 0, PAGE, 3 * PAGE))
			return false;
		if (ok ? memcmp(s->back, s->src + i * 100, 3 * PAGE) :
			 !all_zero(s->back, 3 * PAGE))
			return false;
	}
	return sysfs_rank_attr(RANK, "mram_resident_bytes") ==
	       (ok ? 12 * (long long)PAGE : 0);
}

/* From MRAM: DPU 5's two pages, written beforehand, into s->dst. */
static void from_mram_prepare(struct sweep *s)
{
	s->dpus[0] = (struct dpusim_xfer_dpu){ .dpu = 5, .nr_blocks = 1 };
	s->blocks[0] = (struct dpusim_block){ (uintptr_t)s->src, 2 * PAGE };
	set_xfer(s, 0, 0, 2 * PAGE, 1, 1);
	if (xfer(s->fd, &s->x))
		abort();
	s->blocks[0].addr = (uintptr_t)s->dst + 8;
	s->x.flags = DPUSIM_XFER_FROM_DPU;
}

static bool from_mram_expect(struct sweep *s, bool ok)
{
	uint8_t ee[2 * PAGE + 16];

	memset(ee, 0xee, sizeof(ee));
	if (ok)
		return !memcmp(s->dst + 8, s->src, 2 * PAGE) &&
		       !memcmp(s->dst, ee, 8) && !memcmp(s->dst + 8 + 2 * PAGE, ee, 8);
	return !memcmp(s->dst, ee, sizeof(ee));
}

/* To WRAM: two DPUs, 1 KiB each at offset 64. */
static void to_wram_prepare(struct sweep *s)
{
	for (uint32_t i = 0; i < 2; i++) {
		s->dpus[i] = (struct dpusim_xfer_dpu){ .dpu = 60 + i, .nr_blocks = 1 };
		s->blocks[i] = (struct dpusim_block){ (uintptr_t)s->src + i * 1024,
						      1024 };
	}
	set_xfer(s, DPUSIM_XFER_WRAM, 64, 1024, 2, 2);
}

static bool to_wram_expect(struct sweep *s, bool ok)
{
	for (uint32_t i = 0; i < 2; i++) {
		if (read_dpu(s, 60 + i, DPUSIM_XFER_WRAM, 64, 1024))
			return false;
		if (ok ? memcmp(s->back, s->src + i * 1024, 1024) :
			 !all_zero(s->back, 1024))
			return false;
	}
	return sysfs_rank_attr(RANK, "wram_resident_bytes") ==
	       (ok ? 2 * (long long)PAGE : 0);
}

/*
 * Padding: DPU 7 holds two pages of pattern; 8 bytes to it with no length
 * check and a length of two pages zero the rest.
 */
static void pad_prepare(struct sweep *s)
{
	s->dpus[0] = (struct dpusim_xfer_dpu){ .dpu = 7, .nr_blocks = 1 };
	s->blocks[0] = (struct dpusim_block){ (uintptr_t)s->src, 2 * PAGE };
	set_xfer(s, 0, 0, 2 * PAGE, 1, 1);
	if (xfer(s->fd, &s->x))
		abort();
	s->blocks[0] = (struct dpusim_block){ (uintptr_t)s->src + PAGE, 8 };
	s->dpus[1] = (struct dpusim_xfer_dpu){ .dpu = 8, .nr_blocks = 0 };
	set_xfer(s, DPUSIM_XFER_NO_LENGTH_CHECK, 0, 2 * PAGE, 2, 1);
}

static bool pad_expect(struct sweep *s, bool ok)
{
	if (read_dpu(s, 7, 0, 0, 2 * PAGE))
		return false;
	if (ok)
		return !memcmp(s->back, s->src + PAGE, 8) &&
		       all_zero(s->back + 8, 2 * PAGE - 8);
	return !memcmp(s->back, s->src, 2 * PAGE);
}

/*
 * Small blocks over few pages, in an order that goes back and forth (the
 * engine's scattered pinning): 256 blocks of 8 bytes alternating between
 * two pages, to DPU 9.
 */
static void scattered_prepare(struct sweep *s)
{
	s->dpus[0] = (struct dpusim_xfer_dpu){ .dpu = 9, .nr_blocks = 256 };
	for (uint32_t i = 0; i < 256; i++)
		s->blocks[i] = (struct dpusim_block){
			(uintptr_t)s->src + (i % 2) * PAGE + (i / 2) * 8, 8 };
	set_xfer(s, 0, 0, 256 * 8, 1, 256);
}

static bool scattered_expect(struct sweep *s, bool ok)
{
	if (read_dpu(s, 9, 0, 0, 256 * 8))
		return false;
	if (!ok)
		return all_zero(s->back, 256 * 8);
	for (uint32_t i = 0; i < 256; i++)
		if (memcmp(s->back + i * 8, s->src + (i % 2) * PAGE + (i / 2) * 8, 8))
			return false;
	return true;
}

static int op_xfer(struct sweep *s)
{
	return xfer(s->fd, &s->x);
}

/* The same transfers queued (DPUSIM_XFER_ASYNC), then DPUSIM_IOCTL_SYNC. */
static int op_async(struct sweep *s)
{
	struct dpusim_sync sy = { .size = sizeof(sy) };

	s->x.flags |= DPUSIM_XFER_ASYNC;
	if (xfer(s->fd, &s->x))
		return -1;
	s->queued = true;	/* a fault in SYNC does not stop the transfer */
	return ioctl(s->fd, DPUSIM_IOCTL_SYNC, &sy);
}

static int op_info(struct sweep *s)
{
	struct dpusim_rank_info info = { .size = sizeof(info) };

	if (ioctl(s->fd, DPUSIM_IOCTL_RANK_INFO, &info))
		return -1;
	return info.nr_dpus == 64 && info.rank_index == RANK ? 0 : -2;
}

static int op_sync(struct sweep *s)
{
	struct dpusim_sync sy = { .size = sizeof(sy) };

	return ioctl(s->fd, DPUSIM_IOCTL_SYNC, &sy);
}

static void nothing(struct sweep *s)
{
	(void)s;
}

static bool nothing_changed(struct sweep *s, bool ok)
{
	(void)s;
	(void)ok;
	return sysfs_rank_attr(RANK, "mram_resident_bytes") == 0;
}

/*
 * Sweep one path.  Returns the number of n at which a fault fired; every
 * check is an ASSERT/EXPECT of the harness.
 */
static unsigned int sweep(struct __test_metadata *_metadata,
			  void (*prepare)(struct sweep *),
			  int (*op)(struct sweep *),
			  bool (*expect)(struct sweep *, bool ok))
{
	struct sweep *s = calloc(1, sizeof(*s));
	unsigned int nth, fired = 0;
	int nth_fd, r, err;
	long pin0 = vm_pin_kb();
	bool done = false;

	ASSERT_NE(NULL, s);
	s->src = mmap(NULL, 3 * SRC_LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, s->src);
	s->dst = s->src + SRC_LEN;
	s->back = s->dst + SRC_LEN;
	for (size_t i = 0; i < SRC_LEN; i++)
		s->src[i] = (uint8_t)(i * 7 + 3);
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nth_fd);

	for (nth = 1; nth < MAX_NTH && !done; nth++) {
		s->fd = open(RANK_NODE, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, s->fd);
		memset(s->dst, 0xee, SRC_LEN);
		s->queued = false;
		prepare(s);

		nth_arm(nth_fd, nth);
		r = op(s);
		err = errno;
		if (nth_fired(nth_fd)) {
			fired++;
		} else {
			done = true;	/* past every fault site */
			ASSERT_EQ(0, r) TH_LOG("no fault fired, errno %d", err);
		}
		if (r == -1) {
			/* the documented errnos of an injected failure */
			EXPECT_TRUE(err == ENOMEM || err == EFAULT)
				TH_LOG("n=%u: errno %d (%s)", nth, err, strerror(err));
			/* a failed SYNC after a queued transfer: let it finish */
			op_sync(s);
		}
		ASSERT_NE(-2, r);
		EXPECT_TRUE(expect(s, r == 0 || s->queued))
			TH_LOG("n=%u: result %d errno %d: %s", nth, r, err,
			       r == 0 ? "the success is incomplete" :
					"the failed call changed something");
		EXPECT_EQ(0, sysfs_rank_attr(RANK, "pinned_pages")) TH_LOG("n=%u", nth);
		EXPECT_EQ(pin0, vm_pin_kb()) TH_LOG("n=%u: VmPin", nth);
		close(s->fd);
	}
	EXPECT_TRUE(done) TH_LOG("still failing at n=%u", MAX_NTH);
	close(nth_fd);
	munmap(s->src, 3 * SRC_LEN);
	free(s);
	return fired;
}

FIXTURE(fi)
{
	int unused;
};

FIXTURE_SETUP(fi)
{
	if (!setup_fault_injection())
		SKIP(return, "no fault injection in this kernel (fail-nth, failslab, fail_page_alloc, fail_usercopy)");
}

FIXTURE_TEARDOWN(fi)
{
}

#define SWEEP(name, prep, op, exp)					\
TEST_F(fi, name)							\
{									\
	unsigned int n = sweep(_metadata, prep, op, exp);		\
	EXPECT_LT(0, n);						\
	ksft_print_msg("%s: %u fault sites swept\n", #name, n);	\
}

SWEEP(rank_info, nothing, op_info, nothing_changed)
SWEEP(sync_nothing_queued, nothing, op_sync, nothing_changed)
SWEEP(xfer_to_mram_allocating, to_mram_prepare, op_xfer, to_mram_expect)
SWEEP(xfer_from_mram, from_mram_prepare, op_xfer, from_mram_expect)
SWEEP(xfer_to_wram, to_wram_prepare, op_xfer, to_wram_expect)
SWEEP(xfer_padding, pad_prepare, op_xfer, pad_expect)
SWEEP(xfer_small_blocks_scattered, scattered_prepare, op_xfer, scattered_expect)
SWEEP(async_to_mram_then_sync, to_mram_prepare, op_async, to_mram_expect)
SWEEP(async_from_mram_then_sync, from_mram_prepare, op_async, from_mram_expect)
SWEEP(async_scattered_then_sync, scattered_prepare, op_async, scattered_expect)

/* open() of the rank node: fails cleanly or owns the rank. */
TEST_F(fi, open_rank)
{
	int nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	unsigned int nth, fired = 0;
	bool done = false;
	int fd, err;

	ASSERT_LE(0, nth_fd);
	for (nth = 1; nth < MAX_NTH && !done; nth++) {
		nth_arm(nth_fd, nth);
		fd = open(RANK_NODE, O_RDWR | O_CLOEXEC);
		err = errno;
		if (nth_fired(nth_fd))
			fired++;
		else
			done = true;
		if (fd < 0) {
			EXPECT_TRUE(err == ENOMEM || err == EFAULT) TH_LOG("errno %d", err);
			EXPECT_EQ(0, sysfs_rank_attr(RANK, "is_owned"));
		} else {
			EXPECT_EQ(1, sysfs_rank_attr(RANK, "is_owned"));
			close(fd);
		}
	}
	EXPECT_TRUE(done);
	ksft_print_msg("open_rank: %u fault sites swept\n", fired);
	close(nth_fd);
}

TEST_HARNESS_MAIN
