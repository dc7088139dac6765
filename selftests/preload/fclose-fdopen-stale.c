// SPDX-License-Identifier: GPL-2.0
/*
 * H5: fclose() of a stream fdopen()ed on a UDP socket closes the socket
 * inside the C library; the next open() gets its number, and that fd is
 * the file's.
 */
#include <fcntl.h>

#include "pt.h"

int main(void)
{
	struct sockaddr_in a;
	char b[4];
	FILE *fp;
	int s, f;

	pt_init(10);
	s = pt_udp(&a);
	fp = fdopen(s, "r+");
	if (!fp)
		pt_die("fdopen");
	PT_SHOW("fclose(fdopen(sock))", fclose(fp));
	f = open("/dev/zero", O_RDWR);
	if (f < 0)
		pt_die("/dev/zero");
	printf("open gets the socket's number: %s\n", f == s ? "yes" : "no");
	PT_SHOW("write(file, \"hi\\n\", 3)", write(f, "hi\n", 3));
	PT_SHOW("read(file, b, 4)", read(f, b, 4));
	return 0;
}
