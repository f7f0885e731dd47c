/* The LLVM backend: hand-built loop IR for every dtype and operator,
 * vectorized loops with guarded tails, parallel loops on 1 and 2 threads,
 * a register-tiled matmul and its assembly, errors, AOT objects, shared
 * libraries and headers.  Every kernel is checked against ts_eval. */
#include <config.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gc.h>

#include "tests/common.h"
#include "tests/backends/fence.h"

/* "x" with the variable "v" replaced by "by". */
static ts_expr *subst(ts_ctx *ctx, ts_expr *x, ts_axis *v, ts_expr *by)
{
	ts_expr *idx[TS_MAX_DIMS];

	switch (x->kind) {
	case TS_EXPR_VAR:
		return x->axis == v ? by : x;
	case TS_EXPR_LOAD:
		for (int i = 0; i < x->nargs; i++)
			idx[i] = subst(ctx, x->args[i], v, by);
		return ts_load(ctx, x->tensor, x->nargs, idx);
	case TS_EXPR_UNARY:
		return ts_unary(ctx, x->op, subst(ctx, x->a, v, by));
	case TS_EXPR_BINARY:
		return ts_binary(ctx, x->op, subst(ctx, x->a, v, by),
			subst(ctx, x->b, v, by));
	case TS_EXPR_SELECT:
		return ts_select(ctx, subst(ctx, x->a, v, by),
			subst(ctx, x->b, v, by), subst(ctx, x->c, v, by));
	case TS_EXPR_CAST:
		return ts_cast(ctx, x->dtype, subst(ctx, x->a, v, by));
	default:
		return x;
	}
}

/* A function of "dag" (inputs, then outputs) with body "body". */
static ts_func *func_of(ts_dag *dag, const char *name, ts_stmt *body)
{
	ts_func *f = GC_MALLOC(sizeof(*f));
	int n = dag->ninputs + dag->noutputs;

	f->name = name;
	f->nargs = n;
	f->args = GC_MALLOC((size_t)n * sizeof(ts_tensor *));
	for (int i = 0; i < dag->ninputs; i++)
		f->args[i] = dag->inputs[i];
	for (int i = 0; i < dag->noutputs; i++)
		f->args[dag->ninputs + i] = dag->outputs[i];
	f->ninputs = dag->ninputs;
	f->body = body;
	f->dag = dag;
	return f;
}

/* Inputs of "f" from seed 7 followed by fresh outputs. */
static ts_array **make_args(ts_ctx *ctx, const ts_func *f)
{
	ts_array **in = ts_dag_random_inputs(ctx, f->dag, 7);
	ts_array **args = GC_MALLOC((size_t)f->nargs * sizeof(ts_array *));

	assert_non_null(in);
	for (int i = 0; i < f->nargs; i++)
		args[i] = i < f->ninputs ? in[i]
			: ts_array_for_tensor(ctx, f->args[i]);
	return args;
}

/* Assert that the outputs in "args" equal ts_eval on the inputs. */
static void check_outputs(ts_ctx *ctx, const ts_func *f, ts_array **args,
	const char *what)
{
	int no = f->nargs - f->ninputs;
	ts_array **want = GC_MALLOC((size_t)no * sizeof(ts_array *));
	double err;

	if (ts_eval(ctx, f->dag, args, want) < 0)
		fail_msg("%s: eval: %s", what, ts_ctx_error(ctx));
	for (int i = 0; i < no; i++)
		if (!ts_array_close(args[f->ninputs + i], want[i], &err))
			fail_msg("%s: output '%s' differs from ts_eval by %g",
				what, f->args[f->ninputs + i]->name, err);
}

/* Compile "f" with "opt", run it on "threads" threads, and check it
 * against the interpreter.  Return the arguments. */
static ts_array **check_func(ts_ctx *ctx, const ts_func *f,
	const ts_compile_options *opt, int threads, const char *what)
{
	ts_module *m = ts_module_compile(ctx, f, opt);
	ts_array **args;

	if (!m)
		fail_msg("%s: compile: %s", what, ts_ctx_error(ctx));
	args = make_args(ctx, f);
	ts_module_set_threads(m, threads);
	if (ts_module_run(m, args) < 0)
		fail_msg("%s: run: %s", what, ts_ctx_error(ctx));
	check_outputs(ctx, f, args, what);
	ts_module_free(m);
	return args;
}

/* How an elementwise stage is lowered by hand. */
enum shape { SERIAL, VECTOR, PARALLEL_VECTOR, UNROLLED };

/* out[i] = body for the 1-D output of "dag", lowered as "how" with
 * vectors of "w" lanes and a guard for the tail. */
static ts_func *elementwise(ts_ctx *ctx, ts_dag *dag, enum shape how, int w)
{
	ts_stage *s = dag->outputs[0]->stage;
	ts_axis *i = s->axes[0];
	int64_t n = i->extent, no = (n + w - 1) / w;
	ts_axis *io, *ii;
	ts_expr *idx, *body;
	ts_stmt *st;

	if (how == SERIAL || how == UNROLLED)
		return func_of(dag, "ew", ts_stmt_for(i, how == SERIAL ?
			TS_LOOP_SERIAL : TS_LOOP_UNROLLED, ts_stmt_store(
				s->out, 1, (ts_expr *[]){ ts_var(ctx, i) },
				s->body)));
	io = ts_loop_var(ctx, "io", no);
	ii = ts_loop_var(ctx, "ii", w);
	idx = ts_add(ctx, ts_mul(ctx, ts_var(ctx, io), ts_int(ctx, w)),
		ts_var(ctx, ii));
	body = subst(ctx, s->body, i, idx);
	assert_non_null(body);
	st = ts_stmt_store(s->out, 1, &idx, body);
	if (n % w)
		st = ts_stmt_if(ts_binary(ctx, TS_OP_LT, idx, ts_int(ctx, n)),
			st, NULL);
	st = ts_stmt_for(ii, TS_LOOP_VECTORIZED, st);
	return func_of(dag, "ew", ts_stmt_for(io, how == VECTOR ?
		TS_LOOP_SERIAL : TS_LOOP_PARALLEL, st));
}

/* A DAG out[i] = "make"(X[i], Y[i], "arg") over "n" elements of dtype
 * "t"; tensor names end with "id". */
static ts_dag *ew_dag(ts_ctx *ctx, int id, ts_dtype t, int n,
	ts_expr *(*make)(ts_ctx *, ts_expr *, ts_expr *, int), int arg)
{
	char xn[32], yn[32], on[32];
	int64_t shape[1] = { n };
	ts_tensor *X, *Y, *out;
	ts_axis *i;
	ts_dag *dag;

	snprintf(xn, sizeof(xn), "X%d", id);
	snprintf(yn, sizeof(yn), "Y%d", id);
	snprintf(on, sizeof(on), "O%d", id);
	X = ts_placeholder(ctx, xn, t, 1, shape);
	Y = ts_placeholder(ctx, yn, t, 1, shape);
	i = ts_axis_new(ctx, "i", n);
	out = ts_compute(ctx, on, 1, &i, make(ctx, ts_at(ctx, X, 1,
		ts_var(ctx, i)), ts_at(ctx, Y, 1, ts_var(ctx, i)), arg));
	if (!out)
		fail_msg("building %s case %d: %s", ts_dtype_name(t), arg,
			ts_ctx_error(ctx));
	dag = ts_dag_new(ctx, 2, (ts_tensor *[]){ X, Y }, 1, &out);
	if (!dag)
		fail_msg("dag: %s", ts_ctx_error(ctx));
	return dag;
}

/* "op" applied to "x" and "y", with operands kept inside the domain of
 * the operator (no zero divisors, positive logarithms). */
