// SPDX-License-Identifier: GPL-2.0
/*
 * rxbench: count UDP datagrams to one port received over a fixed window,
 * by one of several receivers, in the netns and on the device given.
 *
 *   rxbench -m MODE -i DEV -p PORT [-a ADDR] [-w WARMUP] [-t SECONDS]
 *           [-r RULES] [-c CPU] [-M COUNT:USEC] [-d SECONDS] [-R PPS -u USEC]
 *
 * MODE: vmak-busy   vmak ring, busy-polling the RX ring
 *       vmak-poll   vmak ring, sleeping in poll() when empty (the module's
 *                   default: no wake moderation)
 *       vmak-mod    vmak-poll with wake moderation: 64 packets or 1 ms
 *                   (-M COUNT:USEC sets another)
 *       vmak-ts     vmak-busy with software timestamps (VMAK_BIND_RX_TIMESTAMP),
 *                   the one vmak mode that reads the clock per packet, as
 *                   AF_PACKET does
 *       recvfrom    kernel UDP socket, blocking recvfrom(), one per call
 *       recvmmsg    kernel UDP socket, recvmmsg() batches of 64
 *       zcopy       the extra API (run preloaded): blocking recvfrom_zcopy(),
 *                   one datagram per call, freed at once (free_packets())
 *       xtreme      socketXtreme (preloaded, VMA_SOCKETXTREME=1): sleeping in
 *                   poll() on the socket's ring fd, then socketxtreme_poll()
 *                   in batches of 32, each packet freed
 *       recvmmsg-busy  the same, non-blocking in a loop, SO_BUSY_POLL 50 us
 *                   (the socket's NAPI polled from the call where the
 *                   device has NAPI; on veth a spinning receiver)
 *       afpacket    AF_PACKET TPACKET_V3 ring (counts UDP to PORT)
 *       afxdp       AF_XDP socket in generic (SKB) mode, copy (libxdp)
 *       afxdp-busy  the same, spinning on its RX ring instead of sleeping
 *                   in poll(), SO_PREFER_BUSY_POLL and SO_BUSY_POLL 50 us
 *       sink        no receiver: counts packets arriving at DEV (the
 *                   caller drops them), the sender's ceiling
 *       idle        nothing: one sleep over the window, for what the
 *                   machine costs with no load (-i, -p still required)
 *       calib       a known load on the CPU given: every 1/PPS seconds
 *                   (-R) it spins USEC microseconds (-u) on its own CPU
 *                   clock and sleeps to the next deadline; its "own" CPU
 *                   is the one to check the busy estimate against
 *
 * -r N installs N extra raw vmak rules (other ports) before measuring.
 * Prints one line: "MODE pps N packets N seconds S", then what the window
 * cost: "arrived" (pps arriving at DEV), "busy0 busy1" (percent of vCPUs 0
 * and 1 not idle), "ipi" (RPS IPIs received, all CPUs, per arriving
 * packet; softnet_stat) and "batch" (packets the stack received per NET_RX
 * softirq run, all CPUs: how many a flush per softirq would cover), and
 * "cost wcount N wsecs S busy0 B0 busy1 B1 tick1 T own O total N": the
 * datagrams counted in the window and its length, vCPU 0 and 1's busy
 * time in percent of the window to two decimals (wall time less the
 * measured idle and iowait), vCPU 1's busy share as the tick samples it
 * (user+nice+system+irq+softirq+steal columns of /proc/stat, which under
 * emulation read far less than the measured figure), the receiver's own
 * CPU time (CLOCK_PROCESS_CPUTIME_ID, all threads) in percent of the
 * window, and every datagram received over the whole run. With -d, the
 * receiver keeps receiving after the window until nothing arrived for
 * that long (at most 10 s), so "total" can be set against what the
 * sender sent. A window still open 30 s after it should have closed ends
 * the run with "MODE window stuck", its state and count.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <mellanox/vma_extra.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_LIBXDP
#include <xdp/xsk.h>
#include <linux/if_link.h>
#endif

#include "frame.h"
#include "vmak/ring.h"
#include "vmak/vmak.h"

static const char *dev, *addr = "0.0.0.0";
static unsigned int port, mod_count = 64, mod_usec = 1000;
static double warmup = 1, secs = 3, drain;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What the machine did up to a moment: read at both ends of the window. */
struct usage {
	uint64_t arrived;	/* rx_packets of the device */
	uint64_t idle[2];	/* idle and iowait ticks of vCPUs 0 and 1 */
	uint64_t tick1;		/* ticks vCPU 1 was sampled busy */
	double own;		/* this process's CPU time, seconds */
	uint64_t ipis;		/* RPS IPIs received, all CPUs */
	uint64_t processed;	/* packets the stack received, all CPUs */
	uint64_t net_rx;	/* NET_RX softirq runs, all CPUs */
};

