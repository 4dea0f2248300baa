// SPDX-License-Identifier: GPL-2.0
/*
 * ABI tests of asynchronous transfers through /dev/dpusim/rank0:
 * DPUSIM_XFER_ASYNC and DPUSIM_IOCTL_SYNC (struct rules, one test per
 * failure path), RLIMIT_MEMLOCK, a rank closed or a process exiting
 * with transfers still queued, and the status page (DPUSIM_MMAP_STATUS:
 * its counters, one test per mmap failure).
 */
#include <stddef.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define LEN 4096
#define BIG (16 << 20)		/* bytes per DPU of the "big" transfers */
#define BIG_DPUS 4

FIXTURE(async) {
	int fd;
	struct two_dpu_xfer t;
	struct dpusim_sync s;
};

FIXTURE_SETUP(async)
{
	self->fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open: %s", strerror(errno));
	ASSERT_EQ(0, two_dpu_xfer_init(&self->t, 2, 11, 4096, LEN, DPUSIM_XFER_ASYNC));
	self->s = (struct dpusim_sync){ .size = sizeof(self->s) };
}

FIXTURE_TEARDOWN(async)
{
	two_dpu_xfer_free(&self->t);
	if (self->fd >= 0)
		close(self->fd);
}

static int sync_rank(int fd, struct dpusim_sync *s)
{
	return ioctl(fd, DPUSIM_IOCTL_SYNC, s);
}

/* Queue a BIG-byte transfer to BIG_DPUS DPUs of the rank from one buffer. */
static int queue_big(int fd, uint8_t **bufp)
{
	struct dpusim_xfer_dpu d[BIG_DPUS];
	struct dpusim_block b[BIG_DPUS];
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_ASYNC,
		.length = BIG, .nr_dpus = BIG_DPUS, .nr_blocks = BIG_DPUS,
		.dpus = (uintptr_t)d, .blocks = (uintptr_t)b,
	};
	uint8_t *buf = malloc(BIG);
	int i;

	*bufp = buf;
	if (!buf)
		return -1;
	memset(buf, 0x5a, BIG);
	for (i = 0; i < BIG_DPUS; i++) {
		d[i] = (struct dpusim_xfer_dpu){ .dpu = i, .nr_blocks = 1 };
		b[i] = (struct dpusim_block){ (uintptr_t)buf, BIG };
	}
	return xfer(fd, &x);
}

/* ------------------------------------------------------------ SYNC ABI */

TEST_F(async, sync_nothing_queued)
{
	EXPECT_EQ(0, sync_rank(self->fd, &self->s));
	self->s.timeout_ms = 1;
	EXPECT_EQ(0, sync_rank(self->fd, &self->s));
	self->s.timeout_ms = DPUSIM_SYNC_MAX_TIMEOUT_MS;
	EXPECT_EQ(0, sync_rank(self->fd, &self->s));
}

TEST_F(async, sync_short_struct)
{
	self->s.size = offsetof(struct dpusim_sync, __reserved);
	EXPECT_ERRNO(EINVAL, sync_rank(self->fd, &self->s));
}

TEST_F(async, sync_long_struct)
{
	struct {
		struct dpusim_sync s;
		uint64_t tail;
	} big = { .s = { .size = sizeof(big) } };

	EXPECT_EQ(0, sync_rank(self->fd, &big.s));
	big.tail = 1;
	EXPECT_ERRNO(E2BIG, sync_rank(self->fd, &big.s));
}

TEST_F(async, sync_bad_flags)
{
	self->s.flags = 1;
	EXPECT_ERRNO(EINVAL, sync_rank(self->fd, &self->s));
}

TEST_F(async, sync_reserved)
{
	self->s.__reserved = 1;
	EXPECT_ERRNO(EINVAL, sync_rank(self->fd, &self->s));
}

TEST_F(async, sync_timeout_over_max)
{
	self->s.timeout_ms = DPUSIM_SYNC_MAX_TIMEOUT_MS + 1;
	EXPECT_ERRNO(EINVAL, sync_rank(self->fd, &self->s));
}

TEST_F(async, sync_bad_pointer)
{
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, DPUSIM_IOCTL_SYNC, (void *)8));
}

/* ------------------------------------------------------------ transfers */

