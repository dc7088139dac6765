// SPDX-License-Identifier: GPL-2.0
/*
 * Structured fuzzer of the socket ABI and the netlink family.
 *
 * A fixed number of operations (VMAK_FUZZ_OPS, default 1,000,000; seed
 * VMAK_FUZZ_SEED) drawn at random over a few vmak sockets and UDP
 * sockets: socket, close, setsockopt and getsockopt of every option with
 * valid, edge and garbage values and lengths, bind, mmap and munmap of the
 * rings, random producer/consumer indexes and descriptors written into
 * mapped rings, sendto kicks, poll, recv, and random generic netlink
 * requests naming real ring ids; all while UDP traffic arrives for the
 * steered ports. Arguments are valid more often than not and each socket
 * is pushed along its setup path, so the fuzzer reaches bound, mapped,
 * receiving and sending rings rather than stopping at EINVAL.
 *
 * Passing means: every call returned (no hang), the console stayed clean
 * (checked by the VM runner), the module's pinned pages and rings are back
 * to their start values, the module still works, and the run covered
 * enough: binds, mmaps, received and sent packets all happened.
 */
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "harness.h"
#include "common.h"
#include "nl.h"
#include "fuzz.h"

#define PORT	5300
#define NSOCK	6
#define NUDP	4
#define NRING	4
#define UMEM_LEN (4u << 20)

enum { OP_SOCKET, OP_CLOSE, OP_SETSOCKOPT, OP_GETSOCKOPT, OP_BIND, OP_MMAP,
       OP_MUNMAP, OP_RING_WRITE, OP_KICK, OP_POLL, OP_RECV, OP_NETLINK,
       OP_UDP, OP_STEP, OP_COUNT };

static const char *const op_name[OP_COUNT] = {
	"socket", "close", "setsockopt", "getsockopt", "bind", "mmap",
	"munmap", "ring-write", "sendto", "poll", "recv", "netlink", "udp",
	"step",
};

struct fz_sock {
	int fd;
	int stage;		/* next setup step for OP_STEP */
	void *map[NRING];
	size_t maplen[NRING];
	struct vmak_mmap_offsets off;
	bool have_off;
	struct vmak_statistics last;	/* last sample of its counters */
};

struct fz {
	int fam, ifindex;
	int other_if[2];	/* a tun and a dummy device, not Ethernet veth */
	struct fz_sock s[NSOCK];
	int udp[NUDP];
	uint8_t *umem;
	struct tnl nl;
	char nlbuf[8192];
	uint64_t calls[OP_COUNT], ok[OP_COUNT];
	uint64_t binds, maps, taken;	/* successful binds, ring maps, RX descs read */
	struct vmak_statistics total;	/* counters of the sockets closed */
};

static uint32_t rnd_size(void)
{
	return (uint32_t)RND_PICK(0, 1, 3, 7, VMAK_RING_MIN, 64, 64, 256, 256,
				  1024, VMAK_RING_MAX, VMAK_RING_MAX + 1,
				  VMAK_RING_MAX << 1, 0xffffffffu, rnd());
}

static socklen_t rnd_len(socklen_t good)
{
	if (rnd() % 4)
		return good;
	return (socklen_t)RND_PICK(0, 1, 2, 4, 8, good - 1, good + 1, good + 64,
				   rnd() % 4096);
}

static struct fz_sock *any_sock(struct fz *f)
{
	return &f->s[rnd() % NSOCK];
}

static int any_fd(struct fz *f)
{
	switch (rnd() % 8) {
	case 0: return f->udp[rnd() % NUDP];
	case 1: return (int)RND_PICK(-1, 0, 1, 2, 1000, (uint64_t)(int)rnd());
	case 2: return mnl_socket_get_fd(f->nl.sock);
	default: return any_sock(f)->fd;
	}
}

static void unmap_all(struct fz_sock *s)
{
	for (int k = 0; k < NRING; k++) {
		if (s->map[k])
			munmap(s->map[k], s->maplen[k]);
		s->map[k] = NULL;
	}
	s->have_off = false;
}

