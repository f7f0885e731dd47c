/* Reductions and what is built on them: ReduceSum and its kin, ArgMax and
 * ArgMin, Softmax, LogSoftmax and Hardmax, and the normalisation layers
 * (LayerNormalization, InstanceNormalization, BatchNormalization in
 * inference, LpNormalization, MeanVarianceNormalization, LRN).
 *
 * Each reduces a tensor over a set of its axes: plan() names the reduction
 * axes and says how a stage reads the tensor, so that the operators only
 * write their formulas.  Helper stages (a maximum, a mean) are written with
 * the reduced axes kept as extents of 1, which a stage of the input's
 * shape reads at index 0. */
#include <config.h>

#include "onnx/internal.h"

/* How stages read "x" reduced over the axes marked in "red". */
struct plan {
	int ndim;			/* the result's rank */
	int64_t shape[TS_MAX_DIMS];	/* the result's shape */
	const char *idx[TS_MAX_DIMS];	/* x's index in the result's stage */
	const char *keep[TS_MAX_DIMS];	/* a kept-dims result's index in a
					 * stage of x's shape */
	const char *binders;		/* "r0: 3, r1: 4", or NULL */
	int64_t count;			/* elements reduced into one */
};

static void plan(struct ox_node *n, const struct ox_value *x,
	const bool *red, bool keepdims, struct plan *p)
{
	ts_buf b;

	ts_buf_init(&b);
	p->ndim = 0;
	p->count = 1;
	for (int k = 0; k < x->ndim; k++) {
		if (!red[k]) {
			p->idx[k] = ox_axis(p->ndim);
			p->keep[k] = ox_axis(k);
			p->shape[p->ndim++] = x->shape[k];
			continue;
		}
		p->idx[k] = ox_raxis(n);
		p->keep[k] = "0";
		p->count *= x->shape[k];
		ts_buf_printf(&b, "%s%s: %lld", b.len ? ", " : "", p->idx[k],
			(long long)x->shape[k]);
		if (keepdims)
			p->shape[p->ndim++] = 1;
	}
	p->binders = b.len ? b.s : NULL;
}

/* "REDUCER(binders) body", parenthesized; the body alone when nothing is
 * reduced. */
static char *reduce(const struct plan *p, const char *reducer,
	const char *body)
{
	if (!p->binders)
		return ts_asprintf("(%s)", body);
	return ts_asprintf("(%s(%s) %s)", reducer, p->binders, body);
}

static ts_status need_float(struct ox_importer *im, const struct ox_node *n,
	const struct ox_value *x)
{
	if (ts_dtype_is_float(x->dtype))
		return TS_OK;
	return ox_fail(im, n, "input of type %s is not supported (floats "
		"are)", ts_dtype_name(x->dtype));
}

static ts_status need_number(struct ox_importer *im,
	const struct ox_node *n, const struct ox_value *x)
{
	if (x->dtype != TS_BOOL)
		return TS_OK;
	return ox_fail(im, n, "input of type bool is not supported");
}

/* Mark the axes listed in "axes" in "red"; error on a repeated one. */
static ts_status mark_axes(struct ox_importer *im, const struct ox_node *n,
	const int64_t *axes, int count, int rank, bool *red)
{
	for (int k = 0; k < rank; k++)
		red[k] = false;
	for (int i = 0; i < count; i++) {
		int a;

		if (ox_axis_norm(im, n, axes[i], rank, &a) < 0)
			return TS_ERROR;
		if (red[a])
			return ox_fail(im, n, "axis %lld is listed twice",
				(long long)axes[i]);
		red[a] = true;
	}
	return TS_OK;
}

/* The axes a Reduce* node reduces, into "red"; "*noop" when it reduces
 * none and returns its input.  ReduceSum takes them as an input from
 * opset 13 (with noop_with_empty_axes), the others as an attribute (until
 * opset 18, beyond what is imported).  No axes reduce all. */
