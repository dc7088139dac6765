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
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sys.h"
#include "vma.h"
#include "fd.h"
#include "sig.h"
#include "udp.h"
#include "iomux.h"
#include "api.h"

void __chk_fail(void) __attribute__((noreturn));
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen,
		       int flags, struct sockaddr *sa, socklen_t *salen);
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *t,
		const sigset_t *m, size_t fdslen);
int fcntl64(int fd, int cmd, ...);
int close_range(unsigned int lo, unsigned int hi, int flags);
void closefrom(int lo);
int epoll_pwait2(int epfd, struct epoll_event *ev, int n,
		 const struct timespec *t, const sigset_t *m);

/* Resolve the C library's calls while the process is still one thread. */
__attribute__((constructor)) static void preload_init(void)
{
	int err = errno;

	vmak_sys_close(-1);
	errno = err;	/* the program sees no trace of it */
}

/* ---- entering the library ---- */

/*
 * Mark the thread inside the library; false if it is already (a handler
 * that interrupted the library), when no lock of ours may be taken. What
 * such handlers left to do with the fd table is done here.
 */
static inline bool mark(void)
{
	if (!vsig_enter())
		return false;
	if (__atomic_load_n(&vfd_late, __ATOMIC_ACQUIRE))
		vfd_late_drain();
	return true;
}

static inline void unmark(void)
{
	vsig_leave();
}

/* The object behind fd, the thread marked inside; or NULL. */
static inline struct vfd *enter(int fd)
{
	struct vfd *f;

	if (!vfd_any() || vsig_seen.depth)
		return NULL;
	f = vfd_get(fd);
	if (f && !mark()) {
		vfd_put(f);
		return NULL;
	}
	return f;
}

/* Leave with the call's result: errno as it was unless it failed. */
static inline void leave(struct vfd *f, int err, long rc)
{
	vfd_put(f);
	unmark();
	if (rc >= 0)
		errno = err;
}

/* For calls not on one fd (poll, select): false if re-entered. */
static inline bool enter_any(void)
{
	return vfd_any() && mark();
}

static inline void leave_any(int err, long rc)
{
	unmark();
	if (rc >= 0)
		errno = err;
}

/*
 * A forwarder's body: the op when the object has it, else the C library
 * (RAW). Declares rc of TYPE.
 */
#define FORWARD(TYPE, FD, OP, OPARGS, RAW)				\
	struct vfd *f = enter(FD);					\
	int saved = errno;						\
	TYPE rc;							\
									\
	if (!f)								\
		return RAW;						\
	rc = f->ops->OP ? f->ops->OP OPARGS : RAW;			\
	leave(f, saved, (long)rc);					\
	return rc

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

/* nfd is a new copy of fd (or the call failed) */
static int copied(int fd, int nfd)
{
	int err = errno;

	if (nfd < 0 || (!vfd_stale(fd) && !vfd_stale(nfd)) || vproc_vforked())
		return nfd;
	if (mark()) {
		vfd_dup(fd, nfd);
		unmark();
	} else {
		vfd_forget_nolock(nfd);	/* in a handler: a kernel copy */
	}
	errno = err;
	return nfd;
}

static bool is_dup(int cmd)
{
	return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC;
}

VMAK_API int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	if (is_dup(cmd)) {
		return copied(fd, vmak_sys_fcntl(fd, cmd, arg));
	}
	{
		FORWARD(int, fd, fcntl, (f, fd, cmd, arg),
			vmak_sys_fcntl(fd, cmd, arg));
	}
}

VMAK_API int fcntl64(int fd, int cmd, ...) __attribute__((alias("fcntl")));

/* ---- an fd's end, and copies ---- */

