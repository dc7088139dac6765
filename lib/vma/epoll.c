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
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys.h"
#include "vma.h"
#include "fd.h"
#include "wait.h"
#include "demux.h"
#include "iomux.h"

#define EV_IN	(EPOLLIN | EPOLLRDNORM)

enum { REG_EFD, REG_RING };

/* One of the library's fds in the kernel's set; its data is &reg. */
struct vreg {
	int fd;
	int kind;
	struct vwait *w;		/* REG_EFD: whose eventfd */
	struct vringset *ring;		/* REG_RING */
	int users;
	bool stale;			/* the parent's, in a forked child */
	bool dead;			/* gone from the kernel's set */
	struct vreg *next;
};

struct vmember {
	int fd;
	struct vfd *f;
	struct vwait *w;
	uint32_t events;
	epoll_data_t data;
	bool disabled;			/* EPOLLONESHOT fired */
	uint32_t last_seq;		/* EPOLLET: what was reported */
	struct vreg *efd;		/* its registrations */
	struct vreg *rings[VWAIT_MAX_SRC];
	int nrings;
	uint32_t gen;			/* w->gen they follow */
	struct vmember *next;
};

/*
 * An fd of the program's that is not ours, registered in a set the
 * library tracks from its creation (socketXtreme mode: the completions of
 * an epoll fd name the fd an event is for).
 */
struct vplain {
	int fd;
	epoll_data_t data;
	bool listening;			/* seen accepting (TCP) */
	struct vplain *next;
};

struct vepoll {
	struct vfd hdr;
	pthread_mutex_t lock;
	int epfd;			/* the kernel set, as we reach it */
	bool own_fd;
	bool tracked;			/* every registration known */
	struct vmember *members;
	struct vreg *regs;
	struct vplain *plain;
	int waiting;			/* threads between wait and lookup */
	struct vepoll *next;		/* sets_lock */
};

static struct vfd_pool pool = VFD_POOL_INIT(struct vepoll);
static pthread_mutex_t sets_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vepoll *sets;

static const struct vfd_ops vepoll_ops;

static struct vepoll *ep_of(struct vfd *f)
{
	return (struct vepoll *)f;
}

/* ---- registrations of our fds ---- */

static struct vreg *reg_get(struct vepoll *ep, int kind, int fd,
			    struct vwait *w, struct vringset *ring)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct vreg *r;

	struct vreg *dead = NULL;
	bool fresh;

	for (r = ep->regs; r; r = r->next) {
		if (r->dead)
			dead = r;
		else if (!r->stale && r->fd == fd && r->kind == kind) {
			r->users++;
			return r;
		}
	}
	fresh = !dead;
	r = dead ? dead : calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->dead = false;
	r->fd = fd;
	r->kind = kind;
	r->w = w;
	r->ring = ring;
	r->users = 1;
	ev.data.u64 = (uint64_t)(uintptr_t)r;
	if (vmak_sys_epoll_ctl(ep->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		vlog_once(VLOG_WARNING, "an epoll set cannot watch the library's fd: %m (datagrams on rings are found when the set is waited on again)");
		r->users = 0;
		r->dead = true;
		if (fresh)
			free(r);
		return NULL;
	}
	if (fresh) {
		r->next = ep->regs;
		ep->regs = r;
	}
	return r;
}

