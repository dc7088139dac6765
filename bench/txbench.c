// SPDX-License-Identifier: GPL-2.0
/*
 * txbench: one UDP sender for the TX benchmark, for -t seconds, as fast as
 * it can. The rate is measured at the peer (its rx_packets, with a drop at
 * its ingress) by bench/run-guest, the same way for every sender.
 *
 *   txbench -m MODE -i DEV -d DSTMAC -s SRCIP -D DSTIP -p PORT [-l LEN]
 *           [-t SECONDS] [-c CPU]
 *
 * MODE:
 *   vmak-copy   vmak ring, frames copied into skbs (VMAK_BIND_TX_COPY)
 *   vmak-zc     vmak ring, VMAK_BIND_TX_ZEROCOPY (frames over 256 bytes)
 *   txring      AF_PACKET PACKET_TX_RING (TPACKET_V2), QDISC_BYPASS
 *   afxdp       AF_XDP, generic (SKB) mode, copy (libxdp)
 *   udp         kernel UDP socket, sendmmsg() batches of 64
 * (AF_PACKET sendmmsg is bench/udpgen.)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_LIBXDP
#include <xdp/xsk.h>
#include <linux/if_link.h>
#endif

#include "frame.h"
#include "linux/vmak.h"
#include "vmak/ring.h"
#include "vmak/vmak.h"

#define BATCH 64
#define NFRAMES 4096
#define FSIZE 2048

static const char *dev, *sip, *dip;
static uint8_t dmac[6], smac[6];
static unsigned int port, plen = 64;
static double secs = 5;

/* One frame of the benchmark's flow at f; returns its length. */
static uint32_t frame(uint8_t *f)
{
	return bench_udp_frame(f, smac, dmac, sip, dip, 10000, (uint16_t)port, plen);
}

static void done(const char *mode, uint64_t sent, double t)
{
	printf("%s sent %llu frames in %.2f s: %.0f pps\n", mode,
	       (unsigned long long)sent, t, sent / t);
}

static int run_vmak(int zc)
{
	struct vmak_ringset_config cfg;
	struct vmak_ringset rs;
	uint64_t sent = 0;
	uint32_t flen, idx, n;
	double t0, t;
	int err;

	vmak_ringset_config_default(&cfg);
	cfg.ifindex = if_nametoindex(dev);
	cfg.rx_size = cfg.fill_size = 0;
	cfg.tx_size = 2048;
	cfg.comp_size = 4096;
	cfg.umem_len = (uint64_t)NFRAMES * FSIZE;
	cfg.chunk_size = FSIZE;
	cfg.bind_flags = zc ? VMAK_BIND_TX_ZEROCOPY : VMAK_BIND_TX_COPY;
	err = vmak_ringset_open(&rs, &cfg);
	if (err) {
		fprintf(stderr, "txbench: vmak: %s\n", vmak_strerror(err));
		return 1;
	}
	flen = frame(rs.umem);
	for (uint32_t i = 1; i < NFRAMES; i++)
		memcpy((uint8_t *)rs.umem + (size_t)i * FSIZE, rs.umem, flen);

	/* Frames cycle through the UMEM; a completion frees its frame. */
	uint32_t next = 0, inflight = 0;
	t0 = bench_now();
	do {
		n = vmak_ring_peek(rs.comp, 4096, &idx);
		vmak_ring_release(rs.comp, n);
		inflight -= n;
		sent += n;
		n = vmak_ring_free(rs.tx, BATCH);
		if (n > NFRAMES - inflight)
			n = NFRAMES - inflight;
		if (n && vmak_ring_reserve(rs.tx, n, &idx) == n) {
			for (uint32_t i = 0; i < n; i++) {
				struct vmak_tx_desc *d = vmak_ring_tx_desc(rs.tx, idx + i);

				d->addr = (uint64_t)(next++ % NFRAMES) * FSIZE;
				d->len = flen;
				d->options = 0;
			}
			vmak_ring_submit(rs.tx, n);
			inflight += n;
		}
		sendto(rs.fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		t = bench_now();
	} while (t - t0 < secs);
	done(zc ? "vmak-zc" : "vmak-copy", sent, t - t0);
	vmak_ringset_close(&rs);
	return 0;
}

static int run_txring(void)
{
	struct tpacket_req req = { .tp_block_size = 1 << 16, .tp_block_nr = 64,
				   .tp_frame_size = FSIZE };
	int ver = TPACKET_V2, one = 1, fd;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	uint32_t nframes, cur = 0, flen;
	uint64_t sent = 0;
	uint8_t *ring;
	double t0, t;

	req.tp_frame_nr = req.tp_block_size / req.tp_frame_size * req.tp_block_nr;
	nframes = req.tp_frame_nr;
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0 || setsockopt(fd, SOL_PACKET, PACKET_VERSION, &ver, sizeof(ver)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req))) {
		perror("txbench: PACKET_TX_RING");
		return 1;
	}
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	sll.sll_ifindex = (int)if_nametoindex(dev);
	sll.sll_protocol = htons(ETH_P_IP);
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		perror("txbench: bind");
		return 1;
	}
	ring = mmap(NULL, (size_t)req.tp_block_size * req.tp_block_nr,
		    PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		perror("txbench: mmap");
		return 1;
	}
	t0 = bench_now();
	do {
		/* Fill every free slot, then one send() flushes them. */
		for (;;) {
			struct tpacket2_hdr *h = (void *)(ring + (size_t)cur * FSIZE);

			if (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) !=
			    TP_STATUS_AVAILABLE)
				break;
			flen = frame((uint8_t *)h + TPACKET2_HDRLEN - sizeof(struct sockaddr_ll));
			h->tp_len = flen;
			__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST,
					 __ATOMIC_RELEASE);
			cur = (cur + 1) % nframes;
			sent++;
		}
		send(fd, NULL, 0, MSG_DONTWAIT);
		t = bench_now();
	} while (t - t0 < secs);
	done("txring", sent, t - t0);
	return 0;
}

