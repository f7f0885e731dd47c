/* Index expressions and select conditions as isl objects on the instance
 * space of a stage.  An expression that is not (piecewise) affine in the
 * axes, such as a load used as an index or a product of two axes, gives
 * NULL: the caller over-approximates. */
#include <config.h>

#include "dsl/ir.h"
#include "analysis/internal.h"

/* Return the constant "v" as a function on the instances of "m". */
static __isl_give isl_pw_aff *affine_cst(struct ts_stage_model *m, int64_t v)
{
	isl_local_space *ls = isl_local_space_from_space(
		isl_space_copy(m->space));

	return isl_pw_aff_from_aff(isl_aff_val_on_domain(ls,
		isl_val_int_from_si(m->ictx, v)));
}

/* Return the axis "axis" as a function on the instances of "m". */
static __isl_give isl_pw_aff *affine_var(struct ts_stage_model *m,
	const ts_axis *axis)
{
	int pos = ts_axis_pos(m->stage, axis);
	isl_local_space *ls;

	if (pos < 0)
		return NULL;
	ls = isl_local_space_from_space(isl_space_copy(m->space));
	return isl_pw_aff_from_aff(isl_aff_var_on_domain(ls, isl_dim_set, pos));
}

/* Return the positive integer constant "e" as an isl value, or NULL. */
static __isl_give isl_val *positive_cst(struct ts_stage_model *m, const ts_expr *e)
{
	if (e->kind != TS_EXPR_INT || e->ival <= 0)
		return NULL;
	return isl_val_int_from_si(m->ictx, e->ival);
}

/* Return "a" "op" "e->b" where "e->b" must be a positive constant
 * (floor division, modulo); take "a". */
static __isl_give isl_pw_aff *affine_by_cst(struct ts_stage_model *m,
	const ts_expr *e, __isl_take isl_pw_aff *a)
{
	isl_val *d = positive_cst(m, e->b);

	if (!a || !d) {
		isl_pw_aff_free(a);
		isl_val_free(d);
		return NULL;
	}
	if (e->op == TS_OP_MOD)
		return isl_pw_aff_mod_val(a, d);
	return isl_pw_aff_floor(isl_pw_aff_scale_down_val(a, d));
}

/* Return "a" * "b" when one factor is constant; take both. */
static __isl_give isl_pw_aff *affine_mul(__isl_take isl_pw_aff *a,
	__isl_take isl_pw_aff *b)
{
	if (a && b && (isl_pw_aff_is_cst(a) == isl_bool_true ||
	    isl_pw_aff_is_cst(b) == isl_bool_true))
		return isl_pw_aff_mul(a, b);
	isl_pw_aff_free(a);
	isl_pw_aff_free(b);
	return NULL;
}

/* Return the binary expression "e" as a piecewise affine function. */
static __isl_give isl_pw_aff *affine_binary(struct ts_stage_model *m,
	const ts_expr *e)
{
	isl_pw_aff *a = ts_affine_of(m, e->a), *b;

	if (e->op == TS_OP_FLOORDIV || e->op == TS_OP_MOD)
		return affine_by_cst(m, e, a);
	b = ts_affine_of(m, e->b);
	if (!a || !b) {
		isl_pw_aff_free(a);
		isl_pw_aff_free(b);
		return NULL;
	}
	switch (e->op) {
	case TS_OP_ADD: return isl_pw_aff_add(a, b);
	case TS_OP_SUB: return isl_pw_aff_sub(a, b);
	case TS_OP_MUL: return affine_mul(a, b);
	case TS_OP_MIN: return isl_pw_aff_min(a, b);
	case TS_OP_MAX: return isl_pw_aff_max(a, b);
	default:
		isl_pw_aff_free(a);
		isl_pw_aff_free(b);
		return NULL;
	}
}

/* Return the select "e" (affine condition, affine branches) as a
 * piecewise affine function. */
