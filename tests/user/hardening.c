// SPDX-License-Identifier: GPL-2.0
/*
 * Regression tests of the hardening review, one per finding, through
 * /dev/dpusim/rank0 (each failed on the module before the fixes):
 *  1. pins per page: blocks alternating between two pages pin (and charge)
 *     each page once;
 *  2. the async queue is bounded (EAGAIN) and close() does not wait for it;
 *  3. zero padding is bounded per call (in zz_module_reload.c: it needs a
 *     rank of more than 4 GiB);
 *  4. RLIMIT_MEMLOCK is charged per distinct page, to pinned memory
 *     (VmPin), for synchronous transfers too;
 *  5. owner_pid follows the process using the fd and the reader's pid
 *     namespace; mram_resident_bytes counts MRAM only.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define PAGE 4096UL

static int sync_fd(int fd)
{
	struct dpusim_sync s = { .size = sizeof(s) };

	return ioctl(fd, DPUSIM_IOCTL_SYNC, &s);
}

/* Drop to nobody with RLIMIT_MEMLOCK = @bytes (no CAP_IPC_LOCK). */
static int drop_to_nobody(rlim_t bytes)
{
	struct rlimit rl = { bytes, bytes };

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return -1;
	return setresuid(65534, 65534, 65534);
}

FIXTURE(rank)
{
	int fd;
	uint8_t *two;		/* two pages */
};

FIXTURE_SETUP(rank)
{
	self->fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	self->two = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->two);
	for (unsigned long i = 0; i < 2 * PAGE; i++)
		self->two[i] = i * 13 + 1;
}

FIXTURE_TEARDOWN(rank)
{
	munmap(self->two, 2 * PAGE);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * 1 and 4: 4096 blocks of 8 bytes alternating between two pages, queued
 * by a process whose RLIMIT_MEMLOCK is 64 KiB: the two pages are charged
 * once (8 kB of VmPin while queued), not once per block.
 */
TEST_F(rank, alternating_blocks_pin_each_page_once)
{
	const uint32_t nr = 4096;
	struct dpusim_xfer_dpu d = { .dpu = 3, .nr_blocks = nr };
	struct dpusim_block *b = calloc(nr, sizeof(*b));
	uint64_t *back = calloc(nr, 8);
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_ASYNC,
		.length = nr * 8, .nr_dpus = 1, .nr_blocks = nr,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)b,
	};
	pid_t pid;

	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, back);
	for (uint32_t i = 0; i < nr; i++)
		b[i] = (struct dpusim_block){
			(uintptr_t)(self->two + (i % 2) * PAGE + (i / 2 % 512) * 8), 8 };
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		long pin;

		if (drop_to_nobody(64 << 10))
			_exit(10);
		if (xfer(self->fd, &x))
			_exit(11);
		pin = proc_status_kb("VmPin:");
		if (pin != 0 && pin != 8)	/* 0 once the job is done */
			_exit(12);
		if (sync_fd(self->fd))
			_exit(13);
		if (proc_status_kb("VmPin:") != 0)
			_exit(14);
		_exit(0);
	}
	EXPECT_EQ(0, child_exit_status(pid));
	EXPECT_EQ(0, sysfs_rank_attr(0, "pinned_pages"));

	/* And the bytes are those of the blocks, in order. */
	for (uint32_t i = 0; i < nr; i++)
		b[i] = (struct dpusim_block){ (uintptr_t)&back[i], 8 };
	x.flags = DPUSIM_XFER_FROM_DPU;
	ASSERT_EQ(0, xfer(self->fd, &x));
	for (uint32_t i = 0; i < nr; i++) {
		ASSERT_EQ(0, memcmp(&back[i], self->two + (i % 2) * PAGE +
				    (i / 2 % 512) * 8, 8)) TH_LOG("block %u", i);
	}
	free(back);
	free(b);
}

