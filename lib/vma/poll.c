// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * poll, select and epoll over offloaded sockets mixed with any other fds.
 *
 * An offloaded socket is readable when the kernel socket is, or when its
 * queues hold datagrams: those may still be in a ring (whose fd is
 * readable), or already moved to the socket's queue by another thread
 * (which then writes the socket's eventfd). So poll() and select() wait on
 * the kernel fd, the eventfd and the rings' fds, and report the
 * application's fd. An epoll set gets the same three registrations per
 * offloaded member, with our tags as their data; epoll_wait() turns
 * tagged events back into the member's own event and data, merged, and
 * passes every other event through untouched.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include "sys.h"
#include "vma.h"

#define VPOLL_IN (POLLIN | POLLRDNORM)

static int64_t ts_ns(const struct timespec *t)
{
	return t ? t->tv_sec * 1000000000LL + t->tv_nsec : -1;
}

static int ms_left(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - vnow_ns();
	return left <= 0 ? 0 : (int)((left + 999999) / 1000000);
}

struct pent {
	struct vsock *vs;
	int idx;		/* in the application's array */
	int first, end;		/* its eventfd and rings in ext[] */
};

int vpoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
	  const sigset_t *mask)
{
	struct pollfd *ext = NULL;
	struct pent *pe = NULL;
	int np = 0, m, i, j, k, rc, count;
	int64_t deadline = -1, spin_end = 0;
	struct timespec ts, *tsp;
	bool want;

	for (i = 0; i < (int)n; i++) {
		struct vsock *vs = vfd_sock(fds[i].fd);

		if (!vs)
			continue;
		if (!(fds[i].events & VPOLL_IN)) {
			vsock_release(vs);
			continue;
		}
		if (!pe && !(pe = calloc(n, sizeof(*pe)))) {
			vsock_release(vs);
			break;
		}
		pe[np].vs = vs;
		pe[np++].idx = i;
	}
	if (!np) {
		free(pe);
		return vmak_sys_ppoll(fds, n, timeout, mask);
	}
	ext = calloc(n + (size_t)np * (1 + VSOCK_MAX_ATT), sizeof(*ext));
	if (!ext) {
		rc = vmak_sys_ppoll(fds, n, timeout, mask);
		goto out;
	}
	if (timeout)
		deadline = vnow_ns() + ts_ns(timeout);
	if (vconf.select_poll)
		spin_end = vconf.select_poll < 0 ? INT64_MAX :
			   vnow_ns() + vconf.select_poll * 1000;
	for (;;) {
		memcpy(ext, fds, n * sizeof(*ext));
		m = (int)n;
		count = 0;
		for (k = 0; k < np; k++) {
			struct vsock *vs = pe[k].vs;

			__atomic_add_fetch(&vs->waiters, 1, __ATOMIC_ACQ_REL);
			pe[k].first = m;
			ext[m++] = (struct pollfd){ .fd = vs->efd, .events = POLLIN };
			pthread_rwlock_rdlock(&vs->lock);
			for (j = 0; j < vs->nvatt; j++)
				ext[m++] = (struct pollfd){
					.fd = vs->att[j]->ring->rs.fd,
					.events = POLLIN };
			pthread_rwlock_unlock(&vs->lock);
			pe[k].end = m;
			if (vsock_readable(vs))
				count++;
		}
		if (count || (spin_end && vnow_ns() < spin_end)) {
			ts = (struct timespec){ 0, 0 };
			tsp = &ts;
		} else if (deadline >= 0) {
			int64_t left = deadline - vnow_ns();

			if (left < 0)
				left = 0;
			ts.tv_sec = (time_t)(left / 1000000000LL);
			ts.tv_nsec = (long)(left % 1000000000LL);
			tsp = &ts;
		} else {
			tsp = NULL;
		}
		rc = vmak_sys_ppoll(ext, (nfds_t)m, tsp, mask);
		for (k = 0; k < np; k++)
			__atomic_sub_fetch(&pe[k].vs->waiters, 1, __ATOMIC_ACQ_REL);
		if (rc < 0)
			goto out;
		for (k = 0; k < np; k++) {
			if (ext[pe[k].idx].revents & POLLIN)
				pe[k].vs->os_hint = true;
			if (ext[pe[k].first].revents)
				vsock_clear_efd(pe[k].vs);
			for (j = pe[k].first + 1; j < pe[k].end; j++)
				if (ext[j].revents)
					vsock_readable(pe[k].vs);
		}
		count = 0;
		for (i = 0, k = 0; i < (int)n; i++) {
			fds[i].revents = ext[i].revents;
			want = k < np && pe[k].idx == i;
			if (want) {
				if (vsock_readable(pe[k].vs))
					fds[i].revents |= fds[i].events & VPOLL_IN;
				k++;
			}
			if (fds[i].revents)
				count++;
		}
		if (count || (deadline >= 0 && vnow_ns() >= deadline &&
			      !(spin_end && vnow_ns() < spin_end))) {
			rc = count;
			goto out;
		}
	}
out:
	for (k = 0; k < np; k++)
		vsock_release(pe[k].vs);
	free(pe);
	free(ext);
	return rc;
}

