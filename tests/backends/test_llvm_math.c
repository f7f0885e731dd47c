/* Inline transcendental functions of the LLVM backend (llvm_math.c):
 * accuracy sweeps against libm over millions of points and the special
 * values, in vectorized and scalar loops, f32 and f64; no call left in
 * a vectorized loop; softmax, layer norm and GELU under static
 * schedules against the reference interpreter. */
#include <config.h>

#include <float.h>
#include <math.h>
#include <stdio.h>

#include "tests/common.h"
#include "examples/catalogue.h"

/* Points per vectorized sweep, and per scalar sweep. */
#define NVEC (1 << 22)
#define NSCALAR (1 << 18)

/* The reference of sigmoid, in long double. */
static long double ref_sigmoid(long double x)
{
	return 1.0L / (1.0L + expl(-x));
}

/* A function under test: its operator, reference (libm in long double,
 * so that the f64 errors are not those of libm's double functions), and
 * the range where most of its random points fall. */
struct fn {
	const char *name;
	ts_op op;
	long double (*ref)(long double);
	double lo, hi;
	bool log_uniform;	/* points are exp(uniform in [lo, hi]) */
};

static const struct fn fns[] = {
	{ "exp", TS_OP_EXP, expl, -110, 95, false },
	{ "log", TS_OP_LOG, logl, -750, 710, true },
	{ "tanh", TS_OP_TANH, tanhl, -12, 12, false },
	{ "sigmoid", TS_OP_SIGMOID, ref_sigmoid, -120, 120, false },
	{ "erf", TS_OP_ERF, erfl, -5, 5, false },
};

/* Values every sweep includes (rounded to the dtype). */
static const double edges[] = {
	0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-45, -1e-45, 1e-40, -1e-40,
	0x1p-126, 0x1p-1022, 0x1p-1074, 1e-300, 1e-30, -1e-30, 1e-8, -1e-8,
	FLT_MAX, -FLT_MAX, DBL_MAX, -DBL_MAX, INFINITY, -INFINITY, NAN,
	88.72283, 88.72284, 88.7229, 89.0, -87.33654, -87.3366, -103.27,
	-103.9720, -104.0, -110.0, 709.78, 709.79, -708.39, -745.13,
	-745.14, -750.0, 0.625, -0.625, 0.921875, 0.92187494, 0.9218751,
	-0.921875, 3.92, 4.0, 9.0, 20.0, 0.34657359, 0.7071067811865476,
	1.4142135623730951, 0.99999994, 1.0000001, 100.0, -100.0, 1e10,
};

/* A reproducible 64-bit stream. */
struct rng {
	uint64_t s;
};

/* The next value of "r". */
static uint64_t rng_next(struct rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

/* A uniform double in [0, 1) from "r". */
static double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1p-53;
}

/* Fill "a" with test points for "f": the edges, then alternately random
 * bit patterns (every class of float) and points of the range of "f". */
static void fill_points(ts_array *a, const struct fn *f, uint64_t seed)
{
	struct rng r = { seed * 0x9e3779b97f4a7c15ULL + 1 };
	size_t ne = sizeof(edges) / sizeof(edges[0]);

	for (int64_t i = 0; i < a->size; i++) {
		uint64_t u = rng_next(&r);
		double x = f->lo + (f->hi - f->lo) * rng_unit(&r);

		if (f->log_uniform)
			x = exp(x);
		if ((size_t)i < ne)
			x = edges[i];
		if ((size_t)i >= ne && i % 2 == 0) {
			if (a->dtype == TS_F64)
				memcpy(&x, &u, sizeof(x));
			else {
				float h;
				uint32_t w = (uint32_t)u;
				memcpy(&h, &w, sizeof(h));
				x = h;
			}
		}
		ts_array_set(a, i, x);
	}
}

/* The unit in the last place of "y" in the format of "t". */
static double ulp_of(double y, ts_dtype t)
{
	int e;
	double u, tiny = t == TS_F64 ? 0x1p-1074 : 0x1p-149;

	frexp(fabs(y), &e);
	u = ldexp(1.0, e - (t == TS_F64 ? 53 : 24));
	return u < tiny ? tiny : u;
}

/* The error of "got" against the exact "want", in units of the last
 * place of "t" (infinite when a NaN or an infinity is wrong). */
