// SPDX-License-Identifier: GPL-2.0
/*
 * udpgen: the benchmarks' traffic generator. Builds Ethernet/IPv4/UDP
 * frames once and sends them with sendmmsg() on an AF_PACKET socket with
 * PACKET_QDISC_BYPASS, so the sender is cheaper per packet than any
 * receiver it feeds.
 *
 *   udpgen -i DEV -d DSTMAC -s SRCIP -D DSTIP -p PORT [-l LEN] [-f FLOWS]
 *          [-t SECONDS] [-c CPU] [-r PPS [-T USEC]]
 *
 * -r PPS paces the sender: datagram k is due k/PPS seconds after the
 * start, and the sender sleeps (on an absolute deadline, with a timer
 * slack of 1 ns) until the next is due, then sends what is due in one call
 * (at most 64). -T USEC wakes it on a tick of USEC instead: at most
 * 1,000,000/USEC wakes a second, each sending the datagrams due by then
 * (PPS x USEC / 1,000,000 of them, back to back), for a sender that could
 * not wake once per datagram. It then also reports how many calls it made
 * and the largest burst, so a reader can see how even the load was.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sched.h>
#include <sys/prctl.h>
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
		"[-l PAYLOAD] [-f FLOWS] [-t SECONDS] [-c CPU] [-r PPS [-T USEC]]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *dmac = NULL, *sip = NULL, *dip = NULL;
	unsigned int port = 0, len = 64, flows = 1, cpu = ~0u, one = 1;
	double secs = 5, rate = 0, tick = 0, t0, t = 0;
	static uint8_t frames[BATCH][2048];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	uint8_t smac[6], dm[6];
	uint64_t sent = 0, calls = 0, burst = 0;
	int c, fd;

	while ((c = getopt(argc, argv, "i:d:s:D:p:l:f:t:c:r:T:")) != -1) {
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
		case 'r': rate = atof(optarg); break;
		case 'T': tick = atof(optarg) / 1e6; break;
		default: usage();
		}
	}
	if (!dev || !dmac || !sip || !dip || !port || len > 1472 || !flows || rate < 0 ||
	    tick < 0)
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

	/* a paced sender's sleeps end when asked, not up to 50 us later */
	if (rate > 0)
		prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	t = t0 = bench_now();
	do {
		unsigned int want = BATCH;
		int n;

		if (rate > 0) {
			/* datagrams due by now (by the last tick), less those sent */
			double el = tick > 0 ? floor((t - t0) / tick + 1e-9) * tick : t - t0;
			double due = el * rate - (double)sent;

			if (due < 1) {
				double at = (double)(sent + 1) / rate;

				/* the next tick at or after the next deadline */
				if (tick > 0)
					at = ceil(at / tick - 1e-9) * tick;
				at += t0;
				struct timespec ts = {
					.tv_sec = (time_t)at,
					.tv_nsec = (long)((at - (double)(time_t)at) * 1e9),
				};

				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
				t = bench_now();
				continue;
			}
			want = due < BATCH ? (unsigned int)due : BATCH;
		}
		n = sendmmsg(fd, msgs, want, 0);
		calls++;
		if (n > 0) {
			sent += (uint64_t)n;
			if ((uint64_t)n > burst)
				burst = (uint64_t)n;
		} else if (errno != ENOBUFS && errno != EAGAIN) {
			break;
		}
		t = bench_now();
	} while (t - t0 < secs);
	printf("sent %llu packets in %.2f s: %.0f pps\n",
	       (unsigned long long)sent, t - t0, sent / (t - t0));
	if (rate > 0)
		printf("paced %.0f pps: %llu calls, largest burst %llu\n", rate,
		       (unsigned long long)calls, (unsigned long long)burst);
	return 0;
}
