// SPDX-License-Identifier: GPL-2.0
/*
 * H5: close_range() closes a UDP socket; the next open() gets its number.
 * That fd is a file with no history: write() and read() on it are the
 * file's.
 */
#include <fcntl.h>

#include "pt.h"

int main(void)
{
	struct sockaddr_in a;
	char b[4];
	int s, f;

	pt_init(10);
	s = pt_udp(&a);
	PT_SHOW("close_range(sock, sock, 0)", close_range(s, s, 0));
	f = open("/dev/zero", O_RDWR);
	if (f < 0)
		pt_die("/dev/zero");
	printf("open gets the socket's number: %s\n", f == s ? "yes" : "no");
	PT_SHOW("write(file, \"hi\\n\", 3)", write(f, "hi\n", 3));
	PT_SHOW("read(file, b, 4)", read(f, b, 4));
	return 0;
}
