/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every piece of kernel-version knowledge lives here; the core files never
 * test LINUX_VERSION_CODE. Where a distribution may backport a change, a
 * feature test (a symbol or macro the change brought) is preferred to a
 * version number; each version test below is for a change Debian's
 * kernels carry as upstream made it.
 */
#ifndef _VMAK_COMPAT_H
#define _VMAK_COMPAT_H

#include <linux/version.h>
#include <linux/skbuff.h>

/* 6.12 moved the unaligned access helpers out of asm/. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * The software receive timestamp of an skb in CLOCK_REALTIME ns, or 0
 * when it has none (or holds a delivery time in another clock).
 * 6.11 replaced mono_delivery_time with tstamp_type.
 */
static inline u64 vmak_skb_rx_tstamp_ns(const struct sk_buff *skb)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
	if (skb->tstamp_type != SKB_CLOCK_REALTIME)
		return 0;
#else
	if (skb->mono_delivery_time)
		return 0;
#endif
	return ktime_to_ns(skb->tstamp);
}

/*
 * Give back what a page fragment cache holds of its current page. 6.12
 * has it; before, the cache's fields (unchanged from 4.x to 6.12) say it.
 */
static inline void vmak_page_frag_drain(struct page_frag_cache *nc)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	page_frag_cache_drain(nc);
#else
	if (nc->va) {
		__page_frag_cache_drain(virt_to_head_page(nc->va),
					nc->pagecnt_bias);
		nc->va = NULL;
	}
#endif
}

/*
 * 6.10 moved the zero-copy completion callback of struct ubuf_info into
 * struct ubuf_info_ops.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define VMAK_HAVE_UBUF_OPS 1
#endif

/*
 * The parsed attributes of a generic netlink dump request. 6.2 put a
 * struct genl_info into struct genl_dumpit_info.
 */
#define vmak_genl_dump_attrs(cb) vmak_genl_dump_attrs_(genl_dumpit_info(cb))
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define vmak_genl_dump_attrs_(gdi) ((gdi)->info.attrs)
#else
#define vmak_genl_dump_attrs_(gdi) ((gdi)->attrs)
#endif

#endif /* _VMAK_COMPAT_H */
