// SPDX-License-Identifier: GPL-2.0
/*
 * The vmak socket family: a socket is a ring set. Setup (UMEM, ring sizes)
 * happens in state READY; bind moves it to BOUND; losing the device moves
 * it to UNBOUND, where only close is useful.
 */
#include <linux/file.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/sockptr.h>
#include <linux/vmalloc.h>
#include <net/sock.h>

#include "vmak.h"

static struct proto vmak_proto = {
	.name		= "VMAK",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct vmak_sock),
};

/* Not const: vmak_sock_init() writes the family number, known at load. */
static struct proto_ops vmak_ops __ro_after_init;

bool vmak_is_vmak_socket(const struct socket *sock)
{
	return sock->ops == &vmak_ops;
}

static struct vmak_queue **vmak_ring_slot(struct vmak_sock *vs, int optname)
{
	switch (optname) {
	case VMAK_RX_RING:
		return &vs->rx;
	case VMAK_TX_RING:
		return &vs->tx;
	case VMAK_FILL_RING:
		return &vs->fq;
	case VMAK_COMPLETION_RING:
		return &vs->cq;
	}
	return NULL;
}

static u32 vmak_ring_desc_size(int optname)
{
	switch (optname) {
	case VMAK_RX_RING:
		return sizeof(struct vmak_rx_desc);
	case VMAK_TX_RING:
		return sizeof(struct vmak_tx_desc);
	default:
		return sizeof(u64);
	}
}

/*
 * Copy a struct that may grow: shorter than the first version is EINVAL,
 * longer than ours must be zero-filled (E2BIG otherwise).
 */
static int vmak_copy_struct(void *dst, size_t ksize, sockptr_t src,
			    unsigned int optlen)
{
	int err;

	if (optlen < ksize) {
		return -EINVAL;
	} else if (optlen > ksize) {
		err = check_zeroed_sockptr(src, ksize, optlen - ksize);
		if (err <= 0)
			return err ? err : -E2BIG;
	}
	return copy_from_sockptr(dst, src, ksize) ? -EFAULT : 0;
}

/* A __u32 option: at least four bytes, the rest ignored (as AF_XDP). */
static int vmak_copy_u32(u32 *val, sockptr_t src, unsigned int optlen)
{
	if (optlen < sizeof(*val))
		return -EINVAL;
	return copy_from_sockptr(val, src, sizeof(*val)) ? -EFAULT : 0;
}

