// SPDX-License-Identifier: GPL-2.0
/*
 * ABI tests of DPUSIM_IOCTL_XFER through /dev/dpusim/rank0: the struct
 * rules and one test per failure path of uapi/dpusim.h, plus what a
 * failing call leaves behind (nothing).
 */
#include <stddef.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "common.h"

#define LEN 4096

FIXTURE(xfer) {
	int fd;
	struct two_dpu_xfer t;
};

FIXTURE_SETUP(xfer)
{
	self->fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open: %s", strerror(errno));
	/* DPU 5 and DPU 9 of the rank, one block each. */
	ASSERT_EQ(0, two_dpu_xfer_init(&self->t, 5, 9, 8192, LEN, 0));
}

FIXTURE_TEARDOWN(xfer)
{
	two_dpu_xfer_free(&self->t);
	if (self->fd >= 0)
		close(self->fd);
}

/* Read DPU @dpu's [8192, 8192 + LEN) into @out. */
static int read_back(int fd, uint32_t dpu, uint8_t *out)
{
	struct dpusim_xfer_dpu d = { .dpu = dpu, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)out, LEN };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_FROM_DPU,
		.offset = 8192, .length = LEN, .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};

	return xfer(fd, &x);
}

static long long rank0_attr(const char *a)
{
	return sysfs_rank_attr(0, a);
}

TEST_F(xfer, round_trip_and_counters)
{
	long long ioctls = rank0_attr("xfer_ioctls");
	long long to = rank0_attr("xfer_bytes_to_dpu");
	long long from = rank0_attr("xfer_bytes_from_dpu");

	ASSERT_EQ(0, xfer(self->fd, &self->t.x));
	ASSERT_EQ(0, read_back(self->fd, 9, self->t.dst));
	EXPECT_EQ(0, memcmp(self->t.dst, self->t.src + LEN, LEN));
	ASSERT_EQ(0, read_back(self->fd, 5, self->t.dst));
	EXPECT_EQ(0, memcmp(self->t.dst, self->t.src, LEN));
	EXPECT_EQ(ioctls + 3, rank0_attr("xfer_ioctls"));
	EXPECT_EQ(to + 2 * LEN, rank0_attr("xfer_bytes_to_dpu"));
	EXPECT_EQ(from + 2 * LEN, rank0_attr("xfer_bytes_from_dpu"));
	EXPECT_EQ(2 * 4096, rank0_attr("mram_resident_bytes"));
}

/* Holes read as zeros and reading allocates nothing. */
TEST_F(xfer, sparse_reads_zero)
{
	ASSERT_EQ(0, read_back(self->fd, 63, self->t.dst));
	EXPECT_EQ(0, self->t.dst[0]);
	EXPECT_EQ(0, memcmp(self->t.dst, self->t.dst + 1, LEN - 1));
	EXPECT_EQ(0, rank0_attr("mram_resident_bytes"));
}

/* Closing the rank frees its memory: the next owner sees zeros. */
TEST_F(xfer, reopen_sees_zeros)
{
	ASSERT_EQ(0, xfer(self->fd, &self->t.x));
	EXPECT_LT(0, rank0_attr("mram_resident_bytes"));
	close(self->fd);
	EXPECT_EQ(0, rank0_attr("mram_resident_bytes"));
	self->fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, read_back(self->fd, 5, self->t.dst));
	EXPECT_EQ(0, self->t.dst[0]);
	EXPECT_EQ(0, memcmp(self->t.dst, self->t.dst + 1, LEN - 1));
}

#define EXPECT_FAILS_CLEAN(err)						\
	do {								\
		long long n = rank0_attr("xfer_ioctls");		\
		EXPECT_ERRNO(err, xfer(self->fd, &self->t.x));		\
		EXPECT_EQ(n, rank0_attr("xfer_ioctls"));		\
		EXPECT_EQ(0, rank0_attr("mram_resident_bytes"));	\
	} while (0)

TEST_F(xfer, short_struct)
{
	self->t.x.size = offsetofend(struct dpusim_xfer, blocks) - 1;
	EXPECT_FAILS_CLEAN(EINVAL);
}

TEST_F(xfer, long_struct_zero_tail)
{
	struct {
		struct dpusim_xfer x;
		uint64_t future;
	} cmd = { .x = self->t.x, .future = 0 };

	cmd.x.size = sizeof(cmd);
	EXPECT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_XFER, &cmd));
}

TEST_F(xfer, long_struct_nonzero_tail)
{
	struct {
		struct dpusim_xfer x;
		uint64_t future;
	} cmd = { .x = self->t.x, .future = 1 };

	cmd.x.size = sizeof(cmd);
	EXPECT_ERRNO(E2BIG, ioctl(self->fd, DPUSIM_IOCTL_XFER, &cmd));
	EXPECT_EQ(0, rank0_attr("mram_resident_bytes"));
}

TEST_F(xfer, bad_struct_pointer)
{
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, DPUSIM_IOCTL_XFER, NULL));
}

TEST_F(xfer, unknown_flag)
{
	self->t.x.flags = 1u << 7;
	EXPECT_FAILS_CLEAN(EINVAL);
}

TEST_F(xfer, unaligned_offset)
{
	self->t.x.offset = 8196;
	EXPECT_FAILS_CLEAN(EINVAL);
}

