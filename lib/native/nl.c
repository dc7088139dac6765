// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "nl.h"
#include "vmak/ctl.h"


static int ctrl_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, CTRL_ATTR_MAX) < 0)
		return MNL_CB_OK;	/* newer kernel: skip */
	if ((type == CTRL_ATTR_FAMILY_ID &&
	     mnl_attr_validate(attr, MNL_TYPE_U16) < 0) ||
	    (type == CTRL_ATTR_MCAST_GROUPS &&
	     mnl_attr_validate(attr, MNL_TYPE_NESTED) < 0))
		return MNL_CB_ERROR;
	tb[type] = attr;
	return MNL_CB_OK;
}

static int ctrl_grp_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, CTRL_ATTR_MCAST_GRP_MAX) < 0)
		return MNL_CB_OK;
	if ((type == CTRL_ATTR_MCAST_GRP_ID &&
	     mnl_attr_validate(attr, MNL_TYPE_U32) < 0) ||
	    (type == CTRL_ATTR_MCAST_GRP_NAME &&
	     mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0))
		return MNL_CB_ERROR;
	tb[type] = attr;
	return MNL_CB_OK;
}

static int ctrl_family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1] = {};
	struct vmak_nl *nl = data;
	const struct nlattr *g;

	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), ctrl_attr_cb, tb);
	if (tb[CTRL_ATTR_FAMILY_ID])
		nl->family_id = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (!tb[CTRL_ATTR_MCAST_GROUPS])
		return MNL_CB_OK;
	mnl_attr_for_each_nested(g, tb[CTRL_ATTR_MCAST_GROUPS]) {
		const struct nlattr *gb[CTRL_ATTR_MCAST_GRP_MAX + 1] = {};

		if (mnl_attr_parse_nested(g, ctrl_grp_cb, gb) < 0)
			continue;
		if (gb[CTRL_ATTR_MCAST_GRP_ID] && gb[CTRL_ATTR_MCAST_GRP_NAME] &&
		    !strcmp(mnl_attr_get_str(gb[CTRL_ATTR_MCAST_GRP_NAME]),
			    VMAK_MCGRP_MONITOR))
			nl->monitor_grp = mnl_attr_get_u32(gb[CTRL_ATTR_MCAST_GRP_ID]);
	}
	return MNL_CB_OK;
}

static struct nlmsghdr *genl_msg(struct vmak_nl *nl, void *buf, uint16_t type,
				 uint8_t cmd, uint8_t version, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++nl->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

int vmak_nl_open(struct vmak_nl *nl)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int one = 1, err;

	memset(nl, 0, sizeof(*nl));
	nl->seq = (uint32_t)time(NULL);
	nl->sock = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sock)
		return -errno;
	/* Ask for extack text and for errors without the echoed request. */
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto err_close;
	}
	nl->portid = mnl_socket_get_portid(nl->sock);

	nlh = genl_msg(nl, buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, VMAK_FAMILY_NAME);
	err = vmak_nl_talk(nl, nlh, ctrl_family_cb, nl);
	if (err)
		goto err_close;
	if (!nl->family_id) {
		err = -ENOENT;
		goto err_close;
	}
	return 0;

err_close:
	mnl_socket_close(nl->sock);
	nl->sock = NULL;
	return err;
}

void vmak_nl_close(struct vmak_nl *nl)
{
	if (nl->sock)
		mnl_socket_close(nl->sock);
	nl->sock = NULL;
}

struct nlmsghdr *vmak_nl_msg(struct vmak_nl *nl, void *buf, uint8_t cmd,
			     uint16_t flags)
{
	return genl_msg(nl, buf, nl->family_id, cmd, VMAK_FAMILY_VERSION, flags);
}

/* The type of the request's attribute at byte offset o, or -1. */
static int attr_at(const struct vmak_nl *nl, uint32_t o)
{
	if (!nl->req || o < sizeof(struct nlmsghdr) ||
	    o + sizeof(struct nlattr) > nl->req->nlmsg_len)
		return -1;
	return mnl_attr_get_type((const struct nlattr *)
				 ((const char *)nl->req + o));
}

/* Keep the kernel's extack text from an error message. */
static void take_extack(struct vmak_nl *nl, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	size_t off = sizeof(*e);

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += mnl_nlmsg_get_payload_len(&e->msg);
	mnl_attr_for_each(a, nlh, off) {
		switch (mnl_attr_get_type(a)) {
		case NLMSGERR_ATTR_MSG:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
				strncpy(nl->ext_msg, mnl_attr_get_str(a),
					sizeof(nl->ext_msg) - 1);
			break;
		case NLMSGERR_ATTR_OFFS:
			if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
				nl->ext_attr = attr_at(nl, mnl_attr_get_u32(a));
			break;
		case NLMSGERR_ATTR_MISS_TYPE:
			if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
				nl->ext_miss = (int)mnl_attr_get_u32(a);
			break;
		}
	}
}

