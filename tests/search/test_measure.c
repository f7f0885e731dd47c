/* Measurement: good candidates are checked against the interpreter and
 * timed; candidates that crash, abort, hang, build too slowly, compute
 * wrong values or do not check are reported with their code, and the
 * same measurer goes on to measure a good candidate right after. */
#include <config.h>

#include <math.h>
#include <stdio.h>


#include "tests/common.h"

static const char *matmul_src =
	"input A: f32[24, 20]\n"
	"input B: f32[20, 40]\n"
	"output C[i: 24, j: 40] = sum(k: 20) A[i, k] * B[k, j]\n";

/* Options that keep the suite fast: 1 s to run, a few s to build. */
static ts_measure_options fast_options(void)
{
	ts_measure_options o = ts_measure_options_default();

	o.build_timeout_s = 4;
	o.run_timeout_s = 1;
	o.min_repeat_s = 0.01;
	return o;
}

/* The small matmul of these tests. */
static ts_dag *matmul(ts_ctx *ctx)
{
	ts_dag *dag = ts_parse_string(ctx, "matmul.tsl", matmul_src);

	assert_non_null(dag);
	return dag;
}

/* A tiled, vectorised, parallel schedule of "dag" (every step checked). */
static ts_schedule *tiled(ts_ctx *ctx, const ts_dag *dag)
{
	ts_schedule *sch = ts_schedule_new(ctx, dag);
	const char *order[] = { "i.o", "j.o", "k", "i.i", "j.i" };

	assert_int_equal(ts_schedule_split(sch, "C", "i", 8, TS_TAIL_GUARD),
		TS_OK);
	assert_int_equal(ts_schedule_split(sch, "C", "j", 16,
		TS_TAIL_PARTITION), TS_OK);
	assert_int_equal(ts_schedule_reorder(sch, "C", 5, order), TS_OK);
	assert_int_equal(ts_schedule_vectorize(sch, "C", "j.i"), TS_OK);
	assert_int_equal(ts_schedule_parallel(sch, "C", "i.o"), TS_OK);
	assert_int_equal(ts_schedule_check(sch), TS_OK);
	return sch;
}

/* Assert that "r" is a valid, checked and timed measurement. */
static void assert_good(const ts_measure_result *r)
{
	if (r->error != TS_ERR_NONE)
		fail_msg("expected a good measurement, got %s: %s",
			ts_error_code_name(r->error),
			r->message ? r->message : "");
	assert_null(r->message);
	assert_true(r->nsamples >= 3);
	assert_true(r->median_s > 0);
	assert_true(isfinite(r->max_abs_err));
	assert_true(r->max_abs_err < 1e-3);
	assert_true(r->build_s > 0);
	for (int i = 0; i < r->nsamples; i++)
		assert_true(r->samples[i] > 0);
}

/* Assert that "r" failed with "code" and a message containing "part". */
static void assert_failed(const ts_measure_result *r, ts_error_code code,
	const char *part)
{
	if (r->error != code)
		fail_msg("expected %s, got %s: %s", ts_error_code_name(code),
			ts_error_code_name(r->error),
			r->message ? r->message : "");
	if (!r->message || !strstr(r->message, part))
		fail_msg("expected a message containing \"%s\", got \"%s\"",
			part, r->message ? r->message : "(none)");
	assert_int_equal(r->nsamples, 0);
	assert_true(r->median_s == 0);
}

static void test_error_code_names__as_documented(void **state)
{
	static const char *names[TS_ERR_COUNT] = { "none",
		"invalid_schedule", "compile_error", "runtime_error",
		"wrong_answer", "build_timeout", "run_timeout" };
	ts_error_code c;

	(void)state;
	for (int i = 0; i < TS_ERR_COUNT; i++) {
		assert_string_equal(ts_error_code_name(i), names[i]);
		assert_int_equal(ts_error_code_from_name(names[i], &c), TS_OK);
		assert_int_equal(c, i);
	}
	assert_int_equal(ts_error_code_from_name("segfault", &c), TS_ERROR);
}