static ts_expr *make_op(ts_ctx *ctx, ts_expr *x, ts_expr *y, int op)
{
	bool fl = ts_dtype_is_float(x->dtype);
	ts_expr *safe = fl ? ts_select(ctx, ts_binary(ctx, TS_OP_LT,
		ts_unary(ctx, TS_OP_ABS, y), ts_float(ctx, 0.1)),
		ts_float(ctx, 0.5), y) : ts_select(ctx, ts_binary(ctx,
		TS_OP_EQ, y, ts_int(ctx, 0)), ts_int(ctx, 3), y);
	ts_expr *pos = fl ? ts_add(ctx, ts_unary(ctx, TS_OP_ABS, x),
		ts_float(ctx, 0.1)) : NULL;

	switch (op) {
	case TS_OP_DIV: case TS_OP_FLOORDIV: case TS_OP_MOD:
		return ts_binary(ctx, op, x, safe);
	case TS_OP_POW: return ts_binary(ctx, op, pos, y);
	case TS_OP_LOG: case TS_OP_SQRT: case TS_OP_RSQRT:
		return ts_unary(ctx, op, pos);
	case TS_OP_NOT:
		return ts_unary(ctx, op, x->dtype == TS_BOOL ? x
			: ts_binary(ctx, TS_OP_LT, x, y));
	case TS_OP_ROUND: case TS_OP_CEIL:
		return ts_unary(ctx, op, ts_mul(ctx, x, ts_float(ctx, 2.5)));
	case TS_OP_ASIN: case TS_OP_ACOS: case TS_OP_ATANH:
		return ts_unary(ctx, op, ts_mul(ctx, x, ts_float(ctx, 0.9)));
	case TS_OP_ACOSH:
		return ts_unary(ctx, op, ts_add(ctx, pos, ts_float(ctx, 0.9)));
	case TS_OP_ISNAN:	/* NaN where x < 0 */
		return ts_unary(ctx, op, ts_unary(ctx, TS_OP_SQRT, x));
	case TS_OP_ISINF:	/* inf past x = 0.71 even in f64 */
		return ts_unary(ctx, op, ts_unary(ctx, TS_OP_EXP,
			ts_mul(ctx, x, ts_float(ctx, 1000.0))));
	case TS_OP_SIGN:	/* zeros too */
		return ts_unary(ctx, op, fl ? ts_unary(ctx, TS_OP_ROUND, x)
			: x);
	default:
		return ts_op_is_unary(op) ? ts_unary(ctx, op, x)
			: ts_binary(ctx, op, x, y);
	}
}

/* cast("to", x), with floats scaled so that integers see a range. */
static ts_expr *make_cast(ts_ctx *ctx, ts_expr *x, ts_expr *y, int to)
{
	if (ts_dtype_is_float(x->dtype))
		x = ts_mul(ctx, x, ts_float(ctx, 256.0));
	return ts_cast(ctx, (ts_dtype)to, x);
}

/* select(x < y, x, y) and a mix of both. */
static ts_expr *make_select(ts_ctx *ctx, ts_expr *x, ts_expr *y, int k)
{
	if (x->dtype == TS_BOOL)
		return ts_select(ctx, ts_binary(ctx, TS_OP_NE, x, y), x, y);
	return ts_select(ctx, ts_binary(ctx, TS_OP_LT, x, y), x,
		ts_sub(ctx, y, x));
}

static const ts_op float_ops[] = {
	TS_OP_ADD, TS_OP_SUB, TS_OP_MUL, TS_OP_DIV, TS_OP_FLOORDIV, TS_OP_MOD,
	TS_OP_MIN, TS_OP_MAX, TS_OP_POW, TS_OP_LT, TS_OP_LE, TS_OP_GT,
	TS_OP_GE, TS_OP_EQ, TS_OP_NE, TS_OP_NEG, TS_OP_NOT, TS_OP_EXP,
	TS_OP_LOG, TS_OP_SQRT, TS_OP_RSQRT, TS_OP_TANH, TS_OP_SIGMOID,
	TS_OP_ERF, TS_OP_ABS, TS_OP_FLOOR, TS_OP_ROUND, TS_OP_SIN, TS_OP_COS,
	TS_OP_TAN, TS_OP_ASIN, TS_OP_ACOS, TS_OP_ATAN, TS_OP_SINH, TS_OP_COSH,
	TS_OP_ASINH, TS_OP_ACOSH, TS_OP_ATANH, TS_OP_CEIL, TS_OP_SIGN,
	TS_OP_ISNAN, TS_OP_ISINF,
};

static const ts_op int_ops[] = {
	TS_OP_ADD, TS_OP_SUB, TS_OP_MUL, TS_OP_FLOORDIV, TS_OP_MOD,
	TS_OP_MIN, TS_OP_MAX, TS_OP_LT, TS_OP_LE, TS_OP_GT, TS_OP_GE,
	TS_OP_EQ, TS_OP_NE, TS_OP_NEG, TS_OP_NOT, TS_OP_ABS, TS_OP_SIGN,
};

static const ts_op bool_ops[] = {
	TS_OP_AND, TS_OP_OR, TS_OP_EQ, TS_OP_NE, TS_OP_NOT,
};

/* Check one elementwise case in the serial and vector shapes (and the
 * parallel one when "par"). */
static void check_case(ts_ctx *ctx, int *id, ts_dtype t,
	ts_expr *(*make)(ts_ctx *, ts_expr *, ts_expr *, int), int arg,
	bool par)
{
	static const enum shape shapes[] = { SERIAL, VECTOR, PARALLEL_VECTOR };
	ts_compile_options opt = ts_compile_options_default();
	char what[96];

	for (int k = 0; k < (par ? 3 : 2); k++) {
		ts_dag *dag = ew_dag(ctx, (*id)++, t, 37, make, arg);
		snprintf(what, sizeof(what), "%s case %d shape %d",
			ts_dtype_name(t), arg, k);
		check_func(ctx, elementwise(ctx, dag, shapes[k], 8), &opt, 2,
			what);
	}
}

static void test_llvm_ops__match_eval_for_every_dtype(void **state)
{
	static const ts_dtype floats[] = { TS_F16, TS_BF16, TS_F32, TS_F64 };
	static const ts_dtype ints[] = { TS_I8, TS_U8, TS_I16, TS_U16,
		TS_I32, TS_U32, TS_I64, TS_U64 };
	ts_ctx *ctx = *state;
	int id = 0;

	for (size_t d = 0; d < 4; d++)
		for (size_t o = 0; o < sizeof(float_ops) / sizeof(*float_ops); o++)
			check_case(ctx, &id, floats[d], make_op, float_ops[o],
				o == 0);
	for (size_t d = 0; d < 8; d++)
		for (size_t o = 0; o < sizeof(int_ops) / sizeof(*int_ops); o++)
			if (int_ops[o] != TS_OP_NEG || ts_dtype_is_signed(ints[d]))
				check_case(ctx, &id, ints[d], make_op, int_ops[o],
					o == 0);
	for (size_t o = 0; o < sizeof(bool_ops) / sizeof(*bool_ops); o++)
		check_case(ctx, &id, TS_BOOL, make_op, bool_ops[o], o == 0);
}

static void test_llvm_casts__match_eval_between_every_dtype(void **state)
{
	ts_ctx *ctx = *state;
	int id = 1000;

	for (int from = 0; from < TS_DTYPE_COUNT; from++)
		for (int to = 0; to < TS_DTYPE_COUNT; to++)
			check_case(ctx, &id, (ts_dtype)from, make_cast, to, false);
	for (int t = 0; t < TS_DTYPE_COUNT; t++)
		check_case(ctx, &id, (ts_dtype)t, make_select, 0, true);
}

/* Compile the elementwise program "src" (inputs X and Y of "n" elements,
 * one output O[i: n]) serial and in vectors of 4, run it on "x" and "y"
 * (integers as bit patterns, or doubles), and assert that its output has
 * the very bytes of ts_eval's. */
