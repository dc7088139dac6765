/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Devices that carry the receive hook (dev.c). A struct vmak_dev exists
 * while at least one ring is bound to the device, and for hook_linger_ms
 * after the last one left. Created, found and released under rtnl and
 * vmak_mutex; the hook reaches it through its nf_hook_ops.priv.
 */
#ifndef _VMAK_DEV_H
#define _VMAK_DEV_H

#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/workqueue.h>

#include "flow.h"

struct vmak_dev {
	struct list_head node;		/* in vmak_devs */
	struct net_device *dev;
	netdevice_tracker tracker;
	struct nf_hook_ops ops;
	struct vmak_flow_table ft;
	struct list_head socks;		/* bound vmak_sock.dev_node */
	unsigned long idle_since;	/* jiffies when socks became empty */
	struct rcu_work free_work;
};

#endif /* _VMAK_DEV_H */
