/* Index expressions of the lowering: affine forms, their simplification
 * and bounds. */
#include <config.h>

#include "dsl/ir.h"
#include "backends/lower_internal.h"

ts_expr *ts_lower_int(ts_ctx *ctx, int64_t v)
{
	ts_expr *e = ts_new(ts_expr);

	e->kind = TS_EXPR_INT;
	e->dtype = TS_I64;
	e->ival = v;
	e->fval = (double)v;
	return e;
}

ts_expr *ts_lower_load(ts_tensor *buf, int n, ts_expr *const *idx)
{
	ts_expr *e = ts_new(ts_expr);

	e->kind = TS_EXPR_LOAD;
	e->dtype = buf->dtype;
	e->tensor = buf;
	e->nargs = n;
	e->args = ts_new_array(ts_expr *, n ? n : 1);
	for (int i = 0; i < n; i++)
		e->args[i] = idx[i];
	return e;
}

ts_aff ts_aff_const(int64_t c)
{
	ts_aff a = { .ok = true, .cst = c };

	return a;
}

/* Add "k" * "atom" to "a". */
static void aff_add_term(ts_aff *a, ts_expr *atom, int64_t k)
{
	if (!k)
		return;
	for (int i = 0; i < a->n; i++)
		if (ts_expr_equal(a->atom[i], atom)) {
			a->coef[i] += k;
			if (!a->coef[i]) {
				a->n--;
				memmove(a->atom + i, a->atom + i + 1,
					sizeof(a->atom[0]) * (a->n - i));
				memmove(a->coef + i, a->coef + i + 1,
					sizeof(a->coef[0]) * (a->n - i));
			}
			return;
		}
	if (a->n == TS_AFF_MAX) {
		a->ok = false;
		return;
	}
	a->atom[a->n] = atom;
	a->coef[a->n++] = k;
}

ts_aff ts_aff_add(ts_aff a, const ts_aff *b, int64_t k)
{
	a.ok = a.ok && b->ok;
	a.cst += k * b->cst;
	for (int i = 0; i < b->n; i++)
		aff_add_term(&a, b->atom[i], k * b->coef[i]);
	return a;
}

/* Split "a" into "q" "d" + "r": "q" the terms whose coefficients "d"
 * divides (divided by it) with the floor of the constant, "r" the rest.
 * False when the range of "r" is unknown or leaves [0, "d"). */
static bool aff_split(const ts_aff *a, int64_t d, ts_aff *q, ts_aff *r)
{
	int64_t lo, hi, qc = a->cst / d - (a->cst % d < 0);

	*q = ts_aff_const(qc);
	*r = ts_aff_const(a->cst - qc * d);
	for (int i = 0; i < a->n; i++) {
		ts_aff t = ts_aff_const(0);
		bool whole = a->coef[i] % d == 0;
		t.n = 1;
		t.atom[0] = a->atom[i];
		t.coef[0] = whole ? a->coef[i] / d : a->coef[i];
		if (whole)
			*q = ts_aff_add(*q, &t, 1);
		else
			*r = ts_aff_add(*r, &t, 1);
	}
	return q->ok && r->ok && ts_aff_bounds(r, &lo, &hi) && lo >= 0 &&
		hi < d;
}

/* Rewrite "n" // "d" (when "div") or "n" % "d" for a constant "d" > 0
 * by the ranges of the loop variables in "n": the terms of "n" whose
 * coefficients are multiples of "d" leave the remainder alone, so when
 * the other terms stay within [0, "d"), (q d + r) // d = q and
 * (q d + r) % d = r.  This turns the index of a blocked layout read in
 * split loops, k // 32 with k = 32 k.o + k.i, into k.o and k.i: an
 * affine index the emitter can load contiguously.  Failing that, a
 * divisor "d1" of "d" may split it: with n = q d1 + r and r in [0, d1),
 * n // d = q // (d / d1) and n % d = (q % (d / d1)) d1 + r (channels in
 * blocks of 8 read from weights blocked by 16).  NULL when no divisor
 * does. */
static ts_expr *div_by_range(ts_ctx *ctx, ts_expr *n, int64_t d, bool div)
{
	ts_aff a = ts_aff_of_expr(ctx, n), q, r;
	ts_expr *qe, *m;

	if (!a.ok)
		return NULL;
	if (aff_split(&a, d, &q, &r))
		return ts_aff_to_expr(ctx, div ? &q : &r);
	for (int64_t d1 = d / 2; d1 > 1; d1--) {
		if (d % d1 || !aff_split(&a, d1, &q, &r))
			continue;
		qe = ts_aff_to_expr(ctx, &q);
		m = ts_lower_int(ctx, d / d1);
		if (div)
			return ts_floordiv(ctx, qe, m);
		return ts_add(ctx, ts_mul(ctx, ts_mod(ctx, qe, m),
			ts_lower_int(ctx, d1)), ts_aff_to_expr(ctx, &r));
	}
	return NULL;
}

