/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small test harness in the style of the kernel's kselftest_harness.h,
 * written for vmak: TEST, FIXTURE, FIXTURE_VARIANT, TEST_F, ASSERT_* (stop
 * the test), EXPECT_* (record and go on), SKIP. Every test runs in its own
 * child process with a time limit, so a crash or a hang fails that test
 * only. Output is TAP; the exit status is 1 if any test failed.
 *
 *   ./test            run all
 *   ./test -t NAME    run the tests whose full name contains NAME
 *   ./test -l         list
 */
#ifndef _VMAK_HARNESS_H
#define _VMAK_HARNESS_H

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct __test_meta {
	const char *fixture;	/* NULL for plain TESTs */
	const char *name;
	void (*fn)(struct __test_meta *t, const void *variant);
	const struct __fixture_meta *fixture_meta;
	unsigned int timeout;
	struct __test_meta *next;
	/* per run */
	const char *variant_name;
	bool failed;
	bool skipped;
	char skip_reason[256];
};

struct __variant_meta {
	const char *name;
	const void *data;
	struct __variant_meta *next;
};

struct __fixture_meta {
	const char *name;
	struct __variant_meta *variants;
	struct __variant_meta **tail;
};

static struct __test_meta *__tests, **__tests_tail = &__tests;
static struct __test_meta *__current;

static inline void __register_test(struct __test_meta *t)
{
	*__tests_tail = t;
	__tests_tail = &t->next;
}

#define TH_LOG(fmt, ...) \
	fprintf(stderr, "#   %s:%d: " fmt "\n", __FILE__, __LINE__, ##__VA_ARGS__)

#define TEST_TIMEOUT_DEFAULT 60

/*
 * On the debug kernel (KASAN, lockdep; VMAK_DEBUG_KERNEL=1, set by the VM
 * runner) everything runs several times slower: time limits stretch five
 * times, and tests of speed-dependent behaviour skip with
 * SKIP_ON_DEBUG_KERNEL.
 */
static inline int __debug_kernel(void)
{
	const char *e = getenv("VMAK_DEBUG_KERNEL");

	return e && *e == '1';
}

static inline unsigned int __timeout_scale(void)
{
	return __debug_kernel() ? 5 : 1;
}
#define __U __attribute__((unused))

#define TEST(tn) TEST_TIMEOUT(tn, TEST_TIMEOUT_DEFAULT)
#define TEST_TIMEOUT(tn, secs) \
	static void __test_##tn(struct __test_meta *_metadata, const void *); \
	static struct __test_meta __meta_##tn = { \
		.name = #tn, .fn = __test_##tn, \
		.timeout = secs, \
	}; \
	static void __attribute__((constructor)) __reg_##tn(void) \
	{ __register_test(&__meta_##tn); } \
	static void __test_##tn(struct __test_meta *_metadata __U, \
				  const void *__unused_variant __U)

/* Fixtures: FIXTURE(f) { fields }; FIXTURE_SETUP(f) { self->... } */
#define FIXTURE(f) \
	static struct __fixture_meta __fixture_##f = { \
		.name = #f, .tail = &__fixture_##f.variants, \
	}; \
	struct __variant_data_##f; \
	struct __fixture_data_##f; \
	typedef struct __fixture_data_##f FIXTURE_DATA(f); \
	struct __fixture_data_##f
#define FIXTURE_DATA(f) __fixture_data_t_##f
#define FIXTURE_VARIANT(f) struct __variant_data_##f
#define FIXTURE_VARIANT_ADD(f, v) \
	static const struct __variant_data_##f __variant_##f##_##v; \
	static struct __variant_meta __vmeta_##f##_##v = { \
		.name = #v, .data = &__variant_##f##_##v, \
	}; \
	static void __attribute__((constructor)) __vreg_##f##_##v(void) \
	{ \
		*__fixture_##f.tail = &__vmeta_##f##_##v; \
		__fixture_##f.tail = &__vmeta_##f##_##v.next; \
	} \
	static const struct __variant_data_##f __variant_##f##_##v =
#define FIXTURE_SETUP(f) \
	static void __setup_##f(struct __test_meta *_metadata __U, \
				FIXTURE_DATA(f) *self __U, \
				const struct __variant_data_##f *variant __U)