static void check_exact(ts_ctx *ctx, const char *src, const int64_t *x,
	const int64_t *y, const double *fx, int64_t n)
{
	static const enum shape shapes[] = { SERIAL, VECTOR };
	ts_compile_options opt = ts_compile_options_default();

	for (int k = 0; k < 2; k++) {
		ts_dag *dag = ts_parse_string(ctx, "t.tsl", src);
		ts_func *f;
		ts_module *m;
		ts_array *args[3], *want[1];

		if (!dag)
			fail_msg("%s: %s", src, ts_ctx_error(ctx));
		f = elementwise(ctx, dag, shapes[k], 4);
		for (int a = 0; a < 2; a++) {
			args[a] = ts_array_for_tensor(ctx, dag->inputs[a]);
			for (int64_t i = 0; i < n; i++)
				if (ts_dtype_is_float(args[a]->dtype))
					ts_array_set(args[a], i, fx[i]);
				else
					ts_array_set_int(args[a], i,
						(a ? y : x)[i]);
		}
		args[2] = ts_array_for_tensor(ctx, dag->outputs[0]);
		if (!(m = ts_module_compile(ctx, f, &opt)) ||
		    ts_module_run(m, args) < 0 ||
		    ts_eval(ctx, dag, args, want) < 0)
			fail_msg("%s: %s", src, ts_ctx_error(ctx));
		for (int64_t i = 0; i < n; i++) {
			size_t sz = ts_dtype_size(want[0]->dtype);
			if (memcmp((char *)args[2]->data + i * sz,
			    (char *)want[0]->data + i * sz, sz))
				fail_msg("%s shape %d: element %lld is %.17g, "
					"ts_eval %.17g", src, k, (long long)i,
					ts_array_get(args[2], i),
					ts_array_get(want[0], i));
		}
		ts_module_free(m);
	}
}

/* The new integer dtypes at the edges of their ranges: wraparound,
 * unsigned division, modulo, comparison and conversion, u64 above 2^63,
 * float casts that saturate, against the interpreter bit for bit. */
static void test_llvm_new_ints__match_eval_at_the_edges(void **state)
{
	static const int64_t x[8] = { -1, INT64_MIN, 7, 5, 4294967295LL,
		2147483648LL, 65535, 32767 };
	static const int64_t y[8] = { 2, 3, -1, 0, 3, 4294967295LL, 65535,
		-32768 };
	static const double fx[8] = { -3.5, 70000.9, 1e30, NAN,
		1.8e19, 5e9, -40000, 4.2e9 };
	static const char *const bodies[] = {
		"X[i] // Y[i]", "X[i] % Y[i]", "select(X[i] < Y[i], X[i], Y[i])",
		"max(X[i], Y[i])", "min(X[i], Y[i])", "X[i] * Y[i]",
		"X[i] - Y[i]", "X[i] + Y[i]", "-X[i]", "abs(X[i])",
		"f64(X[i])", "f32(X[i])", "bf16(X[i])",
		"u64(X[i] >= Y[i])",
	};
	static const char *const ints[] = { "i16", "u16", "u32", "u64" };
	ts_ctx *ctx = *state;
	char src[256];

	for (int t = 0; t < 4; t++)
		for (size_t b = 0; b < sizeof(bodies) / sizeof(*bodies); b++) {
			snprintf(src, sizeof(src), "input X: %s[8]\n"
				"input Y: %s[8]\noutput O[i: 8] = %s\n",
				ints[t], ints[t], bodies[b]);
			check_exact(ctx, src, x, y, NULL, 8);
		}
	for (int t = 0; t < 4; t++) {
		snprintf(src, sizeof(src), "input X: f64[8]\ninput Y: f64[8]\n"
			"output O[i: 8] = %s(X[i]) + %s(Y[i] * 0.0)\n",
			ints[t], ints[t]);
		check_exact(ctx, src, NULL, NULL, fx, 8);
	}
}

/* bf16 stores and casts round to nearest even (ties to even, NaN kept
 * quiet, overflow to infinity), computed in f32, bit for bit. */
static void test_llvm_bf16__rounds_like_eval(void **state)
{
	static const double fx[8] = { 1.00390625, 1.01171875,
		1.00390625 + 0x1p-20, 3.4e38, -0.0, NAN, -2.7182818, 1e-40 };
	static const char *const srcs[] = {
		"input X: f32[8]\ninput Y: f32[8]\n"
			"output O[i: 8]: bf16 = X[i] * Y[i]\n",
		"input X: f32[8]\ninput Y: f32[8]\n"
			"output O[i: 8] = f32(bf16(X[i])) + Y[i]\n",
		"input X: f64[8]\ninput Y: f64[8]\n"
			"output O[i: 8] = bf16(X[i]) * bf16(Y[i])\n",
		"input X: bf16[8]\ninput Y: bf16[8]\n"
			"output O[i: 8] = X[i] + Y[i] * 0.5\n",
		"input X: bf16[8]\ninput Y: bf16[8]\n"
			"output O[i: 8] = i32(X[i] * 1000.0) + i32(Y[i])\n",
	};
	ts_ctx *ctx = *state;

	for (size_t c = 0; c < sizeof(srcs) / sizeof(*srcs); c++)
		check_exact(ctx, srcs[c], NULL, NULL, fx, 8);
}

static void test_llvm_unrolled_and_vthread__match_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ew_dag(ctx, 2000, TS_F32, 13, make_op, TS_OP_MUL);

	ts_func *f = elementwise(ctx, dag, UNROLLED, 1);

	check_func(ctx, f, NULL, 0, "unrolled");
	/* A virtual thread runs as an unrolled loop on the CPU. */
	f->body->loop = TS_LOOP_BOUND;
	f->body->bind = TS_BIND_VTHREAD;
	check_func(ctx, f, NULL, 0, "vthread");
}

/* C = A B with A "m" x "k" and B "k" x "n" (f32), named after "id". */
static ts_dag *matmul_dag(ts_ctx *ctx, int id, int m, int n, int k)
{
	char an[16], bn[16], cn[16];
	ts_tensor *A, *B, *C;
	ts_axis *i, *j, *r;

	snprintf(an, sizeof(an), "A%d", id);
	snprintf(bn, sizeof(bn), "B%d", id);
	snprintf(cn, sizeof(cn), "C%d", id);
	A = ts_placeholder(ctx, an, TS_F32, 2, (int64_t[]){ m, k });
	B = ts_placeholder(ctx, bn, TS_F32, 2, (int64_t[]){ k, n });
	i = ts_axis_new(ctx, "i", m);
	j = ts_axis_new(ctx, "j", n);
	r = ts_reduce_axis(ctx, "k", k);
	C = ts_compute(ctx, cn, 2, (ts_axis *[]){ i, j }, ts_sum(ctx, 1, &r,
		ts_mul(ctx, ts_at(ctx, A, 2, ts_var(ctx, i), ts_var(ctx, r)),
			ts_at(ctx, B, 2, ts_var(ctx, r), ts_var(ctx, j)))));
	assert_non_null(C);
	return ts_dag_new(ctx, 2, (ts_tensor *[]){ A, B }, 1, &C);
}

/* The naive loop nest of matmul "dag": for i, j: C = 0; for k: C += AB. */
static ts_func *matmul_naive(ts_ctx *ctx, ts_dag *dag)
{
	ts_tensor *A = dag->inputs[0], *B = dag->inputs[1];
	ts_tensor *C = dag->outputs[0];
	ts_axis *i = ts_loop_var(ctx, "i", C->shape[0]);
	ts_axis *j = ts_loop_var(ctx, "j", C->shape[1]);
	ts_axis *k = ts_loop_var(ctx, "k", A->shape[1]);
	ts_expr *ij[2] = { ts_var(ctx, i), ts_var(ctx, j) };
	ts_expr *acc = ts_load(ctx, C, 2, ij);
	ts_expr *prod = ts_mul(ctx, ts_at(ctx, A, 2, ij[0], ts_var(ctx, k)),
		ts_at(ctx, B, 2, ts_var(ctx, k), ij[1]));
	ts_stmt *init = ts_stmt_store(C, 2, ij, ts_const(ctx, TS_F32, 0));
	ts_stmt *upd = ts_stmt_store(C, 2, ij, ts_add(ctx, acc, prod));

	return func_of(dag, "matmul_naive", ts_stmt_for(i, TS_LOOP_SERIAL,
		ts_stmt_for(j, TS_LOOP_SERIAL, ts_stmt_block(2, (ts_stmt *[]){
			init, ts_stmt_for(k, TS_LOOP_SERIAL, upd) }))));
}

