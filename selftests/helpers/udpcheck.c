// SPDX-License-Identifier: GPL-2.0
/*
 * udpcheck: a plain UDP program (no libvmak API), run by 60-preload.sh on
 * kernel sockets and under LD_PRELOAD=libvmak.so; both runs must print the
 * same thing.
 *
 *   udpcheck send ADDR PORT N [FIRST]    N datagrams, sequence-numbered
 *                                        from FIRST (default 0); every
 *                                        50th is 3000 bytes (IP fragments:
 *                                        the kernel socket's)
 *   udpcheck recv ADDR PORT N MODE [DEV [MS]]
 *                                        bind ADDR:PORT, receive N with
 *                                        MODE: recvfrom recvmsg recvmmsg
 *                                        read poll select epoll epoll-et
 *                                        peek control edges; an IPv4 group
 *                                        ADDR is joined
 *                                        on DEV with SO_REUSEADDR, as feed
 *                                        handlers do; a slow reader sleeps
 *                                        MS milliseconds before reading
 *
 * The receiver checks every datagram's length and sequence (each exactly
 * once) and, with recvmsg, the IP_PKTINFO destination; it prints one line
 * per property, so a diff of the two runs shows what differs. control:
 * recvmsg() with control buffers in turn too short for the IP_PKTINFO
 * message, none at all, and whole; what each gives back (MSG_CTRUNC, the
 * length written back, a cut message's header and data) is printed.
 * edges: SO_RXQ_OVFL on too, receives in turn with flags UDP ignores
 * (MSG_OOB, MSG_WAITALL, MSG_EOR), with MSG_CMSG_CLOEXEC and no name
 * buffer (the control messages' order, msg_flags, the name length left),
 * and with lengths the kernel refuses (a negative name length, more than
 * IOV_MAX iovecs: nothing taken; recvfrom()'s negative or missing address
 * length: the datagram taken, the error returned), and 0 (nothing
 * copied, the name's length written back, by recvfrom() and recvmsg()).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static size_t dgram_len(uint32_t seq)
{
	return seq % 50 == 49 ? 3000 : 16 + seq % 200;
}

static int mkaddr(const char *a, int port, struct sockaddr_storage *ss,
		  socklen_t *len)
{
	struct sockaddr_in *in = (void *)ss;
	struct sockaddr_in6 *in6 = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, a, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*len = sizeof(*in);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, a, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return AF_INET6;
	}
	fprintf(stderr, "bad address %s\n", a);
	exit(2);
}

static int do_send(const char *addr, int port, uint32_t n, uint32_t first)
{
	struct sockaddr_storage ss;
	static char buf[3000];
	socklen_t len;
	uint32_t i;
	int af = mkaddr(addr, port, &ss, &len);
	int fd = socket(af, SOCK_DGRAM, 0);
	struct timespec pause = { 0, 1000000 };

	for (i = first; i < first + n; i++) {
		memcpy(buf, &i, sizeof(i));
		memset(buf + 4, (int)(i & 0xff), dgram_len(i) - 4);
		if (sendto(fd, buf, dgram_len(i), 0, (struct sockaddr *)&ss,
			   len) < 0) {
			perror("sendto");
			return 1;
		}
		if (i % 8 == 7)
			nanosleep(&pause, NULL);
	}
	return 0;
}

#define CTL_KINDS 4
#define KINDS 8

struct rx {
	uint32_t n, got, dups, bad_len, bad_data, trunc, with_pktinfo;
	uint8_t *seen;
	char src[64];
	char pktinfo[64];
	/* control: per kind of buffer, what the first receive gave back,
	 * and how many since gave back something else
	 */
	char ctl[KINDS][96];
	uint32_t ctl_n[KINDS], ctl_other[KINDS];
};

static void account(struct rx *r, const char *buf, ssize_t len, int flags)
{
	uint32_t seq;
	ssize_t i;

	if (len < 4) {
		r->bad_len++;
		return;
	}
	memcpy(&seq, buf, 4);
	if (seq >= r->n || (size_t)len != dgram_len(seq)) {
		r->bad_len++;
		return;
	}
	for (i = 4; i < len; i++)
		if ((uint8_t)buf[i] != (seq & 0xff)) {
			r->bad_data++;
			break;
		}
	if (flags & MSG_TRUNC)
		r->trunc++;
	if (r->seen[seq])
		r->dups++;
	r->seen[seq] = 1;
	r->got++;
}

