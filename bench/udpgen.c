// SPDX-License-Identifier: GPL-2.0
/*
 * udpgen: the benchmarks' traffic generator. Builds Ethernet/IPv4/UDP
 * frames once and sends them with sendmmsg() on an AF_PACKET socket with
 * PACKET_QDISC_BYPASS, so the sender is cheaper per packet than any
 * receiver it feeds.
 *
 *   udpgen -i DEV -d DSTMAC -s SRCIP -D DSTIP -p PORT [-l LEN] [-f FLOWS]
 *          [-t SECONDS] [-c CPU]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"

#define BATCH 64

static void usage(void)
{
	fprintf(stderr, "usage: udpgen -i DEV -d DSTMAC -s SRCIP -D DSTIP -p PORT "
		"[-l PAYLOAD] [-f FLOWS] [-t SECONDS] [-c CPU]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *dmac = NULL, *sip = NULL, *dip = NULL;
	unsigned int port = 0, len = 64, flows = 1, cpu = ~0u, one = 1;
	double secs = 5, t0, t = 0;
	static uint8_t frames[BATCH][2048];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	uint8_t smac[6], dm[6];
	uint64_t sent = 0;
	int c, fd;

	while ((c = getopt(argc, argv, "i:d:s:D:p:l:f:t:c:")) != -1) {
		switch (c) {
		case 'i': dev = optarg; break;
		case 'd': dmac = optarg; break;
		case 's': sip = optarg; break;
		case 'D': dip = optarg; break;
		case 'p': port = (unsigned int)atoi(optarg); break;
		case 'l': len = (unsigned int)atoi(optarg); break;
		case 'f': flows = (unsigned int)atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'c': cpu = (unsigned int)atoi(optarg); break;
		default: usage();
		}
	}
	if (!dev || !dmac || !sip || !dip || !port || len > 1472 || !flows)
		usage();
	if (bench_parse_mac(dmac, dm))
		usage();
	bench_pin(cpu);

	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		perror("udpgen: socket");
		return 1;
	}
	if (bench_if_mac("udpgen", dev, smac))
		return 1;
	sll.sll_ifindex = (int)if_nametoindex(dev);
	sll.sll_protocol = htons(ETH_P_IP);
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		perror("udpgen: bind");
		return 1;
	}
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));

	for (int i = 0; i < BATCH; i++) {
		uint8_t *f = frames[i];
		uint32_t flen = bench_udp_frame(f, smac, dm, sip, dip,
						(uint16_t)(10000 + i % flows),
						(uint16_t)port, len);

		iov[i].iov_base = f;
		iov[i].iov_len = flen;
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}

	t0 = bench_now();
	do {
		int n = sendmmsg(fd, msgs, BATCH, 0);

		if (n > 0)
			sent += (uint64_t)n;
		else if (errno != ENOBUFS && errno != EAGAIN)
			break;
		t = bench_now();
	} while (t - t0 < secs);
	printf("sent %llu packets in %.2f s: %.0f pps\n",
	       (unsigned long long)sent, t - t0, sent / (t - t0));
	return 0;
}
