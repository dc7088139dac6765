// SPDX-License-Identifier: GPL-2.0
/*
 * tstamp-hold: keep one socket with receive timestamps on until killed.
 *
 * The first socket in the system that asks for receive timestamps
 * enables the kernel's timestamp static key, and the last one to close
 * disables it; each switch patches __netif_receive_skb_core. Tools such
 * as ping turn timestamps on and off, and under QEMU's software emulation
 * patching that code while another vCPU runs it under a packet flood has
 * crashed guests ("Oops: int3"). run-guest holds the key on for the whole
 * run so a test's ping never patches the receive path under traffic.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	int one = 1;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &one, sizeof(one))) {
		perror("tstamp-hold");
		return 1;
	}
	for (;;)
		pause();
}