static ts_status reduce_axes(struct ox_importer *im, struct ox_node *n,
	const struct ox_value *x, bool *red, bool *noop)
{
	int64_t axes[TS_MAX_DIMS], no_op = 0;
	int count = -1;

	*noop = false;
	if (!strcmp(n->op, "ReduceSum") && ox_opset(im) >= 13) {
		if (ox_attr(n, "axes"))
			return ox_fail(im, n, "attribute 'axes': from opset 13 "
				"the axes are an input");
		if (ox_attr_int(im, n, "noop_with_empty_axes", 0, &no_op) < 0)
			return TS_ERROR;
		if (!ox_has(n, 1))
			count = 0;
		else if (n->in[1]->ndim == 1 && n->in[1]->shape[0] == 0)
			count = 0;	/* empty: known without its contents */
		else if (ox_const_ints(im, n, 1, "axes", axes, TS_MAX_DIMS,
		    &count) < 0)
			return TS_ERROR;
	} else {
		if (n->nin > 1)
			return ox_fail(im, n, "axes given as an input: in "
				"opset %d they are an attribute", ox_opset(im));
		if (ox_attr_ints(im, n, "axes", axes, TS_MAX_DIMS, &count) < 0)
			return TS_ERROR;
	}
	if (count <= 0) {
		*noop = no_op != 0;
		for (int k = 0; k < x->ndim; k++)
			red[k] = !*noop;
		return TS_OK;
	}
	return mark_axes(im, n, axes, count, x->ndim, red);
}

/* The Reduce* operators: the reducer, the term reduced (around {x}, the
 * element), the result (around {s}, the reduction; {n} the count), and
 * whether they take floats only. */
static const struct reducer {
	const char *op;
	const char *reducer;
	const char *term;
	const char *result;
	bool floats;
} reducers[] = {
	{ "ReduceSum", "sum", "{x}", "{s}", false },
	{ "ReduceMean", "sum", "{x}", "{s} / {n}", true },
	{ "ReduceMax", "max", "{x}", "{s}", false },
	{ "ReduceMin", "min", "{x}", "{s}", false },
	{ "ReduceProd", "prod", "{x}", "{s}", false },
	{ "ReduceL1", "sum", "abs({x})", "{s}", false },
	{ "ReduceL2", "sum", "{x} * {x}", "sqrt({s})", true },
	{ "ReduceLogSum", "sum", "{x}", "log({s})", true },
	{ "ReduceSumSquare", "sum", "{x} * {x}", "{s}", false },
};

/* Replace in "tpl" each {x} by "x", {s} by "s" and {n} by "num". */
static char *subst(const char *tpl, const char *x, const char *s,
	const char *num)
{
	ts_buf out;

	ts_buf_init(&out);
	for (const char *p = tpl; *p; p++) {
		const char *r = NULL;

		if (p[0] == '{' && p[1] && p[2] == '}')
			r = p[1] == 'x' ? x : p[1] == 's' ? s : p[1] == 'n' ?
				num : NULL;
		if (!r) {
			ts_buf_putc(&out, *p);
			continue;
		}
		ts_buf_puts(&out, r);
		p += 2;
	}
	return out.s;
}

/* ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
 * ReduceL2, ReduceLogSum, ReduceSumSquare (keepdims, default 1).  Integer
 * inputs are summed in their dtype, as NumPy's result cast back to it
 * wraps alike; the means, roots and logarithms take floats only.  The
 * language's max and min keep a number over a NaN, where NumPy's
 * propagate it. */
static ts_status lower_reduce(struct ox_importer *im, struct ox_node *n)
{
	const struct reducer *r = NULL;
	struct ox_value *x;
	struct plan p;
	bool red[TS_MAX_DIMS], noop;
	int64_t keep;
	const char *name, *ld;

	for (size_t i = 0; i < sizeof(reducers) / sizeof(reducers[0]); i++)
		if (!strcmp(reducers[i].op, n->op))
			r = &reducers[i];
	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_int(im, n, "keepdims", 1, &keep) < 0)
		return TS_ERROR;
	x = n->in[0];
	if ((r->floats ? need_float(im, n, x) : need_number(im, n, x)) < 0 ||
	    reduce_axes(im, n, x, red, &noop) < 0)
		return TS_ERROR;
	plan(n, x, red, keep != 0, &p);
	name = ox_output(im, n, 0, x->dtype, p.ndim, p.shape);
	if (noop) {
		ox_stage(im, n, name, x->ndim, x->shape, NULL,
			ox_load_same(im, n, x));
		return TS_OK;
	}
	ld = ox_load(im, n, x, p.idx);
	ox_stage(im, n, name, p.ndim, p.shape, NULL, subst(r->result, "",
		reduce(&p, r->reducer, subst(r->term, ld, "", "")),
		ox_lit(x->dtype, (double)p.count)));
	return TS_OK;
}

