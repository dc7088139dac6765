/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libvmak's native interface, under the libvma-compatible API:
 *   vmak/ring.h     the ring verbs (inline; the data path)
 *   vmak/ringset.h  ring sets: open, close, fill, rules, counters
 *   vmak/ctl.h      the control plane: module info, ring status over
 *                   netlink, moderation, arm, notifications
 */
#ifndef _VMAK_VMAK_H
#define _VMAK_VMAK_H

#include "vmak/ring.h"
#include "vmak/ringset.h"
#include "vmak/ctl.h"

#endif /* _VMAK_VMAK_H */