int vselect(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timespec *ts,
	    const sigset_t *mask, bool update)
{
	struct pollfd *p;
	int i, n = 0, rc, bits = 0;
	int64_t t0 = vnow_ns();

	if (nfds < 0 || nfds > FD_SETSIZE) {
		errno = EINVAL;
		return -1;
	}
	p = calloc((size_t)nfds + 1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < nfds; i++) {
		short ev = 0;

		if (r && FD_ISSET(i, r))
			ev |= POLLIN;
		if (w && FD_ISSET(i, w))
			ev |= POLLOUT;
		if (e && FD_ISSET(i, e))
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
		if (r)
			FD_ZERO(r);
		if (w)
			FD_ZERO(w);
		if (e)
			FD_ZERO(e);
		for (i = 0; i < n; i++) {
			short ev = p[i].revents;

			if (r && (p[i].events & POLLIN) &&
			    (ev & (POLLIN | POLLHUP | POLLERR))) {
				FD_SET(p[i].fd, r);
				bits++;
			}
			if (w && (p[i].events & POLLOUT) &&
			    (ev & (POLLOUT | POLLERR))) {
				FD_SET(p[i].fd, w);
				bits++;
			}
			if (e && (p[i].events & POLLPRI) && (ev & POLLPRI)) {
				FD_SET(p[i].fd, e);
				bits++;
			}
		}
		rc = bits;
	}
	if (update && ts) {
		int64_t left = ts_ns(ts) - (vnow_ns() - t0);

		if (left < 0)
			left = 0;
		ts->tv_sec = (time_t)(left / 1000000000LL);
		ts->tv_nsec = (long)(left % 1000000000LL);
	}
	free(p);
	return rc;
}

/* ---- epoll ---- */

#define TAG_MEMBER	1	/* the kernel socket's registration */
#define TAG_EFD		2	/* the eventfd's */
#define TAG_RING	3

struct vtag {
	int kind;
};

struct vmember {
	struct vtag tag, etag;
	int fd;
	struct vsock *vs;
	uint32_t events;
	epoll_data_t data;
	bool disabled;		/* EPOLLONESHOT fired */
	uint32_t last_seq;	/* EPOLLET: what was reported */
	/* the socket's rings this set watches for it, as of vs->gen */
	struct vring *rings[VSOCK_MAX_ATT];
	int nrings;
	uint32_t gen;
	struct vmember *next;
};

struct vringref {
	struct vtag tag;
	struct vring *ring;
	int users;
	struct vringref *next;
};

struct vepoll {
	pthread_mutex_t lock;
	int epfd;
	struct vmember *members;
	struct vringref *rings;
	struct vepoll *next;
};

static pthread_mutex_t eps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vepoll *eps;

static struct vepoll *vepoll_get(int epfd)
{
	struct vepoll *ep = vfd_epoll(epfd);

	if (ep)
		return ep;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return NULL;
	pthread_mutex_init(&ep->lock, NULL);
	ep->epfd = epfd;
	pthread_mutex_lock(&eps_lock);
	ep->next = eps;
	eps = ep;
	pthread_mutex_unlock(&eps_lock);
	vfd_set_epoll(epfd, ep);
	return ep;
}

static struct vtag *tag_find(struct vepoll *ep, uint64_t v)
{
	struct vmember *m;
	struct vringref *rr;

	for (m = ep->members; m; m = m->next) {
		if ((uint64_t)(uintptr_t)&m->tag == v)
			return &m->tag;
		if ((uint64_t)(uintptr_t)&m->etag == v)
			return &m->etag;
	}
	for (rr = ep->rings; rr; rr = rr->next)
		if ((uint64_t)(uintptr_t)&rr->tag == v)
			return &rr->tag;
	return NULL;
}

