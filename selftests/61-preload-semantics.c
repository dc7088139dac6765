// SPDX-License-Identifier: GPL-2.0
/*
 * Semantics of offloaded sockets, seen by a plain program: this file uses
 * the C library only. It runs preloaded (LD_PRELOAD=libvmak.so, set by a
 * constructor that re-executes it) and, built as 62-linked-semantics,
 * linked with -lvmak. Receivers are user nobody in netns pb; a sender
 * child (root, netns pa) sends across veth, so datagrams come through the
 * rings. Threads on one socket and sockets on one ring, readiness with
 * every epoll mode (EPOLLEXCLUSIVE too), shutdown waking a blocked
 * receiver and close not waking it, dups, fork, daemon(), exec, the
 * library's own fds, and signal handlers restarting a blocked receive.
 */
#include "preload.h"

TEST_F(pre, epoll_level_edge_oneshot)
{
	int fd = udp_bound(30001), ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0xfeedbeefcafe };
	struct epoll_event out[4];
	char buf[64];

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	EXPECT_EQ(0, epoll_wait(ep, out, 4, 0));
	send_n(self->cmd, self->done, 30001, 2, 32);
	/* level-triggered: reported while anything is queued */
	ASSERT_EQ(1, epoll_wait(ep, out, 4, 2000));
	EXPECT_EQ(0xfeedbeefcafe, out[0].data.u64);
	EXPECT_EQ(EPOLLIN, out[0].events);
	ASSERT_EQ(32, recv(fd, buf, sizeof(buf), 0));
	ASSERT_EQ(1, epoll_wait(ep, out, 4, 0));
	ASSERT_EQ(32, recv(fd, buf, sizeof(buf), 0));
	EXPECT_EQ(0, epoll_wait(ep, out, 4, 0));

	/* edge-triggered: once per arrival, not again for old data */
	ev.events = EPOLLIN | EPOLLET;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
	send_n(self->cmd, self->done, 30001, 1, 32);
	ASSERT_EQ(1, epoll_wait(ep, out, 4, 2000));
	EXPECT_EQ(0, epoll_wait(ep, out, 4, 0));
	EXPECT_EQ(1, drain(fd));

	/* one-shot: one report until EPOLL_CTL_MOD re-arms it */
	ev.events = EPOLLIN | EPOLLONESHOT;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
	send_n(self->cmd, self->done, 30001, 2, 32);
	ASSERT_EQ(1, epoll_wait(ep, out, 4, 2000));
	EXPECT_EQ(0, epoll_wait(ep, out, 4, 100));
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
	EXPECT_EQ(1, epoll_wait(ep, out, 4, 0));
	EXPECT_EQ(2, drain(fd));

	/* errors as the kernel gives them */
	EXPECT_EQ(-1, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	EXPECT_EQ(EEXIST, errno);
	EXPECT_EQ(0, epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL));
	EXPECT_EQ(-1, epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
	EXPECT_EQ(ENOENT, errno);
	close(ep);
	close(fd);
}

