// SPDX-License-Identifier: GPL-2.0
/*
 * The "vmak" generic netlink family (Documentation/netlink/vmak.yaml).
 */
#include <linux/module.h>
#include <net/genetlink.h>

#include "vmak.h"

static struct genl_family vmak_genl_family;

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
	    nla_put_u32(msg, VMAK_A_INFO_FAMILY, vmak_family))
		goto err_free;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static const struct nla_policy vmak_info_policy[VMAK_A_INFO_MAX + 1] = {
	[VMAK_A_INFO_VERSION]	= { .type = NLA_REJECT },
	[VMAK_A_INFO_FAMILY]	= { .type = NLA_REJECT },
};

static const struct genl_ops vmak_genl_ops[] = {
	{
		.cmd		= VMAK_CMD_INFO_GET,
		.doit		= vmak_nl_info_get_doit,
		.policy		= vmak_info_policy,
		.maxattr	= VMAK_A_INFO_MAX,
	},
};

static struct genl_family vmak_genl_family __ro_after_init = {
	.name		= VMAK_GENL_NAME,
	.version	= VMAK_GENL_VERSION,
	.netnsok	= true,
	.module		= THIS_MODULE,
	.ops		= vmak_genl_ops,
	.n_ops		= ARRAY_SIZE(vmak_genl_ops),
	.resv_start_op	= VMAK_CMD_INFO_GET,
};

int __init vmak_genl_init(void)
{
	return genl_register_family(&vmak_genl_family);
}

void vmak_genl_exit(void)
{
	genl_unregister_family(&vmak_genl_family);
}