VMAK_API int close(int fd)
{
	struct vfd *f;
	int rc, err;

	if (!vfd_any())
		return vmak_sys_close(fd);
	if (vfd_internal(fd)) {
		errno = EBADF;	/* ours look closed, as a free fd does */
		return -1;
	}
	if (!vfd_stale(fd) || vproc_vforked())
		return vmak_sys_close(fd);
	if (!mark()) {
		rc = vmak_sys_close(fd);
		err = errno;
		if (rc == 0 || err != EBADF)
			vfd_forget_nolock(fd);
		errno = err;
		return rc;
	}
	f = vfd_closing(fd);
	rc = vmak_sys_close(fd);
	err = errno;
	/* Linux frees the number even when close() fails, but for EBADF */
	if (f)
		vfd_closed(fd, f, rc < 0 && err == EBADF ? -1 : 0);
	unmark();
	errno = err;
	return rc;
}

VMAK_API int dup(int fd)
{
	return copied(fd, vmak_sys_dup(fd));
}

/*
 * nfd becomes a copy of fd: what nfd was is closed, but only if the call
 * succeeds (a failed dup3() leaves nfd as it was).
 */
static int dup_onto(int fd, int nfd, int flags, bool three)
{
	struct vfd *old = NULL;
	int rc, err;

	if ((!vfd_stale(fd) && !vfd_stale(nfd)) || vproc_vforked())
		return three ? vmak_sys_dup3(fd, nfd, flags) :
			       vmak_sys_dup2(fd, nfd);
	if (vfd_internal(nfd)) {
		errno = EBADF;
		return -1;
	}
	if (!mark()) {
		rc = three ? vmak_sys_dup3(fd, nfd, flags) :
			     vmak_sys_dup2(fd, nfd);
		err = errno;
		if (rc >= 0 && fd != nfd)
			vfd_forget_nolock(nfd);
		errno = err;
		return rc;
	}
	if (fd != nfd)
		old = vfd_closing(nfd);
	rc = three ? vmak_sys_dup3(fd, nfd, flags) : vmak_sys_dup2(fd, nfd);
	err = errno;
	if (old)
		vfd_closed(nfd, old, rc);
	if (rc >= 0 && fd != nfd)
		vfd_dup(fd, nfd);
	unmark();
	errno = err;
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

/*
 * Close a range, the library's own fds left out (they look closed to the
 * program already): the range is closed piece by piece around them.
 */
/*
 * close_range() in a handler that interrupted the library: the same pieces
 * around our fds, found without a lock; the objects closed hear of it later.
 */
static int close_range_nolock(unsigned int lo, unsigned int hi, int flags)
{
	unsigned int from = lo, to, fd;
	int m;

	for (;;) {
		m = vfd_next_internal(from, hi);
		to = m < 0 ? hi : (unsigned int)m - 1;
		if (m < 0 || (unsigned int)m > from) {
			if (vmak_sys_close_range(from, to, flags))
				return -1;
			if (!(flags & CLOSE_RANGE_CLOEXEC))
				for (fd = from; (fd = vfd_next_stale(fd, to)) !=
						~0U; fd++) {
					vfd_forget_nolock((int)fd);
					if (fd == to)
						break;
				}
		}
		if (m < 0 || (unsigned int)m == hi)
			return 0;
		from = (unsigned int)m + 1;
	}
}

VMAK_API int close_range(unsigned int lo, unsigned int hi, int flags)
{
	int *objs = NULL, *mine = NULL, nobj, nmine, i, rc = 0, err = 0;
	struct vfd **f = NULL;
	unsigned int from;

	if (!vfd_any() || vproc_vforked() || lo > hi)
		return vmak_sys_close_range(lo, hi, flags);
	if (vsig_seen.depth)
		return close_range_nolock(lo, hi, flags);
	nobj = vfd_scan(lo, hi, false, NULL, 0);
	nmine = vfd_scan(lo, hi, true, NULL, 0);
	if (!nobj && !nmine)
		return vmak_sys_close_range(lo, hi, flags);
	objs = calloc((size_t)nobj + 1, sizeof(*objs));
	mine = calloc((size_t)nmine + 1, sizeof(*mine));
	f = calloc((size_t)nobj + 1, sizeof(*f));
	if (!objs || !mine || !f) {
		free(objs);
		free(mine);
		free(f);
		errno = ENOMEM;
		return -1;
	}
	nobj = vfd_scan(lo, hi, false, objs, nobj);
	nmine = vfd_scan(lo, hi, true, mine, nmine);
	if (!mark()) {	/* cannot be: depth was 0 above, on this thread */
		rc = -1;
		err = EINTR;
		goto out;
	}
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		for (i = 0; i < nobj; i++)
			f[i] = vfd_closing(objs[i]);
	for (i = 0, from = lo; rc == 0 && i <= nmine; i++) {
		unsigned int to = i < nmine ? (unsigned int)mine[i] - 1 : hi;

		if (i < nmine && (unsigned int)mine[i] == from) {
			from++;
			continue;
		}
		if (from <= to && (rc = vmak_sys_close_range(from, to, flags)))
			err = errno;
		if (i < nmine)
			from = (unsigned int)mine[i] + 1;
	}
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		for (i = 0; i < nobj; i++)
			vfd_closed(objs[i], f[i], rc);
	unmark();
out:
	free(objs);
	free(mine);
	free(f);
	if (rc)
		errno = err;
	return rc;
}

VMAK_API void closefrom(int lo)
{
	int err = errno;

	if (lo < 0)
		lo = 0;
	close_range((unsigned int)lo, ~0U, 0);
	errno = err;
}

VMAK_API int fclose(FILE *fp)
{
	struct vfd *f = NULL;
	int fd, rc, err;

	if (!vfd_any() || !fp)
		return vmak_sys_fclose(fp);
	fd = fileno(fp);
	if (fd < 0 || !vfd_stale(fd) || vproc_vforked())
		return vmak_sys_fclose(fp);
	if (!mark()) {
		rc = vmak_sys_fclose(fp);
		err = errno;
		vfd_forget_nolock(fd);
		errno = err;
		return rc;
	}
	f = vfd_closing(fd);
	rc = vmak_sys_fclose(fp);
	err = errno;
	if (f)
		vfd_closed(fd, f, 0);
	unmark();
	errno = err;
	return rc;
}

/*
 * A number the kernel hands out has no past with us: a slot left by an fd
 * closed where we could not see it (a raw system call) is forgotten.
 */
static int fresh(int fd)
{
	int err = errno;

	if (fd >= 0 && vfd_stale(fd) && !vproc_vforked()) {
		if (mark()) {
			vfd_fresh(fd);
			unmark();
		} else {
			vfd_forget_nolock(fd);
		}
		errno = err;
	}
	return fd;
}

static int fresh2(int rc, const int *fds)
{
	if (!rc) {
		fresh(fds[0]);
		fresh(fds[1]);
	}
	return rc;
}

static mode_t open_mode(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ?
	       (mode_t)va_arg(ap, int) : 0;
}

VMAK_API int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = open_mode(flags, ap);
	va_end(ap);
	return fresh(vmak_sys_open(path, flags, m));
}

