// SPDX-License-Identifier: GPL-2.0
/*
 * Devices: the receive hook on each device with a bound ring, bind and
 * unbind, the netdev notifier, and the static keys behind every hook.
 *
 * Each device with at least one bound socket has a struct vmak_dev: its
 * netfilter NF_NETDEV_INGRESS hook (rx.c's vmak_hook) and its flow table
 * (flow.c). A device whose last socket left keeps its hook for
 * hook_linger_ms (a reaper work removes it), and a bind in that time takes
 * it back: adding and removing a hook rebuilds the device's hook array and
 * frees the old one after a grace period, which a ring opened and closed
 * in a loop would otherwise pay on every cycle. The static keys behind
 * the hooks are held for the module's lifetime (vmak_keys_hold()).
 *
 * Bind takes rtnl, then vmak_mutex; the netdev notifier runs under rtnl
 * and takes vmak_mutex; the reaper takes vmak_mutex alone. A struct
 * vmak_dev is freed after a grace period, once no hook can run on it.
 */
#include <linux/inetdevice.h>
#include <linux/netfilter.h>
#include <linux/netfilter_netdev.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>

#include "vmak.h"
#include "dev.h"
#include "flow.h"

/* Devices, their hooks and flow tables, socket state; see vmak.h. */
DEFINE_MUTEX(vmak_mutex);
static LIST_HEAD(vmak_devs);

/*
 * Bumped whenever an address is added to or removed from any device, so
 * that a rule's "this address is the host's" answer can be kept until
 * then (vmak_rule_local()). Starts at 1: 0 means never checked.
 */
atomic_t vmak_addr_gen = ATOMIC_INIT(1);

static int vmak_addr_event(struct notifier_block *nb, unsigned long event,
			   void *ptr)
{
	if (event == NETDEV_UP || event == NETDEV_DOWN)
		atomic_inc(&vmak_addr_gen);
	return NOTIFY_DONE;
}

static struct notifier_block vmak_inetaddr_notifier = {
	.notifier_call = vmak_addr_event,
};

static struct notifier_block vmak_inet6addr_notifier = {
	.notifier_call = vmak_addr_event,
};

static struct vmak_dev *vmak_dev_find(const struct net_device *dev)
{
	struct vmak_dev *vdev;

	lockdep_assert_held(&vmak_mutex);
	list_for_each_entry(vdev, &vmak_devs, node)
		if (vdev->dev == dev)
			return vdev;
	return NULL;
}

static void vmak_dev_free_work(struct work_struct *work)
{
	struct vmak_dev *vdev = container_of(to_rcu_work(work), struct vmak_dev,
					     free_work);

	vmak_flow_table_destroy(&vdev->ft);
	netdev_put(vdev->dev, &vdev->tracker);
	kfree(vdev);
}

/* Called under rtnl and vmak_mutex. */
static struct vmak_dev *vmak_dev_get(struct net_device *dev)
{
	struct vmak_dev *vdev = vmak_dev_find(dev);
	int err;

	if (vdev)
		return vdev;

	vdev = kzalloc(sizeof(*vdev), GFP_KERNEL_ACCOUNT);
	if (!vdev)
		return ERR_PTR(-ENOMEM);
	err = vmak_flow_table_init(&vdev->ft);
	if (err)
		goto err_free;
	INIT_LIST_HEAD(&vdev->socks);
	INIT_RCU_WORK(&vdev->free_work, vmak_dev_free_work);
	vdev->dev = dev;
	netdev_hold(dev, &vdev->tracker, GFP_KERNEL);

	vdev->ops.hook = vmak_hook;
	vdev->ops.dev = dev;
	vdev->ops.priv = vdev;
	vdev->ops.pf = NFPROTO_NETDEV;
	vdev->ops.hooknum = NF_NETDEV_INGRESS;
	vdev->ops.priority = vmak_hook_priority;
	err = nf_register_net_hook(dev_net(dev), &vdev->ops);
	if (err)
		goto err_put;
	list_add(&vdev->node, &vmak_devs);
	return vdev;

err_put:
	netdev_put(dev, &vdev->tracker);
	vmak_flow_table_destroy(&vdev->ft);
err_free:
	kfree(vdev);
	return ERR_PTR(err);
}