static void reg_unlink(struct vepoll *ep, struct vreg *r)
{
	struct vreg **pp;

	for (pp = &ep->regs; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	free(r);
}

/*
 * The last user gone, the registration leaves the kernel's set. A thread
 * may have its event in hand already, not yet looked up: while any thread
 * is between the kernel's wait and the lookup, the entry stays, dead, so
 * that the event is still known as ours (reg_get() reuses dead entries).
 */
static void reg_put(struct vepoll *ep, struct vreg *r)
{
	if (!r || --r->users)
		return;
	if (!r->stale)
		vmak_sys_epoll_ctl(ep->epfd, EPOLL_CTL_DEL, r->fd, NULL);
	if (ep->waiting) {
		r->dead = true;
		r->w = NULL;
		r->ring = NULL;
		return;
	}
	reg_unlink(ep, r);
}

static void sweep_dead(struct vepoll *ep)
{
	struct vreg *r, *next;

	for (r = ep->regs; r; r = next) {
		next = r->next;
		if (r->dead)
			reg_unlink(ep, r);
	}
}

static struct vreg *reg_find(struct vepoll *ep, uint64_t data)
{
	struct vreg *r;

	for (r = ep->regs; r; r = r->next)
		if ((uint64_t)(uintptr_t)r == data)
			return r;
	return NULL;
}

/* The eventfd and rings of m, registered while m asks for input. */
static void member_regs(struct vepoll *ep, struct vmember *m)
{
	int i, n, efd;

	m->gen = __atomic_load_n(&m->w->gen, __ATOMIC_ACQUIRE);
	if (!(m->events & EV_IN))
		return;
	efd = __atomic_load_n(&m->w->efd, __ATOMIC_ACQUIRE);
	if (efd >= 0)
		m->efd = reg_get(ep, REG_EFD, efd, m->w, NULL);
	n = __atomic_load_n(&m->w->nsrc, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++) {
		struct vringset *rs = __atomic_load_n(&m->w->src[i],
						      __ATOMIC_ACQUIRE);
		struct vreg *r = reg_get(ep, REG_RING, vrs_fd(rs), NULL, rs);

		if (r)
			m->rings[m->nrings++] = r;
	}
}

static void member_unregs(struct vepoll *ep, struct vmember *m)
{
	int i;

	reg_put(ep, m->efd);
	m->efd = NULL;
	for (i = 0; i < m->nrings; i++)
		reg_put(ep, m->rings[i]);
	m->nrings = 0;
}

/*
 * m's registrations again, for its events now: the new ones are taken
 * before the old ones go, so that what both need stays in the kernel's
 * set (no system call).
 */
static void member_reregs(struct vepoll *ep, struct vmember *m)
{
	struct vreg *efd = m->efd, *rings[VWAIT_MAX_SRC];
	int i, n = m->nrings;

	memcpy(rings, m->rings, sizeof(rings[0]) * (size_t)n);
	m->efd = NULL;
	m->nrings = 0;
	member_regs(ep, m);
	reg_put(ep, efd);
	for (i = 0; i < n; i++)
		reg_put(ep, rings[i]);
}

/* Members whose sockets got rings (or an eventfd) since they joined. */
static void resync(struct vepoll *ep)
{
	struct vmember *m;

	for (m = ep->members; m; m = m->next)
		if (m->gen != __atomic_load_n(&m->w->gen, __ATOMIC_ACQUIRE))
			member_reregs(ep, m);
}

static void member_unlink(struct vepoll *ep, struct vmember *m)
{
	struct vmember **pp;

	for (pp = &ep->members; *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	member_unregs(ep, m);
}

/* After unlinking, without the set's lock (the socket may go). */
static void member_free(struct vmember *m)
{
	vwait_set_add(m->w, -1);
	vfd_put(m->f);
	free(m);
}

static struct vmember *member_of(struct vepoll *ep, int fd)
{
	struct vmember *m;

	for (m = ep->members; m; m = m->next)
		if (m->fd == fd)
			return m;
	return NULL;
}

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
		member_free(m);
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
			member_unlink(ep, m);
			m->next = gone;
			gone = m;
		}
		pthread_mutex_unlock(&ep->lock);
	}
	pthread_mutex_unlock(&sets_lock);
	for (m = gone; m; m = next) {
		next = m->next;
		member_free(m);
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
	member_regs(ep, m);
	m->next = ep->members;
	ep->members = m;
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

static bool member_ready(const struct vmember *m);

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
	m = member_of(ep, fd);
	if (!rc && m) {
		m->events = ev->events;
		m->data = ev->data;
		m->disabled = false;
		m->last_seq = vwait_seq(m->w) - 1;
		member_reregs(ep, m);
		if (member_ready(m))
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
	m = member_of(ep, fd);
	if (m)
		member_unlink(ep, m);
	pthread_mutex_unlock(&ep->lock);
	if (m)
		member_free(m);
}

static bool tagged(struct vepoll *ep, const struct epoll_event *e);

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
	resync(ep);
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
		if (tagged(ep, &ev[i]))
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

/* ---- epoll_wait ---- */

/* Take a registration's event: true if it is the program's. */
static bool tagged(struct vepoll *ep, const struct epoll_event *e)
{
	struct vreg *r = reg_find(ep, e->data.u64);

	if (!r)
		return false;
	if (r->stale || r->dead)
		return true;	/* the parent's business, or gone */
	if (r->kind == REG_RING)
		vdemux_drain_try(r->ring);
	else
		vwait_consume(r->w);
	return true;
}

/*
 * The kernel reported a member's own fd. A one-shot member fires once,
 * whichever registration fired: if it fired already (from its queue, in
 * another thread), this event is the same firing seen twice and is
 * dropped; else the member is spent now. False: drop it.
 */
static bool claim(struct vepoll *ep, const struct epoll_event *e)
{
	struct vmember *m;
	bool keep = true;

	for (m = ep->members; m; m = m->next) {
		if (m->data.u64 != e->data.u64)
			continue;
		if (e->events & EPOLLIN)
			vwait_hint_os(m->w);
		if (!(m->events & EPOLLONESHOT))
			continue;
		if (m->disabled)
			keep = false;
		m->disabled = true;
	}
	return keep;
}

static bool member_ready(const struct vmember *m)
{
	if (m->disabled || !(m->events & EV_IN) || !vwait_ready(m->w))
		return false;
	return !(m->events & EPOLLET) || vwait_seq(m->w) != m->last_seq;
}

/*
 * Members whose queues make them readable, into out[] after the n there
 * (merged with an event of the same data). A one-shot member reported
 * here is spent, and so is its kernel registration.
 */
static int scan(struct vepoll *ep, struct epoll_event *out, int n, int max)
{
	struct epoll_event off;
	struct vmember *m;
	uint32_t ev;
	int i;

	for (m = ep->members; m; m = m->next) {
		if (!member_ready(m))
			continue;
		ev = m->events & EV_IN;
		for (i = 0; i < n; i++)
			if (out[i].data.u64 == m->data.u64)
				break;
		if (i == n) {
			if (n == max)
				break;	/* level-triggered: the next wait */
			out[n].events = 0;
			out[n].data = m->data;
			n++;
		}
		out[i].events |= ev;
		m->last_seq = vwait_seq(m->w);
		if (m->events & EPOLLONESHOT) {
			m->disabled = true;
			off.events = EPOLLONESHOT;
			off.data = m->data;
			vmak_sys_epoll_ctl(ep->epfd, EPOLL_CTL_MOD, m->fd, &off);
		}
	}
	return n;
}

/* Before a wait: drain the rings, and is a member ready already? */
static bool prepare(struct vepoll *ep)
{
	struct vmember *m;
	struct vreg *r;
	bool ready = false;

	resync(ep);
	for (r = ep->regs; r; r = r->next)
		if (r->kind == REG_RING && !r->stale && !r->dead)
			vdemux_drain_try(r->ring);
	for (m = ep->members; m && !ready; m = m->next)
		ready = member_ready(m);
	/* the next scan starts one further: no member starves the rest */
	if (ep->members && ep->members->next) {
		struct vmember *first = ep->members, *last = first;

		while (last->next)
			last = last->next;
		ep->members = first->next;
		first->next = NULL;
		last->next = first;
	}
	return ready;
}

static void done_waiting(struct vepoll *ep)
{
	if (!--ep->waiting)
		sweep_dead(ep);
}

/*
 * A thread cancelled in the wait is done waiting and drops the
 * interposer's reference.
 */
static void wait_cancelled(void *arg)
{
	struct vepoll *ep = ep_of(arg);

	pthread_mutex_lock(&ep->lock);
	done_waiting(ep);
	pthread_mutex_unlock(&ep->lock);
	vfd_put(arg);
}

static int kernel_wait(struct vfd *f, int epfd, struct epoll_event *out,
		       int max, int tmo, const sigset_t *mask)
{
	int rc;

	pthread_cleanup_push(wait_cancelled, f);
	rc = vmak_sys_epoll_pwait(epfd, out, max, tmo, mask);
	pthread_cleanup_pop(0);
	return rc;
}

static int ep_wait(struct vfd *f, struct epoll_event *out, int max,
		   int64_t deadline, const sigset_t *mask)
{
	struct vepoll *ep = ep_of(f);
	int64_t spin_end = 0;
	int rc, n, i, tmo;
	bool ready;

	if (max <= 0 || max > (int)(INT32_MAX / sizeof(*out))) {
		errno = EINVAL;
		return -1;
	}
	if (vconf.select_poll)
		spin_end = vconf.select_poll < 0 ? INT64_MAX :
			   vnow_ns() + vconf.select_poll * 1000;
	for (;;) {
		/* callbacks the drains find run once the set is unlocked */
		vdemux_defer_begin();
		pthread_mutex_lock(&ep->lock);
		ready = prepare(ep);
		pthread_mutex_unlock(&ep->lock);
		/* callbacks ran: what they queued is for this wait (no sleep);
		 * counted waiting only after them (a cancel in one leaves the
		 * set as it was)
		 */
		ready = vdemux_defer_end() || ready;
		pthread_mutex_lock(&ep->lock);
		ep->waiting++;
		pthread_mutex_unlock(&ep->lock);
		tmo = ready || (spin_end && vnow_ns() < spin_end) ? 0 :
		      vdeadline_ms_left(deadline);
		rc = kernel_wait(f, ep->epfd, out, max, tmo, mask);
		vdemux_defer_begin();
		pthread_mutex_lock(&ep->lock);
		for (i = n = 0; i < rc; i++) {
			if (tagged(ep, &out[i]) || !claim(ep, &out[i]))
				continue;
			out[n++] = out[i];
		}
		done_waiting(ep);
		if (rc >= 0)
			n = scan(ep, out, n, max);
		pthread_mutex_unlock(&ep->lock);
		if (vdemux_defer_end() && !n && rc >= 0) {
			/* what the callbacks queued (a scan drains nothing) */
			pthread_mutex_lock(&ep->lock);
			n = scan(ep, out, 0, max);
			pthread_mutex_unlock(&ep->lock);
		}
		if (rc < 0)
			return -1;
		if (n)
			return n;
		/* the timeout holds even while the rings keep every event
		 * the kernel reports (a busy ring, a short out[])
		 */
		if (deadline >= 0 && vnow_ns() >= deadline &&
		    !(spin_end && vnow_ns() < spin_end))
			return 0;
		/* all ours: look again at once, else sleep what is left */
	}
}

static const struct vfd_ops vepoll_ops = {
	.kind = "epoll",
	.destroy = ep_destroy,
	.closing = ep_closing,
	.epoll_wait = ep_wait,
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
			m->gen = __atomic_load_n(&m->w->gen, __ATOMIC_RELAXED) - 1;
		}
	}
}
