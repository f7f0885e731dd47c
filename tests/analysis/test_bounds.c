/* The bounds check: accesses proved inside their tensors under their
 * guards; an offending access is named with a sample instance. */
#include <config.h>

#include "tests/common.h"

#include <tessel/analysis.h>

#define V(a) ts_var(ctx, (a))
#define I(v) ts_int(ctx, (v))

/* Return "a" && "b". */
static ts_expr *and(ts_ctx *ctx, ts_expr *a, ts_expr *b)
{
	return ts_binary(ctx, TS_OP_AND, a, b);
}

/* Return the DAG of P[h, w] = select(lo <= h - 1 <= "hi" && 0 <= w - 1 <
 * 4, X[h - 1, w - 1], 0) with X of shape 4x4 and P of shape 6x6. */
static ts_dag *padding(ts_ctx *ctx, int64_t hi)
{
	int64_t sx[2] = { 4, 4 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 2, sx);
	ts_axis *h = ts_axis_new(ctx, "h", 6), *w = ts_axis_new(ctx, "w", 6);
	ts_axis *ax[2] = { h, w };
	ts_expr *hh = ts_sub(ctx, V(h), I(1)), *ww = ts_sub(ctx, V(w), I(1));
	ts_expr *in = and(ctx, and(ctx, ts_binary(ctx, TS_OP_GE, hh, I(0)),
		ts_binary(ctx, TS_OP_LE, hh, I(hi))),
		and(ctx, ts_binary(ctx, TS_OP_GE, ww, I(0)),
			ts_binary(ctx, TS_OP_LT, ww, I(4))));
	ts_tensor *P = ts_compute(ctx, "P", 2, ax, ts_select(ctx, in,
		ts_at(ctx, X, 2, hh, ww), ts_float(ctx, 0)));

	return P ? ts_dag_new(ctx, 0, NULL, 1, &P) : NULL;
}

static void test_bounds_padding__is_proved_under_its_guard(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = padding(ctx, 3);

	assert_non_null(dag);
	assert_int_equal(ts_stage_check_bounds(ctx, dag->stages[0]), TS_OK);
	assert_non_null(ts_analyze_dag(ctx, dag));
}

static void test_bounds_wrong_padding__names_stage_access_instance(
	void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = padding(ctx, 4);	/* h - 1 <= 4 lets h = 5 read X[4] */

	assert_non_null(dag);
	assert_null(ts_analyze_dag(ctx, dag));
	assert_error_contains(ctx, "stage 'P'");
	assert_error_contains(ctx, "access X[h - 1, w - 1]");
	assert_error_contains(ctx, "tensor 'X' (shape 4x4)");
	assert_error_contains(ctx, "at instance h = 5, w = ");
	assert_error_contains(ctx, "element [4, ");
}

static void test_bounds_missing_guard__is_error(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[1] = { 8 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 1, sx);
	ts_axis *i = ts_axis_new(ctx, "i", 8);
	ts_tensor *Y = ts_compute(ctx, "Y", 1, &i,
		ts_at(ctx, X, 1, ts_sub(ctx, V(i), I(1))));

	assert_int_equal(ts_stage_check_bounds(ctx, Y->stage), TS_ERROR);
	assert_error_contains(ctx, "stage 'Y': access X[i - 1] is out of "
		"bounds of tensor 'X' (shape 8) at instance i = 0, element [-1]");
}

static void test_bounds_window_past_the_end__is_error(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[1] = { 8 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 1, sx);
	ts_axis *h = ts_axis_new(ctx, "h", 4);
	ts_axis *r = ts_reduce_axis(ctx, "r", 3);
	/* Stride 2, window 3: h = 3 reads X[6..8]: one past the end. */
	ts_tensor *M = ts_compute(ctx, "M", 1, &h, ts_rmax(ctx, 1, &r,
		ts_at(ctx, X, 1, ts_add(ctx, ts_mul(ctx, V(h), I(2)), V(r)))));
	ts_dag *dag = ts_dag_new(ctx, 0, NULL, 1, &M);

	assert_null(ts_analyze_dag(ctx, dag));
	assert_error_contains(ctx, "stage 'M': access X[h * 2 + r]");
	assert_error_contains(ctx, "at instance h = 3, r = 2, element [8]");
}

static void test_bounds_data_dependent_guard__is_not_a_proof(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[1] = { 8 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 1, sx);
	ts_tensor *M = ts_placeholder(ctx, "Mk", TS_F32, 1, sx);
	ts_axis *i = ts_axis_new(ctx, "i", 8);
	ts_tensor *Y = ts_compute(ctx, "Y", 1, &i, ts_select(ctx,
		ts_binary(ctx, TS_OP_GT, ts_at(ctx, M, 1, V(i)), ts_float(ctx, 0)),
		ts_at(ctx, X, 1, ts_add(ctx, V(i), I(1))), ts_float(ctx, 0)));

	assert_int_equal(ts_stage_check_bounds(ctx, Y->stage), TS_ERROR);
	assert_error_contains(ctx, "access X[i + 1]");
	assert_error_contains(ctx, "at instance i = 7, element [8]");
	assert_error_contains(ctx, "not affine");
}

