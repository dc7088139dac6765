// SPDX-License-Identifier: GPL-2.0
/*
 * The library review's findings that need a ring (shared/reviews/
 * lib-interposition.md), each as the program that showed it, run as user
 * nobody with datagrams coming through the rings (preload.h says how):
 *
 *   H3  two sockets on one ring, one blocked reader each: nobody sleeps
 *       through a datagram queued by the other's drain
 *   H4  what a ring send puts on the wire: TTL, TOS, multicast TTL, as the
 *       kernel socket would; multicast with IP_MULTICAST_LOOP reaches a
 *       local member
 *   M1  EPOLLONESHOT goes to one thread at a time
 *   M2  a member that asks for no input sleeps while its queue holds data
 *   M3  MSG_PEEK returns the datagram the next receive takes; a kernel
 *       peek consumed elsewhere does not stall the rings
 *   M6  VMAK_FORK=kernel: a forked worker gets every datagram
 *   M10 the fortified ppoll() sees a datagram on a ring
 *   #30 a receive that spins keeps SO_RCVTIMEO; one right after a send
 *       polls for the answer, one on a socket that only receives sleeps;
 *       a blocking recvmmsg() sleeps until it has all it asked for, and
 *       a socket that joins its ring meanwhile still wakes at its
 *       datagram
 * and the feed handler's layouts: two SO_REUSEADDR sockets of one process
 * on one group and port, each getting every datagram through its ring.
 */
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "preload.h"
#include <mellanox/vma_extra.h>

#define GROUP	"239.7.7.7"

int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *t,
		const sigset_t *m, size_t fdslen);

static double thread_cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 +
	       ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void rcvtimeo(int fd, int sec)
{
	struct timeval tv = { .tv_sec = sec };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* ---- H3 ---- */

struct reader {
	int fd;
	uint32_t want, got;
	int timeouts;
};

static void *read_all(void *arg)
{
	struct reader *r = arg;
	char buf[2048];

	while (r->got < r->want) {
		if (recv(r->fd, buf, sizeof(buf), 0) < 0) {
			r->timeouts++;
			break;
		}
		r->got++;
	}
	return NULL;
}

TEST_F(pre, two_sockets_on_one_ring_each_woken_for_its_own)
{
	struct reader a = { .fd = udp_bound(31001), .want = 1000 };
	struct reader b = { .fd = udp_bound(31002), .want = 1000 };
	struct cmd k = { .port = 31001, .port2 = 31002, .len = 32, .n = 2000,
			 .gap_us = 50 };
	pthread_t ta, tb;

	ASSERT_GE(a.fd, 0);
	ASSERT_GE(b.fd, 0);
	/* a receive asleep longer than 2 s missed its wakeup */
	rcvtimeo(a.fd, 2);
	rcvtimeo(b.fd, 2);
	ASSERT_EQ(0, pthread_create(&ta, NULL, read_all, &a));
	ASSERT_EQ(0, pthread_create(&tb, NULL, read_all, &b));
	send_cmd(self->cmd, self->done, &k);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	EXPECT_EQ(1000, a.got);
	EXPECT_EQ(1000, b.got);
	EXPECT_EQ(0, a.timeouts + b.timeouts);
	close(a.fd);
	close(b.fd);
}

/* ---- H4 ---- */

struct tx {
	int fd;
	struct sockaddr_in to;
	bool connected;
};

static void send5(void *arg)
{
	struct tx *t = arg;
	int i;

	for (i = 0; i < 5; i++) {
		if (t->connected)
			send(t->fd, "hello", 5, 0);
		else
			sendto(t->fd, "hello", 5, 0, (void *)&t->to, sizeof(t->to));
		usleep(2000);
	}
}

TEST_F(pre, a_ring_send_carries_the_socket_s_ttl_and_tos)
{
	struct tx t = { .fd = udp_bound(31010),
			.to = { .sin_family = AF_INET, .sin_port = htons(31011) } };
	struct vmak_sockstat_counters c;
	struct seen seen[5];
	int ttl = 7, tos = 0xb8, i;

	ASSERT_GE(t.fd, 0);
	inet_pton(AF_INET, "10.8.0.1", &t.to.sin_addr);
	ASSERT_EQ(0, setsockopt(t.fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)));
	ASSERT_EQ(0, setsockopt(t.fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)));
	/* unconnected: the headers come from our helper socket */
	wire(self->cmd, self->done, 31011, 0, 5, seen, send5, &t);
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(5, seen[i].len);
		EXPECT_EQ(7, seen[i].ttl);
		EXPECT_EQ(0xb8, seen[i].tos);
	}
	/* connected: from the socket itself */
	ASSERT_EQ(0, connect(t.fd, (void *)&t.to, sizeof(t.to)));
	t.connected = true;
	wire(self->cmd, self->done, 31011, 0, 5, seen, send5, &t);
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(5, seen[i].len);
		EXPECT_EQ(7, seen[i].ttl);
		EXPECT_EQ(0xb8, seen[i].tos);
	}
	/* and these went through the ring */
	ASSERT_EQ(0, sock_counters(t.fd, &c));
	EXPECT_GE(c.tx_ring, 6);
	close(t.fd);
}

struct big {
	struct tx t;
	size_t len;
	ssize_t sent;
};