static void test_options_default__as_documented(void **state)
{
	ts_measure_options o = ts_measure_options_default();

	(void)state;
	assert_true(o.build_timeout_s == 20);
	assert_true(o.run_timeout_s == 10);
	assert_true(o.min_repeat_s == 0.1);
	assert_false(o.flush_cache);
	assert_int_equal(o.threads, 1);
	assert_true(o.pipeline);
}

/* A candidate whose one sample lasts over ten times min_repeat_s is
 * timed once; a quick one still gets at least three samples. */
static void test_measure_slow__timed_once(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *big = ts_parse_string(ctx, "big.tsl",
		"input A: f32[256, 256]\n"
		"input B: f32[256, 256]\n"
		"output C[i: 256, j: 256] = sum(k: 256) A[i, k] * B[k, j]\n");
	ts_dag *dag = matmul(ctx);
	ts_measure_options o = fast_options();
	ts_measurer *m;
	ts_measure_result r;

	assert_non_null(big);
	/* The naive 256^3 product runs for milliseconds, over 10 x 0.1 ms. */
	o.min_repeat_s = 1e-4;
	m = ts_measurer_new(ctx, big, &o, 5);
	assert_non_null(m);
	assert_int_equal(ts_measure(m, ts_schedule_naive(ctx, big), &r),
		TS_OK);
	assert_int_equal(r.error, TS_ERR_NONE);
	if (r.samples[0] < 10 * o.min_repeat_s)
		fail_msg("the naive product ran in %g s", r.samples[0]);
	assert_int_equal(r.nsamples, 1);
	assert_true(r.median_s == r.samples[0]);
	ts_measurer_free(m);
	o = fast_options();
	m = ts_measurer_new(ctx, dag, &o, 5);
	assert_non_null(m);
	assert_int_equal(ts_measure(m, tiled(ctx, dag), &r), TS_OK);
	assert_good(&r);
	ts_measurer_free(m);
}

static void test_measure_good__checked_and_timed(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul(ctx);
	ts_measure_options o = fast_options();
	ts_measurer *m = ts_measurer_new(ctx, dag, &o, 5);
	ts_measure_result r;
	double sorted[3];

	assert_non_null(m);
	assert_int_equal(ts_measure(m, tiled(ctx, dag), &r), TS_OK);
	assert_good(&r);
	if (r.nsamples == 3) {
		memcpy(sorted, r.samples, sizeof(sorted));
		for (int i = 0; i < 3; i++)
			for (int j = i + 1; j < 3; j++)
				if (sorted[j] < sorted[i]) {
					double t = sorted[i];
					sorted[i] = sorted[j];
					sorted[j] = t;
				}
		assert_true(r.median_s == sorted[1]);
	}
	assert_int_equal(ts_measure(m, ts_schedule_naive(ctx, dag), &r),
		TS_OK);
	assert_good(&r);
	assert_int_equal(ts_measurer_count(m), 2);
	assert_int_equal(ts_measurer_workers_started(m), 1);
	ts_measurer_free(m);
	ts_measurer_free(m);
}

static void test_measure_long_timing__run_timeout_bounds_one_run(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul(ctx);
	ts_measure_options o = fast_options();
	ts_measurer *m;
	ts_measure_result r;

	/* Timed runs add up to more than the run timeout, each is short. */
	o.min_repeat_s = 1.6;
	o.run_timeout_s = 0.8;
	m = ts_measurer_new(ctx, dag, &o, 5);
	assert_non_null(m);
	assert_int_equal(ts_measure(m, tiled(ctx, dag), &r), TS_OK);
	assert_good(&r);
}

/* One misbehaviour and what it must give. */
struct fault_case {
	const char *fault;
	ts_error_code code;
	const char *message;
};

static const struct fault_case fault_cases[] = {
	{ "crash", TS_ERR_RUNTIME, "signal 11" },
	{ "abort", TS_ERR_COMPILE, "signal 6" },
	{ "hang", TS_ERR_RUN_TIMEOUT, "more than 1 s to run" },
	{ "slow-build", TS_ERR_BUILD_TIMEOUT, "more than 4 s to build" },
	{ "corrupt", TS_ERR_WRONG_ANSWER, "output 'C' differs" },
	{ "kill-worker", TS_ERR_RUNTIME, "the worker process died" },
};

