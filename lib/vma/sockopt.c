// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * What a socket option means for an offloaded socket: the kernel socket
 * takes every option first (it answers, and refuses, as without us);
 * once it has taken one, this table says what follows for the rings.
 *
 *   receive side  control messages we write from the frame (IP_PKTINFO,
 *                 SO_TIMESTAMP(NS), SO_RXQ_OVFL), groups joined and left,
 *                 what the socket owns (a device, freebind: new rules),
 *                 and what the rings cannot give (other control messages,
 *                 filters, source-filtered multicast, UDP GRO): back to
 *                 the kernel socket for good, one line naming it
 *   send side     IP header options the module copies from the socket
 *                 that names the route (mirrored onto our helper socket
 *                 for unconnected sends), and those it cannot honour
 *                 (mark, priority, IP options, segmentation offload,
 *                 multicast loopback): sends go through the kernel
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>

#include "sys.h"
#include "udp.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif
/* Linux's numbers, for headers older than the options */
#ifndef SO_RCVMARK
#define SO_RCVMARK	75
#endif
#ifndef SO_PEEK_OFF
#define SO_PEEK_OFF	42
#endif
#ifndef IPV6_FLOWINFO
#define IPV6_FLOWINFO	11
#endif

enum opt_action {
	OPT_GROUP,		/* IP(V6)_ADD/DROP_MEMBERSHIP */
	OPT_MCAST,		/* MCAST_JOIN/LEAVE_GROUP */
	OPT_PKTINFO, OPT_PKTINFO6,
	OPT_TIMESTAMP,		/* SO_TIMESTAMP(NS) */
	OPT_TIMESTAMPING,	/* SO_TIMESTAMPING */
	OPT_RXQ_OVFL,
	OPT_RCVTIMEO,
	OPT_REOFFLOAD,		/* what the socket owns changed */
	OPT_REOFFLOAD_ON,	/* ... when switched on */
	OPT_OS,			/* the rings cannot: back to the kernel */
	OPT_OS_ON,		/* ... when switched on */
	OPT_TX_MIRROR,		/* header field: copied to the helper */
	OPT_TX_KERNEL,		/* sends go through the kernel while set */
	OPT_TX_KERNEL_BUF,	/* ... while what is set is not empty */
	OPT_MC_LOOP,
	OPT_MC_IF,
	OPT_UDP_CORK,
};

struct opt {
	int level, name;
	enum opt_action act;
	const char *what;
};