/* ReduceLogSumExp: log(sum(exp(x))), shifted by the maximum so that large
 * values do not overflow; an infinite maximum is not shifted by, which
 * gives the unshifted result (inf, or -inf when all are -inf). */
static ts_status lower_reduce_log_sum_exp(struct ox_importer *im,
	struct ox_node *n)
{
	struct ox_value *x;
	struct plan p;
	bool red[TS_MAX_DIMS], noop;
	int64_t keep;
	const char *name, *mx, *shift, *ld, *sh;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_int(im, n, "keepdims", 1, &keep) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (need_float(im, n, x) < 0 || reduce_axes(im, n, x, red, &noop) < 0)
		return TS_ERROR;
	plan(n, x, red, keep != 0, &p);
	name = ox_output(im, n, 0, x->dtype, p.ndim, p.shape);
	ld = ox_load(im, n, x, p.idx);
	mx = ox_temp(im, n, "max");
	shift = ox_temp(im, n, "shift");
	ox_stage(im, n, mx, p.ndim, p.shape, NULL, reduce(&p, "max", ld));
	ld = ox_load_name_same(mx, p.ndim);
	ox_stage(im, n, shift, p.ndim, p.shape, NULL, ts_asprintf(
		"select(%s == inf || %s == -inf, %s, %s)", ld, ld,
		ox_tlit(x->dtype, 0), ld));
	sh = ox_load_name_same(shift, p.ndim);
	ox_stage(im, n, name, p.ndim, p.shape, NULL, ts_asprintf(
		"%s + log%s", sh, reduce(&p, "sum", ts_asprintf("exp(%s - %s)",
		ox_load(im, n, x, p.idx), sh))));
	return TS_OK;
}

/* ArgMax, ArgMin (axis 0, keepdims 1, select_last_index 0): the first
 * (or last) index of the extreme along the axis, as i64. */
static ts_status lower_arg(struct ox_importer *im, struct ox_node *n)
{
	bool is_max = !strcmp(n->op, "ArgMax");
	struct ox_value *x;
	struct plan p;
	bool red[TS_MAX_DIMS];
	int64_t axis, keep, last;
	int a;
	const char *name, *ext, *ld, *r;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_int(im, n, "axis", 0, &axis) < 0 ||
	    ox_attr_int(im, n, "keepdims", 1, &keep) < 0 ||
	    ox_attr_int(im, n, "select_last_index", 0, &last) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (need_number(im, n, x) < 0)
		return TS_ERROR;
	if (x->ndim < 1)
		return ox_fail(im, n, "the input is a scalar");
	if (ox_axis_norm(im, n, axis, x->ndim, &a) < 0 ||
	    mark_axes(im, n, &axis, 1, x->ndim, red) < 0)
		return TS_ERROR;
	plan(n, x, red, keep != 0, &p);
	r = p.idx[a];
	name = ox_output(im, n, 0, TS_I64, p.ndim, p.shape);
	ext = ox_temp(im, n, is_max ? "max" : "min");
	ld = ox_load(im, n, x, p.idx);
	ox_stage(im, n, ext, p.ndim, p.shape, NULL,
		reduce(&p, is_max ? "max" : "min", ld));
	ox_stage(im, n, name, p.ndim, p.shape, NULL, reduce(&p,
		last ? "max" : "min", ts_asprintf("select(%s == %s, %s, %s)",
		ld, ox_load_name_same(ext, p.ndim), r, last ? "(-1)" :
		ts_asprintf("%lld", (long long)x->shape[a]))));
	return TS_OK;
}

/* The axes Softmax, LogSoftmax and Hardmax normalise over: before opset
 * 13 the input is seen as a matrix split at "axis" (default 1), whose rows
 * are the axes from "axis" on; from 13 the one axis (default -1). */
static ts_status softmax_axes(struct ox_importer *im, struct ox_node *n,
	const struct ox_value *x, bool *red)
{
	bool old = ox_opset(im) < 13;
	int64_t axis;
	int a;

	if (ox_attr_int(im, n, "axis", old ? 1 : -1, &axis) < 0 ||
	    need_float(im, n, x) < 0)
		return TS_ERROR;
	if (x->ndim < 1)
		return ox_fail(im, n, "the input is a scalar");
	if (ox_axis_norm(im, n, axis, x->ndim, &a) < 0)
		return TS_ERROR;
	for (int k = 0; k < x->ndim; k++)
		red[k] = old ? k >= a : k == a;
	return TS_OK;
}

