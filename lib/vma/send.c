// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Send on an offloaded socket through the TX ring of the device the route
 * leaves by, with the headers the kernel would write: VMAK_NET_HEADER
 * computed by the module from the socket itself when it is connected to
 * the destination, else from our helper socket, bound to the same
 * address, connected to the destination, and given every IP option the
 * program set on its socket (TOS, TTL, multicast TTL, DF). Cached per
 * destination for a second (routes and neighbours change) and until the
 * socket's rules or options change. Lengths, IP id and checksums are
 * filled in here.
 *
 * What the ring path does not take goes through the kernel socket:
 * control messages, flags other than MSG_DONTWAIT and MSG_NOSIGNAL,
 * corking (MSG_MORE, UDP_CORK), datagrams that need fragments, options
 * the module does not honour (SO_MARK, SO_PRIORITY, IP options,
 * segmentation offload), multicast while IP_MULTICAST_LOOP is on (the
 * local members must get their copy) or with IP_MULTICAST_IF, a
 * neighbour not resolved yet, a route through another device, a ring
 * without a free chunk. A ring send is on the device once it is kicked,
 * so a later kernel send cannot overtake it.
 *
 * The system calls made while a lock is held (the kick, the helper's
 * connect) are raw: not cancellation points, so a cancelled thread never
 * leaves a ring's lock behind.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys.h"
#include "addr.h"
#include "udp.h"

#define VHDR_CACHE	32
#define VHDR_TTL_NS	1000000000LL	/* neighbours and routes change */

struct vhdr {
	struct sockaddr_in6 dst;	/* AF_INET6 or mapped IPv4; port set */
	struct vringset *ring;		/* NULL: use the kernel socket */
	int64_t stamp;
	uint32_t gen;			/* u->gen it was fetched at */
	uint16_t len;
	uint8_t l3_off, l4_off;
	bool v6;
	bool id_zero;			/* IPv4 id 0: DF enforced, unconnected */
	uint32_t frame_max;		/* the largest frame the path takes */
	uint8_t hdr[64];
};

/*
 * RFC 1071's sum of big-endian 16-bit words, added to sum. Summed four
 * bytes at a time in the host's order and folded: a one's-complement sum
 * in the other byte order is the same sum byte-swapped (RFC 1071, 2(B)).
 */
uint32_t vcsum_add(uint32_t sum, const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t acc = 0;
	uint32_t w;
	uint16_t h;

	for (; len >= 4; b += 4, len -= 4) {
		memcpy(&w, b, sizeof(w));
		acc += w;
	}
	if (len >= 2) {
		memcpy(&h, b, sizeof(h));
		acc += h;
		b += 2;
		len -= 2;
	}
	if (len) {	/* padded with a zero byte */
		h = 0;
		memcpy(&h, b, 1);
		acc += h;
	}
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return sum + ntohs((uint16_t)acc);
}

uint16_t vcsum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

void vudp_tx_init(struct vudp *u)
{
	pthread_mutex_init(&u->tx.txlock, NULL);
	u->tx.helper = -1;
	/* a connected socket's ids start where no one can guess, as the
	 * kernel's inet_id does (not from random(): the program's sequence)
	 */
	u->tx.ip_id = (uint16_t)(((uint64_t)vnow_ns() ^ (uint64_t)(uintptr_t)u) *
				 0x9e3779b97f4a7c15ULL >> 48);
}

/* The helper socket and the header cache go (the lock stays). */
static void tx_drop(struct vudp *u)
{
	if (u->tx.helper >= 0)
		vfd_close_internal(u->tx.helper);
	u->tx.helper = -1;
	free(u->tx.hc);
	u->tx.hc = NULL;
}

void vudp_tx_destroy(struct vudp *u)
{
	tx_drop(u);
	pthread_mutex_destroy(&u->tx.txlock);
}

