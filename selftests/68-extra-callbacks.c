// SPDX-License-Identifier: GPL-2.0
/*
 * Receive callbacks are program code (extra-api-1 review, X-H1..X-H3):
 * whatever a callback calls goes through the library as the program's own
 * calls do, on every path that runs callbacks, and no path holds a lock
 * of the library's while one runs. Like 65, this file includes only the C
 * library and <mellanox/vma_extra.h>; it runs preloaded and, built as
 * 69-linked-extra-callbacks, linked with -lvmak. Receivers are user
 * nobody in netns sb, the sender root in sa.
 *
 *   each path (recv, recvmsg, recvmmsg, poll, select, epoll_wait, and
 *     socketxtreme_poll on a socket, a ring and an epoll fd) runs a
 *     callback that sets an option, sends, adds its socket to an epoll set
 *     and takes it out, and closes it: each call does what it does outside
 *     a callback, and nothing hangs (an alarm turns a hang into a failure)
 *   a callback's receive on another socket of the ring sees the ring's
 *     datagram, not only the kernel socket's
 *   a callback that closes its fd and opens another file: the receive that
 *     ran it never reads the new file
 *   packets held at close go back to the ring (zero copy, a callback's
 *     HOLD); socketXtreme's buffers stay the program's until freed
 */
#include <stdatomic.h>
#include <time.h>

#include "preload.h"
#include <mellanox/vma_extra.h>

#define PORT_A	32100
#define PORT_B	32101

/* What the callback's own calls returned (errno for a failure). */
struct inner {
	atomic_int calls;
	int fd;			/* the socket it closes */
	int ep;			/* a set it adds the socket to and removes */
	int opt, opt_err, sent, sent_err, add, add_err, del, del_err, cl;
	int other;		/* recv() on PORT_B's socket, or -2 if unused */
	int other_err;
	int reopen;		/* open /dev/null right after close() */
	bool connect;		/* connect() instead of close() */
	int conn;		/* what it returned */
	void *id;		/* the packet's id, its payload's sequence */
	uint32_t seq;
	vma_recv_callback_retval_t ret;
};

static struct inner in;

static void rcvtimeo(int fd, int sec)
{
	struct timeval tv = { .tv_sec = sec };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static vma_recv_callback_retval_t cb(int fd, size_t sz_iov, struct iovec iov[],
				     struct vma_info_t *info, void *ctx)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(PORT_A) };
	struct epoll_event ev = { .events = EPOLLIN };
	struct inner *x = ctx;
	uint64_t ud = 77;
	char buf[64];

	(void)fd;
	(void)sz_iov;
	if (atomic_fetch_add(&x->calls, 1))
		return VMA_PACKET_DROP;	/* once: the socket is gone after */
	inet_pton(AF_INET, "10.8.0.1", &to.sin_addr);
	x->opt = setsockopt(x->fd, SOL_SOCKET, SO_VMA_USER_DATA, &ud, sizeof(ud));
	x->opt_err = errno;
	x->sent = (int)sendto(x->fd, "cb", 2, 0, (void *)&to, sizeof(to));
	x->sent_err = errno;
	if (x->ep >= 0) {
		x->add = epoll_ctl(x->ep, EPOLL_CTL_ADD, x->fd, &ev);
		x->add_err = errno;
		x->del = epoll_ctl(x->ep, EPOLL_CTL_DEL, x->fd, NULL);
		x->del_err = errno;
	}
	if (x->other >= 0) {
		x->other = (int)recv(x->other, buf, sizeof(buf), MSG_DONTWAIT);
		x->other_err = errno;
	}
	x->id = info->packet_id;
	memcpy(&x->seq, iov[0].iov_base, sizeof(x->seq));
	if (x->connect) {
		x->conn = connect(x->fd, (void *)&to, sizeof(to));
		return x->ret;
	}
	x->cl = close(x->fd);
	if (x->reopen)
		x->reopen = open("/dev/null", O_RDONLY);
	return x->ret;
}

