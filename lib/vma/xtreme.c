// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * socketXtreme: datagrams as completions the application polls for, their
 * buffers handed over without a copy and counted.
 *
 * With VMA_SOCKETXTREME=1, what a socket's rings bring is no longer
 * returned by recv() and its kin (as in libvma): it waits in the socket's
 * queue for socketxtreme_poll(). The poll is an op of the fd's kind
 * (fd.h), each kind's form in its own file:
 *
 *   a ring fd      (ringfd.c; get_socket_rings_fds(), libvma's only
 *                  form): the ring's datagrams for every socket on it,
 *                  in arrival order;
 *   a socket fd    (udpextra.c) its own datagrams (vmak's addition);
 *   an epoll fd    (epoll.c) its members' datagrams, then the kernel's
 *                  events for its fds, which this file turns into
 *                  completions (event()): EPOLLIN and the rest for what is
 *                  not offloaded (a TCP socket), a listening TCP socket's
 *                  new connection accepted
 *                  (VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED) (vmak's
 *                  addition);
 *   a listening TCP socket, not an object of ours (here): its new
 *                  connections, accepted.
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
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "sys.h"
#include "vma.h"
#include "fd.h"
#include "hold.h"
#include "api.h"

static bool xt_refused(void)
{
	if (vconf.socketxtreme)
		return false;
	vlog_once(VLOG_WARNING, "socketXtreme is not on (VMA_SOCKETXTREME=1): its calls fail with EOPNOTSUPP");
	errno = EOPNOTSUPP;
	return true;
}

/* ---- TCP ---- */

static bool is_listening(int fd)
{
	socklen_t len = sizeof(int);
	int on = 0;

	return !vmak_sys_getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) &&
	       on;
}

/*
 * One connection a listening socket has waiting, accepted for the app,
 * never waiting for one: the poll that said one is there may be stale
 * (another thread took it, or the peer reset it first). A blocking
 * listener is made non-blocking for the one accept4() (accept has no
 * MSG_DONTWAIT): another thread's accept() entering in that window gets
 * EAGAIN, as on a non-blocking listener.
 */
static unsigned int accept_one(int lfd, struct vma_completion_t *c)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	int fd, fl = vmak_sys_fcntl(lfd, F_GETFL, 0), err;
	bool blocking = fl >= 0 && !(fl & O_NONBLOCK);

	if (blocking && vmak_sys_fcntl(lfd, F_SETFL, fl | O_NONBLOCK))
		return 0;
	fd = vmak_sys_accept4(lfd, (struct sockaddr *)&peer, &len, 0);
	err = errno;
	if (blocking)
		vmak_sys_fcntl(lfd, F_SETFL, fl);
	errno = err;
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

/* The user data of an fd: SO_VMA_USER_DATA, or the fd itself. */
static uint64_t user_data_of(int fd)
{
	struct vfd *f = vfd_get(fd);
	uint64_t v = (uint64_t)fd;

	if (f && f->ops->user_data)
		v = f->ops->user_data(f, fd);
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
		bool ours = f && f->ops->xt_kernel;
		unsigned int n = 0;

		/* an offloaded socket's kernel datagrams: packets too */
		if (ours)
			n = f->ops->xt_kernel(f, c, max);
		if (f)
			vfd_put(f);
		if (ours)
			return n;
	}
	memset(c, 0, sizeof(*c));
	c->events = ev->events;
	/* an fd the set does not know: the program's own data for it */
	c->user_data = fd >= 0 ? user_data_of(fd) : ev->data.u64;
	return 1;
}

static const struct vxt_env env = {
	.listening = is_listening,
	.event = event,
};

/* ---- the calls ---- */

int vxt_poll(int fd, struct vma_completion_t *c, unsigned int n, int flags)
{
	bool internal;
	struct vfd *f;
	int rc;

	(void)flags;	/* libvma takes none either */
	if (xt_refused())
		return -1;
	if (!c || !n) {		/* libvma: EINVAL for either */
		errno = EINVAL;
		return -1;
	}
	f = vfd_get_api(fd, &internal);
	if (f) {
		rc = f->ops->xt_poll ? (int)f->ops->xt_poll(f, c, n, &env) :
				       (errno = EBADFD, -1);
		vfd_put(f);
		return rc;
	}
	if (!internal && is_listening(fd))
		return (int)listen_form(fd, c, n);
	errno = EBADFD;		/* libvma: not a ring's fd */
	return -1;
}

int vxt_free_packets(struct vma_packet_desc_t *packets, int num)
{
	struct vma_buff_t *b, *next;
	struct vbuf *v;
	int i;

	if (xt_refused())
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

	if (xt_refused())
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