TEST_F(pre, one_fd_in_two_sets_and_a_set_in_poll)
{
	int fd = udp_bound(30002), e1 = epoll_create1(0), e2 = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 7 }, out[2];
	int p[2];
	struct pollfd pf[2];

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, epoll_ctl(e1, EPOLL_CTL_ADD, fd, &ev));
	ev.data.u32 = 8;
	ASSERT_EQ(0, epoll_ctl(e2, EPOLL_CTL_ADD, fd, &ev));
	ev.data.u32 = 9;
	ASSERT_EQ(0, epoll_ctl(e2, EPOLL_CTL_ADD, p[0], &ev));
	pf[0] = (struct pollfd){ .fd = e1, .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	EXPECT_EQ(0, poll(pf, 2, 0));
	send_n(self->cmd, self->done, 30002, 1, 40);
	/* the epoll fd inside a poll set turns readable */
	ASSERT_EQ(1, poll(pf, 2, 2000));
	EXPECT_EQ(POLLIN, pf[0].revents);
	ASSERT_EQ(1, epoll_wait(e1, out, 2, 2000));
	EXPECT_EQ(7, out[0].data.u32);
	ASSERT_EQ(1, epoll_wait(e2, out, 2, 2000));
	EXPECT_EQ(8, out[0].data.u32);
	/* other fds in the set keep working */
	ASSERT_EQ(1, write(p[1], "x", 1));
	ASSERT_EQ(2, epoll_wait(e2, out, 2, 2000));
	EXPECT_EQ(17, out[0].data.u32 + out[1].data.u32);
	EXPECT_EQ(1, drain(fd));
	/* closing the socket takes it out of both sets */
	close(fd);
	EXPECT_EQ(0, epoll_wait(e1, out, 2, 0));
	EXPECT_EQ(1, epoll_wait(e2, out, 2, 0));
	EXPECT_EQ(9, out[0].data.u32);
	close(e1);
	close(e2);
}

TEST_F(pre, select_and_poll_with_other_fds)
{
	int fd = udp_bound(30003), p[2];
	struct pollfd pf[2];
	struct timeval tv = { 2, 0 };
	fd_set r;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(1, write(p[1], "x", 1));
	pf[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	ASSERT_EQ(1, poll(pf, 2, 0));
	EXPECT_EQ(0, pf[0].revents);
	EXPECT_EQ(POLLIN, pf[1].revents);
	send_n(self->cmd, self->done, 30003, 1, 40);
	ASSERT_EQ(2, poll(pf, 2, 2000));
	EXPECT_EQ(POLLIN, pf[0].revents);
	FD_ZERO(&r);
	FD_SET(fd, &r);
	FD_SET(p[0], &r);
	ASSERT_EQ(2, select((fd > p[0] ? fd : p[0]) + 1, &r, NULL, NULL, &tv));
	EXPECT_TRUE(FD_ISSET(fd, &r));
	EXPECT_EQ(1, drain(fd));
	FD_ZERO(&r);
	FD_SET(fd, &r);
	tv = (struct timeval){ 0, 200000 };
	EXPECT_EQ(0, select(fd + 1, &r, NULL, NULL, &tv));
	/* the remaining time is written back, as Linux does */
	EXPECT_EQ(0, tv.tv_sec);
	EXPECT_EQ(0, tv.tv_usec);
	close(fd);
}

struct reader {
	int fd;
	uint32_t want, got;
	uint8_t *seen;
	pthread_mutex_t *lock;
	uint32_t dups;
};

static void *reader(void *arg)
{
	struct reader *r = arg;
	char buf[2048];
	uint32_t seq;
	ssize_t n;

	for (;;) {
		n = recv(r->fd, buf, sizeof(buf), 0);
		if (n < 4)
			break;		/* SO_RCVTIMEO: done */
		memcpy(&seq, buf, 4);
		pthread_mutex_lock(r->lock);
		if (seq < r->want && r->seen[seq])
			r->dups++;
		if (seq < r->want)
			r->seen[seq] = 1;
		r->got++;
		pthread_mutex_unlock(r->lock);
	}
	return NULL;
}

TEST_F(pre, eight_threads_on_one_socket)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct timeval tv = { 1, 0 };
	struct reader r[8];
	pthread_t t[8];
	uint8_t seen[800] = { 0 };
	uint32_t got = 0, dups = 0;
	int fd = udp_bound(30004), i;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	for (i = 0; i < 8; i++) {
		r[i] = (struct reader){ .fd = fd, .want = 800, .seen = seen,
					.lock = &lock };
		pthread_create(&t[i], NULL, reader, &r[i]);
	}
	send_n(self->cmd, self->done, 30004, 800, 64);
	for (i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		got += r[i].got;
		dups += r[i].dups;
	}
	EXPECT_EQ(800, got);
	EXPECT_EQ(0, dups);
	close(fd);
}