/* The path a callback runs on. */
enum path { P_RECV, P_RECVMSG, P_RECVMMSG, P_POLL, P_SELECT, P_EPOLL,
	    P_XT_SOCKET, P_XT_RING, P_XT_EPOLL };

static bool xt(enum path p)
{
	return p >= P_XT_SOCKET;
}

/*
 * One turn of the path on fd (its ring fd rfd, an epoll set ep holding
 * it): what runs the callback. Returns the call's result.
 */
static int run_path(enum path p, int fd, int rfd, int ep,
		    struct vma_api_t *api)
{
	struct vma_completion_t c[8];
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	struct epoll_event ev[4];
	struct timeval tv = { 0, 200000 };
	char buf[256];
	struct iovec iov = { buf, sizeof(buf) };
	struct mmsghdr mm = { .msg_hdr = { .msg_iov = &iov, .msg_iovlen = 1 } };
	fd_set rs;

	switch (p) {
	case P_RECV:
		return (int)recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	case P_RECVMSG:
		return (int)recvmsg(fd, &mm.msg_hdr, MSG_DONTWAIT);
	case P_RECVMMSG:
		return recvmmsg(fd, &mm, 1, MSG_DONTWAIT, NULL);
	case P_POLL:
		return poll(&pf, 1, 200);
	case P_SELECT:
		FD_ZERO(&rs);
		FD_SET(fd, &rs);
		return select(fd + 1, &rs, NULL, NULL, &tv);
	case P_EPOLL:
		return epoll_wait(ep, ev, 4, 200);
	case P_XT_SOCKET:
		return api->socketxtreme_poll(fd, c, 8, 0);
	case P_XT_RING:
		return api->socketxtreme_poll(rfd, c, 8, 0);
	case P_XT_EPOLL:
		return api->socketxtreme_poll(ep, c, 8, 0);
	}
	return -1;
}

/*
 * The socket's ring exists once a datagram came through it: one sent and
 * read (or polled and freed) before the callback is registered.
 */
static int first_through_ring(struct __test_metadata *_metadata, int cmd,
			      int done, struct vma_api_t *api, int fd, bool xtm)
{
	struct vma_completion_t c[4];
	char buf[64];
	int n = 0, k, rfd = -1;

	send_n(cmd, done, PORT_A, 1, 24);
	for (k = 0; k < 500 && n <= 0; k++, usleep(2000))
		n = xtm ? api->socketxtreme_poll(fd, c, 4, 0) :
			  (int)recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	EXPECT_EQ(xtm ? 1 : 24, n);
	if (xtm && n == 1)
		EXPECT_EQ(0, api->socketxtreme_free_vma_packets(&c[0].packet, 1));
	EXPECT_EQ(1, api->get_socket_rings_fds(fd, &rfd, 1));
	return rfd;
}

/*
 * Each path in turn, a socket of its own (one process: socketXtreme or
 * not, as VMA_SOCKETXTREME said at the first socket).
 */
