// SPDX-License-Identifier: GPL-2.0
/*
 * With libvmak in the process, each C library entry point that receives
 * from, waits on, sends on or closes a socket must resolve to libvmak's
 * definition: a call that goes to the C library directly bypasses the
 * library's bookkeeping (an offloaded socket's queue, its epoll data, its
 * fd table slot). On the host nothing else tells such a gap from a
 * working call; this is the check that does. Skipped without libvmak.
 */
#include <dlfcn.h>

#include "pt.h"

int main(void)
{
	static const char *const names[] = {
		"recv", "recvfrom", "recvmsg", "recvmmsg", "read", "readv",
		"__recv_chk", "__recvfrom_chk", "__read_chk",
		"poll", "ppoll", "__poll_chk", "__ppoll_chk", "select",
		"pselect", "epoll_wait", "epoll_pwait", "epoll_pwait2",
		"epoll_ctl",
		"send", "sendto", "sendmsg", "sendmmsg", "write", "writev",
		"socket", "bind", "connect", "setsockopt", "ioctl", "fcntl",
		"close", "dup", "dup2", "dup3",
	};
	char missing[1024] = "";
	unsigned int i, n = 0;
	Dl_info info;
	void *fn;

	pt_init(10);
	if (!pt_vmak_loaded()) {
		pt_ok(true, "# SKIP libvmak is not in this process");
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		fn = dlsym(RTLD_DEFAULT, names[i]);
		if (fn && dladdr(fn, &info) && info.dli_fname &&
		    strstr(info.dli_fname, "libvmak"))
			continue;
		n++;
		snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
			 " %s", names[i]);
	}
	pt_ok(!n, "%u of %zu entry points resolve to the C library, not libvmak:%s",
	      n, ARRAY_SIZE(names), n ? missing : " none");
	return 0;
}