TEST_F(xfer, unaligned_length)
{
	self->t.x.length = LEN - 4;
	self->t.blocks[0].length = self->t.blocks[1].length = LEN - 4;
	EXPECT_FAILS_CLEAN(EINVAL);
}

TEST_F(xfer, more_dpus_than_rank)
{
	self->t.x.nr_dpus = sysfs_rank_attr(0, "nr_dpus") + 1;
	EXPECT_FAILS_CLEAN(E2BIG);
}

TEST_F(xfer, too_many_blocks)
{
	self->t.x.nr_blocks = DPUSIM_XFER_MAX_BLOCKS + 1;
	EXPECT_FAILS_CLEAN(E2BIG);
}

TEST_F(xfer, past_end_of_mram)
{
	self->t.x.offset = sysfs_rank_attr(0, "mram_size") - LEN + 8;
	EXPECT_FAILS_CLEAN(EOVERFLOW);
}

TEST_F(xfer, offset_wraps)
{
	self->t.x.offset = UINT64_MAX - 7;
	EXPECT_FAILS_CLEAN(EOVERFLOW);
}

TEST_F(xfer, past_end_of_wram)
{
	self->t.x.flags = DPUSIM_XFER_WRAM;
	self->t.x.offset = sysfs_rank_attr(0, "wram_size") - 8;
	EXPECT_FAILS_CLEAN(EOVERFLOW);
}

TEST_F(xfer, bad_dpus_pointer)
{
	self->t.x.dpus = 8;
	EXPECT_FAILS_CLEAN(EFAULT);
}

TEST_F(xfer, bad_blocks_pointer)
{
	self->t.x.blocks = 8;
	EXPECT_FAILS_CLEAN(EFAULT);
}

TEST_F(xfer, dpu_out_of_rank)
{
	self->t.dpus[1].dpu = sysfs_rank_attr(0, "nr_dpus");
	EXPECT_FAILS_CLEAN(EINVAL);
}

TEST_F(xfer, dpu_twice)
{
	self->t.dpus[1].dpu = self->t.dpus[0].dpu;
	EXPECT_FAILS_CLEAN(EINVAL);
}

TEST_F(xfer, block_counts_do_not_add_up)
{
	self->t.dpus[1].nr_blocks = 2;
	EXPECT_FAILS_CLEAN(EINVAL);
	self->t.dpus[1].nr_blocks = 0;
	EXPECT_FAILS_CLEAN(EINVAL);
}

/* The second DPU's blocks are short: nothing is written to the first. */
TEST_F(xfer, length_mismatch)
{
	self->t.blocks[1].length = LEN - 8;
	EXPECT_FAILS_CLEAN(EINVAL);
	self->t.blocks[1].length = LEN + 8;
	EXPECT_FAILS_CLEAN(EINVAL);
}

/* With DPUSIM_XFER_NO_LENGTH_CHECK the same call pads with zeros. */
TEST_F(xfer, no_length_check_pads)
{
	self->t.blocks[1].length = 100;
	self->t.x.flags = DPUSIM_XFER_NO_LENGTH_CHECK;
	ASSERT_EQ(0, xfer(self->fd, &self->t.x));
	ASSERT_EQ(0, read_back(self->fd, 9, self->t.dst));
	EXPECT_EQ(0, memcmp(self->t.dst, self->t.src + LEN, 100));
	EXPECT_EQ(0, self->t.dst[100]);
	EXPECT_EQ(0, memcmp(self->t.dst + 100, self->t.dst + 101, LEN - 101));
}

/* An unmapped page in the second DPU's block: nothing written anywhere. */
TEST_F(xfer, bad_block_address)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map + page, page));
	self->t.blocks[1].addr = (uintptr_t)(map + page - 100);
	EXPECT_FAILS_CLEAN(EFAULT);
	self->t.blocks[1].addr = 0;
	EXPECT_FAILS_CLEAN(EFAULT);
	self->t.blocks[1].addr = UINT64_MAX - 100;
	EXPECT_FAILS_CLEAN(EFAULT);
	munmap(map, page);
}

/* From the DPU into a read-only page: EFAULT, the writable one untouched. */
TEST_F(xfer, read_only_destination)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *ro = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);

	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(0, xfer(self->fd, &self->t.x));
	self->t.x.flags = DPUSIM_XFER_FROM_DPU;
	self->t.blocks[0].addr = (uintptr_t)self->t.dst;
	self->t.blocks[1].addr = (uintptr_t)ro;
	EXPECT_ERRNO(EFAULT, xfer(self->fd, &self->t.x));
	EXPECT_EQ(0xee, self->t.dst[0]);
	EXPECT_EQ(0, memcmp(self->t.dst, self->t.dst + 1, LEN - 1));
	munmap(ro, LEN);
	(void)page;
}

/* Over the memory budget: ENOSPC and nothing resident. */
TEST_F(xfer, budget_enospc)
{
	const char *param = "/sys/module/dpusim/parameters/mram_budget";
	char old[64] = "";
	FILE *f = fopen(param, "r");

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(old, sizeof(old), f));
	fclose(f);
	f = fopen(param, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "4096\n");		/* one page; the call needs two */
	fclose(f);

	EXPECT_FAILS_CLEAN(ENOSPC);

	f = fopen(param, "w");
	ASSERT_NE(NULL, f);
	fputs(old, f);
	fclose(f);
	EXPECT_EQ(0, xfer(self->fd, &self->t.x));
}

TEST_HARNESS_MAIN