/* Return "e" with its operands simplified, for use as an atom. */
static ts_expr *simplify_atom(ts_ctx *ctx, ts_expr *e)
{
	ts_expr *c, *s;

	if (e->kind != TS_EXPR_BINARY || !ts_dtype_is_int(e->dtype))
		return e;
	c = ts_new(ts_expr);
	*c = *e;
	c->a = ts_index_simplify(ctx, e->a);
	c->b = ts_index_simplify(ctx, e->b);
	if (c->a->kind == TS_EXPR_INT && c->b->kind == TS_EXPR_INT &&
	    c->b->ival > 0) {
		int64_t x = c->a->ival, y = c->b->ival, q = x / y - (x % y < 0);
		if (e->op == TS_OP_FLOORDIV)
			return ts_lower_int(ctx, q);
		if (e->op == TS_OP_MOD)
			return ts_lower_int(ctx, x - q * y);
	}
	if ((e->op == TS_OP_FLOORDIV || e->op == TS_OP_MOD) &&
	    c->b->kind == TS_EXPR_INT && c->b->ival > 0 &&
	    c->a->dtype == TS_I64 &&
	    (s = div_by_range(ctx, c->a, c->b->ival,
		e->op == TS_OP_FLOORDIV)))
		return s;
	return c;
}

ts_aff ts_aff_of_expr(ts_ctx *ctx, ts_expr *e)
{
	ts_aff a = ts_aff_const(0), b;

	if (e->kind == TS_EXPR_INT)
		return ts_aff_const(e->ival);
	if (e->kind == TS_EXPR_UNARY && e->op == TS_OP_NEG &&
	    ts_dtype_is_int(e->dtype)) {
		b = ts_aff_of_expr(ctx, e->a);
		return ts_aff_add(a, &b, -1);
	}
	if (e->kind == TS_EXPR_BINARY && e->dtype == TS_I64 &&
	    (e->op == TS_OP_ADD || e->op == TS_OP_SUB)) {
		a = ts_aff_of_expr(ctx, e->a);
		b = ts_aff_of_expr(ctx, e->b);
		return ts_aff_add(a, &b, e->op == TS_OP_ADD ? 1 : -1);
	}
	if (e->kind == TS_EXPR_BINARY && e->dtype == TS_I64 &&
	    e->op == TS_OP_MUL) {
		a = ts_aff_of_expr(ctx, e->a);
		b = ts_aff_of_expr(ctx, e->b);
		if (!a.n)
			return ts_aff_add(ts_aff_const(0), &b, a.cst);
		if (!b.n)
			return ts_aff_add(ts_aff_const(0), &a, b.cst);
	}
	aff_add_term(&a, simplify_atom(ctx, e), 1);
	return a;
}

/* "atom" as an i64 expression. */
static ts_expr *atom_i64(ts_ctx *ctx, ts_expr *atom)
{
	return atom->dtype == TS_I64 ? atom : ts_cast(ctx, TS_I64, atom);
}

ts_expr *ts_aff_to_expr(ts_ctx *ctx, const ts_aff *a)
{
	ts_expr *e = NULL, *t;

	for (int i = 0; i < a->n; i++) {
		int64_t k = a->coef[i];
		t = atom_i64(ctx, a->atom[i]);
		if (k != 1 && k != -1)
			t = ts_mul(ctx, t, ts_lower_int(ctx, k < 0 && e ? -k : k));
		if (!e)
			e = k == -1 ? ts_unary(ctx, TS_OP_NEG, t) : t;
		else
			e = k < 0 ? ts_sub(ctx, e, t) : ts_add(ctx, e, t);
	}
	if (!e)
		return ts_lower_int(ctx, a->cst);
	if (a->cst > 0)
		e = ts_add(ctx, e, ts_lower_int(ctx, a->cst));
	else if (a->cst < 0)
		e = ts_sub(ctx, e, ts_lower_int(ctx, -a->cst));
	return e;
}

ts_expr *ts_index_simplify(ts_ctx *ctx, ts_expr *e)
{
	ts_aff a;

	if (!e || !ts_dtype_is_int(e->dtype))
		return e;
	if (e->dtype != TS_I64)
		e = ts_cast(ctx, TS_I64, simplify_atom(ctx, e));
	a = ts_aff_of_expr(ctx, e);
	return a.ok ? ts_aff_to_expr(ctx, &a) : e;
}

bool ts_aff_bounds(const ts_aff *a, int64_t *lo, int64_t *hi)
{
	*lo = *hi = a->cst;
	for (int i = 0; i < a->n; i++) {
		int64_t m;
		if (a->atom[i]->kind != TS_EXPR_VAR)
			return false;
		m = a->coef[i] * (a->atom[i]->axis->extent - 1);
		if (m < 0)
			*lo += m;
		else
			*hi += m;
	}
	return a->ok;
}
