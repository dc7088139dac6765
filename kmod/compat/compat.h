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
#include <linux/hrtimer.h>
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

/*
 * 6.13 added hrtimer_setup() (timer, function, clock, mode in one call);
 * 6.15 removed hrtimer_init().
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define vmak_hrtimer_setup(t, fn, clock, mode) hrtimer_setup(t, fn, clock, mode)
#else
static inline void vmak_hrtimer_setup(struct hrtimer *t,
				      enum hrtimer_restart (*fn)(struct hrtimer *),
				      clockid_t clock, enum hrtimer_mode mode)
{
	hrtimer_init(t, clock, mode);
	t->function = fn;
}
#endif

/*
 * 6.10 added dst_rt6_info() (and stable kernels took it back), a macro:
 * its absence is the feature test.
 */
#include <net/ip6_fib.h>
#ifndef dst_rt6_info
#define dst_rt6_info(dst) ((struct rt6_info *)(dst))
#endif

/* 6.3 made vma->vm_flags read-only behind vm_flags_set(). */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
#include <linux/mm.h>
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/*
 * A socket that may bind an address the host does not have: IP_FREEBIND,
 * IPV6_FREEBIND, IP_TRANSPARENT or IPV6_TRANSPARENT (one bit each for both
 * families). 6.6 turned the inet_sock bitfields into flags.
 */
#include <net/inet_sock.h>
static inline bool vmak_sk_nonlocal_bind(struct sock *sk)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	return inet_test_bit(FREEBIND, sk) || inet_test_bit(TRANSPARENT, sk);
#else
	return inet_sk(sk)->freebind || inet_sk(sk)->transparent;
#endif
}

/* 6.2 gave each netns its own UDP hash table. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define vmak_udp_table(net) ((net)->ipv4.udp_table)
#else
#define vmak_udp_table(net) (&udp_table)
#endif

#endif /* _VMAK_COMPAT_H */
