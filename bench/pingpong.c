// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong: UDP ping-pong latency, one datagram in flight, both sides
 * busy-polling. The echo side turns each datagram around (addresses and
 * ports swapped); the ping side measures the round trip and reports half
 * of it, as sockperf does.
 *
 *   pingpong -m MODE -r ping|echo -i DEV -d PEERMAC -s LOCALIP -D PEERIP
 *            -p PORT [-l LEN] [-n COUNT] [-w WARMUP] [-t SECONDS] [-c CPU]
 *
 * MODE:
 *   vmak    a vmak ring set steering the side's own UDP socket; the echo
 *           sends the received chunk straight back from the UMEM
 *   afxdp   AF_XDP, generic (SKB) mode, copy, libxdp's default program
 *   udp     kernel UDP socket, SO_BUSY_POLL 50 us, non-blocking recv loop
 *
 * The echo listens on PORT; the ping sends from PORT + 1. Output of the
 * ping side, one line (microseconds, half round trip):
 *   MODE avg A p50 B p99 C p999 D samples N lost L
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef HAVE_LIBXDP
#include <xdp/xsk.h>
#include <linux/if_link.h>
#endif

#include "frame.h"
#include "linux/vmak.h"
#include "vmak/ring.h"
#include "vmak/vmak.h"

#define NCHUNK	1024
#define CHUNK	2048
#define NRX	256		/* chunks 0..255 receive; 512.. hold pings */
#define PING0	512

static const char *dev, *sip, *dip;
static uint8_t dmac[6], smac[6];
static unsigned int port, plen = 64, count = 20000, warmup = 1000;
static double secs = 60;
static int echo;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- frames ------------------------------------------------------------ */

#define HDRS (14 + 20 + 8)

/* Turn a received Ethernet/IPv4/UDP frame around, in place. */
static void swap_frame(uint8_t *f)
{
	uint8_t t[6];

	memcpy(t, f, 6);
	memcpy(f, f + 6, 6);
	memcpy(f + 6, t, 6);
	memcpy(t, f + 14 + 12, 4);		/* IPv4 saddr <-> daddr */
	memcpy(f + 14 + 12, f + 14 + 16, 4);
	memcpy(f + 14 + 16, t, 4);
	memcpy(t, f + 34, 2);			/* UDP ports */
	memcpy(f + 34, f + 36, 2);
	memcpy(f + 36, t, 2);
	/* Checksums unchanged: each swap permutes the summed words. */
}

static uint32_t seq_of(const uint8_t *f)
{
	uint32_t s;

	memcpy(&s, f + HDRS, 4);
	return s;
}

/* ---- samples ------------------------------------------------------------ */

static uint64_t *samples;
static unsigned int nsamples, lost;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *mode)
{
	double sum = 0;
	unsigned int n = nsamples;

	if (!n) {
		printf("%s avg 0 p50 0 p99 0 p999 0 samples 0 lost %u\n", mode, lost);
		return;
	}
	qsort(samples, n, sizeof(*samples), cmp_u64);
	for (unsigned int i = 0; i < n; i++)
		sum += (double)samples[i];
	printf("%s avg %.3f p50 %.3f p99 %.3f p999 %.3f samples %u lost %u\n", mode,
	       sum / n / 1e3, samples[n / 2] / 1e3, samples[(uint64_t)n * 99 / 100] / 1e3,
	       samples[(uint64_t)n * 999 / 1000] / 1e3, n, lost);
}

/* Record round trip i (warm-up ones are not kept). */
static void sample(unsigned int i, uint64_t rtt)
{
	if (i >= warmup)
		samples[nsamples++] = rtt / 2;
}

/*
 * A frame ring in user memory (vmak or AF_XDP): the same loop drives
 * both. rx_peek returns a received frame's UMEM address and length;
 * rx_done gives its chunk back; tx sends UMEM bytes and kicks; reap takes
 * completions and returns their chunks to the fill ring when asked.
 */