static void test_llvm_matmul_naive__matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul_dag(ctx, 0, 33, 17, 29);

	check_func(ctx, matmul_naive(ctx, dag), NULL, 0, "naive matmul");
}

/* Matmul with a "tm" x "tn" register tile: the tile accumulates in a
 * local buffer (rows unrolled, columns vectorized) over k, then is
 * stored; row blocks run in parallel. */
static ts_func *matmul_tiled(ts_ctx *ctx, ts_dag *dag, int tm, int tn)
{
	ts_tensor *A = dag->inputs[0], *B = dag->inputs[1];
	ts_tensor *C = dag->outputs[0];
	ts_tensor *acc = ts_buffer_new(ctx, "acc", TS_F32, 2,
		(int64_t[]){ tm, tn });
	ts_axis *io = ts_loop_var(ctx, "io", C->shape[0] / tm);
	ts_axis *jo = ts_loop_var(ctx, "jo", C->shape[1] / tn);
	ts_axis *k = ts_loop_var(ctx, "k", A->shape[1]);
	ts_axis *ii[3], *ji[3];
	ts_stmt *part[3];

	for (int p = 0; p < 3; p++) {
		ts_expr *row, *col, *loc[2];
		ii[p] = ts_loop_var(ctx, "ii", tm);
		ji[p] = ts_loop_var(ctx, "ji", tn);
		loc[0] = ts_var(ctx, ii[p]);
		loc[1] = ts_var(ctx, ji[p]);
		row = ts_add(ctx, ts_mul(ctx, ts_var(ctx, io), ts_int(ctx, tm)),
			loc[0]);
		col = ts_add(ctx, ts_mul(ctx, ts_var(ctx, jo), ts_int(ctx, tn)),
			loc[1]);
		if (p == 0)
			part[p] = ts_stmt_store(acc, 2, loc,
				ts_const(ctx, TS_F32, 0));
		else if (p == 1)
			part[p] = ts_stmt_store(acc, 2, loc, ts_add(ctx,
				ts_load(ctx, acc, 2, loc), ts_mul(ctx,
				ts_at(ctx, A, 2, row, ts_var(ctx, k)),
				ts_at(ctx, B, 2, ts_var(ctx, k), col))));
		else
			part[p] = ts_stmt_store(C, 2, (ts_expr *[]){ row, col },
				ts_load(ctx, acc, 2, loc));
		part[p] = ts_stmt_for(ii[p], TS_LOOP_UNROLLED,
			ts_stmt_for(ji[p], TS_LOOP_VECTORIZED, part[p]));
	}
	part[1] = ts_stmt_for(k, TS_LOOP_SERIAL, part[1]);
	return func_of(dag, "matmul_tiled", ts_stmt_for(io, TS_LOOP_PARALLEL,
		ts_stmt_for(jo, TS_LOOP_SERIAL, ts_stmt_alloc(acc,
			TS_SCOPE_LOCAL, ts_stmt_block(3, part)))));
}

static void test_llvm_parallel__same_results_on_1_and_2_threads(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul_dag(ctx, 1, 64, 64, 48);
	ts_func *f = matmul_tiled(ctx, dag, 4, 16);
	ts_array **one = check_func(ctx, f, NULL, 1, "tiled, 1 thread");
	ts_array **two = check_func(ctx, f, NULL, 2, "tiled, 2 threads");

	assert_memory_equal(one[2]->data, two[2]->data,
		(size_t)one[2]->size * sizeof(float));
}

static void test_llvm_tile_asm__fma_on_ymm_without_spills(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul_dag(ctx, 2, 64, 64, 64);
	ts_compile_options opt = ts_compile_options_default();
	char *text = NULL;

	opt.triple = "x86_64-unknown-linux-gnu";
	opt.cpu = "haswell";
	if (ts_module_emit_asm(ctx, matmul_tiled(ctx, dag, 4, 16), &opt,
			&text) < 0)
		fail_msg("asm: %s", ts_ctx_error(ctx));
	if (getenv("TS_SHOW_ASM"))
		fputs(text, stderr);
	assert_non_null(strstr(text, "vfmadd"));
	assert_non_null(strstr(text, "ymm"));
	assert_null(strstr(text, "Spill"));
	assert_null(strstr(text, "Reload"));
}

/* The LLVM IR of "f" under "opt" into "*ir", or fail. */
static void ok_ir(ts_ctx *ctx, const ts_func *f,
	const ts_compile_options *opt, char **ir)
{
	if (ts_module_emit_llvm_ir(ctx, f, opt, ir) < 0)
		fail_msg("ir: %s", ts_ctx_error(ctx));
}

static void test_llvm_ir__has_noalias_arguments(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul_dag(ctx, 3, 8, 8, 8);
	char *ir = NULL;

	if (ts_module_emit_llvm_ir(ctx, matmul_naive(ctx, dag), NULL, &ir) < 0)
		fail_msg("ir: %s", ts_ctx_error(ctx));
	assert_non_null(strstr(ir, "define void @matmul_naive(ptr noalias"));
	assert_non_null(strstr(ir, "dereferenceable(256)"));
}

static void test_llvm_errors__bad_triple_shape_bound_loop(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul_dag(ctx, 4, 8, 8, 8);
	ts_func *f = matmul_naive(ctx, dag);
	ts_compile_options opt = ts_compile_options_default();
	ts_module *m;
	ts_array **args;
	ts_axis *b = ts_loop_var(ctx, "bx", 8);
	ts_func *g;

	opt.triple = "nonsense-unknown-nowhere";
	assert_null(ts_module_compile(ctx, f, &opt));
	assert_error_contains(ctx, "target triple 'nonsense-unknown-nowhere'");
	assert_int_equal(ts_build_aot(ctx, f, "/tmp", &opt), TS_ERROR);
	assert_error_contains(ctx, "target triple");
	opt.triple = NULL;
	opt.cpu = "notacpu";
	assert_null(ts_module_compile(ctx, f, &opt));
	assert_error_contains(ctx, "'notacpu' is not a recognized processor");
	opt.cpu = "skylake";
	opt.features = "+nosuchfeature";
	assert_null(ts_module_compile(ctx, f, &opt));
	assert_error_contains(ctx, "'+nosuchfeature' is not a recognized "
		"feature");

	m = ts_module_compile(ctx, f, NULL);
	assert_non_null(m);
	args = make_args(ctx, f);
	args[1] = ts_array_alloc(ctx, TS_F32, 2, (int64_t[]){ 8, 4 });
	assert_int_equal(ts_module_run(m, args), TS_ERROR);
	assert_error_contains(ctx, "argument 1 ('B4') of 'matmul_naive': "
		"expected f32[8, 8], got f32[8, 4]");
	args[1] = NULL;
	assert_int_equal(ts_module_run(m, args), TS_ERROR);
	assert_error_contains(ctx, "argument 1 ('B4') of 'matmul_naive' is "
		"missing");
	ts_module_free(m);

	g = func_of(dag, "bound", ts_stmt_for(b, TS_LOOP_BOUND, f->body));
	g->body->bind = TS_BIND_BLOCK_X;
	assert_null(ts_module_compile(ctx, g, NULL));
	assert_error_contains(ctx, "loop 'bx' is bound to blockIdx.x");
}

