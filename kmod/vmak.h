/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _VMAK_H
#define _VMAK_H

#include <linux/types.h>
#include <net/sock.h>

#include "../uapi/linux/vmak.h"
#include "../uapi/linux/vmak_genl.h"

/* main.c */
extern int vmak_family;

/* sock.c */
int vmak_sock_init(void);
void vmak_sock_exit(void);

/* netlink.c */
int vmak_genl_init(void);
void vmak_genl_exit(void);

#endif /* _VMAK_H */