static int __vmak_setsockopt(struct socket *sock, int level, int optname,
			     sockptr_t optval, unsigned int optlen)
{
	struct vmak_sock *vs = vmak_sk(sock->sk);
	struct vmak_queue **slot, *q;
	struct vmak_umem_reg reg;
	struct vmak_umem *umem;
	struct vmak_rule rule;
	u32 val;
	int err;

	if (level != SOL_VMAK)
		return -ENOPROTOOPT;

	switch (optname) {
	case VMAK_UMEM_REG:
		err = vmak_copy_struct(&reg, sizeof(reg), optval, optlen);
		if (err)
			return err;
		mutex_lock(&vs->mutex);
		if (vs->state != VMAK_STATE_READY || vs->umem) {
			err = -EBUSY;
		} else {
			umem = vmak_umem_create(&reg);
			if (IS_ERR(umem))
				err = PTR_ERR(umem);
			else
				/* pairs with smp_load_acquire() in
				 * vmak_nl_fill_ring() and
				 * vmak_bind_shared_umem()
				 */
				smp_store_release(&vs->umem, umem);
		}
		mutex_unlock(&vs->mutex);
		return err;

	case VMAK_RX_RING:
	case VMAK_TX_RING:
	case VMAK_FILL_RING:
	case VMAK_COMPLETION_RING:
		err = vmak_copy_u32(&val, optval, optlen);
		if (err)
			return err;
		slot = vmak_ring_slot(vs, optname);
		mutex_lock(&vs->mutex);
		if (vs->state != VMAK_STATE_READY || *slot) {
			err = -EBUSY;
		} else {
			q = vmak_queue_create(val, vmak_ring_desc_size(optname));
			err = PTR_ERR_OR_ZERO(q);
			if (!err)	/* publish last; pairs with vmak_sock_queue() */
				smp_store_release(slot, q);
		}
		mutex_unlock(&vs->mutex);
		return err;

	case VMAK_RULE_ADD:
		err = vmak_copy_struct(&rule, sizeof(rule), optval, optlen);
		if (err)
			return err;
		mutex_lock(&vs->mutex);
		err = vmak_rule_add(vs, &rule);
		mutex_unlock(&vs->mutex);
		return err;

	case VMAK_RX_MODERATION:
	case VMAK_RX_BATCH: {
		struct vmak_moderation mod;

		err = vmak_copy_struct(&mod, sizeof(mod), optval, optlen);
		if (err)
			return err;
		if (optname == VMAK_RX_BATCH)
			return vmak_rx_set_batch(vs, mod.count, mod.usec);
		return vmak_rx_set_moderation(vs, mod.count, mod.usec);
	}

	case VMAK_RULE_DEL:
		err = vmak_copy_u32(&val, optval, optlen);
		if (err)
			return err;
		mutex_lock(&vs->mutex);
		err = vmak_rule_del(vs, val);
		mutex_unlock(&vs->mutex);
		return err;

	case VMAK_TX_RATE_LIMIT: {
		struct vmak_rate_limit rl;

		err = vmak_copy_struct(&rl, sizeof(rl), optval, optlen);
		if (err)
			return err;
		return vmak_tx_set_rate(vs, &rl);
	}

	case VMAK_RX_ARM:
		err = vmak_copy_u32(&val, optval, optlen);
		if (err)
			return err;
		if (val != 1)
			return -EINVAL;
		vmak_rx_arm(vs);
		return 0;
	}
	return -ENOPROTOOPT;
}

/*
 * Netlink monitors hear of every successful change but the arm and the
 * batch, which last until the next wake.
 */
static int vmak_setsockopt(struct socket *sock, int level, int optname,
			   sockptr_t optval, unsigned int optlen)
{
	int err = __vmak_setsockopt(sock, level, optname, optval, optlen);

	if (!err && optname != VMAK_RX_ARM && optname != VMAK_RX_BATCH)
		vmak_nl_notify(vmak_sk(sock->sk), VMAK_CMD_RING_CHANGE_NTF);
	return err;
}

static void vmak_fill_offsets(struct vmak_ring_offset *off)
{
	off->producer = offsetof(struct vmak_ring_shared, producer);
	off->consumer = offsetof(struct vmak_ring_shared, consumer);
	off->flags = offsetof(struct vmak_ring_shared, flags);
	off->desc = offsetof(struct vmak_ring_shared, desc);
}

/* One consistent copy of each half of the counters. */
void vmak_stats_snapshot(struct vmak_sock *vs, struct vmak_statistics *st)
{
	struct vmak_statistics tx;

	mutex_lock(&vs->tx_mutex);
	tx = vs->stats;
	mutex_unlock(&vs->tx_mutex);
	spin_lock_bh(&vs->rx_lock);
	*st = vs->stats;
	spin_unlock_bh(&vs->rx_lock);
	st->tx_packets = tx.tx_packets;
	st->tx_bytes = tx.tx_bytes;
	st->tx_invalid = tx.tx_invalid;
	st->tx_header_drop = tx.tx_header_drop;
	st->tx_cq_full = tx.tx_cq_full;
	st->tx_dummy = tx.tx_dummy;
	st->tx_error = tx.tx_error;
}

