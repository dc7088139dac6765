/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The benchmarks' shared bits: a clock, one Ethernet/IPv4/UDP frame, CPU
 * pinning, a device's MAC address and MAC parsing.
 */
#ifndef _VMAK_BENCH_FRAME_H
#define _VMAK_BENCH_FRAME_H

#include <arpa/inet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
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

/* Run the calling thread on cpu only (~0u: leave it be). */
static inline void bench_pin(unsigned int cpu)
{
	cpu_set_t set;

	if (cpu == ~0u)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* dev's MAC address into mac; -1 after telling why. */
static inline int bench_if_mac(const char *prog, const char *dev, uint8_t *mac)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	err = fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr);
	if (err)
		fprintf(stderr, "%s: SIOCGIFHWADDR %s failed\n", prog, dev);
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (fd >= 0)
		close(fd);
	return err ? -1 : 0;
}

/* "aa:bb:cc:dd:ee:ff" into mac; -1 if it is not one. */
static inline int bench_parse_mac(const char *s, uint8_t *mac)
{
	return s && sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
			   &mac[2], &mac[3], &mac[4], &mac[5]) == 6 ? 0 : -1;
}

#endif