static const struct opt opts[] = {
	{ SOL_SOCKET, SO_BINDTODEVICE, OPT_REOFFLOAD, NULL },
	{ SOL_SOCKET, SO_BINDTOIFINDEX, OPT_REOFFLOAD, NULL },
	{ SOL_SOCKET, SO_TIMESTAMP, OPT_TIMESTAMP, NULL },
	{ SOL_SOCKET, SO_TIMESTAMPNS, OPT_TIMESTAMP, NULL },
#ifdef SO_TIMESTAMP_NEW
	{ SOL_SOCKET, SO_TIMESTAMP_NEW, OPT_OS_ON, "SO_TIMESTAMP_NEW" },
	{ SOL_SOCKET, SO_TIMESTAMPNS_NEW, OPT_OS_ON, "SO_TIMESTAMPNS_NEW" },
#endif
	{ SOL_SOCKET, SO_TIMESTAMPING, OPT_TIMESTAMPING, NULL },
	{ SOL_SOCKET, SO_RXQ_OVFL, OPT_RXQ_OVFL, NULL },
	{ SOL_SOCKET, SO_RCVTIMEO, OPT_RCVTIMEO, NULL },
#ifdef SO_RCVTIMEO_NEW
	{ SOL_SOCKET, SO_RCVTIMEO_NEW, OPT_RCVTIMEO, NULL },
#endif
	{ SOL_SOCKET, SO_ATTACH_FILTER, OPT_OS, "a socket filter" },
	{ SOL_SOCKET, SO_ATTACH_BPF, OPT_OS, "a socket filter" },
	{ SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, OPT_OS, "a reuseport filter" },
	{ SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, OPT_OS, "a reuseport filter" },
	{ SOL_SOCKET, SO_RCVMARK, OPT_OS_ON, "SO_RCVMARK" },
	{ SOL_SOCKET, SO_PEEK_OFF, OPT_OS, "SO_PEEK_OFF" },
	{ SOL_SOCKET, SO_MARK, OPT_TX_KERNEL, NULL },
	{ SOL_SOCKET, SO_PRIORITY, OPT_TX_KERNEL, NULL },
	{ SOL_SOCKET, SO_TXTIME, OPT_TX_KERNEL, NULL },
	{ SOL_SOCKET, SO_NO_CHECK, OPT_TX_KERNEL, NULL },
	{ SOL_SOCKET, SO_DONTROUTE, OPT_TX_KERNEL, NULL },
	{ IPPROTO_IP, IP_UNICAST_IF, OPT_TX_KERNEL, NULL },
	{ IPPROTO_IPV6, IPV6_UNICAST_IF, OPT_TX_KERNEL, NULL },
	{ IPPROTO_IP, IP_ADD_MEMBERSHIP, OPT_GROUP, NULL },
	{ IPPROTO_IP, IP_DROP_MEMBERSHIP, OPT_GROUP, NULL },
	{ IPPROTO_IP, MCAST_JOIN_GROUP, OPT_MCAST, NULL },
	{ IPPROTO_IP, MCAST_LEAVE_GROUP, OPT_MCAST, NULL },
	{ IPPROTO_IP, IP_PKTINFO, OPT_PKTINFO, NULL },
	{ IPPROTO_IP, IP_FREEBIND, OPT_REOFFLOAD_ON, NULL },
	{ IPPROTO_IP, IP_TRANSPARENT, OPT_REOFFLOAD_ON, NULL },
	{ IPPROTO_IP, IP_ADD_SOURCE_MEMBERSHIP, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IP, IP_BLOCK_SOURCE, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IP, MCAST_JOIN_SOURCE_GROUP, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IP, MCAST_BLOCK_SOURCE, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IP, IP_MSFILTER, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IP, MCAST_MSFILTER, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IP, IP_RECVTTL, OPT_OS_ON, "IP_RECVTTL" },
	{ IPPROTO_IP, IP_RECVTOS, OPT_OS_ON, "IP_RECVTOS" },
	{ IPPROTO_IP, IP_RECVOPTS, OPT_OS_ON, "IP_RECVOPTS" },
	{ IPPROTO_IP, IP_RETOPTS, OPT_OS_ON, "IP_RETOPTS" },
	{ IPPROTO_IP, IP_RECVORIGDSTADDR, OPT_OS_ON, "IP_RECVORIGDSTADDR" },
	{ IPPROTO_IP, IP_RECVERR, OPT_OS_ON, "IP_RECVERR" },
	{ IPPROTO_IP, IP_CHECKSUM, OPT_OS_ON, "IP_CHECKSUM" },
	{ IPPROTO_IP, IP_PASSSEC, OPT_OS_ON, "IP_PASSSEC" },
	{ IPPROTO_IP, IP_TOS, OPT_TX_MIRROR, NULL },
	{ IPPROTO_IP, IP_TTL, OPT_TX_MIRROR, NULL },
	{ IPPROTO_IP, IP_MULTICAST_TTL, OPT_TX_MIRROR, NULL },
	{ IPPROTO_IP, IP_MTU_DISCOVER, OPT_TX_MIRROR, NULL },
	{ IPPROTO_IP, IP_OPTIONS, OPT_TX_KERNEL_BUF, NULL },
	{ IPPROTO_IP, IP_MULTICAST_LOOP, OPT_MC_LOOP, NULL },
	{ IPPROTO_IP, IP_MULTICAST_IF, OPT_MC_IF, NULL },
	{ IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, OPT_GROUP, NULL },
	{ IPPROTO_IPV6, IPV6_DROP_MEMBERSHIP, OPT_GROUP, NULL },
	{ IPPROTO_IPV6, MCAST_JOIN_GROUP, OPT_MCAST, NULL },
	{ IPPROTO_IPV6, MCAST_LEAVE_GROUP, OPT_MCAST, NULL },
	{ IPPROTO_IPV6, IPV6_RECVPKTINFO, OPT_PKTINFO6, NULL },
	{ IPPROTO_IPV6, IPV6_FREEBIND, OPT_REOFFLOAD_ON, NULL },
	{ IPPROTO_IPV6, IPV6_TRANSPARENT, OPT_REOFFLOAD_ON, NULL },
	{ IPPROTO_IPV6, MCAST_JOIN_SOURCE_GROUP, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IPV6, MCAST_BLOCK_SOURCE, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IPV6, MCAST_MSFILTER, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IPV6, IPV6_RECVHOPLIMIT, OPT_OS_ON, "IPV6_RECVHOPLIMIT" },
	{ IPPROTO_IPV6, IPV6_RECVTCLASS, OPT_OS_ON, "IPV6_RECVTCLASS" },
	{ IPPROTO_IPV6, IPV6_RECVORIGDSTADDR, OPT_OS_ON, "IPV6_RECVORIGDSTADDR" },
	{ IPPROTO_IPV6, IPV6_RECVERR, OPT_OS_ON, "IPV6_RECVERR" },
	{ IPPROTO_IPV6, IPV6_RECVRTHDR, OPT_OS_ON, "IPV6_RECVRTHDR" },
	{ IPPROTO_IPV6, IPV6_RECVHOPOPTS, OPT_OS_ON, "IPV6_RECVHOPOPTS" },
	{ IPPROTO_IPV6, IPV6_RECVDSTOPTS, OPT_OS_ON, "IPV6_RECVDSTOPTS" },
	{ IPPROTO_IPV6, IPV6_RECVPATHMTU, OPT_OS_ON, "IPV6_RECVPATHMTU" },
	{ IPPROTO_IPV6, IPV6_FLOWINFO, OPT_OS_ON, "IPV6_FLOWINFO" },
	{ IPPROTO_IPV6, IPV6_2292PKTINFO, OPT_OS_ON, "IPV6_2292PKTINFO" },
	{ IPPROTO_IPV6, IPV6_2292HOPLIMIT, OPT_OS_ON, "IPV6_2292HOPLIMIT" },
	{ IPPROTO_IPV6, IPV6_2292HOPOPTS, OPT_OS_ON, "IPV6_2292HOPOPTS" },
	{ IPPROTO_IPV6, IPV6_2292DSTOPTS, OPT_OS_ON, "IPV6_2292DSTOPTS" },
	{ IPPROTO_IPV6, IPV6_2292RTHDR, OPT_OS_ON, "IPV6_2292RTHDR" },
	/* sticky extension headers every send carries */
	{ IPPROTO_IPV6, IPV6_HOPOPTS, OPT_TX_KERNEL_BUF, NULL },
	{ IPPROTO_IPV6, IPV6_RTHDR, OPT_TX_KERNEL_BUF, NULL },
	{ IPPROTO_IPV6, IPV6_RTHDRDSTOPTS, OPT_TX_KERNEL_BUF, NULL },
	{ IPPROTO_IPV6, IPV6_DSTOPTS, OPT_TX_KERNEL_BUF, NULL },
	{ IPPROTO_IPV6, IPV6_2292PKTOPTIONS, OPT_TX_KERNEL_BUF, NULL },
	{ IPPROTO_IPV6, IPV6_TCLASS, OPT_TX_MIRROR, NULL },
	{ IPPROTO_IPV6, IPV6_UNICAST_HOPS, OPT_TX_MIRROR, NULL },
	{ IPPROTO_IPV6, IPV6_MULTICAST_HOPS, OPT_TX_MIRROR, NULL },
	{ IPPROTO_IPV6, IPV6_MTU_DISCOVER, OPT_TX_MIRROR, NULL },
	{ IPPROTO_IPV6, IPV6_DONTFRAG, OPT_TX_MIRROR, NULL },
	{ IPPROTO_IPV6, IPV6_MULTICAST_LOOP, OPT_MC_LOOP, NULL },
	{ IPPROTO_IPV6, IPV6_MULTICAST_IF, OPT_MC_IF, NULL },
	{ IPPROTO_UDP, UDP_CORK, OPT_UDP_CORK, NULL },
	{ IPPROTO_UDP, UDP_SEGMENT, OPT_TX_KERNEL, NULL },
};