/* Softmax and LogSoftmax: exp(x - max) / sum(exp(x - max)), and
 * (x - max) - log(sum(exp(x - max))), NumPy's order of operations. */
static ts_status lower_softmax(struct ox_importer *im, struct ox_node *n)
{
	bool is_log = !strcmp(n->op, "LogSoftmax");
	struct ox_value *x;
	struct plan p;
	bool red[TS_MAX_DIMS];
	const char *name, *mx, *sum, *m;
	char *e;

	if (ox_need(im, n, 0, 1) < 0 || softmax_axes(im, n, n->in[0], red) < 0)
		return TS_ERROR;
	x = n->in[0];
	plan(n, x, red, true, &p);
	name = ox_output(im, n, 0, x->dtype, x->ndim, x->shape);
	mx = ox_temp(im, n, "max");
	sum = ox_temp(im, n, is_log ? "logsum" : "sum");
	ox_stage(im, n, mx, p.ndim, p.shape, NULL,
		reduce(&p, "max", ox_load(im, n, x, p.idx)));
	m = ox_load_name_same(mx, p.ndim);
	e = reduce(&p, "sum", ts_asprintf("exp(%s - %s)",
		ox_load(im, n, x, p.idx), m));
	ox_stage(im, n, sum, p.ndim, p.shape, NULL,
		is_log ? ts_asprintf("log%s", e) : e);
	m = ox_load_name(mx, x->ndim, p.keep);
	if (is_log)
		ox_stage(im, n, name, x->ndim, x->shape, NULL, ts_asprintf(
			"%s - %s - %s", ox_load_same(im, n, x), m,
			ox_load_name(sum, x->ndim, p.keep)));
	else
		ox_stage(im, n, name, x->ndim, x->shape, NULL, ts_asprintf(
			"exp(%s - %s) / %s", ox_load_same(im, n, x), m,
			ox_load_name(sum, x->ndim, p.keep)));
	return TS_OK;
}

/* The position of an element in the flattened reduced axes, its index
 * along them given by "idx" (x's rank). */
static char *flat_index(const struct ox_value *x, const bool *red,
	const char *const *idx)
{
	ts_buf b;
	int64_t stride = 1;

	ts_buf_init(&b);
	for (int k = x->ndim - 1; k >= 0; k--) {
		if (!red[k])
			continue;
		if (stride == 1)
			ts_buf_printf(&b, "%s%s", b.len ? " + " : "", idx[k]);
		else
			ts_buf_printf(&b, "%s%s * %lld", b.len ? " + " : "",
				idx[k], (long long)stride);
		stride *= x->shape[k];
	}
	return b.s;
}

/* Hardmax: 1 at the first maximum of each row (see softmax_axes), 0
 * elsewhere. */
static ts_status lower_hardmax(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x;
	struct plan p;
	bool red[TS_MAX_DIMS];
	const char *name, *mx, *at, *own[TS_MAX_DIMS];

	if (ox_need(im, n, 0, 1) < 0 || softmax_axes(im, n, n->in[0], red) < 0)
		return TS_ERROR;
	x = n->in[0];
	plan(n, x, red, true, &p);
	for (int k = 0; k < x->ndim; k++)
		own[k] = ox_axis(k);
	name = ox_output(im, n, 0, x->dtype, x->ndim, x->shape);
	mx = ox_temp(im, n, "max");
	at = ox_temp(im, n, "at");
	ox_stage(im, n, mx, p.ndim, p.shape, NULL,
		reduce(&p, "max", ox_load(im, n, x, p.idx)));
	ox_stage(im, n, at, p.ndim, p.shape, NULL, reduce(&p, "min",
		ts_asprintf("select(%s == %s, %s, %lld)",
		ox_load(im, n, x, p.idx), ox_load_name_same(mx, p.ndim),
		flat_index(x, red, p.idx), (long long)p.count)));
	ox_stage(im, n, name, x->ndim, x->shape, NULL, ts_asprintf(
		"select(%s == %s, %s, %s)", flat_index(x, red, own),
		ox_load_name(at, x->ndim, p.keep), ox_tlit(x->dtype, 1),
		ox_tlit(x->dtype, 0)));
	return TS_OK;
}

