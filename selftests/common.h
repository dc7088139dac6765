/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the C selftests. */
#ifndef _VMAK_SELFTEST_COMMON_H
#define _VMAK_SELFTEST_COMMON_H

#include <signal.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "linux/vmak.h"
#include "vmak/vmak.h"

/*
 * The family of the loaded module. Outside the VM a missing module is a
 * SKIP; inside it (VMAK_RESULTS is set) the module must be there.
 */
#define FAMILY_OR_SKIP(fam) do { \
	(fam) = vmak_family(); \
	if ((fam) < 0 && !getenv("VMAK_RESULTS")) \
		SKIP(return, "vmak not loaded: %s", vmak_strerror(fam)); \
	ASSERT_GT((fam), 0); \
} while (0)

/*
 * Become user 'uid' with no effective capabilities. The saved uid stays 0
 * so regain_privileges() can undo it for cleanup; the module only ever
 * looks at effective capabilities and the real user.
 */
static inline int drop_privileges_to(uid_t uid)
{
	if (setresgid(uid, uid, 0) || setresuid(uid, uid, 0))
		return -1;
	return 0;
}

static inline void regain_privileges(void)
{
	if (setresuid(0, 0, 0) || setresgid(0, 0, 0))
		perror("regain_privileges");
}

static inline int drop_privileges(void)
{
	return drop_privileges_to(65534);
}

/*
 * fork() for a child that loops until killed: it dies with the test's
 * process too, so a failed ASSERT in the test (which ends the test process
 * without reaching its kill()) leaves no child behind holding the output.
 */
static inline pid_t fork_child(void)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent))
		_exit(1);
	return pid;
}

/* One ring's status over netlink into *st, freeing what *st held. */
static inline int ring_get(uint32_t id, struct vmak_ring_status **st)
{
	vmak_ctl_status_free(*st);
	*st = NULL;
	return vmak_ctl_ring_get(id, st);
}

/* The next ring notification into *st, freeing what *st held. */
static inline int monitor_next(struct vmak_monitor *mon, int timeout_ms,
			       int *cmd, struct vmak_ring_status **st)
{
	vmak_ctl_status_free(*st);
	*st = NULL;
	return vmak_ctl_monitor_next(mon, timeout_ms, cmd, st);
}

/* ---- two network namespaces joined by veth ------------------------------ */

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "vmak/ring.h"

#define ADDR_A	"10.77.0.1"
#define ADDR_B	"10.77.0.2"
#define ADDR6_A	"fd00:77::1"
#define ADDR6_B	"fd00:77::2"

/*
 *   netns a                         netns b
 *   +------------------+            +------------------+
 *   | va<pid>          |   veth     | vb<pid>          |
 *   | 10.77.0.1/24     |<---------->| 10.77.0.2/24     |  rings bind here
 *   | fd00:77::1/64    |            | fd00:77::2/64    |
 *   +------------------+            +------------------+
 */
struct vnet {
	char ns_a[32], ns_b[32];
	char dev_a[IFNAMSIZ], dev_b[IFNAMSIZ];
	int ifindex_b;
	bool virtio;		/* the virtio-net pair, not veth */
	char pci_b[128];	/* viob's PCI device in sysfs */
	bool removed;		/* viob was unplugged: plug it back */
};

static inline int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st)
		fprintf(stderr, "#   command failed (%d): %s\n", st, cmd);
	return st;
}

/* Load a module of the booted kernel (in the VM: from its unpacked tree). */
static inline int kmod_load(const char *name)
{
	return sh("modprobe ${VMAK_KROOT:+-d \"$VMAK_KROOT\"} %s", name);
}

static inline int ns_enter(const char *ns)
{
	char path[64];
	int fd, err;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	err = setns(fd, CLONE_NEWNET);
	close(fd);
	return err;
}

/*
 * The VM's virtio-net pair (selftests/vm/run): vioa and viob, 4 queue
 * pairs each, their host backends joined by a bridge. Present when the
 * guest could set them up (it writes /run/vmak-vio); a netns deleted by
 * the previous test gives its device back a moment later.
 */
