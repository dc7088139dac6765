/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The C library's own socket calls, for every layer below the libc
 * interposition (lib/preload/).
 *
 * libvmak.so defines socket(), setsockopt(), close() and the rest of the
 * calls it offloads; a call to one of those names from inside the library
 * would come back into the interposer, take its locks again and recurse.
 * So no file outside lib/preload/ calls these names: it calls vmak_sys_*,
 * which reach the next definition after libvmak (the C library's), found
 * once with dlsym(RTLD_NEXT). In a program linked with the native archive
 * alone (vmakctl, the tests) that is the C library too.
 *
 * `make check-layers` fails when an object below lib/preload/ references
 * any name listed here. libmnl, a library of its own, calls the public
 * names for its netlink sockets; the interposer passes those through.
 */
#ifndef _VMAK_SYS_H
#define _VMAK_SYS_H

#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "internal.h"

/* X(return type, name, parameters, arguments) */
#define VMAK_SYS_CALLS(X)						\
	X(int, socket, (int domain, int type, int protocol),		\
	  (domain, type, protocol))					\
	X(int, bind, (int fd, const struct sockaddr *sa, socklen_t len), \
	  (fd, sa, len))						\
	X(int, close, (int fd), (fd))					\
	X(int, setsockopt, (int fd, int level, int name, const void *val, \
			    socklen_t len), (fd, level, name, val, len)) \
	X(int, getsockopt, (int fd, int level, int name, void *val,	\
			    socklen_t *len), (fd, level, name, val, len)) \
	X(int, poll, (struct pollfd *fds, nfds_t n, int timeout),	\
	  (fds, n, timeout))

#define VMAK_SYS_DECLARE(ret, name, params, args)			\
	ret vmak_sys_##name params VMAK_HIDDEN;
VMAK_SYS_CALLS(VMAK_SYS_DECLARE)
#undef VMAK_SYS_DECLARE

#endif /* _VMAK_SYS_H */