TEST_F(async, round_trip)
{
	long long ioctls = sysfs_rank_attr(0, "xfer_ioctls");

	ASSERT_EQ(0, xfer(self->fd, &self->t.x));
	/* The MRAM is allocated before the call returns. */
	EXPECT_EQ(2 * LEN, sysfs_rank_attr(0, "mram_resident_bytes"));
	self->t.x.flags |= DPUSIM_XFER_FROM_DPU;
	self->t.blocks[0].addr = (uintptr_t)self->t.dst;
	self->t.blocks[1].addr = (uintptr_t)(self->t.dst + LEN);
	ASSERT_EQ(0, xfer(self->fd, &self->t.x));
	ASSERT_EQ(0, sync_rank(self->fd, &self->s));
	EXPECT_EQ(0, memcmp(self->t.src, self->t.dst, 2 * LEN));
	EXPECT_EQ(ioctls + 2, sysfs_rank_attr(0, "xfer_ioctls"));
	EXPECT_EQ(0, sync_rank(self->fd, &self->s));
}

/* A synchronous call after an ASYNC one sees its data. */
/*
 * Large one-block transfers, each waited for at once: the SYNC takes
 * chunks of the copy beside the rank's worker (kernel/async.c).  Odd
 * user addresses and lengths not a multiple of the 16 KiB chunks, both
 * directions, round after round; the bytes around the block stay.
 */
TEST_F(async, sync_helps_large_copy)
{
	const size_t len = 5 * 16384 + 1032 + 65536, span = 256 << 10;
	uint8_t *src = malloc(span), *dst = malloc(span);
	struct dpusim_xfer_dpu d = { .dpu = 1, .nr_blocks = 1 };
	struct dpusim_block b;
	struct dpusim_xfer x = {
		.size = sizeof(x), .offset = 8, .length = len, .nr_dpus = 1,
		.nr_blocks = 1, .dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};
	size_t i, at;
	int round;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	for (round = 0; round < 16; round++) {
		at = 1 + round * 40;	/* odd, then even, user addresses */
		for (i = 0; i < span; i++)
			src[i] = (uint8_t)(i * 7 + round * 13 + i / 4096);
		memset(dst, 0xee, span);
		b = (struct dpusim_block){ (uintptr_t)(src + at), len };
		x.flags = DPUSIM_XFER_ASYNC;
		ASSERT_EQ(0, xfer(self->fd, &x));
		ASSERT_EQ(0, sync_rank(self->fd, &self->s));
		b.addr = (uintptr_t)(dst + at);
		x.flags = DPUSIM_XFER_ASYNC | DPUSIM_XFER_FROM_DPU;
		ASSERT_EQ(0, xfer(self->fd, &x));
		ASSERT_EQ(0, sync_rank(self->fd, &self->s));
		ASSERT_EQ(0, memcmp(src + at, dst + at, len)) TH_LOG("round %d", round);
		for (i = 0; i < at; i++)
			ASSERT_EQ(0xee, dst[i]);
		for (i = at + len; i < span; i++)
			ASSERT_EQ(0xee, dst[i]);
	}
	free(src);
	free(dst);
}

TEST_F(async, sync_xfer_waits_for_queued)
{
	ASSERT_EQ(0, xfer(self->fd, &self->t.x));
	self->t.x.flags = DPUSIM_XFER_FROM_DPU;
	self->t.blocks[0].addr = (uintptr_t)self->t.dst;
	self->t.blocks[1].addr = (uintptr_t)(self->t.dst + LEN);
	ASSERT_EQ(0, xfer(self->fd, &self->t.x));
	EXPECT_EQ(0, memcmp(self->t.src, self->t.dst, 2 * LEN));
	EXPECT_EQ(0, sync_rank(self->fd, &self->s));
}

/* Submit errors come back at once; nothing is queued or allocated. */
TEST_F(async, bad_block_address_at_submit)
{
	long long ioctls = sysfs_rank_attr(0, "xfer_ioctls");
	void *hole = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);

	ASSERT_NE(MAP_FAILED, hole);
	self->t.blocks[1].addr = (uintptr_t)hole;
	EXPECT_ERRNO(EFAULT, xfer(self->fd, &self->t.x));
	EXPECT_EQ(0, sync_rank(self->fd, &self->s));
	EXPECT_EQ(0, sysfs_rank_attr(0, "mram_resident_bytes"));
	EXPECT_EQ(ioctls, sysfs_rank_attr(0, "xfer_ioctls"));
	munmap(hole, LEN);
}