static void test_llvm_errors__unallocated_buffer_and_free_var(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul_dag(ctx, 5, 4, 4, 4);
	ts_tensor *tmp = ts_buffer_new(ctx, "tmp", TS_F32, 1, (int64_t[]){ 4 });
	ts_axis *i = ts_loop_var(ctx, "i", 4), *z = ts_loop_var(ctx, "z", 4);
	ts_func *f;

	f = func_of(dag, "bad", ts_stmt_for(i, TS_LOOP_SERIAL, ts_stmt_store(
		tmp, 1, (ts_expr *[]){ ts_var(ctx, i) },
		ts_const(ctx, TS_F32, 1))));
	assert_null(ts_module_compile(ctx, f, NULL));
	assert_error_contains(ctx, "store to buffer 'tmp', which is neither "
		"an argument of 'bad' nor allocated");
	f = func_of(dag, "bad2", ts_stmt_for(i, TS_LOOP_SERIAL, ts_stmt_store(
		dag->outputs[0], 2, (ts_expr *[]){ ts_var(ctx, i),
		ts_var(ctx, z) }, ts_const(ctx, TS_F32, 1))));
	assert_null(ts_module_compile(ctx, f, NULL));
	assert_error_contains(ctx, "variable 'z' is used outside of its loop");
}

/* A fresh temporary directory. */
static char *temp_dir(void)
{
	char *d = strdup("/tmp/tessel-llvm-XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

/* Whether "path" exists. */
static bool exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

static void test_llvm_aot__shared_library_matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul_dag(ctx, 6, 64, 64, 32);
	ts_func *f = matmul_tiled(ctx, dag, 4, 16);
	char *dir = temp_dir(), path[512], cmd[1200];
	ts_array **args;
	void *so;
	void (*fn)(const float *, const float *, float *);

	if (ts_build_aot(ctx, f, dir, NULL) < 0)
		fail_msg("aot: %s", ts_ctx_error(ctx));
	snprintf(path, sizeof(path), "%s/matmul_tiled.o", dir);
	assert_true(exists(path));
	snprintf(path, sizeof(path), "%s/matmul_tiled.h", dir);
	assert_true(exists(path));
	/* The header declares exactly what the library defines. */
	snprintf(cmd, sizeof(cmd), "printf '#include \"matmul_tiled.h\"\\n"
		"void (*p)(const float *, const float *, float *) = "
		"matmul_tiled;\\n' | ${CC:-cc} -std=c11 -Wall -Werror "
		"-fsyntax-only -I%s -x c -", dir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/libmatmul_tiled.so", dir);
	so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!so)
		fail_msg("dlopen: %s", dlerror());
	*(void **)&fn = dlsym(so, "matmul_tiled");
	assert_non_null(fn);
	args = make_args(ctx, f);
	fn(args[0]->data, args[1]->data, args[2]->data);
	check_outputs(ctx, f, args, "AOT matmul");
	dlclose(so);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	free(dir);
	assert_int_equal(system(cmd), 0);
}

/* Check that "path" is an ELF object for machine "machine". */
static void check_elf(const char *path, int machine)
{
	unsigned char h[20];
	FILE *fp = fopen(path, "rb");

	assert_non_null(fp);
	assert_int_equal(fread(h, 1, sizeof(h), fp), sizeof(h));
	fclose(fp);
	assert_memory_equal(h, "\177ELF", 4);
	assert_int_equal(h[18] | h[19] << 8, machine);
}

static void test_llvm_aot_errors__directory_and_linker(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul_dag(ctx, 10, 4, 4, 4);
	ts_func *f = matmul_naive(ctx, dag);
	char *dir = temp_dir(), cmd[600];
	const char *cc = getenv("CC");
	char *saved = cc ? strdup(cc) : NULL;
	ts_status st;

	assert_int_equal(ts_build_aot(ctx, f, "/proc/no/such/dir", NULL),
		TS_ERROR);
	assert_error_contains(ctx, "cannot create the directory "
		"'/proc/no/such/dir'");
	setenv("CC", "false", 1);
	st = ts_build_aot(ctx, f, dir, NULL);
	if (saved)
		setenv("CC", saved, 1);
	else
		unsetenv("CC");
	free(saved);
	assert_int_equal(st, TS_ERROR);
	assert_error_contains(ctx, "libmatmul_naive.so' with 'false' failed "
		"(exit 1)");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	free(dir);
	assert_int_equal(system(cmd), 0);
}

static void test_llvm_aot__cross_objects_for_other_cpus(void **state)
{
	static const struct { const char *triple, *cpu; int machine; } t[] = {
		{ "aarch64-unknown-linux-gnu", "neoverse-n1", 183 },
		{ "x86_64-unknown-linux-gnu", "znver3", 62 },
		{ "x86_64-unknown-linux-gnu", "skylake-avx512", 62 },
	};
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul_dag(ctx, 7, 32, 32, 16);
	ts_func *f = matmul_tiled(ctx, dag, 4, 16);
	char *dir = temp_dir(), path[512], cmd[600];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ts_compile_options opt = ts_compile_options_default();
		opt.triple = t[i].triple;
		opt.cpu = t[i].cpu;
		ts_ctx_clear_warnings(ctx);
		if (ts_build_aot(ctx, f, dir, &opt) < 0)
			fail_msg("%s: %s", t[i].cpu, ts_ctx_error(ctx));
		snprintf(path, sizeof(path), "%s/matmul_tiled.o", dir);
		check_elf(path, t[i].machine);
		if (t[i].machine == 183) {
			assert_non_null(ts_ctx_warnings(ctx));
			assert_non_null(strstr(ts_ctx_warnings(ctx),
				"needs a cross linker"));
		}
		snprintf(path, sizeof(path), "%s/libmatmul_tiled.so", dir);
		assert_int_equal(exists(path), t[i].machine != 183);
		unlink(path);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	free(dir);
	assert_int_equal(system(cmd), 0);
}

static void test_llvm_time__median_of_samples(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul_dag(ctx, 8, 16, 16, 16);
	ts_func *f = matmul_naive(ctx, dag);
	ts_module *m = ts_module_compile(ctx, f, NULL);
	ts_array **args = make_args(ctx, f);
	ts_timing t;

	assert_non_null(m);
	assert_int_equal(ts_module_time(m, args, 0.001, &t), TS_OK);
	assert_true(t.nsamples >= 3);
	assert_true(t.min_s <= t.median_s && t.median_s <= t.max_s);
	check_outputs(ctx, f, args, "timed matmul");
	ts_module_free(m);
}

/* A call that fills fresh collector memory with -1 and collects. */
static ts_status churn(void *data)
{
	int *calls = data;

	for (int i = 0; i < 8; i++) {
		double *junk = GC_MALLOC_ATOMIC(64 * sizeof(double));
		for (int k = 0; k < 64; k++)
			junk[k] = -1;
	}
	if (++*calls % 64 == 0)
		GC_gcollect();
	return TS_OK;
}

/* The timing record may live where the collector does not look (a
 * Python ctypes structure, here malloc's memory): its samples are still
 * the times measured, not memory the collector gave to others in the
 * meantime (a median of 0 s had come back under load). */
static void test_llvm_time__record_outside_the_collector(void **state)
{
	ts_timing *t = malloc(sizeof(*t));
	int calls = 0;

	(void)state;
	assert_non_null(t);
	assert_int_equal(ts_time_calls(churn, &calls, 0.05, t), TS_OK);
	assert_true(t->nsamples >= 3);
	assert_int_equal(calls, t->nsamples + 1);
	for (int i = 0; i < t->nsamples; i++)
		if (!(t->samples[i] > 0))
			fail_msg("sample %d of %d is %g", i, t->nsamples,
				t->samples[i]);
	assert_true(t->median_s > 0);
	assert_true(t->min_s <= t->median_s && t->median_s <= t->max_s);
	free(t);
}

/* The unoptimised IR of "f". */
static char *ir_of(ts_ctx *ctx, const ts_func *f)
{
	ts_compile_options opt = ts_compile_options_default();
	char *ir = NULL;

	opt.opt_level = 0;
	if (ts_module_emit_llvm_ir(ctx, f, &opt, &ir) < 0)
		fail_msg("ir: %s", ts_ctx_error(ctx));
	return ir;
}

/* Assert whether the unoptimised IR of "f" contains "part". */
static void check_ir_has(ts_ctx *ctx, const ts_func *f, const char *part,
	bool has)
{
	char *ir = ir_of(ctx, f);

	if (!strstr(ir, part) == has)
		fail_msg("the IR of '%s' %s '%s'", f->name, has ? "lacks"
			: "has", part);
}

/* Assert that the unoptimised IR of "f" contains "a" or "b". */
static void check_ir_has_either(ts_ctx *ctx, const ts_func *f, const char *a,
	const char *b)
{
	char *ir = ir_of(ctx, f);

	if (!strstr(ir, a) && !strstr(ir, b))
		fail_msg("the IR of '%s' has neither '%s' nor '%s'", f->name,
			a, b);
}

/* A DAG T[j, i] = X[i, j] * 2 (and T2[j, i] = X[i, j]) for checking
 * strided loads (gathers) and strided stores (scatters). */
static ts_dag *transpose_dag(ts_ctx *ctx, int m, int n)
{
	ts_tensor *X = ts_placeholder(ctx, "XT", TS_F32, 2,
		(int64_t[]){ m, n });
	ts_axis *j = ts_axis_new(ctx, "j", n), *i = ts_axis_new(ctx, "i", m);
	ts_tensor *T = ts_compute(ctx, "T", 2, (ts_axis *[]){ j, i },
		ts_mul(ctx, ts_at(ctx, X, 2, ts_var(ctx, i), ts_var(ctx, j)),
			ts_float(ctx, 2.0)));

	assert_non_null(T);
	return ts_dag_new(ctx, 1, &X, 1, &T);
}

/* A select whose arms read only in bounds is straight-line code (both
 * arms evaluated, no branch), so that LLVM can vectorise its loop; an
 * arm a guard protects still runs only where it is chosen. */
static void test_llvm_select_in_bounds__no_branch(void **state)
{
	ts_ctx *ctx = *state;
	static const char *const src[2] = {
		"input X: f32[64]\ninput Y: f32[64]\ninput M: i8[64]\n"
		"output Z[i: 64] = select(M[i] > 0 && X[i] > 0.0, X[i], Y[i])\n",
		"input X: f32[64]\n"
		"output Z[i: 64] = select(i + 1 < 64 && X[i + 1] > 0.0,\n"
		"  X[i + 1], 0.0)\n",
	};

	for (int k = 0; k < 2; k++) {
		ts_dag *dag = ts_parse_string(ctx, "sel.tsl", src[k]);
		ts_func *f = dag ? ts_lower(ctx, dag,
			ts_schedule_naive(ctx, dag)) : NULL;
		if (!f)
			fail_msg("%s", ts_ctx_error(ctx));
		check_ir_has(ctx, f, "sel.then", k == 1);
		check_func(ctx, f, NULL, 1, src[k]);
	}
}

static void test_llvm_vector_gather_scatter__match_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = transpose_dag(ctx, 24, 16);
	ts_tensor *X = dag->inputs[0], *T = dag->outputs[0];
	ts_axis *a = ts_loop_var(ctx, "a", 16), *b = ts_loop_var(ctx, "b", 24);
	ts_expr *va = ts_var(ctx, a), *vb = ts_var(ctx, b);
	ts_expr *val = ts_mul(ctx, ts_at(ctx, X, 2, vb, va),
		ts_float(ctx, 2.0));
	ts_stmt *st = ts_stmt_store(T, 2, (ts_expr *[]){ va, vb }, val);

	ts_func *g = func_of(dag, "gather", ts_stmt_for(a, TS_LOOP_SERIAL,
		ts_stmt_for(b, TS_LOOP_VECTORIZED, st)));
	ts_func *sc = func_of(dag, "scatter", ts_stmt_for(b, TS_LOOP_SERIAL,
		ts_stmt_for(a, TS_LOOP_VECTORIZED, st)));

	/* Inner loop over rows of X: strided loads, contiguous stores; the
	 * gather of 24 lanes is one of 32 with the last 8 off. */
	check_ir_has(ctx, g, "llvm.masked.gather.v32f32", true);
	/* The contiguous store of 24 lanes: plain, or where the target
	 * has masked moves, one of 32 lanes with the last 8 off. */
	check_ir_has_either(ctx, g, "store <24 x float>",
		"llvm.masked.store.v32f32");
	check_func(ctx, g, NULL, 0, "gather");
	/* Inner loop over rows of T: contiguous loads, strided stores. */
	check_ir_has(ctx, sc, "load <16 x float>", true);
	check_ir_has(ctx, sc, "llvm.masked.scatter.v16f32", true);
	check_func(ctx, sc, NULL, 0, "scatter");
}

