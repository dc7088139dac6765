// SPDX-License-Identifier: GPL-2.0
/*
 * ringrx: receive the UDP datagrams of one port through a vmak ring set,
 * or (-k) through the kernel UDP socket, printing packets per second.
 *
 *   ringrx -i DEV -a ADDR -p PORT [-t SECONDS] [-m COUNT,USEC] [-k]
 *
 * -m sets the ring's wake moderation (default 64 packets or 1000 us, like
 * a NIC's interrupt coalescing; 0,0 wakes on every packet).
 *
 * The vmak path, in order: bind a normal UDP socket (it keeps owning the
 * port), open a ring set on the device, put every chunk on the FILL ring,
 * steer the socket's flow into the ring, then read RX descriptors and give
 * each chunk back to the FILL ring.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "vmak/ring.h"
#include "vmak/vmak.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Print the rate once a second; return 0 when time is up. */
static int tick(const char *what, unsigned long long total, double end)
{
	static unsigned long long last;
	static double next;
	double t = now();

	if (!next)
		next = t + 1;
	if (t >= next) {
		printf("%-6s %8llu pkt/s  (%llu total)\n", what, total - last, total);
		fflush(stdout);
		last = total;
		next += 1;
	}
	return t < end;
}

/* The kernel UDP socket, as a plain program reads it. */
static unsigned long long rx_kernel(int udp, double end)
{
	struct pollfd p = { .fd = udp, .events = POLLIN };
	unsigned long long total = 0;
	char buf[2048];

	while (tick("kernel", total, end)) {
		if (recv(udp, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			total++;
		else
			poll(&p, 1, 100);
	}
	return total;
}

/* A ring set on dev with udp's flow steered into it. */
static int ring_open(struct vmak_ringset *rs, const char *dev, int udp,
		     unsigned int mod_count, unsigned int mod_usec)
{
	struct vmak_moderation mod = { mod_count, mod_usec };
	struct vmak_ringset_config cfg;
	int err;

	vmak_ringset_config_default(&cfg);
	cfg.ifindex = if_nametoindex(dev);
	err = vmak_ringset_open(rs, &cfg);
	if (err)
		return err;
	vmak_ringset_fill(rs, 0, cfg.fill_size);
	if (setsockopt(rs->fd, SOL_VMAK, VMAK_RX_MODERATION, &mod, sizeof(mod)))
		err = -errno;
	else
		err = vmak_rule_add_socket(rs->fd, udp, 1);
	if (err)
		vmak_ringset_close(rs);
	return err;
}

/* Read RX descriptors; each chunk goes back to the FILL ring once read. */
static unsigned long long rx_ring(struct vmak_ringset *rs, double end)
{
	struct pollfd p = { .fd = rs->fd, .events = POLLIN };
	unsigned long long total = 0;
	uint32_t idx, n;

	while (tick("vmak", total, end)) {
		n = vmak_ring_peek(rs->rx, 64, &idx);
		if (!n) {
			poll(&p, 1, 100);
			continue;
		}
		vmak_ring_recycle(rs->fill, rs->rx, idx, n);
		vmak_ring_release(rs->rx, n);
		total += n;
	}
	return total;
}

static void print_ring_stats(int fd)
{
	struct vmak_statistics st;

	if (vmak_statistics_get(fd, &st, sizeof(st)))
		return;
	printf("ring statistics: rx_packets %llu rx_bytes %llu rx_ring_full %llu "
	       "rx_fill_empty %llu rx_invalid_fill %llu rx_too_big %llu\n",
	       (unsigned long long)st.rx_packets, (unsigned long long)st.rx_bytes,
	       (unsigned long long)st.rx_ring_full,
	       (unsigned long long)st.rx_fill_empty,
	       (unsigned long long)st.rx_invalid_fill,
	       (unsigned long long)st.rx_too_big);
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *addr = NULL;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	unsigned int mod_count = 64, mod_usec = 1000;
	int c, udp, kernel = 0, secs = 3, port = 0, err;
	unsigned long long total;
	struct vmak_ringset rs;
	double start, end;

	while ((c = getopt(argc, argv, "i:a:p:t:m:k")) != -1) {
		switch (c) {
		case 'i': dev = optarg; break;
		case 'a': addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 't': secs = atoi(optarg); break;
		case 'k': kernel = 1; break;
		case 'm':
			if (sscanf(optarg, "%u,%u", &mod_count, &mod_usec) != 2)
				return 2;
			break;
		default: return 2;
		}
	}
	if (!dev || !addr || !port) {
		fprintf(stderr, "usage: ringrx -i DEV -a ADDR -p PORT [-t SECONDS] "
			"[-m COUNT,USEC] [-k]\n");
		return 2;
	}

	udp = socket(AF_INET, SOCK_DGRAM, 0);
	sin.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, addr, &sin.sin_addr);
	if (bind(udp, (struct sockaddr *)&sin, sizeof(sin))) {
		perror("ringrx: bind");
		return 1;
	}
	if (!kernel) {
		err = ring_open(&rs, dev, udp, mod_count, mod_usec);
		if (err) {
			fprintf(stderr, "ringrx: %s\n", vmak_strerror(err));
			return 1;
		}
		printf("vmak ring on %s, wake after %u packets or %u us\n", dev,
		       mod_count, mod_usec);
	}
	start = now();
	end = start + secs;
	total = kernel ? rx_kernel(udp, end) : rx_ring(&rs, end);
	printf("%s average %.0f pkt/s\n", kernel ? "kernel" : "vmak",
	       total / (now() - start));
	if (!kernel) {
		print_ring_stats(rs.fd);
		vmak_ringset_close(&rs);
	}
	return 0;
}
