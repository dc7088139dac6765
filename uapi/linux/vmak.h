/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * vmak socket ABI, shared by vmak.ko, libvmak, vmakctl and the tests.
 *
 * A vmak socket is a ring set bound to one device queue. The address
 * family number is not fixed: the module takes it as a load parameter and
 * publishes it in /sys/module/vmak/parameters/family and in the reply of
 * the "vmak" generic netlink family's INFO command. Never compile it in.
 *
 * Rules of this header: fixed-width types only, naturally aligned, explicit
 * padding that the kernel checks is zero. Structs grow only by appending;
 * the kernel dispatches on optlen.
 */
#ifndef _UAPI_LINUX_VMAK_H
#define _UAPI_LINUX_VMAK_H

#include <linux/types.h>

/* Where the module publishes the family number it registered. */
#define VMAK_FAMILY_SYSFS	"/sys/module/vmak/parameters/family"
/* The default family number: 22 has no mainline implementation. */
#define VMAK_FAMILY_DEFAULT	22

/* socket(family, VMAK_SOCK_TYPE, VMAK_PROTO) is the only accepted form. */
#define VMAK_SOCK_TYPE		3	/* SOCK_RAW */
#define VMAK_PROTO		0

#endif /* _UAPI_LINUX_VMAK_H */
