/* Quantized operators: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul and
 * QLinearConv.
 *
 * Integer products accumulate in i32 on operands widened to i32 less
 * their zero points.  Requantisation is computed in f32 as ONNX Runtime
 * does: round(f32(acc) * (x_scale * w_scale / y_scale)) + y_zero_point,
 * rounding half to even, and the cast to u8 or i8 saturates (float to
 * integer casts of the language saturate). */
#include <config.h>

#include "onnx/internal.h"

/* Whether "t" is a quantized type (u8 or i8). */
static bool is_q8(ts_dtype t)
{
	return t == TS_U8 || t == TS_I8;
}

/* Check that input "k", a scale or zero point, is one value, or "len"
 * values along an axis when "len" > 0; of dtype "t" (or a quantized
 * type when "t" is TS_U8 and "q8"). */
static ts_status check_param(struct ox_importer *im, const struct ox_node *n,
	int k, const char *what, int64_t len, ts_dtype t, bool q8)
{
	const struct ox_value *v;
	int64_t cnt;

	if (!ox_has(n, k))
		return TS_OK;
	v = n->in[k];
	cnt = ox_numel(v->ndim, v->shape);
	if (q8 ? !is_q8(v->dtype) : v->dtype != t)
		return ox_fail(im, n, "%s of type %s is not supported", what,
			ts_dtype_name(v->dtype));
	if (cnt == 1 && v->ndim <= 1)
		return TS_OK;
	if (len > 0 && v->ndim == 1 && v->shape[0] == len)
		return TS_OK;
	if (len > 0)
		return ox_fail(im, n, "%s must be a scalar or a vector of %lld",
			what, (long long)len);
	return ox_fail(im, n, "%s must be a scalar", what);
}

/* Input "k" (a scale or zero point checked by check_param) as dtype "t"
 * in an expression: a bare literal when it is one value known at import,
 * else a load, at "ax" when it is a vector along an axis, cast to "t";
 * "dflt" when absent. */
static char *param(struct ox_importer *im, struct ox_node *n, int k,
	ts_dtype t, const char *ax, double dflt)
{
	struct ox_value *v;
	const char *idx[1];
	char *ld;

	if (!ox_has(n, k))
		return ox_lit(t, dflt);
	v = n->in[k];
	if (v->konst && v->konst->size == 1)
		return ox_lit(t, ts_array_get(v->konst, 0));
	idx[0] = v->ndim == 0 || v->shape[0] == 1 ? "0" : ax;
	ld = ox_load(im, n, v, idx);
	return v->dtype == t ? ld : ts_asprintf("%s(%s)", ts_dtype_name(t), ld);
}

/* Whether input "k" is absent or a known 0. */
static bool zero(const struct ox_node *n, int k)
{
	const struct ox_value *v = ox_has(n, k) ? n->in[k] : NULL;

	return !v || (v->konst && v->konst->size == 1 &&
		ts_array_get(v->konst, 0) == 0);
}

/* "i32({x}) - zp" (the zero point, input "k", read at "ax"), or
 * "i32({x})" where it is zero: an operand widened less its zero point. */
static char *widen(struct ox_importer *im, struct ox_node *n, int k,
	const char *ax)
{
	if (zero(n, k))
		return ts_strdup("i32({x})");
	return ts_asprintf("(i32({x}) - %s)", param(im, n, k, TS_I32, ax, 0));
}

/* Replace "{x}" in "tpl" by "x". */
static char *fill_in(const char *tpl, const char *x)
{
	const char *p = strstr(tpl, "{x}");

	return ts_asprintf("%.*s%s%s", (int)(p - tpl), tpl, x, p + 3);
}

/* The requantisation of the i32 "acc": round(f32(acc) * (xs * ws / ys))
 * + yz, the scales and zero point being inputs "xs", "ws" (per channel
 * at "ax"), "ys", "yz".  The multiplier is a literal computed at import
 * in f32 when the scales are known, else the same f32 expression. */