static int ctl_tag(struct vepoll *ep, int op, int fd, uint32_t events,
		   struct vtag *t)
{
	struct epoll_event ev = { .events = events,
				  .data.u64 = (uint64_t)(uintptr_t)t };

	return vmak_sys_epoll_ctl(ep->epfd, op, fd, &ev);
}

static void ring_ref(struct vepoll *ep, struct vring *r, int delta)
{
	struct vringref *rr, **pp;

	for (pp = &ep->rings; (rr = *pp); pp = &rr->next)
		if (rr->ring == r)
			break;
	if (delta > 0) {
		if (!rr) {
			rr = calloc(1, sizeof(*rr));
			if (!rr)
				return;
			rr->tag.kind = TAG_RING;
			rr->ring = r;
			if (ctl_tag(ep, EPOLL_CTL_ADD, r->rs.fd, EPOLLIN, &rr->tag)) {
				free(rr);
				return;
			}
			rr->next = ep->rings;
			ep->rings = rr;
		}
		rr->users++;
	} else if (rr && !--rr->users) {
		vmak_sys_epoll_ctl(ep->epfd, EPOLL_CTL_DEL, r->rs.fd, NULL);
		*pp = rr->next;
		free(rr);
	}
}

/* Watch the socket's rings for m (delta 1), or stop (-1). */
static void member_rings(struct vepoll *ep, struct vmember *m, int delta)
{
	int i;

	if (delta < 0) {
		for (i = 0; i < m->nrings; i++)
			ring_ref(ep, m->rings[i], -1);
		m->nrings = 0;
		return;
	}
	pthread_rwlock_rdlock(&m->vs->lock);
	m->gen = __atomic_load_n(&m->vs->gen, __ATOMIC_ACQUIRE);
	for (i = 0; i < m->vs->nvatt; i++) {
		m->rings[i] = m->vs->att[i]->ring;
		ring_ref(ep, m->rings[i], 1);
	}
	m->nrings = m->vs->nvatt;
	pthread_rwlock_unlock(&m->vs->lock);
}

/*
 * A socket added before it had rings (a client's first send binds it),
 * or that moved to others: watch the ones it has now. ep->lock held.
 */
static void members_resync(struct vepoll *ep)
{
	struct vmember *m;

	for (m = ep->members; m; m = m->next)
		if (m->gen != __atomic_load_n(&m->vs->gen, __ATOMIC_ACQUIRE)) {
			member_rings(ep, m, -1);
			member_rings(ep, m, 1);
		}
}

static uint32_t efd_events(uint32_t ev)
{
	return EPOLLIN | (ev & (EPOLLET | EPOLLONESHOT | EPOLLEXCLUSIVE));
}

static void member_free(struct vepoll *ep, struct vmember *m, bool fd_open)
{
	if (fd_open)
		vmak_sys_epoll_ctl(ep->epfd, EPOLL_CTL_DEL, m->fd, NULL);
	vmak_sys_epoll_ctl(ep->epfd, EPOLL_CTL_DEL, m->vs->efd, NULL);
	member_rings(ep, m, -1);
	__atomic_sub_fetch(&m->vs->nmembers, 1, __ATOMIC_ACQ_REL);
	vsock_release(m->vs);
	free(m);
}

int vepoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct vsock *vs = vfd_sock(fd);
	struct vmember *m, **pp;
	struct vepoll *ep;
	int rc = -1;

	if (!vs)
		return vmak_sys_epoll_ctl(epfd, op, fd, ev);
	ep = vepoll_get(epfd);
	if (!ep) {
		vsock_release(vs);
		return vmak_sys_epoll_ctl(epfd, op, fd, ev);
	}
	pthread_mutex_lock(&ep->lock);
	for (pp = &ep->members; (m = *pp); pp = &m->next)
		if (m->fd == fd)
			break;
	switch (op) {
	case EPOLL_CTL_ADD:
		if (!ev) {
			errno = EFAULT;
			break;
		}
		m = calloc(1, sizeof(*m));
		if (!m) {
			errno = ENOMEM;
			break;
		}
		m->tag.kind = TAG_MEMBER;
		m->etag.kind = TAG_EFD;
		m->fd = fd;
		m->vs = vs;
		m->events = ev->events;
		m->data = ev->data;
		m->last_seq = __atomic_load_n(&vs->seq, __ATOMIC_RELAXED) - 1;
		rc = ctl_tag(ep, EPOLL_CTL_ADD, fd, ev->events, &m->tag);
		if (rc) {
			free(m);
			break;
		}
		if (ctl_tag(ep, EPOLL_CTL_ADD, vs->efd, efd_events(ev->events),
			    &m->etag) && errno != EEXIST) {
			vmak_sys_epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
			free(m);
			rc = -1;
			break;
		}
		__atomic_add_fetch(&vs->nmembers, 1, __ATOMIC_ACQ_REL);
		m->next = ep->members;
		ep->members = m;
		member_rings(ep, m, 1);
		vs = NULL;	/* the member keeps the reference */
		break;
	case EPOLL_CTL_MOD:
		if (!m) {
			rc = vmak_sys_epoll_ctl(epfd, op, fd, ev);
			break;
		}
		if (!ev) {
			errno = EFAULT;
			break;
		}
		rc = ctl_tag(ep, EPOLL_CTL_MOD, fd, ev->events, &m->tag);
		if (rc)
			break;
		ctl_tag(ep, EPOLL_CTL_MOD, vs->efd, efd_events(ev->events),
			&m->etag);
		m->events = ev->events;
		m->data = ev->data;
		m->disabled = false;
		m->last_seq = __atomic_load_n(&vs->seq, __ATOMIC_RELAXED) - 1;
		break;
	case EPOLL_CTL_DEL:
		if (!m) {
			rc = vmak_sys_epoll_ctl(epfd, op, fd, ev);
			break;
		}
		*pp = m->next;
		member_free(ep, m, true);
		rc = 0;
		break;
	default:
		rc = vmak_sys_epoll_ctl(epfd, op, fd, ev);
	}
	pthread_mutex_unlock(&ep->lock);
	if (vs)
		vsock_release(vs);
	return rc;
}

/* Add or merge m's event in out[]; returns the new count. */
static int out_add(struct epoll_event *out, int n, int max,
		   struct vmember **who, struct vmember *m, uint32_t events)
{
	int i;

	for (i = 0; i < n; i++)
		if (who[i] == m) {
			out[i].events |= events;
			return n;
		}
	if (n == max)
		return n;
	who[n] = m;
	out[n].events = events;
	out[n].data = m->data;
	return n + 1;
}

/* Members whose queues make them readable now, into out[]. */
static int scan_members(struct vepoll *ep, struct epoll_event *out, int n,
			int max, struct vmember **who)
{
	struct vmember *m;
	uint32_t seq;

	for (m = ep->members; m && n < max; m = m->next) {
		if (m->disabled || !(m->events & (EPOLLIN | EPOLLRDNORM)))
			continue;
		if (!__atomic_load_n(&m->vs->qtotal, __ATOMIC_ACQUIRE))
			continue;
		seq = __atomic_load_n(&m->vs->seq, __ATOMIC_RELAXED);
		if ((m->events & EPOLLET) && seq == m->last_seq)
			continue;
		m->last_seq = seq;
		n = out_add(out, n, max, who, m,
			    m->events & (EPOLLIN | EPOLLRDNORM));
	}
	return n;
}

/*
 * Wait (tmo ms) for kernel events and put them in out[] after the n there:
 * untagged ones as they are, first, so they always fit (an edge-triggered
 * event dropped would be lost); then ours. Tagged events use no room in
 * out[], so while a batch fills up with them, look again at once.
 */
static int epoll_batch(struct vepoll *ep, struct epoll_event *tmp,
		       struct epoll_event *out, struct vmember **who, int n,
		       int max, int tmo, const sigset_t *mask)
{
	int rc, i, want, round;
	struct vtag *t;

	for (round = 0; round < 4 && n < max; round++, tmo = 0) {
		want = max - n;
		rc = vmak_sys_epoll_pwait(ep->epfd, tmp, want, tmo, mask);
		if (rc < 0)
			return round ? n : -1;
		pthread_mutex_lock(&ep->lock);
		for (i = 0; i < rc; i++)
			if (!tag_find(ep, tmp[i].data.u64)) {
				out[n] = tmp[i];
				who[n++] = NULL;
			}
		for (i = 0; i < rc; i++) {
			t = tag_find(ep, tmp[i].data.u64);
			if (!t)
				continue;
			if (t->kind == TAG_RING) {
				vring_drain_try(((struct vringref *)t)->ring);
			} else if (t->kind == TAG_EFD) {
				/* scan_members() reports it */
				vsock_clear_efd(((struct vmember *)
						 ((char *)t - offsetof(struct vmember, etag)))->vs);
			} else {
				struct vmember *m = (struct vmember *)t;

				/* the kernel socket's own readiness */
				if (tmp[i].events & EPOLLIN)
					m->vs->os_hint = true;
				if (!m->disabled)
					n = out_add(out, n, max, who, m,
						    tmp[i].events & (m->events |
						    EPOLLERR | EPOLLHUP));
			}
		}
		pthread_mutex_unlock(&ep->lock);
		if (rc < want)
			break;
	}
	return n;
}