static void every_path(struct __test_metadata *_metadata, int cmd, int done,
		       enum path first, enum path last)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct vma_api_t *api = vma_get_api();
	int fd, rfd, ep, rc;
	socklen_t len;
	uint64_t ud;
	enum path p;

	for (p = first; p <= last; p++) {
		fd = udp_bound(PORT_A);
		ASSERT_GE(fd, 0);
		ep = epoll_create1(0);
		ASSERT_GE(ep, 0);
		ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
		rfd = first_through_ring(_metadata, cmd, done, api, fd, xt(p));
		in = (struct inner){ .fd = fd, .ep = epoll_create1(0),
				     .other = -2, .ret = VMA_PACKET_DROP };
		ASSERT_EQ(0, api->register_recv_callback(fd, cb, &in));
		send_n(cmd, done, PORT_A, 1, 24);
		usleep(100000);
		alarm(5);	/* a callback that deadlocks fails the test */
		rc = run_path(p, fd, rfd, ep, api);
		alarm(0);
		EXPECT_EQ(1, atomic_load(&in.calls)) TH_LOG("path %d", p);
		/* each call as the program's own: the library's */
		EXPECT_EQ(0, in.opt) TH_LOG("path %d: setsockopt: %s", p,
					    strerror(in.opt_err));
		EXPECT_EQ(2, in.sent) TH_LOG("path %d: sendto: %s", p,
					     strerror(in.sent_err));
		EXPECT_EQ(0, in.add) TH_LOG("path %d: epoll_ctl ADD: %s", p,
					    strerror(in.add_err));
		EXPECT_EQ(0, in.del) TH_LOG("path %d: epoll_ctl DEL: %s", p,
					    strerror(in.del_err));
		EXPECT_EQ(0, in.cl) TH_LOG("path %d", p);
		/* the socket is closed: its number is nobody's now */
		len = sizeof(ud);
		EXPECT_EQ(-1, getsockopt(fd, SOL_SOCKET, SO_VMA_USER_DATA, &ud,
					 &len));
		EXPECT_EQ(EBADF, errno);
		TH_LOG("path %d returned %d", p, rc);
		close(in.ep);
		close(ep);
	}
}

TEST_F(pre, a_callback_may_make_any_call_on_every_receive_path)
{
	every_path(_metadata, self->cmd, self->done, P_RECV, P_EPOLL);
}

TEST_F(pre, a_callback_may_make_any_call_from_socketxtreme_poll)
{
	setenv("VMA_SOCKETXTREME", "1", 1);	/* before the first socket */
	every_path(_metadata, self->cmd, self->done, P_XT_SOCKET, P_XT_EPOLL);
}

/*
 * A callback's receive on another socket of the same ring finds the
 * datagram the ring brought it (X-H3: it read only the kernel socket).
 */
TEST_F(pre, a_callback_receives_from_another_socket_through_the_ring)
{
	struct vma_api_t *api = vma_get_api();
	int a = udp_bound(PORT_A), b = udp_bound(PORT_B);
	char buf[64];

	ASSERT_GE(a, 0);
	ASSERT_GE(b, 0);
	first_through_ring(_metadata, self->cmd, self->done, api, a, false);
	in = (struct inner){ .fd = dup(a), .ep = -1, .other = b,
			     .ret = VMA_PACKET_RECV };
	ASSERT_EQ(0, api->register_recv_callback(a, cb, &in));
	send_n(self->cmd, self->done, PORT_B, 1, 24);	/* waits in the ring */
	usleep(100000);
	send_n(self->cmd, self->done, PORT_A, 1, 24);
	usleep(100000);
	alarm(5);
	EXPECT_EQ(24, recv(a, buf, sizeof(buf), MSG_DONTWAIT));
	alarm(0);
	EXPECT_EQ(1, atomic_load(&in.calls));
	EXPECT_EQ(24, in.other) TH_LOG("recv on b: %s", strerror(in.other_err));
	close(a);
	close(b);
}

/*
 * A callback closes the socket it runs for and opens a file, which takes
 * the socket's number: the receive that ran it reads the socket it was
 * called on (or fails as on a closed socket), never the new file.
 */
TEST_F(pre, a_callback_that_closes_and_reopens_its_number)
{
	struct vma_api_t *api = vma_get_api();
	int fd = udp_bound(PORT_A);
	char buf[64];
	ssize_t n;

	ASSERT_GE(fd, 0);
	first_through_ring(_metadata, self->cmd, self->done, api, fd, false);
	in = (struct inner){ .fd = fd, .ep = -1, .other = -2, .reopen = 1,
			     .ret = VMA_PACKET_RECV };
	ASSERT_EQ(0, api->register_recv_callback(fd, cb, &in));
	send_n(self->cmd, self->done, PORT_A, 1, 24);
	usleep(100000);
	alarm(5);
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	alarm(0);
	EXPECT_EQ(1, atomic_load(&in.calls));
	EXPECT_EQ(fd, in.reopen);	/* the number went to /dev/null */
	if (n < 0) {
		EXPECT_TRUE(errno == EAGAIN || errno == EBADF) TH_LOG("%s",
			strerror(errno));
	} else {
		EXPECT_EQ(24, n);
	}
	close(in.reopen);
}

