// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Offloaded UDP sockets: when a socket is offloaded, onto which rings, and
 * back to the kernel when it cannot be.
 *
 * A socket is offloaded once it has a local port: after bind(), connect()
 * (which binds implicitly), a group join, or before its first receive
 * (sendto() binds implicitly too). Each change of what the socket owns
 * (connect, disconnect, SO_BINDTODEVICE) replaces its rules, because the
 * kernel kills a rule whose socket no longer owns the key it was made
 * from. Which devices: the one holding the bound address, the bound
 * device, or every device of the netns the module can hook.
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <sched.h>
#include <stdio.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys.h"
#include "vma.h"

int vmak_active VMAK_HIDDEN;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static uint32_t next_cookie = 1;

static void atfork_child(void)
{
	/*
	 * The child's copies of offloaded sockets are kernel sockets: the
	 * rings (and what they already hold) stay the parent's, and the
	 * rules keep steering into them while the parent lives. Sockets the
	 * child opens are offloaded on rings of its own.
	 */
	vring_forget_all();
	vfd_forget_all();
	vstats_forget();
	__atomic_store_n(&vmak_active, 0, __ATOMIC_RELAXED);
}

static void read_config_file(void)
{
	char prog[256] = "", *text = NULL, *base;
	const char *app = getenv("VMA_APPLICATION_ID");
	FILE *f;
	long n;

	f = fopen(vconf.config_file, "re");
	if (!f) {
		if (getenv("VMA_CONFIG_FILE") || getenv("VMAK_CONFIG_FILE"))
			vlog(VLOG_WARNING, "VMA_CONFIG_FILE=\"%s\": cannot read it: %m; offloading every UDP socket",
			     vconf.config_file);
		return;
	}
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && n < 1 << 20 &&
	    !fseek(f, 0, SEEK_SET) && (text = calloc(1, (size_t)n + 1)) &&
	    fread(text, 1, (size_t)n, f) == (size_t)n) {
		n = readlink("/proc/self/exe", prog, sizeof(prog) - 1);
		prog[n > 0 ? n : 0] = 0;
		base = strrchr(prog, '/');
		vrules_parse(&vrules, text, vconf.config_file,
			     base ? base + 1 : prog, app);
	}
	free(text);
	fclose(f);
}

static void init(void)
{
	vconf_load();
	read_config_file();
	pthread_atfork(NULL, NULL, atfork_child);
}

void vmak_init(void)
{
	pthread_once(&init_once, init);
}

/*
 * vsocks freed, kept for reuse: their memory stays a vsock for good, which
 * lets vfd_sock() take a reference without a lock (fdtab.c).
 */
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vsock *spare;

static struct vsock *vsock_alloc(void)
{
	struct vsock *vs;

	pthread_mutex_lock(&spare_lock);
	vs = spare;
	if (vs)
		spare = vs->spare_next;
	pthread_mutex_unlock(&spare_lock);
	if (!vs)
		return calloc(1, sizeof(*vs));
	/* refs is 0 and stays so until the owner sets it: a vfd_sock()
	 * racing with us never counts from 0
	 */
	memset(vs, 0, offsetof(struct vsock, refs));
	memset(&vs->refs + 1, 0, sizeof(*vs) - offsetof(struct vsock, refs) -
	       sizeof(vs->refs));
	return vs;
}

static void vsock_free(struct vsock *vs)
{
	pthread_mutex_lock(&spare_lock);
	vs->spare_next = spare;
	spare = vs;
	pthread_mutex_unlock(&spare_lock);
}

struct vsock *vsock_new(int fd, int family)
{
	struct vsock *vs;

