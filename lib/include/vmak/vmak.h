/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libvmak: the native interface under the libvma-compatible API.
 * Every function returns 0 or a negative errno unless it says otherwise.
 */
#ifndef _VMAK_VMAK_H
#define _VMAK_VMAK_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The address family the loaded module registered, read from sysfs and,
 * where sysfs is not mounted, from the netlink INFO reply. -ENOENT when
 * the module is not loaded.
 */
int vmak_family(void);

struct vmak_info {
	char version[64];	/* module version string */
	uint32_t family;	/* socket address family */
};

/* Ask the module over generic netlink. */
int vmak_info_get(struct vmak_info *info);

/* A sentence for an errno from this library ("vmak module not loaded"...). */
const char *vmak_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif /* _VMAK_VMAK_H */
