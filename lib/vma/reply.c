// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A receive's poll for an answer (the rule is reply.h's): whether this
 * empty turn polls, whose datagram ended it, and the counts that say how
 * the polls went.
 */
#include <string.h>

#include "sys.h"
#include "addr.h"
#include "rx.h"


/*
 * Poll this empty turn instead of sleeping? Asked on a blocking receive's
 * first empty turn, and each turn after while it polls. Only when nothing
 * else polls (VMA_RX_POLL's turns and socketXtreme decide for themselves),
 * and only with rings to poll: a kernel socket's answer wakes its sleep.
 */
bool vrx_reply_turn(struct vudp *u, struct rpoll *rp, int64_t spins)
{
	int64_t now;

	if (!rp->until) {
		rp->until = -1;
		if (!vudp_reply_on() ||
		    !__atomic_load_n(&u->rx.sent_to, __ATOMIC_RELAXED) ||
		    !__atomic_load_n(&u->natt, __ATOMIC_RELAXED))
			return false;
		rp->to = __atomic_exchange_n(&u->rx.sent_to, 0, __ATOMIC_RELAXED);
		if (!rp->to)
			return false;
		switch (vreply_try(&u->rx.reply)) {
		case VREPLY_SLEEP:
			rp->to = 0;	/* no poll: no source to tell */
			return false;
		case VREPLY_POLL:
			rp->until = vnow_ns() + vconf.reply_poll_ns;
			break;
		case VREPLY_PROBE_POLL:
			rp->until = vnow_ns() + VREPLY_PROBE * vconf.reply_poll_ns;
			break;
		}
		rp->from = 0;	/* a kernel datagram's source unknown: not it */
		return true;
	}
	if (rp->until < 0)
		return false;
	if (spins & 15)
		return true;
	now = vnow_ns();
	if (now < rp->until)
		return true;
	rp->ran_out = now;
	rp->until = -1;
	return false;
}

/* The key of a kernel datagram's source, if the caller asked for it. */
uint64_t vrx_name_key(const struct msghdr *msg)
{
	struct sockaddr_in6 a;

	if (!msg->msg_name ||
	    !vaddr_mapped(msg->msg_name, msg->msg_namelen, &a))
		return 0;
	return vudp_key(&a);
}

/* The receive that polled returns (got: with a datagram): how it ended. */
void vrx_reply_end(struct vudp *u, const struct rpoll *rp, bool got)
{
	enum vreply_end e = VREPLY_MISSED;

	if (got && rp->until > 0)
		e = VREPLY_CAME;
	else if (got && rp->ran_out &&
		 vnow_ns() - rp->ran_out <= VREPLY_LATE * vconf.reply_poll_ns)
		e = VREPLY_LATE_CAME;
	if (e != VREPLY_MISSED && rp->from != rp->to)
		e = VREPLY_OTHER;
	vreply_done(&u->rx.reply, e);
}

void vudp_reply_log(struct vudp *u, int fd)
{
	const uint64_t *n = u->rx.reply.n;
	uint64_t c = __atomic_load_n(&n[VREPLY_CAME], __ATOMIC_RELAXED);
	uint64_t l = __atomic_load_n(&n[VREPLY_LATE_CAME], __ATOMIC_RELAXED);
	uint64_t o = __atomic_load_n(&n[VREPLY_OTHER], __ATOMIC_RELAXED);
	uint64_t m = __atomic_load_n(&n[VREPLY_MISSED], __ATOMIC_RELAXED);

	if (c || l || o || m)
		vlog(VLOG_DETAILS, "fd %d: polled for an answer %llu times: it came in %llu, later in %llu; another's datagram %llu, nothing %llu",
		     fd, (unsigned long long)(c + l + o + m),
		     (unsigned long long)c, (unsigned long long)l,
		     (unsigned long long)o, (unsigned long long)m);
}
