/* Operators outside the main families: losses, scatters, sorting, signal
 * windows, recurrent layers.  The table is filled as they are added. */
#include <config.h>

#include "onnx/internal.h"

/* "name[idx0, idx1, ...]" for a stage of the node's own writing. */
static char *load_at(const char *name, int ndim, const char *const *idx)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "%s[", name);
	for (int k = 0; k < ndim; k++)
		ts_buf_printf(&b, "%s%s", k ? ", " : "", idx[k]);
	ts_buf_putc(&b, ']');
	return b.s;
}

/* "name[i0, i1, ...]" at the first "ndim" axes of the stage. */
static char *load_all(const char *name, int ndim)
{
	const char *idx[TS_MAX_DIMS];

	for (int k = 0; k < ndim; k++)
		idx[k] = ox_axis(k);
	return load_at(name, ndim, idx);
}

/* "r0: 3, r1: 4" binding "ax" to the extents "shape". */
static char *binders(int ndim, const char *const *ax, const int64_t *shape)
{
	ts_buf b;

	ts_buf_init(&b);
	for (int k = 0; k < ndim; k++)
		ts_buf_printf(&b, "%s%s: %lld", k ? ", " : "", ax[k],
			(long long)shape[k]);
	return b.s;
}

static ts_status need_float(struct ox_importer *im, const struct ox_node *n,
	const struct ox_value *x, const char *what)
{
	if (ts_dtype_is_float(x->dtype))
		return TS_OK;
	return ox_fail(im, n, "%s of type %s is not supported (floats are)",
		what, ts_dtype_name(x->dtype));
}

static ts_status need_int(struct ox_importer *im, const struct ox_node *n,
	const struct ox_value *x, const char *what)
{
	if (x->dtype != TS_BOOL && !ts_dtype_is_float(x->dtype))
		return TS_OK;
	return ox_fail(im, n, "%s of type %s: they must be integers", what,
		ts_dtype_name(x->dtype));
}

/* The shape of a scalar. */
static const int64_t scalar[1] = { 1 };

/* Losses. */

/* What NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss share: the
 * scores x (N, C, d1, ...), read from stage "lp" when not NULL, the
 * target t (N, d1, ...), the optional weight w (C). */
struct loss {
	struct ox_value *x, *t, *w;
	const char *lp;
	const char *reduction;
	bool has_ii;
	int64_t ii;
};

static ts_status loss_read(struct ox_importer *im, struct ox_node *n,
	struct loss *l)
{
	struct ox_value *x, *t;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0 ||
	    ox_attr_string(im, n, "reduction", "mean", &l->reduction) < 0)
		return TS_ERROR;
	if (strcmp(l->reduction, "none") && strcmp(l->reduction, "sum") &&
	    strcmp(l->reduction, "mean"))
		return ox_fail(im, n, "reduction '%s' is not one of none, sum, "
			"mean", l->reduction);
	l->has_ii = ox_attr(n, "ignore_index") != NULL;
	if (ox_attr_int(im, n, "ignore_index", 0, &l->ii) < 0)
		return TS_ERROR;
	x = l->x = n->in[0];
	t = l->t = n->in[1];
	l->w = ox_has(n, 2) ? n->in[2] : NULL;
	l->lp = NULL;
	if (need_float(im, n, x, "input") < 0 ||
	    need_int(im, n, t, "targets") < 0 ||
	    (l->w && need_float(im, n, l->w, "weight") < 0))
		return TS_ERROR;
	if (x->ndim < 2)
		return ox_fail(im, n, "the input has rank %d: it must be (N, C) "
			"or (N, C, d1, ...)", x->ndim);
	if (t->ndim != x->ndim - 1 || t->shape[0] != x->shape[0])
		return ox_fail(im, n, "targets of rank %d do not fit an input "
			"of rank %d", t->ndim, x->ndim);
	for (int k = 1; k < t->ndim; k++)
		if (t->shape[k] != x->shape[k + 1])
			return ox_fail(im, n, "targets' dimension %d is %lld, "
				"the input's %d is %lld", k,
				(long long)t->shape[k], k + 1,
				(long long)x->shape[k + 1]);
	if (l->w && (l->w->ndim != 1 || l->w->shape[0] != x->shape[1]))
		return ox_fail(im, n, "the weight must have shape (%lld)",
			(long long)x->shape[1]);
	if (l->w && l->w->dtype != x->dtype)
		return ox_fail(im, n, "the weight is %s, the input %s",
			ts_dtype_name(l->w->dtype), ts_dtype_name(x->dtype));
	return TS_OK;
}

/* Output 0 of a loss: per target element -x[n, t, d...] * w[t] (0 where
 * t is ignore_index), then summed, or summed and divided by the sum of
 * the weights of the targets not ignored (their count without weight). */
static ts_status loss_write(struct ox_importer *im, struct ox_node *n,
	struct loss *l)
{
	struct ox_value *x = l->x, *t = l->t;
	ts_dtype dt = x->dtype;
	int r = t->ndim;
	const char *xi[TS_MAX_DIMS], *name, *per, *tl, *cl, *zero, *ax[1];
	const char *red[TS_MAX_DIMS];
	char *term, *wt = NULL, *all;
	bool none = !strcmp(l->reduction, "none");