static int vmak_getsockopt(struct socket *sock, int level, int optname,
			   char __user *optval, int __user *optlen)
{
	struct vmak_sock *vs = vmak_sk(sock->sk);
	struct vmak_mmap_offsets off;
	struct vmak_statistics stats;
	struct vmak_ring_info info;
	struct vmak_moderation mod;
	struct vmak_rate_limit rl;
	struct vmak_net_header nh;
	const void *src;
	int err;
	int len;

	if (level != SOL_VMAK)
		return -ENOPROTOOPT;
	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;

	switch (optname) {
	case VMAK_MMAP_OFFSETS:
		if (len < sizeof(off))
			return -EINVAL;
		vmak_fill_offsets(&off.rx);
		vmak_fill_offsets(&off.tx);
		vmak_fill_offsets(&off.fr);
		vmak_fill_offsets(&off.cr);
		src = &off;
		len = sizeof(off);
		break;

	case VMAK_STATISTICS:
		/* Old binaries ask for fewer counters: give what fits. */
		if (len < sizeof(u64))
			return -EINVAL;
		vmak_stats_snapshot(vs, &stats);
		src = &stats;
		len = min_t(int, len, sizeof(stats)) & ~(int)(sizeof(u64) - 1);
		break;

	case VMAK_RX_MODERATION:
		if (len < sizeof(mod))
			return -EINVAL;
		spin_lock_bh(&vs->rx_lock);
		mod.count = vs->mod_count;
		mod.usec = vs->mod_usec;
		spin_unlock_bh(&vs->rx_lock);
		src = &mod;
		len = sizeof(mod);
		break;

	case VMAK_RING_INFO:
		if (len < sizeof(info))
			return -EINVAL;
		memset(&info, 0, sizeof(info));
		mutex_lock(&vs->mutex);
		mutex_lock(&vmak_mutex);
		info.state = vs->state;
		info.ifindex = vs->ifindex;
		info.queue_id = vs->queue_id;
		info.rules = vs->nrules;
		info.id = vs->id;
		if (vs->state != VMAK_STATE_READY && vs->tx) {
			info.flags |= vs->tx_zc ? VMAK_INFO_TX_ZEROCOPY : 0;
			info.flags |= vs->tx_raw ? VMAK_INFO_TX_RAW : 0;
		}
		mutex_unlock(&vmak_mutex);
		mutex_unlock(&vs->mutex);
		info.napi_id = READ_ONCE(vs->napi_id);
		src = &info;
		len = sizeof(info);
		break;

	case VMAK_TX_RATE_LIMIT:
		if (len < sizeof(rl))
			return -EINVAL;
		vmak_tx_get_rate(vs, &rl);
		src = &rl;
		len = sizeof(rl);
		break;

	case VMAK_NET_HEADER:
		if (len < sizeof(nh))
			return -EINVAL;
		if (copy_from_user(&nh, optval, sizeof(nh)))
			return -EFAULT;
		err = vmak_net_header(vs, &nh);
		if (err)
			return err;
		src = &nh;
		len = sizeof(nh);
		break;

	default:
		return -ENOPROTOOPT;
	}

	if (copy_to_user(optval, src, len))
		return -EFAULT;
	if (put_user(len, optlen))
		return -EFAULT;
	return 0;
}

/*
 * The UMEM of the ring set behind fd, with a reference for a socket that
 * has none of its own (VMAK_BIND_SHARED_UMEM). The other socket's UMEM
 * only goes away with it, and we hold the file while we take ours.
 */
static struct vmak_umem *vmak_bind_shared_umem(struct vmak_sock *vs, int fd,
					       int *err)
{
	struct vmak_umem *umem = NULL;
	struct socket *other;

	if (vs->umem) {
		*err = -EINVAL;
		return NULL;
	}
	other = sockfd_lookup(fd, err);
	if (!other)
		return NULL;
	if (vmak_is_vmak_socket(other) && other->sk != &vs->sk)
		/* pairs with smp_store_release() in __vmak_setsockopt() */
		umem = smp_load_acquire(&vmak_sk(other->sk)->umem);
	if (umem)
		vmak_umem_get(umem);
	else
		*err = -EBADF;
	sockfd_put(other);
	return umem;
}

