// SPDX-License-Identifier: GPL-2.0
/*
 * ABI tests of the rank device, through /dev/dpusim/rank<N>: the info
 * ioctl's size-versioned struct rules (one test per failure path), the
 * one-owner rule and the sysfs attributes.
 */
#include <stddef.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

FIXTURE(rank) {
	int fd;
};

FIXTURE_SETUP(rank)
{
	self->fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", RANK_PATH(0), strerror(errno));
}

FIXTURE_TEARDOWN(rank)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(rank, info)
{
	struct dpusim_rank_info info = { .size = sizeof(info) };

	ASSERT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, &info));
	EXPECT_EQ(DPUSIM_ABI_VERSION, info.abi_version);
	EXPECT_EQ(0, info.rank_index);
	EXPECT_EQ(sysfs_rank_attr(0, "nr_dpus"), info.nr_dpus);
	EXPECT_EQ(sysfs_rank_attr(0, "mram_size"), (long long)info.mram_size);
	EXPECT_EQ(sysfs_rank_attr(0, "wram_size"), info.wram_size);
	EXPECT_EQ(0, info.flags);
}

TEST_F(rank, info_other_rank_index)
{
	struct dpusim_rank_info info = { .size = sizeof(info) };
	int fd = open(RANK_PATH(1), O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, DPUSIM_IOCTL_RANK_INFO, &info));
	EXPECT_EQ(1, info.rank_index);
	close(fd);
}

/* A size below the first version of the struct. */
TEST_F(rank, info_short_struct)
{
	struct dpusim_rank_info info = {
		.size = offsetofend(struct dpusim_rank_info, mram_size) - 1,
	};

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, &info));
}

TEST_F(rank, info_size_zero)
{
	struct dpusim_rank_info info = { .size = 0 };

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, &info));
}

/* A newer user's longer struct whose new fields are zero: accepted. */
TEST_F(rank, info_long_struct_zero_tail)
{
	struct {
		struct dpusim_rank_info info;
		uint64_t future[4];
	} cmd = { .info.size = sizeof(cmd) };

	ASSERT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, &cmd));
	EXPECT_EQ(DPUSIM_ABI_VERSION, cmd.info.abi_version);
	/* The kernel writes back only what it knows... */
	EXPECT_EQ(sizeof(cmd.info), cmd.info.size);
	/* ...and leaves the tail alone. */
	EXPECT_EQ(0, cmd.future[0] | cmd.future[3]);
}

/* A longer struct with a non-zero byte the kernel does not know. */
TEST_F(rank, info_long_struct_nonzero_tail)
{
	struct {
		struct dpusim_rank_info info;
		uint8_t extra;
	} cmd = { .info.size = sizeof(cmd.info) + 1, .extra = 0xff };

	EXPECT_ERRNO(E2BIG, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, &cmd));
}

TEST_F(rank, info_bad_flags)
{
	struct dpusim_rank_info info = { .size = sizeof(info), .flags = 1 };

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, &info));
	info.flags = 0x80000000u;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, &info));
}

TEST_F(rank, info_bad_pointer)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *map;

	EXPECT_ERRNO(EFAULT, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, NULL));

	/* An unmapped page. */
	map = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map, page));
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, map));

	/* A read-only struct: the kernel cannot write the answer back. */
	map = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	((struct dpusim_rank_info *)map)->size = sizeof(struct dpusim_rank_info);
	ASSERT_EQ(0, mprotect(map, page, PROT_READ));
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, map));
	munmap(map, page);
}

TEST_F(rank, unknown_command)
{
	struct dpusim_rank_info info = { .size = sizeof(info) };

	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IO(DPUSIM_TYPE, DPUSIM_CMD_BASE + 0x7f), &info));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IO(DPUSIM_TYPE, DPUSIM_CMD_BASE - 1), &info));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IO(DPUSIM_TYPE + 1, DPUSIM_CMD_RANK_INFO), &info));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IOWR(DPUSIM_TYPE, DPUSIM_CMD_RANK_INFO,
						   struct dpusim_rank_info), &info));
}

TEST_F(rank, second_open_busy)
{
	errno = 0;
	EXPECT_EQ(-1, open(RANK_PATH(0), O_RDWR | O_CLOEXEC));
	EXPECT_EQ(EBUSY, errno);
}

/* Another process cannot take the rank either. */
TEST_F(rank, other_process_busy)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open(RANK_PATH(0), O_RDWR);

		_exit(fd < 0 && errno == EBUSY ? 0 : 1);
	}
	EXPECT_EQ(0, child_exit_status(pid));
}

TEST_F(rank, sysfs_owner)
{
	EXPECT_EQ(1, sysfs_rank_attr(0, "is_owned"));
	EXPECT_EQ(getpid(), sysfs_rank_attr(0, "owner_pid"));
	EXPECT_EQ(0, sysfs_rank_attr(1, "is_owned"));
	EXPECT_EQ(0, sysfs_rank_attr(1, "owner_pid"));
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, sysfs_rank_attr(0, "is_owned"));
	EXPECT_EQ(0, sysfs_rank_attr(0, "owner_pid"));
}

TEST_F(rank, close_releases)
{
	close(self->fd);
	self->fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
}

TEST_F(rank, not_seekable)
{
	EXPECT_ERRNO(ESPIPE, lseek(self->fd, 0, SEEK_SET));
}

TEST(sysfs_geometry)
{
	unsigned int r;

	for (r = 0; r < 4; r++) {
		EXPECT_LT(0, sysfs_rank_attr(r, "nr_dpus"));
		EXPECT_LT(0, sysfs_rank_attr(r, "mram_size"));
		EXPECT_LT(0, sysfs_rank_attr(r, "wram_size"));
	}
	EXPECT_EQ(-1, sysfs_rank_attr(r, "nr_dpus"));
}

TEST(devnode_mode)
{
	EXPECT_EQ(0, access(RANK_PATH(3), R_OK | W_OK));
	EXPECT_EQ(-1, access("/dev/dpusim/rank4", F_OK));
}

TEST_HARNESS_MAIN