static __thread char vmak_errbuf[384];

VMAK_API const char *vmak_last_error(void)
{
	return vmak_errbuf;
}

void vmak_nl_set_error(struct vmak_nl *nl, int err, const char *const *names,
		       int nnames)
{
	const char *what = NULL, *name = NULL;
	int type = -1;

	if (nl->ext_attr >= 0) {
		what = "attribute";
		type = nl->ext_attr;
	} else if (nl->ext_miss >= 0) {
		what = "missing attribute";
		type = nl->ext_miss;
	}
	if (type >= 0 && type < nnames && names)
		name = names[type];
	if (!nl->ext_msg[0] && !what) {
		snprintf(vmak_errbuf, sizeof(vmak_errbuf), "%s",
			 vmak_strerror(err));
	} else if (name) {
		snprintf(vmak_errbuf, sizeof(vmak_errbuf), "%s%s(%s %s): %s",
			 nl->ext_msg, nl->ext_msg[0] ? " " : "", what, name,
			 vmak_strerror(err));
	} else {
		snprintf(vmak_errbuf, sizeof(vmak_errbuf), "%s: %s",
			 nl->ext_msg[0] ? nl->ext_msg : "kernel error",
			 vmak_strerror(err));
	}
}

struct talk {
	struct vmak_nl *nl;
	mnl_cb_t cb;
	void *data;
};

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk *t = data;

	return t->cb ? t->cb(nlh, t->data) : MNL_CB_OK;
}

static int err_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	struct vmak_nl *nl = ((struct talk *)data)->nl;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	take_extack(nl, nlh);
	if (e->error == 0)
		return MNL_CB_STOP;
	errno = -e->error;
	return MNL_CB_ERROR;
}

/* The end of a dump: its payload is the dump's error, then extack TLVs. */
static int done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct vmak_nl *nl = ((struct talk *)data)->nl;
	const struct nlattr *a;
	int err;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(int))
		return MNL_CB_STOP;
	memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
	if (!err)
		return MNL_CB_STOP;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		mnl_attr_for_each(a, nlh, sizeof(int)) {
			if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
			    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
				strncpy(nl->ext_msg, mnl_attr_get_str(a),
					sizeof(nl->ext_msg) - 1);
			else if (mnl_attr_get_type(a) == NLMSGERR_ATTR_OFFS &&
				 mnl_attr_validate(a, MNL_TYPE_U32) == 0)
				nl->ext_attr = attr_at(nl, mnl_attr_get_u32(a));
		}
	}
	errno = err < 0 ? -err : err;
	return MNL_CB_ERROR;
}

/*
 * Our dumps go in id order, so a ring that lives through a dump is listed
 * exactly once even when others come and go; the kernel still flags such
 * dumps NLM_F_DUMP_INTR, which libmnl would turn into a failure. Note the
 * flag and clear it.
 */
static void clear_dump_intr(struct vmak_nl *nl, void *buf, size_t len)
{
	struct nlmsghdr *nlh = buf;
	int left = (int)len;

	while (mnl_nlmsg_ok(nlh, left)) {
		if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
			nlh->nlmsg_flags &= (uint16_t)~NLM_F_DUMP_INTR;
			nl->dump_intr = 1;
		}
		nlh = mnl_nlmsg_next(nlh, &left);
	}
}

int vmak_nl_talk(struct vmak_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
		 void *data)
{
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_ERROR] = err_cb,
		[NLMSG_DONE] = done_cb,
	};
	struct talk t = { nl, cb, data };
	char *buf;
	uint32_t seq = nlh->nlmsg_seq;
	int ret;

	nl->ext_msg[0] = '\0';
	nl->ext_attr = -1;
	nl->ext_miss = -1;
	nl->dump_intr = 0;
	nl->req = nlh;
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;

	buf = malloc(VMAK_NL_RCVBUF);
	if (!buf)
		return -ENOMEM;
	do {
		ret = mnl_socket_recvfrom(nl->sock, buf, VMAK_NL_RCVBUF);
		if (ret < 0) {
			ret = -errno;
			break;
		}
		clear_dump_intr(nl, buf, (size_t)ret);
		ret = mnl_cb_run2(buf, ret, seq, nl->portid, data_cb, &t, ctl,
				  NLMSG_MIN_TYPE);
		if (ret == MNL_CB_ERROR)
			ret = -errno;
	} while (ret > 0);
	free(buf);
	return ret < 0 ? ret : 0;
}

VMAK_API const char *vmak_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case ENOENT:
		return "vmak module not loaded (modprobe vmak)";
	case EPROTO:
		return "unexpected reply from the vmak module (version mismatch?)";
	default:
		return strerror(err);
	}
}
