/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Socket addresses and the devices the module can hook (addr.c). */
#ifndef _VMAK_VMA_ADDR_H
#define _VMAK_VMA_ADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "internal.h"

/* The address bytes of an AF_INET or AF_INET6 address, and their length. */
const uint8_t *vaddr_bytes(const struct sockaddr *sa, int *alen) VMAK_HIDDEN;
bool vaddr_any(const struct sockaddr *sa) VMAK_HIDDEN;
bool vaddr_multicast(const struct sockaddr *sa) VMAK_HIDDEN;
/* The port, network order (0 for another family). */
uint16_t vaddr_port(const struct sockaddr *sa) VMAK_HIDDEN;
/*
 * sa (len bytes) as an IPv6 address, IPv4 mapped, with its port; false
 * (and *out zeroed) for anything but AF_INET/AF_INET6 long enough.
 */
bool vaddr_mapped(const struct sockaddr *sa, socklen_t len,
		  struct sockaddr_in6 *out) VMAK_HIDDEN;
/* The IPv4 address a as ::ffff:a. */
void vaddr_v4mapped(struct in6_addr *out, const void *a4) VMAK_HIDDEN;
/* The local port of fd, network order; 0 if unbound or not IP. */
uint16_t vaddr_local_port(int fd) VMAK_HIDDEN;

#define VADDR_MAX_DEV	8
/* Up, non-loopback, Ethernet-type devices (what the module can hook). */
int vaddr_devices(int *idx, int max) VMAK_HIDDEN;
/* The device holding a local unicast address, 0 if none. */
int vaddr_device_of(const struct sockaddr *sa) VMAK_HIDDEN;
/* A device's first IPv4 address (network order), 0 if none. */
uint32_t vaddr_device_v4(int ifindex) VMAK_HIDDEN;

#endif /* _VMAK_VMA_ADDR_H */