static inline bool vio_present(void)
{
	if (access("/run/vmak-vio", F_OK))
		return false;
	for (int i = 0; i < 100; i++) {
		if (!access("/sys/class/net/vioa", F_OK) &&
		    !access("/sys/class/net/viob", F_OK))
			return true;
		usleep(50000);
	}
	return false;
}

/* SKIP unless the virtio-net pair is here. */
#define VIO_OR_SKIP() do { \
	if (!vio_present()) \
		SKIP(return, "no virtio-net pair (selftests/vm/run gives one when run as root)"); \
} while (0)

/*
 * Create the pair with 'queues' RX/TX queues per side (veth), or take the
 * virtio-net pair (queues: theirs, 4); enter netns b.
 */
static inline int vnet_setup_dev(struct vnet *v, int queues, bool virtio)
{
	int pid = getpid();
	char *p;

	snprintf(v->ns_a, sizeof(v->ns_a), "vmt-a%d", pid);
	snprintf(v->ns_b, sizeof(v->ns_b), "vmt-b%d", pid);
	v->virtio = virtio;
	if (virtio) {
		snprintf(v->dev_a, sizeof(v->dev_a), "vioa");
		snprintf(v->dev_b, sizeof(v->dev_b), "viob");
		/* .../0000:00:0N.0/virtioM: the PCI device is the parent */
		p = realpath("/sys/class/net/viob/device", NULL);
		if (!p)
			return -1;
		snprintf(v->pci_b, sizeof(v->pci_b), "%s", p);
		free(p);
		p = strrchr(v->pci_b, '/');
		if (p)
			*p = 0;
	} else {
		snprintf(v->dev_a, sizeof(v->dev_a), "va%d", pid);
		snprintf(v->dev_b, sizeof(v->dev_b), "vb%d", pid);
	}
	if (sh("ip netns add %s && ip netns add %s", v->ns_a, v->ns_b) ||
	    (!virtio &&
	     sh("ip link add name %s numtxqueues %d numrxqueues %d type veth "
		"peer name %s numtxqueues %d numrxqueues %d",
		v->dev_a, queues, queues, v->dev_b, queues, queues)) ||
	    sh("ip link set %s netns %s && ip link set %s netns %s",
	       v->dev_a, v->ns_a, v->dev_b, v->ns_b) ||
	    sh("ip -n %s addr add " ADDR_A "/24 dev %s && "
	       "ip -n %s addr add " ADDR6_A "/64 dev %s nodad && "
	       "ip -n %s link set %s up && ip -n %s link set lo up",
	       v->ns_a, v->dev_a, v->ns_a, v->dev_a, v->ns_a, v->dev_a, v->ns_a) ||
	    sh("ip -n %s addr add " ADDR_B "/24 dev %s && "
	       "ip -n %s addr add " ADDR6_B "/64 dev %s nodad && "
	       "ip -n %s link set %s up && ip -n %s link set lo up",
	       v->ns_b, v->dev_b, v->ns_b, v->dev_b, v->ns_b, v->dev_b, v->ns_b) ||
	    sh("ip -n %s route add 224.0.0.0/4 dev %s", v->ns_a, v->dev_a) ||
	    sh("ip -n %s -6 route add ff00::/8 dev %s table local", v->ns_a, v->dev_a) ||
	    ns_enter(v->ns_b))
		return -1;
	v->ifindex_b = (int)if_nametoindex(v->dev_b);
	return v->ifindex_b > 0 ? 0 : -1;
}

static inline int vnet_setup(struct vnet *v, int queues)
{
	return vnet_setup_dev(v, queues, false);
}

/*
 * Take device b away (deleted; the virtio one unplugged from its PCI
 * slot, as a hot unplug does), in the background if asked.
 */
static inline int vnet_remove_b(struct vnet *v, bool background)
{
	if (!v->virtio)
		return sh("ip -n %s link del %s%s", v->ns_b, v->dev_b,
			  background ? " &" : "");
	v->removed = true;
	return sh("echo 1 > %s/remove%s", v->pci_b, background ? " &" : "");
}