static int vmak_bind(struct socket *sock, struct vmak_bind_addr *addr,
		     int addr_len)
{
	struct sockaddr_vmak *sv = (struct sockaddr_vmak *)addr;
	struct vmak_sock *vs = vmak_sk(sock->sk);
	struct vmak_umem *shared = NULL;
	struct net_device *dev;
	u16 flags;
	int err;

	if (addr_len < (int)sizeof(*sv))
		return -EINVAL;
	if (sv->svmak_family != vmak_family)
		return -EINVAL;
	flags = sv->svmak_flags;
	if (flags & ~VMAK_BIND_FLAGS_ALL)
		return -EINVAL;
	if ((flags & VMAK_BIND_TX_COPY) && (flags & VMAK_BIND_TX_ZEROCOPY))
		return -EINVAL;

	mutex_lock(&vs->mutex);
	if (vs->state != VMAK_STATE_READY) {
		err = -EBUSY;
		goto out_unlock;
	}

	/* A ring set receives (RX + FILL), sends (TX + COMPLETION), or both. */
	if ((!vs->rx && !vs->tx) || (!vs->rx != !vs->fq) ||
	    (!vs->tx != !vs->cq)) {
		err = -EINVAL;
		goto out_unlock;
	}

	if (flags & VMAK_BIND_SHARED_UMEM) {
		shared = vmak_bind_shared_umem(vs, sv->svmak_shared_umem_fd, &err);
		if (!shared)
			goto out_unlock;
	} else if (!vs->umem || sv->svmak_shared_umem_fd) {
		err = -EINVAL;
		goto out_unlock;
	}

	dev = dev_get_by_index(sock_net(sock->sk), sv->svmak_ifindex);
	if (!dev) {
		err = -ENODEV;
		goto out_put_shared;
	}
	if (sv->svmak_queue_id != VMAK_QUEUE_ANY &&
	    sv->svmak_queue_id >= dev->real_num_rx_queues) {
		err = -EINVAL;
		goto out_put_dev;
	}

	vs->queue_id = sv->svmak_queue_id;
	vs->bind_flags = flags;
	err = vmak_tx_bind(vs, dev, flags);
	if (err)
		goto out_put_dev;
	err = vmak_bind_dev(vs, dev, shared);
	if (!err) {
		shared = NULL;		/* now the socket's */
		vmak_nl_notify(vs, VMAK_CMD_RING_CHANGE_NTF);
	}

out_put_dev:
	dev_put(dev);
out_put_shared:
	if (shared)
		vmak_umem_put(shared);
out_unlock:
	mutex_unlock(&vs->mutex);
	return err;
}

static int vmak_mmap(struct file *file, struct socket *sock,
		     struct vm_area_struct *vma)
{
	struct vmak_sock *vs = vmak_sk(sock->sk);
	loff_t offset = (loff_t)vma->vm_pgoff << PAGE_SHIFT;
	struct vmak_queue *q;

	switch (offset) {
	case VMAK_PGOFF_RX_RING:
		q = vmak_sock_queue(&vs->rx);
		break;
	case VMAK_PGOFF_TX_RING:
		q = vmak_sock_queue(&vs->tx);
		break;
	case VMAK_PGOFF_FILL_RING:
		q = vmak_sock_queue(&vs->fq);
		break;
	case VMAK_PGOFF_COMPLETION_RING:
		q = vmak_sock_queue(&vs->cq);
		break;
	default:
		return -EINVAL;
	}
	if (!q)
		return -EINVAL;
	return vmak_queue_mmap(q, vma);
}

static bool vmak_rx_ready(struct vmak_sock *vs)
{
	struct vmak_queue *rx = vmak_sock_queue(&vs->rx);

	return rx && vmak_q_nonempty_peek(rx);
}

