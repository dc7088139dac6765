// SPDX-License-Identifier: GPL-2.0
/*
 * Receive: a netfilter NF_NETDEV_INGRESS hook per device steers chosen UDP
 * flows into rings.
 *
 * Each device with at least one bound socket has a struct vmak_dev: its
 * hook and a flow table, an rhashtable of exact keys. A key is one of
 * three kinds, looked up in this order: full (dst and src address and
 * port), dst (dst address and port, any source) and port (dst port, any
 * address). Per-kind counts let the hook skip kinds with no keys, so a
 * packet costs at most three O(1) lookups however many rules exist.
 *
 * A flow holds the rules of every socket that asked for that key. A
 * packet goes to each of those sockets bound to its receive queue (or to
 * any queue): one copy per socket, so several processes may receive one
 * multicast group. A packet that reached at least one ring is stolen from
 * the stack; one that no ring could take is dropped, or passed on when
 * the socket asked for that.
 *
 * A device whose last socket left keeps its hook for hook_linger_ms (a
 * reaper work removes it), and a bind in that time takes it back: adding
 * and removing a hook rebuilds the device's hook array and frees the old
 * one after a grace period, which a ring opened and closed in a loop
 * would otherwise pay on every cycle. The static keys behind the hooks
 * are held for the module's lifetime (vmak_keys_hold()).
 *
 * Writers (bind, rules, unbind, the netdev notifier, the reaper) hold
 * vmak_mutex; the hook reads under RCU. Flows and rules are freed after a
 * grace period; sockets are SOCK_RCU_FREE.
 */
#include <linux/if_ether.h>
#include <linux/igmp.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter.h>
#include <linux/netfilter_netdev.h>
#include <linux/rhashtable.h>
#include <linux/rtnetlink.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/busy_poll.h>
#include <net/if_inet6.h>
#include <net/inet_sock.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/udp.h>

#include "vmak.h"

enum vmak_key_kind {
	VMAK_KEY_FULL,
	VMAK_KEY_DST,
	VMAK_KEY_PORT,
	VMAK_KEY_KINDS,
};

struct vmak_flow {
	struct rhash_head node;
	struct vmak_key key;
	struct list_head rules;		/* struct vmak_rule.flow_node[], RCU */
	u8 kind;
	struct rcu_head rcu;
};

struct vmak_rule_obj;

struct vmak_rule_ent {
	struct list_head flow_node;
	struct vmak_flow *flow;
	struct vmak_rule_obj *rule;
};

struct vmak_rule_obj {
	struct vmak_sock *vs;
	u32 cookie;
	u8 kind;			/* VMAK_RULE_* */
	/* Socket-derived: stop matching once the socket is closed, or (for
	 * unprivileged owners) once others may share its port. */
	struct sock *usk;
	bool exclusive;
	struct vmak_rule_ent ent[VMAK_RULE_KEYS];
	struct vmak_key key[VMAK_RULE_KEYS];
	u8 nkeys;
	struct rcu_head rcu;
};

struct vmak_dev {
	struct list_head node;		/* in vmak_devs */
	struct net_device *dev;
	netdevice_tracker tracker;
	struct nf_hook_ops ops;
	struct rhashtable flows;
	atomic_t nkind[VMAK_KEY_KINDS];
	struct list_head socks;		/* bound vmak_sock.dev_node */
	unsigned long idle_since;	/* jiffies when socks became empty */
	struct rcu_work free_work;
};

DEFINE_MUTEX(vmak_mutex);
static LIST_HEAD(vmak_devs);

static const struct rhashtable_params vmak_flow_params = {
	.key_len		= sizeof(struct vmak_key),
	.key_offset		= offsetof(struct vmak_flow, key),
	.head_offset		= offsetof(struct vmak_flow, node),
	.automatic_shrinking	= true,
};

/* ---- packet parsing ---------------------------------------------------- */

struct vmak_pkt {
	struct vmak_key key;	/* as FULL; other kinds derived from it */
	u32 mac_len;		/* bytes before skb->data */
	u32 l4_off;		/* UDP header, from skb->data */
	u32 len;		/* bytes from skb->data to the datagram's end */
	bool v6;
};

static bool vmak_parse_v4(const struct sk_buff *skb, struct vmak_pkt *p)
{
	struct iphdr _iph;
	const struct iphdr *iph;
	u32 ihl, tot;

	iph = skb_header_pointer(skb, 0, sizeof(_iph), &_iph);
	if (!iph || iph->version != 4 || iph->ihl < 5)
		return false;
	if (iph->protocol != IPPROTO_UDP || ip_is_fragment(iph))
		return false;
	ihl = iph->ihl * 4;
	tot = ntohs(iph->tot_len);
	if (skb_is_gso(skb))
		tot = skb->len;		/* may exceed 64k; lengths are rewritten */
	if (tot < ihl + sizeof(struct udphdr) || tot > skb->len)
		return false;
	p->key.af = AF_INET;
	memcpy(p->key.daddr, &iph->daddr, 4);
	memcpy(p->key.saddr, &iph->saddr, 4);
	p->l4_off = ihl;
	p->len = tot;		/* ignores link-layer padding */
	return true;
}

