/* Features of a lowered program for the learned cost model.
 *
 * Requires: a ts_func from ts_lower.  Produces: TS_FEAT_COUNT floats.
 *
 * Each store statement is rated in its context: the loops around it (their
 * kinds and extents), the guards around it, the arithmetic of the value it
 * stores, and every buffer access it makes (its loads and the store
 * itself).  An index that is an affine form of the loop variables gives
 * the box an access covers over the loops inside any level, hence unique
 * bytes, cache lines, reuse and the stride along the innermost loop.
 * Dynamic counts weight a statement by the product of the extents around
 * it.  The program's vector is the sum over its stores, each slot then
 * compressed to log2(1 + x).
 */
#include <config.h>

#include <math.h>

#include <tessel/tune.h>

#include "dsl/ir.h"
#include "backends/ir.h"
#include "support/support.h"

#define MAX_DEPTH 24
#define MAX_ACCESSES 32

static const char *const feature_names[TS_FEAT_COUNT] = {
	[TS_FEAT_STORES] = "stores",
	[TS_FEAT_STORE_STMTS] = "store_stmts",
	[TS_FEAT_FLOAT_ADDSUB] = "float_addsub",
	[TS_FEAT_FLOAT_MUL] = "float_mul",
	[TS_FEAT_FLOAT_FMA] = "float_fma",
	[TS_FEAT_FLOAT_DIV] = "float_div",
	[TS_FEAT_FLOAT_SPECIAL] = "float_special",
	[TS_FEAT_FLOAT_CMP] = "float_cmp",
	[TS_FEAT_INT_ARITH] = "int_arith",
	[TS_FEAT_INT_DIV] = "int_div",
	[TS_FEAT_CASTS] = "casts",
	[TS_FEAT_LOADS] = "loads",
	[TS_FEAT_VEC_OPS] = "vec_ops",
	[TS_FEAT_PAR_LOOPS] = "par_loops",
	[TS_FEAT_PAR_EXTENT] = "par_extent",
	[TS_FEAT_VEC_LOOPS] = "vec_loops",
	[TS_FEAT_VEC_WIDTH] = "vec_width",
	[TS_FEAT_UNROLL_LOOPS] = "unroll_loops",
	[TS_FEAT_UNROLL_EXTENT] = "unroll_extent",
	[TS_FEAT_LOOP_DEPTH] = "loop_depth",
	[TS_FEAT_INNER_EXTENT] = "inner_extent",
	[TS_FEAT_OUTER_EXTENT] = "outer_extent",
	[TS_FEAT_GUARDS] = "guards",
	[TS_FEAT_BYTES] = "bytes",
	[TS_FEAT_UNIQUE_BYTES] = "unique_bytes",
	[TS_FEAT_LINES] = "lines",
	[TS_FEAT_REUSE] = "reuse",
	[TS_FEAT_REUSE_DIST] = "reuse_dist",
	[TS_FEAT_STRIDE0] = "stride0",
	[TS_FEAT_STRIDE1] = "stride1",
	[TS_FEAT_STRIDED] = "strided",
	[TS_FEAT_STRIDE] = "stride",
	[TS_FEAT_LOCAL_BYTES] = "local_bytes",
	[TS_FEAT_ARG_BYTES] = "arg_bytes",
	[TS_FEAT_ALLOC_BYTES] = "alloc_bytes",
	[TS_FEAT_PAR_WORK] = "par_work",
};

/* The walk: the loops around the current statement, outermost first. */
struct walk {
	int depth;
	const ts_stmt *loops[MAX_DEPTH];
	int guards;
	int line;
	ts_vec allocs;		/* ALLOC statements around: their scopes */
	double f[TS_FEAT_COUNT];	/* raw sums */
};

/* An affine form over the loops of a walk: coef[l] per loop, or not
 * affine. */
struct lin {
	bool affine;
	int64_t coef[MAX_DEPTH];
};

/* One access of a store: the buffer, its indices as affine forms. */
struct access {
	const ts_tensor *buf;
	ts_scope scope;
	int nidx;
	struct lin idx[TS_MAX_DIMS];
};

const char *ts_feature_name(int i)
{
	return i >= 0 && i < TS_FEAT_COUNT ? feature_names[i] : NULL;
}

/* Position of the loop of "axis" in "w", or -1. */
static int loop_of(const struct walk *w, const ts_axis *axis)
{
	for (int l = w->depth - 1; l >= 0; l--)
		if (w->loops[l]->var == axis)
			return l;
	return -1;
}

/* Scale "a" by "k" into itself. */
static void lin_scale(struct lin *a, int64_t k, int depth)
{
	for (int l = 0; l < depth; l++)
		a->coef[l] *= k;
}