static void note_src(struct rx *r, const struct sockaddr_storage *ss)
{
	char a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)ss)->sin_addr, a, sizeof(a));
	else
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ss)->sin6_addr, a, sizeof(a));
	snprintf(r->src, sizeof(r->src), "%s family %d", a, ss->ss_family);
}

static void note_pktinfo(struct rx *r, struct msghdr *m)
{
	struct cmsghdr *c;
	char a[INET6_ADDRSTRLEN];

	if (CMSG_FIRSTHDR(m))
		r->with_pktinfo++;	/* the only control message asked for */
	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			inet_ntop(AF_INET, &pi.ipi_addr, a, sizeof(a));
			snprintf(r->pktinfo, sizeof(r->pktinfo), "ip %s", a);
		}
		if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			inet_ntop(AF_INET6, &pi.ipi6_addr, a, sizeof(a));
			snprintf(r->pktinfo, sizeof(r->pktinfo), "ipv6 %s", a);
		}
	}
}

static void note_kind(struct rx *r, unsigned int k, const char *what)
{
	if (!r->ctl_n[k]++)
		snprintf(r->ctl[k], sizeof(r->ctl[k]), "%s", what);
	else if (strcmp(r->ctl[k], what))
		r->ctl_other[k]++;
}

/*
 * recvmsg() with the k-th kind of control buffer: none (a length given
 * all the same), room for a header and 4 bytes of data, less than a
 * header, and room enough. The buffer is filled with 0xa5 first, so
 * that what is written shows.
 */
static ssize_t recv_control(int fd, struct rx *r, unsigned int k, char *buf,
			    size_t len)
{
	static const size_t room[CTL_KINDS] = {
		64, sizeof(struct cmsghdr) + 4, sizeof(struct cmsghdr) - 1, 256,
	};
	unsigned char ctl[256];
	struct iovec iov = { buf, len };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = k ? ctl : NULL, .msg_controllen = room[k],
	};
	const struct cmsghdr *c = (const void *)ctl;
	char what[96];
	ssize_t got;
	uint32_t d;

	memset(ctl, 0xa5, sizeof(ctl));
	got = recvmsg(fd, &m, 0);
	if (got < 0)
		return got;
	memcpy(&d, ctl + sizeof(*c), 4);
	snprintf(what, sizeof(what), "ctrunc %d, controllen %zu, first %zu/%d/%d/%08x",
		 !!(m.msg_flags & MSG_CTRUNC), (size_t)m.msg_controllen,
		 k == 1 ? (size_t)c->cmsg_len : 0, k == 1 ? c->cmsg_level : 0,
		 k == 1 ? c->cmsg_type : 0, k == 1 ? d : 0);
	note_kind(r, k, what);
	return got;
}

/* The control messages' levels and types, in order. */
static void cmsg_list(struct msghdr *m, char *out, size_t len)
{
	struct cmsghdr *c;
	size_t used = 0;

	out[0] = 0;
	for (c = CMSG_FIRSTHDR(m); c && used + 16 < len; c = CMSG_NXTHDR(m, c))
		used += (size_t)snprintf(out + used, len - used, "%d/%d ",
					 c->cmsg_level, c->cmsg_type);
}