static bool vmak_parse_v6(const struct sk_buff *skb, struct vmak_pkt *p)
{
	struct ipv6hdr _ip6h;
	const struct ipv6hdr *ip6h;
	u32 off = sizeof(*ip6h), tot;
	u8 nexthdr;
	int i;

	ip6h = skb_header_pointer(skb, 0, sizeof(_ip6h), &_ip6h);
	if (!ip6h || ip6h->version != 6)
		return false;
	nexthdr = ip6h->nexthdr;
	/* Skip options and routing headers; fragments are never steered. */
	for (i = 0; i < 8 && nexthdr != IPPROTO_UDP; i++) {
		struct ipv6_opt_hdr _oh;
		const struct ipv6_opt_hdr *oh;

		if (nexthdr != NEXTHDR_HOP && nexthdr != NEXTHDR_ROUTING &&
		    nexthdr != NEXTHDR_DEST)
			return false;
		oh = skb_header_pointer(skb, off, sizeof(_oh), &_oh);
		if (!oh)
			return false;
		nexthdr = oh->nexthdr;
		off += ipv6_optlen(oh);
	}
	if (nexthdr != IPPROTO_UDP)
		return false;
	tot = sizeof(*ip6h) + ntohs(ip6h->payload_len);
	if (skb_is_gso(skb) || !ip6h->payload_len)
		tot = skb->len;
	if (tot < off + sizeof(struct udphdr) || tot > skb->len)
		return false;
	p->key.af = AF_INET6;
	memcpy(p->key.daddr, &ip6h->daddr, 16);
	memcpy(p->key.saddr, &ip6h->saddr, 16);
	p->l4_off = off;
	p->len = tot;
	p->v6 = true;
	return true;
}

static bool vmak_parse(const struct sk_buff *skb, struct vmak_pkt *p)
{
	struct udphdr _uh;
	const struct udphdr *uh;

	memset(&p->key, 0, sizeof(p->key));
	p->v6 = false;
	if (skb->protocol == htons(ETH_P_IP)) {
		if (!vmak_parse_v4(skb, p))
			return false;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		if (!vmak_parse_v6(skb, p))
			return false;
	} else {
		return false;
	}
	uh = skb_header_pointer(skb, p->l4_off, sizeof(_uh), &_uh);
	if (!uh)
		return false;
	p->key.proto = IPPROTO_UDP;
	p->key.dport = uh->dest;
	p->key.sport = uh->source;
	p->mac_len = skb_mac_header_was_set(skb) ? skb->data - skb_mac_header(skb) : 0;
	return true;
}

/* ---- delivery ------------------------------------------------------------ */

enum vmak_verdict {
	VMAK_TAKEN,
	VMAK_NO_ROOM,	/* counted; drop or pass */
};

/* Rewrite the lengths of one datagram cut out of a GSO packet. */
static void vmak_fix_segment(u8 *frame, const struct vmak_pkt *p, u32 seg_len)
{
	u8 *l3 = frame + p->mac_len;
	struct udphdr *uh = (struct udphdr *)(l3 + p->l4_off);
	u32 ulen = sizeof(*uh) + seg_len;

	uh->len = htons(ulen);
	uh->check = 0;
	if (p->v6) {
		struct ipv6hdr *ip6h = (struct ipv6hdr *)l3;

		ip6h->payload_len = htons(p->l4_off - sizeof(*ip6h) + ulen);
	} else {
		struct iphdr *iph = (struct iphdr *)l3;

		iph->tot_len = htons(p->l4_off + ulen);
		iph->check = 0;
		iph->check = ip_fast_csum(iph, iph->ihl);
	}
}

/*
 * The packet's queue as this socket sees it. *hash starts as skb->hash and
 * is computed here at most once per packet, for the first socket that
 * needs it.
 */
static u16 vmak_rx_queue(struct vmak_sock *vs, const struct sk_buff *skb,
			 u32 *hash)
{
	struct net_device *dev = skb->dev;

	if (!(vs->bind_flags & VMAK_BIND_SW_QUEUE))
		return skb_rx_queue_recorded(skb) ? skb_get_rx_queue(skb) : 0;
	/* Read-only: the skb may be shared (pktgen), so never skb_get_hash(). */
	if (!*hash)
		*hash = __skb_get_hash_symmetric(skb);
	return dev->real_num_rx_queues > 1 ? *hash % dev->real_num_rx_queues : 0;
}

/*
 * Copy the datagram (one per GSO segment) into chunks from the FILL ring
 * and post RX descriptors. Called with vs->rx_lock held.
 */