static void send_big(void *arg)
{
	static char buf[1450];
	struct big *b = arg;

	memset(buf, 0x42, sizeof(buf));
	b->sent = sendto(b->t.fd, buf, b->len, 0, (void *)&b->t.to,
			 sizeof(b->t.to));
}

/*
 * A route's MTU below the device's (the path's, as an ICMP "too big"
 * sets it too): what does not fit goes through the kernel, which
 * fragments it, or with IP_PMTUDISC_DO refuses it, as without us. Before,
 * the ring sent it whole with DF set, where no router would have passed
 * it.
 */
TEST_F(pre, a_ring_send_keeps_to_the_path_s_mtu)
{
	struct big b = { .t = { .fd = udp_bound(31012),
				.to = { .sin_family = AF_INET,
					.sin_port = htons(31013) } } };
	struct vmak_sockstat_counters c0, c1;
	static char buf[1450];
	struct seen seen[2];
	int v = IP_PMTUDISC_DO, tos = 0x10, i;

	ASSERT_GE(b.t.fd, 0);
	inet_pton(AF_INET, "10.8.0.9", &b.t.to.sin_addr);
	/* the neighbour resolved: until then the kernel sends */
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, sock_counters(b.t.fd, &c0));
		ASSERT_EQ(1, sendto(b.t.fd, "x", 1, 0, (void *)&b.t.to,
				    sizeof(b.t.to)));
		ASSERT_EQ(0, sock_counters(b.t.fd, &c1));
		if (c1.tx_ring > c0.tx_ring)
			break;
		usleep(30000);
	}
	ASSERT_LT(i, 100);
	/* what fits goes through the ring, whole */
	ASSERT_EQ(0, sock_counters(b.t.fd, &c0));
	b.len = 1300;
	wire(self->cmd, self->done, 31013, b.t.to.sin_addr.s_addr, 1, seen,
	     send_big, &b);
	EXPECT_EQ(1300, b.sent);
	EXPECT_EQ(1300, seen[0].len);
	EXPECT_EQ(-1, seen[0].frag);
	ASSERT_EQ(0, sock_counters(b.t.fd, &c1));
	EXPECT_EQ(c0.tx_ring + 1, c1.tx_ring);
	/*
	 * What does not, in fragments of the route's size; then connected,
	 * its route dropped by an option (IP_TOS), the same
	 */
	b.len = 1450;
	for (i = 0; i < 2; i++) {
		if (i) {
			ASSERT_EQ(0, connect(b.t.fd, (void *)&b.t.to,
					     sizeof(b.t.to)));
			ASSERT_EQ(0, setsockopt(b.t.fd, IPPROTO_IP, IP_TOS, &tos,
						sizeof(tos)));
		}
		wire(self->cmd, self->done, 31013, b.t.to.sin_addr.s_addr, 1,
		     seen, send_big, &b);
		EXPECT_EQ(1450, b.sent);
		EXPECT_EQ(1450, seen[0].len);
		EXPECT_GT(seen[0].frag, 0) TH_LOG("connected: %d", i);
		EXPECT_LE(seen[0].frag, 1400);
	}
	/* DF wanted: EMSGSIZE, as the kernel socket says */
	ASSERT_EQ(0, setsockopt(b.t.fd, IPPROTO_IP, IP_MTU_DISCOVER, &v,
				sizeof(v)));
	errno = 0;
	EXPECT_EQ(-1, sendto(b.t.fd, buf, sizeof(buf), 0, (void *)&b.t.to,
			     sizeof(b.t.to)));
	EXPECT_EQ(EMSGSIZE, errno);
	close(b.t.fd);
}

struct mc {
	struct tx t;
	int member;		/* a socket of ours in the group */
	int got;
};

static void send5_group(void *arg)
{
	struct mc *m = arg;
	char buf[64];
	int i;

	send5(&m->t);
	for (i = 0; i < 5; i++)
		if (recv(m->member, buf, sizeof(buf), MSG_DONTWAIT) == 5)
			m->got++;
}

TEST_F(pre, multicast_keeps_its_ttl_and_loops_back_to_local_members)
{
	struct mc m = { .t = { .fd = socket(AF_INET, SOCK_DGRAM, 0),
			       .to = { .sin_family = AF_INET,
				       .sin_port = htons(31020) } } };
	struct sockaddr_in any = { .sin_family = AF_INET,
				   .sin_port = htons(31020) };
	struct ip_mreqn mr = { .imr_ifindex = 0 };
	struct seen seen[5];
	int ttl = 5, off = 0, i;

	inet_pton(AF_INET, GROUP, &m.t.to.sin_addr);
	ASSERT_GE(m.t.fd, 0);
	ASSERT_EQ(0, setsockopt(m.t.fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl,
				sizeof(ttl)));
	/* a local member of the group, in our netns */
	m.member = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_GE(m.member, 0);
	ASSERT_EQ(0, bind(m.member, (void *)&any, sizeof(any)));
	inet_pton(AF_INET, GROUP, &mr.imr_multiaddr);
	inet_pton(AF_INET, ADDR_B, &mr.imr_address);
	ASSERT_EQ(0, setsockopt(m.member, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr,
				sizeof(mr)));
	ASSERT_EQ(0, bind(m.t.fd, (void *)&(struct sockaddr_in){
		.sin_family = AF_INET, .sin_addr.s_addr = mr.imr_address.s_addr },
		sizeof(struct sockaddr_in)));
	wire(self->cmd, self->done, 31020, m.t.to.sin_addr.s_addr, 5, seen,
	     send5_group, &m);
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(5, seen[i].len);
		EXPECT_EQ(5, seen[i].ttl);
	}
	EXPECT_EQ(5, m.got);	/* IP_MULTICAST_LOOP is on by default */
	/* without loopback the ring may send it: same TTL, no local copy */
	ASSERT_EQ(0, setsockopt(m.t.fd, IPPROTO_IP, IP_MULTICAST_LOOP, &off,
				sizeof(off)));
	m.got = 0;
	wire(self->cmd, self->done, 31020, m.t.to.sin_addr.s_addr, 5, seen,
	     send5_group, &m);
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(5, seen[i].len);
		EXPECT_EQ(5, seen[i].ttl);
	}
	EXPECT_EQ(0, m.got);
	close(m.member);
	close(m.t.fd);
}

