// SPDX-License-Identifier: GPL-2.0
/*
 * Transmit: frames described on the TX ring go out on the bound device.
 *
 * A kick (sendmsg) or the rate limiter's work consumes TX descriptors in
 * process context under tx_mutex. Each consumed descriptor first reserves
 * a COMPLETION slot (its address is written there at once); a full
 * COMPLETION ring stops consumption, so no completion is ever lost. The
 * slot is published when the frame is done with: at once for a dummy or
 * a refused descriptor, from the skb destructor for a copied frame, from
 * the zero-copy callback for a frame whose UMEM pages were attached. As
 * frames may finish out of order, finished slots are marked in cq_map and
 * the producer index only moves over a finished prefix: completions come
 * back in TX ring order.
 *
 * A socket stays allocated while skbs are in flight (copy: wmem charge;
 * zero-copy: a reference in the callback's context), and with it the
 * UMEM and its pinned pages.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/math64.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/neighbour.h>
#include <net/route.h>
#include <net/udp.h>

#include "vmak.h"

/* Bytes copied into the linear part of a zero-copy frame (all headers). */
#define VMAK_TX_ZC_COPY		64
/* Frames sent with softirqs held off. */
#define VMAK_TX_BATCH		32
/* Smaller frames are copied whole: attaching pages costs more. */
#define VMAK_TX_COPYBREAK	256

/* ---- completions ---------------------------------------------------------- */

/* Publish slot (any context); the producer moves over finished slots. */
static void vmak_cq_complete(struct vmak_sock *vs, u32 slot)
{
	struct vmak_queue *cq = vs->cq;
	unsigned long flags;
	u32 prod;

	spin_lock_irqsave(&vs->cq_lock, flags);
	vs->cq_map[slot & cq->mask] = 1;
	prod = vs->cq_done;
	while (vs->cq_map[prod & cq->mask]) {
		vs->cq_map[prod & cq->mask] = 0;
		prod++;
	}
	if (prod != vs->cq_done) {
		vs->cq_done = prod;
		vmak_q_publish(cq, prod);
	}
	spin_unlock_irqrestore(&vs->cq_lock, flags);
}

/* Copied frames: the socket's wmem charge keeps vs alive until here. */
static void vmak_tx_destruct(struct sk_buff *skb)
{
	vmak_cq_complete(vmak_sk(skb->sk),
			 (u32)(uintptr_t)skb_shinfo(skb)->destructor_arg);
	sock_wfree(skb);
}

/* Zero-copy frames: the skb's pages are released when this runs. */
struct vmak_tx_zc {
	struct ubuf_info ubuf;
	struct vmak_sock *vs;
	u32 slot;
};

static void vmak_tx_zc_done(struct sk_buff *skb, struct ubuf_info *uarg,
			    bool success)
{
	struct vmak_tx_zc *zc = container_of(uarg, struct vmak_tx_zc, ubuf);

	if (!refcount_dec_and_test(&uarg->refcnt))
		return;
	vmak_cq_complete(zc->vs, zc->slot);
	sock_put(&zc->vs->sk);
	kfree(zc);
}

#ifdef VMAK_HAVE_UBUF_INFO_OPS
static const struct ubuf_info_ops vmak_tx_zc_ops = {
	.complete = vmak_tx_zc_done,
};
#endif

/* ---- building frames -------------------------------------------------------- */

/*
 * An skb with room for linear bytes. Its data comes from the socket's page
 * fragment cache when it fits in a page: a kernel built with init_on_alloc
 * (Debian's are) zeroes every kmalloc'ed skb head, which for a small frame
 * costs more than the frame itself, while a fragment page is zeroed once
 * and then reused as it stands while frames come and go. Called under
 * tx_mutex (the cache's only user) with softirqs off.
 */
static struct sk_buff *vmak_tx_alloc(struct vmak_sock *vs,
				     struct net_device *dev, u32 linear)
{
	u32 hr = LL_RESERVED_SPACE(dev), want = hr + linear + dev->needed_tailroom;
	u32 size = SKB_DATA_ALIGN(want) +
		   SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb;
	void *data;

	if (size <= PAGE_SIZE) {
		data = page_frag_alloc(&vs->tx_frags, size, GFP_ATOMIC);
		if (!data)
			return NULL;
		skb = build_skb(data, size);
		if (!skb) {
			page_frag_free(data);
			return NULL;
		}
	} else {
		skb = alloc_skb(want, GFP_ATOMIC);
		if (!skb)
			return NULL;
	}
	skb_reserve(skb, hr);
	return skb;
}

