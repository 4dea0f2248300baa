// SPDX-License-Identifier: GPL-2.0
/* tests/runner: a module that leaks one allocation on load (kmemleak test). */
#include <linux/module.h>
#include <linux/slab.h>

static int __init vmrun_leak_init(void)
{
	void *p = kmalloc(1000, GFP_KERNEL);

	pr_info("vmrun_leak: leaking %p\n", p);
	p = NULL;
	return 0;
}

static void __exit vmrun_leak_exit(void)
{
}

module_init(vmrun_leak_init);
module_exit(vmrun_leak_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("tools/vm-run self-test module that leaks");
