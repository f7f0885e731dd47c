/* The DSL constructors: typing, every error they report and its message,
 * the DAG's order and consumers, and the canonical form and hash. */
#include <config.h>

#include <ctype.h>

#include "tests/common.h"

static const int64_t s4[1] = { 4 }, s23[2] = { 2, 3 };

/* Each error case builds something invalid in a fresh context and returns
 * what the failing constructor returned (NULL is expected). */
typedef const void *(*build_fn)(ts_ctx *ctx);

static ts_tensor *f32_2x3(ts_ctx *ctx, const char *name)
{
	return ts_placeholder(ctx, name, TS_F32, 2, s23);
}

static const void *wrong_index_count(ts_ctx *ctx)
{
	ts_axis *i = ts_axis_new(ctx, "i", 2);

	return ts_at(ctx, f32_2x3(ctx, "A"), 1, ts_var(ctx, i));
}

static const void *f32_plus_i32(ts_ctx *ctx)
{
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4);
	ts_tensor *B = ts_placeholder(ctx, "B", TS_I32, 1, s4);
	ts_axis *i = ts_axis_new(ctx, "i", 4);

	return ts_add(ctx, ts_at(ctx, A, 1, ts_var(ctx, i)),
		ts_at(ctx, B, 1, ts_var(ctx, i)));
}

static const void *exp_of_int(ts_ctx *ctx)
{
	ts_tensor *B = ts_placeholder(ctx, "B", TS_I32, 1, s4);
	ts_axis *i = ts_axis_new(ctx, "i", 4);

	return ts_unary(ctx, TS_OP_EXP, ts_at(ctx, B, 1, ts_var(ctx, i)));
}

static const void *sqrt_of_i64_var(ts_ctx *ctx)
{
	return ts_unary(ctx, TS_OP_SQRT, ts_var(ctx, ts_axis_new(ctx, "i", 4)));
}

static const void *true_div_of_ints(ts_ctx *ctx)
{
	ts_tensor *B = ts_placeholder(ctx, "B", TS_I32, 1, s4);
	ts_axis *i = ts_axis_new(ctx, "i", 4);

	return ts_div(ctx, ts_at(ctx, B, 1, ts_var(ctx, i)), ts_int(ctx, 2));
}

static const void *huge_stage(ts_ctx *ctx)
{
	ts_axis *i = ts_axis_new(ctx, "i", INT64_MAX / 2);
	ts_axis *k = ts_reduce_axis(ctx, "k", 4);
	ts_expr *v = ts_var(ctx, k);

	return ts_compute(ctx, "S", 1, &i, ts_sum(ctx, 1, &k,
		ts_cast(ctx, TS_I8, v)));
}

static const void *negative_extent_axis(ts_ctx *ctx)
{
	return ts_reduce_axis(ctx, "k", -3);
}

static const void *huge_tensor(ts_ctx *ctx)
{
	static const int64_t shape[2] = { 2, INT64_MAX / 2 };

	return ts_placeholder(ctx, "A", TS_F32, 2, shape);
}

static const void *negative_extent_tensor(ts_ctx *ctx)
{
	static const int64_t shape[1] = { -5 };

	return ts_placeholder(ctx, "A", TS_F32, 1, shape);
}

/* Names need only be unique within a DAG: the clash is found there. */
static const void *duplicate_name(ts_ctx *ctx)
{
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4);
	ts_tensor *A2 = ts_placeholder(ctx, "A", TS_I32, 1, s4), *S;
	ts_axis *i = ts_axis_new(ctx, "i", 4);

	S = ts_compute(ctx, "S", 1, &i, ts_add(ctx,
		ts_at(ctx, A, 1, ts_var(ctx, i)), ts_cast(ctx, TS_F32,
		ts_at(ctx, A2, 1, ts_var(ctx, i)))));
	return ts_dag_new(ctx, 0, NULL, 1, &S);
}

static const void *duplicate_stage_name(ts_ctx *ctx)
{
	ts_axis *i = ts_axis_new(ctx, "i", 4);
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4), *S;

	S = ts_compute(ctx, "A", 1, &i, ts_at(ctx, A, 1, ts_var(ctx, i)));
	return ts_dag_new(ctx, 0, NULL, 1, &S);
}

