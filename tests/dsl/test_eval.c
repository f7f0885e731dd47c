/* The reference interpreter: hand-computed results for every operator,
 * intrinsic and reducer, rounding to dtypes, padding, convolution, gathers
 * and their errors, random inputs, and a 256^3 matmul against plain C. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <time.h>

#include "tests/common.h"

/* Assert that "got" is within "eps" of "want", naming "what". */
static void check_near(double got, double want, double eps, const char *what)
{
	bool ok = isnan(want) ? isnan(got) : isinf(want) ? got == want
		: fabs(got - want) <= eps;

	if (!ok)
		fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

/* An array of dtype "t" and shape "shape" holding "vals". */
static ts_array *array_of(ts_ctx *ctx, ts_dtype t, int ndim,
	const int64_t *shape, const double *vals)
{
	ts_array *a = ts_array_alloc(ctx, t, ndim, shape);

	assert_non_null(a);
	for (int64_t i = 0; i < a->size; i++)
		ts_array_set(a, i, vals[i]);
	return a;
}

/* Evaluate the single-output "dag" on "in" and return its output. */
static ts_array *eval1(ts_ctx *ctx, ts_dag *dag, ts_array **in)
{
	ts_array *out = NULL;

	if (!dag)
		fail_msg("DAG: %s", ts_ctx_error(ctx));
	if (ts_eval(ctx, dag, in, &out) < 0)
		fail_msg("eval: %s", ts_ctx_error(ctx));
	assert_non_null(out);
	return out;
}

/* Assert that "a" holds the "n" values "want". */
static void check_values(const ts_array *a, int64_t n, const double *want,
	double eps, const char *what)
{
	char buf[128];

	assert_int_equal(a->size, n);
	for (int64_t i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "%s[%lld]", what, (long long)i);
		check_near(ts_array_get(a, i), want[i], eps, buf);
	}
}

/* Evaluate out[i] = "op"(X[i]) (or X[i] "op" Y[i]) for "n" values of
 * dtype "t"; the output has dtype "ot" (the expression's when it is the
 * same as "t" or bool). */
static ts_array *eval_op(ts_ctx *ctx, int row, ts_op op, ts_dtype t, int n,
	const double *x, const double *y)
{
	char xn[32], yn[32], on[32];
	int64_t shape[1] = { n };
	ts_tensor *X, *Y = NULL, *O;
	ts_axis *i;
	ts_expr *e;
	ts_array *in[2];

	snprintf(xn, sizeof(xn), "X%d", row);
	snprintf(yn, sizeof(yn), "Y%d", row);
	snprintf(on, sizeof(on), "O%d", row);
	X = ts_placeholder(ctx, xn, t, 1, shape);
	i = ts_axis_new(ctx, on, n);
	e = ts_at(ctx, X, 1, ts_var(ctx, i));
	if (ts_op_is_unary(op)) {
		e = ts_unary(ctx, op, e);
	} else {
		Y = ts_placeholder(ctx, yn, t, 1, shape);
		e = ts_binary(ctx, op, e, ts_at(ctx, Y, 1, ts_var(ctx, i)));
	}
	O = ts_compute(ctx, on, 1, &i, e);
	if (!O)
		fail_msg("row %d: %s", row, ts_ctx_error(ctx));
	in[0] = array_of(ctx, t, 1, shape, x);
	in[1] = Y ? array_of(ctx, t, 1, shape, y) : NULL;
	return eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &O), in);
}

#define NV 4

struct op_case {
	ts_op op;
	double x[NV], y[NV], want[NV];
};

/* Every float binary operator and intrinsic, in f64. */
static const struct op_case float_cases[] = {
	{ TS_OP_ADD, { 1, -2.5, 0.25, 1e10 }, { 2, 1, 0.5, 1 },
		{ 3, -1.5, 0.75, 1e10 + 1 } },
	{ TS_OP_SUB, { 1, -2.5, 0.25, 0 }, { 2, 1, 0.5, 3 },
		{ -1, -3.5, -0.25, -3 } },
	{ TS_OP_MUL, { 1.5, -2, 0.25, 0 }, { 2, 3, -4, 7 }, { 3, -6, -1, 0 } },
	{ TS_OP_DIV, { 1, -3, 7, 1 }, { 4, 2, -2, 0 }, { 0.25, -1.5, -3.5,
		INFINITY } },
	{ TS_OP_FLOORDIV, { 7.5, -7.5, 7.5, -7.5 }, { 2, 2, -2, -2 },
		{ 3, -4, -4, 3 } },
	{ TS_OP_MOD, { 7.5, -7.5, 7.5, -7.5 }, { 2, 2, -2, -2 },
		{ 1.5, 0.5, -0.5, -1.5 } },
	{ TS_OP_MIN, { 1, -2, 3, 0 }, { 2, -3, 3, -0.5 }, { 1, -3, 3, -0.5 } },
	{ TS_OP_MAX, { 1, -2, 3, 0 }, { 2, -3, 3, -0.5 }, { 2, -2, 3, 0 } },
	{ TS_OP_POW, { 2, 9, 2, 4 }, { 10, 0.5, -1, 0 }, { 1024, 3, 0.5, 1 } },
	{ TS_OP_LT, { 1, 2, 3, -1 }, { 2, 2, 2, 0 }, { 1, 0, 0, 1 } },
	{ TS_OP_LE, { 1, 2, 3, -1 }, { 2, 2, 2, 0 }, { 1, 1, 0, 1 } },
	{ TS_OP_GT, { 1, 2, 3, -1 }, { 2, 2, 2, 0 }, { 0, 0, 1, 0 } },
	{ TS_OP_GE, { 1, 2, 3, -1 }, { 2, 2, 2, 0 }, { 0, 1, 1, 0 } },
	{ TS_OP_EQ, { 1, 2, 3, -1 }, { 2, 2, 2, 0 }, { 0, 1, 0, 0 } },
	{ TS_OP_NE, { 1, 2, 3, -1 }, { 2, 2, 2, 0 }, { 1, 0, 1, 1 } },
	{ TS_OP_NEG, { 1, -2.5, 0, 3 }, { 0 }, { -1, 2.5, 0, -3 } },
	{ TS_OP_EXP, { 0, 1, -1, 2 }, { 0 }, { 1, M_E, 1 / M_E, M_E * M_E } },
	{ TS_OP_LOG, { 1, M_E, 0.5, 0 }, { 0 }, { 0, 1, -M_LN2, -INFINITY } },
	{ TS_OP_SQRT, { 4, 2, 0, 0.25 }, { 0 }, { 2, M_SQRT2, 0, 0.5 } },
	{ TS_OP_RSQRT, { 4, 2, 0.25, 1 }, { 0 }, { 0.5, M_SQRT1_2, 2, 1 } },
	{ TS_OP_TANH, { 0, 0.5, -0.5, 20 }, { 0 },
		{ 0, 0.46211715726000974, -0.46211715726000974, 1 } },
	{ TS_OP_SIGMOID, { 0, 2, -2, 40 }, { 0 },
		{ 0.5, 0.88079707797788243, 0.11920292202211755, 1 } },
	{ TS_OP_ERF, { 0, 0.5, -1, 3 }, { 0 },
		{ 0, 0.52049987781304652, -0.84270079294971489,
		0.99997790950300141 } },
	{ TS_OP_ABS, { -2.5, 2.5, 0, -1e-3 }, { 0 }, { 2.5, 2.5, 0, 1e-3 } },
	{ TS_OP_FLOOR, { 1.5, -1.5, 2, -0.25 }, { 0 }, { 1, -2, 2, -1 } },
	{ TS_OP_ROUND, { 2.5, 3.5, -2.5, 0.4999 }, { 0 }, { 2, 4, -2, 0 } },
	{ TS_OP_SIN, { 0, 0.5, -1, 3 }, { 0 },
		{ 0, 0.479425538604203, -0.8414709848078965,
		0.1411200080598672 } },
	{ TS_OP_COS, { 0, 0.5, -1, 3 }, { 0 },
		{ 1, 0.8775825618903728, 0.5403023058681398,
		-0.9899924966004454 } },
	{ TS_OP_TAN, { 0, 0.5, -1, 1 }, { 0 },
		{ 0, 0.5463024898437905, -1.5574077246549023,
		1.5574077246549023 } },
	{ TS_OP_ASIN, { 0, 0.5, -1, 2 }, { 0 }, { 0, M_PI / 6, -M_PI_2, NAN } },
	{ TS_OP_ACOS, { 1, 0.5, -1, 0 }, { 0 }, { 0, M_PI / 3, M_PI, M_PI_2 } },
	{ TS_OP_ATAN, { 0, 1, -1, INFINITY }, { 0 },
		{ 0, M_PI_4, -M_PI_4, M_PI_2 } },
	{ TS_OP_SINH, { 0, 1, -0.5, 2 }, { 0 },
		{ 0, 1.1752011936438014, -0.5210953054937474,
		3.626860407847019 } },
	{ TS_OP_COSH, { 0, 1, -0.5, 2 }, { 0 },
		{ 1, 1.5430806348152437, 1.1276259652063807,
		3.7621956910836314 } },
	{ TS_OP_ASINH, { 0, 1, -0.5, 2 }, { 0 },
		{ 0, 0.881373587019543, -0.48121182505960347,
		1.4436354751788103 } },
	{ TS_OP_ACOSH, { 1, 2, 10, 0.5 }, { 0 },
		{ 0, 1.3169578969248166, 2.993222846126381, NAN } },
	{ TS_OP_ATANH, { 0, 0.5, -0.5, 1 }, { 0 },
		{ 0, 0.5493061443340548, -0.5493061443340548, INFINITY } },
	{ TS_OP_CEIL, { 1.5, -1.5, 2, -0.25 }, { 0 }, { 2, -1, 2, 0 } },
	{ TS_OP_SIGN, { 2.5, -1e-300, 0, NAN }, { 0 }, { 1, -1, 0, NAN } },
	{ TS_OP_ISNAN, { NAN, 1, INFINITY, -INFINITY }, { 0 }, { 1, 0, 0, 0 } },
	{ TS_OP_ISINF, { NAN, 1, INFINITY, -INFINITY }, { 0 }, { 0, 0, 1, 1 } },
};