TEST_F(pre, eight_sockets_on_one_ring_keep_their_own)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct timeval tv = { 1, 0 };
	struct reader r[8];
	pthread_t t[8];
	uint8_t seen[8][100];
	int fd[8], i;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < 8; i++) {
		fd[i] = udp_bound((uint16_t)(30010 + i));
		ASSERT_GE(fd[i], 0);
		ASSERT_EQ(0, setsockopt(fd[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
		r[i] = (struct reader){ .fd = fd[i], .want = 100, .seen = seen[i],
					.lock = &lock };
		pthread_create(&t[i], NULL, reader, &r[i]);
	}
	for (i = 0; i < 8; i++)
		send_n(self->cmd, self->done, (uint16_t)(30010 + i), 100, (uint16_t)(40 + i));
	for (i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(100, r[i].got) TH_LOG("socket %d", i);
		EXPECT_EQ(0, r[i].dups);
		close(fd[i]);
	}
}

static void *blocked_recv(void *arg)
{
	int fd = *(int *)arg;
	char buf[64];

	return (void *)(intptr_t)recv(fd, buf, sizeof(buf), 0);
}

TEST_F(pre, shutdown_wakes_a_blocked_receiver)
{
	int fd = udp_bound(30020);
	pthread_t t;
	void *rc;

	ASSERT_GE(fd, 0);
	pthread_create(&t, NULL, blocked_recv, &fd);
	usleep(200000);
	/* unconnected UDP: ENOTCONN, and the sleeper still wakes */
	EXPECT_EQ(-1, shutdown(fd, SHUT_RD));
	EXPECT_EQ(ENOTCONN, errno);
	pthread_join(t, &rc);
	EXPECT_EQ(0, (intptr_t)rc);
	close(fd);
}

struct shut_msg {
	int fd;
	ssize_t rc;
	struct msghdr m;
};

static void *blocked_recvmsg(void *arg)
{
	struct shut_msg *s = arg;

	s->rc = recvmsg(s->fd, &s->m, 0);
	return NULL;
}

/* What the kernel writes back for it: no name, no control messages. */
TEST_F(pre, a_receive_ended_by_shutdown_writes_no_name)
{
	struct sockaddr_storage name;
	char buf[64], ctl[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct shut_msg s = { .fd = udp_bound(30030), .rc = -2, .m = {
		.msg_name = &name, .msg_namelen = sizeof(name),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
		.msg_flags = 0x5a } };
	pthread_t t;

	ASSERT_GE(s.fd, 0);
	pthread_create(&t, NULL, blocked_recvmsg, &s);
	usleep(200000);
	EXPECT_EQ(-1, shutdown(s.fd, SHUT_RD));
	pthread_join(t, NULL);
	EXPECT_EQ(0, s.rc);
	EXPECT_EQ(0, s.m.msg_namelen);
	EXPECT_EQ(0, s.m.msg_controllen);
	EXPECT_EQ(0, s.m.msg_flags);
	close(s.fd);
}

/*
 * close() does not wake a receive blocked in another thread: the socket
 * lives while the call does, and what arrives meanwhile is its (the
 * kernel's semantics). The port is free once the call returned.
 */
TEST_F(pre, close_while_another_thread_is_blocked)
{
	struct timeval tv = { 5, 0 };
	int fd = udp_bound(30022), again;
	pthread_t t;
	void *rc;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	pthread_create(&t, NULL, blocked_recv, &fd);
	usleep(200000);
	ASSERT_EQ(0, close(fd));
	usleep(200000);
	EXPECT_EQ(EBUSY, pthread_tryjoin_np(t, &rc));
	send_n(self->cmd, self->done, 30022, 1, 24);
	pthread_join(t, &rc);
	EXPECT_EQ(24, (intptr_t)rc);
	again = udp_bound(30022);
	EXPECT_GE(again, 0);
	close(again);
}

/* A dup keeps the socket when the fd it was made from closes, even once
 * that fd number is someone else's.
 */
TEST_F(pre, a_dup_outlives_the_fd_it_was_made_from)
{
	struct timeval tv = { 2, 0 };
	int fd = udp_bound(30023), d, p[2], i;
	char buf[64];

	ASSERT_GE(fd, 0);
	d = dup(fd);
	ASSERT_GE(d, 0);
	ASSERT_EQ(0, close(fd));
	EXPECT_EQ(-1, recv(d, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, pipe(p));	/* takes the lowest free numbers: fd's */
	EXPECT_EQ(-1, recv(d, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, setsockopt(d, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	send_n(self->cmd, self->done, 30023, 3, 40);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(40, recv(d, buf, sizeof(buf), 0));
	close(p[0]);
	close(p[1]);
	ASSERT_EQ(0, close(d));
	fd = udp_bound(30023);
	EXPECT_GE(fd, 0);
	close(fd);
}

/*
 * A receive blocked, and an epoll set joined, before the socket has a port
 * (as a client's socket, until its first send) see what the ring the
 * socket gets when it is bound takes.
 */
TEST_F(pre, sleepers_from_before_the_socket_had_rings)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(30025) };
	struct epoll_event ev = { .events = EPOLLIN }, out[2];
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ep = epoll_create1(0);
	struct timeval tv = { 5, 0 };
	pthread_t t;
	void *rc;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	pthread_create(&t, NULL, blocked_recv, &fd);
	usleep(200000);
	inet_pton(AF_INET, ADDR_B, &a.sin_addr);
	ASSERT_EQ(0, bind(fd, (void *)&a, sizeof(a)));
	send_n(self->cmd, self->done, 30025, 1, 28);
	pthread_join(t, &rc);
	EXPECT_EQ(28, (intptr_t)rc);
	send_n(self->cmd, self->done, 30025, 1, 28);
	EXPECT_EQ(1, epoll_wait(ep, out, 2, 3000));
	EXPECT_EQ(1, drain(fd));
	close(ep);
	close(fd);
}

static void *exclusive_wait(void *arg)
{
	struct epoll_event out[2];

	return (void *)(intptr_t)epoll_wait(*(int *)arg, out, 2, 2000);
}

TEST_F(pre, epollexclusive)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE | EPOLLONESHOT };
	int fd = udp_bound(30024), ep[2], i, woken = 0;
	pthread_t t[2];
	void *rc;

	ASSERT_GE(fd, 0);
	ep[0] = epoll_create1(0);
	ep[1] = epoll_create1(0);
	/* the kernel's rules: not with EPOLLONESHOT, and never modified */
	EXPECT_EQ(-1, epoll_ctl(ep[0], EPOLL_CTL_ADD, fd, &ev));
	EXPECT_EQ(EINVAL, errno);
	ev.events = EPOLLIN | EPOLLEXCLUSIVE;
	ASSERT_EQ(0, epoll_ctl(ep[0], EPOLL_CTL_ADD, fd, &ev));
	ASSERT_EQ(0, epoll_ctl(ep[1], EPOLL_CTL_ADD, fd, &ev));
	EXPECT_EQ(-1, epoll_ctl(ep[0], EPOLL_CTL_MOD, fd, &ev));
	EXPECT_EQ(EINVAL, errno);
	ev.events = EPOLLIN;
	EXPECT_EQ(-1, epoll_ctl(ep[0], EPOLL_CTL_MOD, fd, &ev));
	EXPECT_EQ(EINVAL, errno);
	/* a waiter in each set: a datagram wakes one or more */
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, exclusive_wait, &ep[i]);
	usleep(200000);
	send_n(self->cmd, self->done, 30024, 1, 32);
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], &rc);
		EXPECT_LE((intptr_t)rc, 1);
		woken += (intptr_t)rc == 1;
	}
	EXPECT_GE(woken, 1);
	EXPECT_EQ(1, drain(fd));
	close(ep[0]);
	close(ep[1]);
	close(fd);
}