static uint64_t rx_packets(void)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_packets", dev);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

static void usage_read(struct usage *u)
{
	unsigned long long t[8];
	struct timespec ts;
	char line[512];
	unsigned int cpu;
	FILE *f;

	memset(u, 0, sizeof(*u));
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	u->own = ts.tv_sec + ts.tv_nsec / 1e9;
	u->arrived = rx_packets();
	f = fopen("/proc/stat", "r");
	while (f && fgets(line, sizeof(line), f)) {
		/*
		 * cpuN user nice system idle iowait ...: the busy columns are
		 * sampled by the tick, which a tickless idle CPU woken for
		 * short softirqs skews; idle time is measured, so busy is the
		 * window less idle.
		 */
		if (sscanf(line, "cpu%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu,
			   &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6], &t[7]) != 9 ||
		    cpu > 1)
			continue;
		u->idle[cpu] = t[3] + t[4];
		if (cpu == 1)
			u->tick1 = t[0] + t[1] + t[2] + t[5] + t[6] + t[7];
	}
	if (f)
		fclose(f);
	f = fopen("/proc/net/softnet_stat", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned int v[10];

		/* the first column counts packets received, the tenth RPS
		 * IPIs received
		 */
		if (sscanf(line, "%x %x %x %x %x %x %x %x %x %x", &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) == 10) {
			u->processed += v[0];
			u->ipis += v[9];
		}
	}
	if (f)
		fclose(f);
	f = fopen("/proc/softirqs", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "NET_RX:"), *end;
		unsigned long long n;

		if (!p)
			continue;
		for (p += strlen("NET_RX:");; p = end) {
			n = strtoull(p, &end, 10);
			if (end == p)
				break;
			u->net_rx += n;
		}
	}
	if (f)
		fclose(f);
}

/* The measuring window: counts between warmup and warmup + secs. */
struct window {
	double start, begin, end, last;
	uint64_t at_begin, count, total;
	int state;	/* 0 warming up, 1 measuring, 2 draining, 3 done */
	struct usage u0, u1;
};

static struct window *watched;
static const char *watched_mode;

/* A window that does not close says where it stands, and the run ends. */
static void window_stuck(int sig)
{
	char line[160];
	int n;

	(void)sig;
	n = snprintf(line, sizeof(line), "%s window stuck: state %d, %.1f s since start\n",
		     watched_mode, watched->state, now() - watched->start);
	if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0)
		n = 0;
	_exit(3);
}

/* Set up: tell the runner to start sending, then warm up and measure. */
static void window_init(struct window *w)
{
	printf("ready\n");
	fflush(stdout);
	memset(w, 0, sizeof(*w));
	w->start = now();
	watched = w;
	signal(SIGALRM, window_stuck);
	alarm((unsigned int)(warmup + secs + (drain > 0 ? 10 : 0)) + 30);
}

