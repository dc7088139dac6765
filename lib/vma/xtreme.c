// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * socketXtreme: datagrams as completions the application polls for, their
 * buffers handed over without a copy and counted.
 *
 * With VMA_SOCKETXTREME=1, what a socket's rings bring is no longer
 * returned by recv() and its kin (as in libvma): it waits in the socket's
 * queue for socketxtreme_poll(), on
 *
 *   a ring fd      (get_socket_rings_fds(); libvma's only form): the
 *                  ring's datagrams for every socket on it, one socket at
 *                  a time in turn;
 *   a socket fd    its own datagrams (vmak's addition);
 *   an epoll fd    its members' datagrams, then the kernel's events for
 *                  its fds: EPOLLIN and the rest for what is not
 *                  offloaded (a TCP socket), a listening TCP socket's new
 *                  connection accepted
 *                  (VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED) (vmak's
 *                  addition);
 *   a listening TCP socket: its new connections, accepted.
 *
 * An offloaded socket's datagrams that came through its kernel socket
 * (what rings cannot take: IP fragments, local senders) come out of the
 * same polls as packets of their own, copies (hold.c): on the socket's
 * turn (VMA_RX_UDP_POLL_OS_RATIO) in the ring and socket forms, when the
 * kernel says so in the epoll form. libvma reassembles fragments itself
 * and reports them as packets; we take the kernel's reassembly.
 *
 * A packet's buffer is the application's until it frees it
 * (socketxtreme_free_vma_packets(), or socketxtreme_free_vma_buff() once
 * per reference taken by socketxtreme_ref_vma_buff()); hold.c counts the
 * references and gives the chunk back to its FILL ring at the last.
 * Polling never blocks: an application sleeps in poll() or epoll_wait()
 * on the same fds.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "sys.h"
#include "vma.h"
#include "fd.h"
#include "hold.h"
#include "rings.h"
#include "demux.h"
#include "udp.h"
#include "iomux.h"
#include "api.h"

static bool off(void)
{
	if (vconf.socketxtreme)
		return false;
	vlog_once(VLOG_WARNING, "socketXtreme is not on (VMA_SOCKETXTREME=1): its calls fail with EOPNOTSUPP");
	errno = EOPNOTSUPP;
	return true;
}

/* ---- the ring form ---- */

struct ring_poll {
	struct vma_completion_t *c;
};

static bool ring_one(struct vatt *a, const struct vdgram *d, void *ctx)
{
	struct ring_poll *rp = ctx;

	vudp_xt_fill((struct vudp *)a->cb->owner, a->ring, d, rp->c++, true);
	return true;
}

static bool ring_new(struct vatt *a, const struct vdgram *d, void *ctx)
{
	struct ring_poll *rp = ctx;

	vudp_xt_fill((struct vudp *)a->cb->owner, a->ring, d, rp->c++, false);
	return true;
}

#define RING_OWNERS	64	/* sockets of a ring whose kernel sockets are read */

/*
 * The turn of the kernel sockets of r's sockets: a wait saw one readable
 * (vwait_hint_os()), or once every VMA_RX_UDP_POLL_OS_RATIO polls of the
 * ring, as libvma looks at its OS fds. Plain loads and stores: a hint
 * set between them finds its datagram already in the kernel socket, which
 * this turn reads.
 */
static bool ring_os_turn(struct vringset *r)
{
	if (__atomic_load_n(&r->os_hint, __ATOMIC_RELAXED)) {
		__atomic_store_n(&r->os_hint, false, __ATOMIC_RELAXED);
		return true;
	}
	return vconf.os_poll_ratio && vos_turn(&r->os_skip);
}

/*
 * The ring's datagrams, then, on their turn, what the kernel sockets of
 * the ring's sockets have (vudp_xt_kernel()): every datagram of theirs
 * comes out of the ring's fd, as libvma's do. A poll that finds the ring
 * empty, nothing queued and no callback to run takes no lock: that is
 * most polls of a program that spins on its ring.
 */
static int ring_form(struct vringset *r, struct vma_completion_t *c,
		     unsigned int n)
{
	const void *own[RING_OWNERS];
	struct ring_poll rp = { c };
	unsigned int got = 0, nown = 0, i;
	bool os = ring_os_turn(r);
	struct vudp *u;

	if (!os && !vrs_pending(r) &&
	    !__atomic_load_n(&r->queued, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&r->pend_len, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&r->lock);
	/* what waits in the queues first, then what the ring brings */
	got = r->queued ? vdemux_each_front_locked(r, ring_one, &rp, n) : 0;
	got += vdemux_drain_to_locked(r, ring_new, &rp, n - got);
	if (os && got < n)
		nown = vdemux_owners_locked(r, own, RING_OWNERS);
	else if (os)	/* no room for them: the next poll's turn */
		__atomic_store_n(&r->os_hint, true, __ATOMIC_RELAXED);
	for (i = 0; i < nown; i++)	/* they outlive the lock */
		if (!vfd_tryref(&((struct vudp *)own[i])->hdr))
			own[i] = NULL;
	pthread_mutex_unlock(&r->lock);
	vdemux_callbacks(r);
	for (i = 0; i < nown; i++) {
		u = (struct vudp *)own[i];
		if (!u)
			continue;
		if (got < n)
			got += vudp_xt_kernel(u, c + got, n - got, true);
		vfd_put(&u->hdr);
	}
	return (int)got;
}

/* ---- TCP ---- */

static bool is_listening(int fd)
{
	socklen_t len = sizeof(int);
	int on = 0;

	return !vmak_sys_getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) &&
	       on;
}

/* One connection a listening socket has waiting, accepted for the app. */
static unsigned int accept_one(int lfd, struct vma_completion_t *c)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	int fd;

	fd = vmak_sys_accept4(lfd, (struct sockaddr *)&peer, &len, 0);
	if (fd < 0)
		return 0;
	vfd_fresh(fd);
	memset(c, 0, sizeof(*c));
	c->events = VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED;
	c->user_data = (uint64_t)fd;	/* the new socket */
	c->listen_fd = lfd;
	if (peer.ss_family == AF_INET)
		memcpy(&c->src, &peer, sizeof(c->src));
	else
		c->src.sin_family = peer.ss_family;
	return 1;
}

static unsigned int listen_form(int lfd, struct vma_completion_t *c,
				unsigned int n)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	unsigned int got = 0;

	/* as many as are waiting, never blocking on a blocking socket */
	while (got < n && vmak_sys_poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
		if (!accept_one(lfd, &c[got++])) {
			got--;
			break;
		}
	return got;
}

/* ---- the epoll form ---- */

static unsigned int member_take(struct vfd *m, struct vma_completion_t *c,
				unsigned int max)
{
	return m->ops == &vudp_ops ? vudp_xt_take(vudp_of(m), c, max) : 0;
}

/*
 * A socket of the program's the library does not offload (TCP, say) that
 * was given SO_VMA_USER_DATA, as libvma takes it on any of its sockets:
 * an fd object with nothing but that value (every other call on the fd is
 * the C library's), for the completions that name it.
 */
struct vextra {
	struct vfd hdr;
	uint64_t user_data;
};

static struct vfd_pool extra_pool = VFD_POOL_INIT(struct vextra);

static void extra_destroy(struct vfd *f)
{
	vfd_pool_free(&extra_pool, f);
}

static int extra_set(struct vfd *f, int fd, int level, int name,
		     const void *val, socklen_t len)
{
	if (level != SOL_SOCKET || name != SO_VMA_USER_DATA)
		return vmak_sys_setsockopt(fd, level, name, val, len);
	if (!val || len != sizeof(uint64_t)) {
		errno = EINVAL;
		return -1;
	}
	__atomic_store_n(&((struct vextra *)f)->user_data,
			 *(const uint64_t *)val, __ATOMIC_RELAXED);
	return 0;
}

static int extra_get(struct vfd *f, int fd, int level, int name, void *val,
		     socklen_t *len)
{
	uint64_t v;

	if (level != SOL_SOCKET || name != SO_VMA_USER_DATA)
		return vmak_sys_getsockopt(fd, level, name, val, len);
	if (!val || !len || *len < sizeof(v)) {
		errno = !val || !len ? EFAULT : EINVAL;
		return -1;
	}
	v = __atomic_load_n(&((struct vextra *)f)->user_data, __ATOMIC_RELAXED);
	memcpy(val, &v, sizeof(v));
	*len = sizeof(v);
	return 0;
}

static const struct vfd_ops vextra_ops = {
	.kind = "extra",
	.destroy = extra_destroy,
	.setsockopt = extra_set,
	.getsockopt = extra_get,
};

int vxt_user_data_plain(int fd, const void *val, socklen_t len)
{
	socklen_t tl = sizeof(int);
	struct vextra *x;
	int type;

	/* a socket's, or the kernel's error for what is not one */
	if (vmak_sys_getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl))
		return -1;
	if (!val || len != sizeof(uint64_t)) {
		errno = EINVAL;
		return -1;
	}
	x = (struct vextra *)vfd_pool_alloc(&extra_pool);
	if (!x) {
		errno = ENOMEM;
		return -1;
	}
	x->hdr.ops = &vextra_ops;
	x->user_data = *(const uint64_t *)val;
	__atomic_store_n(&x->hdr.refs, 1, __ATOMIC_RELEASE);
	vfd_install(fd, &x->hdr);
	return 0;
}