TEST_F(pre, nonblocking_and_timeouts)
{
	int fd = udp_bound(30021);
	struct timeval tv = { 0, 300000 };
	struct timespec t0, t1;
	char buf[64];

	ASSERT_GE(fd, 0);
	EXPECT_EQ(-1, recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(-1, recv(fd, buf, sizeof(buf), 0));
	EXPECT_EQ(EAGAIN, errno);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_GE((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000, 250);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	EXPECT_EQ(-1, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
	send_n(self->cmd, self->done, 30021, 1, 20);
	usleep(100000);
	/* MSG_TRUNC gives the datagram's length; the buffer holds 8 */
	EXPECT_EQ(20, recv(fd, buf, 8, MSG_TRUNC));
	close(fd);
}

TEST_F(pre, fork_parent_keeps_its_rings_child_gets_its_own)
{
	int fd = udp_bound(30022), st;
	pid_t pid;

	ASSERT_GE(fd, 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		/* the child's copy is a kernel socket; its own new one works */
		int mine = udp_bound(30023);
		struct timeval tv = { 3, 0 };
		char buf[64];

		close(fd);
		setsockopt(mine, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (write(STDOUT_FILENO, "", 0) < 0)
			_exit(3);
		_exit(recv(mine, buf, sizeof(buf), 0) == 24 ? 0 : 2);
	}
	usleep(300000);
	send_n(self->cmd, self->done, 30023, 1, 24);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
	send_n(self->cmd, self->done, 30022, 5, 24);
	usleep(100000);
	EXPECT_EQ(5, drain(fd));
	close(fd);
}

TEST_F(pre, daemon_child_offloads_its_own_socket)
{
	int fd = udp_bound(30026), st, p[2];
	char res = 0;
	pid_t pid;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		/* daemon() forks again: the library's fork handling, twice */
		struct timeval tv = { 3, 0 };
		char buf[64], ok;
		int mine;

		if (daemon(1, 1))
			_exit(3);
		mine = udp_bound(30027);
		setsockopt(mine, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (write(p[1], "r", 1) != 1)
			_exit(4);
		ok = recv(mine, buf, sizeof(buf), 0) == 32 ? 'y' : 'n';
		if (write(p[1], &ok, 1) != 1)
			_exit(5);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));	/* daemon()'s parent */
	EXPECT_EQ(0, WEXITSTATUS(st));
	ASSERT_EQ(1, read(p[0], &res, 1));	/* the daemon is ready */
	send_n(self->cmd, self->done, 30027, 1, 32);
	ASSERT_EQ(1, read(p[0], &res, 1));
	EXPECT_EQ('y', res);
	/* and the first process's socket is untouched */
	send_n(self->cmd, self->done, 30026, 2, 32);
	usleep(100000);
	EXPECT_EQ(2, drain(fd));
	close(fd);
}

/* The exec'd program: read one datagram from the inherited fd. */
static int exec_child(int fd)
{
	struct timeval tv = { 3, 0 };
	struct rlimit rl;
	char buf[64];
	int i, internal = 0;

	/* none of the library's fds crossed exec */
	getrlimit(RLIMIT_NOFILE, &rl);
	for (i = (int)(rl.rlim_cur / 2); i < (int)rl.rlim_cur; i++)
		if (fcntl(i, F_GETFD) >= 0)
			internal++;
	if (internal)
		return 4;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return recv(fd, buf, sizeof(buf), 0) == 28 ? 0 : 5;
}

TEST_F(pre, exec_inherits_a_kernel_socket_and_no_library_fd)
{
	int fd = udp_bound(30024), st;
	char arg[16];
	pid_t pid;

	ASSERT_GE(fd, 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		snprintf(arg, sizeof(arg), "%d", fd);
		execl(exe_path, exe_path, "exec-child", arg, (char *)NULL);
		_exit(6);
	}
	usleep(500000);
	/* the parent still owns the ring: close it so the child gets it */
	close(fd);
	send_n(self->cmd, self->done, 30024, 1, 28);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_F(pre, the_library_fds_look_closed)
{
	int fd = udp_bound(30025), i, found = -1;
	struct rlimit rl;

	ASSERT_GE(fd, 0);
	getrlimit(RLIMIT_NOFILE, &rl);
	for (i = (int)rl.rlim_cur - 1; i >= (int)(rl.rlim_cur / 2); i--)
		if (fcntl(i, F_GETFD) >= 0) {
			found = i;
			break;
		}
	ASSERT_GE(found, 0) TH_LOG("no library fd in the upper half");
	EXPECT_EQ(-1, close(found));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(-1, dup2(fd, found));
	EXPECT_EQ(EBADF, errno);
	/* the socket still works */
	send_n(self->cmd, self->done, 30025, 3, 24);
	usleep(100000);
	EXPECT_EQ(3, drain(fd));
	close(fd);
}

/*
 * What the rings queued for a socket stays readable when the socket gets
 * new rules: connect() after bind() (the kernel's connect() keeps the
 * receive queue), and SO_VMA_RING_ALLOC_LOGIC after bind (the socket
 * moves to rings of the new logic, as libvma moves it). After connect()
 * to a peer that is not the sender, the sender's datagrams are the
 * kernel's to refuse: none arrives.
 */
TEST_F(pre, queued_datagrams_survive_connect_and_a_ring_move)
{
	/* struct vma_ring_alloc_logic_attr: USER_ID | INGRESS, per user id 3 */
	struct {
		uint32_t comp_mask;
		int32_t logic;
		uint32_t profile_key, user_id;
		uint32_t ingress:1, egress:1, reserved:30;
	} attr = { (1 << 1) | (1 << 2), 11, 0, 3, 1, 0, 0 };
	struct sockaddr_in peer = { .sin_family = AF_INET, .sin_port = htons(9) };
	int fd = udp_bound(30028), fd2 = udp_bound(30029);

	ASSERT_GE(fd, 0);
	ASSERT_GE(fd2, 0);
	send_n(self->cmd, self->done, 30028, 40, 24);
	send_n(self->cmd, self->done, 30029, 40, 24);
	usleep(100000);
	inet_pton(AF_INET, "10.8.0.1", &peer.sin_addr);
	ASSERT_EQ(0, connect(fd, (void *)&peer, sizeof(peer)));
	EXPECT_EQ(40, drain(fd));
	send_n(self->cmd, self->done, 30028, 5, 24);
	usleep(100000);
	EXPECT_EQ(0, drain(fd));

	ASSERT_EQ(0, setsockopt(fd2, SOL_SOCKET, 2810, &attr, sizeof(attr)));
	EXPECT_EQ(40, drain(fd2));
	send_n(self->cmd, self->done, 30029, 7, 24);
	usleep(100000);
	EXPECT_EQ(7, drain(fd2));
	/* and back to the default logic, with datagrams queued again */
	send_n(self->cmd, self->done, 30029, 9, 24);
	usleep(100000);
	attr.logic = 0;
	ASSERT_EQ(0, setsockopt(fd2, SOL_SOCKET, 2810, &attr, sizeof(attr)));
	send_n(self->cmd, self->done, 30029, 4, 24);
	usleep(100000);
	EXPECT_EQ(13, drain(fd2));
	close(fd);
	close(fd2);
}

struct intr_recv {
	int fd;
	bool raw;		/* the system call itself: the kernel's answer */
	ssize_t rc;
	int err;
};

static volatile sig_atomic_t usr1_hits;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_hits++;
}

static void on_usr1_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_signo == sig && si->si_code == SI_TKILL)
		usr1_hits++;
}

static void *intr_recv_thread(void *arg)
{
	struct intr_recv *r = arg;
	char buf[64];

	if (r->raw)
		r->rc = syscall(SYS_recvfrom, r->fd, buf, sizeof(buf), 0, NULL, NULL);
	else
		r->rc = recv(r->fd, buf, sizeof(buf), 0);
	r->err = errno;
	return NULL;
}

/*
 * A receive blocked in another thread gets SIGUSR1. Returns 'I' when it
 * ended with EINTR, 'R' when it slept on and then took the datagram that
 * push() sent, anything else on a wrong outcome.
 */
static char interrupted_or_restarted(int fd, bool raw, void (*push)(void *),
				     void *ctx)
{
	struct intr_recv r = { .fd = fd, .raw = raw, .rc = -2 };
	sig_atomic_t hits = usr1_hits;
	pthread_t t;

	if (pthread_create(&t, NULL, intr_recv_thread, &r))
		return '?';
	usleep(200000);
	pthread_kill(t, SIGUSR1);
	usleep(200000);
	if (usr1_hits != hits + 1) {
		push(ctx);
		pthread_join(t, NULL);
		return 'h';	/* the handler did not run once */
	}
	if (pthread_tryjoin_np(t, NULL) == 0)
		return r.rc == -1 && r.err == EINTR ? 'I' : 'x';
	push(ctx);
	pthread_join(t, NULL);
	return r.rc == 24 ? 'R' : 'y';
}

/* Deprecated, and still what old programs call. */
static int old_siginterrupt(int sig, int flag)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	return siginterrupt(sig, flag);
#pragma GCC diagnostic pop
}

