// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Per-socket counters in a shared file (vmak/sockstats.h), so that
 * vmakctl sockets can read them from outside. Created with the first
 * socket; without it (no /dev/shm, no memory) counters stay private.
 *
 * /dev/shm is writable by every user, so the file is made by us or not
 * at all: our own stale file is removed first, then the name is created
 * exclusively without following a link, and its owner checked. A file
 * another user planted under our name costs us our counters, never our
 * data (vmakctl, for its part, reads only regular files whose owner is
 * the process's).
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys.h"
#include "vma.h"
#include "stats.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct vmak_sockstats_hdr *hdr;
	struct vmak_sockstat *slot;
	size_t len;
	pid_t owner;
	char path[96];
	bool failed;
	uint32_t next;
} sh;

/* Files left by this user's processes that died without their exit. */
static void remove_stale(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(VMAK_SOCKSTATS_DIR);
	int pid;

	if (!d)
		return;
	while ((de = readdir(d))) {
		pid = vmak_sockstats_pid(de->d_name);
		snprintf(path, sizeof(path), "%s/%s", VMAK_SOCKSTATS_DIR,
			 de->d_name);
		if (pid && vmak_sockstats_stale(pid) &&
		    !lstat(path, &st) && st.st_uid == geteuid())
			unlink(path);
	}
	closedir(d);
}

static bool stats_open(void)
{
	struct stat st;
	int fd;

	if (sh.hdr || sh.failed)
		return sh.hdr;
	sh.failed = true;
	remove_stale();
	snprintf(sh.path, sizeof(sh.path), "%s/%s%d", VMAK_SOCKSTATS_DIR,
		 VMAK_SOCKSTATS_PREFIX, (int)getpid());
	/* ours from a process of this pid that died: it may go */
	if (!lstat(sh.path, &st) && st.st_uid == geteuid())
		unlink(sh.path);
	fd = vmak_sys_open(sh.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
			st.st_uid != geteuid())) {
		vmak_sys_close(fd);
		fd = -1;
		errno = EPERM;
	}
	if (fd < 0) {
		vlog(VLOG_DETAILS, "no per-socket counters for vmakctl: %s: %m",
		     sh.path);
		return false;
	}
	sh.len = sizeof(*sh.hdr) +
		 VMAK_SOCKSTATS_SLOTS * sizeof(struct vmak_sockstat);
	if (ftruncate(fd, (off_t)sh.len)) {
		vmak_sys_close(fd);
		unlink(sh.path);
		return false;
	}
	sh.hdr = mmap(NULL, sh.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	vmak_sys_close(fd);
	if (sh.hdr == MAP_FAILED) {
		sh.hdr = NULL;
		unlink(sh.path);
		return false;
	}
	sh.slot = (struct vmak_sockstat *)(sh.hdr + 1);
	sh.hdr->pid = (int32_t)getpid();
	sh.hdr->nslots = VMAK_SOCKSTATS_SLOTS;
	sh.hdr->version = VMAK_SOCKSTATS_VERSION;
	__atomic_store_n(&sh.hdr->magic, VMAK_SOCKSTATS_MAGIC, __ATOMIC_RELEASE);
	sh.owner = getpid();
	sh.failed = false;
	return true;
}

struct vmak_sockstat *vstats_slot_get(int fd, int family)
{
	struct vmak_sockstat *s = NULL;
	uint32_t i, k;

	pthread_mutex_lock(&lock);
	if (stats_open()) {
		for (i = 0; i < VMAK_SOCKSTATS_SLOTS; i++) {
			k = (sh.next + i) % VMAK_SOCKSTATS_SLOTS;
			if (!sh.slot[k].in_use) {
				s = &sh.slot[k];
				sh.next = k + 1;
				break;
			}
		}
	}
	if (s) {
		memset(s, 0, sizeof(*s));
		s->fd = fd;
		s->family = (uint16_t)family;
		__atomic_store_n(&s->in_use, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lock);
	return s;
}

void vstats_slot_put(struct vmak_sockstat *s)
{
	if (s)
		__atomic_store_n(&s->in_use, 0, __ATOMIC_RELEASE);
}

static void put_sa(const struct sockaddr_storage *ss, uint8_t *addr,
		   uint16_t *port)
{
	if (ss->ss_family == AF_INET) {
		memcpy(addr, &((const struct sockaddr_in *)ss)->sin_addr, 4);
		*port = ntohs(((const struct sockaddr_in *)ss)->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		memcpy(addr, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
		*port = ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	}
}

void vstats_addresses(struct vmak_sockstat *s, int fd, int rings, bool os_only)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (!s)
		return;
	s->rings = (uint16_t)rings;
	s->flags = os_only ? VMAK_SOCKSTAT_OS_ONLY : 0;
	if (!getsockname(fd, (struct sockaddr *)&ss, &len))
		put_sa(&ss, s->local_addr, &s->local_port);
	len = sizeof(ss);
	s->peer_port = 0;
	memset(s->peer_addr, 0, sizeof(s->peer_addr));
	if (!getpeername(fd, (struct sockaddr *)&ss, &len))
		put_sa(&ss, s->peer_addr, &s->peer_port);
}

void vstats_log(int fd, const struct vmak_sockstat_counters *c)
{
	if (c->rx_ring || c->rx_os || c->rx_drops || c->tx_ring || c->tx_os ||
	    c->rx_callback)
		vlog(VLOG_DETAILS, "fd %d: received %llu via rings, %llu via the kernel socket, %llu more taken by the receive callback; %llu dropped (queue full); sent %llu via rings, %llu via the kernel socket",
		     fd, (unsigned long long)c->rx_ring,
		     (unsigned long long)c->rx_os,
		     (unsigned long long)c->rx_callback,
		     (unsigned long long)c->rx_drops,
		     (unsigned long long)c->tx_ring,
		     (unsigned long long)c->tx_os);
}

void vstats_atfork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void vstats_atfork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

/* In the child of fork(): the file is the parent's. */
void vstats_atfork_child(void)
{
	if (sh.hdr)
		munmap(sh.hdr, sh.len);
	memset(&sh, 0, sizeof(sh));
	pthread_mutex_init(&lock, NULL);
}

__attribute__((destructor)) static void stats_exit(void)
{
	if (sh.hdr && sh.owner == getpid())
		unlink(sh.path);
}
