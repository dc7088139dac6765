// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * An offloaded UDP socket's rules: when it gets them, onto which ring
 * sets, and back to the kernel socket when it cannot have them.
 *
 * A socket is offloaded once it has a local port: after bind(), connect()
 * (which binds implicitly), a group join, or its first send (sendto()
 * binds implicitly too). Each change of what the socket owns (connect,
 * disconnect, SO_BINDTODEVICE) replaces its rules, because the module
 * kills a rule whose socket no longer owns the key it was made from.
 * Which devices: the one the socket is bound to, the one holding the
 * bound address, or every device of the netns the module can hook.
 *
 * A socket that can never have rules (an option the rings lack, an
 * address no hookable device holds) and holds nothing queued becomes
 * the kernel's alone (vudp_settle): the table forgets its fd, and every
 * later call on it is the C library's, at the C library's cost.
 */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys.h"
#include "addr.h"
#include "stats.h"
#include "udp.h"

static uint32_t next_cookie = 1;

/* ---- attachments ---- */

static bool ring_in(struct vringset *r, struct vringset *const *set, int n)
{
	while (n--)
		if (set[n] == r)
			return true;
	return false;
}

/*
 * The ring fds of u's rings wake for what u's kernel socket receives too
 * (what rings cannot take: IP fragments, local senders, what a full ring
 * passed on), so that a program asleep on a ring fd sees it: u's kernel
 * socket is watched by each ring it is on, once, and by no other.
 */
static void watch_locked(struct vudp *u, struct vringset *const *src, int n)
{
	int i, j = 0;

	for (i = 0; i < u->nwatch; i++)
		if (ring_in(u->watch[i], src, n))
			u->watch[j++] = u->watch[i];
		else
			vrs_watch(u->watch[i], u->fd, false);
	u->nwatch = j;
	for (i = 0; i < n; i++)
		if (!ring_in(src[i], u->watch, u->nwatch)) {
			vrs_watch(src[i], u->fd, true);
			u->watch[u->nwatch++] = src[i];
		}
}

/* vwait's sources and u->gen follow att[] (u->lock held for writing). */
static void sync_locked(struct vudp *u)
{
	struct vringset *src[VUDP_MAX_ATT];
	int i;

	/* cached send headers may name a ring we left */
	__atomic_add_fetch(&u->gen, 1, __ATOMIC_RELEASE);
	for (i = 0; i < u->natt; i++)
		src[i] = u->att[i]->ring;
	vwait_set_sources(&u->w, src, u->natt);
	watch_locked(u, src, u->natt);
}

static void att_free(struct vatt *a)
{
	struct vringset *r = a->ring;

	pthread_mutex_lock(&r->lock);
	vdemux_del_locked(a);
	pthread_mutex_unlock(&r->lock);
	if (!a->retired)
		vmak_rule_del(vrs_fd(r), a->cookie);
	vrs_put(r);
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
	struct vringset *r = a->ring;
	bool empty;

	if (!a->retired) {
		vmak_rule_del(vrs_fd(r), a->cookie);
		a->retired = true;
		a->group = false;
	}
	pthread_mutex_lock(&r->lock);
	vdemux_drain_locked(r);
	empty = !a->qlen;
	pthread_mutex_unlock(&r->lock);
	return empty;
}

/*
 * u->lock held for writing. keep: attachments with queued datagrams
 * stay, retired, until a later detach finds them empty.
 */
static void detach_locked(struct vudp *u, bool groups_too, bool keep)
{
	int i, j = 0;

	for (i = 0; i < u->natt; i++) {
		if (u->att[i]->group && !groups_too)
			u->att[j++] = u->att[i];
		else if (keep && !att_retire(u->att[i]))
			u->att[j++] = u->att[i];
		else
			att_free(u->att[i]);
	}
	u->natt = j;
	sync_locked(u);
}

/*
 * The ring a socket's attachment goes to, beside its device: the ring
 * logic in the top byte (sockets of different logics never share), and
 * below it what that logic tells rings apart by: nothing (per interface),
 * the bound address (per IP), the fd, the user id, the thread or the CPU.
 */