/* ---- M1 ---- */

struct oneshot {
	int ep, fd;
	atomic_int busy, clashes, got;
	int want;
};

static void *oneshot_worker(void *arg)
{
	struct oneshot *o = arg;
	struct epoll_event ev;
	char buf[2048];
	double end = now_ms() + 20000;

	while (atomic_load(&o->got) < o->want && now_ms() < end) {
		if (epoll_wait(o->ep, &ev, 1, 100) != 1)
			continue;
		if (atomic_exchange(&o->busy, 1))
			atomic_fetch_add(&o->clashes, 1);
		while (recv(o->fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
			atomic_fetch_add(&o->got, 1);
		atomic_store(&o->busy, 0);
		ev.events = EPOLLIN | EPOLLONESHOT;
		ev.data.u64 = 7;
		epoll_ctl(o->ep, EPOLL_CTL_MOD, o->fd, &ev);
	}
	return NULL;
}

TEST_F(pre, oneshot_goes_to_one_thread_at_a_time)
{
	struct oneshot o = { .ep = epoll_create1(0), .fd = udp_bound(31030),
			     .want = 5000 };
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT,
				  .data.u64 = 7 };
	pthread_t t[8];
	int i;

	ASSERT_GE(o.fd, 0);
	ASSERT_EQ(0, fcntl(o.fd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, epoll_ctl(o.ep, EPOLL_CTL_ADD, o.fd, &ev));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, oneshot_worker, &o));
	send_n(self->cmd, self->done, 31030, (uint32_t)o.want, 32);
	for (i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(0, o.clashes);
	EXPECT_EQ(o.want, o.got);
	close(o.fd);
	close(o.ep);
}

/* ---- M2 ---- */

TEST_F(pre, a_member_asking_for_no_input_sleeps)
{
	int ep = epoll_create1(0), fd = udp_bound(31040);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 1 };
	double t0, c0;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	send_n(self->cmd, self->done, 31040, 5, 32);
	usleep(100000);
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 1000));	/* drains the ring */
	ev.events = 0;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
	t0 = now_ms();
	c0 = thread_cpu_ms();
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 1000));
	EXPECT_GE(now_ms() - t0, 900);
	EXPECT_LT(thread_cpu_ms() - c0, 100);
	EXPECT_EQ(5, drain(fd));
	close(fd);
	close(ep);
}

/* ---- M3 ---- */

TEST_F(pre, a_peek_shows_the_datagram_the_next_receive_takes)
{
	struct sockaddr_in any = { .sin_family = AF_INET,
				   .sin_port = htons(31050) };
	struct ip_mreqn mr = { .imr_ifindex = 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), i;
	struct cmd k = { .port = 31050, .len = 8, .n = 1 };
	uint32_t peeked, got;
	char buf[64];

	/* two attachments: the wildcard's rule and the group's */
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, bind(fd, (void *)&any, sizeof(any)));
	inet_pton(AF_INET, GROUP, &mr.imr_multiaddr);
	inet_pton(AF_INET, ADDR_B, &mr.imr_address);
	ASSERT_EQ(0, setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr,
				sizeof(mr)));
	for (i = 0; i < 4; i++) {
		k.len = (uint16_t)(8 + i);
		k.dst = i & 1 ? mr.imr_multiaddr.s_addr : 0;
		send_cmd(self->cmd, self->done, &k);
	}
	usleep(100000);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, ioctl(fd, FIONREAD, &peeked));
		EXPECT_EQ(peeked, (uint32_t)recv(fd, buf, sizeof(buf),
						 MSG_PEEK | MSG_DONTWAIT));
		got = (uint32_t)recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		EXPECT_EQ(peeked, got) TH_LOG("datagram %d: peeked %u bytes, then read %u",
					      i, peeked, got);
	}
	close(fd);
}

