// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The C library's socket calls, interposed. Each wrapper hands an
 * offloaded fd to lib/vma/ and everything else straight to the C library:
 * until the process creates its first UDP socket, one load and one branch
 * are all a call costs; after it, a lookup in the fd table.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>

#include "sys.h"
#include "vma.h"

#define ACTIVE()	__atomic_load_n(&vmak_active, __ATOMIC_RELAXED)

void __chk_fail(void) __attribute__((noreturn));
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen,
		       int flags, struct sockaddr *sa, socklen_t *salen);
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int fcntl64(int fd, int cmd, ...);

/* Resolve the C library's calls while the process is still one thread. */
__attribute__((constructor)) static void preload_init(void)
{
	int err = errno;

	vmak_sys_close(-1);
	errno = err;	/* the program sees no trace of it */
}

VMAK_API int socket(int domain, int type, int protocol)
{
	int fd = vmak_sys_socket(domain, type, protocol);
	struct vsock *vs;

	if (fd >= 0 && (domain == AF_INET || domain == AF_INET6) &&
	    (type & 0xf) == SOCK_DGRAM &&
	    (protocol == 0 || protocol == IPPROTO_UDP) &&
	    (vs = vsock_new(fd, domain)))
		vs->nonblock = type & SOCK_NONBLOCK;
	return fd;
}

VMAK_API int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct vsock *vs;
	int rc = vmak_sys_bind(fd, sa, len);

	if (!rc && ACTIVE() && (vs = vfd_sock(fd))) {
		vsock_offload(vs);
		vsock_release(vs);
	}
	return rc;
}

VMAK_API int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct vsock *vs;
	int rc = vmak_sys_connect(fd, sa, len), err = errno;

	if (ACTIVE() && (vs = vfd_sock(fd))) {
		/* even a failed connect may have bound the socket */
		vsock_offload(vs);
		vsock_release(vs);
	}
	errno = err;
	return rc;
}

/* fd stops being what the table says (close, or a dup over it). */
static void forget(int fd)
{
	void *obj;

	switch (vfd_clear(fd, &obj)) {
	case VFD_SOCK:
		vsock_fd_closing(obj, fd);
		vsock_fd_closed(obj);
		break;
	case VFD_EPOLL:
		vepoll_release(obj);
		break;
	default:
		break;
	}
}

/* Our own fds look closed to the application: EBADF, as for a free fd. */
static bool internal(int fd)
{
	if (vfd_kind(fd) != VFD_INTERNAL)
		return false;
	errno = EBADF;
	return true;
}

VMAK_API int close(int fd)
{
	void *obj;
	enum vfd_kind k;
	int rc, err;

	if (!ACTIVE())
		return vmak_sys_close(fd);
	if (internal(fd))
		return -1;
	k = vfd_clear(fd, &obj);
	if (k == VFD_SOCK)
		vsock_fd_closing(obj, fd);
	rc = vmak_sys_close(fd);
	err = errno;
	if (k == VFD_SOCK)
		vsock_fd_closed(obj);
	else if (k == VFD_EPOLL)
		vepoll_release(obj);
	errno = err;	/* close()'s own, not our cleanup's */
	return rc;
}

VMAK_API int dup(int fd)
{
	int nfd = vmak_sys_dup(fd);

	if (nfd >= 0 && ACTIVE())
		vfd_dup(fd, nfd);
	return nfd;
}

static int dup_onto(int fd, int nfd, int flags, bool three)
{
	int rc;

	if (!ACTIVE())
		return three ? vmak_sys_dup3(fd, nfd, flags) :
			       vmak_sys_dup2(fd, nfd);
	if (internal(nfd))
		return -1;
	if (fd != nfd)
		forget(nfd);
	rc = three ? vmak_sys_dup3(fd, nfd, flags) : vmak_sys_dup2(fd, nfd);
	if (rc >= 0 && fd != nfd)
		vfd_dup(fd, nfd);
	return rc;
}