static inline void vnet_teardown(struct vnet *v)
{
	regain_privileges();
	if (v->ns_a[0])
		sh("ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null",
		   v->ns_a, v->ns_b);
	/* an unplugged viob comes back, named and set up as at boot, in the
	 * first netns (this process is still in b)
	 */
	if (v->removed) {
		int fd = open("/proc/1/ns/net", O_RDONLY | O_CLOEXEC);

		if (fd < 0 || setns(fd, CLONE_NEWNET))
			perror("vnet_teardown: back to the first netns");
		if (fd >= 0)
			close(fd);
		sh("for i in $(seq 50); do [ -e %s ] || break; sleep 0.1; done;"
		   "echo 1 > /sys/bus/pci/rescan", v->pci_b);
		sh("\"$VMAK_REPO\"/selftests/vm/vio-names");
	}
}

/* The payload of datagram 'seq' of 'len' bytes: seq, then a pattern. */
static inline void payload_fill(uint8_t *buf, uint32_t seq, uint32_t len)
{
	uint32_t nseq = htonl(seq);

	for (uint32_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seq * 7 + i);
	memcpy(buf, &nseq, len < 4 ? len : 4);
}

static inline int payload_check(const uint8_t *buf, uint32_t len, uint32_t *seq)
{
	uint32_t nseq = 0;

	if (len < 4)
		return -1;
	memcpy(&nseq, buf, 4);
	*seq = ntohl(nseq);
	for (uint32_t i = 4; i < len; i++)
		if (buf[i] != (uint8_t)(*seq * 7 + i))
			return -1;
	return 0;
}

struct send_spec {
	const char *ns;
	const char *dst;	/* IPv4 or IPv6 literal */
	uint16_t dport;
	uint16_t sport;		/* 0: ephemeral */
	uint32_t count;
	uint32_t size;		/* 0: vary 4..1400 */
	uint32_t first_seq;
	uint16_t gso;		/* UDP_SEGMENT size, 0 for none */
	uint32_t pause_us;	/* between datagrams */
	const char *mcast_if;	/* for multicast destinations */
};

static inline uint32_t send_size(const struct send_spec *s, uint32_t i)
{
	return s->size ? s->size : 4 + (i * 37) % 1397;
}

static inline int sockaddr_of(const char *ip, uint16_t port,
			      struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	*len = 0;
	if (inet_pton(AF_INET, ip, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		*len = sizeof(*in);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		return AF_INET6;
	}
	return -1;
}

/* Send from netns s->ns in a child process; returns its pid. */
static inline pid_t sender_start(const struct send_spec *s)
{
	pid_t pid = fork();

	if (pid)
		return pid;

	struct sockaddr_storage dst, src;
	socklen_t dlen, slen;
	static uint8_t buf[65536];
	int fam, fd;

	if (ns_enter(s->ns))
		_exit(10);
	fam = sockaddr_of(s->dst, s->dport, &dst, &dlen);
	fd = socket(fam, SOCK_DGRAM, 0);
	if (fd < 0)
		_exit(11);
	if (s->sport) {
		sockaddr_of(fam == AF_INET ? "0.0.0.0" : "::", s->sport, &src, &slen);
		if (bind(fd, (struct sockaddr *)&src, slen))
			_exit(12);
	}
	if (s->mcast_if) {
		unsigned int idx = if_nametoindex(s->mcast_if);
		struct ip_mreqn mr = { .imr_ifindex = (int)idx };

		if (fam == AF_INET ?
		    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &mr, sizeof(mr)) :
		    setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &idx, sizeof(idx)))
			_exit(13);
	}
	if (connect(fd, (struct sockaddr *)&dst, dlen))
		_exit(14);
	if (s->gso) {
		int g = s->gso;

		if (setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &g, sizeof(g)))
			_exit(15);
	}
	for (uint32_t i = 0; i < s->count; i++) {
		uint32_t len = send_size(s, i), off = 0;

		if (s->gso) {
			/* One send of 'len' bytes made of gso-sized datagrams,
			 * each carrying its own sequence number. */
			for (uint32_t seg = 0; off < len; seg++) {
				uint32_t n = len - off < s->gso ? len - off : s->gso;

				payload_fill(buf + off, s->first_seq + i * 1000 + seg, n);
				off += n;
			}
		} else {
			payload_fill(buf, s->first_seq + i, len);
		}
		while (send(fd, buf, len, 0) < 0) {
			if (errno != ENOBUFS && errno != EAGAIN && errno != ECONNREFUSED)
				_exit(16);
			usleep(100);
		}
		if (s->pause_us)
			usleep(s->pause_us);
	}
	_exit(0);
}