void vudp_tx_atfork_child(struct vudp *u)
{
	pthread_mutex_init(&u->tx.txlock, NULL);
	tx_drop(u);	/* the parent's helper, headers for its rings */
}

static void mirror_one(int fd, const struct vudp_mirror *m)
{
	if (vmak_sys_setsockopt(fd, m->level, m->name, &m->val, sizeof(m->val)))
		vlog(VLOG_DEBUG, "helper socket: option %d/%d: %m", m->level,
		     m->name);
}

void vudp_tx_option(struct vudp *u, int level, int name, int val)
{
	struct vudp_tx *t = &u->tx;
	int i;

	pthread_mutex_lock(&t->txlock);
	for (i = 0; i < t->nmirror; i++)
		if (t->mirror[i].level == level && t->mirror[i].name == name)
			break;
	if (i < (int)(sizeof(t->mirror) / sizeof(t->mirror[0]))) {
		t->mirror[i] = (struct vudp_mirror){ level, name, val };
		if (i == t->nmirror)
			t->nmirror++;
		if (t->helper >= 0)
			mirror_one(t->helper, &t->mirror[i]);
	}
	/* cached headers carry the old values */
	__atomic_add_fetch(&u->gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&t->txlock);
}

/* Our helper socket connected to dst (txlock held): its fd or -errno. */
static int helper_to(struct vudp *u, const struct sockaddr_in6 *dst)
{
	struct sockaddr_storage local;
	socklen_t llen = sizeof(local);
	struct sockaddr_in sin;
	int i, fd = u->tx.helper;

	if (fd < 0) {
		if (getsockname(u->fd, (struct sockaddr *)&local, &llen))
			return -errno;
		fd = vmak_sys_socket(u->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		fd = vfd_adopt(fd);
		/* the same source address as ours, any port */
		if (local.ss_family == AF_INET)
			((struct sockaddr_in *)&local)->sin_port = 0;
		else
			((struct sockaddr_in6 *)&local)->sin6_port = 0;
		vmak_sys_bind(fd, (struct sockaddr *)&local, llen);
		for (i = 0; i < u->tx.nmirror; i++)
			mirror_one(fd, &u->tx.mirror[i]);
		u->tx.helper = fd;
	}
	if (u->family == AF_INET) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = dst->sin6_port;
		memcpy(&sin.sin_addr, &dst->sin6_addr.s6_addr[12], 4);
		if (syscall(SYS_connect, fd, &sin, sizeof(sin)))
			return -errno;
	} else if (syscall(SYS_connect, fd, dst, sizeof(*dst))) {
		return -errno;
	}
	return fd;
}

/* The MTU fd's route reports, 0 if it reports none. */
static uint32_t route_mtu(const struct vudp *u, int fd)
{
	bool v6 = u->family == AF_INET6;	/* IPV6_MTU: mapped too */
	socklen_t len = sizeof(int);
	int v = 0;

	if (vmak_sys_getsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP,
				v6 ? IPV6_MTU : IP_MTU, &v, &len) || v <= 0)
		return 0;
	return (uint32_t)v;
}

/*
 * The largest frame the route to h->dst takes, l3_off bytes of link
 * header included: the path's MTU (an ICMP "too big" lowers it, a route
 * may set it below the device's), as fd, connected there, reads it; for
 * a connected socket whose route the kernel dropped (an option changed
 * it), as our helper socket connected there now reads it; the device's
 * if the kernel does not say. A larger datagram goes through the kernel,
 * which fragments it or refuses it (EMSGSIZE) as the socket's
 * IP_MTU_DISCOVER says. txlock held.
 */
static uint32_t path_frame_max(struct vudp *u, const struct vhdr *h, int fd,
			       bool connected)
{
	uint32_t mtu = route_mtu(u, fd);

	if (!mtu && connected) {
		fd = helper_to(u, &h->dst);
		if (fd >= 0)
			mtu = route_mtu(u, fd);
	}
	if (!mtu || mtu > h->ring->mtu)
		mtu = h->ring->mtu;
	return mtu + h->l3_off;
}

