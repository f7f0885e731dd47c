/* Every operator of the catalogue (size class 0) under its naive schedule
 * and under random valid schedules: lowered, compiled through LLVM, run,
 * and compared with the reference interpreter. */
#include <config.h>

#include <stdio.h>

#include "tests/common.h"
#include "tests/backends/fence.h"
#include "tests/backends/random_schedule.h"
#include "examples/catalogue.h"

#define NRANDOM 50

/* Lower "dag" under "sch", compile, run on "in" and compare with "want";
 * fail with the schedule and the IR on a mismatch.  Every buffer lies
 * against an inaccessible page, below it when "at_end", so that an
 * access outside a buffer faults. */
static void check_schedule(ts_ctx *ctx, const char *op, const ts_dag *dag,
	const ts_schedule *sch, ts_array **in, ts_array **want, bool optimise,
	bool at_end)
{
	ts_compile_options opt = ts_compile_options_default();
	ts_array *args[64];
	ts_fence fences[64];
	ts_func *f = ts_lower(ctx, dag, sch);
	ts_module *m;
	int nargs = dag->ninputs + dag->noutputs;

	/* Most schedules compile without LLVM's optimisations: the test is
	 * about the lowering, and -O0 compiles ten times faster. */
	if (!optimise)
		opt.opt_level = 0;
	if (!f)
		fail_msg("%s: lowering failed: %s\nschedule:\n%s", op,
			ts_ctx_error(ctx), ts_schedule_to_string(sch));
	m = ts_module_compile(ctx, f, &opt);
	if (!m)
		fail_msg("%s: compiling failed: %s\nschedule:\n%s%s", op,
			ts_ctx_error(ctx), ts_schedule_to_string(sch),
			ts_func_to_string(f));
	assert_true(nargs <= 64);
	for (int i = 0; i < dag->ninputs; i++)
		args[i] = in[i];
	for (int i = 0; i < dag->noutputs; i++)
		args[dag->ninputs + i] = ts_array_for_tensor(ctx,
			dag->outputs[i]);
	for (int i = 0; i < nargs; i++) {
		fences[i] = ts_test_fence(ctx, args[i], at_end);
		args[i] = fences[i].a;
	}
	assert_int_equal(ts_module_run(m, args), TS_OK);
	for (int i = 0; i < nargs; i++) {
		args[i] = i < dag->ninputs ? in[i] : ts_array_for_tensor(ctx,
			dag->outputs[i - dag->ninputs]);
		ts_test_unfence(&fences[i], args[i]);
	}
	for (int i = 0; i < dag->noutputs; i++) {
		double err = 0;
		if (!ts_array_close(args[dag->ninputs + i], want[i], &err))
			fail_msg("%s: output '%s' differs from ts_eval by %g\n"
				"schedule:\n%s%s", op, dag->outputs[i]->name,
				err, ts_schedule_to_string(sch),
				ts_func_to_string(f));
	}
	ts_module_free(m);
}

/* How often each step kind (and a partitioned split, counted at
 * TS_STEP_KIND_COUNT) was generated. */
struct coverage {
	int count[TS_STEP_KIND_COUNT + 1];
	int fallbacks;
};

/* Count the steps of "sch" into "cov". */
static void count_steps(struct coverage *cov, const ts_schedule *sch)
{
	for (int i = 0; i < sch->nsteps; i++) {
		cov->count[sch->steps[i].kind]++;
		if (sch->steps[i].kind == TS_STEP_SPLIT &&
		    sch->steps[i].tail == TS_TAIL_PARTITION)
			cov->count[TS_STEP_KIND_COUNT]++;
	}
}

/* The naive schedule and NRANDOM random ones of catalogue entry "e". */
static void check_entry(const struct ts_catalogue_entry *e,
	struct coverage *cov)
{
	ts_ctx *ctx = ts_ctx_alloc();
	ts_dag *dag;
	ts_array **in, *want[16];

	ts_ctx_set_seed(ctx, 1);
	dag = e->build(ctx, TS_SIZE_TINY);
	if (!dag)
		fail_msg("%s: %s", e->name, ts_ctx_error(ctx));
	assert_true(dag->noutputs <= 16);
	in = ts_dag_random_inputs(ctx, dag, 42);
	assert_non_null(in);
	assert_int_equal(ts_eval(ctx, dag, in, want), TS_OK);
	check_schedule(ctx, e->name, dag, ts_schedule_naive(ctx, dag), in,
		want, true, true);
	for (int k = 0; k < NRANDOM; k++) {
		int tries = 0;
		ts_schedule *sch = ts_random_schedule(ctx, dag,
			1000u * (uint64_t)k + 7, &tries);
		count_steps(cov, sch);
		cov->fallbacks += sch->nsteps == 0 && tries == 50;
		/* A round trip through JSON must give the same schedule. */
		ts_schedule *back = ts_schedule_from_json(ctx, dag,
			ts_schedule_to_json(sch));
		assert_non_null(back);
		assert_string_equal(ts_schedule_to_string(back),
			ts_schedule_to_string(sch));
		/* ... and replaying it, the same program. */
		assert_string_equal(ts_func_to_string(ts_lower(ctx, dag, back)),
			ts_func_to_string(ts_lower(ctx, dag, sch)));
		check_schedule(ctx, e->name, dag, sch, in, want, k < 4, k & 1);
	}
	ts_ctx_free(ctx);
}

static void test_random_schedules__match_eval(void **state)
{
	const char *only = getenv("TS_RANDOM_ONLY");
	struct coverage cov = { { 0 } };

	for (int i = 0; i < ts_catalogue_count; i++)
		if (!only || strcmp(only, ts_catalogue[i].name) == 0)
			check_entry(&ts_catalogue[i], &cov);
	if (only)
		return;
	/* Every step kind but bind and tensorize (annotations the CPU
	 * backend does not run) was exercised, partitioned tails too. */
	for (int k = 0; k <= TS_STEP_KIND_COUNT; k++) {
		printf("# %-15s %d\n", k < TS_STEP_KIND_COUNT ?
			ts_step_kind_name(k) : "partition", cov.count[k]);
		if (k != TS_STEP_BIND && k != TS_STEP_COMPUTE_ROOT &&
		    k != TS_STEP_TENSORIZE)
			assert_true(cov.count[k] >= 10);
	}
	printf("# fallbacks to naive: %d\n", cov.fallbacks);
	assert_true(cov.fallbacks <= ts_catalogue_count * NRANDOM / 10);
}

/* The generator is reproducible: one seed, one schedule. */
static void test_random_schedules__reproducible(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_catalogue_find("matmul")->build(ctx, TS_SIZE_TINY);
	int distinct = 0;

	assert_non_null(dag);
	for (int k = 0; k < 10; k++) {
		char *a = ts_schedule_to_string(ts_random_schedule(ctx, dag, k,
			NULL));
		char *b = ts_schedule_to_string(ts_random_schedule(ctx, dag, k,
			NULL));
		char *c = ts_schedule_to_string(ts_random_schedule(ctx, dag,
			k + 100, NULL));
		assert_string_equal(a, b);
		distinct += strcmp(a, c) != 0;
	}
	assert_true(distinct >= 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_random_schedules__reproducible),
		TS_TEST(test_random_schedules__match_eval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
