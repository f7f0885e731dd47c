/* Loops split where a select's condition changes: a loop-IR pass before
 * the CPU code generator.
 *
 * A concatenation, a padding or a window that reads inside its input's
 * bounds only is written with a select on an index:
 *
 *	for j in 0..768:
 *	  C[i, j] = select(j < 256, A[i, j], B[i, j - 256])
 *
 * Every iteration tests the condition, and both loads are guarded, so
 * the loop runs one scalar at a time.  The condition changes value at
 * j = 256 only: the pass splits the loop there,
 *
 *	for j in 0..256:   C[i, j] = A[i, j]
 *	for j' in 0..512:  C[i, j' + 256] = B[i, j']
 *
 * and each piece is a plain copy that LLVM vectorises.  In general, a
 * comparison of affine indices, d < 0 with d = a v + r, is true for every
 * value of the other variables in r (each in its loop's range) on one
 * side of a breakpoint of v and false on the other side of another; the
 * loop over v is split at the breakpoints inside its range, and in each
 * piece the comparisons that no longer change are folded to constants
 * (a piece of one iteration becomes its body with v a constant).  Inner
 * loops are then split within each piece.
 *
 * Only serial loops are split (a parallel loop keeps its iterations, a
 * vectorised or unrolled one is a unit of the code generator, where LLVM
 * folds constant conditions itself), only when the body is small (it is
 * copied once per piece) and allocates nothing (each copy would take its
 * own stack).  Conditions of guards (if statements) are folded where
 * they become constant but do not split loops: how a split tail runs is
 * a decision of the schedule.
 *
 * Requires: lowered loop IR.  Produces: the same program with fewer
 * selects.
 */
#include <config.h>

#include <tessel/lower.h>

#include "dsl/ir.h"
#include "backends/ir.h"
#include "backends/lower_internal.h"
#include "support/support.h"

/* A body is copied once per piece: at most this many expression and
 * statement nodes, and at most this many pieces. */
#define MAX_BODY 1500
#define MAX_PIECES 6

/* Floor and ceiling of "a" / "b" for "b" > 0. */
static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && a < 0);
}

static int64_t ceil_div(int64_t a, int64_t b)
{
	return -floor_div(-a, b);
}

/* Nodes of "e". */
static int expr_size(const ts_expr *e)
{
	int n;

	if (!e)
		return 0;
	n = 1 + expr_size(e->a) + expr_size(e->b) + expr_size(e->c);
	for (int i = 0; i < e->nargs; i++)
		n += expr_size(e->args[i]);
	return n;
}

/* Nodes of "s", or MAX_BODY + 1 when it allocates. */
static int stmt_size(const ts_stmt *s)
{
	int n = 1;

	if (!s)
		return 0;
	if (s->kind == TS_STMT_ALLOC || s->kind == TS_STMT_SYNC)
		return MAX_BODY + 1;
	for (int i = 0; i < s->nstmts; i++)
		n += stmt_size(s->stmts[i]);
	for (int i = 0; i < s->nidx; i++)
		n += expr_size(s->idx[i]);
	n += expr_size(s->cond) + expr_size(s->value);
	return n + stmt_size(s->body) + stmt_size(s->orelse);
}

/* The comparison "c" as d < 0 with "*d" affine: false when it is not a
 * comparison of affine integer indices. */
static bool as_negative(ts_ctx *ctx, const ts_expr *c, ts_aff *d)
{
	ts_aff l, r;
	int64_t k = 0;
	bool swap;

	if (c->kind != TS_EXPR_BINARY || !ts_dtype_is_int(c->a->dtype) ||
	    !ts_dtype_is_int(c->b->dtype))
		return false;
	switch (c->op) {
	case TS_OP_LT: swap = false; break;
	case TS_OP_LE: swap = false; k = -1; break;
	case TS_OP_GT: swap = true; break;
	case TS_OP_GE: swap = true; k = -1; break;
	default: return false;
	}
	l = ts_aff_of_expr(ctx, ts_index_simplify(ctx, c->a));
	r = ts_aff_of_expr(ctx, ts_index_simplify(ctx, c->b));
	*d = swap ? ts_aff_add(r, &l, -1) : ts_aff_add(l, &r, -1);
	d->cst += k;
	return d->ok;
}

/* The coefficient of "v" in "d", removed from "d". */
static int64_t take_var(ts_aff *d, const ts_axis *v)
{
	for (int i = 0; i < d->n; i++) {
		int64_t k = d->coef[i];
		if (d->atom[i]->kind != TS_EXPR_VAR || d->atom[i]->axis != v)
			continue;
		d->atom[i] = d->atom[d->n - 1];
		d->coef[i] = d->coef[--d->n];
		return k;
	}
	return 0;
}

