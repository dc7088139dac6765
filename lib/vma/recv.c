// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Receive on an offloaded socket: the socket's queues first (draining its
 * rings when they are empty), then the kernel socket, and the sleep on
 * both. What the kernel would write (the source address, control
 * messages, MSG_TRUNC and the lengths) is written the same way from the
 * frame's headers.
 *
 * A blocking receive that finds nothing sleeps at once in poll() on the
 * kernel socket, the socket's rings and, when it has one, its eventfd
 * (wait.c): one system call per datagram that comes through a ring, two
 * for one that comes through the kernel socket (the poll, then the read),
 * as many as the kernel socket alone would need for a datagram already
 * there. A non-blocking one asks the kernel socket (one call).
 */
#include <errno.h>
#include <limits.h>
#include <time.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>

#include "sys.h"
#include "addr.h"
#include "sig.h"
#include "hold.h"
#include "udp.h"

/*
 * Flags only the kernel socket can answer: its error queue, and the
 * compat flag its recvmsg() refuses. The ring path takes MSG_PEEK,
 * MSG_TRUNC, MSG_DONTWAIT and MSG_WAITFORONE, echoes MSG_CMSG_CLOEXEC,
 * and ignores the rest as UDP's receive does (MSG_OOB, MSG_WAITALL,
 * bits it does not know).
 */
#define KERNEL_FLAGS (MSG_ERRQUEUE | (int)0x80000000U)	/* MSG_CMSG_COMPAT */

/* A ring datagram's msg_flags before its own: the kernel's echo. */
#define MSG_FLAGS_IN(flags) ((flags) & MSG_CMSG_CLOEXEC)