	vmak_init();
	if (!vconf.offload)
		return NULL;
	vs = vsock_alloc();
	if (!vs)
		return NULL;
	pthread_rwlock_init(&vs->lock, NULL);
	pthread_mutex_init(&vs->txlock, NULL);
	vs->helper = -1;
	vs->logic = -1;
	vs->fd = fd;
	vs->family = family;
	vs->nfds = 1;
	vs->slot = vstats_slot_get(fd, family);
	vs->st = vs->slot ? &vs->slot->c : &vs->own_st;
	vs->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (vs->efd < 0) {
		vstats_slot_put(vs->slot);
		vsock_free(vs);
		return NULL;
	}
	vs->efd = vfd_hide(vs->efd);
	vfd_set_internal(vs->efd, true);
	__atomic_store_n(&vs->refs, 1, __ATOMIC_RELEASE);	/* the slot's */
	vfd_set_sock(fd, vs);
	return vs;
}

static void att_free(struct vatt *a)
{
	struct vring *r = a->ring;

	pthread_mutex_lock(&r->lock);
	vring_att_del_locked(r, a);
	pthread_mutex_unlock(&r->lock);
	if (!a->retired)
		vmak_rule_del(r->rs.fd, a->cookie);
	vring_put(r);
	free(a);
}

/*
 * Stop a's rule, keeping what it steered: a re-offload (connect after
 * bind, a new ring logic) or the way back to the kernel socket must not
 * lose datagrams already queued, as the kernel's connect() keeps its
 * receive queue. The ring is drained after the rule is gone, so what the
 * rule put on it lands in a's queue too. True when nothing is left and a
 * can go.
 */
static bool att_retire(struct vatt *a)
{
	struct vring *r = a->ring;
	bool empty;

	if (!a->retired) {
		vmak_rule_del(r->rs.fd, a->cookie);
		a->retired = true;
		a->group = false;
	}
	pthread_mutex_lock(&r->lock);
	vring_drain_locked(r);
	empty = !a->qlen;
	pthread_mutex_unlock(&r->lock);
	return empty;
}

void vsock_watch_sync_locked(struct vsock *vs)
{
	int i;

	/* cached send headers may name a ring we left; epoll sets watch the
	 * rings of vs->gen
	 */
	__atomic_add_fetch(&vs->gen, 1, __ATOMIC_RELEASE);
	for (i = 0; i < vs->nvatt; i++)
		__atomic_store_n(&vs->watch[i], vs->att[i]->ring, __ATOMIC_RELEASE);
	__atomic_store_n(&vs->nwatch, vs->nvatt, __ATOMIC_RELEASE);
}

/*
 * Call with vs->lock held for writing. keep: attachments with queued
 * datagrams stay, retired, until a later detach finds them empty.
 */
static void detach_locked(struct vsock *vs, bool groups_too, bool keep)
{
	int i, j = 0;

	for (i = 0; i < vs->nvatt; i++) {
		if (vs->att[i]->group && !groups_too)
			vs->att[j++] = vs->att[i];
		else if (keep && !att_retire(vs->att[i]))
			vs->att[j++] = vs->att[i];
		else
			att_free(vs->att[i]);
	}
	vs->nvatt = j;
	vsock_watch_sync_locked(vs);
}

void vsock_detach_all(struct vsock *vs)
{
	pthread_rwlock_wrlock(&vs->lock);
	detach_locked(vs, true, false);
	pthread_rwlock_unlock(&vs->lock);
}

void vsock_to_os(struct vsock *vs, const char *why)
{
	pthread_rwlock_wrlock(&vs->lock);
	if (!vs->os_only) {
		vs->os_only = true;
		if (vs->nvatt)
			vlog(VLOG_INFO, "fd %d: back to the kernel socket: %s",
			     vs->fd, why);
		detach_locked(vs, true, true);
	}
	vstats_addresses(vs);
	pthread_rwlock_unlock(&vs->lock);
}

/* ---- devices ---- */