/* Fill *buf with a valid value for opt (mostly) or garbage; returns len. */
static socklen_t opt_value(struct fz *f, int opt, uint8_t *buf, size_t cap)
{
	for (size_t i = 0; i < cap; i++)
		buf[i] = (uint8_t)rnd();
	switch (opt) {
	case VMAK_UMEM_REG: {
		struct vmak_umem_reg *r = (void *)buf;

		if (rnd() % 4 == 0)
			return rnd_len(sizeof(*r));
		r->addr = (uint64_t)(uintptr_t)f->umem +
			  RND_PICK(0, 0, 0, 4096, 1, rnd() % UMEM_LEN);
		r->len = RND_PICK(1u << 20, 1u << 20, UMEM_LEN, 0, 4096, 2048,
				  UMEM_LEN + 4096, 1ull << 40, rnd());
		r->chunk_size = (uint32_t)RND_PICK(2048, 2048, 4096, 65536, 1024,
						   3000, 131072, 0, rnd());
		r->headroom = (uint32_t)RND_PICK(0, 0, 64, 256, 1024, 2048, rnd());
		r->flags = rnd() % 8 ? 0 : rnd();
		r->pad = rnd() % 8 ? 0 : rnd();
		return rnd_len(sizeof(*r));
	}
	case VMAK_RX_RING: case VMAK_TX_RING: case VMAK_FILL_RING:
	case VMAK_COMPLETION_RING: {
		uint32_t v = rnd_size();

		memcpy(buf, &v, 4);
		return rnd_len(4);
	}
	case VMAK_RULE_ADD: {
		struct vmak_rule *r = (void *)buf;

		if (rnd() % 4 == 0)
			return rnd_len(sizeof(*r));
		memset(r, 0, sizeof(*r));
		r->kind = (uint32_t)RND_PICK(VMAK_RULE_SOCKET, VMAK_RULE_SOCKET,
					     VMAK_RULE_RAW, 0, 3, rnd());
		r->fd = rnd() % 3 ? f->udp[rnd() % NUDP] : any_fd(f);
		r->cookie = rnd() % 16;
		r->flags = rnd() % 16 ? 0 : rnd();
		r->af = (uint16_t)RND_PICK(AF_INET, AF_INET, AF_INET6, 0, rnd());
		r->proto = (uint8_t)RND_PICK(IPPROTO_UDP, IPPROTO_UDP, IPPROTO_TCP, rnd());
		r->pad = rnd() % 16 ? 0 : (uint8_t)rnd();
		r->dst_port = htons((uint16_t)(PORT + rnd() % (NUDP + 1)));
		r->src_port = rnd() % 2 ? 0 : (uint16_t)rnd();
		if (rnd() % 2)
			inet_pton(AF_INET, ADDR_B, r->dst_addr);
		else if (rnd() % 2)
			inet_pton(AF_INET, "239.1.2.3", r->dst_addr);
		else
			for (int i = 0; i < 16; i++)
				r->dst_addr[i] = (uint8_t)rnd();
		return rnd_len(sizeof(*r));
	}
	case VMAK_RULE_DEL: {
		uint32_t c = rnd() % 2 ? rnd() % 16 : rnd();

		memcpy(buf, &c, 4);
		return rnd_len(4);
	}
	case VMAK_RX_MODERATION:
	case VMAK_RX_BATCH: {
		struct vmak_moderation m = {
			.count = (uint32_t)RND_PICK(0, 1, 32, VMAK_MOD_COUNT_MAX,
						    VMAK_MOD_COUNT_MAX + 1, rnd()),
			.usec = (uint32_t)RND_PICK(0, 10, 1000, VMAK_MOD_USEC_MAX,
						   VMAK_MOD_USEC_MAX + 1, rnd()),
		};

		memcpy(buf, &m, sizeof(m));
		return rnd_len(sizeof(m));
	}
	case VMAK_RX_ARM: {
		uint32_t v = (uint32_t)RND_PICK(1, 1, 0, 2, rnd());

		memcpy(buf, &v, 4);
		return rnd_len(4);
	}
	case VMAK_TX_RATE_LIMIT: {
		struct vmak_rate_limit r = {
			.rate = (uint32_t)RND_PICK(0, 0, 1, 10000, 10000000, rnd()),
			.max_burst_sz = (uint32_t)RND_PICK(0, 1500, 65536, rnd()),
			.typical_pkt_sz = (uint16_t)RND_PICK(0, 64, 1500, rnd()),
			.pad = rnd() % 8 ? 0 : (uint16_t)rnd(),
		};

		memcpy(buf, &r, sizeof(r));
		return rnd_len(sizeof(r));
	}
	case VMAK_NET_HEADER: {
		struct vmak_net_header *h = (void *)buf;

		h->fd = (uint32_t)(rnd() % 2 ? f->udp[rnd() % NUDP] : any_fd(f));
		return rnd_len(sizeof(*h));
	}
	default:
		return rnd_len((socklen_t)(rnd() % 128));
	}
}

