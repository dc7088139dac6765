/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The C library's own socket calls, for every layer below the libc
 * interposition (lib/preload/).
 *
 * libvmak.so defines socket(), setsockopt(), close() and the rest of the
 * calls it offloads; a call to one of those names from inside the library
 * would come back into the interposer, take its locks again and recurse.
 * So no file outside lib/preload/ calls these names: it calls vmak_sys_*,
 * which reach the next definition after libvmak (the C library's), found
 * once with dlsym(RTLD_NEXT). In a program linked with the native archive
 * alone (vmakctl, the tests) that is the C library too.
 *
 * `make check-layers` fails when an object below lib/preload/ references
 * any name listed here. libmnl, a library of its own, calls the public
 * names for its netlink sockets; the interposer passes those through.
 */
#ifndef _VMAK_SYS_H
#define _VMAK_SYS_H

#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "internal.h"

/* X(return type, name, parameters, arguments) */
#define VMAK_SYS_CALLS(X)						\
	X(int, socket, (int domain, int type, int protocol),		\
	  (domain, type, protocol))					\
	X(int, bind, (int fd, const struct sockaddr *sa, socklen_t len), \
	  (fd, sa, len))						\
	X(int, connect, (int fd, const struct sockaddr *sa, socklen_t len), \
	  (fd, sa, len))						\
	X(int, close, (int fd), (fd))					\
	X(int, dup, (int fd), (fd))					\
	X(int, dup2, (int fd, int nfd), (fd, nfd))			\
	X(int, dup3, (int fd, int nfd, int flags), (fd, nfd, flags))	\
	X(int, setsockopt, (int fd, int level, int name, const void *val, \
			    socklen_t len), (fd, level, name, val, len)) \
	X(int, getsockopt, (int fd, int level, int name, void *val,	\
			    socklen_t *len), (fd, level, name, val, len)) \
	X(ssize_t, read, (int fd, void *buf, size_t len), (fd, buf, len)) \
	X(ssize_t, readv, (int fd, const struct iovec *iov, int n),	\
	  (fd, iov, n))							\
	X(ssize_t, write, (int fd, const void *buf, size_t len),	\
	  (fd, buf, len))						\
	X(ssize_t, writev, (int fd, const struct iovec *iov, int n),	\
	  (fd, iov, n))							\
	X(ssize_t, send, (int fd, const void *buf, size_t len, int flags), \
	  (fd, buf, len, flags))					\
	X(ssize_t, sendto, (int fd, const void *buf, size_t len, int flags, \
			    const struct sockaddr *sa, socklen_t salen), \
	  (fd, buf, len, flags, sa, salen))				\
	X(ssize_t, sendmsg, (int fd, const struct msghdr *msg, int flags), \
	  (fd, msg, flags))						\
	X(int, sendmmsg, (int fd, struct mmsghdr *v, unsigned int n,	\
			  int flags), (fd, v, n, flags))		\
	X(ssize_t, recv, (int fd, void *buf, size_t len, int flags),	\
	  (fd, buf, len, flags))					\
	X(ssize_t, recvfrom, (int fd, void *buf, size_t len, int flags, \
			      struct sockaddr *sa, socklen_t *salen),	\
	  (fd, buf, len, flags, sa, salen))				\
	X(ssize_t, recvmsg, (int fd, struct msghdr *msg, int flags),	\
	  (fd, msg, flags))						\
	X(int, recvmmsg, (int fd, struct mmsghdr *v, unsigned int n,	\
			  int flags, struct timespec *t),		\
	  (fd, v, n, flags, t))						\
	X(int, poll, (struct pollfd *fds, nfds_t n, int timeout),	\
	  (fds, n, timeout))						\
	X(int, ppoll, (struct pollfd *fds, nfds_t n,			\
		       const struct timespec *t, const sigset_t *m),	\
	  (fds, n, t, m))						\
	X(int, select, (int n, fd_set *r, fd_set *w, fd_set *e,		\
			struct timeval *t), (n, r, w, e, t))		\
	X(int, pselect, (int n, fd_set *r, fd_set *w, fd_set *e,	\
			 const struct timespec *t, const sigset_t *m),	\
	  (n, r, w, e, t, m))						\
	X(int, epoll_create, (int size), (size))			\
	X(int, epoll_create1, (int flags), (flags))			\
	X(int, epoll_ctl, (int ep, int op, int fd, struct epoll_event *e), \
	  (ep, op, fd, e))						\
	X(int, epoll_wait, (int ep, struct epoll_event *e, int n, int t), \
	  (ep, e, n, t))						\
	X(int, sigaction, (int sig, const struct sigaction *a,		\
			   struct sigaction *o), (sig, a, o))		\
	X(int, epoll_pwait, (int ep, struct epoll_event *e, int n, int t, \
			     const sigset_t *m), (ep, e, n, t, m))		\
	X(int, pipe, (int *p), (p))					\
	X(int, pipe2, (int *p, int flags), (p, flags))			\
	X(int, socketpair, (int d, int t, int p, int *sv), (d, t, p, sv)) \
	X(int, accept, (int fd, struct sockaddr *sa, socklen_t *len),	\
	  (fd, sa, len))						\
	X(int, accept4, (int fd, struct sockaddr *sa, socklen_t *len,	\
			 int flags), (fd, sa, len, flags))		\
	X(int, eventfd, (unsigned int v, int flags), (v, flags))	\
	X(int, memfd_create, (const char *name, unsigned int flags),	\
	  (name, flags))						\
	X(int, timerfd_create, (int clock, int flags), (clock, flags))	\
	X(int, signalfd, (int fd, const sigset_t *m, int flags),	\
	  (fd, m, flags))						\
	X(int, inotify_init, (void), ())				\
	X(int, inotify_init1, (int flags), (flags))			\
	X(int, fclose, (FILE *fp), (fp))				\
	X(int, daemon, (int nochdir, int noclose), (nochdir, noclose))

/*
 * The variadic ones: called with one long argument, through a pointer of
 * their real (variadic) type. Same X() shape, for check-layers.
 */
#define VMAK_SYS_VCALLS(X)						\
	X(int, fcntl, (int fd, int cmd, long arg), (fd, cmd, arg))	\
	X(int, ioctl, (int fd, unsigned long req, long arg), (fd, req, arg))

/*
 * Calls a C library may lack (newer than glibc 2.31): resolved the same
 * way, but a missing one fails with ENOSYS instead of stopping the
 * program. Same X() shape.
 */
#define VMAK_SYS_OPT_CALLS(X)						\
	X(int, close_range, (unsigned int lo, unsigned int hi, int flags), \
	  (lo, hi, flags))						\
	X(int, epoll_pwait2, (int ep, struct epoll_event *e, int n,	\
			      const struct timespec *t, const sigset_t *m), \
	  (ep, e, n, t, m))

/*
 * open() and its kin take a mode only with O_CREAT or O_TMPFILE: called
 * with it always, through a pointer of their real (variadic) type.
 */
#define VMAK_SYS_OPEN_CALLS(X)						\
	X(int, open, (const char *p, int fl, mode_t m), (p, fl, m))	\
	X(int, open64, (const char *p, int fl, mode_t m), (p, fl, m))	\
	X(int, creat, (const char *p, mode_t m), (p, m))		\
	X(int, creat64, (const char *p, mode_t m), (p, m))		\
	X(int, openat, (int d, const char *p, int fl, mode_t m), (d, p, fl, m)) \
	X(int, openat64, (int d, const char *p, int fl, mode_t m), (d, p, fl, m))

#define VMAK_SYS_DECLARE(ret, name, params, args)			\
	ret vmak_sys_##name params VMAK_HIDDEN;
VMAK_SYS_CALLS(VMAK_SYS_DECLARE)
VMAK_SYS_VCALLS(VMAK_SYS_DECLARE)
VMAK_SYS_OPT_CALLS(VMAK_SYS_DECLARE)
VMAK_SYS_OPEN_CALLS(VMAK_SYS_DECLARE)
#undef VMAK_SYS_DECLARE

#endif /* _VMAK_SYS_H */
