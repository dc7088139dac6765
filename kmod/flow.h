/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rules and the per-device flow table (flow.c).
 *
 * A rule is what one ring asked for under one cookie: one key, or two for a
 * dual-stack socket. Each key lives in a flow of the bound device's table,
 * an rhashtable of exact keys; a flow lists the rules of every ring that
 * asked for its key. Writers hold vmak_mutex; the hook reads under RCU.
 */
#ifndef _VMAK_FLOW_H
#define _VMAK_FLOW_H

#include <linux/atomic.h>
#include <linux/rhashtable.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "vmak.h"

/* Lookup order of the hook: the most specific key first. */
enum vmak_key_kind {
	VMAK_KEY_FULL,			/* dst and src address and port */
	VMAK_KEY_DST,			/* dst address and port */
	VMAK_KEY_PORT,			/* dst port, any address */
	VMAK_KEY_KINDS,
};

struct vmak_flow {
	struct rhash_head node;
	struct vmak_key key;
	struct list_head rules;		/* struct vmak_rule_ent.flow_node, RCU */
	u8 kind;
	struct rcu_head rcu;
};

struct vmak_rule_obj;

struct vmak_rule_ent {
	struct list_head flow_node;
	struct vmak_flow *flow;
	struct vmak_rule_obj *rule;
	struct hlist_node port_node;	/* socket rules: vmak_port.keys */
};

/*
 * The socket-rule keys of one ring with one local port, found by port in
 * vs->tx_ports: what lets the TX header check cost O(1) in the number of
 * rules. Written under vmak_mutex, read under RCU.
 */
struct vmak_port {
	struct hlist_head keys;		/* vmak_rule_ent.port_node */
	struct rcu_head rcu;
};

/*
 * What a socket-derived key was read from: the socket's binding when the
 * rule was added. The rule speaks for the socket only while the socket
 * still has exactly this binding (connect(), disconnect, a new port,
 * SO_BINDTODEVICE all change it).
 */
struct vmak_sk_sig {
	__be32 daddr, rcv_saddr;
	struct in6_addr v6_daddr, v6_rcv_saddr;	/* AF_INET6 sockets */
	__be16 dport;
	u16 num;
	int bound_dev_if;
};

struct vmak_rule_obj {
	struct vmak_sock *vs;
	u32 cookie;
	u8 kind;			/* VMAK_RULE_* */
	/* Socket-derived: stop matching once the socket is closed, once its
	 * binding differs from sig, or once it left the group (group). For
	 * unprivileged owners (exclusive), also once others may share its
	 * port, and only for packets addressed to this host.
	 */
	struct sock *usk;
	bool exclusive;
	bool group;			/* key[0] is a multicast group */
	bool shared;			/* an unprivileged group rule of a
					 * SO_REUSEADDR socket: vmak_rx_shared()
					 */
	struct vmak_sk_sig sig;
	/* vmak_addr_gen when key[i]'s address was last seen local */
	unsigned int local_gen[VMAK_RULE_KEYS];
	/* A wildcard key's last IPv4 destination seen local, and
	 * vmak_addr_gen then: gen << 32 | address (vmak_rule_dst_local()).
	 */
	u64 wild_local;
	struct vmak_rule_ent ent[VMAK_RULE_KEYS];
	struct vmak_key key[VMAK_RULE_KEYS];
	u8 nkeys;
	struct rcu_head rcu;
};

/* One device's flows; per-kind counts let the hook skip empty kinds. */
struct vmak_flow_table {
	struct rhashtable flows;
	atomic_t nkind[VMAK_KEY_KINDS];
};

extern const struct rhashtable_params vmak_flow_params;

/* The flow of one key of a kind, under RCU (the hook). */
static inline struct vmak_flow *
vmak_flow_lookup(struct vmak_flow_table *ft, const struct vmak_key *pkt,
		 enum vmak_key_kind kind)
{
	struct vmak_key key;

	if (!atomic_read(&ft->nkind[kind]))
		return NULL;
	key = *pkt;
	if (kind != VMAK_KEY_FULL) {
		memset(key.saddr, 0, sizeof(key.saddr));
		key.sport = 0;
	}
	if (kind == VMAK_KEY_PORT)
		memset(key.daddr, 0, sizeof(key.daddr));
	return rhashtable_lookup(&ft->flows, &key, vmak_flow_params);
}

static inline bool vmak_addr_zero(const u8 *a, int len)
{
	return !memchr_inv(a, 0, len);
}

/* flow.c */
int vmak_flow_table_init(struct vmak_flow_table *ft);
void vmak_flow_table_destroy(struct vmak_flow_table *ft);
void vmak_rules_flush(struct vmak_sock *vs);
bool vmak_sk_joined(struct sock *usk, const struct vmak_key *k, int ifindex);
void vmak_sk_sig_take(const struct sock *sk, struct vmak_sk_sig *s);
bool vmak_addr_local(struct net *net, u8 af, const u8 *a);
bool vmak_rule_local(struct vmak_rule_obj *r, int i, struct net *net);
bool vmak_rule_dst_local(struct vmak_rule_obj *r, struct net *net, u8 af,
			 const u8 *daddr);

/* The socket still has the binding its keys were read from. */
static inline bool vmak_sk_sig_same(const struct sock *sk,
				    const struct vmak_sk_sig *s)
{
	if (READ_ONCE(sk->sk_num) != s->num ||
	    READ_ONCE(sk->sk_dport) != s->dport ||
	    READ_ONCE(sk->sk_bound_dev_if) != s->bound_dev_if ||
	    READ_ONCE(sk->sk_rcv_saddr) != s->rcv_saddr ||
	    READ_ONCE(sk->sk_daddr) != s->daddr)
		return false;
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6 &&
	    (!ipv6_addr_equal(&sk->sk_v6_rcv_saddr, &s->v6_rcv_saddr) ||
	     !ipv6_addr_equal(&sk->sk_v6_daddr, &s->v6_daddr)))
		return false;
#endif
	return true;
}

/* Does the rule still speak for its socket? Under RCU, any context. */
static inline bool vmak_rule_live(const struct vmak_rule_obj *r)
{
	struct sock *usk = r->usk;

	if (!usk)
		return true;
	if (sk_unhashed(usk) || !vmak_sk_sig_same(usk, &r->sig))
		return false;
	if (r->group && !vmak_sk_joined(usk, &r->key[0], r->vs->ifindex))
		return false;
	/* SO_REUSEADDR lets sockets of other users share the port (a
	 * shared rule checks them per packet).
	 */
	return !r->exclusive || r->shared || usk->sk_reuse == SK_NO_REUSE;
}

#endif /* _VMAK_FLOW_H */