/* The user data of an fd: SO_VMA_USER_DATA, or the fd itself. */
static uint64_t user_data_of(int fd)
{
	struct vfd *f = vfd_get(fd);
	uint64_t v = (uint64_t)fd;

	if (f && f->ops == &vudp_ops)
		v = __atomic_load_n(&vudp_of(f)->user_data, __ATOMIC_RELAXED);
	else if (f && f->ops == &vextra_ops)
		v = __atomic_load_n(&((struct vextra *)f)->user_data,
				    __ATOMIC_RELAXED);
	if (f)
		vfd_put(f);
	return v;
}

static unsigned int event(int fd, bool listening, const struct epoll_event *ev,
			  struct vma_completion_t *c, unsigned int max)
{
	if (!max)
		return 0;
	if (listening && (ev->events & EPOLLIN))
		return accept_one(fd, c);
	if (fd >= 0 && (ev->events & EPOLLIN) && !(ev->events & ~(EPOLLIN | EPOLLRDNORM))) {
		struct vfd *f = vfd_get(fd);
		unsigned int n = 0;

		/* an offloaded socket's kernel datagrams: packets too */
		if (f && f->ops == &vudp_ops)
			n = vudp_xt_kernel(vudp_of(f), c, max, true);
		if (f)
			vfd_put(f);
		if (f && f->ops == &vudp_ops)
			return n;
	}
	memset(c, 0, sizeof(*c));
	c->events = ev->events;
	/* an fd the set does not know: the program's own data for it */
	c->user_data = fd >= 0 ? user_data_of(fd) : ev->data.u64;
	return 1;
}