/* Case i of the test below: SIGUSR1's handler installed one way or another. */
static int install_usr1(int i)
{
	struct sigaction a = { .sa_handler = on_usr1 };

	sigemptyset(&a.sa_mask);
	switch (i) {
	case 0:
	case 6:
		a.sa_flags = SA_RESTART;
		return sigaction(SIGUSR1, &a, NULL);
	case 1:
		return sigaction(SIGUSR1, &a, NULL);
	case 2:
		a.sa_sigaction = on_usr1_info;
		a.sa_flags = SA_SIGINFO | SA_RESTART;
		return sigaction(SIGUSR1, &a, NULL);
	case 3:
		return signal(SIGUSR1, on_usr1) == SIG_ERR;
	case 4:
		return old_siginterrupt(SIGUSR1, 1) ||
		       signal(SIGUSR1, on_usr1) == SIG_ERR;
	case 5:
		return sysv_signal(SIGUSR1, on_usr1) == SIG_ERR;
	}
	return -1;
}

struct pusher {
	FIXTURE_DATA(pre) *self;
	int lo;			/* a plain socket sending to the loopback one */
	uint16_t port;
};

static void push_ring(void *ctx)
{
	struct pusher *p = ctx;

	send_n(p->self->cmd, p->self->done, p->port, 1, 24);
}

