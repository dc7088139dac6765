// SPDX-License-Identifier: BSD-2-Clause
/*
 * vma-rx: a UDP receiver written for libvma's extra API, as a libvma
 * program is written: it includes <mellanox/vma_extra.h> and the C
 * library, and links nothing else. Run it with the library preloaded
 * (LD_PRELOAD=libvmak.so, or libvma's); without one, vma_get_api() says
 * there is no API and it says so.
 *
 *   vma-rx ADDR PORT COUNT MODE [SECONDS]
 *
 * MODE: zcopy (recvfrom_zcopy() and free_packets()), callback (a receive
 * callback that keeps every other packet and gives it back after the next
 * recvfrom(), which reads the rest),
 * xtreme (socketxtreme_poll() on the socket's ring; run it with
 * VMA_SOCKETXTREME=1). It prints "ready" once bound, then the count of
 * datagrams it got, and exits 0 when it got COUNT within SECONDS
 * (default 10).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <mellanox/vma_extra.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct vma_api_t *api;
static int sock;
static unsigned long held, got, seen;

/* Packets a callback kept, given back by the loop (never from inside). */
static struct vma_packet_t kept[4096];
static unsigned int nkept;

static vma_recv_callback_retval_t keep_odd(int fd, size_t sz_iov,
					   struct iovec iov[],
					   struct vma_info_t *info, void *ctx)
{
	(void)fd;
	(void)sz_iov;
	(void)iov;
	(void)ctx;
	if (seen++ % 2 && nkept < sizeof(kept) / sizeof(kept[0])) {
		kept[nkept++].packet_id = info->packet_id;
		held++;
		return VMA_PACKET_HOLD;
	}
	return VMA_PACKET_RECV;
}

static int zcopy(void)
{
	char buf[512];
	struct vma_packets_t *pk = (struct vma_packets_t *)buf;
	int flags = 0;

	if (api->recvfrom_zcopy(sock, buf, sizeof(buf), &flags, NULL, NULL) < 0)
		return -1;
	if (flags & MSG_VMA_ZCOPY)
		api->free_packets(sock, pk->pkts, pk->n_packet_num);
	got++;
	return 0;
}

static int callback(void)
{
	char buf[2048];
	unsigned int i;
	int rc = 0;

	if (recvfrom(sock, buf, sizeof(buf), 0, NULL, NULL) < 0)
		rc = -1;
	else
		got++;
	for (i = 0; i < nkept; i++)
		api->free_packets(sock, &kept[i], 1);
	got += nkept;
	nkept = 0;
	return rc;
}

static int xtreme(int ring)
{
	struct vma_completion_t c[32];
	int n, i;

	n = api->socketxtreme_poll(ring, c, 32, 0);
	for (i = 0; i < n; i++) {
		if (c[i].events & VMA_SOCKETXTREME_PACKET) {
			got++;
			api->socketxtreme_free_vma_packets(&c[i].packet, 1);
		}
	}
	if (!n)
		usleep(100);
	return n < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 1 };
	unsigned long want;
	time_t end;
	int ring = -1, rc = 0;

	if (argc < 5) {
		fprintf(stderr, "usage: vma-rx ADDR PORT COUNT zcopy|callback|xtreme [SECONDS]\n");
		return 2;
	}
	api = vma_get_api();
	if (!api) {
		fprintf(stderr, "vma-rx: no VMA extra API (run with LD_PRELOAD=libvmak.so)\n");
		return 3;
	}
	want = strtoul(argv[3], NULL, 0);
	end = time(NULL) + (argc > 5 ? atoi(argv[5]) : 10);
	sock = socket(AF_INET, SOCK_DGRAM, 0);
	inet_pton(AF_INET, argv[1], &a.sin_addr);
	a.sin_port = htons((uint16_t)atoi(argv[2]));
	if (sock < 0 || bind(sock, (struct sockaddr *)&a, sizeof(a))) {
		perror("vma-rx: bind");
		return 1;
	}
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (!strcmp(argv[4], "callback") &&
	    api->register_recv_callback(sock, keep_odd, NULL)) {
		perror("vma-rx: register_recv_callback");
		return 1;
	}
	if (!strcmp(argv[4], "xtreme") &&
	    api->get_socket_rings_fds(sock, &ring, 1) != 1) {
		fprintf(stderr, "vma-rx: the socket has no ring\n");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (got < want && time(NULL) < end && !rc) {
		if (!strcmp(argv[4], "zcopy"))
			rc = zcopy();
		else if (!strcmp(argv[4], "callback"))
			rc = callback();
		else
			rc = xtreme(ring);
		if (rc && (errno == EAGAIN || errno == EWOULDBLOCK))
			rc = 0;
	}
	printf("got %lu of %lu (%lu held by the callback)\n", got, want, held);
	return got >= want ? 0 : 1;
}