/*
 * Up to 100 datagrams queued for fd, by recvfrom_zcopy(): how many came
 * without a copy (*got: how many in all). Their packet ids into ids[]
 * (NULL for a copy), or given back at once with ids NULL.
 */
static int zc_take(struct vma_api_t *api, int fd, void **ids, bool give_back,
		   int *got)
{
	struct vma_packets_t *p;
	char buf[256];
	int i, flags, zc = 0;

	for (i = 0; i < 100; i++) {
		flags = MSG_DONTWAIT;
		if (ids)
			ids[i] = NULL;
		if (api->recvfrom_zcopy(fd, buf, sizeof(buf), &flags, NULL,
					NULL) < 0)
			break;
		if (!(flags & MSG_VMA_ZCOPY))
			continue;
		p = (struct vma_packets_t *)buf;
		if (ids)
			ids[i] = p->pkts[0].packet_id;
		if (give_back && api->free_packets(fd, p->pkts, 1))
			return -1;
		zc++;
	}
	*got = i;
	return zc;
}

/*
 * Packets held when their socket closes go back to the ring: zero-copy
 * packets (nobody can free_packets() them any more) and a callback's HOLD
 * on a socket it closed. With 128 chunks a ring, six rounds of 100 held
 * and closed would leave the ring none; each round's datagrams must still
 * come through the ring, without a copy.
 */
TEST_F(pre, packets_held_at_close_go_back)
{
	struct vma_api_t *api;
	char buf[256];
	void *ids[100];
	int round, i, fd, zc;

	setenv("VMA_RX_WRE", "128", 1);
	api = vma_get_api();
	for (round = 0; round < 6; round++) {
		fd = udp_bound(PORT_A);
		ASSERT_GE(fd, 0);
		send_n(self->cmd, self->done, PORT_A, 100, 24);
		usleep(50000);
		zc = zc_take(api, fd, ids, false, &i);
		/* the first round may still be finding its ring */
		if (round) {
			EXPECT_EQ(100, zc) TH_LOG("round %d", round);
		} else {
			EXPECT_EQ(100, i);
		}
		close(fd);
	}
	/* what went back at close is nobody's: freeing it again fails */
	fd = udp_bound(PORT_A);
	ASSERT_GE(fd, 0);
	for (i = 0; i < 100; i++)
		if (ids[i]) {
			EXPECT_EQ(-1, api->free_packets(fd,
				(struct vma_packet_t *)&ids[i], 1));
			break;
		}
	/* a callback that closes its socket and holds: the chunk comes back */
	for (round = 0; round < 150; round++) {
		in = (struct inner){ .fd = fd, .ep = -1, .other = -2,
				     .ret = VMA_PACKET_HOLD };
		ASSERT_EQ(0, api->register_recv_callback(fd, cb, &in));
		send_n(self->cmd, self->done, PORT_A, 1, 24);
		for (i = 0; i < 200 && !atomic_load(&in.calls); i++) {
			recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
			usleep(1000);
		}
		ASSERT_EQ(1, atomic_load(&in.calls)) TH_LOG("round %d", round);
		fd = udp_bound(PORT_A);
		ASSERT_GE(fd, 0);
	}
	send_n(self->cmd, self->done, PORT_A, 100, 24);
	usleep(50000);
	zc = zc_take(api, fd, NULL, true, &i);
	EXPECT_EQ(100, zc);
	close(fd);
}

/*
 * A HOLD stays the socket's when the callback moves it off the ring
 * (connect() after bind() retires its rule): the packet is freed by
 * free_packets(), its payload intact until then (it used to go back to
 * the ring at once, under the reader).
 */
