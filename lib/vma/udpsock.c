// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * An offloaded UDP socket as an fd: its ops table, its life from
 * socket() to the last close(), and the calls that make the kernel
 * system call and then tell the rules (bind, connect, a kernel send).
 *
 * The kernel keeps a socket open while any fd or a call in progress
 * holds it: a receive blocked in another thread still gets what arrives
 * after close(), and a dup outlives the fd it was made from. The library
 * reaches the kernel socket through u->fd, so when that fd closes while
 * the socket is still needed, u->fd becomes a hidden copy of it, closed
 * with the object.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "sys.h"
#include "stats.h"
#include "addr.h"
#include "hold.h"
#include "udp.h"

static struct vfd_pool pool = VFD_POOL_INIT(struct vudp);

static void udp_destroy(struct vfd *f)
{
	struct vudp *u = vudp_of(f);

	vudp_detach_all(u);	/* normally gone with the last fd already */
	/* its zero-copy packets: nobody can free_packets() them now */
	if (__atomic_load_n(&u->rxcb.held, __ATOMIC_RELAXED))
		vhold_release_owner(u);
	vwait_destroy(&u->w);
	if (u->own_fd)
		vfd_close_internal(u->fd);
	vstats_slot_put(u->slot);
	vudp_tx_destroy(u);
	pthread_rwlock_destroy(&u->lock);
	vfd_pool_free(&pool, f);
}

/*
 * fd closes and the socket lives on as another fd (a dup): what named it
 * by fd (its default user data, as libvma's is its fd; the fd its
 * callback is told) names that one from now on, never a number the next
 * open() may reuse.
 */