int vepoll_wait(struct vepoll *ep, struct epoll_event *out, int max,
		int timeout_ms, const sigset_t *mask)
{
	struct epoll_event *tmp;
	struct vmember **who;
	struct vringref *rr;
	int64_t deadline = -1, spin_end = 0;
	int n, rc, i, tmo;

	if (max <= 0) {
		errno = EINVAL;
		return -1;
	}
	tmp = calloc((size_t)max, sizeof(*tmp));
	who = calloc((size_t)max, sizeof(*who));
	if (!tmp || !who) {
		free(tmp);
		free(who);
		errno = ENOMEM;
		return -1;
	}
	if (timeout_ms >= 0)
		deadline = vnow_ns() + timeout_ms * 1000000LL;
	if (vconf.select_poll)
		spin_end = vconf.select_poll < 0 ? INT64_MAX :
			   vnow_ns() + vconf.select_poll * 1000;
	for (;;) {
		pthread_mutex_lock(&ep->lock);
		members_resync(ep);
		for (rr = ep->rings; rr; rr = rr->next)
			vring_drain_try(rr->ring);
		n = scan_members(ep, out, 0, max, who);
		pthread_mutex_unlock(&ep->lock);

		tmo = n || (spin_end && vnow_ns() < spin_end) ? 0 :
		      ms_left(deadline);
		rc = epoll_batch(ep, tmp, out, who, n, max, tmo, mask);
		if (rc < 0) {
			if (!n)
				n = -1;
			break;	/* report what we have, or the error */
		}
		n = rc;
		pthread_mutex_lock(&ep->lock);
		n = scan_members(ep, out, n, max, who);
		for (i = 0; i < n; i++)
			if (who[i] && (who[i]->events & EPOLLONESHOT))
				who[i]->disabled = true;
		/* drop events that merged to nothing */
		for (i = rc = 0; i < n; i++)
			if (out[i].events)
				out[rc++] = out[i];
		n = rc;
		pthread_mutex_unlock(&ep->lock);
		if (n || (deadline >= 0 && vnow_ns() >= deadline &&
			  !(spin_end && vnow_ns() < spin_end)))
			break;
	}
	free(tmp);
	free(who);
	return n;
}

void vepoll_release(struct vepoll *ep)
{
	struct vepoll **pp;
	struct vmember *m;
	struct vringref *rr;

	pthread_mutex_lock(&eps_lock);
	for (pp = &eps; *pp; pp = &(*pp)->next)
		if (*pp == ep) {
			*pp = ep->next;
			break;
		}
	pthread_mutex_unlock(&eps_lock);
	while ((m = ep->members)) {
		ep->members = m->next;
		__atomic_sub_fetch(&m->vs->nmembers, 1, __ATOMIC_ACQ_REL);
		vsock_release(m->vs);
		free(m);
	}
	while ((rr = ep->rings)) {
		ep->rings = rr->next;
		free(rr);
	}
	pthread_mutex_destroy(&ep->lock);
	free(ep);
}

void vepoll_sock_gone(struct vsock *vs)
{
	struct vepoll *ep;
	struct vmember *m, **pp;

	pthread_mutex_lock(&eps_lock);
	for (ep = eps; ep; ep = ep->next) {
		pthread_mutex_lock(&ep->lock);
		for (pp = &ep->members; (m = *pp);) {
			if (m->vs == vs) {
				*pp = m->next;
				member_free(ep, m, false);
			} else {
				pp = &m->next;
			}
		}
		pthread_mutex_unlock(&ep->lock);
	}
	pthread_mutex_unlock(&eps_lock);
}