/* Whether "a" is a constant (no loop variable) over "depth" loops. */
static bool lin_is_const(const struct lin *a, int depth)
{
	for (int l = 0; l < depth; l++)
		if (a->coef[l])
			return false;
	return true;
}

/* The affine form of index "e" in "w" into "out"; constants are dropped
 * (only the variation matters), so a constant's form is zero. */
static void lin_of(const struct walk *w, const ts_expr *e, struct lin *out)
{
	struct lin b;
	int l;

	memset(out, 0, sizeof(*out));
	out->affine = true;
	switch (e->kind) {
	case TS_EXPR_INT:
		return;
	case TS_EXPR_VAR:
		l = loop_of(w, e->axis);
		if (l >= 0)
			out->coef[l] = 1;
		else
			out->affine = false;
		return;
	case TS_EXPR_CAST:
		lin_of(w, e->a, out);
		return;
	case TS_EXPR_BINARY:
		break;
	default:
		out->affine = false;
		return;
	}
	lin_of(w, e->a, out);
	lin_of(w, e->b, &b);
	out->affine = out->affine && b.affine;
	if (!out->affine)
		return;
	if (e->op == TS_OP_ADD || e->op == TS_OP_SUB) {
		for (l = 0; l < w->depth; l++)
			out->coef[l] += e->op == TS_OP_ADD ? b.coef[l] : -b.coef[l];
	} else if (e->op == TS_OP_MUL && e->b->kind == TS_EXPR_INT) {
		lin_scale(out, e->b->ival, w->depth);
	} else if (e->op == TS_OP_MUL && e->a->kind == TS_EXPR_INT) {
		*out = b;
		lin_scale(out, e->a->ival, w->depth);
	} else if (!lin_is_const(out, w->depth) || !lin_is_const(&b, w->depth)) {
		out->affine = false;
	}
}

/* Extent of the loop at position "l" of "w". */
static int64_t extent_at(const struct walk *w, int l)
{
	return w->loops[l]->var->extent;
}

/* The number of elements of dimension "d" of "a" that the loops at
 * positions "from".. of "w" cover. */
static int64_t dim_range(const struct walk *w, const struct access *a,
	int d, int from)
{
	int64_t r = 1, n = a->buf->shape[d];

	if (!a->idx[d].affine)
		return n;
	for (int l = from; l < w->depth; l++) {
		int64_t c = a->idx[d].coef[l];
		r += (c < 0 ? -c : c) * (extent_at(w, l) - 1);
	}
	return r < n ? r : n;
}

/* Bytes of the box that "a" covers over the loops from "from" on; with
 * "lines", the number of cache lines of that box instead. */
static double box(const struct walk *w, const struct access *a, int from,
	bool lines)
{
	size_t sz = ts_dtype_size(a->buf->dtype);
	double n = 1;

	for (int d = 0; d < a->nidx; d++) {
		double r = (double)dim_range(w, a, d, from);
		if (lines && d == a->nidx - 1)
			r = ceil(r * sz / w->line);
		n *= r;
	}
	return lines ? n : n * sz;
}

/* Stride of "a" in elements along the innermost loop of "w" (-1:
 * unknown). */
static int64_t inner_stride(const struct walk *w, const struct access *a)
{
	int64_t s = 0, row = 1;

	if (w->depth == 0)
		return 0;
	for (int d = a->nidx - 1; d >= 0; d--) {
		if (!a->idx[d].affine)
			return -1;
		s += a->idx[d].coef[w->depth - 1] * row;
		row *= a->buf->shape[d];
	}
	return s < 0 ? -s : s;
}

/* Innermost loop position at which every index of "a" is invariant (the
 * loop that carries its reuse), or -1. */
static int reuse_loop(const struct walk *w, const struct access *a)
{
	for (int l = w->depth - 1; l >= 0; l--) {
		bool inv = true;
		for (int d = 0; d < a->nidx && inv; d++)
			inv = a->idx[d].affine && !a->idx[d].coef[l];
		if (inv)
			return l;
	}
	return -1;
}

/* Scope of buffer "t" from the ALLOC statements around the walk. */
static ts_scope scope_of(const struct walk *w, const ts_tensor *t)
{
	for (int i = w->allocs.n - 1; i >= 0; i--) {
		const ts_stmt *s = w->allocs.v[i];
		if (s->buffer == t)
			return s->scope;
	}
	return TS_SCOPE_ARG;
}

