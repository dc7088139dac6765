// SPDX-License-Identifier: GPL-2.0
/*
 * libvma's extra API (vma_get_api()) as a libvma program uses it: this
 * file includes only the C library and <mellanox/vma_extra.h>. It runs
 * preloaded (LD_PRELOAD=libvmak.so, set by the constructor of preload.h)
 * and, built as 66-linked-extra-api, linked with -lvmak. The receivers
 * are user nobody in netns sb; the sender, in sa, sends across veth, so
 * datagrams come through the rings.
 *
 *   the table: every entry callable, the mask true to what works
 *   zero copy: the payload is the ring's buffer, held until freed; the
 *     kernel path copies (EIO with MSG_VMA_ZCOPY_FORCE); the errors
 *   the receive callback: DROP, RECV and HOLD counted exactly
 *   socketXtreme (VMA_SOCKETXTREME=1): eight sockets on one ring polled by
 *     ring fd, by socket fd and by epoll fd, every datagram once with its
 *     user data; buffer references; the kernel socket's datagrams as
 *     packets too, a wait's turn for them kept through full polls; TCP's
 *     accept and readiness
 *   ring fds, SO_VMA_USER_DATA, SO_VMA_FLOW_TAG, SO_VMA_SHUTDOWN_RX
 */
#include <time.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "preload.h"
#include <mellanox/vma_extra.h>

#define MASK_RINGS (VMA_EXTRA_API_REGISTER_RECV_CALLBACK | \
		    VMA_EXTRA_API_RECVFROM_ZCOPY | VMA_EXTRA_API_FREE_PACKETS | \
		    VMA_EXTRA_API_GET_SOCKET_RINGS_NUM | \
		    VMA_EXTRA_API_GET_SOCKET_RINGS_FDS | \
		    VMA_EXTRA_API_GET_SOCKET_TX_RING_FD | \
		    VMA_EXTRA_API_GET_SOCKET_NETWORK_HEADER | \
		    VMA_EXTRA_API_DUMP_FD_STATS | VMA_EXTRA_API_IOCTL | \
		    VMA_EXTRA_API_MODIFY_RING)
#define MASK_XT (VMA_EXTRA_API_SOCKETXTREME_POLL | \
		 VMA_EXTRA_API_SOCKETXTREME_FREE_VMA_PACKETS | \
		 VMA_EXTRA_API_SOCKETXTREME_REF_VMA_BUFF | \
		 VMA_EXTRA_API_SOCKETXTREME_FREE_VMA_BUFF)

static void rcvtimeo(int fd, int sec)
{
	struct timeval tv = { .tv_sec = sec };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* The sequence number the sender puts first in each datagram. */
static uint32_t seq_of(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Is p inside an anonymous mapping of at least 1 MiB (the UMEM)? */
static bool in_umem(const void *p)
{
	unsigned long lo, hi, a = (unsigned long)p;
	char line[512], path[256];
	bool yes = false;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &lo, &hi, path) < 2)
			continue;
		if (a >= lo && a < hi)
			yes = !path[0] && hi - lo >= (1UL << 20);
	}
	if (f)
		fclose(f);
	return yes;
}

/* ---- the table ---- */

TEST_F(pre, get_api_has_every_entry_and_a_truthful_mask)
{
	struct vma_api_t *api, *p;
	socklen_t len = 4;
	size_t i, mask_at;
	void *slot;

	api = vma_get_api();
	ASSERT_NE(NULL, api);
	/* every entry is a function, whatever the mask says */
	mask_at = offsetof(struct vma_api_t, vma_extra_supported_mask);
	for (i = 0; i < sizeof(*api); i += sizeof(void *)) {
		if (i == mask_at)
			continue;
		memcpy(&slot, (char *)api + i, sizeof(slot));
		EXPECT_NE(NULL, slot) TH_LOG("entry at %zu is NULL", i);
	}
	EXPECT_EQ(MASK_RINGS, api->vma_extra_supported_mask & MASK_RINGS);
	EXPECT_EQ(0, api->vma_extra_supported_mask & MASK_XT);
	EXPECT_EQ(0, api->vma_extra_supported_mask &
		     (VMA_EXTRA_API_GET_RING_DIRECT_DESCRIPTORS |
		      VMA_EXTRA_API_REGISTER_MEMORY_ON_RING));
	/* what vmak does not do yet fails, as libvma fails */
	errno = 0;
	EXPECT_EQ(-1, api->get_ring_direct_descriptors(0, NULL));
	EXPECT_EQ(EOPNOTSUPP, errno);
	errno = 0;
	EXPECT_EQ(-1, api->socketxtreme_poll(0, NULL, 0, 0));
	EXPECT_EQ(EOPNOTSUPP, errno);
	/* the length libvma checks: too short is a call on fd -1 */
	EXPECT_EQ(-1, getsockopt(-1, SOL_SOCKET, SO_VMA_GET_API, &p, &len));
	EXPECT_EQ(EBADF, errno);
}

/* ---- zero copy ---- */

TEST_F(pre, zero_copy_hands_out_the_ring_buffer_until_freed)
{
	int fd = udp_bound(32001), flags, i, b, reused = 0;
	char buf[256];
	struct vma_packets_t *pk = (struct vma_packets_t *)buf;
	struct vma_api_t *api = vma_get_api();
	struct sockaddr_in from;
	socklen_t flen;
	void *held_id, *held_data;
	uint32_t held_seq;
	ssize_t n;

	ASSERT_GE(fd, 0);
	ASSERT_NE(NULL, api);
	rcvtimeo(fd, 3);
	send_n(self->cmd, self->done, 32001, 1, 40);
	flags = 0;
	flen = sizeof(from);
	n = api->recvfrom_zcopy(fd, buf, sizeof(buf), &flags,
				(struct sockaddr *)&from, &flen);
	ASSERT_EQ(40, n);
	EXPECT_TRUE(flags & MSG_VMA_ZCOPY);
	EXPECT_EQ(1, pk->n_packet_num);
	EXPECT_EQ(1, pk->pkts[0].sz_iov);
	EXPECT_EQ(40, pk->pkts[0].iov[0].iov_len);
	EXPECT_TRUE(in_umem(pk->pkts[0].iov[0].iov_base));
	EXPECT_EQ(sizeof(from), flen);
	EXPECT_EQ(htonl(0x0a080001), from.sin_addr.s_addr);
	held_id = pk->pkts[0].packet_id;
	held_data = pk->pkts[0].iov[0].iov_base;
	held_seq = seq_of(held_data);
	/*
	 * The ring goes on without that chunk: many more, each freed, in
	 * batches the ring holds whole (send_n() returns once all are sent),
	 * so every one is zero copy.
	 */
	for (b = 0; b < 6; b++) {
		send_n(self->cmd, self->done, 32001, 500, 40);
		for (i = 0; i < 500; i++) {
			flags = 0;
			n = api->recvfrom_zcopy(fd, buf, sizeof(buf), &flags,
						NULL, NULL);
			ASSERT_EQ(40, n);
			ASSERT_TRUE(flags & MSG_VMA_ZCOPY) TH_LOG("batch %d, %d", b, i);
			EXPECT_NE(held_data, pk->pkts[0].iov[0].iov_base);
			ASSERT_EQ(0, api->free_packets(fd, pk->pkts, 1))
				TH_LOG("batch %d, %d: %s", b, i, strerror(errno));
		}
	}
	/* the held one was never reused: its payload is its own */
	EXPECT_EQ(held_seq, seq_of(held_data));
	ASSERT_EQ(0, api->free_packets(fd, (struct vma_packet_t *)&held_id, 1));
	/* freed, its chunk comes round again */
	for (b = 0; b < 4; b++) {
		send_n(self->cmd, self->done, 32001, 500, 40);
		for (i = 0; i < 500; i++) {
			flags = 0;
			ASSERT_EQ(40, api->recvfrom_zcopy(fd, buf, sizeof(buf),
							  &flags, NULL, NULL));
			ASSERT_TRUE(flags & MSG_VMA_ZCOPY);
			reused += pk->pkts[0].iov[0].iov_base == held_data;
			ASSERT_EQ(0, api->free_packets(fd, pk->pkts, 1));
		}
	}
	EXPECT_GT(reused, 0);
	close(fd);
}