static char *requantize(struct ox_importer *im, struct ox_node *n,
	const char *acc, int xs, int ws, int ys, int yz, const char *ax)
{
	const ts_array *a = n->in[xs]->konst, *b = n->in[ws]->konst;
	const ts_array *c = n->in[ys]->konst;
	char *m, *body;

	if (a && b && c && a->size == 1 && b->size == 1 && c->size == 1) {
		volatile float f = (float)ts_array_get(a, 0) *
			(float)ts_array_get(b, 0);

		f = f / (float)ts_array_get(c, 0);
		m = ox_lit(TS_F32, f);
	} else {
		char *x = param(im, n, xs, TS_F32, NULL, 1);

		if (a && a->size == 1)
			x = ox_tlit(TS_F32, ts_array_get(a, 0));
		m = ts_asprintf("(%s * %s / %s)", x, param(im, n, ws, TS_F32,
			ax, 1), param(im, n, ys, TS_F32, NULL, 1));
	}
	body = ts_asprintf("round(f32(%s) * %s)", acc, m);
	if (zero(n, yz))
		return body;
	return ts_asprintf("%s + %s", body, param(im, n, yz, TS_F32, NULL, 0));
}

/* The axis of a per-axis scale (input 1): "axis" (1 by default)
 * normalized, and x's extent along it (0 for a single scale). */
static ts_status quant_axis(struct ox_importer *im, const struct ox_node *n,
	const struct ox_value *x, int *axis, int64_t *len)
{
	const struct ox_value *s = n->in[1];
	int64_t a;

	*axis = 0;
	*len = 0;
	if (ox_attr_int(im, n, "axis", 1, &a) < 0)
		return TS_ERROR;
	if (ox_numel(s->ndim, s->shape) == 1 && s->ndim <= 1)
		return TS_OK;
	if (ox_axis_norm(im, n, a, x->ndim, axis) < 0)
		return TS_ERROR;
	*len = x->shape[*axis];
	return TS_OK;
}

/* QuantizeLinear (opsets 10, 13): y = saturate(round(x / y_scale) +
 * y_zero_point), rounding half to even; y has the zero point's type (u8
 * when absent); scale and zero point are scalars or, from opset 13,
 * vectors along "axis" (1 by default). */
static ts_status lower_quantize(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x;
	int axis;
	int64_t len;
	ts_dtype t = TS_U8;
	const char *ax, *name;
	char *ld, *body;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (x->dtype != TS_F32 && x->dtype != TS_I32)
		return ox_fail(im, n, "input of type %s is not supported",
			ts_dtype_name(x->dtype));
	if (quant_axis(im, n, x, &axis, &len) < 0 ||
	    check_param(im, n, 1, "y_scale", len, TS_F32, false) < 0 ||
	    check_param(im, n, 2, "y_zero_point", len, TS_U8, true) < 0)
		return TS_ERROR;
	if (ox_has(n, 2))
		t = n->in[2]->dtype;
	ax = len ? ox_axis(axis) : NULL;
	ld = ox_load_same(im, n, x);
	if (x->dtype != TS_F32)
		ld = ts_asprintf("f32(%s)", ld);
	body = ts_asprintf("round(%s / %s)", ld, param(im, n, 1, TS_F32, ax,
		1));
	if (!zero(n, 2))
		body = ts_asprintf("%s + %s", body, param(im, n, 2, TS_F32, ax,
			0));
	name = ox_output(im, n, 0, t, x->ndim, x->shape);
	ox_stage(im, n, name, x->ndim, x->shape, &t, body);
	return TS_OK;
}

/* DequantizeLinear (opsets 10, 13): y = (x - x_zero_point) * x_scale in
 * f32, for u8, i8 and i32 x (the last without a zero point); scalars or,
 * from opset 13, vectors along "axis". */
static ts_status lower_dequantize(struct ox_importer *im, struct ox_node *n)
{
	struct ox_value *x;
	int axis;
	int64_t len;
	const char *ax, *name;
	char *body;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (!is_q8(x->dtype) && x->dtype != TS_I32)
		return ox_fail(im, n, "input of type %s is not supported",
			ts_dtype_name(x->dtype));
	if (quant_axis(im, n, x, &axis, &len) < 0 ||
	    check_param(im, n, 1, "x_scale", len, TS_F32, false) < 0 ||
	    check_param(im, n, 2, "x_zero_point", len, x->dtype, false) < 0)
		return TS_ERROR;
	ax = len ? ox_axis(axis) : NULL;
	body = ox_load_same(im, n, x);
	if (!zero(n, 2))
		body = ts_asprintf("i32(%s) - %s", body, param(im, n, 2, TS_I32,
			ax, 0));
	body = ts_asprintf("f32(%s) * %s", body, param(im, n, 1, TS_F32, ax,
		1));
	name = ox_output(im, n, 0, TS_F32, x->ndim, x->shape);
	ox_stage(im, n, name, x->ndim, x->shape, NULL, body);
	return TS_OK;
}

