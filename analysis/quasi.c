/* Quasi-affine footprints: an index built from axes, constants, sums,
 * products by constants, and floor divisions and remainders by positive
 * constants of affine arguments, each axis in at most one term.  Since
 * the terms share no axis, the lowest and highest index over a box tile
 * are the sums of each term's lowest and highest value, and a term's
 * range is read off the range of its argument: exact, in closed form,
 * with no isl (footprint.c checks the terms against isl once). */
#include <config.h>

#include "dsl/ir.h"
#include "analysis/internal.h"

/* Floor of "a" / "d" for d > 0. */
static int64_t floor_div(int64_t a, int64_t d)
{
	return a / d - (a % d != 0 && a < 0);
}

/* Add "scale" times the affine expression "e" of the axes of "s" to
 * "t" (its q and r); false when "e" is not affine. */
static bool linear_of(const ts_stage *s, const ts_expr *e, int64_t scale,
	ts_box_term *t)
{
	int a;

	/* Unsigned arithmetic wraps below zero: not affine over Z. */
	if (!ts_dtype_is_signed(e->dtype))
		return false;
	switch (e->kind) {
	case TS_EXPR_INT:
		t->r += scale * e->ival;
		return true;
	case TS_EXPR_VAR:
		a = ts_axis_pos(s, e->axis);
		if (a < 0 || a >= TS_MAX_AXES)
			return false;
		t->q[a] += scale;
		return true;
	case TS_EXPR_CAST:
		return ts_dtype_is_int(e->dtype) && linear_of(s, e->a, scale, t);
	case TS_EXPR_UNARY:
		return e->op == TS_OP_NEG && linear_of(s, e->a, -scale, t);
	case TS_EXPR_BINARY:
		if (e->op == TS_OP_ADD || e->op == TS_OP_SUB)
			return linear_of(s, e->a, scale, t) &&
				linear_of(s, e->b, e->op == TS_OP_ADD ?
					scale : -scale, t);
		if (e->op != TS_OP_MUL)
			return false;
		if (e->b->kind == TS_EXPR_INT)
			return linear_of(s, e->a, scale * e->b->ival, t);
		if (e->a->kind == TS_EXPR_INT)
			return linear_of(s, e->b, scale * e->a->ival, t);
		return false;
	default:
		return false;
	}
}

/* Add to "bd" the term "scale" * ("e->a" // or % "e->b"), whose divisor
 * must be a positive constant and whose argument must be affine. */
static bool add_div_term(const ts_stage *s, const ts_expr *e, int64_t scale,
	ts_box_dim *bd)
{
	ts_box_term *t;

	if (e->b->kind != TS_EXPR_INT || e->b->ival <= 0 ||
	    bd->nterms >= TS_BOX_TERMS)
		return false;
	t = &bd->term[bd->nterms++];
	memset(t, 0, sizeof(*t));
	t->coef = scale;
	t->div = e->b->ival;
	t->mod = e->op == TS_OP_MOD;
	return linear_of(s, e->a, 1, t);
}

/* Add "scale" times the index "e" to "bd", its affine part to "lin";
 * false when "e" is not quasi-affine in that form. */
static bool quasi_add(const ts_stage *s, const ts_expr *e, int64_t scale,
	ts_box_dim *bd, ts_box_term *lin)
{
	if (!ts_dtype_is_signed(e->dtype))
		return false;
	if (e->kind == TS_EXPR_CAST && ts_dtype_is_int(e->dtype))
		return quasi_add(s, e->a, scale, bd, lin);
	if (e->kind == TS_EXPR_UNARY && e->op == TS_OP_NEG)
		return quasi_add(s, e->a, -scale, bd, lin);
	if (e->kind != TS_EXPR_BINARY)
		return linear_of(s, e, scale, lin);
	switch (e->op) {
	case TS_OP_ADD:
	case TS_OP_SUB:
		return quasi_add(s, e->a, scale, bd, lin) &&
			quasi_add(s, e->b, e->op == TS_OP_ADD ? scale : -scale,
				bd, lin);
	case TS_OP_MUL:
		if (e->b->kind == TS_EXPR_INT)
			return quasi_add(s, e->a, scale * e->b->ival, bd, lin);
		if (e->a->kind == TS_EXPR_INT)
			return quasi_add(s, e->b, scale * e->a->ival, bd, lin);
		return false;
	case TS_OP_FLOORDIV:
	case TS_OP_MOD:
		return add_div_term(s, e, scale, bd);
	default:
		return false;
	}
}