/* A kick from user space: the FILL ring has chunks again. */
static void vmak_kick_rx(struct vmak_sock *vs)
{
	struct vmak_queue *fq = vmak_sock_queue(&vs->fq);

	if (fq && vmak_q_flag_peek(fq, VMAK_RING_NEED_WAKEUP)) {
		spin_lock_bh(&vs->rx_lock);
		if (vmak_q_peek(fq))
			vmak_q_clear_flag(fq, VMAK_RING_NEED_WAKEUP);
		spin_unlock_bh(&vs->rx_lock);
	}
}

/* The TX ring has room for user space to produce into. */
static bool vmak_tx_room(struct vmak_sock *vs)
{
	struct vmak_queue *tx = vmak_sock_queue(&vs->tx);

	return tx && vmak_q_room_peek(tx);
}

static __poll_t vmak_poll(struct file *file, struct socket *sock,
			  poll_table *wait)
{
	struct sock *sk = sock->sk;
	struct vmak_sock *vs = vmak_sk(sk);
	__poll_t mask = 0;

	sock_poll_wait(file, sock, wait);
	vmak_kick_rx(vs);
	if (vmak_rx_ready(vs))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (vmak_tx_room(vs))
		mask |= EPOLLOUT | EPOLLWRNORM;
	if (READ_ONCE(sk->sk_err))
		mask |= EPOLLERR;
	if (READ_ONCE(vs->state) == VMAK_STATE_UNBOUND)
		mask |= EPOLLHUP;
	return mask;
}

/*
 * recvmsg carries no data: the data is in the rings. With MSG_DONTWAIT (or
 * on a non-blocking socket) it is a kick and returns 0 at once; otherwise
 * it sleeps until the RX ring has entries, an error, a signal or the
 * receive timeout.
 */