/* Read parameter "v" of a normalisation (one per channel) at the
 * channel's index "at", as dtype "t". */
static char *channel(struct ox_importer *im, struct ox_node *n,
	struct ox_value *v, const char *at, ts_dtype t)
{
	const char *idx[1] = { at };
	char *ld = ox_load(im, n, v, idx);

	return v->dtype == t ? ld : ts_asprintf("%s(%s)", ts_dtype_name(t), ld);
}

/* Check that input "k" is a vector of "c" floats (a channel's
 * parameters). */
static ts_status need_channels(struct ox_importer *im, struct ox_node *n,
	int k, int64_t c)
{
	const struct ox_value *v;

	if (ox_need(im, n, k, k + 1) < 0)
		return TS_ERROR;
	v = n->in[k];
	if (!ts_dtype_is_float(v->dtype) || v->ndim != 1 || v->shape[0] != c)
		return ox_fail(im, n, "input %d must be %lld floats, one per "
			"channel", k, (long long)c);
	return TS_OK;
}

/* Stage "name" (kept dims of "p"): the mean of "x" over the plan's axes,
 * in "t" ("ld" reads x). */
static void mean_stage(struct ox_importer *im, struct ox_node *n,
	const char *name, const struct plan *p, const char *ld, ts_dtype t)
{
	ox_stage(im, n, name, p->ndim, p->shape, NULL, ts_asprintf("%s / %s",
		reduce(p, "sum", ld), ox_lit(t, (double)p->count)));
}

/* The variance of "x" about the mean "mean" (kept dims), the mean of
 * squared deviations, in "t": an expression of a stage of p's shape. */
static char *variance(const struct plan *p, const char *ld, const char *mean,
	ts_dtype t)
{
	const char *m = ox_load_name_same(mean, p->ndim);

	return ts_asprintf("%s / %s", reduce(p, "sum", ts_asprintf(
		"(%s - %s) * (%s - %s)", ld, m, ld, m)),
		ox_lit(t, (double)p->count));
}

/* LayerNormalization (opset 17): over the axes from "axis" (default -1)
 * on, in stash_type (default f32): Y = (X - Mean) * InvStdDev * Scale + B,
 * InvStdDev = 1 / sqrt(variance + epsilon) (default 1e-5); Scale and B
 * broadcast to X.  Mean and InvStdDev are the optional outputs 1 and 2. */
static ts_status lower_layer_norm(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x, *w, *b;
	struct plan p;
	bool red[TS_MAX_DIMS];
	int64_t axis, stash;
	double eps;
	int a;
	ts_dtype t, st;
	const char *name, *mean, *inv, *ld, *body;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0 ||
	    ox_attr_int(im, n, "axis", -1, &axis) < 0 ||
	    ox_attr_float(im, n, "epsilon", 1e-5, &eps) < 0 ||
	    ox_attr_int(im, n, "stash_type", ONNX_FLOAT, &stash) < 0)
		return TS_ERROR;
	x = n->in[0];
	w = n->in[1];
	b = ox_has(n, 2) ? n->in[2] : NULL;
	t = x->dtype;
	if (need_float(im, n, x) < 0 || ox_dtype(im, n, (int)stash, &st) < 0 ||
	    ox_axis_norm(im, n, axis, x->ndim, &a) < 0)
		return TS_ERROR;
	if (!ts_dtype_is_float(st))
		return ox_fail(im, n, "stash_type %s is not a float",
			ts_dtype_name(st));
	if (w->dtype != t || (b && b->dtype != t))
		return ox_fail(im, n, "Scale and B must be of X's type %s",
			ts_dtype_name(t));
	for (int k = 0; k < x->ndim; k++)
		red[k] = k >= a;
	for (int k = 1; k < 3; k++) {
		struct ox_value *v = k == 1 ? w : b;
		int64_t out[TS_MAX_DIMS];
		int nd;

		if (v && (ox_broadcast(im, n, x->ndim, x->shape, v->ndim,
		    v->shape, &nd, out) < 0 || nd != x->ndim ||
		    memcmp(out, x->shape, sizeof(int64_t) * (size_t)nd)))
			return ox_fail(im, n, "input %d does not broadcast to "
				"X", k);
	}
	plan(n, x, red, true, &p);
	name = ox_output(im, n, 0, t, x->ndim, x->shape);
	if (!(mean = ox_output(im, n, 1, st, p.ndim, p.shape)))
		mean = ox_temp(im, n, "mean");
	if (!(inv = ox_output(im, n, 2, st, p.ndim, p.shape)))
		inv = ox_temp(im, n, "invstd");
	ld = ox_load(im, n, x, p.idx);
	if (st != t)
		ld = ts_asprintf("%s(%s)", ts_dtype_name(st), ld);
	mean_stage(im, n, mean, &p, ld, st);
	ox_stage(im, n, inv, p.ndim, p.shape, NULL, ts_asprintf(
		"%s / sqrt(%s + %s)", ox_lit(st, 1), variance(&p, ld, mean, st),
		ox_lit(st, eps)));
	ld = ox_load_same(im, n, x);
	if (st != t)
		ld = ts_asprintf("%s(%s)", ts_dtype_name(st), ld);
	body = ts_asprintf("(%s - %s) * %s", ld, ox_load_name(mean, x->ndim, p.keep),
		ox_load_name(inv, x->ndim, p.keep));
	if (st != t)
		body = ts_asprintf("%s(%s)", ts_dtype_name(t), body);
	body = ts_asprintf("%s * %s", body,
		ox_load_bcast(im, n, w, x->ndim, x->shape));
	if (b)
		body = ts_asprintf("%s + %s", body,
			ox_load_bcast(im, n, b, x->ndim, x->shape));
	ox_stage(im, n, name, x->ndim, x->shape, NULL, body);
	return TS_OK;
}

