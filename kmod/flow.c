// SPDX-License-Identifier: GPL-2.0
/*
 * Rules and the flow table.
 *
 * A rule is added by setsockopt(VMAK_RULE_ADD) on a bound ring: a raw rule
 * (any 5-tuple; CAP_NET_RAW) or a socket-derived one, whose key the module
 * reads from a UDP socket the caller holds: its bound address and port,
 * its peer if connected, or a multicast group it joined. Each key is
 * linked into a flow of the device's table; the hook looks flows up per
 * packet (rx.c), and an unprivileged ring's TX checks its frames against
 * the same socket-derived keys (vmak_tx_flow_allowed()).
 *
 * Writers hold vmak_mutex; rules and flows are freed after a grace period,
 * and a socket-derived rule holds its socket until then.
 */
#include <linux/igmp.h>
#include <linux/rhashtable.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <net/l3mdev.h>
#include <net/inet_sock.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/udp.h>

#include "vmak.h"
#include "dev.h"
#include "flow.h"

const struct rhashtable_params vmak_flow_params = {
	.key_len		= sizeof(struct vmak_key),
	.key_offset		= offsetof(struct vmak_flow, key),
	.head_offset		= offsetof(struct vmak_flow, node),
	.automatic_shrinking	= true,
};

int vmak_flow_table_init(struct vmak_flow_table *ft)
{
	int i;

	for (i = 0; i < VMAK_KEY_KINDS; i++)
		atomic_set(&ft->nkind[i], 0);
	return rhashtable_init(&ft->flows, &vmak_flow_params);
}

/* After a grace period, with no rule left. */
void vmak_flow_table_destroy(struct vmak_flow_table *ft)
{
	rhashtable_destroy(&ft->flows);
}

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

/* Index a socket rule's keys by local port, for the TX check. */
static int vmak_port_link(struct vmak_rule_obj *r)
{
	struct xarray *ports = &r->vs->tx_ports;
	struct vmak_port *p;
	int i, err;

	for (i = 0; i < r->nkeys; i++) {
		unsigned long port = ntohs(r->key[i].dport);

		p = xa_load(ports, port);
		if (!p) {
			p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
			if (!p)
				return -ENOMEM;
			err = xa_insert(ports, port, p, GFP_KERNEL_ACCOUNT);
			if (err) {
				kfree(p);
				return err;
			}
		}
		hlist_add_head_rcu(&r->ent[i].port_node, &p->keys);
	}
	return 0;
}

static void vmak_port_unlink(struct vmak_rule_obj *r)
{
	struct xarray *ports = &r->vs->tx_ports;
	struct vmak_port *p;
	int i;

	for (i = 0; i < r->nkeys; i++) {
		unsigned long port = ntohs(r->key[i].dport);

		if (hlist_unhashed(&r->ent[i].port_node))
			continue;	/* never linked */
		hlist_del_rcu(&r->ent[i].port_node);
		p = xa_load(ports, port);
		if (p && hlist_empty(&p->keys)) {
			xa_erase(ports, port);
			kfree_rcu(p, rcu);
		}
	}
}

/*
 * Unlink one rule from the flow table and the port index (the caller took
 * it out of vs->rules); it is freed after a grace period.
 */
static void vmak_rule_unlink(struct vmak_flow_table *ft, struct vmak_rule_obj *r)
{
	int i;

	vmak_port_unlink(r);
	for (i = 0; i < r->nkeys; i++) {
		struct vmak_flow *flow = r->ent[i].flow;

		if (!flow)
			continue;
		list_del_rcu(&r->ent[i].flow_node);
		if (list_empty(&flow->rules)) {
			rhashtable_remove_fast(&ft->flows, &flow->node,
					       vmak_flow_params);
			atomic_dec(&ft->nkind[flow->kind]);
			kfree_rcu(flow, rcu);
		}
		r->ent[i].flow = NULL;
	}
	call_rcu(&r->rcu, vmak_rule_free_rcu);
}