/*
 * Charge the finished skb to the socket: the wmem charge holds the socket
 * until the skb is freed. After the last change to truesize.
 */
static void vmak_tx_own(struct vmak_sock *vs, struct sk_buff *skb,
			void (*destructor)(struct sk_buff *))
{
	skb->sk = &vs->sk;
	refcount_add(skb->truesize, &vs->sk.sk_wmem_alloc);
	skb->destructor = destructor;
}

static struct sk_buff *vmak_tx_copy(struct vmak_sock *vs, struct net_device *dev,
				    const void *data, u32 len, u32 slot)
{
	struct sk_buff *skb = vmak_tx_alloc(vs, dev, len);

	if (!skb)
		return NULL;
	vmak_copy_frame(skb_put(skb, len), data, len);
	skb_shinfo(skb)->destructor_arg = (void *)(uintptr_t)slot;
	vmak_tx_own(vs, skb, vmak_tx_destruct);
	return skb;
}

/* Headers copied, the rest attached as the UMEM's own pages. */
static struct sk_buff *vmak_tx_zerocopy(struct vmak_sock *vs,
					struct net_device *dev, u64 addr,
					u32 len, u32 slot)
{
	struct vmak_umem *umem = vs->umem;
	struct vmak_tx_zc *zc;
	struct sk_buff *skb;
	u64 off = addr + VMAK_TX_ZC_COPY;
	u32 left = len - VMAK_TX_ZC_COPY;
	int i = 0;

	zc = kzalloc(sizeof(*zc), GFP_ATOMIC);
	if (!zc)
		return NULL;
	skb = vmak_tx_alloc(vs, dev, VMAK_TX_ZC_COPY);
	if (!skb) {
		kfree(zc);
		return NULL;
	}
	skb_put_data(skb, umem->kaddr + addr, VMAK_TX_ZC_COPY);
	while (left) {
		struct page *pg = umem->pgs[off >> PAGE_SHIFT];
		u32 po = offset_in_page(off);
		u32 n = min_t(u32, left, PAGE_SIZE - po);

		get_page(pg);
		skb_fill_page_desc(skb, i++, pg, po, n);
		off += n;
		left -= n;
	}
	skb->len += len - VMAK_TX_ZC_COPY;
	skb->data_len = len - VMAK_TX_ZC_COPY;
	skb->truesize += len - VMAK_TX_ZC_COPY;

#ifdef VMAK_HAVE_UBUF_INFO_OPS
	zc->ubuf.ops = &vmak_tx_zc_ops;
#else
	zc->ubuf.callback = vmak_tx_zc_done;
#endif
	refcount_set(&zc->ubuf.refcnt, 1);
	/* ZEROCOPY_FRAG: whoever keeps the data (a local receiver, a tap)
	 * copies it first and the callback runs then.
	 */
	zc->ubuf.flags = SKBFL_ZEROCOPY_FRAG;
	zc->vs = vs;
	zc->slot = slot;
	sock_hold(&vs->sk);
	skb_zcopy_init(skb, &zc->ubuf);
	vmak_tx_own(vs, skb, sock_wfree);
	return skb;
}

/* ---- the header check of unprivileged rings ------------------------------ */

static bool vmak_tx_headers_ok(struct vmak_sock *vs, struct net_device *dev,
			       const u8 *data, u32 len)
{
	const struct ethhdr *eth = (const struct ethhdr *)data;
	const struct udphdr *uh;
	struct vmak_key f = {};
	u32 off = ETH_HLEN;

	if (!ether_addr_equal(eth->h_source, dev->dev_addr))
		return false;
	if (eth->h_proto == htons(ETH_P_IP)) {
		const struct iphdr *iph = (const struct iphdr *)(data + off);

		if (len < off + sizeof(*iph) + sizeof(*uh) ||
		    iph->version != 4 || iph->ihl != 5 ||
		    iph->protocol != IPPROTO_UDP ||
		    (iph->frag_off & htons(IP_MF | IP_OFFSET)))
			return false;
		f.af = AF_INET;
		memcpy(f.saddr, &iph->saddr, 4);
		memcpy(f.daddr, &iph->daddr, 4);
		off += sizeof(*iph);
	} else if (eth->h_proto == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6 = (const struct ipv6hdr *)(data + off);

		if (len < off + sizeof(*ip6) + sizeof(*uh) ||
		    ip6->version != 6 || ip6->nexthdr != IPPROTO_UDP)
			return false;
		f.af = AF_INET6;
		memcpy(f.saddr, &ip6->saddr, 16);
		memcpy(f.daddr, &ip6->daddr, 16);
		off += sizeof(*ip6);
	} else {
		return false;
	}
	uh = (const struct udphdr *)(data + off);
	f.sport = uh->source;
	f.dport = uh->dest;
	return vmak_tx_flow_allowed(vs, &f);
}

