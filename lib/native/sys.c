// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The C library's socket calls, resolved once (sys.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys.h"

#define VMAK_SYS_POINTER(ret, name, params, args) ret (*name) params;
#define VMAK_SYS_VPOINTER(ret, name, params, args) ret (*name)(int, ...);
static struct {
	VMAK_SYS_CALLS(VMAK_SYS_POINTER)
	VMAK_SYS_VCALLS(VMAK_SYS_VPOINTER)
	VMAK_SYS_OPT_CALLS(VMAK_SYS_POINTER)
	int (*open)(const char *, int, ...);
	int (*open64)(const char *, int, ...);
	int (*creat)(const char *, mode_t);
	int (*creat64)(const char *, mode_t);
	int (*openat)(int, const char *, int, ...);
	int (*openat64)(int, const char *, int, ...);
} sys;
#undef VMAK_SYS_POINTER
#undef VMAK_SYS_VPOINTER

static pthread_once_t sys_once = PTHREAD_ONCE_INIT;

/*
 * A C library without one of these names cannot run us at all: say which
 * and stop, as the dynamic linker would for a missing symbol.
 */
static void *sys_lookup(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);
	char msg[96];
	int n;

	if (!fn) {
		n = snprintf(msg, sizeof(msg),
			     "libvmak: the C library has no %s()\n", name);
		/* write() may be ours, and nothing is resolved yet */
		if (n > 0 && syscall(SYS_write, STDERR_FILENO, msg, (size_t)n) < 0)
			n = 0;
		abort();
	}
	return fn;
}

static void sys_resolve(void)
{
#define VMAK_SYS_RESOLVE(ret, name, params, args)			\
	*(void **)&sys.name = sys_lookup(#name);
#define VMAK_SYS_RESOLVE_OPT(ret, name, params, args)			\
	*(void **)&sys.name = dlsym(RTLD_NEXT, #name);
	VMAK_SYS_CALLS(VMAK_SYS_RESOLVE)
	VMAK_SYS_VCALLS(VMAK_SYS_RESOLVE)
	VMAK_SYS_OPEN_CALLS(VMAK_SYS_RESOLVE)
	VMAK_SYS_OPT_CALLS(VMAK_SYS_RESOLVE_OPT)
#undef VMAK_SYS_RESOLVE
#undef VMAK_SYS_RESOLVE_OPT
}

#define VMAK_SYS_DEFINE(ret, name, params, args)			\
ret vmak_sys_##name params						\
{									\
	pthread_once(&sys_once, sys_resolve);				\
	return sys.name args;						\
}
VMAK_SYS_CALLS(VMAK_SYS_DEFINE)
VMAK_SYS_VCALLS(VMAK_SYS_DEFINE)
VMAK_SYS_OPEN_CALLS(VMAK_SYS_DEFINE)
#undef VMAK_SYS_DEFINE

#define VMAK_SYS_DEFINE_OPT(ret, name, params, args)			\
ret vmak_sys_##name params						\
{									\
	pthread_once(&sys_once, sys_resolve);				\
	if (!sys.name) {						\
		errno = ENOSYS;						\
		return -1;						\
	}								\
	return sys.name args;						\
}
VMAK_SYS_OPT_CALLS(VMAK_SYS_DEFINE_OPT)
#undef VMAK_SYS_DEFINE_OPT
