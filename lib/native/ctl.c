// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The control plane over the "vmak" generic netlink family: ring get and
 * list, rules, set, arm and the monitor group. Replies are checked
 * attribute by attribute against the types of
 * Documentation/netlink/specs/vmak.yaml; unknown (newer) attributes are
 * skipped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/genetlink.h>

#include "linux/vmak.h"
#include "nl.h"
#include "sys.h"
#include "vmak/ctl.h"

/* Rules carried in one ring message (the kernel sends at most this many). */
#define RING_RULES	16
/* Counters of a ring message this library keeps (more are skipped). */
#define RING_STATS	64

/* A ring status and the arrays it points into, in one allocation. */
struct status_buf {
	struct vmak_ring_status st;
	struct vmak_ctl_rule rules[RING_RULES];
	uint64_t stats[RING_STATS];
};

/* Attribute names of the ring set, for error messages (index = type). */
static const char *const ring_attr_names[VMAK_A_RING_MAX + 1] = {
	[VMAK_A_RING_ID]		= "id",
	[VMAK_A_RING_PAD]		= "pad",
	[VMAK_A_RING_OWNER_PID]		= "owner-pid",
	[VMAK_A_RING_OWNER_UID]		= "owner-uid",
	[VMAK_A_RING_STATE]		= "state",
	[VMAK_A_RING_IFINDEX]		= "ifindex",
	[VMAK_A_RING_QUEUE_ID]		= "queue-id",
	[VMAK_A_RING_BIND_FLAGS]	= "bind-flags",
	[VMAK_A_RING_RX_SIZE]		= "rx-size",
	[VMAK_A_RING_TX_SIZE]		= "tx-size",
	[VMAK_A_RING_FILL_SIZE]		= "fill-size",
	[VMAK_A_RING_COMPLETION_SIZE]	= "completion-size",
	[VMAK_A_RING_UMEM_SIZE]		= "umem-size",
	[VMAK_A_RING_CHUNK_SIZE]	= "chunk-size",
	[VMAK_A_RING_NAPI_ID]		= "napi-id",
	[VMAK_A_RING_MODERATION_COUNT]	= "moderation-count",
	[VMAK_A_RING_MODERATION_USEC]	= "moderation-usec",
	[VMAK_A_RING_ARM]		= "arm",
	[VMAK_A_RING_RULE_COUNT]	= "rule-count",
	[VMAK_A_RING_RULE]		= "rule",
	[VMAK_A_RING_STATS]		= "stats",
};

static const char *const rule_attr_names[VMAK_A_RULE_MAX + 1] = {
	[VMAK_A_RULE_RING_ID]	= "ring-id",
	[VMAK_A_RULE_COOKIE]	= "cookie",
	[VMAK_A_RULE_KIND]	= "kind",
	[VMAK_A_RULE_KEY]	= "key",
};

/* ---- parsing ---------------------------------------------------------------- */

struct attr_table {
	const struct nlattr **tb;
	const enum mnl_attr_data_type *types;	/* MNL_TYPE_UNSPEC: skip */
	int max;
	const struct nlattr **multi;		/* collected multi-attrs */
	int multi_type, nmulti, multi_max;
};

static int table_cb(const struct nlattr *attr, void *data)
{
	struct attr_table *t = data;
	int type = mnl_attr_get_type(attr);

	if (type > t->max || t->types[type] == MNL_TYPE_UNSPEC)
		return MNL_CB_OK;
	if (mnl_attr_validate(attr, t->types[type]) < 0)
		return MNL_CB_ERROR;
	if (type == t->multi_type && t->multi) {
		if (t->nmulti < t->multi_max)
			t->multi[t->nmulti++] = attr;
		return MNL_CB_OK;
	}
	t->tb[type] = attr;
	return MNL_CB_OK;
}