/*
 * Over RLIMIT_MEMLOCK: ENOMEM, nothing changed, for asynchronous and
 * synchronous transfers alike (both pin).  In a child without
 * CAP_IPC_LOCK (which bypasses the limit): root drops to nobody.
 */
TEST_F(async, memlock_limit_enomem)
{
	long long ioctls = sysfs_rank_attr(0, "xfer_ioctls");
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { 4096, 4096 };
		static uint64_t word __attribute__((aligned(4096)));
		struct dpusim_xfer_dpu d = { .dpu = 5, .nr_blocks = 1 };
		struct dpusim_block b = { (uintptr_t)&word, 8 };
		struct dpusim_xfer one = {
			.size = sizeof(one), .length = 8, .nr_dpus = 1,
			.nr_blocks = 1, .dpus = (uintptr_t)&d,
			.blocks = (uintptr_t)&b,
		};
		uint8_t *buf;
		int r;

		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(10);
		if (getuid() == 0 && setresuid(65534, 65534, 65534))
			_exit(11);
		r = queue_big(self->fd, &buf);
		if (r != -1)
			_exit(12);
		if (errno != ENOMEM)
			_exit(13);
		/* Synchronous: two pages and more, over the one-page limit. */
		self->t.x.flags = 0;
		if (xfer(self->fd, &self->t.x) != -1 || errno != ENOMEM)
			_exit(14);
		/* One page is within it. */
		word = 0x1122334455667788ULL;
		if (xfer(self->fd, &one))
			_exit(15);
		_exit(0);
	}
	EXPECT_EQ(0, child_exit_status(pid));
	EXPECT_EQ(4096, sysfs_rank_attr(0, "mram_resident_bytes"));
	EXPECT_EQ(ioctls + 1, sysfs_rank_attr(0, "xfer_ioctls"));
	EXPECT_EQ(0, sync_rank(self->fd, &self->s));
}

/*
 * Close with a big transfer queued: close does not wait, the transfer
 * completes; the next open() waits for it and finds the rank clean.
 */
TEST_F(async, close_with_queued_transfer)
{
	uint8_t *buf;
	int fd;

	ASSERT_EQ(0, queue_big(self->fd, &buf));
	EXPECT_EQ(0, close(self->fd));
	self->fd = -1;
	free(buf);	/* the queued transfer holds the pages it pinned */

	fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(1, sysfs_rank_attr(0, "is_owned"));
	EXPECT_EQ(getpid(), sysfs_rank_attr(0, "owner_pid"));
	EXPECT_EQ(0, sysfs_rank_attr(0, "mram_resident_bytes"));
	EXPECT_EQ(0, sysfs_rank_attr(0, "pinned_pages"));
	EXPECT_EQ(0, sync_rank(fd, &self->s));
	self->fd = fd;
}

/* A process that exits with a transfer queued leaves the rank free. */
TEST_F(async, exit_with_queued_transfer)
{
	int fd;
	pid_t pid;

	close(self->fd);
	self->fd = -1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint8_t *buf;

		fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(10);
		if (queue_big(fd, &buf))
			_exit(11);
		_exit(0);
	}
	EXPECT_EQ(0, child_exit_status(pid));
	fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(getpid(), sysfs_rank_attr(0, "owner_pid"));
	EXPECT_EQ(0, sysfs_rank_attr(0, "mram_resident_bytes"));
	EXPECT_EQ(0, sysfs_rank_attr(0, "pinned_pages"));
	self->fd = fd;
}

/* ------------------------------------------------------- status page */

#define PAGE 4096

static const struct dpusim_rank_status *map_status(int fd)
{
	void *p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, DPUSIM_MMAP_STATUS);

	return p == MAP_FAILED ? NULL : p;
}

/* A mapping's errno, the mapping undone if it was made */
static int status_mmap_errno(int fd, size_t len, int prot, int flags, uint64_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, (off_t)off);

	if (p != MAP_FAILED) {
		munmap(p, len);
		return 0;
	}
	return errno;
}

