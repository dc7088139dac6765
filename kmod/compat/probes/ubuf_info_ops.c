// SPDX-License-Identifier: GPL-2.0
/*
 * The zero-copy completion callback is in struct ubuf_info_ops, not in
 * struct ubuf_info.
 */
#include <linux/skbuff.h>

static void probe_complete(struct sk_buff *skb, struct ubuf_info *uarg,
			   bool success)
{
}

static const struct ubuf_info_ops probe_ops = {
	.complete = probe_complete,
};

static void __used probe_set(struct ubuf_info *uarg)
{
	uarg->ops = &probe_ops;
}
