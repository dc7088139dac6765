// SPDX-License-Identifier: GPL-2.0
/*
 * The "vmak" generic netlink family (Documentation/netlink/specs/vmak.yaml):
 * module info, ring get/dump/set, rule dump, ring notifications.
 *
 * Every vmak socket is a ring with a system-wide id, kept in vmak_rings
 * from socket() to close(). Lookups run under RCU and take a socket
 * reference (sockets are SOCK_RCU_FREE); a ring's fields are then read
 * under vmak_mutex, which orders them against bind, rules and device
 * removal, and rx_lock for the counters. Ring sizes and the UMEM are
 * published once with release stores and stay until the socket is freed.
 */
#include <linux/module.h>
#include <linux/pid_namespace.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "vmak.h"

static struct genl_family vmak_genl_family;

static DEFINE_XARRAY_ALLOC1(vmak_rings);
static u32 vmak_ring_next;
/* Bumped when a ring comes or goes: a dump that saw it change says so. */
static atomic_t vmak_rings_gen = ATOMIC_INIT(1);

enum { VMAK_MCGRP_MONITOR_IDX };

static const struct genl_multicast_group vmak_mcgrps[] = {
	[VMAK_MCGRP_MONITOR_IDX] = { .name = VMAK_MCGRP_MONITOR },
};

/* ---- ring registry -------------------------------------------------------- */

int vmak_ring_register(struct vmak_sock *vs)
{
	int err;

	err = xa_alloc_cyclic(&vmak_rings, &vs->id, vs, XA_LIMIT(1, INT_MAX),
			      &vmak_ring_next, GFP_KERNEL);
	if (err < 0)
		return err;
	atomic_inc(&vmak_rings_gen);
	vmak_nl_notify(vs, VMAK_CMD_RING_CREATE_NTF);
	return 0;
}

void vmak_ring_unregister(struct vmak_sock *vs)
{
	vmak_nl_notify(vs, VMAK_CMD_RING_DELETE_NTF);
	xa_erase(&vmak_rings, vs->id);
	atomic_inc(&vmak_rings_gen);
}

/*
 * The first ring of net with an id >= *id, referenced; *id is set to its
 * id. NULL when there is none.
 */
static struct vmak_sock *vmak_ring_find(struct net *net, unsigned long *id)
{
	struct vmak_sock *vs;

	rcu_read_lock();
	xa_for_each_start(&vmak_rings, *id, vs, *id) {
		if (net_eq(sock_net(&vs->sk), net) &&
		    refcount_inc_not_zero(&vs->sk.sk_refcnt))
			break;
	}
	rcu_read_unlock();
	return vs;
}

static struct vmak_sock *vmak_ring_get(struct net *net, u32 id)
{
	unsigned long i = id;
	struct vmak_sock *vs = vmak_ring_find(net, &i);

	if (vs && i != id) {
		sock_put(&vs->sk);
		vs = NULL;
	}
	return vs;
}

/* ---- ring messages -------------------------------------------------------- */

/* Whose view a message is written for: ids are translated into these. */
struct vmak_nl_view {
	struct pid_namespace *pid_ns;
	struct user_namespace *user_ns;
};

static void vmak_nl_view_current(struct vmak_nl_view *v)
{
	v->pid_ns = task_active_pid_ns(current);
	v->user_ns = current_user_ns();
}

static int vmak_nl_put_key(struct sk_buff *msg, const struct vmak_key *k)
{
	int alen = k->af == AF_INET ? 4 : 16;
	static const u8 zero[16];
	struct nlattr *nest;

	nest = nla_nest_start(msg, VMAK_A_RULE_KEY);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(msg, VMAK_A_KEY_AF, k->af) ||
	    nla_put_be16(msg, VMAK_A_KEY_DST_PORT, k->dport))
		goto err;
	if (memcmp(k->daddr, zero, alen) &&
	    nla_put(msg, VMAK_A_KEY_DST_ADDR, alen, k->daddr))
		goto err;
	if (k->sport &&
	    (nla_put(msg, VMAK_A_KEY_SRC_ADDR, alen, k->saddr) ||
	     nla_put_be16(msg, VMAK_A_KEY_SRC_PORT, k->sport)))
		goto err;
	nla_nest_end(msg, nest);
	return 0;