static void put_name(struct vudp *u, struct vatt *a, const struct frame *f,
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

/* A zero-copy receive in progress (vma_api_t.recvfrom_zcopy()). */
struct zc {
	void *buf;
	size_t len;
	int *flags;
};

/*
 * Hand d's chunk to the application instead of copying it: the
 * vma_packets_t layout in z->buf (its room checked before), one packet
 * of one piece. Returns the payload length (0 when the piece did not
 * fit: MSG_TRUNC, as libvma). The chunk is the application's until
 * free_packets().
 */
static ssize_t zc_take(struct vudp *u, struct vringset *r,
		       const struct vdgram *d, const struct frame *f,
		       const struct zc *z)
{
	struct vma_packets_t *pk = z->buf;
	struct vbuf *v = vhold_take(r, d->addr, (void *)f->payload, f->plen, u);
	size_t room = z->len - sizeof(*pk) - sizeof(pk->pkts[0]);

	__atomic_add_fetch(&u->rxcb.held, 1, __ATOMIC_RELAXED);
	pk->n_packet_num = 1;
	pk->pkts[0].packet_id = v;
	if (room < sizeof(struct iovec)) {
		pk->pkts[0].sz_iov = 0;
		*z->flags |= MSG_VMA_ZCOPY | MSG_TRUNC;
		return 0;
	}
	pk->pkts[0].sz_iov = 1;
	pk->pkts[0].iov[0].iov_base = (void *)f->payload;
	pk->pkts[0].iov[0].iov_len = f->plen;
	*z->flags |= MSG_VMA_ZCOPY;
	return f->plen;
}

/* The key (reply.h) of the frame's source. */
static uint64_t frame_from(const struct frame *f)
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
static size_t copy_rest(struct vudp *u, struct vatt *a, const struct vdgram *d,
			const struct frame *f, struct msghdr *msg)
{
	size_t copied = copy_out(msg, f->payload, f->plen);

	if (copied < f->plen)
		msg->msg_flags |= MSG_TRUNC;
	put_control(u, a, d, f, msg);
	return copied;
}

/*
 * What the queues of a socket on one ring hold, up to n datagrams, into
 * v (u->lock read-held): one lock and one count for them all, where
 * ring_take() takes one each time. Not for a peek (the same one again).
 */
static unsigned int ring_take_many(struct vudp *u, struct mmsghdr *v,
				   unsigned int n, int flags)
{
	struct vatt *a = u->att[0];
	struct vringset *r = a->ring;
	bool drained = false;
	unsigned int got = 0;
	uint64_t bytes = 0;
	struct vdgram *d;
	struct frame f;
	size_t copied;

	if (!a->qlen && !vrs_pending(r))
		return 0;
	pthread_mutex_lock(&r->lock);
	while (got < n) {
		struct msghdr *msg = &v[got].msg_hdr;

		d = vatt_q_peek(a);
		if (!d) {	/* the queue, then once what the ring holds */
			if (drained)
				break;
			vdemux_drain_locked(r);
			drained = true;
			continue;
		}
		frame_parse(d, &f);
		msg->msg_flags = MSG_FLAGS_IN(flags);
		put_name(u, a, &f, msg);
		copied = copy_rest(u, a, d, &f, msg);
		v[got].msg_len = (unsigned int)(flags & MSG_TRUNC ? f.plen : copied);
		u->rx.last_ts = d->ts;
		bytes += f.plen;
		vdemux_consume_locked(a);
		got++;
	}
	if (got) {
		u->rx.last_ring = true;
		vwait_take(&u->w, got, bytes);
		u->st->rx_ring += got;
	}
	pthread_mutex_unlock(&r->lock);
	if (!got)
		vdemux_callbacks(r);
	return got;
}

/*
 * One datagram from u's queues into msg (u->lock read-held), or, with z,
 * handed over without a copy; *from, if asked, the key of its source.
 * Returns its length (as recvmsg would) or -1 if the queues are empty.
 */
static ssize_t ring_take(struct vudp *u, struct msghdr *msg, int flags,
			 const struct zc *z, uint64_t *from)
{
	uint32_t start = u->rx.next_att, i;
	struct vdgram *d;
	struct frame f;
	size_t copied;
	struct vatt *a;
	struct vringset *r;

	for (i = 0; i < (uint32_t)u->natt; i++) {
		a = u->att[(start + i) % (uint32_t)u->natt];
		r = a->ring;
		if (!a->qlen && !vrs_pending(r))
			continue;
		pthread_mutex_lock(&r->lock);
		if (!a->qlen)
			vdemux_drain_locked(r);
		d = vatt_q_peek(a);
		if (!d) {
			pthread_mutex_unlock(&r->lock);
			vdemux_callbacks(r);
			continue;
		}
		frame_parse(d, &f);
		msg->msg_flags = MSG_FLAGS_IN(flags);
		put_name(u, a, &f, msg);
		if (from)
			*from = frame_from(&f);
		if (z) {
			copied = (size_t)zc_take(u, r, d, &f, z);
			u->rx.last_ring = true;
			vatt_q_pop(a);		/* the chunk is held, not recycled */
			vwait_take(&u->w, 1, f.plen);
			u->st->rx_ring++;
			u->rx.next_att = start + i + 1;
			pthread_mutex_unlock(&r->lock);
			return (ssize_t)copied;
		}
		copied = copy_rest(u, a, d, &f, msg);
		if (!(flags & MSG_PEEK)) {
			u->rx.last_ring = true;
			u->rx.last_ts = d->ts;
			vdemux_consume_locked(a);
			vwait_take(&u->w, 1, f.plen);
			u->st->rx_ring++;
			/* the next receive starts at the next attachment;
			 * a peek leaves it where it is (the same one next)
			 */
			u->rx.next_att = start + i + 1;
		} else {
			u->rx.next_att = start + i;
		}
		pthread_mutex_unlock(&r->lock);
		return (ssize_t)(flags & MSG_TRUNC ? f.plen : copied);
	}
	return -1;
}

/*
 * Could the rings have something for u? Without a lock: a queued
 * datagram, or a ring with descriptors not yet taken. Wrong only for a
 * moment, while rings come or go, and the caller looks again.
 */
bool vudp_ring_maybe(struct vudp *u)
{
	int i, n;

	if (vwait_ready(&u->w))
		return true;
	n = __atomic_load_n(&u->w.nsrc, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++)
		if (vrs_pending(__atomic_load_n(&u->w.src[i], __ATOMIC_ACQUIRE)))
			return true;
	return false;
}

/*
 * What a receive needs before it can return: n datagrams, more than one
 * only in a blocking recvmmsg() without MSG_WAITFORONE and without a
 * timeout (the kernel's returns once it has them all, SO_RCVTIMEO runs
 * out between two, or a signal comes; with a timeout, the datagrams it
 * returns depend on when each came, which a batch would not see). cut: a
 * signal came while the call had datagrams (or its batch left some in
 * the rings), so it returns them, as the kernel's returns what it has
 * read when a signal comes, whatever the handler's SA_RESTART.
 */
struct need {
	unsigned int n;
	unsigned int have;	/* datagrams the call has already */
	bool cut;
};

/*
 * A batch's wake comes this long after its first datagram at most: a
 * look now and then, whatever could keep the count from being reached.
 */
#define BATCH_USEC_MAX	1000000

struct sleep {
	struct vudp *u;
	const struct need *nd;
	bool efd;
	struct vringset *batch;		/* asleep in a batch on it */
};

/* A signal now ends the call with what it has (struct need). */
static bool signal_cuts(const struct sleep *s)
{
	return s->nd->have || (s->batch && vudp_ring_maybe(s->u));
}

/* A thread cancelled in poll(): no longer asleep (recv_cancelled next). */
static void sleep_cancelled(void *arg)
{
	struct sleep *s = arg;

	if (s->batch)
		vwait_batch_end(s->batch);
	vwait_sleep_end(&s->u->w, false);
}

/*
 * A sleep that needs nd->n datagrams asks the module to wake it once the
 * ring has them (wait.c says when it may), not at each one: as many as
 * half of what the RX ring and the FILL ring can still take, and no later
 * than an eighth of the time left to SO_RCVTIMEO after the first (so a
 * stream that stops is seen at most that late) or a second. Not for a
 * socket with a receive callback (callbacks run as the ring is drained,
 * and would run late), nor in socketXtreme mode (the receive does not
 * drain the ring).
 */
static struct vringset *batch_begin(struct vudp *u, const struct need *nd,
				    int64_t deadline)
{
	struct vringset *r = __atomic_load_n(&u->w.src[0], __ATOMIC_ACQUIRE);
	uint32_t count = nd->n, room, usec = BATCH_USEC_MAX;
	int64_t now = vnow_ns(), left;

	/* seq_cst: after our sleepers++, as the registration's kick (api.c) */
	if (vconf.socketxtreme || __atomic_load_n(&u->rxcb.fn, __ATOMIC_SEQ_CST))
		return NULL;
	room = vmak_ring_prod_pending(r->rs.fill);
	if (room > r->rs.rx->size)
		room = r->rs.rx->size;
	room /= 2;
	if (count > room)
		count = room;
	if (count > VMAK_MOD_COUNT_MAX)
		count = VMAK_MOD_COUNT_MAX;
	if (count < 2)
		return NULL;
	if (deadline >= 0) {
		left = (deadline - now) / 8000;
		if (left < usec)
			usec = left < 1 ? 1 : (uint32_t)left;
	}
	return vwait_batch_begin(&u->w, r, count, usec) ? r : NULL;
}

/*
 * poll() as a receive sleeps: a handler with SA_RESTART does not end a
 * wait without SO_RCVTIMEO (the kernel's recv() would restart); any
 * other handler does (EINTR). A cancelled thread cleans up after itself.
 */
static int sleep_poll(struct sleep *s, struct pollfd *p, int n,
		      int64_t deadline)
{
	int rc;

	pthread_cleanup_push(sleep_cancelled, s);
	do {
		vsig_arm();
		rc = vmak_sys_poll(p, (nfds_t)n, vdeadline_ms_left(deadline));
	} while (rc < 0 && errno == EINTR && deadline < 0 &&
		 vsig_restartable() && !signal_cuts(s));
	pthread_cleanup_pop(0);
	return rc;
}

/*
 * Sleep until the kernel socket, one of the rings or the eventfd (another
 * thread queued for us) has something. Returns 1 when the kernel socket
 * is readable (or was shut down for reading: *shut), 0 when the rings
 * may be (or a signal ends the call with what it has: nd->cut), or
 * -errno (-EAGAIN on timeout, -EINTR as the kernel's recv() would give it).
 */
static int sleep_both(struct vudp *u, int64_t deadline, bool *shut,
		      struct need *nd)
{
	struct pollfd p[2 + VWAIT_MAX_SRC];
	struct sleep s = { .u = u, .nd = nd };
	int n = 0, i, rc, nsrc, efd, err;
	uint32_t gen;

	/*
	 * The eventfd, made now if the socket has none: a close() of the
	 * fd we poll (the program's) moves u->fd to a copy and must wake
	 * us to poll that instead (udpsock.c).
	 */
	vwait_efd(&u->w);
	gen = vwait_gen(&u->w);
	p[n++] = (struct pollfd){ .fd = u->fd, .events = POLLIN | POLLRDHUP };
	efd = __atomic_load_n(&u->w.efd, __ATOMIC_ACQUIRE);
	if (efd >= 0)
		p[n++] = (struct pollfd){ .fd = efd, .events = POLLIN };
	nsrc = __atomic_load_n(&u->w.nsrc, __ATOMIC_ACQUIRE);
	for (i = 0; i < nsrc; i++)
		p[n++] = (struct pollfd){
			.fd = vrs_fd(__atomic_load_n(&u->w.src[i], __ATOMIC_ACQUIRE)),
			.events = POLLIN };
	if (vwait_sleep_begin(&u->w, gen)) {
		vwait_sleep_end(&u->w, false);
		return 0;	/* queued, or new rings, since our look */
	}
	if (nd->n > 1 && nsrc == 1)
		s.batch = batch_begin(u, nd, deadline);
	rc = sleep_poll(&s, p, n, deadline);
	err = errno;
	if ((vsig_seen.ran || (rc < 0 && err == EINTR)) && signal_cuts(&s))
		nd->cut = true;
	if (s.batch)
		vwait_batch_end(s.batch);
	s.efd = efd >= 0 && p[1].revents;
	vwait_sleep_end(&u->w, s.efd);
	if (rc < 0)
		return nd->cut ? 0 : -err;
	if (rc == 0)
		return -EAGAIN;
	if (p[0].revents & (POLLRDHUP | POLLHUP))
		*shut = true;
	return p[0].revents ? 1 : 0;
}

/*
 * Look at the kernel socket on this empty turn? Polling (VMA_RX_POLL):
 * once every VMA_RX_UDP_POLL_OS_RATIO turns, as libvma does, unless a
 * wait just said it has data. Otherwise: only a non-blocking call, or
 * after a sleep said so (the sleep watches it).
 */
static bool os_turn(struct vudp *u, bool spinning)
{
	if (__atomic_exchange_n(&u->w.os_hint, false, __ATOMIC_RELAXED))
		return true;
	if (!spinning || !vconf.os_poll_ratio)
		return true;
	return vos_turn(&u->rx.os_skip);
}

/* The kernel socket's own drop count, as it reports it, kept for ours. */
static void note_os_drops(struct vudp *u, struct msghdr *msg)
{
	struct cmsghdr *c;
	uint32_t v, ours;

	if (!vudp_opt(u, rxq_ovfl) || !msg->msg_control)
		return;
	ours = (uint32_t)__atomic_load_n(&u->st->rx_drops, __ATOMIC_RELAXED);
	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL &&
		    c->cmsg_len >= CMSG_LEN(sizeof(v))) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			__atomic_store_n(&u->rx.os_drops, v, __ATOMIC_RELAXED);
			v += ours;
			memcpy(CMSG_DATA(c), &v, sizeof(v));
		}
}

