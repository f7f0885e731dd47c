/* The operator catalogue: every operator is written with compute only, as
 * a user of the public API would, and at two sizes.  Where an entry has a
 * .tsl twin in examples/, its body is written with the same expression
 * tree as the text (same operand order, same associativity), so that both
 * print the same canonical string. */
#include <config.h>

#include <stdarg.h>
#include <string.h>

#include "examples/catalogue.h"

/* Shorthands for the builders below; "ctx" is always in scope. */
#define V(a) ts_var(ctx, (a))
#define I(v) ts_int(ctx, (v))
#define F(v) ts_float(ctx, (v))
#define AXES(...) ((ts_axis *[]){ __VA_ARGS__ })
#define NARGS(...) ((int)(sizeof(AXES(__VA_ARGS__)) / sizeof(ts_axis *)))
#define COMPUTE(name, body, ...) \
	ts_compute(ctx, (name), NARGS(__VA_ARGS__), AXES(__VA_ARGS__), (body))
#define SUM(body, ...) ts_sum(ctx, NARGS(__VA_ARGS__), AXES(__VA_ARGS__), (body))
#define RMAX(body, ...) \
	ts_rmax(ctx, NARGS(__VA_ARGS__), AXES(__VA_ARGS__), (body))

/* Return a placeholder "name" of dtype "t" with "ndim" extents given as
 * int64_t varargs, in "ctx". */
static ts_tensor *input(ts_ctx *ctx, const char *name, ts_dtype t, int ndim,
	...)
{
	int64_t shape[TS_MAX_DIMS];
	va_list ap;

	if (ndim > TS_MAX_DIMS)
		ndim = TS_MAX_DIMS;
	va_start(ap, ndim);
	for (int i = 0; i < ndim; i++)
		shape[i] = va_arg(ap, int64_t);
	va_end(ap);
	return ts_placeholder(ctx, name, t, ndim, shape);
}

/* Return a spatial axis "name" of "extent" in "ctx". */
static ts_axis *ax(ts_ctx *ctx, const char *name, int64_t extent)
{
	return ts_axis_new(ctx, name, extent);
}

/* Return a reduction axis "name" of "extent" in "ctx". */
static ts_axis *rx(ts_ctx *ctx, const char *name, int64_t extent)
{
	return ts_reduce_axis(ctx, name, extent);
}

/* Return the DAG "name" that computes "out", its inputs in order of
 * declaration, or NULL when a constructor failed in "ctx". */
static ts_dag *finish(ts_ctx *ctx, const char *name, ts_tensor *out)
{
	ts_dag *dag;

	if (!out)
		return NULL;
	dag = ts_dag_new(ctx, 0, NULL, 1, &out);
	if (dag)
		ts_dag_set_name(dag, name);
	return dag;
}

/* Check that "sc" is a size class for operator "name"; set an error in
 * "ctx" when it is not. */
static bool size_ok(ts_ctx *ctx, const char *name, int sc)
{
	if (sc == TS_SIZE_TINY || sc == TS_SIZE_REAL)
		return true;
	ts_ctx_set_error(ctx, "catalogue operator '%s': unknown size class %d "
		"(0 is tiny, 1 is the real size)", name, sc);
	return false;
}

/* Pick "tiny" or "real" by the size class "sc". */
static int64_t pick(int sc, int64_t tiny, int64_t real)
{
	return sc == TS_SIZE_REAL ? real : tiny;
}

/* Return the window index "o" * "stride" + "r" * "dil" - "off", leaving
 * out factors of 1, a missing "r" and a zero "off", as in the .tsl files. */
static ts_expr *window(ts_ctx *ctx, ts_axis *o, int64_t stride, ts_axis *r,
	int64_t dil, int64_t off)
{
	ts_expr *e = V(o);

	if (stride != 1)
		e = ts_mul(ctx, e, I(stride));
	if (r)
		e = ts_add(ctx, e, dil != 1 ? ts_mul(ctx, V(r), I(dil)) : V(r));
	if (off)
		e = ts_sub(ctx, e, I(off));
	return e;
}

/* Return "h" >= "lo" && "h" < "hi" && "w" >= "lo" && "w" < "wi" in "ctx". */
static ts_expr *in_bounds(ts_ctx *ctx, ts_expr *h, ts_expr *w, int64_t lo,
	int64_t hi, int64_t wi)
{
	ts_expr *c;

	c = ts_binary(ctx, TS_OP_GE, h, I(lo));
	c = ts_binary(ctx, TS_OP_AND, c, ts_binary(ctx, TS_OP_LT, h, I(hi)));
	c = ts_binary(ctx, TS_OP_AND, c, ts_binary(ctx, TS_OP_GE, w, I(lo)));
	return ts_binary(ctx, TS_OP_AND, c, ts_binary(ctx, TS_OP_LT, w, I(wi)));
}

/* Elementwise and data movement. */

/* Build C = A + B in "ctx" at size class "sc". */
static ts_dag *build_add(ts_ctx *ctx, int sc)
{
	int64_t n = pick(sc, 8, 1024), m = pick(sc, 16, 1024);
	ts_tensor *a, *b;
	ts_axis *i, *j;

	if (!size_ok(ctx, "add", sc))
		return NULL;
	a = input(ctx, "A", TS_F32, 2, n, m);
	b = input(ctx, "B", TS_F32, 2, n, m);
	i = ax(ctx, "i", n);
	j = ax(ctx, "j", m);
	return finish(ctx, "add", COMPUTE("C", ts_add(ctx,
		ts_at(ctx, a, 2, V(i), V(j)), ts_at(ctx, b, 2, V(i), V(j))),
		i, j));
}

