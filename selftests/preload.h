/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the preloaded selftests share (61, 62, 63): the program re-executes
 * itself with LD_PRELOAD=libvmak.so (unless linked with -lvmak, the
 * VMAK_LINKED build), two netns joined by veth (sa 10.8.0.1, sb
 * 10.8.0.2), and the fixture: a sender child, root in sa, sending what
 * it is told across the veth (so datagrams come through the rings), while
 * the test itself runs as user nobody in sb.
 */
#ifndef _VMAK_SELFTEST_PRELOAD_H
#define _VMAK_SELFTEST_PRELOAD_H

#include <arpa/inet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "vmak/sockstats.h"

#define ADDR_B	"10.8.0.2"

static char exe_path[PATH_MAX];

/* Preloaded unless linked with -lvmak (62-linked-semantics). */
__attribute__((constructor)) static void reexec(int argc, char **argv)
{
	char lib[PATH_MAX + 32], *slash;
	ssize_t n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);

	if (n <= 0)
		return;
	exe_path[n] = 0;
#ifndef VMAK_LINKED
	if (getenv("LD_PRELOAD") || (argc > 1 && !strcmp(argv[1], "exec-child")))
		return;
	snprintf(lib, sizeof(lib), "%s", exe_path);
	slash = strrchr(lib, '/');
	if (!slash)
		return;
	*slash = 0;
	slash = strrchr(lib, '/');	/* build/selftests -> build */
	if (slash)
		*slash = 0;
	strcat(lib, "/libvmak.so");
	setenv("LD_PRELOAD", lib, 1);
	execv(exe_path, argv);
#else
	(void)argc;
	(void)argv;
	(void)lib;
	(void)slash;
#endif
}

/* Seconds on CLOCK_MONOTONIC. */
static inline double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline int sh(const char *cmd)
{
	return system(cmd);
}

static inline void netns_up(void)
{
	sh("ip netns del sa 2>/dev/null; ip netns del sb 2>/dev/null;"
	   "ip netns add sa && ip netns add sb &&"
	   "ip link add name wa type veth peer name wb &&"
	   "ip link set wa netns sa && ip link set wb netns sb &&"
	   "ip -n sa addr add 10.8.0.1/24 dev wa && ip -n sb addr add 10.8.0.2/24 dev wb &&"
	   "ip -n sa link set wa up && ip -n sb link set wb up &&"
	   "ip -n sa link set lo up && ip -n sb link set lo up &&"
	   "ip netns exec sa ping -c1 -W5 10.8.0.2 >/dev/null &&"
	   /* an address of sa's that sb's route reaches with a smaller MTU */
	   "ip -n sa addr add 10.8.0.9/32 dev wa &&"
	   "ip -n sb route add 10.8.0.9/32 dev wb mtu 1400");
}

static inline int enter(const char *ns)
{
	char p[64];
	int fd, rc;

	snprintf(p, sizeof(p), "/run/netns/%s", ns);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return -1;
	rc = setns(fd, CLONE_NEWNET);
	close(fd);
	return rc;
}

struct cmd {
	uint16_t port;
	uint16_t len;
	uint32_t n;
	uint16_t port2;		/* nonzero: every other datagram goes here */
	uint16_t gap_us;	/* nonzero: a random gap of up to this after each */
	uint32_t dst;		/* nonzero: this address (network order) */
	uint8_t op;		/* CMD_SEND, or CMD_RECV: receive n on port */
};

enum { CMD_SEND, CMD_RECV, CMD_CAPTURE };

/* What CMD_CAPTURE reports: the first frame to k->port seen on wa. */
struct frame_seen {
	uint16_t len;		/* 0: none within 3 s */
	uint8_t b[128];		/* its first bytes */
};

/* What CMD_RECV reports per datagram, then the one-byte "done". */
struct seen {
	int16_t ttl, tos;	/* -1: no such control message */
	uint16_t len;
	int16_t frag;		/* IP_RECVFRAGSIZE: the largest fragment, -1
				 * for a datagram that came whole
				 */
};

/*
 * A kernel socket of the sender's (IP_RECVTTL, IP_RECVTOS: the library
 * leaves it on the kernel) receiving k->n datagrams on 10.8.0.1:port, or
 * on group k->dst; each reported, a missing one as len 0xffff.
 */