/* ---- rate limit ------------------------------------------------------------ */

/* Refill the bucket; true if a frame of len bytes may go now. */
static bool vmak_tx_tokens(struct vmak_sock *vs, struct net_device *dev,
			   u32 len)
{
	u64 now, burst, need, elapsed;

	if (!vs->rl.rate)
		return true;
	now = ktime_get_ns();
	burst = vs->rl.max_burst_sz;
	if (!burst)	/* two packets, or 10 ms of the rate: a software
			 * pacer wakes late now and then, and must not lose
			 * the time it slept through
			 */
		burst = max_t(u64, 2 * (vs->rl.typical_pkt_sz ?:
					dev->mtu + dev->hard_header_len),
			      vs->rl_bytes_per_sec / 100);
	burst = max_t(u64, burst, len);
	/* What the time since the last refill earned, up to a full bucket:
	 * a frame bigger than a second's worth waits its own time once.
	 */
	elapsed = min_t(u64, now - vs->rl_last_ns,
			div64_u64(burst * NSEC_PER_SEC, vs->rl_bytes_per_sec) + 1);
	vs->rl_tokens += mul_u64_u64_div_u64(elapsed, vs->rl_bytes_per_sec,
					     NSEC_PER_SEC);
	vs->rl_tokens = min(vs->rl_tokens, burst);
	vs->rl_last_ns = now;
	if (vs->rl_tokens >= len) {
		vs->rl_tokens -= len;
		return true;
	}
	/* Come back when the bucket holds enough. */
	need = len - vs->rl_tokens;
	if (!hrtimer_active(&vs->tx_timer)) {
		sock_hold(&vs->sk);
		hrtimer_start(&vs->tx_timer,
			      ns_to_ktime(div64_u64(need * NSEC_PER_SEC,
						    vs->rl_bytes_per_sec) + 1),
			      HRTIMER_MODE_REL_SOFT);
	}
	return false;
}

static enum hrtimer_restart vmak_tx_timer_fn(struct hrtimer *t)
{
	struct vmak_sock *vs = container_of(t, struct vmak_sock, tx_timer);

	/* The timer's socket reference passes to the work. */
	if (!queue_work(vmak_wq, &vs->tx_work))
		sock_put(&vs->sk);
	return HRTIMER_NORESTART;
}

static void vmak_tx_work_fn(struct work_struct *w)
{
	struct vmak_sock *vs = container_of(w, struct vmak_sock, tx_work);

	vmak_tx_run(vs);
	sock_put(&vs->sk);
}

int vmak_tx_set_rate(struct vmak_sock *vs, const struct vmak_rate_limit *rl)
{
	if (rl->pad)
		return -EINVAL;
	mutex_lock(&vs->tx_mutex);
	vs->rl = *rl;
	vs->rl_bytes_per_sec = (u64)rl->rate * 1000 / 8;
	vs->rl_tokens = 0;
	vs->rl_last_ns = ktime_get_ns();
	mutex_unlock(&vs->tx_mutex);
	/* Frames held back for the old rate may go now. */
	if (!rl->rate && READ_ONCE(vs->state) == VMAK_STATE_BOUND && vs->tx)
		vmak_tx_run(vs);
	return 0;
}

void vmak_tx_get_rate(struct vmak_sock *vs, struct vmak_rate_limit *rl)
{
	mutex_lock(&vs->tx_mutex);
	*rl = vs->rl;
	mutex_unlock(&vs->tx_mutex);
}

/* ---- the TX loop ------------------------------------------------------------- */

enum vmak_tx_verdict { VMAK_TX_SENT, VMAK_TX_DONE };

/*
 * Mark where the frame's headers are, as AF_PACKET does for what it sends:
 * drivers, bonding and tunnels read the network and transport header
 * offsets. On an Ethernet device the frame starts with its link-layer
 * header; on one without (tun, tunnels: only CAP_NET_RAW rings send
 * there) with the IP header.
 */
