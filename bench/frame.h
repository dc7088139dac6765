/* SPDX-License-Identifier: GPL-2.0 */
/* The benchmarks' shared bits: a clock and one Ethernet/IPv4/UDP frame. */
#ifndef _VMAK_BENCH_FRAME_H
#define _VMAK_BENCH_FRAME_H

#include <arpa/inet.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline uint16_t bench_ip_csum(const void *data, size_t len)
{
	const uint16_t *p = data;
	uint32_t sum = 0;

	for (; len > 1; len -= 2)
		sum += *p++;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* A frame from smac to dmac, sip:sport to dip:dport, plen payload bytes
 * (0, 1, 2...); returns its length. */
static inline uint32_t bench_udp_frame(uint8_t *f, const uint8_t *smac,
				       const uint8_t *dmac, const char *sip,
				       const char *dip, uint16_t sport,
				       uint16_t dport, unsigned int plen)
{
	struct ether_header *eh = (struct ether_header *)f;
	struct iphdr *ip = (struct iphdr *)(eh + 1);
	struct udphdr *uh = (struct udphdr *)(ip + 1);

	memset(f, 0, sizeof(*eh) + sizeof(*ip) + sizeof(*uh));
	memcpy(eh->ether_dhost, dmac, 6);
	memcpy(eh->ether_shost, smac, 6);
	eh->ether_type = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons((uint16_t)(sizeof(*ip) + sizeof(*uh) + plen));
	inet_pton(AF_INET, sip, &ip->saddr);
	inet_pton(AF_INET, dip, &ip->daddr);
	ip->check = bench_ip_csum(ip, sizeof(*ip));
	uh->source = htons(sport);
	uh->dest = htons(dport);
	uh->len = htons((uint16_t)(sizeof(*uh) + plen));
	for (unsigned int k = 0; k < plen; k++)
		((uint8_t *)(uh + 1))[k] = (uint8_t)k;
	return (uint32_t)(sizeof(*eh) + sizeof(*ip) + sizeof(*uh) + plen);
}

#endif