static void follow_fd(struct vudp *u, int fd)
{
	uint64_t was = (uint64_t)fd;
	int other = vfd_other_fd(&u->hdr, fd), cbfd = fd;

	if (other < 0)
		return;
	if (!__atomic_load_n(&u->user_data_set, __ATOMIC_RELAXED))
		__atomic_compare_exchange_n(&u->user_data, &was, (uint64_t)other,
					    false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	__atomic_compare_exchange_n(&u->rxcb.fd, &cbfd, other, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Epoll sets' references do not keep a kernel socket open. */
static void udp_closing(struct vfd *f, int fd)
{
	struct vudp *u = vudp_of(f);
	bool kept;

	/* the lock: a socketXtreme poll reads u->fd under it (udpextra.c) */
	pthread_rwlock_wrlock(&u->lock);
	kept = vfd_keep_copy(f, fd, &u->fd, &u->own_fd,
			     __atomic_load_n(&u->w.sets, __ATOMIC_ACQUIRE));
	pthread_rwlock_unlock(&u->lock);
	if (!kept)
		vlog(VLOG_WARNING, "fd %d: no fd left to keep its socket for its other users (%s)",
		     fd, strerror(errno));
	/* a receive asleep on fd: look again, on the copy */
	vwait_kick(&u->w);
	follow_fd(u, fd);
}

static void udp_closed(struct vfd *f, int fd)
{
	struct vudp *u = vudp_of(f);

	if (__atomic_load_n(&f->nfds, __ATOMIC_ACQUIRE))
		return;
	/* the last fd: its rules go; a call in flight reads the kernel */
	vstats_log(fd, u->st);
	vudp_reply_log(u, fd);
	/* a zero-copy receive in flight gives a copy from here on */
	pthread_rwlock_wrlock(&u->lock);
	u->rx.fdless = true;
	pthread_rwlock_unlock(&u->lock);
	vudp_detach_all(u);
}

static int udp_bind(struct vfd *f, int fd, const struct sockaddr *sa,
		    socklen_t len)
{
	struct vudp *u = vudp_of(f);
	int rc = vmak_sys_bind(fd, sa, len), err = errno;

	if (!rc) {
		vudp_offload(u);
		vudp_settle(u);
	}
	errno = err;
	return rc;
}

static int udp_connect(struct vfd *f, int fd, const struct sockaddr *sa,
		       socklen_t len)
{
	struct vudp *u = vudp_of(f);
	int rc = vmak_sys_connect(fd, sa, len), err = errno;

	/* even a failed connect may have bound the socket */
	vudp_offload(u);
	vudp_settle(u);
	errno = err;
	return rc;
}

/* Where a kernel send went, for the answer poll (reply.h). */
static void kernel_sent(struct vudp *u, const struct msghdr *msg)
{
	struct sockaddr_in6 dst;

	if (!msg->msg_name || !vaddr_mapped(msg->msg_name, msg->msg_namelen,
					    &dst)) {
		pthread_rwlock_rdlock(&u->lock);
		dst = u->peer;
		pthread_rwlock_unlock(&u->lock);
	}
	vudp_sent(u, &dst);
}

/* A kernel send; a socket that got its port from it is offloaded after. */
static ssize_t kernel_send(struct vudp *u, int fd, const struct msghdr *msg,
			   int flags)
{
	ssize_t r;
	int err;

	/* libvma's: a dummy the rings cannot take is not the kernel's */
	if (flags & VMA_SND_FLAGS_DUMMY) {
		errno = EINVAL;
		return -1;
	}
	r = vmak_sys_sendmsg(fd, msg, flags);
	err = errno;
	if (r < 0)
		return r;
	u->st->tx_os++;
	kernel_sent(u, msg);
	__atomic_store_n(&u->tx.corked, (flags & MSG_MORE) != 0,
			 __ATOMIC_RELAXED);
	if (!u->tried || u->unbound) {
		vudp_offload(u);
		vudp_settle(u);
	}
	errno = err;
	return r;
}

/* Corked data waits in the kernel socket: the rest of it goes there. */
static bool corked(struct vudp *u, int flags)
{
	return (flags & MSG_MORE) ||
	       __atomic_load_n(&u->tx.corked, __ATOMIC_RELAXED);
}

static ssize_t vudp_sendmsg(struct vfd *f, int fd, const struct msghdr *msg,
		     int flags)
{
	struct vudp *u = vudp_of(f);
	ssize_t r;

	if (!corked(u, flags)) {
		r = vudp_ring_send(u, msg, flags, true);
		if (r >= 0)
			return r;
		if (r != VSEND_OS) {
			errno = (int)-r;
			return -1;
		}
	}
	return kernel_send(u, fd, msg, flags);
}

/*
 * A batch through the rings is kicked once; a datagram that must go
 * through the kernel first flushes what the rings hold, to keep order.
 * A socket without rings hands the batch to the kernel whole.
 */
static int vudp_sendmmsg(struct vfd *f, int fd, struct mmsghdr *v, unsigned int n,
		  int flags)
{
	struct vudp *u = vudp_of(f);
	unsigned int i;
	ssize_t r;
	int rc;

	if (!n)
		return 0;
	if (!__atomic_load_n(&u->natt, __ATOMIC_RELAXED) || corked(u, flags)) {
		if (flags & VMA_SND_FLAGS_DUMMY) {
			errno = EINVAL;	/* as kernel_send() */
			return -1;
		}
		rc = vmak_sys_sendmmsg(fd, v, n, flags);
		if (rc > 0 && (!u->tried || u->unbound)) {
			vudp_offload(u);
			vudp_settle(u);
		}
		return rc;
	}
	if (n > UIO_MAXIOV)
		n = UIO_MAXIOV;
	for (i = 0; i < n; i++) {
		r = vudp_ring_send(u, &v[i].msg_hdr, flags, false);
		if (r == VSEND_OS) {
			vudp_tx_kick(u);
			r = kernel_send(u, fd, &v[i].msg_hdr, flags);
		} else if (r < 0) {
			errno = (int)-r;
			r = -1;
		}
		if (r < 0)
			break;
		v[i].msg_len = (unsigned int)r;
	}
	rc = vudp_tx_kick(u);
	if (rc && !i) {
		errno = -rc;
		return -1;
	}
	return i ? (int)i : -1;
}

static struct vwait *udp_wait(struct vfd *f)
{
	return &vudp_of(f)->w;
}

const struct vfd_ops vudp_ops = {
	.kind = "udp",
	.destroy = udp_destroy,
	.closing = udp_closing,
	.closed = udp_closed,
	.bind = udp_bind,
	.connect = udp_connect,
	.setsockopt = vudp_setsockopt,
	.getsockopt = vudp_getsockopt,
	.fcntl = vudp_fcntl,
	.ioctl = vudp_ioctl,
	.recvmsg = vudp_recvmsg,
	.recvmmsg = vudp_recvmmsg,
	.sendmsg = vudp_sendmsg,
	.sendmmsg = vudp_sendmmsg,
	.wait = udp_wait,
	.recv_callback = vudp_x_recv_callback,
	.recv_zcopy = vudp_x_recv_zcopy,
	.free_packets = vudp_x_free_packets,
	.ring_fds = vudp_x_ring_fds,
	.tx_ring_fd = vudp_x_tx_ring_fd,
	.dump_stats = vudp_x_dump_stats,
	.net_header = vudp_x_net_header,
	.user_data = vudp_x_user_data,
	.xt_poll = vudp_x_xt_poll,
	.xt_kernel = vudp_x_xt_kernel,
};

struct vudp *vudp_new(int fd, int family, bool nonblock)
{
	struct vudp *u = (struct vudp *)vfd_pool_alloc(&pool);

	if (!u)
		return NULL;
	u->hdr.ops = &vudp_ops;
	pthread_rwlock_init(&u->lock, NULL);
	vwait_init(&u->w);
	vudp_tx_init(u);
	vudp_opt_init(u, nonblock);
	u->logic = -1;
	u->fd = fd;
	u->rxcb.fd = fd;
	u->rxcb.owner = u;
	u->rxcb.obj = &u->hdr;
	u->user_data = (uint64_t)fd;
	u->family = family;
	u->slot = vstats_slot_get(fd, family);
	u->st = u->slot ? &u->slot->c : &u->own_st;
	u->rxcb.consumed = &u->st->rx_callback;
	vrs_started();
	__atomic_store_n(&u->hdr.refs, 1, __ATOMIC_RELEASE);	/* the slot's */
	vfd_install(fd, &u->hdr);
	return u;
}

/* ---- every socket at once (fork, daemon, exit) ---- */

struct each {
	struct vfd **v;
	size_t n, cap;
};

static void collect(int fd, struct vfd *f, void *ctx)
{
	struct each *each = ctx;
	struct vfd **v;
	size_t i;

	(void)fd;
	for (i = 0; i < each->n; i++)
		if (each->v[i] == f)
			return;		/* a dup of one we have */
	if (each->n == each->cap) {
		v = realloc(each->v, (each->cap ? each->cap * 2 : 64) * sizeof(*v));
		if (!v)
			return;
		each->v = v;
		each->cap = each->cap ? each->cap * 2 : 64;
	}
	vfd_ref(f);
	each->v[each->n++] = f;
}

/* fn on every socket, outside the table's lock. */
static void for_each_udp(void (*fn)(struct vudp *u))
{
	struct each mine = { NULL, 0, 0 };
	size_t i;

	vfd_for_each(&vudp_ops, collect, &mine);
	for (i = 0; i < mine.n; i++) {
		fn(vudp_of(mine.v[i]));
		vfd_put(mine.v[i]);
	}
	free(mine.v);
}

static void child_reset(int fd, struct vfd *f, void *ctx)
{
	struct vudp *u = vudp_of(f);

	(void)fd;
	(void)ctx;
	/* each part's owner starts it over; the counters are the child's */
	pthread_rwlock_init(&u->lock, NULL);
	vudp_att_atfork_child(u);
	vwait_atfork_child(&u->w);
	vudp_tx_atfork_child(u);
	u->slot = NULL;
	u->st = &u->own_st;
}

void vudp_atfork_child(void)
{
	vfd_pool_atfork_child(&pool);
	vfd_for_each_in_child(&vudp_ops, child_reset, NULL);
}

static void reoffload(struct vudp *u)
{
	u->os_only = false;
	u->tried = false;
	vudp_offload(u);
}

void vudp_after_daemon(void)
{
	for_each_udp(reoffload);
}

static void to_os(struct vudp *u)
{
	vudp_to_os(u, "VMAK_FORK=kernel: every process reads the kernel socket");
}

void vudp_all_to_os(void)
{
	for_each_udp(to_os);
}

static void log_open(struct vudp *u)
{
	vstats_log(u->fd, u->st);
	vudp_reply_log(u, u->fd);
}

/* Sockets still open when the process ends. */
__attribute__((destructor)) static void udp_exit(void)
{
	if (vfd_any() && vlog_level >= VLOG_DETAILS)
		for_each_udp(log_open);
}