static int vmak_recvmsg(struct socket *sock, struct msghdr *m, size_t len,
			int flags)
{
	struct sock *sk = sock->sk;
	struct vmak_sock *vs = vmak_sk(sk);
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	long timeo;
	int err = 0;

	if (flags & ~(MSG_DONTWAIT | MSG_WAITALL))
		return -EOPNOTSUPP;
	if (READ_ONCE(vs->state) != VMAK_STATE_BOUND)
		return sock_error(sk) ?: -ENXIO;
	if (!READ_ONCE(vs->rx))
		return -ENOBUFS;
	vmak_kick_rx(vs);

	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	if (!timeo)
		return 0;

	add_wait_queue(sk_sleep(sk), &wait);
	while (!vmak_rx_ready(vs)) {
		err = sock_error(sk);
		if (err)
			break;
		if (READ_ONCE(vs->state) != VMAK_STATE_BOUND) {
			err = -ENXIO;
			break;
		}
		if (!timeo) {
			err = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			err = sock_intr_errno(timeo);
			break;
		}
		timeo = wait_woken(&wait, TASK_INTERRUPTIBLE, timeo);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	return err;
}

static int vmak_release(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct vmak_sock *vs;

	if (!sk)
		return 0;
	vs = vmak_sk(sk);

	mutex_lock(&vs->mutex);
	vmak_unbind(vs);
	mutex_unlock(&vs->mutex);
	vmak_rx_sock_release(vs);
	vmak_tx_sock_release(vs);
	vmak_ring_unregister(vs);
	/* Empty after unbind. Here, not in the destructor: that runs in
	 * softirq (RCU), and the rules' lock is taken with softirqs on.
	 */
	xa_destroy(&vs->rules);
	xa_destroy(&vs->tx_ports);

	sock_orphan(sk);
	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

/* Runs after an RCU grace period (SOCK_RCU_FREE): the hook is done with us. */
static void vmak_destruct(struct sock *sk)
{
	struct vmak_sock *vs = vmak_sk(sk);

	vmak_queue_destroy(vs->rx);
	vmak_queue_destroy(vs->tx);
	vmak_queue_destroy(vs->fq);
	vmak_queue_destroy(vs->cq);
	vmak_umem_put(vs->umem);
	vmak_tx_sock_destruct(vs);
	put_pid(vs->owner);
}

/*
 * sendmsg carries no data: the frames are on the TX ring. A call is a
 * kick that sends what the ring holds (blocking or not; it never sleeps
 * for room). 0, or -EAGAIN when a full COMPLETION ring stopped it.
 */
static int vmak_sendmsg(struct socket *sock, struct msghdr *m, size_t len)
{
	if (m->msg_flags & ~(MSG_DONTWAIT | MSG_NOSIGNAL))
		return -EOPNOTSUPP;
	return vmak_tx_run(vmak_sk(sock->sk));
}

static const struct proto_ops vmak_proto_ops = {
	.family		= 0,	/* set from the module parameter at init */
	.owner		= THIS_MODULE,
	.release	= vmak_release,
	.bind		= vmak_bind,
	.connect	= sock_no_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= sock_no_getname,
	.poll		= vmak_poll,
	.ioctl		= sock_no_ioctl,
	.listen		= sock_no_listen,
	.shutdown	= sock_no_shutdown,
	.setsockopt	= vmak_setsockopt,
	.getsockopt	= vmak_getsockopt,
	.sendmsg	= vmak_sendmsg,
	.recvmsg	= vmak_recvmsg,
	.mmap		= vmak_mmap,
};

static int vmak_create(struct net *net, struct socket *sock, int protocol,
		       int kern)
{
	struct vmak_sock *vs;
	struct sock *sk;
	int err;

	if (sock->type != SOCK_RAW)
		return -ESOCKTNOSUPPORT;
	if (protocol != VMAK_PROTO)
		return -EPROTONOSUPPORT;
	if (!READ_ONCE(vmak_unprivileged) && !kern &&
	    !ns_capable(net->user_ns, CAP_NET_RAW))
		return -EPERM;

	sk = sk_alloc(net, vmak_family, GFP_KERNEL, &vmak_proto, kern);
	if (!sk)
		return -ENOBUFS;

	sock->ops = &vmak_ops;
	sock->state = SS_UNCONNECTED;
	sock_init_data(sock, sk);
	sk->sk_family = vmak_family;
	sk->sk_destruct = vmak_destruct;
	sock_set_flag(sk, SOCK_RCU_FREE);

	vs = vmak_sk(sk);
	mutex_init(&vs->mutex);
	spin_lock_init(&vs->rx_lock);
	xa_init(&vs->rules);
	xa_init(&vs->tx_ports);
	vmak_rx_sock_init(vs);
	vmak_tx_sock_init(vs);
	INIT_LIST_HEAD(&vs->dev_node);
	vs->state = VMAK_STATE_READY;
	vs->owner = get_pid(task_tgid(current));

	err = vmak_ring_register(vs);
	if (err) {
		sock->sk = NULL;
		sk_free(sk);
		return err;
	}
	return 0;
}

static struct net_proto_family vmak_family_ops __ro_after_init = {
	.create	= vmak_create,
	.owner	= THIS_MODULE,
};

int __init vmak_sock_init(void)
{
	int err;

	vmak_ops = vmak_proto_ops;
	vmak_ops.family = vmak_family;
	vmak_family_ops.family = vmak_family;

	err = proto_register(&vmak_proto, 0);
	if (err)
		return err;

	err = sock_register(&vmak_family_ops);
	if (err) {
		/* A module's init that fails with -EEXIST reads to modprobe
		 * as "already loaded", and the module loader of newer kernels
		 * (7.2) turns it into -EBUSY: say -EBUSY on every kernel.
		 */
		if (err == -EEXIST) {
			pr_err("socket family %d is taken by another module; load with family=N\n",
			       vmak_family);
			err = -EBUSY;
		} else {
			pr_err("sock_register(%d) failed: %d\n", vmak_family, err);
		}
		goto err_proto;
	}
	return 0;

err_proto:
	proto_unregister(&vmak_proto);
	return err;
}

void vmak_sock_exit(void)
{
	sock_unregister(vmak_family);
	proto_unregister(&vmak_proto);
}
