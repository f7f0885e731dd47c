/* Operators on [N, C, spatial...] tensors: Conv, ConvTranspose and the
 * pools; and the folding of BatchNormalization into a Conv before it.
 *
 * A window that reaches outside its input reads a padded stage of its
 * own, P[n, c, h, w] = select(h >= 1 && h < 57 && ..., X[n, c, h - 1,
 * w - 1], 0.0), and the window then reads P at i2 * stride + r *
 * dilation: the form in which a hand-written padded convolution comes
 * (examples/conv2d_s1.tsl) and which the scheduler tiles best. */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include "onnx/internal.h"

#define MAX_SP (TS_MAX_DIMS - 2)

/* A sliding window over the spatial dimensions of an [N, C, ...] input:
 * output position o of spatial dimension j reads the input at
 * o * s + r * d - pb for r in [0, k).  "ext" is the extent the windows
 * span, counted from -pb: the extent of the padded stage. */
struct window {
	int nsp;
	int64_t in[MAX_SP], k[MAX_SP], s[MAX_SP], d[MAX_SP];
	int64_t pb[MAX_SP], pe[MAX_SP], out[MAX_SP], ext[MAX_SP];
};

/* The INTS attribute "name" with "cnt" values, or "dflt" for each. */
static ts_status attr_ints_n(struct ox_importer *im, const struct ox_node *n,
	const char *name, int cnt, int64_t dflt, int64_t *v)
{
	int got;

	if (ox_attr_ints(im, n, name, v, 2 * MAX_SP, &got) < 0)
		return TS_ERROR;
	if (got < 0) {
		for (int i = 0; i < cnt; i++)
			v[i] = dflt;
		return TS_OK;
	}
	if (got != cnt)
		return ox_fail(im, n, "attribute '%s' has %d values, expected "
			"%d", name, got, cnt);
	return TS_OK;
}

/* auto_pad: 0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID. */
static ts_status read_auto_pad(struct ox_importer *im,
	const struct ox_node *n, int *mode)
{
	static const char *const modes[] = {
		"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID",
	};
	const char *s;

	if (ox_attr_string(im, n, "auto_pad", "NOTSET", &s) < 0)
		return TS_ERROR;
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, modes[i])) {
			*mode = i;
			return TS_OK;
		}
	return ox_fail(im, n, "auto_pad='%s' is not NOTSET, SAME_UPPER, "
		"SAME_LOWER or VALID", s);
}

/* Check that "x" is [N, C, spatial...] with at least one spatial
 * dimension. */
static ts_status check_nc(struct ox_importer *im, const struct ox_node *n,
	const struct ox_value *x)
{
	if (x->ndim < 3)
		return ox_fail(im, n, "input of rank %d: expected [N, C, "
			"D1, ...]", x->ndim);
	return TS_OK;
}

/* Read the window of node "n" over "x": the kernel is "kernel" (a
 * convolution's, from W) or the attribute kernel_shape (a pool's);
 * "pool" allows ceil_mode.  Output extents follow ONNX: floor (or ceil)
 * of (in + pads - span) / stride + 1, where a last window that would
 * start in the end padding is dropped in ceil mode; SAME gives
 * ceil(in / stride), the odd pad at the end (SAME_UPPER) or the start. */
static ts_status read_window(struct ox_importer *im, struct ox_node *n,
	const struct ox_value *x, const int64_t *kernel, bool pool,
	struct window *w)
{
	int64_t pads[2 * MAX_SP], ceil_mode = 0;
	int mode;

	memset(w, 0, sizeof(*w));
	w->nsp = x->ndim - 2;
	memcpy(w->in, x->shape + 2, sizeof(int64_t) * (size_t)w->nsp);
	if (kernel) {
		int64_t ks[2 * MAX_SP];
		int got;

		memcpy(w->k, kernel, sizeof(int64_t) * (size_t)w->nsp);
		if (ox_attr_ints(im, n, "kernel_shape", ks, 2 * MAX_SP,
		    &got) < 0)
			return TS_ERROR;
		for (int j = 0; got >= 0 && j < w->nsp; j++)
			if (got != w->nsp || ks[j] != w->k[j])
				return ox_fail(im, n, "kernel_shape differs "
					"from the shape of W");
	} else {
		if (!ox_attr(n, "kernel_shape"))
			return ox_fail(im, n, "attribute 'kernel_shape' is "
				"missing");
		if (attr_ints_n(im, n, "kernel_shape", w->nsp, 1, w->k) < 0)
			return TS_ERROR;
	}
	if (attr_ints_n(im, n, "strides", w->nsp, 1, w->s) < 0 ||
	    attr_ints_n(im, n, "dilations", w->nsp, 1, w->d) < 0 ||
	    attr_ints_n(im, n, "pads", 2 * w->nsp, 0, pads) < 0 ||
	    read_auto_pad(im, n, &mode) < 0 ||
	    (pool && ox_attr_int(im, n, "ceil_mode", 0, &ceil_mode) < 0))
		return TS_ERROR;
	for (int j = 0; j < w->nsp; j++) {
		int64_t span = (w->k[j] - 1) * w->d[j] + 1, num;

		if (w->k[j] < 1 || w->s[j] < 1 || w->d[j] < 1)
			return ox_fail(im, n, "kernel, strides and dilations "
				"must be positive");
		if (mode == 1 || mode == 2) {
			int64_t total;

			w->out[j] = (w->in[j] + w->s[j] - 1) / w->s[j];
			total = TS_MAX((w->out[j] - 1) * w->s[j] + span -
				w->in[j], 0);
			w->pb[j] = mode == 1 ? total / 2 : total - total / 2;
			w->pe[j] = total - w->pb[j];
		} else {
			if (mode == 0) {
				w->pb[j] = pads[j];
				w->pe[j] = pads[j + w->nsp];
			}
			if (w->pb[j] < 0 || w->pe[j] < 0)
				return ox_fail(im, n, "negative pads are not "
					"supported");
			num = w->in[j] + w->pb[j] + w->pe[j] - span;
			if (num < 0)
				return ox_fail(im, n, "the window (%lld) is "
					"larger than the padded input (%lld)",
					(long long)span, (long long)(w->in[j] +
					w->pb[j] + w->pe[j]));
			w->out[j] = (ceil_mode ? num + w->s[j] - 1 : num) /
				w->s[j] + 1;
			if (ceil_mode && (w->out[j] - 1) * w->s[j] >=
			    w->in[j] + w->pb[j])
				w->out[j]--;
		}
		if (w->out[j] < 1)
			return ox_fail(im, n, "empty output");
		w->ext[j] = (w->out[j] - 1) * w->s[j] + span;
	}
	return TS_OK;
}

