/* Operators outside the main families: the losses, Dropout, the
 * scatters, TopK, BitShift, ReverseSequence, MaxUnpool, Compress,
 * NonZero, the recurrent layers (RNN, GRU, LSTM) and GridSample.
 *
 * Where an output element depends on data-dependent positions (a
 * scatter, an unpooling), it is written as a reduction over the
 * candidates that selects the one that lands on it: quadratic, but a
 * compute declaration like any other.  Data-dependent reads are clamped
 * into bounds, so that no input, however wrong, reads outside a
 * tensor. */
#include <config.h>

#include <math.h>
#include <strings.h>

#include "onnx/internal.h"

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
	term = ts_asprintf("-%s", l->lp ? ox_load_name(l->lp, x->ndim, xi) :
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
	term = ts_asprintf("(sum(%s) %s)", all, ox_load_name(per, r, red));
	if (!strcmp(l->reduction, "sum")) {
		ox_stage(im, n, name, 0, scalar, NULL, term);
		return TS_OK;
	}
	if (wt) {
		const char *den = ox_temp(im, n, "weight");

		ox_stage(im, n, den, r, t->shape, NULL, wt);
		ox_stage(im, n, name, 0, scalar, NULL, ts_asprintf("%s / (sum(%s) "
			"%s)", term, all, ox_load_name(den, r, red)));
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
		ox_load(im, n, x, xi), ox_load_name_same(mx, rr)));
	l.lp = ox_output(im, n, 1, x->dtype, x->ndim, x->shape);
	if (!l.lp)
		l.lp = ox_temp(im, n, "logprob");
	ox_stage(im, n, l.lp, x->ndim, x->shape, NULL, ts_asprintf(
		"%s - %s - %s", ox_load_same(im, n, x), ox_load_name(mx, rr, ri),
		ox_load_name(ls, rr, ri)));
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
	return ox_load_name_same(last, ndim);
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
		(long long)len, ox_load_name(rank, x->ndim, xr), ox_axis(ax), r,
		(long long)len));
	name = ox_output(im, n, 0, x->dtype, x->ndim, shape);
	xi[ax] = clamped(ox_load_name_same(idx, x->ndim), len);
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
	last = ox_load_name_same(last, x->ndim);
	for (int64_t d = x->ndim - 1, st = 1; d >= 0; st *= x->shape[d--])
		xi[d] = unflat(clamped(last, ox_numel(x->ndim, x->shape)), st,
			x->shape[d], ox_numel(x->ndim, x->shape));
	ox_stage(im, n, name, x->ndim, shape, NULL, ts_asprintf(
		"select(%s >= 0, %s, %s)", last, ox_load(im, n, x, xi),
		ox_tlit(x->dtype, 0)));
	return TS_OK;
}

/* Input "k", which must be known at import because the output's shape
 * depends on its values (a program's shapes are fixed). */