static void vmak_tx_set_headers(struct sk_buff *skb, struct net_device *dev)
{
	u32 nh = dev->type == ARPHRD_ETHER ? ETH_HLEN : dev->hard_header_len;

	skb_reset_mac_header(skb);
	if (dev->type == ARPHRD_ETHER)
		skb->protocol = eth_hdr(skb)->h_proto;
	else
		skb->protocol = skb->len && (skb->data[0] >> 4) == 6 ?
				htons(ETH_P_IPV6) : htons(ETH_P_IP);
	skb_set_network_header(skb, nh);
	/* The IP header is in the linear part (copied, or the zero-copy
	 * head): read it there rather than run the flow dissector per frame.
	 */
	if (skb->protocol == htons(ETH_P_IP) &&
	    skb_headlen(skb) >= nh + sizeof(struct iphdr))
		skb_set_transport_header(skb, nh + ip_hdr(skb)->ihl * 4);
	else if (skb->protocol == htons(ETH_P_IPV6) &&
		 skb_headlen(skb) >= nh + sizeof(struct ipv6hdr))
		skb_set_transport_header(skb, nh + sizeof(struct ipv6hdr));
}

/* A descriptor the device can send: known options, a frame inside a chunk. */
static bool vmak_tx_desc_ok(struct vmak_sock *vs, struct net_device *dev,
			    const struct vmak_tx_desc *d)
{
	struct vmak_umem *umem = vs->umem;

	return !(d->options & ~VMAK_TX_DUMMY) && d->len >= ETH_HLEN &&
	       d->len <= dev->mtu + dev->hard_header_len &&
	       d->addr < umem->size &&
	       (d->addr & (umem->chunk_size - 1)) + d->len <= umem->chunk_size;
}

static enum vmak_tx_verdict vmak_tx_one(struct vmak_sock *vs,
					struct net_device *dev,
					const struct vmak_tx_desc *d, u32 slot)
{
	struct vmak_umem *umem = vs->umem;
	struct vmak_statistics *st = &vs->stats;
	struct sk_buff *skb;
	u32 ntxq;
	u16 q;
	int ret;

	if (!vmak_tx_desc_ok(vs, dev, d)) {
		st->tx_invalid++;
		return VMAK_TX_DONE;
	}
	if (d->options & VMAK_TX_DUMMY) {
		st->tx_dummy++;
		return VMAK_TX_DONE;
	}
	if (vs->tx_zc && d->len > VMAK_TX_COPYBREAK)
		skb = vmak_tx_zerocopy(vs, dev, d->addr, d->len, slot);
	else
		skb = vmak_tx_copy(vs, dev, umem->kaddr + d->addr, d->len, slot);
	if (!skb) {
		st->tx_error++;
		return VMAK_TX_DONE;
	}
	/* Checked in the copy (the headers are always in the linear part):
	 * user space may rewrite the chunk at any time.
	 */
	if (!vs->tx_raw &&
	    !vmak_tx_headers_ok(vs, dev, skb->data, skb_headlen(skb))) {
		st->tx_header_drop++;
		kfree_skb(skb);		/* completes the slot */
		return VMAK_TX_SENT;
	}
	skb->dev = dev;
	skb->priority = READ_ONCE(vs->sk.sk_priority);
	skb->mark = READ_ONCE(vs->sk.sk_mark);
	vmak_tx_set_headers(skb, dev);
	/* The device may be unregistering under us (we only hold RCU): it
	 * then has no TX queues left, and the frame goes nowhere.
	 */
	ntxq = READ_ONCE(dev->real_num_tx_queues);
	if (unlikely(!ntxq)) {
		st->tx_error++;
		kfree_skb(skb);		/* completes the slot */
		return VMAK_TX_SENT;
	}
	if (vs->queue_id != VMAK_QUEUE_ANY && vs->queue_id < ntxq)
		q = vs->queue_id;
	else
		q = raw_smp_processor_id() % ntxq;

	/* From here the skb owns the slot: its end completes it. */
	ret = __dev_direct_xmit(skb, q);
	if (ret == NETDEV_TX_BUSY)
		kfree_skb(skb);		/* a stopped queue: not retried */
	if (ret == NETDEV_TX_OK || ret == NET_XMIT_CN) {
		st->tx_packets++;
		st->tx_bytes += d->len;
	} else {
		st->tx_error++;
	}
	return VMAK_TX_SENT;
}