VMAK_API int dup2(int fd, int nfd)
{
	return dup_onto(fd, nfd, 0, false);
}

VMAK_API int dup3(int fd, int nfd, int flags)
{
	return dup_onto(fd, nfd, flags, true);
}

VMAK_API int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	long arg;
	int rc;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	struct vsock *vs;

	rc = vmak_sys_fcntl(fd, cmd, arg);
	if (rc < 0 || !ACTIVE())
		return rc;
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) {
		vfd_dup(fd, rc);
	} else if (cmd == F_SETFL && (vs = vfd_sock(fd))) {
		__atomic_store_n(&vs->nonblock, !!(arg & O_NONBLOCK), __ATOMIC_RELAXED);
		vsock_release(vs);
	}
	return rc;
}

VMAK_API int fcntl64(int fd, int cmd, ...) __attribute__((alias("fcntl")));

VMAK_API int ioctl(int fd, unsigned long req, ...)
{
	struct vsock *vs;
	va_list ap;
	long arg;
	int rc;

	va_start(ap, req);
	arg = va_arg(ap, long);
	va_end(ap);
	if ((req != FIONREAD && req != FIONBIO) || !ACTIVE() ||
	    !(vs = vfd_sock(fd)))
		return vmak_sys_ioctl(fd, req, arg);
	if (req == FIONREAD) {
		rc = vsock_fionread(vs, (int *)arg);
	} else {
		rc = vmak_sys_ioctl(fd, req, arg);
		if (!rc)
			__atomic_store_n(&vs->nonblock, *(int *)arg != 0,
					 __ATOMIC_RELAXED);
	}
	vsock_release(vs);
	return rc;
}

/* ---- socket options ---- */

static void opt_group(struct vsock *vs, int level, int name, const void *val,
		      socklen_t len)
{
	struct sockaddr_storage g;
	int ifindex = 0, join = 1;

	memset(&g, 0, sizeof(g));
	if (level == IPPROTO_IP && (name == IP_ADD_MEMBERSHIP ||
				    name == IP_DROP_MEMBERSHIP)) {
		const struct ip_mreqn *mr = val;
		struct sockaddr_in *in = (struct sockaddr_in *)&g;

		in->sin_family = AF_INET;
		in->sin_addr = mr->imr_multiaddr;
		if (len >= sizeof(struct ip_mreqn))
			ifindex = mr->imr_ifindex;
		join = name == IP_ADD_MEMBERSHIP;
	} else if (level == IPPROTO_IPV6) {
		const struct ipv6_mreq *mr = val;
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&g;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = mr->ipv6mr_multiaddr;
		ifindex = (int)mr->ipv6mr_interface;
		join = name == IPV6_ADD_MEMBERSHIP;
	} else {
		return;
	}
	vsock_group(vs, join, (struct sockaddr *)&g, ifindex);
}

static void opt_mcast(struct vsock *vs, int name, const void *val)
{
	const struct group_req *gr = val;

	vsock_group(vs, name == MCAST_JOIN_GROUP,
		    (const struct sockaddr *)&gr->gr_group,
		    (int)gr->gr_interface);
}

static int opt_on(const void *val, socklen_t len)
{
	return len >= sizeof(int) ? *(const int *)val != 0 :
	       len >= 1 && *(const unsigned char *)val != 0;
}

/* What a successful setsockopt() means for an offloaded socket. */
enum opt_action {
	OPT_GROUP,		/* IP(V6)_ADD/DROP_MEMBERSHIP */
	OPT_MCAST,		/* MCAST_JOIN/LEAVE_GROUP */
	OPT_PKTINFO, OPT_PKTINFO6,
	OPT_TIMESTAMP,		/* SO_TIMESTAMP(NS) */
	OPT_REOFFLOAD,		/* what the socket owns changed */
	OPT_REOFFLOAD_ON,	/* ... when switched on */
	OPT_OS,			/* the rings cannot: back to the kernel */
	OPT_OS_ON,		/* ... when switched on */
};