#define NOPTS	(sizeof(opts) / sizeof(opts[0]))

void vudp_opt_init(struct vudp *u, bool nonblock)
{
	u->opt.nonblock = nonblock;
	u->opt.rcvtimeo_ms = -1;
	u->opt.mc_loop = true;
}

static int opt_int(const void *val, socklen_t len)
{
	if (len >= sizeof(int))
		return *(const int *)val;
	return len >= 1 ? *(const unsigned char *)val : 0;
}

static void opt_group(struct vudp *u, int level, int name, const void *val,
		      socklen_t len)
{
	struct sockaddr_storage g;
	int ifindex = 0;
	bool join;

	memset(&g, 0, sizeof(g));
	if (level == IPPROTO_IP) {
		const struct ip_mreqn *mr = val;
		struct sockaddr_in *in = (struct sockaddr_in *)&g;

		in->sin_family = AF_INET;
		in->sin_addr = mr->imr_multiaddr;
		if (len >= sizeof(struct ip_mreqn))
			ifindex = mr->imr_ifindex;
		join = name == IP_ADD_MEMBERSHIP;
	} else {
		const struct ipv6_mreq *mr = val;
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&g;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = mr->ipv6mr_multiaddr;
		ifindex = (int)mr->ipv6mr_interface;
		join = name == IPV6_ADD_MEMBERSHIP;
	}
	vudp_group(u, join, (struct sockaddr *)&g, ifindex);
}