/* What a splitting loop collects: its variable and the breakpoints. */
struct cuts {
	const ts_axis *v;
	int n;
	int64_t at[2 * MAX_PIECES];
	bool over;		/* more than fit */
};

/* Add "p" to "c" when it lies inside the loop's range. */
static void add_cut(struct cuts *c, int64_t p)
{
	if (p <= 0 || p >= c->v->extent)
		return;
	for (int i = 0; i < c->n; i++)
		if (c->at[i] == p)
			return;
	if (c->n == MAX_PIECES - 1) {
		c->over = true;
		return;
	}
	c->at[c->n++] = p;
}

/* The breakpoints of the comparison "cmp" over c->v: with d = a v + r
 * and r in [lo, hi], d < 0 holds for every r when v < ceil(-hi / a) and
 * for none when v >= ceil(-lo / a) (a > 0); mirrored for a < 0. */
static void comparison_cuts(ts_ctx *ctx, const ts_expr *cmp, struct cuts *c)
{
	ts_aff d;
	int64_t a, lo, hi;

	if (!as_negative(ctx, cmp, &d) || !(a = take_var(&d, c->v)) ||
	    !ts_aff_bounds(&d, &lo, &hi))
		return;
	if (a > 0) {
		add_cut(c, ceil_div(-hi, a));
		add_cut(c, ceil_div(-lo, a));
	} else {
		add_cut(c, floor_div(lo, -a) + 1);
		add_cut(c, floor_div(hi, -a) + 1);
	}
}

/* The breakpoints of the comparisons in the condition "e". */
static void cond_cuts(ts_ctx *ctx, const ts_expr *e, struct cuts *c)
{
	if (e->kind == TS_EXPR_BINARY &&
	    (e->op == TS_OP_AND || e->op == TS_OP_OR)) {
		cond_cuts(ctx, e->a, c);
		cond_cuts(ctx, e->b, c);
	} else if (e->kind == TS_EXPR_UNARY && e->op == TS_OP_NOT) {
		cond_cuts(ctx, e->a, c);
	} else {
		comparison_cuts(ctx, e, c);
	}
}

/* The breakpoints of the select conditions in "e". */
static void expr_cuts(ts_ctx *ctx, const ts_expr *e, struct cuts *c)
{
	if (!e)
		return;
	if (e->kind == TS_EXPR_SELECT)
		cond_cuts(ctx, e->a, c);
	for (int i = 0; i < e->nargs; i++)
		expr_cuts(ctx, e->args[i], c);
	expr_cuts(ctx, e->a, c);
	expr_cuts(ctx, e->b, c);
	expr_cuts(ctx, e->c, c);
}

/* The breakpoints of the select conditions stored under "s". */
static void stmt_cuts(ts_ctx *ctx, const ts_stmt *s, struct cuts *c)
{
	if (!s)
		return;
	for (int i = 0; i < s->nstmts; i++)
		stmt_cuts(ctx, s->stmts[i], c);
	for (int i = 0; i < s->nidx; i++)
		expr_cuts(ctx, s->idx[i], c);
	expr_cuts(ctx, s->value, c);
	stmt_cuts(ctx, s->body, c);
	stmt_cuts(ctx, s->orelse, c);
}

/* The bool constant "v". */
static ts_expr *bool_const(bool v)
{
	ts_expr *e = ts_new(ts_expr);

	e->kind = TS_EXPR_INT;
	e->dtype = TS_BOOL;
	e->ival = v;
	e->fval = v;
	return e;
}

/* Whether "e" is a bool constant, into "*v". */
static bool is_bool_const(const ts_expr *e, bool *v)
{
	if (e->kind != TS_EXPR_INT || e->dtype != TS_BOOL)
		return false;
	*v = e->ival != 0;
	return true;
}

/* "e" with its operands replaced by "a", "b", "c" and its indices by
 * "args", folded where a condition is now constant. */
static ts_expr *rebuild(const ts_expr *e, ts_expr *a, ts_expr *b, ts_expr *c,
	ts_expr **args)
{
	ts_expr *n;
	bool x, y;

	if (e->kind == TS_EXPR_SELECT && is_bool_const(a, &x))
		return x ? b : c;
	if (e->kind == TS_EXPR_UNARY && e->op == TS_OP_NOT &&
	    is_bool_const(a, &x))
		return bool_const(!x);
	if (e->kind == TS_EXPR_BINARY &&
	    (e->op == TS_OP_AND || e->op == TS_OP_OR)) {
		bool and = e->op == TS_OP_AND;
		if (is_bool_const(a, &x))
			return x == and ? b : bool_const(x);
		if (is_bool_const(b, &y))
			return y == and ? a : bool_const(y);
	}
	n = ts_new(ts_expr);
	*n = *e;
	n->a = a;
	n->b = b;
	n->c = c;
	n->args = args;
	return n;
}

/* "e" with "v" replaced by "by" (NULL: kept) and comparisons that every
 * value of their variables decides folded. */