/* Whether the windows reach outside the input. */
static bool window_pads(const struct window *w)
{
	for (int j = 0; j < w->nsp; j++)
		if (w->pb[j] || w->ext[j] > w->in[j])
			return true;
	return false;
}

/* Replace "{x}" in "tpl" by "x"; NULL is the identity. */
static char *wrap(const char *tpl, const char *x)
{
	const char *p;

	if (!tpl)
		return ts_strdup(x);
	p = strstr(tpl, "{x}");
	return ts_asprintf("%.*s%s%s", (int)(p - tpl), tpl, x, p + 3);
}

static const char *const all_axes[TS_MAX_DIMS] = {
	"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7",
};

/* "X[i0, i1, ...]" from the names and index texts. */
static char *index_text(const char *name, int nd, const char *const *idx)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "%s[", name);
	for (int i = 0; i < nd; i++)
		ts_buf_printf(&b, "%s%s", i ? ", " : "", idx[i]);
	ts_buf_putc(&b, ']');
	return b.s;
}

/* What the windows read: "x" itself when they stay inside it, else a
 * stage of "x" padded with "fill" (x's coordinates shifted by pb), each
 * element converted by "tpl" ("{x}" the element, NULL none): in the
 * padded stage, or at each load when there is none. */
struct source {
	struct ox_value *x;
	const char *padded;	/* the padded stage, or NULL */
	const char *tpl;
};

static void make_source(struct ox_importer *im, struct ox_node *n,
	struct ox_value *x, const struct window *w, const char *fill,
	const char *tpl, const char *suffix, struct source *src)
{
	const char *idx[TS_MAX_DIMS];
	int64_t shape[TS_MAX_DIMS];
	ts_buf cond;

	src->x = x;
	src->tpl = tpl;
	src->padded = NULL;
	if (!window_pads(w))
		return;
	ts_buf_init(&cond);
	shape[0] = x->shape[0];
	shape[1] = x->shape[1];
	idx[0] = "i0";
	idx[1] = "i1";
	for (int j = 0; j < w->nsp; j++) {
		const char *a = ox_axis(j + 2);

		shape[j + 2] = w->ext[j];
		idx[j + 2] = w->pb[j] ? ts_asprintf("%s - %lld", a,
			(long long)w->pb[j]) : a;
		if (w->pb[j])
			ts_buf_printf(&cond, "%s%s >= %lld", cond.len ?
				" && " : "", a, (long long)w->pb[j]);
		if (w->ext[j] > w->pb[j] + w->in[j])
			ts_buf_printf(&cond, "%s%s < %lld", cond.len ?
				" && " : "", a, (long long)(w->pb[j] +
				w->in[j]));
	}
	src->padded = ox_temp(im, n, suffix);
	ox_stage(im, n, src->padded, x->ndim, shape, NULL, ts_asprintf(
		"select(%s, %s, %s)", cond.s, wrap(tpl, ox_load(im, n, x, idx)),
		fill));
	src->tpl = NULL;
}

/* Read the source at "idx" (window coordinates, from -pb). */
static char *source_load(struct ox_importer *im, struct ox_node *n,
	const struct source *src, const char *const *idx)
{
	if (src->padded)
		return index_text(src->padded, src->x->ndim, idx);
	return wrap(src->tpl, ox_load(im, n, src->x, idx));
}

/* The window's spatial reduction axes: binders appended to "bind", and
 * for each spatial dimension the source's index ("i2 * 2 + r1") and the
 * kernel's index (the axis, or 0 where the kernel is 1 wide). */
static void window_axes(struct ox_node *n, const struct window *w,
	ts_buf *bind, const char **src, const char **ker)
{
	for (int j = 0; j < w->nsp; j++) {
		const char *o = ox_axis(j + 2), *r = NULL;
		ts_buf b;

		if (w->k[j] > 1) {
			r = ox_raxis(n);
			ts_buf_printf(bind, "%s%s: %lld", bind->len ? ", " : "",
				r, (long long)w->k[j]);
		}
		ker[j] = r ? r : "0";
		ts_buf_init(&b);
		ts_buf_puts(&b, o);
		if (w->s[j] != 1)
			ts_buf_printf(&b, " * %lld", (long long)w->s[j]);
		if (r) {
			ts_buf_printf(&b, " + %s", r);
			if (w->d[j] != 1)
				ts_buf_printf(&b, " * %lld",
					(long long)w->d[j]);
		}
		src[j] = b.s;
	}
}

/* "sum(BINDERS) BODY", or BODY without binders. */
static char *reduce(const char *op, const ts_buf *bind, const char *body)
{
	if (!bind->len)
		return ts_strdup(body);
	return ts_asprintf("%s(%s) %s", op, bind->s, body);
}

/* A convolution's shapes: X [N, C, ...], W [M, C / group, k...]. */
struct conv {
	int64_t group, c, m, cg, mg;
};