	tl = ox_load_same(im, n, t);
	if (t->dtype != TS_I64)
		tl = ts_asprintf("i64(%s)", tl);
	/* A target out of range reads a clamped class (its loss is
	 * undefined), never out of bounds. */
	cl = ts_asprintf("clamp(%s, 0, %lld)", tl,
		(long long)(x->shape[1] - 1));
	xi[0] = ox_axis(0);
	xi[1] = cl;
	for (int k = 1; k < r; k++)
		xi[k + 1] = ox_axis(k);
	term = ts_asprintf("-%s", l->lp ? load_at(l->lp, x->ndim, xi) :
		ox_load(im, n, x, xi));
	ax[0] = cl;
	if (l->w) {
		wt = ox_load(im, n, l->w, ax);
		term = ts_asprintf("%s * %s", term, wt);
	}
	zero = ox_tlit(dt, 0);
	if (l->has_ii) {
		char *ii = ts_asprintf("%s == %s", tl,
			ox_lit(TS_I64, (double)l->ii));

		term = ts_asprintf("select(%s, %s, %s)", ii, zero, term);
		wt = ts_asprintf("select(%s, %s, %s)", ii, zero,
			wt ? wt : ox_tlit(dt, 1));
	}
	if (none) {
		name = ox_output(im, n, 0, dt, r, t->shape);
		ox_stage(im, n, name, r, t->shape, NULL, term);
		return TS_OK;
	}
	name = ox_output(im, n, 0, dt, 0, scalar);
	per = ox_temp(im, n, "per");
	ox_stage(im, n, per, r, t->shape, NULL, term);
	for (int k = 0; k < r; k++)
		red[k] = ox_raxis(n);
	all = binders(r, red, t->shape);
	term = ts_asprintf("(sum(%s) %s)", all, load_at(per, r, red));
	if (!strcmp(l->reduction, "sum")) {
		ox_stage(im, n, name, 0, scalar, NULL, term);
		return TS_OK;
	}
	if (wt) {
		const char *den = ox_temp(im, n, "weight");

		ox_stage(im, n, den, r, t->shape, NULL, wt);
		ox_stage(im, n, name, 0, scalar, NULL, ts_asprintf("%s / (sum(%s) "
			"%s)", term, all, load_at(den, r, red)));
	} else {
		ox_stage(im, n, name, 0, scalar, NULL, ts_asprintf("%s / %s", term,
			ox_lit(dt, (double)ox_numel(r, t->shape))));
	}
	return TS_OK;
}

/* NegativeLogLikelihoodLoss (opset 12, 13): input (N, C, d1, ...) of log
 * probabilities, targets (N, d1, ...), optional weight (C); reduction
 * none, sum or mean (default); ignore_index. */
static ts_status lower_nll_loss(struct ox_importer *im, struct ox_node *n)
{
	struct loss l;

	if (loss_read(im, n, &l) < 0)
		return TS_ERROR;
	return loss_write(im, n, &l);
}

/* SoftmaxCrossEntropyLoss (opset 12, 13): the loss above on the
 * LogSoftmax of the scores over axis 1, which is output 1 (log_prob)
 * when wanted. */
static ts_status lower_sce_loss(struct ox_importer *im, struct ox_node *n)
{
	struct loss l;
	struct ox_value *x;
	const char *mx, *ls, *xi[TS_MAX_DIMS], *ri[TS_MAX_DIMS], *c;
	int64_t rshape[TS_MAX_DIMS];
	int rr;

	if (loss_read(im, n, &l) < 0)
		return TS_ERROR;
	x = l.x;
	/* The reduced stages have the targets' shape; the class axis is r. */
	rr = x->ndim - 1;
	c = ox_raxis(n);
	xi[0] = ox_axis(0);
	xi[1] = c;
	ri[0] = ox_axis(0);
	rshape[0] = x->shape[0];
	for (int k = 2; k < x->ndim; k++) {
		xi[k] = ox_axis(k - 1);
		ri[k - 1] = ox_axis(k);
		rshape[k - 1] = x->shape[k];
	}
	mx = ox_temp(im, n, "max");
	ls = ox_temp(im, n, "logsum");
	ox_stage(im, n, mx, rr, rshape, NULL, ts_asprintf("max(%s: %lld) %s",
		c, (long long)x->shape[1], ox_load(im, n, x, xi)));
	ox_stage(im, n, ls, rr, rshape, NULL, ts_asprintf("log(sum(%s: %lld) "
		"exp(%s - %s))", c, (long long)x->shape[1],
		ox_load(im, n, x, xi), load_all(mx, rr)));
	l.lp = ox_output(im, n, 1, x->dtype, x->ndim, x->shape);
	if (!l.lp)
		l.lp = ox_temp(im, n, "logprob");
	ox_stage(im, n, l.lp, x->ndim, x->shape, NULL, ts_asprintf(
		"%s - %s - %s", ox_load_same(im, n, x), load_at(mx, rr, ri),
		load_at(ls, rr, ri)));
	return loss_write(im, n, &l);
}

