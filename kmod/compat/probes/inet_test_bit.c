// SPDX-License-Identifier: GPL-2.0
/* inet_sock's FREEBIND and TRANSPARENT are flags read by inet_test_bit(). */
#include <net/inet_sock.h>

static bool __used probe_nonlocal(struct sock *sk)
{
	return inet_test_bit(FREEBIND, sk) || inet_test_bit(TRANSPARENT, sk);
}