/* DynamicQuantizeLinear (opset 11): u8 quantization of x over the range
 * [min(0, min x), max(0, max x)]: y_scale = (max - min) / 255,
 * y_zero_point = saturate(round(-min / y_scale)), y as QuantizeLinear. */
static ts_status lower_dynamic_quantize(struct ox_importer *im,
	struct ox_node *n)
{
	struct ox_value *x;
	const char *idx[TS_MAX_DIMS], *sname, *zname, *name, *lo, *hi;
	ts_dtype u8 = TS_U8;
	ts_buf bind;
	char *ld;

	if (ox_need(im, n, 0, 1) < 0)
		return TS_ERROR;
	x = n->in[0];
	if (x->dtype != TS_F32)
		return ox_fail(im, n, "input of type %s is not supported",
			ts_dtype_name(x->dtype));
	ts_buf_init(&bind);
	for (int i = 0; i < x->ndim; i++) {
		idx[i] = ox_raxis(n);
		ts_buf_printf(&bind, "%s%s: %lld", i ? ", " : "", idx[i],
			(long long)x->shape[i]);
	}
	ld = ox_load(im, n, x, idx);
	lo = x->ndim ? ts_asprintf("min(0.0, min(%s) %s)", bind.s, ld) :
		ts_asprintf("min(0.0, %s)", ld);
	hi = x->ndim ? ts_asprintf("max(0.0, max(%s) %s)", bind.s, ld) :
		ts_asprintf("max(0.0, %s)", ld);
	if (!(sname = ox_output(im, n, 1, TS_F32, 0, NULL)))
		sname = ox_temp(im, n, "scale");
	if (!(zname = ox_output(im, n, 2, TS_U8, 0, NULL)))
		zname = ox_temp(im, n, "zero_point");
	ox_stage(im, n, sname, 0, NULL, NULL, ts_asprintf("(%s - %s) / 255.0",
		hi, lo));
	ox_stage(im, n, zname, 0, NULL, &u8, ts_asprintf("round(clamp(-%s / "
		"%s[], 0.0, 255.0))", lo, sname));
	name = ox_output(im, n, 0, TS_U8, x->ndim, x->shape);
	ox_stage(im, n, name ? name : ox_temp(im, n, "y"), x->ndim, x->shape,
		&u8, ts_asprintf("round(%s / %s[]) + f32(%s[])",
		ox_load_same(im, n, x), sname, zname));
	return TS_OK;
}

/* A batched product's indexing, as MatMul's (NumPy's): the result's
 * rank and shape, the index texts of A and B, the reduction axis and
 * its extent, and the names of the result's row and column axes (NULL
 * where a vector operand drops one). */
struct mm {
	int nd;
	int64_t shape[TS_MAX_DIMS], k;
	const char *ia[TS_MAX_DIMS], *ib[TS_MAX_DIMS], *red, *row, *col;
};

static ts_status mm_index(struct ox_importer *im, struct ox_node *n,
	const struct ox_value *a, const struct ox_value *b, struct mm *mm)
{
	int64_t ba[TS_MAX_DIMS], bb[TS_MAX_DIMS], kb;
	int nba, nbb, nd, r;

	if (a->ndim < 1 || b->ndim < 1)
		return ox_fail(im, n, "scalar inputs are not allowed");
	nba = a->ndim > 2 ? a->ndim - 2 : 0;
	nbb = b->ndim > 2 ? b->ndim - 2 : 0;
	memcpy(ba, a->shape, sizeof(int64_t) * (size_t)nba);
	memcpy(bb, b->shape, sizeof(int64_t) * (size_t)nbb);
	mm->k = a->shape[a->ndim - 1];
	kb = b->ndim > 1 ? b->shape[b->ndim - 2] : b->shape[0];
	if (mm->k != kb)
		return ox_fail(im, n, "inner dimensions differ: %lld and %lld",
			(long long)mm->k, (long long)kb);
	if (ox_broadcast(im, n, nba, ba, nbb, bb, &nd, mm->shape) < 0)
		return TS_ERROR;
	if (nd + 2 > TS_MAX_DIMS)
		return ox_fail(im, n, "too many dimensions");
	mm->red = ox_raxis(n);
	for (int i = 0; i < nba; i++)
		mm->ia[i] = ba[i] == 1 && mm->shape[nd - nba + i] != 1 ? "0" :
			ox_axis(nd - nba + i);
	for (int i = 0; i < nbb; i++)
		mm->ib[i] = bb[i] == 1 && mm->shape[nd - nbb + i] != 1 ? "0" :
			ox_axis(nd - nbb + i);
	r = nd;
	mm->row = mm->col = NULL;
	if (a->ndim > 1) {
		mm->row = mm->ia[nba] = ox_axis(r);
		mm->shape[r++] = a->shape[a->ndim - 2];
	}
	mm->ia[a->ndim - 1] = mm->red;
	mm->ib[b->ndim > 1 ? nbb : 0] = mm->red;
	if (b->ndim > 1) {
		mm->col = mm->ib[nbb + 1] = ox_axis(r);
		mm->shape[r++] = b->shape[b->ndim - 1];
	}
	mm->nd = r;
	return TS_OK;
}

