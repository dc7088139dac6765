// SPDX-License-Identifier: GPL-2.0
/*
 * M11: another user can make /dev/shm/vmak-sockets.<pid> (mode 0666)
 * before a root program with that pid starts. The program must not take
 * that file for its per-socket counters: it stays as its owner left it,
 * empty, while the program has a bound UDP socket. (With
 * fs.protected_regular set, the kernel already refuses root's open;
 * the probe says so and passes.) Needs root.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "pt.h"

#define NOBODY 65534

int main(void)
{
	int go[2], ready[2], fd, pr = -1;
	char path[64], c;
	struct sockaddr_in a;
	struct stat st;
	FILE *f;
	pid_t pid;

	pt_init(10);
	if (geteuid()) {
		pt_ok(true, "# SKIP needs root (a root program and another user's file)");
		return 0;
	}
	f = fopen("/proc/sys/fs/protected_regular", "re");
	if (f) {
		if (fscanf(f, "%d", &pr) != 1)
			pr = -1;
		fclose(f);
	}
	if (pipe(go) || pipe(ready))
		pt_die("pipe");
	pid = fork();	/* before any socket: the child starts fresh */
	if (pid < 0)
		pt_die("fork");
	if (!pid) {
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		pt_udp(&a);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	/* the other user's file, named for the child */
	snprintf(path, sizeof(path), "/dev/shm/vmak-sockets.%d", (int)pid);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0666);
	if (fd < 0 || fchown(fd, NOBODY, NOBODY) || fchmod(fd, 0666))
		pt_die("%s", path);
	close(fd);
	if (write(go[1], "g", 1) != 1 || read(ready[0], &c, 1) != 1)
		pt_die("child");
	if (stat(path, &st))
		st.st_size = -1;
	pt_ok(st.st_size == 0 && st.st_uid == NOBODY,
	      "a root program with a bound UDP socket leaves alone the file another user made for its pid (size %lld, owner %d; fs.protected_regular=%d)",
	      (long long)st.st_size, (int)st.st_uid, pr);
	if (write(go[1], "g", 1) != 1)
		pt_die("child");
	waitpid(pid, NULL, 0);
	unlink(path);
	return 0;
}
