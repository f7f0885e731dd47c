/* Features of lowered programs: slots move the way the schedule says. */
#include <config.h>

#include <math.h>

#include "tests/common.h"

#include <tessel/tune.h>

static const char *matmul_src =
	"input A: f32[64, 48]\n"
	"input B: f32[48, 40]\n"
	"output C[i: 64, j: 40] = sum(k: 48) A[i, k] * B[k, j]\n";

/* The raw count behind slot value "v" (the inverse of log2(1 + x)). */
static double raw(float v)
{
	return exp2(v) - 1;
}

/* The features of "dag" lowered under "sch" (NULL: naive) into "f". */
static void features_of(ts_ctx *ctx, ts_dag *dag, ts_schedule *sch, float *f)
{
	ts_func *fn = ts_lower(ctx, dag, sch);

	assert_non_null(fn);
	assert_int_equal(ts_func_features(ctx, fn, 64, f), TS_OK);
}

/* A schedule of the matmul with the "j" loop split by 8, its inner part
 * innermost and vectorized when "vec", the "i" loop parallel when
 * "par". */
static ts_schedule *inner_j(ts_ctx *ctx, ts_dag *dag, bool vec, bool par)
{
	ts_schedule *s = ts_schedule_new(ctx, dag);
	const char *order[] = { "i", "j.o", "k", "j.i" };

	assert_int_equal(ts_schedule_split(s, "C", "j", 8, TS_TAIL_GUARD),
		TS_OK);
	assert_int_equal(ts_schedule_reorder(s, "C", 4, order), TS_OK);
	if (vec)
		assert_int_equal(ts_schedule_vectorize(s, "C", "j.i"), TS_OK);
	if (par)
		assert_int_equal(ts_schedule_parallel(s, "C", "i"), TS_OK);
	return s;
}

/* Fill "f" (on the caller's stack, which the collector scans) with a
 * hand-lowered matmul C = A B of "dag": loops i, j around the init
 * C[i, j] = 0, then loops i, then "order" ("jk" or "kj") around
 * C[i, j] = C[i, j] + A[i, k] * B[k, j]; return "f". */
static ts_func *hand_matmul(ts_ctx *ctx, ts_dag *dag, const char *order,
	ts_func *f)
{
	ts_tensor *A = dag->inputs[0], *B = dag->inputs[1];
	ts_tensor *C = dag->outputs[0];
	ts_axis *i0 = ts_loop_var(ctx, "i0", 64), *j0 = ts_loop_var(ctx, "j0", 40);
	ts_axis *i = ts_loop_var(ctx, "i", 64), *j = ts_loop_var(ctx, "j", 40);
	ts_axis *k = ts_loop_var(ctx, "k", 48);
	ts_expr *c0[2] = { ts_var(ctx, i0), ts_var(ctx, j0) };
	ts_expr *c[2] = { ts_var(ctx, i), ts_var(ctx, j) };
	ts_expr *a[2] = { ts_var(ctx, i), ts_var(ctx, k) };
	ts_expr *b[2] = { ts_var(ctx, k), ts_var(ctx, j) };
	ts_expr *upd = ts_add(ctx, ts_load(ctx, C, 2, c), ts_mul(ctx,
		ts_load(ctx, A, 2, a), ts_load(ctx, B, 2, b)));
	ts_stmt *init = ts_stmt_for(i0, TS_LOOP_SERIAL, ts_stmt_for(j0,
		TS_LOOP_SERIAL, ts_stmt_store(C, 2, c0, ts_const(ctx, TS_F32,
		0))));
	ts_stmt *body = ts_stmt_store(C, 2, c, upd);
	ts_axis *inner = order[1] == 'k' ? k : j, *outer = inner == k ? j : k;
	ts_stmt *s[2];

	body = ts_stmt_for(i, TS_LOOP_SERIAL, ts_stmt_for(outer,
		TS_LOOP_SERIAL, ts_stmt_for(inner, TS_LOOP_SERIAL, body)));
	s[0] = init;
	s[1] = body;
	memset(f, 0, sizeof(*f));
	f->name = "hand";
	f->dag = dag;
	f->body = ts_stmt_block(2, s);
	return f;
}

static void test_features_names__distinct_and_complete(void **state)
{
	for (int i = 0; i < TS_FEAT_COUNT; i++) {
		assert_non_null(ts_feature_name(i));
		for (int j = 0; j < i; j++)
			assert_string_not_equal(ts_feature_name(i),
				ts_feature_name(j));
	}
	assert_null(ts_feature_name(TS_FEAT_COUNT));
	assert_null(ts_feature_name(-1));
}

