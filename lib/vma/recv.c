// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Receive on an offloaded socket: the ring's queue first, then the kernel
 * socket, and the wait on both. What the kernel would write (the source
 * address, control messages, MSG_TRUNC and the lengths) is written the
 * same way from the frame's headers.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sys.h"
#include "vma.h"

/* Flags the ring path implements; anything else goes to the kernel. */
#define RING_FLAGS (MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT | MSG_WAITALL | \
		    MSG_NOSIGNAL | MSG_CMSG_CLOEXEC | MSG_WAITFORONE)

struct frame {
	const uint8_t *l3, *payload;
	uint32_t plen;		/* UDP payload length */
	bool v6;
};

static void frame_parse(const struct vdgram *d, struct frame *f)
{
	const uint8_t *base = vring_chunk(d->addr);
	const struct udphdr *uh;
	uint32_t avail = d->len - d->payload_off, ulen;

	f->l3 = base + d->l3_off;
	f->payload = base + d->payload_off;
	f->v6 = d->flags & VMAK_RX_IPV6;
	uh = (const struct udphdr *)(f->payload - sizeof(*uh));
	ulen = ntohs(uh->len);
	/* the UDP length, not the frame's: short frames carry padding */
	f->plen = ulen >= sizeof(*uh) && ulen - sizeof(*uh) <= avail ?
		  ulen - (uint32_t)sizeof(*uh) : avail;
}

static void put_name(struct vsock *vs, struct vatt *a, const struct frame *f,
		     struct msghdr *msg)
{
	const struct udphdr *uh = (const void *)(f->payload - sizeof(*uh));
	struct sockaddr_storage ss;
	socklen_t len;

	memset(&ss, 0, sizeof(ss));
	if (vs->family == AF_INET) {
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
			in6->sin6_addr.s6_addr[10] = 0xff;
			in6->sin6_addr.s6_addr[11] = 0xff;
			memcpy(&in6->sin6_addr.s6_addr[12], f->l3 + 12, 4);
		}
		len = sizeof(*in6);
	}
	if (msg->msg_name) {
		memcpy(msg->msg_name, &ss,
		       msg->msg_namelen < len ? msg->msg_namelen : len);
		msg->msg_namelen = len;
	}
}

struct cmsg_out {
	struct msghdr *msg;
	struct cmsghdr *c;
	size_t used;
};

static void put_cmsg(struct cmsg_out *o, int level, int type, const void *data,
		     size_t len)
{
	struct msghdr *m = o->msg;
	size_t space = CMSG_SPACE(len);

	if (!m->msg_control || o->used + CMSG_LEN(len) > m->msg_controllen) {
		m->msg_flags |= MSG_CTRUNC;
		return;
	}
	o->c = (struct cmsghdr *)((char *)m->msg_control + o->used);
	o->c->cmsg_level = level;
	o->c->cmsg_type = type;
	o->c->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(o->c), data, len);
	o->used += space < m->msg_controllen - o->used ? space :
		   m->msg_controllen - o->used;
}