static const enum mnl_attr_data_type key_types[VMAK_A_KEY_MAX + 1] = {
	[VMAK_A_KEY_AF]		= MNL_TYPE_U32,
	[VMAK_A_KEY_DST_ADDR]	= MNL_TYPE_BINARY,
	[VMAK_A_KEY_DST_PORT]	= MNL_TYPE_U16,
	[VMAK_A_KEY_SRC_ADDR]	= MNL_TYPE_BINARY,
	[VMAK_A_KEY_SRC_PORT]	= MNL_TYPE_U16,
};

static const enum mnl_attr_data_type rule_types[VMAK_A_RULE_MAX + 1] = {
	[VMAK_A_RULE_RING_ID]	= MNL_TYPE_U32,
	[VMAK_A_RULE_COOKIE]	= MNL_TYPE_U32,
	[VMAK_A_RULE_KIND]	= MNL_TYPE_U32,
	[VMAK_A_RULE_KEY]	= MNL_TYPE_NESTED,
};

static const enum mnl_attr_data_type ring_types[VMAK_A_RING_MAX + 1] = {
	[VMAK_A_RING_ID]		= MNL_TYPE_U32,
	[VMAK_A_RING_OWNER_PID]		= MNL_TYPE_U32,
	[VMAK_A_RING_OWNER_UID]		= MNL_TYPE_U32,
	[VMAK_A_RING_STATE]		= MNL_TYPE_U32,
	[VMAK_A_RING_IFINDEX]		= MNL_TYPE_U32,
	[VMAK_A_RING_QUEUE_ID]		= MNL_TYPE_U32,
	[VMAK_A_RING_BIND_FLAGS]	= MNL_TYPE_U32,
	[VMAK_A_RING_RX_SIZE]		= MNL_TYPE_U32,
	[VMAK_A_RING_TX_SIZE]		= MNL_TYPE_U32,
	[VMAK_A_RING_FILL_SIZE]		= MNL_TYPE_U32,
	[VMAK_A_RING_COMPLETION_SIZE]	= MNL_TYPE_U32,
	[VMAK_A_RING_UMEM_SIZE]		= MNL_TYPE_U64,
	[VMAK_A_RING_CHUNK_SIZE]	= MNL_TYPE_U32,
	[VMAK_A_RING_NAPI_ID]		= MNL_TYPE_U32,
	[VMAK_A_RING_MODERATION_COUNT]	= MNL_TYPE_U32,
	[VMAK_A_RING_MODERATION_USEC]	= MNL_TYPE_U32,
	[VMAK_A_RING_RULE_COUNT]	= MNL_TYPE_U32,
	[VMAK_A_RING_RULE]		= MNL_TYPE_NESTED,
	[VMAK_A_RING_STATS]		= MNL_TYPE_NESTED,
};

static uint32_t get_u32(const struct nlattr *a)
{
	return a ? mnl_attr_get_u32(a) : 0;
}

static int parse_key(const struct nlattr *nest, struct vmak_ctl_key *k)
{
	const struct nlattr *tb[VMAK_A_KEY_MAX + 1] = {};
	struct attr_table t = { tb, key_types, VMAK_A_KEY_MAX, NULL, -1, 0, 0 };
	size_t alen;

	memset(k, 0, sizeof(*k));
	if (mnl_attr_parse_nested(nest, table_cb, &t) < 0)
		return -EPROTO;
	k->af = get_u32(tb[VMAK_A_KEY_AF]);
	alen = k->af == AF_INET ? 4 : 16;
	if (tb[VMAK_A_KEY_DST_ADDR]) {
		if (mnl_attr_get_payload_len(tb[VMAK_A_KEY_DST_ADDR]) != alen)
			return -EPROTO;
		memcpy(k->dst_addr, mnl_attr_get_payload(tb[VMAK_A_KEY_DST_ADDR]), alen);
	}
	if (tb[VMAK_A_KEY_SRC_ADDR]) {
		if (mnl_attr_get_payload_len(tb[VMAK_A_KEY_SRC_ADDR]) != alen)
			return -EPROTO;
		memcpy(k->src_addr, mnl_attr_get_payload(tb[VMAK_A_KEY_SRC_ADDR]), alen);
	}
	if (tb[VMAK_A_KEY_DST_PORT])
		k->dst_port = ntohs(mnl_attr_get_u16(tb[VMAK_A_KEY_DST_PORT]));
	if (tb[VMAK_A_KEY_SRC_PORT])
		k->src_port = ntohs(mnl_attr_get_u16(tb[VMAK_A_KEY_SRC_PORT]));
	return 0;
}