/* The i32 sum of a quantized product: operand A (input "a", zero point
 * input "az" per row) by B (input "b", zero point "bz" per column). */
static char *mm_sum(struct ox_importer *im, struct ox_node *n, int a, int b,
	int az, int bz, const struct mm *mm)
{
	return ts_asprintf("sum(%s: %lld) %s * %s", mm->red, (long long)mm->k,
		fill_in(widen(im, n, az, mm->row), ox_load(im, n, n->in[a],
		mm->ia)), fill_in(widen(im, n, bz, mm->col), ox_load(im, n,
		n->in[b], mm->ib)));
}

/* Check that inputs "a" and "b" are u8 or i8 and their zero points
 * "az", "bz" of their types, per tensor or per row of A ("rows") and per
 * column of B ("cols"). */
static ts_status check_q8(struct ox_importer *im, const struct ox_node *n,
	int a, int az, int64_t rows, int b, int bz, int64_t cols)
{
	ts_dtype ta = n->in[a]->dtype, tb = n->in[b]->dtype;

	if (!is_q8(ta) || !is_q8(tb))
		return ox_fail(im, n, "inputs of types %s and %s are not "
			"supported", ts_dtype_name(ta), ts_dtype_name(tb));
	if (check_param(im, n, az, "A's zero point", rows, ta, false) < 0 ||
	    check_param(im, n, bz, "B's zero point", cols, tb, false) < 0)
		return TS_ERROR;
	return TS_OK;
}

/* MatMulInteger (opset 10): (A - a_zero_point) (B - b_zero_point) in
 * i32, MatMul's broadcasting; zero points per tensor, per row of A or
 * per column of B. */
static ts_status lower_matmul_integer(struct ox_importer *im,
	struct ox_node *n)
{
	struct mm mm;
	ts_dtype t = TS_I32;
	const char *name;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0 ||
	    mm_index(im, n, n->in[0], n->in[1], &mm) < 0 ||
	    check_q8(im, n, 0, 2, mm.row ? n->in[0]->shape[n->in[0]->ndim -
	    2] : 0, 1, 3, mm.col ? mm.shape[mm.nd - 1] : 0) < 0)
		return TS_ERROR;
	name = ox_output(im, n, 0, t, mm.nd, mm.shape);
	ox_stage(im, n, name, mm.nd, mm.shape, NULL, mm_sum(im, n, 0, 1, 2, 3,
		&mm));
	return TS_OK;
}

/* QLinearMatMul (opset 10): MatMulInteger of a and b less their zero
 * points, requantized by a_scale * b_scale / y_scale to y_zero_point's
 * type; b's scale and zero point may be per column. */
static ts_status lower_qlinear_matmul(struct ox_importer *im,
	struct ox_node *n)
{
	struct mm mm;
	ts_dtype t;
	const char *name;

	for (int k = 0; k < 8; k++)
		if (k != 2 && k != 5 && ox_need(im, n, k, 8) < 0)
			return TS_ERROR;
	if (mm_index(im, n, n->in[0], n->in[3], &mm) < 0 ||
	    check_q8(im, n, 0, 2, 0, 3, 5, mm.col ? mm.shape[mm.nd - 1] :
	    0) < 0 ||
	    check_param(im, n, 1, "a_scale", 0, TS_F32, false) < 0 ||
	    check_param(im, n, 4, "b_scale", mm.col ? mm.shape[mm.nd - 1] :
	    0, TS_F32, false) < 0 ||
	    check_param(im, n, 6, "y_scale", 0, TS_F32, false) < 0 ||
	    check_param(im, n, 7, "y_zero_point", 0, TS_U8, true) < 0)
		return TS_ERROR;
	t = n->in[7]->dtype;
	name = ox_output(im, n, 0, t, mm.nd, mm.shape);
	ox_stage(im, n, name, mm.nd, mm.shape, &t, requantize(im, n,
		mm_sum(im, n, 0, 3, 2, 5, &mm), 1, 4, 6, 7, mm.col));
	return TS_OK;
}