struct fring {
	uint8_t *umem;
	int (*rx_peek)(struct fring *r, uint64_t *addr, uint32_t *len);
	void (*rx_done)(struct fring *r, uint64_t addr);
	int (*tx)(struct fring *r, uint64_t addr, uint32_t len);
	void (*reap)(struct fring *r, int refill);
	void *priv;
};

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * With PINGPONG_PHASES set, the echo times its send (the frame turned
 * around and kicked: two clock reads, the clock's own cost taken off)
 * and prints "phases send A clock B n N", nanoseconds per datagram, when
 * SIGTERM or its time ends it (xtbench echo prints the same).
 */
static void fring_echo(struct fring *r)
{
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9), addr, t1, ts = 0, tc;
	int phases = getenv("PINGPONG_PHASES") != NULL;
	uint32_t len;
	long hits = 0;

	signal(SIGTERM, on_term);
	while (!stop && now_ns() < end) {
		r->reap(r, 1);
		if (!r->rx_peek(r, &addr, &len))
			continue;
		t1 = phases ? now_ns() : 0;
		swap_frame(r->umem + addr);
		/* The chunk goes out as it came; its completion refills. */
		if (r->tx(r, addr, len))
			r->rx_done(r, addr);
		if (phases) {
			ts += now_ns() - t1;
			hits++;
		}
	}
	if (phases && hits) {
		t1 = now_ns();
		for (int i = 0; i < 1000; i++)
			now_ns();
		tc = (now_ns() - t1) / 1001;
		printf("phases send %ld clock %ld n %ld\n", (long)(ts / hits - tc),
		       (long)tc, hits);
		fflush(stdout);
	}
}

static void fring_ping(struct fring *r)
{
	uint32_t flen = bench_udp_frame(r->umem + PING0 * CHUNK, smac, dmac, sip, dip,
					(uint16_t)(port + 1), (uint16_t)port, plen);
	uint64_t deadline = now_ns() + (uint64_t)(secs * 1e9);

	for (unsigned int i = 0; i < count + warmup && now_ns() < deadline; i++) {
		uint64_t a = (uint64_t)(PING0 + i % 64) * CHUNK, t0, t, addr;
		uint32_t len;

		if (i % 64)
			memcpy(r->umem + a, r->umem + PING0 * CHUNK, flen);
		memcpy(r->umem + a + HDRS, &i, 4);
		r->reap(r, 0);
		t0 = now_ns();
		if (r->tx(r, a, flen)) {
			lost++;
			continue;
		}
		for (;;) {
			t = now_ns();
			if (t - t0 > 1000000000ull) {	/* 1 s: lost */
				lost++;
				break;
			}
			if (!r->rx_peek(r, &addr, &len))
				continue;
			if (len >= HDRS + 4 && seq_of(r->umem + addr) == i) {
				sample(i, t - t0);
				r->rx_done(r, addr);
				break;
			}
			r->rx_done(r, addr);	/* a late one */
		}
	}
}

/* Set up: tell the runner, then echo or ping. */
static void fring_run(struct fring *r)
{
	printf("ready\n");
	fflush(stdout);
	if (echo)
		fring_echo(r);
	else
		fring_ping(r);
}

/* ---- vmak ----------------------------------------------------------------- */

static int vk_rx_peek(struct fring *r, uint64_t *addr, uint32_t *len)
{
	struct vmak_ringset *rs = r->priv;
	uint32_t idx;

	if (!vmak_ring_peek(rs->rx, 1, &idx))
		return 0;
	*addr = vmak_ring_rx_desc(rs->rx, idx)->addr;
	*len = vmak_ring_rx_desc(rs->rx, idx)->len;
	vmak_ring_release(rs->rx, 1);
	return 1;
}

static void vk_rx_done(struct fring *r, uint64_t addr)
{
	struct vmak_ringset *rs = r->priv;
	uint32_t idx;

	if (vmak_ring_reserve(rs->fill, 1, &idx)) {
		*vmak_ring_fill_addr(rs->fill, idx) = addr;
		vmak_ring_submit(rs->fill, 1);
	}
}

static int vk_tx(struct fring *r, uint64_t addr, uint32_t len)
{
	struct vmak_ringset *rs = r->priv;
	struct vmak_tx_desc *d;
	uint32_t idx;

	if (!vmak_ring_reserve(rs->tx, 1, &idx))
		return -1;
	d = vmak_ring_tx_desc(rs->tx, idx);
	d->addr = addr;
	d->len = len;
	d->options = 0;
	vmak_ring_submit(rs->tx, 1);
	sendto(rs->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
	return 0;
}

static void vk_reap(struct fring *r, int refill)
{
	struct vmak_ringset *rs = r->priv;
	uint32_t idx, n = vmak_ring_peek(rs->comp, 64, &idx);

	for (uint32_t i = 0; refill && i < n; i++)
		vk_rx_done(r, vmak_ring_comp_addr(rs->comp, idx + i));
	vmak_ring_release(rs->comp, n);
}

static int udp_socket(uint16_t lport, int connected)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(lport) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	inet_pton(AF_INET, sip, &a.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	if (connected) {
		a.sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, dip, &a.sin_addr);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
			return -1;
	}
	return fd;
}