/* Dropout in inference: the output is the input, the mask all true (of
 * the input's type before opset 10).  Training draws a random mask, which
 * is refused unless its ratio is 0: training is is_test = 0 in opset 6,
 * never in opsets 7 to 11 (the runtime decides, and this one infers), and
 * the training_mode input from opset 12, which must then be known at
 * import, as must the ratio input when it trains.  The seed is
 * irrelevant without randomness. */
static ts_status lower_dropout(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x;
	double ratio = 0.5, train = 0;
	int64_t is_test = 0;
	const char *name;
	ts_dtype mt;

	if (ox_need(im, n, 0, 1) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (ox_opset(im) < 12) {
		if (n->nin > 1)
			return ox_fail(im, n, "%d inputs: before opset 12 the "
				"ratio is an attribute", n->nin);
		if (ox_attr_float(im, n, "ratio", 0.5, &ratio) < 0)
			return TS_ERROR;
		if (ox_opset(im) < 7) {
			if (ox_attr_int(im, n, "is_test", 0, &is_test) < 0)
				return TS_ERROR;
			train = is_test == 0;
		}
	} else if (ox_const_float(im, n, 2, "training_mode", 0, &train) < 0 ||
	    (train != 0 && ox_const_float(im, n, 1, "ratio", 0.5,
	    &ratio) < 0)) {
		return TS_ERROR;
	}
	if (train != 0 && ratio != 0)
		return ox_fail(im, n, "training mode with ratio %g draws a "
			"random mask: not supported (only inference is)", ratio);
	name = ox_output(im, n, 0, x->dtype, x->ndim, x->shape);
	ox_stage(im, n, name, x->ndim, x->shape, NULL, ox_load_same(im, n, x));
	mt = ox_opset(im) < 10 ? x->dtype : TS_BOOL;
	name = ox_output(im, n, 1, mt, x->ndim, x->shape);
	ox_stage(im, n, name, x->ndim, x->shape, NULL, ox_tlit(mt, 1));
	return TS_OK;
}

/* Scatters.  Each output element is the data's, or what the updates that
 * land on it make of it: the last of them (the greatest update position
 * whose index matches), or the data combined with all of them (add: a sum
 * of the matching updates, mul: a product).  Quadratic, but every
 * element is one stage's expression. */

/* An index read as i64, a negative one counted from the end "d". */
static char *wrap_index(const char *ld, ts_dtype t, int64_t d)
{
	const char *e = t == TS_I64 ? ld : ts_asprintf("i64(%s)", ld);

	return ts_asprintf("select(%s < 0, %s + %lld, %s)", e, e,
		(long long)d, e);
}

/* "clamp(e, 0, d - 1)", so that a read is in bounds whatever "e". */
static char *clamped(const char *e, int64_t d)
{
	return ts_asprintf("clamp(%s, 0, %lld)", e, (long long)TS_MAX(d - 1, 0));
}

/* The coordinate of extent "ext" and stride "st" of flat position "e". */
static char *unflat(const char *e, int64_t st, int64_t ext, int64_t total)
{
	if (ext == 1)
		return ts_strdup("0");
	if (st == 1)
		return st * ext == total ? ts_strdup(e) :
			ts_asprintf("%s %% %lld", e, (long long)ext);
	if (st * ext == total)
		return ts_asprintf("%s // %lld", e, (long long)st);
	return ts_asprintf("%s // %lld %% %lld", e, (long long)st,
		(long long)ext);
}

/* The reduction attribute of ScatterElements and ScatterND (from opset
 * 16; none before): 0 none, 1 add, 2 mul. */
static ts_status scatter_reduction(struct ox_importer *im,
	const struct ox_node *n, const struct ox_value *x, int *red)
{
	const char *s;

	if (ox_attr_string(im, n, "reduction", "none", &s) < 0)
		return TS_ERROR;
	*red = !strcmp(s, "none") ? 0 : !strcmp(s, "add") ? 1 :
		!strcmp(s, "mul") ? 2 : -1;
	if (*red < 0)
		return ox_fail(im, n, "reduction '%s' is not supported (none, "
			"add and mul are)", s);
	if (*red && x->dtype == TS_BOOL)
		return ox_fail(im, n, "reduction '%s' of bool data", s);
	return TS_OK;
}

/* Output 0 of a scatter of input 0 with a reduction: the data combined
 * with the sum (add) or product (mul) over the update positions "bind"
 * of the update "upd" (read at them) where "match" says it lands on the
 * element. */
static void scatter_combine(struct ox_importer *im, struct ox_node *n,
	int red, const char *bind, const char *match, const char *upd)
{
	struct ox_value *x = n->in[0];
	const char *name = ox_output(im, n, 0, x->dtype, x->ndim, x->shape);

	ox_stage(im, n, name, x->ndim, x->shape, NULL, ts_asprintf(
		"%s %s (%s(%s) select(%s, %s, %s))", ox_load_same(im, n, x),
		red == 1 ? "+" : "*", red == 1 ? "sum" : "prod", bind, match,
		upd, ox_lit(x->dtype, red == 1 ? 0 : 1)));
}

/* A stage of the data's first "ndim" axes (those "match" reads): the
 * greatest update position "pos" over "bind" that lands on the element
 * ("match"), or -1; its load. */
static char *scatter_last(struct ox_importer *im, struct ox_node *n,
	int ndim, const char *bind, const char *match, const char *pos)
{
	struct ox_value *x = n->in[0];
	const char *last = ox_temp(im, n, "last");

	ox_stage(im, n, last, ndim, x->shape, NULL, ts_asprintf(
		"max(%s) select(%s, %s, i64(-1))", bind, match, pos));
	return load_all(last, ndim);
}

/* Output 0 of a scatter without reduction: the update "upd" (read at
 * the position "last" loads) where one lands, else the data. */
static void scatter_replace(struct ox_importer *im, struct ox_node *n,
	const char *last, const char *upd)
{
	struct ox_value *x = n->in[0];
	const char *name = ox_output(im, n, 0, x->dtype, x->ndim, x->shape);

	ox_stage(im, n, name, x->ndim, x->shape, NULL, ts_asprintf(
		"select(%s >= 0, %s, %s)", last, upd, ox_load_same(im, n, x)));
}

/* "a && b", or "b" when "a" is NULL. */
static char *both(char *a, const char *b)
{
	return a ? ts_asprintf("%s && %s", a, b) : ts_strdup(b);
}

/* ScatterElements (opsets 11 to 17; reduction from 16) and Scatter
 * (opsets 9, 10): updates[j] goes to the data's position j with the
 * coordinate on "axis" replaced by indices[j] (negative ones from the
 * end); indices and updates have one shape, the data's rank.  With
 * repeated indices and no reduction, the last update wins. */
static ts_status lower_scatter_elements(struct ox_importer *im,
	struct ox_node *n)
{
	struct ox_value *x, *ind, *upd;
	int64_t axis;
	int ax, red = 0;
	const char *r, *ii[TS_MAX_DIMS], *ui[TS_MAX_DIMS];
	char *match = NULL, *bind, *last;

	if (ox_need(im, n, 0, 3) < 0 || ox_need(im, n, 1, 3) < 0 ||
	    ox_need(im, n, 2, 3) < 0 ||
	    ox_attr_int(im, n, "axis", 0, &axis) < 0)
		return TS_ERROR;
	x = n->in[0];
	ind = n->in[1];
	upd = n->in[2];
	if (need_int(im, n, ind, "indices") < 0 ||
	    ox_axis_norm(im, n, axis, x->ndim, &ax) < 0 ||
	    (!strcmp(n->op, "ScatterElements") &&
	    scatter_reduction(im, n, x, &red) < 0))
		return TS_ERROR;
	if (ind->ndim != x->ndim || upd->ndim != x->ndim)
		return ox_fail(im, n, "indices and updates must have the "
			"data's rank %d", x->ndim);
	for (int d = 0; d < x->ndim; d++)
		if (ind->shape[d] != upd->shape[d] ||
		    (d != ax && ind->shape[d] > x->shape[d]))
			return ox_fail(im, n, "indices and updates do not fit "
				"the data in dimension %d", d);
	if (upd->dtype != x->dtype)
		return ox_fail(im, n, "updates of type %s for data of type %s",
			ts_dtype_name(upd->dtype), ts_dtype_name(x->dtype));
	r = ox_raxis(n);
	bind = ts_asprintf("%s: %lld", r, (long long)ind->shape[ax]);
	/* Along the other axes an update lands at its own position: the
	 * element must be within the indices' extent. */
	for (int d = 0; d < x->ndim; d++) {
		ii[d] = d == ax ? r : ox_axis(d);
		if (d != ax && ind->shape[d] < x->shape[d])
			match = both(match, ts_asprintf("%s < %lld", ox_axis(d),
				(long long)ind->shape[d]));
	}
	match = both(match, ts_asprintf("%s == %s", wrap_index(ox_load(im, n,
		ind, ii), ind->dtype, x->shape[ax]), ox_axis(ax)));
	/* The updates are read under a condition the bounds check cannot
	 * follow (it reads the indices): clamped. */
	for (int d = 0; d < x->ndim; d++)
		ui[d] = d == ax ? r : ind->shape[d] < x->shape[d] ?
			clamped(ox_axis(d), ind->shape[d]) : ox_axis(d);
	if (red) {
		scatter_combine(im, n, red, bind, match,
			ox_load(im, n, upd, ui));
		return TS_OK;
	}
	last = scatter_last(im, n, x->ndim, bind, match, r);
	ui[ax] = clamped(last, ind->shape[ax]);
	scatter_replace(im, n, last, ox_load(im, n, upd, ui));
	return TS_OK;
}

/* ScatterND (opsets 11 to 17; reduction from 16): indices (m..., k) name
 * for each update position j the first k coordinates of a slice of the
 * data (negative ones from the end), which updates[j, ...] replaces (or
 * is added to, multiplied by).  With repeated indices and no reduction,
 * the last update wins. */
static ts_status lower_scatter_nd(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x, *ind, *upd;
	int q, k, red;
	const char *ra[TS_MAX_DIMS], *ii[TS_MAX_DIMS], *ui[TS_MAX_DIMS];
	int64_t m[TS_MAX_DIMS], one = 1, count;
	char *match = NULL, *bind, *pos = NULL, *last, *at;

	if (ox_need(im, n, 0, 3) < 0 || ox_need(im, n, 1, 3) < 0 ||
	    ox_need(im, n, 2, 3) < 0)
		return TS_ERROR;
	x = n->in[0];
	ind = n->in[1];
	upd = n->in[2];
	if (need_int(im, n, ind, "indices") < 0 ||
	    scatter_reduction(im, n, x, &red) < 0)
		return TS_ERROR;
	q = ind->ndim;
	k = q ? (int)ind->shape[q - 1] : -1;
	if (q < 1 || k < 1 || k > x->ndim)
		return ox_fail(im, n, "indices of shape (..., k) with 1 <= k <= "
			"%d are needed", x->ndim);
	if (upd->ndim != q - 1 + x->ndim - k)
		return ox_fail(im, n, "updates of rank %d, expected %d",
			upd->ndim, q - 1 + x->ndim - k);
	for (int d = 0; d < upd->ndim; d++)
		if (upd->shape[d] != (d < q - 1 ? ind->shape[d] :
		    x->shape[d - (q - 1) + k]))
			return ox_fail(im, n, "updates' dimension %d does not "
				"fit the indices and the data", d);
	if (upd->dtype != x->dtype)
		return ox_fail(im, n, "updates of type %s for data of type %s",
			ts_dtype_name(upd->dtype), ts_dtype_name(x->dtype));
	/* The update positions: the indices' leading axes, or one. */
	count = ox_numel(q - 1, ind->shape);
	for (int j = 0; j < q - 1; j++) {
		ra[j] = ox_raxis(n);
		m[j] = ind->shape[j];
	}
	if (q == 1)
		ra[0] = ox_raxis(n);
	bind = binders(q == 1 ? 1 : q - 1, ra, q == 1 ? &one : m);
	for (int j = 0; j < q - 1; j++)
		pos = pos ? ts_asprintf("(%s) * %lld + %s", pos,
			(long long)m[j], ra[j]) : ts_strdup(ra[j]);
	if (!pos)
		pos = ts_strdup(ra[0]);
	for (int j = 0; j < q - 1; j++)
		ii[j] = ra[j];
	for (int t = 0; t < k; t++) {
		ii[q - 1] = ts_asprintf("%d", t);
		match = both(match, ts_asprintf("%s == %s", wrap_index(ox_load(
			im, n, ind, ii), ind->dtype, x->shape[t]),
			ox_axis(t)));
	}
	for (int d = k; d < x->ndim; d++)
		ui[q - 1 + d - k] = ox_axis(d);
	if (red) {
		for (int j = 0; j < q - 1; j++)
			ui[j] = ra[j];
		scatter_combine(im, n, red, bind, match,
			ox_load(im, n, upd, ui));
		return TS_OK;
	}
	last = scatter_last(im, n, k, bind, match, pos);
	at = clamped(last, count);
	for (int64_t j = q - 2, s = 1; j >= 0; s *= m[j--])
		ui[j] = unflat(at, s, m[j], count);
	scatter_replace(im, n, last, ox_load(im, n, upd, ui));
	return TS_OK;
}

/* TopK: the k largest (or smallest, from opset 11) elements along "axis"
 * (default -1) and their indices (i64), in order, equal elements by
 * their index; k is an attribute before opset 10, then an input known at
 * import.  Unsorted output (sorted = 0) may be in any order: this one is
 * sorted.  Each element's rank is the count of the elements ahead of it;
 * the q-th output is the element of rank q.  Quadratic in the axis's
 * extent. */
static ts_status lower_topk(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x;
	int64_t axis, k, largest = 1, sorted = 1, shape[TS_MAX_DIMS], len;
	int ax, cnt;
	const char *rank, *idx, *name, *r, *xi[TS_MAX_DIMS], *xr[TS_MAX_DIMS];
	const char *gt;
	char *a, *b;

	if (ox_need(im, n, 0, 1) < 0 ||
	    ox_attr_int(im, n, "axis", -1, &axis) < 0)
		return TS_ERROR;
	if (ox_opset(im) >= 11 &&
	    (ox_attr_int(im, n, "largest", 1, &largest) < 0 ||
	    ox_attr_int(im, n, "sorted", 1, &sorted) < 0))
		return TS_ERROR;
	if (ox_opset(im) < 10) {
		if (ox_attr_int(im, n, "k", -1, &k) < 0)
			return TS_ERROR;
	} else if (ox_const_ints(im, n, 1, "K", &k, 1, &cnt) < 0) {
		return TS_ERROR;
	} else if (cnt != 1) {
		return ox_fail(im, n, "K has %d values, not 1", cnt);
	}
	x = n->in[0];
	if (x->dtype == TS_BOOL)
		return ox_fail(im, n, "input of type bool is not supported");
	if (x->ndim < 1)
		return ox_fail(im, n, "the input is a scalar");
	if (ox_axis_norm(im, n, axis, x->ndim, &ax) < 0)
		return TS_ERROR;
	len = x->shape[ax];
	if (k < 1 || k > len)
		return ox_fail(im, n, "k = %lld is not within 1 .. %lld",
			(long long)k, (long long)len);
	memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
	shape[ax] = k;
	r = ox_raxis(n);
	for (int d = 0; d < x->ndim; d++) {
		xi[d] = ox_axis(d);
		xr[d] = d == ax ? r : ox_axis(d);
	}
	a = ox_load(im, n, x, xr);
	b = ox_load_same(im, n, x);
	gt = largest ? ">" : "<";
	rank = ox_temp(im, n, "rank");
	ox_stage(im, n, rank, x->ndim, x->shape, NULL, ts_asprintf(
		"sum(%s: %lld) select(%s %s %s || (%s == %s && %s < %s), i64(1), "
		"i64(0))", r, (long long)len, a, gt, b, a, b, r, ox_axis(ax)));
	idx = ox_output(im, n, 1, TS_I64, x->ndim, shape);
	if (!idx)
		idx = ox_temp(im, n, "index");
	ox_stage(im, n, idx, x->ndim, shape, NULL, ts_asprintf(
		"min(%s: %lld) select(%s == %s, %s, i64(%lld))", r,
		(long long)len, load_at(rank, x->ndim, xr), ox_axis(ax), r,
		(long long)len));
	name = ox_output(im, n, 0, x->dtype, x->ndim, shape);
	xi[ax] = clamped(load_all(idx, x->ndim), len);
	ox_stage(im, n, name, x->ndim, shape, NULL, ox_load(im, n, x, xi));
	(void)sorted;	/* read for its type: sorted is one of any order */
	return TS_OK;
}

/* BitShift (opset 11): x shifted left or right ("direction") by y bits,
 * element by element with broadcasting, of unsigned integers; of those
 * the language has u8 only.  A shift by the width or more gives 0 (as
 * NumPy's does for these sizes).  The power of two is chosen by a select
 * chain, and the shift is a product or floor division by it. */
static ts_status lower_bitshift(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x, *y;
	const char *dir, *name, *xl, *yl;
	int64_t shape[TS_MAX_DIMS];
	int nd, bits = 8;
	char *pow2;
	bool left;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0 ||
	    ox_attr_string(im, n, "direction", "", &dir) < 0)
		return TS_ERROR;
	if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
		return ox_fail(im, n, "direction '%s' is neither LEFT nor RIGHT",
			dir);
	left = !strcmp(dir, "LEFT");
	x = n->in[0];
	y = n->in[1];
	if (x->dtype != TS_U8 || y->dtype != TS_U8)
		return ox_fail(im, n, "inputs of type %s and %s: only u8 is "
			"supported", ts_dtype_name(x->dtype),
			ts_dtype_name(y->dtype));
	if (ox_broadcast(im, n, x->ndim, x->shape, y->ndim, y->shape, &nd,
	    shape) < 0)
		return TS_ERROR;
	name = ox_output(im, n, 0, x->dtype, nd, shape);
	xl = ox_load_bcast(im, n, x, nd, shape);
	yl = ox_load_bcast(im, n, y, nd, shape);
	pow2 = ts_asprintf("%d", 1 << (bits - 1));
	for (int b = bits - 2; b >= 0; b--)
		pow2 = ts_asprintf("select(%s == %d, %s(%d), %s)", yl, b,
			ts_dtype_name(x->dtype), 1 << b, pow2);
	ox_stage(im, n, name, nd, shape, NULL, ts_asprintf(
		"select(%s >= %d, %s, %s %s %s)", yl, bits,
		ox_tlit(x->dtype, 0), xl, left ? "*" : "//", pow2));
	return TS_OK;
}

