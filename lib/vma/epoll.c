// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Epoll sets with offloaded members.
 *
 * The program's own fds go into the kernel's set as the program gave
 * them, with its own events and data: whatever waits on the set (this
 * library, a raw system call, a forked child, a set nesting this one)
 * sees the program's data for the kernel sockets' readiness. What the
 * kernel cannot see is what the library holds: datagrams in a ring, or
 * already in a socket's queue. So for each member that asks for input the
 * set also holds registrations of the library's own fds: the socket's
 * eventfd and its rings' fds (shared by members, counted), tagged with
 * our pointers. epoll_wait() lets the program's events through as they
 * are, handles the tagged ones (drains the ring, consumes the eventfd),
 * and then reports members whose queues hold datagrams: merged into the
 * kernel's event for the same data if there is one, else as an event of
 * their own, level-triggered, edge-triggered (once per new datagram) or
 * one-shot (once until EPOLL_CTL_MOD) as the member asked.
 *
 * A set is an fd object (fd.h): dup()s of its fd share it, and a wait in
 * progress holds a reference, so closing the fd, or a member, while
 * another thread waits is safe. Members hold a reference to their socket;
 * a socket's last close takes it out of every set (vfd_last_fd_hook).
 *
 * Locks: sets_lock (the list of sets) before a set's lock; a set's lock
 * before anything of its members'. Nothing sleeps under them.
 */
#include <errno.h>
#include <linux/kcmp.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "sys.h"
#include "vma.h"
#include "fd.h"
#include "demux.h"
#include "iomux.h"
#include "epoll.h"

static struct vfd_pool pool = VFD_POOL_INIT(struct vepoll);
static pthread_mutex_t sets_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vepoll *sets;

static const struct vfd_ops vepoll_ops;

/* ---- the set as an fd ---- */

static void ep_destroy(struct vfd *f)
{
	struct vepoll *ep = ep_of(f);
	struct vepoll **pp;
	struct vmember *m;
	struct vreg *r;

	pthread_mutex_lock(&sets_lock);
	for (pp = &sets; *pp; pp = &(*pp)->next)
		if (*pp == ep) {
			*pp = ep->next;
			break;
		}
	pthread_mutex_unlock(&sets_lock);
	/* the kernel's set is gone with its last fd (or ours, below) */
	while ((m = ep->members)) {
		ep->members = m->next;
		vep_member_free(m);
	}
	while ((r = ep->regs)) {
		ep->regs = r->next;
		free(r);
	}
	while (ep->plain) {
		struct vplain *pl = ep->plain;

		ep->plain = pl->next;
		free(pl);
	}
	if (ep->own_fd)
		vfd_close_internal(ep->epfd);
	pthread_mutex_destroy(&ep->lock);
	vfd_pool_free(&pool, f);
}

static void ep_closing(struct vfd *f, int fd)
{
	struct vepoll *ep = ep_of(f);

	if (!vfd_keep_copy(f, fd, &ep->epfd, &ep->own_fd, 0))
		vlog(VLOG_WARNING, "epoll fd %d: no fd left to keep the set for its other users (%m)",
		     fd);
}

/* An object's last fd is gone: it leaves every set. */
static void fd_gone(struct vfd *f)
{
	struct vmember *m, *next, *gone = NULL;
	struct vepoll *ep;

	if (!f->ops->wait)
		return;
	pthread_mutex_lock(&sets_lock);
	for (ep = sets; ep; ep = ep->next) {
		pthread_mutex_lock(&ep->lock);
		for (m = ep->members; m; m = next) {
			next = m->next;
			if (m->f != f)
				continue;
			vep_member_unlink(ep, m);
			m->next = gone;
			gone = m;
		}
		pthread_mutex_unlock(&ep->lock);
	}
	pthread_mutex_unlock(&sets_lock);
	for (m = gone; m; m = next) {
		next = m->next;
		vep_member_free(m);
	}
}

__attribute__((constructor)) static void epoll_init(void)
{
	vfd_last_fd_hook = fd_gone;
}

/*
 * The set object for epfd, a valid epoll fd: the one the table has, one
 * of another fd of the same kernel set (a dup made before we knew it),
 * or a new one. Referenced, or NULL without memory.
 */
static struct vepoll *set_for(int epfd)
{
	struct vfd *f = vfd_get(epfd);
	struct vepoll *ep;
	pid_t pid = getpid();