static void opt_mcast(struct vudp *u, int name, const void *val)
{
	const struct group_req *gr = val;

	vudp_group(u, name == MCAST_JOIN_GROUP,
		   (const struct sockaddr *)&gr->gr_group, (int)gr->gr_interface);
}

static void opt_timestamp(struct vudp *u, int name, bool on)
{
	if (on && !vconf.rx_timestamp) {
		vudp_to_os(u, "SO_TIMESTAMP(NS) and VMAK_RX_TIMESTAMP=0: the rings take no timestamps");
		return;
	}
	/* the kernel keeps one mode: the last set wins, off is off */
	__atomic_store_n(&u->opt.tstamp, !on ? VTS_NONE :
			 name == SO_TIMESTAMPNS ? VTS_NSEC : VTS_USEC,
			 __ATOMIC_RELAXED);
}

/*
 * SO_TIMESTAMPING flags a ring datagram can answer: the software receive
 * stamp (the ring's, SCM_TIMESTAMPING's ts[0]) and flags that only shape
 * what sends report, which a socket with any of the send flags does not
 * reach (they go to the kernel below). Hardware stamps, send stamps and
 * a bound PHC are the kernel socket's.
 */
#define TS_RING_FLAGS (SOF_TIMESTAMPING_RX_SOFTWARE | \
		       SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID | \
		       SOF_TIMESTAMPING_OPT_CMSG | SOF_TIMESTAMPING_OPT_TSONLY)

static void opt_timestamping(struct vudp *u, int flags)
{
	if (flags & ~TS_RING_FLAGS) {
		vudp_to_os(u, "SO_TIMESTAMPING with hardware or send stamps, which the rings do not give");
		return;
	}
	if ((flags & SOF_TIMESTAMPING_SOFTWARE) && !vconf.rx_timestamp) {
		vudp_to_os(u, "SO_TIMESTAMPING and VMAK_RX_TIMESTAMP=0: the rings take no timestamps");
		return;
	}
	__atomic_store_n(&u->opt.tsflags, (uint32_t)flags, __ATOMIC_RELAXED);
}

