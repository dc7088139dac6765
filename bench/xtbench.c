// SPDX-License-Identifier: GPL-2.0
/*
 * xtbench: the extra API's receive paths and socketXtreme ping-pong,
 * measured as a libvma program would use them: <mellanox/vma_extra.h>
 * and the C library only, run with libvmak.so preloaded (recvfrom also
 * without it: the kernel socket's rate). Every loop busy-polls.
 *
 *   xtbench rx MODE ADDR PORT WARM WIN [CPU]
 *	MODE recvfrom (non-blocking recvfrom()), zcopy (recvfrom_zcopy() and
 *	free_packets() per datagram), xtreme (socketxtreme_poll() on the
 *	socket's ring, needs VMA_SOCKETXTREME=1). Prints "ready" once bound,
 *	then "MODE pps N" for the WIN seconds after WARM.
 *   xtbench echo ADDR PORT SECONDS [CPU]
 *	socketXtreme echo: every datagram back to its sender.
 *   xtbench ping ADDR PORT DST COUNT SIZE [CPU]
 *	socketXtreme ping: COUNT round trips after COUNT / 10 of warm-up;
 *	prints "xtreme avg A p50 B p99 C p999 D n N", half round trips in
 *	microseconds.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <mellanox/vma_extra.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct vma_api_t *api;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void pin(int argc, char **argv, int at)
{
	cpu_set_t s;

	if (argc <= at)
		return;
	CPU_ZERO(&s);
	CPU_SET(atoi(argv[at]), &s);
	if (sched_setaffinity(0, sizeof(s), &s))
		perror("xtbench: sched_setaffinity");
}

static int bound(const char *addr, const char *port, struct sockaddr_in *a)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, addr, &a->sin_addr) != 1 || s < 0 ||
	    bind(s, (struct sockaddr *)a, sizeof(*a))) {
		perror("xtbench: socket/bind");
		exit(1);
	}
	return s;
}

static int ring_of(int s)
{
	int ring = -1;

	if (!api || api->get_socket_rings_fds(s, &ring, 1) != 1) {
		fprintf(stderr, "xtbench: the socket has no ring (preloaded? VMA_SOCKETXTREME=1?)\n");
		exit(1);
	}
	return ring;
}

/* Datagrams taken by one turn of MODE's loop. */
static int turn(const char *mode, int s, int ring)
{
	struct vma_completion_t c[32];
	char buf[2048];
	int n, i, flags, got = 0;

	if (!strcmp(mode, "recvfrom"))
		return recvfrom(s, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL) >= 0;
	if (!strcmp(mode, "zcopy")) {
		struct vma_packets_t *pk = (struct vma_packets_t *)buf;

		flags = MSG_DONTWAIT;
		if (api->recvfrom_zcopy(s, buf, sizeof(buf), &flags, NULL, NULL) < 0)
			return 0;
		if (flags & MSG_VMA_ZCOPY)
			api->free_packets(s, pk->pkts, pk->n_packet_num);
		return 1;
	}
	n = api->socketxtreme_poll(ring, c, 32, 0);
	for (i = 0; i < n; i++)
		if (c[i].events & VMA_SOCKETXTREME_PACKET) {
			got++;
			api->socketxtreme_free_vma_packets(&c[i].packet, 1);
		}
	return got;
}

