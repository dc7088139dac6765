// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "nl.h"

/* Big enough for one dump batch (the kernel fills up to 32 KiB). */
#define VMAK_NL_RCVBUF 32768

static int ctrl_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, CTRL_ATTR_MAX) < 0)
		return MNL_CB_OK;	/* newer kernel: skip */
	if (type == CTRL_ATTR_FAMILY_ID &&
	    mnl_attr_validate(attr, MNL_TYPE_U16) < 0)
		return MNL_CB_ERROR;
	tb[type] = attr;
	return MNL_CB_OK;
}

static int ctrl_family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1] = {};
	uint16_t *id = data;

	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), ctrl_attr_cb, tb);
	if (tb[CTRL_ATTR_FAMILY_ID])
		*id = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
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
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, VMAK_GENL_NAME);
	err = vmak_nl_talk(nl, nlh, ctrl_family_cb, &nl->family_id);
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
	return genl_msg(nl, buf, nl->family_id, cmd, VMAK_GENL_VERSION, flags);
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
		if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0) {
			strncpy(nl->ext_msg, mnl_attr_get_str(a),
				sizeof(nl->ext_msg) - 1);
		}
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

int vmak_nl_talk(struct vmak_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
		 void *data)
{
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = { [NLMSG_ERROR] = err_cb };
	struct talk t = { nl, cb, data };
	char *buf;
	uint32_t seq = nlh->nlmsg_seq;
	int ret;

	nl->ext_msg[0] = '\0';
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
		ret = mnl_cb_run2(buf, ret, seq, nl->portid, data_cb, &t, ctl,
				  NLMSG_MIN_TYPE);
		if (ret == MNL_CB_ERROR)
			ret = -errno;
	} while (ret > 0);
	free(buf);
	return ret < 0 ? ret : 0;
}
