/* The isl model of a stage: its instance set (spatial then reduction axes)
 * and one access relation per load and for the write, each with the affine
 * guard of the select branches around it. */
#include <config.h>

#include <stdlib.h>

#include "dsl/ir.h"
#include "analysis/internal.h"

/* State of the walk that collects the accesses of a stage body. */
struct walk {
	struct ts_stage_model *m;
	isl_set *guard;		/* conjunction of affine conditions around */
	bool guarded;		/* some affine condition is in "guard" */
	bool unknown;		/* some condition around is not affine */
	uint32_t red_mask;	/* positions of the reduction axes bound */
};

/* Return the instance space of "s": a set named after the stage with one
 * dimension per axis, named after the axis. */
static __isl_give isl_space *instance_space(isl_ctx *ictx, const ts_stage *s)
{
	int n = s->ndim + s->nraxes;
	isl_space *space = isl_space_set_alloc(ictx, 0, n);

	space = isl_space_set_tuple_name(space, isl_dim_set, s->name);
	for (int i = 0; i < n; i++)
		space = isl_space_set_dim_name(space, isl_dim_set, i,
			ts_stage_axis(s, i)->name);
	return space;
}

/* Return the box 0 <= x[i] < "extent"[i] in "space". */
static __isl_give isl_set *box_set(__isl_take isl_space *space, int n,
	const int64_t *extent)
{
	isl_set *set = isl_set_universe(space);

	for (int i = 0; i < n; i++) {
		set = isl_set_lower_bound_si(set, isl_dim_set, i, 0);
		set = isl_set_upper_bound_si(set, isl_dim_set, i,
			extent[i] - 1);
	}
	return set;
}

/* Return the instance set of "m": every axis in [0, extent). */
static __isl_give isl_set *instance_domain(struct ts_stage_model *m)
{
	int64_t ext[TS_MAX_AXES];

	for (int i = 0; i < m->naxes; i++)
		ext[i] = ts_stage_axis(m->stage, i)->extent;
	return box_set(isl_space_copy(m->space), m->naxes, ext);
}

/* Return the set of elements of "t": 0 <= x[d] < shape[d]. */
__isl_give isl_set *ts_tensor_box(struct ts_stage_model *m, const ts_tensor *t)
{
	isl_space *space = isl_space_set_alloc(m->ictx, 0, t->ndim);

	space = isl_space_set_tuple_name(space, isl_dim_set, t->name);
	return box_set(space, t->ndim, t->shape);
}

/* Return the map from instances of "m" to one integer in [0, "extent"):
 * the over-approximation of an index that is not affine. */
static __isl_give isl_map *whole_dim(struct ts_stage_model *m, int64_t extent)
{
	isl_space *space = isl_space_map_from_domain_and_range(
		isl_space_copy(m->space), isl_space_set_alloc(m->ictx, 0, 1));
	isl_map *map = isl_map_universe(space);

	map = isl_map_lower_bound_si(map, isl_dim_out, 0, 0);
	return isl_map_upper_bound_si(map, isl_dim_out, 0, extent - 1);
}

/* Build the relation instance -> element of "a" from its indices. */
static void acc_build_raw(struct ts_stage_model *m, struct ts_acc *a)
{
	isl_space *space = isl_space_map_from_domain_and_range(
		isl_space_copy(m->space), isl_space_set_alloc(m->ictx, 0, 0));
	isl_map *map = isl_map_universe(space);

	for (int d = 0; d < a->ndim; d++) {
		isl_map *md = a->index[d]
			? isl_map_from_pw_aff(isl_pw_aff_copy(a->index[d]))
			: whole_dim(m, a->tensor->shape[d]);
		map = isl_map_flat_range_product(map, md);
	}
	a->raw = isl_map_set_tuple_name(map, isl_dim_out, a->tensor->name);
}

/* Append an access to "t" to the model of "w" and return it. */
static struct ts_acc *acc_push(struct walk *w, const ts_tensor *t)
{
	struct ts_stage_model *m = w->m;
	struct ts_acc *a;

	if (m->nacc == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 8;
		m->acc = realloc(m->acc, sizeof(*m->acc) * m->cap);
	}
	a = &m->acc[m->nacc++];
	memset(a, 0, sizeof(*a));
	a->tensor = t;
	a->ndim = t->ndim;
	a->guard = isl_set_copy(w->guard);
	a->guarded = w->guarded;
	a->guard_unknown = w->unknown;
	a->red_mask = w->red_mask;
	a->affine = true;
	return a;
}

/* Record the load "e" as an access of the model of "w". */
static void walk_load(struct walk *w, const ts_expr *e)
{
	struct ts_acc *a = acc_push(w, e->tensor);

	a->load = e;
	for (int d = 0; d < e->nargs; d++) {
		a->index[d] = ts_affine_of(w->m, e->args[d]);
		a->dim_affine[d] = a->index[d] != NULL;
		a->affine &= a->dim_affine[d];
	}
	acc_build_raw(w->m, a);
}

static void walk_expr(struct walk *w, const ts_expr *e);
static void walk_reduce(struct walk *w, const ts_expr *e);