/* Call often with the running count; returns 0 once the window closed. */
static int window_tick(struct window *w, uint64_t count)
{
	double t = now();

	if (w->state == 0 && t - w->start >= warmup) {
		w->state = 1;
		w->begin = t;
		w->at_begin = count;
		usage_read(&w->u0);
	} else if (w->state == 1 && t - w->begin >= secs) {
		w->state = 2;
		w->end = w->last = t;
		w->count = count - w->at_begin;
		usage_read(&w->u1);
	}
	if (w->state == 2) {
		/* draining: until quiet for the drain time, or 10 s */
		if (count != w->total)
			w->last = t;
		w->total = count;
		if (drain <= 0 || t - w->last >= drain || t - w->end >= 10) {
			w->state = 3;
			return 0;
		}
	}
	w->total = count;
	return 1;
}

static void report(const char *mode, struct window *w)
{
	double s = w->end - w->begin, ticks = s * sysconf(_SC_CLK_TCK);
	uint64_t arrived = w->u1.arrived - w->u0.arrived;
	uint64_t runs = w->u1.net_rx - w->u0.net_rx;

	printf("%s pps %.0f packets %llu seconds %.3f\n", mode,
	       s > 0 ? w->count / s : 0, (unsigned long long)w->count, s);
	if (s <= 0)	/* the window never closed: nothing was measured */
		return;
	printf("arrived %.0f busy0 %.0f busy1 %.0f ipi %.2f batch %.1f\n", arrived / s,
	       100 - 100 * (w->u1.idle[0] - w->u0.idle[0]) / ticks,
	       100 - 100 * (w->u1.idle[1] - w->u0.idle[1]) / ticks,
	       arrived ? (double)(w->u1.ipis - w->u0.ipis) / arrived : 0,
	       runs ? (double)(w->u1.processed - w->u0.processed) / runs : 0);
	printf("cost wcount %llu wsecs %.3f busy0 %.2f busy1 %.2f tick1 %.2f own %.2f total %llu\n",
	       (unsigned long long)w->count, s,
	       100 - 100 * (w->u1.idle[0] - w->u0.idle[0]) / ticks,
	       100 - 100 * (w->u1.idle[1] - w->u0.idle[1]) / ticks,
	       100 * (w->u1.tick1 - w->u0.tick1) / ticks,
	       100 * (w->u1.own - w->u0.own) / s, (unsigned long long)w->total);
	fflush(stdout);
}

/* Sleep until t (CLOCK_MONOTONIC seconds). */
static void sleep_until(double t)
{
	struct timespec ts = { .tv_sec = (time_t)t,
			       .tv_nsec = (long)((t - (double)(time_t)t) * 1e9) };

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* Nothing but the window: what the machine costs with no load. */
static int run_idle(void)
{
	struct window w;

	window_init(&w);
	sleep_until(w.start + warmup);
	window_tick(&w, 0);
	sleep_until(w.begin + secs);
	window_tick(&w, 0);
	report("idle", &w);
	return 0;
}

/*
 * A load whose CPU time the program measures itself: every 1/rate
 * seconds, spin usec microseconds of its own CPU clock, then sleep to the
 * next deadline (timer slack 1 ns). Counts its periods.
 */
static int run_calib(double rate, double usec)
{
	struct window w;
	uint64_t n = 0;
	double next;

	if (rate <= 0 || usec <= 0 || usec * 1e-6 >= 1 / rate) {
		fprintf(stderr, "rxbench: calib needs -R PPS and -u USEC under 1/PPS\n");
		return 2;
	}
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	window_init(&w);
	next = w.start;
	do {
		struct timespec a, b;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		do
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		while ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3 < usec);
		n++;
		next += 1 / rate;
		sleep_until(next);
	} while (window_tick(&w, n));
	report("calib", &w);
	return 0;
}

/*
 * No receiver: the window over the packets arriving at the device, read
 * every 100 ms (the window's length is measured, so the rate does not
 * depend on it; a CPU woken 100 times a second would add to its cost).
 */
static int run_sink(void)
{
	uint64_t first = rx_packets();
	struct window w;

	window_init(&w);
	do
		usleep(100000);
	while (window_tick(&w, rx_packets() - first));
	report("sink", &w);
	return 0;
}

static int udp_socket(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rcvbuf = 4 << 20;

	inet_pton(AF_INET, addr, &sin.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		perror("rxbench: udp socket");
		exit(1);
	}
	return fd;
}