static void test_eval_float_ops__match_hand_values(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t r = 0; r < sizeof(float_cases) / sizeof(*float_cases);
	     r++) {
		const struct op_case *c = &float_cases[r];
		ts_array *o = eval_op(ctx, (int)r, c->op, TS_F64, NV, c->x,
			c->y);
		check_values(o, NV, c->want, 1e-15, ts_op_name(c->op));
	}
}

/* The trigonometric and hyperbolic functions of an f32 compute in f64
 * and round once to f32 (doc/grammar.md, "Arithmetic"); the tests of a
 * float give bool. */
static void test_eval_math_f32__rounds_once_to_f32(void **state)
{
	static const ts_op ops[] = {
		TS_OP_SIN, TS_OP_COS, TS_OP_TAN, TS_OP_ASIN, TS_OP_ACOS,
		TS_OP_ATAN, TS_OP_SINH, TS_OP_COSH, TS_OP_ASINH, TS_OP_ATANH,
	};
	static double (*const fns[])(double) = {
		sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, atanh,
	};
	static const double x[NV] = { 0.1, -0.7, 0.3, 0.9 };
	ts_ctx *ctx = *state;

	for (size_t r = 0; r < sizeof(ops) / sizeof(*ops); r++) {
		ts_array *o = eval_op(ctx, 100 + (int)r, ops[r], TS_F32, NV, x,
			NULL);
		double want[NV];
		assert_int_equal(o->dtype, TS_F32);
		for (int k = 0; k < NV; k++)
			want[k] = (float)fns[r]((float)x[k]);
		check_values(o, NV, want, 0, ts_op_name(ops[r]));
	}
	assert_int_equal(eval_op(ctx, 200, TS_OP_ISNAN, TS_F16, NV, x,
		NULL)->dtype, TS_BOOL);
}

/* sign on every numeric dtype: -1, 0 or 1, unsigned values never
 * negative, and a float zero keeps its sign. */
static void test_eval_sign__every_dtype(void **state)
{
	static const ts_dtype types[] = {
		TS_I8, TS_U8, TS_I32, TS_I64, TS_F16, TS_F32, TS_F64,
	};
	static const double x[NV] = { 100, 0, 3, 1 };
	static const double want[NV] = { 1, 0, 1, 1 };
	static const double xs[NV] = { -100, -0.0, -3, 7 };
	static const double wants[NV] = { -1, -0.0, -1, 1 };
	ts_ctx *ctx = *state;

	for (size_t r = 0; r < sizeof(types) / sizeof(*types); r++) {
		bool sg = ts_dtype_is_signed(types[r]);
		ts_array *o = eval_op(ctx, 300 + (int)r, TS_OP_SIGN, types[r],
			NV, sg ? xs : x, NULL);
		check_values(o, NV, sg ? wants : want, 0,
			ts_dtype_name(types[r]));
		if (ts_dtype_is_float(types[r]))
			assert_true(signbit(ts_array_get(o, 1)));
	}
}

/* Integer operators in i32, with floor division and modulo of negative
 * operands as in Python. */
static const struct op_case int_cases[] = {
	{ TS_OP_ADD, { 1, -2, 7, 0 }, { 2, 1, -9, 0 }, { 3, -1, -2, 0 } },
	{ TS_OP_SUB, { 1, -2, 7, 0 }, { 2, 1, -9, 5 }, { -1, -3, 16, -5 } },
	{ TS_OP_MUL, { 3, -2, 7, 0 }, { 2, 4, -9, 5 }, { 6, -8, -63, 0 } },
	{ TS_OP_FLOORDIV, { 7, -7, 7, -7 }, { 2, 2, -2, -2 },
		{ 3, -4, -4, 3 } },
	{ TS_OP_MOD, { 7, -7, 7, -7 }, { 2, 2, -2, -2 }, { 1, 1, -1, -1 } },
	{ TS_OP_MIN, { 1, -2, 3, 0 }, { 2, -3, 3, 5 }, { 1, -3, 3, 0 } },
	{ TS_OP_MAX, { 1, -2, 3, 0 }, { 2, -3, 3, 5 }, { 2, -2, 3, 5 } },
	{ TS_OP_LT, { 1, 2, 3, -1 }, { 2, 2, 2, 0 }, { 1, 0, 0, 1 } },
	{ TS_OP_LE, { 1, 2, 3, -1 }, { 2, 2, 2, 0 }, { 1, 1, 0, 1 } },
	{ TS_OP_GT, { 1, 2, 3, -1 }, { 2, 2, 2, 0 }, { 0, 0, 1, 0 } },
	{ TS_OP_GE, { 1, 2, 3, -1 }, { 2, 2, 2, 0 }, { 0, 1, 1, 0 } },
	{ TS_OP_EQ, { 1, 2, 3, -1 }, { 2, 2, 2, 0 }, { 0, 1, 0, 0 } },
	{ TS_OP_NE, { 1, 2, 3, -1 }, { 2, 2, 2, 0 }, { 1, 0, 1, 1 } },
	{ TS_OP_NEG, { 1, -2, 0, 3 }, { 0 }, { -1, 2, 0, -3 } },
	{ TS_OP_ABS, { 1, -2, 0, -3 }, { 0 }, { 1, 2, 0, 3 } },
	{ TS_OP_SIGN, { 5, -7, 0, -2147483648.0 }, { 0 }, { 1, -1, 0, -1 } },
};

static void test_eval_int_ops__match_hand_values(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t r = 0; r < sizeof(int_cases) / sizeof(*int_cases); r++) {
		const struct op_case *c = &int_cases[r];
		ts_array *o = eval_op(ctx, (int)r, c->op, TS_I32, NV, c->x,
			c->y);
		check_values(o, NV, c->want, 0, ts_op_name(c->op));
	}
}