/* A rule from its parsed attributes and its keys. */
static int parse_rule_tb(const struct nlattr **tb, const struct nlattr **keys,
			 int nkeys, struct vmak_ctl_rule *r)
{
	int i, err;

	r->ring_id = get_u32(tb[VMAK_A_RULE_RING_ID]);
	r->cookie = get_u32(tb[VMAK_A_RULE_COOKIE]);
	r->kind = get_u32(tb[VMAK_A_RULE_KIND]);
	r->nkeys = (uint32_t)nkeys;
	for (i = 0; i < nkeys; i++) {
		err = parse_key(keys[i], &r->key[i]);
		if (err)
			return err;
	}
	return 0;
}

/* Counters by attribute type; *n is one past the highest seen. */
static int parse_stats(const struct nlattr *nest, uint64_t *stats, uint32_t *n)
{
	const struct nlattr *a;
	uint32_t i;
	int type;

	mnl_attr_for_each_nested(a, nest) {
		type = mnl_attr_get_type(a);
		if (type < VMAK_A_STATS_RX_PACKETS ||
		    type - VMAK_A_STATS_RX_PACKETS >= RING_STATS)
			continue;
		if (mnl_attr_validate(a, MNL_TYPE_U64) < 0)
			return -EPROTO;
		i = (uint32_t)(type - VMAK_A_STATS_RX_PACKETS);
		stats[i] = mnl_attr_get_u64(a);
		if (i + 1 > *n)
			*n = i + 1;
	}
	return 0;
}

static int parse_ring(const struct nlmsghdr *nlh, struct status_buf *b)
{
	const struct nlattr *tb[VMAK_A_RING_MAX + 1] = {};
	const struct nlattr *rules[RING_RULES];
	struct attr_table t = { tb, ring_types, VMAK_A_RING_MAX, rules,
				VMAK_A_RING_RULE, 0, RING_RULES };
	struct vmak_ring_status *st = &b->st;
	int i, err;

	memset(b, 0, sizeof(*b));
	st->rules = b->rules;
	st->stats = b->stats;
	if (mnl_attr_parse(nlh, sizeof(struct genlmsghdr), table_cb, &t) < 0 ||
	    !tb[VMAK_A_RING_ID])
		return -EPROTO;
	st->id = get_u32(tb[VMAK_A_RING_ID]);
	st->owner_pid = get_u32(tb[VMAK_A_RING_OWNER_PID]);
	st->owner_uid = get_u32(tb[VMAK_A_RING_OWNER_UID]);
	st->state = get_u32(tb[VMAK_A_RING_STATE]);
	st->bound = tb[VMAK_A_RING_IFINDEX] != NULL;
	st->ifindex = get_u32(tb[VMAK_A_RING_IFINDEX]);
	st->queue_id = get_u32(tb[VMAK_A_RING_QUEUE_ID]);
	st->bind_flags = get_u32(tb[VMAK_A_RING_BIND_FLAGS]);
	st->rx_size = get_u32(tb[VMAK_A_RING_RX_SIZE]);
	st->tx_size = get_u32(tb[VMAK_A_RING_TX_SIZE]);
	st->fill_size = get_u32(tb[VMAK_A_RING_FILL_SIZE]);
	st->completion_size = get_u32(tb[VMAK_A_RING_COMPLETION_SIZE]);
	if (tb[VMAK_A_RING_UMEM_SIZE])
		st->umem_size = mnl_attr_get_u64(tb[VMAK_A_RING_UMEM_SIZE]);
	st->chunk_size = get_u32(tb[VMAK_A_RING_CHUNK_SIZE]);
	st->napi_id = get_u32(tb[VMAK_A_RING_NAPI_ID]);
	st->moderation_count = get_u32(tb[VMAK_A_RING_MODERATION_COUNT]);
	st->moderation_usec = get_u32(tb[VMAK_A_RING_MODERATION_USEC]);
	st->rule_count = get_u32(tb[VMAK_A_RING_RULE_COUNT]);
	for (i = 0; i < t.nmulti; i++) {
		const struct nlattr *rtb[VMAK_A_RULE_MAX + 1] = {};
		const struct nlattr *keys[VMAK_CTL_RULE_KEYS];
		struct attr_table rt = { rtb, rule_types, VMAK_A_RULE_MAX, keys,
					 VMAK_A_RULE_KEY, 0, VMAK_CTL_RULE_KEYS };

		if (mnl_attr_parse_nested(rules[i], table_cb, &rt) < 0)
			return -EPROTO;
		err = parse_rule_tb(rtb, keys, rt.nmulti, &b->rules[i]);
		if (err)
			return err;
		b->rules[i].ring_id = st->id;
	}
	st->nrules = (uint32_t)t.nmulti;
	if (tb[VMAK_A_RING_STATS])
		return parse_stats(tb[VMAK_A_RING_STATS], b->stats, &st->nstats);
	return 0;
}