static void test_measure_faults__reported_then_good_candidate(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul(ctx);
	ts_measure_options o = fast_options();
	ts_measurer *m = ts_measurer_new(ctx, dag, &o, 5);
	ts_schedule *sch = tiled(ctx, dag);
	ts_measure_result r;

	assert_non_null(m);
	for (size_t i = 0; i < sizeof(fault_cases) / sizeof(fault_cases[0]);
	     i++) {
		const struct fault_case *c = &fault_cases[i];
		assert_int_equal(ts_measurer_set_fault(m, c->fault), TS_OK);
		assert_int_equal(ts_measure(m, sch, &r), TS_OK);
		assert_failed(&r, c->code, c->message);
		if (c->code == TS_ERR_WRONG_ANSWER)
			assert_true(r.max_abs_err > 1e-3);
		assert_int_equal(ts_measurer_set_fault(m, NULL), TS_OK);
		assert_int_equal(ts_measure(m, sch, &r), TS_OK);
		assert_good(&r);
	}
	/* The worker outlived every candidate but the one that killed it:
	 * one more was started for the good candidate after it. */
	assert_int_equal(ts_measurer_workers_started(m), 2);
	assert_null(ts_ctx_error(ctx));
}

/* Batches of a pipelining worker: the next candidate is built while one
 * is timed, and waits for its turn; a candidate that fails, before its
 * turn (abort, slow build) or during it, is reported as itself and the
 * one queued behind it as itself, also when the first kills the worker
 * with the request of the second in it.  Then a good batch: each good,
 * and every candidate but the first built ahead where there is a core to
 * spare for it; none without the option. */
static void test_measure_batch__pipelined_faults_then_good(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul(ctx);
	ts_measure_options o = fast_options();
	ts_measurer *m = ts_measurer_new(ctx, dag, &o, 5), *serial;
	const ts_schedule *sch[3];
	ts_measure_result r[3];
	bool spare = sysconf(_SC_NPROCESSORS_ONLN) > 1;

	assert_non_null(m);
	sch[0] = sch[2] = tiled(ctx, dag);
	sch[1] = ts_schedule_naive(ctx, dag);
	for (size_t i = 0; i < sizeof(fault_cases) / sizeof(fault_cases[0]);
	     i++) {
		const struct fault_case *c = &fault_cases[i];
		assert_int_equal(ts_measurer_set_fault(m, c->fault), TS_OK);
		assert_int_equal(ts_measure_batch(m, 2, sch, r), TS_OK);
		assert_failed(&r[0], c->code, c->message);
		assert_failed(&r[1], c->code, c->message);
	}
	assert_int_equal(ts_measurer_set_fault(m, NULL), TS_OK);
	int before = ts_measurer_built_ahead(m);
	assert_int_equal(ts_measure_batch(m, 3, sch, r), TS_OK);
	for (int i = 0; i < 3; i++)
		assert_good(&r[i]);
	assert_int_equal(ts_measurer_built_ahead(m) - before, spare ? 2 : 0);
	/* Two workers killed by their candidates, one started after each. */
	assert_int_equal(ts_measurer_workers_started(m), 3);

	o.pipeline = false;
	serial = ts_measurer_new(ctx, dag, &o, 5);
	assert_non_null(serial);
	assert_int_equal(ts_measure_batch(serial, 3, sch, r), TS_OK);
	for (int i = 0; i < 3; i++)
		assert_good(&r[i]);
	assert_int_equal(ts_measurer_built_ahead(serial), 0);
	assert_null(ts_ctx_error(ctx));
}

static void test_measure_set_fault__unknown_is_error(void **state)
{
	ts_ctx *ctx = *state;
	ts_measure_options o = fast_options();
	ts_measurer *m = ts_measurer_new(ctx, matmul(ctx), &o, 5);

	assert_non_null(m);
	assert_int_equal(ts_measurer_set_fault(m, "explode"), TS_ERROR);
	assert_error_contains(ctx, "unknown fault 'explode'");
}