static void test_eval_bool_ops__match_truth_tables(void **state)
{
	static const double x[NV] = { 0, 0, 1, 1 }, y[NV] = { 0, 1, 0, 1 };
	static const double want_and[NV] = { 0, 0, 0, 1 };
	static const double want_or[NV] = { 0, 1, 1, 1 };
	static const double want_not[NV] = { 1, 1, 0, 0 };
	ts_ctx *ctx = *state;

	check_values(eval_op(ctx, 0, TS_OP_AND, TS_BOOL, NV, x, y), NV,
		want_and, 0, "&&");
	check_values(eval_op(ctx, 1, TS_OP_OR, TS_BOOL, NV, x, y), NV,
		want_or, 0, "||");
	check_values(eval_op(ctx, 2, TS_OP_NOT, TS_BOOL, NV, x, y), NV,
		want_not, 0, "!");
}

/* A cast of X (dtype "from") to "to", with its expected values. */
struct cast_case {
	ts_dtype from, to;
	double x[NV], want[NV];
};

static const struct cast_case cast_cases[] = {
	/* Integer stores wrap like C two's complement. */
	{ TS_I32, TS_I8, { 100, 200, -200, 127 }, { 100, -56, 56, 127 } },
	{ TS_I32, TS_U8, { -1, 300, 255, 256 }, { 255, 44, 255, 0 } },
	{ TS_I64, TS_I32, { 2147483648.0, -2147483649.0, 5, -5 },
		{ -2147483648.0, 2147483647, 5, -5 } },
	/* Float to int truncates toward zero and saturates; NaN gives 0. */
	{ TS_F32, TS_I32, { 2.7, -2.7, 0.5, -0.5 }, { 2, -2, 0, 0 } },
	{ TS_F64, TS_I8, { 300.5, -129.5, 127.9, -1.5 },
		{ 127, -128, 127, -1 } },
	{ TS_F64, TS_U8, { 255.9, 3.99, 256.5, -0.5 }, { 255, 3, 255, 0 } },
	{ TS_F32, TS_U8, { -3, NAN, INFINITY, 1e10 }, { 0, 0, 255, 255 } },
	{ TS_F32, TS_I32, { NAN, INFINITY, -INFINITY, 3e9 },
		{ 0, 2147483647, -2147483648.0, 2147483647 } },
	{ TS_F64, TS_I64, { NAN, 1e19, -1e19, -0.5 },
		{ 0, 9223372036854775807.0, -9223372036854775808.0, 0 } },
	/* f16 rounds to nearest even and overflows to infinity. */
	{ TS_F32, TS_F16, { 1.00048828125, 1.00146484375, 65520, 0.1 },
		{ 1, 1.001953125, INFINITY, 0.0999755859375 } },
	{ TS_F64, TS_F32, { 0.1, 16777217, 1e-50, -3 },
		{ 0.100000001490116119384765625, 16777216, 0, -3 } },
	{ TS_I32, TS_F32, { 16777217, -16777219, 3, 0 },
		{ 16777216, -16777220, 3, 0 } },
	{ TS_F32, TS_BOOL, { 0, 0.5, -2, NAN }, { 0, 1, 1, 1 } },
	{ TS_BOOL, TS_I32, { 0, 1, 1, 0 }, { 0, 1, 1, 0 } },
};

static void test_eval_casts__round_to_target_dtype(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t r = 0; r < sizeof(cast_cases) / sizeof(*cast_cases); r++) {
		const struct cast_case *c = &cast_cases[r];
		char xn[16], on[16], what[64];
		int64_t shape[1] = { NV };
		ts_tensor *X, *O;
		ts_axis *i;
		ts_array *in[1];

		snprintf(xn, sizeof(xn), "X%zu", r);
		snprintf(on, sizeof(on), "O%zu", r);
		X = ts_placeholder(ctx, xn, c->from, 1, shape);
		i = ts_axis_new(ctx, "i", NV);
		O = ts_compute_typed(ctx, on, c->to, 1, &i,
			ts_at(ctx, X, 1, ts_var(ctx, i)));
		assert_non_null(O);
		in[0] = array_of(ctx, c->from, 1, shape, c->x);
		snprintf(what, sizeof(what), "%s -> %s",
			ts_dtype_name(c->from), ts_dtype_name(c->to));
		check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &O), in),
			NV, c->want, 0, what);
	}
}

/* An explicit cast inside a body rounds there, not only at the store. */
static void test_eval_inner_cast__rounds_intermediate(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[1] = { 2 };
	static const double x[2] = { 200, 100 }, want[2] = { -112, 200 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_I32, 1, shape), *O;
	ts_axis *i = ts_axis_new(ctx, "i", 2);
	ts_expr *xi = ts_at(ctx, X, 1, ts_var(ctx, i));
	ts_array *in[1];

	/* i32(i8(x)) * 2: 200 wraps to -56 before the product. */
	O = ts_compute(ctx, "O", 1, &i, ts_mul(ctx,
		ts_cast(ctx, TS_I32, ts_cast(ctx, TS_I8, xi)), ts_int(ctx, 2)));
	assert_non_null(O);
	in[0] = array_of(ctx, TS_I32, 1, shape, x);
	check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &O), in), 2,
		want, 0, "cast");
}

/* f64(f32(x)) - f64(x): the inner cast to f32 rounds 16777217 to
 * 16777216 and 0.1 to the nearest f32, though the result is f64. */
static void test_eval_inner_float_cast__rounds_intermediate(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[1] = { 2 };
	static const double xi[2] = { 16777217, 3 }, wi[2] = { -1, 0 };
	static const double xf[2] = { 0.1, 0.5 };
	static const double wf[2] = { 0.100000001490116119384765625 - 0.1, 0 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_I32, 1, shape), *O, *F, *G;
	ts_axis *i = ts_axis_new(ctx, "i", 2);
	ts_expr *x = ts_at(ctx, X, 1, ts_var(ctx, i)), *f;
	ts_array *in[1];

	O = ts_compute(ctx, "O", 1, &i, ts_sub(ctx, ts_cast(ctx, TS_F64,
		ts_cast(ctx, TS_F32, x)), ts_cast(ctx, TS_F64, x)));
	assert_non_null(O);
	in[0] = array_of(ctx, TS_I32, 1, shape, xi);
	check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &O), in), 2,
		wi, 0, "i32 -> f32");
	F = ts_placeholder(ctx, "F", TS_F64, 1, shape);
	f = ts_at(ctx, F, 1, ts_var(ctx, i));
	G = ts_compute(ctx, "G", 1, &i, ts_sub(ctx, ts_cast(ctx, TS_F64,
		ts_cast(ctx, TS_F32, f)), f));
	assert_non_null(G);
	in[0] = array_of(ctx, TS_F64, 1, shape, xf);
	check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &G), in), 2,
		wf, 0, "f64 -> f32");
}

/* Reducers over k of X[i, k], X being 2x3. */
struct reduce_case {
	ts_reducer red;
	ts_dtype t;
	double want[2];
};

static const double reduce_x[6] = { 1, -2, 3, -4, -5, -6 };

static const struct reduce_case reduce_cases[] = {
	{ TS_RED_SUM, TS_F32, { 2, -15 } },
	{ TS_RED_PROD, TS_F32, { -6, -120 } },
	{ TS_RED_MAX, TS_F32, { 3, -4 } },
	{ TS_RED_MIN, TS_F32, { -2, -6 } },
	{ TS_RED_SUM, TS_I32, { 2, -15 } },
	{ TS_RED_PROD, TS_I32, { -6, -120 } },
	/* The identity of max on integers is the dtype's minimum, not 0. */
	{ TS_RED_MAX, TS_I32, { 3, -4 } },
	{ TS_RED_MIN, TS_I32, { -2, -6 } },
	{ TS_RED_MAX, TS_I8, { 3, -4 } },
	{ TS_RED_MIN, TS_U8, { 1, 250 } },
};