static double ulp_error(double got, long double want, ts_dtype t)
{
	double rounded = t == TS_F64 ? (double)want : (double)(float)want;

	if (isnan(want) || isnan(got))
		return isnan(want) && isnan(got) ? 0 : INFINITY;
	if (isinf(rounded) || isinf(got))
		return got == rounded ? 0 : INFINITY;
	if (got == 0 && want == 0)
		return signbit(got) == signbit(rounded) ? 0 : INFINITY;
	return (double)(fabsl(got - want) / ulp_of((double)want, t));
}

/* Fail with the context's message unless "st" is TS_OK. */
static void ok(ts_ctx *ctx, ts_status st, const char *what)
{
	if (st != TS_OK)
		fail_msg("%s: %s", what, ts_ctx_error(ctx));
}

/* The DAG Y[i] = op(X[i]) over "n" elements of dtype "t". */
static ts_dag *unary_dag(ts_ctx *ctx, ts_op op, ts_dtype t, int64_t n)
{
	ts_tensor *x = ts_placeholder(ctx, "X", t, 1, &n);
	ts_axis *i = ts_axis_new(ctx, "i", n);
	ts_tensor *y = ts_compute(ctx, "Y", 1, &i, ts_unary(ctx, op,
		ts_at(ctx, x, 1, ts_var(ctx, i))));
	ts_dag *dag = ts_dag_new(ctx, 1, &x, 1, &y);

	if (!dag)
		fail_msg("unary dag: %s", ts_ctx_error(ctx));
	return dag;
}

/* The DAG Y[i] = pow(X[i], P[i]) over "n" f32 elements. */
static ts_dag *pow_dag(ts_ctx *ctx, int64_t n)
{
	ts_tensor *in[2] = {
		ts_placeholder(ctx, "X", TS_F32, 1, &n),
		ts_placeholder(ctx, "P", TS_F32, 1, &n),
	};
	ts_axis *i = ts_axis_new(ctx, "i", n);
	ts_tensor *y = ts_compute(ctx, "Y", 1, &i, ts_binary(ctx, TS_OP_POW,
		ts_at(ctx, in[0], 1, ts_var(ctx, i)),
		ts_at(ctx, in[1], 1, ts_var(ctx, i))));
	ts_dag *dag = ts_dag_new(ctx, 2, in, 1, &y);

	if (!dag)
		fail_msg("pow dag: %s", ts_ctx_error(ctx));
	return dag;
}

/* The loop nest of "dag" (one stage Y over "i"), its loop split by
 * "width" and vectorized, or scalar when "width" is 0. */
static ts_func *lower_elementwise(ts_ctx *ctx, const ts_dag *dag, int width)
{
	ts_schedule *sch = ts_schedule_new(ctx, dag);
	ts_func *f;

	if (width) {
		ok(ctx, ts_schedule_split(sch, "Y", "i", width,
			TS_TAIL_PARTITION), "split");
		ok(ctx, ts_schedule_vectorize(sch, "Y", "i.i"), "vectorize");
	}
	f = ts_lower(ctx, dag, sch);
	if (!f)
		fail_msg("lower: %s", ts_ctx_error(ctx));
	return f;
}

/* Compile "f" with "opt" and run it on "args". */
static void compile_run(ts_ctx *ctx, const ts_func *f,
	const ts_compile_options *opt, ts_array **args)
{
	ts_module *m = ts_module_compile(ctx, f, opt);

	if (!m)
		fail_msg("compile: %s", ts_ctx_error(ctx));
	ok(ctx, ts_module_run(m, args), "run");
	ts_module_free(m);
}

/* Run "f" of dtype "t" on "n" points in loops of "width" lanes (0:
 * scalar) and return the largest error in ulps; "where" receives the
 * worst point. */
static double sweep(ts_ctx *ctx, const struct fn *f, ts_dtype t, int width,
	int64_t n, const ts_compile_options *opt, double *where)
{
	ts_dag *dag = unary_dag(ctx, f->op, t, n);
	ts_array *args[2] = { ts_array_alloc(ctx, t, 1, &n),
		ts_array_alloc(ctx, t, 1, &n) };
	double worst = 0;

	fill_points(args[0], f, (uint64_t)f->op * 31 + (uint64_t)width);
	compile_run(ctx, lower_elementwise(ctx, dag, width), opt, args);
	*where = 0;
	for (int64_t i = 0; i < n; i++) {
		double x = ts_array_get(args[0], i);
		double e = ulp_error(ts_array_get(args[1], i), f->ref(x), t);
		if (!(e <= worst)) {
			worst = e;
			*where = x;
		}
	}
	return worst;
}