static int rx(int argc, char **argv)
{
	const char *mode = argv[2];
	struct sockaddr_in a;
	int64_t t0, t1, end;
	unsigned long n = 0;
	int s, ring = -1;

	if (argc < 7)
		return 2;
	if (strcmp(mode, "recvfrom") && !api) {
		fprintf(stderr, "xtbench: %s needs the extra API (LD_PRELOAD=libvmak.so)\n", mode);
		return 1;
	}
	pin(argc, argv, 7);
	s = bound(argv[3], argv[4], &a);
	if (!strcmp(mode, "xtreme"))
		ring = ring_of(s);
	printf("ready\n");
	fflush(stdout);
	/* the clock starts at the first datagram: the sender starts after us */
	while (!turn(mode, s, ring))
		;
	t0 = now_ns() + (int64_t)atoi(argv[5]) * 1000000000;
	end = t0 + (int64_t)atoi(argv[6]) * 1000000000;
	while (now_ns() < t0)
		turn(mode, s, ring);
	while ((t1 = now_ns()) < end)
		n += (unsigned long)turn(mode, s, ring);
	printf("%s pps %.0f\n", mode, n / ((t1 - t0) / 1e9));
	return 0;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * With XTBENCH_PHASES set, the echo times its steps (two clock reads
 * each, the clock's own cost measured and taken off) and prints
 * "phases poll-hit A send B free C clock D n N", nanoseconds per
 * datagram, when SIGTERM or its time ends it.
 */
static int echo(int argc, char **argv)
{
	struct vma_completion_t c[16];
	struct sockaddr_in a;
	struct vma_buff_t *b;
	int64_t end, t0, t1, t2, t3, tp = 0, ts = 0, tf = 0, tc;
	int s, ring, n, i, phases = getenv("XTBENCH_PHASES") != NULL;
	long hits = 0;

	if (argc < 5 || !api)
		return 2;
	pin(argc, argv, 5);
	signal(SIGTERM, on_term);
	s = bound(argv[2], argv[3], &a);
	ring = ring_of(s);
	printf("ready\n");
	fflush(stdout);
	end = now_ns() + (int64_t)atoi(argv[4]) * 1000000000;
	while (!stop && (t0 = now_ns()) < end) {
		n = api->socketxtreme_poll(ring, c, 16, 0);
		if (phases && n > 0) {
			tp += now_ns() - t0;
			hits++;
		}
		for (i = 0; i < n; i++) {
			if (!(c[i].events & VMA_SOCKETXTREME_PACKET))
				continue;
			b = c[i].packet.buff_lst;
			t1 = phases ? now_ns() : 0;
			sendto(s, b->payload, b->len, 0,
			       (struct sockaddr *)&c[i].src, sizeof(c[i].src));
			t2 = phases ? now_ns() : 0;
			api->socketxtreme_free_vma_packets(&c[i].packet, 1);
			t3 = phases ? now_ns() : 0;
			ts += t2 - t1;
			tf += t3 - t2;
		}
	}
	if (phases && hits) {
		t0 = now_ns();
		for (i = 0; i < 1000; i++)
			now_ns();
		tc = (now_ns() - t0) / 1001;
		printf("phases poll-hit %ld send %ld free %ld clock %ld n %ld\n",
		       (long)(tp / hits - tc), (long)(ts / hits - tc),
		       (long)(tf / hits - tc), (long)tc, hits);
		fflush(stdout);
	}
	return 0;
}

static int cmp64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return (a > b) - (a < b);
}

static int ping(int argc, char **argv)
{
	struct vma_completion_t c[16];
	struct sockaddr_in a, d = { .sin_family = AF_INET };
	int count, size, warm, s, ring, i, k, n, got;
	int64_t *rtt, t, sum = 0;
	char msg[2048];

	if (argc < 7 || !api)
		return 2;
	count = atoi(argv[5]);
	size = atoi(argv[6]);
	if (count <= 0 || size <= 0 || size > (int)sizeof(msg))
		return 2;
	pin(argc, argv, 7);
	s = bound(argv[2], argv[3], &a);
	d.sin_port = a.sin_port;
	if (inet_pton(AF_INET, argv[4], &d.sin_addr) != 1)
		return 2;
	ring = ring_of(s);
	rtt = calloc((size_t)count, sizeof(*rtt));
	if (!rtt)
		return 1;
	memset(msg, 0x5a, sizeof(msg));
	warm = count / 10;
	for (i = -warm; i < count; i++) {
		t = now_ns();
		if (sendto(s, msg, (size_t)size, 0, (struct sockaddr *)&d,
			   sizeof(d)) < 0) {
			perror("xtbench: sendto");
			return 1;
		}
		for (got = 0; !got;) {
			/* a lost datagram: give up on it after a second */
			if (now_ns() - t > 1000000000)
				break;
			n = api->socketxtreme_poll(ring, c, 16, 0);
			for (k = 0; k < n; k++)
				if (c[k].events & VMA_SOCKETXTREME_PACKET) {
					got = 1;
					api->socketxtreme_free_vma_packets(&c[k].packet, 1);
				}
		}
		if (i >= 0)
			rtt[i] = got ? now_ns() - t : -1;
	}
	for (i = n = 0; i < count; i++)
		if (rtt[i] >= 0) {
			rtt[n++] = rtt[i];
			sum += rtt[i];
		}
	if (!n) {
		fprintf(stderr, "xtbench: no replies\n");
		return 1;
	}
	qsort(rtt, (size_t)n, sizeof(*rtt), cmp64);
	/* half round trips, microseconds */
	printf("xtreme avg %.3f p50 %.3f p99 %.3f p999 %.3f n %d\n",
	       sum / (2e3 * n), rtt[n / 2] / 2e3, rtt[n * 99 / 100] / 2e3,
	       rtt[n * 999 / 1000] / 2e3, n);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 2;

	api = vma_get_api();
	if (argc > 1 && !strcmp(argv[1], "rx"))
		rc = rx(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "echo"))
		rc = echo(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "ping"))
		rc = ping(argc, argv);
	if (rc == 2)
		fprintf(stderr, "usage: xtbench rx recvfrom|zcopy|xtreme ADDR PORT WARM WIN [CPU]\n"
			"       xtbench echo ADDR PORT SECONDS [CPU]\n"
			"       xtbench ping ADDR PORT DST COUNT SIZE [CPU]\n");
	return rc;
}
