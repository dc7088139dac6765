/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* libvma's extra API (api.c) and socketXtreme (xtreme.c). */
#ifndef _VMAK_VMA_API_H
#define _VMAK_VMA_API_H

#include "internal.h"
#include "mellanox/vma_extra.h"

/* The table vma_get_api() returns, filled on first use. */
struct vma_api_t *vapi_get(void) VMAK_HIDDEN;

/* ---- xtreme.c ---- */

int vxt_poll(int fd, struct vma_completion_t *c, unsigned int n, int flags)
	VMAK_HIDDEN;
int vxt_free_packets(struct vma_packet_desc_t *packets, int num) VMAK_HIDDEN;
int vxt_ref_buff(struct vma_buff_t *buff) VMAK_HIDDEN;
int vxt_free_buff(struct vma_buff_t *buff) VMAK_HIDDEN;
/* SO_VMA_USER_DATA on a socket the library does not offload. */
int vxt_user_data_plain(int fd, const void *val, socklen_t len) VMAK_HIDDEN;
/* In the child of fork(). */
void vxt_atfork_child(void) VMAK_HIDDEN;

#endif /* _VMAK_VMA_API_H */
