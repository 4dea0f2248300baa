// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/dpusim/rank1 as an unprivileged user.  As root the fixture gives
 * the node a test group (root:4242, 0660; the original owner and mode are
 * restored at the end); every test then forks a child that sets its
 * RLIMIT_MEMLOCK and drops to uid/gid 4243, with or without the
 * supplementary group 4242 (no /etc/passwd entry needed), and checks:
 *  - without the group: open() is EACCES, the rank stays free;
 *  - with the group: open() works;
 *  - RLIMIT_MEMLOCK (64 KiB = 16 pages) bounds the distinct user pages a
 *    transfer pins: 17 pages is ENOMEM with nothing changed (DPU memory,
 *    resident bytes, host buffer, queue, VmPin), 16 pages works, for
 *    synchronous and DPUSIM_XFER_ASYNC transfers, to and from the DPU;
 *    pages are counted once however many blocks name them;
 *  - a 1 MiB DPUSIM_XFER_ASYNC broadcast to 16 DPUs whose 16 blocks all
 *    name the same 1 MiB buffer (256 distinct pages) works under an
 *    8 MiB limit;
 *  - VmPin in /proc/self/status is 0 after the transfers (after SYNC for
 *    the asynchronous ones).
 */
#include <grp.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define RANK	1
#define NODE	RANK_PATH(1)
#define GID	4242
#define UID	4243
#define PAGE	4096UL
#define SMALL_LIMIT	(64UL << 10)	/* 16 pages */
#define BCAST_LEN	(1UL << 20)
#define BCAST_DPUS	16
#define BCAST_LIMIT	(8UL << 20)

/* --------------------------------------------------------- child side */

static const char *child_test;

/* A failed check in a child: say which and exit 1. */
static void __attribute__((format(printf, 3, 4)))
child_fail(int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "# %s: line %d: %s failed", child_test, line, cond);
	if (fmt[1]) {	/* fmt is " " then the caller's format */
		fprintf(stderr, ":");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fprintf(stderr, "\n");
	fflush(stderr);
	_exit(1);
}

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			child_fail(__LINE__, #cond, " " __VA_ARGS__);	\
	} while (0)

/* Set RLIMIT_MEMLOCK, then become UID, with the test group or not. */
static void drop(bool with_group, rlim_t memlock)
{
	struct rlimit rl = { memlock, memlock };
	gid_t g = GID;

	CHECK(!setrlimit(RLIMIT_MEMLOCK, &rl), "%s", strerror(errno));
	CHECK(!setgroups(with_group ? 1 : 0, &g), "%s", strerror(errno));
	CHECK(!setresgid(UID, UID, UID), "%s", strerror(errno));
	CHECK(!setresuid(UID, UID, UID), "%s", strerror(errno));
	CHECK(getuid() == UID && geteuid() == UID && getegid() == UID);
	CHECK(proc_status_kb("VmPin:") == 0, "VmPin %ld kB at the start", proc_status_kb("VmPin:"));
}

static void *map_pages(size_t pages)
{
	void *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	CHECK(p != MAP_FAILED, "%s", strerror(errno));
	return p;
}

/*
 * One transfer: @nr_dpus DPUs from 0, each with one block of @len bytes
 * at @buf (the same buffer for all); 0 or errno.
 */
static int xfer_same(int fd, uint32_t flags, void *buf, size_t len,
		     uint32_t nr_dpus)
{
	struct dpusim_xfer_dpu d[BCAST_DPUS];
	struct dpusim_block b[BCAST_DPUS];
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = flags, .length = len,
		.nr_dpus = nr_dpus, .nr_blocks = nr_dpus,
		.dpus = (uintptr_t)d, .blocks = (uintptr_t)b,
	};
	uint32_t i;

	for (i = 0; i < nr_dpus; i++) {
		d[i] = (struct dpusim_xfer_dpu){ .dpu = i, .nr_blocks = 1 };
		b[i] = (struct dpusim_block){ (uintptr_t)buf, len };
	}
	return xfer(fd, &x) ? errno : 0;
}

static int sync_rank(int fd)
{
	struct dpusim_sync s = { .size = sizeof(s) };

	return ioctl(fd, DPUSIM_IOCTL_SYNC, &s) ? errno : 0;
}