	if (f && f->ops == &vepoll_ops)
		return ep_of(f);
	if (f)
		vfd_put(f);
	pthread_mutex_lock(&sets_lock);
	for (ep = sets; ep; ep = ep->next)
		if (!syscall(SYS_kcmp, pid, pid, KCMP_FILE, epfd, ep->epfd) &&
		    vfd_tryref(&ep->hdr))
			break;
	pthread_mutex_unlock(&sets_lock);
	if (ep) {
		vfd_ref(&ep->hdr);	/* the new slot's */
		vfd_install(epfd, &ep->hdr);
		return ep;
	}
	ep = (struct vepoll *)vfd_pool_alloc(&pool);
	if (!ep)
		return NULL;
	ep->hdr.ops = &vepoll_ops;
	pthread_mutex_init(&ep->lock, NULL);
	ep->epfd = epfd;
	__atomic_store_n(&ep->hdr.refs, 2, __ATOMIC_RELEASE);	/* slot, ours */
	pthread_mutex_lock(&sets_lock);
	ep->next = sets;
	sets = ep;
	pthread_mutex_unlock(&sets_lock);
	vfd_install(epfd, &ep->hdr);
	return ep;
}

/* ---- epoll_ctl ---- */

static int member_add(struct vepoll *ep, int fd, struct vfd *f,
		      const struct epoll_event *ev)
{
	struct vmember *m = calloc(1, sizeof(*m));
	bool gone;

	if (!m)
		return -ENOMEM;
	m->fd = fd;
	m->f = f;
	m->w = f->ops->wait(f);
	m->events = ev->events;
	m->data = ev->data;
	m->last_seq = vwait_seq(m->w) - 1;
	vfd_ref(f);
	/*
	 * Its eventfd, made now if it has none, is registered with the
	 * set: rings the socket gets later wake a waiter through it.
	 */
	vwait_efd(m->w);
	vwait_set_add(m->w, 1);
	pthread_mutex_lock(&ep->lock);
	/*
	 * Its last fd closed since the kernel took it (the kernel's
	 * registration went with the file): fd_gone() has been, or waits
	 * for this lock and finds it; either way no member outlives the fds
	 */
	gone = !__atomic_load_n(&f->nfds, __ATOMIC_ACQUIRE);
	if (!gone) {
		vep_member_regs(ep, m);
		m->next = ep->members;
		ep->members = m;
	}
	pthread_mutex_unlock(&ep->lock);
	if (gone)
		vep_member_free(m);
	return 0;
}


/*
 * EPOLL_CTL_MOD of a member: the kernel's registration and ours change
 * under the set's lock together, so that an event the kernel reports for
 * the new registration is never judged by the old one (a one-shot member
 * re-armed but still marked fired would lose it). A member left ready by
 * the change wakes a waiter, as the kernel's re-armed fd does.
 */
static int member_mod(struct vepoll *ep, int epfd, int fd,
		      struct epoll_event *ev)
{
	struct vmember *m;
	int rc, err;

	pthread_mutex_lock(&ep->lock);
	rc = vmak_sys_epoll_ctl(epfd, EPOLL_CTL_MOD, fd, ev);
	err = errno;
	m = vep_member_of(ep, fd);
	if (!rc && m) {
		m->events = ev->events;
		m->data = ev->data;
		m->disabled = false;
		m->last_seq = vwait_seq(m->w) - 1;
		vep_member_reregs(ep, m);
		if (vep_member_ready(m))
			vwait_kick(m->w);
	}
	pthread_mutex_unlock(&ep->lock);
	errno = err;
	return rc;
}

static void member_del(struct vepoll *ep, int fd)
{
	struct vmember *m;

	pthread_mutex_lock(&ep->lock);
	m = vep_member_of(ep, fd);
	if (m)
		vep_member_unlink(ep, m);
	pthread_mutex_unlock(&ep->lock);
	if (m)
		vep_member_free(m);
}


/* A tracked set's record of the program's fds that are not ours. */
static void plain_ctl(struct vepoll *ep, int op, int fd,
		      const struct epoll_event *ev)
{
	struct vplain *p, **pp;

	pthread_mutex_lock(&ep->lock);
	for (pp = &ep->plain; (p = *pp); pp = &p->next)
		if (p->fd == fd)
			break;
	if (op == EPOLL_CTL_DEL && p) {
		*pp = p->next;
		free(p);
	} else if (op != EPOLL_CTL_DEL && ev) {
		if (!p && (p = calloc(1, sizeof(*p)))) {
			p->fd = fd;
			p->next = ep->plain;
			ep->plain = p;
		}
		if (p)
			p->data = ev->data;
	}
	pthread_mutex_unlock(&ep->lock);
}

void vepoll_track(int epfd)
{
	struct vepoll *ep = set_for(epfd);

	if (ep) {
		ep->tracked = true;
		vfd_put(&ep->hdr);
	}
}

/*
 * socketXtreme on the set: its members' datagrams as completions (their
 * own xt_poll), then the kernel's events for the set's fds (env->event:
 * fd -1 for an fd the set does not know; listening: a TCP socket seen
 * accepting).
 */