TEST_F(pre, a_hold_stays_when_the_callback_moves_its_socket)
{
	struct vma_api_t *api = vma_get_api();
	int fd = udp_bound(PORT_A);
	struct vma_packet_t pk;
	char buf[64];
	uint32_t seq;

	ASSERT_GE(fd, 0);
	first_through_ring(_metadata, self->cmd, self->done, api, fd, false);
	in = (struct inner){ .fd = fd, .ep = -1, .other = -2, .connect = true,
			     .ret = VMA_PACKET_HOLD };
	ASSERT_EQ(0, api->register_recv_callback(fd, cb, &in));
	send_n(self->cmd, self->done, PORT_A, 1, 24);
	usleep(100000);
	alarm(5);
	recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	alarm(0);
	ASSERT_EQ(1, atomic_load(&in.calls));
	EXPECT_EQ(0, in.conn);
	ASSERT_NE(NULL, in.id);
	/* more datagrams through the ring meanwhile: the chunk is not theirs */
	ASSERT_EQ(0, api->register_recv_callback(fd, NULL, NULL));
	send_n(self->cmd, self->done, PORT_A, 200, 24);
	usleep(100000);
	/* a packet id is its vma_buff_t; no payload: it was never held */
	ASSERT_NE(NULL, ((struct vma_buff_t *)in.id)->payload);
	memcpy(&seq, ((struct vma_buff_t *)in.id)->payload, sizeof(seq));
	EXPECT_EQ(in.seq, seq);
	pk.packet_id = in.id;
	EXPECT_EQ(0, api->free_packets(fd, &pk, 1));
	close(fd);
}

/* A busy-waiting callback: a socket on the ring that is kept busy. */
static vma_recv_callback_retval_t slow_cb(int fd, size_t sz_iov,
					  struct iovec iov[],
					  struct vma_info_t *info, void *ctx)
{
	double end = mono() + 100e-6;

	(void)fd;
	(void)sz_iov;
	(void)iov;
	(void)info;
	atomic_fetch_add((atomic_int *)ctx, 1);
	while (mono() < end)
		;
	return VMA_PACKET_DROP;
}

/*
 * Another socket's callbacks keep running while a stream comes in: a
 * non-blocking receive and a short epoll_wait() on a quiet socket of the
 * same ring still return, each after one look.
 */
TEST_F(pre, a_busy_callback_on_the_ring_does_not_hold_up_other_calls)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct vma_api_t *api = vma_get_api();
	int a = udp_bound(PORT_A), b = udp_bound(PORT_B), ep, k;
	atomic_int calls = 0;
	double t0, worst_recv = 0, worst_wait = 0;
	char buf[64];
	pid_t pid;

	ASSERT_GE(a, 0);
	ASSERT_GE(b, 0);
	first_through_ring(_metadata, self->cmd, self->done, api, a, false);
	ep = epoll_create1(0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, a, &ev));
	ASSERT_EQ(0, api->register_recv_callback(b, slow_cb, &calls));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		send_n(self->cmd, self->done, PORT_B, 20000, 24);
		_exit(0);
	}
	usleep(50000);
	alarm(30);
	for (k = 0; k < 20 && !waitpid(pid, NULL, WNOHANG); k++) {
		t0 = mono();
		EXPECT_EQ(-1, recv(a, buf, sizeof(buf), MSG_DONTWAIT));
		if (mono() - t0 > worst_recv)
			worst_recv = mono() - t0;
		t0 = mono();
		EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 20));
		if (mono() - t0 > worst_wait)
			worst_wait = mono() - t0;
	}
	alarm(0);
	TH_LOG("%d turns while %d callbacks ran: recv %.3f s, epoll_wait %.3f s at worst",
	       k, atomic_load(&calls), worst_recv, worst_wait);
	EXPECT_GT(k, 1);	/* several turns inside the stream */
	waitpid(pid, NULL, 0);
	close(ep);
	close(a);
	close(b);
}