/* Unhook and forget; freed once in-flight hooks are done. */
static void vmak_dev_release(struct vmak_dev *vdev)
{
	lockdep_assert_held(&vmak_mutex);
	nf_unregister_net_hook(dev_net(vdev->dev), &vdev->ops);
	list_del(&vdev->node);
	queue_rcu_work(vmak_wq, &vdev->free_work);
}

static void vmak_reap(struct work_struct *work);
static DECLARE_DELAYED_WORK(vmak_reaper, vmak_reap);

/* Release the devices idle for hook_linger_ms; come back for the rest. */
static void vmak_reap(struct work_struct *work)
{
	unsigned long linger = msecs_to_jiffies(READ_ONCE(vmak_hook_linger_ms));
	unsigned long now = jiffies, next = 0;
	struct vmak_dev *vdev, *tmp;

	mutex_lock(&vmak_mutex);
	list_for_each_entry_safe(vdev, tmp, &vmak_devs, node) {
		unsigned long due = vdev->idle_since + linger;

		if (!list_empty(&vdev->socks))
			continue;
		if (time_after_eq(now, due))
			vmak_dev_release(vdev);
		else if (!next || due - now < next)
			next = due - now;	/* the soonest still to come */
	}
	if (next)
		queue_delayed_work(vmak_wq, &vmak_reaper, next);
	mutex_unlock(&vmak_mutex);
}

/* No socket left: the reaper unhooks the device unless one comes back. */
static void vmak_dev_put(struct vmak_dev *vdev)
{
	unsigned int linger = READ_ONCE(vmak_hook_linger_ms);

	lockdep_assert_held(&vmak_mutex);
	if (!list_empty(&vdev->socks))
		return;
	if (!linger) {
		vmak_dev_release(vdev);
		return;
	}
	vdev->idle_since = jiffies;
	queue_delayed_work(vmak_wq, &vmak_reaper, msecs_to_jiffies(linger));
}

/* Devices of @net that carry our hook (netlink info). */
u32 vmak_hooked_devices(struct net *net)
{
	struct vmak_dev *vdev;
	u32 n = 0;

	mutex_lock(&vmak_mutex);
	list_for_each_entry(vdev, &vmak_devs, node)
		if (net_eq(dev_net(vdev->dev), net))
			n++;
	mutex_unlock(&vmak_mutex);
	return n;
}

/* The bound device, under rcu_read_lock(); NULL when not bound. */
struct net_device *vmak_sock_dev_rcu(struct vmak_sock *vs)
{
	/* Then vs->umem and vs->cq_map, set before bind, are seen too. */
	struct vmak_dev *vdev = smp_load_acquire(&vs->vdev);

	return vdev ? vdev->dev : NULL;
}

/*
 * Attach vs to dev. A shared UMEM becomes the socket's here, under
 * vmak_mutex, so netlink never sees one that a failed bind takes back.
 */
int vmak_bind_dev(struct vmak_sock *vs, struct net_device *dev,
		  struct vmak_umem *shared)
{
	struct vmak_dev *vdev;
	int err = 0;

	rtnl_lock();
	mutex_lock(&vmak_mutex);
	/* The lookup ran without rtnl: the device may have left since, or
	 * moved to another netns (its reg_state stays REGISTERED then).
	 */
	if (dev->reg_state != NETREG_REGISTERED ||
	    !net_eq(dev_net(dev), sock_net(&vs->sk))) {
		err = -ENODEV;
		goto out;
	}
	vdev = vmak_dev_get(dev);
	if (IS_ERR(vdev)) {
		err = PTR_ERR(vdev);
		goto out;
	}
	if (shared)	/* pairs with smp_load_acquire() in vmak_nl_fill_ring() */
		smp_store_release(&vs->umem, shared);
	/* After the UMEM: pairs with smp_load_acquire() in vmak_sock_dev_rcu() */
	smp_store_release(&vs->vdev, vdev);
	vs->ifindex = dev->ifindex;
	list_add_tail(&vs->dev_node, &vdev->socks);
	WRITE_ONCE(vs->state, VMAK_STATE_BOUND);
out:
	mutex_unlock(&vmak_mutex);
	rtnl_unlock();
	return err;
}

/*
 * Remove every rule and leave the device; the caller drops the device
 * with vmak_dev_put(). Called under vmak_mutex.
 */