static void test_measure_fault_env__applies_to_candidates(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul(ctx);
	ts_measure_options o = fast_options();
	ts_measurer *m;
	ts_measure_result r;

	setenv("TS_MEASURE_FAULT", "corrupt", 1);
	m = ts_measurer_new(ctx, dag, &o, 5);
	unsetenv("TS_MEASURE_FAULT");
	assert_non_null(m);
	assert_int_equal(ts_measure(m, tiled(ctx, dag), &r), TS_OK);
	assert_failed(&r, TS_ERR_WRONG_ANSWER, "differs from the reference");
}

/* A schedule whose vectorised loop is not innermost any more: each step
 * applies, only the whole schedule does not check. */
static ts_schedule *unchecked(ts_ctx *ctx, const ts_dag *dag)
{
	ts_schedule *sch = ts_schedule_new(ctx, dag);
	const char *order[] = { "i", "j.o", "k", "j.i" };
	const char *swap[] = { "j.i", "k" };

	assert_int_equal(ts_schedule_split(sch, "C", "j", 8, TS_TAIL_GUARD),
		TS_OK);
	assert_int_equal(ts_schedule_reorder(sch, "C", 4, order), TS_OK);
	assert_int_equal(ts_schedule_vectorize(sch, "C", "j.i"), TS_OK);
	assert_int_equal(ts_schedule_reorder(sch, "C", 2, swap), TS_OK);
	return sch;
}

static void test_measure_batch__invalid_and_foreign_schedules(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul(ctx);
	ts_dag *other = ts_parse_string(ctx, "other.tsl",
		"input X: f32[8]\noutput Y[i: 8] = X[i] * 2.0\n");
	ts_measure_options o = fast_options();
	ts_measurer *m = ts_measurer_new(ctx, dag, &o, 5);
	const ts_schedule *sch[4];
	ts_measure_result r[4];

	assert_non_null(m);
	assert_non_null(other);
	sch[0] = ts_schedule_naive(ctx, dag);
	sch[1] = ts_schedule_naive(ctx, other);
	sch[2] = unchecked(ctx, dag);
	sch[3] = tiled(ctx, dag);
	ts_ctx_set_error(ctx, "earlier error");
	assert_int_equal(ts_measure_batch(m, 4, sch, r), TS_OK);
	assert_good(&r[0]);
	assert_failed(&r[1], TS_ERR_INVALID_SCHEDULE,
		"not one of the measured DAG 'matmul'");
	assert_failed(&r[2], TS_ERR_INVALID_SCHEDULE,
		"vectorized loop 'j.i' is not innermost");
	assert_good(&r[3]);
	/* A candidate's problem does not replace the caller's error. */
	assert_error_contains(ctx, "earlier error");
}

static void test_measure_threads_flush__after_openmp_in_caller(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul(ctx);
	ts_measure_options o = fast_options();
	ts_measurer *m;
	ts_measure_result r;
	ts_func *f = ts_lower(ctx, dag, tiled(ctx, dag));
	ts_compile_options co = ts_compile_options_default();
	ts_module *mod;
	ts_array **in = ts_dag_random_inputs(ctx, dag, 3);
	ts_array *args[3];

	/* The caller runs an OpenMP team first, as a cost model would. */
	co.threads = 2;
	assert_non_null(f);
	assert_non_null(mod = ts_module_compile(ctx, f, &co));
	args[0] = in[0];
	args[1] = in[1];
	args[2] = ts_array_for_tensor(ctx, dag->outputs[0]);
	assert_int_equal(ts_module_run(mod, args), TS_OK);
	ts_module_free(mod);
	o.threads = 2;
	o.flush_cache = true;
	o.run_timeout_s = 10;
	m = ts_measurer_new(ctx, dag, &o, 5);
	assert_non_null(m);
	assert_int_equal(ts_measure(m, tiled(ctx, dag), &r), TS_OK);
	assert_good(&r);
}