TEST_F(pre, zero_copy_errors_and_the_kernel_path)
{
	int fd = udp_bound(32002), lo = socket(AF_INET, SOCK_DGRAM, 0), flags, p[2];
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(32002) };
	struct vma_api_t *api = vma_get_api();
	char buf[256], small[20];
	struct vma_packet_t bogus = { .packet_id = buf };
	ssize_t n;
	int i;

	ASSERT_GE(fd, 0);
	inet_pton(AF_INET, ADDR_B, &me.sin_addr);
	/* nothing there */
	flags = MSG_DONTWAIT;
	errno = 0;
	EXPECT_EQ(-1, api->recvfrom_zcopy(fd, buf, sizeof(buf), &flags, NULL, NULL));
	EXPECT_EQ(EAGAIN, errno);
	/* forced, on an empty offloaded socket: empty, not EIO (libvma) */
	flags = MSG_VMA_ZCOPY_FORCE | MSG_DONTWAIT;
	errno = 0;
	EXPECT_EQ(-1, api->recvfrom_zcopy(fd, buf, sizeof(buf), &flags, NULL, NULL));
	EXPECT_EQ(EAGAIN, errno);
	rcvtimeo(fd, 1);
	flags = 0;
	EXPECT_EQ(-1, api->recvfrom_zcopy(fd, buf, sizeof(buf), &flags, NULL, NULL));
	EXPECT_EQ(EAGAIN, errno);
	/* no room for the header: nothing taken */
	send_n(self->cmd, self->done, 32002, 1, 30);
	flags = 0;
	EXPECT_EQ(-1, api->recvfrom_zcopy(fd, small, sizeof(small), &flags,
					  NULL, NULL));
	EXPECT_EQ(ENOBUFS, errno);
	/* forced, from the ring: zero copy */
	flags = MSG_VMA_ZCOPY_FORCE;
	EXPECT_EQ(30, api->recvfrom_zcopy(fd, buf, sizeof(buf), &flags, NULL, NULL));
	EXPECT_TRUE(flags & MSG_VMA_ZCOPY);
	EXPECT_EQ(0, api->free_packets(fd, ((struct vma_packets_t *)buf)->pkts, 1));
	/* freed twice, or not ours: ENOENT */
	EXPECT_EQ(-1, api->free_packets(fd, ((struct vma_packets_t *)buf)->pkts, 1));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, api->free_packets(fd, &bogus, 1));
	EXPECT_EQ(ENOENT, errno);
	/* room for the header, not the piece: the packet without its piece,
	 * no MSG_TRUNC added to *flags, 0, or the length if MSG_TRUNC was
	 * asked, as libvma (X-L2; its *flags keeps what the caller gave)
	 */
	send_n(self->cmd, self->done, 32002, 2, 30);
	for (i = 0; i < 2; i++) {
		flags = i ? MSG_TRUNC : 0;
		EXPECT_EQ(i ? 30 : 0, api->recvfrom_zcopy(fd, buf,
				sizeof(struct vma_packets_t) +
				sizeof(struct vma_packet_t), &flags, NULL, NULL));
		EXPECT_EQ(MSG_VMA_ZCOPY | (i ? MSG_TRUNC : 0), flags);
		EXPECT_EQ(0, ((struct vma_packets_t *)buf)->pkts[0].sz_iov);
		EXPECT_EQ(0, api->free_packets(fd,
				((struct vma_packets_t *)buf)->pkts, 1));
	}
	/* a UDP socket without rings: nothing it holds (libvma: ENOENT) */
	EXPECT_EQ(-1, api->free_packets(lo, &bogus, 1));
	EXPECT_EQ(ENOENT, errno);
	/* not a socket: EINVAL */
	ASSERT_EQ(0, pipe(p));
	EXPECT_EQ(-1, api->free_packets(p[0], &bogus, 1));
	EXPECT_EQ(EINVAL, errno);
	close(p[0]);
	close(p[1]);
	/* from our own netns: the kernel socket, so a copy */
	ASSERT_EQ(5, sendto(lo, "local", 5, 0, (void *)&me, sizeof(me)));
	usleep(100000);
	flags = MSG_VMA_ZCOPY_FORCE;
	EXPECT_EQ(-1, api->recvfrom_zcopy(fd, buf, sizeof(buf), &flags, NULL, NULL));
	EXPECT_EQ(EIO, errno);
	flags = 0;
	n = api->recvfrom_zcopy(fd, buf, sizeof(buf), &flags, NULL, NULL);
	EXPECT_EQ(5, n);
	EXPECT_FALSE(flags & MSG_VMA_ZCOPY);
	EXPECT_EQ(0, memcmp(buf, "local", 5));
	/* the sender, offloaded once it was bound, has nothing: empty */
	flags = MSG_VMA_ZCOPY_FORCE | MSG_DONTWAIT;
	EXPECT_EQ(-1, api->recvfrom_zcopy(lo, buf, sizeof(buf), &flags, NULL, NULL));
	EXPECT_EQ(EAGAIN, errno);
	close(lo);
	close(fd);
}

/* ---- the receive callback ---- */

#define CB_N	100000

struct cb_count {
	atomic_uint calls, dropped, queued, held;
	void *ids[CB_N / 3 + 16];
	atomic_uint nids;
	unsigned int bad_info;
};

static vma_recv_callback_retval_t cb(int fd, size_t sz_iov, struct iovec iov[],
				     struct vma_info_t *info, void *ctx)
{
	struct cb_count *c = ctx;
	uint32_t s = seq_of(iov[0].iov_base);

	(void)fd;
	atomic_fetch_add(&c->calls, 1);
	if (sz_iov != 1 || info->struct_sz != sizeof(*info) ||
	    info->payload_sz != iov[0].iov_len || !info->src || !info->dst ||
	    info->dst->sin_port != htons(32003) || !info->packet_id)
		c->bad_info++;
	switch (s % 3) {
	case 0:
		atomic_fetch_add(&c->dropped, 1);
		return VMA_PACKET_DROP;
	case 1:
		atomic_fetch_add(&c->queued, 1);
		return VMA_PACKET_RECV;
	default:
		atomic_fetch_add(&c->held, 1);
		c->ids[atomic_fetch_add(&c->nids, 1) % (CB_N / 3 + 16)] =
			info->packet_id;
		return VMA_PACKET_HOLD;
	}
}

TEST_F(pre, receive_callback_drop_recv_hold_counted_exactly)
{
	static struct cb_count c;
	struct vma_api_t *api = vma_get_api();
	int fd = udp_bound(32003), p[2];
	unsigned int got = 0, freed = 0, i, n;
	char buf[2048];

	ASSERT_GE(fd, 0);
	/* not a UDP socket: EINVAL */
	ASSERT_EQ(0, pipe(p));
	errno = 0;
	EXPECT_EQ(-1, api->register_recv_callback(p[0], cb, &c));
	EXPECT_EQ(EINVAL, errno);
	close(p[0]);
	close(p[1]);
	ASSERT_EQ(0, api->register_recv_callback(fd, cb, &c));
	rcvtimeo(fd, 3);
	if (!fork()) {
		/* the sender is slow enough for the ring: send and go */
		send_n(self->cmd, self->done, 32003, CB_N, 32);
		_exit(0);
	}
	while (recv(fd, buf, sizeof(buf), 0) >= 0) {
		got++;
		/* what callbacks held: given back outside them */
		n = atomic_load(&c.nids);
		for (i = freed; i < n; i++)
			EXPECT_EQ(0, api->free_packets(fd,
				(struct vma_packet_t *)&c.ids[i % (CB_N / 3 + 16)], 1));
		freed = n;
	}
	wait(NULL);
	n = atomic_load(&c.nids);
	for (i = freed; i < n; i++)
		EXPECT_EQ(0, api->free_packets(fd,
			(struct vma_packet_t *)&c.ids[i % (CB_N / 3 + 16)], 1));
	EXPECT_EQ(0, c.bad_info);
	EXPECT_EQ(c.calls, c.dropped + c.queued + c.held);
	/* everything went through a ring and a callback */
	EXPECT_EQ(CB_N, c.calls);
	EXPECT_EQ(CB_N / 3 + (CB_N % 3 > 1), c.queued);
	EXPECT_EQ(c.queued, got);
	EXPECT_EQ(c.held, n);
	/* NULL removes it: datagrams are queued as before */
	ASSERT_EQ(0, api->register_recv_callback(fd, NULL, NULL));
	send_n(self->cmd, self->done, 32003, 9, 32);
	usleep(100000);
	EXPECT_EQ(9, drain(fd));
	EXPECT_EQ(CB_N, c.calls);
	close(fd);
}

/* ---- rings and options ---- */