/* The output channels of a convolution's W (its first extent). */
static int64_t out_channels(const struct ox_node *n, int w)
{
	return n->in[w]->ndim ? n->in[w]->shape[0] : 0;
}

/* ConvInteger (opset 10): Conv's window (group, strides, dilations,
 * pads, auto_pad) over x - x_zero_point and w - w_zero_point in i32, the
 * padding contributing 0; w's zero point per tensor or per output
 * channel. */
static ts_status lower_conv_integer(struct ox_importer *im,
	struct ox_node *n)
{
	int64_t shape[TS_MAX_DIMS];
	const char *name;
	char *body;

	if (ox_need(im, n, 0, 2) < 0 || ox_need(im, n, 1, 2) < 0 ||
	    check_q8(im, n, 0, 2, 0, 1, 3, out_channels(n, 1)) < 0)
		return TS_ERROR;
	if (!(body = ox_conv_sum(im, n, n->in[0], n->in[1], widen(im, n, 2,
	    NULL), widen(im, n, 3, "i1"), "0", shape)))
		return TS_ERROR;
	name = ox_output(im, n, 0, TS_I32, n->in[0]->ndim, shape);
	ox_stage(im, n, name, n->in[0]->ndim, shape, NULL, body);
	return TS_OK;
}

/* QLinearConv (opset 10): ConvInteger of x and w less their zero points,
 * plus the i32 bias B, requantized by x_scale * w_scale / y_scale (w's
 * scale and zero point per tensor or per output channel) to
 * y_zero_point's type. */
static ts_status lower_qlinear_conv(struct ox_importer *im, struct ox_node *n)
{
	int64_t shape[TS_MAX_DIMS], m;
	const char *name, *i1 = "i1";
	char *acc;
	ts_dtype t;

	for (int k = 0; k < 8; k++)
		if (k != 2 && k != 5 && ox_need(im, n, k, 8) < 0)
			return TS_ERROR;
	m = out_channels(n, 3);
	if (check_q8(im, n, 0, 2, 0, 3, 5, m) < 0 ||
	    check_param(im, n, 1, "x_scale", 0, TS_F32, false) < 0 ||
	    check_param(im, n, 4, "w_scale", m, TS_F32, false) < 0 ||
	    check_param(im, n, 6, "y_scale", 0, TS_F32, false) < 0 ||
	    check_param(im, n, 7, "y_zero_point", 0, TS_U8, true) < 0)
		return TS_ERROR;
	if (ox_has(n, 8) && (n->in[8]->dtype != TS_I32 ||
	    n->in[8]->ndim != 1 || n->in[8]->shape[0] != m))
		return ox_fail(im, n, "B must be a vector of %lld i32",
			(long long)m);
	if (!(acc = ox_conv_sum(im, n, n->in[0], n->in[3], widen(im, n, 2,
	    NULL), widen(im, n, 5, "i1"), "0", shape)))
		return TS_ERROR;
	if (ox_has(n, 8))
		acc = ts_asprintf("(%s) + %s", acc, ox_load(im, n, n->in[8],
			&i1));
	t = n->in[7]->dtype;
	name = ox_output(im, n, 0, t, n->in[0]->ndim, shape);
	ox_stage(im, n, name, n->in[0]->ndim, shape, &t, requantize(im, n,
		acc, 1, 4, 6, 7, "i1"));
	return TS_OK;
}

const struct ox_op ox_ops_quant[] = {
	{ "QuantizeLinear", lower_quantize },
	{ "DequantizeLinear", lower_dequantize },
	{ "DynamicQuantizeLinear", lower_dynamic_quantize },
	{ "MatMulInteger", lower_matmul_integer },
	{ "QLinearMatMul", lower_qlinear_matmul },
	{ "ConvInteger", lower_conv_integer },
	{ "QLinearConv", lower_qlinear_conv },
	{ NULL, NULL },
};