static ssize_t os_recv(struct vudp *u, struct msghdr *msg, int flags)
{
	ssize_t r = vmak_sys_recvmsg(u->fd, msg, flags);

	if (r >= 0) {
		/* a peeked datagram is the next one read, whatever
		 * reaches the ring meanwhile
		 */
		u->rx.peeked_os = flags & MSG_PEEK;
		if (!(flags & MSG_PEEK)) {
			u->st->rx_os++;
			u->rx.last_ring = false;
		}
		note_os_drops(u, msg);
	} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
		u->rx.peeked_os = false;
	}
	return r;
}

/*
 * A zero-copy receive that meets the kernel socket: a copy, the flag
 * cleared; with MSG_VMA_ZCOPY_FORCE nothing is read (EIO), as libvma.
 */
static ssize_t zc_os(struct vudp *u, struct msghdr *msg, int flags,
		     const struct zc *z)
{
	if (*z->flags & MSG_VMA_ZCOPY_FORCE) {
		errno = EIO;
		return -1;
	}
	*z->flags &= ~MSG_VMA_ZCOPY;
	return os_recv(u, msg, flags);
}

/*
 * A receive's deadline by SO_RCVTIMEO, once it has one (-1: not yet).
 * The option read once: vdeadline_ms() takes its -1 (none) as it is.
 */