static uint64_t ring_key(struct vudp *u)
{
	int logic = vudp_logic(u);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	uint64_t v = 0;
	int alen, i;
	const uint8_t *a;

	switch (logic) {
	case RING_LOGIC_PER_IP:
		if (getsockname(u->fd, (struct sockaddr *)&ss, &len))
			break;
		a = vaddr_bytes((struct sockaddr *)&ss, &alen);
		v = 14695981039346656037ULL;	/* FNV-1a of the address */
		for (i = 0; i < alen; i++)
			v = (v ^ a[i]) * 1099511628211ULL;
		break;
	case RING_LOGIC_PER_SOCKET:
		v = (uint64_t)u->fd;
		break;
	case RING_LOGIC_PER_USER_ID:
		v = u->user_id;
		break;
	case RING_LOGIC_PER_THREAD:
		v = (uint64_t)syscall(SYS_gettid);
		break;
	case RING_LOGIC_PER_CORE:
	case RING_LOGIC_PER_CORE_ATTACH_THREADS:
		v = (uint64_t)sched_getcpu();
		break;
	default:
		break;
	}
	return (uint64_t)logic << 56 | (v & ((1ULL << 56) - 1));
}

static const char *rule_error(int err, const char *why)
{
	switch (err) {
	case -EPERM:
		return "the module refuses a rule for it (SO_REUSEADDR, IP_FREEBIND or IP_TRANSPARENT, or bound to another device)";
	case -EADDRNOTAVAIL:
		return "its address is not one of this host's";
	case -ENOTSUP:
		return "the device cannot be hooked";
	default:
		return why ? why : strerror(-err);
	}
}

/* One attachment of u on the ring of ifindex: 0, or -errno and *why. */
static int attach(struct vudp *u, int ifindex, const struct sockaddr *group,
		  const char **why)
{
	struct vringset *r;
	struct vatt *a;
	int err, alen;

	*why = NULL;
	if (u->natt == VUDP_MAX_ATT)
		return -ENOSPC;
	err = vwait_efd(&u->w);
	if (err)
		return err;
	r = vrs_get(ifindex, ring_key(u), &err, why);
	if (!r)
		return err;
	err = vudp_pacing_apply(u, r);
	a = err ? NULL : calloc(1, sizeof(*a));
	if (!a) {
		vrs_put(r);
		return err ? err : -ENOMEM;
	}
	a->ring = r;
	a->w = &u->w;
	a->cb = &u->rxcb;
	a->drops = &u->st->rx_drops;
	a->cookie = __atomic_fetch_add(&next_cookie, 1, __ATOMIC_RELAXED);
	err = vdemux_add(a);
	if (!err)
		err = group ? vmak_rule_add_group(vrs_fd(r), u->fd, group, a->cookie) :
			      vmak_rule_add_socket(vrs_fd(r), u->fd, a->cookie);
	if (err) {
		pthread_mutex_lock(&r->lock);
		vdemux_del_locked(a);
		pthread_mutex_unlock(&r->lock);
		vrs_put(r);
		free(a);
		return err;
	}
	if (group) {
		const uint8_t *ga = vaddr_bytes(group, &alen);

		a->group = true;
		memcpy(a->group_addr, ga, (size_t)alen);
	}
	u->att[u->natt++] = a;
	sync_locked(u);
	/* a receive or an epoll set asleep since before has no eye on this
	 * ring: wake it to look again
	 */
	vwait_kick(&u->w);
	return 0;
}