/* Sweep every function of "fns" but those "skip" names, in dtype "t" and
 * "width" lanes; fail past "bound" ulps. */
static void sweep_all(ts_ctx *ctx, ts_dtype t, int width, int64_t n,
	double bound, const char *skip)
{
	for (size_t k = 0; k < sizeof(fns) / sizeof(fns[0]); k++) {
		double where, e;

		if (skip && !strcmp(skip, fns[k].name))
			continue;
		e = sweep(ctx, &fns[k], t, width, n, NULL, &where);
		print_message("%s %s x%d: max %.3f ulp at %a\n", fns[k].name,
			ts_dtype_name(t), width, e, where);
		if (!(e <= bound))
			fail_msg("%s %s x%d: %g ulp at %a (%.9g), bound %g",
				fns[k].name, ts_dtype_name(t), width, e, where,
				where, bound);
	}
}

static void test_math_f32_vector__within_4_ulp_of_libm(void **state)
{
	sweep_all(*state, TS_F32, 16, NVEC, 4.0, NULL);
}

static void test_math_f32_scalar__within_4_ulp_of_libm(void **state)
{
	sweep_all(*state, TS_F32, 0, NSCALAR, 4.0, NULL);
}

static void test_math_f32_odd_width__within_4_ulp_of_libm(void **state)
{
	sweep_all(*state, TS_F32, 5, NSCALAR * 5, 4.0, NULL);
}

static void test_math_f64_vector__within_4_ulp_of_libm(void **state)
{
	sweep_all(*state, TS_F64, 8, NVEC / 4, 4.0, NULL);
}

static void test_math_f64_scalar__within_4_ulp_of_libm(void **state)
{
	sweep_all(*state, TS_F64, 0, NSCALAR, 4.0, NULL);
}

static void test_math_f32_fast_math__stays_accurate_in_range(void **state)
{
	ts_ctx *ctx = *state;
	ts_compile_options opt = ts_compile_options_default();
	/* Finite points only: fast math may drop the NaN and inf cases. */
	const struct fn f[] = {
		{ "exp", TS_OP_EXP, expl, -80, 80, false },
		{ "log", TS_OP_LOG, logl, -80, 80, true },
		{ "tanh", TS_OP_TANH, tanhl, -8, 8, false },
	};
	int64_t n = 1 << 16;

	opt.fast_math = true;
	for (int k = 0; k < 3; k++) {
		ts_dag *dag = unary_dag(ctx, f[k].op, TS_F32, n);
		ts_array *args[2] = { ts_array_alloc(ctx, TS_F32, 1, &n),
			ts_array_alloc(ctx, TS_F32, 1, &n) };
		double worst = 0;

		for (int64_t i = 0; i < n; i++) {
			double u = f[k].lo + (f[k].hi - f[k].lo) *
				(double)i / (double)n;
			ts_array_set(args[0], i, f[k].log_uniform ? exp(u) : u);
		}
		compile_run(ctx, lower_elementwise(ctx, dag, 16), &opt, args);
		for (int64_t i = 0; i < n; i++)
			worst = fmax(worst, ulp_error(ts_array_get(args[1], i),
				f[k].ref(ts_array_get(args[0], i)), TS_F32));
		if (!(worst <= 4.0))
			fail_msg("%s with fast math: %g ulp", f[k].name, worst);
	}
}

/* The exponent and base pairs of the pow test: special cases first. */
static const double pow_pairs[][2] = {
	{ 2, 3 }, { -2, 3 }, { -2, 2 }, { -2, 0.5 }, { -2, -3 }, { 0, 0 },
	{ NAN, 0 }, { 1, NAN }, { -1, INFINITY }, { -1, -INFINITY },
	{ 0, -1 }, { -0.0, -1 }, { -0.0, -2 }, { -0.0, 3 }, { -0.0, 0.5 },
	{ 0, -INFINITY }, { 0.5, INFINITY }, { 2, INFINITY }, { 2, -INFINITY },
	{ INFINITY, 2 }, { INFINITY, -2 }, { -INFINITY, 3 }, { -INFINITY, 2 },
	{ -INFINITY, -3 }, { -INFINITY, 0.5 }, { 2, NAN }, { NAN, 1 },
	{ 10, 38 }, { 10, 39 }, { 10, -45 }, { 10, -46 }, { 1e-20, 2 },
};

