// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The offloaded UDP socket's side of libvma's extra API: the ops of its
 * kind (fd.h) that api.c and xtreme.c call, and socketXtreme's half that
 * turns the socket's datagrams into completions.
 *
 * socketXtreme: what a socket's rings bring waits in its queues (or goes
 * straight from the RX ring into the completions of a poll that finds
 * the socket's queue empty), each handed over with its chunk held
 * (hold.c); what its kernel socket has comes out as packets too, copies,
 * on the socket's turn (VMA_RX_UDP_POLL_OS_RATIO) or when a wait said
 * the kernel socket is readable.
 */
#include <errno.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>

#include "sys.h"
#include "hold.h"
#include "stats.h"
#include "udp.h"

/* ---- the receive callback, zero copy ---- */

int vudp_x_recv_callback(struct vfd *f, int fd, vma_recv_callback_t cb,
			 void *ctx)
{
	struct vudp *u = vudp_of(f);

	/* the context first: a drain that sees the new function uses it */
	__atomic_store_n(&u->rxcb.ctx, ctx, __ATOMIC_RELAXED);
	__atomic_store_n(&u->rxcb.fd, fd, __ATOMIC_RELAXED);
	/* seq_cst, then the kick's look at the sleepers: a receive asleep
	 * in a batch would run it late, so it is woken (recv.c's batch_begin)
	 */
	__atomic_store_n(&u->rxcb.fn, cb, __ATOMIC_SEQ_CST);
	if (cb)
		vwait_kick(&u->w);
	return 0;
}

int vudp_x_recv_zcopy(struct vfd *f, int fd, void *buf, size_t len,
		      int *flags, struct sockaddr *from, socklen_t *fromlen)
{
	(void)fd;
	return vudp_recv_zcopy(vudp_of(f), buf, len, flags, from, fromlen);
}

/*
 * libvma's tests pass arrays of packet ids alone, 8 bytes each, for one
 * packet; the struct is 16 bytes: only packet_id is read, so both work.
 */
int vudp_x_free_packets(struct vfd *f, struct vma_packet_t *pkts,
			size_t count)
{
	struct vudp *u = vudp_of(f);
	struct vbuf *v;
	size_t i;

	for (i = 0; i < count; i++) {
		v = pkts ? vhold_find(pkts[i].packet_id) : NULL;
		if (!v || v->owner != u || vhold_put(v) < 0) {
			errno = ENOENT;
			return -1;
		}
		__atomic_sub_fetch(&u->rxcb.held, 1, __ATOMIC_RELAXED);
	}
	return 0;
}

/* ---- rings, statistics, user data ---- */

int vudp_x_ring_fds(struct vfd *f, int *fds, int max)
{
	return vudp_ring_fds(vudp_of(f), fds, max);
}

int vudp_x_tx_ring_fd(struct vfd *f, const struct sockaddr *to, socklen_t len)
{
	int rc = to ? vudp_tx_ring_fd(vudp_of(f), to, len) : -EINVAL;

	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return rc;
}

int vudp_x_net_header(struct vfd *f, void *buf, uint16_t *len)
{
	int rc = vudp_net_header(vudp_of(f), buf, len);

	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}

void vudp_x_dump_stats(struct vfd *f, int fd, int level)
{
	struct vudp *u = vudp_of(f);

	if (level > vlog_level)
		return;
	vlog(level, "fd %d: %llu datagrams via rings, %llu via the kernel socket, %llu more taken by the receive callback, %llu dropped, %llu sent via rings, %llu via the kernel socket; %u queued (%llu bytes), %u packets held",
	     fd, (unsigned long long)u->st->rx_ring,
	     (unsigned long long)u->st->rx_os,
	     (unsigned long long)u->st->rx_callback,
	     (unsigned long long)u->st->rx_drops,
	     (unsigned long long)u->st->tx_ring,
	     (unsigned long long)u->st->tx_os, vwait_ready(&u->w),
	     (unsigned long long)vwait_bytes(&u->w), vhold_count());
}

uint64_t vudp_x_user_data(struct vfd *f, int fd)
{
	(void)fd;
	return __atomic_load_n(&vudp_of(f)->user_data, __ATOMIC_RELAXED);
}

/* ---- socketXtreme ---- */

void vudp_xt_fill(struct vudp *u, struct vringset *r, const struct vdgram *d,
		  struct vma_completion_t *c, bool queued)
{
	struct frame f;
	struct vbuf *v;
	const struct udphdr *uh;

	frame_parse(d, &f);
	uh = (const struct udphdr *)(f.payload - sizeof(*uh));
	/* socketXtreme's buffers belong to no socket (hold.h) */
	v = vhold_take(r, d->addr, (void *)f.payload, f.plen, NULL);
	*c = (struct vma_completion_t){
		.packet = { .num_bufs = 1, .total_len = (uint16_t)f.plen,
			    .buff_lst = &v->b },
		.events = VMA_SOCKETXTREME_PACKET,
		.user_data = __atomic_load_n(&u->user_data, __ATOMIC_RELAXED),
		.src.sin_port = uh->source,
	};
	if (f.v6) {
		c->src.sin_family = AF_INET6;	/* sockaddr_in has no room */
	} else {
		c->src.sin_family = AF_INET;
		memcpy(&c->src.sin_addr, f.l3 + 12, 4);
	}
	if (queued)
		vwait_take(&u->w, 1, f.plen);
	u->st->rx_ring++;
}