/* InstanceNormalization (epsilon 1e-5): each channel of each batch item
 * normalised over the spatial axes, y = scale * (x - mean) /
 * sqrt(variance + epsilon) + B, scale and B per channel. */
static ts_status lower_instance_norm(struct ox_importer *im,
	struct ox_node *n)
{
	struct ox_value *x;
	struct plan p;
	bool red[TS_MAX_DIMS];
	double eps;
	ts_dtype t;
	const char *name, *mean, *dev, *ld;

	if (ox_need(im, n, 0, 3) < 0 ||
	    ox_attr_float(im, n, "epsilon", 1e-5, &eps) < 0)
		return TS_ERROR;
	x = n->in[0];
	t = x->dtype;
	if (need_float(im, n, x) < 0)
		return TS_ERROR;
	if (x->ndim < 3)
		return ox_fail(im, n, "X of rank %d: it must be N x C x D1 ...",
			x->ndim);
	if (need_channels(im, n, 1, x->shape[1]) < 0 ||
	    need_channels(im, n, 2, x->shape[1]) < 0)
		return TS_ERROR;
	for (int k = 0; k < x->ndim; k++)
		red[k] = k >= 2;
	plan(n, x, red, true, &p);
	name = ox_output(im, n, 0, t, x->ndim, x->shape);
	mean = ox_temp(im, n, "mean");
	dev = ox_temp(im, n, "stddev");
	ld = ox_load(im, n, x, p.idx);
	mean_stage(im, n, mean, &p, ld, t);
	ox_stage(im, n, dev, p.ndim, p.shape, NULL, ts_asprintf(
		"sqrt(%s + %s)", variance(&p, ld, mean, t), ox_lit(t, eps)));
	ox_stage(im, n, name, x->ndim, x->shape, NULL, ts_asprintf(
		"%s * (%s - %s) / %s + %s", channel(im, n, n->in[1], "i1", t),
		ox_load_same(im, n, x), ox_load_name(mean, x->ndim, p.keep),
		ox_load_name(dev, x->ndim, p.keep), channel(im, n, n->in[2], "i1", t)));
	return TS_OK;
}

/* BatchNormalization in inference: y = (x - mean) * scale /
 * sqrt(var + epsilon) + B per channel (axis 1), with the running mean and
 * variance given.  Training (training_mode=1 from opset 14, the extra
 * outputs before) is refused; momentum only matters there.  Opsets 7 and
 * 8's spatial=0 (parameters per element of C x D1 ...) is refused. */