static void test_eval_reducers__match_hand_values(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t r = 0; r < sizeof(reduce_cases) / sizeof(*reduce_cases);
	     r++) {
		const struct reduce_case *c = &reduce_cases[r];
		char xn[16], on[16];
		int64_t shape[2] = { 2, 3 };
		double x[6];
		ts_tensor *X, *O;
		ts_axis *i = ts_axis_new(ctx, "i", 2);
		ts_axis *k = ts_reduce_axis(ctx, "k", 3);
		ts_array *in[1];

		for (int j = 0; j < 6; j++)
			x[j] = c->t == TS_U8 && reduce_x[j] < 0 ?
				reduce_x[j] + 256 : reduce_x[j];
		snprintf(xn, sizeof(xn), "X%zu", r);
		snprintf(on, sizeof(on), "O%zu", r);
		X = ts_placeholder(ctx, xn, c->t, 2, shape);
		O = ts_compute(ctx, on, 1, &i, ts_reduce(ctx, c->red, 1, &k,
			ts_at(ctx, X, 2, ts_var(ctx, i), ts_var(ctx, k))));
		assert_non_null(O);
		in[0] = array_of(ctx, c->t, 2, shape, x);
		check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &O), in),
			2, c->want, 0, ts_reducer_name(c->red));
	}
}

/* A reduction accumulates in i64 and wraps once at the store: the sum of
 * 100 + 100 + 100 in i8 is 300 wrapped, not a sum of wrapped partials. */
static void test_eval_reduce_i8__wraps_once_at_store(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[1] = { 3 };
	static const double x[3] = { 100, 100, 100 }, want[1] = { 44 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_I8, 1, shape), *O;
	ts_axis *k = ts_reduce_axis(ctx, "k", 3);
	ts_array *in[1];

	O = ts_compute(ctx, "O", 0, NULL, ts_sum(ctx, 1, &k,
		ts_at(ctx, X, 1, ts_var(ctx, k))));
	assert_non_null(O);
	in[0] = array_of(ctx, TS_I8, 1, shape, x);
	check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &O), in), 1,
		want, 0, "sum i8");
}

/* A sum of f16 values rounds to f16 at each step, as the f16
 * accumulator of compiled code does. */
static void test_eval_reduce_f16__rounds_each_step(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[1] = { 4 };
	/* 2048 + 1 rounds to 2048 (spacing 2, ties to even) at each step;
	 * rounding once at the end would give 2052. */
	static const double x[4] = { 2048, 1, 1, 1 }, want[1] = { 2048 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F16, 1, shape), *O;
	ts_axis *k = ts_reduce_axis(ctx, "k", 4);
	ts_array *in[1];

	O = ts_compute(ctx, "O", 0, NULL, ts_sum(ctx, 1, &k,
		ts_at(ctx, X, 1, ts_var(ctx, k))));
	assert_non_null(O);
	in[0] = array_of(ctx, TS_F16, 1, shape, x);
	check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &O), in), 1,
		want, 0, "sum f16");
}

/* Two independent reductions in one body, and one nested in another. */
static void test_eval_two_reductions__are_independent(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[2] = { 2, 3 };
	static const double x[6] = { 1, 2, 3, 4, 5, 6 };
	static const double y[6] = { -1, 7, 0, 2, 2, -8 };
	static const double want[2] = { 6 + 7, 15 + 2 };
	static const double want_nested[1] = { 3 + 6 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 2, shape);
	ts_tensor *Y = ts_placeholder(ctx, "Y", TS_F32, 2, shape), *O, *N;
	ts_axis *i = ts_axis_new(ctx, "i", 2);
	ts_axis *k = ts_reduce_axis(ctx, "k", 3);
	ts_axis *j = ts_reduce_axis(ctx, "j", 3);
	ts_axis *a = ts_reduce_axis(ctx, "a", 2);
	ts_axis *b = ts_reduce_axis(ctx, "b", 3);
	ts_array *in[2];

	O = ts_compute(ctx, "O", 1, &i, ts_add(ctx,
		ts_sum(ctx, 1, &k, ts_at(ctx, X, 2, ts_var(ctx, i),
			ts_var(ctx, k))),
		ts_rmax(ctx, 1, &j, ts_at(ctx, Y, 2, ts_var(ctx, i),
			ts_var(ctx, j)))));
	assert_non_null(O);
	in[0] = array_of(ctx, TS_F32, 2, shape, x);
	in[1] = array_of(ctx, TS_F32, 2, shape, y);
	check_values(eval1(ctx, ts_dag_new(ctx, 2, (ts_tensor *[]){ X, Y }, 1,
		&O), in), 2, want, 0, "sum + max");
	/* sum over a of (max over b of X[a, b]). */
	N = ts_compute(ctx, "N", 0, NULL, ts_sum(ctx, 1, &a, ts_rmax(ctx, 1,
		&b, ts_at(ctx, X, 2, ts_var(ctx, a), ts_var(ctx, b)))));
	assert_non_null(N);
	check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &N), in), 1,
		want_nested, 0, "nested");
}

/* P[i] = X[i - 1] inside the pad, 0 outside: the load that would fall
 * outside X is not evaluated where the select does not take it. */
static void test_eval_select_padding__skips_masked_loads(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[1] = { 3 };
	static const double x[3] = { 5, 6, 7 }, want[5] = { 0, 5, 6, 7, 0 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 1, shape), *P;
	ts_axis *i = ts_axis_new(ctx, "i", 5);
	ts_expr *vi = ts_var(ctx, i);
	ts_array *in[1];

	P = ts_compute(ctx, "P", 1, &i, ts_select(ctx,
		ts_binary(ctx, TS_OP_AND,
			ts_binary(ctx, TS_OP_GE, vi, ts_int(ctx, 1)),
			ts_binary(ctx, TS_OP_LT, vi, ts_int(ctx, 4))),
		ts_at(ctx, X, 1, ts_sub(ctx, vi, ts_int(ctx, 1))),
		ts_float(ctx, 0)));
	assert_non_null(P);
	in[0] = array_of(ctx, TS_F32, 1, shape, x);
	check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &P), in), 5,
		want, 0, "pad");
}

/* Branches that only contain a padded load or a division deeper down are
 * masked too: select(i >= 1, 2 * X[i - 1] + 1, 0) and
 * select(d != 0, x // d, -1). */
static void test_eval_select_compound_branches__masked(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[1] = { 3 };
	static const double x[3] = { 5, 6, 7 }, want[3] = { 0, 11, 13 };
	static const double n[3] = { 7, -7, 9 }, d[3] = { 2, 0, -4 };
	static const double want_div[3] = { 3, -1, -3 };
	static const double want_index_div[3] = { -10, -1, 10 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 1, shape), *P, *Q, *R;
	ts_tensor *N = ts_placeholder(ctx, "N", TS_I32, 1, shape);
	ts_tensor *D = ts_placeholder(ctx, "D", TS_I32, 1, shape);
	ts_axis *i = ts_axis_new(ctx, "i", 3);
	ts_expr *vi = ts_var(ctx, i), *dv = ts_at(ctx, D, 1, vi);
	ts_array *in[2];

	P = ts_compute(ctx, "P", 1, &i, ts_select(ctx,
		ts_binary(ctx, TS_OP_GE, vi, ts_int(ctx, 1)),
		ts_add(ctx, ts_mul(ctx, ts_float(ctx, 2), ts_at(ctx, X, 1,
			ts_sub(ctx, vi, ts_int(ctx, 1)))), ts_float(ctx, 1)),
		ts_float(ctx, 0)));
	assert_non_null(P);
	in[0] = array_of(ctx, TS_F32, 1, shape, x);
	check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &P), in), 3,
		want, 0, "compound pad");
	Q = ts_compute(ctx, "Q", 1, &i, ts_select(ctx,
		ts_binary(ctx, TS_OP_NE, dv, ts_int(ctx, 0)),
		ts_floordiv(ctx, ts_at(ctx, N, 1, vi), dv), ts_int(ctx, -1)));
	assert_non_null(Q);
	in[0] = array_of(ctx, TS_I32, 1, shape, n);
	in[1] = array_of(ctx, TS_I32, 1, shape, d);
	check_values(eval1(ctx, ts_dag_new(ctx, 2, (ts_tensor *[]){ N, D }, 1,
		&Q), in), 3, want_div, 0, "guarded division");
	/* No load at all in the branch: select(i != 1, 10 // (i - 1), -1). */
	R = ts_compute(ctx, "R", 1, &i, ts_select(ctx,
		ts_binary(ctx, TS_OP_NE, vi, ts_int(ctx, 1)),
		ts_floordiv(ctx, ts_int(ctx, 10), ts_sub(ctx, vi, ts_int(ctx, 1))),
		ts_int(ctx, -1)));
	assert_non_null(R);
	check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &R), NULL), 3,
		want_index_div, 0, "guarded index division");
}