VMAK_API int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = open_mode(flags, ap);
	va_end(ap);
	return fresh(vmak_sys_open64(path, flags, m));
}

VMAK_API int openat(int dir, const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = open_mode(flags, ap);
	va_end(ap);
	return fresh(vmak_sys_openat(dir, path, flags, m));
}

VMAK_API int openat64(int dir, const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = open_mode(flags, ap);
	va_end(ap);
	return fresh(vmak_sys_openat64(dir, path, flags, m));
}

VMAK_API int creat(const char *path, mode_t m)
{
	return fresh(vmak_sys_creat(path, m));
}

VMAK_API int creat64(const char *path, mode_t m)
{
	return fresh(vmak_sys_creat64(path, m));
}

VMAK_API int pipe(int p[2])
{
	return fresh2(vmak_sys_pipe(p), p);
}

VMAK_API int pipe2(int p[2], int flags)
{
	return fresh2(vmak_sys_pipe2(p, flags), p);
}

VMAK_API int socketpair(int d, int t, int p, int sv[2])
{
	return fresh2(vmak_sys_socketpair(d, t, p, sv), sv);
}

VMAK_API int accept(int fd, struct sockaddr *sa, socklen_t *len)
{
	return fresh(vmak_sys_accept(fd, sa, len));
}