/* Whether the terms of "bd" share no axis, and every remainder's
 * argument moves by unit steps (then it takes every value between its
 * ends, and a remainder that wraps round takes every value from 0 to
 * div - 1). */
static bool terms_separate(const ts_box_dim *bd)
{
	for (int a = 0; a < TS_MAX_AXES; a++) {
		int users = 0;
		for (int t = 0; t < bd->nterms; t++) {
			int64_t q = bd->term[t].q[a];
			users += q != 0;
			if (bd->term[t].mod && q != 0 && q != 1 && q != -1)
				return false;
		}
		if (users > 1)
			return false;
	}
	return true;
}

bool ts_quasi_of(const ts_stage *s, const ts_expr *e, ts_box_dim *bd)
{
	ts_box_term lin;
	bool any = false;

	memset(bd, 0, sizeof(*bd));
	memset(&lin, 0, sizeof(lin));
	lin.coef = lin.div = 1;
	if (!quasi_add(s, e, 1, bd, &lin))
		return false;
	bd->cst = lin.r;
	lin.r = 0;
	for (int a = 0; a < TS_MAX_AXES; a++)
		any |= lin.q[a] != 0;
	if (any) {
		if (bd->nterms >= TS_BOX_TERMS)
			return false;
		bd->term[bd->nterms++] = lin;
	}
	if (bd->nterms == 0 || !terms_separate(bd))
		return false;
	return true;
}

/* The lowest and highest value of term "t" over the tile "origin",
 * "size", into "*lo" and "*hi". */
static void term_range(const ts_box_term *t, const int64_t *origin,
	const int64_t *size, int64_t *lo, int64_t *hi)
{
	int64_t vmin = t->r, vmax = t->r, a, b, fl, fh;

	for (int x = 0; x < TS_MAX_AXES; x++) {
		int64_t q = t->q[x];
		if (q > 0) {
			vmin += q * origin[x];
			vmax += q * (origin[x] + size[x] - 1);
		} else if (q < 0) {
			vmin += q * (origin[x] + size[x] - 1);
			vmax += q * origin[x];
		}
	}
	fl = floor_div(vmin, t->div);
	fh = floor_div(vmax, t->div);
	if (!t->mod) {
		a = fl;
		b = fh;
	} else if (fl == fh) {
		a = vmin - fl * t->div;
		b = vmax - fh * t->div;
	} else {
		a = 0;
		b = t->div - 1;
	}
	*lo = t->coef >= 0 ? t->coef * a : t->coef * b;
	*hi = t->coef >= 0 ? t->coef * b : t->coef * a;
}

void ts_quasi_eval(const ts_box_dim *bd, const int64_t *origin,
	const int64_t *size, int64_t *lo, int64_t *extent)
{
	int64_t l = bd->cst, h = bd->cst;

	for (int t = 0; t < bd->nterms; t++) {
		int64_t tl, th;
		term_range(&bd->term[t], origin, size, &tl, &th);
		l += tl;
		h += th;
	}
	*lo = l;
	*extent = h - l + 1;
}

bool ts_quasi_equal(const ts_box_dim *a, const ts_box_dim *b)
{
	if (a->cst != b->cst || a->nterms != b->nterms)
		return false;
	for (int t = 0; t < a->nterms; t++) {
		const ts_box_term *x = &a->term[t], *y = &b->term[t];
		if (x->coef != y->coef || x->r != y->r || x->div != y->div ||
		    x->mod != y->mod || memcmp(x->q, y->q, sizeof(x->q)))
			return false;
	}
	return true;
}

int64_t ts_box_term_span(const ts_box_term *t, const int64_t *size,
	const int64_t *align)
{
	int64_t c = t->coef < 0 ? -t->coef : t->coef, width = 0;
	int64_t g = t->div, r0 = t->r, res;

	if (t->mod)
		return c * (t->div - 1);
	for (int a = 0; a < TS_MAX_AXES; a++) {
		int64_t q = t->q[a];
		if (!q)
			continue;
		width += (q < 0 ? -q : q) * (size[a] - 1);
		if (q < 0)
			r0 += q * (size[a] - 1);
		g = ts_gcd64(g, q * align[a]);
	}
	/* The lowest argument is r0 modulo g, so at most div - g + that
	 * modulo div. */
	res = t->div - g + ((r0 % g) + g) % g;
	return c * ((res + width) / t->div);
}