/* The socket's IP_MTU_DISCOVER as mirrored (txlock held); the default. */
static int pmtudisc(const struct vudp *u)
{
	int i;

	for (i = 0; i < u->tx.nmirror; i++)
		if (u->tx.mirror[i].level == IPPROTO_IP &&
		    u->tx.mirror[i].name == IP_MTU_DISCOVER)
			return u->tx.mirror[i].val;
	return IP_PMTUDISC_WANT;
}

/*
 * The headers to h->dst from the module: the socket itself if it is
 * connected there, else the helper connected to it (its source port then
 * replaced by ours). 0, or -errno (-EAGAIN: neighbour resolving).
 * txlock and u->lock (read) held.
 */
static int fetch_header(struct vudp *u, struct vhdr *h, bool connected)
{
	struct vmak_net_header nh;
	int i, pmtu, err = -EXDEV, fd = u->fd;
	uint16_t sport = vaddr_local_port(u->fd);

	if (!sport)
		return -EDESTADDRREQ;
	if (!connected) {
		fd = helper_to(u, &h->dst);
		if (fd < 0)
			return fd;
	}
	for (i = 0; i < u->natt; i++) {
		if (u->att[i]->retired)
			continue;	/* its ring no longer vouches for us */
		err = vmak_ringset_net_header(&u->att[i]->ring->rs, fd, &nh);
		if (err == -EXDEV)
			continue;	/* another device's ring */
		if (err)
			return err;
		h->ring = u->att[i]->ring;
		h->len = nh.len;
		h->l3_off = nh.l3_off;
		h->l4_off = nh.l4_off;
		h->v6 = !IN6_IS_ADDR_V4MAPPED(&h->dst.sin6_addr);
		memcpy(h->hdr, nh.hdr, nh.len);
		((struct udphdr *)(h->hdr + h->l4_off))->source = sport;
		/* as ip_select_ident(): 0 where DF is enforced (DO, PROBE)
		 * and no peer; else the socket's sequence
		 */
		pmtu = pmtudisc(u);
		h->id_zero = !h->v6 && !connected &&
			     (pmtu == IP_PMTUDISC_DO || pmtu == IP_PMTUDISC_PROBE);
		h->frame_max = path_frame_max(u, h, fd, connected);
		if (h->frame_max > vrs_chunk_size())
			h->frame_max = vrs_chunk_size();	/* one chunk a frame */
		return 0;
	}
	return err;
}

/*
 * dst's entry in the header cache, or NULL; stamped: only one that was
 * fetched (not one still resolving).
 */
static struct vhdr *hc_find(const struct vudp *u,
			    const struct sockaddr_in6 *dst, bool stamped)
{
	int i;

	for (i = 0; u->tx.hc && i < VHDR_CACHE; i++)
		if ((!stamped || u->tx.hc[i].stamp) &&
		    !memcmp(&u->tx.hc[i].dst.sin6_addr, &dst->sin6_addr, 16) &&
		    u->tx.hc[i].dst.sin6_port == dst->sin6_port)
			return &u->tx.hc[i];
	return NULL;
}

