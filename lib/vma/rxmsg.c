// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A ring datagram as the kernel's UDP receive would write it: the source
 * address (move_addr_to_user()), the control messages in the kernel's
 * order and as its put_cmsg() cuts them, the payload over the caller's
 * iovecs, MSG_TRUNC; or, for a zero-copy receive, the chunk itself
 * handed over (hold.c).
 */
#include <errno.h>
#include <time.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/uio.h>

#include "sys.h"
#include "addr.h"
#include "hold.h"
#include "rx.h"

void vrx_put_name(struct vudp *u, struct vatt *a, const struct frame *f,
		     struct msghdr *msg)
{
	const struct udphdr *uh = (const void *)(f->payload - sizeof(*uh));
	struct sockaddr_storage ss;
	socklen_t len;

	/* no name buffer: the length left, as the kernel's; one of no
	 * length is told the name's length (move_addr_to_user())
	 */
	if (!msg->msg_name)
		return;
	memset(&ss, 0, sizeof(ss));
	if (u->family == AF_INET) {
		struct sockaddr_in *in = (void *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = uh->source;
		memcpy(&in->sin_addr, f->l3 + 12, 4);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (void *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = uh->source;
		if (f->v6) {
			memcpy(&in6->sin6_addr, f->l3 + 8, 16);
			if (IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr))
				in6->sin6_scope_id = (uint32_t)a->ring->ifindex;
		} else {
			vaddr_v4mapped(&in6->sin6_addr, f->l3 + 12);
		}
		len = sizeof(*in6);
	}
	memcpy(msg->msg_name, &ss, msg->msg_namelen < len ? msg->msg_namelen : len);
	msg->msg_namelen = len;
}

struct cmsg_out {
	struct msghdr *msg;
	uint8_t *buf;		/* msg_control and msg_controllen, read */
	size_t cap, used;	/* once as the kernel copies the msghdr */
};

/*
 * As the kernel's put_cmsg(): no room for a header, MSG_CTRUNC alone;
 * room for less than the message, MSG_CTRUNC and the message cut there
 * (its cmsg_len says how much of it is in the buffer).
 */
static void put_cmsg(struct cmsg_out *o, int level, int type, const void *data,
		     size_t len)
{
	struct msghdr *m = o->msg;
	size_t room = o->buf ? o->cap - o->used : 0;
	size_t clen = CMSG_LEN(len), space = CMSG_SPACE(len);
	struct cmsghdr *c;

	if (room < sizeof(*c)) {
		m->msg_flags |= MSG_CTRUNC;
		return;
	}
	if (room < clen) {
		m->msg_flags |= MSG_CTRUNC;
		clen = room;
	}
	c = (struct cmsghdr *)(o->buf + o->used);
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = clen;
	memcpy(CMSG_DATA(c), data, clen - CMSG_LEN(0));
	o->used += space < room ? space : room;
}

static bool group_or_bcast(const uint8_t *daddr4)
{
	uint32_t a = ntohl(*(const uint32_t *)(const void *)daddr4);

	return IN_MULTICAST(a) || a == INADDR_BROADCAST || (a & 0xff) == 0xff;
}

static void put_control(struct vudp *u, struct vatt *a, const struct vdgram *d,
			const struct frame *f, struct msghdr *msg)
{
	struct cmsg_out o = { .msg = msg, .buf = msg->msg_control,
			      .cap = msg->msg_controllen };
	uint8_t ts = vudp_opt(u, tstamp);

	if (ts == VTS_USEC) {
		struct timeval tv = {
			.tv_sec = (time_t)(d->ts / 1000000000ULL),
			.tv_usec = (suseconds_t)(d->ts % 1000000000ULL / 1000),
		};

		put_cmsg(&o, SOL_SOCKET, SO_TIMESTAMP, &tv, sizeof(tv));
	} else if (ts == VTS_NSEC) {
		struct timespec tsp = {
			.tv_sec = (time_t)(d->ts / 1000000000ULL),
			.tv_nsec = (long)(d->ts % 1000000000ULL),
		};

		put_cmsg(&o, SOL_SOCKET, SO_TIMESTAMPNS, &tsp, sizeof(tsp));
	}
	/* SO_TIMESTAMPING's software stamp, after them (__sock_recv_timestamp()) */
	if ((vudp_opt(u, tsflags) & SOF_TIMESTAMPING_SOFTWARE) && d->ts) {
		struct scm_timestamping st = { 0 };

		st.ts[0].tv_sec = (time_t)(d->ts / 1000000000ULL);
		st.ts[0].tv_nsec = (long)(d->ts % 1000000000ULL);
		put_cmsg(&o, SOL_SOCKET, SCM_TIMESTAMPING, &st, sizeof(st));
	}
	if (vudp_opt(u, rxq_ovfl)) {
		/*
		 * What the kernel socket dropped, and what our queues did; as
		 * the kernel's, only once there are some (its count is the
		 * one when the datagram was queued, ours when it is read)
		 */
		uint32_t drops = __atomic_load_n(&u->rx.os_drops, __ATOMIC_RELAXED) +
			(uint32_t)__atomic_load_n(&u->st->rx_drops, __ATOMIC_RELAXED);

		if (drops)
			put_cmsg(&o, SOL_SOCKET, SO_RXQ_OVFL, &drops,
				 sizeof(drops));
	}
	/* then the address family's own: IPv6's before IPv4's, as udpv6's */
	if (vudp_opt(u, pktinfo6) && (f->v6 || u->family == AF_INET6)) {
		struct in6_pktinfo pi6;

		memset(&pi6, 0, sizeof(pi6));
		pi6.ipi6_ifindex = (unsigned int)a->ring->ifindex;
		if (f->v6)
			memcpy(&pi6.ipi6_addr, f->l3 + 24, 16);
		else
			vaddr_v4mapped(&pi6.ipi6_addr, f->l3 + 16);
		put_cmsg(&o, IPPROTO_IPV6, IPV6_PKTINFO, &pi6, sizeof(pi6));
	}
	if (vudp_opt(u, pktinfo) && !f->v6) {
		struct in_pktinfo pi;

		memset(&pi, 0, sizeof(pi));
		pi.ipi_ifindex = a->ring->ifindex;
		memcpy(&pi.ipi_addr, f->l3 + 16, 4);
		/*
		 * The address a reply would come from: the destination, or
		 * for a group or a broadcast the receiving device's own.
		 */
		if (group_or_bcast(f->l3 + 16))
			memcpy(&pi.ipi_spec_dst, &a->ring->spec_dst, 4);
		else
			memcpy(&pi.ipi_spec_dst, f->l3 + 16, 4);
		put_cmsg(&o, IPPROTO_IP, IP_PKTINFO, &pi, sizeof(pi));
	}
	/* what was written, 0 without a buffer, as the kernel writes back */
	msg->msg_controllen = o.used;
}

static size_t copy_out(const struct msghdr *msg, const uint8_t *p, size_t len)
{
	size_t done = 0, n, i;

	for (i = 0; i < msg->msg_iovlen && done < len; i++) {
		n = msg->msg_iov[i].iov_len;
		if (n > len - done)
			n = len - done;
		if (n)
			memcpy(msg->msg_iov[i].iov_base, p + done, n);
		done += n;
	}
	return done;
}

/*
 * Hand d's chunk to the application instead of copying it: the
 * vma_packets_t layout in z->buf (its room checked before), one packet
 * of one piece. Returns the payload length (0 when the piece did not
 * fit: MSG_TRUNC, as libvma). The chunk is the application's until
 * free_packets().
 */
ssize_t vrx_zc_take(struct vudp *u, struct vringset *r,
		       const struct vdgram *d, const struct frame *f,
		       const struct vzc *z)
{
	struct vma_packets_t *pk = z->buf;
	struct vbuf *v = vhold_take(r, d->addr, (void *)f->payload, f->plen, u);
	size_t room = z->len - sizeof(*pk) - sizeof(pk->pkts[0]);
	bool trunc;

	__atomic_add_fetch(&u->rxcb.held, 1, __ATOMIC_RELAXED);
	pk->n_packet_num = 1;
	pk->pkts[0].packet_id = v;
	if (room < sizeof(struct iovec)) {
		/* libvma: no MSG_TRUNC out; the length if the caller asked */
		pk->pkts[0].sz_iov = 0;
		trunc = *z->flags & MSG_TRUNC;
		*z->flags |= MSG_VMA_ZCOPY;
		return trunc ? f->plen : 0;
	}
	pk->pkts[0].sz_iov = 1;
	pk->pkts[0].iov[0].iov_base = (void *)f->payload;
	pk->pkts[0].iov[0].iov_len = f->plen;
	*z->flags |= MSG_VMA_ZCOPY;
	return f->plen;
}

/*
 * A packet handed out to a receive that returns after its socket's last
 * close: nobody could free_packets() it, and the socket's end (at this
 * call's reference, perhaps) gives its packets back. It leaves as a copy
 * in buf, the flag cleared, as a datagram from the kernel socket does.
 * Decided under the lock the last close sets fdless under: a packet this
 * call kept was the program's at that close, and goes back with the rest.
 */
ssize_t vrx_zc_settle(struct vudp *u, void *buf, size_t len, int *flags,
		      int in, ssize_t r)
{
	struct vma_packets_t *pk = buf;
	struct vbuf *v = vhold_find(pk->pkts[0].packet_id);
	size_t n;

	pthread_rwlock_rdlock(&u->lock);
	if (!u->rx.fdless || !v) {
		pthread_rwlock_unlock(&u->lock);
		return r;
	}
	n = v->plen < len ? v->plen : len;
	r = in & MSG_TRUNC ? (ssize_t)v->plen : (ssize_t)n;
	memmove(buf, v->b.payload, n);
	*flags &= ~MSG_VMA_ZCOPY;
	if (!vhold_put(v))
		__atomic_sub_fetch(&u->rxcb.held, 1, __ATOMIC_RELAXED);
	pthread_rwlock_unlock(&u->lock);
	return r;
}

/* The key (reply.h) of the frame's source. */
uint64_t vrx_frame_from(const struct frame *f)
{
	const struct udphdr *uh = (const void *)(f->payload - sizeof(*uh));
	struct in6_addr a;

	if (f->v6)
		memcpy(&a, f->l3 + 8, 16);
	else
		vaddr_v4mapped(&a, f->l3 + 12);
	return vreply_key(a.s6_addr, uh->source);
}

/* The payload and control messages of d, whose name is in msg already. */
size_t vrx_copy_rest(struct vudp *u, struct vatt *a, const struct vdgram *d,
			const struct frame *f, struct msghdr *msg)
{
	size_t copied = copy_out(msg, f->payload, f->plen);

	if (copied < f->plen)
		msg->msg_flags |= MSG_TRUNC;
	put_control(u, a, d, f, msg);
	return copied;
}