static const struct {
	int level, name;
	enum opt_action act;
	const char *why;
} opts[] = {
	{ SOL_SOCKET, SO_BINDTODEVICE, OPT_REOFFLOAD, NULL },
	{ SOL_SOCKET, SO_BINDTOIFINDEX, OPT_REOFFLOAD, NULL },
	{ SOL_SOCKET, SO_TIMESTAMP, OPT_TIMESTAMP, NULL },
	{ SOL_SOCKET, SO_TIMESTAMPNS, OPT_TIMESTAMP, NULL },
#ifdef SO_TIMESTAMP_NEW
	{ SOL_SOCKET, SO_TIMESTAMP_NEW, OPT_OS_ON, "SO_TIMESTAMP_NEW" },
	{ SOL_SOCKET, SO_TIMESTAMPNS_NEW, OPT_OS_ON, "SO_TIMESTAMPNS_NEW" },
#endif
	{ SOL_SOCKET, SO_TIMESTAMPING, OPT_OS_ON, "SO_TIMESTAMPING" },
	{ SOL_SOCKET, SO_RXQ_OVFL, OPT_OS_ON, "SO_RXQ_OVFL" },
	{ SOL_SOCKET, SO_ATTACH_FILTER, OPT_OS, "a socket filter" },
	{ SOL_SOCKET, SO_ATTACH_BPF, OPT_OS, "a socket filter" },
	{ SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, OPT_OS, "a reuseport filter" },
	{ SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, OPT_OS, "a reuseport filter" },
	{ IPPROTO_IP, IP_ADD_MEMBERSHIP, OPT_GROUP, NULL },
	{ IPPROTO_IP, IP_DROP_MEMBERSHIP, OPT_GROUP, NULL },
	{ IPPROTO_IP, MCAST_JOIN_GROUP, OPT_MCAST, NULL },
	{ IPPROTO_IP, MCAST_LEAVE_GROUP, OPT_MCAST, NULL },
	{ IPPROTO_IP, IP_PKTINFO, OPT_PKTINFO, NULL },
	{ IPPROTO_IP, IP_FREEBIND, OPT_REOFFLOAD_ON, NULL },
	{ IPPROTO_IP, IP_TRANSPARENT, OPT_REOFFLOAD_ON, NULL },
	{ IPPROTO_IP, IP_ADD_SOURCE_MEMBERSHIP, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IP, IP_BLOCK_SOURCE, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IP, MCAST_JOIN_SOURCE_GROUP, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IP, MCAST_BLOCK_SOURCE, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IP, IP_MSFILTER, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IP, MCAST_MSFILTER, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IP, IP_RECVTTL, OPT_OS_ON, "IP_RECVTTL" },
	{ IPPROTO_IP, IP_RECVTOS, OPT_OS_ON, "IP_RECVTOS" },
	{ IPPROTO_IP, IP_RECVOPTS, OPT_OS_ON, "IP_RECVOPTS" },
	{ IPPROTO_IP, IP_RETOPTS, OPT_OS_ON, "IP_RETOPTS" },
	{ IPPROTO_IP, IP_RECVORIGDSTADDR, OPT_OS_ON, "IP_RECVORIGDSTADDR" },
	{ IPPROTO_IP, IP_RECVERR, OPT_OS_ON, "IP_RECVERR" },
	{ IPPROTO_IP, IP_CHECKSUM, OPT_OS_ON, "IP_CHECKSUM" },
	{ IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, OPT_GROUP, NULL },
	{ IPPROTO_IPV6, IPV6_DROP_MEMBERSHIP, OPT_GROUP, NULL },
	{ IPPROTO_IPV6, MCAST_JOIN_GROUP, OPT_MCAST, NULL },
	{ IPPROTO_IPV6, MCAST_LEAVE_GROUP, OPT_MCAST, NULL },
	{ IPPROTO_IPV6, IPV6_RECVPKTINFO, OPT_PKTINFO6, NULL },
	{ IPPROTO_IPV6, IPV6_FREEBIND, OPT_REOFFLOAD_ON, NULL },
	{ IPPROTO_IPV6, IPV6_TRANSPARENT, OPT_REOFFLOAD_ON, NULL },
	{ IPPROTO_IPV6, MCAST_JOIN_SOURCE_GROUP, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IPV6, MCAST_BLOCK_SOURCE, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IPV6, MCAST_MSFILTER, OPT_OS, "source-filtered multicast" },
	{ IPPROTO_IPV6, IPV6_RECVHOPLIMIT, OPT_OS_ON, "IPV6_RECVHOPLIMIT" },
	{ IPPROTO_IPV6, IPV6_RECVTCLASS, OPT_OS_ON, "IPV6_RECVTCLASS" },
	{ IPPROTO_IPV6, IPV6_RECVORIGDSTADDR, OPT_OS_ON, "IPV6_RECVORIGDSTADDR" },
	{ IPPROTO_IPV6, IPV6_RECVERR, OPT_OS_ON, "IPV6_RECVERR" },
	{ IPPROTO_IPV6, IPV6_RECVRTHDR, OPT_OS_ON, "IPV6_RECVRTHDR" },
	{ IPPROTO_IPV6, IPV6_RECVHOPOPTS, OPT_OS_ON, "IPV6_RECVHOPOPTS" },
	{ IPPROTO_IPV6, IPV6_RECVDSTOPTS, OPT_OS_ON, "IPV6_RECVDSTOPTS" },
	{ IPPROTO_IPV6, IPV6_RECVPATHMTU, OPT_OS_ON, "IPV6_RECVPATHMTU" },
};