static int run_vmak(void)
{
	struct vmak_ringset_config cfg;
	struct vmak_ringset rs;
	struct fring r = { .rx_peek = vk_rx_peek, .rx_done = vk_rx_done,
			   .tx = vk_tx, .reap = vk_reap, .priv = &rs };
	int udp, err;

	udp = udp_socket((uint16_t)(echo ? port : port + 1), !echo);
	vmak_ringset_config_default(&cfg);
	cfg.ifindex = if_nametoindex(dev);
	cfg.rx_size = cfg.fill_size = cfg.tx_size = cfg.comp_size = NRX;
	cfg.umem_len = (uint64_t)NCHUNK * CHUNK;
	cfg.chunk_size = CHUNK;
	err = vmak_ringset_open(&rs, &cfg);
	if (!err && udp >= 0)
		err = vmak_rule_add_socket(rs.fd, udp, 1);
	if (err || udp < 0) {
		fprintf(stderr, "pingpong: vmak: %s\n", vmak_strerror(err ? err : -errno));
		return 1;
	}
	vmak_ringset_fill(&rs, 0, NRX);
	r.umem = rs.umem;
	fring_run(&r);
	vmak_ringset_close(&rs);
	close(udp);
	return 0;
}

/* ---- AF_XDP ----------------------------------------------------------------- */

#ifdef HAVE_LIBXDP
struct xk {
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	struct xsk_socket *xsk;
};

static int xk_rx_peek(struct fring *r, uint64_t *addr, uint32_t *len)
{
	struct xk *x = r->priv;
	uint32_t idx;

	if (!xsk_ring_cons__peek(&x->rx, 1, &idx))
		return 0;
	*addr = xsk_ring_cons__rx_desc(&x->rx, idx)->addr;
	*len = xsk_ring_cons__rx_desc(&x->rx, idx)->len;
	xsk_ring_cons__release(&x->rx, 1);
	return 1;
}

static void xk_rx_done(struct fring *r, uint64_t addr)
{
	struct xk *x = r->priv;
	uint32_t idx;

	if (xsk_ring_prod__reserve(&x->fq, 1, &idx)) {
		*xsk_ring_prod__fill_addr(&x->fq, idx) = addr & ~(uint64_t)(CHUNK - 1);
		xsk_ring_prod__submit(&x->fq, 1);
	}
}

static int xk_tx(struct fring *r, uint64_t addr, uint32_t len)
{
	struct xk *x = r->priv;
	uint32_t idx;

	if (!xsk_ring_prod__reserve(&x->tx, 1, &idx))
		return -1;
	xsk_ring_prod__tx_desc(&x->tx, idx)->addr = addr;
	xsk_ring_prod__tx_desc(&x->tx, idx)->len = len;
	xsk_ring_prod__submit(&x->tx, 1);
	sendto(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0);
	return 0;
}

static void xk_reap(struct fring *r, int refill)
{
	struct xk *x = r->priv;
	uint32_t idx, n = xsk_ring_cons__peek(&x->cq, 64, &idx);

	for (uint32_t i = 0; refill && i < n; i++)
		xk_rx_done(r, *xsk_ring_cons__comp_addr(&x->cq, idx + i));
	xsk_ring_cons__release(&x->cq, n);
}