static int run_vmak(const char *mode, int busy, int moderate, int stamp,
		    unsigned int nrules)
{
	struct vmak_ringset_config cfg;
	struct vmak_ringset rs;
	struct window w;
	uint64_t count = 0;
	int udp = udp_socket(), err;

	vmak_ringset_config_default(&cfg);
	cfg.ifindex = if_nametoindex(dev);
	cfg.rx_size = cfg.fill_size = 4096;
	cfg.umem_len = 8192ULL * 2048;
	if (stamp)
		cfg.bind_flags |= VMAK_BIND_RX_TIMESTAMP;
	err = vmak_ringset_open(&rs, &cfg);
	if (err) {
		fprintf(stderr, "rxbench: ring set: %s\n", vmak_strerror(err));
		return 1;
	}
	vmak_ringset_fill(&rs, 0, 4096);
	for (unsigned int i = 0; i < nrules; i++) {
		struct vmak_rule r = {
			.kind = VMAK_RULE_RAW, .cookie = 1000 + i, .af = AF_INET,
			.proto = IPPROTO_UDP,
			.dst_port = htons((uint16_t)(20000 + i % 40000)),
		};
		uint32_t a = htonl(0x0a000000u + i / 40000);

		memcpy(r.dst_addr, &a, 4);
		if (setsockopt(rs.fd, SOL_VMAK, VMAK_RULE_ADD, &r, sizeof(r))) {
			perror("rxbench: rule");
			return 1;
		}
	}
	if (moderate) {
		struct vmak_moderation m = { mod_count, mod_usec };

		if (setsockopt(rs.fd, SOL_VMAK, VMAK_RX_MODERATION, &m, sizeof(m)))
			perror("rxbench: moderation");
	}
	err = vmak_rule_add_socket(rs.fd, udp, 1);
	if (err) {
		fprintf(stderr, "rxbench: rule: %s\n", vmak_strerror(err));
		return 1;
	}

	window_init(&w);
	do {
		uint32_t idx, n = vmak_ring_peek(rs.rx, 256, &idx);

		if (!n) {
			if (!busy) {
				struct pollfd p = { .fd = rs.fd, .events = POLLIN };

				poll(&p, 1, 100);
			}
			continue;
		}
		/* Recycle the chunks straight onto the FILL ring. */
		vmak_ring_recycle(rs.fill, rs.rx, idx, n);
		vmak_ring_release(rs.rx, n);
		count += n;
	} while (window_tick(&w, count));
	report(mode, &w);

	struct vmak_statistics st;

	vmak_statistics_get(rs.fd, &st, sizeof(st));
	fprintf(stderr, "rxbench: vmak rx %llu ring_full %llu fill_empty %llu\n",
		(unsigned long long)st.rx_packets,
		(unsigned long long)st.rx_ring_full,
		(unsigned long long)st.rx_fill_empty);
	vmak_ringset_close(&rs);
	return 0;
}

/* One datagram per blocking recvfrom(), as a plain server reads. */
static int run_recvfrom(void)
{
	static char buf[2048];
	struct timeval tv = { 0, 100000 };
	struct sockaddr_in from;
	struct window w;
	uint64_t count = 0;
	int fd = udp_socket();

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	window_init(&w);
	do {
		socklen_t flen = sizeof(from);

		/* draining (the window is closed): without waiting */
		int fl = w.state >= 2 ? MSG_DONTWAIT : 0;

		if (recvfrom(fd, buf, sizeof(buf), fl, (struct sockaddr *)&from, &flen) >= 0)
			count++;
		else if (fl)
			usleep(1000);
	} while (window_tick(&w, count));
	report("recvfrom", &w);
	return 0;
}

static struct vma_api_t *extra_api(void)
{
	struct vma_api_t *api = vma_get_api();

	if (!api) {
		fprintf(stderr, "rxbench: no extra API (run with LD_PRELOAD=libvmak.so)\n");
		exit(1);
	}
	return api;
}