static ts_status lower_batch_norm(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x;
	int64_t training, spatial;
	double eps;
	ts_dtype t;
	const char *name, *scale;

	if (ox_need(im, n, 0, 5) < 0 ||
	    ox_attr_float(im, n, "epsilon", 1e-5, &eps) < 0 ||
	    ox_attr_int(im, n, "training_mode", 0, &training) < 0 ||
	    ox_attr_int(im, n, "spatial", 1, &spatial) < 0)
		return TS_ERROR;
	if (training)
		return ox_fail(im, n, "training_mode=1 is not supported (only "
			"inference)");
	for (int k = 1; k < n->nout; k++)
		if (ox_wants(n, k))
			return ox_fail(im, n, "output %d (a training statistic) "
				"is not supported (only inference)", k);
	if (!spatial)
		return ox_fail(im, n, "spatial=0 is not supported");
	x = n->in[0];
	t = x->dtype;
	if (need_float(im, n, x) < 0)
		return TS_ERROR;
	if (x->ndim < 2)
		return ox_fail(im, n, "X of rank %d: it must be N x C ...",
			x->ndim);
	for (int k = 1; k < 5; k++)
		if (need_channels(im, n, k, x->shape[1]) < 0)
			return TS_ERROR;
	name = ox_output(im, n, 0, t, x->ndim, x->shape);
	/* scale / sqrt(var + epsilon) once per channel. */
	scale = ox_temp(im, n, "scale");
	ox_stage(im, n, scale, 1, &x->shape[1], NULL, ts_asprintf(
		"%s / sqrt(%s + %s)", channel(im, n, n->in[1], "i0", t),
		channel(im, n, n->in[4], "i0", t), ox_lit(t, eps)));
	ox_stage(im, n, name, x->ndim, x->shape, NULL, ts_asprintf(
		"(%s - %s) * %s[i1] + %s", ox_load_same(im, n, x),
		channel(im, n, n->in[3], "i1", t), scale,
		channel(im, n, n->in[2], "i1", t)));
	return TS_OK;
}

/* LpNormalization (axis -1, p 2): x divided by its L1 or L2 norm along
 * the axis. */
static ts_status lower_lp_norm(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x;
	struct plan p;
	bool red[TS_MAX_DIMS];
	int64_t axis, pw;
	const char *name, *norm, *ld;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_int(im, n, "axis", -1, &axis) < 0 ||
	    ox_attr_int(im, n, "p", 2, &pw) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (need_float(im, n, x) < 0 || mark_axes(im, n, &axis, 1, x->ndim,
	    red) < 0)
		return TS_ERROR;
	if (pw != 1 && pw != 2)
		return ox_fail(im, n, "p=%lld is not 1 or 2", (long long)pw);
	plan(n, x, red, true, &p);
	name = ox_output(im, n, 0, x->dtype, x->ndim, x->shape);
	norm = ox_temp(im, n, "norm");
	ld = ox_load(im, n, x, p.idx);
	ox_stage(im, n, norm, p.ndim, p.shape, NULL, pw == 1 ?
		reduce(&p, "sum", ts_asprintf("abs(%s)", ld)) :
		ts_asprintf("sqrt%s", reduce(&p, "sum", ts_asprintf("%s * %s",
		ld, ld))));
	ox_stage(im, n, name, x->ndim, x->shape, NULL, ts_asprintf("%s / %s",
		ox_load_same(im, n, x), ox_load_name(norm, x->ndim, p.keep)));
	return TS_OK;
}

/* MeanVarianceNormalization (axes [0, 2, 3]): (x - mean) / (stddev +
 * 1e-9) over the axes, the standard deviation of the population, as ONNX's
 * reference. */