TEST_F(pre, a_kernel_peek_consumed_elsewhere_does_not_stall_the_rings)
{
	struct sockaddr_in me = { .sin_family = AF_INET,
				  .sin_port = htons(31060) };
	int fd = udp_bound(31060), lo = socket(AF_INET, SOCK_DGRAM, 0), st;
	char buf[64];
	double t0, c0;
	pid_t child;

	ASSERT_GE(fd, 0);
	inet_pton(AF_INET, ADDR_B, &me.sin_addr);
	/* from our own netns: loopback, the kernel socket */
	ASSERT_EQ(5, sendto(lo, "local", 5, 0, (void *)&me, sizeof(me)));
	usleep(50000);
	ASSERT_EQ(5, recv(fd, buf, sizeof(buf), MSG_PEEK));
	/* another process sharing the socket takes it */
	child = fork();
	ASSERT_GE(child, 0);
	if (!child)
		_exit(recv(fd, buf, sizeof(buf), MSG_DONTWAIT) == 5 ? 0 : 1);
	ASSERT_EQ(child, waitpid(child, &st, 0));
	ASSERT_EQ(0, WEXITSTATUS(st));
	send_n(self->cmd, self->done, 31060, 10, 20);
	rcvtimeo(fd, 3);
	t0 = now_ms();
	c0 = thread_cpu_ms();
	EXPECT_EQ(20, recv(fd, buf, sizeof(buf), 0));
	EXPECT_LT(now_ms() - t0, 1000);
	EXPECT_LT(thread_cpu_ms() - c0, 100);
	close(lo);
	close(fd);
}

/* ---- M6 ---- */

TEST_F(pre, with_vmak_fork_kernel_a_forked_worker_gets_every_datagram)
{
	int fd, st, n = 0;
	char buf[2048];
	pid_t w;

	/* read at the first socket: before it */
	setenv("VMAK_FORK", "kernel", 1);
	fd = udp_bound(31070);
	ASSERT_GE(fd, 0);
	w = fork();
	ASSERT_GE(w, 0);
	if (!w) {
		rcvtimeo(fd, 3);
		while (recv(fd, buf, sizeof(buf), 0) >= 0)
			n++;
		_exit(n == 2000 ? 0 : 1);
	}
	send_n(self->cmd, self->done, 31070, 2000, 32);
	ASSERT_EQ(w, waitpid(w, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
	close(fd);
}

/* ---- M10 ---- */

TEST_F(pre, the_fortified_ppoll_sees_a_ring)
{
	int fd = udp_bound(31080);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct timespec ts = { .tv_sec = 3 };

	ASSERT_GE(fd, 0);
	send_n(self->cmd, self->done, 31080, 1, 20);
	EXPECT_EQ(1, __ppoll_chk(&p, 1, &ts, NULL, sizeof(p)));
	EXPECT_EQ(1, drain(fd));
	close(fd);
}

/* ---- #30: a receive that spins (VMA_RX_POLL=-1) keeps SO_RCVTIMEO ---- */

TEST_F(pre, a_spinning_receive_keeps_its_timeout)
{
	struct timeval tv = { .tv_usec = 300000 };
	struct mmsghdr v[8];
	struct iovec iov[8];
	char buf[8][64];
	double t0, dt;
	int fd, i;

	setenv("VMA_RX_POLL", "-1", 1);	/* before the first socket */
	fd = udp_bound(31100);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	send_n(self->cmd, self->done, 31100, 1, 20);
	EXPECT_EQ(20, recv(fd, buf[0], sizeof(buf[0]), 0));
	t0 = now_ms();
	EXPECT_EQ(-1, recv(fd, buf[0], sizeof(buf[0]), 0));
	EXPECT_EQ(EAGAIN, errno);
	dt = now_ms() - t0;
	EXPECT_GE(dt, 250);
	EXPECT_LT(dt, 3000);
	/* recvmmsg for 8 with 3 there: the 3 once the timeout ends */
	for (i = 0; i < 8; i++) {
		iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
		v[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i],
						      .msg_iovlen = 1 } };
	}
	send_n(self->cmd, self->done, 31100, 3, 20);
	t0 = now_ms();
	EXPECT_EQ(3, recvmmsg(fd, v, 8, 0, NULL));
	EXPECT_LT(now_ms() - t0, 3000);
	close(fd);
}

/*
 * #30: a blocking receive right after a send on the socket polls for the
 * answer (VMAK_REPLY_POLL) before it sleeps; a socket that only receives
 * never polls. How each socket's polls ended (the answer, from where it
 * sent, in the poll or late; another's datagram; nothing) is its DETAILS
 * line at close.
 */
struct later {
	int cmd, done;
	uint16_t port;
	useconds_t after;
};

static void *send_later(void *arg)
{
	struct later *l = arg;

	usleep(l->after);
	send_n(l->cmd, l->done, l->port, 1, 20);
	return NULL;
}

/* The line the log file at path has for fd's answer polls, or "". */
static void reply_line(const char *path, int fd, char *out, size_t len)
{
	char line[512], key[64];
	FILE *f = fopen(path, "r");

	*out = 0;
	snprintf(key, sizeof(key), "fd %d: polled for an answer", fd);
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, key))
			snprintf(out, len, "%s", strstr(line, key));
	if (f)
		fclose(f);
}