static void opt_rcvtimeo(struct vudp *u, const void *val, socklen_t len)
{
	struct timeval tv;
	int64_t ms;

	if (len < sizeof(tv))
		return;
	memcpy(&tv, val, sizeof(tv));
	ms = (int64_t)tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000;
	/* the kernel takes 0 as "none", and clamps what is too long */
	__atomic_store_n(&u->opt.rcvtimeo_ms,
			 !ms ? -1 : ms > 0x7fffffff ? 0x7fffffff : (int)ms,
			 __ATOMIC_RELAXED);
}

/* Each option that sends through the kernel while set, its own bit. */
static unsigned int tx_kernel_bit(const struct opt *o)
{
	unsigned int bit = 0;
	const struct opt *p;

	for (p = opts; p < o; p++)
		bit += p->act == OPT_TX_KERNEL || p->act == OPT_TX_KERNEL_BUF;
	return bit < 32 ? bit : 31;	/* 14 today; past 32 they would share */
}

static void opt_tx_kernel(struct vudp *u, unsigned int bit, bool on)
{
	uint32_t b = 1U << bit;

	/* two threads' options at once: neither bit lost */
	if (on)
		__atomic_fetch_or(&u->opt.tx_kernel_mask, b, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&u->opt.tx_kernel_mask, ~b, __ATOMIC_RELAXED);
}

/* One WARNING per option that keeps a socket on the kernel socket. */
static void warn_once(const struct opt *o, const char *why)
{
	static uint64_t done[(NOPTS + 63) / 64];
	unsigned int i = (unsigned int)(o - opts);

	if (__atomic_fetch_or(&done[i / 64], 1ULL << (i % 64), __ATOMIC_RELAXED) &
	    (1ULL << (i % 64)))
		return;
	vlog(VLOG_WARNING, "a UDP socket stays on the kernel socket for good: %s (later sockets with it are not logged)",
	     why);
}

/* The socket took the option: what follows for the rings. */
static void opt_taken(struct vudp *u, const struct opt *o, const void *val,
		      socklen_t len)
{
	int v = opt_int(val, len);
	char why[96];

	switch (o->act) {
	case OPT_GROUP:
		opt_group(u, o->level, o->name, val, len);
		break;
	case OPT_MCAST:
		opt_mcast(u, o->name, val);
		break;
	case OPT_PKTINFO:
		__atomic_store_n(&u->opt.pktinfo, v != 0, __ATOMIC_RELAXED);
		break;
	case OPT_PKTINFO6:
		__atomic_store_n(&u->opt.pktinfo6, v != 0, __ATOMIC_RELAXED);
		break;
	case OPT_TIMESTAMP:
		opt_timestamp(u, o->name, v);
		break;
	case OPT_TIMESTAMPING:
		opt_timestamping(u, v);
		break;
	case OPT_RXQ_OVFL:
		__atomic_store_n(&u->opt.rxq_ovfl, v != 0, __ATOMIC_RELAXED);
		break;
	case OPT_RCVTIMEO:
		opt_rcvtimeo(u, val, len);
		break;
	case OPT_REOFFLOAD_ON:
		if (!v)
			break;
		/* fall through */
	case OPT_REOFFLOAD:
		vudp_offload(u);	/* the module refuses freebind */
		break;
	case OPT_OS_ON:
		if (!v)
			break;
		/* fall through */
	case OPT_OS:
		snprintf(why, sizeof(why), "%s, which the rings do not give",
			 o->what);
		vudp_to_os(u, why);
		warn_once(o, why);
		break;
	case OPT_TX_MIRROR:
		vudp_tx_option(u, o->level, o->name, v);
		break;
	case OPT_TX_KERNEL:
		opt_tx_kernel(u, tx_kernel_bit(o), v != 0);
		break;
	case OPT_TX_KERNEL_BUF:
		opt_tx_kernel(u, tx_kernel_bit(o), len > 0);
		break;
	case OPT_MC_LOOP:
		__atomic_store_n(&u->opt.mc_loop, v != 0, __ATOMIC_RELAXED);
		break;
	case OPT_MC_IF:
		__atomic_store_n(&u->opt.mc_if, true, __ATOMIC_RELAXED);
		break;
	case OPT_UDP_CORK:
		__atomic_store_n(&u->opt.udp_cork, v != 0, __ATOMIC_RELAXED);
		break;
	}
}