static inline int sender_wait(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

static inline int udp_bound(int fam, const char *ip, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	sockaddr_of(ip, port, &ss, &len);
	if (bind(fd, (struct sockaddr *)&ss, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Wait for the RX ring to hold entries (poll), up to timeout_ms. */
static inline int rx_wait(struct vmak_ringset *rs, int timeout_ms)
{
	struct pollfd pfd = { .fd = rs->fd, .events = POLLIN };

	return poll(&pfd, 1, timeout_ms);
}

/* Give a chunk back: the FILL ring takes any address inside it. */
static inline void rx_recycle(struct vmak_ringset *rs, uint64_t addr)
{
	uint32_t idx;

	if (vmak_ring_reserve(rs->fill, 1, &idx)) {
		*vmak_ring_fill_addr(rs->fill, idx) = addr;
		vmak_ring_submit(rs->fill, 1);
	}
}

/* Read every RX descriptor waiting and give its chunk back. */
static inline void consume_all(struct vmak_ringset *rs)
{
	uint32_t idx, n = vmak_ring_peek(rs->rx, 256, &idx);

	for (uint32_t i = 0; i < n; i++)
		rx_recycle(rs, vmak_ring_rx_desc(rs->rx, idx + i)->addr);
	vmak_ring_release(rs->rx, n);
}

/* The number after "key<sep>" on a line of a /proc file, or 0. */
static inline uint64_t proc_value(const char *path, const char *key, char sep)
{
	char line[128];
	size_t n = strlen(key);
	uint64_t v = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == sep)
			v = strtoull(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

static inline uint64_t vmstat(const char *name)
{
	return proc_value("/proc/vmstat", name, ' ');
}

static inline uint64_t meminfo_kb(const char *key)
{
	return proc_value("/proc/meminfo", key, ':');
}

/* The netlink ring id of a vmak socket (VMAK_RING_INFO), 0 on error. */
static inline uint32_t ring_id(int fd)
{
	struct vmak_ring_info info;
	socklen_t len = sizeof(info);

	return getsockopt(fd, SOL_VMAK, VMAK_RING_INFO, &info, &len) ? 0 : info.id;
}

/* vmak_ctl_ring_list() callback: count into *(int *)arg. */
static inline int count_rings(const struct vmak_ring_status *st, void *arg)
{
	(void)st;
	(*(int *)arg)++;
	return 0;
}

/* Ring k of a ring set by mmap order: 0 RX, 1 TX, 2 FILL, 3 COMPLETION. */
static const uint64_t ring_pgoff[4] = {
	VMAK_PGOFF_RX_RING, VMAK_PGOFF_TX_RING, VMAK_PGOFF_FILL_RING,
	VMAK_PGOFF_COMPLETION_RING,
};

static inline const struct vmak_ring_offset *
ring_offset(const struct vmak_mmap_offsets *off, int k)
{
	return k == 0 ? &off->rx : k == 1 ? &off->tx : k == 2 ? &off->fr : &off->cr;
}

static inline size_t ring_desc_size(int k)
{
	return k == 0 ? sizeof(struct vmak_rx_desc) :
	       k == 1 ? sizeof(struct vmak_tx_desc) : sizeof(uint64_t);
}

/* Write val to a sysfs/debugfs file; 0 or -1. */
static inline int write_knob(const char *path, const char *val)
{
	FILE *f = fopen(path, "we");
	int err;

	if (!f)
		return -1;
	err = fputs(val, f) < 0;
	return fclose(f) || err ? -1 : 0;
}

/* Pages the module holds pinned (netlink info), ~0 on error. */
static inline uint64_t module_pinned(void)
{
	struct vmak_info info = { .sz = sizeof(info) };

	return vmak_info_get(&info) ? ~0ULL : info.pinned_pages;
}

/* Devices of this netns carrying the module's hook (netlink info), ~0u on
 * error. */
static inline uint32_t hooked_devices(void)
{
	struct vmak_info info = { .sz = sizeof(info) };

	return vmak_info_get(&info) ? ~0u : info.hooked_devices;
}

/* ---- waking: a thread blocked in poll() on a ring --------------------- */

#include <pthread.h>

static inline double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A thread blocked in poll() on the ring; records when it woke. */
struct poller {
	pthread_t t;
	int fd;
	volatile double woke;	/* 0 while blocked */
	int ret;
};

/* Whole microseconds from a to b (the harness compares integers). */
static inline long long elapsed_us(double b, double a)
{
	return (long long)((b - a) * 1e6);
}

static inline void *poll_thread(void *arg)
{
	struct poller *p = arg;
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };

	p->ret = poll(&pfd, 1, 10000);
	p->woke = mono();
	return NULL;
}

static inline void poller_start(struct poller *p, int fd)
{
	p->fd = fd;
	p->woke = 0;
	pthread_create(&p->t, NULL, poll_thread, p);
	usleep(100000);		/* let it block */
}

static inline void send_one(int tx)
{
	char b[32] = "moderation";

	if (send(tx, b, sizeof(b), 0) != sizeof(b))
		perror("send");
}

/*
 * A poller on fd, blocked, then one packet sent from tx: the poll's
 * return in *ret, and the microseconds from the send to its wake.
 */
static inline long long poll_one_sent(int fd, int tx, int *ret)
{
	struct poller p;
	double sent;

	poller_start(&p, fd);
	sent = mono();
	send_one(tx);
	pthread_join(p.t, NULL);
	*ret = p.ret;
	return elapsed_us(p.woke, sent);
}

static inline uint32_t rx_pending(struct vmak_ringset *rs)
{
	return __atomic_load_n(rs->rx->producer, __ATOMIC_ACQUIRE) -
	       *rs->rx->consumer;
}

/*
 * The moderation and netlink tests' setup: two netns over veth; in b, a
 * UDP socket bound to ADDR_B:port steered (cookie) into a 256-entry ring
 * set; in a, a UDP socket connected to it. 0, or -1 with errno.
 */
static inline int steered_ring_setup(struct vnet *net, struct vmak_ringset *rs,
				     int *udp, int *tx, uint16_t port,
				     uint32_t cookie)
{
	struct vmak_ringset_config cfg;
	struct sockaddr_storage dst;
	socklen_t len;
	int err;

	rs->fd = -1;
	*udp = *tx = -1;
	if (vnet_setup(net, 1) || ns_enter(net->ns_a))
		return -1;
	*tx = socket(AF_INET, SOCK_DGRAM, 0);
	sockaddr_of(ADDR_B, port, &dst, &len);
	if (*tx < 0 || connect(*tx, (struct sockaddr *)&dst, len) ||
	    ns_enter(net->ns_b))
		return -1;
	*udp = udp_bound(AF_INET, ADDR_B, port);
	if (*udp < 0)
		return -1;
	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)net->ifindex_b;
	cfg.rx_size = cfg.fill_size = 256;
	cfg.umem_len = 512 * 2048;
	err = vmak_ringset_open(rs, &cfg);
	if (err) {
		errno = -err;
		return -1;
	}
	vmak_ringset_fill(rs, 0, 256);
	err = vmak_rule_add_socket(rs->fd, *udp, cookie);
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

static inline void steered_ring_teardown(struct vnet *net, struct vmak_ringset *rs,
					 int udp, int tx)
{
	vmak_ringset_close(rs);
	close(udp);
	close(tx);
	vnet_teardown(net);
}

#endif /* _VMAK_SELFTEST_COMMON_H */