static int rnd_opt(void)
{
	return (int)RND_PICK(VMAK_UMEM_REG, VMAK_RX_RING, VMAK_TX_RING,
			     VMAK_FILL_RING, VMAK_COMPLETION_RING, VMAK_RULE_ADD,
			     VMAK_RULE_ADD, VMAK_RULE_DEL, VMAK_MMAP_OFFSETS,
			     VMAK_STATISTICS, VMAK_RING_INFO, VMAK_RX_MODERATION,
			     VMAK_RX_ARM, VMAK_RX_BATCH, VMAK_TX_RATE_LIMIT,
			     VMAK_NET_HEADER, 0, 16, rnd() % 64);
}

static int do_setsockopt(struct fz *f, struct fz_sock *s, int opt)
{
	uint8_t buf[256];
	socklen_t len = opt_value(f, opt, buf, sizeof(buf));
	int level = rnd() % 32 ? SOL_VMAK : (int)RND_PICK(SOL_SOCKET, 0, rnd());

	if (len > sizeof(buf))
		len = sizeof(buf);
	return setsockopt(s->fd, level, opt, rnd() % 64 ? buf : NULL, len);
}

static int do_getsockopt(struct fz *f, struct fz_sock *s)
{
	uint8_t buf[256];
	int opt = rnd_opt();
	socklen_t len = opt_value(f, opt, buf, sizeof(buf));
	int err;

	if (len > sizeof(buf))
		len = sizeof(buf);
	err = getsockopt(s->fd, SOL_VMAK, opt, rnd() % 64 ? buf : NULL, &len);
	if (!err && opt == VMAK_MMAP_OFFSETS && len == sizeof(s->off)) {
		memcpy(&s->off, buf, sizeof(s->off));
		s->have_off = true;
	}
	return err;
}

static int do_bind(struct fz *f, struct fz_sock *s)
{
	struct sockaddr_vmak a = {
		.svmak_family = (uint16_t)(rnd() % 16 ? (uint32_t)f->fam : rnd()),
		.svmak_flags = (uint16_t)(rnd() % 2 ? 0 : rnd() % 64),
		.svmak_ifindex = (uint32_t)RND_PICK(f->ifindex, f->ifindex,
						    f->ifindex, f->other_if[0],
						    f->other_if[1], 1, 0, rnd()),
		.svmak_queue_id = (uint32_t)RND_PICK(VMAK_QUEUE_ANY, 0, 0, 1, rnd()),
		.svmak_shared_umem_fd = (uint32_t)any_fd(f),
	};
	uint8_t big[64] = { 0 };

	memcpy(big, &a, sizeof(a));
	if (bind(s->fd, (struct sockaddr *)big, rnd_len(sizeof(a)) % sizeof(big)))
		return -1;
	f->binds++;
	return 0;
}

