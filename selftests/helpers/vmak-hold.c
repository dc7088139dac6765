// SPDX-License-Identifier: GPL-2.0
/*
 * vmak-hold: open N vmak sockets, say "ready", and keep them until killed
 * or until stdin closes. Lets shell tests hold the module busy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmak/vmak.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	int fam = vmak_family();
	char c;

	if (fam < 0) {
		fprintf(stderr, "vmak-hold: %s\n", vmak_strerror(fam));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		if (socket(fam, SOCK_RAW, 0) < 0) {
			perror("vmak-hold: socket");
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
