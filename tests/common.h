/* Shared by the cmocka tests: a fresh context per test, and paths. */
#ifndef TESSEL_TESTS_COMMON_H
#define TESSEL_TESTS_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <tessel/tessel.h>

/* The tests read the IR's fields, which the public headers hide. */
#include "backends/ir.h"
#include "dsl/ir.h"
#include "metatemplates/ir.h"

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

/* A fresh path "tessel-PREFIX-PID-N-TAG" in the temporary folder, with
 * no file there (not freed: a test). */
static inline char *ts_test_temp_path(const char *prefix, const char *tag)
{
	static int n;
	char *p = malloc(512);

	snprintf(p, 512, "%s/tessel-%s-%ld-%d-%s",
		getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", prefix,
		(long)getpid(), n++, tag);
	unlink(p);
	return p;
}

/* Remove "path" and what it holds, if it is there (a test's scratch
 * folder). */
static inline void ts_test_remove_tree(const char *path)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", path);
}

/* Assert that the last error of "ctx" contains "part". */
#define assert_error_contains(ctx, part) do { \
	const char *msg_ = ts_ctx_error(ctx); \
	if (!msg_ || !strstr(msg_, (part))) \
		fail_msg("expected an error containing \"%s\", got \"%s\"", \
			(part), msg_ ? msg_ : "(none)"); \
} while (0)

/* Run the compiled "m" of "dag" on the inputs "in" with fresh outputs
 * and compare each output with "want" (the interpreter's): NULL when all
 * agree, else the name of the first that differs, its difference in
 * "*err".  Fails the test when the kernel does not run. */
static inline const char *ts_test_run_compare(ts_ctx *ctx, ts_module *m,
	const ts_dag *dag, ts_array *const *in, ts_array *const *want,
	double *err)
{
	ts_array *args[64];
	int n = 0;

	assert_true(dag->ninputs + dag->noutputs <= 64);
	for (int i = 0; i < dag->ninputs; i++)
		args[n++] = in[i];
	for (int i = 0; i < dag->noutputs; i++)
		args[n++] = ts_array_for_tensor(ctx, dag->outputs[i]);
	if (ts_module_run(m, args) < 0)
		fail_msg("running '%s': %s", dag->name ? dag->name : "kernel",
			ts_ctx_error(ctx));
	for (int i = 0; i < dag->noutputs; i++)
		if (!ts_array_close(args[dag->ninputs + i], want[i], err))
			return dag->outputs[i]->name;
	return NULL;
}

/* Skip the calling test, with a printed reason, when there is no CUDA
 * device. */
#define TS_NEED_CUDA_DEVICE(ctx) do { \
	if (!ts_cuda_available(ctx)) { \
		print_message("skipping: no CUDA device (%s)\n", \
			ts_ctx_error(ctx)); \
		skip(); \
	} \
} while (0)

#define TS_TEST(f) cmocka_unit_test_setup_teardown(f, ts_test_setup, \
	ts_test_teardown)

#endif