/* Devices a socket's rules go to: bound device, address's, or all. */
static int targets(struct vudp *u, const struct sockaddr *local, int *idx,
		   int max)
{
	char name[IFNAMSIZ + 1] = "";
	socklen_t len = sizeof(name) - 1;
	int all[VADDR_MAX_DEV], n, i, j;

	if (!vmak_sys_getsockopt(u->fd, SOL_SOCKET, SO_BINDTODEVICE, name,
				 &len) && name[0]) {
		i = (int)if_nametoindex(name);
		if (!i)
			return 0;
		idx[0] = i;
		return 1;
	}
	if (local && !vaddr_any(local) && !vaddr_multicast(local)) {
		i = vaddr_device_of(local);
		n = vaddr_devices(all, VADDR_MAX_DEV);
		for (j = 0; j < n; j++)
			if (all[j] == i) {
				idx[0] = i;
				return 1;
			}
		return 0;	/* loopback, or a device we cannot hook */
	}
	return vaddr_devices(idx, max);
}

/* Attach to each device; 0 if one took, else the last refusal. */
static int attach_all(struct vudp *u, const int *idx, int n,
		      const struct sockaddr *group, const char **why)
{
	int i, err, last = 0, ok = 0;
	const char *w;

	for (i = 0; i < n; i++) {
		err = attach(u, idx[i], group, &w);
		if (!err) {
			ok++;
		} else {
			last = err;
			*why = w;
		}
	}
	return ok ? 0 : last;
}

static bool reuses_addr(struct vudp *u)
{
	socklen_t len = sizeof(int);
	int on = 0;

	return !vmak_sys_getsockopt(u->fd, SOL_SOCKET, SO_REUSEADDR, &on,
				    &len) && on;
}

/* Add the rules of one joined group (u->lock held for writing). */
static void group_attach_locked(struct vudp *u, const struct sockaddr *group,
				int ifindex)
{
	int idx[VADDR_MAX_DEV], n, err;
	const char *why = NULL;

	if (ifindex) {
		idx[0] = ifindex;
		n = 1;
	} else {
		n = vaddr_devices(idx, VADDR_MAX_DEV);
	}
	if (n && (err = attach_all(u, idx, n, group, &why)))
		vlog_once(VLOG_WARNING, "a multicast group stays on the kernel socket: %s (the first refused; later ones are not logged)",
			  rule_error(err, why));
}

/* Rules for groups joined before the socket had a port. */
static void groups_pending_locked(struct vudp *u)
{
	int i, j, alen;

	for (i = 0; i < u->ngroups; i++) {
		const uint8_t *g = vaddr_bytes((struct sockaddr *)&u->groups[i].addr, &alen);
		bool have = false;

		for (j = 0; j < u->natt && !have; j++)
			have = u->att[j]->group &&
			       !memcmp(u->att[j]->group_addr, g, (size_t)alen);
		if (!have)
			group_attach_locked(u, (struct sockaddr *)&u->groups[i].addr,
					    u->groups[i].ifindex);
	}
}

/* Nothing steers to it, nothing is queued, and nothing ever will be. */
static void maybe_final_locked(struct vudp *u, bool final)
{
	if (final && !u->natt && !u->ngroups)
		u->passthru = true;
}

/*
 * Rules for what u is now (bound, connected, joined), replacing the
 * ones it had; groups_too: the groups' rules as well (a new ring logic).
 * Call with u->lock held for writing.
 */
