// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Send on an offloaded socket through the TX ring of the device the route
 * leaves by: the headers the kernel would write (VMAK_NET_HEADER, cached
 * per destination for a second), lengths, IP id and checksums filled in
 * here, one kick per send. What the ring path does not take goes through
 * the kernel socket: control messages, flags other than MSG_DONTWAIT and
 * MSG_NOSIGNAL, datagrams that need fragments, a neighbour not resolved
 * yet (the kernel send resolves it), a route through another device, a
 * ring without a free chunk. Every ring send is on the device when the
 * call returns, so a later kernel send cannot overtake it.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"
#include "vma.h"

#define VHDR_CACHE	4
#define VHDR_TTL_NS	1000000000LL	/* neighbours and routes change */

struct vhdr {
	struct sockaddr_in6 dst;	/* AF_INET6 or mapped IPv4; port set */
	struct vring *ring;		/* NULL: use the kernel socket */
	int64_t stamp;
	uint32_t gen;			/* vs->gen it was fetched at */
	uint16_t len;
	uint8_t l3_off, l4_off;
	bool v6;
	uint8_t hdr[64];
};

uint32_t vcsum_add(uint32_t sum, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

uint16_t vcsum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The destination as an IPv6 (or mapped) address; false if not UDP/IP. */
static bool dst_of(const struct vsock *vs, const struct msghdr *msg,
		   struct sockaddr_in6 *d)
{
	const struct sockaddr *sa = msg->msg_name;

	/* of the socket's own family; no scoped (link-local) IPv6 */
	if (!vsa_mapped(sa, msg->msg_namelen, d) || sa->sa_family != vs->family ||
	    (sa->sa_family == AF_INET6 &&
	     ((const struct sockaddr_in6 *)sa)->sin6_scope_id))
		return false;
	return d->sin6_port != 0;
}

/*
 * The headers to dst from the module: the socket itself if it is
 * connected there, else the helper socket connected to dst (its source
 * port then replaced by ours). 0, or -errno (EAGAIN: neighbour resolving).
 */
static int fetch_header(struct vsock *vs, struct vhdr *h, bool connected)
{
	struct sockaddr_storage local;
	struct vmak_net_header nh;
	socklen_t len = sizeof(nh), llen = sizeof(local);
	struct sockaddr_in sin;
	int i, err = -EXDEV, fd = vs->fd;
	bool v4 = IN6_IS_ADDR_V4MAPPED(&h->dst.sin6_addr);
	uint16_t sport;

	if (getsockname(vs->fd, (struct sockaddr *)&local, &llen))
		return -errno;
	sport = local.ss_family == AF_INET ?
		((struct sockaddr_in *)&local)->sin_port :
		((struct sockaddr_in6 *)&local)->sin6_port;
	if (!connected) {
		if (vs->helper < 0) {
			vs->helper = vmak_sys_socket(vs->family,
						     SOCK_DGRAM | SOCK_CLOEXEC, 0);
			if (vs->helper < 0)
				return -errno;
			vs->helper = vfd_hide(vs->helper);
			vfd_set_internal(vs->helper, true);
			/* the same source address as ours, any port */
			if (local.ss_family == AF_INET)
				((struct sockaddr_in *)&local)->sin_port = 0;
			else
				((struct sockaddr_in6 *)&local)->sin6_port = 0;
			vmak_sys_bind(vs->helper, (struct sockaddr *)&local, llen);
		}
		if (vs->family == AF_INET) {
			memset(&sin, 0, sizeof(sin));
			sin.sin_family = AF_INET;
			sin.sin_port = h->dst.sin6_port;
			memcpy(&sin.sin_addr, &h->dst.sin6_addr.s6_addr[12], 4);
			if (vmak_sys_connect(vs->helper, (struct sockaddr *)&sin,
					     sizeof(sin)))
				return -errno;
		} else if (vmak_sys_connect(vs->helper, (struct sockaddr *)&h->dst,
					    sizeof(h->dst))) {
			return -errno;
		}
		fd = vs->helper;
	}
	for (i = 0; i < vs->nvatt; i++) {
		if (vs->att[i]->retired)
			continue;	/* its ring no longer vouches for us */
		memset(&nh, 0, sizeof(nh));
		nh.fd = fd;
		len = sizeof(nh);
		if (vmak_sys_getsockopt(vs->att[i]->ring->rs.fd, SOL_VMAK,
					VMAK_NET_HEADER, &nh, &len)) {
			err = -errno;
			if (err == -EXDEV)
				continue;	/* another device's ring */
			return err;
		}
		h->ring = vs->att[i]->ring;
		h->len = nh.len;
		h->l3_off = nh.l3_off;
		h->l4_off = nh.l4_off;
		h->v6 = !v4;
		memcpy(h->hdr, nh.hdr, nh.len);
		((struct udphdr *)(h->hdr + h->l4_off))->source = sport;
		return 0;
	}
	return err;
}

/* The cached headers for dst, fetched when missing or old. */
static struct vhdr *header_for(struct vsock *vs, const struct sockaddr_in6 *dst,
			       bool connected)
{
	int64_t now = vnow_ns();
	struct vhdr *h = NULL;
	int i, err;

	if (!vs->hc) {
		vs->hc = calloc(VHDR_CACHE, sizeof(*vs->hc));
		if (!vs->hc)
			return NULL;
	}
	for (i = 0; i < VHDR_CACHE; i++)
		if (vs->hc[i].stamp &&
		    !memcmp(&vs->hc[i].dst.sin6_addr, &dst->sin6_addr, 16) &&
		    vs->hc[i].dst.sin6_port == dst->sin6_port) {
			h = &vs->hc[i];
			break;
		}
	if (h && now - h->stamp < VHDR_TTL_NS && h->gen == vs->gen)
		return h->ring ? h : NULL;
	if (!h) {	/* the oldest entry goes */
		h = &vs->hc[0];
		for (i = 1; i < VHDR_CACHE; i++)
			if (vs->hc[i].stamp < h->stamp)
				h = &vs->hc[i];
	}
	memset(h, 0, sizeof(*h));
	h->dst = *dst;
	err = fetch_header(vs, h, connected);
	if (err == -EAGAIN)
		return NULL;	/* resolving: the kernel sends this one */
	h->stamp = now;
	h->gen = vs->gen;
	if (err) {
		h->ring = NULL;	/* not through a ring, for a while */
		vlog(VLOG_DEBUG, "fd %d: sends to this destination use the kernel socket: %s",
		     vs->fd, strerror(-err));
		return NULL;
	}
	return h;
}

/* Take completed frames' chunks back (r->txlock held). */
static void reap(struct vring *r)
{
	struct vmak_ring_cons *cq = r->rs.comp;
	uint32_t n, idx, i;

	while ((n = vmak_ring_peek(cq, 64, &idx))) {
		for (i = 0; i < n && r->ntxfree < r->txchunks; i++)
			r->txfree[r->ntxfree++] = vmak_ring_comp_addr(cq, idx + i);
		vmak_ring_release(cq, n);
	}
}

static int kick(struct vring *r)
{
	int tries;

	for (tries = 0; tries < 3; tries++) {
		if (vmak_sys_sendto(r->rs.fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
			return 0;
		if (errno != EAGAIN)
			return -errno;
		reap(r);	/* a full COMPLETION ring stopped it */
	}
	return -EAGAIN;
}

static void fill_frame(struct vsock *vs, const struct vhdr *h, uint8_t *f,
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
		iph->id = htons(vs->ip_id++);
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

ssize_t vsock_sendmsg(struct vsock *vs, const struct msghdr *msg, int flags)
{
	struct sockaddr_in6 dst;
	struct vhdr *h;
	struct vring *r;
	size_t plen = 0, i;
	uint32_t idx;
	bool connected;
	int err;

	if ((flags & ~(MSG_DONTWAIT | MSG_NOSIGNAL)) || msg->msg_controllen ||
	    vs->os_only || !vs->nvatt)
		return VSEND_OS;
	for (i = 0; i < msg->msg_iovlen; i++)
		plen += msg->msg_iov[i].iov_len;
	connected = !msg->msg_name;
	if (connected) {
		if (!vs->peer.sin6_port)
			return VSEND_OS;	/* EDESTADDRREQ from the kernel */
		dst = vs->peer;
	} else if (!dst_of(vs, msg, &dst)) {
		return VSEND_OS;
	}
	pthread_mutex_lock(&vs->txlock);
	pthread_rwlock_rdlock(&vs->lock);
	if (!memcmp(&dst, &vs->peer, sizeof(dst)))
		connected = true;	/* sendto() to the peer it has */
	h = vs->nvatt ? header_for(vs, &dst, connected) : NULL;
	if (!h || h->len + plen > h->ring->mtu + (size_t)h->l3_off) {
		pthread_rwlock_unlock(&vs->lock);
		pthread_mutex_unlock(&vs->txlock);
		return VSEND_OS;	/* fragments, or no ring path */
	}
	r = h->ring;
	pthread_mutex_lock(&r->txlock);
	reap(r);
	if (!r->ntxfree || !vmak_ring_reserve(r->rs.tx, 1, &idx)) {
		pthread_mutex_unlock(&r->txlock);
		pthread_rwlock_unlock(&vs->lock);
		pthread_mutex_unlock(&vs->txlock);
		return VSEND_OS;
	}
	{
		uint64_t addr = r->txfree[--r->ntxfree];
		struct vmak_tx_desc *d = vmak_ring_tx_desc(r->rs.tx, idx);

		fill_frame(vs, h, vring_chunk(addr), msg, plen);
		d->addr = addr;
		d->len = (uint32_t)(h->len + plen);
		d->options = 0;
	}
	vmak_ring_submit(r->rs.tx, 1);
	err = kick(r);
	pthread_mutex_unlock(&r->txlock);
	pthread_rwlock_unlock(&vs->lock);
	pthread_mutex_unlock(&vs->txlock);
	if (err) {
		errno = -err;
		return -1;
	}
	vs->st->tx_ring++;
	return (ssize_t)plen;
}

void vsock_send_free(struct vsock *vs)
{
	if (vs->helper >= 0) {
		vmak_sys_close(vs->helper);
		vfd_set_internal(vs->helper, false);
	}
	free(vs->hc);
}
