/* One semantics in the interpreter and the LLVM backend: every
 * declaration of semantics_decls.h, compiled under the naive and the
 * static schedule, gives exactly the interpreter's outputs; the
 * interpreter itself gives the values doc/grammar.md defines (rounding
 * half to even, saturating casts, wrap-around, guards). */
#include <config.h>

#include <math.h>

#include "tests/common.h"
#include "tests/backends/semantics_decls.h"

#include "dsl/internal.h"

/* Whether "a" and "b" hold the same bits. */
static bool same_bits(const ts_array *a, const ts_array *b)
{
	return a->dtype == b->dtype && a->size == b->size &&
		!memcmp(a->data, b->data, (size_t)a->size *
			ts_dtype_size(a->dtype));
}

/* Compile "dag" under "schedule" ("naive" or "static"), run it on random
 * inputs and compare its outputs with ts_eval: bit for bit when
 * "exact", else within ts_array_close. */
static void check_llvm(ts_ctx *ctx, const char *what, const ts_dag *dag,
	const char *schedule, bool exact)
{
	ts_schedule *sch = !strcmp(schedule, "naive") ?
		ts_schedule_naive(ctx, dag) :
		ts_static_schedule(ctx, dag, ts_target_host(ctx));
	ts_func *f = sch ? ts_lower(ctx, dag, sch) : NULL;
	ts_compile_options opt = ts_compile_options_default();
	ts_module *m = f ? ts_module_compile(ctx, f, &opt) : NULL;
	ts_array **in = ts_dag_random_inputs(ctx, dag, 3);
	ts_array **want = ts_new_array(ts_array *, dag->noutputs + 1);
	ts_array **args = ts_new_array(ts_array *, dag->ninputs +
		dag->noutputs + 1);

	if (!m || !in)
		fail_msg("%s (%s): %s", what, schedule, ts_ctx_error(ctx));
	opt.threads = 1;
	for (int i = 0; i < dag->ninputs; i++)
		args[i] = in[i];
	for (int o = 0; o < dag->noutputs; o++)
		args[dag->ninputs + o] = ts_array_for_tensor(ctx,
			dag->outputs[o]);
	assert_int_equal(ts_module_run(m, args), TS_OK);
	if (ts_eval(ctx, dag, in, want) < 0)
		fail_msg("%s: %s", what, ts_ctx_error(ctx));
	for (int o = 0; o < dag->noutputs; o++) {
		const ts_array *got = args[dag->ninputs + o];
		double err = 0;
		bool ok = exact ? same_bits(got, want[o]) :
			ts_array_close(got, want[o], &err);
		if (!ok)
			for (int64_t i = 0; i < got->size; i++)
				if (ts_array_get(got, i) != ts_array_get(want[o], i))
					fail_msg("%s (%s): %s[%lld] = %.17g, the "
						"interpreter gives %.17g", what,
						schedule, dag->outputs[o]->name,
						(long long)i, ts_array_get(got, i),
						ts_array_get(want[o], i));
	}
	ts_module_free(m);
}

/* Parse "src" as "name", or fail. */
static ts_dag *parse(ts_ctx *ctx, const char *name, const char *src)
{
	ts_dag *dag = ts_parse_string(ctx, name, src);

	if (!dag)
		fail_msg("%s: %s", name, ts_ctx_error(ctx));
	return dag;
}

/* Every declaration of the table, naive and static, equals ts_eval. */
static void test_semantics_decls__llvm_equals_eval_exactly(void **state)
{
	ts_ctx *ctx = *state;

	for (int i = 0; i < TS_TEST_NSEM_DECLS; i++) {
		const struct ts_test_sem_decl *d = &ts_test_sem_decls[i];
		ts_dag *dag = parse(ctx, d->name, d->src);
		check_llvm(ctx, d->name, dag, "naive", d->exact);
		check_llvm(ctx, d->name, dag, "static", d->exact);
	}
}

/* Every reducer on every dtype, naive and static, equals ts_eval (float
 * sums and products within rounding: the schedule may reorder them). */
static void test_semantics_reducers__every_dtype_equals_eval(void **state)
{
	ts_ctx *ctx = *state;
	int nt = (int)(sizeof(ts_test_sem_dtypes) / sizeof(char *));

	for (int t = 0; t < nt; t++)
		for (int r = 0; r < 4; r++) {
			char src[512], *name = ts_asprintf("%s_%s",
				ts_test_sem_reducers[r], ts_test_sem_dtypes[t]);
			ts_dag *dag = parse(ctx, name, ts_test_sem_reduce_decl(
				src, sizeof(src), t, r));
			bool exact = t < 4 || r == 1 || r == 2;
			check_llvm(ctx, name, dag, "naive", exact);
			check_llvm(ctx, name, dag, "static", exact);
		}
}

