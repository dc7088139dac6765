/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What every interposer shares (preload.c says what an interposer does):
 * entering and leaving the library, and the forwarder's body. Each file
 * of lib/preload/ holds the interposers of one concern.
 */
#ifndef _VMAK_PRELOAD_ENTRY_H
#define _VMAK_PRELOAD_ENTRY_H

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
#include "enter.h"
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

/* ---- entering the library ---- */

/* Marked inside the library (lib/vma/enter.h); false if it is already. */
static inline bool mark(void)
{
	return ventry_mark();
}

static inline void unmark(void)
{
	ventry_unmark();
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

#endif /* _VMAK_PRELOAD_ENTRY_H */