static void test_features_naive__counts_match_the_loop_nest(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	float f[TS_FEAT_COUNT];
	ts_func hf;

	assert_non_null(dag);
	assert_int_equal(ts_func_features(ctx, hand_matmul(ctx, dag, "jk", &hf), 64,
		f), TS_OK);
	/* an init store (64*40) and an update store (64*40*48) */
	assert_float_equal(raw(f[TS_FEAT_STORE_STMTS]), 2, 1e-3);
	assert_float_equal(raw(f[TS_FEAT_STORES]), 64 * 40 * 49, 1);
	/* one multiply feeding one add per update */
	assert_float_equal(raw(f[TS_FEAT_FLOAT_MUL]), 64 * 40 * 48, 1);
	assert_float_equal(raw(f[TS_FEAT_FLOAT_FMA]), 64 * 40 * 48, 1);
	assert_float_equal(raw(f[TS_FEAT_FLOAT_ADDSUB]), 64 * 40 * 48, 1);
	assert_float_equal(raw(f[TS_FEAT_FLOAT_SPECIAL]), 0, 1e-6);
	/* loads of C, A and B in the update */
	assert_float_equal(raw(f[TS_FEAT_LOADS]), 3 * 64 * 40 * 48, 4);
	assert_float_equal(raw(f[TS_FEAT_VEC_LOOPS]), 0, 1e-6);
	assert_float_equal(raw(f[TS_FEAT_PAR_LOOPS]), 0, 1e-6);
	/* the update touches all of A, B and C (twice: read and written),
	 * the init all of C: unique bytes are the boxes of the indices */
	assert_float_equal(raw(f[TS_FEAT_UNIQUE_BYTES]),
		4.0 * (64 * 48 + 48 * 40 + 3 * 64 * 40), 8);
}

static void test_features_vectorized__differs_in_vector_slots(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	float s[TS_FEAT_COUNT], v[TS_FEAT_COUNT];

	assert_non_null(dag);
	features_of(ctx, dag, inner_j(ctx, dag, false, false), s);
	features_of(ctx, dag, inner_j(ctx, dag, true, false), v);
	/* every store inside the j.i loop of 8 lanes */
	assert_float_equal(raw(s[TS_FEAT_VEC_LOOPS]), 0, 1e-6);
	assert_true(raw(v[TS_FEAT_VEC_LOOPS]) >= 1 - 1e-3);
	assert_float_equal(raw(s[TS_FEAT_VEC_WIDTH]), 0, 1e-6);
	assert_float_equal(raw(v[TS_FEAT_VEC_WIDTH]),
		8 * raw(v[TS_FEAT_VEC_LOOPS]), 1e-2);
	assert_float_equal(raw(s[TS_FEAT_VEC_OPS]), 0, 1e-6);
	assert_true(raw(v[TS_FEAT_VEC_OPS]) >= 2.0 * 64 * 40 * 48 - 1);
	/* the same work and the same memory either way */
	for (int i = TS_FEAT_STORES; i <= TS_FEAT_LOADS; i++)
		assert_float_equal(s[i], v[i], 1e-6);
	assert_float_equal(s[TS_FEAT_BYTES], v[TS_FEAT_BYTES], 1e-6);
	assert_float_equal(s[TS_FEAT_STRIDE1], v[TS_FEAT_STRIDE1], 1e-6);
	assert_float_equal(s[TS_FEAT_PAR_LOOPS], v[TS_FEAT_PAR_LOOPS], 1e-6);
}

static void test_features_loop_order__changes_strides(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	float n[TS_FEAT_COUNT], j[TS_FEAT_COUNT];
	ts_func hf;

	assert_non_null(dag);
	assert_int_equal(ts_func_features(ctx, hand_matmul(ctx, dag, "jk", &hf), 64,
		n), TS_OK);
	assert_int_equal(ts_func_features(ctx, hand_matmul(ctx, dag, "kj", &hf), 64,
		j), TS_OK);
	/* naive, k innermost: init C[i, j] along j is contiguous; the
	 * update reads A along k (stride 1), B along k (stride 40), C and
	 * its store invariant (stride 0) */
	assert_float_equal(raw(n[TS_FEAT_STRIDE0]), 2, 1e-3);
	assert_float_equal(raw(n[TS_FEAT_STRIDE1]), 2, 1e-3);
	assert_float_equal(raw(n[TS_FEAT_STRIDED]), 1, 1e-3);
	assert_float_equal(raw(n[TS_FEAT_STRIDE]), 40 + 2, 1e-3);
	/* j innermost: A invariant; B, C read and stored contiguous */
	assert_float_equal(raw(j[TS_FEAT_STRIDE0]), 1, 1e-3);
	assert_float_equal(raw(j[TS_FEAT_STRIDE1]), 4, 1e-3);
	assert_float_equal(raw(j[TS_FEAT_STRIDED]), 0, 1e-6);
	assert_float_equal(raw(j[TS_FEAT_GUARDS]), 0, 1e-6);
	/* reuse distance: for each access, the bytes all four accesses of
	 * the update touch inside the loop that carries its reuse.  k
	 * innermost: C (load, store) reused across k: 4 elements each; A
	 * across j: k's 1 + 1 + 48 + 48; B across i: the j, k loops' 40 +
	 * 40 + 48 + 1920.  j innermost: C across k: 40 + 40 + 1 + 40 each;
	 * A across j: 4; B across i: 2048 again */
	assert_float_equal(raw(n[TS_FEAT_REUSE_DIST]),
		4.0 * (4 + 4 + 98 + 2048), 1);
	assert_float_equal(raw(j[TS_FEAT_REUSE_DIST]),
		4.0 * (121 + 121 + 4 + 2048), 1);
}