TEST_F(pre, ring_fds_and_the_socket_options)
{
	struct vma_api_t *api = vma_get_api();
	int fd = udp_bound(32004), lo = socket(AF_INET, SOCK_STREAM, 0), rfd;
	uint64_t ud = 0x1234567890abcdefULL, got64 = 0;
	uint32_t tag = 77, got32 = 0;
	socklen_t len;
	struct pollfd p;

	ASSERT_GE(fd, 0);
	EXPECT_EQ(1, api->get_socket_rings_num(fd));
	EXPECT_EQ(0, api->get_socket_rings_num(lo));
	EXPECT_EQ(-1, api->get_socket_rings_fds(fd, NULL, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, api->get_socket_rings_fds(fd, &rfd, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, api->get_socket_rings_fds(lo, &rfd, 1));
	ASSERT_EQ(1, api->get_socket_rings_fds(fd, &rfd, 1));
	/* the ring fd is readable while the ring holds datagrams */
	p = (struct pollfd){ .fd = rfd, .events = POLLIN };
	EXPECT_EQ(0, poll(&p, 1, 0));
	send_n(self->cmd, self->done, 32004, 3, 32);
	EXPECT_EQ(1, poll(&p, 1, 2000));
	EXPECT_EQ(3, drain(fd));
	/* SO_VMA_USER_DATA: a pointer-sized value, on any socket */
	EXPECT_EQ(-1, setsockopt(fd, SOL_SOCKET, SO_VMA_USER_DATA, &ud, 4));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_VMA_USER_DATA, &ud, sizeof(ud)));
	len = sizeof(got64);
	EXPECT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_VMA_USER_DATA, &got64, &len));
	EXPECT_EQ(ud, got64);
	EXPECT_EQ(0, setsockopt(lo, SOL_SOCKET, SO_VMA_USER_DATA, &ud, sizeof(ud)));
	/* SO_VMA_FLOW_TAG: a non-zero 32-bit tag */
	tag = 0;
	EXPECT_EQ(-1, setsockopt(fd, SOL_SOCKET, SO_VMA_FLOW_TAG, &tag, sizeof(tag)));
	EXPECT_EQ(EINVAL, errno);
	tag = 77;
	EXPECT_EQ(-1, setsockopt(fd, SOL_SOCKET, SO_VMA_FLOW_TAG, &tag, 2));
	EXPECT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_VMA_FLOW_TAG, &tag, sizeof(tag)));
	len = sizeof(got32);
	EXPECT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_VMA_FLOW_TAG, &got32, &len));
	EXPECT_EQ(77, got32);
	/* SO_VMA_SHUTDOWN_RX: no more rings, the kernel socket receives */
	EXPECT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_VMA_SHUTDOWN_RX, &tag, sizeof(tag)));
	EXPECT_EQ(0, api->get_socket_rings_num(fd));
	send_n(self->cmd, self->done, 32004, 4, 32);
	usleep(100000);
	EXPECT_EQ(4, drain(fd));
	close(lo);
	close(fd);
}

/*
 * get_socket_tx_ring_fd(), as libvma answers it: the ring of a destination
 * the socket is connected to or has sent to, ENODATA for any other (none
 * is made to answer), EINVAL without an address or on an fd it does not
 * offload. dump_fd_stats(): 0 for any fd, offloaded, plain or closed.
 */
TEST_F(pre, tx_ring_fd_once_the_destination_is_known)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(32005) };
	struct vma_api_t *api = vma_get_api();
	int fd = udp_bound(32006), c = udp_bound(32007), p[2], t = -1, i;
	struct sockaddr_in other;

	ASSERT_GE(fd, 0);
	ASSERT_GE(c, 0);
	ASSERT_EQ(0, pipe(p));
	inet_pton(AF_INET, "10.8.0.1", &to.sin_addr);	/* the peer, sa */
	other = to;
	other.sin_port = htons(32008);
	EXPECT_EQ(-1, api->get_socket_tx_ring_fd(fd, (void *)&to, sizeof(to)));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(-1, api->get_socket_tx_ring_fd(fd, NULL, sizeof(to)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, api->get_socket_tx_ring_fd(p[0], (void *)&to, sizeof(to)));
	EXPECT_EQ(EINVAL, errno);
	/* sent to: its ring (a first send may still be resolving the peer) */
	for (i = 0; i < 50 && t < 0; i++, usleep(20000)) {
		ASSERT_EQ(4, sendto(fd, "ping", 4, 0, (void *)&to, sizeof(to)));
		t = api->get_socket_tx_ring_fd(fd, (void *)&to, sizeof(to));
	}
	EXPECT_GE(t, 0);
	EXPECT_EQ(-1, api->get_socket_tx_ring_fd(fd, (void *)&other,
						 sizeof(other)));
	EXPECT_EQ(ENODATA, errno);
	/* connected: its destination's ring, before any send */
	ASSERT_EQ(0, connect(c, (void *)&other, sizeof(other)));
	EXPECT_GE(api->get_socket_tx_ring_fd(c, (void *)&other, sizeof(other)), 0);
	EXPECT_EQ(-1, api->get_socket_tx_ring_fd(c, (void *)&to, sizeof(to)));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(0, api->dump_fd_stats(fd, 2));
	EXPECT_EQ(0, api->dump_fd_stats(p[0], 2));
	close(p[0]);
	EXPECT_EQ(0, api->dump_fd_stats(p[0], 2));
	close(p[1]);
	close(c);
	close(fd);
}

struct dummies {
	int fd;
	struct sockaddr_in to;
	ssize_t r[5];
	int err[5];
};

/* A datagram, three dummies, a datagram: the wire must carry two. */
static void send_dummies(void *arg)
{
	struct dummies *x = arg;
	int i;

	for (i = 0; i < 5; i++) {
		bool dummy = i > 0 && i < 4;

		x->r[i] = sendto(x->fd, dummy ? "dummy" : "real!!", dummy ? 5 : 6,
				 dummy ? VMA_SND_FLAGS_DUMMY : 0,
				 (void *)&x->to, sizeof(x->to));
		x->err[i] = errno;
		usleep(2000);
	}
}

/*
 * VMA_SND_FLAGS_DUMMY: a send through the ring that completes without
 * reaching the wire (libvma's warm-up of its send path); where only the
 * kernel could send it, EINVAL, as libvma says for its kernel path.
 */
TEST_F(pre, a_dummy_send_never_reaches_the_wire)
{
	struct dummies x = { .fd = udp_bound(32010),
			     .to = { .sin_family = AF_INET,
				     .sin_port = htons(32011) } };
	struct vmak_sockstat_counters c0, c1;
	struct sockaddr_in lo = { .sin_family = AF_INET };
	struct seen seen[2];
	int i, l;

	ASSERT_GE(x.fd, 0);
	inet_pton(AF_INET, "10.8.0.1", &x.to.sin_addr);
	ASSERT_EQ(0, sock_counters(x.fd, &c0));
	wire(self->cmd, self->done, 32011, 0, 2, seen, send_dummies, &x);
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(i > 0 && i < 4 ? 5 : 6, x.r[i])
			TH_LOG("send %d: %s", i, strerror(x.err[i]));
	}
	EXPECT_EQ(6, seen[0].len);
	EXPECT_EQ(6, seen[1].len) TH_LOG("a dummy reached the wire");
	ASSERT_EQ(0, sock_counters(x.fd, &c1));
	EXPECT_EQ(0, c1.tx_os - c0.tx_os);
	/* the kernel's path: corked, or a socket the rings do not serve */
	EXPECT_EQ(-1, sendto(x.fd, "x", 1, VMA_SND_FLAGS_DUMMY | MSG_MORE,
			     (void *)&x.to, sizeof(x.to)));
	EXPECT_EQ(EINVAL, errno);
	l = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_GE(l, 0);
	inet_pton(AF_INET, "127.0.0.1", &lo.sin_addr);
	ASSERT_EQ(0, bind(l, (void *)&lo, sizeof(lo)));
	EXPECT_EQ(-1, sendto(l, "x", 1, VMA_SND_FLAGS_DUMMY, (void *)&x.to,
			     sizeof(x.to)));
	EXPECT_EQ(EINVAL, errno);
	close(l);
	close(x.fd);
}

/* The sender captures the first frame to port on the wire; fn sends it. */
static void capture(int cmdfd, int donefd, uint16_t port,
		    struct frame_seen *f, void (*fn)(void *), void *arg)
{
	struct cmd k = { .op = CMD_CAPTURE, .port = port };
	char x;

	if (write(cmdfd, &k, sizeof(k)) != sizeof(k) || read(donefd, &x, 1) != 1)
		abort();
	fn(arg);
	if (read(donefd, f, sizeof(*f)) != sizeof(*f) || read(donefd, &x, 1) != 1)
		abort();
}

