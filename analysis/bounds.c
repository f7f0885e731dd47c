/* The bounds check: every access of a stage stays inside its tensor on
 * the instances where its guards hold. */
#include <config.h>

#include "dsl/ir.h"
#include "analysis/internal.h"

/* Append the "n" coordinates of "pt" to "b", as "name = v" pairs named
 * after the axes of "s", or as a plain list when "s" is NULL. */
static void print_point(ts_buf *b, __isl_keep isl_point *pt, int n,
	const ts_stage *s)
{
	for (int i = 0; i < n; i++) {
		int64_t v = ts_isl_val_i64(isl_point_get_coordinate_val(pt,
			isl_dim_set, i));
		if (s)
			ts_buf_printf(b, "%s%s = %lld", i ? ", " : "",
				ts_stage_axis(s, i)->name, (long long)v);
		else
			ts_buf_printf(b, "%s%lld", i ? ", " : "", (long long)v);
	}
}

/* Append the shape of "t" to "b": "4x4". */
static void print_shape(ts_buf *b, const ts_tensor *t)
{
	for (int d = 0; d < t->ndim; d++)
		ts_buf_printf(b, "%s%lld", d ? "x" : "", (long long)t->shape[d]);
}

/* Set the error of "m" for access "a" whose instances in "bad" touch
 * elements outside the tensor; take "bad". */
static ts_status bounds_error(struct ts_stage_model *m, const struct ts_acc *a,
	__isl_take isl_map *bad)
{
	isl_point *inst = isl_set_sample_point(isl_map_domain(
		isl_map_copy(bad)));
	isl_set *one = isl_set_from_point(isl_point_copy(inst));
	isl_point *elem = isl_set_sample_point(isl_set_apply(one, bad));
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "stage '%s': access %s is out of bounds of tensor "
		"'%s' (shape ", m->stage->name, ts_expr_to_string(a->load),
		a->tensor->name);
	print_shape(&b, a->tensor);
	ts_buf_puts(&b, ") at instance ");
	print_point(&b, inst, m->naxes, m->stage);
	ts_buf_puts(&b, ", element [");
	print_point(&b, elem, a->ndim, NULL);
	ts_buf_putc(&b, ']');
	if (a->guard_unknown)
		ts_buf_puts(&b, " (a select condition around it is not "
			"affine, so it cannot guard the access)");
	isl_point_free(inst);
	isl_point_free(elem);
	return ts_ctx_set_error(m->ctx, "%s", b.s);
}

/* Check every load of "m" against the shape of its tensor. */
ts_status ts_model_check_bounds(struct ts_stage_model *m)
{
	for (int i = 0; i < m->nacc; i++) {
		const struct ts_acc *a = &m->acc[i];
		isl_map *bad;
		isl_bool empty;

		if (a->write)
			continue;
		bad = isl_map_subtract_range(ts_acc_relation(m, a),
			ts_tensor_box(m, a->tensor));
		empty = isl_map_is_empty(bad);
		if (empty == isl_bool_false)
			return bounds_error(m, a, bad);
		isl_map_free(bad);
		if (empty < 0)
			return ts_ctx_set_error(m->ctx, "stage '%s': isl could "
				"not check access %s", m->stage->name,
				ts_expr_to_string(a->load));
	}
	return TS_OK;
}

/* Check that every access of "s" stays inside its tensor. */
ts_status ts_stage_check_bounds(ts_ctx *ctx, const ts_stage *s)
{
	struct ts_stage_model *m = ts_stage_model_build(ctx, s);
	ts_status st;

	if (!m)
		return TS_ERROR;
	st = ts_model_check_bounds(m);
	ts_stage_model_free(m);
	return st;
}