/* A load that does not vary along the strip, under a mask that does:
 * O[i, j] = j < i ? X[i - 1] : -1 (row 0 never reads X[-1]). */
static void test_eval_uniform_load__under_varying_mask(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[1] = { 4 };
	static const double x[4] = { 10, 20, 30, 40 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 1, shape), *O;
	ts_axis *i = ts_axis_new(ctx, "i", 4), *j = ts_axis_new(ctx, "j", 40);
	ts_axis *ax[2] = { i, j };
	ts_array *in[1], *o;

	O = ts_compute(ctx, "O", 2, ax, ts_select(ctx,
		ts_binary(ctx, TS_OP_LT, ts_var(ctx, j), ts_var(ctx, i)),
		ts_at(ctx, X, 1, ts_sub(ctx, ts_var(ctx, i), ts_int(ctx, 1))),
		ts_float(ctx, -1)));
	assert_non_null(O);
	in[0] = array_of(ctx, TS_F32, 1, shape, x);
	o = eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &O), in);
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 40; b++)
			check_near(ts_array_get(o, a * 40 + b),
				b < a ? x[a - 1] : -1, 0, "masked row");
}

/* Build the conv2d of a 1x1x4x4 input (1..16) with the 1x1x3x3 weight
 * 1..9, padding 1 and stride 2; "fused" puts the padding select inside
 * the reduction instead of a separate stage. */
static ts_tensor *conv_dag(ts_ctx *ctx, ts_tensor *I, ts_tensor *W,
	bool fused)
{
	ts_axis *n = ts_axis_new(ctx, "n", 1), *c = ts_axis_new(ctx, "c", 1);
	ts_axis *h = ts_axis_new(ctx, "h", 6), *w = ts_axis_new(ctx, "w", 6);
	ts_axis *f = ts_axis_new(ctx, "f", 1), *y = ts_axis_new(ctx, "y", 2);
	ts_axis *x = ts_axis_new(ctx, "x", 2);
	ts_axis *rc = ts_reduce_axis(ctx, "rc", 1);
	ts_axis *ry = ts_reduce_axis(ctx, "ry", 3);
	ts_axis *rx = ts_reduce_axis(ctx, "rx", 3);
	ts_axis *pax[4] = { n, c, h, w }, *oax[4] = { n, f, y, x };
	ts_axis *rax[3] = { rc, ry, rx };
	ts_expr *hh, *ww, *in_pad, *val;
	ts_tensor *P = NULL;

	if (fused) {
		/* Padded coordinates: 2y + ry and 2x + rx. */
		hh = ts_add(ctx, ts_mul(ctx, ts_int(ctx, 2), ts_var(ctx, y)),
			ts_var(ctx, ry));
		ww = ts_add(ctx, ts_mul(ctx, ts_int(ctx, 2), ts_var(ctx, x)),
			ts_var(ctx, rx));
	} else {
		hh = ts_var(ctx, h);
		ww = ts_var(ctx, w);
	}
	in_pad = ts_binary(ctx, TS_OP_AND,
		ts_binary(ctx, TS_OP_AND,
			ts_binary(ctx, TS_OP_GE, hh, ts_int(ctx, 1)),
			ts_binary(ctx, TS_OP_LT, hh, ts_int(ctx, 5))),
		ts_binary(ctx, TS_OP_AND,
			ts_binary(ctx, TS_OP_GE, ww, ts_int(ctx, 1)),
			ts_binary(ctx, TS_OP_LT, ww, ts_int(ctx, 5))));
	val = ts_select(ctx, in_pad, ts_at(ctx, I, 4,
		ts_var(ctx, n),
		fused ? ts_var(ctx, rc) : ts_var(ctx, c),
		ts_sub(ctx, hh, ts_int(ctx, 1)),
		ts_sub(ctx, ww, ts_int(ctx, 1))), ts_float(ctx, 0));
	if (!fused) {
		P = ts_compute(ctx, "P", 4, pax, val);
		val = ts_at(ctx, P, 4, ts_var(ctx, n), ts_var(ctx, rc),
			ts_add(ctx, ts_mul(ctx, ts_int(ctx, 2), ts_var(ctx, y)),
				ts_var(ctx, ry)),
			ts_add(ctx, ts_mul(ctx, ts_int(ctx, 2), ts_var(ctx, x)),
				ts_var(ctx, rx)));
	}
	return ts_compute(ctx, fused ? "OF" : "O", 4, oax, ts_sum(ctx, 3, rax,
		ts_mul(ctx, val, ts_at(ctx, W, 4, ts_var(ctx, f),
			ts_var(ctx, rc), ts_var(ctx, ry), ts_var(ctx, rx)))));
}

static void test_eval_conv2d_pad1_stride2__matches_hand_values(void **state)
{
	ts_ctx *ctx = *state;
	int64_t ishape[4] = { 1, 1, 4, 4 }, wshape[4] = { 1, 1, 3, 3 };
	static const double want[4] = { 111, 217, 363, 573 };
	double iv[16], wv[9];
	ts_tensor *I = ts_placeholder(ctx, "I", TS_F32, 4, ishape);
	ts_tensor *W = ts_placeholder(ctx, "W", TS_F32, 4, wshape);
	ts_tensor *O, *OF;
	ts_array *in[2];

	for (int k = 0; k < 16; k++)
		iv[k] = k + 1;
	for (int k = 0; k < 9; k++)
		wv[k] = k + 1;
	in[0] = array_of(ctx, TS_F32, 4, ishape, iv);
	in[1] = array_of(ctx, TS_F32, 4, wshape, wv);
	O = conv_dag(ctx, I, W, false);
	OF = conv_dag(ctx, I, W, true);
	assert_non_null(O);
	assert_non_null(OF);
	check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &O), in), 4,
		want, 0, "conv");
	check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &OF), in), 4,
		want, 0, "conv fused pad");
}

/* G[i] = T[idx[i]]: a gather with a data-dependent index. */
static ts_tensor *gather_dag(ts_ctx *ctx, ts_tensor **T, ts_tensor **idx)
{
	int64_t tshape[1] = { 5 }, ishape[1] = { 3 };
	ts_axis *i = ts_axis_new(ctx, "i", 3);

	*T = ts_placeholder(ctx, "T", TS_F32, 1, tshape);
	*idx = ts_placeholder(ctx, "idx", TS_I32, 1, ishape);
	return ts_compute(ctx, "G", 1, &i, ts_at(ctx, *T, 1,
		ts_at(ctx, *idx, 1, ts_var(ctx, i))));
}

static void test_eval_gather__reads_data_dependent_index(void **state)
{
	ts_ctx *ctx = *state;
	int64_t tshape[1] = { 5 }, ishape[1] = { 3 };
	static const double t[5] = { 10, 11, 12, 13, 14 };
	static const double idx[3] = { 4, 0, 2 }, want[3] = { 14, 10, 12 };
	ts_tensor *T, *I, *G = gather_dag(ctx, &T, &I);
	ts_array *in[2];

	assert_non_null(G);
	in[0] = array_of(ctx, TS_F32, 1, tshape, t);
	in[1] = array_of(ctx, TS_I32, 1, ishape, idx);
	check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &G), in), 3,
		want, 0, "gather");
}