TEST_F(pre, a_receive_after_a_send_polls_for_the_answer)
{
	struct sockaddr_in other = { .sin_family = AF_INET, .sin_port = htons(9) };
	struct sockaddr_in peer;
	socklen_t plen = sizeof(peer);
	struct timeval tv = { .tv_sec = 1 };
	/* the receive is polling 100 ms after it began */
	struct later l = { self->cmd, self->done, 31110, 100000 };
	char buf[64], path[64], got[512];
	int x, y, xfd, yfd, i;
	pthread_t t;
	double t0;

	snprintf(path, sizeof(path), "/tmp/vmak-reply-%d.log", getpid());
	unlink(path);
	setenv("VMAK_LOG_FILE", path, 1);	/* before the first socket */
	setenv("VMAK_TRACELEVEL", "DETAILS", 1);
	setenv("VMAK_REPLY_POLL", "300000", 1);	/* late: within 6 s */
	x = udp_bound(31110);
	y = udp_bound(31111);
	ASSERT_GE(x, 0);
	ASSERT_GE(y, 0);
	ASSERT_EQ(0, setsockopt(x, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	inet_pton(AF_INET, "10.8.0.1", &other.sin_addr);
	/* the sender's address and port: answers come from there */
	send_n(self->cmd, self->done, 31110, 1, 20);
	ASSERT_EQ(20, recvfrom(x, buf, sizeof(buf), 0, (void *)&peer, &plen));

	/* the answer comes 100 ms into the 300 ms poll */
	ASSERT_EQ(4, sendto(x, "ping", 4, 0, (void *)&peer, sizeof(peer)));
	ASSERT_EQ(0, pthread_create(&t, NULL, send_later, &l));
	EXPECT_EQ(20, recv(x, buf, sizeof(buf), 0));
	pthread_join(t, NULL);
	/* ... 600 ms after the receive began: late, while it sleeps */
	l.after = 600000;
	ASSERT_EQ(4, sendto(x, "ping", 4, 0, (void *)&peer, sizeof(peer)));
	ASSERT_EQ(0, pthread_create(&t, NULL, send_later, &l));
	EXPECT_EQ(20, recv(x, buf, sizeof(buf), 0));
	pthread_join(t, NULL);
	/* sent to one address, a datagram from another: no answer */
	l.after = 100000;
	ASSERT_EQ(4, sendto(x, "ping", 4, 0, (void *)&other, sizeof(other)));
	ASSERT_EQ(0, pthread_create(&t, NULL, send_later, &l));
	EXPECT_EQ(20, recv(x, buf, sizeof(buf), 0));
	pthread_join(t, NULL);
	/* nothing: 300 ms of polling, then the sleep to SO_RCVTIMEO */
	ASSERT_EQ(4, sendto(x, "ping", 4, 0, (void *)&peer, sizeof(peer)));
	t0 = now_ms();
	EXPECT_EQ(-1, recv(x, buf, sizeof(buf), 0));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_GE(now_ms() - t0, 950);
	/* a receive with no send before it sleeps at once */
	ASSERT_EQ(0, pthread_create(&t, NULL, send_later, &l));
	EXPECT_EQ(20, recv(x, buf, sizeof(buf), 0));
	pthread_join(t, NULL);
	/* a socket that only receives, blocking: never */
	l.port = 31111;
	ASSERT_EQ(0, pthread_create(&t, NULL, send_later, &l));
	EXPECT_EQ(20, recv(y, buf, sizeof(buf), 0));
	pthread_join(t, NULL);
	rcvtimeo(y, 3);
	send_n(self->cmd, self->done, 31111, 3, 20);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(20, recv(y, buf, sizeof(buf), 0));

	xfd = x;
	yfd = y;
	close(x);
	close(y);
	reply_line(path, xfd, got, sizeof(got));
	EXPECT_NE(NULL, strstr(got, "polled for an answer 4 times: it came in 1, later in 1; another's datagram 1, nothing 1"))
		TH_LOG("x: \"%s\"", got);
	reply_line(path, yfd, got, sizeof(got));
	EXPECT_STREQ("", got);
	unlink(path);
}

/*
 * A blocking recvmmsg() without MSG_WAITFORONE returns once it has them
 * all: asleep, it is woken when the ring holds them, not per datagram
 * (VMAK_RX_BATCH). Counted as the thread's voluntary context switches:
 * one per sleep.
 */
struct mmsg_reader {
	int fd, n;
	int got;
	int err;
	long sleeps;
	double t0, ms;
	uint32_t first, last;
	bool in_order;
};

static void *mmsg_read(void *arg)
{
	struct mmsg_reader *r = arg;
	static char bufs[64][64];
	struct mmsghdr v[64];
	struct iovec iov[64];
	struct rusage a, b;
	int i;

	r->t0 = now_ms();
	memset(v, 0, sizeof(v));
	for (i = 0; i < r->n; i++) {
		iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
		v[i].msg_hdr.msg_iov = &iov[i];
		v[i].msg_hdr.msg_iovlen = 1;
	}
	getrusage(RUSAGE_THREAD, &a);
	r->got = recvmmsg(r->fd, v, (unsigned int)r->n, 0, NULL);
	r->err = errno;
	getrusage(RUSAGE_THREAD, &b);
	r->ms = now_ms() - r->t0;
	r->sleeps = b.ru_nvcsw - a.ru_nvcsw;
	r->in_order = true;
	for (i = 0; i < r->got; i++) {
		uint32_t k;

		memcpy(&k, bufs[i], 4);
		if (i && k != r->last + 1)
			r->in_order = false;
		if (!i)
			r->first = k;
		r->last = k;
	}
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* A thread asleep on another socket, in poll() or in an epoll set. */
struct other_sleeper {
	int fd;
	bool epoll;
	int n;
	double woke;	/* ms */
};

static void *sleep_other(void *arg)
{
	struct other_sleeper *o = arg;
	struct pollfd p = { .fd = o->fd, .events = POLLIN };
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 7 };
	int ep = -1;

	if (o->epoll) {
		ep = epoll_create1(0);
		epoll_ctl(ep, EPOLL_CTL_ADD, o->fd, &ev);
		o->n = epoll_wait(ep, &ev, 1, 4000);
		close(ep);
	} else {
		o->n = poll(&p, 1, 4000);
	}
	o->woke = now_ms();
	return NULL;
}

TEST_F(pre, a_blocking_recvmmsg_sleeps_until_it_has_them_all)
{
	/* 48 datagrams over about 50 ms: a wake each would be dozens */
	struct cmd k = { .port = 31120, .len = 20, .n = 48, .gap_us = 2000 };
	struct mmsg_reader r = { .n = 48 };
	struct other_sleeper o;
	int x = udp_bound(31120), pass;
	pthread_t t, t2;
	double sent;
	char buf[64];

	ASSERT_GE(x, 0);
	rcvtimeo(x, 2);
	send_n(self->cmd, self->done, 31120, 1, 20);	/* through the ring */
	ASSERT_EQ(20, recv(x, buf, sizeof(buf), 0));
	r.fd = x;

	/* all 48, in order, in a few sleeps */
	ASSERT_EQ(0, pthread_create(&t, NULL, mmsg_read, &r));
	usleep(200000);
	send_cmd(self->cmd, self->done, &k);
	pthread_join(t, NULL);
	EXPECT_EQ(48, r.got);
	EXPECT_TRUE(r.in_order);
	EXPECT_EQ(0, r.first);
	TH_LOG("48 datagrams: %ld sleeps", r.sleeps);
	EXPECT_LE(r.sleeps, 8);

	/* the stream stops at 30: SO_RCVTIMEO (2 s) after the last, as the
	 * kernel's, give or take an eighth of it
	 */
	k.n = 30;
	ASSERT_EQ(0, pthread_create(&t, NULL, mmsg_read, &r));
	usleep(200000);
	send_cmd(self->cmd, self->done, &k);
	pthread_join(t, NULL);
	EXPECT_EQ(30, r.got);
	EXPECT_TRUE(r.in_order);
	TH_LOG("30 of 48: returned after %.0f ms", r.ms);
	EXPECT_GE(r.ms, 2000);
	EXPECT_LE(r.ms, 4000);

	/*
	 * A handler ends the call with the 5 it has, as the kernel's (which
	 * read each as it came, and returns them when a signal comes, with
	 * SA_RESTART or without): not at the 48th. Without SO_RCVTIMEO.
	 */
	rcvtimeo(x, 0);
	k.n = 5;
	for (pass = 0; pass < 2; pass++) {
		struct sigaction sa = { .sa_handler = on_usr1,
					.sa_flags = pass ? SA_RESTART : 0 };

		ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
		ASSERT_EQ(0, pthread_create(&t, NULL, mmsg_read, &r));
		usleep(200000);
		send_cmd(self->cmd, self->done, &k);
		usleep(300000);
		sent = now_ms();
		pthread_kill(t, SIGUSR1);
		pthread_join(t, NULL);
		EXPECT_EQ(5, r.got);
		EXPECT_TRUE(r.in_order);
		TH_LOG("signal%s: returned %.0f ms after it",
		       pass ? " (SA_RESTART)" : "", r.ms - (sent - r.t0));
		EXPECT_LT(r.ms - (sent - r.t0), 1000);
	}

	/*
	 * A socket that joins the ring while the batch sleeps, with a
	 * thread asleep on it in poll() or in an epoll set: its datagram
	 * wakes it at once, not at the batch's 48th (or its timer, a second
	 * after the datagram).
	 */
	rcvtimeo(x, 30);
	for (pass = 0; pass < 2; pass++) {
		uint16_t port = (uint16_t)(31121 + pass);

		ASSERT_EQ(0, pthread_create(&t, NULL, mmsg_read, &r));
		usleep(200000);
		o = (struct other_sleeper){ .fd = udp_bound(port), .epoll = pass };
		ASSERT_GE(o.fd, 0);
		ASSERT_EQ(0, pthread_create(&t2, NULL, sleep_other, &o));
		usleep(200000);
		sent = now_ms();
		send_n(self->cmd, self->done, port, 1, 20);
		pthread_join(t2, NULL);
		EXPECT_EQ(1, o.n);
		TH_LOG("%s: woke %.0f ms after the datagram",
		       pass ? "epoll_wait" : "poll", o.woke - sent);
		EXPECT_LT(o.woke - sent, 500);
		EXPECT_EQ(1, drain(o.fd));
		k.n = 48;
		send_cmd(self->cmd, self->done, &k);
		pthread_join(t, NULL);
		EXPECT_EQ(48, r.got);
		EXPECT_TRUE(r.in_order);
		close(o.fd);
	}
	close(x);
}

/*
 * What a recvmmsg() finds queued on the ring it takes at once (one lock
 * for all, ring_take_many()), each entry as the kernel writes it: the
 * source, the length, MSG_TRUNC for a short buffer (the full length with
 * the MSG_TRUNC flag); a peek reads the first one each time.
 */
TEST_F(pre, a_recvmmsg_takes_what_is_queued_as_the_kernel_would)
{
	struct cmd k = { .port = 31125, .len = 20, .n = 8 };
	static char bufs[8][64];
	struct sockaddr_in names[8];
	struct mmsghdr v[8];
	struct iovec iov[8];
	int x = udp_bound(31125), i, pass;
	uint32_t idx;

	ASSERT_GE(x, 0);
	for (pass = 0; pass < 3; pass++) {
		int fl = pass == 1 ? MSG_TRUNC : pass == 2 ? MSG_PEEK : 0;

		memset(v, 0, sizeof(v));
		memset(names, 0, sizeof(names));
		for (i = 0; i < 8; i++) {
			/* the even ones too short for the 20 bytes */
			iov[i] = (struct iovec){ bufs[i], i & 1 ? 64 : 16 };
			v[i].msg_hdr.msg_iov = &iov[i];
			v[i].msg_hdr.msg_iovlen = 1;
			v[i].msg_hdr.msg_name = &names[i];
			v[i].msg_hdr.msg_namelen = sizeof(names[i]);
		}
		send_cmd(self->cmd, self->done, &k);
		usleep(200000);
		ASSERT_EQ(pass == 2 ? 4 : 8,
			  recvmmsg(x, v, pass == 2 ? 4 : 8, fl | MSG_DONTWAIT, NULL));
		for (i = 0; i < (pass == 2 ? 4 : 8); i++) {
			memcpy(&idx, bufs[i], 4);
			EXPECT_EQ(pass == 2 ? 0 : (uint32_t)i, idx);
			EXPECT_EQ(!(i & 1) && fl != MSG_TRUNC ? 16 : 20, v[i].msg_len);
			EXPECT_EQ(i & 1 ? 0 : MSG_TRUNC, v[i].msg_hdr.msg_flags);
			EXPECT_EQ(sizeof(names[i]), v[i].msg_hdr.msg_namelen);
			EXPECT_EQ(htonl(0x0a080001), names[i].sin_addr.s_addr);
		}
	}
	EXPECT_EQ(8, drain(x));		/* what the peek left */
	close(x);
}

/*
 * A socket in an epoll set before it has rings (unbound: its first send
 * offloads it), with a thread already waiting on the set: the datagram
 * that then comes through its new ring wakes the waiter (the set holds
 * the socket's eventfd from the start; the new rings kick it).
 */
struct epwaiter {
	int ep;
	double woke;	/* ms, 0 while waiting */
	int n;
};

static void *ep_wait1(void *arg)
{
	struct epwaiter *e = arg;
	struct epoll_event ev;

	e->n = epoll_wait(e->ep, &ev, 1, 5000);
	e->woke = now_ms();
	return NULL;
}

TEST_F(pre, a_set_waiting_before_the_rings_wakes_for_them)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) };
	struct sockaddr_in me;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 5 };
	struct epwaiter e = { .ep = epoll_create1(0) };
	struct cmd k = { .len = 16, .n = 1 };
	socklen_t len = sizeof(me);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	pthread_t t;
	double sent;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, epoll_ctl(e.ep, EPOLL_CTL_ADD, fd, &ev));
	ASSERT_EQ(0, pthread_create(&t, NULL, ep_wait1, &e));
	usleep(200000);		/* asleep in the kernel's epoll_wait */
	/* the first send binds and offloads it: rings now */
	inet_pton(AF_INET, "10.8.0.1", &to.sin_addr);
	ASSERT_EQ(1, sendto(fd, "x", 1, 0, (void *)&to, sizeof(to)));
	ASSERT_EQ(0, getsockname(fd, (void *)&me, &len));
	usleep(100000);
	k.port = ntohs(me.sin_port);
	sent = now_ms();
	send_cmd(self->cmd, self->done, &k);
	pthread_join(t, NULL);
	EXPECT_EQ(1, e.n);
	EXPECT_LT(e.woke - sent, 2000);
	EXPECT_EQ(1, drain(fd));
	close(fd);
	close(e.ep);
}

