// SPDX-License-Identifier: GPL-2.0
/*
 * proto_ops.bind takes a struct sockaddr_unsized * (the kernel's struct
 * sockaddr, whose sa_data has 14 bytes, stays for user space).
 */
#include <linux/net.h>
#include <linux/socket.h>

static int probe_bind(struct socket *sock, struct sockaddr_unsized *addr,
		      int addr_len)
{
	return addr_len;
}

static const struct proto_ops probe_ops __used = {
	.bind = probe_bind,
};