static const void *raxis_outside_reducer(ts_ctx *ctx)
{
	ts_axis *i = ts_axis_new(ctx, "i", 2);
	ts_axis *k = ts_reduce_axis(ctx, "k", 3);

	return ts_compute(ctx, "S", 1, &i, ts_at(ctx, f32_2x3(ctx, "A"), 2,
		ts_var(ctx, i), ts_var(ctx, k)));
}

static const void *axis_of_other_stage(ts_ctx *ctx)
{
	ts_axis *i = ts_axis_new(ctx, "i", 2), *q = ts_axis_new(ctx, "q", 3);

	return ts_compute(ctx, "S", 1, &i, ts_at(ctx, f32_2x3(ctx, "A"), 2,
		ts_var(ctx, i), ts_var(ctx, q)));
}

static const void *constant_index_oob(ts_ctx *ctx)
{
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4);

	return ts_at(ctx, A, 1, ts_int(ctx, 5));
}

static const void *negative_constant_index(ts_ctx *ctx)
{
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4);

	return ts_at(ctx, A, 1, ts_int(ctx, -1));
}

static const void *float_index(ts_ctx *ctx)
{
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4);

	return ts_at(ctx, A, 1, ts_float(ctx, 1.5));
}

static const void *reduce_over_spatial(ts_ctx *ctx)
{
	ts_axis *i = ts_axis_new(ctx, "i", 4);
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4);

	return ts_sum(ctx, 1, &i, ts_at(ctx, A, 1, ts_var(ctx, i)));
}

static const void *axis_bound_twice(ts_ctx *ctx)
{
	ts_axis *k = ts_reduce_axis(ctx, "k", 4), *kk[2] = { k, k };
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4);

	return ts_sum(ctx, 2, kk, ts_at(ctx, A, 1, ts_var(ctx, k)));
}

static const void *axis_bound_nested(ts_ctx *ctx)
{
	ts_axis *k = ts_reduce_axis(ctx, "k", 4);
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4);
	ts_expr *inner = ts_rmax(ctx, 1, &k, ts_at(ctx, A, 1, ts_var(ctx, k)));

	return ts_compute(ctx, "S", 0, NULL, ts_sum(ctx, 1, &k, inner));
}

static const void *spatial_axis_twice(ts_ctx *ctx)
{
	ts_axis *i = ts_axis_new(ctx, "i", 4), *ii[2] = { i, i };

	return ts_compute(ctx, "S", 2, ii, ts_float(ctx, 1));
}

static const void *output_is_placeholder(ts_ctx *ctx)
{
	ts_tensor *A = f32_2x3(ctx, "A");

	return ts_dag_new(ctx, 0, NULL, 1, &A);
}

static const void *placeholder_not_listed(ts_ctx *ctx)
{
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4);
	ts_tensor *B = ts_placeholder(ctx, "B", TS_F32, 1, s4), *S;
	ts_axis *i = ts_axis_new(ctx, "i", 4);

	S = ts_compute(ctx, "S", 1, &i, ts_add(ctx,
		ts_at(ctx, A, 1, ts_var(ctx, i)),
		ts_at(ctx, B, 1, ts_var(ctx, i))));
	return ts_dag_new(ctx, 1, &A, 1, &S);
}

static const void *input_is_computed(ts_ctx *ctx)
{
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4), *S;
	ts_axis *i = ts_axis_new(ctx, "i", 4);
	ts_tensor *in[2];

	S = ts_compute(ctx, "S", 1, &i, ts_at(ctx, A, 1, ts_var(ctx, i)));
	in[0] = A;
	in[1] = S;
	return ts_dag_new(ctx, 2, in, 1, &S);
}

static const void *half_with_int(ts_ctx *ctx)
{
	ts_tensor *B = ts_placeholder(ctx, "B", TS_I32, 1, s4);
	ts_axis *i = ts_axis_new(ctx, "i", 4);

	return ts_mul(ctx, ts_at(ctx, B, 1, ts_var(ctx, i)),
		ts_float(ctx, 0.5));
}

static const void *not_of_float(ts_ctx *ctx)
{
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4);
	ts_axis *i = ts_axis_new(ctx, "i", 4);

	return ts_unary(ctx, TS_OP_NOT, ts_at(ctx, A, 1, ts_var(ctx, i)));
}

static const void *select_on_float(ts_ctx *ctx)
{
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4);
	ts_axis *i = ts_axis_new(ctx, "i", 4);
	ts_expr *a = ts_at(ctx, A, 1, ts_var(ctx, i));

	return ts_select(ctx, a, a, a);
}

