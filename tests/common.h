/* Shared by the cmocka tests: a fresh context per test, and paths. */
#ifndef TESSEL_TESTS_COMMON_H
#define TESSEL_TESTS_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <tessel/tessel.h>

/* Fixture: "*state" is a fresh ts_ctx with seed 1. */
static inline int ts_test_setup(void **state)
{
	ts_ctx *ctx = ts_ctx_alloc();

	if (!ctx)
		return -1;
	ts_ctx_set_seed(ctx, 1);
	*state = ctx;
	return 0;
}

static inline int ts_test_teardown(void **state)
{
	ts_ctx_free(*state);
	return 0;
}

/* The source tree, for examples and data files. */
static inline const char *ts_test_srcdir(void)
{
	const char *d = getenv("TS_SRCDIR");

	return d ? d : TS_SRCDIR;
}

/* Assert that the last error of "ctx" contains "part". */
#define assert_error_contains(ctx, part) do { \
	const char *msg_ = ts_ctx_error(ctx); \
	if (!msg_ || !strstr(msg_, (part))) \
		fail_msg("expected an error containing \"%s\", got \"%s\"", \
			(part), msg_ ? msg_ : "(none)"); \
} while (0)

#define TS_TEST(f) cmocka_unit_test_setup_teardown(f, ts_test_setup, \
	ts_test_teardown)

#endif
