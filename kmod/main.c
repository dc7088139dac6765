// SPDX-License-Identifier: GPL-2.0
/*
 * vmak: libvma's ring model on any NIC.
 *
 * The module registers one socket family; a socket of it is a ring set in
 * user memory bound to a device queue. Load order mirrors unload order:
 * socket family first (so nothing can reach netlink before sockets exist),
 * then the generic netlink family.
 */
#include <linux/module.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <net/genetlink.h>

#include "vmak.h"

int vmak_family = VMAK_FAMILY_DEFAULT;
module_param_named(family, vmak_family, int, 0444);
MODULE_PARM_DESC(family, "address family number to register (default 22)");

static int __init vmak_init(void)
{
	int err;

	if (vmak_family <= AF_UNSPEC || vmak_family >= NPROTO) {
		pr_err("family=%d out of range: must be 1..%d\n",
		       vmak_family, NPROTO - 1);
		return -EINVAL;
	}

	err = vmak_sock_init();
	if (err)
		return err;

	err = vmak_genl_init();
	if (err)
		goto err_sock;

	pr_info("version %s, socket family %d\n", VMAK_VERSION, vmak_family);
	return 0;

err_sock:
	vmak_sock_exit();
	return err;
}

static void __exit vmak_exit(void)
{
	vmak_genl_exit();
	vmak_sock_exit();
}

module_init(vmak_init);
module_exit(vmak_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vmak: libvma-style rings in user memory on any netdev");
MODULE_VERSION(VMAK_VERSION);
MODULE_ALIAS_GENL_FAMILY(VMAK_GENL_NAME);