static ts_status read_conv(struct ox_importer *im, struct ox_node *n,
	const struct ox_value *x, const struct ox_value *wt, bool transposed,
	struct conv *cv)
{
	if (check_nc(im, n, x) < 0 ||
	    ox_attr_int(im, n, "group", 1, &cv->group) < 0)
		return TS_ERROR;
	if (wt->ndim != x->ndim)
		return ox_fail(im, n, "W has rank %d, X rank %d", wt->ndim,
			x->ndim);
	cv->c = x->shape[1];
	if (cv->group < 1 || cv->c % cv->group)
		return ox_fail(im, n, "group %lld does not divide the %lld "
			"input channels", (long long)cv->group,
			(long long)cv->c);
	cv->cg = cv->c / cv->group;
	if (transposed) {
		if (wt->shape[0] != cv->c)
			return ox_fail(im, n, "W has %lld input channels, X "
				"%lld", (long long)wt->shape[0],
				(long long)cv->c);
		cv->mg = wt->shape[1];
		cv->m = cv->mg * cv->group;
	} else {
		cv->m = wt->shape[0];
		if (wt->shape[1] != cv->cg || cv->m % cv->group)
			return ox_fail(im, n, "W of shape [%lld, %lld, ...] "
				"does not fit %lld input channels in %lld "
				"groups", (long long)wt->shape[0],
				(long long)wt->shape[1], (long long)cv->c,
				(long long)cv->group);
		cv->mg = cv->m / cv->group;
	}
	return TS_OK;
}

/* The convolution's sum, "sum(r0: C/group, r1: KH, r2: KW) P[i0, c,
 * i2 * s + r1 * d, ...] * W[i1, r0, r1, r2]", where the input channel c
 * is r0, or (i1 // M/group) * C/group + r0 with groups; "wtpl" converts
 * W's elements as "src->tpl" the input's. */
static char *conv_sum(struct ox_importer *im, struct ox_node *n,
	const struct window *w, const struct conv *cv,
	const struct source *src, struct ox_value *wt, const char *wtpl)
{
	const char *xi[TS_MAX_DIMS], *wi[TS_MAX_DIMS], *rc = NULL, *g;
	ts_buf bind;

	ts_buf_init(&bind);
	if (cv->cg > 1) {
		rc = ox_raxis(n);
		ts_buf_printf(&bind, "%s: %lld", rc, (long long)cv->cg);
	}
	window_axes(n, w, &bind, xi + 2, wi + 2);
	xi[0] = "i0";
	wi[0] = "i1";
	wi[1] = rc ? rc : "0";
	g = cv->mg == 1 ? "i1" : ts_asprintf("(i1 // %lld)",
		(long long)cv->mg);
	if (cv->group == 1)
		xi[1] = rc ? rc : "0";
	else if (!rc)
		xi[1] = g;
	else
		xi[1] = ts_asprintf("%s * %lld + %s", g, (long long)cv->cg, rc);
	return reduce("sum", &bind, ts_asprintf("%s * %s",
		source_load(im, n, src, xi),
		wrap(wtpl, ox_load(im, n, wt, wi))));
}

char *ox_conv_sum(struct ox_importer *im, struct ox_node *n,
	struct ox_value *x, struct ox_value *wt, const char *xtpl,
	const char *wtpl, const char *fill, int64_t *shape)
{
	struct window w;
	struct conv cv;
	struct source src;

	if (read_conv(im, n, x, wt, false, &cv) < 0 ||
	    read_window(im, n, x, wt->shape + 2, false, &w) < 0)
		return NULL;
	shape[0] = x->shape[0];
	shape[1] = cv.m;
	memcpy(shape + 2, w.out, sizeof(int64_t) * (size_t)w.nsp);
	make_source(im, n, x, &w, fill, xtpl, "pad", &src);
	return conv_sum(im, n, &w, &cv, &src, wt, wtpl);
}

/* The input X and the weights W of a float Conv or ConvTranspose, of
 * one dtype. */
static ts_status float_conv_inputs(struct ox_importer *im,
	const struct ox_node *n, struct ox_value **x, struct ox_value **wt)
{
	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0)
		return TS_ERROR;
	*x = n->in[0];
	*wt = n->in[1];
	if (!ts_dtype_is_float((*x)->dtype) || (*wt)->dtype != (*x)->dtype)
		return ox_fail(im, n, "inputs of types %s and %s are not "
			"supported", ts_dtype_name((*x)->dtype),
			ts_dtype_name((*wt)->dtype));
	return TS_OK;
}

/* Conv (opsets 1, 11): Y = X * W + B over [N, C, D1, ...] with group,
 * strides, dilations, pads or auto_pad, and kernel_shape (inferred from
 * W).  One stage: the sum over the window, reading a zero-padded stage
 * where the window leaves X, plus the bias. */
static ts_status lower_conv(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x, *wt;
	int64_t shape[TS_MAX_DIMS];
	const char *name, *i1 = "i1";
	char *body;

	if (float_conv_inputs(im, n, &x, &wt) < 0)
		return TS_ERROR;
	if (!(body = ox_conv_sum(im, n, x, wt, NULL, NULL,
	    ox_lit(x->dtype, 0), shape)))
		return TS_ERROR;
	if (ox_has(n, 2)) {
		struct ox_value *b = n->in[2];

		if (b->dtype != x->dtype || b->ndim != 1 ||
		    b->shape[0] != shape[1])
			return ox_fail(im, n, "B must be a vector of %lld %s",
				(long long)shape[1], ts_dtype_name(x->dtype));
		body = ts_asprintf("(%s) + %s", body, ox_load(im, n, b, &i1));
	}
	name = ox_output(im, n, 0, x->dtype, x->ndim, shape);
	ox_stage(im, n, name, x->ndim, shape, NULL, body);
	return TS_OK;
}

