/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* poll(), select() (poll.c) and epoll sets (epoll.c) over our objects. */
#ifndef _VMAK_VMA_IOMUX_H
#define _VMAK_VMA_IOMUX_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>

#include "internal.h"

int vpoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
	  const sigset_t *mask) VMAK_HIDDEN;
/* Any fd of fds that is ours and polls beyond the kernel? */
bool vpoll_ours(const struct pollfd *fds, nfds_t n) VMAK_HIDDEN;
int vselect(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timespec *ts,
	    const sigset_t *mask, bool update) VMAK_HIDDEN;
/* Any fd in r (n bits) that is ours? */
bool vselect_ours(int n, const fd_set *r) VMAK_HIDDEN;

/*
 * epoll_ctl() on any epoll fd: an offloaded socket joins (or becomes)
 * the library's epoll set; anything else goes to the kernel.
 */
int vepoll_ctl(int epfd, int op, int fd, struct epoll_event *ev) VMAK_HIDDEN;
/*
 * An epoll set followed from its creation (socketXtreme mode: its
 * xt_poll op then knows every fd's registration).
 */
void vepoll_track(int epfd) VMAK_HIDDEN;

/* In the child of fork(): the sets' library registrations are the
 * parent's (their events are dropped); the sets and members stay.
 */
void vepoll_atfork_prepare(void) VMAK_HIDDEN;
void vepoll_atfork_parent(void) VMAK_HIDDEN;
void vepoll_atfork_child(void) VMAK_HIDDEN;

#endif /* _VMAK_VMA_IOMUX_H */
