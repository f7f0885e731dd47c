/* The entry points a binding uses (the Python package): objects of the
 * collector kept alive by a context, kernels compiled for arrays aligned
 * to their elements only and called on bare pointers, the schedule
 * tessel run --records chooses, tuning options set by their command-line
 * names. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <gc.h>

#include <tessel/records.h>
#include <tessel/search.h>
#include <tessel/tune.h>

#include "tests/common.h"

static const char *matmul_src =
	"input A: f32[8, 8]\n"
	"input B: f32[8, 8]\n"
	"output C[i: 8, j: 8] = sum(k: 8) A[i, k] * B[k, j]\n";

/* An object held only in memory from malloc survives collections while
 * its context keeps it. */
static void test_ctx_keep__survives_collections(void **state)
{
	ts_ctx *ctx = *state;
	char **holder = malloc(sizeof(*holder));

	*holder = GC_MALLOC_ATOMIC(64);
	strcpy(*holder, "kept");
	assert_int_equal(ts_ctx_keep(ctx, *holder), TS_OK);
	for (int i = 0; i < 200; i++)
		(void)GC_MALLOC(1 << 16);
	GC_gcollect();
	for (int i = 0; i < 200; i++)
		memset(GC_MALLOC_ATOMIC(64), 'x', 64);
	assert_string_equal(*holder, "kept");
	assert_int_equal(ts_ctx_keep(ctx, NULL), TS_ERROR);
	free(holder);
}

/* The float of "a" at "i" (f32). */
static float at(const ts_array *a, int64_t i)
{
	return ((const float *)a->data)[i];
}

/* Compile "dag" statically with "unaligned" and return the module. */
static ts_module *compile(ts_ctx *ctx, const ts_dag *dag, bool unaligned)
{
	ts_compile_options opt = ts_compile_options_default();
	ts_schedule *sch = ts_static_schedule(ctx, dag, ts_target_host(ctx));
	ts_func *f = sch ? ts_lower(ctx, dag, sch) : NULL;

	assert_non_null(f);
	opt.unaligned_args = unaligned;
	return ts_module_compile(ctx, f, &opt);
}

/* A kernel compiled with unaligned_args runs on data 4 bytes off a
 * 64-byte boundary, called through ts_module_call, and agrees with the
 * interpreter; ts_module_run then accepts such arrays too. */
static void test_module_call__unaligned_matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, matmul_src);
	ts_array **in = ts_dag_random_inputs(ctx, dag, 1), *want[2];
	ts_module *m = compile(ctx, dag, true);
	float *buf[3];
	void *ptrs[3];

	assert_non_null(m);
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	for (int i = 0; i < 3; i++) {
		buf[i] = (float *)GC_MALLOC_ATOMIC(65 * sizeof(float) + 64) + 1;
		ptrs[i] = buf[i];
		if (i < 2)
			memcpy(buf[i], in[i]->data, 64 * sizeof(float));
	}
	assert_int_not_equal((uintptr_t)ptrs[0] % 64, 0);
	ts_module_call(m, ptrs);
	for (int64_t k = 0; k < 64; k++)
		assert_float_equal(buf[2][k], at(want[0], k), 1e-5);
	ts_module_free(m);
}

/* Without unaligned_args, ts_module_run still refuses such data. */
static void test_module_run__aligned_kernel_refuses_unaligned(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, matmul_src);
	ts_array **in = ts_dag_random_inputs(ctx, dag, 1);
	ts_array *out = ts_array_for_tensor(ctx, dag->outputs[0]);
	ts_array *args[3] = { in[0], in[1], out };
	ts_module *m = compile(ctx, dag, false);

	assert_non_null(m);
	in[0]->data = (char *)in[0]->data + 4;
	assert_int_equal(ts_module_run(m, args), TS_ERROR);
	assert_error_contains(ctx, "its data is not 64-byte aligned");
	ts_module_free(m);
}

/* A log with no record for the workload: the static baseline, said. */
static void test_records_choose__no_record_is_static(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, NULL, matmul_src);
	const char *path = ts_test_temp_path("bindings", "log.jsonl");
	FILE *fp = fopen(path, "w");
	const char *why = NULL;
	ts_schedule *sch, *st;

	assert_non_null(fp);
	fclose(fp);
	sch = ts_records_choose(ctx, dag, path, 1, &why);
	st = ts_static_baseline(ctx, dag, ts_target_host(ctx), 1);
	assert_non_null(sch);
	assert_string_equal(ts_schedule_hash(sch), ts_schedule_hash(st));
	assert_non_null(strstr(why, "no valid record in"));
	assert_non_null(strstr(why, "using the static schedule"));
	assert_null(ts_records_choose(ctx, dag, "/nonexistent/log.jsonl", 1,
		NULL));
	assert_non_null(strstr(ts_ctx_error(ctx), "/nonexistent/log.jsonl"));
	unlink(path);
}

/* Tuning options by the command line's names, with its ranges. */
static void test_tune_options_set__names_and_ranges(void **state)
{
	ts_ctx *ctx = *state;
	ts_tune_options *o = ts_tune_options_new(ctx, NULL);

	assert_non_null(o);
	assert_int_equal(o->trials, 200);
	assert_int_equal(ts_tune_options_set(ctx, o, "trials", "12"), TS_OK);
	assert_int_equal(ts_tune_options_set(ctx, o, "threads", "2"), TS_OK);
	assert_int_equal(ts_tune_options_set(ctx, o, "seed", "7"), TS_OK);
	assert_int_equal(ts_tune_options_set(ctx, o, "log", "a.jsonl"), TS_OK);
	assert_int_equal(o->trials, 12);
	assert_int_equal(o->threads, 2);
	assert_int_equal(o->measure.threads, 2);
	assert_int_equal(o->seed, 7);
	assert_string_equal(o->log, "a.jsonl");
	assert_int_equal(ts_tune_options_set(ctx, o, "batch", "0"), TS_ERROR);
	assert_error_contains(ctx, "tuning option batch: bad value '0' (an "
		"integer from 1 to 4096)");
	assert_int_equal(ts_tune_options_set(ctx, o, "seed", "-3"), TS_ERROR);
	assert_error_contains(ctx, "tuning option seed: bad value '-3'");
	assert_int_equal(ts_tune_options_set(ctx, o, "trails", "3"), TS_ERROR);
	assert_error_contains(ctx, "unknown tuning option 'trails'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_ctx_keep__survives_collections,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_module_call__unaligned_matches_eval,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_module_run__aligned_kernel_refuses_unaligned,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_records_choose__no_record_is_static,
			ts_test_setup, ts_test_teardown),
		cmocka_unit_test_setup_teardown(
			test_tune_options_set__names_and_ranges,
			ts_test_setup, ts_test_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