static void opt_timestamp(struct vsock *vs, int name, bool on)
{
	if (on && !vconf.rx_timestamp) {
		vsock_to_os(vs, "SO_TIMESTAMP(NS) and the rings take no timestamps (VMAK_RX_TIMESTAMP=1 has them)");
		return;
	}
	if (name == SO_TIMESTAMP)
		vs->timestamp = on;
	else
		vs->timestampns = on;
}

static void sockopt_set(struct vsock *vs, int level, int name, const void *val,
			socklen_t len)
{
	char why[96];
	unsigned int i;
	bool on = opt_on(val, len);

	if (level == IPPROTO_UDP) {
		if (on)
			vsock_to_os(vs, "a UDP option (GRO, encapsulation, checksum coverage)");
		return;
	}
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (opts[i].level == level && opts[i].name == name)
			break;
	if (i == sizeof(opts) / sizeof(opts[0]))
		return;
	switch (opts[i].act) {
	case OPT_GROUP:
		opt_group(vs, level, name, val, len);
		break;
	case OPT_MCAST:
		opt_mcast(vs, name, val);
		break;
	case OPT_PKTINFO:
		vs->pktinfo = on;
		break;
	case OPT_PKTINFO6:
		vs->pktinfo6 = on;
		break;
	case OPT_TIMESTAMP:
		opt_timestamp(vs, name, on);
		break;
	case OPT_REOFFLOAD_ON:
		if (!on)
			break;
		/* fall through */
	case OPT_REOFFLOAD:
		vsock_offload(vs);	/* the module refuses freebind */
		break;
	case OPT_OS_ON:
		if (!on)
			break;
		/* fall through */
	case OPT_OS:
		snprintf(why, sizeof(why), "%s, which the rings do not give",
			 opts[i].why);
		vsock_to_os(vs, why);
		break;
	}
}