static void test_features_parallel__counts_parallel_extent(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	float s[TS_FEAT_COUNT], p[TS_FEAT_COUNT];

	assert_non_null(dag);
	features_of(ctx, dag, inner_j(ctx, dag, true, false), s);
	features_of(ctx, dag, inner_j(ctx, dag, true, true), p);
	/* every store runs under the parallel loop i of 64 */
	assert_float_equal(raw(s[TS_FEAT_PAR_LOOPS]), 0, 1e-6);
	assert_float_equal(raw(p[TS_FEAT_PAR_LOOPS]),
		raw(p[TS_FEAT_STORE_STMTS]), 1e-3);
	assert_float_equal(raw(p[TS_FEAT_PAR_EXTENT]),
		64 * raw(p[TS_FEAT_STORE_STMTS]), 0.5);
	assert_true(p[TS_FEAT_PAR_WORK] < s[TS_FEAT_PAR_WORK]);
}

static void test_features_guarded_tail__counts_guards(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	ts_schedule *s = ts_schedule_new(ctx, dag);
	float f[TS_FEAT_COUNT];

	assert_non_null(dag);
	assert_int_equal(ts_schedule_split(s, "C", "j", 16, TS_TAIL_GUARD),
		TS_OK);
	features_of(ctx, dag, s, f);
	assert_true(raw(f[TS_FEAT_GUARDS]) >= 1 - 1e-3);
	/* 40 padded to 48 iterations of j */
	assert_true(raw(f[TS_FEAT_STORES]) > 64 * 40 * 49);
}

static void test_features_same_program__same_vector(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "mm.tsl", matmul_src);
	float a[TS_FEAT_COUNT], b[TS_FEAT_COUNT];

	assert_non_null(dag);
	features_of(ctx, dag, inner_j(ctx, dag, true, true), a);
	features_of(ctx, dag, inner_j(ctx, dag, true, true), b);
	assert_memory_equal(a, b, sizeof(a));
}

/* A sine is a special operation, isnan a float comparison, sign an
 * addition's worth: one each per element of 100. */
static void test_features_math_functions__by_class(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "fn.tsl", "input X: f32[100]\n"
		"output Y[i: 100] = select(isnan(X[i]), 0.0,\n"
		"  sign(sin(X[i])))\n");
	float f[TS_FEAT_COUNT];

	assert_non_null(dag);
	features_of(ctx, dag, NULL, f);
	assert_float_equal(raw(f[TS_FEAT_FLOAT_SPECIAL]), 100, 1e-3);
	/* isnan and the select */
	assert_float_equal(raw(f[TS_FEAT_FLOAT_CMP]), 200, 1e-3);
	assert_float_equal(raw(f[TS_FEAT_FLOAT_ADDSUB]), 100, 1e-3);
}

static void test_features_no_function__is_an_error(void **state)
{
	ts_ctx *ctx = *state;
	float f[TS_FEAT_COUNT];

	assert_int_equal(ts_func_features(ctx, NULL, 64, f), TS_ERROR);
	assert_error_contains(ctx, "features: no lowered function");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_features_names__distinct_and_complete),
		TS_TEST(test_features_naive__counts_match_the_loop_nest),
		TS_TEST(test_features_vectorized__differs_in_vector_slots),
		TS_TEST(test_features_loop_order__changes_strides),
		TS_TEST(test_features_parallel__counts_parallel_extent),
		TS_TEST(test_features_guarded_tail__counts_guards),
		TS_TEST(test_features_same_program__same_vector),
		TS_TEST(test_features_math_functions__by_class),
		TS_TEST(test_features_no_function__is_an_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