static const struct vepoll_xt_ops xt_ops = {
	.take = member_take,
	.listening = is_listening,
	.event = event,
};

/* ---- the calls ---- */

int vxt_poll(int fd, struct vma_completion_t *c, unsigned int n, int flags)
{
	struct vringset *r;
	bool internal;
	struct vfd *f;
	int rc;

	(void)flags;	/* libvma takes none either */
	if (off())
		return -1;
	if (!c || !n) {		/* libvma: EINVAL for either */
		errno = EINVAL;
		return -1;
	}
	f = vfd_get_or_internal(fd, &internal);
	if (f) {
		if (f->ops == &vudp_ops)
			rc = (int)vudp_xt_take(vudp_of(f), c, n);
		else if (vepoll_is(f))
			rc = (int)vepoll_xt(f, c, n, &xt_ops);
		else
			rc = (errno = EBADFD, -1);
		vfd_put(f);
		return rc;
	}
	r = internal ? vrs_by_fd(fd) : NULL;
	if (r)
		return ring_form(r, c, n);
	if (is_listening(fd))
		return (int)listen_form(fd, c, n);
	errno = EBADFD;		/* libvma: not a ring's fd */
	return -1;
}

int vxt_free_packets(struct vma_packet_desc_t *packets, int num)
{
	struct vma_buff_t *b, *next;
	struct vbuf *v;
	int i;

	if (off())
		return -1;
	if (!packets || num < 0) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < num; i++)
		for (b = packets[i].buff_lst; b; b = next) {
			next = b->next;
			v = vhold_find(b);
			if (!v || vhold_put(v) < 0) {
				errno = EINVAL;
				return -1;
			}
		}
	return 0;
}

/* A buffer the application names: ref or put; the new count, or -1. */
static int buff_op(struct vma_buff_t *buff, int (*op)(struct vbuf *))
{
	struct vbuf *v;
	int rc;

	if (off())
		return -1;
	v = vhold_find(buff);
	rc = v ? op(v) : -EINVAL;
	if (rc < 0) {
		errno = -rc;	/* not held: nothing is given back twice */
		return -1;
	}
	return rc;
}

int vxt_ref_buff(struct vma_buff_t *buff)
{
	return buff_op(buff, vhold_ref);
}

int vxt_free_buff(struct vma_buff_t *buff)
{
	return buff_op(buff, vhold_put);
}

void vxt_atfork_child(void)
{
	vfd_pool_atfork_child(&extra_pool);
}