/*
 * libvma's socket options, as libvma takes them: SO_VMA_USER_DATA (a
 * pointer-sized value, reported in socketXtreme completions),
 * SO_VMA_FLOW_TAG (a non-zero 32-bit tag: vmak's rules carry a cookie of
 * their own, which getsockopt() shows until a tag is set), SO_VMA_SHUTDOWN_RX
 * (no more receiving through rings: the kernel socket receives it all),
 * SO_VMA_RING_ALLOC_LOGIC (offload.c). Others (SO_VMA_RING_USER_MEMORY): the
 * kernel's answer, ENOPROTOOPT.
 */
static int vma_option(struct vudp *u, int name, const void *val, socklen_t len)
{
	switch (name) {
	case SO_VMA_USER_DATA:
		if (!val || len != sizeof(uint64_t))
			return -EINVAL;
		__atomic_store_n(&u->user_data_set, true, __ATOMIC_RELAXED);
		__atomic_store_n(&u->user_data, *(const uint64_t *)val,
				 __ATOMIC_RELAXED);
		return 0;
	case SO_VMA_FLOW_TAG:
		if (!val || len != sizeof(uint32_t) || !*(const uint32_t *)val)
			return -EINVAL;
		u->flow_tag = *(const uint32_t *)val;
		return 0;
	case SO_VMA_SHUTDOWN_RX:
		u->shutdown_rx = true;
		vudp_to_os(u, "SO_VMA_SHUTDOWN_RX");
		return 0;
	case SO_VMA_RING_ALLOC_LOGIC:
		return vudp_ring_logic(u, val, len);
	default:
		return -ENOPROTOOPT;
	}
}

int vudp_getsockopt(struct vfd *f, int fd, int level, int name, void *val,
		    socklen_t *len)
{
	struct vudp *u = vudp_of(f);
	uint64_t v64;
	uint32_t v32;

	if (level == SOL_SOCKET && name == SO_MAX_PACING_RATE &&
	    __atomic_load_n(&u->tx.paced_set, __ATOMIC_RELAXED)) {
		int err = vudp_pacing_get(u, val, len);

		if (err) {
			errno = -err;
			return -1;
		}
		return 0;
	}
	if (level != SOL_SOCKET ||
	    (name != SO_VMA_USER_DATA && name != SO_VMA_FLOW_TAG))
		return vmak_sys_getsockopt(fd, level, name, val, len);
	if (!val || !len) {
		errno = EFAULT;
		return -1;
	}
	if (name == SO_VMA_USER_DATA) {
		if (*len < sizeof(v64)) {
			errno = EINVAL;
			return -1;
		}
		v64 = __atomic_load_n(&u->user_data, __ATOMIC_RELAXED);
		memcpy(val, &v64, sizeof(v64));
		*len = sizeof(v64);
		return 0;
	}
	if (*len < sizeof(v32)) {
		errno = EINVAL;
		return -1;
	}
	pthread_rwlock_rdlock(&u->lock);
	v32 = u->flow_tag ? u->flow_tag : u->natt ? u->att[0]->cookie : 0;
	pthread_rwlock_unlock(&u->lock);
	memcpy(val, &v32, sizeof(v32));
	*len = sizeof(v32);
	return 0;
}