err:
	nla_nest_cancel(msg, nest);
	return -EMSGSIZE;
}

/* The cookie, kind and keys of one rule, into the current nest. */
static int vmak_nl_put_rule_body(struct sk_buff *msg,
				 const struct vmak_rule_info *ri)
{
	int i;

	if (nla_put_u32(msg, VMAK_A_RULE_COOKIE, ri->cookie) ||
	    nla_put_u32(msg, VMAK_A_RULE_KIND, ri->kind))
		return -EMSGSIZE;
	for (i = 0; i < ri->nkeys; i++)
		if (vmak_nl_put_key(msg, &ri->key[i]))
			return -EMSGSIZE;
	return 0;
}

struct vmak_nl_rules {
	struct sk_buff *msg;
	int left;
};

static int vmak_nl_put_ring_rule(const struct vmak_rule_info *ri, void *arg)
{
	struct vmak_nl_rules *r = arg;
	struct nlattr *nest;

	if (!r->left--)
		return -ENOSPC;		/* enough: rule-get lists them all */
	nest = nla_nest_start(r->msg, VMAK_A_RING_RULE);
	if (!nest)
		return -EMSGSIZE;
	if (vmak_nl_put_rule_body(r->msg, ri)) {
		nla_nest_cancel(r->msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(r->msg, nest);
	return 0;
}

static int vmak_nl_put_stats(struct sk_buff *msg, struct vmak_sock *vs)
{
	struct vmak_statistics st;
	struct nlattr *nest;
	int i;

	vmak_stats_snapshot(vs, &st);

	nest = nla_nest_start(msg, VMAK_A_RING_STATS);
	if (!nest)
		return -EMSGSIZE;
	/* The nest's attributes follow struct vmak_statistics, in order. */
	BUILD_BUG_ON(VMAK_A_STATS_MAX - VMAK_A_STATS_RX_PACKETS + 1 !=
		     sizeof(st) / sizeof(u64));
	for (i = 0; i < sizeof(st) / sizeof(u64); i++)
		if (nla_put_u64_64bit(msg, VMAK_A_STATS_RX_PACKETS + i,
				      ((const u64 *)&st)[i], VMAK_A_STATS_PAD))
			break;
	if (i < sizeof(st) / sizeof(u64)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

static u32 vmak_q_entries(struct vmak_queue **slot)
{
	struct vmak_queue *q = vmak_sock_queue(slot);

	return q ? q->nentries : 0;
}

/*
 * One ring message. Under vmak_mutex; a delete notification carries only
 * what identifies the ring.
 */
static int vmak_nl_fill_ring(struct sk_buff *msg, struct vmak_sock *vs,
			     const struct vmak_nl_view *view, u32 portid,
			     u32 seq, int flags, u8 cmd,
			     struct netlink_callback *cb)
{
	struct vmak_nl_rules rules = { .msg = msg, .left = VMAK_RING_RULES_MAX };
	unsigned long cookie = 0;
	struct vmak_umem *umem;
	u32 mod_count, mod_usec;
	void *hdr;
	int err;

	lockdep_assert_held(&vmak_mutex);
	hdr = genlmsg_put(msg, portid, seq, &vmak_genl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);

	if (nla_put_u32(msg, VMAK_A_RING_ID, vs->id) ||
	    nla_put_u32(msg, VMAK_A_RING_STATE, vs->state))
		goto err_cancel;
	/* Only for a reader whose namespaces we know (not a multicast). */
	if (view &&
	    (nla_put_u32(msg, VMAK_A_RING_OWNER_PID,
			 pid_nr_ns(vs->owner, view->pid_ns)) ||
	     nla_put_u32(msg, VMAK_A_RING_OWNER_UID,
			 from_kuid_munged(view->user_ns, vmak_sk_uid(&vs->sk)))))
		goto err_cancel;
	if (vs->state == VMAK_STATE_BOUND &&
	    (nla_put_u32(msg, VMAK_A_RING_IFINDEX, vs->ifindex) ||
	     nla_put_u32(msg, VMAK_A_RING_QUEUE_ID, vs->queue_id) ||
	     nla_put_u32(msg, VMAK_A_RING_BIND_FLAGS, vs->bind_flags)))
		goto err_cancel;
	if (cmd == VMAK_CMD_RING_DELETE_NTF)
		goto out;

	/* pairs with smp_store_release() in __vmak_setsockopt() */
	umem = smp_load_acquire(&vs->umem);
	if (nla_put_u32(msg, VMAK_A_RING_RX_SIZE, vmak_q_entries(&vs->rx)) ||
	    nla_put_u32(msg, VMAK_A_RING_TX_SIZE, vmak_q_entries(&vs->tx)) ||
	    nla_put_u32(msg, VMAK_A_RING_FILL_SIZE, vmak_q_entries(&vs->fq)) ||
	    nla_put_u32(msg, VMAK_A_RING_COMPLETION_SIZE, vmak_q_entries(&vs->cq)) ||
	    nla_put_u64_64bit(msg, VMAK_A_RING_UMEM_SIZE, umem ? umem->size : 0,
			      VMAK_A_RING_PAD) ||
	    nla_put_u32(msg, VMAK_A_RING_CHUNK_SIZE, umem ? umem->chunk_size : 0) ||
	    nla_put_u32(msg, VMAK_A_RING_NAPI_ID, READ_ONCE(vs->napi_id)))
		goto err_cancel;

	spin_lock_bh(&vs->rx_lock);
	mod_count = vs->mod_count;
	mod_usec = vs->mod_usec;
	spin_unlock_bh(&vs->rx_lock);
	if (nla_put_u32(msg, VMAK_A_RING_MODERATION_COUNT, mod_count) ||
	    nla_put_u32(msg, VMAK_A_RING_MODERATION_USEC, mod_usec) ||
	    nla_put_u32(msg, VMAK_A_RING_RULE_COUNT, vs->nrules))
		goto err_cancel;

	/* The first rules only (-ENOSPC stops the walk after them). */
	err = vmak_rule_walk(vs, &cookie, vmak_nl_put_ring_rule, &rules);
	if (err == -EMSGSIZE)
		goto err_cancel;

	if (vmak_nl_put_stats(msg, vs))
		goto err_cancel;
out:
	genlmsg_end(msg, hdr);
	return 0;

err_cancel:
	genlmsg_cancel(msg, hdr);
	return -EMSGSIZE;
}

/* Room for a ring message with all its attributes and its first rules. */
#define VMAK_NL_RING_SIZE	(NLMSG_GOODSIZE)

void __vmak_nl_notify(struct vmak_sock *vs, u8 cmd)
{
	struct net *net = sock_net(&vs->sk);
	struct sk_buff *msg;

	lockdep_assert_held(&vmak_mutex);
	if (!genl_has_listeners(&vmak_genl_family, net, VMAK_MCGRP_MONITOR_IDX))
		return;
	msg = genlmsg_new(VMAK_NL_RING_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	/*
	 * One message for every listener of the netns, each in pid and user
	 * namespaces of its own: no owner pid or uid (a listener that wants
	 * them asks ring-get, which answers in its namespaces).
	 */
	if (vmak_nl_fill_ring(msg, vs, NULL, 0, 0, 0, cmd, NULL)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast_netns(&vmak_genl_family, net, msg, 0,
				VMAK_MCGRP_MONITOR_IDX, GFP_KERNEL);
}

void vmak_nl_notify(struct vmak_sock *vs, u8 cmd)
{
	mutex_lock(&vmak_mutex);
	__vmak_nl_notify(vs, cmd);
	mutex_unlock(&vmak_mutex);
}

/* ---- operations ------------------------------------------------------------ */

static int vmak_nl_info_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	hdr = genlmsg_put_reply(msg, info, &vmak_genl_family, 0,
				VMAK_CMD_INFO_GET);
	if (!hdr)
		goto err_free;
	if (nla_put_string(msg, VMAK_A_INFO_VERSION, VMAK_VERSION) ||
	    nla_put_u32(msg, VMAK_A_INFO_FAMILY, vmak_family) ||
	    nla_put_u32(msg, VMAK_A_INFO_HOOKED_DEVICES,
			vmak_hooked_devices(genl_info_net(info))))
		goto err_free;
	/* A host-wide figure: for the host's administrator only. */
	if (netlink_capable(skb, CAP_NET_ADMIN) &&
	    nla_put_u64_64bit(msg, VMAK_A_INFO_PINNED_PAGES,
			      atomic64_read(&vmak_pinned_pages),
			      VMAK_A_INFO_PAD))
		goto err_free;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* The ring named by the request's id attribute, or an extack why not. */
static struct vmak_sock *vmak_nl_ring_req(struct genl_info *info)
{
	struct nlattr *attr = info->attrs[VMAK_A_RING_ID];
	struct vmak_sock *vs;

	if (GENL_REQ_ATTR_CHECK(info, VMAK_A_RING_ID))
		return ERR_PTR(-EINVAL);
	vs = vmak_ring_get(genl_info_net(info), nla_get_u32(attr));
	if (!vs) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "id: no such ring in this network namespace");
		return ERR_PTR(-ENOENT);
	}
	return vs;
}

static int vmak_nl_ring_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct vmak_nl_view view;
	struct vmak_sock *vs;
	struct sk_buff *msg;
	int err;

	vs = vmak_nl_ring_req(info);
	if (IS_ERR(vs))
		return PTR_ERR(vs);

	msg = genlmsg_new(VMAK_NL_RING_SIZE, GFP_KERNEL);
	if (!msg) {
		err = -ENOMEM;
		goto out_put;
	}
	vmak_nl_view_current(&view);
	mutex_lock(&vmak_mutex);
	err = vmak_nl_fill_ring(msg, vs, &view, info->snd_portid,
				info->snd_seq, 0, VMAK_CMD_RING_GET, NULL);
	mutex_unlock(&vmak_mutex);
	if (err) {
		nlmsg_free(msg);
		goto out_put;
	}
	err = genlmsg_reply(msg, info);
out_put:
	sock_put(&vs->sk);
	return err;
}

/* Does vs pass the dump request's filters? Under vmak_mutex. */
static bool vmak_nl_ring_match(struct vmak_sock *vs, struct nlattr **tb,
			       const struct vmak_nl_view *view)
{
	if (tb[VMAK_A_RING_OWNER_PID] &&
	    nla_get_u32(tb[VMAK_A_RING_OWNER_PID]) !=
	    pid_nr_ns(vs->owner, view->pid_ns))
		return false;
	if (tb[VMAK_A_RING_IFINDEX] &&
	    (vs->state != VMAK_STATE_BOUND ||
	     nla_get_u32(tb[VMAK_A_RING_IFINDEX]) != vs->ifindex))
		return false;
	if (tb[VMAK_A_RING_QUEUE_ID] &&
	    (vs->state != VMAK_STATE_BOUND ||
	     nla_get_u32(tb[VMAK_A_RING_QUEUE_ID]) != vs->queue_id))
		return false;
	return true;
}

/* cb->args[0]: the next ring id to look at. */
static int vmak_nl_ring_get_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	struct nlattr **tb = vmak_genl_dump_attrs(cb);
	struct net *net = sock_net(skb->sk);
	unsigned long id = cb->args[0];
	struct vmak_nl_view view;
	struct vmak_sock *vs;
	int err = 0;

	vmak_nl_view_current(&view);
	cb->seq = atomic_read(&vmak_rings_gen);
	while ((vs = vmak_ring_find(net, &id))) {
		mutex_lock(&vmak_mutex);
		if (vmak_nl_ring_match(vs, tb, &view))
			err = vmak_nl_fill_ring(skb, vs, &view,
						NETLINK_CB(cb->skb).portid,
						cb->nlh->nlmsg_seq, NLM_F_MULTI,
						VMAK_CMD_RING_GET, cb);
		mutex_unlock(&vmak_mutex);
		sock_put(&vs->sk);
		if (err)
			break;
		id++;
	}
	cb->args[0] = id;
	/* A ring that fits in no message at all would stall the dump. */
	return err && !skb->len ? err : skb->len;
}

static int vmak_nl_ring_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *acount = info->attrs[VMAK_A_RING_MODERATION_COUNT];
	struct nlattr *ausec = info->attrs[VMAK_A_RING_MODERATION_USEC];
	struct vmak_sock *vs;
	u32 count, usec;
	int err = 0;

	vs = vmak_nl_ring_req(info);
	if (IS_ERR(vs))
		return PTR_ERR(vs);

	/* The owner tunes its own ring; an admin of its netns any ring.
	 * Both judged by who opened the sockets, as the kernel's sockets do.
	 */
	if (!uid_eq(vmak_sk_uid(&vs->sk), vmak_sk_uid(NETLINK_CB(skb).sk)) &&
	    !netlink_ns_capable(skb, sock_net(&vs->sk)->user_ns,
				CAP_NET_ADMIN)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[VMAK_A_RING_ID],
				    "id: ring owned by another user; needs CAP_NET_ADMIN");
		err = -EPERM;
		goto out_put;
	}
	if (!acount && !ausec && !info->attrs[VMAK_A_RING_ARM]) {
		NL_SET_ERR_MSG(info->extack,
			       "nothing to set: give moderation-count, moderation-usec or arm");
		err = -EINVAL;
		goto out_put;
	}

	if (acount || ausec) {
		spin_lock_bh(&vs->rx_lock);
		count = acount ? nla_get_u32(acount) : vs->mod_count;
		usec = ausec ? nla_get_u32(ausec) : vs->mod_usec;
		spin_unlock_bh(&vs->rx_lock);
		/* Ranges were checked by the policy. */
		err = vmak_rx_set_moderation(vs, count, usec);
		if (err)
			goto out_put;
		vmak_nl_notify(vs, VMAK_CMD_RING_CHANGE_NTF);
	}
	if (info->attrs[VMAK_A_RING_ARM])
		vmak_rx_arm(vs);
out_put:
	sock_put(&vs->sk);
	return err;
}