/* ConvTranspose (opsets 1, 11): the gradient of Conv, with group,
 * strides, dilations, pads, output_padding, output_shape and auto_pad.
 * Output position y of a spatial dimension gathers input i and kernel
 * tap r where i * s + r * d == y + pb.  With output_shape (or SAME) the
 * total padding s * (in - 1) + output_padding + span - out, clamped at
 * 0 (a larger output is zero at its end), is split with the odd one at
 * the end for SAME_UPPER and at the start otherwise, as ONNX says. */
static ts_status lower_conv_transpose(struct ox_importer *im,
	struct ox_node *n)
{
	struct ox_value *x, *wt;
	struct conv cv;
	int64_t s[MAX_SP], d[MAX_SP], pads[2 * MAX_SP], op[MAX_SP];
	int64_t os[TS_MAX_DIMS], ks[2 * MAX_SP], shape[TS_MAX_DIMS];
	const char *xi[TS_MAX_DIMS], *wi[TS_MAX_DIMS], *rc = NULL, *g, *name;
	int nsp, mode, nos, nks;
	ts_buf bind, cond;
	char *body;

	if (float_conv_inputs(im, n, &x, &wt) < 0)
		return TS_ERROR;
	if (read_conv(im, n, x, wt, true, &cv) < 0)
		return TS_ERROR;
	nsp = x->ndim - 2;
	if (attr_ints_n(im, n, "strides", nsp, 1, s) < 0 ||
	    attr_ints_n(im, n, "dilations", nsp, 1, d) < 0 ||
	    attr_ints_n(im, n, "pads", 2 * nsp, 0, pads) < 0 ||
	    attr_ints_n(im, n, "output_padding", nsp, 0, op) < 0 ||
	    ox_attr_ints(im, n, "output_shape", os, TS_MAX_DIMS, &nos) < 0 ||
	    ox_attr_ints(im, n, "kernel_shape", ks, 2 * MAX_SP, &nks) < 0 ||
	    read_auto_pad(im, n, &mode) < 0)
		return TS_ERROR;
	if (nos >= 0 && nos != nsp && nos != x->ndim)
		return ox_fail(im, n, "output_shape has %d values, expected "
			"%d", nos, nsp);
	if (nks >= 0 && (nks != nsp || memcmp(ks, wt->shape + 2,
	    sizeof(int64_t) * (size_t)nsp)))
		return ox_fail(im, n, "kernel_shape differs from the shape "
			"of W");
	shape[0] = x->shape[0];
	shape[1] = cv.m;
	for (int j = 0; j < nsp; j++) {
		int64_t in = x->shape[j + 2], k = wt->shape[j + 2];
		int64_t full = s[j] * (in - 1) + op[j] + (k - 1) * d[j] + 1;

		if (s[j] < 1 || d[j] < 1 || op[j] < 0)
			return ox_fail(im, n, "strides and dilations must be "
				"positive, output_padding not negative");
		if (nos >= 0 || mode == 1 || mode == 2) {
			int64_t out = nos >= 0 ? os[j + nos - nsp] : in * s[j];
			int64_t total = TS_MAX(full - out, 0);

			pads[j] = mode == 1 ? total / 2 : total - total / 2;
			pads[j + nsp] = total - pads[j];
			shape[j + 2] = out;
		} else {
			if (mode == 3)
				pads[j] = pads[j + nsp] = 0;
			if (pads[j] < 0 || pads[j + nsp] < 0)
				return ox_fail(im, n, "negative pads are not "
					"supported");
			shape[j + 2] = full - pads[j] - pads[j + nsp];
		}
		if (shape[j + 2] < 1)
			return ox_fail(im, n, "empty output");
	}
	if (ox_has(n, 2) && (n->in[2]->dtype != x->dtype ||
	    n->in[2]->ndim != 1 || n->in[2]->shape[0] != cv.m))
		return ox_fail(im, n, "B must be a vector of %lld %s",
			(long long)cv.m, ts_dtype_name(x->dtype));
	ts_buf_init(&bind);
	ts_buf_init(&cond);
	if (cv.cg > 1) {
		rc = ox_raxis(n);
		ts_buf_printf(&bind, "%s: %lld", rc, (long long)cv.cg);
	}
	g = cv.mg == 1 ? "i1" : ts_asprintf("(i1 // %lld)", (long long)cv.mg);
	xi[0] = "i0";
	if (cv.group == 1)
		xi[1] = rc ? rc : "0";
	else
		xi[1] = rc ? ts_asprintf("%s * %lld + %s", g,
			(long long)cv.cg, rc) : g;
	wi[0] = xi[1];
	wi[1] = cv.group == 1 ? "i1" : cv.mg == 1 ? "0" :
		ts_asprintf("i1 %% %lld", (long long)cv.mg);
	for (int j = 0; j < nsp; j++) {
		int64_t in = x->shape[j + 2], k = wt->shape[j + 2];
		const char *r = NULL, *t;
		ts_buf b;

		if (k > 1) {
			r = ox_raxis(n);
			ts_buf_printf(&bind, "%s%s: %lld", bind.len ? ", " : "",
				r, (long long)k);
		}
		wi[j + 2] = r ? r : "0";
		/* t = y + pb - r * d, the position in the stretched input */
		ts_buf_init(&b);
		ts_buf_puts(&b, ox_axis(j + 2));
		if (pads[j])
			ts_buf_printf(&b, " + %lld", (long long)pads[j]);
		if (r)
			ts_buf_printf(&b, d[j] != 1 ? " - %s * %lld" : " - %s",
				r, (long long)d[j]);
		t = b.s;
		if (s[j] != 1) {
			ts_buf_printf(&cond, "%s(%s) %% %lld == 0", cond.len ?
				" && " : "", t, (long long)s[j]);
			t = ts_asprintf("(%s) // %lld", t, (long long)s[j]);
		}
		ts_buf_printf(&cond, "%s%s >= 0 && %s < %lld", cond.len ?
			" && " : "", t, t, (long long)in);
		xi[j + 2] = t;
	}
	name = ox_output(im, n, 0, x->dtype, x->ndim, shape);
	body = reduce("sum", &bind, ts_asprintf("select(%s, %s, %s) * %s",
		cond.s, ox_load(im, n, x, xi), ox_lit(x->dtype, 0),
		ox_load(im, n, wt, wi)));
	if (ox_has(n, 2)) {
		const char *i1 = "i1";

		body = ts_asprintf("(%s) + %s", body,
			ox_load(im, n, n->in[2], &i1));
	}
	ox_stage(im, n, name, x->ndim, shape, NULL, body);
	return TS_OK;
}