static int do_mmap(struct fz *f, struct fz_sock *s)
{
	int k = (int)(rnd() % NRING);
	uint64_t pgoff = rnd() % 8 ? ring_pgoff[k] :
			 RND_PICK(1, 4096, 0x40000000ULL, 0x200000000ULL, rnd());
	size_t len = (size_t)RND_PICK(4096, 4096 * 4, 4096 * 16, 4096 * 64,
				      4096 * 1024, 1, 0);
	int prot = rnd() % 8 ? PROT_READ | PROT_WRITE : PROT_READ;
	int flags = MAP_SHARED | (rnd() % 4 ? 0 : MAP_POPULATE);
	void *p = mmap(NULL, len, prot, rnd() % 16 ? flags : MAP_PRIVATE,
		       s->fd, (off_t)pgoff);

	if (p == MAP_FAILED)
		return -1;
	/* Keep only read-write shared maps of a known ring for writing. */
	if (pgoff != ring_pgoff[k] || prot != (PROT_READ | PROT_WRITE) ||
	    !(flags & MAP_SHARED)) {
		munmap(p, len);
		return 0;
	}
	if (s->map[k])
		munmap(s->map[k], s->maplen[k]);
	s->map[k] = p;
	s->maplen[k] = len;
	f->maps++;
	return 0;
}

/* Random indexes and descriptors into a mapped ring. */
static int do_ring_write(struct fz_sock *s)
{
	int k = (int)(rnd() % NRING);
	const struct vmak_ring_offset *o;
	size_t dsz, n;
	uint8_t *m = s->map[k];
	uint32_t *prod, *cons;

	if (!m || !s->have_off)
		return -1;
	o = ring_offset(&s->off, k);
	dsz = ring_desc_size(k);
	if (o->producer + 4 > s->maplen[k] || o->consumer + 4 > s->maplen[k] ||
	    o->desc >= s->maplen[k])
		return -1;
	prod = (uint32_t *)(m + o->producer);
	cons = (uint32_t *)(m + o->consumer);
	n = (s->maplen[k] - o->desc) / dsz;
	if (k == 0 || k == 3) {		/* we consume these */
		*cons = rnd() % 4 ? __atomic_load_n(prod, __ATOMIC_ACQUIRE) :
				    *cons + rnd();
		return 0;
	}
	for (uint32_t i = 0, cnt = rnd() % 64; i < cnt && n; i++) {
		uint8_t *d = m + o->desc + ((*prod + i) % n) * dsz;
		uint64_t addr = RND_PICK(0, 2048, 4096, 1 << 20, (1 << 20) - 1,
					 UMEM_LEN, 1ull << 63, rnd()) +
				(rnd() % 8 ? 0 : rnd() % 2048);

		addr = rnd() % 2 ? (rnd() % 512) * 2048ull : addr;
		if (k == 2) {
			memcpy(d, &addr, 8);
		} else {
			struct vmak_tx_desc t = {
				.addr = addr,
				.len = (uint32_t)RND_PICK(60, 64, 1514, 0, 13, 9000, rnd()),
				.options = rnd() % 4 ? 0 : (uint32_t)RND_PICK(VMAK_TX_DUMMY, rnd()),
			};

			memcpy(d, &t, sizeof(t));
		}
	}
	__atomic_store_n(prod, rnd() % 16 ? *prod + rnd() % 64 : rnd(),
			 __ATOMIC_RELEASE);
	return 0;
}

/* Add the socket's counters (as last sampled) to the total. */
static void sock_tally(struct fz *f, struct fz_sock *s)
{
	const uint64_t *a = (const uint64_t *)&s->last;
	uint64_t *t = (uint64_t *)&f->total;

	for (size_t i = 0; i < sizeof(s->last) / 8; i++)
		t[i] += a[i];
	memset(&s->last, 0, sizeof(s->last));
}

static void sock_sample(struct fz_sock *s)
{
	struct vmak_statistics st;
	socklen_t len = sizeof(st);

	if (s->fd >= 0 && !getsockopt(s->fd, SOL_VMAK, VMAK_STATISTICS, &st, &len))
		s->last = st;
}

static void sock_close(struct fz *f, struct fz_sock *s)
{
	sock_sample(s);
	sock_tally(f, s);
	if (rnd() % 2)
		unmap_all(s);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->stage = 0;
	if (rnd() % 2 || !s->have_off)
		unmap_all(s);
}