static void test_bounds_data_dependent_index__is_assumed_in_bounds(
	void **state)
{
	ts_ctx *ctx = *state;
	int64_t st[1] = { 10 }, si[1] = { 4 };
	ts_tensor *T = ts_placeholder(ctx, "T", TS_F32, 1, st);
	ts_tensor *Ix = ts_placeholder(ctx, "Ix", TS_I32, 1, si);
	ts_axis *i = ts_axis_new(ctx, "i", 4);
	ts_tensor *G = ts_compute(ctx, "G", 1, &i, ts_at(ctx, T, 1,
		ts_at(ctx, Ix, 1, V(i))));
	ts_stage_info *info;

	assert_int_equal(ts_stage_check_bounds(ctx, G->stage), TS_OK);
	info = ts_analyze_stage(ctx, G->stage);
	assert_non_null(info);
	assert_true(info->data_dependent);
	assert_false(info->accesses[0].affine);
	assert_false(info->accesses[0].distinct_exact);
	assert_true(info->accesses[1].affine);
}

static void test_bounds_guarded_concat__is_proved(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sa[1] = { 3 }, sb[1] = { 5 };
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, sa);
	ts_tensor *B = ts_placeholder(ctx, "B", TS_F32, 1, sb);
	ts_axis *i = ts_axis_new(ctx, "i", 8);
	ts_tensor *C = ts_compute(ctx, "C", 1, &i, ts_select(ctx,
		ts_binary(ctx, TS_OP_LT, V(i), I(3)), ts_at(ctx, A, 1, V(i)),
		ts_at(ctx, B, 1, ts_sub(ctx, V(i), I(3)))));
	ts_stage_info *info;

	assert_int_equal(ts_stage_check_bounds(ctx, C->stage), TS_OK);
	info = ts_analyze_stage(ctx, C->stage);
	/* Each branch reads only what its guard lets through. */
	assert_true(info->accesses[0].guarded);
	assert_int_equal(info->accesses[0].distinct, 3);
	assert_int_equal(info->accesses[1].distinct, 5);
	assert_int_equal(info->counts.bytes_read, 8 * 4);
}

static void test_bounds_not_and_or_guards__are_proved(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[1] = { 6 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 1, sx);
	ts_axis *i = ts_axis_new(ctx, "i", 8);
	ts_expr *xi = ts_at(ctx, X, 1, ts_sub(ctx, V(i), I(1)));
	/* i < 1 || i > 6 selects the zero: X[i - 1] only for 1 <= i <= 6. */
	ts_expr *out = ts_binary(ctx, TS_OP_OR,
		ts_binary(ctx, TS_OP_LT, V(i), I(1)),
		ts_binary(ctx, TS_OP_GT, V(i), I(6)));
	ts_tensor *Y = ts_compute(ctx, "Y", 1, &i, ts_select(ctx, out,
		ts_float(ctx, 0), xi));
	ts_axis *j = ts_axis_new(ctx, "j", 8);
	ts_tensor *Z = ts_compute(ctx, "Z", 1, &j, ts_select(ctx,
		ts_unary(ctx, TS_OP_NOT, ts_binary(ctx, TS_OP_LT, V(j), I(2))),
		ts_at(ctx, X, 1, ts_sub(ctx, V(j), I(2))), ts_float(ctx, 0)));

	assert_int_equal(ts_stage_check_bounds(ctx, Y->stage), TS_OK);
	assert_int_equal(ts_stage_check_bounds(ctx, Z->stage), TS_OK);
}

static void test_bounds_non_linear_index__is_over_approximated(void **state)
{
	ts_ctx *ctx = *state;
	int64_t sx[1] = { 16 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 1, sx);
	ts_axis *i = ts_axis_new(ctx, "i", 4), *j = ts_axis_new(ctx, "j", 4);
	ts_axis *ax[2] = { i, j };
	ts_tensor *Y = ts_compute(ctx, "Y", 2, ax, ts_at(ctx, X, 1,
		ts_mul(ctx, V(i), V(j))));
	ts_stage_info *si = ts_analyze_stage(ctx, Y->stage);
	ts_footprint *fp = ts_stage_footprint(ctx, Y->stage, X);

	assert_non_null(si);
	assert_true(si->data_dependent);
	assert_false(si->accesses[0].affine);
	assert_non_null(strstr(si->reasons[0], "X[i * j]: an index is not "
		"affine"));
	assert_true(fp->dim[0].whole);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_bounds_padding__is_proved_under_its_guard),
		TS_TEST(test_bounds_wrong_padding__names_stage_access_instance),
		TS_TEST(test_bounds_missing_guard__is_error),
		TS_TEST(test_bounds_window_past_the_end__is_error),
		TS_TEST(test_bounds_data_dependent_guard__is_not_a_proof),
		TS_TEST(test_bounds_data_dependent_index__is_assumed_in_bounds),
		TS_TEST(test_bounds_guarded_concat__is_proved),
		TS_TEST(test_bounds_not_and_or_guards__are_proved),
		TS_TEST(test_bounds_non_linear_index__is_over_approximated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