struct unreg {
	struct vma_api_t *api;
	int fd, other;
	atomic_int calls;
};

/* At the 20th datagram: unregister, let more arrive, drain the ring. */
static vma_recv_callback_retval_t unreg_cb(int fd, size_t sz_iov,
					   struct iovec iov[],
					   struct vma_info_t *info, void *ctx)
{
	struct unreg *x = ctx;
	char buf[64];

	(void)fd;
	(void)sz_iov;
	(void)info;
	if (atomic_fetch_add(&x->calls, 1) == 20) {
		x->api->register_recv_callback(x->fd, NULL, NULL);
		usleep(30000);
		recv(x->other, buf, sizeof(buf), MSG_DONTWAIT);	/* a drain */
	}
	(void)iov;
	return VMA_PACKET_RECV;
}

/*
 * A callback removed while datagrams wait for it: what comes after them
 * does not overtake them (X-L6: drained straight to the queue, later
 * datagrams came out first).
 */
TEST_F(pre, removing_a_callback_keeps_the_order)
{
	static struct unreg x;
	struct vma_api_t *api = vma_get_api();
	int a = udp_bound(PORT_A), b = udp_bound(PORT_B);
	uint32_t seq, last = 0;
	int got = 0, bad = 0;
	char buf[64];
	pid_t pid;

	ASSERT_GE(a, 0);
	ASSERT_GE(b, 0);
	first_through_ring(_metadata, self->cmd, self->done, api, a, false);
	x = (struct unreg){ .api = api, .fd = a, .other = b };
	ASSERT_EQ(0, api->register_recv_callback(a, unreg_cb, &x));
	rcvtimeo(a, 2);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		send_n(self->cmd, self->done, PORT_A, 300, 24);
		_exit(0);
	}
	while (got < 300 && recv(a, buf, sizeof(buf), 0) == 24) {
		memcpy(&seq, buf, sizeof(seq));
		if (got && seq <= last)
			bad++;
		last = seq;
		got++;
	}
	waitpid(pid, NULL, 0);
	EXPECT_EQ(300, got);
	EXPECT_EQ(0, bad);
	close(a);
	close(b);
}

/* Every other datagram DROPped, the rest left to the receive. */
static vma_recv_callback_retval_t every_other_cb(int fd, size_t sz_iov,
						 struct iovec iov[],
						 struct vma_info_t *info,
						 void *ctx)
{
	atomic_int *n = ctx;

	(void)fd;
	(void)sz_iov;
	(void)iov;
	(void)info;
	return atomic_fetch_add(n, 1) % 2 ? VMA_PACKET_RECV : VMA_PACKET_DROP;
}

/*
 * What a callback takes (DROP or HOLD) is counted for its socket apart
 * from what its receives read (vmakctl sockets: rx-callback, rx-ring):
 * sockperf's callback mode showed 0 through the ring that carried it all.
 */
TEST_F(pre, what_callbacks_take_is_counted)
{
	struct vma_api_t *api = vma_get_api();
	struct vmak_sockstat_counters c0, c1;
	int a = udp_bound(PORT_A), got = 0;
	atomic_int calls = 0;
	char buf[64];

	ASSERT_GE(a, 0);
	first_through_ring(_metadata, self->cmd, self->done, api, a, false);
	ASSERT_EQ(0, sock_counters(a, &c0));
	ASSERT_EQ(0, api->register_recv_callback(a, every_other_cb, &calls));
	send_n(self->cmd, self->done, PORT_A, 40, 24);
	rcvtimeo(a, 2);
	while (got < 20 && recv(a, buf, sizeof(buf), 0) == 24)
		got++;
	EXPECT_EQ(20, got);
	EXPECT_EQ(40, atomic_load(&calls));
	ASSERT_EQ(0, sock_counters(a, &c1));
	EXPECT_EQ(20, c1.rx_callback - c0.rx_callback);
	EXPECT_EQ(20, c1.rx_ring - c0.rx_ring);
	EXPECT_EQ(0, c1.rx_os - c0.rx_os);
	close(a);
}

