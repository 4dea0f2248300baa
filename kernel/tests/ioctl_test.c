// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the ioctl dispatcher: the size-versioned struct rules of
 * uapi-rules.md, exercised with real user memory (kunit_vm_mmap).
 */
#include <kunit/test.h>
#include <linux/mman.h>
#include <linux/uaccess.h>

#include "../dpusim.h"

struct dpusim_ioctl_test {
	struct dpusim_rank rank;
	u8 __user *umem;
};

static const struct dpusim_geometry test_geo = {
	.nr_ranks = 1,
	.nr_dpus = 16,
	.mram_size = 2 << 20,
	.wram_size = 8192,
};

static struct dpusim_budget test_budget = { .limit = SZ_1M };

static int dpusim_ioctl_test_init(struct kunit *test)
{
	struct dpusim_ioctl_test *t;
	unsigned long addr;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ(test, dpusim_rank_init(&t->rank, 2, &test_geo,
					       &test_budget), 0);
	test->priv = t;

	addr = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, addr, 0, "no user memory for the test");
	KUNIT_ASSERT_LT(test, addr, (unsigned long)TASK_SIZE);
	t->umem = (u8 __user *)addr;
	return 0;
}

static void dpusim_ioctl_test_exit(struct kunit *test)
{
	struct dpusim_ioctl_test *t = test->priv;

	if (t)			/* NULL if init failed */
		dpusim_rank_fini(&t->rank);
}

struct info_case {
	const char *name;
	u32 size;		/* the size field */
	u32 flags;
	unsigned int tail;	/* offset past the struct of a non-zero byte */
	int expected;
};

static const struct info_case info_cases[] = {
	{ "exact size", sizeof(struct dpusim_rank_info), 0, 0, 0 },
	{ "longer, zero tail", sizeof(struct dpusim_rank_info) + 64, 0, 0, 0 },
	{ "longer, non-zero tail", sizeof(struct dpusim_rank_info) + 16, 0, 9,
	  -E2BIG },
	{ "a page, zero tail", DPUSIM_UCMD_MAX_SIZE, 0, 0, 0 },
	/* the tail runs off the mapping: refused before it is read */
	{ "over a page", DPUSIM_UCMD_MAX_SIZE + 1, 0, 0, -E2BIG },
	{ "largest size", U32_MAX, 0, 0, -E2BIG },
	{ "shorter than version 1", offsetof(struct dpusim_rank_info, mram_size),
	  0, 0, -EINVAL },
	{ "size zero", 0, 0, 0, -EINVAL },
	{ "unknown flag", sizeof(struct dpusim_rank_info), 1, 0, -EINVAL },
	{ "high flag", sizeof(struct dpusim_rank_info), 0x80000000, 0,
	  -EINVAL },
};

static void info_case_desc(const struct info_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(info, info_cases, info_case_desc);

static void dpusim_ioctl_info_test(struct kunit *test)
{
	const struct info_case *c = test->param_value;
	struct dpusim_ioctl_test *t = test->priv;
	struct dpusim_rank_info info = {
		.size = c->size,
		.flags = c->flags,
		.abi_version = 0xdead,
	};
	u8 one = 1;
	long ret;

	KUNIT_ASSERT_EQ(test, clear_user(t->umem, PAGE_SIZE), 0);
	KUNIT_ASSERT_EQ(test, copy_to_user(t->umem, &info, sizeof(info)), 0);
	if (c->tail)
		KUNIT_ASSERT_EQ(test, copy_to_user(t->umem + sizeof(info) +
						   c->tail - 1, &one, 1), 0);

	ret = dpusim_ioctl_dispatch(&t->rank, DPUSIM_IOCTL_RANK_INFO, t->umem);
	KUNIT_EXPECT_EQ(test, ret, c->expected);

	KUNIT_ASSERT_EQ(test, copy_from_user(&info, t->umem, sizeof(info)), 0);
	if (c->expected) {
		/* A failed call leaves the user's struct as it was. */
		KUNIT_EXPECT_EQ(test, info.abi_version, 0xdead);
		return;
	}
	KUNIT_EXPECT_EQ(test, info.size, sizeof(info));
	KUNIT_EXPECT_EQ(test, info.flags, 0);
	KUNIT_EXPECT_EQ(test, info.abi_version, DPUSIM_ABI_VERSION);
	KUNIT_EXPECT_EQ(test, info.rank_index, 2);
	KUNIT_EXPECT_EQ(test, info.nr_dpus, 16);
	KUNIT_EXPECT_EQ(test, info.wram_size, 8192);
	KUNIT_EXPECT_EQ(test, info.mram_size, 2ULL << 20);
}

static void dpusim_ioctl_bad_pointer(struct kunit *test)
{
	struct dpusim_ioctl_test *t = test->priv;

	KUNIT_EXPECT_EQ(test, dpusim_ioctl_dispatch(&t->rank,
						    DPUSIM_IOCTL_RANK_INFO,
						    NULL), -EFAULT);
	/* The size is readable but the struct runs off the mapping. */
	KUNIT_ASSERT_EQ(test, put_user((u32)64, (u32 __user *)
				       (t->umem + PAGE_SIZE - 8)), 0);
	KUNIT_EXPECT_EQ(test, dpusim_ioctl_dispatch(&t->rank,
						    DPUSIM_IOCTL_RANK_INFO,
						    t->umem + PAGE_SIZE - 8),
			-EFAULT);
}

static void dpusim_ioctl_unknown_cmd(struct kunit *test)
{
	struct dpusim_ioctl_test *t = test->priv;
	static const unsigned int cmds[] = {
		_IO(DPUSIM_TYPE, DPUSIM_CMD_BASE - 1),
		_IO(DPUSIM_TYPE, DPUSIM_CMD_BASE + 0x7f),
		_IO(DPUSIM_TYPE + 1, DPUSIM_CMD_RANK_INFO),
		_IOR(DPUSIM_TYPE, DPUSIM_CMD_RANK_INFO, u32),
	};
	unsigned int i;

	KUNIT_ASSERT_EQ(test, put_user((u32)sizeof(struct dpusim_rank_info),
				       (u32 __user *)t->umem), 0);
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		KUNIT_EXPECT_EQ_MSG(test, dpusim_ioctl_dispatch(&t->rank,
								cmds[i],
								t->umem),
				    -ENOTTY, "cmd %#x", cmds[i]);
}

static struct kunit_case dpusim_ioctl_cases[] = {
	KUNIT_CASE_PARAM(dpusim_ioctl_info_test, info_gen_params),
	KUNIT_CASE(dpusim_ioctl_bad_pointer),
	KUNIT_CASE(dpusim_ioctl_unknown_cmd),
	{}
};

static struct kunit_suite dpusim_ioctl_suite = {
	.name = "dpusim_ioctl",
	.init = dpusim_ioctl_test_init,
	.exit = dpusim_ioctl_test_exit,
	.test_cases = dpusim_ioctl_cases,
};

kunit_test_suite(dpusim_ioctl_suite);