/* Does DPU @dpu hold @want (or zeros if NULL) in [0, len)?  In 8-page reads. */
static bool dpu_holds(int fd, uint8_t *back, uint32_t dpu, const uint8_t *want,
		      size_t len)
{
	struct dpusim_xfer_dpu d = { .dpu = dpu, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)back, 0 };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_FROM_DPU,
		.nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};
	size_t off, n, i;

	for (off = 0; off < len; off += n) {
		n = len - off < 8 * PAGE ? len - off : 8 * PAGE;
		x.offset = off;
		x.length = n;
		b.length = n;
		memset(back, 0xa5, n);
		if (xfer(fd, &x))
			return false;
		for (i = 0; i < n; i++)
			if (back[i] != (want ? want[off + i] : 0))
				return false;
	}
	return true;
}

static int open_rank(void)
{
	int fd = open(NODE, O_RDWR | O_CLOEXEC);

	CHECK(fd >= 0, "open: %s", strerror(errno));
	return fd;
}

/* Nothing changed on the rank or in the process since it was opened. */
static void check_untouched(int fd, uint8_t *back)
{
	CHECK(sysfs_rank_attr(RANK, "mram_resident_bytes") == 0, "%lld",
	      sysfs_rank_attr(RANK, "mram_resident_bytes"));
	CHECK(sysfs_rank_attr(RANK, "async_jobs") <= 0);
	CHECK(dpu_holds(fd, back, 0, NULL, 17 * PAGE));
	CHECK(dpu_holds(fd, back, 1, NULL, 17 * PAGE));
	CHECK(proc_status_kb("VmPin:") == 0, "VmPin %ld kB", proc_status_kb("VmPin:"));
}

static int child_no_group(void)
{
	drop(false, SMALL_LIMIT);
	CHECK(open(NODE, O_RDWR | O_CLOEXEC) == -1 && errno == EACCES,
	      "O_RDWR: %s", strerror(errno));
	CHECK(open(NODE, O_RDONLY | O_CLOEXEC) == -1 && errno == EACCES,
	      "O_RDONLY: %s", strerror(errno));
	CHECK(sysfs_rank_attr(RANK, "is_owned") == 0);
	return 0;
}

static int child_group_open(void)
{
	struct dpusim_rank_info info = { .size = sizeof(info) };
	int fd;

	drop(true, SMALL_LIMIT);
	fd = open_rank();
	CHECK(sysfs_rank_attr(RANK, "is_owned") == 1);
	CHECK(!ioctl(fd, DPUSIM_IOCTL_RANK_INFO, &info), "%s", strerror(errno));
	CHECK(info.rank_index == RANK && info.abi_version == DPUSIM_ABI_VERSION);
	CHECK(sysfs_rank_attr(RANK, "owner_pid") == getpid(), "%lld",
	      sysfs_rank_attr(RANK, "owner_pid"));
	CHECK(!close(fd));
	return 0;
}

/*
 * Under a 16-page limit, to the DPU (@flags: 0 or DPUSIM_XFER_ASYNC):
 * 17 distinct pages ENOMEM, nothing changed; 16 pages work; 16 pages
 * named by two DPUs' blocks each (32 page references) work too.
 */