/* ReverseSequence (opset 10): along time_axis (default 0), the first
 * sequence_lens[b] elements of each batch b (batch_axis, default 1) in
 * reverse order, the rest as they are. */
static ts_status lower_reverse_sequence(struct ox_importer *im,
	struct ox_node *n)
{
	struct ox_value *x, *len;
	int64_t ta, ba;
	const char *idx[TS_MAX_DIMS], *bi[1], *name, *l, *t;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0 ||
	    ox_attr_int(im, n, "time_axis", 0, &ta) < 0 ||
	    ox_attr_int(im, n, "batch_axis", 1, &ba) < 0)
		return TS_ERROR;
	x = n->in[0];
	len = n->in[1];
	if (need_int(im, n, len, "sequence_lens") < 0)
		return TS_ERROR;
	if (x->ndim < 2 || (ta != 0 && ta != 1) || (ba != 0 && ba != 1) ||
	    ta == ba)
		return ox_fail(im, n, "time_axis %lld and batch_axis %lld must "
			"be 0 and 1 of an input of rank 2 or more",
			(long long)ta, (long long)ba);
	if (len->ndim != 1 || len->shape[0] != x->shape[ba])
		return ox_fail(im, n, "sequence_lens must have shape (%lld)",
			(long long)x->shape[ba]);
	bi[0] = ox_axis((int)ba);
	l = ox_load(im, n, len, bi);
	if (len->dtype != TS_I64)
		l = ts_asprintf("i64(%s)", l);
	t = ox_axis((int)ta);
	for (int d = 0; d < x->ndim; d++)
		idx[d] = d == ta ? clamped(ts_asprintf("%s - 1 - %s", l, t),
			x->shape[ta]) : ox_axis(d);
	name = ox_output(im, n, 0, x->dtype, x->ndim, x->shape);
	ox_stage(im, n, name, x->ndim, x->shape, NULL, ts_asprintf(
		"select(%s < %s, %s, %s)", t, l, ox_load(im, n, x, idx),
		ox_load_same(im, n, x)));
	return TS_OK;
}