int vudp_setsockopt(struct vfd *f, int fd, int level, int name,
		    const void *val, socklen_t len)
{
	struct vudp *u = vudp_of(f);
	unsigned int i;
	int rc, err;

	/* libvma's pacing: the rings' limit, not the kernel's (pacing.c) */
	if (level == SOL_SOCKET && name == SO_MAX_PACING_RATE &&
	    !__atomic_load_n(&u->os_only, __ATOMIC_RELAXED)) {
		err = vudp_pacing_set(u, val, len);
		if (err) {
			errno = -err;
			return -1;
		}
		return 0;
	}
	/* libvma's own options: the kernel does not know them */
	if (level == SOL_SOCKET && name >= SO_VMA_GET_API &&
	    name <= SO_VMA_SHUTDOWN_RX && name != SO_VMA_GET_API) {
		err = vma_option(u, name, val, len);
		if (err) {
			errno = -err;
			return -1;
		}
		return 0;
	}
	rc = vmak_sys_setsockopt(fd, level, name, val, len);
	if (rc)
		return rc;
	err = errno;
	for (i = 0; i < NOPTS; i++)
		if (opts[i].level == level && opts[i].name == name)
			break;
	/* a buffer option is cleared with none (IP_OPTIONS, NULL, 0) */
	if (i < NOPTS && (val || opts[i].act == OPT_TX_KERNEL_BUF)) {
		opt_taken(u, &opts[i], val, val ? len : 0);
	} else if (level == IPPROTO_UDP && opt_int(val, len)) {
		/* GRO, encapsulation, checksum coverage: not on rings */
		vudp_to_os(u, "a UDP option (GRO, encapsulation, checksum coverage)");
		vlog_once(VLOG_WARNING, "a UDP socket stays on the kernel socket for good: UDP option %d, which the rings do not give (later such sockets are not logged)",
			  name);
	}
	vudp_settle(u);
	errno = err;
	return 0;
}

/* ---- fcntl, ioctl ---- */

int vudp_fcntl(struct vfd *f, int fd, int cmd, long arg)
{
	struct vudp *u = vudp_of(f);
	int rc = vmak_sys_fcntl(fd, cmd, arg);

	if (rc >= 0 && cmd == F_SETFL)
		__atomic_store_n(&u->opt.nonblock, !!(arg & O_NONBLOCK),
				 __ATOMIC_RELAXED);
	return rc;
}

static int put_stamp(struct vudp *u, unsigned long req, long arg)
{
	uint64_t ns;
	int err = vudp_last_stamp(u, &ns);

	if (err)
		return err;
	if (req == SIOCGSTAMP) {
		struct timeval tv = { (time_t)(ns / 1000000000ULL),
				      (suseconds_t)(ns % 1000000000ULL / 1000) };

		memcpy((void *)arg, &tv, sizeof(tv));
	} else {
		struct timespec ts = { (time_t)(ns / 1000000000ULL),
				       (long)(ns % 1000000000ULL) };

		memcpy((void *)arg, &ts, sizeof(ts));
	}
	return 0;
}

int vudp_ioctl(struct vfd *f, int fd, unsigned long req, long arg)
{
	struct vudp *u = vudp_of(f);
	int rc, v;

	switch (req) {
	case FIONREAD:
		/* the kernel checks the pointer: so do we, first */
		rc = vmak_sys_ioctl(fd, FIONREAD, arg);
		if (rc)
			return rc;
		if (!vudp_fionread(u, &v))
			*(int *)arg = v;
		return 0;
	case FIONBIO:
		rc = vmak_sys_ioctl(fd, req, arg);
		if (!rc)
			__atomic_store_n(&u->opt.nonblock, *(int *)arg != 0,
					 __ATOMIC_RELAXED);
		return rc;
	case SIOCGSTAMP:
	case SIOCGSTAMPNS:
		if (!put_stamp(u, req, arg))
			return 0;
		return vmak_sys_ioctl(fd, req, arg);
	default:
		return vmak_sys_ioctl(fd, req, arg);
	}
}