/* recvfrom_zcopy(), blocking, as recvfrom mode reads; each packet freed. */
static int run_zcopy(void)
{
	struct vma_api_t *api = extra_api();
	static char buf[512];
	struct vma_packets_t *pk = (struct vma_packets_t *)buf;
	struct timeval tv = { 0, 100000 };
	struct window w;
	uint64_t count = 0;
	int fd = udp_socket(), fl;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	window_init(&w);
	do {
		int in = w.state >= 2 ? MSG_DONTWAIT : 0;

		fl = in;
		if (api->recvfrom_zcopy(fd, buf, sizeof(buf), &fl, NULL, NULL) >= 0) {
			if (fl & MSG_VMA_ZCOPY)
				api->free_packets(fd, pk->pkts, pk->n_packet_num);
			count++;
		} else if (in) {
			usleep(1000);
		}
	} while (window_tick(&w, count));
	report("zcopy", &w);
	return 0;
}

/* socketXtreme on the socket's ring fd, sleeping in poll() when empty. */
static int run_xtreme(void)
{
	struct vma_api_t *api = extra_api();
	struct vma_completion_t c[32];
	struct window w;
	uint64_t count = 0;
	int fd = udp_socket(), ring = -1, n, i;

	if (api->get_socket_rings_fds(fd, &ring, 1) != 1) {
		fprintf(stderr, "rxbench: the socket has no ring (VMA_SOCKETXTREME=1?)\n");
		return 1;
	}
	window_init(&w);
	do {
		n = api->socketxtreme_poll(ring, c, 32, 0);
		for (i = 0; i < n; i++)
			if (c[i].events & VMA_SOCKETXTREME_PACKET) {
				count++;
				api->socketxtreme_free_vma_packets(&c[i].packet, 1);
			}
		if (n <= 0) {
			struct pollfd p = { .fd = ring, .events = POLLIN };

			if (w.state >= 2)
				usleep(1000);
			else
				poll(&p, 1, 100);
		}
	} while (window_tick(&w, count));
	report("xtreme", &w);
	return 0;
}

/*
 * busy: the kernel socket's polling mode: non-blocking recvmmsg() in a
 * loop, SO_BUSY_POLL set, instead of sleeping in the call.
 */
static int run_recvmmsg(int busy)
{
	static char bufs[64][2048];
	struct mmsghdr msgs[64];
	struct iovec iov[64];
	struct timeval tv = { 0, 100000 };
	struct window w;
	uint64_t count = 0;
	int fd = udp_socket();

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (busy) {
		int usec = 50;

		setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &usec, sizeof(usec));
	}
	for (int i = 0; i < 64; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = sizeof(bufs[i]);
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	window_init(&w);
	do {
		/*
		 * Draining (the window is closed), a sleeping receiver does
		 * not wait either: a preloaded one that polls may not honour
		 * SO_RCVTIMEO while it spins.
		 */
		int drained = !busy && w.state >= 2;
		int n = recvmmsg(fd, msgs, 64, busy || drained ? MSG_DONTWAIT : 0, NULL);

		if (n > 0)
			count += (uint64_t)n;
		else if (drained)
			usleep(1000);
	} while (window_tick(&w, count));
	report(busy ? "recvmmsg-busy" : "recvmmsg", &w);
	return 0;
}