static int sock_open(struct fz *f, struct fz_sock *s)
{
	int type = rnd() % 16 ? SOCK_RAW : (int)RND_PICK(SOCK_DGRAM, SOCK_STREAM, rnd() % 16);
	int proto = rnd() % 16 ? 0 : (int)rnd() % 300;
	int fd = socket(f->fam, type | (rnd() % 2 ? SOCK_CLOEXEC : 0), proto);

	if (fd < 0)
		return -1;
	if (s->fd >= 0)
		sock_close(f, s);
	unmap_all(s);
	s->fd = fd;
	s->stage = 0;
	return 0;
}

/* The next setup step with valid arguments: UMEM, 4 rings, bind, offsets,
 * maps, a rule, the fill ring filled. */
static int do_step(struct fz *f, struct fz_sock *s)
{
	int st = s->stage, err = 0;

	if (s->fd < 0)
		return sock_open(f, s);
	if (st == 0) {
		struct vmak_umem_reg r = {
			.addr = (uint64_t)(uintptr_t)f->umem +
				(uint64_t)(s - f->s) * (UMEM_LEN / NSOCK / 4096) * 4096,
			.len = 1u << 19, .chunk_size = 2048,
		};
		err = setsockopt(s->fd, SOL_VMAK, VMAK_UMEM_REG, &r, sizeof(r));
	} else if (st <= 4) {
		uint32_t n = 64;

		err = setsockopt(s->fd, SOL_VMAK, VMAK_RX_RING + st - 1, &n, 4);
	} else if (st == 5) {
		struct sockaddr_vmak a = {
			.svmak_family = (uint16_t)f->fam,
			.svmak_ifindex = (uint32_t)f->ifindex,
			.svmak_queue_id = VMAK_QUEUE_ANY,
		};
		err = bind(s->fd, (struct sockaddr *)&a, sizeof(a));
		f->binds += !err;
	} else if (st == 6) {
		socklen_t len = sizeof(s->off);

		err = getsockopt(s->fd, SOL_VMAK, VMAK_MMAP_OFFSETS, &s->off, &len);
		s->have_off = !err;
	} else if (st <= 10) {
		int k = st - 7;
		const struct vmak_ring_offset *o = ring_offset(&s->off, k);
		size_t len = (o->desc + 64 * ring_desc_size(k) + 4095) & ~(size_t)4095;
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			       s->fd, (off_t)ring_pgoff[k]);

		if (p == MAP_FAILED) {
			err = -1;
		} else {
			if (s->map[k])
				munmap(s->map[k], s->maplen[k]);
			s->map[k] = p;
			s->maplen[k] = len;
			f->maps++;
		}
	} else if (st == 11) {
		struct vmak_rule r = { .kind = VMAK_RULE_SOCKET,
				       .fd = f->udp[rnd() % NUDP],
				       .cookie = rnd() % 16 };
		err = setsockopt(s->fd, SOL_VMAK, VMAK_RULE_ADD, &r, sizeof(r));
	} else if (s->map[2] && s->have_off) {	/* refill */
		uint8_t *m = s->map[2];
		uint32_t *prod = (uint32_t *)(m + s->off.fr.producer);
		uint32_t *cons = (uint32_t *)(m + s->off.fr.consumer);
		uint32_t p = *prod, free = 64 - (p - __atomic_load_n(cons, __ATOMIC_ACQUIRE));

		if (free > 64)
			return -1;	/* indexes scrambled by ring-write */
		for (uint32_t i = 0; i < free; i++) {
			uint64_t a = ((p + i) % 256) * 2048ull;

			memcpy(m + s->off.fr.desc + ((p + i) % 64) * 8, &a, 8);
		}
		__atomic_store_n(prod, p + free, __ATOMIC_RELEASE);
		if (s->map[0]) {	/* and take what arrived */
			uint32_t *rp = (uint32_t *)((uint8_t *)s->map[0] + s->off.rx.producer);
			uint32_t *rc = (uint32_t *)((uint8_t *)s->map[0] + s->off.rx.consumer);
			uint32_t got = __atomic_load_n(rp, __ATOMIC_ACQUIRE) - *rc;

			if (got <= 64)
				f->taken += got;
			__atomic_store_n(rc, *rp, __ATOMIC_RELEASE);
		}
		return 0;
	}
	if (!err)
		s->stage++;
	else if (rnd() % 4 == 0)	/* stuck (e.g. ring-write broke it) */
		sock_close(f, s);
	return err;
}

