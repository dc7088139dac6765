// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The interposers that make, copy and end fds: each number the kernel
 * hands out starts with no past in the fd table, a copy gets its
 * original's object, and an fd's end tells its object before and after
 * the system call (fd.h's closing()/closed()). Inside a signal handler
 * that interrupted the library, no lock is taken: the table forgets the
 * number at once and the object hears of it later.
 */
#include "entry.h"

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
		return vfd_copied(fd, vmak_sys_fcntl(fd, cmd, arg));
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
	return vfd_close(fd);
}

VMAK_API int dup(int fd)
{
	return vfd_copied(fd, vmak_sys_dup(fd));
}

VMAK_API int dup2(int fd, int nfd)
{
	return vfd_dup_onto(fd, nfd, 0, false);
}

VMAK_API int dup3(int fd, int nfd, int flags)
{
	return vfd_dup_onto(fd, nfd, flags, true);
}

VMAK_API int close_range(unsigned int lo, unsigned int hi, int flags)
{
	return vfd_close_range(lo, hi, flags);
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
	return vfd_fclose(fp);
}

static int fresh2(int rc, const int *fds)
{
	if (!rc) {
		vfd_new(fds[0]);
		vfd_new(fds[1]);
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
	return vfd_new(vmak_sys_open(path, flags, m));
}

VMAK_API int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = open_mode(flags, ap);
	va_end(ap);
	return vfd_new(vmak_sys_open64(path, flags, m));
}

VMAK_API int openat(int dir, const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = open_mode(flags, ap);
	va_end(ap);
	return vfd_new(vmak_sys_openat(dir, path, flags, m));
}

VMAK_API int openat64(int dir, const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = open_mode(flags, ap);
	va_end(ap);
	return vfd_new(vmak_sys_openat64(dir, path, flags, m));
}

VMAK_API int creat(const char *path, mode_t m)
{
	return vfd_new(vmak_sys_creat(path, m));
}

VMAK_API int creat64(const char *path, mode_t m)
{
	return vfd_new(vmak_sys_creat64(path, m));
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
	return vfd_new(vmak_sys_accept(fd, sa, len));
}

VMAK_API int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
	return vfd_new(vmak_sys_accept4(fd, sa, len, flags));
}

VMAK_API int eventfd(unsigned int v, int flags)
{
	return vfd_new(vmak_sys_eventfd(v, flags));
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

	vfd_new(fd);
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
	return vfd_new(vmak_sys_memfd_create(name, flags));
}

VMAK_API int timerfd_create(int clock, int flags)
{
	return vfd_new(vmak_sys_timerfd_create(clock, flags));
}

VMAK_API int signalfd(int fd, const sigset_t *m, int flags)
{
	return vfd_new(vmak_sys_signalfd(fd, m, flags));
}

VMAK_API int inotify_init(void)
{
	return vfd_new(vmak_sys_inotify_init());
}

VMAK_API int inotify_init1(int flags)
{
	return vfd_new(vmak_sys_inotify_init1(flags));
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
