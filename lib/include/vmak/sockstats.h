/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Per-socket counters of the transparent offload, readable from outside
 * the process (vmakctl sockets): each process using it keeps one file,
 * VMAK_SOCKSTATS_DIR "/" VMAK_SOCKSTATS_PREFIX "<pid>", mode 0600, mapped
 * shared; the process updates the counters in place and removes the file
 * when it exits. A file whose pid is gone is stale (the process died).
 */
#ifndef _VMAK_SOCKSTATS_H
#define _VMAK_SOCKSTATS_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define VMAK_SOCKSTATS_DIR	"/dev/shm"
#define VMAK_SOCKSTATS_PREFIX	"vmak-sockets."
#define VMAK_SOCKSTATS_MAGIC	0x766d6b73U	/* "vmks" */
#define VMAK_SOCKSTATS_VERSION	2	/* 2: rx_callback */
#define VMAK_SOCKSTATS_SLOTS	1024

struct vmak_sockstats_hdr {
	uint32_t magic;
	uint32_t version;
	int32_t pid;
	uint32_t nslots;
};

/* Counters only grow while the slot is in use. */
struct vmak_sockstat_counters {
	uint64_t rx_ring;	/* datagrams received through rings */
	uint64_t rx_os;		/* ... through the kernel socket */
	uint64_t rx_drops;	/* dropped: the socket's ring queue was full */
	uint64_t tx_ring;	/* sent through TX rings (0: not yet offloaded) */
	uint64_t tx_os;		/* sent through the kernel socket (counted
				 * once sends are interposed)
				 */
	uint64_t rx_callback;	/* of rx_ring's kind, but taken by the
				 * receive callback (VMA_PACKET_DROP or
				 * _HOLD), never by a receive call
				 */
};

#define VMAK_SOCKSTAT_OS_ONLY	(1U << 0)	/* back on the kernel for good */

struct vmak_sockstat {
	uint32_t in_use;	/* 1 while the socket is open */
	int32_t fd;
	uint16_t family;	/* AF_INET, AF_INET6 */
	uint16_t local_port;	/* host order */
	uint16_t peer_port;	/* host order, 0: not connected */
	uint16_t rings;		/* rings steering into it */
	uint32_t flags;		/* VMAK_SOCKSTAT_* */
	uint8_t local_addr[16];	/* IPv4 in the first 4 bytes */
	uint8_t peer_addr[16];
	struct vmak_sockstat_counters c;
};

/* The pid a file name in VMAK_SOCKSTATS_DIR is for; 0 if not such a file. */
static inline int vmak_sockstats_pid(const char *name)
{
	size_t n = strlen(VMAK_SOCKSTATS_PREFIX);
	int pid;

	if (strncmp(name, VMAK_SOCKSTATS_PREFIX, n))
		return 0;
	pid = atoi(name + n);
	return pid > 0 ? pid : 0;
}

/* The file of a process that is gone (died before removing it). */
static inline int vmak_sockstats_stale(int pid)
{
	return kill(pid, 0) && errno == ESRCH;
}

#endif /* _VMAK_SOCKSTATS_H */
