/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libvma's extra API (api.c), socketXtreme (xtreme.c), and the two fd
 * kinds that exist for it: a plain socket with user data, a ring fd.
 */
#ifndef _VMAK_VMA_API_H
#define _VMAK_VMA_API_H

#include <sys/socket.h>

#include "internal.h"
#include "fd.h"
#include "mellanox/vma_extra.h"

/* The table vma_get_api() returns, filled on first use. */
struct vma_api_t *vapi_get(void) VMAK_HIDDEN;

/* ---- xtreme.c ---- */

int vxt_poll(int fd, struct vma_completion_t *c, unsigned int n, int flags)
	VMAK_HIDDEN;
int vxt_free_packets(struct vma_packet_desc_t *packets, int num) VMAK_HIDDEN;
int vxt_ref_buff(struct vma_buff_t *buff) VMAK_HIDDEN;
int vxt_free_buff(struct vma_buff_t *buff) VMAK_HIDDEN;

/* ---- plainfd.c ---- */

/*
 * SO_VMA_USER_DATA on a socket the library does not offload: fd becomes
 * an object of the plain kind, holding the value.
 */
int vplain_user_data(int fd, const void *val, socklen_t len) VMAK_HIDDEN;
/* In the child of fork(). */
void vplain_atfork_child(void) VMAK_HIDDEN;

/* ---- ringfd.c ---- */

/* The kind of a ring set's fd (rings.c installs it: vrs_fd_ops). */
extern const struct vfd_ops vringfd_ops VMAK_HIDDEN;

#endif /* _VMAK_VMA_API_H */