/* The k-th kind of edges' receive; what it gave back noted. */
static ssize_t recv_edge(int fd, struct rx *r, unsigned int k, char *buf,
			 size_t len)
{
	static struct iovec many[1025];
	struct sockaddr_storage from;
	struct iovec iov = { buf, len };
	char ctl[256], what[96], list[64];
	struct msghdr m = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	socklen_t flen = (socklen_t)-1;
	ssize_t got = -1;
	uint32_t seq;

	switch (k) {
	case 0:		/* flags UDP ignores */
		got = recv(fd, buf, len, MSG_OOB | MSG_WAITALL | MSG_EOR);
		snprintf(what, sizeof(what), "%s", got < 0 ? strerror(errno) : "taken");
		break;
	case 1:		/* MSG_CMSG_CLOEXEC echoed; no name buffer */
		m.msg_name = NULL;
		m.msg_namelen = 77;
		got = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
		cmsg_list(&m, list, sizeof(list));
		snprintf(what, sizeof(what), "flags %#x, namelen %u, cmsgs %s",
			 (unsigned int)m.msg_flags, (unsigned int)m.msg_namelen, list);
		break;
	case 2:		/* a negative name length: refused, nothing taken */
	case 3:		/* more than IOV_MAX iovecs: the same */
		if (k == 2) {
			m.msg_namelen = (socklen_t)-1;
		} else {
			for (unsigned int i = 0; i < 1025; i++)
				many[i] = (struct iovec){ buf, 1 };
			m.msg_iov = many;
			m.msg_iovlen = 1025;
		}
		errno = 0;
		got = recvmsg(fd, &m, MSG_DONTWAIT);
		snprintf(what, sizeof(what), "%zd %s", got, strerror(errno));
		got = recv(fd, buf, len, 0);
		break;
	case 5:		/* a name buffer of no length: told the length */
		flen = 0;
		got = recvfrom(fd, buf, len, 0, (struct sockaddr *)&from, &flen);
		snprintf(what, sizeof(what), "%zd, length %d", got < 0 ? got : 0,
			 (int)flen);
		break;
	case 6:		/* ... recvmsg()'s too */
		m.msg_namelen = 0;
		got = recvmsg(fd, &m, 0);
		snprintf(what, sizeof(what), "%zd, namelen %u", got < 0 ? got : 0,
			 (unsigned int)m.msg_namelen);
		break;
	case 4:		/* recvfrom()'s address length: taken, then refused */
		errno = 0;
		got = recvfrom(fd, buf, len, 0, (struct sockaddr *)&from, &flen);
		snprintf(what, sizeof(what), "%zd %s, length %d", got,
			 strerror(errno), (int)flen);
		if (got < 0 && errno == EINVAL) {
			/* the payload is in buf: account it by its number */
			memcpy(&seq, buf, 4);
			got = seq < r->n ? (ssize_t)dgram_len(seq) : 4;
		}
		break;
	}
	note_kind(r, k, what);
	return got;
}

/*
 * How long a receiver waits: for the first datagram long enough for the
 * sender to start on a slow (debug, emulated) kernel, then 5 s between
 * datagrams.
 */
#define FIRST_WAIT_MS 30000
#define NEXT_WAIT_MS 5000

/* Wait for readability the way MODE does; 0 on timeout. */
static int wait_ready(int fd, const char *mode, int ep, int ms)
{
	if (!strcmp(mode, "poll")) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		return poll(&p, 1, ms) > 0 && (p.revents & POLLIN);
	}
	if (!strcmp(mode, "select")) {
		struct timeval tv = { ms / 1000, ms % 1000 * 1000 };
		fd_set s;

		FD_ZERO(&s);
		FD_SET(fd, &s);
		return select(fd + 1, &s, NULL, NULL, &tv) > 0 && FD_ISSET(fd, &s);
	}
	if (!strncmp(mode, "epoll", 5)) {
		struct epoll_event ev;
		int n = epoll_wait(ep, &ev, 1, ms);

		return n == 1 && ev.data.u32 == 0x5eed && (ev.events & EPOLLIN);
	}
	return 1;
}

