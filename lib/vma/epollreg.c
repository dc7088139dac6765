// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The registrations of the library's own fds in an epoll set's kernel
 * set (epoll.c says why): a member's eventfd and its rings' fds, shared
 * by members and counted, tagged with our pointers; made again when a
 * member's rings change, freed once no wait can still be reading them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sys.h"
#include "vma.h"
#include "demux.h"
#include "epoll.h"

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

void vep_sweep_dead(struct vepoll *ep)
{
	struct vreg *r, *next;

	for (r = ep->regs; r; r = next) {
		next = r->next;
		if (r->dead)
			reg_unlink(ep, r);
	}
}

struct vreg *vep_reg_find(struct vepoll *ep, uint64_t data)
{
	struct vreg *r;

	for (r = ep->regs; r; r = r->next)
		if ((uint64_t)(uintptr_t)r == data)
			return r;
	return NULL;
}

/* The eventfd and rings of m, registered while m asks for input. */
void vep_member_regs(struct vepoll *ep, struct vmember *m)
{
	int i, n, efd;

	m->gen = vwait_gen(m->w);
	if (!(m->events & EV_IN))
		return;
	efd = vwait_efd_of(m->w);
	if (efd >= 0)
		m->efd = reg_get(ep, REG_EFD, efd, m->w, NULL);
	n = vwait_nsrc(m->w);
	for (i = 0; i < n; i++) {
		struct vringset *rs = vwait_src(m->w, i);
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
void vep_member_reregs(struct vepoll *ep, struct vmember *m)
{
	struct vreg *efd = m->efd, *rings[VWAIT_MAX_SRC];
	int i, n = m->nrings;

	memcpy(rings, m->rings, sizeof(rings[0]) * (size_t)n);
	m->efd = NULL;
	m->nrings = 0;
	vep_member_regs(ep, m);
	reg_put(ep, efd);
	for (i = 0; i < n; i++)
		reg_put(ep, rings[i]);
}

/* Members whose sockets got rings (or an eventfd) since they joined. */
void vep_resync(struct vepoll *ep)
{
	struct vmember *m;

	for (m = ep->members; m; m = m->next)
		if (m->gen != vwait_gen(m->w))
			vep_member_reregs(ep, m);
}

void vep_member_unlink(struct vepoll *ep, struct vmember *m)
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
void vep_member_free(struct vmember *m)
{
	vwait_set_add(m->w, -1);
	vfd_put(m->f);
	free(m);
}

struct vmember *vep_member_of(struct vepoll *ep, int fd)
{
	struct vmember *m;

	for (m = ep->members; m; m = m->next)
		if (m->fd == fd)
			return m;
	return NULL;
}
