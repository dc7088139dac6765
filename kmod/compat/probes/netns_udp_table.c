// SPDX-License-Identifier: GPL-2.0
/* Each netns has its own UDP hash table (net->ipv4.udp_table). */
#include <net/net_namespace.h>
#include <net/udp.h>

static struct udp_table * __used probe_table(struct net *net)
{
	return net->ipv4.udp_table;
}