struct self_remove {
	struct vma_api_t *api;
	int fd, cmd, done;
	atomic_int in_cb;
	ssize_t inner;
	int inner_err;
};

/* Removes itself, then waits in recv() on its own socket for the next. */
static vma_recv_callback_retval_t self_remove_cb(int fd, size_t sz_iov,
						 struct iovec iov[],
						 struct vma_info_t *info,
						 void *ctx)
{
	struct self_remove *x = ctx;
	char buf[64];

	(void)fd;
	(void)sz_iov;
	(void)iov;
	(void)info;
	x->api->register_recv_callback(x->fd, NULL, NULL);
	atomic_store(&x->in_cb, 1);
	x->inner = recv(x->fd, buf, sizeof(buf), 0);
	x->inner_err = errno;
	return VMA_PACKET_DROP;
}

static void *send_when_in_cb(void *arg)
{
	struct self_remove *x = arg;
	int i;

	for (i = 0; i < 5000 && !atomic_load(&x->in_cb); i++)
		usleep(1000);
	send_n(x->cmd, x->done, PORT_A, 1, 24);
	return NULL;
}

/*
 * A callback that removes itself and then waits in recv() on its own
 * socket gets the next datagram: it goes to the socket's queue, not to a
 * list of datagrams waiting for callbacks that only this thread, inside
 * its callback, could run (found by review).
 */
TEST_F(pre, a_callback_that_removes_itself_then_receives)
{
	static struct self_remove x;
	struct vma_api_t *api = vma_get_api();
	int a = udp_bound(PORT_A);
	pthread_t t;
	char buf[64];

	ASSERT_GE(a, 0);
	first_through_ring(_metadata, self->cmd, self->done, api, a, false);
	x = (struct self_remove){ .api = api, .fd = a, .cmd = self->cmd,
				  .done = self->done };
	rcvtimeo(a, 3);
	ASSERT_EQ(0, api->register_recv_callback(a, self_remove_cb, &x));
	send_n(self->cmd, self->done, PORT_A, 1, 24);
	ASSERT_EQ(0, pthread_create(&t, NULL, send_when_in_cb, &x));
	recv(a, buf, sizeof(buf), 0);	/* runs the callback */
	pthread_join(t, NULL);
	EXPECT_EQ(1, atomic_load(&x.in_cb));
	EXPECT_EQ(24, x.inner) TH_LOG("recv() in the callback: %s",
				      strerror(x.inner_err));
	close(a);
}

/*
 * socketXtreme's buffers are the program's until it frees them, even past
 * their socket's close (libvma's are too): freed after close, once.
 */
TEST_F(pre, socketxtreme_buffers_outlive_their_socket)
{
	struct vma_completion_t c[8];
	struct vma_api_t *api;
	int fd, n = 0, k;

	setenv("VMA_SOCKETXTREME", "1", 1);
	fd = udp_bound(PORT_A);
	ASSERT_GE(fd, 0);
	api = vma_get_api();
	send_n(self->cmd, self->done, PORT_A, 1, 24);
	for (k = 0; k < 500 && n <= 0; k++, usleep(2000))
		n = api->socketxtreme_poll(fd, c, 8, 0);
	ASSERT_EQ(1, n);
	close(fd);
	EXPECT_EQ(24, c[0].packet.buff_lst->len);
	EXPECT_EQ(0, api->socketxtreme_free_vma_packets(&c[0].packet, 1));
	EXPECT_EQ(-1, api->socketxtreme_free_vma_packets(&c[0].packet, 1));
	EXPECT_EQ(EINVAL, errno);
}

int main(int argc, char **argv)
{
	if (getuid() == 0)
		netns_up();
	return test_harness_run(argc, argv);
}