/*
 * Consume the TX ring. 0; -EAGAIN if a full COMPLETION ring stopped us;
 * -ENXIO before bind, -ENETDOWN after the device left, -ENOBUFS without a
 * TX ring.
 */
int vmak_tx_run(struct vmak_sock *vs)
{
	struct vmak_queue *tx = vmak_sock_queue(&vs->tx), *cq;
	struct net_device *dev;
	struct vmak_tx_desc d;
	u32 slot, batch = 0, budget;
	int err = 0;

	if (!tx)
		return -ENOBUFS;
	/* A ring's worth per kick: a producer index that keeps running
	 * ahead (user space lying) cannot hold the CPU.
	 */
	budget = tx->nentries;
	mutex_lock(&vs->tx_mutex);
	rcu_read_lock();
	dev = vmak_sock_dev_rcu(vs);
	if (!dev) {
		err = READ_ONCE(vs->state) == VMAK_STATE_READY ? -ENXIO : -ENETDOWN;
		goto out;
	}
	cq = vs->cq;		/* bound: set up before bind, never changed */
	/*
	 * Softirqs stay off for a batch: what the device's transmit raises
	 * (a veth peer's receive, completions) then runs once per batch, not
	 * once per frame. Hence GFP_ATOMIC for the skbs.
	 */
	local_bh_disable();
	while (vmak_q_peek(tx)) {
		if (!budget--) {
			err = -EAGAIN;
			break;
		}
		/* Unbound meanwhile (the device is going): stop here. */
		if (unlikely(vmak_sock_dev_rcu(vs) != dev)) {
			err = -ENETDOWN;
			break;
		}
		if (++batch > VMAK_TX_BATCH) {
			/* Run what the batch raised, and let others in: a kick
			 * may be a ring's worth (2^20) of frames.
			 */
			local_bh_enable();
			rcu_read_unlock();
			cond_resched();
			rcu_read_lock();
			if (unlikely(vmak_sock_dev_rcu(vs) != dev)) {
				err = -ENETDOWN;	/* unbound meanwhile */
				local_bh_disable();
				break;
			}
			local_bh_disable();
			batch = 0;
		}
		if (!vmak_q_free(cq)) {
			vs->stats.tx_cq_full++;
			err = -EAGAIN;
			break;
		}
		memcpy(&d, vmak_q_desc(tx, tx->cached_cons), sizeof(d));
		/* Only a frame that will go waits for tokens: a garbage length
		 * is refused at once, not paced.
		 */
		if (!(d.options & VMAK_TX_DUMMY) && vmak_tx_desc_ok(vs, dev, &d) &&
		    !vmak_tx_tokens(vs, dev, d.len))
			break;
		vmak_q_consume(tx);
		slot = cq->cached_prod;
		*(u64 *)vmak_q_reserve(cq) = d.addr;
		if (vmak_tx_one(vs, dev, &d, slot) == VMAK_TX_DONE)
			vmak_cq_complete(vs, slot);
	}
	local_bh_enable();
	vmak_q_release(tx);
out:
	rcu_read_unlock();
	mutex_unlock(&vs->tx_mutex);
	return err;
}

/* At bind: completion bookkeeping, mode and privilege. */
int vmak_tx_bind(struct vmak_sock *vs, struct net_device *dev, u16 flags)
{
	if (!vs->tx)
		return 0;
	vs->tx_raw = vmak_sock_capable(vs, CAP_NET_RAW);
	/* The header check knows Ethernet only: an unprivileged ring sends
	 * nowhere else (on an L3 device its "Ethernet header" would be the
	 * IP header, with a source address of the user's choosing).
	 */
	if (!vs->tx_raw &&
	    (dev->type != ARPHRD_ETHER || dev->hard_header_len != ETH_HLEN))
		return -EOPNOTSUPP;
	if ((flags & VMAK_BIND_TX_ZEROCOPY) && !(dev->features & NETIF_F_SG))
		return -EOPNOTSUPP;
	/* A bind that failed after this may be retried: allocate once. */
	if (!vs->cq_map)
		vs->cq_map = kvzalloc(vs->cq->nentries, GFP_KERNEL_ACCOUNT);
	if (!vs->cq_map)
		return -ENOMEM;
	/* Copy unless asked: on a virtual device the peer copies anyway. */
	vs->tx_zc = flags & VMAK_BIND_TX_ZEROCOPY;
	/* Nothing sends without a kick (or the rate limiter's timer). */
	vmak_q_set_flag(vs->tx, VMAK_RING_NEED_WAKEUP);
	return 0;
}