VMAK_API int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct vsock *vs;
	int rc, err;

	/* libvma's own option, on the sockets it would offload */
	if (level == SOL_SOCKET && name == VSO_RING_ALLOC_LOGIC && ACTIVE() &&
	    (vs = vfd_sock(fd))) {
		rc = vsock_ring_logic(vs, val, len);
		err = errno;
		vsock_release(vs);
		errno = err;
		return rc;
	}
	rc = vmak_sys_setsockopt(fd, level, name, val, len);
	err = errno;

	if (!rc && ACTIVE() && (vs = vfd_sock(fd))) {
		sockopt_set(vs, level, name, val, len);
		vsock_release(vs);
	}
	errno = err;
	return rc;
}

/* ---- receive ---- */

static ssize_t recv_iov(struct vsock *vs, struct iovec *iov, int iovcnt,
			int flags, struct sockaddr *sa, socklen_t *salen)
{
	struct msghdr msg = {
		.msg_iov = iov, .msg_iovlen = (size_t)iovcnt,
		.msg_name = sa, .msg_namelen = salen ? *salen : 0,
	};
	ssize_t r = vsock_recvmsg(vs, &msg, flags);

	if (r >= 0 && sa && salen)
		*salen = msg.msg_namelen;
	vsock_release(vs);
	return r;
}

VMAK_API ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
		 struct sockaddr *sa, socklen_t *salen)
{
	struct iovec iov = { buf, len };
	struct vsock *vs;

	if (!ACTIVE() || !(vs = vfd_sock(fd)))
		return vmak_sys_recvfrom(fd, buf, len, flags, sa, salen);
	return recv_iov(vs, &iov, 1, flags, sa, salen);
}

VMAK_API ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	struct iovec iov = { buf, len };
	struct vsock *vs;

	if (!ACTIVE() || !(vs = vfd_sock(fd)))
		return vmak_sys_recv(fd, buf, len, flags);
	return recv_iov(vs, &iov, 1, flags, NULL, NULL);
}

VMAK_API ssize_t read(int fd, void *buf, size_t len)
{
	struct iovec iov = { buf, len };
	struct vsock *vs;

	if (!ACTIVE() || !(vs = vfd_sock(fd)))
		return vmak_sys_read(fd, buf, len);
	return recv_iov(vs, &iov, 1, 0, NULL, NULL);
}

VMAK_API ssize_t readv(int fd, const struct iovec *iov, int n)
{
	struct vsock *vs;

	if (!ACTIVE() || !(vs = vfd_sock(fd)))
		return vmak_sys_readv(fd, iov, n);
	if (n < 0 || n > IOV_MAX) {
		vsock_release(vs);
		errno = EINVAL;
		return -1;
	}
	return recv_iov(vs, (struct iovec *)iov, n, 0, NULL, NULL);
}

VMAK_API ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct vsock *vs;
	ssize_t r;

	if (!ACTIVE() || !(vs = vfd_sock(fd)))
		return vmak_sys_recvmsg(fd, msg, flags);
	r = vsock_recvmsg(vs, msg, flags);
	vsock_release(vs);
	return r;
}

VMAK_API int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags,
	     struct timespec *t)
{
	struct vsock *vs;
	int r;

	if (!ACTIVE() || !(vs = vfd_sock(fd)))
		return vmak_sys_recvmmsg(fd, v, n, flags, t);
	r = vsock_recvmmsg(vs, v, n, flags, t);
	vsock_release(vs);
	return r;
}

/* _FORTIFY_SOURCE's checked forms */
VMAK_API ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	if (len > buflen)
		__chk_fail();
	return recv(fd, buf, len, flags);
}

VMAK_API ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen,
		       int flags, struct sockaddr *sa, socklen_t *salen)
{
	if (len > buflen)
		__chk_fail();
	return recvfrom(fd, buf, len, flags, sa, salen);
}

VMAK_API ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	if (len > buflen)
		__chk_fail();
	return read(fd, buf, len);
}

/* ---- send ---- */