/* The smallest value of "t": max pooling's padding. */
static char *lowest(ts_dtype t)
{
	switch (t) {
	case TS_I8: return ox_lit(t, -128);
	case TS_U8: return ox_lit(t, 0);
	default: return ox_lit(t, -INFINITY);
	}
}

/* The output shape of a pool. */
static void pool_shape(const struct ox_value *x, const struct window *w,
	int64_t *shape)
{
	shape[0] = x->shape[0];
	shape[1] = x->shape[1];
	memcpy(shape + 2, w->out, sizeof(int64_t) * (size_t)w->nsp);
}

/* MaxPool's Indices: the first (row-major) position of the maximum in
 * the window, as an index into X flattened in row-major order, or with
 * storage_order 1 in column-major order of the spatial dimensions. */
static void max_indices(struct ox_importer *im, struct ox_node *n,
	const struct window *w, const struct source *src, const char *y,
	const int64_t *shape, int64_t order)
{
	struct ox_value *x = src->x;
	const char *xi[TS_MAX_DIMS], *ker[MAX_SP], *name, *flat;
	int nd = x->ndim;
	ts_buf bind, cond, idx;
	int64_t spatial = ox_numel(w->nsp, w->in);
	char *at;

	ts_buf_init(&bind);
	ts_buf_init(&cond);
	xi[0] = "i0";
	xi[1] = "i1";
	window_axes(n, w, &bind, xi + 2, ker);
	/* The row-major index of the tap in X, where it is in X. */
	at = ts_asprintf("i0 * %lld + i1", (long long)x->shape[1]);
	for (int j = 0; j < w->nsp; j++) {
		const char *c = w->pb[j] ? ts_asprintf("%s - %lld", xi[j + 2],
			(long long)w->pb[j]) : xi[j + 2];

		if (w->pb[j])
			ts_buf_printf(&cond, "%s >= 0 && ", c);
		if (w->ext[j] > w->pb[j] + w->in[j])
			ts_buf_printf(&cond, "%s < %lld && ", c,
				(long long)w->in[j]);
		at = ts_asprintf("(%s) * %lld + %s", at, (long long)w->in[j],
			c);
	}
	ts_buf_printf(&cond, "%s == %s", source_load(im, n, src, xi),
		index_text(y, nd, all_axes));
	name = order ? ox_temp(im, n, "rowmajor") :
		ox_output(im, n, 1, TS_I64, nd, shape);
	ox_stage(im, n, name, nd, shape, NULL, reduce("min", &bind,
		ts_asprintf("select(%s, %s, %s)", cond.s, at,
		ox_lit(TS_I64, (double)ox_numel(nd, x->shape)))));
	if (!order)
		return;
	/* Column-major: the spatial coordinates of the row-major index,
	 * weighted the other way round. */
	flat = index_text(name, nd, all_axes);
	ts_buf_init(&idx);
	ts_buf_printf(&idx, "%s // %lld * %lld", flat, (long long)spatial,
		(long long)spatial);
	for (int j = 0; j < w->nsp; j++) {
		int64_t row = 1, col = 1;

		for (int i = j + 1; i < w->nsp; i++)
			row *= w->in[i];
		for (int i = 0; i < j; i++)
			col *= w->in[i];
		ts_buf_printf(&idx, " + %s %% %lld // %lld %% %lld * %lld",
			flat, (long long)spatial, (long long)row,
			(long long)w->in[j], (long long)col);
	}
	ox_stage(im, n, ox_output(im, n, 1, TS_I64, nd, shape), nd, shape,
		NULL, idx.s);
}

/* MaxPool (opsets 1, 8, 10, 11, 12): kernel_shape, strides, pads or
 * auto_pad, dilations, ceil_mode; the optional Indices output with
 * storage_order.  The window reads a stage padded with the lowest value
 * of the dtype (-inf for floats). */