static void rcvtimeo_deadline(const struct vudp *u, int64_t *deadline)
{
	if (*deadline == -1)
		*deadline = vdeadline_ms(vudp_opt(u, rcvtimeo_ms));
}

/*
 * The kernel socket's turn in a zero-copy receive of an offloaded socket:
 * a forced one fails (EIO) only for a datagram there, as libvma looks
 * before it fails; an empty kernel socket is as empty as the rings were
 * (EAGAIN), or reports its pending error.
 */
static ssize_t zc_os_turn(struct vudp *u, struct msghdr *msg, int flags,
			  const struct zc *z)
{
	if ((*z->flags & MSG_VMA_ZCOPY_FORCE) &&
	    vmak_sys_recv(u->fd, NULL, 0, MSG_PEEK | MSG_DONTWAIT) < 0)
		return -1;
	return zc_os(u, msg, flags | MSG_DONTWAIT, z);
}

/*
 * One receive's poll for an answer (reply.h): until is the poll's end, 0
 * before the receive's first empty turn asks whether to poll, -1 if it
 * does not or no longer polls; ran_out is when the poll ran out, if it did.
 * A datagram from the kernel socket is from its msg_name, when the caller
 * asked for one, else from someone else.
 */
struct rpoll {
	int64_t until, ran_out;
	uint64_t to, from;	/* keys: the last send's destination, the
				 * datagram's source
				 */
};