static unsigned int ep_xt_poll(struct vfd *f, struct vma_completion_t *c,
			       unsigned int max, const struct vxt_env *xo)
{
	struct vepoll *ep = ep_of(f);
	struct epoll_event ev[64];
	struct vmember *m;
	struct vplain *p;
	unsigned int n = 0;
	int rc, i, fd;
	bool listening;

	/* first the members' datagrams, as completions; callbacks the
	 * drains find run at the end, once the set is unlocked
	 */
	vdemux_defer_begin();
	pthread_mutex_lock(&ep->lock);
	vep_resync(ep);
	for (m = ep->members; m && n < max; m = m->next)
		if ((m->events & EV_IN) && m->f->ops->xt_poll)
			n += m->f->ops->xt_poll(m->f, c + n, max - n, xo);
	pthread_mutex_unlock(&ep->lock);
	if (n == max) {
		vdemux_defer_end();
		return n;
	}
	/* then what the kernel says of the set's fds */
	rc = vmak_sys_epoll_pwait(ep->epfd, ev,
				  (int)(max - n < 64 ? max - n : 64), 0, NULL);
	pthread_mutex_lock(&ep->lock);
	for (i = 0; i < rc && n < max; i++) {
		if (vep_tagged(ep, &ev[i]))
			continue;
		fd = -1;
		listening = false;
		for (m = ep->members; m && fd < 0; m = m->next)
			if (m->data.u64 == ev[i].data.u64)
				fd = m->fd;
		for (p = ep->plain; p && fd < 0; p = p->next)
			if (p->data.u64 == ev[i].data.u64) {
				fd = p->fd;
				listening = p->listening = p->listening ||
					xo->listening(fd);
			}
		n += xo->event(fd, listening, &ev[i], c + n, max - n);
	}
	pthread_mutex_unlock(&ep->lock);
	vdemux_defer_end();
	return n;
}

int vepoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct vfd *f = vfd_get(fd), *ef;
	struct vepoll *ep;
	int rc, err;

	if (f && !f->ops->wait) {
		vfd_put(f);
		f = NULL;
	}
	if (op == EPOLL_CTL_MOD && f && ev) {
		ef = vfd_get(epfd);
		if (ef && ef->ops == &vepoll_ops) {
			rc = member_mod(ep_of(ef), epfd, fd, ev);
			err = errno;
			if (!rc && ep_of(ef)->tracked)
				plain_ctl(ep_of(ef), op, fd, ev);
			vfd_put(ef);
			vfd_put(f);
			errno = err;
			return rc;
		}
		if (ef)
			vfd_put(ef);
	}
	/* the program's registration, with its own data, comes first */
	rc = vmak_sys_epoll_ctl(epfd, op, fd, ev);
	err = errno;
	if (rc) {
		if (f)
			vfd_put(f);
		errno = err;
		return rc;
	}
	if (op == EPOLL_CTL_ADD && f) {
		ep = set_for(epfd);	/* the kernel took epfd: a set */
		if (!ep || member_add(ep, fd, f, ev))
			vlog_once(VLOG_WARNING, "no memory for an epoll member: datagrams on its rings are found only when it is read");
		if (ep)
			vfd_put(&ep->hdr);
	} else {
		ef = vfd_get(epfd);
		if (ef && ef->ops == &vepoll_ops) {
			if (op == EPOLL_CTL_DEL)
				member_del(ep_of(ef), fd);
			if (ep_of(ef)->tracked)
				plain_ctl(ep_of(ef), op, fd, ev);
		}
		if (ef)
			vfd_put(ef);
	}
	if (f)
		vfd_put(f);
	errno = err;
	return rc;
}

static const struct vfd_ops vepoll_ops = {
	.kind = "epoll",
	.destroy = ep_destroy,
	.closing = ep_closing,
	.epoll_wait = vep_wait,
	.xt_poll = ep_xt_poll,
};

/* ---- fork ---- */

void vepoll_atfork_prepare(void)
{
	pthread_mutex_lock(&sets_lock);
}

void vepoll_atfork_parent(void)
{
	pthread_mutex_unlock(&sets_lock);
}

/*
 * The kernel's sets are shared with the parent, and so are the library
 * fds registered in them: the parent's to add and remove. The child keeps
 * the sets and their members (the program's data for its fds is in the
 * kernel's set anyway); the registrations it inherited are marked stale,
 * their events dropped, and its sockets' own rings, if they get any,
 * come in as new ones.
 */
void vepoll_atfork_child(void)
{
	struct vmember *m;
	struct vepoll *ep;
	struct vreg *r;

	pthread_mutex_init(&sets_lock, NULL);
	vfd_pool_atfork_child(&pool);
	for (ep = sets; ep; ep = ep->next) {
		pthread_mutex_init(&ep->lock, NULL);
		ep->waiting = 0;	/* those threads are not here */
		for (r = ep->regs; r; r = r->next) {
			r->stale = true;
			r->users = 1 << 30;	/* never freed: tags stay known */
		}
		for (m = ep->members; m; m = m->next) {
			m->efd = NULL;
			m->nrings = 0;
			m->gen = vwait_gen(m->w) - 1;
		}
	}
}