static void offload_locked(struct vudp *u, bool groups_too)
{
	struct sockaddr_storage local, peer;
	socklen_t llen = sizeof(local), plen = sizeof(peer);
	int idx[VADDR_MAX_DEV], n, err;
	const char *why = NULL;
	bool connected;

	if (u->os_only) {
		maybe_final_locked(u, true);
		goto out;
	}
	detach_locked(u, groups_too, true);
	u->tried = true;
	u->rule_os = false;
	if (getsockname(u->fd, (struct sockaddr *)&local, &llen) ||
	    (local.ss_family != AF_INET && local.ss_family != AF_INET6))
		goto out;
	/* not bound yet: bind, connect or the first send try again */
	u->unbound = !vaddr_port((struct sockaddr *)&local);
	if (u->unbound)
		goto out;
	connected = !getpeername(u->fd, (struct sockaddr *)&peer, &plen);
	vaddr_mapped(connected ? (struct sockaddr *)&peer : NULL, plen, &u->peer);
	if (!vrules_offload(&vrules, connected ? VROLE_UDP_CONNECT : VROLE_UDP_RECEIVER,
			    (struct sockaddr *)&local,
			    connected ? (struct sockaddr *)&peer : NULL)) {
		vlog(VLOG_DETAILS, "fd %d: VMA_CONFIG_FILE says os", u->fd);
		u->rule_os = true;	/* its later joins too (vudp_group()) */
		goto out;
	}
	groups_pending_locked(u);
	if (vaddr_multicast((struct sockaddr *)&local))
		goto out;	/* bound to a group: its join adds the rule */
	if (reuses_addr(u)) {
		/* The module takes no unicast rule of a port others may
		 * share; the groups it joins are offloaded.
		 */
		vlog_once(VLOG_WARNING, "a UDP socket with SO_REUSEADDR keeps its unicast traffic on the kernel socket: the module steers only ports no other user can share (groups it joins are offloaded; later such sockets are not logged)");
		goto out;
	}
	n = targets(u, (struct sockaddr *)&local, idx, VADDR_MAX_DEV);
	if (!n) {
		vlog_once(VLOG_WARNING, "a UDP socket stays on the kernel: no device the module can hook serves its address (Ethernet-type, up, not loopback)");
		/* its address never moves to a device we can hook */
		maybe_final_locked(u, !vaddr_any((struct sockaddr *)&local));
	} else if ((err = attach_all(u, idx, n, NULL, &why))) {
		vlog_once(VLOG_WARNING, "a UDP socket stays on the kernel: %s (the first socket refused; later ones are not logged)",
			  rule_error(err, why));
		maybe_final_locked(u, err == -ENOBUFS || err == -EADDRNOTAVAIL);
	}
out:
	vstats_addresses(u->slot, u->fd, u->natt, u->os_only);
}

void vudp_detach_all(struct vudp *u)
{
	pthread_rwlock_wrlock(&u->lock);
	if (u->natt)
		detach_locked(u, true, false);
	pthread_rwlock_unlock(&u->lock);
}

void vudp_offload(struct vudp *u)
{
	pthread_rwlock_wrlock(&u->lock);
	offload_locked(u, false);
	pthread_rwlock_unlock(&u->lock);
}

int vudp_ring_logic(struct vudp *u, const void *val, socklen_t len)
{
	struct vma_ring_alloc_logic_attr at;

	if (!val || len != sizeof(at))
		return -EINVAL;
	memcpy(&at, val, sizeof(at));
	if (!(at.comp_mask & (VMA_RING_ALLOC_MASK_RING_PROFILE_KEY |
			      VMA_RING_ALLOC_MASK_RING_USER_ID |
			      VMA_RING_ALLOC_MASK_RING_INGRESS |
			      VMA_RING_ALLOC_MASK_RING_ENGRESS)) ||
	    !vconf_logic_valid(at.ring_alloc_logic))
		return -EINVAL;
	pthread_rwlock_wrlock(&u->lock);
	if (((at.comp_mask & VMA_RING_ALLOC_MASK_RING_INGRESS) && at.ingress) ||
	    ((at.comp_mask & VMA_RING_ALLOC_MASK_RING_ENGRESS) && at.engress)) {
		/* one ring carries both directions of a socket */
		u->logic = at.ring_alloc_logic;
		if (at.comp_mask & VMA_RING_ALLOC_MASK_RING_USER_ID)
			u->user_id = at.user_id;
		/*
		 * A socket with rules moves to the rings of its new logic,
		 * as libvma moves it; what the old rings queued for it is
		 * still read.
		 */
		if (u->natt)
			offload_locked(u, true);
	}
	pthread_rwlock_unlock(&u->lock);
	return 0;
}

void vudp_to_os(struct vudp *u, const char *why)
{
	pthread_rwlock_wrlock(&u->lock);
	if (!u->os_only) {
		u->os_only = true;
		u->ngroups = 0;
		if (u->natt)
			vlog(VLOG_INFO, "fd %d: back to the kernel socket: %s",
			     u->fd, why);
		detach_locked(u, true, true);
	}
	maybe_final_locked(u, true);
	vstats_addresses(u->slot, u->fd, u->natt, u->os_only);
	pthread_rwlock_unlock(&u->lock);
}