static enum vmak_verdict vmak_rx_copy(struct vmak_sock *vs,
				      const struct sk_buff *skb,
				      const struct vmak_pkt *p, u32 cookie,
				      u16 queue, u32 hash, u64 now)
{
	struct vmak_umem *umem = vs->umem;
	struct vmak_queue *rx = vs->rx, *fq = vs->fq;
	u32 hdr_len = p->mac_len + p->l4_off + sizeof(struct udphdr);
	u32 payload = p->len - p->l4_off - sizeof(struct udphdr);
	u32 seg = payload, nseg = 1, room = umem->chunk_size - umem->headroom;
	u64 ts_hw = ktime_to_ns(skb_hwtstamps((struct sk_buff *)skb)->hwtstamp);
	u32 i, skipped;

	if (skb_is_gso(skb) && skb_shinfo(skb)->gso_size &&
	    payload > skb_shinfo(skb)->gso_size) {
		seg = skb_shinfo(skb)->gso_size;
		nseg = DIV_ROUND_UP(payload, seg);
	}
	if (hdr_len + seg > room) {
		vs->stats.rx_too_big++;
		return VMAK_NO_ROOM;
	}
	if (vmak_q_free(rx) < nseg) {
		vs->stats.rx_ring_full++;
		return VMAK_NO_ROOM;
	}

	for (i = 0; i < nseg; i++) {
		u32 this = min(seg, payload - i * seg), flen = hdr_len + this;
		struct vmak_rx_desc *d;
		u64 addr;
		u8 *frame;

		/* Take a chunk, skipping entries outside the UMEM (at most a
		 * ring's worth per packet: this runs in softirq). */
		for (skipped = 0;; skipped++) {
			if (skipped >= fq->nentries || !vmak_q_peek(fq)) {
				vs->stats.rx_fill_empty++;
				vmak_q_set_flag(fq, VMAK_RING_NEED_WAKEUP);
				if (i)
					goto out_submit;
				vmak_q_release(fq);	/* skipped entries */
				return VMAK_NO_ROOM;
			}
			addr = READ_ONCE(*(u64 *)vmak_q_desc(fq, fq->cached_cons));
			vmak_q_consume(fq);
			if (addr < umem->size)
				break;
			vs->stats.rx_invalid_fill++;
		}
		addr = (addr & ~((u64)umem->chunk_size - 1)) + umem->headroom;
		frame = umem->kaddr + addr;

		if (nseg == 1 && skb_headlen(skb) >= p->len) {
			/* linear: from the link-layer header on */
			vmak_copy_frame(frame, skb->data - p->mac_len, flen);
		} else if (nseg == 1) {
			skb_copy_bits(skb, -(int)p->mac_len, frame,
				      p->mac_len + p->len);
		} else {
			skb_copy_bits(skb, -(int)p->mac_len, frame, hdr_len);
			skb_copy_bits(skb, hdr_len - p->mac_len + i * seg,
				      frame + hdr_len, this);
			vmak_fix_segment(frame, p, this);
		}

		d = vmak_q_reserve(rx);
		d->addr = addr;
		d->len = flen;
		d->cookie = cookie;
		d->l3_off = p->mac_len;
		d->payload_off = hdr_len;
		d->queue = queue;
		d->flags = (p->v6 ? VMAK_RX_IPV6 : 0) |
			   (ts_hw ? VMAK_RX_TS_HW : 0) |
			   (nseg > 1 ? VMAK_RX_SEGMENT : 0);
		d->hash = hash;
		d->reserved = 0;
		d->ts_sw = now;
		d->ts_hw = ts_hw;
		vs->stats.rx_packets++;
		vs->stats.rx_bytes += flen;
	}
out_submit:
	vmak_q_release(fq);
	vmak_q_submit(rx);
	return VMAK_TAKEN;
}

/* ---- wake moderation ------------------------------------------------------ */

static enum hrtimer_restart vmak_mod_timer_fn(struct hrtimer *t)
{
	struct vmak_sock *vs = container_of(t, struct vmak_sock, mod_timer);

	spin_lock_bh(&vs->rx_lock);
	vs->unsignalled = 0;
	vs->timer_armed = false;
	spin_unlock_bh(&vs->rx_lock);
	vs->sk.sk_data_ready(&vs->sk);
	sock_put(&vs->sk);		/* taken when armed */
	return HRTIMER_NORESTART;
}

/*
 * Wake now: forget what was unsignalled and the timer's pending wake.
 * Called with rx_lock held.
 */
static void vmak_mod_signal(struct vmak_sock *vs)
{
	vs->unsignalled = 0;
	vs->armed = false;
	/* The timer's own wake would be spurious now. */
	if (vs->timer_armed && hrtimer_try_to_cancel(&vs->mod_timer) == 1) {
		vs->timer_armed = false;
		/* May be the last reference after close: the socket is then
		 * freed after a grace period (SOCK_RCU_FREE), so our lock
		 * stays valid until we drop it. */
		sock_put(&vs->sk);
	}
}

/*
 * Account n descriptors just posted; true if the sleepers should be woken
 * now. Called with rx_lock held.
 */