struct vmak_nl_rule_dump {
	struct sk_buff *skb;
	struct netlink_callback *cb;
	u32 ring_id;
};

static int vmak_nl_put_rule_msg(const struct vmak_rule_info *ri, void *arg)
{
	struct vmak_nl_rule_dump *d = arg;
	void *hdr;

	hdr = genlmsg_put(d->skb, NETLINK_CB(d->cb->skb).portid,
			  d->cb->nlh->nlmsg_seq, &vmak_genl_family,
			  NLM_F_MULTI, VMAK_CMD_RULE_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(d->skb, VMAK_A_RULE_RING_ID, d->ring_id) ||
	    vmak_nl_put_rule_body(d->skb, ri)) {
		genlmsg_cancel(d->skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(d->skb, hdr);
	return 0;
}

static int vmak_nl_dump_ring_rules(struct vmak_sock *vs,
				   struct vmak_nl_rule_dump *d,
				   unsigned long *cookie)
{
	int err;

	d->ring_id = vs->id;
	mutex_lock(&vmak_mutex);
	err = vmak_rule_walk(vs, cookie, vmak_nl_put_rule_msg, d);
	mutex_unlock(&vmak_mutex);
	return err;
}

/*
 * cb->args[0]: the ring being dumped; cb->args[1]: the next cookie in it;
 * cb->args[2]: set when a one-ring dump is complete.
 */
static int vmak_nl_rule_get_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	struct nlattr *aring = vmak_genl_dump_attrs(cb)[VMAK_A_RULE_RING_ID];
	struct vmak_nl_rule_dump d = { .skb = skb, .cb = cb };
	struct net *net = sock_net(skb->sk);
	unsigned long id = cb->args[0];
	unsigned long cookie = cb->args[1];
	struct vmak_sock *vs;
	int err = 0;

	if (aring) {
		if (cb->args[2])
			return 0;
		vs = vmak_ring_get(net, nla_get_u32(aring));
		if (!vs) {
			NL_SET_ERR_MSG_ATTR(cb->extack, aring,
					    "ring-id: no such ring in this network namespace");
			return -ENOENT;
		}
		err = vmak_nl_dump_ring_rules(vs, &d, &cookie);
		sock_put(&vs->sk);
		cb->args[1] = cookie;
		cb->args[2] = !err;
		return err && !skb->len ? err : skb->len;
	}

	while ((vs = vmak_ring_find(net, &id))) {
		err = vmak_nl_dump_ring_rules(vs, &d, &cookie);
		sock_put(&vs->sk);
		if (err)
			break;
		id++;
		cookie = 0;
	}
	cb->args[0] = id;
	cb->args[1] = cookie;
	return err && !skb->len ? err : skb->len;
}

/* ---- policies and the family ------------------------------------------- */

static const struct nla_policy vmak_info_policy[VMAK_A_INFO_MAX + 1] = {
	[VMAK_A_INFO_VERSION]	= { .type = NLA_REJECT },
	[VMAK_A_INFO_FAMILY]	= { .type = NLA_REJECT },
	[VMAK_A_INFO_PINNED_PAGES] = { .type = NLA_REJECT },
	[VMAK_A_INFO_HOOKED_DEVICES] = { .type = NLA_REJECT },
	[VMAK_A_INFO_PAD]	= { .type = NLA_REJECT },
};

/* Not const: 6.1 takes a mutable pointer. */
static struct netlink_range_validation vmak_mod_count_range = {
	.max = VMAK_MOD_COUNT_MAX,
};

static struct netlink_range_validation vmak_mod_usec_range = {
	.max = VMAK_MOD_USEC_MAX,
};

/* Requests name rings and filters; everything else is reply-only. */
static const struct nla_policy vmak_ring_policy[VMAK_A_RING_MAX + 1] = {
	[VMAK_A_RING_ID]		= NLA_POLICY_MIN(NLA_U32, 1),
	[VMAK_A_RING_OWNER_PID]		= NLA_POLICY_MIN(NLA_U32, 1),
	[VMAK_A_RING_IFINDEX]		= NLA_POLICY_MIN(NLA_U32, 1),
	[VMAK_A_RING_QUEUE_ID]		= { .type = NLA_U32 },
	[VMAK_A_RING_MODERATION_COUNT]	= NLA_POLICY_FULL_RANGE(NLA_U32, &vmak_mod_count_range),
	[VMAK_A_RING_MODERATION_USEC]	= NLA_POLICY_FULL_RANGE(NLA_U32, &vmak_mod_usec_range),
	[VMAK_A_RING_ARM]		= { .type = NLA_FLAG },
	[VMAK_A_RING_PAD]		= { .type = NLA_REJECT },
	[VMAK_A_RING_OWNER_UID]		= { .type = NLA_REJECT },
	[VMAK_A_RING_STATE]		= { .type = NLA_REJECT },
	[VMAK_A_RING_BIND_FLAGS]	= { .type = NLA_REJECT },
	[VMAK_A_RING_RX_SIZE]		= { .type = NLA_REJECT },
	[VMAK_A_RING_TX_SIZE]		= { .type = NLA_REJECT },
	[VMAK_A_RING_FILL_SIZE]		= { .type = NLA_REJECT },
	[VMAK_A_RING_COMPLETION_SIZE]	= { .type = NLA_REJECT },
	[VMAK_A_RING_UMEM_SIZE]		= { .type = NLA_REJECT },
	[VMAK_A_RING_CHUNK_SIZE]	= { .type = NLA_REJECT },
	[VMAK_A_RING_NAPI_ID]		= { .type = NLA_REJECT },
	[VMAK_A_RING_RULE_COUNT]	= { .type = NLA_REJECT },
	[VMAK_A_RING_RULE]		= { .type = NLA_REJECT },
	[VMAK_A_RING_STATS]		= { .type = NLA_REJECT },
};

static const struct nla_policy vmak_rule_policy[VMAK_A_RULE_MAX + 1] = {
	[VMAK_A_RULE_RING_ID]	= NLA_POLICY_MIN(NLA_U32, 1),
	[VMAK_A_RULE_COOKIE]	= { .type = NLA_REJECT },
	[VMAK_A_RULE_KIND]	= { .type = NLA_REJECT },
	[VMAK_A_RULE_KEY]	= { .type = NLA_REJECT },
};

static const struct genl_ops vmak_genl_ops[] = {
	{
		.cmd		= VMAK_CMD_INFO_GET,
		.doit		= vmak_nl_info_get_doit,
		.policy		= vmak_info_policy,
		.maxattr	= VMAK_A_INFO_MAX,
	},
	{
		.cmd		= VMAK_CMD_RING_GET,
		.doit		= vmak_nl_ring_get_doit,
		.dumpit		= vmak_nl_ring_get_dumpit,
		.policy		= vmak_ring_policy,
		.maxattr	= VMAK_A_RING_MAX,
	},
	{
		/* No GENL_ADMIN_PERM: owners may tune their own rings. */
		.cmd		= VMAK_CMD_RING_SET,
		.doit		= vmak_nl_ring_set_doit,
		.policy		= vmak_ring_policy,
		.maxattr	= VMAK_A_RING_MAX,
	},
	{
		.cmd		= VMAK_CMD_RULE_GET,
		.dumpit		= vmak_nl_rule_get_dumpit,
		.policy		= vmak_rule_policy,
		.maxattr	= VMAK_A_RULE_MAX,
	},
};

static struct genl_family vmak_genl_family __ro_after_init = {
	.name		= VMAK_FAMILY_NAME,
	.version	= VMAK_FAMILY_VERSION,
	.netnsok	= true,
	.module		= THIS_MODULE,
	.ops		= vmak_genl_ops,
	.n_ops		= ARRAY_SIZE(vmak_genl_ops),
	.mcgrps		= vmak_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(vmak_mcgrps),
	.resv_start_op	= VMAK_CMD_INFO_GET,
};

int __init vmak_genl_init(void)
{
	/* The uapi enums are generated from the spec; the socket ABI has
	 * its own names for the same values.
	 */
	BUILD_BUG_ON(VMAK_RING_STATE_READY != VMAK_STATE_READY ||
		     VMAK_RING_STATE_BOUND != VMAK_STATE_BOUND ||
		     VMAK_RING_STATE_UNBOUND != VMAK_STATE_UNBOUND);
	BUILD_BUG_ON(VMAK_RULE_KIND_SOCKET != VMAK_RULE_SOCKET ||
		     VMAK_RULE_KIND_RAW != VMAK_RULE_RAW);
	return genl_register_family(&vmak_genl_family);
}

void vmak_genl_exit(void)
{
	genl_unregister_family(&vmak_genl_family);
}
