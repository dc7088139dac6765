/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * An epoll set with offloaded members (epoll.c), its parts: the
 * registrations of the library's own fds in the kernel's set (epollreg.c)
 * and the wait (epollwait.c). Private to the three.
 */
#ifndef _VMAK_VMA_EPOLL_H
#define _VMAK_VMA_EPOLL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "internal.h"
#include "fd.h"
#include "wait.h"

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

static inline struct vepoll *ep_of(struct vfd *f)
{
	return (struct vepoll *)f;
}

/* ---- epollreg.c: registrations of our fds (set's lock held) ---- */

/* The registration whose tag is data, or NULL (not ours). */
struct vreg *vep_reg_find(struct vepoll *ep, uint64_t data) VMAK_HIDDEN;
/* Free registrations no wait can still be reading (none waiting). */
void vep_sweep_dead(struct vepoll *ep) VMAK_HIDDEN;
/* A member's registrations: made, made again as its rings changed. */
void vep_member_regs(struct vepoll *ep, struct vmember *m) VMAK_HIDDEN;
void vep_member_reregs(struct vepoll *ep, struct vmember *m) VMAK_HIDDEN;
/* Every member's registrations follow its rings. */
void vep_resync(struct vepoll *ep) VMAK_HIDDEN;
void vep_member_unlink(struct vepoll *ep, struct vmember *m) VMAK_HIDDEN;
void vep_member_free(struct vmember *m) VMAK_HIDDEN;
struct vmember *vep_member_of(struct vepoll *ep, int fd) VMAK_HIDDEN;

/* ---- epollwait.c ---- */

/* Take a registration's event: true if it is the program's. */
bool vep_tagged(struct vepoll *ep, const struct epoll_event *e) VMAK_HIDDEN;
bool vep_member_ready(const struct vmember *m) VMAK_HIDDEN;
/* The set's epoll_wait op (fd.h). */
int vep_wait(struct vfd *f, struct epoll_event *out, int max,
	     int64_t deadline, const sigset_t *mask) VMAK_HIDDEN;

#endif /* _VMAK_VMA_EPOLL_H */
