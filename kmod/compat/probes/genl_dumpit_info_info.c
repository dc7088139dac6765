// SPDX-License-Identifier: GPL-2.0
/* struct genl_dumpit_info holds a struct genl_info (info.attrs). */
#include <net/genetlink.h>

static struct nlattr ** __used probe_attrs(struct netlink_callback *cb)
{
	return genl_dumpit_info(cb)->info.attrs;
}
