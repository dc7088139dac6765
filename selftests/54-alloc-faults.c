// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures injected into every setup step.
 *
 * For each step of a ring's life (socket, UMEM, the four rings, bind,
 * mmap, socket and raw rules, shared-UMEM bind, a TX kick, moderation,
 * the network header, netlink get and dump) the earlier steps are done
 * cleanly, then the step runs with its n-th fault-injectable allocation
 * failing (/proc/thread-self/fail-nth, failslab and fail_page_alloc set
 * to include sleeping allocations), for n = 1, 2, ... until the step no
 * longer reaches an n-th allocation. Each injected run must fail with a
 * clean errno (ENOMEM, ENOBUFS, EAGAIN; ENFILE when the socket's file
 * could not be had), or succeed where the allocation was optional; after
 * closing everything the module's pinned pages and rings are back where
 * they were; KASAN and kmemleak on the console catch the rest.
 *
 * Needs a kernel with CONFIG_FAULT_INJECTION (the debug kernel, `make
 * check-debug`); Debian's kernels skip it.
 */
#include <poll.h>
#include <sys/mman.h>

#include "harness.h"
#include "common.h"
#include "nl.h"

#define PORT	5400
#define NENT	64
#define MAX_NTH	400

enum step { ST_SOCKET, ST_UMEM, ST_RX, ST_TX, ST_FILL, ST_COMP, ST_BIND,
	    ST_MMAP, ST_RULE_SOCK, ST_RULE_RAW, ST_SHARED, ST_KICK,
	    ST_MODERATION, ST_NET_HEADER, ST_NL_GET, ST_NL_DUMP, ST_COUNT };

static const char *const step_name[ST_COUNT] = {
	"socket", "umem-reg", "rx-ring", "tx-ring", "fill-ring", "comp-ring",
	"bind", "mmap", "rule-socket", "rule-raw", "shared-umem-bind",
	"tx-kick", "moderation", "net-header", "netlink-get", "netlink-dump",
};

struct ctx {
	int fam, ifindex, udp, conn, fd, fd2;	/* conn: connected to a */
	uint8_t *umem;
	void *map[4];
	size_t maplen[4];
	struct vmak_mmap_offsets off;
	struct tnl nl;
	char nlbuf[16384];
	size_t nllen;
};

static int nth_fd = -1;

/* The n-th injectable allocation of this thread from now on fails. */
static int inject(unsigned int n)
{
	char b[16];
	int l = snprintf(b, sizeof(b), "%u", n);

	return pwrite(nth_fd, b, (size_t)l, 0) == l ? 0 : -1;
}

/* Stop injecting; true if the failure was injected. */
static bool injected(void)
{
	char b[16] = { 0 };
	ssize_t r = pread(nth_fd, b, sizeof(b) - 1, 0);

	if (pwrite(nth_fd, "0", 1, 0) != 1 || r <= 0)
		return false;
	return atoi(b) == 0;
}

static size_t ring_len(const struct ctx *c, int k)
{
	return ring_offset(&c->off, k)->desc + NENT * ring_desc_size(k);
}

static void ctx_close(struct ctx *c)
{
	for (int k = 0; k < 4; k++) {
		if (c->map[k])
			munmap(c->map[k], c->maplen[k]);
		c->map[k] = NULL;
	}
	if (c->fd >= 0)
		close(c->fd);
	if (c->fd2 >= 0)
		close(c->fd2);
	c->fd = c->fd2 = -1;
}

static int umem_reg(int fd, uint8_t *umem)
{
	struct vmak_umem_reg r = {
		.addr = (uint64_t)(uintptr_t)umem, .len = NENT * 2 * 2048,
		.chunk_size = 2048,
	};

	return setsockopt(fd, SOL_VMAK, VMAK_UMEM_REG, &r, sizeof(r));
}

static int bind_to(struct ctx *c, int fd, uint16_t flags, int shared)
{
	struct sockaddr_vmak a = {
		.svmak_family = (uint16_t)c->fam, .svmak_flags = flags,
		.svmak_ifindex = (uint32_t)c->ifindex,
		.svmak_queue_id = VMAK_QUEUE_ANY,
		.svmak_shared_umem_fd = (uint32_t)shared,
	};

	return bind(fd, (struct sockaddr *)&a, sizeof(a));
}

/* A TX frame to the peer at chunk i, described in the TX ring. */
static void tx_post(struct ctx *c, uint32_t n)
{
	uint8_t *m = c->map[1];
	uint32_t *prod = (uint32_t *)(m + c->off.tx.producer);
	uint32_t p = *prod;

	for (uint32_t i = 0; i < n; i++) {
		struct vmak_tx_desc d = { .addr = (NENT + i) * 2048ull, .len = 64 };
		uint8_t *f = c->umem + d.addr;

		memset(f, 0xff, 6);		/* broadcast, dropped by the peer */
		memset(f + 6, 0x02, 6);
		f[12] = 0x88, f[13] = 0xb5;	/* local experimental ethertype */
		memcpy(m + c->off.tx.desc + ((p + i) % NENT) * sizeof(d), &d, sizeof(d));
	}
	__atomic_store_n(prod, p + n, __ATOMIC_RELEASE);
}

