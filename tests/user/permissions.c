// SPDX-License-Identifier: GPL-2.0
/*
 * The rank nodes as an unprivileged user would meet them (tools/udev:
 * root:dpusim 0660).  As root the test gives /dev/dpusim/rank1 a test
 * group, then in children that drop to an unused uid:
 *  - without the group, open() is EACCES; with it, a read-only node is
 *    EACCES for O_RDWR;
 *  - with the group, the rank works, and RLIMIT_MEMLOCK applies to the
 *    pages transfers pin (ENOMEM over it, nothing changed), counted once
 *    per distinct page: a 1 MiB broadcast to 16 DPUs from one buffer
 *    fits in 8 MiB; VmPin is back to 0 afterwards.
 * The node's owner and mode are restored at the end.
 */
#include <grp.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define NODE	RANK_PATH(1)
#define GID	4242
#define UID	4243
#define PAGE	4096UL

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

/* Become uid UID, with the test group as a supplementary group or not. */
static int drop(bool with_group, rlim_t memlock)
{
	gid_t g = GID;
	struct rlimit rl = { memlock, memlock };

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return -1;
	if (setgroups(with_group ? 1 : 0, &g) || setresgid(UID, UID, UID) ||
	    setresuid(UID, UID, UID))
		return -1;
	return getuid() == UID && geteuid() == UID ? 0 : -1;
}

/* Run @fn in a child; its exit status (0: pass). */
static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn());
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

FIXTURE(node)
{
	struct stat orig;
};

FIXTURE_SETUP(node)
{
	if (getuid() != 0)
		SKIP(return, "needs root to set up the node's group");
	ASSERT_EQ(0, stat(NODE, &self->orig));
	ASSERT_EQ(0, chown(NODE, 0, GID));
	ASSERT_EQ(0, chmod(NODE, 0660));
}

FIXTURE_TEARDOWN(node)
{
	if (getuid() == 0) {
		chown(NODE, self->orig.st_uid, self->orig.st_gid);
		chmod(NODE, self->orig.st_mode & 07777);
	}
}

static int open_without_group(void)
{
	if (drop(false, 0))
		return 10;
	if (open(NODE, O_RDWR | O_CLOEXEC) != -1)
		return 11;
	return errno == EACCES ? 0 : 12;
}

TEST_F(node, no_group_no_access)
{
	EXPECT_EQ(0, in_child(open_without_group));
	EXPECT_EQ(0, sysfs_rank_attr(1, "is_owned"));
}

static int open_read_only_node(void)
{
	if (drop(true, 0))
		return 10;
	if (open(NODE, O_RDWR | O_CLOEXEC) != -1)
		return 11;
	return errno == EACCES ? 0 : 12;
}

TEST_F(node, group_read_only_node_no_rdwr)
{
	ASSERT_EQ(0, chmod(NODE, 0640));
	EXPECT_EQ(0, in_child(open_read_only_node));
}

/* Transfers from a buffer of @pages pages to DPU 0; 0 or errno. */
static int to_dpu(int fd, uint8_t *buf, unsigned long pages, uint32_t flags)
{
	struct dpusim_xfer_dpu d = { .dpu = 0, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)buf, pages * PAGE };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = flags, .length = pages * PAGE,
		.nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};

	return xfer(fd, &x) ? errno : 0;
}

static int sync_rank(int fd)
{
	struct dpusim_sync s = { .size = sizeof(s) };

	return ioctl(fd, DPUSIM_IOCTL_SYNC, &s) ? errno : 0;
}

static int memlock_applies(void)
{
	struct dpusim_rank_info info = { .size = sizeof(info) };
	uint8_t *buf = mmap(NULL, 32 * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	int fd;

	if (buf == MAP_FAILED || drop(true, 16 * PAGE))
		return 10;
	fd = open(NODE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 11;
	if (ioctl(fd, DPUSIM_IOCTL_RANK_INFO, &info) || info.rank_index != 1)
		return 12;
	memset(buf, 0x3c, 32 * PAGE);
	if (to_dpu(fd, buf, 32, 0) != ENOMEM)
		return 13;
	if (to_dpu(fd, buf, 32, DPUSIM_XFER_ASYNC) != ENOMEM)
		return 14;
	if (sysfs_rank_attr(1, "mram_resident_bytes") != 0 || vm_pin_kb() != 0)
		return 15;	/* nothing changed */
	if (to_dpu(fd, buf, 16, 0) || to_dpu(fd, buf, 16, DPUSIM_XFER_ASYNC))
		return 16;	/* at the limit */
	if (sync_rank(fd) || vm_pin_kb() != 0)
		return 17;
	return sysfs_rank_attr(1, "mram_resident_bytes") == 16 * PAGE ? 0 : 18;
}

TEST_F(node, group_access_memlock_applies)
{
	EXPECT_EQ(0, in_child(memlock_applies));
}

/*
 * 1 MiB to 16 DPUs, every block the same buffer, queued: 256 distinct
 * pages, charged once (1 MiB), within an 8 MiB limit.
 */
static int broadcast_charged_once(void)
{
	const unsigned long len = 1 << 20;
	struct dpusim_xfer_dpu d[16];
	struct dpusim_block b[16];
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_ASYNC, .length = len,
		.nr_dpus = 16, .nr_blocks = 16,
		.dpus = (uintptr_t)d, .blocks = (uintptr_t)b,
	};
	uint8_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	long pin;
	int fd, i;

	if (buf == MAP_FAILED || drop(true, 8 << 20))
		return 10;
	fd = open(NODE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 11;
	for (i = 0; i < 16; i++) {
		d[i] = (struct dpusim_xfer_dpu){ .dpu = i, .nr_blocks = 1 };
		b[i] = (struct dpusim_block){ (uintptr_t)buf, len };
	}
	if (xfer(fd, &x))
		return 12;
	pin = vm_pin_kb();
	if (pin != 0 && pin != 1024)	/* 0 once the copy is done */
		return 13;
	if (sync_rank(fd) || vm_pin_kb() != 0)
		return 14;
	return sysfs_rank_attr(1, "mram_resident_bytes") == 16 * (long long)len ? 0 : 15;
}

TEST_F(node, broadcast_charged_once_per_page)
{
	EXPECT_EQ(0, in_child(broadcast_charged_once));
}

TEST_HARNESS_MAIN