static void test_eval_gather_out_of_bounds__names_stage_tensor_value(
	void **state)
{
	static const double bad[2][3] = { { 1, 7, 0 }, { 0, -1, 2 } };
	static const char *value[2] = { "index 7 ", "index -1 " };
	ts_ctx *ctx = *state;
	int64_t tshape[1] = { 5 }, ishape[1] = { 3 };
	static const double t[5] = { 10, 11, 12, 13, 14 };
	ts_tensor *T, *I, *G = gather_dag(ctx, &T, &I);
	ts_dag *dag = ts_dag_new(ctx, 0, NULL, 1, &G);
	ts_array *in[2], *out = NULL;

	assert_non_null(dag);
	in[0] = array_of(ctx, TS_F32, 1, tshape, t);
	for (int r = 0; r < 2; r++) {
		in[1] = array_of(ctx, TS_I32, 1, ishape, bad[r]);
		assert_int_equal(ts_eval(ctx, dag, in, &out), TS_ERROR);
		assert_error_contains(ctx, "stage 'G'");
		assert_error_contains(ctx, "tensor 'T'");
		assert_error_contains(ctx, "dimension 0");
		assert_error_contains(ctx, value[r]);
	}
	assert_null(out);
}

/* An affine index whose range over the loop passes 64 bits (the largest
 * i64 plus the loop variable) is reported out of bounds, not read. */
static void test_eval_affine_index_past_i64__out_of_bounds(void **state)
{
	ts_ctx *ctx = *state;
	int64_t tshape[1] = { 5 };
	ts_tensor *T = ts_placeholder(ctx, "T", TS_F32, 1, tshape), *G;
	ts_axis *i = ts_axis_new(ctx, "i", 3);
	static const double t[5] = { 10, 11, 12, 13, 14 };
	ts_array *in[1], *out = NULL;
	ts_dag *dag;

	G = ts_compute(ctx, "G", 1, &i, ts_at(ctx, T, 1, ts_binary(ctx,
		TS_OP_ADD, ts_int(ctx, INT64_MAX), ts_var(ctx, i))));
	dag = ts_dag_new(ctx, 0, NULL, 1, &G);
	assert_non_null(dag);
	in[0] = array_of(ctx, TS_F32, 1, tshape, t);
	assert_int_equal(ts_eval(ctx, dag, in, &out), TS_ERROR);
	assert_error_contains(ctx, "stage 'G'");
	assert_error_contains(ctx, "tensor 'T'");
	assert_error_contains(ctx, "index 9223372036854775807 ");
	assert_null(out);
}

/* A data-dependent index guarded by a select is not checked where the
 * select does not take it. */
static void test_eval_gather_guarded__skips_invalid_lanes(void **state)
{
	ts_ctx *ctx = *state;
	int64_t tshape[1] = { 5 }, ishape[1] = { 3 };
	static const double t[5] = { 10, 11, 12, 13, 14 };
	static const double idx[3] = { 3, -1, 9 }, want[3] = { 13, 0, 0 };
	ts_tensor *T = ts_placeholder(ctx, "T", TS_F32, 1, tshape);
	ts_tensor *I = ts_placeholder(ctx, "idx", TS_I32, 1, ishape), *G;
	ts_axis *i = ts_axis_new(ctx, "i", 3);
	ts_expr *k = ts_at(ctx, I, 1, ts_var(ctx, i));
	ts_array *in[2];

	G = ts_compute(ctx, "G", 1, &i, ts_select(ctx,
		ts_binary(ctx, TS_OP_AND,
			ts_binary(ctx, TS_OP_GE, k, ts_int(ctx, 0)),
			ts_binary(ctx, TS_OP_LT, k, ts_int(ctx, 5))),
		ts_at(ctx, T, 1, k), ts_float(ctx, 0)));
	assert_non_null(G);
	in[0] = array_of(ctx, TS_F32, 1, tshape, t);
	in[1] = array_of(ctx, TS_I32, 1, ishape, idx);
	check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &G), in), 3,
		want, 0, "guarded gather");
}

/* A zero divisor gives 0 for // and %, as compiled code computes it; -1
 * does not overflow the least value. */
static void test_eval_int_division_by_zero__gives_zero(void **state)
{
	ts_ctx *ctx = *state;
	static const ts_op ops[2] = { TS_OP_FLOORDIV, TS_OP_MOD };
	static const double x[NV] = { 7, -7, -2147483648.0, 4 };
	static const double y[NV] = { 0, 2, -1, 0 };
	static const double want[2][NV] = {
		{ 0, -4, -2147483648.0, 0 }, { 0, 1, 0, 0 },
	};

	for (int r = 0; r < 2; r++) {
		int64_t shape[1] = { NV };
		ts_tensor *X = ts_placeholder(ctx, "X", TS_I32, 1, shape);
		ts_tensor *Y = ts_placeholder(ctx, "Y", TS_I32, 1, shape), *O;
		ts_axis *i = ts_axis_new(ctx, "i", NV);
		ts_array *in[2];

		O = ts_compute(ctx, "Q", 1, &i, ts_binary(ctx, ops[r],
			ts_at(ctx, X, 1, ts_var(ctx, i)),
			ts_at(ctx, Y, 1, ts_var(ctx, i))));
		assert_non_null(O);
		in[0] = array_of(ctx, TS_I32, 1, shape, x);
		in[1] = array_of(ctx, TS_I32, 1, shape, y);
		check_values(eval1(ctx, ts_dag_new(ctx, 0, NULL, 1, &O), in),
			NV, want[r], 0, ts_op_name(ops[r]));
	}
}

/* Evaluate the one-output program "src" on the inputs "in" and return
 * its output. */
static ts_array *eval_src(ts_ctx *ctx, const char *src, ts_array **in)
{
	ts_dag *dag = ts_parse_string(ctx, "t.tsl", src);

	if (!dag)
		fail_msg("parse: %s", ts_ctx_error(ctx));
	return eval1(ctx, dag, in);
}

/* An integer array of dtype "t" holding the "n" values "v" (u64 as bit
 * patterns). */
static ts_array *ints_of(ts_ctx *ctx, ts_dtype t, int64_t n,
	const int64_t *v)
{
	ts_array *a = ts_array_alloc(ctx, t, 1, &n);

	assert_non_null(a);
	for (int64_t i = 0; i < n; i++)
		ts_array_set_int(a, i, v[i]);
	return a;
}

/* Assert that the integer array "a" holds the "n" values "want". */
static void check_ints(const ts_array *a, int64_t n, const int64_t *want,
	const char *what)
{
	assert_int_equal(a->size, n);
	for (int64_t i = 0; i < n; i++)
		if (ts_array_get_int(a, i) != want[i])
			fail_msg("%s[%lld]: got %llu, want %llu", what,
				(long long)i,
				(unsigned long long)ts_array_get_int(a, i),
				(unsigned long long)want[i]);
}

/* i16, u16, u32 and u64 wrap in their width, also inside a reduction;
 * a u64 holds values above 2^63. */
static void test_eval_new_ints__wrap_in_their_width(void **state)
{
	static const struct {
		const char *src;
		int64_t want[2];
	} cases[] = {
		{ "output O[i: 2]: i16 = i16(32767) + i16(i)",
			{ 32767, -32768 } },
		{ "output O[i: 2]: i16 = i16(200) * i16(200 + i)",
			{ -25536, -25336 } },
		{ "output O[i: 2]: u16 = u16(3) - u16(5 + i)", { 65534, 65533 } },
		{ "output O[i: 2]: u32 = u32(i) - 1", { 4294967295LL,
			0 } },
		{ "output O[i: 2]: u32 = u32(65536 + i) * 65536",
			{ 0, 65536 } },
		{ "output O[i: 2]: u64 = u64(i) - 1", { -1, 0 } },
		{ "output O[i: 2]: u64 = u64(9223372036854775807) + u64(i + 1)",
			{ INT64_MIN, INT64_MIN + 1 } },
		{ "output O[i: 2]: u16 = sum(k: 3) u16(30000 + i)",
			{ 24464, 24467 } },
		{ "output O[i: 2]: u64 = -u64(i + 1)", { -1, -2 } },
		{ "output O[i: 2]: u32 = abs(u32(i) - 1)", { 4294967295LL,
			0 } },
	};
	ts_ctx *ctx = *state;

	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++)
		check_ints(eval_src(ctx, cases[c].src, NULL), 2, cases[c].want,
			cases[c].src);
}

/* Division, modulo, comparisons, min, max and reductions of unsigned
 * values are unsigned, u64 above 2^63 included. */