static void test_llvm_vector_if_else__masks_both_branches(void **state)
{
	ts_ctx *ctx = *state;
	int64_t n = 40;
	ts_tensor *X = ts_placeholder(ctx, "XI", TS_F32, 1, &n);
	ts_axis *i = ts_axis_new(ctx, "i", n);
	ts_expr *x = ts_at(ctx, X, 1, ts_var(ctx, i));
	ts_expr *even = ts_binary(ctx, TS_OP_EQ, ts_mod(ctx, ts_var(ctx, i),
		ts_int(ctx, 3)), ts_int(ctx, 0));
	ts_tensor *O = ts_compute(ctx, "OI", 1, &i, ts_select(ctx, even,
		ts_unary(ctx, TS_OP_EXP, x), ts_unary(ctx, TS_OP_NEG, x)));
	ts_dag *dag = ts_dag_new(ctx, 1, &X, 1, &O);
	ts_axis *io = ts_loop_var(ctx, "io", 3), *ii = ts_loop_var(ctx, "ii",
		16);
	ts_expr *idx = ts_add(ctx, ts_mul(ctx, ts_var(ctx, io),
		ts_int(ctx, 16)), ts_var(ctx, ii));
	ts_expr *xi = ts_at(ctx, X, 1, idx);
	ts_expr *cond = ts_binary(ctx, TS_OP_EQ, ts_mod(ctx, idx,
		ts_int(ctx, 3)), ts_int(ctx, 0));
	ts_stmt *branch = ts_stmt_if(cond, ts_stmt_store(O, 1, &idx,
		ts_unary(ctx, TS_OP_EXP, xi)), ts_stmt_store(O, 1, &idx, ts_unary(ctx, TS_OP_NEG, xi)));
	ts_stmt *guard = ts_stmt_if(ts_binary(ctx, TS_OP_LT, idx,
		ts_int(ctx, n)), branch, NULL);

	ts_func *f = func_of(dag, "ifelse", ts_stmt_for(io, TS_LOOP_PARALLEL,
		ts_stmt_for(ii, TS_LOOP_VECTORIZED, guard)));

	assert_non_null(dag);
	check_ir_has(ctx, f, "llvm.masked.load.v16f32", true);
	check_ir_has(ctx, f, "llvm.masked.store.v16f32", true);
	check_ir_has(ctx, f, "ts_runtime_parallel_for", true);
	check_func(ctx, f, NULL, 2, "vector if/else");
}