/* Completions posted so far. */
static uint32_t cq_prod(struct ctx *c)
{
	return __atomic_load_n((uint32_t *)((uint8_t *)c->map[3] + c->off.cr.producer),
			       __ATOMIC_ACQUIRE);
}

static uint32_t tx_cons(struct ctx *c)
{
	return __atomic_load_n((uint32_t *)((uint8_t *)c->map[1] + c->off.tx.consumer),
			       __ATOMIC_ACQUIRE);
}

/* Run step s (the earlier ones done); -1 with errno on failure. */
static int run_step(struct ctx *c, int s)
{
	uint32_t n = NENT;

	switch (s) {
	case ST_SOCKET:
		c->fd = socket(c->fam, SOCK_RAW, 0);
		return c->fd < 0 ? -1 : 0;
	case ST_UMEM:
		return umem_reg(c->fd, c->umem);
	case ST_RX: case ST_TX: case ST_FILL: case ST_COMP:
		return setsockopt(c->fd, SOL_VMAK, VMAK_RX_RING + s - ST_RX, &n, 4);
	case ST_BIND:
		return bind_to(c, c->fd, 0, 0);
	case ST_MMAP: {
		socklen_t olen = sizeof(c->off);

		if (getsockopt(c->fd, SOL_VMAK, VMAK_MMAP_OFFSETS, &c->off, &olen))
			return -1;
		for (int k = 0; k < 4; k++) {
			size_t len = ring_len(c, k);
			void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				       c->fd, (off_t)ring_pgoff[k]);

			if (p == MAP_FAILED)
				return -1;
			c->map[k] = p;
			c->maplen[k] = len;
		}
		return 0;
	}
	case ST_RULE_SOCK: {
		struct vmak_rule r = { .kind = VMAK_RULE_SOCKET, .fd = c->udp, .cookie = 1 };

		return setsockopt(c->fd, SOL_VMAK, VMAK_RULE_ADD, &r, sizeof(r));
	}
	case ST_RULE_RAW: {
		struct vmak_rule r = { .kind = VMAK_RULE_RAW, .cookie = 2, .af = AF_INET,
				       .proto = IPPROTO_UDP, .dst_port = htons(PORT + 1) };

		inet_pton(AF_INET, ADDR_B, r.dst_addr);
		return setsockopt(c->fd, SOL_VMAK, VMAK_RULE_ADD, &r, sizeof(r));
	}
	case ST_SHARED:
		c->fd2 = socket(c->fam, SOCK_RAW, 0);
		if (c->fd2 < 0 ||
		    setsockopt(c->fd2, SOL_VMAK, VMAK_RX_RING, &n, 4) ||
		    setsockopt(c->fd2, SOL_VMAK, VMAK_FILL_RING, &n, 4))
			return -1;
		return bind_to(c, c->fd2, VMAK_BIND_SHARED_UMEM, c->fd);
	case ST_KICK:
		return (int)sendto(c->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
	case ST_MODERATION: {
		struct vmak_moderation m = { .count = 8, .usec = 100 };

		return setsockopt(c->fd, SOL_VMAK, VMAK_RX_MODERATION, &m, sizeof(m));
	}
	case ST_NET_HEADER: {
		struct vmak_net_header h = { .fd = c->conn };
		socklen_t len = sizeof(h);
		int r = getsockopt(c->fd, SOL_VMAK, VMAK_NET_HEADER, &h, &len);

		/* neighbour not resolved yet: EAGAIN is the answer, not a fault */
		return r && errno == EAGAIN ? 0 : r;
	}
	case ST_NL_GET: case ST_NL_DUMP: {
		char *rb = c->nlbuf + 4096;
		const struct nlmsghdr *nlh = (const void *)rb;
		ssize_t r;

		if (mnl_socket_sendto(c->nl.sock, c->nlbuf, c->nllen) != (ssize_t)c->nllen)
			return -1;
		/* The answer (or its first part) is queued by now. */
		r = recv(mnl_socket_get_fd(c->nl.sock), rb, sizeof(c->nlbuf) - 4096,
			 MSG_DONTWAIT);
		if (r < 0)
			return -1;
		if (r >= (ssize_t)sizeof(*nlh) && nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

			if (e->error) {
				errno = -e->error;
				return -1;
			}
		}
		return 0;
	}
	}
	return -1;
}