void vmak_tx_sock_init(struct vmak_sock *vs)
{
	mutex_init(&vs->tx_mutex);
	spin_lock_init(&vs->cq_lock);
	vmak_hrtimer_setup(&vs->tx_timer, vmak_tx_timer_fn, CLOCK_MONOTONIC,
			   HRTIMER_MODE_REL_SOFT);
	INIT_WORK(&vs->tx_work, vmak_tx_work_fn);
}

/* On close, after unbind: no timer or work may outlive the socket's fd. */
void vmak_tx_sock_release(struct vmak_sock *vs)
{
	/*
	 * Twice: a work that was running while we waited may have armed the
	 * timer again (it started while bound), possibly for a long time at a
	 * low rate; the timer may then have queued the work once more. That
	 * work finds the socket unbound and arms nothing.
	 */
	for (int i = 0; i < 2; i++) {
		if (hrtimer_cancel(&vs->tx_timer))
			__sock_put(&vs->sk);	/* the caller still holds one */
		if (cancel_work_sync(&vs->tx_work))
			__sock_put(&vs->sk);
	}
}

void vmak_tx_sock_destruct(struct vmak_sock *vs)
{
	/* Frames still in flight hold their own page references. */
	vmak_page_frag_drain(&vs->tx_frags);
	kvfree(vs->cq_map);
}

/* ---- network header ---------------------------------------------------------- */

static int vmak_nh_neigh(struct dst_entry *dst, const void *daddr,
			 struct net_device *dev, u8 *ha)
{
	struct neighbour *n = dst_neigh_lookup(dst, daddr);
	int err = 0;

	if (!n)
		return -ENOMEM;
	if (READ_ONCE(n->nud_state) & NUD_VALID) {
		neigh_ha_snapshot(ha, n, dev);
	} else {
		neigh_event_send(n, NULL);	/* start resolving */
		err = -EAGAIN;
	}
	neigh_release(n);
	return err;
}

static int vmak_nh_v4(struct sock *usk, struct vmak_net_header *h,
		      int ifindex)
{
	struct inet_sock *inet = inet_sk(usk);
	struct ethhdr *eth = (struct ethhdr *)h->hdr;
	struct iphdr *iph = (struct iphdr *)(eth + 1);
	struct udphdr *uh = (struct udphdr *)(iph + 1);
	struct flowi4 fl4;
	struct rtable *rt;
	__be32 nexthop;
	u8 pmtudisc;
	int err;

	rt = ip_route_output_ports(sock_net(usk), &fl4, usk, inet->inet_daddr,
				   inet->inet_saddr, inet->inet_dport,
				   inet->inet_sport, IPPROTO_UDP,
				   READ_ONCE(inet->tos) & IPTOS_TOS_MASK,
				   usk->sk_bound_dev_if);
	if (IS_ERR(rt))
		return PTR_ERR(rt);
	if (rt->dst.dev->ifindex != ifindex) {
		err = -EXDEV;
		goto out;
	}
	nexthop = rt_nexthop(rt, fl4.daddr);
	err = vmak_nh_neigh(&rt->dst, &nexthop, rt->dst.dev, eth->h_dest);
	if (err)
		goto out;
	ether_addr_copy(eth->h_source, rt->dst.dev->dev_addr);
	eth->h_proto = htons(ETH_P_IP);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = READ_ONCE(inet->tos);
	/* as __ip_make_skb(): DO and PROBE always; the library sends
	 * nothing larger than the path takes through us
	 */
	pmtudisc = READ_ONCE(inet->pmtudisc);
	iph->frag_off = pmtudisc == IP_PMTUDISC_DO ||
			pmtudisc == IP_PMTUDISC_PROBE ||
			ip_dont_fragment(usk, &rt->dst) ? htons(IP_DF) : 0;
	if (ipv4_is_multicast(fl4.daddr))
		iph->ttl = READ_ONCE(inet->mc_ttl);
	else if (READ_ONCE(inet->uc_ttl) >= 0)
		iph->ttl = READ_ONCE(inet->uc_ttl);
	else
		iph->ttl = ip4_dst_hoplimit(&rt->dst);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = fl4.saddr;
	iph->daddr = fl4.daddr;
	uh->source = inet->inet_sport;
	uh->dest = inet->inet_dport;
	h->l3_off = ETH_HLEN;
	h->l4_off = ETH_HLEN + sizeof(*iph);
	h->len = h->l4_off + sizeof(*uh);
out:
	ip_rt_put(rt);
	return err;
}