static void test_math_f32_pow__within_2_ulp_and_special_cases(void **state)
{
	ts_ctx *ctx = *state;
	int64_t n = 1 << 20;
	size_t np = sizeof(pow_pairs) / sizeof(pow_pairs[0]);
	ts_dag *dag = pow_dag(ctx, n);
	ts_array *args[3];
	struct rng r = { 12345 };
	double worst = 0, wa = 0, wy = 0;

	for (int k = 0; k < 3; k++)
		args[k] = ts_array_alloc(ctx, TS_F32, 1, &n);
	for (int64_t i = 0; i < n; i++) {
		double a = exp(-20 + 40 * rng_unit(&r)), y = -8 + 16 *
			rng_unit(&r);
		if (i % 4 == 1) {	/* negative bases, integer exponents */
			a = -a;
			y = floor(y * 4);
		}
		if ((size_t)i < np) {
			a = pow_pairs[i][0];
			y = pow_pairs[i][1];
		}
		ts_array_set(args[0], i, a);
		ts_array_set(args[1], i, y);
	}
	compile_run(ctx, lower_elementwise(ctx, dag, 16), NULL, args);
	for (int64_t i = 0; i < n; i++) {
		double a = ts_array_get(args[0], i), y = ts_array_get(args[1],
			i);
		double e = ulp_error(ts_array_get(args[2], i), powl(a, y),
			TS_F32);
		if (!(e <= worst)) {
			worst = e;
			wa = a;
			wy = y;
		}
	}
	print_message("pow f32 x16: max %.3f ulp at (%g, %g)\n", worst, wa, wy);
	if (!(worst <= 2.0))
		fail_msg("pow(%g, %g): %g ulp", wa, wy, worst);
}

static void test_math_f16__matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	int64_t n = 4096;

	for (size_t k = 0; k < sizeof(fns) / sizeof(fns[0]); k++) {
		ts_dag *dag = unary_dag(ctx, fns[k].op, TS_F16, n);
		ts_array *args[2] = { ts_array_alloc(ctx, TS_F16, 1, &n),
			ts_array_alloc(ctx, TS_F16, 1, &n) };
		ts_array *want[1];
		double err;

		for (int64_t i = 0; i < n; i++)
			ts_array_set(args[0], i, (fns[k].op == TS_OP_LOG ?
				0.001 : -8.0) + 16.0 * (double)i / (double)n);
		compile_run(ctx, lower_elementwise(ctx, dag, 16), NULL, args);
		ok(ctx, ts_eval(ctx, dag, args, want), "eval");
		if (!ts_array_close(args[1], want[0], &err))
			fail_msg("%s f16: differs from ts_eval by %g",
				fns[k].name, err);
	}
}

/* Fail if the assembly of "op" in dtype "t", vectorized by 16, has a
 * call or if its IR has no vector of 16 lanes. */
static void check_no_call(ts_ctx *ctx, ts_op op, ts_dtype t, bool binary)
{
	ts_dag *dag = binary ? pow_dag(ctx, 1024) : unary_dag(ctx, op, t,
		1024);
	ts_func *f = lower_elementwise(ctx, dag, 16);
	const char *lanes = t == TS_F64 ? "<16 x double>" : "<16 x float>";
	char *text;

	ok(ctx, ts_module_emit_llvm_ir(ctx, f, NULL, &text), "emit IR");
	if (!strstr(text, lanes))
		fail_msg("%s %s: no %s in the IR:\n%s", ts_op_name(op),
			ts_dtype_name(t), lanes, text);
	ok(ctx, ts_module_emit_asm(ctx, f, NULL, &text), "emit asm");
	if (strstr(text, "call"))
		fail_msg("%s %s: a call in the vectorized loop:\n%s",
			ts_op_name(op), ts_dtype_name(t), text);
}

static void test_math_vectorized_loops__have_no_call(void **state)
{
	ts_ctx *ctx = *state;

	for (size_t k = 0; k < sizeof(fns) / sizeof(fns[0]); k++) {
		check_no_call(ctx, fns[k].op, TS_F32, false);
		if (fns[k].op != TS_OP_ERF)
			check_no_call(ctx, fns[k].op, TS_F64, false);
	}
	check_no_call(ctx, TS_OP_POW, TS_F32, true);
}

