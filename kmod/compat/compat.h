/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every piece of kernel-version knowledge lives here; the core files never
 * test LINUX_VERSION_CODE, and neither does this file. Each difference is
 * a feature test: a probe in kmod/compat/probes/ that Kbuild compiles
 * against the target kernel before the module (kmod/compat/probe.sh), and
 * that defines VMAK_HAVE_<PROBE> in the generated probed.h when it
 * compiled, or a macro of the kernel's own. A distribution's backport is
 * then taken as it is. The version named beside each is where upstream
 * made the change, for the reader only; Documentation/kernels.rst lists
 * them all.
 */
#ifndef _VMAK_COMPAT_H
#define _VMAK_COMPAT_H

/* A probe is compiled with this file's flags but without this file. */
#ifndef VMAK_PROBE

#include "probed.h"

#include <linux/hrtimer.h>
#include <linux/skbuff.h>
#include <net/sock.h>

/* 6.12 moved the unaligned access helpers out of asm/. */
#ifdef VMAK_HAVE_LINUX_UNALIGNED_H
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
#ifdef VMAK_HAVE_SKB_TSTAMP_TYPE
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
#ifdef VMAK_HAVE_PAGE_FRAG_CACHE_DRAIN
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
 * struct ubuf_info_ops: tx.c tests VMAK_HAVE_UBUF_INFO_OPS itself.
 */

/*
 * The parsed attributes of a generic netlink dump request. 6.2 put a
 * struct genl_info into struct genl_dumpit_info.
 */
#define vmak_genl_dump_attrs(cb) vmak_genl_dump_attrs_(genl_dumpit_info(cb))
#ifdef VMAK_HAVE_GENL_DUMPIT_INFO_INFO
#define vmak_genl_dump_attrs_(gdi) ((gdi)->info.attrs)
#else
#define vmak_genl_dump_attrs_(gdi) ((gdi)->attrs)
#endif

/*
 * 6.13 added hrtimer_setup() (timer, function, clock, mode in one call);
 * 6.15 removed hrtimer_init().
 */
#ifdef VMAK_HAVE_HRTIMER_SETUP
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
#ifndef VMAK_HAVE_VM_FLAGS_SET
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
#ifdef VMAK_HAVE_INET_TEST_BIT
	return inet_test_bit(FREEBIND, sk) || inet_test_bit(TRANSPARENT, sk);
#else
	return inet_sk(sk)->freebind || inet_sk(sk)->transparent;
#endif
}

/* 6.2 gave each netns its own UDP hash table. */
#ifdef VMAK_HAVE_NETNS_UDP_TABLE
#define vmak_udp_table(net) ((net)->ipv4.udp_table)
#else
#define vmak_udp_table(net) (&udp_table)
#endif

/*
 * The owner of a socket (whoever opened it). After 6.12 sk_uid() reads it
 * and sock_i_uid() is gone (7.2 has only sk_uid()).
 */
static inline kuid_t vmak_sk_uid(struct sock *sk)
{
#ifdef VMAK_HAVE_SK_UID
	return sk_uid(sk);
#else
	return sock_i_uid(sk);
#endif
}

/*
 * The address that proto_ops.bind is given (struct vmak_bind_addr). After 6.12 it became a
 * struct sockaddr_unsized *, which names no size (7.2 has it).
 */
#ifdef VMAK_HAVE_BIND_SOCKADDR_UNSIZED
#define vmak_bind_addr sockaddr_unsized
#else
#define vmak_bind_addr sockaddr
#endif

#endif /* VMAK_PROBE */
#endif /* _VMAK_COMPAT_H */
