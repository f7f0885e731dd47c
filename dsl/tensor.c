/* Tensors and stages: placeholders and compute declarations. */
#include <config.h>

#include <ctype.h>

#include "dsl/internal.h"

/* Whether "name" is an identifier: a letter or '_', then letters, digits,
 * '_', and dots each followed by a letter or '_' (the names the canonical
 * form gives the stages it makes, "Y.sum0"). */
static bool is_identifier(const char *name)
{
	if (!name || !(isalpha((unsigned char)*name) || *name == '_'))
		return false;
	for (const char *p = name + 1; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' &&
		    !(*p == '.' && (isalpha((unsigned char)p[1]) ||
		    p[1] == '_')))
			return false;
	return true;
}

int ts_shape_overflow_dim(int ndim, const int64_t *shape, size_t elem)
{
	int64_t n = (int64_t)(elem ? elem : 1);

	for (int i = 0; i < ndim; i++)
		if (__builtin_mul_overflow(n, TS_MAX(shape[i], 1), &n))
			return i;
	return -1;
}

/* Check that the elements of tensor "name" of dtype "t" and shape "shape"
 * ("ndim" extents, none negative) have a size in bytes that fits in 64
 * bits. */
static ts_status check_size(ts_ctx *ctx, const char *name, ts_dtype t,
	int ndim, const int64_t *shape)
{
	int d = ts_shape_overflow_dim(ndim, shape, ts_dtype_size(t));

	if (d < 0)
		return TS_OK;
	return ts_ctx_set_error(ctx, "tensor '%s' is too large: with "
		"dimension %d (extent %lld) its size in bytes overflows 64 "
		"bits", name, d, (long long)shape[d]);
}

/* Check the name, rank and extents of a new tensor "name". */
static ts_status check_shape(ts_ctx *ctx, const char *name, int ndim,
	const int64_t *shape)
{
	if (!is_identifier(name))
		return ts_ctx_set_error(ctx, "'%s' is not a valid tensor name",
			name ? name : "(null)");
	if (ndim < 0 || ndim > TS_MAX_DIMS)
		return ts_ctx_set_error(ctx, "tensor '%s' has %d dimensions; "
			"at most %d are supported", name, ndim, TS_MAX_DIMS);
	for (int i = 0; i < ndim; i++)
		if (shape[i] < 0)
			return ts_ctx_set_error(ctx, "tensor '%s': dimension %d "
				"has negative extent %lld", name, i,
				(long long)shape[i]);
	return TS_OK;
}

ts_tensor *ts_tensor_make(ts_ctx *ctx, const char *name, ts_dtype t,
	int ndim, const int64_t *shape)
{
	ts_tensor *x = ts_new(ts_tensor);

	x->name = ts_strdup(name);
	x->dtype = t;
	x->ndim = ndim;
	for (int i = 0; i < ndim; i++)
		x->shape[i] = shape[i];
	x->id = ts_ctx_next_id(ctx);
	return x;
}

/* Return a tensor "name" of dtype "t" and the given shape, registered in
 * "ctx". */
static ts_tensor *tensor_new(ts_ctx *ctx, const char *name, ts_dtype t,
	int ndim, const int64_t *shape)
{
	if (check_shape(ctx, name, ndim, shape) < 0)
		return NULL;
	if ((unsigned)t >= TS_DTYPE_COUNT) {
		ts_ctx_set_error(ctx, "tensor '%s' has an unknown dtype %d",
			name, (int)t);
		return NULL;
	}
	if (check_size(ctx, name, t, ndim, shape) < 0)
		return NULL;
	return ts_tensor_make(ctx, name, t, ndim, shape);
}

ts_tensor *ts_placeholder(ts_ctx *ctx, const char *name, ts_dtype t,
	int ndim, const int64_t *shape)
{
	return tensor_new(ctx, name, t, ndim, shape);
}

int64_t ts_tensor_size(const ts_tensor *t)
{
	int64_t n = 1;

	for (int i = 0; i < t->ndim; i++)
		n *= t->shape[i];
	return n;
}

/* State of the walk that checks a stage body. */
struct body_check {
	ts_ctx *ctx;
	ts_stage *stage;
	ts_vec bound;		/* reduction axes bound around the node */
	ts_vec raxes;		/* every reduction axis met */
	ts_vec inputs;		/* every tensor read */
};

static bool vec_has(const ts_vec *v, const void *p)
{
	for (int i = 0; i < v->n; i++)
		if (v->v[i] == p)
			return true;
	return false;
}

/* Check that every variable of "e" is in scope for the stage of "bc", and
 * collect reduction axes and inputs. */