VMAK_API int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
	return fresh(vmak_sys_accept4(fd, sa, len, flags));
}

VMAK_API int eventfd(unsigned int v, int flags)
{
	return fresh(vmak_sys_eventfd(v, flags));
}

/*
 * socketXtreme mode: an epoll set is tracked from its creation, so that
 * its completions can name every fd (xtreme.c).
 */
static int new_set(int fd)
{
	static int xt = -1;
	const char *v;
	int err = errno;

	fresh(fd);
	if (xt < 0) {	/* before the configuration is read: the variable */
		v = secure_getenv("VMAK_SOCKETXTREME");
		if (!v)
			v = secure_getenv("VMA_SOCKETXTREME");
		xt = v && (!strcmp(v, "1") || !strcasecmp(v, "on") ||
			   !strcasecmp(v, "yes") || !strcasecmp(v, "true"));
	}
	if (fd >= 0 && xt && !vproc_vforked() && mark()) {
		if (vproc_init() && vconf.socketxtreme)
			vepoll_track(fd);
		unmark();
	}
	errno = err;
	return fd;
}

VMAK_API int epoll_create(int size)
{
	return new_set(vmak_sys_epoll_create(size));
}

VMAK_API int epoll_create1(int flags)
{
	return new_set(vmak_sys_epoll_create1(flags));
}

VMAK_API int memfd_create(const char *name, unsigned int flags)
{
	return fresh(vmak_sys_memfd_create(name, flags));
}

VMAK_API int timerfd_create(int clock, int flags)
{
	return fresh(vmak_sys_timerfd_create(clock, flags));
}

VMAK_API int signalfd(int fd, const sigset_t *m, int flags)
{
	return fresh(vmak_sys_signalfd(fd, m, flags));
}

VMAK_API int inotify_init(void)
{
	return fresh(vmak_sys_inotify_init());
}

VMAK_API int inotify_init1(int flags)
{
	return fresh(vmak_sys_inotify_init1(flags));
}

/* ---- processes ---- */

/*
 * daemon(): the parent exits at once, so the child's sockets take rules
 * of their own (the parent's rings die with it).
 */
VMAK_API int daemon(int nochdir, int noclose)
{
	int rc = vmak_sys_daemon(nochdir, noclose), err = errno;

	if (!rc && vfd_any() && mark()) {
		vudp_after_daemon();
		unmark();
	}
	errno = err;
	return rc;
}

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

VMAK_API ssize_t sendto(int fd, const void *buf, size_t len, int flags,
			const struct sockaddr *sa, socklen_t salen)
{
	IOV_MSG(buf, len);

	msg.msg_name = (void *)sa;
	msg.msg_namelen = salen;
	{
		FORWARD(ssize_t, fd, sendmsg, (f, fd, &msg, flags),
			vmak_sys_sendto(fd, buf, len, flags, sa, salen));
	}
}

VMAK_API ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	IOV_MSG(buf, len);

	FORWARD(ssize_t, fd, sendmsg, (f, fd, &msg, flags),
		vmak_sys_send(fd, buf, len, flags));
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
		vmak_sys_sendmsg(fd, msg, flags));
}

VMAK_API int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	FORWARD(int, fd, sendmmsg, (f, fd, v, n, flags),
		vmak_sys_sendmmsg(fd, v, n, flags));
}

/* ---- readiness ---- */

VMAK_API int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t,
		   const sigset_t *m)
{
	int saved = errno, rc;

	if (!enter_any())
		return vmak_sys_ppoll(fds, n, t, m);
	if (!vpoll_ours(fds, n)) {
		leave_any(saved, 0);
		return vmak_sys_ppoll(fds, n, t, m);
	}
	rc = vpoll(fds, n, t, m);
	leave_any(saved, rc);
	return rc;
}

VMAK_API int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec ts;

	if (!vfd_any())
		return vmak_sys_poll(fds, n, timeout);
	if (timeout < 0)
		return ppoll(fds, n, NULL, NULL);
	ts.tv_sec = timeout / 1000;
	ts.tv_nsec = (timeout % 1000) * 1000000L;
	return ppoll(fds, n, &ts, NULL);
}