/* Build Y = max(X, 0) over an NCHW tensor in "ctx" at size class "sc". */
static ts_dag *build_relu(ts_ctx *ctx, int sc)
{
	int64_t c = pick(sc, 4, 64), h = pick(sc, 6, 56);
	ts_axis *n, *k, *y, *x;
	ts_tensor *in;

	if (!size_ok(ctx, "relu", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 4, (int64_t)1, c, h, h);
	n = ax(ctx, "n", 1);
	k = ax(ctx, "c", c);
	y = ax(ctx, "h", h);
	x = ax(ctx, "w", h);
	return finish(ctx, "relu", COMPUTE("Y", ts_max(ctx,
		ts_at(ctx, in, 4, V(n), V(k), V(y), V(x)), F(0.0)),
		n, k, y, x));
}

/* Build Y = f16(X) in "ctx" at size class "sc". */
static ts_dag *build_cast_f16(ts_ctx *ctx, int sc)
{
	int64_t n = pick(sc, 8, 1024), m = pick(sc, 16, 1024);
	ts_tensor *in;
	ts_axis *i, *j;

	if (!size_ok(ctx, "cast_f16", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 2, n, m);
	i = ax(ctx, "i", n);
	j = ax(ctx, "j", m);
	return finish(ctx, "cast_f16", COMPUTE("Y", ts_cast(ctx, TS_F16,
		ts_at(ctx, in, 2, V(i), V(j))), i, j));
}

/* Build Y[n, c, h, w] = X[n, c, h, w] + B[c] in "ctx" at size class "sc". */
static ts_dag *build_bias_add(ts_ctx *ctx, int sc)
{
	int64_t c = pick(sc, 4, 64), h = pick(sc, 5, 56);
	ts_axis *n, *k, *y, *x;
	ts_tensor *in, *b;

	if (!size_ok(ctx, "bias_add", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 4, (int64_t)1, c, h, h);
	b = input(ctx, "B", TS_F32, 1, c);
	n = ax(ctx, "n", 1);
	k = ax(ctx, "c", c);
	y = ax(ctx, "h", h);
	x = ax(ctx, "w", h);
	return finish(ctx, "bias_add", COMPUTE("Y", ts_add(ctx,
		ts_at(ctx, in, 4, V(n), V(k), V(y), V(x)),
		ts_at(ctx, b, 1, V(k))), n, k, y, x));
}

/* Build Y[j, i] = X[i, j] in "ctx" at size class "sc". */
static ts_dag *build_transpose(ts_ctx *ctx, int sc)
{
	int64_t n = pick(sc, 6, 1024), m = pick(sc, 10, 2048);
	ts_tensor *in;
	ts_axis *i, *j;

	if (!size_ok(ctx, "transpose", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 2, n, m);
	j = ax(ctx, "j", m);
	i = ax(ctx, "i", n);
	return finish(ctx, "transpose", COMPUTE("Y",
		ts_at(ctx, in, 2, V(i), V(j)), j, i));
}

/* Build the zero padding of an NCHW tensor by one on each side of H and W,
 * as a stage of its own, in "ctx" at size class "sc". */
static ts_dag *build_pad(ts_ctx *ctx, int sc)
{
	int64_t c = pick(sc, 3, 64), h = pick(sc, 5, 56);
	ts_axis *n, *k, *y, *x;
	ts_tensor *in;
	ts_expr *cond, *load;

	if (!size_ok(ctx, "pad", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 4, (int64_t)1, c, h, h);
	n = ax(ctx, "n", 1);
	k = ax(ctx, "c", c);
	y = ax(ctx, "h", h + 2);
	x = ax(ctx, "w", h + 2);
	cond = in_bounds(ctx, V(y), V(x), 1, h + 1, h + 1);
	load = ts_at(ctx, in, 4, V(n), V(k), window(ctx, y, 1, NULL, 1, 1),
		window(ctx, x, 1, NULL, 1, 1));
	return finish(ctx, "pad", COMPUTE("P",
		ts_select(ctx, cond, load, F(0.0)), n, k, y, x));
}

/* Build the concatenation of A and B along axis 1, written with select,
 * in "ctx" at size class "sc". */
static ts_dag *build_concat(ts_ctx *ctx, int sc)
{
	int64_t n = pick(sc, 4, 128), ma = pick(sc, 3, 256);
	int64_t mb = pick(sc, 5, 512);
	ts_tensor *a, *b;
	ts_axis *i, *j;
	ts_expr *body;

	if (!size_ok(ctx, "concat", sc))
		return NULL;
	a = input(ctx, "A", TS_F32, 2, n, ma);
	b = input(ctx, "B", TS_F32, 2, n, mb);
	i = ax(ctx, "i", n);
	j = ax(ctx, "j", ma + mb);
	body = ts_select(ctx, ts_binary(ctx, TS_OP_LT, V(j), I(ma)),
		ts_at(ctx, a, 2, V(i), V(j)),
		ts_at(ctx, b, 2, V(i), ts_sub(ctx, V(j), I(ma))));
	return finish(ctx, "concat", COMPUTE("C", body, i, j));
}

/* Build Y = 0.5 * X * (1 + erf(X / sqrt 2)) in "ctx" at size class "sc". */
static ts_dag *build_gelu(ts_ctx *ctx, int sc)
{
	int64_t n = pick(sc, 4, 128), m = pick(sc, 8, 3072);
	ts_tensor *in;
	ts_axis *i, *j;
	ts_expr *x, *body;

	if (!size_ok(ctx, "gelu", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 2, n, m);
	i = ax(ctx, "i", n);
	j = ax(ctx, "j", m);
	x = ts_at(ctx, in, 2, V(i), V(j));
	body = ts_mul(ctx, ts_mul(ctx, F(0.5), x), ts_add(ctx, F(1.0),
		ts_unary(ctx, TS_OP_ERF, ts_mul(ctx, x,
		F(0.70710678118654752)))));
	return finish(ctx, "gelu", COMPUTE("Y", body, i, j));
}

/* Build an embedding lookup Y[i, d] = W[Idx[i], d], whose row index is
 * data, in "ctx" at size class "sc". */
static ts_dag *build_embedding(ts_ctx *ctx, int sc)
{
	int64_t s = pick(sc, 6, 128), v = pick(sc, 10, 30522);
	int64_t d = pick(sc, 4, 768);
	ts_tensor *idx, *w;
	ts_axis *i, *k;

	if (!size_ok(ctx, "embedding", sc))
		return NULL;
	idx = input(ctx, "Idx", TS_I32, 1, s);
	w = input(ctx, "W", TS_F32, 2, v, d);
	i = ax(ctx, "i", s);
	k = ax(ctx, "d", d);
	return finish(ctx, "embedding", COMPUTE("Y", ts_at(ctx, w, 2,
		ts_at(ctx, idx, 1, V(i)), V(k)), i, k));
}

/* Simple reductions. */

/* Build S[i] = sum over k of X[i, k] in "ctx" at size class "sc". */
static ts_dag *build_sum_axis(ts_ctx *ctx, int sc)
{
	int64_t n = pick(sc, 8, 1024), m = pick(sc, 16, 1024);
	ts_tensor *in;
	ts_axis *i, *k;

	if (!size_ok(ctx, "sum_axis", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 2, n, m);
	i = ax(ctx, "i", n);
	k = rx(ctx, "k", m);
	return finish(ctx, "sum_axis", COMPUTE("S",
		SUM(ts_at(ctx, in, 2, V(i), V(k)), k), i));
}

/* Build the scalar S = sum of every element of X in "ctx" at size class
 * "sc". */
static ts_dag *build_sum_all(ts_ctx *ctx, int sc)
{
	int64_t n = pick(sc, 8, 1024), m = pick(sc, 16, 1024);
	ts_tensor *in, *out;
	ts_axis *i, *j;

	if (!size_ok(ctx, "sum_all", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 2, n, m);
	i = rx(ctx, "i", n);
	j = rx(ctx, "j", m);
	out = ts_compute(ctx, "S", 0, NULL,
		SUM(ts_at(ctx, in, 2, V(i), V(j)), i, j));
	return finish(ctx, "sum_all", out);
}

/* Build M[i] = max over k of X[i, k] in "ctx" at size class "sc". */
static ts_dag *build_max_axis(ts_ctx *ctx, int sc)
{
	int64_t n = pick(sc, 8, 1024), m = pick(sc, 16, 1024);
	ts_tensor *in;
	ts_axis *i, *k;

	if (!size_ok(ctx, "max_axis", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 2, n, m);
	i = ax(ctx, "i", n);
	k = rx(ctx, "k", m);
	return finish(ctx, "max_axis", COMPUTE("M",
		RMAX(ts_at(ctx, in, 2, V(i), V(k)), k), i));
}

/* Build N[i] = sqrt(sum over k of X[i, k]^2) in "ctx" at size class "sc". */
static ts_dag *build_l2_norm(ts_ctx *ctx, int sc)
{
	int64_t n = pick(sc, 8, 1024), m = pick(sc, 16, 1024);
	ts_tensor *in;
	ts_axis *i, *k;
	ts_expr *x;

	if (!size_ok(ctx, "l2_norm", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 2, n, m);
	i = ax(ctx, "i", n);
	k = rx(ctx, "k", m);
	x = ts_at(ctx, in, 2, V(i), V(k));
	return finish(ctx, "l2_norm", COMPUTE("N", ts_unary(ctx, TS_OP_SQRT,
		SUM(ts_mul(ctx, x, x), k)), i));
}

/* Build y = W v in "ctx" at size class "sc". */
static ts_dag *build_gemv(ts_ctx *ctx, int sc)
{
	int64_t n = pick(sc, 8, 4096), m = pick(sc, 16, 4096);
	ts_tensor *w, *v;
	ts_axis *i, *k;

	if (!size_ok(ctx, "gemv", sc))
		return NULL;
	w = input(ctx, "W", TS_F32, 2, n, m);
	v = input(ctx, "v", TS_F32, 1, m);
	i = ax(ctx, "i", n);
	k = rx(ctx, "k", m);
	return finish(ctx, "gemv", COMPUTE("y", SUM(ts_mul(ctx,
		ts_at(ctx, w, 2, V(i), V(k)), ts_at(ctx, v, 1, V(k))), k), i));
}

/* Return the softmax over the last axis of the [rows, cols] tensor "x",
 * naming its stages with "prefix" (max "M", exp-sum "E", result "Y"), in
 * "ctx". */
static ts_tensor *softmax(ts_ctx *ctx, const char *prefix, ts_tensor *x)
{
	int64_t rows = ts_tensor_dim(x, 0), cols = ts_tensor_dim(x, 1);
	char mname[32], ename[32], yname[32];
	ts_axis *i, *k, *j;
	ts_tensor *m, *e;
	ts_expr *shifted;

	snprintf(mname, sizeof(mname), "%sM", prefix);
	snprintf(ename, sizeof(ename), "%sE", prefix);
	snprintf(yname, sizeof(yname), "%sY", prefix);
	i = ax(ctx, "i", rows);
	k = rx(ctx, "k", cols);
	m = COMPUTE(mname, RMAX(ts_at(ctx, x, 2, V(i), V(k)), k), i);
	i = ax(ctx, "i", rows);
	k = rx(ctx, "k", cols);
	e = COMPUTE(ename, SUM(ts_unary(ctx, TS_OP_EXP, ts_sub(ctx,
		ts_at(ctx, x, 2, V(i), V(k)), ts_at(ctx, m, 1, V(i)))), k), i);
	i = ax(ctx, "i", rows);
	j = ax(ctx, "j", cols);
	shifted = ts_sub(ctx, ts_at(ctx, x, 2, V(i), V(j)),
		ts_at(ctx, m, 1, V(i)));
	return COMPUTE(yname, ts_div(ctx, ts_unary(ctx, TS_OP_EXP, shifted),
		ts_at(ctx, e, 1, V(i))), i, j);
}

/* Build the softmax of each row of X in "ctx" at size class "sc". */
static ts_dag *build_softmax(ts_ctx *ctx, int sc)
{
	ts_tensor *in;

	if (!size_ok(ctx, "softmax", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 2, pick(sc, 4, 128), pick(sc, 10, 1000));
	return finish(ctx, "softmax", in ? softmax(ctx, "", in) : NULL);
}

/* Build the layer norm of each row of X with gain G and bias B in "ctx"
 * at size class "sc". */
static ts_dag *build_layer_norm(ts_ctx *ctx, int sc)
{
	int64_t n = pick(sc, 4, 128), d = pick(sc, 16, 768);
	ts_tensor *x, *g, *b, *mu, *var;
	ts_expr *dx, *body;
	ts_axis *i, *k;

	if (!size_ok(ctx, "layer_norm", sc))
		return NULL;
	x = input(ctx, "X", TS_F32, 2, n, d);
	g = input(ctx, "G", TS_F32, 1, d);
	b = input(ctx, "B", TS_F32, 1, d);
	i = ax(ctx, "i", n);
	k = rx(ctx, "k", d);
	mu = COMPUTE("Mu", ts_div(ctx, SUM(ts_at(ctx, x, 2, V(i), V(k)), k),
		F((double)d)), i);
	i = ax(ctx, "i", n);
	k = rx(ctx, "k", d);
	dx = ts_sub(ctx, ts_at(ctx, x, 2, V(i), V(k)), ts_at(ctx, mu, 1, V(i)));
	var = COMPUTE("Var", ts_div(ctx, SUM(ts_mul(ctx, dx, dx), k),
		F((double)d)), i);
	i = ax(ctx, "i", n);
	k = ax(ctx, "j", d);
	dx = ts_sub(ctx, ts_at(ctx, x, 2, V(i), V(k)), ts_at(ctx, mu, 1, V(i)));
	body = ts_mul(ctx, dx, ts_unary(ctx, TS_OP_RSQRT,
		ts_add(ctx, ts_at(ctx, var, 1, V(i)), F(1e-5))));
	body = ts_add(ctx, ts_mul(ctx, body, ts_at(ctx, g, 1, V(k))),
		ts_at(ctx, b, 1, V(k)));
	return finish(ctx, "layer_norm", COMPUTE("Y", body, i, k));
}

/* Build the RMS norm of each row with a gain, Y[i, j] = X[i, j] *
 * rsqrt(mean over k of X[i, k]^2 + eps) * G[j] (LLaMA's hidden size in
 * the real class), in "ctx" at size class "sc". */
static ts_dag *build_rms_norm(ts_ctx *ctx, int sc)
{
	int64_t n = pick(sc, 4, 128), d = pick(sc, 16, 4096);
	ts_tensor *x, *g, *ms;
	ts_expr *xk, *body;
	ts_axis *i, *k;

	if (!size_ok(ctx, "rms_norm", sc))
		return NULL;
	x = input(ctx, "X", TS_F32, 2, n, d);
	g = input(ctx, "G", TS_F32, 1, d);
	i = ax(ctx, "i", n);
	k = rx(ctx, "k", d);
	xk = ts_at(ctx, x, 2, V(i), V(k));
	ms = COMPUTE("Ms", ts_div(ctx, SUM(ts_mul(ctx, xk, xk), k),
		F((double)d)), i);
	i = ax(ctx, "i", n);
	k = ax(ctx, "j", d);
	body = ts_mul(ctx, ts_at(ctx, x, 2, V(i), V(k)), ts_unary(ctx,
		TS_OP_RSQRT, ts_add(ctx, ts_at(ctx, ms, 1, V(i)), F(1e-6))));
	body = ts_mul(ctx, body, ts_at(ctx, g, 1, V(k)));
	return finish(ctx, "rms_norm", COMPUTE("Y", body, i, k));
}

/* Return the 2x2 stride-2 max pooling "name" of the NCHW tensor "x" in
 * "ctx". */
static ts_tensor *max_pool(ts_ctx *ctx, const char *name, ts_tensor *x)
{
	ts_axis *n, *c, *y, *w, *r, *s;

	n = ax(ctx, "n", ts_tensor_dim(x, 0));
	c = ax(ctx, "c", ts_tensor_dim(x, 1));
	y = ax(ctx, "h", ts_tensor_dim(x, 2) / 2);
	w = ax(ctx, "w", ts_tensor_dim(x, 3) / 2);
	r = rx(ctx, "r", 2);
	s = rx(ctx, "s", 2);
	return COMPUTE(name, RMAX(ts_at(ctx, x, 4, V(n), V(c),
		window(ctx, y, 2, r, 1, 0), window(ctx, w, 2, s, 1, 0)), r, s),
		n, c, y, w);
}

/* Build a 2x2 stride-2 max pooling in "ctx" at size class "sc". */
static ts_dag *build_max_pool(ts_ctx *ctx, int sc)
{
	int64_t c = pick(sc, 2, 64), h = pick(sc, 6, 112);
	ts_tensor *in;

	if (!size_ok(ctx, "max_pool", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 4, (int64_t)1, c, h, h);
	return finish(ctx, "max_pool", in ? max_pool(ctx, "Y", in) : NULL);
}

/* Build a 3x3 stride-1 average pooling with zero padding 1 (padding
 * counted in the divisor), padding inline, in "ctx" at size class "sc". */
static ts_dag *build_avg_pool(ts_ctx *ctx, int sc)
{
	int64_t c = pick(sc, 2, 64), h = pick(sc, 5, 56);
	ts_axis *n, *k, *y, *x, *r, *s;
	ts_expr *hy, *wx, *body;
	ts_tensor *in;

	if (!size_ok(ctx, "avg_pool", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 4, (int64_t)1, c, h, h);
	n = ax(ctx, "n", 1);
	k = ax(ctx, "c", c);
	y = ax(ctx, "h", h);
	x = ax(ctx, "w", h);
	r = rx(ctx, "r", 3);
	s = rx(ctx, "s", 3);
	hy = window(ctx, y, 1, r, 1, 1);
	wx = window(ctx, x, 1, s, 1, 1);
	body = ts_select(ctx, in_bounds(ctx, hy, wx, 0, h, h),
		ts_at(ctx, in, 4, V(n), V(k), hy, wx), F(0.0));
	body = ts_div(ctx, SUM(body, r, s), F(9.0));
	return finish(ctx, "avg_pool", COMPUTE("Y", body, n, k, y, x));
}

/* Complex reductions: products with reuse. */

/* Return C[i, j] = sum over k of A[i, k] * B[k, j], named "name", in
 * "ctx". */
static ts_tensor *matmul(ts_ctx *ctx, const char *name, ts_tensor *a,
	ts_tensor *b)
{
	ts_axis *i, *j, *k;

	i = ax(ctx, "i", ts_tensor_dim(a, 0));
	j = ax(ctx, "j", ts_tensor_dim(b, 1));
	k = rx(ctx, "k", ts_tensor_dim(a, 1));
	return COMPUTE(name, SUM(ts_mul(ctx, ts_at(ctx, a, 2, V(i), V(k)),
		ts_at(ctx, b, 2, V(k), V(j))), k), i, j);
}

/* Build a matmul of [m, k] by [k, n] in "ctx" named "name". */
static ts_dag *matmul_dag(ts_ctx *ctx, const char *name, int64_t m,
	int64_t k, int64_t n)
{
	ts_tensor *a, *b;

	a = input(ctx, "A", TS_F32, 2, m, k);
	b = input(ctx, "B", TS_F32, 2, k, n);
	if (!a || !b)
		return NULL;
	return finish(ctx, name, matmul(ctx, "C", a, b));
}

/* Build a 1024^3 matmul in "ctx" at size class "sc". */
static ts_dag *build_matmul(ts_ctx *ctx, int sc)
{
	if (!size_ok(ctx, "matmul", sc))
		return NULL;
	return matmul_dag(ctx, "matmul", pick(sc, 8, 1024), pick(sc, 12, 1024),
		pick(sc, 16, 1024));
}

/* Build the (128, 768, 3072) matmul of a transformer's feed-forward layer
 * in "ctx" at size class "sc". */
static ts_dag *build_matmul_ffn(ts_ctx *ctx, int sc)
{
	if (!size_ok(ctx, "matmul_128_768_3072", sc))
		return NULL;
	return matmul_dag(ctx, "matmul_128_768_3072", pick(sc, 4, 128),
		pick(sc, 6, 768), pick(sc, 10, 3072));
}

/* Build C[b, i, j] = sum over k of A[b, i, k] * B[b, j, k] (B transposed,
 * as in attention scores) in "ctx" at size class "sc". */
static ts_dag *build_batch_matmul(ts_ctx *ctx, int sc)
{
	int64_t nb = pick(sc, 2, 12), m = pick(sc, 4, 128);
	int64_t n = pick(sc, 5, 128), kk = pick(sc, 3, 64);
	ts_axis *bb, *i, *j, *k;
	ts_tensor *a, *b;

	if (!size_ok(ctx, "batch_matmul", sc))
		return NULL;
	a = input(ctx, "A", TS_F32, 3, nb, m, kk);
	b = input(ctx, "B", TS_F32, 3, nb, n, kk);
	bb = ax(ctx, "b", nb);
	i = ax(ctx, "i", m);
	j = ax(ctx, "j", n);
	k = rx(ctx, "k", kk);
	return finish(ctx, "batch_matmul", COMPUTE("C", SUM(ts_mul(ctx,
		ts_at(ctx, a, 3, V(bb), V(i), V(k)),
		ts_at(ctx, b, 3, V(bb), V(j), V(k))), k), bb, i, j));
}

/* Build C = A B on int8 with int32 accumulation, then requantise to int8
 * (scale, round, clamp to [-128, 127]) in "ctx" at size class "sc". */
static ts_dag *build_matmul_int8(ts_ctx *ctx, int sc)
{
	int64_t m = pick(sc, 8, 1024), kk = pick(sc, 12, 1024);
	int64_t n = pick(sc, 16, 1024);
	ts_tensor *a, *b, *acc;
	ts_axis *i, *j, *k;
	ts_expr *body;

	if (!size_ok(ctx, "matmul_int8_requant", sc))
		return NULL;
	a = input(ctx, "A", TS_I8, 2, m, kk);
	b = input(ctx, "B", TS_I8, 2, kk, n);
	i = ax(ctx, "i", m);
	j = ax(ctx, "j", n);
	k = rx(ctx, "k", kk);
	acc = COMPUTE("Acc", SUM(ts_mul(ctx,
		ts_cast(ctx, TS_I32, ts_at(ctx, a, 2, V(i), V(k))),
		ts_cast(ctx, TS_I32, ts_at(ctx, b, 2, V(k), V(j)))), k), i, j);
	i = ax(ctx, "i", m);
	j = ax(ctx, "j", n);
	body = ts_mul(ctx, ts_cast(ctx, TS_F32, ts_at(ctx, acc, 2, V(i), V(j))),
		F(0.0625));
	body = ts_clamp(ctx, ts_unary(ctx, TS_OP_ROUND, body), F(-128.0),
		F(127.0));
	return finish(ctx, "matmul_int8_requant",
		ts_compute_typed(ctx, "Q", TS_I8, 2, AXES(i, j), body));
}

/* The shape of a 2-D convolution over NCHW data. */
struct conv {
	int64_t n, c, h, w;	/* input */
	int64_t k, r, s;	/* output channels, window */
	int64_t stride, pad, dil, groups;
	bool pad_stage;		/* padding as its own stage, else inline */
};

/* Output extent of a window "r" over "h" under "cv". */
static int64_t conv_out(const struct conv *cv, int64_t h, int64_t r)
{
	return (h + 2 * cv->pad - cv->dil * (r - 1) - 1) / cv->stride + 1;
}

/* Return the zero padding "name" of the NCHW tensor "x" by "pad" on each
 * side of H and W, in "ctx". */
static ts_tensor *pad_nchw(ts_ctx *ctx, const char *name, ts_tensor *x,
	int64_t pad)
{
	int64_t h = ts_tensor_dim(x, 2), w = ts_tensor_dim(x, 3);
	ts_axis *n, *c, *y, *v;
	ts_expr *load;

	n = ax(ctx, "n", ts_tensor_dim(x, 0));
	c = ax(ctx, "c", ts_tensor_dim(x, 1));
	y = ax(ctx, "h", h + 2 * pad);
	v = ax(ctx, "w", w + 2 * pad);
	load = ts_at(ctx, x, 4, V(n), V(c), window(ctx, y, 1, NULL, 1, pad),
		window(ctx, v, 1, NULL, 1, pad));
	return COMPUTE(name, ts_select(ctx, in_bounds(ctx, V(y), V(v), pad,
		h + pad, w + pad), load, F(0.0)), n, c, y, v);
}

/* Return the input channel read by output channel "k" and reduction
 * channel "rc" of "cv": rc, or k // (K/g) * (C/g) + rc with groups. */
static ts_expr *conv_channel(ts_ctx *ctx, const struct conv *cv, ts_axis *k,
	ts_axis *rc)
{
	int64_t kg = cv->k / cv->groups, cg = cv->c / cv->groups;

	if (cv->groups == 1)
		return V(rc);
	return ts_add(ctx, ts_mul(ctx, ts_floordiv(ctx, V(k), I(kg)), I(cg)),
		V(rc));
}

/* Return the convolution "name" of "x" (NCHW) with weights "wt" (K, C/g,
 * R, S; or K, C for a 1x1 window) under "cv", in "ctx". */
static ts_tensor *conv_nchw(ts_ctx *ctx, const char *name,
	const struct conv *cv, ts_tensor *x, ts_tensor *wt)
{
	ts_axis *n, *k, *y, *v, *rc, *r = NULL, *s = NULL;
	int64_t off = cv->pad_stage ? 0 : cv->pad;
	ts_expr *hy, *wx, *data, *wload;

	n = ax(ctx, "n", cv->n);
	k = ax(ctx, "k", cv->k);
	y = ax(ctx, "h", conv_out(cv, cv->h, cv->r));
	v = ax(ctx, "w", conv_out(cv, cv->w, cv->s));
	rc = rx(ctx, "rc", cv->c / cv->groups);
	if (cv->r > 1 || cv->s > 1) {
		r = rx(ctx, "r", cv->r);
		s = rx(ctx, "s", cv->s);
	}
	hy = window(ctx, y, cv->stride, r, cv->dil, off);
	wx = window(ctx, v, cv->stride, s, cv->dil, off);
	data = ts_at(ctx, x, 4, V(n), conv_channel(ctx, cv, k, rc), hy, wx);
	if (off)
		data = ts_select(ctx, in_bounds(ctx, hy, wx, 0, cv->h, cv->w),
			data, F(0.0));
	if (r) {
		wload = ts_at(ctx, wt, 4, V(k), V(rc), V(r), V(s));
		return COMPUTE(name, SUM(ts_mul(ctx, data, wload), rc, r, s),
			n, k, y, v);
	}
	wload = ts_at(ctx, wt, 2, V(k), V(rc));
	return COMPUTE(name, SUM(ts_mul(ctx, data, wload), rc), n, k, y, v);
}

/* Build the convolution "name" described by "cv" on fresh inputs X and W,
 * in "ctx". */
static ts_dag *conv_dag(ts_ctx *ctx, const char *name, const struct conv *cv)
{
	ts_tensor *x, *wt;

	x = input(ctx, "X", TS_F32, 4, cv->n, cv->c, cv->h, cv->w);
	if (cv->r > 1 || cv->s > 1)
		wt = input(ctx, "W", TS_F32, 4, cv->k, cv->c / cv->groups,
			cv->r, cv->s);
	else
		wt = input(ctx, "W", TS_F32, 2, cv->k, cv->c);
	if (!x || !wt)
		return NULL;
	if (cv->pad && cv->pad_stage) {
		x = pad_nchw(ctx, "P", x, cv->pad);
		if (!x)
			return NULL;
	}
	return finish(ctx, name, conv_nchw(ctx, "Y", cv, x, wt));
}

/* Build a 3x3 stride-1 NCHW convolution with padding 1 in its own stage
 * (a ResNet-18 conv2_x layer) in "ctx" at size class "sc". */
static ts_dag *build_conv2d_nchw_s1(ts_ctx *ctx, int sc)
{
	struct conv cv = { 1, pick(sc, 3, 64), pick(sc, 6, 56),
		pick(sc, 6, 56), pick(sc, 4, 64), 3, 3, 1, 1, 1, 1, true };

	if (!size_ok(ctx, "conv2d_nchw_s1", sc))
		return NULL;
	return conv_dag(ctx, "conv2d_nchw_s1", &cv);
}

/* Build a 3x3 stride-2 NCHW convolution with padding 1 in its own stage
 * (ResNet-18 conv3_1) in "ctx" at size class "sc". */
static ts_dag *build_conv2d_nchw_s2(ts_ctx *ctx, int sc)
{
	struct conv cv = { 1, pick(sc, 3, 64), pick(sc, 7, 56),
		pick(sc, 7, 56), pick(sc, 4, 128), 3, 3, 2, 1, 1, 1, true };

	if (!size_ok(ctx, "conv2d_nchw_s2", sc))
		return NULL;
	return conv_dag(ctx, "conv2d_nchw_s2", &cv);
}

/* Build a 1x1 NCHW convolution (a bottleneck expansion) in "ctx" at size
 * class "sc". */
static ts_dag *build_conv1x1(ts_ctx *ctx, int sc)
{
	struct conv cv = { 1, pick(sc, 4, 64), pick(sc, 5, 56),
		pick(sc, 5, 56), pick(sc, 3, 256), 1, 1, 1, 0, 1, 1, false };

	if (!size_ok(ctx, "conv1x1", sc))
		return NULL;
	return conv_dag(ctx, "conv1x1", &cv);
}

/* Build a 3x3 NCHW convolution with dilation 2 and padding 2, padding
 * inline, in "ctx" at size class "sc". */
static ts_dag *build_conv_dilated(ts_ctx *ctx, int sc)
{
	struct conv cv = { 1, pick(sc, 3, 64), pick(sc, 8, 56),
		pick(sc, 8, 56), pick(sc, 4, 64), 3, 3, 1, 2, 2, 1, false };

	if (!size_ok(ctx, "conv2d_dilated", sc))
		return NULL;
	return conv_dag(ctx, "conv2d_dilated", &cv);
}

/* Build a 3x3 NCHW convolution in 4 groups, padding 1 in its own stage,
 * in "ctx" at size class "sc". */
static ts_dag *build_conv_grouped(ts_ctx *ctx, int sc)
{
	struct conv cv = { 1, pick(sc, 8, 64), pick(sc, 5, 56),
		pick(sc, 5, 56), pick(sc, 8, 64), 3, 3, 1, 1, 1, 4, true };

	if (!size_ok(ctx, "conv2d_grouped", sc))
		return NULL;
	return conv_dag(ctx, "conv2d_grouped", &cv);
}

/* Build the 7x7 stride-2 convolution with padding 3 that opens ResNet-18,
 * in "ctx" at size class "sc". */
static ts_dag *build_conv7x7_s2(ts_ctx *ctx, int sc)
{
	struct conv cv = { 1, 3, pick(sc, 11, 224), pick(sc, 11, 224),
		pick(sc, 4, 64), 7, 7, 2, 3, 1, 1, true };

	if (!size_ok(ctx, "conv2d_7x7_s2", sc))
		return NULL;
	return conv_dag(ctx, "conv2d_7x7_s2", &cv);
}

/* Build a 3x3 depthwise NCHW convolution with padding 1 in its own stage
 * (a MobileNet layer) in "ctx" at size class "sc". */
static ts_dag *build_depthwise(ts_ctx *ctx, int sc)
{
	int64_t c = pick(sc, 3, 32), h = pick(sc, 6, 112);
	ts_axis *n, *k, *y, *x, *r, *s;
	ts_tensor *in, *wt, *p;
	ts_expr *body;

	if (!size_ok(ctx, "depthwise_conv", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 4, (int64_t)1, c, h, h);
	wt = input(ctx, "W", TS_F32, 3, c, (int64_t)3, (int64_t)3);
	p = in ? pad_nchw(ctx, "P", in, 1) : NULL;
	if (!p || !wt)
		return NULL;
	n = ax(ctx, "n", 1);
	k = ax(ctx, "c", c);
	y = ax(ctx, "h", h);
	x = ax(ctx, "w", h);
	r = rx(ctx, "r", 3);
	s = rx(ctx, "s", 3);
	body = SUM(ts_mul(ctx, ts_at(ctx, p, 4, V(n), V(k),
		window(ctx, y, 1, r, 1, 0), window(ctx, x, 1, s, 1, 0)),
		ts_at(ctx, wt, 3, V(k), V(r), V(s))), r, s);
	return finish(ctx, "depthwise_conv", COMPUTE("Y", body, n, k, y, x));
}

/* Build a 3x3 stride-2 NHWC convolution with padding 1 inline and HWIO
 * weights, in "ctx" at size class "sc". */
static ts_dag *build_conv2d_nhwc(ts_ctx *ctx, int sc)
{
	int64_t c = pick(sc, 3, 64), h = pick(sc, 7, 56);
	int64_t kk = pick(sc, 4, 128), oh = (h + 2 - 3) / 2 + 1;
	ts_axis *n, *y, *x, *k, *r, *s, *rc;
	ts_expr *hy, *wx, *data;
	ts_tensor *in, *wt;

	if (!size_ok(ctx, "conv2d_nhwc", sc))
		return NULL;
	in = input(ctx, "X", TS_F32, 4, (int64_t)1, h, h, c);
	wt = input(ctx, "W", TS_F32, 4, (int64_t)3, (int64_t)3, c, kk);
	n = ax(ctx, "n", 1);
	y = ax(ctx, "h", oh);
	x = ax(ctx, "w", oh);
	k = ax(ctx, "k", kk);
	r = rx(ctx, "r", 3);
	s = rx(ctx, "s", 3);
	rc = rx(ctx, "rc", c);
	hy = window(ctx, y, 2, r, 1, 1);
	wx = window(ctx, x, 2, s, 1, 1);
	data = ts_select(ctx, in_bounds(ctx, hy, wx, 0, h, h),
		ts_at(ctx, in, 4, V(n), hy, wx, V(rc)), F(0.0));
	return finish(ctx, "conv2d_nhwc", COMPUTE("Y", SUM(ts_mul(ctx, data,
		ts_at(ctx, wt, 4, V(r), V(s), V(rc), V(k))), r, s, rc),
		n, y, x, k));
}

/* Networks and fused layers. */

/* Return D[i, o] = sum over k of X[i, k] * W[o, k], named "name", in
 * "ctx". */
static ts_tensor *dense(ts_ctx *ctx, const char *name, ts_tensor *x,
	ts_tensor *w)
{
	ts_axis *i, *o, *k;

	i = ax(ctx, "i", ts_tensor_dim(x, 0));
	o = ax(ctx, "o", ts_tensor_dim(w, 0));
	k = rx(ctx, "k", ts_tensor_dim(x, 1));
	return COMPUTE(name, SUM(ts_mul(ctx, ts_at(ctx, x, 2, V(i), V(k)),
		ts_at(ctx, w, 2, V(o), V(k))), k), i, o);
}

/* Return "name"[i, o] = "d"[i, o] + "b"[o], through max(., 0) when
 * "relu", in "ctx". */
static ts_tensor *bias_act(ts_ctx *ctx, const char *name, ts_tensor *d,
	ts_tensor *b, bool relu)
{
	ts_axis *i, *o;
	ts_expr *e;

	if (!d)
		return NULL;
	i = ax(ctx, "i", ts_tensor_dim(d, 0));
	o = ax(ctx, "o", ts_tensor_dim(d, 1));
	e = ts_add(ctx, ts_at(ctx, d, 2, V(i), V(o)), ts_at(ctx, b, 1, V(o)));
	if (relu)
		e = ts_max(ctx, e, F(0.0));
	return COMPUTE(name, e, i, o);
}

/* Build Y = relu(X W^T + B) in "ctx" at size class "sc". */
static ts_dag *build_dense_bias_relu(ts_ctx *ctx, int sc)
{
	int64_t n = pick(sc, 4, 128), k = pick(sc, 8, 1024);
	int64_t m = pick(sc, 6, 1024);
	ts_tensor *x, *w, *b;

	if (!size_ok(ctx, "dense_bias_relu", sc))
		return NULL;
	x = input(ctx, "X", TS_F32, 2, n, k);
	w = input(ctx, "W", TS_F32, 2, m, k);
	b = input(ctx, "B", TS_F32, 1, m);
	if (!x || !w || !b)
		return NULL;
	return finish(ctx, "dense_bias_relu",
		bias_act(ctx, "Y", dense(ctx, "D", x, w), b, true));
}

/* Mark the input "t" (may be NULL) of "ctx" as a weight: its contents stay the
 * same from one run to the next. */
static ts_tensor *weight(ts_ctx *ctx, ts_tensor *t)
{
	if (t && ts_tensor_set_weight(ctx, t, true) < 0)
		return NULL;
	return t;
}

/* Build the MLP 784-512-512-10 with relu at batch 1 in "ctx" at size class
 * "sc" (tiny: 16-8-8-4). */
static ts_dag *build_mlp(ts_ctx *ctx, int sc)
{
	int64_t d0 = pick(sc, 16, 784), d1 = pick(sc, 8, 512);
	int64_t d2 = pick(sc, 8, 512), d3 = pick(sc, 4, 10);
	ts_tensor *x, *w1, *b1, *w2, *b2, *w3, *b3, *h;

	if (!size_ok(ctx, "mlp", sc))
		return NULL;
	x = input(ctx, "X", TS_F32, 2, (int64_t)1, d0);
	w1 = weight(ctx, input(ctx, "W1", TS_F32, 2, d1, d0));
	b1 = weight(ctx, input(ctx, "B1", TS_F32, 1, d1));
	w2 = weight(ctx, input(ctx, "W2", TS_F32, 2, d2, d1));
	b2 = weight(ctx, input(ctx, "B2", TS_F32, 1, d2));
	w3 = weight(ctx, input(ctx, "W3", TS_F32, 2, d3, d2));
	b3 = weight(ctx, input(ctx, "B3", TS_F32, 1, d3));
	if (!x || !w1 || !b1 || !w2 || !b2 || !w3 || !b3)
		return NULL;
	h = bias_act(ctx, "H1", dense(ctx, "D1", x, w1), b1, true);
	h = h ? bias_act(ctx, "H2", dense(ctx, "D2", h, w2), b2, true) : NULL;
	h = h ? bias_act(ctx, "Y", dense(ctx, "D3", h, w3), b3, false) : NULL;
	return finish(ctx, "mlp", h);
}

/* Return "name"[n, k, h, w] = max("x"[n, k, h, w] + "b"[k], 0) in "ctx". */
static ts_tensor *bias_relu_nchw(ts_ctx *ctx, const char *name, ts_tensor *x,
	ts_tensor *b)
{
	ts_axis *n, *k, *y, *v;

	if (!x)
		return NULL;
	n = ax(ctx, "n", ts_tensor_dim(x, 0));
	k = ax(ctx, "k", ts_tensor_dim(x, 1));
	y = ax(ctx, "h", ts_tensor_dim(x, 2));
	v = ax(ctx, "w", ts_tensor_dim(x, 3));
	return COMPUTE(name, ts_max(ctx, ts_add(ctx, ts_at(ctx, x, 4, V(n),
		V(k), V(y), V(v)), ts_at(ctx, b, 1, V(k))), F(0.0)),
		n, k, y, v);
}

/* Return the dense layer "name"[n, o] = sum over (c, h, w) of "x"[n, c, h,
 * w] * "w"[o, c, h, w], which reads a feature map without a reshape, in
 * "ctx". */
static ts_tensor *dense_nchw(ts_ctx *ctx, const char *name, ts_tensor *x,
	ts_tensor *w)
{
	ts_axis *n, *o, *c, *y, *v;

	if (!x)
		return NULL;
	n = ax(ctx, "n", ts_tensor_dim(x, 0));
	o = ax(ctx, "o", ts_tensor_dim(w, 0));
	c = rx(ctx, "c", ts_tensor_dim(x, 1));
	y = rx(ctx, "h", ts_tensor_dim(x, 2));
	v = rx(ctx, "w", ts_tensor_dim(x, 3));
	return COMPUTE(name, SUM(ts_mul(ctx,
		ts_at(ctx, x, 4, V(n), V(c), V(y), V(v)),
		ts_at(ctx, w, 4, V(o), V(c), V(y), V(v))), c, y, v), n, o);
}

/* Build the LeNet-like network on a 1x1x28x28 image (conv 5x5 20, relu,
 * pool, conv 5x5 50, relu, pool, dense 500, relu, dense 10, softmax) in
 * "ctx" at size class "sc" (tiny: 16x16 image, 4 and 8 channels, 32). */
static ts_dag *build_lenet(ts_ctx *ctx, int sc)
{
	int64_t hw = pick(sc, 16, 28), c1 = pick(sc, 4, 20);
	int64_t c2 = pick(sc, 8, 50), f1 = pick(sc, 32, 500);
	int64_t h2 = ((hw - 4) / 2 - 4) / 2;
	struct conv cv1 = { 1, 1, hw, hw, c1, 5, 5, 1, 0, 1, 1, false };
	struct conv cv2 = { 1, c1, (hw - 4) / 2, (hw - 4) / 2, c2, 5, 5, 1, 0,
		1, 1, false };
	ts_tensor *x, *w1, *b1, *w2, *b2, *w3, *b3, *w4, *b4, *t;

	if (!size_ok(ctx, "lenet", sc))
		return NULL;
	x = input(ctx, "X", TS_F32, 4, (int64_t)1, (int64_t)1, hw, hw);
	w1 = weight(ctx,
		input(ctx, "W1", TS_F32, 4, c1, (int64_t)1, (int64_t)5,
			(int64_t)5));
	b1 = weight(ctx, input(ctx, "B1", TS_F32, 1, c1));
	w2 = weight(ctx,
		input(ctx, "W2", TS_F32, 4, c2, c1, (int64_t)5, (int64_t)5));
	b2 = weight(ctx, input(ctx, "B2", TS_F32, 1, c2));
	w3 = weight(ctx, input(ctx, "W3", TS_F32, 4, f1, c2, h2, h2));
	b3 = weight(ctx, input(ctx, "B3", TS_F32, 1, f1));
	w4 = weight(ctx, input(ctx, "W4", TS_F32, 2, (int64_t)10, f1));
	b4 = weight(ctx, input(ctx, "B4", TS_F32, 1, (int64_t)10));
	if (!x || !w1 || !b1 || !w2 || !b2 || !w3 || !b3 || !w4 || !b4)
		return NULL;
	t = bias_relu_nchw(ctx, "R1", conv_nchw(ctx, "C1", &cv1, x, w1), b1);
	t = t ? max_pool(ctx, "P1", t) : NULL;
	t = t ? bias_relu_nchw(ctx, "R2", conv_nchw(ctx, "C2", &cv2, t, w2),
		b2) : NULL;
	t = t ? max_pool(ctx, "P2", t) : NULL;
	t = bias_act(ctx, "F1", dense_nchw(ctx, "D1", t, w3), b3, true);
	t = t ? bias_act(ctx, "L", dense(ctx, "D2", t, w4), b4, false) : NULL;
	return finish(ctx, "lenet", t ? softmax(ctx, "S", t) : NULL);
}

/* The table, grouped by stage class; names never change. */
const struct ts_catalogue_entry ts_catalogue[] = {
	{ "add", "elementwise C = A + B", NULL, build_add },
	{ "relu", "Y = max(X, 0) on an NCHW tensor", NULL, build_relu },
	{ "cast_f16", "cast f32 to f16", NULL, build_cast_f16 },
	{ "bias_add", "NCHW tensor plus a per-channel bias (broadcast)", NULL,
		build_bias_add },
	{ "transpose", "2-D transpose", NULL, build_transpose },
	{ "pad", "zero padding of H and W by 1, as its own stage", NULL,
		build_pad },
	{ "concat", "concatenation along axis 1, written with select", NULL,
		build_concat },
	{ "gelu", "GELU, erf form", NULL, build_gelu },
	{ "embedding", "embedding lookup: a gather with a data-dependent row",
		NULL, build_embedding },
	{ "sum_axis", "sum over the last axis", NULL, build_sum_axis },
	{ "sum_all", "sum over all axes to a scalar", NULL, build_sum_all },
	{ "max_axis", "max over the last axis", NULL, build_max_axis },
	{ "l2_norm", "L2 norm of each row", NULL, build_l2_norm },
	{ "gemv", "matrix-vector product", NULL, build_gemv },
	{ "softmax", "softmax of each row (max, exp-sum, divide)", "softmax",
		build_softmax },
	{ "layer_norm", "layer norm of each row with gain and bias",
		"layer_norm", build_layer_norm },
	{ "rms_norm", "RMS norm of each row with gain", NULL,
		build_rms_norm },
	{ "max_pool", "max pooling 2x2 stride 2, NCHW", "max_pool",
		build_max_pool },
	{ "avg_pool", "average pooling 3x3 stride 1 padding 1, inline padding",
		NULL, build_avg_pool },
	{ "matmul", "matmul 1024 x 1024 x 1024", "matmul", build_matmul },
	{ "matmul_128_768_3072", "matmul M=128 K=768 N=3072", NULL,
		build_matmul_ffn },
	{ "batch_matmul", "batched matmul with a transposed operand",
		"batch_matmul", build_batch_matmul },
	{ "matmul_int8_requant", "int8 matmul, int32 accumulation, "
		"requantised to int8", NULL, build_matmul_int8 },
	{ "conv2d_nchw_s1", "conv2d NCHW 3x3 padding 1 stride 1",
		"conv2d_s1", build_conv2d_nchw_s1 },
	{ "conv2d_nchw_s2", "conv2d NCHW 3x3 padding 1 stride 2",
		"conv2d_s2", build_conv2d_nchw_s2 },
	{ "conv2d_nhwc", "conv2d NHWC 3x3 stride 2, inline padding", NULL,
		build_conv2d_nhwc },
	{ "depthwise_conv", "depthwise conv 3x3 padding 1", "depthwise_conv",
		build_depthwise },
	{ "conv1x1", "1x1 convolution", "conv1x1", build_conv1x1 },
	{ "conv2d_dilated", "conv2d 3x3 dilation 2, inline padding", NULL,
		build_conv_dilated },
	{ "conv2d_grouped", "conv2d 3x3 in 4 groups", NULL,
		build_conv_grouped },
	{ "conv2d_7x7_s2", "conv2d 7x7 stride 2 padding 3 (ResNet stem)",
		NULL, build_conv7x7_s2 },
	{ "dense_bias_relu", "dense layer, bias and relu", "dense_bias_relu",
		build_dense_bias_relu },
	{ "lenet", "LeNet-like network on 1x1x28x28", "lenet", build_lenet },
	{ "mlp", "MLP 784-512-512-10 with relu, batch 1", "mlp", build_mlp },
};

const int ts_catalogue_count =
	(int)(sizeof(ts_catalogue) / sizeof(ts_catalogue[0]));

const struct ts_catalogue_entry *ts_catalogue_find(const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < ts_catalogue_count; i++)
		if (!strcmp(ts_catalogue[i].name, name))
			return &ts_catalogue[i];
	return NULL;
}