/* ---- groups ---- */

void vudp_group(struct vudp *u, bool join, const struct sockaddr *group,
		int ifindex)
{
	int i, j, alen, glen;
	const uint8_t *ga;

	pthread_rwlock_wrlock(&u->lock);
	if (u->os_only)
		goto out;
	ga = vaddr_bytes(group, &alen);
	/* the joins, remembered */
	for (i = j = 0; i < u->ngroups; i++) {
		const uint8_t *g = vaddr_bytes((struct sockaddr *)&u->groups[i].addr, &glen);

		if (!join && glen == alen && !memcmp(g, ga, (size_t)alen) &&
		    (!ifindex || u->groups[i].ifindex == ifindex))
			continue;
		u->groups[j++] = u->groups[i];
	}
	u->ngroups = j;
	if (join && u->ngroups < VUDP_MAX_ATT) {
		memset(&u->groups[j].addr, 0, sizeof(u->groups[j].addr));
		memcpy(&u->groups[j].addr, group, group->sa_family == AF_INET ?
		       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
		u->groups[j].ifindex = ifindex;
		u->ngroups++;
	}
	if (!join) {
		/* what the group's rules queued stays readable until read */
		for (i = j = 0; i < u->natt; i++) {
			struct vatt *a = u->att[i];

			if (a->group && !memcmp(a->group_addr, ga, (size_t)alen) &&
			    att_retire(a))
				att_free(a);
			else
				u->att[j++] = a;
		}
		u->natt = j;
		sync_locked(u);
		goto out;
	}
	/* joined before bind(): the rule comes with the port */
	if (vaddr_local_port(u->fd) && !u->rule_os)
		group_attach_locked(u, group, ifindex);
out:
	vstats_addresses(u->slot, u->fd, u->natt, u->os_only);
	pthread_rwlock_unlock(&u->lock);
}

/* ---- settling into a plain socket ---- */

void vudp_settle(struct vudp *u)
{
	bool empty;

	if (!__atomic_load_n(&u->passthru, __ATOMIC_RELAXED))
		return;
	pthread_rwlock_rdlock(&u->lock);
	empty = !u->natt && !vwait_ready(&u->w);
	pthread_rwlock_unlock(&u->lock);
	if (!empty || __atomic_load_n(&u->w.sets, __ATOMIC_ACQUIRE))
		return;	/* an epoll set still translates for it */
	vlog(VLOG_DEBUG, "fd %d: a plain kernel socket from now on", u->fd);
	vfd_clear_all_of(&u->hdr);
}


int vudp_ring_fds(struct vudp *u, int *fds, int max)
{
	int i, j, n = 0;

	pthread_rwlock_rdlock(&u->lock);
	for (i = 0; i < u->natt; i++) {
		int fd = vrs_ring_fd(u->att[i]->ring);

		if (u->att[i]->retired)
			continue;
		for (j = 0; j < i; j++)
			if (!u->att[j]->retired &&
			    vrs_ring_fd(u->att[j]->ring) == fd)
				break;
		if (j < i)
			continue;	/* a group and the unicast on one ring */
		if (fds && n < max) {
			fds[n] = fd;
			vwait_ring_export(u->att[i]->ring);
		}
		n++;
	}
	pthread_rwlock_unlock(&u->lock);
	return n;
}

void vudp_att_atfork_child(struct vudp *u)
{
	int i;

	/* what the queues hold is the parent's to read */
	for (i = 0; i < u->natt; i++) {
		vdemux_forget(u->att[i]);
		free(u->att[i]);
	}
	u->natt = 0;
	u->nwatch = 0;	/* the parent's ring fds */
	/* no rules of its own while the parent's steer: a kernel socket */
	u->tried = true;
	u->unbound = false;
	u->os_only = true;
	u->gen++;
}
