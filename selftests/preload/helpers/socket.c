// SPDX-License-Identifier: GPL-2.0
/*
 * The smallest program that loads libvmak's configuration: one UDP
 * socket. Prints its effective uid, so that env-setuid-log can tell that
 * the set-user-ID bit took effect. Built plain and linked with libvmak.a.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	printf("euid %d socket %s\n", (int)geteuid(), s < 0 ? "failed" : "ok");
	return 0;
}