/*
 * A last walk of valid steps on one socket until it reads a descriptor:
 * the fuzz reads one only when its walk lines up with the traffic (a
 * rule for a port the senders use, the rings mapped, the FILL ring
 * filled), which timing decides. A rule for a silent port gets a new
 * socket after a second.
 */
static uint64_t final_walk(struct fz *f)
{
	struct fz_sock *s = &f->s[0];
	uint64_t before = f->taken;
	double end = mono() + 20, retry = mono() + 1;

	while (f->taken == before && mono() < end) {
		if (do_step(f, s) < 0 || mono() > retry) {
			sock_close(f, s);
			retry = mono() + 1;
		}
		usleep(200);
	}
	return f->taken - before;
}

static int do_netlink(struct fz *f)
{
	uint32_t ids[NSOCK];
	int nids = 0;
	ssize_t n;

	for (int i = 0; i < NSOCK; i++)
		if (f->s[i].fd >= 0 && (ids[nids] = ring_id(f->s[i].fd)))
			nids++;
	n = (ssize_t)fuzz_genl_msg(f->nlbuf, f->nl.family_id, rnd(), ids, nids);
	if (mnl_socket_sendto(f->nl.sock, f->nlbuf, (size_t)n) != n)
		return -1;
	while (recv(mnl_socket_get_fd(f->nl.sock), f->nlbuf, sizeof(f->nlbuf),
		    MSG_DONTWAIT) > 0 || errno == ENOBUFS)
		;
	return 0;
}

/*
 * What a rule's socket may do under it: connect, disconnect, move to a new
 * port, bind to a device, claim foreign addresses, join and leave groups
 * (the rules must follow it, and no steering survive what it gave up).
 */
static int do_udp(struct fz *f)
{
	static const char *const devs[] = { "lo", "vmfzdummy", "vmfztun", "" };
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	int i = (int)(rnd() % NUDP), fd = f->udp[i], one = 1;
	struct sockaddr_storage ss;
	struct ip_mreqn mr = {};
	socklen_t len;

	switch (rnd() % 10) {
	case 0:
		sockaddr_of(rnd() % 2 ? ADDR_A : "10.77.0.9", (uint16_t)(rnd() % 4 + 9),
			    &ss, &len);
		return connect(fd, (struct sockaddr *)&ss, len);
	case 1:
		return connect(fd, &unspec, sizeof(unspec));
	case 2:		/* a new socket: wildcard, autobound or the usual */
		close(fd);
		f->udp[i] = rnd() % 2 ?
			udp_bound(AF_INET, rnd() % 2 ? "0.0.0.0" : ADDR_B,
				  (uint16_t)(PORT + i)) :
			socket(AF_INET, SOCK_DGRAM, 0);
		if (f->udp[i] < 0)
			return -1;
		sockaddr_of(ADDR_A, 9, &ss, &len);
		return (int)sendto(f->udp[i], "x", 1, MSG_DONTWAIT,
				   (struct sockaddr *)&ss, len);
	case 3: {
		const char *d = devs[rnd() % 4];

		return setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, d, strlen(d) + 1);
	}
	case 4:
		return setsockopt(fd, IPPROTO_IP, rnd() % 2 ? IP_FREEBIND :
				  IP_TRANSPARENT, &one, sizeof(one));
	case 5:
		inet_pton(AF_INET, rnd() % 2 ? "239.1.1.1" : "239.1.1.2",
			  &mr.imr_multiaddr);
		mr.imr_ifindex = (int)RND_PICK(f->ifindex, f->other_if[1], 0);
		return setsockopt(fd, IPPROTO_IP, rnd() % 2 ? IP_ADD_MEMBERSHIP :
				  IP_DROP_MEMBERSHIP, &mr, sizeof(mr));
	case 6:
		return setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	default:	/* back to a socket the senders reach */
		close(fd);
		f->udp[i] = udp_bound(AF_INET, ADDR_B, (uint16_t)(PORT + i));
		return f->udp[i] < 0 ? -1 : 0;
	}
}