static int run_afpacket(void)
{
	/*
	 * 16 MiB in 256 blocks of 64 KiB: a block holds some 400 small
	 * frames, so it is retired by its 1 ms timer below 400,000 pps, and
	 * 256 of them hold a quarter of a second of traffic for a receiver
	 * the host holds up.
	 */
	struct tpacket_req3 req = {
		.tp_block_size = 1 << 16, .tp_block_nr = 256,
		.tp_frame_size = 2048, .tp_frame_nr = (1 << 16) / 2048 * 256,
		.tp_retire_blk_tov = 1,
	};
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)), v = TPACKET_V3;
	unsigned int blk = 0;
	struct window w;
	uint64_t count = 0;
	uint8_t *map;

	if (fd < 0 || setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req))) {
		perror("rxbench: AF_PACKET");
		return 1;
	}
	map = mmap(NULL, (size_t)req.tp_block_size * req.tp_block_nr,
		   PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	sll.sll_ifindex = (int)if_nametoindex(dev);
	if (map == MAP_FAILED || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		perror("rxbench: AF_PACKET ring");
		return 1;
	}
	window_init(&w);
	do {
		struct tpacket_block_desc *bd =
			(void *)(map + (size_t)blk * req.tp_block_size);
		struct tpacket3_hdr *h;

		if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) &
		      TP_STATUS_USER)) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			poll(&p, 1, 100);
			continue;
		}
		h = (void *)((uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt);
		for (uint32_t i = 0; i < bd->hdr.bh1.num_pkts; i++) {
			uint8_t *f = (uint8_t *)h + h->tp_mac;
			struct iphdr *ip = (struct iphdr *)(f + ETH_HLEN);
			struct udphdr *uh = (struct udphdr *)((uint8_t *)ip + ip->ihl * 4);

			if (ip->protocol == IPPROTO_UDP && ntohs(uh->dest) == port)
				count++;
			h = (void *)((uint8_t *)h + h->tp_next_offset);
		}
		__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL,
				 __ATOMIC_RELEASE);
		blk = (blk + 1) % req.tp_block_nr;
	} while (window_tick(&w, count));
	report("afpacket", &w);
	return 0;
}

#ifdef HAVE_LIBXDP
/*
 * busy: AF_XDP's polling mode: spin on the RX ring (kicking the kernel
 * when the FILL ring asks) with SO_PREFER_BUSY_POLL and SO_BUSY_POLL set,
 * instead of sleeping in poll().
 */
static int run_afxdp(int busy)
{
	struct xsk_socket_config scfg = {
		.rx_size = 4096, .tx_size = 0,
		.xdp_flags = XDP_FLAGS_SKB_MODE,
		.bind_flags = XDP_COPY,
	};
	struct xsk_umem_config ucfg = {
		.fill_size = 4096, .comp_size = 64, .frame_size = 2048,
	};
	/* Zeroed: libxdp does not set every cached index. */
	struct xsk_ring_prod fq = { 0 };
	struct xsk_ring_cons cq = { 0 }, rx = { 0 };
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	size_t len = 8192UL * 2048;
	void *area = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct window w;
	uint64_t count = 0;
	uint32_t idx;
	int err;

	err = xsk_umem__create(&umem, area, len, &fq, &cq, &ucfg);
	if (!err)
		err = xsk_socket__create(&xsk, dev, 0, umem, &rx, NULL, &scfg);
	if (err) {
		fprintf(stderr, "rxbench: AF_XDP: %s\n", strerror(-err));
		return 1;
	}
	if (busy) {
		int one = 1, usec = 50, budget = 64;

		setsockopt(xsk_socket__fd(xsk), SOL_SOCKET, SO_PREFER_BUSY_POLL,
			   &one, sizeof(one));
		setsockopt(xsk_socket__fd(xsk), SOL_SOCKET, SO_BUSY_POLL,
			   &usec, sizeof(usec));
		setsockopt(xsk_socket__fd(xsk), SOL_SOCKET, SO_BUSY_POLL_BUDGET,
			   &budget, sizeof(budget));
	}
	if (xsk_ring_prod__reserve(&fq, 4096, &idx) != 4096)
		return 1;
	for (uint32_t i = 0; i < 4096; i++)
		*xsk_ring_prod__fill_addr(&fq, idx + i) = (uint64_t)i * 2048;
	xsk_ring_prod__submit(&fq, 4096);

	window_init(&w);
	do {
		uint32_t ridx, fidx, n = xsk_ring_cons__peek(&rx, 256, &ridx);

		if (!n) {
			struct pollfd p = { .fd = xsk_socket__fd(xsk), .events = POLLIN };

			if (busy || xsk_ring_prod__needs_wakeup(&fq))
				recvfrom(xsk_socket__fd(xsk), NULL, 0, MSG_DONTWAIT,
					 NULL, NULL);
			if (!busy)
				poll(&p, 1, 100);
			continue;
		}
		while (xsk_ring_prod__reserve(&fq, n, &fidx) != n)
			;
		for (uint32_t i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&rx, ridx + i);
			uint8_t *f = xsk_umem__get_data(area, d->addr);
			struct iphdr *ip = (struct iphdr *)(f + ETH_HLEN);
			struct udphdr *uh = (struct udphdr *)((uint8_t *)ip + ip->ihl * 4);

			if (ip->protocol == IPPROTO_UDP && ntohs(uh->dest) == port)
				count++;
			*xsk_ring_prod__fill_addr(&fq, fidx + i) =
				xsk_umem__extract_addr(d->addr);
		}
		xsk_ring_prod__submit(&fq, n);
		xsk_ring_cons__release(&rx, n);
	} while (window_tick(&w, count));
	report(busy ? "afxdp-busy" : "afxdp", &w);
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	return 0;
}
#endif

