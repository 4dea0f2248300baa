// SPDX-License-Identifier: GPL-2.0
/*
 * Module-level tests: unload is refused while a rank is open, the geometry
 * parameters reach sysfs and the info ioctl, bad parameters are refused.
 * Runs last (tests/user/run sorts by name): it reloads dpusim.ko, and
 * leaves it loaded with the default geometry.  Needs DPUSIM_MODDIR (set by
 * tools/vm-run).
 */
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "common.h"

static const char *moddir(void)
{
	const char *d = getenv("DPUSIM_MODDIR");

	return d ? d : "build/module/stock";
}

static int insmod(const char *params)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "insmod %s/dpusim.ko %s 2>/dev/null",
		 moddir(), params);
	return run_cmd(cmd);
}

static int loaded(void)
{
	struct stat st;

	return stat("/sys/module/dpusim", &st) == 0;
}

/* Put the default module back, whatever a test left behind. */
static void restore_default(struct __test_metadata *_metadata)
{
	if (loaded())
		ASSERT_EQ(0, run_cmd("rmmod dpusim"));
	ASSERT_EQ(0, insmod(""));
}

TEST(unload_refused_while_open)
{
	struct dpusim_rank_info info = { .size = sizeof(info) };
	int fd = open(RANK_PATH(2), O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_NE(0, run_cmd("rmmod dpusim 2>/dev/null"));
	EXPECT_TRUE(loaded());
	/* The rank still works after the refused unload. */
	EXPECT_EQ(0, ioctl(fd, DPUSIM_IOCTL_RANK_INFO, &info));
	EXPECT_EQ(2, info.rank_index);
	close(fd);
	EXPECT_EQ(0, run_cmd("rmmod dpusim"));
	EXPECT_FALSE(loaded());
	EXPECT_EQ(-1, access(RANK_PATH(0), F_OK));
	restore_default(_metadata);
}

TEST(geometry_parameters)
{
	struct dpusim_rank_info info = { .size = sizeof(info) };
	int fd;

	ASSERT_EQ(0, run_cmd("rmmod dpusim"));
	ASSERT_EQ(0, insmod("ranks=2 dpus_per_rank=8 mram_size=1048576 wram_size=4096"));
	EXPECT_EQ(8, sysfs_rank_attr(1, "nr_dpus"));
	EXPECT_EQ(1048576, sysfs_rank_attr(1, "mram_size"));
	EXPECT_EQ(4096, sysfs_rank_attr(1, "wram_size"));
	EXPECT_EQ(-1, access(RANK_PATH(2), F_OK));
	fd = open(RANK_PATH(1), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, ioctl(fd, DPUSIM_IOCTL_RANK_INFO, &info));
	EXPECT_EQ(8, info.nr_dpus);
	EXPECT_EQ(1048576, info.mram_size);
	EXPECT_EQ(4096, info.wram_size);
	close(fd);
	restore_default(_metadata);
}

/*
 * Zero padding is bounded per call (hardening finding 3): on a rank of
 * 256 DPUs of 1 GiB, padding 5 DPUs' whole MRAM (5 GiB) is E2BIG with
 * nothing changed, 4 GiB (DPUSIM_XFER_MAX_PAD_BYTES) is allowed, and its
 * cost is that of the resident pages: they are zeroed, holes stay holes.
 */
TEST(padding_bounded_per_call)
{
	struct dpusim_xfer_dpu d[5];
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_NO_LENGTH_CHECK,
		.length = 1ULL << 30, .nr_dpus = 5, .dpus = (uintptr_t)d,
	};
	uint64_t word = 0x0102030405060708ULL, back = 0;
	struct dpusim_xfer_dpu d0 = { .dpu = 0, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)&word, 8 };
	struct dpusim_xfer one = {
		.size = sizeof(one), .length = 8, .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d0, .blocks = (uintptr_t)&b,
	};
	int fd, i;

	ASSERT_EQ(0, run_cmd("rmmod dpusim"));
	ASSERT_EQ(0, insmod("ranks=1 dpus_per_rank=256 mram_size=1073741824"));
	fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	EXPECT_LE(0, fd);
	EXPECT_EQ(0, xfer(fd, &one));
	for (i = 0; i < 5; i++)
		d[i] = (struct dpusim_xfer_dpu){ .dpu = i, .nr_blocks = 0 };
	errno = 0;
	EXPECT_EQ(-1, xfer(fd, &x));	/* not ASSERT: the module is restored */
	EXPECT_EQ(E2BIG, errno);
	one.flags = DPUSIM_XFER_FROM_DPU;
	b.addr = (uintptr_t)&back;
	EXPECT_EQ(0, xfer(fd, &one));
	EXPECT_EQ(word, back);		/* nothing changed */
	x.nr_dpus = 4;
	EXPECT_EQ(0, xfer(fd, &x));
	EXPECT_EQ(0, xfer(fd, &one));
	EXPECT_EQ(0, back);		/* zeroed */
	EXPECT_EQ(4096, sysfs_rank_attr(0, "mram_resident_bytes"));
	close(fd);
	restore_default(_metadata);
}

TEST(defaults)
{
	EXPECT_EQ(64, sysfs_rank_attr(0, "nr_dpus"));
	EXPECT_EQ(64LL << 20, sysfs_rank_attr(0, "mram_size"));
	EXPECT_EQ(64 << 10, sysfs_rank_attr(0, "wram_size"));
	EXPECT_EQ(0, access(RANK_PATH(3), F_OK));
}

/* Each bad parameter is refused, and nothing is left registered. */
TEST(bad_parameters)
{
	static const char *const bad[] = {
		"ranks=0", "ranks=65", "dpus_per_rank=0", "dpus_per_rank=257",
		"mram_size=0", "mram_size=4097", "mram_size=2147483648",
		"wram_size=0", "wram_size=12", "wram_size=2097152",
	};
	unsigned int i;

	ASSERT_EQ(0, run_cmd("rmmod dpusim"));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_NE(0, insmod(bad[i])) TH_LOG("%s was accepted", bad[i]);
		EXPECT_FALSE(loaded()) TH_LOG("%s left the module loaded", bad[i]);
		if (loaded())
			run_cmd("rmmod dpusim");
		EXPECT_EQ(-1, access("/sys/class/dpusim", F_OK));
	}
	restore_default(_metadata);
}

TEST_HARNESS_MAIN
