// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * epoll_wait() on a set with offloaded members (epoll.c): the program's
 * events as the kernel gives them, the library's registrations handled
 * (a ring drained, an eventfd consumed), then the members whose queues
 * hold datagrams, level-triggered, edge-triggered or one-shot as each
 * asked. Receive callbacks the drains find run once the set is unlocked.
 */
#include <errno.h>
#include <pthread.h>

#include "sys.h"
#include "vma.h"
#include "demux.h"
#include "epoll.h"

/* Take a registration's event: true if it is the program's. */
bool vep_tagged(struct vepoll *ep, const struct epoll_event *e)
{
	struct vreg *r = vep_reg_find(ep, e->data.u64);

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

bool vep_member_ready(const struct vmember *m)
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
		if (!vep_member_ready(m))
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

	vep_resync(ep);
	for (r = ep->regs; r; r = r->next)
		if (r->kind == REG_RING && !r->stale && !r->dead)
			vdemux_drain_try(r->ring);
	for (m = ep->members; m && !ready; m = m->next)
		ready = vep_member_ready(m);
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
		vep_sweep_dead(ep);
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

int vep_wait(struct vfd *f, struct epoll_event *out, int max,
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
			if (vep_tagged(ep, &out[i]) || !claim(ep, &out[i]))
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