/* ---- requests -------------------------------------------------------------- */

struct ring_walk {
	int (*fn)(const struct vmak_ring_status *st, void *arg);
	void *arg;
	int ret;			/* fn's nonzero answer */
	struct status_buf b;
};

static int ring_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ring_walk *w = data;
	int err;

	if (w->ret)
		return MNL_CB_OK;	/* drain the rest of the dump */
	err = parse_ring(nlh, &w->b);
	if (err) {
		errno = -err;
		return MNL_CB_ERROR;
	}
	w->ret = w->fn(&w->b.st, w->arg);
	return MNL_CB_OK;
}

/* Run one request and record the error for vmak_last_error(). */
static int talk(struct vmak_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
		void *data, const char *const *names, int nnames)
{
	int err = vmak_nl_talk(nl, nlh, cb, data);

	if (err)
		vmak_nl_set_error(nl, err, names, nnames);
	return err;
}

static int open_nl(struct vmak_nl *nl)
{
	int err = vmak_nl_open(nl);

	if (err)
		vmak_nl_set_error(nl, err, NULL, 0);
	return err;
}

/* A copy of the status the walk holds, which a get hands to its caller. */
static int copy_status(const struct vmak_ring_status *st, void *arg)
{
	struct status_buf *b = arg;

	b->st = *st;
	memcpy(b->rules, st->rules, st->nrules * sizeof(*st->rules));
	memcpy(b->stats, st->stats, st->nstats * sizeof(*st->stats));
	b->st.rules = b->rules;
	b->st.stats = b->stats;
	return 1;
}

static struct vmak_ring_status *status_alloc(void)
{
	return calloc(1, sizeof(struct status_buf));
}

VMAK_API void vmak_ctl_status_free(struct vmak_ring_status *st)
{
	free(st);	/* the first member of its status_buf */
}

VMAK_API int vmak_ctl_ring_get(uint32_t id, struct vmak_ring_status **stp)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct vmak_ring_status *st;
	struct nlmsghdr *nlh;
	struct ring_walk *w;
	struct vmak_nl nl;
	int err;

	*stp = NULL;
	st = status_alloc();
	w = calloc(1, sizeof(*w));
	err = -ENOMEM;
	if (!st || !w)
		goto out;
	w->fn = copy_status;
	w->arg = st;
	err = open_nl(&nl);
	if (err)
		goto out;
	nlh = vmak_nl_msg(&nl, buf, VMAK_CMD_RING_GET, 0);
	mnl_attr_put_u32(nlh, VMAK_A_RING_ID, id);
	err = talk(&nl, nlh, ring_msg_cb, w, ring_attr_names, VMAK_A_RING_MAX + 1);
	vmak_nl_close(&nl);
	if (!err && !w->ret)
		err = -EPROTO;
	if (!err) {
		*stp = st;
		st = NULL;
	}
out:
	free(w);
	vmak_ctl_status_free(st);
	return err;
}