static void test_eval_unsigned__divide_and_compare_unsigned(void **state)
{
	static const int64_t x[4] = { -1, INT64_MIN, 7, 5 };
	static const int64_t y[4] = { 2, 3, -1, 0 };
	static const struct {
		const char *body;
		int64_t want[4];
	} cases[] = {
		{ "X[i] // Y[i]", { INT64_MAX, 3074457345618258602LL, 0, 0 } },
		{ "X[i] % Y[i]", { 1, 2, 7, 0 } },
		{ "u64(X[i] < Y[i])", { 0, 0, 1, 0 } },
		{ "u64(X[i] >= Y[i])", { 1, 1, 0, 1 } },
		{ "max(X[i], Y[i])", { -1, INT64_MIN, -1, 5 } },
		{ "min(X[i], Y[i])", { 2, 3, 7, 0 } },
		{ "max(k: 2) select(k == 0, X[i], Y[i])", { -1, INT64_MIN, -1,
			5 } },
		{ "min(k: 2) select(k == 0, X[i], Y[i])", { 2, 3, 7, 0 } },
	};
	ts_ctx *ctx = *state;

	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		char src[256];
		ts_array *in[2] = { ints_of(ctx, TS_U64, 4, x),
			ints_of(ctx, TS_U64, 4, y) };
		snprintf(src, sizeof(src), "input X: u64[4]\ninput Y: u64[4]\n"
			"output O[i: 4] = %s\n", cases[c].body);
		check_ints(eval_src(ctx, src, in), 4, cases[c].want,
			cases[c].body);
	}
	/* u32 values above 2^31: unsigned too. */
	{
		static const int64_t a[2] = { 4294967295LL, 2147483648LL };
		static const int64_t want[2] = { 1431655765, 0 };
		ts_array *in[1] = { ints_of(ctx, TS_U32, 2, a) };
		check_ints(eval_src(ctx, "input X: u32[2]\noutput O[i: 2] = "
			"select(X[i] > 2147483648, X[i] // 3, X[i] % 2)\n", in),
			2, want, "u32");
	}
}

/* Float to integer casts saturate to each new dtype; u64 converts to
 * floats unsigned. */
static void test_eval_new_ints__casts_from_float_saturate(void **state)
{
	static const double x[4] = { -3.5, 70000.9, 1e30, NAN };
	static const struct {
		ts_dtype t;
		int64_t want[4];
	} cases[] = {
		{ TS_I16, { -3, 32767, 32767, 0 } },
		{ TS_U16, { 0, 65535, 65535, 0 } },
		{ TS_U32, { 0, 70000, 4294967295LL, 0 } },
		{ TS_U64, { 0, 70000, -1, 0 } },
	};
	ts_ctx *ctx = *state;
	int64_t n = 4;

	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		char src[128];
		ts_array *in[1] = { array_of(ctx, TS_F64, 1, &n, x) };
		snprintf(src, sizeof(src), "input X: f64[4]\n"
			"output O[i: 4] = %s(X[i])\n",
			ts_dtype_name(cases[c].t));
		check_ints(eval_src(ctx, src, in), 4, cases[c].want,
			ts_dtype_name(cases[c].t));
	}
	/* The literal cast at parse time follows the same rule. */
	{
		static const int64_t want[2] = { -1, 0 };
		check_ints(eval_src(ctx, "output O[i: 2] = select(i == 0, "
			"u64(1e30), u64(-2.0))\n", NULL), 2, want, "literal");
	}
	/* 2^64 - 1 as f64 is 2^64; as f32 too. */
	{
		static const double want[2] = { 18446744073709551616.0,
			9223372036854775808.0 };
		static const int64_t u[2] = { -1, INT64_MIN };
		ts_array *in[1] = { ints_of(ctx, TS_U64, 2, u) };
		check_values(eval_src(ctx, "input X: u64[2]\n"
			"output O[i: 2] = f64(X[i])\n", in), 2, want, 0, "f64");
		check_values(eval_src(ctx, "input X: u64[2]\n"
			"output O[i: 2] = f32(X[i])\n", in), 2, want, 0, "f32");
	}
}

/* bf16 rounds to nearest even where it is cast or stored, computes in
 * f32, and a bf16 accumulator rounds at each step. */
static void test_eval_bf16__rounds_to_nearest_even(void **state)
{
	/* 1 + 2^-8 and 1 + 3 * 2^-8 are halfway: down to 1, up to
	 * 1 + 2^-6; 1 + 2^-8 + 2^-20 is above halfway; 3.4e38 overflows. */
	static const double x[5] = { 1.00390625, 1.01171875,
		1.00390625 + 0x1p-20, 3.4e38, -0.0 };
	static const double want[5] = { 1, 1.015625, 1.0078125, INFINITY,
		-0.0 };
	static const double sum_want[1] = { 256 };
	ts_ctx *ctx = *state;
	int64_t n = 5;
	ts_array *in[1] = { array_of(ctx, TS_F32, 1, &n, x) }, *out;

	out = eval_src(ctx, "input X: f32[5]\noutput O[i: 5] = bf16(X[i])\n",
		in);
	check_values(out, 5, want, 0, "bf16");
	assert_int_equal(((uint16_t *)out->data)[0], 0x3f80);
	/* Stored as bf16 after an f32 computation. */
	out = eval_src(ctx, "input X: f32[5]\noutput O[i: 5]: bf16 = "
		"X[i] * 1.0\n", in);
	check_values(out, 5, want, 0, "store");
	/* 256 + 1 is 256 in bf16 (8 bits of precision): the accumulator
	 * stops growing. */
	check_values(eval_src(ctx, "output O[i: 1] = sum(k: 300) bf16(1.0)\n",
		NULL), 1, sum_want, 0, "sum");
}

static void test_eval_wrong_input__names_tensor_and_shape(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[2] = { 2, 3 }, other[2] = { 3, 2 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 2, shape), *O;
	ts_axis *i = ts_axis_new(ctx, "i", 2), *j = ts_axis_new(ctx, "j", 3);
	ts_axis *ax[2] = { i, j };
	ts_array *in[1], *out = NULL;
	ts_dag *dag;

	O = ts_compute(ctx, "O", 2, ax, ts_at(ctx, X, 2, ts_var(ctx, i),
		ts_var(ctx, j)));
	dag = ts_dag_new(ctx, 0, NULL, 1, &O);
	in[0] = ts_array_alloc(ctx, TS_F32, 2, other);
	assert_int_equal(ts_eval(ctx, dag, in, &out), TS_ERROR);
	assert_error_contains(ctx, "input 'X' must be f32[2x3], got f32[3x2]");
	in[0] = ts_array_alloc(ctx, TS_F64, 2, shape);
	assert_int_equal(ts_eval(ctx, dag, in, &out), TS_ERROR);
	assert_error_contains(ctx, "got f64[2x3]");
	in[0] = NULL;
	assert_int_equal(ts_eval(ctx, dag, in, &out), TS_ERROR);
	assert_error_contains(ctx, "no array for input 'X'");
}

/* Strips: a long axis that is not a multiple of the strip, a transpose
 * whose short innermost axis is not the strip axis, and a chain of stages
 * with a shared subexpression. */
static void test_eval_strips_and_chains__match_direct_loops(void **state)
{
	ts_ctx *ctx = *state;
	int64_t shape[2] = { 300, 5 };
	ts_tensor *X = ts_placeholder(ctx, "X", TS_F32, 2, shape), *T, *S, *R;
	ts_axis *i = ts_axis_new(ctx, "i", 300), *j = ts_axis_new(ctx, "j", 5);
	ts_axis *a = ts_axis_new(ctx, "a", 5), *b = ts_axis_new(ctx, "b", 300);
	ts_axis *tax[2] = { a, b }, *sax[2] = { i, j };
	ts_expr *xt, *twice;
	ts_tensor *outs[2];
	ts_array *in[1], *out[2];
	ts_dag *dag;

	T = ts_compute(ctx, "T", 2, tax, ts_at(ctx, X, 2, ts_var(ctx, b),
		ts_var(ctx, a)));
	xt = ts_at(ctx, T, 2, ts_var(ctx, j), ts_var(ctx, i));
	twice = ts_mul(ctx, xt, ts_float(ctx, 2));
	S = ts_compute(ctx, "S", 2, sax, ts_add(ctx, twice, twice));
	R = ts_compute(ctx, "R", 1, &b, ts_at(ctx, S, 2, ts_var(ctx, b),
		ts_int(ctx, 4)));
	outs[0] = S;
	outs[1] = R;
	dag = ts_dag_new(ctx, 0, NULL, 2, outs);
	assert_non_null(dag);
	in[0] = ts_array_for_tensor(ctx, X);
	ts_array_fill_random(in[0], 7);
	assert_int_equal(ts_eval(ctx, dag, in, out), TS_OK);
	for (int r = 0; r < 300; r++) {
		for (int c = 0; c < 5; c++)
			check_near(ts_array_get(out[0], r * 5 + c),
				4 * ts_array_get(in[0], r * 5 + c), 0, "S");
		check_near(ts_array_get(out[1], r),
			4 * ts_array_get(in[0], r * 5 + 4), 0, "R");
	}
}