/* A datagram of the socket's through the kernel's stack, not a ring. */
static void kernel_send(void *arg)
{
	syscall(SYS_sendto, *(int *)arg, "kernel", 6, 0, NULL, 0);
}

/*
 * get_socket_network_header(), libvma's two calls: the size with no
 * buffer, then the bytes: the headers a send to the connected peer
 * starts with, as the kernel's stack puts them on the wire (checked
 * against a capture on the peer of a datagram the kernel sent for the
 * same socket), lengths, IP id and checksums left 0. ENOTCONN for an
 * unconnected socket, ENOBUFS for a short buffer, EINVAL for an fd it
 * does not offload or no length.
 */
TEST_F(pre, network_header_as_the_kernel_puts_it_on_the_wire)
{
	struct sockaddr_in peer = { .sin_family = AF_INET,
				    .sin_port = htons(32013) };
	struct vma_api_t *api = vma_get_api();
	int fd = udp_bound(32012), p[2], i;
	uint8_t hdr[64], want[64];
	struct frame_seen f;
	uint16_t len = 0;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, pipe(p));
	EXPECT_NE(0, api->vma_extra_supported_mask &
		  VMA_EXTRA_API_GET_SOCKET_NETWORK_HEADER);
	EXPECT_EQ(-1, api->get_socket_network_header(fd, NULL, &len));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, api->get_socket_network_header(p[0], NULL, &len));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, api->get_socket_network_header(fd, hdr, NULL));
	EXPECT_EQ(EINVAL, errno);
	inet_pton(AF_INET, "10.8.0.1", &peer.sin_addr);
	ASSERT_EQ(0, connect(fd, (void *)&peer, sizeof(peer)));
	/* the size first (the peer's address may be resolving a moment) */
	for (i = 0; i < 50; i++, usleep(20000))
		if (!api->get_socket_network_header(fd, NULL, &len))
			break;
	ASSERT_EQ(42, len);	/* Ethernet, IPv4, UDP */
	len = 41;
	EXPECT_EQ(-1, api->get_socket_network_header(fd, hdr, &len));
	EXPECT_EQ(ENOBUFS, errno);
	len = sizeof(hdr);
	ASSERT_EQ(0, api->get_socket_network_header(fd, hdr, &len));
	ASSERT_EQ(42, len);
	/* the kernel's own frame for this socket, as the peer saw it */
	capture(self->cmd, self->done, 32013, &f, kernel_send, &fd);
	ASSERT_EQ(42 + 6, f.len);
	memcpy(want, f.b, 42);
	memset(want + 16, 0, 2);	/* IP total length */
	memset(want + 18, 0, 2);	/* IP id */
	memset(want + 24, 0, 2);	/* IP checksum */
	memset(want + 38, 0, 4);	/* UDP length, checksum */
	for (i = 0; i < 42; i++) {
		EXPECT_EQ(want[i], hdr[i]) TH_LOG("byte %d", i);
	}
	close(p[0]);
	close(p[1]);
	close(fd);
}

/* The program's allocator, as CMSG_VMA_IOCTL_USER_ALLOC gives it. */
static struct {
	int calls, frees;
	size_t len;
	char *block;
} ua;

static void *ua_alloc(size_t n)
{
	ua.calls++;
	ua.len = n;
	ua.block = malloc(n);
	return ua.block;
}

static void ua_free(void *p)
{
	ua.frees++;
	free(p);
}

/* One control message of type and data (len bytes) in buf. */
static size_t one_cmsg(void *buf, size_t room, int type, const void *data,
		       size_t len)
{
	struct cmsghdr *c = buf;

	memset(buf, 0, room);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(c), data, len);
	return CMSG_SPACE(len);
}

/*
 * ioctl() with CMSG_VMA_IOCTL_USER_ALLOC, as libvma takes it (and as
 * its googletest vma_ioctl checks): the library's buffers (the UMEM) come
 * from the program's allocator, asked once, at the first UDP socket, and
 * a zero-copy packet lies in what it gave; EINVAL for data of another
 * size, no function, no pool named, or once the library started; a
 * message of another type is ignored.
 */
TEST_F(pre, the_program_s_allocator_gives_the_umem)
{
	struct vma_cmsg_ioctl_user_alloc_t a = {
		VMA_IOCTL_USER_ALLOC_FLAG_RX | VMA_IOCTL_USER_ALLOC_FLAG_TX,
		ua_alloc, ua_free };
	struct vma_api_t *api = vma_get_api();
	char cbuf[CMSG_SPACE(sizeof(a)) + 8], buf[256];
	struct vma_packets_t *pk = (struct vma_packets_t *)buf;
	struct vma_cmsg_ioctl_user_alloc_t bad;
	int fd, flags = 0, i;
	size_t n;
	char *p;

	EXPECT_NE(0, api->vma_extra_supported_mask & VMA_EXTRA_API_IOCTL);
	n = one_cmsg(cbuf, sizeof(cbuf), CMSG_VMA_IOCTL_USER_ALLOC, &a,
		     sizeof(a) - 1);
	EXPECT_EQ(-1, api->ioctl(cbuf, n));
	EXPECT_EQ(EINVAL, errno);
	bad = a;
	bad.memfree = NULL;
	n = one_cmsg(cbuf, sizeof(cbuf), CMSG_VMA_IOCTL_USER_ALLOC, &bad,
		     sizeof(bad));
	EXPECT_EQ(-1, api->ioctl(cbuf, n));
	EXPECT_EQ(EINVAL, errno);
	bad = a;
	bad.flags = 0;
	n = one_cmsg(cbuf, sizeof(cbuf), CMSG_VMA_IOCTL_USER_ALLOC, &bad,
		     sizeof(bad));
	EXPECT_EQ(-1, api->ioctl(cbuf, n));
	EXPECT_EQ(EINVAL, errno);
	n = one_cmsg(cbuf, sizeof(cbuf), 1234, &a, sizeof(a));
	EXPECT_EQ(0, api->ioctl(cbuf, n));
	EXPECT_EQ(0, api->ioctl(NULL, 0));
	n = one_cmsg(cbuf, sizeof(cbuf), CMSG_VMA_IOCTL_USER_ALLOC, &a,
		     sizeof(a));
	ASSERT_EQ(0, api->ioctl(cbuf, n));
	EXPECT_EQ(0, ua.calls);
	/* the first UDP socket starts the library: the allocator is asked */
	fd = udp_bound(32014);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(1, ua.calls);
	EXPECT_LT(1500, ua.len);	/* libvma's own test asks as much */
	rcvtimeo(fd, 3);
	for (i = 0; i < 20 && !(flags & MSG_VMA_ZCOPY); i++) {
		send_n(self->cmd, self->done, 32014, 1, 40);
		flags = 0;
		ASSERT_EQ(40, api->recvfrom_zcopy(fd, buf, sizeof(buf), &flags,
						  NULL, NULL));
	}
	ASSERT_TRUE(flags & MSG_VMA_ZCOPY);
	EXPECT_EQ(1, ua.calls);
	p = pk->pkts[0].iov[0].iov_base;
	EXPECT_TRUE(p >= ua.block && p + 40 <= ua.block + ua.len)
		TH_LOG("payload %p, the program's block %p + %zu", p, ua.block,
		       ua.len);
	EXPECT_EQ(0, api->free_packets(fd, pk->pkts, 1));
	/* too late now: the buffers exist */
	EXPECT_EQ(-1, api->ioctl(cbuf, n));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ua.frees);
	close(fd);
}

struct paced {
	int fd, n, bad;
	struct sockaddr_in to;
	double secs;
};

/* n datagrams of 1,000 bytes, blocking: the time they took. */
static void send_paced(void *arg)
{
	struct paced *p = arg;
	char buf[1000];
	double t0 = mono();
	int i;

	memset(buf, 0x5a, sizeof(buf));
	for (i = 0; i < p->n; i++)
		if (sendto(p->fd, buf, sizeof(buf), 0, (void *)&p->to,
			   sizeof(p->to)) != (ssize_t)sizeof(buf))
			p->bad++;
	p->secs = mono() - t0;
}

/*
 * SO_MAX_PACING_RATE, as libvma takes it: the rate limit of the socket's
 * ring, so only on a socket whose ring is its own (ring logic per
 * socket); sends wait for the limiter rather than pass it through the
 * kernel socket, a non-blocking one gets EAGAIN. Its forms: bytes/s in 4
 * bytes, struct vma_rate_limit_t in kbit/s. A lower bound of time only:
 * a slow machine can only make it longer.
 */
