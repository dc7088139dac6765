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
 *
 * Its parts (rx.h): what the kernel would write for a ring datagram
 * (rxmsg.c), the kernel socket's turn (ossock.c), the answer poll
 * (reply.c); socketXtreme's half is the UDP socket's extra-API file
 * (udpextra.c).
 */
#include <errno.h>
#include <limits.h>
#include <time.h>
#include <pthread.h>
#include <string.h>

#include "sys.h"
#include "sig.h"
#include "rx.h"

/*
 * Flags only the kernel socket can answer: its error queue, and the
 * compat flag its recvmsg() refuses. The ring path takes MSG_PEEK,
 * MSG_TRUNC, MSG_DONTWAIT and MSG_WAITFORONE, echoes MSG_CMSG_CLOEXEC,
 * and ignores the rest as UDP's receive does (MSG_OOB, MSG_WAITALL,
 * bits it does not know).
 */
#define KERNEL_FLAGS (MSG_ERRQUEUE | (int)0x80000000U)	/* MSG_CMSG_COMPAT */


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
		vrx_put_name(u, a, &f, msg);
		copied = vrx_copy_rest(u, a, d, &f, msg);
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
			 const struct vzc *z, uint64_t *from)
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
		vrx_put_name(u, a, &f, msg);
		if (from)
			*from = vrx_frame_from(&f);
		if (z) {
			copied = (size_t)vrx_zc_take(u, r, d, &f, z);
			u->rx.last_ring = true;
			vatt_q_pop(a);		/* the chunk is held, not recycled */
			vwait_take(&u->w, 1, f.plen);
			u->st->rx_ring++;
			u->rx.next_att = start + i + 1;
			pthread_mutex_unlock(&r->lock);
			return (ssize_t)copied;
		}
		copied = vrx_copy_rest(u, a, d, &f, msg);
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
	n = vwait_nsrc(&u->w);
	for (i = 0; i < n; i++)
		if (vrs_pending(vwait_src(&u->w, i)))
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
	struct vringset *r = vwait_src(&u->w, 0);
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
	int n = 0, rc, nsrc, err;
	uint32_t gen;
	bool efd;

	/*
	 * The eventfd, made now if the socket has none: a close() of the
	 * fd we poll (the program's) moves u->fd to a copy and must wake
	 * us to poll that instead (udpsock.c).
	 */
	vwait_efd(&u->w);
	gen = vwait_gen(&u->w);
	p[n++] = (struct pollfd){ .fd = u->fd, .events = POLLIN | POLLRDHUP };
	nsrc = vwait_pollfds(&u->w, p + n, &efd);
	/*
	 * socketXtreme: the rings and what they queued are the polls', and
	 * would wake it at once, every time (the eventfd stays readable
	 * while the queue holds any): the eventfd only while that is news
	 */
	if (vconf.socketxtreme)
		nsrc = efd = efd && !vwait_ready(&u->w);
	n += nsrc;
	nsrc -= efd;
	if (vwait_sleep_begin(&u->w, gen) &&
	    (!vconf.socketxtreme || vwait_gen(&u->w) != gen)) {
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
	s.efd = efd && p[1].revents;
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
 * A receive's deadline by SO_RCVTIMEO, once it has one (-1: not yet).
 * The option read once: vdeadline_ms() takes its -1 (none) as it is.
 */
static void rcvtimeo_deadline(const struct vudp *u, int64_t *deadline)
{
	if (*deadline == -1)
		*deadline = vdeadline_ms(vudp_opt(u, rcvtimeo_ms));
}

static ssize_t recv_loop(struct vudp *u, struct msghdr *msg, int flags,
			 const struct vzc *z, struct rpoll *rp, struct need *nd)
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
		return z ? vrx_zc_os(u, msg, flags, z) : vrx_os_recv(u, msg, flags);
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
				vrx_reply_turn(u, rp, spins)));
		if ((nb || spin || looked || u->rx.peeked_os) &&
		    vrx_os_turn(u, spin || (nb && vconf.rx_poll))) {
			r = z ? vrx_zc_os_turn(u, msg, flags, z) :
				vrx_os_recv(u, msg, flags | MSG_DONTWAIT);
			if (r >= 0) {
				if (rp->to)
					rp->from = vrx_name_key(msg);
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
			const struct vzc *z, struct need *nd)
{
	struct rpoll rp = { 0, 0, 0, 0 };
	ssize_t r;

	pthread_cleanup_push(recv_cancelled, u);
	r = recv_loop(u, msg, flags, z, &rp, nd);
	pthread_cleanup_pop(0);
	if (rp.until > 0 || rp.ran_out)
		vrx_reply_end(u, &rp, r >= 0);
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
	struct vzc z = { buf, len, flags };
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
	if (r >= 0 && (*flags & MSG_VMA_ZCOPY))
		r = vrx_zc_settle(u, buf, len, flags, in, r);
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
