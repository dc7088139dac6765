/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The one generic netlink wrapper of libvmak (internal). */
#ifndef _VMAK_NL_H
#define _VMAK_NL_H

#include <stdint.h>
#include <libmnl/libmnl.h>

#include "linux/vmak_genl.h"

#include "internal.h"

/* Big enough for one dump batch (the kernel fills up to 32 KiB). */
#define VMAK_NL_RCVBUF 32768

struct vmak_nl {
	struct mnl_socket *sock;
	uint16_t family_id;
	uint32_t monitor_grp;	/* id of the "monitor" multicast group */
	uint32_t seq;
	uint32_t portid;
	char ext_msg[256];	/* extack text of the last error, if any */
	int ext_attr;		/* type of the request attribute it names, or -1 */
	int ext_miss;		/* type of the attribute it misses, or -1 */
	int dump_intr;		/* the last dump saw rings come or go */
	const struct nlmsghdr *req;	/* the request being answered */
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

/*
 * Keep the last error for vmak_last_error(): the kernel's extack text and
 * the name of the attribute it points at (names[type], from the spec).
 */
void vmak_nl_set_error(struct vmak_nl *nl, int err, const char *const *names,
		       int nnames) VMAK_HIDDEN;

#endif /* _VMAK_NL_H */