VMAK_API int __poll_chk(struct pollfd *fds, nfds_t n, int timeout,
			size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		__chk_fail();
	return poll(fds, n, timeout);
}

VMAK_API int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *t,
			 const sigset_t *m, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		__chk_fail();
	return ppoll(fds, n, t, m);
}

static int select_any(int n, fd_set *r, fd_set *w, fd_set *e,
		      struct timespec *ts, const sigset_t *m, bool update,
		      bool *ours)
{
	int saved = errno, rc;

	*ours = false;
	if (n < 0 || !enter_any())
		return 0;
	if (!vselect_ours(n, r)) {
		leave_any(saved, 0);
		return 0;
	}
	*ours = true;
	rc = vselect(n, r, w, e, ts, m, update);
	leave_any(saved, rc);
	return rc;
}

VMAK_API int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	struct timespec ts;
	bool ours;
	int rc;

	if (!vfd_any())
		return vmak_sys_select(n, r, w, e, tv);
	if (tv) {
		if (tv->tv_sec < 0 || tv->tv_usec < 0)
			return vmak_sys_select(n, r, w, e, tv);	/* EINVAL */
		ts.tv_sec = tv->tv_sec + tv->tv_usec / 1000000;
		ts.tv_nsec = tv->tv_usec % 1000000 * 1000L;
	}
	rc = select_any(n, r, w, e, tv ? &ts : NULL, NULL, true, &ours);
	if (!ours)
		return vmak_sys_select(n, r, w, e, tv);
	if (tv) {
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return rc;
}

VMAK_API int pselect(int n, fd_set *r, fd_set *w, fd_set *e,
		     const struct timespec *t, const sigset_t *m)
{
	struct timespec ts;
	bool ours;
	int rc;

	if (!vfd_any())
		return vmak_sys_pselect(n, r, w, e, t, m);
	if (t) {
		if (t->tv_sec < 0 || t->tv_nsec < 0 || t->tv_nsec >= 1000000000L)
			return vmak_sys_pselect(n, r, w, e, t, m);	/* EINVAL */
		ts = *t;
	}
	rc = select_any(n, r, w, e, t ? &ts : NULL, m, false, &ours);
	if (!ours)
		return vmak_sys_pselect(n, r, w, e, t, m);
	return rc;
}

VMAK_API int epoll_ctl(int ep, int op, int fd, struct epoll_event *ev)
{
	int saved = errno, rc;

	if (!vfd_stale(fd) && !vfd_stale(ep))
		return vmak_sys_epoll_ctl(ep, op, fd, ev);
	if (!enter_any())
		return vmak_sys_epoll_ctl(ep, op, fd, ev);
	if (vproc_vforked()) {
		leave_any(saved, 0);
		return vmak_sys_epoll_ctl(ep, op, fd, ev);
	}
	rc = vepoll_ctl(ep, op, fd, ev);
	leave_any(saved, rc);
	return rc;
}

VMAK_API int epoll_pwait(int epfd, struct epoll_event *ev, int n, int timeout,
			 const sigset_t *m)
{
	FORWARD(int, epfd, epoll_wait, (f, ev, n, vdeadline_ms(timeout), m),
		vmak_sys_epoll_pwait(epfd, ev, n, timeout, m));
}

VMAK_API int epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout)
{
	if (!vfd_any())
		return vmak_sys_epoll_wait(epfd, ev, n, timeout);
	return epoll_pwait(epfd, ev, n, timeout, NULL);
}

VMAK_API int epoll_pwait2(int epfd, struct epoll_event *ev, int n,
			  const struct timespec *t, const sigset_t *m)
{
	if (t && (t->tv_sec < 0 || t->tv_nsec < 0 || t->tv_nsec >= 1000000000L))
		return vmak_sys_epoll_pwait2(epfd, ev, n, t, m);	/* EINVAL */
	{
		FORWARD(int, epfd, epoll_wait, (f, ev, n, vdeadline_ts(t), m),
			vmak_sys_epoll_pwait2(epfd, ev, n, t, m));
	}
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