static int vmak_rule_link(struct vmak_flow_table *ft, struct vmak_rule_obj *r)
{
	int i, err;

	for (i = 0; i < r->nkeys; i++) {
		struct vmak_rule_ent *ent;
		struct vmak_flow *flow;

		flow = rhashtable_lookup_fast(&ft->flows, &r->key[i],
					      vmak_flow_params);
		if (flow) {
			list_for_each_entry(ent, &flow->rules, flow_node) {
				/*
				 * One rule per ring and flow, but for sockets
				 * that share a group and port: each gets its
				 * own copy, on one ring as on several.
				 */
				if (ent->rule->vs == r->vs &&
				    (!r->group || !ent->rule->group ||
				     ent->rule->usk == r->usk)) {
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
			err = rhashtable_insert_fast(&ft->flows, &flow->node,
						     vmak_flow_params);
			if (err) {
				kfree(flow);
				goto err_unlink;
			}
			atomic_inc(&ft->nkind[flow->kind]);
		}
		r->ent[i].flow = flow;
		r->ent[i].rule = r;
		list_add_tail_rcu(&r->ent[i].flow_node, &flow->rules);
	}
	return 0;

err_unlink:
	/* Undo the keys linked so far; this frees r. */
	r->nkeys = i;
	vmak_rule_unlink(ft, r);
	return err;
}

static int vmak_rule_key_raw(struct vmak_sock *vs, const struct vmak_rule *req,
			     struct vmak_rule_obj *r)
{
	struct vmak_key *k = &r->key[0];

	if (!vmak_sock_capable(vs, CAP_NET_RAW))
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
	/*
	 * A source is matched on the packet's whole 4-tuple: a source address
	 * without its port (or the reverse), or a source with a wildcard
	 * destination address, could never match.
	 */
	if (!vmak_addr_zero(req->src_addr, 16) != !!req->src_port)
		return -EINVAL;
	if (req->src_port && vmak_addr_zero(req->dst_addr, 16))
		return -EINVAL;
	k->af = req->af;
	k->proto = IPPROTO_UDP;
	k->dport = req->dst_port;
	k->sport = req->src_port;
	memcpy(k->daddr, req->dst_addr, 16);
	memcpy(k->saddr, req->src_addr, 16);
	r->nkeys = 1;
	return 0;
}

/*
 * Has usk joined the group of key k on the device ifindex? Under RCU or
 * not; the hook asks for every packet of a group rule, as the kernel's
 * own multicast delivery walks the socket's list.
 */
bool vmak_sk_joined(struct sock *usk, const struct vmak_key *k, int ifindex)
{
	bool found = false;

	rcu_read_lock();
	if (k->af == AF_INET) {
		struct ip_mc_socklist *ml;

		for (ml = rcu_dereference(inet_sk(usk)->mc_list); ml;
		     ml = rcu_dereference(ml->next_rcu)) {
			if (!memcmp(&ml->multi.imr_multiaddr.s_addr, k->daddr, 4) &&
			    ml->multi.imr_ifindex == ifindex) {
				found = true;
				break;
			}
		}
#if IS_ENABLED(CONFIG_IPV6)
	} else if (usk->sk_family == AF_INET6) {
		struct ipv6_mc_socklist *ml;

		for (ml = rcu_dereference(inet6_sk(usk)->ipv6_mc_list); ml;
		     ml = rcu_dereference(ml->next)) {
			if (!memcmp(&ml->addr, k->daddr, 16) &&
			    ml->ifindex == ifindex) {
				found = true;
				break;
			}
		}
#endif
	}
	rcu_read_unlock();
	return found;
}

void vmak_sk_sig_take(const struct sock *sk, struct vmak_sk_sig *s)
{
	memset(s, 0, sizeof(*s));
	s->num = sk->sk_num;
	s->dport = sk->sk_dport;
	s->bound_dev_if = sk->sk_bound_dev_if;
	s->rcv_saddr = sk->sk_rcv_saddr;
	s->daddr = sk->sk_daddr;
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6) {
		s->v6_rcv_saddr = sk->sk_v6_rcv_saddr;
		s->v6_daddr = sk->sk_v6_daddr;
	}
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

/* The key of a multicast group the socket joined (req->af names it). */
/* usk is bound to the wildcard address or to k's destination address. */
static bool vmak_sk_bound_to(struct sock *usk, const struct vmak_key *k)
{
	if (usk->sk_family == AF_INET)
		return !usk->sk_rcv_saddr ||
		       !memcmp(&usk->sk_rcv_saddr, k->daddr, 4);
#if IS_ENABLED(CONFIG_IPV6)
	if (ipv6_addr_any(&usk->sk_v6_rcv_saddr))
		return true;
	if (k->af == AF_INET)
		return ipv6_addr_v4mapped(&usk->sk_v6_rcv_saddr) &&
		       !memcmp(&usk->sk_v6_rcv_saddr.s6_addr32[3], k->daddr, 4);
	return !memcmp(&usk->sk_v6_rcv_saddr, k->daddr, 16);
#else
	return false;
#endif
}

static int vmak_rule_key_group(struct sock *usk, const struct vmak_rule *req,
			       struct vmak_rule_obj *r, int ifindex)
{
	__be16 lport = inet_sk(usk)->inet_sport;

	if (req->af == AF_INET &&
	    vmak_addr_zero(req->dst_addr + 4, 12) &&
	    ipv4_is_multicast(*(__be32 *)req->dst_addr)) {
		vmak_key_v4(&r->key[0], *(__be32 *)req->dst_addr, lport, 0, 0);
	} else if (req->af == AF_INET6 &&
		   ipv6_addr_is_multicast((struct in6_addr *)req->dst_addr)) {
		vmak_key_v6(&r->key[0], (struct in6_addr *)req->dst_addr,
			    lport, NULL, 0);
	} else {
		return -EADDRNOTAVAIL;	/* not a group */
	}
	/* Joined on the ring's device; the hook checks it again. */
	if (!vmak_sk_joined(usk, &r->key[0], ifindex))
		return -EADDRNOTAVAIL;
	/* Bound to the wildcard or to the group itself, or it does not
	 * receive the group's datagrams (another user may, bound to it).
	 */
	if (!vmak_sk_bound_to(usk, &r->key[0]))
		return -EADDRNOTAVAIL;
	r->nkeys = 1;
	r->group = true;
	return 0;
}

/*
 * The keys of the socket's own binding: its local address and port, and
 * its peer if it is connected. A dual-stack IPv6 wildcard socket gets an
 * IPv4 key too.
 */
static void vmak_rule_key_bound(struct sock *usk, struct vmak_rule_obj *r)
{
	struct inet_sock *inet = inet_sk(usk);
	bool connected = usk->sk_state == TCP_ESTABLISHED;
	__be16 lport = inet->inet_sport;
	__be16 rport = connected ? inet->inet_dport : 0;

	r->nkeys = 1;
	if (usk->sk_family == AF_INET) {
		vmak_key_v4(&r->key[0], inet->inet_rcv_saddr, lport,
			    connected ? inet->inet_daddr : 0, rport);
#if IS_ENABLED(CONFIG_IPV6)
	} else {
		const struct in6_addr *laddr = &usk->sk_v6_rcv_saddr;
		const struct in6_addr *raddr = &usk->sk_v6_daddr;
		int type = ipv6_addr_type(laddr);

		if (type == IPV6_ADDR_MAPPED) {
			vmak_key_v4(&r->key[0], laddr->s6_addr32[3], lport,
				    connected ? raddr->s6_addr32[3] : 0, rport);
			return;
		}
		vmak_key_v6(&r->key[0], laddr, lport,
			    connected ? raddr : NULL, rport);
		if (type == IPV6_ADDR_ANY && !ipv6_only_sock(usk) &&
		    !connected) {
			vmak_key_v4(&r->key[1], 0, lport, 0, 0);
			r->nkeys = 2;
		}
#endif
	}
}

/* A bound UDP socket of the ring's netns that the caller holds. */
static struct socket *vmak_rule_sock_get(struct vmak_sock *vs, int fd,
					 int *err)
{
	struct socket *sock;
	struct sock *usk;

	sock = sockfd_lookup(fd, err);
	if (!sock)
		return NULL;
	usk = sock->sk;
	*err = -EINVAL;
	if (!usk || (usk->sk_family != AF_INET && usk->sk_family != AF_INET6) ||
	    usk->sk_type != SOCK_DGRAM || usk->sk_protocol != IPPROTO_UDP)
		goto err_put;
	*err = -EPERM;
	if (!net_eq(sock_net(usk), sock_net(&vs->sk)))
		goto err_put;
	*err = 0;
	return sock;

err_put:
	sockfd_put(sock);
	return NULL;
}

/*
 * An unprivileged ring may only take what its socket really owns: no
 * socket that may bind addresses the host lacks, no socket bound to
 * another device (or VRF) than the ring's, and keys whose addresses are
 * the host's own, or groups the socket joined on the ring's device.
 * Called with usk locked and its keys in r.
 */
static int vmak_rule_sock_owned(struct vmak_sock *vs, struct sock *usk,
				struct vmak_rule_obj *r)
{
	struct net *net = sock_net(usk);
	unsigned int gen = atomic_read(&vmak_addr_gen);
	int i, bound_if = usk->sk_bound_dev_if, master = 0;
	struct net_device *dev;

	if (vmak_sk_nonlocal_bind(usk))
		return -EPERM;		/* IP_FREEBIND, IP_TRANSPARENT */
	rcu_read_lock();
	dev = vmak_sock_dev_rcu(vs);
	if (dev)
		master = l3mdev_master_ifindex_rcu(dev);
	rcu_read_unlock();
	if (!dev)
		return -ENETDOWN;
	if (bound_if && bound_if != vs->ifindex && bound_if != master)
		return -EPERM;		/* SO_BINDTODEVICE elsewhere */
	for (i = 0; i < r->nkeys; i++) {
		struct vmak_key *k = &r->key[i];

		if (vmak_addr_zero(k->daddr, k->af == AF_INET ? 4 : 16))
			continue;	/* wildcard: checked per packet */
		if (k->af == AF_INET ? ipv4_is_multicast(*(__be32 *)k->daddr) :
		    ipv6_addr_is_multicast((struct in6_addr *)k->daddr)) {
			/* Bound to a group: it must have joined it here. */
			if (!vmak_sk_joined(usk, k, vs->ifindex))
				return -EADDRNOTAVAIL;
			r->group = true;
			continue;
		}
		if (!vmak_addr_local(net, k->af, k->daddr))
			return -EADDRNOTAVAIL;
		r->local_gen[i] = gen;
	}
	return 0;
}

static int vmak_rule_key_socket(struct vmak_sock *vs,
				const struct vmak_rule *req,
				struct vmak_rule_obj *r)
{
	struct socket *sock;
	struct sock *usk;
	int err;

	if (req->proto || req->dst_port || req->src_port ||
	    !vmak_addr_zero(req->src_addr, 16))
		return -EINVAL;

	sock = vmak_rule_sock_get(vs, req->fd, &err);
	if (!sock)
		return err;
	usk = sock->sk;
	lock_sock(usk);
	if (!inet_sk(usk)->inet_num || sk_unhashed(usk)) {
		err = -EINVAL;		/* not bound */
		goto out_release;
	}
	r->exclusive = !vmak_sock_capable(vs, CAP_NET_RAW);
	if (r->exclusive && usk->sk_reuse != SK_NO_REUSE && !req->af) {
		err = -EPERM;		/* others may share the port */
		goto out_release;
	}
	if (req->af) {
		err = vmak_rule_key_group(usk, req, r, vs->ifindex);
		if (err)
			goto out_release;
		/*
		 * Feed handlers share a group and port with SO_REUSEADDR.
		 * Such a rule takes a packet only while every socket that
		 * would receive it has a rule of its own (vmak_rx_shared()).
		 */
		r->shared = r->exclusive && usk->sk_reuse != SK_NO_REUSE;
	} else if (!vmak_addr_zero(req->dst_addr, 16)) {
		err = -EINVAL;	/* without a group the key is the socket's own */
		goto out_release;
	} else {
		vmak_rule_key_bound(usk, r);
	}
	if (r->exclusive) {
		err = vmak_rule_sock_owned(vs, usk, r);
		if (err)
			goto out_release;
	}
	vmak_sk_sig_take(usk, &r->sig);
	sock_hold(usk);
	r->usk = usk;
	err = 0;

out_release:
	release_sock(usk);
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
	err = vmak_rule_link(&vs->vdev->ft, r);
	if (!err && r->kind == VMAK_RULE_SOCKET) {
		err = vmak_port_link(r);
		if (err)
			vmak_rule_unlink(&vs->vdev->ft, r);
	}
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
			vmak_rule_unlink(&vs->vdev->ft, r);
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

/* An address of this host (of net): a local one, not a broadcast. */
bool vmak_addr_local(struct net *net, u8 af, const u8 *a)
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
 * Is key i's destination address still one of the host's? Addresses come
 * and go rarely, so the answer is kept until the next address change
 * anywhere (vmak_addr_gen); the hook pays a lookup only after one.
 */
bool vmak_rule_local(struct vmak_rule_obj *r, int i, struct net *net)
{
	unsigned int gen = atomic_read(&vmak_addr_gen);

	if (READ_ONCE(r->local_gen[i]) == gen)
		return true;
	if (!vmak_addr_local(net, r->key[i].af, r->key[i].daddr))
		return false;
	WRITE_ONCE(r->local_gen[i], gen);
	return true;
}

/*
 * Is a packet's destination one of the host's, for a wildcard key? The
 * last IPv4 answer that was yes is kept, in one word so that hooks on
 * other CPUs read it whole, until the next address change: a wildcard
 * socket's traffic is mostly to one address, and a FIB lookup a packet is
 * most of what the hook would otherwise spend on it.
 */
bool vmak_rule_dst_local(struct vmak_rule_obj *r, struct net *net, u8 af,
			 const u8 *daddr)
{
	u64 gen = (u32)atomic_read(&vmak_addr_gen);
	u32 a;

	if (af != AF_INET)
		return vmak_addr_local(net, af, daddr);
	memcpy(&a, daddr, sizeof(a));
	if (READ_ONCE(r->wild_local) == (gen << 32 | a))
		return true;
	if (!vmak_addr_local(net, af, daddr))
		return false;
	WRITE_ONCE(r->wild_local, gen << 32 | a);
	return true;
}

/*
 * May an unprivileged ring send a datagram with this flow? Only as one of
 * its socket-derived rules' sockets would: from the socket's address (any
 * local one if it is bound to the wildcard) and port, and to its peer if
 * it is connected; the address must be the host's now. Group (multicast)
 * rules allow nothing. Under RCU; one index lookup, then the few keys of
 * the ring that have the frame's source port.
 */
bool vmak_tx_flow_allowed(struct vmak_sock *vs, const struct vmak_key *f)
{
	int alen = f->af == AF_INET ? 4 : 16;
	struct net *net = sock_net(&vs->sk);
	struct vmak_rule_ent *ent;
	struct vmak_port *p;

	p = xa_load(&vs->tx_ports, ntohs(f->sport));
	if (!p)
		return false;
	hlist_for_each_entry_rcu(ent, &p->keys, port_node) {
		struct vmak_rule_obj *r = ent->rule;
		int i = ent - r->ent;
		const struct vmak_key *k = &r->key[i];

		if (r->group || k->af != f->af || !vmak_rule_live(r))
			continue;
		/* From the socket's address, which must be the host's (any
		 * of them for a wildcard socket).
		 */
		if (vmak_addr_zero(k->daddr, alen)) {
			if (!vmak_addr_local(net, f->af, f->saddr))
				continue;
		} else if (memcmp(k->daddr, f->saddr, alen) ||
			   !vmak_rule_local(r, i, net)) {
			continue;
		}
		if (k->sport && (k->sport != f->dport ||
				 memcmp(k->saddr, f->daddr, alen)))
			continue;
		return true;
	}
	return false;
}

/* Unlink and free every rule of vs (unbind). Called under vmak_mutex. */
void vmak_rules_flush(struct vmak_sock *vs)
{
	struct vmak_rule_obj *r;
	unsigned long cookie;

	lockdep_assert_held(&vmak_mutex);
	xa_for_each(&vs->rules, cookie, r) {
		xa_erase(&vs->rules, cookie);
		vmak_rule_unlink(&vs->vdev->ft, r);
	}
	vs->nrules = 0;
}