static int fz_op(struct fz *f, int op)
{
	struct fz_sock *s = any_sock(f);
	char buf[2048];

	switch (op) {
	case OP_SOCKET:
		return sock_open(f, s);
	case OP_CLOSE:
		if (s->fd < 0)
			return -1;
		sock_close(f, s);
		return 0;
	case OP_SETSOCKOPT:
		return do_setsockopt(f, s, rnd_opt());
	case OP_GETSOCKOPT:
		return do_getsockopt(f, s);
	case OP_BIND:
		return do_bind(f, s);
	case OP_MMAP:
		return do_mmap(f, s);
	case OP_MUNMAP: {
		int k = (int)(rnd() % NRING);

		if (!s->map[k])
			return -1;
		munmap(s->map[k], s->maplen[k]);
		s->map[k] = NULL;
		return 0;
	}
	case OP_RING_WRITE:
		return do_ring_write(s);
	case OP_KICK:
		return (int)sendto(s->fd, rnd() % 8 ? NULL : buf,
				   rnd() % 8 ? 0 : rnd() % sizeof(buf),
				   MSG_DONTWAIT | (rnd() % 4 ? 0 : (int)(rnd() & ~MSG_WAITALL)),
				   NULL, 0);
	case OP_POLL: {
		struct pollfd p = { .fd = s->fd, .events = (short)(rnd() % 2 ? POLLIN | POLLOUT : rnd()) };

		return poll(&p, 1, 0);
	}
	case OP_RECV:
		return (int)recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);
	case OP_NETLINK:
		return do_netlink(f);
	case OP_UDP:
		return do_udp(f);
	default:
		return do_step(f, s);
	}
}

static int pick_op(void)
{
	/* Weighted: setup steps and ring traffic dominate. */
	static const uint8_t w[OP_COUNT] = {
		[OP_SOCKET] = 1, [OP_CLOSE] = 1, [OP_SETSOCKOPT] = 12,
		[OP_GETSOCKOPT] = 8, [OP_BIND] = 4, [OP_MMAP] = 5,
		[OP_MUNMAP] = 2, [OP_RING_WRITE] = 10, [OP_KICK] = 8,
		[OP_POLL] = 4, [OP_RECV] = 2, [OP_NETLINK] = 8, [OP_UDP] = 1,
		[OP_STEP] = 35,
	};
	uint32_t r = rnd() % 100, acc = 0;

	for (int op = 0; op < OP_COUNT; op++) {
		acc += w[op];
		if (r < acc)
			return op;
	}
	return OP_STEP;
}

