// SPDX-License-Identifier: GPL-2.0
/*
 * dpusim_test.ko: the KUnit suites for dpusim's internals.  Each file of
 * kernel/tests/ holds the suites of one unit.
 */
#include <linux/module.h>

#include "../compat.h"

MODULE_DESCRIPTION("KUnit suites for dpusim");
MODULE_LICENSE("GPL");
DPUSIM_IMPORT_KUNIT_NS();