/* Record an access of "t" at "idx" in "acc" ("*n" so far). */
static void access_add(const struct walk *w, struct access *acc, int *n,
	const ts_tensor *t, int nidx, ts_expr *const *idx)
{
	struct access *a;

	if (*n >= MAX_ACCESSES)
		return;
	a = &acc[(*n)++];
	a->buf = t;
	a->scope = scope_of(w, t);
	a->nidx = nidx < TS_MAX_DIMS ? nidx : TS_MAX_DIMS;
	for (int d = 0; d < a->nidx; d++)
		lin_of(w, idx[d], &a->idx[d]);
}

/* Count the arithmetic of value "e" into "ops" (feature slots) and its
 * loads into "acc". */
static void count_expr(const struct walk *w, const ts_expr *e, double *ops,
	struct access *acc, int *nacc)
{
	bool fl;

	if (!e)
		return;
	switch (e->kind) {
	case TS_EXPR_LOAD:
		ops[TS_FEAT_LOADS]++;
		access_add(w, acc, nacc, e->tensor, e->nargs, e->args);
		for (int i = 0; i < e->nargs; i++)
			if (e->args[i]->kind != TS_EXPR_VAR)
				count_expr(w, e->args[i], ops, acc, nacc);
		return;
	case TS_EXPR_CAST:
		ops[TS_FEAT_CASTS]++;
		break;
	case TS_EXPR_SELECT:
		ops[TS_FEAT_FLOAT_CMP]++;
		break;
	case TS_EXPR_UNARY:
		fl = ts_dtype_is_float(e->a->dtype);
		if (e->op == TS_OP_ISNAN || e->op == TS_OP_ISINF)
			ops[TS_FEAT_FLOAT_CMP]++;
		else if (e->op != TS_OP_NEG && e->op != TS_OP_NOT &&
		    e->op != TS_OP_ABS && e->op != TS_OP_SIGN)
			ops[fl ? TS_FEAT_FLOAT_SPECIAL : TS_FEAT_INT_ARITH]++;
		else
			ops[fl ? TS_FEAT_FLOAT_ADDSUB : TS_FEAT_INT_ARITH]++;
		break;
	case TS_EXPR_BINARY:
		fl = ts_dtype_is_float(e->a->dtype);
		switch (e->op) {
		case TS_OP_ADD: case TS_OP_SUB:
			ops[fl ? TS_FEAT_FLOAT_ADDSUB : TS_FEAT_INT_ARITH]++;
			if (fl && ((e->a->kind == TS_EXPR_BINARY &&
			    e->a->op == TS_OP_MUL) || (e->b->kind ==
			    TS_EXPR_BINARY && e->b->op == TS_OP_MUL)))
				ops[TS_FEAT_FLOAT_FMA]++;
			break;
		case TS_OP_MUL:
			ops[fl ? TS_FEAT_FLOAT_MUL : TS_FEAT_INT_ARITH]++;
			break;
		case TS_OP_DIV: case TS_OP_FLOORDIV: case TS_OP_MOD:
			ops[fl ? TS_FEAT_FLOAT_DIV : TS_FEAT_INT_DIV]++;
			break;
		case TS_OP_POW:
			ops[fl ? TS_FEAT_FLOAT_SPECIAL : TS_FEAT_INT_ARITH]++;
			break;
		default:
			ops[fl ? TS_FEAT_FLOAT_CMP : TS_FEAT_INT_ARITH]++;
			break;
		}
		break;
	default:
		return;
	}
	count_expr(w, e->a, ops, acc, nacc);
	count_expr(w, e->b, ops, acc, nacc);
	count_expr(w, e->c, ops, acc, nacc);
}

/* Add the loop features of the store at the walk's position, executed
 * "count" times, to "f". */
static void store_loops(const struct walk *w, double count, double *f)
{
	double par = 1, unroll = 1, outer = 1;
	int vec_width = 0;

	for (int l = 0; l < w->depth; l++) {
		double e = (double)extent_at(w, l);
		switch (w->loops[l]->loop) {
		case TS_LOOP_PARALLEL:
			f[TS_FEAT_PAR_LOOPS]++;
			par *= e;
			break;
		case TS_LOOP_VECTORIZED:
			f[TS_FEAT_VEC_LOOPS]++;
			vec_width = (int)e;
			break;
		case TS_LOOP_UNROLLED:
			f[TS_FEAT_UNROLL_LOOPS]++;
			unroll *= e;
			break;
		default:
			break;
		}
		if (l < w->depth - 1)
			outer *= e;
	}
	f[TS_FEAT_PAR_EXTENT] += par > 1 ? par : 0;
	f[TS_FEAT_PAR_WORK] += count / par;
	f[TS_FEAT_VEC_WIDTH] += vec_width;
	f[TS_FEAT_UNROLL_EXTENT] += unroll > 1 ? unroll : 0;
	f[TS_FEAT_LOOP_DEPTH] += w->depth;
	f[TS_FEAT_INNER_EXTENT] += w->depth ? extent_at(w, w->depth - 1) : 1;
	f[TS_FEAT_OUTER_EXTENT] += outer;
	f[TS_FEAT_GUARDS] += w->guards;
}

