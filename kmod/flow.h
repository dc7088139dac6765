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
};

struct vmak_rule_obj {
	struct vmak_sock *vs;
	u32 cookie;
	u8 kind;			/* VMAK_RULE_* */
	/* Socket-derived: stop matching once the socket is closed, or (for
	 * unprivileged owners) once others may share its port.
	 */
	struct sock *usk;
	bool exclusive;
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

/* Does the rule still speak for its socket? Under RCU, any context. */
static inline bool vmak_rule_live(const struct vmak_rule_obj *r)
{
	const struct sock *usk = r->usk;

	if (!usk)
		return true;
	if (sk_unhashed(usk))
		return false;
	/* SO_REUSEADDR lets sockets of other users share the port. */
	return !r->exclusive || usk->sk_reuse == SK_NO_REUSE;
}

/* flow.c */
int vmak_flow_table_init(struct vmak_flow_table *ft);
void vmak_flow_table_destroy(struct vmak_flow_table *ft);
void vmak_rules_flush(struct vmak_sock *vs);

#endif /* _VMAK_FLOW_H */