/* Walk "e" under the additional condition "cond" (NULL: not affine). */
static void walk_under(struct walk *w, const ts_expr *e,
	__isl_take isl_set *cond)
{
	struct walk inner = *w;

	if (cond) {
		inner.guard = isl_set_intersect(isl_set_copy(w->guard), cond);
		inner.guarded = true;
	} else {
		inner.guard = isl_set_copy(w->guard);
		inner.unknown = true;
	}
	walk_expr(&inner, e);
	isl_set_free(inner.guard);
}

/* Walk the select "e": each branch is guarded by its condition. */
static void walk_select(struct walk *w, const ts_expr *e)
{
	isl_set *c = ts_affine_cond(w->m, e->a);

	walk_expr(w, e->a);
	walk_under(w, e->b, isl_set_copy(c));
	walk_under(w, e->c, c ? isl_set_complement(c) : NULL);
}

/* Walk "a && b" or "a || b" ("e"): "b" runs only where "a" leaves the
 * result open, so it is guarded by "a" (or by its negation), like the
 * arm of a select. */
static void walk_logic(struct walk *w, const ts_expr *e)
{
	isl_set *c = ts_affine_cond(w->m, e->a);

	walk_expr(w, e->a);
	if (c && e->op == TS_OP_OR)
		c = isl_set_complement(c);
	walk_under(w, e->b, c);
}

/* Walk the reducer "e" with its axes bound. */
static void walk_reduce(struct walk *w, const ts_expr *e)
{
	uint32_t saved = w->red_mask;

	for (int i = 0; i < e->nraxes; i++)
		w->red_mask |= 1u << ts_axis_pos(w->m->stage, e->raxes[i]);
	walk_expr(w, e->a);
	w->red_mask = saved;
}

/* Collect the accesses of "e" into the model of "w". */
static void walk_expr(struct walk *w, const ts_expr *e)
{
	if (!e)
		return;
	switch (e->kind) {
	case TS_EXPR_LOAD:
		walk_load(w, e);
		for (int d = 0; d < e->nargs; d++)
			walk_expr(w, e->args[d]);
		return;
	case TS_EXPR_SELECT:
		walk_select(w, e);
		return;
	case TS_EXPR_REDUCE:
		walk_reduce(w, e);
		return;
	case TS_EXPR_BINARY:
		if (e->op != TS_OP_AND && e->op != TS_OP_OR)
			break;
		walk_logic(w, e);
		return;
	default:
		break;
	}
	walk_expr(w, e->a);
	walk_expr(w, e->b);
	walk_expr(w, e->c);
}

/* Record the write of the stage output: out[spatial axes]. */
static void model_add_write(struct ts_stage_model *m)
{
	struct walk w = { m, isl_set_universe(isl_space_copy(m->space)) };
	const ts_stage *s = m->stage;
	struct ts_acc *a = acc_push(&w, s->out);

	a->write = true;
	for (int d = 0; d < s->ndim; d++) {
		a->index[d] = isl_pw_aff_from_aff(isl_aff_var_on_domain(
			isl_local_space_from_space(isl_space_copy(m->space)),
			isl_dim_set, d));
		a->dim_affine[d] = true;
	}
	acc_build_raw(m, a);
	isl_set_free(w.guard);
}

/* Return whether every isl object of "m" was built. */
static bool model_ok(const struct ts_stage_model *m)
{
	if (!m->space || !m->domain)
		return false;
	for (int i = 0; i < m->nacc; i++)
		if (!m->acc[i].raw || !m->acc[i].guard)
			return false;
	return true;
}

/* Build the isl model of "s"; NULL with an error in "ctx" on failure. */
struct ts_stage_model *ts_stage_model_build(ts_ctx *ctx, const ts_stage *s)
{
	struct ts_stage_model *m;
	struct walk w;

	if (!s || s->ndim + s->nraxes > TS_MAX_AXES) {
		if (s)
			ts_ctx_set_error(ctx, "stage '%s' has %d axes; the "
				"analysis handles at most %d", s->name,
				s->ndim + s->nraxes, TS_MAX_AXES);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	m->ctx = ctx;
	m->ictx = ts_isl_ctx(ctx);
	m->stage = s;
	m->naxes = s->ndim + s->nraxes;
	m->space = instance_space(m->ictx, s);
	m->domain = instance_domain(m);
	w = (struct walk){ m, isl_set_universe(isl_space_copy(m->space)) };
	walk_expr(&w, s->body);
	isl_set_free(w.guard);
	model_add_write(m);
	if (model_ok(m))
		return m;
	ts_ctx_set_error(ctx, "stage '%s': isl could not model the stage",
		s->name);
	ts_stage_model_free(m);
	return NULL;
}

/* Free "m" and every isl object it holds. */
void ts_stage_model_free(struct ts_stage_model *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nacc; i++) {
		isl_map_free(m->acc[i].raw);
		isl_set_free(m->acc[i].guard);
		for (int d = 0; d < m->acc[i].ndim; d++)
			isl_pw_aff_free(m->acc[i].index[d]);
	}
	free(m->acc);
	isl_set_free(m->domain);
	isl_space_free(m->space);
	free(m);
}

/* Return the access relation of "a": instances of the domain of "m" that
 * satisfy the guard of "a", mapped to the elements they touch. */
__isl_give isl_map *ts_acc_relation(struct ts_stage_model *m, const struct ts_acc *a)
{
	isl_set *dom = isl_set_intersect(isl_set_copy(m->domain),
		isl_set_copy(a->guard));

	return isl_map_intersect_domain(isl_map_copy(a->raw), dom);
}