/* The position of element "idx" of a tensor of shape "shape" in C
 * order. */
static char *flat_of(int ndim, const int64_t *shape, const char *const *idx)
{
	char *e = NULL;

	for (int d = 0; d < ndim; d++)
		e = !e ? ts_strdup(idx[d]) : shape[d] == 1 ? e :
			ts_asprintf("(%s) * %lld + %s", e, (long long)shape[d],
			idx[d]);
	return e ? e : ts_strdup("0");
}

/* MaxUnpool (opsets 9, 11): X's elements written into zeros at the
 * positions "I" gives, flat indices into the whole output, whose shape is
 * (in - 1) * stride - pads + kernel per spatial axis.  An output_shape
 * input other than that one is refused: where the unpooled tensor goes
 * in a larger one is not settled (ONNX's own test pads at the end,
 * runtimes index the larger tensor).  Any index may point anywhere, so
 * each output element looks at all of X (the last writer wins). */
static ts_status lower_max_unpool(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x, *ind;
	int64_t k[TS_MAX_DIMS], s[TS_MAX_DIMS], p[2 * TS_MAX_DIMS];
	int64_t shape[TS_MAX_DIMS], os[TS_MAX_DIMS];
	const char *ra[TS_MAX_DIMS], *xi[TS_MAX_DIMS], *oi[TS_MAX_DIMS];
	const char *name, *last;
	int nk, ns, np, sp, cnt;
	char *pos;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0 ||
	    ox_attr_ints(im, n, "kernel_shape", k, TS_MAX_DIMS, &nk) < 0 ||
	    ox_attr_ints(im, n, "strides", s, TS_MAX_DIMS, &ns) < 0 ||
	    ox_attr_ints(im, n, "pads", p, 2 * TS_MAX_DIMS, &np) < 0)
		return TS_ERROR;
	x = n->in[0];
	ind = n->in[1];
	sp = x->ndim - 2;
	if (need_int(im, n, ind, "indices") < 0)
		return TS_ERROR;
	if (sp < 1 || nk != sp || (ns >= 0 && ns != sp) ||
	    (np >= 0 && np != 2 * sp))
		return ox_fail(im, n, "kernel_shape, strides and pads must "
			"have one (pads two) entries per spatial axis of the "
			"input of rank %d", x->ndim);
	if (ind->ndim != x->ndim ||
	    memcmp(ind->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim))
		return ox_fail(im, n, "the indices must have the input's shape");
	shape[0] = x->shape[0];
	shape[1] = x->shape[1];
	for (int d = 0; d < sp; d++)
		shape[d + 2] = (x->shape[d + 2] - 1) * (ns < 0 ? 1 : s[d]) -
			(np < 0 ? 0 : p[d] + p[d + sp]) + k[d];
	if (ox_has(n, 2)) {
		if (ox_const_ints(im, n, 2, "output_shape", os, TS_MAX_DIMS,
		    &cnt) < 0)
			return TS_ERROR;
		if (cnt != x->ndim || memcmp(os, shape,
		    sizeof(int64_t) * (size_t)cnt))
			return ox_fail(im, n, "an output_shape other than the "
				"unpooled shape is not supported (where the "
				"result lies in it is not settled)");
	}
	for (int d = 0; d < x->ndim; d++) {
		ra[d] = ox_raxis(n);
		oi[d] = ox_axis(d);
		if (shape[d] < 1)
			return ox_fail(im, n, "the output's dimension %d is %lld",
				d, (long long)shape[d]);
	}
	name = ox_output(im, n, 0, x->dtype, x->ndim, shape);
	last = ox_temp(im, n, "last");
	pos = flat_of(x->ndim, x->shape, ra);
	ox_stage(im, n, last, x->ndim, shape, NULL, ts_asprintf(
		"max(%s) select(%s == %s, %s, i64(-1))", binders(x->ndim, ra,
		x->shape), ind->dtype == TS_I64 ? ox_load(im, n, ind, ra) :
		ts_asprintf("i64(%s)", ox_load(im, n, ind, ra)),
		flat_of(x->ndim, shape, oi), pos));
	last = load_all(last, x->ndim);
	for (int64_t d = x->ndim - 1, st = 1; d >= 0; st *= x->shape[d--])
		xi[d] = unflat(clamped(last, ox_numel(x->ndim, x->shape)), st,
			x->shape[d], ox_numel(x->ndim, x->shape));
	ox_stage(im, n, name, x->ndim, shape, NULL, ts_asprintf(
		"select(%s >= 0, %s, %s)", last, ox_load(im, n, x, xi),
		ox_tlit(x->dtype, 0)));
	return TS_OK;
}

