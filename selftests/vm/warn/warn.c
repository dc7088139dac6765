// SPDX-License-Identifier: GPL-2.0
/*
 * Used only by the runner's self-check: a module whose load triggers a
 * WARN_ON, to prove that a kernel warning fails a VM run.
 */
#include <linux/module.h>

static int __init vmak_warn_init(void)
{
	WARN_ON(1);
	return 0;
}

static void __exit vmak_warn_exit(void)
{
}

module_init(vmak_warn_init);
module_exit(vmak_warn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vmak test runner self-check: warns on load");