static __isl_give isl_pw_aff *affine_select(struct ts_stage_model *m,
	const ts_expr *e)
{
	isl_set *c = ts_affine_cond(m, e->a);
	isl_pw_aff *a = c ? ts_affine_of(m, e->b) : NULL;
	isl_pw_aff *b = a ? ts_affine_of(m, e->c) : NULL;

	if (!b) {
		isl_set_free(c);
		isl_pw_aff_free(a);
		return NULL;
	}
	a = isl_pw_aff_intersect_domain(a, isl_set_copy(c));
	b = isl_pw_aff_subtract_domain(b, c);
	return isl_pw_aff_union_add(a, b);
}

/* Return the integer expression "e" as a piecewise affine function on the
 * instances of "m", or NULL when it is not affine. */
__isl_give isl_pw_aff *ts_affine_of(struct ts_stage_model *m, const ts_expr *e)
{
	/* Unsigned arithmetic wraps below zero: not affine over Z. */
	if (!e || !ts_dtype_is_int(e->dtype) || !ts_dtype_is_signed(e->dtype))
		return NULL;
	switch (e->kind) {
	case TS_EXPR_INT:
		return affine_cst(m, e->ival);
	case TS_EXPR_VAR:
		return affine_var(m, e->axis);
	case TS_EXPR_CAST:
		return ts_affine_of(m, e->a);
	case TS_EXPR_UNARY:
		if (e->op != TS_OP_NEG)
			return NULL;
		return isl_pw_aff_neg(ts_affine_of(m, e->a));
	case TS_EXPR_BINARY:
		return affine_binary(m, e);
	case TS_EXPR_SELECT:
		return affine_select(m, e);
	default:
		return NULL;
	}
}

/* Return the comparison "e" of two affine integer expressions as a set. */
static __isl_give isl_set *affine_compare(struct ts_stage_model *m,
	const ts_expr *e)
{
	isl_pw_aff *a = ts_affine_of(m, e->a);
	isl_pw_aff *b = a ? ts_affine_of(m, e->b) : NULL;

	if (!b) {
		isl_pw_aff_free(a);
		return NULL;
	}
	switch (e->op) {
	case TS_OP_LT: return isl_pw_aff_lt_set(a, b);
	case TS_OP_LE: return isl_pw_aff_le_set(a, b);
	case TS_OP_GT: return isl_pw_aff_gt_set(a, b);
	case TS_OP_GE: return isl_pw_aff_ge_set(a, b);
	case TS_OP_EQ: return isl_pw_aff_eq_set(a, b);
	default: return isl_pw_aff_ne_set(a, b);
	}
}

/* Return "e->a" "op" "e->b" for the logical "op" of "e". */
static __isl_give isl_set *affine_logic(struct ts_stage_model *m, const ts_expr *e)
{
	isl_set *a = ts_affine_cond(m, e->a);
	isl_set *b = a ? ts_affine_cond(m, e->b) : NULL;

	if (!b) {
		isl_set_free(a);
		return NULL;
	}
	if (e->op == TS_OP_AND)
		return isl_set_intersect(a, b);
	return isl_set_union(a, b);
}

/* Return the bool expression "e" as the set of instances where it holds,
 * or NULL when it is not an affine condition on the axes. */
__isl_give isl_set *ts_affine_cond(struct ts_stage_model *m, const ts_expr *e)
{
	if (!e || e->dtype != TS_BOOL)
		return NULL;
	if (e->kind == TS_EXPR_UNARY && e->op == TS_OP_NOT)
		return isl_set_complement(ts_affine_cond(m, e->a));
	if (e->kind != TS_EXPR_BINARY)
		return NULL;
	if (e->op == TS_OP_AND || e->op == TS_OP_OR)
		return affine_logic(m, e);
	if (ts_op_is_comparison(e->op) && e->a->dtype != TS_BOOL)
		return affine_compare(m, e);
	return NULL;
}