static void test_llvm_vector_reduction_axis__runs_lane_by_lane(void **state)
{
	ts_ctx *ctx = *state;
	ts_tensor *X = ts_placeholder(ctx, "XR", TS_F32, 2,
		(int64_t[]){ 5, 8 });
	ts_axis *i = ts_axis_new(ctx, "i", 5), *k = ts_reduce_axis(ctx, "k", 8);
	ts_tensor *S = ts_compute(ctx, "SR", 1, &i, ts_sum(ctx, 1, &k,
		ts_at(ctx, X, 2, ts_var(ctx, i), ts_var(ctx, k))));
	ts_dag *dag = ts_dag_new(ctx, 1, &X, 1, &S);
	ts_expr *vi = ts_var(ctx, i);
	ts_stmt *init = ts_stmt_store(S, 1, &vi, ts_const(ctx, TS_F32, 0));
	ts_stmt *upd = ts_stmt_store(S, 1, &vi, ts_add(ctx, ts_load(ctx, S, 1,
		&vi), ts_at(ctx, X, 2, vi, ts_var(ctx, k))));

	/* The store does not depend on the vectorized variable: the lanes
	 * must run one after the other. */
	ts_func *f = func_of(dag, "rsum", ts_stmt_for(i, TS_LOOP_SERIAL,
		ts_stmt_block(2, (ts_stmt *[]){ init, ts_stmt_for(k,
		TS_LOOP_VECTORIZED, upd) })));

	assert_non_null(dag);
	check_ir_has(ctx, f, "<8 x", false);
	check_func(ctx, f, NULL, 0, "vectorized reduction");
}

static void test_llvm_parallel_nested__matches_eval(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = transpose_dag(ctx, 12, 10);
	ts_tensor *X = dag->inputs[0], *T = dag->outputs[0];
	ts_axis *a = ts_loop_var(ctx, "a", 10), *b = ts_loop_var(ctx, "b", 12);
	ts_expr *va = ts_var(ctx, a), *vb = ts_var(ctx, b);
	ts_stmt *st = ts_stmt_store(T, 2, (ts_expr *[]){ va, vb }, ts_mul(ctx,
		ts_at(ctx, X, 2, vb, va), ts_float(ctx, 2.0)));
	ts_func *f = func_of(dag, "nested", ts_stmt_for(a, TS_LOOP_PARALLEL,
		ts_stmt_for(b, TS_LOOP_PARALLEL, st)));

	/* The inner loop runs serially inside the outer loop's team. */
	check_ir_has(ctx, f, "@nested.par1.body", true);
	check_func(ctx, f, NULL, 2, "nested parallel");
}

static void test_llvm_options__contract_fast_math_vector_width(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = matmul_dag(ctx, 9, 8, 16, 8);
	ts_func *f = matmul_naive(ctx, dag);
	ts_compile_options opt = ts_compile_options_default();
	char *ir = NULL;

	opt.opt_level = 0;
	ok_ir(ctx, f, &opt, &ir);
	assert_non_null(strstr(ir, "llvm.fmuladd"));
	opt.contract = false;
	ok_ir(ctx, f, &opt, &ir);
	assert_null(strstr(ir, "llvm.fmuladd"));
	opt.fast_math = true;
	opt.vector_width = 512;
	ok_ir(ctx, f, &opt, &ir);
	assert_non_null(strstr(ir, "\"unsafe-fp-math\"=\"true\""));
	assert_non_null(strstr(ir, "\"prefer-vector-width\"=\"512\""));
	opt.opt_level = 3;
	check_func(ctx, f, &opt, 0, "fast math");
}

/* How many units in the last place of dtype "t" (f32 or f64) "got" is
 * from "want": 0 for equal values and for two NaNs, infinite when only
 * one is a NaN or an infinity. */
static double ulps(double got, double want, ts_dtype t)
{
	double a = fabs(want), u;

	if (got == want || (isnan(got) && isnan(want)))
		return 0;
	if (!isfinite(got) || !isfinite(want))
		return INFINITY;
	u = t == TS_F32 ? nextafterf((float)a, INFINITY) - (float)a
		: nextafter(a, INFINITY) - a;
	return fabs(got - want) / u;
}

/* The functions of an ONNX graph not in the polynomials of llvm_math.c. */
static const ts_op libm_ops[] = {
	TS_OP_SIN, TS_OP_COS, TS_OP_TAN, TS_OP_ASIN, TS_OP_ACOS, TS_OP_ATAN,
	TS_OP_SINH, TS_OP_COSH, TS_OP_ASINH, TS_OP_ACOSH, TS_OP_ATANH,
	TS_OP_CEIL, TS_OP_SIGN, TS_OP_ISNAN, TS_OP_ISINF,
};

/* Check the output of "f", run on "args", against the interpreter:
 * within "tol" ulps of dtype "t". */
static void check_ulps(ts_ctx *ctx, const ts_func *f, ts_array **args,
	ts_dtype t, double tol, const char *what)
{
	ts_array *want = NULL, *got = args[f->ninputs];

	if (ts_eval(ctx, f->dag, args, &want) < 0)
		fail_msg("%s: eval: %s", what, ts_ctx_error(ctx));
	for (int64_t i = 0; i < want->size; i++) {
		double g = ts_array_get(got, i), w = ts_array_get(want, i);
		if (!(ulps(g, w, t) <= tol))
			fail_msg("%s: element %lld is %.17g, the interpreter's "
				"%.17g", what, (long long)i, g, w);
	}
}

/* Each of libm_ops on 1024 elements of f32 and of f64, in a vectorized
 * loop (8 lanes) and a parallel one: within 4 ulps of the interpreter,
 * which rounds the f64 result once, and exactly for ceil, sign, isnan
 * and isinf.  A library function runs lane by lane inside the vector
 * loop (llvm.sin and llvm.cos are expanded so by LLVM), each name
 * resolved by the JIT. */
static void test_llvm_math_functions__vectorized_within_ulps(void **state)
{
	static const ts_dtype types[] = { TS_F32, TS_F64 };
	static const enum shape shapes[] = { VECTOR, PARALLEL_VECTOR };
	int nops = (int)(sizeof(libm_ops) / sizeof(*libm_ops));
	ts_ctx *ctx = *state;
	int id = 3000;
	char what[64];

	for (int c = 0; c < 2 * nops * 2; c++) {
		ts_op op = libm_ops[c / 2 % nops];
		ts_dtype t = types[c / (2 * nops)];
		ts_dag *dag = ew_dag(ctx, id++, t, 1024, make_op, op);
		ts_func *f = elementwise(ctx, dag, shapes[c % 2], 8);
		snprintf(what, sizeof(what), "%s %s shape %d", ts_op_name(op),
			ts_dtype_name(t), c % 2);
		check_ulps(ctx, f, check_func(ctx, f, NULL, 2, what), t,
			op >= TS_OP_CEIL ? 0 : 4, what);
	}
	/* The vector intrinsic, and a call of the f32 library per lane. */
	check_ir_has(ctx, elementwise(ctx, ew_dag(ctx, id++, TS_F32, 64,
		make_op, TS_OP_SIN), VECTOR, 8), "llvm.sin.v8f32", true);
	check_ir_has(ctx, elementwise(ctx, ew_dag(ctx, id++, TS_F32, 64,
		make_op, TS_OP_TAN), VECTOR, 8), "call float @tanf(", true);
}

/* O = "op"(X) for each of libm_ops but the tests, one after another:
 * acosh(|x| + 1) + atanh(x * 0.9) + ... */
static ts_expr *make_all(ts_ctx *ctx, ts_expr *x, ts_expr *y, int unused)
{
	ts_expr *sum = ts_float(ctx, 0.0);

	for (size_t o = 0; libm_ops[o] != TS_OP_ISNAN; o++)
		sum = ts_add(ctx, sum, make_op(ctx, x, y, libm_ops[o]));
	(void)unused;
	return ts_select(ctx, ts_unary(ctx, TS_OP_ISNAN, sum),
		ts_float(ctx, -1.0), sum);
}

/* A shared library of the functions links with -lm and runs each, in
 * a vectorized loop, within a few ulps of the interpreter. */
