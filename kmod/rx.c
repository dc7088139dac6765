// SPDX-License-Identifier: GPL-2.0
/*
 * Receive: the packet path. A netfilter NF_NETDEV_INGRESS hook on each
 * device with a bound ring (dev.c) parses UDP over IPv4 and IPv6, looks
 * the packet up in the device's flow table (flow.h) and copies it into the
 * rings whose rules match.
 *
 * A key is one of three kinds, looked up in this order: full (dst and src
 * address and port), dst (dst address and port, any source) and port (dst
 * port, any address). Per-kind counts let the hook skip kinds with no
 * keys, so a packet costs at most three O(1) lookups however many rules
 * exist.
 *
 * A flow holds the rules of every socket that asked for that key. A
 * packet goes to each of those sockets bound to its receive queue (or to
 * any queue): one copy per socket, so several processes may receive one
 * multicast group. A packet that reached at least one ring is stolen from
 * the stack; one that no ring could take is dropped, or passed on when
 * the socket asked for that.
 *
 * The hook runs in softirq under RCU and never sleeps. Each ring's RX
 * producer and FILL consumer, its counters and its wake moderation are
 * under that ring's rx_lock; sockets are SOCK_RCU_FREE, so a ring stays
 * valid for a grace period after its rules are unlinked.
 */
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter.h>
#include <linux/udp.h>
#include <net/busy_poll.h>
#include <net/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/route.h>

#include "vmak.h"
#include "dev.h"
#include "flow.h"

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
	/* Not recomputed: 0 ("none") is valid for IPv4 only, and the
	 * descriptor says VMAK_RX_CSUM_NONE for both.
	 */
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
 * Take a chunk from the FILL ring: its address for the frame, or false if
 * the ring is empty. Entries outside the UMEM are skipped and counted, at
 * most a ring's worth per call (this runs in softirq). The consumer index
 * is published by the caller.
 */
static bool vmak_fq_take(struct vmak_sock *vs, u64 *addr)
	__must_hold(&vs->rx_lock)
{
	struct vmak_umem *umem = vs->umem;
	struct vmak_queue *fq = vs->fq;
	u32 skipped;
	u64 a;

	for (skipped = 0; skipped < fq->nentries && vmak_q_peek(fq); skipped++) {
		a = READ_ONCE(*(u64 *)vmak_q_desc(fq, fq->cached_cons));
		vmak_q_consume(fq);
		if (a < umem->size) {
			*addr = (a & ~((u64)umem->chunk_size - 1)) + umem->headroom;
			return true;
		}
		vs->stats.rx_invalid_fill++;
	}
	vs->stats.rx_fill_empty++;
	vmak_q_set_flag(fq, VMAK_RING_NEED_WAKEUP);
	return false;
}

/*
 * Copy the datagram (one per GSO segment) into chunks from the FILL ring
 * and post RX descriptors.
 */