TEST_F_TIMEOUT(pre, pacing_limits_the_socket_s_own_ring, 90)
{
	struct vma_ring_alloc_logic_attr at = {
		.comp_mask = VMA_RING_ALLOC_MASK_RING_INGRESS |
			     VMA_RING_ALLOC_MASK_RING_ENGRESS,
		.ring_alloc_logic = RING_LOGIC_PER_SOCKET,
		.ingress = 1, .engress = 1 };
	struct sockaddr_in b = { .sin_family = AF_INET,
				 .sin_port = htons(32016) };
	struct paced p = { .n = 200, .to = { .sin_family = AF_INET,
					    .sin_port = htons(32017) } };
	struct vma_rate_limit_t rl = { 800, 0, 0 }, got;
	struct vmak_sockstat_counters c0, c1;
	uint32_t bps = 100000, v = 0;	/* 100 kB/s: 800 kbit/s */
	int shared, i, again = 0;
	struct seen seen[200];
	socklen_t len;
	char buf[1000];

	/* two ring sets, each with its send chunks, in one small UMEM */
	setenv("VMA_RX_WRE", "256", 1);
	shared = udp_bound(32015);
	ASSERT_GE(shared, 0);
	EXPECT_EQ(-1, setsockopt(shared, SOL_SOCKET, SO_MAX_PACING_RATE, &bps,
				 sizeof(bps)));
	EXPECT_EQ(EOPNOTSUPP, errno);
	p.fd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_GE(p.fd, 0);
	ASSERT_EQ(0, setsockopt(p.fd, SOL_SOCKET, SO_VMA_RING_ALLOC_LOGIC, &at,
				sizeof(at)));
	inet_pton(AF_INET, ADDR_B, &b.sin_addr);
	ASSERT_EQ(0, bind(p.fd, (void *)&b, sizeof(b)));
	EXPECT_EQ(-1, setsockopt(p.fd, SOL_SOCKET, SO_MAX_PACING_RATE, &bps, 2));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, setsockopt(p.fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rl,
				sizeof(rl)));
	len = sizeof(got);
	ASSERT_EQ(0, getsockopt(p.fd, SOL_SOCKET, SO_MAX_PACING_RATE, &got, &len));
	EXPECT_EQ(800, got.rate);
	ASSERT_EQ(0, setsockopt(p.fd, SOL_SOCKET, SO_MAX_PACING_RATE, &bps,
				sizeof(bps)));
	len = sizeof(v);
	ASSERT_EQ(0, getsockopt(p.fd, SOL_SOCKET, SO_MAX_PACING_RATE, &v, &len));
	EXPECT_EQ(bps, v);
	inet_pton(AF_INET, "10.8.0.1", &p.to.sin_addr);
	ASSERT_EQ(0, sock_counters(p.fd, &c0));
	/*
	 * 200 kB at 100 kB/s: the ring's 64 send chunks take the first 64
	 * at once, the other 136 kB wait for the limiter, more than 1 s
	 * whatever its bursts
	 */
	wire(self->cmd, self->done, 32017, 0, 200, seen, send_paced, &p);
	TH_LOG("200 sent in %.3f s, %d failed", p.secs, p.bad);
	EXPECT_EQ(0, p.bad);
	EXPECT_GE(p.secs, 1.0);
	for (i = 0; i < 200; i++) {
		EXPECT_EQ(1000, seen[i].len) TH_LOG("datagram %d", i);
	}
	/* non-blocking: EAGAIN once the limiter holds the ring's chunks */
	memset(buf, 0, sizeof(buf));
	for (i = 0; i < 20000 && !again; i++)
		if (sendto(p.fd, buf, sizeof(buf), MSG_DONTWAIT, (void *)&p.to,
			   sizeof(p.to)) < 0)
			again = errno == EAGAIN ? 1 : -errno;
	EXPECT_EQ(1, again) TH_LOG("%d sends, then %d", i, again);
	ASSERT_EQ(0, sock_counters(p.fd, &c1));
	EXPECT_EQ(0, c1.tx_os - c0.tx_os);	/* none passed the limit */
	/* no limit: what the limiter held goes at once */
	v = ~0U;
	EXPECT_EQ(0, setsockopt(p.fd, SOL_SOCKET, SO_MAX_PACING_RATE, &v,
				sizeof(v)));
	close(p.fd);
	close(shared);
}

/* Does vmakctl ring show (next to this program, not preloaded) say it? */
static bool ring_show_says(const char *what)
{
	char cmd[PATH_MAX + 64], line[512], *slash;
	bool yes = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "env -u LD_PRELOAD %s", exe_path);
	slash = strrchr(cmd, '/');	/* build/selftests/65-... -> build */
	if (slash)
		*slash = 0;
	slash = strrchr(cmd, '/');
	if (slash)
		*slash = 0;
	strcat(cmd, "/vmakctl ring show 2>&1");
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, what))
			yes = true;
	if (f)
		pclose(f);
	return yes;
}

/*
 * vma_modify_ring() on a ring fd, over the vmak netlink family: the
 * moderation that vmakctl ring show then reports, the module's limits
 * (EINVAL), an arm (0) or, while descriptors wait, 1 (busy), as libvma;
 * EBADF for an fd that is not a ring's, EINVAL for no request.
 */
TEST_F(pre, modify_ring_moderation_and_arm)
{
	struct vma_modify_ring_attr a = { .comp_bit_mask =
					  VMA_MODIFY_RING_CQ_MODERATION };
	struct vma_api_t *api = vma_get_api();
	int fd = udp_bound(32018), rfd = -1;

	ASSERT_GE(fd, 0);
	EXPECT_NE(0, api->vma_extra_supported_mask & VMA_EXTRA_API_MODIFY_RING);
	send_n(self->cmd, self->done, 32018, 1, 24);	/* its ring, made */
	usleep(100000);
	EXPECT_EQ(1, drain(fd));
	ASSERT_EQ(1, api->get_socket_rings_fds(fd, &rfd, 1));
	EXPECT_EQ(-1, api->vma_modify_ring(NULL));
	EXPECT_EQ(EINVAL, errno);
	a.ring_fd = fd;		/* a socket, not a ring */
	EXPECT_EQ(-1, api->vma_modify_ring(&a));
	EXPECT_EQ(EBADF, errno);
	a.ring_fd = rfd;
	a.cq_moderation.cq_moderation_count = 17;
	a.cq_moderation.cq_moderation_period_usec = 123;
	EXPECT_EQ(0, api->vma_modify_ring(&a)) TH_LOG("%s", strerror(errno));
	EXPECT_TRUE(ring_show_says("moderation count 17 usec 123"));
	a.cq_moderation.cq_moderation_count = 70000;
	EXPECT_EQ(-1, api->vma_modify_ring(&a));
	EXPECT_EQ(EINVAL, errno);
	a.cq_moderation.cq_moderation_count = 0;
	a.cq_moderation.cq_moderation_period_usec = 0;
	EXPECT_EQ(0, api->vma_modify_ring(&a));
	EXPECT_TRUE(ring_show_says("moderation count 0 usec 0"));
	a.comp_bit_mask = 1U << 5;
	EXPECT_EQ(-1, api->vma_modify_ring(&a));
	EXPECT_EQ(EINVAL, errno);
	a.comp_bit_mask = VMA_MODIFY_RING_CQ_ARM;
	EXPECT_EQ(0, api->vma_modify_ring(&a)) TH_LOG("%s", strerror(errno));
	send_n(self->cmd, self->done, 32018, 3, 24);
	usleep(100000);
	EXPECT_EQ(1, api->vma_modify_ring(&a));	/* busy: poll first */
	EXPECT_EQ(3, drain(fd));
	EXPECT_EQ(0, api->vma_modify_ring(&a));
	close(fd);
}

/* ---- socketXtreme ---- */

