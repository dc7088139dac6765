/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The one generic netlink wrapper of libvmak (internal). */
#ifndef _VMAK_NL_H
#define _VMAK_NL_H

#include <stdint.h>
#include <libmnl/libmnl.h>

#include "linux/vmak_genl.h"

#include "internal.h"

struct vmak_nl {
	struct mnl_socket *sock;
	uint16_t family_id;
	uint32_t seq;
	uint32_t portid;
	char ext_msg[256];	/* extack text of the last error, if any */
};

/* Open a socket and resolve the "vmak" family: -ENOENT if not loaded. */
int vmak_nl_open(struct vmak_nl *nl) VMAK_HIDDEN;
void vmak_nl_close(struct vmak_nl *nl) VMAK_HIDDEN;

/* Start a vmak request in buf (MNL_SOCKET_BUFFER_SIZE bytes). */
struct nlmsghdr *vmak_nl_msg(struct vmak_nl *nl, void *buf, uint8_t cmd,
			     uint16_t flags) VMAK_HIDDEN;

/*
 * Send nlh and run cb on every reply message until the ACK or DONE.
 * Returns 0 or -errno; on error nl->ext_msg holds the kernel's text.
 */
int vmak_nl_talk(struct vmak_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
		 void *data) VMAK_HIDDEN;

#endif /* _VMAK_NL_H */