/* 4: a synchronous transfer is charged too: 32 pages over a 64 KiB limit. */
TEST_F(rank, sync_transfer_charged_to_memlock)
{
	size_t len = 32 * PAGE;
	uint8_t *buf = aligned_alloc(PAGE, len);
	struct dpusim_xfer_dpu d = { .dpu = 4, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)buf, len };
	struct dpusim_xfer x = {
		.size = sizeof(x), .length = len, .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};
	pid_t pid;

	ASSERT_NE(NULL, buf);
	memset(buf, 0x42, len);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (drop_to_nobody(64 << 10))
			_exit(10);
		if (xfer(self->fd, &x) != -1 || errno != ENOMEM)
			_exit(11);
		if (proc_status_kb("VmPin:") != 0)
			_exit(12);
		b.length = x.length = 16 * PAGE;	/* at the limit */
		if (xfer(self->fd, &x))
			_exit(13);
		_exit(0);
	}
	EXPECT_EQ(0, child_exit_status(pid));
	EXPECT_EQ(16 * PAGE, sysfs_rank_attr(0, "mram_resident_bytes"));
	free(buf);
}

/*
 * Slow jobs for the queue tests: DPU 0 gets @mib MiB of resident MRAM,
 * then each job zero-pads all of it (no blocks, no length check).
 */
static int make_resident(int fd, size_t mib)
{
	size_t len = mib << 20;
	uint8_t *buf = malloc(len);
	struct dpusim_xfer_dpu d = { .dpu = 0, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)buf, len };
	struct dpusim_xfer x = {
		.size = sizeof(x), .length = len, .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};
	int r;

	if (!buf)
		return -1;
	memset(buf, 0x77, len);
	r = xfer(fd, &x);
	free(buf);
	return r;
}

static int queue_pad_job(int fd, size_t mib)
{
	struct dpusim_xfer_dpu d = { .dpu = 0, .nr_blocks = 0 };
	struct dpusim_xfer x = {
		.size = sizeof(x),
		.flags = DPUSIM_XFER_ASYNC | DPUSIM_XFER_NO_LENGTH_CHECK,
		.length = mib << 20, .nr_dpus = 1, .dpus = (uintptr_t)&d,
	};

	return xfer(fd, &x);
}

/*
 * Submitters of pad jobs until one sees EAGAIN.  The rank's worker holds
 * xfer_lock while it pads, and a submit takes it too: with the worker on
 * another CPU, a lone submitter gets the lock about once per job the
 * worker runs and the queue never grows.  Several submitters wait in
 * the mutex's queue ahead of the worker (it hands the lock over in
 * order), so jobs are queued faster than the worker runs them.
 */
#define QUEUE_THREADS 6

struct queue_fill {
	int fd;
	_Atomic int queued, eagain, other;	/* other: an errno, not EAGAIN */
};

static void *queue_fill_thread(void *arg)
{
	struct queue_fill *q = arg;
	int i;

	for (i = 0; i < 4 * (int)DPUSIM_ASYNC_MAX_JOBS && !q->eagain && !q->other; i++) {
		if (queue_pad_job(q->fd, 16) == 0)
			q->queued++;
		else if (errno == EAGAIN)
			q->eagain = 1;
		else
			q->other = errno;
	}
	return NULL;
}

/* 2: the queue of an open file is bounded: EAGAIN, then room after SYNC. */
TEST_F(rank, async_queue_full_is_eagain)
{
	struct queue_fill q = { .fd = self->fd };
	pthread_t t[QUEUE_THREADS];
	int i, queued, eagain;

	ASSERT_EQ(0, make_resident(self->fd, 16));
	for (i = 0; i < QUEUE_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, queue_fill_thread, &q));
	for (i = 0; i < QUEUE_THREADS; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(0, q.other);
	queued = q.queued;
	eagain = q.eagain;
	EXPECT_TRUE(eagain) TH_LOG("%d jobs queued without EAGAIN", queued);
	EXPECT_LE(DPUSIM_ASYNC_MAX_JOBS, queued);
	EXPECT_EQ(0, sync_fd(self->fd));
	EXPECT_EQ(0, queue_pad_job(self->fd, 16));
	EXPECT_EQ(0, sync_fd(self->fd));
	EXPECT_EQ(0, sysfs_rank_attr(0, "pinned_pages"));
}