VMAK_API int vmak_ctl_ring_list(const struct vmak_ring_filter *filter,
				int (*fn)(const struct vmak_ring_status *st,
					  void *arg),
				void *arg)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct vmak_ring_filter fl = { .sz = sizeof(fl) }, *f = NULL;
	struct ring_walk *w;
	struct nlmsghdr *nlh;
	struct vmak_nl nl;
	int err;

	if (filter) {
		if (!VMAK_SZ_IN(vmak_ring_filter, &fl, filter))
			return -EINVAL;
		f = &fl;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->arg = arg;
	err = open_nl(&nl);
	if (err)
		goto out;
	nlh = vmak_nl_msg(&nl, buf, VMAK_CMD_RING_GET, NLM_F_DUMP);
	if (f && f->owner_pid)
		mnl_attr_put_u32(nlh, VMAK_A_RING_OWNER_PID, f->owner_pid);
	if (f && f->ifindex)
		mnl_attr_put_u32(nlh, VMAK_A_RING_IFINDEX, f->ifindex);
	if (f && f->match_queue)
		mnl_attr_put_u32(nlh, VMAK_A_RING_QUEUE_ID, f->queue_id);
	err = talk(&nl, nlh, ring_msg_cb, w, ring_attr_names, VMAK_A_RING_MAX + 1);
	vmak_nl_close(&nl);
	if (!err)
		err = w->ret;
out:
	free(w);
	return err;
}

struct rule_walk {
	int (*fn)(const struct vmak_ctl_rule *r, void *arg);
	void *arg;
	int ret;
};

static int rule_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[VMAK_A_RULE_MAX + 1] = {};
	const struct nlattr *keys[VMAK_CTL_RULE_KEYS];
	struct attr_table t = { tb, rule_types, VMAK_A_RULE_MAX, keys,
				VMAK_A_RULE_KEY, 0, VMAK_CTL_RULE_KEYS };
	struct rule_walk *w = data;
	struct vmak_ctl_rule r;
	int err;

	if (w->ret)
		return MNL_CB_OK;
	memset(&r, 0, sizeof(r));
	if (mnl_attr_parse(nlh, sizeof(struct genlmsghdr), table_cb, &t) < 0) {
		errno = EPROTO;
		return MNL_CB_ERROR;
	}
	err = parse_rule_tb(tb, keys, t.nmulti, &r);
	if (err) {
		errno = -err;
		return MNL_CB_ERROR;
	}
	w->ret = w->fn(&r, w->arg);
	return MNL_CB_OK;
}

VMAK_API int vmak_ctl_rule_list(uint32_t ring_id,
				int (*fn)(const struct vmak_ctl_rule *r, void *arg),
				void *arg)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct rule_walk w = { fn, arg, 0 };
	struct nlmsghdr *nlh;
	struct vmak_nl nl;
	int err;

	err = open_nl(&nl);
	if (err)
		return err;
	nlh = vmak_nl_msg(&nl, buf, VMAK_CMD_RULE_GET, NLM_F_DUMP);
	if (ring_id)
		mnl_attr_put_u32(nlh, VMAK_A_RULE_RING_ID, ring_id);
	err = talk(&nl, nlh, rule_msg_cb, &w, rule_attr_names, VMAK_A_RULE_MAX + 1);
	vmak_nl_close(&nl);
	return err ? err : w.ret;
}

static int ring_set(uint32_t id, int64_t count, int64_t usec, int arm)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct vmak_nl nl;
	int err;

	err = open_nl(&nl);
	if (err)
		return err;
	nlh = vmak_nl_msg(&nl, buf, VMAK_CMD_RING_SET, 0);
	mnl_attr_put_u32(nlh, VMAK_A_RING_ID, id);
	/* Values out of the u32 range are the kernel's to refuse by name. */
	if (count >= 0)
		mnl_attr_put_u32(nlh, VMAK_A_RING_MODERATION_COUNT,
				 count > UINT32_MAX ? UINT32_MAX : (uint32_t)count);
	if (usec >= 0)
		mnl_attr_put_u32(nlh, VMAK_A_RING_MODERATION_USEC,
				 usec > UINT32_MAX ? UINT32_MAX : (uint32_t)usec);
	if (arm)
		mnl_attr_put(nlh, VMAK_A_RING_ARM, 0, NULL);
	err = talk(&nl, nlh, NULL, NULL, ring_attr_names, VMAK_A_RING_MAX + 1);
	vmak_nl_close(&nl);
	return err;
}

