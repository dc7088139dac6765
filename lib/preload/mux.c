// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * poll(), select() and epoll, interposed: the library's readiness (what
 * its queues hold) beside the kernel's.
 */
#include "entry.h"

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
