/* Operators outside the main families: losses, scatters, sorting, signal
 * windows, recurrent layers.  The table is filled as they are added. */
#include <config.h>

#include <math.h>

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

const struct ox_op ox_ops_misc[] = {
	{ "Dropout", lower_dropout },
	{ "NegativeLogLikelihoodLoss", lower_nll_loss },
	{ "SoftmaxCrossEntropyLoss", lower_sce_loss },
	{ NULL, NULL },
};
