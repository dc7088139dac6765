/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's kselftest harness (tools/testing/selftests/
 * kselftest_harness.h, taken at build time from Debian's linux-source-6.1
 * into build/ksft/; never copied into this tree), and what vmak's tests add
 * on top of it:
 *
 *   TEST_TIMEOUT(name, secs)   a TEST with its own time limit
 *   EXPECT_ERRNO / ASSERT_ERRNO(err, call)   call fails with errno err
 *   SKIP_ON_DEBUG_KERNEL(why)  for tests of speed-dependent behaviour
 *   time limits x5 on the debug kernel (VMAK_DEBUG_KERNEL=1, set by the VM
 *   runner), and a default of 60 s: the VM is emulated.
 *
 * One fix over the 6.1 harness: SKIP() leaves the test at once (6.1 goes
 * on to run the test body after a SKIP in FIXTURE_SETUP). It jumps back
 * into the harness as a failed ASSERT does, without the failure: the
 * teardown runs if the setup had completed, and the test reports SKIP.
 */
#ifndef _VMAK_HARNESS_H
#define _VMAK_HARNESS_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kselftest_harness.h>

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 60

#define TEST_TIMEOUT(name, secs)					\
	static struct __test_metadata _##name##_object;			\
	static void __attribute__((constructor))			\
	__vmak_timeout_##name(void)					\
	{								\
		_##name##_object.timeout = (secs);			\
	}								\
	TEST(name)

#undef SKIP
#define SKIP(statement, fmt, ...) do {					\
	snprintf(_metadata->results->reason,				\
		 sizeof(_metadata->results->reason), fmt, ##__VA_ARGS__); \
	fprintf(TH_LOG_STREAM, "#      SKIP      %s\n",			\
		_metadata->results->reason);				\
	_metadata->passed = 1;						\
	_metadata->skip = 1;						\
	_metadata->trigger = 0;						\
	longjmp(_metadata->env, 1);					\
	statement;							\
} while (0)

static inline int __vmak_debug_kernel(void)
{
	const char *e = getenv("VMAK_DEBUG_KERNEL");

	return e && *e == '1';
}

#define SKIP_ON_DEBUG_KERNEL(why) do {					\
	if (__vmak_debug_kernel())					\
		SKIP(return, "debug kernel: %s", why);			\
} while (0)

/* A call that must fail (return -1) with errno err. */
#define __EXPECT_ERRNO(err, call, is_assert) do {			\
	long __r;							\
	int __e;							\
	errno = 0;							\
	__r = (long)(call);						\
	__e = errno;							\
	if (is_assert)							\
		__INC_STEP(_metadata);					\
	if (__r != -1 || __e != (err)) {				\
		__TH_LOG("%s: expected -1/%s, got %ld/%s", #call,	\
			 strerror(err), __r, __e ? strerror(__e) : "0"); \
		_metadata->passed = 0;					\
		_metadata->trigger = 1;					\
	}								\
} while (0); OPTIONAL_HANDLER(is_assert)
#define ASSERT_ERRNO(err, call)	__EXPECT_ERRNO(err, call, 1)
#define EXPECT_ERRNO(err, call)	__EXPECT_ERRNO(err, call, 0)

/* Stretch every time limit on the debug kernel, then run as the kernel's. */
static inline int __vmak_harness_run(int argc, char **argv)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t;

	if (__vmak_debug_kernel())
		for (f = __fixture_list; f; f = f->next)
			for (t = f->tests; t; t = t->next)
				t->timeout *= 5;
	return test_harness_run(argc, argv);
}

#undef TEST_HARNESS_MAIN
#define TEST_HARNESS_MAIN						\
	static void __attribute__((constructor))			\
	__constructor_order_last(void)					\
	{								\
		if (!__constructor_order)				\
			__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD; \
	}								\
	int main(int argc, char **argv)					\
	{								\
		return __vmak_harness_run(argc, argv);			\
	}

#endif /* _VMAK_HARNESS_H */