static void __vmak_unbind(struct vmak_sock *vs)
{
	vmak_rules_flush(vs);
	list_del_init(&vs->dev_node);
	WRITE_ONCE(vs->vdev, NULL);
	WRITE_ONCE(vs->state, VMAK_STATE_UNBOUND);
}

void vmak_unbind(struct vmak_sock *vs)
{
	struct vmak_dev *vdev;

	mutex_lock(&vmak_mutex);
	vdev = vs->vdev;
	if (vs->state == VMAK_STATE_BOUND) {
		__vmak_unbind(vs);
		vmak_dev_put(vdev);
	}
	mutex_unlock(&vmak_mutex);
}

static int vmak_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct vmak_sock *vs, *tmp;
	struct vmak_dev *vdev;

	/* Also sent when the device leaves the netns: rings stay put. */
	if (event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;

	mutex_lock(&vmak_mutex);
	vdev = vmak_dev_find(dev);
	if (vdev) {
		list_for_each_entry_safe(vs, tmp, &vdev->socks, dev_node) {
			__vmak_unbind(vs);
			WRITE_ONCE(vs->sk.sk_err, ENETDOWN);
			sk_error_report(&vs->sk);
			__vmak_nl_notify(vs, VMAK_CMD_RING_CHANGE_NTF);
		}
		/* The hook may not outlive the device (nor linger). */
		vmak_dev_release(vdev);
	}
	mutex_unlock(&vmak_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block vmak_netdev_notifier = {
	.notifier_call = vmak_netdev_event,
};

/*
 * A netdev ingress hook runs behind two static keys: the core's ingress
 * key (net_inc_ingress_queue) and netfilter's NETDEV/INGRESS key. The
 * first such hook in the system enables them and the last one's removal
 * disables them, and each switch rewrites the receive path's code,
 * stopping every CPU by IPI while it does. A device deleted under traffic
 * must lose its hook at once (no linger can help), and an application
 * that opens its first ring should not stall every core of the machine.
 * So the module takes a reference on both keys at load and drops them at
 * unload: while it is loaded they never switch because of a ring or a
 * device. A packet on a device without hooks pays two pointer tests
 * (tc ingress, netfilter ingress).
 */
static void vmak_keys_hold(void)
{
	net_inc_ingress_queue();
#ifdef CONFIG_JUMP_LABEL
	static_key_slow_inc(&nf_hooks_needed[NFPROTO_NETDEV][NF_NETDEV_INGRESS]);
#endif
}

static void vmak_keys_drop(void)
{
#ifdef CONFIG_JUMP_LABEL
	static_key_slow_dec(&nf_hooks_needed[NFPROTO_NETDEV][NF_NETDEV_INGRESS]);
#endif
	net_dec_ingress_queue();
}

int __init vmak_dev_init(void)
{
	int err;

	vmak_keys_hold();
	err = register_netdevice_notifier(&vmak_netdev_notifier);
	if (err)
		goto err_keys;
	err = register_inetaddr_notifier(&vmak_inetaddr_notifier);
	if (err)
		goto err_netdev;
	err = register_inet6addr_notifier(&vmak_inet6addr_notifier);
	if (err)
		goto err_inet;
	return 0;

err_inet:
	unregister_inetaddr_notifier(&vmak_inetaddr_notifier);
err_netdev:
	unregister_netdevice_notifier(&vmak_netdev_notifier);
err_keys:
	vmak_keys_drop();
	return err;
}

/* Every socket is gone: only lingering devices remain. */
void vmak_dev_exit(void)
{
	struct vmak_dev *vdev, *tmp;

	cancel_delayed_work_sync(&vmak_reaper);
	mutex_lock(&vmak_mutex);
	list_for_each_entry_safe(vdev, tmp, &vmak_devs, node) {
		WARN_ON_ONCE(!list_empty(&vdev->socks));
		vmak_dev_release(vdev);
	}
	mutex_unlock(&vmak_mutex);
	unregister_inet6addr_notifier(&vmak_inet6addr_notifier);
	unregister_inetaddr_notifier(&vmak_inetaddr_notifier);
	unregister_netdevice_notifier(&vmak_netdev_notifier);
	vmak_keys_drop();
}
