// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The fd table's protocol for the calls that make, copy and end fds
 * (fd.h): the interposers of lib/preload/fdlife.c only forward to these,
 * as Onload's close() and dup*() call citp_ep_close() and
 * citp_ep_dup3(). Each number the kernel hands out starts with no past in
 * the table; a copy gets its original's object; an fd's end tells its
 * object before (closing()) and after (closed()) the system call, which
 * the library's own fds never see (they look closed: EBADF). Inside a
 * signal handler that interrupted the library no lock is taken: the table
 * forgets the number at once and the object hears of it later
 * (vfd_late_drain()). In a vfork() child, which runs on its parent's
 * memory and so its parent's table, the calls pass straight through.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "sys.h"
#include "fd.h"
#include "enter.h"

bool (*vfd_vforked)(void) VMAK_HIDDEN;

static bool vforked(void)
{
	return vfd_vforked && vfd_vforked();
}

/* nfd is a new copy of fd (or the call failed) */
int vfd_copied(int fd, int nfd)
{
	int err = errno;

	if (nfd < 0 || (!vfd_stale(fd) && !vfd_stale(nfd)) || vforked())
		return nfd;
	if (ventry_mark()) {
		vfd_dup(fd, nfd);
		ventry_unmark();
	} else {
		vfd_forget_nolock(nfd);	/* in a handler: a kernel copy */
	}
	errno = err;
	return nfd;
}

/*
 * A thread cancelled in close() (a cancellation point) after closing()
 * ran: the fd was closed, or was not if the cancellation came first; the
 * object hears which (vfd_closed()), and the thread leaves the library.
 */
struct closing {
	int fd;
	struct vfd *f;
};

static void close_cancelled(void *arg)
{
	struct closing *c = arg;

	if (c->f)
		vfd_closed(c->fd, c->f,
			   vmak_sys_fcntl(c->fd, F_GETFD, 0) >= 0 ? -1 : 0);
	ventry_unmark();
}

int vfd_close(int fd)
{
	struct closing c;
	struct vfd *f;
	int rc, err;

	if (!vfd_any())
		return vmak_sys_close(fd);
	if (vfd_internal(fd)) {
		errno = EBADF;	/* ours look closed, as a free fd does */
		return -1;
	}
	if (!vfd_stale(fd) || vforked())
		return vmak_sys_close(fd);
	if (!ventry_mark()) {
		rc = vmak_sys_close(fd);
		err = errno;
		if (rc == 0 || err != EBADF)
			vfd_forget_nolock(fd);
		errno = err;
		return rc;
	}
	c.fd = fd;
	c.f = f = vfd_closing(fd);
	pthread_cleanup_push(close_cancelled, &c);
	rc = vmak_sys_close(fd);
	pthread_cleanup_pop(0);
	err = errno;
	/* Linux frees the number even when close() fails, but for EBADF */
	if (f)
		vfd_closed(fd, f, rc < 0 && err == EBADF ? -1 : 0);
	ventry_unmark();
	errno = err;
	return rc;
}

/*
 * nfd becomes a copy of fd: what nfd was is closed, but only if the call
 * succeeds (a failed dup3() leaves nfd as it was).
 */
int vfd_dup_onto(int fd, int nfd, int flags, bool three)
{
	struct vfd *old = NULL;
	int rc, err;

	if ((!vfd_stale(fd) && !vfd_stale(nfd)) || vforked())
		return three ? vmak_sys_dup3(fd, nfd, flags) :
			       vmak_sys_dup2(fd, nfd);
	if (vfd_internal(nfd)) {
		errno = EBADF;
		return -1;
	}
	if (!ventry_mark()) {
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
	ventry_unmark();
	errno = err;
	return rc;
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

int vfd_close_range(unsigned int lo, unsigned int hi, int flags)
{
	int *objs = NULL, *mine = NULL, nobj, nmine, i, rc = 0, err = 0;
	struct vfd **f = NULL;
	unsigned int from;

	if (!vfd_any() || vforked() || lo > hi)
		return vmak_sys_close_range(lo, hi, flags);
	if (vsig_seen.depth)
		return close_range_nolock(lo, hi, flags);
	nobj = vfd_scan(lo, hi, false, NULL, 0);
	nmine = vfd_scan(lo, hi, true, NULL, 0);
	if (!nobj && !nmine)
		return vmak_sys_close_range(lo, hi, flags);
	objs = calloc((size_t)nobj + 1, sizeof(*objs));
	/* each closing() may keep one copy of its own, in the range too */
	mine = calloc((size_t)nmine + (size_t)nobj + 1, sizeof(*mine));
	f = calloc((size_t)nobj + 1, sizeof(*f));
	if (!objs || !mine || !f) {
		free(objs);
		free(mine);
		free(f);
		errno = ENOMEM;
		return -1;
	}
	nobj = vfd_scan(lo, hi, false, objs, nobj);
	if (!ventry_mark()) {	/* cannot be: depth was 0 above, on this thread */
		rc = -1;
		err = EINTR;
		goto out;
	}
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		for (i = 0; i < nobj; i++)
			f[i] = vfd_closing(objs[i]);
	/* the library's own fds, with the copies just kept: left open */
	i = nmine + nobj;	/* mine[]'s room */
	nmine = vfd_scan(lo, hi, true, mine, i);
	if (nmine > i)		/* more made meanwhile by other threads */
		nmine = i;
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
	ventry_unmark();
out:
	free(objs);
	free(mine);
	free(f);
	if (rc)
		errno = err;
	return rc;
}

int vfd_fclose(FILE *fp)
{
	struct vfd *f = NULL;
	int fd, rc, err;

	if (!vfd_any() || !fp)
		return vmak_sys_fclose(fp);
	fd = fileno(fp);
	if (fd < 0 || !vfd_stale(fd) || vforked())
		return vmak_sys_fclose(fp);
	if (!ventry_mark()) {
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
	ventry_unmark();
	errno = err;
	return rc;
}

/*
 * A number the kernel hands out has no past with us: a slot left by an fd
 * closed where we could not see it (a raw system call) is forgotten.
 */
int vfd_new(int fd)
{
	int err = errno;

	if (fd >= 0 && vfd_stale(fd) && !vforked()) {
		if (ventry_mark()) {
			vfd_fresh(fd);
			ventry_unmark();
		} else {
			vfd_forget_nolock(fd);
		}
		errno = err;
	}
	return fd;
}