#define FIXTURE_TEARDOWN(f) \
	static void __teardown_##f(struct __test_meta *_metadata __U, \
				   FIXTURE_DATA(f) *self __U, \
				   const struct __variant_data_##f *variant __U)

#define TEST_F_TIMEOUT(f, tn, secs) \
	static void __body_##f##_##tn(struct __test_meta *_metadata __U, \
					FIXTURE_DATA(f) *self __U, \
					const struct __variant_data_##f *variant __U); \
	static void __test_##f##_##tn(struct __test_meta *_metadata, \
					const void *v) \
	{ \
		FIXTURE_DATA(f) self; \
		memset(&self, 0, sizeof(self)); \
		__setup_##f(_metadata, &self, v); \
		if (!_metadata->failed && !_metadata->skipped) \
			__body_##f##_##tn(_metadata, &self, v); \
		__teardown_##f(_metadata, &self, v); \
	} \
	static struct __test_meta __meta_##f##_##tn = { \
		.fixture = #f, .name = #tn, .fn = __test_##f##_##tn, \
		.fixture_meta = &__fixture_##f, .timeout = secs, \
	}; \
	static void __attribute__((constructor)) __reg_##f##_##tn(void) \
	{ \
		__register_test(&__meta_##f##_##tn); \
	} \
	static void __body_##f##_##tn(struct __test_meta *_metadata __U, \
					FIXTURE_DATA(f) *self __U, \
					const struct __variant_data_##f *variant __U)
#define TEST_F(f, tn) TEST_F_TIMEOUT(f, tn, TEST_TIMEOUT_DEFAULT)

#define SKIP_ON_DEBUG_KERNEL(why) do { \
	if (__debug_kernel()) \
		SKIP(return, "debug kernel: %s", why); \
} while (0)

#define SKIP(statement, fmt, ...) do { \
	snprintf(_metadata->skip_reason, sizeof(_metadata->skip_reason), \
		 fmt, ##__VA_ARGS__); \
	_metadata->skipped = true; \
	statement; \
} while (0)

#define __EXPECT(exp, seen, op, is_assert) do { \
	/* __int128 holds every value of both signed and unsigned 64-bit \
	 * types, so mixed comparisons are exact. */ \
	__int128 __exp = (exp); \
	__int128 __seen = (seen); \
	if (!(__exp op __seen)) { \
		TH_LOG("expected %s (%" PRId64 ") %s %s (%" PRId64 ")%s%s", \
		       #exp, (int64_t)__exp, #op, #seen, (int64_t)__seen, \
		       errno ? ", errno: " : "", errno ? strerror(errno) : ""); \
		_metadata->failed = true; \
		if (is_assert) \
			_exit(1); \
	} \
} while (0)

#define ASSERT_EQ(e, s)	__EXPECT(e, s, ==, 1)
#define ASSERT_NE(e, s)	__EXPECT(e, s, !=, 1)
#define ASSERT_LT(e, s)	__EXPECT(e, s, <, 1)
#define ASSERT_LE(e, s)	__EXPECT(e, s, <=, 1)
#define ASSERT_GT(e, s)	__EXPECT(e, s, >, 1)
#define ASSERT_GE(e, s)	__EXPECT(e, s, >=, 1)
#define ASSERT_TRUE(c)	__EXPECT(0, !!(c), !=, 1)
#define ASSERT_FALSE(c)	__EXPECT(0, !!(c), ==, 1)
#define EXPECT_EQ(e, s)	__EXPECT(e, s, ==, 0)
#define EXPECT_NE(e, s)	__EXPECT(e, s, !=, 0)
#define EXPECT_LT(e, s)	__EXPECT(e, s, <, 0)
#define EXPECT_LE(e, s)	__EXPECT(e, s, <=, 0)
#define EXPECT_GT(e, s)	__EXPECT(e, s, >, 0)
#define EXPECT_GE(e, s)	__EXPECT(e, s, >=, 0)
#define EXPECT_TRUE(c)	__EXPECT(0, !!(c), !=, 0)
#define EXPECT_FALSE(c)	__EXPECT(0, !!(c), ==, 0)
#define __EXPECT_STREQ(e, s, is_assert) do { \
	if (strcmp((e), (s))) { \
		TH_LOG("expected \"%s\" == \"%s\"", (e), (s)); \
		_metadata->failed = true; \
		if (is_assert) \
			_exit(1); \
	} \
} while (0)
#define ASSERT_STREQ(e, s)	__EXPECT_STREQ(e, s, 1)
#define EXPECT_STREQ(e, s)	__EXPECT_STREQ(e, s, 0)
/* A syscall that must fail with errno err. */
#define __EXPECT_ERRNO(err, call, is_assert) do { \
	errno = 0; \
	long __r = (long)(call); \
	int __e = errno; \
	if (__r != -1 || __e != (err)) { \
		TH_LOG("%s: expected -1/%s, got %ld/%s", #call, \
		       strerror(err), __r, __e ? strerror(__e) : "0"); \
		_metadata->failed = true; \
		if (is_assert) \
			_exit(1); \
	} \
} while (0)
#define ASSERT_ERRNO(err, call)	__EXPECT_ERRNO(err, call, 1)
#define EXPECT_ERRNO(err, call)	__EXPECT_ERRNO(err, call, 0)