/* The cached headers for dst, fetched when missing or old. */
static struct vhdr *header_for(struct vudp *u, const struct sockaddr_in6 *dst,
			       bool connected)
{
	int64_t now = vnow_coarse_ns();
	uint32_t gen = __atomic_load_n(&u->gen, __ATOMIC_ACQUIRE);
	struct vhdr *h = NULL;
	int i, err;

	if (!u->tx.hc) {
		u->tx.hc = calloc(VHDR_CACHE, sizeof(*u->tx.hc));
		if (!u->tx.hc)
			return NULL;
	}
	h = hc_find(u, dst, true);
	if (h && now - h->stamp < VHDR_TTL_NS && h->gen == gen)
		return h->ring ? h : NULL;
	if (!h) {	/* the oldest entry goes */
		h = &u->tx.hc[0];
		for (i = 1; i < VHDR_CACHE; i++)
			if (u->tx.hc[i].stamp < h->stamp)
				h = &u->tx.hc[i];
	}
	memset(h, 0, sizeof(*h));
	h->dst = *dst;
	err = fetch_header(u, h, connected);
	if (err == -EAGAIN)
		return NULL;	/* resolving: the kernel sends this one */
	h->stamp = now;
	h->gen = gen;
	if (err) {
		h->ring = NULL;	/* not through a ring, for a while */
		vlog(VLOG_FINE, "fd %d: sends to this destination use the kernel socket: %s",
		     u->fd, strerror(-err));
		return NULL;
	}
	return h;
}

/* Take completed frames' chunks back (r->txlock held). */
static void reap(struct vringset *r)
{
	struct vmak_ring_cons *cq = r->rs.comp;
	uint32_t n, idx, i;

	while ((n = vmak_ring_peek(cq, 64, &idx))) {
		for (i = 0; i < n && r->ntxfree < r->txchunks; i++)
			r->txfree[r->ntxfree++] = vmak_ring_comp_addr(cq, idx + i);
		vmak_ring_release(cq, n);
	}
}

/* Tell the module the TX ring has frames (r->txlock held). */
static int kick(struct vringset *r)
{
	int tries, err = 0;

	for (tries = 0; tries < 3; tries++) {
		err = vmak_ringset_kick(&r->rs);
		if (err != -EAGAIN)
			return err;
		reap(r);	/* a full COMPLETION ring stopped it */
	}
	return err;
}

static void fill_frame(struct vudp *u, const struct vhdr *h, uint8_t *f,
		       const struct msghdr *msg, size_t plen)
{
	struct udphdr *uh = (struct udphdr *)(f + h->l4_off);
	uint8_t *p = f + h->len;
	uint32_t sum;
	size_t i, n;

	memcpy(f, h->hdr, h->len);
	for (i = 0; i < msg->msg_iovlen; i++) {
		n = msg->msg_iov[i].iov_len;
		memcpy(p, msg->msg_iov[i].iov_base, n);
		p += n;
	}
	uh->len = htons((uint16_t)(sizeof(*uh) + plen));
	uh->check = 0;
	if (!h->v6) {
		struct iphdr *iph = (struct iphdr *)(f + h->l3_off);

		iph->tot_len = htons((uint16_t)(sizeof(*iph) + sizeof(*uh) + plen));
		iph->id = h->id_zero ? 0 : htons(u->tx.ip_id++);
		iph->check = 0;
		iph->check = htons(vcsum_fold(vcsum_add(0, iph, sizeof(*iph))));
		/* pseudo-header: addresses, protocol, UDP length */
		sum = vcsum_add(0, &iph->saddr, 8);
	} else {
		struct ip6_hdr *ip6 = (struct ip6_hdr *)(f + h->l3_off);

		ip6->ip6_plen = htons((uint16_t)(sizeof(*uh) + plen));
		sum = vcsum_add(0, &ip6->ip6_src, 32);
	}
	sum += IPPROTO_UDP + (uint32_t)(sizeof(*uh) + plen);
	sum = vcsum_add(sum, uh, sizeof(*uh) + plen);
	uh->check = htons(vcsum_fold(sum));
	if (!uh->check)
		uh->check = 0xffff;	/* 0 would mean "no checksum" */
}

/*
 * Where the datagram goes, if a ring may carry it: false for the kernel
 * socket (the reasons are at the top of the file).
 */
static bool ring_dst(struct vudp *u, const struct msghdr *msg, int flags,
		     struct sockaddr_in6 *dst, bool *connected)
{
	const struct sockaddr *sa = msg->msg_name;