static int do_recv(const char *addr, int port, uint32_t n, const char *mode,
		   const char *dev, int delay_ms)
{
	struct sockaddr_storage ss, from;
	struct rx r = { .n = n };
	static char buf[4096];
	char ctl[256];
	socklen_t len, flen;
	int af = mkaddr(addr, port, &ss, &len);
	int fd = socket(af, SOCK_DGRAM, 0), on = 1, ep = -1, nb = 0;
	struct timeval tv = { FIRST_WAIT_MS / 1000, 0 };
	ssize_t got;

	r.seen = calloc(n, 1);
	if (af == AF_INET &&
	    IN_MULTICAST(ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr)))
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len)) {
		perror("socket/bind");
		return 2;
	}
	if (dev) {
		struct ip_mreqn mr = {
			.imr_multiaddr = ((struct sockaddr_in *)&ss)->sin_addr,
			.imr_ifindex = (int)if_nametoindex(dev),
		};

		if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr))) {
			perror("IP_ADD_MEMBERSHIP");
			return 2;
		}
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, af == AF_INET ? IPPROTO_IP : IPPROTO_IPV6,
		   af == AF_INET ? IP_PKTINFO : IPV6_RECVPKTINFO, &on, sizeof(on));
	if (!strcmp(mode, "edges"))
		setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof(on));
	if (!strncmp(mode, "epoll", 5)) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0x5eed };

		if (!strcmp(mode, "epoll-et")) {
			ev.events |= EPOLLET;
			nb = 1;
		}
		ep = epoll_create1(0);
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
			perror("epoll_ctl");
			return 2;
		}
	}
	if (nb)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	printf("ready\n");
	fflush(stdout);
	if (delay_ms > 0)
		usleep((useconds_t)delay_ms * 1000);
	while (r.got < n) {
		if (r.got && tv.tv_sec != NEXT_WAIT_MS / 1000) {
			tv.tv_sec = NEXT_WAIT_MS / 1000;
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		}
		if (!wait_ready(fd, mode, ep, r.got ? NEXT_WAIT_MS : FIRST_WAIT_MS))
			break;
		do {
			flen = sizeof(from);
			if (!strcmp(mode, "recvmsg")) {
				struct iovec iov = { buf, sizeof(buf) };
				struct msghdr m = {
					.msg_name = &from, .msg_namelen = sizeof(from),
					.msg_iov = &iov, .msg_iovlen = 1,
					.msg_control = ctl, .msg_controllen = sizeof(ctl),
				};

				got = recvmsg(fd, &m, 0);
				if (got >= 0) {
					note_pktinfo(&r, &m);
					note_src(&r, &from);
					account(&r, buf, got, m.msg_flags);
				}
			} else if (!strcmp(mode, "recvmmsg")) {
				struct mmsghdr v[16];
				struct iovec iov[16];
				static char bufs[16][4096];
				int i, k;

				memset(v, 0, sizeof(v));
				for (i = 0; i < 16; i++) {
					iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
					v[i].msg_hdr.msg_iov = &iov[i];
					v[i].msg_hdr.msg_iovlen = 1;
				}
				k = recvmmsg(fd, v, 16, MSG_WAITFORONE, NULL);
				got = k;
				for (i = 0; i < k; i++)
					account(&r, bufs[i], v[i].msg_len, v[i].msg_hdr.msg_flags);
			} else if (!strcmp(mode, "control")) {
				got = recv_control(fd, &r, r.got % CTL_KINDS,
						   buf, sizeof(buf));
				if (got >= 0)
					account(&r, buf, got, 0);
			} else if (!strcmp(mode, "edges")) {
				got = recv_edge(fd, &r, r.got % 7, buf, sizeof(buf));
				if (got >= 0)
					account(&r, buf, got, 0);
			} else if (!strcmp(mode, "read")) {
				got = read(fd, buf, sizeof(buf));
				if (got >= 0)
					account(&r, buf, got, 0);
			} else if (!strcmp(mode, "peek")) {
				int avail = -1;
				ssize_t p;

				p = recv(fd, buf, 8, MSG_PEEK | MSG_TRUNC);
				if (p >= 0 && ioctl(fd, FIONREAD, &avail) == 0 &&
				    avail != p) {
					printf("FIONREAD %d != MSG_PEEK|MSG_TRUNC %zd\n", avail, p);
					r.bad_len++;
				}
				got = recv(fd, buf, sizeof(buf), 0);
				if (got >= 0) {
					if (got != p) {
						printf("peeked %zd, received %zd\n", p, got);
						r.bad_len++;
					}
					account(&r, buf, got, 0);
				}
			} else {
				got = recvfrom(fd, buf, sizeof(buf), 0,
					       (struct sockaddr *)&from, &flen);
				if (got >= 0) {
					note_src(&r, &from);
					account(&r, buf, got, 0);
				}
			}
		} while (got >= 0 && nb && r.got < n);
		if (got < 0 && !(nb && errno == EAGAIN)) {
			printf("receive error: %s\n", strerror(errno));
			break;
		}
	}
	printf("received %u of %u\n", r.got, n);
	printf("duplicates %u, bad length %u, bad data %u, truncated %u\n",
	       r.dups, r.bad_len, r.bad_data, r.trunc);
	if (r.src[0])
		printf("source %s\n", r.src);
	if (r.pktinfo[0])
		printf("pktinfo %s, on %u datagrams\n", r.pktinfo, r.with_pktinfo);
	for (unsigned int k = 0; k < KINDS; k++)
		if (r.ctl_n[k])
			printf("%s %u: %s, %u others\n", mode, k, r.ctl[k],
			       r.ctl_other[k]);
	return r.got == n && !r.dups && !r.bad_len && !r.bad_data ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "send"))
		return do_send(argv[2], atoi(argv[3]), (uint32_t)atoi(argv[4]),
			       argc > 5 ? (uint32_t)atoi(argv[5]) : 0);
	if (argc >= 6 && !strcmp(argv[1], "recv"))
		return do_recv(argv[2], atoi(argv[3]), (uint32_t)atoi(argv[4]),
			       argv[5], argc > 6 && *argv[6] ? argv[6] : NULL,
			       argc > 7 ? atoi(argv[7]) : 0);
	fprintf(stderr, "usage: udpcheck send ADDR PORT N [FIRST] | recv ADDR PORT N MODE [DEV [MS]]\n");
	return 2;
}