static void test_random_inputs__reproducible_and_in_bounds(void **state)
{
	ts_ctx *ctx = *state;
	int64_t tshape[2] = { 7, 3 }, ishape[1] = { 1000 };
	ts_tensor *T = ts_placeholder(ctx, "T", TS_F32, 2, tshape);
	ts_tensor *I = ts_placeholder(ctx, "idx", TS_I64, 1, ishape), *G;
	ts_axis *i = ts_axis_new(ctx, "i", 1000);
	ts_array **a, **b, **c, *out = NULL;
	ts_dag *dag;
	bool differ = false;

	G = ts_compute(ctx, "G", 1, &i, ts_at(ctx, T, 2,
		ts_at(ctx, I, 1, ts_var(ctx, i)), ts_int(ctx, 1)));
	dag = ts_dag_new(ctx, 0, NULL, 1, &G);
	assert_non_null(dag);
	a = ts_dag_random_inputs(ctx, dag, 5);
	b = ts_dag_random_inputs(ctx, dag, 5);
	c = ts_dag_random_inputs(ctx, dag, 6);
	assert_non_null(a);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(a[k]->size, b[k]->size);
		assert_memory_equal(a[k]->data, b[k]->data,
			a[k]->size * ts_dtype_size(a[k]->dtype));
		differ |= memcmp(a[k]->data, c[k]->data,
			a[k]->size * ts_dtype_size(a[k]->dtype)) != 0;
	}
	assert_true(differ);
	for (int64_t k = 0; k < 1000; k++) {
		double v = ts_array_get(a[1], k);
		assert_true(v >= 0 && v < 7);
	}
	for (int64_t k = 0; k < a[0]->size; k++) {
		double v = ts_array_get(a[0], k);
		assert_true(v >= -1 && v < 1);
	}
	assert_int_equal(ts_eval(ctx, dag, a, &out), TS_OK);
}

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* C[i, j] = sum_k A[i, k] * B[k, j] at 256^3, against a triple loop that
 * computes in f32 in the same order, each operation rounded (no fused
 * multiply-add). */
static void test_eval_matmul_256__matches_c_loop(void **state)
{
	enum { N = 256 };
	ts_ctx *ctx = *state;
	int64_t shape[2] = { N, N };
	ts_tensor *A = ts_placeholder(ctx, "A", TS_F32, 2, shape);
	ts_tensor *B = ts_placeholder(ctx, "B", TS_F32, 2, shape), *C;
	ts_axis *i = ts_axis_new(ctx, "i", N), *j = ts_axis_new(ctx, "j", N);
	ts_axis *k = ts_reduce_axis(ctx, "k", N), *ax[2] = { i, j };
	ts_array **in, *out = NULL;
	const float *a, *b, *c;
	ts_dag *dag;
	double t0;

	C = ts_compute(ctx, "C", 2, ax, ts_sum(ctx, 1, &k, ts_mul(ctx,
		ts_at(ctx, A, 2, ts_var(ctx, i), ts_var(ctx, k)),
		ts_at(ctx, B, 2, ts_var(ctx, k), ts_var(ctx, j)))));
	dag = ts_dag_new(ctx, 0, NULL, 1, &C);
	in = ts_dag_random_inputs(ctx, dag, 42);
	t0 = seconds();
	assert_int_equal(ts_eval(ctx, dag, in, &out), TS_OK);
	print_message("matmul 256^3 in the interpreter: %.3f s\n",
		seconds() - t0);
	a = in[0]->data;
	b = in[1]->data;
	c = out->data;
	for (int x = 0; x < N; x++)
		for (int y = 0; y < N; y++) {
			float s = 0;
			for (int z = 0; z < N; z++)
				s = (float)((double)s + (double)(float)(
					(double)a[x * N + z] * b[z * N + y]));
			if (s != c[x * N + y])
				fail_msg("C[%d, %d] = %.9g, want %.9g", x, y,
					c[x * N + y], (float)s);
		}
}

/* A program larger than the memory of any test machine fails before
 * anything is allocated, with the size and the largest tensor named. */
static void test_eval_too_large__named_before_allocating(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ts_parse_string(ctx, "big.tsl",
		"input A: f32[1099511627776]\n"
		"output B[i: 1099511627776] = A[i]\n");

	assert_non_null(dag);
	assert_int_equal(ts_dag_check_memory(ctx, dag), TS_ERROR);
	assert_error_contains(ctx, "big: its tensors take 8.00 TiB in all, "
		"more than the ");
	assert_error_contains(ctx, "(the largest, 'A', is "
		"f32[1099511627776]: 4.00 TiB)");
	ts_ctx_clear_error(ctx);
	assert_null(ts_dag_random_inputs(ctx, dag, 1));
	assert_error_contains(ctx, "array f32[1099511627776] takes 4.00 TiB, "
		"more than the ");
	dag = ts_parse_string(ctx, "small.tsl", "input A: f32[4]\n"
		"output B[i: 4] = A[i]\n");
	assert_int_equal(ts_dag_check_memory(ctx, dag), TS_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_eval_float_ops__match_hand_values),
		TS_TEST(test_eval_math_f32__rounds_once_to_f32),
		TS_TEST(test_eval_sign__every_dtype),
		TS_TEST(test_eval_int_ops__match_hand_values),
		TS_TEST(test_eval_bool_ops__match_truth_tables),
		TS_TEST(test_eval_casts__round_to_target_dtype),
		TS_TEST(test_eval_inner_cast__rounds_intermediate),
		TS_TEST(test_eval_inner_float_cast__rounds_intermediate),
		TS_TEST(test_eval_reducers__match_hand_values),
		TS_TEST(test_eval_reduce_i8__wraps_once_at_store),
		TS_TEST(test_eval_reduce_f16__rounds_each_step),
		TS_TEST(test_eval_two_reductions__are_independent),
		TS_TEST(test_eval_select_padding__skips_masked_loads),
		TS_TEST(test_eval_select_compound_branches__masked),
		TS_TEST(test_eval_uniform_load__under_varying_mask),
		TS_TEST(test_eval_conv2d_pad1_stride2__matches_hand_values),
		TS_TEST(test_eval_gather__reads_data_dependent_index),
		TS_TEST(test_eval_gather_out_of_bounds__names_stage_tensor_value),
		TS_TEST(test_eval_gather_guarded__skips_invalid_lanes),
		TS_TEST(test_eval_int_division_by_zero__gives_zero),
		TS_TEST(test_eval_affine_index_past_i64__out_of_bounds),
		TS_TEST(test_eval_wrong_input__names_tensor_and_shape),
		TS_TEST(test_eval_new_ints__wrap_in_their_width),
		TS_TEST(test_eval_unsigned__divide_and_compare_unsigned),
		TS_TEST(test_eval_new_ints__casts_from_float_saturate),
		TS_TEST(test_eval_bf16__rounds_to_nearest_even),
		TS_TEST(test_eval_strips_and_chains__match_direct_loops),
		TS_TEST(test_random_inputs__reproducible_and_in_bounds),
		TS_TEST(test_eval_matmul_256__matches_c_loop),
		TS_TEST(test_eval_too_large__named_before_allocating),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
