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

/*
 * Every ioctl of the rank file, with its struct: the size field is bounded
 * by a page (UCMD_MAX_SIZE) in the dispatcher, before any struct is read.
 */
static const struct rank_cmd {
	unsigned long cmd;
	size_t size;
	const char *name;
} rank_cmds[] = {
	{ DPUSIM_IOCTL_RANK_INFO, sizeof(struct dpusim_rank_info), "RANK_INFO" },
	{ DPUSIM_IOCTL_XFER, sizeof(struct dpusim_xfer), "XFER" },
	{ DPUSIM_IOCTL_SYNC, sizeof(struct dpusim_sync), "SYNC" },
	{ DPUSIM_IOCTL_LAUNCH, sizeof(struct dpusim_launch), "LAUNCH" },
	{ DPUSIM_IOCTL_DPU_STATUS, sizeof(struct dpusim_dpu_status),
	  "DPU_STATUS" },
	{ DPUSIM_IOCTL_WORKER_OPEN, sizeof(struct dpusim_worker_open),
	  "WORKER_OPEN" },
	{ DPUSIM_IOCTL_STREAM_CREATE, sizeof(struct dpusim_stream_create),
	  "STREAM_CREATE" },
	{ DPUSIM_IOCTL_STREAM_OPEN, sizeof(struct dpusim_stream_cmd),
	  "STREAM_OPEN" },
	{ DPUSIM_IOCTL_STREAM_CLOSE, sizeof(struct dpusim_stream_cmd),
	  "STREAM_CLOSE" },
	{ DPUSIM_IOCTL_STREAM_SEEK, sizeof(struct dpusim_stream_cmd),
	  "STREAM_SEEK" },
};

/* A page and one byte, the tail all zeros: E2BIG, whatever it holds. */
TEST_F(rank, size_over_page_zero_tail)
{
	const struct rank_cmd *c;
	int ret;

	for (c = rank_cmds; c < rank_cmds + ARRAY_SIZE(rank_cmds); c++) {
		errno = 0;
		ret = ioctl_sized(self->fd, c->cmd, UCMD_MAX_SIZE + 1, 0,
				  c->size, false);
		EXPECT_EQ(-1, ret) TH_LOG("%s", c->name);
		EXPECT_EQ(E2BIG, errno) TH_LOG("%s: %s", c->name, strerror(errno));
	}
}

/* A page exactly, the tail all zeros: read as before. */
TEST_F(rank, size_page_zero_tail)
{
	const struct rank_cmd *c;
	struct {
		struct dpusim_rank_info info;
		uint8_t tail[UCMD_MAX_SIZE - sizeof(struct dpusim_rank_info)];
	} cmd = { .info.size = UCMD_MAX_SIZE };

	ASSERT_EQ(UCMD_MAX_SIZE, sizeof(cmd));
	ASSERT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, &cmd));
	EXPECT_EQ(DPUSIM_ABI_VERSION, cmd.info.abi_version);
	EXPECT_EQ(sizeof(cmd.info), cmd.info.size);
	/* the others: what their zero fields give, never E2BIG */
	for (c = rank_cmds; c < rank_cmds + ARRAY_SIZE(rank_cmds); c++) {
		errno = 0;
		if (ioctl_sized(self->fd, c->cmd, UCMD_MAX_SIZE, 0, c->size,
				false))
			EXPECT_NE(E2BIG, errno) TH_LOG("%s", c->name);
	}
}

/*
 * The largest size field, nothing mapped past the struct: E2BIG, and no
 * byte of the tail read (a scan would fault at once: EFAULT), so a call
 * costs no scan of up to 4 GiB for non-zero bytes.
 */
TEST_F(rank, size_max_not_scanned)
{
	const struct rank_cmd *c;
	int ret;

	for (c = rank_cmds; c < rank_cmds + ARRAY_SIZE(rank_cmds); c++) {
		errno = 0;
		ret = ioctl_sized(self->fd, c->cmd, UINT32_MAX, 0, c->size,
				  true);
		EXPECT_EQ(-1, ret) TH_LOG("%s", c->name);
		EXPECT_EQ(E2BIG, errno) TH_LOG("%s: %s", c->name, strerror(errno));
	}
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