static ts_expr *fold(ts_ctx *ctx, const ts_expr *e, const ts_axis *v,
	ts_expr *by)
{
	ts_expr **args = NULL, *n;
	ts_aff d;
	int64_t lo, hi;

	if (!e)
		return NULL;
	if (e->kind == TS_EXPR_VAR)
		return by && e->axis == v ? by : (ts_expr *)e;
	if (e->nargs) {
		args = ts_new_array(ts_expr *, e->nargs);
		for (int i = 0; i < e->nargs; i++)
			args[i] = ts_index_simplify(ctx, fold(ctx, e->args[i],
				v, by));
	}
	n = rebuild(e, fold(ctx, e->a, v, by), fold(ctx, e->b, v, by),
		fold(ctx, e->c, v, by), args);
	if (as_negative(ctx, n, &d) && ts_aff_bounds(&d, &lo, &hi)) {
		if (hi < 0)
			return bool_const(true);
		if (lo >= 0)
			return bool_const(false);
	}
	return n;
}

static ts_stmt *split(ts_ctx *ctx, const ts_stmt *s, const ts_axis *v,
	ts_expr *by, bool cut);

/* Loop "s", its body "body" with the substitutions of the loops around
 * it made, split at the breakpoints of its selects; NULL when it has
 * none worth taking. */
static ts_stmt *split_loop(ts_ctx *ctx, const ts_stmt *s, ts_stmt *body)
{
	struct cuts c = { .v = s->var };
	ts_stmt *block;
	int size;

	if (s->loop != TS_LOOP_SERIAL ||
	    (size = stmt_size(body)) > MAX_BODY)
		return NULL;
	stmt_cuts(ctx, body, &c);
	if (!c.n || c.over || size * c.n > 4 * MAX_BODY)
		return NULL;
	c.at[c.n++] = s->var->extent;
	for (int i = 1; i < c.n; i++)
		for (int j = i; j > 0 && c.at[j] < c.at[j - 1]; j--) {
			int64_t t = c.at[j];
			c.at[j] = c.at[j - 1];
			c.at[j - 1] = t;
		}
	block = ts_stmt_block(0, NULL);
	for (int64_t i = 0, lo = 0; i < c.n; lo = c.at[i++]) {
		int64_t n = c.at[i] - lo;
		ts_axis *w;
		if (n == 1) {
			ts_stmt_block_append(block, split(ctx, body, s->var,
				ts_lower_int(ctx, lo), true));
			continue;
		}
		w = ts_axis_new(ctx, s->var->name, n);
		ts_stmt_block_append(block, ts_stmt_for(w, s->loop,
			split(ctx, body, s->var, ts_index_simplify(ctx,
			ts_add(ctx, ts_var(ctx, w), ts_lower_int(ctx, lo))),
			true)));
	}
	return block;
}

/* "s" with "v" replaced by "by" (NULL: kept), constant conditions folded
 * and, with "cut", its loops split (outer loops first: an inner loop's
 * breakpoints are those of its piece of the outer one). */
static ts_stmt *split(ts_ctx *ctx, const ts_stmt *s, const ts_axis *v,
	ts_expr *by, bool cut)
{
	ts_stmt *n, *parts;
	bool x;

	if (!s)
		return NULL;
	n = ts_new(ts_stmt);
	*n = *s;
	if (s->kind == TS_STMT_FOR && cut) {
		n->body = split(ctx, s->body, v, by, false);
		if ((parts = split_loop(ctx, s, n->body)))
			return parts;
		n->body = split(ctx, n->body, NULL, NULL, true);
		return n;
	}
	if (s->nstmts) {
		n->stmts = ts_new_array(ts_stmt *, s->nstmts);
		for (int i = 0; i < s->nstmts; i++)
			n->stmts[i] = split(ctx, s->stmts[i], v, by, cut);
	}
	if (s->nidx) {
		n->idx = ts_new_array(ts_expr *, s->nidx);
		for (int i = 0; i < s->nidx; i++)
			n->idx[i] = ts_index_simplify(ctx, fold(ctx, s->idx[i],
				v, by));
	}
	n->value = fold(ctx, s->value, v, by);
	n->cond = fold(ctx, s->cond, v, by);
	n->body = split(ctx, s->body, v, by, cut);
	n->orelse = split(ctx, s->orelse, v, by, cut);
	if (s->kind == TS_STMT_IF && is_bool_const(n->cond, &x))
		return x ? n->body : n->orelse ? n->orelse
			: ts_stmt_block(0, NULL);
	return n;
}

ts_func *ts_func_split_selects(ts_ctx *ctx, const ts_func *f)
{
	ts_func *g = ts_new(ts_func);

	*g = *f;
	g->body = split(ctx, f->body, NULL, NULL, true);
	return g;
}