/*
 * Poll this empty turn instead of sleeping? Asked on a blocking receive's
 * first empty turn, and each turn after while it polls. Only when nothing
 * else polls (VMA_RX_POLL's turns and socketXtreme decide for themselves),
 * and only with rings to poll: a kernel socket's answer wakes its sleep.
 */
static bool reply_turn(struct vudp *u, struct rpoll *rp, int64_t spins)
{
	int64_t now;

	if (!rp->until) {
		rp->until = -1;
		if (!vudp_reply_on() ||
		    !__atomic_load_n(&u->rx.sent_to, __ATOMIC_RELAXED) ||
		    !__atomic_load_n(&u->natt, __ATOMIC_RELAXED))
			return false;
		rp->to = __atomic_exchange_n(&u->rx.sent_to, 0, __ATOMIC_RELAXED);
		if (!rp->to)
			return false;
		switch (vreply_try(&u->rx.reply)) {
		case VREPLY_SLEEP:
			rp->to = 0;	/* no poll: no source to tell */
			return false;
		case VREPLY_POLL:
			rp->until = vnow_ns() + vconf.reply_poll_ns;
			break;
		case VREPLY_PROBE_POLL:
			rp->until = vnow_ns() + VREPLY_PROBE * vconf.reply_poll_ns;
			break;
		}
		rp->from = 0;	/* a kernel datagram's source unknown: not it */
		return true;
	}
	if (rp->until < 0)
		return false;
	if (spins & 15)
		return true;
	now = vnow_ns();
	if (now < rp->until)
		return true;
	rp->ran_out = now;
	rp->until = -1;
	return false;
}

/* The key of a kernel datagram's source, if the caller asked for it. */
static uint64_t name_key(const struct msghdr *msg)
{
	struct sockaddr_in6 a;

	if (!msg->msg_name ||
	    !vaddr_mapped(msg->msg_name, msg->msg_namelen, &a))
		return 0;
	return vudp_key(&a);
}

/* The receive that polled returns (got: with a datagram): how it ended. */
static void reply_end(struct vudp *u, const struct rpoll *rp, bool got)
{
	enum vreply_end e = VREPLY_MISSED;

	if (got && rp->until > 0)
		e = VREPLY_CAME;
	else if (got && rp->ran_out &&
		 vnow_ns() - rp->ran_out <= VREPLY_LATE * vconf.reply_poll_ns)
		e = VREPLY_LATE_CAME;
	if (e != VREPLY_MISSED && rp->from != rp->to)
		e = VREPLY_OTHER;
	vreply_done(&u->rx.reply, e);
}