static int run_afxdp(void)
{
	struct xsk_socket_config scfg = {
		.rx_size = NRX, .tx_size = NRX,
		.xdp_flags = XDP_FLAGS_SKB_MODE, .bind_flags = XDP_COPY,
	};
	struct xsk_umem_config ucfg = {
		.fill_size = NRX, .comp_size = NRX, .frame_size = CHUNK,
	};
	size_t len = (size_t)NCHUNK * CHUNK;
	struct fring r = { .rx_peek = xk_rx_peek, .rx_done = xk_rx_done,
			   .tx = xk_tx, .reap = xk_reap };
	struct xsk_umem *umem;
	struct xk x = { 0 };	/* libxdp leaves the fill ring's cached_prod alone */
	uint32_t idx;
	int err;

	r.priv = &x;
	r.umem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r.umem == MAP_FAILED) {
		perror("pingpong: afxdp: mmap");
		return 1;
	}
	err = xsk_umem__create(&umem, r.umem, len, &x.fq, &x.cq, &ucfg);
	if (!err)
		err = xsk_socket__create(&x.xsk, dev, 0, umem, &x.rx, &x.tx, &scfg);
	if (err) {
		fprintf(stderr, "pingpong: afxdp: %s\n", strerror(-err));
		return 1;
	}
	if (xsk_ring_prod__reserve(&x.fq, NRX, &idx) != NRX) {
		fprintf(stderr, "pingpong: afxdp: cannot fill the FILL ring\n");
		return 1;
	}
	for (uint32_t i = 0; i < NRX; i++)
		*xsk_ring_prod__fill_addr(&x.fq, idx + i) = (uint64_t)i * CHUNK;
	xsk_ring_prod__submit(&x.fq, NRX);
	fring_run(&r);
	xsk_socket__delete(x.xsk);
	xsk_umem__delete(umem);
	return 0;
}
#endif

/* ---- kernel UDP ---------------------------------------------------------- */

static int run_udp(void)
{
	int fd = udp_socket((uint16_t)(echo ? port : port + 1), !echo), busy = 50;
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	uint8_t buf[2048] = { 0 };

	if (fd < 0) {
		perror("pingpong: udp");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &busy, sizeof(busy));
	printf("ready\n");
	fflush(stdout);
	if (echo) {
		while (now_ns() < end) {
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
					     (struct sockaddr *)&from, &fl);

			if (n > 0)
				sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
		}
		return 0;
	}
	for (unsigned int i = 0; i < count + warmup && now_ns() < end; i++) {
		uint64_t t0 = now_ns(), t;
		uint32_t got;

		memcpy(buf, &i, 4);
		if (send(fd, buf, plen, 0) < 0) {
			lost++;
			continue;
		}
		for (;;) {
			ssize_t n = recv(fd, buf + 1024, 1024, MSG_DONTWAIT);

			t = now_ns();
			if (n >= 4 && (memcpy(&got, buf + 1024, 4), got == i)) {
				sample(i, t - t0);
				break;
			}
			if (t - t0 > 1000000000ull) {
				lost++;
				break;
			}
		}
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: pingpong -m vmak|afxdp|udp -r ping|echo -i DEV -d PEERMAC "
		"-s LOCALIP -D PEERIP -p PORT [-l LEN] [-n COUNT] [-w WARMUP] "
		"[-t SECONDS] [-c CPU]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *role = NULL, *dm = NULL;
	unsigned int cpu = ~0u;
	int c, rc;

	while ((c = getopt(argc, argv, "m:r:i:d:s:D:p:l:n:w:t:c:")) != -1) {
		switch (c) {
		case 'm': mode = optarg; break;
		case 'r': role = optarg; break;
		case 'i': dev = optarg; break;
		case 'd': dm = optarg; break;
		case 's': sip = optarg; break;
		case 'D': dip = optarg; break;
		case 'p': port = (unsigned int)atoi(optarg); break;
		case 'l': plen = (unsigned int)atoi(optarg); break;
		case 'n': count = (unsigned int)atoi(optarg); break;
		case 'w': warmup = (unsigned int)atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'c': cpu = (unsigned int)atoi(optarg); break;
		default: usage();
		}
	}
	if (!mode || !role || !dev || !dm || !sip || !dip || !port ||
	    plen < 4 || plen > 1472 || (strcmp(role, "ping") && strcmp(role, "echo")) ||
	    bench_parse_mac(dm, dmac))
		usage();
	echo = !strcmp(role, "echo");
	bench_pin(cpu);
	if (bench_if_mac("pingpong", dev, smac))
		return 1;
	samples = calloc(count + 1, sizeof(*samples));
	if (!samples)
		return 1;

	if (!strcmp(mode, "vmak"))
		rc = run_vmak();
#ifdef HAVE_LIBXDP
	else if (!strcmp(mode, "afxdp"))
		rc = run_afxdp();
#endif
	else if (!strcmp(mode, "udp"))
		rc = run_udp();
	else
		usage();
	if (!rc && !echo)
		report(mode);
	return rc;
}