/* A value known at import made here, read by stages as a weight. */
static struct ox_value *table(struct ox_importer *im, struct ox_node *n,
	const char *what, ts_dtype t, int ndim, const int64_t *shape)
{
	struct ox_value *v = ts_new(struct ox_value);

	v->onnx = ts_asprintf("%s_%s", n->p->output[0], what);
	v->dtype = t;
	v->ndim = ndim;
	memcpy(v->shape, shape, sizeof(int64_t) * (size_t)ndim);
	v->konst = ts_array_alloc(ox_ctx(im), t, ndim, shape);
	return v;
}

/* Input "k", which must be known at import. */
static ts_status need_known(struct ox_importer *im, const struct ox_node *n,
	int k, const char *what)
{
	if (ox_need(im, n, k, k + 1) < 0)
		return TS_ERROR;
	if (n->in[k]->konst)
		return TS_OK;
	return ox_fail(im, n, "%s (input %d, '%s') must be known at import, "
		"not computed at run time", what, k, n->in[k]->onnx);
}

/* Compress (opsets 9, 11): the slices along "axis" (of the flattened
 * input without one) whose condition is true; the condition, which may
 * be shorter than the axis, must be known at import. */
static ts_status lower_compress(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x, *c, *tab;
	int64_t axis, shape[TS_MAX_DIMS], len, cnt = 0;
	const char *idx[TS_MAX_DIMS], *name, *one[1];
	int ax = -1;

	if (ox_need(im, n, 0, 2) < 0 || need_known(im, n, 1, "condition") < 0)
		return TS_ERROR;
	x = n->in[0];
	c = n->in[1];
	if (c->ndim != 1)
		return ox_fail(im, n, "the condition must be 1-D");
	if (ox_attr(n, "axis")) {
		if (ox_attr_int(im, n, "axis", 0, &axis) < 0 ||
		    ox_axis_norm(im, n, axis, x->ndim, &ax) < 0)
			return TS_ERROR;
	}
	len = ax < 0 ? ox_numel(x->ndim, x->shape) : x->shape[ax];
	if (c->shape[0] > len)
		return ox_fail(im, n, "the condition has %lld entries for %lld "
			"slices", (long long)c->shape[0], (long long)len);
	for (int64_t i = 0; i < c->shape[0]; i++)
		cnt += ts_array_get(c->konst, i) != 0;
	if (!cnt)
		return ox_fail(im, n, "the condition selects nothing: an empty "
			"output is not supported");
	tab = table(im, n, "selected", TS_I64, 1, &cnt);
	for (int64_t i = 0, j = 0; i < c->shape[0]; i++)
		if (ts_array_get(c->konst, i) != 0)
			((int64_t *)tab->konst->data)[j++] = i;
	one[0] = ox_axis(ax < 0 ? 0 : ax);
	if (ax < 0) {
		/* The flattened input: each selected element's position
		 * spelled out along x's axes. */
		name = ox_output(im, n, 0, x->dtype, 1, &cnt);
		for (int64_t d = x->ndim - 1, st = 1; d >= 0;
		    st *= x->shape[d--])
			idx[d] = unflat(ox_load(im, n, tab, one), st,
				x->shape[d], len);
		ox_stage(im, n, name, 1, &cnt, NULL, ox_load(im, n, x, idx));
		return TS_OK;
	}
	memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
	shape[ax] = cnt;
	for (int d = 0; d < x->ndim; d++)
		idx[d] = d == ax ? ox_load(im, n, tab, one) : ox_axis(d);
	name = ox_output(im, n, 0, x->dtype, x->ndim, shape);
	ox_stage(im, n, name, x->ndim, shape, NULL, ox_load(im, n, x, idx));
	return TS_OK;
}

