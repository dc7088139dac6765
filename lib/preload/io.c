// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The receive and send calls, interposed: forwarders to the fd's op.
 */
#include "entry.h"

/* ---- receive ---- */

#define IOV_MSG(buf, len)						\
	struct iovec iov = { (void *)(buf), (len) };			\
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 }

VMAK_API ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
			  struct sockaddr *sa, socklen_t *salen)
{
	IOV_MSG(buf, len);
	struct vfd *f = enter(fd);
	struct sockaddr_storage from;
	int saved = errno;
	ssize_t r;

	if (!f)
		return vmak_sys_recvfrom(fd, buf, len, flags, sa, salen);
	if (!f->ops->recvmsg) {
		leave(f, saved, 0);
		return vmak_sys_recvfrom(fd, buf, len, flags, sa, salen);
	}
	/* the name into a buffer of ours, then as move_addr_to_user() */
	msg.msg_name = sa ? &from : NULL;
	msg.msg_namelen = sa ? sizeof(from) : 0;
	r = f->ops->recvmsg(f, fd, &msg, flags);
	if (r >= 0 && sa) {
		/* refused after the datagram was taken, as the kernel does */
		if (!salen || (int)*salen < 0) {
			errno = !salen ? EFAULT : EINVAL;
			r = -1;
		} else {
			memcpy(sa, &from, *salen < msg.msg_namelen ? *salen :
			       msg.msg_namelen);
			*salen = msg.msg_namelen;	/* before truncation */
		}
	}
	leave(f, saved, r);
	return r;
}

VMAK_API ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	IOV_MSG(buf, len);

	FORWARD(ssize_t, fd, recvmsg, (f, fd, &msg, flags),
		vmak_sys_recv(fd, buf, len, flags));
}

/* read() of nothing returns 0 and takes nothing, as the kernel's does. */
VMAK_API ssize_t read(int fd, void *buf, size_t len)
{
	IOV_MSG(buf, len);

	if (!len)
		return vmak_sys_read(fd, buf, len);
	{
		FORWARD(ssize_t, fd, recvmsg, (f, fd, &msg, 0),
			vmak_sys_read(fd, buf, len));
	}
}

static size_t iov_total(const struct iovec *iov, int n)
{
	size_t total = 0;
	int i;

	for (i = 0; i < n; i++)
		total += iov[i].iov_len;
	return total;
}

VMAK_API ssize_t readv(int fd, const struct iovec *iov, int n)
{
	struct msghdr msg = { .msg_iov = (struct iovec *)iov,
			      .msg_iovlen = n > 0 ? (size_t)n : 0 };

	/* its own EINVAL, and the empty read that takes nothing */
	if (!vfd_any() || n <= 0 || n > IOV_MAX || !iov_total(iov, n))
		return vmak_sys_readv(fd, iov, n);
	{
		FORWARD(ssize_t, fd, recvmsg, (f, fd, &msg, 0),
			vmak_sys_readv(fd, iov, n));
	}
}

VMAK_API ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	FORWARD(ssize_t, fd, recvmsg, (f, fd, msg, flags),
		vmak_sys_recvmsg(fd, msg, flags));
}

VMAK_API int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags,
		      struct timespec *t)
{
	FORWARD(int, fd, recvmmsg, (f, fd, v, n, flags, t),
		vmak_sys_recvmmsg(fd, v, n, flags, t));
}

/* _FORTIFY_SOURCE's checked forms */
VMAK_API ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen,
			    int flags)
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
 * libvma's dummy send (VMA_SND_FLAGS_DUMMY, MSG_SYN, which no Linux send
 * path uses) on an fd that is not an offloaded socket: EINVAL, as
 * libvma's interposers answer, never the bytes on the wire (a TCP
 * connection warmed with it would carry them).
 */
static ssize_t dummy_refused(void)
{
	errno = EINVAL;
	return -1;
}

#define NOT_DUMMY(flags, call) \
	((flags) & VMA_SND_FLAGS_DUMMY ? dummy_refused() : (call))

VMAK_API ssize_t sendto(int fd, const void *buf, size_t len, int flags,
			const struct sockaddr *sa, socklen_t salen)
{
	IOV_MSG(buf, len);

	msg.msg_name = (void *)sa;
	msg.msg_namelen = salen;
	{
		FORWARD(ssize_t, fd, sendmsg, (f, fd, &msg, flags),
			NOT_DUMMY(flags, vmak_sys_sendto(fd, buf, len, flags,
							 sa, salen)));
	}
}

VMAK_API ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	IOV_MSG(buf, len);

	FORWARD(ssize_t, fd, sendmsg, (f, fd, &msg, flags),
		NOT_DUMMY(flags, vmak_sys_send(fd, buf, len, flags)));
}

VMAK_API ssize_t write(int fd, const void *buf, size_t len)
{
	IOV_MSG(buf, len);

	FORWARD(ssize_t, fd, sendmsg, (f, fd, &msg, 0),
		vmak_sys_write(fd, buf, len));
}

VMAK_API ssize_t writev(int fd, const struct iovec *iov, int n)
{
	struct msghdr msg = { .msg_iov = (struct iovec *)iov,
			      .msg_iovlen = n > 0 ? (size_t)n : 0 };

	/* its EINVAL, and its 0 for nothing: vfs_writev() sends no datagram */
	if (!vfd_any() || n < 0 || n > IOV_MAX || !iov_total(iov, n))
		return vmak_sys_writev(fd, iov, n);
	{
		FORWARD(ssize_t, fd, sendmsg, (f, fd, &msg, 0),
			vmak_sys_writev(fd, iov, n));
	}
}

VMAK_API ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	FORWARD(ssize_t, fd, sendmsg, (f, fd, msg, flags),
		NOT_DUMMY(flags, vmak_sys_sendmsg(fd, msg, flags)));
}

VMAK_API int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	FORWARD(int, fd, sendmmsg, (f, fd, v, n, flags),
		(int)NOT_DUMMY(flags, vmak_sys_sendmmsg(fd, v, n, flags)));
}
