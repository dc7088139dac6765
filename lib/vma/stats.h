/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Per-socket counters in a shared file for vmakctl sockets (stats.c). */
#ifndef _VMAK_VMA_STATS_H
#define _VMAK_VMA_STATS_H

#include <stdbool.h>

#include "internal.h"
#include "vmak/sockstats.h"

/* A slot for a new socket, or NULL (no file: counters stay private). */
struct vmak_sockstat *vstats_slot_get(int fd, int family) VMAK_HIDDEN;
void vstats_slot_put(struct vmak_sockstat *s) VMAK_HIDDEN;
/* What the socket owns now: addresses, rings, whether it is offloaded. */
void vstats_addresses(struct vmak_sockstat *s, int fd, int rings,
		      bool os_only) VMAK_HIDDEN;
/* One DETAILS line with a socket's counters (at close, at exit). */
void vstats_log(int fd, const struct vmak_sockstat_counters *c) VMAK_HIDDEN;
/* In the child of fork(): the file is the parent's. */
void vstats_atfork_prepare(void) VMAK_HIDDEN;
void vstats_atfork_parent(void) VMAK_HIDDEN;
void vstats_atfork_child(void) VMAK_HIDDEN;

#endif /* _VMAK_VMA_STATS_H */
