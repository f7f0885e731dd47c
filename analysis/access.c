/* Per-access facts: reuse along each spatial axis, strides, the
 * contiguous axis, injectivity, coverage and distinct elements. */
#include <config.h>

#include "dsl/ir.h"
#include "analysis/internal.h"

/* Return the relation x -> y of "m" with y equal to x on every axis but
 * "a", and y[a] > x[a]. */
static __isl_give isl_map *step_along(struct ts_stage_model *m, int a)
{
	isl_map *map = isl_map_universe(isl_space_map_from_set(
		isl_space_copy(m->space)));

	for (int b = 0; b < m->naxes; b++)
		if (b != a)
			map = isl_map_equate(map, isl_dim_in, b, isl_dim_out, b);
	return isl_map_order_lt(map, isl_dim_in, a, isl_dim_out, a);
}

/* Return whether two instances of "rel" that differ only along axis "a"
 * touch the same element. */
static bool reuse_along(struct ts_stage_model *m, __isl_keep isl_map *rel, int a)
{
	isl_map *same = isl_map_apply_range(isl_map_copy(rel),
		isl_map_reverse(isl_map_copy(rel)));
	isl_bool empty;

	same = isl_map_intersect(same, step_along(m, a));
	empty = isl_map_is_empty(same);
	isl_map_free(same);
	return empty == isl_bool_false;
}

/* Return whether an integer division that "aff" uses depends on axis
 * "a" (then a unit step of "a" does not move "aff" by a constant). */
static bool div_uses_axis(__isl_keep isl_aff *aff, int a)
{
	isl_size n = isl_aff_dim(aff, isl_dim_div);
	bool uses = n < 0;

	for (int i = 0; !uses && i < n; i++) {
		isl_val *c = isl_aff_get_coefficient_val(aff, isl_dim_div, i);
		isl_aff *div;
		if (c && isl_val_is_zero(c) == isl_bool_true) {
			isl_val_free(c);
			continue;
		}
		isl_val_free(c);
		div = isl_aff_get_div(aff, i);
		uses = !div || isl_aff_involves_dims(div, isl_dim_in, a, 1) !=
			isl_bool_false;
		isl_aff_free(div);
	}
	return uses;
}

/* Return the coefficient of axis "a" in "pa" (an affine function, whose
 * integer divisions, if any, do not depend on "a": a floor division or
 * remainder over other axes leaves the step of "a" constant), or
 * TS_STRIDE_UNKNOWN. */
static int64_t coef_of(__isl_keep isl_pw_aff *pa, int a)
{
	isl_aff *aff;
	isl_val *v;
	int64_t r = TS_STRIDE_UNKNOWN;

	if (!pa || isl_pw_aff_isa_aff(pa) != isl_bool_true)
		return r;
	aff = isl_pw_aff_as_aff(isl_pw_aff_copy(pa));
	if (aff && !div_uses_axis(aff, a)) {
		v = isl_aff_get_coefficient_val(aff, isl_dim_in, a);
		if (v && isl_val_is_int(v) == isl_bool_true)
			r = isl_val_get_num_si(v);
		isl_val_free(v);
	}
	isl_aff_free(aff);
	return r;
}

/* Return whether the expression "e" mentions the axis "axis". */
static bool mentions(const ts_expr *e, const ts_axis *axis)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_VAR)
		return e->axis == axis;
	if (e->kind == TS_EXPR_LOAD) {
		for (int d = 0; d < e->nargs; d++)
			if (mentions(e->args[d], axis))
				return true;
		return false;
	}
	return mentions(e->a, axis) || mentions(e->b, axis) ||
		mentions(e->c, axis);
}

/* Return the coefficient of axis "a" of "m" in index "d" of "acc": read
 * from isl when the index is affine, 0 when a non-affine index does not
 * mention the axis at all, else TS_STRIDE_UNKNOWN. */
static int64_t index_coef(struct ts_stage_model *m, const struct ts_acc *acc,
	int d, int a)
{
	if (acc->index[d])
		return coef_of(acc->index[d], a);
	if (acc->load && !mentions(acc->load->args[d], ts_stage_axis(m->stage, a)))
		return 0;
	return TS_STRIDE_UNKNOWN;
}

const ts_axis *ts_block_index(const ts_expr *e, int64_t *b, bool *mod)
{
	if (!e || e->kind != TS_EXPR_BINARY || (e->op != TS_OP_FLOORDIV &&
	    e->op != TS_OP_MOD) || e->a->kind != TS_EXPR_VAR ||
	    e->b->kind != TS_EXPR_INT || e->b->ival <= 1)
		return NULL;
	*b = e->b->ival;
	*mod = e->op == TS_OP_MOD;
	return e->a->axis;
}

/* Whether "e" is the axis "axis" // B (when "div") or "axis" % B, for a
 * constant B > 1, into "*b". */
static bool block_index(const ts_expr *e, const ts_axis *axis, bool div,
	int64_t *b)
{
	bool mod;

	return ts_block_index(e, b, &mod) == axis && mod == !div;
}

/* The block B when "acc" reads axis "a" of "m" through a blocked layout,
 * the
 * last index "a" % B and every other index that mentions "a" exactly
 * "a" // B: consecutive values of "a" are then consecutive elements
 * within a block of B, which is the stride that matters inside a vector
 * tile no wider than the block; else 0. */