/* pow(x, 2) is emitted as x * x: the same bits as the product and as
 * the interpreter, specials included, scalar and vectorised. */
static void test_math_pow_two__is_the_square(void **state)
{
	ts_ctx *ctx = *state;
	static const float xs[] = { 0.0f, -0.0f, 1.5f, -3.25f, 1e-30f,
		-1e-30f, 1e20f, -1e20f, 3.0e38f, INFINITY, -INFINITY, NAN,
		0.1f, -7.0f, 65504.0f, 1.17549435e-38f };
	int64_t n = sizeof(xs) / sizeof(xs[0]);
	ts_tensor *x = ts_placeholder(ctx, "X", TS_F32, 1, &n);
	ts_axis *i = ts_axis_new(ctx, "i", n);
	ts_tensor *y = ts_compute(ctx, "Y", 1, &i, ts_binary(ctx, TS_OP_POW,
		ts_at(ctx, x, 1, ts_var(ctx, i)), ts_const(ctx, TS_F32, 2.0)));
	ts_dag *dag = ts_dag_new(ctx, 1, &x, 1, &y);
	ts_array *in, *want[1], *args[2];

	assert_non_null(dag);
	in = ts_array_for_tensor(ctx, x);
	for (int k = 0; k < n; k++)
		ts_array_set(in, k, xs[k]);
	ok(ctx, ts_eval(ctx, dag, &in, want), "eval");
	for (int width = 0; width <= 8; width += 8) {
		args[0] = in;
		args[1] = ts_array_for_tensor(ctx, y);
		compile_run(ctx, lower_elementwise(ctx, dag, width), NULL,
			args);
		for (int k = 0; k < n; k++) {
			float got = (float)ts_array_get(args[1], k);
			float sq = xs[k] * xs[k];
			float ev = (float)ts_array_get(want[0], k);
			if (isnan(sq) ? !isnan(got) || !isnan(ev) :
			    memcmp(&got, &sq, 4) || memcmp(&ev, &sq, 4))
				fail_msg("pow(%g, 2) width %d: %g, eval %g, "
					"square %g", xs[k], width, got, ev, sq);
		}
	}
}

/* Schedule the catalogue entry "name" (tiny) statically for the host,
 * run it and compare with the interpreter. */
static void check_catalogue(ts_ctx *ctx, const char *name)
{
	const struct ts_catalogue_entry *ce = ts_catalogue_find(name);
	ts_dag *dag = ce ? ce->build(ctx, TS_SIZE_TINY) : NULL;
	ts_schedule *sch;
	ts_array **in, *want[16], *args[16];
	ts_func *f;
	double err;

	if (!dag)
		fail_msg("%s: %s", name, ce ? ts_ctx_error(ctx) : "unknown");
	sch = ts_static_schedule(ctx, dag, ts_target_host(ctx));
	if (!sch)
		fail_msg("%s: static schedule: %s", name, ts_ctx_error(ctx));
	f = ts_lower(ctx, dag, sch);
	if (!f)
		fail_msg("%s: lower: %s", name, ts_ctx_error(ctx));
	in = ts_dag_random_inputs(ctx, dag, 7);
	assert_true(dag->ninputs + dag->noutputs <= 16);
	ok(ctx, ts_eval(ctx, dag, in, want), "eval");
	for (int i = 0; i < dag->ninputs; i++)
		args[i] = in[i];
	for (int i = 0; i < dag->noutputs; i++)
		args[dag->ninputs + i] = ts_array_for_tensor(ctx,
			dag->outputs[i]);
	compile_run(ctx, f, NULL, args);
	for (int i = 0; i < dag->noutputs; i++)
		if (!ts_array_close(args[dag->ninputs + i], want[i], &err))
			fail_msg("%s: output %d differs from ts_eval by %g",
				name, i, err);
}

static void test_math_softmax_static__matches_eval(void **state)
{
	check_catalogue(*state, "softmax");
}

static void test_math_layer_norm_static__matches_eval(void **state)
{
	check_catalogue(*state, "layer_norm");
}

static void test_math_rms_norm_static__matches_eval(void **state)
{
	check_catalogue(*state, "rms_norm");
}

static void test_math_gelu_static__matches_eval(void **state)
{
	check_catalogue(*state, "gelu");
}

/* The divisions in "ir" other than the reciprocals of
 * emit_reciprocal_product (1.0 divided by something). */