static enum vmak_verdict vmak_rx_copy(struct vmak_sock *vs,
				      const struct sk_buff *skb,
				      const struct vmak_pkt *p, u32 cookie,
				      u16 queue, u32 hash, u64 now)
	__must_hold(&vs->rx_lock)
{
	struct vmak_umem *umem = vs->umem;
	struct vmak_queue *rx = vs->rx, *fq = vs->fq;
	u32 hdr_len = p->mac_len + p->l4_off + sizeof(struct udphdr);
	u32 payload = p->len - p->l4_off - sizeof(struct udphdr);
	u32 seg = payload, nseg = 1, room = umem->chunk_size - umem->headroom;
	u64 ts_hw = ktime_to_ns(skb_hwtstamps((struct sk_buff *)skb)->hwtstamp);
	/* A local sender's datagram whose checksum was never filled in. */
	u16 csum = skb->ip_summed == CHECKSUM_PARTIAL ? VMAK_RX_CSUM_NONE : 0;
	u32 i;

	if (skb_is_gso(skb)) {
		/*
		 * Only UDP GSO (UDP_SEGMENT, GRO of UDP) is a train of
		 * datagrams. UFO is one datagram that IP would fragment, and
		 * tunnel GSO is the inner protocol's: cut, they would be
		 * corrupt. A segment size no sender of datagrams uses (a tap
		 * may claim 1) would cost a copy per byte: both are too big.
		 */
		if (!(skb_shinfo(skb)->gso_type & SKB_GSO_UDP_L4)) {
			vs->stats.rx_too_big++;
			return VMAK_NO_ROOM;
		}
		if (skb_shinfo(skb)->gso_size &&
		    payload > skb_shinfo(skb)->gso_size) {
			seg = skb_shinfo(skb)->gso_size;
			nseg = DIV_ROUND_UP(payload, seg);
		}
		if (nseg > UDP_MAX_SEGMENTS) {
			vs->stats.rx_too_big++;
			return VMAK_NO_ROOM;
		}
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

		if (!vmak_fq_take(vs, &addr)) {
			if (i)
				break;
			vmak_q_release(fq);	/* skipped entries */
			return VMAK_NO_ROOM;
		}
		frame = umem->kaddr + addr;

		if (nseg == 1 && skb_headlen(skb) >= p->len) {
			/* linear: from the link-layer header on */
			vmak_copy_frame(frame, skb->data - p->mac_len, flen);
		} else if (nseg == 1) {
			skb_copy_bits(skb, -(int)p->mac_len, frame, flen);
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
			   (nseg > 1 ? VMAK_RX_SEGMENT | VMAK_RX_CSUM_NONE : 0) |
			   csum;
		d->hash = hash;
		d->reserved = 0;
		d->ts_sw = now;
		d->ts_hw = ts_hw;
		vs->stats.rx_packets++;
		vs->stats.rx_bytes += flen;
	}
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
	vs->batch = false;
	spin_unlock_bh(&vs->rx_lock);
	vs->sk.sk_data_ready(&vs->sk);
	sock_put(&vs->sk);		/* taken when armed */
	return HRTIMER_NORESTART;
}

/* Forget what was unsignalled and the timer's pending wake. */
static void vmak_mod_forget(struct vmak_sock *vs)
	__must_hold(&vs->rx_lock)
{
	vs->unsignalled = 0;
	/* The timer's own wake would be spurious now. */
	if (vs->timer_armed && hrtimer_try_to_cancel(&vs->mod_timer) == 1) {
		vs->timer_armed = false;
		/* May be the last reference after close: the socket is then
		 * freed after a grace period (SOCK_RCU_FREE), so our lock
		 * stays valid until we drop it.
		 */
		sock_put(&vs->sk);
	}
}

/* Wake now: the arm and the batch are spent too. */
static void vmak_mod_signal(struct vmak_sock *vs)
	__must_hold(&vs->rx_lock)
{
	vmak_mod_forget(vs);
	vs->armed = false;
	vs->batch = false;
}

/*
 * Account n descriptors just posted; true if the sleepers should wake now.
 * An arm wins over a batch, and a batch over the moderation.
 */
static bool vmak_rx_moderate(struct vmak_sock *vs, u32 n)
	__must_hold(&vs->rx_lock)
{
	u32 count = vs->batch ? vs->batch_count : vs->mod_count;
	u32 usec = vs->batch ? vs->batch_usec : vs->mod_usec;

	if (vs->armed || (!count && !usec)) {
		vmak_mod_signal(vs);
		return true;
	}
	vs->unsignalled += n;
	if (count && vs->unsignalled >= count) {
		vmak_mod_signal(vs);
		return true;
	}
	if (usec && !vs->timer_armed) {
		/* A socket closed under this in-flight hook has no references
		 * left to take: wake now instead of arming.
		 */
		if (!refcount_inc_not_zero(&vs->sk.sk_refcnt))
			return true;
		vs->timer_armed = true;
		hrtimer_start(&vs->mod_timer, ns_to_ktime(usec * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_SOFT);
	}
	return false;
}

/*
 * One-shot wake (libvma's CQ_ARM, as verbs' req_notify_cq): wake the
 * sleepers on the next descriptor whatever the moderation or a batch. If
 * descriptors are waiting on the ring that no wake told anyone of, wake
 * at once too: the arm then still holds for the next descriptor, for an
 * arming sleeper that takes these and sleeps again while a batch set
 * after this call would hold its wake.
 */
void vmak_rx_arm(struct vmak_sock *vs)
{
	struct vmak_queue *rx = vmak_sock_queue(&vs->rx);
	bool wake;

	spin_lock_bh(&vs->rx_lock);
	/* Posted, unsignalled and still there (not read by a busy poller). */
	wake = vs->unsignalled > 0 && rx && vmak_q_nonempty_peek(rx);
	if (wake)
		vmak_mod_signal(vs);
	vs->unsignalled = 0;
	vs->armed = true;
	spin_unlock_bh(&vs->rx_lock);
	if (wake)
		vs->sk.sk_data_ready(&vs->sk);
}

/*
 * A batch (VMAK_RX_BATCH): until the next wake, whatever causes it, the
 * sleepers wake once count descriptors were posted after this call, or
 * usec after the first of them. For a reader that drained the ring and
 * needs count more before it can return; an arm still wakes at the next
 * descriptor. What was pending goes, and with it the timer of an earlier
 * window (its usec would hold this one's). Both 0: the batch ends (its
 * reader woke for another reason and looks at the ring itself), no wake.
 */
int vmak_rx_set_batch(struct vmak_sock *vs, u32 count, u32 usec)
{
	if (count > VMAK_MOD_COUNT_MAX || usec > VMAK_MOD_USEC_MAX)
		return -EINVAL;
	spin_lock_bh(&vs->rx_lock);
	vmak_mod_forget(vs);
	vs->batch = count || usec;
	vs->batch_count = count;
	vs->batch_usec = usec;
	spin_unlock_bh(&vs->rx_lock);
	return 0;
}

int vmak_rx_set_moderation(struct vmak_sock *vs, u32 count, u32 usec)
{
	if (count > VMAK_MOD_COUNT_MAX || usec > VMAK_MOD_USEC_MAX)
		return -EINVAL;
	spin_lock_bh(&vs->rx_lock);
	vs->mod_count = count;
	vs->mod_usec = usec;
	/* Whatever waited under the old setting is signalled now: forget it,
	 * and the wake the old setting's timer owed.
	 */
	vmak_mod_signal(vs);
	spin_unlock_bh(&vs->rx_lock);
	vs->sk.sk_data_ready(&vs->sk);
	return 0;
}

void vmak_rx_sock_init(struct vmak_sock *vs)
{
	vmak_hrtimer_setup(&vs->mod_timer, vmak_mod_timer_fn, CLOCK_MONOTONIC,
			   HRTIMER_MODE_REL_SOFT);
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

/* What one ring did with a packet its rule matched. */
enum vmak_outcome {
	VMAK_SKIPPED,		/* another queue, no RX ring, a dead rule */
	VMAK_COPIED,
	VMAK_REFUSED,		/* no room: counted, dropped */
	VMAK_PASSED,		/* no room, and the ring asked for the stack */
};

/*
 * Is a packet that matched an unprivileged ring's rule for this host, as
 * the socket would receive it? Not a frame for another host's MAC (a
 * bridge or macvlan port, promiscuous mode), not one for a VLAN
 * subinterface, and addressed to one of the host's addresses: the key's
 * (checked again after any address change) or, for a wildcard socket, the
 * packet's own destination, looked up per packet.
 */
static bool vmak_rx_for_host(struct vmak_rule_obj *r, int key,
			     const struct sk_buff *skb,
			     const struct vmak_pkt *p)
{
	struct net *net = dev_net(skb->dev);
	const struct vmak_key *k = &r->key[key];

	if (skb_vlan_tag_present(skb))
		return false;
	if (r->group)		/* membership: vmak_rule_live() */
		return skb->pkt_type == PACKET_MULTICAST;
	if (!vmak_addr_zero(k->daddr, k->af == AF_INET ? 4 : 16))
		return skb->pkt_type == PACKET_HOST &&
		       vmak_rule_local(r, key, net);
	if (skb->pkt_type == PACKET_HOST)
		return vmak_rule_dst_local(r, net, p->key.af, p->key.daddr);
	/* A wildcard IPv4 socket receives the subnet's broadcasts too. */
	return skb->pkt_type == PACKET_BROADCAST && !p->v6 &&
	       inet_addr_type(net, *(__be32 *)p->key.daddr) == RTN_BROADCAST;
}

/*
 * Offer the packet to the ring of one matching rule (key is the index of
 * the rule's key that matched). *hash and *now are computed at most once
 * per packet, for the first ring that needs them.
 */
static enum vmak_outcome vmak_rx_deliver(struct vmak_rule_obj *r, int key,
					 struct sk_buff *skb,
					 const struct vmak_pkt *p,
					 u32 *hash, u64 *now, bool shared)
{
	struct vmak_sock *vs = r->vs;
	enum vmak_outcome out;
	bool wake = false, stamp;
	u64 posted;
	u16 q;

	/* A ring without RX takes nothing: its socket rules only vouch for
	 * what it sends.
	 */
	if (!vs->rx)
		return VMAK_SKIPPED;
	q = vmak_rx_queue(vs, skb, hash);
	if (vs->queue_id != VMAK_QUEUE_ANY && vs->queue_id != q)
		return VMAK_SKIPPED;
	if (!vmak_rule_live(r)) {
		spin_lock(&vs->rx_lock);
		vs->stats.rx_rule_dead++;
		spin_unlock(&vs->rx_lock);
		return VMAK_SKIPPED;
	}
	if (r->exclusive && !vmak_rx_for_host(r, key, skb, p)) {
		spin_lock(&vs->rx_lock);
		vs->stats.rx_foreign++;
		spin_unlock(&vs->rx_lock);
		return VMAK_SKIPPED;
	}
	/* The clock is read once, and only if a ring asks. */
	stamp = vs->bind_flags & VMAK_BIND_RX_TIMESTAMP;
	if (stamp && !*now)
		*now = vmak_rx_tstamp(skb);

	spin_lock(&vs->rx_lock);
	posted = vs->stats.rx_packets;
	if (vmak_rx_copy(vs, skb, p, r->cookie, q, *hash,
			 stamp ? *now : 0) == VMAK_TAKEN) {
		out = VMAK_COPIED;
		wake = vmak_rx_moderate(vs, vs->stats.rx_packets - posted);
	} else if (vs->bind_flags & VMAK_BIND_PASS_ON_DROP) {
		/*
		 * In a shared group the stack gets it only if no ring took
		 * it (vmak_hook()); the copy's failure is counted already.
		 */
		if (!shared)
			vs->stats.rx_passed++;
		out = VMAK_PASSED;
	} else {
		out = VMAK_REFUSED;
	}
	spin_unlock(&vs->rx_lock);
	vmak_note_napi(vs, skb);
	if (wake)
		vs->sk.sk_data_ready(&vs->sk);
	return out;
}

/* Is usk one that the stack would give this multicast packet? */
static bool vmak_mc_receiver(const struct sock *usk, const struct net *net,
			     const struct vmak_pkt *p, u16 port)
{
	if (!net_eq(sock_net(usk), net) || inet_sk(usk)->inet_num != port ||
	    (usk->sk_family != AF_INET && usk->sk_family != AF_INET6))
		return false;
	if (usk->sk_family == AF_INET) {
		__be32 a = inet_sk(usk)->inet_rcv_saddr;

		return !p->v6 && (!a || !memcmp(&a, p->key.daddr, 4));
	}
#if IS_ENABLED(CONFIG_IPV6)
	{
		const struct in6_addr *a = &usk->sk_v6_rcv_saddr;

		if (ipv6_addr_any(a))
			return p->v6 || !usk->sk_ipv6only;
		if (p->v6)
			return !memcmp(a, p->key.daddr, 16);
		return ipv6_addr_v4mapped(a) &&
		       !memcmp(&a->s6_addr32[3], p->key.daddr, 4);
	}
#else
	return false;
#endif
}

/* Could vs's ring take a datagram now? A look, not a promise. */
static bool vmak_rx_room(struct vmak_sock *vs)
{
	bool room;

	spin_lock(&vs->rx_lock);
	room = vmak_q_free(vs->rx) && vmak_q_peek(vs->fq);
	if (!room)
		vs->stats.rx_passed++;
	spin_unlock(&vs->rx_lock);
	return room;
}

enum vmak_share {
	VMAK_SHARE_STACK,	/* the stack alone delivers it */
	VMAK_SHARE_RINGS,	/* every receiver's ring takes its copy */
};

/*
 * Shared group rules (SO_REUSEADDR sockets of unprivileged owners) take a
 * packet only if every socket the stack would deliver it to has a live
 * rule in this flow: then each gets its copy through its ring and none
 * loses it. Otherwise (a socket without a rule, another user's plain
 * socket say) the packet goes to the stack alone, so that no socket gets
 * it twice. The same when a ring that passes what it cannot take
 * (VMAK_BIND_PASS_ON_DROP) is full: its socket then gets the packet from
 * the stack, and so do the others, rather than it losing what they
 * took. Like the stack's own multicast delivery, this walks the port's
 * hash slot under its lock.
 */
static enum vmak_share vmak_rx_shared(struct vmak_flow *flow,
				      struct sk_buff *skb,
				      const struct vmak_pkt *p)
{
	struct net *net = dev_net(skb->dev);
	u16 port = ntohs(p->key.dport);
	struct udp_hslot *hslot = udp_hashslot(vmak_udp_table(net), net, port);
	struct vmak_rule_ent *ent;
	bool ok = true, found;
	struct sock *usk;

	spin_lock(&hslot->lock);
	sk_for_each(usk, &hslot->head) {
		if (!vmak_mc_receiver(usk, net, p, port))
			continue;
		found = false;
		list_for_each_entry_rcu(ent, &flow->rules, flow_node)
			if (ent->rule->usk == usk && vmak_rule_live(ent->rule)) {
				found = true;
				break;
			}
		if (!found) {
			ok = false;
			break;
		}
	}
	spin_unlock(&hslot->lock);
	if (!ok)
		return VMAK_SHARE_STACK;
	list_for_each_entry_rcu(ent, &flow->rules, flow_node) {
		struct vmak_sock *vs = ent->rule->vs;

		if (ent->rule->shared && vs->rx &&
		    (vs->bind_flags & VMAK_BIND_PASS_ON_DROP) &&
		    vmak_rule_live(ent->rule) && !vmak_rx_room(vs))
			ok = false;
	}
	return ok ? VMAK_SHARE_RINGS : VMAK_SHARE_STACK;
}

/*
 * The hook: the first kind with a matching flow decides; every rule of
 * that flow is offered the packet.
 */
unsigned int vmak_hook(void *priv, struct sk_buff *skb,
		       const struct nf_hook_state *state)
{
	struct vmak_dev *vdev = priv;
	bool applied = false, taken = false, pass = false;
	struct vmak_pkt p;
	u32 hash = skb->hash;
	u64 now = 0;
	int kind;

	if (!vmak_parse(skb, &p))
		return NF_ACCEPT;

	for (kind = 0; kind < VMAK_KEY_KINDS && !applied; kind++) {
		struct vmak_rule_ent *ent;
		struct vmak_flow *flow;

		int shared = -1;	/* enum vmak_share, once, if asked */

		flow = vmak_flow_lookup(&vdev->ft, &p.key, kind);
		if (!flow)
			continue;
		list_for_each_entry_rcu(ent, &flow->rules, flow_node) {
			if (ent->rule->shared) {
				if (shared < 0)
					shared = vmak_rx_shared(flow, skb, &p);
				if (shared == VMAK_SHARE_STACK)
					continue;
			}
			switch (vmak_rx_deliver(ent->rule, ent - ent->rule->ent,
						skb, &p, &hash, &now,
						ent->rule->shared)) {
			case VMAK_SKIPPED:
				break;
			case VMAK_COPIED:
				applied = true;
				taken = true;
				break;
			case VMAK_PASSED:
				pass = true;
				fallthrough;
			case VMAK_REFUSED:
				applied = true;
				break;
			}
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