static ts_status lower_mvn(struct ox_importer *im, struct ox_node *n)
{
	static const int64_t dflt[3] = { 0, 2, 3 };
	struct ox_value *x;
	struct plan p;
	bool red[TS_MAX_DIMS];
	int64_t axes[TS_MAX_DIMS];
	int count;
	ts_dtype t;
	const char *name, *mean, *dev, *ld;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_ints(im, n, "axes", axes, TS_MAX_DIMS, &count) < 0)
		return TS_ERROR;
	x = n->in[0];
	t = x->dtype;
	if (count < 0) {
		memcpy(axes, dflt, sizeof(dflt));
		count = 3;
	}
	if (need_float(im, n, x) < 0 ||
	    mark_axes(im, n, axes, count, x->ndim, red) < 0)
		return TS_ERROR;
	plan(n, x, red, true, &p);
	name = ox_output(im, n, 0, t, x->ndim, x->shape);
	mean = ox_temp(im, n, "mean");
	dev = ox_temp(im, n, "stddev");
	ld = ox_load(im, n, x, p.idx);
	mean_stage(im, n, mean, &p, ld, t);
	ox_stage(im, n, dev, p.ndim, p.shape, NULL, ts_asprintf(
		"sqrt(%s) + %s", variance(&p, ld, mean, t), ox_lit(t, 1e-9)));
	ox_stage(im, n, name, x->ndim, x->shape, NULL, ts_asprintf(
		"(%s - %s) / %s", ox_load_same(im, n, x),
		ox_load_name(mean, x->ndim, p.keep), ox_load_name(dev, x->ndim, p.keep)));
	return TS_OK;
}

/* LRN (size, alpha 1e-4, beta 0.75, bias 1): across channels (axis 1),
 * y = x / (bias + alpha / size * sum of squares)^beta, the sum over the
 * channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2) that
 * exist. */
static ts_status lower_lrn(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x;
	int64_t size, lo;
	double alpha, beta, bias;
	ts_dtype t;
	const char *idx[TS_MAX_DIMS], *r, *name, *sq, *ld, *ch;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_int(im, n, "size", 0, &size) < 0 ||
	    ox_attr_float(im, n, "alpha", 1e-4, &alpha) < 0 ||
	    ox_attr_float(im, n, "beta", 0.75, &beta) < 0 ||
	    ox_attr_float(im, n, "bias", 1.0, &bias) < 0)
		return TS_ERROR;
	x = n->in[0];
	t = x->dtype;
	if (need_float(im, n, x) < 0)
		return TS_ERROR;
	if (size < 1)
		return ox_fail(im, n, "size must be given and positive");
	if (x->ndim < 2)
		return ox_fail(im, n, "X of rank %d: it must be N x C ...",
			x->ndim);
	lo = (size - 1) / 2;
	r = ox_raxis(n);
	ch = ts_asprintf("i1 + %s - %lld", r, (long long)lo);
	for (int k = 0; k < x->ndim; k++)
		idx[k] = k == 1 ? ch : ox_axis(k);
	name = ox_output(im, n, 0, t, x->ndim, x->shape);
	sq = ox_temp(im, n, "sqsum");
	ld = ox_load(im, n, x, idx);
	ox_stage(im, n, sq, x->ndim, x->shape, NULL, ts_asprintf(
		"sum(%s: %lld) select(%s >= 0 && %s < %lld, %s * %s, %s)", r,
		(long long)size, ch, ch, (long long)x->shape[1], ld, ld,
		ox_tlit(t, 0)));
	ox_stage(im, n, name, x->ndim, x->shape, NULL, ts_asprintf(
		"%s / pow(%s + %s * %s, %s)", ox_load_same(im, n, x),
		ox_lit(t, bias), ox_lit(t, alpha / (double)size),
		ox_load_name_same(sq, x->ndim), ox_lit(t, beta)));
	return TS_OK;
}

const struct ox_op ox_ops_reduce[] = {
	{ "ReduceSum", lower_reduce },
	{ "ReduceMean", lower_reduce },
	{ "ReduceMax", lower_reduce },
	{ "ReduceMin", lower_reduce },
	{ "ReduceProd", lower_reduce },
	{ "ReduceL1", lower_reduce },
	{ "ReduceL2", lower_reduce },
	{ "ReduceLogSum", lower_reduce },
	{ "ReduceSumSquare", lower_reduce },
	{ "ReduceLogSumExp", lower_reduce_log_sum_exp },
	{ "ArgMax", lower_arg },
	{ "ArgMin", lower_arg },
	{ "Softmax", lower_softmax },
	{ "LogSoftmax", lower_softmax },
	{ "Hardmax", lower_hardmax },
	{ "LayerNormalization", lower_layer_norm },
	{ "InstanceNormalization", lower_instance_norm },
	{ "BatchNormalization", lower_batch_norm },
	{ "LpNormalization", lower_lp_norm },
	{ "MeanVarianceNormalization", lower_mvn },
	{ "LRN", lower_lrn },
	{ NULL, NULL },
};
