// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The process: its configuration, read once at the first UDP socket;
 * whether the module is there at all (looked up once: without it every
 * socket is the kernel's alone, at the kernel's cost); and fork().
 *
 * fork() from a program with other threads: the prepare handler takes
 * the library's global locks (in the order vma.h gives), so that the
 * child starts with every list whole, and the child resets each object's
 * own locks, which another thread of the parent may have held. The child
 * keeps its objects, minus what belongs to the parent: the rings (their
 * rules keep steering into the parent's rings while it lives), what the
 * queues hold (the parent reads it), the eventfds and the registrations
 * of library fds in shared epoll sets. VMAK_FORK=kernel instead moves
 * every socket back to its kernel socket before the fork, so that all the
 * processes share one receive queue, as on plain sockets.
 *
 * The handlers are registered when the library is loaded, once for the
 * process image, and the first use runs init() under init_lock, which
 * the prepare handler takes first: a fork while another thread is in
 * init() waits for it, so a child never finds init() half done (glibc's
 * pthread_once() would have the child run it again, registering the
 * handlers twice; TSan's would leave the child waiting for ever).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vma.h"
#include "fd.h"
#include "sig.h"
#include "rings.h"
#include "demux.h"
#include "hold.h"
#include "api.h"
#include "stats.h"
#include "udp.h"
#include "iomux.h"
#include "vmak/vmak.h"

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int inited;
/* this thread holds init_lock: a handler on it must not wait for it */
static __thread bool initing;
static __thread bool fork_took;	/* the prepare handler took init_lock */
static bool usable;
static pid_t pid;

/* Threads with a rule of their own (thread_offload()); a short list. */
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vthread {
	pthread_t tid;
	bool offload;
} *threads;
static int nthreads, cthreads;

static void atfork_prepare(void)
{
	fork_took = !initing;	/* a handler's fork() inside init(): cannot */
	if (fork_took)
		pthread_mutex_lock(&init_lock);
	if (vconf.fork_kernel)
		vudp_all_to_os();
	vepoll_atfork_prepare();
	vrs_atfork_prepare();
	vfd_atfork_prepare();
	vstats_atfork_prepare();
	vsig_atfork_prepare();
}

static void atfork_parent(void)
{
	vsig_atfork_parent();
	vstats_atfork_parent();
	vfd_atfork_parent();
	vrs_atfork_parent();
	vepoll_atfork_parent();
	__atomic_store_n(&vfd_shared, 1, __ATOMIC_RELAXED);
	if (fork_took)
		pthread_mutex_unlock(&init_lock);
}

static void atfork_child(void)
{
	vsig_atfork_child();
	vstats_atfork_child();
	vfd_atfork_child();
	vepoll_atfork_child();
	vudp_atfork_child();
	vrs_atfork_child();
	vdemux_atfork_child();
	vhold_atfork_child();
	vplain_atfork_child();
	pthread_mutex_init(&threads_lock, NULL);
	if (inited)
		pid = (pid_t)syscall(SYS_getpid);
	__atomic_store_n(&vfd_shared, 1, __ATOMIC_RELAXED);
	pthread_mutex_init(&init_lock, NULL);
}

__attribute__((constructor)) static void loaded(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	vrs_umem_hook = vhold_init;
	vrs_fd_ops = &vringfd_ops;
	vfd_vforked = vproc_vforked;
}

static void init(void)
{
	int fam;

	pid = (pid_t)syscall(SYS_getpid);
	vconf_load();
	if (!vconf.offload)
		return;
	fam = vmak_family();
	if (fam < 0) {
		vlog(VLOG_WARNING, "UDP sockets stay on the kernel: %s",
		     fam == -ENOENT || fam == -EAFNOSUPPORT ?
		     "the vmak module is not loaded" : vmak_strerror(fam));
		return;
	}
	vrules_load();
	usable = true;
}

bool vproc_init(void)
{
	if (__atomic_load_n(&inited, __ATOMIC_ACQUIRE))
		return usable;
	if (initing)
		return false;	/* a signal handler, interrupting init() */
	initing = true;
	pthread_mutex_lock(&init_lock);
	if (!inited) {
		init();
		__atomic_store_n(&inited, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&init_lock);
	initing = false;
	return usable;
}

bool vproc_vforked(void)
{
	return pid && (pid_t)syscall(SYS_getpid) != pid;
}

int vproc_thread_offload(int offload, pthread_t tid)
{
	struct vthread *t;
	int i, err = 0;

	pthread_mutex_lock(&threads_lock);
	for (i = 0; i < nthreads; i++)
		if (pthread_equal(threads[i].tid, tid))
			break;
	if (i == nthreads) {
		if (nthreads == cthreads) {
			t = realloc(threads, sizeof(*t) * (size_t)(cthreads ? cthreads * 2 : 8));
			if (!t) {
				err = -ENOMEM;
				goto out;
			}
			threads = t;
			cthreads = cthreads ? cthreads * 2 : 8;
		}
		threads[nthreads++].tid = tid;
	}
	threads[i].offload = offload != 0;
out:
	pthread_mutex_unlock(&threads_lock);
	return err;
}

bool vproc_offload_here(void)
{
	pthread_t me;
	bool yes = true;
	int i;

	if (!__atomic_load_n(&nthreads, __ATOMIC_RELAXED))
		return true;
	me = pthread_self();
	pthread_mutex_lock(&threads_lock);
	for (i = 0; i < nthreads; i++)
		if (pthread_equal(threads[i].tid, me))
			yes = threads[i].offload;
	pthread_mutex_unlock(&threads_lock);
	return yes;
}