static int data_divisions(const char *ir)
{
	int n = 0;

	for (const char *p = strstr(ir, "fdiv "); p; p = strstr(p + 5,
	     "fdiv ")) {
		const char *op = p + 5;
		if (*op == '<')
			op = strchr(op, '>') + 2;
		else
			op = strchr(op, ' ') + 1;
		if (strncmp(op, "1.0", 3) && strncmp(op, "<float 1.0", 10) &&
		    strncmp(op, "<double 1.0", 11))
			n++;
	}
	return n;
}

/* A quotient whose divisor does not change along the inner loop is a
 * multiply by the divisor's reciprocal computed once outside the loop,
 * stored as it is or summed (an average's sum(x / 9)): no division of
 * the data left; one that is rounded and cast to an integer, or
 * compared, stays a division, so that the integers and the choices agree
 * exactly with the interpreter.  All against ts_eval. */
static void test_math_invariant_quotient__is_a_reciprocal_product(
	void **state)
{
	ts_ctx *ctx = *state;
	static const char *src[4] = {
		"input X: f32[4, 1000]\ninput S: f32[4]\n"
		"output Y[i: 4, j: 1000] = X[i, j] / S[i]\n",
		"input X: f32[4, 1000]\ninput S: f32[4]\n"
		"output Y[i: 4, j: 1000] = i32(round(X[i, j] * 100.0 / S[i]))\n",
		"input X: f32[4, 1002]\ninput S: f32[4]\n"
		"output Y[i: 4, j: 1000] = sum(k: 3) X[i, j + k] / S[i]\n",
		"input X: f32[4, 1000]\ninput S: f32[4]\n"
		"output Y[i: 4, j: 1000] = select(X[i, j] / S[i] > 0.5, 1.0, "
		"0.0)\n",
	};

	for (int k = 0; k < 4; k++) {
		ts_dag *dag = ts_parse_string(ctx, "quotient.tsl", src[k]);
		ts_array **in, *want[1], *args[3];
		ts_func *f;
		char *ir;
		double err;

		if (!dag)
			fail_msg("parse: %s", ts_ctx_error(ctx));
		f = ts_lower(ctx, dag, NULL);
		if (!f)
			fail_msg("lower: %s", ts_ctx_error(ctx));
		ok(ctx, ts_module_emit_llvm_ir(ctx, f, NULL, &ir), "emit IR");
		if ((k == 0 || k == 2) && (data_divisions(ir) ||
		    !strstr(ir, "fdiv float 1.0")))
			fail_msg("%s: the quotient is not a product by one "
				"reciprocal:\n%s", src[k], ir);
		if ((k == 1 || k == 3) && !data_divisions(ir))
			fail_msg("%s: the quotient is not divided:\n%s",
				src[k], ir);
		in = ts_dag_random_inputs(ctx, dag, 3);
		ok(ctx, ts_eval(ctx, dag, in, want), "eval");
		args[0] = in[0];
		args[1] = in[1];
		args[2] = ts_array_for_tensor(ctx, dag->outputs[0]);
		compile_run(ctx, f, NULL, args);
		if (!ts_array_close(args[2], want[0], &err))
			fail_msg("%s differs from ts_eval by %g", src[k], err);
		if (k == 1 || k == 3)
			for (int64_t i = 0; i < args[2]->size; i++)
				assert_true(ts_array_get(args[2], i) ==
					ts_array_get(want[0], i));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_math_f32_vector__within_4_ulp_of_libm),
		TS_TEST(test_math_f32_scalar__within_4_ulp_of_libm),
		TS_TEST(test_math_f32_odd_width__within_4_ulp_of_libm),
		TS_TEST(test_math_f64_vector__within_4_ulp_of_libm),
		TS_TEST(test_math_f64_scalar__within_4_ulp_of_libm),
		TS_TEST(test_math_f32_fast_math__stays_accurate_in_range),
		TS_TEST(test_math_f32_pow__within_2_ulp_and_special_cases),
		TS_TEST(test_math_f16__matches_eval),
		TS_TEST(test_math_vectorized_loops__have_no_call),
		TS_TEST(test_math_pow_two__is_the_square),
		TS_TEST(test_math_invariant_quotient__is_a_reciprocal_product),
		TS_TEST(test_math_softmax_static__matches_eval),
		TS_TEST(test_math_layer_norm_static__matches_eval),
		TS_TEST(test_math_rms_norm_static__matches_eval),
		TS_TEST(test_math_gelu_static__matches_eval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