/* Non-loopback, up, Ethernet-type devices: what the module can hook. */
static int devices(int *idx, int max)
{
	struct if_nameindex *ni, *p;
	struct ifreq ifr;
	int s, n = 0;

	ni = if_nameindex();
	if (!ni)
		return 0;
	s = vmak_sys_socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (p = ni; s >= 0 && p->if_index && n < max; p++) {
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->if_name);
		if (vmak_sys_ioctl(s, SIOCGIFFLAGS, (long)&ifr) ||
		    (ifr.ifr_flags & IFF_LOOPBACK) || !(ifr.ifr_flags & IFF_UP))
			continue;
		if (vmak_sys_ioctl(s, SIOCGIFHWADDR, (long)&ifr) ||
		    ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER)
			continue;
		idx[n++] = (int)p->if_index;
	}
	if (s >= 0)
		vmak_sys_close(s);
	if_freenameindex(ni);
	return n;
}

static const uint8_t *sa_addr(const struct sockaddr *sa, int *alen)
{
	if (sa->sa_family == AF_INET) {
		*alen = 4;
		return (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
	}
	*alen = 16;
	return (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
}

static bool sa_any(const struct sockaddr *sa)
{
	static const uint8_t zero[16];
	const uint8_t *a;
	int len;

	a = sa_addr(sa, &len);
	return !memcmp(a, zero, (size_t)len);
}

static bool sa_multicast(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *in6 = (const void *)sa;

	if (sa->sa_family == AF_INET)
		return IN_MULTICAST(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	return IN6_IS_ADDR_MULTICAST(&in6->sin6_addr) ||
	       (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
		IN_MULTICAST(ntohl(((const uint32_t *)&in6->sin6_addr)[3])));
}

/* The device holding a local unicast address, 0 if none. */
static int device_of(const struct sockaddr *sa)
{
	struct ifaddrs *ifa, *p;
	const uint8_t *want, *have;
	int wlen, hlen, idx = 0;
	struct sockaddr_in v4;

	if (sa->sa_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)sa)->sin6_addr)) {
		memset(&v4, 0, sizeof(v4));
		v4.sin_family = AF_INET;
		memcpy(&v4.sin_addr,
		       &((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr[12], 4);
		sa = (const struct sockaddr *)&v4;
	}
	if (getifaddrs(&ifa))
		return 0;
	want = sa_addr(sa, &wlen);
	for (p = ifa; p; p = p->ifa_next) {
		if (!p->ifa_addr || p->ifa_addr->sa_family != sa->sa_family)
			continue;
		have = sa_addr(p->ifa_addr, &hlen);
		if (hlen == wlen && !memcmp(want, have, (size_t)wlen)) {
			idx = (int)if_nametoindex(p->ifa_name);
			break;
		}
	}
	freeifaddrs(ifa);
	return idx;
}

/*
 * The ring a socket's attachment goes to, beside its device: the ring
 * logic in the top byte (sockets of different logics never share), and
 * below it what that logic tells rings apart by: nothing (per interface),
 * the bound address (per IP), the fd, the user id, the thread or the CPU.
 */
static uint64_t ring_key(struct vsock *vs)
{
	int logic = vs->logic >= 0 ? vs->logic : vconf.ring_logic_rx;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	uint64_t v = 0;
	int alen, i;
	const uint8_t *a;

	switch (logic) {
	case VRING_PER_IP:
		if (getsockname(vs->fd, (struct sockaddr *)&ss, &len))
			break;
		a = sa_addr((struct sockaddr *)&ss, &alen);
		v = 14695981039346656037ULL;	/* FNV-1a of the address */
		for (i = 0; i < alen; i++)
			v = (v ^ a[i]) * 1099511628211ULL;
		break;
	case VRING_PER_SOCKET:
		v = (uint64_t)vs->fd;
		break;
	case VRING_PER_USER_ID:
		v = vs->user_id;
		break;
	case VRING_PER_THREAD:
		v = (uint64_t)syscall(SYS_gettid);
		break;
	case VRING_PER_CORE:
	case VRING_PER_CORE_ATTACH:
		v = (uint64_t)sched_getcpu();
		break;
	default:
		break;
	}
	return (uint64_t)logic << 56 | (v & ((1ULL << 56) - 1));
}

static void offload_locked(struct vsock *vs, bool groups_too);

int vsock_ring_logic(struct vsock *vs, const void *val, socklen_t len)
{
	struct vring_alloc_attr at;

	if (!val || len != sizeof(at))
		return errno = EINVAL, -1;
	memcpy(&at, val, sizeof(at));
	if (!(at.comp_mask & (VRING_MASK_PROFILE_KEY | VRING_MASK_USER_ID |
			      VRING_MASK_INGRESS | VRING_MASK_EGRESS)) ||
	    !vring_logic_valid(at.logic))
		return errno = EINVAL, -1;
	pthread_rwlock_wrlock(&vs->lock);
	if (((at.comp_mask & VRING_MASK_INGRESS) && at.ingress) ||
	    ((at.comp_mask & VRING_MASK_EGRESS) && at.egress)) {
		/* one ring carries both directions of a socket */
		vs->logic = at.logic;
		if (at.comp_mask & VRING_MASK_USER_ID)
			vs->user_id = at.user_id;
		/*
		 * A socket with rules moves to the rings of its new logic,
		 * as libvma moves it; what the old rings queued for it is
		 * still read.
		 */
		if (vs->nvatt)
			offload_locked(vs, true);
	}
	pthread_rwlock_unlock(&vs->lock);
	return 0;
}

static const char *rule_error(int err)
{
	switch (err) {
	case EPERM:
		return "the module refuses a rule for it (SO_REUSEADDR/SO_REUSEPORT, IP_FREEBIND or IP_TRANSPARENT, or bound to another device)";
	case EADDRNOTAVAIL:
		return "its address is not one of this host's";
	case ENOTSUP:
		return "the device cannot be hooked";
	case ENOBUFS:
		return vring_why[0] ? vring_why : strerror(err);
	default:
		return strerror(err);
	}
}

/* One attachment of vs on the ring of ifindex; 0 or -errno. */
static int attach(struct vsock *vs, int ifindex, const struct sockaddr *group)
{
	struct vring *r;
	struct vatt *a;
	int err;

	if (vs->nvatt == VSOCK_MAX_ATT)
		return -ENOSPC;
	r = vring_get(ifindex, ring_key(vs));
	if (!r)
		return -errno;
	a = calloc(1, sizeof(*a));
	if (!a) {
		vring_put(r);
		return -ENOMEM;
	}
	a->ring = r;
	a->vs = vs;
	a->cookie = __atomic_fetch_add(&next_cookie, 1, __ATOMIC_RELAXED);
	err = vring_att_add(r, a);
	if (!err)
		err = group ? vmak_rule_add_group(r->rs.fd, vs->fd, group, a->cookie) :
			      vmak_rule_add_socket(r->rs.fd, vs->fd, a->cookie);
	if (err) {
		pthread_mutex_lock(&r->lock);
		vring_att_del_locked(r, a);
		pthread_mutex_unlock(&r->lock);
		vring_put(r);
		free(a);
		return err;
	}
	if (group) {
		int alen;
		const uint8_t *ga = sa_addr(group, &alen);

		a->group = true;
		memcpy(a->group_addr, ga, (size_t)alen);
	}
	vs->att[vs->nvatt++] = a;
	vsock_watch_sync_locked(vs);
	/* a receive or an epoll set asleep since before has no eye on this
	 * ring: wake it to look again
	 */
	vsock_signal_locked(vs);
	return 0;
}

/* Devices a socket's rules go to: bound device, address's, or all. */
static int targets(struct vsock *vs, const struct sockaddr *local, int *idx,
		   int max)
{
	char name[IFNAMSIZ + 1] = "";
	socklen_t len = sizeof(name) - 1;
	int i;

	if (!vmak_sys_getsockopt(vs->fd, SOL_SOCKET, SO_BINDTODEVICE, name,
				 &len) && name[0]) {
		i = (int)if_nametoindex(name);
		if (!i)
			return 0;
		idx[0] = i;
		return 1;
	}
	if (local && !sa_any(local) && !sa_multicast(local)) {
		int all[VSOCK_MAX_ATT], n, j;

		i = device_of(local);
		n = devices(all, VSOCK_MAX_ATT);
		for (j = 0; j < n; j++)
			if (all[j] == i) {
				idx[0] = i;
				return 1;
			}
		return 0;	/* loopback, or a device we cannot hook */
	}
	return devices(idx, max);
}

/* Attach to each device; false (errno: the last refusal) if none took. */
static bool attach_all(struct vsock *vs, const int *idx, int n,
		       const struct sockaddr *group)
{
	int i, err, last = 0, ok = 0;

	for (i = 0; i < n; i++) {
		err = attach(vs, idx[i], group);
		if (!err)
			ok++;
		else
			last = -err;
	}
	errno = last;
	return ok || !last;
}

static bool reuses_addr(struct vsock *vs)
{
	socklen_t len = sizeof(int);
	int on = 0;

	return !vmak_sys_getsockopt(vs->fd, SOL_SOCKET, SO_REUSEADDR, &on,
				    &len) && on;
}

/* The peer, IPv4 mapped, for sends without an address. */
bool vsa_mapped(const struct sockaddr *sa, socklen_t len,
		struct sockaddr_in6 *out)
{
	memset(out, 0, sizeof(*out));
	out->sin6_family = AF_INET6;
	if (sa && sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;

		out->sin6_addr.s6_addr[10] = 0xff;
		out->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&out->sin6_addr.s6_addr[12], &in->sin_addr, 4);
		out->sin6_port = in->sin_port;
		return true;
	}
	if (sa && sa->sa_family == AF_INET6 &&
	    len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		out->sin6_addr = in6->sin6_addr;
		out->sin6_port = in6->sin6_port;
		return true;
	}
	return false;
}

static void set_peer(struct vsock *vs, const struct sockaddr_storage *p)
{
	vsa_mapped((const struct sockaddr *)p, sizeof(*p), &vs->peer);
}

/* Add the rules of one joined group (vs->lock held for writing). */
static void group_attach_locked(struct vsock *vs, const struct sockaddr *group,
				int ifindex)
{
	int idx[VSOCK_MAX_ATT], n;

	if (ifindex) {
		idx[0] = ifindex;
		n = 1;
	} else {
		n = devices(idx, VSOCK_MAX_ATT);
	}
	if (n && !attach_all(vs, idx, n, group))
		vlog_once(VLOG_WARNING, "a multicast group stays on the kernel socket: %s (the first refused; later ones are not logged)",
			  rule_error(errno));
}

/* Rules for groups joined before the socket had a port. */
static void groups_pending_locked(struct vsock *vs)
{
	int i, j, alen;

	for (i = 0; i < vs->ngroups; i++) {
		const uint8_t *g = sa_addr((struct sockaddr *)&vs->groups[i].addr, &alen);
		bool have = false;

		for (j = 0; j < vs->nvatt && !have; j++)
			have = vs->att[j]->group &&
			       !memcmp(vs->att[j]->group_addr, g, (size_t)alen);
		if (!have)
			group_attach_locked(vs, (struct sockaddr *)&vs->groups[i].addr,
					    vs->groups[i].ifindex);
	}
}

/*
 * Rules for what vs is now (bound, connected, joined), replacing the
 * ones it had; groups_too: the groups' rules as well (a new ring logic).
 * Call with vs->lock held for writing.
 */
static void offload_locked(struct vsock *vs, bool groups_too)
{
	struct sockaddr_storage local, peer;
	socklen_t llen = sizeof(local), plen = sizeof(peer);
	int idx[VSOCK_MAX_ATT], n;
	bool connected;

	if (vs->os_only)
		goto out;
	detach_locked(vs, groups_too, true);
	vs->tried = true;
	if (getsockname(vs->fd, (struct sockaddr *)&local, &llen) ||
	    (local.ss_family != AF_INET && local.ss_family != AF_INET6))
		goto out;
	if (((struct sockaddr_in *)&local)->sin_port == 0) {
		vs->tried = false;	/* not bound yet: try again later */
		goto out;
	}
	connected = !getpeername(vs->fd, (struct sockaddr *)&peer, &plen);
	set_peer(vs, connected ? &peer : NULL);
	if (!vrules_offload(&vrules, connected ? VROLE_UDP_CONNECT : VROLE_UDP_RECEIVER,
			    (struct sockaddr *)&local,
			    connected ? (struct sockaddr *)&peer : NULL)) {
		vlog(VLOG_DETAILS, "fd %d: VMA_CONFIG_FILE says os", vs->fd);
		goto out;
	}
	groups_pending_locked(vs);
	if (sa_multicast((struct sockaddr *)&local))
		goto out;	/* bound to a group: its join adds the rule */
	if (reuses_addr(vs)) {
		/* The module takes no unicast rule of a port others may
		 * share; the groups it joins are offloaded.
		 */
		vlog_once(VLOG_WARNING, "a UDP socket with SO_REUSEADDR keeps its unicast traffic on the kernel socket: the module steers only ports no other user can share (groups it joins are offloaded; later such sockets are not logged)");
		goto out;
	}
	n = targets(vs, (struct sockaddr *)&local, idx, VSOCK_MAX_ATT);
	if (!n)
		vlog_once(VLOG_WARNING, "a UDP socket stays on the kernel: no device the module can hook serves its address (Ethernet-type, up, not loopback)");
	else if (!attach_all(vs, idx, n, NULL))
		vlog_once(VLOG_WARNING, "a UDP socket stays on the kernel: %s (the first socket refused; later ones are not logged)",
			  rule_error(errno));
out:
	vstats_addresses(vs);
}

void vsock_offload(struct vsock *vs)
{
	pthread_rwlock_wrlock(&vs->lock);
	offload_locked(vs, false);
	pthread_rwlock_unlock(&vs->lock);
}

static bool bound(struct vsock *vs)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	return !getsockname(vs->fd, (struct sockaddr *)&ss, &len) &&
	       (ss.ss_family == AF_INET || ss.ss_family == AF_INET6) &&
	       ((struct sockaddr_in *)&ss)->sin_port;
}