int main(int argc, char **argv)
{
	const char *mode = NULL;
	unsigned int nrules = 0, cpu = ~0u;
	double crate = 0, cusec = 0;
	int c;

	while ((c = getopt(argc, argv, "m:i:p:a:w:t:r:c:M:d:R:u:")) != -1) {
		switch (c) {
		case 'm': mode = optarg; break;
		case 'i': dev = optarg; break;
		case 'p': port = (unsigned int)atoi(optarg); break;
		case 'a': addr = optarg; break;
		case 'w': warmup = atof(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'r': nrules = (unsigned int)atoi(optarg); break;
		case 'c': cpu = (unsigned int)atoi(optarg); break;
		case 'M':
			if (sscanf(optarg, "%u:%u", &mod_count, &mod_usec) != 2)
				mode = NULL, optind = argc;
			break;
		case 'd': drain = atof(optarg); break;
		case 'R': crate = atof(optarg); break;
		case 'u': cusec = atof(optarg); break;
		default: mode = NULL; optind = argc; break;
		}
	}
	if (!mode || !dev || !port) {
		fprintf(stderr, "usage: rxbench -m vmak-busy|vmak-ts|vmak-poll|vmak-mod|recvfrom|recvmmsg|"
			"recvmmsg-busy|zcopy|xtreme|afpacket|afxdp|afxdp-busy|sink|idle|calib -i DEV -p PORT [-a ADDR] "
			"[-w S] [-t S] [-r RULES] [-c CPU] [-M COUNT:USEC] [-d S] [-R PPS -u USEC]\n");
		return 2;
	}
	bench_pin(cpu);
	watched_mode = mode;
	if (!strcmp(mode, "vmak-busy"))
		return run_vmak(mode, 1, 0, 0, nrules);
	if (!strcmp(mode, "vmak-ts"))
		return run_vmak(mode, 1, 0, 1, nrules);
	if (!strcmp(mode, "vmak-poll"))
		return run_vmak(mode, 0, 0, 0, nrules);
	if (!strcmp(mode, "vmak-mod"))
		return run_vmak(mode, 0, 1, 0, nrules);
	if (!strcmp(mode, "recvfrom"))
		return run_recvfrom();
	if (!strcmp(mode, "recvmmsg"))
		return run_recvmmsg(0);
	if (!strcmp(mode, "recvmmsg-busy"))
		return run_recvmmsg(1);
	if (!strcmp(mode, "zcopy"))
		return run_zcopy();
	if (!strcmp(mode, "xtreme"))
		return run_xtreme();
	if (!strcmp(mode, "sink"))
		return run_sink();
	if (!strcmp(mode, "idle"))
		return run_idle();
	if (!strcmp(mode, "calib"))
		return run_calib(crate, cusec);
	if (!strcmp(mode, "afpacket"))
		return run_afpacket();
#ifdef HAVE_LIBXDP
	if (!strcmp(mode, "afxdp"))
		return run_afxdp(0);
	if (!strcmp(mode, "afxdp-busy"))
		return run_afxdp(1);
#endif
	fprintf(stderr, "rxbench: mode '%s' not available\n", mode);
	return 2;
}
