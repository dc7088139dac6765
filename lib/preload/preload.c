// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The C library's calls, interposed. Each is a forwarder: it looks the fd
 * up in the table (lib/vma/fd.h), calls the object's op, drops the
 * reference; or, for any fd that is not one of ours, calls the C library
 * at once. Until the process has an object, one load and one branch are
 * all a call costs; after, a lookup in the table. Policy lives below,
 * never here.
 *
 * Every forwarder that reaches an object:
 *  - marks the thread as inside the library: a signal handler that
 *    interrupts us and calls an interposer goes straight to the C library
 *    instead of waiting for a lock its own thread holds;
 *  - keeps errno as it was when the call succeeds (only a failure sets
 *    it, as with the C library's own calls).
 *
 * Calls that change what an fd is (close, dup2, close_range, socket,
 * epoll_ctl...) also pass straight through in a vfork() child, which runs
 * on its parent's memory (and so on its parent's fd table).
 */
#include "entry.h"

/* Resolve the C library's calls while the process is still one thread. */
__attribute__((constructor)) static void preload_init(void)
{
	int err = errno;

	vmak_sys_close(-1);
	errno = err;	/* the program sees no trace of it */
}

/* ---- sockets ---- */

VMAK_API int socket(int domain, int type, int protocol)
{
	int fd = vmak_sys_socket(domain, type, protocol), err = errno;

	bool udp = (domain == AF_INET || domain == AF_INET6) &&
		   (type & 0xf) == SOCK_DGRAM &&
		   (protocol == 0 || protocol == IPPROTO_UDP);

	if (fd < 0)
		return fd;
	/* nothing to do (no module, no stale slot): no more system calls */
	if (!vfd_stale(fd) &&
	    !(udp && !vsig_seen.depth && vproc_init() && vproc_offload_here()))
		return fd;
	if (vproc_vforked())
		return fd;
	if (!mark()) {
		vfd_forget_nolock(fd);	/* in a handler: a kernel socket */
		errno = err;
		return fd;
	}
	vfd_fresh(fd);
	if (udp && vproc_init() && vproc_offload_here())
		vudp_new(fd, domain, type & SOCK_NONBLOCK);
	unmark();
	errno = err;
	return fd;
}

VMAK_API int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	FORWARD(int, fd, bind, (f, fd, sa, len), vmak_sys_bind(fd, sa, len));
}

VMAK_API int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	FORWARD(int, fd, connect, (f, fd, sa, len),
		vmak_sys_connect(fd, sa, len));
}

VMAK_API int setsockopt(int fd, int level, int name, const void *val,
			socklen_t len)
{
	struct vfd *f;
	int saved = errno, rc;

	if (level == SOL_SOCKET && name == SO_VMA_USER_DATA &&
	    !vfd_stale(fd) && vproc_init() && mark()) {
		rc = vplain_user_data(fd, val, len);
		unmark();
		return rc;
	}
	f = enter(fd);
	if (!f)
		return vmak_sys_setsockopt(fd, level, name, val, len);
	rc = f->ops->setsockopt ? f->ops->setsockopt(f, fd, level, name, val, len) :
				  vmak_sys_setsockopt(fd, level, name, val, len);
	leave(f, saved, rc);
	return rc;
}

/*
 * vma_get_api(): getsockopt(-1, SOL_SOCKET, SO_VMA_GET_API) with room for
 * a pointer gets the extra API's table, as from libvma; with less room it
 * is an ordinary call on fd -1 (EBADF), as in libvma.
 */
VMAK_API int getsockopt(int fd, int level, int name, void *val,
			socklen_t *len)
{
	if (fd == -1 && level == SOL_SOCKET && name == SO_VMA_GET_API && val &&
	    len && *len >= sizeof(struct vma_api_t *)) {
		*(struct vma_api_t **)val = vapi_get();
		*len = sizeof(struct vma_api_t *);
		return 0;
	}
	{
		FORWARD(int, fd, getsockopt, (f, fd, level, name, val, len),
			vmak_sys_getsockopt(fd, level, name, val, len));
	}
}

VMAK_API int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	long arg;

	va_start(ap, req);
	arg = va_arg(ap, long);
	va_end(ap);
	{
		FORWARD(int, fd, ioctl, (f, fd, req, arg),
			vmak_sys_ioctl(fd, req, arg));
	}
}