static int64_t blocked_along(struct ts_stage_model *m, const struct ts_acc *acc,
	int a)
{
	const ts_axis *axis = ts_stage_axis(m->stage, a);
	int64_t b, bd;

	if (!acc->load || acc->ndim < 2 ||
	    !block_index(acc->load->args[acc->ndim - 1], axis, false, &b))
		return 0;
	for (int d = 0; d < acc->ndim - 1; d++)
		if (mentions(acc->load->args[d], axis) &&
		    !(block_index(acc->load->args[d], axis, true, &bd) &&
		      bd == b))
			return 0;
	return b;
}

/* Whether "axis" occurs in "e" only as "axis" // B, one constant B > 1
 * for all ("*b", 0 until the first). */
static bool only_divided(const ts_expr *e, const ts_axis *axis, int64_t *b)
{
	int64_t bd;

	if (!e)
		return true;
	if (block_index(e, axis, true, &bd)) {
		if (*b && *b != bd)
			return false;
		*b = bd;
		return true;
	}
	if (e->kind == TS_EXPR_VAR)
		return e->axis != axis;
	if (e->kind == TS_EXPR_LOAD) {
		for (int d = 0; d < e->nargs; d++)
			if (!only_divided(e->args[d], axis, b))
				return false;
		return true;
	}
	return only_divided(e->a, axis, b) && only_divided(e->b, axis, b) &&
		only_divided(e->c, axis, b);
}

/* The block B when "acc" reads axis "a" of "m" only through "a" // B
 * (a grouped convolution's input channels (k // G) * G + ci): within an
 * aligned block of B, a step of "a" does not move the access; else 0. */
static int64_t grouped_along(struct ts_stage_model *m, const struct ts_acc *acc,
	int a)
{
	const ts_axis *axis = ts_stage_axis(m->stage, a);
	int64_t b = 0;

	if (!acc->load || !mentions(acc->load, axis))
		return 0;
	for (int d = 0; d < acc->ndim; d++)
		if (!only_divided(acc->load->args[d], axis, &b))
			return 0;
	return b;
}

/* Return the stride of axis "a" of "m" in the flattened tensor of "acc":
 * within a block where "a" is read through a blocked layout or only
 * divided by a constant. */
static int64_t stride_of(struct ts_stage_model *m, const struct ts_acc *acc, int a)
{
	int64_t stride = 0, row = 1;

	if (blocked_along(m, acc, a))
		return 1;
	if (grouped_along(m, acc, a))
		return 0;

	for (int d = acc->ndim - 1; d >= 0; d--) {
		int64_t c = index_coef(m, acc, d, a);
		if (c == TS_STRIDE_UNKNOWN)
			return c;
		stride += c * row;
		row *= acc->tensor->shape[d];
	}
	return stride;
}

/* Fill the strides and the contiguous axis of "ai" from "acc". */
static void fill_strides(struct ts_stage_model *m, const struct ts_acc *acc,
	ts_access_info *ai)
{
	ai->contiguous_axis = -1;
	for (int a = 0; a < m->naxes; a++) {
		ai->stride[a] = stride_of(m, acc, a);
		ai->block[a] = blocked_along(m, acc, a);
		if (!ai->block[a])
			ai->block[a] = grouped_along(m, acc, a);
		if (ai->stride[a] == 1)
			ai->contiguous_axis = a;
	}
}

/* Fill the reuse flags of "ai": spatial axes only, affine loads only. */
static void fill_reuse(struct ts_stage_model *m, __isl_keep isl_map *rel,
	const struct ts_acc *acc, ts_access_info *ai)
{
	if (acc->write || !acc->affine)
		return;
	for (int a = 0; a < m->stage->ndim; a++)
		ai->reuse[a] = reuse_along(m, rel, a);
}

/* Fill injectivity, coverage and the distinct elements of "ai". */
static void fill_range(struct ts_stage_model *m, __isl_keep isl_map *rel,
	const struct ts_acc *acc, ts_access_info *ai)
{
	isl_set *range = isl_map_range(isl_map_copy(rel));
	isl_set *box = ts_tensor_box(m, acc->tensor);

	ai->injective = acc->affine &&
		isl_map_is_injective(rel) == isl_bool_true;
	ai->covers = acc->affine &&
		isl_set_is_subset(box, range) == isl_bool_true;
	ai->distinct = ts_set_count(range, &ai->distinct_exact);
	ai->distinct_exact &= acc->affine;
	isl_set_free(range);
	isl_set_free(box);
}

/* Return the write of "s" as text: "C[i, j]". */
static const char *write_text(const ts_stage *s)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "%s[", s->name);
	for (int d = 0; d < s->ndim; d++)
		ts_buf_printf(&b, "%s%s", d ? ", " : "", s->axes[d]->name);
	ts_buf_putc(&b, ']');
	return b.s;
}

/* Fill "ai" with the facts of access "i" of "m". */
void ts_access_fill(struct ts_stage_model *m, int i, ts_access_info *ai)
{
	const struct ts_acc *acc = &m->acc[i];
	isl_map *rel = ts_acc_relation(m, acc);

	ai->tensor = acc->tensor;
	ai->load = acc->load;
	ai->write = acc->write;
	ai->affine = acc->affine;
	ai->guarded = acc->guarded;
	ai->in_reduction = acc->red_mask != 0;
	ai->instances = 1;
	for (int a = 0; a < m->naxes; a++)
		if (a < m->stage->ndim || (acc->red_mask & (1u << a)))
			ai->instances *= ts_stage_axis(m->stage, a)->extent;
	ai->text = acc->load ? ts_expr_to_string(acc->load)
		: write_text(m->stage);
	ai->relation = ts_isl_map_str(rel);
	fill_reuse(m, rel, acc, ai);
	fill_strides(m, acc, ai);
	fill_range(m, rel, acc, ai);
	isl_map_free(rel);
}