struct error_case {
	const char *name;
	build_fn build;
	const char *want;
};

static const struct error_case error_cases[] = {
	{ "index count", wrong_index_count, "wrong number of indices for "
		"tensor 'A': 1 given, it has 2 dimensions" },
	{ "f32 + i32", f32_plus_i32, "dtype mismatch: f32 + i32" },
	{ "exp(i32)", exp_of_int, "'exp' needs a floating-point operand, "
		"got i32" },
	{ "sqrt(i64)", sqrt_of_i64_var, "'sqrt' needs a floating-point "
		"operand, got i64" },
	{ "i32 / i32", true_div_of_ints, "integer division is '//'" },
	{ "iterations overflow", huge_stage, "stage 'S' is too large: with "
		"axis 'k' (extent 4) its number of iterations overflows 64 "
		"bits" },
	{ "negative extent", negative_extent_axis,
		"axis 'k' has negative extent -3" },
	{ "bytes overflow", huge_tensor, "tensor 'A' is too large: with "
		"dimension 1 (extent 4611686018427387903) its size in bytes "
		"overflows 64 bits" },
	{ "negative dim", negative_extent_tensor,
		"tensor 'A': dimension 0 has negative extent -5" },
	{ "duplicate", duplicate_name, "tensor 'A' is defined twice" },
	{ "duplicate stage", duplicate_stage_name,
		"tensor 'A' is defined twice" },
	{ "raxis outside", raxis_outside_reducer, "stage 'S': reduction axis "
		"'k' is used outside a reducer" },
	{ "foreign axis", axis_of_other_stage,
		"stage 'S': axis 'q' is not an axis of this stage" },
	{ "constant index", constant_index_oob, "constant index 5 is out of "
		"bounds for dimension 0 of tensor 'A' (extent 4)" },
	{ "negative constant index", negative_constant_index,
		"constant index -1 is out of bounds for dimension 0 of tensor "
		"'A'" },
	{ "float index", float_index, "index 0 of tensor 'A' is the float 1.5" },
	{ "reduce spatial", reduce_over_spatial,
		"sum: axis 'i' is a spatial axis, not a reduction axis" },
	{ "bound twice", axis_bound_twice,
		"sum: reduction axis 'k' is bound twice" },
	{ "bound nested", axis_bound_nested, "stage 'S': reduction axis 'k' "
		"is bound by two nested reducers" },
	{ "spatial twice", spatial_axis_twice,
		"stage 'S': axis 'i' appears twice" },
	{ "placeholder output", output_is_placeholder,
		"output 'A' is a placeholder, not a computed tensor" },
	{ "unlisted placeholder", placeholder_not_listed,
		"placeholder 'B' is read but is not an input of the DAG" },
	{ "computed input", input_is_computed,
		"input 'S' is computed by a stage, not a placeholder" },
	{ "0.5 * i32", half_with_int,
		"literal 0.5 used with an i32 operand" },
	{ "!f32", not_of_float, "'!' needs a bool operand, got f32" },
	{ "select(f32)", select_on_float,
		"select: the condition must be bool, got f32" },
};

static void test_constructors_errors__return_null_with_message(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(error_cases) / sizeof(*error_cases);
	     i++) {
		ts_ctx *ctx = ts_ctx_alloc();
		const void *got = error_cases[i].build(ctx);
		const char *msg = ts_ctx_error(ctx);

		if (got)
			fail_msg("%s: expected NULL", error_cases[i].name);
		if (!msg || !strstr(msg, error_cases[i].want))
			fail_msg("%s: expected \"%s\", got \"%s\"",
				error_cases[i].name, error_cases[i].want,
				msg ? msg : "(none)");
		ts_ctx_free(ctx);
	}
}

/* A NULL argument passes through without a new message. */
static void test_constructors_null__propagate_silently(void **state)
{
	ts_ctx *ctx = *state;
	ts_axis *i = ts_axis_new(ctx, "i", 4);

	assert_null(ts_add(ctx, NULL, ts_var(ctx, i)));
	assert_null(ts_unary(ctx, TS_OP_EXP, NULL));
	assert_null(ts_sum(ctx, 1, &i, NULL));
	assert_null(ts_compute(ctx, "S", 1, &i, NULL));
	assert_null(ts_var(ctx, NULL));
	assert_null(ts_ctx_error(ctx));
}

