// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * poll() and select() over offloaded sockets mixed with any other fds.
 *
 * An offloaded socket is readable when the kernel socket is, or when its
 * queues hold datagrams: those may still be in a ring (whose fd is
 * readable) or already moved to the socket's queue by another thread
 * (which then writes the socket's eventfd, wait.c). So poll() waits on
 * the program's fds as given, plus each offloaded socket's eventfd and
 * ring fds, and reports the program's fds only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "sys.h"
#include "vma.h"
#include "fd.h"
#include "wait.h"
#include "demux.h"
#include "iomux.h"

#define VPOLL_IN	(POLLIN | POLLRDNORM)
#define SMALL		8	/* offloaded fds served without malloc */

struct pent {
	struct vfd *f;
	struct vwait *w;
	int idx;		/* in the program's array */
	int first, end;		/* its own fds in ext[] */
	bool efd;		/* ext[first] is its eventfd */
	bool asleep;		/* between sleep_begin and sleep_end */
};

struct vpoll_call {
	struct pent *pe;
	int np;
};

/* Is fd one of ours whose readiness the kernel does not see whole? */
static struct vfd *waitable(int fd, struct vwait **w)
{
	struct vfd *f = vfd_get(fd);

	if (!f)
		return NULL;
	if (!f->ops->wait) {
		vfd_put(f);
		return NULL;
	}
	*w = f->ops->wait(f);
	return f;
}

bool vpoll_ours(const struct pollfd *fds, nfds_t n)
{
	struct vwait *w;
	struct vfd *f;
	nfds_t i;

	for (i = 0; i < n; i++) {
		if (!(fds[i].events & VPOLL_IN) || !(f = waitable(fds[i].fd, &w)))
			continue;
		vfd_put(f);
		return true;
	}
	return false;
}

static void drain_one(struct vringset *r)
{
	vdemux_drain_try(r);
}

static void release(struct vpoll_call *c)
{
	int k;

	for (k = 0; k < c->np; k++) {
		if (c->pe[k].asleep)
			vwait_sleep_end(c->pe[k].w, false);
		vfd_put(c->pe[k].f);
	}
}

/* Cancelled in ppoll(): our references (the interposer holds none). */
static void cancelled(void *arg)
{
	release(arg);
}

static int kernel_poll(struct vpoll_call *c, struct pollfd *ext, int m,
		       const struct timespec *tsp, const sigset_t *mask)
{
	int rc;

	pthread_cleanup_push(cancelled, c);
	rc = vmak_sys_ppoll(ext, (nfds_t)m, tsp, mask);
	pthread_cleanup_pop(0);
	return rc;
}

/* Lay out ext[]: the program's fds, then each one's own fds. */
static int layout(struct pollfd *ext, const struct pollfd *fds, nfds_t n,
		  struct vpoll_call *c, int *ready)
{
	int m = (int)n, k;
	struct pent *p;
	uint32_t gen;

	memcpy(ext, fds, n * sizeof(*ext));
	*ready = 0;
	for (k = 0; k < c->np; k++) {
		p = &c->pe[k];
		p->first = m;
		/*
		 * The eventfd, made now if the socket has none: rings its
		 * socket gets while we sleep wake us through it (wait.c)
		 */
		vwait_efd(p->w);
		gen = vwait_gen(p->w);
		m += vwait_pollfds(p->w, ext + m, &p->efd);
		p->end = m;
		vwait_each_source(p->w, drain_one);
		p->asleep = true;
		if (vwait_sleep_begin(p->w, gen))
			(*ready)++;	/* queued, or new rings: look again */
	}
	return m;
}

/* After the wait: what each object's own fds said, and its readiness. */
static int collect(struct pollfd *fds, nfds_t n, struct pollfd *ext,
		   struct vpoll_call *c)
{
	struct pent *p;
	int i, k, j, count = 0;

	for (k = 0; k < c->np; k++) {
		p = &c->pe[k];
		vwait_sleep_end(p->w, p->efd && ext[p->first].revents);
		p->asleep = false;
		if (ext[p->idx].revents & POLLIN)
			vwait_hint_os(p->w);
		for (j = p->first + p->efd; j < p->end; j++)
			if (ext[j].revents)
				vdemux_drain_try(vwait_src(p->w,
							   j - p->first - p->efd));
	}
	for (i = 0, k = 0; i < (int)n; i++) {
		fds[i].revents = ext[i].revents;
		if (k < c->np && c->pe[k].idx == i) {
			if (vwait_ready(c->pe[k].w))
				fds[i].revents |= fds[i].events & VPOLL_IN;
			k++;
		}
		if (fds[i].revents)
			count++;
	}
	return count;
}

int vpoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
	  const sigset_t *mask)
{
	struct pent small[SMALL];
	struct pollfd sext[SMALL * (2 + VWAIT_MAX_SRC) + 32], *ext = sext;
	struct vpoll_call c = { .pe = small };
	int64_t deadline = vdeadline_ts(timeout), spin_end = 0, left;
	struct timespec ts, *tsp;
	struct vwait *w;
	struct vfd *f;
	int m, i, rc, count, ready;
	size_t need;

	for (i = 0; i < (int)n; i++) {
		if (!(fds[i].events & VPOLL_IN) || !(f = waitable(fds[i].fd, &w)))
			continue;
		if (c.np == SMALL && c.pe == small) {
			c.pe = malloc(n * sizeof(*c.pe));
			if (!c.pe) {
				c.pe = small;
				vfd_put(f);
				break;	/* the rest as the kernel sees them */
			}
			memcpy(c.pe, small, sizeof(small));
		}
		c.pe[c.np++] = (struct pent){ .f = f, .w = w, .idx = i };
	}
	if (!c.np)
		return vmak_sys_ppoll(fds, n, timeout, mask);
	need = n + (size_t)c.np * (1 + VWAIT_MAX_SRC);
	if (need > sizeof(sext) / sizeof(sext[0])) {
		ext = malloc(need * sizeof(*ext));
		if (!ext) {
			release(&c);
			if (c.pe != small)
				free(c.pe);
			return vmak_sys_ppoll(fds, n, timeout, mask);
		}
	}
	if (vconf.select_poll)
		spin_end = vconf.select_poll < 0 ? INT64_MAX :
			   vnow_ns() + vconf.select_poll * 1000;
	for (;;) {
		m = layout(ext, fds, n, &c, &ready);
		if (ready || (spin_end && vnow_ns() < spin_end)) {
			ts = (struct timespec){ 0, 0 };
			tsp = &ts;
		} else if ((left = vdeadline_left(deadline)) >= 0) {
			ts = vns_ts(left);
			tsp = &ts;
		} else {
			tsp = NULL;
		}
		rc = kernel_poll(&c, ext, m, tsp, mask);
		if (rc < 0) {
			for (i = 0; i < c.np; i++) {
				vwait_sleep_end(c.pe[i].w, false);
				c.pe[i].asleep = false;
			}
			break;
		}
		count = collect(fds, n, ext, &c);
		if (count || (deadline >= 0 && vnow_ns() >= deadline &&
			      !(spin_end && vnow_ns() < spin_end))) {
			rc = count;
			break;
		}
	}
	release(&c);
	if (c.pe != small)
		free(c.pe);
	if (ext != sext)
		free(ext);
	return rc;
}