/* ---- feed handlers ---- */

/* A member of GROUP on port, bound to the group or to the wildcard. */
static int member_socket(uint16_t port, bool wildcard)
{
	struct sockaddr_in g = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct ip_mreqn mr = { .imr_ifindex = 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), on = 1;

	inet_pton(AF_INET, GROUP, &mr.imr_multiaddr);
	if (!wildcard)
		g.sin_addr = mr.imr_multiaddr;
	inet_pton(AF_INET, ADDR_B, &mr.imr_address);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
	    bind(fd, (void *)&g, sizeof(g)) ||
	    setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr)))
		return -1;
	return fd;
}

static int group_socket(uint16_t port)
{
	return member_socket(port, false);
}

/*
 * 200 datagrams to the group: each of a and b reads all, through rings
 * or (rings false) all through its kernel socket.
 */
static void group_to_both(struct __test_metadata *_metadata, int cmd,
			  int done, uint16_t port, int a, int b, bool rings)
{
	struct cmd k = { .port = port, .len = 32, .n = 200 };
	struct vmak_sockstat_counters ca, cb;

	ASSERT_GE(a, 0);
	ASSERT_GE(b, 0);
	inet_pton(AF_INET, GROUP, &k.dst);
	send_cmd(cmd, done, &k);
	usleep(200000);
	EXPECT_EQ(200, drain(a));
	EXPECT_EQ(200, drain(b));
	ASSERT_EQ(0, sock_counters(a, &ca));
	ASSERT_EQ(0, sock_counters(b, &cb));
	EXPECT_EQ(rings ? 200 : 0, ca.rx_ring);
	EXPECT_EQ(rings ? 200 : 0, cb.rx_ring);
	EXPECT_EQ(rings ? 0 : 200, ca.rx_os);
	EXPECT_EQ(rings ? 0 : 200, cb.rx_os);
	close(a);
	close(b);
}

