/* Integer ranges of index expressions: the interval an expression takes
 * when every axis it reads ranges over [0, extent), and whether an
 * expression can be evaluated everywhere on that box (its loads in
 * bounds, no division by a value that may be zero).  The canonical form
 * uses them to drop guards that protect nothing, the LLVM emitter to
 * evaluate the arms of a select without branches. */
#include <config.h>

#include "dsl/internal.h"

/* Return "a" "op" "b" when it cannot overflow, in "r". */
static bool range_add(ts_range a, ts_range b, int sign,
	ts_range *r)
{
	if (sign > 0) {
		if (__builtin_add_overflow(a.lo, b.lo, &r->lo) ||
		    __builtin_add_overflow(a.hi, b.hi, &r->hi))
			return false;
	} else if (__builtin_sub_overflow(a.lo, b.hi, &r->lo) ||
	    __builtin_sub_overflow(a.hi, b.lo, &r->hi)) {
		return false;
	}
	return true;
}

/* Return in "r" the range of "a" times the constant "k". */
static bool range_scale(ts_range a, int64_t k, ts_range *r)
{
	int64_t x, y;

	if (__builtin_mul_overflow(a.lo, k, &x) ||
	    __builtin_mul_overflow(a.hi, k, &y))
		return false;
	r->lo = TS_MIN(x, y);
	r->hi = TS_MAX(x, y);
	return true;
}

/* Floor division of "a" by the positive "d". */
static int64_t floor_div(int64_t a, int64_t d)
{
	return a / d - (a % d != 0 && a < 0);
}

/* Compute in "r" the range of the integer expression "e" when every axis
 * ranges over its extent; false when it cannot be bounded. */
bool ts_expr_range(const ts_expr *e, ts_range *r)
{
	ts_range a, b;

	switch (e->kind) {
	case TS_EXPR_INT:
		r->lo = r->hi = e->ival;
		return true;
	case TS_EXPR_VAR:
		r->lo = 0;
		r->hi = e->axis->extent - 1;
		return e->axis->extent > 0;
	case TS_EXPR_UNARY:
		if (e->op != TS_OP_NEG || !ts_expr_range(e->a, &a))
			return false;
		return range_scale(a, -1, r);
	case TS_EXPR_BINARY:
		break;
	default:
		return false;
	}
	if (!ts_expr_range(e->a, &a) || !ts_expr_range(e->b, &b))
		return false;
	switch (e->op) {
	case TS_OP_ADD: return range_add(a, b, 1, r);
	case TS_OP_SUB: return range_add(a, b, -1, r);
	case TS_OP_MUL:
		if (a.lo == a.hi)
			return range_scale(b, a.lo, r);
		return b.lo == b.hi && range_scale(a, b.lo, r);
	case TS_OP_FLOORDIV:
		if (b.lo != b.hi || b.lo <= 0)
			return false;
		r->lo = floor_div(a.lo, b.lo);
		r->hi = floor_div(a.hi, b.lo);
		return true;
	case TS_OP_MOD:
		if (b.lo != b.hi || b.lo <= 0)
			return false;
		r->lo = 0;
		r->hi = b.lo - 1;
		return true;
	case TS_OP_MIN:
		r->lo = TS_MIN(a.lo, b.lo);
		r->hi = TS_MIN(a.hi, b.hi);
		return true;
	case TS_OP_MAX:
		r->lo = TS_MAX(a.lo, b.lo);
		r->hi = TS_MAX(a.hi, b.hi);
		return true;
	default:
		return false;
	}
}

/* Whether "e" can be evaluated everywhere on the box of its axes: every
 * load provably in bounds, no integer division by a value that may be
 * zero. */
bool ts_expr_safe_everywhere(const ts_expr *e)
{
	ts_range r;

	if (!e)
		return true;
	switch (e->kind) {
	case TS_EXPR_LOAD:
		for (int i = 0; i < e->nargs; i++)
			if (!ts_expr_range(e->args[i], &r) || r.lo < 0 ||
			    r.hi >= e->tensor->shape[i] ||
			    !ts_expr_safe_everywhere(e->args[i]))
				return false;
		return true;
	case TS_EXPR_BINARY:
		if ((e->op == TS_OP_FLOORDIV || e->op == TS_OP_MOD) &&
		    ts_dtype_is_int(e->dtype) &&
		    (!ts_expr_range(e->b, &r) || (r.lo <= 0 && r.hi >= 0)))
			return false;
		break;
	default:
		break;
	}
	return ts_expr_safe_everywhere(e->a) && ts_expr_safe_everywhere(e->b) &&
		ts_expr_safe_everywhere(e->c);
}