/*
 * Through a TX ring, or (VSEND_OS) the kernel socket; a socket that got
 * its port from this kernel send is offloaded after it.
 */
static ssize_t send_msg(struct vsock *vs, int fd, const struct msghdr *msg,
			int flags)
{
	ssize_t r = vsock_sendmsg(vs, msg, flags);

	if (r == VSEND_OS) {
		r = vmak_sys_sendmsg(fd, msg, flags);
		if (r >= 0)
			vs->st->tx_os++;
		if (r >= 0 && !vs->tried && !vs->os_only)
			vsock_offload(vs);
	}
	vsock_release(vs);
	return r;
}

VMAK_API ssize_t sendto(int fd, const void *buf, size_t len, int flags,
			const struct sockaddr *sa, socklen_t salen)
{
	struct iovec iov = { (void *)buf, len };
	struct msghdr msg = { .msg_name = (void *)sa, .msg_namelen = salen,
			      .msg_iov = &iov, .msg_iovlen = 1 };
	struct vsock *vs;

	if (!ACTIVE() || !(vs = vfd_sock(fd)))
		return vmak_sys_sendto(fd, buf, len, flags, sa, salen);
	return send_msg(vs, fd, &msg, flags);
}

VMAK_API ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	struct iovec iov = { (void *)buf, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct vsock *vs;

	if (!ACTIVE() || !(vs = vfd_sock(fd)))
		return vmak_sys_send(fd, buf, len, flags);
	return send_msg(vs, fd, &msg, flags);
}

VMAK_API ssize_t write(int fd, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct vsock *vs;

	if (!ACTIVE() || !(vs = vfd_sock(fd)))
		return vmak_sys_write(fd, buf, len);
	return send_msg(vs, fd, &msg, 0);
}

VMAK_API ssize_t writev(int fd, const struct iovec *iov, int n)
{
	struct msghdr msg = { .msg_iov = (struct iovec *)iov };
	struct vsock *vs;

	if (!ACTIVE() || !(vs = vfd_sock(fd)))
		return vmak_sys_writev(fd, iov, n);
	if (n < 0 || n > IOV_MAX) {
		vsock_release(vs);
		return vmak_sys_writev(fd, iov, n);	/* its EINVAL */
	}
	msg.msg_iovlen = (size_t)n;
	return send_msg(vs, fd, &msg, 0);
}

VMAK_API ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct vsock *vs;

	if (!ACTIVE() || !(vs = vfd_sock(fd)))
		return vmak_sys_sendmsg(fd, msg, flags);
	return send_msg(vs, fd, msg, flags);
}

VMAK_API int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	struct vsock *vs;
	unsigned int i;
	ssize_t r;

	if (!ACTIVE() || !(vs = vfd_sock(fd)))
		return vmak_sys_sendmmsg(fd, v, n, flags);
	vsock_release(vs);
	if (n > UIO_MAXIOV)
		n = UIO_MAXIOV;
	for (i = 0; i < n; i++) {
		vs = vfd_sock(fd);
		if (!vs)
			return i ? (int)i : vmak_sys_sendmmsg(fd, v, n, flags);
		r = send_msg(vs, fd, &v[i].msg_hdr, flags);
		if (r < 0)
			return i ? (int)i : -1;
		v[i].msg_len = (unsigned int)r;
	}
	return (int)i;
}

/* ---- readiness ---- */

VMAK_API int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec ts, *tsp = NULL;

	if (!ACTIVE())
		return vmak_sys_poll(fds, n, timeout);
	if (timeout >= 0) {
		ts.tv_sec = timeout / 1000;
		ts.tv_nsec = (timeout % 1000) * 1000000L;
		tsp = &ts;
	}
	return vpoll(fds, n, tsp, NULL);
}

VMAK_API int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		__chk_fail();
	return poll(fds, n, timeout);
}

VMAK_API int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t,
	  const sigset_t *m)
{
	if (!ACTIVE())
		return vmak_sys_ppoll(fds, n, t, m);
	return vpoll(fds, n, t, m);
}