TEST_F(pre, two_reuseaddr_sockets_of_one_process_share_a_group_on_rings)
{
	/* 2 x 200 chunks: within a ring's share of even a halved UMEM */
	group_to_both(_metadata, self->cmd, self->done, 31090,
		      group_socket(31090), group_socket(31090), true);
}

/* A member of GROUP on port the library never sees: system calls. */
static int plain_member(uint16_t port)
{
	struct sockaddr_in g = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct ip_mreqn mr = { .imr_ifindex = 0 };
	int fd = (int)syscall(SYS_socket, AF_INET, SOCK_DGRAM, 0), on = 1;

	inet_pton(AF_INET, GROUP, &g.sin_addr);
	mr.imr_multiaddr = g.sin_addr;
	inet_pton(AF_INET, ADDR_B, &mr.imr_address);
	if (fd < 0 ||
	    syscall(SYS_setsockopt, fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
	    syscall(SYS_bind, fd, &g, sizeof(g)) ||
	    syscall(SYS_setsockopt, fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr,
		    sizeof(mr)))
		return -1;
	return fd;
}

/*
 * A feed handler's layout: a member bound to the group and one bound to
 * the wildcard in one process, beside another process's member of the
 * same group and port, made first. Each gets every datagram once. If the
 * other's member is the library's too, through the rings; if it is a
 * plain socket, through the kernel sockets: the module takes a shared
 * group's datagram off the stack only while every socket that would
 * receive it has a rule (kmod/rx.c vmak_rx_shared()), or the plain one
 * would lose it (library.rst, "Multicast").
 */
static void beside_another(struct __test_metadata *_metadata, int cmd,
			   int done, uint16_t port, bool plain)
{
	int go[2], ready[2], st = -1;
	char x = 0, buf[64];
	pid_t pid;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		int c = plain ? plain_member(port) : group_socket(port), n = 0;

		x = c >= 0 ? 'y' : 'n';
		if (write(ready[1], &x, 1) != 1 || read(go[0], &x, 1) != 1)
			_exit(3);
		while (plain ? syscall(SYS_recvfrom, c, buf, sizeof(buf),
				       MSG_DONTWAIT, NULL, NULL) >= 0 :
			       recv(c, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
			n++;
		_exit(n == 200 ? 0 : 1);
	}
	ASSERT_EQ(1, read(ready[0], &x, 1));
	ASSERT_EQ('y', x);
	group_to_both(_metadata, cmd, done, port, member_socket(port, false),
		      member_socket(port, true), !plain);
	EXPECT_EQ(1, write(go[1], &x, 1));
	waitpid(pid, &st, 0);
	EXPECT_EQ(0, st) TH_LOG("the other process's member: status %#x", st);
}

TEST_F(pre, group_and_wildcard_members_beside_another_process)
{
	beside_another(_metadata, self->cmd, self->done, 31091, false);
}

TEST_F(pre, group_and_wildcard_members_beside_a_plain_member)
{
	beside_another(_metadata, self->cmd, self->done, 31092, true);
}

/*
 * A libvma.conf rule that keeps a socket on the kernel keeps the groups
 * it joins after bind() there too (their join used to add a ring rule
 * without asking the rules).
 */
TEST_F(pre, a_use_os_rule_covers_a_later_join)
{
	struct sockaddr_in g = { .sin_family = AF_INET,
				 .sin_port = htons(31094) };
	struct cmd k = { .port = 31094, .len = 32, .n = 50 };
	struct ip_mreqn mr = { .imr_ifindex = 0 };
	struct vmak_sockstat_counters c;
	struct vma_api_t *api = vma_get_api();
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, api->add_conf_rule("use os udp_receiver *:31094"));
	inet_pton(AF_INET, GROUP, &g.sin_addr);
	mr.imr_multiaddr = g.sin_addr;
	inet_pton(AF_INET, ADDR_B, &mr.imr_address);
	ASSERT_EQ(0, bind(fd, (void *)&g, sizeof(g)));
	ASSERT_EQ(0, setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr,
				sizeof(mr)));
	k.dst = g.sin_addr.s_addr;
	send_cmd(self->cmd, self->done, &k);
	usleep(200000);
	EXPECT_EQ(50, drain(fd));
	/* counted, or forgotten as the kernel's for good: not the rings' */
	if (!sock_counters(fd, &c)) {
		EXPECT_EQ(0, c.rx_ring);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	if (getuid() == 0) {
		netns_up();
		sh("ip -n sa route add 224.0.0.0/4 dev wa;"
		   "ip -n sb route add 224.0.0.0/4 dev wb");
	}
	return test_harness_run(argc, argv);
}
