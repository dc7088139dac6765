// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Socket addresses, and the devices the module can hook. */
#include <ifaddrs.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "sys.h"
#include "addr.h"

const uint8_t *vaddr_bytes(const struct sockaddr *sa, int *alen)
{
	if (sa->sa_family == AF_INET) {
		*alen = 4;
		return (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
	}
	*alen = 16;
	return (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
}

bool vaddr_any(const struct sockaddr *sa)
{
	static const uint8_t zero[16];
	const uint8_t *a;
	int len;

	a = vaddr_bytes(sa, &len);
	return !memcmp(a, zero, (size_t)len);
}

bool vaddr_multicast(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *in6 = (const void *)sa;

	if (sa->sa_family == AF_INET)
		return IN_MULTICAST(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	return IN6_IS_ADDR_MULTICAST(&in6->sin6_addr) ||
	       (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
		IN_MULTICAST(ntohl(((const uint32_t *)&in6->sin6_addr)[3])));
}

uint16_t vaddr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	return 0;
}

void vaddr_v4mapped(struct in6_addr *out, const void *a4)
{
	memset(out, 0, sizeof(*out));
	out->s6_addr[10] = 0xff;
	out->s6_addr[11] = 0xff;
	memcpy(&out->s6_addr[12], a4, 4);
}

bool vaddr_mapped(const struct sockaddr *sa, socklen_t len,
		  struct sockaddr_in6 *out)
{
	memset(out, 0, sizeof(*out));
	out->sin6_family = AF_INET6;
	if (sa && sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;

		vaddr_v4mapped(&out->sin6_addr, &in->sin_addr);
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

uint16_t vaddr_local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	return vaddr_port((struct sockaddr *)&ss);
}

int vaddr_devices(int *idx, int max)
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

int vaddr_device_of(const struct sockaddr *sa)
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
	want = vaddr_bytes(sa, &wlen);
	for (p = ifa; p; p = p->ifa_next) {
		if (!p->ifa_addr || p->ifa_addr->sa_family != sa->sa_family)
			continue;
		have = vaddr_bytes(p->ifa_addr, &hlen);
		if (hlen == wlen && !memcmp(want, have, (size_t)wlen)) {
			idx = (int)if_nametoindex(p->ifa_name);
			break;
		}
	}
	freeifaddrs(ifa);
	return idx;
}

uint32_t vaddr_device_v4(int ifindex)
{
	struct ifreq ifr;
	uint32_t a = 0;
	int s;

	memset(&ifr, 0, sizeof(ifr));
	if (!if_indextoname((unsigned int)ifindex, ifr.ifr_name))
		return 0;
	s = vmak_sys_socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	if (!vmak_sys_ioctl(s, SIOCGIFADDR, (long)&ifr))
		a = ((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr.s_addr;
	vmak_sys_close(s);
	return a;
}
