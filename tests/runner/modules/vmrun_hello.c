// SPDX-License-Identifier: GPL-2.0
/* tests/runner: a module that loads and unloads cleanly. */
#include <linux/module.h>

static int __init vmrun_hello_init(void)
{
	pr_info("vmrun_hello: loaded\n");
	return 0;
}

static void __exit vmrun_hello_exit(void)
{
	pr_info("vmrun_hello: unloaded\n");
}

module_init(vmrun_hello_init);
module_exit(vmrun_hello_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("tools/vm-run self-test module");
