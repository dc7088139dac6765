// SPDX-License-Identifier: GPL-2.0
/*
 * The extra API's edges that need no module (extra-api-1 X-M6, X-L1), as
 * libvma answers them: recvfrom_zcopy() with MSG_VMA_ZCOPY_FORCE on a UDP
 * socket the library does not offload is the kernel's recvfrom(), a copy
 * with *flags as they were; socketxtreme_poll() with no completions or a
 * count of 0 is EINVAL; a dummy send (VMA_SND_FLAGS_DUMMY) on it is
 * EINVAL and sends nothing. A plain run has no vma_get_api() and says so.
 */
#include <mellanox/vma_extra.h>

#include "pt.h"

int main(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct vma_completion_t c[1];
	struct vma_api_t *api = NULL;
	socklen_t len = sizeof(api);
	int s, t, flags, n;
	char buf[64];

	setenv("VMA_SOCKETXTREME", "1", 1);	/* before the library looks */
	if (getsockopt(-1, SOL_SOCKET, SO_VMA_GET_API, &api, &len) || !api) {
		printf("ok - no vma_get_api() here (the C library alone)\n");
		return 0;
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	t = socket(AF_INET, SOCK_DGRAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	len = sizeof(a);
	if (s < 0 || t < 0 || bind(s, (void *)&a, sizeof(a)) ||
	    getsockname(s, (void *)&a, &len) ||
	    sendto(t, "hello", 5, 0, (void *)&a, sizeof(a)) != 5) {
		printf("not ok - set-up: %s\n", pt_ename(errno));
		return 1;
	}
	usleep(10000);
	flags = MSG_VMA_ZCOPY_FORCE | MSG_DONTWAIT;
	n = api->recvfrom_zcopy(s, buf, sizeof(buf), &flags, NULL, NULL);
	printf("%s - recvfrom_zcopy(MSG_VMA_ZCOPY_FORCE) on a socket not offloaded: a copy (%d, flags as given: %s)\n",
	       n == 5 && !memcmp(buf, "hello", 5) &&
	       flags == (MSG_VMA_ZCOPY_FORCE | MSG_DONTWAIT) ? "ok" : "not ok",
	       n, flags == (MSG_VMA_ZCOPY_FORCE | MSG_DONTWAIT) ? "yes" : "no");
	errno = 0;
	n = api->socketxtreme_poll(s, NULL, 0, 0);
	printf("%s - socketxtreme_poll(fd, NULL, 0): -1 EINVAL (%d %s)\n",
	       n == -1 && errno == EINVAL ? "ok" : "not ok", n, pt_ename(errno));
	errno = 0;
	n = api->socketxtreme_poll(s, c, 0, 0);
	printf("%s - socketxtreme_poll(fd, c, 0): -1 EINVAL (%d %s)\n",
	       n == -1 && errno == EINVAL ? "ok" : "not ok", n, pt_ename(errno));
	/*
	 * A dummy send on a socket the library does not offload: EINVAL, as
	 * libvma's interposers answer, and nothing sent (s would receive it)
	 */
	errno = 0;
	n = (int)sendto(t, "dummy", 5, VMA_SND_FLAGS_DUMMY, (void *)&a,
			sizeof(a));
	printf("%s - sendto(VMA_SND_FLAGS_DUMMY) on a socket not offloaded: -1 EINVAL (%d %s)\n",
	       n == -1 && errno == EINVAL ? "ok" : "not ok", n, pt_ename(errno));
	errno = 0;
	n = (int)send(t, "dummy", 5, VMA_SND_FLAGS_DUMMY);
	printf("%s - send(VMA_SND_FLAGS_DUMMY): -1 EINVAL (%d %s)\n",
	       n == -1 && errno == EINVAL ? "ok" : "not ok", n, pt_ename(errno));
	usleep(10000);
	n = (int)recv(s, buf, sizeof(buf), MSG_DONTWAIT);
	printf("%s - no dummy reached the receiver (%d %s)\n",
	       n == -1 && errno == EAGAIN ? "ok" : "not ok", n, pt_ename(errno));
	close(s);
	close(t);
	return 0;
}