/* NonZero (opsets 9, 13): the indices (i64, one row per axis) of the
 * nonzero elements in C order.  Its output's shape depends on the
 * values, so the input must be known at import; the result is too. */
static ts_status lower_nonzero(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x;
	int64_t cnt = 0, shape[2], size;
	ts_array *a;

	if (need_known(im, n, 0, "the input") < 0)
		return TS_ERROR;
	x = n->in[0];
	size = ox_numel(x->ndim, x->shape);
	for (int64_t i = 0; i < size; i++)
		cnt += ts_array_get(x->konst, i) != 0;
	shape[0] = x->ndim;
	shape[1] = cnt;
	if (!(a = ts_array_alloc(ox_ctx(im), TS_I64, 2, shape)))
		return TS_ERROR;
	for (int64_t i = 0, j = 0; i < size; i++) {
		int64_t rest = i;

		if (ts_array_get(x->konst, i) == 0)
			continue;
		for (int d = x->ndim - 1; d >= 0; d--) {
			((int64_t *)a->data)[d * cnt + j] = rest % x->shape[d];
			rest /= x->shape[d];
		}
		j++;
	}
	if (ox_output(im, n, 0, TS_I64, 2, shape))
		n->out[0]->konst = a;
	return TS_OK;
}

const struct ox_op ox_ops_misc[] = {
	{ "BitShift", lower_bitshift },
	{ "ReverseSequence", lower_reverse_sequence },
	{ "MaxUnpool", lower_max_unpool },
	{ "Compress", lower_compress },
	{ "NonZero", lower_nonzero },
	{ "TopK", lower_topk },
	{ "ScatterND", lower_scatter_nd },
	{ "ScatterElements", lower_scatter_elements },
	{ "Scatter", lower_scatter_elements },
	{ "Dropout", lower_dropout },
	{ "NegativeLogLikelihoodLoss", lower_nll_loss },
	{ "SoftmaxCrossEntropyLoss", lower_sce_loss },
	{ NULL, NULL },
};
