// SPDX-License-Identifier: GPL-2.0
/*
 * Integration tests of libdpusim's set allocation through the real rank
 * devices (default module: 4 ranks x 64 DPUs): dpu_alloc, dpu_alloc_ranks,
 * DPU_ALLOCATE_ALL, ranks owned by another open file, dpu_free,
 * DPU_FOREACH / DPU_RANK_FOREACH, disabled DPUs, bad profiles.
 */
#include <dpu.h>

#include "kselftest_harness.h"
#include "common.h"

#define HEAP DPU_MRAM_HEAP_POINTER_NAME

static int owned_ranks(void)
{
	int r, n = 0;

	for (r = 0; r < 4; r++)
		n += sysfs_rank_attr(r, "is_owned") == 1;
	return n;
}

TEST(alloc_one_rank)
{
	struct dpu_set_t set, dpu;
	uint32_t n, i, count = 0;

	ASSERT_EQ(DPU_OK, dpu_alloc(64, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_get_nr_dpus(set, &n));
	EXPECT_EQ(64, n);
	ASSERT_EQ(DPU_OK, dpu_get_nr_ranks(set, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(1, sysfs_rank_attr(0, "is_owned"));
	EXPECT_EQ(getpid(), sysfs_rank_attr(0, "owner_pid"));
	DPU_FOREACH(set, dpu, i) {
		EXPECT_EQ(count, i);
		count++;
	}
	EXPECT_EQ(64, count);
	ASSERT_EQ(DPU_OK, dpu_free(set));
	EXPECT_EQ(0, owned_ranks());
}

/* 100 DPUs: two ranks, the last 28 DPUs of the second disabled. */
TEST(alloc_partial_rank)
{
	struct dpu_set_t set, dpu, rank;
	uint32_t n, i, r, per_rank[2] = { 0, 0 };
	uint64_t v = 0x99;
	long long bytes;

	ASSERT_EQ(DPU_OK, dpu_alloc(100, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_get_nr_dpus(set, &n));
	EXPECT_EQ(100, n);
	ASSERT_EQ(DPU_OK, dpu_get_nr_ranks(set, &n));
	EXPECT_EQ(2, n);
	EXPECT_EQ(2, owned_ranks());
	n = 0;
	DPU_FOREACH(set, dpu, i)
		n++;
	EXPECT_EQ(100, n);
	DPU_RANK_FOREACH(set, rank, r) {
		ASSERT_LT(r, 2);
		DPU_FOREACH(rank, dpu)
			per_rank[r]++;
	}
	EXPECT_EQ(64, per_rank[0]);
	EXPECT_EQ(36, per_rank[1]);
	/* transfers skip the disabled DPUs */
	bytes = sysfs_rank_attr(1, "xfer_bytes_to_dpu");
	ASSERT_EQ(DPU_OK, dpu_broadcast_to(set, HEAP, 0, &v, 8, DPU_XFER_DEFAULT));
	EXPECT_EQ(bytes + 36 * 8, sysfs_rank_attr(1, "xfer_bytes_to_dpu"));
	ASSERT_EQ(DPU_OK, dpu_free(set));
	EXPECT_EQ(0, owned_ranks());
}

TEST(alloc_ranks_two)
{
	struct dpu_set_t set;
	uint32_t n;

	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_get_nr_dpus(set, &n));
	EXPECT_EQ(128, n);
	EXPECT_EQ(2, owned_ranks());
	ASSERT_EQ(DPU_OK, dpu_free(set));
}

TEST(alloc_all)
{
	struct dpu_set_t set;
	uint32_t n;

	ASSERT_EQ(DPU_OK, dpu_alloc(DPU_ALLOCATE_ALL, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_get_nr_dpus(set, &n));
	EXPECT_EQ(256, n);
	EXPECT_EQ(4, owned_ranks());
	ASSERT_EQ(DPU_OK, dpu_free(set));

	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(DPU_ALLOCATE_ALL, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_get_nr_ranks(set, &n));
	EXPECT_EQ(4, n);
	ASSERT_EQ(DPU_OK, dpu_free(set));
	EXPECT_EQ(0, owned_ranks());
}

/* A rank owned by another open file is skipped. */
TEST(alloc_skips_busy_rank)
{
	struct dpu_set_t set;
	int fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	uint32_t n, r;

	ASSERT_LE(0, fd);
	ASSERT_EQ(DPU_OK, dpu_alloc(DPU_ALLOCATE_ALL, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_get_nr_ranks(set, &n));
	EXPECT_EQ(3, n);
	for (r = 1; r < 4; r++)
		EXPECT_EQ(1, sysfs_rank_attr(r, "is_owned"));
	ASSERT_EQ(DPU_OK, dpu_free(set));

	ASSERT_EQ(DPU_OK, dpu_alloc(64, NULL, &set));	/* rank 1 */
	EXPECT_EQ(1, sysfs_rank_attr(1, "is_owned"));
	ASSERT_EQ(DPU_OK, dpu_free(set));
	close(fd);
}

/* All ranks busy (another set): DPU_ERR_ALLOCATION, nothing kept open. */
TEST(alloc_all_busy)
{
	struct dpu_set_t holder, set;

	ASSERT_EQ(DPU_OK, dpu_alloc(DPU_ALLOCATE_ALL, NULL, &holder));
	EXPECT_EQ(DPU_ERR_ALLOCATION, dpu_alloc(1, NULL, &set));
	EXPECT_EQ(DPU_ERR_ALLOCATION, dpu_alloc_ranks(1, NULL, &set));
	EXPECT_EQ(DPU_ERR_ALLOCATION, dpu_alloc(DPU_ALLOCATE_ALL, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_free(holder));
	EXPECT_EQ(0, owned_ranks());
}

/* Another process owns a rank. */
TEST(alloc_other_process)
{
	int p[2];
	pid_t pid;
	char c;
	struct dpu_set_t set;
	uint32_t n;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct dpu_set_t s;

		close(p[0]);
		if (dpu_alloc_ranks(3, NULL, &s) != DPU_OK)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &c, 1));
	EXPECT_EQ(DPU_ERR_ALLOCATION, dpu_alloc_ranks(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_alloc(DPU_ALLOCATE_ALL, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_get_nr_ranks(set, &n));
	EXPECT_EQ(1, n);
	ASSERT_EQ(DPU_OK, dpu_free(set));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(p[0]);
	EXPECT_EQ(0, owned_ranks());
}

TEST(alloc_too_many)
{
	struct dpu_set_t set;

	EXPECT_EQ(DPU_ERR_ALLOCATION, dpu_alloc(257, NULL, &set));
	EXPECT_EQ(DPU_ERR_ALLOCATION, dpu_alloc_ranks(5, NULL, &set));
	EXPECT_EQ(DPU_ERR_ALLOCATION, dpu_alloc(0, NULL, &set));
	EXPECT_EQ(0, owned_ranks());
}

TEST(alloc_invalid_profile)
{
	struct dpu_set_t set;

	EXPECT_EQ(DPU_ERR_INVALID_PROFILE, dpu_alloc(64, "noSuchKey=1", &set));
	EXPECT_EQ(DPU_ERR_INVALID_PROFILE, dpu_alloc(64, "sgXferEnable=maybe", &set));
	EXPECT_EQ(DPU_ERR_INVALID_PROFILE, dpu_alloc(64, "sgXferMaxBlocksPerDpu=8", &set));
	EXPECT_EQ(DPU_ERR_INVALID_PROFILE, dpu_alloc_ranks(1, "sgXferEnable", &set));
	EXPECT_EQ(0, owned_ranks());
	/* blanks are trimmed (UPMEM would silently ignore the second key) */
	ASSERT_EQ(DPU_OK, dpu_alloc(64, "backend=hw, sgXferEnable=true", &set));
	ASSERT_EQ(DPU_OK, dpu_free(set));
}

TEST(free_subsets_refused)
{
	struct dpu_set_t set, rank, dpu;

	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(2, NULL, &set));
	DPU_RANK_FOREACH(set, rank)
		EXPECT_EQ(DPU_ERR_INVALID_DPU_SET, dpu_free(rank));
	DPU_FOREACH(set, dpu)
		EXPECT_EQ(DPU_ERR_INVALID_DPU_SET, dpu_free(dpu));
	EXPECT_EQ(2, owned_ranks());
	ASSERT_EQ(DPU_OK, dpu_free(set));
	EXPECT_EQ(0, owned_ranks());
}

/* A freed rank can be allocated again, and its MRAM reads as zeros. */
TEST(free_then_realloc_zeroed)
{
	struct dpu_set_t set, dpu;
	uint64_t v = 0xfeed, back = 1;

	ASSERT_EQ(DPU_OK, dpu_alloc(64, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_broadcast_to(set, HEAP, 0, &v, 8, DPU_XFER_DEFAULT));
	ASSERT_EQ(DPU_OK, dpu_free(set));
	EXPECT_EQ(0, sysfs_rank_attr(0, "mram_resident_bytes"));
	ASSERT_EQ(DPU_OK, dpu_alloc(64, NULL, &set));
	DPU_FOREACH(set, dpu) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, HEAP, 0, &back, 8));
		ASSERT_EQ(0, back);
	}
	ASSERT_EQ(DPU_OK, dpu_free(set));
}

TEST_HARNESS_MAIN