static ts_status need_known(struct ox_importer *im, const struct ox_node *n,
	int k, const char *what)
{
	if (ox_need(im, n, k, k + 1) < 0)
		return TS_ERROR;
	if (n->in[k]->konst)
		return TS_OK;
	return ox_fail(im, n, "%s (input %d, '%s') must be known at import, "
		"not computed at run time: the output's shape depends on its "
		"values, and shapes are fixed at import", what, k,
		n->in[k]->onnx);
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
	tab = ox_new_const(im, n, "selected", TS_I64, 1, &cnt);
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

/* Recurrent layers: RNN, GRU and LSTM, unrolled over the time steps at
 * import.  The input projection of every step is one stage per
 * direction; each step then writes its gates and states as stages of
 * shape (batch, hidden) that the next step reads. */

enum { RNN, GRU, LSTM };

struct rnn {
	int kind, gates, ndir;
	int64_t seq, batch, in, hid, lbr;
	bool layout, has_clip;
	double clip;
	ts_dtype t;
	struct ox_value *x, *w, *r, *b, *h0, *c0, *p;
	/* Per direction, the activations (f, g, h) as templates of "{x}". */
	const char *act[2][3];
	const char *dir;
	/* Whether direction d runs backwards in time. */
	bool rev[2];
	/* The last cell state of each direction (LSTM). */
	const char *c_last[2];
	/* The hidden state of each step of each direction. */
	const char **hs[2];
};

/* Activation "name" with the next of "alpha" and "beta" where it takes
 * them ("*ka", "*kb" count those used), as a template of {x}; NULL with
 * an error when unknown. */
static const char *rnn_activation(struct ox_importer *im,
	const struct ox_node *n, const struct rnn *l, const char *name,
	const double *alpha, int na, int *ka, const double *beta, int nb,
	int *kb)
{
	static const struct {
		const char *name;
		const char *tpl;	/* {a} alpha, {b} beta */
		double a, b;		/* defaults; NAN: required */
		int takes;		/* 1 alpha, 2 alpha and beta */
	} acts[] = {
		{ "Relu", "max({x}, 0.0)", 0, 0, 0 },
		{ "Tanh", "tanh({x})", 0, 0, 0 },
		{ "Sigmoid", "sigmoid({x})", 0, 0, 0 },
		{ "Affine", "{a} * {x} + {b}", NAN, NAN, 2 },
		{ "LeakyRelu", "select({x} >= 0.0, {x}, {a} * {x})", 0.01, 0, 1 },
		{ "ThresholdedRelu", "select({x} > {a}, {x}, 0.0)", 1.0, 0, 1 },
		{ "ScaledTanh", "{a} * tanh({b} * {x})", NAN, NAN, 2 },
		{ "HardSigmoid", "clamp({a} * {x} + {b}, 0.0, 1.0)", 0.2, 0.5,
			2 },
		{ "Elu", "select({x} >= 0.0, {x}, {a} * (exp({x}) - 1.0))", 1.0,
			0, 1 },
		{ "Softsign", "{x} / (1.0 + abs({x}))", 0, 0, 0 },
		{ "Softplus", "log(exp({x}) + 1.0)", 0, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(acts) / sizeof(acts[0]); i++) {
		double a = acts[i].a, b = acts[i].b;
		ts_buf out;

		if (strcasecmp(acts[i].name, name))
			continue;
		if (acts[i].takes >= 1 && *ka < na)
			a = alpha[(*ka)++];
		if (acts[i].takes >= 2 && *kb < nb)
			b = beta[(*kb)++];
		if (a != a || b != b)
			return ox_fail(im, n, "activation %s needs "
				"activation_alpha and activation_beta", name),
				NULL;
		ts_buf_init(&out);
		for (const char *p = acts[i].tpl; *p; p++) {
			if (p[0] == '{' && p[2] == '}' && p[1] != 'x') {
				ts_buf_puts(&out, ox_lit(l->t, p[1] == 'a' ?
					a : b));
				p += 2;
			} else {
				ts_buf_putc(&out, *p);
			}
		}
		return out.s;
	}
	return ox_fail(im, n, "activation '%s' is not supported", name), NULL;
}

/* "tpl" with each {x} replaced by "x". */
static char *apply(const char *tpl, const char *x)
{
	ts_buf out;

	ts_buf_init(&out);
	for (const char *p = tpl; *p; p++) {
		if (p[0] == '{' && p[1] == 'x' && p[2] == '}') {
			ts_buf_printf(&out, "(%s)", x);
			p += 2;
		} else {
			ts_buf_putc(&out, *p);
		}
	}
	return out.s;
}

/* Gate pre-activation "e" clipped when clip is set, then activation k. */
static char *gate(const struct rnn *l, int d, int k, const char *e)
{
	if (l->has_clip)
		e = ts_asprintf("clamp(%s, %s, %s)", e, ox_lit(l->t, -l->clip),
			ox_lit(l->t, l->clip));
	return apply(l->act[d][k], e);
}

/* The attributes and inputs of a recurrent layer. */
static ts_status rnn_read(struct ox_importer *im, struct ox_node *n,
	struct rnn *l)
{
	static const int gates[] = { 1, 3, 4 }, nact[] = { 1, 2, 3 };
	static const char *const dflt[][3] = {
		{ "Tanh" }, { "Sigmoid", "Tanh" }, { "Sigmoid", "Tanh", "Tanh" },
	};
	const char *dir, *names[6];
	double alpha[6], beta[6];
	int64_t hid, layout = 0, input_forget = 0, lens[4096];
	int na, nb, ka = 0, kb = 0, cnt;
	const Onnx__AttributeProto *acts;

	l->kind = !strcmp(n->op, "RNN") ? RNN : !strcmp(n->op, "GRU") ? GRU :
		LSTM;
	l->gates = gates[l->kind];
	if (ox_need(im, n, 0, 3) < 0 || ox_need(im, n, 1, 3) < 0 ||
	    ox_need(im, n, 2, 3) < 0 ||
	    ox_attr_string(im, n, "direction", "forward", &dir) < 0 ||
	    ox_attr_int(im, n, "hidden_size", -1, &hid) < 0 ||
	    ox_attr_int(im, n, "layout", 0, &layout) < 0 ||
	    ox_attr_int(im, n, "linear_before_reset", 0, &l->lbr) < 0 ||
	    ox_attr_int(im, n, "input_forget", 0, &input_forget) < 0 ||
	    ox_attr_float(im, n, "clip", 0, &l->clip) < 0 ||
	    ox_attr_floats(im, n, "activation_alpha", alpha, 6, &na) < 0 ||
	    ox_attr_floats(im, n, "activation_beta", beta, 6, &nb) < 0)
		return TS_ERROR;
	l->has_clip = ox_attr(n, "clip") != NULL;
	if (l->has_clip && !(l->clip > 0))
		return ox_fail(im, n, "clip %g is not positive", l->clip);
	if (strcmp(dir, "forward") && strcmp(dir, "reverse") &&
	    strcmp(dir, "bidirectional"))
		return ox_fail(im, n, "direction '%s' is not forward, reverse "
			"or bidirectional", dir);
	l->ndir = strcmp(dir, "bidirectional") ? 1 : 2;
	l->dir = dir;
	if (layout != 0 && layout != 1)
		return ox_fail(im, n, "layout %lld is not 0 or 1",
			(long long)layout);
	l->layout = layout;
	if (input_forget)
		return ox_fail(im, n, "input_forget is not supported");
	l->x = n->in[0];
	l->w = n->in[1];
	l->r = n->in[2];
	l->b = ox_has(n, 3) ? n->in[3] : NULL;
	l->h0 = ox_has(n, 5) ? n->in[5] : NULL;
	l->c0 = l->kind == LSTM && ox_has(n, 6) ? n->in[6] : NULL;
	l->p = l->kind == LSTM && ox_has(n, 7) ? n->in[7] : NULL;
	l->t = l->x->dtype;
	if (need_float(im, n, l->x, "input") < 0)
		return TS_ERROR;
	if (l->x->ndim != 3)
		return ox_fail(im, n, "the input has rank %d, not 3",
			l->x->ndim);
	l->seq = l->x->shape[layout ? 1 : 0];
	l->batch = l->x->shape[layout ? 0 : 1];
	l->in = l->x->shape[2];
	l->hid = l->r->ndim == 3 ? l->r->shape[2] : -1;
	if (hid >= 0 && hid != l->hid)
		return ox_fail(im, n, "hidden_size %lld, but R has %lld columns",
			(long long)hid, (long long)l->hid);
	if (l->hid < 1 || l->seq < 1)
		return ox_fail(im, n, "a hidden size and a sequence length of "
			"at least 1 are needed");
	{
		int64_t gh = l->gates * l->hid;
		const struct { struct ox_value *v; int64_t a, b, c; int nd;
			const char *what; } chk[] = {
			{ l->w, l->ndir, gh, l->in, 3, "W" },
			{ l->r, l->ndir, gh, l->hid, 3, "R" },
			{ l->b, l->ndir, 2 * gh, 0, 2, "B" },
			{ l->h0, layout ? l->batch : l->ndir,
				layout ? l->ndir : l->batch, l->hid, 3,
				"initial_h" },
			{ l->c0, layout ? l->batch : l->ndir,
				layout ? l->ndir : l->batch, l->hid, 3,
				"initial_c" },
			{ l->p, l->ndir, 3 * l->hid, 0, 2, "P" },
		};

		for (size_t i = 0; i < sizeof(chk) / sizeof(chk[0]); i++) {
			const struct ox_value *v = chk[i].v;

			if (!v)
				continue;
			if (v->dtype != l->t || v->ndim != chk[i].nd ||
			    v->shape[0] != chk[i].a || v->shape[1] != chk[i].b ||
			    (chk[i].nd == 3 && v->shape[2] != chk[i].c))
				return ox_fail(im, n, "%s does not have the type "
					"and shape the input and hidden size "
					"give", chk[i].what);
		}
	}
	/* Sequence lengths: all must be the full length. */
	if (ox_has(n, 4)) {
		if (ox_const_ints(im, n, 4, "sequence_lens", lens, 4096,
		    &cnt) < 0)
			return TS_ERROR;
		for (int i = 0; i < cnt; i++)
			if (lens[i] != l->seq)
				return ox_fail(im, n, "sequence_lens other than "
					"the full length %lld are not supported",
					(long long)l->seq);
	}
	/* Activations: per direction, in order, their alphas and betas
	 * taken in order by those that use them. */
	acts = ox_attr(n, "activations");
	if (acts && (int)acts->n_strings != nact[l->kind] * l->ndir)
		return ox_fail(im, n, "%zu activations, expected %d",
			acts->n_strings, nact[l->kind] * l->ndir);
	for (int d = 0; d < l->ndir; d++)
		for (int k = 0; k < nact[l->kind]; k++) {
			const ProtobufCBinaryData *s = acts ?
				&acts->strings[d * nact[l->kind] + k] : NULL;

			names[k] = s ? ts_strndup((const char *)s->data, s->len) :
				dflt[l->kind][k];
			if (!(l->act[d][k] = rnn_activation(im, n, l, names[k],
			    alpha, na < 0 ? 0 : na, &ka, beta, nb < 0 ? 0 : nb,
			    &kb)))
				return TS_ERROR;
		}
	return TS_OK;
}

/* Read the initial state "v" (initial_h or initial_c) of direction "d"
 * at (batch "b", hidden "j"); a literal 0 without it. */
static char *rnn_init(struct ox_importer *im, struct ox_node *n,
	const struct rnn *l, struct ox_value *v, int d, const char *b,
	const char *j)
{
	const char *idx[3], *ds = ts_asprintf("%d", d);

	if (!v)
		return ox_tlit(l->t, 0);
	idx[0] = l->layout ? b : ds;
	idx[1] = l->layout ? ds : b;
	idx[2] = j;
	return ox_load(im, n, v, idx);
}

/* The stage of the input projection of direction "d" for all steps:
 * (seq, batch, gates * hidden), with the biases that add outside the
 * gates' products (GRU's recurrent bias of the candidate stays out with
 * linear_before_reset). */
static const char *rnn_project(struct ox_importer *im, struct ox_node *n,
	const struct rnn *l, int d)
{
	int64_t gh = l->gates * l->hid, shape[3] = { l->seq, l->batch, gh };
	const char *name = ox_temp(im, n, ts_asprintf("xw%d", d)), *r;
	const char *xi[3], *wi[3], *bi[2], *ds = ts_asprintf("%d", d);
	char *e;

	r = ox_raxis(n);
	xi[0] = l->layout ? "i1" : "i0";
	xi[1] = l->layout ? "i0" : "i1";
	xi[2] = r;
	wi[0] = ds;
	wi[1] = "i2";
	wi[2] = r;
	e = ts_asprintf("(sum(%s: %lld) %s * %s)", r, (long long)l->in,
		ox_load(im, n, l->x, xi), ox_load(im, n, l->w, wi));
	if (l->b) {
		bi[0] = ds;
		bi[1] = "i2";
		e = ts_asprintf("%s + %s", e, ox_load(im, n, l->b, bi));
		bi[1] = ts_asprintf("i2 + %lld", (long long)gh);
		if (l->kind == GRU && l->lbr)
			e = ts_asprintf("%s + select(i2 < %lld, %s, %s)", e,
				(long long)(2 * l->hid), ox_load(im, n, l->b,
				bi), ox_tlit(l->t, 0));
		else
			e = ts_asprintf("%s + %s", e, ox_load(im, n, l->b, bi));
	}
	ox_stage(im, n, name, 3, shape, NULL, e);
	return name;
}

/* "a + h[i0, r] * R[d, off + i1, r]" summed over r: "a" plus the
 * recurrent product of state "h" (a stage, or NULL for zeros: "a" alone)
 * with the rows from "off". */
static char *rnn_rec(struct ox_importer *im, struct ox_node *n,
	const struct rnn *l, int d, const char *h, int64_t off, const char *a)
{
	const char *r, *ri[3];

	if (!h)
		return ts_strdup(a);
	r = ox_raxis(n);
	ri[0] = ts_asprintf("%d", d);
	ri[1] = off ? ts_asprintf("%lld + i1", (long long)off) : "i1";
	ri[2] = r;
	return ts_asprintf("%s + (sum(%s: %lld) %s[i0, %s] * %s)", a, r,
		(long long)l->hid, h, r, ox_load(im, n, l->r, ri));
}

/* The input projection "xw" at time "t", gate rows from "off". */
static char *xw_at(const char *xw, int64_t t, int64_t off)
{
	if (!off)
		return ts_asprintf("%s[%lld, i0, i1]", xw, (long long)t);
	return ts_asprintf("%s[%lld, i0, %lld + i1]", xw, (long long)t,
		(long long)off);
}

/* The stages of GRU's step: the gates z and r, then the state from the
 * candidate, (1 - z) h~ + z h.  "h" is the previous state's stage (NULL
 * for zeros), "hp" its element. */
static void gru_step(struct ox_importer *im, struct ox_node *n,
	const struct rnn *l, int d, int s, const char *xw, int64_t t,
	const char *h, const char *hp, const char *hn)
{
	int64_t H = l->hid, sh[2] = { l->batch, H }, sg[2] = { l->batch, 2 * H };
	const char *zr = ox_temp(im, n, ts_asprintf("zr%d_%d", d, s));
	char *cand;

	ox_stage(im, n, zr, 2, sg, NULL, gate(l, d, 0, rnn_rec(im, n, l, d, h, 0,
		xw_at(xw, t, 0))));
	if (!l->lbr) {
		/* (r h) R_h: the reset state is a stage of its own. */
		const char *rh = NULL;

		if (h) {
			rh = ox_temp(im, n, ts_asprintf("rh%d_%d", d, s));
			ox_stage(im, n, rh, 2, sh, NULL, ts_asprintf(
				"%s[i0, %lld + i1] * %s[i0, i1]", zr,
				(long long)H, h));
		}
		cand = rnn_rec(im, n, l, d, rh, 2 * H, xw_at(xw, t, 2 * H));
	} else {
		/* r (h R_h + Rb_h). */
		const char *bi[2];
		char *rb = ox_tlit(l->t, 0);

		if (l->b) {
			bi[0] = ts_asprintf("%d", d);
			bi[1] = ts_asprintf("%lld + i1", (long long)(5 * H));
			rb = ox_load(im, n, l->b, bi);
		}
		cand = ts_asprintf("%s + %s[i0, %lld + i1] * (%s)",
			xw_at(xw, t, 2 * H), zr, (long long)H,
			rnn_rec(im, n, l, d, h, 2 * H, rb));
	}
	ox_stage(im, n, hn, 2, sh, NULL, ts_asprintf(
		"(1.0 - %s[i0, i1]) * %s + %s[i0, i1] * %s", zr,
		gate(l, d, 1, cand), zr, hp));
}

/* The stages of LSTM's step: the gates' pre-activations (i, o, f, c),
 * the cell state f c + i c~, the state o h(c); the peepholes P (i, o, f)
 * add P c to the gates i and f (the previous cell) and o (the new). */
static void lstm_step(struct ox_importer *im, struct ox_node *n,
	struct rnn *l, int d, int s, const char *xw, int64_t t,
	const char *h, const char *hn)
{
	int64_t H = l->hid, sh[2] = { l->batch, H }, sg[2] = { l->batch, 4 * H };
	const char *g = ox_temp(im, n, ts_asprintf("g%d_%d", d, s));
	const char *cn = ox_temp(im, n, ts_asprintf("c%d_%d", d, s));
	const char *c = s ? l->c_last[d] : NULL, *pix[2];
	char *cp, *gi, *go, *gf, *gc;

	ox_stage(im, n, g, 2, sg, NULL, rnn_rec(im, n, l, d, h, 0,
		xw_at(xw, t, 0)));
	cp = c ? ts_asprintf("%s[i0, i1]", c) : rnn_init(im, n, l, l->c0, d,
		"i0", "i1");
	gi = ts_asprintf("%s[i0, i1]", g);
	go = ts_asprintf("%s[i0, %lld + i1]", g, (long long)H);
	gf = ts_asprintf("%s[i0, %lld + i1]", g, (long long)(2 * H));
	gc = ts_asprintf("%s[i0, %lld + i1]", g, (long long)(3 * H));
	pix[0] = ts_asprintf("%d", d);
	if (l->p) {
		pix[1] = "i1";
		gi = ts_asprintf("%s + %s * %s", gi, ox_load(im, n, l->p, pix),
			cp);
		pix[1] = ts_asprintf("%lld + i1", (long long)(2 * H));
		gf = ts_asprintf("%s + %s * %s", gf, ox_load(im, n, l->p, pix),
			cp);
	}
	ox_stage(im, n, cn, 2, sh, NULL, ts_asprintf("%s * %s + %s * %s",
		gate(l, d, 0, gf), cp, gate(l, d, 0, gi), gate(l, d, 1, gc)));
	cp = ts_asprintf("%s[i0, i1]", cn);
	if (l->p) {
		pix[1] = ts_asprintf("%lld + i1", (long long)H);
		go = ts_asprintf("%s + %s * %s", go, ox_load(im, n, l->p, pix),
			cp);
	}
	ox_stage(im, n, hn, 2, sh, NULL, ts_asprintf("%s * %s",
		gate(l, d, 0, go), apply(l->act[d][2], cp)));
	l->c_last[d] = cn;
}

/* Step "s" of direction "d": the stage of its hidden state (and cell
 * state), reading the previous step's. */
static void rnn_step(struct ox_importer *im, struct ox_node *n,
	struct rnn *l, int d, int s, const char *xw)
{
	int64_t sh[2] = { l->batch, l->hid };
	int64_t t = l->rev[d] ? l->seq - 1 - s : s;
	const char *h = s ? l->hs[d][s - 1] : NULL;
	const char *hn = ox_temp(im, n, ts_asprintf("h%d_%d", d, s));
	char *hp;

	hp = h ? ts_asprintf("%s[i0, i1]", h) : rnn_init(im, n, l, l->h0, d,
		"i0", "i1");
	if (!h && l->h0) {
		/* The initial state as a stage, for the recurrent product. */
		h = ox_temp(im, n, ts_asprintf("h%d_init", d));
		ox_stage(im, n, h, 2, sh, NULL, hp);
		hp = ts_asprintf("%s[i0, i1]", h);
	}
	if (l->kind == RNN)
		ox_stage(im, n, hn, 2, sh, NULL, gate(l, d, 0, rnn_rec(im,
			n, l, d, h, 0, xw_at(xw, t, 0))));
	else if (l->kind == GRU)
		gru_step(im, n, l, d, s, xw, t, h, hp, hn);
	else
		lstm_step(im, n, l, d, s, xw, t, h, hn);
	l->hs[d][s] = hn;
}

/* Direction "d"'s states over the steps from "lo" to "hi" at time axis
 * "ax" (a balanced tree of selects, so that long sequences stay
 * shallow): the state of the step that handled the time, at (b, j). */
static char *rnn_pick(const struct rnn *l, int d, int64_t lo, int64_t hi,
	const char *ax, const char *b, const char *j)
{
	int64_t mid;

	if (lo == hi)
		return ts_asprintf("%s[%s, %s]", l->hs[d][l->rev[d] ?
			l->seq - 1 - lo : lo], b, j);
	mid = lo + (hi - lo + 1) / 2;
	return ts_asprintf("select(%s < %lld, %s, %s)", ax, (long long)mid,
		rnn_pick(l, d, lo, mid - 1, ax, b, j),
		rnn_pick(l, d, mid, hi, ax, b, j));
}

/* RNN (opsets 7, 14), GRU (7, 14) and LSTM (7, 14): directions forward,
 * reverse, bidirectional; layout (14) 0 (seq, batch, ...) or 1 (batch,
 * seq, ...); biases, initial states, peepholes; the activations of the
 * ONNX list with their alphas and betas; clip of the gates'
 * pre-activations; GRU's linear_before_reset.  sequence_lens must be
 * known at import and the full length; input_forget is refused.
 * Outputs Y (seq, dirs, batch, hidden), Y_h and Y_c (dirs, batch,
 * hidden), with the layout's order. */
static ts_status lower_rnn(struct ox_importer *im, struct ox_node *n)
{
	struct rnn l = { 0 };
	int64_t ys[4], hs[3];
	const char *name;
	char *e;

	if (rnn_read(im, n, &l) < 0)
		return TS_ERROR;
	l.rev[0] = !strcmp(l.dir, "reverse");
	l.rev[1] = true;
	for (int d = 0; d < l.ndir; d++) {
		const char *xw = rnn_project(im, n, &l, d);

		l.hs[d] = ts_new_array(const char *, l.seq);
		for (int s = 0; s < l.seq; s++)
			rnn_step(im, n, &l, d, s, xw);
	}
	/* Y: (seq, dirs, batch, hidden), or (batch, seq, dirs, hidden). */
	ys[l.layout ? 1 : 0] = l.seq;
	ys[l.layout ? 2 : 1] = l.ndir;
	ys[l.layout ? 0 : 2] = l.batch;
	ys[3] = l.hid;
	if ((name = ox_output(im, n, 0, l.t, 4, ys))) {
		const char *ta = l.layout ? "i1" : "i0";
		const char *da = l.layout ? "i2" : "i1";
		const char *ba = l.layout ? "i0" : "i2";

		e = rnn_pick(&l, 0, 0, l.seq - 1, ta, ba, "i3");
		if (l.ndir == 2)
			e = ts_asprintf("select(%s == 0, %s, %s)", da, e,
				rnn_pick(&l, 1, 0, l.seq - 1, ta, ba, "i3"));
		ox_stage(im, n, name, 4, ys, NULL, e);
	}
	/* Y_h, Y_c: (dirs, batch, hidden), or (batch, dirs, hidden). */
	hs[l.layout ? 1 : 0] = l.ndir;
	hs[l.layout ? 0 : 1] = l.batch;
	hs[2] = l.hid;
	for (int k = 1; k <= 2; k++) {
		const char *da = l.layout ? "i1" : "i0";
		const char *ba = l.layout ? "i0" : "i1";
		const char *last[2];

		if (k == 2 && l.kind != LSTM)
			break;
		if (!(name = ox_output(im, n, k, l.t, 3, hs)))
			continue;
		for (int d = 0; d < l.ndir; d++)
			last[d] = k == 1 ? l.hs[d][l.seq - 1] : l.c_last[d];
		e = ts_asprintf("%s[%s, i2]", last[0], ba);
		if (l.ndir == 2)
			e = ts_asprintf("select(%s == 0, %s, %s[%s, i2])", da, e,
				last[1], ba);
		ox_stage(im, n, name, 3, hs, NULL, e);
	}
	return TS_OK;
}

/* GridSample. */

enum { PAD_ZEROS, PAD_BORDER, PAD_REFLECTION };

/* Float "x" reflected into [lo, hi] (literals) until inside. */
static char *reflect(ts_dtype t, const char *x, double lo, double hi)
{
	const char *l = ox_lit(t, lo), *h = ox_lit(t, hi);
	const char *range = ox_lit(t, hi - lo);
	char *below, *above;

	/* The distance past the bound, its count of whole ranges (an odd
	 * count reflects back from the other bound) and the rest. */
	below = ts_asprintf("select(i64(floor((%s - %s) / %s)) %% 2 == 0, "
		"%s + ((%s - %s) - floor((%s - %s) / %s) * %s), %s - ((%s - %s) "
		"- floor((%s - %s) / %s) * %s))", l, x, range, l, l, x, l, x,
		range, range, h, l, x, l, x, range, range);
	above = ts_asprintf("select(i64(floor((%s - %s) / %s)) %% 2 == 0, "
		"%s - ((%s - %s) - floor((%s - %s) / %s) * %s), %s + ((%s - %s) "
		"- floor((%s - %s) / %s) * %s))", x, h, range, h, x, h, x, h,
		range, range, l, x, h, x, h, range, range);
	return ts_asprintf("select(%s < %s, %s, select(%s > %s, %s, %s))", x, l,
		below, x, h, above, x);
}

/* GridSample's pixel of "x" (N, C, H, W) at the integer coordinates
 * "r", "c" (i64 expressions) of channel axes i0, i1, with the padding
 * mode: zeros outside, the border's, or reflected into "lo" .. "hi". */
static char *grid_pixel(struct ox_importer *im, struct ox_node *n,
	struct ox_value *x, int pad, const char *r, const char *c,
	const double *lo, const double *hi)
{
	int64_t H = x->shape[2], W = x->shape[3];
	const char *idx[4] = { "i0", "i1", NULL, NULL };

	if (pad == PAD_REFLECTION) {
		r = ts_asprintf("i64(%s)", reflect(x->dtype, ts_asprintf("%s(%s)",
			ts_dtype_name(x->dtype), r), lo[1], hi[1]));
		c = ts_asprintf("i64(%s)", reflect(x->dtype, ts_asprintf("%s(%s)",
			ts_dtype_name(x->dtype), c), lo[0], hi[0]));
	}
	idx[2] = clamped(r, H);
	idx[3] = clamped(c, W);
	if (pad != PAD_ZEROS)
		return ox_load(im, n, x, idx);
	return ts_asprintf("select(%s >= 0 && %s < %lld && %s >= 0 && %s < "
		"%lld, %s, %s)", r, r, (long long)H, c, c, (long long)W,
		ox_load(im, n, x, idx), ox_tlit(x->dtype, 0));
}

/* GridSample (opset 16): "x" (N, C, H, W) sampled at the grid's (N, Ho,
 * Wo, 2) normalised (x, y) positions: bilinear (default) or nearest
 * (half to even); padding zeros (default), border or reflection;
 * align_corners (0).  As ONNX Runtime does: a position out of bounds is
 * clamped (border) or reflected (reflection) first, then every tap reads
 * with the padding mode.  Bicubic is refused: ONNX's test of it holds
 * results rounded to 4 decimals, which a correct one misses by more than
 * the conformance tolerance, and nothing else checks it. */
static ts_status lower_grid_sample(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x, *g;
	const char *mode, *padm, *name, *cs[2], *gi[4];
	int64_t align, shape[4], cshape[3];
	double lo[2], hi[2];
	ts_dtype t;
	int pad;
	char *px, *py, *p[2][2], *body;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0 ||
	    ox_attr_string(im, n, "mode", "bilinear", &mode) < 0 ||
	    ox_attr_string(im, n, "padding_mode", "zeros", &padm) < 0 ||
	    ox_attr_int(im, n, "align_corners", 0, &align) < 0)
		return TS_ERROR;
	x = n->in[0];
	g = n->in[1];
	t = x->dtype;
	if (strcmp(mode, "bilinear") && strcmp(mode, "nearest"))
		return ox_fail(im, n, "mode '%s' is not supported (bilinear and "
			"nearest are)", mode);
	pad = !strcmp(padm, "zeros") ? PAD_ZEROS : !strcmp(padm, "border") ?
		PAD_BORDER : !strcmp(padm, "reflection") ? PAD_REFLECTION : -1;
	if (pad < 0)
		return ox_fail(im, n, "padding_mode '%s' is not zeros, border or "
			"reflection", padm);
	if (need_float(im, n, x, "input") < 0)
		return TS_ERROR;
	if (g->dtype != t)
		return ox_fail(im, n, "a grid of type %s for an input of type %s",
			ts_dtype_name(g->dtype), ts_dtype_name(t));
	if (x->ndim != 4 || g->ndim != 4 || g->shape[0] != x->shape[0] ||
	    g->shape[3] != 2)
		return ox_fail(im, n, "the input must be (N, C, H, W) and the "
			"grid (N, Ho, Wo, 2)");
	shape[0] = x->shape[0];
	shape[1] = x->shape[1];
	shape[2] = cshape[1] = g->shape[1];
	shape[3] = cshape[2] = g->shape[2];
	cshape[0] = x->shape[0];
	/* The bounds a position may take: pixel centres or edges. */
	for (int k = 0; k < 2; k++) {
		int64_t len = x->shape[3 - k];

		lo[k] = align ? 0 : -0.5;
		hi[k] = align ? (double)(len - 1) : (double)len - 0.5;
	}
	/* The positions, x then y, in pixels, moved into bounds. */
	for (int k = 0; k < 2; k++) {
		int64_t len = x->shape[3 - k];
		char *v, *e;

		gi[0] = "i0";
		gi[1] = "i1";
		gi[2] = "i2";
		gi[3] = k ? "1" : "0";
		v = ox_load(im, n, g, gi);
		e = align ? ts_asprintf("(%s + 1.0) / 2.0 * %s", v,
			ox_lit(t, (double)(len - 1))) :
			ts_asprintf("((%s + 1.0) * %s - 1.0) / 2.0", v,
			ox_lit(t, (double)len));
		if (!strcmp(mode, "nearest"))
			e = ts_asprintf("round(%s)", e);
		cs[k] = ox_temp(im, n, k ? "y" : "x");
		if (pad != PAD_ZEROS) {
			const char *raw = ox_temp(im, n, k ? "ry" : "rx");
			const char *rl = ox_load_name_same(raw, 3);

			ox_stage(im, n, raw, 3, cshape, NULL, e);
			e = pad == PAD_BORDER ? ts_asprintf("select(%s < %s || "
				"%s > %s, clamp(%s, 0.0, %s), %s)", rl,
				ox_lit(t, lo[k]), rl, ox_lit(t, hi[k]), rl,
				ox_lit(t, (double)(len - 1)), rl) :
				reflect(t, rl, lo[k], hi[k]);
		}
		ox_stage(im, n, cs[k], 3, cshape, NULL, e);
	}
	px = ts_asprintf("%s[i0, i2, i3]", cs[0]);
	py = ts_asprintf("%s[i0, i2, i3]", cs[1]);
	name = ox_output(im, n, 0, t, 4, shape);
	if (!strcmp(mode, "nearest")) {
		body = grid_pixel(im, n, x, pad, ts_asprintf("i64(%s)", py),
			ts_asprintf("i64(%s)", px), lo, hi);
	} else {
		char *fx = ts_asprintf("floor(%s)", px);
		char *fy = ts_asprintf("floor(%s)", py);

		for (int a = 0; a < 2; a++)
			for (int b = 0; b < 2; b++)
				p[a][b] = grid_pixel(im, n, x, pad, ts_asprintf(
					"i64(%s) + %d", fy, a), ts_asprintf(
					"i64(%s) + %d", fx, b), lo, hi);
		body = ts_asprintf("(%s + 1.0 - %s) * ((%s + 1.0 - %s) * %s + "
			"(%s - %s) * %s) + (%s - %s) * ((%s + 1.0 - %s) * %s + "
			"(%s - %s) * %s)", fy, py, fx, px, p[0][0], px, fx,
			p[0][1], py, fy, fx, px, p[1][0], px, fx, p[1][1]);
	}
	ox_stage(im, n, name, 4, shape, NULL, body);
	return TS_OK;
}

const struct ox_op ox_ops_misc[] = {
	{ "GridSample", lower_grid_sample },
	{ "RNN", lower_rnn },
	{ "GRU", lower_rnn },
	{ "LSTM", lower_rnn },
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
