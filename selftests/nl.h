/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A test's own generic netlink client, built on libmnl alone: tests of the
 * kernel's netlink family build their requests and read the kernel's
 * answers (errors, extack) themselves, as the kernel's netlink-dumps.c
 * does, without depending on how the library is built inside.
 *
 *   struct tnl nl;
 *   tnl_open(&nl);                          resolve "vmak"; -ENOENT if absent
 *   nlh = tnl_msg(&nl, buf, cmd, flags);    start a request in buf
 *   err = tnl_talk(&nl, nlh, cb, data);     send, run cb per reply, 0/-errno
 *   nl.ext_msg, nl.ext_attr, nl.ext_miss    the last error's extack
 */
#ifndef _VMAK_TEST_NL_H
#define _VMAK_TEST_NL_H

#include <errno.h>
#include <string.h>
#include <time.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <linux/vmak_genl.h>

struct tnl {
	struct mnl_socket *sock;
	uint16_t family_id;
	uint32_t seq, portid;
	char ext_msg[256];	/* extack text of the last error */
	int ext_attr;		/* type of the request attribute it names, or -1 */
	int ext_miss;		/* type of the attribute it misses, or -1 */
	const struct nlmsghdr *req;
	mnl_cb_t cb;		/* the caller's, for the request in flight */
	void *data;
};

static inline struct nlmsghdr *tnl_genl(struct tnl *nl, void *buf,
					uint16_t type, uint8_t cmd,
					uint8_t version, uint16_t flags)
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

static inline struct nlmsghdr *tnl_msg(struct tnl *nl, void *buf, uint8_t cmd,
				       uint16_t flags)
{
	return tnl_genl(nl, buf, nl->family_id, cmd, VMAK_FAMILY_VERSION, flags);
}

/* The extack attributes of an error (or of a dump's DONE) at offset off. */
static inline void tnl_extack(struct tnl *nl, const struct nlmsghdr *nlh,
			      size_t off)
{
	const struct nlattr *a;
	uint32_t o;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	mnl_attr_for_each(a, nlh, off) {
		switch (mnl_attr_get_type(a)) {
		case NLMSGERR_ATTR_MSG:
			snprintf(nl->ext_msg, sizeof(nl->ext_msg), "%s",
				 mnl_attr_get_str(a));
			break;
		case NLMSGERR_ATTR_OFFS:
			o = mnl_attr_get_u32(a);
			if (o >= sizeof(struct nlmsghdr) &&
			    o + sizeof(struct nlattr) <= nl->req->nlmsg_len)
				nl->ext_attr = mnl_attr_get_type(
					(const struct nlattr *)
					((const char *)nl->req + o));
			break;
		case NLMSGERR_ATTR_MISS_TYPE:
			nl->ext_miss = (int)mnl_attr_get_u32(a);
			break;
		}
	}
}

static inline int tnl_data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tnl *nl = data;

	return nl->cb ? nl->cb(nlh, nl->data) : MNL_CB_OK;
}

static inline int tnl_error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	struct tnl *nl = data;
	size_t off = sizeof(*e);

	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += mnl_nlmsg_get_payload_len(&e->msg);
	tnl_extack(nl, nlh, off);
	if (!e->error)
		return MNL_CB_STOP;
	errno = -e->error;
	return MNL_CB_ERROR;
}

static inline int tnl_done_cb(const struct nlmsghdr *nlh, void *data)
{
	int err = 0;

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(err))
		memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
	tnl_extack(data, nlh, sizeof(err));
	if (!err)
		return MNL_CB_STOP;
	errno = -err;
	return MNL_CB_ERROR;
}

/* Send nlh; run cb on every reply until the ACK or DONE. 0 or -errno. */
static inline int tnl_talk(struct tnl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
			   void *data)
{
	static mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_ERROR] = tnl_error_cb,
		[NLMSG_DONE] = tnl_done_cb,
	};
	char buf[1 << 15];
	ssize_t n;
	int ret;

	nl->ext_msg[0] = '\0';
	nl->ext_attr = nl->ext_miss = -1;
	nl->req = nlh;
	nl->cb = cb;
	nl->data = data;
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(nl->sock, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run2(buf, (size_t)n, nlh->nlmsg_seq, nl->portid,
				  tnl_data_cb, nl, ctl, NLMSG_MIN_TYPE);
	} while (ret > MNL_CB_STOP);
	return ret < 0 ? -errno : 0;
}

static inline int tnl_family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
			((struct tnl *)data)->family_id = mnl_attr_get_u16(a);
	return MNL_CB_OK;
}

static inline void tnl_close(struct tnl *nl)
{
	if (nl->sock)
		mnl_socket_close(nl->sock);
	nl->sock = NULL;
}

/* Open a socket and resolve the "vmak" family: -ENOENT if not loaded. */
static inline int tnl_open(struct tnl *nl)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int one = 1, err;

	memset(nl, 0, sizeof(*nl));
	nl->seq = (uint32_t)time(NULL);
	nl->sock = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sock)
		return -errno;
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		tnl_close(nl);
		return err;
	}
	nl->portid = mnl_socket_get_portid(nl->sock);
	nlh = tnl_genl(nl, buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, VMAK_FAMILY_NAME);
	err = tnl_talk(nl, nlh, tnl_family_cb, nl);
	if (!err && !nl->family_id)
		err = -ENOENT;
	if (err)
		tnl_close(nl);
	return err;
}

#endif /* _VMAK_TEST_NL_H */