void vudp_reply_log(struct vudp *u)
{
	const uint64_t *n = u->rx.reply.n;
	uint64_t c = __atomic_load_n(&n[VREPLY_CAME], __ATOMIC_RELAXED);
	uint64_t l = __atomic_load_n(&n[VREPLY_LATE_CAME], __ATOMIC_RELAXED);
	uint64_t o = __atomic_load_n(&n[VREPLY_OTHER], __ATOMIC_RELAXED);
	uint64_t m = __atomic_load_n(&n[VREPLY_MISSED], __ATOMIC_RELAXED);

	if (c || l || o || m)
		vlog(VLOG_DETAILS, "fd %d: polled for an answer %llu times: it came in %llu, later in %llu; another's datagram %llu, nothing %llu",
		     u->fd, (unsigned long long)(c + l + o + m),
		     (unsigned long long)c, (unsigned long long)l,
		     (unsigned long long)o, (unsigned long long)m);
}

static ssize_t recv_loop(struct vudp *u, struct msghdr *msg, int flags,
			 const struct zc *z, struct rpoll *rp, struct need *nd)
{
	int64_t spins = 0, deadline = -1;
	bool shut = false, nb, spin, looked = false, armed = false;
	ssize_t r;
	int rc;

	if (flags & KERNEL_FLAGS)	/* the next datagram stays where it is */
		return vmak_sys_recvmsg(u->fd, msg, flags);
	/* what the kernel refuses before it receives (__copy_msghdr()) */
	if (msg->msg_name && (int)msg->msg_namelen < 0) {
		errno = EINVAL;
		return -1;
	}
	if (msg->msg_iovlen > IOV_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	/* an error a recvmmsg() left for later, as the kernel's sk_err */
	if (__atomic_load_n(&u->rx.pending_err, __ATOMIC_RELAXED)) {
		int err = __atomic_exchange_n(&u->rx.pending_err, 0,
					      __ATOMIC_RELAXED);

		if (err) {	/* else another receive took it */
			errno = err;
			return -1;
		}
	}
	/* for good on the kernel socket, nothing left queued: its call */
	if (u->os_only && !__atomic_load_n(&u->natt, __ATOMIC_RELAXED) &&
	    !vwait_ready(&u->w))
		return z ? zc_os(u, msg, flags, z) : os_recv(u, msg, flags);
	if (!u->tried && !u->os_only)
		vudp_offload(u);	/* bound behind our back */
	nb = (flags & MSG_DONTWAIT) || vudp_nonblock(u);
	for (;;) {
		r = -1;
		if (!u->rx.peeked_os && !vconf.socketxtreme && vudp_ring_maybe(u)) {
			vdemux_defer_begin();
			pthread_rwlock_rdlock(&u->lock);
			r = u->natt ? ring_take(u, msg, flags, z,
						rp->to ? &rp->from : NULL) : -1;
			pthread_rwlock_unlock(&u->lock);
			/* callbacks queued something of u's: take it first */
			if (vdemux_defer_end() && r < 0 && vwait_ready(&u->w))
				continue;
		}
		if (r >= 0)
			return r;
		/* (a forced zero copy would meet the kernel socket's EIO) */
		spin = !nb && ((vconf.rx_poll < 0 || spins < vconf.rx_poll) ||
			       (!(z && (*z->flags & MSG_VMA_ZCOPY_FORCE)) &&
				reply_turn(u, rp, spins)));
		if ((nb || spin || looked || u->rx.peeked_os) &&
		    os_turn(u, spin || (nb && vconf.rx_poll))) {
			r = z ? zc_os_turn(u, msg, flags, z) :
				os_recv(u, msg, flags | MSG_DONTWAIT);
			if (r >= 0) {
				if (rp->to)
					rp->from = name_key(msg);
				return r;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -1;
		}
		looked = false;
		if (nb) {
			errno = nd->cut ? EINTR : EAGAIN;
			return -1;
		}
		if (spin) {
			/*
			 * A handler that ran while it spins ends it as one
			 * would end the kernel's blocked recv(): one without
			 * SA_RESTART, or any with SO_RCVTIMEO set (sleep_poll()
			 * decides the same way for a sleep).
			 */
			if (!armed) {
				vsig_arm();
				armed = true;
			} else if (vsig_seen.intr ||
				 (vsig_seen.ran && vudp_opt(u, rcvtimeo_ms) >= 0)) {
				errno = EINTR;
				return -1;
			}
			/* a spinning receive keeps SO_RCVTIMEO too (libvma's
			 * does): the clock read every 64 turns
			 */
			rcvtimeo_deadline(u, &deadline);
			if (deadline >= 0 && !(++spins & 63) &&
			    vnow_ns() >= deadline) {
				errno = EAGAIN;
				return -1;
			}
			if (deadline < 0)
				spins++;
			continue;
		}
		if (shut) {	/* shut down and nothing left: no name */
			msg->msg_flags = MSG_FLAGS_IN(flags);
			if (msg->msg_name)
				msg->msg_namelen = 0;
			msg->msg_controllen = 0;
			return 0;
		}
		rcvtimeo_deadline(u, &deadline);
		rc = sleep_both(u, deadline, &shut, nd);
		if (rc < 0) {
			errno = -rc;
			return -1;
		}
		nb = nb || nd->cut;	/* what the rings hold, then EINTR */
		looked = rc == 1;	/* the kernel socket: read it now */
		spins = 0;
		armed = false;
	}
}

/*
 * A thread cancelled inside a receive (in its sleep, or in a read of the
 * kernel socket while it polls: recvmsg() is a cancellation point) never
 * comes back to its caller: the interposer's reference goes here, and
 * the thread leaves the library, for its cleanup handlers' calls.
 */
static void recv_cancelled(void *arg)
{
	vfd_put(&((struct vudp *)arg)->hdr);
	vsig_leave();
}

static ssize_t recv_msg(struct vudp *u, struct msghdr *msg, int flags,
			const struct zc *z, struct need *nd)
{
	struct rpoll rp = { 0, 0, 0, 0 };
	ssize_t r;

	pthread_cleanup_push(recv_cancelled, u);
	r = recv_loop(u, msg, flags, z, &rp, nd);
	pthread_cleanup_pop(0);
	if (rp.until > 0 || rp.ran_out)
		reply_end(u, &rp, r >= 0);
	return r;
}

ssize_t vudp_recvmsg(struct vfd *f, int fd, struct msghdr *msg, int flags)
{
	struct need one = { 1, 0, false };

	(void)fd;
	return recv_msg(vudp_of(f), msg, flags, NULL, &one);
}

int vudp_recv_zcopy(struct vudp *u, void *buf, size_t len, int *flags,
		    struct sockaddr *from, socklen_t *fromlen)
{
	struct iovec iov = { buf, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_name = from,
			      .msg_namelen = from && fromlen ? *fromlen : 0 };
	struct zc z = { buf, len, flags };
	struct need one = { 1, 0, false };
	int in = *flags & ~(MSG_VMA_ZCOPY | MSG_VMA_ZCOPY_FORCE);
	ssize_t r;

	/* room for the header and one packet, or nothing is taken */
	if (!buf || len < sizeof(struct vma_packets_t) + sizeof(struct vma_packet_t)) {
		errno = ENOBUFS;
		return -1;
	}
	*flags &= ~MSG_VMA_ZCOPY;
	r = recv_msg(u, &msg, in & ~MSG_PEEK, &z, &one);
	if (r >= 0 && from && fromlen)
		*fromlen = msg.msg_namelen;
	return (int)r;
}


/*
 * What u's one ring holds, for the rest of a recvmmsg() batch; callbacks
 * its drain found run after the socket's lock (a cancel in one ends the
 * call as recv_cancelled() says).
 */
static unsigned int take_rest(struct vudp *u, struct mmsghdr *v,
			      unsigned int n, int flags)
{
	struct { unsigned int got; } t = { 0 };

	pthread_cleanup_push(recv_cancelled, u);
	vdemux_defer_begin();
	pthread_rwlock_rdlock(&u->lock);
	if (u->natt == 1)
		t.got = ring_take_many(u, v, n, flags);
	pthread_rwlock_unlock(&u->lock);
	vdemux_defer_end();
	pthread_cleanup_pop(0);
	return t.got;
}
int vudp_recvmmsg(struct vfd *f, int fd, struct mmsghdr *v, unsigned int n,
		  int flags, struct timespec *timeout)
{
	struct vudp *u = vudp_of(f);
	int64_t deadline = -1, left;
	struct need nd = { 1, 0, false };
	unsigned int i;
	ssize_t r;
	int fl = flags & ~MSG_WAITFORONE;

	(void)fd;
	if (timeout && (timeout->tv_sec < 0 || timeout->tv_nsec < 0 ||
			timeout->tv_nsec >= 1000000000L)) {
		errno = EINVAL;
		return -1;
	}
	if (u->os_only && !__atomic_load_n(&u->natt, __ATOMIC_RELAXED) &&
	    !vwait_ready(&u->w)) {
		int rc;

		/* a cancellation point: a cancel drops the call's reference */
		pthread_cleanup_push(recv_cancelled, u);
		rc = vmak_sys_recvmmsg(u->fd, v, n, flags, timeout);
		pthread_cleanup_pop(0);
		return rc;
	}
	/* no UIO_MAXIOV cap: the kernel caps sendmmsg(), not recvmmsg();
	 * an error the last batch could not report is the first receive's
	 */
	deadline = vdeadline_ts(timeout);
	for (i = 0; i < n; i++) {
		/* without MSG_WAITFORONE it needs them all, and says so */
		nd.n = timeout || (flags & (MSG_WAITFORONE | MSG_PEEK)) ? 1 : n - i;
		nd.have = i;
		r = recv_msg(u, &v[i].msg_hdr, fl, NULL, &nd);
		if (r < 0) {
			if (!i)
				return -1;
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				__atomic_store_n(&u->rx.pending_err, errno,
						 __ATOMIC_RELAXED);
			break;
		}
		v[i].msg_len = (unsigned int)r;
		if ((flags & MSG_WAITFORONE) || nd.cut)
			fl |= MSG_DONTWAIT;
		if (timeout && vnow_ns() >= deadline) {
			i++;
			break;
		}
		/*
		 * What the rings hold now, at once: not with a timeout (the
		 * clock is read after each datagram), a peek, the kernel
		 * socket's turn, socketXtreme, or rings of more than one
		 * (their round robin is ring_take()'s).
		 */
		if (i + 1 < n && !timeout && !(fl & (KERNEL_FLAGS | MSG_PEEK)) &&
		    !u->rx.peeked_os && !vconf.socketxtreme) {
			i += take_rest(u, v + i + 1, n - i - 1, fl);
		}
	}
	/* the kernel writes the time left back only after a datagram */
	if (timeout && i) {
		left = vdeadline_left(deadline);
		*timeout = vns_ts(left);
	}
	return (int)i;
}

int vudp_fionread(struct vudp *u, int *out)
{
	struct vdgram *d;
	struct vatt *a;
	int i, found = 0;

	if (u->rx.peeked_os)
		return -ENOENT;	/* the next datagram is the kernel's */
	pthread_rwlock_rdlock(&u->lock);
	for (i = 0; i < u->natt && !found; i++) {
		a = u->att[(u->rx.next_att + (uint32_t)i) % (uint32_t)u->natt];
		pthread_mutex_lock(&a->ring->lock);
		if (!a->qlen)
			vdemux_drain_locked(a->ring);
		d = vatt_q_peek(a);
		if (d) {
			*out = (int)d->plen;
			found = 1;
		}
		pthread_mutex_unlock(&a->ring->lock);
	}
	pthread_rwlock_unlock(&u->lock);
	return found ? 0 : -ENOENT;
}

int vudp_last_stamp(struct vudp *u, uint64_t *ns)
{
	if (!u->rx.last_ring)
		return -ENOENT;		/* the kernel socket's: ask it */
	if (!u->rx.last_ts)
		return -ENOENT;
	*ns = u->rx.last_ts;
	return 0;
}