static inline void sender_recv(const struct cmd *k, int out)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(k->port) };
	struct timeval tv = { .tv_sec = 3 };
	char buf[2048], cbuf[256];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr m;
	struct cmsghdr *c;
	struct seen v;
	int fd, on = 1;
	uint32_t i;
	ssize_t r;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &on, sizeof(on));
	setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on));
	setsockopt(fd, IPPROTO_IP, IP_RECVFRAGSIZE, &on, sizeof(on));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (k->dst && !IN_MULTICAST(ntohl(k->dst))) {
		a.sin_addr.s_addr = k->dst;	/* one of ours */
	} else if (k->dst) {
		struct ip_mreqn mr = { .imr_ifindex = 0 };

		mr.imr_multiaddr.s_addr = k->dst;
		inet_pton(AF_INET, "10.8.0.1", &mr.imr_address);
		setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr));
	} else {
		inet_pton(AF_INET, "10.8.0.1", &a.sin_addr);
	}
	bind(fd, (void *)&a, sizeof(a));
	if (write(out, "r", 1) != 1)	/* bound: the test may send */
		_exit(1);
	for (i = 0; i < k->n; i++) {
		memset(&m, 0, sizeof(m));
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		v = (struct seen){ -1, -1, 0xffff, -1 };
		r = recvmsg(fd, &m, 0);
		if (r >= 0) {
			v.len = (uint16_t)r;
			for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
				if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL)
					v.ttl = (int16_t)*(int *)CMSG_DATA(c);
				if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS)
					v.tos = *(uint8_t *)CMSG_DATA(c);
				if (c->cmsg_level == IPPROTO_IP &&
				    c->cmsg_type == IP_RECVFRAGSIZE)
					v.frag = (int16_t)*(int *)CMSG_DATA(c);
			}
		}
		if (write(out, &v, sizeof(v)) != sizeof(v))
			_exit(1);
	}
	close(fd);
}

/*
 * A packet socket of the sender's on wa (it is root in sa): the first
 * IPv4 UDP frame to k->port, as it crossed the wire, reported whole up
 * to 128 bytes (struct frame_seen).
 */
static inline void sender_capture(const struct cmd *k, int out)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_IP) };
	struct timeval tv = { .tv_sec = 3 };
	struct frame_seen f;
	uint8_t b[2048];
	ssize_t r;
	int fd;

	memset(&f, 0, sizeof(f));
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_IP));
	ll.sll_ifindex = (int)if_nametoindex("wa");
	bind(fd, (void *)&ll, sizeof(ll));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (write(out, "r", 1) != 1)	/* listening: the test may send */
		_exit(1);
	while ((r = recv(fd, b, sizeof(b), 0)) > 0)
		if (r >= 42 && b[12] == 0x08 && b[13] == 0 && b[23] == 17 &&
		    (b[14] & 0x0f) == 5 && b[36] == k->port >> 8 &&
		    b[37] == (k->port & 0xff)) {
			f.len = (uint16_t)r;
			memcpy(f.b, b, r < (ssize_t)sizeof(f.b) ? (size_t)r : sizeof(f.b));
			break;
		}
	if (write(out, &f, sizeof(f)) != sizeof(f))
		_exit(1);
	close(fd);
}

FIXTURE(pre) {
	int cmd;		/* to the sender */
	int done;		/* from the sender: one byte per batch */
	pid_t sender;
};