#define XT_MAX_DGRAM	65535	/* more than any UDP payload, v4 or v6 */

unsigned int vudp_xt_kernel(struct vudp *u, struct vma_completion_t *c,
			    unsigned int max, bool ready)
{
	struct sockaddr_storage from;
	struct iovec iov;
	struct msghdr m;
	unsigned int n = 0;
	struct vbuf *v;
	ssize_t len;
	void *buf, *fit;

	if (!ready && __atomic_load_n(&u->natt, __ATOMIC_RELAXED) &&
	    !vwait_os_hint_take(&u->w) &&
	    (!vconf.os_poll_ratio || !vos_turn(&u->rx.os_skip)))
		return 0;
	while (n < max) {
		v = vhold_copy_claim(NULL);
		if (!v)
			break;	/* all copies held: the kernel keeps the rest */
		buf = malloc(XT_MAX_DGRAM);
		if (!buf) {
			vhold_copy_abandon(v);
			break;
		}
		iov = (struct iovec){ buf, XT_MAX_DGRAM };
		m = (struct msghdr){ .msg_name = &from,
				     .msg_namelen = sizeof(from),
				     .msg_iov = &iov, .msg_iovlen = 1 };
		/*
		 * Found through an epoll set or a ring too, not only by the
		 * program's fd: the number is read where its last close()
		 * cannot close it meanwhile (udp_closing()), -1 once gone
		 */
		pthread_rwlock_rdlock(&u->lock);
		len = u->fd < 0 ? (errno = EAGAIN, -1) :
		      vmak_sys_recvmsg(u->fd, &m, MSG_DONTWAIT);
		pthread_rwlock_unlock(&u->lock);
		if (len < 0) {
			free(buf);
			vhold_copy_abandon(v);
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			/* the socket's error (ICMP): the next receive's */
			__atomic_store_n(&u->rx.pending_err, errno,
					 __ATOMIC_RELAXED);
			memset(&c[n], 0, sizeof(c[n]));
			c[n].events = EPOLLERR;
			c[n++].user_data = __atomic_load_n(&u->user_data,
							   __ATOMIC_RELAXED);
			break;
		}
		fit = realloc(buf, len ? (size_t)len : 1);
		vhold_copy_fill(v, fit ? fit : buf, (uint32_t)len);
		memset(&c[n], 0, sizeof(c[n]));
		c[n].packet.num_bufs = 1;
		c[n].packet.total_len = (uint16_t)len;
		c[n].packet.buff_lst = &v->b;
		c[n].events = VMA_SOCKETXTREME_PACKET;
		c[n].user_data = __atomic_load_n(&u->user_data, __ATOMIC_RELAXED);
		if (from.ss_family == AF_INET)
			memcpy(&c[n].src, &from, sizeof(c[n].src));
		else	/* sockaddr_in has no room for the address */
			c[n].src = (struct sockaddr_in){
				.sin_family = from.ss_family,
				.sin_port = ((struct sockaddr_in6 *)&from)->sin6_port };
		u->st->rx_os++;
		n++;
	}
	return n;
}

struct xt_direct {
	struct vudp *u;
	struct vma_completion_t *c;
};

/* A datagram off the RX ring: u's, straight to a completion. */
static bool xt_mine(struct vatt *a, const struct vdgram *d, void *ctx)
{
	struct xt_direct *x = ctx;

	if (a->cb->owner != x->u)
		return false;	/* another socket's: queued for it */
	vudp_xt_fill(x->u, a->ring, d, x->c++, false);
	return true;
}

static unsigned int xt_take(struct vudp *u, struct vma_completion_t *c,
			    unsigned int max)
{
	struct xt_direct x = { u, NULL };
	unsigned int n = 0;
	struct vatt *a;
	struct vdgram *d;
	int i;

	/*
	 * Nothing queued for it and its rings empty: no lock; only the
	 * callbacks a drain left pending (a socket that moved rings) run.
	 */
	if (!vudp_ring_maybe(u)) {
		vwait_each_source(&u->w, vdemux_callbacks);
		return vudp_xt_kernel(u, c, max, false);
	}
	vdemux_defer_begin();
	pthread_rwlock_rdlock(&u->lock);
	for (i = 0; i < u->natt && n < max; i++) {
		a = u->att[i];
		pthread_mutex_lock(&a->ring->lock);
		while (n < max && (d = vatt_q_peek(a))) {
			vudp_xt_fill(u, a->ring, d, &c[n++], true);
			vatt_q_pop(a);
		}
		x.c = c + n;
		n += vdemux_drain_to_locked(a->ring, xt_mine, &x, max - n);
		pthread_mutex_unlock(&a->ring->lock);
		vdemux_callbacks(a->ring);
	}
	pthread_rwlock_unlock(&u->lock);
	vdemux_defer_end();
	if (n < max)
		n += vudp_xt_kernel(u, c + n, max - n, false);
	return n;
}

unsigned int vudp_x_xt_poll(struct vfd *f, struct vma_completion_t *c,
			    unsigned int max, const struct vxt_env *env)
{
	(void)env;
	return xt_take(vudp_of(f), c, max);
}

unsigned int vudp_x_xt_kernel(struct vfd *f, struct vma_completion_t *c,
			      unsigned int max)
{
	return vudp_xt_kernel(vudp_of(f), c, max, true);
}
