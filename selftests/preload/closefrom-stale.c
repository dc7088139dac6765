// SPDX-License-Identifier: GPL-2.0
/*
 * H5: closefrom() (glibc 2.34; daemons call it) closes a UDP socket; the
 * next open() gets its number, and that fd is the file's.
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
	closefrom(s);
	f = open("/dev/zero", O_RDWR);
	if (f < 0)
		pt_die("/dev/zero");
	printf("open gets the socket's number: %s\n", f == s ? "yes" : "no");
	PT_SHOW("write(file, \"hi\\n\", 3)", write(f, "hi\n", 3));
	PT_SHOW("read(file, b, 4)", read(f, b, 4));
	return 0;
}