static void push_lo(void *ctx)
{
	struct pusher *p = ctx;
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(p->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char buf[24] = "";

	sendto(p->lo, buf, sizeof(buf), 0, (void *)&to, sizeof(to));
}

/*
 * signal(7): a recv() blocked without SO_RCVTIMEO is restarted after a
 * handler with SA_RESTART; without SA_RESTART, or with SO_RCVTIMEO, it
 * fails with EINTR. The same on an offloaded socket and on one the
 * library left on the kernel (loopback; both sleep in the library) as
 * the system call itself gives on the kernel socket, whichever way
 * the handler was installed: sigaction() with or without SA_SIGINFO,
 * signal() (BSD: restart), siginterrupt(), sysv_signal() (no restart).
 */
TEST_F(pre, signal_handlers_restart_a_receive_as_the_kernel_does)
{
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_port = htons(30027),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in nowhere = { .sin_family = AF_INET, .sin_port = htons(9) };
	struct pusher pr = { self, -1, 30026 }, pl = { self, -1, 30027 };
	struct timeval tv = { 5, 0 };
	struct sigaction a = { 0 }, o;
	/* a receive after a send polls for the answer, here for 1 s */
	int set = setenv("VMAK_REPLY_POLL", "1000000", 1);
	int ring = udp_bound(30026), lo = socket(AF_INET, SOCK_DGRAM, 0), i;
	struct {
		const char *how;
		char want;
	} cases[] = {
		{ "sigaction SA_RESTART", 'R' },
		{ "sigaction 0", 'I' },
		{ "sigaction SA_SIGINFO|SA_RESTART", 'R' },
		{ "signal()", 'R' },
		{ "signal() after siginterrupt(1)", 'I' },
		{ "sysv_signal()", 'I' },
		{ "SA_RESTART with SO_RCVTIMEO", 'I' },
	};

	ASSERT_EQ(0, set);
	ASSERT_GE(ring, 0);
	ASSERT_GE(lo, 0);
	ASSERT_EQ(0, bind(lo, (void *)&la, sizeof(la)));
	inet_pton(AF_INET, "10.8.0.1", &nowhere.sin_addr);
	pl.lo = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_GE(pl.lo, 0);
	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
		if (i == 6) {
			ASSERT_EQ(0, setsockopt(ring, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
			ASSERT_EQ(0, setsockopt(lo, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
		}
		ASSERT_EQ(0, install_usr1(i));
		EXPECT_EQ(cases[i].want, interrupted_or_restarted(ring, false, push_ring, &pr))
			TH_LOG("offloaded socket, %s", cases[i].how);
		/* the same while it polls for an answer: the signal
		 * comes 200 ms into the poll
		 */
		ASSERT_EQ(0, install_usr1(i));
		ASSERT_EQ(4, sendto(ring, "ping", 4, 0, (void *)&nowhere, sizeof(nowhere)));
		EXPECT_EQ(cases[i].want, interrupted_or_restarted(ring, false, push_ring, &pr))
			TH_LOG("offloaded socket polling for an answer, %s", cases[i].how);
		ASSERT_EQ(0, install_usr1(i));
		EXPECT_EQ(cases[i].want, interrupted_or_restarted(lo, false, push_lo, &pl))
			TH_LOG("socket left on the kernel, %s", cases[i].how);
		ASSERT_EQ(0, install_usr1(i));
		EXPECT_EQ(cases[i].want, interrupted_or_restarted(lo, true, push_lo, &pl))
			TH_LOG("the system call, %s", cases[i].how);
		if (i == 4) {
			/* siginterrupt(0) put SA_RESTART back: restarted */
			ASSERT_EQ(0, old_siginterrupt(SIGUSR1, 0));
			EXPECT_EQ('R', interrupted_or_restarted(ring, false, push_ring, &pr));
			EXPECT_EQ('R', interrupted_or_restarted(lo, true, push_lo, &pl));
		}
		if (i == 5) {
			/* SA_RESETHAND: SIG_DFL again, as the program sees it */
			ASSERT_EQ(0, sigaction(SIGUSR1, NULL, &o));
			EXPECT_TRUE(o.sa_handler == SIG_DFL);
		}
	}
	/* the program sees its own handler and flags, not the library's */
	a.sa_handler = on_usr1;
	a.sa_flags = SA_RESTART;
	ASSERT_EQ(0, sigaction(SIGUSR1, &a, NULL));
	ASSERT_EQ(0, sigaction(SIGUSR1, NULL, &o));
	EXPECT_TRUE(o.sa_handler == on_usr1);
	EXPECT_EQ(0, o.sa_flags & SA_SIGINFO);
	EXPECT_EQ(SA_RESTART, o.sa_flags & SA_RESTART);
	EXPECT_TRUE(signal(SIGUSR1, SIG_DFL) == on_usr1);
	EXPECT_EQ(-1, sigaction(SIGKILL, &a, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(signal(0, on_usr1) == SIG_ERR);
	EXPECT_EQ(EINVAL, errno);
	/* nothing left in either queue */
	EXPECT_EQ(0, drain(ring));
	EXPECT_EQ(0, drain(lo));
	close(pl.lo);
	close(lo);
	close(ring);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "exec-child"))
		return exec_child(atoi(argv[2]));
	if (getuid() == 0)
		netns_up();
	return test_harness_run(argc, argv);
}