/* Add the memory features of the "n" accesses "acc" of one store,
 * executed "count" times, to "f". */
static void store_memory(const struct walk *w, const struct access *acc,
	int n, double count, double *f)
{
	for (int i = 0; i < n; i++) {
		const struct access *a = &acc[i];
		double bytes = count * ts_dtype_size(a->buf->dtype);
		double uniq = box(w, a, 0, false);
		int64_t s = inner_stride(w, a);
		int r = reuse_loop(w, a);
		f[TS_FEAT_BYTES] += bytes;
		f[TS_FEAT_UNIQUE_BYTES] += uniq;
		f[TS_FEAT_LINES] += box(w, a, 0, true);
		f[TS_FEAT_REUSE] += bytes / uniq;
		for (int j = 0; j < n && r >= 0; j++)
			f[TS_FEAT_REUSE_DIST] += box(w, &acc[j], r + 1, false);
		f[s == 0 ? TS_FEAT_STRIDE0 : s == 1 ? TS_FEAT_STRIDE1 :
			TS_FEAT_STRIDED]++;
		f[TS_FEAT_STRIDE] += s > 0 ? (double)s : 0;
		f[a->scope == TS_SCOPE_LOCAL ? TS_FEAT_LOCAL_BYTES :
			TS_FEAT_ARG_BYTES] += bytes;
	}
}

/* Rate the store "s" at the walk's position into "w". */
static void visit_store(struct walk *w, const ts_stmt *s)
{
	struct access acc[MAX_ACCESSES];
	double ops[TS_FEAT_COUNT] = { 0 };
	double count = 1;
	bool vec = false;
	int n = 0;

	for (int l = 0; l < w->depth; l++) {
		count *= (double)extent_at(w, l);
		vec = vec || w->loops[l]->loop == TS_LOOP_VECTORIZED;
	}
	access_add(w, acc, &n, s->buffer, s->nidx, s->idx);
	count_expr(w, s->value, ops, acc, &n);
	for (int i = TS_FEAT_FLOAT_ADDSUB; i <= TS_FEAT_LOADS; i++) {
		w->f[i] += ops[i] * count;
		if (vec && i < TS_FEAT_LOADS)
			w->f[TS_FEAT_VEC_OPS] += ops[i] * count;
	}
	w->f[TS_FEAT_STORES] += count;
	w->f[TS_FEAT_STORE_STMTS]++;
	store_loops(w, count, w->f);
	store_memory(w, acc, n, count, w->f);
}

/* Walk the statement "s" with the context "w". */
static ts_status visit(ts_ctx *ctx, struct walk *w, const ts_stmt *s)
{
	ts_status st = TS_OK;

	if (!s)
		return TS_OK;
	switch (s->kind) {
	case TS_STMT_FOR:
		if (w->depth >= MAX_DEPTH)
			return ts_ctx_set_error(ctx, "features: loop '%s' is "
				"nested deeper than %d loops", s->var->name,
				MAX_DEPTH);
		w->loops[w->depth++] = s;
		st = visit(ctx, w, s->body);
		w->depth--;
		return st;
	case TS_STMT_BLOCK:
		for (int i = 0; i < s->nstmts && st == TS_OK; i++)
			st = visit(ctx, w, s->stmts[i]);
		return st;
	case TS_STMT_IF:
		w->guards++;
		st = visit(ctx, w, s->body);
		if (st == TS_OK)
			st = visit(ctx, w, s->orelse);
		w->guards--;
		return st;
	case TS_STMT_ALLOC:
		w->f[TS_FEAT_ALLOC_BYTES] += (double)ts_tensor_size(s->buffer) *
			ts_dtype_size(s->buffer->dtype);
		ts_vec_push(&w->allocs, (void *)s);
		st = visit(ctx, w, s->body);
		w->allocs.n--;
		return st;
	case TS_STMT_STORE:
		visit_store(w, s);
		return TS_OK;
	default:
		return TS_OK;
	}
}

ts_status ts_func_features(ts_ctx *ctx, const ts_func *f, int line,
	float *out)
{
	struct walk *w;

	if (!f || !f->body)
		return ts_ctx_set_error(ctx, "features: no lowered function");
	w = ts_new(struct walk);
	w->line = line > 0 ? line : 64;
	if (visit(ctx, w, f->body) < 0)
		return TS_ERROR;
	for (int i = 0; i < TS_FEAT_COUNT; i++)
		out[i] = (float)log2(1.0 + fmax(w->f[i], 0.0));
	return TS_OK;
}