TEST_F(pre, socketxtreme_eight_sockets_on_one_ring)
{
	struct vma_completion_t c[64];
	struct vma_api_t *api;
	int fd[8], i, k, n, rfd, ep, seen[8] = { 0 }, total, form;
	struct epoll_event ev = { .events = EPOLLIN };
	uint64_t ud;

	setenv("VMA_SOCKETXTREME", "1", 1);	/* before the first socket */
	ep = epoll_create1(0);
	for (i = 0; i < 8; i++) {
		fd[i] = udp_bound((uint16_t)(32010 + i));
		ASSERT_GE(fd[i], 0);
		ud = 1000 + i;
		ASSERT_EQ(0, setsockopt(fd[i], SOL_SOCKET, SO_VMA_USER_DATA, &ud,
					sizeof(ud)));
		ev.data.u64 = (uint64_t)i;
		ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &ev));
	}
	api = vma_get_api();
	ASSERT_EQ(MASK_XT, api->vma_extra_supported_mask & MASK_XT);
	ASSERT_EQ(1, api->get_socket_rings_fds(fd[0], &rfd, 1));
	for (i = 1; i < 8; i++) {
		int other;

		ASSERT_EQ(1, api->get_socket_rings_fds(fd[i], &other, 1));
		EXPECT_EQ(rfd, other);	/* one ring for all eight */
	}
	for (form = 0; form < 3; form++) {
		for (i = 0; i < 8; i++)
			send_n(self->cmd, self->done, (uint16_t)(32010 + i), 25, 24);
		usleep(200000);
		memset(seen, 0, sizeof(seen));
		for (total = k = 0; k < 200 && total < 200; k++) {
			/* the ring's fd (libvma's form), each socket, the set */
			if (form == 0)
				n = api->socketxtreme_poll(rfd, c, 64, 0);
			else if (form == 1)
				n = api->socketxtreme_poll(fd[k % 8], c, 64, 0);
			else
				n = api->socketxtreme_poll(ep, c, 64, 0);
			ASSERT_GE(n, 0);
			for (i = 0; i < n; i++) {
				ASSERT_TRUE(c[i].events & VMA_SOCKETXTREME_PACKET);
				ASSERT_GE(c[i].user_data, 1000);
				ASSERT_LT(c[i].user_data, 1008);
				EXPECT_EQ(24, c[i].packet.total_len);
				EXPECT_EQ(1, c[i].packet.num_bufs);
				EXPECT_EQ(24, c[i].packet.buff_lst->len);
				EXPECT_EQ(NULL, c[i].packet.buff_lst->next);
				EXPECT_EQ(htonl(0x0a080001), c[i].src.sin_addr.s_addr);
				seen[c[i].user_data - 1000]++;
			}
			if (n)
				EXPECT_EQ(0, api->socketxtreme_free_vma_packets(
					&c[0].packet, 1));
			for (i = 1; i < n; i++)
				EXPECT_EQ(0, api->socketxtreme_free_vma_packets(
					&c[i].packet, 1));
			total += n;
		}
		EXPECT_EQ(200, total) TH_LOG("form %d", form);
		for (i = 0; i < 8; i++)
			EXPECT_EQ(25, seen[i]) TH_LOG("form %d socket %d", form, i);
		/* recv() does not see them in socketXtreme mode */
		for (i = 0; i < 8; i++)
			EXPECT_EQ(0, drain(fd[i]));
	}
	errno = 0;
	EXPECT_EQ(-1, api->socketxtreme_poll(self->cmd, c, 1, 0));
	EXPECT_EQ(EBADFD, errno);
	for (i = 0; i < 8; i++)
		close(fd[i]);
	close(ep);
}

TEST_F(pre, socketxtreme_buffer_references)
{
	struct vma_completion_t c;
	struct vma_api_t *api;
	struct vma_buff_t *buff;
	int fd, i, b, n = 0;

	setenv("VMA_SOCKETXTREME", "1", 1);
	fd = udp_bound(32020);
	ASSERT_GE(fd, 0);
	api = vma_get_api();
	send_n(self->cmd, self->done, 32020, 1, 24);
	for (i = 0; i < 100 && n != 1; i++) {
		n = api->socketxtreme_poll(fd, &c, 1, 0);
		usleep(10000);
	}
	ASSERT_EQ(1, n);
	buff = c.packet.buff_lst;
	/* one reference from the poll, two more: three frees, a fourth fails */
	EXPECT_EQ(2, api->socketxtreme_ref_vma_buff(buff));
	EXPECT_EQ(3, api->socketxtreme_ref_vma_buff(buff));
	EXPECT_EQ(2, api->socketxtreme_free_vma_buff(buff));
	EXPECT_EQ(1, api->socketxtreme_free_vma_buff(buff));
	EXPECT_EQ(0, api->socketxtreme_free_vma_buff(buff));
	errno = 0;
	EXPECT_EQ(-1, api->socketxtreme_free_vma_buff(buff));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, api->socketxtreme_ref_vma_buff(buff));
	EXPECT_EQ(-1, api->socketxtreme_free_vma_packets(&c.packet, 1));
	EXPECT_EQ(EINVAL, errno);
	/*
	 * No chunk came back twice: two descriptors on one chunk would show
	 * as a datagram twice and another never. Batches the ring holds
	 * whole, every sequence number once.
	 */
	for (b = 0; b < 4; b++) {
		static uint8_t seen[500];
		struct vma_completion_t cs[16];
		double end = mono() + 20;
		int dup = 0;

		memset(seen, 0, sizeof(seen));
		send_n(self->cmd, self->done, 32020, 500, 24);
		for (n = 0; n < 500 && mono() < end;) {
			int k = api->socketxtreme_poll(fd, cs, 16, 0), j;
			uint32_t s;

			for (j = 0; j < k; j++) {
				ASSERT_TRUE(cs[j].events & VMA_SOCKETXTREME_PACKET);
				s = seq_of(cs[j].packet.buff_lst->payload);
				if (s >= 500 || seen[s]++)
					dup++;
				n++;
				ASSERT_EQ(0, api->socketxtreme_free_vma_packets(&cs[j].packet, 1));
			}
			if (!k)
				usleep(1000);
		}
		EXPECT_EQ(500, n);
		EXPECT_EQ(0, dup);
	}
	close(fd);
}

/*
 * One datagram across the veth to fd's port, taken by socketxtreme_poll()
 * on fd and freed: fd's rings exist from here on. Its ring fd, or -1.
 */
static int xt_first(int cmd, int done, struct vma_api_t *api, int fd,
		    uint16_t port)
{
	struct vma_completion_t c[4];
	double end = mono() + 5;
	int n = 0, ring = -1;

	send_n(cmd, done, port, 1, 24);
	for (; !n && mono() < end; usleep(1000))
		n = api->socketxtreme_poll(fd, c, 4, 0);
	if (n != 1 || api->socketxtreme_free_vma_packets(&c[0].packet, 1) ||
	    api->get_socket_rings_fds(fd, &ring, 1) != 1)
		return -1;
	return ring;
}

/*
 * What came through the kernel socket (here: from the receiver's own
 * netns, and a 5000-byte datagram, IP fragments over loopback's MTU
 * anyway) comes out of the ring fd and the socket fd as packets too.
 */
TEST_F(pre, socketxtreme_kernel_datagrams_are_packets_too)
{
	static const int len[3] = { 5, 5000, 64 };
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(32040) };
	struct vma_completion_t c[4];
	struct vma_api_t *api;
	struct vma_buff_t *b;
	int fd, lo, ring, form, i, k, n, got[3];
	static char msg[5000];
	double end;

	setenv("VMA_SOCKETXTREME", "1", 1);
	fd = udp_bound(32040);
	lo = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_GE(fd, 0);
	ASSERT_GE(lo, 0);
	api = vma_get_api();
	ring = xt_first(self->cmd, self->done, api, fd, 32040);
	ASSERT_GE(ring, 0);
	inet_pton(AF_INET, ADDR_B, &me.sin_addr);
	for (form = 0; form < 2; form++) {
		memset(got, 0, sizeof(got));
		for (i = 0; i < 3; i++) {
			memset(msg, 'a' + i, sizeof(msg));
			ASSERT_EQ(len[i], sendto(lo, msg, len[i], 0, (void *)&me,
						 sizeof(me)));
		}
		end = mono() + 5;
		for (n = 0; n < 3 && mono() < end;) {
			k = api->socketxtreme_poll(form ? ring : fd, c, 4, 0);
			ASSERT_GE(k, 0);
			for (i = 0; i < k; i++, n++) {
				ASSERT_TRUE(c[i].events & VMA_SOCKETXTREME_PACKET);
				b = c[i].packet.buff_lst;
				ASSERT_NE(NULL, b);
				EXPECT_EQ((uint64_t)fd, c[i].user_data);
				EXPECT_EQ(b->len, c[i].packet.total_len);
				EXPECT_EQ(htonl(0x0a080002), c[i].src.sin_addr.s_addr);
				if (b->len && ((char *)b->payload)[0] >= 'a' &&
				    ((char *)b->payload)[0] <= 'c')
					got[((char *)b->payload)[0] - 'a'] = b->len;
				/* a reference more, then both back */
				EXPECT_EQ(2, api->socketxtreme_ref_vma_buff(b));
				EXPECT_EQ(1, api->socketxtreme_free_vma_buff(b));
				EXPECT_EQ(0, api->socketxtreme_free_vma_packets(&c[i].packet, 1));
				EXPECT_EQ(-1, api->socketxtreme_free_vma_buff(b));
			}
			if (!k)
				usleep(1000);
		}
		EXPECT_EQ(3, n) TH_LOG("%s form", form ? "ring" : "socket");
		for (i = 0; i < 3; i++)
			EXPECT_EQ(len[i], got[i]) TH_LOG("datagram %d, %s form", i,
							 form ? "ring" : "socket");
	}
	close(lo);
	close(fd);
}