FIXTURE_SETUP(pre)
{
	int c[2], d[2];

	ASSERT_EQ(0, pipe(c));
	ASSERT_EQ(0, pipe(d));
	self->sender = fork();
	ASSERT_GE(self->sender, 0);
	if (!self->sender) {
		struct sockaddr_in to = { .sin_family = AF_INET };
		struct cmd k;
		char buf[2048];
		uint32_t i;
		int fd;

		close(c[1]);
		close(d[0]);
		if (enter("sa"))
			_exit(1);
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		while (read(c[0], &k, sizeof(k)) == sizeof(k)) {
			unsigned int seed = k.n;

			if (k.op == CMD_RECV || k.op == CMD_CAPTURE) {
				if (k.op == CMD_RECV)
					sender_recv(&k, d[1]);
				else
					sender_capture(&k, d[1]);
				if (write(d[1], "x", 1) != 1)
					_exit(1);
				continue;
			}

			inet_pton(AF_INET, ADDR_B, &to.sin_addr);
			if (k.dst)
				to.sin_addr.s_addr = k.dst;
			for (i = 0; i < k.n; i++) {
				to.sin_port = htons(k.port2 && (i & 1) ? k.port2 : k.port);
				memcpy(buf, &i, 4);
				sendto(fd, buf, k.len, 0, (void *)&to, sizeof(to));
				if (k.gap_us)
					usleep((useconds_t)(rand_r(&seed) % k.gap_us));
				else if (i % 16 == 15)
					usleep(1000);
			}
			if (write(d[1], "x", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(c[0]);
	close(d[1]);
	self->cmd = c[1];
	self->done = d[0];
	ASSERT_EQ(0, enter("sb"));
	ASSERT_EQ(0, setresgid(65534, 65534, 65534));
	ASSERT_EQ(0, setresuid(65534, 65534, 65534));
}

FIXTURE_TEARDOWN(pre)
{
	close(self->cmd);
	waitpid(self->sender, NULL, 0);
}

/* Have the sender send what k says; wait for it. */
static inline void send_cmd(int cmdfd, int donefd, const struct cmd *k)
{
	char x;

	if (write(cmdfd, k, sizeof(*k)) != sizeof(*k) ||
	    read(donefd, &x, 1) != 1)
		abort();
}

/* Have the sender send n datagrams of len bytes to port; wait for it. */
static inline void send_n(int cmdfd, int donefd, uint16_t port, uint32_t n,
			  uint16_t len)
{
	struct cmd k = { .port = port, .len = len, .n = n };

	send_cmd(cmdfd, donefd, &k);
}

static inline int udp_bound(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	inet_pton(AF_INET, ADDR_B, &a.sin_addr);
	if (fd < 0 || bind(fd, (void *)&a, sizeof(a)))
		return -1;
	return fd;
}

/* Datagrams readable now, without blocking. */
static inline int drain(int fd)
{
	char buf[2048];
	int n = 0;

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		n++;
	return n;
}

/* Tell the sender child to receive n on port (or group); then run fn. */
static inline void wire(int cmdfd, int donefd, uint16_t port, uint32_t group,
		 uint32_t n, struct seen *seen, void (*fn)(void *), void *arg)
{
	struct cmd k = { .op = CMD_RECV, .port = port, .n = n, .dst = group };
	char x;
	uint32_t i;

	if (write(cmdfd, &k, sizeof(k)) != sizeof(k) || read(donefd, &x, 1) != 1)
		abort();
	fn(arg);
	for (i = 0; i < n; i++)
		if (read(donefd, &seen[i], sizeof(seen[i])) != sizeof(seen[i]))
			abort();
	if (read(donefd, &x, 1) != 1)
		abort();
}

/* This process's counters for fd, from the library's shared file. */
static inline int sock_counters(int fd, struct vmak_sockstat_counters *c)
{
	char path[96];
	struct vmak_sockstats_hdr *h;
	struct vmak_sockstat *s;
	size_t len = sizeof(*h) + VMAK_SOCKSTATS_SLOTS * sizeof(*s);
	int ffd, rc = -1;
	uint32_t i;

	snprintf(path, sizeof(path), "%s/%s%d", VMAK_SOCKSTATS_DIR,
		 VMAK_SOCKSTATS_PREFIX, (int)getpid());
	ffd = open(path, O_RDONLY);
	if (ffd < 0)
		return -1;
	h = mmap(NULL, len, PROT_READ, MAP_SHARED, ffd, 0);
	close(ffd);
	if (h == MAP_FAILED)
		return -1;
	s = (struct vmak_sockstat *)(h + 1);
	for (i = 0; i < h->nslots; i++)
		if (s[i].in_use && s[i].fd == fd) {
			*c = s[i].c;
			rc = 0;
			break;
		}
	munmap(h, len);
	return rc;
}

#endif /* _VMAK_SELFTEST_PRELOAD_H */