/*
 * Counted once queued and once done, failed submits not at all; every
 * mapping shows the same page, which outlives its file's close.
 */
TEST_F(async, status_counts)
{
	const struct dpusim_rank_status *st = map_status(self->fd), *st2;
	uint64_t q0, d0;
	uint8_t *buf;

	ASSERT_NE(NULL, st) TH_LOG("mmap: %s", strerror(errno));
	q0 = __atomic_load_n(&st->async_queued, __ATOMIC_ACQUIRE);
	d0 = __atomic_load_n(&st->async_done, __ATOMIC_ACQUIRE);
	EXPECT_EQ(q0, d0);	/* the fixture queued nothing */

	ASSERT_EQ(0, queue_big(self->fd, &buf));
	EXPECT_EQ(q0 + 1, __atomic_load_n(&st->async_queued, __ATOMIC_ACQUIRE));
	self->t.blocks[0].addr = 0;	/* EFAULT: not queued */
	EXPECT_ERRNO(EFAULT, xfer(self->fd, &self->t.x));
	EXPECT_EQ(q0 + 1, __atomic_load_n(&st->async_queued, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, sync_rank(self->fd, &self->s));
	EXPECT_EQ(q0 + 1, __atomic_load_n(&st->async_done, __ATOMIC_ACQUIRE));
	free(buf);

	st2 = map_status(self->fd);
	ASSERT_NE(NULL, st2);
	EXPECT_EQ(q0 + 1, st2->async_queued);
	EXPECT_EQ(0, munmap((void *)st2, PAGE));

	/* the mapping holds the file: it still reads after close() */
	EXPECT_EQ(0, close(self->fd));
	self->fd = -1;
	EXPECT_EQ(q0 + 1, st->async_done);
	EXPECT_EQ(0, munmap((void *)st, PAGE));
}

/* A synchronous transfer is not counted */
TEST_F(async, status_sync_xfer_not_counted)
{
	const struct dpusim_rank_status *st = map_status(self->fd);
	uint64_t q0;

	ASSERT_NE(NULL, st);
	q0 = st->async_queued;
	self->t.x.flags = 0;
	ASSERT_EQ(0, xfer(self->fd, &self->t.x));
	EXPECT_EQ(q0, st->async_queued);
	EXPECT_EQ(q0, st->async_done);
	munmap((void *)st, PAGE);
}

TEST_F(async, status_private)
{
	EXPECT_EQ(EINVAL, status_mmap_errno(self->fd, PAGE, PROT_READ, MAP_PRIVATE,
					    DPUSIM_MMAP_STATUS));
}

TEST_F(async, status_two_pages)
{
	EXPECT_EQ(EINVAL, status_mmap_errno(self->fd, 2 * PAGE, PROT_READ, MAP_SHARED,
					    DPUSIM_MMAP_STATUS));
}

TEST_F(async, status_past_the_page)
{
	EXPECT_EQ(EINVAL, status_mmap_errno(self->fd, PAGE, PROT_READ, MAP_SHARED,
					    DPUSIM_MMAP_STATUS + PAGE));
}

TEST_F(async, status_writable)
{
	EXPECT_EQ(EPERM, status_mmap_errno(self->fd, PAGE, PROT_READ | PROT_WRITE,
					   MAP_SHARED, DPUSIM_MMAP_STATUS));
}

TEST_F(async, status_executable)
{
	EXPECT_EQ(EPERM, status_mmap_errno(self->fd, PAGE, PROT_READ | PROT_EXEC,
					   MAP_SHARED, DPUSIM_MMAP_STATUS));
}

TEST_F(async, status_mprotect_write)
{
	const struct dpusim_rank_status *st = map_status(self->fd);

	ASSERT_NE(NULL, st);
	EXPECT_ERRNO(EACCES, mprotect((void *)st, PAGE, PROT_READ | PROT_WRITE));
	munmap((void *)st, PAGE);
}

TEST_F(async, status_worker_file)
{
	struct dpusim_worker_open wo = { .size = sizeof(wo) };

	ASSERT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_WORKER_OPEN, &wo));
	EXPECT_EQ(EINVAL, status_mmap_errno(wo.fd, PAGE, PROT_READ, MAP_SHARED,
					    DPUSIM_MMAP_STATUS));
	close(wo.fd);
}

TEST_HARNESS_MAIN