/*
 * A wait that saw the kernel socket readable sends the ring form's next
 * poll there; a poll whose completions the ring's own datagrams fill
 * must keep that turn for a poll with room, or the kernel's datagram
 * waits for another (here no turn comes by count: the ratio is 0).
 */
TEST_F(pre, socketxtreme_ring_keeps_a_kernel_turn_a_full_poll_could_not_use)
{
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(32050) };
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	struct vma_completion_t c[4];
	struct vma_api_t *api;
	int fd, lo, ep, ring, i, k, n, ring_got = 0, kernel_got = 0;
	char msg[8] = "kernel";

	setenv("VMA_SOCKETXTREME", "1", 1);
	setenv("VMA_RX_UDP_POLL_OS_RATIO", "0", 1);
	fd = udp_bound(32050);
	lo = socket(AF_INET, SOCK_DGRAM, 0);
	ep = epoll_create1(0);
	ASSERT_GE(fd, 0);
	ASSERT_GE(lo, 0);
	ASSERT_GE(ep, 0);
	api = vma_get_api();
	ring = xt_first(self->cmd, self->done, api, fd, 32050);
	ASSERT_GE(ring, 0);
	ev.data.fd = fd;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	/* two on the ring, one on the kernel socket, then one wait */
	send_n(self->cmd, self->done, 32050, 2, 24);
	inet_pton(AF_INET, ADDR_B, &me.sin_addr);
	ASSERT_EQ(6, sendto(lo, msg, 6, 0, (void *)&me, sizeof(me)));
	usleep(200000);
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 2000));
	/* one completion per poll: the first two are the ring's */
	for (k = 0; k < 8 && ring_got + kernel_got < 3; k++) {
		n = api->socketxtreme_poll(ring, c, 1, 0);
		ASSERT_GE(n, 0);
		for (i = 0; i < n; i++) {
			ASSERT_TRUE(c[i].events & VMA_SOCKETXTREME_PACKET);
			if (c[i].packet.total_len == 6)
				kernel_got++;
			else
				ring_got++;
			EXPECT_EQ(0, api->socketxtreme_free_vma_packets(&c[i].packet, 1));
		}
	}
	EXPECT_EQ(2, ring_got);
	EXPECT_EQ(1, kernel_got) TH_LOG("the kernel's datagram, after %d polls", k);
	close(ep);
	close(lo);
	close(fd);
}

TEST_F(pre, socketxtreme_tcp_accepts_and_reports_readiness)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct epoll_event ev = { .events = EPOLLIN };
	struct vma_completion_t c[4];
	socklen_t alen = sizeof(a);
	struct vma_api_t *api;
	int l, ep, cl, n, i, newfd = -1, flags;
	uint64_t ud = 4242;
	char buf[64];

	setenv("VMA_SOCKETXTREME", "1", 1);
	ep = epoll_create1(0);
	l = socket(AF_INET, SOCK_STREAM, 0);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	ASSERT_EQ(0, bind(l, (void *)&a, sizeof(a)));
	ASSERT_EQ(0, getsockname(l, (void *)&a, &alen));
	ASSERT_EQ(0, listen(l, 4));
	ev.data.fd = l;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev));
	api = vma_get_api();
	cl = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_EQ(0, connect(cl, (void *)&a, sizeof(a)));
	usleep(100000);
	/* the listening socket's connection, accepted by the poll */
	n = api->socketxtreme_poll(ep, c, 4, 0);
	ASSERT_EQ(1, n);
	EXPECT_TRUE(c[0].events & VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED);
	EXPECT_EQ(l, c[0].listen_fd);
	newfd = (int)c[0].user_data;
	ASSERT_GT(newfd, 0);
	EXPECT_EQ(0, setsockopt(newfd, SOL_SOCKET, SO_VMA_USER_DATA, &ud,
				sizeof(ud)));
	ev.data.fd = newfd;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, newfd, &ev));
	ASSERT_EQ(5, write(cl, "hello", 5));
	usleep(100000);
	for (i = 0, n = 0; i < 10 && !n; i++)
		n = api->socketxtreme_poll(ep, c, 4, 0);
	ASSERT_EQ(1, n);
	EXPECT_TRUE(c[0].events & EPOLLIN);
	EXPECT_EQ(4242, c[0].user_data);
	/* zero copy on TCP: a copy, the flag cleared */
	flags = 0;
	EXPECT_EQ(5, api->recvfrom_zcopy(newfd, buf, sizeof(buf), &flags,
					 NULL, NULL));
	EXPECT_FALSE(flags & MSG_VMA_ZCOPY);
	/* forced: EIO, and the bytes stay for the next read */
	ASSERT_EQ(5, write(cl, "again", 5));
	usleep(100000);
	flags = MSG_VMA_ZCOPY_FORCE;
	EXPECT_EQ(-1, api->recvfrom_zcopy(newfd, buf, sizeof(buf), &flags,
					  NULL, NULL));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(5, read(newfd, buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, "again", 5));
	close(newfd);
	close(cl);
	close(l);
	close(ep);
}

/*
 * The ring form in arrival order across the ring's sockets (extra-api-1
 * X-M2: a poll of one completion at a time gave A0, A1, B0, A2, one
 * socket per turn), as libvma takes one completion per CQE.
 */
TEST_F(pre, socketxtreme_ring_keeps_arrival_order_across_sockets)
{
	struct vma_completion_t c[1];
	struct vma_api_t *api;
	int a, b, rfd, k, n, got = 0;
	uint64_t ud;
	char order[8];

	setenv("VMA_SOCKETXTREME", "1", 1);	/* before the first socket */
	a = udp_bound(32030);
	b = udp_bound(32031);
	ASSERT_GE(a, 0);
	ASSERT_GE(b, 0);
	api = vma_get_api();
	ud = 'A';
	ASSERT_EQ(0, setsockopt(a, SOL_SOCKET, SO_VMA_USER_DATA, &ud, sizeof(ud)));
	ud = 'B';
	ASSERT_EQ(0, setsockopt(b, SOL_SOCKET, SO_VMA_USER_DATA, &ud, sizeof(ud)));
	rfd = xt_first(self->cmd, self->done, api, a, 32030);
	ASSERT_GE(rfd, 0);
	send_n(self->cmd, self->done, 32030, 3, 24);
	send_n(self->cmd, self->done, 32031, 1, 24);
	usleep(100000);
	for (k = 0; k < 500 && got < 4; k++) {
		n = api->socketxtreme_poll(rfd, c, 1, 0);
		ASSERT_GE(n, 0);
		if (!n) {
			usleep(1000);
			continue;
		}
		order[got] = (char)c[0].user_data;
		order[got + 1] = 0;
		if (c[0].user_data == 'A')
			EXPECT_EQ(got, (int)seq_of(c[0].packet.buff_lst->payload));
		EXPECT_EQ(0, api->socketxtreme_free_vma_packets(&c[0].packet, 1));
		got++;
	}
	ASSERT_EQ(4, got);
	EXPECT_STREQ("AAAB", order);
	close(a);
	close(b);
}

static void *accept_all(void *arg)
{
	int l = *(int *)arg, fd;

	while ((fd = accept(l, NULL, NULL)) >= 0 || errno == EINTR ||
	       errno == ECONNABORTED)
		if (fd >= 0)
			close(fd);
	return NULL;
}

/*
 * socketXtreme accepts a blocking listener's connections without ever
 * waiting for one (X-M3): another thread accepting from the same
 * listener takes some between the poll and the accept. A poll that
 * blocked would hold the epoll set's lock and hang until the alarm.
 */
