// SPDX-License-Identifier: GPL-2.0
/* skb->tstamp_type (SKB_CLOCK_*) replaced skb->mono_delivery_time. */
#include <linux/skbuff.h>

static bool __used probe_realtime(const struct sk_buff *skb)
{
	return skb->tstamp_type == SKB_CLOCK_REALTIME;
}