static ts_status lower_maxpool(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x;
	struct window w;
	struct source src;
	int64_t shape[TS_MAX_DIMS], order;
	const char *xi[TS_MAX_DIMS], *ker[MAX_SP], *name;
	ts_buf bind;

	if (ox_need(im, n, 0, 1) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (!ts_dtype_is_float(x->dtype) && x->dtype != TS_I8 &&
	    x->dtype != TS_U8)
		return ox_fail(im, n, "input of type %s is not supported",
			ts_dtype_name(x->dtype));
	if (check_nc(im, n, x) < 0 ||
	    read_window(im, n, x, NULL, true, &w) < 0 ||
	    ox_attr_int(im, n, "storage_order", 0, &order) < 0)
		return TS_ERROR;
	if (order != 0 && order != 1)
		return ox_fail(im, n, "storage_order=%lld is not 0 or 1",
			(long long)order);
	pool_shape(x, &w, shape);
	if (!(name = ox_output(im, n, 0, x->dtype, x->ndim, shape)))
		name = ox_temp(im, n, "max");
	make_source(im, n, x, &w, lowest(x->dtype), NULL, "pad", &src);
	ts_buf_init(&bind);
	xi[0] = "i0";
	xi[1] = "i1";
	window_axes(n, &w, &bind, xi + 2, ker);
	ox_stage(im, n, name, x->ndim, shape, NULL, reduce("max", &bind,
		source_load(im, n, &src, xi)));
	if (ox_wants(n, 1))
		max_indices(im, n, &w, &src, name, shape, order);
	return TS_OK;
}

/* The number of taps of spatial dimension j's window at output axis
 * i<j+2> that fall in [lo, hi) of the padded coordinates: a literal
 * when every window has all its k taps there. */
static char *taps(const struct window *w, int j, int64_t lo, int64_t hi)
{
	int64_t s = w->s[j], d = w->d[j], k = w->k[j];
	bool low = lo > 0, high = (w->out[j] - 1) * s + (k - 1) * d >= hi;
	const char *a = s == 1 ? ox_axis(j + 2) : ts_asprintf("%s * %lld",
		ox_axis(j + 2), (long long)s);
	const char *first = "", *end = ts_asprintf("%lld", (long long)k);

	if (!low && !high)
		return ts_strdup(end);
	/* Taps r from ceil((lo - a) / d) to floor((hi - 1 - a) / d). */
	if (high)
		end = d == 1 ? ts_asprintf("min(%lld, %lld - %s)", (long long)k,
			(long long)hi, a) : ts_asprintf("min(%lld, (%lld - %s) "
			"// %lld + 1)", (long long)k, (long long)(hi - 1), a,
			(long long)d);
	if (low)
		first = d == 1 ? ts_asprintf(" - max(0, %lld - %s)",
			(long long)lo, a) : ts_asprintf(" - max(0, (%lld - %s) "
			"// %lld)", (long long)(lo + d - 1), a, (long long)d);
	return ts_asprintf("(%s%s)", end, first);
}

/* AveragePool (opsets 1, 7, 10, 11): kernel_shape, strides, pads or
 * auto_pad, ceil_mode, count_include_pad (the divisor counts the pads,
 * but not the positions a ceil_mode window takes past them), and
 * dilations (a later opset's, taken when given).  LpPool (opsets 1, 2,
 * 11): the p-norm of the window, p an integer (2 by default). */
static ts_status lower_avgpool(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x;
	struct window w;
	struct source src;
	int64_t shape[TS_MAX_DIMS], cip = 0, p = 0;
	const char *xi[TS_MAX_DIMS], *ker[MAX_SP], *name, *ld;
	bool lp = !strcmp(n->op, "LpPool");
	ts_dtype t;
	ts_buf bind, cnt;
	bool all_k = true;

	if (ox_need(im, n, 0, 1) < 0)
		return TS_ERROR;
	x = n->in[0];
	t = x->dtype;
	if (!ts_dtype_is_float(t))
		return ox_fail(im, n, "input of type %s is not supported",
			ts_dtype_name(t));
	if (check_nc(im, n, x) < 0 ||
	    read_window(im, n, x, NULL, !lp, &w) < 0 ||
	    (lp ? ox_attr_int(im, n, "p", 2, &p) :
	    ox_attr_int(im, n, "count_include_pad", 0, &cip)) < 0)
		return TS_ERROR;
	if (lp && p < 1)
		return ox_fail(im, n, "p=%lld is not supported", (long long)p);
	pool_shape(x, &w, shape);
	name = ox_output(im, n, 0, t, x->ndim, shape);
	make_source(im, n, x, &w, ox_lit(t, 0), NULL, "pad", &src);
	ts_buf_init(&bind);
	xi[0] = "i0";
	xi[1] = "i1";
	window_axes(n, &w, &bind, xi + 2, ker);
	ld = source_load(im, n, &src, xi);
	if (lp) {
		const char *body;

		if (p == 1)
			body = reduce("sum", &bind, ts_asprintf("abs(%s)", ld));
		else if (p == 2)
			body = ts_asprintf("sqrt(%s)", reduce("sum", &bind,
				ts_asprintf("%s * %s", ld, ld)));
		else
			body = ts_asprintf("pow(%s, %s)", reduce("sum", &bind,
				ts_asprintf("pow(abs(%s), %s)", ld,
				ox_lit(t, (double)p))), ox_lit(t, 1.0 / p));
		ox_stage(im, n, name, x->ndim, shape, NULL, body);
		return TS_OK;
	}
	ts_buf_init(&cnt);
	for (int j = 0; j < w.nsp; j++) {
		int64_t lo = cip ? 0 : w.pb[j];
		int64_t hi = w.pb[j] + w.in[j] + (cip ? w.pe[j] : 0);
		char *c = taps(&w, j, lo, hi);

		all_k &= c[0] != '(';
		ts_buf_printf(&cnt, "%s%s", j ? " * " : "", c);
	}
	if (all_k)
		cnt.s = ts_asprintf("%lld", (long long)ox_numel(w.nsp, w.k));
	ox_stage(im, n, name, x->ndim, shape, NULL, ts_asprintf(
		"(%s) / %s", reduce("sum", &bind, ld), all_k ?
		ox_lit(t, (double)ox_numel(w.nsp, w.k)) :
		ts_asprintf("%s(%s)", ts_dtype_name(t), cnt.s)));
	return TS_OK;
}

/* GlobalAveragePool, GlobalMaxPool, GlobalLpPool (p, 2 by default):
 * the pool over all the spatial dimensions, kept as extents of 1. */
static ts_status lower_global_pool(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x;
	int64_t shape[TS_MAX_DIMS], p = 2, cnt;
	const char *xi[TS_MAX_DIMS], *name, *ld, *body;
	ts_buf bind;
	ts_dtype t;

	if (ox_need(im, n, 0, 1) < 0)
		return TS_ERROR;
	x = n->in[0];
	t = x->dtype;
	if (check_nc(im, n, x) < 0 ||
	    ox_attr_int(im, n, "p", 2, &p) < 0)
		return TS_ERROR;
	if (!ts_dtype_is_float(t) && (strcmp(n->op, "GlobalMaxPool") ||
	    t == TS_BOOL))
		return ox_fail(im, n, "input of type %s is not supported",
			ts_dtype_name(t));
	ts_buf_init(&bind);
	xi[0] = "i0";
	xi[1] = "i1";
	shape[0] = x->shape[0];
	shape[1] = x->shape[1];
	for (int j = 2; j < x->ndim; j++) {
		shape[j] = 1;
		if (x->shape[j] == 1) {
			xi[j] = "0";
			continue;
		}
		xi[j] = ox_raxis(n);
		ts_buf_printf(&bind, "%s%s: %lld", bind.len ? ", " : "", xi[j],
			(long long)x->shape[j]);
	}
	cnt = ox_numel(x->ndim - 2, x->shape + 2);
	name = ox_output(im, n, 0, t, x->ndim, shape);
	ld = ox_load(im, n, x, xi);
	if (!strcmp(n->op, "GlobalMaxPool"))
		body = reduce("max", &bind, ld);
	else if (!strcmp(n->op, "GlobalAveragePool"))
		body = ts_asprintf("(%s) / %s", reduce("sum", &bind, ld),
			ox_lit(t, (double)cnt));
	else if (p == 1)
		body = reduce("sum", &bind, ts_asprintf("abs(%s)", ld));
	else if (p == 2)
		body = ts_asprintf("sqrt(%s)", reduce("sum", &bind,
			ts_asprintf("%s * %s", ld, ld)));
	else if (p > 2)
		body = ts_asprintf("pow(%s, %s)", reduce("sum", &bind,
			ts_asprintf("pow(abs(%s), %s)", ld,
			ox_lit(t, (double)p))), ox_lit(t, 1.0 / p));
	else
		return ox_fail(im, n, "p=%lld is not supported", (long long)p);
	ox_stage(im, n, name, x->ndim, shape, NULL, body);
	return TS_OK;
}

/* BatchNormalization folded into the Conv before it.
 *
 * Inference BN after a convolution is an affine map per output channel:
 * with a = scale / sqrt(var + eps), conv(x, W) + B followed by BN is
 * conv(x, W * a) + (B - mean) * a + bias.  When the conv's W and B and
 * the BN's parameters are initializers and the conv's output is read by
 * the BN alone, the graph is rewritten before import: the conv takes
 * the folded weights (new initializers) and writes the BN's output, and
 * the BN node goes.  One stage instead of two, and no normalisation at
 * run time.  The rewrite edits the unpacked protobuf in place, so it
 * allocates as protobuf-c does (malloc) what free_unpacked frees. */

/* The initializer "name" of "g", or NULL. */
static Onnx__TensorProto *initializer(const Onnx__GraphProto *g,
	const char *name)
{
	for (size_t i = 0; i < g->n_initializer; i++)
		if (g->initializer[i]->name &&
		    !strcmp(g->initializer[i]->name, name))
			return g->initializer[i];
	return NULL;
}

/* How many times the value "name" is read: by nodes' inputs and as a
 * graph output. */
static int uses(const Onnx__GraphProto *g, const char *name)
{
	int k = 0;

	for (size_t i = 0; i < g->n_node; i++)
		for (size_t j = 0; j < g->node[i]->n_input; j++)
			k += g->node[i]->input[j] &&
				!strcmp(g->node[i]->input[j], name);
	for (size_t i = 0; i < g->n_output; i++)
		k += g->output[i]->name && !strcmp(g->output[i]->name, name);
	return k;
}

/* Whether "name" names anything in "g" (an initializer, a graph input,
 * a node's output). */
static bool name_taken(const Onnx__GraphProto *g, const char *name)
{
	if (initializer(g, name))
		return true;
	for (size_t i = 0; i < g->n_input; i++)
		if (g->input[i]->name && !strcmp(g->input[i]->name, name))
			return true;
	for (size_t i = 0; i < g->n_node; i++)
		for (size_t j = 0; j < g->node[i]->n_output; j++)
			if (g->node[i]->output[j] &&
			    !strcmp(g->node[i]->output[j], name))
				return true;
	return false;
}

/* A float initializer as an array of "len" elements (any number when
 * "len" is negative), or NULL (with no error) when it is not one. */
static ts_array *float_init(struct ox_importer *im, const Onnx__GraphProto *g,
	const char *name, int64_t len)
{
	Onnx__TensorProto *t = name && *name ? initializer(g, name) : NULL;
	ts_array *a;

	if (!t || !t->has_data_type || t->data_type != ONNX_FLOAT)
		return NULL;
	if (!(a = ox_read_tensor(ox_ctx(im), t, name))) {
		ts_ctx_clear_error(ox_ctx(im));
		return NULL;
	}
	return len < 0 || (a->ndim == 1 && a->size == len) ? a : NULL;
}

/* A new float initializer named after "base", added to "g": its name. */
static char *add_initializer(Onnx__GraphProto *g, const char *base,
	int ndim, const int64_t *dims, const float *v)
{
	Onnx__TensorProto *t = malloc(sizeof(*t));
	int64_t count = ox_numel(ndim, dims);
	char *name = ts_asprintf("%s_bn", base);

	for (int k = 1; name_taken(g, name); k++)
		name = ts_asprintf("%s_bn%d", base, k);
	onnx__tensor_proto__init(t);
	t->name = strdup(name);
	t->has_data_type = 1;
	t->data_type = ONNX_FLOAT;
	t->n_dims = (size_t)ndim;
	t->dims = malloc(sizeof(int64_t) * (size_t)(ndim + 1));
	memcpy(t->dims, dims, sizeof(int64_t) * (size_t)ndim);
	t->n_float_data = (size_t)count;
	t->float_data = malloc(sizeof(float) * (size_t)(count + 1));
	memcpy(t->float_data, v, sizeof(float) * (size_t)count);
	g->initializer = realloc(g->initializer, sizeof(*g->initializer) *
		(g->n_initializer + 1));
	g->initializer[g->n_initializer++] = t;
	return t->name;
}

/* Whether BN node "bn" is an inference normalisation over channels,
 * with its epsilon. */
static bool bn_foldable(struct ox_importer *im, const Onnx__NodeProto *bn,
	int index, double *eps)
{
	struct ox_node tmp = { .p = bn, .index = index, .op = bn->op_type };
	int64_t training = 0, spatial = 1;

	if (bn->n_input != 5 || (bn->domain && *bn->domain &&
	    strcmp(bn->domain, "ai.onnx")))
		return false;
	for (size_t k = 1; k < bn->n_output; k++)
		if (bn->output[k] && *bn->output[k])
			return false;	/* training outputs */
	if (ox_attr_float(im, &tmp, "epsilon", 1e-5, eps) < 0 ||
	    ox_attr_int(im, &tmp, "training_mode", 0, &training) < 0 ||
	    ox_attr_int(im, &tmp, "spatial", 1, &spatial) < 0) {
		ts_ctx_clear_error(ox_ctx(im));
		return false;
	}
	return !training && spatial == 1;
}

/* The Conv node "conv" whose output is read by BN "bn" alone, folded
 * with it when every parameter is a float initializer: true if done. */
static bool fold_pair(struct ox_importer *im, Onnx__GraphProto *g,
	Onnx__NodeProto *conv, const Onnx__NodeProto *bn, double eps)
{
	ts_array *w, *b = NULL, *scale, *bias, *mean, *var;
	int64_t m, per;
	float *nw, *nb;
	char *wname, *bname;

	if (conv->n_input < 2 || conv->n_output != 1 ||
	    (conv->domain && *conv->domain && strcmp(conv->domain, "ai.onnx")) ||
	    uses(g, conv->output[0]) != 1 ||
	    !(w = float_init(im, g, conv->input[1], -1)) || w->ndim < 3)
		return false;
	m = w->shape[0];
	per = w->size / m;
	if ((conv->n_input > 2 && *conv->input[2] &&
	    !(b = float_init(im, g, conv->input[2], m))) ||
	    !(scale = float_init(im, g, bn->input[1], m)) ||
	    !(bias = float_init(im, g, bn->input[2], m)) ||
	    !(mean = float_init(im, g, bn->input[3], m)) ||
	    !(var = float_init(im, g, bn->input[4], m)))
		return false;
	nw = ts_new_array(float, w->size);
	nb = ts_new_array(float, m);
	for (int64_t c = 0; c < m; c++) {
		double a = ts_array_get(scale, c) /
			sqrt(ts_array_get(var, c) + eps);

		for (int64_t i = 0; i < per; i++)
			nw[c * per + i] = (float)(ts_array_get(w, c * per + i) *
				a);
		nb[c] = (float)(((b ? ts_array_get(b, c) : 0) -
			ts_array_get(mean, c)) * a + ts_array_get(bias, c));
	}
	wname = add_initializer(g, conv->input[1], w->ndim, w->shape, nw);
	bname = add_initializer(g, b ? conv->input[2] : ts_asprintf("%s_bias",
		conv->input[1]), 1, &m, nb);
	free(conv->input[1]);
	conv->input[1] = strdup(wname);
	if (conv->n_input > 2) {
		free(conv->input[2]);
	} else {
		conv->input = realloc(conv->input, sizeof(char *) * 3);
		conv->n_input = 3;
	}
	conv->input[2] = strdup(bname);
	free(conv->output[0]);
	conv->output[0] = strdup(bn->output[0]);
	return true;
}

ts_status ox_fold_batchnorm(struct ox_importer *im, Onnx__GraphProto *g)
{
	for (size_t i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *bn = g->node[i];
		double eps;

		if (!bn->op_type || strcmp(bn->op_type, "BatchNormalization") ||
		    !bn->n_input || !bn->input[0] || !bn->n_output ||
		    !bn_foldable(im, bn, (int)i, &eps))
			continue;
		for (size_t j = 0; j < i; j++) {
			Onnx__NodeProto *conv = g->node[j];

			if (!conv->op_type || strcmp(conv->op_type, "Conv") ||
			    !conv->n_output || !conv->output[0] ||
			    strcmp(conv->output[0], bn->input[0]))
				continue;
			if (fold_pair(im, g, conv, bn, eps)) {
				onnx__node_proto__free_unpacked(bn, NULL);
				memmove(g->node + i, g->node + i + 1,
					sizeof(*g->node) * (g->n_node - i - 1));
				g->n_node--;
				i--;
			}
			break;
		}
	}
	return TS_OK;
}

const struct ox_op ox_ops_nn[] = {
	{ "Conv", lower_conv },
	{ "ConvTranspose", lower_conv_transpose },
	{ "MaxPool", lower_maxpool },
	{ "AveragePool", lower_avgpool },
	{ "LpPool", lower_avgpool },
	{ "GlobalAveragePool", lower_global_pool },
	{ "GlobalMaxPool", lower_global_pool },
	{ "GlobalLpPool", lower_global_pool },
	{ NULL, NULL },
};