TEST_F(pre, socketxtreme_accept_never_blocks)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct epoll_event ev = { .events = EPOLLIN };
	struct vma_completion_t c[8];
	struct vma_api_t *api;
	socklen_t len = sizeof(a);
	int l, ep, cl, i, k, n, mine = 0;
	pthread_t t;

	setenv("VMA_SOCKETXTREME", "1", 1);
	api = vma_get_api();
	l = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_GE(l, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ASSERT_EQ(0, bind(l, (void *)&a, sizeof(a)));
	ASSERT_EQ(0, getsockname(l, (void *)&a, &len));
	ASSERT_EQ(0, listen(l, 256));
	ep = epoll_create1(0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev));
	ASSERT_EQ(0, pthread_create(&t, NULL, accept_all, &l));
	alarm(20);
	for (i = 0; i < 200; i++) {
		cl = socket(AF_INET, SOCK_STREAM, 0);
		ASSERT_EQ(0, connect(cl, (void *)&a, sizeof(a)));
		for (k = 0; k < 4; k++) {
			n = api->socketxtreme_poll(i & 1 ? ep : l, c, 8, 0);
			ASSERT_GE(n, 0);
			while (n-- > 0)
				if (c[n].events & VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED) {
					close((int)c[n].user_data);
					mine++;
				}
		}
		close(cl);
	}
	alarm(0);
	TH_LOG("%d of 200 connections accepted by socketxtreme_poll", mine);
	shutdown(l, SHUT_RDWR);
	pthread_join(t, NULL);
	close(ep);
	close(l);
}

/*
 * A socket's default user data is its fd, and follows it (X-M5): after
 * dup2(fd, 100) and close(fd), completions name 100, never fd's number,
 * which a pipe now holds.
 */
TEST_F(pre, socketxtreme_user_data_follows_the_fd)
{
	struct vma_completion_t c[4];
	struct vma_api_t *api;
	int fd, p[2], n = 0, k;

	setenv("VMA_SOCKETXTREME", "1", 1);
	fd = udp_bound(32032);
	ASSERT_GE(fd, 0);
	api = vma_get_api();
	ASSERT_GE(xt_first(self->cmd, self->done, api, fd, 32032), 0);
	ASSERT_EQ(100, dup2(fd, 100));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, pipe(p));
	EXPECT_EQ(fd, p[0]);	/* the number is the pipe's now */
	send_n(self->cmd, self->done, 32032, 1, 24);
	for (k = 0; k < 500 && n <= 0; k++, usleep(2000))
		n = api->socketxtreme_poll(100, c, 4, 0);
	ASSERT_EQ(1, n);
	EXPECT_EQ(100, c[0].user_data);
	EXPECT_EQ(0, api->socketxtreme_free_vma_packets(&c[0].packet, 1));
	close(p[0]);
	close(p[1]);
	close(100);
}

/*
 * A program asleep on a ring fd wakes for what reaches the kernel socket
 * of a socket on that ring (X-M1: a local sender, here; IP fragments and
 * what a full ring passes on come the same way), in poll() and in
 * epoll_wait(), and the ring's poll then hands it out.
 */
TEST_F(pre, socketxtreme_ring_fd_wakes_for_the_kernel_socket)
{
	struct sockaddr_in me = { .sin_family = AF_INET,
				  .sin_port = htons(32033) };
	struct epoll_event ev = { .events = EPOLLIN };
	struct vma_completion_t c[4];
	struct vma_api_t *api;
	int fd, lo, rfd, ep, round, k, n;
	struct pollfd p;

	setenv("VMA_SOCKETXTREME", "1", 1);
	fd = udp_bound(32033);
	ASSERT_GE(fd, 0);
	api = vma_get_api();
	rfd = xt_first(self->cmd, self->done, api, fd, 32033);
	ASSERT_GE(rfd, 0);
	inet_pton(AF_INET, ADDR_B, &me.sin_addr);
	lo = socket(AF_INET, SOCK_DGRAM, 0);
	ep = epoll_create1(0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, rfd, &ev));
	for (round = 0; round < 2; round++) {
		ASSERT_EQ(5, sendto(lo, "local", 5, 0, (void *)&me, sizeof(me)));
		if (round == 0) {
			p = (struct pollfd){ .fd = rfd, .events = POLLIN };
			EXPECT_EQ(1, poll(&p, 1, 2000));
		} else {
			EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 2000));
		}
		/* the ring form reads kernel sockets on its turn */
		for (n = k = 0; k < 1000 && !n; k++)
			n = api->socketxtreme_poll(rfd, c, 4, 0);
		ASSERT_EQ(1, n) TH_LOG("round %d", round);
		EXPECT_EQ(5, c[0].packet.total_len);
		EXPECT_EQ(0, api->socketxtreme_free_vma_packets(&c[0].packet, 1));
	}
	close(ep);
	close(lo);
	close(fd);
}

/* The control message of a datagram read with recvmsg(), or NULL. */
static struct cmsghdr *recv_cmsg(int fd, char *cbuf, size_t clen, int type)
{
	char buf[256];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = clen };
	struct cmsghdr *c;

	if (recvmsg(fd, &m, 0) < 0)
		return NULL;
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == type)
			return c;
	return NULL;
}

static double ts_sec(const struct timespec *t)
{
	return t->tv_sec + t->tv_nsec / 1e9;
}

/*
 * SO_TIMESTAMP, SO_TIMESTAMPNS and software SO_TIMESTAMPING keep a socket
 * on its rings with no variable set: the ring's stamp comes in the
 * kernel's control messages (the host's clock, between the send and the
 * receive), a zero copy is still one (the socket stayed), and a callback
 * is told the same stamp.
 */
TEST_F(pre, timestamps_keep_a_socket_on_its_rings)
{
	struct vma_api_t *api = vma_get_api();
	int fd = udp_bound(32034), on = 1, flags, mode;
	struct timespec before, after, *tp;
	struct scm_timestamping *st;
	struct timeval *tv;
	char cbuf[256], buf[256];
	struct cmsghdr *c;

	ASSERT_GE(fd, 0);
	rcvtimeo(fd, 3);
	for (mode = 0; mode < 3; mode++) {
		if (mode == 0) {
			ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &on, sizeof(on)));
		} else if (mode == 1) {
			ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)));
		} else {
			int f = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE, off = 0;

			ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &off, sizeof(off)));
			ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &f, sizeof(f)));
		}
		clock_gettime(CLOCK_REALTIME, &before);
		send_n(self->cmd, self->done, 32034, 2, 24);
		c = recv_cmsg(fd, cbuf, sizeof(cbuf), mode == 0 ? SO_TIMESTAMP :
			      mode == 1 ? SO_TIMESTAMPNS : SO_TIMESTAMPING);
		clock_gettime(CLOCK_REALTIME, &after);
		ASSERT_NE(NULL, c) TH_LOG("mode %d", mode);
		if (mode == 0) {
			struct timespec t;

			EXPECT_EQ(CMSG_LEN(sizeof(*tv)), c->cmsg_len);
			tv = (struct timeval *)CMSG_DATA(c);
			t.tv_sec = tv->tv_sec;
			t.tv_nsec = tv->tv_usec * 1000;
			EXPECT_GE(ts_sec(&t), ts_sec(&before) - 1e-6);
			EXPECT_LE(ts_sec(&t), ts_sec(&after));
		} else if (mode == 1) {
			EXPECT_EQ(CMSG_LEN(sizeof(*tp)), c->cmsg_len);
			tp = (struct timespec *)CMSG_DATA(c);
			EXPECT_GE(ts_sec(tp), ts_sec(&before));
			EXPECT_LE(ts_sec(tp), ts_sec(&after));
		} else {
			EXPECT_EQ(CMSG_LEN(sizeof(*st)), c->cmsg_len);
			st = (struct scm_timestamping *)CMSG_DATA(c);
			EXPECT_GE(ts_sec(&st->ts[0]), ts_sec(&before));
			EXPECT_LE(ts_sec(&st->ts[0]), ts_sec(&after));
			EXPECT_EQ(0, st->ts[1].tv_sec);
			EXPECT_EQ(0, st->ts[2].tv_sec);
		}
		/* still on the rings: the second one without a copy */
		flags = 0;
		EXPECT_EQ(24, api->recvfrom_zcopy(fd, buf, sizeof(buf), &flags,
						  NULL, NULL));
		EXPECT_TRUE(flags & MSG_VMA_ZCOPY) TH_LOG("mode %d", mode);
		if (flags & MSG_VMA_ZCOPY)
			EXPECT_EQ(0, api->free_packets(fd,
				((struct vma_packets_t *)buf)->pkts, 1));
	}
	close(fd);
}

int main(int argc, char **argv)
{
	if (getuid() == 0)
		netns_up();
	return test_harness_run(argc, argv);
}