TEST_TIMEOUT(fuzz_socket_abi_and_netlink, 3600)
{
	uint64_t ops = 1000000, seed = 1, pinned0, fuzz_taken;
	const char *e;
	struct vnet net;
	struct fz *f;
	pid_t tx[2];
	int rings = 0;

	f = calloc(1, sizeof(*f));
	ASSERT_TRUE(f != NULL);
	FAMILY_OR_SKIP(f->fam);
	if ((e = getenv("VMAK_FUZZ_OPS")))
		ops = strtoull(e, NULL, 0);
	if ((e = getenv("VMAK_FUZZ_SEED")))
		seed = strtoull(e, NULL, 0);
	rnd_seed(seed);
	pinned0 = module_pinned();
	ASSERT_EQ(0, vnet_setup(&net, 1));
	f->ifindex = net.ifindex_b;
	ASSERT_EQ(0, kmod_load("tun"));
	ASSERT_EQ(0, sh("ip tuntap add dev vmfztun mode tun && ip link set vmfztun up && "
			"ip link add vmfzdummy type dummy && ip link set vmfzdummy up"));
	f->other_if[0] = (int)if_nametoindex("vmfztun");
	f->other_if[1] = (int)if_nametoindex("vmfzdummy");
	for (int i = 0; i < NUDP; i++) {
		f->udp[i] = udp_bound(AF_INET, ADDR_B, (uint16_t)(PORT + i));
		ASSERT_GE(f->udp[i], 0);
	}
	for (int i = 0; i < NSOCK; i++)
		f->s[i].fd = -1;
	f->umem = mmap(NULL, UMEM_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(f->umem != MAP_FAILED);
	ASSERT_EQ(0, tnl_open(&f->nl));
	for (int i = 0; i < 2; i++) {
		struct send_spec sp = { .ns = net.ns_a, .dst = ADDR_B,
					.dport = (uint16_t)(PORT + i),
					.count = 1u << 30, .size = 64,
					.pause_us = 200 };

		tx[i] = sender_start(&sp);
		ASSERT_GT(tx[i], 0);
	}

	TH_LOG("seed %" PRIu64 ", %" PRIu64 " operations", seed, ops);
	for (uint64_t i = 0; i < ops; i++) {
		int op = pick_op();

		f->calls[op]++;
		if (fz_op(f, op) >= 0)
			f->ok[op]++;
		if (i % 256 == 0)
			sock_sample(&f->s[(i / 256) % NSOCK]);
	}
	fuzz_taken = f->taken;
	TH_LOG("%" PRIu64 " RX descriptors read by the fuzz, %" PRIu64
	       " by a last walk of valid steps", fuzz_taken, final_walk(f));
	for (int i = 0; i < 2; i++) {
		kill(tx[i], SIGKILL);
		sender_wait(tx[i]);
	}
	for (int i = 0; i < NSOCK; i++) {
		if (f->s[i].fd >= 0)
			sock_close(f, &f->s[i]);
		unmap_all(&f->s[i]);	/* a map holds its socket open */
	}
	for (int op = 0; op < OP_COUNT; op++)
		TH_LOG("%-10s %8" PRIu64 " calls, %8" PRIu64 " succeeded",
		       op_name[op], f->calls[op], f->ok[op]);
	TH_LOG("%" PRIu64 " binds, %" PRIu64 " ring maps, %" PRIu64
	       " RX descriptors read; counters: rx_packets %" PRIu64
	       ", rx_invalid_fill %" PRIu64 ", tx_packets %" PRIu64
	       ", tx_invalid %" PRIu64 ", tx_dummy %" PRIu64,
	       f->binds, f->maps, f->taken, (uint64_t)f->total.rx_packets,
	       (uint64_t)f->total.rx_invalid_fill, (uint64_t)f->total.tx_packets,
	       (uint64_t)f->total.tx_invalid, (uint64_t)f->total.tx_dummy);

	/* Deep enough: rings were bound, mapped, received and sent. */
	EXPECT_GT(f->binds, ops / 1000);
	EXPECT_GT(f->maps, ops / 1000);
	EXPECT_GT(f->taken, 0);
	EXPECT_GT(f->total.rx_packets, 0);
	EXPECT_GT(f->total.tx_invalid, 0);
	EXPECT_GT(f->total.tx_packets + f->total.tx_dummy, 0);

	for (int i = 0; i < NUDP; i++)
		close(f->udp[i]);
	tnl_close(&f->nl);
	munmap(f->umem, UMEM_LEN);
	/* Everything let go (UMEM release runs in a work item). */
	for (int t = 0; t < 100 && module_pinned() != pinned0; t++)
		usleep(20000);
	EXPECT_EQ(pinned0, module_pinned());
	EXPECT_EQ(0, vmak_ctl_ring_list(NULL, count_rings, &rings));
	EXPECT_EQ(0, rings);
	vnet_teardown(&net);
	free(f);
}

TEST_HARNESS_MAIN