static bool vmak_rx_moderate(struct vmak_sock *vs, u32 n)
{
	if (vs->armed) {
		vmak_mod_signal(vs);
		return true;
	}
	if (!vs->mod_count && !vs->mod_usec)
		return true;
	vs->unsignalled += n;
	if (vs->mod_count && vs->unsignalled >= vs->mod_count) {
		vmak_mod_signal(vs);
		return true;
	}
	if (vs->mod_usec && !vs->timer_armed) {
		/* A socket closed under this in-flight hook has no references
		 * left to take: wake now instead of arming. */
		if (!refcount_inc_not_zero(&vs->sk.sk_refcnt))
			return true;
		vs->timer_armed = true;
		hrtimer_start(&vs->mod_timer, ns_to_ktime(vs->mod_usec * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_SOFT);
	}
	return false;
}

/*
 * One-shot wake (libvma's CQ_ARM): datagrams already posted but not yet
 * signalled wake the waiters now; otherwise the next datagram does,
 * whatever the moderation says.
 */
void vmak_rx_arm(struct vmak_sock *vs)
{
	bool wake;

	spin_lock_bh(&vs->rx_lock);
	wake = vs->unsignalled > 0;
	if (wake)
		vmak_mod_signal(vs);
	else
		vs->armed = true;
	spin_unlock_bh(&vs->rx_lock);
	if (wake)
		vs->sk.sk_data_ready(&vs->sk);
}

int vmak_rx_set_moderation(struct vmak_sock *vs, u32 count, u32 usec)
{
	if (count > VMAK_MOD_COUNT_MAX || usec > VMAK_MOD_USEC_MAX)
		return -EINVAL;
	spin_lock_bh(&vs->rx_lock);
	vs->mod_count = count;
	vs->mod_usec = usec;
	spin_unlock_bh(&vs->rx_lock);
	/* Whatever waited under the old setting is signalled now. */
	vs->sk.sk_data_ready(&vs->sk);
	return 0;
}

void vmak_rx_sock_init(struct vmak_sock *vs)
{
	hrtimer_init(&vs->mod_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	vs->mod_timer.function = vmak_mod_timer_fn;
}

/*
 * On close, after unbind. A hook still running may arm the timer again;
 * it then holds its own reference and fires (harmlessly) later.
 */
void vmak_rx_sock_release(struct vmak_sock *vs)
{
	if (hrtimer_cancel(&vs->mod_timer)) {
		spin_lock_bh(&vs->rx_lock);
		vs->timer_armed = false;
		spin_unlock_bh(&vs->rx_lock);
		__sock_put(&vs->sk);	/* the caller still holds one */
	}
}

static bool vmak_rule_live(const struct vmak_rule_obj *r)
{
	const struct sock *usk = r->usk;

	if (!usk)
		return true;
	if (sk_unhashed(usk))
		return false;
	/* SO_REUSEADDR lets sockets of other users share the port. */
	return !r->exclusive || usk->sk_reuse == SK_NO_REUSE;
}

static void vmak_note_napi(struct vmak_sock *vs, const struct sk_buff *skb)
{
#ifdef CONFIG_NET_RX_BUSY_POLL
	if (skb->napi_id >= MIN_NAPI_ID &&
	    READ_ONCE(vs->napi_id) != skb->napi_id) {
		WRITE_ONCE(vs->napi_id, skb->napi_id);
		WRITE_ONCE(vs->sk.sk_napi_id, skb->napi_id);
	}
#endif
}

static u64 vmak_rx_tstamp(const struct sk_buff *skb)
{
	return vmak_skb_rx_tstamp_ns(skb) ?: ktime_get_real_ns();
}

static unsigned int vmak_hook(void *priv, struct sk_buff *skb,
			      const struct nf_hook_state *state)
{
	struct vmak_dev *vdev = priv;
	bool applied = false, taken = false, pass = false;
	struct vmak_key key;
	struct vmak_pkt p;
	u32 hash = skb->hash;
	u64 now = 0;
	int kind;

	if (!vmak_parse(skb, &p))
		return NF_ACCEPT;

	for (kind = 0; kind < VMAK_KEY_KINDS && !applied; kind++) {
		struct vmak_rule_ent *ent;
		struct vmak_flow *flow;

		if (!atomic_read(&vdev->nkind[kind]))
			continue;
		key = p.key;
		if (kind != VMAK_KEY_FULL) {
			memset(key.saddr, 0, sizeof(key.saddr));
			key.sport = 0;
		}
		if (kind == VMAK_KEY_PORT)
			memset(key.daddr, 0, sizeof(key.daddr));
		flow = rhashtable_lookup(&vdev->flows, &key, vmak_flow_params);
		if (!flow)
			continue;

		list_for_each_entry_rcu(ent, &flow->rules, flow_node) {
			struct vmak_rule_obj *r = ent->rule;
			struct vmak_sock *vs = r->vs;
			enum vmak_verdict v;
			bool wake, stamp;
			u64 posted;
			u16 q;

			/* A ring without RX takes nothing: its socket rules
			 * only vouch for what it sends. */
			if (!vs->rx)
				continue;
			q = vmak_rx_queue(vs, skb, &hash);
			if (vs->queue_id != VMAK_QUEUE_ANY && vs->queue_id != q)
				continue;
			if (!vmak_rule_live(r)) {
				spin_lock(&vs->rx_lock);
				vs->stats.rx_rule_dead++;
				spin_unlock(&vs->rx_lock);
				continue;
			}
			applied = true;
			/* The clock is read once, and only if a ring asks. */
			stamp = vs->bind_flags & VMAK_BIND_RX_TIMESTAMP;
			if (stamp && !now)
				now = vmak_rx_tstamp(skb);
			spin_lock(&vs->rx_lock);
			posted = vs->stats.rx_packets;
			v = vmak_rx_copy(vs, skb, &p, r->cookie, q, hash,
					 stamp ? now : 0);
			wake = false;
			if (v == VMAK_TAKEN) {
				taken = true;
				wake = vmak_rx_moderate(vs, vs->stats.rx_packets - posted);
			} else if (vs->bind_flags & VMAK_BIND_PASS_ON_DROP) {
				vs->stats.rx_passed++;
				pass = true;
			}
			spin_unlock(&vs->rx_lock);
			vmak_note_napi(vs, skb);
			if (wake)
				vs->sk.sk_data_ready(&vs->sk);
		}
	}

	/* Nobody wanted it, or a full ring asked for the stack. */
	if (!applied || (!taken && pass))
		return NF_ACCEPT;
	if (taken) {
		consume_skb(skb);
		return NF_STOLEN;
	}
	return NF_DROP;
}

/* ---- devices ------------------------------------------------------------- */

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

	rhashtable_destroy(&vdev->flows);
	netdev_put(vdev->dev, &vdev->tracker);
	kfree(vdev);
}

/* Called under rtnl and vmak_mutex. */
static struct vmak_dev *vmak_dev_get(struct net_device *dev)
{
	struct vmak_dev *vdev = vmak_dev_find(dev);
	int err, i;

	if (vdev)
		return vdev;

	vdev = kzalloc(sizeof(*vdev), GFP_KERNEL_ACCOUNT);
	if (!vdev)
		return ERR_PTR(-ENOMEM);
	err = rhashtable_init(&vdev->flows, &vmak_flow_params);
	if (err)
		goto err_free;
	for (i = 0; i < VMAK_KEY_KINDS; i++)
		atomic_set(&vdev->nkind[i], 0);
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
	rhashtable_destroy(&vdev->flows);
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

/* ---- rules --------------------------------------------------------------- */

static enum vmak_key_kind vmak_key_kind(const struct vmak_key *k)
{
	static const u8 zero[16];

	if (k->sport || memcmp(k->saddr, zero, 16))
		return VMAK_KEY_FULL;
	if (memcmp(k->daddr, zero, 16))
		return VMAK_KEY_DST;
	return VMAK_KEY_PORT;
}

static void vmak_rule_free_rcu(struct rcu_head *head)
{
	struct vmak_rule_obj *r = container_of(head, struct vmak_rule_obj, rcu);

	if (r->usk)
		sock_put(r->usk);
	kfree(r);
}

/*
 * Unlink one rule from the flow table (the caller took it out of
 * vs->rules); it is freed after a grace period.
 */
static void vmak_rule_unlink(struct vmak_dev *vdev, struct vmak_rule_obj *r)
{
	int i;

	for (i = 0; i < r->nkeys; i++) {
		struct vmak_flow *flow = r->ent[i].flow;

		if (!flow)
			continue;
		list_del_rcu(&r->ent[i].flow_node);
		if (list_empty(&flow->rules)) {
			rhashtable_remove_fast(&vdev->flows, &flow->node,
					       vmak_flow_params);
			atomic_dec(&vdev->nkind[flow->kind]);
			kfree_rcu(flow, rcu);
		}
		r->ent[i].flow = NULL;
	}
	call_rcu(&r->rcu, vmak_rule_free_rcu);
}

static int vmak_rule_link(struct vmak_dev *vdev, struct vmak_rule_obj *r)
{
	int i, err;

	for (i = 0; i < r->nkeys; i++) {
		struct vmak_rule_ent *ent;
		struct vmak_flow *flow;

		flow = rhashtable_lookup_fast(&vdev->flows, &r->key[i],
					      vmak_flow_params);
		if (flow) {
			list_for_each_entry(ent, &flow->rules, flow_node) {
				if (ent->rule->vs == r->vs) {
					err = -EEXIST;
					goto err_unlink;
				}
			}
		} else {
			flow = kzalloc(sizeof(*flow), GFP_KERNEL_ACCOUNT);
			if (!flow) {
				err = -ENOMEM;
				goto err_unlink;
			}
			flow->key = r->key[i];
			flow->kind = vmak_key_kind(&flow->key);
			INIT_LIST_HEAD(&flow->rules);
			err = rhashtable_insert_fast(&vdev->flows, &flow->node,
						     vmak_flow_params);
			if (err) {
				kfree(flow);
				goto err_unlink;
			}
			atomic_inc(&vdev->nkind[flow->kind]);
		}
		r->ent[i].flow = flow;
		r->ent[i].rule = r;
		list_add_tail_rcu(&r->ent[i].flow_node, &flow->rules);
	}
	return 0;

err_unlink:
	/* Undo the keys linked so far; this frees r. */
	r->nkeys = i;
	vmak_rule_unlink(vdev, r);
	return err;
}

static bool vmak_addr_zero(const u8 *a, int len)
{
	return !memchr_inv(a, 0, len);
}

static int vmak_rule_key_raw(struct vmak_sock *vs, const struct vmak_rule *req,
			     struct vmak_rule_obj *r)
{
	struct vmak_key *k = &r->key[0];

	if (!ns_capable(sock_net(&vs->sk)->user_ns, CAP_NET_RAW))
		return -EPERM;
	if (req->af != AF_INET && req->af != AF_INET6)
		return -EAFNOSUPPORT;
	if (req->proto != IPPROTO_UDP)
		return -EPROTONOSUPPORT;
	if (!req->dst_port || req->fd)
		return -EINVAL;
	if (req->af == AF_INET &&
	    (!vmak_addr_zero(req->dst_addr + 4, 12) ||
	     !vmak_addr_zero(req->src_addr + 4, 12)))
		return -EINVAL;
	/* A source address without a port (or the reverse) is allowed. */
	k->af = req->af;
	k->proto = IPPROTO_UDP;
	k->dport = req->dst_port;
	k->sport = req->src_port;
	memcpy(k->daddr, req->dst_addr, 16);
	memcpy(k->saddr, req->src_addr, 16);
	r->nkeys = 1;
	return 0;
}

static bool vmak_sk_joined_v4(struct sock *usk, __be32 group)
{
	struct ip_mc_socklist *ml;
	bool found = false;

	rcu_read_lock();
	for (ml = rcu_dereference(inet_sk(usk)->mc_list); ml;
	     ml = rcu_dereference(ml->next_rcu)) {
		if (ml->multi.imr_multiaddr.s_addr == group) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

static bool vmak_sk_joined_v6(struct sock *usk, const struct in6_addr *group)
{
#if IS_ENABLED(CONFIG_IPV6)
	struct ipv6_mc_socklist *ml;
	bool found = false;

	if (usk->sk_family != AF_INET6)
		return false;
	rcu_read_lock();
	for (ml = rcu_dereference(inet6_sk(usk)->ipv6_mc_list); ml;
	     ml = rcu_dereference(ml->next)) {
		if (ipv6_addr_equal(&ml->addr, group)) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
#else
	return false;
#endif
}

static void vmak_key_v4(struct vmak_key *k, __be32 daddr, __be16 dport,
			__be32 saddr, __be16 sport)
{
	memset(k, 0, sizeof(*k));
	k->af = AF_INET;
	k->proto = IPPROTO_UDP;
	k->dport = dport;
	k->sport = sport;
	memcpy(k->daddr, &daddr, 4);
	memcpy(k->saddr, &saddr, 4);
}

static void vmak_key_v6(struct vmak_key *k, const struct in6_addr *daddr,
			__be16 dport, const struct in6_addr *saddr, __be16 sport)
{
	memset(k, 0, sizeof(*k));
	k->af = AF_INET6;
	k->proto = IPPROTO_UDP;
	k->dport = dport;
	k->sport = sport;
	memcpy(k->daddr, daddr, 16);
	if (saddr)
		memcpy(k->saddr, saddr, 16);
}

static int vmak_rule_key_socket(struct vmak_sock *vs,
				const struct vmak_rule *req,
				struct vmak_rule_obj *r)
{
	struct net *net = sock_net(&vs->sk);
	struct inet_sock *inet;
	struct socket *sock;
	struct sock *usk;
	bool connected;
	__be16 lport;
	int err;

	if (req->proto || req->dst_port || req->src_port ||
	    !vmak_addr_zero(req->src_addr, 16))
		return -EINVAL;

	sock = sockfd_lookup(req->fd, &err);
	if (!sock)
		return err;
	usk = sock->sk;
	err = -EINVAL;
	if (!usk || (usk->sk_family != AF_INET && usk->sk_family != AF_INET6) ||
	    usk->sk_type != SOCK_DGRAM || usk->sk_protocol != IPPROTO_UDP)
		goto out_put;
	if (!net_eq(sock_net(usk), net)) {
		err = -EPERM;
		goto out_put;
	}
	lock_sock(usk);
	inet = inet_sk(usk);
	lport = inet->inet_sport;
	connected = usk->sk_state == TCP_ESTABLISHED;
	if (!inet->inet_num || sk_unhashed(usk)) {
		err = -EINVAL;		/* not bound */
		goto out_release;
	}
	r->exclusive = !ns_capable(net->user_ns, CAP_NET_RAW);
	if (r->exclusive && usk->sk_reuse != SK_NO_REUSE) {
		err = -EPERM;		/* others may share the port */
		goto out_release;
	}

	if (req->af) {			/* a multicast group it joined */
		if (req->af == AF_INET &&
		    vmak_addr_zero(req->dst_addr + 4, 12) &&
		    ipv4_is_multicast(*(__be32 *)req->dst_addr) &&
		    vmak_sk_joined_v4(usk, *(__be32 *)req->dst_addr)) {
			vmak_key_v4(&r->key[0], *(__be32 *)req->dst_addr, lport,
				    0, 0);
		} else if (req->af == AF_INET6 &&
			   ipv6_addr_is_multicast((struct in6_addr *)req->dst_addr) &&
			   vmak_sk_joined_v6(usk, (struct in6_addr *)req->dst_addr)) {
			vmak_key_v6(&r->key[0], (struct in6_addr *)req->dst_addr,
				    lport, NULL, 0);
		} else {
			err = -EADDRNOTAVAIL;	/* not joined */
			goto out_release;
		}
		r->nkeys = 1;
	} else if (!vmak_addr_zero(req->dst_addr, 16)) {
		goto out_release;
	} else if (usk->sk_family == AF_INET) {
		vmak_key_v4(&r->key[0], inet->inet_rcv_saddr, lport,
			    connected ? inet->inet_daddr : 0,
			    connected ? inet->inet_dport : 0);
		r->nkeys = 1;
#if IS_ENABLED(CONFIG_IPV6)
	} else {
		const struct in6_addr *laddr = &usk->sk_v6_rcv_saddr;
		const struct in6_addr *raddr = &usk->sk_v6_daddr;
		int type = ipv6_addr_type(laddr);

		if (type == IPV6_ADDR_MAPPED) {
			vmak_key_v4(&r->key[0], laddr->s6_addr32[3], lport,
				    connected ? raddr->s6_addr32[3] : 0,
				    connected ? inet->inet_dport : 0);
			r->nkeys = 1;
		} else {
			vmak_key_v6(&r->key[0], laddr, lport,
				    connected ? raddr : NULL,
				    connected ? inet->inet_dport : 0);
			r->nkeys = 1;
			/* A dual-stack wildcard socket takes IPv4 too. */
			if (type == IPV6_ADDR_ANY && !ipv6_only_sock(usk) &&
			    !connected) {
				vmak_key_v4(&r->key[1], 0, lport, 0, 0);
				r->nkeys = 2;
			}
		}
#endif
	}
	sock_hold(usk);
	r->usk = usk;
	err = 0;

out_release:
	release_sock(usk);
out_put:
	sockfd_put(sock);
	return err;
}

int vmak_rule_add(struct vmak_sock *vs, const struct vmak_rule *req)
{
	struct vmak_rule_obj *r;
	int err;

	if (req->flags || req->pad)
		return -EINVAL;
	if (req->kind != VMAK_RULE_SOCKET && req->kind != VMAK_RULE_RAW)
		return -EINVAL;
	/* Checked again under vmak_mutex; this gives the clearer error. */
	switch (READ_ONCE(vs->state)) {
	case VMAK_STATE_READY:
		return -EINVAL;
	case VMAK_STATE_UNBOUND:
		return -ENETDOWN;
	}
	if (vs->nrules >= vmak_max_rules)
		return -ENOSPC;

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	r->vs = vs;
	r->cookie = req->cookie;
	r->kind = req->kind;
	if (req->kind == VMAK_RULE_RAW)
		err = vmak_rule_key_raw(vs, req, r);
	else
		err = vmak_rule_key_socket(vs, req, r);
	if (err)
		goto err_free;

	mutex_lock(&vmak_mutex);
	if (vs->state != VMAK_STATE_BOUND) {
		err = vs->state == VMAK_STATE_UNBOUND ? -ENETDOWN : -EINVAL;
		goto err_unlock;
	}
	err = xa_insert(&vs->rules, req->cookie, r, GFP_KERNEL_ACCOUNT);
	if (err) {
		err = err == -EBUSY ? -EEXIST : err;
		goto err_unlock;
	}
	err = vmak_rule_link(vs->vdev, r);
	if (err)
		xa_erase(&vs->rules, req->cookie);	/* r is already freed */
	else
		vs->nrules++;
	mutex_unlock(&vmak_mutex);
	return err;

err_unlock:
	mutex_unlock(&vmak_mutex);
err_free:
	if (r->usk)
		sock_put(r->usk);
	kfree(r);
	return err;
}

int vmak_rule_del(struct vmak_sock *vs, u32 cookie)
{
	struct vmak_rule_obj *r;
	int err = -ENOENT;

	mutex_lock(&vmak_mutex);
	if (vs->state == VMAK_STATE_BOUND) {
		r = xa_erase(&vs->rules, cookie);
		if (r) {
			vs->nrules--;
			vmak_rule_unlink(vs->vdev, r);
			err = 0;
		}
	} else {
		err = vs->state == VMAK_STATE_UNBOUND ? -ENETDOWN : -EINVAL;
	}
	mutex_unlock(&vmak_mutex);
	return err;
}

/*
 * Describe the rules of vs from cookie *cookie on, in cookie order, until
 * fn() fails; *cookie is then the cookie of the rule not described.
 * Called under vmak_mutex.
 */
int vmak_rule_walk(struct vmak_sock *vs, unsigned long *cookie,
		   int (*fn)(const struct vmak_rule_info *ri, void *arg),
		   void *arg)
{
	struct vmak_rule_info ri;
	struct vmak_rule_obj *r;
	int err;

	lockdep_assert_held(&vmak_mutex);
	xa_for_each_start(&vs->rules, *cookie, r, *cookie) {
		ri.cookie = r->cookie;
		ri.kind = r->kind;
		ri.nkeys = r->nkeys;
		memcpy(ri.key, r->key, sizeof(ri.key));
		err = fn(&ri, arg);
		if (err)
			return err;
	}
	return 0;
}

/* The bound device, under rcu_read_lock(); NULL when not bound. */
struct net_device *vmak_sock_dev_rcu(struct vmak_sock *vs)
{
	struct vmak_dev *vdev = READ_ONCE(vs->vdev);

	return vdev ? vdev->dev : NULL;
}

static bool vmak_addr_local(struct net *net, u8 af, const u8 *a)
{
	if (af == AF_INET)
		return inet_addr_type(net, *(const __be32 *)a) == RTN_LOCAL;
#if IS_ENABLED(CONFIG_IPV6)
	return ipv6_chk_addr(net, (const struct in6_addr *)a, NULL, 0);
#else
	return false;
#endif
}

/*
 * May an unprivileged ring send a datagram with this flow? Only as one of
 * its socket-derived rules' sockets would: from the socket's address (any
 * local one if it is bound to the wildcard) and port, and to its peer if
 * it is connected. Group (multicast) keys allow nothing. Under RCU.
 */
bool vmak_tx_flow_allowed(struct vmak_sock *vs, const struct vmak_key *f)
{
	int alen = f->af == AF_INET ? 4 : 16;
	struct vmak_rule_obj *r;
	unsigned long cookie;
	int i;

	xa_for_each(&vs->rules, cookie, r) {
		if (r->kind != VMAK_RULE_SOCKET || !vmak_rule_live(r))
			continue;
		for (i = 0; i < r->nkeys; i++) {
			const struct vmak_key *k = &r->key[i];

			if (k->af != f->af || k->dport != f->sport)
				continue;
			if (vmak_addr_zero(k->daddr, alen)) {
				if (!vmak_addr_local(sock_net(&vs->sk), f->af, f->saddr))
					continue;
			} else if (memcmp(k->daddr, f->saddr, alen) ||
				   (f->af == AF_INET ?
				    ipv4_is_multicast(*(__be32 *)k->daddr) :
				    ipv6_addr_is_multicast((struct in6_addr *)k->daddr))) {
				continue;
			}
			if (k->sport && (k->sport != f->dport ||
					 memcmp(k->saddr, f->daddr, alen)))
				continue;
			return true;
		}
	}
	return false;
}

/* ---- bind and unbind ---------------------------------------------------- */

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
	if (dev->reg_state != NETREG_REGISTERED) {
		err = -ENODEV;
		goto out;
	}
	vdev = vmak_dev_get(dev);
	if (IS_ERR(vdev)) {
		err = PTR_ERR(vdev);
		goto out;
	}
	if (shared)
		smp_store_release(&vs->umem, shared);
	WRITE_ONCE(vs->vdev, vdev);
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
	struct vmak_rule_obj *r;
	unsigned long cookie;

	xa_for_each(&vs->rules, cookie, r) {
		xa_erase(&vs->rules, cookie);
		vmak_rule_unlink(vs->vdev, r);
	}
	vs->nrules = 0;
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

int __init vmak_rx_init(void)
{
	int err;

	vmak_keys_hold();
	err = register_netdevice_notifier(&vmak_netdev_notifier);
	if (err)
		vmak_keys_drop();
	return err;
}

/* Every socket is gone: only lingering devices remain. */
void vmak_rx_exit(void)
{
	struct vmak_dev *vdev, *tmp;

	cancel_delayed_work_sync(&vmak_reaper);
	mutex_lock(&vmak_mutex);
	list_for_each_entry_safe(vdev, tmp, &vmak_devs, node) {
		WARN_ON_ONCE(!list_empty(&vdev->socks));
		vmak_dev_release(vdev);
	}
	mutex_unlock(&vmak_mutex);
	unregister_netdevice_notifier(&vmak_netdev_notifier);
	vmak_keys_drop();
}