	if ((flags & ~(MSG_DONTWAIT | MSG_NOSIGNAL | VMA_SND_FLAGS_DUMMY)) ||
	    msg->msg_controllen ||
	    u->os_only || !u->natt ||
	    vudp_opt(u, tx_kernel_mask) ||
	    vudp_opt(u, udp_cork))
		return false;
	*connected = !sa;
	if (!sa) {
		if (!u->peer.sin6_port)
			return false;	/* EDESTADDRREQ from the kernel */
		*dst = u->peer;
	} else if (!vaddr_mapped(sa, msg->msg_namelen, dst) ||
		   sa->sa_family != u->family || !dst->sin6_port ||
		   (sa->sa_family == AF_INET6 &&
		    ((const struct sockaddr_in6 *)sa)->sin6_scope_id)) {
		return false;	/* no scoped (link-local) IPv6 either */
	}
	if (vaddr_multicast((const struct sockaddr *)dst) &&
	    (vudp_opt(u, mc_loop) ||
	     vudp_opt(u, mc_if)))
		return false;	/* local members, or a chosen device */
	return true;
}

ssize_t vudp_ring_send(struct vudp *u, const struct msghdr *msg, int flags,
		       bool do_kick)
{
	struct sockaddr_in6 dst;
	struct vmak_tx_desc *d;
	struct vhdr *h;
	struct vringset *r;
	size_t plen = 0, frame, i;
	uint32_t idx;
	uint64_t addr;
	bool connected, paced;
	int64_t deadline = -2;	/* SO_SNDTIMEO's, once a wait needs it */
	int err = 0;

	if (!ring_dst(u, msg, flags, &dst, &connected))
		return VSEND_OS;
	/* more than a datagram holds: the kernel's EMSGSIZE or EINVAL */
	if (msg->msg_iovlen > IOV_MAX)
		return VSEND_OS;
	for (i = 0; i < msg->msg_iovlen; i++) {
		if (msg->msg_iov[i].iov_len > UINT16_MAX)
			return VSEND_OS;
		plen += msg->msg_iov[i].iov_len;	/* no wrap: each < 2^16 */
		if (plen > UINT16_MAX)
			return VSEND_OS;
	}
again:
	pthread_mutex_lock(&u->tx.txlock);
	pthread_rwlock_rdlock(&u->lock);
	if (!memcmp(&dst, &u->peer, sizeof(dst)))
		connected = true;	/* sendto() to the peer it has */
	h = u->natt ? header_for(u, &dst, connected) : NULL;
	if (!h || h->len + plen > h->frame_max) {
		pthread_rwlock_unlock(&u->lock);
		pthread_mutex_unlock(&u->tx.txlock);
		return VSEND_OS;	/* fragments, or no ring path */
	}
	r = h->ring;
	pthread_mutex_lock(&r->txlock);
	reap(r);
	if (!r->ntxfree || !vmak_ring_reserve(r->rs.tx, 1, &idx)) {
		/*
		 * paced: the limiter holds them, and the kernel must not
		 * pass it; a ring with no send chunks at all (the UMEM was
		 * spent on receive rings) has nothing to wait for
		 */
		paced = u->tx.pacing.rate != 0 && r->txchunks;
		if (u->tx.pacing.rate && !r->txchunks)
			vlog_once(VLOG_WARNING, "SO_MAX_PACING_RATE: the socket's ring has no send chunks (the UMEM went to receive rings: raise VMAK_UMEM_SIZE or lower VMA_RX_WRE), so its sends go through the kernel socket, unpaced");
		frame = h->len + plen;
		if (paced && r->unkicked)	/* a batch's frames: or none leaves */
			r->unkicked = kick(r) != 0;
		pthread_mutex_unlock(&r->txlock);
		pthread_rwlock_unlock(&u->lock);
		pthread_mutex_unlock(&u->tx.txlock);
		if (!paced)
			return VSEND_OS;
		err = vudp_paced_wait(u, flags, frame, &deadline);
		if (err)
			return err;
		goto again;
	}
	addr = r->txfree[--r->ntxfree];
	fill_frame(u, h, vrs_chunk(addr), msg, plen);
	d = vmak_ring_tx_desc(r->rs.tx, idx);
	d->addr = addr;
	d->len = (uint32_t)(h->len + plen);
	/* a dummy completes without reaching the wire (libvma's warm-up) */
	d->options = flags & VMA_SND_FLAGS_DUMMY ? VMAK_TX_DUMMY : 0;
	vmak_ring_submit(r->rs.tx, 1);
	if (do_kick) {
		err = kick(r);
		r->unkicked = err != 0;	/* the next send's kick takes it */
	} else {
		r->unkicked = true;
	}
	pthread_mutex_unlock(&r->txlock);
	pthread_rwlock_unlock(&u->lock);
	pthread_mutex_unlock(&u->tx.txlock);
	/*
	 * The frame is on the TX ring: a later kick sends it. Failing the
	 * call would have a retrying program send it twice.
	 */
	if (err)
		vlog(VLOG_DEBUG, "fd %d: a TX kick failed (%s): the next sends it",
		     u->fd, strerror(-err));
	if (!(flags & VMA_SND_FLAGS_DUMMY)) {
		u->st->tx_ring++;
		vudp_sent(u, &dst);
	}
	return (ssize_t)plen;
}