VMAK_API int vmak_ctl_set_moderation(uint32_t id, int64_t count, int64_t usec)
{
	return ring_set(id, count, usec, 0);
}

VMAK_API int vmak_ctl_arm(uint32_t id)
{
	return ring_set(id, -1, -1, 1);
}

/* ---- monitor ---------------------------------------------------------------- */

struct vmak_monitor {
	struct vmak_nl nl;
	char buf[VMAK_NL_RCVBUF];
	size_t len, off;		/* unread messages in buf */
};

VMAK_API int vmak_ctl_monitor_open(struct vmak_monitor **monp)
{
	struct vmak_monitor *mon;
	int err;

	mon = calloc(1, sizeof(*mon));
	if (!mon)
		return -ENOMEM;
	err = open_nl(&mon->nl);
	if (err)
		goto err_free;
	if (!mon->nl.monitor_grp) {
		err = -EPROTO;
		goto err_close;
	}
	if (mnl_socket_setsockopt(mon->nl.sock, NETLINK_ADD_MEMBERSHIP,
				  &mon->nl.monitor_grp,
				  sizeof(mon->nl.monitor_grp)) < 0) {
		err = -errno;
		goto err_close;
	}
	*monp = mon;
	return 0;

err_close:
	vmak_nl_close(&mon->nl);
err_free:
	free(mon);
	return err;
}

VMAK_API int vmak_ctl_monitor_fd(const struct vmak_monitor *mon)
{
	return mnl_socket_get_fd(mon->nl.sock);
}

VMAK_API int vmak_ctl_monitor_next(struct vmak_monitor *mon, int timeout_ms,
				   int *cmd, struct vmak_ring_status **stp)
{
	struct vmak_ring_status *st;
	const struct nlmsghdr *nlh;
	const struct genlmsghdr *g;
	struct pollfd pfd;
	ssize_t n;
	int err;

	for (;;) {
		while (mon->off < mon->len) {
			nlh = (const struct nlmsghdr *)(mon->buf + mon->off);
			if (!mnl_nlmsg_ok(nlh, (int)(mon->len - mon->off))) {
				mon->len = 0;
				break;
			}
			mon->off += NLMSG_ALIGN(nlh->nlmsg_len);
			if (nlh->nlmsg_type != mon->nl.family_id ||
			    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*g)))
				continue;
			g = mnl_nlmsg_get_payload(nlh);
			if (g->cmd != VMAK_CMD_RING_CREATE_NTF &&
			    g->cmd != VMAK_CMD_RING_DELETE_NTF &&
			    g->cmd != VMAK_CMD_RING_CHANGE_NTF)
				continue;
			st = status_alloc();
			if (!st)
				return -ENOMEM;
			err = parse_ring(nlh, (struct status_buf *)st);
			if (err) {
				vmak_ctl_status_free(st);
				return err;
			}
			*cmd = g->cmd;
			*stp = st;
			return 0;
		}
		pfd.fd = vmak_ctl_monitor_fd(mon);
		pfd.events = POLLIN;
		n = vmak_sys_poll(&pfd, 1, timeout_ms);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EAGAIN;
		n = mnl_socket_recvfrom(mon->nl.sock, mon->buf, sizeof(mon->buf));
		if (n < 0)
			return -errno;	/* ENOBUFS: events were lost */
		mon->len = (size_t)n;
		mon->off = 0;
	}
}

VMAK_API void vmak_ctl_monitor_close(struct vmak_monitor *mon)
{
	if (!mon)
		return;
	vmak_nl_close(&mon->nl);
	free(mon);
}