static int memlock_to_dpu(uint32_t flags)
{
	uint8_t *buf = map_pages(17), *back = map_pages(8), *copy;
	size_t i;
	int fd, r;

	for (i = 0; i < 17 * PAGE; i++)
		buf[i] = (uint8_t)(i * 13 + 5);
	copy = malloc(17 * PAGE);
	CHECK(copy);
	memcpy(copy, buf, 17 * PAGE);
	drop(true, SMALL_LIMIT);
	fd = open_rank();

	/* over the limit, one DPU, then two DPUs (17 pages each time) */
	r = xfer_same(fd, flags, buf, 17 * PAGE, 1);
	CHECK(r == ENOMEM, "17 pages under a 16-page limit: %s", strerror(r));
	r = xfer_same(fd, flags, buf, 17 * PAGE, 2);
	CHECK(r == ENOMEM, "17 pages named twice: %s", strerror(r));
	if (flags & DPUSIM_XFER_ASYNC)
		CHECK(sync_rank(fd) == 0, "a refused transfer left an error");
	check_untouched(fd, back);
	CHECK(!memcmp(buf, copy, 17 * PAGE));

	/* at the limit: 16 pages, to one DPU, then to two from one buffer */
	r = xfer_same(fd, flags, buf, 16 * PAGE, 1);
	CHECK(r == 0, "16 pages under a 16-page limit: %s", strerror(r));
	CHECK(sync_rank(fd) == 0);
	CHECK(proc_status_kb("VmPin:") == 0, "VmPin %ld kB after the transfer", proc_status_kb("VmPin:"));
	r = xfer_same(fd, flags, buf, 16 * PAGE, 2);
	CHECK(r == 0, "16 pages named by two DPUs' blocks: %s", strerror(r));
	CHECK(sync_rank(fd) == 0);
	CHECK(proc_status_kb("VmPin:") == 0, "VmPin %ld kB after the transfer", proc_status_kb("VmPin:"));
	CHECK(dpu_holds(fd, back, 0, copy, 16 * PAGE));
	CHECK(dpu_holds(fd, back, 1, copy, 16 * PAGE));
	CHECK(sysfs_rank_attr(RANK, "mram_resident_bytes") == 32 * PAGE, "%lld",
	      sysfs_rank_attr(RANK, "mram_resident_bytes"));
	CHECK(proc_status_kb("VmPin:") == 0, "VmPin %ld kB after the read-back", proc_status_kb("VmPin:"));
	CHECK(!close(fd));
	return 0;
}

/* The same from the DPU: 17 pages ENOMEM (host buffer untouched), 16 work. */
static int memlock_from_dpu(uint32_t flags)
{
	uint8_t *buf = map_pages(17), *src = map_pages(8);
	size_t i;
	int fd, r;

	for (i = 0; i < 8 * PAGE; i++)
		src[i] = (uint8_t)(i * 7 + 1);
	memset(buf, 0xee, 17 * PAGE);
	drop(true, SMALL_LIMIT);
	fd = open_rank();
	/* DPU 0 holds src in its first two halves of 16 pages */
	CHECK(xfer_same(fd, 0, src, 8 * PAGE, 1) == 0);
	{
		struct dpusim_xfer_dpu d = { .dpu = 0, .nr_blocks = 1 };
		struct dpusim_block b = { (uintptr_t)src, 8 * PAGE };
		struct dpusim_xfer x = {
			.size = sizeof(x), .offset = 8 * PAGE, .length = 8 * PAGE,
			.nr_dpus = 1, .nr_blocks = 1,
			.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
		};

		CHECK(!xfer(fd, &x), "%s", strerror(errno));
	}
	r = xfer_same(fd, DPUSIM_XFER_FROM_DPU | flags, buf, 17 * PAGE, 1);
	CHECK(r == ENOMEM, "17 pages under a 16-page limit: %s", strerror(r));
	CHECK(sync_rank(fd) == 0);
	for (i = 0; i < 17 * PAGE; i++)
		CHECK(buf[i] == 0xee, "the refused transfer wrote byte %zu", i);
	CHECK(proc_status_kb("VmPin:") == 0, "VmPin %ld kB", proc_status_kb("VmPin:"));
	r = xfer_same(fd, DPUSIM_XFER_FROM_DPU | flags, buf, 16 * PAGE, 1);
	CHECK(r == 0, "16 pages under a 16-page limit: %s", strerror(r));
	CHECK(sync_rank(fd) == 0);
	CHECK(!memcmp(buf, src, 8 * PAGE) && !memcmp(buf + 8 * PAGE, src, 8 * PAGE));
	CHECK(buf[16 * PAGE] == 0xee);
	CHECK(proc_status_kb("VmPin:") == 0, "VmPin %ld kB", proc_status_kb("VmPin:"));
	CHECK(!close(fd));
	return 0;
}

static int child_memlock_sync_to(void) { return memlock_to_dpu(0); }
static int child_memlock_async_to(void) { return memlock_to_dpu(DPUSIM_XFER_ASYNC); }
static int child_memlock_sync_from(void) { return memlock_from_dpu(0); }
static int child_memlock_async_from(void) { return memlock_from_dpu(DPUSIM_XFER_ASYNC); }

/*
 * 1 MiB to 16 DPUs, all 16 blocks the same 1 MiB buffer, queued, under an
 * 8 MiB limit: 256 distinct pages (1 MiB), not 16 MiB.
 */