/*
 * 2: close() with a full queue of slow jobs returns without waiting for
 * them (the rank stays owned by the jobs); the next open() waits for them
 * and finds the rank clean.
 */
TEST_F(rank, close_does_not_wait_for_the_queue)
{
	int i, fd;

	ASSERT_EQ(0, make_resident(self->fd, 16));
	for (i = 0; i < (int)DPUSIM_ASYNC_MAX_JOBS; i++)
		if (queue_pad_job(self->fd, 16))
			break;
	ASSERT_LT(8, i);
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	EXPECT_EQ(1, sysfs_rank_attr(0, "is_owned"))
		TH_LOG("close() waited for %d queued jobs", i);
	fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, sysfs_rank_attr(0, "mram_resident_bytes"));
	EXPECT_EQ(getpid(), sysfs_rank_attr(0, "owner_pid"));
	self->fd = fd;
}

static int rank_info(int fd)
{
	struct dpusim_rank_info info = { .size = sizeof(info) };

	return ioctl(fd, DPUSIM_IOCTL_RANK_INFO, &info);
}

/* 5: owner_pid is the process that last used the fd (fork). */
TEST_F(rank, owner_pid_follows_the_caller)
{
	pid_t pid;

	EXPECT_EQ(getpid(), sysfs_rank_attr(0, "owner_pid"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (rank_info(self->fd))
			_exit(10);
		_exit(sysfs_rank_attr(0, "owner_pid") == getpid() ? 0 : 11);
	}
	EXPECT_EQ(0, child_exit_status(pid));
	ASSERT_EQ(0, rank_info(self->fd));
	EXPECT_EQ(getpid(), sysfs_rank_attr(0, "owner_pid"));
}

/* 5: owner_pid is read in the reader's pid namespace (0: not visible). */
TEST_F(rank, owner_pid_in_the_readers_namespace)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		pid_t inner;

		if (unshare(CLONE_NEWPID))
			_exit(errno == EINVAL ? 42 : 10);
		inner = fork();
		if (inner < 0)
			_exit(11);
		if (inner == 0) {
			/* pid 1 here; the owner (our grandparent) is outside */
			if (sysfs_rank_attr(0, "owner_pid") != 0)
				_exit(12);
			if (rank_info(self->fd))
				_exit(13);
			_exit(sysfs_rank_attr(0, "owner_pid") == 1 ? 0 : 14);
		}
		status = child_exit_status(inner);
		_exit(status < 0 ? 15 : status);
	}
	status = child_exit_status(pid);
	if (status == 42)
		SKIP(return, "this kernel has no PID namespaces (CONFIG_PID_NS)");
	EXPECT_EQ(0, status);
}

/* 5: WRAM pages count in wram_resident_bytes, not in mram_resident_bytes. */
TEST_F(rank, wram_is_not_mram)
{
	struct dpusim_xfer_dpu d = { .dpu = 1, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)self->two, 64 };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_WRAM, .length = 64,
		.nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};

	ASSERT_EQ(0, xfer(self->fd, &x));
	EXPECT_EQ(0, sysfs_rank_attr(0, "mram_resident_bytes"));
	EXPECT_EQ(PAGE, sysfs_rank_attr(0, "wram_resident_bytes"));
	x.flags = 0;
	ASSERT_EQ(0, xfer(self->fd, &x));
	EXPECT_EQ(PAGE, sysfs_rank_attr(0, "mram_resident_bytes"));
	EXPECT_EQ(PAGE, sysfs_rank_attr(0, "wram_resident_bytes"));
}

TEST_HARNESS_MAIN