/*
 * fd_set bits by hand: a program may pass sets larger than FD_SETSIZE
 * (allocated for its fd limit), which the C library's checked macros
 * refuse.
 */
#define NBITS	(8 * sizeof(unsigned long))

static bool bit_isset(int fd, const fd_set *s)
{
	return ((const unsigned long *)(const void *)s)[fd / NBITS] >>
	       (fd % NBITS) & 1;
}

static void bit_set(int fd, fd_set *s, bool on)
{
	unsigned long *w = &((unsigned long *)(void *)s)[fd / NBITS];

	if (on)
		*w |= 1UL << (fd % NBITS);
	else
		*w &= ~(1UL << (fd % NBITS));
}

bool vselect_ours(int n, const fd_set *r)
{
	struct vwait *w;
	struct vfd *f;
	int i;

	if (!r)
		return false;
	for (i = 0; i < n; i++)
		if (bit_isset(i, r) && (f = waitable(i, &w))) {
			vfd_put(f);
			return true;
		}
	return false;
}

int vselect(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timespec *ts,
	    const sigset_t *mask, bool update)
{
	struct pollfd *p;
	int i, n = 0, rc, bits = 0;
	int64_t t0 = vnow_ns();

	p = calloc((size_t)nfds + 1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < nfds; i++) {
		short ev = 0;

		if (r && bit_isset(i, r))
			ev |= POLLIN;
		if (w && bit_isset(i, w))
			ev |= POLLOUT;
		if (e && bit_isset(i, e))
			ev |= POLLPRI;
		if (ev)
			p[n++] = (struct pollfd){ .fd = i, .events = ev };
	}
	rc = vpoll(p, (nfds_t)n, ts, mask);
	if (rc >= 0) {
		for (i = 0; i < n; i++)
			if (p[i].revents & POLLNVAL) {
				free(p);
				errno = EBADF;
				return -1;
			}
		for (i = 0; i < n; i++) {
			short ev = p[i].revents;
			bool in = (p[i].events & POLLIN) &&
				  (ev & (POLLIN | POLLHUP | POLLERR));
			bool out = (p[i].events & POLLOUT) &&
				   (ev & (POLLOUT | POLLERR));
			bool pri = (p[i].events & POLLPRI) && (ev & POLLPRI);

			if (r)
				bit_set(p[i].fd, r, in);
			if (w)
				bit_set(p[i].fd, w, out);
			if (e)
				bit_set(p[i].fd, e, pri);
			bits += in + out + pri;
		}
		rc = bits;
	}
	if (update && ts) {
		int64_t left = ts->tv_sec * 1000000000LL + ts->tv_nsec -
			       (vnow_ns() - t0);

		*ts = vns_ts(left < 0 ? 0 : left);
	}
	free(p);
	return rc;
}