int vudp_tx_kick(struct vudp *u)
{
	int i, err = 0, e;

	pthread_rwlock_rdlock(&u->lock);
	for (i = 0; i < u->natt; i++) {
		struct vringset *r = u->att[i]->ring;

		pthread_mutex_lock(&r->txlock);
		e = r->unkicked ? kick(r) : 0;
		r->unkicked = false;
		pthread_mutex_unlock(&r->txlock);
		if (e && !err)
			err = e;
	}
	pthread_rwlock_unlock(&u->lock);
	return err;
}

/*
 * libvma's: the ring of the connected destination or of one the socket
 * sent to, ENODATA for any other (it never makes one to answer).
 */
int vudp_tx_ring_fd(struct vudp *u, const struct sockaddr *to, socklen_t len)
{
	struct sockaddr_in6 dst;
	struct vhdr *h = NULL;
	bool connected;
	int fd = -ENODATA;

	if (!vaddr_mapped(to, len, &dst) || !dst.sin6_port)
		return -EINVAL;
	pthread_mutex_lock(&u->tx.txlock);
	pthread_rwlock_rdlock(&u->lock);
	connected = !memcmp(&dst, &u->peer, sizeof(dst));
	/* a destination a send looked up, resolved or not yet */
	if (u->natt && (connected || hc_find(u, &dst, false)))
		h = header_for(u, &dst, connected);
	if (h) {
		fd = vrs_ring_fd(h->ring);
		vwait_ring_export(h->ring);
	}
	pthread_rwlock_unlock(&u->lock);
	pthread_mutex_unlock(&u->tx.txlock);
	return fd;
}

int vudp_net_header(struct vudp *u, void *buf, uint16_t *len)
{
	struct vhdr *h = NULL;
	int err = 0;

	pthread_mutex_lock(&u->tx.txlock);
	pthread_rwlock_rdlock(&u->lock);
	if (u->peer.sin6_port && u->natt)
		h = header_for(u, &u->peer, true);
	if (!h)
		err = -ENOTCONN;	/* libvma: no connected destination */
	else if (!buf)
		*len = h->len;		/* the first call of two: the size */
	else if (*len < h->len)
		err = -ENOBUFS;
	else
		memcpy(buf, h->hdr, (*len = h->len));
	pthread_rwlock_unlock(&u->lock);
	pthread_mutex_unlock(&u->tx.txlock);
	return err;
}