#ifdef HAVE_LIBXDP
static int run_afxdp(void)
{
	struct xsk_socket_config scfg = {
		.tx_size = 2048, .rx_size = 2048,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = XDP_FLAGS_SKB_MODE, .bind_flags = XDP_COPY,
	};
	struct xsk_umem_config ucfg = {
		.fill_size = 2048, .comp_size = 4096, .frame_size = FSIZE,
	};
	size_t len = (size_t)NFRAMES * FSIZE;
	/* Zeroed: libxdp does not set every cached index. */
	struct xsk_ring_prod fq = { 0 }, tx = { 0 };
	struct xsk_ring_cons cq = { 0 };
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	uint32_t flen, idx, n, next = 0, inflight = 0;
	uint64_t sent = 0;
	double t0, t;
	void *area;
	int err;

	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return 1;
	err = xsk_umem__create(&umem, area, len, &fq, &cq, &ucfg);
	if (!err)
		err = xsk_socket__create(&xsk, dev, 0, umem, NULL, &tx, &scfg);
	if (err) {
		fprintf(stderr, "txbench: afxdp: %s\n", strerror(-err));
		return 1;
	}
	flen = frame(area);
	for (uint32_t i = 1; i < NFRAMES; i++)
		memcpy((uint8_t *)area + (size_t)i * FSIZE, area, flen);
	t0 = bench_now();
	do {
		n = xsk_ring_cons__peek(&cq, 4096, &idx);
		xsk_ring_cons__release(&cq, n);
		inflight -= n;
		sent += n;
		n = BATCH;
		if (n > NFRAMES - inflight)
			n = NFRAMES - inflight;
		if (n && xsk_ring_prod__reserve(&tx, n, &idx) == n) {
			for (uint32_t i = 0; i < n; i++) {
				struct xdp_desc *d = xsk_ring_prod__tx_desc(&tx, idx + i);

				d->addr = (uint64_t)(next++ % NFRAMES) * FSIZE;
				d->len = flen;
			}
			xsk_ring_prod__submit(&tx, n);
			inflight += n;
		}
		sendto(xsk_socket__fd(xsk), NULL, 0, MSG_DONTWAIT, NULL, 0);
		t = bench_now();
	} while (t - t0 < secs);
	done("afxdp", sent, t - t0);
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	return 0;
}
#endif

static int run_udp(void)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	static uint8_t payload[2048];
	struct mmsghdr msgs[BATCH];
	struct iovec iov = { payload, 0 };
	uint64_t sent = 0;
	double t0, t;
	int fd;

	iov.iov_len = plen;
	inet_pton(AF_INET, dip, &dst.sin_addr);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
		perror("txbench: udp");
		return 1;
	}
	for (int i = 0; i < BATCH; i++) {
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	t0 = bench_now();
	do {
		int n = sendmmsg(fd, msgs, BATCH, 0);

		if (n > 0)
			sent += (uint64_t)n;
		t = bench_now();
	} while (t - t0 < secs);
	done("udp", sent, t - t0);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: txbench -m vmak-copy|vmak-zc|txring|afxdp|udp -i DEV "
		"-d DSTMAC -s SRCIP -D DSTIP -p PORT [-l PAYLOAD] [-t SECONDS] [-c CPU]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *dm = NULL;
	unsigned int cpu = ~0u;
	int c;

	while ((c = getopt(argc, argv, "m:i:d:s:D:p:l:t:c:")) != -1) {
		switch (c) {
		case 'm': mode = optarg; break;
		case 'i': dev = optarg; break;
		case 'd': dm = optarg; break;
		case 's': sip = optarg; break;
		case 'D': dip = optarg; break;
		case 'p': port = (unsigned int)atoi(optarg); break;
		case 'l': plen = (unsigned int)atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'c': cpu = (unsigned int)atoi(optarg); break;
		default: usage();
		}
	}
	if (!mode || !dev || !dm || !sip || !dip || !port || plen > 1472 ||
	    bench_parse_mac(dm, dmac))
		usage();
	bench_pin(cpu);
	if (bench_if_mac("txbench", dev, smac))
		return 1;

	if (!strcmp(mode, "vmak-copy"))
		return run_vmak(0);
	if (!strcmp(mode, "vmak-zc"))
		return run_vmak(1);
	if (!strcmp(mode, "txring"))
		return run_txring();
#ifdef HAVE_LIBXDP
	if (!strcmp(mode, "afxdp"))
		return run_afxdp();
#endif
	if (!strcmp(mode, "udp"))
		return run_udp();
	usage();
	return 2;
}
