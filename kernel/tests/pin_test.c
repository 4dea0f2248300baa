// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for pin.c: page spans and memlock charges.
 */
#include <kunit/test.h>
#include <linux/cred.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>

#include "../pin.h"

static void dpusim_span_pages_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, dpusim_span_pages(0x1000, 0), 0);
	KUNIT_EXPECT_EQ(test, dpusim_span_pages(0x1000, 1), 1);
	KUNIT_EXPECT_EQ(test, dpusim_span_pages(0x1000, PAGE_SIZE), 1);
	KUNIT_EXPECT_EQ(test, dpusim_span_pages(0x1001, PAGE_SIZE), 2);
	KUNIT_EXPECT_EQ(test, dpusim_span_pages(0x1fff, 2), 2);
	KUNIT_EXPECT_EQ(test, dpusim_span_pages(0x1fff, PAGE_SIZE + 2), 3);
}

/* The test thread gets an mm of its own, as a process has. */
static int pin_test_init(struct kunit *test)
{
	unsigned long addr = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
					   PROT_READ | PROT_WRITE,
					   MAP_ANONYMOUS | MAP_PRIVATE, 0);

	KUNIT_ASSERT_NE_MSG(test, addr, 0, "no mm for the test");
	return 0;
}

/* A charge counts in pinned_vm and the counter until given back, once. */
static void dpusim_charge_test(struct kunit *test)
{
	struct mm_struct *mm = current->mm;
	s64 base = atomic64_read(&mm->pinned_vm);
	struct dpusim_charge c = {};
	atomic_long_t count = ATOMIC_LONG_INIT(5);

	KUNIT_ASSERT_EQ(test, dpusim_charge(&c, &count, 3), 0);
	KUNIT_EXPECT_PTR_EQ(test, c.mm, mm);
	KUNIT_EXPECT_EQ(test, c.npages, 3);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mm->pinned_vm), base + 3);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&count), 8);
	dpusim_uncharge(&c);
	KUNIT_EXPECT_NULL(test, c.mm);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mm->pinned_vm), base);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&count), 5);
	/* an empty charge gives nothing back */
	dpusim_uncharge(&c);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mm->pinned_vm), base);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&count), 5);
}

/*
 * Without CAP_IPC_LOCK, RLIMIT_MEMLOCK holds: up to the limit is charged,
 * a page more is -ENOMEM with nothing charged.
 */
static void dpusim_charge_limit_test(struct kunit *test)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct mm_struct *mm = current->mm;
	s64 base = atomic64_read(&mm->pinned_vm);
	atomic_long_t count = ATOMIC_LONG_INIT(0);
	struct dpusim_charge c = {};
	const struct cred *old;
	struct cred *cred;

	KUNIT_ASSERT_EQ(test, base, 0);
	KUNIT_ASSERT_LT(test, limit, 1UL << 30);
	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_lower(cred->cap_effective, CAP_IPC_LOCK);
	old = override_creds(cred);

	KUNIT_EXPECT_EQ(test, dpusim_charge(&c, &count, limit + 1), -ENOMEM);
	KUNIT_EXPECT_NULL(test, c.mm);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mm->pinned_vm), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&count), 0);
	KUNIT_EXPECT_EQ(test, dpusim_charge(&c, &count, limit), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mm->pinned_vm), limit);
	dpusim_uncharge(&c);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mm->pinned_vm), 0);

	revert_creds(old);
	put_cred(cred);
	/* with the capability, the limit does not apply */
	KUNIT_EXPECT_EQ(test, dpusim_charge(&c, &count, limit + 1), 0);
	dpusim_uncharge(&c);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&count), 0);
}

static struct kunit_case pin_test_cases[] = {
	KUNIT_CASE(dpusim_span_pages_test),
	KUNIT_CASE(dpusim_charge_test),
	KUNIT_CASE(dpusim_charge_limit_test),
	{}
};

static struct kunit_suite dpusim_pin_suite = {
	.name = "dpusim_pin",
	.init = pin_test_init,
	.test_cases = pin_test_cases,
};

kunit_test_suites(&dpusim_pin_suite);