/* The outputs of "src" under ts_eval with the inputs of seed 3. */
static ts_array **eval_src(ts_ctx *ctx, const char *src)
{
	ts_dag *dag = parse(ctx, "eval", src);
	ts_array **in = ts_dag_random_inputs(ctx, dag, 3);
	ts_array **out = ts_new_array(ts_array *, dag->noutputs + 1);

	if (ts_eval(ctx, dag, in, out) < 0)
		fail_msg("%s", ts_ctx_error(ctx));
	return out;
}

/* Check the "n" values of "a" against "want". */
static void check_values(const ts_array *a, int n, const double *want,
	const char *what)
{
	for (int i = 0; i < n; i++)
		if (ts_array_get(a, i) != want[i])
			fail_msg("%s[%d] = %.17g, want %.17g", what, i,
				ts_array_get(a, i), want[i]);
}

/* round(x) is half to even in every float dtype. */
static void test_semantics_round__half_to_even(void **state)
{
	static const double want[8] = { -4, -2, -2, 0, 0, 2, 2, 4 };
	ts_array **o = eval_src(*state,
		"output A[i: 8]: i32 = i32(round(f32(i) - 3.5))\n"
		"output B[i: 8]: i32 = i32(round(f64(i) - 3.5))\n"
		"output C[i: 8]: i32 = i32(round(f16(i) - 3.5))\n");

	check_values(o[0], 8, want, "f32 round");
	check_values(o[1], 8, want, "f64 round");
	check_values(o[2], 8, want, "f16 round");
}

/* Float-to-integer casts saturate, NaN gives 0, bool is "!= 0". */
static void test_semantics_casts__saturate_nan_to_zero(void **state)
{
	static const double a[4] = { -128, -128, 127, 127 };
	static const double b[4] = { 0, 0, 255, 255 };
	/* log(-1) is NaN, log(0) is -inf, log(1) is 0. */
	static const double c[4] = { 0, -2147483648.0, 0, 2147483647 };
	static const double d[4] = { 1, 0, 1, 1 };
	ts_array **o = eval_src(*state,
		"output A[i: 4]: i8 = i8(f32(i) * 1000.0 - 1500.0)\n"
		"output B[i: 4]: u8 = u8(f32(i) * 1000.0 - 1500.0)\n"
		"output C[i: 4]: i32 = i32(log(f32(i) - 1.0) * 1e30)\n"
		"output D[i: 4]: i8 = i8(bool(log(f32(i))))\n");

	check_values(o[0], 4, a, "i8 cast");
	check_values(o[1], 4, b, "u8 cast");
	check_values(o[2], 4, c, "i32 cast");
	check_values(o[3], 4, d, "bool cast");
}

/* "a && b" and "a || b" guard "b": the analysis accepts a load that only
 * the left operand keeps in bounds, and the interpreter gives the values
 * of the guard. */
static void test_semantics_logic__right_operand_is_guarded(void **state)
{
	ts_ctx *ctx = *state;
	const char *src = "input X: f32[5]\noutput Y[h: 7] = select(h - 1 >= 0 "
		"&& h - 1 < 5 && X[h - 1] > 0.0, 1.0, 0.0)\n";
	ts_dag *dag = parse(ctx, "guard", src);
	ts_dag *bad = parse(ctx, "bad", "input X: f32[5]\noutput Y[h: 7] = "
		"select(X[h - 1] > 0.0 && h - 1 >= 0, 1.0, 0.0)\n");

	assert_int_equal(ts_stage_check_bounds(ctx, dag->stages[0]), TS_OK);
	assert_int_equal(ts_stage_check_bounds(ctx, bad->stages[0]),
		TS_ERROR);
	assert_error_contains(ctx, "out of bounds");
}

/* Integer arithmetic wraps in its dtype before a cast widens it. */
static void test_semantics_wrap__in_operation_dtype(void **state)
{
	static const double p[4] = { 0, 100, -56, 44 };
	static const double q[4] = { 246, 247, 248, 249 };
	ts_array **o = eval_src(*state,
		"output P[i: 4] = i32(i8(i) * 100)\n"
		"output Q[i: 4] = i32(u8(i) - 10)\n");

	check_values(o[0], 4, p, "i8 product");
	check_values(o[1], 4, q, "u8 difference");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_semantics_decls__llvm_equals_eval_exactly),
		TS_TEST(test_semantics_reducers__every_dtype_equals_eval),
		TS_TEST(test_semantics_round__half_to_even),
		TS_TEST(test_semantics_casts__saturate_nan_to_zero),
		TS_TEST(test_semantics_logic__right_operand_is_guarded),
		TS_TEST(test_semantics_wrap__in_operation_dtype),
	};

	if (getenv("TS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("TS_TEST_FILTER"));

	return cmocka_run_group_tests(tests, NULL, NULL);
}
