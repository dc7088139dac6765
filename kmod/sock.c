// SPDX-License-Identifier: GPL-2.0
/*
 * The vmak socket family: socket creation, release and the proto_ops table.
 */
#include <linux/module.h>
#include <linux/net.h>
#include <net/sock.h>

#include "vmak.h"

struct vmak_sock {
	struct sock sk;		/* must be first */
};

static struct proto vmak_proto = {
	.name		= "VMAK",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct vmak_sock),
};

static int vmak_release(struct socket *sock)
{
	struct sock *sk = sock->sk;

	if (!sk)
		return 0;

	sock_orphan(sk);
	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

static const struct proto_ops vmak_proto_ops = {
	.family		= 0,	/* set from the module parameter at init */
	.owner		= THIS_MODULE,
	.release	= vmak_release,
	.bind		= sock_no_bind,
	.connect	= sock_no_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= sock_no_getname,
	.poll		= datagram_poll,
	.ioctl		= sock_no_ioctl,
	.listen		= sock_no_listen,
	.shutdown	= sock_no_shutdown,
	.sendmsg	= sock_no_sendmsg,
	.recvmsg	= sock_no_recvmsg,
	.mmap		= sock_no_mmap,
};

static struct proto_ops vmak_ops __ro_after_init;

static int vmak_create(struct net *net, struct socket *sock, int protocol,
		       int kern)
{
	struct sock *sk;

	if (sock->type != SOCK_RAW)
		return -ESOCKTNOSUPPORT;
	if (protocol != VMAK_PROTO)
		return -EPROTONOSUPPORT;

	sk = sk_alloc(net, vmak_family, GFP_KERNEL, &vmak_proto, kern);
	if (!sk)
		return -ENOBUFS;

	sock->ops = &vmak_ops;
	sock->state = SS_UNCONNECTED;
	sock_init_data(sock, sk);
	sk->sk_family = vmak_family;
	sock_set_flag(sk, SOCK_RCU_FREE);
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
		if (err == -EEXIST)
			pr_err("socket family %d is taken by another module; load with family=N\n",
			       vmak_family);
		else
			pr_err("sock_register(%d) failed: %d\n", vmak_family, err);
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