static void test_measure_eval_limit__reference_from_naive(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul(ctx);
	ts_measure_options o = fast_options();
	ts_measurer *m;
	ts_measure_result r;

	o.eval_limit = 1000;
	m = ts_measurer_new(ctx, dag, &o, 5);
	assert_non_null(m);
	assert_non_null(ts_ctx_warnings(ctx));
	assert_non_null(strstr(ts_ctx_warnings(ctx),
		"come from the naive schedule compiled"));
	assert_int_equal(ts_measure(m, tiled(ctx, dag), &r), TS_OK);
	assert_good(&r);
	assert_int_equal(ts_measurer_set_fault(m, "corrupt"), TS_OK);
	assert_int_equal(ts_measure(m, tiled(ctx, dag), &r), TS_OK);
	assert_failed(&r, TS_ERR_WRONG_ANSWER, "differs");
}

static void test_measurer_new__bad_options_are_errors(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul(ctx);
	ts_measure_options o = fast_options();

	o.threads = 0;
	assert_null(ts_measurer_new(ctx, dag, &o, 1));
	assert_error_contains(ctx, "threads 0");
	o = fast_options();
	o.run_timeout_s = -1;
	assert_null(ts_measurer_new(ctx, dag, &o, 1));
	assert_error_contains(ctx, "run_timeout_s must be positive");
	o = fast_options();
	o.cpu = "znver3 --evil";
	assert_null(ts_measurer_new(ctx, dag, &o, 1));
	assert_error_contains(ctx, "bad cpu 'znver3 --evil'");
}

/* Candidates are compiled for the CPU target the options name (an
 * AVX-512 machine measures an AVX2 target's code), and still checked. */
static void test_measure_target__compiled_for_it(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul(ctx);
	ts_target *zen3 = ts_target_lookup(ctx, "zen3");
	ts_target *host = ts_target_host(ctx);
	ts_measure_options o = fast_options();
	ts_measure_result r;
	ts_measurer *m;

	assert_non_null(zen3);
	assert_non_null(host);
	if (!ts_target_runs_on(zen3, host, NULL))
		skip();
	ts_measure_options_target(&o, zen3);
	assert_string_equal(o.cpu, "znver3");
	assert_string_equal(o.features, "+avx2,+fma,+f16c");
	m = ts_measurer_new(ctx, dag, &o, 5);
	assert_non_null(m);
	assert_int_equal(ts_measure(m, tiled(ctx, dag), &r), TS_OK);
	assert_good(&r);
	ts_measurer_free(m);
	ts_measure_options_target(&o, NULL);
	assert_null(o.cpu);
	assert_null(o.features);
}

static void test_measurer_new__missing_worker_is_error(void **state)
{
	ts_ctx *ctx = *state;
	ts_measure_options o = fast_options();

	setenv("TS_MEASURE_WORKER", "/nonexistent/tessel", 1);
	assert_null(ts_measurer_new(ctx, matmul(ctx), &o, 1));
	unsetenv("TS_MEASURE_WORKER");
	assert_error_contains(ctx, "worker program '/nonexistent/tessel' "
		"did not start for 'matmul'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_code_names__as_documented),
		cmocka_unit_test(test_options_default__as_documented),
		TS_TEST(test_measure_good__checked_and_timed),
		TS_TEST(test_measure_slow__timed_once),
		TS_TEST(test_measure_long_timing__run_timeout_bounds_one_run),
		TS_TEST(test_measure_faults__reported_then_good_candidate),
		TS_TEST(test_measure_batch__pipelined_faults_then_good),
		TS_TEST(test_measure_set_fault__unknown_is_error),
		TS_TEST(test_measure_fault_env__applies_to_candidates),
		TS_TEST(test_measure_batch__invalid_and_foreign_schedules),
		TS_TEST(test_measure_threads_flush__after_openmp_in_caller),
		TS_TEST(test_measure_eval_limit__reference_from_naive),
		TS_TEST(test_measurer_new__bad_options_are_errors),
		TS_TEST(test_measure_target__compiled_for_it),
		TS_TEST(test_measurer_new__missing_worker_is_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