/* Literals take the dtype of the operand they meet. */
static void test_literals__take_peer_dtype(void **state)
{
	ts_ctx *ctx = *state;
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 1, s4);
	ts_tensor *B = ts_placeholder(ctx, "B", TS_I8, 1, s4);
	ts_tensor *H = ts_placeholder(ctx, "H", TS_F16, 1, s4);
	ts_axis *i = ts_axis_new(ctx, "i", 4);
	ts_expr *a = ts_at(ctx, A, 1, ts_var(ctx, i));
	ts_expr *b = ts_at(ctx, B, 1, ts_var(ctx, i));
	ts_expr *h = ts_at(ctx, H, 1, ts_var(ctx, i));
	ts_expr *e;

	e = ts_add(ctx, ts_int(ctx, 1), a);
	assert_non_null(e);
	assert_int_equal(e->dtype, TS_F32);
	assert_int_equal(e->a->dtype, TS_F32);
	assert_false(e->a->literal);
	e = ts_mul(ctx, b, ts_int(ctx, 3));
	assert_int_equal(e->dtype, TS_I8);
	assert_int_equal(e->b->dtype, TS_I8);
	/* A float literal with an integral value is fine with integers. */
	e = ts_mul(ctx, b, ts_float(ctx, 2.0));
	assert_non_null(e);
	assert_int_equal(e->dtype, TS_I8);
	e = ts_sub(ctx, h, ts_float(ctx, 0.5));
	assert_int_equal(e->dtype, TS_F16);
	/* Two literals fold, or default to i32 / f32. */
	e = ts_add(ctx, ts_int(ctx, 2), ts_int(ctx, 3));
	assert_true(e->literal);
	assert_int_equal(e->ival, 5);
	e = ts_div(ctx, ts_int(ctx, 1), ts_int(ctx, 2));
	assert_int_equal(e->dtype, TS_F32);
	e = ts_binary(ctx, TS_OP_LT, ts_var(ctx, i), ts_int(ctx, 2));
	assert_int_equal(e->dtype, TS_BOOL);
	assert_int_equal(e->b->dtype, TS_I64);
	/* Comparisons give bool; casts change the dtype. */
	e = ts_cast(ctx, TS_F64, b);
	assert_int_equal(e->kind, TS_EXPR_CAST);
	assert_int_equal(e->dtype, TS_F64);
	assert_ptr_equal(ts_cast(ctx, TS_I8, b), b);
}

/* X -> A; A -> B, A -> C; B, C -> D. */
static ts_tensor *diamond(ts_ctx *ctx, const char *const *names,
	ts_reducer red)
{
	ts_tensor *X = ts_placeholder(ctx, names[0], TS_F32, 1, s4);
	ts_axis *i = ts_axis_new(ctx, names[5], 4);
	ts_axis *k = ts_reduce_axis(ctx, names[6], 4);
	ts_tensor *A, *B, *C;
	ts_expr *vi = ts_var(ctx, i);

	A = ts_compute(ctx, names[1], 1, &i, ts_mul(ctx,
		ts_at(ctx, X, 1, vi), ts_float(ctx, 2)));
	B = ts_compute(ctx, names[2], 1, &i, ts_unary(ctx, TS_OP_EXP,
		ts_at(ctx, A, 1, vi)));
	C = ts_compute(ctx, names[3], 0, NULL, ts_reduce(ctx, red, 1, &k,
		ts_at(ctx, A, 1, ts_var(ctx, k))));
	return ts_compute(ctx, names[4], 1, &i, ts_sub(ctx,
		ts_at(ctx, B, 1, vi), ts_at(ctx, C, 0)));
}

static const char *const names1[7] = { "X", "A", "B", "C", "D", "i", "k" };
static const char *const names2[7] = { "in", "s1", "s2", "s3", "out", "p",
	"r" };
static const char *const names3[7] = { "x3", "a3", "b3", "c3", "d3", "i",
	"k" };