static void put_control(struct vsock *vs, struct vatt *a, const struct vdgram *d,
			const struct frame *f, struct msghdr *msg)
{
	struct cmsg_out o = { .msg = msg };

	if (vs->timestamp) {
		struct timeval tv = {
			.tv_sec = (time_t)(d->ts / 1000000000ULL),
			.tv_usec = (suseconds_t)(d->ts % 1000000000ULL / 1000),
		};

		put_cmsg(&o, SOL_SOCKET, SO_TIMESTAMP, &tv, sizeof(tv));
	}
	if (vs->timestampns) {
		struct timespec ts = {
			.tv_sec = (time_t)(d->ts / 1000000000ULL),
			.tv_nsec = (long)(d->ts % 1000000000ULL),
		};

		put_cmsg(&o, SOL_SOCKET, SO_TIMESTAMPNS, &ts, sizeof(ts));
	}
	if (vs->pktinfo && !f->v6) {
		struct in_pktinfo pi;

		memset(&pi, 0, sizeof(pi));
		pi.ipi_ifindex = a->ring->ifindex;
		memcpy(&pi.ipi_addr, f->l3 + 16, 4);
		memcpy(&pi.ipi_spec_dst, f->l3 + 16, 4);
		put_cmsg(&o, IPPROTO_IP, IP_PKTINFO, &pi, sizeof(pi));
	}
	if (vs->pktinfo6 && (f->v6 || vs->family == AF_INET6)) {
		struct in6_pktinfo pi6;

		memset(&pi6, 0, sizeof(pi6));
		pi6.ipi6_ifindex = (unsigned int)a->ring->ifindex;
		if (f->v6) {
			memcpy(&pi6.ipi6_addr, f->l3 + 24, 16);
		} else {
			pi6.ipi6_addr.s6_addr[10] = 0xff;
			pi6.ipi6_addr.s6_addr[11] = 0xff;
			memcpy(&pi6.ipi6_addr.s6_addr[12], f->l3 + 16, 4);
		}
		put_cmsg(&o, IPPROTO_IPV6, IPV6_PKTINFO, &pi6, sizeof(pi6));
	}
	if (msg->msg_control)
		msg->msg_controllen = o.used;
}

