// SPDX-License-Identifier: GPL-2.0
/* sk_uid() reads a socket's owner; sock_i_uid() is gone. */
#include <net/sock.h>

static kuid_t __used probe_sk_uid(const struct sock *sk)
{
	return sk_uid(sk);
}