void vsock_group(struct vsock *vs, int join, const struct sockaddr *group,
		 int ifindex)
{
	int i, j, alen, glen;
	const uint8_t *ga;

	pthread_rwlock_wrlock(&vs->lock);
	if (vs->os_only)
		goto out;
	ga = sa_addr(group, &alen);
	/* the joins, remembered */
	for (i = j = 0; i < vs->ngroups; i++) {
		const uint8_t *g = sa_addr((struct sockaddr *)&vs->groups[i].addr, &glen);

		if (!join && glen == alen && !memcmp(g, ga, (size_t)alen))
			continue;
		vs->groups[j++] = vs->groups[i];
	}
	vs->ngroups = j;
	if (join && vs->ngroups < VSOCK_MAX_ATT) {
		memset(&vs->groups[j].addr, 0, sizeof(vs->groups[j].addr));
		memcpy(&vs->groups[j].addr, group, group->sa_family == AF_INET ?
		       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
		vs->groups[j].ifindex = ifindex;
		vs->ngroups++;
	}
	if (!join) {
		for (i = j = 0; i < vs->nvatt; i++) {
			struct vatt *a = vs->att[i];

			if (a->group && !memcmp(a->group_addr, ga, (size_t)alen))
				att_free(a);
			else
				vs->att[j++] = a;
		}
		vs->nvatt = j;
		vsock_watch_sync_locked(vs);
		goto out;
	}
	/* joined before bind(): the rule comes with the port */
	if (bound(vs))
		group_attach_locked(vs, group, ifindex);
out:
	vstats_addresses(vs);
	pthread_rwlock_unlock(&vs->lock);
}

void vsock_signal_locked(struct vsock *vs)
{
	uint64_t one = 1;

	if (!__atomic_load_n(&vs->waiters, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&vs->nmembers, __ATOMIC_ACQUIRE))
		return;
	if (__atomic_exchange_n(&vs->efd_armed, 1, __ATOMIC_ACQ_REL))
		return;
	if (vmak_sys_write(vs->efd, &one, sizeof(one)) < 0)
		return;		/* the counter cannot overflow: read resets */
}

void vsock_release(struct vsock *vs)
{
	if (__atomic_sub_fetch(&vs->refs, 1, __ATOMIC_ACQ_REL))
		return;
	vmak_sys_close(vs->efd);
	vfd_set_internal(vs->efd, false);
	if (vs->own_fd) {
		vmak_sys_close(vs->fd);
		vfd_set_internal(vs->fd, false);
	}
	vstats_slot_put(vs->slot);
	vsock_send_free(vs);
	pthread_rwlock_destroy(&vs->lock);
	pthread_mutex_destroy(&vs->txlock);
	vsock_free(vs);
}

void vsock_log_stats(int fd, struct vsock *vs)
{
	const struct vmak_sockstat_counters *c = vs->st;

	if (c->rx_ring || c->rx_os || c->rx_drops || c->tx_ring || c->tx_os)
		vlog(VLOG_DETAILS, "fd %d: received %llu via rings, %llu via the kernel socket; %llu dropped (queue full); sent %llu via rings, %llu via the kernel socket",
		     fd, (unsigned long long)c->rx_ring,
		     (unsigned long long)c->rx_os,
		     (unsigned long long)c->rx_drops,
		     (unsigned long long)c->tx_ring,
		     (unsigned long long)c->tx_os);
}

/* Sockets still open when the process ends. */
__attribute__((destructor)) static void sock_exit(void)
{
	if (__atomic_load_n(&vmak_active, __ATOMIC_RELAXED) &&
	    vlog_level >= VLOG_DETAILS)
		vfd_for_each_sock(vsock_log_stats);
}

/*
 * The kernel keeps a socket open while any fd or a call in progress holds
 * it: a receive blocked in another thread still gets what arrives after
 * close(), and a dup outlives the fd it was made from. The library calls
 * the kernel through vs->fd, so when that fd goes while the socket is
 * still needed, vs->fd becomes a hidden copy of it.
 */
void vsock_fd_closing(struct vsock *vs, int fd)
{
	int nfds = __atomic_load_n(&vs->nfds, __ATOMIC_ACQUIRE);
	int calls = __atomic_load_n(&vs->refs, __ATOMIC_ACQUIRE) - nfds -
		    __atomic_load_n(&vs->nmembers, __ATOMIC_ACQUIRE);
	int copy;

	/* epoll sets' references do not keep a kernel socket open */
	if (fd != vs->fd || (nfds == 1 && calls <= 0))
		return;
	copy = vfd_hide(vmak_sys_fcntl(fd, F_DUPFD_CLOEXEC, 0));
	if (copy < 0) {
		vlog(VLOG_WARNING, "fd %d: no fd left to keep its socket for its other users (%s)",
		     fd, strerror(errno));
		return;
	}
	vfd_set_internal(copy, true);
	vs->own_fd = true;
	__atomic_store_n(&vs->fd, copy, __ATOMIC_RELEASE);
}

void vsock_fd_closed(struct vsock *vs)
{
	if (!__atomic_sub_fetch(&vs->nfds, 1, __ATOMIC_ACQ_REL)) {
		vsock_log_stats(vs->fd, vs);
		vepoll_sock_gone(vs);
		vsock_detach_all(vs);
	}
	vsock_release(vs);
}