static ts_status check_body(struct body_check *bc, ts_expr *e)
{
	ts_stage *s = bc->stage;
	ts_status st = TS_OK;

	switch (e->kind) {
	case TS_EXPR_VAR:
		if (e->axis->reduce) {
			if (!vec_has(&bc->bound, e->axis))
				return ts_ctx_set_error(bc->ctx, "stage '%s': "
					"reduction axis '%s' is used outside "
					"a reducer", s->name, e->axis->name);
			return TS_OK;
		}
		for (int i = 0; i < s->ndim; i++)
			if (s->axes[i] == e->axis)
				return TS_OK;
		return ts_ctx_set_error(bc->ctx, "stage '%s': axis '%s' is not "
			"an axis of this stage", s->name, e->axis->name);
	case TS_EXPR_LOAD:
		if (!vec_has(&bc->inputs, e->tensor))
			ts_vec_push(&bc->inputs, e->tensor);
		for (int i = 0; i < e->nargs && st == TS_OK; i++)
			st = check_body(bc, e->args[i]);
		return st;
	case TS_EXPR_REDUCE:
		for (int i = 0; i < e->nraxes; i++) {
			if (vec_has(&bc->bound, e->raxes[i]))
				return ts_ctx_set_error(bc->ctx, "stage '%s': "
					"reduction axis '%s' is bound by two "
					"nested reducers", s->name,
					e->raxes[i]->name);
			ts_vec_push(&bc->bound, e->raxes[i]);
			if (!vec_has(&bc->raxes, e->raxes[i]))
				ts_vec_push(&bc->raxes, e->raxes[i]);
		}
		st = check_body(bc, e->a);
		bc->bound.n -= e->nraxes;
		return st;
	default:
		if (e->a && (st = check_body(bc, e->a)) < 0)
			return st;
		if (e->b && (st = check_body(bc, e->b)) < 0)
			return st;
		if (e->c && (st = check_body(bc, e->c)) < 0)
			return st;
		return TS_OK;
	}
}

/* Check that the iteration domain of stage "s" (its spatial and
 * reduction axes) has fewer than 2^63 points, zero extents counting as
 * one, so that counts of iterations fit in 64 bits. */
static ts_status check_domain(ts_ctx *ctx, const ts_stage *s)
{
	int64_t n = 1;

	for (int i = 0; i < s->ndim + s->nraxes; i++) {
		const ts_axis *a = ts_stage_axis(s, i);
		if (__builtin_mul_overflow(n, TS_MAX(a->extent, 1), &n))
			return ts_ctx_set_error(ctx, "stage '%s' is too large: "
				"with axis '%s' (extent %lld) its number of "
				"iterations overflows 64 bits", s->name,
				a->name, (long long)a->extent);
	}
	return TS_OK;
}

/* Check the spatial axes of stage "name". */
static ts_status check_axes(ts_ctx *ctx, const char *name, int ndim,
	ts_axis *const *axes)
{
	if (ndim < 0 || ndim > TS_MAX_DIMS)
		return ts_ctx_set_error(ctx, "stage '%s' has %d axes; at most "
			"%d are supported", name, ndim, TS_MAX_DIMS);
	for (int i = 0; i < ndim; i++) {
		if (!axes[i])
			return TS_ERROR;
		if (axes[i]->reduce)
			return ts_ctx_set_error(ctx, "stage '%s': axis '%s' is "
				"a reduction axis; spatial axes come from "
				"ts_axis_new", name, axes[i]->name);
		for (int j = 0; j < i; j++)
			if (axes[j] == axes[i] ||
			    strcmp(axes[j]->name, axes[i]->name) == 0)
				return ts_ctx_set_error(ctx, "stage '%s': axis "
					"'%s' appears twice", name,
					axes[i]->name);
	}
	return TS_OK;
}

ts_status ts_stage_set_body(ts_ctx *ctx, ts_stage *s, ts_expr *body)
{
	struct body_check bc = { ctx };

	bc.stage = s;
	if (check_body(&bc, body) < 0)
		return TS_ERROR;
	s->body = body;
	s->nraxes = bc.raxes.n;
	s->raxes = (ts_axis **)bc.raxes.v;
	s->ninputs = bc.inputs.n;
	s->inputs = (ts_tensor **)bc.inputs.v;
	return TS_OK;
}

ts_tensor *ts_compute_typed(ts_ctx *ctx, const char *name, ts_dtype t,
	int ndim, ts_axis *const *axes, ts_expr *body)
{
	int64_t shape[TS_MAX_DIMS];
	ts_stage *s;
	ts_tensor *out;

	if (!body || check_axes(ctx, name, ndim, axes) < 0)
		return NULL;
	/* A literal takes the stage's dtype as a cast of it would, so that
	 * the printed declaration ("i8(inf)") reads back the same. */
	if (body->literal)
		body = ts_cast(ctx, t, body);
	if (body->dtype != t)
		body = ts_cast(ctx, t, body);
	s = ts_new(ts_stage);
	s->name = ts_strdup(name);
	s->ndim = ndim;
	s->axes = ts_new_array(ts_axis *, ndim ? ndim : 1);
	if (ndim > 0)
		memcpy(s->axes, axes, sizeof(ts_axis *) * ndim);
	if (ts_stage_set_body(ctx, s, body) < 0)
		return NULL;
	for (int i = 0; i < ndim; i++)
		shape[i] = axes[i]->extent;
	out = tensor_new(ctx, name, t, ndim, shape);
	if (out && check_domain(ctx, s) < 0)
		return NULL;
	if (!out)
		return NULL;
	out->stage = s;
	s->out = out;
	return out;
}

ts_tensor *ts_compute(ts_ctx *ctx, const char *name, int ndim,
	ts_axis *const *axes, ts_expr *body)
{
	if (!body)
		return NULL;
	return ts_compute_typed(ctx, name, body->dtype, ndim, axes, body);
}

int ts_axis_pos(const ts_stage *s, const ts_axis *axis)
{
	for (int i = 0; i < s->ndim; i++)
		if (s->axes[i] == axis)
			return i;
	for (int i = 0; i < s->nraxes; i++)
		if (s->raxes[i] == axis)
			return s->ndim + i;
	return -1;
}

const ts_axis *ts_stage_axis(const ts_stage *s, int pos)
{
	return pos < s->ndim ? s->axes[pos] : s->raxes[pos - s->ndim];
}