static bool sets_offloaded(int n, fd_set *r)
{
	int i;

	if (!r || n > FD_SETSIZE)
		return false;
	for (i = 0; i < n; i++)
		if (FD_ISSET(i, r) && vfd_kind(i) == VFD_SOCK)
			return true;	/* vpoll() takes its references */
	return false;
}

VMAK_API int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	struct timespec ts;
	int rc;

	if (!ACTIVE() || !sets_offloaded(n, r))
		return vmak_sys_select(n, r, w, e, tv);
	if (tv) {
		if (tv->tv_sec < 0 || tv->tv_usec < 0) {
			errno = EINVAL;
			return -1;
		}
		ts.tv_sec = tv->tv_sec;
		ts.tv_nsec = tv->tv_usec * 1000L;
	}
	rc = vselect(n, r, w, e, tv ? &ts : NULL, NULL, true);
	if (tv) {
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return rc;
}

VMAK_API int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *t,
	    const sigset_t *m)
{
	struct timespec ts;

	if (!ACTIVE() || !sets_offloaded(n, r))
		return vmak_sys_pselect(n, r, w, e, t, m);
	if (t)
		ts = *t;
	return vselect(n, r, w, e, t ? &ts : NULL, m, false);
}

VMAK_API int epoll_ctl(int ep, int op, int fd, struct epoll_event *ev)
{
	if (!ACTIVE())
		return vmak_sys_epoll_ctl(ep, op, fd, ev);
	return vepoll_ctl(ep, op, fd, ev);
}

VMAK_API int epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout)
{
	struct vepoll *ep;

	if (!ACTIVE() || !(ep = vfd_epoll(epfd)))
		return vmak_sys_epoll_wait(epfd, ev, n, timeout);
	return vepoll_wait(ep, ev, n, timeout, NULL);
}

VMAK_API int epoll_pwait(int epfd, struct epoll_event *ev, int n, int timeout,
		const sigset_t *m)
{
	struct vepoll *ep;

	if (!ACTIVE() || !(ep = vfd_epoll(epfd)))
		return vmak_sys_epoll_pwait(epfd, ev, n, timeout, m);
	return vepoll_wait(ep, ev, n, timeout, m);
}

/*
 * Signal handlers go behind the library's trampolines (lib/vma/sig.c),
 * from the first one on, offloaded sockets or not: a receive must know
 * whether the handler that woke it had SA_RESTART.
 */
int __sigaction(int sig, const struct sigaction *act, struct sigaction *oact);
sighandler_t bsd_signal(int sig, sighandler_t fn);

VMAK_API int sigaction(int sig, const struct sigaction *act,
		       struct sigaction *oact)
{
	return vsig_action(sig, act, oact);
}

VMAK_API int __sigaction(int sig, const struct sigaction *act,
			 struct sigaction *oact)
{
	return vsig_action(sig, act, oact);
}

VMAK_API sighandler_t signal(int sig, sighandler_t fn)
{
	return vsig_signal(sig, fn);
}

VMAK_API sighandler_t bsd_signal(int sig, sighandler_t fn)
{
	return vsig_signal(sig, fn);
}

VMAK_API sighandler_t ssignal(int sig, sighandler_t fn)
{
	return vsig_signal(sig, fn);
}

VMAK_API sighandler_t sysv_signal(int sig, sighandler_t fn)
{
	return vsig_sysv_signal(sig, fn);
}

VMAK_API sighandler_t __sysv_signal(int sig, sighandler_t fn)
{
	return vsig_sysv_signal(sig, fn);
}

VMAK_API sighandler_t sigset(int sig, sighandler_t fn)
{
	return vsig_sigset(sig, fn);
}

VMAK_API int siginterrupt(int sig, int flag)
{
	return vsig_siginterrupt(sig, flag);
}