static void test_dag_diamond__topological_order_and_consumers(void **state)
{
	ts_ctx *ctx = *state;
	ts_tensor *D = diamond(ctx, names1, TS_RED_SUM);
	ts_dag *dag = ts_dag_new(ctx, 0, NULL, 1, &D);
	int a, b, c, d;

	assert_non_null(dag);
	assert_int_equal(dag->nstages, 4);
	assert_int_equal(dag->ninputs, 1);
	assert_string_equal(dag->inputs[0]->name, "X");
	a = ts_dag_stage_index(dag, ts_dag_find_stage(dag, "A"));
	b = ts_dag_stage_index(dag, ts_dag_find_stage(dag, "B"));
	c = ts_dag_stage_index(dag, ts_dag_find_stage(dag, "C"));
	d = ts_dag_stage_index(dag, ts_dag_find_stage(dag, "D"));
	assert_true(a == 0 && d == 3);
	assert_true(a < b && a < c && b < d && c < d);
	assert_int_equal(dag->nconsumers[a], 2);
	assert_true((dag->consumers[a][0] == b && dag->consumers[a][1] == c) ||
		(dag->consumers[a][0] == c && dag->consumers[a][1] == b));
	assert_int_equal(dag->nconsumers[b], 1);
	assert_int_equal(dag->consumers[b][0], d);
	assert_int_equal(dag->nconsumers[c], 1);
	assert_int_equal(dag->consumers[c][0], d);
	assert_int_equal(dag->nconsumers[d], 0);
	assert_true(ts_dag_is_output(dag, D));
	assert_false(ts_dag_is_output(dag, ts_dag_find_tensor(dag, "A")));
	assert_ptr_equal(ts_dag_find_tensor(dag, "X"), dag->inputs[0]);
	assert_null(ts_dag_find_stage(dag, "X"));
}

/* Whether "h" is 16 lower-case hex digits. */
static bool is_hex16(const char *h)
{
	if (!h || strlen(h) != 16)
		return false;
	for (int i = 0; i < 16; i++)
		if (!isxdigit((unsigned char)h[i]) ||
		    isupper((unsigned char)h[i]))
			return false;
	return true;
}

static void test_dag_canonical__equal_up_to_renaming(void **state)
{
	ts_ctx *ctx = *state;
	ts_tensor *D1 = diamond(ctx, names1, TS_RED_SUM);
	ts_tensor *D2 = diamond(ctx, names2, TS_RED_SUM);
	ts_tensor *D3 = diamond(ctx, names3, TS_RED_MAX);
	ts_dag *g1 = ts_dag_new(ctx, 0, NULL, 1, &D1);
	ts_dag *g2 = ts_dag_new(ctx, 0, NULL, 1, &D2);
	ts_dag *g3 = ts_dag_new(ctx, 0, NULL, 1, &D3);
	char *c1, *c2, *c3;
	const char *h1;

	assert_non_null(g1);
	assert_non_null(g2);
	assert_non_null(g3);
	c1 = ts_dag_canonical_string(g1);
	c2 = ts_dag_canonical_string(g2);
	c3 = ts_dag_canonical_string(g3);
	assert_string_equal(c1, c2);
	assert_string_not_equal(c1, c3);
	assert_null(strstr(c2, "s3"));
	h1 = ts_dag_hash(g1);
	assert_true(is_hex16(h1));
	assert_string_equal(h1, ts_dag_hash(g1));
	assert_string_equal(h1, ts_dag_hash(g2));
	assert_string_not_equal(h1, ts_dag_hash(g3));
}

/* The hash is a function of the text only: a DAG built in another
 * context, with other ids, hashes the same. */
static void test_dag_hash__stable_across_contexts(void **state)
{
	ts_ctx *ctx = *state, *other = ts_ctx_alloc();
	ts_tensor *D1 = diamond(ctx, names1, TS_RED_SUM);
	ts_tensor *D2;
	ts_dag *g1 = ts_dag_new(ctx, 0, NULL, 1, &D1), *g2;

	/* Shift the ids of the other context. */
	ts_axis_new(other, "unused", 3);
	ts_placeholder(other, "unused", TS_F32, 1, s4);
	D2 = diamond(other, names2, TS_RED_SUM);
	g2 = ts_dag_new(other, 0, NULL, 1, &D2);
	assert_non_null(g2);
	assert_string_equal(ts_dag_hash(g1), ts_dag_hash(g2));
	ts_ctx_free(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_constructors_errors__return_null_with_message),
		TS_TEST(test_constructors_null__propagate_silently),
		TS_TEST(test_literals__take_peer_dtype),
		TS_TEST(test_dag_diamond__topological_order_and_consumers),
		TS_TEST(test_dag_canonical__equal_up_to_renaming),
		TS_TEST(test_dag_hash__stable_across_contexts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