static int child_broadcast(void)
{
	uint8_t *buf = map_pages(BCAST_LEN / PAGE), *back = map_pages(8);
	long pin;
	size_t i;
	int fd, r;

	for (i = 0; i < BCAST_LEN; i++)
		buf[i] = (uint8_t)(i * 29 + (i >> 12));
	drop(true, BCAST_LIMIT);
	fd = open_rank();
	r = xfer_same(fd, DPUSIM_XFER_ASYNC, buf, BCAST_LEN, BCAST_DPUS);
	CHECK(r == 0, "1 MiB async broadcast to %d DPUs from one buffer under an %lu MiB RLIMIT_MEMLOCK: %s",
	      BCAST_DPUS, BCAST_LIMIT >> 20, strerror(r));
	pin = proc_status_kb("VmPin:");
	CHECK(pin == 0 || pin == (long)(BCAST_LEN >> 10),
	      "VmPin %ld kB while queued (1 MiB of distinct pages)", pin);
	CHECK(sync_rank(fd) == 0);
	CHECK(proc_status_kb("VmPin:") == 0, "VmPin %ld kB after SYNC", proc_status_kb("VmPin:"));
	CHECK(sysfs_rank_attr(RANK, "mram_resident_bytes") ==
	      (long long)BCAST_DPUS * BCAST_LEN);
	CHECK(dpu_holds(fd, back, 0, buf, BCAST_LEN));
	CHECK(dpu_holds(fd, back, BCAST_DPUS - 1, buf, BCAST_LEN));
	/* the same synchronously */
	r = xfer_same(fd, 0, buf, BCAST_LEN, BCAST_DPUS);
	CHECK(r == 0, "synchronous broadcast: %s", strerror(r));
	CHECK(proc_status_kb("VmPin:") == 0, "VmPin %ld kB", proc_status_kb("VmPin:"));
	CHECK(!close(fd));
	return 0;
}

/* --------------------------------------------------------- parent side */

/* Run @fn in a child; 0 if it passed, else its status (logged). */
static int in_child(struct __test_metadata *_metadata, const char *name,
		    int (*fn)(void))
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		child_test = name;
		_exit(fn());
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status)) {
		TH_LOG("child killed by signal %d", WTERMSIG(status));
		return -1;
	}
	return WEXITSTATUS(status);
}

FIXTURE(node)
{
	struct stat orig;
	bool changed;
};

FIXTURE_SETUP(node)
{
	self->changed = false;
	if (geteuid() != 0)
		SKIP(return, "needs root to give %s a test group", NODE);
	if (stat(NODE, &self->orig))
		SKIP(return, "no %s", NODE);
	ASSERT_EQ(0, sysfs_rank_attr(RANK, "is_owned")) TH_LOG("%s is in use", NODE);
	ASSERT_EQ(0, chown(NODE, 0, GID));
	self->changed = true;
	ASSERT_EQ(0, chmod(NODE, 0660));
}

FIXTURE_TEARDOWN(node)
{
	struct stat st;

	if (!self->changed)
		return;
	EXPECT_EQ(0, chown(NODE, self->orig.st_uid, self->orig.st_gid));
	EXPECT_EQ(0, chmod(NODE, self->orig.st_mode & 07777));
	/* the node is as it was */
	ASSERT_EQ(0, stat(NODE, &st));
	EXPECT_EQ(self->orig.st_uid, st.st_uid);
	EXPECT_EQ(self->orig.st_gid, st.st_gid);
	EXPECT_EQ(self->orig.st_mode, st.st_mode);
}

#define CHILD_TEST(name, fn)						\
TEST_F_TIMEOUT(node, name, 300)					\
{									\
	EXPECT_EQ(0, in_child(_metadata, #name, fn));			\
	EXPECT_EQ(0, sysfs_rank_attr(RANK, "is_owned"));		\
}

CHILD_TEST(without_group_open_is_eacces, child_no_group)
CHILD_TEST(with_group_open_works, child_group_open)
CHILD_TEST(memlock_sync_to_dpu, child_memlock_sync_to)
CHILD_TEST(memlock_async_to_dpu, child_memlock_async_to)
CHILD_TEST(memlock_sync_from_dpu, child_memlock_sync_from)
CHILD_TEST(memlock_async_from_dpu, child_memlock_async_from)
CHILD_TEST(async_broadcast_1mib_16_dpus_under_8mib, child_broadcast)

TEST_HARNESS_MAIN
