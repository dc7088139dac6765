// SPDX-License-Identifier: GPL-2.0
/*
 * vmak: libvma's ring model on any NIC.
 *
 * The module registers one socket family; a socket of it is a ring set in
 * user memory bound to a device queue. Init order: the workqueue and the
 * netdev notifier (which sockets rely on), the socket family, then the
 * generic netlink family; exit undoes it in reverse.
 */
#include <linux/module.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>

#include "vmak.h"

int vmak_family = VMAK_FAMILY_DEFAULT;
module_param_named(family, vmak_family, int, 0444);
MODULE_PARM_DESC(family, "address family number to register (default 22)");

int vmak_hook_priority;
module_param_named(hook_priority, vmak_hook_priority, int, 0444);
MODULE_PARM_DESC(hook_priority, "netdev ingress hook priority (default 0)");

unsigned int vmak_max_rules = 1U << 20;
module_param_named(max_rules, vmak_max_rules, uint, 0644);
MODULE_PARM_DESC(max_rules, "steering rules per socket (default 1048576)");

unsigned int vmak_hook_linger_ms = 5000;
module_param_named(hook_linger_ms, vmak_hook_linger_ms, uint, 0644);
MODULE_PARM_DESC(hook_linger_ms,
		 "keep a device's ingress hook this long after its last ring leaves (default 5000)");

/*
 * As kernel.unprivileged_bpf_disabled: an unprivileged ring bypasses the
 * host's netfilter, tc, IPsec policy and packet capture for its own
 * sockets (Documentation/security.rst). An administrator who may not allow
 * that sets 0: vmak sockets then need CAP_NET_RAW in the netns's user
 * namespace, as AF_PACKET and AF_XDP do.
 */
bool vmak_unprivileged = true;
module_param_named(unprivileged, vmak_unprivileged, bool, 0644);
MODULE_PARM_DESC(unprivileged,
		 "allow rings to processes without CAP_NET_RAW (default Y)");

struct workqueue_struct *vmak_wq;

static int __init vmak_init(void)
{
	int err;

	if (vmak_family <= AF_UNSPEC || vmak_family >= NPROTO) {
		pr_err("family=%d out of range: must be 1..%d\n",
		       vmak_family, NPROTO - 1);
		return -EINVAL;
	}

	vmak_wq = alloc_workqueue("vmak", WQ_UNBOUND, 0);
	if (!vmak_wq)
		return -ENOMEM;

	err = vmak_dev_init();
	if (err)
		goto err_wq;

	err = vmak_sock_init();
	if (err)
		goto err_rx;

	err = vmak_genl_init();
	if (err)
		goto err_sock;

	pr_info("version %s, socket family %d\n", VMAK_VERSION, vmak_family);
	return 0;

err_sock:
	vmak_sock_exit();
err_rx:
	vmak_dev_exit();
err_wq:
	destroy_workqueue(vmak_wq);
	return err;
}

static void __exit vmak_exit(void)
{
	vmak_genl_exit();
	vmak_sock_exit();
	vmak_dev_exit();
	/* RCU callbacks free rules and queue device and UMEM releases. */
	rcu_barrier();
	destroy_workqueue(vmak_wq);
}

module_init(vmak_init);
module_exit(vmak_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vmak: libvma-style rings in user memory on any netdev");
MODULE_VERSION(VMAK_VERSION);
MODULE_ALIAS_GENL_FAMILY(VMAK_FAMILY_NAME);
