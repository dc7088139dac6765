// SPDX-License-Identifier: GPL-2.0
/*
 * H5: syscall(SYS_close) closes a UDP socket without the C library's
 * close(); the next pipe() gets its number, and that fd is the pipe's.
 */
#include "pt.h"

int main(void)
{
	struct sockaddr_in a;
	int s, p[2];
	char b[4];

	pt_init(10);
	s = pt_udp(&a);
	PT_SHOW("syscall(SYS_close, sock)", syscall(SYS_close, s));
	if (pipe(p))
		pt_die("pipe");
	printf("pipe gets the socket's number: %s\n",
	       p[0] == s || p[1] == s ? "yes" : "no");
	PT_SHOW("write(pipe, \"hi\\n\", 3)", write(p[1], "hi\n", 3));
	PT_SHOW("read(pipe, b, 4)", read(p[0], b, 4));
	return 0;
}