static size_t copy_out(const struct msghdr *msg, const uint8_t *p, size_t len)
{
	size_t done = 0, n;
	size_t i;

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
 * One datagram from the queues of vs into msg. vs->lock read-held.
 * Returns its length (as recvmsg would) or -1 if the queues are empty.
 */
static ssize_t ring_take(struct vsock *vs, struct msghdr *msg, int flags)
{
	uint32_t start = vs->next_att, i;
	struct vdgram *d;
	struct frame f;
	size_t copied;
	struct vatt *a;
	struct vring *r;

	for (i = 0; i < (uint32_t)vs->nvatt; i++) {
		a = vs->att[(start + i) % (uint32_t)vs->nvatt];
		r = a->ring;
		if (!a->qlen && !vring_pending(r))
			continue;
		pthread_mutex_lock(&r->lock);
		if (!a->qlen)
			vring_drain_locked(r);
		d = vq_peek(a);
		if (!d) {
			pthread_mutex_unlock(&r->lock);
			continue;
		}
		frame_parse(d, &f);
		msg->msg_flags = 0;
		copied = copy_out(msg, f.payload, f.plen);
		if (copied < f.plen)
			msg->msg_flags |= MSG_TRUNC;
		put_name(vs, a, &f, msg);
		put_control(vs, a, d, &f, msg);
		if (!(flags & MSG_PEEK)) {
			vring_recycle_locked(r, d->addr);
			vq_pop(a);
			__atomic_sub_fetch(&vs->qtotal, 1, __ATOMIC_RELAXED);
			vs->st->rx_ring++;
		}
		pthread_mutex_unlock(&r->lock);
		vs->next_att = start + i + 1;
		return (ssize_t)(flags & MSG_TRUNC ? f.plen : copied);
	}
	return -1;
}

bool vsock_readable(struct vsock *vs)
{
	int i;

	if (__atomic_load_n(&vs->qtotal, __ATOMIC_RELAXED))
		return true;
	pthread_rwlock_rdlock(&vs->lock);
	for (i = 0; i < vs->nvatt; i++)
		vring_drain_try(vs->att[i]->ring);
	pthread_rwlock_unlock(&vs->lock);
	return __atomic_load_n(&vs->qtotal, __ATOMIC_RELAXED) != 0;
}

void vsock_clear_efd(struct vsock *vs)
{
	uint64_t v;

	if (!__atomic_load_n(&vs->efd_armed, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&vs->efd_armed, 0, __ATOMIC_RELEASE);
	if (vmak_sys_read(vs->efd, &v, sizeof(v)) < 0)
		v = 0;
	if (__atomic_load_n(&vs->qtotal, __ATOMIC_ACQUIRE))
		vsock_signal_locked(vs);
}

/* SO_RCVTIMEO in ms, -1 for none. */
static int rcvtimeo_ms(struct vsock *vs)
{
	struct timeval tv;
	socklen_t len = sizeof(tv);

	if (vmak_sys_getsockopt(vs->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len) ||
	    (!tv.tv_sec && !tv.tv_usec))
		return -1;
	return (int)(tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000);
}

/*
 * Sleep until the kernel socket, one of the rings or the eventfd (another
 * thread queued for us) has something. Returns 0, 1 when the kernel
 * socket was shut down for reading (a blocking receive then returns 0,
 * though a non-blocking one on the kernel socket says EAGAIN), or -1 with
 * errno (EAGAIN on timeout, EINTR as the kernel's recv() would give it).
 */
static int wait_both(struct vsock *vs, int *timeout_ms)
{
	struct pollfd p[2 + VSOCK_MAX_ATT];
	int n = 0, i, rc;
	int64_t t0 = vnow_ns();

	__atomic_add_fetch(&vs->waiters, 1, __ATOMIC_ACQ_REL);
	pthread_rwlock_rdlock(&vs->lock);
	p[n++] = (struct pollfd){ .fd = vs->fd, .events = POLLIN | POLLRDHUP };
	p[n++] = (struct pollfd){ .fd = vs->efd, .events = POLLIN };
	for (i = 0; i < vs->nvatt; i++)
		p[n++] = (struct pollfd){ .fd = vs->att[i]->ring->rs.fd,
					  .events = POLLIN };
	pthread_rwlock_unlock(&vs->lock);
	/*
	 * A queue filled between our last look and waiters++. A handler
	 * with SA_RESTART does not end a wait without SO_RCVTIMEO (the
	 * kernel's recv() would restart); any other handler does (EINTR).
	 */
	do {
		vsig_arm();
		rc = __atomic_load_n(&vs->qtotal, __ATOMIC_ACQUIRE) ? 1 :
		     vmak_sys_poll(p, (nfds_t)n, *timeout_ms);
	} while (rc < 0 && errno == EINTR && *timeout_ms < 0 &&
		 vsig_restartable());
	__atomic_sub_fetch(&vs->waiters, 1, __ATOMIC_ACQ_REL);
	if (p[1].revents)
		vsock_clear_efd(vs);
	if (rc < 0)
		return -1;
	if (*timeout_ms > 0) {
		*timeout_ms -= (int)((vnow_ns() - t0) / 1000000);
		if (*timeout_ms < 0)
			*timeout_ms = 0;
	}
	if (rc == 0) {
		errno = EAGAIN;
		return -1;
	}
	return p[0].revents & (POLLRDHUP | POLLHUP) ? 1 : 0;
}

static bool nonblocking(struct vsock *vs, int flags)
{
	return (flags & MSG_DONTWAIT) ||
	       __atomic_load_n(&vs->nonblock, __ATOMIC_RELAXED);
}

/*
 * Look at the kernel socket now? Always before sleeping and for a
 * non-blocking call, except when polling was asked for (VMA_RX_POLL):
 * then once every VMA_RX_UDP_POLL_OS_RATIO empty turns, as libvma does,
 * unless poll/select/epoll just said the kernel socket has data.
 */
static bool os_turn(struct vsock *vs, int64_t spins, bool nb)
{
	if (__atomic_exchange_n(&vs->os_hint, false, __ATOMIC_RELAXED))
		return true;
	if (!vconf.os_poll_ratio || (!spins && !(nb && vconf.rx_poll)))
		return true;
	return ++vs->os_skip % vconf.os_poll_ratio == 0;
}

/*
 * Could the rings have something for vs? Without a lock: a queued
 * datagram, or a ring with descriptors not yet taken. Wrong only for a
 * moment, while rings come or go, and the caller looks again.
 */
static bool ring_maybe(struct vsock *vs)
{
	int i, n;

	if (__atomic_load_n(&vs->qtotal, __ATOMIC_ACQUIRE))
		return true;
	n = __atomic_load_n(&vs->nwatch, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++)
		if (vring_pending(__atomic_load_n(&vs->watch[i], __ATOMIC_ACQUIRE)))
			return true;
	return false;
}

ssize_t vsock_recvmsg(struct vsock *vs, struct msghdr *msg, int flags)
{
	int64_t spins = 0;
	bool shut = false, nb;
	int timeout = -2;
	ssize_t r;

	if (flags & ~RING_FLAGS)
		return vmak_sys_recvmsg(vs->fd, msg, flags);
	if (!vs->tried && !vs->os_only)
		vsock_offload(vs);
	nb = nonblocking(vs, flags);
	for (;;) {
		r = -1;
		if (!vs->peeked_os && ring_maybe(vs)) {
			pthread_rwlock_rdlock(&vs->lock);
			r = vs->nvatt ? ring_take(vs, msg, flags) : -1;
			pthread_rwlock_unlock(&vs->lock);
		}
		if (r >= 0)
			return r;
		if (os_turn(vs, spins, nb)) {
			r = vmak_sys_recvmsg(vs->fd, msg, flags | MSG_DONTWAIT);
			if (r >= 0) {
				/*
				 * A peeked datagram is the next one read,
				 * whatever reaches the ring meanwhile.
				 */
				vs->peeked_os = flags & MSG_PEEK;
				if (!(flags & MSG_PEEK))
					vs->st->rx_os++;
				return r;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -1;
		}
		if (nb) {
			errno = EAGAIN;
			return -1;
		}
		if (vconf.rx_poll < 0 || spins < vconf.rx_poll) {
			spins++;
			continue;
		}
		if (shut) {
			msg->msg_flags = 0;
			return 0;	/* shut down and nothing left */
		}
		if (timeout == -2)
			timeout = rcvtimeo_ms(vs);
		r = wait_both(vs, &timeout);
		if (r < 0)
			return -1;
		shut = r == 1;
		spins = 0;
	}
}

int vsock_recvmmsg(struct vsock *vs, struct mmsghdr *v, unsigned int n,
		   int flags, struct timespec *timeout)
{
	int64_t deadline = 0;
	unsigned int i;
	ssize_t r;
	int f = flags & ~MSG_WAITFORONE;

	if (timeout)
		deadline = vnow_ns() + timeout->tv_sec * 1000000000LL +
			   timeout->tv_nsec;
	for (i = 0; i < n; i++) {
		r = vsock_recvmsg(vs, &v[i].msg_hdr, f);
		if (r < 0) {
			if (i)
				break;	/* the error waits for the next call */
			return -1;
		}
		v[i].msg_len = (unsigned int)r;
		if (flags & MSG_WAITFORONE)
			f |= MSG_DONTWAIT;
		if (timeout && vnow_ns() >= deadline) {
			i++;
			break;
		}
	}
	if (timeout) {
		int64_t left = deadline - vnow_ns();

		if (left < 0)
			left = 0;
		timeout->tv_sec = (time_t)(left / 1000000000LL);
		timeout->tv_nsec = (long)(left % 1000000000LL);
	}
	return (int)i;
}

int vsock_fionread(struct vsock *vs, int *out)
{
	struct frame f;
	struct vdgram *d;
	int i, found = 0;

	pthread_rwlock_rdlock(&vs->lock);
	for (i = 0; i < vs->nvatt && !found && !vs->peeked_os; i++) {
		struct vatt *a = vs->att[i];

		pthread_mutex_lock(&a->ring->lock);
		if (!a->qlen)
			vring_drain_locked(a->ring);
		d = vq_peek(a);
		if (d) {
			frame_parse(d, &f);
			*out = (int)f.plen;
			found = 1;
		}
		pthread_mutex_unlock(&a->ring->lock);
	}
	pthread_rwlock_unlock(&vs->lock);
	if (found)
		return 0;
	return vmak_sys_ioctl(vs->fd, FIONREAD, (long)out);
}
