/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The "vmak" generic netlink family. Documentation/netlink/vmak.yaml is
 * the description; selftests check that this header agrees with it.
 */
#ifndef _UAPI_LINUX_VMAK_GENL_H
#define _UAPI_LINUX_VMAK_GENL_H

#define VMAK_GENL_NAME		"vmak"
#define VMAK_GENL_VERSION	1

enum vmak_cmd {
	VMAK_CMD_UNSPEC,
	/* Module version and the socket family number; no attributes. */
	VMAK_CMD_INFO_GET,

	__VMAK_CMD_MAX,
	VMAK_CMD_MAX = __VMAK_CMD_MAX - 1,
};

enum vmak_a_info {
	VMAK_A_INFO_UNSPEC,
	VMAK_A_INFO_VERSION,		/* string: module version */
	VMAK_A_INFO_FAMILY,		/* u32: address family of vmak sockets */

	__VMAK_A_INFO_MAX,
	VMAK_A_INFO_MAX = __VMAK_A_INFO_MAX - 1,
};

#endif /* _UAPI_LINUX_VMAK_GENL_H */