static void test_llvm_aot__math_functions_link_libm(void **state)
{
	ts_ctx *ctx = *state;
	ts_dag *dag = ew_dag(ctx, 3500, TS_F32, 1000, make_all, 0);
	ts_func *f = elementwise(ctx, dag, VECTOR, 8);
	char *dir = temp_dir(), path[512], cmd[600];
	ts_array **args;
	void *so;
	void (*fn)(const float *, const float *, float *);

	f->name = "ew_math";
	if (ts_build_aot(ctx, f, dir, NULL) < 0)
		fail_msg("aot: %s", ts_ctx_error(ctx));
	snprintf(path, sizeof(path), "%s/libew_math.so", dir);
	so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!so)
		fail_msg("dlopen: %s", dlerror());
	*(void **)&fn = dlsym(so, "ew_math");
	assert_non_null(fn);
	args = make_args(ctx, f);
	fn(args[0]->data, args[1]->data, args[2]->data);
	/* A sum of 13 terms: a few ulps of each, on the largest. */
	check_ulps(ctx, f, args, TS_F32, 64, "AOT math");
	dlclose(so);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	free(dir);
	assert_int_equal(system(cmd), 0);
}

/* P[i] = X[i - 2] inside the border, 0 outside: the load of a select's
 * arm runs only where the arm is chosen, by a branch in scalar code and
 * under a mask in vector code, so that X is never read out of bounds
 * (the input sits against inaccessible pages). */
static void test_llvm_select__guarded_arm_never_reads_outside(void **state)
{
	ts_ctx *ctx = *state;
	int64_t n = 32, np = 36;
	ts_tensor *X = ts_placeholder(ctx, "XS", TS_F32, 1, &n);
	ts_axis *i = ts_axis_new(ctx, "i", np);
	ts_expr *vi = ts_var(ctx, i);
	ts_expr *inside = ts_binary(ctx, TS_OP_AND,
		ts_binary(ctx, TS_OP_GE, vi, ts_int(ctx, 2)),
		ts_binary(ctx, TS_OP_LT, vi, ts_int(ctx, n + 2)));
	ts_tensor *P = ts_compute(ctx, "PS", 1, &i, ts_select(ctx, inside,
		ts_at(ctx, X, 1, ts_add(ctx, vi, ts_int(ctx, -2))),
		ts_float(ctx, 0.0)));
	ts_dag *dag = ts_dag_new(ctx, 1, &X, 1, &P);
	/* In scalar code, the loop split at the border would leave no
	 * select (backends/split_select.c): the scalar case reads X at
	 * (5 i) % 36 - 2, which no split decides. */
	ts_expr *vp = ts_mod(ctx, ts_mul(ctx, vi, ts_int(ctx, 5)),
		ts_int(ctx, np));
	ts_expr *permuted = ts_binary(ctx, TS_OP_AND,
		ts_binary(ctx, TS_OP_GE, vp, ts_int(ctx, 2)),
		ts_binary(ctx, TS_OP_LT, vp, ts_int(ctx, n + 2)));
	ts_tensor *PP = ts_compute(ctx, "PP", 1, &i, ts_select(ctx, permuted,
		ts_at(ctx, X, 1, ts_add(ctx, vp, ts_int(ctx, -2))),
		ts_float(ctx, 0.0)));
	ts_func *fs[2] = { elementwise(ctx, ts_dag_new(ctx, 1, &X, 1, &PP),
		SERIAL, 1), elementwise(ctx, dag, VECTOR, 8) };
	const char *parts[2] = { "sel.then", "llvm.masked.load.v8f32" };

	for (int k = 0; k < 2; k++) {
		ts_module *m = ts_module_compile(ctx, fs[k], NULL);
		ts_array **args = make_args(ctx, fs[k]);
		check_ir_has(ctx, fs[k], parts[k], true);
		if (!m)
			fail_msg("select: compile: %s", ts_ctx_error(ctx));
		for (int end = 0; end < 2; end++) {
			ts_array *in = args[0];
			ts_fence fx = ts_test_fence(ctx, in, end);
			args[0] = fx.a;
			if (ts_module_run(m, args) < 0)
				fail_msg("select: run: %s", ts_ctx_error(ctx));
			ts_test_unfence(&fx, NULL);
			args[0] = in;
			check_outputs(ctx, fs[k], args, "guarded select");
		}
		ts_module_free(m);
	}
}

/* The runtime's scratch blocks: 64-byte aligned, a freed block of a
 * kept size comes back for the next request it holds (no fresh pages),
 * small blocks go back to the C library, and a kernel with a large
 * temporary runs twice with the same results. */
static void test_runtime_scratch__kept_and_reused(void **state)
{
	ts_ctx *ctx = *state;
	char *a = ts_runtime_alloc(800 * 1024), *b, *c;
	ts_dag *dag;
	ts_func *f;

	assert_non_null(a);
	assert_int_equal((uintptr_t)a % 64, 0);
	memset(a, 1, 800 * 1024);
	ts_runtime_free(a);
	b = ts_runtime_alloc(700 * 1024);
	assert_ptr_equal(a, b);
	c = ts_runtime_alloc(800 * 1024);
	assert_ptr_not_equal(b, c);
	assert_int_equal((uintptr_t)c % 64, 0);
	ts_runtime_free(b);
	ts_runtime_free(c);
	b = ts_runtime_alloc(16);
	assert_non_null(b);
	assert_int_equal((uintptr_t)b % 64, 0);
	ts_runtime_free(b);
	ts_runtime_free(NULL);
	/* An 800 KiB temporary at root, run twice. */
	dag = ts_parse_string(ctx, "tmp", "input X: f32[256, 800]\n"
		"T[i: 256, j: 800] = X[i, j] * 2.0\n"
		"output Y[i: 256] = sum(j: 800) T[i, j] * T[i, j]\n");
	assert_non_null(dag);
	f = ts_lower(ctx, dag, NULL);
	assert_non_null(f);
	assert_non_null(strstr(ts_func_to_string(f), "alloc T"));
	for (int run = 0; run < 2; run++)
		check_func(ctx, f, NULL, 1, "temporary at root");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TS_TEST(test_llvm_matmul_naive__matches_eval),
		TS_TEST(test_llvm_ops__match_eval_for_every_dtype),
		TS_TEST(test_llvm_casts__match_eval_between_every_dtype),
		TS_TEST(test_llvm_new_ints__match_eval_at_the_edges),
		TS_TEST(test_llvm_bf16__rounds_like_eval),
		TS_TEST(test_llvm_unrolled_and_vthread__match_eval),
		TS_TEST(test_llvm_parallel__same_results_on_1_and_2_threads),
		TS_TEST(test_llvm_tile_asm__fma_on_ymm_without_spills),
		TS_TEST(test_llvm_ir__has_noalias_arguments),
		TS_TEST(test_llvm_errors__bad_triple_shape_bound_loop),
		TS_TEST(test_llvm_errors__unallocated_buffer_and_free_var),
		TS_TEST(test_llvm_aot__shared_library_matches_eval),
		TS_TEST(test_llvm_aot__cross_objects_for_other_cpus),
		TS_TEST(test_llvm_aot_errors__directory_and_linker),
		TS_TEST(test_llvm_time__median_of_samples),
		TS_TEST(test_llvm_time__record_outside_the_collector),
		TS_TEST(test_llvm_vector_gather_scatter__match_eval),
		TS_TEST(test_llvm_select_in_bounds__no_branch),
		TS_TEST(test_llvm_vector_if_else__masks_both_branches),
		TS_TEST(test_llvm_vector_reduction_axis__runs_lane_by_lane),
		TS_TEST(test_llvm_options__contract_fast_math_vector_width),
		TS_TEST(test_llvm_parallel_nested__matches_eval),
		TS_TEST(test_llvm_select__guarded_arm_never_reads_outside),
		TS_TEST(test_llvm_math_functions__vectorized_within_ulps),
		TS_TEST(test_llvm_aot__math_functions_link_libm),
		TS_TEST(test_runtime_scratch__kept_and_reused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