#if IS_ENABLED(CONFIG_IPV6)
static int vmak_nh_v6(struct sock *usk, struct vmak_net_header *h,
		      int ifindex)
{
	struct ipv6_pinfo *np = inet6_sk(usk);
	struct ethhdr *eth = (struct ethhdr *)h->hdr;
	struct ipv6hdr *ip6 = (struct ipv6hdr *)(eth + 1);
	struct udphdr *uh = (struct udphdr *)(ip6 + 1);
	const struct in6_addr *nexthop;
	struct dst_entry *dst;
	struct flowi6 fl6 = {};
	int err;

	fl6.flowi6_proto = IPPROTO_UDP;
	fl6.daddr = usk->sk_v6_daddr;
	fl6.saddr = np->saddr;
	fl6.flowi6_oif = usk->sk_bound_dev_if;
	fl6.flowi6_mark = usk->sk_mark;
	fl6.fl6_dport = inet_sk(usk)->inet_dport;
	fl6.fl6_sport = inet_sk(usk)->inet_sport;
	fl6.flowi6_uid = usk->sk_uid;
	dst = ip6_dst_lookup_flow(sock_net(usk), usk, &fl6, NULL);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	if (dst->dev->ifindex != ifindex) {
		err = -EXDEV;
		goto out;
	}
	nexthop = rt6_nexthop(dst_rt6_info(dst), &fl6.daddr);
	err = vmak_nh_neigh(dst, nexthop, dst->dev, eth->h_dest);
	if (err)
		goto out;
	ether_addr_copy(eth->h_source, dst->dev->dev_addr);
	eth->h_proto = htons(ETH_P_IPV6);
	ip6_flow_hdr(ip6, np->tclass, 0);
	ip6->nexthdr = IPPROTO_UDP;
	ip6->hop_limit = ip6_sk_dst_hoplimit(np, &fl6, dst);
	ip6->saddr = fl6.saddr;
	ip6->daddr = fl6.daddr;
	uh->source = inet_sk(usk)->inet_sport;
	uh->dest = inet_sk(usk)->inet_dport;
	h->l3_off = ETH_HLEN;
	h->l4_off = ETH_HLEN + sizeof(*ip6);
	h->len = h->l4_off + sizeof(*uh);
out:
	dst_release(dst);
	return err;
}
#endif

/* getsockopt(VMAK_NET_HEADER): see uapi/linux/vmak.h. */
int vmak_net_header(struct vmak_sock *vs, struct vmak_net_header *h)
{
	struct socket *sock;
	struct sock *usk;
	int ifindex, err;

	mutex_lock(&vmak_mutex);
	ifindex = vs->state == VMAK_STATE_BOUND ? vs->ifindex : 0;
	mutex_unlock(&vmak_mutex);
	if (!ifindex)
		return vs->state == VMAK_STATE_READY ? -ENXIO : -ENETDOWN;

	sock = sockfd_lookup(h->fd, &err);
	if (!sock)
		return err;
	usk = sock->sk;
	err = -EINVAL;
	if (!usk || usk->sk_protocol != IPPROTO_UDP || sock->type != SOCK_DGRAM ||
	    (usk->sk_family != AF_INET && usk->sk_family != AF_INET6))
		goto out_put;
	err = -EXDEV;
	if (!net_eq(sock_net(usk), sock_net(&vs->sk)))
		goto out_put;

	memset(h->hdr, 0, sizeof(h->hdr));
	lock_sock(usk);
	if (usk->sk_state != TCP_ESTABLISHED)
		err = -ENOTCONN;
#if IS_ENABLED(CONFIG_IPV6)
	else if (usk->sk_family == AF_INET6 &&
		 !ipv6_addr_v4mapped(&usk->sk_v6_daddr))
		err = vmak_nh_v6(usk, h, ifindex);
#endif
	else
		err = vmak_nh_v4(usk, h, ifindex);
	release_sock(usk);
out_put:
	sockfd_put(sock);
	return err;
}