/* Steps before s, cleanly. */
static int prepare(struct ctx *c, int s)
{
	for (int i = 0; i < s; i++)
		if (i != ST_NL_GET && i != ST_NL_DUMP && run_step(c, i))
			return -1;
	if (s == ST_KICK)
		tx_post(c, 8);
	if (s == ST_NL_GET || s == ST_NL_DUMP) {
		struct nlmsghdr *nlh = tnl_msg(&c->nl, c->nlbuf, VMAK_CMD_RING_GET,
						   s == ST_NL_DUMP ? NLM_F_DUMP : 0);

		if (s == ST_NL_GET)
			mnl_attr_put_u32(nlh, VMAK_A_RING_ID, ring_id(c->fd));
		c->nllen = nlh->nlmsg_len;
		/* drain earlier answers */
		while (recv(mnl_socket_get_fd(c->nl.sock), c->nlbuf + 4096,
			    sizeof(c->nlbuf) - 4096, MSG_DONTWAIT) > 0)
			;
	}
	return 0;
}

/* After an injected kick: every consumed descriptor completes. */
static bool kick_completes(struct ctx *c)
{
	for (int t = 0; t < 200; t++) {
		if (cq_prod(c) == tx_cons(c))
			return true;
		usleep(5000);
	}
	return false;
}

TEST_TIMEOUT(every_setup_step_survives_allocation_failures, 1800)
{
	struct ctx c = { .fd = -1, .fd2 = -1 };
	struct sockaddr_storage peer;
	socklen_t plen;
	uint64_t pinned0;
	struct vnet net;
	int total = 0, rings0 = 0;

	FAMILY_OR_SKIP(c.fam);
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0)
		SKIP(return, "kernel without CONFIG_FAULT_INJECTION (make check-debug)");
	/* Fail sleeping allocations too, quietly. */
	ASSERT_EQ(0, write_knob("/sys/kernel/debug/failslab/ignore-gfp-wait", "N"));
	ASSERT_EQ(0, write_knob("/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N"));
	ASSERT_EQ(0, write_knob("/sys/kernel/debug/failslab/verbose", "0"));
	ASSERT_EQ(0, write_knob("/sys/kernel/debug/fail_page_alloc/verbose", "0"));

	ASSERT_EQ(0, vnet_setup(&net, 1));
	c.ifindex = net.ifindex_b;
	c.udp = udp_bound(AF_INET, ADDR_B, PORT);
	ASSERT_GE(c.udp, 0);
	c.conn = udp_bound(AF_INET, ADDR_B, PORT + 2);
	ASSERT_GE(c.conn, 0);
	ASSERT_EQ(AF_INET, sockaddr_of(ADDR_A, PORT, &peer, &plen));
	ASSERT_EQ(0, connect(c.conn, (struct sockaddr *)&peer, plen));
	c.umem = mmap(NULL, NENT * 2 * 2048, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_TRUE(c.umem != MAP_FAILED);
	ASSERT_EQ(0, tnl_open(&c.nl));
	pinned0 = module_pinned();
	ASSERT_EQ(0, vmak_ctl_ring_list(NULL, count_rings, &rings0));

	for (int s = 0; s < ST_COUNT; s++) {
		int points = 0, failed = 0, errs[8] = { 0 }, nerr = 0;
		bool done = false;

		for (unsigned int n = 1; n <= MAX_NTH && !done; n++) {
			int r, e, rings = 0;
			bool hit;

			ASSERT_EQ(0, prepare(&c, s));
			ASSERT_EQ(0, inject(n));
			r = run_step(&c, s);
			e = errno;
			hit = injected();
			if (!hit) {
				/* fewer than n allocations: the step works */
				EXPECT_EQ(0, r);
				if (r)
					TH_LOG("%s without injection: %s", step_name[s], strerror(e));
				done = true;
			} else {
				points++;
				if (r) {
					failed++;
					/* a clean, expected error */
					/* ENFILE: no struct file for the socket */
					if (e != ENOMEM && e != ENOBUFS && e != EAGAIN &&
					    e != ENFILE) {
						TH_LOG("%s, allocation %u failed: %s",
						       step_name[s], n, strerror(e));
						EXPECT_TRUE(false);
					}
					if (nerr < 8)
						errs[nerr++] = e;
				}
			}
			if (s == ST_KICK && c.map[3])
				EXPECT_TRUE(kick_completes(&c));
			ctx_close(&c);
			for (int t = 0; t < 100 && module_pinned() != pinned0; t++)
				usleep(10000);
			EXPECT_EQ(pinned0, module_pinned());
			EXPECT_EQ(0, vmak_ctl_ring_list(NULL, count_rings, &rings));
			EXPECT_EQ(rings0, rings);
			if (!_metadata->passed)
				break;
		}
		EXPECT_TRUE(done);
		total += points;
		TH_LOG("%-16s %3d allocations failed in turn: %3d calls failed cleanly (%s), %3d coped",
		       step_name[s], points, failed, nerr ? strerror(errs[0]) : "-",
		       points - failed);
		if (!_metadata->passed)
			break;
	}
	TH_LOG("%d injected failures in all", total);
	EXPECT_GT(total, ST_COUNT);

	tnl_close(&c.nl);
	munmap(c.umem, NENT * 2 * 2048);
	close(c.udp);
	close(c.conn);
	close(nth_fd);
	vnet_teardown(&net);
}

TEST_HARNESS_MAIN