/* Exit codes of a test child. */
enum { __T_PASS = 0, __T_FAIL = 1, __T_SKIP = 4 };

static int __run_one(struct __test_meta *t, const struct __variant_meta *v,
		     int num)
{
	char full[256];
	int pipefd[2], status;
	pid_t pid;
	ssize_t n;

	snprintf(full, sizeof(full), "%s%s%s%s%s", t->fixture ? t->fixture : "",
		 t->fixture ? "." : "", v ? v->name : "", v ? "." : "", t->name);
	fflush(stdout);
	fflush(stderr);
	if (pipe(pipefd))
		return __T_FAIL;
	pid = fork();
	if (pid < 0)
		return __T_FAIL;
	if (pid == 0) {
		close(pipefd[0]);
		__current = t;
		t->variant_name = v ? v->name : NULL;
		alarm(t->timeout * __timeout_scale());
		t->fn(t, v ? v->data : NULL);
		if (t->skipped) {
			if (write(pipefd[1], t->skip_reason,
				  strlen(t->skip_reason)) < 0)
				_exit(__T_FAIL);
			_exit(__T_SKIP);
		}
		_exit(t->failed ? __T_FAIL : __T_PASS);
	}
	close(pipefd[1]);
	n = read(pipefd[0], t->skip_reason, sizeof(t->skip_reason) - 1);
	t->skip_reason[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);

	if (WIFEXITED(status) && WEXITSTATUS(status) == __T_SKIP) {
		printf("ok %d - %s # SKIP %s\n", num, full, t->skip_reason);
		return __T_SKIP;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == __T_PASS) {
		printf("ok %d - %s\n", num, full);
		return __T_PASS;
	}
	if (WIFSIGNALED(status))
		printf("#   %s: %s%s\n", full, strsignal(WTERMSIG(status)),
		       WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
	printf("not ok %d - %s\n", num, full);
	return __T_FAIL;
}

static inline int test_harness_run(int argc, char **argv)
{
	const char *filter = NULL;
	struct __test_meta *t;
	int opt, num = 0, failed = 0;
	bool list = false;

	while ((opt = getopt(argc, argv, "t:l")) != -1) {
		if (opt == 't')
			filter = optarg;
		else if (opt == 'l')
			list = true;
		else
			return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (t = __tests; t; t = t->next) {
		/* Variants register in constructors of their own: read late. */
		const struct __variant_meta *v = t->fixture_meta ?
			t->fixture_meta->variants : NULL;

		do {
			char full[256];

			snprintf(full, sizeof(full), "%s%s%s%s%s",
				 t->fixture ? t->fixture : "",
				 t->fixture ? "." : "", v ? v->name : "",
				 v ? "." : "", t->name);
			if (!filter || strstr(full, filter)) {
				if (list)
					printf("%s\n", full);
				else if (__run_one(t, v, ++num) == __T_FAIL)
					failed++;
			}
			v = v ? v->next : NULL;
		} while (v);
	}
	if (!list)
		printf("1..%d\n", num);
	return failed ? 1 : 0;
}

#define TEST_HARNESS_MAIN \
	int main(int argc, char **argv) { return test_harness_run(argc, argv); }

#endif /* _VMAK_HARNESS_H */
